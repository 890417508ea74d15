/* suite_rnn.c: property tests of the lstm, gru and rnn decompositions.
 * Each seeded case is a random LSTM, GRU or RNN (direction, layout,
 * activations with alpha/beta, clip, P, input_forget, linear_before_reset,
 * B, initial states, sequence_lens, constant or graph-input weights, a
 * dynamic batch, which outputs are read, opsets 7 to 22, float or
 * double); every variant is applied, and the original (the interpreter's
 * LSTM/GRU/RNN kernels) and the unrolled model run on the same inputs and
 * must agree; the unrolled model verifies, holds no recurrent op, emits
 * only the ops the case's activations and structure allow, and the ops
 * the planner asks the target about are exactly those emitted; those of
 * opset <= 17 pass onnx.checker.  Refusals and the node count of a long
 * bidirectional LSTM are checked too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rewrite.h"
#include "tests/unit/suites.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tmodel.h"

enum { C_RNN, C_GRU, C_LSTM };

static const char *const cell_op[] = { "RNN", "GRU", "LSTM" };
static const char *const cell_pass[] = { "rnn", "gru", "lstm" };

/* the spec's activations, and the ops each may become: natively (its own
 * op; ThresholdedRelu before opset 10 has none) and from primitives */
static const struct {
	const char *name;
	int alpha, beta;
	const char *native[4];
	const char *prim[7];
} act_tab[] = {
	{ "Relu", 0, 0, { "Relu" }, { "Relu" } },
	{ "Tanh", 0, 0, { "Tanh" }, { "Tanh" } },
	{ "Sigmoid", 0, 0, { "Sigmoid" }, { "Sigmoid" } },
	{ "Affine", 1, 1, { "Mul", "Add" }, { "Mul", "Add" } },
	{ "LeakyRelu", 1, 0, { "LeakyRelu" }, { "Relu", "Mul", "Sub" } },
	{ "ThresholdedRelu", 1, 0, { "ThresholdedRelu", "Greater", "Cast", "Mul" },
	  { "Greater", "Cast", "Mul" } },
	{ "ScaledTanh", 1, 1, { "Mul", "Tanh" }, { "Mul", "Tanh" } },
	{ "HardSigmoid", 1, 1, { "HardSigmoid" }, { "Mul", "Add", "Clip" } },
	{ "Elu", 1, 0, { "Elu" }, { "Relu", "Sub", "Exp", "Mul", "Add" } },
	{ "Softsign", 0, 0, { "Softsign" }, { "Relu", "Mul", "Add", "Div" } },
	{ "Softplus", 0, 0, { "Softplus" }, { "Relu", "Sub", "Exp", "Add", "Log" } },
};
#define N_ACT 11

struct rcase {
	int cell, opset, dir, layout, dtype, dyn_batch;
	int64_t seq, batch, in, hid;
	int w_in, r_in, b, b_in, h0, c0, p, p_in, lens;
	int64_t lensv[4];
	int clip, lbr, input_forget, hidden_attr, dir_attr;
	float clipv;
	int n_act, act[6], with_values, lower;
	float alpha[6], beta[6];
	int outs, n_out;
};

static double urand(uint64_t *s, double lo, double hi)
{
	return lo + (hi - lo) * (double)(tg_next(s) % 100000) / 100000.0;
}

static const int opsets[] = { 7, 9, 10, 11, 12, 13, 14, 16, 17, 18, 21, 22 };

static void gen_case(uint64_t *s, struct rcase *c)
{
	int per, nd;

	memset(c, 0, sizeof(*c));
	c->cell = (int)tg_rnd(s, 0, 2);
	c->opset = opsets[tg_rnd(s, 0, sizeof(opsets) / sizeof(opsets[0]) - 1)];
	c->dir = (int)tg_rnd(s, 0, 2);
	c->dir_attr = c->dir || tg_rnd(s, 0, 1);
	c->layout = c->opset >= 14 ? (int)tg_rnd(s, 0, 1) : 0;
	c->dtype = tg_rnd(s, 0, 7) ? IR_DTYPE_FLOAT : IR_DTYPE_DOUBLE;
	c->seq = tg_rnd(s, 1, 6);
	c->batch = tg_rnd(s, 1, 3);
	c->in = tg_rnd(s, 1, 4);
	c->hid = tg_rnd(s, 1, 5);
	c->dyn_batch = !tg_rnd(s, 0, 3);
	c->w_in = !tg_rnd(s, 0, 4);
	c->r_in = !tg_rnd(s, 0, 4);
	c->b = !!tg_rnd(s, 0, 3);
	c->b_in = c->b && !tg_rnd(s, 0, 4);
	c->h0 = (int)tg_rnd(s, 0, 1);
	c->hidden_attr = !!tg_rnd(s, 0, 3);
	c->lens = (int)tg_rnd(s, 0, 2);
	for (int64_t b = 0; b < c->batch; b++)
		c->lensv[b] = c->lens == 1 ? c->seq : tg_rnd(s, 0, c->seq);
	if (c->lens == 2 && c->batch == 1) {     /* one sequence, shorter */
		c->lensv[0] = c->seq > 1 ? tg_rnd(s, 1, c->seq - 1) : 1;
		c->lens = c->seq > 1 ? 2 : 1;
	} else if (c->lens == 2) {     /* one not empty, one shorter */
		c->lensv[0] = tg_rnd(s, 1, c->seq);
		c->lensv[c->batch - 1] = tg_rnd(s, 0, c->seq - 1);
	}
	c->clip = !tg_rnd(s, 0, 3);
	c->clipv = (float)urand(s, 0.3, 2.0);
	if (c->cell == C_GRU)
		c->lbr = (int)tg_rnd(s, 0, 1);
	if (c->cell == C_LSTM) {
		c->c0 = (int)tg_rnd(s, 0, 1);
		c->p = (int)tg_rnd(s, 0, 1);
		c->p_in = c->p && !tg_rnd(s, 0, 3);
		c->input_forget = !tg_rnd(s, 0, 3);
	}
	per = c->cell == C_RNN ? 1 : c->cell == C_GRU ? 2 : 3;
	nd = c->dir == 2 ? 2 : 1;
	if (tg_rnd(s, 0, 2)) {
		c->n_act = nd == 2 && tg_rnd(s, 0, 2) ? 2 * per : per;
		for (int i = 0; i < c->n_act; i++) {
			c->act[i] = (int)tg_rnd(s, 0, N_ACT - 1);
			c->alpha[i] = (float)urand(s, 0.1, 0.9);
			c->beta[i] = (float)urand(s, 0.2, 0.7);
		}
		c->with_values = (int)tg_rnd(s, 0, 1);
		c->lower = !tg_rnd(s, 0, 5);
	}
	c->n_out = c->cell == C_LSTM ? 3 : 2;
	c->outs = (int)tg_rnd(s, 1, (1 << c->n_out) - 1);
	if (!tg_rnd(s, 0, 2))    /* outputs after the last read one absent */
		while (c->n_out > 1 && !(c->outs >> (c->n_out - 1)))
			c->n_out--;
}

/* ---- building and running --------------------------------------------- */

struct built {
	struct ir_model *m;
	struct rt_value *ins[8];
	size_t n_in;
};

static void fill(uint64_t *s, double *v, int64_t n, double k)
{
	for (int64_t i = 0; i < n; i++)
		v[i] = urand(s, -k, k);
}

/* A tensor named name: an initializer, or a graph input bound to the same
 * values (b->ins); dims[batch_at] symbolic with a dynamic batch. */
static void tensor(struct built *b, const struct rcase *c, uint64_t *s, const char *name,
		   const int64_t *dims, size_t rank, double k, int as_input, int batch_at)
{
	int64_t n = tg_numel(dims, rank);
	double *v = malloc((size_t)n * sizeof(double) + 1);
	struct ir_diag d;

	CU_ASSERT_FATAL(v != NULL);
	fill(s, v, n, k);
	if (!as_input) {
		tm_init(b->m, name, c->dtype, dims, rank, v);
	} else {
		struct ir_value *x = tm_input(b->m, name, c->dtype, dims, rank);
		struct rt_value *t;

		if (batch_at >= 0 && c->dyn_batch) {
			struct ir_type *ty = b->m->graph->inputs[b->m->graph->n_inputs - 1].type;

			ty->shape.dims[batch_at].kind = IR_DIM_PARAM;
			ty->shape.dims[batch_at].param = strdup("N");
		}
		(void)x;
		ir_diag_init(&d);
		CU_ASSERT_FATAL(rt_tensor_new(NULL, c->dtype, (int)rank, dims, &t, &d) == 0);
		for (int64_t i = 0; i < n; i++)
			rt_value_set_f64(t, i, v[i]);
		b->ins[b->n_in++] = t;
	}
	free(v);
}

static void set_acts(struct ir_node *n, const struct rcase *c)
{
	uint8_t *str[6];
	size_t len[6];
	char low[6][24];
	float al[6], be[6];
	size_t na = 0, nb = 0;
	struct ir_attr a;

	for (int i = 0; i < c->n_act; i++) {
		const char *nm = act_tab[c->act[i]].name;

		snprintf(low[i], sizeof(low[i]), "%s", nm);
		for (char *q = low[i]; c->lower && *q; q++)
			*q = (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
		str[i] = (uint8_t *)low[i];
		len[i] = strlen(low[i]);
		if (act_tab[c->act[i]].alpha)
			al[na++] = c->alpha[i];
		if (act_tab[c->act[i]].beta)
			be[nb++] = c->beta[i];
	}
	memset(&a, 0, sizeof(a));
	a.type = IR_ATTR_STRINGS;
	a.n_strings = (size_t)c->n_act;
	a.strings = str;
	a.string_lens = len;
	CU_ASSERT_FATAL(ir_node_copy_attr(n, "activations", &a) == 0);
	if (c->with_values && na)
		CU_ASSERT_FATAL(ir_node_set_floats(n, "activation_alpha", al, na) == 0);
	if (c->with_values && nb)
		CU_ASSERT_FATAL(ir_node_set_floats(n, "activation_beta", be, nb) == 0);
}

static void build(const struct rcase *c, uint64_t seed, struct built *b)
{
	static const char *const dirs[] = { "forward", "reverse", "bidirectional" };
	uint64_t s = seed;
	int64_t nd = c->dir == 2 ? 2 : 1, g = c->cell == C_RNN ? 1 : c->cell == C_GRU ? 3 : 4;
	int64_t h = c->hid, x[3], st[3], lens_d[1] = { c->batch };
	const char *in[8] = { "X", "W", "R", "", "", "", "", "" };
	const char *outs[3] = { "Y", "Y_h", "Y_c" };
	size_t n_in = 3;
	struct ir_node *n;

	memset(b, 0, sizeof(*b));
	b->m = tm_new(c->opset);
	x[c->layout] = c->seq, x[1 - c->layout] = c->batch, x[2] = c->in;
	st[c->layout] = nd, st[1 - c->layout] = c->batch, st[2] = h;
	tensor(b, c, &s, "X", x, 3, 1, 1, 1 - c->layout);
	tensor(b, c, &s, "W", TM_DIMS(nd, g * h, c->in), 3, 0.7, c->w_in, -1);
	tensor(b, c, &s, "R", TM_DIMS(nd, g * h, h), 3, 0.6, c->r_in, -1);
	if (c->b) {
		tensor(b, c, &s, "B", TM_DIMS(nd, 2 * g * h), 2, 0.5, c->b_in, -1);
		in[3] = "B";
		n_in = 4;
	}
	if (c->lens) {
		double lv[4];

		for (int64_t i = 0; i < c->batch; i++)
			lv[i] = (double)c->lensv[i];
		tm_init(b->m, "L", IR_DTYPE_INT32, lens_d, 1, lv);
		in[4] = "L";
		n_in = 5;
	}
	if (c->h0) {
		tensor(b, c, &s, "H0", st, 3, 1, 1, 1 - c->layout);
		in[5] = "H0";
		n_in = 6;
	}
	if (c->c0) {
		tensor(b, c, &s, "C0", st, 3, 1, 1, 1 - c->layout);
		in[6] = "C0";
		n_in = 7;
	}
	if (c->p) {
		tensor(b, c, &s, "P", TM_DIMS(nd, 3 * h), 2, 0.5, c->p_in, -1);
		in[7] = "P";
		n_in = 8;
	}
	n = tm_node(b->m, cell_op[c->cell], NULL, in, n_in, outs, (size_t)c->n_out);
	if (c->hidden_attr)
		CU_ASSERT_FATAL(ir_node_set_int(n, "hidden_size", h) == 0);
	if (c->dir_attr)
		CU_ASSERT_FATAL(ir_node_set_string(n, "direction", dirs[c->dir]) == 0);
	if (c->opset >= 14 && (c->layout || c->dir_attr))
		CU_ASSERT_FATAL(ir_node_set_int(n, "layout", c->layout) == 0);
	if (c->clip)
		CU_ASSERT_FATAL(ir_node_set_float(n, "clip", c->clipv) == 0);
	if (c->cell == C_GRU && (c->lbr || c->dir_attr))
		CU_ASSERT_FATAL(ir_node_set_int(n, "linear_before_reset", c->lbr) == 0);
	if (c->cell == C_LSTM && (c->input_forget || c->dir_attr))
		CU_ASSERT_FATAL(ir_node_set_int(n, "input_forget", c->input_forget) == 0);
	if (c->n_act)
		set_acts(n, c);
	for (int i = 0; i < c->n_out; i++)
		if (c->outs >> i & 1)
			tm_output(b->m, outs[i], c->dtype, NULL, 0);
	if (!c->outs) {       /* the graph reads X only */
		tm_node(b->m, "Identity", NULL, TM_NAMES("X"), 1, TM_NAMES("Z"), 1);
		tm_output(b->m, "Z", c->dtype, NULL, 0);
	}
	tm_verify(b->m);
}

static void built_release(struct built *b)
{
	for (size_t i = 0; i < b->n_in; i++)
		rt_value_unref(b->ins[i]);
	ir_model_free(b->m);
}

static int run(struct built *b, struct rt_value **outs, size_t n_outs)
{
	struct rt_opts o = { .threads = 1 };
	struct rt_session *s = NULL;
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	if ((rc = rt_session_new(b->m, &o, &s, &d)) >= 0) {
		CU_ASSERT_FATAL(rt_session_n_outputs(s) == n_outs);
		rc = rt_session_run(s, b->ins, b->n_in, outs, &d);
	}
	if (rc < 0)
		fprintf(stderr, "\nrun: %s\n", d.msg);
	rt_session_free(s);
	return rc;
}

/* ---- what the rewrite may emit ------------------------------------------ */

struct opset_list {
	char names[48][24];
	size_t n;
};

static int has(const struct opset_list *l, const char *op)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->names[i], op))
			return 1;
	return 0;
}

static void add(struct opset_list *l, const char *op)
{
	if (op && !has(l, op) && l->n < 48)
		snprintf(l->names[l->n++], sizeof(l->names[0]), "%s", op);
}

/* The ops the case may emit with variant v (independent of the pass's
 * code): the structure's, Clip with clip, and its activations' */
static void allowed_ops(const struct rcase *c, int v, struct opset_list *l)
{
	static const char *const base[] = {
		"MatMul", "Add", "Mul", "Sub", "Split", "Concat", "Reshape", "Transpose", "Gather",
	};
	static const int dflt[3][3] = { { 1 }, { 2, 1 }, { 2, 1, 1 } };
	int per = c->cell == C_RNN ? 1 : c->cell == C_GRU ? 2 : 3;

	l->n = 0;
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		add(l, base[i]);
	if (c->clip)
		add(l, "Clip");
	for (int i = 0; i < (c->n_act ? c->n_act : per); i++) {
		int k = c->n_act ? c->act[i] : dflt[c->cell][i];

		for (int j = 0; j < 7; j++)
			add(l, v ? act_tab[k].prim[j] : j < 4 ? act_tab[k].native[j] : NULL);
	}
}

/* Does the planner take variant v for node n when the target accepts
 * exactly ops (but skip)?  Static list and vcheck, as rw_choose asks. */
static int takes(struct rw_ctx *ctx, const struct rw_pass *p, const struct ir_node *n, int v,
		 const struct opset_list *ops, int skip)
{
	static char dom[] = "ai.onnx", id[] = "exact";
	struct rules_op ro[48];
	struct rules_target t;
	size_t k = 0;
	int ok = 1;

	for (size_t i = 0; i < ops->n; i++) {
		if ((int)i == skip)
			continue;
		memset(&ro[k], 0, sizeof(ro[k]));
		ro[k].domain = dom;
		ro[k].name = (char *)ops->names[i];
		ro[k].supported = 1;
		ro[k].version_min = 1;
		ro[k].version_max = RULES_UNBOUNDED;
		k++;
	}
	for (size_t i = 1; i < k; i++)        /* sorted by name */
		for (size_t j = i; j > 0 && strcmp(ro[j - 1].name, ro[j].name) > 0; j--) {
			struct rules_op tmp = ro[j];

			ro[j] = ro[j - 1];
			ro[j - 1] = tmp;
		}
	memset(&t, 0, sizeof(t));
	t.id = id;
	t.ops = ro;
	t.n_ops = k;
	t.opset_min = t.opset_max = t.max_rank = t.dynamic_shapes = -1;
	t.device_memory_bytes = -1;
	t.resolved = 1;
	ctx->target = &t;
	for (const char *const *e = p->variants[v].emits; *e; e++)
		ok &= rw_target_accepts(ctx, "", *e, 0);
	ok = ok && p->vcheck(ctx, n, v);
	ctx->target = NULL;
	return ok;
}

/* ---- the property test ---------------------------------------------------- */

static struct {
	int cases, rewrites, checked;
	int cell_dir[3][3], cell_layout[3][2], cell_lens[3][3], cell_act[3][N_ACT];
	int cell_ver[3][3], cell_const[3][2], cell_hs[3][2];
	int lbr[2], peep, input_forget, clip, dyn, dbl;
} cov;

static void note_coverage(const struct rcase *c)
{
	int k = c->cell;

	cov.cases++;
	cov.cell_dir[k][c->dir]++;
	cov.cell_layout[k][c->layout]++;
	cov.cell_lens[k][c->lens]++;
	cov.cell_ver[k][c->opset >= 22 ? 2 : c->opset >= 14]++;
	cov.cell_const[k][c->w_in || c->r_in || c->b_in || c->p_in]++;
	cov.cell_hs[k][c->h0]++;
	for (int i = 0; i < c->n_act; i++)
		cov.cell_act[k][c->act[i]]++;
	if (k == C_GRU)
		cov.lbr[c->lbr]++;
	cov.peep += c->p;
	cov.input_forget += c->input_forget;
	cov.clip += c->clip;
	cov.dyn += c->dyn_batch;
	cov.dbl += c->dtype == IR_DTYPE_DOUBLE;
}

static void describe(const struct rcase *c, char *buf, size_t size)
{
	snprintf(buf, size, "%s opset %d dir %d layout %d seq %lld batch %lld in %lld hid %lld "
		 "lens %d [%lld %lld %lld] h0 %d c0 %d p %d clip %d lbr %d if %d acts %d outs %d/%d "
		 "in(w %d r %d b %d p %d) dyn %d dtype %d", cell_op[c->cell], c->opset, c->dir,
		 c->layout, (long long)c->seq, (long long)c->batch, (long long)c->in,
		 (long long)c->hid, c->lens, (long long)c->lensv[0], (long long)c->lensv[1],
		 (long long)c->lensv[2], c->h0, c->c0, c->p, c->clip, c->lbr, c->input_forget,
		 c->n_act, c->outs, c->n_out, c->w_in, c->r_in, c->b_in, c->p_in, c->dyn_batch,
		 c->dtype);
}

static int n_graph_outputs(const struct rcase *c)
{
	int k = 0;

	for (int i = 0; i < c->n_out; i++)
		k += c->outs >> i & 1;
	return k;
}

/* Apply variant v to a fresh build and compare with the reference outputs. */
static void one_variant(const struct rcase *c, uint64_t seed, int v, struct rt_value **ref,
			int save)
{
	const struct rw_pass *p = rw_pass_find(cell_pass[c->cell]);
	struct built orig, rw;
	struct rt_value *got[3] = { 0 };
	struct opset_list emitted, allow;
	struct ir_node *n;
	struct rw_ctx ctx, octx;
	struct ir_diag d;
	char why[256] = "", what[512];
	int k = n_graph_outputs(c);

	describe(c, what, sizeof(what));
	build(c, seed, &orig);
	build(c, seed, &rw);
	ir_diag_init(&d);
	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_FATAL(rw_ctx_init(&ctx, rw.m, NULL, &d) == 0);
	n = tg_find_op(rw.m, cell_op[c->cell]);
	CU_ASSERT_FATAL(n != NULL);
	if (!p->check(&ctx, n, why, sizeof(why))) {
		fprintf(stderr, "\nrefused: %s: %s\n", what, why);
		CU_FAIL("a valid case was refused");
		goto done;
	}
	CU_ASSERT(p->vcheck(&ctx, n, v));
	CU_ASSERT_FATAL(rw_apply(&ctx, p, n, v) == 0);
	if (rw_refresh(&ctx) < 0)
		fprintf(stderr, "\n%s: %s\n", what, d.msg);
	CU_ASSERT_FATAL(d.status == 0);
	/* no recurrent op left; only the ops the case allows */
	emitted.n = 0;
	allowed_ops(c, v, &allow);
	for (size_t i = 0; i < rw.m->graph->n_nodes; i++) {
		const char *op = ir_s(rw.m->graph->nodes[i]->op_type);

		add(&emitted, op);
		if (!has(&allow, op))
			fprintf(stderr, "\n%s variant %d: unexpected op %s\n", what, v, op);
		CU_ASSERT(has(&allow, op));
	}
	/* exactly these ops: a target with them takes the variant, one
	 * without any of them does not */
	CU_ASSERT_FATAL(rw_ctx_init(&octx, orig.m, NULL, &d) == 0);
	n = tg_find_op(orig.m, cell_op[c->cell]);
	if (!takes(&octx, p, n, v, &emitted, -1))
		fprintf(stderr, "\n%s variant %d: asks for an op it does not emit\n", what, v);
	CU_ASSERT(takes(&octx, p, n, v, &emitted, -1));
	for (size_t i = 0; i < emitted.n; i++) {
		if (takes(&octx, p, n, v, &emitted, (int)i))
			fprintf(stderr, "\n%s variant %d: %s emitted but not asked for\n", what, v,
				emitted.names[i]);
		CU_ASSERT(!takes(&octx, p, n, v, &emitted, (int)i));
	}
	rw_ctx_release(&octx);
	/* the numbers */
	CU_ASSERT_FATAL(run(&rw, got, (size_t)k) == 0);
	for (int i = 0; i < k; i++) {
		double err = tg_compare(got[i], ref[i]), big = 1;

		for (int64_t j = 0; j < ref[i]->numel; j++)
			big = fmax(big, fabs(rt_value_get_f64(ref[i], j)));
		if (!(err <= 2e-5 * big))
			fprintf(stderr, "\n%s variant %d: output %d differs by %g (max %g)\n", what, v,
				i, err, big);
		CU_ASSERT(err <= 2e-5 * big);
	}
	cov.rewrites++;
	if (save && c->opset <= 17) {
		for (int i = 1; i < k; i++) {
			struct ir_type *t = rw.m->graph->outputs[i].type;

			free(t->shape.dims);
			t->shape.dims = calloc((size_t)got[i]->rank + 1, sizeof(*t->shape.dims));
			CU_ASSERT_FATAL(t->shape.dims != NULL);
			t->shape.n_dims = (size_t)got[i]->rank;
			for (int j = 0; j < got[i]->rank; j++) {
				t->shape.dims[j].kind = IR_DIM_VALUE;
				t->shape.dims[j].value = got[i]->dims[j];
			}
			t->present |= IR_TYPE_HAS_SHAPE;
		}
		snprintf(what, sizeof(what), "%s-%d-%d", cell_pass[c->cell], c->opset, v);
		tg_save_for_checker(rw.m, what, got[0]);
		cov.checked++;
	}
	for (int i = 0; i < k; i++)
		rt_value_unref(got[i]);
done:
	rw_ctx_release(&ctx);
	built_release(&orig);
	built_release(&rw);
}

#define N_CASES 1000

static void test_random(void)
{
	uint64_t s = 20250611;

	memset(&cov, 0, sizeof(cov));
	for (int i = 0; i < N_CASES; i++) {
		struct rcase c;
		struct built b;
		struct rt_value *ref[3] = { 0 };
		uint64_t seed = tg_next(&s) * 7919 + (uint64_t)i;
		int k;

		gen_case(&s, &c);
		note_coverage(&c);
		k = n_graph_outputs(&c);
		build(&c, seed, &b);
		CU_ASSERT_FATAL(run(&b, ref, (size_t)k) == 0);
		for (int v = 0; v < 2; v++)
			one_variant(&c, seed, v, ref, i % 4 == 0);
		for (int j = 0; j < k; j++)
			rt_value_unref(ref[j]);
		built_release(&b);
	}
	tg_run_checker();
	fprintf(stderr, "\nrnn: %d random cases, %d rewrites agree with the kernels, "
		"%d checked by onnx.checker\n", cov.cases, cov.rewrites, cov.checked);
	/* the generator reached every variant it should */
	for (int k = 0; k < 3; k++) {
		for (int j = 0; j < 3; j++) {
			CU_ASSERT(cov.cell_dir[k][j] > 0);
			CU_ASSERT(cov.cell_lens[k][j] > 0);
			CU_ASSERT(cov.cell_ver[k][j] > 0);
		}
		for (int j = 0; j < 2; j++) {
			CU_ASSERT(cov.cell_layout[k][j] > 0);
			CU_ASSERT(cov.cell_const[k][j] > 0);
			CU_ASSERT(cov.cell_hs[k][j] > 0);
		}
		for (int j = 0; j < N_ACT; j++)
			CU_ASSERT(cov.cell_act[k][j] > 0);
	}
	CU_ASSERT(cov.lbr[0] > 0 && cov.lbr[1] > 0 && cov.peep > 0 && cov.input_forget > 0);
	CU_ASSERT(cov.clip > 0 && cov.dyn > 0 && cov.dbl > 0);
}

/* ---- fixed cases ---------------------------------------------------------- */

static struct rcase base_case(int cell)
{
	struct rcase c;

	memset(&c, 0, sizeof(c));
	c.cell = cell;
	c.opset = 13;
	c.dtype = IR_DTYPE_FLOAT;
	c.seq = 3;
	c.batch = 2;
	c.in = 2;
	c.hid = 3;
	c.n_out = cell == C_LSTM ? 3 : 2;
	c.outs = 1;
	c.hidden_attr = 1;
	return c;
}

static int count_op(const struct ir_model *m, const char *op)
{
	int k = 0;

	for (size_t i = 0; i < m->graph->n_nodes; i++)
		k += !strcmp(ir_s(m->graph->nodes[i]->op_type), op);
	return k;
}

/* A 10-step bidirectional LSTM: one MatMul projects every step's input,
 * then one MatMul by R^T per step and direction; the whole stays small. */
static void test_node_count(void)
{
	struct rcase c = base_case(C_LSTM);
	const struct rw_pass *p = rw_pass_find("lstm");
	struct built b;
	struct rw_ctx ctx;
	struct ir_diag d;
	char why[256];

	c.seq = 10;
	c.dir = 2;
	c.dir_attr = 1;
	c.b = c.h0 = c.c0 = 1;
	c.in = 8;
	c.hid = 16;
	c.outs = 7;
	build(&c, 5, &b);
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rw_ctx_init(&ctx, b.m, NULL, &d) == 0);
	CU_ASSERT_FATAL(p->check(&ctx, b.m->graph->nodes[0], why, sizeof(why)));
	CU_ASSERT_FATAL(rw_apply(&ctx, p, b.m->graph->nodes[0], 0) == 0);
	CU_ASSERT_FATAL(rw_refresh(&ctx) == 0);
	CU_ASSERT(count_op(b.m, "MatMul") == 1 + 2 * 10);
	CU_ASSERT(count_op(b.m, "LSTM") == 0);
	if (b.m->graph->n_nodes > 2 * 10 * 12 + 20)
		fprintf(stderr, "\n10-step bidirectional LSTM: %zu nodes\n", b.m->graph->n_nodes);
	CU_ASSERT(b.m->graph->n_nodes <= 2 * 10 * 12 + 20);
	rw_ctx_release(&ctx);
	built_release(&b);
}

/* sequence_lens of full lengths changes nothing: no Gather, the same
 * numbers as without it */
static void test_full_lens(void)
{
	for (int cell = 0; cell < 3; cell++) {
		struct rcase c = base_case(cell);
		const struct rw_pass *p = rw_pass_find(cell_pass[cell]);
		struct rt_value *ref[1] = { 0 }, *got[1] = { 0 };
		struct built b;
		struct rw_ctx ctx;
		struct ir_diag d;
		char why[256];

		c.dir = 2;
		c.dir_attr = 1;
		c.lens = 1;
		for (int i = 0; i < 2; i++)
			c.lensv[i] = c.seq;
		build(&c, 9, &b);
		CU_ASSERT_FATAL(run(&b, ref, 1) == 0);
		ir_diag_init(&d);
		CU_ASSERT_FATAL(rw_ctx_init(&ctx, b.m, NULL, &d) == 0);
		CU_ASSERT_FATAL(p->check(&ctx, b.m->graph->nodes[0], why, sizeof(why)));
		CU_ASSERT_FATAL(rw_apply(&ctx, p, b.m->graph->nodes[0], 0) == 0);
		CU_ASSERT_FATAL(rw_refresh(&ctx) == 0);
		CU_ASSERT(count_op(b.m, "Gather") == 0);
		CU_ASSERT_FATAL(run(&b, got, 1) == 0);
		CU_ASSERT(tg_compare(got[0], ref[0]) <= 1e-5);
		rt_value_unref(ref[0]);
		rt_value_unref(got[0]);
		rw_ctx_release(&ctx);
		built_release(&b);
	}
}

/* ---- refusals --------------------------------------------------------------- */

static void set_param(struct ir_model *m, const char *input, int dim)
{
	for (size_t i = 0; i < m->graph->n_inputs; i++)
		if (!strcmp(ir_s(m->graph->inputs[i].value->name), input)) {
			struct ir_type *t = m->graph->inputs[i].type;

			t->shape.dims[dim].kind = IR_DIM_PARAM;
			t->shape.dims[dim].param = strdup("S");
		}
}

static void test_refusals(void)
{
	static const char *const want[] = {
		"sequence_lens is not a constant", "sequence length (X dim 0) is not static",
		"unknown activation 'Gelu'", "opset >= 7", "outside [0, 3]", "every sequence_lens",
		"activations lists 2 functions, expected 3", "clip -1 is negative",
		"no output is read", "no static 3-D shape",
	};

	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		struct rcase c = base_case(C_LSTM);
		const struct rw_pass *p = rw_pass_find("lstm");
		struct built b;
		struct ir_node *n;
		struct rw_ctx ctx;
		struct ir_diag d;
		char why[256] = "";

		c.lens = k == 4 || k == 5;
		c.lensv[0] = k == 4 ? 4 : 0;
		c.opset = k == 3 ? 6 : 13;
		c.w_in = k == 9;
		if (k == 6) {
			c.n_act = 2;
			c.act[0] = c.act[1] = 2;
		}
		c.clip = k == 7;
		c.clipv = -1;
		if (k == 8)
			c.outs = 0;
		build(&c, 3, &b);
		n = tg_find_op(b.m, "LSTM");
		if (k == 0) {         /* sequence_lens a graph input */
			tm_input(b.m, "L2", IR_DTYPE_INT32, TM_DIMS(2), 1);
			CU_ASSERT_FATAL(ir_node_append_input(n, NULL) == 0);
			CU_ASSERT_FATAL(ir_node_append_input(n, ir_graph_value(b.m->graph, "L2")) == 0);
		}
		if (k == 1)
			set_param(b.m, "X", 0);
		if (k == 2) {
			static const char *const names[] = { "Sigmoid", "Gelu", "Tanh" };
			uint8_t *str[3];
			size_t len[3];
			struct ir_attr a;

			for (int i = 0; i < 3; i++) {
				str[i] = (uint8_t *)names[i];
				len[i] = strlen(names[i]);
			}
			memset(&a, 0, sizeof(a));
			a.type = IR_ATTR_STRINGS;
			a.n_strings = 3;
			a.strings = str;
			a.string_lens = len;
			CU_ASSERT_FATAL(ir_node_copy_attr(n, "activations", &a) == 0);
		}
		if (k == 9)
			set_param(b.m, "W", 1);
		ir_diag_init(&d);
		CU_ASSERT_FATAL(rw_ctx_init(&ctx, b.m, NULL, &d) == 0);
		CU_ASSERT(!p->check(&ctx, n, why, sizeof(why)));
		if (!strstr(why, want[k]))
			fprintf(stderr, "\nrefusal %zu: '%s' lacks '%s'\n", k, why, want[k]);
		CU_ASSERT(strstr(why, want[k]) != NULL);
		rw_ctx_release(&ctx);
		built_release(&b);
	}
}

static const struct unit_test tests[] = {
	{ "unrolled LSTM, GRU and RNN agree with the kernels, ops exact", test_random },
	{ "a 10-step bidirectional LSTM stays small", test_node_count },
	{ "sequence_lens of full lengths is a no-op", test_full_lens },
	{ "unrolling refuses what it cannot do", test_refusals },
	{ NULL, NULL },
};

int suite_rnn_register(void)
{
	return unit_add_suite("rnn", tests);
}
