/* k_attn.c: kernels of the attn family: ai.onnx Attention (23, 24, 25:
 * 3-D and 4-D inputs, grouped-query heads, boolean or additive masks
 * shorter than the key sequence, is_causal aligned after the past,
 * past/present key and value, softcap, nonpad_kv_seqlen, sliding windows,
 * qk_matmul_output modes; softcap comes before the mask and the modes are
 * 0 matmul, 1 softcap, 2 mask, 3 softmax, as onnx/onnx#7867 and #7913
 * fixed the order), RotaryEmbedding (23), and the family table
 * (LinearAttention lives in k_attn_linear.c).  The scaled
 * dot-product core and the rotation are shared with the com.microsoft
 * kernels in k_contrib.c (k_nq.h). */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_nq.h"

/* ---- scaled dot-product attention core ------------------------------- */

/* One (batch, query head) pair: scores into s (sq * t floats). */
static void sdpa_head(const struct nq_sdpa_args *a, int64_t b, int64_t h, float *s)
{
	int64_t rep = a->hq / a->hkv, sq = a->sq, t = a->t;
	const float *q = a->q + (b * a->hq + h) * sq * a->d;
	const float *kk = a->k + (b * a->hkv + h / rep) * t * a->d;
	const float *v = a->v + (b * a->hkv + h / rep) * t * a->dv;
	float *y = a->y + (b * a->hq + h) * sq * a->dv;
	float *qk = a->qk ? a->qk + (b * a->hq + h) * sq * t : NULL;

	rt_gemm_f32(0, 1, sq, t, a->d, a->scale, q, a->d, kk, a->d, 0.0f, s, t);
	for (int64_t i = 0; i < sq; i++) {
		float *row = s + i * t;

		if (qk && a->qk_mode == 0)
			memcpy(qk + i * t, row, (size_t)t * sizeof(float));
		if (a->softcap > 0)
			for (int64_t j = 0; j < t; j++)
				row[j] = a->softcap * tanhf(row[j] / a->softcap);
		if (qk && a->qk_mode == 1)
			memcpy(qk + i * t, row, (size_t)t * sizeof(float));
		if (a->bias)
			a->bias(a->bias_ctx, b, h, i, row);
		if (qk && a->qk_mode == 2)
			memcpy(qk + i * t, row, (size_t)t * sizeof(float));
		if (a->sink)
			nq_softmax_sink(row, t, a->sink[h]);
		else
			nq_softmax(row, t);
		if (qk && a->qk_mode == 3)
			memcpy(qk + i * t, row, (size_t)t * sizeof(float));
	}
	rt_gemm_f32(0, 0, sq, a->dv, t, 1.0f, s, t, v, a->dv, 0.0f, y, a->dv);
}

struct sdpa_job {
	const struct nq_sdpa_args *a;
	atomic_int failed;
};

static void sdpa_range(void *ctx, int64_t begin, int64_t end)
{
	struct sdpa_job *j = ctx;
	const struct nq_sdpa_args *a = j->a;
	float *s = malloc((size_t)(a->sq * a->t + 1) * sizeof(float));

	if (!s) {
		atomic_store(&j->failed, 1);
		return;
	}
	for (int64_t i = begin; i < end; i++)
		sdpa_head(a, i / a->hq, i % a->hq, s);
	free(s);
}

int nq_sdpa(struct rt_kctx *k, const struct nq_sdpa_args *a)
{
	struct sdpa_job j = { .a = a };
	int64_t per = a->sq * a->t * (a->d + a->dv) + 1;

	atomic_init(&j.failed, 0);
	rt_parallel_for(k, a->batch * a->hq, 1 + (1 << 20) / per, sdpa_range, &j);
	return atomic_load(&j.failed) ? rt_oom(k) : 0;
}

/* [B, S, H, D] <-> [B, H, S, D] */
void nq_bshd_to_bhsd(const float *src, float *dst, int64_t b, int64_t s, int64_t h,
		     int64_t d, int back)
{
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t si = 0; si < s; si++)
			for (int64_t hi = 0; hi < h; hi++) {
				const float *from = back ? src + ((bi * h + hi) * s + si) * d :
						    src + ((bi * s + si) * h + hi) * d;
				float *to = back ? dst + ((bi * s + si) * h + hi) * d :
					    dst + ((bi * h + hi) * s + si) * d;

				memcpy(to, from, (size_t)d * sizeof(float));
			}
}

/* ---- ai.onnx Attention ------------------------------------------------ */

struct amask {
	const struct rt_value *m;        /* attn_mask or NULL */
	int64_t st[4], mlen;             /* strides over (B, H, Sq, kv), its last dim */
	int is_bool, causal, has_past;
	int64_t past, t, sq;
	const int64_t *nonpad;           /* [B] or NULL */
	int64_t left, right;             /* window sizes (-1: none) */
};

static void amask_apply(void *ctx, int64_t b, int64_t h, int64_t i, float *row)
{
	const struct amask *m = ctx;

	for (int64_t j = 0; j < m->t; j++) {
		float add = 0;
		/* queries sit after the past, or end at the valid keys */
		int64_t pos = i + (m->has_past ? m->past : m->nonpad ? m->nonpad[b] - m->sq : 0);

		if (m->m) {
			if (j >= m->mlen) {
				add = -INFINITY;
			} else {
				int64_t e = b * m->st[0] + h * m->st[1] + i * m->st[2] + j * m->st[3];

				if (m->is_bool)
					add = ((const uint8_t *)m->m->data)[e] ? 0 : -FLT_MAX;
				else
					add = (float)rt_load_f64(m->m->dtype, m->m->data, e);
			}
		}
		/* onnxruntime masks boolean and causal positions with the
		 * lowest float, which qk_matmul_output_mode 2 shows */
		if (m->causal && j > pos)
			add = -FLT_MAX;
		if (m->nonpad && j >= m->nonpad[b])
			add = -INFINITY;
		if (m->left >= 0 && j < pos - m->left)
			add = -INFINITY;
		if (m->right >= 0 && j > pos + m->right)
			add = -INFINITY;
		row[j] += add;
	}
}

/* Tensor t (3-D [B, S, H*D] with H heads, or 4-D [B, H, S, D]) as float
 * [B, H, S, D]; *heads, *seq, *dim set. */
static float *heads_first(struct rt_kctx *k, const struct rt_value *t, int64_t nh,
			  size_t i, int64_t *heads, int64_t *seq, int64_t *dim)
{
	float *f, *o;
	int owned;

	if (t->rank == 4) {
		*heads = t->dims[1];
		*seq = t->dims[2];
		*dim = t->dims[3];
	} else if (t->rank == 3 && nh > 0 && t->dims[2] % nh == 0) {
		*heads = nh;
		*seq = t->dims[1];
		*dim = t->dims[2] / nh;
	} else {
		rt_err(k, "input %zu must be 4-D, or 3-D with a head count dividing its "
		       "last dim", i);
		return NULL;
	}
	if (!(f = nq_f32(k, t, &owned)))
		return NULL;
	if (!(o = malloc((size_t)(t->numel + 1) * sizeof(float)))) {
		nq_f32_release(f, owned);
		rt_oom(k);
		return NULL;
	}
	if (t->rank == 4)
		memcpy(o, f, (size_t)t->numel * sizeof(float));
	else
		nq_bshd_to_bhsd(f, o, t->dims[0], *seq, *heads, *dim, 0);
	nq_f32_release(f, owned);
	return o;
}

/* Concatenate past [B, H, P, D] (may be NULL) and cur [B, H, S, D]. */
static float *concat_seq(struct rt_kctx *k, const struct rt_value *past, const float *cur,
			 int64_t b, int64_t h, int64_t s, int64_t d, int64_t *total)
{
	int64_t p = past ? past->dims[2] : 0;
	float *o, *pf = NULL;
	int owned = 0;

	*total = p + s;
	if (past && (past->rank != 4 || past->dims[0] != b || past->dims[1] != h ||
		     past->dims[3] != d)) {
		rt_err(k, "past key/value must be [%lld, %lld, P, %lld]", (long long)b,
		       (long long)h, (long long)d);
		return NULL;
	}
	if (past && !(pf = nq_f32(k, past, &owned)))
		return NULL;
	if (!(o = malloc((size_t)(b * h * (p + s) * d + 1) * sizeof(float)))) {
		nq_f32_release(pf, owned);
		rt_oom(k);
		return NULL;
	}
	for (int64_t i = 0; i < b * h; i++) {
		if (p)
			memcpy(o + i * (p + s) * d, pf + i * p * d, (size_t)(p * d) * sizeof(float));
		memcpy(o + (i * (p + s) + p) * d, cur + i * s * d, (size_t)(s * d) * sizeof(float));
	}
	nq_f32_release(pf, owned);
	return o;
}

static int k_attention(struct rt_kctx *k)
{
	struct rt_value *qv, *kv, *vv, *mask = rt_in(k, 3), *pk = rt_in(k, 4), *pv = rt_in(k, 5);
	struct rt_value *np = k->version >= 24 ? rt_in(k, 6) : NULL;
	int64_t qh = rt_attr_int(k, "q_num_heads", 0), kh = rt_attr_int(k, "kv_num_heads", 0);
	int64_t hq, hk, hv, sq, skv, svv, d, dk, dv, t, tv, dims[4];
	float *q = NULL, *kf = NULL, *vf = NULL, *kc = NULL, *vc = NULL, *y = NULL, *qk = NULL,
	      *yo = NULL;
	int64_t *nonpad = NULL;
	struct nq_sdpa_args a = { 0 };
	struct amask am = { 0 };
	size_t nn;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &qv)) < 0 || (rc = rt_in_tensor(k, 1, &kv)) < 0 ||
	    (rc = rt_in_tensor(k, 2, &vv)) < 0 || (rc = nq_check_float(k, qv, 0)) < 0)
		return rc;
	if (qv->rank != kv->rank || qv->rank != vv->rank)
		return rt_err(k, "Q, K and V must have the same rank");
	rc = IR_ENOMEM;
	if (!(q = heads_first(k, qv, qh, 0, &hq, &sq, &d)) ||
	    !(kf = heads_first(k, kv, kh, 1, &hk, &skv, &dk)) ||
	    !(vf = heads_first(k, vv, kh, 2, &hv, &svv, &dv)))
		goto cleanup;
	if (dk != d || hk != hv || skv != svv || !hk || hq % hk ||
	    kv->dims[0] != qv->dims[0] || vv->dims[0] != qv->dims[0]) {
		rc = rt_err(k, "Q, K, V disagree: heads %lld/%lld/%lld, head sizes %lld/%lld, "
			    "key/value lengths %lld/%lld", (long long)hq, (long long)hk,
			    (long long)hv, (long long)d, (long long)dk, (long long)skv,
			    (long long)svv);
		goto cleanup;
	}
	a.batch = qv->dims[0];
	if (!(kc = concat_seq(k, pk, kf, a.batch, hk, skv, d, &t)) ||
	    !(vc = concat_seq(k, pv, vf, a.batch, hk, skv, dv, &tv)))
		goto cleanup;
	if (tv != t) {
		rc = rt_err(k, "past_key and past_value lengths differ");
		goto cleanup;
	}
	if (np) {
		if ((rc = rt_in_ints(k, 6, &nonpad, &nn)) < 0)
			goto cleanup;
		rc = IR_ENOMEM;
		if ((int64_t)nn != a.batch) {
			rc = rt_err(k, "nonpad_kv_seqlen has %zu entries for batch %lld", nn,
				    (long long)a.batch);
			goto cleanup;
		}
	}
	am.t = t;
	am.sq = sq;
	am.past = pk ? pk->dims[2] : 0;
	am.has_past = pk != NULL;
	am.causal = rt_attr_int(k, "is_causal", 0) != 0;
	am.nonpad = nonpad;
	am.left = k->version >= 25 ? rt_attr_int(k, "left_window_size", -1) : -1;
	am.right = k->version >= 25 ? rt_attr_int(k, "right_window_size", -1) : -1;
	if (mask) {
		int64_t md[4] = { 1, 1, 1, 1 }, want[4] = { a.batch, hq, sq, t };

		if (mask->kind != RT_TENSOR || mask->rank < 1 || mask->rank > 4) {
			rc = rt_err(k, "attn_mask must be a tensor of rank 1 to 4");
			goto cleanup;
		}
		for (int j = 0; j < mask->rank; j++)
			md[4 - mask->rank + j] = mask->dims[j];
		am.m = mask;
		am.is_bool = mask->dtype == IR_DTYPE_BOOL;
		am.mlen = md[3];
		for (int j = 3, s = 1; j >= 0; j--) {
			if (md[j] != 1 && md[j] != want[j] && !(j == 3 && md[j] < t)) {
				rc = rt_err(k, "attn_mask dim %d is %lld, expected 1 or %lld", j,
					    (long long)md[j], (long long)want[j]);
				goto cleanup;
			}
			am.st[j] = md[j] == 1 && j < 3 ? 0 : s;
			s *= (int)md[j];
		}
	}
	a.q = q;
	a.k = kc;
	a.v = vc;
	a.hq = hq;
	a.hkv = hk;
	a.sq = sq;
	a.t = t;
	a.d = d;
	a.dv = dv;
	a.scale = rt_attr(k, "scale") ? rt_attr_float(k, "scale", 1) : (float)(1 / sqrt((double)d));
	a.softcap = rt_attr_float(k, "softcap", 0);
	a.qk_mode = (int)rt_attr_int(k, "qk_matmul_output_mode", 0);
	a.bias = amask_apply;
	a.bias_ctx = &am;
	if (!(y = malloc((size_t)(a.batch * hq * sq * dv + 1) * sizeof(float))) ||
	    (rt_out_wanted(k, 3) &&
	     !(qk = malloc((size_t)(a.batch * hq * sq * t + 1) * sizeof(float))))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	a.y = y;
	a.qk = qk;
	if ((rc = nq_sdpa(k, &a)) < 0)
		goto cleanup;
	if (qv->rank == 3) {
		if (!(yo = malloc((size_t)(a.batch * hq * sq * dv + 1) * sizeof(float)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		nq_bshd_to_bhsd(y, yo, a.batch, sq, hq, dv, 1);
		dims[0] = a.batch, dims[1] = sq, dims[2] = hq * dv;
		rc = nq_out_floats(k, 0, qv->dtype, 3, dims, yo);
	} else {
		dims[0] = a.batch, dims[1] = hq, dims[2] = sq, dims[3] = dv;
		rc = nq_out_floats(k, 0, qv->dtype, 4, dims, y);
	}
	dims[0] = a.batch, dims[1] = hk, dims[2] = t, dims[3] = d;
	if (rc >= 0)
		rc = nq_out_floats(k, 1, kv->dtype, 4, dims, kc);
	dims[3] = dv;
	if (rc >= 0)
		rc = nq_out_floats(k, 2, vv->dtype, 4, dims, vc);
	dims[1] = hq, dims[2] = sq, dims[3] = t;
	if (rc >= 0 && qk)
		rc = nq_out_floats(k, 3, qv->dtype, 4, dims, qk);
cleanup:
	free(q);
	free(kf);
	free(vf);
	free(kc);
	free(vc);
	free(y);
	free(yo);
	free(qk);
	free(nonpad);
	return rc;
}

/* ---- rotary embedding ---------------------------------------------- */

void nq_rotary(const struct nq_rope *r, const float *x, float *y)
{
	int64_t half = r->rot / 2;

	for (int64_t b = 0; b < r->batch; b++)
		for (int64_t s = 0; s < r->seq; s++) {
			int64_t row = r->pos ? r->pos[r->pos_n == 1 ? 0 : b * r->seq + s] +
				      (r->pos_n == 1 ? s : 0) : b * r->seq + s;
			const float *c = r->cos + row * r->cache_w, *sn = r->sin + row * r->cache_w;

			for (int64_t h = 0; h < r->heads; h++) {
				int64_t off = b * r->sb + s * r->ss + h * r->sh;
				const float *xi = x + off;
				float *yi = y + off;

				for (int64_t j = 0; j < half; j++) {
					int64_t i1 = r->interleaved ? 2 * j : j;
					int64_t i2 = r->interleaved ? 2 * j + 1 : j + half;
					float x1 = xi[i1], x2 = xi[i2];

					yi[i1] = c[j] * x1 - sn[j] * x2;
					yi[i2] = sn[j] * x1 + c[j] * x2;
				}
				for (int64_t j = r->rot; j < r->dim; j++)
					yi[j] = xi[j];
			}
		}
}

/* Check position ids against the cache rows; -1 and an error if out. */
int nq_rope_check(struct rt_kctx *k, const struct nq_rope *r, int64_t rows)
{
	for (int64_t i = 0; r->pos && i < r->pos_n; i++) {
		int64_t last = r->pos[i] + (r->pos_n == 1 ? r->seq - 1 : 0);

		if (r->pos[i] < 0 || last >= rows)
			return rt_err(k, "position id %lld outside the cache's %lld rows",
				      (long long)last, (long long)rows);
	}
	return 0;
}

static int k_rotary(struct rt_kctx *k)
{
	struct rt_value *x, *cv, *sv;
	int64_t nh = rt_attr_int(k, "num_heads", 0), rot = rt_attr_int(k, "rotary_embedding_dim", 0);
	struct nq_rope r = { .interleaved = rt_attr_int(k, "interleaved", 0) != 0 };
	int rc;
	int64_t *pos = NULL;
	size_t np = 0;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &cv)) < 0 ||
	    (rc = rt_in_tensor(k, 2, &sv)) < 0 || (rc = nq_check_float(k, x, 0)) < 0)
		return rc;
	r.batch = x->dims[0];
	if (x->rank == 4) {
		/* [B, H, S, D] */
		r.heads = x->dims[1], r.seq = x->dims[2], r.dim = x->dims[3];
		r.sh = r.seq * r.dim, r.ss = r.dim, r.sb = r.heads * r.seq * r.dim;
	} else if (x->rank == 3 && nh > 0 && x->dims[2] % nh == 0) {
		r.heads = nh, r.seq = x->dims[1], r.dim = x->dims[2] / nh;
		r.sh = r.dim, r.ss = nh * r.dim, r.sb = r.seq * r.ss;
	} else {
		return rt_err(k, "input must be 4-D, or 3-D with num_heads dividing its last dim");
	}
	r.rot = rot > 0 ? rot : r.dim;
	if (r.rot > r.dim || r.rot % 2)
		return rt_err(k, "rotary_embedding_dim %lld must be even and at most %lld",
			      (long long)r.rot, (long long)r.dim);
	r.cache_w = cv->dims[cv->rank - 1];
	if (r.cache_w != r.rot / 2 || sv->numel != cv->numel)
		return rt_err(k, "cos/sin caches must end in rotary_embedding_dim / 2 = %lld",
			      (long long)(r.rot / 2));
	if (rt_in(k, 3)) {
		if ((rc = rt_in_ints(k, 3, &pos, &np)) < 0)
			return rc;
		r.pos = pos;
		r.pos_n = (int64_t)np;
		if ((int64_t)np != r.batch * r.seq || cv->rank != 2) {
			rc = rt_err(k, "position_ids must be [batch, seq] with a 2-D cache");
			goto cleanup;
		}
		if ((rc = nq_rope_check(k, &r, cv->dims[0])) < 0)
			goto cleanup;
	} else if (cv->numel != r.batch * r.seq * r.cache_w) {
		rc = rt_err(k, "without position_ids the caches must be [batch, seq, %lld]",
			    (long long)r.cache_w);
		goto cleanup;
	}
	rc = nq_rotary_run(k, &r, x, cv, sv);
cleanup:
	free(pos);
	return rc;
}

const struct rt_kernel rt_kernels_attn[] = {
	{ "ai.onnx", "Attention", 23, RT_OPEN, k_attention },
	{ "ai.onnx", "LinearAttention", 27, RT_OPEN, nq_linear_attention },
	{ "ai.onnx", "RotaryEmbedding", 23, RT_OPEN, k_rotary },
};
const size_t rt_n_kernels_attn = sizeof(rt_kernels_attn) / sizeof(rt_kernels_attn[0]);
