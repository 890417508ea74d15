/* suite_decomp2.c: property tests of the second set of decompositions
 * (logic, Range, Trilu, CumSum, OneHot, reshapes, Expand/Tile,
 * DepthToSpace, Gemm, MatMul, Einsum, convolutions, kernel splits).
 * Each case builds a small model from a seed (random shapes, the case's
 * attribute variant); every variant whose preconditions hold is applied,
 * the original (run by the op's own interpreter kernel) and the rewritten
 * model run on the same seeded inputs and must agree within the case's
 * bound (0 where the rewrite is exact, float rounding otherwise); the
 * rewritten model verifies, keeps its output name and emits only the ops
 * its variant lists (plus those its vcheck asks the target about); those
 * of opset <= 17 pass onnx.checker (full_check).  Fusions are tested in
 * suite_fuse.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "oprules/rules.h"
#include "rewriters/rewrite.h"
#include "validators/compare.h"
#include "tests/unit/suites.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tmodel.h"








/* ---- builders: one model per (seed, param) --------------------------- */

typedef struct ir_model *(*build_fn)(uint64_t *s, int param);

static struct ir_model *b_where(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t d[2] = { tg_rnd(s, 1, 4), tg_rnd(s, 1, 5) };
	int dt = param == 2 ? IR_DTYPE_INT64 : IR_DTYPE_FLOAT;

	tm_input(m, "c", IR_DTYPE_BOOL, d, 2);
	tm_input(m, "a", dt, param == 1 ? d + 1 : d, param == 1 ? 1 : 2);
	tm_input(m, "b", dt, d, 2);
	tm_node(m, "Where", NULL, TM_NAMES("c", "a", "b"), 3, TM_NAMES("y"), 1);
	tg_finish(m, dt);
	return m;
}

static struct ir_model *b_logic(uint64_t *s, int param)
{
	static const char *const ops[] = { "Not", "And", "Or", "Xor" };
	struct ir_model *m = tm_new(13);
	int64_t d[3] = { tg_rnd(s, 1, 3), tg_rnd(s, 1, 4), tg_rnd(s, 1, 4) };

	tm_input(m, "a", IR_DTYPE_BOOL, d, 3);
	tm_input(m, "b", IR_DTYPE_BOOL, d + 1, 2);
	tm_node(m, ops[param], NULL, TM_NAMES("a", "b"), param ? 2 : 1, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_BOOL);
	return m;
}

static struct ir_model *b_range(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int dt = param ? IR_DTYPE_INT64 : IR_DTYPE_FLOAT;
	double st = param ? 10 : -1.5 + (double)tg_rnd(s, 0, 4) / 8, li = param ? -3 : 3.2,
	       de = param ? -(double)tg_rnd(s, 1, 3) : 0.7;

	tm_init(m, "s", dt, NULL, 0, &st);
	tm_init(m, "l", dt, NULL, 0, &li);
	tm_init(m, "d", dt, NULL, 0, &de);
	tm_node(m, "Range", NULL, TM_NAMES("s", "l", "d"), 3, TM_NAMES("y"), 1);
	tg_finish(m, dt);
	return m;
}

/* param: bit 0 upper, bits 1-2: k absent, -1, 0, 2, bit 3 int32 data */
static struct ir_model *b_trilu(uint64_t *s, int param)
{
	static const int64_t ks[] = { 0, -1, 0, 2 };
	struct ir_model *m = tm_new(14);
	int64_t d[3] = { tg_rnd(s, 1, 3), tg_rnd(s, 1, 5), tg_rnd(s, 1, 5) };
	int kk = (param >> 1) & 3;
	struct ir_node *n;

	tm_input(m, "x", param & 8 ? IR_DTYPE_INT32 : IR_DTYPE_FLOAT, d, 3);
	if (kk)
		tg_int_init(m, "k", &ks[kk], NULL, 0);
	n = tm_node(m, "Trilu", NULL, TM_NAMES("x", "k"), kk ? 2 : 1, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "upper", param & 1) == 0);
	tg_finish(m, param & 8 ? IR_DTYPE_INT32 : IR_DTYPE_FLOAT);
	return m;
}

/* param: bits 0-1 axis (0, 1, 2, -1), bit 2 exclusive, bit 3 reverse */
static struct ir_model *b_cumsum(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(14);
	int64_t d[3] = { tg_rnd(s, 1, 4), tg_rnd(s, 1, 5), tg_rnd(s, 1, 6) };
	int64_t axis = (param & 3) == 3 ? -1 : param & 3;
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, d, 3);
	tg_int_init(m, "axis", &axis, NULL, 0);
	n = tm_node(m, "CumSum", NULL, TM_NAMES("x", "axis"), 2, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "exclusive", (param >> 2) & 1) == 0);
	CU_ASSERT_FATAL(ir_node_set_int(n, "reverse", (param >> 3) & 1) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

/* param: axis + 1 (0: default -1); indices in [-3, 3) against depth 2..4 */
static struct ir_model *b_onehot(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t d[2] = { tg_rnd(s, 1, 3), tg_rnd(s, 1, 4) }, two = 2, depth = tg_rnd(s, 2, 4);
	double vals[2] = { -0.5, 2.0 };
	struct ir_node *n;

	tm_input(m, "i", IR_DTYPE_INT64, d, 2);
	tg_int_init(m, "depth", &depth, NULL, 0);
	tm_init(m, "values", IR_DTYPE_FLOAT, &two, 1, vals);
	n = tm_node(m, "OneHot", NULL, TM_NAMES("i", "depth", "values"), 3, TM_NAMES("y"), 1);
	if (param)
		CU_ASSERT_FATAL(ir_node_set_int(n, "axis", param - 1) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

/* param 0-2: Flatten axis 0, 2, -1; 3: Squeeze (input axes); 4: Unsqueeze
 * at opset 11 (attribute axes) */
static struct ir_model *b_reshape(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(param == 4 ? 11 : 13);
	int64_t d[4] = { tg_rnd(s, 1, 3), 1, tg_rnd(s, 1, 4), tg_rnd(s, 1, 3) }, axes[2] = { 1, -3 };
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, d, 4);
	if (param < 3) {
		static const int64_t fa[] = { 0, 2, -1 };

		n = tm_node(m, "Flatten", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
		CU_ASSERT_FATAL(ir_node_set_int(n, "axis", fa[param]) == 0);
	} else if (param == 3) {
		tg_int_init(m, "axes", axes, TM_DIMS(1), 1);
		tm_node(m, "Squeeze", NULL, TM_NAMES("x", "axes"), 2, TM_NAMES("y"), 1);
	} else {
		n = tm_node(m, "Unsqueeze", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
		CU_ASSERT_FATAL(ir_node_set_ints(n, "axes", axes, 2) == 0);
	}
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

/* param 0: Expand [a,1] to [2,a,b]; 1: Expand [1,b] to [a,b]; 2: Tile of
 * size-1 axes */
static struct ir_model *b_expand_tile(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t a = tg_rnd(s, 1, 4), b = tg_rnd(s, 2, 4);

	if (param == 0) {
		int64_t shape[3] = { 2, a, b };

		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(a, 1), 2);
		tg_int_init(m, "shape", shape, TM_DIMS(3), 1);
		tm_node(m, "Expand", NULL, TM_NAMES("x", "shape"), 2, TM_NAMES("y"), 1);
	} else if (param == 1) {
		int64_t shape[2] = { a, 1 };

		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, b), 2);
		tg_int_init(m, "shape", shape, TM_DIMS(2), 1);
		tm_node(m, "Expand", NULL, TM_NAMES("x", "shape"), 2, TM_NAMES("y"), 1);
	} else {
		int64_t rep[3] = { 2, 1, b };

		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, a, 1), 3);
		tg_int_init(m, "rep", rep, TM_DIMS(3), 1);
		tm_node(m, "Tile", NULL, TM_NAMES("x", "rep"), 2, TM_NAMES("y"), 1);
	}
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

/* param 0 DCR, 1 CRD, 2 SpaceToDepth */
static struct ir_model *b_depth_space(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t b = tg_rnd(s, 2, 3), n = tg_rnd(s, 1, 2);
	int64_t d[4] = { n, param < 2 ? b * b * tg_rnd(s, 1, 3) : tg_rnd(s, 1, 3),
			 param < 2 ? tg_rnd(s, 1, 3) : b * tg_rnd(s, 1, 2),
			 param < 2 ? tg_rnd(s, 1, 3) : b * tg_rnd(s, 1, 2) };
	struct ir_node *nd;

	tm_input(m, "x", IR_DTYPE_FLOAT, d, 4);
	nd = tm_node(m, param < 2 ? "DepthToSpace" : "SpaceToDepth", NULL, TM_NAMES("x"), 1,
		     TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(nd, "blocksize", b) == 0);
	if (param == 1)
		CU_ASSERT_FATAL(ir_node_set_string(nd, "mode", "CRD") == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}


/* param bits: 0 transA, 1 transB, 2 B constant, 3 C present, 4 alpha and
 * beta not 1, 5 C of shape [M, N] (else [N]) */
static struct ir_model *b_gemm(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t mm = tg_rnd(s, 1, 4), k = tg_rnd(s, 1, 5), nn = tg_rnd(s, 1, 4);
	int64_t da[2] = { mm, k }, db[2] = { k, nn }, dc[2] = { mm, nn };
	struct ir_node *n;

	if (param & 1)
		da[0] = k, da[1] = mm;
	if (param & 2)
		db[0] = nn, db[1] = k;
	tm_input(m, "a", IR_DTYPE_FLOAT, da, 2);
	if (param & 4)
		tg_rand_init(m, s, "b", db, 2);
	else
		tm_input(m, "b", IR_DTYPE_FLOAT, db, 2);
	if (param & 8) {
		if (param & 32)
			tm_input(m, "c", IR_DTYPE_FLOAT, dc, 2);
		else
			tg_rand_init(m, s, "c", dc + 1, 1);
	}
	n = tm_node(m, "Gemm", NULL, TM_NAMES("a", "b", "c"), param & 8 ? 3 : 2, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "transA", param & 1) == 0);
	CU_ASSERT_FATAL(ir_node_set_int(n, "transB", (param >> 1) & 1) == 0);
	if (param & 16) {
		CU_ASSERT_FATAL(ir_node_set_float(n, "alpha", 0.75f) == 0);
		CU_ASSERT_FATAL(ir_node_set_float(n, "beta", -1.5f) == 0);
	}
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

/* param 0: [2,1,M,K] x [3,K,N]; 1: [M,K] x [2,K,N]; 2: [1,M,K] x [3,K,N];
 * 3: [2,3,M,K] x [2,3,K,N] (constant) */
static struct ir_model *b_matmul(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t mm = tg_rnd(s, 1, 4), k = tg_rnd(s, 1, 4), nn = tg_rnd(s, 1, 4);
	int64_t a0[4] = { 2, 1, mm, k }, b0[3] = { 3, k, nn };
	int64_t a3[4] = { 2, 3, mm, k }, b3[4] = { 2, 3, k, nn };

	if (param == 0) {
		tm_input(m, "a", IR_DTYPE_FLOAT, a0, 4);
		tm_input(m, "b", IR_DTYPE_FLOAT, b0, 3);
	} else if (param == 1) {
		tm_input(m, "a", IR_DTYPE_FLOAT, a0 + 2, 2);
		b0[0] = 2;
		tm_input(m, "b", IR_DTYPE_FLOAT, b0, 3);
	} else if (param == 2) {
		tm_input(m, "a", IR_DTYPE_FLOAT, a0 + 1, 3);
		tm_input(m, "b", IR_DTYPE_FLOAT, b0, 3);
	} else {
		tm_input(m, "a", IR_DTYPE_FLOAT, a3, 4);
		tg_rand_init(m, s, "b", b3, 4);
	}
	tm_node(m, "MatMul", NULL, TM_NAMES("a", "b"), 2, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

static const char *const einsum_eqs[] = {
	"ij,jk->ik", "bij,bjk->bik", "bhid,bhjd->bhij", "ij->ji", "ijk->", "ij,ij->",
	"i,j->ij", "ab,bc", "abc,cd->dba", "ab,cd->ac", "ijk->ki", "bik,kj", "i,i",
};

static struct ir_model *b_einsum(uint64_t *s, int param)
{
	const char *eq = einsum_eqs[param];
	struct ir_model *m = tm_new(13);
	int64_t size[128], dims[8];
	const char *names[2] = { "a", "b" }, *p = eq;
	int k = 0;
	struct ir_node *n;

	for (int i = 0; i < 128; i++)
		size[i] = tg_rnd(s, 1, 4);
	while (*p && *p != '-') {
		size_t r = 0;

		for (; *p && *p != ',' && *p != '-'; p++)
			dims[r++] = size[(unsigned char)*p];
		tm_input(m, names[k++], IR_DTYPE_FLOAT, dims, r);
		if (*p == ',')
			p++;
	}
	n = tm_node(m, "Einsum", NULL, names, (size_t)k, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_string(n, "equation", eq) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}



/* param 0: Conv (group 2, pads, stride, dilation, bias); 1: MaxPool; 2:
 * AveragePool with pads counted; 3: Conv at opset 11, auto_pad SAME_UPPER */
static struct ir_model *b_conv1d(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(param == 3 ? 11 : 13);
	int64_t nb = tg_rnd(s, 1, 2), g = param == 0 ? 2 : 1, cg = tg_rnd(s, 1, 2), l = tg_rnd(s, 5, 9);
	int64_t k = tg_rnd(s, 1, 3), mo = g * tg_rnd(s, 1, 2);
	int64_t x[3] = { nb, g * cg, l }, w[3] = { mo, cg, k }, ks[1] = { k };
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, x, 3);
	if (param == 0 || param == 3) {
		tg_rand_init(m, s, "w", w, 3);
		tg_rand_init(m, s, "b", &mo, 1);
		n = tm_node(m, "Conv", NULL, TM_NAMES("x", "w", "b"), param == 0 ? 3 : 2,
			    TM_NAMES("y"), 1);
		if (param == 0) {
			tg_set_ints(n, "pads", TM_DIMS(1, 2), 2);
			tg_set_ints(n, "strides", TM_DIMS(2), 1);
			tg_set_ints(n, "dilations", TM_DIMS(2), 1);
			CU_ASSERT_FATAL(ir_node_set_int(n, "group", g) == 0);
		} else {
			CU_ASSERT_FATAL(ir_node_set_string(n, "auto_pad", "SAME_UPPER") == 0);
		}
	} else {
		n = tm_node(m, param == 1 ? "MaxPool" : "AveragePool", NULL, TM_NAMES("x"), 1,
			    TM_NAMES("y"), 1);
		tg_set_ints(n, "kernel_shape", ks, 1);
		tg_set_ints(n, "pads", TM_DIMS(k - 1, 0), 2);
		tg_set_ints(n, "strides", TM_DIMS(tg_rnd(s, 1, 2)), 1);
		if (param == 2)
			CU_ASSERT_FATAL(ir_node_set_int(n, "count_include_pad", 1) == 0);
	}
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

/* param 0: 1-D, pads; 1: 2-D, group 2, dilations 2, output_padding;
 * 2: 2-D, bias, pads, VALID-less; 3: 3-D */
static struct ir_model *b_conv_transpose(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int sp = param == 0 ? 1 : param == 3 ? 3 : 2;
	int64_t g = param == 1 ? 2 : 1, cg = tg_rnd(s, 1, 2), mg = tg_rnd(s, 1, 2);
	int64_t x[5] = { tg_rnd(s, 1, 2), g * cg }, w[5] = { g * cg, mg }, mo = g * mg;
	struct ir_node *n;

	for (int i = 0; i < sp; i++) {
		x[2 + i] = tg_rnd(s, 1, 4);
		w[2 + i] = tg_rnd(s, 2, 3);
	}
	tm_input(m, "x", IR_DTYPE_FLOAT, x, 2 + (size_t)sp);
	tg_rand_init(m, s, "w", w, 2 + (size_t)sp);
	tg_rand_init(m, s, "b", &mo, 1);
	n = tm_node(m, "ConvTranspose", NULL, TM_NAMES("x", "w", "b"), param == 2 ? 3 : 2,
		    TM_NAMES("y"), 1);
	if (param == 0)
		tg_set_ints(n, "pads", TM_DIMS(1, 0), 2);
	if (param == 1) {
		CU_ASSERT_FATAL(ir_node_set_int(n, "group", g) == 0);
		tg_set_ints(n, "dilations", TM_DIMS(2, 2), 2);
		tg_set_ints(n, "output_padding", TM_DIMS(1, 0), 2);
	}
	if (param == 2)
		tg_set_ints(n, "pads", TM_DIMS(1, 0, 0, 1), 4);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}


/* param 0: 1-D kernel 7 (limit 3), pads, stride 2; 1: 2-D kernel [5, 2],
 * dilations [1, 2], group 2, bias; 2: 2-D kernel [4, 7], pads */
static struct ir_model *b_kernel_split(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t g = param == 1 ? 2 : 1, cg = tg_rnd(s, 1, 2), mo = g * tg_rnd(s, 1, 2);
	int64_t x[4] = { tg_rnd(s, 1, 2), g * cg, tg_rnd(s, 8, 12), tg_rnd(s, 8, 10) };
	int64_t w[4] = { mo, cg, param == 0 ? 7 : param == 1 ? 5 : 4, param == 1 ? 2 : 7 };
	int r = param == 0 ? 3 : 4;
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, x, (size_t)r);
	tg_rand_init(m, s, "w", w, (size_t)r);
	tg_rand_init(m, s, "b", &mo, 1);
	n = tm_node(m, "Conv", NULL, TM_NAMES("x", "w", "b"), param == 1 ? 3 : 2, TM_NAMES("y"), 1);
	if (param == 0) {
		tg_set_ints(n, "pads", TM_DIMS(2, 3), 2);
		tg_set_ints(n, "strides", TM_DIMS(2), 1);
	} else if (param == 1) {
		tg_set_ints(n, "dilations", TM_DIMS(1, 2), 2);
		CU_ASSERT_FATAL(ir_node_set_int(n, "group", g) == 0);
	} else {
		tg_set_ints(n, "pads", TM_DIMS(1, 3, 2, 3), 4);
	}
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}


/* param 0: MaxPool 1-D kernel 7 (limit 3), stride 2, pads; 1: MaxPool
 * 2-D [5, 4] stride [1, 3]; 2: AveragePool 2-D [4, 5], pads counted,
 * strides 2; 3: AveragePool 1-D kernel 8, no pads, count_include_pad 0 */
static struct ir_model *b_pool_split(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t x[4] = { tg_rnd(s, 1, 2), tg_rnd(s, 1, 3), tg_rnd(s, 8, 12), tg_rnd(s, 8, 10) };
	int r = param == 0 || param == 3 ? 3 : 4;
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, x, (size_t)r);
	n = tm_node(m, param < 2 ? "MaxPool" : "AveragePool", NULL, TM_NAMES("x"), 1,
		    TM_NAMES("y"), 1);
	if (param == 0) {
		tg_set_ints(n, "kernel_shape", TM_DIMS(7), 1);
		tg_set_ints(n, "strides", TM_DIMS(2), 1);
		tg_set_ints(n, "pads", TM_DIMS(3, 2), 2);
	} else if (param == 1) {
		tg_set_ints(n, "kernel_shape", TM_DIMS(5, 4), 2);
		tg_set_ints(n, "strides", TM_DIMS(1, 3), 2);
	} else if (param == 2) {
		tg_set_ints(n, "kernel_shape", TM_DIMS(4, 5), 2);
		tg_set_ints(n, "strides", TM_DIMS(2, 2), 2);
		tg_set_ints(n, "pads", TM_DIMS(1, 2, 2, 0), 4);
		CU_ASSERT_FATAL(ir_node_set_int(n, "count_include_pad", 1) == 0);
	} else {
		tg_set_ints(n, "kernel_shape", TM_DIMS(8), 1);
	}
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}






/* ---- the runner ------------------------------------------------------- */

struct pcase {
	const char *pass, *op;
	build_fn build;
	int param;
	double tol;
	const char *const *also;     /* ops vcheck asks about */
};


static int allowed(const char *op, const char *const *list)
{
	for (const char *const *a = list; a && *a; a++) {
		const char *colon = strchr(*a, ':');

		if (!strcmp(colon ? colon + 1 : *a, op))
			return 1;
	}
	return 0;
}

static int only_ops(const struct ir_model *m, const char *const *emits,
		    const char *const *also)
{
	for (size_t i = 0; i < m->graph->n_nodes; i++) {
		const char *op = ir_s(m->graph->nodes[i]->op_type);

		if (!allowed(op, emits) && !allowed(op, also)) {
			fprintf(stderr, "\nunexpected op %s\n", op);
			return 0;
		}
	}
	return 1;
}


/* The target the cases run with (NULL: every op accepted) */
static const struct rules_target *case_target;

/* Every Conv's kernel_shape within max */
static int kernels_within(const struct ir_model *m, int64_t max)
{
	for (size_t i = 0; i < m->graph->n_nodes; i++) {
		const struct ir_attr *a = ir_node_attr(m->graph->nodes[i], "kernel_shape");

		for (size_t k = 0; a && k < a->n_ints; k++)
			if (a->ints[k] > max)
				return 0;
	}
	return 1;
}

/* Save the rewritten model for onnx.checker (first trial only) */
static int seed_first;

/* -1 when the variant does not apply, else the max abs difference */
static double try_variant(const struct pcase *pc, const struct rw_pass *p, int v,
			  uint64_t seed)
{
	uint64_t s = seed;
	struct ir_model *m = pc->build(&s, pc->param);
	struct rt_value *before = NULL, *after = NULL;
	struct ir_node *n = tg_find_op(m, pc->op);
	struct rw_ctx ctx;
	struct ir_diag d;
	char why[256];
	double err = -1;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(n != NULL);
	CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, case_target, &d) == 0);
	if ((p->check && !p->check(&ctx, n, why, sizeof(why))) ||
	    (p->vcheck && !p->vcheck(&ctx, n, v))) {
		if (p->check && !p->check(&ctx, n, why, sizeof(why)))
			fprintf(stderr, "\n%s %s(%d): refused: %s\n", pc->pass, pc->op, pc->param, why);
		goto done;
	}
	CU_ASSERT_FATAL(tm_run(m, seed, &before, 1) == 0);
	CU_ASSERT_FATAL(rw_apply(&ctx, p, n, v) == 0);
	if (rw_refresh(&ctx) < 0)
		fprintf(stderr, "\n%s/%s: %s\n", p->name, p->variants[v].name, d.msg);
	CU_ASSERT_FATAL(d.status == 0);
	CU_ASSERT_STRING_EQUAL(ir_s(m->graph->outputs[0].value->name), "y");
	CU_ASSERT(only_ops(m, p->variants[v].emits, pc->also));
	CU_ASSERT(!case_target || kernels_within(m, 3));
	CU_ASSERT(tg_find_op(m, pc->op) == NULL || allowed(pc->op, p->variants[v].emits));
	CU_ASSERT_FATAL(tm_run(m, seed, &after, 1) == 0);
	err = tg_compare(after, before);
	if (seed_first) {
		char what[96];

		snprintf(what, sizeof(what), "%s-%s-%d-%s", pc->pass, pc->op, pc->param,
			 p->variants[v].name);
		tg_save_for_checker(m, what, after);
	}
	rt_value_unref(before);
	rt_value_unref(after);
done:
	rw_ctx_release(&ctx);
	ir_model_free(m);
	return err;
}

static const char *const where_also[] = { "Mul", "Add", "Sub", NULL };

static const struct pcase cases[] = {
	{ "where-arith", "Where", b_where, 0, 0, where_also },
	{ "where-arith", "Where", b_where, 1, 0, where_also },
	{ "where-arith", "Where", b_where, 2, 0, where_also },
	{ "logic-arith", "Not", b_logic, 0, 0, where_also },
	{ "logic-arith", "And", b_logic, 1, 0, where_also },
	{ "logic-arith", "Or", b_logic, 2, 0, where_also },
	{ "logic-arith", "Xor", b_logic, 3, 0, where_also },
	{ "range-const", "Range", b_range, 0, 1e-6, NULL },
	{ "range-const", "Range", b_range, 1, 0, NULL },
	{ "trilu", "Trilu", b_trilu, 0, 0, NULL },
	{ "trilu", "Trilu", b_trilu, 1, 0, NULL },
	{ "trilu", "Trilu", b_trilu, 2, 0, NULL },
	{ "trilu", "Trilu", b_trilu, 3, 0, NULL },
	{ "trilu", "Trilu", b_trilu, 4, 0, NULL },
	{ "trilu", "Trilu", b_trilu, 7, 0, NULL },
	{ "trilu", "Trilu", b_trilu, 8 | 5, 0, NULL },
	{ "cumsum", "CumSum", b_cumsum, 0, 1e-5, NULL },
	{ "cumsum", "CumSum", b_cumsum, 1, 1e-5, NULL },
	{ "cumsum", "CumSum", b_cumsum, 2 | 4, 1e-5, NULL },
	{ "cumsum", "CumSum", b_cumsum, 3 | 8, 1e-5, NULL },
	{ "cumsum", "CumSum", b_cumsum, 1 | 4 | 8, 1e-5, NULL },
	{ "onehot", "OneHot", b_onehot, 0, 0, NULL },
	{ "onehot", "OneHot", b_onehot, 1, 0, NULL },
	{ "onehot", "OneHot", b_onehot, 2, 0, NULL },
	{ "to-reshape", "Flatten", b_reshape, 0, 0, NULL },
	{ "to-reshape", "Flatten", b_reshape, 1, 0, NULL },
	{ "to-reshape", "Flatten", b_reshape, 2, 0, NULL },
	{ "to-reshape", "Squeeze", b_reshape, 3, 0, NULL },
	{ "to-reshape", "Unsqueeze", b_reshape, 4, 0, NULL },
	{ "expand-tile", "Expand", b_expand_tile, 0, 0, NULL },
	{ "expand-tile", "Expand", b_expand_tile, 1, 0, NULL },
	{ "expand-tile", "Tile", b_expand_tile, 2, 0, NULL },
	{ "depth-space", "DepthToSpace", b_depth_space, 0, 0, NULL },
	{ "depth-space", "DepthToSpace", b_depth_space, 1, 0, NULL },
	{ "depth-space", "SpaceToDepth", b_depth_space, 2, 0, NULL },
	{ "conv1d", "Conv", b_conv1d, 0, 1e-5, NULL },
	{ "conv1d", "MaxPool", b_conv1d, 1, 1e-5, NULL },
	{ "conv1d", "AveragePool", b_conv1d, 2, 1e-5, NULL },
	{ "conv1d", "Conv", b_conv1d, 3, 1e-5, NULL },
	{ "conv-transpose", "ConvTranspose", b_conv_transpose, 0, 1e-5, NULL },
	{ "conv-transpose", "ConvTranspose", b_conv_transpose, 1, 1e-5, NULL },
	{ "conv-transpose", "ConvTranspose", b_conv_transpose, 2, 1e-5, NULL },
	{ "conv-transpose", "ConvTranspose", b_conv_transpose, 3, 1e-5, NULL },
	{ "gemm", "Gemm", b_gemm, 0, 1e-5, NULL },
	{ "gemm", "Gemm", b_gemm, 1 | 8, 1e-5, NULL },
	{ "gemm", "Gemm", b_gemm, 2 | 4 | 8 | 16, 1e-5, NULL },
	{ "gemm", "Gemm", b_gemm, 2 | 8 | 16 | 32, 1e-5, NULL },
	{ "gemm", "Gemm", b_gemm, 1 | 2 | 4 | 16, 1e-5, NULL },
	{ "matmul-batch", "MatMul", b_matmul, 0, 1e-5, NULL },
	{ "matmul-batch", "MatMul", b_matmul, 1, 1e-5, NULL },
	{ "matmul-batch", "MatMul", b_matmul, 2, 1e-5, NULL },
	{ "matmul-batch", "MatMul", b_matmul, 3, 1e-5, NULL },
	{ "einsum", "Einsum", b_einsum, 0, 1e-5, NULL },
	{ "einsum", "Einsum", b_einsum, 1, 1e-5, NULL },
	{ "einsum", "Einsum", b_einsum, 2, 1e-5, NULL },
	{ "einsum", "Einsum", b_einsum, 3, 1e-5, NULL },
	{ "einsum", "Einsum", b_einsum, 4, 1e-5, NULL },
	{ "einsum", "Einsum", b_einsum, 5, 1e-5, NULL },
	{ "einsum", "Einsum", b_einsum, 6, 1e-5, NULL },
	{ "einsum", "Einsum", b_einsum, 7, 1e-5, NULL },
	{ "einsum", "Einsum", b_einsum, 8, 1e-5, NULL },
	{ "einsum", "Einsum", b_einsum, 9, 1e-5, NULL },
	{ "einsum", "Einsum", b_einsum, 10, 1e-5, NULL },
	{ "einsum", "Einsum", b_einsum, 11, 1e-5, NULL },
	{ "einsum", "Einsum", b_einsum, 12, 1e-5, NULL },
};

static void test_decompositions(void)
{
	uint64_t seed = 2027;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pcase *c = &cases[i];
		const struct rw_pass *p = rw_pass_find(c->pass);
		int applied = 0;

		CU_ASSERT_FATAL(p != NULL);
		for (int trial = 0; trial < 3; trial++, tg_next(&seed))
			for (size_t v = 0; v < p->n_variants; v++) {
				double err;

				seed_first = trial == 0;
				err = try_variant(c, p, (int)v, seed);
				seed_first = 0;

				if (err < 0)
					continue;
				applied++;
				if (err > c->tol)
					fprintf(stderr, "\n%s %s(%d) variant %s: error %g > %g\n",
						c->pass, c->op, c->param, p->variants[v].name, err, c->tol);
				CU_ASSERT(err <= c->tol);
			}
		if (!applied)
			fprintf(stderr, "\ncase %zu (%s %s %d): no variant applies\n", i, c->pass,
				c->op, c->param);
		CU_ASSERT(applied > 0);
	}
	tg_run_checker();
}



/* kernel-split with a target whose Conv takes kernels up to 3 */
static void test_kernel_split(void)
{
	static char avg[] = "AveragePool", conv[] = "Conv", mx[] = "MaxPool", dom[] = "ai.onnx",
		    ks[] = "kernel_shape", id[] = "small";
	struct rules_attr a = { .name = ks, .has_max = 1, .max = 3 };
	struct rules_op ops[3] = {
		{ .domain = dom, .name = avg, .supported = 1, .version_min = 1,
		  .version_max = RULES_UNBOUNDED, .attrs = &a, .n_attrs = 1 },
		{ .domain = dom, .name = conv, .supported = 1, .version_min = 1,
		  .version_max = RULES_UNBOUNDED, .attrs = &a, .n_attrs = 1 },
		{ .domain = dom, .name = mx, .supported = 1, .version_min = 1,
		  .version_max = RULES_UNBOUNDED, .attrs = &a, .n_attrs = 1 },
	};
	struct rules_target t = { .id = id, .ops = ops, .n_ops = 3, .max_rank = -1,
				  .opset_min = -1, .opset_max = -1, .resolved = 1 };
	static const struct pcase pcs[] = {
		{ "kernel-split", "Conv", b_kernel_split, 0, 1e-5, NULL },
		{ "kernel-split", "Conv", b_kernel_split, 1, 1e-5, NULL },
		{ "kernel-split", "Conv", b_kernel_split, 2, 1e-5, NULL },
		{ "pool-split", "MaxPool", b_pool_split, 0, 0, NULL },
		{ "pool-split", "MaxPool", b_pool_split, 1, 0, NULL },
		{ "pool-split", "AveragePool", b_pool_split, 2, 1e-6, NULL },
		{ "pool-split", "AveragePool", b_pool_split, 3, 1e-6, NULL },
	};
	uint64_t seed = 77;

	case_target = &t;
	for (size_t i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++) {
		const struct pcase *pc = &pcs[i];
		const struct rw_pass *p = rw_pass_find(pc->pass);
		int applied = 0;

		CU_ASSERT_FATAL(p != NULL);
		for (int trial = 0; trial < 3; trial++, tg_next(&seed))
			for (size_t v = 0; v < p->n_variants; v++) {
				double err = try_variant(pc, p, (int)v, seed);

				if (err < 0)
					continue;
				applied++;
				CU_ASSERT(err <= pc->tol);
				if (err > pc->tol)
					fprintf(stderr, "\n%s %d: error %g\n", pc->pass, pc->param, err);
			}
		CU_ASSERT(applied == 3);
	}
	case_target = NULL;
}


/* Models each pass must refuse, by param (see refusals[]) */
static struct ir_model *r_misc(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(param == 1 ? 6 : param == 4 ? 6 : param == 14 ? 9 : 13);
	struct ir_node *n;
	int64_t w3[3] = { 2, 2, 3 }, w4[4] = { 2, 2, 3, 3 };

	(void)s;
	switch (param) {
	case 0:         /* Where of int8 branches */
		tm_input(m, "c", IR_DTYPE_BOOL, TM_DIMS(3), 1);
		tm_input(m, "a", IR_DTYPE_INT8, TM_DIMS(3), 1);
		tm_input(m, "b", IR_DTYPE_INT8, TM_DIMS(3), 1);
		tm_node(m, "Where", NULL, TM_NAMES("c", "a", "b"), 3, TM_NAMES("y"), 1);
		tg_finish(m, IR_DTYPE_INT8);
		return m;
	case 1:         /* Not at opset 6 */
		tm_input(m, "a", IR_DTYPE_BOOL, TM_DIMS(3), 1);
		tm_node(m, "Not", NULL, TM_NAMES("a"), 1, TM_NAMES("y"), 1);
		tg_finish(m, IR_DTYPE_BOOL);
		return m;
	case 2:         /* Trilu with k an input of two values */
		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 3), 2);
		tm_input(m, "k", IR_DTYPE_INT64, TM_DIMS(2), 1);
		tm_node(m, "Trilu", NULL, TM_NAMES("x", "k"), 2, TM_NAMES("y"), 1);
		break;
	case 3:         /* Flatten of a dynamic inner dim */
		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 4), 3);
		m->graph->inputs[0].type->shape.dims[1].kind = IR_DIM_PARAM;
		m->graph->inputs[0].type->shape.dims[1].param = strdup("L");
		tm_node(m, "Flatten", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
		break;
	case 4:         /* Gemm at opset 6 */
		tm_input(m, "a", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
		tm_input(m, "b", IR_DTYPE_FLOAT, TM_DIMS(3, 2), 2);
		tm_input(m, "c", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2);
		tm_node(m, "Gemm", NULL, TM_NAMES("a", "b", "c"), 3, TM_NAMES("y"), 1);
		break;
	case 5:         /* MatMul of equal batches, rank 3 */
		tm_input(m, "a", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 4), 3);
		tm_input(m, "b", IR_DTYPE_FLOAT, TM_DIMS(2, 4, 5), 3);
		tm_node(m, "MatMul", NULL, TM_NAMES("a", "b"), 2, TM_NAMES("y"), 1);
		break;
	case 6: case 7: case 8: case 9: {   /* Einsum: trace, ellipsis, 3 operands, broadcast */
		static const char *const eq[] = { "ii->i", "...ij->ij", "ij,jk,kl->il", "ij,jk->ik" };
		static const char *const in[] = { "a", "b", "c" };

		tm_input(m, "a", IR_DTYPE_FLOAT, TM_DIMS(3, 3), 2);
		tm_input(m, "b", IR_DTYPE_FLOAT, TM_DIMS(param == 9 ? 1 : 3, 3), 2);
		tm_input(m, "c", IR_DTYPE_FLOAT, TM_DIMS(3, 3), 2);
		n = tm_node(m, "Einsum", NULL, in, param == 8 ? 3 : param == 9 ? 2 : 1, TM_NAMES("y"), 1);
		CU_ASSERT_FATAL(ir_node_set_string(n, "equation", eq[param - 6]) == 0);
		break;
	}
	case 10:        /* "conv1d" of a 2-D Conv */
		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 5, 5), 4);
		tg_rand_init(m, s, "w", w4, 4);
		tm_node(m, "Conv", NULL, TM_NAMES("x", "w"), 2, TM_NAMES("y"), 1);
		break;
	case 11: case 12: case 13: case 14:  /* ConvTranspose: strides 2 of a symbolic
					      * length, output_shape of one, an unknown
					      * auto_pad, weight an input at opset 9 */
		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 5), 3);
		if (param == 11 || param == 12) {
			m->graph->inputs[0].type->shape.dims[2].kind = IR_DIM_PARAM;
			m->graph->inputs[0].type->shape.dims[2].param = strdup("L");
		}
		if (param == 14)
			tm_input(m, "w", IR_DTYPE_FLOAT, w3, 3);
		else
			tg_rand_init(m, s, "w", w3, 3);
		n = tm_node(m, "ConvTranspose", NULL, TM_NAMES("x", "w"), 2, TM_NAMES("y"), 1);
		if (param == 11)
			tg_set_ints(n, "strides", TM_DIMS(2), 1);
		if (param == 12)
			tg_set_ints(n, "output_shape", TM_DIMS(7), 1);
		if (param == 13)
			CU_ASSERT_FATAL(ir_node_set_string(n, "auto_pad", "SAME") == 0);
		break;
	case 15:        /* kernel-split without a target limit */
		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 9), 3);
		tg_rand_init(m, s, "w", TM_DIMS(2, 2, 7), 3);
		tm_node(m, "Conv", NULL, TM_NAMES("x", "w"), 2, TM_NAMES("y"), 1);
		break;
	case 18: {      /* Where with a -inf branch (attention mask) */
		double ninf = -INFINITY;

		tm_input(m, "c", IR_DTYPE_BOOL, TM_DIMS(3), 1);
		tm_input(m, "a", IR_DTYPE_FLOAT, TM_DIMS(3), 1);
		tm_init(m, "b", IR_DTYPE_FLOAT, NULL, 0, &ninf);
		tm_node(m, "Where", NULL, TM_NAMES("c", "a", "b"), 3, TM_NAMES("y"), 1);
		break;
	}
	case 17:        /* pool-split without a target limit */
		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 9), 3);
		n = tm_node(m, "MaxPool", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
		tg_set_ints(n, "kernel_shape", TM_DIMS(8), 1);
		break;
	case 16:        /* ConvTranspose with negative pads */
		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 5), 3);
		tg_rand_init(m, s, "w", w3, 3);
		n = tm_node(m, "ConvTranspose", NULL, TM_NAMES("x", "w"), 2, TM_NAMES("y"), 1);
		tg_set_ints(n, "pads", TM_DIMS(-1, 0), 2);
		break;
	}
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}


/* to-reshape with a dynamic batch: the shape copies dim 0 with a 0 */
static void test_reshape_batch(void)
{
	static const char *const ops[] = { "Flatten", "Squeeze", "Unsqueeze" };

	for (int k = 0; k < 3; k++) {
		struct ir_model *m = tm_new(13);
		int64_t axes = k == 2 ? 3 : 1;
		struct rt_value *before = NULL, *after = NULL;
		const struct rw_pass *p = rw_pass_find("to-reshape");
		struct ir_node *n;
		struct rw_ctx ctx;
		struct ir_diag d;
		char why[256] = "";
		int64_t shape[1];
		const uint8_t *raw;
		size_t ns = 0;

		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 1, 3, 4), 4);
		m->graph->inputs[0].type->shape.dims[0].kind = IR_DIM_PARAM;
		m->graph->inputs[0].type->shape.dims[0].param = strdup("N");
		if (k)
			tg_int_init(m, "axes", &axes, TM_DIMS(1), 1);
		n = tm_node(m, ops[k], NULL, TM_NAMES("x", "axes"), k ? 2 : 1, TM_NAMES("y"), 1);
		tg_finish(m, IR_DTYPE_FLOAT);
		ir_diag_init(&d);
		CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
		CU_ASSERT(p->check(&ctx, n, why, sizeof(why)));
		if (why[0])
			fprintf(stderr, "\nto-reshape %s: %s\n", ops[k], why);
		CU_ASSERT_FATAL(tm_run(m, 3, &before, 1) == 0);
		CU_ASSERT_FATAL(rw_apply(&ctx, p, n, 0) == 0);
		CU_ASSERT_FATAL(rw_refresh(&ctx) == 0);
		n = tg_find_op(m, "Reshape");
		CU_ASSERT_FATAL(n != NULL);
		CU_ASSERT_FATAL(n->inputs[1]->init != NULL);
		CU_ASSERT_FATAL(ir_tensor_data(n->inputs[1]->init, &raw, &ns, &d) == 0);
		CU_ASSERT(ns >= 2 * sizeof(int64_t));
		memcpy(shape, raw, sizeof(int64_t));
		CU_ASSERT(shape[0] == 0);
		CU_ASSERT_FATAL(tm_run(m, 3, &after, 1) == 0);
		CU_ASSERT(tg_compare(after, before) == 0);
		rt_value_unref(before);
		rt_value_unref(after);
		rw_ctx_release(&ctx);
		ir_model_free(m);
	}
}

/* ---- refusals --------------------------------------------------------- */

struct rcase {
	const char *pass, *op;
	build_fn build;
	int param;
	const char *why;             /* a word the reason contains */
};

static struct ir_model *r_cumsum_axis(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(14);
	int64_t d[2] = { 2, 3 };

	(void)s;
	(void)param;
	tm_input(m, "x", IR_DTYPE_FLOAT, d, 2);
	tm_input(m, "axis", IR_DTYPE_INT64, NULL, 0);
	tm_node(m, "CumSum", NULL, TM_NAMES("x", "axis"), 2, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

static struct ir_model *r_tile(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t rep[2] = { 2, 1 };

	(void)s;
	(void)param;
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 2), 2);
	tg_int_init(m, "rep", rep, TM_DIMS(2), 1);
	tm_node(m, "Tile", NULL, TM_NAMES("x", "rep"), 2, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

static struct ir_model *r_onehot(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t two = 2;
	double vals[2] = { 0, 1 };

	(void)s;
	(void)param;
	tm_input(m, "i", IR_DTYPE_INT64, TM_DIMS(3), 1);
	tm_input(m, "depth", IR_DTYPE_INT64, NULL, 0);
	tm_init(m, "values", IR_DTYPE_FLOAT, &two, 1, vals);
	tm_node(m, "OneHot", NULL, TM_NAMES("i", "depth", "values"), 3, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

static struct ir_model *r_range(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	double st = 0, de = 1;

	(void)s;
	(void)param;
	tm_init(m, "s", IR_DTYPE_FLOAT, NULL, 0, &st);
	tm_input(m, "l", IR_DTYPE_FLOAT, NULL, 0);
	tm_init(m, "d", IR_DTYPE_FLOAT, NULL, 0, &de);
	tm_node(m, "Range", NULL, TM_NAMES("s", "l", "d"), 3, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

static const struct rcase refusals[] = {
	{ "cumsum", "CumSum", r_cumsum_axis, 0, "axis" },
	{ "expand-tile", "Tile", r_tile, 0, "broadcast" },
	{ "onehot", "OneHot", r_onehot, 0, "depth" },
	{ "range-const", "Range", r_range, 0, "constant" },
	{ "depth-space", "DepthToSpace", b_where, 0, "4-D" },
	{ "where-arith", "Where", r_misc, 0, "int8" },
	{ "where-arith", "Where", r_misc, 18, "inf" },
	{ "logic-arith", "Not", r_misc, 1, "opset" },
	{ "trilu", "Trilu", r_misc, 2, "k is not a constant or a scalar input" },
	{ "to-reshape", "Flatten", r_misc, 3, "not static" },
	{ "gemm", "Gemm", r_misc, 4, "opset" },
	{ "matmul-batch", "MatMul", r_misc, 5, "equal" },
	{ "einsum", "Einsum", r_misc, 6, "repeats" },
	{ "einsum", "Einsum", r_misc, 7, "ellipsis" },
	{ "einsum", "Einsum", r_misc, 8, "operands" },
	{ "einsum", "Einsum", r_misc, 9, "broadcast" },
	{ "conv1d", "Conv", r_misc, 10, "3-D" },
	{ "conv-transpose", "ConvTranspose", r_misc, 11, "static" },
	{ "conv-transpose", "ConvTranspose", r_misc, 12, "output_shape" },
	{ "conv-transpose", "ConvTranspose", r_misc, 13, "auto_pad" },
	{ "conv-transpose", "ConvTranspose", r_misc, 14, "opset" },
	{ "conv-transpose", "ConvTranspose", r_misc, 16, "negative pads" },
	{ "kernel-split", "Conv", r_misc, 15, "limit" },
	{ "pool-split", "MaxPool", r_misc, 17, "limit" },
};

static void test_refusals(void)
{
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct rcase *rc = &refusals[i];
		const struct rw_pass *p = rw_pass_find(rc->pass);
		uint64_t s = 7;
		struct ir_model *m = rc->build(&s, rc->param);
		struct ir_node *n = tg_find_op(m, rc->op);
		struct rw_ctx ctx;
		struct ir_diag d;
		char why[256] = "";

		CU_ASSERT_FATAL(p != NULL);
		if (!n)   /* a model without the op: the op is matched by name */
			n = m->graph->nodes[0];
		ir_diag_init(&d);
		CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
		CU_ASSERT(!p->check(&ctx, n, why, sizeof(why)));
		if (!strstr(why, rc->why))
			fprintf(stderr, "\nrefusal %zu (%s): '%s' lacks '%s'\n", i, rc->pass, why,
				rc->why);
		CU_ASSERT(strstr(why, rc->why) != NULL);
		rw_ctx_release(&ctx);
		ir_model_free(m);
	}
}

static const struct unit_test tests[] = {
	{ "decompositions agree with the op they replace", test_decompositions },
	{ "decompositions refuse what they cannot do", test_refusals },
	{ "kernel-split and pool-split keep kernels within the target's limit", test_kernel_split },
	{ "to-reshape copies a dynamic batch with 0", test_reshape_batch },
	{ NULL, NULL },
};

int suite_decomp2_register(void)
{
	return unit_add_suite("decomp2", tests);
}
