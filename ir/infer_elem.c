/* infer_elem.c: inference of elementwise operators: unary (same type and
 * shape), Cast, numpy broadcasting for binary/variadic/compare/logical ops
 * and Where, and folding of small integer constants through Add, Sub, Mul,
 * Div, Max, Min, Equal, Less, Greater and Where. */
#include <stdio.h>
#include <math.h>
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

static struct ir_vdim fold1(struct ir_infer *r, enum fold_op f, const struct ir_vdim *x,
			    const struct ir_vdim *y, int *rc)
{
	int64_t a = x->value, b = y->value;
	int xv = x->kind == IR_VDIM_VALUE, yv = y->kind == IR_VDIM_VALUE;

	if (!xv || !yv) {
		struct ir_vdim s;

		/* sums of symbols: N + M, N - M, 2 * N */
		if (f == F_ADD || f == F_SUB || f == F_MUL) {
			*rc = infer_sym_arith(r, f == F_ADD ? INFER_SYM_ADD : f == F_SUB ?
					      INFER_SYM_SUB : INFER_SYM_MUL, x, y, &s);
			if (*rc < 0 || s.kind != IR_VDIM_UNKNOWN)
				return s;
		}
		/* symbolic identities: N*1, N+0, N-0, N/1 */
		if (yv && ((b == 1 && (f == F_MUL || f == F_DIV)) ||
			   (b == 0 && (f == F_ADD || f == F_SUB))))
			return *x;
		if (xv && ((a == 1 && f == F_MUL) || (a == 0 && f == F_ADD)))
			return *y;
		if (f == F_EQ && infer_dim_eq(x, y))
			return infer_dim_val(1);
		/* a dim (a symbol, not a sum: never negative) against a
		 * negative constant: torch's expand compares its sizes with -1 */
		if (f == F_EQ && ((xv && a < 0 && y->kind == IR_VDIM_PARAM &&
				   !infer_sym_is_sum(y->param)) ||
				  (yv && b < 0 && x->kind == IR_VDIM_PARAM &&
				   !infer_sym_is_sum(x->param))))
			return infer_dim_val(0);
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

static double ffold1(enum fold_op f, double a, double b)
{
	switch (f) {
	case F_ADD: return a + b;
	case F_SUB: return a - b;
	case F_MUL: return a * b;
	case F_DIV: return a / b;
	case F_MAX: return a > b ? a : b;
	case F_MIN: return a < b ? a : b;
	case F_EQ: return a == b;
	case F_LT: return a < b;
	case F_GT: return a > b;
	default: return 0;
	}
}

/* Fold float constants: arithmetic gives fval, comparisons a bool cval,
 * Where picks from float branches by an integer condition. */
static int ffold(struct infer_ctx *c, enum fold_op f, struct ir_vtype *t)
{
	const struct ir_vtype *x[3];
	size_t n = f == F_WHERE ? 3 : 2, first = f == F_WHERE ? 1 : 0;
	int64_t numel = infer_vt_numel(t);
	int cmp = f == F_EQ || f == F_LT || f == F_GT;
	double *v;
	int rc;

	if (f == F_NONE || c->n_in != n || numel < 0 || numel > IR_INFER_MAX_CONST)
		return 0;
	for (size_t i = 0; i < n; i++) {
		x[i] = infer_in(c, i);
		if (!x[i] || infer_vt_numel(x[i]) < 0)
			return 0;
		if (i < first ? !x[i]->has_const ||
				infer_vt_numel(x[i]) != (int64_t)x[i]->n_const :
		    !x[i]->has_fconst || infer_vt_numel(x[i]) != (int64_t)x[i]->n_fconst)
			return 0;
	}
	if (!(v = malloc(((size_t)numel + 1) * sizeof(*v))))
		return IR_ENOMEM;
	for (size_t o = 0; o < (size_t)numel; o++) {
		double a = x[first]->fval[bcast_index(t, x[first], o)];
		double b = x[first + 1]->fval[bcast_index(t, x[first + 1], o)];

		if (f == F_WHERE) {
			const struct ir_vdim *k = &x[0]->cval[bcast_index(t, x[0], o)];

			if (k->kind != IR_VDIM_VALUE) {
				free(v);
				return 0;
			}
			v[o] = k->value ? a : b;
		} else {
			v[o] = ffold1(f, a, b);
		}
	}
	if (cmp) {
		struct ir_vdim *k = malloc(((size_t)numel + 1) * sizeof(*k));

		if (!k) {
			free(v);
			return IR_ENOMEM;
		}
		for (size_t o = 0; o < (size_t)numel; o++)
			k[o] = infer_dim_val(v[o] != 0);
		rc = infer_vt_set_const(t, k, (size_t)numel);
		free(k);
	} else {
		rc = infer_vt_set_fconst(t, v, (size_t)numel);
	}
	free(v);
	return rc;
}

/* Fold when every input is a constant of fully known shape. */
static int fold(struct infer_ctx *c, enum fold_op f, struct ir_vtype *t)
{
	const struct ir_vtype *x[3];
	size_t n = f == F_WHERE ? 3 : 2;
	int64_t numel = infer_vt_numel(t);
	struct ir_vdim *v;
	int rc = 0;

	if (f == F_NONE || c->n_in != n || numel < 0 || numel > IR_INFER_MAX_CONST)
		return 0;
	for (size_t i = 0; i < n; i++) {
		x[i] = infer_in(c, i);
		if (x[i] && x[i]->has_fconst)
			return ffold(c, f, t);
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
			v[o] = fold1(c->r, f, a, b, &rc);
			if (rc < 0)
				break;
		}
	}
	if (rc == 0)
		rc = infer_vt_set_const(t, v, (size_t)numel);
	free(v);
	return rc;
}

/* ---- the ops --------------------------------------------------------- */

static double relu(double x)
{
	return x > 0 ? x : 0;
}

/* Elementwise functions folded on constants: float (fval) and, where
 * marked, integer (cval) too. */
static const struct unary_fold {
	const char *op;
	double (*f)(double);
	int ints;
} unary_folds[] = {
	{ "Abs", fabs, 1 }, { "Ceil", ceil, 0 }, { "Cos", cos, 0 },
	{ "Exp", exp, 0 }, { "Floor", floor, 0 }, { "Identity", NULL, 1 },
	{ "Log", log, 0 }, { "Neg", NULL, 1 }, { "Relu", relu, 1 },
	{ "Round", nearbyint, 0 }, { "Sin", sin, 0 }, { "Sqrt", sqrt, 0 },
};

static int fold_unary(struct infer_ctx *c, const struct ir_vtype *x)
{
	const struct unary_fold *u = NULL;
	int neg = !strcmp(c->n->op_type, "Neg");
	int rc = 0;

	for (size_t i = 0; i < sizeof(unary_folds) / sizeof(*unary_folds); i++)
		if (!strcmp(c->n->op_type, unary_folds[i].op))
			u = &unary_folds[i];
	if (!u)
		return 0;
	if (x->has_fconst) {
		double *v = malloc((x->n_fconst + 1) * sizeof(*v));

		if (!v)
			return IR_ENOMEM;
		for (size_t i = 0; i < x->n_fconst; i++)
			v[i] = neg ? -x->fval[i] : u->f ? u->f(x->fval[i]) : x->fval[i];
		rc = infer_vt_set_fconst(&c->out[0], v, x->n_fconst);
		free(v);
	}
	if (x->has_const && u->ints && rc == 0) {
		struct ir_vdim *v = malloc((x->n_const + 1) * sizeof(*v));

		if (!v)
			return IR_ENOMEM;
		for (size_t i = 0; i < x->n_const; i++) {
			v[i] = x->cval[i];
			if (v[i].kind != IR_VDIM_VALUE)
				continue;
			if (neg || (!strcmp(u->op, "Abs") && v[i].value < 0))
				v[i].value = (int64_t)(0 - (uint64_t)v[i].value);
			else if (u->f == relu && v[i].value < 0)
				v[i].value = 0;
		}
		rc = infer_vt_set_const(&c->out[0], v, x->n_const);
		free(v);
	}
	return rc;
}

/* Same dtype and shape as input 0; constants fold through Identity, Neg,
 * Abs and, for floats, a few elementary functions. */
int infer_unary(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);

	if (!x)
		return 0;
	if (x->is_seq)  /* Identity of a sequence */
		return infer_vt_copy(&c->out[0], x);
	c->out[0].dtype = x->dtype;
	c->out[0].rank = x->rank;
	memcpy(c->out[0].dims, x->dims, sizeof(x->dims));
	return fold_unary(c, x);
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

/* Float constants of a cast to float or double (from ints or floats). */
static int cast_to_float(struct ir_vtype *o, const struct ir_vtype *x)
{
	double *v;
	int rc;

	if (x->has_fconst)
		return infer_vt_set_fconst(o, x->fval, x->n_fconst);
	if (!x->has_const || !infer_is_int_dtype(x->dtype))
		return 0;
	if (!(v = malloc((x->n_const + 1) * sizeof(*v))))
		return IR_ENOMEM;
	for (size_t i = 0; i < x->n_const; i++) {
		if (x->cval[i].kind != IR_VDIM_VALUE) {
			free(v);
			return 0;
		}
		v[i] = x->dtype == IR_DTYPE_UINT64 ? (double)(uint64_t)x->cval[i].value :
		       (double)x->cval[i].value;
	}
	rc = infer_vt_set_fconst(o, v, x->n_const);
	free(v);
	return rc;
}

/* Bool constants of an integer constant. */
static int cast_to_bool(struct ir_vtype *o, const struct ir_vtype *x)
{
	struct ir_vdim *v = malloc((x->n_const + 1) * sizeof(*v));
	int rc;

	if (!v)
		return IR_ENOMEM;
	for (size_t i = 0; i < x->n_const; i++)
		v[i] = x->cval[i].kind == IR_VDIM_VALUE ?
		       infer_dim_val(x->cval[i].value != 0) : infer_dim_unknown();
	rc = infer_vt_set_const(o, v, x->n_const);
	free(v);
	return rc;
}

/* Integer constants of a float constant cast to int32/int64 (truncated)
 * or to bool. */
static int cast_to_int(struct ir_vtype *o, const struct ir_vtype *x, int to_bool)
{
	struct ir_vdim *v = malloc((x->n_fconst + 1) * sizeof(*v));
	int rc;

	if (!v)
		return IR_ENOMEM;
	for (size_t i = 0; i < x->n_fconst; i++) {
		double f = x->fval[i];

		if (to_bool) {
			v[i] = infer_dim_val(f != 0);
			continue;
		}
		if (!(f > -9.2e18 && f < 9.2e18)) {
			free(v);
			return 0;
		}
		v[i] = infer_dim_val((int64_t)f);
	}
	rc = infer_vt_set_const(o, v, x->n_fconst);
	free(v);
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
	if (to == IR_DTYPE_FLOAT || to == IR_DTYPE_DOUBLE)
		return cast_to_float(&c->out[0], x);
	if (x->has_fconst && (to == IR_DTYPE_INT64 || to == IR_DTYPE_INT32 ||
			      to == IR_DTYPE_BOOL))
		return cast_to_int(&c->out[0], x, to == IR_DTYPE_BOOL);
	if (x->has_const && to == IR_DTYPE_BOOL)
		return cast_to_bool(&c->out[0], x);
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
