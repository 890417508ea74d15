/* precision_norm.c: the statistics of decomposed normalizations, for the
 * fp16 pass (precision.c): the nodes between a LayerNorm's or an RMS
 * norm's input and its normalized result (the mean, the difference, the
 * square, its mean, the epsilon, the square root, the division or
 * reciprocal), found with the fusions' own matchers (ln_match.h,
 * rms_match.h).  They stay float32: the square of a value above 256
 * overflows float16 (65504).  The Mul by gamma and the Add of beta are
 * not statistics and convert.  A pattern with a node the pass keeps whole
 * otherwise (a sensitive op's decomposition) is left to that rule. */
#include <string.h>

#include "rewriters/dtype_int.h"
#include "rewriters/ln_match.h"
#include "rewriters/rms_match.h"

const char *const rw_fp16_ln_stats =
	"the statistics of a layer norm (a square of a value above 256 overflows float16)";
const char *const rw_fp16_rms_stats =
	"the statistics of an RMS norm (a square of a value above 256 overflows float16)";

static int is_op(const struct ir_node *n, const char *op)
{
	return !strcmp(ir_s(n->op_type), op) && (!n->domain || !*n->domain);
}

/* Mark nodes[0..k) of g but its Casts with why, where nothing marked them
 * yet and none is whole (another rule keeps it); how many were marked (0:
 * none). */
static size_t mark(struct ir_graph *g, struct ir_node *const *nodes, size_t k,
		   const char **why, const char *reason, int (*whole)(const struct ir_node *))
{
	size_t n = 0;

	for (size_t i = 0; i < k; i++)
		if (nodes[i]->graph != g || nodes[i]->index >= g->n_nodes ||
		    g->nodes[nodes[i]->index] != nodes[i] || why[nodes[i]->index] ||
		    whole(nodes[i]))
			return 0;
	for (size_t i = 0; i < k; i++)
		if (!is_op(nodes[i], "Cast")) {
			why[nodes[i]->index] = reason;
			n++;
		}
	return n;
}

int rw_fp16_norm_stats(const struct rw_ctx *c, struct ir_graph *g, const char **why,
		       int (*whole)(const struct ir_node *), struct rw_fp16_norms *found)
{
	memset(found, 0, sizeof(*found));
	/* layer norms first: their variance alone looks like an RMS norm of
	 * the difference */
	for (size_t i = 0; i < g->n_nodes; i++) {
		struct rw_ln_match m;

		if (!is_op(g->nodes[i], "Div") || !rw_ln_match(c, g->nodes[i], &m))
			continue;
		/* all but the Mul by gamma (the last of nodes) */
		if (mark(g, m.nodes, m.n - 1, why, rw_fp16_ln_stats, whole) && !found->n_ln++)
			found->first_ln = g->nodes[i];
	}
	for (size_t i = 0; i < g->n_nodes; i++) {
		struct rw_rms_match m;
		struct ir_node *stats[12];
		size_t k = 0;

		if (!is_op(g->nodes[i], "Sqrt") || why[i] || !rw_rms_match(c, g->nodes[i], &m))
			continue;
		for (size_t j = 0; j < m.n; j++)
			if (m.nodes[j] != m.last)
				stats[k++] = m.nodes[j];
		if (mark(g, stats, k, why, rw_fp16_rms_stats, whole) && !found->n_rms++)
			found->first_rms = g->nodes[i];
	}
	return 0;
}
