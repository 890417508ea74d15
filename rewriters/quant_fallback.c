/* quant_fallback.c: the accuracy-driven loop.  Each trial takes a fresh
 * copy of the float model (in memory, its weights shared), quantizes it
 * with the nodes chosen so far kept in float, and evaluates it against the
 * float model.  When the criterion fails the first time, the quantized
 * nodes are ranked: by default by the criterion's metric with each node
 * alone returned to float (one trial per node: Neural Compressor's op-wise
 * fallback), or, with --sensitivity local, by their own quantization error
 * alone: the layer-wise comparison on the first evaluation sample feeds the
 * quantized model the float model's value at every node output both share,
 * so a node's local SNR measures only what quantizing its inputs, weights
 * and bias did (rknn's per-layer analysis; one run, but blind to how much
 * the rest of the network amplifies an error).  The most sensitive node
 * goes back to float and the next trial runs, until the criterion holds or
 * --max-fallback nodes went back.  A decoder's logits judged by position
 * must keep every position's top-1 token: with them, the nodes rank first
 * by the top-1 flips each causes (a second trial per node: it alone
 * quantized; most flips first), the metric with it alone in float breaking
 * ties, so that the nodes that break the top-1 tokens go back first rather
 * than those that mend the cosine most.  (The flips left with a node alone
 * in float rank worse: with every other node quantized they are mostly
 * noise.)
 *
 * Cost: each trial runs the whole model, so two trials per node grow with
 * the square of a decoder's layers (an 8-layer slice of a 7B decoder did
 * not finish its ranking in 16 minutes).  With more than QZ_RANK_BUDGET
 * quantized nodes the output ranking therefore runs in two stages: the
 * nodes, in graph order, fall into QZ_RANK_GROUPS groups of consecutive
 * nodes (a decoder's: runs of layers), one trial each with the group in
 * float, ranked as nodes are (top-1 flips left, then the metric); the
 * nodes of the most helpful groups, QZ_RANK_BUDGET at most, then get the
 * two trials per node, and the others rank after them by their group's
 * rank and then local SNR.  (Local SNR alone does not choose them: on a
 * random decoder it hardly tells the lm_head and the first layer, whose
 * errors flip the most tokens, from the rest.)  The fallback returns one
 * node per trial for the first QZ_RANK_BUDGET steps, then twice as many
 * per trial as the last time.  The trials are then at most QZ_RANK_GROUPS
 * + 3 QZ_RANK_BUDGET + log2(nodes) + 2, each linear in the layers; the
 * report's notes say when either limit applied.  Models of at most
 * QZ_RANK_BUDGET quantized nodes rank and fall back as before, node by
 * node. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/quant_int.h"
#include "validators/validate.h"

/* Nodes ranked by the output trials, and fallback steps of one node. */
#define QZ_RANK_BUDGET 16
/* Groups of consecutive nodes tried in float when there are more. */
#define QZ_RANK_GROUPS 8

int qz_build(struct qz_ctx *q, struct rw_ctx *c, const unsigned char *fl, struct ir_diag *d)
{
	const struct rw_pass *dce = rw_pass_find("dce");
	size_t changed;
	int rc;

	if (q->o->format == QZ_DYNAMIC)
		rc = qz_build_dynamic(q, c, fl, d);
	else if (q->o->format == QZ_WEIGHT_ONLY)
		rc = qz_build_nbits(q, c, fl, d);
	else
		rc = qz_build_qdq(q, c, fl, d);
	if (rc == 0 && q->o->format == QZ_QOPERATOR)
		rc = qz_to_qoperator(q, c, NULL, d);
	/* float weights only the quantized copies read now go */
	if (rc == 0 && dce)
		rc = rw_run(c, dce, &changed);
	return rc;
}

/* A trial built from the source file (weight-only) written to the
 * temporary folder and read back: its codes are computed piece by piece
 * as written, and the interpreter reads them in place from the file
 * rather than holding every one in memory. */
static int trial_file(struct qz_ctx *q, struct ir_model **m, struct ir_diag *d)
{
	char path[4200], data[64];
	struct ir_save_opts so = { data, 1024 };
	int rc;

	if ((rc = qz_tmp_dir(q, d)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/trial%d.onnx", q->tmp, q->n_trials);
	snprintf(data, sizeof(data), "trial%d.data", q->n_trials);
	q->n_trials++;
	rc = ir_model_save(*m, path, &so, d);
	ir_model_free(*m);
	*m = NULL;
	if (rc < 0)
		return rc;
	if ((rc = ir_model_load(path, NULL, m, d)) < 0)
		return qz_wrap(d, rc == IR_EINVAL ? IR_EINTERNAL : rc, "quantize: the trial");
	return 0;
}

int qz_trial(struct qz_ctx *q, const unsigned char *fl, struct ir_model **out, struct ir_diag *d)
{
	struct ir_model *m = NULL;
	struct rw_ctx c;
	int rc;

	*out = NULL;
	if ((rc = q->from_source ? ir_model_load(q->copy_path, NULL, &m, d) :
		  ir_model_clone(q->float_m, &m, d)) < 0 ||
	    (q->from_source && (rc = ir_graph_toposort(m->graph, d)) < 0)) {
		ir_model_free(m);
		return qz_wrap(d, rc == IR_EINVAL ? IR_EINTERNAL : rc, "quantize: the float copy");
	}
	if ((rc = rw_ctx_init(&c, m, q->o->target, d)) < 0) {
		ir_model_free(m);
		return rc;
	}
	c.pass = "quantize";
	rc = qz_build(q, &c, fl, d);
	rw_ctx_release(&c);
	if (rc == 0 && q->from_source)
		rc = trial_file(q, &m, d);
	if (rc < 0) {
		ir_model_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

/* Local SNR of every quantized node of trial model m (NAN where the
 * comparison has none), from the layer-wise comparison on the first
 * evaluation sample. */
static int sensitivity(struct qz_ctx *q, struct ir_model *m, const unsigned char *on,
		       double *snr, struct ir_diag *d)
{
	const struct qz_samples *s = q->eval;
	const struct ir_graph *g = q->ref->graph;
	struct val_opts vo = { 0 };
	struct val_report vr;
	char bad[4096];
	int rc;

	vo.precision = VAL_INT8;
	vo.samples = 1;
	vo.gen.seed = s->seed;
	vo.gen.n_dims = q->o->n_dims;
	vo.gen.dims = q->o->dims;
	vo.layerwise = 1;
	vo.threads = q->o->threads;
	if (s->kind == QZ_S_DIRS) {
		vo.data_dirs = s->dirs;
		vo.n_data_dirs = 1;
	} else if (s->kind == QZ_S_FILES) {
		vo.input_files = s->files;
		vo.n_input_files = s->per;
	}
	if ((rc = val_run(q->ref, m, &vo, &vr, bad, sizeof(bad), d)) < 0)
		return qz_wrap(d, rc, "quantize: the layer-wise comparison");
	for (size_t i = 0; i < q->plan.n_nodes; i++) {
		const struct ir_node *n = g->nodes[i];

		snr[i] = NAN;
		if (on[i] != 1)
			continue;
		/* the node's own outputs: their error is what quantizing its
		 * inputs did (the quantization of an output is its readers') */
		for (size_t j = 0; j < n->n_outputs; j++) {
			const char *name = n->outputs[j] ? ir_s(n->outputs[j]->name) : NULL;

			for (size_t k = 0; name && k < vr.n_layers; k++) {
				double x = vr.layers[k].local.snr_db;

				if (strcmp(vr.layers[k].value, name) || !vr.layers[k].local.n)
					continue;
				if (isnan(snr[i]) || x < snr[i])
					snr[i] = x;
			}
		}
	}
	val_report_release(&vr);
	return 0;
}

/* Does node a sort after node b: by pri (NULL or NAN: none) lowest
 * first, then by snr lowest first, NAN last, then by index. */
static int after(size_t a, size_t b, const double *pri, const double *snr)
{
	double x = snr[a], y = snr[b];

	if (pri && !isnan(pri[a]) && !isnan(pri[b]) && pri[a] != pri[b])
		return pri[a] > pri[b];
	return isnan(x) ? !isnan(y) || a > b : !isnan(y) && (x > y || (x == y && a > b));
}

/* Sort idx (n entries) by pri[idx] then snr[idx] (after()), an insertion
 * sort: the nodes of one model. */
static void sort_by_snr(size_t *idx, size_t n, const double *pri, const double *snr)
{
	for (size_t i = 1; i < n; i++) {
		size_t v = idx[i], k = i;

		while (k > 0) {
			if (!after(idx[k - 1], v, pri, snr))
				break;
			idx[k] = idx[k - 1];
			k--;
		}
		idx[k] = v;
	}
}

/* The top-1 flips of the outputs that are a decoder's logits judged by
 * position (rows whose argmax differs from the float model's, over the
 * samples); NAN when there are none. */
static double top1_flips(const struct qz_output *o, size_t n)
{
	double f = NAN;

	for (size_t i = 0; i < n; i++)
		if (o[i].m.lg.on && !o[i].m.lg.kv)
			f = (isnan(f) ? 0 : f) + (double)(o[i].m.lg.positions - o[i].m.lg.top1_agree);
	return f;
}

/* The criterion's metric of the worst output with each of the first
 * n_meas of the n quantized nodes idx[] alone returned to float (one
 * trial each), stored so that sorting lowest first puts the most helpful
 * first: key[i] = -metric (max-abs: metric); for a decoder's logits
 * judged by position also the top-1 flips (top1_flips()) with the node
 * alone quantized, all n others in float (a second trial), stored negated
 * into flips[i] (NAN for other models). */
static int if_float(struct qz_ctx *q, const unsigned char *fl, const size_t *idx, size_t n,
		    size_t n_meas, double *key, double *flips, struct ir_diag *d)
{
	unsigned char *f = malloc(q->plan.n_nodes + 1);
	struct qz_output *o = calloc(q->n_out + 1, sizeof(*o));
	struct ir_model *m = NULL;
	int rc = 0, met;

	if (!f || !o) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	memcpy(f, fl, q->plan.n_nodes);
	for (size_t k = 0; k < n_meas && rc == 0; k++) {
		double worst;

		f[idx[k]] = 1;
		if ((rc = qz_trial(q, f, &m, d)) == 0 &&
		    (rc = qz_evaluate(q, m, o, &worst, &met, d)) == 0)
			key[idx[k]] = q->o->metric == QZ_MAX_ABS ? worst : -worst;
		ir_model_free(m);
		m = NULL;
		f[idx[k]] = 0;
		flips[idx[k]] = NAN;
		if (rc < 0 || isnan(top1_flips(o, q->n_out)))
			continue;
		/* the flips the node causes: it alone quantized */
		for (size_t j = 0; j < n; j++)
			f[idx[j]] = j != k;
		if ((rc = qz_trial(q, f, &m, d)) == 0 &&
		    (rc = qz_evaluate(q, m, o, &worst, &met, d)) == 0)
			flips[idx[k]] = -top1_flips(o, q->n_out);
		ir_model_free(m);
		m = NULL;
		memcpy(f, fl, q->plan.n_nodes);
	}
cleanup:
	free(f);
	free(o);
	return rc;
}

/* The first stage of a ranking of more than QZ_RANK_BUDGET nodes (see
 * the top): idx[] (n nodes in graph order) reordered so that the nodes to
 * try one by one come first, *n_meas of them, the others after them by
 * their group's rank, then by local SNR (snr). */
static int by_groups(struct qz_ctx *q, const unsigned char *fl, size_t *idx, size_t n,
		     const double *snr, size_t *n_meas, struct ir_diag *d)
{
	size_t per = (n + QZ_RANK_GROUPS - 1) / QZ_RANK_GROUPS, ng = (n + per - 1) / per;
	size_t *order = calloc(ng + 1, sizeof(*order)), *out = calloc(n + 1, sizeof(*out));
	double *gkey = calloc(ng + 1, sizeof(*gkey)), *gflips = calloc(ng + 1, sizeof(*gflips));
	unsigned char *f = malloc(q->plan.n_nodes + 1);
	struct qz_output *o = calloc(q->n_out + 1, sizeof(*o));
	struct ir_model *m = NULL;
	size_t k = 0, chosen = 0;
	int rc = 0, met;

	if (!order || !out || !gkey || !gflips || !f || !o) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t g = 0; g < ng && rc == 0; g++) {
		double worst;

		memcpy(f, fl, q->plan.n_nodes);
		for (size_t j = g * per; j < n && j < (g + 1) * per; j++)
			f[idx[j]] = 1;
		if ((rc = qz_trial(q, f, &m, d)) == 0 &&
		    (rc = qz_evaluate(q, m, o, &worst, &met, d)) == 0) {
			gkey[g] = q->o->metric == QZ_MAX_ABS ? worst : -worst;
			gflips[g] = top1_flips(o, q->n_out);
		}
		ir_model_free(m);
		m = NULL;
		order[g] = g;
	}
	if (rc < 0)
		goto cleanup;
	/* groups most helpful first: fewest flips left, then the metric */
	sort_by_snr(order, ng, gflips, gkey);
	for (size_t i = 0; i < ng; i++) {
		size_t g = order[i], lo = g * per, len = (g + 1) * per < n ? per : n - lo;

		sort_by_snr(idx + lo, len, NULL, snr);
		memcpy(out + k, idx + lo, len * sizeof(*out));
		/* whole groups while they fit; the first at least in part */
		if (chosen == k && k + len <= QZ_RANK_BUDGET)
			chosen = k + len;
		else if (i == 0)
			chosen = QZ_RANK_BUDGET;
		k += len;
	}
	memcpy(idx, out, n * sizeof(*idx));
	*n_meas = chosen;
	rc = qz_note(q->r, d, "ranking: %zu quantized nodes in %zu groups of consecutive nodes, "
		     "each group tried in float (one trial); the %zu nodes of the most helpful "
		     "groups ranked by the criterion with each alone in float, the other %zu "
		     "after them by their group's rank and local SNR (a budget of %d nodes "
		     "keeps the ranking's cost linear in the model)", n, ng, chosen, n - chosen,
		     QZ_RANK_BUDGET);
cleanup:
	ir_model_free(m);
	free(order);
	free(out);
	free(gkey);
	free(gflips);
	free(f);
	free(o);
	return rc;
}

/* Rank the quantized nodes into the report, most sensitive first: by the
 * criterion with each alone returned to float (--sensitivity output), or
 * by local SNR (--sensitivity local); the local SNR is reported either
 * way. */
static int rank(struct qz_ctx *q, struct ir_model *m, const unsigned char *fl,
		struct ir_diag *d)
{
	struct qz_report *r = q->r;
	unsigned char *on = calloc(q->plan.n_nodes + 1, 1);
	double *snr = calloc(q->plan.n_nodes + 1, sizeof(*snr));
	size_t *idx = calloc(q->plan.n_nodes + 1, sizeof(*idx)), n = 0;
	double *key = NULL, *flips = NULL;
	size_t n_meas;
	int rc;

	if (!on || !snr || !idx) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	qz_units_on(&q->plan, q->ref->graph, fl, on);
	if ((rc = sensitivity(q, m, on, snr, d)) < 0)
		goto cleanup;
	/* m is read no more: its codes (computed, ir/derived.c) go before
	 * the trials below each compute their own */
	for (size_t i = 0; i < m->graph->n_inits; i++)
		ir_tensor_release_data(m->graph->inits[i]);
	for (size_t i = 0; i < q->plan.n_nodes; i++)
		if (on[i] == 1 && q->plan.units[i].report >= 0)
			idx[n++] = i;
	n_meas = n;
	if (q->o->sensitivity == QZ_SENS_OUTPUT) {
		if (!(key = calloc(q->plan.n_nodes + 1, sizeof(*key))) ||
		    !(flips = calloc(q->plan.n_nodes + 1, sizeof(*flips)))) {
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
			goto cleanup;
		}
		for (size_t i = 0; i < q->plan.n_nodes; i++)
			key[i] = flips[i] = NAN;
		/* the budget: the nodes of the most helpful groups */
		if (n > QZ_RANK_BUDGET && (rc = by_groups(q, fl, idx, n, snr, &n_meas, d)) < 0)
			goto cleanup;
		if ((rc = if_float(q, fl, idx, n, n_meas, key, flips, d)) < 0)
			goto cleanup;
	}
	/* the rest stay in by_groups' order */
	sort_by_snr(idx, n_meas, flips, key ? key : snr);
	free(r->ranking);
	if (!(r->ranking = calloc(n + 1, sizeof(*r->ranking)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	r->n_ranked = n;
	for (size_t k = 0; k < n; k++) {
		struct qz_node *rn = &r->nodes[q->plan.units[idx[k]].report];

		r->ranking[k] = (size_t)q->plan.units[idx[k]].report;
		rn->sensitivity = snr[idx[k]];
		if (key) {
			rn->if_float = q->o->metric == QZ_MAX_ABS ? key[idx[k]] : -key[idx[k]];
			rn->flips_alone = -flips[idx[k]];
		}
		rn->rank = k + 1;
	}
cleanup:
	free(key);
	free(flips);
	free(on);
	free(snr);
	free(idx);
	return rc;
}

/* Keep the trial's output metrics in the report (names from the float
 * model). */
static int keep_outputs(struct qz_ctx *q, const struct qz_output *o, struct ir_diag *d)
{
	struct qz_report *r = q->r;

	for (size_t i = 0; i < r->n_outputs; i++)
		free(r->outputs[i].name);
	free(r->outputs);
	r->n_outputs = 0;
	if (!(r->outputs = calloc(q->n_out + 1, sizeof(*r->outputs))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < q->n_out; i++) {
		r->outputs[i] = o[i];
		if (!(r->outputs[i].name = strdup(ir_s(q->ref->graph->outputs[i].value->name))))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		r->n_outputs++;
	}
	return 0;
}

/* The most sensitive node still quantized: its index, or -1. */
static long next_node(struct qz_ctx *q, const unsigned char *fl)
{
	struct qz_report *r = q->r;

	for (size_t k = 0; k < r->n_ranked; k++)
		for (size_t i = 0; i < q->plan.n_nodes; i++)
			if (q->plan.units[i].report == (long)r->ranking[k] && !fl[i] &&
			    q->plan.units[i].candidate)
				return (long)i;
	return -1;
}

int qz_fallback(struct qz_ctx *q, unsigned char *fl, struct ir_diag *d)
{
	struct qz_report *r = q->r;
	struct qz_output *o = calloc(q->n_out + 1, sizeof(*o));
	struct ir_model *m = NULL;
	int rc = 0, met = 0, ranked = 0, noted = 0;
	double worst = 0;
	size_t max = q->o->max_fallback > 0 ? (size_t)q->o->max_fallback : (size_t)-1;
	size_t first = 0, batch = 1;  /* the last trial's steps: from first */

	if (!o)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t trial = 0;; trial++) {
		long next;

		if ((rc = qz_trial(q, fl, &m, d)) < 0 ||
		    (rc = qz_evaluate(q, m, o, &worst, &met, d)) < 0 ||
		    (rc = keep_outputs(q, o, d)) < 0)
			goto cleanup;
		if (trial == 0)
			r->worst_first = worst;
		for (size_t k = first; trial && k < r->n_steps; k++)
			r->steps[k].worst_after = worst;
		if (met || q->o->no_fallback)
			break;
		if (!ranked) {
			if ((rc = rank(q, m, fl, d)) < 0)
				goto cleanup;
			ranked = 1;
		}
		ir_model_free(m);
		m = NULL;
		/* one node a trial, then (past the budget) twice as many as
		 * the last trial returned */
		if (r->n_steps >= QZ_RANK_BUDGET)
			batch *= 2;
		first = r->n_steps;
		for (size_t b = 0; b < batch && r->n_steps < max; b++) {
			struct qz_step *s;

			if ((next = next_node(q, fl)) < 0)
				break;
			if (!(s = realloc(r->steps, (r->n_steps + 1) * sizeof(*s)))) {
				rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
				goto cleanup;
			}
			fl[next] = 1;
			r->steps = s;
			s[r->n_steps].node = (size_t)q->plan.units[next].report;
			s[r->n_steps].worst_before = worst;
			s[r->n_steps].worst_after = NAN;
			r->n_steps++;
		}
		if (r->n_steps == first)
			break;
		if (r->n_steps - first > 1 && !noted) {
			noted = 1;
			if ((rc = qz_note(r, d, "fallback: after %d nodes returned to float one "
					  "a trial, nodes went back %zu, then twice as many, a "
					  "trial (the trials' count stays logarithmic in the "
					  "nodes)", QZ_RANK_BUDGET, r->n_steps - first)) < 0)
				goto cleanup;
		}
	}
	r->met = met;
cleanup:
	ir_model_free(m);
	free(o);
	return rc;
}
