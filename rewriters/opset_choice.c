/* opset_choice.c: the default-domain opset migrate converts a model to
 * when the target accepts several.  Every opset of the target's range
 * (from 7, where broadcasting took its modern form) that the converter can
 * bring the model to is scored by the nodes that are legal on the target
 * at that opset, or have a legal plan there; the highest score wins.  Ties
 * keep the model's own opset when it is among the best (converting gains
 * nothing then, and every adapter is a risk), else take the newest. */
#include <stdio.h>
#include <string.h>

#include "ir/registry.h"
#include "oprules/rules.h"
#include "rewriters/migrate.h"
#include "rewriters/rw_int.h"

/* Reasons other than the op's version? */
static int other_reasons(const struct scan_verdict *v)
{
	for (size_t i = 0; i < v->n_reasons; i++)
		if (strcmp(v->reasons[i].code, SCAN_REASON_VERSION))
			return 1;
	return 0;
}

/* Is node i legal at the context's opset, or has a plan there? */
static int legal_at(struct rw_ctx *c, const struct scan_result *sr, size_t i, int *ok)
{
	const struct scan_node *sn = &sr->nodes[i];
	const struct scan_verdict *v = &sr->targets[0].verdicts[i];
	const char *op = sn->op_type;
	const struct ir_op_schema *s;
	struct rw_plan p;

	*ok = 0;
	if (strcmp(sn->domain, "ai.onnx")) {
		*ok = v->status <= SCAN_REWRITABLE;
		return 0;
	}
	s = ir_registry_find("", op, c->opset);
	if (s && !s->deprecated && !other_reasons(v) && rw_target_accepts(c, "", op, 0)) {
		*ok = 1;
		return 0;
	}
	if (v->status == SCAN_REWRITABLE && v->rewrite &&
	    (!strcmp(v->rewrite, "fold-constants") || !strcmp(v->rewrite, "fp16"))) {
		*ok = 1;
		return 0;
	}
	if (rw_plan_node(c, sn->node, &p) < 0)
		return IR_ENOMEM;
	*ok = p.pass != NULL;
	return 0;
}

static int score(struct rw_ctx *c, const struct scan_result *sr, int64_t opset, size_t *n)
{
	int64_t keep = c->opset;
	int rc = 0, ok;

	*n = 0;
	c->opset = opset;
	for (size_t i = 0; i < sr->n_nodes && rc == 0; i++) {
		if (sr->nodes[i].function)
			continue;       /* functions keep their own imports */
		if ((rc = legal_at(c, sr, i, &ok)) == 0)
			*n += (size_t)ok;
	}
	c->opset = keep;
	return rc;
}

int mg_choose_opset(struct rw_ctx *c, const struct scan_result *sr, int64_t *best,
		    char *how, size_t size)
{
	const struct rules_target *t = c->target;
	int64_t lo, hi, from = c->opset;
	size_t best_n = 0, n;
	char why[300];
	int found = 0, rc;

	*best = 0;
	how[0] = 0;
	if (!t || t->opset_min < 0 || from <= 0)
		return 0;
	lo = t->opset_min > 7 ? t->opset_min : 7;
	hi = t->opset_max < ir_registry_max_version("") ? t->opset_max :
	     ir_registry_max_version("");
	if (lo >= hi)
		return 0;       /* one opset or none: nothing to choose */
	for (int64_t k = hi; k >= lo; k--) {
		if ((rc = rw_opset_convertible(c, k, why, sizeof(why))) < 0)
			return rc;
		if (!rc)
			continue;
		if ((rc = score(c, sr, k, &n)) < 0)
			return ir_diag_error(c->d, rc, "out of memory");
		/* newest first: a later (older) one wins only with more, or
		 * as the model's own opset on a tie */
		if (!found || n > best_n || (n == best_n && k == from)) {
			*best = k;
			best_n = n;
			found = 1;
		}
	}
	if (found && *best != from)
		snprintf(how, size, "opset %lld chosen (of %lld to %lld that %s accepts): %zu of "
			 "%zu nodes legal or planned there", (long long)*best, (long long)lo,
			 (long long)hi, t->id, best_n, sr->n_nodes);
	return 0;
}
