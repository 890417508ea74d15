/* quant_nbits_dq.c: the weight-only quantizer's codes in the operands of
 * a blocked DequantizeLinear-21 (qz_nbits_dq_derive), for the
 * matmul-nbits lowering (nbits.c): derived tensors computed a range of
 * rows of K at a time while the model is written. */
#include <stdlib.h>
#include <string.h>

#include "rewriters/quant_nbits_int.h"
#include "rewriters/quantize.h"
#include "runtime/runtime.h"

/* The lowering of a MatMulNBits to blocked DequantizeLinear-21 (nbits.c)
 * as derived tensors too: codes [K, N] (uint4/int4/uint8/int8), scales
 * [kb, N] and zero points [kb, N], a range of rows of K at a time.  From
 * the quantizer's own codes (from_w) each block of bs rows is quantized
 * again from the float weight, all N columns at once, which reads the
 * weight in its file's order (the codes are those of qz_nbits_quantize:
 * each block's codes depend on that block alone); the scales and zero
 * points of the blocks are kept from the codes' pass for the two smaller
 * tensors, else computed again.  From any other B (a model's own
 * MatMulNBits) B is read whole, in long runs, once per piece of rows
 * (once in all where a piece holds every row), and its bytes transposed
 * into the pieces' rows: as codes of the node's width, 4-bit codes
 * widened to uint8 (zero points too) or to int8 code - zero point (no
 * zero point: onnx's DequantizeLinear then computes the same values), or
 * dequantized ((code - zero point) * scale in float32, as onnxruntime's
 * MatMulNBits computes them, written as float32 or rounded to float16:
 * the matmul-nbits lowering to MatMul on dequantized constants). */
struct dq_job {
	int refs;
	int64_t k, n, kb, bs, blob, zrow;
	int64_t kp;                  /* rows of codes written: k, or kb * bs
				      * (the cast form's padded blocks) */
	int zdt;                     /* zero points as float32 or float16
				      * values (the cast form); 0: codes */
	int bits, sgn, uz;           /* signed codes; unsigned zero points */
	int from_w, sym, half;       /* from_w: the quantizer's parameters */
	int sb;                      /* bytes of a scale: 2 float16 (the model's own) */
	int obits;                   /* bits of an output code (4 or 8; 0: fdt) */
	int fdt;                     /* dequantized output: float32 or float16 */
	struct ir_tensor *ssrc, *zsrc;   /* the node's scales, zero points (fdt, or
					  * signed codes of its zero points) */
	float *sc;                   /* [kb, n] of blocks [0, next) */
	uint8_t *zp;                 /* [kb, n] unpacked (uz) */
	int64_t next;
	int owed;                    /* 1 scales, 2 zero points to hand out */
};

#define DQ_OUT_BYTES ((int64_t)8 << 20)
/* From B's bytes: pieces of up to 32 MiB of codes (all rows of most of
 * a 7B's weights), B read whole for each piece, DQ_READ_BYTES at a time
 * (dq_codes_b) */
#define DQ_WIDE_BYTES ((int64_t)32 << 20)
#define DQ_READ_BYTES ((int64_t)8 << 20)

static void dq_hold(void *arg)
{
	((struct dq_job *)arg)->refs++;
}

static void dq_drop(void *arg)
{
	struct dq_job *j = arg;

	if (!j || --j->refs > 0)
		return;
	free(j->sc);
	free(j->zp);
	ir_tensor_free(j->ssrc);
	ir_tensor_free(j->zsrc);
	free(j);
}

/* Rows per piece of the codes: whole blocks, about DQ_OUT_BYTES. */
static int64_t dq_piece_codes(const struct ir_tensor *t)
{
	const struct dq_job *j = t->arg;
	/* dequantized: a float32 row of the piece each (float16 goes
	 * through one) */
	int64_t row = j->fdt ? j->n * 4 : j->n * j->obits / 8;
	int64_t b = (j->from_w ? DQ_OUT_BYTES : j->fdt ? DQ_WIDE_BYTES / 2 : DQ_WIDE_BYTES) /
		    (row * j->bs);

	return (b > 0 ? b : 1) * j->bs;
}

static int64_t dq_piece_side(const struct ir_tensor *t)
{
	return ((const struct dq_job *)t->arg)->kb;
}

/* Element i of out (bits wide, 4-bit ones packed) set to v. */
static void dq_put(uint8_t *out, int64_t i, int bits, unsigned v)
{
	if (bits == 8) {
		out[i] = (uint8_t)v;
	} else if (i & 1) {
		out[i / 2] = (uint8_t)(out[i / 2] | (v & 15) << 4);
	} else {
		out[i / 2] = (uint8_t)(v & 15);
	}
}

/* Block b of the float weight src (all n columns): codes q [n, blob],
 * scales sc [n], packed zero points zp [n] (one byte each: kb 1). */
static int dq_block_w(const struct dq_job *j, struct ir_tensor_reader *rd, int64_t b, float *w,
		      uint8_t *raw, uint8_t *q, float *sc, uint8_t *zp, float *work,
		      struct ir_diag *d)
{
	int64_t k0 = b * j->bs, rows = k0 + j->bs < j->k ? j->bs : j->k - k0;
	size_t es = j->half ? 2 : 4;
	int rc;

	if ((rc = ir_tensor_reader_read(rd, (uint64_t)(k0 * j->n) * es,
					(size_t)(rows * j->n) * es, raw, d)) < 0)
		return rc;
	if (j->half)
		rt_cast_raw(IR_DTYPE_FLOAT16, raw, IR_DTYPE_FLOAT, (uint8_t *)w,
			    (size_t)(rows * j->n), NULL);
	if (!j->sym)
		qz_nb_zp_init(zp, j->n, j->bits);
	qz_nb_block(w, j->n, rows, 0, 1, j->n, j->bits, j->bs, j->sym, j->half, q, sc,
		 j->sym ? NULL : zp, work);
	return 0;
}

/* Scales and unpacked zero points of block b into the job's (from the
 * codes' pass, in order). */
static void dq_keep(struct dq_job *j, int64_t b, const float *sc, const uint8_t *zp)
{
	unsigned mask = (1u << j->bits) - 1;

	if (b != j->next || !j->sc || (j->uz && !j->zp))
		return;
	memcpy(j->sc + b * j->n, sc, (size_t)j->n * sizeof(float));
	for (int64_t r = 0; j->uz && r < j->n; r++)
		j->zp[b * j->n + r] = (uint8_t)(zp ? zp[r] & mask : 1u << (j->bits - 1));
	j->next = b + 1;
}

/* The node's scales (as float32) and zero points (one per column and
 * block, [n, kb]: 2^(bits - 1) where it has none) for the dequantized and
 * the code - zero point outputs; NULL, NULL for plain codes. */
static int dq_side_whole(struct dq_job *j, float **sc, int16_t **zp, struct ir_diag *d)
{
	int64_t nk = j->n * j->kb;
	unsigned mask = (1u << j->bits) - 1, per = 8 / (unsigned)j->bits;
	const uint8_t *in;
	size_t len;
	int rc;

	*sc = NULL;
	*zp = NULL;
	if (!j->fdt && !(j->sgn && j->zsrc))
		return 0;
	if (!(*zp = malloc((size_t)nk * sizeof(**zp) + 1)) ||
	    (j->fdt && !(*sc = malloc((size_t)nk * sizeof(float) + 1))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (int64_t i = 0; i < nk; i++)
		(*zp)[i] = (int16_t)(1 << (j->bits - 1));
	if (j->zsrc) {
		if ((rc = ir_tensor_data(j->zsrc, &in, &len, d)) < 0)
			return rc;
		if (len < (size_t)(j->n * j->zrow))
			return ir_diag_error(d, IR_EINVAL, "tensor '%s': too short",
					     ir_s(j->zsrc->name));
		for (int64_t r = 0; r < j->n; r++)
			for (int64_t b = 0; b < j->kb; b++)
				(*zp)[r * j->kb + b] = (int16_t)((in[r * j->zrow + b / per] >>
								  ((unsigned)(b % per) *
								   (unsigned)j->bits)) & mask);
	}
	if (!j->fdt)
		return 0;
	if ((rc = ir_tensor_data(j->ssrc, &in, &len, d)) < 0)
		return rc;
	if (len < (size_t)nk * (size_t)j->sb)
		return ir_diag_error(d, IR_EINVAL, "tensor '%s': too short", ir_s(j->ssrc->name));
	if (j->sb == 2)
		return rt_cast_raw(IR_DTYPE_FLOAT16, in, IR_DTYPE_FLOAT, (uint8_t *)*sc, (size_t)nk,
				   d);
	memcpy(*sc, in, (size_t)nk * sizeof(float));
	return 0;
}

/* Rows [u0, u1) of the codes from B's bytes: whole columns (every
 * block) read DQ_READ_BYTES at a time, B once per piece in long reads
 * rather than a short read per column; the columns ascend, so that each
 * byte's low nibble is set before its high one (dq_put).  Dequantized
 * (sc set), the float32 values go to f (out itself for float32). */
static int dq_codes_b(struct dq_job *j, struct ir_tensor_reader *rd, int64_t u0, int64_t u1,
		      uint8_t *out, uint8_t *chunk, int64_t nc, const float *sc,
		      const int16_t *zp, float *f, struct ir_diag *d)
{
	int64_t n = j->n, colb = j->kb * j->blob;
	unsigned mask = (1u << j->bits) - 1, per = 8 / (unsigned)j->bits, mid = 1u << (j->bits - 1);
	int rc;

	for (int64_t r0 = 0; r0 < n; r0 += nc) {
		int64_t c = n - r0 < nc ? n - r0 : nc;

		if ((rc = ir_tensor_reader_read(rd, (uint64_t)(r0 * colb), (size_t)(c * colb), chunk,
						d)) < 0)
			return rc;
		for (int64_t r = 0; r < c; r++) {
			const uint8_t *col = chunk + r * colb;
			int64_t at = (r0 + r) * j->kb;

			for (int64_t i = u0; i < u1; i++) {
				int64_t b = i / j->bs, jj = i % j->bs;
				unsigned code = (col[b * j->blob + jj / per] >>
						 ((unsigned)(jj % per) * (unsigned)j->bits)) & mask;
				int64_t o = (i - u0) * n + r0 + r;

				if (sc)
					f[o] = ((float)code - (float)zp[at + b]) * sc[at + b];
				else if (j->sgn)
					dq_put(out, o, j->obits,
					       (unsigned)((int)code - (zp ? zp[at + b] : (int)mid)));
				else
					dq_put(out, o, j->obits, code);
			}
		}
	}
	return 0;
}

static int dq_fill_codes(struct ir_tensor *t, int64_t u0, int64_t u1, uint8_t *out,
			 struct ir_diag *d)
{
	struct dq_job *j = t->arg;
	struct ir_tensor *src = j->from_w ? t->src->src : t->src;
	int64_t b0 = u0 / j->bs, b1 = (u1 + j->bs - 1) / j->bs, n = j->n;
	int64_t colb = j->kb * j->blob, nc = DQ_READ_BYTES / colb > 0 ? DQ_READ_BYTES / colb : 1;
	unsigned mask = (1u << j->bits) - 1, per = 8 / (unsigned)j->bits, mid = 1u << (j->bits - 1);
	size_t es = j->half ? 2 : 4;
	float *w = NULL, *sc = NULL, *work = NULL, *bsc = NULL, *f = NULL;
	uint8_t *raw = NULL, *q = NULL, *zp = NULL;
	int16_t *bzp = NULL;
	struct ir_tensor_reader rd;
	int rc = 0;

	/* the blocks' scales and zero points kept for the side tensors:
	 * only the quantizer's (dq_keep); the model's own are read again */
	if (u0 == 0 && j->from_w) {
		j->next = 0;
		if (!j->sc)
			j->sc = malloc((size_t)(j->kb * n) * sizeof(float) + 1);
		if (j->uz && !j->zp)
			j->zp = malloc((size_t)(j->kb * n) + 1);
	}
	if (j->from_w) {
		q = malloc((size_t)(n * j->blob) + 1);
		w = malloc((size_t)(j->bs * n) * sizeof(float) + 1);
		raw = j->half ? malloc((size_t)(j->bs * n) * es + 1) : (uint8_t *)w;
		sc = malloc((size_t)n * sizeof(float) + 1);
		zp = malloc((size_t)n + 1);
		work = malloc((size_t)(4 * n + 1) * sizeof(float));
	} else {
		q = malloc((size_t)(nc * colb) + 1);     /* the columns read */
		if (j->fdt == IR_DTYPE_FLOAT16)
			f = malloc((size_t)((u1 - u0) * n) * sizeof(float) + 1);
		else if (j->fdt)
			f = (float *)out;
	}
	if (!q || (j->from_w && (!w || !raw || !sc || !zp || !work)) || (j->fdt && !f)) {
		rc = ir_diag_error(d, IR_ENOMEM, "tensor '%s': out of memory", ir_s(t->name));
		goto cleanup;
	}
	if (!j->from_w && (rc = dq_side_whole(j, &bsc, &bzp, d)) < 0)
		goto cleanup;
	if ((rc = ir_tensor_reader_open(&rd, src, d)) < 0)
		goto cleanup;
	if (!j->from_w)
		rc = dq_codes_b(j, &rd, u0, u1, out, q, nc, bsc, bzp, f, d);
	if (rc == 0 && j->fdt == IR_DTYPE_FLOAT16)
		rc = rt_cast_raw(IR_DTYPE_FLOAT, (const uint8_t *)f, IR_DTYPE_FLOAT16, out,
				 (size_t)((u1 - u0) * n), d);
	/* from the float weight: a block of rows, all columns, at a time */
	for (int64_t b = b0; j->from_w && b < b1 && rc == 0; b++) {
		if ((rc = dq_block_w(j, &rd, b, w, raw, q, sc, zp, work, d)) < 0)
			break;
		dq_keep(j, b, sc, j->sym ? NULL : zp);
		for (int64_t i = b * j->bs; i < (b + 1) * j->bs && i < u1; i++) {
			int64_t jj = i - b * j->bs;
			unsigned shift = (unsigned)(jj % per) * (unsigned)j->bits;

			if (i < u0)
				continue;
			for (int64_t r = 0; r < n; r++) {
				unsigned code = (q[r * j->blob + jj / per] >> shift) & mask;

				dq_put(out, (i - u0) * n + r, j->obits,
				       j->sgn ? (code - mid) & mask : code);
			}
		}
	}
	ir_tensor_reader_close(&rd);
	if (rc == 0 && u1 == j->kp)
		ir_tensor_release_data(src);
	if (rc == 0 && u1 == j->kp && j->next == j->kb)
		j->owed = j->uz ? 3 : 1;
cleanup:
	if (f != (float *)out)
		free(f);
	free(bsc);
	free(bzp);
	if (raw != (uint8_t *)w)
		free(raw);
	free(w);
	free(q);
	free(sc);
	free(zp);
	free(work);
	return rc;
}

/* The cast form's zero points of blocks [u0, u1) as values of j->zdt
 * (float32 or float16: integers to 255 are exact in either), transposed
 * from the node's packed [n, zrow]. */
static int dq_zp_values(const struct dq_job *j, struct ir_tensor *t, const uint8_t *in,
			int64_t u0, int64_t u1, uint8_t *out, struct ir_diag *d)
{
	int64_t n = j->n, cnt = (u1 - u0) * n;
	unsigned mask = (1u << j->bits) - 1, per = 8 / (unsigned)j->bits;
	float *f = j->zdt == IR_DTYPE_FLOAT ? (float *)out : malloc((size_t)cnt * sizeof(float) + 1);
	int rc = 0;

	if (!f)
		return ir_diag_error(d, IR_ENOMEM, "tensor '%s': out of memory", ir_s(t->name));
	for (int64_t b = u0; b < u1; b++)
		for (int64_t r = 0; r < n; r++)
			f[(b - u0) * n + r] = (float)((in[r * j->zrow + b / per] >>
						       ((unsigned)(b % per) * (unsigned)j->bits)) &
						      mask);
	if (j->zdt == IR_DTYPE_FLOAT16) {
		rc = rt_cast_raw(IR_DTYPE_FLOAT, (const uint8_t *)f, IR_DTYPE_FLOAT16, out,
				 (size_t)cnt, d);
		free(f);
	}
	if (rc == 0 && u1 == j->kb)
		ir_tensor_release_data(t->src);
	return rc;
}

/* Scales (what 1) or zero points (2) of blocks [u0, u1): kept from the
 * codes' pass, computed again from the float weight, or read from the
 * MatMulNBits' own ([n, kb] and [n, zrow] packed) and transposed. */
static int dq_fill_side(struct ir_tensor *t, int what, int64_t u0, int64_t u1, uint8_t *out,
			struct ir_diag *d)
{
	struct dq_job *j = t->arg;
	int64_t n = j->n;
	unsigned mask = (1u << j->bits) - 1, per = 8 / (unsigned)j->bits;
	int rc = 0;

	if (what == 2 && j->sym) {
		/* B symmetric: every zero point 2^(bits - 1) */
		for (int64_t i = 0; i < (u1 - u0) * n; i++)
			dq_put(out, i, j->obits, 1u << (j->bits - 1));
		return 0;
	}
	if (j->next >= u1 && j->sc && (what == 1 || j->zp)) {
		for (int64_t b = u0; b < u1; b++)
			if (what == 1)
				memcpy(out + (b - u0) * n * 4, j->sc + b * n, (size_t)n * sizeof(float));
			else
				for (int64_t r = 0; r < n; r++)
					dq_put(out, (b - u0) * n + r, j->obits, j->zp[b * n + r]);
		return 0;
	}
	if (j->from_w) {
		struct ir_tensor *src = t->src->src;
		size_t es = j->half ? 2 : 4;
		float *w = malloc((size_t)(j->bs * n) * sizeof(float) + 1);
		uint8_t *raw = j->half ? malloc((size_t)(j->bs * n) * es + 1) : (uint8_t *)w;
		uint8_t *q = malloc((size_t)(n * j->blob) + 1), *zp = malloc((size_t)n + 1);
		float *sc = malloc((size_t)n * sizeof(float) + 1);
		float *work = malloc((size_t)(4 * n + 1) * sizeof(float));
		struct ir_tensor_reader rd;

		if (!w || !raw || !q || !zp || !sc || !work)
			rc = ir_diag_error(d, IR_ENOMEM, "tensor '%s': out of memory", ir_s(t->name));
		else if ((rc = ir_tensor_reader_open(&rd, src, d)) == 0) {
			for (int64_t b = u0; b < u1 && rc == 0; b++) {
				if ((rc = dq_block_w(j, &rd, b, w, raw, q, sc, zp, work, d)) < 0)
					break;
				for (int64_t r = 0; r < n; r++)
					if (what == 1)
						memcpy(out + ((b - u0) * n + r) * 4, &sc[r], 4);
					else
						dq_put(out, (b - u0) * n + r, j->obits, zp[r] & mask);
			}
			ir_tensor_reader_close(&rd);
			if (u1 == j->kb)
				ir_tensor_release_data(src);
		}
		if (raw != (uint8_t *)w)
			free(raw);
		free(w);
		free(q);
		free(zp);
		free(sc);
		free(work);
		return rc;
	}
	{
		const uint8_t *in = NULL;
		size_t len = 0;

		/* the MatMulNBits' own scales or zero points (a kb-th of the
		 * codes), or none: 2^(bits - 1) */
		if ((rc = ir_tensor_data(t->src, &in, &len, d)) < 0)
			return rc;
		if (what == 2 && j->zdt)
			return dq_zp_values(j, t, in, u0, u1, out, d);
		for (int64_t b = u0; b < u1; b++)
			for (int64_t r = 0; r < n; r++) {
				int64_t at = (b - u0) * n + r;

				if (what == 1)
					memcpy(out + at * j->sb, in + (r * j->kb + b) * j->sb,
					       (size_t)j->sb);
				else
					dq_put(out, at, j->obits,
					       (unsigned)(in[r * j->zrow + b / per] >>
							  ((unsigned)(b % per) * (unsigned)j->bits)) & mask);
			}
		if (u1 == j->kb)
			ir_tensor_release_data(t->src);
	}
	return 0;
}

static int dq_fill_scales(struct ir_tensor *t, int64_t u0, int64_t u1, uint8_t *out,
			  struct ir_diag *d)
{
	return dq_fill_side(t, 1, u0, u1, out, d);
}

static int dq_fill_zp(struct ir_tensor *t, int64_t u0, int64_t u1, uint8_t *out,
		      struct ir_diag *d)
{
	return dq_fill_side(t, 2, u0, u1, out, d);
}

static void dq_done_side(struct ir_tensor *t, int what)
{
	struct dq_job *j = t->arg;

	if (j->next == j->kb)
		qz_nb_side_done(&j->owed, what, &j->sc, &j->zp, &j->next);
}

static void dq_done_scales(struct ir_tensor *t)
{
	dq_done_side(t, 1);
}

static void dq_done_zp(struct ir_tensor *t)
{
	dq_done_side(t, 2);
}

static const struct ir_derive_ops dq_codes_ops = {
	dq_fill_codes, dq_piece_codes, NULL, dq_hold, dq_drop, NULL,
};
static const struct ir_derive_ops dq_scales_ops = {
	dq_fill_scales, dq_piece_side, dq_done_scales, dq_hold, dq_drop, NULL,
};
static const struct ir_derive_ops dq_zp_ops = {
	dq_fill_zp, dq_piece_side, dq_done_zp, dq_hold, dq_drop, NULL,
};

int qz_nbits_dq_derive(const struct ir_tensor *b, const struct ir_tensor *s,
		       const struct ir_tensor *z, int64_t k, int64_t n, int bits, int64_t bs,
		       int wdtype, const char *const names[3], struct ir_tensor **codes,
		       struct ir_tensor **scales, struct ir_tensor **zps, struct ir_diag *d)
{
	struct qz_nbits_shape f = { wdtype, 0, 0, 2 };

	return qz_nbits_codes_derive(b, s, z, k, n, bits, bs, &f, names, codes, scales, zps, d);
}

int qz_nbits_codes_derive(const struct ir_tensor *b, const struct ir_tensor *s,
			  const struct ir_tensor *z, int64_t k, int64_t n, int bits, int64_t bs,
			  const struct qz_nbits_shape *f, const char *const names[3],
			  struct ir_tensor **codes, struct ir_tensor **scales,
			  struct ir_tensor **zps, struct ir_diag *d)
{
	int wdtype = f->wdtype;
	const struct qz_nb_job *nj = b->storage == IR_STORE_DERIVED && b->ops == &qz_nb_codes_ops ?
				  b->arg : NULL;
	struct dq_job *j;
	int64_t kb = bs > 0 ? (k + bs - 1) / bs : 0;
	int64_t cd[3] = { k, n, 0 }, sd[3] = { kb, n, 0 };
	size_t crank = 2, srank = f->side_rank == 1 || f->side_rank == 3 ? (size_t)f->side_rank : 2;
	int sgn = wdtype == IR_DTYPE_INT4 || wdtype == IR_DTYPE_INT8;
	int fdt = wdtype == IR_DTYPE_FLOAT || wdtype == IR_DTYPE_FLOAT16 ? wdtype : 0;
	int obits = fdt ? 0 : wdtype == IR_DTYPE_INT4 || wdtype == IR_DTYPE_UINT4 ? 4 : 8;
	int shaped = f->pad || f->zdt || srank != 2;

	*codes = *scales = *zps = NULL;
	/* 4-bit rows of whole bytes; the quantizer's codes of float32 B (at
	 * their width), or a model's own uint8 B, float or float16 scales
	 * (DequantizeLinear-21 then writes float16, as MatMulNBits of a
	 * float16 A does), packed uint8 zero points; codes at least as wide
	 * as B's, signed ones of B's zero points only 4-bit B's as int8 */
	/* the shaped forms (padded codes [kb, bs, n], sides [n] or [kb, 1, n],
	 * float zero points): bytes of codes; of the quantizer's codes
	 * (widened to a byte) uint8 ones with uint8 zero points or none */
	if (shaped && (obits != 8 || (srank == 1 && kb != 1) ||
		       (nj && (sgn || (f->zdt && z)))))
		return 0;
	if ((n * obits) % 8 || bs <= 0 || k <= 0 || n <= 0 || (bits != 4 && bits != 8) ||
	    (obits && obits < bits) || (sgn && z && (bits != 4 || obits != 8)) ||
	    (nj && (nj->k != k || nj->n != n || nj->bits != bits || nj->bs != bs || nj->half ||
		    fdt || (obits != bits && !shaped) ||
		    (s->ops != &qz_nb_scales_ops) || (z && z->ops != &qz_nb_zp_ops))) ||
	    (!nj && (b->dtype != IR_DTYPE_UINT8 ||
		     (s->dtype != IR_DTYPE_FLOAT && s->dtype != IR_DTYPE_FLOAT16) ||
		     (z && z->dtype != IR_DTYPE_UINT8))))
		return 0;
	if (!(j = calloc(1, sizeof(*j))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	j->refs = 3;
	j->k = k;
	j->n = n;
	j->bits = bits;
	j->bs = bs;
	j->kb = (k + bs - 1) / bs;
	j->blob = bs * bits / 8;
	j->zrow = (j->kb * bits + 7) / 8;
	j->kp = f->pad ? j->kb * bs : k;
	j->zdt = f->zdt;
	j->sgn = sgn;
	j->uz = !sgn && !fdt && !f->zdt;
	j->obits = obits;
	j->fdt = fdt;
	j->from_w = nj != NULL;
	j->sym = nj ? nj->sym : !z;
	j->half = 0;                 /* the quantizer's float16 weights are not lowered */
	j->sb = !nj && s->dtype == IR_DTYPE_FLOAT16 ? 2 : 4;
	if (f->pad) {
		cd[0] = j->kb;
		cd[1] = bs;
		cd[2] = n;
		crank = 3;
	}
	if (srank == 1) {
		sd[0] = n;
	} else if (srank == 3) {
		sd[1] = 1;
		sd[2] = n;
	}
	if (!nj && ((fdt && !(j->ssrc = ir_tensor_clone(s, NULL))) ||
		    ((fdt || sgn) && z && !(j->zsrc = ir_tensor_clone(z, NULL))))) {
		dq_drop(j);
		dq_drop(j);
		dq_drop(j);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	if (fdt) {
		/* one tensor: the dequantized weight */
		j->refs = 1;
		if (!(*codes = ir_tensor_new_computed(names[0], ir_tensor_clone(b, NULL), wdtype,
						      cd, 2, k, &dq_codes_ops, j)))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		return 1;
	}
	*codes = ir_tensor_new_computed(names[0], ir_tensor_clone(b, NULL), wdtype, cd, crank,
					j->kp, &dq_codes_ops, j);
	*scales = ir_tensor_new_computed(names[1], ir_tensor_clone(s, NULL),
					 j->sb == 2 ? IR_DTYPE_FLOAT16 : IR_DTYPE_FLOAT, sd, srank,
					 j->kb, &dq_scales_ops, j);
	if (sgn || (f->zdt && !z)) {
		/* no zero points: signed codes, or the cast form's symmetric
		 * B (its caller subtracts 2^(bits - 1) as a scalar) */
		dq_drop(j);
	} else if (f->zdt) {
		*zps = ir_tensor_new_computed(names[2], ir_tensor_clone(z, NULL), f->zdt, sd, srank,
					      j->kb, &dq_zp_ops, j);
	} else {
		/* no zero points (B symmetric): all 2^(bits - 1), computed
		 * from one byte of it, so that dedup-constants finds equal
		 * ones of a shape equal as it found them materialized */
		uint8_t mid = (uint8_t)(1u << (bits - 1));
		int64_t one = 1;

		*zps = ir_tensor_new_computed(names[2], z ? ir_tensor_clone(z, NULL) :
					      ir_tensor_new_raw("zero_point", IR_DTYPE_UINT8,
								&one, 1, &mid, 1),
					      obits == 4 ? IR_DTYPE_UINT4 : IR_DTYPE_UINT8, sd, srank,
					      j->kb, &dq_zp_ops, j);
	}
	if (!*codes || !*scales || (!sgn && !(f->zdt && !z) && !*zps)) {
		ir_tensor_free(*codes);
		ir_tensor_free(*scales);
		ir_tensor_free(*zps);
		*codes = *scales = *zps = NULL;
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	return 1;
}
