/* k_conv_int.h: what the conv, pool and qlinear family files share:
 * the window geometry of convolutions and pools (kernel, strides,
 * dilations, pads, auto_pad, ceil_mode), whole-tensor conversion to and
 * from double, and the typed convolution cores (k_conv_core.c) that run
 * on float32 for float32 tensors and on double for every other dtype.
 * Private to runtime/kernels/k_conv*.c, k_pool*.c, k_qlinear.c, k_requant.c,
 * k_mm_dnnl.c. */
#ifndef OPMIG_K_CONV_INT_H
#define OPMIG_K_CONV_INT_H

#include <stdint.h>

#include "runtime/rt_int.h"

#define KNN_MAX_SP (RT_MAX_RANK - 2)

/* One sliding-window geometry: an input (n, c, in...) read by windows of
 * `kernel` placed every `stride`, `dil` apart inside, with pad[d] before
 * and pad[nsp + d] after spatial dim d, giving (n, m, out...). */
struct knn_geom {
	int nsp;                          /* spatial dims */
	int64_t n, c, m, group;
	int64_t in[KNN_MAX_SP], out[KNN_MAX_SP], kernel[KNN_MAX_SP];
	int64_t stride[KNN_MAX_SP], dil[KNN_MAX_SP], pad[2 * KNN_MAX_SP];
	int64_t in_size, out_size, k_size;  /* products of in, out, kernel */
};

/* Walking the output positions of one kernel tap kk: the positions are
 * rows along the last spatial dim (outer of them), each valid or wholly
 * in the padding; in a valid row, outputs [lo, hi) read input
 * off + j * stride (relative to the channel), the rest read padding. */
struct knn_walk {
	int64_t kc[KNN_MAX_SP], oc[KNN_MAX_SP];
	int64_t outer, lo, hi, base;
};

/* Along the last spatial dim, a kernel tap reading input b + j * stride
 * for output j (b = position * dilation - pad): the outputs [*lo, *hi)
 * whose input lies inside, the rest read padding (*lo == *hi: none). */
static inline void knn_tap_cols(const struct knn_geom *g, int64_t b, int64_t *lo,
				int64_t *hi)
{
	int l = g->nsp - 1;
	int64_t s = g->stride[l], in = g->in[l], ol = g->out[l];

	*lo = b >= 0 ? 0 : (-b + s - 1) / s;
	*hi = in - 1 - b < 0 ? 0 : (in - 1 - b) / s + 1;
	if (*lo > ol)
		*lo = ol;
	if (*hi > ol)
		*hi = ol;
	if (*hi < *lo)
		*hi = *lo;
}

static inline void knn_walk_init(struct knn_walk *w, const struct knn_geom *g,
				 int64_t kk)
{
	int l = g->nsp - 1;
	int64_t ol = g->out[l];

	for (int d = l; d >= 0; d--) {
		w->kc[d] = kk % g->kernel[d];
		kk /= g->kernel[d];
		w->oc[d] = 0;
	}
	w->outer = ol ? g->out_size / ol : 0;
	w->base = w->kc[l] * g->dil[l] - g->pad[l];
	knn_tap_cols(g, w->base, &w->lo, &w->hi);
}

/* The current row's input offset for output 0 (may be negative: only
 * [lo, hi) are read); 0 when the row lies in the padding. */
static inline int knn_walk_off(const struct knn_walk *w,
			       const struct knn_geom *g, int64_t *off)
{
	int l = g->nsp - 1;
	int64_t acc = 0;

	for (int d = 0; d < l; d++) {
		int64_t i = w->oc[d] * g->stride[d] - g->pad[d] +
			    w->kc[d] * g->dil[d];

		if (i < 0 || i >= g->in[d])
			return 0;
		acc = acc * g->in[d] + i;
	}
	*off = acc * g->in[l] + w->base;
	return 1;
}

static inline void knn_walk_next(struct knn_walk *w, const struct knn_geom *g)
{
	for (int d = g->nsp - 2; d >= 0; d--) {
		if (++w->oc[d] < g->out[d])
			return;
		w->oc[d] = 0;
	}
}

/* For each output along spatial dim d of a window geometry (a pool's):
 * the window's taps whose input lies inside, [lo[o], hi[o]) (lo and hi
 * may be NULL; an output with none gets [0, 0)), and their count n[o],
 * with the taps on the padding too when include_pad (an average pool's
 * count_include_pad; never past the end padding, which ceil_mode may
 * reach). */
void knn_window_taps(const struct knn_geom *g, int d, int include_pad,
		     int64_t *lo, int64_t *hi, int64_t *n);

/* Fill g from x (rank >= 3) and the node's strides, dilations, pads and
 * auto_pad attributes.  kernel: the window (NULL: the kernel_shape
 * attribute, then required).  flags: KNN_CEIL rounds the output size up
 * (pools' ceil_mode; windows starting in the end padding are dropped);
 * KNN_EMPTY_OK lets a window wider than the padded input give an empty
 * output (pools, as onnxruntime), else that is an error naming the dim. */
#define KNN_CEIL 1
#define KNN_EMPTY_OK 2
int knn_geom_init(struct rt_kctx *k, const struct rt_value *x,
		  const int64_t *kernel, int flags, struct knn_geom *g);
/* The products in_size, out_size, k_size from the dims. */
void knn_geom_sizes(struct knn_geom *g);

/* Conv's reading of W (m, c/group, k...): checks the channel counts
 * against x and group and fills g (kernel_shape, when given, must match
 * W).  Used by Conv, ConvInteger, QLinearConv. */
int knn_geom_conv(struct rt_kctx *k, const struct rt_value *x,
		  const struct rt_value *w, struct knn_geom *g);

/* Every element of a numeric tensor as double (malloc'd; free it). */
double *knn_load_f64(struct rt_kctx *k, const struct rt_value *t);
/* Store n doubles into t's data with t's dtype. */
void knn_store_f64(struct rt_value *t, const double *v);

/* Convolution y = conv(x, w) + b over geometry g: x (n, c, in...),
 * w (m, c/group, kernel...), b (m) or NULL, y (n, m, out...) written
 * whole.  Direct loops for depthwise, no im2col for 1x1, else im2col and
 * a matrix product; split over the session's threads.  0 or rt_oom(). */
/* A float32 convolution on the fastest path that takes it (oneDNN,
 * depthwise, channels in lanes, direct, packed GEMM, the generic core).
 * None transforms the operands, so x and w holding integers whose partial
 * sums stay below 2^24 in magnitude give their exact sums. 0 or a
 * negative status. */
int knn_conv_run_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		     const float *w, const float *b, float *y);
int knn_conv_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		 const float *w, const float *b, float *y);
int knn_conv_f64(struct rt_kctx *k, const struct knn_geom *g, const double *x,
		 const double *w, const double *b, double *y);

/* The same on oneDNN's convolution primitive (k_conv_dnnl.c) where it is
 * the faster path, the node's epilogue inside it or after it: 1 done, 0
 * not applicable (or oneDNN unavailable, or OPMIG_NO_DNNL set), or a
 * negative status. */
int knn_conv_dnnl_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		      const float *w, const float *b, float *y, unsigned cl);
/* cl: KNN_CL_SRC, x is stored channels last (then 0 is never returned:
 * a primitive that cannot be made gives way to the own core on a plain
 * copy); KNN_CL_DST, y (k->out[0]'s data) may be written channels last,
 * and is flagged so when it was (layout_cl.c). */
#define KNN_CL_SRC 1u
#define KNN_CL_DST 2u
/* An integer convolution's sums y (int32) = conv(x - xz, w - wz[m]) on
 * oneDNN's u8/s8 x s8 primitive, exact (int32 sums of VNNI products),
 * when the CPU has VNNI and 255 * sum |w - wz| of every output channel is
 * at most 2^24 (oneDNN takes each sum through float32); W's zero points other than 128 (uint8) or 0
 * (int8) through one more all-ones output channel, so only ungrouped
 * there: 1 done, 0 not taken, or a negative status.  x_dtype, w_dtype: IR_DTYPE_INT8 or UINT8; wz:
 * 1 or m zero points, or NULL. */
/* With q, the sums are requantized instead (QLinearConv: by oneDNN
 * itself where that is exact, else in one pass from oneDNN's output when
 * it writes channels last): q->y gets knn_requant_i32 of each channel's
 * sums plus q->bias, and y is unused.  q->dtype IR_DTYPE_FLOAT: q->y gets
 * float32 of each sum instead (ConvInteger and its Cast to float as one
 * unit, runtime/qdq.c; zp unused), plus bias[o] when bias is given
 * (the sum taken in int32: the caller bounds the two below 2^31 in
 * magnitude), times mult[0] when mult is given (the Mul by the layer's
 * scale after the Cast), or mult[o] with mult_pc (a DequantizeLinear
 * Conv's x_scale * w_scale[o], runtime/qdq.c), then q->epi's steps
 * (rt_epilogue_span) when given.  q->cl: KNN_CL_SRC, x
 * is stored channels last (layout_cl.c); KNN_CL_DST (8-bit codes only),
 * q->y (k->out[0]'s data) may be written channels last, and k->out[0] is
 * flagged so when it was. */
struct knn_dnnl_q8 {
	const float *mult;        /* per output channel */
	const int32_t *bias;      /* per output channel, or NULL */
	float zp;
	int dtype;                /* IR_DTYPE_INT8, UINT8 or FLOAT */
	void *y;                  /* NCHW, or NHWC (cl) */
	unsigned cl;              /* KNN_CL_SRC, KNN_CL_DST */
	const struct rt_epilogue *epi;   /* float32 only, or NULL */
	int mult_pc;              /* float32: mult has one per channel */
};
int knn_conv_dnnl_s32(struct rt_kctx *k, const struct knn_geom *g, const void *x, int x_dtype,
		      int32_t xz, const void *w, int w_dtype, const double *wz, int64_t nwz,
		      int w_const, int32_t *y, const struct knn_dnnl_q8 *q);
/* k_requant.c: one sum acc (bias included) requantized into element i
 * of data (8-bit or float8 dtype) with multiplier mult and zero point
 * zp; planes of len sums (plane p: channel p % nch of mult[] and bias[],
 * bias may be NULL) into y, float8 and multipliers that are not finite
 * a value at a time; a row of n sums, column c's multiplier mult[c];
 * rows of n sums into 8-bit codes, one multiplier (nmult 1) or mult[c]
 * for column c (nmult n). */
void knn_store_q(int dtype, void *data, int64_t i, double acc, float mult, double zp);
void knn_requant_planes(const int32_t *acc, int64_t planes, int64_t len, int64_t nch,
			const float *mult, const double *bias, double zp, struct rt_value *y);
void knn_requant_row(const int32_t *acc, int64_t n, const float *mult, float zp, int dtype,
		     void *out);
void knn_requant_block(const int32_t *acc, int64_t rows, int64_t n, const float *mult,
		       int64_t nmult, float zp, int dtype, void *out);
/* n int32 sums acc (+ bias) requantized into 8 bits as QLinearConv does
 * (k_requant.c): float32 (acc + bias) * mult rounded half to even, plus
 * zp, saturated into dtype (IR_DTYPE_INT8 or UINT8). */
void knn_requant_i32(const int32_t *acc, int64_t n, int32_t bias, float mult, float zp,
		     int dtype, void *out);
/* Whether integer convolutions run here on oneDNN's exact primitives
 * (knn_dnnl_int_ok): a QDQ unit of any window then pays (runtime/qdq.c). */
int knn_qconv_dnnl(void);
/* ConvInteger's kernel writing float32 of its sums (its Cast to float
 * done: a unit of runtime/qdq.c), bit for bit ConvInteger then Cast. */
int knn_conv_integer_f32(struct rt_kctx *k);
/* A Conv of DequantizeLinear inputs whose float32 result is no
 * QuantizeLinear's (a unit of runtime/qdq.c; QLinearConv's inputs 0 to 5
 * and its bias, input 8, when given): the exact sums plus the bias,
 * rounded to float32 once, times x_scale * w_scale[o] in float32, then
 * the node's epilogue. */
int knn_dq_conv_f32(struct rt_kctx *k);
/* The same of MatMulInteger (its Cast to float32, and the Mul by one
 * float32 scale, input 4, when given). */
int knn_matmul_integer_f32(struct rt_kctx *k);
/* The same for n pixels of m (at most KNN_PX_MAX) channels of sums,
 * channels last, a pixel's sums `stride` apart (acc[m] of a pixel: the
 * correction's window sums, times d[o], when d), channel o with its
 * bias[o] (bias may be NULL) and mult[o]: pixel i's m codes at out + i *
 * m.  The caller bounds every acc[o] + d[o] * acc[m] + bias[o] below
 * 2^31 in magnitude (the sum is taken in int32). */
#define KNN_PX_MAX 64
void knn_requant_px(const int32_t *acc, int64_t n, int64_t stride, int64_t m, const int32_t *d,
		    const int32_t *bias, const float *mult, float zp, int dtype, uint8_t *out);
/* oneDNN's integer convolutions can run here (and are exact). */
int knn_dnnl_int_ok(void);
/* float32 products smaller than this (multiply-adds) stay with sgemm
 * (k_matmul_pk.c, k_mm_dnnl_f32.c): a kept copy of B, or a primitive,
 * is not worth it there. */
#define KNN_MM_MIN_WORK (1 << 20)
/* A float32 product y (rows x n, row-major) = A * B (+ bias: n values, or
 * NULL), B (kd x n) input 1 of the node, element (s, j) at b[s * rs + j *
 * cs]; A(i, s) at a[i * lda + s] when a_rows, else a[s * lda + i]; nb
 * such products one after another in A (rows * kd apart, a_rows), B (kd
 * * n apart) and y (rows * n apart); b_const: B a model constant (nb 1). */
struct knn_mmf {
	int64_t rows, kd, n, lda, rs, cs, nb;
	int a_rows, b_const;
};
/* The product on oneDNN's matmul, kept in the node's cache with a
 * constant B in its layout (from the node's second run on): 1 done, 0 not
 * taken, or a negative status. */
int knn_mm_dnnl_f32(struct rt_kctx *k, const struct knn_mmf *g, const float *a,
		    const float *b, const float *bias, float *y);
/* MatMulInteger's sums y (int32, A's rows by N) = (a - az)(b - bz[n]) on
 * oneDNN's u8/s8 x s8 matmul, exact, when the CPU has VNNI, B is 2-D and
 * az one value (or absent): 1 done, 0 not taken, or a negative status.
 * bz: 1 or N zero points, or NULL. */
int knn_mm_dnnl_s32(struct rt_kctx *k, const struct rt_value *a, const struct rt_value *b,
		    const double *az, int64_t naz, const double *bz, int64_t nbz, int b_const,
		    int32_t *y);
/* The same sums handed to fn a block of rows at a time while they are in
 * cache (rows r0 .. r0 + rows - 1 of A's, N sums each), none kept: a
 * product whose consumer makes codes of them (QLinearMatMul's
 * requantization) reads them from cache instead of a tensor of int32
 * four times the codes' size.  1 done, 0 not taken, or a negative
 * status. */
typedef void (*knn_mm_sink)(void *ctx, int64_t r0, int64_t rows, const int32_t *sums);
int knn_mm_dnnl_s32_rows(struct rt_kctx *k, const struct rt_value *a, const struct rt_value *b,
			 const double *az, int64_t naz, const double *bz, int64_t nbz,
			 int b_const, knn_mm_sink fn, void *ctx);
/* oneDNN can be used in this process; primitives it has run so far
 * (and the integer ones among them); BatchNormalizations folded so far;
 * whether it may run integer primitives on AMX here (the CPU has it and
 * OPMIG_DNNL_AMX is not "0"); primitives made on AMX so far. */
int knn_dnnl_ok(void);
int64_t knn_dnnl_runs(void);
int64_t knn_dnnl_int_runs(void);
int64_t knn_dnnl_folds(void);
int knn_dnnl_amx_ok(void);
int64_t knn_dnnl_amx_made(void);

/* The same over pgemm.h's products with the weights packed once per
 * session (k_conv_pg.c) when W is a model constant, the convolution is
 * not depthwise and has few output positions (there OpenBLAS's copy of
 * the weights on every call costs as much as the product) or an input
 * matrix of 1 MiB or more (knn_conv_pg_wide: an im2col matrix never
 * built, its panels gathered from the image, or a 1x1 one's input read
 * in place): 1 done, 0 not applicable, or rt_oom(). */
#define KNN_PG_MAX_POSITIONS 64
#define KNN_PG_WIDE_MIN_COL (1 << 20)
static inline int knn_conv_pg_wide(const struct knn_geom *g)
{
	return g->out_size > KNN_PG_MAX_POSITIONS &&
	       g->c / g->group * g->k_size * g->out_size * (int64_t)sizeof(float) >=
	       KNN_PG_WIDE_MIN_COL;
}
/* Is g a 1x1 convolution of stride 1 without pads (its input is its
 * product's matrix)? */
static inline int knn_conv_pointwise(const struct knn_geom *g)
{
	for (int d = 0; d < g->nsp; d++)
		if (g->kernel[d] != 1 || g->stride[d] != 1 || g->pad[d] || g->pad[g->nsp + d])
			return 0;
	return 1;
}
int knn_conv_pg_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		    const float *w, const float *b, float *y);

/* The same computed directly on AVX-512, positions in the vector lanes
 * (k_conv_direct.c), for 2-D ungrouped convolutions with more than 64
 * output positions where that is the fastest path: 1 done, 0 not
 * applicable, or rt_oom(). */
int knn_conv_direct_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
			const float *w, const float *b, float *y);

/* The same computed directly on AVX-512, output channels in the vector
 * lanes (k_conv_cl.c), for 2-D ungrouped convolutions whose output rows
 * are short (14x14 and 7x7 planes): 1 done, 0 not applicable, or
 * rt_oom(). */
int knn_conv_cl_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		    const float *w, const float *b, float *y);

/* The input of a 2-D convolution as the direct kernels read it: padded
 * and split by the stride into phase planes, plane (py, px) of a channel
 * holding the padded input's rows py, py + sy, ... and columns px, px +
 * sx, ... (stride 1: one plane, the padded input; read in place when
 * there is no padding either).  Kernel tap (ky, kx) reads padded row
 * oy * sy + a (a = ky * dil) for output row oy, which is row oy + a / sy
 * of phase a % sy; so each step (channel, tap) is one plane and one
 * offset, and output (oy, ox) is read at the flattened position q = oy *
 * pw + ox of the step's plane (k_conv_phase.c).  Only the phases some tap
 * reads are copied. */
#define KNN_PHASE_MAX_STRIDE 4
/* The copy's layout: per channel, `phases` planes of ph x pw (chan floats). */
struct knn_phase {
	const struct knn_geom *g;
	int64_t sy, sx, ph, pw, plane, chan;
	int slot[KNN_PHASE_MAX_STRIDE * KNN_PHASE_MAX_STRIDE];  /* phase -> plane, -1 unread */
	int phases;
	int in_place;
};
void knn_phase_init(const struct knn_geom *g, struct knn_phase *l);
/* g's strides have phase planes and its copy's offsets fit 32 bits. */
int knn_phase_fits(const struct knn_geom *g);
/* One image x (c channels) as the offsets read it: copied into its phase
 * planes at xp (l->chan floats per channel, the padding as zeros, split
 * over the session's threads) and xp returned, or x itself when xp is
 * NULL (l->in_place: no copy was allocated). */
const float *knn_phase_image(struct rt_kctx *k, const struct knn_phase *l, const float *x,
			     float *xp);
/* Per step s (channel s / k_size, tap s % k_size) its offset in the copy. */
void knn_phase_offsets(const struct knn_phase *l, int32_t *off);

/* One direct product (an image of one group): output channel i at
 * flattened position q is the sum over steps s of w(i, s) * xp[q +
 * off[s]]; vector v of sixteen q keeps the lanes vmask[v], which go to
 * y + i * out_size + yoff[v] and on (dense: every q is kept and is the
 * output index).  Weights packed in tiles of KNN_DC_MR channels, each kd
 * steps of KNN_DC_MR floats.  Steps run in chunks of kc. */
#define KNN_DC_MR 6
#define KNN_DC_NV 4
struct knn_direct {
	const float *xp;          /* the input as the offsets read it */
	const float *pw;          /* packed weights */
	const float *b;           /* bias or NULL */
	float *y;
	const int32_t *off;
	const uint16_t *vmask;
	const int64_t *yoff;
	int64_t mg, kd, nq, kc, out_size;
	const struct rt_epilogue *epi;  /* done on each tile's output, or NULL */
	int64_t eoff;             /* y's first element in the epilogue's tensor */
	int in_place;             /* xp is the input itself: the last vector's
				   * dropped lanes may not be read */
	int dense;
	int failed;               /* scratch memory could not be had */
	int64_t tparts;           /* the channel tiles cut into this many
				   * parts, each block of positions an item
				   * per part (0: one) */
};
/* Blocks [lo, hi) of up to KNN_DC_NV vectors of positions (cut evenly)
 * against every channel tile (k_conv_dtile.c): an rt_range_fn.  With
 * tparts > 1, items [lo, hi) instead: item i is block i / tparts against
 * part i % tparts of the tiles. */
void knn_direct_blocks(void *ctx, int64_t lo, int64_t hi);
/* n items cut into parts of at most `most`, as even as they come: part
 * p's first item and *count. */
int64_t knn_direct_part(int64_t n, int64_t most, int64_t p, int64_t *count);

/* A max pool's fold of x into y: x when larger or NaN (a NaN once in y
 * stays), as every max pool kernel takes it. */
#define KNN_MAXIN(y, x) ((x) > (y) || (x) != (x) ? (x) : (y))

/* plane(g, x + p * in_size, y + p * out_size) for each of the n * c
 * float32 planes p, split over the session's threads (k_pool.c). */
typedef void (*knn_plane_fn)(const struct knn_geom *g, const float *x, float *y);
/* A large float32 1x1 convolution (ungrouped, stride 1, no pads) of x
 * stored channels last into a plain y, a product per image, the node's
 * epilogue steps after it (k_conv_cl1.c): 1 done, 0 not taken. */
int knn_conv_cl1_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		     const float *w, const float *b, float *y);
/* float32 MaxPool (1 to 3 spatial dims) of x stored channels last into
 * y, so too (k_pool_nhwc.c). */
void knn_maxpool_cl_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x, float *y);
/* float32 AveragePool (1 to 3 spatial dims) of x stored channels last
 * into y, so too: the taps inside in the window's order summed in
 * float32, divided by their count, or by the taps inside the pads with
 * include_pad (within the last bits of the plain layout's kernels, which
 * differ so among themselves) (k_pool_nhwc.c). */
void knn_avgpool_cl_f32(struct rt_kctx *k, const struct knn_geom *g, int include_pad,
			const float *x, float *y);
/* Whether it takes g's window (at most 64 taps). */
int knn_avgpool_cl_ok(const struct knn_geom *g);
/* The same over 8-bit codes (int8 when sgn, else uint8), each window
 * holding an input position (k_pool_nhwc.c). */
void knn_maxpool_cl_q8(struct rt_kctx *k, const struct knn_geom *g, const void *x, void *y,
		       int sgn);
void knn_for_planes(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		    float *y, knn_plane_fn plane);

/* float32 2-D max (avg 0) or average pooling of stride 1, undilated,
 * output as large as the input (pads below the kernel), separably over
 * whole planes (k_pool_same.c): 1 done, 0 not applicable, or rt_oom(). */
int knn_pool2d_same_f32(struct rt_kctx *k, const struct knn_geom *g, int avg,
			int include_pad, const float *x, float *y);

/* float32 2-D max pooling of stride 1, undilated, with windows of 25
 * taps or more, separably by doubling (k_pool_win.c): 1 done, 0 not
 * applicable, or rt_oom(). */
int knn_maxpool_win_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
			float *y);
/* float32 2-D max (avg 0) or average pooling of planes of at most 4096
 * positions, sixteen planes at a time in AVX-512 (k_pool_cb.c): 1 done,
 * 0 not applicable, or rt_oom(). */
int knn_pool2d_cb_f32(struct rt_kctx *k, const struct knn_geom *g, int avg,
		      int include_pad, const float *x, float *y);

/* A window's geometry as three spatial dims (depth, height, width): a
 * 2-D or 1-D one's missing leading dims of size 1, window 1, stride 1,
 * dilation 1, no pads; pb, pe the pads at the start and end (k_pool_nd.c). */
struct knn_geom3 {
	int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
};
void knn_geom3(const struct knn_geom *g, struct knn_geom3 *t);
/* The taps of output o along dim i: those inside the input (*inside),
 * and those inside the input or its pads (*padded: an average pool's
 * count with count_include_pad). */
void knn_geom3_taps(const struct knn_geom3 *t, int i, int64_t o, int64_t *inside,
		    int64_t *padded);

/* float32 max (avg 0) or average pooling of 1 to 3 spatial dims in the
 * plain layout, an output row at a time, each output's taps in the
 * window's order (the average's sum in double): the generic double
 * path's values (k_pool_nd.c).  1 done, 0 not applicable. */
int knn_pool_nd_f32(struct rt_kctx *k, const struct knn_geom *g, int avg, int include_pad,
		    const float *x, float *y);
/* GlobalMaxPool's float32 maximum of n > 0 values: a value replaces the
 * maximum so far when greater (a NaN only as the first), in AVX-512
 * where it has it (k_pool_nd.c). */
float knn_gmax_f32(const float *x, int64_t n);

/* float32 3x3 max (avg 0) or average pools of stride 1 and pads of one
 * on planes 14 to 32 wide, a plane at a time in AVX-512, separably
 * (k_pool_s1.c): 1 done, 0 not applicable, or rt_oom(). */
int knn_pool3_s1_f32(struct rt_kctx *k, const struct knn_geom *g, int avg,
		     int include_pad, const float *x, float *y);

/* Sixteen float32 planes of n positions at src (plane stride ls), nv of
 * them real, as buf (n x 16: position i's sixteen channels at buf + 16 i;
 * lanes nv.. zero), and the inverse: nv planes of n positions at dst
 * (plane stride ld) from buf.  AVX-512 block transposes when nv is 16
 * (k_pool_cb.c; callers check rt_cpu_avx512f()). */
void knn_cb_in(const float *src, int64_t ls, int nv, int64_t n, float *buf);
void knn_cb_out(const float *buf, int nv, int64_t n, float *dst, int64_t ld);

/* float32 2-D depthwise convolutions (group = channels = outputs) sixteen
 * planes at a time in AVX-512, channels in the vector lanes
 * (k_conv_dw.c): 1 done, 0 not applicable, or rt_oom(). */
int knn_conv_dw_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		    const float *w, const float *b, float *y);
/* Its stride-1 windows of 9 taps or more on x stored channels last, y
 * written so (cl both KNN_CL_SRC and KNN_CL_DST) and flagged
 * (rt_cl_set), the node's epilogue up to its first tensor step in
 * registers (k_conv_dwc.c): 1 done, 0 not applicable (oneDNN's then), or
 * rt_oom(). */
int knn_conv_dw_cl_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		       const float *w, const float *b, float *y, unsigned cl);
/* The convolutions it has done in this process (the tests) */
int64_t knn_conv_dwc_runs(void);
/* Its stride-1 large planes a plane at a time, positions in the lanes,
 * the epilogue epi (taken by the caller, no RT_CHAIN_ADDT: may be NULL)
 * in registers (k_conv_dwp.c): 1 done or rt_oom(). */
int knn_conv_dwp_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		     const float *w, const float *b, float *y,
		     const struct rt_epilogue *epi);

/* Its stride-1 planes whose output is as large as the input (knn_dwf_fits)
 * a plane at a time, flattened, read and written in place, the epilogue
 * epi as knn_conv_dwp_f32's (k_conv_dwf.c): 1 done or rt_oom(). */
int knn_dwf_fits(const struct knn_geom *g);
int knn_conv_dwf_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		     const float *w, const float *b, float *y,
		     const struct rt_epilogue *epi);

/* float32 2-D max pooling of column stride 2, windows 2 or 3 columns
 * wide, undilated, on AVX-512 CPUs (k_pool_s2.c): 1 done, 0 not
 * applicable. */
int knn_max2d_s2_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		     float *y);

/* What a float32 convolution keeps in its node's cache (rt_node_cache):
 * each fast path's struct starts with this header, so one path never
 * reads another's (a node whose input sizes change between runs may
 * switch paths). */
enum { KNN_WC_PGEMM = 1, KNN_WC_PGEMMW, KNN_WC_DIRECT, KNN_WC_CL,
       KNN_WC_CL4, KNN_WC_MATMUL, KNN_WC_DNNL, KNN_WC_DNNL_MM, KNN_WC_DNNL_MMF,
       KNN_WC_DNNL_RNN, KNN_WC_RPACK, KNN_WC_DWC };
struct knn_wcache {
	int kind;
	const void *w;            /* the W data it was made from */
};

/* The node's cache when it is of this kind and made from w, else NULL. */
static inline void *knn_wcache_get(struct rt_kctx *k, int kind, const void *w)
{
	struct knn_wcache *h = rt_node_cache(k);

	return h && h->kind == kind && h->w == w ? h : NULL;
}

/* Weights derived from W for a fast path (k_conv_wcache.c): len floats,
 * 64-byte aligned, written by the path's fill function. */
struct knn_wderived {
	struct knn_wcache h;
	int64_t len;
	float *data;
};
typedef void (*knn_wfill_fn)(const struct knn_geom *g, const float *w, int kind,
			     float *dst);
/* The node's cached derived weights of this kind made from w; else made
 * now, and cached when W (input 1) is a model constant and the node's
 * cache is free, else handed over in *tmp (the caller frees it with
 * knn_wderived_free).  NULL when memory ran out. */
const struct knn_wderived *knn_wderived_get(struct rt_kctx *k, int kind,
					    const struct knn_geom *g, const float *w,
					    int64_t len, knn_wfill_fn fill,
					    struct knn_wderived **tmp);
void knn_wderived_free(void *p);
/* The same with any fill function: fill(ctx, w, data) (a MatMul's packed
 * B, k_matmul_pk.c); with a key (rt_int.h; else NULL), the cache it
 * keeps is offered to the session's other nodes of that key (the caller
 * takes one another node made first: rt_node_cache_shared). */
typedef void (*knn_wmake_fn)(const void *ctx, const float *w, float *dst);
const struct knn_wderived *knn_wderived_make(struct rt_kctx *k, int kind, const float *w,
					     int64_t len, knn_wmake_fn fill, const void *ctx,
					     const struct rt_share_key *key,
					     struct knn_wderived **tmp);

/* Transposed convolution: g describes the forward convolution whose input
 * is y (n, m, in...) and whose output is x (n, c, out...); w is
 * (c, m/group, kernel...).  y is written whole. */
int knn_convt_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		  const float *w, const float *b, float *y);
int knn_convt_f64(struct rt_kctx *k, const struct knn_geom *g, const double *x,
		  const double *w, const double *b, double *y);

/* Rearrangements over geometry g for n_ch channels: im2col writes
 * col (n_ch * k_size rows of out_size), col2im adds col into img. */
void knn_im2col_f64(const struct knn_geom *g, const double *img, int64_t n_ch,
		    double *col);
/* The float32 im2col of rows [lo, hi) of the n_ch * k_size rows, ld
 * apart (out_size: one image's matrix). */
void knn_im2col_f32(const struct knn_geom *g, const float *img, int64_t lo,
		    int64_t hi, float *col, int64_t ld);
void knn_col2im_f64(const struct knn_geom *g, const double *col, int64_t n_ch,
		    double *img);


/* ---- batched matrix products (k_matmul.c) ---------------------------- */

/* numpy matmul of a and b: 1-D operands promoted and their dim dropped,
 * batch dims broadcast.  a_off/b_off: each batch's element offset of its
 * m x kd and kd x n matrices (malloc'd: knn_mm_release). */
struct knn_mm {
	int rank;
	int64_t dims[RT_MAX_RANK];        /* output shape */
	int64_t m, n, kd, n_batch;
	int64_t *a_off, *b_off;
};

int knn_mm_init(struct rt_kctx *k, const struct rt_value *a,
		const struct rt_value *b, struct knn_mm *p);
void knn_mm_release(struct knn_mm *p);
/* y (n_batch * m * n) = a @ b per batch, float32 or double. */
void knn_mm_f32(struct rt_kctx *k, const struct knn_mm *p, const float *a,
		const float *b, float *y);
void knn_mm_f64(struct rt_kctx *k, const struct knn_mm *p, const double *a,
		const double *b, double *y);
/* MatMul's float32 product on the AVX-512 kernel of pgemm.h with B
 * packed once and kept from the node's second run, when B is a 2-D model
 * constant shared by every batch (k_matmul_pk.c): 1 when done, 0 when
 * not taken (the caller runs knn_mm_f32), or a negative status. */
int knn_mm_packed_f32(struct rt_kctx *k, const struct knn_mm *p, const float *a,
		      const float *b, float *y);
/* MatMul's float32 batched products of two activations on oneDNN
 * (k_mm_dnnl_f32.c) when A's and B's batches lie one after another: the
 * same returns. */
int knn_mm_batched_f32(struct rt_kctx *k, const struct knn_mm *p, const float *a,
		       const float *b, float *y);
/* The same for Gemm with alpha 1: y (m x n) = op(A) * op(B) + bias (n
 * values: C of one row with beta 1, or NULL). */
int knn_gemm_packed_f32(struct rt_kctx *k, int ta, int tb, int64_t m, int64_t n,
			int64_t kd, const float *a, const float *b, const float *bias,
			float *y);

#endif
