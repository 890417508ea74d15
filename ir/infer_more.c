/* infer_more.c: inference of the newer ai.onnx operators: random
 * generators (RandomNormal, RandomUniform, Multinomial), RMSNormalization,
 * the string ops (StringSplit), Col2Im, AffineGrid, CenterCropPad,
 * MaxRoiPool, ImageDecoder, BitCast, SequenceMap, the LLM ops (Attention,
 * LinearAttention, CausalConvWithState) and ai.onnx.preview FlexAttention.
 * Ops that are plain elementwise or Conv-like reuse infer_unary and co. */
#include <stdlib.h>
#include <string.h>

#include "ir/infer_int.h"

#define MAXK IR_INFER_MAX_RANK

static void same_shape(struct ir_vtype *o, const struct ir_vtype *x)
{
	o->rank = x->rank;
	memcpy(o->dims, x->dims, sizeof(x->dims));
}

/* Dims of a rank-r output, all unknown. */
static void unknown_dims(struct ir_vtype *o, int r)
{
	o->rank = r;
	for (int i = 0; i < r; i++)
		o->dims[i] = infer_dim_unknown();
}

/* RandomNormal, RandomUniform: dtype and shape attributes. */
int infer_random(struct infer_ctx *c)
{
	int64_t dt = IR_DTYPE_FLOAT, shape[MAXK];
	size_t n = 0;
	int rc;

	if ((rc = infer_attr_int(c, "dtype", &dt)) < 0 ||
	    (rc = infer_attr_ints(c, "shape", shape, MAXK, &n)) < 0)
		return rc;
	c->out[0].dtype = (int)dt;
	if (rc == 1)
		return 0;
	c->out[0].rank = (int)n;
	for (size_t i = 0; i < n; i++) {
		if (shape[i] < 0)
			return infer_err(c, "shape has negative dim %lld", (long long)shape[i]);
		c->out[0].dims[i] = infer_dim_val(shape[i]);
	}
	return 0;
}

/* Multinomial: [batch, sample_size] of the dtype attribute (int32). */
int infer_multinomial(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t dt = IR_DTYPE_INT32, k = 1;
	int rc;

	if ((rc = infer_attr_int(c, "dtype", &dt)) < 0 ||
	    (rc = infer_attr_int(c, "sample_size", &k)) < 0)
		return rc;
	if (x && x->rank >= 0 && x->rank != 2)
		return infer_err(c, "input rank %d is not 2", x->rank);
	c->out[0].dtype = (int)dt;
	c->out[0].rank = 2;
	c->out[0].dims[0] = x && x->rank == 2 ? x->dims[0] : infer_dim_unknown();
	c->out[0].dims[1] = infer_dim_val(k);
	return 0;
}

/* RMSNormalization: X's shape, the scale's dtype (V). */
int infer_rms_norm(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *s = infer_in(c, 1);

	if (s)
		c->out[0].dtype = s->dtype;
	if (x)
		same_shape(&c->out[0], x);
	return 0;
}

/* StringSplit: Y string of rank X + 1 (last dim the most substrings, data
 * dependent), Z int64 shaped like X. */
int infer_string_split(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);

	c->out[0].dtype = IR_DTYPE_STRING;
	if (c->n->n_outputs > 1)
		c->out[1].dtype = IR_DTYPE_INT64;
	if (!x || x->rank < 0 || x->rank >= MAXK)
		return 0;
	same_shape(&c->out[0], x);
	c->out[0].dims[x->rank] = infer_dim_unknown();
	c->out[0].rank = x->rank + 1;
	if (c->n->n_outputs > 1)
		same_shape(&c->out[1], x);
	return 0;
}

/* Col2Im: input [N, C * prod(block_shape), L] -> [N, C, *image_shape]. */
int infer_col2im(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *img = infer_in(c, 1);
	int64_t is[MAXK], bs[MAXK], prod = 1;
	size_t ni = 0, nb = 0;
	int have_img, have_blk;

	if (x)
		c->out[0].dtype = x->dtype;
	if (x && x->rank >= 0 && x->rank != 3)
		return infer_err(c, "input rank %d is not 3", x->rank);
	have_img = infer_vt_const_ints(img, is, MAXK - 2, &ni);
	have_blk = infer_vt_const_ints(infer_in(c, 2), bs, MAXK - 2, &nb);
	if (have_img && have_blk && ni != nb)
		return infer_err(c, "image_shape has %zu values, block_shape %zu", ni, nb);
	if (!have_img) {
		if (!img || img->rank != 1 || img->dims[0].kind != IR_VDIM_VALUE ||
		    img->dims[0].value < 0 || img->dims[0].value > MAXK - 2)
			return 0;
		ni = (size_t)img->dims[0].value;
	}
	unknown_dims(&c->out[0], (int)ni + 2);
	if (x && x->rank == 3)
		c->out[0].dims[0] = x->dims[0];
	for (size_t i = 0; have_img && i < ni; i++)
		c->out[0].dims[2 + i] = infer_dim_val(is[i]);
	for (size_t i = 0; have_blk && i < nb; i++)
		if (__builtin_mul_overflow(prod, bs[i], &prod))
			return infer_err(c, "the product of block_shape overflows");
	if (have_blk && prod > 0 && x && x->rank == 3 &&
	    x->dims[1].kind == IR_VDIM_VALUE) {
		if (x->dims[1].value % prod)
			return infer_err(c, "input dim 1 (%lld) is not a multiple of the block size %lld",
					 (long long)x->dims[1].value, (long long)prod);
		c->out[0].dims[1] = infer_dim_val(x->dims[1].value / prod);
	}
	return 0;
}

/* AffineGrid: size [N, C, H, W] -> [N, H, W, 2]; [N, C, D, H, W] ->
 * [N, D, H, W, 3]. */
int infer_affine_grid(struct infer_ctx *c)
{
	const struct ir_vtype *th = infer_in(c, 0), *sz = infer_in(c, 1);
	int64_t s[5];
	size_t n = 0;
	int known = infer_vt_const_ints(sz, s, 5, &n);

	if (th)
		c->out[0].dtype = th->dtype;
	if (!known) {
		if (!sz || sz->rank != 1 || sz->dims[0].kind != IR_VDIM_VALUE)
			return 0;
		n = (size_t)sz->dims[0].value;
	}
	if (n != 4 && n != 5)
		return infer_err(c, "size has %zu values, 4 or 5 expected", n);
	unknown_dims(&c->out[0], (int)n);
	if (th && th->rank >= 1)
		c->out[0].dims[0] = th->dims[0];
	c->out[0].dims[n - 1] = infer_dim_val((int64_t)n - 2);
	for (size_t i = 2; known && i < n; i++)
		c->out[0].dims[i - 1] = infer_dim_val(s[i]);
	if (known)
		c->out[0].dims[0] = infer_dim_val(s[0]);
	return 0;
}

/* CenterCropPad: the input's shape with each axis (all by default) set to
 * the shape input's value. */
int infer_center_crop_pad(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t axes[MAXK], s[MAXK], ax;
	size_t na = 0, ns = 0;
	int rc, known;

	if (!x)
		return 0;
	c->out[0].dtype = x->dtype;
	if (x->rank < 0)
		return 0;
	if ((rc = infer_attr_ints(c, "axes", axes, MAXK, &na)) < 0)
		return rc;
	if (rc == 1 || na == 0) {
		na = (size_t)x->rank;
		for (size_t i = 0; i < na; i++)
			axes[i] = (int64_t)i;
	}
	unknown_dims(&c->out[0], x->rank);
	known = infer_vt_const_ints(infer_in(c, 1), s, MAXK, &ns);
	if (known && ns != na)
		return infer_err(c, "shape has %zu values for %zu axes", ns, na);
	for (int i = 0; i < x->rank; i++)
		c->out[0].dims[i] = x->dims[i];
	for (size_t i = 0; i < na; i++) {
		if ((rc = infer_norm_axis(c, axes[i], x->rank, &ax)) < 0)
			return rc;
		c->out[0].dims[ax] = known ? infer_dim_val(s[i]) : infer_dim_unknown();
	}
	return 0;
}

/* MaxRoiPool: [num_rois, C, pooled_h, pooled_w]. */
int infer_max_roi_pool(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *rois = infer_in(c, 1);
	int64_t ps[MAXK];
	size_t n = 0;
	int rc;

	if ((rc = infer_attr_ints(c, "pooled_shape", ps, MAXK, &n)) < 0)
		return rc;
	if (x)
		c->out[0].dtype = x->dtype;
	if (x && x->rank >= 0 && x->rank != 4)
		return infer_err(c, "input rank %d is not 4", x->rank);
	if (n != 2)
		return infer_err(c, "pooled_shape has %zu values, 2 expected", n);
	unknown_dims(&c->out[0], 4);
	if (rois && rois->rank == 2)
		c->out[0].dims[0] = rois->dims[0];
	if (x && x->rank == 4)
		c->out[0].dims[1] = x->dims[1];
	c->out[0].dims[2] = infer_dim_val(ps[0]);
	c->out[0].dims[3] = infer_dim_val(ps[1]);
	return 0;
}

/* ImageDecoder: uint8 [H, W, C], C from pixel_format; H, W from the data. */
int infer_image_decoder(struct infer_ctx *c)
{
	char fmt[32] = "RGB";
	int rc;

	if ((rc = infer_attr_str(c, "pixel_format", fmt, sizeof(fmt))) < 0)
		return rc;
	c->out[0].dtype = IR_DTYPE_UINT8;
	unknown_dims(&c->out[0], 3);
	if (!strcmp(fmt, "Grayscale"))
		c->out[0].dims[2] = infer_dim_val(1);
	else if (!strcmp(fmt, "RGB") || !strcmp(fmt, "BGR"))
		c->out[0].dims[2] = infer_dim_val(3);
	return 0;
}

static int dtype_bits(int dt)
{
	switch (dt) {
	case IR_DTYPE_BOOL: case IR_DTYPE_UINT8: case IR_DTYPE_INT8:
	case IR_DTYPE_FLOAT8E4M3FN: case IR_DTYPE_FLOAT8E4M3FNUZ:
	case IR_DTYPE_FLOAT8E5M2: case IR_DTYPE_FLOAT8E5M2FNUZ:
		return 8;
	case IR_DTYPE_UINT16: case IR_DTYPE_INT16: case IR_DTYPE_FLOAT16:
	case IR_DTYPE_BFLOAT16:
		return 16;
	case IR_DTYPE_FLOAT: case IR_DTYPE_INT32: case IR_DTYPE_UINT32:
		return 32;
	case IR_DTYPE_DOUBLE: case IR_DTYPE_INT64: case IR_DTYPE_UINT64:
	case IR_DTYPE_COMPLEX64:
		return 64;
	case IR_DTYPE_COMPLEX128:
		return 128;
	case IR_DTYPE_UINT4: case IR_DTYPE_INT4: case IR_DTYPE_FLOAT4E2M1:
		return 4;
	default:
		return 0;
	}
}

/* BitCast: dtype 'to'; the input's shape when both types are as wide,
 * otherwise only the dtype. */
int infer_bitcast(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t to = 0;
	int rc;

	if ((rc = infer_attr_int(c, "to", &to)) < 0)
		return rc;
	c->out[0].dtype = (int)to;
	if (x && x->dtype && dtype_bits(x->dtype) &&
	    dtype_bits(x->dtype) == dtype_bits((int)to))
		same_shape(&c->out[0], x);
	return 0;
}

#define SEQMAP_MAX_ELEMS 256
#define SEQMAP_MAX_DEPTH 32

/* dtype, rank and dims all n elements share into t. */
static void seqmap_join(struct ir_vtype *t, const struct ir_vtype *e, size_t n)
{
	t->rank = -1;
	if (!n)
		return;
	t->dtype = e[0].dtype;
	t->rank = e[0].rank;
	memcpy(t->dims, e[0].dims, sizeof(t->dims));
	for (size_t i = 1; i < n; i++) {
		if (e[i].dtype != t->dtype)
			t->dtype = IR_DTYPE_UNDEFINED;
		if (e[i].rank != t->rank) {
			t->rank = -1;
			return;
		}
		for (int k = 0; k < t->rank; k++)
			if (!infer_dim_eq(&t->dims[k], &e[i].dims[k]))
				t->dims[k] = infer_dim_unknown();
	}
}

/* Run the body once per position of the input sequences (all with known
 * elements of one length): 0 done, 1 not possible, negative error. */
static int seqmap_by_elems(struct infer_ctx *c, struct ir_graph *g)
{
	const struct ir_vtype *x0 = infer_in(c, 0);
	size_t n, n_out = c->n->n_outputs;
	struct ir_vtype *e, t;
	struct infer_ctx sub;
	int rc = 0;

	if (!x0 || !x0->is_seq || !x0->has_elems || g->n_inputs != c->n_in ||
	    g->n_outputs < n_out || c->depth >= SEQMAP_MAX_DEPTH)
		return 1;
	n = x0->n_elems;
	if (n > SEQMAP_MAX_ELEMS)
		return 1;
	for (size_t j = 0; j < c->n_in; j++) {
		const struct ir_vtype *x = infer_in(c, j);

		if (!x || !g->inputs[j].value ||
		    (x->is_seq && (!x->has_elems || x->n_elems != n)))
			return 1;
	}
	if (!(e = calloc(n * n_out + 1, sizeof(*e))))
		return IR_ENOMEM;
	sub = *c;
	sub.depth = c->depth + 1;
	for (size_t p = 0; p < n && rc >= 0; p++) {
		for (size_t j = 0; j < c->n_in && rc >= 0; j++) {
			const struct ir_vtype *x = infer_in(c, j);

			if (x->is_seq) {
				infer_vt_unknown(&t);
				t.dtype = x->elems[p].dtype;
				t.rank = x->elems[p].rank;
				memcpy(t.dims, x->elems[p].dims, sizeof(t.dims));
			} else if ((rc = infer_vt_copy(&t, x)) < 0) {
				break;
			}
			rc = infer_set(c, g->inputs[j].value, &t);
			infer_vt_release(&t);
		}
		if (rc >= 0)
			rc = infer_graph(&sub, g);
		for (size_t k = 0; k < n_out && rc >= 0; k++) {
			const struct ir_vtype *o = g->outputs[k].value ?
				ir_infer_get(c->r, g->outputs[k].value) : NULL;
			struct ir_vtype *d = &e[k * n + p];

			infer_vt_unknown(d);
			if (o && !o->is_seq) {
				d->dtype = o->dtype;
				d->rank = o->rank;
				memcpy(d->dims, o->dims, sizeof(d->dims));
			}
		}
	}
	for (size_t k = 0; k < n_out && rc >= 0; k++) {
		c->out[k].is_seq = 1;
		if ((rc = infer_vt_set_elems(&c->out[k], &e[k * n], n)) < 0)
			break;
		seqmap_join(&c->out[k], &e[k * n], n);
	}
	free(e);
	return rc;
}

/* SequenceMap: with the input sequences' elements known, the body is
 * inferred once per position; otherwise sequences whose elements have
 * the body's declared output types. */
int infer_sequence_map(struct infer_ctx *c)
{
	const struct ir_attr *body = infer_attr(c, "body");
	int rc;

	for (size_t i = 0; i < c->n->n_outputs; i++)
		c->out[i].is_seq = 1;
	if (!body || !body->g)
		return 0;
	if ((rc = seqmap_by_elems(c, body->g)) <= 0) {
		if (rc == 0)
			return 0;
		return rc == IR_ENOMEM ? infer_err(c, "out of memory") : rc;
	}
	for (size_t i = 0; i < c->n->n_outputs && i < body->g->n_outputs; i++) {
		infer_vt_declared(body->g->outputs[i].type, &c->out[i]);
		c->out[i].is_seq = 1;
	}
	return 0;
}

/* Heads of a 3-D attention input: hidden / heads, or unknown. */
static struct ir_vdim per_head(const struct ir_vdim *hidden, int64_t heads)
{
	if (hidden->kind == IR_VDIM_VALUE && heads > 0 && hidden->value % heads == 0)
		return infer_dim_val(hidden->value / heads);
	return infer_dim_unknown();
}

/* Attention (ai.onnx 23+): Q [B, Hq, L, E] or [B, L, Hq * E], V likewise
 * with Hkv and Ev; Y [B, Hq, L, Ev] or [B, L, Hq * Ev]; present_key and
 * present_value [B, Hkv, P + S, E or Ev]; qk_matmul_output [B, Hq, L, P + S]. */
int infer_attention(struct infer_ctx *c)
{
	const struct ir_vtype *q = infer_in(c, 0), *k = infer_in(c, 1),
			      *v = infer_in(c, 2), *pk = infer_in(c, 4);
	int64_t qh = 0, kvh = 0;
	struct ir_vdim b, hq, hkv, lq, e, ev, total;
	int rc;

	if ((rc = infer_attr_int(c, "q_num_heads", &qh)) < 0 ||
	    (rc = infer_attr_int(c, "kv_num_heads", &kvh)) < 0)
		return rc;
	if (q)
		c->out[0].dtype = q->dtype;
	if (c->n->n_outputs > 1 && k)
		c->out[1].dtype = k->dtype;
	if (c->n->n_outputs > 2 && v)
		c->out[2].dtype = v->dtype;
	if (c->n->n_outputs > 3 && q)
		c->out[3].dtype = q->dtype;
	if (!q || (q->rank != 3 && q->rank != 4))
		return 0;
	b = q->dims[0];
	hq = q->rank == 4 ? q->dims[1] : qh > 0 ? infer_dim_val(qh) : infer_dim_unknown();
	lq = q->dims[q->rank == 4 ? 2 : 1];
	e = q->rank == 4 ? q->dims[3] : per_head(&q->dims[2], qh);
	ev = infer_dim_unknown();
	hkv = infer_dim_unknown();
	if (v && v->rank == 4) {
		ev = v->dims[3];
		hkv = v->dims[1];
	} else if (v && v->rank == 3) {
		ev = per_head(&v->dims[2], kvh);
		if (kvh > 0)
			hkv = infer_dim_val(kvh);
	}
	total = infer_dim_unknown();
	if (k && (k->rank == 3 || k->rank == 4)) {
		struct ir_vdim s = k->dims[k->rank == 4 ? 2 : 1];

		if (!pk || !infer_has_in(c, 4))
			total = s;
		else if (pk->rank == 4 && pk->dims[2].kind == IR_VDIM_VALUE &&
			 s.kind == IR_VDIM_VALUE) {
			int64_t t;

			if (__builtin_add_overflow(pk->dims[2].value, s.value, &t))
				return infer_err(c, "past length %lld plus sequence length %lld overflows",
						 (long long)pk->dims[2].value, (long long)s.value);
			total = infer_dim_val(t);
		}
	}
	c->out[0].rank = q->rank;
	c->out[0].dims[0] = b;
	if (q->rank == 4) {
		c->out[0].dims[1] = hq;
		c->out[0].dims[2] = lq;
		c->out[0].dims[3] = ev;
	} else {
		int64_t hidden;

		c->out[0].dims[1] = lq;
		c->out[0].dims[2] = infer_dim_unknown();
		if (hq.kind == IR_VDIM_VALUE && ev.kind == IR_VDIM_VALUE) {
			if (__builtin_mul_overflow(hq.value, ev.value, &hidden))
				return infer_err(c, "%lld heads of size %lld overflow",
						 (long long)hq.value, (long long)ev.value);
			c->out[0].dims[2] = infer_dim_val(hidden);
		}
	}
	for (size_t i = 1; i < c->n->n_outputs && i < 4; i++) {
		c->out[i].rank = 4;
		c->out[i].dims[0] = b;
		c->out[i].dims[1] = i == 3 ? hq : hkv;
		c->out[i].dims[2] = i == 3 ? lq : total;
		c->out[i].dims[3] = i == 1 ? e : i == 2 ? ev : total;
	}
	return 0;
}

/* LinearAttention: output of the query's dtype and rank; present_state of
 * past_state's type when given (the state keeps its shape). */
int infer_linear_attention(struct infer_ctx *c)
{
	const struct ir_vtype *q = infer_in(c, 0), *st = infer_in(c, 3);

	if (q) {
		c->out[0].dtype = q->dtype;
		if (q->rank >= 0)
			unknown_dims(&c->out[0], q->rank);
	}
	if (c->n->n_outputs > 1 && st && infer_has_in(c, 3)) {
		c->out[1].dtype = st->dtype;
		same_shape(&c->out[1], st);
	}
	return 0;
}

/* CausalConvWithState: a causal depthwise convolution keeps the input's
 * shape; present_state has past_state's type when given. */
int infer_causal_conv_state(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *st = infer_in(c, 3);

	if (!x)
		return 0;
	c->out[0].dtype = x->dtype;
	same_shape(&c->out[0], x);
	if (c->n->n_outputs > 1) {
		c->out[1].dtype = x->dtype;
		if (st && infer_has_in(c, 3))
			same_shape(&c->out[1], st);
	}
	return 0;
}

/* FlexAttention: Q [B, Hq, L, E], V [B, Hkv, S, Ev] -> [B, Hq, L, Ev]. */
int infer_flex_attention(struct infer_ctx *c)
{
	const struct ir_vtype *q = infer_in(c, 0), *v = infer_in(c, 2);

	if (!q)
		return 0;
	c->out[0].dtype = q->dtype;
	if (q->rank >= 0 && q->rank != 4)
		return infer_err(c, "Q rank %d is not 4", q->rank);
	if (q->rank != 4)
		return 0;
	same_shape(&c->out[0], q);
	c->out[0].dims[3] = v && v->rank == 4 ? v->dims[3] : infer_dim_unknown();
	return 0;
}
