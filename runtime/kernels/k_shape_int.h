/* k_shape_int.h: what the shape, gather, slice, resize and layout kernel
 * files share (private to them): element copies that duplicate strings,
 * strided copies, int lists from an input or an attribute, axis lists, and
 * the kernels defined outside the file holding their table. */
#ifndef OPMIG_K_SHAPE_INT_H
#define OPMIG_K_SHAPE_INT_H

#include "runtime/rt_int.h"

/* Concat's result shape into dims and its axis (made non-negative) into
 * *axis, checking the inputs as the Concat kernel does (k_slice.c). */
int ks_concat_dims(struct rt_kctx *k, int *axis, int64_t *dims);

/* Row-major strides (in elements) of dims. */
void ks_strides(int rank, const int64_t *dims, int64_t *strides);

/* Copy n elements src[si..] to dst[di..] (same dtype); strings are
 * duplicated (replacing what dst held).  Fails only out of memory. */
int ks_copy(struct rt_kctx *k, struct rt_value *dst, int64_t di,
	    const struct rt_value *src, int64_t si, int64_t n);

/* Fill dst (numel(dims) elements from 0, row-major over dims) with src's
 * elements at src_off + sum idx[i] * sstrides[i]. */
int ks_strided_copy(struct rt_kctx *k, struct rt_value *dst,
		    const struct rt_value *src, int64_t src_off, int rank,
		    const int64_t *dims, const int64_t *sstrides);

/* A zero element (0, false, "") at dst[i]. */
int ks_zero(struct rt_kctx *k, struct rt_value *dst, int64_t i);

/* An input index no node has: ks_ints reads only the attribute. */
#define KS_NO_INPUT ((size_t)-1)

/* Integers of input i when present (*present = 1), else of attribute
 * `attr` when set (attr may be NULL), else *present = 0.  *vals is
 * malloc'd (free it) or NULL. */
int ks_ints(struct rt_kctx *k, size_t i, const char *attr, int64_t **vals,
	    size_t *n, int *present);

/* Normalise n axes for rank into out (in the given order);
 * error on an axis out of range or repeated. */
int ks_axes(struct rt_kctx *k, const int64_t *axes, size_t n, int rank,
	    int *out);

/* Kernels of the resize family in k_resize_grid.c. */
int ks_grid_sample(struct rt_kctx *k);
int ks_affine_grid(struct rt_kctx *k);

#endif
