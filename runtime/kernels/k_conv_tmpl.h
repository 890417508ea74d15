/* k_conv_tmpl.h: the convolution cores for one element type, included by
 * k_conv_core.c once per type with KNN_T (float, double) and KNN_SFX
 * (f32, f64) defined: im2col/col2im, depthwise and 1x1 direct loops,
 * Conv and ConvTranspose over a matrix product, split over threads. */
#define KNN_CAT3(a, b) a##_##b
#define KNN_CAT2(a, b) KNN_CAT3(a, b)
#define FN(name) KNN_CAT2(name, KNN_SFX)
#define GEMM_PAR KNN_CAT2(rt_gemm, KNN_CAT2(KNN_SFX, par))

/* An im2col row of a 2-D stride-1 geometry whose output rows are as wide
 * as the input's (3x3 pad 1, 1x1...): output (a, j) of tap (u, v) reads
 * input (a + sh, j + sv), so the valid rows are one shifted copy of the
 * flattened plane; then the rows and columns reading padding (the copy
 * wrapped them to the neighbouring row) are zeroed. */
static void FN(im2col_row_flat)(const struct knn_geom *g, const KNN_T *xc,
				int64_t kk, KNN_T *dst)
{
	int64_t ih = g->in[0], w = g->in[1], oh = g->out[0];
	int64_t sh = (kk / g->kernel[1]) * g->dil[0] - g->pad[0];
	int64_t sv = (kk % g->kernel[1]) * g->dil[1] - g->pad[1];
	int64_t alo = sh < 0 ? -sh : 0, ahi = ih - sh < oh ? ih - sh : oh;
	int64_t jlo = sv < 0 ? -sv : 0, jhi = w - sv < w ? w - sv : w;

	if (alo >= ahi || jlo >= jhi) {
		memset(dst, 0, (size_t)(oh * w) * sizeof(KNN_T));
		return;
	}
	memset(dst, 0, (size_t)(alo * w) * sizeof(KNN_T));
	memset(dst + ahi * w, 0, (size_t)((oh - ahi) * w) * sizeof(KNN_T));
	memcpy(dst + alo * w + jlo, xc + (alo + sh) * w + jlo + sv,
	       (size_t)((ahi - 1 - alo) * w + jhi - jlo) * sizeof(KNN_T));
	for (int64_t a = alo; a < ahi; a++) {
		for (int64_t j = 0; j < jlo; j++)
			dst[a * w + j] = 0;
		for (int64_t j = jhi; j < w; j++)
			dst[a * w + j] = 0;
	}
}

/* One im2col row: channel row / k_size, kernel position row % k_size,
 * over every output position. */
static void FN(im2col_row)(const struct knn_geom *g, const KNN_T *img,
			   int64_t row, KNN_T *dst)
{
	struct knn_walk w;
	const KNN_T *xc = img + (row / g->k_size) * g->in_size;
	int64_t ol = g->out[g->nsp - 1], s = g->stride[g->nsp - 1];

	if (g->nsp == 2 && g->stride[0] == 1 && s == 1 && ol == g->in[1]) {
		FN(im2col_row_flat)(g, xc, row % g->k_size, dst);
		return;
	}
	knn_walk_init(&w, g, row % g->k_size);
	for (int64_t o = 0; o < w.outer; o++, dst += ol) {
		int64_t off, j = 0;

		if (knn_walk_off(&w, g, &off)) {
			for (; j < w.lo; j++)
				dst[j] = 0;
			if (s == 1)
				for (; j < w.hi; j++)
					dst[j] = xc[off + j];
			else if (s == 2)   /* a constant stride vectorizes */
				for (; j < w.hi; j++)
					dst[j] = xc[off + j * 2];
			else
				for (; j < w.hi; j++)
					dst[j] = xc[off + j * s];
		}
		for (; j < ol; j++)
			dst[j] = 0;
		knn_walk_next(&w, g);
	}
}

/* Add one col row back into the image (the inverse placement). */
static void FN(col2im_row)(const struct knn_geom *g, const KNN_T *src,
			   int64_t row, KNN_T *img)
{
	struct knn_walk w;
	KNN_T *xc = img + (row / g->k_size) * g->in_size;
	int64_t ol = g->out[g->nsp - 1], s = g->stride[g->nsp - 1];

	knn_walk_init(&w, g, row % g->k_size);
	for (int64_t o = 0; o < w.outer; o++, src += ol) {
		int64_t off;

		if (knn_walk_off(&w, g, &off))
			for (int64_t j = w.lo; j < w.hi; j++)
				xc[off + j * s] += src[j];
		knn_walk_next(&w, g);
	}
}

struct FN(rows) {
	const struct knn_geom *g;
	const KNN_T *src;
	KNN_T *dst;
};

static void FN(im2col_rows)(void *ctx, int64_t lo, int64_t hi)
{
	const struct FN(rows) *r = ctx;

	for (int64_t i = lo; i < hi; i++)
		FN(im2col_row)(r->g, r->src, i, r->dst + i * r->g->out_size);
}

/* Channels [lo, hi): their rows write disjoint image planes. */
static void FN(col2im_chans)(void *ctx, int64_t lo, int64_t hi)
{
	const struct FN(rows) *r = ctx;
	int64_t ks = r->g->k_size;

	for (int64_t i = lo * ks; i < hi * ks; i++)
		FN(col2im_row)(r->g, r->src + i * r->g->out_size, i, r->dst);
}

struct FN(job) {
	struct rt_kctx *k;
	const struct knn_geom *g;
	const KNN_T *x, *w, *b;
	KNN_T *y;
	int direct, failed;
};

/* y[j] += a * x[j * s] for j < n; the unit stride on its own loop so
 * the compiler vectorizes it. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void FN(axpy)(KNN_T *restrict y, const KNN_T *restrict x, int64_t s,
		     int64_t n, KNN_T a)
{
	if (s == 1)
		for (int64_t j = 0; j < n; j++)
			y[j] += a * x[j];
	else
		for (int64_t j = 0; j < n; j++)
			y[j] += a * x[j * s];
}

/* n outputs of a 3x3 depthwise row whose 9 taps are all inside: output
 * j reads rows r0, r1, r2 at columns j * sw + base[0..2].  The strides 1
 * and 2 get loops of their own, with the tap columns as pointers, so the
 * compiler vectorizes them (the stride-2 loads as even-lane shuffles). */
static inline void FN(dw3_cols)(KNN_T *restrict y, const KNN_T *r0,
				const KNN_T *r1, const KNN_T *r2,
				const int64_t *base, const KNN_T *restrict w,
				KNN_T bias, int64_t n, int64_t sw)
{
	const KNN_T *a0 = r0 + base[0], *a1 = r0 + base[1], *a2 = r0 + base[2];
	const KNN_T *b0 = r1 + base[0], *b1 = r1 + base[1], *b2 = r1 + base[2];
	const KNN_T *c0 = r2 + base[0], *c1 = r2 + base[1], *c2 = r2 + base[2];
	KNN_T w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4];
	KNN_T w5 = w[5], w6 = w[6], w7 = w[7], w8 = w[8];

#define DW3_LOOP(S) \
	for (int64_t j = 0; j < n; j++) \
		y[j] = bias + w0 * a0[j * (S)] + w1 * a1[j * (S)] + \
		       w2 * a2[j * (S)] + w3 * b0[j * (S)] + w4 * b1[j * (S)] + \
		       w5 * b2[j * (S)] + w6 * c0[j * (S)] + w7 * c1[j * (S)] + \
		       w8 * c2[j * (S)]
	if (sw == 1)
		DW3_LOOP(1);
	else if (sw == 2)
		DW3_LOOP(2);
	else
		DW3_LOOP(sw);
#undef DW3_LOOP
}

/* One output (a, j) of a 3x3 stride-1 pad-1 depthwise plane of ih x iw,
 * the taps outside the input skipped. */
static inline KNN_T FN(dw3s1_at)(const KNN_T *x, const KNN_T *w, KNN_T bias,
				 int64_t ih, int64_t iw, int64_t a, int64_t j)
{
	KNN_T acc = bias;

	for (int64_t u = 0; u < 3; u++) {
		int64_t h = a + u - 1;

		if (h < 0 || h >= ih)
			continue;
		for (int64_t v = 0; v < 3; v++) {
			int64_t c = j + v - 1;

			if (c >= 0 && c < iw)
				acc += w[u * 3 + v] * x[h * iw + c];
		}
	}
	return acc;
}

/* A 3x3 stride-1 pad-1 depthwise plane (output ih x iw, ih >= 3,
 * iw >= 2) as one loop over the flattened rows 1 to ih - 2: output t
 * reads x[t + (u - 1) * iw + v - 1], right except in the first and last
 * columns (which wrap to the neighbouring row) and the first and last
 * rows (no row above, below); those are redone with their inside taps
 * only, the corners tap by tap. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void FN(dw3s1_plane)(const KNN_T *restrict x, const KNN_T *restrict w,
			    KNN_T bias, int64_t ih, int64_t iw,
			    KNN_T *restrict y)
{
	int64_t t0 = iw + 1, n = (ih - 1) * iw - 1 - t0;
	const KNN_T *r0 = x + t0 - iw - 1, *r1 = x + t0 - 1, *r2 = x + t0 + iw - 1;
	int64_t base[3] = { 0, 1, 2 };

	KNN_T w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4];
	KNN_T w5 = w[5], w6 = w[6], w7 = w[7], w8 = w[8];
	const KNN_T *xb = x + (ih - 2) * iw;
	KNN_T *yb = y + (ih - 1) * iw;

	FN(dw3_cols)(y + t0, r0, r1, r2, base, w, bias, n, 1);
	/* first and last rows: two tap rows each */
	for (int64_t j = 1; j < iw - 1; j++) {
		y[j] = bias + w3 * x[j - 1] + w4 * x[j] + w5 * x[j + 1] +
		       w6 * x[iw + j - 1] + w7 * x[iw + j] + w8 * x[iw + j + 1];
		yb[j] = bias + w0 * xb[j - 1] + w1 * xb[j] + w2 * xb[j + 1] +
			w3 * xb[iw + j - 1] + w4 * xb[iw + j] + w5 * xb[iw + j + 1];
	}
	/* first and last columns: two tap columns each */
	for (int64_t a = 1; a < ih - 1; a++) {
		const KNN_T *p = x + (a - 1) * iw, *q = p + iw - 2;

		y[a * iw] = bias + w1 * p[0] + w2 * p[1] + w4 * p[iw] +
			    w5 * p[iw + 1] + w7 * p[2 * iw] + w8 * p[2 * iw + 1];
		y[a * iw + iw - 1] = bias + w0 * q[0] + w1 * q[1] + w3 * q[iw] +
				     w4 * q[iw + 1] + w6 * q[2 * iw] + w7 * q[2 * iw + 1];
	}
	y[0] = FN(dw3s1_at)(x, w, bias, ih, iw, 0, 0);
	y[iw - 1] = FN(dw3s1_at)(x, w, bias, ih, iw, 0, iw - 1);
	yb[0] = FN(dw3s1_at)(x, w, bias, ih, iw, ih - 1, 0);
	yb[iw - 1] = FN(dw3s1_at)(x, w, bias, ih, iw, ih - 1, iw - 1);
}

/* Does g take the 3x3 stride-2 pad-1 plane below: even input sides, the
 * output half of each (end pads 0 or 1), at least 2 x 2? */
static int FN(dw3s2_fits)(const struct knn_geom *g)
{
	return g->nsp == 2 && g->kernel[0] == 3 && g->kernel[1] == 3 &&
	       g->stride[0] == 2 && g->stride[1] == 2 && g->dil[0] == 1 &&
	       g->dil[1] == 1 && g->pad[0] == 1 && g->pad[1] == 1 &&
	       g->in[0] % 2 == 0 && g->in[1] % 2 == 0 &&
	       g->out[0] == g->in[0] / 2 && g->out[1] == g->in[1] / 2 &&
	       g->out[0] >= 2 && g->out[1] >= 2;
}

/* A 3x3 stride-2 pad-1 depthwise plane (input 2oh x 2ow): the input is
 * split into its four (row, column) parity planes of oh x ow in tmp
 * (4 * oh * ow elements), where every tap of output t = a * ow + j is at
 * t, t - 1, t - ow or t - ow - 1 of one plane: one loop over the
 * flattened output, then the first row and column (whose taps above or
 * left are padding) redone. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void FN(dw3s2_plane)(const KNN_T *restrict x, const KNN_T *restrict w,
			    KNN_T bias, int64_t oh, int64_t ow,
			    KNN_T *restrict tmp, KNN_T *restrict y)
{
	int64_t iw = 2 * ow, sz = oh * ow;
	KNN_T *ee = tmp, *eo = tmp + sz, *oe = tmp + 2 * sz, *oo = tmp + 3 * sz;
	KNN_T w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4];
	KNN_T w5 = w[5], w6 = w[6], w7 = w[7], w8 = w[8];

	for (int64_t a = 0; a < oh; a++) {
		const KNN_T *re = x + 2 * a * iw, *ro = re + iw;
		int64_t t = a * ow;

		for (int64_t j = 0; j < ow; j++) {
			ee[t + j] = re[2 * j];
			eo[t + j] = re[2 * j + 1];
			oe[t + j] = ro[2 * j];
			oo[t + j] = ro[2 * j + 1];
		}
	}
	for (int64_t t = ow + 1; t < sz; t++)
		y[t] = bias + w0 * oo[t - ow - 1] + w1 * oe[t - ow] + w2 * oo[t - ow] +
		       w3 * eo[t - 1] + w4 * ee[t] + w5 * eo[t] +
		       w6 * oo[t - 1] + w7 * oe[t] + w8 * oo[t];
	for (int64_t t = ow; t < sz; t += ow)
		y[t] = bias + w1 * oe[t - ow] + w2 * oo[t - ow] + w4 * ee[t] +
		       w5 * eo[t] + w7 * oe[t] + w8 * oo[t];
	for (int64_t t = 1; t < ow; t++)
		y[t] = bias + w3 * eo[t - 1] + w4 * ee[t] + w5 * eo[t] +
		       w6 * oo[t - 1] + w7 * oe[t] + w8 * oo[t];
	y[0] = bias + w4 * ee[0] + w5 * eo[0] + w7 * oe[0] + w8 * oo[0];
}

/* A 2-D depthwise plane: each output row stays in cache while every tap
 * adds its shifted input row to it; per-column bounds computed once. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void FN(dw2d_plane)(const struct knn_geom *g, const KNN_T *restrict x,
			   const KNN_T *restrict w, KNN_T bias,
			   KNN_T *restrict y)
{
	int64_t ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1];
	int64_t kh = g->kernel[0], kw = g->kernel[1], sw = g->stride[1];
	int64_t lo[16], hi[16], base[16];

	if (kh == 3 && kw == 3 && sw == 1 && g->stride[0] == 1 &&
	    g->dil[0] == 1 && g->dil[1] == 1 && g->pad[0] == 1 &&
	    g->pad[1] == 1 && oh == ih && ow == iw && ih >= 3 && iw >= 2) {
		FN(dw3s1_plane)(x, w, bias, ih, iw, y);
		return;
	}
	for (int64_t v = 0; v < kw && v < 16; v++) {
		int64_t b = v * g->dil[1] - g->pad[1];

		base[v] = b;
		knn_tap_cols(g, b, &lo[v], &hi[v]);
	}
	for (int64_t a = 0; a < oh; a++) {
		KNN_T *yr = y + a * ow;
		int64_t h0 = a * g->stride[0] - g->pad[0];

		/* 3x3 rows with every tap row inside: one pass over the
		 * columns whose 9 taps are all inside, the edge columns tap
		 * by tap */
		if (kh == 3 && kw == 3 && h0 >= 0 && h0 + 2 * g->dil[0] < ih) {
			const KNN_T *r0 = x + h0 * iw, *r1 = r0 + g->dil[0] * iw;
			const KNN_T *r2 = r1 + g->dil[0] * iw;
			int64_t jlo = lo[0], jhi = hi[0];

			for (int v = 1; v < 3; v++) {
				jlo = lo[v] > jlo ? lo[v] : jlo;
				jhi = hi[v] < jhi ? hi[v] : jhi;
			}
			if (jhi < jlo)
				jhi = jlo;
			if (jhi > jlo)
				FN(dw3_cols)(yr + jlo, r0 + jlo * sw, r1 + jlo * sw,
					     r2 + jlo * sw, base, w, bias, jhi - jlo, sw);
			for (int64_t j = 0; j < ow; j++) {
				KNN_T acc = bias;

				if (j == jlo)
					j = jhi;
				if (j >= ow)
					break;
				for (int v = 0; v < 3; v++) {
					int64_t c = j * sw + base[v];

					if (c >= 0 && c < iw)
						acc += w[v] * r0[c] + w[3 + v] * r1[c] +
						       w[6 + v] * r2[c];
				}
				yr[j] = acc;
			}
			continue;
		}
		for (int64_t j = 0; j < ow; j++)
			yr[j] = bias;
		for (int64_t u = 0; u < kh; u++) {
			int64_t h = a * g->stride[0] - g->pad[0] + u * g->dil[0];

			if (h < 0 || h >= ih)
				continue;
			for (int64_t v = 0; v < kw; v++) {
				const KNN_T *xr = x + h * iw + (base[v] + lo[v] * sw);
				KNN_T wv = w[u * kw + v], *yo = yr + lo[v];
				int64_t n = hi[v] - lo[v];

				if (sw == 1)
					for (int64_t j = 0; j < n; j++)
						yo[j] += wv * xr[j];
				else
					for (int64_t j = 0; j < n; j++)
						yo[j] += wv * xr[j * sw];
			}
		}
	}
}

/* Depthwise: output channel i (over n * m) from input channel
 * (i % m) / (m / c), shifting and accumulating one kernel tap at a time. */
static void FN(dw_chans)(void *ctx, int64_t lo, int64_t hi)
{
	const struct FN(job) *jb = ctx;
	const struct knn_geom *g = jb->g;
	int64_t ol = g->out[g->nsp - 1], s = g->stride[g->nsp - 1];
	int64_t mult = g->m / g->c;
	/* scratch of the stride-2 planes; without it they go the row way */
	KNN_T *tmp = FN(dw3s2_fits)(g) ?
		     malloc((size_t)g->in_size * sizeof(KNN_T)) : NULL;

	for (int64_t i = lo; i < hi; i++) {
		int64_t n = i / g->m, mc = i % g->m;
		const KNN_T *xc = jb->x + (n * g->c + mc / mult) * g->in_size;
		const KNN_T *wc = jb->w + mc * g->k_size;
		KNN_T *yc = jb->y + i * g->out_size, bias = jb->b ? jb->b[mc] : 0;

		if (tmp) {
			FN(dw3s2_plane)(xc, wc, bias, g->out[0], g->out[1], tmp, yc);
			continue;
		}
		if (g->nsp == 2 && g->kernel[1] <= 16) {
			FN(dw2d_plane)(g, xc, wc, bias, yc);
			continue;
		}
		for (int64_t j = 0; j < g->out_size; j++)
			yc[j] = bias;
		for (int64_t kk = 0; kk < g->k_size; kk++) {
			struct knn_walk w;
			KNN_T wv = wc[kk], *dst = yc;

			knn_walk_init(&w, g, kk);
			for (int64_t o = 0; o < w.outer; o++, dst += ol) {
				int64_t off;

				if (knn_walk_off(&w, g, &off))
					FN(axpy)(dst + w.lo, xc + (off + w.lo * s), s,
						 w.hi - w.lo, wv);
				knn_walk_next(&w, g);
			}
		}
	}
	free(tmp);
}

/* One (batch, group) item of a convolution; par: split inside it. */
static void FN(conv_one)(struct FN(job) *jb, int64_t item, KNN_T *col, int par)
{
	const struct knn_geom *g = jb->g;
	int64_t n = item / g->group, gi = item % g->group;
	int64_t cg = g->c / g->group, mg = g->m / g->group, kd = cg * g->k_size;
	const KNN_T *xg = jb->x + (n * g->c + gi * cg) * g->in_size;
	const KNN_T *wg = jb->w + gi * mg * kd, *bm = xg;
	KNN_T *yg = jb->y + (n * g->m + gi * mg) * g->out_size;

	if (!jb->direct) {
		struct FN(rows) r = { g, xg, col };

		if (par)
			rt_parallel_for(jb->k, kd, 1 + 65536 / (g->out_size + 1),
					FN(im2col_rows), &r);
		else
			FN(im2col_rows)(&r, 0, kd);
		bm = col;
	}
	/* the bias goes in first and the product adds to it (beta 1) */
	if (jb->b)
		for (int64_t i = 0; i < mg; i++) {
			KNN_T bv = jb->b[gi * mg + i], *yr = yg + i * g->out_size;

			for (int64_t j = 0; j < g->out_size; j++)
				yr[j] = bv;
		}
	GEMM_PAR(par ? jb->k : NULL, 0, 0, mg, g->out_size, kd, 1, wg, kd, bm,
		 g->out_size, jb->b ? 1 : 0, yg, g->out_size);
}

/* Transposed: item (batch, group) of y from x through col2im. */
static void FN(convt_one)(struct FN(job) *jb, int64_t item, KNN_T *col, int par)
{
	const struct knn_geom *g = jb->g;
	int64_t n = item / g->group, gi = item % g->group;
	int64_t cg = g->c / g->group, mg = g->m / g->group, kd = mg * g->k_size;
	const KNN_T *xg = jb->x + (n * g->c + gi * cg) * g->out_size;
	const KNN_T *wg = jb->w + gi * cg * kd;
	KNN_T *yg = jb->y + (n * g->m + gi * mg) * g->in_size;
	struct FN(rows) r = { g, col, yg };

	GEMM_PAR(par ? jb->k : NULL, 1, 0, kd, g->out_size, cg, 1, wg, kd, xg,
		 g->out_size, 0, col, g->out_size);
	for (int64_t i = 0; i < mg * g->in_size; i++)
		yg[i] = 0;
	if (par)
		rt_parallel_for(jb->k, mg, 1, FN(col2im_chans), &r);
	else
		FN(col2im_chans)(&r, 0, mg);
	if (jb->b)
		for (int64_t i = 0; i < mg; i++) {
			KNN_T bv = jb->b[gi * mg + i], *yr = yg + i * g->in_size;

			for (int64_t j = 0; j < g->in_size; j++)
				yr[j] += bv;
		}
}

static int64_t FN(col_len)(const struct FN(job) *jb, int transposed)
{
	const struct knn_geom *g = jb->g;

	return transposed ? (g->m / g->group) * g->k_size * g->out_size :
	       (g->c / g->group) * g->k_size * g->out_size;
}

static void FN(items_t)(void *ctx, int64_t lo, int64_t hi, int transposed)
{
	struct FN(job) *jb = ctx;
	KNN_T *col = NULL;

	if (!jb->direct &&
	    !(col = malloc((size_t)FN(col_len)(jb, transposed) * sizeof(KNN_T)))) {
		jb->failed = 1;
		return;
	}
	for (int64_t i = lo; i < hi; i++)
		if (transposed)
			FN(convt_one)(jb, i, col, 0);
		else
			FN(conv_one)(jb, i, col, 0);
	free(col);
}

static void FN(items)(void *ctx, int64_t lo, int64_t hi)
{
	FN(items_t)(ctx, lo, hi, 0);
}

static void FN(items_tr)(void *ctx, int64_t lo, int64_t hi)
{
	FN(items_t)(ctx, lo, hi, 1);
}

static int FN(run)(struct FN(job) *jb, int transposed)
{
	const struct knn_geom *g = jb->g;
	int64_t n_items = g->n * g->group;
	KNN_T *col = NULL;

	if (n_items == 0 || g->out_size == 0)
		return 0;
	if (rt_threads(jb->k) > 1 && n_items >= rt_threads(jb->k)) {
		rt_parallel_for(jb->k, n_items, 1,
				transposed ? FN(items_tr) : FN(items), jb);
		return jb->failed ? rt_oom(jb->k) : 0;
	}
	if (!jb->direct &&
	    !(col = malloc((size_t)FN(col_len)(jb, transposed) * sizeof(KNN_T))))
		return rt_oom(jb->k);
	for (int64_t i = 0; i < n_items; i++)
		if (transposed)
			FN(convt_one)(jb, i, col, 1);
		else
			FN(conv_one)(jb, i, col, 1);
	free(col);
	return 0;
}

int FN(knn_conv)(struct rt_kctx *k, const struct knn_geom *g, const KNN_T *x,
		 const KNN_T *w, const KNN_T *b, KNN_T *y)
{
	struct FN(job) jb = { k, g, x, w, b, y, 1, 0 };

	if (g->group == g->c && g->c > 1 && g->m % g->c == 0) {
		if (g->n * g->m > 0)
			rt_parallel_for(k, g->n * g->m, 1, FN(dw_chans), &jb);
		return 0;
	}
	for (int d = 0; d < g->nsp; d++)
		if (g->kernel[d] != 1 || g->stride[d] != 1 || g->pad[d] ||
		    g->pad[g->nsp + d])
			jb.direct = 0;
	return FN(run)(&jb, 0);
}

int FN(knn_convt)(struct rt_kctx *k, const struct knn_geom *g, const KNN_T *x,
		  const KNN_T *w, const KNN_T *b, KNN_T *y)
{
	struct FN(job) jb = { k, g, x, w, b, y, 0, 0 };

	return FN(run)(&jb, 1);
}

#undef KNN_CAT3
#undef KNN_CAT2
#undef FN
#undef GEMM_PAR
