/* infer_shape.c: inference of shape-manipulating operators with constant
 * propagation: Shape, Size, Gather, Unsqueeze, Squeeze, Concat, Reshape,
 * Transpose, Constant, ConstantOfShape, Range, Slice, Split, Expand, Tile,
 * Pad (Resize and Upsample: infer_resize.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer_int.h"

#define MAXR IR_INFER_MAX_RANK

static void copy_shape(struct ir_vtype *dst, const struct ir_vtype *src)
{
	dst->rank = src->rank;
	memcpy(dst->dims, src->dims, sizeof(src->dims));
}

static void set_rank1(struct ir_vtype *o, int dtype, struct ir_vdim n)
{
	o->dtype = dtype;
	o->rank = 1;
	o->dims[0] = n;
}

/* Integer list from an attribute (opset < since) or a constant input. 0
 * found, 1 unknown (input not constant), 2 absent; negative error. */
static int ints_arg(struct infer_ctx *c, const char *attr, int since,
		    size_t input, int64_t *v, size_t cap, size_t *n)
{
	int rc;

	*n = 0;
	if (c->opset < since) {
		rc = infer_attr_ints(c, attr, v, cap, n);
		return rc < 0 ? rc : rc == 1 ? 2 : 0;
	}
	if (!infer_has_in(c, input))
		return 2;
	return infer_vt_const_ints(infer_in(c, input), v, cap, n) ? 0 : 1;
}

int infer_shape(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t start = 0, end = MAXR;
	int rc, r;

	if ((rc = infer_attr_int(c, "start", &start)) < 0 ||
	    (rc = infer_attr_int(c, "end", &end)) < 0)
		return rc;
	if (c->opset < 15) {
		start = 0;
		end = MAXR;
	}
	c->out[0].dtype = IR_DTYPE_INT64;
	c->out[0].rank = 1;
	c->out[0].dims[0] = infer_dim_unknown();
	if (!x || x->rank < 0)
		return 0;
	r = x->rank;
	if (!infer_attr(c, "end") || c->opset < 15)
		end = r;
	start = start < 0 ? start + r : start;
	end = end < 0 ? end + r : end;
	start = start < 0 ? 0 : start > r ? r : start;
	end = end < 0 ? 0 : end > r ? r : end;
	if (end < start)
		end = start;
	c->out[0].dims[0] = infer_dim_val(end - start);
	return infer_vt_set_const(&c->out[0], x->dims + start, (size_t)(end - start));
}

int infer_size(struct infer_ctx *c)
{
	int64_t n = infer_vt_numel(infer_in(c, 0));
	struct ir_vdim v = infer_dim_val(n);

	c->out[0].dtype = IR_DTYPE_INT64;
	c->out[0].rank = 0;
	return n >= 0 ? infer_vt_set_const(&c->out[0], &v, 1) : 0;
}

int infer_gather(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *idx = infer_in(c, 1);
	int64_t axis = 0, ax, dim;
	struct ir_vtype *o = &c->out[0];
	struct ir_vdim *v;
	int rc, r = 0;

	if ((rc = infer_attr_int(c, "axis", &axis)) < 0)
		return rc;
	if (!x)
		return 0;
	o->dtype = x->dtype;
	if (x->rank < 0 || !idx || idx->rank < 0)
		return 0;
	if ((rc = infer_norm_axis(c, axis, x->rank, &ax)) < 0)
		return rc;
	if (x->rank - 1 + idx->rank > MAXR)
		return 0;
	for (int i = 0; i < ax; i++)
		o->dims[r++] = x->dims[i];
	for (int i = 0; i < idx->rank; i++)
		o->dims[r++] = idx->dims[i];
	for (int i = (int)ax + 1; i < x->rank; i++)
		o->dims[r++] = x->dims[i];
	o->rank = r;
	/* fold: 1-D constant data, scalar or 1-D constant indices */
	if (x->rank != 1 || !x->has_const || !idx->has_const || idx->rank > 1 ||
	    x->dims[0].kind != IR_VDIM_VALUE || (size_t)x->dims[0].value != x->n_const)
		return 0;
	dim = x->dims[0].value;
	if (!(v = malloc((idx->n_const + 1) * sizeof(*v))))
		return IR_ENOMEM;
	for (size_t i = 0; i < idx->n_const; i++) {
		int64_t k;

		if (!infer_vt_const_int(idx, i, &k)) {
			free(v);
			return 0;
		}
		if (k < -dim || k >= dim) {
			free(v);
			return infer_err(c, "index %lld is out of range for dim %lld",
					 (long long)k, (long long)dim);
		}
		v[i] = x->cval[k < 0 ? k + dim : k];
	}
	rc = infer_vt_set_const(o, v, idx->n_const);
	free(v);
	return rc;
}

int infer_unsqueeze(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t axes[MAXR];
	size_t n;
	int mark[MAXR] = { 0 }, rc, r, j = 0;
	struct ir_vtype *o = &c->out[0];

	if (x)
		o->dtype = x->dtype;
	if ((rc = ints_arg(c, "axes", 13, 1, axes, MAXR, &n)) < 0)
		return rc;
	if (rc == 2)
		return infer_err(c, "missing required attribute 'axes'");
	if (rc == 1 || !x || x->rank < 0 || x->rank + (int)n > MAXR)
		return 0;
	r = x->rank + (int)n;
	for (size_t i = 0; i < n; i++) {
		int64_t ax;

		if ((rc = infer_norm_axis(c, axes[i], r, &ax)) < 0)
			return rc;
		if (mark[ax])
			return infer_err(c, "axis %lld is repeated", (long long)axes[i]);
		mark[ax] = 1;
	}
	for (int i = 0; i < r; i++)
		o->dims[i] = mark[i] ? infer_dim_val(1) : x->dims[j++];
	o->rank = r;
	return x->has_const ? infer_vt_set_const(o, x->cval, x->n_const) : 0;
}

int infer_squeeze(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t axes[MAXR];
	size_t n;
	int mark[MAXR] = { 0 }, rc, r = 0;
	struct ir_vtype *o = &c->out[0];

	if (x)
		o->dtype = x->dtype;
	if ((rc = ints_arg(c, "axes", 13, 1, axes, MAXR, &n)) < 0)
		return rc;
	if (rc == 1 || !x || x->rank < 0)
		return 0;
	if (n == 0) {
		for (int i = 0; i < x->rank; i++) {
			if (x->dims[i].kind != IR_VDIM_VALUE)
				return 0;
			mark[i] = x->dims[i].value == 1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int64_t ax;

		if ((rc = infer_norm_axis(c, axes[i], x->rank, &ax)) < 0)
			return rc;
		if (x->dims[ax].kind == IR_VDIM_VALUE && x->dims[ax].value != 1)
			return infer_err(c, "cannot squeeze axis %lld of size %lld",
					 (long long)axes[i], (long long)x->dims[ax].value);
		mark[ax] = 1;
	}
	for (int i = 0; i < x->rank; i++)
		if (!mark[i])
			o->dims[r++] = x->dims[i];
	o->rank = r;
	return x->has_const ? infer_vt_set_const(o, x->cval, x->n_const) : 0;
}

int infer_concat(struct infer_ctx *c)
{
	const struct ir_vtype *x0 = infer_in(c, 0);
	struct ir_vtype *o = &c->out[0];
	int64_t axis, ax;
	struct ir_vdim sum = infer_dim_val(0), *v = NULL;
	size_t nv = 0;
	int rc, can_fold = 1;

	if ((rc = infer_attr_int(c, "axis", &axis)) < 0)
		return rc;
	if (rc == 1)
		return infer_err(c, "missing required attribute 'axis'");
	for (size_t i = 1; i < c->n_in; i++)
		if ((rc = infer_same_dtype(c, 0, i)) < 0)
			return rc;
	for (size_t i = 0; i < c->n_in && !o->dtype; i++)
		if (infer_in(c, i))
			o->dtype = infer_in(c, i)->dtype;
	for (size_t i = 0; i < c->n_in; i++)
		if (!infer_in(c, i) || infer_in(c, i)->rank < 0)
			return 0;
	if (!x0 || x0->rank == 0)
		return x0 ? infer_err(c, "inputs must not be scalars") : 0;
	if ((rc = infer_norm_axis(c, axis, x0->rank, &ax)) < 0)
		return rc;
	copy_shape(o, x0);
	for (size_t i = 0; i < c->n_in; i++) {
		const struct ir_vtype *x = infer_in(c, i);

		if (x->rank != x0->rank)
			return infer_err(c, "inputs have different ranks %d and %d",
					 x0->rank, x->rank);
		for (int j = 0; j < x->rank; j++) {
			if (j == ax)
				continue;
			if (x->dims[j].kind == IR_VDIM_VALUE &&
			    o->dims[j].kind == IR_VDIM_VALUE &&
			    x->dims[j].value != o->dims[j].value)
				return infer_err(c, "inputs differ in dim %d: %lld and %lld", j,
						 (long long)o->dims[j].value,
						 (long long)x->dims[j].value);
			if (o->dims[j].kind != IR_VDIM_VALUE && x->dims[j].kind == IR_VDIM_VALUE)
				o->dims[j] = x->dims[j];
		}
		if (sum.kind == IR_VDIM_VALUE && x->dims[ax].kind == IR_VDIM_VALUE) {
			if (__builtin_add_overflow(sum.value, x->dims[ax].value, &sum.value))
				return infer_err(c, "axis %lld: the inputs' dims overflow",
						 (long long)ax);
		} else if (x0->rank == 1 && c->n_in == 1) {
			sum = x->dims[ax];
		} else {   /* past + seq as a sum of symbols, or unknown */
			struct ir_vdim s = sum;

			if ((rc = infer_sym_arith(c->r, INFER_SYM_ADD, &s, &x->dims[ax], &sum)) < 0)
				return rc;
		}
		if (!x->has_const || x->rank != 1)
			can_fold = 0;
		else
			nv += x->n_const;
	}
	o->dims[ax] = sum;
	if (!can_fold || nv > IR_INFER_MAX_CONST)
		return 0;
	if (!(v = malloc((nv + 1) * sizeof(*v))))
		return IR_ENOMEM;
	nv = 0;
	for (size_t i = 0; i < c->n_in; i++) {
		memcpy(v + nv, infer_in(c, i)->cval, infer_in(c, i)->n_const * sizeof(*v));
		nv += infer_in(c, i)->n_const;
	}
	o->dims[0] = infer_dim_val((int64_t)nv);
	rc = infer_vt_set_const(o, v, nv);
	free(v);
	return rc;
}

/* Solve a -1 in Reshape: the input's product divided by the known output
 * dims, cancelling symbolic dims that appear on both sides. */
static struct ir_vdim reshape_solve(const struct ir_vtype *x,
				    const struct ir_vdim *out, int r, int neg)
{
	const char *psyms[MAXR];
	int np = 0, used[MAXR] = { 0 };
	int64_t pin = 1, pout = 1;

	for (int i = 0; i < x->rank; i++) {
		if (x->dims[i].kind == IR_VDIM_VALUE) {
			/* Hostile dims may overflow: then the -1 stays unknown. */
			if (__builtin_mul_overflow(pin, x->dims[i].value, &pin))
				return infer_dim_unknown();
		} else if (x->dims[i].kind == IR_VDIM_PARAM)
			psyms[np++] = x->dims[i].param;
		else
			return infer_dim_unknown();
	}
	for (int i = 0; i < r; i++) {
		int found = 0;

		if (i == neg)
			continue;
		if (out[i].kind == IR_VDIM_VALUE) {
			if (__builtin_mul_overflow(pout, out[i].value, &pout))
				return infer_dim_unknown();
			continue;
		}
		if (out[i].kind != IR_VDIM_PARAM)
			return infer_dim_unknown();
		for (int j = 0; j < np && !found; j++)
			if (!used[j] && !strcmp(psyms[j], out[i].param))
				used[j] = found = 1;
		if (!found)
			return infer_dim_unknown();
	}
	if (pin < 0 || pout <= 0 || pin % pout)
		return infer_dim_unknown();
	for (int j = 0; j < np; j++)
		if (!used[j]) {
			struct ir_vdim d = { IR_VDIM_PARAM, 0, psyms[j] };

			for (int k = j + 1; k < np; k++)
				if (!used[k])
					return infer_dim_unknown();
			return pin / pout == 1 ? d : infer_dim_unknown();
		}
	return infer_dim_val(pin / pout);
}

int infer_reshape(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *s;
	struct ir_vtype *o = &c->out[0];
	struct ir_vdim shape[MAXR];
	int64_t allowzero = 0, tmp[MAXR];
	size_t n = 0;
	int rc, neg = -1;

	if (x)
		o->dtype = x->dtype;
	if (c->opset < 5) {
		if ((rc = infer_attr_ints(c, "shape", tmp, MAXR, &n)) < 0)
			return rc;
		for (size_t i = 0; i < n; i++)
			shape[i] = infer_dim_val(tmp[i]);
	} else {
		s = infer_in(c, 1);
		if ((rc = infer_attr_int(c, "allowzero", &allowzero)) < 0)
			return rc;
		if (!s || !s->has_const || s->n_const > MAXR) {
			if (s && s->rank == 1 && s->dims[0].kind == IR_VDIM_VALUE &&
			    s->dims[0].value >= 0 && s->dims[0].value <= MAXR) {
				o->rank = (int)s->dims[0].value;
				for (int i = 0; i < o->rank; i++)
					o->dims[i] = infer_dim_unknown();
			}
			return 0;
		}
		n = s->n_const;
		memcpy(shape, s->cval, n * sizeof(*shape));
	}
	for (size_t i = 0; i < n; i++) {
		if (shape[i].kind != IR_VDIM_VALUE)
			continue;
		if (shape[i].value == -1) {
			if (neg >= 0)
				return infer_err(c, "shape has more than one -1");
			neg = (int)i;
		} else if (shape[i].value == 0 && !allowzero) {
			if (!x || x->rank < 0)
				shape[i] = infer_dim_unknown();
			else if ((int)i >= x->rank)
				return infer_err(c, "shape[%zu] is 0 but the input has rank %d",
						 i, x->rank);
			else
				shape[i] = x->dims[i];
		} else if (shape[i].value < -1) {
			return infer_err(c, "shape[%zu] is %lld", i, (long long)shape[i].value);
		}
	}
	if (neg >= 0)
		shape[neg] = x && x->rank >= 0 ? reshape_solve(x, shape, (int)n, neg) :
			     infer_dim_unknown();
	o->rank = (int)n;
	memcpy(o->dims, shape, n * sizeof(*shape));
	if (x && x->has_const)
		return infer_vt_set_const(o, x->cval, x->n_const);
	return 0;
}

int infer_transpose(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t perm[MAXR];
	size_t n = 0;
	int rc, seen[MAXR] = { 0 };

	if (x)
		c->out[0].dtype = x->dtype;
	if ((rc = infer_attr_ints(c, "perm", perm, MAXR, &n)) < 0)
		return rc;
	if (!x || x->rank < 0)
		return 0;
	if (n == 0)
		for (int i = 0; i < x->rank; i++)
			perm[i] = x->rank - 1 - i;
	else if (n != (size_t)x->rank)
		return infer_err(c, "perm has %zu values for rank %d", n, x->rank);
	for (int i = 0; i < x->rank; i++) {
		if (perm[i] < 0 || perm[i] >= x->rank || seen[perm[i]]++)
			return infer_err(c, "perm is not a permutation of 0..%d", x->rank - 1);
		c->out[0].dims[i] = x->dims[perm[i]];
	}
	c->out[0].rank = x->rank;
	return 0;
}

int infer_constant(struct infer_ctx *c)
{
	const struct ir_attr *a = c->n->n_attrs ? c->n->attrs[0] : NULL;
	struct ir_vtype *o = &c->out[0];
	struct ir_vdim *v;
	const char *name;
	int rc;

	if (!a)
		return infer_err(c, "missing required attribute 'value'");
	name = ir_s(a->name);
	if (!strcmp(name, "value") && a->t) {
		struct ir_vtype t;

		if ((rc = infer_tensor_vtype(a->t, &t, c->d)) < 0)
			return rc;
		infer_vt_release(o);
		*o = t;
		return 0;
	}
	if (!strcmp(name, "sparse_value") && a->sparse) {
		o->dtype = a->sparse->values ? a->sparse->values->dtype : 0;
		if (a->sparse->n_dims <= MAXR) {
			o->rank = (int)a->sparse->n_dims;
			for (size_t i = 0; i < a->sparse->n_dims; i++)
				o->dims[i] = infer_dim_val(a->sparse->dims[i]);
		}
		return 0;
	}
	if (!strcmp(name, "value_int")) {
		struct ir_vdim d = infer_dim_val(a->i);

		o->dtype = IR_DTYPE_INT64;
		o->rank = 0;
		return infer_vt_set_const(o, &d, 1);
	}
	if (!strcmp(name, "value_ints")) {
		set_rank1(o, IR_DTYPE_INT64, infer_dim_val((int64_t)a->n_ints));
		if (!(v = malloc((a->n_ints + 1) * sizeof(*v))))
			return IR_ENOMEM;
		for (size_t i = 0; i < a->n_ints; i++)
			v[i] = infer_dim_val(a->ints[i]);
		rc = infer_vt_set_const(o, v, a->n_ints);
		free(v);
		return rc;
	}
	if (!strcmp(name, "value_float") || !strcmp(name, "value_string")) {
		o->dtype = name[6] == 'f' ? IR_DTYPE_FLOAT : IR_DTYPE_STRING;
		o->rank = 0;
		return 0;
	}
	if (!strcmp(name, "value_floats")) {
		set_rank1(o, IR_DTYPE_FLOAT, infer_dim_val((int64_t)a->n_floats));
		return 0;
	}
	if (!strcmp(name, "value_strings")) {
		set_rank1(o, IR_DTYPE_STRING, infer_dim_val((int64_t)a->n_strings));
		return 0;
	}
	return infer_err(c, "unsupported attribute '%s'", name);
}

int infer_constant_of_shape(struct infer_ctx *c)
{
	const struct ir_vtype *s = infer_in(c, 0);
	const struct ir_attr *a = infer_attr(c, "value");
	struct ir_vtype *o = &c->out[0], val;
	struct ir_vdim *v;
	int64_t numel;
	int rc;

	o->dtype = IR_DTYPE_FLOAT;
	infer_vt_unknown(&val);
	if (a && a->t) {
		if ((rc = infer_tensor_vtype(a->t, &val, c->d)) < 0)
			return rc;
		o->dtype = val.dtype;
	}
	if (s && s->has_const && s->n_const <= MAXR) {
		o->rank = (int)s->n_const;
		memcpy(o->dims, s->cval, s->n_const * sizeof(*s->cval));
	} else if (s && s->rank == 1 && s->dims[0].kind == IR_VDIM_VALUE &&
		   s->dims[0].value >= 0 && s->dims[0].value <= MAXR) {
		o->rank = (int)s->dims[0].value;
		for (int i = 0; i < o->rank; i++)
			o->dims[i] = infer_dim_unknown();
	}
	numel = infer_vt_numel(o);
	rc = 0;
	if (numel >= 0 && numel <= IR_INFER_MAX_CONST &&
	    (!a || (val.has_const && val.n_const == 1))) {
		if (!(v = malloc(((size_t)numel + 1) * sizeof(*v)))) {
			rc = IR_ENOMEM;
			goto cleanup;
		}
		for (int64_t i = 0; i < numel; i++)
			v[i] = a ? val.cval[0] : infer_dim_val(0);
		if (a)
			rc = infer_vt_set_const(o, v, (size_t)numel);
		free(v);
	}
cleanup:
	infer_vt_release(&val);
	return rc;
}

int infer_range(struct infer_ctx *c)
{
	const struct ir_vtype *st = infer_in(c, 0);
	int64_t a, b, d, n;
	struct ir_vdim *v;
	int rc;

	for (size_t i = 1; i < 3; i++)
		if ((rc = infer_same_dtype(c, 0, i)) < 0)
			return rc;
	set_rank1(&c->out[0], st ? st->dtype : 0, infer_dim_unknown());
	if (!infer_vt_const_int(infer_in(c, 0), 0, &a) ||
	    !infer_vt_const_int(infer_in(c, 1), 0, &b) ||
	    !infer_vt_const_int(infer_in(c, 2), 0, &d)) {
		const struct ir_vtype *lt = infer_in(c, 1), *dt = infer_in(c, 2);
		double f[3];
		size_t nf;

		/* Range(start, limit, 1) over shape elements: limit - start
		 * elements where that is a sum of symbols known >= 0 */
		if (st && lt && st->has_const && st->n_const == 1 && lt->has_const &&
		    lt->n_const == 1 && infer_vt_const_int(dt, 0, &d) && d == 1)
			return infer_sym_range_len(c->r, &st->cval[0], &lt->cval[0],
						   &c->out[0].dims[0]);
		for (int i = 0; i < 3; i++)
			if (infer_value_floats(c, (size_t)i, &f[i], 1, &nf) != 1)
				return 0;
		if (f[2] != 0) {
			double q = fmax(ceil((f[1] - f[0]) / f[2]), 0);

			if (!(q < 9.2e18))
				return infer_err(c, "range of %g elements is too large", q);
			c->out[0].dims[0] = infer_dim_val((int64_t)q);
		}
		return 0;
	}
	if (d == 0)
		return infer_err(c, "delta is zero");
	if (__builtin_sub_overflow(b, a, &n) || (n == INT64_MIN && d == -1))
		return infer_err(c, "range from %lld to %lld overflows",
				 (long long)a, (long long)b);
	n = n / d + (n % d != 0 && (n > 0) == (d > 0));
	if (n < 0)
		n = 0;
	c->out[0].dims[0] = infer_dim_val(n);
	if (n > IR_INFER_MAX_CONST)
		return 0;
	if (!(v = malloc(((size_t)n + 1) * sizeof(*v))))
		return IR_ENOMEM;
	for (int64_t i = 0; i < n; i++)
		v[i] = infer_dim_val(a + i * d);
	rc = infer_vt_set_const(&c->out[0], v, (size_t)n);
	free(v);
	return rc;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Elements a slice of a dim >= 0 keeps, with its clamped first index in
 * *b; starts, ends and steps may be any int64 (no overflow). */
static int64_t slice_len(int64_t dim, int64_t start, int64_t end, int64_t step,
			 int64_t *b)
{
	int64_t e;

	*b = start < 0 ? start + dim : start;
	e = end < 0 ? end + dim : end;
	if (step > 0) {
		*b = clamp(*b, 0, dim);
		e = clamp(e, 0, dim);
		return e > *b ? (e - *b - 1) / step + 1 : 0;
	}
	if (dim == 0)
		return 0;
	*b = clamp(*b, 0, dim - 1);
	e = clamp(e, -1, dim - 1);
	/* |step| as unsigned: step may be INT64_MIN */
	return *b > e ? (int64_t)((uint64_t)(*b - e - 1) / (0 - (uint64_t)step)) + 1 : 0;
}

/* Slice with constant starts, axes and steps whose ends are shape
 * elements, some symbolic (x[..., :n] with n a dim, as torch writes it):
 * an axis sliced from 0 by 1 to its own dim keeps it, any other axis with
 * a symbolic end becomes unknown; o holds x's shape */
static int slice_sym_ends(struct infer_ctx *c, const struct ir_vtype *x, const int64_t *st,
			  size_t ns, const int64_t *ax, int has_ax, const int64_t *sp, int has_sp)
{
	const struct ir_vtype *e = infer_in(c, 2);
	struct ir_vtype *o = &c->out[0];
	int64_t a, b, step;
	int rc;

	if (!e || !e->has_const || e->n_const != ns) {
		for (int i = 0; i < x->rank; i++)
			o->dims[i] = infer_dim_unknown();
		return 0;
	}
	for (size_t i = 0; i < ns; i++) {
		const struct ir_vdim *end = &e->cval[i], *d;

		step = has_sp ? sp[i] : 1;
		if ((rc = infer_norm_axis(c, has_ax ? ax[i] : (int64_t)i, x->rank, &a)) < 0)
			return rc;
		if (step == 0)
			return infer_err(c, "step is zero");
		d = &x->dims[a];
		if (end->kind == IR_VDIM_VALUE && d->kind == IR_VDIM_VALUE && d->value >= 0)
			o->dims[a] = infer_dim_val(slice_len(d->value, st[i], end->value, step, &b));
		else if (!(st[i] == 0 && step == 1 &&
			   (infer_dim_eq(end, d) || (end->kind == IR_VDIM_VALUE &&
						     end->value >= INT32_MAX))))
			o->dims[a] = infer_dim_unknown();
	}
	return 0;
}

int infer_slice(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t st[MAXR], en[MAXR], ax[MAXR], sp[MAXR], s0 = 0, p0 = 1;
	size_t ns, ne, na, np;
	struct ir_vtype *o = &c->out[0];
	int rc, r1, r2, r3, r4;

	if (x)
		o->dtype = x->dtype;
	r1 = ints_arg(c, "starts", 10, 1, st, MAXR, &ns);
	r2 = ints_arg(c, "ends", 10, 2, en, MAXR, &ne);
	r3 = ints_arg(c, "axes", 10, 3, ax, MAXR, &na);
	r4 = c->opset < 10 ? 2 : ints_arg(c, "steps", 10, 4, sp, MAXR, &np);
	if (r1 < 0 || r2 < 0 || r3 < 0 || r4 < 0)
		return r1 < 0 ? r1 : r2 < 0 ? r2 : r3 < 0 ? r3 : r4;
	if (!x || x->rank < 0)
		return 0;
	copy_shape(o, x);
	if (r2 == 1 && !r1 && r3 != 1 && r4 != 1 && (r3 == 2 || na == ns) &&
	    (r4 == 2 || np == ns))
		return slice_sym_ends(c, x, st, ns, ax, r3 == 0, sp, r4 == 0);
	if (r1 || r2 || r3 == 1 || r4 == 1) {
		if (r1 == 1 || r2 == 1 || r3 == 1 || r4 == 1) {
			for (int i = 0; i < x->rank; i++)
				o->dims[i] = infer_dim_unknown();
			return 0;
		}
		return infer_err(c, "missing starts or ends");
	}
	if (ne != ns || (r3 == 0 && na != ns) || (r4 == 0 && np != ns))
		return infer_err(c, "starts, ends, axes and steps differ in length");
	for (size_t i = 0; i < ns; i++) {
		int64_t a = r3 == 0 ? ax[i] : (int64_t)i, step = r4 == 0 ? sp[i] : 1;
		int64_t b, len;

		if ((rc = infer_norm_axis(c, a, x->rank, &a)) < 0)
			return rc;
		if (step == 0)
			return infer_err(c, "step is zero");
		if (x->dims[a].kind != IR_VDIM_VALUE || x->dims[a].value < 0) {
			if (!(st[i] == 0 && en[i] >= INT32_MAX && step == 1))
				o->dims[a] = infer_dim_unknown();
			continue;
		}
		len = slice_len(x->dims[a].value, st[i], en[i], step, &b);
		o->dims[a] = infer_dim_val(len);
		if (a == 0)
			s0 = b, p0 = step;
	}
	if (x->rank == 1 && x->has_const && x->dims[0].kind == IR_VDIM_VALUE &&
	    (size_t)x->dims[0].value == x->n_const && o->dims[0].kind == IR_VDIM_VALUE) {
		struct ir_vdim *v = malloc(((size_t)o->dims[0].value + 1) * sizeof(*v));

		if (!v)
			return IR_ENOMEM;
		if (ns == 0)
			s0 = 0, p0 = 1;
		for (int64_t i = 0; i < o->dims[0].value; i++)
			v[i] = x->cval[s0 + i * p0];
		rc = infer_vt_set_const(o, v, (size_t)o->dims[0].value);
		free(v);
		return rc;
	}
	return 0;
}

int infer_split(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t axis = 0, ax, sizes[64];
	size_t n = 0, nout = c->n->n_outputs;
	int rc, known;

	if ((rc = infer_attr_int(c, "axis", &axis)) < 0)
		return rc;
	if (c->opset < 13 && c->opset >= 2) {
		if ((rc = infer_attr_ints(c, "split", sizes, 64, &n)) == 1)
			rc = 2;
	}
	else if (infer_has_in(c, 1))
		rc = infer_vt_const_ints(infer_in(c, 1), sizes, 64, &n) ? 0 : 1;
	else
		rc = 2;
	if (rc < 0)
		return rc;
	known = rc != 1;
	for (size_t i = 0; i < nout; i++) {
		c->out[i].dtype = x ? x->dtype : 0;
		if (x && x->rank >= 0) {
			copy_shape(&c->out[i], x);
		}
	}
	if (!x || x->rank < 0)
		return 0;
	if ((rc = infer_norm_axis(c, axis, x->rank, &ax)) < 0)
		return rc;
	if (n && n != nout)
		return infer_err(c, "split has %zu values for %zu outputs", n, nout);
	for (size_t i = 0; i < nout; i++) {
		struct ir_vdim d = infer_dim_unknown();
		const struct ir_vdim *in = &x->dims[ax];

		if (!known)
			d = infer_dim_unknown();
		else if (n)
			d = infer_dim_val(sizes[i]);
		else if (in->kind == IR_VDIM_VALUE && in->value >= 0) {
			/* ceil(value / nout) without overflowing near INT64_MAX */
			int64_t per = in->value / (int64_t)nout +
				      (in->value % (int64_t)nout != 0);
			int64_t left = in->value - per * (int64_t)i;

			d = infer_dim_val(left < per ? (left < 0 ? 0 : left) : per);
		}
		c->out[i].dims[ax] = d;
	}
	return 0;
}

int infer_expand(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *s = infer_in(c, 1);
	struct ir_vtype *o = &c->out[0];

	if (x)
		o->dtype = x->dtype;
	if (!x || x->rank < 0 || !s)
		return 0;
	if (!s->has_const || s->n_const > MAXR) {
		if (s->rank == 1 && s->dims[0].kind == IR_VDIM_VALUE &&
		    s->dims[0].value <= MAXR && s->dims[0].value >= x->rank) {
			o->rank = (int)s->dims[0].value;
			for (int i = 0; i < o->rank; i++)
				o->dims[i] = infer_dim_unknown();
		}
		return 0;
	}
	return infer_broadcast2(c, x->dims, x->rank, s->cval, (int)s->n_const,
				o->dims, &o->rank);
}

int infer_tile(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t rep[MAXR];
	size_t n;
	struct ir_vtype *o = &c->out[0];

	if (x)
		o->dtype = x->dtype;
	if (!x || x->rank < 0)
		return 0;
	copy_shape(o, x);
	if (!infer_vt_const_ints(infer_in(c, 1), rep, MAXR, &n)) {
		for (int i = 0; i < x->rank; i++)
			o->dims[i] = infer_dim_unknown();
		return 0;
	}
	if (n != (size_t)x->rank)
		return infer_err(c, "repeats has %zu values for rank %d", n, x->rank);
	for (int i = 0; i < x->rank; i++) {
		int64_t v;

		if (x->dims[i].kind == IR_VDIM_VALUE) {
			if (__builtin_mul_overflow(x->dims[i].value, rep[i], &v))
				return infer_err(c, "dim %d: %lld repeated %lld times overflows",
						 i, (long long)x->dims[i].value, (long long)rep[i]);
			o->dims[i] = infer_dim_val(v);
		} else if (rep[i] != 1) {
			o->dims[i] = infer_dim_unknown();
		}
	}
	return 0;
}

int infer_pad(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t pads[2 * MAXR], axes[MAXR];
	size_t n = 0, na = 0;
	struct ir_vtype *o = &c->out[0];
	int rc;

	if (x)
		o->dtype = x->dtype;
	if (!x || x->rank < 0)
		return 0;
	copy_shape(o, x);
	rc = ints_arg(c, c->opset < 2 ? "paddings" : "pads", 11, 1, pads, 2 * MAXR, &n);
	if (rc < 0)
		return rc;
	if (rc) {
		for (int i = 0; i < x->rank; i++)
			o->dims[i] = infer_dim_unknown();
		return rc == 2 ? infer_err(c, "missing pads") : 0;
	}
	if (infer_has_in(c, 3) && c->opset >= 18) {
		if (!infer_vt_const_ints(infer_in(c, 3), axes, MAXR, &na)) {
			for (int i = 0; i < x->rank; i++)
				o->dims[i] = infer_dim_unknown();
			return 0;
		}
	} else {
		na = (size_t)x->rank;
		for (int i = 0; i < x->rank; i++)
			axes[i] = i;
	}
	if (n != 2 * na)
		return infer_err(c, "pads has %zu values, %zu expected", n, 2 * na);
	for (size_t i = 0; i < na; i++) {
		int64_t a;

		if ((rc = infer_norm_axis(c, axes[i], x->rank, &a)) < 0)
			return rc;
		if (x->dims[a].kind == IR_VDIM_VALUE) {
			int64_t v;

			if (__builtin_add_overflow(x->dims[a].value, pads[i], &v) ||
			    __builtin_add_overflow(v, pads[i + na], &v))
				return infer_err(c, "axis %lld: pads overflow the dim", (long long)a);
			o->dims[a] = infer_dim_val(v);
		} else if (pads[i] || pads[i + na]) {
			o->dims[a] = infer_dim_unknown();
		}
	}
	return 0;
}
