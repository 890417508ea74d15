/* tconv.h: helpers of the convolution suites (suite_kown.c, suite_kcl.c):
 * a case's geometry, seeded data, a naive convolution in double written
 * here (the independent reference), a one-Conv model, float32 tensors, and
 * the comparison.  Every function fails the test on allocation failure. */
#ifndef OPMIG_TEST_TCONV_H
#define OPMIG_TEST_TCONV_H

#include <stdint.h>

#include <CUnit/CUnit.h>

#include "ir/ir.h"
#include "runtime/runtime.h"

/* A convolution case: nsp spatial dims of size in[], kernel k[], strides
 * s[], dilations dl[], pads (begin..., end...), group. */
struct ccase {
	int nsp;
	int64_t n, c, m, group;
	int64_t in[3], k[3], s[3], dl[3], pad[6];
};

/* n seeded values in [-1, 1) (tgen's generator), malloc'd */
double *tc_fill(int64_t n, uint64_t seed);
/* |got - want| <= 1e-5 * (1 + scale) */
int tc_close(double got, double want, double scale);
/* output size along spatial dim d */
int64_t tc_out_dim(const struct ccase *cs, int d);
/* y = conv(x, w) + b in double, malloc'd; *ny its element count */
double *tc_naive_conv(const struct ccase *cs, const double *x, const double *w,
		      const double *b, int64_t *ny);
/* x -> Conv(w, b) -> y, w an initializer (a graph input when w_input) */
struct ir_model *tc_conv_model(const struct ccase *cs, const double *w, const double *b,
			       int w_input);
/* a float32 tensor of v */
struct rt_value *tc_tensor(const double *v, int rank, const int64_t *dims);
/* got's n floats each tc_close to want's (scale 50); prints the first
 * that is not, with what */
int tc_check_floats(const float *got, const double *want, int64_t n, const char *what);
/* the same for tensor y, which must hold n values */
int tc_check_out(const struct rt_value *y, const double *want, int64_t n, const char *what);

/* runs runs of m (threads th; observed: under an observer, every node on
 * its own) into y (ny floats, the last run's output); the times a Relu or
 * Clip was fused into the node before it */
size_t tc_run(struct ir_model *m, struct rt_value **ins, size_t n_in, int th,
	      int observed, int runs, float *y, int64_t ny);

#endif
