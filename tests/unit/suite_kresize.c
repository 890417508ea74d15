/* suite_kresize.c: Resize and Upsample, the interpreter's kernel and shape
 * inference, on seeded random cases (every version, mode,
 * coordinate_transformation_mode and nearest_mode; scales up and down,
 * integer and not, or sizes with axes and keep_aspect_ratio_policy;
 * antialias, cubic_coeff_a, exclude_outside, tf_crop_and_resize's roi and
 * extrapolation_value; ranks 1-5; every dtype the kernel has a path for)
 * against a float64 reference written here from the specification's
 * formulas, and on hand-derived cases. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer.h"
#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"
#include "runtime/runtime.h"

enum { NEAREST, LINEAR, CUBIC };
#define RMAX 5
#define EPS 1e-9   /* coordinate slack: either side of a rounding edge */

struct rz {
	int upsample, opset, mode;
	const char *ctm, *nm, *policy;   /* NULL: attribute absent */
	int rank, dtype;
	int64_t in[RMAX];
	int n_sel, sel[RMAX];            /* the axes scales, sizes and roi name */
	int has_axes;
	int64_t axes_attr[RMAX];         /* sel as written, some negative */
	int by_sizes;
	float scales[RMAX];
	int64_t sizes[RMAX];
	int has_roi;
	float roi[2 * RMAX];
	int has_a, exclude, antialias, has_extrap;
	float cubic_a, extrap;
	double *x;                       /* the input, row-major */
};

/* ---- the reference ---------------------------------------------------- */

/* One axis: input and output lengths, the scale of the coordinate
 * formulas (as given, sizes / input, or the policy's), the fractional
 * target length scale * input, the roi, whether it is resized at all. */
struct ax {
	int64_t n, m;
	double scale, target, rs, re;
	int kept;
};

static int is_tfc(const struct rz *c)
{
	return c->ctm && !strcmp(c->ctm, "tf_crop_and_resize");
}

static void ref_axes(const struct rz *c, struct ax *a)
{
	int tfc = is_tfc(c);

	for (int d = 0; d < c->rank; d++)
		a[d] = (struct ax){ c->in[d], c->in[d], 1, (double)c->in[d], 0, 1, 0 };
	if (c->has_roi && tfc)
		for (int i = 0; i < c->n_sel; i++) {
			a[c->sel[i]].rs = c->roi[i];
			a[c->sel[i]].re = c->roi[c->n_sel + i];
		}
	if (!c->by_sizes) {
		/* floor(input * (end - start) * scale); the cases keep the
		 * product away from integers it does not equal */
		for (int i = 0; i < c->n_sel; i++) {
			struct ax *b = &a[c->sel[i]];
			double ext = tfc ? b->re - b->rs : 1;

			b->m = (int64_t)floor((double)b->n * ext * c->scales[i]);
			b->scale = c->scales[i];
			b->target = c->scales[i] * (double)b->n;
		}
	} else if (!c->policy || !strcmp(c->policy, "stretch")) {
		for (int i = 0; i < c->n_sel; i++) {
			struct ax *b = &a[c->sel[i]];

			b->m = c->sizes[i];
			b->scale = (double)c->sizes[i] / (double)b->n;
			b->target = (double)c->sizes[i];
		}
	} else {
		/* scale = min (max) of sizes[i] / in[d]; out = round_int(scale *
		 * in), halves up: exact in integers */
		int larger = !strcmp(c->policy, "not_smaller"), k = 0;

		for (int i = 1; i < c->n_sel; i++) {
			int64_t l = c->sizes[i] * a[c->sel[k]].n, r = c->sizes[k] * a[c->sel[i]].n;

			if (larger ? l > r : l < r)
				k = i;
		}
		for (int i = 0; i < c->n_sel; i++) {
			struct ax *b = &a[c->sel[i]];
			int64_t nk = a[c->sel[k]].n;

			b->m = (2 * b->n * c->sizes[k] + nk) / (2 * nk);
			b->scale = (double)c->sizes[k] / (double)nk;
			b->target = b->scale * (double)b->n;
		}
	}
	for (int d = 0; d < c->rank; d++)
		a[d].kept = a[d].m == a[d].n && a[d].scale == 1 && !tfc;
}

/* x_original of output coordinate o: the formulas of the specification
 * (an output of length 1 maps to 0 under align_corners). */
static double ref_coord(const char *ctm, const struct ax *a, int64_t o)
{
	double s = a->scale, n = (double)a->n, m = (double)a->m, x = (double)o;

	if (!ctm || !strcmp(ctm, "asymmetric"))
		return x / s;
	if (!strcmp(ctm, "half_pixel"))
		return (x + 0.5) / s - 0.5;
	if (!strcmp(ctm, "half_pixel_symmetric")) {
		double adjustment = m / a->target, center = n / 2;
		double offset = center * (1 - adjustment);

		return offset + (x + 0.5) / s - 0.5;
	}
	if (!strcmp(ctm, "pytorch_half_pixel"))
		return m > 1 ? (x + 0.5) / s - 0.5 : 0;
	if (!strcmp(ctm, "align_corners"))
		return m > 1 ? x * (n - 1) / (m - 1) : 0;
	if (!strcmp(ctm, "tf_half_pixel_for_nn"))
		return (x + 0.5) / s;
	/* tf_crop_and_resize */
	return m > 1 ? a->rs * (n - 1) + x * (a->re - a->rs) * (n - 1) / (m - 1) :
	       0.5 * (a->rs + a->re) * (n - 1);
}

static double coord_of(const struct rz *c, const struct ax *a, int64_t o)
{
	return a->kept ? (double)o : ref_coord(c->ctm, a, o);
}

/* nm NULL: Resize-10 and Upsample, which have no nearest_mode: the ceiling
 * when downscaling, else the floor (onnxruntime's rule). */
static double ref_nearest(const char *nm, double x, double scale)
{
	double f = floor(x);

	if (!nm)
		return scale < 1 ? ceil(x) : f;
	if (!strcmp(nm, "floor"))
		return f;
	if (!strcmp(nm, "ceil"))
		return ceil(x);
	if (x - f == 0.5)
		return !strcmp(nm, "round_prefer_floor") ? f : f + 1;
	return floor(x + 0.5);
}

static int64_t clampi(double i, int64_t n)
{
	return i < 0 ? 0 : i > (double)(n - 1) ? n - 1 : (int64_t)i;
}

/* 0 inside, 1 outside the input (tf_crop_and_resize extrapolates), 2
 * within EPS of its edge. */
static int outside(const struct rz *c, const struct ax *a, double x)
{
	double hi = (double)(a->n - 1);

	if (!is_tfc(c))
		return 0;
	if (fabs(x) <= EPS || fabs(x - hi) <= EPS)
		return 2;
	return x < 0 || x > hi;
}

static double kern(int mode, double t, double A)
{
	t = fabs(t);
	if (mode == LINEAR)
		return t < 1 ? 1 - t : 0;
	if (t < 1)
		return (A + 2) * t * t * t - (A + 3) * t * t + 1;
	if (t < 2)
		return A * t * t * t - 5 * A * t * t + 8 * A * t - 4 * A;
	return 0;
}

/* The taps of one output coordinate: input index and weight. */
struct taps {
	int n;
	int64_t i[64];
	double w[64];
};

/* Separable filter: the kernel at the distances (times min(scale, 1)
 * under antialias, which stretches it), taps outside the input at the
 * edge, or with exclude_outside weighing 0; normalized under antialias or
 * exclude_outside. */
static void ref_taps(const struct rz *c, const struct ax *a, double x, struct taps *t)
{
	double se = c->antialias && a->scale < 1 ? a->scale : 1, sum = 0;
	double reach = (c->mode == LINEAR ? 1 : 2) / se, A = c->has_a ? c->cubic_a : -0.75;

	t->n = 0;
	for (double i = floor(x - reach); i <= ceil(x + reach); i++) {
		double w = kern(c->mode, (x - i) * se, A);

		if (c->exclude && (i < 0 || i > (double)(a->n - 1)))
			w = 0;
		CU_ASSERT_FATAL(t->n < 64);
		t->i[t->n] = clampi(i, a->n);
		t->w[t->n++] = w;
		sum += w;
	}
	if ((c->antialias || c->exclude) && sum != 0)
		for (int k = 0; k < t->n; k++)
			t->w[k] /= sum;
}

/* ---- dtypes ------------------------------------------------------------ */

static int is_int(int t)
{
	return t == IR_DTYPE_INT8 || t == IR_DTYPE_UINT8 || t == IR_DTYPE_INT16 ||
	       t == IR_DTYPE_UINT16 || t == IR_DTYPE_INT32 || t == IR_DTYPE_INT64;
}

/* A real as an element of an integer type: truncated, saturated. */
static double as_int(int t, double v)
{
	double lo = t == IR_DTYPE_INT8 ? -128 : t == IR_DTYPE_INT16 ? -32768 :
		    t == IR_DTYPE_INT32 ? -2147483648.0 : t == IR_DTYPE_INT64 ? -9.2e18 : 0;
	double hi = t == IR_DTYPE_INT8 ? 127 : t == IR_DTYPE_UINT8 ? 255 :
		    t == IR_DTYPE_INT16 ? 32767 : t == IR_DTYPE_UINT16 ? 65535 :
		    t == IR_DTYPE_INT32 ? 2147483647.0 : 9.2e18;

	v = trunc(v);
	return v < lo ? lo : v > hi ? hi : v;
}

/* Absolute error allowed on a value v of dtype t computed from inputs of
 * magnitude up to mx (the kernel sums in double and rounds once). */
static double tol_of(int t, double v, double mx)
{
	switch (t) {
	case IR_DTYPE_DOUBLE: return 1e-12 * (mx + 1);
	case IR_DTYPE_FLOAT16: return 1e-3 * (fabs(v) + 1);
	case IR_DTYPE_BFLOAT16: return 8e-3 * (fabs(v) + 1);
	default: return 2e-6 * (mx + 1);
	}
}

/* ---- the random cases -------------------------------------------------- */

static uint64_t rng;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int rint_in(int lo, int hi)
{
	return lo + (int)(rnd() % (uint64_t)(hi - lo + 1));
}

static double runif(double lo, double hi)
{
	return lo + (hi - lo) * (double)(rnd() >> 11) / 9007199254740992.0;
}

/* A scale for an axis of length n: integer or not, up or down, rounded
 * to 4 decimals (then float32), the output at least one element. */
static float pick_scale(int64_t n, int up_only)
{
	static const float fixed[] = { 2, 3, 4, 0.5f, 0.25f, 0.75f, 1.5f, 2.5f, 1 };
	double r = runif(0, 1);
	float s = r < 0.4 ? fixed[rint_in(0, 8)] :
		  (float)(round((r < 0.7 ? runif(0.2, 1) : runif(1, 3.2)) * 1e4) / 1e4);

	if (up_only && s < 1)
		s = 1 / s;
	while (floor((double)n * s) < 1)
		s *= 2;
	return s;
}

/* bfloat16: Resize 13 and later */
static const int float_types[] = { IR_DTYPE_DOUBLE, IR_DTYPE_FLOAT16, IR_DTYPE_BFLOAT16 };
static const int int_types[] = {
	IR_DTYPE_INT8, IR_DTYPE_UINT8, IR_DTYPE_INT16, IR_DTYPE_UINT16, IR_DTYPE_INT32,
	IR_DTYPE_INT64
};

/* A random case of the given combination; 0, or -1 when its draws gave an
 * output too large or a scaled length too near an integer it is not (the
 * caller draws again). */
static int gen_case(struct rz *c, int upsample, int opset, int mode, const char *ctm,
		    const char *nm, int by_sizes)
{
	struct ax a[RMAX];
	int64_t numel = 1, out = 1;
	int spatial[RMAX] = { 0 };
	double r;

	memset(c, 0, sizeof(*c));
	c->upsample = upsample;
	c->opset = opset;
	c->mode = mode;
	c->ctm = ctm;
	c->nm = nm;
	c->by_sizes = by_sizes;
	c->rank = upsample && opset < 7 ? 4 : rint_in(1, RMAX);
	for (int d = 0; d < c->rank; d++) {
		c->in[d] = rint_in(1, c->rank <= 2 ? 12 : 6);
		if (d >= c->rank - 2 && c->in[d] == 1 && rint_in(0, 4))
			c->in[d] = rint_in(2, 6);
		numel *= c->in[d];
	}
	c->n_sel = c->rank;
	for (int d = 0; d < c->rank; d++)
		c->sel[d] = d;
	if (!upsample && opset >= 18 && c->rank > 1 && rint_in(0, 9) < 4) {
		c->n_sel = 0;
		for (int d = 0; d < c->rank; d++)
			if (rint_in(0, 1))
				c->sel[c->n_sel++] = d;
		if (!c->n_sel)
			c->sel[c->n_sel++] = c->rank - 1;
		/* any order: swap the first two */
		if (c->n_sel > 1 && rint_in(0, 1)) {
			int t = c->sel[0];

			c->sel[0] = c->sel[1];
			c->sel[1] = t;
		}
		c->has_axes = 1;
		for (int i = 0; i < c->n_sel; i++)
			c->axes_attr[i] = rint_in(0, 2) ? c->sel[i] : c->sel[i] - c->rank;
	}
	for (int i = 0; i < c->n_sel; i++)
		spatial[i] = !(upsample && opset < 7 && c->sel[i] < 2);
	if (!strcmp(ctm, "tf_crop_and_resize")) {
		c->has_roi = 1;
		for (int i = 0; i < c->n_sel; i++) {
			c->roi[i] = rint_in(0, 4) ? (float)runif(-0.3, 0.5) : 0;
			c->roi[c->n_sel + i] = c->roi[i] + (float)runif(0.2, 1.0);
			if (!rint_in(0, 4))
				c->roi[c->n_sel + i] = 1;
		}
		c->has_extrap = 1;
		c->extrap = rint_in(0, 1) ? (float)rint_in(-3, 7) : (float)runif(-3, 3);
	}
	if (!by_sizes) {
		for (int i = 0; i < c->n_sel; i++)
			c->scales[i] = spatial[i] ? pick_scale(c->in[c->sel[i]], upsample) : 1;
	} else {
		for (int i = 0; i < c->n_sel; i++)
			c->sizes[i] = rint_in(1, 3 * (int)c->in[c->sel[i]] + 1);
		if (opset >= 18 && rint_in(0, 9) < 4)
			c->policy = rint_in(0, 1) ? "not_larger" : "not_smaller";
	}
	if (mode == CUBIC) {
		c->has_a = 1;
		r = runif(0, 1);
		c->cubic_a = r < 0.3 ? -0.75f : r < 0.6 ? -0.5f : (float)runif(-1, -0.3);
		c->exclude = rint_in(0, 1);
	}
	if (mode != NEAREST && opset >= 18 && !upsample && rint_in(0, 9) < 5) {
		c->antialias = 1;
		if (mode == LINEAR && rint_in(0, 2) == 0)
			c->exclude = 1;
	}
	r = runif(0, 1);
	c->dtype = r < 0.6 || (upsample && opset < 7) ? IR_DTYPE_FLOAT :
		   r < 0.75 ? float_types[rint_in(0, !upsample && opset >= 13 ? 2 : 1)] :
		   int_types[rint_in(0, 5)];
	if (mode == NEAREST && rint_in(0, 19) == 0)
		c->dtype = IR_DTYPE_BOOL;
	ref_axes(c, a);
	for (int d = 0; d < c->rank; d++) {
		double p = (double)a[d].n * (is_tfc(c) ? a[d].re - a[d].rs : 1) * a[d].scale;

		if (!c->by_sizes && p != floor(p) && fabs(p - floor(p + 0.5)) < 1e-6)
			return -1;
		if (a[d].m < 0)
			return -1;
		out *= a[d].m;
	}
	if (out > 20000)
		return -1;
	CU_ASSERT_FATAL((c->x = malloc((size_t)numel * sizeof(double))) != NULL);
	for (int64_t i = 0; i < numel; i++) {
		/* eighths: exact in every float type; integers of the type */
		if (c->dtype == IR_DTYPE_BOOL)
			c->x[i] = rint_in(0, 1);
		else if (!is_int(c->dtype))
			c->x[i] = rint_in(-40, 40) / 8.0;
		else if (c->dtype == IR_DTYPE_UINT8 || c->dtype == IR_DTYPE_UINT16)
			c->x[i] = rint_in(0, 255);
		else if (c->dtype == IR_DTYPE_INT8)
			c->x[i] = rint_in(-128, 127);
		else
			c->x[i] = rint_in(-1000, 1000);
	}
	return 0;
}

/* ---- building and running ---------------------------------------------- */

static struct ir_model *build(const struct rz *c)
{
	static const char *const modes[] = { "nearest", "linear", "cubic" };
	struct ir_model *m = tm_new(c->opset);
	struct ir_node *n;
	double v[2 * RMAX];
	int64_t nl = c->n_sel, n2 = 2 * c->n_sel, zero = 0;

	tm_init(m, "x", c->dtype, c->in, (size_t)c->rank, c->x);
	for (int i = 0; i < c->n_sel; i++)
		v[i] = c->scales[i];
	if (c->upsample && c->opset < 7) {
		n = tm_node(m, "Upsample", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
		ir_node_set_float(n, "height_scale", c->scales[2]);
		ir_node_set_float(n, "width_scale", c->scales[3]);
	} else if (c->upsample && c->opset < 9) {
		n = tm_node(m, "Upsample", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
		ir_node_set_floats(n, "scales", c->scales, (size_t)c->rank);
	} else if (c->upsample || c->opset < 11) {
		tm_init(m, "sc", IR_DTYPE_FLOAT, &nl, 1, v);
		n = tm_node(m, c->upsample ? "Upsample" : "Resize", NULL, TM_NAMES("x", "sc"), 2,
			    TM_NAMES("y"), 1);
	} else {
		const char *roi = "", *sc = "", *sz = "";

		if (c->has_roi) {
			for (int i = 0; i < 2 * c->n_sel; i++)
				v[i] = c->roi[i];
			tm_init(m, "roi", IR_DTYPE_FLOAT, &n2, 1, v);
			roi = "roi";
		} else if (c->opset == 11) {
			tm_init(m, "roi", IR_DTYPE_FLOAT, &zero, 1, v);
			roi = "roi";
		}
		for (int i = 0; i < c->n_sel; i++)
			v[i] = c->scales[i];
		if (!c->by_sizes || c->opset == 11) {
			tm_init(m, "sc", IR_DTYPE_FLOAT, c->by_sizes ? &zero : &nl, 1, v);
			sc = "sc";
		}
		if (c->by_sizes) {
			for (int i = 0; i < c->n_sel; i++)
				v[i] = (double)c->sizes[i];
			tm_init(m, "sz", IR_DTYPE_INT64, &nl, 1, v);
			sz = "sz";
		}
		n = tm_node(m, "Resize", NULL, TM_NAMES("x", roi, sc, sz), *sz ? 4 : 3,
			    TM_NAMES("y"), 1);
		ir_node_set_string(n, "coordinate_transformation_mode", c->ctm);
		if (c->nm)
			ir_node_set_string(n, "nearest_mode", c->nm);
		if (c->has_a)
			ir_node_set_float(n, "cubic_coeff_a", c->cubic_a);
		if (c->exclude)
			ir_node_set_int(n, "exclude_outside", 1);
		if (c->has_extrap)
			ir_node_set_float(n, "extrapolation_value", c->extrap);
		if (c->antialias)
			ir_node_set_int(n, "antialias", 1);
		if (c->has_axes)
			ir_node_set_ints(n, "axes", c->axes_attr, (size_t)c->n_sel);
		if (c->policy)
			ir_node_set_string(n, "keep_aspect_ratio_policy", c->policy);
	}
	ir_node_set_string(n, "mode", c->upsample && c->opset < 7 && c->mode == LINEAR ?
			   "bilinear" : modes[c->mode]);
	tm_output(m, "y", c->dtype, NULL, 0);
	return m;
}

static int run(struct ir_model *m, struct rt_value **y, char *err)
{
	struct rt_opts o = { .threads = 1 };
	struct rt_session *s = NULL;
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	*y = NULL;
	if ((rc = rt_session_new(m, &o, &s, &d)) == 0)
		rc = rt_session_run(s, NULL, 0, y, &d);
	snprintf(err, 512, "%s", rc < 0 ? d.msg : "");
	rt_session_free(s);
	return rc;
}

static void describe(const struct rz *c, char *buf, size_t size)
{
	size_t k = 0;

	k += (size_t)snprintf(buf + k, size - k, "%s-%d mode %d %s %s %s dtype %d in [",
			      c->upsample ? "Upsample" : "Resize", c->opset, c->mode,
			      c->ctm ? c->ctm : "-", c->nm ? c->nm : "-",
			      c->policy ? c->policy : "-", c->dtype);
	for (int d = 0; d < c->rank && k < size; d++)
		k += (size_t)snprintf(buf + k, size - k, "%s%lld", d ? "," : "",
				      (long long)c->in[d]);
	for (int i = 0; i < c->n_sel && k < size; i++)
		k += (size_t)snprintf(buf + k, size - k, " ax%d:%s=%.7g", c->sel[i],
				      c->by_sizes ? "size" : "scale",
				      c->by_sizes ? (double)c->sizes[i] : (double)c->scales[i]);
	if (c->has_roi && k < size)
		for (int i = 0; i < c->n_sel && k < size; i++)
			k += (size_t)snprintf(buf + k, size - k, " roi%d=[%.7g,%.7g]", c->sel[i],
					      (double)c->roi[i], (double)c->roi[c->n_sel + i]);
	if (k < size)
		snprintf(buf + k, size - k, " a=%.7g excl=%d aa=%d extrap=%.7g",
			 (double)c->cubic_a, c->exclude, c->antialias, (double)c->extrap);
}

static int64_t numel_of(const struct rz *c)
{
	int64_t n = 1;

	for (int d = 0; d < c->rank; d++)
		n *= c->in[d];
	return n;
}

/* Compare the kernel's output with the reference; 0 or -1 (printed). */
static int check_case(const struct rz *c, const struct rt_value *y, const char *what)
{
	struct ax a[RMAX];
	int *ext[RMAX] = { 0 };
	int64_t *lo[RMAX] = { 0 }, *hi[RMAX] = { 0 }, idx[RMAX] = { 0 }, xstr[RMAX];
	struct taps *tp[RMAX] = { 0 };
	double mx = 0, ev = is_int(c->dtype) ? as_int(c->dtype, c->extrap) : c->extrap;
	char buf[700];
	int bad = 0;

	ref_axes(c, a);
	describe(c, buf, sizeof(buf));
	if (y->rank != c->rank) {
		fprintf(stderr, "\n%s: %s: rank %d\n", buf, what, y->rank);
		return -1;
	}
	for (int d = 0; d < c->rank; d++)
		if (y->dims[d] != a[d].m) {
			fprintf(stderr, "\n%s: %s: dim %d is %lld, want %lld\n", buf, what, d,
				(long long)y->dims[d], (long long)a[d].m);
			return -1;
		}
	for (int d = c->rank - 1, s = 1; d >= 0; s *= (int)c->in[d], d--)
		xstr[d] = s;
	for (int d = 0; d < c->rank; d++) {
		int64_t m = a[d].m ? a[d].m : 1;

		CU_ASSERT_FATAL((ext[d] = malloc((size_t)m * sizeof(int))) != NULL);
		CU_ASSERT_FATAL((lo[d] = malloc((size_t)m * sizeof(int64_t))) != NULL);
		CU_ASSERT_FATAL((hi[d] = malloc((size_t)m * sizeof(int64_t))) != NULL);
		CU_ASSERT_FATAL((tp[d] = malloc((size_t)m * sizeof(struct taps))) != NULL);
		for (int64_t o = 0; o < a[d].m; o++) {
			double x = coord_of(c, &a[d], o);
			double i0 = ref_nearest(c->nm, x - EPS, a[d].scale);
			double i1 = ref_nearest(c->nm, x, a[d].scale);
			double i2 = ref_nearest(c->nm, x + EPS, a[d].scale);

			ext[d][o] = a[d].kept ? 0 : outside(c, &a[d], x);
			lo[d][o] = clampi(fmin(i0, fmin(i1, i2)), a[d].n);
			hi[d][o] = clampi(fmax(i0, fmax(i1, i2)), a[d].n);
			if (c->mode != NEAREST) {
				if (a[d].kept) {
					tp[d][o].n = 1;
					tp[d][o].i[0] = o;
					tp[d][o].w[0] = 1;
				} else {
					ref_taps(c, &a[d], x, &tp[d][o]);
				}
			}
		}
	}
	for (int64_t i = 0, numel = numel_of(c); i < numel; i++)
		mx = fmax(mx, fabs(c->x[i]));
	for (int64_t o = 0; o < y->numel && bad < 3; o++) {
		double got = rt_value_get_f64(y, o), want = NAN;
		int fl = 0, ok = 0;

		for (int d = 0; d < c->rank; d++)
			fl = ext[d][idx[d]] == 1 || fl == 1 ? 1 : ext[d][idx[d]] == 2 ? 2 : fl;
		if (fl == 1) {
			ok = got == (c->dtype == IR_DTYPE_BOOL ? ev != 0 : ev) ||
			     (c->dtype != IR_DTYPE_FLOAT && c->dtype != IR_DTYPE_DOUBLE &&
			      !is_int(c->dtype) && fabs(got - ev) <= tol_of(c->dtype, ev, 0));
			want = ev;
		} else if (c->mode == NEAREST) {
			/* every combination of the candidates */
			for (int bits = 0; bits < 1 << c->rank && !ok; bits++) {
				int64_t off = 0;

				for (int d = 0; d < c->rank; d++)
					off += (bits >> d & 1 ? hi[d][idx[d]] : lo[d][idx[d]]) * xstr[d];
				want = c->x[off];
				ok = got == want;
			}
		} else {
			/* the sum over every combination of taps */
			int k[RMAX] = { 0 };
			double sum = 0, t;

			for (;;) {
				double w = 1;
				int64_t off = 0;
				int d;

				for (d = 0; d < c->rank; d++) {
					const struct taps *q = &tp[d][idx[d]];

					w *= q->w[k[d]];
					off += q->i[k[d]] * xstr[d];
				}
				sum += w * c->x[off];
				for (d = c->rank - 1; d >= 0; d--) {
					if (++k[d] < tp[d][idx[d]].n)
						break;
					k[d] = 0;
				}
				if (d < 0)
					break;
			}
			want = sum;
			t = tol_of(c->dtype, sum, mx);
			if (is_int(c->dtype))
				ok = got >= as_int(c->dtype, sum - 1e-9 * (mx + 1)) &&
				     got <= as_int(c->dtype, sum + 1e-9 * (mx + 1));
			else
				ok = fabs(got - sum) <= t;
		}
		if (fl == 2 && !ok)
			ok = got == ev;
		if (!ok) {
			fprintf(stderr, "\n%s: %s: element %lld (", buf, what, (long long)o);
			for (int d = 0; d < c->rank; d++)
				fprintf(stderr, "%s%lld", d ? "," : "", (long long)idx[d]);
			fprintf(stderr, "): got %.9g, want %.9g\n", got, want);
			bad++;
		}
		for (int d = c->rank - 1; d >= 0; d--) {
			if (++idx[d] < a[d].m)
				break;
			idx[d] = 0;
		}
	}
	for (int d = 0; d < c->rank; d++) {
		free(ext[d]);
		free(lo[d]);
		free(hi[d]);
		free(tp[d]);
	}
	return bad ? -1 : 0;
}

/* The shape inference gives the reference's dims. */
static int check_infer(const struct rz *c, struct ir_model *m)
{
	struct ax a[RMAX];
	struct ir_infer r;
	struct ir_diag d;
	const struct ir_vtype *t;
	char buf[700];
	int bad = 0;

	ref_axes(c, a);
	describe(c, buf, sizeof(buf));
	ir_diag_init(&d);
	ir_infer_init(&r);
	if (ir_infer_model(m, &r, &d) < 0) {
		fprintf(stderr, "\n%s: inference failed: %s\n", buf, d.msg);
		ir_infer_release(&r);
		return -1;
	}
	t = ir_infer_get(&r, m->graph->nodes[0]->outputs[0]);
	if (!t || t->rank != c->rank) {
		fprintf(stderr, "\n%s: inferred rank %d\n", buf, t ? t->rank : -2);
		bad = 1;
	}
	for (int i = 0; !bad && i < c->rank; i++)
		if (t->dims[i].kind != IR_VDIM_VALUE || t->dims[i].value != a[i].m) {
			fprintf(stderr, "\n%s: inferred dim %d is %lld (kind %d), want %lld\n", buf,
				i, (long long)t->dims[i].value, (int)t->dims[i].kind,
				(long long)a[i].m);
			bad = 1;
		}
	ir_infer_release(&r);
	return bad ? -1 : 0;
}

/* Every combination the versions allow, reps times, each with its own
 * random draws; returns the number of cases run. */
static int sweep(uint64_t seed, int reps, int *failed)
{
	static const char *const ctms[] = {
		"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
		"tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"
	};
	static const char *const nms[] = { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil" };
	static const struct { int upsample, opset; } vers[] = {
		{ 1, 1 }, { 1, 7 }, { 1, 9 }, { 0, 10 }, { 0, 11 }, { 0, 13 }, { 0, 18 }, { 0, 19 }
	};
	int n = 0;

	rng = seed;
	for (int rep = 0; rep < reps; rep++)
		for (size_t v = 0; v < sizeof(vers) / sizeof(vers[0]); v++) {
			int up = vers[v].upsample, op = vers[v].opset, old = up || op < 11;

			for (int mode = NEAREST; mode <= (old ? LINEAR : CUBIC); mode++)
				for (int ct = 0; ct < (old ? 1 : op >= 19 ? 7 : 6); ct++)
					for (int nm = 0; nm < (mode == NEAREST && !old ? 4 : 1); nm++)
						for (int bs = 0; bs <= !old; bs++)
							for (int k = 0; k < (old ? 4 : 1); k++) {
								struct rz c;
								struct ir_model *m;
								struct rt_value *y;
								char err[512];

								while (gen_case(&c, up, op, mode,
										old ? "asymmetric" : ctms[ct],
										mode == NEAREST && !old ? nms[nm] : NULL,
										bs) < 0)
									;
								if (old)
									c.ctm = NULL;
								m = build(&c);
								if (run(m, &y, err) < 0) {
									char buf[700];

									describe(&c, buf, sizeof(buf));
									fprintf(stderr, "\n%s: %s\n", buf, err);
									(*failed)++;
								} else {
									*failed += check_case(&c, y, "kernel") < 0 ||
										   check_infer(&c, m) < 0;
									rt_value_unref(y);
								}
								ir_model_free(m);
								free(c.x);
								n++;
							}
		}
	return n;
}

static void test_resize_random(void)
{
	int failed = 0, n = sweep(20261205, 2, &failed);

	CU_ASSERT(n > 600);
	if (failed)
		fprintf(stderr, "\n%d of %d random Resize cases differ from the reference\n",
			failed, n);
	CU_ASSERT_EQUAL(failed, 0);
}

/* ---- hand-derived cases ------------------------------------------------ */

/* One Resize of opset on initializer x (dtype, dims) with the other inputs
 * named in `in` (initializers the caller added); attributes by the
 * caller. */
static struct ir_node *node(struct ir_model *m, const char *const *in, size_t n, int dtype)
{
	struct ir_node *nd = tm_node(m, "Resize", NULL, in, n, TM_NAMES("y"), 1);

	tm_output(m, "y", dtype, NULL, 0);
	return nd;
}

static void expect(struct ir_model *m, int rank, const int64_t *dims, const double *want,
		   double tol)
{
	struct rt_value *y;
	struct ir_infer r;
	struct ir_diag d;
	const struct ir_vtype *t;
	char err[512];

	CU_ASSERT_FATAL(run(m, &y, err) == 0);
	CU_ASSERT_EQUAL_FATAL(y->rank, rank);
	for (int i = 0; i < rank; i++)
		CU_ASSERT_EQUAL(y->dims[i], dims[i]);
	for (int64_t i = 0; i < y->numel; i++) {
		double got = rt_value_get_f64(y, i);

		if (!(fabs(got - want[i]) <= tol))
			fprintf(stderr, "\nelement %lld: got %.9g, want %.9g\n", (long long)i,
				got, want[i]);
		CU_ASSERT(fabs(got - want[i]) <= tol);
	}
	rt_value_unref(y);
	ir_diag_init(&d);
	ir_infer_init(&r);
	CU_ASSERT_FATAL(ir_infer_model(m, &r, &d) == 0);
	t = ir_infer_get(&r, m->graph->nodes[0]->outputs[0]);
	CU_ASSERT_FATAL(t != NULL && t->rank == rank);
	for (int i = 0; i < rank; i++)
		CU_ASSERT(t->dims[i].kind == IR_VDIM_VALUE && t->dims[i].value == dims[i]);
	ir_infer_release(&r);
	ir_model_free(m);
}

static const double iota[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };

static void test_align_corners_lengths(void)
{
	struct ir_model *m = tm_new(17);
	double want[16];
	struct ir_node *n;

	/* 0..10 by 1.5: 16 outputs; align_corners maps o to o * 10 / 15 (the
	 * output's length, not 16.5), which linear gives back exactly */
	for (int o = 0; o < 16; o++)
		want[o] = o * 10.0 / 15;
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(11), 1, iota);
	tm_init(m, "sc", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 1.5 });
	n = node(m, TM_NAMES("x", "", "sc"), 3, IR_DTYPE_FLOAT);
	ir_node_set_string(n, "mode", "linear");
	ir_node_set_string(n, "coordinate_transformation_mode", "align_corners");
	expect(m, 1, TM_DIMS(16), want, 1e-5);

	/* nearest, round_prefer_floor: 0 .67 1.33 2 2.67 3.33 4 ... 9.33 10 */
	m = tm_new(17);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(11), 1, iota);
	tm_init(m, "sc", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 1.5 });
	n = node(m, TM_NAMES("x", "", "sc"), 3, IR_DTYPE_FLOAT);
	ir_node_set_string(n, "coordinate_transformation_mode", "align_corners");
	expect(m, 1, TM_DIMS(16), (const double[]){ 0, 1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 8, 9, 9, 10 },
	       0);
}

static void test_pytorch_half_pixel_one(void)
{
	struct ir_model *m = tm_new(13);
	struct ir_node *n;

	/* 0..3 by 0.3: one output (1.2 floored), which pytorch_half_pixel
	 * maps to 0: cubic there is x[0] exactly (weights 0 1 0 0) */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4), 1, iota);
	tm_init(m, "sc", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 0.3 });
	n = node(m, TM_NAMES("x", "", "sc"), 3, IR_DTYPE_FLOAT);
	ir_node_set_string(n, "mode", "cubic");
	ir_node_set_string(n, "coordinate_transformation_mode", "pytorch_half_pixel");
	expect(m, 1, TM_DIMS(1), (const double[]){ 0 }, 1e-6);
}

static void test_output_lengths_exact(void)
{
	struct ir_model *m = tm_new(13);
	struct ir_node *n;

	/* 10 * 0.7f = 10 * 0.699999988 = 6.99999988: 6 elements, not 7 */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(10), 1, iota);
	tm_init(m, "sc", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 0.7 });
	node(m, TM_NAMES("x", "", "sc"), 3, IR_DTYPE_FLOAT);
	/* nearest round_prefer_floor, half_pixel, by the scale as stored:
	 * (o + .5) / .699999988 - .5 = .21 1.64 3.07 4.50000009 (past the
	 * tie) 5.93 7.36 */
	expect(m, 1, TM_DIMS(6), (const double[]){ 0, 2, 3, 5, 6, 7 }, 0);

	/* [6, 3] to sizes [7, 100] not_larger: scale 7/6, lengths 7 and
	 * round_int(3.5) = 4 (halves up) */
	m = tm_new(18);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(6, 3), 2, (const double[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17 });
	tm_init(m, "sz", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 7, 100 });
	n = node(m, TM_NAMES("x", "", "", "sz"), 4, IR_DTYPE_FLOAT);
	ir_node_set_string(n, "keep_aspect_ratio_policy", "not_larger");
	ir_node_set_string(n, "coordinate_transformation_mode", "asymmetric");
	ir_node_set_string(n, "nearest_mode", "floor");
	{
		/* rows o * 6/7 floored: 0 0 1 2 3 4 5; columns o * 6/7: 0 0 1 2 */
		static const int r[] = { 0, 0, 1, 2, 3, 4, 5 }, k[] = { 0, 0, 1, 2 };
		double want[28];

		for (int i = 0; i < 7; i++)
			for (int j = 0; j < 4; j++)
				want[i * 4 + j] = r[i] * 3 + k[j];
		expect(m, 2, TM_DIMS(7, 4), want, 0);
	}
}

static void test_tf_crop_extrapolates_exactly(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *y;
	struct ir_node *n;
	double e = (double)0.3f;
	char err[512];

	/* rows roi [0.5, 1.5] to 3: 0.5, 1, 1.5 (outside); columns [0, 1] to
	 * 4, cubic: 0 2/3 4/3 2, rows constant.  The third row is
	 * extrapolation_value to the last bit in a double output, though the
	 * column pass weighs it by cubic weights whose sum times 0.3f rounds
	 * to 2 ulps below it */
	tm_init(m, "x", IR_DTYPE_DOUBLE, TM_DIMS(2, 3), 2, (const double[]){ 1, 1, 1, 4, 4, 4 });
	tm_init(m, "roi", IR_DTYPE_FLOAT, TM_DIMS(4), 1, (const double[]){ 0.5, 0, 1.5, 1 });
	tm_init(m, "sz", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 3, 4 });
	n = node(m, TM_NAMES("x", "roi", "", "sz"), 4, IR_DTYPE_DOUBLE);
	ir_node_set_string(n, "mode", "cubic");
	ir_node_set_string(n, "coordinate_transformation_mode", "tf_crop_and_resize");
	ir_node_set_float(n, "extrapolation_value", 0.3f);
	CU_ASSERT_FATAL(run(m, &y, err) == 0);
	CU_ASSERT_FATAL(y->numel == 12);
	for (int j = 0; j < 4; j++) {
		/* row 0.5 is cubic between rows 0 and 1 (and their copies at the
		 * edge): W(1.5) 1 + W(.5) 1 + W(.5) 4 + W(1.5) 4 = 2.5 */
		CU_ASSERT(fabs(rt_value_get_f64(y, j) - 2.5) < 1e-12);
		CU_ASSERT(fabs(rt_value_get_f64(y, 4 + j) - 4) < 1e-12);
		CU_ASSERT(rt_value_get_f64(y, 8 + j) == e);
	}
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_integers_truncate_saturate(void)
{
	struct ir_model *m = tm_new(13);
	struct ir_node *n;

	/* int8 [-3, 0] x2 linear asymmetric: -3, -1.5, 0, 0: toward zero */
	tm_init(m, "x", IR_DTYPE_INT8, TM_DIMS(2), 1, (const double[]){ -3, 0 });
	tm_init(m, "sc", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 2 });
	n = node(m, TM_NAMES("x", "", "sc"), 3, IR_DTYPE_INT8);
	ir_node_set_string(n, "mode", "linear");
	ir_node_set_string(n, "coordinate_transformation_mode", "asymmetric");
	expect(m, 1, TM_DIMS(4), (const double[]){ -3, -1, 0, 0 }, 0);

	/* uint8 [0, 255, 255, 0] x2 cubic (a = -0.75) asymmetric: W(.5) =
	 * .59375, W(1.5) = -.09375; at .5: 255 * .5 = 127.5 -> 127; at 1.5:
	 * 255 * 1.1875 = 302.8 -> 255; at 3.5: -.09375 * 255 -> 0 */
	m = tm_new(13);
	tm_init(m, "x", IR_DTYPE_UINT8, TM_DIMS(4), 1, (const double[]){ 0, 255, 255, 0 });
	tm_init(m, "sc", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 2 });
	n = node(m, TM_NAMES("x", "", "sc"), 3, IR_DTYPE_UINT8);
	ir_node_set_string(n, "mode", "cubic");
	ir_node_set_string(n, "coordinate_transformation_mode", "asymmetric");
	expect(m, 1, TM_DIMS(8), (const double[]){ 0, 127, 255, 255, 255, 127, 0, 0 }, 0);

	/* int8 extrapolation_value -200 saturates to -128 */
	m = tm_new(13);
	tm_init(m, "x", IR_DTYPE_INT8, TM_DIMS(2), 1, (const double[]){ 5, 7 });
	tm_init(m, "roi", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 0, 2 });
	tm_init(m, "sz", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ 3 });
	n = node(m, TM_NAMES("x", "roi", "", "sz"), 4, IR_DTYPE_INT8);
	ir_node_set_string(n, "coordinate_transformation_mode", "tf_crop_and_resize");
	ir_node_set_float(n, "extrapolation_value", -200);
	/* coordinates 0, 1, 2 (outside) */
	expect(m, 1, TM_DIMS(3), (const double[]){ 5, 7, -128 }, 0);
}

static void test_kept_axes(void)
{
	struct ir_model *m = tm_new(11);
	struct ir_node *n;

	/* [3, 2] by [1, 2], nearest tf_half_pixel_for_nn round_prefer_ceil:
	 * axis 0 is not resized and stays (its formula would give o + .5,
	 * rounded up); columns (o + .5) / 2 = .25 .75 1.25 1.75 -> 0 1 1 1 */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 2), 2, iota);
	tm_init(m, "roi", IR_DTYPE_FLOAT, TM_DIMS(0), 1, NULL);
	tm_init(m, "sc", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1, 2 });
	n = node(m, TM_NAMES("x", "roi", "sc"), 3, IR_DTYPE_FLOAT);
	ir_node_set_string(n, "coordinate_transformation_mode", "tf_half_pixel_for_nn");
	ir_node_set_string(n, "nearest_mode", "round_prefer_ceil");
	expect(m, 2, TM_DIMS(3, 4), (const double[]){ 0, 1, 1, 1, 2, 3, 3, 3, 4, 5, 5, 5 }, 0);
}

static const struct unit_test tests[] = {
	{ "Resize/Upsample random cases against the float64 reference", test_resize_random },
	{ "align_corners maps over the output's length", test_align_corners_lengths },
	{ "pytorch_half_pixel on an output of length 1", test_pytorch_half_pixel_one },
	{ "output lengths exact (floor, round_int)", test_output_lengths_exact },
	{ "tf_crop_and_resize extrapolates exactly", test_tf_crop_extrapolates_exactly },
	{ "integers truncate toward zero and saturate", test_integers_truncate_saturate },
	{ "axes not resized are copied", test_kept_axes },
	{ NULL, NULL }
};

int suite_kresize_register(void)
{
	return unit_add_suite("kresize", tests);
}
