/* quant_qop.c: the QOperator form, from the QDQ form: a Conv or MatMul
 * whose data inputs come from DequantizeLinear (per-tensor activations,
 * per-tensor or per-output-channel constant weights, an int32 bias) and
 * whose output only a QuantizeLinear reads becomes QLinearConv or
 * QLinearMatMul on the quantized values, writing the QuantizeLinear's
 * output.  ai.onnx has no QLinear form of the other ops (Add, pools,
 * Concat, Gemm): they stay in QDQ form around float ops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/dtype_int.h"
#include "rewriters/quant_int.h"

static int is_op(const struct ir_node *n, const char *op)
{
	return n && !strcmp(ir_s(n->op_type), op) && (!n->domain || !*n->domain ||
						       !strcmp(n->domain, "ai.onnx"));
}

/* The DequantizeLinear (or QuantizeLinear) making v, per tensor or (axis
 * >= 0 wanted) per channel along axis; NULL otherwise. */
static struct ir_node *qnode(const struct rw_ctx *c, const struct ir_value *v, const char *op,
			     int axis, int want_const)
{
	struct ir_node *n = v ? v->producer : NULL;
	double numel;

	if (!is_op(n, op) || n->n_inputs < 3 || !n->inputs[1] || !n->inputs[2] ||
	    !rw_is_const(c, n->inputs[1]) || !rw_is_const(c, n->inputs[2]))
		return NULL;
	if (want_const && !rw_is_const(c, n->inputs[0]))
		return NULL;
	numel = rw_static_numel(c, n->inputs[1]);
	if (numel == 1 && rw_rank(c, n->inputs[1]) == 0)
		return n;
	return axis >= 0 && rw_attr_int(n, "axis", 1) == axis ? n : NULL;
}

/* The only reader of y when it is a per-tensor QuantizeLinear. */
static struct ir_node *out_q(const struct rw_ctx *c, struct ir_value *y)
{
	struct ir_node *u;

	if (!y || y->n_uses != 1 || ir_graph_is_output(y->graph, y))
		return NULL;
	u = y->uses[0];
	if (!is_op(u, "QuantizeLinear") || u->inputs[0] != y || u->n_inputs < 3 || !u->inputs[2] ||
	    !rw_is_const(c, u->inputs[1]) || rw_rank(c, u->inputs[1]) != 0 ||
	    !rw_is_const(c, u->inputs[2]))
		return NULL;
	return u;
}

static int convert(struct rw_ctx *c, struct ir_node *n, struct ir_diag *d)
{
	struct ir_graph *g = c->m->graph;
	int conv = is_op(n, "Conv");
	int wrank = n->n_inputs > 1 && n->inputs[1] ? rw_rank(c, n->inputs[1]) : -1;
	struct ir_node *dx, *dw, *db = NULL, *qy, *nn;
	struct ir_value *in[9], *y;
	size_t k = 0;
	char name[300];

	if (n->n_inputs < 2 || !(dx = qnode(c, n->inputs[0], "DequantizeLinear", -1, 0)) ||
	    !(dw = qnode(c, n->inputs[1], "DequantizeLinear", conv ? 0 : wrank == 2 ? 1 : -1,
			 conv)) ||
	    !(qy = out_q(c, n->outputs[0])))
		return 0;
	if (conv && n->n_inputs > 2 && n->inputs[2] &&
	    (!(db = qnode(c, n->inputs[2], "DequantizeLinear", 0, 1)) ||
	     rw_dt_dtype(c, db->inputs[0]) != IR_DTYPE_INT32))
		return 0;
	in[k++] = dx->inputs[0];
	in[k++] = dx->inputs[1];
	in[k++] = dx->inputs[2];
	in[k++] = dw->inputs[0];
	in[k++] = dw->inputs[1];
	in[k++] = dw->inputs[2];
	in[k++] = qy->inputs[1];
	in[k++] = qy->inputs[2];
	if (db)
		in[k++] = db->inputs[0];
	snprintf(name, sizeof(name), "%.280s_quant", *ir_s(n->name) ? ir_s(n->name) :
		 ir_s(qy->outputs[0]->name));
	if (!(nn = qz_node_new(g, conv ? "QLinearConv" : "QLinearMatMul", name)))
		goto oom;
	for (size_t i = 0; i < k; i++)
		if (ir_node_append_input(nn, in[i]) < 0)
			goto oom;
	for (size_t i = 0; conv && i < n->n_attrs; i++)
		if (ir_node_copy_attr(nn, n->attrs[i]->name, n->attrs[i]) < 0)
			goto oom;
	y = qy->outputs[0];
	ir_graph_remove_node(g, qy);
	if (ir_node_append_output(nn, y) < 0 || ir_graph_insert_node(g, nn, n->index) < 0)
		goto oom;
	nn = NULL;
	ir_graph_remove_node(g, n);
	return 1;
oom:
	ir_node_free(nn);
	return ir_diag_error(d, IR_ENOMEM, "out of memory");
}

int qz_to_qoperator(struct qz_ctx *q, struct rw_ctx *c, size_t *n_conv, struct ir_diag *d)
{
	struct ir_graph *g = c->m->graph;
	size_t done = 0;
	int rc;

	(void)q;
	for (size_t i = 0; i < g->n_nodes;) {
		struct ir_node *n = g->nodes[i];

		if (!is_op(n, "Conv") && !is_op(n, "MatMul")) {
			i++;
			continue;
		}
		if ((rc = convert(c, n, d)) < 0)
			return rc;
		done += rc;
		i += !rc;        /* a converted node's place holds its QLinear form */
	}
	if (n_conv)
		*n_conv = done;
	if ((rc = ir_graph_toposort(g, d)) < 0)
		return rc;
	return rw_refresh(c);
}
