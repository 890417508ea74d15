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

static const struct unit_test tests[] = {
	{ "conv-transpose agrees for every variant", test_conv_transpose },
	{ NULL, NULL },
};

int suite_decomp3_register(void)
{
	return unit_add_suite("decomp3", tests);
}
