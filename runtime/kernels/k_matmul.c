/* k_matmul.c: kernels of the matmul family: MatMul (numpy batched
 * broadcasting, 1-D operands) and Gemm (transposes, alpha, beta, C
 * broadcast), plus the batched product the quantized kernels reuse.
 * float32 runs through sgemm (against a constant B, packed once:
 * k_matmul_pk.c, for MatMul and for Gemm whose alpha is 1 and whose C,
 * if any, is one row of bias); float16/bfloat16/double through double;
 * MatMul's integer dtypes through exact wrapping int64 loops; Gemm's
 * (whose alpha and beta are floats) through double, exact below 2^53. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/gemm.h"
#include "runtime/kernels/k_conv_int.h"

void knn_mm_release(struct knn_mm *p)
{
	free(p->a_off);
	free(p->b_off);
	p->a_off = p->b_off = NULL;
}

int knn_mm_init(struct rt_kctx *k, const struct rt_value *a,
		const struct rt_value *b, struct knn_mm *p)
{
	int ra = a->rank, rb = b->rank, bra, brb, br;
	int64_t bd[RT_MAX_RANK], sa[RT_MAX_RANK], sb[RT_MAX_RANK];

	memset(p, 0, sizeof(*p));
	if (ra < 1 || rb < 1)
		return rt_err(k, "matmul operands must have rank 1 or more (got %d and %d)",
			      ra, rb);
	p->m = ra == 1 ? 1 : a->dims[ra - 2];
	p->kd = a->dims[ra - 1];
	p->n = rb == 1 ? 1 : b->dims[rb - 1];
	if ((rb == 1 ? b->dims[0] : b->dims[rb - 2]) != p->kd) {
		char x[96], y[96];

		rt_dims_text(ra, a->dims, x, sizeof(x));
		rt_dims_text(rb, b->dims, y, sizeof(y));
		return rt_err(k, "matmul shapes %s and %s do not match", x, y);
	}
	bra = ra > 2 ? ra - 2 : 0;
	brb = rb > 2 ? rb - 2 : 0;
	br = bra > brb ? bra : brb;
	p->n_batch = 1;
	/* broadcast batch dims, right-aligned; strides in matrices */
	for (int64_t i = br - 1, ma = 1, mb = 1; i >= 0; i--) {
		int64_t ia = i - (br - bra), ib = i - (br - brb);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;

		if (da != db && da != 1 && db != 1) {
			char x[96], y[96];

			rt_dims_text(ra, a->dims, x, sizeof(x));
			rt_dims_text(rb, b->dims, y, sizeof(y));
			return rt_err(k, "matmul batch dims of %s and %s do not broadcast",
				      x, y);
		}
		bd[i] = da > db ? da : db;
		if (da == 0 || db == 0)
			bd[i] = 0;
		sa[i] = da == 1 ? 0 : ma;
		sb[i] = db == 1 ? 0 : mb;
		ma *= da ? da : 1;
		mb *= db ? db : 1;
		p->n_batch *= bd[i];
	}
	memcpy(p->dims, bd, (size_t)br * sizeof(int64_t));
	p->rank = br;
	if (ra > 1)
		p->dims[p->rank++] = p->m;
	if (rb > 1)
		p->dims[p->rank++] = p->n;
	p->a_off = malloc((size_t)(p->n_batch + 1) * sizeof(int64_t));
	p->b_off = malloc((size_t)(p->n_batch + 1) * sizeof(int64_t));
	if (!p->a_off || !p->b_off) {
		knn_mm_release(p);
		return rt_oom(k);
	}
	for (int64_t i = 0; i < p->n_batch; i++) {
		int64_t r = i, oa = 0, ob = 0;

		for (int d = br - 1; d >= 0; d--) {
			int64_t c = r % bd[d];

			r /= bd[d];
			oa += c * sa[d];
			ob += c * sb[d];
		}
		p->a_off[i] = oa * p->m * p->kd;
		p->b_off[i] = ob * p->kd * p->n;
	}
	return 0;
}

struct mm_job {
	const struct knn_mm *p;
	const void *a, *b;
	void *y;
	int f64;
};

static void mm_batches(void *ctx, int64_t lo, int64_t hi)
{
	const struct mm_job *j = ctx;
	const struct knn_mm *p = j->p;

	for (int64_t i = lo; i < hi; i++) {
		int64_t yo = i * p->m * p->n;

		if (j->f64)
			rt_gemm_f64(0, 0, p->m, p->n, p->kd, 1,
				    (const double *)j->a + p->a_off[i], p->kd,
				    (const double *)j->b + p->b_off[i], p->n, 0,
				    (double *)j->y + yo, p->n);
		else
			rt_gemm_f32(0, 0, p->m, p->n, p->kd, 1,
				    (const float *)j->a + p->a_off[i], p->kd,
				    (const float *)j->b + p->b_off[i], p->n, 0,
				    (float *)j->y + yo, p->n);
	}
}

static void mm_run(struct rt_kctx *k, const struct knn_mm *p, const void *a,
		   const void *b, void *y, int f64)
{
	struct mm_job j = { p, a, b, y, f64 };
	int folded = 1;

	if (p->n_batch == 0 || p->m == 0 || p->n == 0)
		return;
	/* one shared B and contiguous A batches: a single taller product */
	for (int64_t i = 0; i < p->n_batch && folded; i++)
		folded = p->b_off[i] == 0 && p->a_off[i] == i * p->m * p->kd;
	if (folded || p->n_batch == 1) {
		int64_t rows = folded ? p->n_batch * p->m : p->m;

		if (f64)
			rt_gemm_f64_par(k, 0, 0, rows, p->n, p->kd, 1,
					(const double *)a + p->a_off[0], p->kd,
					b, p->n, 0, y, p->n);
		else
			rt_gemm_f32_par(k, 0, 0, rows, p->n, p->kd, 1,
					(const float *)a + p->a_off[0], p->kd,
					b, p->n, 0, y, p->n);
		return;
	}
	if (p->n_batch >= rt_threads(k)) {
		rt_parallel_for(k, p->n_batch, 1, mm_batches, &j);
		return;
	}
	for (int64_t i = 0; i < p->n_batch; i++) {
		int64_t yo = i * p->m * p->n;

		if (f64)
			rt_gemm_f64_par(k, 0, 0, p->m, p->n, p->kd, 1,
					(const double *)a + p->a_off[i], p->kd,
					(const double *)b + p->b_off[i], p->n, 0,
					(double *)y + yo, p->n);
		else
			rt_gemm_f32_par(k, 0, 0, p->m, p->n, p->kd, 1,
					(const float *)a + p->a_off[i], p->kd,
					(const float *)b + p->b_off[i], p->n, 0,
					(float *)y + yo, p->n);
	}
}

void knn_mm_f32(struct rt_kctx *k, const struct knn_mm *p, const float *a,
		const float *b, float *y)
{
	mm_run(k, p, a, b, y, 0);
}

void knn_mm_f64(struct rt_kctx *k, const struct knn_mm *p, const double *a,
		const double *b, double *y)
{
	mm_run(k, p, a, b, y, 1);
}

/* Integer product with wrapping arithmetic, as the dtype's C type would. */
static void mm_int(const struct knn_mm *p, const struct rt_value *a,
		   const struct rt_value *b, struct rt_value *y)
{
	for (int64_t i = 0; i < p->n_batch; i++)
		for (int64_t r = 0; r < p->m; r++)
			for (int64_t c = 0; c < p->n; c++) {
				uint64_t acc = 0;

				for (int64_t t = 0; t < p->kd; t++)
					acc += (uint64_t)rt_load_i64(a->dtype, a->data,
								     p->a_off[i] + r * p->kd + t) *
					       (uint64_t)rt_load_i64(b->dtype, b->data,
								     p->b_off[i] + t * p->n + c);
				rt_store_i64(y->dtype, y->data,
					     (i * p->m + r) * p->n + c, (int64_t)acc);
			}
}

static int k_matmul(struct rt_kctx *k)
{
	struct rt_value *a, *b, *y;
	struct knn_mm p;
	double *ad = NULL, *bd = NULL, *yd = NULL;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &a)) < 0 || (rc = rt_in_tensor(k, 1, &b)) < 0)
		return rc;
	if (a->dtype != b->dtype)
		return rt_err(k, "inputs A and B differ in dtype");
	if (!rt_dtype_is_float(a->dtype) && !rt_dtype_is_int(a->dtype))
		return rt_err(k, "dtype %d is not numeric", a->dtype);
	if ((rc = knn_mm_init(k, a, b, &p)) < 0)
		return rc;
	if (!(y = rt_out_tensor(k, 0, a->dtype, p.rank, p.dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	if (p.kd == 0 && y->numel) {
		memset(y->data, 0, (size_t)y->numel * rt_dtype_size(y->dtype));
		goto cleanup;
	}
	if (a->dtype == IR_DTYPE_FLOAT) {
		if ((rc = knn_mm_packed_f32(k, &p, a->data, b->data, y->data)) == 0)
			rc = knn_mm_batched_f32(k, &p, a->data, b->data, y->data);
		if (rc < 0)
			goto cleanup;
		if (rc == 0)
			knn_mm_f32(k, &p, a->data, b->data, y->data);
		rc = 0;
	} else if (rt_dtype_is_int(a->dtype)) {
		mm_int(&p, a, b, y);
	} else {
		rc = IR_ENOMEM;
		if (!(ad = knn_load_f64(k, a)) || !(bd = knn_load_f64(k, b)))
			goto cleanup;
		if (!(yd = malloc((size_t)(y->numel + 1) * sizeof(double)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		knn_mm_f64(k, &p, ad, bd, yd);
		knn_store_f64(y, yd);
		rc = 0;
	}
cleanup:
	knn_mm_release(&p);
	free(ad);
	free(bd);
	free(yd);
	return rc;
}

/* C's value at (i, j) of the m x n result under unidirectional
 * broadcasting; checked by gemm_c_ok. */
static int64_t c_index(const struct rt_value *c, int64_t i, int64_t j)
{
	if (c->rank == 0)
		return 0;
	if (c->rank == 1)
		return c->dims[0] == 1 ? 0 : j;
	return (c->dims[0] == 1 ? 0 : i) * c->dims[1] + (c->dims[1] == 1 ? 0 : j);
}

static int gemm_c_ok(const struct rt_value *c, int64_t m, int64_t n)
{
	if (c->rank > 2)
		return 0;
	if (c->rank >= 1 && c->dims[c->rank - 1] != 1 && c->dims[c->rank - 1] != n)
		return 0;
	if (c->rank == 2 && c->dims[0] != 1 && c->dims[0] != m)
		return 0;
	return 1;
}

static int k_gemm(struct rt_kctx *k)
{
	struct rt_value *a, *b, *c = rt_in(k, 2), *y;
	int ta = (int)rt_attr_int(k, "transA", 0), tb = (int)rt_attr_int(k, "transB", 0);
	double alpha = rt_attr_float(k, "alpha", 1), beta = rt_attr_float(k, "beta", 1);
	int64_t m, n, kd, dims[2];
	double *ad = NULL, *bd = NULL, *yd = NULL;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &a)) < 0 || (rc = rt_in_tensor(k, 1, &b)) < 0)
		return rc;
	if (c && c->kind != RT_TENSOR)
		return rt_err(k, "input C is not a tensor");
	if (a->rank != 2 || b->rank != 2)
		return rt_err(k, "A and B must be 2-D (ranks %d and %d)", a->rank,
			      b->rank);
	if (a->dtype != b->dtype || (c && c->dtype != a->dtype))
		return rt_err(k, "inputs A, B and C differ in dtype");
	m = a->dims[ta ? 1 : 0];
	kd = a->dims[ta ? 0 : 1];
	n = b->dims[tb ? 0 : 1];
	if (b->dims[tb ? 1 : 0] != kd)
		return rt_err(k, "inner dims differ: op(A) is %lldx%lld, op(B) %lldx%lld",
			      (long long)m, (long long)kd,
			      (long long)b->dims[tb ? 1 : 0], (long long)n);
	if (c && !gemm_c_ok(c, m, n)) {
		char t[96];

		rt_dims_text(c->rank, c->dims, t, sizeof(t));
		return rt_err(k, "C of shape %s does not broadcast to [%lld,%lld]", t,
			      (long long)m, (long long)n);
	}
	dims[0] = m;
	dims[1] = n;
	if (!(y = rt_out_tensor(k, 0, a->dtype, 2, dims)))
		return IR_ENOMEM;
	if (y->numel == 0)
		return 0;
	if (a->dtype == IR_DTYPE_FLOAT && alpha == 1 &&
	    (!c || (beta == 1 && c->rank >= 1 && c->numel == n && c->dims[c->rank - 1] == n)) &&
	    (rc = knn_gemm_packed_f32(k, ta, tb, m, n, kd, a->data, b->data,
				      c ? c->data : NULL, y->data)) != 0)
		return rc < 0 ? rc : 0;
	if (a->dtype == IR_DTYPE_FLOAT) {
		float *yf = y->data;
		const float *cf = c ? c->data : NULL;

		for (int64_t i = 0; c && i < m; i++)
			for (int64_t j = 0; j < n; j++)
				yf[i * n + j] = (float)beta * cf[c_index(c, i, j)];
		rt_gemm_f32_par(k, ta, tb, m, n, kd, (float)alpha, a->data,
				a->dims[1], b->data, b->dims[1], c ? 1 : 0, yf, n);
		return 0;
	}
	rc = IR_ENOMEM;
	if (!(ad = knn_load_f64(k, a)) || !(bd = knn_load_f64(k, b)))
		goto cleanup;
	if (!(yd = malloc((size_t)y->numel * sizeof(double)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t i = 0; c && i < m; i++)
		for (int64_t j = 0; j < n; j++)
			yd[i * n + j] = beta * rt_load_f64(c->dtype, c->data,
							   c_index(c, i, j));
	rt_gemm_f64_par(k, ta, tb, m, n, kd, alpha, ad, a->dims[1], bd,
			b->dims[1], c ? 1 : 0, yd, n);
	knn_store_f64(y, yd);
	rc = 0;
cleanup:
	free(ad);
	free(bd);
	free(yd);
	return rc;
}

const struct rt_kernel rt_kernels_matmul[] = {
	{ "ai.onnx", "Gemm", 1, RT_OPEN, k_gemm },
	{ "ai.onnx", "MatMul", 1, RT_OPEN, k_matmul },
};
const size_t rt_n_kernels_matmul = sizeof(rt_kernels_matmul) / sizeof(rt_kernels_matmul[0]);
