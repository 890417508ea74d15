/* quantize.c: qz_run, the whole of a quantization (see quantize.h):
 * prepare the float model (canonicalize, fold batch norms, bring the opset
 * to what the quantized ops need), write it to a temporary folder (the
 * reference, and the source of every trial's copy), plan, calibrate,
 * evaluate with fallback, and build the chosen result into the model
 * itself; plus the option names and the report's lifecycle. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rewriters/quant_int.h"
#include "runtime/runtime.h"

static const char *const method_names[] = { "minmax", "percentile", "entropy" };
static const char *const format_names[] = { "qdq", "qoperator", "dynamic", "weight-only" };
static const char *const metric_names[] = { "cosine", "snr", "top1", "max-abs" };

const char *qz_method_name(enum qz_method m)
{
	return (unsigned)m < 3 ? method_names[m] : "?";
}

int qz_method_parse(const char *s)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(s, method_names[i]))
			return i;
	return -1;
}

const char *qz_format_name(enum qz_format f)
{
	return (unsigned)f < 4 ? format_names[f] : "?";
}

const char *qz_metric_name(enum qz_metric m)
{
	return (unsigned)m < 4 ? metric_names[m] : "?";
}

int qz_accuracy_parse(const char *s, enum qz_metric *metric, double *value, char *why,
		      size_t size)
{
	const char *op = strpbrk(s, "<>");
	size_t len = op ? (size_t)(op - s) : 0;
	char *end;
	int k = -1;

	for (int i = 0; op && i < 4; i++)
		if (strlen(metric_names[i]) == len && !strncmp(s, metric_names[i], len))
			k = i;
	if (k < 0) {
		snprintf(why, size, "'%s' is not METRIC>=VALUE (metrics: cosine, snr, top1, "
			 "max-abs<=VALUE)", s);
		return -1;
	}
	if (strncmp(op, k == QZ_MAX_ABS ? "<=" : ">=", 2)) {
		snprintf(why, size, "'%s': %s takes %s", s, metric_names[k],
			 k == QZ_MAX_ABS ? "<=" : ">=");
		return -1;
	}
	*value = strtod(op + 2, &end);
	if (end == op + 2 || *end || !isfinite(*value)) {
		snprintf(why, size, "'%s': the value is not a number", s);
		return -1;
	}
	*metric = (enum qz_metric)k;
	return 0;
}

int qz_act_dtype_parse(const char *s)
{
	return !strcmp(s, "uint8") ? IR_DTYPE_UINT8 : !strcmp(s, "int8") ? IR_DTYPE_INT8 :
	       !strcmp(s, "uint16") ? IR_DTYPE_UINT16 : !strcmp(s, "int16") ? IR_DTYPE_INT16 : -1;
}

int qz_weight_dtype_parse(const char *s)
{
	return !strcmp(s, "int8") ? IR_DTYPE_INT8 : !strcmp(s, "uint8") ? IR_DTYPE_UINT8 :
	       !strcmp(s, "int4") ? IR_DTYPE_INT4 : -1;
}

/* ---- the report -------------------------------------------------------- */

void qz_report_release(struct qz_report *r)
{
	for (size_t i = 0; i < r->n_outputs; i++)
		free(r->outputs[i].name);
	free(r->outputs);
	for (size_t i = 0; i < r->n_tensors; i++)
		free(r->tensors[i].name);
	free(r->tensors);
	for (size_t i = 0; i < r->n_nodes; i++) {
		free(r->nodes[i].name);
		free(r->nodes[i].op);
		free(r->nodes[i].why);
		for (size_t j = 0; j < r->nodes[i].n_inputs; j++)
			free(r->nodes[i].inputs[j]);
		free(r->nodes[i].inputs);
	}
	free(r->nodes);
	free(r->ranking);
	free(r->steps);
	for (size_t i = 0; i < r->n_notes; i++)
		free(r->notes[i]);
	free(r->notes);
	memset(r, 0, sizeof(*r));
}

int qz_note(struct qz_report *r, struct ir_diag *d, const char *fmt, ...)
{
	char buf[1024], **q;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!(q = realloc(r->notes, (r->n_notes + 1) * sizeof(*q))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	r->notes = q;
	if (!(q[r->n_notes] = strdup(buf)))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	r->n_notes++;
	return 0;
}

int qz_wrap(struct ir_diag *d, int status, const char *fmt, ...)
{
	char prefix[512], msg[sizeof(d->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s", d->msg);
	ir_diag_init(d);
	return ir_diag_error(d, status, "%s: %s", prefix, msg);
}

int qz_tensor_add(struct qz_report *r, const struct qz_tensor *t, struct ir_diag *d)
{
	struct qz_tensor *q = realloc(r->tensors, (r->n_tensors + 1) * sizeof(*q));

	if (!q)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	r->tensors = q;
	q[r->n_tensors++] = *t;
	return 0;
}

/* ---- preparing the model ------------------------------------------------ */

static int64_t init_bytes(const struct ir_model *m)
{
	int64_t n = 0;

	for (size_t i = 0; i < m->graph->n_inits; i++)
		n += ir_tensor_nbytes(m->graph->inits[i]);
	return n;
}

/* The opset the quantized ops need: 13 for per-axis scales, 21 for
 * 16-bit and 4-bit types, 11 for DynamicQuantizeLinear; weight-only
 * quantization keeps it (MatMulNBits is com.microsoft's). */
static int64_t opset_needed(const struct qz_opts *o, int act)
{
	int w = o->weight_dtype;

	if (o->format == QZ_WEIGHT_ONLY)
		return 0;
	if (act == IR_DTYPE_UINT16 || act == IR_DTYPE_INT16 || w == IR_DTYPE_INT4)
		return 21;
	if (o->format == QZ_DYNAMIC)
		return o->per_tensor ? 11 : 13;
	return 13;
}

static int prepare(struct qz_ctx *q, struct rw_ctx *c, struct ir_diag *d)
{
	const struct qz_opts *o = q->o;
	int64_t need = opset_needed(o, o->act_dtype);
	size_t changed;
	int rc;

	/* weight-only quantization changes the MatMuls and nothing else */
	for (size_t i = 0; o->prepare && o->format != QZ_WEIGHT_ONLY && i < rw_n_passes; i++) {
		const struct rw_pass *p = rw_passes[i];

		if ((p->kind == RW_CANON || !strcmp(p->name, "fuse-batch-norm")) && p->run &&
		    (rc = rw_run(c, p, &changed)) < 0)
			return rc;
	}
	if (c->opset < need) {
		const struct rw_pass *p = rw_pass_find("opset-convert");
		int64_t from = c->opset;

		c->want_opset = need;
		if (!p || (rc = rw_run(c, p, &changed)) < 0)
			return p ? rc : ir_diag_error(d, IR_EINTERNAL, "no opset-convert pass");
		if (c->opset < need)
			return ir_diag_error(d, IR_EUSAGE, "the model's opset %lld cannot be "
					     "converted to %lld, which the quantized form needs",
					     (long long)from, (long long)need);
		if ((rc = qz_note(q->r, d, "opset %lld converted to %lld for the quantized ops",
				  (long long)from, (long long)need)) < 0)
			return rc;
	}
	if ((rc = ir_graph_toposort(c->m->graph, d)) < 0)
		return rc;
	return rw_refresh(c);
}

int qz_tmp_dir(struct qz_ctx *q, struct ir_diag *d)
{
	const char *tmp = getenv("TMPDIR");

	if (q->tmp[0])
		return 0;
	snprintf(q->tmp, sizeof(q->tmp), "%s/opmig-quantize.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(q->tmp)) {
		q->tmp[0] = 0;
		return ir_diag_error(d, IR_EIO, "cannot create a temporary folder in %s",
				     tmp && *tmp ? tmp : "/tmp");
	}
	return 0;
}

/* Weight-only quantization of a model as loaded (prepare changed nothing
 * but maybe the order of its nodes, which loading sorts the same way):
 * the reference is the source file loaded again, its weights read in
 * place, and so is each trial's float model; 1 when it is m's graph,
 * else 0 (a copy is written). */
static int load_source(struct qz_ctx *q, struct ir_model *m, struct ir_diag *d)
{
	const struct ir_graph *g = m->graph, *h;
	struct ir_diag sub;
	int same;

	if (q->o->format != QZ_WEIGHT_ONLY || !q->o->source)
		return 0;
	ir_diag_init(&sub);
	if (ir_model_load(q->o->source, NULL, &q->ref, &sub) < 0 ||
	    ir_graph_toposort(q->ref->graph, &sub) < 0) {
		ir_model_free(q->ref);
		q->ref = NULL;
		return 0;
	}
	h = q->ref->graph;
	same = h->n_nodes == g->n_nodes && h->n_inits == g->n_inits &&
	       h->n_inputs == g->n_inputs && h->n_outputs == g->n_outputs;
	for (size_t i = 0; same && i < g->n_nodes; i++)
		same = !strcmp(ir_s(h->nodes[i]->op_type), ir_s(g->nodes[i]->op_type)) &&
		       !strcmp(ir_s(h->nodes[i]->name), ir_s(g->nodes[i]->name));
	if (!same) {
		ir_model_free(q->ref);
		q->ref = NULL;
		return 0;
	}
	snprintf(q->copy_path, sizeof(q->copy_path), "%s", q->o->source);
	q->from_source = 1;
	(void)d;
	return 1;
}

/* The float model as the reference, and the model each trial copies: m
 * itself is quantized only once the trials are done.  A copy in memory
 * (ir_model_clone): its weights are m's, shared, not written to a
 * temporary folder and read back (a 7B decoder's 27 GB). */
static int save_copy(struct qz_ctx *q, struct ir_model *m, struct ir_diag *d)
{
	int rc;

	if (load_source(q, m, d))
		return 0;
	q->float_m = m;
	if ((rc = ir_model_clone(m, &q->ref, d)) < 0)
		return qz_wrap(d, rc, "quantize: the float copy");
	return 0;
}

static void remove_copy(struct qz_ctx *q)
{
	char path[4200];

	if (!q->tmp[0])
		return;
	snprintf(path, sizeof(path), "%s/model.data", q->tmp);
	unlink(path);
	snprintf(path, sizeof(path), "%s/model.onnx", q->tmp);
	unlink(path);
	for (int i = 0; i < q->n_trials; i++) {
		snprintf(path, sizeof(path), "%s/trial%d.onnx", q->tmp, i);
		unlink(path);
		snprintf(path, sizeof(path), "%s/trial%d.data", q->tmp, i);
		unlink(path);
	}
	rmdir(q->tmp);
}

/* Let go of the reference's mapped weights once its runs are done. */
static void release_weights(struct ir_model *m)
{
	for (size_t i = 0; m && i < m->graph->n_inits; i++)
		ir_tensor_release_data(m->graph->inits[i]);
}

/* One report entry per node the plan considered. */
static int report_nodes(struct qz_ctx *q, struct ir_diag *d)
{
	const struct ir_graph *g = q->ref->graph;
	struct qz_report *r = q->r;

	if (!(r->nodes = calloc(q->plan.n_nodes + 1, sizeof(*r->nodes))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < q->plan.n_nodes; i++) {
		struct qz_unit *u = &q->plan.units[i];
		struct qz_node *n;
		char label[32];

		if (u->role == QZ_R_NONE && !u->why)
			continue;
		n = &r->nodes[r->n_nodes];
		snprintf(label, sizeof(label), "#%zu", i);
		if (!(n->name = strdup(g->nodes[i]->name && *g->nodes[i]->name ?
				       g->nodes[i]->name : label)) ||
		    !(n->op = strdup(ir_s(g->nodes[i]->op_type))))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		n->sensitivity = n->if_float = n->flips_alone = NAN;
		u->report = (long)r->n_nodes++;
	}
	return 0;
}

/* Each node's fate once the float set fl is final. */
static int node_states(struct qz_ctx *q, const unsigned char *fl, struct ir_diag *d)
{
	const struct qz_plan *p = &q->plan;
	struct qz_report *r = q->r;
	unsigned char *on = calloc(p->n_nodes + 1, 1);
	int rc = 0;

	if (!on)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	qz_units_on(p, q->ref->graph, fl, on);
	for (size_t i = 0; i < p->n_nodes && rc == 0; i++) {
		const struct qz_unit *u = &p->units[i];
		struct qz_node *n;
		char why[200];

		if (u->report < 0)
			continue;
		n = &r->nodes[u->report];
		n->state = on[i] == 1 ? QZ_NODE_QUANTIZED : on[i] == 2 ? QZ_NODE_FUSED :
			   QZ_NODE_FLOAT;
		r->n_quantized += on[i] == 1;
		if (on[i] == 1) {
			const struct ir_node *g = q->ref->graph->nodes[i];

			if (!(n->inputs = calloc(g->n_inputs + 1, sizeof(*n->inputs)))) {
				rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
				break;
			}
			for (size_t j = 0; j < g->n_inputs && rc == 0; j++)
				if (u->in[j] != QZ_IN_NONE && g->inputs[j] &&
				    !(n->inputs[n->n_inputs++] = strdup(ir_s(g->inputs[j]->name))))
					rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		}
		if (on[i])
			continue;
		r->n_float++;
		if (fl[i])
			snprintf(why, sizeof(why), "returned to float by the accuracy fallback "
				 "(rank %zu; local SNR %.1f dB)", n->rank, n->sensitivity);
		else if (u->fused)
			snprintf(why, sizeof(why), "its producer stays in float");
		else if (u->candidate)
			snprintf(why, sizeof(why), "moves data that is not quantized");
		else
			snprintf(why, sizeof(why), "%s", u->why ? u->why : "not quantizable");
		if (!(n->why = strdup(why)))
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	free(on);
	return rc;
}

static size_t n_graph_inputs(const struct ir_model *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->graph->n_inputs; i++)
		n += !m->graph->inputs[i].value->init;
	return n;
}

int qz_run(struct ir_model *m, const char *path, const struct qz_opts *o,
	   struct qz_report *r, struct ir_diag *d)
{
	struct qz_ctx q = { .o = o, .r = r, .path = path };
	struct qz_opts oo = *o;
	unsigned char *fl = NULL;
	struct rw_ctx c;
	size_t n_in;
	int rc, calibrated, borrowed = 0;

	memset(r, 0, sizeof(*r));
	if (!oo.have_accuracy) {
		oo.metric = QZ_COSINE;
		oo.threshold = 0.99;
	}
	if (oo.percentile <= 0)
		oo.percentile = QZ_DEFAULT_PERCENTILE;
	if (oo.percentile > 100)
		return ir_diag_error(d, IR_EUSAGE, "--percentile %g is above 100", oo.percentile);
	if (oo.format == QZ_WEIGHT_ONLY) {
		if (!oo.block_size)
			oo.block_size = QZ_DEFAULT_BLOCK;
		if (oo.nbits != 4 && oo.nbits != 8)
			return ir_diag_error(d, IR_EUSAGE, "weight-only quantization takes 4 or 8 "
					     "bits, not %d", oo.nbits);
		if (oo.block_size < 16 || (oo.block_size & (oo.block_size - 1)))
			return ir_diag_error(d, IR_EUSAGE, "the block size %lld is not a power of 2 "
					     ">= 16", (long long)oo.block_size);
		if (oo.accuracy_level < 0 || oo.accuracy_level > 4)
			return ir_diag_error(d, IR_EUSAGE, "accuracy_level %d is not 0 to 4",
					     oo.accuracy_level);
	}
	q.o = &oo;
	q.weight_dtype = IR_DTYPE_INT8;
	r->method = qz_method_name(oo.method);
	r->format = qz_format_name(oo.format);
	r->sensitivity = oo.sensitivity == QZ_SENS_LOCAL ? "local" : "output";
	r->percentile = oo.method == QZ_PERCENTILE ? oo.percentile : 0;
	r->metric = oo.metric;
	r->threshold = oo.threshold;
	snprintf(r->criterion, sizeof(r->criterion), "%s%s%g", qz_metric_name(oo.metric),
		 oo.metric == QZ_MAX_ABS ? "<=" : ">=", oo.threshold);
	if ((rc = rw_ctx_init(&c, m, oo.target, d)) < 0)
		return rc;
	c.pass = "quantize";
	c.dims = oo.dims;
	c.n_dims = oo.n_dims;
	if ((rc = prepare(&q, &c, d)) < 0)
		goto cleanup;
	r->bytes_before = init_bytes(m);
	/* weight-only without the check runs nothing: the plan's names come
	 * from m itself (no float copy written or loaded) */
	borrowed = oo.no_check && oo.format == QZ_WEIGHT_ONLY;
	if (borrowed)
		q.ref = m;
	if ((!borrowed && (rc = save_copy(&q, m, d)) < 0) || (rc = qz_plan_make(&q, &c, d)) < 0 ||
	    (rc = report_nodes(&q, d)) < 0)
		goto cleanup;
	r->act_dtype = q.plan.act_dtype;
	r->weight_dtype = oo.weight_dtype ? oo.weight_dtype : q.weight_dtype;
	r->symmetric = oo.symmetric;
	r->per_channel = !oo.per_tensor;
	if (oo.format == QZ_WEIGHT_ONLY) {
		r->act_dtype = IR_DTYPE_FLOAT;
		r->weight_dtype = oo.nbits == 4 ? IR_DTYPE_INT4 : IR_DTYPE_INT8;
		r->per_channel = 0;
		r->nbits = oo.nbits;
		r->block_size = oo.block_size;
		r->accuracy_level = oo.accuracy_level;
	}
	if (opset_needed(&oo, q.plan.act_dtype) > c.opset) {
		rc = ir_diag_error(d, IR_EUSAGE, "%s activations need opset 21 (the model has %lld)",
				   ir_dtype_name(q.plan.act_dtype), (long long)c.opset);
		goto cleanup;
	}
	if (oo.no_check) {
		/* weight-only: nothing to calibrate, nothing run */
		if (oo.format != QZ_WEIGHT_ONLY) {
			rc = ir_diag_error(d, IR_EUSAGE, "only weight-only quantization can skip "
					   "the accuracy check");
			goto cleanup;
		}
		r->unchecked = 1;
		r->met = 1;
		if (!(fl = calloc(q.plan.n_nodes + 1, 1))) {
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
			goto cleanup;
		}
		if ((rc = node_states(&q, fl, d)) < 0 ||
		    (rc = qz_note(r, d, "no accuracy check: the quantized model was not "
				  "compared with the float model")) < 0)
			goto cleanup;
		goto build;
	}
	n_in = n_graph_inputs(q.ref);
	if ((rc = qz_samples_open(&q, &q.calib, oo.calibrate, n_in, oo.seed, d)) < 0)
		goto cleanup;
	q.eval = &q.calib;
	if (oo.validation) {
		if ((rc = qz_samples_open(&q, &q.val, oo.validation, n_in, oo.seed, d)) < 0)
			goto cleanup;
		q.eval = &q.val;
	}
	calibrated = oo.format != QZ_DYNAMIC && oo.format != QZ_WEIGHT_ONLY;
	r->n_calib = calibrated ? q.calib.n : 0;
	r->n_eval = q.eval->n;
	r->random_calib = !oo.calibrate;
	if (!oo.calibrate && (rc = qz_note(r, d, "no --calibrate: %s from %zu seeded random "
					   "samples, not representative of real data",
					   !calibrated ? "accuracy measured" :
					   "scales and accuracy come", q.calib.n)) < 0)
		goto cleanup;
	q.n_out = q.ref->graph->n_outputs;
	if (!(q.ref_out = calloc(q.eval->n * q.n_out + 1, sizeof(*q.ref_out))) ||
	    !(fl = calloc(q.plan.n_nodes + 1, 1))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	if (calibrated) {
		if ((rc = qz_calibrate(&q, d)) < 0)
			goto cleanup;
		qz_ranges(&q);
	}
	if ((!calibrated || q.eval != &q.calib) && (rc = qz_eval_reference(&q, d)) < 0)
		goto cleanup;
	if (oo.format == QZ_WEIGHT_ONLY)
		release_weights(q.ref);
	if ((rc = qz_fallback(&q, fl, d)) < 0 || (rc = node_states(&q, fl, d)) < 0)
		goto cleanup;
build:
	if (!r->n_quantized && (rc = qz_note(r, d, "nothing was quantized: %s",
					     r->n_steps ? "the accuracy fallback returned every "
					     "candidate to float" : oo.format == QZ_WEIGHT_ONLY ?
					     "no MatMul with a constant float 2-D B" :
					     "no node of a quantizable op with float data")) < 0)
		goto cleanup;
	/* the result, built into the model itself */
	q.collect = 1;
	if ((rc = qz_build(&q, &c, fl, d)) < 0)
		goto cleanup;
	r->bytes_after = init_bytes(m);
	r->opset = ir_model_opset(m, "");
cleanup:
	for (size_t i = 0; q.ref_out && i < q.eval->n * q.n_out; i++)
		rt_value_unref(q.ref_out[i]);
	free(q.ref_out);
	free(fl);
	qz_samples_release(&q.calib);
	qz_samples_release(&q.val);
	qz_plan_release(&q.plan);
	if (!borrowed)
		ir_model_free(q.ref);
	remove_copy(&q);
	rw_ctx_release(&c);
	return rc;
}
