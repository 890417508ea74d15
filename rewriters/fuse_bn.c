/* fuse_bn.c: pass "fuse-batch-norm": BatchNormalization (inference mode)
 * folded into the Conv or Gemm before it, whose output only it reads.
 * With s = scale / sqrt(var + eps) per channel:
 *   Conv  W'[o] = W[o] s[o], b'[o] = (b[o] - mean[o]) s[o] + B[o]
 *   Gemm  B' scales output column j by s[j] (row j when transB), C' =
 *         s (beta C - mean) + B with beta 1; C absent, scalar, [N] or
 *         [1, N]
 * The weights, the bias and every BN input must be initializers; new
 * initializers hold the folded values: the weight's are computed from it
 * where it lies, a piece at a time, when the model is written or run
 * (scaled_weight.c), never held; the bias's small vector is computed at
 * once.  Conv+BN+Relu chains become Conv+Relu.  Float and double data;
 * the fold changes rounding only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

struct bn {
	struct rt_value *scale, *bias, *mean, *var, *b;
	struct ir_tensor *w;          /* the weight initializer's (borrowed) */
	int64_t ch;
};

static void bn_release(struct bn *b)
{
	rt_value_unref(b->scale);
	rt_value_unref(b->bias);
	rt_value_unref(b->mean);
	rt_value_unref(b->var);
	rt_value_unref(b->b);
	memset(b, 0, sizeof(*b));
}

static int is_vec(const struct rt_value *v, int64_t n)
{
	return v && v->rank == 1 && v->dims[0] == n;
}

/* What the fold needs; 0 when the pattern does not hold. */
static int gather(struct rw_ctx *c, const struct ir_node *bn, struct ir_node **pp, struct bn *b)
{
	struct ir_node *p = bn->n_inputs == 5 && bn->inputs[0] ? bn->inputs[0]->producer : NULL;
	const char *op = p ? ir_s(p->op_type) : "";
	int gemm = !strcmp(op, "Gemm");
	const struct ir_vtype *t;

	memset(b, 0, sizeof(*b));
	if (!p || p->graph != bn->graph || (p->domain && *p->domain) ||
	    (strcmp(op, "Conv") && !gemm) || !rw_single_use(bn->inputs[0]) ||
	    rw_attr_int(bn, "training_mode", 0) || rw_attr_int(bn, "spatial", 1) != 1 ||
	    p->n_inputs < 2)
		return 0;
	for (size_t i = 1; i < bn->n_outputs; i++)
		if (rw_value_used(bn->outputs[i]))
			return 0;
	t = rw_type(c, bn->inputs[0]);
	if (!t || (t->dtype != IR_DTYPE_FLOAT && t->dtype != IR_DTYPE_DOUBLE) ||
	    (gemm && t->rank != 2) || !rw_target_accepts(c, "", op, t->dtype))
		return 0;
	b->scale = rw_init_value(bn->inputs[1]);
	b->bias = rw_init_value(bn->inputs[2]);
	b->mean = rw_init_value(bn->inputs[3]);
	b->var = rw_init_value(bn->inputs[4]);
	/* the weight is read only where folded, a piece at a time */
	if (p->inputs[1] && p->inputs[1]->init && !p->inputs[1]->is_input)
		b->w = p->inputs[1]->init;
	if (p->n_inputs > 2 && p->inputs[2] && !(b->b = rw_init_value(p->inputs[2])))
		goto no;
	if (!b->scale || !b->w || b->w->n_dims < 2 || ir_tensor_numel(b->w) < 0 ||
	    (b->w->dtype != IR_DTYPE_FLOAT && b->w->dtype != IR_DTYPE_DOUBLE))
		goto no;
	b->ch = b->scale->numel;
	if (!is_vec(b->scale, b->ch) || !is_vec(b->bias, b->ch) || !is_vec(b->mean, b->ch) ||
	    !is_vec(b->var, b->ch))
		goto no;
	if (gemm) {
		int tb = rw_attr_int(p, "transB", 0) != 0;

		if (b->w->n_dims != 2 || b->w->dims[tb ? 0 : 1] != b->ch)
			goto no;
		if (b->b && b->b->numel != 1 && !(b->b->numel == b->ch &&
		    (b->b->rank == 1 || (b->b->rank == 2 && b->b->dims[0] == 1))))
			goto no;
	} else if (b->w->dims[0] != b->ch || (b->b && !is_vec(b->b, b->ch))) {
		goto no;
	}
	*pp = p;
	return 1;
no:
	bn_release(b);
	return 0;
}

static int fold(struct rw_ctx *c, struct ir_node *bnode, struct ir_node *p, struct bn *b)
{
	double eps = rw_attr_float(bnode, "epsilon", 1e-5f), *s;
	int gemm = !strcmp(ir_s(p->op_type), "Gemm");
	int tb = gemm && rw_attr_int(p, "transB", 0) != 0;
	double beta = gemm ? rw_attr_float(p, "beta", 1.0f) : 1;
	/* output channel o of element i: (i / inner) % ch (Conv: the leading
	 * axis; Gemm: B's row with transB, else its column) */
	int64_t numel = ir_tensor_numel(b->w);
	int64_t inner = gemm ? (tb ? b->w->dims[1] : 1) : b->ch ? numel / b->ch : 0;
	struct ir_tensor *wt = NULL;
	struct rt_value *nb = NULL;
	struct ir_value *in[3];
	struct ir_node *q;
	struct rw_emit e;
	struct ir_diag d;
	char name[256];
	int rc;

	ir_diag_init(&d);
	if (!(s = malloc((size_t)b->ch * sizeof(*s) + 1)))
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	for (int64_t o = 0; o < b->ch; o++)
		s[o] = rt_value_get_f64(b->scale, o) / sqrt(rt_value_get_f64(b->var, o) + eps);
	if (rt_tensor_new(NULL, b->w->dtype, 1, &b->ch, &nb, &d) < 0) {
		free(s);
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	}
	for (int64_t o = 0; o < b->ch; o++) {
		double cb = b->b ? rt_value_get_f64(b->b, b->b->numel == 1 ? 0 : o) * beta : 0;

		rt_value_set_f64(nb, o, (cb - rt_value_get_f64(b->mean, o)) * s[o] +
				 rt_value_get_f64(b->bias, o));
	}
	rw_begin(c, bnode, &e);
	in[0] = p->inputs[0];
	rw_const_name(&e, name, sizeof(name));
	if (rw_scaled_weight(b->w, name, b->ch, inner ? inner : 1, s, &wt, &d) < 0)
		e.failed = 1;
	in[1] = rw_const_tensor(&e, wt);
	in[2] = rw_const_value(&e, nb);
	q = rw_node(&e, ir_s(p->op_type), NULL, in, 3, bnode->outputs[0]);
	for (size_t i = 0; q && i < p->n_attrs; i++)
		if (ir_node_copy_attr(q, ir_s(p->attrs[i]->name), p->attrs[i]) < 0)
			e.failed = 1;
	if (q && gemm && ir_node_set_float(q, "beta", 1.0f) < 0)
		e.failed = 1;
	rt_value_unref(nb);
	free(s);
	if ((rc = rw_end(&e, 0)) < 0)
		return rc;
	rw_remove_unread(c->m->graph, &p, 1);
	return 1;
}

static int fuse_at(struct rw_ctx *c, struct ir_node *n)
{
	struct ir_node *p;
	struct bn b;
	int rc;

	if (strcmp(ir_s(n->op_type), "BatchNormalization") || (n->domain && *n->domain) ||
	    !gather(c, n, &p, &b))
		return 0;
	rc = fold(c, n, p, &b);
	bn_release(&b);
	return rc;
}

RW_FUSION(fuse_batch_norm, "fuse-batch-norm",
	  "BatchNormalization folded into the Conv or Gemm before it (constant weights)",
	  fuse_at);
