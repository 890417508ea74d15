/* catbuf.c: concatenations without copies in the main graph.  Inception,
 * GoogLeNet, SqueezeNet and DenseNet join branches with a Concat along
 * the channels; copying the branches into its result is a pass over
 * memory per join.  Instead, each branch's producer writes its result
 * into its place in the Concat's result, allocated once by whichever
 * producer comes first, and the Concat hands that tensor on.
 *
 * The analysis (rt_cat_mark, when the plan is built) finds the Concats
 * whose every input has the Concat as its only consumer and is made by a
 * kernel node (or by a chain, chain.c, whose head then is that node),
 * neither kept across runs (fold.c), nor all of them stored channels
 * last (layout_cl.c).  Shapes are learnt from the run
 * before (rt_cat_record): a producer whose output 0 has the shape and
 * dtype its input had then, in a join of nothing but the last axis' outer
 * dims 1 (the inputs consecutive in the result), gets a view of its
 * region (rt_cat_out, from rt_out_tensor), flagged RT_VALUE_REGION: no
 * other value reads those elements, so it is written like owned data.
 * The Concat kernel (k_slice.c) returns the viewed tensor when its inputs
 * are exactly its consecutive regions, and copies otherwise: a run whose
 * shapes changed, or whose producer wrote elsewhere (in place over a
 * dying input), is still right. */
#include <stdlib.h>
#include <string.h>

#include "runtime/exec_int.h"

struct rt_cat_in {
	int rank;
	int64_t dims[RT_MAX_RANK];
	int64_t off;                        /* first element in the result */
};

struct rt_cat {
	int valid;                          /* the last run's shapes are here */
	int dtype, rank;
	int64_t dims[RT_MAX_RANK];
	size_t n_in;
	struct rt_cat_in in[];
};

/* The node whose output 0 becomes input i of c: its producer, or the head
 * of the chain that producer is a step of; NULL when there is none fit. */
static struct rt_nplan *cat_head(struct rt_gplan *p, const struct ir_node *c, size_t i)
{
	const struct ir_value *v = c->inputs[i];
	const struct ir_node *pn = v ? v->producer : NULL;
	struct rt_nplan *h;

	if (!v || v->n_uses != 1 || ir_graph_is_output(p->g, v) || !rt_plan_node(p, pn))
		return NULL;
	for (size_t j = 0; j < c->n_inputs; j++)
		if (j != i && c->inputs[j] == v)
			return NULL;
	h = &p->nodes[pn->index];
	while (h->chained)
		h = &p->nodes[h->chain_head];
	if (!h->kernel || h->fold != RT_FOLD_NONE || h->n_subs || h->cat_dest ||
	    h->node->n_outputs != 1 || h->node == c)
		return NULL;
	return h;
}

/* Do the heads all store their results channels last (layout_cl.c)?  Then
 * the Concat joins them so (k_slice.c concat_cl), a copy, and its readers
 * get a channels-last result: an Inception block's convolutions, made to
 * write plain regions, and the 1x1 convolutions after the join, reading a
 * plain result on opmig's own kernels, cost more than the copy saved
 * (inception_f16 -10% at one thread, -15% at two; densenet_f16, yolo,
 * shufflenet, segformer_f16, hrnet, ssdlite within the machine's noise). */
static int all_cl(struct rt_nplan *const *heads, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!heads[i]->cl_out)
			return 0;
	return 1;
}

void rt_cat_mark(struct rt_session *s, struct rt_gplan *p)
{
	(void)s;
	for (size_t ci = 0; ci < p->n_nodes; ci++) {
		struct rt_nplan *np = &p->nodes[ci];
		const struct ir_node *c = np->node;
		struct rt_nplan *heads[64];
		size_t n = c->n_inputs;

		if (!np->kernel || np->qdq || strcmp(ir_s(c->op_type), "Concat") ||
		    !rt_default_domain(c) ||
		    np->fold != RT_FOLD_NONE || c->n_outputs != 1 || np->out[0] < 0 ||
		    n < 1 || n > sizeof(heads) / sizeof(heads[0]))
			continue;
		for (size_t i = 0; i < n; i++)
			if (!(heads[i] = cat_head(p, c, i)))
				break;
		for (size_t i = 0; i < n; i++)   /* two inputs from one head */
			for (size_t j = 0; j < i && heads[i]; j++)
				if (heads[j] == heads[i])
					heads[i] = NULL;
		for (size_t i = 0; i < n; i++)
			if (!heads[i])
				n = 0;
		if (n && all_cl(heads, n))
			continue;
		if (!n || !(np->cat = calloc(1, sizeof(*np->cat) + n * sizeof(np->cat->in[0]))))
			continue;
		np->cat->n_in = n;
		for (size_t i = 0; i < n; i++) {
			heads[i]->cat_dest = ci + 1;
			heads[i]->cat_input = i;
		}
		p->n_cats++;
	}
}

void rt_cat_release(struct rt_nplan *np)
{
	free(np->cat);
	np->cat = NULL;
}

void rt_cat_record(struct rt_frame *f, struct rt_nplan *np)
{
	struct rt_cat *cat = np->cat;
	const struct rt_value *y = f->vals[np->out[0]];
	const struct ir_attr *a = rt_frame_attr(f, np->node, "axis");
	int64_t axis = a ? a->i : 1, outer = 1, at = 0;

	cat->valid = 0;
	if (!y || y->kind != RT_TENSOR || y->dtype == IR_DTYPE_STRING || y->rank < 1)
		return;
	if (axis < 0)
		axis += y->rank;
	for (int64_t d = 0; d < axis && d < y->rank; d++)
		outer *= y->dims[d];
	if (outer != 1)
		return;
	for (size_t i = 0; i < cat->n_in; i++) {
		const struct rt_value *x = np->in[i].up == 0 && np->in[i].slot >= 0 ?
					   f->vals[np->in[i].slot] : NULL;

		if (!x || x->kind != RT_TENSOR || x->dtype != y->dtype)
			return;
		cat->in[i].rank = x->rank;
		memcpy(cat->in[i].dims, x->dims, sizeof(x->dims));
		cat->in[i].off = at;
		at += x->numel;
	}
	if (at != y->numel)
		return;
	cat->dtype = y->dtype;
	cat->rank = y->rank;
	memcpy(cat->dims, y->dims, sizeof(y->dims));
	cat->valid = 1;
}

struct rt_value *rt_cat_out(struct rt_kctx *k, size_t i, int dtype, int rank,
			    const int64_t *dims)
{
	struct rt_frame *f = k->f;
	const struct rt_nplan *np = k->np;
	const struct rt_cat *cat;
	const struct rt_cat_in *in;
	struct rt_value **b, *v;
	struct ir_diag sub;

	/* not under an observer, which may hold or replace values */
	if (i != 0 || k->n_out < 1 || !np || !np->cat_dest || !f || !f->catbuf ||
	    k->node != np->node || k->s->o.observe)
		return NULL;
	cat = f->p->nodes[np->cat_dest - 1].cat;
	in = &cat->in[np->cat_input];
	if (!cat->valid || dtype != cat->dtype || rank != in->rank ||
	    (rank && memcmp(dims, in->dims, (size_t)rank * sizeof(*dims))))
		return NULL;
	b = &f->catbuf[np->cat_dest - 1];
	ir_diag_init(&sub);
	/* no room for the whole result: the producers allocate their own */
	if (!*b && rt_tensor_new(k->mem, cat->dtype, cat->rank, cat->dims, b, &sub) < 0)
		return NULL;
	if (!(v = rt_value_alloc()))
		return NULL;
	v->refs = 1;
	v->kind = RT_TENSOR;
	v->dtype = dtype;
	v->rank = rank;
	memcpy(v->dims, dims, (size_t)rank * sizeof(*dims));
	v->numel = rt_numel(rank, dims);
	v->data = (char *)(*b)->data + in->off * (int64_t)rt_dtype_size(dtype);
	v->flags = RT_VALUE_REGION;
	v->base = rt_value_ref(*b);
	if (rt_out_set(k, 0, v) < 0)
		return NULL;
	return v;
}
