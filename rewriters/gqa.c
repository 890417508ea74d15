/* gqa.c: com.microsoft GroupQueryAttention as standard ops (opset >= 13),
 * for static shapes and a constant total_sequence_length equal to the
 * past's rows + S: Q, K, V (sliced from a packed query) reshaped and
 * transposed to BNSH; with do_rotary, Q and K rotated at positions
 * pm + i by the cos/sin rows Sliced from the caches (rw_rope_emit: halves
 * or interleaved pairs, partial when the caches are narrower than head /
 * 2); present = Concat(past, new) on the sequence axis; attention by
 * rw_sdpa_emit with a constant causal (and local window) mask, keys after
 * seqlens_k masked by Less and Where.  See gqa_seqlens for what seqlens_k
 * must hold. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/attn_build.h"

static int has(const struct ir_node *n, size_t i)
{
	return n->n_inputs > i && n->inputs[i];
}

enum { V_PLAIN, V_ROPE, V_ROPE_GATHER };

struct gqa_dims {
	int64_t b, s, nh, kvh, d, pm;
	int64_t rot;                   /* rotary features (do_rotary), else 0 */
};

/* seqlens_k: onnxruntime places the new rows of batch entry b after
 * seqlens_k[b] + 1 - S past rows, except in the first prompt (S equal to
 * total_sequence_length), where it reads no past; in both it masks the
 * keys after seqlens_k[b] (key_mask, from the input itself).  The Concat
 * and the constant causal mask put the new rows after all pm past rows:
 * exact for a prompt, and after a past when seqlens_k is total - 1 in
 * every entry (no padding, as exporters feed it).  A constant seqlens_k
 * that says otherwise is refused; a computed one is taken to hold total
 * - 1 after a past. */
static int gqa_seqlens(struct rw_ctx *c, const struct ir_node *n, const struct gqa_dims *g,
		       char *why, size_t size)
{
	int64_t sl[64];
	size_t k;

	if (!g->pm || !rw_const_ints(c, n->inputs[5], sl, 64, &k))
		return 1;
	for (size_t i = 0; i < k; i++)
		if (sl[i] != g->pm + g->s - 1) {
			snprintf(why, size, "seqlens_k[%zu] = %lld pads a batch entry after a past "
				 "(the new rows would not follow all %lld past rows)", i,
				 (long long)sl[i], (long long)g->pm);
			return 0;
		}
	return 1;
}

/* do_rotary: 2-D cos_cache and sin_cache of (rows, rot / 2), rot <= head,
 * with rows for positions up to pm + S - 1. */
static int gqa_rotary(struct rw_ctx *c, const struct ir_node *n, struct gqa_dims *g, char *why,
		      size_t size)
{
	int64_t cs[8], sn[8];
	int rc, rs;

	g->rot = 0;
	if (!rw_attr_int(n, "do_rotary", 0))
		return 1;
	if (!has(n, 7) || !has(n, 8) || !rw_static_shape(c, n->inputs[7], cs, &rc) ||
	    !rw_static_shape(c, n->inputs[8], sn, &rs) || rc != 2 || rs != 2 ||
	    cs[0] != sn[0] || cs[1] != sn[1]) {
		snprintf(why, size, "do_rotary without 2-D cos_cache and sin_cache of one static "
			 "shape");
		return 0;
	}
	if (cs[1] <= 0 || 2 * cs[1] > g->d || 2 * cs[1] > RW_ROPE_MAX_ROT) {
		snprintf(why, size, "the rotary caches' width %lld does not fit head size %lld",
			 (long long)cs[1], (long long)g->d);
		return 0;
	}
	if (cs[0] < g->pm + g->s) {
		snprintf(why, size, "the rotary caches have %lld rows, positions reach %lld",
			 (long long)cs[0], (long long)(g->pm + g->s));
		return 0;
	}
	g->rot = 2 * cs[1];
	return 1;
}

/* The static shapes and constants apply() needs: 1 and g filled, else 0
 * and why. */
static int gqa_shapes(struct rw_ctx *c, const struct ir_node *n, struct gqa_dims *g,
		      char *why, size_t size)
{
	int64_t q[8], p[8], tot;
	int rq, rp;
	size_t k;

	g->nh = rw_attr_int(n, "num_heads", 0), g->kvh = rw_attr_int(n, "kv_num_heads", 0);
	if (g->nh <= 0 || g->kvh <= 0 || g->nh % g->kvh) {
		snprintf(why, size, "num_heads is not a positive multiple of kv_num_heads");
		return 0;
	}
	if (!rw_static_shape(c, n->inputs[0], q, &rq) || rq != 3) {
		snprintf(why, size, "the query's shape is not static");
		return 0;
	}
	g->b = q[0], g->s = q[1];
	if (q[2] % (has(n, 1) ? g->nh : g->nh + 2 * g->kvh)) {
		snprintf(why, size, "the query does not split into heads");
		return 0;
	}
	g->d = q[2] / (has(n, 1) ? g->nh : g->nh + 2 * g->kvh);
	g->pm = 0;
	if (has(n, 3)) {
		if (!rw_static_shape(c, n->inputs[3], p, &rp) || rp != 4 || p[0] != g->b ||
		    p[1] != g->kvh || p[3] != g->d) {
			snprintf(why, size, "past_key's shape is not a static (B, kv_num_heads, P, head)");
			return 0;
		}
		g->pm = p[2];
	}
	if (!rw_const_ints(c, n->inputs[6], &tot, 1, &k) || k != 1 || tot != g->pm + g->s) {
		snprintf(why, size, "total_sequence_length is not the constant past rows + S");
		return 0;
	}
	return gqa_seqlens(c, n, g, why, size) && gqa_rotary(c, n, g, why, size);
}

static int check_gqa(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct gqa_dims g;

	if (c->opset < 13) {
		snprintf(why, size, "needs opset >= 13");
		return 0;
	}
	if (!rw_dtype_is_float(rw_node_dtype(c, n))) {
		snprintf(why, size, "only for float data");
		return 0;
	}
	if (rw_attr_int(n, "smooth_softmax", 0) || rw_attr_int(n, "causal", 1) != 1 ||
	    rw_attr_int(n, "sliding_window_cache", 0) || rw_attr_int(n, "qk_output", 0) ||
	    strcmp(rw_attr_str(n, "k_quant_type", "NONE"), "NONE") ||
	    strcmp(rw_attr_str(n, "v_quant_type", "NONE"), "NONE")) {
		snprintf(why, size, "smooth_softmax, causal=0, a windowed or quantized cache or "
			 "qk_output is not lowered");
		return 0;
	}
	for (size_t i = 9; i < n->n_inputs; i++)
		if (has(n, i)) {
			snprintf(why, size, "input %zu is not lowered", i);
			return 0;
		}
	if (!has(n, 0) || !has(n, 5) || !has(n, 6) || has(n, 1) != has(n, 2) ||
	    has(n, 3) != has(n, 4)) {
		snprintf(why, size, "query, seqlens_k or total_sequence_length absent, or "
			 "key/value or past_key/past_value not in pairs");
		return 0;
	}
	if (n->n_outputs > 3 && rw_value_used(n->outputs[3])) {
		snprintf(why, size, "output_qk is used");
		return 0;
	}
	return gqa_shapes(c, n, &g, why, size);
}

/* x (B, S, h * d) to (B, h, S, d) */
static struct ir_value *to_bnsh(struct rw_emit *e, struct ir_value *x, const struct gqa_dims *g,
				int64_t h)
{
	static const int64_t perm[4] = { 0, 2, 1, 3 };
	int64_t shape[4] = { g->b, g->s, h, g->d };

	return rw_transpose(e, rw_reshape(e, x, shape, 4, NULL), perm, 4, NULL);
}

/* Concat(past, cur) on axis 2 into out (NULL: fresh), or cur itself. */
static struct ir_value *present(struct rw_emit *e, struct ir_value *past, struct ir_value *cur,
				struct ir_value *out)
{
	struct ir_value *in[2] = { past, cur };
	struct ir_node *cat;

	if (!past)
		return out ? rw_op_to(e, "Identity", cur, NULL, out) : cur;
	cat = rw_node(e, "Concat", NULL, in, 2, out);
	if (!cat || ir_node_set_int(cat, "axis", 2) < 0) {
		e->failed = 1;
		return NULL;
	}
	return cat->outputs[0];
}

/* The cos/sin rows of positions pm .. pm + S - 1 ([S, half]: Slice of
 * the cache's rows), which broadcast over [B, h, S, half]. */
static struct ir_value *rows(struct rw_emit *e, struct ir_value *cache, const struct gqa_dims *g)
{
	int64_t ax[1] = { 0 }, s0[1] = { g->pm }, e0[1] = { g->pm + g->s };

	return rw_slice(e, cache, s0, e0, ax, NULL, 1, NULL);
}

/* The causal mask [S, T] where key j of entry b lies within seqlens_k[b]
 * + 1, lowest after: onnxruntime masks an entry's keys past its length
 * (the padded rows of a right-padded prompt see only its valid keys;
 * after a past the causal mask implies it).  Where(Less(seqlens_k as
 * [B, 1, 1, 1], 0 .. T - 1), lowest, causal) gives [B, 1, S, T]. */
static struct ir_value *key_mask(struct rw_ctx *c, struct rw_emit *e, const struct ir_node *n,
				 const struct gqa_dims *g, struct ir_value *causal, double lowest)
{
	const struct ir_vtype *st = rw_type(c, n->inputs[5]);
	int64_t t = g->pm + g->s, shape[4] = { g->b, 1, 1, 1 };
	struct ir_value *in[3];
	struct ir_node *w;
	double *j;

	if (!(j = malloc((size_t)t * sizeof(double)))) {
		e->failed = 1;
		return NULL;
	}
	for (int64_t i = 0; i < t; i++)
		j[i] = (double)i;
	in[0] = rw_op(e, "Less", rw_reshape(e, n->inputs[5], shape, 4, NULL),
		      rw_const(e, st && st->dtype == IR_DTYPE_INT64 ? IR_DTYPE_INT64 :
			       IR_DTYPE_INT32, 1, &t, j));
	in[1] = rw_scalar(e, e->dtype, lowest);
	in[2] = causal;
	free(j);
	w = rw_node(e, "Where", NULL, in, 3, NULL);
	if (!w) {
		e->failed = 1;
		return NULL;
	}
	return w->outputs[0];
}

static int apply_gqa(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct gqa_dims g;
	struct rw_sdpa a;
	struct ir_value *q, *k, *vv, *y;
	struct ir_value *pk_out, *pv_out;
	int64_t t, window = rw_attr_int(n, "local_window_size", -1), shape[3];
	int64_t back[4] = { 0, 2, 1, 3 };
	int dt = rw_node_dtype(c, n);
	float scale = rw_attr_float(n, "scale", 0);
	double *mask, lowest = rw_attn_lowest(dt);
	char why[160];

	if (!gqa_shapes(c, n, &g, why, sizeof(why)))
		return IR_EINVAL;
	t = g.pm + g.s;
	if (!(mask = malloc((size_t)(g.s * t) * sizeof(double))))
		return IR_ENOMEM;
	/* query row i sits at position pm + i: keys after it, and with a
	 * window keys at or before pm + i - window, are masked */
	for (int64_t i = 0; i < g.s; i++)
		for (int64_t j = 0; j < t; j++)
			mask[i * t + j] = j > g.pm + i || (window > 0 && j <= g.pm + i - window) ?
					  lowest : 0;
	pk_out = n->n_outputs > 1 && rw_value_used(n->outputs[1]) ? n->outputs[1] : NULL;
	pv_out = n->n_outputs > 2 && rw_value_used(n->outputs[2]) ? n->outputs[2] : NULL;
	rw_begin(c, n, &e);
	q = n->inputs[0];
	if (has(n, 1)) {
		k = n->inputs[1], vv = n->inputs[2];
	} else {
		int64_t ax[1] = { 2 }, s0[1] = { 0 }, e0[1] = { g.nh * g.d };
		int64_t s1[1] = { g.nh * g.d }, e1[1] = { (g.nh + g.kvh) * g.d };
		int64_t s2[1] = { (g.nh + g.kvh) * g.d }, e2[1] = { (g.nh + 2 * g.kvh) * g.d };

		k = rw_slice(&e, q, s1, e1, ax, NULL, 1, NULL);
		vv = rw_slice(&e, q, s2, e2, ax, NULL, 1, NULL);
		q = rw_slice(&e, q, s0, e0, ax, NULL, 1, NULL);
	}
	q = to_bnsh(&e, q, &g, g.nh);
	k = to_bnsh(&e, k, &g, g.kvh);
	if (g.rot) {
		int il = !rw_attr_int(n, "rotary_interleaved", 0) ? 0 : v == V_ROPE_GATHER ? 2 : 1;
		struct ir_value *cs = rows(&e, n->inputs[7], &g), *sn = rows(&e, n->inputs[8], &g);

		q = rw_rope_emit(&e, q, cs, sn, 2, g.d, g.rot, il, NULL);
		k = rw_rope_emit(&e, k, cs, sn, 2, g.d, g.rot, il, NULL);
	}
	memset(&a, 0, sizeof(a));
	a.q = q;
	a.k = present(&e, has(n, 3) ? n->inputs[3] : NULL, k, pk_out);
	a.v = present(&e, has(n, 4) ? n->inputs[4] : NULL, to_bnsh(&e, vv, &g, g.kvh), pv_out);
	a.hq = g.nh, a.hkv = g.kvh, a.d = a.dv = g.d;
	a.scale = scale != 0 ? scale : 1 / sqrt((double)g.d);
	a.softcap = rw_attr_float(n, "softcap", 0);
	a.bias = key_mask(c, &e, n, &g, rw_const(&e, dt, 2, (int64_t[]){ g.s, t }, mask), lowest);
	y = rw_sdpa_emit(&e, &a);
	shape[0] = g.b, shape[1] = g.s, shape[2] = g.nh * g.d;
	rw_reshape(&e, rw_transpose(&e, y, back, 4, NULL), shape, 3, n->outputs[0]);
	free(mask);
	return rw_end(&e, 0);
}

/* Without do_rotary the plain ops; interleaved pairs as a rank-5 view, or
 * by Gather at rank 4 where the target stops there. */
static int vcheck_gqa(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int max_rank = c->target ? c->target->max_rank : -1;

	if (rw_is_probe(n))
		return 1;
	if (!rw_attr_int(n, "do_rotary", 0))
		return v == V_PLAIN;
	if (!rw_attr_int(n, "rotary_interleaved", 0))
		return v == V_ROPE;
	return v == V_ROPE_GATHER || (v == V_ROPE && (max_rank < 0 || max_rank >= 5));
}

static const char *const m_gqa[] = { "com.microsoft:GroupQueryAttention", NULL };
static const char *const gqa_ops[] = {
	"Slice", "Reshape", "Transpose", "Concat", "Identity", "Unsqueeze", "Expand", "MatMul",
	"Mul", "Div", "Tanh", "Add", "Less", "Where", "Softmax", NULL,
};
static const char *const rope_ops[] = {
	"Slice", "Reshape", "Transpose", "Concat", "Identity", "Unsqueeze", "Expand", "MatMul",
	"Mul", "Div", "Tanh", "Add", "Sub", "Less", "Where", "Softmax", NULL,
};
static const char *const rope_gather_ops[] = {
	"Slice", "Reshape", "Transpose", "Concat", "Identity", "Unsqueeze", "Expand", "MatMul",
	"Mul", "Div", "Tanh", "Add", "Sub", "Gather", "Less", "Where", "Softmax", NULL,
};
static const struct rw_variant v_gqa[] = {
	{ "matmul-softmax", gqa_ops },
	{ "rotary", rope_ops },
	{ "rotary-gather", rope_gather_ops },
};
RW_DECOMPOSITION(group_query_attention, "group-query-attention",
		 "GroupQueryAttention (static shapes, total_sequence_length the past + S) as MatMul, causal mask, Softmax, Concat and head repeats; do_rotary as Slice of the cos/sin rows and the rotated halves or pairs",
		 m_gqa, v_gqa, check_gqa, vcheck_gqa, apply_gqa);
