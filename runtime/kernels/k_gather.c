/* k_gather.c: kernels of the gather family: reading by index (Gather,
 * GatherElements, GatherND, Compress, OneHot) and writing by index
 * (Scatter, ScatterElements, ScatterND with their reductions,
 * TensorScatter).  Every index is checked: one out of range is an error
 * naming it.  See rt_int.h for how to add one. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_gather_int.h"

/* Index v along a dim of size d (negative counts from the end). */
static int fix_index(struct rt_kctx *k, int64_t v, int64_t d, int64_t *out)
{
	if (v < -d || v >= d)
		return rt_err(k, "index %lld out of range [%lld, %lld]", (long long)v,
			      (long long)-d, (long long)(d - 1));
	*out = v < 0 ? v + d : v;
	return 0;
}

static int k_gather(struct rt_kctx *k)
{
	struct rt_value *x, *ind, *y;
	int64_t *idx = NULL, dims[RT_MAX_RANK], outer = 1, inner = 1, d;
	size_t n;
	int axis, r, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &ind)) < 0 ||
	    (rc = rt_axis(k, rt_attr_int(k, "axis", 0), x->rank, &axis)) < 0)
		return rc;
	r = x->rank - 1 + ind->rank;
	if (r > RT_MAX_RANK)
		return rt_err(k, "output rank %d above the supported %d", r, RT_MAX_RANK);
	if ((rc = rt_in_ints(k, 1, &idx, &n)) < 0)
		return rc;
	d = x->dims[axis];
	for (size_t i = 0; i < n; i++)
		if ((rc = fix_index(k, idx[i], d, &idx[i])) < 0)
			goto cleanup;
	for (int i = 0; i < axis; i++) {
		dims[i] = x->dims[i];
		outer *= x->dims[i];
	}
	for (int i = 0; i < ind->rank; i++)
		dims[axis + i] = ind->dims[i];
	for (int i = axis + 1; i < x->rank; i++) {
		dims[ind->rank + i - 1] = x->dims[i];
		inner *= x->dims[i];
	}
	if (!(y = rt_out_tensor(k, 0, x->dtype, r, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	for (int64_t o = 0; o < outer; o++)
		for (size_t j = 0; j < n; j++)
			if ((rc = ks_copy(k, y, (o * (int64_t)n + (int64_t)j) * inner, x,
					  (o * d + idx[j]) * inner, inner)) < 0)
				goto cleanup;
cleanup:
	free(idx);
	return rc;
}

/* Offsets into data (strides xs) of each element of indices (same rank)
 * with the axis coordinate replaced by the index: for the Elements ops. */
static int element_offsets(struct rt_kctx *k, const struct rt_value *x,
			   const struct rt_value *ind, int axis, int64_t **offs)
{
	int64_t *idx = NULL;
	size_t n;
	int rc;

	*offs = NULL;
	if (ind->rank != x->rank)
		return rt_err(k, "indices have rank %d, data %d", ind->rank, x->rank);
	for (int i = 0; i < x->rank; i++)
		if (i != axis && ind->dims[i] > x->dims[i])
			return rt_err(k, "indices dim %d (%lld) exceeds data's (%lld)", i,
				      (long long)ind->dims[i], (long long)x->dims[i]);
	if ((rc = rt_in_ints(k, 1, &idx, &n)) < 0)
		return rc;
	if ((rc = kg_elem_offsets(k, x, ind, axis, idx, (int64_t)n)) < 0) {
		free(idx);
		return rc;
	}
	*offs = idx;
	return 0;
}

static int k_gather_elements(struct rt_kctx *k)
{
	struct rt_value *x, *ind, *y;
	int64_t *offs = NULL;
	int axis, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &ind)) < 0 ||
	    (rc = rt_axis(k, rt_attr_int(k, "axis", 0), x->rank, &axis)) < 0 ||
	    (rc = element_offsets(k, x, ind, axis, &offs)) < 0)
		return rc;
	if (!(y = rt_out_tensor(k, 0, x->dtype, ind->rank, ind->dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	if (x->dtype != IR_DTYPE_STRING) {
		kg_gather_elements(k, x, y, offs);
		goto cleanup;
	}
	for (int64_t j = 0; j < ind->numel; j++)
		if ((rc = ks_copy(k, y, j, x, offs[j], 1)) < 0)
			goto cleanup;
cleanup:
	free(offs);
	return rc;
}

/* GatherND/ScatterND: offsets of the slices named by indices (last dim m)
 * into data, batch_dims b; *n_slices and *slice get the counts. */
static int nd_offsets(struct rt_kctx *k, const struct rt_value *x,
		      const struct rt_value *ind, int b, int64_t **offs,
		      int64_t *n_slices, int64_t *slice)
{
	int64_t *idx = NULL, *o = NULL, xs[RT_MAX_RANK], m, per_batch = 1, batch_x, cnt = 1;
	size_t n;
	int rc;

	*offs = NULL;
	if (ind->rank < 1)
		return rt_err(k, "indices must have rank >= 1");
	m = ind->dims[ind->rank - 1];
	if (b < 0 || b >= ind->rank || b >= x->rank || m > x->rank - b)
		return rt_err(k, "indices of shape last dim %lld and batch_dims %d do not fit data of rank %d",
			      (long long)m, b, x->rank);
	for (int i = 0; i < b; i++)
		if (ind->dims[i] != x->dims[i])
			return rt_err(k, "batch dim %d differs between data and indices", i);
	if ((rc = rt_in_ints(k, 1, &idx, &n)) < 0)
		return rc;
	ks_strides(x->rank, x->dims, xs);
	for (int i = b; i < ind->rank - 1; i++)
		per_batch *= ind->dims[i];
	for (int i = 0; i < ind->rank - 1; i++)
		cnt *= ind->dims[i];
	*slice = m ? xs[b + m - 1] : xs[b] * x->dims[b];
	batch_x = b ? xs[b - 1] : 0;      /* elements per batch entry */
	if (!(o = malloc((size_t)(cnt ? cnt : 1) * sizeof(*o)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t t = 0; t < cnt; t++) {
		int64_t off = (per_batch ? t / per_batch : 0) * batch_x, v = 0;

		for (int64_t j = 0; j < m; j++) {
			if ((rc = fix_index(k, idx[t * m + j], x->dims[b + j], &v)) < 0)
				goto cleanup;
			off += v * xs[b + j];
		}
		o[t] = off;
	}
	*offs = o;
	o = NULL;
	*n_slices = cnt;
cleanup:
	free(o);
	free(idx);
	return rc;
}

static int k_gather_nd(struct rt_kctx *k)
{
	struct rt_value *x, *ind, *y;
	int64_t *offs = NULL, ns, slice, dims[RT_MAX_RANK], m;
	int b = (int)rt_attr_int(k, "batch_dims", 0), r = 0, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &ind)) < 0 ||
	    (rc = nd_offsets(k, x, ind, b, &offs, &ns, &slice)) < 0)
		return rc;
	m = ind->dims[ind->rank - 1];
	for (int i = 0; i < ind->rank - 1; i++)
		dims[r++] = ind->dims[i];
	for (int i = b + (int)m; i < x->rank; i++) {
		if (r >= RT_MAX_RANK) {
			rc = rt_err(k, "output rank above the supported %d", RT_MAX_RANK);
			goto cleanup;
		}
		dims[r++] = x->dims[i];
	}
	if (!(y = rt_out_tensor(k, 0, x->dtype, r, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	for (int64_t t = 0; t < ns; t++)
		if ((rc = ks_copy(k, y, t * slice, x, offs[t], slice)) < 0)
			goto cleanup;
cleanup:
	free(offs);
	return rc;
}

/* ---- scatter ---------------------------------------------------------- */

static int reduction(struct rt_kctx *k, int *r)
{
	const char *s = rt_attr_str(k, "reduction", "none");

	if (!strcmp(s, "none"))
		*r = KG_NONE;
	else if (!strcmp(s, "add"))
		*r = KG_ADD;
	else if (!strcmp(s, "mul"))
		*r = KG_MUL;
	else if (!strcmp(s, "max") && k->version >= 18)
		*r = KG_MAX;
	else if (!strcmp(s, "min") && k->version >= 18)
		*r = KG_MIN;
	else
		return rt_err(k, "unknown reduction '%s'", s);
	return 0;
}

/* y[yi] = y[yi] <red> u[ui]. */
static int apply(struct rt_kctx *k, struct rt_value *y, int64_t yi,
		 const struct rt_value *u, int64_t ui, int r)
{
	int dt = y->dtype;

	if (r == KG_NONE)
		return ks_copy(k, y, yi, u, ui, 1);
	if (dt == IR_DTYPE_STRING)
		return rt_err(k, "reductions do not apply to strings");
	if (rt_dtype_is_int(dt) || dt == IR_DTYPE_BOOL) {
		int64_t a = rt_load_i64(dt, y->data, yi), b = rt_load_i64(dt, u->data, ui);

		if (dt == IR_DTYPE_BOOL)
			a = r == KG_ADD || r == KG_MAX ? (a || b) : (a && b);
		else
			a = r == KG_ADD ? (int64_t)((uint64_t)a + (uint64_t)b) :
			    r == KG_MUL ? (int64_t)((uint64_t)a * (uint64_t)b) :
			    r == KG_MAX ? (a > b ? a : b) : (a < b ? a : b);
		rt_store_i64(dt, y->data, yi, a);
	} else {
		double a = rt_load_f64(dt, y->data, yi), b = rt_load_f64(dt, u->data, ui);

		a = r == KG_ADD ? a + b : r == KG_MUL ? a * b :
		    r == KG_MAX ? (a > b ? a : b) : (a < b ? a : b);
		rt_store_f64(dt, y->data, yi, a);
	}
	return 0;
}

static int copy_input(struct rt_kctx *k, struct rt_value *x, struct rt_value **y)
{
	if (!(*y = rt_out_tensor(k, 0, x->dtype, x->rank, x->dims)))
		return IR_ENOMEM;
	if (x->dtype == IR_DTYPE_STRING)
		memset((*y)->data, 0, (size_t)x->numel * sizeof(char *));
	return ks_copy(k, *y, 0, x, 0, x->numel);
}

static int k_scatter_elements(struct rt_kctx *k)
{
	struct rt_value *x, *ind, *u, *y;
	int64_t *offs = NULL;
	int r = KG_NONE;
	int axis, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &ind)) < 0 ||
	    (rc = rt_in_tensor(k, 2, &u)) < 0 ||
	    (rc = rt_axis(k, rt_attr_int(k, "axis", 0), x->rank, &axis)) < 0)
		return rc;
	if (!strcmp(ir_s(k->node->op_type), "ScatterElements") && k->version >= 16 &&
	    (rc = reduction(k, &r)) < 0)
		return rc;
	if (u->rank != ind->rank || rt_numel(u->rank, u->dims) != ind->numel ||
	    memcmp(u->dims, ind->dims, (size_t)u->rank * sizeof(int64_t)))
		return rt_err(k, "updates and indices differ in shape");
	if (u->dtype != x->dtype)
		return rt_err(k, "updates and data differ in dtype");
	if ((rc = element_offsets(k, x, ind, axis, &offs)) < 0)
		return rc;
	if ((rc = copy_input(k, x, &y)) < 0)
		goto cleanup;
	if (kg_typed(y->dtype, r)) {
		kg_scatter_elements(k, y, ind, u, axis, offs, r);
		goto cleanup;
	}
	for (int64_t j = 0; j < ind->numel; j++)
		if ((rc = apply(k, y, offs[j], u, j, r)) < 0)
			goto cleanup;
cleanup:
	free(offs);
	return rc;
}

static int k_scatter_nd(struct rt_kctx *k)
{
	struct rt_value *x, *ind, *u, *y;
	int64_t *offs = NULL, ns, slice;
	int r = KG_NONE;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &ind)) < 0 ||
	    (rc = rt_in_tensor(k, 2, &u)) < 0)
		return rc;
	if (k->version >= 16 && (rc = reduction(k, &r)) < 0)
		return rc;
	if (u->dtype != x->dtype)
		return rt_err(k, "updates and data differ in dtype");
	if ((rc = nd_offsets(k, x, ind, 0, &offs, &ns, &slice)) < 0)
		return rc;
	if (u->numel != ns * slice) {
		rc = rt_err(k, "updates have %lld elements, expected %lld",
			    (long long)u->numel, (long long)(ns * slice));
		goto cleanup;
	}
	if ((rc = copy_input(k, x, &y)) < 0)
		goto cleanup;
	if (kg_typed(y->dtype, r)) {
		kg_scatter_nd(k, y, u, offs, ns, slice, r);
		goto cleanup;
	}
	for (int64_t t = 0; t < ns; t++)
		for (int64_t j = 0; j < slice; j++)
			if ((rc = apply(k, y, offs[t] + j, u, t * slice + j, r)) < 0)
				goto cleanup;
cleanup:
	free(offs);
	return rc;
}

static int k_tensor_scatter(struct rt_kctx *k)
{
	struct rt_value *x, *u, *y;
	int64_t *wi = NULL, outer = 1, inner = 1, batch, max_len, len;
	const char *mode = rt_attr_str(k, "mode", "linear");
	int circ, axis, rc;
	size_t n = 0;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &u)) < 0 ||
	    (rc = rt_axis(k, rt_attr_int(k, "axis", -2), x->rank, &axis)) < 0)
		return rc;
	if (axis == 0)
		return rt_err(k, "axis cannot be the batch axis 0");
	if (strcmp(mode, "linear") && strcmp(mode, "circular"))
		return rt_err(k, "unknown mode '%s'", mode);
	circ = !strcmp(mode, "circular");
	if (u->rank != x->rank || u->dtype != x->dtype)
		return rt_err(k, "update differs in rank or dtype from past_cache");
	for (int i = 0; i < x->rank; i++) {
		if (i != axis && u->dims[i] != x->dims[i])
			return rt_err(k, "update dim %d (%lld) differs from the cache's (%lld)",
				      i, (long long)u->dims[i], (long long)x->dims[i]);
		if (i < axis)
			outer *= x->dims[i];
		else if (i > axis)
			inner *= x->dims[i];
	}
	batch = x->dims[0];
	max_len = x->dims[axis];
	len = u->dims[axis];
	if (len > max_len)
		return rt_err(k, "update length %lld above the cache's %lld",
			      (long long)len, (long long)max_len);
	if (rt_in(k, 2)) {
		if ((rc = rt_in_ints(k, 2, &wi, &n)) < 0)
			return rc;
		if ((int64_t)n != batch) {
			rc = rt_err(k, "write_indices has %zu entries for batch %lld", n,
				    (long long)batch);
			goto cleanup;
		}
	}
	if ((rc = copy_input(k, x, &y)) < 0)
		goto cleanup;
	for (int64_t o = 0; o < outer; o++) {
		int64_t b = o / (outer / (batch ? batch : 1)), w = wi ? wi[b] : 0;

		if (circ && max_len)
			w = ((w % max_len) + max_len) % max_len;
		if (w < 0 || w > max_len) {
			rc = rt_err(k, "write index %lld of batch %lld out of range [0, %lld]",
				    (long long)w, (long long)b, (long long)max_len);
			goto cleanup;
		}
		for (int64_t s = 0; s < len; s++) {
			int64_t c = w + s;

			if (circ)
				c = ((c % max_len) + max_len) % max_len;
			if (c < 0 || c >= max_len) {
				rc = rt_err(k, "write index %lld of batch %lld out of range [0, %lld)",
					    (long long)c, (long long)b, (long long)max_len);
				goto cleanup;
			}
			if ((rc = ks_copy(k, y, (o * max_len + c) * inner, u,
					  (o * len + s) * inner, inner)) < 0)
				goto cleanup;
		}
	}
cleanup:
	free(wi);
	return rc;
}

/* ---- Compress and OneHot --------------------------------------------- */

static int k_compress(struct rt_kctx *k)
{
	struct rt_value *x, *c, *y;
	int64_t *cond = NULL, dims[RT_MAX_RANK], outer = 1, inner = 1, d, cnt = 0, o = 0;
	size_t n;
	int axis = -1, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &c)) < 0)
		return rc;
	if (c->rank != 1)
		return rt_err(k, "condition must be 1-D, has rank %d", c->rank);
	if (rt_attr(k, "axis") &&
	    (rc = rt_axis(k, rt_attr_int(k, "axis", 0), x->rank, &axis)) < 0)
		return rc;
	if ((rc = rt_in_ints(k, 1, &cond, &n)) < 0)
		return rc;
	d = axis < 0 ? x->numel : x->dims[axis];
	for (size_t i = 0; i < n; i++) {
		if (!cond[i])
			continue;
		if ((int64_t)i >= d) {
			rc = rt_err(k, "condition selects index %zu beyond the axis size %lld",
				    i, (long long)d);
			goto cleanup;
		}
		cnt++;
	}
	if (axis < 0) {
		dims[0] = cnt;
	} else {
		memcpy(dims, x->dims, sizeof(dims));
		dims[axis] = cnt;
		for (int i = 0; i < x->rank; i++) {
			if (i < axis)
				outer *= x->dims[i];
			else if (i > axis)
				inner *= x->dims[i];
		}
	}
	if (!(y = rt_out_tensor(k, 0, x->dtype, axis < 0 ? 1 : x->rank, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	for (int64_t b = 0; b < outer; b++)
		for (size_t i = 0; i < n; i++)
			if (cond[i]) {
				if ((rc = ks_copy(k, y, o, x, (b * d + (int64_t)i) * inner, inner)) < 0)
					goto cleanup;
				o += inner;
			}
cleanup:
	free(cond);
	return rc;
}

static int k_one_hot(struct rt_kctx *k)
{
	struct rt_value *ind, *vals, *y;
	int64_t dims[RT_MAX_RANK], outer = 1, inner = 1, depth;
	double dd;
	int axis, r, rc;

	if ((rc = rt_in_tensor(k, 0, &ind)) < 0 || (rc = rt_in_double(k, 1, &dd)) < 0 ||
	    (rc = rt_in_tensor(k, 2, &vals)) < 0)
		return rc;
	if (vals->numel != 2)
		return rt_err(k, "values must hold 2 elements, has %lld", (long long)vals->numel);
	if (!(dd >= 1 && dd < 1e15))
		return rt_err(k, "depth must be positive and not huge, is %g", dd);
	depth = (int64_t)dd;
	r = ind->rank + 1;
	if (r > RT_MAX_RANK)
		return rt_err(k, "rank %d above the supported %d", r, RT_MAX_RANK);
	if ((rc = rt_axis(k, rt_attr_int(k, "axis", -1), r, &axis)) < 0)
		return rc;
	for (int i = 0, j = 0; i < r; i++) {
		if (i == axis) {
			dims[i] = depth;
			continue;
		}
		dims[i] = ind->dims[j++];
		if (i < axis)
			outer *= dims[i];
		else
			inner *= dims[i];
	}
	if (!(y = rt_out_tensor(k, 0, vals->dtype, r, dims)))
		return IR_ENOMEM;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t d = 0; d < depth; d++)
			for (int64_t i = 0; i < inner; i++) {
				int64_t src = o * inner + i, v;

				if (rt_dtype_is_int(ind->dtype)) {
					v = rt_load_i64(ind->dtype, ind->data, src);
				} else {
					double f = rt_load_f64(ind->dtype, ind->data, src);

					v = f > -1e15 && f < 1e15 ? (int64_t)f : depth;
				}
				if (v < 0)
					v += depth;
				if ((rc = ks_copy(k, y, (o * depth + d) * inner + i, vals,
						  v == d ? 1 : 0, 1)) < 0)
					return rc;
			}
	return 0;
}

const struct rt_kernel rt_kernels_gather[] = {
	{ "ai.onnx", "Compress", 9, RT_OPEN, k_compress },
	{ "ai.onnx", "Gather", 1, RT_OPEN, k_gather },
	{ "ai.onnx", "GatherElements", 11, RT_OPEN, k_gather_elements },
	{ "ai.onnx", "GatherND", 11, RT_OPEN, k_gather_nd },
	{ "ai.onnx", "OneHot", 9, RT_OPEN, k_one_hot },
	{ "ai.onnx", "Scatter", 9, RT_OPEN, k_scatter_elements },
	{ "ai.onnx", "ScatterElements", 11, RT_OPEN, k_scatter_elements },
	{ "ai.onnx", "ScatterND", 11, RT_OPEN, k_scatter_nd },
	{ "ai.onnx", "TensorScatter", 24, RT_OPEN, k_tensor_scatter },
};
const size_t rt_n_kernels_gather = sizeof(rt_kernels_gather) / sizeof(rt_kernels_gather[0]);
