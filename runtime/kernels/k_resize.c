/* k_resize.c: kernels of the resize family: Resize (every opset's inputs,
 * modes nearest/linear/cubic, coordinate transformations, antialias,
 * axes, aspect-ratio policies) and Upsample, plus the table lines of
 * GridSample and AffineGrid (k_resize_grid.c).  Nearest moves elements of any
 * dtype; linear and cubic run one separable pass per resized axis, in
 * float32 for float32 data (but under tf_crop_and_resize, whose
 * extrapolated elements the double path marks) and in double otherwise.  See rt_int.h for how to add one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer.h"
#include "runtime/kernels/k_shape_int.h"

enum rs_mode { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum rs_coord {
	CT_HALF_PIXEL, CT_HALF_PIXEL_SYM, CT_PYTORCH_HALF_PIXEL, CT_ALIGN_CORNERS,
	CT_ASYMMETRIC, CT_TF_HALF_PIXEL_NN, CT_TF_CROP
};
enum rs_near { NM_ROUND_FLOOR, NM_ROUND_CEIL, NM_FLOOR, NM_CEIL, NM_SIMPLE };

struct rs_params {
	enum rs_mode mode;
	enum rs_coord ct;
	enum rs_near nm;
	double a;               /* cubic_coeff_a */
	int exclude, antialias;
	double extrap;
	int rank;
	int64_t in[RT_MAX_RANK], out[RT_MAX_RANK];
	/* scale: the one the coordinate formulas divide by (the scales input
	 * as given, sizes / input, or the aspect-ratio policy's); target: the
	 * fractional output length scale * input (half_pixel_symmetric) */
	double scale[RT_MAX_RANK], target[RT_MAX_RANK];
	double roi_s[RT_MAX_RANK], roi_e[RT_MAX_RANK];
};

static const struct { const char *name; int v; } coords[] = {
	{ "align_corners", CT_ALIGN_CORNERS },
	{ "asymmetric", CT_ASYMMETRIC },
	{ "half_pixel", CT_HALF_PIXEL },
	{ "half_pixel_symmetric", CT_HALF_PIXEL_SYM },
	{ "pytorch_half_pixel", CT_PYTORCH_HALF_PIXEL },
	{ "tf_crop_and_resize", CT_TF_CROP },
	{ "tf_half_pixel_for_nn", CT_TF_HALF_PIXEL_NN },
}, nearests[] = {
	{ "ceil", NM_CEIL },
	{ "floor", NM_FLOOR },
	{ "round_prefer_ceil", NM_ROUND_CEIL },
	{ "round_prefer_floor", NM_ROUND_FLOOR },
}, modes[] = {
	{ "bilinear", RS_LINEAR },
	{ "cubic", RS_CUBIC },
	{ "linear", RS_LINEAR },
	{ "nearest", RS_NEAREST },
};

#define LOOKUP(tab, s, out) lookup(tab, sizeof(tab) / sizeof(tab[0]), s, out)

static int lookup(const void *tab, size_t n, const char *s, int *out)
{
	const struct { const char *name; int v; } *t = tab;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, s)) {
			*out = t[i].v;
			return 0;
		}
	return -1;
}

/* Input coordinate of output coordinate x along axis d, the formulas of
 * coordinate_transformation_mode.  length_resized is the output's length
 * (an integer): the ONNX reference implementation's scale * input length
 * there is not what the text says, and not what onnxruntime computes
 * (align_corners with scale 1.5 on 11 maps 15 to 10 over 16 - 1, not
 * over 16.5 - 1).  An output of length 1 maps to 0 under align_corners
 * (the text divides by zero) and pytorch_half_pixel (as written). */
static double orig_coord(const struct rs_params *p, int d, int64_t x)
{
	double s = p->scale[d], in = (double)p->in[d], out = (double)p->out[d];
	double xd = (double)x;

	switch (p->ct) {
	case CT_HALF_PIXEL:
		return (xd + 0.5) / s - 0.5;
	case CT_HALF_PIXEL_SYM: {
		double adj = out / p->target[d], off = in / 2 * (1 - adj);

		return off + (xd + 0.5) / s - 0.5;
	}
	case CT_PYTORCH_HALF_PIXEL:
		return out > 1 ? (xd + 0.5) / s - 0.5 : 0;
	case CT_ALIGN_CORNERS:
		return out > 1 ? xd * (in - 1) / (out - 1) : 0;
	case CT_ASYMMETRIC:
		return xd / s;
	case CT_TF_HALF_PIXEL_NN:
		return (xd + 0.5) / s;
	case CT_TF_CROP:
		return out > 1 ? p->roi_s[d] * (in - 1) +
				 xd * (p->roi_e[d] - p->roi_s[d]) * (in - 1) / (out - 1) :
		       0.5 * (p->roi_s[d] + p->roi_e[d]) * (in - 1);
	}
	return 0;
}

/* An axis the node does not resize (scale 1, same length, no roi to crop)
 * is copied: tf_half_pixel_for_nn would otherwise move it by half an
 * element, which no exporter means (onnxruntime and the ONNX reference
 * copy it too). */
static int axis_kept(const struct rs_params *p, int d)
{
	return p->out[d] == p->in[d] && p->scale[d] == 1 && p->ct != CT_TF_CROP;
}

/* A coordinate bounded so that int64 conversions stay defined (NaN goes
 * to the low end). */
static double bounded(double x)
{
	return !(x >= -1e12) ? -1e12 : x > 1e12 ? 1e12 : x;
}

static int outside(const struct rs_params *p, int d, double x)
{
	return p->ct == CT_TF_CROP && (x < 0 || x > (double)(p->in[d] - 1));
}

/* A weighted sum (or extrapolation_value) as an element of an integer
 * dtype t: truncated toward zero, as onnxruntime's linear kernels do (the
 * specification says nothing), and saturated to the type's range, which
 * cubic overshoots (the ONNX reference saturates too); other dtypes keep
 * v. */
static double int_result(int t, double v)
{
	double lo, hi;

	switch (t) {
	case IR_DTYPE_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
	case IR_DTYPE_UINT8: lo = 0; hi = UINT8_MAX; break;
	case IR_DTYPE_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
	case IR_DTYPE_UINT16: lo = 0; hi = UINT16_MAX; break;
	case IR_DTYPE_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
	case IR_DTYPE_UINT32: lo = 0; hi = UINT32_MAX; break;
	case IR_DTYPE_INT64: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
	case IR_DTYPE_UINT64: lo = 0; hi = 18446744073709551615.0; break;
	default: return v;
	}
	if (isnan(v))
		return 0;
	v = trunc(v);
	return v < lo ? lo : v > hi ? hi : v;
}

/* ---- nearest ---------------------------------------------------------- */

static int64_t nearest_index(const struct rs_params *p, int d, double x)
{
	double f, r;
	int64_t i;

	x = bounded(x);
	f = floor(x);
	r = x - f;

	if (r == 0) {
		i = (int64_t)f;
	} else {
		switch (p->nm) {
		case NM_ROUND_FLOOR: i = (int64_t)f + (r > 0.5); break;
		case NM_ROUND_CEIL: i = (int64_t)f + (r >= 0.5); break;
		case NM_FLOOR: i = (int64_t)f; break;
		case NM_CEIL: i = (int64_t)f + 1; break;
		default: i = (int64_t)f + (p->scale[d] < 1); break;
		}
	}
	return i < 0 ? 0 : i >= p->in[d] ? p->in[d] - 1 : i;
}

/* Whether an output element falls outside the input (an extrapolation
 * value: tf_crop_and_resize). */
static int nearest_extrapolates(const struct rs_params *p, int64_t *const *map)
{
	for (int d = 0; d < p->rank; d++)
		for (int64_t o = 0; o < p->out[d]; o++)
			if (map[d][o] < 0)
				return 1;
	return 0;
}

/* The output in rows along the last axis (the channels of a channels-last
 * value): a row whose source row is its predecessor's is a copy of that
 * output row, a row of the last axis kept is one copy, other rows gather
 * by the last axis' map in the element's width. */
struct nr_job {
	const struct rs_params *p;
	int64_t *const *map;
	const char *x;
	char *y;
	size_t es;
	int64_t n;          /* elements of an output row */
	int same_last;      /* the last axis kept whole */
};

static void nr_gather(const struct nr_job *j, char *dst, const char *src)
{
	const int64_t *m = j->map[j->p->rank - 1], n = j->n;

	switch (j->es) {
	case 1:
		for (int64_t i = 0; i < n; i++)
			dst[i] = src[m[i]];
		break;
	case 2:
		for (int64_t i = 0; i < n; i++)
			((uint16_t *)dst)[i] = ((const uint16_t *)src)[m[i]];
		break;
	case 4:
		for (int64_t i = 0; i < n; i++)
			((uint32_t *)dst)[i] = ((const uint32_t *)src)[m[i]];
		break;
	case 8:
		for (int64_t i = 0; i < n; i++)
			((uint64_t *)dst)[i] = ((const uint64_t *)src)[m[i]];
		break;
	default:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + (size_t)i * j->es, src + (size_t)m[i] * j->es, j->es);
	}
}

static void nr_range(void *ctx, int64_t begin, int64_t end)
{
	const struct nr_job *j = ctx;
	const struct rs_params *p = j->p;
	int outer = p->rank - 1;
	int64_t idx[RT_MAX_RANK], rem = begin, prev = -1;
	size_t row = (size_t)j->n * j->es;

	for (int d = outer - 1; d >= 0; d--) {
		idx[d] = rem % p->out[d];
		rem /= p->out[d];
	}
	for (int64_t o = begin; o < end; o++) {
		int64_t s = 0;
		char *dst = j->y + (size_t)o * row;

		for (int d = 0; d < outer; d++)
			s += j->map[d][idx[d]];
		if (s == prev)
			memcpy(dst, dst - row, row);
		else if (j->same_last)
			memcpy(dst, j->x + (size_t)s * j->es, row);
		else
			nr_gather(j, dst, j->x + (size_t)s * j->es);
		prev = s;
		for (int d = outer - 1; d >= 0; d--) {
			if (++idx[d] < p->out[d])
				break;
			idx[d] = 0;
		}
	}
}

static void nearest_rows(struct rt_kctx *k, const struct rs_params *p, int64_t *const *map,
			 const struct rt_value *x, struct rt_value *y)
{
	int last = p->rank - 1;
	struct nr_job j = { p, map, x->data, y->data, rt_dtype_size(y->dtype), 1, 0 };
	int64_t rows = 1;

	if (y->numel == 0)
		return;
	if (last >= 0) {
		j.n = p->out[last];
		j.same_last = p->in[last] == p->out[last];
		for (int64_t o = 0; o < j.n && j.same_last; o++)
			j.same_last = map[last][o] == o;
		rows = y->numel / j.n;
	}
	rt_parallel_for(k, rows, 1 + (16384 / (j.n * (int64_t)j.es + 1)), nr_range, &j);
}

static int run_nearest(struct rt_kctx *k, const struct rs_params *p,
		       struct rt_value *x, struct rt_value *y)
{
	int64_t *map[RT_MAX_RANK] = { 0 }, xs[RT_MAX_RANK], idx[RT_MAX_RANK] = { 0 };
	int r = p->rank, rc = 0;

	ks_strides(r, x->dims, xs);
	for (int d = 0; d < r; d++) {
		if (!(map[d] = malloc((size_t)(p->out[d] ? p->out[d] : 1) * sizeof(int64_t)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		for (int64_t o = 0; o < p->out[d]; o++) {
			double c = orig_coord(p, d, o);

			if (axis_kept(p, d))
				map[d][o] = o * xs[d];
			else
				map[d][o] = outside(p, d, c) ? -1 : nearest_index(p, d, c) * xs[d];
		}
	}
	if (y->dtype != IR_DTYPE_STRING && !nearest_extrapolates(p, map)) {
		nearest_rows(k, p, map, x, y);
		goto cleanup;
	}
	for (int64_t o = 0; o < y->numel; o++) {
		int64_t s = 0;
		int ext = 0;

		for (int d = 0; d < r; d++) {
			int64_t m = map[d][idx[d]];

			if (m < 0)
				ext = 1;
			s += m;
		}
		if (!ext)
			rc = ks_copy(k, y, o, x, s, 1);
		else if (y->dtype == IR_DTYPE_STRING)
			rc = ks_zero(k, y, o);
		else
			rt_store_f64(y->dtype, y->data, o, int_result(y->dtype, p->extrap));
		if (rc < 0)
			goto cleanup;
		for (int d = r - 1; d >= 0; d--) {
			if (++idx[d] < p->out[d])
				break;
			idx[d] = 0;
		}
	}
cleanup:
	for (int d = 0; d < r; d++)
		free(map[d]);
	return rc;
}

/* ---- linear and cubic: one pass per axis ------------------------------ */

static double kernel(const struct rs_params *p, double d)
{
	double a = p->a;

	if (p->mode == RS_LINEAR)
		return d < 1 ? 1 - d : 0;
	if (d < 1)
		return ((a + 2) * d - (a + 3)) * d * d + 1;
	if (d < 2)
		return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
	return 0;
}

/* One pass along an axis in T (double, or float for float32 data): each
 * output row the taps' weighted input rows (inner elements each); a row
 * whose first tap is -1 (tf_crop_and_resize outside the input) is the
 * extrapolation value. */
#define RS_PASS(name, T) \
struct name { \
	const T *src; \
	T *dst; \
	int64_t in_len, out_len, inner, n_taps; \
	const int64_t *tap_idx;   /* out_len * n_taps, -1: extrapolate */ \
	const T *tap_w; \
	T extrap; \
}; \
static void name##_rows(void *arg, int64_t begin, int64_t end) \
{ \
	const struct name *q = arg; \
	int64_t o = begin / q->out_len, l = begin % q->out_len; \
	for (int64_t row = begin; row < end; row++, l = l + 1 == q->out_len ? (o++, 0) : l + 1) { \
		T *dst = q->dst + row * q->inner; \
		const int64_t *ti = q->tap_idx + l * q->n_taps; \
		const T *tw = q->tap_w + l * q->n_taps; \
		if (ti[0] < 0) { \
			for (int64_t i = 0; i < q->inner; i++) \
				dst[i] = q->extrap; \
			continue; \
		} \
		if (q->inner == 1) {   /* the last axis: one element a row */ \
			const T *src = q->src + o * q->in_len; \
			T acc = 0; \
			for (int64_t t = 0; t < q->n_taps; t++) \
				if (tw[t] != 0) \
					acc += tw[t] * src[ti[t]]; \
			*dst = acc; \
			continue; \
		} \
		for (int64_t i = 0; i < q->inner; i++) \
			dst[i] = 0; \
		for (int64_t t = 0; t < q->n_taps; t++) { \
			const T *src = q->src + (o * q->in_len + ti[t]) * q->inner; \
			T w = tw[t]; \
			if (w == 0) \
				continue; \
			for (int64_t i = 0; i < q->inner; i++) \
				dst[i] += w * src[i]; \
		} \
	} \
}
RS_PASS(pass, double)
RS_PASS(pass32, float)

/* Axis d's pass over a tensor of dims: *outer rows before the axis,
 * *inner elements after it, its input and output lengths; the result's
 * element count. */
static int64_t pass_shape(const struct rs_params *p, const int64_t *dims, int d, int64_t *outer,
			  int64_t *inner, int64_t *in_len, int64_t *out_len)
{
	*outer = *inner = 1;
	for (int i = 0; i < d; i++)
		*outer *= dims[i];
	for (int i = d + 1; i < p->rank; i++)
		*inner *= dims[i];
	*in_len = dims[d];
	*out_len = p->out[d];
	return *outer * *out_len * *inner;
}

/* Taps of every output coordinate along axis d. */
static int make_taps(struct rt_kctx *k, const struct rs_params *p, int d,
		     int64_t **idx_out, double **w_out, int64_t *n_taps)
{
	double se = p->antialias && p->scale[d] < 1 ? p->scale[d] : 1;
	int64_t start = (int64_t)floor((p->mode == RS_LINEAR ? -1 : -2) / se) + 1;
	int64_t n = 2 - 2 * start, in = p->in[d];
	int64_t *ti;
	double *tw;

	if (n > 1000000 || (uint64_t)n * (uint64_t)(p->out[d] + 1) > (1u << 28))
		return rt_err(k, "scale %g along axis %d needs too many taps", p->scale[d], d);
	ti = malloc((size_t)(n * (p->out[d] + 1)) * sizeof(*ti));
	tw = malloc((size_t)(n * (p->out[d] + 1)) * sizeof(*tw));
	if (!ti || !tw) {
		free(ti);
		free(tw);
		return rt_oom(k);
	}
	for (int64_t o = 0; o < p->out[d]; o++) {
		double x = bounded(orig_coord(p, d, o)), f = floor(x), sum = 0;
		int64_t *ii = ti + o * n;
		double *ww = tw + o * n;

		if (outside(p, d, x)) {
			for (int64_t t = 0; t < n; t++) {
				ii[t] = -1;
				ww[t] = 0;
			}
			continue;
		}
		for (int64_t t = 0; t < n; t++) {
			int64_t id = (int64_t)f + start + t;

			ww[t] = kernel(p, fabs(x - (double)id) * se);
			if (p->exclude && (id < 0 || id >= in))
				ww[t] = 0;
			sum += ww[t];
			ii[t] = id < 0 ? 0 : id >= in ? in - 1 : id;
		}
		if ((p->antialias || p->exclude) && sum != 0)
			for (int64_t t = 0; t < n; t++)
				ww[t] /= sum;
	}
	*idx_out = ti;
	*w_out = tw;
	*n_taps = n;
	return 0;
}

/* Store the result cur (row-major over p->out) into y: integers through
 * int_result, and every element whose coordinate on some axis fell outside
 * the input under tf_crop_and_resize exactly extrapolation_value (the
 * passes after that axis's scaled it by weights summing to 1 only up to
 * rounding).  ext[d] flags those coordinates (NULL: none on axis d). */
static void store_result(const struct rs_params *p, struct rt_value *y, const double *cur,
			 unsigned char *const *ext)
{
	int64_t idx[RT_MAX_RANK] = { 0 };
	int any = 0;

	for (int d = 0; d < p->rank; d++)
		any |= ext[d] != NULL;
	for (int64_t i = 0; i < y->numel; i++) {
		double v = cur[i];

		if (any) {
			for (int d = 0; d < p->rank; d++)
				if (ext[d] && ext[d][idx[d]])
					v = p->extrap;
			for (int d = p->rank - 1; d >= 0; d--) {
				if (++idx[d] < p->out[d])
					break;
				idx[d] = 0;
			}
		}
		rt_store_f64(y->dtype, y->data, i, int_result(y->dtype, v));
	}
}

/* The last axis's pass in float32 (inner 1, no extrapolation), NT taps:
 * each output element the same sum as pass32_rows's, a row of the input
 * at a time in a loop the compiler vectorizes (that pass spent 2.4 ns an
 * element on a 256-channel 2-D upsampling, onnxruntime 1.5 in all). */
#if defined(__GNUC__) && !defined(__clang__)
/* no-trapping-math: the zero weight's select becomes a blend (no FP
 * exception flags are observed anywhere; gcc only, as kel_erf_f32) */
#define LAST_AXIS_ATTR __attribute__((target_clones("avx512f", "avx2", "default"), \
				      optimize("no-trapping-math")))
#else
#define LAST_AXIS_ATTR
#endif
#define LAST_AXIS(NT) \
LAST_AXIS_ATTR \
static void last_axis##NT(const float *restrict src, float *restrict dst, int64_t rows, \
			  int64_t in_len, int64_t out_len, const int64_t *restrict ti, \
			  const float *restrict tw) \
{ \
	for (int64_t o = 0; o < rows; o++, src += in_len, dst += out_len) \
		for (int64_t l = 0; l < out_len; l++) { \
			float acc = 0; \
			_Pragma("GCC unroll 4") \
			for (int t = 0; t < NT; t++) { \
				float w = tw[l * NT + t]; \
				acc = w != 0 ? acc + w * src[ti[l * NT + t]] : acc; \
			} \
			dst[l] = acc; \
		} \
}
LAST_AXIS(2)
LAST_AXIS(4)

/* Whether every tap of q reads the input (none extrapolates) */
static int taps_inside(const struct pass32 *q)
{
	for (int64_t i = 0; i < q->out_len * q->n_taps; i++)
		if (q->tap_idx[i] < 0 || q->tap_idx[i] >= q->in_len)
			return 0;
	return 1;
}

static void last_axis_rows(void *arg, int64_t begin, int64_t end)
{
	const struct pass32 *q = arg;

	const float *src = q->src + begin * q->in_len;
	float *dst = q->dst + begin * q->out_len;

	if (q->n_taps == 2)
		last_axis2(src, dst, end - begin, q->in_len, q->out_len, q->tap_idx, q->tap_w);
	else
		last_axis4(src, dst, end - begin, q->in_len, q->out_len, q->tap_idx, q->tap_w);
}

/* float32 without tf_crop_and_resize: the same passes in float32 (as
 * onnxruntime computes them), the first reading x, the last writing y,
 * none through double (a U-Net's 2x upsampling spent 90% of its time
 * converting). */
static int run_interp_f32(struct rt_kctx *k, const struct rs_params *p,
			  struct rt_value *x, struct rt_value *y)
{
	int64_t dims[RT_MAX_RANK];
	float *own = NULL, *next = NULL;
	const float *cur = x->data;
	int last = -1, rc = 0;

	for (int d = 0; d < p->rank; d++)
		if (!axis_kept(p, d))
			last = d;
	if (last < 0) {
		memcpy(y->data, x->data, (size_t)x->numel * sizeof(float));
		return 0;
	}
	memcpy(dims, x->dims, sizeof(dims));
	for (int d = 0; d <= last; d++) {
		struct pass32 q;
		int64_t *ti = NULL, outer, total;
		double *tw = NULL;
		float *tw32;

		if (axis_kept(p, d))
			continue;
		total = pass_shape(p, dims, d, &outer, &q.inner, &q.in_len, &q.out_len);
		if (total && q.in_len == 0) {
			rc = rt_err(k, "cannot resize an empty axis %d to %lld", d,
				    (long long)q.out_len);
			break;
		}
		next = d == last ? y->data : malloc((size_t)(total ? total : 1) * sizeof(float));
		if (!next) {
			rc = rt_oom(k);
			break;
		}
		if ((rc = make_taps(k, p, d, &ti, &tw, &q.n_taps)) < 0)
			break;
		if (!(tw32 = malloc((size_t)(q.n_taps * (q.out_len + 1)) * sizeof(float)))) {
			free(ti);
			free(tw);
			rc = rt_oom(k);
			break;
		}
		for (int64_t i = 0; i < q.n_taps * q.out_len; i++)
			tw32[i] = (float)tw[i];
		q.src = cur;
		q.dst = next;
		q.tap_idx = ti;
		q.tap_w = tw32;
		q.extrap = 0;
		if (q.inner == 1 && (q.n_taps == 2 || q.n_taps == 4) && taps_inside(&q))
			rt_parallel_for(k, outer, 1 + 4096 / (q.out_len * q.n_taps + 1),
					last_axis_rows, &q);
		else
			rt_parallel_for(k, outer * q.out_len, 1 + 4096 / (q.inner * q.n_taps + 1),
					pass32_rows, &q);
		free(ti);
		free(tw);
		free(tw32);
		free(own);
		own = next == y->data ? NULL : next;
		cur = next;
		next = NULL;
		dims[d] = p->out[d];
	}
	if (next != y->data)
		free(next);
	free(own);
	return rc;
}

static int run_interp(struct rt_kctx *k, const struct rs_params *p,
		      struct rt_value *x, struct rt_value *y)
{
	int64_t dims[RT_MAX_RANK], total = x->numel;
	unsigned char *ext[RT_MAX_RANK] = { 0 };
	double *cur, *next = NULL;
	int rc = 0;

	if (x->dtype == IR_DTYPE_FLOAT && p->ct != CT_TF_CROP)
		return run_interp_f32(k, p, x, y);
	if (x->dtype == IR_DTYPE_STRING)
		return rt_err(k, "linear and cubic modes need numbers, not strings");
	if (!(cur = malloc((size_t)(total ? total : 1) * sizeof(double))))
		return rt_oom(k);
	for (int64_t i = 0; i < total; i++)
		cur[i] = rt_load_f64(x->dtype, x->data, i);
	memcpy(dims, x->dims, sizeof(dims));
	for (int d = 0; d < p->rank; d++) {
		struct pass q;
		int64_t *ti = NULL, outer;
		double *tw = NULL;

		if (axis_kept(p, d))
			continue;
		total = pass_shape(p, dims, d, &outer, &q.inner, &q.in_len, &q.out_len);
		if (!(next = malloc((size_t)(total ? total : 1) * sizeof(double)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		if (total && q.in_len == 0) {
			rc = rt_err(k, "cannot resize an empty axis %d to %lld", d,
				    (long long)q.out_len);
			goto cleanup;
		}
		if ((rc = make_taps(k, p, d, &ti, &tw, &q.n_taps)) < 0)
			goto cleanup;
		if (p->ct == CT_TF_CROP) {
			if (!(ext[d] = malloc((size_t)(q.out_len ? q.out_len : 1)))) {
				free(ti);
				free(tw);
				rc = rt_oom(k);
				goto cleanup;
			}
			for (int64_t o = 0; o < q.out_len; o++)
				ext[d][o] = ti[o * q.n_taps] < 0;
		}
		q.src = cur;
		q.dst = next;
		q.tap_idx = ti;
		q.tap_w = tw;
		q.extrap = p->extrap;
		rt_parallel_for(k, outer * q.out_len, 1 + 4096 / (q.inner * q.n_taps + 1),
				pass_rows, &q);
		free(ti);
		free(tw);
		free(cur);
		cur = next;
		next = NULL;
		dims[d] = p->out[d];
	}
	store_result(p, y, cur, ext);
cleanup:
	for (int d = 0; d < p->rank; d++)
		free(ext[d]);
	free(cur);
	free(next);
	return rc;
}

/* ---- sizes, scales and the kernels ------------------------------------ */

static int floats_in(struct rt_kctx *k, size_t i, double **v, size_t *n)
{
	struct rt_value *t = rt_in(k, i);

	*v = NULL;
	*n = 0;
	if (!t || t->kind != RT_TENSOR || t->numel == 0)
		return 0;
	if (!(*v = malloc((size_t)t->numel * sizeof(double))))
		return rt_oom(k);
	for (int64_t j = 0; j < t->numel; j++)
		(*v)[j] = rt_load_f64(t->dtype, t->data, j);
	*n = (size_t)t->numel;
	return 0;
}

/* x stored channels last (runtime/layout_cl.c), its batch and channels
 * kept: the same passes over x and y seen as N, spatial..., C (the axes
 * and their parameters permuted), y then stored so too. */
static int run_cl(struct rt_kctx *k, const struct rs_params *p, const struct rt_value *x,
		  struct rt_value *y)
{
	struct rs_params q = *p;
	struct rt_value xv = *x, yv = *y;
	int r = p->rank, rc;

	for (int d = 1; d < r; d++) {
		int f = d == r - 1 ? 1 : d + 1;   /* the axis of p now at d */

		q.in[d] = p->in[f];
		q.out[d] = p->out[f];
		q.scale[d] = p->scale[f];
		q.target[d] = p->target[f];
		q.roi_s[d] = p->roi_s[f];
		q.roi_e[d] = p->roi_e[f];
		xv.dims[d] = x->dims[f];
		yv.dims[d] = y->dims[f];
	}
	rc = p->mode == RS_NEAREST ? run_nearest(k, &q, &xv, &yv) : run_interp(k, &q, &xv, &yv);
	rt_cl_set(y, rc == 0);
	return rc;
}

static int run(struct rt_kctx *k, struct rs_params *p, struct rt_value *x)
{
	struct rt_value *y;
	int rc;

	for (int d = 0; d < p->rank; d++)
		if (p->out[d] < 0 || !(p->scale[d] > 0))
			return rt_err(k, "invalid scale %g or size %lld on axis %d",
				      p->scale[d], (long long)p->out[d], d);
	if (!(y = rt_out_tensor(k, 0, x->dtype, p->rank, p->out)))
		return IR_ENOMEM;
	if ((x->flags & RT_VALUE_CL) && axis_kept(p, 0) && axis_kept(p, 1) && rt_cl_may_write(k))
		return run_cl(k, p, x, y);
	if ((rc = rt_cl_plain_in(k, 0)) < 0)
		return rc;
	x = k->in[0];
	if (p->mode == RS_NEAREST)
		return run_nearest(k, p, x, y);
	return run_interp(k, p, x, y);
}

static void params_init(struct rs_params *p, const struct rt_value *x)
{
	memset(p, 0, sizeof(*p));
	p->rank = x->rank;
	for (int d = 0; d < x->rank; d++) {
		p->in[d] = p->out[d] = x->dims[d];
		p->scale[d] = 1;
		p->target[d] = (double)x->dims[d];
		p->roi_e[d] = 1;
	}
	p->a = -0.75;
}

/* Lengths and scales from the scales input: floor(in * scale), under
 * tf_crop_and_resize floor(in * (roi_end - roi_start) * scale); the
 * coordinate formulas use the scale as given (the ONNX backend tests'
 * resize_downsample_scales_linear: 0.6 on 4 maps 0 to 0.5 / 0.6 - 0.5). */
static int from_scales(struct rt_kctx *k, struct rs_params *p, const int *axes, size_t na,
		       const double *scales, size_t ns)
{
	if (ns != na)
		return rt_err(k, "scales has %zu entries for %zu axes", ns, na);
	for (size_t i = 0; i < na; i++) {
		int d = axes[i];
		double ext = p->ct == CT_TF_CROP ? p->roi_e[d] - p->roi_s[d] : 1;

		p->scale[d] = scales[i];
		p->target[d] = scales[i] * (double)p->in[d];
		p->out[d] = ir_resize_len_scaled(p->in[d], ext, scales[i]);
	}
	return 0;
}

/* Lengths and scales from the sizes input: the sizes with scale sizes /
 * input, or under keep_aspect_ratio_policy (18+) the smallest
 * (not_larger) or largest (not_smaller) of those ratios on every resized
 * axis, lengths round_int(ratio * input), halves up. */
static int from_sizes(struct rt_kctx *k, struct rs_params *p, const int *axes, size_t na,
		      const int64_t *sizes, size_t nz)
{
	const char *pol = k->version >= 18 ?
			  rt_attr_str(k, "keep_aspect_ratio_policy", "stretch") : "stretch";
	int64_t in[RT_MAX_RANK];
	int larger = !strcmp(pol, "not_smaller"), g;

	if (strcmp(pol, "stretch") && !larger && strcmp(pol, "not_larger"))
		return rt_err(k, "unknown keep_aspect_ratio_policy '%s'", pol);
	if (nz != na)
		return rt_err(k, "sizes has %zu entries for %zu axes", nz, na);
	for (size_t i = 0; i < na; i++) {
		int d = axes[i];

		in[i] = p->in[d];
		p->out[d] = sizes[i];
		p->scale[d] = p->in[d] ? (double)sizes[i] / (double)p->in[d] : 1;
		p->target[d] = (double)sizes[i];
	}
	if (!strcmp(pol, "stretch"))
		return 0;
	g = ir_resize_policy_axis(sizes, in, na, larger);
	for (size_t i = 0; i < na; i++) {
		int d = axes[i];

		p->scale[d] = g < 0 ? 1 : (double)sizes[g] / (double)in[g];
		p->out[d] = g < 0 ? sizes[i] < 0 ? -1 : 0 : ir_resize_len_policy(in[i], sizes[g], in[g]);
		p->target[d] = p->scale[d] * (double)p->in[d];
	}
	return 0;
}

static int k_resize(struct rt_kctx *k)
{
	struct rt_value *x;
	struct rs_params p;
	const int64_t *axes_attr;
	double *scales = NULL, *roi = NULL;
	int64_t *sizes = NULL;
	int axes[RT_MAX_RANK], mode, ct = CT_ASYMMETRIC, nm = NM_SIMPLE, rc;
	size_t na, ns = 0, nz = 0, nr = 0;
	const char *s;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	params_init(&p, x);
	s = rt_attr_str(k, "mode", "nearest");
	if (LOOKUP(modes, s, &mode) < 0 || (k->version < 11 && mode == RS_CUBIC) ||
	    !strcmp(s, "bilinear"))
		return rt_err(k, "unknown mode '%s'", s);
	p.mode = mode;
	if (k->version >= 11) {
		s = rt_attr_str(k, "coordinate_transformation_mode", "half_pixel");
		if (LOOKUP(coords, s, &ct) < 0 ||
		    (ct == CT_HALF_PIXEL_SYM && k->version < 19))
			return rt_err(k, "unknown coordinate_transformation_mode '%s'", s);
		s = rt_attr_str(k, "nearest_mode", "round_prefer_floor");
		if (LOOKUP(nearests, s, &nm) < 0)
			return rt_err(k, "unknown nearest_mode '%s'", s);
		p.a = rt_attr_float(k, "cubic_coeff_a", -0.75f);
		p.exclude = (int)rt_attr_int(k, "exclude_outside", 0);
		p.extrap = rt_attr_float(k, "extrapolation_value", 0);
	}
	p.ct = ct;
	p.nm = nm;
	if (k->version >= 18)
		p.antialias = (int)rt_attr_int(k, "antialias", 0);
	axes_attr = k->version >= 18 ? rt_attr_ints(k, "axes", &na) : NULL;
	if (axes_attr) {
		if ((rc = ks_axes(k, axes_attr, na, x->rank, axes)) < 0)
			return rc;
	} else {
		na = (size_t)x->rank;
		for (int i = 0; i < x->rank; i++)
			axes[i] = i;
	}
	if (k->version < 11) {
		if ((rc = floats_in(k, 1, &scales, &ns)) < 0)
			goto cleanup;
	} else {
		if ((rc = floats_in(k, 1, &roi, &nr)) < 0 ||
		    (rc = floats_in(k, 2, &scales, &ns)) < 0)
			goto cleanup;
		if (rt_in(k, 3) && rt_in(k, 3)->numel &&
		    (rc = rt_in_ints(k, 3, &sizes, &nz)) < 0)
			goto cleanup;
	}
	if (ct == CT_TF_CROP && roi) {
		if (nr != 2 * na) {
			rc = rt_err(k, "roi has %zu entries, expected %zu", nr, 2 * na);
			goto cleanup;
		}
		for (size_t i = 0; i < na; i++) {
			p.roi_s[axes[i]] = roi[i];
			p.roi_e[axes[i]] = roi[na + i];
		}
	}
	if (scales && sizes) {
		rc = rt_err(k, "scales and sizes are both given");
		goto cleanup;
	}
	if (scales)
		rc = from_scales(k, &p, axes, na, scales, ns);
	else if (sizes)
		rc = from_sizes(k, &p, axes, na, sizes, nz);
	else
		rc = rt_err(k, "neither scales nor sizes is given");
	if (rc >= 0)
		rc = run(k, &p, x);
cleanup:
	free(scales);
	free(roi);
	free(sizes);
	return rc;
}

static int k_upsample(struct rt_kctx *k)
{
	struct rt_value *x;
	struct rs_params p;
	const char *s = rt_attr_str(k, "mode", "nearest");
	double *scales = NULL;
	size_t ns = 0;
	int mode, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	params_init(&p, x);
	if (LOOKUP(modes, s, &mode) < 0 || mode == RS_CUBIC ||
	    (mode == RS_LINEAR && strcmp(s, k->version < 7 ? "bilinear" : "linear")))
		return rt_err(k, "unknown mode '%s'", s);
	p.mode = mode;
	p.ct = CT_ASYMMETRIC;
	p.nm = NM_SIMPLE;
	if (k->version < 7) {
		if (x->rank != 4)
			return rt_err(k, "input must be 4-D, has rank %d", x->rank);
		p.scale[2] = rt_attr_float(k, "height_scale", 1);
		p.scale[3] = rt_attr_float(k, "width_scale", 1);
	} else if (k->version < 9) {
		const float *f = rt_attr_floats(k, "scales", &ns);

		if (!f || ns != (size_t)x->rank)
			return rt_err(k, "attribute 'scales' must have %d entries", x->rank);
		for (size_t i = 0; i < ns; i++)
			p.scale[i] = f[i];
	} else {
		if ((rc = floats_in(k, 1, &scales, &ns)) < 0)
			return rc;
		if (ns != (size_t)x->rank) {
			free(scales);
			return rt_err(k, "scales has %zu entries for rank %d", ns, x->rank);
		}
		for (size_t i = 0; i < ns; i++)
			p.scale[i] = scales[i];
		free(scales);
	}
	for (int d = 0; d < x->rank; d++) {
		p.out[d] = ir_resize_len_scaled(p.in[d], 1, p.scale[d]);
		p.target[d] = p.scale[d] * (double)p.in[d];
	}
	return run(k, &p, x);
}

const struct rt_kernel rt_kernels_resize[] = {
	{ "ai.onnx", "AffineGrid", 20, RT_OPEN, ks_affine_grid },
	{ "ai.onnx", "GridSample", 16, RT_OPEN, ks_grid_sample },
	{ "ai.onnx", "Resize", 10, RT_OPEN, k_resize },
	{ "ai.onnx", "Upsample", 1, RT_OPEN, k_upsample },
};
const size_t rt_n_kernels_resize = sizeof(rt_kernels_resize) / sizeof(rt_kernels_resize[0]);
