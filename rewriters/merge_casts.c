/* merge_casts.c: pass "merge-casts": Cast(Cast(x, to M), to D) as one
 * Cast(x, to D) where the first Cast is exact (every value of x's dtype S
 * is a value of M: bool into any number, narrow integers into wider ones
 * and into floats whose significand holds them, narrower floats into
 * wider ones), so that M -> D of those values converts them as S -> D
 * would: uint8 -> float32 -> float16 is uint8 -> float16, as the fp16
 * pass can leave behind a Cast of codes to float32.  Only where the middle
 * value has no reader but the second Cast and is not a graph output, and
 * where the target's rules take Cast of S to D.  float32 -> int32 ->
 * float32 (truncates) and float64 -> float32 -> float16 (rounds twice)
 * stay.  D == S (a round trip through a wider type): both go, unless the
 * result is a graph output (then one Cast to S stays for its name). */
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rw_int.h"

#define B(t) (1u << (t))

/* The dtypes M into which every value of s converts exactly (a bit mask
 * of dtypes, 0: none). */
static unsigned exact_into(int s)
{
	const unsigned fl = B(IR_DTYPE_FLOAT) | B(IR_DTYPE_DOUBLE);
	const unsigned wide = B(IR_DTYPE_INT64) | B(IR_DTYPE_DOUBLE);

	switch (s) {
	case IR_DTYPE_BOOL:
		return B(IR_DTYPE_UINT8) | B(IR_DTYPE_INT8) | B(IR_DTYPE_UINT16) |
		       B(IR_DTYPE_INT16) | B(IR_DTYPE_UINT32) | B(IR_DTYPE_INT32) |
		       B(IR_DTYPE_UINT64) | B(IR_DTYPE_INT64) | B(IR_DTYPE_FLOAT16) |
		       B(IR_DTYPE_BFLOAT16) | fl;
	case IR_DTYPE_UINT8:    /* 8 bits: float16's 11, bfloat16's 8 */
		return B(IR_DTYPE_UINT16) | B(IR_DTYPE_INT16) | B(IR_DTYPE_UINT32) |
		       B(IR_DTYPE_INT32) | B(IR_DTYPE_UINT64) | B(IR_DTYPE_INT64) |
		       B(IR_DTYPE_FLOAT16) | B(IR_DTYPE_BFLOAT16) | fl;
	case IR_DTYPE_INT8:
		return B(IR_DTYPE_INT16) | B(IR_DTYPE_INT32) | B(IR_DTYPE_INT64) |
		       B(IR_DTYPE_FLOAT16) | B(IR_DTYPE_BFLOAT16) | fl;
	case IR_DTYPE_UINT16:   /* 16 bits: float32's 24 */
		return B(IR_DTYPE_UINT32) | B(IR_DTYPE_INT32) | B(IR_DTYPE_UINT64) | wide |
		       B(IR_DTYPE_FLOAT);
	case IR_DTYPE_INT16:
		return B(IR_DTYPE_INT32) | wide | B(IR_DTYPE_FLOAT);
	case IR_DTYPE_UINT32:   /* 32 bits: double's 53 */
		return B(IR_DTYPE_UINT64) | wide;
	case IR_DTYPE_INT32:
		return wide;
	case IR_DTYPE_FLOAT16:  /* and NaN, the infinities, subnormals */
	case IR_DTYPE_BFLOAT16:
		return fl;
	case IR_DTYPE_FLOAT:
		return B(IR_DTYPE_DOUBLE);
	default:
		return 0;
	}
}

/* The dtypes a merged Cast may make (numbers and bool; not the 8- and
 * 4-bit floats, 4-bit integers, strings or complex ones, whose Casts
 * runtimes implement from few types). */
static int plain(int d)
{
	return (d >= IR_DTYPE_FLOAT && d <= IR_DTYPE_INT64) || d == IR_DTYPE_BOOL ||
	       (d >= IR_DTYPE_FLOAT16 && d <= IR_DTYPE_UINT64) || d == IR_DTYPE_BFLOAT16;
}

/* Does the target take Cast of s to d (its rules' dtypes, input 0's)? */
static int takes_cast(const struct rw_ctx *c, int s, int d)
{
	const struct rules_op *o = c->target ?
		rules_target_find_op(c->target, "ai.onnx", "Cast") : NULL;

	if (!rw_target_accepts(c, "", "Cast", d) || !rw_target_accepts(c, "", "Cast", s))
		return 0;
	for (size_t i = 0; o && i < o->n_inputs; i++)
		if (o->inputs[i].index == 0 && o->inputs[i].dtypes &&
		    !(o->inputs[i].dtypes & RULES_DTYPE_BIT(s)))
			return 0;
	return 1;
}

static int is_cast(const struct ir_node *n)
{
	return n && !strcmp(ir_s(n->op_type), "Cast") &&
	       (!n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx")) &&
	       n->n_inputs == 1 && n->inputs[0] && n->n_outputs == 1 && n->outputs[0];
}

/* The first Cast of a pair ending in n that merges (*src: its input's
 * dtype), else NULL. */
static struct ir_node *mergeable(struct rw_ctx *c, struct ir_graph *g, const struct ir_node *n,
				 int *src)
{
	struct ir_value *m = is_cast(n) ? n->inputs[0] : NULL;
	struct ir_node *p = m ? m->producer : NULL;
	const struct ir_vtype *x;
	int s, mid, d;

	if (!is_cast(p) || p->graph != g || m->n_uses != 1 || m->uses[0] != n ||
	    ir_graph_is_output(g, m) || !(x = rw_type(c, p->inputs[0])) || x->is_seq)
		return NULL;
	s = x->dtype;
	mid = (int)rw_attr_int(p, "to", 0);
	d = (int)rw_attr_int(n, "to", 0);
	if (s <= 0 || s >= 32 || mid <= 0 || mid >= 32 || !(exact_into(s) & B(mid)) || !plain(d) ||
	    (d != s && !takes_cast(c, s, d)))
		return NULL;
	*src = s;
	return p;
}

/* n reads x itself (and p goes); a round trip to x's dtype goes whole
 * where its result is no graph output.  1 merged, < 0 error. */
static int merge(struct ir_graph *g, struct ir_node *p, struct ir_node *n, int s)
{
	struct ir_value *x = p->inputs[0], *y = n->outputs[0];
	int rc;

	if ((rc = ir_node_set_input(n, 0, x)) < 0)
		return rc;
	ir_graph_remove_node(g, p);
	if (rw_attr_int(n, "to", 0) == s && !ir_graph_is_output(g, y)) {
		ir_graph_detach_node(g, n);
		rc = ir_value_replace_uses(y, x);
		ir_node_free(n);
		if (rc < 0)
			return rc;
	}
	return 1;
}

struct walk {
	struct rw_ctx *c;
	size_t changed;
};

static int visit(struct ir_graph *g, int depth, void *arg)
{
	struct walk *w = arg;

	(void)depth;
	for (size_t i = 0; i < g->n_nodes;) {
		int s = 0, rc;
		struct ir_node *n = g->nodes[i], *p = mergeable(w->c, g, n, &s);


		if (!p) {
			i++;
			continue;
		}
		/* p came before n: the next node is at i now (or n itself,
		 * merged, when p came after) */
		if ((rc = merge(g, p, n, s)) < 0)
			return ir_diag_error(w->c->d, rc, "out of memory");
		w->changed++;
	}
	return 0;
}

static int run(struct rw_ctx *c, size_t *changed)
{
	struct walk w = { c, 0 };
	int rc = ir_graph_walk(c->m->graph, visit, &w);

	*changed = w.changed;
	return rc;
}

const struct rw_pass rw_pass_merge_casts = {
	.name = "merge-casts",
	.summary = "Cast of a Cast as one Cast where the first is exact (uint8 -> float32 -> float16 as uint8 -> float16; not float32 -> int32 -> float32 nor float64 -> float32 -> float16) and nothing else reads the middle value",
	.kind = RW_CANON,
	.run = run,
};
