/* suite_kmisc.c: unit tests of the random, string, ml, signal, detection,
 * training and misc kernels: one-node models over initializers, checked
 * against values derived by hand (the derivation is in each comment). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"
#include "ir/registry.h"
#include "runtime/rt_int.h"
#include "runtime/runtime.h"

/* ---- helpers ------------------------------------------------------------ */

static void add_opset(struct ir_model *m, const char *domain, int64_t v)
{
	struct ir_opset *o = realloc(m->opsets, (m->n_opsets + 1) * sizeof(*o));

	CU_ASSERT_FATAL(o != NULL);
	m->opsets = o;
	memset(&o[m->n_opsets], 0, sizeof(o[0]));
	o[m->n_opsets].domain = strdup(domain);
	o[m->n_opsets].version = v;
	o[m->n_opsets].present = 1;
	m->n_opsets++;
}

static struct ir_model *mk(int64_t opset)
{
	struct ir_model *m = tm_new(opset);

	add_opset(m, "ai.onnx.ml", 5);
	add_opset(m, "ai.onnx.preview.training", 1);
	return m;
}

static void init_s(struct ir_model *m, const char *name, const int64_t *dims, size_t n,
		   const char *const *s)
{
	struct rt_value *t;
	struct ir_tensor *it;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_STRING, (int)n, dims, &t, &d) == 0);
	for (int64_t i = 0; i < t->numel; i++)
		CU_ASSERT_FATAL((((char **)t->data)[i] = strdup(s[i])) != NULL);
	CU_ASSERT_FATAL(rt_value_to_ir(t, name, &it, &d) == 0);
	rt_value_unref(t);
	CU_ASSERT_FATAL(ir_graph_add_initializer(m->graph, it) != NULL);
}

static void init_raw(struct ir_model *m, const char *name, int dtype, const int64_t *dims,
		     size_t n, const void *data, size_t len)
{
	struct ir_tensor *t = ir_tensor_new_raw(name, dtype, dims, n, data, len);

	CU_ASSERT_FATAL(t != NULL);
	CU_ASSERT_FATAL(ir_graph_add_initializer(m->graph, t) != NULL);
}

static void set_strs(struct ir_node *n, const char *name, const char *const *s, size_t k)
{
	struct ir_attr *a;

	CU_ASSERT_FATAL(ir_node_set_string(n, name, "") == 0);
	a = (struct ir_attr *)ir_node_attr(n, name);
	free(a->s);
	a->s = NULL;
	a->s_len = 0;
	a->present = 0;
	a->type = IR_ATTR_STRINGS;
	a->strings = calloc(k + 1, sizeof(*a->strings));
	a->string_lens = calloc(k + 1, sizeof(*a->string_lens));
	CU_ASSERT_FATAL(a->strings && a->string_lens);
	for (size_t i = 0; i < k; i++) {
		a->strings[i] = (uint8_t *)strdup(s[i]);
		a->string_lens[i] = strlen(s[i]);
	}
	a->n_strings = k;
}

static void set_tensor_f(struct ir_node *n, const char *name, int dtype, const double *v,
			 int64_t k)
{
	struct rt_value *t;
	struct ir_tensor *it;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, dtype, 1, &k, &t, &d) == 0);
	for (int64_t i = 0; i < k; i++)
		rt_value_set_f64(t, i, v[i]);
	CU_ASSERT_FATAL(rt_value_to_ir(t, name, &it, &d) == 0);
	rt_value_unref(t);
	CU_ASSERT_FATAL(ir_node_set_tensor(n, name, it) == 0);
}

static void set_tensor_s(struct ir_node *n, const char *name, const char *const *v, int64_t k)
{
	struct rt_value *t;
	struct ir_tensor *it;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_STRING, 1, &k, &t, &d) == 0);
	for (int64_t i = 0; i < k; i++)
		CU_ASSERT_FATAL((((char **)t->data)[i] = strdup(v[i])) != NULL);
	CU_ASSERT_FATAL(rt_value_to_ir(t, name, &it, &d) == 0);
	rt_value_unref(t);
	CU_ASSERT_FATAL(ir_node_set_tensor(n, name, it) == 0);
}

/* Run m (which it frees) expecting success; outs get references. */
static int run(struct ir_model *m, const char *const *outs, size_t n, struct rt_value **vals)
{
	int rc;

	for (size_t i = 0; i < n; i++)
		tm_output(m, outs[i], IR_DTYPE_UNDEFINED, NULL, 0);
	rc = tm_run(m, 1, vals, n);
	ir_model_free(m);
	return rc;
}

/* Run expecting failure; returns 1 when the error message contains want. */
static int run_fails(struct ir_model *m, const char *out, const char *want)
{
	struct rt_value *v = NULL;
	struct rt_session *s = NULL;
	struct rt_opts o = { .threads = 1 };
	struct ir_diag d;
	int rc, ok;

	tm_output(m, out, IR_DTYPE_UNDEFINED, NULL, 0);
	ir_diag_init(&d);
	rc = rt_session_new(m, &o, &s, &d);
	if (rc == 0)
		rc = rt_session_run(s, NULL, 0, &v, &d);
	ok = rc < 0 && strstr(d.msg, want) != NULL;
	if (!ok)
		fprintf(stderr, "\nexpected an error with '%s', got rc %d: %s\n", want, rc, d.msg);
	rt_value_unref(v);
	rt_session_free(s);
	ir_model_free(m);
	return ok;
}

static void expect_f(const struct rt_value *v, const double *want, int64_t n, double tol)
{
	CU_ASSERT_FATAL(v != NULL && v->kind == RT_TENSOR);
	CU_ASSERT_EQUAL_FATAL(v->numel, n);
	for (int64_t i = 0; i < n; i++) {
		double got = rt_value_get_f64(v, i);

		if (!(fabs(got - want[i]) <= tol))
			fprintf(stderr, "\nelement %lld: got %.9g, want %.9g\n", (long long)i,
				got, want[i]);
		CU_ASSERT(fabs(got - want[i]) <= tol);
	}
}

static void expect_s(const struct rt_value *v, const char *const *want, int64_t n)
{
	CU_ASSERT_FATAL(v != NULL && v->dtype == IR_DTYPE_STRING);
	CU_ASSERT_EQUAL_FATAL(v->numel, n);
	for (int64_t i = 0; i < n; i++) {
		const char *got = ((char **)v->data)[i];

		CU_ASSERT_FATAL(got != NULL);
		if (strcmp(got, want[i]))
			fprintf(stderr, "\nelement %lld: got '%s', want '%s'\n", (long long)i, got,
				want[i]);
		CU_ASSERT_STRING_EQUAL(got, want[i]);
	}
}

static void expect_dims(const struct rt_value *v, int rank, const int64_t *dims)
{
	CU_ASSERT_FATAL(v != NULL);
	CU_ASSERT_EQUAL_FATAL(v->rank, rank);
	for (int i = 0; i < rank; i++)
		CU_ASSERT_EQUAL(v->dims[i], dims[i]);
}

#define F(...) ((const double[]){ __VA_ARGS__ })
#define S(...) ((const char *const[]){ __VA_ARGS__ })
#define I64(...) ((const int64_t[]){ __VA_ARGS__ })
#define FL(...) ((const float[]){ __VA_ARGS__ })
#define NF(...) (sizeof((const float[]){ __VA_ARGS__ }) / sizeof(float))
#define NI(...) (sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t))
#define NS(...) (sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *))

/* ---- strings ---------------------------------------------------------- */

static void test_string_normalizer(void)
{
	struct ir_model *m = mk(10);
	struct ir_node *n;
	struct rt_value *y[1] = { 0 };

	/* case-insensitive stopword "monday" drops both Mondays */
	init_s(m, "x", TM_DIMS(3), 1, S("Monday", "tuesday", "MONDAY"));
	n = tm_node(m, "StringNormalizer", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	set_strs(n, "stopwords", S("monday"), 1);
	ir_node_set_string(n, "case_change_action", "UPPER");
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_s(y[0], S("TUESDAY"), 1);
	rt_value_unref(y[0]);

	/* everything removed from [1, C]: one empty string, shape [1, 1] */
	m = mk(10);
	init_s(m, "x", TM_DIMS(1, 2), 2, S("a", "A"));
	n = tm_node(m, "StringNormalizer", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	set_strs(n, "stopwords", S("a"), 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_dims(y[0], 2, TM_DIMS(1, 1));
	expect_s(y[0], S(""), 1);
	rt_value_unref(y[0]);

	/* case-sensitive: only the exact "a" goes, "A" is lowered */
	m = mk(10);
	init_s(m, "x", TM_DIMS(3), 1, S("a", "A", "Bc"));
	n = tm_node(m, "StringNormalizer", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	set_strs(n, "stopwords", S("a"), 1);
	ir_node_set_int(n, "is_case_sensitive", 1);
	ir_node_set_string(n, "case_change_action", "LOWER");
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_s(y[0], S("a", "bc"), 2);
	rt_value_unref(y[0]);
}

static void test_string_split_concat(void)
{
	struct ir_model *m = mk(20);
	struct ir_node *n;
	struct rt_value *y[2] = { 0 };

	/* "a,,b" keeps the empty piece; rows padded with "" to 3 */
	init_s(m, "x", TM_DIMS(2), 1, S("a,,b", "c"));
	n = tm_node(m, "StringSplit", NULL, TM_NAMES("x"), 1, TM_NAMES("y", "z"), 2);
	ir_node_set_string(n, "delimiter", ",");
	CU_ASSERT_FATAL(run(m, TM_NAMES("y", "z"), 2, y) == 0);
	expect_dims(y[0], 2, TM_DIMS(2, 3));
	expect_s(y[0], S("a", "", "b", "c", "", ""), 6);
	expect_f(y[1], F(3, 1), 2, 0);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);

	/* whitespace split with maxsplit 1, as Python's " a  b ".split(None, 1) */
	m = mk(20);
	init_s(m, "x", TM_DIMS(2), 1, S(" a  b ", "   "));
	n = tm_node(m, "StringSplit", NULL, TM_NAMES("x"), 1, TM_NAMES("y", "z"), 2);
	ir_node_set_int(n, "maxsplit", 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y", "z"), 2, y) == 0);
	expect_s(y[0], S("a", "b ", "", ""), 4);
	expect_f(y[1], F(2, 0), 2, 0);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);

	/* broadcast [2] + [1] */
	m = mk(20);
	init_s(m, "a", TM_DIMS(2), 1, S("x", "yz"));
	init_s(m, "b", TM_DIMS(1), 1, S("!"));
	tm_node(m, "StringConcat", NULL, TM_NAMES("a", "b"), 2, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_s(y[0], S("x!", "yz!"), 2);
	rt_value_unref(y[0]);
}

static void test_regex_full_match(void)
{
	struct ir_model *m = mk(20);
	struct ir_node *n;
	struct rt_value *y[1] = { 0 };

	/* full match: a prefix or suffix outside the pattern fails */
	init_s(m, "x", TM_DIMS(4), 1, S("12@ab.com", "x12@ab.com", "12@ab.comx", "@ab.com"));
	n = tm_node(m, "RegexFullMatch", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	ir_node_set_string(n, "pattern", "\\d+@[a-z]+\\.com");
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_f(y[0], F(1, 0, 0, 0), 4, 0);
	rt_value_unref(y[0]);

	/* alternation binds inside the anchors: "ab|cd" must not match "abcd" */
	m = mk(20);
	init_s(m, "x", TM_DIMS(3), 1, S("ab", "cd", "abcd"));
	n = tm_node(m, "RegexFullMatch", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	ir_node_set_string(n, "pattern", "ab|cd");
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_f(y[0], F(1, 1, 0), 3, 0);
	rt_value_unref(y[0]);

	/* RE2 features the translation covers: \w and escaped '-' inside
	 * brackets, \b, anchors inside the pattern, {m,n} */
	{
		const struct {
			const char *pat;
			const char *const *in;
			const double *want;
			int64_t n;
		} cases[] = {
			{ "www\\.[\\w.-]+\\.\\bcom\\b",
			  S("www.google.com", "www.facebook.com", "www.bbc.co.uk"), F(1, 1, 0), 3 },
			{ "^[A-Z][a-z]*$", S("Onnx", "tensorflow", "Numpy", "Pytorch", "Cython", "numba"),
			  F(1, 0, 1, 1, 1, 0), 6 },
			{ "(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)",
			  S("account@gmail.com", "account@hotmail.com", "not email", "account2@yahoo.com"),
			  F(1, 0, 0, 1), 4 },
			{ "[]a-]+", S("]-a", "b"), F(1, 0), 2 },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			m = mk(20);
			init_s(m, "x", &cases[i].n, 1, cases[i].in);
			n = tm_node(m, "RegexFullMatch", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
			ir_node_set_string(n, "pattern", cases[i].pat);
			CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
			expect_f(y[0], cases[i].want, cases[i].n, 0);
			rt_value_unref(y[0]);
		}
	}

	/* RE2's lazy quantifier has no POSIX form: a precise error */
	m = mk(20);
	init_s(m, "x", TM_DIMS(1), 1, S("a"));
	n = tm_node(m, "RegexFullMatch", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	ir_node_set_string(n, "pattern", "a+?");
	CU_ASSERT(run_fails(m, "y", "lazy quantifiers"));
}

static void test_tfidf(void)
{
	struct ir_model *m = mk(9);
	struct ir_node *n;
	struct rt_value *y[1] = { 0 };
	const double x[] = { 1, 3, 2, 1, 2 };

	/* pool: unigrams {1, 2}, bigram (1,2); skip up to 1.
	 * unigram 1: twice, 2: twice; bigram (1,2): x0..x2 (skip 1) and
	 * x3,x4 (skip 0) = 2.  TFIDF with weights [1, 0.5, 2]. */
	tm_init(m, "x", IR_DTYPE_INT64, TM_DIMS(5), 1, x);
	n = tm_node(m, "TfIdfVectorizer", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	ir_node_set_string(n, "mode", "TFIDF");
	ir_node_set_int(n, "min_gram_length", 1);
	ir_node_set_int(n, "max_gram_length", 2);
	ir_node_set_int(n, "max_skip_count", 1);
	ir_node_set_ints(n, "ngram_counts", I64(0, 2), 2);
	ir_node_set_ints(n, "ngram_indexes", I64(0, 1, 2), 3);
	ir_node_set_ints(n, "pool_int64s", I64(1, 2, 1, 2), 4);
	ir_node_set_floats(n, "weights", FL(1, 0.5f, 2), 3);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_f(y[0], F(2, 1, 4), 3, 1e-6);
	rt_value_unref(y[0]);

	/* strings, [2, 3] batch, only bigrams ("a","b") -> index 0, IDF mode */
	m = mk(9);
	init_s(m, "x", TM_DIMS(2, 3), 2, S("a", "b", "a", "b", "a", "c"));
	n = tm_node(m, "TfIdfVectorizer", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	ir_node_set_string(n, "mode", "IDF");
	ir_node_set_int(n, "min_gram_length", 2);
	ir_node_set_int(n, "max_gram_length", 2);
	ir_node_set_int(n, "max_skip_count", 0);
	ir_node_set_ints(n, "ngram_counts", I64(0, 1), 2);
	ir_node_set_ints(n, "ngram_indexes", I64(1, 0), 2);
	set_strs(n, "pool_strings", S("c", "a", "b"), 3);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	/* unigram "c" is outside [2, 2]; row 0 has (a,b) once, row 1 none */
	expect_dims(y[0], 2, TM_DIMS(2, 2));
	expect_f(y[0], F(1, 0, 0, 0), 4, 0);
	rt_value_unref(y[0]);
}

/* ---- signal ------------------------------------------------------------ */

static void test_dft(void)
{
	struct ir_model *m = mk(17);
	struct ir_node *n;
	struct rt_value *y[1] = { 0 };

	/* DFT of [1,2,3,4]: X0 = 10, X1 = -2+2i, X2 = -2, X3 = -2-2i */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 4, 1), 3, F(1, 2, 3, 4));
	tm_node(m, "DFT", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_dims(y[0], 3, TM_DIMS(1, 4, 2));
	expect_f(y[0], F(10, 0, -2, 2, -2, 0, -2, -2), 8, 1e-5);
	rt_value_unref(y[0]);

	/* onesided keeps floor(4/2)+1 = 3 bins; dft_length 2 uses [1,2]:
	 * X0 = 3, X1 = -1 */
	m = mk(17);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 4, 1), 3, F(1, 2, 3, 4));
	tm_init(m, "len", IR_DTYPE_INT64, NULL, 0, F(2));
	n = tm_node(m, "DFT", NULL, TM_NAMES("x", "len"), 2, TM_NAMES("y"), 1);
	ir_node_set_int(n, "onesided", 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_dims(y[0], 3, TM_DIMS(1, 2, 2));
	expect_f(y[0], F(3, 0, -1, 0), 4, 1e-6);
	rt_value_unref(y[0]);

	/* version 20, axis as an input (-2: the last signal axis), inverse of
	 * the spectrum above gives back [1,2,3,4] */
	m = mk(20);
	tm_init(m, "x", IR_DTYPE_DOUBLE, TM_DIMS(1, 4, 2), 3, F(10, 0, -2, 2, -2, 0, -2, -2));
	tm_init(m, "axis", IR_DTYPE_INT64, NULL, 0, F(-2));
	n = tm_node(m, "DFT", NULL, TM_NAMES("x", "", "axis"), 3, TM_NAMES("y"), 1);
	ir_node_set_int(n, "inverse", 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_f(y[0], F(1, 0, 2, 0, 3, 0, 4, 0), 8, 1e-12);
	rt_value_unref(y[0]);

	/* length 8 (the FFT path): a unit impulse at 1 has X_k = e^{-i pi k/4} */
	m = mk(17);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 8, 1), 3, F(0, 1, 0, 0, 0, 0, 0, 0));
	tm_node(m, "DFT", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	{
		double want[16];

		for (int kk = 0; kk < 8; kk++) {
			want[2 * kk] = cos(M_PI * kk / 4);
			want[2 * kk + 1] = -sin(M_PI * kk / 4);
		}
		expect_f(y[0], want, 16, 1e-6);
	}
	rt_value_unref(y[0]);

	/* onesided with complex input is refused */
	m = mk(17);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 2), 3, F(1, 0, 0, 0));
	n = tm_node(m, "DFT", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	ir_node_set_int(n, "onesided", 1);
	CU_ASSERT(run_fails(m, "y", "onesided output needs a real input"));
}

static void test_windows_stft_mel(void)
{
	struct ir_model *m = mk(17);
	struct ir_node *n;
	struct rt_value *y[3] = { 0 };

	/* Hann periodic 4: 0.5 - 0.5 cos(2 pi k / 4) = 0, .5, 1, .5;
	 * Hamming symmetric 3 (N = 2): 25/46 - 21/46 cos(pi k) = 4/46, 1, 4/46;
	 * Blackman periodic 2: k=1: .42 + .5 + .08 = 1, output double */
	tm_init(m, "four", IR_DTYPE_INT64, NULL, 0, F(4));
	tm_init(m, "three", IR_DTYPE_INT32, NULL, 0, F(3));
	tm_init(m, "two", IR_DTYPE_INT64, NULL, 0, F(2));
	tm_node(m, "HannWindow", NULL, TM_NAMES("four"), 1, TM_NAMES("a"), 1);
	n = tm_node(m, "HammingWindow", NULL, TM_NAMES("three"), 1, TM_NAMES("b"), 1);
	ir_node_set_int(n, "periodic", 0);
	n = tm_node(m, "BlackmanWindow", NULL, TM_NAMES("two"), 1, TM_NAMES("c"), 1);
	ir_node_set_int(n, "output_datatype", IR_DTYPE_DOUBLE);
	CU_ASSERT_FATAL(run(m, TM_NAMES("a", "b", "c"), 3, y) == 0);
	expect_f(y[0], F(0, 0.5, 1, 0.5), 4, 1e-7);
	expect_f(y[1], F(4.0 / 46, 1, 4.0 / 46), 3, 1e-7);
	CU_ASSERT_EQUAL(y[2]->dtype, IR_DTYPE_DOUBLE);
	expect_f(y[2], F(0, 1), 2, 1e-15);
	for (int i = 0; i < 3; i++)
		rt_value_unref(y[i]);

	/* STFT of eight ones, frames of 4 every 4: two frames, each the
	 * onesided DFT of [1,1,1,1] = [4, 0, 0] */
	m = mk(17);
	tm_init(m, "sig", IR_DTYPE_FLOAT, TM_DIMS(1, 8, 1), 3, F(1, 1, 1, 1, 1, 1, 1, 1));
	tm_init(m, "step", IR_DTYPE_INT64, NULL, 0, F(4));
	tm_init(m, "len", IR_DTYPE_INT64, NULL, 0, F(4));
	tm_node(m, "STFT", NULL, TM_NAMES("sig", "step", "", "len"), 4, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_dims(y[0], 4, TM_DIMS(1, 2, 3, 2));
	expect_f(y[0], F(4, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0), 12, 1e-6);
	rt_value_unref(y[0]);

	/* MelWeightMatrix(1 bin, dft 8, rate 8, 0..4 Hz): mel edges 0,
	 * 2.1413, 4.2825 -> 0, 1.3313, 2.6651 Hz -> bins floor(9 hz / 8) =
	 * 0, 1, 2: a triangle peaking at bin 1 */
	m = mk(17);
	tm_init(m, "nm", IR_DTYPE_INT64, NULL, 0, F(1));
	tm_init(m, "dl", IR_DTYPE_INT64, NULL, 0, F(8));
	tm_init(m, "sr", IR_DTYPE_INT64, NULL, 0, F(8));
	tm_init(m, "lo", IR_DTYPE_FLOAT, NULL, 0, F(0));
	tm_init(m, "hi", IR_DTYPE_FLOAT, NULL, 0, F(4));
	tm_node(m, "MelWeightMatrix", NULL, TM_NAMES("nm", "dl", "sr", "lo", "hi"), 5,
		TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_dims(y[0], 2, TM_DIMS(5, 1));
	expect_f(y[0], F(0, 1, 0, 0, 0), 5, 0);
	rt_value_unref(y[0]);
}

/* ---- detection ------------------------------------------------------------ */

static void test_nms(void)
{
	struct ir_model *m = mk(11);
	struct rt_value *y[1] = { 0 };
	struct ir_node *n;

	/* boxes 0 and 1 identical with tied scores: the lower index wins and
	 * suppresses the other (IoU 1); box 2 does not overlap; box 3 is
	 * under the score threshold */
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(1, 4, 4), 3,
		F(0, 0, 1, 1, 0, 0, 1, 1, 0, 2, 1, 3, 5, 5, 6, 6));
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 4), 3, F(0.5, 0.5, 0.4, 0.05));
	tm_init(m, "max", IR_DTYPE_INT64, TM_DIMS(1), 1, F(10));
	tm_init(m, "iou", IR_DTYPE_FLOAT, TM_DIMS(1), 1, F(0.5));
	tm_init(m, "st", IR_DTYPE_FLOAT, TM_DIMS(1), 1, F(0.1));
	tm_node(m, "NonMaxSuppression", NULL, TM_NAMES("b", "s", "max", "iou", "st"), 5,
		TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_dims(y[0], 2, TM_DIMS(2, 3));
	expect_f(y[0], F(0, 0, 0, 0, 0, 2), 6, 0);
	rt_value_unref(y[0]);

	/* center format: [0.5,0.5,1,1] and [1,0.5,1,1] overlap by 1/3 (0.5 of
	 * 1.5), kept at iou 0.4; max 1 per class keeps only the best */
	m = mk(11);
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 4), 3, F(0.5, 0.5, 1, 1, 1, 0.5, 1, 1));
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 2), 3, F(0.9, 0.8, 0.1, 0.2));
	tm_init(m, "max", IR_DTYPE_INT64, TM_DIMS(1), 1, F(2));
	tm_init(m, "iou", IR_DTYPE_FLOAT, TM_DIMS(1), 1, F(0.4));
	n = tm_node(m, "NonMaxSuppression", NULL, TM_NAMES("b", "s", "max", "iou"), 4,
		    TM_NAMES("y"), 1);
	ir_node_set_int(n, "center_point_box", 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	/* class 0: 0 then 1; class 1: 1 (0.2) then 0 (0.1) */
	expect_f(y[0], F(0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 1, 0), 12, 0);
	rt_value_unref(y[0]);
}

static void test_roi(void)
{
	struct ir_model *m;
	struct rt_value *y[1] = { 0 };
	struct ir_node *n;
	int opsets[2] = { 10, 16 };
	/* X = [[1,2],[3,4]], roi (0,0)-(1,1), one sample per bin:
	 * v10 (output_half_pixel): sample at (0.5, 0.5) -> 2.5;
	 * v16 (half_pixel): the roi shifts by -0.5, sample at (0, 0) -> 1 */
	double want[2] = { 2.5, 1 };

	for (int i = 0; i < 2; i++) {
		m = mk(opsets[i]);
		tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 2), 4, F(1, 2, 3, 4));
		tm_init(m, "r", IR_DTYPE_FLOAT, TM_DIMS(1, 4), 2, F(0, 0, 1, 1));
		tm_init(m, "bi", IR_DTYPE_INT64, TM_DIMS(1), 1, F(0));
		n = tm_node(m, "RoiAlign", NULL, TM_NAMES("x", "r", "bi"), 3, TM_NAMES("y"), 1);
		ir_node_set_int(n, "sampling_ratio", 1);
		CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
		expect_f(y[0], &want[i], 1, 1e-6);
		rt_value_unref(y[0]);
	}

	/* v16 half_pixel, 2x2 samples at -0.25 and 0.25 on each axis (clamped
	 * to 0 below zero): bilinear values 1, 1.25, 1.5, 1.75 -> avg 1.375;
	 * max mode takes the largest weighted corner per sample (onnxruntime's
	 * rule): 1, .75, .75, .5625 -> 1 */
	for (int i = 0; i < 2; i++) {
		double w = i ? 1 : 1.375;

		m = mk(16);
		tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 2), 4, F(1, 2, 3, 4));
		tm_init(m, "r", IR_DTYPE_FLOAT, TM_DIMS(1, 4), 2, F(0, 0, 1, 1));
		tm_init(m, "bi", IR_DTYPE_INT64, TM_DIMS(1), 1, F(0));
		n = tm_node(m, "RoiAlign", NULL, TM_NAMES("x", "r", "bi"), 3, TM_NAMES("y"), 1);
		ir_node_set_int(n, "sampling_ratio", 2);
		if (i)
			ir_node_set_string(n, "mode", "max");
		CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
		expect_f(y[0], &w, 1, 1e-6);
		rt_value_unref(y[0]);
	}

	/* MaxRoiPool over 1..9 (3x3), roi covering all, 2x2 bins of 1.5:
	 * rows/cols [0,2) and [1,3) -> max 5, 6, 8, 9 */
	m = mk(11);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 3, 3), 4, F(1, 2, 3, 4, 5, 6, 7, 8, 9));
	tm_init(m, "r", IR_DTYPE_FLOAT, TM_DIMS(1, 5), 2, F(0, 0, 0, 2, 2));
	n = tm_node(m, "MaxRoiPool", NULL, TM_NAMES("x", "r"), 2, TM_NAMES("y"), 1);
	ir_node_set_ints(n, "pooled_shape", I64(2, 2), 2);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_f(y[0], F(5, 6, 8, 9), 4, 0);
	rt_value_unref(y[0]);
}

/* ---- training ------------------------------------------------------------- */

static void test_optimizers(void)
{
	struct ir_model *m = mk(17);
	struct rt_value *y[2] = { 0 };
	struct ir_node *n;
	const char *tr = "ai.onnx.preview.training";

	/* Adagrad, r 0.1, t 0, x 1, g -1, h 2: h' = 3,
	 * x' = 1 + 0.1 / (sqrt 3 + 1e-6) = 1.05773496 */
	tm_init(m, "r", IR_DTYPE_FLOAT, NULL, 0, F(0.1));
	tm_init(m, "t", IR_DTYPE_INT64, NULL, 0, F(0));
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1), 1, F(1));
	tm_init(m, "g", IR_DTYPE_FLOAT, TM_DIMS(1), 1, F(-1));
	tm_init(m, "h", IR_DTYPE_FLOAT, TM_DIMS(1), 1, F(2));
	tm_node(m, "Adagrad", tr, TM_NAMES("r", "t", "x", "g", "h"), 5, TM_NAMES("xn", "hn"), 2);
	CU_ASSERT_FATAL(run(m, TM_NAMES("xn", "hn"), 2, y) == 0);
	expect_f(y[0], F(1.05773496), 1, 1e-6);
	expect_f(y[1], F(3), 1, 0);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);

	/* Nesterov, r 0.1, t 1, x 1, g 2, v 1, alpha .9, beta .5:
	 * v' = .9 + .5 * 2 = 1.9, x' = 1 - .1 (2 + .9 * 1.9) = 0.629 */
	m = mk(17);
	tm_init(m, "r", IR_DTYPE_FLOAT, NULL, 0, F(0.1));
	tm_init(m, "t", IR_DTYPE_INT64, NULL, 0, F(1));
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1), 1, F(1));
	tm_init(m, "g", IR_DTYPE_FLOAT, TM_DIMS(1), 1, F(2));
	tm_init(m, "v", IR_DTYPE_FLOAT, TM_DIMS(1), 1, F(1));
	n = tm_node(m, "Momentum", tr, TM_NAMES("r", "t", "x", "g", "v"), 5,
		    TM_NAMES("xn", "vn"), 2);
	ir_node_set_float(n, "alpha", 0.9f);
	ir_node_set_float(n, "beta", 0.5f);
	ir_node_set_float(n, "norm_coefficient", 0);
	ir_node_set_string(n, "mode", "nesterov");
	CU_ASSERT_FATAL(run(m, TM_NAMES("xn", "vn"), 2, y) == 0);
	expect_f(y[0], F(0.629), 1, 1e-6);
	expect_f(y[1], F(1.9), 1, 1e-6);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);

	/* Adam, t 1 (bias correction), alpha .5, beta .5, eps 0: g 2 ->
	 * v' = 1, h' = 2, r' = .1 sqrt(.5) / .5, x' = 1 - r' / sqrt 2 = 0.9 */
	m = mk(17);
	tm_init(m, "r", IR_DTYPE_FLOAT, NULL, 0, F(0.1));
	tm_init(m, "t", IR_DTYPE_INT64, NULL, 0, F(1));
	tm_init(m, "x", IR_DTYPE_DOUBLE, TM_DIMS(1), 1, F(1));
	tm_init(m, "g", IR_DTYPE_DOUBLE, TM_DIMS(1), 1, F(2));
	tm_init(m, "v", IR_DTYPE_DOUBLE, TM_DIMS(1), 1, F(0));
	tm_init(m, "h", IR_DTYPE_DOUBLE, TM_DIMS(1), 1, F(0));
	n = tm_node(m, "Adam", tr, TM_NAMES("r", "t", "x", "g", "v", "h"), 6,
		    TM_NAMES("xn", "vn", "hn"), 3);
	ir_node_set_float(n, "alpha", 0.5f);
	ir_node_set_float(n, "beta", 0.5f);
	ir_node_set_float(n, "epsilon", 0);
	{
		struct rt_value *z[3] = { 0 };

		CU_ASSERT_FATAL(run(m, TM_NAMES("xn", "vn", "hn"), 3, z) == 0);
		expect_f(z[0], F(0.9), 1, 1e-7);
		expect_f(z[1], F(1), 1, 1e-12);
		expect_f(z[2], F(2), 1, 1e-12);
		for (int i = 0; i < 3; i++)
			rt_value_unref(z[i]);
	}
}

static void test_gradient(void)
{
	struct ir_model *m = mk(12);
	struct rt_value *y[2] = { 0 };
	struct ir_node *n;

	/* y = Identity(x): dy/dx summed over y is ones of x's shape */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3), 1, F(1, 2, 3));
	tm_node(m, "Identity", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	n = tm_node(m, "Gradient", "ai.onnx.preview.training", TM_NAMES("x"), 1,
		    TM_NAMES("dx"), 1);
	set_strs(n, "xs", S("x"), 1);
	ir_node_set_string(n, "y", "y");
	CU_ASSERT_FATAL(run(m, TM_NAMES("y", "dx"), 2, y) == 0);
	expect_f(y[1], F(1, 1, 1), 3, 0);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);
}

/* ---- random ------------------------------------------------------------- */

static void test_random(void)
{
	struct ir_model *m = mk(15);
	struct rt_value *y[5] = { 0 }, *again[1] = { 0 };
	struct ir_node *n;
	double sum = 0, sq = 0, mn = 1e9, mx = -1e9;

	n = tm_node(m, "RandomUniform", NULL, NULL, 0, TM_NAMES("u"), 1);
	ir_node_set_ints(n, "shape", I64(100, 100), 2);
	ir_node_set_float(n, "low", 2);
	ir_node_set_float(n, "high", 4);
	ir_node_set_float(n, "seed", 7);
	n = tm_node(m, "RandomNormal", NULL, NULL, 0, TM_NAMES("g"), 1);
	ir_node_set_ints(n, "shape", I64(10000), 1);
	ir_node_set_float(n, "mean", 1);
	ir_node_set_float(n, "scale", 2);
	ir_node_set_int(n, "dtype", IR_DTYPE_DOUBLE);
	tm_init(m, "p", IR_DTYPE_FLOAT, TM_DIMS(4), 1, F(0, 1, 0, 1));
	tm_node(m, "Bernoulli", NULL, TM_NAMES("p"), 1, TM_NAMES("b"), 1);
	tm_init(m, "logits", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, F(0, -100, -100, 0));
	n = tm_node(m, "Multinomial", NULL, TM_NAMES("logits"), 1, TM_NAMES("mn"), 1);
	ir_node_set_int(n, "sample_size", 3);
	tm_node(m, "RandomUniformLike", NULL, TM_NAMES("logits"), 1, TM_NAMES("ul"), 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("u", "g", "b", "mn", "ul"), 5, y) == 0);
	/* uniform on [2, 4): mean 3, variance 1/3; 10^4 draws: 5 sigma */
	for (int64_t i = 0; i < y[0]->numel; i++) {
		double v = rt_value_get_f64(y[0], i);

		sum += v;
		mn = fmin(mn, v);
		mx = fmax(mx, v);
	}
	CU_ASSERT(mn >= 2 && mx < 4);
	CU_ASSERT(fabs(sum / 10000 - 3) < 5 * sqrt(1.0 / 3 / 10000));
	/* normal(1, 2): mean within 5 sigma/sqrt(n) = 0.1, sd within 10% */
	CU_ASSERT_EQUAL(y[1]->dtype, IR_DTYPE_DOUBLE);
	sum = 0;
	for (int64_t i = 0; i < y[1]->numel; i++) {
		double v = rt_value_get_f64(y[1], i);

		sum += v;
		sq += v * v;
	}
	CU_ASSERT(fabs(sum / 10000 - 1) < 0.1);
	CU_ASSERT(fabs(sqrt(sq / 10000 - (sum / 10000) * (sum / 10000)) - 2) < 0.2);
	/* p = 0 and 1 are certain */
	expect_f(y[2], F(0, 1, 0, 1), 4, 0);
	/* logit gap of 100: class 0 for row 0, class 1 for row 1 */
	CU_ASSERT_EQUAL(y[3]->dtype, IR_DTYPE_INT32);
	expect_f(y[3], F(0, 0, 0, 1, 1, 1), 6, 0);
	expect_dims(y[4], 2, TM_DIMS(2, 2));
	CU_ASSERT_EQUAL(y[4]->dtype, IR_DTYPE_FLOAT);

	/* the seed makes RandomUniform reproducible */
	m = mk(15);
	n = tm_node(m, "RandomUniform", NULL, NULL, 0, TM_NAMES("u"), 1);
	ir_node_set_ints(n, "shape", I64(100, 100), 2);
	ir_node_set_float(n, "low", 2);
	ir_node_set_float(n, "high", 4);
	ir_node_set_float(n, "seed", 7);
	CU_ASSERT_FATAL(run(m, TM_NAMES("u"), 1, again) == 0);
	CU_ASSERT(memcmp(again[0]->data, y[0]->data, 10000 * sizeof(float)) == 0);
	rt_value_unref(again[0]);
	for (int i = 0; i < 5; i++)
		rt_value_unref(y[i]);
}

/* ---- ai.onnx.ml ------------------------------------------------------------ */

#define ML "ai.onnx.ml"

static void test_linear_models(void)
{
	struct ir_model *m = mk(13);
	struct rt_value *y[2] = { 0 };
	struct ir_node *n;

	/* scores = x W^T + b, W = [[1,0],[0,1]], b = [0, .5]:
	 * [2,1] -> [2, 1.5] (label 10); [0,0] -> [0, .5] (label 20) */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, F(2, 1, 0, 0));
	n = tm_node(m, "LinearClassifier", ML, TM_NAMES("x"), 1, TM_NAMES("l", "z"), 2);
	ir_node_set_floats(n, "coefficients", FL(1, 0, 0, 1), 4);
	ir_node_set_floats(n, "intercepts", FL(0, 0.5f), 2);
	ir_node_set_ints(n, "classlabels_ints", I64(10, 20), 2);
	CU_ASSERT_FATAL(run(m, TM_NAMES("l", "z"), 2, y) == 0);
	expect_f(y[0], F(10, 20), 2, 0);
	expect_f(y[1], F(2, 1.5, 0, 0.5), 4, 1e-6);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);

	/* SOFTMAX of [2, 1.5]: 1 / (1 + e^-.5) = 0.622459, 0.377541 */
	m = mk(13);
	tm_init(m, "x", IR_DTYPE_DOUBLE, TM_DIMS(2), 1, F(2, 1));
	n = tm_node(m, "LinearClassifier", ML, TM_NAMES("x"), 1, TM_NAMES("l", "z"), 2);
	ir_node_set_floats(n, "coefficients", FL(1, 0, 0, 1), 4);
	ir_node_set_floats(n, "intercepts", FL(0, 0.5f), 2);
	set_strs(n, "classlabels_strings", S("cat", "dog"), 2);
	ir_node_set_string(n, "post_transform", "SOFTMAX");
	CU_ASSERT_FATAL(run(m, TM_NAMES("l", "z"), 2, y) == 0);
	expect_s(y[0], S("cat"), 1);
	expect_f(y[1], F(0.622459, 0.377541), 2, 1e-6);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);

	/* binary: one coefficient row, two labels: s = 3 - 1 = 2 > 0 ->
	 * label 1, scores [-2, 2] */
	m = mk(13);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2), 2, F(3, 1));
	n = tm_node(m, "LinearClassifier", ML, TM_NAMES("x"), 1, TM_NAMES("l", "z"), 2);
	ir_node_set_floats(n, "coefficients", FL(1, -1), 2);
	ir_node_set_floats(n, "intercepts", FL(0), 1);
	ir_node_set_ints(n, "classlabels_ints", I64(0, 1), 2);
	CU_ASSERT_FATAL(run(m, TM_NAMES("l", "z"), 2, y) == 0);
	expect_f(y[0], F(1), 1, 0);
	expect_f(y[1], F(-2, 2), 2, 1e-6);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);

	/* LinearRegressor, 2 targets: [1,2] . [1,1] + 1 = 4; [1,2] . [0,-1] = -2 */
	m = mk(13);
	tm_init(m, "x", IR_DTYPE_INT64, TM_DIMS(1, 2), 2, F(1, 2));
	n = tm_node(m, "LinearRegressor", ML, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	ir_node_set_floats(n, "coefficients", FL(1, 1, 0, -1), 4);
	ir_node_set_floats(n, "intercepts", FL(1, 0), 2);
	ir_node_set_int(n, "targets", 2);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_f(y[0], F(4, -2), 2, 0);
	rt_value_unref(y[0]);
}

static void test_post_transforms(void)
{
	struct ir_model *m = mk(13);
	struct rt_value *y[2] = { 0 };
	struct ir_node *n;

	/* identity regressors expose the transforms: PROBIT is Winitzki's
	 * erfinv approximation (a = .147) as onnxruntime computes it:
	 * p = .8 -> .841756 (exact .841621), p = .3 -> -.524446;
	 * SOFTMAX_ZERO of [0, 1, 2] keeps the zero: [0, e^-1, 1] / (1 + e^-1) */
	tm_init(m, "p", IR_DTYPE_FLOAT, TM_DIMS(1, 2), 2, F(0.8, 0.3));
	tm_init(m, "z", IR_DTYPE_FLOAT, TM_DIMS(1, 3), 2, F(0, 1, 2));
	n = tm_node(m, "LinearRegressor", ML, TM_NAMES("p"), 1, TM_NAMES("a"), 1);
	ir_node_set_floats(n, "coefficients", FL(1, 0, 0, 1), 4);
	ir_node_set_int(n, "targets", 2);
	ir_node_set_string(n, "post_transform", "PROBIT");
	n = tm_node(m, "LinearRegressor", ML, TM_NAMES("z"), 1, TM_NAMES("b"), 1);
	ir_node_set_floats(n, "coefficients", FL(1, 0, 0, 0, 1, 0, 0, 0, 1), 9);
	ir_node_set_int(n, "targets", 3);
	ir_node_set_string(n, "post_transform", "SOFTMAX_ZERO");
	CU_ASSERT_FATAL(run(m, TM_NAMES("a", "b"), 2, y) == 0);
	expect_f(y[0], F(0.841756, -0.524446), 2, 1e-6);
	expect_f(y[1], F(0, 0.268941, 0.731059), 3, 1e-6);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);
}

static void test_trees(void)
{
	struct ir_model *m;
	struct rt_value *y[2] = { 0 };
	struct ir_node *n;

	/* tree 0: x0 <= .5 ? leaf 1 (w 1) : leaf 2 (w 2); tree 1: a single
	 * leaf (w 10).  SUM + base 100: x0 = 0 -> 111, x0 = 1 -> 112.
	 * AVERAGE: (1 + 10) / 2 + 100 = 105.5, (2 + 10) / 2 + 100 = 106 */
	for (int avg = 0; avg < 2; avg++) {
		m = mk(13);
		tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 1), 2, F(0, 1));
		n = tm_node(m, "TreeEnsembleRegressor", ML, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
		ir_node_set_ints(n, "nodes_treeids", I64(0, 0, 0, 1), 4);
		ir_node_set_ints(n, "nodes_nodeids", I64(0, 1, 2, 0), 4);
		ir_node_set_ints(n, "nodes_featureids", I64(0, 0, 0, 0), 4);
		ir_node_set_floats(n, "nodes_values", FL(0.5f, 0, 0, 0), 4);
		set_strs(n, "nodes_modes", S("BRANCH_LEQ", "LEAF", "LEAF", "LEAF"), 4);
		ir_node_set_ints(n, "nodes_truenodeids", I64(1, 0, 0, 0), 4);
		ir_node_set_ints(n, "nodes_falsenodeids", I64(2, 0, 0, 0), 4);
		ir_node_set_ints(n, "target_treeids", I64(0, 0, 1), 3);
		ir_node_set_ints(n, "target_nodeids", I64(1, 2, 0), 3);
		ir_node_set_ints(n, "target_ids", I64(0, 0, 0), 3);
		ir_node_set_floats(n, "target_weights", FL(1, 2, 10), 3);
		ir_node_set_floats(n, "base_values", FL(100), 1);
		ir_node_set_int(n, "n_targets", 1);
		if (avg)
			ir_node_set_string(n, "aggregate_function", "AVERAGE");
		CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
		expect_f(y[0], avg ? F(105.5, 106) : F(111, 112), 2, 1e-5);
		rt_value_unref(y[0]);
	}

	/* classifier, 3 string labels: x0 < 1 ? leaf (class 0: .7, class 1:
	 * .3) : leaf (class 2: 1) */
	m = mk(13);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 1), 2, F(0, 5));
	n = tm_node(m, "TreeEnsembleClassifier", ML, TM_NAMES("x"), 1, TM_NAMES("l", "z"), 2);
	ir_node_set_ints(n, "nodes_treeids", I64(0, 0, 0), 3);
	ir_node_set_ints(n, "nodes_nodeids", I64(0, 1, 2), 3);
	ir_node_set_ints(n, "nodes_featureids", I64(0, 0, 0), 3);
	ir_node_set_floats(n, "nodes_values", FL(1, 0, 0), 3);
	set_strs(n, "nodes_modes", S("BRANCH_LT", "LEAF", "LEAF"), 3);
	ir_node_set_ints(n, "nodes_truenodeids", I64(1, 0, 0), 3);
	ir_node_set_ints(n, "nodes_falsenodeids", I64(2, 0, 0), 3);
	ir_node_set_ints(n, "class_treeids", I64(0, 0, 0), 3);
	ir_node_set_ints(n, "class_nodeids", I64(1, 1, 2), 3);
	ir_node_set_ints(n, "class_ids", I64(0, 1, 2), 3);
	ir_node_set_floats(n, "class_weights", FL(0.7f, 0.3f, 1), 3);
	set_strs(n, "classlabels_strings", S("a", "b", "c"), 3);
	CU_ASSERT_FATAL(run(m, TM_NAMES("l", "z"), 2, y) == 0);
	expect_s(y[0], S("a", "c"), 2);
	expect_f(y[1], F(0.7, 0.3, 0, 0, 0, 1), 6, 1e-6);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);

	/* binary classifier (every vote on class 0): s = .8 -> scores
	 * [1 - s, s] = [.2, .8], label 1; s = .3 -> [.7, .3], label 0 */
	m = mk(13);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 1), 2, F(0, 5));
	n = tm_node(m, "TreeEnsembleClassifier", ML, TM_NAMES("x"), 1, TM_NAMES("l", "z"), 2);
	ir_node_set_ints(n, "nodes_treeids", I64(0, 0, 0), 3);
	ir_node_set_ints(n, "nodes_nodeids", I64(0, 1, 2), 3);
	ir_node_set_ints(n, "nodes_featureids", I64(0, 0, 0), 3);
	ir_node_set_floats(n, "nodes_values", FL(1, 0, 0), 3);
	set_strs(n, "nodes_modes", S("BRANCH_LT", "LEAF", "LEAF"), 3);
	ir_node_set_ints(n, "nodes_truenodeids", I64(1, 0, 0), 3);
	ir_node_set_ints(n, "nodes_falsenodeids", I64(2, 0, 0), 3);
	ir_node_set_ints(n, "class_treeids", I64(0, 0), 2);
	ir_node_set_ints(n, "class_nodeids", I64(1, 2), 2);
	ir_node_set_ints(n, "class_ids", I64(0, 0), 2);
	ir_node_set_floats(n, "class_weights", FL(0.8f, 0.3f), 2);
	ir_node_set_ints(n, "classlabels_int64s", I64(0, 1), 2);
	CU_ASSERT_FATAL(run(m, TM_NAMES("l", "z"), 2, y) == 0);
	expect_f(y[0], F(1, 0), 2, 0);
	expect_f(y[1], F(0.2, 0.8, 0.7, 0.3), 4, 1e-6);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);

	/* TreeEnsemble 5: node 0: x0 in {1, 3} ? leaf 0 (target 0, w 5) :
	 * node 1: x0 > 2.5 ? leaf 1 (w 7) : leaf 2 (w 9); NaN tracks true.
	 * x = 1, 2, 3, 4, NaN -> 5, 9, 5, 7, 5 */
	m = mk(13);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(5, 1), 2, F(1, 2, 3, 4, NAN));
	n = tm_node(m, "TreeEnsemble", ML, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	ir_node_set_ints(n, "nodes_featureids", I64(0, 0), 2);
	set_tensor_f(n, "nodes_splits", IR_DTYPE_FLOAT, F(0, 2.5), 2);
	set_tensor_f(n, "nodes_modes", IR_DTYPE_UINT8, F(6, 3), 2);
	set_tensor_f(n, "membership_values", IR_DTYPE_FLOAT, F(1, 3, NAN), 3);
	ir_node_set_ints(n, "nodes_truenodeids", I64(0, 1), 2);
	ir_node_set_ints(n, "nodes_trueleafs", I64(1, 1), 2);
	ir_node_set_ints(n, "nodes_falsenodeids", I64(1, 2), 2);
	ir_node_set_ints(n, "nodes_falseleafs", I64(0, 1), 2);
	ir_node_set_ints(n, "nodes_missing_value_tracks_true", I64(1, 0), 2);
	ir_node_set_ints(n, "leaf_targetids", I64(0, 0, 0), 3);
	set_tensor_f(n, "leaf_weights", IR_DTYPE_FLOAT, F(5, 7, 9), 3);
	ir_node_set_ints(n, "tree_roots", I64(0), 1);
	ir_node_set_int(n, "n_targets", 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_f(y[0], F(5, 9, 5, 7, 5), 5, 0);
	rt_value_unref(y[0]);
}

/* The two TreeEnsemble cases of the ONNX backend tests (newer than the
 * data here), with the expected values they state. */
static void test_tree_ensemble_onnx_cases(void)
{
	struct ir_model *m = mk(13);
	struct rt_value *y[1] = { 0 };
	struct ir_node *n;

	tm_init(m, "x", IR_DTYPE_DOUBLE, TM_DIMS(3, 2), 2, F(1.2, 3.4, -0.12, 1.66, 4.14, 1.77));
	n = tm_node(m, "TreeEnsemble", ML, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	ir_node_set_int(n, "n_targets", 2);
	ir_node_set_int(n, "aggregate_function", 1);
	ir_node_set_ints(n, "tree_roots", I64(0), 1);
	set_tensor_f(n, "nodes_modes", IR_DTYPE_UINT8, F(0, 0, 0), 3);
	ir_node_set_ints(n, "nodes_featureids", I64(0, 0, 0), 3);
	set_tensor_f(n, "nodes_splits", IR_DTYPE_DOUBLE, F(3.14, 1.2, 4.2), 3);
	ir_node_set_ints(n, "nodes_truenodeids", I64(1, 0, 1), 3);
	ir_node_set_ints(n, "nodes_trueleafs", I64(0, 1, 1), 3);
	ir_node_set_ints(n, "nodes_falsenodeids", I64(2, 2, 3), 3);
	ir_node_set_ints(n, "nodes_falseleafs", I64(0, 1, 1), 3);
	ir_node_set_ints(n, "leaf_targetids", I64(0, 1, 0, 1), 4);
	set_tensor_f(n, "leaf_weights", IR_DTYPE_DOUBLE, F(5.23, 12.12, -12.23, 7.21), 4);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	CU_ASSERT_EQUAL(y[0]->dtype, IR_DTYPE_DOUBLE);
	expect_f(y[0], F(5.23, 0, 5.23, 0, 0, 12.12), 6, 1e-12);
	rt_value_unref(y[0]);

	m = mk(13);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(6, 1), 2, F(1.2, 3.4, -0.12, NAN, 12, 7));
	n = tm_node(m, "TreeEnsemble", ML, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	ir_node_set_int(n, "n_targets", 4);
	ir_node_set_int(n, "aggregate_function", 1);
	set_tensor_f(n, "membership_values", IR_DTYPE_FLOAT, F(1.2, 3.7, 8, 9, NAN, 12, 7, NAN), 8);
	ir_node_set_ints(n, "tree_roots", I64(0), 1);
	set_tensor_f(n, "nodes_modes", IR_DTYPE_UINT8, F(0, 6, 6), 3);
	ir_node_set_ints(n, "nodes_featureids", I64(0, 0, 0), 3);
	set_tensor_f(n, "nodes_splits", IR_DTYPE_FLOAT, F(11, 232344.0, NAN), 3);
	ir_node_set_ints(n, "nodes_trueleafs", I64(0, 1, 1), 3);
	ir_node_set_ints(n, "nodes_truenodeids", I64(1, 0, 1), 3);
	ir_node_set_ints(n, "nodes_falseleafs", I64(1, 0, 1), 3);
	ir_node_set_ints(n, "nodes_falsenodeids", I64(2, 2, 3), 3);
	ir_node_set_ints(n, "leaf_targetids", I64(0, 1, 2, 3), 4);
	set_tensor_f(n, "leaf_weights", IR_DTYPE_FLOAT, F(1, 10, 1000, 100), 4);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_f(y[0], F(1, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 100, 0, 0, 1000, 0, 0, 0, 1000, 0,
			 0, 10, 0, 0), 24, 0);
	rt_value_unref(y[0]);
}

static void test_svm(void)
{
	struct ir_model *m = mk(13);
	struct rt_value *y[2] = { 0 };
	struct ir_node *n;

	/* linear regressor: [1,2] . [2,1] + .5 = 4.5; RBF with one support
	 * vector [0,0], gamma 1: exp(-(1 + 1)) = 0.135335 */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2), 2, F(1, 2));
	n = tm_node(m, "SVMRegressor", ML, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	ir_node_set_floats(n, "coefficients", FL(2, 1), 2);
	ir_node_set_floats(n, "rho", FL(0.5f), 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_f(y[0], F(4.5), 1, 1e-6);
	rt_value_unref(y[0]);

	m = mk(13);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2), 2, F(1, 1));
	n = tm_node(m, "SVMRegressor", ML, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	ir_node_set_string(n, "kernel_type", "RBF");
	ir_node_set_floats(n, "kernel_params", FL(1, 0, 0), 3);
	ir_node_set_floats(n, "support_vectors", FL(0, 0), 2);
	ir_node_set_floats(n, "coefficients", FL(1), 1);
	ir_node_set_int(n, "n_supports", 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("y"), 1, y) == 0);
	expect_f(y[0], F(0.135335283), 1, 1e-7);
	rt_value_unref(y[0]);

	/* SVC, two classes with one support vector each ([0] and [2]),
	 * linear kernel, coefficients [1, -1], rho 1:
	 * d(x) = 1 * (x * 0) - 1 * (x * 2) + 1 = 1 - 2x; d > 0 votes class 0.
	 * x = 0 -> d 1 (label 5); x = 1 -> d -1 (label 7).  One rho, two
	 * labels: the single decision comes out as the pair [-d, d] */
	m = mk(13);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 1), 2, F(0, 1));
	n = tm_node(m, "SVMClassifier", ML, TM_NAMES("x"), 1, TM_NAMES("l", "z"), 2);
	ir_node_set_ints(n, "vectors_per_class", I64(1, 1), 2);
	ir_node_set_floats(n, "support_vectors", FL(0, 2), 2);
	ir_node_set_floats(n, "coefficients", FL(1, -1), 2);
	ir_node_set_floats(n, "rho", FL(1), 1);
	ir_node_set_ints(n, "classlabels_ints", I64(5, 7), 2);
	CU_ASSERT_FATAL(run(m, TM_NAMES("l", "z"), 2, y) == 0);
	expect_f(y[0], F(5, 7), 2, 0);
	expect_f(y[1], F(-1, 1, 1, -1), 4, 1e-6);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);

	/* same with Platt scaling A = -1, B = 0: p(class 0) = 1 / (1 + e^-d);
	 * two classes couple to exactly (p, 1 - p): d = 1 -> .731059 */
	m = mk(13);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1), 2, F(0));
	n = tm_node(m, "SVMClassifier", ML, TM_NAMES("x"), 1, TM_NAMES("l", "z"), 2);
	ir_node_set_ints(n, "vectors_per_class", I64(1, 1), 2);
	ir_node_set_floats(n, "support_vectors", FL(0, 2), 2);
	ir_node_set_floats(n, "coefficients", FL(1, -1), 2);
	ir_node_set_floats(n, "rho", FL(1), 1);
	ir_node_set_floats(n, "prob_a", FL(-1), 1);
	ir_node_set_floats(n, "prob_b", FL(0), 1);
	ir_node_set_ints(n, "classlabels_ints", I64(5, 7), 2);
	CU_ASSERT_FATAL(run(m, TM_NAMES("l", "z"), 2, y) == 0);
	expect_f(y[0], F(5), 1, 0);
	expect_f(y[1], F(0.731059, 0.268941), 2, 1e-5);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);
}

static void test_ml_preprocessing(void)
{
	struct ir_model *m = mk(13);
	struct rt_value *y[8] = { 0 };
	struct ir_node *n;

	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, F(3, 4, 0, -2));
	/* Binarizer(threshold 0): 1 1 0 0 */
	tm_node(m, "Binarizer", ML, TM_NAMES("x"), 1, TM_NAMES("bin"), 1);
	/* Normalizer L2: [3,4]/5, [0,-2]/2 */
	n = tm_node(m, "Normalizer", ML, TM_NAMES("x"), 1, TM_NAMES("nrm"), 1);
	ir_node_set_string(n, "norm", "L2");
	/* Scaler: (x - [1, 2]) * [2, .5] */
	n = tm_node(m, "Scaler", ML, TM_NAMES("x"), 1, TM_NAMES("sc"), 1);
	ir_node_set_floats(n, "offset", FL(1, 2), 2);
	ir_node_set_floats(n, "scale", FL(2, 0.5f), 2);
	/* Imputer: 0 -> per-feature [7, 8] */
	n = tm_node(m, "Imputer", ML, TM_NAMES("x"), 1, TM_NAMES("imp"), 1);
	ir_node_set_floats(n, "imputed_value_floats", FL(7, 8), 2);
	ir_node_set_float(n, "replaced_value_float", 0);
	/* ArrayFeatureExtractor with indices [1, 1, 0] */
	tm_init(m, "idx", IR_DTYPE_INT64, TM_DIMS(3), 1, F(1, 1, 0));
	tm_node(m, "ArrayFeatureExtractor", ML, TM_NAMES("x", "idx"), 2, TM_NAMES("afe"), 1);
	/* FeatureVectorizer of x ([2,2]) and idx-as-rows?  two inputs of 2
	 * rows: x and x with inputdimensions [2, 1] (second truncated) */
	n = tm_node(m, "FeatureVectorizer", ML, TM_NAMES("x", "x"), 2, TM_NAMES("fv"), 1);
	ir_node_set_ints(n, "inputdimensions", I64(2, 1), 2);
	/* OneHotEncoder over ints [3, 9]: cats [9, 3, 1] */
	tm_init(m, "cat", IR_DTYPE_INT64, TM_DIMS(2), 1, F(3, 9));
	n = tm_node(m, "OneHotEncoder", ML, TM_NAMES("cat"), 1, TM_NAMES("oh"), 1);
	ir_node_set_ints(n, "cats_int64s", I64(9, 3, 1), 3);
	/* CategoryMapper int -> string with default */
	n = tm_node(m, "CategoryMapper", ML, TM_NAMES("cat"), 1, TM_NAMES("cm"), 1);
	ir_node_set_ints(n, "cats_int64s", I64(3), 1);
	set_strs(n, "cats_strings", S("three"), 1);
	ir_node_set_string(n, "default_string", "?");
	CU_ASSERT_FATAL(run(m, TM_NAMES("bin", "nrm", "sc", "imp", "afe", "fv", "oh", "cm"), 8,
			    y) == 0);
	expect_f(y[0], F(1, 1, 0, 0), 4, 0);
	expect_f(y[1], F(0.6, 0.8, 0, -1), 4, 1e-6);
	expect_f(y[2], F(4, 1, -2, -2), 4, 1e-6);
	expect_f(y[3], F(3, 4, 7, -2), 4, 0);
	expect_dims(y[4], 2, TM_DIMS(2, 3));
	expect_f(y[4], F(4, 4, 3, -2, -2, 0), 6, 0);
	expect_dims(y[5], 2, TM_DIMS(2, 3));
	expect_f(y[5], F(3, 4, 3, 0, -2, 0), 6, 0);
	expect_dims(y[6], 2, TM_DIMS(2, 3));
	expect_f(y[6], F(0, 1, 0, 1, 0, 0), 6, 0);
	expect_s(y[7], S("three", "?"), 2);
	for (int i = 0; i < 8; i++)
		rt_value_unref(y[i]);

	/* CategoryMapper string -> int over an unsorted vocabulary */
	m = mk(13);
	init_s(m, "s", TM_DIMS(4), 1, S("b", "zz", "c", "a"));
	n = tm_node(m, "CategoryMapper", ML, TM_NAMES("s"), 1, TM_NAMES("cm"), 1);
	set_strs(n, "cats_strings", S("c", "a", "b"), 3);
	ir_node_set_ints(n, "cats_int64s", I64(30, 10, 20), 3);
	ir_node_set_int(n, "default_int64", -5);
	CU_ASSERT_FATAL(run(m, TM_NAMES("cm"), 1, y) == 0);
	expect_f(y[0], F(20, -5, 30, 10), 4, 0);
	rt_value_unref(y[0]);
}

static void test_label_encoder_zipmap(void)
{
	struct ir_model *m = mk(13);
	struct rt_value *y[3] = { 0 };
	struct ir_node *n;
	struct rt_value *map;

	/* v2: strings -> ints, unknown -> default_int64 */
	init_s(m, "s", TM_DIMS(3), 1, S("Sally", "Dori", "Amy"));
	n = tm_node(m, "LabelEncoder", ML, TM_NAMES("s"), 1, TM_NAMES("le"), 1);
	set_strs(n, "keys_strings", S("Amy", "Sally"), 2);
	ir_node_set_ints(n, "values_int64s", I64(5, 6), 2);
	ir_node_set_int(n, "default_int64", -9);
	/* ZipMap of two rows over labels [10, 20] */
	tm_init(m, "p", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, F(0.25, 0.75, 1, 0));
	n = tm_node(m, "ZipMap", ML, TM_NAMES("p"), 1, TM_NAMES("zm"), 1);
	ir_node_set_ints(n, "classlabels_int64s", I64(10, 20), 2);
	/* DictVectorizer of that sequence of maps, vocabulary [20, 10, 30]:
	 * rows [.75, .25, 0] and [0, 1, 0] */
	n = tm_node(m, "DictVectorizer", ML, TM_NAMES("zm"), 1, TM_NAMES("dv"), 1);
	ir_node_set_ints(n, "int64_vocabulary", I64(20, 10, 30), 3);
	CU_ASSERT_FATAL(run(m, TM_NAMES("le", "zm", "dv"), 3, y) == 0);
	expect_dims(y[2], 2, TM_DIMS(2, 3));
	expect_f(y[2], F(0.75, 0.25, 0, 0, 1, 0), 6, 0);
	rt_value_unref(y[2]);
	expect_f(y[0], F(6, -9, 5), 3, 0);
	CU_ASSERT_FATAL(y[1]->kind == RT_SEQUENCE && y[1]->n == 2);
	map = y[1]->items[1];
	CU_ASSERT_FATAL(map->kind == RT_MAP && map->n == 2);
	expect_f(map->items[0], F(10, 20), 2, 0);
	expect_f(map->items[1], F(1, 0), 2, 0);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);

	/* v4 tensor forms (the ONNX case label_encoder_tensor_mapping, whose
	 * attributes are spelt *_as_tensor): strings -> int16, default 42 */
	m = mk(13);
	m->opsets[1].version = 4;
	init_s(m, "s", TM_DIMS(5), 1, S("a", "b", "d", "c", "g"));
	n = tm_node(m, "LabelEncoder", ML, TM_NAMES("s"), 1, TM_NAMES("le"), 1);
	set_tensor_s(n, "keys_as_tensor", S("a", "b", "c"), 3);
	set_tensor_f(n, "values_as_tensor", IR_DTYPE_INT16, F(0, 1, 2), 3);
	set_tensor_f(n, "default_as_tensor", IR_DTYPE_INT16, F(42), 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("le"), 1, y) == 0);
	CU_ASSERT_EQUAL(y[0]->dtype, IR_DTYPE_INT16);
	expect_f(y[0], F(0, 1, 42, 2, 42), 5, 0);
	rt_value_unref(y[0]);

	/* v4: float keys (NaN matches NaN bitwise) -> strings */
	m = mk(13);
	m->opsets[1].version = 4;
	tm_init(m, "f", IR_DTYPE_FLOAT, TM_DIMS(3), 1, F(NAN, 1.5, 2));
	n = tm_node(m, "LabelEncoder", ML, TM_NAMES("f"), 1, TM_NAMES("le"), 1);
	ir_node_set_floats(n, "keys_floats", FL(1.5f, NAN), 2);
	set_strs(n, "values_strings", S("one", "nan"), 2);
	CU_ASSERT_FATAL(run(m, TM_NAMES("le"), 1, y) == 0);
	expect_s(y[0], S("nan", "one", "_Unused"), 3);
	rt_value_unref(y[0]);
}

/* ---- ImageDecoder ---------------------------------------------------------- */

static void test_image_decoder(void)
{
	/* P6, 2x1, maxval 255: red then (10, 20, 30) */
	static const uint8_t ppm[] = "P6\n# c\n2 1\n255\n\xff\x00\x00\x0a\x14\x1e";
	/* BMP, 1x2 bottom-up 24-bit: bottom row blue (BGR ff 00 00), top row
	 * green; rows padded to 4 bytes */
	uint8_t bmp[62] = { 'B', 'M' };
	static const uint8_t jpg[] = "\xff\xd8\xff\xe0\0\x10JFIF";
	struct ir_model *m = mk(20);
	struct rt_value *y[3] = { 0 };
	struct ir_node *n;

	bmp[10] = 54;
	bmp[14] = 40;
	bmp[18] = 1;
	bmp[22] = 2;
	bmp[26] = 1;
	bmp[28] = 24;
	bmp[54] = 0xff;               /* bottom row: B=ff G=0 R=0 */
	bmp[58 + 1] = 0xff;           /* top row: G=ff */
	init_raw(m, "ppm", IR_DTYPE_UINT8, TM_DIMS(sizeof(ppm) - 1), 1, ppm, sizeof(ppm) - 1);
	init_raw(m, "bmp", IR_DTYPE_UINT8, TM_DIMS(sizeof(bmp)), 1, bmp, sizeof(bmp));
	tm_node(m, "ImageDecoder", NULL, TM_NAMES("ppm"), 1, TM_NAMES("a"), 1);
	n = tm_node(m, "ImageDecoder", NULL, TM_NAMES("ppm"), 1, TM_NAMES("g"), 1);
	ir_node_set_string(n, "pixel_format", "Grayscale");
	n = tm_node(m, "ImageDecoder", NULL, TM_NAMES("bmp"), 1, TM_NAMES("b"), 1);
	ir_node_set_string(n, "pixel_format", "BGR");
	CU_ASSERT_FATAL(run(m, TM_NAMES("a", "g", "b"), 3, y) == 0);
	expect_dims(y[0], 3, TM_DIMS(1, 2, 3));
	expect_f(y[0], F(255, 0, 0, 10, 20, 30), 6, 0);
	/* luma .299 R + .587 G + .114 B: 76.245 -> 76; 2.99 + 11.74 + 3.42 = 18.15 -> 18 */
	expect_f(y[1], F(76, 18), 2, 0);
	/* top row first: green (BGR 0 ff 0), then blue (BGR ff 0 0) */
	expect_dims(y[2], 3, TM_DIMS(2, 1, 3));
	expect_f(y[2], F(0, 255, 0, 255, 0, 0), 6, 0);
	for (int i = 0; i < 3; i++)
		rt_value_unref(y[i]);

	m = mk(20);
	init_raw(m, "jpg", IR_DTYPE_UINT8, TM_DIMS(sizeof(jpg) - 1), 1, jpg, sizeof(jpg) - 1);
	tm_node(m, "ImageDecoder", NULL, TM_NAMES("jpg"), 1, TM_NAMES("a"), 1);
	CU_ASSERT(run_fails(m, "a", "JPEG images cannot be decoded"));
}

/* Test images written by Python's zlib and struct (not decoded by any
 * image library): png_dyn is 16x16 RGB, pixel (r, c) = (16r + c, 255 - 3c,
 * 7r), row r filtered with type r % 5, one dynamic-Huffman deflate block;
 * png_pal_stored is 3x2, 4-bit palette [red, green, blue], indices
 * [[0,1,2],[2,2,1]], a stored deflate block; tiff_rgb is 2x2 uncompressed
 * little-endian RGB in two strips, pixels 1..12. */
static const uint8_t png_dyn[306] = {
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
	0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x10,
	0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x91, 0x68, 0x36, 0x00, 0x00, 0x00,
	0xf9, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0xb5, 0xcf, 0x49, 0x4a, 0xc4,
	0x50, 0x14, 0x46, 0xe1, 0xff, 0x55, 0x45, 0x63, 0xd9, 0x94, 0xb5, 0x84,
	0x82, 0x3b, 0x73, 0xe6, 0x26, 0x2e, 0x4e, 0x04, 0xfb, 0x52, 0xcb, 0x6e,
	0x7a, 0x67, 0x2e, 0x21, 0x4b, 0xb1, 0xef, 0xbb, 0xb5, 0x04, 0x02, 0x81,
	0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0xb1, 0xa2, 0xd1, 0xe8, 0x2b, 0x9f,
	0x2e, 0x21, 0x0e, 0x02, 0xdf, 0xf4, 0x0c, 0x0e, 0x60, 0xa0, 0x34, 0x5a,
	0x15, 0xda, 0x25, 0xac, 0x02, 0x13, 0x39, 0x26, 0x33, 0xd8, 0x29, 0xa6,
	0x12, 0x74, 0x62, 0x4c, 0x47, 0x98, 0x09, 0x31, 0x1b, 0x60, 0xce, 0x47,
	0xd7, 0xc3, 0xbc, 0x0b, 0xd5, 0x33, 0xb6, 0x1a, 0xa3, 0xbe, 0x56, 0x0f,
	0xf6, 0xbf, 0xb4, 0xfb, 0x4e, 0xb7, 0x63, 0xac, 0xfa, 0xac, 0xbf, 0x48,
	0x01, 0xf5, 0x61, 0xc5, 0xd0, 0xaa, 0xa6, 0xb5, 0x8a, 0xd6, 0x4b, 0xda,
	0x28, 0x68, 0x33, 0xa7, 0xad, 0x8c, 0x06, 0x29, 0x6d, 0x27, 0xb4, 0x13,
	0xd3, 0x6e, 0x44, 0xc3, 0x90, 0xf6, 0x02, 0xda, 0xf7, 0xe9, 0xc0, 0xa3,
	0x43, 0x97, 0xd4, 0x91, 0x59, 0x68, 0x78, 0x7a, 0xc9, 0xe9, 0x37, 0x3c,
	0x7d, 0x62, 0xf8, 0x54, 0xf3, 0x59, 0xc5, 0xe7, 0x25, 0x5f, 0x14, 0x7c,
	0x99, 0xf3, 0x55, 0xc6, 0xd7, 0x29, 0xdf, 0x24, 0x7c, 0x1b, 0xf3, 0x5d,
	0xc4, 0xf7, 0x21, 0x3f, 0x04, 0xfc, 0xe8, 0xf3, 0x93, 0xc7, 0xcf, 0x2e,
	0xab, 0x17, 0xb3, 0xdc, 0xf0, 0xf4, 0xb1, 0xb3, 0xd8, 0xf0, 0x74, 0x6e,
	0xe4, 0x55, 0xcb, 0xa8, 0x92, 0xa2, 0x94, 0xb7, 0x42, 0xde, 0x73, 0x29,
	0x33, 0xf9, 0x48, 0xe5, 0x33, 0x91, 0x2a, 0x96, 0xaf, 0x48, 0xbe, 0x43,
	0xd1, 0x81, 0x8c, 0x7d, 0xf9, 0xf1, 0xc4, 0xb8, 0xf2, 0x0b, 0x7b, 0xe5,
	0xcf, 0x15, 0xd5, 0x8d, 0x69, 0x6c, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
	0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};
static const uint8_t png_pal_stored[95] = {
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
	0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x02,
	0x04, 0x03, 0x00, 0x00, 0x00, 0x6f, 0x5a, 0x7b, 0x29, 0x00, 0x00, 0x00,
	0x09, 0x50, 0x4c, 0x54, 0x45, 0xff, 0x00, 0x00, 0x00, 0xff, 0x00, 0x00,
	0x00, 0xff, 0x2d, 0x4a, 0xcd, 0x8a, 0x00, 0x00, 0x00, 0x11, 0x49, 0x44,
	0x41, 0x54, 0x78, 0x01, 0x01, 0x06, 0x00, 0xf9, 0xff, 0x00, 0x01, 0x20,
	0x00, 0x22, 0x10, 0x00, 0xdf, 0x00, 0x54, 0xf1, 0x04, 0xbb, 0x94, 0x00,
	0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};
static const uint8_t tiff_rgb[168] = {
	0x49, 0x49, 0x2a, 0x00, 0x14, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04,
	0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0a, 0x00, 0x00, 0x01,
	0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x01,
	0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x01,
	0x03, 0x00, 0x03, 0x00, 0x00, 0x00, 0x92, 0x00, 0x00, 0x00, 0x03, 0x01,
	0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x01,
	0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x11, 0x01,
	0x04, 0x00, 0x02, 0x00, 0x00, 0x00, 0x98, 0x00, 0x00, 0x00, 0x15, 0x01,
	0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x16, 0x01,
	0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x17, 0x01,
	0x04, 0x00, 0x02, 0x00, 0x00, 0x00, 0xa0, 0x00, 0x00, 0x00, 0x1c, 0x01,
	0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x08, 0x00, 0x08, 0x00, 0x08, 0x00, 0x08, 0x00, 0x00, 0x00,
	0x0e, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00,
};

static void test_image_decoder_png_tiff(void)
{
	struct ir_model *m = mk(20);
	struct rt_value *y[3] = { 0 };
	double want[16 * 16 * 3];

	init_raw(m, "p", IR_DTYPE_UINT8, TM_DIMS(sizeof(png_dyn)), 1, png_dyn, sizeof(png_dyn));
	init_raw(m, "q", IR_DTYPE_UINT8, TM_DIMS(sizeof(png_pal_stored)), 1, png_pal_stored,
		 sizeof(png_pal_stored));
	init_raw(m, "t", IR_DTYPE_UINT8, TM_DIMS(sizeof(tiff_rgb)), 1, tiff_rgb, sizeof(tiff_rgb));
	tm_node(m, "ImageDecoder", NULL, TM_NAMES("p"), 1, TM_NAMES("a"), 1);
	tm_node(m, "ImageDecoder", NULL, TM_NAMES("q"), 1, TM_NAMES("b"), 1);
	tm_node(m, "ImageDecoder", NULL, TM_NAMES("t"), 1, TM_NAMES("c"), 1);
	CU_ASSERT_FATAL(run(m, TM_NAMES("a", "b", "c"), 3, y) == 0);
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < 16; c++) {
			want[(r * 16 + c) * 3] = (16 * r + c) & 255;
			want[(r * 16 + c) * 3 + 1] = (255 - 3 * c) & 255;
			want[(r * 16 + c) * 3 + 2] = (7 * r) & 255;
		}
	expect_dims(y[0], 3, TM_DIMS(16, 16, 3));
	expect_f(y[0], want, 16 * 16 * 3, 0);
	expect_dims(y[1], 3, TM_DIMS(2, 3, 3));
	expect_f(y[1], F(255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 255, 0), 18, 0);
	expect_dims(y[2], 3, TM_DIMS(2, 2, 3));
	expect_f(y[2], F(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), 12, 0);
	for (int i = 0; i < 3; i++)
		rt_value_unref(y[i]);

	/* every truncation of the streams fails with an error, never a crash
	 * or a read past the end (run under the sanitizers); a PNG missing
	 * only its 12-byte IEND chunk still decodes */
	for (size_t len = 8; len < sizeof(png_dyn) - 12; len += 7) {
		m = mk(20);
		init_raw(m, "p", IR_DTYPE_UINT8, TM_DIMS((int64_t)len), 1, png_dyn, len);
		tm_node(m, "ImageDecoder", NULL, TM_NAMES("p"), 1, TM_NAMES("a"), 1);
		CU_ASSERT(run_fails(m, "a", "PNG"));
	}
	for (size_t len = 8; len < sizeof(tiff_rgb); len += 5) {
		m = mk(20);
		init_raw(m, "t", IR_DTYPE_UINT8, TM_DIMS((int64_t)len), 1, tiff_rgb, len);
		tm_node(m, "ImageDecoder", NULL, TM_NAMES("t"), 1, TM_NAMES("a"), 1);
		CU_ASSERT(run_fails(m, "a", "TIFF"));
	}
}

/* ---- coverage ------------------------------------------------------------ */

static void test_every_version_has_a_kernel(void)
{
	static const char *const onnx_ops[] = {
		"Bernoulli", "BlackmanWindow", "DFT", "HammingWindow", "HannWindow",
		"ImageDecoder", "MaxRoiPool", "MelWeightMatrix", "Multinomial",
		"NonMaxSuppression", "RandomNormal", "RandomNormalLike", "RandomUniform",
		"RandomUniformLike", "RegexFullMatch", "RoiAlign", "STFT", "StringConcat",
		"StringNormalizer", "StringSplit", "TfIdfVectorizer",
	};
	static const char *const ml_ops[] = {
		"ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper",
		"DictVectorizer", "FeatureVectorizer", "Imputer", "LabelEncoder",
		"LinearClassifier", "LinearRegressor", "Normalizer", "OneHotEncoder",
		"SVMClassifier", "SVMRegressor", "Scaler", "TreeEnsemble",
		"TreeEnsembleClassifier", "TreeEnsembleRegressor", "ZipMap",
	};
	static const char *const train_ops[] = { "Adagrad", "Adam", "Gradient", "Momentum" };
	const struct {
		const char *domain;
		const char *const *ops;
		size_t n;
	} groups[] = {
		{ "ai.onnx", onnx_ops, sizeof(onnx_ops) / sizeof(onnx_ops[0]) },
		{ "ai.onnx.ml", ml_ops, sizeof(ml_ops) / sizeof(ml_ops[0]) },
		{ "ai.onnx.preview.training", train_ops, sizeof(train_ops) / sizeof(train_ops[0]) },
	};

	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		for (size_t i = 0; i < groups[g].n; i++) {
			const struct ir_op_schema *first;
			size_t nv = ir_registry_versions(groups[g].domain, groups[g].ops[i], &first);

			CU_ASSERT(nv > 0);
			for (size_t v = 0; v < nv; v++) {
				const struct rt_kernel *k = rt_kernel_find(groups[g].domain,
									   groups[g].ops[i],
									   first[v].since_version);

				if (!k)
					fprintf(stderr, "\nno kernel for %s %s %d\n", groups[g].domain,
						groups[g].ops[i], first[v].since_version);
				CU_ASSERT(k != NULL);
			}
		}
}

static const struct unit_test tests[] = {
	{ "every_version_has_a_kernel", test_every_version_has_a_kernel },
	{ "string_normalizer", test_string_normalizer },
	{ "string_split_concat", test_string_split_concat },
	{ "regex_full_match", test_regex_full_match },
	{ "tfidf", test_tfidf },
	{ "dft", test_dft },
	{ "windows_stft_mel", test_windows_stft_mel },
	{ "nms", test_nms },
	{ "roi", test_roi },
	{ "optimizers", test_optimizers },
	{ "gradient", test_gradient },
	{ "random", test_random },
	{ "linear_models", test_linear_models },
	{ "post_transforms", test_post_transforms },
	{ "trees", test_trees },
	{ "tree_ensemble_onnx_cases", test_tree_ensemble_onnx_cases },
	{ "svm", test_svm },
	{ "ml_preprocessing", test_ml_preprocessing },
	{ "label_encoder_zipmap", test_label_encoder_zipmap },
	{ "image_decoder", test_image_decoder },
	{ "image_decoder_png_tiff", test_image_decoder_png_tiff },
	{ NULL, NULL },
};

int suite_kmisc_register(void)
{
	return unit_add_suite("kmisc", tests);
}
