/* k_rnn_dnnl.c: float32 LSTM and GRU (also linear_before_reset) on
 * oneDNN's RNN primitives (their brgemm kernels: the whole sequence, both
 * directions, in one call), kept in the node's cache with W and R
 * reordered once into the layout oneDNN picks.  Against opmig's own cell
 * loop (k_rnn.c: a packed product by R and a pass over the gates each
 * step), a run of a batch-4 LSTM of 384 (40 inputs) took 1.9 ms -> 1.3 at
 * two threads (onnxruntime 1.3), a bidirectional GRU of 200 1.8 -> 1.2 at
 * one (bench/README.md).  LSTMs whose W outgrows the L2 stay own
 * (LSTM_W_MAX), and k_rnn.c keeps on its own cells one to three rows at
 * one thread and an R past the L2 (dnnl_cell: faster there since).  For
 * the cells oneDNN computes as ONNX
 * defines them: default activations, no clip, no input_forget, no
 * peepholes, every sequence the full length; from a node's second run on
 * (a primitive and a copy of the weights cost more than one run, and
 * `opmig validate` runs each model once).  ONNX's gate order (LSTM i, o,
 * f, c; GRU z, r, h) is oneDNN's (i, f, c, o; u, r, o) reordered, and its
 * two biases are summed, but for linear_before_reset's Rbh, which oneDNN
 * takes as a fourth gate's bias. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/k_dnnl.h"
#include "runtime/kernels/k_rnn_dnnl.h"
#include "runtime/kernels/pgemm.h"   /* rt_cpu_avx512f */

/* The most bytes of W (one direction's) a thread's share of oneDNN's
 * LSTM may take: a run took, against the own cells (k_rnn.c), at one
 * thread 3.7 -> 3.6 ms at 240 KB (40 inputs, 384 hidden), 5.3 -> 6.0 at
 * 320 KB, 3.8 -> 18.5 at 2 MB; at two threads 1.9 -> 1.3 ms at 120 KB,
 * 0.64 -> 0.57 at 300 KB, 1.8 -> 1.8 at 512 KB, 3.2 -> 3.9 at 1 MB. */
#define LSTM_W_MAX (300 * 1024)

struct rnn_dn {
	struct knn_wcache h;      /* KNN_WC_DNNL_RNN; h.w: W */
	struct knn_rnn g;         /* the problem it was made for (its shapes) */
	dnnl_stream_t stream;
	dnnl_primitive_t p;
	dnnl_memory_t src, hi, ci, wl, wi, b, dst, ho, co, pad;
	size_t pad_bytes, w_bytes;
	float *concat;            /* both directions' Y as oneDNN writes it */
};

static void rnn_free(void *p)
{
	struct rnn_dn *c = p;

	if (!c)
		return;
	dnnl_primitive_destroy(c->p);
	dnnl_memory_destroy(c->src);
	dnnl_memory_destroy(c->hi);
	dnnl_memory_destroy(c->ci);
	dnnl_memory_destroy(c->wl);
	dnnl_memory_destroy(c->wi);
	dnnl_memory_destroy(c->b);
	dnnl_memory_destroy(c->dst);
	dnnl_memory_destroy(c->ho);
	dnnl_memory_destroy(c->co);
	dnnl_memory_destroy(c->pad);
	if (c->stream)
		dnnl_stream_destroy(c->stream);
	free(c->concat);
	free(c);
}

/* (W, R and B are the node's constants: the same values every run) */
static int same(const struct knn_rnn *x, const struct knn_rnn *y)
{
	return x->cell == y->cell && x->lbr == y->lbr && x->seq == y->seq &&
	       x->batch == y->batch && x->in == y->in && x->hid == y->hid &&
	       x->ndir == y->ndir && x->reverse == y->reverse && !x->b == !y->b &&
	       !x->h0 == !y->h0 && !x->c0 == !y->c0;
}

/* ONNX's gate for oneDNN's gate j */
static int onnx_gate(const struct knn_rnn *g, int j)
{
	static const int lstm[4] = { 0, 2, 3, 1 };

	return g->cell == KNN_RNN_LSTM ? lstm[j] : j;
}

/* m (ndir x G*hid x k, ONNX's) as ldigo [1, ndir, k, G, hid] into o */
static void to_ldigo(const struct knn_rnn *g, int gates, const float *m, int64_t k, float *o)
{
	for (int64_t d = 0; d < g->ndir; d++)
		for (int64_t i = 0; i < k; i++)
			for (int j = 0; j < gates; j++) {
				const float *src = m + (d * gates + onnx_gate(g, j)) * g->hid * k + i;

				for (int64_t h = 0; h < g->hid; h++)
					*o++ = src[h * k];
			}
}

/* B (ndir x 2*G*hid: Wb then Rb, or NULL) as oneDNN's ldgo [1, ndir,
 * G (+1 with linear_before_reset), hid] */
static void to_bias(const struct knn_rnn *g, int gates, float *o)
{
	int ng = gates + g->lbr;

	for (int64_t d = 0; d < g->ndir; d++)
		for (int j = 0; j < ng; j++) {
			int q = j < gates ? onnx_gate(g, j) : 2;   /* the fourth: Rbh */
			const float *wb = g->b ? g->b + (d * 2 * gates + q) * g->hid : NULL;
			const float *rb = wb ? wb + gates * g->hid : NULL;

			for (int64_t h = 0; h < g->hid; h++, o++) {
				if (!wb)
					*o = 0;
				else if (j == gates)
					*o = rb[h];
				else if (g->lbr && j == 2)
					*o = wb[h];
				else
					*o = wb[h] + rb[h];
			}
		}
}

/* The primitive for c->g and its weights: 0, or -1 when oneDNN cannot
 * make it (or memory ran out). */
static int rnn_make(struct rnn_dn *c)
{
	const struct knn_rnn *g = &c->g;
	dnnl_engine_t eng = knn_dnnl_engine();
	int gates = g->cell == KNN_RNN_LSTM ? 4 : 3, lstm = g->cell == KNN_RNN_LSTM;
	dnnl_dims_t sd = { g->seq, g->batch, g->in }, dd = { g->seq, g->batch, g->ndir * g->hid };
	dnnl_dims_t it = { 1, g->ndir, g->batch, g->hid };
	dnnl_dims_t wld = { 1, g->ndir, g->in, gates, g->hid };
	dnnl_dims_t wid = { 1, g->ndir, g->hid, gates, g->hid };
	dnnl_dims_t bd = { 1, g->ndir, gates + g->lbr, g->hid };
	dnnl_memory_desc_t src, hi, ci, wl, wi, wlu, wiu, b, dst, ho, co;
	dnnl_rnn_direction_t dir = g->ndir == 2 ? dnnl_bidirectional_concat :
				   g->reverse ? dnnl_unidirectional_right2left :
						dnnl_unidirectional_left2right;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_rnn_desc_t rd;
	const dnnl_memory_desc_t *q;
	float *buf = NULL;
	int64_t wl_n = g->ndir * g->in * gates * g->hid, wi_n = g->ndir * g->hid * gates * g->hid;
	int rc = -1;

	memset(&hi, 0, sizeof(hi));
	memset(&ci, 0, sizeof(ci));
	if (dnnl_memory_desc_init_by_tag(&src, 3, sd, dnnl_f32, dnnl_tnc) ||
	    dnnl_memory_desc_init_by_tag(&dst, 3, dd, dnnl_f32, dnnl_tnc) ||
	    (g->h0 && dnnl_memory_desc_init_by_tag(&hi, 4, it, dnnl_f32, dnnl_ldnc)) ||
	    (g->c0 && dnnl_memory_desc_init_by_tag(&ci, 4, it, dnnl_f32, dnnl_ldnc)) ||
	    dnnl_memory_desc_init_by_tag(&ho, 4, it, dnnl_f32, dnnl_ldnc) ||
	    dnnl_memory_desc_init_by_tag(&co, 4, it, dnnl_f32, dnnl_ldnc) ||
	    dnnl_memory_desc_init_by_tag(&wl, 5, wld, dnnl_f32, dnnl_format_tag_any) ||
	    dnnl_memory_desc_init_by_tag(&wi, 5, wid, dnnl_f32, dnnl_format_tag_any) ||
	    dnnl_memory_desc_init_by_tag(&wlu, 5, wld, dnnl_f32, dnnl_ldigo) ||
	    dnnl_memory_desc_init_by_tag(&wiu, 5, wid, dnnl_f32, dnnl_ldigo) ||
	    dnnl_memory_desc_init_by_tag(&b, 4, bd, dnnl_f32, dnnl_ldgo))
		return -1;
	if (lstm ? dnnl_lstm_forward_desc_init(&rd, dnnl_forward_inference, dir, &src, &hi, &ci,
					       &wl, &wi, &b, &dst, &ho, &co, 0) :
	    g->lbr ? dnnl_lbr_gru_forward_desc_init(&rd, dnnl_forward_inference, dir, &src, &hi,
						    &wl, &wi, &b, &dst, &ho, 0) :
		     dnnl_gru_forward_desc_init(&rd, dnnl_forward_inference, dir, &src, &hi, &wl,
						&wi, &b, &dst, &ho, 0))
		return -1;
	if (dnnl_primitive_attr_create(&attr) ||
	    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) ||
	    dnnl_primitive_desc_create(&pd, &rd, attr, eng, NULL) ||
	    dnnl_primitive_create(&c->p, pd) ||
	    dnnl_stream_create(&c->stream, eng, dnnl_stream_default_flags) ||
	    dnnl_memory_create(&c->src, &src, eng, DNNL_MEMORY_NONE) ||
	    dnnl_memory_create(&c->dst, &dst, eng, DNNL_MEMORY_NONE) ||
	    (g->h0 && dnnl_memory_create(&c->hi, &hi, eng, DNNL_MEMORY_NONE)) ||
	    (g->c0 && dnnl_memory_create(&c->ci, &ci, eng, DNNL_MEMORY_NONE)) ||
	    dnnl_memory_create(&c->ho, &ho, eng, DNNL_MEMORY_NONE) ||
	    (lstm && dnnl_memory_create(&c->co, &co, eng, DNNL_MEMORY_NONE)) ||
	    dnnl_memory_create(&c->b, &b, eng, DNNL_MEMORY_ALLOCATE))
		goto done;
	q = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
	if (q && (c->pad_bytes = dnnl_memory_desc_get_size(q)) &&
	    dnnl_memory_create(&c->pad, q, eng, DNNL_MEMORY_NONE))
		goto done;
	if (g->ndir == 2 &&
	    !(c->concat = malloc((size_t)(g->seq * g->batch * 2 * g->hid) * sizeof(float))))
		goto done;
	if (!(buf = malloc((size_t)((wl_n > wi_n ? wl_n : wi_n) + 1) * sizeof(float))))
		goto done;
	to_ldigo(g, gates, g->w, g->in, buf);
	if (knn_dnnl_reorder_new(c->stream, &wlu, buf,
				 dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), &c->wl))
		goto done;
	to_ldigo(g, gates, g->r, g->hid, buf);
	if (knn_dnnl_reorder_new(c->stream, &wiu, buf,
				 dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1), &c->wi))
		goto done;
	{
		void *bp = NULL;

		if (dnnl_memory_get_data_handle(c->b, &bp) || !bp)
			goto done;
		to_bias(g, gates, bp);
	}
	c->w_bytes = dnnl_memory_desc_get_size(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0)) +
		     dnnl_memory_desc_get_size(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1));
	rc = 0;
done:
	free(buf);
	dnnl_primitive_desc_destroy(pd);
	dnnl_primitive_attr_destroy(attr);
	return rc;
}

/* One run: 0, IR_ENOMEM when the scratchpad could not be had, or -1
 * when oneDNN failed. */
static int rnn_exec(struct rnn_dn *c, const struct knn_rnn *g)
{
	dnnl_exec_arg_t args[11] = {
		{ DNNL_ARG_SRC_LAYER, c->src }, { DNNL_ARG_WEIGHTS_LAYER, c->wl },
		{ DNNL_ARG_WEIGHTS_ITER, c->wi }, { DNNL_ARG_BIAS, c->b },
		{ DNNL_ARG_DST_LAYER, c->dst }, { DNNL_ARG_DST_ITER, c->ho },
	};
	int n = 6, rc = -1;
	void *pp;

	if (c->hi)
		args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_SRC_ITER, c->hi };
	if (c->ci)
		args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_SRC_ITER_C, c->ci };
	if (c->co)
		args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_DST_ITER_C, c->co };
	if (c->pad)
		args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_SCRATCHPAD, c->pad };
	if (dnnl_memory_set_data_handle(c->src, (void *)g->x) ||
	    dnnl_memory_set_data_handle(c->dst, c->concat ? c->concat : g->y) ||
	    dnnl_memory_set_data_handle(c->ho, g->yh) ||
	    (c->hi && dnnl_memory_set_data_handle(c->hi, (void *)g->h0)) ||
	    (c->ci && dnnl_memory_set_data_handle(c->ci, (void *)g->c0)) ||
	    (c->co && dnnl_memory_set_data_handle(c->co, g->yc)))
		return -1;
	knn_dnnl_lock();
	if (knn_dnnl_buf(KNN_DN_PAD, c->pad_bytes, &pp))
		rc = IR_ENOMEM;
	else if ((!pp || !dnnl_memory_set_data_handle(c->pad, pp)) &&
		 !dnnl_primitive_execute(c->p, c->stream, n, args) &&
		 dnnl_stream_wait(c->stream) == dnnl_success)
		rc = 0;
	knn_dnnl_unlock();
	if (!rc && c->concat)   /* [seq, batch, 2, hid] -> [seq, 2, batch, hid] */
		for (int64_t t = 0; t < g->seq; t++)
			for (int64_t d = 0; d < 2; d++)
				for (int64_t bi = 0; bi < g->batch; bi++)
					memcpy(g->y + ((t * 2 + d) * g->batch + bi) * g->hid,
					       c->concat + ((t * g->batch + bi) * 2 + d) * g->hid,
					       (size_t)g->hid * sizeof(float));
	return rc;
}

/* One run on c: 1 done, 0 not (oneDNN failed), or out of memory: that
 * fails the node, since the own cells' sums differ in the last bits and a
 * run must not change paths for want of memory. */
static int rnn_run(struct rt_kctx *k, struct rnn_dn *c, const struct knn_rnn *g)
{
	int rc = rnn_exec(c, g);

	if (rc == IR_ENOMEM)
		return rt_oom(k);
	if (rc)
		return 0;
	knn_dnnl_count();
	return 1;
}

int knn_rnn_dnnl(struct rt_kctx *k, const struct knn_rnn *g)
{
	struct rnn_dn *c = rt_node_cache(k), *tmp = NULL;

	if (!knn_dnnl_engine() || (g->cell != KNN_RNN_LSTM && g->cell != KNN_RNN_GRU))
		return 0;
	/* linear_before_reset on oneDNN only where its results were checked
	 * right: on an AVX2 CPU (emulated) its reverse and bidirectional
	 * cells gave other values (suite krnn) */
	if (g->lbr && !rt_cpu_avx512f())
		return 0;
	/* oneDNN's LSTM (its brgemm kernels; GRU takes its gemm-based
	 * ones) multiplies each step's input by W in that step: fast while
	 * each thread's share of W stays in its L2 */
	if (g->cell == KNN_RNN_LSTM &&
	    g->in * 4 * g->hid * (int64_t)sizeof(float) > LSTM_W_MAX * (int64_t)rt_threads(k))
		return 0;
	if (c && (c->h.kind != KNN_WC_DNNL_RNN || !same(&c->g, g)))
		return 0;
	knn_dnnl_threads(rt_threads(k));
	if (!c) {
		int64_t wb = (g->ndir * (g->in + g->hid) * 4 * g->hid) * (int64_t)sizeof(float);
		/* another node's of the same W, R and B (an unrolled decoder) */
		struct rt_share_key key = { KNN_WC_DNNL_RNN, { g->w, g->r, g->b },
					    { g->seq, g->batch, g->in, g->hid, g->ndir,
					      g->cell | g->lbr << 4 | g->reverse << 5 |
					      !!g->h0 << 6 | !!g->c0 << 7 } };

		if (!rt_in_const(k, 1) || !rt_in_const(k, 2) || (g->b && !rt_in_const(k, 3)))
			return 0;
		if ((c = rt_node_cache_shared(k, &key)))
			return same(&c->g, g) ? rnn_run(k, c, g) : 0;
		if (!rt_node_cache_worth(k, wb))
			return 0;
		if (!(tmp = calloc(1, sizeof(*tmp))))
			return rt_oom(k);
		tmp->h.kind = KNN_WC_DNNL_RNN;
		tmp->h.w = g->w;
		tmp->g = *g;
		if (rnn_make(tmp) ||
		    rt_node_cache_set_shared(k, tmp, rnn_free, (int64_t)tmp->w_bytes, &key) < 0) {
			rnn_free(tmp);
			return 0;
		}
		c = tmp;
	}
	return rnn_run(k, c, g);
}
