/* suite_fuse.c: the fusion passes (fuse-gelu, fuse-layer-norm,
 * fuse-rms-norm, fuse-batch-norm, fuse-gemm): each case builds the unfused pattern as
 * exporters emit it (seeded shapes, operand orders, associations), runs
 * the pass with a shipped target that accepts the fused op, and checks
 * that the node count dropped, the fused op is there, the output name is
 * kept and the outputs agree with the original (run by the interpreter)
 * within float rounding; targets without the op, and patterns whose
 * intermediates are read elsewhere, are left alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rewrite.h"
#include "tests/unit/suites.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tmodel.h"

typedef struct ir_model *(*build_fn)(uint64_t *s, int param);

static void scalar(struct ir_model *m, const char *name, double v)
{
	tm_init(m, name, IR_DTYPE_FLOAT, NULL, 0, &v);
}

static void node2(struct ir_model *m, const char *op, const char *a, const char *b,
		  const char *out, int swap)
{
	if (swap)
		tm_node(m, op, NULL, TM_NAMES(b, a), 2, TM_NAMES(out), 1);
	else
		tm_node(m, op, NULL, TM_NAMES(a, b), 2, TM_NAMES(out), 1);
}

/* y = x * (1 + f) * 0.5 in association param & 3, operands swapped when
 * param & 8; f is "f" */
static void gelu_tail(struct ir_model *m, int param)
{
	int sw = (param >> 3) & 1;

	scalar(m, "one", 1.0);
	scalar(m, "half", 0.5);
	node2(m, "Add", "f", "one", "a", sw);
	if ((param & 3) == 0) {
		node2(m, "Mul", "x", "a", "xa", sw);
		node2(m, "Mul", "xa", "half", "y", !sw);
	} else if ((param & 3) == 1) {
		node2(m, "Mul", "a", "half", "ah", sw);
		node2(m, "Mul", "x", "ah", "y", sw);
	} else {
		node2(m, "Mul", "x", "half", "xh", sw);
		node2(m, "Mul", "xh", "a", "y", !sw);
	}
}

/* param: bits 0-1 association, bit 2 x * (1/sqrt 2) instead of x / sqrt 2,
 * bit 3 operands swapped, bit 4 opset 17 (com.microsoft Gelu) */
static struct ir_model *f_gelu_erf(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(param & 16 ? 17 : 20);

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(tg_rnd(s, 1, 3), tg_rnd(s, 2, 6)), 2);
	if (param & 4) {
		scalar(m, "k", 1 / sqrt(2.0));
		node2(m, "Mul", "x", "k", "z", (param >> 3) & 1);
	} else {
		scalar(m, "k", sqrt(2.0));
		tm_node(m, "Div", NULL, TM_NAMES("x", "k"), 2, TM_NAMES("z"), 1);
	}
	tm_node(m, "Erf", NULL, TM_NAMES("z"), 1, TM_NAMES("f"), 1);
	gelu_tail(m, param);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

/* param: bits 0-1 association, bit 2 x^3 as x * (x * x), bit 3 swapped,
 * bit 4 opset 17 (com.microsoft FastGelu) */
static struct ir_model *f_gelu_tanh(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(param & 16 ? 17 : 20);
	int sw = (param >> 3) & 1;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(tg_rnd(s, 1, 3), tg_rnd(s, 2, 6)), 2);
	if (param & 4) {
		node2(m, "Mul", "x", "x", "x2", 0);
		node2(m, "Mul", "x", "x2", "x3", sw);
	} else {
		scalar(m, "three", 3);
		tm_node(m, "Pow", NULL, TM_NAMES("x", "three"), 2, TM_NAMES("x3"), 1);
	}
	scalar(m, "c1", 0.044715);
	scalar(m, "c2", sqrt(2 / M_PI));
	node2(m, "Mul", "x3", "c1", "w", sw);
	node2(m, "Add", "x", "w", "in", sw);
	node2(m, "Mul", "in", "c2", "z", !sw);
	tm_node(m, "Tanh", NULL, TM_NAMES("z"), 1, TM_NAMES("f"), 1);
	gelu_tail(m, param);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

/* param: bit 0 axes [1, 2] as an input at opset 18 (else axes=[-1]
 * attribute at 17), bit 1 d * d instead of Pow, bit 2 no beta */
static struct ir_model *f_layer_norm(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(param & 1 ? 18 : 17);
	int64_t d[3] = { tg_rnd(s, 1, 3), tg_rnd(s, 2, 4), tg_rnd(s, 2, 6) };
	int64_t axes[2] = { 1, 2 }, last = -1;
	struct ir_node *r1, *r2;

	tm_input(m, "x", IR_DTYPE_FLOAT, d, 3);
	if (param & 1) {
		tg_int_init(m, "axes", axes, TM_DIMS(2), 1);
		tg_rand_init(m, s, "gamma", d + 1, 2);
		tg_rand_init(m, s, "beta", d + 1, 2);
		r1 = tm_node(m, "ReduceMean", NULL, TM_NAMES("x", "axes"), 2, TM_NAMES("mean"), 1);
	} else {
		tg_rand_init(m, s, "gamma", d + 2, 1);
		tg_rand_init(m, s, "beta", d + 2, 1);
		r1 = tm_node(m, "ReduceMean", NULL, TM_NAMES("x"), 1, TM_NAMES("mean"), 1);
		tg_set_ints(r1, "axes", &last, 1);
	}
	tm_node(m, "Sub", NULL, TM_NAMES("x", "mean"), 2, TM_NAMES("d"), 1);
	if (param & 2) {
		node2(m, "Mul", "d", "d", "p", 0);
	} else {
		scalar(m, "two", 2);
		tm_node(m, "Pow", NULL, TM_NAMES("d", "two"), 2, TM_NAMES("p"), 1);
	}
	if (param & 1) {
		r2 = tm_node(m, "ReduceMean", NULL, TM_NAMES("p", "axes"), 2, TM_NAMES("var"), 1);
	} else {
		r2 = tm_node(m, "ReduceMean", NULL, TM_NAMES("p"), 1, TM_NAMES("var"), 1);
		tg_set_ints(r2, "axes", &last, 1);
	}
	(void)r2;
	scalar(m, "eps", 1e-5);
	node2(m, "Add", "var", "eps", "ve", 0);
	tm_node(m, "Sqrt", NULL, TM_NAMES("ve"), 1, TM_NAMES("sd"), 1);
	tm_node(m, "Div", NULL, TM_NAMES("d", "sd"), 2, TM_NAMES("n"), 1);
	if (param & 4) {
		node2(m, "Mul", "n", "gamma", "y", 1);
	} else {
		node2(m, "Mul", "n", "gamma", "ng", 0);
		node2(m, "Add", "ng", "beta", "y", 1);
	}
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

/* param: bit 0 opset 23 (axes an input; else opset 17, axes=[-1]), bit 1
 * x * x instead of Pow, bit 2 x * Reciprocal(r) instead of x / r, bit 3
 * gamma first */
static struct ir_model *f_rms_norm(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(param & 1 ? 23 : 17);
	int64_t d[3] = { tg_rnd(s, 1, 3), tg_rnd(s, 2, 4), tg_rnd(s, 2, 6) }, last = -1;
	struct ir_node *r;

	tm_input(m, "x", IR_DTYPE_FLOAT, d, 3);
	tg_rand_init(m, s, "gamma", d + 2, 1);
	if (param & 2) {
		node2(m, "Mul", "x", "x", "p", 0);
	} else {
		scalar(m, "two", 2);
		tm_node(m, "Pow", NULL, TM_NAMES("x", "two"), 2, TM_NAMES("p"), 1);
	}
	if (param & 1) {
		tg_int_init(m, "axes", &last, TM_DIMS(1), 1);
		tm_node(m, "ReduceMean", NULL, TM_NAMES("p", "axes"), 2, TM_NAMES("ms"), 1);
	} else {
		r = tm_node(m, "ReduceMean", NULL, TM_NAMES("p"), 1, TM_NAMES("ms"), 1);
		tg_set_ints(r, "axes", &last, 1);
	}
	scalar(m, "eps", 0.1);   /* large: an epsilon lost shows */
	node2(m, "Add", "ms", "eps", "ve", 0);
	tm_node(m, "Sqrt", NULL, TM_NAMES("ve"), 1, TM_NAMES("sd"), 1);
	if (param & 4) {
		tm_node(m, "Reciprocal", NULL, TM_NAMES("sd"), 1, TM_NAMES("inv"), 1);
		node2(m, "Mul", "x", "inv", "n", 1);
	} else {
		tm_node(m, "Div", NULL, TM_NAMES("x", "sd"), 2, TM_NAMES("n"), 1);
	}
	node2(m, "Mul", "n", "gamma", "y", (param >> 3) & 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

static void bn_params(struct ir_model *m, uint64_t *s, int64_t ch)
{
	double v[64];

	tg_rand_init(m, s, "scale", &ch, 1);
	tg_rand_init(m, s, "bias", &ch, 1);
	tg_rand_init(m, s, "mean", &ch, 1);
	tg_fill(s, v, ch);
	for (int64_t i = 0; i < ch; i++)
		v[i] = 0.5 + fabs(v[i]);
	tm_init(m, "var", IR_DTYPE_FLOAT, &ch, 1, v);
}

/* param 0: Conv + BN; 1: Conv (bias, group 2) + BN + Relu; 2: Gemm + BN;
 * 3: Gemm (transB, C, alpha, beta) + BN */
static struct ir_model *f_bn(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t ch = 2 * tg_rnd(s, 1, 3), k = tg_rnd(s, 1, 4);
	const char *bn_in[5] = { "t", "scale", "bias", "mean", "var" };
	struct ir_node *n;

	if (param < 2) {
		int64_t g = param ? 2 : 1, x[4] = { 1, 2 * g, tg_rnd(s, 3, 5), tg_rnd(s, 3, 5) };
		int64_t w[4] = { ch, 2, 3, 3 };

		tm_input(m, "x", IR_DTYPE_FLOAT, x, 4);
		tg_rand_init(m, s, "w", w, 4);
		tg_rand_init(m, s, "b", &ch, 1);
		n = tm_node(m, "Conv", NULL, TM_NAMES("x", "w", "b"), param ? 3 : 2, TM_NAMES("t"), 1);
		tg_set_ints(n, "pads", TM_DIMS(1, 1, 1, 1), 4);
		CU_ASSERT_FATAL(ir_node_set_int(n, "group", g) == 0);
	} else {
		int64_t x[2] = { tg_rnd(s, 1, 4), k }, w[2] = { k, ch };

		if (param == 3)
			w[0] = ch, w[1] = k;
		tm_input(m, "x", IR_DTYPE_FLOAT, x, 2);
		tg_rand_init(m, s, "w", w, 2);
		tg_rand_init(m, s, "b", &ch, 1);
		n = tm_node(m, "Gemm", NULL, TM_NAMES("x", "w", "b"), param == 3 ? 3 : 2,
			    TM_NAMES("t"), 1);
		if (param == 3) {
			CU_ASSERT_FATAL(ir_node_set_int(n, "transB", 1) == 0);
			CU_ASSERT_FATAL(ir_node_set_float(n, "alpha", 0.5f) == 0);
			CU_ASSERT_FATAL(ir_node_set_float(n, "beta", 2.0f) == 0);
		}
	}
	bn_params(m, s, ch);
	n = tm_node(m, "BatchNormalization", NULL, bn_in, 5, TM_NAMES(param == 1 ? "u" : "y"), 1);
	CU_ASSERT_FATAL(ir_node_set_float(n, "epsilon", 0.001f) == 0);
	if (param == 1)
		tm_node(m, "Relu", NULL, TM_NAMES("u"), 1, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

/* param 0: MatMul + bias [N]; 1: bias first, [1, N]; 2: bias [M, N] input */
static struct ir_model *f_gemm(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t mm = tg_rnd(s, 1, 4), k = tg_rnd(s, 1, 4), nn = tg_rnd(s, 1, 4);

	tm_input(m, "a", IR_DTYPE_FLOAT, TM_DIMS(mm, k), 2);
	tg_rand_init(m, s, "b", TM_DIMS(k, nn), 2);
	if (param == 0)
		tg_rand_init(m, s, "c", TM_DIMS(nn), 1);
	else if (param == 1)
		tg_rand_init(m, s, "c", TM_DIMS(1, nn), 2);
	else
		tm_input(m, "c", IR_DTYPE_FLOAT, TM_DIMS(mm, nn), 2);
	tm_node(m, "MatMul", NULL, TM_NAMES("a", "b"), 2, TM_NAMES("p"), 1);
	node2(m, "Add", "p", "c", "y", param == 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

struct fcase {
	const char *pass;
	build_fn build;
	int param;
	const char *target;          /* accepting the fused op */
	const char *fused;           /* op expected after */
	double tol;
};

static const struct fcase fusions[] = {
	{ "fuse-gelu", f_gelu_erf, 0, "tensorrt", "Gelu", 1e-6 },
	{ "fuse-gelu", f_gelu_erf, 1 | 8, "tensorrt", "Gelu", 1e-6 },
	{ "fuse-gelu", f_gelu_erf, 2 | 4, "tensorrt", "Gelu", 1e-6 },
	{ "fuse-gelu", f_gelu_erf, 2 | 4 | 8 | 16, "qnn", "Gelu", 1e-6 },
	{ "fuse-gelu", f_gelu_tanh, 0, "tensorrt", "Gelu", 1e-6 },
	{ "fuse-gelu", f_gelu_tanh, 1 | 4 | 8, "tensorrt", "Gelu", 1e-6 },
	{ "fuse-gelu", f_gelu_tanh, 2 | 16, NULL, "FastGelu", 1e-6 },
	{ "fuse-layer-norm", f_layer_norm, 0, "tensorrt", "LayerNormalization", 1e-5 },
	{ "fuse-layer-norm", f_layer_norm, 1 | 2, "tensorrt", "LayerNormalization", 1e-5 },
	{ "fuse-layer-norm", f_layer_norm, 4, "openvino", "LayerNormalization", 1e-5 },
	{ "fuse-rms-norm", f_rms_norm, 1, "tensorrt", "RMSNormalization", 1e-5 },
	{ "fuse-rms-norm", f_rms_norm, 1 | 2 | 4 | 8, "tensorrt", "RMSNormalization", 1e-5 },
	{ "fuse-rms-norm", f_rms_norm, 1 | 2 | 8, "qnn", "RMSNormalization", 1e-5 },
	{ "fuse-rms-norm", f_rms_norm, 1 | 4, "qnn", "RMSNormalization", 1e-5 },
	{ "fuse-batch-norm", f_bn, 0, "tensorrt", "Conv", 1e-5 },
	{ "fuse-batch-norm", f_bn, 1, "tensorrt", "Conv", 1e-5 },
	{ "fuse-batch-norm", f_bn, 2, "tensorrt", "Gemm", 1e-5 },
	{ "fuse-batch-norm", f_bn, 3, "tensorrt", "Gemm", 1e-5 },
	{ "fuse-gemm", f_gemm, 0, "tensorrt", "Gemm", 1e-5 },
	{ "fuse-gemm", f_gemm, 1, "tensorrt", "Gemm", 1e-5 },
	{ "fuse-gemm", f_gemm, 2, "tensorrt", "Gemm", 1e-5 },
};

static struct rules_db db;
static int db_loaded;

static const struct rules_target *target(const char *id)
{
	struct ir_diag d;

	if (!id)
		return NULL;
	if (!db_loaded) {
		ir_diag_init(&d);
		rules_db_init(&db);
		CU_ASSERT_FATAL(rules_load_dir("oprules", &db, &d) == 0);
		db_loaded = 1;
	}
	return rules_db_find(&db, id);
}

/* Run pass on m with target t: the number of fusions */
static size_t run_pass(struct ir_model *m, const char *pass, const struct rules_target *t)
{
	struct rw_ctx ctx;
	struct ir_diag d;
	size_t changed = 0;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, t, &d) == 0);
	CU_ASSERT_FATAL(rw_run(&ctx, rw_pass_find(pass), &changed) == 0);
	if (d.status)
		fprintf(stderr, "\n%s: %s\n", pass, d.msg);
	CU_ASSERT(ctx.n_log == changed || !changed);
	rw_ctx_release(&ctx);
	tm_verify(m);
	return changed;
}

static void test_fusions(void)
{
	uint64_t seed = 4242;

	for (size_t i = 0; i < sizeof(fusions) / sizeof(fusions[0]); i++) {
		const struct fcase *f = &fusions[i];

		for (int trial = 0; trial < 3; trial++, tg_next(&seed)) {
			uint64_t s = seed;
			struct ir_model *m = f->build(&s, f->param);
			struct rt_value *before = NULL, *after = NULL;
			size_t nodes = m->graph->n_nodes;
			const struct rules_target *t = target(f->target);
			double err;

			CU_ASSERT_FATAL(!f->target || t);
			CU_ASSERT_FATAL(tm_run(m, seed, &before, 1) == 0);
			CU_ASSERT(run_pass(m, f->pass, t) == 1);
			if (m->graph->n_nodes >= nodes || !tg_find_op(m, f->fused))
				fprintf(stderr, "\nfusion %zu (%s %d): %zu -> %zu nodes\n", i, f->pass,
					f->param, nodes, m->graph->n_nodes);
			CU_ASSERT(m->graph->n_nodes < nodes);
			CU_ASSERT(tg_find_op(m, f->fused) != NULL);
			CU_ASSERT_STRING_EQUAL(ir_s(m->graph->outputs[0].value->name), "y");
			CU_ASSERT_FATAL(tm_run(m, seed, &after, 1) == 0);
			err = tg_compare(after, before);
			if (trial == 0) {
				char what[64];

				snprintf(what, sizeof(what), "%s-%d", f->pass, f->param);
				tg_save_for_checker(m, what, after);
			}
			if (err > f->tol)
				fprintf(stderr, "\nfusion %zu (%s %d): error %g > %g\n", i, f->pass,
					f->param, err, f->tol);
			CU_ASSERT(err <= f->tol);
			rt_value_unref(before);
			rt_value_unref(after);
			ir_model_free(m);
		}
	}
	tg_run_checker();
}



/* com.microsoft Gelu into a model that does not import the domain: the
 * import is added */
static void test_domain_import(void)
{
	uint64_t s = 9;
	struct ir_model *m = f_gelu_erf(&s, 16);
	struct rt_value *before = NULL, *after = NULL;

	CU_ASSERT_FATAL(m->n_opsets == 2 && !strcmp(m->opsets[1].domain, "com.microsoft"));
	free(m->opsets[1].domain);
	m->n_opsets = 1;
	CU_ASSERT(ir_model_opset(m, "com.microsoft") == 0);
	CU_ASSERT_FATAL(tm_run(m, 9, &before, 1) == 0);
	CU_ASSERT(run_pass(m, "fuse-gelu", target("qnn")) == 1);
	CU_ASSERT(ir_model_opset(m, "com.microsoft") == 1);
	CU_ASSERT(tg_find_op(m, "Gelu") != NULL);
	CU_ASSERT_FATAL(tm_run(m, 9, &after, 1) == 0);
	CU_ASSERT(tg_compare(after, before) <= 1e-6);
	rt_value_unref(before);
	rt_value_unref(after);
	ir_model_free(m);
}

/* A decomposition's output is not fused back (the target could not take
 * the op for that node): Gelu, LayerNormalization and Gemm decomposed,
 * then the fusions run with a target accepting the op. */
static void test_no_undo(void)
{
	static const struct {
		const char *op, *decomp, *fuse;
		int opset;
	} c[] = {
		{ "Gelu", "gelu", "fuse-gelu", 20 },
		{ "LayerNormalization", "layer-norm", "fuse-layer-norm", 17 },
		{ "Gemm", "gemm", "fuse-gemm", 13 },
		{ "RMSNormalization", "layer-norm", "fuse-rms-norm", 23 },
	};
	uint64_t s = 5;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct ir_model *m = tm_new(c[i].opset);
		struct rw_ctx ctx;
		struct ir_diag d;
		struct ir_node *n;
		size_t nodes;

		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 4), 2);
		if (i == 0) {
			n = tm_node(m, "Gelu", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
		} else if (i == 1) {
			tg_rand_init(m, &s, "g", TM_DIMS(4), 1);
			tg_rand_init(m, &s, "b", TM_DIMS(4), 1);
			n = tm_node(m, "LayerNormalization", NULL, TM_NAMES("x", "g", "b"), 3,
				    TM_NAMES("y"), 1);
		} else if (i == 3) {
			tg_rand_init(m, &s, "g", TM_DIMS(4), 1);
			n = tm_node(m, "RMSNormalization", NULL, TM_NAMES("x", "g"), 2,
				    TM_NAMES("y"), 1);
		} else {
			tg_rand_init(m, &s, "w", TM_DIMS(4, 3), 2);
			tg_rand_init(m, &s, "b", TM_DIMS(3), 1);
			n = tm_node(m, "Gemm", NULL, TM_NAMES("x", "w", "b"), 3, TM_NAMES("y"), 1);
		}
		tg_finish(m, IR_DTYPE_FLOAT);
		ir_diag_init(&d);
		CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
		CU_ASSERT_FATAL(rw_apply(&ctx, rw_pass_find(c[i].decomp), n, 0) == 0);
		CU_ASSERT_FATAL(rw_refresh(&ctx) == 0);
		rw_ctx_release(&ctx);
		CU_ASSERT(tg_find_op(m, c[i].op) == NULL);
		nodes = m->graph->n_nodes;
		CU_ASSERT(run_pass(m, c[i].fuse, target("tensorrt")) == 0);
		CU_ASSERT(m->graph->n_nodes == nodes);
		CU_ASSERT(tg_find_op(m, c[i].op) == NULL);
		ir_model_free(m);
	}
}

/* expand-simplified-ln: onnxruntime's default-domain
 * SimplifiedLayerNormalization (no onnx op) becomes primitives that agree
 * with the interpreter's kernel, and fuse-rms-norm takes them at opset 23
 * (they are not a lowering's). */
static void test_expand_sln(void)
{
	uint64_t s = 17;
	struct ir_model *m = tm_new(23);
	struct rt_value *before = NULL, *after = NULL, *fused = NULL;
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 8), 3);
	tg_rand_init(m, &s, "g", TM_DIMS(8), 1);
	n = tm_node(m, "SimplifiedLayerNormalization", NULL, TM_NAMES("x", "g"), 2,
		    TM_NAMES("y"), 1);
	ir_node_set_float(n, "epsilon", 0.1f);   /* large: an epsilon lost shows */
	tg_finish(m, IR_DTYPE_FLOAT);
	CU_ASSERT_FATAL(tm_run(m, 3, &before, 1) == 0);
	CU_ASSERT(run_pass(m, "expand-simplified-ln", NULL) == 1);
	CU_ASSERT(tg_find_op(m, "SimplifiedLayerNormalization") == NULL);
	CU_ASSERT(tg_find_op(m, "Sqrt") != NULL);
	CU_ASSERT_FATAL(tm_run(m, 3, &after, 1) == 0);
	CU_ASSERT(tg_compare(after, before) <= 1e-6);
	CU_ASSERT(run_pass(m, "fuse-rms-norm", target("tensorrt")) == 1);
	CU_ASSERT(tg_find_op(m, "RMSNormalization") != NULL);
	CU_ASSERT(m->graph->n_nodes == 1);
	CU_ASSERT_FATAL(tm_run(m, 3, &fused, 1) == 0);
	CU_ASSERT(tg_compare(fused, before) <= 1e-6);
	rt_value_unref(before);
	rt_value_unref(after);
	rt_value_unref(fused);
	ir_model_free(m);
}

/* Targets without the fused op, and patterns that do not hold, are left
 * alone. */
static void test_fusion_refusals(void)
{
	static const struct {
		const char *pass;
		build_fn build;
		int param;
		const char *target;
	} no[] = {
		{ "fuse-gelu", f_gelu_erf, 16, "generic-npu" },   /* no Gelu, opset 17 */
		{ "fuse-layer-norm", f_layer_norm, 0, "generic-npu" },
		{ "fuse-gemm", f_gemm, 0, "coreml-none" },
		{ "fuse-rms-norm", f_rms_norm, 0, "tensorrt" },   /* opset 17 */
		{ "fuse-rms-norm", f_rms_norm, 1, "openvino" },
		/* opset 17: qnn's SimplifiedLayerNormalization is not onnx's */
		{ "fuse-rms-norm", f_rms_norm, 2 | 8, "qnn" },
	};
	uint64_t s = 11;

	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		struct ir_model *m = no[i].build(&s, no[i].param);
		size_t nodes = m->graph->n_nodes;
		const struct rules_target *t = target(no[i].target);

		if (!t)   /* a target without Gemm: one with no ops at all */
			t = target("generic-npu");
		if (i == 2) {
			/* the bias is read twice: the Add is not the MatMul's only reader */
			tm_node(m, "Relu", NULL, TM_NAMES("p"), 1, TM_NAMES("z"), 1);
			tm_output(m, "z", IR_DTYPE_FLOAT, NULL, 0);
		}
		nodes = m->graph->n_nodes;
		CU_ASSERT(run_pass(m, no[i].pass, t) == 0);
		CU_ASSERT(m->graph->n_nodes == nodes);
		ir_model_free(m);
	}
	if (db_loaded) {
		rules_db_release(&db);
		db_loaded = 0;
	}
}

static const struct unit_test tests[] = {
	{ "fusions shrink the graph and agree", test_fusions },
	{ "fusions add the contrib domain's import", test_domain_import },
	{ "fusions do not undo decompositions", test_no_undo },
	{ "expand-simplified-ln writes what fuse-rms-norm takes", test_expand_sln },
	{ "fusions need the target and the pattern", test_fusion_refusals },
	{ NULL, NULL },
};

int suite_fuse_register(void)
{
	return unit_add_suite("fuse", tests);
}
