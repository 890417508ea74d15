/* k_slice.c: kernels of the slice family: taking parts (Slice, Split,
 * Trilu, ReverseSequence), joining and repeating (Concat, Tile) and
 * padding or cropping (Pad, CenterCropPad), for every dtype (strings
 * duplicated).  See rt_int.h for how to add one. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_shape_int.h"

/* ---- Slice ----------------------------------------------------------- */

static int k_slice(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	int64_t *st = NULL, *en = NULL, *ax = NULL, *sp = NULL;
	int64_t dims[RT_MAX_RANK], xs[RT_MAX_RANK], ss[RT_MAX_RANK], off = 0;
	int axes[RT_MAX_RANK], done[RT_MAX_RANK] = { 0 }, present, rc;
	size_t n, ne, na, nsp;
	int v1 = k->version < 10;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if ((rc = ks_ints(k, v1 ? KS_NO_INPUT : 1, v1 ? "starts" : NULL, &st, &n, &present)) < 0 ||
	    (rc = ks_ints(k, v1 ? KS_NO_INPUT : 2, v1 ? "ends" : NULL, &en, &ne, &present)) < 0 ||
	    (rc = ks_ints(k, v1 ? KS_NO_INPUT : 3, v1 ? "axes" : NULL, &ax, &na, &present)) < 0 ||
	    (rc = ks_ints(k, v1 ? KS_NO_INPUT : 4, NULL, &sp, &nsp, &present)) < 0)
		goto cleanup;
	if (!st || !en) {
		rc = rt_err(k, "starts or ends are missing");
		goto cleanup;
	}
	if (ne != n || (ax && na != n) || (sp && nsp != n)) {
		rc = rt_err(k, "starts, ends, axes and steps differ in length");
		goto cleanup;
	}
	if (n > (size_t)x->rank) {
		rc = rt_err(k, "%zu slice entries for rank %d", n, x->rank);
		goto cleanup;
	}
	if (ax) {
		if ((rc = ks_axes(k, ax, n, x->rank, axes)) < 0)
			goto cleanup;
	} else {
		for (size_t i = 0; i < n; i++)
			axes[i] = (int)i;
	}
	ks_strides(x->rank, x->dims, xs);
	for (int i = 0; i < x->rank; i++) {
		dims[i] = x->dims[i];
		ss[i] = xs[i];
	}
	for (size_t i = 0; i < n; i++) {
		int a = axes[i];
		int64_t d = x->dims[a], s = st[i], e = en[i], step = sp ? sp[i] : 1, c;

		if (done[a]++) {
			rc = rt_err(k, "axis %d repeated", a);
			goto cleanup;
		}
		if (step == 0) {
			rc = rt_err(k, "step of axis %d is 0", a);
			goto cleanup;
		}
		if (s < 0)
			s += d;
		if (e < 0)
			e += d;
		if (step > 0) {
			s = s < 0 ? 0 : s > d ? d : s;
			e = e < 0 ? 0 : e > d ? d : e;
			c = e > s ? (e - s - 1) / step + 1 : 0;
		} else {
			s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
			e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
			c = s > e ? (s - e - 1) / -step + 1 : 0;
		}
		dims[a] = c;
		ss[a] = xs[a] * step;
		if (c)
			off += s * xs[a];
	}
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	rc = ks_strided_copy(k, y, x, off, x->rank, dims, ss);
cleanup:
	free(st);
	free(en);
	free(ax);
	free(sp);
	return rc;
}

/* ---- Split and Concat ------------------------------------------------ */

/* Split's outputs from outer rows of x at once (numeric dtypes): each row
 * read once, its pieces copied to their outputs, rows over the threads (a
 * detector head's [8, 8400, 85] cut into boxes and scores along the last
 * axis: a copy call per piece per row took 12 ms). */
struct split_job {
	const char *x;
	char **y;
	const int64_t *bytes;     /* each piece's bytes in a row */
	size_t n;
	int64_t row;              /* a row's bytes in x */
};

static void split_range(void *ctx, int64_t lo, int64_t hi)
{
	const struct split_job *j = ctx;

	for (int64_t o = lo; o < hi; o++) {
		const char *src = j->x + o * j->row;

		for (size_t i = 0; i < j->n; i++) {
			int64_t b = j->bytes[i];
			char *dst = j->y[i] + o * b;

			/* (small pieces as fixed-size moves, not calls) */
			if (b == 4)
				memcpy(dst, src, 4);
			else if (b == 8)
				memcpy(dst, src, 8);
			else if (b == 16)
				memcpy(dst, src, 16);
			else
				memcpy(dst, src, (size_t)b);
			src += b;
		}
	}
}

static int split_rows(struct rt_kctx *k, const struct rt_value *x, const int64_t *split,
		      size_t nout, int axis, int64_t outer, int64_t inner)
{
	int64_t es = (int64_t)rt_dtype_size(x->dtype);
	int64_t *bytes = malloc(nout * sizeof(*bytes) + 1);
	char **y = malloc(nout * sizeof(*y) + 1);
	struct split_job j = { x->data, y, bytes, nout, x->dims[axis] * inner * es };
	int rc = 0;

	if (!bytes || !y) {
		rc = rt_oom(k);
		goto done;
	}
	for (size_t i = 0; i < nout; i++) {
		int64_t dims[RT_MAX_RANK];
		struct rt_value *v;

		memcpy(dims, x->dims, sizeof(dims));
		dims[axis] = split[i];
		if (!(v = rt_out_tensor(k, i, x->dtype, x->rank, dims))) {
			rc = IR_ENOMEM;
			goto done;
		}
		y[i] = v->data;
		bytes[i] = split[i] * inner * es;
	}
	rt_parallel_for(k, outer, 1 + 65536 / (j.row + 1), split_range, &j);
done:
	free(bytes);
	free(y);
	return rc;
}

static int k_split(struct rt_kctx *k)
{
	struct rt_value *x;
	int64_t *split = NULL, outer = 1, inner = 1, at = 0, sum = 0;
	size_t n, nout = k->node->n_outputs;
	int axis, present, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 ||
	    (rc = rt_axis(k, rt_attr_int(k, "axis", 0), x->rank, &axis)) < 0)
		return rc;
	if ((rc = ks_ints(k, k->version >= 13 || k->version == 1 ? 1 : KS_NO_INPUT,
			  k->version < 13 ? "split" : NULL, &split, &n, &present)) < 0)
		goto cleanup;
	if (present && n != nout) {
		rc = rt_err(k, "split has %zu entries for %zu outputs", n, nout);
		goto cleanup;
	}
	if (!present) {
		int64_t parts = rt_attr_int(k, "num_outputs", (int64_t)nout), d = x->dims[axis];
		int64_t chunk;

		if (parts != (int64_t)nout || nout == 0) {
			rc = rt_err(k, "num_outputs %lld but %zu outputs", (long long)parts, nout);
			goto cleanup;
		}
		chunk = (d + parts - 1) / parts;
		if (!(split = malloc(nout * sizeof(*split)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		for (size_t i = 0; i < nout; i++) {
			int64_t left = d - chunk * (int64_t)i;

			split[i] = left < 0 ? 0 : left < chunk ? left : chunk;
		}
	}
	for (size_t i = 0; i < nout; i++) {
		if (split[i] < 0) {
			rc = rt_err(k, "negative split %lld", (long long)split[i]);
			goto cleanup;
		}
		sum += split[i];
	}
	if (sum != x->dims[axis]) {
		rc = rt_err(k, "splits add up to %lld, axis %d has %lld", (long long)sum,
			    axis, (long long)x->dims[axis]);
		goto cleanup;
	}
	for (int i = 0; i < x->rank; i++) {
		if (i < axis)
			outer *= x->dims[i];
		else if (i > axis)
			inner *= x->dims[i];
	}
	if (x->dtype != IR_DTYPE_STRING && outer > 1) {
		rc = split_rows(k, x, split, nout, axis, outer, inner);
		goto cleanup;
	}
	for (size_t i = 0; i < nout; i++) {
		int64_t dims[RT_MAX_RANK], blk = split[i] * inner;
		struct rt_value *y;

		memcpy(dims, x->dims, sizeof(dims));
		dims[axis] = split[i];
		if (!(y = rt_out_tensor(k, i, x->dtype, x->rank, dims))) {
			rc = IR_ENOMEM;
			goto cleanup;
		}
		for (int64_t o = 0; o < outer; o++)
			if ((rc = ks_copy(k, y, o * blk, x,
					  (o * x->dims[axis] + at) * inner, blk)) < 0)
				goto cleanup;
		at += split[i];
	}
cleanup:
	free(split);
	return rc;
}

/* The inputs as the consecutive regions, in order, of one tensor of the
 * result's dtype and shape (their producers wrote into it: catbuf.c):
 * that tensor, whose elements are then the result's; else NULL. */
static struct rt_value *concat_written(struct rt_kctx *k, int rank, const int64_t *dims,
				       int64_t outer)
{
	struct rt_value *b = k->in[0]->base;
	int64_t at = 0, es;

	if (outer != 1 || !b || b->kind != RT_TENSOR || b->dtype != k->in[0]->dtype ||
	    b->dtype == IR_DTYPE_STRING || b->rank != rank ||
	    memcmp(b->dims, dims, (size_t)rank * sizeof(*dims)))
		return NULL;
	es = (int64_t)rt_dtype_size(b->dtype);
	for (size_t i = 0; i < k->n_in; i++) {
		if (k->in[i]->base != b || (char *)k->in[i]->data != (char *)b->data + at * es)
			return NULL;
		at += k->in[i]->numel;
	}
	return at == b->numel ? b : NULL;
}

struct cat_cl_job {
	struct rt_kctx *k;
	unsigned char *y;
	int64_t ctot;
	size_t es;
};

/* Positions [lo, hi) of y, channels last: each position's channels of
 * every input in turn (the result written in order). */
static void cat_cl_rows(void *ctx, int64_t lo, int64_t hi)
{
	const struct cat_cl_job *j = ctx;
	const size_t n_in = j->k->n_in;

	if (j->es == 4) {
		float *y = (float *)j->y + lo * j->ctot;

		for (int64_t p = lo; p < hi; p++)
			for (size_t i = 0; i < n_in; i++) {
				const struct rt_value *x = j->k->in[i];
				const int64_t c = x->dims[1];
				const float *xs = (const float *)x->data + p * c;

				for (int64_t q = 0; q < c; q++)
					y[q] = xs[q];
				y += c;
			}
		return;
	}
	for (int64_t p = lo; p < hi; p++) {
		unsigned char *y = j->y + (size_t)(p * j->ctot) * j->es;

		for (size_t i = 0; i < n_in; i++) {
			const struct rt_value *x = j->k->in[i];
			size_t row = (size_t)x->dims[1] * j->es;

			memcpy(y, (const unsigned char *)x->data + (size_t)p * row, row);
			y += row;
		}
	}
}

/* A Concat of channels (axis 1) whose inputs are all stored channels last
 * (layout_cl.c): the result so too, each position's channels one after
 * another (1 done).  Otherwise inputs stored so are made plain (0: the
 * plain Concat runs). */
static int concat_cl(struct rt_kctx *k, int axis, const int64_t *dims)
{
	struct cat_cl_job j = { k, NULL, dims[1], rt_dtype_size(k->in[0]->dtype) };
	struct rt_value *y;
	size_t n_cl = 0;
	int rc;

	for (size_t i = 0; i < k->n_in; i++)
		n_cl += (k->in[i]->flags & RT_VALUE_CL) != 0;
	if (!n_cl)
		return 0;
	if (n_cl < k->n_in || axis != 1 || k->in[0]->dtype == IR_DTYPE_STRING) {
		for (size_t i = 0; i < k->n_in; i++)
			if ((rc = rt_cl_plain_in(k, i)) < 0)
				return rc;
		return 0;
	}
	if (!(y = rt_out_tensor(k, 0, k->in[0]->dtype, k->in[0]->rank, dims)))
		return IR_ENOMEM;
	j.y = y->data;
	rt_parallel_for(k, y->numel / (dims[1] ? dims[1] : 1), 4096, cat_cl_rows, &j);
	rt_cl_set(y, 1);
	return 1;
}

int ks_concat_dims(struct rt_kctx *k, int *axis_out, int64_t *dims)
{
	struct rt_value *x0;
	int axis, rc;

	if ((rc = rt_in_tensor(k, 0, &x0)) < 0)
		return rc;
	if (!rt_attr(k, "axis") && k->version >= 4)
		return rt_err(k, "attribute 'axis' is missing");
	if ((rc = rt_axis(k, rt_attr_int(k, "axis", 1), x0->rank, &axis)) < 0)
		return rc;
	memcpy(dims, x0->dims, RT_MAX_RANK * sizeof(*dims));
	dims[axis] = 0;
	for (size_t i = 0; i < k->n_in; i++) {
		struct rt_value *x;

		if ((rc = rt_in_tensor(k, i, &x)) < 0)
			return rc;
		if (x->rank != x0->rank || x->dtype != x0->dtype)
			return rt_err(k, "input %zu differs in rank or dtype from input 0", i);
		for (int j = 0; j < x->rank; j++)
			if (j != axis && x->dims[j] != x0->dims[j]) {
				char a[160], b[160];

				rt_dims_text(x0->rank, x0->dims, a, sizeof(a));
				rt_dims_text(x->rank, x->dims, b, sizeof(b));
				return rt_err(k, "input %zu of shape %s does not match %s on axis %d",
					      i, b, a, j);
			}
		dims[axis] += x->dims[axis];
	}
	*axis_out = axis;
	return 0;
}

static int k_concat(struct rt_kctx *k)
{
	struct rt_value *x0, *y;
	int64_t dims[RT_MAX_RANK], outer = 1, inner = 1, at = 0;
	int axis, rc;

	if ((rc = ks_concat_dims(k, &axis, dims)) < 0)
		return rc;
	x0 = k->in[0];
	if ((rc = concat_cl(k, axis, dims)) != 0)
		return rc < 0 ? rc : 0;
	for (int i = 0; i < x0->rank; i++) {
		if (i < axis)
			outer *= dims[i];
		else if (i > axis)
			inner *= dims[i];
	}
	if ((y = concat_written(k, x0->rank, dims, outer)))
		return rt_out_set(k, 0, rt_value_ref(y));
	if (!(y = rt_out_tensor(k, 0, x0->dtype, x0->rank, dims)))
		return IR_ENOMEM;
	for (size_t i = 0; i < k->n_in; i++) {
		struct rt_value *x = k->in[i];
		int64_t blk = x->dims[axis] * inner;

		for (int64_t o = 0; o < outer; o++)
			if ((rc = ks_copy(k, y, (o * dims[axis] + at) * inner, x, o * blk, blk)) < 0)
				return rc;
		at += x->dims[axis];
	}
	return 0;
}

/* ---- Tile ------------------------------------------------------------ */

static int k_tile(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	int64_t *rep = NULL, dims[RT_MAX_RANK], vd[2 * RT_MAX_RANK], vs[2 * RT_MAX_RANK];
	int64_t xs[RT_MAX_RANK];
	size_t n;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (k->version < 6) {
		int64_t t, a;
		int ax;

		if ((rc = rt_in_int(k, 1, &t)) < 0 || (rc = rt_in_int(k, 2, &a)) < 0 ||
		    (rc = rt_axis(k, a, x->rank, &ax)) < 0)
			return rc;
		if (!(rep = malloc((size_t)(x->rank ? x->rank : 1) * sizeof(*rep))))
			return rt_oom(k);
		for (int i = 0; i < x->rank; i++)
			rep[i] = i == ax ? t : 1;
		n = (size_t)x->rank;
	} else if ((rc = rt_in_ints(k, 1, &rep, &n)) < 0) {
		return rc;
	}
	if (n != (size_t)x->rank) {
		rc = rt_err(k, "repeats has %zu entries for rank %d", n, x->rank);
		goto cleanup;
	}
	ks_strides(x->rank, x->dims, xs);
	for (int i = 0; i < x->rank; i++) {
		if (rep[i] < 0 || (x->dims[i] && rep[i] > INT64_MAX / 16 / x->dims[i])) {
			rc = rt_err(k, "invalid repeat %lld", (long long)rep[i]);
			goto cleanup;
		}
		dims[i] = x->dims[i] * rep[i];
		vd[2 * i] = rep[i];
		vd[2 * i + 1] = x->dims[i];
		vs[2 * i] = 0;
		vs[2 * i + 1] = xs[i];
	}
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	if (x->rank > RT_MAX_RANK / 2) {
		/* too many dims for one strided view: element by element */
		for (int64_t o = 0; o < y->numel; o++) {
			int64_t rem = o, s = 0;

			for (int i = x->rank - 1; i >= 0; i--) {
				s += (rem % dims[i]) % x->dims[i] * xs[i];
				rem /= dims[i];
			}
			if ((rc = ks_copy(k, y, o, x, s, 1)) < 0)
				goto cleanup;
		}
	} else {
		rc = ks_strided_copy(k, y, x, 0, 2 * x->rank, vd, vs);
	}
cleanup:
	free(rep);
	return rc;
}

/* ---- Pad and CenterCropPad ------------------------------------------- */

enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

/* y (dims odims) from x where out index o along dim i reads x at
 * o - begin[i], mapped by the mode when outside; constant: cval (one
 * element of x's dtype, NULL: zero). */
/* Source index of out-of-range position p along a dim of size d (d > 0),
 * or -1 for the constant. */
static int64_t pad_map(enum pad_mode mode, int64_t p, int64_t d)
{
	int64_t per;

	if (p >= 0 && p < d)
		return p;
	switch (mode) {
	case PAD_EDGE:
		return p < 0 ? 0 : d - 1;
	case PAD_WRAP:
		return ((p % d) + d) % d;
	case PAD_REFLECT:
		if (d == 1)
			return 0;
		per = 2 * (d - 1);
		p = ((p % per) + per) % per;
		return p >= d ? per - p : p;
	default:
		return -1;
	}
}

/* y (dims odims) from x where out index o along dim i reads x at
 * o - begin[i], mapped by the mode when outside; constant: cval (one
 * element of x's dtype, NULL: zero).  Rows along the last dim copy their
 * in-range middle in one move. */
static int pad_run(struct rt_kctx *k, struct rt_value *x, const int64_t *begin,
		   const int64_t *odims, enum pad_mode mode,
		   const struct rt_value *cval)
{
	int64_t xs[RT_MAX_RANK], idx[RT_MAX_RANK] = { 0 }, len, d, b, lo, hi, rows;
	struct rt_value *y;
	int r = x->rank, rc;

	if (!(y = rt_out_tensor(k, 0, x->dtype, r, odims)))
		return IR_ENOMEM;
	if (y->numel == 0)
		return 0;
	if (!x->numel && mode != PAD_CONSTANT)
		return rt_err(k, "cannot pad an empty tensor in this mode");
	if (r == 0)
		return ks_copy(k, y, 0, x, 0, 1);
	ks_strides(r, x->dims, xs);
	len = odims[r - 1];
	d = x->dims[r - 1];
	b = begin[r - 1];
	lo = b < 0 ? 0 : b > len ? len : b;              /* [lo, hi): in range */
	hi = b + d < lo ? lo : b + d > len ? len : b + d;
	rows = y->numel / len;
	for (int64_t row = 0; row < rows; row++) {
		int64_t s = 0, o = row * len;
		int out = 0;

		for (int i = 0; i < r - 1 && !out; i++) {
			int64_t p = pad_map(mode, idx[i] - begin[i], x->dims[i]);

			if (p < 0)
				out = 1;
			s += p * xs[i];
		}
		for (int64_t j = 0; j < len; j++) {
			int64_t p;

			if (!out && j == lo && hi > lo) {
				if ((rc = ks_copy(k, y, o + j, x, s + (j - b), hi - lo)) < 0)
					return rc;
				j = hi - 1;
				continue;
			}
			p = out ? -1 : pad_map(mode, j - b, d);
			if (p < 0)
				rc = cval ? ks_copy(k, y, o + j, cval, 0, 1) : ks_zero(k, y, o + j);
			else
				rc = ks_copy(k, y, o + j, x, s + p, 1);
			if (rc < 0)
				return rc;
		}
		for (int i = r - 2; i >= 0; i--) {
			if (++idx[i] < odims[i])
				break;
			idx[i] = 0;
		}
	}
	return 0;
}

static int k_pad(struct rt_kctx *k)
{
	struct rt_value *x, *cv = NULL, *tmp = NULL;
	int64_t *pads = NULL, *ax = NULL, begin[RT_MAX_RANK] = { 0 };
	int64_t end[RT_MAX_RANK] = { 0 }, odims[RT_MAX_RANK];
	const char *ms = rt_attr_str(k, "mode", "constant");
	int axes[RT_MAX_RANK], present, rc;
	size_t n, na = 0;
	enum pad_mode mode;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (!strcmp(ms, "constant"))
		mode = PAD_CONSTANT;
	else if (!strcmp(ms, "reflect"))
		mode = PAD_REFLECT;
	else if (!strcmp(ms, "edge"))
		mode = PAD_EDGE;
	else if (!strcmp(ms, "wrap") && k->version >= 19)
		mode = PAD_WRAP;
	else
		return rt_err(k, "unknown mode '%s'", ms);
	if ((rc = ks_ints(k, k->version >= 11 ? 1 : KS_NO_INPUT,
			  k->version >= 11 ? NULL : k->version == 1 ? "paddings" : "pads",
			  &pads, &n, &present)) < 0)
		goto cleanup;
	if (!present) {
		rc = rt_err(k, "pads are missing");
		goto cleanup;
	}
	if (k->version >= 18 && rt_in(k, 3)) {
		if ((rc = rt_in_ints(k, 3, &ax, &na)) < 0 ||
		    (rc = ks_axes(k, ax, na, x->rank, axes)) < 0)
			goto cleanup;
	} else {
		na = (size_t)x->rank;
		for (int i = 0; i < x->rank; i++)
			axes[i] = i;
	}
	if (n != 2 * na) {
		rc = rt_err(k, "pads has %zu entries, expected %zu", n, 2 * na);
		goto cleanup;
	}
	for (size_t i = 0; i < na; i++) {
		if (pads[i] < -(INT64_C(1) << 40) || pads[i] > INT64_C(1) << 40 ||
		    pads[na + i] < -(INT64_C(1) << 40) || pads[na + i] > INT64_C(1) << 40) {
			rc = rt_err(k, "pads of axis %d too large", axes[i]);
			goto cleanup;
		}
		begin[axes[i]] = pads[i];
		end[axes[i]] = pads[na + i];
	}
	for (int i = 0; i < x->rank; i++) {
		odims[i] = x->dims[i] + begin[i] + end[i];
		if (odims[i] < 0) {
			rc = rt_err(k, "pads make axis %d negative", i);
			goto cleanup;
		}
	}
	if (mode == PAD_CONSTANT) {
		struct ir_diag sub;

		ir_diag_init(&sub);
		if (k->version >= 11 && rt_in(k, 2)) {
			if ((rc = rt_in_tensor(k, 2, &cv)) < 0)
				goto cleanup;
			if (cv->numel != 1) {
				rc = rt_err(k, "constant_value must hold one element");
				goto cleanup;
			}
			if (cv->dtype != x->dtype) {
				rc = rt_err(k, "constant_value is %s, data is %s",
					    ir_dtype_name(cv->dtype), ir_dtype_name(x->dtype));
				goto cleanup;
			}
		} else if (k->version < 11 && x->dtype != IR_DTYPE_STRING) {
			if ((rc = rt_tensor_new(k->mem, x->dtype, 0, NULL, &tmp, &sub)) < 0) {
				rc = rt_oom(k);
				goto cleanup;
			}
			rt_store_f64(x->dtype, tmp->data, 0, rt_attr_float(k, "value", 0));
			cv = tmp;
		}
	}
	rc = pad_run(k, x, begin, odims, mode, cv);
cleanup:
	rt_value_unref(tmp);
	free(pads);
	free(ax);
	return rc;
}

static int k_center_crop_pad(struct rt_kctx *k)
{
	struct rt_value *x;
	int64_t *shape = NULL, *ax = NULL, begin[RT_MAX_RANK] = { 0 }, odims[RT_MAX_RANK];
	int axes[RT_MAX_RANK], present, rc;
	size_t n, na;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_ints(k, 1, &shape, &n)) < 0)
		return rc;
	if ((rc = ks_ints(k, KS_NO_INPUT, "axes", &ax, &na, &present)) < 0)
		goto cleanup;
	if (present) {
		if ((rc = ks_axes(k, ax, na, x->rank, axes)) < 0)
			goto cleanup;
	} else {
		na = (size_t)x->rank;
		for (int i = 0; i < x->rank; i++)
			axes[i] = i;
	}
	if (n != na) {
		rc = rt_err(k, "shape has %zu entries for %zu axes", n, na);
		goto cleanup;
	}
	memcpy(odims, x->dims, sizeof(odims));
	for (size_t i = 0; i < na; i++) {
		int a = axes[i];
		int64_t d = x->dims[a], t = shape[i];

		if (t < 0) {
			rc = rt_err(k, "negative target size %lld", (long long)t);
			goto cleanup;
		}
		odims[a] = t;
		begin[a] = t >= d ? (t - d) / 2 : -((d - t) / 2);
	}
	rc = pad_run(k, x, begin, odims, PAD_CONSTANT, NULL);
cleanup:
	free(shape);
	free(ax);
	return rc;
}

/* ---- Trilu and ReverseSequence --------------------------------------- */

static int k_trilu(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	int64_t off = 0, rows, cols;
	int upper = (int)rt_attr_int(k, "upper", 1), rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (rt_in(k, 1) && (rc = rt_in_int(k, 1, &off)) < 0)
		return rc;
	if (x->rank < 2)
		return rt_err(k, "input must have rank >= 2, has %d", x->rank);
	rows = x->dims[x->rank - 2];
	cols = x->dims[x->rank - 1];
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, x->dims)))
		return IR_ENOMEM;
	for (int64_t o = 0; o < x->numel; o++) {
		int64_t j = o % cols, i = (o / cols) % rows;
		int keep = upper ? j - i >= off : j - i <= off;

		if ((rc = keep ? ks_copy(k, y, o, x, o, 1) : ks_zero(k, y, o)) < 0)
			return rc;
	}
	return 0;
}

static int k_reverse_sequence(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	int64_t *lens = NULL, st[RT_MAX_RANK], inner = 1;
	int64_t ba = rt_attr_int(k, "batch_axis", 1), ta = rt_attr_int(k, "time_axis", 0);
	size_t n;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (x->rank < 2 || !((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
		return rt_err(k, "batch_axis and time_axis must be 0 and 1 of a rank >= 2 input");
	if ((rc = rt_in_ints(k, 1, &lens, &n)) < 0)
		return rc;
	if ((int64_t)n != x->dims[ba]) {
		rc = rt_err(k, "sequence_lens has %zu entries for batch %lld", n,
			    (long long)x->dims[ba]);
		goto cleanup;
	}
	ks_strides(x->rank, x->dims, st);
	inner = st[1];
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, x->dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	for (int64_t b = 0; b < x->dims[ba]; b++) {
		int64_t len = lens[b];

		if (len < 0 || len > x->dims[ta]) {
			rc = rt_err(k, "sequence length %lld of batch %lld out of range [0, %lld]",
				    (long long)len, (long long)b, (long long)x->dims[ta]);
			goto cleanup;
		}
		for (int64_t t = 0; t < x->dims[ta]; t++) {
			int64_t src = t < len ? len - 1 - t : t;

			if ((rc = ks_copy(k, y, b * st[ba] + t * st[ta], x,
					  b * st[ba] + src * st[ta], inner)) < 0)
				goto cleanup;
		}
	}
cleanup:
	free(lens);
	return rc;
}

const struct rt_kernel rt_kernels_slice[] = {
	{ "ai.onnx", "CenterCropPad", 18, RT_OPEN, k_center_crop_pad },
	{ "ai.onnx", "Concat", 1, RT_OPEN, k_concat },
	{ "ai.onnx", "Pad", 1, RT_OPEN, k_pad },
	{ "ai.onnx", "ReverseSequence", 10, RT_OPEN, k_reverse_sequence },
	{ "ai.onnx", "Slice", 1, RT_OPEN, k_slice },
	{ "ai.onnx", "Split", 1, RT_OPEN, k_split },
	{ "ai.onnx", "Tile", 1, RT_OPEN, k_tile },
	{ "ai.onnx", "Trilu", 14, RT_OPEN, k_trilu },
};
const size_t rt_n_kernels_slice = sizeof(rt_kernels_slice) / sizeof(rt_kernels_slice[0]);
