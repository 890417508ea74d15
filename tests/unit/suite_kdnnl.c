/* suite_kdnnl.c: float32 convolutions on oneDNN (runtime/kernels/
 * k_conv_dnnl.c) against the naive convolution in double (tconv.c), on
 * seeded random geometries: 1-3 spatial dims, batch 1-2, groups 1-4,
 * kernels 1-3, strides 1-3, dilations 1-2, pads up to the kernel's extent
 * and unequal at both ends; with no step after the Conv, with a Relu or
 * a Clip (run inside oneDNN as post-ops) and with a per-channel Mul
 * before a Relu (run on the plain output); the weights a constant (kept
 * in oneDNN's layout from run to run) or a graph input; one and two
 * threads.  OPMIG_DNNL_ALL=1 sends every convolution there (in models,
 * only planes of 128x128 outputs and more go); the suite checks they
 * went.  Runs with the steps fused and the nodes one by one (under an
 * observer) are each held to the reference: not to each other bit for
 * bit, as oneDNN may pick another implementation (another summation
 * order) for a primitive with post-ops.  ConvInteger on oneDNN's integer
 * convolution: random geometries, uint8/int8 inputs and weights over
 * their whole ranges with any zero points (one or per channel), held to
 * the naive sums exactly (every third case a QLinearConv, its sums plus
 * a bias requantized in the same pass, held to the requantized naive
 * sums bit for bit); and MatMulInteger with a constant 2-D B (of K up to
 * 3000: B split into parts past 2^24) on its
 * integer matmul, likewise; both again on AMX where the CPU has it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"
#include "tests/unit/suites.h"
#include "tests/unit/tconv.h"
#include "tests/unit/tmodel.h"

#define KD_CASES 60

static uint64_t kd_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

static int64_t kd_pick(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(kd_next(s) % (uint64_t)(hi - lo + 1));
}

/* A random geometry with every output dim at least 1. */
static void kd_case(uint64_t *s, struct ccase *cs)
{
	int64_t g = (int64_t[]){ 1, 1, 2, 4 }[kd_pick(s, 0, 3)];

	memset(cs, 0, sizeof(*cs));
	cs->nsp = (int)kd_pick(s, 1, 3);
	cs->n = kd_pick(s, 1, 2);
	cs->group = g;
	cs->c = g * kd_pick(s, 1, 6);
	cs->m = g * kd_pick(s, 1, 6);
	for (int d = 0; d < cs->nsp; d++) {
		int64_t ext;

		cs->in[d] = kd_pick(s, 3, cs->nsp == 3 ? 7 : 13);
		cs->k[d] = kd_pick(s, 1, 3);
		cs->s[d] = kd_pick(s, 1, 3);
		cs->dl[d] = kd_pick(s, 1, 2);
		ext = (cs->k[d] - 1) * cs->dl[d];
		cs->pad[d] = kd_pick(s, 0, ext);
		cs->pad[cs->nsp + d] = kd_pick(s, 0, ext);
		if (cs->in[d] + cs->pad[d] + cs->pad[cs->nsp + d] < ext + 1)
			cs->in[d] = ext + 1;
	}
}

static double kd_mul(int64_t o)
{
	return (o % 2 ? -1.25 : 0.5) + 0.03 * (double)o;
}

/* Conv (kind 0), then Relu (1), Clip(-0.4, 0.5) (2), or a per-channel
 * Mul and Relu (3). */
static struct ir_model *kd_model(const struct ccase *cs, int kind, const double *w,
				 const double *b, int w_input)
{
	struct ir_model *m = tm_new(13);
	int64_t xd[5] = { cs->n, cs->c }, wd[5] = { cs->m, cs->c / cs->group };
	int64_t od[5] = { cs->n, cs->m }, kd[5] = { 1, cs->m, 1, 1, 1 }, pads[6];
	size_t r = (size_t)cs->nsp + 2;
	struct ir_node *n;
	double *v;

	for (int d = 0; d < cs->nsp; d++) {
		xd[2 + d] = cs->in[d];
		wd[2 + d] = cs->k[d];
		od[2 + d] = tc_out_dim(cs, d);
		pads[d] = cs->pad[d];
		pads[cs->nsp + d] = cs->pad[cs->nsp + d];
	}
	tm_input(m, "x", IR_DTYPE_FLOAT, xd, r);
	if (w_input)
		tm_input(m, "w", IR_DTYPE_FLOAT, wd, r);
	else
		tm_init(m, "w", IR_DTYPE_FLOAT, wd, r, w);
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(cs->m), 1, b);
	n = tm_node(m, "Conv", NULL, TM_NAMES("x", "w", "b"), 3,
		    TM_NAMES(kind ? "c" : "y"), 1);
	ir_node_set_int(n, "group", cs->group);
	ir_node_set_ints(n, "strides", cs->s, (size_t)cs->nsp);
	ir_node_set_ints(n, "dilations", cs->dl, (size_t)cs->nsp);
	ir_node_set_ints(n, "pads", pads, 2 * (size_t)cs->nsp);
	if (kind == 1) {
		tm_node(m, "Relu", NULL, TM_NAMES("c"), 1, TM_NAMES("y"), 1);
	} else if (kind == 2) {
		tm_init(m, "lo", IR_DTYPE_FLOAT, TM_DIMS(1), 0, (const double[]){ -0.4 });
		tm_init(m, "hi", IR_DTYPE_FLOAT, TM_DIMS(1), 0, (const double[]){ 0.5 });
		tm_node(m, "Clip", NULL, TM_NAMES("c", "lo", "hi"), 3, TM_NAMES("y"), 1);
	} else if (kind == 3) {
		CU_ASSERT_FATAL((v = malloc((size_t)cs->m * sizeof(double))) != NULL);
		for (int64_t o = 0; o < cs->m; o++)
			v[o] = kd_mul(o);
		tm_init(m, "k", IR_DTYPE_FLOAT, kd, r, v);
		free(v);
		tm_node(m, "Mul", NULL, TM_NAMES("c", "k"), 2, TM_NAMES("s"), 1);
		tm_node(m, "Relu", NULL, TM_NAMES("s"), 1, TM_NAMES("y"), 1);
	}
	tm_output(m, "y", IR_DTYPE_FLOAT, od, r);
	tm_verify(m);
	return m;
}

static void kd_steps(const struct ccase *cs, int kind, double *y, int64_t ny, int64_t plane)
{
	for (int64_t e = 0; e < ny; e++) {
		double t = y[e];

		if (kind == 3)
			t *= kd_mul(e / plane % cs->m);
		if (kind == 1 || kind == 3)
			t = t < 0 ? 0 : t;
		else if (kind == 2)
			t = t < -0.4 ? -0.4 : t > 0.5 ? 0.5 : t;
		y[e] = t;
	}
}

/* One case; dn: oneDNN must run it (1) or must not (0). */
static void kd_one(const struct ccase *cs, int kind, int w_input, uint64_t seed, int dn)
{
	int64_t xd[5] = { cs->n, cs->c }, wd[5] = { cs->m, cs->c / cs->group };
	int64_t nx = cs->n * cs->c, nw = cs->m * (cs->c / cs->group), ny, plane = 1;
	double *x, *w, *b, *want;
	float *plain, *y;
	struct ir_model *m;
	struct rt_value *ins[2];
	int64_t before;
	char what[160];

	for (int d = 0; d < cs->nsp; d++) {
		xd[2 + d] = cs->in[d];
		wd[2 + d] = cs->k[d];
		nx *= cs->in[d];
		nw *= cs->k[d];
		plane *= tc_out_dim(cs, d);
	}
	x = tc_fill(nx, seed);
	w = tc_fill(nw, seed + 1);
	b = tc_fill(cs->m, seed + 2);
	want = tc_naive_conv(cs, x, w, b, &ny);
	kd_steps(cs, kind, want, ny, plane);
	plain = malloc((size_t)ny * sizeof(float));
	y = malloc((size_t)ny * sizeof(float));
	CU_ASSERT_FATAL(plain != NULL && y != NULL);
	m = kd_model(cs, kind, w, b, w_input);
	ins[0] = tc_tensor(x, cs->nsp + 2, xd);
	ins[1] = w_input ? tc_tensor(w, cs->nsp + 2, wd) : NULL;
	snprintf(what, sizeof(what),
		 "nsp %d n %lld c %lld m %lld group %lld in0 %lld k0 %lld s0 %lld dil0 %lld "
		 "pads0 %lld/%lld, kind %d, w input %d", cs->nsp, (long long)cs->n,
		 (long long)cs->c, (long long)cs->m, (long long)cs->group, (long long)cs->in[0],
		 (long long)cs->k[0], (long long)cs->s[0], (long long)cs->dl[0],
		 (long long)cs->pad[0], (long long)cs->pad[cs->nsp], kind, w_input);
	before = knn_dnnl_runs();
	tc_run(m, ins, w_input ? 2 : 1, 1, 1, 1, plain, ny);
	CU_ASSERT(knn_dnnl_runs() == before + dn);
	CU_ASSERT(tc_check_floats(plain, want, ny, what));
	for (int th = 1; th <= 2; th++) {
		before = knn_dnnl_runs();
		tc_run(m, ins, w_input ? 2 : 1, th, 0, 3, y, ny);
		CU_ASSERT(knn_dnnl_runs() == before + 3 * dn);
		CU_ASSERT(tc_check_floats(y, want, ny, what));
	}
	rt_value_unref(ins[0]);
	rt_value_unref(ins[1]);
	ir_model_free(m);
	free(x);
	free(w);
	free(b);
	free(want);
	free(plain);
	free(y);
}

static void test_random(void)
{
	uint64_t s = 20261205;

	if (!knn_dnnl_ok()) {
		fprintf(stderr, "\nkdnnl: oneDNN unavailable here (OPMIG_NO_DNNL?): skipped\n");
		return;
	}
	setenv("OPMIG_DNNL_ALL", "1", 1);
	for (int i = 0; i < KD_CASES; i++) {
		struct ccase cs;

		kd_case(&s, &cs);
		kd_one(&cs, i % 4, i % 5 == 4, 100 + (uint64_t)i * 7, 1);
	}
	unsetenv("OPMIG_DNNL_ALL");
}

/* Without OPMIG_DNNL_ALL (k_conv_dnnl.c, dn_fits): a convolution of 16
 * or more input and output channels per group with a window larger than
 * 1x1 goes to oneDNN on any plane (7x7, 16x16, 128x128) and any stride;
 * fewer channels, a 1x1 window or a depthwise one stay with the own
 * kernels while the input is plain, and so does a window of more taps
 * than its output plane's positions (9x9/2 onto 6x6; 5x5 onto 7x7 goes
 * to oneDNN). */
static void test_policy(void)
{
	static const struct ccase cases[] = {
		{ 2, 1, 16, 16, 1, { 128, 128 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
		{ 2, 1, 16, 16, 1, { 16, 16 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
		{ 2, 1, 32, 16, 1, { 7, 7 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 } },
		{ 2, 1, 32, 32, 2, { 12, 12 }, { 3, 3 }, { 1, 1 }, { 2, 2 }, { 2, 2, 2, 2 } },
		{ 2, 1, 8, 16, 1, { 16, 16 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
		{ 2, 1, 16, 8, 1, { 16, 16 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
		{ 2, 1, 16, 16, 1, { 16, 16 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
		{ 2, 1, 16, 16, 16, { 16, 16 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
		{ 2, 2, 16, 16, 1, { 20, 20 }, { 9, 9 }, { 2, 2 }, { 1, 1 }, { 0, 0, 0, 0 } },
		{ 2, 1, 16, 24, 1, { 7, 7 }, { 5, 5 }, { 1, 1 }, { 1, 1 }, { 2, 2, 2, 2 } },
	};
	static const int dn[] = { 1, 1, 1, 1, 0, 0, 0, 0, 0, 1 };

	if (!knn_dnnl_ok())
		return;
	unsetenv("OPMIG_DNNL_ALL");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		kd_one(&cases[i], (int)i % 4, 0, 7 + i, dn[i]);
}

/* ConvInteger: x (uint8 or int8, zero point xz) and w (uint8 or int8,
 * zero points wz: one, or one per output channel) on a random geometry
 * (or fixed's); the int32 sums must equal the naive convolution of
 * x - xz and w - wz (exact integers in double) element for element. */
static void kq_one(uint64_t *s, int i, const struct ccase *fixed)
{
	struct ccase cs;
	int xu = (int)kd_pick(s, 0, 1), wu = (int)kd_pick(s, 0, 1), per_m;
	int64_t xd[5], wd[5], od[5], nx, nw, ny, pads[6];
	double *x, *w, *wz, xz, *xs, *ws, *want;
	struct ir_model *m = tm_new(13);
	struct ir_node *n;
	struct rt_value *out = NULL;
	struct rt_opts o = { .threads = 1 + i % 2 };
	struct rt_session *ss = NULL;
	struct rt_value *in;
	struct ir_diag d;
	int64_t before;
	int corr, ql = i % 3 == 2, yu = 0;
	double ysc;

	if (fixed)
		cs = *fixed;
	else
		kd_case(s, &cs);
	per_m = (int)kd_pick(s, 0, 1);
	xd[0] = cs.n;
	xd[1] = cs.c;
	wd[0] = cs.m;
	wd[1] = cs.c / cs.group;
	od[0] = cs.n;
	od[1] = cs.m;
	nx = cs.n * cs.c;
	nw = cs.m * (cs.c / cs.group);
	for (int dd = 0; dd < cs.nsp; dd++) {
		xd[2 + dd] = cs.in[dd];
		wd[2 + dd] = cs.k[dd];
		od[2 + dd] = tc_out_dim(&cs, dd);
		nx *= cs.in[dd];
		nw *= cs.k[dd];
		pads[dd] = cs.pad[dd];
		pads[cs.nsp + dd] = cs.pad[cs.nsp + dd];
	}
	x = malloc((size_t)nx * sizeof(double));
	w = malloc((size_t)nw * sizeof(double));
	xs = malloc((size_t)nx * sizeof(double));
	ws = malloc((size_t)nw * sizeof(double));
	wz = malloc((size_t)cs.m * sizeof(double));
	CU_ASSERT_FATAL(x && w && xs && ws && wz);
	/* the full 8-bit ranges, zero points anywhere in them */
	for (int64_t e = 0; e < nx; e++)
		x[e] = (double)kd_pick(s, xu ? 0 : -128, xu ? 255 : 127);
	for (int64_t e = 0; e < nw; e++)
		w[e] = (double)kd_pick(s, wu ? 0 : -128, wu ? 255 : 127);
	xz = (double)kd_pick(s, xu ? 0 : -128, xu ? 255 : 127);
	/* every other case a "symmetric" W (zero point 128 or 0): no sums
	 * channel, so grouped convolutions go to oneDNN too */
	for (int64_t o2 = 0; o2 < cs.m; o2++)
		wz[o2] = i % 2 ? (wu ? 128 : 0) :
			 (double)kd_pick(s, wu ? 0 : -128, wu ? 255 : 127);
	if (!per_m)
		for (int64_t o2 = 1; o2 < cs.m; o2++)
			wz[o2] = wz[0];
	corr = wz[0] != (wu ? 128 : 0);
	for (int64_t o2 = 0; o2 < cs.m; o2++)
		corr |= wz[o2] != (wu ? 128 : 0);
	for (int64_t e = 0; e < nx; e++)
		xs[e] = x[e] - xz;
	for (int64_t e = 0; e < nw; e++)
		ws[e] = w[e] - wz[e / (nw / cs.m)];
	want = tc_naive_conv(&cs, xs, ws, NULL, &ny);

	tm_input(m, "x", xu ? IR_DTYPE_UINT8 : IR_DTYPE_INT8, xd, (size_t)cs.nsp + 2);
	tm_init(m, "w", wu ? IR_DTYPE_UINT8 : IR_DTYPE_INT8, wd, (size_t)cs.nsp + 2, w);
	tm_init(m, "xz", xu ? IR_DTYPE_UINT8 : IR_DTYPE_INT8, TM_DIMS(1), 0, &xz);
	tm_init(m, "wz", wu ? IR_DTYPE_UINT8 : IR_DTYPE_INT8, TM_DIMS(cs.m), per_m ? 1 : 0, wz);
	if (ql) {
		/* QLinearConv: scales spreading the sums over the 8-bit range */
		double wsc[512], xsc = 0.02, big = 1, yzv, bias[512];
		int64_t plane = ny / (cs.n * cs.m);

		for (int64_t e = 0; e < ny; e++)
			big = fabs(want[e]) > big ? fabs(want[e]) : big;
		for (int64_t o2 = 0; o2 < cs.m; o2++) {
			wsc[o2] = 0.001 * (double)kd_pick(s, 1, 9);
			bias[o2] = (double)kd_pick(s, -300, 300);
		}
		ysc = xsc * 0.005 * big / 100;
		yu = (int)kd_pick(s, 0, 1);
		yzv = (double)kd_pick(s, yu ? 0 : -128, yu ? 255 : 127);
		for (int64_t e = 0; e < ny; e++) {
			int64_t o2 = e / plane % cs.m;
			float mult = (float)xsc * (float)wsc[o2] / (float)ysc;
			float v = nearbyintf((float)(want[e] + bias[o2]) * mult) + (float)yzv;

			want[e] = v < (yu ? 0 : -128) ? (yu ? 0 : -128) : v > (yu ? 255 : 127) ?
				  (yu ? 255 : 127) : v;
		}
		tm_init(m, "xs", IR_DTYPE_FLOAT, TM_DIMS(1), 0, &xsc);
		tm_init(m, "ws", IR_DTYPE_FLOAT, TM_DIMS(cs.m), 1, wsc);
		tm_init(m, "ys", IR_DTYPE_FLOAT, TM_DIMS(1), 0, &ysc);
		tm_init(m, "yz", yu ? IR_DTYPE_UINT8 : IR_DTYPE_INT8, TM_DIMS(1), 0, &yzv);
		tm_init(m, "b", IR_DTYPE_INT32, TM_DIMS(cs.m), 1, bias);
		n = tm_node(m, "QLinearConv", NULL,
			    TM_NAMES("x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"), 9,
			    TM_NAMES("y"), 1);
	} else {
		n = tm_node(m, "ConvInteger", NULL, TM_NAMES("x", "w", "xz", "wz"), 4,
			    TM_NAMES("y"), 1);
	}
	ir_node_set_int(n, "group", cs.group);
	ir_node_set_ints(n, "strides", cs.s, (size_t)cs.nsp);
	ir_node_set_ints(n, "dilations", cs.dl, (size_t)cs.nsp);
	ir_node_set_ints(n, "pads", pads, 2 * (size_t)cs.nsp);
	tm_output(m, "y", !ql ? IR_DTYPE_INT32 : yu ? IR_DTYPE_UINT8 : IR_DTYPE_INT8, od,
		  (size_t)cs.nsp + 2);
	tm_verify(m);

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, xu ? IR_DTYPE_UINT8 : IR_DTYPE_INT8, cs.nsp + 2, xd,
				      &in, &d) == 0);
	for (int64_t e = 0; e < nx; e++)
		if (xu)
			((uint8_t *)in->data)[e] = (uint8_t)x[e];
		else
			((int8_t *)in->data)[e] = (int8_t)x[e];
	CU_ASSERT_FATAL(rt_session_new(m, &o, &ss, &d) == 0);
	for (int r = 0; r < 2; r++) {
		before = knn_dnnl_int_runs();
		if (rt_session_run(ss, &in, 1, &out, &d) < 0)
			fprintf(stderr, "\nrun: %s\n", d.msg);
		CU_ASSERT_FATAL(out != NULL && out->numel == ny);
		/* (the exact float32 path a corrected grouped one takes,
		 * k_qlinear.c's conv_fast, may run a float primitive) */
		CU_ASSERT(knn_dnnl_int_runs() == before + (cs.group == 1 || !corr));
		for (int64_t e = 0; e < ny; e++) {
			double got = !ql ? (double)((const int32_t *)out->data)[e] :
				     yu ? (double)((const uint8_t *)out->data)[e] :
				     (double)((const int8_t *)out->data)[e];

			if (got != want[e]) {
				fprintf(stderr, "\n%s case %d (nsp %d c %lld m %lld group "
					"%lld x %s w %s) element %lld: %.0f, want %.0f\n",
					ql ? "QLinearConv" : "ConvInteger", i, cs.nsp,
					(long long)cs.c, (long long)cs.m, (long long)cs.group,
					xu ? "u8" : "s8", wu ? "u8" : "s8", (long long)e, got, want[e]);
				CU_FAIL(ql ? "QLinearConv requantized sums" : "ConvInteger sums");
				break;
			}
		}
		rt_value_unref(out);
		out = NULL;
	}
	rt_session_free(ss);
	rt_value_unref(in);
	ir_model_free(m);
	free(x);
	free(w);
	free(xs);
	free(ws);
	free(wz);
	free(want);
}

static void test_integer(void)
{
	uint64_t s = 7130;

	if (!knn_dnnl_int_ok()) {
		fprintf(stderr, "\nkdnnl: no oneDNN integer convolutions here (no VNNI): "
			"integer cases skipped\n");
		return;
	}
	for (int i = 0; i < KD_CASES; i++)
		kq_one(&s, i, NULL);
}

/* Windows of thousands of taps over the whole 8-bit ranges: sums past
 * 2^24, where oneDNN's integer kernels are no longer exact, so W is
 * split into parts whose sums are added (k_conv_dnnl_int.c, dn_parts):
 * still on oneDNN (counted), still exact; ConvInteger and QLinearConv,
 * W's zero points 0/128 or anywhere (the all-ones channel too), 1-D to
 * 3-D, strides, batch 2. */
static void test_integer_parts(void)
{
	static const struct ccase cases[] = {
		{ 2, 1, 256, 20, 1, { 6, 6 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
		{ 2, 2, 300, 17, 1, { 5, 7 }, { 3, 3 }, { 2, 1 }, { 1, 1 }, { 1, 0, 1, 2 } },
		{ 1, 1, 512, 9, 1, { 11 }, { 5 }, { 1 }, { 2 }, { 2, 2 } },
		{ 3, 1, 96, 12, 1, { 4, 4, 4 }, { 3, 3, 3 }, { 1, 1, 1 }, { 1, 1, 1 },
		  { 1, 1, 1, 1, 1, 1 } },
	};
	uint64_t s = 7131;

	if (!knn_dnnl_int_ok())
		return;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (int i = 0; i < 6; i++)
			kq_one(&s, i, &cases[c]);
}

/* MatMulInteger with a constant 2-D B (K x N): A of rank 2-4 (uint8 or
 * int8, one zero point), B uint8 or int8 with one zero point or one per
 * column, over the whole 8-bit ranges; the int32 sums must equal the
 * exact sums computed here, and oneDNN must have run them.  deep: K of
 * 600 to 3000, whose column sums take oneDNN past 2^24 (B split into
 * parts, k_mm_dnnl.c). */
static void km_one(uint64_t *s, int i, int deep)
{
	int au = (int)kd_pick(s, 0, 1), bu = (int)kd_pick(s, 0, 1), per_n = (int)kd_pick(s, 0, 1);
	int rank = (int)kd_pick(s, 2, 4);
	int64_t kk = deep ? kd_pick(s, 600, 3000) : kd_pick(s, 1, 70), n = kd_pick(s, 1, 40);
	int64_t ad[4], yd[4], na = 1, rows;
	double *a, *b, *bz, az;
	struct ir_model *m = tm_new(13);
	struct rt_value *in, *out = NULL;
	struct rt_opts o = { .threads = 1 + i % 2 };
	struct rt_session *ss = NULL;
	struct ir_diag d;
	int64_t before;

	for (int r = 0; r < rank - 1; r++)
		na *= ad[r] = yd[r] = kd_pick(s, 1, r == rank - 2 ? 9 : 3);
	ad[rank - 1] = kk;
	yd[rank - 1] = n;
	rows = na;
	na *= kk;
	a = malloc((size_t)na * sizeof(double));
	b = malloc((size_t)(kk * n) * sizeof(double));
	bz = malloc((size_t)n * sizeof(double));
	CU_ASSERT_FATAL(a && b && bz);
	/* deep: values near the top and zero points near the bottom, so
	 * that the sums themselves pass 2^24 (not only their bound) */
	for (int64_t e = 0; e < na; e++)
		a[e] = (double)kd_pick(s, deep ? (au ? 200 : 100) : au ? 0 : -128, au ? 255 : 127);
	for (int64_t e = 0; e < kk * n; e++)
		b[e] = (double)kd_pick(s, deep ? (bu ? 200 : 100) : bu ? 0 : -128, bu ? 255 : 127);
	az = (double)kd_pick(s, au ? 0 : -128, deep ? (au ? 20 : -100) : au ? 255 : 127);
	for (int64_t j = 0; j < n; j++)
		bz[j] = i % 3 == 0 ? (bu ? 128 : 0) :
			(double)kd_pick(s, bu ? 0 : -128, deep ? (bu ? 20 : -100) : bu ? 255 : 127);
	if (!per_n)
		for (int64_t j = 1; j < n; j++)
			bz[j] = bz[0];
	tm_input(m, "a", au ? IR_DTYPE_UINT8 : IR_DTYPE_INT8, ad, (size_t)rank);
	tm_init(m, "b", bu ? IR_DTYPE_UINT8 : IR_DTYPE_INT8, TM_DIMS(kk, n), 2, b);
	tm_init(m, "az", au ? IR_DTYPE_UINT8 : IR_DTYPE_INT8, TM_DIMS(1), 0, &az);
	tm_init(m, "bz", bu ? IR_DTYPE_UINT8 : IR_DTYPE_INT8, TM_DIMS(n), per_n ? 1 : 0, bz);
	tm_node(m, "MatMulInteger", NULL, TM_NAMES("a", "b", "az", "bz"), 4, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_INT32, yd, (size_t)rank);
	tm_verify(m);
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, au ? IR_DTYPE_UINT8 : IR_DTYPE_INT8, rank, ad, &in,
				      &d) == 0);
	for (int64_t e = 0; e < na; e++)
		if (au)
			((uint8_t *)in->data)[e] = (uint8_t)a[e];
		else
			((int8_t *)in->data)[e] = (int8_t)a[e];
	CU_ASSERT_FATAL(rt_session_new(m, &o, &ss, &d) == 0);
	for (int r = 0; r < 2; r++) {
		int bad = 0;

		before = knn_dnnl_runs();
		if (rt_session_run(ss, &in, 1, &out, &d) < 0)
			fprintf(stderr, "\nrun: %s\n", d.msg);
		CU_ASSERT_FATAL(out != NULL && out->numel == rows * n);
		CU_ASSERT(knn_dnnl_runs() == before + 1);
		for (int64_t e = 0; e < rows * n && !bad; e++) {
			int64_t row = e / n, j = e % n, want = 0;

			for (int64_t t = 0; t < kk; t++)
				want += ((int64_t)a[row * kk + t] - (int64_t)az) *
					((int64_t)b[t * n + j] - (int64_t)bz[j]);
			if (((const int32_t *)out->data)[e] != want) {
				fprintf(stderr, "\nMatMulInteger case %d (rank %d K %lld N %lld a %s b %s) "
					"element %lld: %d, want %lld\n", i, rank, (long long)kk,
					(long long)n, au ? "u8" : "s8", bu ? "u8" : "s8", (long long)e,
					((const int32_t *)out->data)[e], (long long)want);
				bad = 1;
			}
		}
		CU_ASSERT(!bad);
		rt_value_unref(out);
		out = NULL;
	}
	rt_session_free(ss);
	rt_value_unref(in);
	ir_model_free(m);
	free(a);
	free(b);
	free(bz);
}

static void test_matmul_integer(void)
{
	uint64_t s = 4242;

	if (!knn_dnnl_int_ok()) {
		fprintf(stderr, "\nkdnnl: no oneDNN integer products here (no VNNI): skipped\n");
		return;
	}
	for (int i = 0; i < KD_CASES; i++)
		km_one(&s, i, 0);
	for (int i = 0; i < 8; i++)
		km_one(&s, i, 1);
}

/* Integer primitives on AMX (k_dnnl.c): with OPMIG_DNNL_AMX=all the
 * random ConvInteger, QLinearConv and MatMulInteger cases take oneDNN's
 * AMX kernels wherever it has them, held to the naive sums as on VNNI;
 * some must have been made so.  By default only a product of 256 terms
 * a sum and 20M products goes there: a 1x1 convolution of 16 channels
 * at 8x8 does not, one of 256 -> 256 channels at 18x18 (21M) does, and
 * is exact. */
static void test_integer_amx(void)
{
	static const struct ccase small = { 2, 1, 16, 16, 1, { 8, 8 }, { 1, 1 }, { 1, 1 },
					    { 1, 1 }, { 0, 0, 0, 0 } };
	static const struct ccase big = { 2, 1, 256, 256, 1, { 18, 18 }, { 1, 1 }, { 1, 1 },
					  { 1, 1 }, { 0, 0, 0, 0 } };
	uint64_t s = 7132;
	int64_t before;

	if (!knn_dnnl_int_ok() || !knn_dnnl_amx_ok()) {
		fprintf(stderr, "\nkdnnl: no AMX here (or OPMIG_DNNL_AMX=0): AMX cases skipped\n");
		return;
	}
	before = knn_dnnl_amx_made();
	setenv("OPMIG_DNNL_AMX", "all", 1);
	for (int i = 0; i < KD_CASES; i++) {
		kq_one(&s, i, NULL);
		km_one(&s, i, i % 4 == 3);
	}
	unsetenv("OPMIG_DNNL_AMX");
	CU_ASSERT(knn_dnnl_amx_made() > before);
	before = knn_dnnl_amx_made();
	kq_one(&s, 0, &small);
	CU_ASSERT(knn_dnnl_amx_made() == before);
	kq_one(&s, 0, &big);
	CU_ASSERT(knn_dnnl_amx_made() > before);
}

static const struct unit_test tests[] = {
	{ "random", test_random },
	{ "policy", test_policy },
	{ "integer", test_integer },
	{ "integer_parts", test_integer_parts },
	{ "matmul_integer", test_matmul_integer },
	{ "integer_amx", test_integer_amx },
	{ NULL, NULL },
};

int suite_kdnnl_register(void)
{
	return unit_add_suite("kdnnl", tests);
}
