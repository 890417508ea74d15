/* k_contrib.c: kernels of the contrib family, onnxruntime's com.microsoft
 * operators as ContribOperators.md defines them: SkipLayerNormalization,
 * SkipSimplifiedLayerNormalization, SimplifiedLayerNormalization,
 * FusedMatMul, RotaryEmbedding, and the
 * family table (Attention and MultiHeadAttention live in k_contrib_attn.c,
 * GroupQueryAttention in k_gqa.c;
 * the attention math and the rotation come from k_attn.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_nq.h"

/* ---- normalizations ----------------------------------------------- */

static int k_simplified_ln(struct rt_kctx *k)
{
	struct rt_value *x, *s;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &s)) < 0)
		return rc;
	return nq_layer_norm(k, x, rt_attr_int(k, "axis", -1), s, NULL,
			     rt_attr_float(k, "epsilon", 1e-5f), 1, s->dtype,
			     IR_DTYPE_FLOAT, -1, 1);
}

/* s = input + skip (broadcast over leading dims) + bias; output = LN(s)
 * (SkipLayerNormalization: gamma, beta at 3, bias at 4) or RMS(s)
 * (SkipSimplifiedLayerNormalization: gamma, bias at 3; its mean output is
 * the placeholder zeros the RMS form has, inv_std_var 1 / rms).  Output 3
 * is s. */
static int skip_norm(struct rt_kctx *k, int rms)
{
	struct rt_value *x, *skip, *gamma, *sum = NULL;
	struct rt_value *beta = rms ? NULL : rt_in(k, 3), *bias = rt_in(k, rms ? 3 : 4);
	float *xf = NULL, *kf = NULL, *bf = NULL, *sf = NULL;
	int xo = 0, ko = 0, bo = 0, rc;
	struct rt_value *tmp = NULL;
	struct ir_diag sub;
	int64_t h;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &skip)) < 0 ||
	    (rc = rt_in_tensor(k, 2, &gamma)) < 0 || (rc = nq_check_float(k, x, 0)) < 0)
		return rc;
	if (x->rank < 1)
		return rt_err(k, "input must have rank >= 1");
	h = x->dims[x->rank - 1];
	if (!skip->numel || x->numel % skip->numel || skip->dims[skip->rank - 1] != h)
		return rt_err(k, "skip of %lld elements does not broadcast to input",
			      (long long)skip->numel);
	if (bias && bias->numel != h)
		return rt_err(k, "bias must have hidden_size %lld elements", (long long)h);
	ir_diag_init(&sub);
	rc = IR_ENOMEM;
	if (!(xf = nq_f32(k, x, &xo)) || !(kf = nq_f32(k, skip, &ko)) ||
	    (bias && !(bf = nq_f32(k, bias, &bo))))
		goto cleanup;
	if (rt_tensor_new(k->mem, IR_DTYPE_FLOAT, x->rank, x->dims, &tmp, &sub) < 0) {
		rc = rt_oom(k);
		goto cleanup;
	}
	sf = tmp->data;
	for (int64_t e = 0; e < x->numel; e++)
		sf[e] = xf[e] + kf[e % skip->numel] + (bf ? bf[e % h] : 0.0f);
	if ((rc = nq_layer_norm(k, tmp, -1, gamma, beta, rt_attr_float(k, "epsilon", 1e-12f),
				rms, x->dtype, IR_DTYPE_FLOAT, 1, 2)) < 0)
		goto cleanup;
	if (rt_out_wanted(k, 3)) {
		rc = IR_ENOMEM;
		if (!(sum = rt_out_tensor(k, 3, x->dtype, x->rank, x->dims)))
			goto cleanup;
		for (int64_t e = 0; e < x->numel; e++)
			rt_store_f64(x->dtype, sum->data, e, sf[e]);
	}
	rc = 0;
cleanup:
	nq_f32_release(xf, xo);
	nq_f32_release(kf, ko);
	nq_f32_release(bf, bo);
	rt_value_unref(tmp);
	return rc;
}

static int k_skip_ln(struct rt_kctx *k)
{
	return skip_norm(k, 0);
}

static int k_skip_simplified_ln(struct rt_kctx *k)
{
	return skip_norm(k, 1);
}

/* ---- FusedMatMul -------------------------------------------------- */

/* *out = t with its first dim moved before the last (a new value), or
 * NULL when not asked or rank < 3. */
static int trans_batch(struct rt_kctx *k, struct rt_value *t, int64_t on,
		       struct rt_value **out)
{
	int perm[RT_MAX_RANK];
	struct ir_diag sub;

	*out = NULL;
	if (!on || t->rank < 3)
		return 0;
	for (int j = 0; j < t->rank - 2; j++)
		perm[j] = j + 1;
	perm[t->rank - 2] = 0;
	perm[t->rank - 1] = t->rank - 1;
	ir_diag_init(&sub);
	if (rt_tensor_transpose(k->mem, t, perm, out, &sub) < 0)
		return rt_err(k, "%s", sub.msg);
	return 0;
}

static int k_fused_matmul(struct rt_kctx *k)
{
	struct rt_value *a, *b, *y = NULL;
	int ta = rt_attr_int(k, "transA", 0) != 0, tb = rt_attr_int(k, "transB", 0) != 0;
	float alpha = rt_attr_float(k, "alpha", 1.0f);
	int64_t ad[RT_MAX_RANK], bd[RT_MAX_RANK], yd[RT_MAX_RANK], m, n, kk, kb, nbatch;
	int ar, br, yr, rank, ao = 0, bo = 0, rc;
	float *af = NULL, *bf = NULL, *yf = NULL;
	struct rt_value *tba = NULL, *tbb = NULL;

	if ((rc = rt_in_tensor(k, 0, &a)) < 0 || (rc = rt_in_tensor(k, 1, &b)) < 0 ||
	    (rc = nq_check_float(k, a, 0)) < 0)
		return rc;
	if (a->rank < 1 || b->rank < 1)
		return rt_err(k, "inputs must have rank >= 1");
	/* transBatch: [d0, d1, .., dn-2, dn-1] is read as [d1, .., dn-2, d0, dn-1] */
	if ((rc = trans_batch(k, a, rt_attr_int(k, "transBatchA", 0), &tba)) < 0 ||
	    (rc = trans_batch(k, b, rt_attr_int(k, "transBatchB", 0), &tbb)) < 0)
		goto cleanup;
	if (tba)
		a = tba;
	if (tbb)
		b = tbb;
	/* numpy matmul: a 1-D A is a row [1, K], a 1-D B a column [K, 1] */
	ar = a->rank < 2 ? 2 : a->rank;
	br = b->rank < 2 ? 2 : b->rank;
	if (a->rank == 1)
		ad[0] = 1, ad[1] = a->dims[0], ta = 0;
	else
		memcpy(ad, a->dims, (size_t)ar * sizeof(int64_t));
	if (b->rank == 1)
		bd[0] = b->dims[0], bd[1] = 1, tb = 0;
	else
		memcpy(bd, b->dims, (size_t)br * sizeof(int64_t));
	m = ta ? ad[ar - 1] : ad[ar - 2];
	kk = ta ? ad[ar - 2] : ad[ar - 1];
	kb = tb ? bd[br - 1] : bd[br - 2];
	n = tb ? bd[br - 2] : bd[br - 1];
	if (kk != kb) {
		rc = rt_err(k, "inner dimensions differ: %lld and %lld", (long long)kk,
			    (long long)kb);
		goto cleanup;
	}
	rank = ar > br ? ar : br;
	for (int j = 0; j < rank - 2; j++) {
		int ja = j - (rank - ar), jb = j - (rank - br);
		int64_t da = ja >= 0 ? ad[ja] : 1, db = jb >= 0 ? bd[jb] : 1;

		if (da != db && da != 1 && db != 1) {
			rc = rt_err(k, "batch dims %lld and %lld do not broadcast",
				    (long long)da, (long long)db);
			goto cleanup;
		}
		yd[j] = da == 1 ? db : da;
	}
	nbatch = rt_numel(rank - 2, yd);
	yr = 0;
	{
		int64_t od[RT_MAX_RANK];

		for (int j = 0; j < rank - 2; j++)
			od[yr++] = yd[j];
		if (a->rank > 1)
			od[yr++] = m;
		if (b->rank > 1)
			od[yr++] = n;
		if (!(y = rt_out_tensor(k, 0, a->dtype, yr, od))) {
			rc = IR_ENOMEM;
			goto cleanup;
		}
	}
	rc = IR_ENOMEM;
	if (!(af = nq_f32(k, a, &ao)) || !(bf = nq_f32(k, b, &bo)) || !(yf = nq_out_buf(k, y)))
		goto cleanup;
	for (int64_t bi = 0; bi < nbatch; bi++) {
		int64_t oa = 0, ob = 0, rem = bi, sa = 1, sb = 1;

		/* batch offsets of A and B under broadcasting */
		for (int j = rank - 3; j >= 0; j--) {
			int ja = j - (rank - ar), jb = j - (rank - br);
			int64_t idx = rem % yd[j];

			rem /= yd[j];
			if (ja >= 0) {
				if (ad[ja] != 1)
					oa += idx * sa;
				sa *= ad[ja];
			}
			if (jb >= 0) {
				if (bd[jb] != 1)
					ob += idx * sb;
				sb *= bd[jb];
			}
		}
		rt_gemm_f32(ta, tb, m, n, kk, alpha, af + oa * m * kk, ad[ar - 1],
			    bf + ob * kk * n, bd[br - 1], 0.0f, yf + bi * m * n, n);
	}
	rc = 0;
cleanup:
	if (yf)
		nq_out_done(y, yf);
	nq_f32_release(af, ao);
	nq_f32_release(bf, bo);
	rt_value_unref(tba);
	rt_value_unref(tbb);
	return rc;
}

/* ---- RotaryEmbedding (com.microsoft) ------------------------------ */

static int k_ms_rotary(struct rt_kctx *k)
{
	struct rt_value *x, *cv, *sv;
	int64_t nh = rt_attr_int(k, "num_heads", 0), rot = rt_attr_int(k, "rotary_embedding_dim", 0);
	struct nq_rope r = { .interleaved = rt_attr_int(k, "interleaved", 0) != 0 };
	int rc;
	int64_t *pos = NULL;
	size_t np = 0;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 2, &cv)) < 0 ||
	    (rc = rt_in_tensor(k, 3, &sv)) < 0 || (rc = nq_check_float(k, x, 0)) < 0)
		return rc;
	if (rt_attr_int(k, "is_packed_batching", 0))
		return rt_err(k, "is_packed_batching is not supported");
	if (cv->rank != 2 || sv->numel != cv->numel)
		return rt_err(k, "cos_cache and sin_cache must be 2-D of one shape");
	if (rot > 0 && nh <= 0)
		return rt_err(k, "rotary_embedding_dim needs num_heads");
	r.cache_w = cv->dims[1];
	r.rot = rot > 0 ? rot : 2 * r.cache_w;
	r.batch = x->dims[0];
	if (x->rank == 4) {
		/* (batch, num_heads, seq, head_size) */
		r.heads = x->dims[1], r.seq = x->dims[2], r.dim = x->dims[3];
		r.sh = r.seq * r.dim, r.ss = r.dim, r.sb = r.heads * r.seq * r.dim;
	} else if (x->rank == 3) {
		r.dim = nh > 0 ? x->dims[2] / nh : r.rot;
		if (!r.dim || x->dims[2] % r.dim)
			return rt_err(k, "head size %lld does not divide hidden size %lld",
				      (long long)r.dim, (long long)x->dims[2]);
		r.heads = x->dims[2] / r.dim, r.seq = x->dims[1];
		r.sh = r.dim, r.ss = x->dims[2], r.sb = r.seq * r.ss;
	} else {
		return rt_err(k, "input must be 3-D or 4-D");
	}
	if (r.rot > r.dim || r.rot % 2 || r.cache_w != r.rot / 2)
		return rt_err(k, "rotary dim %lld does not fit head size %lld and cache width %lld",
			      (long long)r.rot, (long long)r.dim, (long long)r.cache_w);
	if ((rc = rt_in_ints(k, 1, &pos, &np)) < 0)
		return rc;
	r.pos = pos;
	r.pos_n = (int64_t)np;
	if (np != 1 && (int64_t)np != r.batch * r.seq) {
		rc = rt_err(k, "position_ids must have 1 or batch * seq elements, not %zu", np);
		goto cleanup;
	}
	if ((rc = nq_rope_check(k, &r, cv->dims[0])) < 0)
		goto cleanup;
	rc = nq_rotary_run(k, &r, x, cv, sv);
cleanup:
	free(pos);
	return rc;
}

const struct rt_kernel rt_kernels_contrib[] = {
	{ "com.microsoft", "Attention", 1, RT_OPEN, nq_ms_attention },
	{ "com.microsoft", "FusedMatMul", 1, RT_OPEN, k_fused_matmul },
	{ "com.microsoft", "GroupQueryAttention", 1, RT_OPEN, nq_ms_gqa },
	{ "com.microsoft", "MultiHeadAttention", 1, RT_OPEN, nq_ms_mha },
	{ "com.microsoft", "RotaryEmbedding", 1, RT_OPEN, k_ms_rotary },
	{ "com.microsoft", "SimplifiedLayerNormalization", 1, RT_OPEN, k_simplified_ln },
	{ "com.microsoft", "SkipLayerNormalization", 1, RT_OPEN, k_skip_ln },
	{ "com.microsoft", "SkipSimplifiedLayerNormalization", 1, RT_OPEN, k_skip_simplified_ln },
};
const size_t rt_n_kernels_contrib = sizeof(rt_kernels_contrib) / sizeof(rt_kernels_contrib[0]);
