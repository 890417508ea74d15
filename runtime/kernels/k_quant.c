/* k_quant.c: kernels of the quant family: QuantizeLinear and
 * DequantizeLinear (per-tensor, per-axis and blocked scales; int8, uint8,
 * int16, uint16, int32, int4, uint4, the float8 kinds and float4e2m1;
 * saturate) and DynamicQuantizeLinear.  float8e8m0 scales and int2/uint2
 * (opset 24/25) are refused: the IR has no such dtypes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_nq.h"
#include "runtime/kernels/k_quant_row.h"
#include "runtime/kernels/k_shape_int.h"   /* ks_concat_dims */

/* How scale (and zero point) index the elements of x. */
struct qmap {
	int64_t outer, len, inner;   /* x = [outer, len, inner] around axis */
	int64_t slen, block;         /* scale's extent along axis; block (0: per-axis) */
	int per_tensor;
};

static int qmap_init(struct rt_kctx *k, const struct rt_value *x,
		     const struct rt_value *scale, struct qmap *m)
{
	int64_t block = k->version >= 21 ? rt_attr_int(k, "block_size", 0) : 0;
	int axis = 0, rc;
	char a[96], b[96];

	m->per_tensor = scale->numel == 1 && block <= 0 && (scale->rank == 0 || x->rank == 0 ||
							    k->version < 13 || scale->rank == 1);
	m->outer = x->numel;
	m->len = m->inner = 1;
	m->slen = 1;
	m->block = 0;
	if (m->per_tensor)
		return 0;
	if (k->version < 13)
		return rt_err(k, "scale must be a scalar before opset 13");
	if ((rc = rt_axis(k, rt_attr_int(k, "axis", 1), x->rank, &axis)) < 0)
		return rc;
	m->outer = rt_numel(axis, x->dims);
	m->len = x->dims[axis];
	m->inner = rt_numel(x->rank - axis - 1, x->dims + axis + 1);
	rt_dims_text(scale->rank, scale->dims, a, sizeof(a));
	rt_dims_text(x->rank, x->dims, b, sizeof(b));
	if (block <= 0) {
		if (scale->rank != 1 || scale->dims[0] != m->len)
			return rt_err(k, "scale of shape %s is neither a scalar nor 1-D of "
				      "x's axis %d in %s", a, axis, b);
		m->slen = m->len;
		return 0;
	}
	m->block = block;
	m->slen = (m->len + block - 1) / block;
	if (scale->rank != x->rank)
		return rt_err(k, "blocked scale %s must have the rank of x %s", a, b);
	for (int j = 0; j < x->rank; j++)
		if (scale->dims[j] != (j == axis ? m->slen : x->dims[j]))
			return rt_err(k, "blocked scale %s does not match x %s with block_size %lld",
				      a, b, (long long)block);
	return 0;
}

static int is_f8(int t)
{
	return t == IR_DTYPE_FLOAT8E4M3FN || t == IR_DTYPE_FLOAT8E4M3FNUZ ||
	       t == IR_DTYPE_FLOAT8E5M2 || t == IR_DTYPE_FLOAT8E5M2FNUZ ||
	       t == IR_DTYPE_FLOAT4E2M1;
}

static void int_range(int t, int64_t *lo, int64_t *hi)
{
	switch (t) {
	case IR_DTYPE_INT8: *lo = -128; *hi = 127; break;
	case IR_DTYPE_UINT8: *lo = 0; *hi = 255; break;
	case IR_DTYPE_INT16: *lo = -32768; *hi = 32767; break;
	case IR_DTYPE_UINT16: *lo = 0; *hi = 65535; break;
	case IR_DTYPE_INT4: *lo = -8; *hi = 7; break;
	case IR_DTYPE_UINT4: *lo = 0; *hi = 15; break;
	default: *lo = INT32_MIN; *hi = INT32_MAX; break;
	}
}

static int quant_dtype_ok(int t)
{
	return is_f8(t) || t == IR_DTYPE_INT8 || t == IR_DTYPE_UINT8 || t == IR_DTYPE_INT16 ||
	       t == IR_DTYPE_UINT16 || t == IR_DTYPE_INT4 || t == IR_DTYPE_UINT4;
}

/* One QuantizeLinear / DequantizeLinear: rows (outer, axis index) of
 * inner elements on the session's threads, scale and zero point read
 * through the qmap. */
struct qjob {
	const struct rt_value *x, *zp;
	struct rt_value *y;
	const double *s;             /* scale, as double */
	const struct qmap *m;
	int quant, sat, f8;
	int prec;                    /* dtype of x / scale (quantize) */
	int64_t lo, hi;              /* integer range of y (quantize) */
	int isa;                     /* kq_row_quantize's path */
};

/* The quotient x / scale rounded to the precision it is computed in. */
static inline double in_prec(int prec, float v)
{
	if (prec == IR_DTYPE_FLOAT16)
		return rt_half_to_float(rt_float_to_half(v));
	if (prec == IR_DTYPE_BFLOAT16)
		return rt_bf16_to_float(rt_float_to_bf16(v));
	return v;
}

/* n elements from e0 of one scale (per tensor or per axis) between
 * float32 and int8/uint8 (and float32 to int16/uint16), the common
 * cases, without per-element dispatch: the quantizing loop in vectors
 * (k_quant_row.c); 0 when the dtypes are others. */
static int row_fast(const struct qjob *j, int64_t e0, int64_t n, int64_t si)
{
	int xt = j->x->dtype, yt = j->y->dtype, n8 = j->quant ? yt : xt;
	float s = (float)j->s[si];
	int32_t z;

	if (j->quant ? xt != IR_DTYPE_FLOAT || j->prec != IR_DTYPE_FLOAT ||
		       (yt != IR_DTYPE_INT8 && yt != IR_DTYPE_UINT8 &&
			yt != IR_DTYPE_INT16 && yt != IR_DTYPE_UINT16) :
		       yt != IR_DTYPE_FLOAT || (n8 != IR_DTYPE_INT8 && n8 != IR_DTYPE_UINT8))
		return 0;
	z = j->zp ? (int32_t)rt_load_i64(j->zp->dtype, j->zp->data, si) : 0;
	if (!j->quant) {
		float *y = (float *)j->y->data + e0;

		if (xt == IR_DTYPE_INT8) {
			const int8_t *x = (const int8_t *)j->x->data + e0;

			for (int64_t i = 0; i < n; i++)
				y[i] = (float)(x[i] - z) * s;
		} else {
			const uint8_t *x = (const uint8_t *)j->x->data + e0;

			for (int64_t i = 0; i < n; i++)
				y[i] = (float)(x[i] - z) * s;
		}
		return 1;
	}
	kq_row_quantize(j->isa, yt, (const float *)j->x->data + e0, n, s, z,
			(char *)j->y->data + e0 * rt_dtype_size(yt));
	return 1;
}

static void qjob_rows(void *ctx, int64_t begin, int64_t end)
{
	const struct qjob *j = ctx;
	const struct qmap *m = j->m;
	const struct rt_value *x = j->x, *zp = j->zp;
	int xt = x->dtype, yt = j->y->dtype;

	/* one scale: the rows are one run of elements */
	if (m->per_tensor && row_fast(j, begin * m->inner, (end - begin) * m->inner, 0))
		return;
	for (int64_t r = begin; r < end; r++) {
		int64_t o = r / m->len, a = r % m->len, e0 = r * m->inner;

		if (!m->block && row_fast(j, e0, m->inner, m->per_tensor ? 0 : a))
			continue;
		for (int64_t i = 0; i < m->inner; i++) {
			int64_t e = e0 + i;
			int64_t si = m->per_tensor ? 0 : !m->block ? a :
				     (o * m->slen + a / m->block) * m->inner + i;
			double s = j->s[si];

			if (j->quant) {
				double v = rt_dtype_is_float(xt) ?
					   in_prec(j->prec, (float)rt_load_f64(xt, x->data, e) / (float)s) :
					   rt_load_f64(xt, x->data, e) / s;

				if (j->f8) {
					if (zp)
						v += rt_load_f64(yt, zp->data, si);
					((uint8_t *)j->y->data)[e] = rt_float_to_f8(yt, (float)v, j->sat);
				} else {
					double q = nearbyint(v) +
						   (zp ? (double)rt_load_i64(zp->dtype, zp->data, si) : 0);

					if (isnan(q))
						q = 0;
					rt_store_i64(yt, j->y->data, e,
						     q < j->lo ? j->lo : q > j->hi ? j->hi : (int64_t)q);
				}
			} else {
				float v;

				if (j->f8)
					v = (float)rt_load_f64(xt, x->data, e) -
					    (zp ? (float)rt_load_f64(zp->dtype, zp->data, si) : 0.0f);
				else
					v = (float)(rt_load_i64(xt, x->data, e) -
						    (zp ? rt_load_i64(zp->dtype, zp->data, si) : 0));
				if (yt == IR_DTYPE_FLOAT)
					((float *)j->y->data)[e] = v * (float)s;
				else
					rt_store_f64(yt, j->y->data, e, v * (float)s);
			}
		}
	}
}

static int qjob_run(struct rt_kctx *k, const struct rt_value *x, const struct rt_value *sc,
		    const struct rt_value *zp, struct rt_value *y, const struct qmap *m,
		    int quant, int sat, int prec)
{
	struct qjob j = { .x = x, .zp = zp, .y = y, .m = m, .quant = quant, .sat = sat,
			  .prec = prec };
	double *s = malloc((size_t)(sc->numel + 1) * sizeof(double));

	if (!s)
		return rt_oom(k);
	for (int64_t i = 0; i < sc->numel; i++)
		s[i] = rt_load_f64(sc->dtype, sc->data, i);
	j.s = s;
	j.f8 = is_f8(quant ? y->dtype : x->dtype);
	j.isa = kq_isa_best();
	int_range(y->dtype, &j.lo, &j.hi);
	rt_parallel_for(k, m->outer * m->len, 1 + 65536 / (m->inner + 1), qjob_rows, &j);
	free(s);
	return 0;
}

/* x stored channels last (layout_cl.c): per tensor each element maps
 * alone, so y keeps x's layout; per axis or blocked, x is made plain
 * (*xp the plain copy). */
static int keep_layout(struct rt_kctx *k, const struct qmap *m, struct rt_value **xp)
{
	int rc;

	if (!((*xp)->flags & RT_VALUE_CL) || m->per_tensor)
		return 0;
	if ((rc = rt_cl_plain_in(k, 0)) < 0)
		return rc;
	*xp = k->in[0];
	return 0;
}

static int k_quantize(struct rt_kctx *k)
{
	struct rt_value *x, *sc, *zp = rt_in(k, 2), *y;
	int64_t odt = k->version >= 21 ? rt_attr_int(k, "output_dtype", 0) : 0;
	int sat = (int)rt_attr_int(k, "saturate", 1), rc, dt, prec;
	struct qmap m;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &sc)) < 0)
		return rc;
	if (zp && zp->kind != RT_TENSOR)
		return rt_err(k, "y_zero_point is not a tensor");
	dt = zp ? zp->dtype : odt ? (int)odt : IR_DTYPE_UINT8;
	if (zp && odt && odt != zp->dtype)
		return rt_err(k, "output_dtype %s differs from y_zero_point's %s",
			      ir_dtype_name((int)odt), ir_dtype_name(zp->dtype));
	if (!quant_dtype_ok(dt))
		return rt_err(k, "cannot quantize to %s", ir_dtype_name(dt));
	if (!rt_dtype_is_float(sc->dtype) && sc->dtype != IR_DTYPE_INT32)
		return rt_err(k, "y_scale of %s is not supported", ir_dtype_name(sc->dtype));
	if ((rc = qmap_init(k, x, sc, &m)) < 0)
		return rc;
	if (zp && zp->numel != sc->numel)
		return rt_err(k, "y_zero_point has %lld elements, y_scale %lld",
			      (long long)zp->numel, (long long)sc->numel);
	if ((rc = keep_layout(k, &m, &x)) < 0)
		return rc;
	if (!(y = rt_out_tensor(k, 0, dt, x->rank, x->dims)))
		return IR_ENOMEM;
	rt_cl_set(y, (x->flags & RT_VALUE_CL) != 0);
	/* the division runs in `precision` (23+), else in y_scale's type */
	prec = k->version >= 23 ? (int)rt_attr_int(k, "precision", 0) : 0;
	return qjob_run(k, x, sc, zp, y, &m, 1, sat, prec ? prec : sc->dtype);
}

static int k_dequantize(struct rt_kctx *k)
{
	struct rt_value *x, *sc, *zp = rt_in(k, 2), *y;
	int64_t odt = k->version >= 23 ? rt_attr_int(k, "output_dtype", 0) : 0;
	int rc, dt, f8;
	struct qmap m;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &sc)) < 0)
		return rc;
	if (zp && zp->kind != RT_TENSOR)
		return rt_err(k, "x_zero_point is not a tensor");
	if (zp && zp->dtype != x->dtype)
		return rt_err(k, "x_zero_point is %s, x %s", ir_dtype_name(zp->dtype),
			      ir_dtype_name(x->dtype));
	if (!rt_dtype_is_float(sc->dtype) || is_f8(sc->dtype))
		return rt_err(k, "x_scale of %s is not supported", ir_dtype_name(sc->dtype));
	f8 = is_f8(x->dtype);
	if (!f8 && !rt_dtype_is_int(x->dtype))
		return rt_err(k, "cannot dequantize %s", ir_dtype_name(x->dtype));
	dt = odt ? (int)odt : sc->dtype;
	if (!rt_dtype_is_float(dt) || is_f8(dt))
		return rt_err(k, "output_dtype %s is not a float type", ir_dtype_name(dt));
	if ((rc = qmap_init(k, x, sc, &m)) < 0)
		return rc;
	if (zp && zp->numel != sc->numel)
		return rt_err(k, "x_zero_point has %lld elements, x_scale %lld",
			      (long long)zp->numel, (long long)sc->numel);
	if ((rc = keep_layout(k, &m, &x)) < 0)
		return rc;
	if (!(y = rt_out_tensor(k, 0, dt, x->rank, x->dims)))
		return IR_ENOMEM;
	rt_cl_set(y, (x->flags & RT_VALUE_CL) != 0);
	return qjob_run(k, x, sc, zp, y, &m, 0, 1, IR_DTYPE_FLOAT);
}

/* DynamicQuantizeLinear's two passes over the session's threads, a
 * block of elements a work item: each block's minimum and maximum
 * (kq_row_minmax's rule gives the same in any order, so the blocks'
 * ends folded by it are the whole tensor's), then each block's codes. */
#define DQL_BLOCK 32768

struct dql_job {
	const float *x;
	int64_t n;
	float *mn, *mx;              /* per block */
	float scale;
	uint8_t zp, *y;
	int isa;
};

static void dql_minmax(void *ctx, int64_t lo, int64_t hi)
{
	struct dql_job *j = ctx;

	for (int64_t b = lo; b < hi; b++) {
		int64_t e0 = b * DQL_BLOCK;

		kq_row_minmax(j->isa, j->x + e0, j->n - e0 < DQL_BLOCK ? j->n - e0 : DQL_BLOCK,
			      &j->mn[b], &j->mx[b]);
	}
}

static void dql_codes(void *ctx, int64_t lo, int64_t hi)
{
	struct dql_job *j = ctx;
	int64_t e0 = lo * DQL_BLOCK, e1 = hi * DQL_BLOCK < j->n ? hi * DQL_BLOCK : j->n;

	kq_row_quantize(j->isa, IR_DTYPE_UINT8, j->x + e0, e1 - e0, j->scale, j->zp, j->y + e0);
}

/* A stretch of the tensor DynamicQuantizeLinear quantizes: its float32
 * elements and where their codes go. */
struct dql_piece {
	const float *x;
	int64_t n;
	uint8_t *y;
};

/* DynamicQuantizeLinear of the tensor made of pieces p[0..np) (the
 * elements of one tensor, or of a Concat's inputs with their codes at
 * their places in its result): the range of all, then the codes of each;
 * its scale and zero point into *ys, *yz. */
static int dql_run(struct rt_kctx *k, const struct dql_piece *p, size_t np, float *ys,
		   uint8_t *yz)
{
	float mn = 0, mx = 0, scale, zpf, *ends;
	int64_t nb = 0, at = 0;
	int isa = kq_isa_best();
	uint8_t zp;

	for (size_t i = 0; i < np; i++)
		nb += (p[i].n + DQL_BLOCK - 1) / DQL_BLOCK;
	if (!(ends = malloc(2 * (size_t)(nb ? nb : 1) * sizeof(*ends))))
		return rt_oom(k);
	for (size_t i = 0; i < np; i++) {
		int64_t b = (p[i].n + DQL_BLOCK - 1) / DQL_BLOCK;
		struct dql_job j = { p[i].x, p[i].n, ends + at, ends + nb + at, 0, 0, p[i].y, isa };

		rt_parallel_for(k, b, 1, dql_minmax, &j);
		at += b;
	}
	for (int64_t b = 0; b < nb; b++) {
		mn = ends[b] < mn ? ends[b] : mn;
		mx = ends[nb + b] > mx ? ends[nb + b] : mx;
	}
	free(ends);
	scale = (mx - mn) / 255.0f;
	zpf = scale > 0 ? nearbyintf(0.0f - mn / scale) : 0.0f;
	zp = (uint8_t)(zpf < 0 ? 0 : zpf > 255 ? 255 : zpf);
	for (size_t i = 0; i < np; i++) {
		struct dql_job j = { p[i].x, p[i].n, NULL, NULL, scale, zp, p[i].y, isa };

		if (scale > 0)
			rt_parallel_for(k, (p[i].n + DQL_BLOCK - 1) / DQL_BLOCK, 1, dql_codes, &j);
		else
			memset(p[i].y, zp, (size_t)p[i].n);
	}
	*ys = scale;
	*yz = zp;
	return 0;
}

static int k_dynamic_quantize(struct rt_kctx *k)
{
	struct rt_value *x, *y, *ys, *yz;
	struct dql_piece one;
	float *xf;
	int owned, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = nq_check_float(k, x, 0)) < 0)
		return rc;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_UINT8, x->rank, x->dims)) ||
	    !(ys = rt_out_tensor(k, 1, IR_DTYPE_FLOAT, 0, NULL)) ||
	    !(yz = rt_out_tensor(k, 2, IR_DTYPE_UINT8, 0, NULL)) ||
	    !(xf = nq_f32(k, x, &owned)))
		return IR_ENOMEM;
	one = (struct dql_piece){ xf, x->numel, y->data };
	rc = dql_run(k, &one, 1, ys->data, yz->data);
	nq_f32_release(xf, owned);
	return rc;
}

int kq_dynamic_quantize_cat(struct rt_kctx *k)
{
	const struct rt_value *x0;
	int64_t dims[RT_MAX_RANK], outer = 1, tail = 1, off = 0;
	struct rt_value *y, *ys, *yz;
	struct dql_piece *pc = NULL;
	float **xf = NULL;
	int *owned = NULL, rc = 0, axis;
	size_t m = k->n_in, np = 0;

	for (size_t i = 0; i < m; i++)
		if ((rc = nq_check_float(k, k->in[i], i)) < 0)
			return rc;
	if ((rc = ks_concat_dims(k, &axis, dims)) < 0)
		return rc;
	x0 = k->in[0];
	for (int d = 0; d < axis; d++)
		outer *= dims[d];
	for (int d = axis + 1; d < x0->rank; d++)
		tail *= dims[d];
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_UINT8, x0->rank, dims)) ||
	    !(ys = rt_out_tensor(k, 1, IR_DTYPE_FLOAT, 0, NULL)) ||
	    !(yz = rt_out_tensor(k, 2, IR_DTYPE_UINT8, 0, NULL)))
		return IR_ENOMEM;
	if (!(xf = calloc(m + 1, sizeof(*xf))) || !(owned = calloc(m + 1, sizeof(*owned))) ||
	    !(pc = calloc((size_t)(outer ? outer : 1) * m + 1, sizeof(*pc)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (size_t i = 0; i < m; i++)
		if (!(xf[i] = nq_f32(k, k->in[i], &owned[i]))) {
			rc = IR_ENOMEM;
			goto cleanup;
		}
	/* input i's rows of each outer index, at their place in y */
	for (int64_t o = 0; o < outer; o++)
		for (size_t i = 0; i < m; i++) {
			int64_t len = k->in[i]->dims[axis] * tail;

			pc[np++] = (struct dql_piece){ xf[i] + o * len, len, (uint8_t *)y->data + off };
			off += len;
		}
	rc = dql_run(k, pc, np, ys->data, yz->data);
cleanup:
	for (size_t i = 0; xf && i < m; i++)
		nq_f32_release(xf[i], owned[i]);
	free(xf);
	free(owned);
	free(pc);
	return rc;
}

const struct rt_kernel rt_kernels_quant[] = {
	{ "ai.onnx", "DequantizeLinear", 10, RT_OPEN, k_dequantize },
	{ "ai.onnx", "DynamicQuantizeLinear", 11, RT_OPEN, k_dynamic_quantize },
	{ "ai.onnx", "QuantizeLinear", 10, RT_OPEN, k_quantize },
};
const size_t rt_n_kernels_quant = sizeof(rt_kernels_quant) / sizeof(rt_kernels_quant[0]);
