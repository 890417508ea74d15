/* infer_elem.c: inference of elementwise operators: unary (same type and
 * shape), Cast, numpy broadcasting for binary/variadic/compare/logical ops
 * and Where, and folding of small integer constants through Add, Sub, Mul,
 * Div, Max, Min, Equal, Less, Greater and Where. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer_int.h"

/* ---- broadcasting ---------------------------------------------------- */

static int bcast_dim(const struct ir_vdim *x, const struct ir_vdim *y,
		     struct ir_vdim *o)
{
	if (x->kind == IR_VDIM_VALUE && y->kind == IR_VDIM_VALUE) {
		if (x->value == y->value || y->value == 1)
			*o = *x;
		else if (x->value == 1)
			*o = *y;
		else
			return -1;
		return 0;
	}
	if (x->kind == IR_VDIM_VALUE)
		*o = x->value == 1 ? *y : *x;
	else if (y->kind == IR_VDIM_VALUE)
		*o = y->value == 1 ? *x : *y;
	else if (infer_dim_eq(x, y))
		*o = *x;
	else
		*o = infer_dim_unknown();
	return 0;
}

int infer_broadcast2(struct infer_ctx *c, const struct ir_vdim *a, int ra,
		     const struct ir_vdim *b, int rb, struct ir_vdim *out,
		     int *ro)
{
	int r = ra > rb ? ra : rb;
	struct ir_vdim one = infer_dim_val(1), tmp[IR_INFER_MAX_RANK];

	for (int i = 0; i < r; i++) {
		int ia = i - (r - ra), ib = i - (r - rb);
		const struct ir_vdim *x = ia >= 0 ? &a[ia] : &one;
		const struct ir_vdim *y = ib >= 0 ? &b[ib] : &one;

		if (bcast_dim(x, y, &tmp[i]) < 0) {
			struct ir_vtype ta, tb;
			char sa[256], sb[256];

			infer_vt_unknown(&ta);
			infer_vt_unknown(&tb);
			ta.rank = ra;
			tb.rank = rb;
			memcpy(ta.dims, a, (size_t)ra * sizeof(*a));
			memcpy(tb.dims, b, (size_t)rb * sizeof(*b));
			infer_fmt_dims(&ta, sa, sizeof(sa));
			infer_fmt_dims(&tb, sb, sizeof(sb));
			return infer_err(c, "shapes %s and %s are not broadcastable", sa, sb);
		}
	}
	memcpy(out, tmp, (size_t)r * sizeof(*out));
	*ro = r;
	return 0;
}

/* Broadcast the shapes of inputs first..n-1 into t (rank -1 if any is
 * unknown). */
static int broadcast_inputs(struct infer_ctx *c, size_t first, struct ir_vtype *t)
{
	int rank = 0, rc;

	for (size_t i = first; i < c->n_in; i++) {
		const struct ir_vtype *x = infer_in(c, i);

		if (!infer_has_in(c, i))
			continue;
		if (!x || x->rank < 0) {
			t->rank = -1;
			return 0;
		}
		if ((rc = infer_broadcast2(c, t->dims, rank, x->dims, x->rank,
					   t->dims, &rank)) < 0)
			return rc;
	}
	t->rank = rank;
	return 0;
}

/* ---- constant folding ------------------------------------------------- */

enum fold_op { F_NONE, F_ADD, F_SUB, F_MUL, F_DIV, F_MAX, F_MIN, F_EQ,
	       F_LT, F_GT, F_WHERE };

static enum fold_op fold_of(const char *op)
{
	static const struct { const char *name; enum fold_op f; } t[] = {
		{ "Add", F_ADD }, { "Sub", F_SUB }, { "Mul", F_MUL },
		{ "Div", F_DIV }, { "Max", F_MAX }, { "Min", F_MIN },
		{ "Equal", F_EQ }, { "Less", F_LT }, { "Greater", F_GT },
		{ "Where", F_WHERE },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(op, t[i].name))
			return t[i].f;
	return F_NONE;
}

static struct ir_vdim fold1(enum fold_op f, const struct ir_vdim *x,
			    const struct ir_vdim *y)
{
	int64_t a = x->value, b = y->value;
	int xv = x->kind == IR_VDIM_VALUE, yv = y->kind == IR_VDIM_VALUE;

	if (!xv || !yv) {
		/* symbolic identities: N*1, N+0, N-0, N/1 */
		if (yv && ((b == 1 && (f == F_MUL || f == F_DIV)) ||
			   (b == 0 && (f == F_ADD || f == F_SUB))))
			return *x;
		if (xv && ((a == 1 && f == F_MUL) || (a == 0 && f == F_ADD)))
			return *y;
		if (f == F_EQ && infer_dim_eq(x, y))
			return infer_dim_val(1);
		return infer_dim_unknown();
	}
	switch (f) {
	case F_ADD: return infer_dim_val((int64_t)((uint64_t)a + (uint64_t)b));
	case F_SUB: return infer_dim_val((int64_t)((uint64_t)a - (uint64_t)b));
	case F_MUL: return infer_dim_val((int64_t)((uint64_t)a * (uint64_t)b));
	case F_DIV:
		if (b == 0 || (a == INT64_MIN && b == -1))
			return infer_dim_unknown();
		return infer_dim_val(a / b);
	case F_MAX: return infer_dim_val(a > b ? a : b);
	case F_MIN: return infer_dim_val(a < b ? a : b);
	case F_EQ: return infer_dim_val(a == b);
	case F_LT: return infer_dim_val(a < b);
	case F_GT: return infer_dim_val(a > b);
	default: return infer_dim_unknown();
	}
}

/* Flat index into input x for output element `o` of shape out. */
static size_t bcast_index(const struct ir_vtype *out, const struct ir_vtype *x,
			  size_t o)
{
	size_t idx = 0, stride = 1;

	for (int i = out->rank - 1, j = x->rank - 1; i >= 0; i--, j--) {
		size_t od = (size_t)out->dims[i].value, coord = o % od;

		o /= od;
		if (j < 0)
			continue;
		if (x->dims[j].value != 1)
			idx += coord * stride;
		stride *= (size_t)x->dims[j].value;
	}
	return idx;
}

/* Fold when every input is a constant of fully known shape. */
static int fold(struct infer_ctx *c, enum fold_op f, struct ir_vtype *t)
{
	const struct ir_vtype *x[3];
	size_t n = f == F_WHERE ? 3 : 2;
	int64_t numel = infer_vt_numel(t);
	struct ir_vdim *v;
	int rc;

	if (f == F_NONE || c->n_in != n || numel < 0 || numel > IR_INFER_MAX_CONST)
		return 0;
	for (size_t i = 0; i < n; i++) {
		x[i] = infer_in(c, i);
		if (!x[i] || !x[i]->has_const || infer_vt_numel(x[i]) != (int64_t)x[i]->n_const)
			return 0;
	}
	if (!(v = malloc(((size_t)numel + 1) * sizeof(*v))))
		return IR_ENOMEM;
	for (size_t o = 0; o < (size_t)numel; o++) {
		const struct ir_vdim *a = &x[0]->cval[bcast_index(t, x[0], o)];
		const struct ir_vdim *b = &x[1]->cval[bcast_index(t, x[1], o)];

		if (f == F_WHERE) {
			const struct ir_vdim *e = &x[2]->cval[bcast_index(t, x[2], o)];

			v[o] = a->kind != IR_VDIM_VALUE ? infer_dim_unknown() :
			       a->value ? *b : *e;
		} else {
			v[o] = fold1(f, a, b);
		}
	}
	rc = infer_vt_set_const(t, v, (size_t)numel);
	free(v);
	return rc;
}

/* ---- the ops --------------------------------------------------------- */

/* Same dtype and shape as input 0; Identity also keeps the constant. */
int infer_unary(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);

	if (!x)
		return 0;
	c->out[0].dtype = x->dtype;
	c->out[0].rank = x->rank;
	memcpy(c->out[0].dims, x->dims, sizeof(x->dims));
	if (!strcmp(c->n->op_type, "Identity") && x->has_const)
		return infer_vt_set_const(&c->out[0], x->cval, x->n_const);
	return 0;
}

int infer_bool_unary(struct infer_ctx *c)
{
	int rc = infer_unary(c);

	c->out[0].dtype = IR_DTYPE_BOOL;
	return rc;
}

int infer_dropout(struct infer_ctx *c)
{
	int rc = infer_unary(c);

	for (size_t i = 1; i < c->n->n_outputs && rc >= 0; i++) {
		c->out[i].rank = c->out[0].rank;
		memcpy(c->out[i].dims, c->out[0].dims, sizeof(c->out[0].dims));
		c->out[i].dtype = c->opset >= 10 ? IR_DTYPE_BOOL : c->out[0].dtype;
	}
	return rc;
}

int infer_cast(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t to = 0;
	char s[32];
	int rc;

	if (c->opset < 6) {
		if ((rc = infer_attr_str(c, "to", s, sizeof(s))) < 0)
			return rc;
		return 1;
	}
	if ((rc = infer_attr_int(c, "to", &to)) < 0)
		return rc;
	if (rc == 1)
		return infer_err(c, "missing required attribute 'to'");
	if (!ir_dtype_get((int)to) || !to)
		return infer_err(c, "attribute 'to' is not a data type: %lld", (long long)to);
	c->out[0].dtype = (int)to;
	if (!x)
		return 0;
	c->out[0].rank = x->rank;
	memcpy(c->out[0].dims, x->dims, sizeof(x->dims));
	if (x->has_const && infer_is_int_dtype((int)to) &&
	    (to == IR_DTYPE_INT64 || to == IR_DTYPE_INT32 || to == x->dtype))
		return infer_vt_set_const(&c->out[0], x->cval, x->n_const);
	return 0;
}

int infer_castlike(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *y = infer_in(c, 1);

	if (y)
		c->out[0].dtype = y->dtype;
	if (x) {
		c->out[0].rank = x->rank;
		memcpy(c->out[0].dims, x->dims, sizeof(x->dims));
	}
	return 0;
}

/* Add, Sub, Mul, Div, Pow, Mod, PRelu, BitShift and the variadic Sum,
 * Mean, Max, Min: the broadcast shape of all inputs, input 0's type. */
int infer_binary(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int pow = !strcmp(c->n->op_type, "Pow");
	int rc;

	for (size_t i = 1; i < c->n_in && !pow; i++)
		if ((rc = infer_same_dtype(c, 0, i)) < 0)
			return rc;
	if (x)
		c->out[0].dtype = x->dtype;
	for (size_t i = 1; !c->out[0].dtype && i < c->n_in; i++)
		if (infer_in(c, i) && !pow)
			c->out[0].dtype = infer_in(c, i)->dtype;
	if ((rc = broadcast_inputs(c, 0, &c->out[0])) < 0)
		return rc;
	return fold(c, fold_of(c->n->op_type), &c->out[0]);
}

int infer_compare(struct infer_ctx *c)
{
	int rc;

	if ((rc = infer_same_dtype(c, 0, 1)) < 0)
		return rc;
	c->out[0].dtype = IR_DTYPE_BOOL;
	if ((rc = broadcast_inputs(c, 0, &c->out[0])) < 0)
		return rc;
	return fold(c, fold_of(c->n->op_type), &c->out[0]);
}

int infer_logical(struct infer_ctx *c)
{
	int rc;

	if ((rc = infer_same_dtype(c, 0, 1)) < 0)
		return rc;
	c->out[0].dtype = IR_DTYPE_BOOL;
	return broadcast_inputs(c, 0, &c->out[0]);
}

int infer_where(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 1);
	int rc;

	if ((rc = infer_same_dtype(c, 1, 2)) < 0)
		return rc;
	if (x)
		c->out[0].dtype = x->dtype;
	else if (infer_in(c, 2))
		c->out[0].dtype = infer_in(c, 2)->dtype;
	if ((rc = broadcast_inputs(c, 0, &c->out[0])) < 0)
		return rc;
	return fold(c, F_WHERE, &c->out[0]);
}

/* Unused name kept for the table's symmetry: variadic ops share binary. */
int infer_variadic(struct infer_ctx *c)
{
	return infer_binary(c);
}
