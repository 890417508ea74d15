/* infer.c: the core of static type/shape inference: the side table keyed
 * by struct ir_value *, attribute lookup with registry
 * defaults, the graph walk (seeding from inputs and initializers, model
 * functions, merging with declared value_info).
 * vtype helpers are infer_vtype.c, the op table infer_table.c, the rules
 * infer_elem/nn/shape/ctrl/misc/seq/special/values/more/ml.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer_int.h"

#define MAX_DEPTH 32

/* ---- the side table ------------------------------------------------- */

void ir_infer_init(struct ir_infer *r)
{
	memset(r, 0, sizeof(*r));
}

void ir_infer_release(struct ir_infer *r)
{
	unsigned flags = r->flags;

	for (size_t i = 0; i < r->cap_slots; i++)
		if (r->slots[i].v)
			infer_vt_release(&r->slots[i].t);
	free(r->slots);
	free(r->not_inferred);
	free(r->bound);
	infer_sym_release(r);
	ir_infer_init(r);
	r->flags = flags;
}

static size_t ptr_hash(const void *p, size_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)(x & (cap - 1));
}

static struct ir_infer_slot *slot_find(const struct ir_infer *r,
				       const struct ir_value *v)
{
	size_t i;

	if (!r->cap_slots)
		return NULL;
	for (i = ptr_hash(v, r->cap_slots); r->slots[i].v;
	     i = (i + 1) & (r->cap_slots - 1))
		if (r->slots[i].v == v)
			return &r->slots[i];
	return &r->slots[i];
}

const struct ir_vtype *ir_infer_get(const struct ir_infer *r,
				    const struct ir_value *v)
{
	struct ir_infer_slot *s = v ? slot_find(r, v) : NULL;

	return s && s->v ? &s->t : NULL;
}

/* Rehash into a table of cap slots (a power of two above n_slots). */
static int table_resize(struct ir_infer *r, size_t cap)
{
	struct ir_infer_slot *old = r->slots, *s;
	size_t old_cap = r->cap_slots;

	if (!(r->slots = calloc(cap, sizeof(*r->slots)))) {
		r->slots = old;
		return IR_ENOMEM;
	}
	r->cap_slots = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].v) {
			s = slot_find(r, old[i].v);
			*s = old[i];
		}
	free(old);
	return 0;
}

static int table_grow(struct ir_infer *r)
{
	return table_resize(r, r->cap_slots ? r->cap_slots * 2 : 64);
}

/* Size the table up front for n more values, so that inferring a large
 * graph does not rehash again and again. */
static int table_reserve(struct ir_infer *r, size_t n)
{
	size_t want = r->n_slots + n, cap = r->cap_slots ? r->cap_slots : 64;

	while (want * 10 > cap * 7)
		cap *= 2;
	return cap > r->cap_slots ? table_resize(r, cap) : 0;
}

/* Store a copy of t for v (replacing any earlier result). */
int infer_set(struct infer_ctx *c, const struct ir_value *v,
	      const struct ir_vtype *t)
{
	struct ir_infer *r = c->r;
	struct ir_infer_slot *s;
	struct ir_vtype copy;
	int rc;

	if ((rc = infer_vt_copy(&copy, t)) < 0)
		return rc;
	if ((r->n_slots + 1) * 10 > r->cap_slots * 7 && (rc = table_grow(r)) < 0) {
		infer_vt_release(&copy);
		return rc;
	}
	s = slot_find(r, v);
	if (s->v) {
		infer_vt_release(&s->t);
	} else {
		s->v = v;
		r->n_slots++;
	}
	s->t = copy;
	return 0;
}

/* ---- node helpers ---------------------------------------------------- */

const struct ir_vtype *infer_in(struct infer_ctx *c, size_t i)
{
	return i < c->n_in ? c->in[i] : NULL;
}

int infer_has_in(struct infer_ctx *c, size_t i)
{
	return i < c->n->n_inputs && c->n->inputs[i];
}

int infer_err(struct infer_ctx *c, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ir_diag_error(c->d, IR_EINVAL, "node '%s' (%s): %s",
			     ir_s(c->n->name), ir_s(c->n->op_type), msg);
}

const struct ir_attr *infer_attr(struct infer_ctx *c, const char *name)
{
	for (size_t i = 0; i < c->n->n_attrs; i++) {
		const struct ir_attr *a = c->n->attrs[i];

		if (strcmp(ir_s(a->name), name))
			continue;
		if (a->ref_attr_name && *a->ref_attr_name) {
			if (!c->caller)
				return NULL;
			for (size_t j = 0; j < c->caller->n_attrs; j++)
				if (!strcmp(ir_s(c->caller->attrs[j]->name),
					    a->ref_attr_name))
					return c->caller->attrs[j];
			return NULL;
		}
		return a;
	}
	return NULL;
}

/* The schema default of an absent attribute: NULL, or the default text;
 * *rc is negative when the attribute is required. */
static const char *attr_default(struct infer_ctx *c, const char *name, int *rc)
{
	const struct ir_op_attr *sa = c->schema ? ir_op_schema_attr(c->schema, name) : NULL;

	*rc = 1;
	if (!sa)
		return NULL;
	if (sa->required) {
		*rc = infer_err(c, "missing required attribute '%s'", name);
		return NULL;
	}
	if (sa->default_value)
		*rc = 0;
	return sa->default_value;
}

int infer_attr_int(struct infer_ctx *c, const char *name, int64_t *v)
{
	const struct ir_attr *a = infer_attr(c, name);
	const char *def;
	int rc;

	if (a) {
		/* A float (a caller's attribute passed by reference is not
		 * type-checked): only a value int64 holds converts. */
		if (a->type == IR_ATTR_FLOAT && !(a->f >= -9.2e18f && a->f <= 9.2e18f))
			return infer_err(c, "attribute '%s' is %g, not an integer",
					 name, (double)a->f);
		*v = a->type == IR_ATTR_FLOAT ? (int64_t)a->f : a->i;
		return 0;
	}
	if ((def = attr_default(c, name, &rc)))
		*v = strtoll(def, NULL, 10);
	return rc;
}

int infer_attr_ints(struct infer_ctx *c, const char *name, int64_t *v,
		    size_t cap, size_t *n)
{
	const struct ir_attr *a = infer_attr(c, name);
	const char *def, *p;
	char *end;
	int rc;

	if (a) {
		if (a->n_ints > cap)
			return infer_err(c, "attribute '%s' has %zu values, at most %zu supported",
					 name, a->n_ints, cap);
		if (a->n_ints)  /* an empty list may have no array */
			memcpy(v, a->ints, a->n_ints * sizeof(*v));
		*n = a->n_ints;
		return 0;
	}
	if (!(def = attr_default(c, name, &rc)))
		return rc;
	*n = 0;
	for (p = def; *p && *n < cap; p = *end ? end + 1 : end) {
		v[(*n)++] = strtoll(p, &end, 10);
		if (end == p)
			break;
	}
	return 0;
}

int infer_attr_float(struct infer_ctx *c, const char *name, float *v)
{
	const struct ir_attr *a = infer_attr(c, name);
	const char *def;
	int rc;

	if (a) {
		*v = a->type == IR_ATTR_INT ? (float)a->i : a->f;
		return 0;
	}
	if ((def = attr_default(c, name, &rc)))
		*v = strtof(def, NULL);
	return rc;
}

int infer_attr_str(struct infer_ctx *c, const char *name, char *buf,
		   size_t size)
{
	const struct ir_attr *a = infer_attr(c, name);
	const char *def;
	int rc;

	if (a) {
		snprintf(buf, size, "%s", a->s ? (const char *)a->s : "");
		return 0;
	}
	if ((def = attr_default(c, name, &rc)))
		snprintf(buf, size, "%s", def);
	return rc;
}

int infer_same_dtype(struct infer_ctx *c, size_t a, size_t b)
{
	const struct ir_vtype *x = infer_in(c, a), *y = infer_in(c, b);

	if (x && y && x->dtype && y->dtype && x->dtype != y->dtype)
		return infer_err(c, "inputs have different types %s and %s",
				 ir_dtype_name(x->dtype), ir_dtype_name(y->dtype));
	return 0;
}

int infer_norm_axis(struct infer_ctx *c, int64_t axis, int rank, int64_t *out)
{
	if (axis < -rank || axis >= rank)
		return infer_err(c, "axis %lld is out of range for rank %d",
				 (long long)axis, rank);
	*out = axis < 0 ? axis + rank : axis;
	return 0;
}

/* The tensor holding input i's elements: an initializer, a Constant's
 * value or a bound graph input; NULL when none is known. */
struct ir_tensor *infer_value_tensor(struct infer_ctx *c, size_t input)
{
	struct ir_value *v = infer_has_in(c, input) ? c->n->inputs[input] : NULL;

	if (!v)
		return NULL;
	if (v->init)
		return v->init;
	if (v->producer && !strcmp(ir_s(v->producer->op_type), "Constant")) {
		for (size_t i = 0; i < v->producer->n_attrs; i++)
			if (!strcmp(ir_s(v->producer->attrs[i]->name), "value"))
				return v->producer->attrs[i]->t;
		return NULL;
	}
	for (size_t i = 0; i < c->r->n_bound; i++)
		if (c->r->bound[i].v == v)
			return c->r->bound[i].t;
	return NULL;
}

/* Float elements of input i when fed by an initializer or a Constant. */
int infer_value_floats(struct infer_ctx *c, size_t input, double *out,
		       size_t cap, size_t *n)
{
	struct ir_value *v = infer_has_in(c, input) ? c->n->inputs[input] : NULL;
	struct ir_tensor *t = NULL;
	const uint8_t *data;
	size_t len;
	int64_t cnt;

	const struct ir_vtype *vt = infer_in(c, input);

	if (!v)
		return 0;
	if (vt && vt->has_fconst && vt->n_fconst <= cap) {
		memcpy(out, vt->fval, vt->n_fconst * sizeof(*out));
		*n = vt->n_fconst;
		return 1;
	}
	if (vt && vt->has_const && vt->n_const <= cap) {
		for (size_t i = 0; i < vt->n_const; i++) {
			if (vt->cval[i].kind != IR_VDIM_VALUE)
				return 0;
			out[i] = (double)vt->cval[i].value;
		}
		*n = vt->n_const;
		return 1;
	}
	if (v->init)
		t = v->init;
	else if (v->producer && !strcmp(ir_s(v->producer->op_type), "Constant"))
		for (size_t i = 0; i < v->producer->n_attrs; i++)
			if (!strcmp(ir_s(v->producer->attrs[i]->name), "value"))
				t = v->producer->attrs[i]->t;
	if (!t || (cnt = ir_tensor_numel(t)) < 0 || (size_t)cnt > cap)
		return 0;
	if (t->dtype != IR_DTYPE_FLOAT && t->dtype != IR_DTYPE_DOUBLE &&
	    t->dtype != IR_DTYPE_INT64)
		return 0;
	if (ir_tensor_data(t, &data, &len, c->d) < 0)
		return IR_EINVAL;
	if (len < (size_t)cnt * (t->dtype == IR_DTYPE_FLOAT ? 4 : 8))
		return 0;
	for (int64_t i = 0; i < cnt; i++) {
		if (t->dtype == IR_DTYPE_FLOAT) {
			float f;

			memcpy(&f, data + i * 4, 4);
			out[i] = f;
		} else if (t->dtype == IR_DTYPE_DOUBLE) {
			memcpy(&out[i], data + i * 8, 8);
		} else {
			int64_t k;

			memcpy(&k, data + i * 8, 8);
			out[i] = (double)k;
		}
	}
	*n = (size_t)cnt;
	return 1;
}

/* ---- merging with declared types ------------------------------------ */

static void merge_declared(struct infer_ctx *c, const struct ir_value *v,
			   struct ir_vtype *t)
{
	struct ir_vtype dec;
	char a[256], b[256];

	if (!v->type || (c->r->flags & IR_INFER_NO_MERGE))
		return;
	infer_vt_declared(v->type, &dec);
	if (dec.is_seq != t->is_seq || dec.map_key != t->map_key) {
		if (t->dtype || t->rank >= 0 || t->map_key)
			return;  /* a sequence where a tensor was declared: skip */
		t->is_seq = dec.is_seq;
		t->map_key = dec.map_key;
	}
	if (dec.dtype) {
		if (!t->dtype)
			t->dtype = dec.dtype;
		else if (t->dtype != dec.dtype)
			ir_diag_warn(c->d, "value '%s': declared type %s, inferred %s",
				     ir_s(v->name), ir_dtype_name(dec.dtype),
				     ir_dtype_name(t->dtype));
	}
	if (dec.rank < 0)
		return;
	if (t->rank < 0) {
		t->rank = dec.rank;
		memcpy(t->dims, dec.dims, sizeof(dec.dims));
		return;
	}
	if (t->rank != dec.rank) {
		infer_fmt_dims(&dec, a, sizeof(a));
		infer_fmt_dims(t, b, sizeof(b));
		ir_diag_warn(c->d, "value '%s': declared shape %s, inferred %s",
			     ir_s(v->name), a, b);
		return;
	}
	for (int i = 0; i < t->rank; i++) {
		struct ir_vdim *x = &t->dims[i], *y = &dec.dims[i];

		if (x->kind == IR_VDIM_UNKNOWN)
			*x = *y;
		else if (x->kind == IR_VDIM_VALUE && y->kind == IR_VDIM_VALUE &&
			 x->value != y->value)
			ir_diag_warn(c->d, "value '%s': declared dim %d is %lld, inferred %lld",
				     ir_s(v->name), i, (long long)y->value,
				     (long long)x->value);
		else if (x->kind == IR_VDIM_PARAM && y->kind == IR_VDIM_VALUE)
			*x = *y;
	}
}

/* ---- the walk -------------------------------------------------------- */

static int64_t node_opset(struct infer_ctx *c, const char *domain)
{
	const char *want = strcmp(domain, "ai.onnx") ? domain : "";

	if (c->fn)
		for (size_t i = 0; i < c->fn->n_opsets; i++) {
			const char *dd = ir_s(c->fn->opsets[i].domain);

			if (!strcmp(dd, "ai.onnx"))
				dd = "";
			if (!strcmp(dd, want))
				return c->fn->opsets[i].version;
		}
	return ir_model_opset(c->m, domain);
}

static int note_not_inferred(struct ir_infer *r, const struct ir_node *n)
{
	if (r->n_not_inferred == r->cap_not_inferred) {
		size_t cap = r->cap_not_inferred ? r->cap_not_inferred * 2 : 16;
		const struct ir_node **p = realloc(r->not_inferred, cap * sizeof(*p));

		if (!p)
			return IR_ENOMEM;
		r->not_inferred = p;
		r->cap_not_inferred = cap;
	}
	r->not_inferred[r->n_not_inferred++] = n;
	return 0;
}

static struct ir_function *find_function(struct ir_model *m, const char *domain,
					 const char *op)
{
	for (size_t i = 0; i < m->n_functions; i++) {
		struct ir_function *f = m->functions[i];
		const char *fd = f->domain && *f->domain ? f->domain : "ai.onnx";

		if (!strcmp(fd, domain) && !strcmp(ir_s(f->name), op))
			return f;
	}
	return NULL;
}

/* A call of a model-local function: infer its body with the call's input
 * types and read back its outputs. */
static int infer_call(struct infer_ctx *c, struct ir_function *f)
{
	struct infer_ctx sub = *c;
	struct ir_vtype unk;
	int rc;

	if (!f->body || c->depth >= MAX_DEPTH)
		return 1;
	infer_vt_unknown(&unk);
	sub.fn = f;
	sub.caller = c->n;
	sub.depth = c->depth + 1;
	for (size_t i = 0; i < f->n_inputs; i++) {
		struct ir_value *v = ir_graph_find(f->body, f->inputs[i]);
		const struct ir_vtype *t = infer_in(c, i);

		if (v && (rc = infer_set(&sub, v, t ? t : &unk)) < 0)
			return rc;
	}
	if ((rc = infer_graph(&sub, f->body)) < 0)
		return rc;
	for (size_t i = 0; i < f->n_outputs && i < c->n->n_outputs; i++) {
		struct ir_value *v = ir_graph_find(f->body, f->outputs[i]);
		const struct ir_vtype *t = v ? ir_infer_get(c->r, v) : NULL;

		if (t && (rc = infer_vt_copy(&c->out[i], t)) < 0)
			return rc;
	}
	return 0;
}

/* Check each input's dtype against its formal's type or constraint in the
 * registry schema ("tensor(float16), tensor(float)"). */
static int check_constraints(struct infer_ctx *c)
{
	const struct ir_op_schema *s = c->schema;
	char want[48];

	if (!s || !s->n_inputs)
		return 0;
	for (size_t i = 0; i < c->n_in; i++) {
		const struct ir_vtype *t = c->in[i];
		const struct ir_op_formal *f;
		const char *types = NULL, *name;

		if (!t || !t->dtype)
			continue;
		if (i < s->n_inputs)
			f = &s->inputs[i];
		else if (s->inputs[s->n_inputs - 1].variadic)
			f = &s->inputs[s->n_inputs - 1];
		else
			continue;
		if (!strncmp(f->type, "tensor(", 7)) {
			types = f->type;
		} else {
			for (size_t k = 0; k < s->n_constraints; k++)
				if (!strcmp(s->constraints[k].name, f->type))
					types = s->constraints[k].types;
		}
		if (!types)
			continue;
		name = ir_dtype_name(t->dtype);
		snprintf(want, sizeof(want), "tensor(%s)", name);
		if (!strstr(types, want))
			return infer_err(c, "input %zu ('%s') has type %s, not allowed by %s (%s)",
					 i, f->name, name, f->type, types);
	}
	return 0;
}

static int infer_node(struct infer_ctx *env, struct ir_node *n)
{
	struct infer_ctx c = *env;
	const char *domain = n->domain && *n->domain ? n->domain : "ai.onnx";
	const struct infer_op *op = infer_op_find(domain, ir_s(n->op_type));
	const char *sdom = domain;  /* where schema and rule come from */
	struct ir_vtype *ins = NULL, *outs = NULL;
	const struct ir_vtype **inp = NULL;
	struct ir_function *f;
	int rc = IR_ENOMEM;

	/* onnxruntime's contrib ops in the default domain (no model-local
	 * function of that name): the com.microsoft rule and schema */
	if (!op && !find_function(c.m, domain, ir_s(n->op_type)) &&
	    (sdom = ir_registry_default_fallback(domain, ir_s(n->op_type))))
		op = infer_op_find(sdom, ir_s(n->op_type));
	if (!sdom)
		sdom = domain;
	c.n = n;
	c.opset = node_opset(&c, domain);
	c.schema = ir_registry_find(sdom, ir_s(n->op_type), c.opset);
	c.n_in = n->n_inputs;
	if (!(ins = calloc(n->n_inputs + 1, sizeof(*ins))) ||
	    !(inp = calloc(n->n_inputs + 1, sizeof(*inp))) ||
	    !(outs = calloc(n->n_outputs + 1, sizeof(*outs))))
		goto cleanup;
	for (size_t i = 0; i < n->n_inputs; i++) {
		const struct ir_vtype *t = ir_infer_get(c.r, n->inputs[i]);

		infer_vt_unknown(&ins[i]);
		if (!t)
			continue;
		if ((rc = infer_vt_copy(&ins[i], t)) < 0)
			goto cleanup;
		inp[i] = &ins[i];
	}
	for (size_t i = 0; i < n->n_outputs; i++)
		infer_vt_unknown(&outs[i]);
	c.in = inp;
	c.out = outs;
	c.r->n_nodes++;
	if ((rc = check_constraints(&c)) < 0)
		goto cleanup;
	if (op)
		rc = op->fn(&c);
	else if ((f = find_function(c.m, domain, ir_s(n->op_type))))
		rc = infer_call(&c, f);
	else
		rc = 1;
	if (rc < 0)
		goto cleanup;
	if (rc == 1) {
		if ((rc = note_not_inferred(c.r, n)) < 0)
			goto cleanup;
	} else {
		c.r->n_inferred++;
	}
	for (size_t i = 0; i < n->n_outputs; i++) {
		if (!n->outputs[i])
			continue;
		merge_declared(&c, n->outputs[i], &outs[i]);
		if ((rc = infer_set(&c, n->outputs[i], &outs[i])) < 0)
			goto cleanup;
	}
	rc = 0;
cleanup:
	if (rc == IR_ENOMEM)
		ir_diag_error(c.d, IR_ENOMEM, "node '%s' (%s): out of memory",
			      ir_s(n->name), ir_s(n->op_type));
	for (size_t i = 0; ins && i < n->n_inputs; i++)
		infer_vt_release(&ins[i]);
	/* <=: a rule may fill out[0] of a node declaring no output (the
	 * spare slot), which must not leak. */
	for (size_t i = 0; outs && i <= n->n_outputs; i++)
		infer_vt_release(&outs[i]);
	free(ins);
	free(inp);
	free(outs);
	return rc;
}

static int graph_body(struct infer_ctx *env, struct ir_graph *g);

/* Seed a graph's inputs (declared types, unless the caller set them) and
 * initializers, then infer its nodes in order. */
int infer_graph(struct infer_ctx *env, struct ir_graph *g)
{
	int rc = graph_body(env, g);

	if (rc == IR_ENOMEM && !env->d->status)
		ir_diag_error(env->d, IR_ENOMEM, "graph '%s': out of memory",
			      ir_s(g->name));
	return rc;
}

static int graph_body(struct infer_ctx *env, struct ir_graph *g)
{
	struct ir_vtype t;
	int rc;

	for (size_t i = 0; i < g->n_inputs; i++) {
		struct ir_value *v = g->inputs[i].value;

		if (!v || ir_infer_get(env->r, v) || v->init)
			continue;
		infer_vt_declared(g->inputs[i].type, &t);
		if ((rc = infer_set(env, v, &t)) < 0)
			return rc;
	}
	for (size_t i = 0; i < g->n_inits; i++) {
		struct ir_tensor *tt = g->inits[i];
		struct ir_value *v = ir_graph_find(g, ir_s(tt->name));

		if (!v)
			continue;
		if ((rc = infer_tensor_vtype(tt, &t, env->d)) < 0)
			return rc;
		rc = infer_set(env, v, &t);
		infer_vt_release(&t);
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < g->n_sparse_inits; i++) {
		struct ir_sparse *sp = g->sparse_inits[i];
		struct ir_value *v = sp->values ?
			ir_graph_find(g, ir_s(sp->values->name)) : NULL;

		if (!v)
			continue;
		infer_vt_unknown(&t);
		t.dtype = sp->values->dtype;
		if (sp->n_dims <= IR_INFER_MAX_RANK) {
			t.rank = (int)sp->n_dims;
			for (size_t k = 0; k < sp->n_dims; k++)
				t.dims[k] = infer_dim_val(sp->dims[k]);
		}
		if ((rc = infer_set(env, v, &t)) < 0)
			return rc;
	}
	for (size_t i = 0; i < g->n_nodes; i++)
		if ((rc = infer_node(env, g->nodes[i])) < 0)
			return rc;
	return 0;
}

int ir_infer_model(struct ir_model *m, struct ir_infer *out,
		   struct ir_diag *d)
{
	struct infer_ctx c;

	memset(&c, 0, sizeof(c));
	c.r = out;
	c.m = m;
	c.d = d;
	if (!m->graph)
		return ir_diag_error(d, IR_EINVAL, "model has no graph");
	if (table_reserve(out, m->graph->n_values) < 0)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	return infer_graph(&c, m->graph);
}

/* The vtype of a bound test value: a tensor (with its small constants), a
 * sequence of tensors (elements one by one) or an optional's content (an
 * empty optional stays unknown).  1 when nothing is known. */
static int data_vtype(const struct ir_data *x, struct ir_vtype *t,
		      struct ir_diag *d)
{
	struct ir_vtype *e;
	int rc = 0;

	infer_vt_unknown(t);
	switch (x->kind) {
	case IR_DATA_TENSOR:
		return x->tensor ? infer_tensor_vtype(x->tensor, t, d) : 1;
	case IR_DATA_OPTIONAL:
		return x->n ? data_vtype(&x->items[0], t, d) : 1;
	case IR_DATA_SEQUENCE:
		break;
	default:
		return 1;
	}
	for (size_t i = 0; i < x->n; i++)
		if (x->items[i].kind != IR_DATA_TENSOR || !x->items[i].tensor)
			return 1;
	if (!(e = calloc(x->n + 1, sizeof(*e))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < x->n && rc >= 0; i++)
		rc = infer_tensor_vtype(x->items[i].tensor, &e[i], d);
	t->is_seq = 1;
	if (rc >= 0)
		rc = infer_vt_set_elems(t, e, x->n);
	if (rc >= 0 && x->n) {
		/* dtype, rank and dims every element shares */
		t->dtype = e[0].dtype;
		t->rank = e[0].rank;
		memcpy(t->dims, e[0].dims, sizeof(t->dims));
		for (size_t i = 1; i < x->n; i++) {
			if (e[i].rank != t->rank) {
				t->rank = -1;
				break;
			}
			for (int k = 0; k < t->rank; k++)
				if (!infer_dim_eq(&t->dims[k], &e[i].dims[k]))
					t->dims[k] = infer_dim_unknown();
		}
	}
	for (size_t i = 0; i < x->n; i++)
		infer_vt_release(&e[i]);
	free(e);
	if (rc < 0) {
		infer_vt_release(t);
		return rc == IR_ENOMEM ? ir_diag_error(d, IR_ENOMEM, "out of memory") : rc;
	}
	return 0;
}

int ir_infer_model_data(struct ir_model *m, const struct ir_data *inputs,
			size_t n, struct ir_infer *out, struct ir_diag *d)
{
	struct infer_ctx c;
	struct ir_graph *g = m->graph;
	struct ir_vtype t;
	size_t k = 0;
	int rc;

	memset(&c, 0, sizeof(c));
	c.r = out;
	c.m = m;
	c.d = d;
	if (!g)
		return ir_diag_error(d, IR_EINVAL, "model has no graph");
	if (table_reserve(out, g->n_values) < 0)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < g->n_inputs && k < n; i++) {
		struct ir_value *v = g->inputs[i].value;
		const struct ir_data *x;

		if (!v || v->init)
			continue;
		x = &inputs[k++];
		if ((rc = data_vtype(x, &t, d)) < 0)
			return rc;
		if (rc > 0)
			continue;
		if (x->kind == IR_DATA_TENSOR && v->type &&
		    v->type->kind == IR_TYPE_TENSOR &&
		    IR_HAS(v->type, IR_TYPE_HAS_ELEM) && v->type->elem_type != t.dtype)
			ir_diag_warn(d, "input '%s': declared type %s, bound to a %s tensor",
				     ir_s(v->name), ir_dtype_name(v->type->elem_type),
				     ir_dtype_name(t.dtype));
		rc = infer_set(&c, v, &t);
		infer_vt_release(&t);
		if (rc < 0)
			return rc;
		if (x->kind != IR_DATA_TENSOR)
			continue;
		if (!out->bound && !(out->bound = calloc(n, sizeof(*out->bound))))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		out->bound[out->n_bound].v = v;
		out->bound[out->n_bound++].t = x->tensor;
	}
	if (k < n)
		return ir_diag_error(d, IR_EUSAGE, "%zu input tensors given, the graph has %zu inputs without initializers",
				     n, k);
	return infer_graph(&c, g);
}

int ir_infer_model_inputs(struct ir_model *m, struct ir_tensor **inputs,
			  size_t n, struct ir_infer *out, struct ir_diag *d)
{
	struct ir_data *x = calloc(n + 1, sizeof(*x));
	int rc;

	if (!x)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		x[i].kind = IR_DATA_TENSOR;
		x[i].tensor = inputs[i];  /* borrowed: x is freed, not released */
	}
	rc = ir_infer_model_data(m, x, n, out, d);
	free(x);
	return rc;
}
