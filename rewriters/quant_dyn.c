/* quant_dyn.c: dynamic quantization (onnxruntime's quantize_dynamic): the
 * weights of MatMul, Gemm and Conv are stored quantized, and the
 * activation is quantized at run time by DynamicQuantizeLinear:
 *   MatMul(x, W)  ->  MatMulInteger(xq, Wq, xz[, Wz]) -> Cast -> Mul(xs * Ws)
 *   Gemm          ->  the same on B (transposed when transB) + C
 *   Conv(x, W, B) ->  ConvInteger(xq, Wq, xz, Wz) -> Cast -> Mul(xs * Ws) + B
 * MatMul and Gemm weights are int8 (symmetric, per output column unless
 * --per-tensor; --weights uint8 makes them asymmetric), Conv weights
 * uint8 per tensor (the form onnxruntime's ConvInteger runs).  The
 * activation's DynamicQuantizeLinear is shared by every node reading it.
 * No calibration: the activations' ranges are each run's own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/dtype_int.h"
#include "rewriters/quant_int.h"
#include "runtime/runtime.h"

struct dql {
	struct ir_value *x, *q, *s, *z;
};

struct dyn {
	struct qz_ctx *q;
	struct rw_ctx *c;
	struct ir_graph *g;
	struct dql *dq;
	size_t n_dq;
	struct ir_diag *d;
};

static struct ir_node *node(struct dyn *b, const char *op, const char *base,
			    struct ir_value *const *in, size_t n_in, struct ir_value *const *out,
			    size_t n_out)
{
	struct ir_node *n;

	(void)base;
	if (!(n = qz_node_new(b->g, op, ir_s(out[0]->name))))
		goto oom;
	for (size_t i = 0; i < n_in; i++)
		if (ir_node_append_input(n, in[i]) < 0)
			goto oom;
	for (size_t i = 0; i < n_out; i++)
		if (ir_node_append_output(n, out[i]) < 0)
			goto oom;
	if (ir_graph_add_node(b->g, n) < 0)
		goto oom;
	return n;
oom:
	ir_node_free(n);
	ir_diag_error(b->d, IR_ENOMEM, "out of memory");
	return NULL;
}

static struct ir_value *value(struct dyn *b, const char *base, const char *suffix)
{
	char hint[300];
	struct ir_value *v;

	snprintf(hint, sizeof(hint), "%.240s_%s", base, suffix);
	if (!(v = ir_graph_new_value(b->g, hint)))
		ir_diag_error(b->d, IR_ENOMEM, "out of memory");
	return v;
}

/* The DynamicQuantizeLinear of x (one per activation). */
static struct dql *quantize_act(struct dyn *b, struct ir_value *x)
{
	struct dql *e, *q;
	struct ir_value *out[3];

	for (size_t i = 0; i < b->n_dq; i++)
		if (b->dq[i].x == x)
			return &b->dq[i];
	if (!(q = realloc(b->dq, (b->n_dq + 1) * sizeof(*q)))) {
		ir_diag_error(b->d, IR_ENOMEM, "out of memory");
		return NULL;
	}
	b->dq = q;
	e = &q[b->n_dq];
	e->x = x;
	if (!(e->q = out[0] = value(b, ir_s(x->name), "quantized")) ||
	    !(e->s = out[1] = value(b, ir_s(x->name), "scale")) ||
	    !(e->z = out[2] = value(b, ir_s(x->name), "zero_point")) ||
	    !node(b, "DynamicQuantizeLinear", ir_s(x->name), &x, 1, out, 3))
		return NULL;
	b->n_dq++;
	return e;
}

/* A float initializer of the given dims holding t's values (transposed
 * 2-D when transpose). */
static struct ir_value *float_init(struct dyn *b, const char *hint, const struct rt_value *t,
				   int rank, const int64_t *dims, int transpose)
{
	struct rt_value *y = NULL;
	struct ir_tensor *it = NULL;
	struct ir_value *v = NULL;

	if (rt_tensor_new(NULL, IR_DTYPE_FLOAT, rank, dims, &y, b->d) < 0)
		return NULL;
	if (transpose)
		for (int64_t r = 0; r < t->dims[0]; r++)
			for (int64_t k = 0; k < t->dims[1]; k++)
				((float *)y->data)[k * t->dims[0] + r] =
					((const float *)t->data)[r * t->dims[1] + k];
	else
		memcpy(y->data, t->data, (size_t)t->numel * sizeof(float));
	if (rt_value_to_ir(y, hint, &it, b->d) == 0 && !(v = ir_graph_add_initializer(b->g, it)))
		ir_diag_error(b->d, IR_ENOMEM, "out of memory");
	rt_value_unref(y);
	return v;
}

/* Quantize one node; 0 when it does not fit the form (left as it is). */
static int one(struct dyn *b, struct ir_node *n, const struct qz_unit *u)
{
	const char *op = ir_s(n->op_type), *base = ir_s(n->name);
	int conv = !strcmp(op, "Conv"), gemm = !strcmp(op, "Gemm");
	struct ir_value *w = n->inputs[1], *wdq = NULL, *wq, *ws, *wz, *yi, *yf, *sc, *y, *out;
	struct ir_value *bias = n->n_inputs > 2 ? n->inputs[2] : NULL, *in[4];
	struct rt_value *wt = NULL, *bt = NULL;
	struct qz_tensor info = { 0 };
	struct ir_node *mm, *cast;
	struct dql *x;
	int wdt, axis, rc;

	if (u->in[0] != QZ_IN_ACT || u->in[1] != QZ_IN_WEIGHT || !(wt = rw_init_value(w)) ||
	    wt->dtype != IR_DTYPE_FLOAT)
		goto skip;
	if (!*base)
		base = ir_s(n->outputs[0]->name);
	if (gemm) {
		/* alpha A B' + C with A not transposed, B a 2-D constant */
		if (rw_attr_int(n, "transA", 0) || rw_attr_float(n, "alpha", 1) != 1 ||
		    (bias && rw_attr_float(n, "beta", 1) != 1) || wt->rank != 2 ||
		    (bias && !rw_is_const(b->c, bias)))
			goto skip;
		if (rw_attr_int(n, "transB", 0)) {
			int64_t dims[2] = { wt->dims[1], wt->dims[0] };
			char hint[300];

			snprintf(hint, sizeof(hint), "%.240s_transposed", ir_s(w->name));
			if (!(w = float_init(b, hint, wt, 2, dims, 1)))
				goto fail;
		}
	}
	if (!strcmp(op, "MatMul") && wt->rank != 2)
		goto skip;
	if (conv && (!(rw_attr_int(n, "group", 1) == 1) || (bias && !(bt = rw_init_value(bias)))))
		goto skip;
	wdt = conv ? IR_DTYPE_UINT8 : b->q->o->weight_dtype ? b->q->o->weight_dtype :
	      IR_DTYPE_INT8;
	if (wdt == IR_DTYPE_INT4)
		wdt = IR_DTYPE_INT8;
	axis = conv || b->q->o->per_tensor ? -1 : 1;
	if ((rc = qz_weight(b->c, w, wdt, axis, wdt == IR_DTYPE_INT8, &wdq, &info, b->d)) < 0)
		goto out;
	if (!wdq)
		goto skip;
	if (b->q->collect) {
		info.kind = "weight";
		if (!(info.name = strdup(ir_s(n->inputs[1]->name))))
			goto oom;
		if (qz_tensor_add(b->q->r, &info, b->d) < 0) {
			free(info.name);
			goto fail;
		}
	}
	wq = wdq->producer->inputs[0];
	ws = wdq->producer->inputs[1];
	wz = wdq->producer->inputs[2];
	if (!(x = quantize_act(b, n->inputs[0])) || !(yi = value(b, base, "int32")) ||
	    !(yf = value(b, base, "float")) || !(sc = value(b, base, "scale")))
		goto fail;
	in[0] = x->q;
	in[1] = wq;
	in[2] = x->z;
	in[3] = wz;
	if (!(mm = node(b, conv ? "ConvInteger" : "MatMulInteger", base, in,
			wdt == IR_DTYPE_INT8 ? 3 : 4, &yi, 1)))
		goto fail;
	for (size_t k = 0; conv && k < n->n_attrs; k++)
		if (ir_node_copy_attr(mm, n->attrs[k]->name, n->attrs[k]) < 0)
			goto oom;
	in[0] = yi;
	if (!(cast = node(b, "Cast", base, in, 1, &yf, 1)))
		goto fail;
	if (ir_node_set_int(cast, "to", IR_DTYPE_FLOAT) < 0)
		goto oom;
	/* the activation's scale times the weight's (one, or per column) */
	in[0] = x->s;
	in[1] = ws;
	if (!node(b, "Mul", base, in, 2, &sc, 1))
		goto fail;
	/* the output keeps its name: the node goes */
	y = n->outputs[0];
	ir_graph_detach_node(b->g, n);
	out = bias ? value(b, base, "unbiased") : y;
	in[0] = yf;
	in[1] = sc;
	if (!out || !node(b, "Mul", base, in, 2, &out, 1))
		goto fail_detached;
	if (bias) {
		struct ir_value *bb = bias;

		if (conv) {
			/* B of [M] broadcast over [N, M, spatial...] */
			int64_t dims[RT_MAX_RANK];
			int rank = wt->rank;
			char hint[300];

			dims[0] = 1;
			dims[1] = bt->numel;
			for (int k = 2; k < rank; k++)
				dims[k] = 1;
			snprintf(hint, sizeof(hint), "%.240s_broadcast", ir_s(bias->name));
			if (!(bb = float_init(b, hint, bt, rank, dims, 0)))
				goto fail_detached;
		}
		in[0] = out;
		in[1] = bb;
		if (!node(b, "Add", base, in, 2, &y, 1))
			goto fail_detached;
	}
	ir_node_free(n);
	rt_value_unref(wt);
	rt_value_unref(bt);
	return 1;
skip:
	rt_value_unref(wt);
	rt_value_unref(bt);
	return 0;
oom:
	ir_diag_error(b->d, IR_ENOMEM, "out of memory");
fail:
	rc = b->d->status ? b->d->status : IR_ENOMEM;
out:
	rt_value_unref(wt);
	rt_value_unref(bt);
	return rc;
fail_detached:
	ir_node_free(n);
	goto fail;
}

int qz_build_dynamic(struct qz_ctx *q, struct rw_ctx *c, const unsigned char *fl,
		     struct ir_diag *d)
{
	const struct qz_plan *p = &q->plan;
	struct dyn b = { .q = q, .c = c, .g = c->m->graph, .d = d };
	struct ir_node **todo;
	size_t *unit, n = 0;
	int rc = 0;

	if (b.g->n_nodes != p->n_nodes)
		return ir_diag_error(d, IR_EINTERNAL, "quantize: the model changed under the plan");
	todo = calloc(p->n_nodes + 1, sizeof(*todo));
	unit = calloc(p->n_nodes + 1, sizeof(*unit));
	if (!todo || !unit) {
		free(todo);
		free(unit);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	/* indices move as nodes go: the nodes are collected first */
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->units[i].candidate && !(fl && fl[i]) && p->units[i].role == QZ_R_WEIGHTED &&
		    strcmp(p->op_names[i], "ConvTranspose")) {
			unit[n] = i;
			todo[n++] = b.g->nodes[i];
		}
	for (size_t k = 0; k < n && rc >= 0; k++)
		rc = one(&b, todo[k], &p->units[unit[k]]);
	free(todo);
	free(unit);
	free(b.dq);
	if (rc < 0)
		return rc;
	if ((rc = rw_dt_finish(c, b.g)) < 0)
		return rc;
	return rw_refresh(c);
}
