/* k_gather_int.h: the typed and threaded element walks of the gather
 * family (k_gather_par.c) that k_gather.c's kernels call.  Private to
 * those two files. */
#ifndef OPMIG_K_GATHER_INT_H
#define OPMIG_K_GATHER_INT_H

#include "runtime/kernels/k_shape_int.h"

/* The scatters' reductions. */
enum { KG_NONE, KG_ADD, KG_MUL, KG_MAX, KG_MIN };

/* idx (n elements of indices `ind`, rank x's) replaced by each element's
 * offset into data x, its coordinate along axis the index (negative
 * counts from the end): 0, or an error naming the first index out of
 * range. */
int kg_elem_offsets(struct rt_kctx *k, const struct rt_value *x, const struct rt_value *ind,
		    int axis, int64_t *idx, int64_t n);
/* y[t] = x[offs[t]] for each element t of y (not strings). */
void kg_gather_elements(struct rt_kctx *k, const struct rt_value *x, struct rt_value *y,
			const int64_t *offs);
/* Whether the typed scatters take dtype with reduction r. */
int kg_typed(int dtype, int r);
/* ScatterElements' updates u (indices ind's shape, offsets offs) into y
 * (holding data's copy) with reduction r, for kg_typed dtypes. */
void kg_scatter_elements(struct rt_kctx *k, struct rt_value *y, const struct rt_value *ind,
			 const struct rt_value *u, int axis, const int64_t *offs, int r);
/* ScatterND's: ns slices of `slice` elements of u into y at offs[t]. */
void kg_scatter_nd(struct rt_kctx *k, struct rt_value *y, const struct rt_value *u,
		   const int64_t *offs, int64_t ns, int64_t slice, int r);

#endif
