/* conv_transpose.c: pass "conv-transpose": ConvTranspose with strides 1
 * and a constant weight as Conv: the kernel is flipped along every
 * spatial axis and its channel axes swapped per group (a new initializer
 * W'[g M/g + m, c, k] = W[g C/g + c, m, K - 1 - k]), the pads become
 * d (K - 1) - pad (plus output_padding at the end), dilations and group
 * are kept, the bias passes through.  Refused: strides other than 1,
 * output_shape, auto_pad SAME_*, pads larger than the dilated kernel
 * (the Conv would need negative pads).  Float data, 1 to 3 spatial axes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"
#include "validators/runtime.h"

#define MAXS 3

struct plan {
	int s;                          /* spatial rank */
	int64_t k[MAXS], dil[MAXS], pads[2 * MAXS];
	int64_t group;
};

static int make_plan(struct rw_ctx *c, const struct ir_node *n, struct plan *p,
		     char *why, size_t size)
{
	size_t ns, np, nd, no;
	const int64_t *st = rw_attr_ints(n, "strides", &ns);
	const int64_t *pd = rw_attr_ints(n, "pads", &np);
	const int64_t *dl = rw_attr_ints(n, "dilations", &nd);
	const int64_t *op = rw_attr_ints(n, "output_padding", &no);
	const char *ap = rw_attr_str(n, "auto_pad", "NOTSET");
	int64_t wd[IR_INFER_MAX_RANK];
	int r = rw_rank(c, n->inputs[0]), wr;

	if (r < 3 || r > 2 + MAXS) {
		snprintf(why, size, "needs a known rank 3 to 5");
		return 0;
	}
	if (n->n_inputs < 2 || !n->inputs[1] || !n->inputs[1]->init || n->inputs[1]->is_input ||
	    !rw_static_shape(c, n->inputs[1], wd, &wr) || wr != r) {
		snprintf(why, size, "the weight is not a constant initializer");
		return 0;
	}
	if (ir_node_attr(n, "output_shape")) {
		snprintf(why, size, "output_shape is set");
		return 0;
	}
	if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) {
		snprintf(why, size, "auto_pad %s", ap);
		return 0;
	}
	p->s = r - 2;
	p->group = rw_attr_int(n, "group", 1);
	if (p->group < 1 || wd[0] % p->group) {
		snprintf(why, size, "bad group");
		return 0;
	}
	for (int i = 0; i < p->s; i++) {
		int64_t ext, opad = op && (size_t)i < no ? op[i] : 0;

		if (st && (size_t)i < ns && st[i] != 1) {
			snprintf(why, size, "strides other than 1");
			return 0;
		}
		p->k[i] = wd[2 + i];
		p->dil[i] = dl && (size_t)i < nd ? dl[i] : 1;
		ext = p->dil[i] * (p->k[i] - 1);
		p->pads[i] = ext - (pd && np == 2 * (size_t)p->s && strcmp(ap, "VALID") ? pd[i] : 0);
		p->pads[p->s + i] = ext + opad -
			(pd && np == 2 * (size_t)p->s && strcmp(ap, "VALID") ? pd[p->s + i] : 0);
		if (p->pads[i] < 0 || p->pads[p->s + i] < 0) {
			snprintf(why, size, "pads exceed the dilated kernel (Conv pads would be negative)");
			return 0;
		}
	}
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct plan p;

	return rw_check_float_node(c, n, 1, why, size) && make_plan(c, n, &p, why, size);
}

/* W [C, M/g, k...] -> W' [M, C/g, k...] flipped */
static struct rt_value *flip(const struct plan *p, const struct rt_value *w)
{
	int64_t dims[2 + MAXS], cin = w->dims[0], mg = w->dims[1], cg = cin / p->group;
	int64_t sp = 1;
	struct rt_value *o = NULL;
	struct ir_diag d;

	ir_diag_init(&d);
	for (int i = 0; i < p->s; i++)
		sp *= w->dims[2 + i];
	dims[0] = p->group * mg;
	dims[1] = cg;
	for (int i = 0; i < p->s; i++)
		dims[2 + i] = w->dims[2 + i];
	if (rt_tensor_new(NULL, w->dtype, w->rank, dims, &o, &d) < 0)
		return NULL;
	for (int64_t g = 0; g < p->group; g++)
		for (int64_t m = 0; m < mg; m++)
			for (int64_t ci = 0; ci < cg; ci++)
				for (int64_t k = 0; k < sp; k++) {
					int64_t src = ((g * cg + ci) * mg + m) * sp + (sp - 1 - k);
					int64_t dst = ((g * mg + m) * cg + ci) * sp + k;

					rt_value_set_f64(o, dst, rt_value_get_f64(w, src));
				}
	return o;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct plan p;
	struct rw_emit e;
	struct rt_value *w, *wf = NULL;
	struct ir_value *in[3];
	struct ir_node *conv;
	int64_t ones[MAXS] = { 1, 1, 1 };
	size_t k = 2;
	char why[64];

	(void)v;
	make_plan(c, n, &p, why, sizeof(why));
	w = rw_init_value(n->inputs[1]);
	rw_begin(c, n, &e);
	if (!w || !(wf = flip(&p, w))) {
		rt_value_unref(w);
		return rw_end(&e, ir_diag_error(c->d, IR_ENOMEM, "conv-transpose: cannot read the weight"));
	}
	in[0] = n->inputs[0];
	in[1] = rw_const_value(&e, wf);
	if (n->n_inputs > 2 && n->inputs[2])
		in[k++] = n->inputs[2];
	conv = rw_node(&e, "Conv", NULL, in, k, n->outputs[0]);
	if (conv && (ir_node_set_ints(conv, "kernel_shape", p.k, (size_t)p.s) < 0 ||
		     ir_node_set_ints(conv, "dilations", p.dil, (size_t)p.s) < 0 ||
		     ir_node_set_ints(conv, "strides", ones, (size_t)p.s) < 0 ||
		     ir_node_set_ints(conv, "pads", p.pads, 2 * (size_t)p.s) < 0 ||
		     ir_node_set_int(conv, "group", p.group) < 0))
		e.failed = 1;
	rt_value_unref(w);
	rt_value_unref(wf);
	return rw_end(&e, 0);
}

static const char *const matches[] = { "ConvTranspose", NULL };
static const char *const ops[] = { "Conv", NULL };
static const struct rw_variant variants[] = { { "conv", ops } };
RW_DECOMPOSITION(conv_transpose, "conv-transpose",
		 "ConvTranspose with strides 1 and a constant weight as Conv with the kernel flipped and transposed",
		 matches, variants, check, NULL, apply);
