/* suite_kcl.c: the channels-in-lanes convolutions (validators/
 * k_conv_cl.c) with the steps after them done as each tile is stored
 * (the node's epilogue, runtime/chain.c): BatchNormalization, a
 * residual Add of a graph input of the Conv's shape and Relu; a Mul by a
 * per-channel constant and Clip.  On 7x7 padded rows (a tile per row, a
 * short last panel, batch 2), a 14x14 1x1 read in place (the plane's rows
 * one after another) and a stride-2 convolution through phase planes;
 * one and two threads.  Also the depthwise kernels' epilogues (their
 * steps up to a residual Add, the rest in the chain's pass): planes as
 * large as their output flattened (k_conv_dwf.c), strided and small
 * planes sixteen channels at a time (k_conv_dw.c), larger unpadded ones a
 * plane at a time (k_conv_dwp.c, rows of 56 outputs: four vectors after
 * none whole).  Each fused run must give the values of the nodes
 * run one by one (under an observer, which stops fusing) bit for bit, and
 * those must match the steps done here in double on a naive convolution
 * (tconv.c); each case as the kernels choose it and with oneDNN off.
 * oneDNN's convolutions with the BatchNormalization folded into their
 * weights (other last bits) must match the double reference.  A
 * GlobalAveragePool reading a channels-last result, and Add, Sub, Mul,
 * Div of it by a value per image and channel, either operand first: the
 * plain layout's values bit for bit.  Depthwise convolutions reading and
 * writing channels last (k_conv_dwc.c where the window has 9 taps or
 * more and stride 1, else oneDNN's): seeded random shapes, windows 3, 5
 * and 7 (square or not), strides, dilations, uneven pads, short and
 * narrow planes, channels not a multiple of 16, groups of blocks; the
 * values of the double reference and the plain layout's bits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "tests/unit/tconv.h"
#include "tests/unit/tmodel.h"
#include "runtime/kernels/k_conv_int.h"   /* knn_dnnl_folds */
#include "runtime/kernels/pgemm.h"

static const struct ccase cl_cases[] = {
	{ 2, 2, 32, 40, 1, { 7, 7 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	{ 2, 1, 300, 70, 1, { 14, 14 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	{ 2, 1, 64, 33, 1, { 27, 27 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* depthwise */
	{ 2, 2, 40, 40, 40, { 14, 14 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	{ 2, 1, 24, 24, 24, { 20, 20 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 } },
	{ 2, 1, 20, 20, 20, { 9, 11 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	{ 2, 1, 3, 3, 3, { 58, 58 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
};

/* per output channel o: BN's scale, bias, mean, var and the Mul's factor */
static double bn_scale(int64_t o) { return 0.5 + 0.1 * (double)(o % 7); }
static double bn_bias(int64_t o) { return 0.2 * (double)(o % 5) - 0.4; }
static double bn_mean(int64_t o) { return 0.05 * (double)(o % 3); }
static double bn_var(int64_t o) { return 0.5 + 0.25 * (double)(o % 4); }
static double mul_k(int64_t o) { return (o % 2 ? -1.5 : 0.75) + 0.01 * (double)o; }

/* x -> Conv -> (kind 0) BN -> Add(r, .) -> Relu, (kind 1) Mul(., k) ->
 * Clip(-0.5, 0.6), -> y; r (kind 0) a graph input of y's shape */
static struct ir_model *cl_model(const struct ccase *cs, int kind, const double *w,
				 const double *b)
{
	struct ir_model *m = tm_new(13);
	int64_t oh = tc_out_dim(cs, 0), ow = tc_out_dim(cs, 1);
	double *v = malloc((size_t)cs->m * sizeof(double));
	struct ir_node *n;

	CU_ASSERT_FATAL(v != NULL);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(cs->n, cs->c, cs->in[0], cs->in[1]), 4);
	if (kind == 0)
		tm_input(m, "r", IR_DTYPE_FLOAT, TM_DIMS(cs->n, cs->m, oh, ow), 4);
	tm_init(m, "w", IR_DTYPE_FLOAT, TM_DIMS(cs->m, cs->c / cs->group, cs->k[0], cs->k[1]), 4,
		w);
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(cs->m), 1, b);
	n = tm_node(m, "Conv", NULL, TM_NAMES("x", "w", "b"), 3, TM_NAMES("c"), 1);
	ir_node_set_ints(n, "strides", cs->s, 2);
	ir_node_set_ints(n, "dilations", cs->dl, 2);
	ir_node_set_ints(n, "pads", cs->pad, 4);
	ir_node_set_int(n, "group", cs->group);
	if (kind == 0) {
		static double (*const f[])(int64_t) = { bn_scale, bn_bias, bn_mean, bn_var };
		static const char *const names[] = { "scale", "bias", "mean", "var" };

		for (int i = 0; i < 4; i++) {
			for (int64_t o = 0; o < cs->m; o++)
				v[o] = f[i](o);
			tm_init(m, names[i], IR_DTYPE_FLOAT, TM_DIMS(cs->m), 1, v);
		}
		tm_node(m, "BatchNormalization", NULL,
			TM_NAMES("c", "scale", "bias", "mean", "var"), 5, TM_NAMES("bn"), 1);
		tm_node(m, "Add", NULL, TM_NAMES("r", "bn"), 2, TM_NAMES("s"), 1);
		tm_node(m, "Relu", NULL, TM_NAMES("s"), 1, TM_NAMES("y"), 1);
	} else {
		for (int64_t o = 0; o < cs->m; o++)
			v[o] = mul_k(o);
		tm_init(m, "k", IR_DTYPE_FLOAT, TM_DIMS(1, cs->m, 1, 1), 4, v);
		tm_init(m, "lo", IR_DTYPE_FLOAT, TM_DIMS(1), 0, (const double[]){ -0.5 });
		tm_init(m, "hi", IR_DTYPE_FLOAT, TM_DIMS(1), 0, (const double[]){ 0.6 });
		tm_node(m, "Mul", NULL, TM_NAMES("c", "k"), 2, TM_NAMES("s"), 1);
		tm_node(m, "Clip", NULL, TM_NAMES("s", "lo", "hi"), 3, TM_NAMES("y"), 1);
	}
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(cs->n, cs->m, oh, ow), 4);
	tm_verify(m);
	free(v);
	return m;
}

/* The steps on the naive convolution, in double, in place. */
static void cl_steps(const struct ccase *cs, int kind, const double *r, double *y, int64_t ny)
{
	int64_t plane = tc_out_dim(cs, 0) * tc_out_dim(cs, 1);

	for (int64_t e = 0; e < ny; e++) {
		int64_t o = e / plane % cs->m;
		double t = y[e];

		if (kind == 0) {
			t = (t - bn_mean(o)) / sqrt(bn_var(o) + 1e-5) * bn_scale(o) + bn_bias(o);
			t = r[e] + t;
			y[e] = t < 0 ? 0 : t;
		} else {
			t = t * mul_k(o);
			y[e] = t < -0.5 ? -0.5 : t > 0.6 ? 0.6 : t;
		}
	}
}

static void cl_case(const struct ccase *cs, int kind)
{
	int64_t nx = cs->n * cs->c * cs->in[0] * cs->in[1], ny;
	double *x = tc_fill(nx, 3);
	double *w = tc_fill(cs->m * (cs->c / cs->group) * cs->k[0] * cs->k[1], 5);
	double *b = tc_fill(cs->m, 8), *want = tc_naive_conv(cs, x, w, b, &ny);
	double *r = tc_fill(ny, 9);
	float *plain = malloc((size_t)ny * sizeof(float)), *y = malloc((size_t)ny * sizeof(float));
	struct ir_model *m = cl_model(cs, kind, w, b);
	struct rt_value *ins[2] = {
		tc_tensor(x, 4, TM_DIMS(cs->n, cs->c, cs->in[0], cs->in[1])),
		kind == 0 ? tc_tensor(r, 4, TM_DIMS(cs->n, cs->m, tc_out_dim(cs, 0),
						    tc_out_dim(cs, 1))) : NULL,
	};
	size_t n_in = kind == 0 ? 2 : 1;

	CU_ASSERT_FATAL(plain != NULL && y != NULL);
	cl_steps(cs, kind, r, want, ny);
	/* one by one, as the observer has it */
	CU_ASSERT_EQUAL(tc_run(m, ins, n_in, 1, 1, 1, plain, ny), 0);
	CU_ASSERT(tc_check_floats(plain, want, ny, kind ? "Mul, Clip" : "BN, Add, Relu"));
	for (int th = 1; th <= 2; th++) {
		if (th > 1) {
			/* one by one at th threads: the same bits as at one where
			 * the AVX-512 kernels run (they split a convolution the same
			 * way at any thread count); OpenBLAS, the other CPUs' path,
			 * gives a product split in other shapes other last bits */
			CU_ASSERT_EQUAL(tc_run(m, ins, n_in, th, 1, 1, y, ny), 0);
			if (rt_pgemm_ok())
				CU_ASSERT(!memcmp(y, plain, (size_t)ny * sizeof(float)));
			memcpy(plain, y, (size_t)ny * sizeof(float));
		}
		CU_ASSERT_EQUAL(tc_run(m, ins, n_in, th, 0, 3, y, ny), 3);
		CU_ASSERT(!memcmp(y, plain, (size_t)ny * sizeof(float)));
		/* with the BatchNormalization folded into a oneDNN
		 * convolution's weights (OPMIG_NO_BNFOLD unset): other last
		 * bits, the same values within the reference's bound */
		if (kind == 0 && getenv("OPMIG_NO_BNFOLD")) {
			unsetenv("OPMIG_NO_BNFOLD");
			CU_ASSERT_EQUAL(tc_run(m, ins, n_in, th, 0, 3, y, ny), 3);
			CU_ASSERT(tc_check_floats(y, want, ny, "BN folded, Add, Relu"));
			setenv("OPMIG_NO_BNFOLD", "1", 1);
		}
	}
	rt_value_unref(ins[0]);
	rt_value_unref(ins[1]);
	ir_model_free(m);
	free(x);
	free(w);
	free(b);
	free(want);
	free(r);
	free(plain);
	free(y);
}

/* as chosen (windows over 1x1 of 16 channels or more on oneDNN), then
 * with oneDNN off: the own kernels on every case.  oneDNN's folding of a
 * BatchNormalization into the weights (the bits then differ from the
 * nodes') is off for the comparison with the nodes and checked against
 * the reference on its own (cl_case); the own kernels fold none and
 * give the nodes' bits with folding allowed. */
static void test_epilogue(void)
{
	for (int own = 0; own < 2; own++) {
		int64_t folds = knn_dnnl_folds();

		if (own)
			setenv("OPMIG_NO_DNNL", "1", 1);
		else
			setenv("OPMIG_NO_BNFOLD", "1", 1);
		for (size_t i = 0; i < sizeof(cl_cases) / sizeof(cl_cases[0]); i++)
			for (int kind = 0; kind < 2; kind++)
				cl_case(&cl_cases[i], kind);
		unsetenv("OPMIG_NO_BNFOLD");
		/* oneDNN's 3x3 cases folded (two threads: the same) */
		CU_ASSERT(own ? knn_dnnl_folds() == folds : !knn_dnnl_ok() || knn_dnnl_folds() > folds);
	}
	unsetenv("OPMIG_NO_DNNL");
}

/* The readers' tests' head: input x [2, 16, 20, 20], a Conv 3x3 pad 1 to
 * m channels of weights w and bias b, its result "c" (kept channels last
 * where its readers take it so). */
static struct ir_model *cl_head(int64_t m, const double *w, const double *b)
{
	struct ir_model *md = tm_new(13);

	tm_input(md, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 16, 20, 20), 4);
	tm_init(md, "W", IR_DTYPE_FLOAT, TM_DIMS(m, 16, 3, 3), 4, w);
	tm_init(md, "B", IR_DTYPE_FLOAT, TM_DIMS(m), 1, b);
	ir_node_set_ints(tm_node(md, "Conv", NULL, TM_NAMES("x", "W", "B"), 3, TM_NAMES("c"), 1),
			 "pads", TM_DIMS(1, 1, 1, 1), 4);
	return md;
}

/* md on in at one and two threads (two runs each, into y) must give plain
 * (ny values: the observer's run, every node on its own) bit for bit */
static void same_as_plain(struct ir_model *md, struct rt_value *in, const float *plain,
			  float *y, int64_t ny)
{
	for (int th = 1; th <= 2; th++) {
		memset(y, 0, (size_t)ny * sizeof(float));
		tc_run(md, &in, 1, th, 0, 2, y, ny);
		CU_ASSERT(!memcmp(y, plain, (size_t)ny * sizeof(float)));
	}
}

/* x [2, 16, 20, 20] -> Conv 3x3 pad 1 to m channels -> GlobalAveragePool:
 * the Conv's result kept channels last, the pool reading it so (blocks of
 * 64 channels, a short last one) must give the plain layout's averages
 * bit for bit (the observer's run), and the spec's within rounding. */
static void gap_cl_case(int64_t m)
{
	const struct ccase cs = { 2, 2, 16, m, 1, { 20, 20 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
				  { 1, 1, 1, 1 } };
	int64_t nx = 2 * 16 * 400, ny;
	double *x = tc_fill(nx, 13), *w = tc_fill(m * 16 * 9, 14), *b = tc_fill(m, 15);
	double *conv = tc_naive_conv(&cs, x, w, b, &ny), want[2 * 200];
	float plain[2 * 200], y[2 * 200];
	struct ir_model *md = cl_head(m, w, b);
	struct rt_value *in = tc_tensor(x, 4, TM_DIMS(2, 16, 20, 20));

	tm_node(md, "GlobalAveragePool", NULL, TM_NAMES("c"), 1, TM_NAMES("y"), 1);
	tm_output(md, "y", IR_DTYPE_FLOAT, TM_DIMS(2, m, 1, 1), 4);
	tm_verify(md);
	for (int64_t p = 0; p < 2 * m; p++) {
		want[p] = 0;
		for (int64_t e = 0; e < 400; e++)
			want[p] += conv[p * 400 + e] / 400;
	}
	tc_run(md, &in, 1, 1, 1, 1, plain, 2 * m);
	CU_ASSERT(tc_check_floats(plain, want, 2 * m, "GlobalAveragePool, plain"));
	same_as_plain(md, in, plain, y, 2 * m);
	rt_value_unref(in);
	ir_model_free(md);
	free(x);
	free(w);
	free(b);
	free(conv);
}

/* x [2, 16, 20, 20] -> Conv 3x3 pad 1 to m channels (kept channels last)
 * -> t = Sigmoid(GlobalAveragePool(c)) per image and channel, then
 * Mul(c, t), Sub(t, .), Div(., t), Add(t, .) in a row, each reading the
 * map channels last with one value per image and channel (k_binary.c's
 * per-channel view), either operand first: the plain layout's values bit
 * for bit. */
static void se_cl_case(int64_t m)
{
	double *x = tc_fill(2 * 16 * 400, 23), *w = tc_fill(m * 16 * 9, 24), *b = tc_fill(m, 25);
	int64_t ny = 2 * m * 400;
	float *plain = malloc((size_t)ny * sizeof(float)), *y = malloc((size_t)ny * sizeof(float));
	struct ir_model *md = cl_head(m, w, b);
	struct rt_value *in = tc_tensor(x, 4, TM_DIMS(2, 16, 20, 20));

	CU_ASSERT_FATAL(plain && y);
	tm_node(md, "GlobalAveragePool", NULL, TM_NAMES("c"), 1, TM_NAMES("g"), 1);
	tm_node(md, "Sigmoid", NULL, TM_NAMES("g"), 1, TM_NAMES("t"), 1);
	tm_node(md, "Mul", NULL, TM_NAMES("c", "t"), 2, TM_NAMES("p1"), 1);
	tm_node(md, "Sub", NULL, TM_NAMES("t", "p1"), 2, TM_NAMES("p2"), 1);
	tm_node(md, "Div", NULL, TM_NAMES("p2", "t"), 2, TM_NAMES("p3"), 1);
	tm_node(md, "Add", NULL, TM_NAMES("t", "p3"), 2, TM_NAMES("y"), 1);
	tm_output(md, "y", IR_DTYPE_FLOAT, TM_DIMS(2, m, 20, 20), 4);
	tm_verify(md);
	tc_run(md, &in, 1, 1, 1, 1, plain, ny);
	same_as_plain(md, in, plain, y, ny);
	rt_value_unref(in);
	ir_model_free(md);
	free(x);
	free(w);
	free(b);
	free(plain);
	free(y);
}

static void test_se_cl(void)
{
	se_cl_case(40);
	se_cl_case(144);
}

static void test_gap_cl(void)
{
	gap_cl_case(40);    /* one short block */
	gap_cl_case(144);   /* 64, 64 and 16 */
}


/* One depthwise case: batch, channels, plane, window, strides,
 * dilations, pads (top, left, bottom, right), the step after (0 none, 1
 * Relu, 2 HardSwish). */
struct dwcl {
	int64_t n, c, h, w, kh, kw, sh, sw, dh, dw, pad[4];
	int act;
};

static uint64_t dwcl_next(uint64_t *st)
{
	*st = *st * 6364136223846793005ull + 1442695040888963407ull;
	return *st >> 33;
}

/* A seeded case whose output has at least one position */
static void dwcl_draw(uint64_t *st, struct dwcl *t)
{
	static const int64_t cs[] = { 16, 24, 40, 64, 100, 256 };
	static const int64_t hs[] = { 1, 2, 3, 5, 6, 8, 14, 20 };
	static const int64_t ws[] = { 1, 5, 7, 16, 33, 160 };
	static const int64_t ks[] = { 3, 5, 7 };

	do {
		t->n = 1 + (int64_t)(dwcl_next(st) % 2);
		t->c = cs[dwcl_next(st) % 6];
		t->h = hs[dwcl_next(st) % 8];
		t->w = ws[dwcl_next(st) % 6];
		t->kh = ks[dwcl_next(st) % 3];
		/* mostly square windows, some 5x3, 3x7... */
		t->kw = dwcl_next(st) % 4 ? t->kh : ks[dwcl_next(st) % 3];
		t->sh = dwcl_next(st) % 4 ? 1 : 2;
		t->sw = dwcl_next(st) % 4 ? 1 : 2;
		t->dh = dwcl_next(st) % 5 ? 1 : 2;
		t->dw = dwcl_next(st) % 5 ? 1 : 2;
		for (int i = 0; i < 4; i++) {
			int64_t k = i % 2 ? t->kw : t->kh, d = i % 2 ? t->dw : t->dh;
			int64_t half = d * (k - 1) / 2;

			/* mostly "same", sometimes none or uneven */
			t->pad[i] = dwcl_next(st) % 3 ? half : (int64_t)(dwcl_next(st) % (uint64_t)(half + 1));
		}
		t->act = (int)(dwcl_next(st) % 3);
	} while (t->h + t->pad[0] + t->pad[2] < t->dh * (t->kh - 1) + 1 ||
		 t->w + t->pad[1] + t->pad[3] < t->dw * (t->kw - 1) + 1);
}

/* x [n, 16, h, w] -> Conv 3x3 pad 1 to c channels (kept channels last:
 * oneDNN's) -> the depthwise Conv -> its step -> a 1x1 Conv of identity
 * weights (exact: the depthwise result's values, stored plain) -> y */
static struct ir_model *dwcl_model(const struct dwcl *t, const struct ccase *dc,
				   const double *w1, const double *b1, const double *w2,
				   const double *b2, const double *eye)
{
	struct ir_model *md = tm_new(14);
	struct ir_node *n;
	const char *d = t->act ? "e" : "d";

	tm_input(md, "x", IR_DTYPE_FLOAT, TM_DIMS(t->n, 16, t->h, t->w), 4);
	tm_init(md, "W1", IR_DTYPE_FLOAT, TM_DIMS(t->c, 16, 3, 3), 4, w1);
	tm_init(md, "B1", IR_DTYPE_FLOAT, TM_DIMS(t->c), 1, b1);
	tm_init(md, "W2", IR_DTYPE_FLOAT, TM_DIMS(t->c, 1, t->kh, t->kw), 4, w2);
	tm_init(md, "B2", IR_DTYPE_FLOAT, TM_DIMS(t->c), 1, b2);
	tm_init(md, "I", IR_DTYPE_FLOAT, TM_DIMS(t->c, t->c, 1, 1), 4, eye);
	ir_node_set_ints(tm_node(md, "Conv", NULL, TM_NAMES("x", "W1", "B1"), 3, TM_NAMES("c"), 1),
			 "pads", TM_DIMS(1, 1, 1, 1), 4);
	n = tm_node(md, "Conv", NULL, TM_NAMES("c", "W2", "B2"), 3, TM_NAMES("d"), 1);
	ir_node_set_int(n, "group", t->c);
	ir_node_set_ints(n, "pads", t->pad, 4);
	ir_node_set_ints(n, "strides", TM_DIMS(t->sh, t->sw), 2);
	ir_node_set_ints(n, "dilations", TM_DIMS(t->dh, t->dw), 2);
	if (t->act)
		tm_node(md, t->act == 1 ? "Relu" : "HardSwish", NULL, TM_NAMES("d"), 1,
			TM_NAMES("e"), 1);
	tm_node(md, "Conv", NULL, TM_NAMES(d, "I"), 2, TM_NAMES("y"), 1);
	tm_output(md, "y", IR_DTYPE_FLOAT, TM_DIMS(t->n, t->c, tc_out_dim(dc, 0),
						  tc_out_dim(dc, 1)), 4);
	tm_verify(md);
	return md;
}

static void dwcl_case(const struct dwcl *t)
{
	const struct ccase hc = { 2, t->n, 16, t->c, 1, { t->h, t->w }, { 3, 3 }, { 1, 1 },
				  { 1, 1 }, { 1, 1, 1, 1 } };
	const struct ccase dc = { 2, t->n, t->c, t->c, t->c, { t->h, t->w }, { t->kh, t->kw },
				  { t->sh, t->sw }, { t->dh, t->dw },
				  { t->pad[0], t->pad[1], t->pad[2], t->pad[3] } };
	int64_t nx = t->n * 16 * t->h * t->w, nc, ny;
	double *x = tc_fill(nx, 31), *w1 = tc_fill(t->c * 16 * 9, 32), *b1 = tc_fill(t->c, 33);
	double *w2 = tc_fill(t->c * t->kh * t->kw, 34), *b2 = tc_fill(t->c, 35);
	double *eye = calloc((size_t)(t->c * t->c), sizeof(double));
	double *c = tc_naive_conv(&hc, x, w1, b1, &nc), *want = tc_naive_conv(&dc, c, w2, b2, &ny);
	float *plain = malloc((size_t)ny * sizeof(float)), *y = malloc((size_t)ny * sizeof(float));
	struct ir_model *md;
	struct rt_value *in = tc_tensor(x, 4, TM_DIMS(t->n, 16, t->h, t->w));
	/* the own kernel (k_conv_dwc.c: AVX-512, behind a head on oneDNN
	 * storing channels last); elsewhere oneDNN's or the plain kernels
	 * take it, their sums their own */
	int ours = t->sh == 1 && t->sw == 1 && t->kh * t->kw >= 9 && rt_pgemm_ok() &&
		   knn_dnnl_ok();
	char what[160];

	CU_ASSERT_FATAL(eye && plain && y);
	for (int64_t i = 0; i < t->c; i++)
		eye[i * t->c + i] = 1;
	for (int64_t e = 0; e < ny; e++) {
		double v = want[e];

		if (t->act == 1)
			want[e] = v < 0 ? 0 : v;
		else if (t->act == 2)
			want[e] = v * fmin(1, fmax(0, v / 6 + 0.5));
	}
	md = dwcl_model(t, &dc, w1, b1, w2, b2, eye);
	snprintf(what, sizeof(what), "depthwise %lld ch %lldx%lld window %lldx%lld stride %lld,%lld "
		 "dil %lld,%lld pads %lld %lld %lld %lld act %d", (long long)t->c, (long long)t->h,
		 (long long)t->w, (long long)t->kh, (long long)t->kw, (long long)t->sh,
		 (long long)t->sw, (long long)t->dh, (long long)t->dw, (long long)t->pad[0],
		 (long long)t->pad[1], (long long)t->pad[2], (long long)t->pad[3], t->act);
	/* one by one, plain, as the observer has it */
	tc_run(md, &in, 1, 1, 1, 1, plain, ny);
	CU_ASSERT(tc_check_floats(plain, want, ny, what));
	for (int th = 1; th <= 2; th++) {
		int64_t runs = knn_conv_dwc_runs();

		memset(y, 0, (size_t)ny * sizeof(float));
		tc_run(md, &in, 1, th, 0, 2, y, ny);
		CU_ASSERT(tc_check_floats(y, want, ny, what));
		/* the own kernel's sums are the plain kernels' (oneDNN's, where
		 * the window is smaller or strided, are its own) */
		if (ours && memcmp(y, plain, (size_t)ny * sizeof(float))) {
			CU_FAIL("channels-last depthwise: not the plain layout's bits");
			fprintf(stderr, "\n%s, %d threads\n", what, th);
		}
		/* the kernel ran where it should (its head on oneDNN, channels
		 * last) */
		if (ours)
			CU_ASSERT(knn_conv_dwc_runs() == runs + 2);
	}
	rt_value_unref(in);
	ir_model_free(md);
	free(x);
	free(w1);
	free(b1);
	free(w2);
	free(b2);
	free(eye);
	free(c);
	free(want);
	free(plain);
	free(y);
}

/* Seeded random cases, then fixed ones: SVTR's 5x5 on a 6x160 plane of
 * 256 channels, a 7x7 whose ring takes the channels in two groups, a
 * dilated 5x5 with uneven pads, a 5x5 on one row and on one column. */
static void test_dw_cl(void)
{
	static const struct dwcl fixed[] = {
		{ 1, 256, 6, 160, 5, 5, 1, 1, 1, 1, { 2, 2, 2, 2 }, 2 },
		{ 1, 256, 3, 164, 7, 7, 1, 1, 1, 1, { 3, 3, 3, 3 }, 1 },
		{ 2, 40, 9, 13, 5, 5, 1, 1, 2, 2, { 4, 1, 2, 3 }, 0 },
		{ 2, 24, 1, 33, 5, 5, 1, 1, 1, 1, { 2, 2, 2, 2 }, 2 },
		{ 1, 100, 17, 1, 5, 5, 1, 1, 1, 1, { 2, 2, 2, 2 }, 2 },
	};
	uint64_t st = 2607;
	struct dwcl t;

	for (int i = 0; i < 60; i++) {
		dwcl_draw(&st, &t);
		dwcl_case(&t);
	}
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		dwcl_case(&fixed[i]);
}

static const struct unit_test tests[] = {
	{ "epilogue", test_epilogue },
	{ "gap_cl", test_gap_cl },
	{ "se_cl", test_se_cl },
	{ "dw_cl", test_dw_cl },
	{ NULL, NULL },
};

int suite_kcl_register(void)
{
	return unit_add_suite("kcl", tests);
}
