/* depth_space.c: pass "depth-space": DepthToSpace (modes DCR and CRD) and
 * SpaceToDepth with C, H and W static (N copied by a 0, or -1 where it is
 * merged with the channels), in three forms:
 *   rank 6  Reshape, Transpose, Reshape (for targets whose max_rank allows):
 *     DCR  [N, b, b, C', H, W]  perm 0 3 4 1 5 2  -> [N, C', H b, W b]
 *     CRD  [N, C', b, b, H, W]  perm 0 1 4 2 5 3  -> [N, C', H b, W b]
 *     S2D  [N, C, H', b, W', b] perm 0 3 5 1 2 4  -> [N, C b b, H', W']
 *   rank 4  two rank-4 Transposes, each moving one block of axes:
 *     DCR  [N, b, b, C'HW] 0 1 3 2, [N, b, C'H, W b] 0 2 1 3 -> [N, C', H b, W b]
 *     CRD  [-1, b, b, HW] 0 1 3 2, [-1, b, H, W b] 0 2 1 3 -> [N, C', H b, W b]
 *     S2D  [N, C H', b, W' b] 0 2 1 3, [N, b, C H' W', b] 0 1 3 2 -> [N, b b C, H', W']
 *   one-hot  a ConvTranspose (DepthToSpace) or Conv (SpaceToDepth) with
 *     kernel and stride b and a constant 0/1 weight (C^2 or C^2 b^4
 *     elements, at most 2^22): float data only, and exact for finite
 *     values only (an inf or NaN spreads through the zero weights). */
#include <stdio.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

struct plan {
	int64_t c, h, w, b;
	int s2d, crd;
};

static int make_plan(struct rw_ctx *c, const struct ir_node *n, struct plan *p,
		     char *why, size_t size)
{
	const struct ir_vtype *t = n->n_inputs && n->inputs[0] ? rw_type(c, n->inputs[0]) : NULL;
	const char *mode = rw_attr_str(n, "mode", "DCR");

	p->s2d = !strcmp(ir_s(n->op_type), "SpaceToDepth");
	p->crd = !p->s2d && !strcmp(mode, "CRD");
	p->b = rw_attr_int(n, "blocksize", 0);
	if (!t || t->rank != 4 || !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "needs a 4-D input");
		return 0;
	}
	if (!p->s2d && strcmp(mode, "DCR") && strcmp(mode, "CRD")) {
		snprintf(why, size, "unknown mode '%s'", mode);
		return 0;
	}
	for (int i = 1; i < 4; i++)
		if (t->dims[i].kind != IR_VDIM_VALUE || t->dims[i].value < 1) {
			snprintf(why, size, "C, H and W are not static");
			return 0;
		}
	p->c = t->dims[1].value;
	p->h = t->dims[2].value;
	p->w = t->dims[3].value;
	if (p->b < 1 || (p->s2d ? p->h % p->b || p->w % p->b : p->c % (p->b * p->b))) {
		snprintf(why, size, "blocksize %lld does not divide the %s", (long long)p->b,
			 p->s2d ? "spatial dims" : "channels");
		return 0;
	}
	return 1;
}

#define MAX_ONEHOT (INT64_C(1) << 22)

static int64_t onehot_size(const struct plan *p)
{
	return p->s2d ? p->c * p->c * p->b * p->b * p->b * p->b : p->c * p->c;
}

/* variants: 0 rank 6, 1 rank 4, 2 Conv (S2D), 3 ConvTranspose (D2S) */
static int vcheck_plan(struct rw_ctx *c, const struct ir_node *n, const struct plan *p, int v)
{
	int max_rank = c->target ? c->target->max_rank : -1;

	switch (v) {
	case 0:
		return max_rank < 0 || max_rank >= 6;
	case 1:
		return 1;
	default:
		return (v == 2) == p->s2d && rw_dtype_is_float(rw_node_dtype(c, n)) &&
		       onehot_size(p) <= MAX_ONEHOT;
	}
}

static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	struct plan p;
	char why[64];

	return make_plan(c, n, &p, why, sizeof(why)) && vcheck_plan(c, n, &p, v);
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct plan p;

	if (c->opset < 5) {
		snprintf(why, size, "needs opset >= 5");
		return 0;
	}
	return make_plan(c, n, &p, why, size);
}

static int apply_rank6(struct rw_emit *e, const struct plan *p, struct ir_value *x,
		       struct ir_value *out)
{
	static const int64_t p_dcr[6] = { 0, 3, 4, 1, 5, 2 }, p_crd[6] = { 0, 1, 4, 2, 5, 3 },
			     p_s2d[6] = { 0, 3, 5, 1, 2, 4 };
	int64_t s6[6], s4[4], b = p->b;
	const int64_t *perm;

	if (p->s2d) {
		int64_t a[6] = { 0, p->c, p->h / b, b, p->w / b, b };
		int64_t o[4] = { 0, p->c * b * b, p->h / b, p->w / b };

		memcpy(s6, a, sizeof(s6));
		memcpy(s4, o, sizeof(s4));
		perm = p_s2d;
	} else {
		int64_t cc = p->c / (b * b);
		int64_t dcr[6] = { 0, b, b, cc, p->h, p->w }, crd[6] = { 0, cc, b, b, p->h, p->w };
		int64_t o[4] = { 0, cc, p->h * b, p->w * b };

		memcpy(s6, p->crd ? crd : dcr, sizeof(s6));
		memcpy(s4, o, sizeof(s4));
		perm = p->crd ? p_crd : p_dcr;
	}
	x = rw_transpose(e, rw_reshape(e, x, s6, 6, NULL), perm, 6, NULL);
	rw_reshape(e, x, s4, 4, out);
	return 0;
}

static int apply_rank4(struct rw_emit *e, const struct plan *p, struct ir_value *x,
		       struct ir_value *out)
{
	static const int64_t swap_last[4] = { 0, 1, 3, 2 }, swap_mid[4] = { 0, 2, 1, 3 };
	int64_t b = p->b, h = p->h, w = p->w;

	if (p->s2d) {
		int64_t c = p->c, r1[4] = { 0, c * (h / b), b, w }, r2[4] = { 0, b, c * (h / b) * (w / b), b };
		int64_t r3[4] = { 0, b * b * c, h / b, w / b };

		x = rw_transpose(e, rw_reshape(e, x, r1, 4, NULL), swap_mid, 4, NULL);
		x = rw_transpose(e, rw_reshape(e, x, r2, 4, NULL), swap_last, 4, NULL);
		rw_reshape(e, x, r3, 4, out);
	} else {
		int64_t cc = p->c / (b * b), lead = p->crd ? -1 : 0;
		int64_t r1[4] = { lead, b, b, (p->crd ? 1 : cc) * h * w };
		int64_t r2[4] = { lead, b, (p->crd ? 1 : cc) * h, w * b };
		int64_t r3[4] = { p->crd ? -1 : 0, cc, h * b, w * b };

		x = rw_transpose(e, rw_reshape(e, x, r1, 4, NULL), swap_last, 4, NULL);
		x = rw_transpose(e, rw_reshape(e, x, r2, 4, NULL), swap_mid, 4, NULL);
		rw_reshape(e, x, r3, 4, out);
	}
	return 0;
}

/* S2D: Conv weight [C b b, C, b, b], W[(i b + j) C + c, c, i, j] = 1;
 * D2S: ConvTranspose weight [C, C', b, b], W[ch(c', i, j), c', i, j] = 1 */
static int apply_onehot(struct rw_emit *e, const struct plan *p, struct ir_value *x,
			struct ir_value *out)
{
	int64_t b = p->b, cc = p->s2d ? p->c : p->c / (b * b), ks[2] = { b, b };
	int64_t dims[4] = { p->s2d ? p->c * b * b : p->c, cc, b, b };
	struct rt_value *t = NULL;
	struct ir_value *in[2];
	struct ir_node *cv;
	struct ir_diag d;

	ir_diag_init(&d);
	if (rt_tensor_new(NULL, e->dtype, 4, dims, &t, &d) < 0) {
		e->failed = 1;
		return 0;
	}
	memset(t->data, 0, (size_t)t->numel * rt_dtype_size(e->dtype));
	for (int64_t c = 0; c < cc; c++)
		for (int64_t i = 0; i < b; i++)
			for (int64_t j = 0; j < b; j++) {
				int64_t o = p->s2d ? (i * b + j) * cc + c :
					    p->crd ? c * b * b + i * b + j : (i * b + j) * cc + c;

				rt_value_set_f64(t, ((o * cc + c) * b + i) * b + j, 1);
			}
	in[0] = x;
	in[1] = rw_const_value(e, t);
	rt_value_unref(t);
	cv = rw_node(e, p->s2d ? "Conv" : "ConvTranspose", NULL, in, 2, out);
	if (cv && (ir_node_set_ints(cv, "kernel_shape", ks, 2) < 0 ||
		   ir_node_set_ints(cv, "strides", ks, 2) < 0))
		e->failed = 1;
	return 0;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct plan p;
	struct rw_emit e;
	char why[64];

	make_plan(c, n, &p, why, sizeof(why));
	rw_begin(c, n, &e);
	if (v == 0)
		apply_rank6(&e, &p, n->inputs[0], n->outputs[0]);
	else if (v == 1)
		apply_rank4(&e, &p, n->inputs[0], n->outputs[0]);
	else
		apply_onehot(&e, &p, n->inputs[0], n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const matches[] = { "DepthToSpace", "SpaceToDepth", NULL };
static const char *const ops[] = { "Reshape", "Transpose", NULL };
static const char *const conv_ops[] = { "Conv", NULL };
static const char *const convt_ops[] = { "ConvTranspose", NULL };
static const struct rw_variant variants[] = {
	{ "reshape-transpose", ops }, { "rank4", ops }, { "conv", conv_ops },
	{ "conv-transpose", convt_ops },
};
RW_DECOMPOSITION(depth_space, "depth-space",
		 "DepthToSpace (DCR, CRD) and SpaceToDepth as Reshape/Transpose at rank 6 or rank 4, or a one-hot Conv/ConvTranspose (static C, H, W)",
		 matches, variants, check, vcheck, apply);
