/* expand_sln.c: pass "expand-simplified-ln" (canonicalization): onnxruntime's
 * SimplifiedLayerNormalization in the default domain, where onnxruntime
 * registers it and onnxruntime-genai writes it, is no onnx op: onnx's
 * checker rejects a model holding it, and opmig writes none.  Each one
 * becomes the RMS norm as torch exports it,
 *   y = x / Sqrt(ReduceMean(x * x, axes from `axis`) + eps) * scale,
 * between Casts to float32 and back for float16 and bfloat16 data with
 * stash_type 1 (float32 statistics, as onnxruntime computes them); a read
 * inv_std_var is 1 / Sqrt(..) and y x times it.  That is the form
 * fuse-rms-norm (RMSNormalization-23) and fuse-skip-norm (com.microsoft
 * SkipSimplifiedLayerNormalization after a residual Add) fuse again where
 * the target declares those (rms_match.h takes this pass's nodes); a norm
 * neither takes stays primitives.  Nodes whose rank or dtype inference
 * does not know stay, and migrate calls the result invalid
 * (rw_sln_left). */
#include <stdio.h>
#include <string.h>

#include "rewriters/norm_int.h"

#define MAX_RANK RW_NORM_MAX_RANK

static int is_sln(const struct ir_node *n)
{
	return !strcmp(ir_s(n->op_type), "SimplifiedLayerNormalization") &&
	       (!n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx"));
}

static int expand(struct rw_ctx *c, struct ir_node *n)
{
	int64_t axes[MAX_RANK], axis;
	int dt = rw_node_dtype(c, n), r, up;
	struct ir_value *y, *inv = NULL;
	const struct ir_vtype *t;
	struct rw_emit e;
	size_t k = 0;
	char why[128];
	int rc;

	if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1] || !n->n_outputs ||
	    !n->outputs[0] || !rw_dtype_is_float(dt) ||
	    !rw_node_axis(c, n, -1, MAX_RANK, &r, &axis, why, sizeof(why)))
		return 0;
	for (int64_t i = axis; i < r; i++)
		axes[k++] = i;
	up = (dt == IR_DTYPE_FLOAT16 || dt == IR_DTYPE_BFLOAT16) &&
	     rw_attr_int(n, "stash_type", 1) == 1;
	if (n->n_outputs > 1 && n->outputs[1] && rw_value_used(n->outputs[1])) {
		inv = n->outputs[1];
		/* inv_std_var in the statistics' dtype */
		if (!(t = rw_type(c, inv)) || t->dtype != (up ? IR_DTYPE_FLOAT : dt))
			return 0;
	}
	for (size_t i = 2; i < n->n_outputs; i++)
		if (n->outputs[i] && rw_value_used(n->outputs[i]))
			return 0;
	rw_begin(c, n, &e);
	y = rw_norm_cast(&e, n->inputs[0], up ? IR_DTYPE_FLOAT : e.dtype);
	y = rw_norm_stats(&e, y, axes, k, rw_attr_float(n, "epsilon", 1e-5f), 1, NULL, inv);
	y = rw_norm_cast(&e, y, dt);
	rw_op_to(&e, "Mul", y, n->inputs[1], n->outputs[0]);
	if ((rc = rw_end(&e, 0)) < 0)
		return rc;
	return 1;
}

static int run(struct rw_ctx *c, size_t *changed)
{
	struct ir_graph *g = c->m->graph;
	int rc;

	*changed = 0;
	for (size_t i = 0; i < g->n_nodes; i++) {
		if (!is_sln(g->nodes[i]))
			continue;
		/* the node's place now holds its first replacement */
		if ((rc = expand(c, g->nodes[i])) < 0)
			return rc;
		*changed += (size_t)rc;
	}
	return 0;
}

int rw_sln_left(const struct rw_ctx *c, char *why, size_t size)
{
	const struct ir_graph *g = c->m->graph;

	for (size_t i = 0; i < g->n_nodes; i++)
		if (is_sln(g->nodes[i])) {
			snprintf(why, size, "the migrated model is invalid: node '%.200s' "
				 "(SimplifiedLayerNormalization): no onnx op in the default domain, "
				 "and expand-simplified-ln could not expand it (rank or dtypes "
				 "unknown)", ir_s(g->nodes[i]->name));
			return 1;
		}
	return 0;
}

const struct rw_pass rw_pass_expand_simplified_ln = {
	.name = "expand-simplified-ln",
	.summary = "onnxruntime's SimplifiedLayerNormalization in the default domain (no onnx op) "
		   "as the RMS norm's primitives, float16 statistics in float32 between Casts; "
		   "fuse-rms-norm and fuse-skip-norm fuse them again where the target declares a "
		   "valid fused op",
	.kind = RW_CANON,
	.run = run,
};
