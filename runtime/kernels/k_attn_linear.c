/* k_attn_linear.c: the LinearAttention kernel (ai.onnx 27) of the attn
 * family: the linear, gated, delta and gated_delta update rules of a
 * per-head (d_k x d_v) state, decay per head or per key dim, beta per head
 * or shared, optional erase_gate, grouped query heads reading their
 * key/value head's state; past_state in, present_state out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_nq.h"

/* Per step t and key/value head: state *= exp(decay) (gated rules),
 * v <- beta * (v - state^T (erase . k)) (delta rules), state += k v^T,
 * then each query head of the group reads scale * q^T state. */
int nq_linear_attention(struct rt_kctx *k)
{
	struct rt_value *qv, *kv, *vv, *ps = rt_in(k, 3), *dv_ = rt_in(k, 4), *bv = rt_in(k, 5);
	struct rt_value *ev = rt_in(k, 6), *o;
	const char *rule = rt_attr_str(k, "update_rule", "gated_delta");
	int64_t hq = rt_attr_int(k, "q_num_heads", 0), hk = rt_attr_int(k, "kv_num_heads", 0);
	float scale = rt_attr_float(k, "scale", 0);
	int gating, delta, rc, qo = 0, ko = 0, vo = 0, so = 0, go = 0, bo = 0, eo = 0;
	float *q = NULL, *kf = NULL, *vf = NULL, *st = NULL, *g = NULL, *be = NULL, *er = NULL;
	float *y = NULL, *vt = NULL, *psf = NULL;
	int64_t b, t, dk, dvv, grp, gw = 0, bw = 0, dims[4];

	gating = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
	delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
	if (!gating && !delta && strcmp(rule, "linear"))
		return rt_err(k, "unknown update_rule '%s'", rule);
	if ((rc = rt_in_tensor(k, 0, &qv)) < 0 || (rc = rt_in_tensor(k, 1, &kv)) < 0 ||
	    (rc = rt_in_tensor(k, 2, &vv)) < 0 || (rc = nq_check_float(k, qv, 0)) < 0)
		return rc;
	if (hq <= 0 || hk <= 0 || hq % hk)
		return rt_err(k, "q_num_heads %lld must be a positive multiple of kv_num_heads %lld",
			      (long long)hq, (long long)hk);
	if (gating != (dv_ != NULL) || delta != (bv != NULL) || (ev && !delta))
		return rt_err(k, "update_rule '%s' %s decay, %s beta%s", rule,
			      gating ? "needs" : "forbids", delta ? "needs" : "forbids",
			      delta ? "" : " and erase_gate");
	if (qv->rank != 3 || kv->rank != 3 || vv->rank != 3 || qv->dims[2] % hq ||
	    kv->dims[2] % hk || vv->dims[2] % hk)
		return rt_err(k, "query, key and value must be (B, T, heads * dim)");
	b = qv->dims[0], t = qv->dims[1], dk = qv->dims[2] / hq, dvv = vv->dims[2] / hk;
	grp = hq / hk;
	if (kv->dims[0] != b || kv->dims[1] != t || kv->dims[2] != hk * dk ||
	    vv->dims[0] != b || vv->dims[1] != t)
		return rt_err(k, "key and value must be (%lld, %lld, kv_num_heads * dim)",
			      (long long)b, (long long)t);
	if (dv_) {
		gw = dv_->kind == RT_TENSOR && dv_->rank == 3 ? dv_->dims[2] : -1;
		if ((gw != hk && gw != hk * dk) || dv_->numel != b * t * gw)
			return rt_err(k, "decay must be (B, T, kv_num_heads [* d_k])");
	}
	if (bv) {
		bw = bv->kind == RT_TENSOR && bv->rank == 3 ? bv->dims[2] : -1;
		if ((bw != hk && bw != 1) || bv->numel != b * t * bw)
			return rt_err(k, "beta must be (B, T, kv_num_heads or 1)");
	}
	if (ev && (ev->kind != RT_TENSOR || ev->numel != b * t * hk * dk))
		return rt_err(k, "erase_gate must be (B, T, kv_num_heads * d_k)");
	if (ps && (ps->kind != RT_TENSOR || ps->rank != 4 || ps->dims[0] != b ||
		   ps->dims[1] != hk || ps->dims[2] != dk || ps->dims[3] != dvv))
		return rt_err(k, "past_state must be (%lld, %lld, %lld, %lld)", (long long)b,
			      (long long)hk, (long long)dk, (long long)dvv);
	if (scale == 0)
		scale = (float)(1 / sqrt((double)dk));
	rc = IR_ENOMEM;
	if (!(q = nq_f32(k, qv, &qo)) || !(kf = nq_f32(k, kv, &ko)) || !(vf = nq_f32(k, vv, &vo)) ||
	    (ps && !(psf = nq_f32(k, ps, &so))) || (dv_ && !(g = nq_f32(k, dv_, &go))) ||
	    (bv && !(be = nq_f32(k, bv, &bo))) || (ev && !(er = nq_f32(k, ev, &eo))))
		goto cleanup;
	if (!(st = calloc((size_t)(b * hk * dk * dvv + 1), sizeof(float))) ||
	    !(y = malloc((size_t)(b * t * hq * dvv + 1) * sizeof(float))) ||
	    !(vt = malloc((size_t)(dvv + 1) * sizeof(float)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	if (psf)
		memcpy(st, psf, (size_t)(b * hk * dk * dvv) * sizeof(float));
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t ti = 0; ti < t; ti++)
			for (int64_t h = 0; h < hk; h++) {
				float *s = st + (bi * hk + h) * dk * dvv;
				const float *kt = kf + (bi * t + ti) * hk * dk + h * dk;
				const float *vin = vf + (bi * t + ti) * hk * dvv + h * dvv;

				if (g)
					for (int64_t d = 0; d < dk; d++) {
						float e = expf(g[(bi * t + ti) * gw +
								 (gw == hk ? h : h * dk + d)]);

						for (int64_t m2 = 0; m2 < dvv; m2++)
							s[d * dvv + m2] *= e;
					}
				memcpy(vt, vin, (size_t)dvv * sizeof(float));
				if (delta) {
					float bb = be[(bi * t + ti) * bw + (bw == 1 ? 0 : h)];

					for (int64_t m2 = 0; m2 < dvv; m2++) {
						double r = 0;

						for (int64_t d = 0; d < dk; d++)
							r += (double)s[d * dvv + m2] * kt[d] *
							     (er ? er[(bi * t + ti) * hk * dk + h * dk + d] : 1.0f);
						vt[m2] = bb * (vt[m2] - (float)r);
					}
				}
				for (int64_t d = 0; d < dk; d++)
					for (int64_t m2 = 0; m2 < dvv; m2++)
						s[d * dvv + m2] += kt[d] * vt[m2];
				for (int64_t qh = h * grp; qh < (h + 1) * grp; qh++) {
					const float *qt = q + (bi * t + ti) * hq * dk + qh * dk;
					float *yo = y + ((bi * t + ti) * hq + qh) * dvv;

					for (int64_t m2 = 0; m2 < dvv; m2++) {
						double acc = 0;

						for (int64_t d = 0; d < dk; d++)
							acc += (double)qt[d] * s[d * dvv + m2];
						yo[m2] = scale * (float)acc;
					}
				}
			}
	dims[0] = b, dims[1] = t, dims[2] = hq * dvv;
	if (!(o = rt_out_tensor(k, 0, qv->dtype, 3, dims)))
		goto cleanup;
	for (int64_t e = 0; e < o->numel; e++)
		rt_store_f64(o->dtype, o->data, e, y[e]);
	if (rt_out_wanted(k, 1)) {
		dims[0] = b, dims[1] = hk, dims[2] = dk, dims[3] = dvv;
		if (!(o = rt_out_tensor(k, 1, ps ? ps->dtype : qv->dtype, 4, dims)))
			goto cleanup;
		for (int64_t e = 0; e < o->numel; e++)
			rt_store_f64(o->dtype, o->data, e, st[e]);
	}
	rc = 0;
cleanup:
	nq_f32_release(q, qo);
	nq_f32_release(kf, ko);
	nq_f32_release(vf, vo);
	nq_f32_release(psf, so);
	nq_f32_release(g, go);
	nq_f32_release(be, bo);
	nq_f32_release(er, eo);
	free(st);
	free(y);
	free(vt);
	return rc;
}
