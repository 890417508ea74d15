/* attention.c: pass "attention": ai.onnx Attention (23) and com.microsoft
 * MultiHeadAttention as scaled dot-product attention over [B, H, S, D]
 * heads (attn_build.c): MatMul, Mul, Softmax, MatMul, with Reshape and
 * Transpose for 3-D inputs, Concat of past key/value (the present
 * outputs), Unsqueeze and Expand for kv heads shared by several query
 * heads, Div, Tanh, Mul for softcap, and an additive bias: the float mask,
 * Where(mask, 0, lowest) of a boolean one, a constant causal mask (lowest
 * where masked; static sequence lengths), and for MultiHeadAttention its
 * bias input (Slice, Add), attention_bias, and a 2-D key_padding_mask as
 * mask_filter_value where not kept (Cast, Mul, Sub).  Head counts and head
 * sizes must be static; the packed, cached-key and shared-buffer forms of
 * MultiHeadAttention, nonpad_kv_seqlen and sliding windows are refused.
 * A query whose every key is masked gets the mean of the values (softmax
 * of equal lowest scores), where onnxruntime's Attention gives zeros. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rewriters/attn_build.h"

/* What a node needs beyond the plain form, and which variant covers what
 * (a variant applies when it covers all the node needs). */
enum { F_PAD = 1, F_BOOL = 2, F_SHARE = 4, F_CAP = 8 };

#define PLAIN_OPS "Reshape", "Transpose", "MatMul", "Mul", "Softmax", "Add", "Concat", "Slice"
static const char *const plain_ops[] = { PLAIN_OPS, NULL };
static const char *const pad_ops[] = { PLAIN_OPS, "Cast", "Unsqueeze", "Sub", NULL };
static const char *const where_ops[] = { PLAIN_OPS, "Where", NULL };
static const char *const share_ops[] = { PLAIN_OPS, "Unsqueeze", "Expand", NULL };
static const char *const cap_ops[] = { PLAIN_OPS, "Div", "Tanh", NULL };
static const char *const all_ops[] = {
	PLAIN_OPS, "Cast", "Unsqueeze", "Sub", "Where", "Expand", "Div", "Tanh", NULL
};
static const struct rw_variant variants[] = {
	{ "sdpa", plain_ops },
	{ "sdpa-padding", pad_ops },
	{ "sdpa-where", where_ops },
	{ "sdpa-kv-share", share_ops },
	{ "sdpa-softcap", cap_ops },
	{ "sdpa-all", all_ops },
};
static const int covers[] = { 0, F_PAD, F_BOOL, F_SHARE, F_CAP, F_PAD | F_BOOL | F_SHARE | F_CAP };
_Static_assert(sizeof(covers) / sizeof(covers[0]) == sizeof(variants) / sizeof(variants[0]),
	       "one per variant");

/* The node read: inputs by role, static sizes (-1 dynamic). */
struct attn {
	int ms, rank;
	struct ir_value *q, *k, *v, *mask, *pk, *pv, *bias, *abias;
	int64_t hq, hkv, d, dv, s, l, p;
	int causal, bool_mask, qk_mode;
	double scale, softcap, filter;  /* filter: MultiHeadAttention's */
};

static int64_t dim_of(const struct ir_vtype *t, int i)
{
	if (!t || i < 0 || t->rank <= i || t->dims[i].kind != IR_VDIM_VALUE)
		return -1;
	return t->dims[i].value;
}

static struct ir_value *in_at(const struct ir_node *n, size_t i)
{
	return n->n_inputs > i ? n->inputs[i] : NULL;
}

static int used(const struct ir_node *n, size_t i)
{
	return n->n_outputs > i && n->outputs[i] && rw_value_used(n->outputs[i]);
}

#define FAIL(...) do { snprintf(why, size, __VA_ARGS__); return 0; } while (0)

/* Heads, head size and sequence of a 3-D ([B, S, H*D], h heads) or 4-D
 * ([B, H, S, D]) input. */
static int heads_of(struct rw_ctx *c, const struct ir_value *x, int rank, int64_t h,
		    int64_t *heads, int64_t *dim, int64_t *seq)
{
	const struct ir_vtype *t = rw_type(c, x);

	if (!t || t->rank != rank)
		return 0;
	if (rank == 4) {
		*heads = dim_of(t, 1);
		*seq = dim_of(t, 2);
		*dim = dim_of(t, 3);
	} else {
		int64_t hidden = dim_of(t, 2);

		*heads = h;
		*seq = dim_of(t, 1);
		*dim = h > 0 && hidden > 0 && hidden % h == 0 ? hidden / h : -1;
	}
	return *heads > 0 && *dim > 0;
}

static int read_onnx(struct rw_ctx *c, const struct ir_node *n, struct attn *a, char *why,
		     size_t size)
{
	const struct ir_vtype *mt;
	int64_t kh, ks, kd, pd;
	int mode;

	a->q = in_at(n, 0), a->k = in_at(n, 1), a->v = in_at(n, 2);
	a->mask = in_at(n, 3), a->pk = in_at(n, 4), a->pv = in_at(n, 5);
	if (!a->q || !a->k || !a->v)
		FAIL("Q, K or V is absent");
	if (in_at(n, 6))
		FAIL("nonpad_kv_seqlen is given");
	if (rw_attr_int(n, "left_window_size", -1) >= 0 ||
	    rw_attr_int(n, "right_window_size", -1) >= 0)
		FAIL("a sliding window is set");
	a->rank = rw_rank(c, a->q);
	if ((a->rank != 3 && a->rank != 4) || rw_rank(c, a->k) != a->rank ||
	    rw_rank(c, a->v) != a->rank)
		FAIL("Q, K and V must all be 3-D or all 4-D");
	if (!heads_of(c, a->q, a->rank, rw_attr_int(n, "q_num_heads", 0), &a->hq, &a->d, &a->s) ||
	    !heads_of(c, a->k, a->rank, rw_attr_int(n, "kv_num_heads", 0), &a->hkv, &kd, &a->l) ||
	    !heads_of(c, a->v, a->rank, rw_attr_int(n, "kv_num_heads", 0), &kh, &a->dv, &ks))
		FAIL("head counts or head sizes are not static");
	if (kd != a->d || kh != a->hkv || a->hq % a->hkv || ks != a->l)
		FAIL("Q, K and V heads, head sizes or lengths disagree");
	if (!a->pk != !a->pv)
		FAIL("only one of past_key and past_value is given");
	a->p = 0;
	if (a->pk) {
		const struct ir_vtype *pt = rw_type(c, a->pk);

		a->p = dim_of(pt, 2);
		pd = dim_of(pt, 3);
		if (!pt || pt->rank != 4 || pd != a->d)
			FAIL("past_key is not [B, kv heads, P, head size]");
	}
	if ((used(n, 1) || used(n, 2)) && !a->pk && a->rank == 4)
		FAIL("present key/value without a past of 4-D inputs");
	a->causal = rw_attr_int(n, "is_causal", 0) != 0;
	if (a->causal && (a->s < 0 || a->l < 0 || a->p < 0))
		FAIL("is_causal with dynamic sequence lengths");
	if (a->mask) {
		mt = rw_type(c, a->mask);
		if (!mt || mt->rank < 1 || mt->rank > 4 || !mt->dtype)
			FAIL("attn_mask of unknown type or rank");
		a->bool_mask = mt->dtype == IR_DTYPE_BOOL;
		if (!a->bool_mask && mt->dtype != rw_node_dtype(c, n))
			FAIL("attn_mask is %s, not the data's type", ir_dtype_name(mt->dtype));
		if (a->l < 0 || a->p < 0 || dim_of(mt, mt->rank - 1) != a->p + a->l)
			FAIL("attn_mask's last dim is not the static key length");
	}
	mode = (int)rw_attr_int(n, "softmax_precision", 0);
	if (mode && mode != rw_node_dtype(c, n))
		FAIL("softmax_precision %d differs from the data's type", mode);
	a->softcap = rw_attr_float(n, "softcap", 0);
	a->scale = ir_node_attr(n, "scale") ? rw_attr_float(n, "scale", 1) : 1 / sqrt((double)a->d);
	a->qk_mode = (int)rw_attr_int(n, "qk_matmul_output_mode", 0);
	if (a->qk_mode < 0 || a->qk_mode > 3)
		FAIL("qk_matmul_output_mode %d", a->qk_mode);
	if (a->qk_mode == 2 && !a->mask && !a->causal)
		a->qk_mode = 1;
	if (a->qk_mode == 1 && a->softcap <= 0)
		a->qk_mode = 0;
	return 1;
}

static int read_ms(struct rw_ctx *c, const struct ir_node *n, struct attn *a, char *why,
		   size_t size)
{
	int64_t nh = rw_attr_int(n, "num_heads", 0), vh, vs, kd;
	const struct ir_vtype *mt;

	a->ms = 1;
	a->q = in_at(n, 0), a->k = in_at(n, 1), a->v = in_at(n, 2), a->bias = in_at(n, 3);
	a->mask = in_at(n, 4), a->abias = in_at(n, 5), a->pk = in_at(n, 6), a->pv = in_at(n, 7);
	if (in_at(n, 8) || in_at(n, 9))
		FAIL("past_sequence_length or cache_indirection is given");
	if (!a->q || !a->k || !a->v || rw_rank(c, a->q) != 3 || rw_rank(c, a->k) != 3 ||
	    rw_rank(c, a->v) != 3)
		FAIL("not separate 3-D query, key and value");
	a->rank = 3;
	if (!heads_of(c, a->q, 3, nh, &a->hq, &a->d, &a->s) ||
	    !heads_of(c, a->k, 3, nh, &a->hkv, &kd, &a->l) ||
	    !heads_of(c, a->v, 3, nh, &vh, &a->dv, &vs) || kd != a->d || vs != a->l)
		FAIL("num_heads or the hidden sizes are not static, or they or the lengths "
		     "disagree");
	if (!a->pk != !a->pv)
		FAIL("only one of past_key and past_value is given");
	a->p = 0;
	if (a->pk) {
		const struct ir_vtype *pt = rw_type(c, a->pk);

		a->p = dim_of(pt, 2);
		if (!pt || pt->rank != 4 || dim_of(pt, 3) != a->d)
			FAIL("past_key is not [B, num_heads, P, head size]");
	}
	if (a->bias && rw_static_numel(c, a->bias) != (double)(nh * (2 * a->d + a->dv)))
		FAIL("bias is not 1-D of the three hidden sizes");
	if (a->mask) {
		mt = rw_type(c, a->mask);
		if (!mt || mt->rank != 2 || a->l < 0 || a->p < 0 || dim_of(mt, 1) != a->p + a->l)
			FAIL("key_padding_mask is not 2-D [B, total length]");
	}
	if (a->abias && rw_rank(c, a->abias) != 4)
		FAIL("attention_bias is not 4-D");
	a->causal = rw_attr_int(n, "unidirectional", 0) != 0;
	if (a->causal && (a->s < 0 || a->l < 0 || a->p < 0))
		FAIL("unidirectional with dynamic sequence lengths");
	a->scale = ir_node_attr(n, "scale") ? rw_attr_float(n, "scale", 1) : 1 / sqrt((double)a->d);
	a->filter = rw_attr_float(n, "mask_filter_value", -10000.0f);
	/* onnxruntime's qk output holds the scores with the masks and the
	 * attention bias added */
	a->qk_mode = a->mask || a->causal || a->abias ? 2 : 0;
	return 1;
}

static int attn_read(struct rw_ctx *c, const struct ir_node *n, struct attn *a, char *why,
		     size_t size)
{
	memset(a, 0, sizeof(*a));
	if (!n->n_outputs || !n->outputs[0])
		FAIL("output 0 is absent");
	if (!strcmp(ir_s(n->domain), "com.microsoft"))
		return read_ms(c, n, a, why, size);
	return read_onnx(c, n, a, why, size);
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct attn a;

	if (!rw_check_float_input(c, n, 13, why, size))
		return 0;
	return attn_read(c, n, &a, why, size);
}

static int needs(const struct attn *a)
{
	return (a->ms && a->mask ? F_PAD : 0) | (a->bool_mask ? F_BOOL : 0) |
	       (a->hq != a->hkv ? F_SHARE : 0) | (a->softcap > 0 ? F_CAP : 0);
}

static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	struct attn a;
	char why[8];

	if (rw_is_probe(n))
		return 1;
	if (!attn_read(c, n, &a, why, sizeof(why)))
		return 1;
	return (needs(&a) & ~covers[v]) == 0;
}

/* [B, S, h*d] (+ bias slice) as [B, h, S, d], written to out when given */
static struct ir_value *split_heads(struct rw_emit *e, struct ir_value *x, struct ir_value *bias,
				    int64_t lo, int64_t hi, int64_t h, int64_t d,
				    struct ir_value *out)
{
	int64_t shape[4] = { 0, 0, h, d }, perm[4] = { 0, 2, 1, 3 }, axis = 0;

	if (bias)
		x = rw_op(e, "Add", x, rw_slice(e, bias, &lo, &hi, &axis, NULL, 1, NULL));
	return rw_transpose(e, rw_reshape(e, x, shape, 4, NULL), perm, 4, out);
}

static struct ir_value *concat_seq(struct rw_emit *e, struct ir_value *past, struct ir_value *x,
				   struct ir_value *out)
{
	struct ir_value *in[2] = { past, x };
	struct ir_node *n = rw_node(e, "Concat", NULL, in, 2, out);

	if (n && ir_node_set_int(n, "axis", 2) < 0)
		e->failed = 1;
	return n ? n->outputs[0] : NULL;
}

static struct ir_value *add_bias(struct rw_emit *e, struct ir_value *acc, struct ir_value *b)
{
	return acc ? rw_op(e, "Add", acc, b) : b;
}

/* The additive bias of the node, NULL when none: where a key is masked,
 * the lowest finite value (causal, boolean masks) or mask_filter_value
 * (key_padding_mask), as onnxruntime computes them. */
static struct ir_value *emit_bias(struct rw_emit *e, const struct attn *a)
{
	struct ir_value *b = NULL, *causal = NULL;
	double low = rw_attn_lowest(e->dtype);
	int64_t t = a->p + a->l;

	if (a->causal)
		causal = rw_causal_const(e, a->s, t, a->p, 0, low);
	if (a->ms) {
		if (a->mask) {
			/* [B, T] nonzero kept -> [B, 1, 1, T] of (1 - keep) filter */
			int64_t axes[2] = { 1, 2 };
			struct ir_node *c1 = rw_node(e, "Cast", NULL, &a->mask, 1, NULL), *c2;
			struct ir_value *keep;

			if (c1 && ir_node_set_int(c1, "to", IR_DTYPE_BOOL) < 0)
				e->failed = 1;
			c2 = c1 ? rw_node(e, "Cast", NULL, &c1->outputs[0], 1, NULL) : NULL;
			if (c2 && ir_node_set_int(c2, "to", e->dtype) < 0)
				e->failed = 1;
			keep = c2 ? rw_unsqueeze(e, c2->outputs[0], axes, 2) : NULL;
			b = rw_op(e, "Mul", rw_op(e, "Sub", rw_scalar(e, e->dtype, 1), keep),
				  rw_scalar(e, e->dtype, a->filter));
		}
		if (causal)
			b = add_bias(e, b, causal);
		if (a->abias)
			b = add_bias(e, b, a->abias);
		return b;
	}
	if (a->mask && a->bool_mask) {
		/* one Where: the causal mask's lowest plus the lowest would
		 * overflow */
		struct ir_value *in[3] = { a->mask, causal ? causal : rw_scalar(e, e->dtype, 0),
					   rw_scalar(e, e->dtype, low) };
		struct ir_node *w = rw_node(e, "Where", NULL, in, 3, NULL);

		return w ? w->outputs[0] : NULL;
	}
	if (a->mask)
		b = a->mask;
	return causal ? add_bias(e, b, causal) : b;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct attn a;
	struct rw_emit e;
	struct rw_sdpa s;
	struct ir_value *pres_k = used(n, 1) ? n->outputs[1] : NULL;
	struct ir_value *pres_v = used(n, 2) ? n->outputs[2] : NULL;
	struct ir_value *qk = used(n, 3) ? n->outputs[3] : NULL, *y;
	int64_t hd[3] = { 0, 0, 0 };
	char why[160];

	(void)v;
	if (!attn_read(c, n, &a, why, sizeof(why)))
		return ir_diag_error(c->d, IR_EINVAL, "node '%s' (%s): %s", ir_s(n->name),
				     ir_s(n->op_type), why);
	memset(&s, 0, sizeof(s));
	rw_begin(c, n, &e);
	if (a.ms) {
		int64_t h = a.hq * a.d;

		s.q = split_heads(&e, a.q, a.bias, 0, h, a.hq, a.d, NULL);
		s.k = split_heads(&e, a.k, a.bias, h, 2 * h, a.hkv, a.d, a.pk ? NULL : pres_k);
		s.v = split_heads(&e, a.v, a.bias, 2 * h, 2 * h + a.hkv * a.dv, a.hkv, a.dv,
				  a.pv ? NULL : pres_v);
	} else if (a.rank == 3) {
		s.q = split_heads(&e, a.q, NULL, 0, 0, a.hq, a.d, NULL);
		s.k = split_heads(&e, a.k, NULL, 0, 0, a.hkv, a.d, a.pk ? NULL : pres_k);
		s.v = split_heads(&e, a.v, NULL, 0, 0, a.hkv, a.dv, a.pv ? NULL : pres_v);
	} else {
		s.q = a.q, s.k = a.k, s.v = a.v;
	}
	if (a.pk) {
		s.k = concat_seq(&e, a.pk, s.k, pres_k);
		s.v = concat_seq(&e, a.pv, s.v, pres_v);
	}
	s.hq = a.hq, s.hkv = a.hkv, s.d = a.d, s.dv = a.dv;
	s.scale = a.scale;
	s.softcap = a.softcap;
	s.bias = emit_bias(&e, &a);
	s.qk = qk;
	s.qk_mode = a.qk_mode;
	s.out = a.rank == 4 ? n->outputs[0] : NULL;
	y = rw_sdpa_emit(&e, &s);
	if (a.rank == 3) {
		int64_t perm[4] = { 0, 2, 1, 3 };

		hd[2] = -1;
		rw_reshape(&e, rw_transpose(&e, y, perm, 4, NULL), hd, 3, n->outputs[0]);
	}
	return rw_end(&e, 0);
}

static const char *const matches[] = {
	"Attention", "com.microsoft:MultiHeadAttention", NULL
};
RW_DECOMPOSITION(attention, "attention",
		 "Attention (ai.onnx 23) and MultiHeadAttention (com.microsoft) as MatMul, Softmax and MatMul over heads, with Reshape, Transpose, Concat of the past, Expand of shared kv heads and additive masks",
		 matches, variants, check, vcheck, apply);
