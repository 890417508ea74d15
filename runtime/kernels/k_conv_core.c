/* k_conv_core.c: the typed convolution cores (k_conv_tmpl.h) for float32,
 * the fast path, and double, the path of every other dtype and of the
 * integer convolutions (exact below 2^53); plus double im2col/col2im for
 * DeformConv and Col2Im. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/gemm.h"
#include "runtime/kernels/k_conv_int.h"

/* The depthwise and im2col loops are simple enough to vectorize; -O2 alone
 * leaves them scalar (gcc's very-cheap cost model refuses loops that need
 * an epilogue). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

#define KNN_T float
#define KNN_SFX f32
#include "runtime/kernels/k_conv_tmpl.h"
#undef KNN_T
#undef KNN_SFX

#define KNN_T double
#define KNN_SFX f64
#include "runtime/kernels/k_conv_tmpl.h"
#undef KNN_T
#undef KNN_SFX

void knn_im2col_f64(const struct knn_geom *g, const double *img, int64_t n_ch,
		    double *col)
{
	for (int64_t i = 0; i < n_ch * g->k_size; i++)
		im2col_row_f64(g, img, i, col + i * g->out_size);
}

void knn_im2col_f32(const struct knn_geom *g, const float *img, int64_t lo,
		    int64_t hi, float *col, int64_t ld)
{
	for (int64_t i = lo; i < hi; i++)
		im2col_row_f32(g, img, i, col + i * ld);
}

void knn_col2im_f64(const struct knn_geom *g, const double *col, int64_t n_ch,
		    double *img)
{
	for (int64_t i = 0; i < n_ch * g->k_size; i++)
		col2im_row_f64(g, col + i * g->out_size, i, img);
}
