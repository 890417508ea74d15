/* depth_space.c: pass "depth-space": DepthToSpace (modes DCR and CRD) and
 * SpaceToDepth as Reshape to rank 6, Transpose, Reshape back, with C, H
 * and W static (N is copied by a 0 in both shapes):
 *   DCR  [N, b, b, C', H, W]  perm 0 3 4 1 5 2  -> [N, C', H b, W b]
 *   CRD  [N, C', b, b, H, W]  perm 0 1 4 2 5 3  -> [N, C', H b, W b]
 *   S2D  [N, C, H', b, W', b] perm 0 3 5 1 2 4  -> [N, C b b, H', W'] */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

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

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct plan p;

	if (c->opset < 5) {
		snprintf(why, size, "needs opset >= 5");
		return 0;
	}
	return make_plan(c, n, &p, why, size);
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	static const int64_t p_dcr[6] = { 0, 3, 4, 1, 5, 2 }, p_crd[6] = { 0, 1, 4, 2, 5, 3 },
			     p_s2d[6] = { 0, 3, 5, 1, 2, 4 };
	struct plan p;
	struct rw_emit e;
	int64_t s6[6], s4[4], b;
	const int64_t *perm;
	struct ir_value *y;
	struct ir_node *t;
	char why[64];

	(void)v;
	make_plan(c, n, &p, why, sizeof(why));
	b = p.b;
	if (p.s2d) {
		int64_t a[6] = { 0, p.c, p.h / b, b, p.w / b, b };
		int64_t o[4] = { 0, p.c * b * b, p.h / b, p.w / b };

		memcpy(s6, a, sizeof(s6));
		memcpy(s4, o, sizeof(s4));
		perm = p_s2d;
	} else {
		int64_t cc = p.c / (b * b);
		int64_t dcr[6] = { 0, b, b, cc, p.h, p.w }, crd[6] = { 0, cc, b, b, p.h, p.w };
		int64_t o[4] = { 0, cc, p.h * b, p.w * b };

		memcpy(s6, p.crd ? crd : dcr, sizeof(s6));
		memcpy(s4, o, sizeof(s4));
		perm = p.crd ? p_crd : p_dcr;
	}
	rw_begin(c, n, &e);
	y = rw_op(&e, "Reshape", n->inputs[0], rw_ints(&e, s6, 6));
	t = rw_node(&e, "Transpose", NULL, &y, 1, NULL);
	if (t && ir_node_set_ints(t, "perm", perm, 6) < 0)
		e.failed = 1;
	if (t)
		rw_op_to(&e, "Reshape", t->outputs[0], rw_ints(&e, s4, 4), n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const matches[] = { "DepthToSpace", "SpaceToDepth", NULL };
static const char *const ops[] = { "Reshape", "Transpose", NULL };
static const struct rw_variant variants[] = { { "reshape-transpose", ops } };
RW_DECOMPOSITION(depth_space, "depth-space",
		 "DepthToSpace (DCR, CRD) and SpaceToDepth as Reshape, Transpose, Reshape (static C, H, W)",
		 matches, variants, check, NULL, apply);
