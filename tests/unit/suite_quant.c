/* suite_quant.c: post-training quantization (rewriters/quant_*.c) against
 * hand-derived values: scales and zero points of ranges (asymmetric,
 * symmetric, all zeros, positive only), the streaming histogram (bins,
 * doubling), percentile ranges of known distributions, the KL threshold
 * on known histograms (an unclipped one; a bell with outliers against a
 * float64 transcription of TensorRT's search written here), and the QDQ
 * form of a small model calibrated on known samples: observed ranges,
 * per-channel weight scales, int32 biases at input scale x weight scale,
 * one scale shared by a Concat's inputs and output and by MaxPool's input
 * and output, a Relu folded into its producer's QuantizeLinear only when
 * the zero point is the bottom of the range; weight-only blocks (codes,
 * packing, padding, scales and zero points of onnxruntime's formulas). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rewriters/quantize.h"
#include "rewriters/rw_int.h"
#include "tests/unit/suites.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tmodel.h"
#include "runtime/runtime.h"
#include "runtime/tensor_io.h"

static void test_params(void)
{
	float s;
	int32_t z;

	/* [-1, 3] in uint8: 4/255, zero point round(0 + 1 / (4/255)) = 64 */
	qz_params(-1, 3, IR_DTYPE_UINT8, 0, &s, &z);
	CU_ASSERT_EQUAL(s, (float)(4.0 / 255));
	CU_ASSERT_EQUAL(z, 64);
	/* [0.5, 2] widens to [0, 2]: 2/255, zero point 0 */
	qz_params(0.5, 2, IR_DTYPE_UINT8, 0, &s, &z);
	CU_ASSERT_EQUAL(s, (float)(2.0 / 255));
	CU_ASSERT_EQUAL(z, 0);
	/* int8 asymmetric [-1, 3]: 4/255, zero point -128 + 63.75 -> -64 */
	qz_params(-1, 3, IR_DTYPE_INT8, 0, &s, &z);
	CU_ASSERT_EQUAL(s, (float)(4.0 / 255));
	CU_ASSERT_EQUAL(z, -64);
	/* symmetric int8 [-2, 1]: [-127, 127] steps of 2/127, zero point 0 */
	qz_params(-2, 1, IR_DTYPE_INT8, 1, &s, &z);
	CU_ASSERT_EQUAL(s, (float)(2.0 / 127));
	CU_ASSERT_EQUAL(z, 0);
	/* symmetric uint8 [-2, 1]: [-2, 2] over 255 steps, zero point 128 */
	qz_params(-2, 1, IR_DTYPE_UINT8, 1, &s, &z);
	CU_ASSERT_EQUAL(s, (float)(4.0 / 255));
	CU_ASSERT_EQUAL(z, 128);
	/* all zeros: scale 1 */
	qz_params(0, 0, IR_DTYPE_UINT8, 0, &s, &z);
	CU_ASSERT_EQUAL(s, 1.0f);
	CU_ASSERT_EQUAL(z, 0);
	/* uint16 [-1, 1]: 2/65535, zero point round(65535 / 2) = 32768 */
	qz_params(-1, 1, IR_DTYPE_UINT16, 0, &s, &z);
	CU_ASSERT_EQUAL(s, (float)(2.0 / 65535));
	CU_ASSERT_EQUAL(z, 32768);
}

static void test_hist(void)
{
	struct qz_hist *h = calloc(1, sizeof(*h));
	const float a[2] = { 0.75f, -0.25f }, b[1] = { 3.0f };
	double total = 0;

	CU_ASSERT_FATAL(h != NULL);
	qz_hist_add(h, a, 2);
	/* width 0.75/2048: 0.75 lands on the top edge (the last bin), 0.25
	 * in bin floor(0.25 / (0.75/2048)) = 682 */
	CU_ASSERT_DOUBLE_EQUAL(h->width, 0.75 / 2048, 1e-15);
	CU_ASSERT_EQUAL(h->pos[2047], 1);
	CU_ASSERT_EQUAL(h->neg[682], 1);
	/* 3.0 doubles the width twice (bins merge in pairs): 2047 -> 511,
	 * 682 -> 170, and 3.0 is the new top edge */
	qz_hist_add(h, b, 1);
	CU_ASSERT_DOUBLE_EQUAL(h->width, 3.0 / 2048, 1e-15);
	CU_ASSERT_EQUAL(h->pos[511], 1);
	CU_ASSERT_EQUAL(h->neg[170], 1);
	CU_ASSERT_EQUAL(h->pos[2047], 1);
	for (size_t i = 0; i < QZ_HIST_BINS; i++)
		total += h->pos[i] + h->neg[i];
	CU_ASSERT_EQUAL(total, 3);
	free(h);
}

static void test_percentile(void)
{
	struct qz_hist *h = calloc(1, sizeof(*h));
	float *x = malloc(10000 * sizeof(*x));
	double lo, hi, w;

	CU_ASSERT_FATAL(h && x);
	/* 9999 values evenly in [0, 1) and one outlier 100: width 100/2048,
	 * the even values fill bins 0..20 (1 / width = 20.48); 99.99 % of
	 * 10000 is 9999 values, all below the top edge of bin 20 */
	for (int i = 0; i < 9999; i++)
		x[i] = (float)i / 9999;
	x[9999] = 100;
	qz_hist_add(h, x, 10000);
	w = 100.0 / 2048;
	qz_hist_percentile(h, 99.99, 1, 0, 100, &lo, &hi);
	CU_ASSERT_DOUBLE_EQUAL(hi, 21 * w, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lo, 0, 0);
	/* asymmetric, 99.98: 1 value cut from each tail; the outliers -50 and
	 * 100 go, what is left of the negative side is nothing (lo 0) */
	memset(h, 0, sizeof(*h));
	for (int i = 0; i < 9998; i++)
		x[i] = (float)i / 9998;
	x[9998] = -50;
	x[9999] = 100;
	qz_hist_add(h, x, 10000);
	qz_hist_percentile(h, 99.98, 0, -50, 100, &lo, &hi);
	CU_ASSERT_DOUBLE_EQUAL(hi, 21 * w, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lo, 0, 0);
	/* 100 keeps everything: the observed range */
	qz_hist_percentile(h, 100, 0, -50, 100, &lo, &hi);
	CU_ASSERT_DOUBLE_EQUAL(lo, -50, 0);
	CU_ASSERT_DOUBLE_EQUAL(hi, 100, 0);
	free(h);
	free(x);
}

/* TensorRT's threshold search as MXNet's calibration wrote it out, in
 * float64: for i kept bins, p = the first i bins with everything beyond
 * added to the last, q = those i bins merged into `levels` levels (the
 * rest joining the last level) and spread back over the bins where p is
 * not empty; both smoothed (eps 1e-4 moved into the empty bins), KL of
 * the normalized pair; the first i of least KL. */
static size_t ref_kl_bins(const double *h, size_t n, size_t levels)
{
	size_t best = 0;
	double best_kl = INFINITY;
	double *p = malloc(n * sizeof(*p)), *q = malloc(n * sizeof(*q));

	CU_ASSERT_FATAL(p && q);
	for (size_t i = levels; i <= n; i++) {
		size_t per = i / levels;
		double sp = 0, sq = 0, kl = 0;

		for (size_t k = 0; k < i; k++)
			p[k] = h[k];
		for (size_t k = i; k < n; k++)
			p[i - 1] += h[k];
		for (size_t j = 0; j < levels; j++) {
			size_t a = j * per, b = j + 1 == levels ? i : a + per, nz = 0;
			double s = 0;

			for (size_t k = a; k < b; k++) {
				s += h[k];
				nz += p[k] > 0;
			}
			for (size_t k = a; k < b; k++)
				q[k] = p[k] > 0 ? s / (double)nz : 0;
		}
		for (int side = 0; side < 2; side++) {
			double *v = side ? q : p;
			size_t z = 0;

			for (size_t k = 0; k < i; k++)
				z += v[k] == 0;
			for (size_t k = 0; k < i; k++)
				v[k] = v[k] == 0 ? 1e-4 : v[k] - 1e-4 * (double)z / (double)(i - z);
		}
		for (size_t k = 0; k < i; k++) {
			sp += p[k];
			sq += q[k];
		}
		for (size_t k = 0; k < i; k++)
			kl += p[k] / sp * log((p[k] / sp) / (q[k] / sq));
		if (kl < best_kl) {
			best_kl = kl;
			best = i;
		}
	}
	free(p);
	free(q);
	return best;
}

static void test_entropy(void)
{
	double *h = calloc(QZ_HIST_BINS, sizeof(*h)), w = 0.01, t;
	size_t want;

	CU_ASSERT_FATAL(h != NULL);
	/* everything within the first 128 bins: nothing to clip, 128 levels
	 * hold it exactly: the top of the data */
	for (size_t i = 0; i < 100; i++)
		h[i] = 1000;
	CU_ASSERT_DOUBLE_EQUAL(qz_entropy_threshold(h, QZ_HIST_BINS, w, 128), 100 * w, 1e-12);
	/* a half bell of |x| (sigma 150 bins) with a few far outliers: the
	 * threshold clips the outliers, and is the reference's */
	for (size_t i = 0; i < QZ_HIST_BINS; i++)
		h[i] = floor(1e5 * exp(-(double)(i * i) / (2.0 * 150 * 150)));
	h[1500] += 3;
	h[2047] += 2;
	want = ref_kl_bins(h, QZ_HIST_BINS, 128);
	t = qz_entropy_threshold(h, QZ_HIST_BINS, w, 128);
	CU_ASSERT_DOUBLE_EQUAL(t, (double)want * w, 1e-12);
	CU_ASSERT(t < 1500 * w);
	CU_ASSERT(t > 300 * w);        /* beyond two sigma */
	/* 256 levels (uint8 data never negative) clip less */
	CU_ASSERT(qz_entropy_threshold(h, QZ_HIST_BINS, w, 256) >= t);
	CU_ASSERT_DOUBLE_EQUAL(qz_entropy_threshold(h, QZ_HIST_BINS, w, 256),
			       (double)ref_kl_bins(h, QZ_HIST_BINS, 256) * w, 1e-12);
	/* sparse small counts (where the smoothing weighs): bins 0..599 hold
	 * 0 to 3 values, a tail of single values every 37 bins */
	{
		uint64_t seed = 11;

		for (size_t i = 0; i < QZ_HIST_BINS; i++)
			h[i] = i < 600 ? (double)(tg_next(&seed) % 4) : i % 37 == 0 ? 1 : 0;
		CU_ASSERT_DOUBLE_EQUAL(qz_entropy_threshold(h, QZ_HIST_BINS, w, 128),
				       (double)ref_kl_bins(h, QZ_HIST_BINS, 128) * w, 1e-12);
	}
	free(h);
}

static void test_accuracy_parse(void)
{
	enum qz_metric m;
	double v;
	char why[256];

	CU_ASSERT(qz_accuracy_parse("cosine>=0.995", &m, &v, why, sizeof(why)) == 0);
	CU_ASSERT(m == QZ_COSINE && v == 0.995);
	CU_ASSERT(qz_accuracy_parse("snr>=30", &m, &v, why, sizeof(why)) == 0);
	CU_ASSERT(m == QZ_SNR && v == 30);
	CU_ASSERT(qz_accuracy_parse("max-abs<=0.5", &m, &v, why, sizeof(why)) == 0);
	CU_ASSERT(m == QZ_MAX_ABS && v == 0.5);
	CU_ASSERT(qz_accuracy_parse("top1>=0.9", &m, &v, why, sizeof(why)) == 0);
	CU_ASSERT(m == QZ_TOP1);
	CU_ASSERT(qz_accuracy_parse("max-abs>=0.5", &m, &v, why, sizeof(why)) < 0);
	CU_ASSERT(qz_accuracy_parse("cosine<=0.5", &m, &v, why, sizeof(why)) < 0);
	CU_ASSERT(qz_accuracy_parse("psnr>=3", &m, &v, why, sizeof(why)) < 0);
	CU_ASSERT(qz_accuracy_parse("cosine>=x", &m, &v, why, sizeof(why)) < 0);
}

/* ---- the QDQ form of a small model ------------------------------------- */

#define NX 32   /* 1 x 2 x 4 x 4 */

static const double w1[6] = { 0.5, -1.0, 0.25, 0.2, -0.1, 0.3 };   /* [3, 2, 1, 1] */
static const double b1[3] = { 0.1, -0.2, 0.05 };
static const double w2[4] = { 1.5, -0.5, -0.75, 0.25 };           /* [2, 2, 1, 1] */

/* x -> Conv1 (3 channels) -> Relu -> MaxPool 3x3 (same size) -> p;
 * x -> Conv2 (2 channels) -> c2; concat: y = Concat(p, c2) on channels,
 * else y = p and z = c2. */
static struct ir_model *small_model(int concat)
{
	struct ir_model *m = tm_new(13);
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 4, 4), 4);
	tm_init(m, "w1", IR_DTYPE_FLOAT, TM_DIMS(3, 2, 1, 1), 4, w1);
	tm_init(m, "b1", IR_DTYPE_FLOAT, TM_DIMS(3), 1, b1);
	tm_init(m, "w2", IR_DTYPE_FLOAT, TM_DIMS(2, 2, 1, 1), 4, w2);
	tm_node(m, "Conv", NULL, TM_NAMES("x", "w1", "b1"), 3, TM_NAMES("c1"), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("c1"), 1, TM_NAMES("r1"), 1);
	n = tm_node(m, "MaxPool", NULL, TM_NAMES("r1"), 1, TM_NAMES("p"), 1);
	CU_ASSERT_FATAL(ir_node_set_ints(n, "kernel_shape", TM_DIMS(3, 3), 2) == 0);
	CU_ASSERT_FATAL(ir_node_set_ints(n, "pads", TM_DIMS(1, 1, 1, 1), 4) == 0);
	tm_node(m, "Conv", NULL, TM_NAMES("x", "w2"), 2, TM_NAMES("c2"), 1);
	if (concat) {
		n = tm_node(m, "Concat", NULL, TM_NAMES("p", "c2"), 2, TM_NAMES("y"), 1);
		CU_ASSERT_FATAL(ir_node_set_int(n, "axis", 1) == 0);
		tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(1, 5, 4, 4), 4);
	} else {
		tm_output(m, "p", IR_DTYPE_FLOAT, TM_DIMS(1, 3, 4, 4), 4);
		tm_output(m, "c2", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 4, 4), 4);
	}
	tm_verify(m);
	return m;
}

/* Two calibration samples as .npy files in a new folder: sample k is
 * x[i] = (i - 13) / 8 + k / 4 (min -1.625, max 2.5 over both). */
static void write_samples(char *dir)
{
	struct ir_diag d;

	strcpy(dir, "/tmp/opmig-unit-quant.XXXXXX");
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	for (int k = 0; k < 2; k++) {
		struct rt_value *t;
		char path[256];

		ir_diag_init(&d);
		CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, 4, TM_DIMS(1, 2, 4, 4), &t, &d) == 0);
		for (int i = 0; i < NX; i++)
			((float *)t->data)[i] = (float)((i - 13) / 8.0 + k / 4.0);
		snprintf(path, sizeof(path), "%s/s%d.npy", dir, k);
		CU_ASSERT_FATAL(rt_npy_write(t, path, &d) == 0);
		rt_value_unref(t);
	}
}

static void remove_samples(const char *dir)
{
	char path[256];

	for (int k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/s%d.npy", dir, k);
		unlink(path);
	}
	rmdir(dir);
}

static const struct qz_tensor *tensor(const struct qz_report *r, const char *name)
{
	for (size_t i = 0; i < r->n_tensors; i++)
		if (!strcmp(r->tensors[i].name, name))
			return &r->tensors[i];
	CU_FAIL("tensor not in the report");
	return NULL;
}

/* The float values of initializer name of m. */
static struct rt_value *init_of(struct ir_model *m, const char *name)
{
	struct ir_value *v = ir_graph_find(m->graph, name);
	struct rt_value *t = v ? rw_init_value(v) : NULL;

	CU_ASSERT_FATAL(t != NULL);
	return t;
}

static size_t count_op(const struct ir_model *m, const char *op)
{
	size_t n = 0;

	for (size_t i = 0; i < m->graph->n_nodes; i++)
		n += !strcmp(ir_s(m->graph->nodes[i]->op_type), op);
	return n;
}

/* The scale of the QuantizeLinear that quantizes value name. */
static float q_scale(struct ir_model *m, const char *name)
{
	for (size_t i = 0; i < m->graph->n_nodes; i++) {
		struct ir_node *n = m->graph->nodes[i];

		if (!strcmp(ir_s(n->op_type), "QuantizeLinear") &&
		    !strcmp(ir_s(n->inputs[0]->name), name)) {
			struct rt_value *t = rw_init_value(n->inputs[1]);
			float s = (float)rt_value_get_f64(t, 0);

			rt_value_unref(t);
			return s;
		}
	}
	CU_FAIL("no QuantizeLinear of the value");
	return 0;
}

static void quantize(struct ir_model *m, const char *dir, struct qz_report *r)
{
	struct qz_opts o = { 0 };
	struct ir_diag d;

	o.calibrate = dir;
	o.threads = 1;
	o.no_fallback = 1;
	ir_diag_init(&d);
	if (qz_run(m, "small.onnx", &o, r, &d) < 0)
		fprintf(stderr, "\nquantize: %s\n", d.msg);
	CU_ASSERT_FATAL(r->n_tensors > 0);
	ir_diag_init(&d);
	CU_ASSERT(ir_model_verify(m, &d) == 0);
}

static void test_qdq_form(void)
{
	struct ir_model *m = small_model(1);
	struct qz_report r;
	const struct qz_tensor *x, *p, *c2, *y, *r1;
	struct rt_value *ws, *bs, *bq, *xs;
	char dir[64];

	write_samples(dir);
	quantize(m, dir, &r);
	/* the input's range is the samples' */
	x = tensor(&r, "x");
	CU_ASSERT_DOUBLE_EQUAL(x->min, -13.0 / 8, 1e-7);
	CU_ASSERT_DOUBLE_EQUAL(x->max, 18.0 / 8 + 0.25, 1e-7);
	/* Concat: its inputs and output share one scale, and MaxPool's input
	 * with them; c2 is negative somewhere, so the zero point is not 0
	 * and the Relu stays (a QuantizeLinear would not clip at 0) */
	p = tensor(&r, "p");
	c2 = tensor(&r, "c2");
	y = tensor(&r, "y");
	r1 = tensor(&r, "r1");
	CU_ASSERT(p->scale == c2->scale && c2->scale == y->scale && r1->scale == y->scale);
	CU_ASSERT(p->zero_point == y->zero_point && r1->zero_point == y->zero_point);
	CU_ASSERT(p->group == y->group && c2->group == y->group);
	CU_ASSERT(y->zero_point > 0);
	CU_ASSERT_EQUAL(count_op(m, "Relu"), 1);
	CU_ASSERT_EQUAL(count_op(m, "Concat"), 1);
	/* w1 per output channel: max |w| / 127 */
	ws = init_of(m, "w1_scale");
	CU_ASSERT_EQUAL(ws->numel, 3);
	CU_ASSERT_EQUAL((float)rt_value_get_f64(ws, 0), (float)(1.0 / 127));
	CU_ASSERT_EQUAL((float)rt_value_get_f64(ws, 1), (float)(0.25 / 127));
	CU_ASSERT_EQUAL((float)rt_value_get_f64(ws, 2), (float)(0.3 / 127));
	/* b1 as int32 at x's scale times w1's */
	xs = init_of(m, "x_scale");
	bs = init_of(m, "b1_scale");
	bq = init_of(m, "b1_quantized");
	CU_ASSERT_EQUAL(bq->dtype, IR_DTYPE_INT32);
	for (int c = 0; c < 3; c++) {
		float sb = (float)rt_value_get_f64(xs, 0) * (float)rt_value_get_f64(ws, c);

		CU_ASSERT_EQUAL((float)rt_value_get_f64(bs, c), sb);
		CU_ASSERT_EQUAL(rt_value_get_f64(bq, c), nearbyint(b1[c] / sb));
	}
	rt_value_unref(ws);
	rt_value_unref(xs);
	rt_value_unref(bs);
	rt_value_unref(bq);
	qz_report_release(&r);
	ir_model_free(m);
	/* without the Concat, r1 (and p) start at 0: the Relu goes, the
	 * QuantizeLinear of the Conv's output clips at 0 */
	m = small_model(0);
	quantize(m, dir, &r);
	CU_ASSERT_EQUAL(count_op(m, "Relu"), 0);
	CU_ASSERT_EQUAL(tensor(&r, "r1")->zero_point, 0);
	CU_ASSERT_EQUAL(tensor(&r, "r1")->scale, tensor(&r, "p")->scale);
	CU_ASSERT_EQUAL(q_scale(m, "c1"), (float)tensor(&r, "r1")->scale);
	qz_report_release(&r);
	ir_model_free(m);
	remove_samples(dir);
}

/* Weight-only blocks (qz_nbits_quantize) of w [20, 1], blocks of 16: K
 * padded to 32; block 0 [-1, 2.75, 0.125, -0.375, 0 x 12], block 1
 * [0.5 x 4] and 12 rows of padding. */
static void test_nbits(void)
{
	float w[20] = { -1, 2.75f, 0.125f, -0.375f }, sc[2], work[4];
	uint8_t q[16], zp[2], want[16] = { 0xF0, 0x35, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44,
					   0xFF, 0xFF, 0, 0, 0, 0, 0, 0 };
	uint8_t q8[32];

	for (int i = 16; i < 20; i++)
		w[i] = 0.5f;
	/* 4 bits asymmetric: block 0 scale (2.75 + 1) / 15 = 0.25, zero point
	 * 1 / 0.25 = 4; codes -1 -> 0, 2.75 -> 15, 0.125 -> roundf(4.5) = 5
	 * (halves away from zero), -0.375 -> roundf(2.5) = 3, 0 -> 4; block 1
	 * [0, 0.5]: scale 0.5 / 15, zero point 0, codes 15, padding 0 (its
	 * zero point); low nibble first */
	qz_nbits_quantize(w, 20, 1, 4, 16, 0, 0, q, sc, zp, work);
	CU_ASSERT_EQUAL(memcmp(q, want, 16), 0);
	CU_ASSERT_EQUAL(sc[0], 0.25f);
	CU_ASSERT_EQUAL(sc[1], 0.5f / 15.0f);
	CU_ASSERT_EQUAL(zp[0], 0x04);           /* block 0: 4, block 1: 0 */
	/* symmetric: 2.75 has the larger magnitude, scale -2.75 / 8; codes
	 * 2.75 -> 0, 0 -> 8 (the zero point), -1 -> roundf(10.9) = 11;
	 * block 1: scale -0.5 / 8, 0.5 -> 0; padding 8 */
	qz_nbits_quantize(w, 20, 1, 4, 16, 1, 0, q, sc, NULL, work);
	CU_ASSERT_EQUAL(sc[0], -0.34375f);
	CU_ASSERT_EQUAL(sc[1], -0.0625f);
	CU_ASSERT_EQUAL(q[0], 0x0B);            /* -1 -> 11, 2.75 -> 0 */
	CU_ASSERT_EQUAL(q[4], 0x88);
	CU_ASSERT_EQUAL(q[8], 0x00);
	CU_ASSERT_EQUAL(q[15], 0x88);
	/* a tie of magnitudes goes to the minimum: [-0.5, 0.5] -> scale
	 * 0.5 / 8 */
	w[0] = -0.5f;
	w[1] = 0.5f;
	w[2] = w[3] = 0;
	qz_nbits_quantize(w, 20, 1, 4, 16, 1, 0, q, sc, NULL, work);
	CU_ASSERT_EQUAL(sc[0], 0.0625f);
	/* 8 bits asymmetric, values in 256ths: [-126.5, 128.5] / 256 ->
	 * scale 255 / 256 / 255 = 1 / 256, zero point roundf(126.5) = 127;
	 * codes roundf(256 v + 127): -126.5 -> 0.5 -> 1, 128.5 -> 255.5 ->
	 * 255 (clamped), 0 -> 127, 1.5 -> 128.5 -> 129 (halves rounded to
	 * even would give zero point 126, codes 0, 254, 126, 128); padding 0
	 * of block 1 */
	w[0] = -126.5f / 256;
	w[1] = 128.5f / 256;
	w[3] = 1.5f / 256;
	qz_nbits_quantize(w, 20, 1, 8, 16, 0, 0, q8, sc, zp, work);
	CU_ASSERT_EQUAL(sc[0], 1.0f / 256);
	CU_ASSERT_EQUAL(zp[0], 127);
	CU_ASSERT_EQUAL(q8[0], 1);
	CU_ASSERT_EQUAL(q8[1], 255);
	CU_ASSERT_EQUAL(q8[2], 127);
	CU_ASSERT_EQUAL(q8[3], 129);
	CU_ASSERT_EQUAL(zp[1], 0);
	CU_ASSERT_EQUAL(q8[31], 0);
}

/* Sink of a streamed payload: appended to a buffer. */
struct nb_buf {
	uint8_t *p;
	size_t len, cap;
};

static int nb_sink(const uint8_t *data, size_t len, void *ctx)
{
	struct nb_buf *b = ctx;

	if (b->len + len > b->cap)
		return -1;
	memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

/* One derived tensor against the direct path's bytes: streamed, and read
 * whole (ir_tensor_data) from a fresh copy. */
static int nb_same(struct ir_tensor *t, const uint8_t *want, size_t len)
{
	struct nb_buf b = { malloc(len + 1), 0, len };
	struct ir_tensor *c = ir_tensor_clone(t, NULL);
	const uint8_t *data;
	size_t n;
	struct ir_diag d;
	int ok;

	ir_diag_init(&d);
	ok = b.p && c && ir_tensor_stream(t, nb_sink, &b, &d) == 0 && b.len == len &&
	     !memcmp(b.p, want, len) && ir_tensor_data(c, &data, &n, &d) == 0 && n == len &&
	     !memcmp(data, want, len);
	free(b.p);
	ir_tensor_free(c);
	return ok;
}

/* The derived codes, scales and zero points (qz_nbits_derive) equal
 * qz_nbits_quantize's byte for byte: random weights (a column of zeros,
 * a constant column, K not a multiple of the block), 4 and 8 bits,
 * symmetric or not, float32 and float16 weights, pieces of 1, 2, 3 and all
 * columns, and the scales asked for before the codes. */
static void test_nbits_derived(void)
{
	static const int64_t shapes[][3] = { { 40, 7, 16 }, { 37, 5, 32 }, { 64, 3, 16 },
					     { 100, 9, 32 } };
	uint64_t seed = 12345;

	for (size_t sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++)
	for (int v = 0; v < 16; v++) {
		int64_t k = shapes[sh][0], n = shapes[sh][1], bs = shapes[sh][2];
		int bits = v & 1 ? 8 : 4, sym = (v >> 1) & 1, half = (v >> 2) & 1;
		int64_t cols = (v >> 3) ? (int64_t)(sh % 3) + 1 : 0;
		int64_t kb = (k + bs - 1) / bs, blob = bs * bits / 8, zrow = (kb * bits + 7) / 8;
		int64_t dims[2] = { k, n };
		float *w = malloc((size_t)(k * n) * sizeof(float)), *sc = malloc((size_t)(n * kb) * 4);
		float *work = malloc((size_t)(4 * n) * sizeof(float));
		uint8_t *q = malloc((size_t)(n * kb * blob)), *zp = malloc((size_t)(n * zrow));
		uint16_t *wh = malloc((size_t)(k * n) * 2), *sh16 = malloc((size_t)(n * kb) * 2);
		struct ir_tensor *t, *tq, *ts, *tz;
		struct ir_diag d;

		ir_diag_init(&d);
		for (int64_t i = 0; i < k * n; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			w[i] = (float)((double)(seed >> 11) / 9007199254740992.0 * 4.0 - 2.0);
			if (i % n == 1)
				w[i] = 0;               /* a column of zeros: scale 0 */
			if (i % n == 2)
				w[i] = 0.75f;           /* a constant column */
		}
		if (half) {
			rt_cast_raw(IR_DTYPE_FLOAT, (const uint8_t *)w, IR_DTYPE_FLOAT16,
				    (uint8_t *)wh, (size_t)(k * n), NULL);
			rt_cast_raw(IR_DTYPE_FLOAT16, (const uint8_t *)wh, IR_DTYPE_FLOAT,
				    (uint8_t *)w, (size_t)(k * n), NULL);
		}
		qz_nbits_quantize(w, k, n, bits, bs, sym, half, q, sc, sym ? NULL : zp, work);
		if (half)
			rt_cast_raw(IR_DTYPE_FLOAT, (const uint8_t *)sc, IR_DTYPE_FLOAT16,
				    (uint8_t *)sh16, (size_t)(n * kb), NULL);
		t = half ? ir_tensor_new_raw("w", IR_DTYPE_FLOAT16, dims, 2, wh, (size_t)(k * n) * 2) :
		    ir_tensor_new_raw("w", IR_DTYPE_FLOAT, dims, 2, w, (size_t)(k * n) * 4);
		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		/* codes first (the scales then come from their pass) */
		CU_ASSERT_EQUAL_FATAL(qz_nbits_derive(t, "w", bits, bs, sym, cols, &tq, &ts, &tz, &d), 0);
		CU_ASSERT_EQUAL(tq->dims[0], n);
		CU_ASSERT_EQUAL(tq->dims[1], kb);
		CU_ASSERT_EQUAL(tq->dims[2], blob);
		CU_ASSERT(nb_same(tq, q, (size_t)(n * kb * blob)));
		CU_ASSERT(nb_same(ts, half ? (const uint8_t *)sh16 : (const uint8_t *)sc,
				  (size_t)(n * kb) * (half ? 2 : 4)));
		CU_ASSERT(sym ? tz == NULL : nb_same(tz, zp, (size_t)(n * zrow)));
		ir_tensor_free(tq);
		ir_tensor_free(ts);
		ir_tensor_free(tz);
		/* scales and zero points first: computed on their own */
		CU_ASSERT_EQUAL_FATAL(qz_nbits_derive(t, "w", bits, bs, sym, cols, &tq, &ts, &tz, &d), 0);
		CU_ASSERT(nb_same(ts, half ? (const uint8_t *)sh16 : (const uint8_t *)sc,
				  (size_t)(n * kb) * (half ? 2 : 4)));
		CU_ASSERT(sym || nb_same(tz, zp, (size_t)(n * zrow)));
		CU_ASSERT(nb_same(tq, q, (size_t)(n * kb * blob)));
		ir_tensor_free(tq);
		ir_tensor_free(ts);
		ir_tensor_free(tz);
		ir_tensor_free(t);
		free(w);
		free(sc);
		free(work);
		free(q);
		free(zp);
		free(wh);
		free(sh16);
	}
}

/* The quantizer's codes in matmul-nbits' cast form (qz_nbits_codes_derive:
 * uint8 codes [kb, bs, n], K padded to whole blocks with the zero point's
 * codes, scales and uint8 zero points [kb, 1, n], or [n] for one block)
 * equal qz_nbits_quantize's transposed and widened to a byte, whether the
 * zero points are read before the codes (computed on their own) or after
 * (kept from the codes' pass); 4 and 8 bits, symmetric (no zero points)
 * or not. */
static void test_nbits_cast_form(void)
{
	static const int64_t shapes[][3] = { { 100, 9, 32 }, { 40, 7, 16 }, { 24, 5, 32 } };
	static const char *const names[3] = { "codes", "scales", "zero_points" };
	uint64_t seed = 777;

	for (size_t sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++)
	for (int v = 0; v < 8; v++) {
		int64_t k = shapes[sh][0], n = shapes[sh][1], bs = shapes[sh][2];
		int bits = v & 1 ? 8 : 4, sym = (v >> 1) & 1, zfirst = (v >> 2) & 1;
		int64_t kb = (k + bs - 1) / bs, blob = bs * bits / 8, zrow = (kb * bits + 7) / 8;
		int64_t dims[2] = { k, n }, kp = kb * bs;
		unsigned mask = (1u << bits) - 1, per = 8 / (unsigned)bits;
		float *w = malloc((size_t)(k * n) * sizeof(float)), *sc = malloc((size_t)(n * kb) * 4);
		float *work = malloc((size_t)(4 * n) * sizeof(float));
		float *sct = malloc((size_t)(n * kb) * 4);
		uint8_t *q = malloc((size_t)(n * kb * blob)), *zp = malloc((size_t)(n * zrow));
		uint8_t *ct = malloc((size_t)(kp * n)), *zt = malloc((size_t)(kb * n));
		struct qz_nbits_shape f = { IR_DTYPE_UINT8, sym ? IR_DTYPE_FLOAT : 0, kb > 1,
					    kb > 1 ? 3 : 1 };
		struct ir_tensor *t, *tq, *ts, *tz, *c, *cs, *cz;
		struct ir_diag d;

		ir_diag_init(&d);
		for (int64_t i = 0; i < k * n; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			w[i] = (float)((double)(seed >> 11) / 9007199254740992.0 * 4.0 - 2.0);
		}
		qz_nbits_quantize(w, k, n, bits, bs, sym, 0, q, sc, sym ? NULL : zp, work);
		for (int64_t r = 0; r < n; r++)
			for (int64_t b = 0; b < kb; b++) {
				unsigned z = sym ? 1u << (bits - 1) :
					     (unsigned)(zp[r * zrow + b / per] >>
							((unsigned)(b % per) * (unsigned)bits)) & mask;

				sct[b * n + r] = sc[r * kb + b];
				zt[b * n + r] = (uint8_t)z;
				for (int64_t j = 0; j < bs; j++)
					ct[(b * bs + j) * n + r] = (uint8_t)((q[(r * kb + b) * blob +
									  j / per] >>
									((unsigned)(j % per) *
									 (unsigned)bits)) & mask);
			}
		t = ir_tensor_new_raw("w", IR_DTYPE_FLOAT, dims, 2, w, (size_t)(k * n) * 4);
		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		CU_ASSERT_EQUAL_FATAL(qz_nbits_derive(t, "w", bits, bs, sym, 0, &tq, &ts, &tz, &d), 0);
		CU_ASSERT_EQUAL_FATAL(qz_nbits_codes_derive(tq, ts, tz, k, n, bits, bs, &f, names, &c,
							    &cs, &cz, &d), 1);
		CU_ASSERT_EQUAL(c->n_dims, kb > 1 ? 3 : 2);
		CU_ASSERT_EQUAL(c->dims[0], kb > 1 ? kb : k);
		CU_ASSERT(sym ? cz == NULL : cz != NULL && cz->dtype == IR_DTYPE_UINT8 &&
		     cz->n_dims == (kb > 1 ? 3 : 1));
		if (zfirst && cz)
			CU_ASSERT(nb_same(cz, zt, (size_t)(kb * n)));
		/* every padded row the last block's zero point (ct holds what
		 * qz_nbits_quantize pads with) */
		for (int64_t i = k; i < kp; i++)
			for (int64_t r = 0; r < n; r++)
				CU_ASSERT_EQUAL(ct[i * n + r], zt[(kb - 1) * n + r]);
		CU_ASSERT(nb_same(c, ct, (size_t)((kb > 1 ? kp : k) * n)));
		CU_ASSERT(nb_same(cs, (const uint8_t *)sct, (size_t)(kb * n) * 4));
		if (!zfirst && cz)
			CU_ASSERT(nb_same(cz, zt, (size_t)(kb * n)));
		ir_tensor_free(c);
		ir_tensor_free(cs);
		ir_tensor_free(cz);
		ir_tensor_free(tq);
		ir_tensor_free(ts);
		ir_tensor_free(tz);
		ir_tensor_free(t);
		free(w);
		free(sc);
		free(sct);
		free(work);
		free(q);
		free(zp);
		free(ct);
		free(zt);
	}
}

static const struct unit_test tests[] = {
	{ "quant_params", test_params },
	{ "quant_hist", test_hist },
	{ "quant_percentile", test_percentile },
	{ "quant_entropy", test_entropy },
	{ "quant_accuracy_parse", test_accuracy_parse },
	{ "quant_qdq_form", test_qdq_form },
	{ "quant_nbits", test_nbits },
	{ "quant_nbits_derived", test_nbits_derived },
	{ "quant_nbits_cast_form", test_nbits_cast_form },
	{ NULL, NULL },
};

int suite_quant_register(void)
{
	return unit_add_suite("quant", tests);
}
