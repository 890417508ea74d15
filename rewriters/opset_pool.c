/* opset_pool.c: adapters of the pooling ops (see opset_int.h): ceil_mode
 * and MaxPool's dilations, which came at 10, lowered below it where the
 * older ops compute the same (more end padding for ceil_mode, a Pad in
 * front when count_include_pad counts the explicit pads; a Max over
 * shifted, strided Slices for dilations), and dilations that came later
 * (AveragePool 19, LpPool 18), which must be 1 to go below. */
#include <stdio.h>
#include <string.h>

#include "rewriters/opset_int.h"

#define MAX_SP 3        /* spatial dims lowered */

struct pool {
	int r;                          /* rank of X */
	int64_t in[MAX_SP + 2];         /* X's dims */
	int64_t k[MAX_SP], s[MAX_SP], d[MAX_SP], pads[2 * MAX_SP];
};

/* The geometry of a pooling node with a static input and explicit (or
 * no) pads; 0 with the reason otherwise. */
static int pool_geometry(struct rw_ctx *c, const struct ir_node *n, struct pool *p,
			 char *why, size_t size)
{
	size_t nk, ns, nd, np;
	const int64_t *k = rw_attr_ints(n, "kernel_shape", &nk);
	const int64_t *s = rw_attr_ints(n, "strides", &ns);
	const int64_t *d = rw_attr_ints(n, "dilations", &nd);
	const int64_t *pd = rw_attr_ints(n, "pads", &np);
	const char *ap = rw_attr_str(n, "auto_pad", "NOTSET");
	int sp;

	if (strcmp(ap, "NOTSET")) {
		snprintf(why, size, "auto_pad %s", ap);
		return 0;
	}
	if (!n->n_inputs || !rw_static_shape(c, n->inputs[0], p->in, &p->r) || p->r < 3 ||
	    p->r > MAX_SP + 2) {
		snprintf(why, size, "the input's shape is not static (or not 1 to %d spatial dims)",
			 MAX_SP);
		return 0;
	}
	sp = p->r - 2;
	if (!k || nk != (size_t)sp || (s && ns != (size_t)sp) || (d && nd != (size_t)sp) ||
	    (pd && np != 2 * (size_t)sp)) {
		snprintf(why, size, "kernel_shape, strides, dilations or pads of the wrong length");
		return 0;
	}
	for (int i = 0; i < sp; i++) {
		p->k[i] = k[i];
		p->s[i] = s ? s[i] : 1;
		p->d[i] = d ? d[i] : 1;
		p->pads[i] = pd ? pd[i] : 0;
		p->pads[sp + i] = pd ? pd[sp + i] : 0;
		if (p->k[i] < 1 || p->s[i] < 1 || p->d[i] < 1) {
			snprintf(why, size, "kernel, stride or dilation below 1");
			return 0;
		}
	}
	return 1;
}

/* ceil_mode 1 as end padding: each spatial dim gets what the last window
 * reaches past the input and its pads, so that the floor of the older op
 * gives the ceiling's count.  Not when that last window would start in
 * the end padding (runtimes then drop it), or AveragePool counts explicit
 * pads that a Pad must then make real (done when count_include_pad is 1
 * and pads are not all zero). */
static int pool_ceil(struct rw_ctx *c, struct ir_node *n, int apply, char *why, size_t size)
{
	struct pool p;
	int64_t extra[MAX_SP], pads[2 * MAX_SP];
	int sp, avg = !strcmp(ir_s(n->op_type), "AveragePool");
	int cip = avg && rw_attr_int(n, "count_include_pad", 0);
	int padded = 0;

	if (!pool_geometry(c, n, &p, why, size))
		return 0;
	sp = p.r - 2;
	for (int i = 0; i < sp; i++) {
		int64_t eff = (p.k[i] - 1) * p.d[i] + 1;
		int64_t span = p.in[i + 2] + p.pads[i] + p.pads[sp + i] - eff;
		int64_t out_f, out_c;

		if (span < 0) {
			snprintf(why, size, "the kernel is larger than the padded input");
			return 0;
		}
		out_f = span / p.s[i] + 1;
		out_c = (span + p.s[i] - 1) / p.s[i] + 1;
		if (out_c > out_f && (out_c - 1) * p.s[i] >= p.in[i + 2] + p.pads[i]) {
			snprintf(why, size, "ceil_mode with a last window starting in the padding");
			return 0;
		}
		extra[i] = out_c > out_f ? (out_c - 1) * p.s[i] + eff -
					   (p.in[i + 2] + p.pads[i] + p.pads[sp + i]) : 0;
		padded |= p.pads[i] || p.pads[sp + i];
	}
	if (!apply)
		return 1;
	if (cip && padded) {
		/* the explicit pads made real zeros by a Pad in front (the
		 * opset is below 10 here: Pad-2, pads as an attribute) */
		int64_t all[2 * (MAX_SP + 2)] = { 0 };
		struct ir_value *x = n->inputs[0];
		struct ir_node *pad;
		struct rw_emit e;

		for (int i = 0; i < sp; i++) {
			all[2 + i] = p.pads[i];
			all[p.r + 2 + i] = p.pads[sp + i];
			p.pads[i] = p.pads[sp + i] = 0;
		}
		memset(&e, 0, sizeof(e));
		e.c = c;
		e.g = n->graph;
		e.pos = n->index;
		snprintf(e.base, sizeof(e.base), "%.120s", n->name && *n->name ? n->name : "pool");
		pad = rw_node(&e, "Pad", NULL, &x, 1, NULL);
		if (!pad || ir_node_set_ints(pad, "pads", all, 2 * (size_t)p.r) < 0 ||
		    ir_node_set_input(n, 0, pad->outputs[0]) < 0)
			return IR_ENOMEM;
	}
	for (int i = 0; i < sp; i++) {
		pads[i] = p.pads[i];
		pads[sp + i] = p.pads[sp + i] + extra[i];
	}
	if (ir_node_set_ints(n, "pads", pads, 2 * (size_t)sp) < 0 ||
	    (cip && ir_node_set_int(n, "count_include_pad", 0) < 0))
		return IR_ENOMEM;
	ir_node_remove_attr(n, "ceil_mode");
	return 1;
}

/* A dilated MaxPool (no pads) as the Max of one strided view per kernel
 * offset: Slice from offset x dilation over the span the windows start
 * in, then a 1-wide MaxPool with the strides when a stride is above 1. */
static int maxpool_dilated(struct rw_ctx *c, struct ir_node *n, int apply, char *why,
			   size_t size)
{
	struct pool p;
	int64_t out[MAX_SP], axes[MAX_SP], ones[MAX_SP], off[MAX_SP] = { 0 };
	struct ir_value *views[16], *x, *y;
	size_t n_views = 1;
	int sp, strided = 0;
	struct rw_emit e;

	if (!pool_geometry(c, n, &p, why, size))
		return 0;
	sp = p.r - 2;
	for (int i = 0; i < sp; i++) {
		if (p.pads[i] || p.pads[sp + i]) {
			snprintf(why, size, "dilations with pads");
			return 0;
		}
		out[i] = (p.in[i + 2] - ((p.k[i] - 1) * p.d[i] + 1)) / p.s[i] + 1;
		if (out[i] < 1) {
			snprintf(why, size, "the kernel is larger than the input");
			return 0;
		}
		n_views *= (size_t)p.k[i];
		strided |= p.s[i] > 1;
		axes[i] = i + 2;
		ones[i] = 1;
	}
	if (n_views > 16) {
		snprintf(why, size, "dilations with a kernel of more than 16 elements");
		return 0;
	}
	if (n->n_outputs > 1 && n->outputs[1] && rw_value_used(n->outputs[1])) {
		snprintf(why, size, "dilations with the Indices output used");
		return 0;
	}
	if (!apply)
		return 1;
	x = n->inputs[0];
	y = n->outputs[0];
	rw_begin(c, n, &e);
	for (size_t v = 0; v < n_views; v++) {
		int64_t st[MAX_SP], en[MAX_SP];
		struct ir_node *sl;
		struct ir_value *view;

		for (int i = 0; i < sp; i++) {
			st[i] = off[i] * p.d[i];
			en[i] = st[i] + (out[i] - 1) * p.s[i] + 1;
		}
		sl = rw_node(&e, "Slice", NULL, &x, 1, NULL);   /* Slice-1: attributes */
		if (sl && (ir_node_set_ints(sl, "starts", st, (size_t)sp) < 0 ||
			   ir_node_set_ints(sl, "ends", en, (size_t)sp) < 0 ||
			   ir_node_set_ints(sl, "axes", axes, (size_t)sp) < 0))
			e.failed = 1;
		view = sl ? sl->outputs[0] : NULL;
		if (strided && view) {
			struct ir_node *mp = rw_node(&e, "MaxPool", NULL, &view, 1, NULL);

			if (mp && (ir_node_set_ints(mp, "kernel_shape", ones, (size_t)sp) < 0 ||
				   ir_node_set_ints(mp, "strides", p.s, (size_t)sp) < 0))
				e.failed = 1;
			view = mp ? mp->outputs[0] : NULL;
		}
		views[v] = view;
		for (int i = sp; i-- > 0;)      /* the next offset, last axis fastest */
			if (++off[i] < p.k[i])
				break;
			else
				off[i] = 0;
	}
	if (!e.failed)
		rw_node(&e, n_views > 1 ? "Max" : "Identity", NULL, views, n_views, y);
	return rw_end(&e, 0) < 0 ? IR_ENOMEM : RW_ADAPT_REPLACED;
}

/* AveragePool and MaxPool at 10: ceil_mode (both) and dilations
 * (MaxPool) came. */
int rw_adapt_pool10(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why,
		    size_t size)
{
	size_t nd;
	const int64_t *d = rw_attr_ints(n, "dilations", &nd);
	int dilated = 0, ceil = (int)rw_attr_int(n, "ceil_mode", 0);

	if (up)
		return 1;
	for (size_t i = 0; d && i < nd; i++)
		dilated |= d[i] != 1;
	if (dilated && ceil) {
		snprintf(why, size, "ceil_mode with dilations");
		return 0;
	}
	if (dilated)
		return maxpool_dilated(c, n, apply, why, size);
	if (ceil) {
		int rc = pool_ceil(c, n, apply, why, size);

		if (rc <= 0 || !apply)
			return rc;
	}
	if (apply) {
		ir_node_remove_attr(n, "ceil_mode");
		ir_node_remove_attr(n, "dilations");
	}
	return 1;
}

/* Dilations that came later (AveragePool 19, LpPool 18): only ones go. */
int rw_adapt_pool_dilations(struct rw_ctx *c, struct ir_node *n, int up, int apply,
			    char *why, size_t size)
{
	size_t nd;
	const int64_t *d = rw_attr_ints(n, "dilations", &nd);

	(void)c;
	if (up)
		return 1;
	for (size_t i = 0; d && i < nd; i++)
		if (d[i] != 1) {
			snprintf(why, size, "dilations other than 1");
			return 0;
		}
	if (apply)
		ir_node_remove_attr(n, "dilations");
	return 1;
}
