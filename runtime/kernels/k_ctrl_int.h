/* k_ctrl_int.h: tensor helpers shared by the control-flow and sequence
 * kernels (k_control.c, k_seq.c; defined in k_seq.c): taking slices along
 * one axis and joining tensors along one axis.  Only those files include
 * it.  Results are new references charged to k->mem; errors name the
 * node through rt_err. */
#ifndef OPMIG_K_CTRL_INT_H
#define OPMIG_K_CTRL_INT_H

#include "runtime/rt_int.h"

/* The part [start, start + len) of tensor t along axis (0 <= axis < rank);
 * keep 0 drops the axis (len must then be 1).  A contiguous part (nothing
 * before axis but size-1 dims) of a non-string tensor is a view of t. */
int kc_take(struct rt_kctx *k, struct rt_value *t, int axis,
	    int64_t start, int64_t len, int keep, struct rt_value **out);

/* Join n >= 1 tensors of one dtype along axis: new_axis 0 concatenates
 * (same rank, dims equal except axis; 0 <= axis < rank), new_axis 1 stacks
 * along a new axis (same dims; 0 <= axis <= rank). */
int kc_join(struct rt_kctx *k, struct rt_value *const *items, size_t n,
	    int axis, int new_axis, struct rt_value **out);

/* A tensor of dtype and dims filled with zeros (strings: ""). */
int kc_zeros(struct rt_kctx *k, int dtype, int rank, const int64_t *dims,
	     struct rt_value **out);

/* The element type and kind declared for a graph output or input (0 and
 * RT_TENSOR when unknown), and its static dims: *rank -1 when any dim is
 * unknown or there is no shape. */
void kc_declared(const struct ir_type *t, int *dtype, int *kind, int *rank,
		 int64_t *dims);

#endif
