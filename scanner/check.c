/* check.c: one node against one target: is the op listed and supported,
 * in a version the target takes, and does the node meet the op's
 * constraints (dtypes, ranks and dim sizes, attributes, constant inputs,
 * static shapes) and the target-wide ones (missing dtypes, max rank).
 * Types and shapes come from inference, so inner nodes are checked too. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scanner/scan_int.h"

int scan_reason_add(struct scan_verdict *v, enum scan_status st,
		    const char *code, const char *fmt, ...)
{
	struct scan_reason *r;
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!(r = realloc(v->reasons, (v->n_reasons + 1) * sizeof(*r))))
		return -1;
	v->reasons = r;
	r += v->n_reasons;
	r->code = code;
	if (!(r->message = strdup(buf)))
		return -1;
	v->n_reasons++;
	if (st > v->status)
		v->status = st;
	return 0;
}

/* "float32|float16" into buf. */
static const char *dtype_list(rules_dtypes m, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (int i = 1; i < IR_DTYPE_COUNT && len + 1 < size; i++)
		if ((m & RULES_DTYPE_BIT(i)) && rules_dtype_name(i)) {
			int k = snprintf(buf + len, size - len, "%s%s", len ? "|" : "",
					 rules_dtype_name(i));

			if (k < 0 || (size_t)k >= size - len)
				break;
			len += (size_t)k;
		}
	return buf;
}

/* The rules files' name of a dtype ("float32"), else the IR's. */
static const char *dtype_str(int dtype)
{
	const char *s = rules_dtype_name(dtype);

	return s ? s : ir_dtype_name(dtype);
}

/* ---- which inputs and outputs are data tensors ----------------------------- */

static const char *formal_type(const struct ir_op_formal *f, size_t n, size_t i)
{
	if (i < n)
		return f[i].type;
	if (n && f[n - 1].variadic)
		return f[n - 1].type;
	return NULL;
}

/* The type constraint of the op's data tensors: input 0's, or output 0's
 * when input 0 has a fixed type; NULL when unknown. */
static const char *data_constraint(const struct ir_op_schema *s)
{
	const char *t;

	if (!s)
		return NULL;
	t = formal_type(s->inputs, s->n_inputs, 0);
	if (t && strncmp(t, "tensor(", 7) && strncmp(t, "seq(", 4))
		return t;
	t = formal_type(s->outputs, s->n_outputs, 0);
	if (t && strncmp(t, "tensor(", 7) && strncmp(t, "seq(", 4))
		return t;
	return NULL;
}

static int is_data(const struct ir_op_schema *s, const char *dc, int input, size_t i)
{
	const char *t;

	if (!s)
		return i == 0;
	if (!dc)
		return 0;
	t = input ? formal_type(s->inputs, s->n_inputs, i) :
		formal_type(s->outputs, s->n_outputs, i);
	return t && !strcmp(t, dc);
}

static const struct rules_io *find_io(const struct rules_io *io, size_t n, size_t i)
{
	for (size_t k = 0; k < n; k++)
		if (io[k].index >= 0 && (size_t)io[k].index == i)
			return &io[k];
	return NULL;
}

/* ---- attributes ---------------------------------------------------------------- */

enum aval_kind { AV_NONE, AV_NUM, AV_STR, AV_LIST };

struct aval {
	enum aval_kind kind;
	double num;
	const char *str;
	size_t n;
	double *list;            /* owned */
	char *sbuf;              /* owned copy of a default string */
};

static void aval_release(struct aval *a)
{
	free(a->list);
	free(a->sbuf);
}

/* The node's value of attribute name, or the registry default. */
static int aval_get(const struct ir_node *n, const struct ir_op_schema *s,
		    const char *name, struct aval *out)
{
	const struct ir_attr *a = ir_node_attr(n, name);
	const struct ir_op_attr *sa = s ? ir_op_schema_attr(s, name) : NULL;

	memset(out, 0, sizeof(*out));
	if (a && *ir_s(a->ref_attr_name))
		return 0;   /* set by the caller of a function: not known here */
	if (a) {
		switch (a->type) {
		case IR_ATTR_INT: out->kind = AV_NUM; out->num = (double)a->i; return 0;
		case IR_ATTR_FLOAT: out->kind = AV_NUM; out->num = a->f; return 0;
		case IR_ATTR_STRING:
			out->kind = AV_STR;
			out->str = a->s ? (const char *)a->s : "";
			return 0;
		case IR_ATTR_INTS:
		case IR_ATTR_FLOATS: {
			size_t k = a->type == IR_ATTR_INTS ? a->n_ints : a->n_floats;

			out->kind = AV_LIST;
			out->n = k;
			if (k && !(out->list = malloc(k * sizeof(double))))
				return -1;
			for (size_t i = 0; i < k; i++)
				out->list[i] = a->type == IR_ATTR_INTS ? (double)a->ints[i] :
					a->floats[i];
			return 0;
		}
		default:
			return 0;
		}
	}
	if (!sa || !sa->default_value)
		return 0;
	switch (sa->type) {
	case IR_ATTR_INT:
	case IR_ATTR_FLOAT:
		out->kind = AV_NUM;
		out->num = strtod(sa->default_value, NULL);
		return 0;
	case IR_ATTR_STRING:
		out->kind = AV_STR;
		out->str = sa->default_value;
		return 0;
	case IR_ATTR_INTS:
	case IR_ATTR_FLOATS: {
		const char *p = sa->default_value;
		size_t k = *p ? 1 : 0;

		for (const char *q = p; *q; q++)
			k += *q == ',';
		out->kind = AV_LIST;
		out->n = k;
		if (k && !(out->list = malloc(k * sizeof(double))))
			return -1;
		for (size_t i = 0; i < k; i++) {
			char *end;

			out->list[i] = strtod(p, &end);
			p = *end == ',' ? end + 1 : end;
		}
		return 0;
	}
	default:
		return 0;
	}
}

static int value_matches(const struct aval *a, const struct rules_value *v)
{
	switch (v->kind) {
	case RULES_VALUE_STRING:
		return a->kind == AV_STR && !strcmp(a->str, v->str);
	case RULES_VALUE_NUMBER:
		if (a->kind == AV_NUM)
			return a->num == v->num;
		if (a->kind == AV_LIST) {
			for (size_t i = 0; i < a->n; i++)
				if (a->list[i] != v->num)
					return 0;
			return 1;
		}
		return 0;
	case RULES_VALUE_NUMBERS:
		if (a->kind != AV_LIST || a->n != v->n_nums)
			return 0;
		for (size_t i = 0; i < a->n; i++)
			if (a->list[i] != v->nums[i])
				return 0;
		return 1;
	}
	return 0;
}

static void fmt_aval(const struct aval *a, char *buf, size_t size)
{
	size_t len = 0;

	if (a->kind == AV_STR) {
		snprintf(buf, size, "'%s'", a->str);
		return;
	}
	if (a->kind == AV_NUM) {
		snprintf(buf, size, "%g", a->num);
		return;
	}
	len = (size_t)snprintf(buf, size, "[");
	for (size_t i = 0; i < a->n && len + 16 < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%g", i ? "," : "", a->list[i]);
	if (len + 2 < size)
		snprintf(buf + len, size - len, "]");
}

static void fmt_rvalue(const struct rules_value *v, char *buf, size_t size)
{
	struct aval a;

	memset(&a, 0, sizeof(a));
	if (v->kind == RULES_VALUE_STRING) {
		snprintf(buf, size, "%s", v->str);
		return;
	}
	if (v->kind == RULES_VALUE_NUMBER) {
		a.kind = AV_NUM;
		a.num = v->num;
	} else {
		a.kind = AV_LIST;
		a.n = v->n_nums;
		a.list = v->nums;
	}
	fmt_aval(&a, buf, size);
}

static int check_attr(const struct ir_node *n, const struct ir_op_schema *s,
		      const struct rules_attr *ra, enum scan_status st,
		      struct scan_verdict *v)
{
	struct aval a;
	char have[160], want[256];
	int rc = 0;

	if (aval_get(n, s, ra->name, &a) < 0)
		return -1;
	if (a.kind == AV_NONE)
		goto cleanup;
	fmt_aval(&a, have, sizeof(have));
	if (ra->n_allowed) {
		size_t len = 0;
		int ok = 0;

		for (size_t i = 0; i < ra->n_allowed; i++)
			ok |= value_matches(&a, &ra->allowed[i]);
		if (!ok) {
			want[0] = 0;
			for (size_t i = 0; i < ra->n_allowed && len + 2 < sizeof(want); i++) {
				char one[96];

				fmt_rvalue(&ra->allowed[i], one, sizeof(one));
				len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%s",
							i ? "|" : "", one);
				if (len >= sizeof(want))
					len = sizeof(want) - 1;
			}
			rc = scan_reason_add(v, st, SCAN_REASON_ATTRIBUTE,
					     "attribute %s is %s, the target accepts %s",
					     ra->name, have, want);
			goto cleanup;
		}
	}
	if (ra->has_equals && !value_matches(&a, &ra->equals)) {
		fmt_rvalue(&ra->equals, want, sizeof(want));
		rc = scan_reason_add(v, st, SCAN_REASON_ATTRIBUTE,
				     "attribute %s is %s, the target needs %s",
				     ra->name, have, want);
		goto cleanup;
	}
	if ((ra->has_min || ra->has_max) && a.kind != AV_STR) {
		size_t k = a.kind == AV_NUM ? 1 : a.n;

		for (size_t i = 0; i < k; i++) {
			double x = a.kind == AV_NUM ? a.num : a.list[i];

			if (ra->has_min && x < ra->min) {
				rc = scan_reason_add(v, st, SCAN_REASON_ATTRIBUTE,
						     "attribute %s is %s, below the target's minimum %g",
						     ra->name, have, ra->min);
				break;
			}
			if (ra->has_max && x > ra->max) {
				rc = scan_reason_add(v, st, SCAN_REASON_ATTRIBUTE,
						     "attribute %s is %s, above the target's maximum %g",
						     ra->name, have, ra->max);
				break;
			}
		}
	}
cleanup:
	aval_release(&a);
	return rc;
}

/* ---- tensors ---------------------------------------------------------------------- */

static const char *io_name(int input)
{
	return input ? "input" : "output";
}

static int is_qdq(const struct ir_node *n, const char *op)
{
	return n && !strcmp(ir_s(n->op_type), op) &&
	       (!n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx"));
}

/* A blocked DequantizeLinear (block_size > 0) of a constant: a weight
 * quantized weight-only (MatMulNBits lowered); runtimes dequantize it or
 * fuse it into a float computation (onnxruntime's DQ -> MatMulNBits), so
 * its reader computes in float, not in the codes' dtype. */
static int weight_only_dq(const struct ir_node *dq)
{
	const struct ir_attr *a = ir_node_attr(dq, "block_size");
	const struct ir_value *x = dq->inputs[0];

	return a && a->i > 0 && x->init && !x->is_input;
}

/* The dtype of a float value as a runtime grouping QDQ node units sees
 * it: an input made by DequantizeLinear is the quantized value it reads
 * (0, unchecked, for an int32 bias; the float itself for a weight-only
 * one); an output that only QuantizeLinear nodes read is their quantized
 * output. */
static int qdq_dtype(const struct scan_ctx *c, const struct ir_value *v, int input, int dtype)
{
	const struct ir_vtype *t;
	int q = 0;

	if (!v || (dtype != IR_DTYPE_FLOAT && dtype != IR_DTYPE_FLOAT16 &&
		   dtype != IR_DTYPE_BFLOAT16))
		return dtype;
	if (input) {
		if (!is_qdq(v->producer, "DequantizeLinear") || !v->producer->inputs[0] ||
		    !(t = ir_infer_get(c->inf, v->producer->inputs[0])) || !t->dtype ||
		    weight_only_dq(v->producer))
			return dtype;
		return t->dtype == IR_DTYPE_INT32 ? 0 : t->dtype;
	}
	if (!v->n_uses || ir_graph_is_output(v->graph, v))
		return dtype;
	for (size_t i = 0; i < v->n_uses; i++) {
		const struct ir_node *u = v->uses[i];

		if (!is_qdq(u, "QuantizeLinear") || u->inputs[0] != v || !u->outputs[0] ||
		    !(t = ir_infer_get(c->inf, u->outputs[0])) || !t->dtype)
			return dtype;
		q = t->dtype;
	}
	return q;
}

/* dtype, rank and dim checks of one input or output. */
static int check_tensor(const struct scan_ctx *c, const struct scan_ninfo *ni,
			const struct rules_target *t, const struct rules_op *op,
			const char *dc, enum scan_status st, int input, size_t i,
			const struct ir_value *val, struct scan_verdict *v)
{
	const struct ir_vtype *vt = input ? ni->vt[i] : ni->vt[ni->n_in + i];
	const struct rules_io *io = op ? (input ? find_io(op->inputs, op->n_inputs, i) :
					  find_io(op->outputs, op->n_outputs, i)) : NULL;
	int dtype = vt ? qdq_dtype(c, val, input, vt->dtype) : 0, reported = 0;

	if (c->f32_as && dtype == IR_DTYPE_FLOAT)
		dtype = c->f32_as;      /* what migrate would convert it to */
	char buf[256];

	if (!vt || vt->is_seq || vt->map_key)
		return 0;
	if (op && dtype > 0 && dtype < IR_DTYPE_COUNT) {
		rules_dtypes allow = io && io->dtypes ? io->dtypes :
			is_data(ni->schema, dc, input, i) ? op->dtypes : 0;

		if (allow && !(allow & RULES_DTYPE_BIT(dtype))) {
			reported = 1;
			if (scan_reason_add(v, st, SCAN_REASON_DTYPE,
					    "%s %zu ('%s') is %s, the target accepts %s",
					    io_name(input), i, ir_s(val->name),
					    dtype_str(dtype),
					    dtype_list(allow, buf, sizeof(buf))) < 0)
				return -1;
		}
	}
	if (!reported && t->has_missing_dtypes && dtype > 0 && dtype < IR_DTYPE_COUNT &&
	    (t->missing_dtypes & RULES_DTYPE_BIT(dtype)) &&
	    !(input && ni->in_const[i]) &&
	    scan_reason_add(v, SCAN_BLOCKED, SCAN_REASON_DTYPE,
			    "%s %zu ('%s') is %s, which the target lacks",
			    io_name(input), i, ir_s(val->name), dtype_str(dtype)) < 0)
		return -1;
	if (vt->rank < 0)
		return 0;
	if (io && io->min_rank >= 0 && (vt->rank < io->min_rank || vt->rank > io->max_rank)) {
		if (io->max_rank == RULES_UNBOUNDED)
			snprintf(buf, sizeof(buf), "%d or more", io->min_rank);
		else if (io->min_rank == io->max_rank)
			snprintf(buf, sizeof(buf), "%d", io->min_rank);
		else
			snprintf(buf, sizeof(buf), "%d to %d", io->min_rank, io->max_rank);
		if (scan_reason_add(v, st, SCAN_REASON_RANK,
				    "%s %zu ('%s') has rank %d, the target accepts rank %s",
				    io_name(input), i, ir_s(val->name), vt->rank, buf) < 0)
			return -1;
	} else if (t->max_rank >= 0 && vt->rank > t->max_rank &&
		   scan_reason_add(v, SCAN_BLOCKED, SCAN_REASON_RANK,
				   "%s %zu ('%s') has rank %d, above the target's maximum rank %d",
				   io_name(input), i, ir_s(val->name), vt->rank, t->max_rank) < 0) {
		return -1;
	}
	if (op && op->max_dim > 0 && input)
		for (int k = 0; k < vt->rank; k++)
			if (vt->dims[k].kind == IR_VDIM_VALUE && vt->dims[k].value > op->max_dim)
				return scan_reason_add(v, st, SCAN_REASON_RANK,
						       "%s %zu ('%s') dim %d is %lld, above the target's maximum %lld",
						       io_name(input), i, ir_s(val->name), k,
						       (long long)vt->dims[k].value,
						       (long long)op->max_dim);
	return 0;
}

static int is_static(const struct ir_vtype *vt)
{
	if (!vt || vt->rank < 0)
		return 0;
	for (int k = 0; k < vt->rank; k++)
		if (vt->dims[k].kind != IR_VDIM_VALUE)
			return 0;
	return 1;
}

/* ---- the node -------------------------------------------------------------------------- */

static int has_domain(const struct rules_target *t, const char *domain)
{
	for (size_t i = 0; i < t->n_ops; i++)
		if (!strcmp(t->ops[i].domain, domain))
			return 1;
	return 0;
}

static void fmt_range(int min, int max, char *buf, size_t size)
{
	if (max == RULES_UNBOUNDED)
		snprintf(buf, size, "%d and later", min);
	else if (min == max)
		snprintf(buf, size, "%d only", min);
	else
		snprintf(buf, size, "%d to %d", min, max);
}

int scan_check_node(const struct scan_ctx *c, const struct scan_node *sn,
		    const struct scan_ninfo *ni, const struct rules_target *t,
		    struct scan_verdict *v)
{
	const struct ir_node *n = sn->node;
	const struct rules_op *op;
	const char *dc;
	enum scan_status st;
	char buf[128];

	(void)c;   /* facts are in ni; c stays for checks needing the model */
	memset(v, 0, sizeof(*v));
	if (sn->is_call)
		return 0;  /* a model-local function: its body nodes are judged */
	op = rules_target_find_op(t, sn->domain, sn->op_type);
	/* onnxruntime's default-domain contrib ops (SimplifiedLayerNormalization)
	 * are judged by the rules' com.microsoft entry */
	if (!op && (dc = ir_registry_default_fallback(sn->domain, sn->op_type)))
		op = rules_target_find_op(t, dc, sn->op_type);
	if (!op) {
		if (strcmp(sn->domain, "ai.onnx") && !has_domain(t, sn->domain))
			return scan_reason_add(v, SCAN_BLOCKED, SCAN_REASON_DOMAIN,
					       "the target has no operators of domain '%s'",
					       sn->domain);
		return scan_reason_add(v, SCAN_BLOCKED, SCAN_REASON_OP_NOT_SUPPORTED,
				       "%s is not in the target's operator list", sn->op_type);
	}
	if (!op->supported)
		return scan_reason_add(v, SCAN_BLOCKED, SCAN_REASON_OP_NOT_SUPPORTED,
				       "%s is not supported by the target%s%.300s", sn->op_type,
				       *ir_s(op->notes) ? ": " : "", ir_s(op->notes));
	if (ni->schema && (ni->schema->since_version < op->version_min ||
			   ni->schema->since_version > op->version_max)) {
		fmt_range(op->version_min, op->version_max, buf, sizeof(buf));
		if (scan_reason_add(v, SCAN_BLOCKED, SCAN_REASON_VERSION,
				    "%s version %d (opset %lld) is outside the target's versions %s",
				    sn->op_type, ni->schema->since_version,
				    (long long)ni->opset, buf) < 0)
			return -1;
	}
	st = op->severity == RULES_LIMITED ? SCAN_LIMITED : SCAN_BLOCKED;
	dc = data_constraint(ni->schema);
	for (size_t i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] &&
		    check_tensor(c, ni, t, op, dc, st, 1, i, n->inputs[i], v) < 0)
			return -1;
	for (size_t i = 0; i < n->n_outputs; i++)
		if (n->outputs[i] &&
		    check_tensor(c, ni, t, op, dc, st, 0, i, n->outputs[i], v) < 0)
			return -1;
	for (size_t i = 0; i < op->n_attrs; i++)
		if (check_attr(n, ni->schema, &op->attrs[i], st, v) < 0)
			return -1;
	for (size_t i = 0; i < op->n_inputs; i++) {
		const struct rules_io *io = &op->inputs[i];
		const struct ir_value *in;

		if (!io->is_const || io->index < 0 || (size_t)io->index >= n->n_inputs ||
		    !(in = n->inputs[io->index]) || ni->in_const[io->index])
			continue;
		if (scan_reason_add(v, st, SCAN_REASON_INPUT_NOT_CONSTANT,
				    "input %d ('%s') must be a constant", io->index,
				    ir_s(in->name)) < 0)
			return -1;
	}
	if (op->static_shape)
		for (size_t i = 0; i < n->n_inputs; i++) {
			const struct ir_vtype *vt;

			if (!n->inputs[i])
				continue;
			vt = ni->vt[i];
			if (vt && !vt->is_seq && !is_static(vt)) {
				char shape[160];

				ir_vtype_format(vt, shape, sizeof(shape));
				if (scan_reason_add(v, st, SCAN_REASON_DYNAMIC_SHAPE,
						    "input %zu ('%s') is %s, the target needs static shapes",
						    i, ir_s(n->inputs[i]->name), shape) < 0)
					return -1;
				break;
			}
		}
	return 0;
}
