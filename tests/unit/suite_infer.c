/* suite_infer.c: unit tests of static type/shape inference (ir/infer.h):
 * the op table is sorted, hand-derived shapes of testdata/infer/ models,
 * constant folding chains, error and warning messages, subgraphs, and the
 * reference models whose declared output shapes must be reproduced. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/infer_int.h"
#include "tests/unit/suites.h"

struct fixture {
	struct ir_model *m;
	struct ir_infer r;
	struct ir_diag d;
	int rc;
};

/* Load (verified, or only parsed with IR_INFER_NO_MERGE << 1 in flags:
 * for models the verifier would reject) and infer a model. */
#define PARSE_ONLY (IR_INFER_NO_MERGE << 1)
static int fixture_load(struct fixture *f, const char *path, unsigned flags)
{
	int rc;

	memset(f, 0, sizeof(*f));
	ir_diag_init(&f->d);
	ir_infer_init(&f->r);
	f->r.flags = flags & ~PARSE_ONLY;
	rc = flags & PARSE_ONLY ? ir_model_parse(path, NULL, &f->m, &f->d) :
	     ir_model_load(path, NULL, &f->m, &f->d);
	if (rc < 0) {
		fprintf(stderr, "\n%s: %s\n", path, f->d.msg);
		return -1;
	}
	f->rc = ir_infer_model(f->m, &f->r, &f->d);
	return 0;
}

static void fixture_release(struct fixture *f)
{
	ir_infer_release(&f->r);
	ir_model_free(f->m);
}

static const struct ir_vtype *vt(struct fixture *f, const char *name)
{
	struct ir_value *v = ir_graph_find(f->m->graph, name);

	return v ? ir_infer_get(&f->r, v) : NULL;
}

/* Compare a value's formatted type; print both on mismatch. */
static int check_type(struct fixture *f, const char *name, const char *want)
{
	const struct ir_vtype *t = vt(f, name);
	char buf[300];

	if (!t) {
		fprintf(stderr, "\nvalue '%s': no result\n", name);
		return 0;
	}
	ir_vtype_format(t, buf, sizeof(buf));
	if (strcmp(buf, want)) {
		fprintf(stderr, "\nvalue '%s': inferred %s, expected %s\n", name, buf, want);
		return 0;
	}
	return 1;
}

static int check_const(struct fixture *f, const char *name, const int64_t *want,
		       size_t n)
{
	const struct ir_vtype *t = vt(f, name);
	int64_t got[64];
	size_t k;

	if (!t || !infer_vt_const_ints(t, got, 64, &k) || k != n) {
		fprintf(stderr, "\nvalue '%s': no constant of %zu elements\n", name, n);
		return 0;
	}
	return !memcmp(got, want, n * sizeof(*want));
}

#define EXPECT(f, name, want) CU_ASSERT(check_type((f), (name), (want)))

static void test_table_sorted(void)
{
	for (size_t i = 1; i < infer_ops_len; i++) {
		int c = strcmp(infer_ops[i - 1].domain, infer_ops[i].domain);

		if (!c)
			c = strcmp(infer_ops[i - 1].op, infer_ops[i].op);
		if (c >= 0)
			fprintf(stderr, "\ninfer table: %s before %s\n",
				infer_ops[i - 1].op, infer_ops[i].op);
		CU_ASSERT(c < 0);
	}
	CU_ASSERT_PTR_NOT_NULL(infer_op_find("", "Conv"));
	CU_ASSERT_PTR_NOT_NULL(infer_op_find("ai.onnx", "Where"));
	CU_ASSERT_PTR_NOT_NULL(infer_op_find("com.microsoft", "Gelu"));
	CU_ASSERT_PTR_NULL(infer_op_find("", "NoSuchOp"));
	/* every op in the table exists in the registry */
	for (size_t i = 0; i < infer_ops_len; i++) {
		const struct ir_op_schema *s;

		if (!ir_registry_versions(infer_ops[i].domain, infer_ops[i].op, &s))
			fprintf(stderr, "\ninfer table: %s not in registry\n", infer_ops[i].op);
		CU_ASSERT(ir_registry_versions(infer_ops[i].domain, infer_ops[i].op, &s) > 0);
	}
}

static void test_conv_pool(void)
{
	struct fixture f;

	CU_ASSERT_FATAL(fixture_load(&f, TESTDATA("infer/conv.onnx"), IR_INFER_NO_MERGE) == 0);
	CU_ASSERT_EQUAL(f.rc, 0);
	/* (32 + 2 - 3) / 1 + 1 = 32 */
	EXPECT(&f, "conv_p1", "float[1,8,32,32]");
	/* (32 - 3) / 2 + 1 = 15 */
	EXPECT(&f, "conv_s2", "float[1,8,15,15]");
	/* effective kernel (3-1)*2+1 = 5: 32 - 5 + 1 = 28 */
	EXPECT(&f, "conv_d2", "float[1,8,28,28]");
	/* SAME: ceil(32 / 2) = 16 */
	EXPECT(&f, "conv_same", "float[1,8,16,16]");
	/* ceil((32 - 3) / 2) + 1 = 16, floor: 15 */
	EXPECT(&f, "mp_ceil", "float[1,3,16,16]");
	EXPECT(&f, "mp_floor", "float[1,3,15,15]");
	EXPECT(&f, "ap_valid", "float[1,3,15,15]");
	/* SAME_LOWER, stride 3: ceil(32 / 3) = 11 */
	EXPECT(&f, "ap_lower", "float[1,3,11,11]");
	EXPECT(&f, "gap", "float[1,8,1,1]");
	EXPECT(&f, "bn", "float[1,8,32,32]");
	EXPECT(&f, "flat", "float[1,8]");
	CU_ASSERT_EQUAL(f.r.n_not_inferred, 0);
	fixture_release(&f);
}

static void test_chain(void)
{
	struct fixture f;
	static const int64_t target[] = { 2, -1 }, n[] = { 384 }, tail[] = { 8, 8 };

	CU_ASSERT_FATAL(fixture_load(&f, TESTDATA("infer/chain_static.onnx"), IR_INFER_NO_MERGE) == 0);
	CU_ASSERT_EQUAL(f.rc, 0);
	CU_ASSERT(check_const(&f, "target", target, 2));
	EXPECT(&f, "y", "float[2,192]");
	EXPECT(&f, "y2", "float[2,3,64]");
	EXPECT(&f, "n", "int64[]");
	CU_ASSERT(check_const(&f, "n", n, 1));
	CU_ASSERT(check_const(&f, "tail", tail, 2));
	fixture_release(&f);
	/* symbolic batch: N flows through the chain, -1 is solved as 192 */
	CU_ASSERT_FATAL(fixture_load(&f, TESTDATA("infer/chain_sym.onnx"), IR_INFER_NO_MERGE) == 0);
	CU_ASSERT_EQUAL(f.rc, 0);
	EXPECT(&f, "target", "int64[2]");
	EXPECT(&f, "y", "float[N,192]");
	EXPECT(&f, "y2", "float[N,3,64]");
	EXPECT(&f, "n", "int64[]");
	CU_ASSERT(!vt(&f, "n")->has_const);
	fixture_release(&f);
}

/* A scalar constant's one element is the symbolic dim `want` */
static int check_sym(struct fixture *f, const char *name, const char *want)
{
	const struct ir_vtype *t = vt(f, name);

	if (!t || !t->has_const || t->n_const != 1 || t->cval[0].kind != IR_VDIM_PARAM ||
	    strcmp(t->cval[0].param, want)) {
		fprintf(stderr, "\nvalue '%s': no symbolic constant %s\n", name, want);
		return 0;
	}
	return 1;
}

/* Sums of symbols: equal sums, Range lengths only where provably >= 0 */
static void test_sym_sums(void)
{
	struct fixture f;
	static const int64_t one[] = { 1 };

	CU_ASSERT_FATAL(fixture_load(&f, TESTDATA("infer/symsum.onnx"), IR_INFER_NO_MERGE) == 0);
	CU_ASSERT_EQUAL(f.rc, 0);
	EXPECT(&f, "cat", "float[(past + seq),4]");
	EXPECT(&f, "cat2", "float[(past + seq),4]");
	CU_ASSERT(check_sym(&f, "ps", "(past + seq)"));
	CU_ASSERT(check_const(&f, "same", one, 1));
	EXPECT(&f, "r_ps", "int64[(past + seq)]");
	CU_ASSERT(check_sym(&f, "d", "(-seq + total)"));
	EXPECT(&f, "r_seq", "int64[seq]");
	EXPECT(&f, "r_neg", "int64[?]");       /* total - seq may be < 0 */
	EXPECT(&f, "r_three", "int64[3]");
	EXPECT(&f, "r_twice", "int64[(2*seq)]");
	EXPECT(&f, "r_step", "int64[?]");      /* delta 2 */
	EXPECT(&f, "r_less", "int64[?]");      /* total - 3 may be < 0 */
	EXPECT(&f, "r_u", "int64[?]");         /* a declared "(past + seq)" is no sum */
	fixture_release(&f);
}

/* Slices whose ends are shape elements keep a dim sliced to its own
 * length and the axes they do not slice; a symbolic dim is never -1
 * (torch's expand idiom), a sum of symbols may be */
static void test_sym_slices(void)
{
	struct fixture f;
	static const int64_t eq[] = { 0, 0, 1, 1 };
	int64_t got[4];
	size_t n;

	CU_ASSERT_FATAL(fixture_load(&f, TESTDATA("infer/symslice.onnx"), IR_INFER_NO_MERGE) == 0);
	CU_ASSERT_EQUAL(f.rc, 0);
	EXPECT(&f, "sl_keep", "float[N,1,S,T]");
	EXPECT(&f, "sl_other", "float[N,1,S,?]");   /* to K: T or K, whichever is less */
	EXPECT(&f, "sl_start", "float[N,1,S,?]");   /* from 1 */
	EXPECT(&f, "sl_two", "float[N,1,S,T]");     /* and a full slice of axis 2 */
	CU_ASSERT(check_const(&f, "eq", eq, 4));
	EXPECT(&f, "ex", "float[N,1,S,T]");
	CU_ASSERT(!infer_vt_const_ints(vt(&f, "eq_sum"), got, 4, &n));
	fixture_release(&f);
}

static void test_broadcast(void)
{
	struct fixture f;
	static const int64_t kk[] = { 8, 12 }, kd[] = { 6, 9 }, kq[] = { 2, 3 };

	CU_ASSERT_FATAL(fixture_load(&f, TESTDATA("infer/bcast.onnx"), IR_INFER_NO_MERGE) == 0);
	CU_ASSERT_EQUAL(f.rc, 0);
	EXPECT(&f, "y", "float[2,3,4]");
	EXPECT(&f, "w", "float[2,3,4]");
	EXPECT(&f, "eq", "bool[2,3,4]");
	CU_ASSERT(check_const(&f, "kk", kk, 2));
	CU_ASSERT(check_const(&f, "kd", kd, 2));
	CU_ASSERT(check_const(&f, "kq", kq, 2));
	EXPECT(&f, "mm", "float[2,5,3,6]");
	EXPECT(&f, "mv", "float[5,6]");
	EXPECT(&f, "gemm", "float[3,5]");
	fixture_release(&f);
}

static void expect_error(const char *path, const char *msg)
{
	struct fixture f;

	CU_ASSERT_FATAL(fixture_load(&f, path, PARSE_ONLY) == 0);
	CU_ASSERT(f.rc < 0);
	if (!strstr(f.d.msg, msg))
		fprintf(stderr, "\n%s: got \"%s\", expected \"%s\"\n", path, f.d.msg, msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.d.msg, msg));
	fixture_release(&f);
}

static void test_errors(void)
{
	expect_error(TESTDATA("infer/bad_bcast.onnx"),
		     "node 'add_bad' (Add): shapes [2,3] and [4] are not broadcastable");
	expect_error(TESTDATA("infer/bad_types.onnx"),
		     "node 'add_types' (Add): inputs have different types float and int64");
	expect_error(TESTDATA("infer/bad_conv.onnx"),
		     "node 'conv_bad' (Conv): input rank 2 is below 3");
	expect_error(TESTDATA("infer/bad_conv_w.onnx"),
		     "node 'conv_w' (Conv): weight rank 3 does not match input rank 4");
	expect_error(TESTDATA("infer/bad_constraint.onnx"),
		     "node 'sqrt_int' (Sqrt): input 0 ('X') has type int64, not allowed by T");
	expect_error(TESTDATA("infer/bad_concat.onnx"),
		     "node 'concat_noaxis' (Concat): missing required attribute 'axis'");
}

static void test_shape_ops(void)
{
	struct fixture f;
	static const int64_t rng[] = { 1, 4, 7, 10 }, rsl[] = { 4, 7 };
	static const int64_t cos[] = { 7, 7, 7, 7, 7, 7 };

	CU_ASSERT_FATAL(fixture_load(&f, TESTDATA("infer/shapes.onnx"), IR_INFER_NO_MERGE) == 0);
	CU_ASSERT_EQUAL(f.rc, 0);
	if (f.rc)
		fprintf(stderr, "\n%s\n", f.d.msg);
	EXPECT(&f, "rng", "int64[4]");
	CU_ASSERT(check_const(&f, "rng", rng, 4));
	EXPECT(&f, "cos", "int64[2,3]");
	CU_ASSERT(check_const(&f, "cos", cos, 6));
	/* axis 0: 1..4 step 2 -> 2; axis 2: 6..9 -> 3 */
	EXPECT(&f, "sl", "float[2,6,3]");
	CU_ASSERT(check_const(&f, "rsl", rsl, 2));
	EXPECT(&f, "tr", "float[10,4,6]");
	EXPECT(&f, "sq", "float[5]");
	EXPECT(&f, "sq1", "float[5,1]");
	EXPECT(&f, "s0", "float[4,6,3]");
	EXPECT(&f, "s1", "float[4,6,7]");
	EXPECT(&f, "rm", "float[4,1,10]");
	EXPECT(&f, "rs", "float[6,10]");
	EXPECT(&f, "rx", "float[]");
	EXPECT(&f, "ex", "float[2,5,3]");
	EXPECT(&f, "ti", "float[4,12,30]");
	EXPECT(&f, "pd", "float[4,8,14]");
	EXPECT(&f, "rz", "float[1,3,8,9]");
	EXPECT(&f, "rk", "float[24,10]");
	EXPECT(&f, "xc", "float16[4,6,10]");
	EXPECT(&f, "smx", "float[4,6,10]");
	EXPECT(&f, "ln", "float[4,6,10]");
	EXPECT(&f, "ln_m", "float[4,6,1]");
	EXPECT(&f, "ga", "float[4,2,2,10]");
	EXPECT(&f, "ein", "float[2,3,5]");
	EXPECT(&f, "ein2", "float[4,10,6]");
	/* implicit output: letters used once, alphabetically: i, k */
	EXPECT(&f, "ein3", "float[3,5]");
	CU_ASSERT_EQUAL(f.r.n_not_inferred, 0);
	fixture_release(&f);

	CU_ASSERT_FATAL(fixture_load(&f, TESTDATA("infer/opset11.onnx"), IR_INFER_NO_MERGE) == 0);
	CU_ASSERT_EQUAL(f.rc, 0);
	EXPECT(&f, "u", "float[1,2,3,1]");
	EXPECT(&f, "s", "float[2,3,1]");
	EXPECT(&f, "p0", "float[2,1]");
	EXPECT(&f, "p1", "float[2,2]");
	fixture_release(&f);
}

static void test_ctrl_and_merge(void)
{
	struct fixture f;

	CU_ASSERT_FATAL(fixture_load(&f, TESTDATA("infer/ctrl.onnx"), 0) == 0);
	CU_ASSERT_EQUAL(f.rc, 0);
	EXPECT(&f, "yif", "float[2,3]");
	EXPECT(&f, "acc_out", "float[2,3]");
	EXPECT(&f, "scans", "float[5,2,3]");
	/* value_info says [2,4]: warning naming the value, inferred kept */
	EXPECT(&f, "r", "float[2,3]");
	CU_ASSERT(f.d.n_warnings >= 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.d.warning, "value 'r'"));
	/* constant condition: the then branch (Relu keeps [2,3]) */
	EXPECT(&f, "yconst", "float[2,3]");
	/* an op with no inference: declared value_info fills its output */
	EXPECT(&f, "myst", "float[7]");
	EXPECT(&f, "after", "float[7]");
	CU_ASSERT_EQUAL(f.r.n_not_inferred, 1);
	CU_ASSERT_STRING_EQUAL(f.r.not_inferred[0]->op_type, "Mystery");
	/* Scan: state [3], scan output [6,3] from 6 slices of [3] */
	EXPECT(&f, "s_final", "float[3]");
	EXPECT(&f, "s_all", "float[6,3]");
	fixture_release(&f);
}

/* Declared graph output shapes of a model, reproduced without using them. */
static void check_reference(const char *path)
{
	struct fixture f;
	struct ir_graph *g;

	if (fixture_load(&f, path, IR_INFER_NO_MERGE) < 0) {
		CU_FAIL("cannot load reference model");
		return;
	}
	if (f.rc < 0)
		fprintf(stderr, "\n%s: %s\n", path, f.d.msg);
	CU_ASSERT_EQUAL(f.rc, 0);
	for (size_t i = 0; i < f.r.n_not_inferred; i++)
		fprintf(stderr, "\n%s: node '%s' (%s) not inferred\n", path,
			ir_s(f.r.not_inferred[i]->name), ir_s(f.r.not_inferred[i]->op_type));
	CU_ASSERT_EQUAL(f.r.n_not_inferred, 0);
	g = f.m->graph;
	for (size_t i = 0; i < g->n_outputs; i++) {
		const struct ir_type *ty = g->outputs[i].type;
		const struct ir_vtype *t = ir_infer_get(&f.r, g->outputs[i].value);
		int ok = t && ty && t->dtype == ty->elem_type &&
			 t->rank == (int)ty->shape.n_dims;

		for (int k = 0; ok && k < t->rank; k++) {
			const struct ir_dim *dd = &ty->shape.dims[k];

			if (dd->kind == IR_DIM_VALUE)
				ok = t->dims[k].kind == IR_VDIM_VALUE &&
				     t->dims[k].value == dd->value;
			else if (dd->kind == IR_DIM_PARAM)
				ok = t->dims[k].kind == IR_VDIM_PARAM &&
				     !strcmp(t->dims[k].param, dd->param);
		}
		if (!ok) {
			char buf[300] = "none";

			if (t)
				ir_vtype_format(t, buf, sizeof(buf));
			fprintf(stderr, "\n%s: output '%s' inferred %s\n", path,
				ir_s(g->outputs[i].value->name), buf);
		}
		CU_ASSERT(ok);
	}
	/* every node output got a dtype */
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t k = 0; k < g->nodes[i]->n_outputs; k++) {
			const struct ir_vtype *t = g->nodes[i]->outputs[k] ?
				ir_infer_get(&f.r, g->nodes[i]->outputs[k]) : NULL;

			CU_ASSERT(!g->nodes[i]->outputs[k] || (t && t->dtype && t->rank >= 0));
		}
	fixture_release(&f);
}

static void test_reference_models(void)
{
	const char *dir = "../shared/models/onnx-light";
	struct dirent *e;
	char path[1024];
	DIR *dd;
	int n = 0;

	check_reference(TESTDATA("sample.onnx"));
	if (!(dd = opendir(dir)))
		return;  /* the shared models are optional */
	while ((e = readdir(dd))) {
		size_t len = strlen(e->d_name);

		if (len < 5 || strcmp(e->d_name + len - 5, ".onnx"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		check_reference(path);
		n++;
	}
	closedir(dd);
	CU_ASSERT(n > 0);
}

/* 1 if the inferred type t contradicts the declared ty (where both know). */
static int contradicts(const struct ir_vtype *t, const struct ir_type *ty)
{
	if (!ty || ty->kind != IR_TYPE_TENSOR)
		return 0;
	if (t->dtype && IR_HAS(ty, IR_TYPE_HAS_ELEM) && t->dtype != ty->elem_type)
		return 1;
	if (t->rank < 0 || !IR_HAS(ty, IR_TYPE_HAS_SHAPE))
		return 0;
	if (t->rank != (int)ty->shape.n_dims)
		return 1;
	for (int k = 0; k < t->rank; k++)
		if (t->dims[k].kind == IR_VDIM_VALUE &&
		    ty->shape.dims[k].kind == IR_DIM_VALUE &&
		    t->dims[k].value != ty->shape.dims[k].value)
			return 1;
	return 0;
}

/* Over Debian's libonnx-testdata node cases (skipped when absent): no
 * inference error and no inferred output contradicting its declaration. */
static void test_libonnx_testdata(void)
{
	const char *dir = "/usr/share/libonnx-testdata/data/node";
	struct dirent *e;
	char path[1200];
	DIR *dd;
	int n = 0, bad = 0;

	if (!(dd = opendir(dir)))
		return;
	while ((e = readdir(dd))) {
		struct fixture f;
		struct ir_graph *g;
		FILE *fp;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/model.onnx", dir, e->d_name);
		if (!(fp = fopen(path, "rb")))
			continue;
		fclose(fp);
		if (fixture_load(&f, path, IR_INFER_NO_MERGE) < 0)
			continue;  /* models the loader rejects are its tests' concern */
		n++;
		if (f.rc < 0) {
			fprintf(stderr, "\n%s: %s\n", e->d_name, f.d.msg);
			bad++;
		}
		g = f.m->graph;
		for (size_t i = 0; f.rc == 0 && i < g->n_outputs; i++) {
			const struct ir_vtype *t = ir_infer_get(&f.r, g->outputs[i].value);

			if (t && contradicts(t, g->outputs[i].type)) {
				char buf[300];

				ir_vtype_format(t, buf, sizeof(buf));
				fprintf(stderr, "\n%s: output '%s' inferred %s contradicts its declaration\n",
					e->d_name, ir_s(g->outputs[i].value->name), buf);
				bad++;
			}
		}
		fixture_release(&f);
	}
	closedir(dd);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(n > 0);
}

/* ---- tensor files and inference seeded by concrete inputs ------------ */

static int write_bytes(const char *path, const void *buf, size_t len)
{
	FILE *fp = fopen(path, "wb");
	int ok = fp && fwrite(buf, 1, len, fp) == len;

	if (fp && fclose(fp) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

static void test_tensor_read(void)
{
	/* dims [2], int64, name "t", raw_data 16 bytes: 5 and -1 */
	static const unsigned char good[] = {
		0x08, 0x02, 0x10, 0x07, 0x42, 0x01, 't', 0x4a, 0x10,
		5, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	/* dims [3] but 16 bytes of int64 raw_data */
	static const unsigned char short_raw[] = {
		0x08, 0x03, 0x10, 0x07, 0x4a, 0x10,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	static const unsigned char bad_dtype[] = { 0x08, 0x01, 0x10, 0x63 };
	static const unsigned char corrupt[] = { 0x4a, 0x7f, 0x01 };
	char path[] = "/tmp/opmig-tensor-XXXXXX";
	struct ir_tensor *t = NULL;
	struct ir_diag d;
	const uint8_t *data;
	size_t len;
	int64_t v[2];
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_FATAL(write_bytes(path, good, sizeof(good)) == 0);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL_FATAL(ir_tensor_read(path, &t, &d), 0);
	CU_ASSERT_EQUAL(t->dtype, IR_DTYPE_INT64);
	CU_ASSERT_EQUAL(t->n_dims, 1);
	CU_ASSERT_EQUAL(t->dims[0], 2);
	CU_ASSERT_STRING_EQUAL(ir_s(t->name), "t");
	CU_ASSERT_EQUAL(ir_tensor_data(t, &data, &len, &d), 0);
	CU_ASSERT_EQUAL(len, 16);
	memcpy(v, data, sizeof(v));
	CU_ASSERT(v[0] == 5 && v[1] == -1);
	ir_tensor_free(t);

	CU_ASSERT_FATAL(write_bytes(path, short_raw, sizeof(short_raw)) == 0);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_tensor_read(path, &t, &d), IR_EINVAL);
	CU_ASSERT_PTR_NULL(t);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "raw_data has 16 bytes, dims x element size is 24"));

	CU_ASSERT_FATAL(write_bytes(path, bad_dtype, sizeof(bad_dtype)) == 0);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_tensor_read(path, &t, &d), IR_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "unknown data type 99"));

	CU_ASSERT_FATAL(write_bytes(path, corrupt, sizeof(corrupt)) == 0);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_tensor_read(path, &t, &d), IR_EINVAL);
	CU_ASSERT(d.msg[0] != 0);

	/* every allocation of the unpacker may fail without a leak */
	CU_ASSERT_FATAL(write_bytes(path, good, sizeof(good)) == 0);
	for (long k = 1; k < 8; k++) {
		ir_diag_init(&d);
		ir_alloc_fail_at(k);
		if (ir_tensor_read(path, &t, &d) == 0)
			ir_tensor_free(t);
		else
			CU_ASSERT_PTR_NULL(t);
	}
	ir_alloc_fail_at(0);
	unlink(path);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_tensor_read(path, &t, &d), IR_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "cannot open"));
}

/* A tensor with an owned raw payload. */
static struct ir_tensor *tensor_new(int dtype, const int64_t *dims, size_t n_dims,
				    const void *data, size_t len)
{
	struct ir_tensor *t = calloc(1, sizeof(*t));

	CU_ASSERT_FATAL(t != NULL);
	t->dtype = dtype;
	t->present = IR_TENSOR_HAS_DTYPE | IR_TENSOR_HAS_RAW;
	t->n_dims = n_dims;
	t->dims = malloc((n_dims + 1) * sizeof(*t->dims));
	t->raw = malloc(len + 1);
	CU_ASSERT_FATAL(t->dims && t->raw);
	if (n_dims)
		memcpy(t->dims, dims, n_dims * sizeof(*dims));
	memcpy(t->raw, data, len);
	t->raw_len = len;
	t->storage = IR_STORE_RAW;
	return t;
}

/* Append a node op(inputs...) -> out to g; names are graph values. */
static void add_node(struct ir_graph *g, const char *op, const char *out,
		     size_t n_in, const char *const *in)
{
	struct ir_node *n = calloc(1, sizeof(*n));

	CU_ASSERT_FATAL(n != NULL);
	n->op_type = strdup(op);
	n->n_inputs = n_in;
	n->inputs = calloc(n_in + 1, sizeof(*n->inputs));
	n->n_outputs = 1;
	n->outputs = calloc(1, sizeof(*n->outputs));
	CU_ASSERT_FATAL(n->op_type && n->inputs && n->outputs);
	for (size_t i = 0; i < n_in; i++)
		n->inputs[i] = ir_graph_value(g, in[i]);
	n->outputs[0] = ir_graph_value(g, out);
	n->outputs[0]->producer = n;
	CU_ASSERT_FATAL(ir_graph_add_node(g, n) == 0);
}

/* Graph inputs x (float), s (int64), a, b, d (float scalars), untyped:
 * Reshape(x, s), ConstantOfShape(s), Range(a, b, d), Cast(s) to float
 * then Mul by itself, NonZero(s), SequenceConstruct(x, y) and its length. */
static struct ir_model *seeded_model(void)
{
	static const char *const names[] = { "x", "s", "a", "b", "d" };
	static const char *const rs[] = { "x", "s" }, *const cs[] = { "s" };
	static const char *const rg[] = { "a", "b", "d" };
	static const char *const sq[] = { "sf", "sf" };
	static const char *const xy[] = { "x", "y" }, *const sn[] = { "seq" };
	struct ir_model *m = ir_model_new();
	struct ir_graph *g;
	struct ir_attr *to;

	CU_ASSERT_FATAL(m != NULL);
	m->graph = g = ir_graph_new(NULL);
	m->opsets = calloc(1, sizeof(*m->opsets));
	g->inputs = calloc(5, sizeof(*g->inputs));
	CU_ASSERT_FATAL(g && m->opsets && g->inputs);
	m->n_opsets = 1;
	m->opsets[0].version = 17;
	m->opsets[0].present = 1;
	for (size_t i = 0; i < 5; i++) {
		g->inputs[i].value = ir_graph_value(g, names[i]);
		g->inputs[i].value->is_input = 1;
	}
	g->n_inputs = 5;
	add_node(g, "Reshape", "y", 2, rs);
	add_node(g, "ConstantOfShape", "z", 1, cs);
	add_node(g, "Range", "r", 3, rg);
	add_node(g, "Cast", "sf", 1, cs);
	to = calloc(1, sizeof(*to));
	g->nodes[3]->attrs = calloc(1, sizeof(*g->nodes[3]->attrs));
	CU_ASSERT_FATAL(to && g->nodes[3]->attrs && (to->name = strdup("to")));
	to->type = IR_ATTR_INT;
	to->present = IR_ATTR_HAS_TYPE | IR_ATTR_HAS_I;
	to->i = IR_DTYPE_FLOAT;
	g->nodes[3]->attrs[0] = to;
	g->nodes[3]->n_attrs = 1;
	add_node(g, "Mul", "sq", 2, sq);
	add_node(g, "NonZero", "nz", 1, cs);
	add_node(g, "SequenceConstruct", "seq", 2, xy);
	add_node(g, "SequenceLength", "seqlen", 1, sn);
	return m;
}

static void test_seeded_inputs(void)
{
	static const int64_t d2[] = { 2, 6 }, d1[] = { 2 };
	static const int64_t sv[] = { 3, 4 };
	static const float x[12] = { 0 }, a = 0, b = 2.5f, dl = 0.5f;
	struct ir_tensor *in[5];
	struct fixture f;
	double sq[2];

	memset(&f, 0, sizeof(f));
	ir_diag_init(&f.d);
	ir_infer_init(&f.r);
	f.r.flags = IR_INFER_NO_MERGE;
	f.m = seeded_model();
	in[0] = tensor_new(IR_DTYPE_FLOAT, d2, 2, x, sizeof(x));
	in[1] = tensor_new(IR_DTYPE_INT64, d1, 1, sv, sizeof(sv));
	in[2] = tensor_new(IR_DTYPE_FLOAT, NULL, 0, &a, sizeof(a));
	in[3] = tensor_new(IR_DTYPE_FLOAT, NULL, 0, &b, sizeof(b));
	in[4] = tensor_new(IR_DTYPE_FLOAT, NULL, 0, &dl, sizeof(dl));

	/* without bindings nothing folds */
	CU_ASSERT_EQUAL(ir_infer_model(f.m, &f.r, &f.d), 0);
	EXPECT(&f, "y", "?[*]");
	EXPECT(&f, "r", "?[?]");
	ir_infer_release(&f.r);

	CU_ASSERT_EQUAL(ir_infer_model_inputs(f.m, in, 5, &f.r, &f.d), 0);
	if (f.d.msg[0])
		fprintf(stderr, "\n%s\n", f.d.msg);
	EXPECT(&f, "x", "float[2,6]");
	CU_ASSERT(check_const(&f, "s", sv, 2));
	EXPECT(&f, "y", "float[3,4]");
	EXPECT(&f, "z", "float[3,4]");
	EXPECT(&f, "r", "float[5]");
	EXPECT(&f, "sq", "float[2]");
	CU_ASSERT(vt(&f, "sq") && vt(&f, "sq")->has_fconst);
	if (vt(&f, "sq") && vt(&f, "sq")->has_fconst) {
		memcpy(sq, vt(&f, "sq")->fval, sizeof(sq));
		CU_ASSERT(sq[0] == 9 && sq[1] == 16);
	}
	EXPECT(&f, "nz", "int64[1,2]");
	EXPECT(&f, "seq", "seq(float[?,?])");
	EXPECT(&f, "seqlen", "int64[]");
	CU_ASSERT(check_const(&f, "seqlen", d1, 1));
	ir_infer_release(&f.r);

	/* more tensors than unbound inputs */
	f.m->graph->n_inputs = 4;
	ir_diag_init(&f.d);
	CU_ASSERT_EQUAL(ir_infer_model_inputs(f.m, in, 5, &f.r, &f.d), IR_EUSAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.d.msg, "5 input tensors given"));
	f.m->graph->n_inputs = 5;
	for (size_t i = 0; i < 5; i++)
		ir_tensor_free(in[i]);
	fixture_release(&f);
}

/* Every (domain, op) of the registry has an inference rule. */
static void test_registry_covered(void)
{
	size_t missing = 0;

	for (size_t i = 0; i < ir_registry_count(); i++) {
		const struct ir_op_schema *s = ir_registry_at(i);

		if (infer_op_find(s->domain, s->name))
			continue;
		if (!missing++ || (i && strcmp(ir_registry_at(i - 1)->name, s->name)))
			fprintf(stderr, "\nno inference rule for %s %s\n", s->domain, s->name);
	}
	CU_ASSERT_EQUAL(missing, 0);
}

/* ---- a tiny model built through the IR API, inputs bound to tensors ---- */

#define MB_MAX_INPUTS 24
struct mb {
	struct ir_model *m;
	struct ir_tensor *in[MB_MAX_INPUTS];
	size_t n_in;
};

static void mb_init(struct mb *b)
{
	static const char *const domains[] = { "", "ai.onnx.ml", "ai.onnx.preview" };
	struct ir_model *m = ir_model_new();

	memset(b, 0, sizeof(*b));
	CU_ASSERT_FATAL(m != NULL);
	b->m = m;
	m->graph = ir_graph_new(NULL);
	m->opsets = calloc(3, sizeof(*m->opsets));
	CU_ASSERT_FATAL(m->graph && m->opsets);
	m->graph->inputs = calloc(MB_MAX_INPUTS, sizeof(*m->graph->inputs));
	CU_ASSERT_FATAL(m->graph->inputs != NULL);
	for (size_t i = 0; i < 3; i++) {
		m->opsets[i].domain = strdup(domains[i]);
		m->opsets[i].version = ir_registry_max_version(domains[i]);
		m->opsets[i].present = 1;
	}
	m->n_opsets = 3;
}

/* A graph input bound to a tensor of the given dtype and dims; int64
 * inputs take their values from v (zeros otherwise). */
static void mb_input(struct mb *b, const char *name, int dtype,
		     const int64_t *dims, size_t n_dims, const int64_t *v)
{
	static const unsigned char zeros[1 << 14];
	struct ir_graph *g = b->m->graph;
	size_t n = 1, esize = dtype == IR_DTYPE_INT64 || dtype == IR_DTYPE_DOUBLE ? 8 :
			       dtype == IR_DTYPE_UINT8 ? 1 : 4;

	for (size_t i = 0; i < n_dims; i++)
		n *= (size_t)dims[i];
	CU_ASSERT_FATAL(b->n_in < MB_MAX_INPUTS && n * esize <= sizeof(zeros));
	g->inputs[g->n_inputs].value = ir_graph_value(g, name);
	g->inputs[g->n_inputs++].value->is_input = 1;
	b->in[b->n_in++] = tensor_new(dtype, dims, n_dims, v ? (const void *)v : zeros,
				      n * esize);
}

/* Node domain:op(ins) -> outs, outputs named in outs. */
static struct ir_node *mb_node(struct mb *b, const char *domain, const char *op,
			       size_t n_in, const char *const *in,
			       size_t n_out, const char *const *out)
{
	struct ir_graph *g = b->m->graph;
	struct ir_node *n = calloc(1, sizeof(*n));

	CU_ASSERT_FATAL(n != NULL);
	n->op_type = strdup(op);
	n->domain = strdup(domain);
	n->n_inputs = n_in;
	n->inputs = calloc(n_in + 1, sizeof(*n->inputs));
	n->n_outputs = n_out;
	n->outputs = calloc(n_out + 1, sizeof(*n->outputs));
	CU_ASSERT_FATAL(n->op_type && n->domain && n->inputs && n->outputs);
	for (size_t i = 0; i < n_in; i++)
		n->inputs[i] = ir_graph_value(g, in[i]);
	for (size_t i = 0; i < n_out; i++) {
		n->outputs[i] = ir_graph_value(g, out[i]);
		n->outputs[i]->producer = n;
	}
	CU_ASSERT_FATAL(ir_graph_add_node(g, n) == 0);
	return n;
}

static struct ir_attr *mb_attr(struct ir_node *n, const char *name, int type)
{
	struct ir_attr *a = calloc(1, sizeof(*a));
	struct ir_attr **p = realloc(n->attrs, (n->n_attrs + 1) * sizeof(*p));

	CU_ASSERT_FATAL(a && p && (a->name = strdup(name)));
	n->attrs = p;
	n->attrs[n->n_attrs++] = a;
	a->type = type;
	a->present = IR_ATTR_HAS_TYPE;
	return a;
}

static void mb_int(struct ir_node *n, const char *name, int64_t v)
{
	struct ir_attr *a = mb_attr(n, name, IR_ATTR_INT);

	a->present |= IR_ATTR_HAS_I;
	a->i = v;
}

static void mb_ints(struct ir_node *n, const char *name, const int64_t *v, size_t k)
{
	struct ir_attr *a = mb_attr(n, name, IR_ATTR_INTS);

	CU_ASSERT_FATAL((a->ints = malloc((k + 1) * sizeof(*v))) != NULL);
	memcpy(a->ints, v, k * sizeof(*v));
	a->n_ints = k;
}

static void mb_strings(struct ir_node *n, const char *name,
		       const char *const *v, size_t k)
{
	struct ir_attr *a = mb_attr(n, name, IR_ATTR_STRINGS);

	a->strings = calloc(k + 1, sizeof(*a->strings));
	a->string_lens = calloc(k + 1, sizeof(*a->string_lens));
	CU_ASSERT_FATAL(a->strings && a->string_lens);
	for (size_t i = 0; i < k; i++) {
		CU_ASSERT_FATAL((a->strings[i] = (uint8_t *)strdup(v[i])) != NULL);
		a->string_lens[i] = strlen(v[i]);
	}
	a->n_strings = k;
}

static void mb_infer(struct mb *b, struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	ir_diag_init(&f->d);
	ir_infer_init(&f->r);
	f->r.flags = IR_INFER_NO_MERGE;
	f->m = b->m;
	f->rc = ir_infer_model_inputs(b->m, b->in, b->n_in, &f->r, &f->d);
	if (f->rc < 0 || f->d.msg[0])
		fprintf(stderr, "\n%s\n", f->d.msg);
}

static void mb_release(struct mb *b, struct fixture *f)
{
	fixture_release(f);
	for (size_t i = 0; i < b->n_in; i++)
		ir_tensor_free(b->in[i]);
}

#define IN1(x) ((const char *const[]){ x })
#define NAMES(...) ((const char *const[]){ __VA_ARGS__ })
#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })
#define NDIMS(...) (sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t))
#define INPUT(b, name, dt, ...) mb_input((b), (name), (dt), DIMS(__VA_ARGS__), \
					 NDIMS(__VA_ARGS__), NULL)

/* Hand-derived shapes of the rules for the newer ai.onnx ops. */
static void test_new_onnx_ops(void)
{
	struct mb b;
	struct fixture f;
	struct ir_node *n;

	mb_init(&b);
	INPUT(&b, "x", IR_DTYPE_FLOAT, 2, 5, 8);
	INPUT(&b, "scale", IR_DTYPE_FLOAT, 8);
	INPUT(&b, "logits", IR_DTYPE_FLOAT, 4, 10);
	INPUT(&b, "cols", IR_DTYPE_FLOAT, 1, 12, 9);
	mb_input(&b, "img", IR_DTYPE_INT64, DIMS(2), 1, DIMS(5, 5));
	mb_input(&b, "blk", IR_DTYPE_INT64, DIMS(2), 1, DIMS(2, 2));
	INPUT(&b, "theta", IR_DTYPE_FLOAT, 2, 2, 3);
	mb_input(&b, "size", IR_DTYPE_INT64, DIMS(4), 1, DIMS(2, 3, 7, 9));
	INPUT(&b, "hwc", IR_DTYPE_FLOAT, 10, 7, 3);
	mb_input(&b, "crop", IR_DTYPE_INT64, DIMS(2), 1, DIMS(5, 9));
	INPUT(&b, "im", IR_DTYPE_FLOAT, 1, 2, 8, 8);
	INPUT(&b, "w", IR_DTYPE_FLOAT, 4, 2, 3, 3);
	INPUT(&b, "off", IR_DTYPE_FLOAT, 1, 18, 6, 6);
	INPUT(&b, "rois", IR_DTYPE_FLOAT, 5, 5);
	INPUT(&b, "q", IR_DTYPE_FLOAT, 1, 2, 4, 8);
	INPUT(&b, "v", IR_DTYPE_FLOAT, 1, 2, 6, 16);
	INPUT(&b, "enc", IR_DTYPE_UINT8, 100);

	n = mb_node(&b, "", "RandomNormal", 0, NULL, 1, IN1("rn"));
	mb_int(n, "dtype", IR_DTYPE_DOUBLE);
	mb_ints(n, "shape", DIMS(2, 3), 2);
	mb_int(mb_node(&b, "", "Multinomial", 1, IN1("logits"), 1, IN1("mn")),
	       "sample_size", 5);
	mb_node(&b, "", "RMSNormalization", 2, NAMES("x", "scale"), 1, IN1("rms"));
	mb_node(&b, "", "Swish", 1, IN1("x"), 1, IN1("sw"));
	mb_node(&b, "", "SwiGLU", 2, NAMES("x", "x"), 1, IN1("glu"));
	mb_node(&b, "", "Col2Im", 3, NAMES("cols", "img", "blk"), 1, IN1("c2i"));
	mb_node(&b, "", "AffineGrid", 2, NAMES("theta", "size"), 1, IN1("grid"));
	mb_ints(mb_node(&b, "", "CenterCropPad", 2, NAMES("hwc", "crop"), 1, IN1("ccp")),
		"axes", DIMS(0, 1), 2);
	mb_node(&b, "", "DeformConv", 3, NAMES("im", "w", "off"), 1, IN1("dc"));
	mb_ints(mb_node(&b, "", "MaxRoiPool", 2, NAMES("im", "rois"), 1, IN1("mrp")),
		"pooled_shape", DIMS(2, 2), 2);
	mb_node(&b, "", "ImageDecoder", 1, IN1("enc"), 1, IN1("dec"));
	mb_node(&b, "ai.onnx.preview", "FlexAttention", 3, NAMES("q", "q", "v"), 1,
		IN1("flex"));
	n = mb_node(&b, "", "Attention", 3, NAMES("x", "x", "x"), 3,
		    NAMES("att", "pk", "pv"));
	mb_int(n, "q_num_heads", 2);
	mb_int(n, "kv_num_heads", 2);
	mb_ints(mb_node(&b, "", "RandomUniform", 0, NULL, 1, IN1("ru")), "shape",
		DIMS(4), 1);
	mb_node(&b, "", "CumProd", 2, NAMES("x", "blk"), 1, IN1("cp"));
	mb_int(mb_node(&b, "", "GroupNormalization", 3, NAMES("x", "scale", "scale"),
		       1, IN1("gn")), "num_groups", 1);
	mb_int(mb_node(&b, "", "BitCast", 1, IN1("x"), 1, IN1("bc32")), "to",
	       IR_DTYPE_INT32);
	mb_int(mb_node(&b, "", "BitCast", 1, IN1("x"), 1, IN1("bc8")), "to",
	       IR_DTYPE_INT8);
	mb_node(&b, "", "TensorScatter", 2, NAMES("x", "x"), 1, IN1("ts"));
	mb_node(&b, "", "CausalConvWithState", 2, NAMES("x", "x"), 2,
		NAMES("ccs", "ccs_state"));
	mb_infer(&b, &f);
	CU_ASSERT_EQUAL(f.rc, 0);
	EXPECT(&f, "rn", "double[2,3]");
	/* [batch, sample_size], dtype defaults to int32 */
	EXPECT(&f, "mn", "int32[4,5]");
	EXPECT(&f, "rms", "float[2,5,8]");
	EXPECT(&f, "sw", "float[2,5,8]");
	EXPECT(&f, "glu", "float[2,5,8]");
	/* 12 channels / (2 * 2) block = 3, image 5x5 */
	EXPECT(&f, "c2i", "float[1,3,5,5]");
	/* size [N, C, H, W] -> [N, H, W, 2] */
	EXPECT(&f, "grid", "float[2,7,9,2]");
	EXPECT(&f, "ccp", "float[5,9,3]");
	/* like Conv: 8 - 3 + 1 = 6, 4 filters */
	EXPECT(&f, "dc", "float[1,4,6,6]");
	EXPECT(&f, "mrp", "float[5,2,2,2]");
	EXPECT(&f, "dec", "uint8[?,?,3]");
	/* [B, Hq, L, Ev] */
	EXPECT(&f, "flex", "float[1,2,4,16]");
	/* 3-D: hidden 8 over 2 heads, E = Ev = 4; Y [2, 5, 2 * 4] */
	EXPECT(&f, "att", "float[2,5,8]");
	EXPECT(&f, "pk", "float[2,2,5,4]");
	EXPECT(&f, "pv", "float[2,2,5,4]");
	EXPECT(&f, "ru", "float[4]");
	EXPECT(&f, "cp", "float[2,5,8]");
	EXPECT(&f, "gn", "float[2,5,8]");
	/* as wide: same shape; narrower: the shape depends on the spec's
	 * reshaping rule, left unknown */
	EXPECT(&f, "bc32", "int32[2,5,8]");
	EXPECT(&f, "bc8", "int8[*]");
	EXPECT(&f, "ts", "float[2,5,8]");
	EXPECT(&f, "ccs", "float[2,5,8]");
	EXPECT(&f, "ccs_state", "float[*]");
	CU_ASSERT_EQUAL(f.r.n_not_inferred, 0);
	mb_release(&b, &f);
}

/* Hand-derived shapes of the ai.onnx.ml rules. */
static void test_ml_ops(void)
{
	static const char *const labels[] = { "a", "b", "c" };
	struct mb b;
	struct fixture f;
	struct ir_node *n;

	mb_init(&b);
	INPUT(&b, "x", IR_DTYPE_FLOAT, 7, 4);
	mb_input(&b, "ids", IR_DTYPE_INT64, DIMS(3), 1, DIMS(1, 2, 3));
	mb_input(&b, "idx", IR_DTYPE_INT64, DIMS(2), 1, DIMS(0, 3));

	mb_int(mb_node(&b, "ai.onnx.ml", "LinearRegressor", 1, IN1("x"), 1, IN1("lr")),
	       "targets", 3);
	n = mb_node(&b, "ai.onnx.ml", "LinearClassifier", 1, IN1("x"), 2,
		    NAMES("lc_y", "lc_z"));
	mb_strings(n, "classlabels_strings", labels, 3);
	mb_ints(n, "coefficients", DIMS(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), 12);
	n = mb_node(&b, "ai.onnx.ml", "TreeEnsembleClassifier", 1, IN1("x"), 2,
		    NAMES("te_y", "te_z"));
	mb_ints(n, "classlabels_int64s", DIMS(0, 1), 2);
	mb_int(mb_node(&b, "ai.onnx.ml", "TreeEnsembleRegressor", 1, IN1("x"), 1,
		       IN1("ter")), "n_targets", 2);
	mb_ints(mb_node(&b, "ai.onnx.ml", "OneHotEncoder", 1, IN1("ids"), 1, IN1("ohe")),
		"cats_int64s", DIMS(1, 2, 3, 4), 4);
	mb_node(&b, "ai.onnx.ml", "Scaler", 1, IN1("ids"), 1, IN1("sc"));
	mb_node(&b, "ai.onnx.ml", "Normalizer", 1, IN1("x"), 1, IN1("nz"));
	mb_node(&b, "ai.onnx.ml", "Binarizer", 1, IN1("x"), 1, IN1("bin"));
	mb_node(&b, "ai.onnx.ml", "Imputer", 1, IN1("x"), 1, IN1("imp"));
	mb_strings(mb_node(&b, "ai.onnx.ml", "CategoryMapper", 1, IN1("ids"), 1,
			   IN1("cm")), "cats_strings", labels, 3);
	mb_node(&b, "ai.onnx.ml", "ArrayFeatureExtractor", 2, NAMES("x", "idx"), 1,
		IN1("afe"));
	mb_ints(mb_node(&b, "ai.onnx.ml", "FeatureVectorizer", 2, NAMES("x", "x"), 1,
			IN1("fv")), "inputdimensions", DIMS(4, 4), 2);
	mb_node(&b, "ai.onnx.ml", "SVMRegressor", 1, IN1("x"), 1, IN1("svr"));
	mb_strings(mb_node(&b, "ai.onnx.ml", "ZipMap", 1, IN1("lc_z"), 1, IN1("zm")),
		   "classlabels_strings", labels, 3);
	mb_ints(mb_node(&b, "ai.onnx.ml", "ZipMap", 1, IN1("lc_z"), 1, IN1("zmi")),
		"classlabels_int64s", DIMS(0, 1, 2), 3);
	n = mb_node(&b, "ai.onnx.ml", "LabelEncoder", 1, IN1("ids"), 1, IN1("le"));
	mb_ints(n, "keys_int64s", DIMS(1, 2, 3), 3);
	mb_strings(n, "values_strings", labels, 3);
	mb_strings(mb_node(&b, "ai.onnx.ml", "DictVectorizer", 1, IN1("dict"), 1,
			   IN1("dv")), "string_vocabulary", labels, 3);
	mb_infer(&b, &f);
	CU_ASSERT_EQUAL(f.rc, 0);
	EXPECT(&f, "lr", "float[7,3]");
	EXPECT(&f, "lc_y", "string[7]");
	EXPECT(&f, "lc_z", "float[7,3]");
	EXPECT(&f, "te_y", "int64[7]");
	EXPECT(&f, "te_z", "float[7,2]");
	EXPECT(&f, "ter", "float[7,2]");
	/* the input's shape plus one dim of 4 categories */
	EXPECT(&f, "ohe", "float[3,4]");
	EXPECT(&f, "sc", "float[3]");
	EXPECT(&f, "nz", "float[7,4]");
	EXPECT(&f, "bin", "float[7,4]");
	EXPECT(&f, "imp", "float[7,4]");
	EXPECT(&f, "cm", "string[3]");
	EXPECT(&f, "afe", "float[7,2]");
	EXPECT(&f, "fv", "float[7,8]");
	EXPECT(&f, "svr", "float[7,1]");
	EXPECT(&f, "zm", "seq(map(string,float))");
	EXPECT(&f, "zmi", "seq(map(int64,float))");
	EXPECT(&f, "le", "string[3]");
	/* [1, vocabulary]; the map's value type is not declared */
	EXPECT(&f, "dv", "?[1,3]");
	CU_ASSERT_EQUAL(f.r.n_not_inferred, 0);  /* ZipMap now inferred */
	mb_release(&b, &f);
}

/* onnxruntime's contrib SimplifiedLayerNormalization in the default
 * domain infers with the com.microsoft rule; LayerNormalization below
 * opset 17 does not fall back (ai.onnx has its own from 17). */
static void test_ort_default_domain(void)
{
	struct mb b;
	struct fixture f;

	mb_init(&b);
	INPUT(&b, "x", IR_DTYPE_FLOAT, 2, 8);
	mb_input(&b, "g", IR_DTYPE_FLOAT, DIMS(8), 1, NULL);
	mb_node(&b, "", "SimplifiedLayerNormalization", 2, NAMES("x", "g"), 1,
		IN1("sln"));
	mb_node(&b, "ai.onnx", "SimplifiedLayerNormalization", 2, NAMES("x", "g"), 1,
		IN1("sln2"));
	mb_infer(&b, &f);
	CU_ASSERT_EQUAL(f.rc, 0);
	EXPECT(&f, "sln", "float[2,8]");
	EXPECT(&f, "sln2", "float[2,8]");
	CU_ASSERT_EQUAL(f.r.n_not_inferred, 0);
	mb_release(&b, &f);
	CU_ASSERT_PTR_NULL(infer_op_find("", "SimplifiedLayerNormalization"));
}

/* Infer b's model expecting an error containing msg (not printed), then
 * release it. */
static void mb_expect_error(struct mb *b, const char *msg)
{
	struct fixture f;

	memset(&f, 0, sizeof(f));
	ir_diag_init(&f.d);
	ir_infer_init(&f.r);
	f.r.flags = IR_INFER_NO_MERGE;
	f.m = b->m;
	f.rc = ir_infer_model_inputs(b->m, b->in, b->n_in, &f.r, &f.d);
	CU_ASSERT(f.rc < 0);
	if (!strstr(f.d.msg, msg))
		fprintf(stderr, "\ngot \"%s\", expected \"%s\"\n", f.d.msg, msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.d.msg, msg));
	mb_release(b, &f);
}

/* A model with x = ConstantOfShape(shape) for a bound int64 shape. */
static void mb_shaped(struct mb *b, const int64_t *shape, size_t n)
{
	mb_init(b);
	mb_input(b, "shape", IR_DTYPE_INT64, (const int64_t[]){ (int64_t)n }, 1, shape);
	mb_node(b, "", "ConstantOfShape", 1, IN1("shape"), 1, IN1("x"));
}

/* Hostile shape values (issue 9 review of ir/infer_*.c): sizes beyond
 * int64 are errors naming node and axis; the checked arithmetic keeps
 * exact results at the edges. */
static void test_hostile_values(void)
{
	struct mb b;
	struct fixture f;
	const struct ir_vtype *t;
	struct ir_node *n;
	struct ir_attr *a;

	mb_shaped(&b, DIMS(INT64_MAX), 1);
	mb_input(&b, "e", IR_DTYPE_INT64, DIMS(1), 1, DIMS(0));
	mb_input(&b, "ten", IR_DTYPE_INT64, DIMS(1), 1, DIMS(10));
	mb_input(&b, "st", IR_DTYPE_INT64, DIMS(1), 1, DIMS(-5));
	mb_input(&b, "nine", IR_DTYPE_INT64, DIMS(1), 1, DIMS(9));
	mb_input(&b, "zero", IR_DTYPE_INT64, DIMS(1), 1, DIMS(0));
	mb_input(&b, "min", IR_DTYPE_INT64, DIMS(1), 1, DIMS(INT64_MIN));
	mb_input(&b, "max", IR_DTYPE_INT64, DIMS(1), 1, DIMS(INT64_MAX));
	mb_input(&b, "neg", IR_DTYPE_INT64, DIMS(1), 1, DIMS(-1));
	mb_input(&b, "chunk", IR_DTYPE_INT64, NULL, 0, DIMS(((int64_t)1 << 62) + 1));
	mb_node(&b, "", "ConstantOfShape", 1, IN1("e"), 1, IN1("empty"));
	mb_node(&b, "", "ConstantOfShape", 1, IN1("ten"), 1, IN1("x10"));
	/* a negative step over an empty dim keeps nothing (was 1) */
	mb_node(&b, "", "Slice", 5, NAMES("empty", "st", "min", "zero", "neg"), 1,
		IN1("s_empty"));
	/* steps of INT64_MIN and INT64_MAX: one element each */
	mb_node(&b, "", "Slice", 5, NAMES("x10", "nine", "min", "zero", "min"), 1,
		IN1("s_min"));
	mb_node(&b, "", "Slice", 5, NAMES("x10", "zero", "ten", "zero", "max"), 1,
		IN1("s_max"));
	mb_node(&b, "", "Split", 1, IN1("x"), 2, NAMES("p0", "p1"));
	mb_node(&b, "", "SplitToSequence", 2, NAMES("x", "chunk"), 1, IN1("sq"));
	mb_infer(&b, &f);
	CU_ASSERT_EQUAL(f.rc, 0);
	EXPECT(&f, "x", "float[9223372036854775807]");
	EXPECT(&f, "s_empty", "float[0]");
	EXPECT(&f, "s_min", "float[1]");
	EXPECT(&f, "s_max", "float[1]");
	EXPECT(&f, "p0", "float[4611686018427387904]");
	EXPECT(&f, "p1", "float[4611686018427387903]");
	t = vt(&f, "sq");
	CU_ASSERT(t && t->has_elems && t->n_elems == 2);
	if (t && t->has_elems && t->n_elems == 2) {
		CU_ASSERT_EQUAL(t->elems[0].dims[0].value, ((int64_t)1 << 62) + 1);
		CU_ASSERT_EQUAL(t->elems[1].dims[0].value, ((int64_t)1 << 62) - 2);
	}
	mb_release(&b, &f);

	mb_shaped(&b, DIMS(INT64_MAX), 1);
	mb_int(mb_node(&b, "", "Concat", 2, NAMES("x", "x"), 1, IN1("y")), "axis", 0);
	mb_expect_error(&b, "(Concat): axis 0: the inputs' dims overflow");

	mb_shaped(&b, DIMS(INT64_MAX / 2, 4), 2);
	mb_int(mb_node(&b, "", "Flatten", 1, IN1("x"), 1, IN1("y")), "axis", 2);
	mb_expect_error(&b, "(Flatten): the product of dims 0 to 1 overflows");

	mb_shaped(&b, DIMS(1, 1, 4), 3);
	n = mb_node(&b, "", "MaxPool", 1, IN1("x"), 1, IN1("y"));
	mb_ints(n, "kernel_shape", DIMS(1), 1);
	mb_ints(n, "pads", DIMS(INT64_MAX, 1), 2);
	mb_expect_error(&b, "(MaxPool): spatial axis 0: input 4, pads and kernel 1 overflow");

	mb_shaped(&b, DIMS(1, 1, 4), 3);
	n = mb_node(&b, "", "MaxPool", 1, IN1("x"), 1, IN1("y"));
	mb_ints(n, "kernel_shape", DIMS(INT64_MIN), 1);
	mb_expect_error(&b, "(MaxPool): spatial axis 0: kernel -9223372036854775808 with dilation 1 overflows");

	mb_shaped(&b, DIMS(1, 4, 2, 2), 4);
	mb_int(mb_node(&b, "", "DepthToSpace", 1, IN1("x"), 1, IN1("y")), "blocksize",
	       (int64_t)1 << 32);
	mb_expect_error(&b, "(DepthToSpace): blocksize 4294967296 squared overflows");

	mb_shaped(&b, DIMS(2), 1);
	mb_input(&b, "i", IR_DTYPE_INT64, DIMS(1), 1, DIMS(0));
	mb_int(mb_node(&b, "", "GatherND", 2, NAMES("x", "i"), 1, IN1("y")),
	       "batch_dims", -16);
	mb_expect_error(&b, "(GatherND): batch_dims -16 is out of range for indices of rank 1");

	mb_shaped(&b, DIMS(2), 1);
	n = mb_node(&b, "", "Einsum", 1, IN1("x"), 1, IN1("y"));
	a = mb_attr(n, "equation", IR_ATTR_STRING);
	CU_ASSERT_FATAL((a->s = (uint8_t *)strdup("a.")) != NULL);
	a->s_len = 2;
	mb_expect_error(&b, "(Einsum): bad equation 'a.'");
}

static const struct unit_test tests[] = {
	{ "op table sorted and registered", test_table_sorted },
	{ "conv and pools", test_conv_pool },
	{ "shape-gather-concat-reshape chain", test_chain },
	{ "broadcasting, matmul, folding", test_broadcast },
	{ "dims as sums of symbols", test_sym_sums },
	{ "slices to symbolic ends, torch's expand", test_sym_slices },
	{ "errors name node and op", test_errors },
	{ "shape ops with constants", test_shape_ops },
	{ "if, loop, declared conflicts", test_ctrl_and_merge },
	{ "reference models' output shapes", test_reference_models },
	{ "libonnx-testdata: no contradictions", test_libonnx_testdata },
	{ "tensor files: read and reject", test_tensor_read },
	{ "inference seeded by input tensors", test_seeded_inputs },
	{ "every registry op has a rule", test_registry_covered },
	{ "newer ai.onnx ops", test_new_onnx_ops },
	{ "ai.onnx.ml ops", test_ml_ops },
	{ "onnxruntime contrib ops in the default domain", test_ort_default_domain },
	{ "hostile shape values: checked arithmetic", test_hostile_values },
	{ NULL, NULL },
};

int suite_infer_register(void)
{
	return unit_add_suite("infer", tests);
}
