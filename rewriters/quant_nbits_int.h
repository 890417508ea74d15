/* quant_nbits_int.h: what the weight-only quantizer (quant_nbits.c)
 * shares with the DequantizeLinear form of its codes (quant_nbits_dq.c):
 * the block kernel, the derived tensors' ops and their shared job.  The
 * job is owned by the tensors that share it (ops->hold / drop). */
#ifndef OPMIG_QUANT_NBITS_INT_H
#define OPMIG_QUANT_NBITS_INT_H

#include <stdint.h>

#include "ir/ir.h"

struct qz_report;

/* What the three tensors of one weight share: the parameters, and the
 * scales and zero points of the columns the codes were last computed for
 * (from column 0 on: the codes are streamed or materialized first, the
 * scales and zero points then served from here without reading the
 * weight again, and freed once both were handed out). */
struct qz_nb_job {
	int refs;
	int64_t k, n, kb, blob, zrow, bs, cols;
	int bits, sym, half;
	float *sc;                   /* n * kb (rounded through float16: half) */
	uint8_t *zp;                 /* n * zrow (asymmetric) */
	int64_t next;                /* sc/zp hold columns [0, next) */
	int owed;                    /* 1 scales, 2 zero points not yet handed out */
	double lo, hi;               /* finite range of the columns [0, next) */
	int64_t n_finite;
	struct qz_report *r;         /* its report entry, filled when the codes */
	size_t entry;                /* are complete (NULL: none) */
};

/* Scales or zero points (what: 1 or 2) handed out whole: once both were
 * (*owed clear), the kept *sc and *zp go and *next restarts. */
void qz_nb_side_done(int *owed, int what, float **sc, uint8_t **zp, int64_t *next);
/* The zero points' bytes before any block is set (len bytes). */
void qz_nb_zp_init(uint8_t *zp, int64_t len, int bits);
/* Block b of c columns: its rows (rows <= bs) at w, row stride ld; q,
 * scales and zp hold the c columns' codes, scales and zero points (kb *
 * blob, kb and zrow per column); work holds 4 * c floats. */
void qz_nb_block(const float *w, int64_t ld, int64_t rows, int64_t b, int64_t kb, int64_t c,
		 int bits, int64_t bs, int sym, int half, uint8_t *q, float *scales, uint8_t *zp,
		 float *work);

/* The codes, scales and zero points of qz_nbits_derive (arg: a job). */
extern const struct ir_derive_ops qz_nb_codes_ops, qz_nb_scales_ops, qz_nb_zp_ops;

#endif
