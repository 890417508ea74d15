/* tlower.c: the property-test harness of the lowering suites (see
 * tlower.h): seeded inputs per dtype and value mode, the run of the
 * original and of each applicable variant's rewrite, the exact check of the
 * ops emitted, output comparison, per-variant application counts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "rewriters/rewrite.h"
#include "runtime/runtime.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tlower.h"

#define MAX_IO 8
#define MAX_PASSES 48

static struct {
	const char *pass;
	int counts[32];
} tally[MAX_PASSES];
static size_t n_tally;

static int *counts_of(const char *pass)
{
	for (size_t i = 0; i < n_tally; i++)
		if (!strcmp(tally[i].pass, pass))
			return tally[i].counts;
	CU_ASSERT_FATAL(n_tally < MAX_PASSES);
	tally[n_tally].pass = pass;
	return tally[n_tally++].counts;
}

static int is_float(int dt)
{
	return dt == IR_DTYPE_FLOAT || dt == IR_DTYPE_DOUBLE || dt == IR_DTYPE_FLOAT16 ||
	       dt == IR_DTYPE_BFLOAT16;
}

static double draw(uint64_t *s, int dt, enum tl_values mode)
{
	uint64_t r = tg_next(s);

	if (dt == IR_DTYPE_BOOL)
		return (double)(r & 1);
	if (!is_float(dt)) {
		int unsig = dt == IR_DTYPE_UINT8 || dt == IR_DTYPE_UINT16 ||
			    dt == IR_DTYPE_UINT32 || dt == IR_DTYPE_UINT64;

		return unsig ? (double)(r % 10) : (double)(r % 19) - 9;
	}
	switch (mode) {
	case TL_TIES:
		return (double)(r % 5) - 2;
	case TL_SPECIAL: {
		static const double sp[] = { NAN, INFINITY, -INFINITY, -0.0, 0.0 };

		return r % 4 == 0 ? sp[(r >> 3) % 5] : (double)(r % 5) - 2;
	}
	case TL_POSITIVE:
		return 0.1 + (double)(r % 2900) / 1000.0;
	case TL_WIDE:
		return (r & 1 ? -1 : 1) * pow(10, (double)(r % 7000) / 1000.0 - 3);
	default:
		return (double)(r % 6000) / 1000.0 - 3;
	}
}

/* Seeded inputs of the session's graph inputs (symbolic dims: 2), those
 * fill takes drawn by it */
static size_t make_inputs(const struct ir_model *m, struct rt_session *s, uint64_t seed,
			  enum tl_values mode, tl_fill_fn fill, struct rt_value **ins)
{
	size_t n = rt_session_n_inputs(s);
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(n <= MAX_IO);
	for (size_t i = 0; i < n; i++) {
		const struct ir_vinfo *in = rt_session_input(s, i);
		const struct ir_type *t = in->type;
		int64_t dims[8];
		uint64_t g = seed * 31 + i * 7919 + 1;

		CU_ASSERT_FATAL(t && t->shape.n_dims <= 8);
		for (size_t j = 0; j < t->shape.n_dims; j++)
			dims[j] = t->shape.dims[j].kind == IR_DIM_VALUE ? t->shape.dims[j].value : 2;
		CU_ASSERT_FATAL(rt_tensor_new(NULL, t->elem_type, (int)t->shape.n_dims, dims,
					      &ins[i], &d) == 0);
		if (fill && fill(m, ir_s(in->value->name), ins[i], &g))
			continue;
		for (int64_t e = 0; e < ins[i]->numel; e++)
			rt_value_set_f64(ins[i], e, draw(&g, t->elem_type, mode));
	}
	return n;
}

/* Run m on ins; outs get one reference per output; the count returned */
static size_t run(struct ir_model *m, struct rt_value **ins, size_t n_in,
		  struct rt_value **outs)
{
	struct rt_opts o = { .threads = 1 };
	struct rt_session *s = NULL;
	struct ir_diag d;
	size_t n_out;

	ir_diag_init(&d);
	if (rt_session_new(m, &o, &s, &d) < 0)
		fprintf(stderr, "\nsession: %s\n", d.msg);
	CU_ASSERT_FATAL(s != NULL);
	n_out = rt_session_n_outputs(s);
	CU_ASSERT_FATAL(n_out <= MAX_IO && rt_session_n_inputs(s) == n_in);
	if (rt_session_run(s, ins, n_in, outs, &d) < 0)
		fprintf(stderr, "\nrun: %s\n", d.msg);
	CU_ASSERT_FATAL(d.status == 0);
	rt_session_free(s);
	return n_out;
}

static int new_inputs(struct ir_model *m, uint64_t seed, enum tl_values mode,
		      tl_fill_fn fill, struct rt_value **ins)
{
	struct rt_opts o = { .threads = 1 };
	struct rt_session *s = NULL;
	struct ir_diag d;
	size_t n;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_session_new(m, &o, &s, &d) == 0);
	n = make_inputs(m, s, seed, mode, fill, ins);
	rt_session_free(s);
	return (int)n;
}

/* The outputs agree; the worst element printed otherwise */
static int agree(const struct tl_case *c, const char *what, const struct rt_value *a,
		 const struct rt_value *b)
{
	CU_ASSERT_FATAL(a && b);
	if (a->dtype != b->dtype || a->rank != b->rank || a->numel != b->numel) {
		fprintf(stderr, "\n%s: dtype/shape differ (%d/%d, rank %d/%d, %lld/%lld)\n", what,
			a->dtype, b->dtype, a->rank, b->rank, (long long)a->numel,
			(long long)b->numel);
		return 0;
	}
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i]) {
			fprintf(stderr, "\n%s: dim %d is %lld, want %lld\n", what, i,
				(long long)a->dims[i], (long long)b->dims[i]);
			return 0;
		}
	for (int64_t i = 0; i < a->numel; i++) {
		double x = rt_value_get_f64(a, i), y = rt_value_get_f64(b, i);
		int ok;

		if (!is_float(a->dtype))
			ok = x == y;
		else if (isnan(x) || isnan(y))
			ok = isnan(x) && isnan(y);
		else if (isinf(x) || isinf(y))
			ok = x == y;
		else
			ok = fabs(x - y) <= c->atol + c->rtol * fmax(fabs(x), fabs(y));
		if (!ok) {
			fprintf(stderr, "\n%s: element %lld is %.9g, want %.9g\n", what, (long long)i,
				x, y);
			return 0;
		}
	}
	return 1;
}

static int listed(const char *op, const char *const *list)
{
	for (const char *const *a = list; a && *a; a++) {
		const char *colon = strchr(*a, ':');

		if (!strcmp(colon ? colon + 1 : *a, op))
			return 1;
	}
	return 0;
}

/* The ops of the nodes the pass made are exactly the variant's list */
static int emits_exactly(const struct ir_model *m, const char *const *emits, const char *what)
{
	int ok = 1;

	for (size_t i = 0; i < m->graph->n_nodes; i++) {
		const struct ir_node *n = m->graph->nodes[i];

		if (n->doc && !strncmp(n->doc, "opmig: ", 7) && !listed(ir_s(n->op_type), emits)) {
			fprintf(stderr, "\n%s: emitted %s, not listed\n", what, ir_s(n->op_type));
			ok = 0;
		}
	}
	for (const char *const *a = emits; a && *a; a++) {
		const char *colon = strchr(*a, ':'), *op = colon ? colon + 1 : *a;
		int seen = 0;

		for (size_t i = 0; i < m->graph->n_nodes; i++) {
			const struct ir_node *n = m->graph->nodes[i];

			seen |= n->doc && !strncmp(n->doc, "opmig: ", 7) &&
				!strcmp(ir_s(n->op_type), op);
		}
		if (!seen) {
			fprintf(stderr, "\n%s: lists %s but did not emit it\n", what, op);
			ok = 0;
		}
	}
	return ok;
}

static struct ir_node *find_op(struct ir_model *m, const char *op)
{
	return tg_find_op(m, op);
}

/* Give every output its computed shape, then save for the checker */
static void save(struct ir_model *m, const char *what, struct rt_value **outs, size_t n)
{
	for (size_t k = 1; k < n && k < m->graph->n_outputs; k++) {
		struct ir_type *t = m->graph->outputs[k].type;

		if (!t)
			continue;
		free(t->shape.dims);
		t->shape.dims = calloc((size_t)outs[k]->rank + 1, sizeof(*t->shape.dims));
		CU_ASSERT_FATAL(t->shape.dims != NULL);
		t->shape.n_dims = (size_t)outs[k]->rank;
		for (int i = 0; i < outs[k]->rank; i++) {
			t->shape.dims[i].kind = IR_DIM_VALUE;
			t->shape.dims[i].value = outs[k]->dims[i];
		}
		t->present |= IR_TYPE_HAS_SHAPE;
	}
	tg_save_for_checker(m, what, outs[0]);
}

/* 1 applied (and checked), 0 not applicable */
static int try_variant(const struct tl_case *c, const struct rw_pass *p, int v, uint64_t seed,
		       int keep, tl_fill_fn fill)
{
	uint64_t s = seed;
	struct ir_model *m = c->build(&s, c->param);
	struct ir_node *n = find_op(m, c->op);
	struct rt_value *ins[MAX_IO] = { 0 }, *before[MAX_IO] = { 0 }, *after[MAX_IO] = { 0 };
	char *names[MAX_IO] = { 0 }, what[160], why[256];
	struct rw_ctx ctx;
	struct ir_diag d;
	size_t n_in, n_out;
	int applied = 0;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(n != NULL);
	CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
	if ((p->check && !p->check(&ctx, n, why, sizeof(why))) ||
	    (p->vcheck && !p->vcheck(&ctx, n, v)))
		goto done;
	snprintf(what, sizeof(what), "%s %s(%d)/%s seed %llu", c->pass, c->op, c->param,
		 p->variants[v].name, (unsigned long long)seed);
	n_in = (size_t)new_inputs(m, seed, c->values, fill, ins);
	n_out = run(m, ins, n_in, before);
	for (size_t i = 0; i < n_out; i++)
		CU_ASSERT_FATAL((names[i] = strdup(ir_s(m->graph->outputs[i].value->name))) != NULL);
	CU_ASSERT_FATAL(rw_apply(&ctx, p, n, v) == 0);
	if (rw_refresh(&ctx) < 0)
		fprintf(stderr, "\n%s: %s\n", what, d.msg);
	CU_ASSERT_FATAL(d.status == 0);
	CU_ASSERT(emits_exactly(m, p->variants[v].emits, what));
	CU_ASSERT(run(m, ins, n_in, after) == n_out);
	for (size_t i = 0; i < n_out; i++) {
		CU_ASSERT_STRING_EQUAL(ir_s(m->graph->outputs[i].value->name), names[i]);
		CU_ASSERT(agree(c, what, after[i], before[i]));
	}
	if (keep) {
		snprintf(what, sizeof(what), "%s-%s-%d-%s", c->pass, c->op, c->param,
			 p->variants[v].name);
		save(m, what, after, n_out);
	}
	for (size_t i = 0; i < MAX_IO; i++) {
		rt_value_unref(ins[i]);
		rt_value_unref(before[i]);
		rt_value_unref(after[i]);
		free(names[i]);
	}
	applied = 1;
done:
	rw_ctx_release(&ctx);
	ir_model_free(m);
	return applied;
}

int tl_run_cases_fill(const struct tl_case *cases, size_t n, uint64_t seed, tl_fill_fn fill)
{
	int total = 0;

	for (size_t i = 0; i < n; i++) {
		const struct tl_case *c = &cases[i];
		const struct rw_pass *p = rw_pass_find(c->pass);
		int *counts, applied = 0;

		CU_ASSERT_FATAL(p != NULL && p->n_variants <= 32);
		counts = counts_of(p->name);
		for (int t = 0; t < (c->trials ? c->trials : 4); t++, tg_next(&seed))
			for (size_t v = 0; v < p->n_variants; v++)
				if (try_variant(c, p, (int)v, seed, t == 0, fill)) {
					counts[v]++;
					applied++;
				}
		if (!applied)
			fprintf(stderr, "\ncase %zu (%s %s %d): no variant applies\n", i, c->pass,
				c->op, c->param);
		CU_ASSERT(applied > 0);
		total += applied;
	}
	return total;
}

int tl_run_cases(const struct tl_case *cases, size_t n, uint64_t seed)
{
	return tl_run_cases_fill(cases, n, seed, NULL);
}

void tl_expect_all_variants(const char *pass)
{
	const struct rw_pass *p = rw_pass_find(pass);
	int *counts;

	CU_ASSERT_FATAL(p != NULL);
	counts = counts_of(p->name);
	if (getenv("TL_VERBOSE"))
		fprintf(stderr, "\n%s:", pass);
	for (size_t v = 0; v < p->n_variants; v++) {
		if (getenv("TL_VERBOSE"))
			fprintf(stderr, " %s %d", p->variants[v].name, counts[v]);
		if (!counts[v])
			fprintf(stderr, "\n%s: variant %s never applied\n", pass, p->variants[v].name);
		CU_ASSERT(counts[v] > 0);
	}
}

int tl_refuses(const char *pass, const char *op, struct ir_model *m, const char *word)
{
	const struct rw_pass *p = rw_pass_find(pass);
	struct ir_node *n = find_op(m, op);
	struct rw_ctx ctx;
	struct ir_diag d;
	char why[256] = "";
	int refused;

	CU_ASSERT_FATAL(p != NULL && n != NULL);
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
	refused = !p->check(&ctx, n, why, sizeof(why));
	if (!refused)
		fprintf(stderr, "\n%s %s: not refused (want '%s')\n", pass, op, word);
	else if (!strstr(why, word))
		fprintf(stderr, "\n%s %s: reason '%s' lacks '%s'\n", pass, op, why, word);
	CU_ASSERT(refused && strstr(why, word) != NULL);
	rw_ctx_release(&ctx);
	ir_model_free(m);
	return refused;
}

void tl_symbolic(struct ir_model *m, const char *input, int i)
{
	for (size_t k = 0; k < m->graph->n_inputs; k++) {
		struct ir_type *t = m->graph->inputs[k].type;

		if (strcmp(ir_s(m->graph->inputs[k].value->name), input))
			continue;
		CU_ASSERT_FATAL(t && (size_t)i < t->shape.n_dims);
		t->shape.dims[i].kind = IR_DIM_PARAM;
		t->shape.dims[i].param = strdup("N");
		CU_ASSERT_FATAL(t->shape.dims[i].param != NULL);
		return;
	}
	CU_FAIL_FATAL("no such input");
}
