/* k_shape.c: kernels of the shape family: views that only change dims
 * (Reshape, Flatten, Squeeze, Unsqueeze), shape queries (Shape, Size) and
 * tensors made from a shape (Expand, ConstantOfShape, Range, EyeLike,
 * NonZero).  See rt_int.h for how to add one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_shape_int.h"

static int bad_count(struct rt_kctx *k, const struct rt_value *x, size_t n,
		     const int64_t *shape)
{
	char a[160], b[160];

	rt_dims_text(x->rank, x->dims, a, sizeof(a));
	rt_dims_text((int)(n > RT_MAX_RANK ? RT_MAX_RANK : n), shape, b, sizeof(b));
	return rt_err(k, "cannot reshape %s (%lld elements) to %s", a,
		      (long long)x->numel, b);
}

static int k_reshape(struct rt_kctx *k)
{
	struct rt_value *x;
	int64_t *shape = NULL, dims[RT_MAX_RANK], known = 1;
	int allowzero = (int)rt_attr_int(k, "allowzero", 0), neg = -1, present, rc;
	size_t n;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if ((rc = ks_ints(k, k->version < 5 ? KS_NO_INPUT : 1, k->version < 5 ? "shape" : NULL,
			  &shape, &n, &present)) < 0)
		goto cleanup;
	if (!present) {
		rc = rt_err(k, "the target shape is missing");
		goto cleanup;
	}
	if (n > RT_MAX_RANK) {
		rc = rt_err(k, "target rank %zu above the supported %d", n, RT_MAX_RANK);
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t v = shape[i];

		if (v == 0 && !allowzero) {
			if ((int)i >= x->rank) {
				rc = rt_err(k, "shape entry %zu is 0 but the input has rank %d",
					    i, x->rank);
				goto cleanup;
			}
			dims[i] = x->dims[i];
		} else if (v == -1) {
			if (neg >= 0) {
				rc = rt_err(k, "more than one -1 in the target shape");
				goto cleanup;
			}
			neg = (int)i;
			continue;
		} else if (v < 0) {
			rc = rt_err(k, "invalid shape entry %lld", (long long)v);
			goto cleanup;
		} else {
			dims[i] = v;
		}
		if (dims[i] && known > INT64_MAX / dims[i]) {
			rc = bad_count(k, x, n, shape);
			goto cleanup;
		}
		known *= dims[i];
	}
	if (neg >= 0) {
		if (known == 0 || x->numel % known) {
			rc = bad_count(k, x, n, shape);
			goto cleanup;
		}
		dims[neg] = x->numel / known;
	}
	if (rt_numel((int)n, dims) != x->numel) {
		rc = bad_count(k, x, n, shape);
		goto cleanup;
	}
	rc = rt_out_view(k, 0, x, (int)n, dims);
cleanup:
	free(shape);
	return rc;
}

static int k_flatten(struct rt_kctx *k)
{
	struct rt_value *x;
	int64_t axis = rt_attr_int(k, "axis", 1), dims[2] = { 1, 1 };
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (axis < -x->rank || axis > x->rank)
		return rt_err(k, "axis %lld out of range for rank %d", (long long)axis,
			      x->rank);
	if (axis < 0)
		axis += x->rank;
	for (int i = 0; i < x->rank; i++)
		dims[i < axis ? 0 : 1] *= x->dims[i];
	return rt_out_view(k, 0, x, 2, dims);
}

static int k_squeeze(struct rt_kctx *k)
{
	struct rt_value *x;
	int64_t *axes = NULL, dims[RT_MAX_RANK];
	int ax[RT_MAX_RANK], drop[RT_MAX_RANK] = { 0 }, r = 0, present, rc;
	size_t n;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if ((rc = ks_ints(k, k->version >= 13 ? 1 : KS_NO_INPUT, "axes", &axes, &n,
			  &present)) < 0)
		goto cleanup;
	if ((rc = ks_axes(k, axes, n, x->rank, ax)) < 0)
		goto cleanup;
	for (size_t i = 0; i < n; i++) {
		if (x->dims[ax[i]] != 1) {
			rc = rt_err(k, "cannot squeeze axis %d of size %lld", ax[i],
				    (long long)x->dims[ax[i]]);
			goto cleanup;
		}
		drop[ax[i]] = 1;
	}
	for (int i = 0; i < x->rank; i++)
		if (!(n ? drop[i] : x->dims[i] == 1))
			dims[r++] = x->dims[i];
	rc = rt_out_view(k, 0, x, r, dims);
cleanup:
	free(axes);
	return rc;
}

static int k_unsqueeze(struct rt_kctx *k)
{
	struct rt_value *x;
	int64_t *axes = NULL, dims[RT_MAX_RANK];
	int ax[RT_MAX_RANK], ins[RT_MAX_RANK] = { 0 }, r, present, rc;
	size_t n;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if ((rc = ks_ints(k, k->version >= 13 ? 1 : KS_NO_INPUT, "axes", &axes, &n,
			  &present)) < 0)
		goto cleanup;
	if (!present) {
		rc = rt_err(k, "axes are missing");
		goto cleanup;
	}
	r = x->rank + (int)n;
	if (r > RT_MAX_RANK) {
		rc = rt_err(k, "rank %d above the supported %d", r, RT_MAX_RANK);
		goto cleanup;
	}
	if ((rc = ks_axes(k, axes, n, r, ax)) < 0)
		goto cleanup;
	for (size_t i = 0; i < n; i++)
		ins[ax[i]] = 1;
	for (int i = 0, j = 0; i < r; i++)
		dims[i] = ins[i] ? 1 : x->dims[j++];
	rc = rt_out_view(k, 0, x, r, dims);
cleanup:
	free(axes);
	return rc;
}

static int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int k_shape(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	int64_t start = rt_attr_int(k, "start", 0), end, n;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	end = rt_attr_int(k, "end", x->rank);
	if (start < 0)
		start += x->rank;
	if (end < 0)
		end += x->rank;
	start = clamp_i64(start, 0, x->rank);
	end = clamp_i64(end, 0, x->rank);
	n = end > start ? end - start : 0;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_INT64, 1, &n)))
		return IR_ENOMEM;
	for (int64_t i = 0; i < n; i++)
		((int64_t *)y->data)[i] = x->dims[start + i];
	return 0;
}

static int k_size(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_INT64, 0, NULL)))
		return IR_ENOMEM;
	*(int64_t *)y->data = x->numel;
	return 0;
}

static int k_expand(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	int64_t *shape = NULL, dims[RT_MAX_RANK], st[RT_MAX_RANK];
	size_t n;
	int r, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 ||
	    (rc = rt_in_ints(k, 1, &shape, &n)) < 0)
		goto cleanup;
	r = (int)n > x->rank ? (int)n : x->rank;
	if (r > RT_MAX_RANK) {
		rc = rt_err(k, "rank %d above the supported %d", r, RT_MAX_RANK);
		goto cleanup;
	}
	for (int i = 0; i < r; i++) {
		int xi = i - (r - x->rank), si = i - (r - (int)n);
		int64_t a = xi >= 0 ? x->dims[xi] : 1, b = si >= 0 ? shape[si] : 1;

		if (b < 0 || (a != b && a != 1 && b != 1)) {
			char t1[160], t2[160];

			rt_dims_text(x->rank, x->dims, t1, sizeof(t1));
			rt_dims_text((int)n, shape, t2, sizeof(t2));
			rc = rt_err(k, "cannot expand %s to %s", t1, t2);
			goto cleanup;
		}
		dims[i] = a == 1 ? b : a;
	}
	rt_broadcast_strides(x, r, dims, st);
	if (!(y = rt_out_tensor(k, 0, x->dtype, r, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	rc = ks_strided_copy(k, y, x, 0, r, dims, st);
cleanup:
	free(shape);
	return rc;
}

static int k_constant_of_shape(struct rt_kctx *k)
{
	struct rt_value *v = NULL, *y;
	int64_t *shape = NULL;
	size_t n;
	int rc;

	if ((rc = rt_in_ints(k, 0, &shape, &n)) < 0)
		goto cleanup;
	if (rt_attr(k, "value") && (rc = rt_attr_tensor(k, "value", &v)) < 0)
		goto cleanup;
	if (v && v->numel != 1) {
		rc = rt_err(k, "attribute 'value' must hold one element, has %lld",
			    (long long)v->numel);
		goto cleanup;
	}
	if (n > RT_MAX_RANK) {
		rc = rt_err(k, "rank %zu above the supported %d", n, RT_MAX_RANK);
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++)
		if (shape[i] < 0) {
			rc = rt_err(k, "negative dimension %lld", (long long)shape[i]);
			goto cleanup;
		}
	if (!(y = rt_out_tensor(k, 0, v ? v->dtype : IR_DTYPE_FLOAT, (int)n, shape))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	if (y->dtype != IR_DTYPE_STRING && y->numel > 0) {
		/* the value once, then repeated: a light model's weights are
		 * ConstantOfShape outputs */
		size_t es = rt_dtype_size(y->dtype);

		if (v)
			memcpy(y->data, v->data, es);
		else
			memset(y->data, 0, es);
		rt_fill_repeat(y->data, es, y->numel);
		goto cleanup;
	}
	for (int64_t i = 0; i < y->numel; i++)
		if ((rc = v ? ks_copy(k, y, i, v, 0, 1) : ks_zero(k, y, i)) < 0)
			goto cleanup;
cleanup:
	rt_value_unref(v);
	free(shape);
	return rc;
}

static int k_range(struct rt_kctx *k)
{
	struct rt_value *s, *y;
	int64_t n;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &s)) < 0)
		return rc;
	if (rt_dtype_is_int(s->dtype)) {
		int64_t a, b, d;

		if ((rc = rt_in_int(k, 0, &a)) < 0 || (rc = rt_in_int(k, 1, &b)) < 0 ||
		    (rc = rt_in_int(k, 2, &d)) < 0)
			return rc;
		if (d == 0)
			return rt_err(k, "delta is 0");
		if (d > 0 ? b > a : a > b) {
			/* unsigned: limit - start may not fit in int64 */
			uint64_t diff = d > 0 ? (uint64_t)b - (uint64_t)a : (uint64_t)a - (uint64_t)b;
			uint64_t step = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
			uint64_t cnt = diff / step + (diff % step != 0);

			if (cnt > (uint64_t)1 << 40)
				return rt_err(k, "range of %llu elements too large",
					      (unsigned long long)cnt);
			n = (int64_t)cnt;
		} else {
			n = 0;
		}
		if (!(y = rt_out_tensor(k, 0, s->dtype, 1, &n)))
			return IR_ENOMEM;
		for (int64_t i = 0; i < n; i++)
			rt_store_i64(s->dtype, y->data, i,
				     (int64_t)((uint64_t)a + (uint64_t)i * (uint64_t)d));
	} else {
		double a, b, d, c;

		if ((rc = rt_in_double(k, 0, &a)) < 0 || (rc = rt_in_double(k, 1, &b)) < 0 ||
		    (rc = rt_in_double(k, 2, &d)) < 0)
			return rc;
		if (d == 0)
			return rt_err(k, "delta is 0");
		c = ceil((b - a) / d);
		if (!(c < 1e15))
			return rt_err(k, "range of %g elements too large", c);
		n = c > 0 ? (int64_t)c : 0;
		if (!(y = rt_out_tensor(k, 0, s->dtype, 1, &n)))
			return IR_ENOMEM;
		for (int64_t i = 0; i < n; i++)
			rt_store_f64(s->dtype, y->data, i, a + (double)i * d);
	}
	return 0;
}

static int k_eye_like(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	int64_t off = rt_attr_int(k, "k", 0);
	int rc, dt;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (x->rank != 2)
		return rt_err(k, "input must be 2-D, has rank %d", x->rank);
	dt = (int)rt_attr_int(k, "dtype", x->dtype);
	if (dt == IR_DTYPE_STRING)
		return rt_err(k, "dtype string is not allowed");
	if (!(y = rt_out_tensor(k, 0, dt, 2, x->dims)))
		return IR_ENOMEM;
	memset(y->data, 0, (size_t)y->numel * rt_dtype_size(dt));
	for (int64_t i = 0; i < x->dims[0] && off < x->dims[1] && off > -x->dims[0]; i++) {
		int64_t j = i + off;

		if (j >= 0 && j < x->dims[1])
			rt_store_i64(dt, y->data, i * x->dims[1] + j, 1);
	}
	return 0;
}

static int nonzero_at(const struct rt_value *x, int64_t i)
{
	if (x->dtype == IR_DTYPE_STRING) {
		const char *s = ((char *const *)x->data)[i];

		return s && *s;
	}
	if (rt_dtype_is_int(x->dtype) || x->dtype == IR_DTYPE_BOOL)
		return rt_load_i64(x->dtype, x->data, i) != 0;
	return rt_load_f64(x->dtype, x->data, i) != 0;
}

static int k_nonzero(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	int64_t cnt = 0, dims[2], j = 0, st[RT_MAX_RANK];
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	for (int64_t i = 0; i < x->numel; i++)
		cnt += nonzero_at(x, i);
	dims[0] = x->rank;
	dims[1] = cnt;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_INT64, 2, dims)))
		return IR_ENOMEM;
	ks_strides(x->rank, x->dims, st);
	for (int64_t i = 0; i < x->numel; i++) {
		int64_t rem = i;

		if (!nonzero_at(x, i))
			continue;
		for (int d = 0; d < x->rank; d++) {
			((int64_t *)y->data)[d * cnt + j] = rem / st[d];
			rem %= st[d];
		}
		j++;
	}
	return 0;
}

const struct rt_kernel rt_kernels_shape[] = {
	{ "ai.onnx", "ConstantOfShape", 9, RT_OPEN, k_constant_of_shape },
	{ "ai.onnx", "Expand", 8, RT_OPEN, k_expand },
	{ "ai.onnx", "EyeLike", 9, RT_OPEN, k_eye_like },
	{ "ai.onnx", "Flatten", 1, RT_OPEN, k_flatten },
	{ "ai.onnx", "NonZero", 9, RT_OPEN, k_nonzero },
	{ "ai.onnx", "Range", 11, RT_OPEN, k_range },
	{ "ai.onnx", "Reshape", 1, RT_OPEN, k_reshape },
	{ "ai.onnx", "Shape", 1, RT_OPEN, k_shape },
	{ "ai.onnx", "Size", 1, RT_OPEN, k_size },
	{ "ai.onnx", "Squeeze", 1, RT_OPEN, k_squeeze },
	{ "ai.onnx", "Unsqueeze", 1, RT_OPEN, k_unsqueeze },
};
const size_t rt_n_kernels_shape = sizeof(rt_kernels_shape) / sizeof(rt_kernels_shape[0]);
