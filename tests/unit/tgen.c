/* tgen.c: what the rewrite property suites share (see tgen.h): a seeded
 * generator, initializers of random or given values, small model
 * helpers, output comparison, and the onnx.checker run over the
 * rewritten models. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "validators/compare.h"
#include "tests/unit/tgen.h"

/* Rewritten models of opset <= 17 are saved here and checked at the end
 * with onnx.checker.check_model(full_check=True) by /usr/bin/python3
 * (skipped, with a note, when it or its onnx module is missing). */
static char check_dir[64];
static int n_saved;

uint64_t tg_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}
int64_t tg_rnd(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(tg_next(s) % (uint64_t)(hi - lo + 1));
}
/* seeded values in [-1, 1) */
void tg_fill(uint64_t *s, double *v, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		v[i] = (double)(tg_next(s) % 2000) / 1000.0 - 1.0;
}
int64_t tg_numel(const int64_t *d, size_t n)
{
	int64_t k = 1;

	for (size_t i = 0; i < n; i++)
		k *= d[i];
	return k;
}
struct ir_value *tg_rand_init(struct ir_model *m, uint64_t *s, const char *name,
				  const int64_t *dims, size_t n)
{
	double *v = malloc((size_t)(tg_numel(dims, n) + 1) * sizeof(double));
	struct ir_value *r;

	CU_ASSERT_FATAL(v != NULL);
	tg_fill(s, v, tg_numel(dims, n));
	r = tm_init(m, name, IR_DTYPE_FLOAT, dims, n, v);
	free(v);
	return r;
}
struct ir_value *tg_int_init(struct ir_model *m, const char *name, const int64_t *v,
				 const int64_t *dims, size_t n)
{
	double d[64];

	for (int64_t i = 0; i < tg_numel(dims, n); i++)
		d[i] = (double)v[i];
	return tm_init(m, name, IR_DTYPE_INT64, dims, n, d);
}
void tg_finish(struct ir_model *m, int dtype)
{
	tm_output(m, "y", dtype, NULL, 0);
	tm_verify(m);
}
void tg_set_ints(struct ir_node *n, const char *name, const int64_t *v, size_t k)
{
	CU_ASSERT_FATAL(ir_node_set_ints(n, name, v, k) == 0);
}
struct ir_node *tg_find_op(struct ir_model *m, const char *op)
{
	for (size_t i = 0; i < m->graph->n_nodes; i++)
		if (!strcmp(ir_s(m->graph->nodes[i]->op_type), op))
			return m->graph->nodes[i];
	return NULL;
}
double tg_compare(struct rt_value *a, struct rt_value *b)
{
	struct rt_cmp_opts o = { 0, 0 };
	struct rt_metrics mt;

	CU_ASSERT_FATAL(a && b);
	CU_ASSERT(a->numel == b->numel && a->rank == b->rank && a->dtype == b->dtype);
	if (a->numel != b->numel || a->dtype != b->dtype)
		return INFINITY;
	for (int i = 0; i < a->rank && i < b->rank; i++)
		CU_ASSERT(a->dims[i] == b->dims[i]);
	rt_compare(a, b, &o, &mt);
	CU_ASSERT(mt.n == b->numel);
	return isnan(mt.max_abs) ? INFINITY : mt.max_abs;
}
void tg_save_for_checker(struct ir_model *m, const char *what, const struct rt_value *out)
{
	struct ir_type *t = m->graph->outputs[0].type;
	char path[256];
	struct ir_diag d;

	if (ir_model_opset(m, "") > 17)
		return;
	/* the checker wants the output's shape: the one computed */
	CU_ASSERT_FATAL(t != NULL);
	free(t->shape.dims);
	t->shape.dims = calloc((size_t)out->rank + 1, sizeof(*t->shape.dims));
	CU_ASSERT_FATAL(t->shape.dims != NULL);
	t->shape.n_dims = (size_t)out->rank;
	for (int i = 0; i < out->rank; i++) {
		t->shape.dims[i].kind = IR_DIM_VALUE;
		t->shape.dims[i].value = out->dims[i];
	}
	t->present |= IR_TYPE_HAS_SHAPE;
	if (!check_dir[0]) {
		snprintf(check_dir, sizeof(check_dir), "/tmp/opmig-decomp2-XXXXXX");
		CU_ASSERT_FATAL(mkdtemp(check_dir) != NULL);
	}
	snprintf(path, sizeof(path), "%s/%03d-%s.onnx", check_dir, n_saved++, what);
	for (char *q = path + strlen(check_dir) + 1; *q; q++)
		if (*q == '/' || *q == ' ')
			*q = '_';
	ir_diag_init(&d);
	if (ir_model_save(m, path, NULL, &d) < 0)
		fprintf(stderr, "\nsave %s: %s\n", path, d.msg);
	CU_ASSERT(d.status == 0);
}
void tg_run_checker(void)
{
	static const char script[] =
		"import glob, sys\n"
		"try:\n"
		"    import onnx\n"
		"except ImportError:\n"
		"    sys.exit(77)\n"
		"bad = 0\n"
		"for f in sorted(glob.glob(sys.argv[1] + '/*.onnx')):\n"
		"    try:\n"
		"        onnx.checker.check_model(onnx.load(f), full_check=True)\n"
		"    except Exception as e:\n"
		"        bad += 1\n"
		"        print(f, str(e).splitlines()[0] if str(e) else e)\n"
		"sys.exit(1 if bad else 0)\n";
	char path[128], cmd[512];
	FILE *f;
	int rc;

	if (!check_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/check.py", check_dir);
	f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs(script, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "test -x /usr/bin/python3 || exit 77; /usr/bin/python3 '%s' '%s'",
		 path, check_dir);
	rc = system(cmd);
	rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
	if (rc == 77)
		fprintf(stderr, "\n(onnx.checker not available: %d models not checked)\n", n_saved);
	CU_ASSERT(rc == 0 || rc == 77);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", check_dir);
	CU_ASSERT(system(cmd) == 0);
	check_dir[0] = 0;
	n_saved = 0;
}
