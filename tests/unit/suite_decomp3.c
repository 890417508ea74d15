/* suite_decomp3.c: property tests of the convolution-shaped lowerings:
 * ConvTranspose as Conv (every variant, random strides, dilations,
 * groups, pads, output_padding, output_shape and auto_pad, 1-D to 3-D),
 * DepthToSpace/SpaceToDepth within rank 4, the Reduce* lowerings through
 * ReduceSum or ReduceMean, LpNormalization and GroupNormalization.  The
 * harness (tlower.c) checks the values against the interpreter's own
 * kernels, the ops emitted against the variant's list, and the models
 * with onnx.checker. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rewrite.h"
#include "tests/unit/suites.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tlower.h"
#include "tests/unit/tmodel.h"

/* ---- ConvTranspose ----------------------------------------------------- */

enum {
	CT_RANK = 3,           /* spatial rank - 1 */
	CT_PADS = 7 << 2,      /* 0 pads, 1 SAME_UPPER, 2 SAME_LOWER, 3 output_shape,
				* 4 VALID, 5 pads up to 2 beyond the kernel */
	CT_DYN = 1 << 5,       /* the weight a graph input */
	CT_EQUAL = 1 << 6,     /* 2-D, equal strides >= 2 */
	CT_OLD = 1 << 7,       /* opset 9 */
	CT_SYMN = 1 << 8,      /* symbolic batch */
	CT_S1 = 1 << 9,        /* strides 1 */
	CT_BIAS = 1 << 10,
};

static struct ir_model *b_convt(uint64_t *s, int param)
{
	int sp = (param & CT_RANK) + 1, mode = (param & CT_PADS) >> 2;
	struct ir_model *m = tm_new(param & CT_OLD ? 9 : 13);
	int64_t g = tg_rnd(s, 1, 2), cg = tg_rnd(s, 1, 2), mg = tg_rnd(s, 1, 2), mo;
	int64_t x[5] = { tg_rnd(s, 1, 2), g * cg }, w[5] = { g * cg, mg };
	int64_t st[3], dl[3], pads[6], op[3], os[3], eq = tg_rnd(s, 2, 3);
	struct ir_node *n;
	int ok, setdl = (int)tg_rnd(s, 0, 1);

	mo = g * mg;
	do {
		ok = 1;
		for (int i = 0; i < sp; i++) {
			int64_t ext;

			x[2 + i] = tg_rnd(s, 1, sp == 3 ? 3 : 4);
			w[2 + i] = tg_rnd(s, 1, sp == 3 ? 3 : 4);
			st[i] = param & CT_S1 ? 1 : param & CT_EQUAL ? eq : tg_rnd(s, 1, 3);
			dl[i] = setdl ? tg_rnd(s, 1, 2) : 1;
			op[i] = st[i] > 1 ? tg_rnd(s, 0, st[i] - 1) : 0;
			ext = dl[i] * (w[2 + i] - 1);
			pads[i] = tg_rnd(s, 0, mode == 5 ? ext + 2 : ext);
			pads[sp + i] = tg_rnd(s, 0, mode == 5 ? ext + 2 : ext);
			os[i] = st[i] * (x[2 + i] - 1) + op[i] + ext + 1 + tg_rnd(s, -2, 2);
			ok &= os[i] >= 1 && (mode != 0 && mode != 5 ? 1 :
				st[i] * (x[2 + i] - 1) + op[i] + ext + 1 - pads[i] - pads[sp + i] >= 1);
		}
	} while (!ok);
	tm_input(m, "x", IR_DTYPE_FLOAT, x, 2 + (size_t)sp);
	if (param & CT_SYMN)
		tl_symbolic(m, "x", 0);
	if (param & CT_DYN)
		tm_input(m, "w", IR_DTYPE_FLOAT, w, 2 + (size_t)sp);
	else
		tg_rand_init(m, s, "w", w, 2 + (size_t)sp);
	tg_rand_init(m, s, "b", &mo, 1);
	n = tm_node(m, "ConvTranspose", NULL, TM_NAMES("x", "w", "b"), param & CT_BIAS ? 3 : 2,
		    TM_NAMES("y"), 1);
	tg_set_ints(n, "strides", st, (size_t)sp);
	if (setdl)
		tg_set_ints(n, "dilations", dl, (size_t)sp);
	if (g > 1)
		CU_ASSERT_FATAL(ir_node_set_int(n, "group", g) == 0);
	if (mode != 3)
		tg_set_ints(n, "output_padding", op, (size_t)sp);
	switch (mode) {
	case 0: case 5:
		tg_set_ints(n, "pads", pads, 2 * (size_t)sp);
		break;
	case 1:
		CU_ASSERT_FATAL(ir_node_set_string(n, "auto_pad", "SAME_UPPER") == 0);
		break;
	case 2:
		CU_ASSERT_FATAL(ir_node_set_string(n, "auto_pad", "SAME_LOWER") == 0);
		break;
	case 3:
		tg_set_ints(n, "output_shape", os, (size_t)sp);
		break;
	default:
		CU_ASSERT_FATAL(ir_node_set_string(n, "auto_pad", "VALID") == 0);
	}
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

#define CT(p) { "conv-transpose", "ConvTranspose", b_convt, (p), TL_REAL, 1e-5, 1e-5, 12 }
static const struct tl_case convt_cases[] = {
	CT(0), CT(1), CT(2), CT(1 | CT_BIAS), CT(0 | (5 << 2)), CT(1 | (5 << 2) | CT_BIAS),
	CT(1 | (1 << 2)), CT(1 | (2 << 2)), CT(0 | (3 << 2)), CT(1 | (3 << 2) | CT_BIAS),
	CT(2 | (4 << 2)), CT(1 | CT_EQUAL | CT_BIAS), CT(1 | CT_EQUAL | (5 << 2)),
	CT(1 | CT_EQUAL | CT_OLD), CT(1 | CT_EQUAL | CT_OLD | (5 << 2)), CT(0 | CT_OLD),
	CT(1 | CT_S1 | CT_BIAS), CT(0 | CT_S1 | (5 << 2)), CT(2 | CT_S1 | (5 << 2)),
	CT(0 | CT_DYN | CT_BIAS), CT(1 | CT_DYN | (5 << 2)), CT(1 | CT_DYN | CT_S1),
	CT(0 | CT_DYN | CT_S1 | (5 << 2)), CT(1 | CT_SYMN | CT_BIAS),
	CT(1 | CT_SYMN | CT_S1 | (5 << 2)), CT(0 | CT_SYMN | CT_DYN | (1 << 2)),
};
#undef CT

static void test_conv_transpose(void)
{
	tl_run_cases(convt_cases, sizeof(convt_cases) / sizeof(convt_cases[0]), 4099);
	tl_expect_all_variants("conv-transpose");
	tg_run_checker();
}

/* ---- DepthToSpace, SpaceToDepth ----------------------------------------- */

/* param: 0 DCR, 1 CRD, 2 SpaceToDepth; | 4 symbolic batch; | 8 opset 9 */
static struct ir_model *b_depth_space(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(param & 8 ? 9 : 13);
	int64_t b = tg_rnd(s, 2, 3), mode = param & 3;
	int64_t d[4] = { tg_rnd(s, 1, 2), mode < 2 ? b * b * tg_rnd(s, 1, 3) : tg_rnd(s, 1, 3),
			 mode < 2 ? tg_rnd(s, 1, 3) : b * tg_rnd(s, 1, 3),
			 mode < 2 ? tg_rnd(s, 1, 4) : b * tg_rnd(s, 1, 2) };
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, d, 4);
	if (param & 4)
		tl_symbolic(m, "x", 0);
	n = tm_node(m, mode < 2 ? "DepthToSpace" : "SpaceToDepth", NULL, TM_NAMES("x"), 1,
		    TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "blocksize", b) == 0);
	if (mode == 1)
		CU_ASSERT_FATAL(ir_node_set_string(n, "mode", "CRD") == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

#define DS(op, p) { "depth-space", op, b_depth_space, (p), TL_REAL, 0, 0, 6 }
static const struct tl_case ds_cases[] = {
	DS("DepthToSpace", 0), DS("DepthToSpace", 1), DS("SpaceToDepth", 2),
	DS("DepthToSpace", 0 | 4), DS("DepthToSpace", 1 | 4), DS("SpaceToDepth", 2 | 4),
	DS("DepthToSpace", 0 | 8), DS("SpaceToDepth", 2 | 8),
};
#undef DS

static void test_depth_space(void)
{
	tl_run_cases(ds_cases, sizeof(ds_cases) / sizeof(ds_cases[0]), 313);
	tl_expect_all_variants("depth-space");
	tg_run_checker();
}

/* A target whose max_rank is 4: the rank-6 form is not offered */
static void test_depth_space_rank4(void)
{
	static char id[] = "rank4";
	struct rules_target t = { .id = id, .max_rank = 4, .opset_min = -1, .opset_max = -1,
				  .resolved = 1 };
	const struct rw_pass *p = rw_pass_find("depth-space");
	uint64_t s = 5;
	struct ir_model *m = b_depth_space(&s, 1);
	struct rw_ctx ctx;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, &t, &d) == 0);
	CU_ASSERT(!p->vcheck(&ctx, m->graph->nodes[0], 0));
	CU_ASSERT(p->vcheck(&ctx, m->graph->nodes[0], 1));
	t.max_rank = 6;
	CU_ASSERT(p->vcheck(&ctx, m->graph->nodes[0], 0));
	rw_ctx_release(&ctx);
	ir_model_free(m);
}

/* ---- Reduce* ------------------------------------------------------------- */

static const char *const reduce_ops[] = {
	"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
	"ReduceMean", "ReduceSum",
};

/* param: bits 0-2 the op (reduce_ops), | 8 opset 18 (axes an input; 13 for
 * ReduceSum), | 16 symbolic batch, | 32 no axes (all) */
static struct ir_model *b_reduce(uint64_t *s, int param)
{
	const char *op = reduce_ops[param & 7];
	int newer = param & 8, as_input = newer || (!strcmp(op, "ReduceSum"));
	struct ir_model *m = tm_new(newer ? 18 : 13);
	int r = (int)tg_rnd(s, 1, 4);
	int64_t d[4], axes[4];
	size_t k = 0;
	struct ir_node *n;

	for (int i = 0; i < r; i++) {
		d[i] = tg_rnd(s, 1, 4);
		if (tg_rnd(s, 0, 1))
			axes[k++] = tg_rnd(s, 0, 1) ? i : i - r;
	}
	if (!k)
		axes[k++] = r - 1;
	tm_input(m, "x", IR_DTYPE_FLOAT, d, (size_t)r);
	if (param & 16)
		tl_symbolic(m, "x", 0);
	if (as_input && !(param & 32))
		tg_int_init(m, "axes", axes, TM_DIMS((int64_t)k), 1);
	n = tm_node(m, op, NULL, TM_NAMES("x", "axes"), as_input && !(param & 32) ? 2 : 1,
		    TM_NAMES("y"), 1);
	if (!as_input && !(param & 32))
		tg_set_ints(n, "axes", axes, k);
	CU_ASSERT_FATAL(ir_node_set_int(n, "keepdims", tg_rnd(s, 0, 1)) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

#define RD(pass, op, p, v) { pass, op, b_reduce, (p), v, 1e-5, 1e-5, 6 }
#define R5(op, p, v) RD("reduce", op, p, v)
#define RMS(op, p) RD("reduce-mean-sum", op, p, TL_REAL)
static const struct tl_case reduce_cases[] = {
	R5("ReduceL1", 0, TL_REAL), R5("ReduceL2", 1, TL_REAL),
	R5("ReduceLogSum", 2, TL_POSITIVE), R5("ReduceLogSumExp", 3, TL_REAL),
	R5("ReduceSumSquare", 4, TL_REAL), RMS("ReduceMean", 5), RMS("ReduceSum", 6),
	R5("ReduceL1", 0 | 8, TL_REAL), R5("ReduceL2", 1 | 8 | 16, TL_REAL),
	R5("ReduceLogSum", 2 | 8 | 32, TL_POSITIVE), R5("ReduceLogSumExp", 3 | 8 | 16, TL_REAL),
	R5("ReduceSumSquare", 4 | 16, TL_REAL), RMS("ReduceMean", 5 | 8 | 16),
	RMS("ReduceSum", 6 | 16), RMS("ReduceMean", 5 | 32), RMS("ReduceSum", 6 | 32),
	R5("ReduceLogSumExp", 3 | 32, TL_WIDE),
};
#undef RMS
#undef R5
#undef RD

static void test_reduce(void)
{
	tl_run_cases(reduce_cases, sizeof(reduce_cases) / sizeof(reduce_cases[0]), 71);
	tl_expect_all_variants("reduce");
	tl_expect_all_variants("reduce-mean-sum");
	tg_run_checker();
}

/* ---- LpNormalization, GroupNormalization ------------------------------- */

/* param: p - 1 | 2 symbolic batch | 4 axis absent */
static struct ir_model *b_lp(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int r = (int)tg_rnd(s, 1, 4);
	int64_t d[4];
	struct ir_node *n;

	for (int i = 0; i < r; i++)
		d[i] = tg_rnd(s, 1, 4);
	tm_input(m, "x", IR_DTYPE_FLOAT, d, (size_t)r);
	if (param & 2)
		tl_symbolic(m, "x", 0);
	n = tm_node(m, "LpNormalization", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "p", (param & 1) + 1) == 0);
	if (!(param & 4))
		CU_ASSERT_FATAL(ir_node_set_int(n, "axis", tg_rnd(s, -r, r - 1)) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

/* param: | 1 opset 21 (per-channel scale) | 2 symbolic batch | 4 symbolic
 * spatial dim | 8 float16 data (statistics in float32) */
static struct ir_model *b_group(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(param & 1 ? 21 : 18);
	int r = (int)tg_rnd(s, 3, 4);
	int64_t g = tg_rnd(s, 1, 3), d[4] = { tg_rnd(s, 1, 2), g * tg_rnd(s, 1, 2) };
	int64_t sc = param & 1 ? d[1] : g;
	int dt = param & 8 ? IR_DTYPE_FLOAT16 : IR_DTYPE_FLOAT;
	double v[2][8];
	struct ir_node *n;

	for (int i = 2; i < r; i++)
		d[i] = tg_rnd(s, 1, 4);
	tm_input(m, "x", dt, d, (size_t)r);
	if (param & 2)
		tl_symbolic(m, "x", 0);
	if (param & 4)
		tl_symbolic(m, "x", 2);
	tg_fill(s, v[0], sc);
	tg_fill(s, v[1], sc);
	tm_init(m, "scale", dt, &sc, 1, v[0]);
	tm_init(m, "bias", dt, &sc, 1, v[1]);
	n = tm_node(m, "GroupNormalization", NULL, TM_NAMES("x", "scale", "bias"), 3,
		    TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "num_groups", g) == 0);
	tg_finish(m, dt);
	return m;
}

static const struct tl_case norm_cases[] = {
	{ "lp-norm", "LpNormalization", b_lp, 0, TL_REAL, 1e-6, 1e-5, 6 },
	{ "lp-norm", "LpNormalization", b_lp, 1, TL_REAL, 1e-6, 1e-5, 6 },
	{ "lp-norm", "LpNormalization", b_lp, 0 | 2, TL_REAL, 1e-6, 1e-5, 6 },
	{ "lp-norm", "LpNormalization", b_lp, 1 | 2 | 4, TL_REAL, 1e-6, 1e-5, 6 },
	{ "group-norm", "GroupNormalization", b_group, 0, TL_REAL, 1e-5, 1e-5, 4 },
	{ "group-norm", "GroupNormalization", b_group, 1, TL_REAL, 1e-5, 1e-5, 4 },
	{ "group-norm", "GroupNormalization", b_group, 0 | 2, TL_REAL, 1e-5, 1e-5, 4 },
	{ "group-norm", "GroupNormalization", b_group, 1 | 4, TL_REAL, 1e-5, 1e-5, 4 },
	{ "group-norm", "GroupNormalization", b_group, 0 | 2 | 4, TL_REAL, 1e-5, 1e-5, 4 },
	{ "group-norm", "GroupNormalization", b_group, 8, TL_REAL, 4e-3, 2e-3, 4 },
	{ "group-norm", "GroupNormalization", b_group, 1 | 4 | 8, TL_REAL, 4e-3, 2e-3, 4 },
};

static void test_norms(void)
{
	tl_run_cases(norm_cases, sizeof(norm_cases) / sizeof(norm_cases[0]), 1234);
	tl_expect_all_variants("lp-norm");
	tl_expect_all_variants("group-norm");
	tg_run_checker();
}

/* ---- refusals -------------------------------------------------------------- */

static struct ir_model *one_op(int64_t opset, const char *op, int dtype, const int64_t *d,
			       size_t r)
{
	struct ir_model *m = tm_new(opset);

	tm_input(m, "x", dtype, d, r);
	tm_node(m, op, NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	return m;
}

static void test_refusals(void)
{
	struct ir_model *m;
	struct ir_node *n;
	uint64_t s = 3;

	/* a reduced dim is symbolic: no count for ReduceMean * N */
	m = one_op(13, "ReduceMean", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	tl_symbolic(m, "x", 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("reduce-mean-sum", "ReduceMean", m, "not static");
	/* ReduceSum of integers */
	m = one_op(11, "ReduceSum", IR_DTYPE_INT32, TM_DIMS(2, 3), 2);
	tg_finish(m, IR_DTYPE_INT32);
	tl_refuses("reduce-mean-sum", "ReduceSum", m, "float");
	/* a GroupNormalization of unknown rank */
	m = tm_new(18);
	tm_input(m, "x", IR_DTYPE_FLOAT, NULL, 0);
	m->graph->inputs[0].type->present &= ~IR_TYPE_HAS_SHAPE;
	tg_rand_init(m, &s, "scale", TM_DIMS(2), 1);
	tg_rand_init(m, &s, "bias", TM_DIMS(2), 1);
	n = tm_node(m, "GroupNormalization", NULL, TM_NAMES("x", "scale", "bias"), 3,
		    TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "num_groups", 2) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("group-norm", "GroupNormalization", m, "rank");
	/* ConvTranspose of unknown rank */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, NULL, 0);
	m->graph->inputs[0].type->present &= ~IR_TYPE_HAS_SHAPE;
	tg_rand_init(m, &s, "w", TM_DIMS(2, 2, 3), 3);
	tm_node(m, "ConvTranspose", NULL, TM_NAMES("x", "w"), 2, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("conv-transpose", "ConvTranspose", m, "rank");
	/* ConvTranspose whose weight's shape is symbolic */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 5), 3);
	tm_input(m, "w", IR_DTYPE_FLOAT, TM_DIMS(2, 2, 3), 3);
	tl_symbolic(m, "w", 2);
	tm_node(m, "ConvTranspose", NULL, TM_NAMES("x", "w"), 2, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("conv-transpose", "ConvTranspose", m, "weight's shape");
	/* DepthToSpace with a blocksize not dividing the channels */
	m = one_op(13, "DepthToSpace", IR_DTYPE_FLOAT, TM_DIMS(1, 6, 2, 2), 4);
	CU_ASSERT_FATAL(ir_node_set_int(m->graph->nodes[0], "blocksize", 2) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("depth-space", "DepthToSpace", m, "divide");
}

/* ---- Transpose above rank 4 ---------------------------------------------- */

/* Reshape -> Transpose of rank 5 -> Reshapes, as exporters write them.
 * param 0: ShuffleNet's channel shuffle ([N,C,H,W] -> [N,g,C/g,H,W], the
 * groups swapped, back to [N,C,H,W]); 1: attention's head split with a
 * batch of 1 ([1,T,3HD] -> [1,T,3,H,D] -> perm [2,0,3,1,4] -> Split on
 * axis 0 -> three Reshapes to [1,H,T,D]); 2: the same permuted [0,2,3,1,4]
 * and split on axis 1; 3: a Split on an axis of size 1 (refused); 4:
 * permuted [0,3,1,2,4] to [1,H,T,3,D] and split on axis 3, which must
 * neither merge with T before it nor stay axis 3 once the batch is gone. */
static struct ir_model *b_rank5(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t t = tg_rnd(s, 2, 5), h = tg_rnd(s, 1, 3), dd = tg_rnd(s, 2, 4);

	if (param == 0) {
		int64_t n = tg_rnd(s, 1, 2), g = tg_rnd(s, 2, 3), cg = tg_rnd(s, 1, 3);
		int64_t hh = tg_rnd(s, 1, 3), w = tg_rnd(s, 2, 4);
		int64_t five[] = { n, g, cg, hh, w }, four[] = { n, g * cg, hh, w };
		struct ir_node *tr;

		tm_input(m, "x", IR_DTYPE_FLOAT, four, 4);
		tg_int_init(m, "s5", five, TM_DIMS(5), 1);
		tg_int_init(m, "s4", four, TM_DIMS(4), 1);
		tm_node(m, "Reshape", NULL, TM_NAMES("x", "s5"), 2, TM_NAMES("r"), 1);
		tr = tm_node(m, "Transpose", NULL, TM_NAMES("r"), 1, TM_NAMES("t"), 1);
		tg_set_ints(tr, "perm", TM_DIMS(0, 2, 1, 3, 4), 5);
		tm_node(m, "Reshape", NULL, TM_NAMES("t", "s4"), 2, TM_NAMES("y"), 1);
		tg_finish(m, IR_DTYPE_FLOAT);
		return m;
	}
	{
		int64_t five[] = { 1, t, 3, h, dd }, in[] = { 1, t, 3 * h * dd };
		int64_t four[] = { 1, h, t, dd };
		struct ir_node *tr, *sp;

		tm_input(m, "x", IR_DTYPE_FLOAT, in, 3);
		tg_int_init(m, "s5", five, TM_DIMS(5), 1);
		tg_int_init(m, "s4", four, TM_DIMS(4), 1);
		tm_node(m, "Reshape", NULL, TM_NAMES("x", "s5"), 2, TM_NAMES("r"), 1);
		tr = tm_node(m, "Transpose", NULL, TM_NAMES("r"), 1, TM_NAMES("t"), 1);
		if (param == 1 || param == 3)
			tg_set_ints(tr, "perm", TM_DIMS(2, 0, 3, 1, 4), 5);
		else if (param == 2)
			tg_set_ints(tr, "perm", TM_DIMS(0, 2, 3, 1, 4), 5);
		else
			tg_set_ints(tr, "perm", TM_DIMS(0, 3, 1, 2, 4), 5);
		if (param == 3) {
			/* axis 1 of [3,1,H,T,D]: size 1, one output */
			sp = tm_node(m, "Split", NULL, TM_NAMES("t"), 1, TM_NAMES("q"), 1);
			CU_ASSERT_FATAL(ir_node_set_int(sp, "axis", 1) == 0);
			tg_int_init(m, "s4b", TM_DIMS(3, h, t, dd), TM_DIMS(4), 1);
			tm_node(m, "Reshape", NULL, TM_NAMES("q", "s4b"), 2, TM_NAMES("y"), 1);
			tg_finish(m, IR_DTYPE_FLOAT);
			return m;
		}
		sp = tm_node(m, "Split", NULL, TM_NAMES("t"), 1, TM_NAMES("q", "k", "v"), 3);
		CU_ASSERT_FATAL(ir_node_set_int(sp, "axis", param == 1 ? 0 : param == 2 ? 1 : 3) == 0);
		tm_node(m, "Reshape", NULL, TM_NAMES("q", "s4"), 2, TM_NAMES("y"), 1);
		tm_node(m, "Reshape", NULL, TM_NAMES("k", "s4"), 2, TM_NAMES("yk"), 1);
		tm_node(m, "Reshape", NULL, TM_NAMES("v", "s4"), 2, TM_NAMES("yv"), 1);
		tm_output(m, "yk", IR_DTYPE_FLOAT, NULL, 0);
		tm_output(m, "yv", IR_DTYPE_FLOAT, NULL, 0);
		tg_finish(m, IR_DTYPE_FLOAT);
		return m;
	}
}

static const struct tl_case rank5_cases[] = {
	{ "transpose-rank", "Transpose", b_rank5, 0, TL_REAL, 0, 0, 8 },
	{ "transpose-rank", "Transpose", b_rank5, 1, TL_REAL, 0, 0, 8 },
	{ "transpose-rank", "Transpose", b_rank5, 2, TL_REAL, 0, 0, 8 },
	{ "transpose-rank", "Transpose", b_rank5, 4, TL_REAL, 0, 0, 8 },
};

static void test_transpose_rank(void)
{
	CU_ASSERT(tl_run_cases(rank5_cases, sizeof(rank5_cases) / sizeof(rank5_cases[0]), 5151) ==
		  32);
	tl_expect_all_variants("transpose-rank");
}

/* What the rewrite leaves is of rank 4 at most: the Transpose and every
 * value between the two Reshapes. */
static void test_transpose_rank_result(void)
{
	for (int param = 0; param < 5; param++) {
		uint64_t s = 77 + (uint64_t)param;
		struct ir_model *m = param == 3 ? NULL : b_rank5(&s, param);
		const struct rw_pass *p = rw_pass_find("transpose-rank");
		struct ir_node *n = m ? tg_find_op(m, "Transpose") : NULL;
		struct rw_ctx ctx;
		struct ir_diag d;
		char why[200];

		if (!m)
			continue;
		ir_diag_init(&d);
		CU_ASSERT_FATAL(p && n && rw_ctx_init(&ctx, m, NULL, &d) == 0);
		CU_ASSERT_FATAL(p->check(&ctx, n, why, sizeof(why)));
		CU_ASSERT_FATAL(rw_apply(&ctx, p, n, 0) == 0 && rw_refresh(&ctx) == 0);
		n = tg_find_op(m, "Transpose");
		CU_ASSERT_FATAL(n != NULL);
		for (size_t i = 0; i < m->graph->n_nodes; i++) {
			const struct ir_node *u = m->graph->nodes[i];
			const char *op = ir_s(u->op_type);

			if (!strcmp(op, "Transpose") || !strcmp(op, "Split")) {
				const struct ir_vtype *t = rw_type(&ctx, u->inputs[0]);

				CU_ASSERT(t && t->rank <= 4);
			}
		}
		rw_ctx_release(&ctx);
		ir_model_free(m);
	}
	/* a Split on an axis of size 1 is not offered */
	{
		uint64_t s = 5;

		tl_refuses("transpose-rank", "Transpose", b_rank5(&s, 3), "size 1");
	}
}

static const struct unit_test tests[] = {
	{ "conv-transpose agrees for every variant", test_conv_transpose },
	{ "depth-space agrees at rank 6, rank 4 and as one-hot convolutions", test_depth_space },
	{ "depth-space offers rank 6 only where the target allows it", test_depth_space_rank4 },
	{ "reduce and reduce-mean-sum agree via ReduceSum and ReduceMean", test_reduce },
	{ "lp-norm and group-norm agree, group-norm without Shape when static", test_norms },
	{ "the lowerings refuse what they cannot do", test_refusals },
	{ "transpose-rank agrees: channel shuffle, attention head split", test_transpose_rank },
	{ "transpose-rank leaves rank 4 (unit axes dropped, a Split's axis kept)",
	  test_transpose_rank_result },
	{ NULL, NULL },
};

int suite_decomp3_register(void)
{
	return unit_add_suite("decomp3", tests);
}
