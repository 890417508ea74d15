/* infer.c: the core of static type/shape inference: the side table keyed
 * by struct ir_value *, vtype helpers, attribute lookup with registry
 * defaults, the graph walk (seeding from inputs and initializers, model
 * functions, merging with declared value_info).
 * The op table is infer_table.c; per-op rules are infer_elem.c,
 * infer_nn.c, infer_shape.c, infer_ctrl.c and infer_misc.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer_int.h"

#define MAX_DEPTH 32

/* ---- vtype helpers -------------------------------------------------- */

void infer_vt_unknown(struct ir_vtype *t)
{
	memset(t, 0, sizeof(*t));
	t->rank = -1;
}

void infer_vt_release(struct ir_vtype *t)
{
	free(t->cval);
	infer_vt_unknown(t);
}

int infer_vt_copy(struct ir_vtype *dst, const struct ir_vtype *src)
{
	*dst = *src;
	dst->cval = NULL;
	dst->has_const = 0;
	dst->n_const = 0;
	if (src->has_const)
		return infer_vt_set_const(dst, src->cval, src->n_const);
	return 0;
}

int infer_vt_set_const(struct ir_vtype *t, const struct ir_vdim *v, size_t n)
{
	struct ir_vdim *c;

	free(t->cval);
	t->cval = NULL;
	t->has_const = 0;
	t->n_const = 0;
	if (n > IR_INFER_MAX_CONST)
		return 0;
	if (!(c = malloc((n ? n : 1) * sizeof(*c))))
		return IR_ENOMEM;
	if (n)
		memcpy(c, v, n * sizeof(*c));
	t->cval = c;
	t->n_const = n;
	t->has_const = 1;
	return 0;
}

int infer_vt_const_int(const struct ir_vtype *t, size_t i, int64_t *out)
{
	if (!t || !t->has_const || i >= t->n_const ||
	    t->cval[i].kind != IR_VDIM_VALUE)
		return 0;
	*out = t->cval[i].value;
	return 1;
}

/* 1 when every element is a known integer (and fits cap). */
int infer_vt_const_ints(const struct ir_vtype *t, int64_t *out, size_t cap,
			size_t *n)
{
	if (!t || !t->has_const || t->n_const > cap)
		return 0;
	for (size_t i = 0; i < t->n_const; i++) {
		if (t->cval[i].kind != IR_VDIM_VALUE)
			return 0;
		out[i] = t->cval[i].value;
	}
	*n = t->n_const;
	return 1;
}

int64_t infer_vt_numel(const struct ir_vtype *t)
{
	int64_t n = 1;

	if (!t || t->rank < 0)
		return -1;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i].kind != IR_VDIM_VALUE || t->dims[i].value < 0)
			return -1;
		if (t->dims[i].value && n > INT64_MAX / t->dims[i].value)
			return -1;
		n *= t->dims[i].value;
	}
	return n;
}

struct ir_vdim infer_dim_val(int64_t v)
{
	struct ir_vdim d = { IR_VDIM_VALUE, v, NULL };

	return d;
}

struct ir_vdim infer_dim_unknown(void)
{
	struct ir_vdim d = { IR_VDIM_UNKNOWN, 0, NULL };

	return d;
}

int infer_dim_eq(const struct ir_vdim *a, const struct ir_vdim *b)
{
	if (a->kind != b->kind || a->kind == IR_VDIM_UNKNOWN)
		return 0;
	if (a->kind == IR_VDIM_VALUE)
		return a->value == b->value;
	return !strcmp(a->param, b->param);
}

int infer_is_int_dtype(int dtype)
{
	switch (dtype) {
	case IR_DTYPE_INT64: case IR_DTYPE_INT32: case IR_DTYPE_INT16:
	case IR_DTYPE_INT8: case IR_DTYPE_UINT8: case IR_DTYPE_UINT16:
	case IR_DTYPE_UINT32: case IR_DTYPE_UINT64: case IR_DTYPE_BOOL:
		return 1;
	default:
		return 0;
	}
}

static int64_t load_int(int dtype, const uint8_t *p)
{
	switch (dtype) {
	case IR_DTYPE_INT64: { int64_t v; memcpy(&v, p, 8); return v; }
	case IR_DTYPE_UINT64: { uint64_t v; memcpy(&v, p, 8); return (int64_t)v; }
	case IR_DTYPE_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
	case IR_DTYPE_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
	case IR_DTYPE_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
	case IR_DTYPE_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
	case IR_DTYPE_INT8: return (int8_t)p[0];
	default: return p[0];
	}
}

/* Type of a tensor; integer payloads up to IR_INFER_MAX_CONST elements
 * become a constant. */
int infer_tensor_vtype(struct ir_tensor *t, struct ir_vtype *out,
		       struct ir_diag *d)
{
	int64_t n;
	const uint8_t *data;
	size_t len, esz;
	struct ir_vdim *v;
	int rc;

	infer_vt_unknown(out);
	out->dtype = t->dtype;
	if (t->n_dims > IR_INFER_MAX_RANK)
		return 0;
	out->rank = (int)t->n_dims;
	for (size_t i = 0; i < t->n_dims; i++)
		out->dims[i] = infer_dim_val(t->dims[i]);
	n = ir_tensor_numel(t);
	if (!infer_is_int_dtype(t->dtype) || n < 0 || n > IR_INFER_MAX_CONST)
		return 0;
	esz = ir_dtype_get(t->dtype)->bits / 8;
	if ((rc = ir_tensor_data(t, &data, &len, d)) < 0)
		return rc;
	if (len < (size_t)n * esz)
		return ir_diag_error(d, IR_EINVAL, "tensor '%s': payload has %zu bytes, %lld expected",
				     ir_s(t->name), len, (long long)n * (long long)esz);
	if (!(v = malloc((n ? (size_t)n : 1) * sizeof(*v))))
		return IR_ENOMEM;
	for (int64_t i = 0; i < n; i++)
		v[i] = infer_dim_val(load_int(t->dtype, data + (size_t)i * esz));
	out->cval = v;
	out->n_const = (size_t)n;
	out->has_const = 1;
	return 0;
}

static void vtype_from_declared(const struct ir_type *ty, struct ir_vtype *t)
{
	infer_vt_unknown(t);
	if (!ty || ty->kind != IR_TYPE_TENSOR)
		return;
	if (IR_HAS(ty, IR_TYPE_HAS_ELEM))
		t->dtype = ty->elem_type;
	if (!IR_HAS(ty, IR_TYPE_HAS_SHAPE) || ty->shape.n_dims > IR_INFER_MAX_RANK)
		return;
	t->rank = (int)ty->shape.n_dims;
	for (size_t i = 0; i < ty->shape.n_dims; i++) {
		const struct ir_dim *dd = &ty->shape.dims[i];

		if (dd->kind == IR_DIM_VALUE)
			t->dims[i] = infer_dim_val(dd->value);
		else if (dd->kind == IR_DIM_PARAM && dd->param && *dd->param) {
			t->dims[i].kind = IR_VDIM_PARAM;
			t->dims[i].param = dd->param;
		}
	}
}

void infer_fmt_dims(const struct ir_vtype *t, char *buf, size_t size)
{
	size_t o = 0;

	if (!size)
		return;
	buf[0] = 0;
	if (t->rank < 0) {
		snprintf(buf, size, "[*]");
		return;
	}
	o += (size_t)snprintf(buf + o, size - o, "[");
	for (int i = 0; i < t->rank && o < size; i++) {
		const struct ir_vdim *dd = &t->dims[i];

		if (dd->kind == IR_VDIM_VALUE)
			o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? "," : "",
					      (long long)dd->value);
		else
			o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? "," : "",
					      dd->kind == IR_VDIM_PARAM ? dd->param : "?");
	}
	if (o < size)
		snprintf(buf + o, size - o, "]");
}

void ir_vtype_format(const struct ir_vtype *t, char *buf, size_t size)
{
	char dims[256];

	infer_fmt_dims(t, dims, sizeof(dims));
	snprintf(buf, size, "%s%s", t->dtype ? ir_dtype_name(t->dtype) : "?", dims);
}

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
			free(r->slots[i].t.cval);
	free(r->slots);
	free(r->not_inferred);
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

static int table_grow(struct ir_infer *r)
{
	size_t cap = r->cap_slots ? r->cap_slots * 2 : 64;
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
		free(copy.cval);
		return rc;
	}
	s = slot_find(r, v);
	if (s->v) {
		free(s->t.cval);
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

/* Float elements of input i when fed by an initializer or a Constant. */
int infer_value_floats(struct infer_ctx *c, size_t input, double *out,
		       size_t cap, size_t *n)
{
	struct ir_value *v = infer_has_in(c, input) ? c->n->inputs[input] : NULL;
	struct ir_tensor *t = NULL;
	const uint8_t *data;
	size_t len;
	int64_t cnt;

	if (!v)
		return 0;
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
	vtype_from_declared(v->type, &dec);
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
	struct ir_vtype *ins = NULL, *outs = NULL;
	const struct ir_vtype **inp = NULL;
	struct ir_function *f;
	int rc = IR_ENOMEM;

	c.n = n;
	c.opset = node_opset(&c, domain);
	c.schema = ir_registry_find(domain, ir_s(n->op_type), c.opset);
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
		free(ins[i].cval);
	for (size_t i = 0; outs && i < n->n_outputs; i++)
		free(outs[i].cval);
	free(ins);
	free(inp);
	free(outs);
	return rc;
}

/* Seed a graph's inputs (declared types, unless the caller set them) and
 * initializers, then infer its nodes in order. */
int infer_graph(struct infer_ctx *env, struct ir_graph *g)
{
	struct ir_vtype t;
	int rc;

	for (size_t i = 0; i < g->n_inputs; i++) {
		struct ir_value *v = g->inputs[i].value;

		if (!v || ir_infer_get(env->r, v) || v->init)
			continue;
		vtype_from_declared(g->inputs[i].type, &t);
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
		free(t.cval);
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
	return infer_graph(&c, m->graph);
}
