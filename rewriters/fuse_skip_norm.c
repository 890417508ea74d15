/* fuse_skip_norm.c: pass "fuse-skip-norm": a residual sum normalized over
 * the last axis,
 *   s = Add(x, skip) or Add(Add(x, skip), bias),  y = Norm(s, gamma[, beta]),
 * Norm RMSNormalization or SimplifiedLayerNormalization (an input's, as
 * onnxruntime-genai writes it) or LayerNormalization, or the RMS norm
 * still decomposed as torch exports it (rms_match.h: fuse-rms-norm makes
 * no standalone op below opset 23, where onnx has none), fused into
 * com.microsoft SkipSimplifiedLayerNormalization or SkipLayerNormalization
 * for targets that declare it for the data's dtype.  x and skip are
 * [B, S, H] or [T, H] of the same known shape, gamma, beta and a constant
 * bias [H] of the data's dtype (float32 or float16), the statistics in
 * float32 (stash_type 1, or the decomposed norm's in float32 or in the
 * data's float32) and not read; s, when read elsewhere too (a decoder's
 * residual stream), becomes output 3 (input_skip_bias_sum) of the fused
 * node, which takes the place of the last Add (every reader of s comes
 * after it).  Neither Add may be a pass's (the skip-layer-norm lowering's
 * output stays); the norm may be a fusion's, not a lowering's. */
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rms_match.h"

struct match {
	struct ir_node *norm, *add, *inner;   /* inner: Add(x, skip) when a bias follows */
	struct rw_rms_match *rms;             /* the decomposed RMS norm (norm its last) */
	struct ir_value *x, *skip, *gamma, *beta, *bias, *sum;
	int simplified;
	float eps;
};

static int is_op(const struct ir_node *n, const char *op, int ms_too)
{
	const char *d = ir_s(n->domain);

	return !strcmp(ir_s(n->op_type), op) &&
	       (!*d || !strcmp(d, "ai.onnx") || (ms_too && !strcmp(d, "com.microsoft")));
}

/* Made by a pass other than a fusion (a lowering's output stays)? */
static int lowered(const struct ir_node *n)
{
	return rw_made_by_pass((struct ir_node *const *)&n, 1) &&
	       strncmp(n->doc, "opmig: fuse-", 12);
}

/* A value of dtype dt whose shape is [h] */
static int vector_of(const struct rw_ctx *c, const struct ir_value *v, int dt, int64_t h)
{
	const struct ir_vtype *t = v ? rw_type(c, v) : NULL;

	return t && t->dtype == dt && t->rank == 1 && t->dims[0].kind == IR_VDIM_VALUE &&
	       t->dims[0].value == h;
}

/* a and b known to have the same shape, of rank 2 or 3 */
static int same_shape(const struct rw_ctx *c, const struct ir_value *a, const struct ir_value *b)
{
	const struct ir_vtype *s = rw_type(c, a), *t = rw_type(c, b);

	if (!s || !t || s->rank != t->rank || s->rank < 2 || s->rank > 3)
		return 0;
	for (int i = 0; i < s->rank; i++)
		if (!rw_dim_same(&s->dims[i], &t->dims[i]))
			return 0;
	return 1;
}

/* The residual Add (+ bias) before the norm of m->sum, gamma m->gamma */
static int match_add(const struct rw_ctx *c, struct match *m)
{
	const struct ir_vtype *t;
	struct ir_node *a, *in;
	int64_t h;
	int r;

	if (!(t = rw_type(c, m->sum)) || (r = t->rank) < 2 || r > 3 ||
	    t->dims[r - 1].kind != IR_VDIM_VALUE || (h = t->dims[r - 1].value) < 1)
		return 0;
	if ((t->dtype != IR_DTYPE_FLOAT && t->dtype != IR_DTYPE_FLOAT16) ||
	    !vector_of(c, m->gamma, t->dtype, h) ||
	    (m->beta && !vector_of(c, m->beta, t->dtype, h)))
		return 0;
	if (!(a = rw_producer(m->sum, "Add")) || a->n_inputs != 2 || lowered(a))
		return 0;
	/* Add(Add(x, skip), bias): a constant bias after the residual sum */
	for (int j = 0; j < 2; j++) {
		struct ir_value *b = a->inputs[1 - j];

		if ((in = rw_producer(a->inputs[j], "Add")) && in->n_inputs == 2 &&
		    rw_single_use(a->inputs[j]) && !lowered(in) && rw_is_const(c, b) &&
		    vector_of(c, b, t->dtype, h)) {
			m->inner = in;
			m->bias = b;
			break;
		}
	}
	in = m->inner ? m->inner : a;
	m->x = in->inputs[0];
	m->skip = in->inputs[1];
	if (!same_shape(c, m->x, m->sum) || !same_shape(c, m->skip, m->sum))
		return 0;
	m->add = a;
	return 1;
}

/* A norm op n */
static int match(const struct rw_ctx *c, struct ir_node *n, struct match *m)
{
	int64_t axis;

	memset(m, 0, sizeof(*m));
	if (is_op(n, "LayerNormalization", 0))
		m->beta = n->n_inputs > 2 ? n->inputs[2] : NULL;
	else if (is_op(n, "RMSNormalization", 0) || is_op(n, "SimplifiedLayerNormalization", 1))
		m->simplified = 1;
	else
		return 0;
	if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1] || !n->n_outputs ||
	    rw_attr_int(n, "stash_type", 1) != 1 || lowered(n))
		return 0;
	for (size_t i = 1; i < n->n_outputs; i++)
		if (n->outputs[i] && rw_value_used(n->outputs[i]))
			return 0;
	m->sum = n->inputs[0];
	m->gamma = n->inputs[1];
	axis = rw_attr_int(n, "axis", -1);
	if (axis != -1 && (!rw_type(c, m->sum) || axis != rw_type(c, m->sum)->rank - 1))
		return 0;
	m->norm = n;
	m->eps = rw_attr_float(n, "epsilon", 1e-5f);
	return match_add(c, m);
}

/* The decomposed RMS norm whose Sqrt is sq */
static int match_rms(const struct rw_ctx *c, struct ir_node *sq, struct rw_rms_match *r,
		     struct match *m)
{
	memset(m, 0, sizeof(*m));
	if (!rw_rms_match(c, sq, r) || rw_rms_made_by_pass(r))
		return 0;
	m->rms = r;
	m->simplified = 1;
	m->sum = r->x;
	m->gamma = r->gamma;
	m->norm = r->last;
	m->eps = (float)r->eps;
	return match_add(c, m);
}

/* Is the sum read by other than the norm (the decomposed norm's nodes)? */
static int sum_read_elsewhere(const struct match *m)
{
	if (!m->rms)
		return !rw_single_use(m->sum);
	for (size_t i = 0; i < m->sum->n_uses; i++) {
		size_t j = 0;

		while (j < m->rms->n && m->rms->nodes[j] != m->sum->uses[i])
			j++;
		if (j == m->rms->n)
			return 1;
	}
	for (size_t i = 0; i < m->sum->graph->n_outputs; i++)
		if (m->sum->graph->outputs[i].value == m->sum)
			return 1;
	return 0;
}

static int fuse(struct rw_ctx *c, struct match *m)
{
	const char *op = m->simplified ? "SkipSimplifiedLayerNormalization" :
			 "SkipLayerNormalization";
	struct ir_graph *g = c->m->graph;
	struct ir_value *in[5], *y = m->norm->outputs[0];
	struct ir_value *sum = sum_read_elsewhere(m) ? m->sum : NULL;
	struct ir_node *n;
	struct rw_emit e;
	size_t k = 0;
	int rc;

	if (!rw_target_accepts(c, "com.microsoft", op, rw_type(c, m->sum)->dtype) ||
	    m->add->index >= m->norm->index)
		return 0;
	if (rw_domain_ensure(c->m, "com.microsoft") < 0)
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	in[k++] = m->x;
	in[k++] = m->skip;
	in[k++] = m->gamma;
	if (!m->simplified && (m->beta || m->bias))
		in[k++] = m->beta;      /* NULL: absent, the bias follows */
	if (m->bias)
		in[k++] = m->bias;
	/* the fused node goes where the last Add was: its inputs are made
	 * before it, and every reader of the sum and of y after it */
	rw_begin(c, m->norm, &e);
	if (m->inner)
		ir_graph_detach_node(g, m->inner);
	e.pos = m->add->index;
	ir_graph_detach_node(g, m->add);
	n = rw_node(&e, op, "com.microsoft", in, k, y);
	if (n && (ir_node_set_float(n, "epsilon", m->eps) < 0 ||
		  (sum && (ir_node_append_output(n, NULL) < 0 ||
			   ir_node_append_output(n, NULL) < 0 ||
			   ir_node_append_output(n, sum) < 0))))
		e.failed = 1;
	ir_node_free(m->add);
	ir_node_free(m->inner);
	/* the decomposed norm's other nodes go once nothing reads them */
	if (m->rms)
		return rw_fuse_finish(c, &e, m->rms->nodes, m->rms->n, m->rms->last);
	if ((rc = rw_end(&e, 0)) < 0)
		return rc;
	return 1;
}

static int fuse_at(struct rw_ctx *c, struct ir_node *n)
{
	struct rw_rms_match r;
	struct match m;

	if (!match(c, n, &m) && !match_rms(c, n, &r, &m))
		return 0;
	return fuse(c, &m);
}

/* The RMS norms left as primitives below opset 23 on a target that
 * declares onnxruntime's SimplifiedLayerNormalization: a note says why
 * (fuse-rms-norm made none: onnx has no such op) */
static int note_left(struct rw_ctx *c)
{
	struct ir_graph *g = c->m->graph;
	struct rw_rms_match r;
	const struct ir_vtype *t;
	size_t left = 0;

	if (c->opset >= 23)
		return 0;
	for (size_t i = 0; i < g->n_nodes; i++)
		left += rw_rms_match(c, g->nodes[i], &r) && !rw_rms_made_by_pass(&r) &&
			(t = rw_type(c, r.x)) && rw_target_accepts(c, "com.microsoft",
				"SimplifiedLayerNormalization", t->dtype);
	if (!left)
		return 0;
	return rw_note(c, "fuse-skip-norm: %zu RMS norm%s left as primitives: %s declares "
		       "onnxruntime's SimplifiedLayerNormalization, which onnxruntime registers "
		       "in the default domain, where onnx has no such op (onnx's RMSNormalization "
		       "needs opset 23)", left, left == 1 ? "" : "s",
		       c->target ? c->target->id : "the target");
}

static int run(struct rw_ctx *c, size_t *changed)
{
	int rc = rw_fuse_each(c, fuse_at, changed);

	return rc < 0 ? rc : note_left(c);
}

const struct rw_pass rw_pass_fuse_skip_norm = {
	.name = "fuse-skip-norm",
	.summary = "Add (+ bias Add) then RMSNormalization, SimplifiedLayerNormalization, "
		   "LayerNormalization or a decomposed RMS norm fused into com.microsoft "
		   "SkipSimplifiedLayerNormalization or SkipLayerNormalization (the sum as "
		   "output 3 where read elsewhere)",
	.kind = RW_FUSE,
	.run = run,
};
