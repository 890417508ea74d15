/* k_conv_dw.c: float32 2-D depthwise convolutions (group = input
 * channels = output channels: MobileNet's and ShuffleNet's) sixteen
 * planes at a time in AVX-512, the channels in the vector lanes.  A
 * band of input rows goes, by 16 x 16 block transposes (knn_cb_in), into
 * a zero-padded buffer of one sixteen-float vector per position, so that
 * every tap of every output is one aligned load, whatever the plane's
 * width, stride, dilation or pads; the outputs go back plane by plane
 * (knn_cb_out).  The plane loops of k_conv_tmpl.h fill a vector with
 * positions of one plane instead, which leaves most lanes idle, and
 * their edges scalar, on the 14 x 14 and 7 x 7 planes of these nets.
 *
 * Each output is its bias, then the taps added row by row, left to right
 * (fused multiply-adds), then the node's epilogue steps
 * (k_conv_epi512.h) while it is in a register. */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_epi512.h"
#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/pgemm.h"

/* Positions of padded input a band may hold: 192 KiB of vectors, in L2
 * with the band's outputs */
#define DW_BAND_POSITIONS 3072
/* Outputs computed side by side */
#define DW_RUN 8
/* Unstrided outputs above this many positions go a plane at a time
 * (k_conv_dwp.c): MobileNetV2's 28x28 layers 0.24 -> 0.16 ms that way,
 * its 14x14 ones 0.42 -> 0.45 ms (bench/README.md) */
#define DW_PLANE_LOOPS 256
/* Taps a kernel may have (the weights of a block stay in L1) */
#define DW_MAX_TAPS 1024

struct dw_job {
	const struct knn_geom *g;
	const float *x, *w, *b;
	float *y;
	const struct rt_epilogue *epi;
	const int64_t *toff;      /* per tap: its offset in the band (floats) */
	int64_t planes;           /* n * c */
	int64_t pw;               /* padded row: positions */
	int64_t band;             /* output rows per band */
	int64_t rows;             /* input rows under a band */
	int failed;
};

/* Per block of sixteen planes: weights (taps x 16), bias, and the
 * epilogue's coefficients (steps x 2 x 16), lane l of plane p0 + l. */
struct dw_coef {
	float *wv, *bv, *ev;
};

static void dw_coef_fill(const struct dw_job *j, int64_t p0, int nv, struct dw_coef *c)
{
	int64_t ch_n = j->g->c, kk = j->g->k_size;

	for (int l = 0, ch = (int)(p0 % ch_n); l < 16; l++, ch = ch + 1 == ch_n ? 0 : ch + 1) {

		for (int64_t t = 0; t < kk; t++)
			c->wv[t * 16 + l] = l < nv ? j->w[ch * kk + t] : 0.0f;
		c->bv[l] = l < nv && j->b ? j->b[ch] : 0.0f;
		for (size_t s = 0; j->epi && s < j->epi->n; s++) {
			const float *co = j->epi->coef + 2 * j->epi->c * (int64_t)s;

			c->ev[(2 * s) * 16 + l] = l < nv ? co[ch] : 0.0f;
			c->ev[(2 * s + 1) * 16 + l] = l < nv ? co[j->epi->c + ch] : 0.0f;
		}
	}
}

/* Input rows h_lo .. h_lo + nrows - 1 of sixteen planes (plane p0 on) into
 * buf, row r at buf + r * pw * 16, column j at (pl + j) * 16; rows and
 * columns outside the input are zero.  tmp: room for the rows' positions
 * when the plane is narrower than a transpose. */
static void dw_band_in(const struct dw_job *j, int64_t p0, int nv, int64_t h_lo,
		       int64_t nrows, float *buf, float *tmp)
{
	const struct knn_geom *g = j->g;
	int64_t ih = g->in[0], iw = g->in[1], pl = g->pad[1], pw = j->pw;
	int64_t ncopy = pw - pl < iw ? pw - pl : iw;
	int64_t vlo = h_lo < 0 ? 0 : h_lo, vhi = h_lo + nrows < ih ? h_lo + nrows : ih;
	const float *src = j->x + p0 * g->in_size;

	if (ncopy < 0)
		ncopy = 0;
	/* narrow planes: the valid rows' positions in one flat transpose */
	if (iw < 16 && vhi > vlo)
		knn_cb_in(src + vlo * iw, g->in_size, nv, (vhi - vlo) * iw, tmp);
	for (int64_t r = 0; r < nrows; r++) {
		int64_t h = h_lo + r;
		float *row = buf + r * pw * 16;

		if (h < 0 || h >= ih || !ncopy) {
			memset(row, 0, (size_t)(pw * 16) * sizeof(float));
			continue;
		}
		memset(row, 0, (size_t)(pl * 16) * sizeof(float));
		if (iw < 16)
			memcpy(row + pl * 16, tmp + (h - vlo) * iw * 16,
			       (size_t)(ncopy * 16) * sizeof(float));
		else
			knn_cb_in(src + h * iw, g->in_size, nv, ncopy, row + pl * 16);
		memset(row + (pl + ncopy) * 16, 0, (size_t)((pw - pl - ncopy) * 16) * sizeof(float));
	}
}

/* n (1 .. DW_RUN) outputs from flat band output q on (outputs of the
 * band's rows, ow to a row; q is at row rc[0], column rc[1], which move
 * on past the run) into out + q * 16: each one its bias, the taps in
 * order, the epilogue.  kk may be a constant (3 x 3) for unrolling. */
__attribute__((target("avx512f"), always_inline))
static inline void dw_run(const struct dw_job *j, const struct dw_coef *c, const float *buf,
			  int64_t q, const int n, const int64_t kk, int64_t *rc, float *out)
{
	const struct knn_geom *g = j->g;
	int64_t ow = g->out[1], sh = g->stride[0] * j->pw * 16, sw = g->stride[1] * 16;
	int64_t r = rc[0], col = rc[1];
	const float *base[DW_RUN];
	__m512 acc[DW_RUN], bv = _mm512_load_ps(c->bv);

#pragma GCC unroll 8
	for (int i = 0; i < n; i++) {
		base[i] = buf + r * sh + col * sw;
		acc[i] = bv;
		if (++col == ow) {
			col = 0;
			r++;
		}
	}
	rc[0] = r;
	rc[1] = col;
#pragma GCC unroll 9
	for (int64_t t = 0; t < kk; t++) {
		__m512 wv = _mm512_load_ps(c->wv + t * 16);
		int64_t o = j->toff[t];

#pragma GCC unroll 8
		for (int i = 0; i < n; i++)
			acc[i] = _mm512_fmadd_ps(wv, _mm512_load_ps(base[i] + o), acc[i]);
	}
	knn_epi512_head(j->epi, n, acc);
	for (size_t s = 0; j->epi && s < j->epi->n; s++) {
		__m512 m = _mm512_load_ps(c->ev + 2 * s * 16);
		__m512 a = _mm512_load_ps(c->ev + (2 * s + 1) * 16);

#pragma GCC unroll 8
		for (int i = 0; i < n; i++)
			acc[i] = knn_epi512_rstep(j->epi->kind[s], acc[i], m, a, j->epi->round);
	}
#pragma GCC unroll 8
	for (int i = 0; i < n; i++)
		_mm512_store_ps(out + (q + i) * 16, acc[i]);
}

#define DW_RUNS(kk) \
	do { \
		for (; q + DW_RUN <= nq; q += DW_RUN) \
			dw_run(j, c, buf, q, DW_RUN, kk, rc, out); \
		switch (nq - q) { \
		case 7: dw_run(j, c, buf, q, 7, kk, rc, out); break; \
		case 6: dw_run(j, c, buf, q, 6, kk, rc, out); break; \
		case 5: dw_run(j, c, buf, q, 5, kk, rc, out); break; \
		case 4: dw_run(j, c, buf, q, 4, kk, rc, out); break; \
		case 3: dw_run(j, c, buf, q, 3, kk, rc, out); break; \
		case 2: dw_run(j, c, buf, q, 2, kk, rc, out); break; \
		case 1: dw_run(j, c, buf, q, 1, kk, rc, out); break; \
		default: break; \
		} \
	} while (0)

/* The nq outputs of a band. */
__attribute__((target("avx512f")))
static void dw_band(const struct dw_job *j, const struct dw_coef *c, const float *buf,
		    int64_t nq, float *out)
{
	int64_t q = 0, rc[2] = { 0, 0 };

	if (j->g->k_size == 9)
		DW_RUNS(9);
	else
		DW_RUNS(j->g->k_size);
}

/* Blocks [lo, hi) of sixteen planes. */
static void dw_blocks(void *ctx, int64_t lo, int64_t hi)
{
	struct dw_job *j = ctx;
	const struct knn_geom *g = j->g;
	int64_t oh = g->out[0], ow = g->out[1], steps = j->epi ? (int64_t)j->epi->n : 0;
	size_t nbuf = (size_t)(j->rows * j->pw * 16), nout = (size_t)(j->band * ow * 16);
	size_t ntmp = g->in[1] < 16 ? (size_t)(j->rows * g->in[1] * 16) : 0;
	size_t ncoef = (size_t)((g->k_size + 1 + 2 * steps) * 16);
	float *mem = aligned_alloc(64, (nbuf + nout + ntmp + ncoef) * sizeof(float));
	float *buf = mem, *out = buf + nbuf, *tmp = out + nout;
	struct dw_coef c;

	if (!mem) {
		j->failed = 1;
		return;
	}
	c.wv = tmp + ntmp;
	c.bv = c.wv + g->k_size * 16;
	c.ev = c.bv + 16;
	for (int64_t gr = lo; gr < hi; gr++) {
		int64_t p0 = gr * 16;
		int nv = (int)(j->planes - p0 < 16 ? j->planes - p0 : 16);

		dw_coef_fill(j, p0, nv, &c);
		for (int64_t a0 = 0; a0 < oh; a0 += j->band) {
			int64_t a1 = a0 + j->band < oh ? a0 + j->band : oh;
			int64_t h_lo = a0 * g->stride[0] - g->pad[0];
			int64_t nrows = (a1 - 1 - a0) * g->stride[0] + (g->kernel[0] - 1) * g->dil[0] + 1;

			dw_band_in(j, p0, nv, h_lo, nrows, buf, tmp);
			dw_band(j, &c, buf, (a1 - a0) * ow, out);
			knn_cb_out(out, nv, (a1 - a0) * ow, j->y + p0 * g->out_size + a0 * ow,
				   g->out_size);
		}
	}
	free(mem);
}

int knn_conv_dw_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		    const float *w, const float *b, float *y)
{
	struct dw_job j = { .g = g, .x = x, .w = w, .b = b, .y = y, .planes = g->n * g->c };
	int64_t span, *toff;

	if (g->nsp != 2 || g->group != g->c || g->m != g->c ||
	    g->k_size > DW_MAX_TAPS || g->out_size < 1 || !rt_pgemm_ok())
		return 0;
	/* unstrided planes as large as their output: flattened, positions in
	 * the lanes, in place (k_conv_dwf.c) */
	if (knn_dwf_fits(g))
		return knn_conv_dwf_f32(k, g, x, w, b, y, rt_kctx_epilogue(k, k->out[0], 0));
	/* unstrided planes above 16 x 16: positions in the lanes fill them,
	 * and the transposes would cost more than the edges (bench/README.md) */
	if (g->stride[0] == 1 && g->stride[1] == 1 && g->out_size > DW_PLANE_LOOPS)
		return knn_conv_dwp_f32(k, g, x, w, b, y, rt_kctx_epilogue(k, k->out[0], 0));
	j.pw = (g->out[1] - 1) * g->stride[1] + (g->kernel[1] - 1) * g->dil[1] + 1;
	span = (g->kernel[0] - 1) * g->dil[0] + 1;
	/* the most output rows whose input rows fit the band, at least one */
	j.band = (DW_BAND_POSITIONS / j.pw - span) / g->stride[0] + 1;
	if (j.band < 1)
		j.band = 1;
	if (j.band > g->out[0])
		j.band = g->out[0];
	j.rows = (j.band - 1) * g->stride[0] + span;
	if (!(toff = malloc((size_t)g->k_size * sizeof(*toff))))
		return rt_oom(k);
	for (int64_t u = 0; u < g->kernel[0]; u++)
		for (int64_t v = 0; v < g->kernel[1]; v++)
			toff[u * g->kernel[1] + v] = (u * g->dil[0] * j.pw + v * g->dil[1]) * 16;
	j.toff = toff;
	/* the steps after the convolution, done on each output as it is made
	 * (up to a residual Add: its operand's lanes would be a gather) */
	j.epi = rt_kctx_epilogue(k, k->out[0], 0);
	rt_parallel_for(k, (j.planes + 15) / 16, 1, dw_blocks, &j);
	free(toff);
	return j.failed ? rt_oom(k) : 1;
}
