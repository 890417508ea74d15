/* infer_nn.c: inference of neural-network operators: Conv, MaxPool,
 * AveragePool, LpPool (kernel, strides, pads, dilations, auto_pad,
 * ceil_mode), global pools, BatchNormalization, Gemm, MatMul, Flatten,
 * reductions, ArgMax/ArgMin and LayerNormalization. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer_int.h"

#define MAXK IR_INFER_MAX_RANK

static void copy_shape(struct ir_vtype *dst, const struct ir_vtype *src)
{
	dst->rank = src->rank;
	memcpy(dst->dims, src->dims, sizeof(src->dims));
}

/* One spatial output size of an input of size in, a dilated kernel ek,
 * stride s > 0 and pads pb, pe: 0 and *v, 1 when the kernel is larger
 * than the padded input, -1 when hostile sizes overflow int64. */
static int out_size(int64_t in, int64_t ek, int64_t s, int64_t pb, int64_t pe,
		    const char *autopad, int ceil_mode, int64_t *v)
{
	int64_t span;

	if (!strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER")) {
		*v = in / s + (in % s > 0);  /* ceil(in / s) */
		return 0;
	}
	if (!strcmp(autopad, "VALID")) {
		if (__builtin_sub_overflow(in, ek, &span))
			return -1;
		if (span < 0) {
			*v = 0;
			return 0;
		}
	} else if (__builtin_add_overflow(in, pb, &span) ||
		   __builtin_add_overflow(span, pe, &span) ||
		   __builtin_sub_overflow(span, ek, &span)) {
		return -1;
	} else if (span < 0) {
		return 1;
	}
	/* + 1 overflows for a kernel of size <= 0 */
	return __builtin_add_overflow(span / s + (ceil_mode && span % s), 1, v) ? -1 : 0;
}

/* Spatial output sizes shared by Conv and the pools.  x: the input,
 * spatial dims from 2; k: kernel sizes. */
static int spatial(struct infer_ctx *c, const struct ir_vtype *x,
		   const int64_t *k, int nsp, int ceil_mode, struct ir_vtype *o)
{
	int64_t strides[MAXK], pads[2 * MAXK], dil[MAXK];
	size_t ns = 0, np = 0, nd = 0;
	char autopad[32] = "NOTSET";
	int rc;

	for (int i = 0; i < nsp; i++)
		strides[i] = dil[i] = 1, pads[i] = pads[i + nsp] = 0;
	if ((rc = infer_attr_ints(c, "strides", strides, MAXK, &ns)) < 0 ||
	    (rc = infer_attr_ints(c, "pads", pads, 2 * MAXK, &np)) < 0 ||
	    (rc = infer_attr_ints(c, "dilations", dil, MAXK, &nd)) < 0 ||
	    (rc = infer_attr_str(c, "auto_pad", autopad, sizeof(autopad))) < 0)
		return rc;
	if (rc == 1 || !autopad[0])
		snprintf(autopad, sizeof(autopad), "NOTSET");
	if ((ns && ns != (size_t)nsp) || (nd && nd != (size_t)nsp))
		return infer_err(c, "strides or dilations have %zu values for %d spatial dims",
				 ns ? ns : nd, nsp);
	if (ns == 0)
		for (int i = 0; i < nsp; i++)
			strides[i] = 1;
	if (nd == 0)
		for (int i = 0; i < nsp; i++)
			dil[i] = 1;
	if (np == 0)
		for (int i = 0; i < 2 * nsp; i++)
			pads[i] = 0;
	else if (np != (size_t)(2 * nsp))
		return infer_err(c, "pads has %zu values, %d expected", np, 2 * nsp);
	for (int i = 0; i < nsp; i++) {
		const struct ir_vdim *in = &x->dims[2 + i];
		int64_t ek, v, s = strides[i];

		if (s <= 0 || dil[i] <= 0)
			return infer_err(c, "strides and dilations must be positive");
		/* the dilated kernel (k - 1) * dilation + 1; hostile kernel
		 * sizes, dilations and pads may overflow int64 */
		if (__builtin_sub_overflow(k[i], 1, &ek) ||
		    __builtin_mul_overflow(ek, dil[i], &ek) ||
		    __builtin_add_overflow(ek, 1, &ek))
			return infer_err(c, "spatial axis %d: kernel %lld with dilation %lld overflows",
					 i, (long long)k[i], (long long)dil[i]);
		if (in->kind != IR_VDIM_VALUE) {
			o->dims[2 + i] = infer_dim_unknown();
			continue;
		}
		if (strcmp(autopad, "SAME_UPPER") && strcmp(autopad, "SAME_LOWER") &&
		    strcmp(autopad, "VALID") && strcmp(autopad, "NOTSET"))
			return infer_err(c, "unsupported auto_pad '%s'", autopad);
		rc = out_size(in->value, ek, s, pads[i], pads[i + nsp], autopad,
			      ceil_mode, &v);
		if (rc == 1)  /* out_size added these without overflow */
			return infer_err(c, "kernel %lld is larger than padded input %lld on spatial axis %d",
					 (long long)ek,
					 (long long)(in->value + pads[i] + pads[i + nsp]), i);
		if (rc < 0)
			return infer_err(c, "spatial axis %d: input %lld, pads and kernel %lld overflow",
					 i, (long long)in->value, (long long)ek);
		o->dims[2 + i] = infer_dim_val(v);
	}
	return 0;
}

int infer_conv(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *w = infer_in(c, 1);
	int64_t k[MAXK];
	size_t nk = 0;
	int rc, nsp;

	if (x)
		c->out[0].dtype = x->dtype;
	if ((rc = infer_same_dtype(c, 0, 1)) < 0)
		return rc;
	if (x && x->rank >= 0 && x->rank < 3)
		return infer_err(c, "input rank %d is below 3", x->rank);
	if (x && w && x->rank >= 0 && w->rank >= 0 && w->rank != x->rank)
		return infer_err(c, "weight rank %d does not match input rank %d",
				 w->rank, x->rank);
	if (!x || x->rank < 0)
		return 0;
	nsp = x->rank - 2;
	if ((rc = infer_attr_ints(c, "kernel_shape", k, MAXK, &nk)) < 0)
		return rc;
	if (rc == 1 || nk == 0) {
		if (!w || w->rank < 0)
			return 0;
		for (int i = 0; i < nsp; i++) {
			if (w->dims[2 + i].kind != IR_VDIM_VALUE)
				return 0;
			k[i] = w->dims[2 + i].value;
		}
	} else if (nk != (size_t)nsp) {
		return infer_err(c, "kernel_shape has %zu values for %d spatial dims",
				 nk, nsp);
	}
	c->out[0].rank = x->rank;
	c->out[0].dims[0] = x->dims[0];
	c->out[0].dims[1] = w && w->rank > 0 ? w->dims[0] : infer_dim_unknown();
	return spatial(c, x, k, nsp, 0, &c->out[0]);
}

int infer_pool(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t k[MAXK], ceil_mode = 0;
	size_t nk = 0;
	int rc, nsp;

	if ((rc = infer_attr_ints(c, "kernel_shape", k, MAXK, &nk)) < 0)
		return rc;
	if (rc == 1)
		return infer_err(c, "missing required attribute 'kernel_shape'");
	if ((rc = infer_attr_int(c, "ceil_mode", &ceil_mode)) < 0)
		return rc;
	if (!x)
		return 0;
	c->out[0].dtype = x->dtype;
	if (x->rank >= 0 && x->rank < 3)
		return infer_err(c, "input rank %d is below 3", x->rank);
	if (x->rank < 0)
		return 0;
	nsp = x->rank - 2;
	if (nk != (size_t)nsp)
		return infer_err(c, "kernel_shape has %zu values for %d spatial dims",
				 nk, nsp);
	c->out[0].rank = x->rank;
	c->out[0].dims[0] = x->dims[0];
	c->out[0].dims[1] = x->dims[1];
	if ((rc = spatial(c, x, k, nsp, (int)ceil_mode, &c->out[0])) < 0)
		return rc;
	if (c->n->n_outputs > 1) {
		copy_shape(&c->out[1], &c->out[0]);
		c->out[1].dtype = IR_DTYPE_INT64;
	}
	return 0;
}

int infer_global_pool(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);

	if (!x)
		return 0;
	c->out[0].dtype = x->dtype;
	if (x->rank >= 0 && x->rank < 3)
		return infer_err(c, "input rank %d is below 3", x->rank);
	copy_shape(&c->out[0], x);
	for (int i = 2; i < x->rank; i++)
		c->out[0].dims[i] = infer_dim_val(1);
	return 0;
}

int infer_batchnorm(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);

	if (!x)
		return 0;
	c->out[0].dtype = x->dtype;
	copy_shape(&c->out[0], x);
	for (size_t i = 1; i < c->n->n_outputs; i++) {
		c->out[i].dtype = x->dtype;
		if (x->rank >= 2) {
			c->out[i].rank = 1;
			c->out[i].dims[0] = x->dims[1];
		}
	}
	return 0;
}

static int inner_check(struct infer_ctx *c, const struct ir_vdim *a,
		       const struct ir_vdim *b)
{
	if (a->kind == IR_VDIM_VALUE && b->kind == IR_VDIM_VALUE &&
	    a->value != b->value)
		return infer_err(c, "inner dimensions %lld and %lld do not match",
				 (long long)a->value, (long long)b->value);
	return 0;
}

int infer_gemm(struct infer_ctx *c)
{
	const struct ir_vtype *a = infer_in(c, 0), *b = infer_in(c, 1);
	int64_t ta = 0, tb = 0;
	int rc;

	if ((rc = infer_same_dtype(c, 0, 1)) < 0 ||
	    (rc = infer_attr_int(c, "transA", &ta)) < 0 ||
	    (rc = infer_attr_int(c, "transB", &tb)) < 0)
		return rc;
	if (a)
		c->out[0].dtype = a->dtype;
	if (!a || !b || a->rank < 0 || b->rank < 0)
		return 0;
	if (a->rank != 2 || b->rank != 2)
		return infer_err(c, "inputs must have rank 2, not %d and %d",
				 a->rank, b->rank);
	if ((rc = inner_check(c, &a->dims[ta ? 0 : 1], &b->dims[tb ? 1 : 0])) < 0)
		return rc;
	c->out[0].rank = 2;
	c->out[0].dims[0] = a->dims[ta ? 1 : 0];
	c->out[0].dims[1] = b->dims[tb ? 0 : 1];
	return 0;
}

int infer_matmul(struct infer_ctx *c)
{
	const struct ir_vtype *a = infer_in(c, 0), *b = infer_in(c, 1);
	struct ir_vdim one = infer_dim_val(1), ad[MAXK + 1], bd[MAXK + 1];
	int ra, rb, rc, r;
	struct ir_vtype *o = &c->out[0];

	if ((rc = infer_same_dtype(c, 0, 1)) < 0)
		return rc;
	if (a)
		o->dtype = a->dtype;
	if (!a || !b || a->rank < 0 || b->rank < 0)
		return 0;
	if (a->rank == 0 || b->rank == 0)
		return infer_err(c, "inputs must not be scalars");
	ra = a->rank;
	rb = b->rank;
	memcpy(ad, a->dims, (size_t)ra * sizeof(*ad));
	memcpy(bd, b->dims, (size_t)rb * sizeof(*bd));
	if (ra == 1) {  /* [K] -> [1,K] */
		ad[1] = ad[0];
		ad[0] = one;
		ra = 2;
	}
	if (rb == 1) {  /* [K] -> [K,1] */
		bd[1] = one;
		rb = 2;
	}
	if ((rc = inner_check(c, &ad[ra - 1], &bd[rb - 2])) < 0)
		return rc;
	if ((rc = infer_broadcast2(c, ad, ra - 2, bd, rb - 2, o->dims, &r)) < 0)
		return rc;
	if (a->rank > 1)
		o->dims[r++] = ad[ra - 2];
	if (b->rank > 1)
		o->dims[r++] = bd[rb - 1];
	if (r > MAXK)
		return 0;
	o->rank = r;
	return 0;
}

/* Product of dims [from, to) into *out: a value, a lone symbolic dim, or
 * unknown; an error when the known dims' product overflows int64. */
static int dim_product(struct infer_ctx *c, const struct ir_vtype *x, int from,
		       int to, struct ir_vdim *out)
{
	int64_t p = 1;
	const struct ir_vdim *sym = NULL;

	*out = infer_dim_unknown();
	for (int i = from; i < to; i++) {
		if (x->dims[i].kind == IR_VDIM_VALUE) {
			if (__builtin_mul_overflow(p, x->dims[i].value, &p))
				return infer_err(c, "the product of dims %d to %d overflows",
						 from, to - 1);
		} else if (x->dims[i].kind == IR_VDIM_PARAM && !sym) {
			sym = &x->dims[i];
		} else {
			return 0;  /* unknown, or unknown past a symbol */
		}
	}
	if (sym)
		*out = p == 1 ? *sym : infer_dim_unknown();
	else
		*out = infer_dim_val(p);
	return 0;
}

int infer_flatten(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t axis = 1;
	int rc;

	if ((rc = infer_attr_int(c, "axis", &axis)) < 0)
		return rc;
	if (!x)
		return 0;
	c->out[0].dtype = x->dtype;
	if (x->rank < 0)
		return 0;
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > x->rank)
		return infer_err(c, "axis %lld is out of range for rank %d",
				 (long long)axis, x->rank);
	if ((rc = dim_product(c, x, 0, (int)axis, &c->out[0].dims[0])) < 0 ||
	    (rc = dim_product(c, x, (int)axis, x->rank, &c->out[0].dims[1])) < 0)
		return rc;
	c->out[0].rank = 2;
	return 0;
}

/* Mark the reduced axes of x; returns 1 when axes are unknown. */
static int reduce_axes(struct infer_ctx *c, const struct ir_vtype *x,
		       int *mask, int *all)
{
	int64_t axes[MAXK], nwe = 0;
	size_t n = 0;
	int from_input, rc;

	from_input = (!strcmp(c->n->op_type, "ReduceSum") && c->opset >= 13) ||
		     c->opset >= 18;
	*all = 0;
	if (from_input) {
		if ((rc = infer_attr_int(c, "noop_with_empty_axes", &nwe)) < 0)
			return rc;
		if (infer_has_in(c, 1) &&
		    !infer_vt_const_ints(infer_in(c, 1), axes, MAXK, &n))
			return 1;
	} else if ((rc = infer_attr_ints(c, "axes", axes, MAXK, &n)) < 0) {
		return rc;
	}
	if (n == 0) {
		*all = !nwe;
		for (int i = 0; i < x->rank; i++)
			mask[i] = *all;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t ax;

		if ((rc = infer_norm_axis(c, axes[i], x->rank, &ax)) < 0)
			return rc;
		mask[ax] = 1;
	}
	return 0;
}

static int reduce_shape(struct infer_ctx *c, const struct ir_vtype *x,
			int keepdims, int *mask, struct ir_vtype *o)
{
	int r = 0;

	(void)c;
	for (int i = 0; i < x->rank; i++) {
		if (!mask[i])
			o->dims[r++] = x->dims[i];
		else if (keepdims)
			o->dims[r++] = infer_dim_val(1);
	}
	o->rank = r;
	return 0;
}

int infer_reduce(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t keep = 1;
	int mask[MAXK] = { 0 }, all, rc;

	if ((rc = infer_attr_int(c, "keepdims", &keep)) < 0)
		return rc;
	if (!x)
		return 0;
	c->out[0].dtype = x->dtype;
	if (x->rank < 0)
		return 0;
	if ((rc = reduce_axes(c, x, mask, &all)) < 0)
		return rc;
	if (rc == 1) {  /* axes not constant: rank known only with keepdims */
		if (keep) {
			c->out[0].rank = x->rank;
			for (int i = 0; i < x->rank; i++)
				c->out[0].dims[i] = infer_dim_unknown();
		}
		return 0;
	}
	return reduce_shape(c, x, (int)keep, mask, &c->out[0]);
}

int infer_arg_reduce(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t keep = 1, axis = 0, ax;
	int mask[MAXK] = { 0 }, rc;

	if ((rc = infer_attr_int(c, "keepdims", &keep)) < 0 ||
	    (rc = infer_attr_int(c, "axis", &axis)) < 0)
		return rc;
	c->out[0].dtype = IR_DTYPE_INT64;
	if (!x || x->rank < 0)
		return 0;
	if ((rc = infer_norm_axis(c, axis, x->rank, &ax)) < 0)
		return rc;
	mask[ax] = 1;
	return reduce_shape(c, x, (int)keep, mask, &c->out[0]);
}

/* LayerNormalization (ai.onnx and com.microsoft), SkipLayerNormalization,
 * SkipSimplifiedLayerNormalization, SimplifiedLayerNormalization: Y like X;
 * Mean and InvStdDev keep the dims before axis and 1 after it (the Skip
 * forms: input_skip_bias_sum like X, their statistics left unknown). */
int infer_layernorm(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t axis = -1, ax;
	int rc, skip = !strncmp(c->n->op_type, "Skip", 4);

	if (!skip && (rc = infer_attr_int(c, "axis", &axis)) < 0)
		return rc;
	if (!x)
		return 0;
	c->out[0].dtype = x->dtype;
	copy_shape(&c->out[0], x);
	if (skip) {
		for (size_t i = 1; i < c->n->n_outputs; i++)
			if (i == 3) {
				c->out[i].dtype = x->dtype;
				copy_shape(&c->out[i], x);
			}
		return 0;
	}
	if (x->rank < 0)
		return 0;
	if ((rc = infer_norm_axis(c, axis, x->rank, &ax)) < 0)
		return rc;
	for (size_t i = 1; i < c->n->n_outputs; i++) {
		c->out[i].dtype = IR_DTYPE_FLOAT;
		copy_shape(&c->out[i], x);
		for (int j = (int)ax; j < x->rank; j++)
			c->out[i].dims[j] = infer_dim_val(1);
	}
	return 0;
}
