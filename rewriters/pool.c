/* pool.c: pass "avgpool-count": AveragePool with count_include_pad 0 for
 * targets that only average over the padded window.  Without padding the
 * attribute changes nothing and is set to 1.  With padding, the average
 * over valid elements is the padded average times K / count, where K is
 * the window size and count the number of valid elements of the window at
 * that output position; count is separable (a product over spatial axes)
 * and depends only on static shapes, so the factor is one constant
 * [1, 1, out...] multiplied in.  Needs static spatial dims, dilations 1,
 * ceil_mode 0 and explicit pads (auto_pad NOTSET or VALID). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"

#define MAXS 3

struct geom {
	int s;                          /* spatial rank */
	int64_t in[MAXS], out[MAXS], k[MAXS], st[MAXS], pb[MAXS], pe[MAXS];
	int padded;
};

static int geometry(struct rw_ctx *c, const struct ir_node *n, struct geom *g,
		    char *why, size_t size)
{
	const struct ir_vtype *t = rw_type(c, n->inputs[0]);
	size_t nk, ns, np, nd;
	const int64_t *k = rw_attr_ints(n, "kernel_shape", &nk);
	const int64_t *st = rw_attr_ints(n, "strides", &ns);
	const int64_t *p = rw_attr_ints(n, "pads", &np);
	const int64_t *dl = rw_attr_ints(n, "dilations", &nd);
	const char *ap = rw_attr_str(n, "auto_pad", "NOTSET");

	memset(g, 0, sizeof(*g));
	if (!t || t->rank < 3 || t->rank > 2 + MAXS || !k || (int)nk != t->rank - 2) {
		snprintf(why, size, "needs a known rank 3 to 5 and kernel_shape");
		return 0;
	}
	if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) {
		snprintf(why, size, "auto_pad %s", ap);
		return 0;
	}
	if (rw_attr_int(n, "ceil_mode", 0)) {
		snprintf(why, size, "ceil_mode 1");
		return 0;
	}
	g->s = t->rank - 2;
	for (int i = 0; i < g->s; i++) {
		if (t->dims[2 + i].kind != IR_VDIM_VALUE) {
			snprintf(why, size, "spatial dims are not static");
			return 0;
		}
		if (dl && (size_t)i < nd && dl[i] != 1) {
			snprintf(why, size, "dilations other than 1");
			return 0;
		}
		g->in[i] = t->dims[2 + i].value;
		g->k[i] = k[i];
		g->st[i] = st && (size_t)i < ns ? st[i] : 1;
		if (p && np == 2 * nk && strcmp(ap, "VALID")) {
			g->pb[i] = p[i];
			g->pe[i] = p[g->s + i];
		}
		g->padded |= g->pb[i] || g->pe[i];
		g->out[i] = (g->in[i] + g->pb[i] + g->pe[i] - g->k[i]) / g->st[i] + 1;
		if (g->out[i] < 1 || g->st[i] < 1) {
			snprintf(why, size, "empty output");
			return 0;
		}
	}
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct geom g;
	double cells = 1;

	if (!rw_check_float_node(c, n, 7, why, size))
		return 0;
	if (rw_attr_int(n, "count_include_pad", 0) != 0) {
		snprintf(why, size, "count_include_pad is already 1");
		return 0;
	}
	if (!geometry(c, n, &g, why, size))
		return 0;
	for (int i = 0; i < g.s; i++)
		cells *= (double)g.out[i];
	if (cells > (1 << 22)) {
		snprintf(why, size, "output too large for a constant factor");
		return 0;
	}
	return 1;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct geom g;
	struct ir_node *p;
	int64_t dims[2 + MAXS] = { 1, 1 }, total = 1, kk = 1;
	double *f = NULL;
	char why[64];
	int rc = 0;

	(void)v;
	geometry(c, n, &g, why, sizeof(why));
	for (int i = 0; i < g.s; i++) {
		dims[2 + i] = g.out[i];
		total *= g.out[i];
		kk *= g.k[i];
	}
	rw_begin(c, n, &e);
	p = rw_node(&e, "AveragePool", NULL, &n->inputs[0], 1, g.padded ? NULL : n->outputs[0]);
	for (size_t i = 0; p && i < n->n_attrs; i++)
		if (strcmp(ir_s(n->attrs[i]->name), "count_include_pad") &&
		    ir_node_copy_attr(p, ir_s(n->attrs[i]->name), n->attrs[i]) < 0)
			e.failed = 1;
	if (p && ir_node_set_int(p, "count_include_pad", 1) < 0)
		e.failed = 1;
	if (g.padded && p) {
		if (!(f = malloc((size_t)total * sizeof(*f)))) {
			e.failed = 1;
		} else {
			for (int64_t idx = 0; idx < total; idx++) {
				int64_t r = idx, count = 1;

				for (int i = g.s - 1; i >= 0; i--) {
					int64_t o = r % g.out[i], lo = o * g.st[i] - g.pb[i];
					int64_t hi = lo + g.k[i];

					r /= g.out[i];
					count *= (hi > g.in[i] ? g.in[i] : hi) - (lo < 0 ? 0 : lo);
				}
				f[idx] = count > 0 ? (double)kk / (double)count : 0;
			}
			rw_op_to(&e, "Mul", p->outputs[0],
				 rw_const(&e, e.dtype, 2 + g.s, dims, f), n->outputs[0]);
		}
	}
	free(f);
	rc = rw_end(&e, rc);
	return rc;
}

static const char *const matches[] = { "AveragePool", NULL };
static const char *const ops[] = { "AveragePool", "Mul", NULL };
static const struct rw_variant variants[] = { { "rescale", ops } };
RW_DECOMPOSITION(avgpool_count, "avgpool-count",
		 "AveragePool excluding padding as the padded average times a constant K/count",
		 matches, variants, check, NULL, apply);
