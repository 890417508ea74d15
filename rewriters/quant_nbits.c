/* quant_nbits.c: weight-only blockwise quantization (`opmig quantize
 * --weight-only int4|int8`) in the form onnxruntime's MatMulNBitsQuantizer
 * writes (its default algorithm, MLAS's blockwise quantizer): each MatMul
 * whose B is a constant float [K, N] initializer becomes com.microsoft
 * MatMulNBits; the activations stay float.  The codes, scales and zero
 * points are derived tensors of the float weight, computed a range of
 * columns at a time only when written or read (a 7B model's weights are
 * never in memory). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/dtype_int.h"
#include "rewriters/quant_int.h"
#include "rewriters/quant_nbits_int.h"
#include "runtime/runtime.h"

/* The zero points' bytes before any block is set: 2^(bits - 1) in the
 * unused high bits of 4-bit rows, as onnxruntime leaves them. */
void qz_nb_zp_init(uint8_t *zp, int64_t len, int bits)
{
	unsigned mid = 1u << (bits - 1);

	for (int64_t r = 0; r < len; r++)
		zp[r] = bits == 8 ? 0 : (uint8_t)(bits == 4 ? mid << 4 | mid : 0);
}

#define NB_COLS 256
#define NB_ROWS 8

/* n codes of one row: w[r] * rs[r] + zf[r] (two roundings, as written),
 * rounded half away from zero as roundf does (adding the float below 0.5
 * with the value's sign, then truncating, is that rounding for every
 * float), clamped into [0, qmax]; NaN gives the zero point. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "arch=haswell", "default"),
	       optimize("no-trapping-math")))
#endif
static void nb_codes(const float *w, int64_t n, const float *rs, const float *zf, float qmax,
		     uint8_t *out)
{
	for (int64_t r = 0; r < n; r++) {
		float t = w[r] * rs[r];

		t = t + zf[r];
		t = truncf(t + copysignf(0x1.fffffep-2f, t));
		out[r] = t != t ? (uint8_t)zf[r] : t < 0.0f ? 0 : t > qmax ? (uint8_t)qmax :
			 (uint8_t)t;
	}
}

/* mn[r], mx[r] take w[r] when it is below / above them (NaN never). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "arch=haswell", "default"),
	       optimize("no-trapping-math")))
#endif
static void nb_minmax(const float *w, int64_t n, float *mn, float *mx)
{
	for (int64_t r = 0; r < n; r++) {
		mn[r] = w[r] < mn[r] ? w[r] : mn[r];
		mx[r] = w[r] > mx[r] ? w[r] : mx[r];
	}
}

#define NB_LANES 16

/* The finite values of w[0, n) folded into lo, hi (NB_LANES lanes each,
 * reduced by the caller) and their count into cnt: lanes, so that the
 * loop runs in vectors (a float min reduction would not). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "arch=haswell", "default"),
	       optimize("no-trapping-math")))
#endif
static void nb_range(const float *w, int64_t n, float *lo, float *hi, int32_t *cnt)
{
	int64_t i = 0;

	for (; i + NB_LANES <= n; i += NB_LANES)
		for (int l = 0; l < NB_LANES; l++) {
			float v = w[i + l];
			int f = fabsf(v) <= 3.40282347e38f;

			lo[l] = f && v < lo[l] ? v : lo[l];
			hi[l] = f && v > hi[l] ? v : hi[l];
			cnt[l] += f;
		}
	for (; i < n; i++)
		if (fabsf(w[i]) <= 3.40282347e38f) {
			lo[0] = w[i] < lo[0] ? w[i] : lo[0];
			hi[0] = w[i] > hi[0] ? w[i] : hi[0];
			cnt[0]++;
		}
}

/* Eight rows of codes of cc columns (row stride cc) packed into each
 * column's bytes at out + r * stride (4 bytes of two codes at 4 bits, 8
 * at 8 bits, the lower row in the lower nibble/byte): each column's bytes
 * made in a vector lane, then stored whole; 0 where the byte order is
 * not little-endian (the caller packs code by code). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "arch=haswell", "default")))
#endif
static int nb_pack8(const uint8_t *codes, int64_t cc, int bits, uint8_t *out, int64_t stride)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t pk[NB_COLS];
	const uint8_t *c0 = codes, *c1 = c0 + cc, *c2 = c1 + cc, *c3 = c2 + cc, *c4 = c3 + cc,
		      *c5 = c4 + cc, *c6 = c5 + cc, *c7 = c6 + cc;

	if (bits == 4) {
		for (int64_t r = 0; r < cc; r++)
			pk[r] = (uint64_t)((uint32_t)(c0[r] | c1[r] << 4) |
					   (uint32_t)(c2[r] | c3[r] << 4) << 8 |
					   (uint32_t)(c4[r] | c5[r] << 4) << 16 |
					   (uint32_t)(c6[r] | c7[r] << 4) << 24);
		for (int64_t r = 0; r < cc; r++)
			memcpy(out + r * stride, &pk[r], 4);
	} else {
		for (int64_t r = 0; r < cc; r++)
			pk[r] = (uint64_t)c0[r] | (uint64_t)c1[r] << 8 | (uint64_t)c2[r] << 16 |
				(uint64_t)c3[r] << 24 | (uint64_t)c4[r] << 32 |
				(uint64_t)c5[r] << 40 | (uint64_t)c6[r] << 48 |
				(uint64_t)c7[r] << 56;
		for (int64_t r = 0; r < cc; r++)
			memcpy(out + r * stride, &pk[r], 8);
	}
	return 1;
#else
	(void)codes;
	(void)cc;
	(void)bits;
	(void)out;
	(void)stride;
	return 0;
#endif
}

/* Block b of c columns: its rows (rows <= bs) at w, row stride ld; q,
 * scales and zp hold the c columns' codes, scales and zero points (kb *
 * blob, kb and zrow per column). */
void qz_nb_block(const float *w, int64_t ld, int64_t rows, int64_t b, int64_t kb, int64_t c,
		     int bits, int64_t bs, int sym, int half, uint8_t *q, float *scales,
		     uint8_t *zp, float *work)
{
	int64_t blob = bs * bits / 8, zrow = (kb * bits + 7) / 8;
	unsigned qmax = (1u << bits) - 1, mid = 1u << (bits - 1), per = 8 / (unsigned)bits;
	float *mn = work, *mx = work + c, *sc = work + 2 * c;
	uint8_t *z = (uint8_t *)(work + 3 * c);

	for (int64_t r = 0; r < c; r++) {
		mn[r] = 3.40282347e38f;
		mx[r] = -3.40282347e38f;
	}
	for (int64_t i = 0; i < rows; i++)
		nb_minmax(w + i * ld, c, mn, mx);
	for (int64_t r = 0; r < c; r++) {
		float s;

		if (sym) {
			float m = fabsf(mx[r]) > fabsf(mn[r]) ? mx[r] : mn[r];

			s = -m / (float)mid;
			z[r] = (uint8_t)mid;
		} else {
			float lo = mn[r] < 0.0f ? mn[r] : 0.0f, hi = mx[r] > 0.0f ? mx[r] : 0.0f;
			float zf = lo;

			s = (hi - lo) / (float)qmax;
			if (s != 0.0f)
				zf = 0.0f - lo / s;
			z[r] = zf < 0.0f ? 0 : zf > (float)qmax ? (uint8_t)qmax : (uint8_t)roundf(zf);
		}
		sc[r] = s;
	}
	if (half)
		for (int64_t r = 0; r < c; r++) {
			uint16_t h;

			rt_cast_raw(IR_DTYPE_FLOAT, (const uint8_t *)&sc[r], IR_DTYPE_FLOAT16,
				    (uint8_t *)&h, 1, NULL);
			rt_cast_raw(IR_DTYPE_FLOAT16, (const uint8_t *)&h, IR_DTYPE_FLOAT,
				    (uint8_t *)&sc[r], 1, NULL);
		}
	for (int64_t r = 0; r < c; r++) {
		scales[r * kb + b] = sc[r];
		if (zp)
			zp[r * zrow + b / per] = (uint8_t)((zp[r * zrow + b / per] &
				~(qmax << (b % per * (unsigned)bits))) |
				(unsigned)z[r] << (b % per * (unsigned)bits));
	}
	/* the codes of NB_COLS columns and NB_ROWS rows at a time, computed
	 * along the rows in vectors, then packed column by column (rows past
	 * `rows` hold the zero point) */
	for (int64_t r0 = 0; r0 < c; r0 += NB_COLS) {
		int64_t cc = c - r0 < NB_COLS ? c - r0 : NB_COLS;
		float rs[NB_COLS], zf[NB_COLS];
		uint8_t codes[NB_ROWS * NB_COLS];

		for (int64_t r = 0; r < cc; r++) {
			rs[r] = sc[r0 + r] != 0.0f ? 1.0f / sc[r0 + r] : 0.0f;
			zf[r] = (float)z[r0 + r];
		}
		for (int64_t j0 = 0; j0 < bs; j0 += NB_ROWS) {
			int64_t jn = bs - j0 < NB_ROWS ? bs - j0 : NB_ROWS;

			for (int64_t j = j0; j < j0 + jn; j++)
				if (j < rows)
					nb_codes(w + j * ld + r0, cc, rs, zf, (float)qmax,
						 codes + (j - j0) * cc);
				else
					memcpy(codes + (j - j0) * cc, z + r0, (size_t)cc);
			if (jn == NB_ROWS && j0 % NB_ROWS == 0 && (bits == 4 || bits == 8) &&
			    nb_pack8(codes, cc, bits, q + (r0 * kb + b) * blob + j0 * bits / 8,
				     kb * blob))
				continue;
			for (int64_t r = 0; r < cc; r++) {
				uint8_t *col = &q[((r0 + r) * kb + b) * blob];
				const uint8_t *cd = codes + r;

				if (bits == 8) {
					for (int64_t j = 0; j < jn; j++)
						col[j0 + j] = cd[j * cc];
				} else if (bits == 4 && jn % 2 == 0 && j0 % 2 == 0) {
					for (int64_t j = 0; j < jn; j += 2)
						col[(j0 + j) / 2] = (uint8_t)(cd[j * cc] |
									      cd[(j + 1) * cc] << 4);
				} else {
					for (int64_t j = j0; j < j0 + jn; j++) {
						unsigned shift = (unsigned)(j % per) * (unsigned)bits;

						if (!shift)
							col[j / per] = 0;
						col[j / per] = (uint8_t)(col[j / per] |
									 (unsigned)cd[(j - j0) * cc] << shift);
					}
				}
			}
		}
	}
}

/* Blocks of bs rows of one column of w [k, n] (row-major), a scale (and a
 * zero point) each, computed in float32 as onnxruntime does:
 *   asymmetric: lo = min(min, 0), hi = max(max, 0),
 *               scale = (hi - lo) / (2^bits - 1),
 *               zero point = roundf(-lo / scale) clamped to [0, 2^bits - 1]
 *   symmetric:  m = the one of max and min of larger magnitude (min on a
 *               tie), scale = -m / 2^(bits - 1), zero point 2^(bits - 1)
 *   code = clamp(roundf(w * (1 / scale) + zero point), 0, 2^bits - 1)
 * (roundf rounds halves away from zero; 1 / 0 counts as 0).  With half,
 * scales are stored as float16 and the codes use the rounded scale.
 * Output: q [n, kb, blob] codes, low bits first, the rows past k (K padded
 * to a whole block) holding the zero point, so that they dequantize to 0;
 * scales [n, kb]; zp (asymmetric only) [n, zrow] packed like the codes,
 * the unused high bits of a row's last byte 2^(bits - 1) as onnxruntime
 * leaves them.  Each column's output depends on that column alone, so a
 * range of columns is computed the same way (nb_columns). */
void qz_nbits_quantize(const float *w, int64_t k, int64_t n, int bits, int64_t bs, int sym,
		       int half, uint8_t *q, float *scales, uint8_t *zp, float *work)
{
	int64_t kb = (k + bs - 1) / bs, zrow = (kb * bits + 7) / 8;

	if (zp)
		qz_nb_zp_init(zp, n * zrow, bits);
	for (int64_t b = 0; b < kb; b++) {
		int64_t k0 = b * bs, k1 = k0 + bs < k ? k0 + bs : k;

		qz_nb_block(w + k0 * n, n, k1 - k0, b, kb, n, bits, bs, sym, half, q, scales, zp, work);
	}
}

/* ---- the codes, scales and zero points as derived tensors ----------- */

#define NB_OUT_BYTES ((int64_t)8 << 20)
#define NB_READ_BYTES ((int64_t)16 << 20)
#define NB_WIDE_BYTES ((int64_t)24 << 20)

static void nb_hold(void *arg)
{
	((struct qz_nb_job *)arg)->refs++;
}

static void nb_drop(void *arg)
{
	struct qz_nb_job *j = arg;

	if (!j || --j->refs > 0)
		return;
	free(j->sc);
	free(j->zp);
	free(j);
}

static int64_t nb_piece(const struct ir_tensor *t)
{
	return ((const struct qz_nb_job *)t->arg)->cols;
}

/* The finite range of w[0, n) added to j's. */
static void nb_track(struct qz_nb_job *j, const float *w, int64_t n)
{
	float lo[NB_LANES], hi[NB_LANES];
	int32_t cnt[NB_LANES] = { 0 };

	for (int l = 0; l < NB_LANES; l++) {
		lo[l] = 3.40282347e38f;
		hi[l] = -3.40282347e38f;
	}
	nb_range(w, n, lo, hi, cnt);
	for (int l = 0; l < NB_LANES; l++) {
		if (!cnt[l])
			continue;
		if (!j->n_finite || lo[l] < j->lo)
			j->lo = lo[l];
		if (!j->n_finite || hi[l] > j->hi)
			j->hi = hi[l];
		j->n_finite += cnt[l];
	}
}

/* Columns [n0, n1) of the weight src: codes into q, scales into sc, zero
 * points into zp (NULL symmetric), reading bs rows of those columns at a
 * time (one read per block when they are all of them); their finite range
 * added to j's when track. */
static int nb_compute(struct qz_nb_job *j, struct ir_tensor *src, int64_t n0, int64_t n1,
		      uint8_t *q, float *sc, uint8_t *zp, int track, struct ir_diag *d)
{
	int64_t c = n1 - n0, n = j->n;
	size_t es = j->half ? 2 : 4;
	float *w = malloc((size_t)(j->bs * c) * sizeof(float) + 1);
	float *work = malloc((size_t)(4 * c + 1) * sizeof(float));
	uint8_t *raw = j->half ? malloc((size_t)(j->bs * c) * 2 + 1) : (uint8_t *)w;
	struct ir_tensor_reader rd;
	int rc = 0;

	if (!w || !work || !raw) {
		rc = ir_diag_error(d, IR_ENOMEM, "quantize: out of memory");
		goto cleanup;
	}
	if ((rc = ir_tensor_reader_open(&rd, src, d)) < 0)
		goto cleanup;
	if (zp)
		qz_nb_zp_init(zp, c * j->zrow, j->bits);
	for (int64_t b = 0; b < j->kb && rc == 0; b++) {
		int64_t k0 = b * j->bs, rows = k0 + j->bs < j->k ? j->bs : j->k - k0;

		if (c == n)
			rc = ir_tensor_reader_read(&rd, (uint64_t)(k0 * n) * es,
						   (size_t)(rows * n) * es, raw, d);
		for (int64_t i = 0; c != n && i < rows && rc == 0; i++)
			rc = ir_tensor_reader_read(&rd, (uint64_t)((k0 + i) * n + n0) * es,
						   (size_t)c * es, raw + (size_t)(i * c) * es, d);
		if (rc < 0)
			break;
		if (j->half)
			rt_cast_raw(IR_DTYPE_FLOAT16, raw, IR_DTYPE_FLOAT, (uint8_t *)w,
				    (size_t)(rows * c), NULL);
		if (track)
			nb_track(j, w, rows * c);
		qz_nb_block(w, c, rows, b, j->kb, c, j->bits, j->bs, j->sym, j->half, q, sc, zp, work);
	}
	ir_tensor_reader_close(&rd);
cleanup:
	if (raw != (uint8_t *)w)
		free(raw);
	free(w);
	free(work);
	return rc;
}

/* The report's entry once the codes of every column are known. */
static void nb_report(struct qz_nb_job *j)
{
	struct qz_tensor *e;

	if (!j->r || j->entry >= j->r->n_tensors)
		return;
	e = &j->r->tensors[j->entry];
	e->scale = e->scale_min = e->scale_max = j->sc[0];
	for (int64_t i = 1; i < j->n * j->kb; i++) {
		if (j->sc[i] < e->scale_min)
			e->scale_min = j->sc[i];
		if (j->sc[i] > e->scale_max)
			e->scale_max = j->sc[i];
	}
	e->zero_point = j->sym ? (double)(1 << (j->bits - 1)) :
			(double)(j->zp[0] & ((1 << j->bits) - 1));
	e->min = e->lo = j->n_finite ? j->lo : 0;
	e->max = e->hi = j->n_finite ? j->hi : 0;
}

static int nb_fill_codes(struct ir_tensor *t, int64_t u0, int64_t u1, uint8_t *out,
			 struct ir_diag *d)
{
	struct qz_nb_job *j = t->arg;
	int rc;

	if (u0 == 0) {
		j->next = 0;
		j->n_finite = 0;
	}
	if ((!j->sc && !(j->sc = malloc((size_t)(j->n * j->kb) * sizeof(float) + 1))) ||
	    (!j->sym && !j->zp && !(j->zp = malloc((size_t)(j->n * j->zrow) + 1))))
		return ir_diag_error(d, IR_ENOMEM, "quantize: out of memory");
	j->next = u0 == j->next ? j->next : -1;
	if ((rc = nb_compute(j, t->src, u0, u1, out, j->sc + u0 * j->kb,
			     j->zp ? j->zp + u0 * j->zrow : NULL, j->next >= 0, d)) < 0)
		return rc;
	if (j->next >= 0)
		j->next = u1;
	if (u1 == j->n) {
		ir_tensor_release_data(t->src);
		if (j->next == j->n) {
			j->owed = j->sym ? 1 : 3;
			nb_report(j);
		}
	}
	return 0;
}

/* Scales (what 1) or zero points (2) of columns [u0, u1): from the codes'
 * pass when it covered them, else computed again. */
static int nb_fill_side(struct ir_tensor *t, int what, int64_t u0, int64_t u1, uint8_t *out,
			struct ir_diag *d)
{
	struct qz_nb_job *j = t->arg;
	int64_t c = u1 - u0;
	uint8_t *q = NULL, *zp = NULL;
	float *sc = NULL;
	int rc = 0;

	if (j->next < u1 || !j->sc) {
		if (!(q = malloc((size_t)(c * j->kb * j->blob) + 1)) ||
		    !(sc = malloc((size_t)(c * j->kb) * sizeof(float) + 1)) ||
		    (!j->sym && !(zp = malloc((size_t)(c * j->zrow) + 1)))) {
			rc = ir_diag_error(d, IR_ENOMEM, "quantize: out of memory");
			goto cleanup;
		}
		if ((rc = nb_compute(j, t->src, u0, u1, q, sc, zp, 0, d)) < 0)
			goto cleanup;
		if (u1 == j->n)
			ir_tensor_release_data(t->src);
	} else {
		sc = j->sc + u0 * j->kb;
		zp = j->zp ? j->zp + u0 * j->zrow : NULL;
	}
	if (what == 2)
		memcpy(out, zp, (size_t)(c * j->zrow));
	else if (j->half)
		rt_cast_raw(IR_DTYPE_FLOAT, (const uint8_t *)sc, IR_DTYPE_FLOAT16, out,
			    (size_t)(c * j->kb), NULL);
	else
		memcpy(out, sc, (size_t)(c * j->kb) * sizeof(float));
cleanup:
	if (q) {
		free(sc);
		free(zp);
	}
	free(q);
	return rc;
}

static int nb_fill_scales(struct ir_tensor *t, int64_t u0, int64_t u1, uint8_t *out,
			  struct ir_diag *d)
{
	return nb_fill_side(t, 1, u0, u1, out, d);
}

static int nb_fill_zp(struct ir_tensor *t, int64_t u0, int64_t u1, uint8_t *out,
		      struct ir_diag *d)
{
	return nb_fill_side(t, 2, u0, u1, out, d);
}

/* Scales or zero points handed out whole: once both were, the codes'
 * scales and zero points go. */
void qz_nb_side_done(int *owed, int what, float **sc, uint8_t **zp, int64_t *next)
{
	*owed &= ~what;
	if (!*owed) {
		free(*sc);
		free(*zp);
		*sc = NULL;
		*zp = NULL;
		*next = 0;
	}
}

static void nb_done_side(struct ir_tensor *t, int what)
{
	struct qz_nb_job *j = t->arg;

	if (j->next == j->n)
		qz_nb_side_done(&j->owed, what, &j->sc, &j->zp, &j->next);
}

static void nb_done_scales(struct ir_tensor *t)
{
	nb_done_side(t, 1);
}

static void nb_done_zp(struct ir_tensor *t)
{
	nb_done_side(t, 2);
}

const struct ir_derive_ops qz_nb_codes_ops = {
	nb_fill_codes, nb_piece, NULL, nb_hold, nb_drop, NULL,
};
const struct ir_derive_ops qz_nb_scales_ops = {
	nb_fill_scales, nb_piece, nb_done_scales, nb_hold, nb_drop, NULL,
};
const struct ir_derive_ops qz_nb_zp_ops = {
	nb_fill_zp, nb_piece, nb_done_zp, nb_hold, nb_drop, NULL,
};

static int nb_detach(struct ir_tensor *t, void *ctx)
{
	struct qz_nb_job *j;

	if (t->storage != IR_STORE_DERIVED ||
	    (t->ops != &qz_nb_codes_ops && t->ops != &qz_nb_scales_ops && t->ops != &qz_nb_zp_ops))
		return 0;
	j = t->arg;
	if (j && j->r == ctx)
		j->r = NULL;
	return 0;
}

void qz_report_detach(struct ir_model *m, const struct qz_report *r)
{
	ir_model_for_each_tensor(m, nb_detach, (void *)r);
}

int qz_nbits_derive(const struct ir_tensor *w, const char *name, int bits, int64_t bs, int sym,
		    int64_t cols, struct ir_tensor **q, struct ir_tensor **s, struct ir_tensor **z,
		    struct ir_diag *d)
{
	struct qz_nb_job *j;
	char tn[400];
	int64_t out;

	*q = *s = *z = NULL;
	if (w->n_dims != 2 || w->dims[0] <= 0 || w->dims[1] <= 0 ||
	    (w->dtype != IR_DTYPE_FLOAT && w->dtype != IR_DTYPE_FLOAT16))
		return ir_diag_error(d, IR_EINVAL, "quantize: the weight '%s' is not a float "
				     "[K, N] tensor", ir_s(w->name));
	if (!(j = calloc(1, sizeof(*j))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	j->refs = 3;
	j->k = w->dims[0];
	j->n = w->dims[1];
	j->bits = bits;
	j->bs = bs;
	j->sym = sym;
	j->half = w->dtype == IR_DTYPE_FLOAT16;
	j->kb = (j->k + bs - 1) / bs;
	j->blob = bs * bits / 8;
	j->zrow = (j->kb * bits + 7) / 8;
	/* bounded pieces: all columns when their codes take NB_WIDE_BYTES
	 * (each block of rows is then one read, in the file's order: a
	 * piece of the columns reads a run of each row, and the kernel's
	 * readahead around those short reads cost more than the codes),
	 * else columns whose codes take NB_OUT_BYTES; either way a block of
	 * rows read at a time takes at most NB_READ_BYTES */
	out = j->kb * j->blob;
	j->cols = cols > 0 ? cols : j->n * out <= NB_WIDE_BYTES ? j->n :
		  NB_OUT_BYTES / out > 0 ? NB_OUT_BYTES / out : 1;
	if (cols <= 0 && j->cols > NB_READ_BYTES / (bs * 4))
		j->cols = NB_READ_BYTES / (bs * 4);
	if (j->cols > j->n)
		j->cols = j->n;
	{
		int64_t qd[3] = { j->n, j->kb, j->blob }, sd[1] = { j->n * j->kb };
		int64_t zd[1] = { j->n * j->zrow };

		snprintf(tn, sizeof(tn), "%.300s_Q%d", name, bits);
		*q = ir_tensor_new_computed(tn, ir_tensor_clone(w, NULL), IR_DTYPE_UINT8, qd, 3,
					    j->n, &qz_nb_codes_ops, j);
		snprintf(tn, sizeof(tn), "%.300s_scales", name);
		*s = ir_tensor_new_computed(tn, ir_tensor_clone(w, NULL), w->dtype, sd, 1, j->n,
					    &qz_nb_scales_ops, j);
		snprintf(tn, sizeof(tn), "%.300s_zero_points", name);
		if (sym)
			nb_drop(j);
		else
			*z = ir_tensor_new_computed(tn, ir_tensor_clone(w, NULL), IR_DTYPE_UINT8, zd,
						    1, j->n, &qz_nb_zp_ops, j);
	}
	if (!*q || !*s || (!sym && !*z)) {
		ir_tensor_free(*q);
		ir_tensor_free(*s);
		ir_tensor_free(*z);
		*q = *s = *z = NULL;
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	return 0;
}

/* ---- the MatMul to MatMulNBits rewrite ------------------------------- */

struct done {
	const struct ir_value *w;        /* the float weight */
	struct ir_value *q, *s, *z;      /* its codes, scales, zero points */
	int64_t k, n;
};

struct nbuild {
	struct qz_ctx *q;
	struct rw_ctx *c;
	struct ir_graph *g;
	struct done *done;
	size_t n_done;
	struct ir_diag *d;
};

static int ensure_domain(struct ir_model *m, const char *dom)
{
	struct ir_opset *o;

	if (ir_model_opset(m, dom) > 0)
		return 0;
	if (!(o = realloc(m->opsets, (m->n_opsets + 1) * sizeof(*o))))
		return IR_ENOMEM;
	m->opsets = o;
	memset(&o[m->n_opsets], 0, sizeof(*o));
	if (!(o[m->n_opsets].domain = strdup(dom)))
		return IR_ENOMEM;
	o[m->n_opsets].version = 1;
	o[m->n_opsets].present = 1;
	m->n_opsets++;
	return 0;
}

static struct ir_value *add_init(struct nbuild *b, struct ir_tensor *t)
{
	struct ir_value *v = ir_graph_add_initializer(b->g, t);

	if (!v)
		ir_diag_error(b->d, IR_ENOMEM, "out of memory");
	return v;
}

/* The quantized form of weight w (one per weight, shared by its readers):
 * derived tensors, computed when read or written; the report's entry gets
 * their numbers then.  0, or < 0 with the error in b->d. */
static int quantize_weight(struct nbuild *b, struct ir_value *w, struct done **out)
{
	const struct qz_opts *o = b->q->o;
	struct ir_tensor *tq = NULL, *ts = NULL, *tz = NULL;
	struct qz_tensor info = { 0 };
	struct done *e;
	int rc;

	for (size_t i = 0; i < b->n_done; i++)
		if (b->done[i].w == w) {
			*out = &b->done[i];
			return 0;
		}
	if (!w->init)
		return ir_diag_error(b->d, IR_EINVAL, "quantize: cannot read the weight '%s'",
				     ir_s(w->name));
	if ((rc = qz_nbits_derive(w->init, ir_s(w->name), o->nbits, o->block_size, o->symmetric,
				  0, &tq, &ts, &tz, b->d)) < 0)
		return rc;
	if (!(e = realloc(b->done, (b->n_done + 1) * sizeof(*e)))) {
		ir_tensor_free(tq);
		ir_tensor_free(ts);
		ir_tensor_free(tz);
		return ir_diag_error(b->d, IR_ENOMEM, "out of memory");
	}
	b->done = e;
	e = &e[b->n_done];
	memset(e, 0, sizeof(*e));
	e->w = w;
	e->k = w->init->dims[0];
	e->n = w->init->dims[1];
	if (b->q->collect) {
		struct qz_nb_job *j = tq->arg;

		info.kind = "weight";
		info.dtype = o->nbits == 4 ? IR_DTYPE_UINT4 : IR_DTYPE_UINT8;
		info.axis = 0;
		info.n = (size_t)(j->n * j->kb);
		/* known once the codes are computed (when written) */
		info.scale = info.zero_point = info.scale_min = info.scale_max = NAN;
		info.min = info.max = info.lo = info.hi = NAN;
		if (!(info.name = strdup(ir_s(w->name))) || qz_tensor_add(b->q->r, &info, b->d) < 0) {
			free(info.name);
			ir_tensor_free(tq);
			ir_tensor_free(ts);
			ir_tensor_free(tz);
			return b->d->status ? b->d->status : ir_diag_error(b->d, IR_ENOMEM,
									   "out of memory");
		}
		j->r = b->q->r;
		j->entry = b->q->r->n_tensors - 1;
	}
	/* add_init frees what it cannot add */
	if (!(e->q = add_init(b, tq))) {
		ir_tensor_free(ts);
		ir_tensor_free(tz);
		return b->d->status;
	}
	if (!(e->s = add_init(b, ts))) {
		ir_tensor_free(tz);
		return b->d->status;
	}
	if (tz && !(e->z = add_init(b, tz)))
		return b->d->status;
	b->n_done++;
	*out = e;
	return 0;
}

/* MatMul(A, B) -> MatMulNBits(A, B codes, scales[, zero points]), keeping
 * the output's name. */
static int one(struct nbuild *b, struct ir_node *n)
{
	const struct qz_opts *o = b->q->o;
	struct ir_value *w = n->inputs[1], *y = n->outputs[0];
	struct ir_node *mm;
	struct done *e = NULL;
	char hint[320];
	int rc;

	if ((rc = quantize_weight(b, w, &e)) < 0)
		return rc;
	snprintf(hint, sizeof(hint), "%.300s_Q%d", *ir_s(n->name) ? ir_s(n->name) :
		 ir_s(y->name), o->nbits);
	if (!(mm = qz_node_new(b->g, "MatMulNBits", hint)))
		goto oom;
	free(mm->domain);
	if (!(mm->domain = strdup("com.microsoft")) ||
	    ir_node_append_input(mm, n->inputs[0]) < 0 || ir_node_append_input(mm, e->q) < 0 ||
	    ir_node_append_input(mm, e->s) < 0 || (e->z && ir_node_append_input(mm, e->z) < 0) ||
	    ir_node_set_int(mm, "K", e->k) < 0 ||
	    ir_node_set_int(mm, "N", e->n) < 0 ||
	    ir_node_set_int(mm, "bits", o->nbits) < 0 ||
	    ir_node_set_int(mm, "block_size", o->block_size) < 0 ||
	    (o->accuracy_level && ir_node_set_int(mm, "accuracy_level", o->accuracy_level) < 0)) {
		ir_node_free(mm);
		goto oom;
	}
	ir_graph_detach_node(b->g, n);
	ir_node_free(n);
	if (ir_node_append_output(mm, y) < 0 || ir_graph_add_node(b->g, mm) < 0) {
		ir_node_free(mm);
		goto oom;
	}
	return 0;
oom:
	return ir_diag_error(b->d, IR_ENOMEM, "out of memory");
}

int qz_build_nbits(struct qz_ctx *q, struct rw_ctx *c, const unsigned char *fl,
		   struct ir_diag *d)
{
	const struct qz_plan *p = &q->plan;
	struct nbuild b = { .q = q, .c = c, .g = c->m->graph, .d = d };
	struct ir_node **todo;
	size_t n = 0;
	int rc = 0;

	if (b.g->n_nodes != p->n_nodes)
		return ir_diag_error(d, IR_EINTERNAL, "quantize: the model changed under the plan");
	if (!(todo = calloc(p->n_nodes + 1, sizeof(*todo))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	/* indices move as nodes go: the nodes are collected first */
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->units[i].candidate && !(fl && fl[i]))
			todo[n++] = b.g->nodes[i];
	if (n && ensure_domain(c->m, "com.microsoft") < 0)
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t k = 0; k < n && rc >= 0; k++)
		rc = one(&b, todo[k]);
	free(todo);
	free(b.done);
	if (rc < 0)
		return rc;
	if ((rc = rw_dt_finish(c, b.g)) < 0)
		return rc;
	return rw_refresh(c);
}
