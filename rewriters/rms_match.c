/* rms_match.c: RMSNorm as torch exports it (rms_match.h),
 *   ms = ReduceMean(Pow(x, 2) or x * x, last axis, keepdims 1),
 *   r = Sqrt(ms + eps), y = x / r, or x * (1 / r), or x * Reciprocal(r),
 *   out = y * gamma (either order),
 * optionally inside Cast(x, to float32) ... Cast(y, back to x's dtype),
 * or with only the square (and its mean) in float32 (Pow(Cast(x, to
 * float32)), Cast back after Pow or ReduceMean: float16 precision keeps
 * those there).  eps is a constant scalar, gamma a vector along the last
 * axis (its length the last dim of x, which must be static), every
 * intermediate read only inside the pattern. */
#include <string.h>

#include "rewriters/rms_match.h"

static int add_node(struct rw_rms_match *m, struct ir_node *n)
{
	if (m->n >= sizeof(m->nodes) / sizeof(m->nodes[0]))
		return 0;
	m->nodes[m->n++] = n;
	return 1;
}

/* Is every reader of v one of the match's nodes (and v no graph output)? */
static int read_inside(const struct ir_value *v, const struct rw_rms_match *m)
{
	for (size_t i = 0; i < v->n_uses; i++) {
		size_t j = 0;

		while (j < m->n && m->nodes[j] != v->uses[i])
			j++;
		if (j == m->n)
			return 0;
	}
	for (size_t i = 0; i < v->graph->n_outputs; i++)
		if (v->graph->outputs[i].value == v)
			return 0;
	return 1;
}

/* A ReduceMean over the last axis alone, keepdims 1 */
static int last_axis(const struct rw_ctx *c, const struct ir_node *r, int rank)
{
	int64_t a[IR_INFER_MAX_RANK];
	size_t k = 0;

	if (rank < 1 || rw_attr_int(r, "keepdims", 1) != 1)
		return 0;
	if (r->n_inputs > 1 && r->inputs[1]) {
		if (!rw_const_ints(c, r->inputs[1], a, IR_INFER_MAX_RANK, &k))
			return 0;
	} else {
		const int64_t *at = rw_attr_ints(r, "axes", &k);

		if (!at || k != 1)
			return 0;
		a[0] = at[0];
	}
	return k == 1 && (a[0] == -1 || a[0] == rank - 1);
}

/* Cast(v) with attribute to == dtype, else NULL */
static struct ir_node *cast_to(const struct ir_value *v, int dtype)
{
	struct ir_node *n = rw_producer(v, "Cast");

	return n && rw_attr_int(n, "to", 0) == dtype ? n : NULL;
}

/* Sqrt's output r: y = x / r, x * (1 / r) or x * Reciprocal(r) */
static struct ir_node *divide(const struct rw_ctx *c, struct ir_value *r, struct ir_value *x,
			      struct rw_rms_match *m)
{
	struct ir_node *n = rw_sole_user(r, "Div"), *mul;
	struct ir_value *inv;
	double one;

	if (n && n->n_inputs == 2 && n->inputs[0] == x && n->inputs[1] == r)
		return add_node(m, n) ? n : NULL;
	if (n && n->n_inputs == 2 && n->inputs[1] == r && rw_const_scalar(c, n->inputs[0], &one) &&
	    one == 1 && rw_rank(c, n->inputs[0]) <= m->rank)
		inv = n->outputs[0];
	else if ((n = rw_sole_user(r, "Reciprocal")))
		inv = n->outputs[0];
	else
		return NULL;
	if (!(mul = rw_sole_user(inv, "Mul")) || rw_other_input(mul, inv) != x ||
	    !add_node(m, n) || !add_node(m, mul))
		return NULL;
	return mul;
}

int rw_rms_match(const struct rw_ctx *c, struct ir_node *sq, struct rw_rms_match *m)
{
	struct ir_node *add, *rm, *pw, *y, *mul, *back = NULL, *front, *mc, *cx = NULL;
	struct ir_value *ms, *p, *x, *out;
	const struct ir_vtype *xt;
	int64_t gd[IR_INFER_MAX_RANK];
	int grank;
	double two;

	memset(m, 0, sizeof(*m));
	if (strcmp(ir_s(sq->op_type), "Sqrt") || (sq->domain && *sq->domain))
		return 0;
	if (sq->n_inputs != 1 || !rw_single_use(sq->inputs[0]) ||
	    !(add = rw_producer(sq->inputs[0], "Add")) || add->n_inputs != 2)
		return 0;
	if (rw_const_scalar(c, add->inputs[1], &m->eps))
		ms = add->inputs[0];
	else if (rw_const_scalar(c, add->inputs[0], &m->eps))
		ms = add->inputs[1];
	else
		return 0;
	if (!(m->eps >= 0) || !rw_single_use(ms))
		return 0;
	/* the square or its mean cast down from float32 (float16's float32
	 * islands end after Pow or after ReduceMean) */
	if ((mc = rw_producer(ms, "Cast")) && !rw_single_use(ms = mc->inputs[0]))
		return 0;
	if (!(rm = rw_producer(ms, "ReduceMean")) || !rw_single_use(p = rm->inputs[0]))
		return 0;
	if (!mc && (mc = rw_producer(p, "Cast")) && !rw_single_use(p = mc->inputs[0]))
		return 0;
	if ((pw = rw_producer(p, "Pow"))) {
		if (pw->n_inputs != 2 || !rw_const_scalar(c, pw->inputs[1], &two) || two != 2)
			return 0;
	} else if (!(pw = rw_producer(p, "Mul")) || pw->n_inputs != 2 ||
		   pw->inputs[0] != pw->inputs[1]) {
		return 0;
	}
	x = pw->inputs[0];
	/* ... and then the square taken of x cast up to float32 */
	if (mc) {
		const struct ir_vtype *t;

		if (!(cx = cast_to(x, IR_DTYPE_FLOAT)) || !(t = rw_type(c, cx->inputs[0])) ||
		    rw_attr_int(mc, "to", 0) != t->dtype)
			return 0;
		x = cx->inputs[0];
	}
	m->rank = rw_rank(c, x);
	/* the last dim static (gamma's length is checked against it) */
	if (!(xt = rw_type(c, x)) || m->rank < 1 ||
	    xt->dims[m->rank - 1].kind != IR_VDIM_VALUE || !last_axis(c, rm, m->rank) ||
	    rw_rank(c, add->inputs[0] == ms ? add->inputs[1] : add->inputs[0]) > m->rank)
		return 0;
	add_node(m, pw);
	add_node(m, rm);
	add_node(m, add);
	add_node(m, sq);
	if (!(y = divide(c, sq->outputs[0], x, m)))
		return 0;
	/* y * gamma, perhaps after a Cast back from float32 */
	out = y->outputs[0];
	if ((back = rw_sole_user(out, "Cast"))) {
		if (!add_node(m, back))
			return 0;
		out = back->outputs[0];
	}
	if (!(mul = rw_sole_user(out, "Mul")) || !(m->gamma = rw_other_input(mul, out)) ||
	    !rw_static_shape(c, m->gamma, gd, &grank) || grank != 1 ||
	    gd[0] != xt->dims[m->rank - 1].value || !add_node(m, mul))
		return 0;
	m->last = mul;
	m->x = x;
	if (mc && (back || !add_node(m, mc) || !add_node(m, cx)))
		return 0;
	/* x is the pattern's own Cast to float32 when the result is cast back:
	 * the fused op takes the original input and computes in float32 */
	if (back) {
		const struct ir_vtype *t;

		if (!(front = cast_to(x, IR_DTYPE_FLOAT)) || !rw_dtype_is_float(
			    (t = rw_type(c, front->inputs[0])) ? t->dtype : 0) ||
		    rw_attr_int(back, "to", 0) != t->dtype || !add_node(m, front))
			return 0;
		m->x = front->inputs[0];
	}
	/* each link above has one reader; x may have others, unless it is
	 * the pattern's own Cast */
	return !back || read_inside(x, m);
}

int rw_rms_made_by_pass(const struct rw_rms_match *m)
{
	static const char canon[] = "opmig: expand-simplified-ln ";

	for (size_t i = 0; i < m->n; i++) {
		const struct ir_node *n = m->nodes[i];

		if (strcmp(ir_s(n->op_type), "Cast") && rw_made_by_pass(&m->nodes[i], 1) &&
		    strncmp(n->doc, canon, sizeof(canon) - 1))
			return 1;
	}
	return 0;
}
