/* k_layout.c: kernels of the layout family: dim permutations (Transpose)
 * and the block moves between depth and space (DepthToSpace,
 * SpaceToDepth), all as one strided copy of any dtype.  See rt_int.h for
 * how to add one. */
#include <string.h>

#include "runtime/kernels/k_shape_int.h"

/* Output = x viewed with dims vdims (rank vr, same numel), permuted by
 * perm, then viewed as the output dims (rank r). */
static int permuted_copy(struct rt_kctx *k, struct rt_value *x, int vr,
			 const int64_t *vdims, const int *perm, int r,
			 const int64_t *odims)
{
	int64_t vst[RT_MAX_RANK], pd[RT_MAX_RANK], ps[RT_MAX_RANK];
	struct rt_value *y;

	ks_strides(vr, vdims, vst);
	for (int i = 0; i < vr; i++) {
		pd[i] = vdims[perm[i]];
		ps[i] = vst[perm[i]];
	}
	if (!(y = rt_out_tensor(k, 0, x->dtype, r, odims)))
		return IR_ENOMEM;
	return ks_strided_copy(k, y, x, 0, vr, pd, ps);
}

/* A perm that keeps a leading run of axes and swaps the two consecutive
 * runs after it (NHWC <-> NCHW: [0, 3, 1, 2] and [0, 2, 3, 1]) is a batch
 * of 2-D transposes: tiled (rt_cl_to_first's loop) instead of element by
 * element through the strided copy.  1 done, 0 not that form, -1 out of
 * memory. */
static int batched_2d(struct rt_kctx *k, struct rt_value *x, const int *perm,
		      const int64_t *dims)
{
	int r = x->rank, lead = 0, split;
	int64_t n = 1, rows = 1, cols = 1;
	size_t es = rt_dtype_size(x->dtype);
	struct rt_value *y;

	while (lead < r && perm[lead] == lead)
		lead++;
	if (lead == r || x->dtype == IR_DTYPE_STRING || !es)
		return 0;
	/* perm[lead..] = split..r-1 then lead..split-1 */
	split = perm[lead];
	for (int i = lead; i < r; i++)
		if (perm[i] != (i - lead < r - split ? split + i - lead : lead + i - lead - (r - split)))
			return 0;
	for (int i = 0; i < r; i++)
		*(i < lead ? &n : i < split ? &rows : &cols) *= x->dims[i];
	if (!(y = rt_out_tensor(k, 0, x->dtype, r, dims)))
		return -1;
	/* x is n planes of rows x cols: y the same planes as cols x rows */
	rt_cl_to_first(k, x->data, y->data, n, cols, rows, es);
	return 1;
}

/* Is perm the move of axis `from` to position `to` (the others in
 * order)?  NCHW -> NHWC: from 1 to r - 1; NHWC -> NCHW: from r - 1 to 1. */
static int moves_axis(const int *perm, int r, int from, int to)
{
	for (int i = 0, j = 0; i < r; i++) {
		if (i == to) {
			if (perm[i] != from)
				return 0;
			continue;
		}
		if (j == from)
			j++;
		if (perm[i] != j++)
			return 0;
	}
	return 1;
}

/* The layout moves that cost nothing with results stored channels last
 * (layout_cl.c): NCHW -> NHWC of such a value is its data as they are, a
 * plain NHWC view; NHWC -> NCHW of a plain value is the same data seen as
 * an NCHW result stored channels last, when the plan lets this node store
 * so (every reader takes it).  A tf2onnx export wraps each convolution in
 * these two.  1 done, 0 not such a case, or an error. */
static int cl_view(struct rt_kctx *k, struct rt_value *x, const int *perm, const int64_t *dims)
{
	int r = x->rank, rc;

	if (r < 3 || r > 5 || x->dtype == IR_DTYPE_STRING)
		return 0;
	if ((x->flags & RT_VALUE_CL) && moves_axis(perm, r, 1, r - 1)) {
		if ((rc = rt_out_view(k, 0, x, r, dims)) < 0)
			return rc;
		rt_cl_set(k->out[0], 0);
		return 1;
	}
	if (!(x->flags & RT_VALUE_CL) && moves_axis(perm, r, r - 1, 1) && rt_cl_may_write(k)) {
		if ((rc = rt_out_view(k, 0, x, r, dims)) < 0)
			return rc;
		rt_cl_set(k->out[0], 1);
		return 1;
	}
	return 0;
}

static int k_transpose(struct rt_kctx *k)
{
	struct rt_value *x;
	const int64_t *p;
	int64_t dims[RT_MAX_RANK];
	int perm[RT_MAX_RANK], seen[RT_MAX_RANK] = { 0 }, rc;
	size_t n;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	p = rt_attr_ints(k, "perm", &n);
	if (p && n != (size_t)x->rank)
		return rt_err(k, "perm has %zu entries for rank %d", n, x->rank);
	for (int i = 0; i < x->rank; i++) {
		int64_t v = p ? p[i] : x->rank - 1 - i;

		if (v < -x->rank || v >= x->rank || seen[v < 0 ? v + x->rank : v])
			return rt_err(k, "perm entry %lld invalid for rank %d",
				      (long long)v, x->rank);
		perm[i] = (int)(v < 0 ? v + x->rank : v);
		seen[perm[i]] = 1;
		dims[i] = x->dims[perm[i]];
	}
	if ((rc = cl_view(k, x, perm, dims)) != 0)
		return rc < 0 ? rc : 0;
	/* any other perm of a channels-last input: of its plain copy */
	if ((x->flags & RT_VALUE_CL) && ((rc = rt_cl_plain_in(k, 0)) < 0 ||
					 (rc = rt_in_tensor(k, 0, &x)) < 0))
		return rc;
	if ((rc = batched_2d(k, x, perm, dims)) != 0)
		return rc < 0 ? IR_ENOMEM : 0;
	return permuted_copy(k, x, x->rank, x->dims, perm, x->rank, dims);
}

static int block_size(struct rt_kctx *k, struct rt_value *x, int64_t *b)
{
	*b = rt_attr_int(k, "blocksize", 0);
	if (*b <= 0)
		return rt_err(k, "blocksize must be positive, is %lld", (long long)*b);
	if (x->rank != 4)
		return rt_err(k, "input must be 4-D, has rank %d", x->rank);
	return 0;
}

/* DepthToSpace of 1-, 2-, 4- or 8-byte elements a block row at a time:
 * output row h * b + bh of channel oc interleaves the b input rows of
 * channels ch(bh, bw) (DCR: (bh * b + bw) * C' + oc; CRD: oc * b * b +
 * bh * b + bw).  As a six-dimensional permuted copy its innermost
 * dimension was the block, b elements: 2.35x onnxruntime at b = 2. */
struct d2s {
	const char *x;
	char *y;
	int64_t b, oc, h, w;   /* block, output channels, input plane */
	size_t es;
	int crd;
};

#define D2S_ROW(T) do { \
		const T *xr = (const T *)src; \
		T *yr = (T *)dst; \
		for (int64_t i = 0; i < j->w; i++) \
			yr[i * b] = xr[i]; \
	} while (0)

static void d2s_rows(void *ctx, int64_t lo, int64_t hi)
{
	const struct d2s *j = ctx;
	int64_t b = j->b, plane = j->h * j->w;

	/* item: (n, oc, h) */
	for (int64_t it = lo; it < hi; it++) {
		int64_t hh = it % j->h, oc = it / j->h % j->oc, n = it / j->h / j->oc;

		for (int64_t bh = 0; bh < b; bh++)
			for (int64_t bw = 0; bw < b; bw++) {
				int64_t ch = j->crd ? oc * b * b + bh * b + bw : (bh * b + bw) * j->oc + oc;
				const char *src = j->x + ((n * j->oc * b * b + ch) * plane + hh * j->w) *
							 (int64_t)j->es;
				char *dst = j->y + (((n * j->oc + oc) * j->h * b + hh * b + bh) * j->w * b +
						    bw) * (int64_t)j->es;

				switch (j->es) {
				case 1: D2S_ROW(uint8_t); break;
				case 2: D2S_ROW(uint16_t); break;
				case 4: D2S_ROW(uint32_t); break;
				default: D2S_ROW(uint64_t); break;
				}
			}
	}
}
#undef D2S_ROW

static int k_depth_to_space(struct rt_kctx *k)
{
	static const int dcr[6] = { 0, 3, 4, 1, 5, 2 }, crd[6] = { 0, 1, 4, 2, 5, 3 };
	struct rt_value *x;
	const char *mode = rt_attr_str(k, "mode", "DCR");
	int64_t b, v[6], o[4], n, c, h, w;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = block_size(k, x, &b)) < 0)
		return rc;
	n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
	if (c % (b * b))
		return rt_err(k, "channels %lld not divisible by blocksize^2 %lld",
			      (long long)c, (long long)(b * b));
	o[0] = n, o[1] = c / (b * b), o[2] = h * b, o[3] = w * b;
	if (x->dtype != IR_DTYPE_STRING && (!strcmp(mode, "DCR") || !strcmp(mode, "CRD"))) {
		size_t es = rt_dtype_size(x->dtype);
		struct rt_value *y;
		struct d2s j = { x->data, NULL, b, o[1], h, w, es, !strcmp(mode, "CRD") };

		if (es == 1 || es == 2 || es == 4 || es == 8) {
			if (!(y = rt_out_tensor(k, 0, x->dtype, 4, o)))
				return IR_ENOMEM;
			j.y = y->data;
			rt_parallel_for(k, n * o[1] * h, 1 + 16384 / (b * b * w + 1), d2s_rows, &j);
			return 0;
		}
	}
	if (!strcmp(mode, "DCR")) {
		int64_t t[6] = { n, b, b, c / (b * b), h, w };

		memcpy(v, t, sizeof(v));
		return permuted_copy(k, x, 6, v, dcr, 4, o);
	}
	if (!strcmp(mode, "CRD")) {
		int64_t t[6] = { n, c / (b * b), b, b, h, w };

		memcpy(v, t, sizeof(v));
		return permuted_copy(k, x, 6, v, crd, 4, o);
	}
	return rt_err(k, "unknown mode '%s'", mode);
}

static int k_space_to_depth(struct rt_kctx *k)
{
	static const int perm[6] = { 0, 3, 5, 1, 2, 4 };
	struct rt_value *x;
	int64_t b, o[4], n, c, h, w;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = block_size(k, x, &b)) < 0)
		return rc;
	n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
	if (h % b || w % b)
		return rt_err(k, "spatial dims %lldx%lld not divisible by blocksize %lld",
			      (long long)h, (long long)w, (long long)b);
	o[0] = n, o[1] = c * b * b, o[2] = h / b, o[3] = w / b;
	{
		int64_t v[6] = { n, c, h / b, b, w / b, b };

		return permuted_copy(k, x, 6, v, perm, 4, o);
	}
}

const struct rt_kernel rt_kernels_layout[] = {
	{ "ai.onnx", "DepthToSpace", 1, RT_OPEN, k_depth_to_space },
	{ "ai.onnx", "SpaceToDepth", 1, RT_OPEN, k_space_to_depth },
	{ "ai.onnx", "Transpose", 1, RT_OPEN, k_transpose },
};
const size_t rt_n_kernels_layout = sizeof(rt_kernels_layout) / sizeof(rt_kernels_layout[0]);
