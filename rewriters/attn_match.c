/* attn_match.c: the matcher of scaled dot-product attention over
 * [B, H, S, D] heads that the attention fusions share (fuse-attention,
 * fuse-gqa); see attn_match.h for the pattern. */
#include <math.h>
#include <string.h>

#include "rewriters/attn_match.h"

static int add_node(struct rw_attn_match *m, struct ir_node *n)
{
	if (m->n >= sizeof(m->nodes) / sizeof(m->nodes[0]))
		return 0;
	m->nodes[m->n++] = n;
	return 1;
}

/* A 4-D value's inferred type, else NULL */
static const struct ir_vtype *type4(const struct rw_ctx *c, const struct ir_value *v)
{
	const struct ir_vtype *t = rw_type(c, v);

	return t && t->rank == 4 ? t : NULL;
}

/* Unsqueeze n's axes are exactly [2] (of its rank-5 output) */
static int unsqueeze_at_2(const struct rw_ctx *c, const struct ir_node *n)
{
	int64_t ax[2];
	const int64_t *a;
	size_t k = 0;

	if (n->n_inputs > 1 && n->inputs[1]) {
		if (!rw_const_ints(c, n->inputs[1], ax, 2, &k))
			return 0;
	} else if ((a = rw_attr_ints(n, "axes", &k)) && k == 1) {
		ax[0] = a[0];
	}
	return k == 1 && (ax[0] == 2 || ax[0] == -3);
}

/* v is read by one node but Shapes (reading no values: they read v as
 * before, the nodes making it kept for them) and is no graph output;
 * transformers reads key_states.shape[-2] of the repeated keys */
static int read_once_but_shapes(const struct ir_value *v)
{
	size_t others = 0;

	if (!v || (v->graph && ir_graph_is_output(v->graph, v)))
		return 0;
	for (size_t i = 0; i < v->n_uses; i++)
		others += strcmp(ir_s(v->uses[i]->op_type), "Shape") != 0;
	return others == 1;
}

/* x itself, or the kv heads x repeats for grouped-query attention:
 * x = Reshape(Expand(Unsqueeze(kv, [2]), ..), ..) taking [B, h, T, d] to
 * [B, h, rep, T, d] (only dim 2 grows) and that to [B, h * rep, T, d]
 * (merging dims 1 and 2, every other dim known to stay; x perhaps read
 * by Shapes too); *rep is 1 for x itself.  A chain that is not the repeat leaves x as it is. */
static struct ir_value *unrepeat(const struct rw_ctx *c, struct ir_value *x, int64_t *rep,
				 struct rw_attn_match *m)
{
	struct ir_node *rs = rw_producer(x, "Reshape"), *ex, *us;
	const struct ir_vtype *kt, *et, *rt;

	*rep = 1;
	if (!rs || !read_once_but_shapes(x) || !(ex = rw_producer(rs->inputs[0], "Expand")) ||
	    !rw_single_use(rs->inputs[0]) || !(us = rw_producer(ex->inputs[0], "Unsqueeze")) ||
	    !rw_single_use(ex->inputs[0]) || !unsqueeze_at_2(c, us) ||
	    !(kt = type4(c, us->inputs[0])) || !(et = rw_type(c, ex->outputs[0])) ||
	    et->rank != 5 || !(rt = type4(c, x)))
		return x;
	if (kt->dims[1].kind != IR_VDIM_VALUE || et->dims[2].kind != IR_VDIM_VALUE ||
	    et->dims[2].value < 1 || !rw_dim_same(&et->dims[0], &kt->dims[0]) ||
	    !rw_dim_same(&et->dims[1], &kt->dims[1]) || !rw_dim_same(&et->dims[3], &kt->dims[2]) ||
	    !rw_dim_same(&et->dims[4], &kt->dims[3]) || rt->dims[1].kind != IR_VDIM_VALUE ||
	    rt->dims[1].value != kt->dims[1].value * et->dims[2].value ||
	    !rw_dim_same(&rt->dims[0], &kt->dims[0]) || !rw_dim_same(&rt->dims[2], &kt->dims[2]) ||
	    !rw_dim_same(&rt->dims[3], &kt->dims[3]))
		return x;
	if (!add_node(m, us) || !add_node(m, ex) || !add_node(m, rs))
		return NULL;
	*rep = et->dims[2].value;
	return us->inputs[0];
}

/* v = Mul(x, constant scalar) (either order), read once: x, the constant
 * in *k and the Mul in *n; else v itself, *k 1 and *n NULL */
static struct ir_value *unscale(const struct rw_ctx *c, struct ir_value *v, double *k,
				struct ir_node **n)
{
	struct ir_node *mul = rw_producer(v, "Mul");
	int j;

	*k = 1;
	*n = NULL;
	if (!mul || mul->n_inputs != 2 || !rw_single_use(v))
		return v;
	j = rw_const_scalar(c, mul->inputs[1], k) ? 1 :
	    rw_const_scalar(c, mul->inputs[0], k) ? 0 : -1;
	if (j < 0 || !isfinite(*k) || rw_rank(c, mul->inputs[j]) > 4) {
		*k = 1;
		return v;
	}
	*n = mul;
	return mul->inputs[1 - j];
}

/* v = Cast(x, to) read once (to 0: any): x and the Cast in *n, else NULL */
static struct ir_value *uncast(struct ir_value *v, int to, struct ir_node **n)
{
	struct ir_node *cast = rw_producer(v, "Cast");

	if (!cast || !rw_single_use(v) || (to && rw_attr_int(cast, "to", 0) != to))
		return NULL;
	*n = cast;
	return cast->inputs[0];
}

/* s = MatMul(Q, Transpose(K', [0, 1, 3, 2])) times the scale: Mul by a
 * constant, Div by one, or nothing (then perhaps Q and the transposed K'
 * each times a constant); Q and K' in *q and *k */
static int scores(const struct rw_ctx *c, struct ir_value *s, struct rw_attn_match *m,
		  struct ir_value **q, struct ir_value **k)
{
	struct ir_node *sc = NULL, *mm, *tr, *qs = NULL, *ks = NULL, *cs = NULL, *cq = NULL,
		       *ck = NULL;
	struct ir_value *kt;
	const int64_t *perm;
	size_t np;
	double x;

	m->scale = 1;
	if (!rw_single_use(s))
		return 0;
	if ((sc = rw_producer(s, "Div"))) {
		if (sc->n_inputs != 2 || !rw_const_scalar(c, sc->inputs[1], &x) || !(x != 0) ||
		    !isfinite(x) || rw_rank(c, sc->inputs[1]) > 4)
			return 0;
		m->scale = 1 / x;
		s = sc->inputs[0];
	} else if ((sc = rw_producer(s, "Mul"))) {
		int j;

		if (sc->n_inputs != 2)
			return 0;
		j = rw_const_scalar(c, sc->inputs[1], &x) ? 1 :
		    rw_const_scalar(c, sc->inputs[0], &x) ? 0 : -1;
		if (j < 0 || !isfinite(x) || rw_rank(c, sc->inputs[j]) > 4)
			return 0;
		m->scale = x;
		s = sc->inputs[1 - j];
	}
	if (sc && !rw_single_use(s))
		return 0;
	if (m->mm32 && !(s = uncast(s, 0, &cs)))   /* the float32 MatMul cast back */
		return 0;
	if (!(mm = rw_producer(s, "MatMul")) || mm->n_inputs != 2)
		return 0;
	*q = mm->inputs[0];
	kt = mm->inputs[1];
	if (m->mm32 && (!(*q = uncast(*q, IR_DTYPE_FLOAT, &cq)) ||
			!(kt = uncast(kt, IR_DTYPE_FLOAT, &ck)) || !rw_type(c, *q) ||
			rw_attr_int(cs, "to", 0) != rw_type(c, *q)->dtype))
		return 0;
	if (!sc) {   /* Q * a and K^T * b: the scale a * b */
		double a, b;

		*q = unscale(c, *q, &a, &qs);
		kt = unscale(c, kt, &b, &ks);
		m->scale = a * b;
		if (!isfinite(m->scale))
			return 0;
	}
	if (!(tr = rw_producer(kt, "Transpose")) || !rw_single_use(kt) ||
	    !(perm = rw_attr_ints(tr, "perm", &np)) || np != 4 || perm[0] != 0 || perm[1] != 1 ||
	    perm[2] != 3 || perm[3] != 2)
		return 0;
	*k = tr->inputs[0];
	return add_node(m, tr) && add_node(m, mm) && (!sc || add_node(m, sc)) &&
	       (!qs || add_node(m, qs)) && (!ks || add_node(m, ks)) && (!cs || add_node(m, cs)) &&
	       (!cq || add_node(m, cq)) && (!ck || add_node(m, ck));
}

/* Does the additive mask m->mask fit scores [B, hq, S, T] as the fused
 * op takes it ([.., S, T]; 1 or the whole along batch and heads)?  The
 * last dim not known to be T sets m->expand_t. */
static int mask_fits(const struct rw_ctx *c, struct rw_attn_match *m, const struct ir_vtype *qt,
		     const struct ir_vtype *kt)
{
	const struct ir_vtype *t = rw_type(c, m->mask);
	int r = t ? t->rank : -1;

	if (r < 2 || r > 4 || t->dtype != (m->mask32 ? IR_DTYPE_FLOAT : qt->dtype) ||
	    !rw_dim_same(&t->dims[r - 2], &qt->dims[2]))
		return 0;
	m->expand_t = !rw_dim_same(&t->dims[r - 1], &kt->dims[2]);
	for (int j = 0; j < r - 2; j++) {
		const struct ir_vdim *md = &t->dims[j], *want = &qt->dims[4 - r + j];

		if (!(md->kind == IR_VDIM_VALUE && md->value == 1) && !rw_dim_same(md, want))
			return 0;
	}
	m->mask_rank = r;
	return 1;
}

/* Q, K and V ([B, hq, S, d], [B, hkv, T, d], [B, hkv, T, dv]) known to
 * agree; kv heads repeated rep times make hq, or one kv head the MatMuls
 * broadcast */
static int shapes_agree(const struct rw_ctx *c, const struct rw_attn_match *m, int64_t rep)
{
	const struct ir_vtype *qt = type4(c, m->q), *kt = type4(c, m->k), *vt = type4(c, m->v);

	if (!qt || !kt || !vt || qt->dtype != kt->dtype || qt->dtype != vt->dtype ||
	    !rw_dim_same(&qt->dims[0], &kt->dims[0]) || !rw_dim_same(&qt->dims[0], &vt->dims[0]) ||
	    !rw_dim_same(&kt->dims[1], &vt->dims[1]) || !rw_dim_same(&kt->dims[2], &vt->dims[2]) ||
	    !rw_dim_same(&qt->dims[3], &kt->dims[3]) || vt->dims[3].kind == IR_VDIM_UNKNOWN)
		return 0;
	if (rep > 1)
		return qt->dims[1].kind == IR_VDIM_VALUE && kt->dims[1].kind == IR_VDIM_VALUE &&
		       qt->dims[1].value == kt->dims[1].value * rep;
	return rw_dim_same(&qt->dims[1], &kt->dims[1]) ||
	       (kt->dims[1].kind == IR_VDIM_VALUE && kt->dims[1].value == 1);
}

/* Softmax's input s = Add(Cast(x, float32), mask) (either order), the
 * mask float32 (mask32: the mask added inside the Cast island): x, the
 * Cast in *front, the Add in *add and the mask in m->mask; else NULL */
static struct ir_value *island_mask(const struct rw_ctx *c, struct ir_value *s,
				    struct rw_attn_match *m, struct ir_node **front,
				    struct ir_node **add)
{
	const struct ir_vtype *t;

	if (!(*add = rw_producer(s, "Add")) || (*add)->n_inputs != 2)
		return NULL;
	for (int j = 0; j < 2; j++) {
		struct ir_value *x = (*add)->inputs[j];

		if ((*front = rw_producer(x, "Cast")) &&
		    rw_attr_int(*front, "to", 0) == IR_DTYPE_FLOAT && rw_single_use(x) &&
		    rw_single_use((*front)->inputs[0]) && (t = rw_type(c, (*add)->inputs[1 - j])) &&
		    t->dtype == IR_DTYPE_FLOAT) {
			m->mask = (*add)->inputs[1 - j];
			m->mask32 = 1;
			return (*front)->inputs[0];
		}
	}
	return NULL;
}

static int match(const struct rw_ctx *c, struct ir_node *mm, struct rw_attn_match *m, int mm32,
		 int mask32)
{
	struct ir_node *back = NULL, *front = NULL, *sm, *add, *vc = NULL, *add32 = NULL;
	struct ir_value *s32;
	struct ir_value *p, *s, *kr, *vr;
	const struct ir_vtype *ot;
	int64_t rk, rv;
	int axis;

	memset(m, 0, sizeof(*m));
	if (mm->n_inputs != 2 || !rw_single_use(p = mm->inputs[0]))
		return 0;
	m->out = mm->outputs[0];
	vr = mm->inputs[1];
	/* the MatMuls in float32: the output cast back to the data's dtype,
	 * V cast to float32, the probabilities Softmax's */
	if (mm32) {
		if (!(ot = rw_type(c, m->out)) || ot->dtype != IR_DTYPE_FLOAT ||
		    !(back = rw_sole_user(m->out, "Cast")) || !(vr = uncast(vr, IR_DTYPE_FLOAT, &vc)))
			return 0;
		m->out = back->outputs[0];
		m->mm32 = m->f32 = 1;
	} else if ((back = rw_producer(p, "Cast"))) {
		/* the probabilities, perhaps cast back from float32 */
		if (!rw_single_use(p = back->inputs[0]))
			return 0;
		m->f32 = 1;
	}
	if (!(sm = rw_producer(p, "Softmax")) || sm->n_inputs != 1 ||
	    !rw_single_use(s = sm->inputs[0]))
		return 0;
	axis = (int)rw_attr_int(sm, "axis", -1);
	if (axis != -1 && axis != 3)
		return 0;
	if (m->f32 && mask32 && (s32 = island_mask(c, s, m, &front, &add32))) {
		s = s32;
	} else if (m->f32 && (!(front = rw_producer(s, "Cast")) ||
			      rw_attr_int(front, "to", 0) != IR_DTYPE_FLOAT ||
			      !rw_single_use(s = front->inputs[0]))) {
		return 0;
	}
	/* the additive mask on either side (in float32 above), or none */
	if (m->mask32) {
		if (!scores(c, s, m, &m->q, &kr) || !add_node(m, add32))
			return 0;
	} else if ((add = rw_producer(s, "Add")) && add->n_inputs == 2) {
		for (int j = 0; j < 2; j++) {
			m->n = 0;
			if (scores(c, add->inputs[j], m, &m->q, &kr)) {
				m->mask = add->inputs[1 - j];
				break;
			}
		}
		if (!m->mask || !add_node(m, add))
			return 0;
	} else if (!scores(c, s, m, &m->q, &kr)) {
		return 0;
	}
	if (!(m->k = unrepeat(c, kr, &rk, m)) || !(m->v = unrepeat(c, vr, &rv, m)) ||
	    rk != rv || !shapes_agree(c, m, rk))
		return 0;
	if (m->mask && !mask_fits(c, m, type4(c, m->q), type4(c, m->k)))
		return 0;
	/* the Cast island's ends: float32 from the data's dtype and back */
	if (m->f32) {
		const struct ir_vtype *qt = rw_type(c, m->q);

		if ((qt->dtype != IR_DTYPE_FLOAT16 && qt->dtype != IR_DTYPE_BFLOAT16) ||
		    rw_attr_int(back, "to", 0) != qt->dtype || !add_node(m, front) ||
		    !add_node(m, back) || (vc && !add_node(m, vc)))
			return 0;
	}
	if (!add_node(m, sm) || !add_node(m, mm))
		return 0;
	m->last = mm;
	return 1;
}

int rw_attn_match(const struct rw_ctx *c, struct ir_node *mm, struct rw_attn_match *m)
{
	return match(c, mm, m, 0, 0);
}

int rw_attn_match_mm32(const struct rw_ctx *c, struct ir_node *mm, struct rw_attn_match *m)
{
	return match(c, mm, m, 0, 0) || match(c, mm, m, 1, 0);
}

int rw_attn_match_mask32(const struct rw_ctx *c, struct ir_node *mm, struct rw_attn_match *m)
{
	return match(c, mm, m, 0, 1) || match(c, mm, m, 1, 1);
}

/* Was a node of the pattern other than a Cast made by a pass?  (Casts
 * are the precision pass's, which decomposes nothing.) */
int rw_attn_made_by_pass(const struct rw_attn_match *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(ir_s(m->nodes[i]->op_type), "Cast") &&
		    rw_made_by_pass(&m->nodes[i], 1))
			return 1;
	return 0;
}
