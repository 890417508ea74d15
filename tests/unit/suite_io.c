/* suite_io.c: unit tests of loading and saving: the sample model's contents
 * (counts checked against python-onnx by hand), typed-field decoding equal
 * to raw_data, external data views equal to the file bytes, in-process round
 * trips, allocation-failure injection, and the bad-input corpus messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/ir.h"
#include "tests/unit/suites.h"

static struct ir_model *load(const char *path)
{
	struct ir_model *m = NULL;
	struct ir_diag d;

	ir_diag_init(&d);
	if (ir_model_load(path, NULL, &m, &d) < 0)
		fprintf(stderr, "\n%s: %s\n", path, d.msg);
	return m;
}

static void test_sample(void)
{
	struct ir_model *m = load(TESTDATA("sample.onnx"));
	struct ir_summary s;
	struct ir_diag d;
	struct ir_node *iff = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL(m->ir_version, 8);
	CU_ASSERT_EQUAL(ir_model_opset(m, ""), 13);
	CU_ASSERT_EQUAL(ir_model_opset(m, "ai.onnx"), 13);
	CU_ASSERT_EQUAL(ir_model_opset(m, "com.opmig.sample"), 1);
	CU_ASSERT_EQUAL(m->graph->n_nodes, 16);
	CU_ASSERT_EQUAL(m->graph->n_inits, 10);
	CU_ASSERT_EQUAL(m->n_functions, 1);
	CU_ASSERT_STRING_EQUAL(m->graph->nodes[15]->op_type, "If");
	iff = m->graph->nodes[15];
	/* The If branches read values of the main graph. */
	for (size_t i = 0; i < iff->n_attrs; i++) {
		struct ir_graph *g = iff->attrs[i]->g;

		CU_ASSERT_PTR_NOT_NULL_FATAL(g);
		CU_ASSERT_PTR_EQUAL(g->parent, m->graph);
		CU_ASSERT_PTR_EQUAL(g->owner, iff);
		for (size_t k = 0; k < g->n_nodes; k++)
			for (size_t j = 0; j < g->nodes[k]->n_inputs; j++)
				CU_ASSERT_PTR_EQUAL(g->nodes[k]->inputs[j]->graph,
						    m->graph);
	}
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_model_summarize(m, &s, &d), 0);
	CU_ASSERT_EQUAL(s.n_nodes, 16 + s.n_sub_nodes);
	CU_ASSERT_TRUE(s.n_sub_nodes >= 2);
	CU_ASSERT_EQUAL(s.n_dyn, 1);
	CU_ASSERT_STRING_EQUAL(s.dyn[0], "N");
	ir_summary_release(&s);
	ir_model_free(m);
}

/* Every `<type>_typed` initializer of `path` decodes to the bytes of
 * `<type>_raw`; returns the number of pairs compared. */
static int typed_equals_raw(const char *path)
{
	struct ir_model *m = load(path);
	struct ir_diag d;
	int pairs = 0;

	if (!m)
		return -1;
	ir_diag_init(&d);
	for (size_t i = 0; i < m->graph->n_inits; i++) {
		struct ir_tensor *t = m->graph->inits[i], *r;
		const uint8_t *a, *b;
		size_t la, lb;
		char name[64];
		const char *us = strstr(ir_s(t->name), "_typed");

		if (!us || t->dtype == IR_DTYPE_STRING)
			continue;
		snprintf(name, sizeof(name), "%.*s_raw", (int)(us - t->name), t->name);
		r = ir_graph_find(m->graph, name)->init;
		CU_ASSERT_PTR_NOT_NULL_FATAL(r);
		CU_ASSERT_EQUAL(t->storage, IR_STORE_TYPED);
		CU_ASSERT_EQUAL(r->storage, IR_STORE_RAW);
		CU_ASSERT_EQUAL_FATAL(ir_tensor_data(t, &a, &la, &d), 0);
		CU_ASSERT_EQUAL_FATAL(ir_tensor_data(r, &b, &lb, &d), 0);
		CU_ASSERT_EQUAL(la, lb);
		if (la == lb && memcmp(a, b, la) != 0)
			CU_FAIL(name);
		pairs++;
	}
	ir_model_free(m);
	return pairs;
}

static void test_typed_equals_raw(void)
{
	CU_ASSERT_EQUAL(typed_equals_raw(TESTDATA("models/dtypes.onnx")), 15);
	/* float8 x4, uint4/int4/float4e2m1 packed two per byte */
	CU_ASSERT_EQUAL(typed_equals_raw(TESTDATA("models/newer_dtypes.onnx")), 7);
}

static void test_external_view(void)
{
	struct ir_model *m = load(TESTDATA("ext/model.onnx"));
	uint8_t file[256];
	struct ir_diag d;
	FILE *f = fopen(TESTDATA("ext/weights.bin"), "rb");
	size_t n, len;
	const uint8_t *p;
	int seen = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	n = fread(file, 1, sizeof(file), f);
	fclose(f);
	ir_diag_init(&d);
	for (size_t i = 0; i < m->graph->n_inits; i++) {
		struct ir_tensor *t = m->graph->inits[i];

		if (t->storage != IR_STORE_EXTERNAL)
			continue;
		CU_ASSERT_EQUAL_FATAL(ir_tensor_data(t, &p, &len, &d), 0);
		CU_ASSERT_EQUAL(len, (size_t)t->ext_length);
		CU_ASSERT_TRUE((size_t)t->ext_offset + len <= n);
		CU_ASSERT_EQUAL(memcmp(p, file + t->ext_offset, len), 0);
		seen++;
	}
	CU_ASSERT_EQUAL(seen, 3);
	ir_model_free(m);
}

static void test_save_reload(void)
{
	char dir[] = "/tmp/opmig-io-XXXXXX", out[256];
	struct ir_save_opts so = { "w.bin", 16 };
	struct ir_model *m = load(TESTDATA("sample.onnx")), *r;
	struct ir_diag d;

	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out.onnx", dir);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_model_save(m, out, &so, &d), 0);
	r = load(out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->graph->n_nodes, m->graph->n_nodes);
	CU_ASSERT_EQUAL(r->n_extfiles, 1);
	for (size_t i = 0; i < m->graph->n_inits; i++) {
		const uint8_t *a, *b;
		size_t la, lb;

		CU_ASSERT_EQUAL_FATAL(ir_tensor_data(m->graph->inits[i], &a, &la, &d), 0);
		CU_ASSERT_EQUAL_FATAL(ir_tensor_data(r->graph->inits[i], &b, &lb, &d), 0);
		CU_ASSERT_TRUE(la == lb && memcmp(a, b, la) == 0);
		CU_ASSERT_EQUAL(r->graph->inits[i]->storage,
				la >= 16 ? IR_STORE_EXTERNAL : m->graph->inits[i]->storage);
	}
	/* Writing over the input is refused and leaves it alone. */
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_model_save(r, out, NULL, &d), IR_EUSAGE);
	ir_diag_init(&d);
	so.external_data = "../escape.bin";
	CU_ASSERT_EQUAL(ir_model_save(m, out, &so, &d), IR_EUSAGE);
	ir_model_free(r);
	ir_model_free(m);
	snprintf(out, sizeof(out), "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(out), 0);
}

/* Fail each protobuf allocation in turn: loading must fail cleanly with
 * IR_ENOMEM (no leak, checked under ASan) until there are enough. */
static void test_alloc_failures(void)
{
	int ok = 0, oom = 0;

	for (long n = 1; n < 5000 && !ok; n++) {
		struct ir_model *m = NULL;
		struct ir_diag d;
		int rc;

		ir_diag_init(&d);
		ir_alloc_fail_at(n);
		rc = ir_model_load(TESTDATA("sample.onnx"), NULL, &m, &d);
		if (rc == 0) {
			ok = 1;
		} else {
			CU_ASSERT_EQUAL(rc, IR_ENOMEM);
			CU_ASSERT_PTR_NULL(m);
			oom++;
		}
		ir_model_free(m);
	}
	ir_alloc_fail_at(0);
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_TRUE(oom > 50);
}

static const struct {
	const char *file, *msg;
} bad[] = {
	{ "attr-type.onnx", "is declared int but holds float" },
	{ "attr-schema-type.onnx", "node 'flatten' (Flatten): attribute 'axis' must be int, not ints" },
	{ "cycle.onnx", "cycle" },
	{ "missing-required-attr.onnx", "node 'cast' (Cast): missing required attribute 'to' of Cast-13" },
	{ "deep-nesting.onnx", "nests messages deeper" },
	{ "duplicate-output.onnx", "already produced by node" },
	{ "empty.onnx", "empty file" },
	{ "ext-absolute/models/model.onnx", "absolute path" },
	{ "ext-missing/models/model.onnx", "external data file" },
	{ "ext-short/models/model.onnx", "too short" },
	{ "ext-symlink/models/model.onnx", "outside the model's folder" },
	{ "ext-traversal/models/model.onnx", "escapes the model's folder" },
	{ "huge-dim.onnx", "dims overflow" },
	{ "missing-opset.onnx", "has no opset_import" },
	{ "negative-dim.onnx", "negative dim" },
	{ "raw-and-typed.onnx", "both raw_data and typed data" },
	{ "raw-length.onnx", "raw_data has" },
	{ "typed-count.onnx", "2 stored values, dims need 3" },
	{ "undefined-input.onnx", "is not defined" },
	{ "unknown-dtype.onnx", "unknown data type 99" },
	{ "wire-type.onnx", "wire type" },
	{ "a-directory.onnx", "is a directory" },
};

static void test_bad_corpus(void)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char path[256];
		struct ir_model *m = NULL;
		struct ir_diag d;
		int rc;

		snprintf(path, sizeof(path), "testdata/bad/%s", bad[i].file);
		ir_diag_init(&d);
		rc = ir_model_load(path, NULL, &m, &d);
		CU_ASSERT_EQUAL(rc, IR_EINVAL);
		CU_ASSERT_PTR_NULL(m);
		if (!strstr(d.msg, bad[i].msg)) {
			fprintf(stderr, "\n%s: got '%s', want '%s'\n", path,
				d.msg, bad[i].msg);
			CU_FAIL("bad-input message");
		}
	}
}

/* Write `len` bytes of buf to path. */
static int write_file(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(buf, 1, len, f) == len;

	if (f && fclose(f) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

/* sample.onnx cut at every offset, and with seeded byte flips: each load
 * either succeeds or fails with IR_EINVAL and a message; never crashes. */
static void test_truncations_and_flips(void)
{
	char dir[] = "/tmp/opmig-trunc-XXXXXX", path[256];
	static uint8_t buf[1 << 16], mut[1 << 16];
	FILE *f = fopen(TESTDATA("sample.onnx"), "rb");
	size_t len;
	unsigned seed = 12345;
	int failures = 0, loaded = 0;
	/* Small view threshold: the skeleton stripper sees hostile input too. */
	struct ir_load_opts lo = { 0, 0, 64 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	CU_ASSERT_FATAL(len > 1000 && len < sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/m.onnx", dir);
	for (size_t cut = 0; cut < len; cut++) {
		struct ir_model *m = NULL;
		struct ir_diag d;
		int rc;

		CU_ASSERT_EQUAL_FATAL(write_file(path, buf, cut), 0);
		ir_diag_init(&d);
		rc = ir_model_load(path, &lo, &m, &d);
		/* A cut at a field boundary can leave a valid smaller model. */
		if (rc != 0 && (rc != IR_EINVAL || !d.msg[0]))
			failures++;
		loaded += rc == 0;
		ir_model_free(m);
	}
	for (int i = 0; i < 3000; i++) {
		struct ir_model *m = NULL;
		struct ir_diag d;
		int rc;

		memcpy(mut, buf, len);
		for (int k = 0; k < 4; k++) {
			seed = seed * 1103515245u + 12345u;
			mut[(seed >> 8) % len] ^= (uint8_t)(1u << ((seed >> 4) & 7));
		}
		CU_ASSERT_EQUAL_FATAL(write_file(path, mut, len), 0);
		ir_diag_init(&d);
		rc = ir_model_load(path, &lo, &m, &d);
		if (rc != 0 && (rc != IR_EINVAL || !d.msg[0]))
			failures++;
		ir_model_free(m);
	}
	CU_ASSERT_EQUAL(failures, 0);
	CU_ASSERT_TRUE(loaded < 50);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(path), 0);
}

static int count_views(struct ir_tensor *t, void *ctx)
{
	*(int *)ctx += t->raw_owner != NULL;
	return 0;
}

/* Load with a view threshold, save; *views counts viewed tensors. */
static int save_with(const char *in, const char *out, size_t view, int *views)
{
	struct ir_load_opts lo = { 0, 0, view };
	struct ir_model *m = NULL;
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	*views = 0;
	if ((rc = ir_model_load(in, &lo, &m, &d)) == 0) {
		ir_model_for_each_tensor(m, count_views, views);
		rc = ir_model_save(m, out, NULL, &d);
	}
	if (rc < 0)
		fprintf(stderr, "\n%s: %s\n", in, d.msg);
	ir_model_free(m);
	return rc;
}

static int same_bytes(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int ca, cb, same = fa && fb;

	while (same) {
		ca = getc(fa);
		cb = getc(fb);
		same = ca == cb;
		if (ca == EOF || cb == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/* Viewing every raw_data in the mapped file (threshold 1) gives the same
 * saved bytes as copying none of them: the stripped skeleton is exact,
 * also for tensors inside attributes, subgraphs and sparse tensors. */
static void test_views_equal_copies(void)
{
	static const char *const models[] = {
		"sample.onnx", "models/dtypes.onnx", "models/attrs.onnx",
		"models/sparse.onnx", "models/loop_scan.onnx",
		"models/functions.onnx", "models/symbolic.onnx",
		"models/unknown_fields.onnx", "ext/model.onnx",
	};
	char dir[] = "/tmp/opmig-view-XXXXXX", a[256], b[256], in[256];
	int views, none, total = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.onnx", dir);
	snprintf(b, sizeof(b), "%s/b.onnx", dir);
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		snprintf(in, sizeof(in), "testdata/%s", models[i]);
		CU_ASSERT_EQUAL(save_with(in, a, 1, &views), 0);
		CU_ASSERT_EQUAL(save_with(in, b, SIZE_MAX, &none), 0);
		CU_ASSERT_EQUAL(none, 0);
		total += views;
		if (!same_bytes(a, b))
			CU_FAIL(models[i]);
	}
	CU_ASSERT_TRUE(total > 40);
	snprintf(in, sizeof(in), "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(in), 0);
}

static const struct unit_test tests[] = {
	{ "raw_data views save like copies", test_views_equal_copies },
	{ "truncations and byte flips fail cleanly", test_truncations_and_flips },
	{ "sample model contents and scopes", test_sample },
	{ "typed fields decode to raw bytes", test_typed_equals_raw },
	{ "external data is a view of the file", test_external_view },
	{ "save with external data and reload", test_save_reload },
	{ "allocation failure injection", test_alloc_failures },
	{ "bad-input corpus messages", test_bad_corpus },
	{ NULL, NULL },
};

int suite_io_register(void)
{
	return unit_add_suite("io", tests);
}
