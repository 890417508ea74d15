/* plan.c: the legalization planner (MLIR's dialect conversion, for one
 * target): a node the target cannot run is rewritten by the node pass
 * variant whose plan is fully legal and best, where a variant's plan is
 * legal when every op it emits is legal on the target or itself
 * legalizable, recursively (to RW_PLAN_DEPTH levels; an op being planned
 * counts as illegal below itself, which ends cycles).  Best is: exact
 * before approximate (the worst variant along the plan), then cheapest
 * (an op the target runs costs its rules' cost, default 1; a lowered op
 * costs its plan and a thousandth more, so that fewer rewrites win a tie;
 * a variant the sum over the op types it emits), then the
 * pass table's order.  Plans of emitted ops are memoized per domain x op x
 * data dtype at the context's opset and target; emitted ops are assumed
 * to meet their lowering's preconditions, which the next round checks on
 * the real nodes (see migrate.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rw_int.h"

#define RW_PLAN_DEPTH 6
#define RW_PLAN_STEP 0.001

struct memo {
	char *domain, *op;
	int dtype;
	int state;              /* 1 planning, 2 done */
	int depth;              /* the depth it was planned at */
	struct rw_plan plan;
};

struct rw_planner {
	const struct rules_target *target;
	int64_t opset;
	int prec16;
	const char *passes;
	size_t n, cap;
	struct memo *m;
};

void rw_planner_free(struct rw_planner *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->m[i].domain);
		free(p->m[i].op);
	}
	free(p->m);
	free(p);
}

int rw_plan_dtype(const struct rw_ctx *c, int dtype)
{
	return c->prec16 && dtype == IR_DTYPE_FLOAT ? IR_DTYPE_FLOAT16 : dtype;
}

static int op_cost(const struct rw_ctx *c, const char *domain, const char *op)
{
	const struct rules_op *o = c->target ?
		rules_target_find_op(c->target, *domain ? domain : "ai.onnx", op) : NULL;

	return o && o->cost > 0 ? (int)o->cost : 1;
}

/* Is plan a better than plan b? */
static int better(const struct rw_plan *a, const struct rw_plan *b)
{
	if (!isfinite(a->cost))
		return 0;
	if (!isfinite(b->cost))
		return 1;
	if (a->approx != b->approx)
		return a->approx < b->approx;
	return a->cost < b->cost;
}

static int pass_matches(const struct rw_pass *p, const char *domain, const char *op)
{
	const char *dom = *domain ? domain : "ai.onnx";

	for (const char *const *m = p->matches; m && *m; m++) {
		const char *colon = strchr(*m, ':');

		if (colon ? !strncmp(*m, dom, (size_t)(colon - *m)) &&
			    dom[colon - *m] == 0 && !strcmp(colon + 1, op) :
			    !strcmp(dom, "ai.onnx") && !strcmp(*m, op))
			return 1;
	}
	return 0;
}

static struct rw_planner *planner(struct rw_ctx *c)
{
	struct rw_planner *p = c->planner;

	if (p && (p->target != c->target || p->opset != c->opset || p->prec16 != c->prec16 ||
		  p->passes != c->passes)) {
		rw_planner_free(p);
		p = c->planner = NULL;
	}
	if (!p && (p = calloc(1, sizeof(*p)))) {
		p->target = c->target;
		p->opset = c->opset;
		p->prec16 = c->prec16;
		p->passes = c->passes;
		c->planner = p;
	}
	return p;
}

static struct memo *memo_find(struct rw_planner *p, const char *domain, const char *op,
			      int dtype)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->m[i].dtype == dtype && !strcmp(p->m[i].op, op) &&
		    !strcmp(p->m[i].domain, domain))
			return &p->m[i];
	return NULL;
}

static struct memo *memo_add(struct rw_planner *p, const char *domain, const char *op,
			     int dtype)
{
	struct memo *e;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 32;
		struct memo *q = realloc(p->m, cap * sizeof(*q));

		if (!q)
			return NULL;
		p->m = q;
		p->cap = cap;
	}
	e = &p->m[p->n];
	memset(e, 0, sizeof(*e));
	if (!(e->domain = strdup(domain)) || !(e->op = strdup(op))) {
		free(e->domain);
		return NULL;
	}
	e->dtype = dtype;
	p->n++;
	return e;
}

/* The probe: RW_PROBE_IO inputs and outputs, all this one value, which
 * inference knows nothing of. */
#define RW_PROBE_IO 16
static struct ir_value probe_value = { .name = (char *)"" };
static struct ir_value *probe_io[RW_PROBE_IO] = {
	&probe_value, &probe_value, &probe_value, &probe_value, &probe_value, &probe_value,
	&probe_value, &probe_value, &probe_value, &probe_value, &probe_value, &probe_value,
	&probe_value, &probe_value, &probe_value, &probe_value,
};

void rw_probe_node(struct ir_node *n, const char *domain, const char *op)
{
	memset(n, 0, sizeof(*n));
	n->op_type = (char *)op;
	n->domain = (char *)domain;
	n->name = (char *)"";
	n->inputs = n->outputs = probe_io;
	n->n_inputs = n->n_outputs = RW_PROBE_IO;
}

int rw_is_probe(const struct ir_node *n)
{
	return n->inputs == probe_io;
}

static void plan_none(struct rw_plan *r)
{
	memset(r, 0, sizeof(*r));
	r->cost = INFINITY;
}

static int op_plan(struct rw_ctx *c, const char *domain, const char *op, int dtype,
		   int depth, int *cut, struct rw_plan *out);

/* The plan of variant v for data of dtype: every emitted op legal or
 * legalizable; *cut is set when a depth limit or a cycle made it fail. */
static void variant_plan(struct rw_ctx *c, const struct rw_pass *p, size_t v, int dtype,
			 int depth, int *cut, struct rw_plan *out)
{
	const struct rw_variant *var = &p->variants[v];

	plan_none(out);
	out->pass = p;
	out->variant = (int)v;
	out->approx = p->approx ? p->approx[v] : 0;
	out->cost = 0;
	for (const char *const *e = var->emits; e && *e; e++) {
		const char *colon = strchr(*e, ':');
		char dom[64] = "";
		const char *op = *e;
		struct rw_plan sub;

		if (colon) {
			memcpy(dom, *e, (size_t)(colon - *e) < sizeof(dom) - 1 ?
			       (size_t)(colon - *e) : sizeof(dom) - 1);
			op = colon + 1;
		}
		/* a DequantizeLinear's data is of a quantized dtype, not the
		 * node's: the variant's vcheck asks the target about it */
		if (op_plan(c, dom, op, !*dom && !strcmp(op, "DequantizeLinear") ? 0 : dtype,
			    depth, cut, &sub) < 0 || !isfinite(sub.cost)) {
			out->cost = INFINITY;
			return;
		}
		/* a lowered op costs its plan and a little more: on equal
		 * costs, fewer rewrites win (GreaterOrEqual as Or(Greater,
		 * Equal) directly, not through LessOrEqual) */
		out->cost += sub.cost + (sub.pass ? RW_PLAN_STEP : 0);
		if (sub.approx > out->approx)
			out->approx = sub.approx;
	}
}

/* The best way to have op (domain "" is ai.onnx) of dtype on the target:
 * legal as it is (pass NULL), or lowered (pass, variant); cost INFINITY
 * when neither.  -1 out of memory (then the plan is none). */
static int op_plan(struct rw_ctx *c, const char *domain, const char *op, int dtype,
		   int depth, int *cut, struct rw_plan *out)
{
	struct rw_planner *pl;
	struct memo *e;
	struct rw_plan best;
	struct ir_node probe = { 0 };
	int mycut = 0;

	plan_none(out);
	if (rw_target_accepts(c, domain, op, dtype)) {
		out->cost = op_cost(c, domain, op);
		return 0;
	}
	if (depth >= RW_PLAN_DEPTH) {
		*cut = 1;
		return 0;
	}
	if (!(pl = planner(c))) {
		c->planner_oom = 1;
		return -1;
	}
	if ((e = memo_find(pl, domain, op, dtype))) {
		if (e->state == 1) {
			*cut = 1;      /* a cycle: not through here */
			return 0;
		}
		if (e->state == 2 && (isfinite(e->plan.cost) || e->depth <= depth)) {
			*out = e->plan;
			return 0;
		}
	} else if (!(e = memo_add(pl, domain, op, dtype))) {
		c->planner_oom = 1;
		return -1;
	}
	e->state = 1;
	e->depth = depth;
	plan_none(&best);
	/* which variants apply to the op, asked of a node that is only the
	 * op (inputs and outputs of unknown type, no attributes): vcheck
	 * tells them apart by op type (Max -> the binary Max variant of
	 * "variadic") */
	rw_probe_node(&probe, domain, op);
	for (size_t i = 0; i < rw_n_passes; i++) {
		const struct rw_pass *p = rw_passes[i];

		if (p->kind != RW_DECOMPOSE || !p->apply || !pass_matches(p, domain, op) ||
		    !rw_pass_allowed(c->passes, p))
			continue;
		for (size_t v = 0; v < p->n_variants; v++) {
			struct rw_plan cand;

			c->probe_dtype = dtype;
			if (p->vcheck && !p->vcheck(c, &probe, (int)v))
				continue;
			variant_plan(c, p, v, dtype, depth + 1, &mycut, &cand);
			if (better(&cand, &best))
				best = cand;
		}
	}
	/* memo_add may have moved the table: find the entry again */
	e = memo_find(pl, domain, op, dtype);
	e->state = 2;
	e->plan = best;
	if (!isfinite(best.cost) && mycut) {
		/* failed for want of depth or through a cycle: not final */
		e->state = 0;
		e->depth = -1;
		*cut = 1;
	}
	*out = best;
	return 0;
}

int rw_plan_op(struct rw_ctx *c, const char *domain, const char *op, int dtype,
	       struct rw_plan *out)
{
	int cut = 0;

	c->planner_oom = 0;
	if (op_plan(c, domain ? domain : "", op, rw_plan_dtype(c, dtype), 0, &cut, out) < 0)
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	return 0;
}

/* An op the plan of a node may not go through: the node's own, and those
 * of the nodes whose rewrites made it (GreaterOrEqual -> LessOrEqual must
 * not turn back into GreaterOrEqual).  Its memo entry is held "being
 * planned" while the node is planned, then restored. */
struct ban {
	char domain[64];
	char op[64];
	int state, depth;
	struct rw_plan plan;
};

#define MAX_BANS 16

static size_t collect_bans(const struct rw_ctx *c, const struct ir_node *n, struct ban *b)
{
	size_t k = 0;

	snprintf(b[k].domain, sizeof(b[k].domain), "%s",
		 n->domain && strcmp(n->domain, "ai.onnx") ? n->domain : "");
	snprintf(b[k++].op, sizeof(b[k].op), "%s", ir_s(n->op_type));
	/* the log entries up the chain name the ops that were rewritten */
	for (long e = rw_prov_find(c, n->name); e >= 0 && k < MAX_BANS; e = c->log[e].parent) {
		b[k].domain[0] = 0;
		snprintf(b[k++].op, sizeof(b[k].op), "%s", c->log[e].op);
	}
	return k;
}

static int hold(struct rw_ctx *c, struct ban *b, size_t n, int dtype)
{
	struct rw_planner *pl = planner(c);

	if (!pl)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct memo *e = memo_find(pl, b[i].domain, b[i].op, dtype);

		if (!e && !(e = memo_add(pl, b[i].domain, b[i].op, dtype)))
			return -1;
		b[i].state = e->state;
		b[i].depth = e->depth;
		b[i].plan = e->plan;
		e->state = 1;
	}
	return 0;
}

static void release_holds(struct rw_ctx *c, const struct ban *b, size_t n, int dtype)
{
	/* in reverse: a ban listed twice gets its first saved state back */
	for (size_t i = n; i-- > 0;) {
		struct memo *e = c->planner ? memo_find(c->planner, b[i].domain, b[i].op, dtype) : NULL;

		if (!e)
			continue;
		e->state = b[i].state;
		e->depth = b[i].depth;
		e->plan = b[i].plan;
	}
}

/* The refusals rw_plan_node keeps for a node no lowering takes. */
#define MAX_REFUSED 8

int rw_plan_node(struct rw_ctx *c, const struct ir_node *n, struct rw_plan *out)
{
	int dtype = rw_plan_dtype(c, rw_node_dtype(c, n));
	const char *dom = n->domain && strcmp(n->domain, "ai.onnx") ? n->domain : "";
	struct ban bans[MAX_BANS];
	size_t n_bans = collect_bans(c, n, bans);
	char why[256];
	struct {
		const char *pass;
		char why[256];
	} refused[MAX_REFUSED];
	size_t n_refused = 0;
	int rc = 0;

	plan_none(out);
	c->planner_oom = 0;
	if (hold(c, bans, n_bans, dtype) < 0) {
		release_holds(c, bans, n_bans, dtype);
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < rw_n_passes && rc == 0; i++) {
		const struct rw_pass *p = rw_passes[i];

		if (p->kind != RW_DECOMPOSE || !p->apply ||
		    !pass_matches(p, dom, ir_s(n->op_type)) || !rw_pass_allowed(c->passes, p))
			continue;
		why[0] = 0;
		if (p->check && !p->check(c, n, why, sizeof(why))) {
			if (why[0] && n_refused < MAX_REFUSED) {
				refused[n_refused].pass = p->name;
				memcpy(refused[n_refused++].why, why, sizeof(why));
			}
			continue;
		}
		for (size_t v = 0; v < p->n_variants; v++) {
			struct rw_plan cand;
			int cut = 0;

			if (p->vcheck && !p->vcheck(c, n, (int)v))
				continue;
			variant_plan(c, p, v, dtype, 1, &cut, &cand);
			if (c->planner_oom) {
				rc = ir_diag_error(c->d, IR_ENOMEM, "out of memory");
				break;
			}
			if (better(&cand, out))
				*out = cand;
		}
	}
	release_holds(c, bans, n_bans, dtype);
	/* a node no lowering takes keeps why each refused it, for the
	 * report's residual blockers (lowered nodes never need it) */
	for (size_t i = 0; rc == 0 && !out->pass && i < n_refused; i++)
		if (rw_refusal_add(c, n, refused[i].pass, refused[i].why) < 0)
			rc = ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	return rc;
}
