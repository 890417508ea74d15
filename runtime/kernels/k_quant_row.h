/* k_quant_row.h: the float32 inner loops of QuantizeLinear and
 * DynamicQuantizeLinear (k_quant.c): quantizing a row with one scale and
 * zero point, and the min/max reduction, in AVX-512, AVX2 and portable C,
 * picked at run time by what the CPU has.  Every path gives the same bits
 * (tests/unit/suite_kquant.c compares them). */
#ifndef OPMIG_K_QUANT_ROW_H
#define OPMIG_K_QUANT_ROW_H

#include <stdint.h>

enum kq_isa { KQ_ISA_C, KQ_ISA_AVX2, KQ_ISA_AVX512 };

/* The fastest path this CPU runs (once, then cached). */
int kq_isa_best(void);
/* Whether this CPU runs path isa; its name ("c", "avx2", "avx512f"). */
int kq_isa_ok(int isa);
const char *kq_isa_name(int isa);

/* y[i] = saturate(round_half_to_even(x[i] / s) + z), NaN giving 0, for
 * i < n; y of dtype yt: IR_DTYPE_INT8, UINT8, INT16 or UINT16 (z in its
 * range).  The quotient is a float32 division.  isa must satisfy
 * kq_isa_ok(). */
void kq_row_quantize(int isa, int yt, const float *x, int64_t n, float s, int32_t z,
		     void *y);
/* *mn = min(0, x...), *mx = max(0, x...), NaN elements ignored: the range
 * DynamicQuantizeLinear maps onto [0, 255]. */
void kq_row_minmax(int isa, const float *x, int64_t n, float *mn, float *mx);

/* k_quant.c: a Concat whose only reader is DynamicQuantizeLinear as one
 * node (runtime/qdq.c): the Concat's inputs, DynamicQuantizeLinear's
 * outputs, each input's codes written at their place (the Concat's
 * float32 result not made); the same bytes as the two nodes. */
struct rt_kctx;
int kq_dynamic_quantize_cat(struct rt_kctx *k);

#endif
