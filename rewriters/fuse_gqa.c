/* fuse_gqa.c: pass "fuse-gqa": a decoder layer's decomposed attention, as
 * torch exports a Llama or Qwen with a KV cache or for the prompt only,
 * fused into com.microsoft GroupQueryAttention for targets that declare
 * it for the data's dtype, float32 or float16 (torch's half export, and
 * the fp16 pass's output; bfloat16 is left decomposed with a note:
 * onnxruntime's CPU kernel, which the fusion is checked against, takes
 * float32 and float16 only):
 *   - the attention core attn_match.h matches (kv heads repeated or not;
 *     with float16 the Softmax perhaps in float32 between Casts, and the
 *     MatMuls too, as the fp16 pass keeps them for a target that takes
 *     MatMul in float16 not, and the mask added in float32 inside the
 *     Softmax's island, as it leaves a folded mask of float32's lowest:
 *     rw_attn_match_mask32), its K and V each
 *     Concat(past, new, axis 2) (the present outputs, read by the core
 *     only and perhaps Casts to float32 outputs and Shapes), or, without a past (a
 *     prefill-only export), K and V the new ones themselves, known to be
 *     as long as the queries (read by anything else too: a present
 *     output); the Q and the new K and V [B, h, S, d] Transpose([0, 2, 1,
 *     3]) of Reshape([B, S, h, d]) of the 3-D projections [B, S, h * d],
 *     which GroupQueryAttention takes (a Q or K rotated on [B, h, S, d]
 *     after that Transpose, or read elsewhere, is transposed and reshaped
 *     back: exact for any position_ids; fuse-rotary then takes the
 *     rotation onto the 3-D projection);
 *   - its output Transpose([0, 2, 1, 3]) and Reshape to [B, S, hq * d];
 * become GroupQueryAttention(query, key, value, past_key, past_value,
 * seqlens_k, total_sequence_length) with num_heads, kv_num_heads and the
 * scale; the Concats' outputs become its present outputs (without a past:
 * no past inputs, onnxruntime's first prompt, and present outputs read by
 * none).  With attention_mask, seqlens_k = Cast(ReduceSum(attention_mask,
 * 1) - 1, int32) and total_sequence_length = Cast(Shape(attention_mask)[1],
 * int32), made once and shared by every layer; without, T - 1 in each
 * batch entry and T, T the past's rows + S: int32 constants where batch,
 * S and the past are static, else made from the shapes of the query and
 * the past key.
 * GroupQueryAttention masks causally by itself (query i at position
 * past + i sees keys up to it) and masks the keys after seqlens_k; the
 * decomposed graph adds whatever mask it was given.  The fusion is made
 * only where the mask is proven to be the causal mask with
 * attention_mask's padding (as transformers exports it before 4.38, and
 * its cache_position mask since) or the causal mask alone (gqa_mask.h
 * lists the forms and how each is proven); any other mask is refused with
 * a note saying why, and so is a batch above 1 with a sequence after a
 * past at static dims (onnxruntime's GroupQueryAttention refuses to run
 * it; with symbolic dims a note says so).  Exact for an attention_mask of
 * ones (no padding, any past; what migrate's validation feeds) and for a
 * right-padded prompt without a past (ones then zeros in each row; padded
 * positions included: there each query sees the row's valid keys in
 * both); a left-padded batch, or padding before a past, places the new
 * keys where GroupQueryAttention does not: there the fused model is not
 * the decomposed one (a note on the first fusion says so).  No node of
 * the pattern but its Casts was made by a pass. */
#include <stdio.h>
#include <string.h>

#include "rewriters/attn_match.h"
#include "rewriters/gqa_mask.h"

#define MS "com.microsoft"

struct gqa {
	struct rw_attn_match a;
	struct ir_value *q3, *k3, *v3;   /* [B, S, h * d], or NULL: transpose back */
	struct ir_value *knew, *vnew;    /* the new K and V, [B, hkv, S, d] */
	struct ir_value *amask;          /* attention_mask */
	struct ir_node *cat_k, *cat_v, *out_rs;
	struct ir_node *extra[12];       /* the walked Transposes and Reshapes */
	size_t n_extra;
	int64_t hq, hkv, d;
	int64_t past;                    /* the past's length: static, else -1 */
	int dynamic;                     /* with a past: batch, S or the past
					  * not static */
};

static int add_extra(struct gqa *g, struct ir_node *n)
{
	if (g->n_extra >= sizeof(g->extra) / sizeof(g->extra[0]))
		return 0;
	g->extra[g->n_extra++] = n;
	return 1;
}

/* perm of Transpose n is exactly p (4 of them) */
static int perm_is(const struct ir_node *n, const int64_t *p)
{
	size_t k;
	const int64_t *a = rw_attr_ints(n, "perm", &k);

	return a && k == 4 && !memcmp(a, p, 4 * sizeof(*a));
}

static const int64_t SWAP12[4] = { 0, 2, 1, 3 };

/* x [B, h, S, d] = Transpose(Reshape(x3, [B, S, h, d]), [0, 2, 1, 3]),
 * x3 [B, S, h * d], the two read there only: x3 (and the two nodes
 * noted), else NULL (the caller transposes back) */
static struct ir_value *walk_up(const struct rw_ctx *c, struct ir_value *x, struct gqa *g)
{
	struct ir_node *tr = rw_producer(x, "Transpose"), *rs;
	const struct ir_vtype *xt = rw_type(c, x), *rt, *st;

	if (!tr || !rw_single_use(x) || !perm_is(tr, SWAP12) ||
	    !(rs = rw_producer(tr->inputs[0], "Reshape")) || !rw_single_use(tr->inputs[0]) ||
	    !xt || xt->rank != 4 || !(rt = rw_type(c, rs->outputs[0])) || rt->rank != 4 ||
	    !(st = rw_type(c, rs->inputs[0])) || st->rank != 3)
		return NULL;
	for (int i = 0; i < 4; i++)
		if (!rw_dim_same(&rt->dims[i], &xt->dims[SWAP12[i]]))
			return NULL;
	if (!rw_dim_same(&st->dims[0], &xt->dims[0]) || !rw_dim_same(&st->dims[1], &xt->dims[2]) ||
	    st->dims[2].kind != IR_VDIM_VALUE || xt->dims[1].kind != IR_VDIM_VALUE ||
	    xt->dims[3].kind != IR_VDIM_VALUE ||
	    st->dims[2].value != xt->dims[1].value * xt->dims[3].value)
		return NULL;
	if (!add_extra(g, tr) || !add_extra(g, rs))
		return NULL;
	return rs->inputs[0];
}

/* kv = Concat(past, new, axis 2) read by the core only, or besides by
 * Casts (float16 data with float32 outputs: the present output Cast back)
 * and Shapes (transformers' key_states.shape[-2] without repeated kv
 * heads): they read the fused node's present output, the same value; the
 * Concat, new in *nw */
static struct ir_node *past_concat(const struct rw_ctx *c, struct ir_value *kv,
				   struct ir_value **nw)
{
	struct ir_node *cat = rw_producer(kv, "Concat");
	size_t others = 0;
	int64_t ax;

	if (!cat || cat->n_inputs != 2 || rw_rank(c, kv) != 4)
		return NULL;
	for (size_t i = 0; i < kv->n_uses; i++)
		others += strcmp(ir_s(kv->uses[i]->op_type), "Cast") &&
			  strcmp(ir_s(kv->uses[i]->op_type), "Shape");
	if (others != 1)
		return NULL;
	ax = rw_attr_int(cat, "axis", 0);
	if (ax != 2 && ax != -2)
		return NULL;
	*nw = cat->inputs[1];
	return cat;
}

/* The pattern around the core a: 1 and g filled; 0 (why set where the
 * shape was a decoder layer's but the fusion would not be exact). */
static int match(const struct rw_ctx *c, struct gqa *g, char *why, size_t size)
{
	struct ir_node *tr;
	const struct ir_vtype *qt = rw_type(c, g->a.q), *kt = rw_type(c, g->a.k),
			      *nt, *ot, *pt;
	struct ir_value *y = g->a.out;
	struct gqa_mask_in mi;

	why[0] = 0;
	if (!qt || !kt)
		return 0;
	g->cat_k = past_concat(c, g->a.k, &g->knew);
	g->cat_v = past_concat(c, g->a.v, &g->vnew);
	if (!g->cat_k && !g->cat_v) {
		/* no past: the keys are the new ones, as many as the queries
		 * (a prefill-only export); attention without a mask is not a
		 * decoder's */
		if (!rw_dim_same(&kt->dims[2], &qt->dims[2]) || !g->a.mask)
			return 0;
		g->knew = g->a.k, g->vnew = g->a.v;
	} else if (!g->cat_k || !g->cat_v || g->cat_k == g->cat_v) {
		return 0;
	}
	if (!(tr = rw_sole_user(y, "Transpose")) || !perm_is(tr, SWAP12) ||
	    !(g->out_rs = rw_sole_user(tr->outputs[0], "Reshape")) ||
	    !(ot = rw_type(c, g->out_rs->outputs[0])) || ot->rank != 3 || !add_extra(g, tr))
		return 0;
	if (qt->dims[1].kind != IR_VDIM_VALUE || kt->dims[1].kind != IR_VDIM_VALUE ||
	    qt->dims[3].kind != IR_VDIM_VALUE || kt->dims[1].value < 1 ||
	    qt->dims[1].value % kt->dims[1].value)
		return 0;
	g->hq = qt->dims[1].value, g->hkv = kt->dims[1].value, g->d = qt->dims[3].value;
	/* [B, S, hq * d] out, the new K and V of the queries' length, V's
	 * head size the same (GroupQueryAttention has one) */
	if (!rw_dim_same(&ot->dims[0], &qt->dims[0]) || !rw_dim_same(&ot->dims[1], &qt->dims[2]) ||
	    ot->dims[2].kind != IR_VDIM_VALUE || ot->dims[2].value != g->hq * g->d)
		return 0;
	for (int i = 0; i < 2; i++) {
		if (!(nt = rw_type(c, i ? g->vnew : g->knew)) || nt->rank != 4 ||
		    !rw_dim_same(&nt->dims[2], &qt->dims[2]) ||
		    nt->dims[3].kind != IR_VDIM_VALUE || nt->dims[3].value != g->d) {
			snprintf(why, size, "the new %s is not [B, kv_num_heads, S, %lld]",
				 i ? "value" : "key", (long long)g->d);
			return 0;
		}
	}
	mi.qt = qt, mi.kt = kt, mi.past = g->cat_k ? g->cat_k->inputs[0] : NULL;
	/* static: the causal mask folded to a constant (else -1) */
	mi.s = qt->dims[2].kind == IR_VDIM_VALUE ? qt->dims[2].value : -1;
	mi.t = kt->dims[2].kind == IR_VDIM_VALUE ? kt->dims[2].value : -1;
	if (!rw_gqa_mask_proven(c, g->a.mask, &mi, &g->amask, why, size))
		return 0;
	/* onnxruntime: "batch_size must be 1 when sequence_length > 1 and
	 * past context is given" */
	g->past = 0;
	if (g->cat_k) {
		if (!(pt = rw_type(c, g->cat_k->inputs[0])) || pt->rank != 4)
			return 0;
		g->past = pt->dims[2].kind == IR_VDIM_VALUE ? pt->dims[2].value : -1;
	}
	/* without a past any batch and sequence run */
	g->dynamic = g->cat_k && (qt->dims[0].kind != IR_VDIM_VALUE ||
				  qt->dims[2].kind != IR_VDIM_VALUE || g->past < 0);
	if (g->cat_k && !g->dynamic && qt->dims[0].value > 1 && qt->dims[2].value > 1 &&
	    g->past > 0) {
		snprintf(why, size, "a sequence of %lld after a past of %lld with batch %lld "
			 "(GroupQueryAttention takes a sequence after a past only for batch 1)",
			 (long long)qt->dims[2].value, (long long)g->past,
			 (long long)qt->dims[0].value);
		return 0;
	}
	g->q3 = walk_up(c, g->a.q, g);
	g->k3 = walk_up(c, g->knew, g);
	g->v3 = walk_up(c, g->vnew, g);
	return 1;
}

/* The value named name (a fuse-gqa node's output placed before pos), else
 * NULL */
static struct ir_value *made_before(const struct rw_emit *e, const char *name)
{
	struct ir_value *v = ir_graph_find(e->g, name);

	return v && v->producer && v->producer->graph == e->g && v->producer->index < e->pos &&
	       v->producer->doc && !strncmp(v->producer->doc, "opmig: fuse-gqa ", 16) ? v : NULL;
}

/* Cast(x, int32) into a fresh value named name */
static struct ir_value *to_int32(struct rw_emit *e, struct ir_value *x, const char *name)
{
	struct ir_value *out = ir_graph_new_value(e->g, name);
	struct ir_node *n;

	if (!out || !(n = rw_node(e, "Cast", NULL, &x, 1, out)) ||
	    ir_node_set_int(n, "to", IR_DTYPE_INT32) < 0) {
		e->failed = 1;
		return NULL;
	}
	return out;
}

/* seqlens_k and total_sequence_length of attention_mask am: made by an
 * earlier layer's fusion, else here */
static void lengths(struct rw_emit *e, struct ir_value *am, int dt, struct ir_value **sl,
		    struct ir_value **tot)
{
	char nsl[300], ntot[300];
	int64_t axis = 1;
	double one = 1;

	snprintf(nsl, sizeof(nsl), "%.200s/opmig_gqa_seqlens_k", ir_s(am->name));
	snprintf(ntot, sizeof(ntot), "%.200s/opmig_gqa_total_sequence_length", ir_s(am->name));
	if (!(*sl = made_before(e, nsl))) {
		struct ir_value *sum = rw_reduce(e, "ReduceSum", am, &axis, 1, 0, NULL);

		*sl = to_int32(e, rw_op(e, "Sub", sum, rw_const(e, dt, 0, NULL, &one)), nsl);
	}
	if (!(*tot = made_before(e, ntot))) {
		struct ir_value *in[2] = { rw_op(e, "Shape", am, NULL),
					   rw_const(e, IR_DTYPE_INT64, 0, NULL, &one) };
		struct ir_node *gt = rw_node(e, "Gather", NULL, in, 2, NULL);

		*tot = gt ? to_int32(e, gt->outputs[0], ntot) : NULL;
	}
}

/* seqlens_k (T - 1 in each batch entry) and total_sequence_length (T =
 * the past's rows + S) without attention_mask, from q3 [B, S, hq * d] and
 * the past key pk [B, hkv, P, d] (NULL: none): constants where the dims
 * are static, else Shape, Gather, Add, Sub, Expand and Cast */
static void causal_lengths(struct rw_emit *e, const struct gqa *g, const struct ir_vtype *qt,
			   struct ir_value *q3, struct ir_value *pk, struct ir_value **sl,
			   struct ir_value **tot)
{
	double one = 1, two = 2, v[64];
	int64_t i0 = 0, nb;
	struct ir_value *in[2], *b, *t;
	struct ir_node *n;

	if (qt->dims[0].kind == IR_VDIM_VALUE && qt->dims[2].kind == IR_VDIM_VALUE &&
	    g->past >= 0 && (nb = qt->dims[0].value) <= 64) {
		double total = (double)(g->past + qt->dims[2].value);

		for (int64_t i = 0; i < nb; i++)
			v[i] = total - 1;
		*sl = rw_const(e, IR_DTYPE_INT32, 1, &nb, v);
		*tot = rw_const(e, IR_DTYPE_INT32, 0, NULL, &total);
		return;
	}
	in[0] = rw_op(e, "Shape", q3, NULL);
	b = rw_op(e, "Gather", in[0], rw_ints(e, &i0, 1));
	t = rw_op(e, "Gather", in[0], rw_const(e, IR_DTYPE_INT64, 0, NULL, &one));
	if (pk) {
		in[1] = rw_op(e, "Shape", pk, NULL);
		t = rw_op(e, "Add", rw_op(e, "Gather", in[1],
					  rw_const(e, IR_DTYPE_INT64, 0, NULL, &two)), t);
	}
	*tot = rw_op(e, "Cast", t, NULL);
	n = *tot ? (*tot)->producer : NULL;
	if (n && ir_node_set_int(n, "to", IR_DTYPE_INT32) < 0)
		e->failed = 1;
	*sl = rw_op(e, "Cast", rw_op(e, "Expand", rw_op(e, "Sub", t, rw_const(e, IR_DTYPE_INT64, 0,
										NULL, &one)), b),
		    NULL);
	n = *sl ? (*sl)->producer : NULL;
	if (n && ir_node_set_int(n, "to", IR_DTYPE_INT32) < 0)
		e->failed = 1;
}

/* x [B, h, S, d] as [B, S, h * d]: Reshape(Transpose(x, [0, 2, 1, 3])) */
static struct ir_value *back_3d(struct rw_emit *e, struct ir_value *x, int64_t h, int64_t d)
{
	int64_t shape[3] = { 0, 0, h * d };

	return rw_reshape(e, rw_transpose(e, x, SWAP12, 4, NULL), shape, 3, NULL);
}

/* The ops the fusion may emit, for the target (data of dtype dt,
 * attention_mask of dtype mt, 0 without one; shapes: the lengths made
 * from shapes): 1 when it takes them all */
static int target_takes(struct rw_ctx *c, int dt, int mt, int shapes)
{
	static const char *const int_ops[] = { "ReduceSum", "Sub", "Cast" };
	static const char *const shape_ops[] = { "Shape", "Gather", "Add", "Sub", "Expand", "Cast" };

	if (!rw_target_accepts(c, MS, "GroupQueryAttention", dt) ||
	    !rw_target_accepts(c, "", "Transpose", dt) || !rw_target_accepts(c, "", "Reshape", dt))
		return 0;
	if (!mt) {
		for (size_t i = 0; shapes && i < sizeof(shape_ops) / sizeof(shape_ops[0]); i++)
			if (!rw_target_accepts(c, "", shape_ops[i], IR_DTYPE_INT64))
				return 0;
		return 1;
	}
	for (size_t i = 0; i < sizeof(int_ops) / sizeof(int_ops[0]); i++)
		if (!rw_target_accepts(c, "", int_ops[i], mt))
			return 0;
	return rw_target_accepts(c, "", "Shape", mt) &&
	       rw_target_accepts(c, "", "Gather", IR_DTYPE_INT64) &&
	       rw_target_accepts(c, "", "Cast", IR_DTYPE_INT64) &&
	       rw_target_accepts(c, "", "Transpose", dt) && rw_target_accepts(c, "", "Reshape", dt);
}

/* A note once per text: why node n's attention stays decomposed (n
 * NULL: what the fusion assumes) */
static int note_once(struct rw_ctx *c, const struct ir_node *n, const char *why)
{
	char buf[512];

	if (n)
		snprintf(buf, sizeof(buf), "fuse-gqa: node '%s' (%s) left decomposed: %s",
			 ir_s(n->name), ir_s(n->op_type), why);
	else
		snprintf(buf, sizeof(buf), "fuse-gqa: %s", why);
	for (size_t i = 0; i < c->n_notes; i++)
		if (!strcmp(c->notes[i], buf))
			return 0;
	return rw_note(c, "%s", buf);
}

static int fuse(struct rw_ctx *c, struct gqa *g)
{
	const struct ir_vtype *t = rw_type(c, g->a.q);
	struct ir_value *in[7], *pk = g->a.k, *pv = g->a.v;
	struct rw_emit e;
	struct ir_node *n;
	size_t k = 0;
	struct ir_node *all[40];

	in[3] = in[4] = NULL;
	if (g->cat_k) {
		in[3] = g->cat_k->inputs[0], in[4] = g->cat_v->inputs[0];
		/* the Concats go first: their outputs become the fused node's */
		ir_graph_remove_node(c->m->graph, g->cat_k);
		ir_graph_remove_node(c->m->graph, g->cat_v);
	}
	rw_begin(c, g->out_rs, &e);
	e.dtype = t->dtype;
	if (!g->cat_k) {   /* no past: present (the new K and V) read by none */
		pk = ir_graph_new_value(e.g, "opmig_gqa_present_key");
		pv = ir_graph_new_value(e.g, "opmig_gqa_present_value");
		if (!pk || !pv)
			e.failed = 1;
	}
	in[0] = g->q3 ? g->q3 : back_3d(&e, g->a.q, g->hq, g->d);
	in[1] = g->k3 ? g->k3 : back_3d(&e, g->knew, g->hkv, g->d);
	in[2] = g->v3 ? g->v3 : back_3d(&e, g->vnew, g->hkv, g->d);
	if (g->amask)
		lengths(&e, g->amask, rw_type(c, g->amask)->dtype, &in[5], &in[6]);
	else if (in[0])
		causal_lengths(&e, g, t, in[0], in[3], &in[5], &in[6]);
	for (int i = 0; i < 7; i++)
		if (!in[i] && i != 3 && i != 4)
			e.failed = 1;
	n = e.failed ? NULL : rw_node(&e, "GroupQueryAttention", MS, in, 7, g->out_rs->outputs[0]);
	if (n && (ir_node_append_output(n, pk) < 0 || ir_node_append_output(n, pv) < 0 ||
		  ir_node_set_int(n, "num_heads", g->hq) < 0 ||
		  ir_node_set_int(n, "kv_num_heads", g->hkv) < 0 ||
		  ir_node_set_float(n, "scale", (float)g->a.scale) < 0))
		e.failed = 1;
	for (size_t i = 0; i < g->a.n; i++)
		all[k++] = g->a.nodes[i];
	for (size_t i = 0; i < g->n_extra; i++)
		all[k++] = g->extra[i];
	return rw_fuse_finish(c, &e, all, k, g->out_rs);
}

static int fuse_at(struct rw_ctx *c, struct ir_node *n)
{
	const struct ir_vtype *t;
	struct gqa g;
	char why[300];
	int rc;

	if (strcmp(ir_s(n->op_type), "MatMul") || (n->domain && *n->domain))
		return 0;
	memset(&g, 0, sizeof(g));
	if (!rw_attn_match_mask32(c, n, &g.a) || !(t = rw_type(c, g.a.q)) ||
	    (t->dtype != IR_DTYPE_FLOAT && t->dtype != IR_DTYPE_FLOAT16 &&
	     t->dtype != IR_DTYPE_BFLOAT16) ||
	    rw_attn_made_by_pass(&g.a) || !rw_target_accepts(c, MS, "GroupQueryAttention", t->dtype))
		return 0;
	if (!match(c, &g, why, sizeof(why)))
		return why[0] ? note_once(c, n, why) : 0;
	if (t->dtype == IR_DTYPE_BFLOAT16)
		return note_once(c, n, "bfloat16 data (onnxruntime's CPU GroupQueryAttention, "
				 "which the fusion is checked against, takes float32 and float16 "
				 "only)");
	if (!target_takes(c, t->dtype, g.amask ? rw_type(c, g.amask)->dtype : 0,
			  t->dims[0].kind != IR_VDIM_VALUE || t->dims[2].kind != IR_VDIM_VALUE ||
			  g.past < 0 || t->dims[0].value > 64))
		return note_once(c, n, "the target does not take the ops that compute seqlens_k "
				 "and total_sequence_length, or Transpose and Reshape");
	if (rw_domain_ensure(c->m, MS) < 0)
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	if ((g.amask && (rc = note_once(c, NULL, "GroupQueryAttention reads attention_mask as "
					"right padding (each row ones, then zeros); a left-padded "
					"batch, or padding before a past, would compute "
					"otherwise")) < 0) ||
	    (g.dynamic && (rc = note_once(c, NULL, "with the batch, sequence or past not "
					  "static, onnxruntime's GroupQueryAttention refuses to "
					  "run a batch above 1 with a sequence after a past")) < 0))
		return rc;
	return fuse(c, &g);
}

RW_FUSION(fuse_gqa, "fuse-gqa",
	  "decoder attention (MatMul/Softmax/MatMul over heads reshaped from the projections, "
	  "after a past Concat or without a past, a proven causal mask with or without "
	  "attention_mask's padding) fused into com.microsoft GroupQueryAttention (float32 or "
	  "float16); assumes attention_mask right-padded (exact with no padding, or right "
	  "padding without a past)",
	  fuse_at);
