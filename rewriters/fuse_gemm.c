/* fuse_gemm.c: pass "fuse-gemm": MatMul(A, B) + C with A 2-D, B a 2-D
 * initializer and C unidirectionally broadcastable to [M, N] (static
 * shape of rank <= 2), the product read only by the Add, fused into
 * Gemm(A, B, C) for targets that accept Gemm, unless a pass made them
 * (the gemm decomposition's output stays).  Float data. */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

static int c_ok(const struct rw_ctx *c, const struct ir_value *v, const int64_t *out)
{
	int64_t d[IR_INFER_MAX_RANK];
	int r;

	if (!rw_static_shape(c, v, d, &r) || r > 2)
		return 0;
	for (int i = 0; i < r; i++)
		if (d[i] != 1 && d[i] != out[2 - r + i])
			return 0;
	return 1;
}

static int try_fuse(struct rw_ctx *c, struct ir_node *mm)
{
	struct ir_value *in[3];
	struct ir_node *add;
	const struct ir_vtype *t;
	int64_t out[IR_INFER_MAX_RANK];
	int r;
	struct rw_emit e;
	int rc;

	if (mm->n_inputs != 2 || !mm->inputs[0] || !mm->inputs[1] || !mm->n_outputs ||
	    rw_rank(c, mm->inputs[0]) != 2 || rw_rank(c, mm->inputs[1]) != 2 ||
	    !mm->inputs[1]->init || mm->inputs[1]->is_input ||
	    !(add = rw_sole_user(mm->outputs[0], "Add")) || add->n_inputs != 2 ||
	    !rw_static_shape(c, mm->outputs[0], out, &r) || r != 2)
		return 0;
	in[2] = rw_other_input(add, mm->outputs[0]);
	t = rw_type(c, mm->inputs[0]);
	if (!in[2] || in[2] == mm->outputs[0] || !c_ok(c, in[2], out) || !t ||
	    !rw_dtype_is_float(t->dtype) || c->opset < 7 || rw_made_by_pass(&mm, 1) ||
	    rw_made_by_pass(&add, 1) ||
	    !rw_target_accepts(c, "", "Gemm", t->dtype))
		return 0;
	in[0] = mm->inputs[0];
	in[1] = mm->inputs[1];
	rw_begin(c, add, &e);
	rw_node(&e, "Gemm", NULL, in, 3, add->outputs[0]);
	if ((rc = rw_end(&e, 0)) < 0)
		return rc;
	rw_remove_unread(c->m->graph, &mm, 1);
	return 1;
}

static int fuse_at(struct rw_ctx *c, struct ir_node *n)
{
	if (strcmp(ir_s(n->op_type), "MatMul") || (n->domain && *n->domain))
		return 0;
	return try_fuse(c, n);
}

RW_FUSION(fuse_gemm, "fuse-gemm",
	  "MatMul (2-D, constant B) + Add of a bias broadcastable to [M, N] fused into Gemm",
	  fuse_at);
