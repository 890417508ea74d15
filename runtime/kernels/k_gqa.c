/* k_gqa.c: the com.microsoft GroupQueryAttention kernel, as onnxruntime's
 * CPU provider computes it: separate or packed QKV, past/present key and
 * value in BNSH with per-batch lengths from seqlens_k, a causal mask after
 * the past, local_window_size, softcap, smooth softmax and head_sink,
 * rotary embedding (do_rotary) at positions taken from seqlens_k, and
 * kv heads shared by num_heads / kv_num_heads query heads.  The attention
 * core and the rotation are k_attn.c's (k_nq.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_nq.h"

struct gqa_mask {
	const int64_t *past;             /* [B] rows of past before the new ones */
	const int64_t *seqlens;          /* [B] seqlens_k: keys after it are masked */
	int64_t t, window;               /* key rows, local_window_size (<= 0 none) */
};

/* Query row i of batch b sits at position past[b] + i: it sees keys at
 * positions <= its own and <= seqlens_k[b] (the padded rows of a
 * right-padded prompt see only the entry's valid keys), and with a window
 * only the last window of them, its own included (onnxruntime 1.31's CPU
 * provider). */
static void gqa_mask_apply(void *ctx, int64_t b, int64_t h, int64_t i, float *row)
{
	const struct gqa_mask *m = ctx;
	int64_t pos = m->past[b] + i;

	(void)h;
	for (int64_t j = 0; j < m->t; j++)
		if (j > pos || j > m->seqlens[b] || (m->window > 0 && j <= pos - m->window))
			row[j] = -INFINITY;
}

/* Inputs and attributes this kernel does not implement: an error naming
 * the first one present, else 0. */
static int gqa_unsupported(struct rt_kctx *k)
{
	static const char *const ins[] = {
		[9] = "position_ids", [10] = "attention_bias", [12] = "k_scale",
		[13] = "v_scale", [14] = "q_norm_weight", [15] = "k_norm_weight",
	};
	const char *kq = rt_attr_str(k, "k_quant_type", "NONE");
	const char *vq = rt_attr_str(k, "v_quant_type", "NONE");

	for (size_t i = 9; i < sizeof(ins) / sizeof(ins[0]); i++)
		if (ins[i] && rt_in(k, i))
			return rt_err(k, "input %s is not supported", ins[i]);
	if (rt_attr_int(k, "causal", 1) != 1)
		return rt_err(k, "causal=0 is not supported");
	if (rt_attr_int(k, "sliding_window_cache", 0) != 0)
		return rt_err(k, "sliding_window_cache is not supported");
	if (rt_attr_int(k, "qk_output", 0) != 0 || rt_out_wanted(k, 3))
		return rt_err(k, "output_qk is not supported");
	if (strcmp(kq, "NONE") || strcmp(vq, "NONE"))
		return rt_err(k, "quantized key/value caches are not supported");
	return 0;
}

/* Scatter query [B, S, width] columns [off, off + h * d) to [B, S, h, d]. */
static void gqa_take(const float *x, int64_t width, int64_t off, float *out,
		     int64_t rows, int64_t hd)
{
	for (int64_t r = 0; r < rows; r++)
		memcpy(out + r * hd, x + r * width + off, (size_t)hd * sizeof(float));
}

int nq_ms_gqa(struct rt_kctx *k)
{
	struct rt_value *qv, *kv = rt_in(k, 1), *vv = rt_in(k, 2), *pk = rt_in(k, 3);
	struct rt_value *pv = rt_in(k, 4), *cv = rt_in(k, 7), *sv = rt_in(k, 8), *hs = rt_in(k, 11);
	int64_t nh = rt_attr_int(k, "num_heads", 0), kvh = rt_attr_int(k, "kv_num_heads", 0);
	int64_t b, s, d, width, total, pm = 0, p, dims[4];
	int64_t *seqlens = NULL, *past = NULL, *pos = NULL;
	float *qf = NULL, *kf = NULL, *vf = NULL, *pkf = NULL, *pvf = NULL, *cf = NULL, *sf = NULL;
	float *hsf = NULL, *q = NULL, *kn = NULL, *vn = NULL, *qh = NULL, *kh = NULL, *vh = NULL;
	float *kc = NULL, *vc = NULL, *y = NULL, *yo = NULL, *sink = NULL;
	int qo = 0, ko = 0, vo = 0, pko = 0, pvo = 0, co = 0, so = 0, ho = 0, rc, first;
	float scale = rt_attr_float(k, "scale", 0), softcap = rt_attr_float(k, "softcap", 0);
	size_t n_seq;
	struct nq_sdpa_args a = { 0 };
	struct gqa_mask m = { 0 };

	if ((rc = rt_in_tensor(k, 0, &qv)) < 0 || (rc = nq_check_float(k, qv, 0)) < 0 ||
	    (rc = gqa_unsupported(k)) < 0)
		return rc;
	if (nh <= 0 || kvh <= 0 || nh % kvh)
		return rt_err(k, "num_heads %lld must be a positive multiple of kv_num_heads %lld",
			      (long long)nh, (long long)kvh);
	if (qv->rank != 3)
		return rt_err(k, "query must be 3-D (batch, sequence, hidden)");
	if (!kv != !vv)
		return rt_err(k, "key and value must both be present, or both absent (packed QKV)");
	if (!pk != !pv)
		return rt_err(k, "past_key and past_value must both be present or both absent");
	if (!cv != !sv)
		return rt_err(k, "cos_cache and sin_cache must both be present or both absent");
	b = qv->dims[0], s = qv->dims[1], width = qv->dims[2];
	if (width % (kv ? nh : nh + 2 * kvh))
		return rt_err(k, "query's last dim %lld does not split into %lld heads",
			      (long long)width, (long long)(kv ? nh : nh + 2 * kvh));
	d = width / (kv ? nh : nh + 2 * kvh);
	if (kv && (kv->rank != 3 || vv->rank != 3 || kv->dims[0] != b || kv->dims[1] != s ||
		   kv->dims[2] != kvh * d || vv->dims[0] != b || vv->dims[1] != s ||
		   vv->dims[2] != kvh * d))
		return rt_err(k, "key and value must be (%lld, %lld, %lld)", (long long)b,
			      (long long)s, (long long)(kvh * d));
	if (pk) {
		if (pk->rank != 4 || pk->dims[0] != b || pk->dims[1] != kvh || pk->dims[3] != d ||
		    pv->rank != 4 || pv->dims[0] != b || pv->dims[1] != kvh ||
		    pv->dims[2] != pk->dims[2] || pv->dims[3] != d)
			return rt_err(k, "past_key and past_value must be (%lld, %lld, P, %lld)",
				      (long long)b, (long long)kvh, (long long)d);
		if (pk->dtype != qv->dtype || pv->dtype != qv->dtype)
			return rt_err(k, "past_key and past_value must have query's dtype");
		pm = pk->dims[2];
	}
	if ((rc = rt_in_int(k, 6, &total)) < 0 || (rc = rt_in_ints(k, 5, &seqlens, &n_seq)) < 0)
		return rc;
	if ((int64_t)n_seq != b) {
		rc = rt_err(k, "seqlens_k must have batch_size %lld elements", (long long)b);
		goto cleanup;
	}
	/* the first prompt has no past; later calls (one token, or a chunk
	 * when the batch is 1) put the new rows after seqlens_k + 1 - S */
	first = s == total;
	if (!first && s != 1 && b != 1) {
		rc = rt_err(k, "a sequence of %lld after a past needs batch_size 1", (long long)s);
		goto cleanup;
	}
	/* a past buffer holds the past (total = its rows + S) or is a static
	 * cache of at least total rows */
	if (pk && total != pm + s && total > pm) {
		rc = rt_err(k, "total_sequence_length %lld must be the past's %lld rows + %lld, "
			    "or at most %lld", (long long)total, (long long)pm, (long long)s,
			    (long long)pm);
		goto cleanup;
	}
	p = total > pm ? total : pm;
	rc = IR_ENOMEM;
	if (!(past = malloc((size_t)b * sizeof(int64_t))) ||
	    !(pos = malloc((size_t)(b * s) * sizeof(int64_t)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t bi = 0; bi < b; bi++) {
		past[bi] = first ? 0 : seqlens[bi] + 1 - s;
		if (seqlens[bi] < 0 || seqlens[bi] >= total || past[bi] < 0 || past[bi] > pm ||
		    past[bi] + s > p) {
			rc = rt_err(k, "seqlens_k[%lld] = %lld does not fit total_sequence_length "
				    "%lld, %lld new and %lld past rows", (long long)bi,
				    (long long)seqlens[bi], (long long)total, (long long)s,
				    (long long)pm);
			goto cleanup;
		}
		for (int64_t si = 0; si < s; si++)
			pos[bi * s + si] = past[bi] + si;
	}
	rc = IR_ENOMEM;
	if (!(qf = nq_f32(k, qv, &qo)) || (kv && !(kf = nq_f32(k, kv, &ko))) ||
	    (kv && !(vf = nq_f32(k, vv, &vo))) || (pk && !(pkf = nq_f32(k, pk, &pko))) ||
	    (pk && !(pvf = nq_f32(k, pv, &pvo))) || (cv && !(cf = nq_f32(k, cv, &co))) ||
	    (cv && !(sf = nq_f32(k, sv, &so))) || (hs && !(hsf = nq_f32(k, hs, &ho))))
		goto cleanup;
	if (!(q = malloc((size_t)(b * s * nh * d + 1) * sizeof(float))) ||
	    !(kn = malloc((size_t)(b * s * kvh * d + 1) * sizeof(float))) ||
	    !(vn = malloc((size_t)(b * s * kvh * d + 1) * sizeof(float))) ||
	    !(qh = malloc((size_t)(b * s * nh * d + 1) * sizeof(float))) ||
	    !(kh = malloc((size_t)(b * s * kvh * d + 1) * sizeof(float))) ||
	    !(vh = malloc((size_t)(b * s * kvh * d + 1) * sizeof(float))) ||
	    !(kc = calloc((size_t)(b * kvh * p * d + 1), sizeof(float))) ||
	    !(vc = calloc((size_t)(b * kvh * p * d + 1), sizeof(float))) ||
	    !(y = malloc((size_t)(b * s * nh * d + 1) * sizeof(float))) ||
	    !(yo = malloc((size_t)(b * s * nh * d + 1) * sizeof(float))) ||
	    !(sink = calloc((size_t)nh, sizeof(float)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	if (kv) {
		memcpy(q, qf, (size_t)(b * s * nh * d) * sizeof(float));
		memcpy(kn, kf, (size_t)(b * s * kvh * d) * sizeof(float));
		memcpy(vn, vf, (size_t)(b * s * kvh * d) * sizeof(float));
	} else {
		gqa_take(qf, width, 0, q, b * s, nh * d);
		gqa_take(qf, width, nh * d, kn, b * s, kvh * d);
		gqa_take(qf, width, (nh + kvh) * d, vn, b * s, kvh * d);
	}
	if (rt_attr_int(k, "do_rotary", 0)) {
		struct nq_rope r = { .batch = b, .seq = s, .dim = d, .pos = pos, .pos_n = b * s,
				     .cos = cf, .sin = sf,
				     .interleaved = rt_attr_int(k, "rotary_interleaved", 0) != 0 };

		if (!cv || cv->rank != 2 || sv->rank != 2 || sv->dims[0] != cv->dims[0] ||
		    sv->dims[1] != cv->dims[1] || 2 * cv->dims[1] > d) {
			rc = rt_err(k, "do_rotary needs 2-D cos_cache and sin_cache of (rows, at most "
				    "%lld)", (long long)(d / 2));
			goto cleanup;
		}
		r.cache_w = cv->dims[1], r.rot = 2 * cv->dims[1];
		if ((rc = nq_rope_check(k, &r, cv->dims[0])) < 0)
			goto cleanup;
		r.heads = nh, r.sh = d, r.ss = nh * d, r.sb = s * nh * d;
		nq_rotary(&r, q, q);
		r.heads = kvh, r.ss = kvh * d, r.sb = s * kvh * d;
		nq_rotary(&r, kn, kn);
	}
	nq_bshd_to_bhsd(q, qh, b, s, nh, d, 0);
	nq_bshd_to_bhsd(kn, kh, b, s, kvh, d, 0);
	nq_bshd_to_bhsd(vn, vh, b, s, kvh, d, 0);
	/* present: the past's first past[b] rows, the new rows, zeros after */
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t hi = 0; hi < kvh; hi++) {
			int64_t i = bi * kvh + hi;

			if (past[bi]) {
				memcpy(kc + i * p * d, pkf + i * pm * d, (size_t)(past[bi] * d) * sizeof(float));
				memcpy(vc + i * p * d, pvf + i * pm * d, (size_t)(past[bi] * d) * sizeof(float));
			}
			memcpy(kc + (i * p + past[bi]) * d, kh + i * s * d, (size_t)(s * d) * sizeof(float));
			memcpy(vc + (i * p + past[bi]) * d, vh + i * s * d, (size_t)(s * d) * sizeof(float));
		}
	if (hs) {
		if (hs->numel != nh) {
			rc = rt_err(k, "head_sink must have num_heads %lld elements", (long long)nh);
			goto cleanup;
		}
		memcpy(sink, hsf, (size_t)nh * sizeof(float));
	}
	m.past = past, m.seqlens = seqlens, m.t = p, m.window = rt_attr_int(k, "local_window_size", -1);
	a.q = qh, a.k = kc, a.v = vc, a.y = y;
	a.batch = b, a.hq = nh, a.hkv = kvh, a.sq = s, a.t = p, a.d = a.dv = d;
	a.scale = scale != 0 ? scale : (float)(1 / sqrt((double)d));
	a.softcap = softcap;
	a.bias = gqa_mask_apply, a.bias_ctx = &m;
	a.sink = hs || rt_attr_int(k, "smooth_softmax", 0) ? sink : NULL;
	if ((rc = nq_sdpa(k, &a)) < 0)
		goto cleanup;
	nq_bshd_to_bhsd(y, yo, b, s, nh, d, 1);
	dims[0] = b, dims[1] = s, dims[2] = nh * d;
	rc = IR_ENOMEM;
	if (nq_out_floats(k, 0, qv->dtype, 3, dims, yo) < 0)
		goto cleanup;
	dims[0] = b, dims[1] = kvh, dims[2] = p, dims[3] = d;
	if (nq_out_floats(k, 1, qv->dtype, 4, dims, kc) < 0 ||
	    nq_out_floats(k, 2, qv->dtype, 4, dims, vc) < 0)
		goto cleanup;
	rc = 0;
cleanup:
	nq_f32_release(qf, qo);
	nq_f32_release(kf, ko);
	nq_f32_release(vf, vo);
	nq_f32_release(pkf, pko);
	nq_f32_release(pvf, pvo);
	nq_f32_release(cf, co);
	nq_f32_release(sf, so);
	nq_f32_release(hsf, ho);
	free(seqlens);
	free(past);
	free(pos);
	free(q);
	free(kn);
	free(vn);
	free(qh);
	free(kh);
	free(vh);
	free(kc);
	free(vc);
	free(y);
	free(yo);
	free(sink);
	return rc;
}
