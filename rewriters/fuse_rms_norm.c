/* fuse_rms_norm.c: pass "fuse-rms-norm": RMSNorm as torch exports it
 * (rms_match.h: Pow/ReduceMean/Add/Sqrt/Div or Reciprocal/Mul, perhaps
 * between Casts to float32 and back) fused into RMSNormalization (opset
 * 23) for targets that declare it for the dtypes, no node of the pattern
 * but its Casts made by a pass (the rms-norm lowering's output stays).
 * Below opset 23 it fuses nothing: onnx has no standalone RMS norm there,
 * and onnxruntime's SimplifiedLayerNormalization is registered in the
 * default domain only (a com.microsoft node does not load), where onnx's
 * checker rejects it.  A norm after a residual Add is fuse-skip-norm's at
 * any opset (com.microsoft SkipSimplifiedLayerNormalization, a valid
 * op of another domain). */
#include <string.h>

#include "rewriters/rms_match.h"

static int fuse(struct rw_ctx *c, struct rw_rms_match *m)
{
	const struct ir_vtype *t = rw_type(c, m->x), *g = rw_type(c, m->gamma);
	struct ir_value *in[2] = { m->x, m->gamma };
	struct rw_emit e;
	struct ir_node *n;

	if (!t || !g || (t->dtype != IR_DTYPE_FLOAT && t->dtype != IR_DTYPE_FLOAT16 &&
			 t->dtype != IR_DTYPE_BFLOAT16) || !rw_dtype_is_float(g->dtype) ||
	    c->opset < 23 || !rw_target_accepts(c, "", "RMSNormalization", t->dtype) ||
	    !rw_target_accepts(c, "", "RMSNormalization", g->dtype) || rw_rms_made_by_pass(m))
		return 0;
	rw_begin(c, m->last, &e);
	n = rw_node(&e, "RMSNormalization", NULL, in, 2, m->last->outputs[0]);
	if (n && (ir_node_set_int(n, "axis", -1) < 0 ||
		  ir_node_set_float(n, "epsilon", (float)m->eps) < 0 ||
		  ir_node_set_int(n, "stash_type", 1) < 0))
		e.failed = 1;
	return rw_fuse_finish(c, &e, m->nodes, m->n, m->last);
}

static int fuse_at(struct rw_ctx *c, struct ir_node *n)
{
	struct rw_rms_match m;

	if (!rw_rms_match(c, n, &m))
		return 0;
	return fuse(c, &m);
}

RW_FUSION(fuse_rms_norm, "fuse-rms-norm",
	  "Pow/ReduceMean/Add/Sqrt/Div (or Reciprocal)/Mul fused into RMSNormalization "
	  "(opset 23)",
	  fuse_at);
