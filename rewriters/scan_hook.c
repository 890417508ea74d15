/* scan_hook.c: what migrate would do about a node the scanner finds
 * limited or blocked, as the scanner's rewrite hook (scan_options) for
 * scan, batch and migrate alike: a lowering the planner finds (the pass),
 * constant folding of a main-graph node computed from constants only, or
 * float16 for a node blocked only because the target lacks float32 and
 * takes float16 (migrate switches precision by itself then).  A node the
 * target runs only quantized keeps its verdict, with `--precision int8` as
 * the fix to name. */
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rw_int.h"
#include "scanner/scan.h"

/* Every output's size known and at most 16 MiB: what fold-constants
 * keeps as an initializer. */
static int small_outputs(const struct rw_ctx *c, const struct ir_node *n)
{
	for (size_t i = 0; i < n->n_outputs; i++) {
		const struct ir_vtype *t = n->outputs[i] ? rw_type(c, n->outputs[i]) : NULL;
		int64_t numel = 1, bytes;

		if (!n->outputs[i])
			continue;
		if (!t || t->rank < 0 || t->is_seq)
			return 0;
		for (int k = 0; k < t->rank; k++) {
			if (t->dims[k].kind != IR_VDIM_VALUE || t->dims[k].value < 0 ||
			    (t->dims[k].value && numel > (INT64_C(1) << 40) / t->dims[k].value))
				return 0;
			numel *= t->dims[k].value;
		}
		bytes = ir_dtype_raw_size(t->dtype, numel);
		if (bytes < 0 || bytes > (16 << 20))
			return 0;
	}
	return 1;
}

int rw_precision_fix(struct rw_ctx *c, const struct ir_node *n, const struct scan_verdict *v)
{
	const char *pref = c->target ? c->target->preferred_precision : NULL;

	(void)n;
	if (!v)
		return RW_FIX_NONE;
	if (v->fix == SCAN_FIX_FP16 && (!pref || !strcmp(pref, "fp16")))
		return RW_FIX_FP16;
	if (v->fix == SCAN_FIX_INT8 || (v->fix == SCAN_FIX_FP16 && !strcmp(pref, "int8")))
		return RW_FIX_INT8;
	return RW_FIX_NONE;
}

int rw_scan_hook(void *ctx, const struct rules_target *t, const struct scan_node *sn,
		 const struct scan_verdict *v, const char **pass)
{
	struct rw_ctx *c = ctx;
	const struct rules_target *keep = c->target;
	int ok = 0, fix;

	c->target = t;
	if (rw_can_rewrite(c, sn->node, pass)) {
		ok = 1;
	} else if (sn->constant && !sn->depth && !sn->function && rw_pass_find("fold-constants") &&
		   (!strcmp(sn->op_type, "ConstantOfShape") || small_outputs(c, sn->node))) {
		/* what fold-constants removes: main-graph nodes computed from
		 * constants only, results up to 16 MiB unless they are
		 * ConstantOfShape fills */
		*pass = "fold-constants";
		ok = 1;
	} else if ((fix = rw_precision_fix(c, sn->node, v)) == RW_FIX_FP16) {
		*pass = "fp16";
		ok = 1;
	} else if (fix == RW_FIX_INT8) {
		*pass = "--precision int8";     /* named, not done */
	}
	c->target = keep;
	return ok;
}
