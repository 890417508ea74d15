/* quant_qdq.c: the QDQ form.  Every activation a quantized node reads
 * gets one QuantizeLinear -> DequantizeLinear pair with its group's scale
 * and zero point, and the quantized readers read the dequantized value
 * (nodes kept in float go on reading the float one); a graph output made
 * by a quantized node passes through a pair too, keeping its name.
 * Weights are stored quantized (per channel along their output-channel
 * axis, or per tensor) behind a DequantizeLinear, their codes computed
 * when written (quant_wcodes.c), biases as int32 at the
 * input's scale times the weight's, constant operands at their group's
 * scale.  A fused Relu (or Clip from 0) goes when the QuantizeLinear of
 * its producer's output does exactly what it did (zero point at the
 * bottom of the range, and the Clip's top at or above the range's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/dtype_int.h"
#include "rewriters/quant_int.h"
#include "runtime/runtime.h"

struct wdq {
	const struct ir_value *w;
	int dtype, axis, sym;
	struct ir_value *dq;
	float *scales;
	size_t n;
};

struct qbuild {
	struct qz_ctx *q;
	struct rw_ctx *c;
	struct ir_graph *g;
	unsigned char *on;
	struct qz_report *r;         /* the final build: tensors reported */
	struct wdq *wc;
	size_t n_wc, cap_wc;
	struct ir_node **drop;       /* fused nodes to remove at the end */
	size_t n_drop;
	struct ir_diag *d;
};

/* ---- emitting ------------------------------------------------------- */

/* A constant of dtype with the given values (a new initializer named
 * after hint). */
static struct ir_value *constant(struct rw_ctx *c, const char *hint, int dtype, int rank,
				 const int64_t *dims, const double *vals, struct ir_diag *d)
{
	struct rt_value *t = NULL;
	struct ir_tensor *it = NULL;
	struct ir_value *v;

	if (rt_tensor_new(NULL, dtype, rank, dims, &t, d) < 0)
		return NULL;
	for (int64_t i = 0; i < t->numel; i++)
		rt_value_set_f64(t, i, vals[i]);
	if (rt_value_to_ir(t, hint, &it, d) < 0) {
		rt_value_unref(t);
		return NULL;
	}
	rt_value_unref(t);
	if (!(v = ir_graph_add_initializer(c->m->graph, it)))
		ir_diag_error(d, IR_ENOMEM, "out of memory");
	else if (c->m->ir_version < 4)
		c->m->ir_version = 4;
	return v;
}

struct ir_node *qz_node_new(struct ir_graph *g, const char *op, const char *hint)
{
	char name[320];
	struct ir_node *n;
	int k = 0, taken;

	snprintf(name, sizeof(name), "%.300s", hint);
	do {
		taken = 0;
		for (size_t i = 0; i < g->n_nodes && !taken; i++)
			taken = g->nodes[i]->name && !strcmp(g->nodes[i]->name, name);
		if (taken)
			snprintf(name, sizeof(name), "%.300s_%d", hint, ++k);
	} while (taken);
	if (!(n = ir_node_create(op, "", name)))
		return NULL;
	if (!(n->doc = strdup("opmig: quantize"))) {
		ir_node_free(n);
		return NULL;
	}
	return n;
}

/* A node op(in...) -> out appended to the main graph (the build sorts the
 * graph at the end), named after its output. */
static struct ir_node *emit(struct rw_ctx *c, const char *op, struct ir_value *const *in,
			    size_t n_in, struct ir_value *out, struct ir_diag *d)
{
	struct ir_graph *g = c->m->graph;
	struct ir_node *n;

	if (!(n = qz_node_new(g, op, ir_s(out->name))))
		goto oom;
	for (size_t i = 0; i < n_in; i++)
		if (ir_node_append_input(n, in[i]) < 0) {
			ir_node_free(n);
			goto oom;
		}
	if (ir_node_append_output(n, out) < 0 || ir_graph_add_node(g, n) < 0) {
		ir_node_free(n);
		goto oom;
	}
	return n;
oom:
	ir_diag_error(d, IR_ENOMEM, "out of memory");
	return NULL;
}

static struct ir_value *fresh(struct rw_ctx *c, const char *name, const char *suffix,
			      struct ir_diag *d)
{
	char hint[300];
	struct ir_value *v;

	snprintf(hint, sizeof(hint), "%.240s_%s", name, suffix);
	if (!(v = ir_graph_new_value(c->m->graph, hint)))
		ir_diag_error(d, IR_ENOMEM, "out of memory");
	return v;
}

/* DequantizeLinear(xq, scale, zp[, axis]) -> a fresh value (or out). */
static struct ir_value *dequant(struct rw_ctx *c, const char *name, struct ir_value *xq,
				struct ir_value *s, struct ir_value *z, int axis,
				struct ir_value *out, struct ir_diag *d)
{
	struct ir_value *in[3] = { xq, s, z };
	struct ir_node *n;

	if (!out && !(out = fresh(c, name, "dequantized", d)))
		return NULL;
	if (!(n = emit(c, "DequantizeLinear", in, z ? 3 : 2, out, d)))
		return NULL;
	if (axis >= 0 && ir_node_set_int(n, "axis", axis) < 0) {
		ir_diag_error(d, IR_ENOMEM, "out of memory");
		return NULL;
	}
	return out;
}

/* ---- weights ---------------------------------------------------------- */

int qz_weight(struct rw_ctx *c, struct ir_value *w, int dtype, int axis, int sym,
	      struct ir_value **out, struct qz_tensor *info, struct ir_diag *d)
{
	struct ir_tensor *x = w && !w->is_input ? w->init : NULL, *it = NULL;
	int64_t n_ch = 1, inner = 1;
	double *sc = NULL, *zp = NULL, *lo = NULL, *hi = NULL;
	float *fs = NULL;
	int32_t *iz = NULL;
	struct ir_value *qv, *sv, *zv;
	char hint[300];
	int rank, rc = IR_ENOMEM;

	*out = NULL;
	if (!x || x->dtype != IR_DTYPE_FLOAT || x->n_dims > RT_MAX_RANK || ir_tensor_numel(x) < 0)
		return 0;
	rank = (int)x->n_dims;
	if (axis >= rank)
		axis = -1;
	if (axis >= 0) {
		n_ch = x->dims[axis];
		for (int k = axis + 1; k < rank; k++)
			inner *= x->dims[k];
	} else {
		inner = ir_tensor_numel(x);
	}
	if (!(sc = calloc((size_t)n_ch + 1, sizeof(*sc))) ||
	    !(zp = calloc((size_t)n_ch + 1, sizeof(*zp))) ||
	    !(lo = calloc((size_t)n_ch + 1, sizeof(*lo))) ||
	    !(hi = calloc((size_t)n_ch + 1, sizeof(*hi))) ||
	    !(fs = calloc((size_t)n_ch + 1, sizeof(*fs))) ||
	    !(iz = calloc((size_t)n_ch + 1, sizeof(*iz))))
		goto cleanup;
	/* the channels' ranges, one pass over the weight read piece by piece */
	if (inner > 0 && (rc = qz_wcodes_range(x, n_ch, inner, lo, hi, d)) < 0)
		goto cleanup;
	info->min = INFINITY;
	info->max = -INFINITY;
	for (int64_t ch = 0; ch < n_ch; ch++) {
		info->min = fmin(info->min, lo[ch]);
		info->max = fmax(info->max, hi[ch]);
		qz_params(lo[ch], hi[ch], dtype, sym, &fs[ch], &iz[ch]);
		sc[ch] = fs[ch];
		zp[ch] = iz[ch];
	}
	/* the codes: computed when written (or read) */
	snprintf(hint, sizeof(hint), "%.240s_quantized", ir_s(w->name));
	if ((rc = qz_wcodes_make(x, hint, dtype, n_ch, inner > 0 ? inner : 1, fs, iz, &it,
				 d)) < 0)
		goto cleanup;
	rc = IR_ENOMEM;
	if (!(qv = ir_graph_add_initializer(c->m->graph, it)))
		goto cleanup;
	snprintf(hint, sizeof(hint), "%.240s_scale", ir_s(w->name));
	sv = constant(c, hint, IR_DTYPE_FLOAT, axis >= 0, &n_ch, sc, d);
	snprintf(hint, sizeof(hint), "%.240s_zero_point", ir_s(w->name));
	zv = sv ? constant(c, hint, dtype, axis >= 0, &n_ch, zp, d) : NULL;
	if (!zv || !(*out = dequant(c, ir_s(w->name), qv, sv, zv, axis, NULL, d))) {
		rc = d->status ? d->status : IR_ENOMEM;
		goto cleanup;
	}
	info->dtype = dtype;
	info->axis = axis;
	info->n = (size_t)n_ch;
	info->scale = sc[0];
	info->zero_point = zp[0];
	info->scale_min = info->scale_max = sc[0];
	for (int64_t ch = 1; ch < n_ch; ch++) {
		info->scale_min = fmin(info->scale_min, sc[ch]);
		info->scale_max = fmax(info->scale_max, sc[ch]);
	}
	info->lo = info->min;
	info->hi = info->max;
	rc = 0;
cleanup:
	if (rc < 0 && !d->status)
		ir_diag_error(d, rc, "out of memory");
	free(sc);
	free(zp);
	free(lo);
	free(hi);
	free(fs);
	free(iz);
	return rc;
}

static int report_tensor(struct qbuild *b, const char *name, const char *kind,
			 struct qz_tensor *t)
{
	char *s;

	if (!b->r)
		return 0;
	if (!(s = strdup(name)))
		return ir_diag_error(b->d, IR_ENOMEM, "out of memory");
	t->name = s;
	t->kind = kind;
	if (qz_tensor_add(b->r, t, b->d) < 0) {
		free(s);
		return b->d->status;
	}
	return 0;
}

/* The dequantized weight (cached: one copy per weight, dtype and axis). */
static int weight(struct qbuild *b, struct ir_value *w, const struct qz_unit *u,
		  struct wdq **out)
{
	struct qz_tensor info = { 0 };
	struct wdq *e;
	struct rt_value *x;
	int rc;

	*out = NULL;
	for (size_t i = 0; i < b->n_wc; i++)
		if (b->wc[i].w == w && b->wc[i].dtype == u->w_dtype && b->wc[i].axis == u->w_axis &&
		    b->wc[i].sym == u->w_sym) {
			*out = &b->wc[i];
			return 0;
		}
	if (b->n_wc == b->cap_wc) {
		size_t cap = b->cap_wc ? 2 * b->cap_wc : 16;
		struct wdq *q = realloc(b->wc, cap * sizeof(*q));

		if (!q)
			return ir_diag_error(b->d, IR_ENOMEM, "out of memory");
		b->wc = q;
		b->cap_wc = cap;
	}
	e = &b->wc[b->n_wc];
	memset(e, 0, sizeof(*e));
	e->w = w;
	e->dtype = u->w_dtype;
	e->axis = u->w_axis;
	e->sym = u->w_sym;
	if ((rc = qz_weight(b->c, w, u->w_dtype, u->w_axis, u->w_sym, &e->dq, &info, b->d)) < 0)
		return rc;
	if (!e->dq)
		return 0;
	/* the scales, for the bias (as the initializer holds them) */
	e->n = info.n;
	if (!(e->scales = calloc(info.n + 1, sizeof(*e->scales))) ||
	    !(x = rw_init_value(e->dq->producer->inputs[1])))
		return ir_diag_error(b->d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < info.n; i++)
		e->scales[i] = (float)rt_value_get_f64(x, (int64_t)i);
	rt_value_unref(x);
	b->n_wc++;
	if ((rc = report_tensor(b, ir_s(w->name), "weight", &info)) < 0)
		return rc;
	*out = e;
	return 0;
}

/* The bias of a unit as int32 at sx x the weight's scales. */
static int bias(struct qbuild *b, struct ir_node *n, size_t j, float sx, const struct wdq *w)
{
	struct ir_value *bv = n->inputs[j], *qv, *sv, *zv, *dq;
	struct rt_value *x = rw_init_value(bv);
	struct qz_tensor info = { 0 };
	double *q = NULL, *s = NULL, *z = NULL;
	int64_t nb, dims[2];
	int axis, rc = 0;
	char hint[300];

	if (!x || x->dtype != IR_DTYPE_FLOAT) {
		rt_value_unref(x);
		return 0;
	}
	nb = x->numel;
	axis = x->rank == 2 ? 1 : 0;
	if ((w->n != 1 && (int64_t)w->n != nb) || x->rank < 1 || x->rank > 2) {
		rt_value_unref(x);
		return 0;
	}
	if (!(q = calloc((size_t)nb + 1, sizeof(*q))) || !(s = calloc((size_t)nb + 1, sizeof(*s))) ||
	    !(z = calloc((size_t)nb + 1, sizeof(*z)))) {
		rc = ir_diag_error(b->d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	info.min = INFINITY;
	info.max = -INFINITY;
	for (int64_t i = 0; i < nb; i++) {
		float sb = sx * w->scales[w->n == 1 ? 0 : i];
		double v = ((const float *)x->data)[i], r;

		s[i] = sb;
		r = sb > 0 ? nearbyint(v / (double)sb) : 0;
		q[i] = r < -2147483648.0 ? -2147483648.0 : r > 2147483647.0 ? 2147483647.0 : r;
		info.min = fmin(info.min, v);
		info.max = fmax(info.max, v);
	}
	dims[0] = x->rank == 2 ? x->dims[0] : nb;
	dims[1] = nb;
	snprintf(hint, sizeof(hint), "%.240s_quantized", ir_s(bv->name));
	if (!(qv = constant(b->c, hint, IR_DTYPE_INT32, x->rank, x->rank == 2 ? x->dims : dims, q,
			    b->d))) {
		rc = b->d->status;
		goto cleanup;
	}
	snprintf(hint, sizeof(hint), "%.240s_scale", ir_s(bv->name));
	sv = constant(b->c, hint, IR_DTYPE_FLOAT, w->n != 1, &nb, s, b->d);
	snprintf(hint, sizeof(hint), "%.240s_zero_point", ir_s(bv->name));
	zv = sv ? constant(b->c, hint, IR_DTYPE_INT32, w->n != 1, &nb, z, b->d) : NULL;
	if (!zv || !(dq = dequant(b->c, ir_s(bv->name), qv, sv, zv, w->n != 1 ? axis : -1, NULL,
				  b->d)) ||
	    ir_node_set_input(n, j, dq) < 0) {
		rc = b->d->status ? b->d->status : ir_diag_error(b->d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	info.dtype = IR_DTYPE_INT32;
	info.axis = w->n != 1 ? axis : -1;
	info.n = w->n != 1 ? (size_t)nb : 1;
	info.scale = info.scale_min = info.scale_max = s[0];
	for (int64_t i = 1; i < nb && w->n != 1; i++) {
		info.scale_min = fmin(info.scale_min, s[i]);
		info.scale_max = fmax(info.scale_max, s[i]);
	}
	info.lo = info.min;
	info.hi = info.max;
	rc = report_tensor(b, ir_s(bv->name), "bias", &info);
cleanup:
	rt_value_unref(x);
	free(q);
	free(s);
	free(z);
	return rc;
}

/* A constant operand at its group's scale. */
static int const_operand(struct qbuild *b, struct ir_node *n, size_t j)
{
	const struct qz_plan *p = &b->q->plan;
	struct ir_value *cv = n->inputs[j], *qv, *sv, *zv, *dq;
	int ti = qz_plan_find(p, ir_s(cv->name));
	struct rt_value *x = rw_init_value(cv), *y = NULL;
	struct qz_tensor info = { 0 };
	double s, z;
	int64_t qmin, qmax;
	char hint[300];
	int rc = 0;

	if (ti < 0 || !x || x->dtype != IR_DTYPE_FLOAT) {
		rt_value_unref(x);
		return 0;
	}
	s = p->tens[ti].scale;
	z = p->tens[ti].zp;
	qz_dtype_range(p->act_dtype, &qmin, &qmax);
	if ((rc = rt_tensor_new(NULL, p->act_dtype, x->rank, x->dims, &y, b->d)) < 0)
		goto cleanup;
	for (int64_t i = 0; i < x->numel; i++) {
		float qf = nearbyintf(((const float *)x->data)[i] / (float)s) + (float)z;

		rt_value_set_f64(y, i, qf != qf ? z : qf < (float)qmin ? (double)qmin :
				 qf > (float)qmax ? (double)qmax : (double)qf);
	}
	snprintf(hint, sizeof(hint), "%.240s_quantized", ir_s(cv->name));
	{
		struct ir_tensor *it = NULL;

		if ((rc = rt_value_to_ir(y, hint, &it, b->d)) < 0)
			goto cleanup;
		if (!(qv = ir_graph_add_initializer(b->g, it))) {
			rc = ir_diag_error(b->d, IR_ENOMEM, "out of memory");
			goto cleanup;
		}
	}
	snprintf(hint, sizeof(hint), "%.240s_scale", ir_s(cv->name));
	sv = constant(b->c, hint, IR_DTYPE_FLOAT, 0, NULL, &s, b->d);
	snprintf(hint, sizeof(hint), "%.240s_zero_point", ir_s(cv->name));
	zv = sv ? constant(b->c, hint, p->act_dtype, 0, NULL, &z, b->d) : NULL;
	if (!zv || !(dq = dequant(b->c, ir_s(cv->name), qv, sv, zv, -1, NULL, b->d)) ||
	    ir_node_set_input(n, j, dq) < 0) {
		rc = b->d->status ? b->d->status : ir_diag_error(b->d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	info.dtype = p->act_dtype;
	info.axis = -1;
	info.n = 1;
	info.scale = info.scale_min = info.scale_max = s;
	info.zero_point = z;
	info.min = p->tens[ti].min;
	info.max = p->tens[ti].max;
	info.lo = fmin(p->tens[ti].glo, 0);
	info.hi = fmax(p->tens[ti].ghi, 0);
	info.group = p->tens[ti].group;
	info.shared = p->tens[ti].shared;
	rc = report_tensor(b, ir_s(cv->name), "constant", &info);
cleanup:
	rt_value_unref(x);
	rt_value_unref(y);
	return rc;
}

/* Weights, biases and constant operands of quantized node i. */
static int unit_inputs(struct qbuild *b, size_t i)
{
	const struct qz_plan *p = &b->q->plan;
	const struct qz_unit *u = &p->units[i];
	struct ir_node *n = b->g->nodes[i];
	struct wdq *w = NULL;
	int rc, tx = n->n_inputs && n->inputs[0] ? qz_plan_find(p, ir_s(n->inputs[0]->name)) : -1;

	for (size_t j = 0; j < n->n_inputs; j++) {
		if (u->in[j] == QZ_IN_WEIGHT) {
			if ((rc = weight(b, n->inputs[j], u, &w)) < 0)
				return rc;
			if (w && ir_node_set_input(n, j, w->dq) < 0)
				return ir_diag_error(b->d, IR_ENOMEM, "out of memory");
		} else if (u->in[j] == QZ_IN_CONST) {
			if ((rc = const_operand(b, n, j)) < 0)
				return rc;
		} else if (u->in[j] == QZ_IN_BIAS && w && tx >= 0) {
			if ((rc = bias(b, n, j, p->tens[tx].scale, w)) < 0)
				return rc;
		}
	}
	return 0;
}

/* ---- activations ---------------------------------------------------- */

struct slot {
	struct ir_node *n;
	size_t j;
};

/* Would the QuantizeLinear of the fused node's input do what the node
 * does?  Its zero point must be the bottom of the range (0 dequantizes
 * to exactly 0) and a Clip's top must quantize to the top. */
static int absorbable(struct qbuild *b, const struct ir_node *f, const struct qz_tens *t)
{
	int64_t qmin, qmax;
	double mx;

	qz_dtype_range(b->q->plan.act_dtype, &qmin, &qmax);
	if (t->zp != qmin || !qz_clip_max(b->c, f, &mx))
		return 0;
	return isinf(mx) || nearbyintf((float)mx / t->scale) + (float)t->zp >= (float)qmax;
}

static int act(struct qbuild *b, size_t ti)
{
	const struct qz_plan *p = &b->q->plan;
	const struct qz_tens *t = &p->tens[ti];
	struct ir_value *v = ir_graph_find(b->g, t->name), *sv, *zv, *qv, *src, *dq, *in[3];
	struct ir_node *pr, *qn;
	struct slot *qs = NULL, *fs = NULL;
	size_t nq = 0, nf = 0, k = 0;
	int out_q, forced, rc = 0;
	double s = t->scale, z = t->zp;
	char hint[300];

	if (!v)
		return ir_diag_error(b->d, IR_EINTERNAL, "quantize: value '%s' is gone", t->name);
	pr = v->producer && v->producer->graph == b->g && v->producer->index < p->n_nodes ?
	     v->producer : NULL;
	out_q = pr && b->on[pr->index] && ir_graph_is_output(b->g, v);
	/* a target that takes the producer only quantized needs its output
	 * quantized whoever reads it */
	forced = pr && b->on[pr->index] && b->c->target &&
		 !rw_target_accepts(b->c, ir_s(pr->domain), ir_s(pr->op_type), IR_DTYPE_FLOAT);
	if (!(qs = calloc(v->n_uses * 4 + 1, sizeof(*qs))) ||
	    !(fs = calloc(v->n_uses * 4 + 1, sizeof(*fs)))) {
		rc = ir_diag_error(b->d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < v->n_uses; i++) {
		struct ir_node *u = v->uses[i];
		int dup = 0;

		for (size_t q = 0; q < i; q++)
			dup |= v->uses[q] == u;
		/* the quantizer's own nodes (a QuantizeLinear doing a fused
		 * Relu) and a fused Relu (its producer's output is quantized
		 * after it) read as they are */
		if (dup || u->graph != b->g || u->index >= p->n_nodes || b->on[u->index] == 2)
			continue;
		for (size_t j = 0; j < u->n_inputs; j++) {
			if (u->inputs[j] != v)
				continue;
			if (b->on[u->index] == 1 && p->units[u->index].in[j] == QZ_IN_ACT)
				qs[nq++] = (struct slot){ u, j };
			else
				fs[nf++] = (struct slot){ u, j };
		}
	}
	if (forced && !out_q) {
		/* every reader takes the quantized value */
		memcpy(qs + nq, fs, nf * sizeof(*fs));
		nq += nf;
		nf = 0;
	}
	if (!nq && !out_q)
		goto cleanup;
	snprintf(hint, sizeof(hint), "%.240s_scale", t->name);
	sv = constant(b->c, hint, IR_DTYPE_FLOAT, 0, NULL, &s, b->d);
	snprintf(hint, sizeof(hint), "%.240s_zero_point", t->name);
	zv = sv ? constant(b->c, hint, p->act_dtype, 0, NULL, &z, b->d) : NULL;
	if (!zv || !(qv = fresh(b->c, t->name, "quantized", b->d))) {
		rc = b->d->status;
		goto cleanup;
	}
	src = v;
	if (out_q) {
		/* the graph output keeps its name: its producer writes a
		 * float value, the pair makes the output */
		while (k < pr->n_outputs && pr->outputs[k] != v)
			k++;
		snprintf(hint, sizeof(hint), "%.240s_float", t->name);
		if (!(src = rw_dt_split_output(b->c, b->g, pr, k, hint))) {
			rc = b->d->status;
			goto cleanup;
		}
		for (size_t i = 0; i < nf && !forced; i++)
			if (ir_node_set_input(fs[i].n, fs[i].j, src) < 0) {
				rc = ir_diag_error(b->d, IR_ENOMEM, "out of memory");
				goto cleanup;
			}
	}
	in[0] = src;
	in[1] = sv;
	in[2] = zv;
	if (!(qn = emit(b->c, "QuantizeLinear", in, 3, qv, b->d)) ||
	    !(dq = dequant(b->c, t->name, qv, sv, zv, -1, out_q ? v : NULL, b->d))) {
		rc = b->d->status;
		goto cleanup;
	}
	if (!out_q) {
		for (size_t i = 0; i < nq; i++)
			if (ir_node_set_input(qs[i].n, qs[i].j, dq) < 0) {
				rc = ir_diag_error(b->d, IR_ENOMEM, "out of memory");
				goto cleanup;
			}
	}
	/* a fused Relu/Clip the QuantizeLinear does: it reads the producer's
	 * output instead, and the node goes */
	if (pr && b->on[pr->index] == 2 && (!nf || forced) && absorbable(b, pr, t) && pr->inputs[0] &&
	    rw_single_use(pr->inputs[0])) {
		if (ir_node_set_input(qn, 0, pr->inputs[0]) < 0) {
			rc = ir_diag_error(b->d, IR_ENOMEM, "out of memory");
			goto cleanup;
		}
		b->drop[b->n_drop++] = pr;
	}
	if (b->r) {
		struct qz_tensor info = { 0 };

		info.dtype = p->act_dtype;
		info.axis = -1;
		info.n = 1;
		info.scale = info.scale_min = info.scale_max = t->scale;
		info.zero_point = t->zp;
		info.min = t->seen ? t->min : 0;
		info.max = t->seen ? t->max : 0;
		info.lo = fmin(t->glo, 0);
		info.hi = fmax(t->ghi, 0);
		info.group = t->group;
		info.shared = t->shared;
		rc = report_tensor(b, t->name, "activation", &info);
	}
cleanup:
	free(qs);
	free(fs);
	return rc;
}

int qz_build_qdq(struct qz_ctx *q, struct rw_ctx *c, const unsigned char *fl, struct ir_diag *d)
{
	const struct qz_plan *p = &q->plan;
	struct qbuild b = { .q = q, .c = c, .g = c->m->graph, .d = d };
	int rc = 0;

	b.r = q->collect ? q->r : NULL;
	if (b.g->n_nodes != p->n_nodes)
		return ir_diag_error(d, IR_EINTERNAL, "quantize: the model changed under the plan");
	for (size_t i = 0; i < p->n_nodes; i++)
		if (strcmp(ir_s(b.g->nodes[i]->op_type), p->op_names[i]))
			return ir_diag_error(d, IR_EINTERNAL, "quantize: the model changed under the plan");
	if (!(b.on = calloc(p->n_nodes + 1, 1)) ||
	    !(b.drop = calloc(p->n_nodes + 1, sizeof(*b.drop)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	qz_units_on(p, b.g, fl, b.on);
	for (size_t i = 0; i < p->n_nodes && rc == 0; i++)
		if (b.on[i] == 1)
			rc = unit_inputs(&b, i);
	for (size_t i = 0; i < p->n_tens && rc == 0; i++)
		if (!p->tens[i].is_const)
			rc = act(&b, i);
	for (size_t i = 0; i < b.n_drop && rc == 0; i++)
		ir_graph_remove_node(b.g, b.drop[i]);
	if (rc == 0)
		rc = rw_dt_finish(c, b.g);
	if (rc == 0)
		rc = rw_refresh(c);
cleanup:
	for (size_t i = 0; i < b.n_wc; i++)
		free(b.wc[i].scales);
	free(b.wc);
	free(b.drop);
	free(b.on);
	return rc;
}
