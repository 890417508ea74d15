/* kernel_split.c: pass "kernel-split": a Conv whose kernel is larger than
 * the target's rules allow (a "max" on the Conv's kernel_shape attribute)
 * as a sum of Convs with kernels within the limit: the input is padded
 * once (Pad), and for each tile of the kernel (tiles of at most max along
 * each spatial axis) a Conv with that part of the weight (a new
 * initializer) reads the Slice of the padded input the tile sees, with the
 * same strides, dilations and group and no pads; the bias goes to the
 * first.  The sum is the original convolution up to float rounding (the
 * products are summed in another order).  Needs a constant weight, static
 * spatial dims, auto_pad NOTSET or VALID and opset >= 11.
 * AveragePool and MaxPool limits are not split (see the report). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

#define MAXS 3
#define MAX_TILES 64

struct plan {
	int s;                          /* spatial rank */
	int64_t max;
	int64_t in[MAXS], k[MAXS], st[MAXS], dl[MAXS], pb[MAXS], pe[MAXS], out[MAXS];
	int64_t nt[MAXS];               /* tiles per axis */
	int64_t group;
	int padded;
};

static int make_plan(struct rw_ctx *c, const struct ir_node *n, struct plan *p,
		     char *why, size_t size)
{
	int64_t xd[IR_INFER_MAX_RANK], wd[IR_INFER_MAX_RANK], tiles = 1;
	int xr, wr;
	size_t ns, np, nd;
	const int64_t *st = rw_attr_ints(n, "strides", &ns);
	const int64_t *pd = rw_attr_ints(n, "pads", &np);
	const int64_t *dl = rw_attr_ints(n, "dilations", &nd);
	const char *ap = rw_attr_str(n, "auto_pad", "NOTSET");

	memset(p, 0, sizeof(*p));
	if (!(p->max = rw_target_kernel_max(c, "Conv"))) {
		snprintf(why, size, "the target states no Conv kernel size limit");
		return 0;
	}
	if (!rw_static_shape(c, n->inputs[0], xd, &xr) || xr < 3 || xr > 2 + MAXS) {
		snprintf(why, size, "the input's shape is not static (rank 3 to 5)");
		return 0;
	}
	if (n->n_inputs < 2 || !n->inputs[1] || !n->inputs[1]->init || n->inputs[1]->is_input ||
	    !rw_static_shape(c, n->inputs[1], wd, &wr) || wr != xr) {
		snprintf(why, size, "the weight is not a constant initializer");
		return 0;
	}
	if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) {
		snprintf(why, size, "auto_pad %s", ap);
		return 0;
	}
	p->s = xr - 2;
	p->group = rw_attr_int(n, "group", 1);
	for (int i = 0; i < p->s; i++) {
		p->in[i] = xd[2 + i];
		p->k[i] = wd[2 + i];
		p->st[i] = st && (size_t)i < ns ? st[i] : 1;
		p->dl[i] = dl && (size_t)i < nd ? dl[i] : 1;
		if (pd && np == 2 * (size_t)p->s && strcmp(ap, "VALID")) {
			p->pb[i] = pd[i];
			p->pe[i] = pd[p->s + i];
		}
		if (p->pb[i] < 0 || p->pe[i] < 0 || p->st[i] < 1 || p->dl[i] < 1) {
			snprintf(why, size, "negative pads or bad strides");
			return 0;
		}
		p->padded |= p->pb[i] || p->pe[i];
		p->out[i] = (p->in[i] + p->pb[i] + p->pe[i] - p->dl[i] * (p->k[i] - 1) - 1) / p->st[i] + 1;
		if (p->out[i] < 1) {
			snprintf(why, size, "empty output");
			return 0;
		}
		p->nt[i] = (p->k[i] + p->max - 1) / p->max;
		tiles *= p->nt[i];
	}
	if (tiles == 1) {
		snprintf(why, size, "the kernel is within the target's limit %lld", (long long)p->max);
		return 0;
	}
	if (tiles > MAX_TILES) {
		snprintf(why, size, "more than %d tiles", MAX_TILES);
		return 0;
	}
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct plan p;

	if (!rw_check_float_node(c, n, 11, why, size))
		return 0;
	return make_plan(c, n, &p, why, size);
}

/* The tile of w with spatial ranges [lo, lo + len) */
static struct rt_value *tile(const struct plan *p, const struct rt_value *w,
			     const int64_t *lo, const int64_t *len)
{
	int64_t dims[2 + MAXS] = { w->dims[0], w->dims[1] }, total, wsp[MAXS];
	struct rt_value *o = NULL;
	struct ir_diag d;

	ir_diag_init(&d);
	for (int i = 0; i < p->s; i++) {
		dims[2 + i] = len[i];
		wsp[i] = w->dims[2 + i];
	}
	if (rt_tensor_new(NULL, w->dtype, w->rank, dims, &o, &d) < 0)
		return NULL;
	total = o->numel;
	for (int64_t idx = 0; idx < total; idx++) {
		int64_t r = idx, src = 0, mul = 1, pos[MAXS], oc;

		for (int i = p->s - 1; i >= 0; i--) {
			pos[i] = r % len[i];
			r /= len[i];
		}
		oc = r;           /* (out channel, in channel) flattened */
		for (int i = p->s - 1; i >= 0; i--) {
			src += (lo[i] + pos[i]) * mul;
			mul *= wsp[i];
		}
		rt_value_set_f64(o, idx, rt_value_get_f64(w, oc * mul + src));
	}
	return o;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct plan p;
	struct rw_emit e;
	struct rt_value *w;
	struct ir_value *x = n->inputs[0], *sum = NULL;
	int64_t t[MAXS] = { 0 }, tiles = 1, zeros[2 * MAXS] = { 0 };
	char why[64];

	(void)v;
	make_plan(c, n, &p, why, sizeof(why));
	w = rw_init_value(n->inputs[1]);
	rw_begin(c, n, &e);
	if (!w)
		return rw_end(&e, ir_diag_error(c->d, IR_ENOMEM, "kernel-split: cannot read the weight"));
	if (p.padded) {
		int64_t pads[2 * (2 + MAXS)] = { 0 };

		for (int i = 0; i < p.s; i++) {
			pads[2 + i] = p.pb[i];
			pads[2 + p.s + 2 + i] = p.pe[i];
		}
		x = rw_op(&e, "Pad", x, rw_ints(&e, pads, 2 * (2 + (size_t)p.s)));
	}
	for (int i = 0; i < p.s; i++)
		tiles *= p.nt[i];
	for (int64_t k = 0; k < tiles && !e.failed; k++) {
		int64_t lo[MAXS], len[MAXS], starts[MAXS], ends[MAXS], axes[MAXS], r = k;
		struct ir_value *in[3], *sl[4], *y;
		struct rt_value *wt;
		struct ir_node *conv, *s;

		for (int i = p.s - 1; i >= 0; i--) {
			t[i] = r % p.nt[i];
			r /= p.nt[i];
		}
		for (int i = 0; i < p.s; i++) {
			lo[i] = t[i] * p.max;
			len[i] = p.k[i] - lo[i] < p.max ? p.k[i] - lo[i] : p.max;
			starts[i] = lo[i] * p.dl[i];
			ends[i] = starts[i] + (p.out[i] - 1) * p.st[i] + p.dl[i] * (len[i] - 1) + 1;
			axes[i] = 2 + i;
		}
		sl[0] = x;
		sl[1] = rw_ints(&e, starts, (size_t)p.s);
		sl[2] = rw_ints(&e, ends, (size_t)p.s);
		sl[3] = rw_ints(&e, axes, (size_t)p.s);
		s = rw_node(&e, "Slice", NULL, sl, 4, NULL);
		if (!s || !(wt = tile(&p, w, lo, len))) {
			e.failed = 1;
			break;
		}
		in[0] = s->outputs[0];
		in[1] = rw_const_value(&e, wt);
		in[2] = k == 0 && n->n_inputs > 2 ? n->inputs[2] : NULL;
		rt_value_unref(wt);
		conv = rw_node(&e, "Conv", NULL, in, in[2] ? 3 : 2,
			       tiles == 1 ? n->outputs[0] : NULL);
		if (conv && (ir_node_set_ints(conv, "kernel_shape", len, (size_t)p.s) < 0 ||
			     ir_node_set_ints(conv, "strides", p.st, (size_t)p.s) < 0 ||
			     ir_node_set_ints(conv, "dilations", p.dl, (size_t)p.s) < 0 ||
			     ir_node_set_ints(conv, "pads", zeros, 2 * (size_t)p.s) < 0 ||
			     ir_node_set_int(conv, "group", p.group) < 0))
			e.failed = 1;
		y = conv ? conv->outputs[0] : NULL;
		sum = !sum ? y : rw_op_to(&e, "Add", sum, y, k == tiles - 1 ? n->outputs[0] : NULL);
	}
	rt_value_unref(w);
	return rw_end(&e, 0);
}

static const char *const matches[] = { "Conv", NULL };
static const char *const ops[] = { "Pad", "Slice", "Conv", "Add", NULL };
static const struct rw_variant variants[] = { { "tiles", ops } };
RW_DECOMPOSITION(kernel_split, "kernel-split",
		 "Conv with a kernel above the target's kernel_shape limit as a sum of Convs over kernel tiles",
		 matches, variants, check, NULL, apply);
