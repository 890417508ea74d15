/* castlike.c: pass "cast-like": CastLike(x, like) as Cast(x) to like's
 * element type, which inference knows (like's values are never read);
 * saturate and round_mode carry over (Cast has them at the same opsets). */
#include <stdio.h>

#include "ir/registry.h"
#include "rewriters/dtype_int.h"

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	const struct ir_op_schema *s;
	const struct ir_vtype *t;

	if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1] || !n->n_outputs ||
	    !n->outputs[0]) {
		snprintf(why, size, "an input or the output is absent");
		return 0;
	}
	t = rw_type(c, n->inputs[1]);
	if (!t || !t->dtype || t->is_seq) {
		snprintf(why, size, "the second input's element type is unknown");
		return 0;
	}
	/* Cast at the opset it is written at must take both types (string
	 * from 9, bfloat16 from 13: a CastLike converted down keeps them) */
	if (!(s = ir_registry_find("", "Cast", c->opset)) ||
	    !rw_dt_admits(s, rw_dt_slot(s, 1, 0), rw_node_dtype(c, n)) ||
	    !rw_dt_admits(s, rw_dt_slot(s, 0, 0), t->dtype)) {
		snprintf(why, size, "Cast at opset %lld does not convert %s to %s", (long long)c->opset,
			 ir_dtype_name(rw_node_dtype(c, n)), ir_dtype_name(t->dtype));
		return 0;
	}
	return 1;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	static const char *const carried[] = { "saturate", "round_mode" };
	struct rw_emit e;
	struct ir_node *cast;
	int to = rw_type(c, n->inputs[1])->dtype;

	(void)v;
	rw_begin(c, n, &e);
	cast = rw_node(&e, "Cast", NULL, &n->inputs[0], 1, n->outputs[0]);
	if (cast && ir_node_set_int(cast, "to", to) < 0)
		e.failed = 1;
	for (size_t i = 0; cast && i < sizeof(carried) / sizeof(carried[0]); i++) {
		const struct ir_attr *a = ir_node_attr(n, carried[i]);

		if (a && (a->type == IR_ATTR_INT ? ir_node_set_int(cast, carried[i], a->i) :
			  ir_node_set_string(cast, carried[i], rw_attr_str(n, carried[i], ""))) < 0)
			e.failed = 1;
	}
	return rw_end(&e, 0);
}

static const char *const matches[] = { "CastLike", NULL };
static const char *const cast_ops[] = { "Cast", NULL };
static const struct rw_variant variants[] = { { "cast", cast_ops } };
RW_DECOMPOSITION(cast_like, "cast-like",
		 "CastLike as Cast to the second input's inferred element type",
		 matches, variants, check, NULL, apply);
