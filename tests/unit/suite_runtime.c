/* suite_runtime.c: the interpreter core, against hand-derived values: the
 * merged kernel table (sorted, unique, version ranges disjoint and real),
 * float16/bfloat16/float8 conversions, the broadcasting loop, .npy parsing,
 * comparison metrics, random inputs, and a run node by node (struct
 * rt_run) against a whole one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "validators/compare.h"
#include "runtime/inputs.h"
#include "runtime/exec_int.h"   /* rt_pool_* */
#include "runtime/rt_int.h"
#include "runtime/tensor_io.h"
#include "rewriters/migrate.h"
#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"

static void test_kernel_table(void)
{
	size_t n = rt_kernel_count();

	CU_ASSERT(n > 0);
	for (size_t i = 0; i < n; i++) {
		const struct rt_kernel *k = rt_kernel_at(i);
		const struct ir_op_schema *first;
		size_t nv = ir_registry_versions(k->domain, k->op, &first);
		int real = 0;

		/* the op exists and the range starts at a real since_version */
		for (size_t v = 0; v < nv; v++)
			real |= first[v].since_version == k->since_min;
		if (!real)
			fprintf(stderr, "\nkernel %s %s since %d: no such registry version\n",
				k->domain, k->op, k->since_min);
		CU_ASSERT(real);
		CU_ASSERT(k->since_min <= k->since_max);
		if (i) {
			const struct rt_kernel *p = rt_kernel_at(i - 1);
			int c = strcmp(p->domain, k->domain);

			if (!c)
				c = strcmp(p->op, k->op);
			CU_ASSERT(c <= 0);
			if (!c && p->since_max >= k->since_min)
				fprintf(stderr, "\nkernels of %s %s overlap at %d\n",
					k->domain, k->op, k->since_min);
			CU_ASSERT(c < 0 || p->since_max < k->since_min);
		}
	}
	CU_ASSERT(rt_kernel_find("", "Identity", 1) != NULL);
	CU_ASSERT(rt_kernel_find("ai.onnx", "Identity", 21) != NULL);
	CU_ASSERT(rt_kernel_find("ai.onnx", "NoSuchOp", 1) == NULL);
}

static void test_half_bf16(void)
{
	/* IEEE half bit patterns, derived by hand */
	CU_ASSERT_EQUAL(rt_float_to_half(1.0f), 0x3c00);
	CU_ASSERT_EQUAL(rt_float_to_half(-2.0f), 0xc000);
	CU_ASSERT_EQUAL(rt_float_to_half(65504.0f), 0x7bff);
	CU_ASSERT_EQUAL(rt_float_to_half(65520.0f), 0x7c00);    /* rounds to inf */
	CU_ASSERT_EQUAL(rt_float_to_half(5.9604645e-8f), 0x0001); /* smallest subnormal */
	CU_ASSERT_EQUAL(rt_float_to_half(1.0f + 1.0f / 2048), 0x3c00); /* tie to even */
	CU_ASSERT_EQUAL(rt_float_to_half(1.0f + 3.0f / 2048), 0x3c02);
	CU_ASSERT(isnan(rt_half_to_float(0x7e00)));
	CU_ASSERT_EQUAL(rt_half_to_float(0x3555), 0.33325195f);
	CU_ASSERT_EQUAL(rt_half_to_float(0x0001), 5.9604645e-8f);
	CU_ASSERT_EQUAL(rt_float_to_bf16(1.0f), 0x3f80);
	CU_ASSERT_EQUAL(rt_float_to_bf16(1.00390625f), 0x3f80);  /* tie to even */
	CU_ASSERT_EQUAL(rt_float_to_bf16(1.01171875f), 0x3f82);  /* tie up to even */
	CU_ASSERT_EQUAL(rt_bf16_to_float(0xc040), -3.0f);
}

/* The array conversions (F16C where the processor has it) give what the
 * scalar ones give: every half pattern widened (NaNs as NaNs), and floats
 * around every rounding boundary (ties, subnormals, overflow, NaN)
 * narrowed; lengths that leave a scalar tail. */
static void test_half_arrays(void)
{
	enum { N = 65536 + 7 };
	uint16_t *h = malloc(N * sizeof(*h)), *h2 = malloc(N * sizeof(*h2));
	float *f = malloc(N * sizeof(*f));
	int bad = 0;

	CU_ASSERT_FATAL(h && h2 && f);
	for (int i = 0; i < N; i++)
		h[i] = (uint16_t)i;
	rt_half_to_float_n(h, f, N);
	for (int i = 0; i < N; i++) {
		float want = rt_half_to_float(h[i]);

		/* a signalling NaN comes out quiet from F16C: NaN either way */
		bad += isnan(want) ? !isnan(f[i]) : memcmp(&want, &f[i], sizeof(want)) != 0;
	}
	CU_ASSERT_EQUAL(bad, 0);
	/* each half value, then halfway to the next one (a tie), then a hair
	 * above the tie: both sides of every rounding boundary */
	for (int i = 0; i < N; i++) {
		uint32_t b;
		float x = rt_half_to_float((uint16_t)(i / 3));

		memcpy(&b, &x, 4);
		if (i % 3 && (b & 0x7f800000u) != 0x7f800000u)
			b += (i % 3 == 1 ? 0x1000u : 0x1001u);
		memcpy(&f[i], &b, 4);
	}
	rt_float_to_half_n(f, h2, N);
	bad = 0;
	for (int i = 0; i < N; i++)
		bad += h2[i] != rt_float_to_half(f[i]);
	CU_ASSERT_EQUAL(bad, 0);
	free(h);
	free(h2);
	free(f);
}

/* Large freed blocks serve the next tensors that fit them (bigblk.c): the
 * same block again for the same size, not for one twice as small or one
 * larger; small blocks are plain malloc. */
static void test_big_blocks(void)
{
	size_t mb = (size_t)1 << 20;
	void *a = rt_big_alloc(40 * mb), *b, *c;

	CU_ASSERT_FATAL(a != NULL);
	rt_big_free(a);
	b = rt_big_alloc(40 * mb);
	CU_ASSERT(b == a);
	rt_big_free(b);
	c = rt_big_alloc(41 * mb);     /* larger than the kept block */
	CU_ASSERT(c != a);
	rt_big_free(c);
	c = rt_big_alloc(33 * mb);     /* fits within half: the kept one */
	CU_ASSERT(c == a);
	rt_big_free(c);
	b = rt_big_alloc(40 * mb);     /* takes it back */
	CU_ASSERT(b == a);
	a = rt_big_alloc(100 * mb);
	CU_ASSERT_FATAL(a != NULL);
	rt_big_free(a);
	c = rt_big_alloc(45 * mb);     /* under half of the kept 100 MiB */
	CU_ASSERT(c != a && c != NULL);
	free(c);
	c = rt_big_alloc(8 * mb);      /* small: plain malloc */
	CU_ASSERT(c != a && c != NULL);
	free(c);
	rt_big_free(b);
	rt_big_free(NULL);
}

static void test_float8(void)
{
	/* E4M3FN: bias 7, max 448 = 0x7e, NaN 0x7f, no inf */
	CU_ASSERT_EQUAL(rt_float_to_f8(IR_DTYPE_FLOAT8E4M3FN, 1.0f, 1), 0x38);
	CU_ASSERT_EQUAL(rt_float_to_f8(IR_DTYPE_FLOAT8E4M3FN, 448.0f, 1), 0x7e);
	CU_ASSERT_EQUAL(rt_float_to_f8(IR_DTYPE_FLOAT8E4M3FN, 1e6f, 1), 0x7e);
	CU_ASSERT_EQUAL(rt_float_to_f8(IR_DTYPE_FLOAT8E4M3FN, 1e6f, 0), 0x7f);
	CU_ASSERT_EQUAL(rt_float_to_f8(IR_DTYPE_FLOAT8E4M3FN, -0.5f, 1), 0xb0);
	CU_ASSERT_EQUAL(rt_f8_to_float(IR_DTYPE_FLOAT8E4M3FN, 0x01), 0.001953125f);
	CU_ASSERT(isnan(rt_f8_to_float(IR_DTYPE_FLOAT8E4M3FN, 0xff)));
	/* E5M2: IEEE-like, 1.0 = 0x3c, max 57344 = 0x7b, inf 0x7c */
	CU_ASSERT_EQUAL(rt_float_to_f8(IR_DTYPE_FLOAT8E5M2, 1.0f, 1), 0x3c);
	CU_ASSERT_EQUAL(rt_float_to_f8(IR_DTYPE_FLOAT8E5M2, 57344.0f, 1), 0x7b);
	CU_ASSERT_EQUAL(rt_float_to_f8(IR_DTYPE_FLOAT8E5M2, INFINITY, 0), 0x7c);
	CU_ASSERT_EQUAL(rt_f8_to_float(IR_DTYPE_FLOAT8E5M2, 0xfc), -INFINITY);
	/* FNUZ: 0x80 is NaN, no negative zero; E4M3FNUZ bias 8, max 240 */
	CU_ASSERT(isnan(rt_f8_to_float(IR_DTYPE_FLOAT8E4M3FNUZ, 0x80)));
	CU_ASSERT_EQUAL(rt_float_to_f8(IR_DTYPE_FLOAT8E4M3FNUZ, -0.0f, 1), 0x00);
	CU_ASSERT_EQUAL(rt_float_to_f8(IR_DTYPE_FLOAT8E4M3FNUZ, 240.0f, 1), 0x7f);
	CU_ASSERT_EQUAL(rt_float_to_f8(IR_DTYPE_FLOAT8E5M2FNUZ, 1.0f, 1), 0x40);
	/* float4e2m1: 0, 0.5, 1, 1.5, 2, 3, 4, 6 */
	CU_ASSERT_EQUAL(rt_f8_to_float(IR_DTYPE_FLOAT4E2M1, 0x7), 6.0f);
	CU_ASSERT_EQUAL(rt_f8_to_float(IR_DTYPE_FLOAT4E2M1, 0xb), -1.5f);
	CU_ASSERT_EQUAL(rt_float_to_f8(IR_DTYPE_FLOAT4E2M1, 2.6f, 1), 0x5);
	CU_ASSERT_EQUAL(rt_float_to_f8(IR_DTYPE_FLOAT4E2M1, 100.0f, 1), 0x7);
}

/* out = 100 * a + b with a [2,1,3] and b [4,1] broadcast to [2,4,3]. */
struct bsum {
	const int *a, *b;
	int *out;
};

static void bsum_run(void *ctx, const int64_t *off, const int64_t *step, int64_t len)
{
	struct bsum *s = ctx;

	for (int64_t i = 0; i < len; i++)
		s->out[off[2] + i] = 100 * s->a[off[0] + i * step[0]] + s->b[off[1] + i * step[1]];
}

static void test_bcast(void)
{
	static const int a[6] = { 1, 2, 3, 4, 5, 6 }, b[4] = { 10, 20, 30, 40 };
	struct rt_value ta = { .kind = RT_TENSOR, .rank = 3, .dims = { 2, 1, 3 } };
	struct rt_value tb = { .kind = RT_TENSOR, .rank = 2, .dims = { 4, 1 } };
	struct rt_value *ts[2] = { &ta, &tb };
	int out[24], rank;
	int64_t dims[RT_MAX_RANK];
	struct rt_kctx k = { 0 };
	struct bsum s = { a, b, out };
	struct ir_diag d;

	ir_diag_init(&d);
	k.d = &d;
	CU_ASSERT_EQUAL_FATAL(rt_broadcast_shape(&k, ts, 2, &rank, dims), 0);
	CU_ASSERT_EQUAL(rank, 3);
	CU_ASSERT(dims[0] == 2 && dims[1] == 4 && dims[2] == 3);
	rt_bcast_run(&k, ts, 2, rank, dims, bsum_run, &s);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++)
			for (int c = 0; c < 3; c++)
				CU_ASSERT_EQUAL(out[(i * 4 + j) * 3 + c],
						100 * a[i * 3 + c] + b[j]);
}

static void test_npy(void)
{
	/* a hand-written v1.0 file: big-endian int16, Fortran order, 2x3 */
	static const char head[] =
		"{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }";
	uint8_t buf[256];
	size_t hl = sizeof(head) - 1, pad = 0;
	struct rt_value *v = NULL;
	struct ir_diag d;
	int16_t col[6] = { 1, 4, 2, 5, 3, 6 };   /* column-major of [[1,2,3],[4,5,6]] */

	while ((10 + hl + pad + 1) % 16)
		pad++;
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (uint8_t)(hl + pad + 1);
	buf[9] = 0;
	memcpy(buf + 10, head, hl);
	memset(buf + 10 + hl, ' ', pad);
	buf[10 + hl + pad] = '\n';
	for (int i = 0; i < 6; i++) {
		buf[11 + hl + pad + 2 * i] = (uint8_t)((uint16_t)col[i] >> 8);
		buf[12 + hl + pad + 2 * i] = (uint8_t)col[i];
	}
	ir_diag_init(&d);
	CU_ASSERT_EQUAL_FATAL(rt_npy_parse(NULL, buf, 11 + hl + pad + 12, &v, &d), 0);
	CU_ASSERT_EQUAL(v->dtype, IR_DTYPE_INT16);
	CU_ASSERT(v->rank == 2 && v->dims[0] == 2 && v->dims[1] == 3);
	for (int i = 0; i < 6; i++)
		CU_ASSERT_EQUAL(((int16_t *)v->data)[i], i + 1);
	rt_value_unref(v);
	/* one byte short: a clear truncation error */
	ir_diag_init(&d);
	CU_ASSERT(rt_npy_parse(NULL, buf, 11 + hl + pad + 11, &v, &d) < 0);
	CU_ASSERT(strstr(d.msg, "truncated") != NULL);
	ir_diag_init(&d);
	CU_ASSERT(rt_npy_parse(NULL, (const uint8_t *)"NUMPY", 5, &v, &d) < 0);
}

static struct rt_value *floats(const float *x, int64_t n)
{
	struct rt_value *v;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, 1, &n, &v, &d) == 0);
	memcpy(v->data, x, (size_t)n * sizeof(float));
	return v;
}

static void test_compare(void)
{
	static const float g[3] = { 1, 2, 3 }, w[3] = { 1, 2, 4 };
	static const float gn[2] = { NAN, 1 }, wn[2] = { NAN, 1 };
	struct rt_value *a = floats(g, 3), *b = floats(w, 3);
	struct rt_cmp_opts o = { 1e-3, 1e-7 };
	struct rt_metrics m;

	rt_compare(a, b, &o, &m);
	CU_ASSERT(!m.ok);
	CU_ASSERT_EQUAL(m.n, 3);
	CU_ASSERT_EQUAL(m.n_bad, 1);
	CU_ASSERT_EQUAL(m.first_bad, 2);
	CU_ASSERT_EQUAL(m.worst, 2);
	CU_ASSERT_DOUBLE_EQUAL(m.max_abs, 1.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(m.max_rel, 0.25, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(m.mean_abs, 1.0 / 3, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(m.rmse, sqrt(1.0 / 3), 1e-12);
	/* cos = (1+4+12) / (sqrt(14) sqrt(21)) */
	CU_ASSERT_DOUBLE_EQUAL(m.cosine, 17 / (sqrt(14) * sqrt(21)), 1e-12);
	/* snr = 10 log10(21 / 1) */
	CU_ASSERT_DOUBLE_EQUAL(m.snr_db, 10 * log10(21.0), 1e-9);
	rt_compare(a, a, &o, &m);
	CU_ASSERT(m.ok && m.max_abs == 0 && m.cosine == 1 && isinf(m.snr_db));
	rt_value_unref(a);
	rt_value_unref(b);
	a = floats(gn, 2);
	b = floats(wn, 2);
	rt_compare(a, b, &o, &m);
	CU_ASSERT(m.ok);          /* NaN equals NaN */
	CU_ASSERT_EQUAL(m.nan_got, 1);
	rt_value_unref(a);
	a = floats(w, 2);
	rt_compare(a, b, &o, &m);
	CU_ASSERT(!m.ok && m.first_bad == 0);
	rt_value_unref(a);
	rt_value_unref(b);
}

/* Two positions over a vocabulary of 4: the first equal, the second's
 * top-1 token moved from 0 to 3. */
static void test_logits(void)
{
	static const float w[8] = { 1, 2, 3, 4, 4, 3, 2, 1 };
	static const float g[8] = { 1, 2, 3, 4, 3.9f, 3, 2, 4.1f };
	struct rt_value *a = floats(g, 8), *b = floats(w, 8);
	struct rt_cmp_opts o = { 1e-3, 1e-7 };
	double cs = ((double)3.9f * 4 + 9 + 4 + (double)4.1f) /
		    sqrt(((double)3.9f * 3.9f + 9 + 4 + (double)4.1f * 4.1f) * 30);
	struct val_output out;
	struct val_report v;
	struct rt_cmp_acc acc;
	int64_t dims[2] = { 2, 4 };

	memcpy(a->dims, dims, sizeof(dims));
	memcpy(b->dims, dims, sizeof(dims));
	a->rank = b->rank = 2;
	for (int kv = 0; kv < 2; kv++) {
		struct rt_metrics *m = &acc.m;

		rt_cmp_begin(&acc);
		rt_logits_begin(m, kv);
		rt_cmp_add(&acc, a, b, &o);
		rt_logits_add(m, a, b);
		rt_cmp_end(&acc, m);
		rt_logits_judge(m, 0.5);
		CU_ASSERT(!m->lg.tol_ok);
		CU_ASSERT_EQUAL(m->lg.positions, 2);
		CU_ASSERT_EQUAL(m->lg.top1_agree, 1);
		CU_ASSERT_EQUAL(m->lg.first_top1_bad, 1);
		CU_ASSERT_EQUAL(m->lg.worst_position, 1);
		CU_ASSERT_DOUBLE_EQUAL(m->lg.min_cosine, cs, 1e-12);
		/* all four tokens are among both top-5s: 4/5 per position */
		CU_ASSERT_DOUBLE_EQUAL(m->lg.top5_overlap, 0.8, 1e-12);
		/* logits need the top-1 token; a key/value cache only the cosine */
		CU_ASSERT_EQUAL(m->ok, kv);
		if (!kv)
			CU_ASSERT(strstr(m->why, "top-1 token differs at 1 of 2") != NULL);
		rt_logits_judge(m, cs + 1e-9);
		CU_ASSERT(!m->ok);
	}
	/* an int8 migration's whole-tensor criterion keeps that verdict */
	acc.m.ok = 0;
	acc.m.lg.kv = 0;
	acc.m.cosine = 0.9999;
	out.m = acc.m;
	memset(&v, 0, sizeof(v));
	v.n_outputs = 1;
	v.outputs = &out;
	CU_ASSERT_EQUAL(mg_quantize_judge(&v, NULL), 0);
	CU_ASSERT(!out.m.ok && !v.equivalent);
	out.m.lg.on = 0;
	CU_ASSERT_EQUAL(mg_quantize_judge(&v, NULL), 1);
	rt_value_unref(a);
	rt_value_unref(b);
}

static void test_random(void)
{
	uint64_t s1 = 42, s2 = 42, s3 = 43;
	int same = 1, differ = 0;

	for (int i = 0; i < 100; i++) {
		uint64_t a = rt_rand_next(&s1), b = rt_rand_next(&s2), c = rt_rand_next(&s3);

		same &= a == b;
		differ |= a != c;
	}
	CU_ASSERT(same && differ);
	/* splitmix64 from state 0: first output 0xe220a8397b1dcdaf (published) */
	s1 = 0;
	CU_ASSERT_EQUAL(rt_rand_next(&s1), 0xe220a8397b1dcdafull);
}

/* Counts the observed outputs; replaces 'b' with zeros. */
static int zero_b(void *ctx, const struct ir_node *n, size_t out, struct rt_value **slot)
{
	static const float z[4] = { 0, 0, 0, 0 };

	(void)out;
	++*(int *)ctx;
	if (!strcmp(ir_s(n->outputs[0]->name), "b")) {
		rt_value_unref(*slot);
		*slot = floats(z, 4);
	}
	return 0;
}

static void test_run_steps(void)
{
	static const float xv[4] = { -1, 2, -3, 4 };
	struct ir_model *m = tm_new(13);
	struct rt_session *s = NULL;
	struct rt_value *x = floats(xv, 4), *whole = NULL, *stepped = NULL;
	struct rt_run *r = NULL;
	struct ir_diag d;
	int steps = 0, rc, seen = 0;

	ir_diag_init(&d);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("x"), 1, TM_NAMES("a"), 1);
	tm_node(m, "Neg", NULL, TM_NAMES("a"), 1, TM_NAMES("b"), 1);
	tm_node(m, "Abs", NULL, TM_NAMES("b"), 1, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(4), 1);
	tm_verify(m);
	CU_ASSERT_FATAL(rt_session_new(m, &(struct rt_opts){ .threads = 1 }, &s, &d) == 0);
	CU_ASSERT_FATAL(rt_session_run(s, &x, 1, &whole, &d) == 0);
	CU_ASSERT_FATAL(rt_run_begin(s, &x, 1, &r, &d) == 0);
	while ((rc = rt_run_step(r, &d)) > 0)
		steps++;
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(steps, 3);
	CU_ASSERT_FATAL(rt_run_end(r, rc, &stepped, &d) == 0);
	CU_ASSERT_FATAL(whole && stepped && stepped->numel == 4);
	CU_ASSERT(!memcmp(whole->data, stepped->data, 4 * sizeof(float)));
	CU_ASSERT_EQUAL(((float *)stepped->data)[1], 2);
	rt_value_unref(stepped);
	stepped = NULL;
	/* the observer sees each output and may replace it */
	rt_session_set_observer(s, zero_b, &seen);
	CU_ASSERT_FATAL(rt_run_begin(s, &x, 1, &r, &d) == 0);
	while ((rc = rt_run_step(r, &d)) > 0)
		;
	CU_ASSERT_FATAL(rt_run_end(r, rc, &stepped, &d) == 0);
	CU_ASSERT_EQUAL(seen, 3);
	CU_ASSERT(stepped && ((float *)stepped->data)[1] == 0);
	rt_session_set_observer(s, NULL, NULL);
	/* a run abandoned halfway releases what it holds (ASan checks) */
	CU_ASSERT_FATAL(rt_run_begin(s, &x, 1, &r, &d) == 0);
	CU_ASSERT_EQUAL(rt_run_step(r, &d), 1);
	rt_run_free(r);
	rt_run_free(NULL);
	/* inputs are checked as rt_session_run checks them */
	CU_ASSERT(rt_run_begin(s, &x, 0, &r, &d) < 0 && r == NULL);
	rt_value_unref(whole);
	rt_value_unref(stepped);
	rt_value_unref(x);
	rt_session_free(s);
	ir_model_free(m);
}

struct pool_job {
	struct rt_pool *p;
	int *hits;
	int64_t n;
	int nested;
};

static void pool_inner(void *ctx, int64_t lo, int64_t hi)
{
	struct pool_job *j = ctx;

	for (int64_t i = lo; i < hi; i++)
		__atomic_fetch_add(&j->hits[j->n + i], 1, __ATOMIC_RELAXED);
}

static void pool_outer(void *ctx, int64_t lo, int64_t hi)
{
	struct pool_job *j = ctx;

	for (int64_t i = lo; i < hi; i++)
		__atomic_fetch_add(&j->hits[i], 1, __ATOMIC_RELAXED);
	/* a loop from inside a chunk runs inline, whole */
	if (j->nested && lo == 0) {
		struct pool_job in = { j->p, j->hits, j->n, 0 };

		rt_pool_for(j->p, 37, 1, pool_inner, &in);
	}
}

/* Each item of a loop done once, with the pool's threads and with
 * OpenMP's (threads.c), for 1 to 3 threads, grains and sizes around the
 * chunking, a loop inside a chunk run inline; several loops in a row. */
static void test_pool(void)
{
	int prev = rt_pool_openmp(0);

	for (int omp = 0; omp <= 1; omp++) {
		rt_pool_openmp(omp);
		for (int th = 1; th <= 3; th++) {
			struct rt_pool *p = NULL;

			CU_ASSERT_FATAL(rt_pool_new(th, &p) == 0);
			for (int64_t n = 0; n < 300; n += 1 + n / 3)
				for (int64_t grain = 1; grain <= 64; grain *= 4) {
					int *hits = calloc((size_t)(n + 37 + 1), sizeof(int));
					struct pool_job j = { p, hits, n, n > 0 };
					int ok = 1;

					CU_ASSERT_FATAL(hits != NULL);
					rt_pool_for(p, n, grain, pool_outer, &j);
					for (int64_t i = 0; i < n + (n > 0 ? 37 : 0); i++)
						ok &= hits[i] == 1;
					CU_ASSERT(ok);
					free(hits);
				}
			rt_pool_free(p);
		}
	}
	rt_pool_openmp(prev);
}

static const struct unit_test tests[] = {
	{ "kernel table sorted, unique, real versions", test_kernel_table },
	{ "float16 and bfloat16 conversions", test_half_bf16 },
	{ "float16 array conversions match the scalar ones", test_half_arrays },
	{ "large blocks kept for the next tensors", test_big_blocks },
	{ "float8 and float4 conversions", test_float8 },
	{ "broadcasting loop", test_bcast },
	{ "npy parsing", test_npy },
	{ "comparison metrics", test_compare },
	{ "logits by position: cosine, top-1, top-5", test_logits },
	{ "seeded generator", test_random },
	{ "a run node by node", test_run_steps },
	{ "thread pool loops, own threads and OpenMP's", test_pool },
	{ NULL, NULL },
};

int suite_runtime_register(void)
{
	return unit_add_suite("runtime", tests);
}
