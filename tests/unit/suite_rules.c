/* suite_rules.c: unit tests of oprules/: every file in testdata/rules/bad
 * fails with the message testdata/rules/bad/EXPECTED gives it, good files
 * load, extends inherits and overrides, cycles and duplicate ids are
 * caught, and the shipped targets load, are sorted and round-trip. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "oprules/rules.h"
#include "tests/unit/suites.h"

#define BAD TESTDATA("rules/bad")

static int load_shipped(struct rules_db *db)
{
	struct ir_diag d;
	int rc;

	rules_db_init(db);
	ir_diag_init(&d);
	rc = rules_load_dir("oprules", db, &d);
	if (rc)
		fprintf(stderr, "\nshipped rules: %s\n", d.msg);
	return rc;
}

/* Load one file and resolve it against base; status, message in d. */
static int load_one(const char *path, const struct rules_db *base,
		    struct rules_db *db, struct ir_diag *d)
{
	int rc;

	rules_db_init(db);
	ir_diag_init(d);
	rc = rules_load_file(path, db, d);
	if (rc == 0)
		rc = rules_db_resolve(db, base, d);
	return rc;
}

static void test_bad_files(void)
{
	FILE *f = fopen(BAD "/EXPECTED", "r");
	char line[400], listed[4096] = "";
	struct rules_db base, db;
	size_t n = 0;
	DIR *dh;
	struct dirent *e;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL_FATAL(load_shipped(&base), 0);
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), path[480], want[1000];
		struct ir_diag d;
		int rc;

		line[strcspn(line, "\n")] = 0;
		if (!tab)
			continue;
		*tab = 0;
		snprintf(path, sizeof(path), BAD "/%s", line);
		snprintf(want, sizeof(want), "%s: %s", path, tab + 1);
		rc = load_one(path, &base, &db, &d);
		CU_ASSERT_EQUAL(rc, IR_EINVAL);
		if (strcmp(d.msg, want)) {
			fprintf(stderr, "\n  %s\n   got: %s\n  want: %s\n", line, d.msg, want);
			CU_FAIL("unexpected message");
		}
		rules_db_release(&db);
		if (strlen(listed) + strlen(line) + 3 < sizeof(listed)) {
			strcat(listed, "|");
			strcat(listed, line);
			strcat(listed, "|");
		}
		n++;
	}
	fclose(f);
	CU_ASSERT_TRUE(n >= 20);
	/* Every bad file has its expected message. */
	dh = opendir(BAD);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dh);
	while ((e = readdir(dh))) {
		char key[300];
		size_t len = strlen(e->d_name);

		if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		snprintf(key, sizeof(key), "|%s|", e->d_name);
		if (!strstr(listed, key)) {
			fprintf(stderr, "\n  %s is not in EXPECTED\n", e->d_name);
			CU_FAIL("bad file without expected message");
		}
	}
	closedir(dh);
	rules_db_release(&base);
}

static void test_good_files(void)
{
	static const char *const good[] = {
		TESTDATA("rules/good/minimal.json"), TESTDATA("rules/good/full.json"),
		TESTDATA("rules/good/extends.json"), "oprules/examples/my-npu.json",
	};
	struct rules_db base, db;
	struct ir_diag d;

	CU_ASSERT_EQUAL_FATAL(load_shipped(&base), 0);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int rc = load_one(good[i], &base, &db, &d);

		if (rc)
			fprintf(stderr, "\n  %s\n", d.msg);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL(db.n_targets, 1);
		rules_db_release(&db);
	}
	rules_db_release(&base);
}

static void test_full_fields(void)
{
	const struct rules_target *t;
	const struct rules_op *op;
	struct rules_db db;
	struct ir_diag d;

	CU_ASSERT_EQUAL_FATAL(load_one(TESTDATA("rules/good/full.json"), NULL, &db, &d), 0);
	t = rules_db_find(&db, "test-full");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_STRING_EQUAL(t->vendor, "Example Corp");
	CU_ASSERT_EQUAL(t->opset_min, 11);
	CU_ASSERT_EQUAL(t->opset_max, 17);
	CU_ASSERT_EQUAL(t->missing_dtypes, RULES_DTYPE_BIT(IR_DTYPE_INT64) |
			RULES_DTYPE_BIT(IR_DTYPE_DOUBLE));
	CU_ASSERT_EQUAL(t->dynamic_shapes, 0);
	CU_ASSERT_EQUAL(t->max_rank, 5);
	CU_ASSERT_STRING_EQUAL(t->preferred_layout, "nhwc");
	CU_ASSERT_EQUAL(t->device_memory_bytes, 1073741824);
	CU_ASSERT_EQUAL_FATAL(t->n_fused, 1);
	CU_ASSERT_EQUAL(t->fused[0].n_ops, 2);
	op = rules_target_find_op(t, "", "Conv");
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	CU_ASSERT_EQUAL(op->version_min, 11);
	CU_ASSERT_EQUAL(op->version_max, RULES_UNBOUNDED);
	CU_ASSERT_EQUAL(op->n_inputs, 2);
	CU_ASSERT_TRUE(op->static_shape);
	CU_ASSERT_EQUAL(op->max_dim, 8192);
	CU_ASSERT_EQUAL(op->n_attrs, 4);
	for (size_t i = 0; i < op->n_attrs; i++) {
		const struct rules_attr *a = &op->attrs[i];

		if (!strcmp(a->name, "group")) {
			CU_ASSERT_TRUE(a->has_equals && a->equals.num == 1);
		} else if (!strcmp(a->name, "auto_pad")) {
			CU_ASSERT_EQUAL(a->n_allowed, 2);
			CU_ASSERT_STRING_EQUAL(a->allowed[1].str, "VALID");
		} else if (!strcmp(a->name, "pads")) {
			CU_ASSERT_EQUAL(a->n_allowed, 2);
			CU_ASSERT_EQUAL(a->allowed[1].kind, RULES_VALUE_NUMBERS);
			CU_ASSERT_EQUAL(a->allowed[1].n_nums, 4);
		} else {
			CU_ASSERT_TRUE(a->has_min && a->has_max && a->max == 4);
		}
	}
	op = rules_target_find_op(t, "ai.onnx", "Resize");
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	CU_ASSERT_EQUAL(op->severity, RULES_LIMITED);
	op = rules_target_find_op(t, "com.microsoft", "QuickGelu");
	CU_ASSERT_PTR_NOT_NULL(op);
	op = rules_target_find_op(t, NULL, "Loop");
	CU_ASSERT_TRUE(op && !op->supported);
	CU_ASSERT_PTR_NULL(rules_target_find_op(t, NULL, "QuickGelu"));
	CU_ASSERT_EQUAL(rules_target_n_supported(t), 4);
	rules_db_release(&db);
	rules_db_release(&db);   /* twice is fine */
}

static void test_extends(void)
{
	const struct rules_target *t, *g;
	const struct rules_op *op;
	struct rules_db base, db;
	struct ir_diag d;

	CU_ASSERT_EQUAL_FATAL(load_shipped(&base), 0);
	CU_ASSERT_EQUAL_FATAL(load_one(TESTDATA("rules/good/extends.json"), &base, &db, &d), 0);
	t = rules_db_find(&db, "test-extends");
	g = rules_db_find(&base, "generic-npu");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_TRUE(t->resolved);
	/* overridden */
	CU_ASSERT_STRING_EQUAL(t->name, "Chip extending generic-npu");
	CU_ASSERT_EQUAL(t->max_rank, 6);
	op = rules_target_find_op(t, "", "Relu");
	CU_ASSERT_TRUE_FATAL(op != NULL);
	CU_ASSERT_EQUAL(op->dtypes, RULES_DTYPE_BIT(IR_DTYPE_INT8));
	op = rules_target_find_op(t, "", "Softmax");
	CU_ASSERT_TRUE(op && !op->supported);
	/* added */
	CU_ASSERT_PTR_NOT_NULL(rules_target_find_op(t, "", "Gelu"));
	/* inherited */
	CU_ASSERT_STRING_EQUAL(t->vendor, g->vendor);
	CU_ASSERT_EQUAL(t->opset_min, g->opset_min);
	CU_ASSERT_EQUAL(t->opset_max, g->opset_max);
	CU_ASSERT_EQUAL(t->dynamic_shapes, 0);
	CU_ASSERT_EQUAL(t->missing_dtypes, g->missing_dtypes);
	CU_ASSERT_EQUAL(t->n_ops, g->n_ops + 1);
	op = rules_target_find_op(t, "", "Conv");
	CU_ASSERT_TRUE_FATAL(op != NULL);
	CU_ASSERT_EQUAL(op->n_inputs, rules_target_find_op(g, "", "Conv")->n_inputs);
	CU_ASSERT_PTR_NOT_EQUAL(op, rules_target_find_op(g, "", "Conv"));
	for (size_t i = 1; i < t->n_ops; i++)
		CU_ASSERT_TRUE(strcmp(t->ops[i - 1].domain, t->ops[i].domain) < 0 ||
			       (!strcmp(t->ops[i - 1].domain, t->ops[i].domain) &&
				strcmp(t->ops[i - 1].name, t->ops[i].name) < 0));
	rules_db_release(&db);
	rules_db_release(&base);
}

static void test_dir_errors(void)
{
	struct rules_db db;
	struct ir_diag d;

	rules_db_init(&db);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(rules_load_dir(TESTDATA("rules/cycle"), &db, &d), IR_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, ": extends: cycle through 'cycle-"));
	rules_db_release(&db);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(rules_load_dir(TESTDATA("rules/dup"), &db, &d), IR_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.msg, TESTDATA("rules/dup/b.json") ": id: duplicate target id 'twin' (also in "
			       TESTDATA("rules/dup/a.json") ")");
	rules_db_release(&db);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(rules_load_dir(TESTDATA("rules/no-such-folder"), &db, &d), IR_EINVAL);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(rules_load_file(TESTDATA("rules/no-such-file.json"), &db, &d), IR_EINVAL);
	CU_ASSERT_EQUAL(db.n_targets, 0);
}

static void test_shipped(void)
{
	struct rules_db db;

	CU_ASSERT_EQUAL_FATAL(load_shipped(&db), 0);
	CU_ASSERT_PTR_NOT_NULL(rules_db_find(&db, "generic-npu"));
	CU_ASSERT_PTR_NOT_NULL(rules_db_find(&db, "tensorrt"));
	CU_ASSERT_PTR_NULL(rules_db_find(&db, "nope"));
	for (size_t i = 0; i < db.n_targets; i++) {
		const struct rules_target *t = &db.targets[i];
		char path[] = "/tmp/opmig-rules-XXXXXX";
		char *text = rules_target_to_json(t), *again;
		struct rules_db db2;
		struct ir_diag d;
		FILE *f;
		int fd;

		if (i)
			CU_ASSERT_TRUE(strcmp(db.targets[i - 1].id, t->id) < 0);
		CU_ASSERT_TRUE(t->n_sources > 0);
		CU_ASSERT_TRUE(rules_target_n_supported(t) > 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		fd = mkstemp(path);
		CU_ASSERT_TRUE_FATAL(fd >= 0);
		f = fdopen(fd, "w");
		fputs(text, f);
		fclose(f);
		CU_ASSERT_EQUAL(load_one(path, &db, &db2, &d), 0);
		remove(path);
		if (db2.n_targets == 1) {
			again = rules_target_to_json(&db2.targets[0]);
			CU_ASSERT_PTR_NOT_NULL(again);
			CU_ASSERT_TRUE(again && !strcmp(again, text));
			free(again);
		}
		free(text);
		rules_db_release(&db2);
	}
	rules_db_release(&db);
}

static void test_generic_npu(void)
{
	const struct rules_target *t;
	const struct rules_op *op;
	struct rules_db db;

	CU_ASSERT_EQUAL_FATAL(load_shipped(&db), 0);
	t = rules_db_find(&db, "generic-npu");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL(t->opset_min, 11);
	CU_ASSERT_EQUAL(t->opset_max, 17);
	CU_ASSERT_EQUAL(t->dynamic_shapes, 0);
	CU_ASSERT_TRUE(t->missing_dtypes & RULES_DTYPE_BIT(IR_DTYPE_INT64));
	CU_ASSERT_TRUE(t->missing_dtypes & RULES_DTYPE_BIT(IR_DTYPE_DOUBLE));
	CU_ASSERT_EQUAL(rules_target_n_supported(t), 40);
	op = rules_target_find_op(t, "", "Conv");
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	CU_ASSERT_EQUAL(op->dtypes, RULES_DTYPE_BIT(IR_DTYPE_FLOAT) |
			RULES_DTYPE_BIT(IR_DTYPE_FLOAT16) | RULES_DTYPE_BIT(IR_DTYPE_INT32) |
			RULES_DTYPE_BIT(IR_DTYPE_INT8));
	CU_ASSERT_PTR_NULL(rules_target_find_op(t, "", "Gelu"));
	t = rules_db_find(&db, "tensorrt");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL(t->opset_min, 9);
	CU_ASSERT_EQUAL(t->opset_max, 24);
	op = rules_target_find_op(t, "", "SequenceAt");
	CU_ASSERT_TRUE(op && !op->supported);
	rules_db_release(&db);
}

static void test_dtype_names(void)
{
	CU_ASSERT_EQUAL(rules_dtype_parse("float32"), RULES_DTYPE_BIT(IR_DTYPE_FLOAT));
	CU_ASSERT_EQUAL(rules_dtype_parse("float64"), RULES_DTYPE_BIT(IR_DTYPE_DOUBLE));
	CU_ASSERT_EQUAL(rules_dtype_parse("float8"),
			RULES_DTYPE_BIT(IR_DTYPE_FLOAT8E4M3FN) | RULES_DTYPE_BIT(IR_DTYPE_FLOAT8E4M3FNUZ) |
			RULES_DTYPE_BIT(IR_DTYPE_FLOAT8E5M2) | RULES_DTYPE_BIT(IR_DTYPE_FLOAT8E5M2FNUZ));
	CU_ASSERT_EQUAL(rules_dtype_parse("float"), 0);
	CU_ASSERT_STRING_EQUAL(rules_dtype_name(IR_DTYPE_INT64), "int64");
	CU_ASSERT_PTR_NULL(rules_dtype_name(0));
	for (int i = 1; i < IR_DTYPE_COUNT; i++)
		CU_ASSERT_EQUAL(rules_dtype_parse(rules_dtype_name(i)), RULES_DTYPE_BIT(i));
}

static const struct unit_test tests[] = {
	{ "bad files give their expected messages", test_bad_files },
	{ "good files load", test_good_files },
	{ "every field of the format is read", test_full_fields },
	{ "extends inherits and overrides", test_extends },
	{ "cycles, duplicate ids, missing files", test_dir_errors },
	{ "shipped targets load, sorted, round-trip", test_shipped },
	{ "generic-npu and tensorrt facts", test_generic_npu },
	{ "dtype names", test_dtype_names },
	{ NULL, NULL },
};

int suite_rules_register(void)
{
	return unit_add_suite("rules", tests);
}
