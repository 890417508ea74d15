/* suite_conformance.c: the data-driven inference check over Debian's
 * libonnx-testdata backend cases: graph outputs inferred from the concrete
 * test_data_set_0 inputs must match output_K.pb in dtype and every dim
 * (sequence and optional outputs: see compare_data).
 * Failing cases are listed in tests/infer_expected_failures.txt, which may
 * only shrink: an unlisted failure and a listed case that passes both fail.
 * OPMIG_CONFORMANCE_DUMP=FILE writes the current failures in list form. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/infer.h"
#include "tests/unit/suites.h"

#define DATA_DIR "/usr/share/libonnx-testdata/data"
#define EXPECTED "tests/infer_expected_failures.txt"
#define MAX_IO 64

enum verdict { CASE_PASS, CASE_FAIL, CASE_SKIP };

struct case_result {
	char name[160];          /* "node/test_abs" */
	enum verdict v;
	char why[300];
	int listed;
};

struct expected {
	char name[160];
	int seen;
};

static const char *const categories[] = {
	"node", "pytorch-converted", "pytorch-operator", "simple"
};

static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void dims_text(const struct ir_tensor *t, char *buf, size_t size)
{
	size_t o = (size_t)snprintf(buf, size, "%s[", ir_dtype_name(t->dtype));

	for (size_t i = 0; i < t->n_dims && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? "," : "",
				      (long long)t->dims[i]);
	if (o < size)
		snprintf(buf + o, size - o, "]");
}

/* Compare one inferred output with its expected tensor; 0 agree. */
static int compare_output(const struct ir_vtype *t, const struct ir_tensor *want,
			  const char *name, char *why, size_t size)
{
	char a[300], b[300];
	int bad = 0;

	dims_text(want, b, sizeof(b));
	if (!t) {
		snprintf(why, size, "output '%.60s' not inferred, expected %.200s", name, b);
		return -1;
	}
	ir_vtype_format(t, a, sizeof(a));
	if (!t->dtype || t->rank < 0 || t->rank != (int)want->n_dims ||
	    t->dtype != want->dtype)
		bad = 1;
	for (int k = 0; !bad && k < t->rank; k++)
		bad = t->dims[k].kind != IR_VDIM_VALUE ||
		      t->dims[k].value != want->dims[k];
	if (bad)
		snprintf(why, size, "output '%.60s' inferred %.100s, expected %.100s", name, a, b);
	return bad ? -1 : 0;
}

/* The element shape of a sequence's tensors when all agree; 0 none. */
static int common_shape(const struct ir_data *want)
{
	const struct ir_tensor *a;

	if (!want->n || !(a = want->items[0].tensor))
		return 0;
	for (size_t i = 1; i < want->n; i++) {
		const struct ir_tensor *b = want->items[i].tensor;

		if (!b || b->n_dims != a->n_dims ||
		    (a->n_dims && memcmp(a->dims, b->dims, a->n_dims * sizeof(*a->dims))))
			return 0;
	}
	return 1;
}

/* Compare an inferred sequence with a SequenceProto of tensors: the
 * element dtype; the elements one by one where the inference knows them
 * by position, else the common element shape when all elements agree. */
static int compare_seq(const struct ir_vtype *t, const struct ir_data *want,
		       const char *name, char *why, size_t size)
{
	char a[300];

	if (!t || !t->is_seq) {
		if (t)
			ir_vtype_format(t, a, sizeof(a));
		snprintf(why, size, "output '%.60s' %s%.100s, expected a sequence of %zu",
			 name, t ? "inferred " : "not inferred", t ? a : "", want->n);
		return -1;
	}
	ir_vtype_format(t, a, sizeof(a));
	for (size_t i = 0; i < want->n; i++) {
		const struct ir_tensor *e = want->items[i].tensor;

		if (want->items[i].kind != IR_DATA_TENSOR || !e) {
			snprintf(why, size, "output '%.60s': element %zu is no tensor", name, i);
			return -1;
		}
		if (t->dtype != e->dtype) {
			snprintf(why, size, "output '%.60s' inferred %.100s, element %zu is %s",
				 name, a, i, ir_dtype_name(e->dtype));
			return -1;
		}
	}
	if (t->has_elems) {
		if (t->n_elems != want->n) {
			snprintf(why, size, "output '%.60s' inferred %zu elements, expected %zu",
				 name, t->n_elems, want->n);
			return -1;
		}
		for (size_t i = 0; i < want->n; i++) {
			char en[100];

			snprintf(en, sizeof(en), "%.60s[%zu]", name, i);
			if (compare_output(&t->elems[i], want->items[i].tensor, en, why,
					   size) < 0)
				return -1;
		}
		return 0;
	}
	if (common_shape(want)) {
		struct ir_vtype e = *t;

		e.is_seq = 0;
		return compare_output(&e, want->items[0].tensor, name, why, size);
	}
	return 0;
}

/* Compare one inferred output with its expected test value; 0 agree.  An
 * empty optional only fails when the inference says tensor where the
 * optional holds a sequence type, or the reverse. */
static int compare_data(const struct ir_vtype *t, const struct ir_data *want,
			const char *name, char *why, size_t size)
{
	switch (want->kind) {
	case IR_DATA_TENSOR:
		if (t && t->is_seq) {
			snprintf(why, size, "output '%.60s' inferred a sequence, expected a tensor",
				 name);
			return -1;
		}
		return compare_output(t, want->tensor, name, why, size);
	case IR_DATA_SEQUENCE:
		return compare_seq(t, want, name, why, size);
	case IR_DATA_OPTIONAL:
		if (want->n)
			return compare_data(t, &want->items[0], name, why, size);
		if (t && ((want->elem_type == 1 && t->is_seq) ||
			  (want->elem_type == 3 && !t->is_seq &&
			   (t->dtype || t->rank >= 0)))) {
			snprintf(why, size, "output '%.60s': empty optional of %s, inferred a %s",
				 name, want->elem_type == 1 ? "a tensor" : "a sequence",
				 t->is_seq ? "sequence" : "tensor");
			return -1;
		}
		return 0;
	default:
		snprintf(why, size, "output '%.60s': maps and sparse tensors are not compared",
			 name);
		return -1;
	}
}

/* Read dir/output_K.pb for every graph output as the kind it declares. */
static int read_outputs(const char *dir, const struct ir_graph *g,
			struct ir_data *want, size_t *n, char *why, size_t size)
{
	char path[1200];
	struct ir_diag d;

	*n = 0;
	for (size_t k = 0; k < g->n_outputs && k < MAX_IO; k++) {
		const struct ir_type *ty = g->outputs[k].type;
		enum ir_data_kind kind = IR_DATA_TENSOR;

		if (ty && ty->kind == IR_TYPE_SEQUENCE)
			kind = IR_DATA_SEQUENCE;
		else if (ty && ty->kind == IR_TYPE_OPTIONAL)
			kind = IR_DATA_OPTIONAL;
		snprintf(path, sizeof(path), "%.1000s/output_%zu.pb", dir, k);
		if (!is_file(path))
			break;
		ir_diag_init(&d);
		if (ir_data_read(path, kind, &want[k], &d) < 0) {
			snprintf(why, size, "output_%zu.pb: %.200s", k, d.msg);
			return -1;
		}
		*n = k + 1;
	}
	snprintf(path, sizeof(path), "%.1000s/output_%zu.pb", dir, *n);
	if (*n != g->n_outputs || is_file(path)) {
		snprintf(why, size, "output files do not match %zu graph outputs",
			 g->n_outputs);
		return -1;
	}
	return 0;
}

static void run_case(const char *dir, struct case_result *res)
{
	struct ir_data in[MAX_IO], want[MAX_IO];
	size_t n_in = 0, n_want = 0;
	struct ir_model *m = NULL;
	struct ir_infer r;
	struct ir_diag d;
	struct ir_graph *g;
	char path[1200], set[1200];

	memset(in, 0, sizeof(in));
	memset(want, 0, sizeof(want));
	ir_infer_init(&r);
	r.flags = IR_INFER_NO_MERGE;
	ir_diag_init(&d);
	res->v = CASE_FAIL;
	snprintf(path, sizeof(path), "%.1000s/model.onnx", dir);
	snprintf(set, sizeof(set), "%.1000s/test_data_set_0", dir);
	if (ir_model_load(path, NULL, &m, &d) < 0) {
		snprintf(res->why, sizeof(res->why), "model does not load: %.200s", d.msg);
		goto cleanup;
	}
	g = m->graph;
	for (size_t i = 0; i < g->n_outputs; i++) {
		const struct ir_type *ty = g->outputs[i].type;

		if (ty && ty->kind != IR_TYPE_TENSOR &&
		    ty->kind != IR_TYPE_SEQUENCE && ty->kind != IR_TYPE_OPTIONAL) {
			res->v = CASE_SKIP;
			snprintf(res->why, sizeof(res->why),
				 "output '%s' is %s, stored as a %s, not a TensorProto",
				 ir_s(g->outputs[i].value->name),
				 ty->kind == IR_TYPE_SEQUENCE ? "a sequence" :
				 ty->kind == IR_TYPE_OPTIONAL ? "an optional" :
				 ty->kind == IR_TYPE_MAP ? "a map" : "no tensor",
				 ty->kind == IR_TYPE_SEQUENCE ? "SequenceProto" :
				 ty->kind == IR_TYPE_OPTIONAL ? "OptionalProto" :
				 ty->kind == IR_TYPE_MAP ? "MapProto" : "other proto");
			goto cleanup;
		}
	}
	/* Inputs in graph order without initializers, each read as the kind
	 * it declares (sequences and optionals from their SequenceProto /
	 * OptionalProto); a non-tensor input without a file stays bound by
	 * declaration. */
	for (size_t i = 0, k = 0; i < g->n_inputs && n_in < MAX_IO; i++) {
		const struct ir_type *ty = g->inputs[i].type;
		enum ir_data_kind kind = IR_DATA_TENSOR;
		char p[1300];

		if (!g->inputs[i].value || g->inputs[i].value->init)
			continue;
		if (ty && ty->kind == IR_TYPE_SEQUENCE)
			kind = IR_DATA_SEQUENCE;
		else if (ty && ty->kind != IR_TYPE_TENSOR)
			kind = IR_DATA_OPTIONAL;
		snprintf(p, sizeof(p), "%s/input_%zu.pb", set, k);
		if (is_file(p)) {
			ir_diag_init(&d);
			if (ir_data_read(p, kind, &in[n_in], &d) < 0) {
				snprintf(res->why, sizeof(res->why), "input_%zu.pb: %.200s",
					 k, d.msg);
				goto cleanup;
			}
			n_in++;
		} else if (kind != IR_DATA_TENSOR) {
			in[n_in++].kind = IR_DATA_OPTIONAL;  /* empty: declared */
		} else {
			break;  /* optional inputs the test leaves out */
		}
		k++;
	}
	if (read_outputs(set, g, want, &n_want, res->why, sizeof(res->why)) < 0)
		goto cleanup;
	ir_diag_init(&d);
	if (ir_infer_model_data(m, in, n_in, &r, &d) < 0) {
		snprintf(res->why, sizeof(res->why), "inference error: %.250s", d.msg);
		goto cleanup;
	}
	for (size_t i = 0; i < g->n_outputs; i++) {
		const struct ir_value *v = g->outputs[i].value;

		if (compare_data(ir_infer_get(&r, v), &want[i], ir_s(v->name),
				   res->why, sizeof(res->why)) < 0)
			goto cleanup;
	}
	res->v = CASE_PASS;
	res->why[0] = 0;
cleanup:
	ir_infer_release(&r);
	ir_model_free(m);
	for (size_t i = 0; i < n_in; i++)
		ir_data_release(&in[i]);
	for (size_t i = 0; i < MAX_IO; i++)
		ir_data_release(&want[i]);
}

/* Case names of the expected-failures list: first word of each line,
 * "# comment" lines and blank lines ignored. */
static struct expected *read_expected(size_t *n)
{
	FILE *fp = fopen(EXPECTED, "r");
	struct expected *e;
	size_t cap = 1;
	char line[1024];

	*n = 0;
	if (!fp)
		return NULL;
	if (!(e = malloc(sizeof(*e)))) {
		fclose(fp);
		return NULL;
	}
	while (fgets(line, sizeof(line), fp)) {
		char *p = line + strspn(line, " \t");
		size_t len = strcspn(p, " \t\r\n");

		if (!len || *p == '#')
			continue;
		if (*n == cap) {
			struct expected *q;

			cap *= 2;
			if (!(q = realloc(e, cap * sizeof(*q))))
				break;
			e = q;
		}
		snprintf(e[*n].name, sizeof(e[*n].name), "%.*s", (int)len, p);
		e[(*n)++].seen = 0;
	}
	fclose(fp);
	return e;
}

/* Case folders of one category, sorted; NULL-free array of n names. */
static char **list_cases(const char *cat, size_t *n)
{
	char dir[600], path[1300];
	char **names = NULL;
	size_t cap = 0;
	struct dirent *de;
	DIR *dd;

	*n = 0;
	snprintf(dir, sizeof(dir), "%s/%s", DATA_DIR, cat);
	if (!(dd = opendir(dir)))
		return NULL;
	while ((de = readdir(dd))) {
		char **q;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/model.onnx", dir, de->d_name);
		if (!is_file(path))
			continue;
		snprintf(path, sizeof(path), "%s/%s/test_data_set_0", dir, de->d_name);
		if (!is_dir(path))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			if (!(q = realloc(names, cap * sizeof(*q))))
				break;
			names = q;
		}
		if (!(names[*n] = strdup(de->d_name)))
			break;
		(*n)++;
	}
	closedir(dd);
	if (names)
		qsort(names, *n, sizeof(*names), cmp_str);
	return names;
}

static void test_conformance(void)
{
	size_t n_exp = 0, n_cases = 0, cap = 0;
	size_t passed = 0, failed = 0, skipped = 0, unexpected = 0, stale = 0;
	struct expected *exp;
	struct case_result *res = NULL;
	const char *dump = getenv("OPMIG_CONFORMANCE_DUMP");
	FILE *df = NULL;

	if (!is_dir(DATA_DIR)) {
		printf("\nconformance: %s absent, suite skipped\n", DATA_DIR);
		return;
	}
	exp = read_expected(&n_exp);
	CU_ASSERT_PTR_NOT_NULL(exp);
	for (size_t c = 0; c < sizeof(categories) / sizeof(*categories); c++) {
		size_t n = 0;
		char **names = list_cases(categories[c], &n);

		for (size_t i = 0; i < n; i++) {
			char dir[1200];

			if (n_cases == cap) {
				struct case_result *q;

				cap = cap ? 2 * cap : 1024;
				if (!(q = realloc(res, cap * sizeof(*q)))) {
					CU_FAIL("out of memory");
					break;
				}
				res = q;
			}
			memset(&res[n_cases], 0, sizeof(*res));
			snprintf(res[n_cases].name, sizeof(res[n_cases].name), "%s/%s",
				 categories[c], names[i]);
			snprintf(dir, sizeof(dir), "%s/%s/%s", DATA_DIR, categories[c],
				 names[i]);
			run_case(dir, &res[n_cases]);
			n_cases++;
		}
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
	}
	if (dump && !(df = fopen(dump, "w")))
		fprintf(stderr, "\nconformance: cannot write '%s'\n", dump);
	for (size_t i = 0; i < n_cases; i++) {
		struct case_result *cr = &res[i];

		for (size_t k = 0; k < n_exp; k++)
			if (!strcmp(exp[k].name, cr->name)) {
				exp[k].seen = 1;
				cr->listed = 1;
				if (cr->v != CASE_FAIL) {
					printf("\nconformance: %s is listed as failing but %s%s%s\n",
					       cr->name, cr->v == CASE_PASS ? "passes" : "is skipped: ",
					       cr->why, cr->v == CASE_PASS ? " (remove it from the list)" : "");
					stale++;
				}
			}
		if (cr->v == CASE_PASS) {
			passed++;
		} else if (cr->v == CASE_SKIP) {
			skipped++;
			printf("\nconformance: skipped %s: %s", cr->name, cr->why);
		} else {
			failed++;
			if (df)
				fprintf(df, "%s  %s\n", cr->name, cr->why);
			if (!cr->listed) {
				printf("\nconformance: unexpected failure %s: %s",
				       cr->name, cr->why);
				unexpected++;
			}
		}
	}
	for (size_t k = 0; k < n_exp; k++)
		if (!exp[k].seen) {
			printf("\nconformance: %s is listed but is no test case\n",
			       exp[k].name);
			stale++;
		}
	if (df)
		fclose(df);
	printf("\nconformance: %zu cases, %zu passed, %zu failed (%zu listed), %zu skipped; pass rate %.2f%% of %zu\n",
	       n_cases, passed, failed, failed - unexpected, skipped,
	       n_cases - skipped ? 100.0 * (double)passed / (double)(n_cases - skipped) : 0.0,
	       n_cases - skipped);
	CU_ASSERT(n_cases > 0);
	CU_ASSERT(passed * 100 >= (n_cases - skipped) * 98);
	CU_ASSERT_EQUAL(unexpected, 0);
	CU_ASSERT_EQUAL(stale, 0);
	free(res);
	free(exp);
}

static const struct unit_test tests[] = {
	{ "libonnx-testdata: outputs from concrete inputs", test_conformance },
	{ NULL, NULL },
};

int suite_conformance_register(void)
{
	return unit_add_suite("conformance", tests);
}
