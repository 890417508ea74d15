/* pool_split.c: pass "pool-split": MaxPool and AveragePool whose kernel
 * is larger than the target's rules allow (a "max" on the op's
 * kernel_shape) as pools over kernel tiles within the limit.  The input
 * is padded once (Pad with -inf for MaxPool, 0 for AveragePool); each
 * tile (at most max along each spatial axis) is pooled with strides 1 and
 * the outputs its window needs are taken with a strided Slice (start =
 * the tile's offset, step = the stride); the tiles combine with Max, or
 * for AveragePool as the sum of tile averages weighted by tile size / K
 * (Mul, Add): float rounding.  Needs static spatial dims, dilations 1,
 * ceil_mode 0, auto_pad NOTSET or VALID, an unused Indices output, and
 * for AveragePool with pads count_include_pad 1.  Opset >= 11. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rw_int.h"

#define MAXS 3
#define MAX_TILES 64

struct plan {
	int s, avg;
	int64_t max;
	int64_t in[MAXS], k[MAXS], st[MAXS], pb[MAXS], pe[MAXS], out[MAXS], nt[MAXS];
	int padded;
};

static int make_plan(struct rw_ctx *c, const struct ir_node *n, struct plan *p,
		     char *why, size_t size)
{
	int64_t xd[IR_INFER_MAX_RANK], tiles = 1;
	int xr;
	size_t nk, ns, np, nd;
	const int64_t *k = rw_attr_ints(n, "kernel_shape", &nk);
	const int64_t *st = rw_attr_ints(n, "strides", &ns);
	const int64_t *pd = rw_attr_ints(n, "pads", &np);
	const int64_t *dl = rw_attr_ints(n, "dilations", &nd);
	const char *ap = rw_attr_str(n, "auto_pad", "NOTSET");

	memset(p, 0, sizeof(*p));
	p->avg = !strcmp(ir_s(n->op_type), "AveragePool");
	if (!(p->max = rw_target_kernel_max(c, ir_s(n->op_type)))) {
		snprintf(why, size, "the target states no %s kernel size limit", ir_s(n->op_type));
		return 0;
	}
	if (!rw_static_shape(c, n->inputs[0], xd, &xr) || xr < 3 || xr > 2 + MAXS ||
	    !k || (int)nk != xr - 2) {
		snprintf(why, size, "the input's shape is not static (rank 3 to 5) or no kernel_shape");
		return 0;
	}
	if ((strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) || rw_attr_int(n, "ceil_mode", 0)) {
		snprintf(why, size, "auto_pad %s or ceil_mode 1", ap);
		return 0;
	}
	p->s = xr - 2;
	for (int i = 0; i < p->s; i++) {
		if (dl && (size_t)i < nd && dl[i] != 1) {
			snprintf(why, size, "dilations other than 1");
			return 0;
		}
		p->in[i] = xd[2 + i];
		p->k[i] = k[i];
		p->st[i] = st && (size_t)i < ns ? st[i] : 1;
		if (pd && np == 2 * nk && strcmp(ap, "VALID")) {
			p->pb[i] = pd[i];
			p->pe[i] = pd[p->s + i];
		}
		p->padded |= p->pb[i] || p->pe[i];
		p->out[i] = (p->in[i] + p->pb[i] + p->pe[i] - p->k[i]) / p->st[i] + 1;
		if (p->out[i] < 1 || p->k[i] < 1 || p->st[i] < 1) {
			snprintf(why, size, "empty output");
			return 0;
		}
		p->nt[i] = (p->k[i] + p->max - 1) / p->max;
		tiles *= p->nt[i];
	}
	if (p->avg && p->padded && !rw_attr_int(n, "count_include_pad", 0)) {
		snprintf(why, size, "padding with count_include_pad 0");
		return 0;
	}
	if (tiles == 1 || tiles > MAX_TILES) {
		snprintf(why, size, "the kernel is within the target's limit %lld (or too large)",
			 (long long)p->max);
		return 0;
	}
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct plan p;

	return rw_check_float_node(c, n, 11, why, size) && make_plan(c, n, &p, why, size);
}

static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)c;
	return v == !strcmp(ir_s(n->op_type), "AveragePool");
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct plan p;
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *acc = NULL;
	int64_t tiles = 1, ktot = 1;
	char why[64];

	(void)v;
	make_plan(c, n, &p, why, sizeof(why));
	rw_begin(c, n, &e);
	if (p.padded) {
		int64_t pads[2 * (2 + MAXS)] = { 0 };
		struct ir_value *in[3];
		struct ir_node *pad;

		for (int i = 0; i < p.s; i++) {
			pads[2 + i] = p.pb[i];
			pads[2 + p.s + 2 + i] = p.pe[i];
		}
		in[0] = x;
		in[1] = rw_ints(&e, pads, 2 * (2 + (size_t)p.s));
		in[2] = rw_scalar(&e, e.dtype, p.avg ? 0 : -INFINITY);
		pad = rw_node(&e, "Pad", NULL, in, 3, NULL);
		x = pad ? pad->outputs[0] : NULL;
	}
	for (int i = 0; i < p.s; i++) {
		tiles *= p.nt[i];
		ktot *= p.k[i];
	}
	for (int64_t t = 0; t < tiles && !e.failed; t++) {
		int64_t len[MAXS], starts[MAXS], ends[MAXS], axes[MAXS], r = t, cells = 1;
		struct ir_value *sl[5], *y;
		struct ir_node *pool, *s;
		int last = t == tiles - 1;

		for (int i = p.s - 1; i >= 0; i--) {
			int64_t ti = r % p.nt[i];

			r /= p.nt[i];
			starts[i] = ti * p.max;
			len[i] = p.k[i] - starts[i] < p.max ? p.k[i] - starts[i] : p.max;
			ends[i] = starts[i] + (p.out[i] - 1) * p.st[i] + 1;
			axes[i] = 2 + i;
			cells *= len[i];
		}
		pool = rw_node(&e, ir_s(n->op_type), NULL, &x, 1, NULL);
		if (pool && (ir_node_set_ints(pool, "kernel_shape", len, (size_t)p.s) < 0 ||
			     (p.avg && ir_node_set_int(pool, "count_include_pad", 1) < 0)))
			e.failed = 1;
		if (!pool)
			break;
		sl[0] = pool->outputs[0];
		sl[1] = rw_ints(&e, starts, (size_t)p.s);
		sl[2] = rw_ints(&e, ends, (size_t)p.s);
		sl[3] = rw_ints(&e, axes, (size_t)p.s);
		sl[4] = rw_ints(&e, p.st, (size_t)p.s);
		s = rw_node(&e, "Slice", NULL, sl, 5, NULL);
		y = s ? s->outputs[0] : NULL;
		if (p.avg)
			y = rw_op(&e, "Mul", y, rw_scalar(&e, e.dtype, (double)cells / (double)ktot));
		acc = !acc ? y : rw_op_to(&e, p.avg ? "Add" : "Max", acc, y, last ? n->outputs[0] : NULL);
	}
	return rw_end(&e, 0);
}

static const char *const matches[] = { "AveragePool", "MaxPool", NULL };
static const char *const max_ops[] = { "Pad", "MaxPool", "Slice", "Max", NULL };
static const char *const avg_ops[] = { "Pad", "AveragePool", "Slice", "Mul", "Add", NULL };
static const struct rw_variant variants[] = { { "max-tiles", max_ops }, { "avg-tiles", avg_ops } };
RW_DECOMPOSITION(pool_split, "pool-split",
		 "MaxPool and AveragePool with kernels above the target's kernel_shape limit as strided Slices of tile pools",
		 matches, variants, check, vcheck, apply);
