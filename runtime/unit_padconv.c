/* unit_padconv.c: a Pad of zeros whose only reader is a Conv, done by
 * the Conv's own padding.  A constant Pad (value 0, or none) of the
 * spatial axes alone, by non-negative amounts, before a Conv with
 * explicit pads (auto_pad NOTSET) is the Conv with those amounts added to
 * its pads: the windows see the same zeros (pointpillars' Pad before its
 * first convolution copied a 64 x 256 x 256 plane each run, 4 ms;
 * tf2onnx writes one before each strided convolution of a "SAME" layer;
 * onnxruntime folds them so too).  The unit is the Conv's kernel on a
 * copy of its node: the Pad's input, the Conv's other inputs, its
 * attributes with the summed pads; the Pad not run (skip), the Conv's
 * epilogue chain kept (chain_from).  As every unit, only in runs that
 * do the graph's nodes their own way: --exact and the layer-by-layer
 * observers run the Pad and the Conv as written. */
#include <stdlib.h>
#include <string.h>

#include "runtime/qdq_int.h"

static const char *str_attr(const struct ir_node *n, const char *name, const char *dflt)
{
	const struct ir_attr *a = ir_node_attr(n, name);

	return a && a->type == IR_ATTR_STRING && a->s ? (const char *)a->s : dflt;
}

/* Is v one value, of any dtype, equal to zero (or absent)? */
static int zero_value(const struct rt_session *s, struct rt_gplan *p, const struct ir_value *v)
{
	const struct rt_value *c;

	if (!v)
		return 1;
	c = rt_qdq_init_val(s, p, v);
	return c && c->kind == RT_TENSOR && c->numel == 1 && c->dtype != IR_DTYPE_STRING &&
	       rt_load_f64(c->dtype, c->data, 0) == 0.0;
}

/* Pad node d's amounts (2 rank of them: begins, then ends) into pads:
 * 0, or -1 when they are not a constant Pad of zeros this unit takes. */
static int pad_amounts(const struct rt_session *s, struct rt_gplan *p, const struct ir_node *d,
		       int rank, int64_t *pads)
{
	const struct rt_nplan *dp = &p->nodes[d->index];
	int since = dp->schema ? (int)dp->schema->since_version : 0;

	if (strcmp(str_attr(d, "mode", "constant"), "constant") || d->n_outputs != 1)
		return -1;
	if (since < 11) {
		const struct ir_attr *a = ir_node_attr(d, "pads"), *v = ir_node_attr(d, "value");

		if (!a || a->type != IR_ATTR_INTS || a->n_ints != (size_t)(2 * rank) ||
		    (v && (v->type != IR_ATTR_FLOAT || v->f != 0.0f)))
			return -1;
		memcpy(pads, a->ints, (size_t)(2 * rank) * sizeof(*pads));
	} else {
		const struct rt_value *c;

		/* opset 18's axes input: not taken */
		if (d->n_inputs < 2 || !d->inputs[1] || (d->n_inputs > 3 && d->inputs[3]) ||
		    !(c = rt_qdq_init_val(s, p, d->inputs[1])) || c->kind != RT_TENSOR ||
		    c->dtype != IR_DTYPE_INT64 || c->numel != 2 * rank ||
		    !zero_value(s, p, d->n_inputs > 2 ? d->inputs[2] : NULL))
			return -1;
		memcpy(pads, c->data, (size_t)(2 * rank) * sizeof(*pads));
	}
	for (int i = 0; i < 2 * rank; i++)
		if (pads[i] < 0 || ((i % rank) < 2 && pads[i]))
			return -1;
	return 0;
}

static char pads_name[] = "pads";

struct rt_qdq *rt_unit_padconv_at(struct rt_session *s, struct rt_gplan *p, size_t i)
{
	struct rt_nplan *h = &p->nodes[i], *dp;
	const struct ir_node *n = h->node, *d;
	const struct ir_attr *cp;
	const struct ir_value *x;
	int64_t pads[2 * RT_MAX_RANK];
	struct rt_qdq *u;
	size_t k = 0;
	int rank, ns;

	if (!rt_qdq_is_op(n, "Conv") || !h->kernel || h->fold != RT_FOLD_NONE || h->n_subs ||
	    n->n_inputs < 2 || !(x = n->inputs[0]) || !x->producer || x->n_uses != 1 ||
	    ir_graph_is_output(p->g, x) || strcmp(str_attr(n, "auto_pad", "NOTSET"), "NOTSET"))
		return NULL;
	d = x->producer;
	if (d->graph != p->g || !rt_qdq_is_op(d, "Pad") || d->n_inputs < 1 || !d->inputs[0] ||
	    !(dp = rt_plan_node(p, d)) || !dp->kernel || dp->fold != RT_FOLD_NONE || dp->qdq)
		return NULL;
	/* the rank: the weight's (a constant's, or the value's declared) */
	{
		const struct rt_value *w = rt_qdq_init_val(s, p, n->inputs[1]);

		if (!w || w->kind != RT_TENSOR || w->rank < 3 || w->rank > RT_MAX_RANK)
			return NULL;
		rank = w->rank;
	}
	ns = rank - 2;
	if (pad_amounts(s, p, d, rank, pads) < 0)
		return NULL;
	cp = ir_node_attr(n, "pads");
	if (cp && (cp->type != IR_ATTR_INTS || cp->n_ints != (size_t)(2 * ns)))
		return NULL;
	if (!(u = rt_qdq_unit_new(n, n->n_inputs)) ||
	    !(u->attrs = calloc(n->n_attrs + 1, sizeof(*u->attrs)))) {
		rt_qdq_unit_free(u);
		return NULL;
	}
	for (size_t j = 0; j < n->n_inputs; j++)
		u->ins[j] = n->inputs[j];
	u->ins[0] = d->inputs[0];
	u->outs[0] = n->outputs[0];
	/* the Conv's attributes, its pads the sums (begins of the spatial
	 * axes, then their ends) */
	for (int a = 0; a < ns; a++) {
		u->pads_v[a] = (cp ? cp->ints[a] : 0) + pads[2 + a];
		u->pads_v[ns + a] = (cp ? cp->ints[ns + a] : 0) + pads[rank + 2 + a];
	}
	u->pads = (struct ir_attr){ .name = pads_name, .type = IR_ATTR_INTS,
				    .n_ints = (size_t)(2 * ns), .ints = u->pads_v };
	for (size_t j = 0; j < n->n_attrs; j++)
		if (n->attrs[j] != cp)
			u->attrs[k++] = n->attrs[j];
	u->attrs[k++] = &u->pads;
	u->node.attrs = u->attrs;
	u->node.n_attrs = k;
	u->kernel = *h->kernel;
	u->skip[0] = d->index;
	u->chain_from = i;
	if (rt_qdq_unit_plan(p, i, u) < 0) {
		rt_qdq_unit_free(u);
		return NULL;
	}
	u->np.schema = h->schema;
	return u;
}
