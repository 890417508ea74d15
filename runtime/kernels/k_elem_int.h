/* k_elem_int.h: what the elementwise kernel files (k_elem.c, k_binary.c,
 * k_elem_cmp.c, k_act.c, k_cast.c) share: the unary engine (one loop per
 * dtype class, run in chunks over threads), the broadcasting binary
 * engine, and attribute defaults read from the operator schema.  Private
 * to them.
 *
 * An op gives typed loops: float (also used for float16, bfloat16 and the
 * float8 kinds, converted in chunks), double, and int64 (every integer
 * dtype and bool, widened; p->uns says the source is unsigned), and may
 * give bool its own loop on the bytes (b8), the values int64's gives.
 */
#ifndef OPMIG_K_ELEM_INT_H
#define OPMIG_K_ELEM_INT_H

#include <math.h>
#include <stdint.h>

#include "runtime/rt_int.h"

/* The typed loops below are written for the vectorizer; GCC's -O2 cost
 * model ("very cheap") refuses any loop that needs an epilogue or an
 * alias check, so the files including this header ask for the dynamic
 * one. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

/* Attribute parameters of one node, read once before the loops. */
struct kel_par {
	float a, b, c;
	double lo, hi;           /* Clip bounds (float) */
	int64_t ilo, ihi;        /* Clip bounds (integer) */
	int mode;
	int uns;                 /* integer source is unsigned */
};

typedef void (*kel_uf32_fn)(const float *x, float *y, int64_t n,
			    const struct kel_par *p);
typedef void (*kel_uf64_fn)(const double *x, double *y, int64_t n,
			    const struct kel_par *p);
typedef void (*kel_ui64_fn)(const int64_t *x, int64_t *y, int64_t n,
			    const struct kel_par *p);
typedef void (*kel_ub8_fn)(const uint8_t *x, uint8_t *y, int64_t n);

struct kel_unop {
	kel_uf32_fn f32;
	kel_uf64_fn f64;         /* NULL: computed through f32 */
	kel_ui64_fn i64;         /* NULL: integer inputs refused */
	int bool_ok;             /* i64 also takes bool */
	kel_ub8_fn b8;           /* NULL, or bool's own loop: i64's values */
};

/* Y = op(X) for input 0 into output 0 (same dtype and shape). */
int kel_unary(struct rt_kctx *k, const struct kel_unop *op,
	      const struct kel_par *p);
/* The same on explicit tensors: y must have x's dtype and numel. */
int kel_unary_on(struct rt_kctx *k, const struct kel_unop *op,
		 const struct kel_par *p, const struct rt_value *x,
		 struct rt_value *y);

/* sigmoid(alpha x), times x when times_x, of n floats (y may be x) in
 * AVX-512 (k_act512.c): 1 done, 0 when the CPU lacks it. */
int kel_sigmoid512(const float *x, float *y, int64_t n, float alpha, int times_x);
/* tanh of n floats (y may be x) in AVX-512, within a few ulp of tanh in
 * double (k_act512.c): 1 done, 0 when the CPU lacks it. */
int kel_tanh512(const float *x, float *y, int64_t n);
/* Exp in AVX-512 (k_act512.c: within one ulp of exp in double): 1 done,
 * 0 not (no AVX-512 here). */
int kel_exp512(const float *x, float *y, int64_t n);
/* Mish of n floats (y may be x) in AVX-512, within a few ulp of the
 * double result (k_act512.c): 1 done, 0 when the CPU lacks it. */
int kel_mish512(const float *x, float *y, int64_t n);
/* Elu (selu 0; gamma unused) or Selu of n floats (y may be x) in
 * AVX-512, within a few ulp of the double result (k_act512.c): 1 done,
 * 0 when the CPU lacks it. */
int kel_elu512(const float *x, float *y, int64_t n, float alpha, float gamma, int selu);

/* erf of n floats (y may be x), within one ulp of erff (k_elem.c). */
void kel_erf_f32(const float *x, float *y, int64_t n);
/* The same in AVX-512 (k_math512.c): 1 done, 0 not (no AVX-512 here). */
int kel_erf512(const float *x, float *y, int64_t n);
/* Atan in AVX-512 (k_math512.c: within one ulp of atan in double): 1
 * done, 0 not (no AVX-512 here). */
int kel_atan512(const float *x, float *y, int64_t n);
/* Sin (want_cos 0) or Cos of n floats (k_trig.c): the double function's
 * value rounded, or one ulp away; y may be x. */
void kel_sincos_f32(const float *x, float *y, int64_t n, int want_cos);

/* The binary loops below without trapping math: gcc may then compute
 * both arms of a select (PRelu's x0 < 0 ? x0 * x1 : x0 stayed a branch,
 * mispredicted on random signs: 4 ns an element, 14x its vectors on a
 * 64x256x256 input); nothing here reads the floating-point exception
 * flags, and the values are IEEE's either way.  (The unary loops'
 * selects vectorize as they are.) */
#if defined(__GNUC__) && !defined(__clang__)
#define KEL_NO_TRAP __attribute__((optimize("no-trapping-math")))
#else
#define KEL_NO_TRAP
#endif

/* Loops of a float unary op: EXPR of x (type T) and p (p may be NULL for
 * ops that read none).  The float32 loop reads the parameters from a
 * local copy, which no store to ys can change, so that it vectorizes
 * (Clip's bounds were loaded again for every element: 14% of an NHWC
 * MobileNet's time), for the CPU at hand. */
#define KEL_UNARY_FLOAT(name, EXPR) \
__attribute__((target_clones("avx512f", "avx2", "default"))) \
static void name##_f32(const float *xs, float *ys, int64_t n, \
		       const struct kel_par *p_in) \
{ \
	typedef float T; \
	const struct kel_par pv = p_in ? *p_in : (struct kel_par){ 0 }; \
	const struct kel_par *p = &pv; \
	(void)p; \
	for (int64_t i = 0; i < n; i++) { \
		T x = xs[i]; \
		ys[i] = (T)(EXPR); \
	} \
} \
static void name##_f64(const double *xs, double *ys, int64_t n, \
		       const struct kel_par *p) \
{ \
	typedef double T; \
	(void)p; \
	for (int64_t i = 0; i < n; i++) { \
		T x = xs[i]; \
		ys[i] = (T)(EXPR); \
	} \
}

/* Loop of an integer unary op: EXPR of int64_t x and p. */
#define KEL_UNARY_INT(name, EXPR) \
static void name##_i64(const int64_t *xs, int64_t *ys, int64_t n, \
		       const struct kel_par *p) \
{ \
	(void)p; \
	for (int64_t i = 0; i < n; i++) { \
		int64_t x = xs[i]; \
		ys[i] = (EXPR); \
	} \
}

/* ---- binary ---------------------------------------------------------- */

/* Typed loops get step 0 (broadcast) or 1 for each operand; y may alias
 * an operand of the same shape. */
typedef void (*kel_bf32_fn)(const float *a, int64_t sa, const float *b,
			    int64_t sb, float *y, int64_t n);
typedef void (*kel_bf64_fn)(const double *a, int64_t sa, const double *b,
			    int64_t sb, double *y, int64_t n);
typedef int64_t (*kel_bi64_fn)(int64_t a, int64_t b, const struct kel_par *p);
typedef void (*kel_bb8_fn)(const uint8_t *a, int64_t sa, const uint8_t *b,
			   int64_t sb, uint8_t *y, int64_t n);

struct kel_binop {
	kel_bf32_fn f32;         /* NULL: float inputs refused */
	kel_bf64_fn f64;
	kel_bi64_fn i64;         /* NULL: integer inputs refused */
	int bool_ok;             /* i64 also takes bool */
	int zero_div;            /* integer B must not hold a zero */
	/* NULL, or bool's own loop: i64's values stored as a bool (!= 0).
	 * The widening path costs 5 ns an element: And and Or on a keypoint
	 * net's 76800-element masks took 0.4 ms each */
	kel_bb8_fn b8;
};

/* Loops of a binary op: EXPR of x0, x1 (type T), KEL_NO_TRAP. */
#define KEL_BIN_LOOP(name, T, EXPR) \
KEL_NO_TRAP static void name(const T *a, int64_t sa, const T *b, int64_t sb, T *y, \
			     int64_t n) \
{ \
	if (sa && sb) { \
		for (int64_t i = 0; i < n; i++) { \
			T x0 = a[i], x1 = b[i]; \
			y[i] = (T)(EXPR); \
		} \
	} else if (sb) { \
		T x0 = a[0]; \
		for (int64_t i = 0; i < n; i++) { \
			T x1 = b[i]; \
			y[i] = (T)(EXPR); \
		} \
	} else if (sa) { \
		T x1 = b[0]; \
		for (int64_t i = 0; i < n; i++) { \
			T x0 = a[i]; \
			y[i] = (T)(EXPR); \
		} \
	} else { \
		T x0 = a[0], x1 = b[0], v = (T)(EXPR); \
		for (int64_t i = 0; i < n; i++) \
			y[i] = v; \
	} \
}
#define KEL_BINARY_FLOAT(name, EXPR) \
	KEL_BIN_LOOP(name##_f32, float, EXPR) \
	KEL_BIN_LOOP(name##_f64, double, EXPR)

/* y (allocated: dtype of a, the broadcast shape rank/dims) = op(a, b). */
int kel_binary_into(struct rt_kctx *k, const struct kel_binop *op,
		    const struct kel_par *p, struct rt_value *a,
		    struct rt_value *b, struct rt_value *y);
/* Output 0 = op(input 0, input 1) with numpy broadcasting, or, for opset
 * < 7 nodes with broadcast=1, B aligned at `axis` (legacy rule). */
int kel_binary(struct rt_kctx *k, const struct kel_binop *op,
	       const struct kel_par *p);
/* Legacy (opset < 7) broadcast: *view gets b's data with a's rank, b's
 * dims placed at attribute axis (default: trailing).  Returns 0 and sets
 * *use to view or b. */
int kel_legacy_bcast(struct rt_kctx *k, const struct rt_value *a,
		     struct rt_value *b, struct rt_value *view,
		     struct rt_value **use);

/* rt_bcast_run, with a fast path when every input is whole (numel of the
 * output) or a single element: one run split over threads. */
void kel_elementwise(struct rt_kctx *k, struct rt_value *const *ts, size_t n,
		     int rank, const int64_t *dims, rt_bcast_fn fn, void *ctx);

/* Kernels of k_elem_cmp.c (listed in k_binary.c's table). */
int kel_equal(struct rt_kctx *k);
int kel_greater(struct rt_kctx *k);
int kel_greater_eq(struct rt_kctx *k);
int kel_less(struct rt_kctx *k);
int kel_less_eq(struct rt_kctx *k);
int kel_where(struct rt_kctx *k);

/* ---- misc ------------------------------------------------------------- */

/* A float attribute, else the schema's default for this version, else
 * dflt. */
float kel_attr_float(struct rt_kctx *k, const char *name, float dflt);
/* float16, bfloat16, float8 kinds, float4: computed through float. */
int kel_is_narrow_float(int dtype);
/* Error naming the dtype the op does not take. */
int kel_bad_dtype(struct rt_kctx *k, int dtype);

#endif
