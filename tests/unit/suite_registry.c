/* suite_registry.c: unit tests of the operator registry: the table is
 * sorted and unique, version selection by opset, coverage beyond python-onnx,
 * and a cross-check of every schema python3-onnx 1.12 knows (opset <= 17)
 * through tests/fixtures/onnx112_schemas.tsv (tools/dump_onnx_schemas.py). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/registry.h"
#include "tests/unit/suites.h"

#define FIXTURE "tests/fixtures/onnx112_schemas.tsv"

/* Known differences between the spec docs and onnx 1.12, each with why.
 * key: "domain name-version attr" (attr "*" for the whole entry). */
static const struct expected_mismatch {
	const char *key;
	const char *reason;
} expected[] = {
	{ NULL, NULL },
};

static int is_expected(const char *key)
{
	for (size_t i = 0; expected[i].key; i++)
		if (strcmp(expected[i].key, key) == 0)
			return 1;
	return 0;
}

static void test_sorted_unique(void)
{
	size_t n = ir_registry_count();

	CU_ASSERT_FATAL(n > 600);
	for (size_t i = 1; i < n; i++) {
		const struct ir_op_schema *a = ir_registry_at(i - 1);
		const struct ir_op_schema *b = ir_registry_at(i);
		int c = strcmp(a->domain, b->domain);

		if (c == 0)
			c = strcmp(a->name, b->name);
		if (c == 0)
			c = a->since_version < b->since_version ? -1 :
			    a->since_version > b->since_version;
		if (c >= 0)
			printf("\nregistry: out of order at %zu: %s %s-%d, %s %s-%d",
			       i, a->domain, a->name, a->since_version,
			       b->domain, b->name, b->since_version);
		CU_ASSERT(c < 0);
	}
	for (size_t i = 0; i < n; i++) {
		const struct ir_op_schema *s = ir_registry_at(i);

		CU_ASSERT(s->min_inputs <= s->max_inputs);
		CU_ASSERT(s->min_outputs <= s->max_outputs);
		CU_ASSERT(s->since_version >= 1);
		CU_ASSERT_PTR_NOT_NULL(s->doc);
	}
	CU_ASSERT_PTR_NULL(ir_registry_at(n));
}

static int found_version(const char *domain, const char *op, int64_t opset)
{
	const struct ir_op_schema *s = ir_registry_find(domain, op, opset);

	return s ? s->since_version : -1;
}

static void test_lookup(void)
{
	const struct ir_op_schema *first, *s;
	size_t n;

	CU_ASSERT_EQUAL(found_version("", "Softmax", 12), 11);
	CU_ASSERT_EQUAL(found_version("ai.onnx", "Softmax", 13), 13);
	CU_ASSERT_EQUAL(found_version("", "Softmax", 1), 1);
	CU_ASSERT_EQUAL(found_version("", "Conv", 9), 1);
	CU_ASSERT_EQUAL(found_version("", "Reshape", 5), 5);
	CU_ASSERT_EQUAL(found_version("", "Reshape", 4), 1);
	CU_ASSERT_EQUAL(found_version("", "Abs", 0), -1);
	CU_ASSERT_EQUAL(found_version("", "NoSuchOp", 17), -1);
	CU_ASSERT_EQUAL(found_version("com.example", "Relu", 17), -1);
	CU_ASSERT_EQUAL(found_version("", "Gelu", 17), -1);
	CU_ASSERT_EQUAL(found_version("", "Gelu", 20), 20);
	CU_ASSERT_EQUAL(found_version("com.microsoft", "Gelu", 1), 1);
	CU_ASSERT_EQUAL(found_version("ai.onnx.ml", "TreeEnsembleClassifier", 3), 3);
	CU_ASSERT_EQUAL(found_version("", "Relu", INT64_MAX), 14);
	CU_ASSERT_PTR_NULL(ir_registry_find("", NULL, 13));

	n = ir_registry_versions("", "Softmax", &first);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_PTR_NOT_NULL_FATAL(first);
	CU_ASSERT_EQUAL(first[0].since_version, 1);
	CU_ASSERT_EQUAL(first[1].since_version, 11);
	CU_ASSERT_EQUAL(first[2].since_version, 13);
	CU_ASSERT_EQUAL(ir_registry_versions("", "NoSuchOp", &first), 0);
	CU_ASSERT_PTR_NULL(first);

	s = ir_registry_find("", "Conv", 11);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->min_inputs, 2);
	CU_ASSERT_EQUAL(s->max_inputs, 3);
	CU_ASSERT(s->inputs[2].optional);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ir_op_schema_attr(s, "auto_pad"));
	CU_ASSERT_STRING_EQUAL(ir_op_schema_attr(s, "auto_pad")->default_value, "NOTSET");
	CU_ASSERT_EQUAL(ir_op_schema_attr(s, "strides")->type, IR_ATTR_INTS);
	CU_ASSERT_PTR_NULL(ir_op_schema_attr(s, "nope"));
	s = ir_registry_find("", "Concat", 13);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->max_inputs, IR_OP_UNBOUNDED);
	CU_ASSERT(s->inputs[0].variadic);
	CU_ASSERT(ir_op_schema_attr(s, "axis")->required);
	s = ir_registry_find("", "Upsample", 10);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT(s->deprecated);
}

/* The LLM contrib ops as ContribOperators.md gives them: arities, the
 * optional inputs, MatMulNBits' defaults. */
static void test_llm_contrib(void)
{
	const struct ir_op_schema *s = ir_registry_find("com.microsoft", "MatMulNBits", 1);
	const struct ir_op_attr *a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->min_inputs, 3);
	CU_ASSERT_EQUAL(s->max_inputs, 6);
	CU_ASSERT_EQUAL(s->max_outputs, 1);
	CU_ASSERT_STRING_EQUAL(s->inputs[4].name, "g_idx");
	CU_ASSERT(s->inputs[3].optional && s->inputs[5].optional && !s->inputs[2].optional);
	a = ir_op_schema_attr(s, "bits");
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_STRING_EQUAL(a->default_value, "4");
	a = ir_op_schema_attr(s, "block_size");
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT(a->required);
	s = ir_registry_find("com.microsoft", "SkipSimplifiedLayerNormalization", 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->min_inputs, 3);
	CU_ASSERT_EQUAL(s->max_inputs, 4);
	CU_ASSERT_EQUAL(s->max_outputs, 4);
	CU_ASSERT_STRING_EQUAL(s->inputs[3].name, "bias");
	CU_ASSERT_STRING_EQUAL(s->outputs[3].name, "input_skip_bias_sum");
}

/* Coverage past python-onnx 1.12 (opset 17) and of the contrib ops. */
static void test_coverage(void)
{
	static const char *const contrib[] = {
		"Attention", "BiasGelu", "FastGelu", "FusedMatMul", "Gelu",
		"GroupQueryAttention", "LayerNormalization", "MultiHeadAttention",
		"QuickGelu", "RotaryEmbedding", "SimplifiedLayerNormalization",
		"SkipLayerNormalization", NULL,
	};
	size_t newer = 0;

	for (size_t i = 0; i < ir_registry_count(); i++)
		if (strcmp(ir_registry_at(i)->domain, "ai.onnx") == 0 &&
		    ir_registry_at(i)->since_version > 17)
			newer++;
	CU_ASSERT(newer >= 50);
	CU_ASSERT(ir_registry_max_version("") >= 21);
	CU_ASSERT(ir_registry_max_version("ai.onnx.ml") >= 4);
	CU_ASSERT_EQUAL(found_version("", "Col2Im", 18), 18);
	CU_ASSERT_EQUAL(found_version("", "Attention", 23), 23);
	CU_ASSERT_EQUAL(found_version("", "RotaryEmbedding", 23), 23);
	CU_ASSERT_EQUAL(found_version("", "LayerNormalization", 17), 17);
	for (size_t i = 0; contrib[i]; i++) {
		if (!ir_registry_find("com.microsoft", contrib[i], 1))
			printf("\nregistry: com.microsoft %s missing", contrib[i]);
		CU_ASSERT_PTR_NOT_NULL(ir_registry_find("com.microsoft", contrib[i], 1));
	}
	/* GroupQueryAttention as ContribOperators.md documents it */
	{
		const struct ir_op_schema *g = ir_registry_find("com.microsoft",
								"GroupQueryAttention", 1);
		const struct ir_op_attr *a;

		CU_ASSERT_PTR_NOT_NULL_FATAL(g);
		CU_ASSERT(g->min_inputs == 7 && g->max_inputs == 16 && g->n_inputs == 16);
		CU_ASSERT(g->min_outputs == 1 && g->max_outputs == 4);
		CU_ASSERT(!strcmp(g->inputs[5].name, "seqlens_k") && !g->inputs[5].optional);
		CU_ASSERT(!strcmp(g->inputs[1].name, "key") && g->inputs[1].optional);
		a = ir_op_schema_attr(g, "kv_num_heads");
		CU_ASSERT(a && a->required);
		a = ir_op_schema_attr(g, "local_window_size");
		CU_ASSERT(a && a->default_value && !strcmp(a->default_value, "-1"));
	}
}

/* onnxruntime's contrib ops registered in the default domain. */
static void test_ort_default_fallback(void)
{
	const struct ir_op_schema *s;

	/* plain lookups keep their meaning */
	CU_ASSERT_PTR_NULL(ir_registry_find("", "SimplifiedLayerNormalization", 17));
	CU_ASSERT_PTR_NULL(ir_registry_find("", "LayerNormalization", 16));
	s = ir_registry_find_flags("", "SimplifiedLayerNormalization", 17,
				   IR_REGISTRY_ORT_DEFAULT);
	CU_ASSERT(s && !strcmp(s->domain, "com.microsoft") && s->since_version == 1);
	s = ir_registry_find_flags("ai.onnx", "SimplifiedLayerNormalization", 1,
				   IR_REGISTRY_ORT_DEFAULT);
	CU_ASSERT(s && !strcmp(s->domain, "com.microsoft"));
	CU_ASSERT_PTR_NULL(ir_registry_find_flags("", "SimplifiedLayerNormalization",
						  17, 0));
	/* ai.onnx has LayerNormalization (17): no fallback below it */
	CU_ASSERT_PTR_NULL(ir_registry_find_flags("", "LayerNormalization", 16,
						  IR_REGISTRY_ORT_DEFAULT));
	s = ir_registry_find_flags("", "LayerNormalization", 17,
				   IR_REGISTRY_ORT_DEFAULT);
	CU_ASSERT(s && !strcmp(s->domain, "ai.onnx") && s->since_version == 17);
	/* other ops and domains are untouched */
	CU_ASSERT_PTR_NULL(ir_registry_find_flags("", "SkipLayerNormalization", 17,
						  IR_REGISTRY_ORT_DEFAULT));
	s = ir_registry_find_flags("", "Conv", 11, IR_REGISTRY_ORT_DEFAULT);
	CU_ASSERT(s && !strcmp(s->domain, "ai.onnx"));
	CU_ASSERT_STRING_EQUAL(ir_registry_default_fallback("",
			       "SimplifiedLayerNormalization"), "com.microsoft");
	CU_ASSERT_PTR_NULL(ir_registry_default_fallback("com.microsoft",
			   "SimplifiedLayerNormalization"));
	CU_ASSERT_PTR_NULL(ir_registry_default_fallback("", "LayerNormalization"));
	CU_ASSERT_PTR_NULL(ir_registry_default_fallback("", NULL));
}

/* ---- cross-check against python-onnx -------------------------------- */

/* A number if all of s parses as one. */
static int as_number(const char *s, double *v)
{
	char *end;

	if (!*s)
		return 0;
	*v = strtod(s, &end);
	return *end == '\0';
}

/* Compare one default element: numerically when both are numbers (the
 * spec prints floats rounded to 5 decimals), else as text. */
static int same_scalar(const char *a, const char *b)
{
	double x, y;

	if (as_number(a, &x) && as_number(b, &y))
		return fabs(x - y) <= 1e-5 + 1e-5 * fabs(y);
	return strcmp(a, b) == 0;
}

/* Defaults as ','-separated lists; NULL/"" mean none. */
static int same_default(const char *reg, const char *fix)
{
	char a[1024], b[1024];
	char *sa, *sb, *pa, *pb;

	reg = reg ? reg : "";
	if (strcmp(fix, "<value>") == 0)  /* tensor default: presence only */
		return 1;
	if (strlen(reg) >= sizeof(a) || strlen(fix) >= sizeof(b))
		return strcmp(reg, fix) == 0;
	strcpy(a, reg);
	strcpy(b, fix);
	pa = strtok_r(a, ",", &sa);
	pb = strtok_r(b, ",", &sb);
	while (pa && pb) {
		while (*pa == ' ')
			pa++;
		while (*pb == ' ')
			pb++;
		if (!same_scalar(pa, pb))
			return 0;
		pa = strtok_r(NULL, ",", &sa);
		pb = strtok_r(NULL, ",", &sb);
	}
	return pa == NULL && pb == NULL;
}

struct check {
	int n_entries, n_bad, n_expected;
};

static void mismatch(struct check *c, const char *dom, const char *name,
		     int ver, const char *attr, const char *fmt, const char *a,
		     const char *b)
{
	char key[256];

	snprintf(key, sizeof(key), "%s %s-%d %s", dom, name, ver, attr);
	if (is_expected(key)) {
		c->n_expected++;
		return;
	}
	c->n_bad++;
	printf("\nregistry mismatch: %s: ", key);
	printf(fmt, a, b);
}

static void check_attrs(struct check *c, const struct ir_op_schema *s,
			char *list)
{
	char *save, *item;
	size_t n_fix = 0;
	char num[2][32];

	for (item = strtok_r(list, ";", &save); item;
	     item = strtok_r(NULL, ";", &save)) {
		char *name = item, *type, *req, *def;
		const struct ir_op_attr *a;

		type = strchr(name, ':');
		if (!type)
			continue;
		*type++ = '\0';
		req = strchr(type, ':');
		if (!req)
			continue;
		*req++ = '\0';
		def = strchr(req, ':');
		if (!def)
			continue;
		*def++ = '\0';
		n_fix++;
		a = ir_op_schema_attr(s, name);
		if (!a) {
			mismatch(c, s->domain, s->name, s->since_version, name,
				 "attribute missing in registry%s%s", "", "");
			continue;
		}
		if ((int)a->type != atoi(type)) {
			snprintf(num[0], sizeof(num[0]), "%d", (int)a->type);
			mismatch(c, s->domain, s->name, s->since_version, name,
				 "type %s, onnx %s", num[0], type);
		}
		if (a->required != (atoi(req) != 0))
			mismatch(c, s->domain, s->name, s->since_version, name,
				 "required %s, onnx %s", a->required ? "1" : "0", req);
		if (!same_default(a->default_value, def))
			mismatch(c, s->domain, s->name, s->since_version, name,
				 "default '%s', onnx '%s'",
				 a->default_value ? a->default_value : "(none)", def);
	}
	if (n_fix != s->n_attrs) {
		snprintf(num[0], sizeof(num[0]), "%zu", s->n_attrs);
		snprintf(num[1], sizeof(num[1]), "%zu", n_fix);
		mismatch(c, s->domain, s->name, s->since_version, "*",
			 "%s attributes, onnx %s", num[0], num[1]);
	}
}

static void check_line(struct check *c, char *line)
{
	char *f[9], *save;
	const struct ir_op_schema *first, *s = NULL;
	size_t n;
	int ver, k;
	char a[64], b[64];

	for (k = 0; k < 9; k++) {
		f[k] = strtok_r(k ? NULL : line, "\t\n", &save);
		if (!f[k])
			break;
	}
	if (k < 8) {
		printf("\nregistry: bad fixture line '%s'", line);
		c->n_bad++;
		return;
	}
	if (k == 8)
		f[8] = NULL;
	c->n_entries++;
	ver = atoi(f[2]);
	n = ir_registry_versions(f[0], f[1], &first);
	for (size_t i = 0; i < n; i++)
		if (first[i].since_version == ver)
			s = &first[i];
	if (!s) {
		mismatch(c, f[0], f[1], ver, "*", "entry missing in registry%s%s",
			 "", "");
		return;
	}
	snprintf(a, sizeof(a), "%d-%d/%d-%d", s->min_inputs, s->max_inputs,
		 s->min_outputs, s->max_outputs);
	snprintf(b, sizeof(b), "%s-%s/%s-%s", f[3], f[4], f[5], f[6]);
	if (strcmp(a, b) != 0)
		mismatch(c, f[0], f[1], ver, "*", "arity %s, onnx %s", a, b);
	if (s->deprecated != atoi(f[7]))
		mismatch(c, f[0], f[1], ver, "*", "deprecated %s, onnx %s",
			 s->deprecated ? "1" : "0", f[7]);
	if (f[8]) {
		check_attrs(c, s, f[8]);
	} else if (s->n_attrs) {
		snprintf(a, sizeof(a), "%zu", s->n_attrs);
		mismatch(c, f[0], f[1], ver, "*", "%s attributes, onnx %s", a, "0");
	}
}

static void test_onnx_cross_check(void)
{
	FILE *fp = fopen(FIXTURE, "r");
	char line[8192];
	struct check c = { 0, 0, 0 };
	size_t n_expected = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	while (fgets(line, sizeof(line), fp)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		check_line(&c, line);
	}
	fclose(fp);
	for (size_t i = 0; expected[i].key; i++)
		n_expected++;
	if (c.n_bad)
		printf("\nregistry: %d of %d fixture entries mismatch\n",
		       c.n_bad, c.n_entries);
	CU_ASSERT(c.n_entries > 400);
	CU_ASSERT_EQUAL(c.n_bad, 0);
	/* Every listed mismatch still happens: the list can only shrink. */
	CU_ASSERT_EQUAL((size_t)c.n_expected, n_expected);
}

static const struct unit_test tests[] = {
	{ "table sorted and unique", test_sorted_unique },
	{ "version lookup by opset", test_lookup },
	{ "coverage beyond onnx 1.12", test_coverage },
	{ "MatMulNBits and SkipSimplifiedLayerNormalization", test_llm_contrib },
	{ "onnxruntime default-domain fallback", test_ort_default_fallback },
	{ "cross-check with onnx 1.12 schemas", test_onnx_cross_check },
	{ NULL, NULL },
};

int suite_registry_register(void)
{
	return unit_add_suite("registry", tests);
}
