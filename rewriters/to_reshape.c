/* to_reshape.c: pass "to-reshape": Flatten, Squeeze and Unsqueeze as one
 * Reshape to their inferred output shape.  Every output dim must be
 * static, except a dynamic first dim that is the input's first dim
 * carried through unchanged (Flatten with axis >= 1, Squeeze and
 * Unsqueeze not touching axis 0), which the shape copies with 0.  Empty
 * tensors (a dim 0) are refused: Reshape would read 0 as "copy". */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

/* Does the op keep input dim 0 as output dim 0? */
static int keeps_first(struct rw_ctx *c, const struct ir_node *n)
{
	const char *op = ir_s(n->op_type);
	int64_t axes[IR_INFER_MAX_RANK];
	size_t k = 0;
	int r = rw_rank(c, n->inputs[0]);

	if (!strcmp(op, "Flatten")) {
		int64_t a = rw_attr_int(n, "axis", 1);

		return a >= 1 || (a < 0 && a + r >= 1);
	}
	if (n->n_inputs > 1 && n->inputs[1]) {
		if (!rw_const_ints(c, n->inputs[1], axes, IR_INFER_MAX_RANK, &k))
			return 0;
	} else {
		const int64_t *a = rw_attr_ints(n, "axes", &k);

		if (k > IR_INFER_MAX_RANK)
			return 0;
		for (size_t i = 0; i < k; i++)
			axes[i] = a[i];
		if (!a && !strcmp(op, "Squeeze"))
			return 0;    /* every 1 squeezed: may be axis 0 */
	}
	for (size_t i = 0; i < k; i++) {
		int64_t rr = !strcmp(op, "Unsqueeze") ? r + (int64_t)k : r;

		if (axes[i] == 0 || axes[i] + rr == 0)
			return 0;
	}
	return 1;
}

static int out_shape(struct rw_ctx *c, const struct ir_node *n, int64_t *dims, int *rank,
		     char *why, size_t size)
{
	const struct ir_vtype *ti, *to;

	if (!n->n_inputs || !n->inputs[0] || !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "input or output absent");
		return 0;
	}
	ti = rw_type(c, n->inputs[0]);
	to = rw_type(c, n->outputs[0]);
	if (!ti || !to || to->rank < 0 || ti->rank < 0) {
		snprintf(why, size, "the output shape is unknown");
		return 0;
	}
	for (int i = 0; i < to->rank; i++) {
		if (to->dims[i].kind == IR_VDIM_VALUE) {
			if (to->dims[i].value == 0) {
				snprintf(why, size, "the output is empty");
				return 0;
			}
			dims[i] = to->dims[i].value;
			continue;
		}
		if (i == 0 && ti->rank > 0 && keeps_first(c, n)) {
			dims[0] = 0;
			continue;
		}
		snprintf(why, size, "output dim %d is not static", i);
		return 0;
	}
	*rank = to->rank;
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int64_t dims[IR_INFER_MAX_RANK];
	int r;

	if (c->opset < 5) {
		snprintf(why, size, "needs opset >= 5 (Reshape's shape input)");
		return 0;
	}
	return out_shape(c, n, dims, &r, why, size);
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	int64_t dims[IR_INFER_MAX_RANK];
	int r = 0;
	struct rw_emit e;
	char why[64];

	(void)v;
	out_shape(c, n, dims, &r, why, sizeof(why));
	rw_begin(c, n, &e);
	rw_op_to(&e, "Reshape", n->inputs[0], rw_ints(&e, dims, (size_t)r), n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const matches[] = { "Flatten", "Squeeze", "Unsqueeze", NULL };
static const char *const ops[] = { "Reshape", NULL };
static const struct rw_variant variants[] = { { "reshape", ops } };
RW_DECOMPOSITION(to_reshape, "to-reshape",
		 "Flatten, Squeeze and Unsqueeze as Reshape to the static output shape (0 copies a dynamic batch)",
		 matches, variants, check, NULL, apply);
