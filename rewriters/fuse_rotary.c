/* fuse_rotary.c: pass "fuse-rotary": rotate-half rotary embedding as torch
 * exports a Llama,
 *   out = x * cos + Concat(-x[..., D/2:], x[..., :D/2]) * sin,
 *   cos = Unsqueeze(Gather(cos_cache, position_ids), 1), sin likewise,
 * x [B, N, S, D], fused into RotaryEmbedding (opset 23) or com.microsoft
 * RotaryEmbedding for targets that declare one for x's dtype.  The caches
 * are constant [P, D] initializers whose two halves are equal (torch
 * concatenates the frequencies twice); the fused op takes their first
 * halves, the same position_ids (int64 [B, S]) and no interleaving.  Every
 * intermediate of the rotation is read inside the pattern only, and no
 * node of it was made by a pass (the rotary lowering's output stays).
 * Where x is the head transpose of a 3-D projection, Transpose(Reshape(x3,
 * [B, S, N, D]), [0, 2, 1, 3]), and the rotation's result goes straight
 * back to [B, S, N * D] by Transpose([0, 2, 1, 3]) and Reshape (what
 * fuse-gqa leaves of a decoder's rotated Q and K), the fused op takes x3
 * with num_heads N and gives the Reshape's output: the transposes go. */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

struct half {               /* x[..., lo:hi] */
	int64_t lo, hi;
};

struct match {
	struct ir_value *x, *pos, *cache[2];  /* cos, sin */
	int64_t d;
	struct ir_node *nodes[12];
	size_t n;
	struct ir_node *last;
	struct ir_value *x3;                  /* the 3-D form's input, else NULL */
	int64_t heads;
};

/* A Slice of x over the last axis alone (step 1): its bounds clamped to d */
static int slice_last(const struct rw_ctx *c, const struct ir_node *s, const struct ir_value *x,
		      int64_t d, struct half *h)
{
	int64_t st[2], en[2], ax[2], sp[2];
	size_t k = 0, n;

	if (!s || s->inputs[0] != x || s->n_inputs < 4 ||
	    !rw_const_ints(c, s->inputs[1], st, 2, &k) || k != 1 ||
	    !rw_const_ints(c, s->inputs[2], en, 2, &n) || n != 1 ||
	    !rw_const_ints(c, s->inputs[3], ax, 2, &n) || n != 1 || (ax[0] != -1 && ax[0] != 3))
		return 0;
	if (s->n_inputs > 4 && s->inputs[4] &&
	    (!rw_const_ints(c, s->inputs[4], sp, 2, &n) || n != 1 || sp[0] != 1))
		return 0;
	h->lo = st[0] < 0 ? st[0] + d : st[0];
	h->hi = en[0] < 0 ? en[0] + d : en[0] > d ? d : en[0];
	return 1;
}

/* cos or sin: Unsqueeze(Gather(cache, pos), [1]) of a constant [P, d]
 * cache; its Gather's positions in *pos (the same for both) */
static int table(const struct rw_ctx *c, const struct ir_value *v, int64_t d,
		 struct ir_value **cache, struct ir_value **pos)
{
	struct ir_node *u = rw_producer(v, "Unsqueeze"), *g;
	int64_t ax[2], dims[IR_INFER_MAX_RANK];
	const int64_t *a;
	size_t k = 0;
	int rank;

	if (!u)
		return 0;
	if (u->n_inputs > 1 && u->inputs[1]) {
		if (!rw_const_ints(c, u->inputs[1], ax, 2, &k))
			return 0;
	} else if ((a = rw_attr_ints(u, "axes", &k)) && k == 1) {
		ax[0] = a[0];
	}
	if (k != 1 || ax[0] != 1 || !(g = rw_producer(u->inputs[0], "Gather")) ||
	    g->n_inputs != 2 || rw_attr_int(g, "axis", 0) != 0 || !g->inputs[0]->init ||
	    g->inputs[0]->is_input || !rw_static_shape(c, g->inputs[0], dims, &rank) ||
	    rank != 2 || dims[1] != d || rw_rank(c, g->inputs[1]) != 2 ||
	    (*pos && *pos != g->inputs[1]))
		return 0;
	*cache = g->inputs[0];
	*pos = g->inputs[1];
	return 1;
}

/* Can position_ids' dim p be x's dim (not 1 broadcast along it)?  Equal
 * when known; an x dim inference lost (?) is taken as p's unless p is 1 */
static int same_dim(const struct ir_vdim *p, const struct ir_vdim *x)
{
	if (p->kind == x->kind && (p->kind == IR_VDIM_VALUE ? p->value == x->value :
				   p->kind == IR_VDIM_PARAM && p->param && x->param &&
				   !strcmp(p->param, x->param)))
		return 1;
	return x->kind == IR_VDIM_UNKNOWN && p->kind != IR_VDIM_UNKNOWN &&
	       !(p->kind == IR_VDIM_VALUE && p->value == 1);
}

static const int64_t SWAP12[4] = { 0, 2, 1, 3 };

static int perm_swap12(const struct ir_node *n)
{
	size_t k;
	const int64_t *a = rw_attr_ints(n, "perm", &k);

	return a && k == 4 && !memcmp(a, SWAP12, sizeof(SWAP12));
}

/* The 3-D form: x [B, N, S, D] = Transpose(Reshape(x3, [B, S, N, D]),
 * [0, 2, 1, 3]) read by the rotation only, x3 [B, S, N * D], and the
 * rotation's output read by Transpose([0, 2, 1, 3]) and that by a Reshape
 * to [B, S, N * D] alone (what fuse-gqa leaves of a decoder's rotated
 * heads): the fused op takes x3 and gives the Reshape's output, so both
 * pairs go.  0 (m as it was) otherwise. */
static int flat_form(const struct rw_ctx *c, struct match *m)
{
	struct ir_node *tr = rw_producer(m->x, "Transpose"), *rs, *tb, *rb;
	const struct ir_vtype *xt = rw_type(c, m->x), *st, *ot;

	if (!tr || !perm_swap12(tr) || m->x->n_uses != 3 || !xt || xt->rank != 4 ||
	    xt->dims[1].kind != IR_VDIM_VALUE || !(rs = rw_producer(tr->inputs[0], "Reshape")) ||
	    !rw_single_use(tr->inputs[0]) || !(st = rw_type(c, rs->inputs[0])) || st->rank != 3 ||
	    !rw_dim_same(&st->dims[0], &xt->dims[0]) || !rw_dim_same(&st->dims[1], &xt->dims[2]) ||
	    st->dims[2].kind != IR_VDIM_VALUE || st->dims[2].value != xt->dims[1].value * m->d)
		return 0;
	if (!(tb = rw_sole_user(m->last->outputs[0], "Transpose")) || !perm_swap12(tb) ||
	    !(rb = rw_sole_user(tb->outputs[0], "Reshape")) || !(ot = rw_type(c, rb->outputs[0])) ||
	    ot->rank != 3 || !rw_dim_same(&ot->dims[0], &st->dims[0]) ||
	    !rw_dim_same(&ot->dims[1], &st->dims[1]) || ot->dims[2].kind != IR_VDIM_VALUE ||
	    ot->dims[2].value != st->dims[2].value)
		return 0;
	m->nodes[m->n++] = tr, m->nodes[m->n++] = rs, m->nodes[m->n++] = tb;
	m->nodes[m->n++] = m->last;
	m->last = rb;
	m->x3 = rs->inputs[0];
	m->heads = xt->dims[1].value;
	return 1;
}

static int match(const struct rw_ctx *c, struct ir_node *add, struct match *m)
{
	struct ir_node *mul[2], *cat, *neg, *s1, *s2;
	struct ir_value *rot, *trig[2];
	const struct ir_vtype *t;
	struct half h1, h2;
	int which;

	memset(m, 0, sizeof(*m));
	if (add->n_inputs != 2 || !(mul[0] = rw_producer(add->inputs[0], "Mul")) ||
	    !(mul[1] = rw_producer(add->inputs[1], "Mul")) || !rw_single_use(add->inputs[0]) ||
	    !rw_single_use(add->inputs[1]) || mul[0]->n_inputs != 2 || mul[1]->n_inputs != 2)
		return 0;
	/* which Mul takes the rotated half (a Concat's output) */
	for (which = 0; which < 2; which++) {
		for (int j = 0; j < 2; j++) {
			rot = mul[which]->inputs[j];
			if ((cat = rw_producer(rot, "Concat")) && rw_single_use(rot)) {
				trig[1] = mul[which]->inputs[1 - j];
				break;
			}
			cat = NULL;
		}
		if (cat)
			break;
	}
	if (!cat || cat->n_inputs != 2 || (rw_attr_int(cat, "axis", 0) != -1 &&
					   rw_attr_int(cat, "axis", 0) != 3) ||
	    !(neg = rw_producer(cat->inputs[0], "Neg")) || !rw_single_use(cat->inputs[0]) ||
	    !(s2 = rw_producer(neg->inputs[0], "Slice")) || !rw_single_use(neg->inputs[0]) ||
	    !(s1 = rw_producer(cat->inputs[1], "Slice")) || !rw_single_use(cat->inputs[1]))
		return 0;
	m->x = s1->inputs[0];
	/* the other Mul: x * cos */
	if (mul[1 - which]->inputs[0] == m->x)
		trig[0] = mul[1 - which]->inputs[1];
	else if (mul[1 - which]->inputs[1] == m->x)
		trig[0] = mul[1 - which]->inputs[0];
	else
		return 0;
	if (!(t = rw_type(c, m->x)) || t->rank != 4 || t->dims[3].kind != IR_VDIM_VALUE ||
	    (m->d = t->dims[3].value) < 2 || m->d % 2)
		return 0;
	if (!slice_last(c, s1, m->x, m->d, &h1) || !slice_last(c, s2, m->x, m->d, &h2) ||
	    h1.lo != 0 || h1.hi != m->d / 2 || h2.lo != m->d / 2 || h2.hi != m->d)
		return 0;
	if (!table(c, trig[0], m->d, &m->cache[0], &m->pos) ||
	    !table(c, trig[1], m->d, &m->cache[1], &m->pos))
		return 0;
	/* position_ids [B, S] as x [B, N, S, D] has them (a [1, S] one
	 * broadcast over a batch is left alone) */
	{
		const struct ir_vtype *p = rw_type(c, m->pos);

		if (!p || p->rank != 2 || !same_dim(&p->dims[0], &t->dims[0]) ||
		    !same_dim(&p->dims[1], &t->dims[2]))
			return 0;
	}
	{
		struct ir_node *all[] = { s1, s2, neg, cat, mul[0], mul[1], add };

		if (rw_made_by_pass(all, 7))
			return 0;
		memcpy(m->nodes, all, sizeof(all) - sizeof(all[0]));
		m->n = 6;
	}
	m->last = add;
	if (!flat_form(c, m))
		m->nodes[m->n++] = add;
	return 1;
}

/* The name of a cache's first half: one initializer however many
 * rotaries share the cache */
static void half_name(const struct ir_value *cache, char *buf, size_t size)
{
	snprintf(buf, size, "%s/opmig_rotary_half", ir_s(cache->name));
}

/* The first half a fusion made of cache before, or NULL */
static struct ir_value *made_half(const struct rw_ctx *c, const struct ir_value *cache)
{
	struct ir_value *v;
	char name[300];

	half_name(cache, name, sizeof(name));
	v = ir_graph_find(c->m->graph, name);
	return v && v->init && !v->is_input && !v->producer ? v : NULL;
}

/* The first half of every row of a constant [P, d] cache, as a new
 * initializer (NULL when out of memory) */
static struct ir_value *first_half(struct rw_emit *e, const struct ir_value *cache, int64_t d)
{
	struct rt_value *t = rw_init_value(cache);
	struct ir_tensor *it = NULL;
	struct ir_value *out = NULL;
	struct ir_diag dg;
	char name[300];
	size_t h;

	if (!t)
		return NULL;
	h = (size_t)(d / 2) * rt_dtype_size(t->dtype);
	for (int64_t r = 0; r < t->dims[0]; r++)
		memmove((char *)t->data + (size_t)r * h, (char *)t->data + (size_t)r * 2 * h, h);
	t->dims[1] = d / 2;
	t->numel = t->dims[0] * (d / 2);
	ir_diag_init(&dg);
	half_name(cache, name, sizeof(name));
	if (rt_value_to_ir(t, name, &it, &dg) == 0)
		out = ir_graph_add_initializer(e->g, it);
	rt_value_unref(t);
	return out;
}

/* Are a constant [P, d] cache's two halves equal in every row? */
static int halves_equal(const struct ir_value *cache, int64_t d)
{
	struct rt_value *t = rw_init_value(cache);
	size_t h;
	int same = 0;

	if (!t)
		return 0;
	h = (size_t)(d / 2) * rt_dtype_size(t->dtype);
	if (t->rank == 2 && t->dims[1] == d && h) {
		const char *p = t->data;

		same = 1;
		for (int64_t r = 0; r < t->dims[0] && same; r++)
			same = !memcmp(p + (size_t)r * 2 * h, p + (size_t)r * 2 * h + h, h);
	}
	rt_value_unref(t);
	return same;
}

/* The fused op the target takes: ai.onnx RotaryEmbedding or com.microsoft's */
static const char *pick(struct rw_ctx *c, int dt)
{
	if (c->opset >= 23 && rw_target_accepts(c, "", "RotaryEmbedding", dt))
		return "";
	return rw_target_accepts(c, "com.microsoft", "RotaryEmbedding", dt) ? "com.microsoft" :
	       NULL;
}

static int fuse(struct rw_ctx *c, struct match *m)
{
	const struct ir_vtype *t = rw_type(c, m->x), *pt = rw_type(c, m->pos);
	const struct ir_vtype *ct = rw_type(c, m->cache[0]), *st = rw_type(c, m->cache[1]);
	struct ir_value *in[4], *half[2];
	const char *dom;
	struct rw_emit e;
	struct ir_node *n;

	if (!t || !pt || !ct || !st || pt->dtype != IR_DTYPE_INT64 || ct->dtype != t->dtype ||
	    st->dtype != t->dtype || (t->dtype != IR_DTYPE_FLOAT && t->dtype != IR_DTYPE_FLOAT16) ||
	    !(dom = pick(c, t->dtype)))
		return 0;
	/* a cache halved before was compared then */
	for (int i = 0; i < 2; i++)
		if (!(half[i] = made_half(c, m->cache[i])) && !halves_equal(m->cache[i], m->d))
			return 0;
	if (*dom && rw_domain_ensure(c->m, dom) < 0)
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	rw_begin(c, m->last, &e);
	for (int i = 0; i < 2; i++)
		if (!half[i] && !(half[i] = first_half(&e, m->cache[i], m->d)))
			e.failed = 1;
	/* ai.onnx: X, cos, sin, position_ids; com.microsoft: X, position_ids,
	 * cos, sin */
	in[0] = m->x3 ? m->x3 : m->x;
	in[1] = *dom ? m->pos : half[0];
	in[2] = *dom ? half[0] : half[1];
	in[3] = *dom ? half[1] : m->pos;
	if (!e.failed && (!(n = rw_node(&e, "RotaryEmbedding", *dom ? dom : NULL, in, 4,
					m->last->outputs[0])) ||
			  (m->x3 && ir_node_set_int(n, "num_heads", m->heads) < 0)))
		e.failed = 1;
	return rw_fuse_finish(c, &e, m->nodes, m->n, m->last);
}

static int fuse_at(struct rw_ctx *c, struct ir_node *n)
{
	struct match m;

	if (strcmp(ir_s(n->op_type), "Add") || (n->domain && *n->domain) || !match(c, n, &m))
		return 0;
	return fuse(c, &m);
}

RW_FUSION(fuse_rotary, "fuse-rotary",
	  "Slice/Neg/Concat/Mul/Add rotate-half rotary with Gather-ed cos/sin caches fused "
	  "into RotaryEmbedding (opset 23 or com.microsoft)",
	  fuse_at);
