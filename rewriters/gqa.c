/* gqa.c: com.microsoft GroupQueryAttention as standard ops (opset >= 13):
 * the checks, the pass and its static path (static shapes, the new rows
 * after all past rows: cos/sin rows Sliced, Concat of the past, a
 * constant causal mask); gqa_dyn.c builds the run-time path's positions,
 * present and mask.  Both share Q/K/V to BNSH, rw_rope_emit and
 * rw_sdpa_emit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/gqa_int.h"

enum { V_PLAIN, V_ROPE, V_ROPE_GATHER, V_DYN, V_DYN_GATHER };

/* The heads: num_heads a multiple of kv_num_heads, a 3-D query whose
 * static last dim splits into them; 1 and g's head counts and head size
 * (the rest unknown), else 0 and why. */
static int gqa_heads(struct rw_ctx *c, const struct ir_node *n, struct gqa_dims *g, char *why,
		     size_t size)
{
	const struct ir_vtype *t = rw_type(c, n->inputs[0]);
	int64_t heads;

	memset(g, 0, sizeof(*g));
	g->b = g->s = g->pm = -1;
	g->nh = rw_attr_int(n, "num_heads", 0), g->kvh = rw_attr_int(n, "kv_num_heads", 0);
	if (g->nh <= 0 || g->kvh <= 0 || g->nh % g->kvh) {
		snprintf(why, size, "num_heads is not a positive multiple of kv_num_heads");
		return 0;
	}
	if (!t || t->rank != 3 || t->dims[2].kind != IR_VDIM_VALUE) {
		snprintf(why, size, "the query is not 3-D with a static hidden size");
		return 0;
	}
	heads = gqa_has(n, 1) ? g->nh : g->nh + 2 * g->kvh;
	if (t->dims[2].value <= 0 || t->dims[2].value % heads) {
		snprintf(why, size, "the query does not split into heads");
		return 0;
	}
	g->d = t->dims[2].value / heads;
	return 1;
}

/* The run-time path computes positions and indices in int64: the first
 * of its int64 ops the target does not take, else NULL. */
static const char *dyn_refused(const struct rw_ctx *c)
{
	static const char *const ops[] = {
		"Add", "Sub", "Less", "Range", "Where", "Equal", "Min", "Max", "Gather", "Expand",
		"Reshape", "Unsqueeze", NULL,
	};

	for (const char *const *op = ops; *op; op++)
		if (!rw_target_accepts(c, "", *op, IR_DTYPE_INT64))
			return *op;
	return NULL;
}

/* seqlens_k: onnxruntime places the new rows of batch entry b after
 * seqlens_k[b] + 1 - S past rows, except in the first prompt (S equal to
 * total_sequence_length), where it reads no past; in both it masks the
 * keys after seqlens_k[b] (key_mask, from the input itself).  The Concat
 * and the constant causal mask put the new rows after all pm past rows:
 * exact for a prompt, and after a past when seqlens_k is total - 1 in
 * every entry: a constant seqlens_k that holds it, or a computed one in a
 * batch of 1 (a lone sequence is not padded, as decoders feed it).  A
 * batch of several after a past takes the run-time path, exact with
 * padding; where the target takes none of its int64 arithmetic, the
 * static one taking seqlens_k as total - 1 (g->assumed, which apply
 * notes). */
static int gqa_seqlens(struct rw_ctx *c, const struct ir_node *n, struct gqa_dims *g,
		       char *why, size_t size)
{
	int64_t sl[64];
	size_t k;

	if (!g->pm)
		return 1;
	if (!rw_const_ints(c, n->inputs[5], sl, 64, &k)) {
		if (g->b == 1)
			return 1;
		if (dyn_refused(c)) {
			g->assumed = 1;
			return 1;
		}
		snprintf(why, size, "seqlens_k is computed after a past in a batch of %lld "
			 "(entries may be padded)", (long long)g->b);
		return 0;
	}
	for (size_t i = 0; i < k; i++)
		if (sl[i] != g->pm + g->s - 1) {
			snprintf(why, size, "seqlens_k[%zu] = %lld pads a batch entry after a past "
				 "(the new rows would not follow all %lld past rows)", i,
				 (long long)sl[i], (long long)g->pm);
			return 0;
		}
	return 1;
}

/* do_rotary: 2-D cos_cache and sin_cache of one shape (rows, rot / 2)
 * with a static width, rot <= head; the rows, where static, reach the
 * positions where those are known: the past rows + S (static dims) or a
 * constant total_sequence_length (which onnxruntime requires). */
static int gqa_rotary(struct rw_ctx *c, const struct ir_node *n, struct gqa_dims *g, char *why,
		      size_t size)
{
	const struct ir_vtype *cs, *sn;
	int64_t reach = -1, tot, rows;
	size_t k;

	g->rot = 0;
	if (!rw_attr_int(n, "do_rotary", 0))
		return 1;
	if (!gqa_has(n, 7) || !gqa_has(n, 8) || !(cs = rw_type(c, n->inputs[7])) ||
	    !(sn = rw_type(c, n->inputs[8])) || cs->rank != 2 || sn->rank != 2 ||
	    cs->dims[1].kind != IR_VDIM_VALUE || !rw_dim_same(&cs->dims[1], &sn->dims[1]) ||
	    (cs->dims[0].kind == IR_VDIM_VALUE && sn->dims[0].kind == IR_VDIM_VALUE &&
	     cs->dims[0].value != sn->dims[0].value)) {
		snprintf(why, size, "do_rotary without 2-D cos_cache and sin_cache of one shape "
			 "(rows, static width)");
		return 0;
	}
	if (cs->dims[1].value <= 0 || 2 * cs->dims[1].value > g->d ||
	    2 * cs->dims[1].value > RW_ROPE_MAX_ROT) {
		snprintf(why, size, "the rotary caches' width %lld does not fit head size %lld",
			 (long long)cs->dims[1].value, (long long)g->d);
		return 0;
	}
	if (g->s >= 0 && g->pm >= 0)
		reach = g->pm + g->s;
	else if (rw_const_ints(c, n->inputs[6], &tot, 1, &k) && k == 1)
		reach = tot;
	rows = cs->dims[0].kind == IR_VDIM_VALUE ? cs->dims[0].value :
	       sn->dims[0].kind == IR_VDIM_VALUE ? sn->dims[0].value : -1;
	if (rows >= 0 && rows < reach) {
		snprintf(why, size, "the rotary caches have %lld rows, positions reach %lld",
			 (long long)rows, (long long)reach);
		return 0;
	}
	g->rot = 2 * cs->dims[1].value;
	return 1;
}

/* The static path's conditions (after gqa_heads): 1 and g's batch,
 * sequence and past rows, else 0 and why. */
static int gqa_static(struct rw_ctx *c, const struct ir_node *n, struct gqa_dims *g,
		      char *why, size_t size)
{
	int64_t q[8], p[8], tot;
	int rq, rp;
	size_t k;

	if (!rw_static_shape(c, n->inputs[0], q, &rq) || rq != 3) {
		snprintf(why, size, "the query's shape is not static");
		return 0;
	}
	g->b = q[0], g->s = q[1], g->pm = 0;
	if (gqa_has(n, 3)) {
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

/* A dim of t known to differ from want */
static int dim_differs(const struct ir_vtype *t, int i, int64_t want)
{
	return t->dims[i].kind == IR_VDIM_VALUE && t->dims[i].value != want;
}

/* The run-time path's conditions (after gqa_heads): a 4-D past with
 * kv_num_heads heads of the head size where its dims are static, a 1-D
 * seqlens_k, a one-element total_sequence_length (ranks where known);
 * 1 and g (batch, sequence and past rows unknown), else 0 and why. */
static int gqa_dynamic(struct rw_ctx *c, const struct ir_node *n, struct gqa_dims *g,
		       char *why, size_t size)
{
	const struct ir_vtype *t;
	const char *op;

	g->b = g->s = g->pm = -1;
	if ((op = dyn_refused(c))) {
		snprintf(why, size, "the shapes or seqlens_k are not static, and the target takes "
			 "no int64 %s to compute positions at run time", op);
		return 0;
	}
	if (gqa_has(n, 3)) {
		const struct ir_vtype *q = rw_type(c, n->inputs[0]);

		if (!(t = rw_type(c, n->inputs[3])) || t->rank != 4 || dim_differs(t, 1, g->kvh) ||
		    dim_differs(t, 3, g->d)) {
			snprintf(why, size, "past_key is not 4-D (B, kv_num_heads, P, head)");
			return 0;
		}
		if (q && q->dims[1].kind == IR_VDIM_VALUE && t->dims[2].kind == IR_VDIM_VALUE)
			g->s = q->dims[1].value, g->pm = t->dims[2].value;
	}
	if ((t = rw_type(c, n->inputs[5])) && t->rank >= 0 && t->rank != 1) {
		snprintf(why, size, "seqlens_k is not 1-D");
		return 0;
	}
	if ((t = rw_type(c, n->inputs[6])) && (t->rank > 1 || (t->rank == 1 &&
						dim_differs(t, 0, 1)))) {
		snprintf(why, size, "total_sequence_length is not one element");
		return 0;
	}
	if (!gqa_rotary(c, n, g, why, size))
		return 0;
	g->s = g->pm = -1;
	return 1;
}

/* The path node n takes: 1 static, 0 run-time, -1 neither (why says why
 * not the run-time one). */
static int gqa_path(struct rw_ctx *c, const struct ir_node *n, struct gqa_dims *g, char *why,
		    size_t size)
{
	if (!gqa_heads(c, n, g, why, size))
		return -1;
	if (gqa_static(c, n, g, why, size))
		return 1;
	if (!gqa_heads(c, n, g, why, size) || !gqa_dynamic(c, n, g, why, size))
		return -1;
	return 0;
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
		if (gqa_has(n, i)) {
			snprintf(why, size, "input %zu is not lowered", i);
			return 0;
		}
	if (!gqa_has(n, 0) || !gqa_has(n, 5) || !gqa_has(n, 6) || gqa_has(n, 1) != gqa_has(n, 2) ||
	    gqa_has(n, 3) != gqa_has(n, 4)) {
		snprintf(why, size, "query, seqlens_k or total_sequence_length absent, or "
			 "key/value or past_key/past_value not in pairs");
		return 0;
	}
	if (n->n_outputs > 3 && rw_value_used(n->outputs[3])) {
		snprintf(why, size, "output_qk is used");
		return 0;
	}
	return gqa_path(c, n, &g, why, size) >= 0;
}

/* x (B, S, h * d) to (B, h, S, d); unknown B and S copied (Reshape's 0) */
static struct ir_value *to_bnsh(struct rw_emit *e, struct ir_value *x, const struct gqa_dims *g,
				int64_t h)
{
	static const int64_t perm[4] = { 0, 2, 1, 3 };
	int64_t shape[4] = { g->b < 0 ? 0 : g->b, g->s < 0 ? 0 : g->s, h, g->d };

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

/* The static path's mask [B, 1, S, T]: query row i sits at position pm
 * + i, keys after it (and with a window keys at or before pm + i -
 * window) are masked by a constant [S, T]; onnxruntime also masks an
 * entry's keys past seqlens_k[b] (the padded rows of a right-padded
 * prompt see only its valid keys; after a past the causal mask implies
 * it): Where(Less(seqlens_k as [B, 1, 1, 1], 0 .. T - 1), lowest,
 * causal). */
static struct ir_value *static_mask(struct rw_ctx *c, struct rw_emit *e, const struct ir_node *n,
				    const struct gqa_dims *g, int64_t window, double lowest)
{
	const struct ir_vtype *st = rw_type(c, n->inputs[5]);
	int64_t t = g->pm + g->s, shape[4] = { g->b, 1, 1, 1 };
	struct ir_value *in[3];
	struct ir_node *w;
	double *mask, *j;

	mask = malloc((size_t)(g->s * t + 1) * sizeof(double));
	j = malloc((size_t)(t + 1) * sizeof(double));
	if (!mask || !j) {
		free(mask);
		free(j);
		e->failed = 1;
		return NULL;
	}
	for (int64_t i = 0; i < g->s; i++)
		for (int64_t k = 0; k < t; k++)
			mask[i * t + k] = k > g->pm + i || (window > 0 && k <= g->pm + i - window) ?
					  lowest : 0;
	for (int64_t i = 0; i < t; i++)
		j[i] = (double)i;
	in[0] = rw_op(e, "Less", rw_reshape(e, n->inputs[5], shape, 4, NULL),
		      rw_const(e, st && st->dtype == IR_DTYPE_INT64 ? IR_DTYPE_INT64 :
			       IR_DTYPE_INT32, 1, &t, j));
	in[1] = rw_scalar(e, e->dtype, lowest);
	in[2] = rw_const(e, e->dtype, 2, (int64_t[]){ g->s, t }, mask);
	free(mask);
	free(j);
	w = rw_node(e, "Where", NULL, in, 3, NULL);
	return w ? w->outputs[0] : NULL;
}

static int apply_gqa(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct gqa_dims g;
	struct gqa_run r;
	struct rw_sdpa a;
	struct ir_value *q, *k, *vv, *y, *pk_out, *pv_out;
	struct ir_value *pk = gqa_has(n, 3) ? n->inputs[3] : NULL;
	struct ir_value *pv = gqa_has(n, 4) ? n->inputs[4] : NULL;
	int64_t window = rw_attr_int(n, "local_window_size", -1), shape[3];
	int64_t back[4] = { 0, 2, 1, 3 };
	int dt = rw_node_dtype(c, n), dyn = v == V_DYN || v == V_DYN_GATHER;
	float scale = rw_attr_float(n, "scale", 0);
	double lowest = rw_attn_lowest(dt);
	char why[160];

	if (gqa_path(c, n, &g, why, sizeof(why)) != !dyn)
		return IR_EINVAL;
	if (g.assumed && rw_note(c, "group-query-attention: node '%s': seqlens_k taken to be "
				 "total_sequence_length - 1 in each of its %lld entries (none "
				 "padded after a past): the target takes no int64 %s for the "
				 "run-time positions", n->name ? n->name : "", (long long)g.b,
				 dyn_refused(c)) < 0)
		return IR_ENOMEM;
	pk_out = n->n_outputs > 1 && rw_value_used(n->outputs[1]) ? n->outputs[1] : NULL;
	pv_out = n->n_outputs > 2 && rw_value_used(n->outputs[2]) ? n->outputs[2] : NULL;
	rw_begin(c, n, &e);
	q = n->inputs[0];
	if (gqa_has(n, 1)) {
		k = n->inputs[1], vv = n->inputs[2];
	} else {
		int64_t ax[1] = { 2 }, s0[1] = { 0 }, e0[1] = { g.nh * g.d };
		int64_t s1[1] = { g.nh * g.d }, e1[1] = { (g.nh + g.kvh) * g.d };
		int64_t s2[1] = { (g.nh + g.kvh) * g.d }, e2[1] = { (g.nh + 2 * g.kvh) * g.d };

		k = rw_slice(&e, q, s1, e1, ax, NULL, 1, NULL);
		vv = rw_slice(&e, q, s2, e2, ax, NULL, 1, NULL);
		q = rw_slice(&e, q, s0, e0, ax, NULL, 1, NULL);
	}
	if (dyn)
		gqa_run_init(c, &e, n, &g, &r);
	q = to_bnsh(&e, q, &g, g.nh);
	k = to_bnsh(&e, k, &g, g.kvh);
	vv = to_bnsh(&e, vv, &g, g.kvh);
	if (g.rot) {
		int il = !rw_attr_int(n, "rotary_interleaved", 0) ? 0 :
			 v == V_ROPE_GATHER || v == V_DYN_GATHER ? 2 : 1;
		struct ir_value *cs, *sn;

		cs = dyn ? gqa_run_rows(&e, &r, n->inputs[7]) : rows(&e, n->inputs[7], &g);
		sn = dyn ? gqa_run_rows(&e, &r, n->inputs[8]) : rows(&e, n->inputs[8], &g);
		q = rw_rope_emit(&e, q, cs, sn, dyn ? 4 : 2, g.d, g.rot, il, NULL);
		k = rw_rope_emit(&e, k, cs, sn, dyn ? 4 : 2, g.d, g.rot, il, NULL);
	}
	memset(&a, 0, sizeof(a));
	a.q = q;
	a.k = dyn ? gqa_run_present(&e, &r, pk, k, pk_out) : present(&e, pk, k, pk_out);
	a.v = dyn ? gqa_run_present(&e, &r, pv, vv, pv_out) : present(&e, pv, vv, pv_out);
	a.hq = g.nh, a.hkv = g.kvh, a.d = a.dv = g.d;
	a.scale = scale != 0 ? scale : 1 / sqrt((double)g.d);
	a.softcap = rw_attr_float(n, "softcap", 0);
	a.bias = dyn ? gqa_run_mask(&e, &r, window, lowest) :
		 static_mask(c, &e, n, &g, window, lowest);
	y = rw_sdpa_emit(&e, &a);
	shape[0] = dyn ? 0 : g.b, shape[1] = dyn ? 0 : g.s, shape[2] = g.nh * g.d;
	rw_reshape(&e, rw_transpose(&e, y, back, 4, NULL), shape, 3, n->outputs[0]);
	return rw_end(&e, 0);
}

/* The static path: without do_rotary the plain ops; interleaved pairs as
 * a rank-5 view, or by Gather at rank 4 where the target stops there.
 * The run-time path likewise (its own ops at rank 4). */
static int vcheck_gqa(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int max_rank = c->target ? c->target->max_rank : -1, path, inter;
	struct gqa_dims g;
	char why[160];

	if (rw_is_probe(n))
		return 1;
	path = gqa_path(c, n, &g, why, sizeof(why));
	inter = rw_attr_int(n, "do_rotary", 0) && rw_attr_int(n, "rotary_interleaved", 0);
	if (path == 0)
		return v == V_DYN_GATHER ? inter :
		       v == V_DYN && (!inter || max_rank < 0 || max_rank >= 5);
	if (!rw_attr_int(n, "do_rotary", 0))
		return v == V_PLAIN;
	if (!inter)
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
static const char *const dyn_ops[] = {
	"Shape", "Gather", "Cast", "Range", "Equal", "Max", "Min", "GatherElements", "Slice",
	"Reshape", "Transpose", "Concat", "Identity", "Unsqueeze", "Expand", "MatMul", "Mul",
	"Div", "Tanh", "Add", "Sub", "Less", "Where", "Softmax", NULL,
};
static const struct rw_variant v_gqa[] = {
	{ "matmul-softmax", gqa_ops },
	{ "rotary", rope_ops },
	{ "rotary-gather", rope_gather_ops },
	{ "dynamic", dyn_ops },
	{ "dynamic-gather", dyn_ops },
};
RW_DECOMPOSITION(group_query_attention, "group-query-attention",
		 "GroupQueryAttention as MatMul, causal mask, Softmax and head repeats: static shapes with total_sequence_length the past + S by Concat of the past and constant masks, symbolic dims and run-time seqlens_k by positions, present (GatherElements) and masks built from Shape, Range, Less and Where; do_rotary as the cos/sin rows at the positions (Slice or Gather) and the rotated halves or pairs",
		 m_gqa, v_gqa, check_gqa, vcheck_gqa, apply_gqa);
