/* k_contrib_attn.c: the com.microsoft attention kernels of the contrib
 * family (ContribOperators.md): Attention (packed QKV projection,
 * mask_index forms, past/present, unidirectional, attention_bias) and
 * MultiHeadAttention (separate, packed and cached K/V, key_padding_mask,
 * past, qk output), over the scaled dot-product core of k_attn.c. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_nq.h"

/* ---- attention masks of the contrib ops --------------------------- */

enum { MS_NONE, MS_LEN, MS_STARTEND, MS_RAW2, MS_RAW3, MS_RAW4 };

struct msmask {
	int mode, causal;
	const int32_t *m;
	int64_t batch, s, t, past, max4;
	float filter;
	const float *ab;                 /* attention_bias or NULL */
	int64_t ab_b, ab_h;              /* its batch/head strides (0: broadcast) */
};

static void msmask_apply(void *ctx, int64_t b, int64_t h, int64_t i, float *row)
{
	const struct msmask *m = ctx;

	for (int64_t j = 0; j < m->t; j++) {
		int keep = 1;

		switch (m->mode) {
		case MS_LEN: keep = j < m->m[b]; break;
		case MS_STARTEND: keep = j < m->m[b] && j >= m->m[m->batch + b]; break;
		case MS_RAW2: keep = m->m[b * m->t + j] != 0; break;
		case MS_RAW3: keep = m->m[(b * m->s + i) * m->t + j] != 0; break;
		case MS_RAW4: keep = m->m[(b * m->max4 + m->past + i) * m->max4 + j] != 0; break;
		default: break;
		}
		if (m->ab)
			row[j] += m->ab[b * m->ab_b + h * m->ab_h + i * m->t + j];
		/* onnxruntime: the lowest float where causal masks, else
		 * mask_filter_value where the mask does */
		if (m->causal && j > i + m->past)
			row[j] += -FLT_MAX;
		else if (!keep)
			row[j] += m->filter;
	}
}

/* mask_index / key_padding_mask (input i) and attention_bias (input ai). */
static int msmask_init(struct rt_kctx *k, struct msmask *m, size_t i, size_t ai,
		       int64_t nh, int32_t **mbuf, float **abuf, int *aown)
{
	struct rt_value *mv = rt_in(k, i), *av = rt_in(k, ai);

	*mbuf = NULL;
	*abuf = NULL;
	*aown = 0;
	m->filter = rt_attr_float(k, "mask_filter_value", -10000.0f);
	m->causal = rt_attr_int(k, "unidirectional", 0) != 0;
	if (mv) {
		int64_t n = mv->numel;

		if (mv->kind != RT_TENSOR || !rt_dtype_is_int(mv->dtype))
			return rt_err(k, "input %zu must be an integer tensor", i);
		if (mv->rank == 1 && n == m->batch)
			m->mode = MS_LEN;
		else if (mv->rank == 1 && n == 2 * m->batch)
			m->mode = MS_STARTEND;
		else if (mv->rank == 2 && mv->dims[0] == m->batch && mv->dims[1] == m->t)
			m->mode = MS_RAW2;
		else if (mv->rank == 3 && mv->dims[0] == m->batch && mv->dims[1] == m->s &&
			 mv->dims[2] == m->t)
			m->mode = MS_RAW3;
		else if (mv->rank == 4 && mv->dims[0] == m->batch && mv->dims[1] == 1 &&
			 mv->dims[2] == mv->dims[3] && mv->dims[2] >= m->past + m->s &&
			 mv->dims[3] >= m->t)
			m->mode = MS_RAW4, m->max4 = mv->dims[2];
		else
			return rt_err(k, "unsupported mask shape for input %zu (%lld elements)", i,
				      (long long)n);
		if (!(*mbuf = malloc((size_t)(n + 1) * sizeof(int32_t))))
			return rt_oom(k);
		for (int64_t e = 0; e < n; e++)
			(*mbuf)[e] = (int32_t)rt_load_i64(mv->dtype, mv->data, e);
		m->m = *mbuf;
	}
	if (av) {
		if (av->kind != RT_TENSOR || av->rank != 4 ||
		    (av->dims[0] != 1 && av->dims[0] != m->batch) ||
		    (av->dims[1] != 1 && av->dims[1] != nh) || av->dims[2] != m->s ||
		    av->dims[3] != m->t)
			return rt_err(k, "attention_bias must be (batch or 1, heads or 1, %lld, %lld)",
				      (long long)m->s, (long long)m->t);
		if (!(*abuf = nq_f32(k, av, aown)))
			return IR_ENOMEM;
		m->ab = *abuf;
		m->ab_h = av->dims[1] == 1 ? 0 : m->s * m->t;
		m->ab_b = av->dims[0] == 1 ? 0 : av->dims[1] * m->s * m->t;
	}
	return 0;
}

/* [B, S, hidden] + bias -> [B, H, S, hidden/H] */
static void split_heads(const float *x, const float *bias, int64_t ld, float *out,
			int64_t b, int64_t s, int64_t h, int64_t d)
{
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t si = 0; si < s; si++)
			for (int64_t hi = 0; hi < h; hi++)
				for (int64_t j = 0; j < d; j++)
					out[((bi * h + hi) * s + si) * d + j] =
						x[(bi * s + si) * ld + hi * d + j] +
						(bias ? bias[hi * d + j] : 0.0f);
}

/* Concatenate the first p rows of past [B, H, pm, D] floats before cur
 * [B, H, S, D]. */
static float *cat_past(struct rt_kctx *k, const float *past, int64_t p, int64_t pm,
		       const float *cur, int64_t bh, int64_t s, int64_t d)
{
	float *o = malloc((size_t)(bh * (p + s) * d + 1) * sizeof(float));

	if (!o) {
		rt_oom(k);
		return NULL;
	}
	for (int64_t i = 0; i < bh; i++) {
		if (p)
			memcpy(o + i * (p + s) * d, past + i * pm * d, (size_t)(p * d) * sizeof(float));
		memcpy(o + (i * (p + s) + p) * d, cur + i * s * d, (size_t)(s * d) * sizeof(float));
	}
	return o;
}

/* Run the core and write output 0 as [B, S, H * dv]; a->q/k/v set. */
static int ms_run(struct rt_kctx *k, struct nq_sdpa_args *a, struct msmask *m, int dtype,
		  size_t qk_out)
{
	float *y = NULL, *yo = NULL, *qk = NULL;
	struct rt_value *o;
	int64_t dims[4];
	int rc = IR_ENOMEM;

	if (!(y = malloc((size_t)(a->batch * a->hq * a->sq * a->dv + 1) * sizeof(float))) ||
	    !(yo = malloc((size_t)(a->batch * a->hq * a->sq * a->dv + 1) * sizeof(float))) ||
	    (qk_out && rt_out_wanted(k, qk_out) &&
	     !(qk = malloc((size_t)(a->batch * a->hq * a->sq * a->t + 1) * sizeof(float))))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	a->y = y;
	a->qk = qk;
	a->qk_mode = 2;    /* onnxruntime's qk output: masks and bias added */
	a->bias = msmask_apply;
	a->bias_ctx = m;
	if ((rc = nq_sdpa(k, a)) < 0)
		goto cleanup;
	rc = IR_ENOMEM;
	nq_bshd_to_bhsd(y, yo, a->batch, a->sq, a->hq, a->dv, 1);
	dims[0] = a->batch, dims[1] = a->sq, dims[2] = a->hq * a->dv;
	if (!(o = rt_out_tensor(k, 0, dtype, 3, dims)))
		goto cleanup;
	for (int64_t e = 0; e < o->numel; e++)
		rt_store_f64(dtype, o->data, e, yo[e]);
	if (qk) {
		dims[0] = a->batch, dims[1] = a->hq, dims[2] = a->sq, dims[3] = a->t;
		if (!(o = rt_out_tensor(k, qk_out, dtype, 4, dims)))
			goto cleanup;
		for (int64_t e = 0; e < o->numel; e++)
			rt_store_f64(dtype, o->data, e, qk[e]);
	}
	rc = 0;
cleanup:
	free(y);
	free(yo);
	free(qk);
	return rc;
}

/* ---- com.microsoft Attention -------------------------------------- */

int nq_ms_attention(struct rt_kctx *k)
{
	struct rt_value *x, *w, *bias = rt_in(k, 2), *past = rt_in(k, 4);
	int64_t nh = rt_attr_int(k, "num_heads", 0), hs[3], b, s, din, p = 0, pm = 0, dims[5];
	int share = rt_attr_int(k, "past_present_share_buffer", 0) != 0;
	size_t nhs = 0;
	const int64_t *qkvh = rt_attr_ints(k, "qkv_hidden_sizes", &nhs);
	float *xf = NULL, *wf = NULL, *bf = NULL, *proj = NULL, *q = NULL, *kc = NULL, *vc = NULL;
	float *kk = NULL, *vv = NULL, *pf = NULL, *ab = NULL, *pres = NULL;
	int xo = 0, wo = 0, bo = 0, po = 0, ao = 0, rc;
	int32_t *mb = NULL;
	struct nq_sdpa_args a = { 0 };
	struct msmask m = { 0 };

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &w)) < 0 ||
	    (rc = nq_check_float(k, x, 0)) < 0)
		return rc;
	if (rt_attr_int(k, "do_rotary", 0))
		return rt_err(k, "do_rotary is not supported");
	if (x->rank != 3 || w->rank != 2 || w->dims[0] != x->dims[2] || nh <= 0)
		return rt_err(k, "needs input (B, S, D), weights (D, 3 * hidden) and num_heads");
	b = x->dims[0], s = x->dims[1], din = x->dims[2];
	if (nhs == 3)
		memcpy(hs, qkvh, sizeof(hs));
	else
		hs[0] = hs[1] = hs[2] = w->dims[1] / 3;
	if (hs[0] + hs[1] + hs[2] != w->dims[1] || hs[0] != hs[1] || hs[0] % nh || hs[2] % nh)
		return rt_err(k, "qkv hidden sizes do not match weights and num_heads");
	if (bias && bias->numel != w->dims[1])
		return rt_err(k, "bias must have %lld elements", (long long)w->dims[1]);
	a.batch = b, a.hq = a.hkv = nh, a.sq = s, a.d = hs[0] / nh, a.dv = hs[2] / nh;
	if (past) {
		if (past->kind != RT_TENSOR || past->rank != 5 || past->dims[0] != 2 ||
		    past->dims[1] != b || past->dims[2] != nh || past->dims[4] != a.d ||
		    a.d != a.dv)
			return rt_err(k, "past must be (2, batch, num_heads, past_len, head_size)");
		p = pm = past->dims[3];
	}
	if (share) {
		/* past holds max_sequence_length rows, the first
		 * past_sequence_length of them valid; present is that buffer
		 * with the new keys and values written after them */
		int64_t ps;

		if (!past || !rt_in(k, 6))
			return rt_err(k, "past_present_share_buffer needs past and "
				      "past_sequence_length");
		if ((rc = rt_in_int(k, 6, &ps)) < 0)
			return rc;
		if (ps < 0 || ps + s > pm)
			return rt_err(k, "past_sequence_length %lld + %lld new rows exceed the "
				      "buffer's %lld", (long long)ps, (long long)s, (long long)pm);
		p = ps;
	}
	a.t = p + s;
	rc = IR_ENOMEM;
	if (!(xf = nq_f32(k, x, &xo)) || !(wf = nq_f32(k, w, &wo)) ||
	    (bias && !(bf = nq_f32(k, bias, &bo))) || (past && !(pf = nq_f32(k, past, &po))))
		goto cleanup;
	if (!(proj = malloc((size_t)(b * s * w->dims[1] + 1) * sizeof(float))) ||
	    !(q = malloc((size_t)(b * s * hs[0] + 1) * sizeof(float))) ||
	    !(kk = malloc((size_t)(b * s * hs[1] + 1) * sizeof(float))) ||
	    !(vv = malloc((size_t)(b * s * hs[2] + 1) * sizeof(float)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	rt_gemm_f32(0, 0, b * s, w->dims[1], din, 1.0f, xf, din, wf, w->dims[1], 0.0f, proj,
		    w->dims[1]);
	split_heads(proj, bf, w->dims[1], q, b, s, nh, a.d);
	split_heads(proj + hs[0], bf ? bf + hs[0] : NULL, w->dims[1], kk, b, s, nh, a.d);
	split_heads(proj + hs[0] + hs[1], bf ? bf + hs[0] + hs[1] : NULL, w->dims[1], vv, b, s,
		    nh, a.dv);
	if (!(kc = cat_past(k, pf, p, pm, kk, b * nh, s, a.d)) ||
	    !(vc = cat_past(k, pf ? pf + b * nh * pm * a.d : NULL, p, pm, vv, b * nh, s, a.dv)))
		goto cleanup;
	m.batch = b, m.s = s, m.t = a.t, m.past = p;
	if ((rc = msmask_init(k, &m, 3, 5, nh, &mb, &ab, &ao)) < 0)
		goto cleanup;
	a.q = q, a.k = kc, a.v = vc;
	a.scale = rt_attr(k, "scale") ? rt_attr_float(k, "scale", 1) : (float)(1 / sqrt((double)a.d));
	if ((rc = ms_run(k, &a, &m, x->dtype, 0)) < 0)
		goto cleanup;
	if (rt_out_wanted(k, 1)) {
		int64_t rows = share ? pm : a.t, half = b * nh * rows * a.d;

		if (!(pres = malloc((size_t)(2 * half + 1) * sizeof(float)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		if (share)
			memcpy(pres, pf, (size_t)(2 * half) * sizeof(float));
		for (int64_t i = 0; i < b * nh; i++) {
			memcpy(pres + i * rows * a.d, kc + i * a.t * a.d,
			       (size_t)(a.t * a.d) * sizeof(float));
			memcpy(pres + half + i * rows * a.d, vc + i * a.t * a.d,
			       (size_t)(a.t * a.d) * sizeof(float));
		}
		dims[0] = 2, dims[1] = b, dims[2] = nh, dims[3] = rows, dims[4] = a.d;
		rc = nq_out_floats(k, 1, x->dtype, 5, dims, pres);
	}
cleanup:
	nq_f32_release(xf, xo);
	nq_f32_release(wf, wo);
	nq_f32_release(bf, bo);
	nq_f32_release(pf, po);
	nq_f32_release(ab, ao);
	free(mb);
	free(proj);
	free(q);
	free(kk);
	free(vv);
	free(kc);
	free(vc);
	free(pres);
	return rc;
}

/* ---- com.microsoft MultiHeadAttention ----------------------------- */

int nq_ms_mha(struct rt_kctx *k)
{
	struct rt_value *qv, *kv = rt_in(k, 1), *vv = rt_in(k, 2), *bias = rt_in(k, 3);
	struct rt_value *pk = rt_in(k, 6), *pv = rt_in(k, 7);
	int64_t nh = rt_attr_int(k, "num_heads", 0), b, s, l, hq, hk, hv, p = 0, pm = 0, dims[4];
	float *pres = NULL;
	float *qf = NULL, *kf = NULL, *vf = NULL, *bf = NULL, *q = NULL, *kh = NULL, *vh = NULL;
	float *kc = NULL, *vc = NULL, *pkf = NULL, *pvf = NULL, *ab = NULL;
	int qo = 0, ko = 0, vo = 0, bo = 0, pko = 0, pvo = 0, ao = 0, rc, cached = 0;
	int32_t *mb = NULL;
	struct nq_sdpa_args a = { 0 };
	struct msmask m = { 0 };

	if ((rc = rt_in_tensor(k, 0, &qv)) < 0 || (rc = nq_check_float(k, qv, 0)) < 0)
		return rc;
	if (nh <= 0 || qv->rank < 3)
		return rt_err(k, "needs num_heads and a 3-D (or packed 5-D) query");
	if (rt_in(k, 9))
		return rt_err(k, "cache_indirection is not supported");
	if (rt_in(k, 8) && !pk)
		return rt_err(k, "past_sequence_length needs past_key and past_value");
	b = qv->dims[0], s = qv->dims[1];
	rc = IR_ENOMEM;
	if (!(qf = nq_f32(k, qv, &qo)) || (kv && !(kf = nq_f32(k, kv, &ko))) ||
	    (vv && !(vf = nq_f32(k, vv, &vo))) || (bias && !(bf = nq_f32(k, bias, &bo))))
		goto cleanup;
	if (qv->rank == 5) {
		/* packed QKV (B, S, N, 3, H) */
		if (kv || vv || qv->dims[2] != nh || qv->dims[3] != 3) {
			rc = rt_err(k, "packed QKV must be (B, S, num_heads, 3, head) alone");
			goto cleanup;
		}
		a.d = a.dv = qv->dims[4];
		hq = hk = hv = nh * a.d;
		l = s;
	} else if (qv->rank == 3 && kv && kv->rank == 5) {
		/* packed KV (B, L, N, 2, H) */
		if (vv || kv->dims[2] != nh || kv->dims[3] != 2) {
			rc = rt_err(k, "packed KV must be (B, L, num_heads, 2, head) without value");
			goto cleanup;
		}
		a.d = a.dv = kv->dims[4];
		hq = qv->dims[2], hk = hv = nh * a.d, l = kv->dims[1];
	} else if (qv->rank == 3 && kv && vv && kv->rank == 3 && vv->rank == 3) {
		hq = qv->dims[2], hk = kv->dims[2], hv = vv->dims[2], l = kv->dims[1];
		if (hq != hk || hq % nh || hv % nh || vv->dims[1] != l) {
			rc = rt_err(k, "query, key and value hidden sizes do not fit num_heads");
			goto cleanup;
		}
		a.d = hq / nh, a.dv = hv / nh;
	} else if (qv->rank == 3 && kv && vv && kv->rank == 4 && vv->rank == 4) {
		/* cross attention with cached (B, N, L, H) key and value */
		cached = 1;
		hq = qv->dims[2], l = kv->dims[2];
		a.d = hq / nh, a.dv = vv->dims[3];
		hk = nh * a.d, hv = nh * a.dv;
		if (kv->dims[1] != nh || kv->dims[3] != a.d || vv->dims[2] != l || hq % nh) {
			rc = rt_err(k, "cached key/value must be (B, num_heads, L, head)");
			goto cleanup;
		}
	} else {
		rc = rt_err(k, "unsupported query/key/value shapes");
		goto cleanup;
	}
	if (bias && bias->numel != hq + hk + hv) {
		rc = rt_err(k, "bias must have %lld elements", (long long)(hq + hk + hv));
		goto cleanup;
	}
	if (pk || pv) {
		if (!pk || !pv || cached || pk->rank != 4 || pk->dims[0] != b || pk->dims[1] != nh ||
		    pk->dims[3] != a.d || pv->rank != 4 || pv->dims[2] != pk->dims[2] ||
		    pv->dims[3] != a.dv) {
			rc = rt_err(k, "past_key/past_value must both be (B, num_heads, P, head)");
			goto cleanup;
		}
		p = pm = pk->dims[2];
		if (rt_in(k, 8)) {
			/* buffer sharing: past_sequence_length rows of max
			 * valid; present is the buffer with the new rows after */
			int64_t ps;

			if ((rc = rt_in_int(k, 8, &ps)) < 0)
				goto cleanup;
			if (ps < 0 || ps + l > pm) {
				rc = rt_err(k, "past_sequence_length %lld + %lld new rows exceed the "
					    "buffer's %lld", (long long)ps, (long long)l, (long long)pm);
				goto cleanup;
			}
			p = ps;
		}
		rc = IR_ENOMEM;
		if (!(pkf = nq_f32(k, pk, &pko)) || !(pvf = nq_f32(k, pv, &pvo)))
			goto cleanup;
	}
	if (!(q = malloc((size_t)(b * s * hq + 1) * sizeof(float))) ||
	    !(kh = malloc((size_t)(b * l * hk + 1) * sizeof(float))) ||
	    !(vh = malloc((size_t)(b * l * hv + 1) * sizeof(float)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	if (qv->rank == 5) {
		for (int64_t bi = 0; bi < b; bi++)
			for (int64_t si = 0; si < s; si++)
				for (int64_t hi = 0; hi < nh; hi++)
					for (int64_t j = 0; j < a.d; j++) {
						const float *base = qf + (((bi * s + si) * nh + hi) * 3) * a.d;
						int64_t o = ((bi * nh + hi) * s + si) * a.d + j;

						q[o] = base[j] + (bf ? bf[hi * a.d + j] : 0);
						kh[o] = base[a.d + j] + (bf ? bf[hq + hi * a.d + j] : 0);
						vh[o] = base[2 * a.d + j] + (bf ? bf[2 * hq + hi * a.d + j] : 0);
					}
	} else {
		split_heads(qf, bf, hq, q, b, s, nh, a.d);
		if (kv->rank == 5) {
			for (int64_t bi = 0; bi < b; bi++)
				for (int64_t li = 0; li < l; li++)
					for (int64_t hi = 0; hi < nh; hi++)
						for (int64_t j = 0; j < a.d; j++) {
							const float *base = kf + (((bi * l + li) * nh + hi) * 2) * a.d;
							int64_t o = ((bi * nh + hi) * l + li) * a.d + j;

							kh[o] = base[j] + (bf ? bf[hq + hi * a.d + j] : 0);
							vh[o] = base[a.d + j] +
								(bf ? bf[hq + hk + hi * a.d + j] : 0);
						}
		} else if (cached) {
			memcpy(kh, kf, (size_t)(b * l * hk) * sizeof(float));
			memcpy(vh, vf, (size_t)(b * l * hv) * sizeof(float));
		} else {
			split_heads(kf, bf ? bf + hq : NULL, hk, kh, b, l, nh, a.d);
			split_heads(vf, bf ? bf + hq + hk : NULL, hv, vh, b, l, nh, a.dv);
		}
	}
	rc = IR_ENOMEM;
	if (!(kc = cat_past(k, pkf, p, pm, kh, b * nh, l, a.d)) ||
	    !(vc = cat_past(k, pvf, p, pm, vh, b * nh, l, a.dv)))
		goto cleanup;
	a.batch = b, a.hq = a.hkv = nh, a.sq = s, a.t = p + l;
	m.batch = b, m.s = s, m.t = a.t, m.past = p;
	if ((rc = msmask_init(k, &m, 4, 5, nh, &mb, &ab, &ao)) < 0)
		goto cleanup;
	if (m.mode == MS_RAW2 && rt_in(k, 4)->dims[1] != a.t) {
		rc = rt_err(k, "key_padding_mask length differs from total length");
		goto cleanup;
	}
	a.q = q, a.k = kc, a.v = vc;
	a.scale = rt_attr(k, "scale") ? rt_attr_float(k, "scale", 1) : (float)(1 / sqrt((double)a.d));
	if ((rc = ms_run(k, &a, &m, qv->dtype, 3)) < 0)
		goto cleanup;
	for (int kv2 = 0; kv2 < 2; kv2++) {
		/* present: [B, N, T, H], or the shared buffer of pm rows */
		int64_t rows = rt_in(k, 8) ? pm : a.t, d = kv2 ? a.dv : a.d;
		const float *src = kv2 ? vc : kc;

		if (!rt_out_wanted(k, 1 + (size_t)kv2))
			continue;
		free(pres);
		if (!(pres = malloc((size_t)(b * nh * rows * d + 1) * sizeof(float)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		if (rows != a.t)
			memcpy(pres, kv2 ? pvf : pkf, (size_t)(b * nh * rows * d) * sizeof(float));
		for (int64_t i = 0; i < b * nh; i++)
			memcpy(pres + i * rows * d, src + i * a.t * d, (size_t)(a.t * d) * sizeof(float));
		dims[0] = b, dims[1] = nh, dims[2] = rows, dims[3] = d;
		if ((rc = nq_out_floats(k, 1 + (size_t)kv2, qv->dtype, 4, dims, pres)) < 0)
			goto cleanup;
	}
	rc = 0;
cleanup:
	nq_f32_release(qf, qo);
	nq_f32_release(kf, ko);
	nq_f32_release(vf, vo);
	nq_f32_release(bf, bo);
	nq_f32_release(pkf, pko);
	nq_f32_release(pvf, pvo);
	nq_f32_release(ab, ao);
	free(mb);
	free(q);
	free(kh);
	free(vh);
	free(kc);
	free(vc);
	free(pres);
	return rc;
}
