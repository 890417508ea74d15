/* suite_batch.c: unit tests of the pure parts of batch/: shard parsing and
 * membership, zip entry names and limits, folder names, the content hash,
 * status names, and the summary written, read back and written again
 * byte for byte (what `opmig batch merge` relies on). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch.h"
#include "batch/batch_int.h"
#include "oprules/rules.h"
#include "ir/ir.h"
#include "tests/unit/suites.h"

static void test_shard(void)
{
	unsigned k = 0, n = 0;
	size_t count[4] = { 0 };

	CU_ASSERT_EQUAL(batch_shard_parse("2/3", &k, &n), 0);
	CU_ASSERT_EQUAL(k, 2);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_EQUAL(batch_shard_parse("1/1", &k, &n), 0);
	CU_ASSERT_EQUAL(batch_shard_parse("0/3", &k, &n), -1);
	CU_ASSERT_EQUAL(batch_shard_parse("4/3", &k, &n), -1);
	CU_ASSERT_EQUAL(batch_shard_parse("1/", &k, &n), -1);
	CU_ASSERT_EQUAL(batch_shard_parse("/3", &k, &n), -1);
	CU_ASSERT_EQUAL(batch_shard_parse("1/3x", &k, &n), -1);
	CU_ASSERT_EQUAL(batch_shard_parse("-1/3", &k, &n), -1);
	/* every index in exactly one shard, the shares even */
	for (size_t i = 0; i < 100; i++) {
		int in = 0;

		for (unsigned s = 1; s <= 3; s++)
			if (batch_shard_has(i, s, 3)) {
				in++;
				count[s]++;
			}
		CU_ASSERT_EQUAL(in, 1);
	}
	CU_ASSERT(count[1] == 34 && count[2] == 33 && count[3] == 33);
	CU_ASSERT(batch_shard_has(7, 1, 1));
}

static void test_zip_names(void)
{
	CU_ASSERT(batch_zip_name_safe("a.onnx"));
	CU_ASSERT(batch_zip_name_safe("dir/sub/a.onnx"));
	CU_ASSERT(batch_zip_name_safe("a..b.onnx"));
	CU_ASSERT(batch_zip_name_safe("./a.onnx"));
	CU_ASSERT(!batch_zip_name_safe("../a.onnx"));
	CU_ASSERT(!batch_zip_name_safe("dir/../../a.onnx"));
	CU_ASSERT(!batch_zip_name_safe("dir/.."));
	CU_ASSERT(!batch_zip_name_safe("/etc/passwd"));
	CU_ASSERT(!batch_zip_name_safe("C:/x.onnx"));
	CU_ASSERT(!batch_zip_name_safe("dir\\..\\x.onnx"));
	CU_ASSERT(!batch_zip_name_safe(""));
}

static void test_zip_limits(void)
{
	struct batch_limits l = { 1000000000ull, 100.0 };
	char why[160];

	CU_ASSERT(batch_zip_entry_ok(&l, 1000, 10, why, sizeof(why)));   /* small: ratio ignored */
	CU_ASSERT(batch_zip_entry_ok(&l, 50u << 20, 1u << 20, why, sizeof(why)));
	CU_ASSERT(!batch_zip_entry_ok(&l, 64u << 20, 65536, why, sizeof(why)));
	CU_ASSERT(strstr(why, "ratio") != NULL);
	CU_ASSERT(!batch_zip_entry_ok(&l, 2000000000ull, 1900000000ull, why, sizeof(why)));
	CU_ASSERT(strstr(why, "above the limit") != NULL);
	CU_ASSERT(!batch_zip_entry_ok(&l, 2u << 20, 0, why, sizeof(why)));
}

static void test_names(void)
{
	static const char *const cases[][2] = {
		{ "a.onnx", "a" },
		{ "dir/sub/m.ONNX", "dir_sub_m" },
		{ "./x.onnx", "x" },
		{ "we ird#name.onnx", "we_ird_name" },
		{ ".hidden.onnx", "_.hidden" },
		{ ".onnx", "_" },
		{ "v1.2-b_c.onnx", "v1.2-b_c" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *n = batch_name_from_path(cases[i][0]);

		CU_ASSERT_PTR_NOT_NULL_FATAL(n);
		CU_ASSERT_STRING_EQUAL(n, cases[i][1]);
		free(n);
	}
}

static void test_hash(void)
{
	uint64_t a = batch_hash(BATCH_HASH_INIT, "abc", 3);
	uint64_t b = batch_hash(batch_hash(BATCH_HASH_INIT, "a", 1), "bc", 2);

	CU_ASSERT_EQUAL(a, b);   /* streaming */
	CU_ASSERT_NOT_EQUAL(a, batch_hash(BATCH_HASH_INIT, "abd", 3));
	CU_ASSERT_EQUAL(batch_hash(BATCH_HASH_INIT, "", 0), BATCH_HASH_INIT);
	CU_ASSERT_EQUAL(batch_hash(BATCH_HASH_INIT, "a", 1), 0xaf63dc4c8601ec8cull);  /* FNV-1a */
	CU_ASSERT_EQUAL(batch_hash_file("testdata/does-not-exist", &a), -1);
	CU_ASSERT_EQUAL(batch_hash_file(TESTDATA("sample.onnx"), &a), 0);
}

static void test_status(void)
{
	for (int i = 0; i < BATCH_N_STATUS; i++)
		CU_ASSERT_EQUAL(batch_status_parse(batch_status_name((enum batch_status)i)), i);
	CU_ASSERT_EQUAL(batch_status_parse("bogus"), -1);
	CU_ASSERT(!batch_status_failed(BATCH_OK_SCANNED));
	CU_ASSERT(!batch_status_failed(BATCH_OK_MIGRATED));
	CU_ASSERT(batch_status_failed(BATCH_NOT_MIGRATED));
	CU_ASSERT(batch_status_failed(BATCH_CRASHED));
	CU_ASSERT(batch_status_failed(BATCH_TIMEOUT));
}

static void add_row(struct batch_summary *s, const char *m, const char *t,
		    enum batch_status st, double cov, const char *msg)
{
	struct batch_row *r;

	s->rows = realloc(s->rows, (s->n_rows + 1) * sizeof(*r));
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->rows);
	s->cap_rows = s->n_rows + 1;
	r = &s->rows[s->n_rows++];
	memset(r, 0, sizeof(*r));
	r->model = strdup(m);
	r->target = strdup(t);
	r->source = strdup("zoo/\"x\".onnx");
	r->status = st;
	r->nodes = cov < 0 ? -1 : 12;
	r->native_pct = cov;
	r->after_pct = cov < 0 ? -1 : 100;
	r->blockers = cov < 0 ? -1 : 0;
	r->max_error = cov < 0 ? -1 : 1.5e-7;
	r->seconds = -1;
	r->message = strdup(msg);
}

static char *to_json(const struct batch_summary *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(batch_summary_json(s, f), 0);
	fclose(f);
	return buf;
}

static void test_summary_roundtrip(void)
{
	struct batch_summary s, back;
	struct ir_diag d;
	char dir[] = "/tmp/opmig-unit-batch-XXXXXX", path[64];
	char *a, *b;

	batch_summary_init(&s);
	batch_summary_init(&back);
	s.mode = BATCH_MIGRATE;
	add_row(&s, "b", "ascend", BATCH_OK_MIGRATED, 66.7, "");
	add_row(&s, "a", "tensorrt", BATCH_CRASHED, -1, "worker killed by signal 6 (Aborted)");
	add_row(&s, "a", "ascend", BATCH_NOT_MIGRATED, 12.5, "1 blocker | \"quoted\"\n<html>");
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(batch_summary_sort(&s, &d), 0);
	CU_ASSERT_STRING_EQUAL(s.rows[0].model, "a");
	CU_ASSERT_STRING_EQUAL(s.rows[0].target, "ascend");
	CU_ASSERT_STRING_EQUAL(s.rows[2].model, "b");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_EQUAL(batch_summary_write(&s, dir, &d), 0);
	CU_ASSERT_EQUAL(batch_summary_read(&back, dir, 1, &d), 0);
	CU_ASSERT_EQUAL(back.mode, BATCH_MIGRATE);
	CU_ASSERT_EQUAL(back.n_rows, 3);
	a = to_json(&s);
	b = to_json(&back);
	CU_ASSERT_STRING_EQUAL(a, b);
	CU_ASSERT(strstr(a, "\"schema\": \"opmig.batch/1\"") != NULL);
	CU_ASSERT(strstr(a, "\"failed\": 2") != NULL);
	free(a);
	free(b);
	/* a second copy of the same rows is refused */
	CU_ASSERT_EQUAL(batch_summary_read(&back, dir, 0, &d), 0);
	CU_ASSERT_EQUAL(batch_summary_sort(&back, &d), IR_EINVAL);
	for (const char *const *f = (const char *const[]){ "summary.json", "summary.csv",
			"summary.md", "index.html", NULL }; *f; f++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *f);
		CU_ASSERT_EQUAL(unlink(path), 0);
	}
	rmdir(dir);
	batch_summary_release(&s);
	batch_summary_release(&back);
}

/* Write text to dir/name; the path into out. */
static void write_file(const char *dir, const char *name, const char *text,
		       char *out, size_t n)
{
	FILE *f;

	snprintf(out, n, "%s/%s", dir, name);
	f = fopen(out, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static void test_manifests(void)
{
	char dir[] = "/tmp/opmig-unit-manifest-XXXXXX", path[128], cwd[1024], text[4096];
	static const char *const bad[] = {
		"path,targets\n\"x.onnx,ascend\n",                 /* open quote */
		"file\nx.onnx\n",                                  /* no path column */
		"path,batch\nSAMPLE,zero\n",                        /* bad batch */
		"path,layout\nSAMPLE,nwhc\n",                       /* bad layout */
		"path,dims\nSAMPLE,N\n",                            /* bad dim */
		"path\n",                                           /* no model */
	};
	struct batch_src s;
	struct ir_diag d;

	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof(cwd)));
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	/* CSV: quotes, lists, options */
	snprintf(text, sizeof(text), "path,targets,batch,dims,layout\n"
		 "%s/testdata/sample.onnx,\"ascend;qnn\",1,N=1;S=8,nhwc\n", cwd);
	write_file(dir, "m.csv", text, path, sizeof(path));
	batch_src_init(&s);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL_FATAL(batch_manifest_add(&s, path, &d), 0);
	CU_ASSERT_EQUAL_FATAL(s.n_items, 1);
	CU_ASSERT_STRING_EQUAL(s.items[0].name, "sample");
	CU_ASSERT_EQUAL(s.items[0].o.n_targets, 2);
	CU_ASSERT_STRING_EQUAL(s.items[0].o.targets[1], "qnn");
	CU_ASSERT_EQUAL(s.items[0].o.batch, 1);
	CU_ASSERT_EQUAL(s.items[0].o.n_dims, 2);
	CU_ASSERT_STRING_EQUAL(s.items[0].o.dims[1], "S=8");
	CU_ASSERT_STRING_EQUAL(s.items[0].o.layout, "nhwc");
	batch_src_release(&s);
	unlink(path);
	/* JSON: {"models": [...]}, dims as an object */
	snprintf(text, sizeof(text), "{\"models\": [{\"path\": \"%s/testdata/sample.onnx\", "
		 "\"targets\": \"ascend\", \"dims\": {\"N\": 2}, \"precision\": \"fp16\"}]}", cwd);
	write_file(dir, "m.json", text, path, sizeof(path));
	batch_src_init(&s);
	CU_ASSERT_EQUAL_FATAL(batch_manifest_add(&s, path, &d), 0);
	CU_ASSERT_EQUAL_FATAL(s.n_items, 1);
	CU_ASSERT_STRING_EQUAL(s.items[0].o.dims[0], "N=2");
	CU_ASSERT_STRING_EQUAL(s.items[0].o.precision, "fp16");
	batch_src_release(&s);
	unlink(path);
	/* bad manifests: IR_EINVAL naming the manifest */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char t[4096], *p = strstr(bad[i], "SAMPLE");

		if (p)
			snprintf(t, sizeof(t), "%.*s%s/testdata/sample.onnx%s", (int)(p - bad[i]), bad[i],
				 cwd, p + 6);
		else
			snprintf(t, sizeof(t), "%s", bad[i]);
		write_file(dir, "bad.csv", t, path, sizeof(path));
		batch_src_init(&s);
		ir_diag_init(&d);
		CU_ASSERT_EQUAL(batch_manifest_add(&s, path, &d), IR_EINVAL);
		CU_ASSERT(strstr(d.msg, "bad.csv") != NULL);
		batch_src_release(&s);
		unlink(path);
	}
	write_file(dir, "bad.json", "[{\"path\": 3}]", path, sizeof(path));
	batch_src_init(&s);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(batch_manifest_add(&s, path, &d), IR_EINVAL);
	batch_src_release(&s);
	unlink(path);
	rmdir(dir);
}

static void test_plan(void)
{
	struct rules_target tg[2];
	struct rules_db db = { tg, 2 };
	const struct rules_db *dbs[1] = { &db };
	const struct rules_target *defs[2] = { &tg[1], &tg[0] };
	struct batch_opts o;
	struct batch_src s;
	struct batch_mopts mo = { 0 };
	struct batch_job *jobs = NULL;
	struct ir_diag d;
	size_t n = 0;
	char *ids[1] = { (char *)"qnn" };

	memset(tg, 0, sizeof(tg));
	tg[0].id = (char *)"ascend";
	tg[1].id = (char *)"qnn";
	memset(&o, 0, sizeof(o));
	o.outdir = "out";
	o.targets = defs;
	o.n_targets = 2;
	o.dbs = dbs;
	o.n_dbs = 1;
	o.shard_k = o.shard_n = 1;
	batch_src_init(&s);
	ir_diag_init(&d);
	/* given out of order, with a name clash: sorted, "~2" by source */
	CU_ASSERT_EQUAL(batch_src_push(&s, "e.onnx", "z/e.onnx", "z/e.onnx", NULL, NULL), 0);
	CU_ASSERT_EQUAL(batch_src_push(&s, "a/b.onnx", "z/a/b.onnx", "z/a/b.onnx", NULL, NULL), 0);
	CU_ASSERT_EQUAL(batch_src_push(&s, "a_b.onnx", "y/a_b.onnx", "y/a_b.onnx", NULL, NULL), 0);
	mo.n_targets = 1;
	mo.targets = ids;
	CU_ASSERT_EQUAL(batch_src_push(&s, "c.onnx", "z/c.onnx", "z/c.onnx", NULL, &mo), 0);
	CU_ASSERT_EQUAL(batch_src_finish(&s, &d), 0);
	CU_ASSERT_STRING_EQUAL(s.items[0].name, "a_b");
	CU_ASSERT_STRING_EQUAL(s.items[0].source, "y/a_b.onnx");
	CU_ASSERT_STRING_EQUAL(s.items[1].name, "a_b~2");
	CU_ASSERT_STRING_EQUAL(s.items[2].name, "c");
	CU_ASSERT_STRING_EQUAL(s.items[3].name, "e");
	/* every model on its targets: 2 + 2 + 1 (c: its own) + 2 */
	CU_ASSERT_EQUAL_FATAL(batch_plan(&s, &o, 7, &jobs, &n, &d), 0);
	CU_ASSERT_EQUAL_FATAL(n, 7);
	CU_ASSERT_STRING_EQUAL(jobs[0].dir, "out/a_b/qnn");
	CU_ASSERT_STRING_EQUAL(jobs[1].dir, "out/a_b/ascend");
	CU_ASSERT_STRING_EQUAL(jobs[4].dir, "out/c/qnn");
	CU_ASSERT_EQUAL(jobs[4].rules_hash, 7);
	free(jobs);
	/* shard 2/3: the model of index 1 only (a_b~2) */
	o.shard_k = 2;
	o.shard_n = 3;
	CU_ASSERT_EQUAL_FATAL(batch_plan(&s, &o, 7, &jobs, &n, &d), 0);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_STRING_EQUAL(jobs[0].dir, "out/a_b~2/qnn");
	free(jobs);
	/* a per-model target that is not in the db */
	s.items[2].o.targets[0][0] = 'x';
	o.shard_k = o.shard_n = 1;
	CU_ASSERT_EQUAL(batch_plan(&s, &o, 7, &jobs, &n, &d), IR_EINVAL);
	CU_ASSERT(strstr(d.msg, "no target 'xnn'") != NULL);
	CU_ASSERT_PTR_NULL(jobs);
	/* the same source twice is refused */
	CU_ASSERT_EQUAL(batch_src_push(&s, "e.onnx", "z/e.onnx", "z/e.onnx", NULL, NULL), 0);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(batch_src_finish(&s, &d), IR_EINVAL);
	batch_src_release(&s);
}

static void test_result_key(void)
{
	char dir[] = "/tmp/opmig-unit-result-XXXXXX", data[128], inputs[512], path[128];
	struct batch_row r, back;
	struct ir_diag d;
	uint64_t key = 0x1234, other = 0x1235, h;
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(data, sizeof(data), "%s/weights.bin", dir);
	f = fopen(data, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("weights", f);
	fclose(f);
	CU_ASSERT_EQUAL(batch_hash_file(data, &h), 0);
	snprintf(inputs, sizeof(inputs), "[{\"path\": \"%s\", \"hash\": \"%016llx\"}]", data,
		 (unsigned long long)h);
	memset(&r, 0, sizeof(r));
	r.model = (char *)"m";
	r.target = (char *)"ascend";
	r.source = (char *)"m.onnx";
	r.message = (char *)"";
	r.status = BATCH_OK_SCANNED;
	r.nodes = 3;
	r.native_pct = 66.7;
	r.after_pct = 100;
	r.blockers = 0;
	r.max_error = r.seconds = -1;
	ir_diag_init(&d);
	CU_ASSERT_EQUAL_FATAL(batch_result_write(dir, &r, key, 0, inputs, &d), 0);
	CU_ASSERT_EQUAL(batch_result_read(dir, &back, NULL), 0);
	CU_ASSERT_STRING_EQUAL(back.target, "ascend");
	CU_ASSERT_EQUAL(back.nodes, 3);
	batch_row_release(&back);
	CU_ASSERT_EQUAL(batch_result_read(dir, &back, &key), 0);   /* resume keeps it */
	batch_row_release(&back);
	CU_ASSERT_EQUAL(batch_result_read(dir, &back, &other), -1); /* another key */
	f = fopen(data, "w");                                        /* the data changes */
	fputs("Weights", f);
	fclose(f);
	CU_ASSERT_EQUAL(batch_result_read(dir, &back, &key), -1);
	CU_ASSERT_EQUAL(batch_result_write(dir, &r, key, 1, NULL, &d), 0); /* retry */
	CU_ASSERT_EQUAL(batch_result_read(dir, &back, &key), -1);
	CU_ASSERT_EQUAL(batch_result_read(dir, &back, NULL), 0);
	batch_row_release(&back);
	snprintf(path, sizeof(path), "%s/result.json", dir);
	unlink(path);
	unlink(data);
	CU_ASSERT_EQUAL(batch_result_read(dir, &back, NULL), -1);   /* absent */
	rmdir(dir);
}

static const struct unit_test tests[] = {
	{ "plan: names, order, shards, jobs", test_plan },
	{ "result.json and the resume key", test_result_key },
	{ "manifests (CSV, JSON, bad ones)", test_manifests },
	{ "shard K/N", test_shard },
	{ "zip entry names (zip-slip)", test_zip_names },
	{ "zip entry limits (zip bombs)", test_zip_limits },
	{ "folder names", test_names },
	{ "content hash", test_hash },
	{ "status names", test_status },
	{ "summary write, read, write", test_summary_roundtrip },
	{ NULL, NULL },
};

int suite_batch_register(void)
{
	return unit_add_suite("batch", tests);
}
