/* k_mm_dnnl.c: the int32 sums of MatMulInteger and QLinearMatMul on
 * oneDNN's u8/s8 x s8 -> s32 matmul, exact with VNNI: A (batch dims, rows
 * of K) times a 2-D B (K x N) shared by every row.  B goes in as s8 (a
 * uint8 B minus 128), in the layout oneDNN picks, kept in the node's
 * cache while it is the same model constant; A's zero point is oneDNN's
 * (given at run time).  B's zero points other than 128 (uint8) or 0
 * (int8) ride on one more column of ones: its sums of A - za, times
 * 128 - zb[n] (or -zb[n]), correct each column, in int32.  A B whose
 * column sums would take oneDNN past 2^24 goes in split into parts
 * (mm_parts), their sums added in int32. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/k_dnnl.h"

struct mm_dn {
	struct knn_wcache h;      /* KNN_WC_DNNL_MM; h.w: the B made from */
	int64_t m, k, n, np;      /* rows, K, N, product columns (parts N + corr) */
	int corr, parts;          /* the ones column; B's parts (mm_parts) */
	dnnl_data_type_t a_dt;
	dnnl_stream_t stream;
	dnnl_primitive_t mm, rb;  /* rb: B's reorder, NULL when plain */
	dnnl_memory_t a, ub, b, y, zp, pad;
	size_t pad_bytes;
	int32_t zp_val;
	int8_t *b8;               /* B (K x np) as s8 */
	int b_ready;              /* b holds b8 in oneDNN's layout */
	int exact;                /* b8's sums stay within 2^24 (mm_parts) */
};

/* c's primitive and memories gone (another is made for another size) */
static void mm_dn_reset(struct mm_dn *c)
{
	dnnl_primitive_destroy(c->mm);
	dnnl_primitive_destroy(c->rb);
	dnnl_memory_destroy(c->a);
	if (c->b != c->ub)
		dnnl_memory_destroy(c->b);
	dnnl_memory_destroy(c->ub);
	dnnl_memory_destroy(c->y);
	dnnl_memory_destroy(c->zp);
	dnnl_memory_destroy(c->pad);
	if (c->stream)
		dnnl_stream_destroy(c->stream);
	c->mm = c->rb = NULL;
	c->a = c->b = c->ub = c->y = c->zp = c->pad = NULL;
	c->stream = NULL;
	c->pad_bytes = 0;
}

static void mm_dn_free(void *p)
{
	struct mm_dn *c = p;

	if (!c)
		return;
	mm_dn_reset(c);
	free(c->b8);
	free(c);
}

/* The primitive for c's sizes: 0, or -1 when oneDNN cannot make it. */
static int mm_dn_make(struct mm_dn *c)
{
	dnnl_engine_t eng = knn_dnnl_engine();
	dnnl_memory_desc_t amd, bmd, anyb, ymd, zmd;
	const dnnl_memory_desc_t *q;
	const int32_t runtime_zp = DNNL_RUNTIME_S32_VAL;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_primitive_desc_t pd = NULL, rpd = NULL;
	dnnl_matmul_desc_t md;
	int rc = -1;

	if (dnnl_memory_desc_init_by_tag(&amd, 2, (dnnl_dims_t){ c->m, c->k }, c->a_dt, dnnl_ab) ||
	    dnnl_memory_desc_init_by_tag(&bmd, 2, (dnnl_dims_t){ c->k, c->np }, dnnl_s8, dnnl_ab) ||
	    dnnl_memory_desc_init_by_tag(&anyb, 2, (dnnl_dims_t){ c->k, c->np }, dnnl_s8,
					 dnnl_format_tag_any) ||
	    dnnl_memory_desc_init_by_tag(&ymd, 2, (dnnl_dims_t){ c->m, c->np }, dnnl_s32, dnnl_ab) ||
	    dnnl_memory_desc_init_by_tag(&zmd, 1, (dnnl_dims_t){ 1 }, dnnl_s32, dnnl_a) ||
	    dnnl_matmul_desc_init(&md, &amd, &anyb, NULL, &ymd))
		return -1;
	if (dnnl_primitive_attr_create(&attr) ||
	    dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &runtime_zp) ||
	    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) ||
	    knn_dnnl_pd(&pd, &md, attr, knn_dnnl_amx_pays(c->k, c->m * c->k * c->np, 0)) ||
	    dnnl_primitive_create(&c->mm, pd) ||
	    dnnl_stream_create(&c->stream, eng, dnnl_stream_default_flags) ||
	    dnnl_memory_create(&c->a, &amd, eng, DNNL_MEMORY_NONE) ||
	    dnnl_memory_create(&c->ub, &bmd, eng, DNNL_MEMORY_NONE) ||
	    dnnl_memory_create(&c->y, &ymd, eng, DNNL_MEMORY_NONE) ||
	    dnnl_memory_create(&c->zp, &zmd, eng, &c->zp_val))
		goto done;
	q = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
	if (q && (c->pad_bytes = dnnl_memory_desc_get_size(q)) &&
	    dnnl_memory_create(&c->pad, q, eng, DNNL_MEMORY_NONE))
		goto done;
	q = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	if (dnnl_memory_desc_equal(q, &bmd)) {
		c->b = c->ub;
	} else if (dnnl_memory_create(&c->b, q, eng, DNNL_MEMORY_ALLOCATE) ||
		   dnnl_reorder_primitive_desc_create(&rpd, &bmd, eng, q, eng, NULL) ||
		   dnnl_primitive_create(&c->rb, rpd)) {
		goto done;
	}
	rc = 0;
done:
	dnnl_primitive_desc_destroy(rpd);
	dnnl_primitive_desc_destroy(pd);
	dnnl_primitive_attr_destroy(attr);
	return rc;
}

/* One run: y (m x np) = (a - zp_val) b8. */
static int mm_dn_run(struct mm_dn *c, const void *a, int32_t *y)
{
	dnnl_exec_arg_t args[5] = {
		{ DNNL_ARG_SRC, c->a }, { DNNL_ARG_WEIGHTS, c->b }, { DNNL_ARG_DST, c->y },
		{ DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, c->zp }, { DNNL_ARG_SCRATCHPAD, c->pad },
	};
	void *pp;
	int rc = -1;

	if (dnnl_memory_set_data_handle(c->a, (void *)a) ||
	    dnnl_memory_set_data_handle(c->y, y))
		return -1;
	if (!c->b_ready) {
		dnnl_exec_arg_t r[2] = { { DNNL_ARG_FROM, c->ub }, { DNNL_ARG_TO, c->b } };

		if (dnnl_memory_set_data_handle(c->ub, c->b8) ||
		    (c->rb && dnnl_primitive_execute(c->rb, c->stream, 2, r)))
			return -1;
		c->b_ready = 1;
	}
	knn_dnnl_lock();
	if (!knn_dnnl_buf(KNN_DN_PAD, c->pad_bytes, &pp) &&
	    (!pp || !dnnl_memory_set_data_handle(c->pad, pp)) &&
	    !dnnl_primitive_execute(c->mm, c->stream, c->pad ? 5 : 4, args) &&
	    dnnl_stream_wait(c->stream) == dnnl_success)
		rc = 0;
	knn_dnnl_unlock();
	return rc;
}

/* B (K x N, int8 or uint8) as s8 into b8 (K x np; uint8 minus 128), and
 * column N all ones when np > N. */
static void mm_b8(const void *b, int b_dtype, int64_t k, int64_t n, int64_t np, int8_t *b8)
{
	for (int64_t r = 0; r < k; r++) {
		knn_dnnl_to_s8(b_dtype, (const int8_t *)b + r * n, n, b8 + r * np);
		if (np > n)
			b8[r * np + n] = 1;
	}
}

/* The parts B (b8: K x N value columns, then the correction's ones when
 * corr) is split into so that every part's sums of A stay within 2^24
 * (knn_dnnl_parts: a speech encoder's 2736-deep layer went through double
 * products, 2x its float32 layer): 1 when none, 0 when not so. */
static int mm_parts(const int8_t *b8, int64_t k, int64_t n, int corr)
{
	int64_t *s = calloc((size_t)n + 1, sizeof(*s)), most = 0;

	if (!s)
		return 0;
	for (int64_t r = 0; r < k; r++)
		for (int64_t j = 0; j < n; j++)
			s[j] += b8[r * (n + corr) + j] < 0 ? -b8[r * (n + corr) + j] :
							      b8[r * (n + corr) + j];
	for (int64_t j = 0; j < n; j++)
		most = s[j] > most ? s[j] : most;
	free(s);
	return knn_dnnl_parts(most, k, corr);
}

/* b8 (K x N + corr) split into parts (K x parts N + corr): part p of
 * column j's value (knn_dnnl_part) in column p N + j; the ones column
 * last.  NULL when out of memory. */
static int8_t *mm_split(const int8_t *b8, int64_t k, int64_t n, int corr, int parts)
{
	int64_t np = parts * n + corr;
	int8_t *o = malloc((size_t)(k * np + 1));

	for (int64_t r = 0; o && r < k; r++) {
		for (int64_t j = 0; j < n; j++)
			for (int p = 0; p < parts; p++)
				o[r * np + p * n + j] = knn_dnnl_part(b8[r * (n + corr) + j], parts, p);
		if (corr)
			o[r * np + parts * n] = 1;
	}
	return o;
}

/* Rows of the primitive's product when its sums go to a sink a block
 * at a time: about 256 KiB of them, all of A's rows when fewer. */
static int64_t block_rows(int64_t m, int64_t np)
{
	int64_t r = (int64_t)65536 / np;

	r = r < 64 ? 64 : r;
	return r < m ? r : m;
}

/* rows of the parts' sums (np a row) added into y (n a row), with the
 * correction's column: within int32. */
static void mm_combine(const struct mm_dn *c, const int32_t *d, const int32_t *out, int64_t rows,
		       int32_t *y)
{
	int64_t n = c->n, np = c->np;

	for (int64_t r = 0; r < rows; r++)
		for (int64_t j = 0; j < n; j++) {
			int64_t v = c->corr ? (int64_t)d[j] * out[r * np + c->parts * n] : 0;

			for (int p = 0; p < c->parts; p++)
				v += out[r * np + p * n + j];
			y[r * n + j] = (int32_t)v;
		}
}

/* The sinks' run: blocks of c->m rows of A (the last one's copied into a
 * block of its own: one primitive for every block), their sums into buf
 * (and sum, the parts added, when np != n), each handed to fn. */
static int mm_blocks(struct mm_dn *c, const struct rt_value *a, int64_t m, const int32_t *d,
		     knn_mm_sink fn, void *ctx)
{
	int64_t mc = c->m, kd = c->k, rest = m % mc;
	int32_t *buf = malloc((size_t)(mc * c->np) * sizeof(*buf));
	int32_t *sum = c->np != c->n ? malloc((size_t)(mc * c->n) * sizeof(*sum)) : buf;
	uint8_t *last = rest ? calloc((size_t)(mc * kd), 1) : NULL;
	int rc = IR_ENOMEM;

	if (!buf || !sum || (rest && !last))
		goto done;
	rc = 1;
	for (int64_t r0 = 0; r0 < m && rc == 1; r0 += mc) {
		int64_t rows = m - r0 < mc ? m - r0 : mc;
		const uint8_t *src = (const uint8_t *)a->data + r0 * kd;

		if (rows < mc) {
			memcpy(last, src, (size_t)(rows * kd));
			src = last;
		}
		if (mm_dn_run(c, src, buf)) {
			rc = r0 ? IR_EIO : 0;   /* none handed out yet: not taken */
			break;
		}
		if (sum != buf)
			mm_combine(c, d, buf, rows, sum);
		fn(ctx, r0, rows, sum);
	}
done:
	if (sum != buf)
		free(sum);
	free(buf);
	free(last);
	return rc;
}

static int mm_s32(struct rt_kctx *k, const struct rt_value *a, const struct rt_value *b,
		  const double *az, int64_t naz, const double *bz, int64_t nbz, int b_const,
		  int32_t *y, knn_mm_sink fn, void *ctx)
{
	int64_t kd = b->rank == 2 ? b->dims[0] : 0, n = b->rank == 2 ? b->dims[1] : 0;
	int64_t m = kd ? a->numel / kd : 0, np, mp;
	dnnl_data_type_t a_dt = a->dtype == IR_DTYPE_UINT8 ? dnnl_u8 : dnnl_s8;
	struct mm_dn *c, *tmp = NULL;
	int32_t *d = NULL, *out = y;
	int8_t *b8 = NULL;
	int rc = 0, corr;

	/* a 2-D B shared by every row of A; sums below 2^31 (255 x 255 x K) */
	if (b->rank != 2 || a->rank < 2 || a->dims[a->rank - 1] != kd || !kd || !n || !m ||
	    kd > 32000 || naz > 1 || (nbz > 1 && nbz != n) ||
	    (a->dtype != IR_DTYPE_UINT8 && a->dtype != IR_DTYPE_INT8) ||
	    (b->dtype != IR_DTYPE_UINT8 && b->dtype != IR_DTYPE_INT8) || !knn_dnnl_int_ok())
		return 0;
	if (!(d = malloc((size_t)n * sizeof(*d)))) {
		rc = rt_oom(k);
		goto done;
	}
	corr = knn_dnnl_zp_shift(b->dtype, bz, nbz, n, d);
	/* the primitive's rows: A's, or a sink's block */
	c = rt_node_cache(k);
	mp = fn ? block_rows(m, n + corr) : m;
	if (c && (c->h.kind != KNN_WC_DNNL_MM || c->m != mp || c->k != kd || c->n != n ||
		  c->corr != corr || c->a_dt != a_dt))
		c = NULL;
	knn_dnnl_threads(rt_threads(k));
	if (!c) {
		if (!(tmp = calloc(1, sizeof(*tmp)))) {
			rc = rt_oom(k);
			goto done;
		}
		tmp->h.kind = KNN_WC_DNNL_MM;
		tmp->m = mp;
		tmp->k = kd;
		tmp->n = n;
		tmp->corr = corr;
		tmp->a_dt = a_dt;
		c = tmp;
	}
	if (!b_const || c->h.w != b->data || !c->b8) {
		int parts;

		if (!(b8 = malloc((size_t)(kd * (n + corr) + 1)))) {
			rc = rt_oom(k);
			goto done;
		}
		mm_b8(b->data, b->dtype, kd, n, n + corr, b8);
		parts = mm_parts(b8, kd, n, corr);
		if (parts > 1) {
			int8_t *sp = mm_split(b8, kd, n, corr, parts);

			free(b8);
			if (!(b8 = sp)) {
				rc = rt_oom(k);
				goto done;
			}
		}
		np = parts ? parts * n + corr : n + corr;
		if (c->mm && c->np != np)   /* another split: another primitive */
			mm_dn_reset(c);
		free(c->b8);
		c->b8 = b8;
		b8 = NULL;
		c->h.w = b->data;
		c->b_ready = 0;
		c->np = np;
		c->parts = parts;
		c->exact = parts > 0;
	}
	np = c->np;
	/* kept (a constant B), exact or not: the next run knows at once */
	if (c == tmp && b_const && !rt_node_cache(k) &&
	    rt_node_cache_set(k, c, mm_dn_free, (int64_t)(kd * np)) == 0)
		tmp = NULL;
	if (!c->exact)   /* opmig's own exact path */
		goto done;
	if (!c->mm && mm_dn_make(c))
		goto done;
	c->zp_val = az ? (int32_t)az[0] : 0;
	if (fn) {
		if ((rc = mm_blocks(c, a, m, d, fn, ctx)) == 1)
			knn_dnnl_int_count();
		else if (rc < 0)
			rc = rc == IR_ENOMEM ? rt_oom(k) : rt_err(k, "oneDNN's matmul failed");
		goto done;
	}
	if (np != n && !(out = rt_big_alloc((size_t)(m * np) * sizeof(*out)))) {
		rc = rt_oom(k);
		goto done;
	}
	if (mm_dn_run(c, a->data, out))
		goto done;
	if (np != n)   /* the parts added, the correction; within int32 */
		mm_combine(c, d, out, m, y);
	knn_dnnl_int_count();
	rc = 1;
done:
	if (out != y)
		rt_big_free(out);
	mm_dn_free(tmp);
	free(b8);
	free(d);
	return rc;
}

int knn_mm_dnnl_s32(struct rt_kctx *k, const struct rt_value *a, const struct rt_value *b,
		    const double *az, int64_t naz, const double *bz, int64_t nbz, int b_const,
		    int32_t *y)
{
	return mm_s32(k, a, b, az, naz, bz, nbz, b_const, y, NULL, NULL);
}

int knn_mm_dnnl_s32_rows(struct rt_kctx *k, const struct rt_value *a, const struct rt_value *b,
			 const double *az, int64_t naz, const double *bz, int64_t nbz,
			 int b_const, knn_mm_sink fn, void *ctx)
{
	return mm_s32(k, a, b, az, naz, bz, nbz, b_const, NULL, fn, ctx);
}
