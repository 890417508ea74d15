/* infer_misc.c: inference of assorted operators: quantization (Quantize,
 * Dequantize, DynamicQuantize, *Integer, QLinear*), TopK, NonZero, Unique,
 * Compress, NonMaxSuppression, Gather{Elements,ND}, DepthToSpace, OneHot,
 * ConvTranspose, losses, RNN/GRU/LSTM, windows, MaxUnpool, Einsum, Det,
 * GridSample, RoiAlign and com.microsoft attention, FusedMatMul and
 * MatMulNBits. */
#include <stdio.h>
#include <string.h>

#include "ir/infer_int.h"

static void like(struct ir_vtype *o, const struct ir_vtype *x)
{
	o->rank = x->rank;
	memcpy(o->dims, x->dims, sizeof(x->dims));
}

int infer_quantize(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *zp = infer_in(c, 2);
	int64_t odt = 0;
	int rc;

	if (c->opset >= 21 && (rc = infer_attr_int(c, "output_dtype", &odt)) < 0)
		return rc;
	c->out[0].dtype = zp && zp->dtype ? zp->dtype : odt ? (int)odt : IR_DTYPE_UINT8;
	if (x)
		like(&c->out[0], x);
	return 0;
}

int infer_dequantize(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *sc = infer_in(c, 1);

	c->out[0].dtype = c->opset >= 19 && sc && sc->dtype ? sc->dtype : IR_DTYPE_FLOAT;
	if (x)
		like(&c->out[0], x);
	return 0;
}

int infer_topk(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t axis = -1, ax, k = -1;
	int rc;

	if ((rc = infer_attr_int(c, "axis", &axis)) < 0)
		return rc;
	if (c->opset < 10) {
		if ((rc = infer_attr_int(c, "k", &k)) < 0)
			return rc;
	} else if (!infer_vt_const_int(infer_in(c, 1), 0, &k)) {
		k = -1;
	}
	c->out[0].dtype = x ? x->dtype : 0;
	if (c->n->n_outputs > 1)
		c->out[1].dtype = IR_DTYPE_INT64;
	if (!x || x->rank < 0)
		return 0;
	if ((rc = infer_norm_axis(c, axis, x->rank, &ax)) < 0)
		return rc;
	for (size_t i = 0; i < c->n->n_outputs && i < 2; i++) {
		like(&c->out[i], x);
		c->out[i].dims[ax] = k >= 0 ? infer_dim_val(k) : infer_dim_unknown();
	}
	return 0;
}

int infer_gather_elements(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *idx = infer_in(c, 1);

	if (x)
		c->out[0].dtype = x->dtype;
	if (idx)
		like(&c->out[0], idx);
	return 0;
}

/* DepthToSpace and SpaceToDepth on NCHW. */
int infer_depth_space(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int to_space = !strcmp(c->n->op_type, "DepthToSpace");
	int64_t b = 0, bb;
	struct ir_vtype *o = &c->out[0];
	int rc;

	if ((rc = infer_attr_int(c, "blocksize", &b)) < 0)
		return rc;
	if (rc == 1 || b <= 0)
		return infer_err(c, "attribute 'blocksize' must be positive");
	if (!x)
		return 0;
	o->dtype = x->dtype;
	if (x->rank < 0)
		return 0;
	if (x->rank != 4)
		return infer_err(c, "input rank %d is not 4", x->rank);
	like(o, x);
	if (__builtin_mul_overflow(b, b, &bb))
		return infer_err(c, "blocksize %lld squared overflows", (long long)b);
	for (int i = 1; i < 4; i++) {
		const struct ir_vdim *d = &x->dims[i];
		int64_t k = i == 1 ? bb : b, v;

		if (d->kind != IR_VDIM_VALUE) {
			o->dims[i] = infer_dim_unknown();
			continue;
		}
		/* channels shrink by b * b and H, W grow by b, or the reverse */
		if ((i == 1) == to_space)
			v = d->value / k;
		else if (__builtin_mul_overflow(d->value, k, &v))
			return infer_err(c, "dim %d: %lld times %lld overflows", i,
					 (long long)d->value, (long long)k);
		o->dims[i] = infer_dim_val(v);
	}
	return 0;
}

int infer_onehot(struct infer_ctx *c)
{
	const struct ir_vtype *idx = infer_in(c, 0), *val = infer_in(c, 2);
	int64_t axis = -1, ax, depth = -1;
	struct ir_vtype *o = &c->out[0];
	double fdepth;
	size_t nf;
	int rc, r = 0;

	if ((rc = infer_attr_int(c, "axis", &axis)) < 0)
		return rc;
	if (val)
		o->dtype = val->dtype;
	if (!idx || idx->rank < 0 || idx->rank + 1 > IR_INFER_MAX_RANK)
		return 0;
	if ((rc = infer_norm_axis(c, axis, idx->rank + 1, &ax)) < 0)
		return rc;
	if (infer_value_floats(c, 1, &fdepth, 1, &nf) == 1 &&
	    fdepth >= 0 && fdepth < 9.2e18)
		depth = (int64_t)fdepth;
	for (int i = 0; i <= idx->rank; i++)
		if (i == ax)
			o->dims[i] = depth >= 0 ? infer_dim_val(depth) :
				     infer_dim_unknown();
		else
			o->dims[i] = idx->dims[r++];
	o->rank = idx->rank + 1;
	return 0;
}

/* stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pads
 * into *v; -1 when hostile values overflow int64. */
static int convt_size(int64_t in, int64_t s, int64_t op, int64_t k, int64_t d,
		      int64_t pb, int64_t pe, int64_t *v)
{
	int64_t a, b;

	if (__builtin_sub_overflow(in, 1, &a) || __builtin_mul_overflow(a, s, &a) ||
	    __builtin_add_overflow(a, op, &a) ||
	    __builtin_sub_overflow(k, 1, &b) || __builtin_mul_overflow(b, d, &b) ||
	    __builtin_add_overflow(a, b, &a) || __builtin_add_overflow(a, 1, &a) ||
	    __builtin_sub_overflow(a, pb, &a) || __builtin_sub_overflow(a, pe, v))
		return -1;
	return 0;
}

/* ConvTranspose: explicit output_shape, or
 * stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pads. */
int infer_conv_transpose(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *w = infer_in(c, 1);
	int64_t st[IR_INFER_MAX_RANK], pads[2 * IR_INFER_MAX_RANK];
	int64_t dil[IR_INFER_MAX_RANK], op[IR_INFER_MAX_RANK];
	int64_t osh[IR_INFER_MAX_RANK], k[IR_INFER_MAX_RANK], group = 1, ch;
	size_t ns = 0, np = 0, nd = 0, no = 0, nos = 0, nk = 0;
	char autopad[32] = "NOTSET";
	struct ir_vtype *o = &c->out[0];
	int rc, nsp;

	if (x)
		o->dtype = x->dtype;
	if ((rc = infer_attr_ints(c, "strides", st, IR_INFER_MAX_RANK, &ns)) < 0 ||
	    (rc = infer_attr_ints(c, "pads", pads, 2 * IR_INFER_MAX_RANK, &np)) < 0 ||
	    (rc = infer_attr_ints(c, "dilations", dil, IR_INFER_MAX_RANK, &nd)) < 0 ||
	    (rc = infer_attr_ints(c, "output_padding", op, IR_INFER_MAX_RANK, &no)) < 0 ||
	    (rc = infer_attr_ints(c, "output_shape", osh, IR_INFER_MAX_RANK, &nos)) < 0 ||
	    (rc = infer_attr_ints(c, "kernel_shape", k, IR_INFER_MAX_RANK, &nk)) < 0 ||
	    (rc = infer_attr_int(c, "group", &group)) < 0 ||
	    (rc = infer_attr_str(c, "auto_pad", autopad, sizeof(autopad))) < 0)
		return rc;
	if (x && x->rank >= 0 && x->rank < 3)
		return infer_err(c, "input rank %d is below 3", x->rank);
	if (!x || x->rank < 0 || !w || w->rank != x->rank)
		return 0;
	nsp = x->rank - 2;
	/* one value per spatial axis (output_shape: its last nsp values) */
	if ((ns && ns != (size_t)nsp) || (nd && nd != (size_t)nsp) ||
	    (no && no != (size_t)nsp) || (nk && nk != (size_t)nsp) ||
	    (nos && nos < (size_t)nsp))
		return infer_err(c, "strides, dilations, output_padding, kernel_shape or output_shape do not have %d values",
				 nsp);
	o->rank = x->rank;
	o->dims[0] = x->dims[0];
	o->dims[1] = infer_dim_unknown();
	if (w->dims[1].kind == IR_VDIM_VALUE) {
		if (__builtin_mul_overflow(w->dims[1].value, group, &ch))
			return infer_err(c, "%lld output channels per group times %lld groups overflows",
					 (long long)w->dims[1].value, (long long)group);
		o->dims[1] = infer_dim_val(ch);
	}
	for (int i = 0; i < nsp; i++) {
		const struct ir_vdim *in = &x->dims[2 + i];
		int64_t s = ns ? st[i] : 1, d = nd ? dil[i] : 1, p = no ? op[i] : 0;
		int64_t kk = nk ? k[i] : w->dims[2 + i].value, pb = 0, pe = 0, v;

		if (nos) {
			o->dims[2 + i] = infer_dim_val(osh[nos - (size_t)nsp + (size_t)i]);
			continue;
		}
		if (in->kind != IR_VDIM_VALUE || (!nk && w->dims[2 + i].kind != IR_VDIM_VALUE)) {
			o->dims[2 + i] = infer_dim_unknown();
			continue;
		}
		if (np == (size_t)(2 * nsp))
			pb = pads[i], pe = pads[i + nsp];
		if (!strncmp(autopad, "SAME", 4) ?
		    __builtin_mul_overflow(in->value, s, &v) :
		    convt_size(in->value, s, p, kk, d, pb, pe, &v) < 0)
			return infer_err(c, "spatial axis %d: input %lld, stride %lld, kernel %lld, dilation %lld and pads overflow",
					 i, (long long)in->value, (long long)s,
					 (long long)kk, (long long)d);
		o->dims[2 + i] = infer_dim_val(v);
	}
	return 0;
}

/* NegativeLogLikelihoodLoss (input, target) and SoftmaxCrossEntropyLoss
 * (scores, labels): target's shape with reduction none, else a scalar;
 * SoftmaxCrossEntropyLoss's log_prob is shaped like scores. */
int infer_loss(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *t = infer_in(c, 1);
	char red[16] = "mean";
	int rc;

	if ((rc = infer_attr_str(c, "reduction", red, sizeof(red))) < 0)
		return rc;
	if (x)
		c->out[0].dtype = x->dtype;
	if (strcmp(red, "none"))
		c->out[0].rank = 0;
	else if (t)
		like(&c->out[0], t);
	if (c->n->n_outputs > 1 && x) {
		c->out[1].dtype = x->dtype;
		like(&c->out[1], x);
	}
	return 0;
}

/* EyeLike, RandomUniformLike, RandomNormalLike, Bernoulli: input's shape,
 * dtype from the 'dtype' attribute when set. */
int infer_like_dtype(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t dt = 0;
	int rc;

	if ((rc = infer_attr_int(c, "dtype", &dt)) < 0)
		return rc;
	if (x) {
		like(&c->out[0], x);
		c->out[0].dtype = x->dtype;
	}
	if (dt > 0)
		c->out[0].dtype = (int)dt;
	return 0;
}

/* RNN, GRU, LSTM: Y [seq, dirs, batch, hidden], Y_h and Y_c [dirs, batch,
 * hidden] (layout 0), or batch first with layout 1. */
int infer_rnn(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t hidden = -1, layout = 0;
	char dir[32] = "forward";
	struct ir_vdim seq, batch, nd, hs;
	int rc;

	if ((rc = infer_attr_int(c, "hidden_size", &hidden)) < 0 ||
	    (rc = infer_attr_int(c, "layout", &layout)) < 0 ||
	    (rc = infer_attr_str(c, "direction", dir, sizeof(dir))) < 0)
		return rc;
	for (size_t i = 0; i < c->n->n_outputs; i++)
		c->out[i].dtype = x ? x->dtype : 0;
	if (!x || x->rank != 3)
		return 0;
	seq = x->dims[layout ? 1 : 0];
	batch = x->dims[layout ? 0 : 1];
	nd = infer_dim_val(!strcmp(dir, "bidirectional") ? 2 : 1);
	hs = hidden > 0 ? infer_dim_val(hidden) : infer_dim_unknown();
	for (size_t i = 0; i < c->n->n_outputs; i++) {
		struct ir_vtype *o = &c->out[i];

		if (i == 0) {
			o->rank = 4;
			o->dims[0] = layout ? batch : seq;
			o->dims[1] = layout ? seq : nd;
			o->dims[2] = layout ? nd : batch;
			o->dims[3] = hs;
		} else {
			o->rank = 3;
			o->dims[0] = layout ? batch : nd;
			o->dims[1] = layout ? nd : batch;
			o->dims[2] = hs;
		}
	}
	return 0;
}

/* GatherND: indices[:-1] + data[batch_dims + indices[-1]:]. */
int infer_gather_nd(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *idx = infer_in(c, 1);
	int64_t bd = 0, k;
	struct ir_vtype *o = &c->out[0];
	int rc, r = 0;

	if ((rc = infer_attr_int(c, "batch_dims", &bd)) < 0)
		return rc;
	if (x)
		o->dtype = x->dtype;
	if (!x || !idx || x->rank < 0 || idx->rank < 1 ||
	    idx->dims[idx->rank - 1].kind != IR_VDIM_VALUE)
		return 0;
	k = idx->dims[idx->rank - 1].value;
	if (bd < 0 || bd >= idx->rank)
		return infer_err(c, "batch_dims %lld is out of range for indices of rank %d",
				 (long long)bd, idx->rank);
	if (k < 0 || k > x->rank || bd > x->rank - k)
		return infer_err(c, "indices' last dim %lld is too large for rank %d",
				 (long long)k, x->rank);
	if (idx->rank - 1 + x->rank - bd - k > IR_INFER_MAX_RANK)
		return 0;
	for (int i = 0; i < idx->rank - 1; i++)
		o->dims[r++] = idx->dims[i];
	for (int64_t i = bd + k; i < x->rank; i++)
		o->dims[r++] = x->dims[i];
	o->rank = r;
	return 0;
}

/* GridSample: [N, C] + grid's spatial dims; RoiAlign: [rois, C, h, w]. */
int infer_sample(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *g = infer_in(c, 1);
	struct ir_vtype *o = &c->out[0];

	if (x)
		o->dtype = x->dtype;
	if (!x || x->rank < 2 || !g || g->rank < 0)
		return 0;
	if (!strcmp(c->n->op_type, "RoiAlign")) {
		int64_t h = 1, w = 1;
		int rc;

		if ((rc = infer_attr_int(c, "output_height", &h)) < 0 ||
		    (rc = infer_attr_int(c, "output_width", &w)) < 0)
			return rc;
		o->rank = 4;
		o->dims[0] = g->rank == 2 ? g->dims[0] : infer_dim_unknown();
		o->dims[1] = x->dims[1];
		o->dims[2] = infer_dim_val(h);
		o->dims[3] = infer_dim_val(w);
		return 0;
	}
	if (g->rank != x->rank)
		return 0;
	o->rank = x->rank;
	o->dims[0] = x->dims[0];
	o->dims[1] = x->dims[1];
	for (int i = 2; i < x->rank; i++)
		o->dims[i] = g->dims[i - 1];
	return 0;
}

/* DynamicQuantizeLinear: y uint8 like x, scale float and zero point uint8
 * scalars. */
int infer_dyn_quantize(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);

	if (x)
		like(&c->out[0], x);
	c->out[0].dtype = IR_DTYPE_UINT8;
	for (size_t i = 1; i < c->n->n_outputs && i < 3; i++) {
		c->out[i].dtype = i == 1 ? IR_DTYPE_FLOAT : IR_DTYPE_UINT8;
		c->out[i].rank = 0;
	}
	return 0;
}

/* Det: the batch dims of [*, M, M]. */
int infer_det(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);

	if (!x)
		return 0;
	c->out[0].dtype = x->dtype;
	if (x->rank < 2)
		return x->rank < 0 ? 0 : infer_err(c, "input rank %d is below 2", x->rank);
	like(&c->out[0], x);
	c->out[0].rank = x->rank - 2;
	return 0;
}

/* MatMulInteger, ConvInteger (int32 out), QLinearMatMul, QLinearConv (out
 * typed like y_zero_point): the float op's shape rule on (x, w). */
int infer_matmul_integer(struct infer_ctx *c)
{
	const char *op = c->n->op_type;
	int qlinear = !strncmp(op, "QLinear", 7), conv = strstr(op, "Conv") != NULL;
	size_t ia = 0, ib = qlinear ? 3 : 1;
	const struct ir_vtype *a = infer_in(c, ia), *b = infer_in(c, ib);
	const struct ir_vtype *zp = qlinear ? infer_in(c, 7) : NULL;
	const struct ir_vtype *ins[3];
	struct ir_vtype ta, tb;
	struct infer_ctx sub = *c;
	int rc;

	if (!a || !b)
		return 0;
	ta = *a;
	tb = *b;
	ta.has_const = tb.has_const = 0;
	ta.has_fconst = tb.has_fconst = 0;
	tb.dtype = ta.dtype;
	ins[0] = &ta;
	ins[1] = &tb;
	ins[2] = NULL;
	sub.in = ins;
	sub.n_in = 2;
	rc = conv ? infer_conv(&sub) : infer_matmul(&sub);
	if (rc < 0)
		return rc;
	c->out[0].dtype = qlinear ? (zp ? zp->dtype : a->dtype) : IR_DTYPE_INT32;
	return rc;
}

/* HannWindow, HammingWindow, BlackmanWindow: [size], output_datatype. */
int infer_window(struct infer_ctx *c)
{
	int64_t dt = IR_DTYPE_FLOAT, size;
	int rc;

	if ((rc = infer_attr_int(c, "output_datatype", &dt)) < 0)
		return rc;
	c->out[0].dtype = (int)dt;
	c->out[0].rank = 1;
	c->out[0].dims[0] = infer_vt_const_int(infer_in(c, 0), 0, &size) ?
			    infer_dim_val(size) : infer_dim_unknown();
	return 0;
}

/* MaxUnpool: the output_shape input when constant, else
 * (in - 1) * stride + kernel - pads per spatial axis. */
int infer_max_unpool(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t k[IR_INFER_MAX_RANK], st[IR_INFER_MAX_RANK], shp[IR_INFER_MAX_RANK];
	int64_t pads[2 * IR_INFER_MAX_RANK];
	size_t nk = 0, ns = 0, np = 0, n;
	struct ir_vtype *o = &c->out[0];
	int rc, nsp;

	if ((rc = infer_attr_ints(c, "kernel_shape", k, IR_INFER_MAX_RANK, &nk)) < 0 ||
	    (rc = infer_attr_ints(c, "strides", st, IR_INFER_MAX_RANK, &ns)) < 0 ||
	    (rc = infer_attr_ints(c, "pads", pads, 2 * IR_INFER_MAX_RANK, &np)) < 0)
		return rc;
	if (!x)
		return 0;
	o->dtype = x->dtype;
	if (x->rank < 3)
		return x->rank < 0 ? 0 : infer_err(c, "input rank %d is below 3", x->rank);
	nsp = x->rank - 2;
	like(o, x);
	if (infer_has_in(c, 2)) {
		if (!infer_vt_const_ints(infer_in(c, 2), shp, IR_INFER_MAX_RANK, &n) ||
		    n != (size_t)x->rank) {
			for (int i = 0; i < x->rank; i++)
				o->dims[i] = infer_dim_unknown();
			return 0;
		}
		for (int i = 0; i < x->rank; i++)
			o->dims[i] = infer_dim_val(shp[i]);
		return 0;
	}
	if (nk != (size_t)nsp)
		return infer_err(c, "kernel_shape has %zu values for %d spatial dims", nk, nsp);
	if ((ns && ns != (size_t)nsp) || (np && np != (size_t)(2 * nsp)))
		return infer_err(c, "strides or pads do not have a value per spatial dim");
	for (int i = 0; i < nsp; i++) {
		const struct ir_vdim *in = &x->dims[2 + i];
		int64_t s = ns ? st[i] : 1, v;

		if (in->kind != IR_VDIM_VALUE) {
			o->dims[2 + i] = infer_dim_unknown();
			continue;
		}
		if (__builtin_sub_overflow(in->value, 1, &v) ||
		    __builtin_mul_overflow(v, s, &v) || __builtin_add_overflow(v, k[i], &v) ||
		    (np && (__builtin_sub_overflow(v, pads[i], &v) ||
			    __builtin_sub_overflow(v, pads[i + nsp], &v))))
			return infer_err(c, "spatial axis %d: input %lld, stride %lld, kernel %lld and pads overflow",
					 i, (long long)in->value, (long long)s, (long long)k[i]);
		o->dims[2 + i] = infer_dim_val(v);
	}
	return 0;
}

/* Einsum: letters map to dims; "..." broadcasts; implicit output is the
 * ellipsis then the letters used once, alphabetically. */
int infer_einsum(struct infer_ctx *c)
{
	const struct ir_attr *a = infer_attr(c, "equation");
	struct ir_vdim map[128], ell[IR_INFER_MAX_RANK];
	int count[128] = { 0 }, n_ell = 0, rc, r = 0;
	char eq[256];
	const char *p, *rhs;
	size_t j = 0, term = 0;
	struct ir_vtype *o = &c->out[0];

	if (!a || !a->s)
		return infer_err(c, "missing required attribute 'equation'");
	for (p = (const char *)a->s; *p && j + 1 < sizeof(eq); p++)
		if (*p != ' ')
			eq[j++] = *p;
	eq[j] = 0;
	if (*p)  /* too long for eq: not inferred rather than cut short */
		return 1;
	if (infer_in(c, 0))
		o->dtype = infer_in(c, 0)->dtype;
	rhs = strstr(eq, "->");
	for (p = eq; *p && p != rhs; term++) {
		const struct ir_vtype *x = infer_in(c, term);
		int letters = 0, has_ell = 0, d = 0;
		const char *q;

		for (q = p; *q && *q != ',' && q != rhs; q++)
			if (*q != '.')
				letters++;
		if (!x || x->rank < 0 || x->rank < letters)
			return 0;
		for (q = p; *q && *q != ',' && q != rhs; q++) {
			if (*q == '.') {
				int ne = x->rank - letters;

				/* one "..." per term: a lone '.' at the end
				 * must not step past the terminator */
				if (q[1] != '.' || q[2] != '.' || has_ell++)
					return infer_err(c, "bad equation '%s'", eq);
				if ((rc = infer_broadcast2(c, ell, n_ell, x->dims + d, ne,
							   ell, &n_ell)) < 0)
					return rc;
				d += ne;
				q += 2;
				continue;
			}
			if ((unsigned char)*q >= 128)
				return infer_err(c, "bad equation '%s'", eq);
			if (!count[(int)*q]++ || map[(int)*q].kind != IR_VDIM_VALUE ||
			    map[(int)*q].value == 1)
				map[(int)*q] = x->dims[d];
			d++;
		}
		p = *q == ',' ? q + 1 : q;
	}
	if (rhs) {
		for (p = rhs + 2; *p; p++) {
			if (*p == '.') {
				if (p[1] != '.' || p[2] != '.')
					return infer_err(c, "bad equation '%s'", eq);
				for (int i = 0; i < n_ell && r < IR_INFER_MAX_RANK; i++)
					o->dims[r++] = ell[i];
				p += 2;
			} else if ((unsigned char)*p < 128 && count[(int)*p] &&
				   r < IR_INFER_MAX_RANK) {
				o->dims[r++] = map[(int)*p];
			} else {
				return infer_err(c, "bad equation '%s'", eq);
			}
		}
	} else {
		for (int i = 0; i < n_ell; i++)
			o->dims[r++] = ell[i];
		for (int ch = 0; ch < 128 && r < IR_INFER_MAX_RANK; ch++)
			if (count[ch] == 1)
				o->dims[r++] = map[ch];
	}
	o->rank = r;
	return 0;
}

/* com.microsoft FusedMatMul (transA/transB on the last two dims),
 * Attention ([B,S,D] x [D,3H] -> [B,S,H]) and MultiHeadAttention (query's
 * shape with value's hidden size). */
int infer_ms_attention(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *w = infer_in(c, 1);
	const struct ir_vtype *v = infer_in(c, 2);
	const char *op = c->n->op_type;
	struct ir_vtype *o = &c->out[0];

	if (!strcmp(op, "FusedMatMul")) {
		int64_t ta = 0, tb = 0;
		struct ir_vtype a2, b2;
		const struct ir_vtype *ins[2];
		struct infer_ctx sub = *c;
		int rc;

		if ((rc = infer_attr_int(c, "transA", &ta)) < 0 ||
		    (rc = infer_attr_int(c, "transB", &tb)) < 0)
			return rc;
		if (!x || !w)
			return 0;
		a2 = *x;
		b2 = *w;
		a2.has_const = b2.has_const = 0;
		a2.has_fconst = b2.has_fconst = 0;
		if (ta && a2.rank >= 2) {
			struct ir_vdim t = a2.dims[a2.rank - 1];

			a2.dims[a2.rank - 1] = a2.dims[a2.rank - 2];
			a2.dims[a2.rank - 2] = t;
		}
		if (tb && b2.rank >= 2) {
			struct ir_vdim t = b2.dims[b2.rank - 1];

			b2.dims[b2.rank - 1] = b2.dims[b2.rank - 2];
			b2.dims[b2.rank - 2] = t;
		}
		ins[0] = &a2;
		ins[1] = &b2;
		sub.in = ins;
		sub.n_in = 2;
		return infer_matmul(&sub);
	}
	if (!x)
		return 0;
	o->dtype = x->dtype;
	like(o, x);
	if (x->rank != 3)
		return 0;
	if (!strcmp(op, "Attention")) {
		int64_t qkv[3];
		size_t n = 0;
		int rc;

		if ((rc = infer_attr_ints(c, "qkv_hidden_sizes", qkv, 3, &n)) < 0)
			return rc;
		if (n == 3)
			o->dims[2] = infer_dim_val(qkv[2]);
		else if (w && w->rank == 2 && w->dims[1].kind == IR_VDIM_VALUE)
			o->dims[2] = infer_dim_val(w->dims[1].value / 3);
		else
			o->dims[2] = infer_dim_unknown();
		return 0;
	}
	if (v && v->rank == 3)
		o->dims[2] = v->dims[2];
	return 0;
}

/* com.microsoft MatMulNBits: A [..., K] times the dequantized [N, K] B
 * transposed gives Y [..., N], of A's dtype. */
int infer_matmul_nbits(struct infer_ctx *c)
{
	const struct ir_vtype *a = infer_in(c, 0);
	struct ir_vtype *o = &c->out[0];
	int64_t kk = 0, nn = 0;
	int rc;

	if ((rc = infer_attr_int(c, "K", &kk)) < 0 || (rc = infer_attr_int(c, "N", &nn)) < 0)
		return rc;
	if (!a)
		return 0;
	o->dtype = a->dtype;
	if (a->rank < 1)
		return 0;
	if (a->dims[a->rank - 1].kind == IR_VDIM_VALUE && a->dims[a->rank - 1].value != kk)
		return infer_err(c, "A's last dim %lld is not K %lld",
				 (long long)a->dims[a->rank - 1].value, (long long)kk);
	like(o, a);
	o->dims[a->rank - 1] = infer_dim_val(nn);
	return 0;
}

/* com.microsoft GroupQueryAttention: output (B, S, num_heads * head), the
 * head size from query alone or from the packed (num_heads + 2 *
 * kv_num_heads) heads; present_key/present_value (B, kv_num_heads, P,
 * head) in past_key's dtype, P = max(total_sequence_length, past rows)
 * when total_sequence_length is known (onnxruntime's rule). */
int infer_ms_gqa(struct infer_ctx *c)
{
	const struct ir_vtype *q = infer_in(c, 0), *pk = infer_in(c, 3), *tot = infer_in(c, 6);
	int64_t nh = 0, kvh = 0, total, head = 0;
	int packed = !infer_has_in(c, 1), rc;

	if ((rc = infer_attr_int(c, "num_heads", &nh)) < 0 ||
	    (rc = infer_attr_int(c, "kv_num_heads", &kvh)) < 0)
		return rc;
	if (nh <= 0 || kvh <= 0 || nh % kvh)
		return infer_err(c, "num_heads %lld must be a positive multiple of kv_num_heads %lld",
				 (long long)nh, (long long)kvh);
	if (!q)
		return 0;
	c->out[0].dtype = q->dtype;
	if (q->rank != 3)
		return q->rank < 0 ? 0 : infer_err(c, "query must be 3-D");
	if (q->dims[2].kind == IR_VDIM_VALUE) {
		int64_t parts = packed ? nh + 2 * kvh : nh;

		if (q->dims[2].value % parts)
			return infer_err(c, "query's last dim %lld is not a multiple of %lld heads",
					 (long long)q->dims[2].value, (long long)parts);
		head = q->dims[2].value / parts;
	}
	like(&c->out[0], q);
	c->out[0].dims[2] = head ? infer_dim_val(nh * head) : infer_dim_unknown();
	for (size_t i = 1; i < 3 && i < c->n->n_outputs; i++) {
		struct ir_vtype *o = &c->out[i];

		o->dtype = pk ? pk->dtype : q->dtype;
		o->rank = 4;
		o->dims[0] = q->dims[0];
		o->dims[1] = infer_dim_val(kvh);
		o->dims[2] = infer_dim_unknown();
		o->dims[3] = head ? infer_dim_val(head) : infer_dim_unknown();
		if (tot && infer_vt_const_int(tot, 0, &total)) {
			if (!pk)
				o->dims[2] = infer_dim_val(total);
			else if (pk->rank == 4 && pk->dims[2].kind == IR_VDIM_VALUE)
				o->dims[2] = infer_dim_val(total > pk->dims[2].value ?
							   total : pk->dims[2].value);
		}
	}
	return 0;
}
