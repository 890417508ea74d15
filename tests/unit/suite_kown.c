/* suite_kown.c: opmig's own float32 convolution paths, those that keep
 * derived weights per session, against a naive loop in double written
 * here, with oneDNN turned off (OPMIG_NO_DNNL: where it is absent these
 * are the paths; with it, it takes windows over 1x1 of 16 channels or
 * more, suite kdnnl): 3x3 stride-1 convolutions of more than 64 input and
 * output channels (odd and even output sizes, asymmetric and oversized
 * pads, batches, many positions); the packed products
 * for few output positions (k_conv_pg.c): 1x1 in place, im2col, strides,
 * a batch's images in one product, 1x1 ones of many positions read in
 * place,
 * groups, 3-D, more steps than one block, channel counts off the panel
 * width; the weights-side products for more positions (pgemm_w.c, panels
 * gathered from the image or read from it, or from an im2col matrix for
 * 1-D and 3-D); the direct stride-1 convolutions, positions in the
 * vector lanes (k_conv_direct.c: padded copies and input read in place,
 * dropped lanes, masked last vectors, dilations, lopsided pads, steps in
 * chunks, strides through phase planes); the depthwise ones, channels
 * in the vector lanes (k_conv_dw.c: blocks across images, narrow and
 * wide planes, strides, dilations, lopsided pads, bands of rows),
 * unstrided planes as large as their output flattened (k_conv_dwf.c:
 * every count of vectors left after the runs of four, dilations,
 * lopsided pads), and other unstrided large planes a plane at a time
 * (k_conv_dwp.c: rows of 56 and 120 outputs, four vectors after the
 * whole runs); each
 * with one and two threads, weights cached and reused across
 * runs, weights fed as inputs (never cached), a memory limit that leaves
 * no room for the cache; and the shapes both leave to the other paths
 * still right. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "tests/unit/tconv.h"
#include "tests/unit/tmodel.h"

/* Run cs's model (runs times in one session) with threads and memory
 * limit; every run's output against the naive one. */
static void conv_case(const struct ccase *cs, int threads, int w_input, int limit)
{
	int64_t xd[5] = { cs->n, cs->c }, wd[5] = { cs->m, cs->c / cs->group };
	int64_t nx = cs->n * cs->c, nw = cs->m * (cs->c / cs->group), ny;
	double *x, *w, *w2, *b, *want, *want2;
	struct ir_model *m;
	struct rt_session *s = NULL;
	struct rt_opts o = { .threads = threads };
	struct rt_value *ins[2], *y = NULL;
	struct ir_diag d;
	char what[64];

	for (int d0 = 0; d0 < cs->nsp; d0++) {
		xd[2 + d0] = cs->in[d0];
		wd[2 + d0] = cs->k[d0];
		nx *= cs->in[d0];
		nw *= cs->k[d0];
	}
	x = tc_fill(nx, 3);
	w = tc_fill(nw, 5);
	w2 = tc_fill(nw, 6);
	b = tc_fill(cs->m, 8);
	want = tc_naive_conv(cs, x, w, b, &ny);
	want2 = w_input ? tc_naive_conv(cs, x, w2, b, &ny) : NULL;
	m = tc_conv_model(cs, w, b, w_input);
	ins[0] = tc_tensor(x, cs->nsp + 2, xd);
	ins[1] = w_input ? tc_tensor(w, cs->nsp + 2, wd) : NULL;
	ir_diag_init(&d);
	if (limit) {   /* room for the run's tensors, not for packed weights */
		int64_t peak;
		size_t unknown;

		CU_ASSERT_FATAL(rt_session_new(m, &o, &s, &d) == 0);
		CU_ASSERT_FATAL(rt_session_plan_peak(s, ins, w_input ? 2 : 1, &peak, &unknown, &d) == 0);
		rt_session_free(s);
		o.max_memory = peak + 64;
	}
	CU_ASSERT_FATAL(rt_session_new(m, &o, &s, &d) == 0);
	for (int r = 0; r < 3; r++) {
		snprintf(what, sizeof(what), "case c%lld m%lld nsp %d threads %d run %d",
			 (long long)cs->c, (long long)cs->m, cs->nsp, threads, r);
		if (w_input && r == 2) {   /* new weights: no stale packing */
			rt_value_unref(ins[1]);
			ins[1] = tc_tensor(w2, cs->nsp + 2, wd);
		}
		if (rt_session_run(s, ins, w_input ? 2 : 1, &y, &d) != 0)
			fprintf(stderr, "\n%s: %s\n", what, d.msg);
		CU_ASSERT_FATAL(y != NULL);
		CU_ASSERT(tc_check_out(y, w_input && r == 2 ? want2 : want, ny, what));
		rt_value_unref(y);
		y = NULL;
	}
	rt_session_free(s);
	rt_value_unref(ins[0]);
	rt_value_unref(ins[1]);
	ir_model_free(m);
	free(x);
	free(w);
	free(w2);
	free(b);
	free(want);
	free(want2);
}

static const struct ccase cases[] = {
	/* 3x3, stride 1, more than 64 input and output channels, rows wider
	 * than the channels-in-lanes path takes (the direct path): 72 -> 65
	 * channels, 11x17 */
	{ 2, 1, 72, 65, 1, { 11, 17 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* batch 2, no pads (11x16 output), 80 -> 66 */
	{ 2, 2, 80, 66, 1, { 13, 18 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* asymmetric pads, 65 -> 67 channels */
	{ 2, 1, 65, 67, 1, { 12, 16 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 2, 1, 0 } },
	/* pads wider than the kernel: rows and tiles of zeros only */
	{ 2, 1, 72, 65, 1, { 6, 13 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 3, 2, 4, 3 } },
	/* 88x88 of 72 channels: many positions */
	{ 2, 1, 72, 65, 1, { 88, 88 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* direct (k_conv_direct.c): few channels; stride 2 (im2col);
	 * dilation 2; groups (OpenBLAS) */
	{ 2, 1, 8, 16, 1, { 12, 12 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	{ 2, 1, 16, 16, 1, { 12, 12 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 } },
	{ 2, 1, 16, 16, 1, { 12, 12 }, { 3, 3 }, { 1, 1 }, { 2, 2 }, { 2, 2, 2, 2 } },
	{ 2, 1, 32, 32, 2, { 12, 12 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* packed products (at most 64 output positions): 3x3 at 7x7 of 216
	 * steps (fewer than the channels-in-lanes path takes) */
	{ 2, 1, 24, 32, 1, { 7, 7 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* 1x1 read in place, 70 channels (a short last panel), batch 2 */
	{ 2, 2, 40, 70, 1, { 7, 7 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* a batch's images in one product (at most 256 positions in all):
	 * batch 3 of 25 positions, 24 -> 40; batch 4 of a 9x9/2 window onto
	 * 6x6, 33 channels (a short last panel) */
	{ 2, 3, 24, 40, 1, { 9, 9 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 } },
	{ 2, 4, 20, 33, 1, { 20, 20 }, { 9, 9 }, { 2, 2 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* 1x1 on weights-side products reading the input in place (an input
	 * of 1 MiB or more): batch 2 of 64 channels on 64x64, 70 out (a
	 * short last tile); 1-D, 128 channels on 3000, 33 out */
	{ 2, 2, 64, 70, 1, { 64, 64 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	{ 1, 1, 128, 33, 1, { 3000 }, { 1 }, { 1 }, { 1 }, { 0, 0 } },
	/* 1x1 of stride 2 (im2col), 33 channels */
	{ 2, 1, 20, 33, 1, { 9, 9 }, { 1, 1 }, { 2, 2 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* groups of 16 -> 24 at 6x6 */
	{ 2, 1, 32, 48, 2, { 6, 6 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* 3-D, 64 positions (five tiles of 12 and one of 4) */
	{ 3, 1, 8, 16, 1, { 4, 4, 4 }, { 3, 3, 3 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1, 1, 1, 1 } },
	/* 2,700 steps (several blocks of 256), one output channel */
	{ 2, 1, 300, 1, 1, { 5, 5 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* ... 40 channels (two panels) on 4x16 (rows too wide for the
	 * channels-in-lanes path) */
	{ 2, 1, 300, 40, 1, { 4, 16 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* weights-side products (more than 64 positions, an im2col matrix
	 * of 1 MiB or more), panels gathered from the image: a 7x7 stride-2
	 * convolution of 256 channels (400 positions, not a multiple of the
	 * panel width; 13 channels, a short last tile) */
	{ 2, 1, 256, 13, 1, { 40, 40 }, { 7, 7 }, { 2, 2 }, { 1, 1 }, { 3, 3, 3, 3 } },
	/* a panel that ends with output column 0 of a row (position 64 is
	 * row 3, column 1) whose first kernel row reads input row 0: the
	 * columns left of the image are padding, nothing may be read there
	 * (make check's ASan would see channel 0 read before its start);
	 * grouped, as ungrouped ones take the direct path */
	{ 2, 1, 26, 10, 2, { 21, 21 }, { 7, 7 }, { 1, 1 }, { 1, 1 }, { 3, 3, 3, 3 } },
	/* 5x3 kernel, strides 2 and 1, dilation 2 down, lopsided pads,
	 * batch 2, groups 2 */
	{ 2, 2, 10, 14, 2, { 130, 60 }, { 5, 3 }, { 2, 1 }, { 2, 1 }, { 3, 0, 1, 2 } },
	/* stride 3, 2,700 steps (several blocks), 20 channels */
	{ 2, 1, 300, 20, 1, { 31, 31 }, { 3, 3 }, { 3, 3 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* 1x1 with 1 MiB of weights at 16x16: left to OpenBLAS */
	{ 2, 1, 512, 512, 1, { 16, 16 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* 1-D and 3-D: through an im2col matrix */
	{ 1, 1, 6, 14, 1, { 9000 }, { 5 }, { 1 }, { 2 }, { 2, 3 } },
	{ 3, 1, 4, 12, 1, { 14, 14, 14 }, { 3, 3, 3 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1, 1, 1, 1 } },
	/* direct, positions in the vector lanes: 3x3 on a padded copy, rows
	 * of 13 computed as 15 (dropped lanes), 16 -> 16 */
	{ 2, 1, 16, 16, 1, { 11, 13 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* read in place (no pads) with dropped lanes, the last vector
	 * masked, batch 2, 24 -> 20 */
	{ 2, 2, 24, 20, 1, { 13, 12 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* asymmetric pads, 17 -> 33 (tiles of 6 and 5 channels) */
	{ 2, 1, 17, 33, 1, { 12, 10 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 2, 1, 0 } },
	/* pads wider than the kernel: rows of zeros only */
	{ 2, 1, 16, 16, 1, { 6, 7 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 3, 2, 4, 3 } },
	/* 5x3 kernel dilated (2, 1), lopsided pads, batch 2, 10 -> 7 */
	{ 2, 2, 10, 7, 1, { 30, 20 }, { 5, 3 }, { 1, 1 }, { 2, 1 }, { 3, 0, 1, 2 } },
	/* 64 channels at 40x40: two chunks of steps (partial sums kept);
	 * 40 output channels */
	{ 2, 1, 64, 40, 1, { 40, 40 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* 1x1 in place at 11x11 (the last vector masked), 300 -> 20: three
	 * chunks of steps */
	{ 2, 1, 300, 20, 1, { 11, 11 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* 1x1 at 12x12 (whole vectors), 40 -> 70 */
	{ 2, 1, 40, 70, 1, { 12, 12 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* 1x7 kernel with pads (Inception's factored convolutions), 1 -> 9 */
	{ 2, 1, 1, 9, 1, { 17, 17 }, { 1, 7 }, { 1, 1 }, { 1, 1 }, { 0, 3, 0, 3 } },
	/* strides, split into phase planes: a 7x7 stride-2 stem on 3
	 * channels (2,025 positions) */
	{ 2, 1, 3, 13, 1, { 90, 90 }, { 7, 7 }, { 2, 2 }, { 1, 1 }, { 3, 3, 3, 3 } },
	/* 1x1 of stride 2 at 30x30 (one phase copied), 20 -> 33 */
	{ 2, 1, 20, 33, 1, { 30, 30 }, { 1, 1 }, { 2, 2 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* strides 3 and 2 with dilations 2 and 3, lopsided pads, batch 2 */
	{ 2, 2, 7, 11, 1, { 50, 41 }, { 3, 4 }, { 3, 2 }, { 2, 3 }, { 2, 1, 0, 3 } },
	/* stride (1, 2), 130 channels: chunks of steps across phases */
	{ 2, 1, 130, 9, 1, { 20, 41 }, { 3, 3 }, { 1, 2 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* depthwise, as large as its output: flattened (k_conv_dwf.c),
	 * batch 2 of 40 channels at 14x14 (13 vectors) */
	{ 2, 2, 40, 40, 40, { 14, 14 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* ... 10x10 (7 vectors: 3 after the run), 5x6 (2), a 5x5 kernel
	 * dilated 2 on 9x23, lopsided pads (0, 2 / 2, 0) on 11x19, 7x7 */
	{ 2, 1, 17, 17, 17, { 10, 10 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	{ 2, 2, 5, 5, 5, { 5, 6 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	{ 2, 1, 6, 6, 6, { 9, 23 }, { 5, 5 }, { 1, 1 }, { 2, 2 }, { 4, 4, 4, 4 } },
	{ 2, 1, 5, 5, 5, { 11, 19 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 2, 2, 0 } },
	{ 2, 1, 33, 33, 33, { 7, 7 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* depthwise, channels in the vector lanes (k_conv_dw.c): batch 2 of
	 * 40 channels, unpadded 14x14 -> 12x12, blocks of sixteen planes
	 * across the images (channels 32-39 of one, 0-7 of the next); planes
	 * narrower than a transpose taken flat */
	{ 2, 2, 40, 40, 40, { 14, 14 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* stride 2 at 20x20: rows transposed sixteen columns at a time, the
	 * last block overlapping; MobileNetV2's 28 -> 14 and, batch 2 of 18
	 * channels, 14 -> 7 */
	{ 2, 1, 32, 32, 32, { 20, 20 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 } },
	{ 2, 1, 20, 20, 20, { 28, 28 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 } },
	{ 2, 2, 18, 18, 18, { 14, 14 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* 5x3 kernel dilated (2, 1), strides (1, 2), lopsided pads, 17
	 * channels (one lane of the second block) */
	{ 2, 1, 17, 17, 17, { 9, 23 }, { 5, 3 }, { 1, 2 }, { 2, 1 }, { 3, 0, 1, 2 } },
	/* stride 2 at 120x120: bands of rows (each band's padded input at
	 * most 3,072 positions), 5 channels only */
	{ 2, 1, 5, 5, 5, { 120, 120 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* unstrided at 28x28 and 40x40 with pads of one: flattened */
	{ 2, 1, 24, 24, 24, { 28, 28 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	{ 2, 1, 16, 16, 16, { 40, 40 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* unpadded 58x58 -> 56x56 and 60x122 -> 58x120: a plane at a time,
	 * positions in the lanes (k_conv_dwp.c), rows of four vectors after
	 * no whole run of four, and after one */
	{ 2, 1, 3, 3, 3, { 58, 58 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	{ 2, 2, 2, 2, 2, { 60, 122 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* ... a 5x3 kernel dilated (2, 1), lopsided pads, one of 17
	 * columns, batch 2 of 3 channels: 32 x 47 outputs */
	{ 2, 2, 3, 3, 3, { 36, 30 }, { 5, 3 }, { 1, 1 }, { 2, 1 }, { 3, 17, 1, 2 } },
	/* channels in the vector lanes (k_conv_cl.c: rows of at most 14
	 * outputs, 24 channels or more, 256 steps or more): 3x3 at 7x7, a
	 * tile per padded row, 32 -> 40 (one panel of 64 channels), batch 2 */
	{ 2, 2, 32, 40, 1, { 7, 7 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* 1x1 read in place at 14x14: the plane's rows one after another,
	 * 196 positions in tiles of 14; 300 -> 70 (three panels) */
	{ 2, 1, 300, 70, 1, { 14, 14 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* stride 2 through phase planes, 27x27 -> 14x14 (a full tile per
	 * row), 64 -> 33 */
	{ 2, 1, 64, 33, 1, { 27, 27 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* 5x3 kernel dilated (2, 1), lopsided pads, rows of 12, batch 2,
	 * 30 -> 24 */
	{ 2, 2, 30, 24, 1, { 15, 12 }, { 5, 3 }, { 1, 1 }, { 2, 1 }, { 3, 0, 1, 2 } },
	/* unpadded 3x3 read in place, rows of 14 out of 16: 40 -> 32 */
	{ 2, 1, 40, 32, 1, { 9, 16 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* 1x1 with 1 MiB of weights at 9x9 (16 panels), 81 positions in
	 * tiles of 14 and 13 */
	{ 2, 1, 512, 512, 1, { 9, 9 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
	/* rows of 7 by panels of 64 channels: 48 -> 100 (the second panel
	 * holds 36) */
	{ 2, 1, 48, 100, 1, { 7, 7 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* rows of 7 with 32 channels only: one panel of 32 */
	{ 2, 1, 40, 32, 1, { 7, 7 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } },
	/* 256 steps: one chunk (the others here take two or more: the sums
	 * kept between chunks), 256 -> 48 at 14x14 */
	{ 2, 1, 256, 48, 1, { 14, 14 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } },
};

static void test_vs_naive(void)
{
	setenv("OPMIG_NO_DNNL", "1", 1);   /* the own kernels */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int th = 1; th <= 2; th++)
			conv_case(&cases[i], th, 0, 0);
	unsetenv("OPMIG_NO_DNNL");
}

static void test_weights_as_input(void)
{
	setenv("OPMIG_NO_DNNL", "1", 1);   /* the own kernels */
	conv_case(&cases[0], 1, 1, 0);
	conv_case(&cases[2], 2, 1, 0);
	conv_case(&cases[10], 1, 1, 0);
	conv_case(&cases[11], 2, 1, 0);
	conv_case(&cases[18], 1, 1, 0);
	conv_case(&cases[23], 2, 1, 0);
	conv_case(&cases[29], 1, 1, 0);
	conv_case(&cases[42], 2, 1, 0);
	conv_case(&cases[44], 1, 1, 0);
	unsetenv("OPMIG_NO_DNNL");
}

static void test_no_room_for_cache(void)
{
	setenv("OPMIG_NO_DNNL", "1", 1);   /* the own kernels */
	conv_case(&cases[1], 1, 0, 1);
	conv_case(&cases[4], 2, 0, 1);
	conv_case(&cases[9], 1, 0, 1);
	conv_case(&cases[15], 2, 0, 1);
	conv_case(&cases[16], 1, 0, 1);
	conv_case(&cases[28], 2, 0, 1);
	conv_case(&cases[43], 1, 0, 1);
	conv_case(&cases[47], 2, 0, 1);
	unsetenv("OPMIG_NO_DNNL");
}

static const struct unit_test tests[] = {
	{ "vs_naive", test_vs_naive },
	{ "weights_as_input", test_weights_as_input },
	{ "no_room_for_cache", test_no_room_for_cache },
	{ NULL, NULL },
};

int suite_kown_register(void)
{
	return unit_add_suite("kown", tests);
}
