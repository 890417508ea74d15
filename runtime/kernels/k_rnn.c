/* k_rnn.c: kernels of the rnn family: RNN, GRU (linear_before_reset) and
 * LSTM (peepholes, input_forget), every version: forward, reverse and
 * bidirectional, sequence_lens, initial states, layout, clip and the
 * activations list with its alpha/beta values.  One driver runs all three:
 * the input projection of every step in one product (W packed for pgemm,
 * kept for the session with R's from a node's second run, the biases its
 * column bias), then per step one product of the hidden state by R and the
 * cell's gate arithmetic (the default cells in AVX-512, a pass or two a
 * row); oneDNN's primitives instead where they were measured faster
 * (dnnl_cell, k_rnn_dnnl.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "runtime/kernels/k_conv_int.h"   /* struct knn_wcache */
#include "runtime/kernels/k_elem_int.h"
#include "runtime/kernels/k_exp512.h"
#include "runtime/kernels/k_nq.h"
#include "runtime/kernels/k_rnn_dnnl.h"
#include "runtime/kernels/pgemm.h"   /* rt_cpu_avx512f */

enum { CELL_RNN, CELL_GRU, CELL_LSTM };

enum act_kind {
	ACT_RELU, ACT_TANH, ACT_SIGMOID, ACT_AFFINE, ACT_LEAKY, ACT_THRESH,
	ACT_SCALED_TANH, ACT_HARD_SIGMOID, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS
};

static const struct {
	const char *name;
	enum act_kind kind;
	int has_alpha, has_beta;
	float alpha, beta;              /* defaults */
} acts[] = {
	{ "Affine", ACT_AFFINE, 1, 1, 1.0f, 0.0f },
	{ "Elu", ACT_ELU, 1, 0, 1.0f, 0.0f },
	{ "HardSigmoid", ACT_HARD_SIGMOID, 1, 1, 0.2f, 0.5f },
	{ "LeakyRelu", ACT_LEAKY, 1, 0, 0.01f, 0.0f },
	{ "Relu", ACT_RELU, 0, 0, 0.0f, 0.0f },
	{ "ScaledTanh", ACT_SCALED_TANH, 1, 1, 1.0f, 1.0f },
	{ "Sigmoid", ACT_SIGMOID, 0, 0, 0.0f, 0.0f },
	{ "Softplus", ACT_SOFTPLUS, 0, 0, 0.0f, 0.0f },
	{ "Softsign", ACT_SOFTSIGN, 0, 0, 0.0f, 0.0f },
	{ "Tanh", ACT_TANH, 0, 0, 0.0f, 0.0f },
	{ "ThresholdedRelu", ACT_THRESH, 1, 0, 1.0f, 0.0f },
};

struct act {
	enum act_kind kind;
	float alpha, beta;
};

static float act_apply(const struct act *a, float x)
{
	switch (a->kind) {
	case ACT_RELU: return x > 0 ? x : 0;
	case ACT_TANH: return tanhf(x);
	case ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
	case ACT_AFFINE: return a->alpha * x + a->beta;
	case ACT_LEAKY: return x >= 0 ? x : a->alpha * x;
	case ACT_THRESH: return x > a->alpha ? x : 0;
	case ACT_SCALED_TANH: return a->alpha * tanhf(a->beta * x);
	case ACT_HARD_SIGMOID: {
		float v = a->alpha * x + a->beta;

		return v < 0 ? 0 : v > 1 ? 1 : v;
	}
	case ACT_ELU: return x >= 0 ? x : a->alpha * (expf(x) - 1);
	case ACT_SOFTSIGN: return x / (1 + fabsf(x));
	case ACT_SOFTPLUS: return x > 20 ? x : log1pf(expf(x));
	}
	return x;
}

struct rnn {
	int cell;
	int64_t seq, batch, in, hid, ndir, g;   /* g: gates (1, 3, 4) */
	int reverse, layout, lbr, input_forget, has_clip;
	float clip;
	struct act act[2][3];
	const float *x;                          /* [seq, batch, in] */
	const float *w, *r, *b, *p;              /* b, p may be NULL */
	const int64_t *lens;                     /* [batch] */
	const float *h0, *c0;                    /* [ndir, batch, hid] or NULL */
	float *y, *yh, *yc;                      /* [seq, ndir, batch, hid], ... */
	const struct rpack *kept;                /* R packed for the session */
};

/* The activations attribute, alpha/beta lists consumed in order by the
 * activations that take them; defaults per cell kind. */
static int parse_acts(struct rt_kctx *k, struct rnn *s)
{
	static const char *const dflt[3][3] = {
		{ "Tanh" }, { "Sigmoid", "Tanh" }, { "Sigmoid", "Tanh", "Tanh" }
	};
	const struct ir_attr *a = rt_attr(k, "activations");
	size_t per = s->cell == CELL_RNN ? 1 : s->cell == CELL_GRU ? 2 : 3;
	size_t na = 0, nb = 0, ia = 0, ib = 0, n;
	const float *al = rt_attr_floats(k, "activation_alpha", &na);
	const float *be = rt_attr_floats(k, "activation_beta", &nb);

	n = a && a->n_strings ? a->n_strings : per;
	if (n != per && n != per * (size_t)s->ndir)
		return rt_err(k, "activations lists %zu functions, expected %zu", n,
			      per * (size_t)s->ndir);
	for (size_t i = 0; i < per * (size_t)s->ndir; i++) {
		size_t j = i % n, t;
		const char *name = a && a->n_strings ? (const char *)a->strings[j] : dflt[s->cell][j];
		size_t len = a && a->n_strings ? a->string_lens[j] : strlen(name);
		struct act *o = &s->act[i / per][i % per];

		for (t = 0; t < sizeof(acts) / sizeof(acts[0]); t++)
			if (strlen(acts[t].name) == len && !strncasecmp(acts[t].name, name, len))
				break;
		if (t == sizeof(acts) / sizeof(acts[0]))
			return rt_err(k, "unsupported activation '%.*s'", (int)len, name);
		o->kind = acts[t].kind;
		o->alpha = acts[t].alpha;
		o->beta = acts[t].beta;
		/* a repeated list (n == per) reuses its values too */
		if (j == 0 && i)
			ia = ib = 0;
		if (acts[t].has_alpha && ia < na)
			o->alpha = al[ia++];
		if (acts[t].has_beta && ib < nb)
			o->beta = be[ib++];
	}
	return 0;
}

static inline float clipped(const struct rnn *s, float v)
{
	if (s->has_clip)
		return v < -s->clip ? -s->clip : v > s->clip ? s->clip : v;
	return v;
}

/* ---- the default cells sixteen lanes at a time ----------------------- */

/* Is direction d an LSTM or GRU of the default activations (LSTM:
 * Sigmoid, Tanh, Tanh without peepholes or input_forget; GRU: Sigmoid,
 * Tanh)?  (oneDNN's cells too: dnnl_cell) */
static int default_cell(const struct rnn *s, int d)
{
	const struct act *a = s->act[d];

	if (a[0].kind != ACT_SIGMOID || a[1].kind != ACT_TANH)
		return 0;
	if (s->cell == CELL_LSTM)
		return a[2].kind == ACT_TANH && !s->p && !s->input_forget;
	return s->cell == CELL_GRU;
}

/* Does direction d use the default activations, which vec_lstm and
 * run_dir's GRU rows compute in AVX-512 (k_act512.c: a few ulp from
 * libm's), on a CPU that has it? */
static int vec_cell(const struct rnn *s, int d)
{
	return rt_cpu_avx512f() && default_cell(s, d);
}

/* clip(x + y) of sixteen lanes (no clip: x + y) */
__attribute__((target("avx512f"), always_inline))
static inline __m512 sum512(const struct rnn *s, __m512 x, __m512 y)
{
	__m512 v = _mm512_add_ps(x, y);

	/* (max and min give their second operand where one is NaN: a NaN
	 * sum stays NaN, as in clipped) */
	if (s->has_clip)
		v = _mm512_min_ps(_mm512_set1_ps(s->clip),
				  _mm512_max_ps(_mm512_set1_ps(-s->clip), v));
	return v;
}

/* One LSTM row: gates i, o, f, c of hid each, gx (the input's part) plus
 * hr (the hidden state's); its new cell state into cn and hidden state
 * into hn, sixteen units at a time in one pass (the same operations, so
 * the same bits, as sigmoid and tanh over each gate's span: k_act512.c) */
__attribute__((target("avx512f")))
static void vec_lstm(const struct rnn *s, const float *gx, const float *hr, const float *c,
		     float *cn, float *hn)
{
	int64_t hid = s->hid;

	for (int64_t j = 0; j < hid; j += 16) {
		__mmask16 m = knn_lanes16(hid - j);
#define GATE(q) sum512(s, _mm512_maskz_loadu_ps(m, gx + (q) * hid + j), \
		       _mm512_maskz_loadu_ps(m, hr + (q) * hid + j))
		__m512 i = knn_sigmoid512(GATE(0)), o = knn_sigmoid512(GATE(1));
		__m512 f = knn_sigmoid512(GATE(2)), g = knn_tanh512(GATE(3));
#undef GATE
		__m512 cv = _mm512_add_ps(_mm512_mul_ps(f, _mm512_maskz_loadu_ps(m, c + j)),
					  _mm512_mul_ps(i, g));

		_mm512_mask_storeu_ps(cn + j, m, cv);
		_mm512_mask_storeu_ps(hn + j, m, _mm512_mul_ps(knn_tanh512(cv), o));
	}
}

/* A GRU row's z and r gates, sigmoid(clip(gx + hr)) of their 2 hid
 * values, into zr */
__attribute__((target("avx512f")))
static void vec_gru_zr(const struct rnn *s, const float *gx, const float *hr, float *zr)
{
	for (int64_t j = 0; j < 2 * s->hid; j += 16) {
		__mmask16 m = knn_lanes16(2 * s->hid - j);

		_mm512_mask_storeu_ps(zr + j, m, knn_sigmoid512(sum512(s, _mm512_maskz_loadu_ps(m, gx + j),
								      _mm512_maskz_loadu_ps(m, hr + j))));
	}
}

/* A GRU row's new hidden state into hn: (1 - z) tanh(clip(pre)) + z h,
 * pre = gx's h gate + r (hrh + rbh) with linear_before_reset (rbh NULL:
 * + 0), else + hrh (the product of r . H); z and r in zr.  The operations
 * of the scalar loop and tanh over the row before, so the same bits. */
__attribute__((target("avx512f")))
static void vec_gru_h(const struct rnn *s, const float *gx, const float *zr, const float *hrh,
		      const float *rbh, const float *h, float *hn)
{
	int64_t hid = s->hid;

	for (int64_t j = 0; j < hid; j += 16) {
		__mmask16 m = knn_lanes16(hid - j);
		__m512 z = _mm512_maskz_loadu_ps(m, zr + j), x = _mm512_maskz_loadu_ps(m, gx + 2 * hid + j);
		__m512 hh = _mm512_maskz_loadu_ps(m, hrh + j), v;

		if (s->lbr)
			hh = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, zr + hid + j),
					   _mm512_add_ps(hh, rbh ? _mm512_maskz_loadu_ps(m, rbh + j) :
							       _mm512_setzero_ps()));
		v = knn_tanh512(sum512(s, x, hh));
		v = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(_mm512_set1_ps(1.0f), z), v),
				  _mm512_mul_ps(z, _mm512_maskz_loadu_ps(m, h + j)));
		_mm512_mask_storeu_ps(hn + j, m, v);
	}
}

/* The products by R (and GRU's Rh) of a batch of rows: OpenBLAS would
 * copy R into its packed layout at every step (63% of a batch-4 LSTM's
 * time), so R^T is packed once for pgemm (pgemm.h), also for one row
 * (OpenBLAS's gemv of R as it is took 16-19% longer over a speech
 * encoder's steps); the gemv where the CPU lacks AVX-512. */
#define RPROD_SPLIT 65536.0   /* products a step worth two threads */
#define RP_TILE_ROWS RT_PG_MR /* rows a tile of the micro-kernel takes */

struct rprod {
	float *pr, *prh;     /* packed R^T and Rh^T, or NULL */
	float *pw;           /* packed W^T (the input projection), or NULL */
};

/* Columns of the product by R: a GRU without linear_before_reset takes
 * its h gate's by (r . H) Rh^T, so only z and r come from H R^T. */
static int64_t r_cols(const struct rnn *s)
{
	return s->cell == CELL_GRU && !s->lbr ? 2 * s->hid : s->g * s->hid;
}

/* Every direction's rprod of a constant R (and W, when constant too),
 * kept in the node's cache from its second run (a new 2.4 MB block a run
 * for a 384-wide LSTM came as fresh pages: 10% of a batch-4 model's time
 * in the kernel's page clearing; OpenBLAS packed W again at every run: 4%
 * of a two-layer LSTM's, and a float16 node's W and R converted each run
 * are not needed at all once packed) */
struct rpack {
	struct knn_wcache h;   /* KNN_WC_RPACK (the node's cache may hold k_rnn_dnnl.c's) */
	int64_t ndir, g, hid, in;
	int lbr, has_w;        /* has_w: every direction's pw made */
	struct rprod d[2];
};

static void rpack_free(void *p)
{
	struct rpack *q = p;

	for (int d = 0; q && d < 2; d++) {
		free(q->d[d].pr);
		free(q->d[d].prh);
		free(q->d[d].pw);
	}
	free(q);
}

/* rm (n x kd)^T packed into a new 64-byte aligned block (the kernel's
 * loads), or NULL */
static float *packed_t(const float *rm, int64_t n, int64_t kd)
{
	size_t len = (size_t)rt_pgemm_packed_len(kd, n) * sizeof(float);
	float *p = aligned_alloc(64, (len + 127) / 64 * 64);   /* a multiple of 64 */

	if (p)
		rt_pgemm_pack(rm, 1, kd, kd, n, p);
	return p;
}

/* Direction d's packs of R (and of W when w is not NULL) into q: 0, or -1
 * when memory ran out; nothing packed where pgemm does not run. */
static int rprod_init(const struct rnn *s, const float *r, const float *w, struct rprod *q)
{
	int64_t hid = s->hid;

	q->pr = q->prh = q->pw = NULL;
	if (!rt_pgemm_ok())
		return 0;
	if (!(q->pr = packed_t(r, r_cols(s), hid)))
		return -1;
	if (s->cell == CELL_GRU && !s->lbr && !(q->prh = packed_t(r + 2 * hid * hid, hid, hid)))
		return -1;
	if (w && !(q->pw = packed_t(w, s->g * hid, s->in)))
		return -1;
	return 0;
}

struct rp_job {
	const struct rnn *s;
	const float *p, *a, *tile;   /* tile: a as the micro-kernel's A, or NULL */
	float *c;
	int64_t n, ldc;
	int back, failed;            /* back: the tile's panels from the last */
};

/* RT_PG_WIDE panels of packed R^T from panel p, of one to three rows */
static void rp_wide(const struct rp_job *j, int64_t p)
{
	int64_t last = (p + RT_PG_WIDE - 1) * RT_PG_NR, hid = j->s->hid;

	rt_pgemm_k512_wide((int)j->s->batch, (int)(j->n - last < RT_PG_NR ? j->n - last : RT_PG_NR),
			   hid, j->tile, j->p + p * RT_PG_NR * hid, RT_PG_NR * hid,
			   j->c + p * RT_PG_NR, j->ldc, 1, NULL);
}

/* Panel p of packed R^T */
static void rp_one(const struct rp_job *j, int64_t p)
{
	int64_t hid = j->s->hid;

	rt_pgemm_k512((int)j->s->batch, (int)(j->n - p * RT_PG_NR < RT_PG_NR ?
					      j->n - p * RT_PG_NR : RT_PG_NR),
		      hid, j->tile, j->p + p * RT_PG_NR * hid, j->c + p * RT_PG_NR, j->ldc, 1, NULL,
		      0);
}

/* Panels [lo, hi) of packed R^T (their columns of c) */
static void rp_panels(void *ctx, int64_t lo, int64_t hi)
{
	struct rp_job *j = ctx;
	int64_t j0 = lo * RT_PG_NR, j1 = hi * RT_PG_NR < j->n ? hi * RT_PG_NR : j->n;
	int64_t p = lo;

	/* up to a tile's rows: straight to the micro-kernels, all of k at
	 * once, one to three rows four panels at a time (pgemm's loops cost a
	 * block's allocation and a tile's packing, its unused rows zeroed, at
	 * every step: a tenth of a step's time; a batch-4 GRU of 128 0.65 ->
	 * 0.59 ms) */
	if (j->tile && j->back) {   /* from the last panel back */
		int64_t q = hi;

		for (; j->s->batch <= 3 && q - RT_PG_WIDE >= lo; q -= RT_PG_WIDE)
			rp_wide(j, q - RT_PG_WIDE);
		for (; q > lo; q--)
			rp_one(j, q - 1);
		return;
	}
	for (; j->tile && j->s->batch <= 3 && p + RT_PG_WIDE <= hi; p += RT_PG_WIDE)
		rp_wide(j, p);
	for (; j->tile && p < hi; p++)
		rp_one(j, p);
	if (j->tile)
		return;

	if (rt_pgemm_run_rows(NULL, j->s->batch, j1 - j0, j->s->hid, j->a, j->s->hid,
			      j->p + j0 * j->s->hid, NULL, j->c + j0, j->ldc) < 0)
		j->failed = 1;
}

/* Are q's packs those of s's shapes?  (W, R and B are the node's
 * constants: the same values every run) */
static int rpack_fits(const struct rpack *q, const struct rnn *s)
{
	return q->h.kind == KNN_WC_RPACK && q->ndir == s->ndir && q->g == s->g &&
	       q->hid == s->hid && q->in == s->in && q->lbr == s->lbr;
}

/* The node's kept packs of R when they fit s (NULL else), made now when
 * worth keeping. */
static const struct rpack *rpack_kept(struct rt_kctx *k, const struct rnn *s)
{
	struct rpack *q = rt_node_cache(k);
	int64_t bytes = 0, gh = s->g * s->hid;
	int has_w = rt_in_const(k, 1);
	struct rt_share_key key;

	if (q)
		return rpack_fits(q, s) ? q : NULL;
	if (!rt_pgemm_ok() || !rt_in_const(k, 2))
		return NULL;
	/* another node's packs of the same R and W: an unrolled decoder's
	 * one-step LSTMs (a copy each: 10x the packed bytes every run reads) */
	key = (struct rt_share_key){ KNN_WC_RPACK, { s->r, has_w ? s->w : NULL, NULL },
				     { s->ndir, s->g, s->hid, s->in, s->lbr, has_w } };
	if ((q = rt_node_cache_shared(k, &key)))
		return rpack_fits(q, s) ? q : NULL;
	bytes = s->ndir * (rt_pgemm_packed_len(s->hid, r_cols(s)) +
			   (s->cell == CELL_GRU && !s->lbr ? rt_pgemm_packed_len(s->hid, s->hid) : 0) +
			   (has_w ? rt_pgemm_packed_len(s->in, gh) : 0)) *
		(int64_t)sizeof(float);
	if (!rt_node_cache_worth(k, bytes) || !(q = calloc(1, sizeof(*q))))
		return NULL;
	*q = (struct rpack){ { KNN_WC_RPACK, NULL }, s->ndir, s->g, s->hid, s->in, s->lbr, has_w,
			     { { NULL, NULL, NULL }, { NULL, NULL, NULL } } };
	for (int d = 0; d < s->ndir; d++)
		if (rprod_init(s, s->r + d * gh * s->hid, has_w ? s->w + d * gh * s->in : NULL,
			       &q->d[d]) < 0 || !q->d[d].pr) {
			rpack_free(q);
			return NULL;
		}
	if (rt_node_cache_set_shared(k, q, rpack_free, bytes, &key) < 0) {
		rpack_free(q);
		return NULL;
	}
	return q;
}

/* A core's L2 in bytes (1 MiB where the system does not say) */
static int64_t l2_bytes(void)
{
	static int64_t l2;

	if (!l2) {
		long v = sysconf(_SC_LEVEL2_CACHE_SIZE);

		l2 = v > 0 ? v : 1 << 20;
	}
	return l2;
}

/* Does a thread's share of the n columns of R^T outgrow its L2 (past
 * three quarters of it)?  Then each step's product reads it from L3,
 * where read in one order every step it leaves none of itself in L2 for
 * the next; read from the last panel back every other step, the panels
 * read last are still there (a batch-4 LSTM of 384, R 2.4 MB: 4.2 -> 3.5
 * ms at one thread; an R of 1 MB, in L2: 5% slower, so not there).  Its
 * share: all of it where a bidirectional node's directions run side by
 * side (run_dirs), else its threads' part of a split product. */
static int r_past_l2(struct rt_kctx *k, const struct rnn *s, int64_t n)
{
	int64_t bytes = (n + RT_PG_NR - 1) / RT_PG_NR * RT_PG_NR * s->hid * (int64_t)sizeof(float);
	int split = rt_threads(k) > 1 && s->ndir == 1 && (double)s->batch * n * s->hid >= RPROD_SPLIT;

	return bytes / (split ? rt_threads(k) : 1) > l2_bytes() / 4 * 3;
}

/* c (nb x n, ldc) = a (nb x hid) * rm^T, rm n x hid (packed in p when
 * not NULL); split over the session's threads from 64K products a step
 * (a 1024 x 256 R: two halves of 130 KMAC), below pgemm's own bound. */
static int rprod_run(struct rt_kctx *k, const struct rnn *s, const float *p, const float *rm,
		     int64_t n, const float *a, float *tile, int back, float *c, int64_t ldc)
{
	if (p) {
		struct rp_job j = { s, p, a, NULL, c, n, ldc, 0, 0 };

		j.back = back && r_past_l2(k, s, n);

		if (s->batch <= RP_TILE_ROWS) {   /* A(i, st) at tile[st * RT_PG_MR + i] */
			for (int64_t i = 0; i < s->batch; i++)
				for (int64_t st = 0; st < s->hid; st++)
					tile[st * RT_PG_MR + i] = a[i * s->hid + st];
			j.tile = tile;
		}

		if (rt_threads(k) > 1 && (double)s->batch * n * s->hid >= RPROD_SPLIT)
			rt_parallel_for(k, (n + RT_PG_NR - 1) / RT_PG_NR, 1, rp_panels, &j);
		else
			rp_panels(&j, 0, (n + RT_PG_NR - 1) / RT_PG_NR);
		return j.failed ? -1 : 0;
	}
	rt_gemm_f32_split(k, RPROD_SPLIT, 0, 1, s->batch, n, s->hid, 1.0f, a, s->hid, rm, s->hid,
			  0.0f, c, ldc);
	return 0;
}

/* xw (seq*batch x gh) = X W^T + Wb + Rb of direction d (a GRU with
 * linear_before_reset: Rbh not in it) on pgemm, W packed as kept or for
 * this run: 0, or -1 when memory ran out.  Split over the session's
 * threads unless each direction runs on its own (run_dirs). */
static int project(struct rt_kctx *k, const struct rnn *s, int d, float *xw)
{
	int64_t gh = s->g * s->hid, rows = s->seq * s->batch;
	const float *w = s->w ? s->w + d * gh * s->in : NULL;
	const float *b = s->b ? s->b + d * 2 * gh : NULL, *pw = s->kept ? s->kept->d[d].pw : NULL;
	float *bias = NULL, *own = NULL;
	int rc = -1;

	if (b) {
		if (!(bias = malloc((size_t)gh * sizeof(float))))
			goto cleanup;
		for (int64_t j = 0; j < gh; j++)
			bias[j] = b[j] + (s->cell == CELL_GRU && s->lbr && j >= 2 * s->hid ? 0 : b[gh + j]);
	}
	if (!pw && rt_pgemm_ok() && !(pw = own = packed_t(w, gh, s->in)))
		goto cleanup;
	if (pw) {
		if (rt_pgemm_run_rows(k, rows, gh, s->in, s->x, s->in, pw, bias, xw, gh) < 0)
			goto cleanup;
	} else {
		rt_gemm_f32(0, 1, rows, gh, s->in, 1.0f, s->x, s->in, w, s->in, 0.0f, xw, gh);
		for (int64_t i = 0; bias && i < rows; i++)
			for (int64_t j = 0; j < gh; j++)
				xw[i * gh + j] += bias[j];
	}
	rc = 0;
cleanup:
	free(bias);
	free(own);
	return rc;
}

/* The time step a row bi of a direction (reverse when rev) is at in
 * its step st (st below its length) */
static inline int64_t step_t(const struct rnn *s, int rev, int64_t bi, int64_t st)
{
	return rev ? s->lens[bi] - 1 - st : st;
}

/* One direction d over the whole sequence. */
static int run_dir(struct rt_kctx *k, struct rnn *s, int d)
{
	int64_t gh = s->g * s->hid, nb = s->batch, hid = s->hid, rn = r_cols(s);
	const float *r = s->r ? s->r + d * gh * hid : NULL;
	const float *b = s->b ? s->b + d * 2 * gh : NULL;
	const float *p = s->p ? s->p + d * 3 * hid : NULL;
	const struct act *af = &s->act[d][0], *ag = &s->act[d][1], *ah = &s->act[d][2];
	int rev = s->ndir == 2 ? d == 1 : s->reverse, vec = vec_cell(s, d);
	float *xw = NULL, *gates = NULL, *hr = NULL, *h = NULL, *c = NULL, *hn = NULL, *cn = NULL;
	float *tile = NULL;
	struct rprod rp = { NULL, NULL, NULL };
	int64_t rows = s->seq * nb;
	int rc = IR_ENOMEM;

	if (!(xw = malloc((size_t)(rows * gh + 1) * sizeof(float))) ||
	    !(gates = calloc((size_t)(nb * gh + 1), sizeof(float))) ||
	    !(hr = malloc((size_t)(nb * gh + 1) * sizeof(float))) ||
	    !(tile = calloc((size_t)(hid * RT_PG_MR + 1), sizeof(float))) ||
	    !(h = calloc((size_t)(nb * hid + 1), sizeof(float))) ||
	    !(c = calloc((size_t)(nb * hid + 1), sizeof(float))) ||
	    !(hn = malloc((size_t)(nb * hid + 1) * sizeof(float))) ||
	    !(cn = malloc((size_t)(nb * hid + 1) * sizeof(float))) ||
	    (!s->kept && rprod_init(s, r, NULL, &rp) < 0) || project(k, s, d, xw) < 0) {
		rc = rt_oom(k);
		goto cleanup;
	}
	if (s->h0)
		memcpy(h, s->h0 + d * nb * hid, (size_t)(nb * hid) * sizeof(float));
	if (s->c0)
		memcpy(c, s->c0 + d * nb * hid, (size_t)(nb * hid) * sizeof(float));
	for (int64_t st = 0; st < s->seq; st++) {
		for (int64_t bi = 0; bi < nb && !vec; bi++) {   /* (vec: read in xw) */
			int64_t t = rev ? s->lens[bi] - 1 - st : st;

			if (st < s->lens[bi])
				memcpy(gates + bi * gh, xw + (t * nb + bi) * gh,
				       (size_t)gh * sizeof(float));
			else
				memset(gates + bi * gh, 0, (size_t)gh * sizeof(float));
		}
		/* hr = H R^T */
		if (rprod_run(k, s, s->kept ? s->kept->d[d].pr : rp.pr, r, rn, h, tile, (int)(st & 1), hr, gh) < 0) {
			rc = rt_oom(k);
			goto cleanup;
		}
		for (int64_t bi = 0; bi < nb; bi++) {
			float *gt = gates + bi * gh, *hrb = hr + bi * gh;
			const float *cp = c + bi * hid;

			if (st >= s->lens[bi])
				continue;
			if (vec && s->cell == CELL_LSTM) {   /* its gates read in xw */
				vec_lstm(s, xw + (step_t(s, rev, bi, st) * nb + bi) * gh, hrb, cp,
					 cn + bi * hid, hn + bi * hid);
				continue;
			}
			if (vec) {   /* GRU: z and r into gt */
				vec_gru_zr(s, xw + (step_t(s, rev, bi, st) * nb + bi) * gh, hrb, gt);
				continue;
			}
			for (int64_t j = 0; j < hid; j++) {
				float *o = hn + bi * hid + j;

				if (s->cell == CELL_RNN) {
					*o = act_apply(af, clipped(s, gt[j] + hrb[j]));
				} else if (s->cell == CELL_LSTM) {
					float cprev = cp[j];
					float gi = gt[j] + hrb[j], go = gt[hid + j] + hrb[hid + j];
					float gf = gt[2 * hid + j] + hrb[2 * hid + j];
					float gc = gt[3 * hid + j] + hrb[3 * hid + j];
					float ii, ff, cc, oo, cnew;

					if (p) {
						gi += p[j] * cprev;
						gf += p[2 * hid + j] * cprev;
					}
					ii = act_apply(af, clipped(s, gi));
					ff = s->input_forget ? 1 - ii : act_apply(af, clipped(s, gf));
					cc = act_apply(ag, clipped(s, gc));
					cnew = ff * cprev + ii * cc;
					if (p)
						go += p[hid + j] * cnew;
					oo = act_apply(af, clipped(s, go));
					cn[bi * hid + j] = cnew;
					*o = oo * act_apply(ah, cnew);
				} else {
					float z = act_apply(af, clipped(s, gt[j] + hrb[j]));
					float rr = act_apply(af, clipped(s, gt[hid + j] + hrb[hid + j]));

					/* keep r in gt's r slot for the reset product */
					gt[hid + j] = rr;
					gt[j] = z;
				}
			}
		}
		if (s->cell == CELL_GRU) {
			const float *rh = r ? r + 2 * hid * hid : NULL;

			if (!s->lbr) {
				/* (r . H) Rh^T into hr's h slot */
				for (int64_t bi = 0; bi < nb; bi++)
					for (int64_t j = 0; j < hid; j++)
						cn[bi * hid + j] = gates[bi * gh + hid + j] * h[bi * hid + j];
				if (rprod_run(k, s, s->kept ? s->kept->d[d].prh : rp.prh, rh, hid,
					      cn, tile, (int)(st & 1), hr + 2 * hid, gh) < 0) {
					rc = rt_oom(k);
					goto cleanup;
				}
			}
			for (int64_t bi = 0; bi < nb; bi++) {
				const float *gt = gates + bi * gh, *hrb = hr + bi * gh;

				if (st >= s->lens[bi])
					continue;
				if (vec) {
					vec_gru_h(s, xw + (step_t(s, rev, bi, st) * nb + bi) * gh, gt,
						  hrb + 2 * hid, s->lbr && b ? b + gh + 2 * hid : NULL,
						  h + bi * hid, hn + bi * hid);
					continue;
				}
				for (int64_t j = 0; j < hid; j++) {
					float z = gt[j], rr = gt[hid + j], pre;

					if (s->lbr)
						pre = gt[2 * hid + j] + rr * (hrb[2 * hid + j] +
									(b ? b[gh + 2 * hid + j] : 0));
					else
						pre = gt[2 * hid + j] + hrb[2 * hid + j];
					hn[bi * hid + j] = (1 - z) * act_apply(ag, clipped(s, pre)) +
							   z * h[bi * hid + j];
				}
			}
		}
		for (int64_t bi = 0; bi < nb; bi++) {
			int64_t t = rev ? s->lens[bi] - 1 - st : st;

			if (st >= s->lens[bi])
				continue;
			memcpy(h + bi * hid, hn + bi * hid, (size_t)hid * sizeof(float));
			if (s->cell == CELL_LSTM)
				memcpy(c + bi * hid, cn + bi * hid, (size_t)hid * sizeof(float));
			memcpy(s->y + ((t * s->ndir + d) * nb + bi) * hid, hn + bi * hid,
			       (size_t)hid * sizeof(float));
		}
	}
	memcpy(s->yh + d * nb * hid, h, (size_t)(nb * hid) * sizeof(float));
	if (s->yc)
		memcpy(s->yc + d * nb * hid, c, (size_t)(nb * hid) * sizeof(float));
	rc = 0;
cleanup:
	free(xw);
	free(gates);
	free(hr);
	free(h);
	free(c);
	free(hn);
	free(cn);
	free(tile);
	free(rp.pr);
	free(rp.prh);
	return rc;
}

/* Input i as float32 of exactly n elements (read only; its own copy when
 * *owned: nq_f32_release), or NULL when absent (*ok = 1), or on error
 * (*ok = 0).  (Weights are read in place: a copy of a speech encoder's
 * W and R each run was 8% of its time.) */
static float *param(struct rt_kctx *k, size_t i, int64_t n, const char *what, int *ok,
		    int *owned)
{
	struct rt_value *t = rt_in(k, i);
	float *p;

	*ok = 1;
	*owned = 0;
	if (!t)
		return NULL;
	*ok = 0;
	if (t->kind != RT_TENSOR || t->numel != n) {
		rt_err(k, "%s has %lld elements, expected %lld", what,
		       t->kind == RT_TENSOR ? (long long)t->numel : -1LL, (long long)n);
		return NULL;
	}
	if (!(p = nq_f32(k, t, owned)))
		return NULL;
	*ok = 1;
	return p;
}

/* [a, b, c] <-> [b, a, c] copy (layout 1 <-> 0). */
static void swap01(const float *src, float *dst, int64_t a, int64_t b, int64_t c)
{
	for (int64_t i = 0; i < a; i++)
		for (int64_t j = 0; j < b; j++)
			memcpy(dst + (j * a + i) * c, src + (i * b + j) * c, (size_t)c * sizeof(float));
}

/* A state of layout 1, [batch, ndir, hid], as [ndir, batch, hid] in a
 * buffer of its own (*st released and replaced), 0; or -1. */
static int state_swap(const struct rnn *s, float **st, int *owned)
{
	float *t = malloc((size_t)(s->ndir * s->batch * s->hid + 1) * sizeof(float));

	if (!t)
		return -1;
	swap01(*st, t, s->batch, s->ndir, s->hid);
	nq_f32_release(*st, *owned);
	*st = t;
	*owned = 1;
	return 0;
}

/* Store a state [ndir, batch, hid] as output i in the node's layout. */
static int state_out(struct rt_kctx *k, size_t i, const struct rnn *s, int dtype,
		     const float *v)
{
	int64_t dims[3] = { s->ndir, s->batch, s->hid };
	struct rt_value *o;
	float *buf;

	if (!rt_out_wanted(k, i))
		return 0;
	if (s->layout) {
		dims[0] = s->batch;
		dims[1] = s->ndir;
	}
	if (!(o = rt_out_tensor(k, i, dtype, 3, dims)) || !(buf = nq_out_buf(k, o)))
		return IR_ENOMEM;
	if (s->layout)
		swap01(v, buf, s->ndir, s->batch, s->hid);
	else
		memcpy(buf, v, (size_t)o->numel * sizeof(float));
	nq_out_done(o, buf);
	return 0;
}

struct dirs_job {
	struct rt_kctx *k;
	struct rnn *s;
	int rc[2];
};

static void dirs_range(void *ctx, int64_t lo, int64_t hi)
{
	struct dirs_job *j = ctx;

	for (int64_t d = lo; d < hi; d++)
		j->rc[d] = run_dir(j->k, j->s, (int)d);
}

/* Every direction: a bidirectional node's two side by side on two
 * threads, each one's products then on its own thread and its R in its
 * own CPU's L2, with no hand-off at every step (demucs_like's two-layer
 * bidirectional LSTM of 256 over 62 steps: the model 7.8 -> 5.9 ms at two
 * threads); else one after the other. */
static int run_dirs(struct rt_kctx *k, struct rnn *s)
{
	struct dirs_job j = { k, s, { 0, 0 } };

	if (s->ndir == 2 && rt_threads(k) > 1) {
		rt_parallel_for(k, 2, 1, dirs_range, &j);
		return j.rc[0] < 0 ? j.rc[0] : j.rc[1];
	}
	dirs_range(&j, 0, s->ndir);
	return j.rc[0] < 0 ? j.rc[0] : j.rc[1];
}

/* The whole node on oneDNN (k_rnn_dnnl.c) where it computes the cell
 * as ONNX defines it: 1 done, 0 not (the own cells run), or an error. */
static int dnnl_cell(struct rt_kctx *k, const struct rnn *s)
{
	if (s->has_clip || s->seq < 1 || s->batch < 1)
		return 0;
	/* at two threads a bidirectional node's directions side by side
	 * (run_dirs) beat oneDNN's: lstm 6.4 -> 5.2 ms, gru_bi 1.68 -> 1.34,
	 * crnn_f16 3.59 -> 3.02 (more threads than two not measured here:
	 * oneDNN's then) */
	if (s->ndir == 2 && rt_threads(k) == 2)
		return 0;
	/* an R past a thread's L2: the own product's reads back and forth
	 * (r_past_l2) beat oneDNN's, which read it in one order (a batch-4
	 * LSTM of 384 at one thread: 4.2 -> 3.5 ms) */
	if (rt_pgemm_ok() && r_past_l2(k, s, r_cols(s)))
		return 0;
	/* one to three rows at one thread: the own products (four panels at
	 * a time, straight to the micro-kernel) and one-pass cells beat
	 * oneDNN's: a batch-1 LSTM of 256 1.26 -> 0.96 ms, a GRU of 256 0.88
	 * -> 0.71, gru_bi's GRU (batch 2) 1.27 -> 1.22; not a GRU without
	 * linear_before_reset (two products a step: 0.54 -> 0.60), nor four
	 * rows and more (even) */
	if (rt_threads(k) == 1 && rt_pgemm_ok() && s->batch <= 3 &&
	    (s->cell == CELL_LSTM || s->lbr))
		return 0;
	for (int d = 0; d < s->ndir; d++)
		if (!default_cell(s, d))
			return 0;
	for (int64_t i = 0; i < s->batch; i++)
		if (s->lens[i] != s->seq)
			return 0;
	return knn_rnn_dnnl(k, &(struct knn_rnn){
		s->cell == CELL_LSTM ? KNN_RNN_LSTM : KNN_RNN_GRU, s->lbr, s->reverse, s->seq,
		s->batch, s->in, s->hid, s->ndir, s->x, s->w, s->r, s->b, s->h0, s->c0, s->y,
		s->yh, s->yc });
}

static int run_cell(struct rt_kctx *k, int cell)
{
	struct rnn s = { .cell = cell };
	struct rt_value *x, *w, *r, *y;
	const char *dir = rt_attr_str(k, "direction", "forward");
	float *xf = NULL, *xs = NULL, *wf = NULL, *rf = NULL, *bf = NULL, *pf = NULL;
	float *h0 = NULL, *c0 = NULL, *yb = NULL;
	int64_t *lens = NULL, hs, dims[4];
	size_t nl;
	int xo = 0, wo = 0, ro = 0, bo = 0, po = 0, ho = 0, co = 0, ok, rc, packed;
	struct rpack *q;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &w)) < 0 ||
	    (rc = rt_in_tensor(k, 2, &r)) < 0 || (rc = nq_check_float(k, x, 0)) < 0)
		return rc;
	s.g = cell == CELL_RNN ? 1 : cell == CELL_GRU ? 3 : 4;
	s.layout = k->version >= 14 ? (int)rt_attr_int(k, "layout", 0) : 0;
	if (x->rank != 3 || w->rank != 3 || r->rank != 3)
		return rt_err(k, "X, W and R must have rank 3");
	s.seq = x->dims[s.layout ? 1 : 0];
	s.batch = x->dims[s.layout ? 0 : 1];
	s.in = x->dims[2];
	s.ndir = w->dims[0];
	hs = rt_attr_int(k, "hidden_size", 0);
	s.hid = hs > 0 ? hs : w->dims[1] / s.g;
	if (!strcmp(dir, "bidirectional"))
		s.ndir = 2;
	else if (!strcmp(dir, "forward") || !strcmp(dir, "foward"))
		s.ndir = 1;
	else if (!strcmp(dir, "reverse"))
		s.ndir = 1, s.reverse = 1;
	else
		return rt_err(k, "unknown direction '%s'", dir);
	if (w->dims[0] != s.ndir || w->dims[1] != s.g * s.hid || w->dims[2] != s.in ||
	    r->dims[0] != s.ndir || r->dims[1] != s.g * s.hid || r->dims[2] != s.hid)
		return rt_err(k, "W or R shape does not match %lld direction(s), hidden_size %lld "
			      "and input size %lld", (long long)s.ndir, (long long)s.hid,
			      (long long)s.in);
	s.has_clip = rt_attr(k, "clip") != NULL;
	s.clip = rt_attr_float(k, "clip", 0);
	s.lbr = cell == CELL_GRU && rt_attr_int(k, "linear_before_reset", 0) != 0;
	s.input_forget = cell == CELL_LSTM && rt_attr_int(k, "input_forget", 0) != 0;
	if ((rc = parse_acts(k, &s)) < 0)
		return rc;
	rc = IR_ENOMEM;
	if (!(xf = nq_f32(k, x, &xo)))
		goto cleanup;
	s.x = xf;
	if (s.layout) {
		if (!(xs = malloc((size_t)(x->numel + 1) * sizeof(float)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		swap01(xf, xs, s.batch, s.seq, s.in);
		s.x = xs;
	}
	/* W and R as float32 only where the node's kept packs do not hold
	 * them both (a float16 node's first runs, or oneDNN's) */
	packed = (q = rt_node_cache(k)) && rpack_fits(q, &s) && q->has_w;
	if (!packed && (!(wf = param(k, 1, w->numel, "W", &ok, &wo)) ||
			!(rf = param(k, 2, r->numel, "R", &ok, &ro))))
		goto cleanup;
	bf = param(k, 3, s.ndir * 2 * s.g * s.hid, "B", &ok, &bo);
	if (!ok)
		goto cleanup;
	h0 = param(k, 5, s.ndir * s.batch * s.hid, "initial_h", &ok, &ho);
	if (!ok)
		goto cleanup;
	if (cell == CELL_LSTM) {
		c0 = param(k, 6, s.ndir * s.batch * s.hid, "initial_c", &ok, &co);
		if (!ok)
			goto cleanup;
		pf = param(k, 7, s.ndir * 3 * s.hid, "P", &ok, &po);
		if (!ok)
			goto cleanup;
	}
	if (s.layout && ((h0 && state_swap(&s, &h0, &ho) < 0) ||
			 (c0 && state_swap(&s, &c0, &co) < 0))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	if (rt_in(k, 4)) {
		if ((rc = rt_in_ints(k, 4, &lens, &nl)) < 0)
			goto cleanup;
		rc = IR_ENOMEM;
		if ((int64_t)nl != s.batch) {
			rc = rt_err(k, "sequence_lens has %zu entries for batch %lld", nl,
				    (long long)s.batch);
			goto cleanup;
		}
		for (size_t i = 0; i < nl; i++)
			if (lens[i] < 0 || lens[i] > s.seq) {
				rc = rt_err(k, "sequence_lens[%zu] = %lld outside [0, %lld]", i,
					    (long long)lens[i], (long long)s.seq);
				goto cleanup;
			}
	} else {
		if (!(lens = malloc((size_t)(s.batch + 1) * sizeof(int64_t)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		for (int64_t i = 0; i < s.batch; i++)
			lens[i] = s.seq;
	}
	s.w = wf;
	s.r = rf;
	s.b = bf;
	s.p = pf;
	s.h0 = h0;
	s.c0 = c0;
	s.lens = lens;
	if (!(s.y = calloc((size_t)(s.seq * s.ndir * s.batch * s.hid + 1), sizeof(float))) ||
	    !(s.yh = calloc((size_t)(s.ndir * s.batch * s.hid + 1), sizeof(float))) ||
	    (cell == CELL_LSTM &&
	     !(s.yc = calloc((size_t)(s.ndir * s.batch * s.hid + 1), sizeof(float))))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	if ((rc = packed ? 0 : dnnl_cell(k, &s)) < 0)
		goto cleanup;
	if (!rc) {
		s.kept = rpack_kept(k, &s);
		if ((rc = run_dirs(k, &s)) < 0)
			goto cleanup;
	}
	if (rt_out_wanted(k, 0)) {
		dims[0] = s.seq, dims[1] = s.ndir, dims[2] = s.batch, dims[3] = s.hid;
		if (s.layout)
			dims[0] = s.batch, dims[1] = s.seq, dims[2] = s.ndir;
		rc = IR_ENOMEM;
		if (!(y = rt_out_tensor(k, 0, x->dtype, 4, dims)) || !(yb = nq_out_buf(k, y)))
			goto cleanup;
		if (s.layout)
			/* [seq, ndir*batch... ] -> [batch, seq, ndir, hid] */
			for (int64_t t = 0; t < s.seq; t++)
				for (int64_t d = 0; d < s.ndir; d++)
					for (int64_t bi = 0; bi < s.batch; bi++)
						memcpy(yb + ((bi * s.seq + t) * s.ndir + d) * s.hid,
						       s.y + ((t * s.ndir + d) * s.batch + bi) * s.hid,
						       (size_t)s.hid * sizeof(float));
		else
			memcpy(yb, s.y, (size_t)y->numel * sizeof(float));
		nq_out_done(y, yb);
	}
	if ((rc = state_out(k, 1, &s, x->dtype, s.yh)) < 0)
		goto cleanup;
	if (cell == CELL_LSTM && (rc = state_out(k, 2, &s, x->dtype, s.yc)) < 0)
		goto cleanup;
	rc = 0;
cleanup:
	nq_f32_release(xf, xo);
	free(xs);
	nq_f32_release(wf, wo);
	nq_f32_release(rf, ro);
	nq_f32_release(bf, bo);
	nq_f32_release(pf, po);
	nq_f32_release(h0, ho);
	nq_f32_release(c0, co);
	free(lens);
	free(s.y);
	free(s.yh);
	free(s.yc);
	return rc;
}

static int k_rnn(struct rt_kctx *k)
{
	return run_cell(k, CELL_RNN);
}

static int k_gru(struct rt_kctx *k)
{
	return run_cell(k, CELL_GRU);
}

static int k_lstm(struct rt_kctx *k)
{
	return run_cell(k, CELL_LSTM);
}

const struct rt_kernel rt_kernels_rnn[] = {
	{ "ai.onnx", "GRU", 1, RT_OPEN, k_gru },
	{ "ai.onnx", "LSTM", 1, RT_OPEN, k_lstm },
	{ "ai.onnx", "RNN", 1, RT_OPEN, k_rnn },
};
const size_t rt_n_kernels_rnn = sizeof(rt_kernels_rnn) / sizeof(rt_kernels_rnn[0]);
