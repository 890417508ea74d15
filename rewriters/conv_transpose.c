/* conv_transpose.c: pass "conv-transpose": ConvTranspose as Conv for any
 * strides, dilations, group, pads, output_padding, output_shape and auto_pad
 * (1 to 3 spatial axes, float data).  Per axis, y[j] = sum of x[i] w[k]
 * over i s + k d = j + pb (pb, pe the begin and end pads the attributes
 * give; the output has O = s (L - 1) + output_padding + d (K - 1) + 1 - pb
 * - pe elements).  Three formulations:
 *   direct (strides 1)  a Conv with the kernel flipped along every spatial
 *       axis and its channel axes swapped per group (a new initializer
 *       W'[g M/g + m, c, k] = W[g C/g + c, m, K - 1 - k]), pads d (K - 1) -
 *       pb and d (K - 1) - pe + output_padding;
 *   zero insertion  s - 1 zeros put around each input element (Reshape to
 *       [N, P L, 1, R], Pad of the unit axis, Reshape: rank 4 whatever the
 *       spatial rank), then the direct Conv, its pads less the zeros put;
 *       with a weight that is no initializer the flip is a Slice (step -1)
 *       and the channel swap Reshape, Transpose, Reshape;
 *   phases (sub-pixel)  one Conv computes the s^S output phases of each
 *       output channel from x itself (phase r uses the taps k with k d = r
 *       + pb mod s, at offset (r + pb - k d) / s): M s^S channels of
 *       ceil(O / s) outputs, interleaved by DepthToSpace (2-D, equal
 *       strides; mode CRD, or DCR for one group before opset 11) or by
 *       Reshape, Transpose, Reshape (rank 2 + 2 S); bias repeated per phase.
 * What a Conv pad cannot absorb (a negative one) becomes a Slice of the
 * Conv's input, and phases computed past the output a Slice of the result.
 * Each variant emits exactly its ops: vcheck admits the one whose need of a
 * Slice matches the node.  The weight's and the input's channel and spatial
 * dims must be static where a Reshape needs them (the batch may be
 * symbolic). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

#define MAXS 3
/* constant weights the phase formulation builds, at most (elements) */
#define MAX_PHASE_WEIGHT (INT64_C(1) << 26)

struct plan {
	int s;                          /* spatial rank */
	int64_t c, m, group;            /* input and output channels */
	int64_t k[MAXS], st[MAXS], dil[MAXS], opad[MAXS];
	int64_t pb[MAXS], pe[MAXS];     /* ConvTranspose pads (any sign) */
	int64_t l[MAXS], o[MAXS];       /* input, output sizes (-1 unknown) */
	int wconst, bias, bconst;       /* W an initializer; B present, one */
	int strided;                    /* a stride above 1 */
	int static_in;                  /* C and the spatial dims of x static */
};

/* Zero insertion's geometry of axis i: a zeros before each element (s - 1
 * - a after), then Conv pads pa, pz (negative: cropped from its input). */
struct zaxis {
	int64_t a, pa, pz;
};

/* The phase Conv's geometry of axis i: kernel taps at offsets umin..umax,
 * pads pa, pz (>= 0), zl outputs per phase of which the result keeps
 * [off, off + O) after interleaving. */
struct paxis {
	int64_t umin, umax, pa, pz, zl, off;
};

static int64_t floor_div2(int64_t v)
{
	return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

static int64_t mod(int64_t a, int64_t b)
{
	return ((a % b) + b) % b;
}

static int make_plan(struct rw_ctx *c, const struct ir_node *n, struct plan *p,
		     char *why, size_t size)
{
	size_t ns, np, nd, no, nk, nos;
	const int64_t *st = rw_attr_ints(n, "strides", &ns);
	const int64_t *pd = rw_attr_ints(n, "pads", &np);
	const int64_t *dl = rw_attr_ints(n, "dilations", &nd);
	const int64_t *op = rw_attr_ints(n, "output_padding", &no);
	const int64_t *ks = rw_attr_ints(n, "kernel_shape", &nk);
	const int64_t *os = rw_attr_ints(n, "output_shape", &nos);
	const char *ap = rw_attr_str(n, "auto_pad", "NOTSET");
	const struct ir_vtype *xt = n->n_inputs ? rw_type(c, n->inputs[0]) : NULL;
	int64_t wd[IR_INFER_MAX_RANK];
	int r = n->n_inputs ? rw_rank(c, n->inputs[0]) : -1, wr, same;

	memset(p, 0, sizeof(*p));
	if (r < 3 || r > 2 + MAXS) {
		snprintf(why, size, "needs a known rank 3 to 5");
		return 0;
	}
	p->s = r - 2;
	if (n->n_inputs < 2 || !n->inputs[1] || !rw_static_shape(c, n->inputs[1], wd, &wr) ||
	    wr != r) {
		snprintf(why, size, "the weight's shape is not static");
		return 0;
	}
	p->wconst = n->inputs[1]->init && !n->inputs[1]->is_input;
	p->bias = n->n_inputs > 2 && n->inputs[2];
	p->bconst = p->bias && n->inputs[2]->init && !n->inputs[2]->is_input;
	same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
	if (!same && strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) {
		snprintf(why, size, "unknown auto_pad '%s'", ap);
		return 0;
	}
	p->group = rw_attr_int(n, "group", 1);
	p->c = wd[0];
	if (p->group < 1 || wd[0] % p->group) {
		snprintf(why, size, "group %lld does not divide the weight's %lld channels",
			 (long long)p->group, (long long)wd[0]);
		return 0;
	}
	p->m = wd[1] * p->group;
	if ((st && ns != (size_t)p->s) || (dl && nd != (size_t)p->s) ||
	    (op && no != (size_t)p->s) || (ks && nk != (size_t)p->s) ||
	    (pd && np != 2 * (size_t)p->s) ||
	    (os && nos != (size_t)p->s && nos != (size_t)p->s + 2)) {
		snprintf(why, size, "an attribute has the wrong number of values");
		return 0;
	}
	if (os && nos == (size_t)p->s + 2)
		os += 2;
	p->static_in = xt && xt->dims[1].kind == IR_VDIM_VALUE && xt->dims[1].value == p->c;
	for (int i = 0; i < p->s; i++) {
		const struct ir_vdim *xd = xt ? &xt->dims[2 + i] : NULL;
		int64_t full;

		p->k[i] = wd[2 + i];
		p->st[i] = st ? st[i] : 1;
		p->dil[i] = dl ? dl[i] : 1;
		p->opad[i] = op ? op[i] : 0;
		p->l[i] = xd && xd->kind == IR_VDIM_VALUE ? xd->value : -1;
		p->static_in &= p->l[i] >= 1;
		if (p->st[i] < 1 || p->dil[i] < 1 || p->k[i] < 1 || p->opad[i] < 0 ||
		    (ks && ks[i] != p->k[i])) {
			snprintf(why, size, "bad strides, dilations, kernel_shape or output_padding");
			return 0;
		}
		p->strided |= p->st[i] > 1;
		if (!os && !same) {
			p->pb[i] = pd && strcmp(ap, "VALID") ? pd[i] : 0;
			p->pe[i] = pd && strcmp(ap, "VALID") ? pd[p->s + i] : 0;
			if (p->pb[i] < 0 || p->pe[i] < 0) {
				snprintf(why, size, "negative pads");
				return 0;
			}
			p->o[i] = p->l[i] < 0 ? -1 : p->st[i] * (p->l[i] - 1) + p->opad[i] +
				  p->dil[i] * (p->k[i] - 1) + 1 - p->pb[i] - p->pe[i];
		} else {
			int64_t t;

			if (p->l[i] < 0) {
				snprintf(why, size, "output_shape or auto_pad %s with a symbolic spatial dim",
					 ap);
				return 0;
			}
			full = p->st[i] * (p->l[i] - 1) + p->opad[i] + p->dil[i] * (p->k[i] - 1) + 1;
			p->o[i] = os ? os[i] : p->l[i] * p->st[i];
			t = full - p->o[i];
			if (!os && t < 0) {   /* SAME never pads negatively (as onnxruntime) */
				t = 0;
				p->o[i] = full;
			}
			p->pb[i] = !strcmp(ap, "SAME_UPPER") ? floor_div2(t) : t - floor_div2(t);
			p->pe[i] = t - p->pb[i];
		}
		if (p->l[i] >= 0 && p->o[i] < 1) {
			snprintf(why, size, "the output would be empty");
			return 0;
		}
	}
	return 1;
}

static void zaxis(const struct plan *p, int i, struct zaxis *z)
{
	int64_t ext = p->dil[i] * (p->k[i] - 1), s = p->st[i];
	int64_t a = ext - p->pb[i], b = ext - p->pe[i] + p->opad[i];

	/* as many zeros before each element as the begin pad takes */
	z->a = a < 0 ? 0 : a > s - 1 ? s - 1 : a;
	z->pa = a - z->a;
	z->pz = b - (s - 1 - z->a);
}

static int zcrop(const struct plan *p)
{
	for (int i = 0; i < p->s; i++) {
		struct zaxis z;

		zaxis(p, i, &z);
		if (z.pa < 0 || z.pz < 0)
			return 1;
	}
	return 0;
}

static void paxis(const struct plan *p, int i, struct paxis *a)
{
	int64_t s = p->st[i], q = (p->o[i] + s - 1) / s, need;
	int first = 1;

	a->umin = a->umax = 0;
	for (int64_t r = 0; r < s; r++)
		for (int64_t k = 0; k < p->k[i]; k++) {
			int64_t v = r + p->pb[i] - k * p->dil[i];

			if (mod(v, s))
				continue;
			if (first || v / s < a->umin)
				a->umin = v / s;
			if (first || v / s > a->umax)
				a->umax = v / s;
			first = 0;
		}
	/* z_r[q] = sum w[k] x[q + u_k]: the Conv with begin pad -umin
	 * computes it at index q - umin - pa; pa >= 0 shifts by off */
	a->pa = -a->umin > 0 ? -a->umin : 0;
	a->off = a->pa + a->umin;
	need = a->off + q - p->l[i] - a->pa + (a->umax - a->umin);
	a->pz = need > 0 ? need : 0;
	a->zl = p->l[i] + a->pa + a->pz - (a->umax - a->umin);
}

static int pcrop(const struct plan *p)
{
	for (int i = 0; i < p->s; i++) {
		struct paxis a;

		paxis(p, i, &a);
		if (a.off || a.zl * p->st[i] != p->o[i])
			return 1;
	}
	return 0;
}

/* The phase Conv's weight elements */
static int64_t phase_weight_size(const struct plan *p)
{
	int64_t n = p->m * (p->c / p->group);

	for (int i = 0; i < p->s; i++) {
		struct paxis a;

		paxis(p, i, &a);
		n *= p->st[i] * (a.umax - a.umin + 1);
		if (n > MAX_PHASE_WEIGHT)
			return n;
	}
	return n;
}

enum {
	V_CONV, V_CONV_SLICE, V_D2S, V_D2S_SLICE, V_PHASES, V_PHASES_SLICE,
	V_ZERO, V_ZERO_SLICE, V_DYN, V_DYN_PAD, N_VARIANTS
};

static int vcheck_plan(struct rw_ctx *c, const struct plan *p, int v)
{
	int max_rank = c->target ? c->target->max_rank : -1;

	switch (v) {
	case V_CONV:
	case V_CONV_SLICE:
		return !p->strided && p->wconst && zcrop(p) == (v == V_CONV_SLICE);
	case V_D2S:
	case V_D2S_SLICE:
		return p->strided && p->wconst && (!p->bias || p->bconst) && p->static_in &&
		       p->s == 2 && p->st[0] == p->st[1] && (c->opset >= 11 || p->group == 1) &&
		       phase_weight_size(p) <= MAX_PHASE_WEIGHT && pcrop(p) == (v == V_D2S_SLICE);
	case V_PHASES:
	case V_PHASES_SLICE:
		return p->strided && p->wconst && (!p->bias || p->bconst) && p->static_in &&
		       c->opset >= 5 && (max_rank < 0 || max_rank >= 2 + 2 * p->s) &&
		       phase_weight_size(p) <= MAX_PHASE_WEIGHT && pcrop(p) == (v == V_PHASES_SLICE);
	case V_ZERO:
	case V_ZERO_SLICE:
		return p->strided && p->wconst && p->static_in && c->opset >= 5 &&
		       zcrop(p) == (v == V_ZERO_SLICE);
	case V_DYN:
		return !p->strided && !p->wconst && c->opset >= 10;
	case V_DYN_PAD:
		return p->strided && !p->wconst && p->static_in && c->opset >= 10;
	}
	return 0;
}

static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	struct plan p;
	char why[128];

	return make_plan(c, n, &p, why, sizeof(why)) && vcheck_plan(c, &p, v);
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct plan p;

	if (!rw_check_float_node(c, n, 1, why, size) || !make_plan(c, n, &p, why, size))
		return 0;
	for (int v = 0; v < N_VARIANTS; v++)
		if (vcheck_plan(c, &p, v))
			return 1;
	if (!p.wconst && c->opset < 10)
		snprintf(why, size, "a weight that is no initializer needs opset >= 10 (Slice steps)");
	else if (p.strided && !p.static_in)
		snprintf(why, size, "strides above 1 need static input channels and spatial dims");
	else
		snprintf(why, size, "strides above 1 need opset >= 5 (Reshape)");
	return 0;
}

/* ---- the weights ------------------------------------------------------ */

/* W [C, M/g, k...] -> W' [M, C/g, k...], flipped */
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

/* The phase Conv's weight V [M S, C/g, kc...] (zero where a phase has no
 * tap) and bias [M S]; channel m S + r (CRD, or r M + m: DCR). */
static int phase_weights(const struct plan *p, const struct paxis *pa,
			 const struct rt_value *w, const struct rt_value *b, int dcr,
			 struct rt_value **vout, struct rt_value **bout)
{
	int64_t dims[2 + MAXS], kc[MAXS], nph = 1, mg = p->m / p->group, cg = p->c / p->group;
	int64_t wsp = 1, vsp = 1;
	struct ir_diag d;

	ir_diag_init(&d);
	*vout = *bout = NULL;
	for (int i = 0; i < p->s; i++) {
		kc[i] = pa[i].umax - pa[i].umin + 1;
		nph *= p->st[i];
		wsp *= p->k[i];
		vsp *= kc[i];
		dims[2 + i] = kc[i];
	}
	dims[0] = p->m * nph;
	dims[1] = cg;
	if (rt_tensor_new(NULL, w->dtype, 2 + p->s, dims, vout, &d) < 0)
		return -1;
	memset((*vout)->data, 0, (size_t)(*vout)->numel * rt_dtype_size(w->dtype));
	for (int64_t ph = 0; ph < nph; ph++) {
		int64_t r[MAXS], rest = ph;

		for (int i = p->s - 1; i >= 0; i--) {
			r[i] = rest % p->st[i];
			rest /= p->st[i];
		}
		for (int64_t kk = 0; kk < wsp; kk++) {
			int64_t k[MAXS], jj = 0, left = kk;
			int taps = 1;

			for (int i = p->s - 1; i >= 0; i--) {
				k[i] = left % p->k[i];
				left /= p->k[i];
			}
			for (int i = 0; i < p->s; i++) {
				int64_t v = r[i] + p->pb[i] - k[i] * p->dil[i];

				if (mod(v, p->st[i])) {
					taps = 0;
					break;
				}
				jj = jj * kc[i] + (v / p->st[i] - pa[i].umin);
			}
			if (!taps)
				continue;
			for (int64_t m = 0; m < p->m; m++) {
				int64_t g = m / mg, mm = m % mg;
				int64_t och = dcr ? ph * p->m + m : m * nph + ph;

				for (int64_t ci = 0; ci < cg; ci++)
					rt_value_set_f64(*vout, (och * cg + ci) * vsp + jj,
							 rt_value_get_f64(w, ((g * cg + ci) * mg + mm) * wsp + kk));
			}
		}
	}
	if (!b)
		return 0;
	dims[0] = p->m * nph;
	if (rt_tensor_new(NULL, b->dtype, 1, dims, bout, &d) < 0)
		return -1;
	for (int64_t m = 0; m < p->m; m++)
		for (int64_t ph = 0; ph < nph; ph++)
			rt_value_set_f64(*bout, dcr ? ph * p->m + m : m * nph + ph,
					 rt_value_get_f64(b, m));
	return 0;
}

/* ---- emitting ---------------------------------------------------------- */

static struct ir_value *conv(struct rw_emit *e, const struct plan *p, struct ir_value *x,
			     struct ir_value *w, struct ir_value *b, const int64_t *k,
			     const int64_t *dil, const int64_t *pads, struct ir_value *out)
{
	static const int64_t ones[MAXS] = { 1, 1, 1 };
	struct ir_value *in[3] = { x, w, b };
	struct ir_node *cv = rw_node(e, "Conv", NULL, in, b ? 3 : 2, out);

	if (cv && (ir_node_set_ints(cv, "kernel_shape", k, (size_t)p->s) < 0 ||
		   ir_node_set_ints(cv, "dilations", dil, (size_t)p->s) < 0 ||
		   ir_node_set_ints(cv, "strides", ones, (size_t)p->s) < 0 ||
		   ir_node_set_ints(cv, "pads", pads, 2 * (size_t)p->s) < 0 ||
		   ir_node_set_int(cv, "group", p->group) < 0))
		e->failed = 1;
	return cv ? cv->outputs[0] : NULL;
}

/* x with a[i] zeros before and s - 1 - a[i] after each element of every
 * strided axis: per axis a Reshape to [N, P L, 1, R], a Pad of the unit
 * axis, the last Reshape back to [N, C, ...]. */
static struct ir_value *upsample(struct rw_emit *e, const struct plan *p, struct ir_value *x,
				 const struct zaxis *z)
{
	int64_t cur[MAXS], full[2 + MAXS] = { 0, p->c };
	int any = 0;

	for (int i = 0; i < p->s; i++)
		cur[i] = p->l[i];
	for (int i = 0; i < p->s; i++) {
		int64_t pre = p->c, post = 1, shape[4], pads[8] = { 0 };

		if (p->st[i] == 1)
			continue;
		for (int j = 0; j < i; j++)
			pre *= cur[j];
		for (int j = i + 1; j < p->s; j++)
			post *= cur[j];
		shape[0] = 0;
		shape[1] = pre * cur[i];
		shape[2] = 1;
		shape[3] = post;
		pads[2] = z[i].a;
		pads[6] = p->st[i] - 1 - z[i].a;
		x = rw_pad(e, rw_reshape(e, x, shape, 4, NULL), pads, 4, NULL);
		cur[i] *= p->st[i];
		any = 1;
	}
	if (!any)
		return x;
	for (int i = 0; i < p->s; i++)
		full[2 + i] = cur[i];
	return rw_reshape(e, x, full, 2 + (size_t)p->s, NULL);
}

/* Crop the Conv input where its pads are negative; the pads made >= 0. */
static struct ir_value *crop_input(struct rw_emit *e, const struct plan *p, struct ir_value *x,
				   int64_t *pads)
{
	int64_t st[MAXS], en[MAXS], ax[MAXS];
	size_t k = 0;

	for (int i = 0; i < p->s; i++) {
		if (pads[i] >= 0 && pads[p->s + i] >= 0)
			continue;
		st[k] = pads[i] < 0 ? -pads[i] : 0;
		en[k] = pads[p->s + i] < 0 ? pads[p->s + i] : INT64_MAX;
		ax[k++] = 2 + i;
		if (pads[i] < 0)
			pads[i] = 0;
		if (pads[p->s + i] < 0)
			pads[p->s + i] = 0;
	}
	return k ? rw_slice(e, x, st, en, ax, NULL, k, NULL) : x;
}

/* the weight flipped by Slice and its channel axes swapped per group */
static struct ir_value *dynamic_weight(struct rw_emit *e, const struct plan *p,
				       struct ir_value *w)
{
	int64_t st[MAXS], en[MAXS], ax[MAXS], steps[MAXS], ksz = 1, mg = p->m / p->group;
	int64_t cg = p->c / p->group, s4[4], back[2 + MAXS] = { p->m, cg };
	static const int64_t perm[4] = { 0, 2, 1, 3 };

	for (int i = 0; i < p->s; i++) {
		st[i] = -1;
		en[i] = INT64_MIN;
		ax[i] = 2 + i;
		steps[i] = -1;
		ksz *= p->k[i];
		back[2 + i] = p->k[i];
	}
	w = rw_slice(e, w, st, en, ax, steps, (size_t)p->s, NULL);
	s4[0] = p->group;
	s4[1] = cg;
	s4[2] = mg;
	s4[3] = ksz;
	w = rw_transpose(e, rw_reshape(e, w, s4, 4, NULL), perm, 4, NULL);
	return rw_reshape(e, w, back, 2 + (size_t)p->s, NULL);
}

static int apply_zero(struct rw_ctx *c, struct ir_node *n, const struct plan *p, int v)
{
	struct rw_emit e;
	struct zaxis z[MAXS];
	struct rt_value *w = NULL, *wf = NULL;
	struct ir_value *x = n->inputs[0], *wv, *b = p->bias ? n->inputs[2] : NULL;
	int64_t pads[2 * MAXS];

	for (int i = 0; i < p->s; i++) {
		zaxis(p, i, &z[i]);
		pads[i] = z[i].pa;
		pads[p->s + i] = z[i].pz;
	}
	if (p->wconst && (!(w = rw_init_value(n->inputs[1])) || !(wf = flip(p, w)))) {
		rt_value_unref(w);
		return ir_diag_error(c->d, IR_ENOMEM, "conv-transpose: cannot read the weight");
	}
	rw_begin(c, n, &e);
	wv = v == V_DYN || v == V_DYN_PAD ? dynamic_weight(&e, p, n->inputs[1]) :
	     rw_const_value(&e, wf);
	x = crop_input(&e, p, upsample(&e, p, x, z), pads);
	conv(&e, p, x, wv, b, p->k, p->dil, pads, n->outputs[0]);
	rt_value_unref(w);
	rt_value_unref(wf);
	return rw_end(&e, 0);
}

static int apply_phases(struct rw_ctx *c, struct ir_node *n, const struct plan *p, int v)
{
	struct rw_emit e;
	struct paxis pa[MAXS];
	struct rt_value *w, *b = NULL, *vw = NULL, *vb = NULL;
	struct ir_value *y, *out = n->outputs[0];
	int64_t kc[MAXS], pads[2 * MAXS], one[MAXS] = { 1, 1, 1 };
	int d2s = v == V_D2S || v == V_D2S_SLICE, dcr = d2s && c->opset < 11;
	int crop = v == V_D2S_SLICE || v == V_PHASES_SLICE;
	int rc = 0;

	for (int i = 0; i < p->s; i++) {
		paxis(p, i, &pa[i]);
		kc[i] = pa[i].umax - pa[i].umin + 1;
		pads[i] = pa[i].pa;
		pads[p->s + i] = pa[i].pz;
	}
	w = rw_init_value(n->inputs[1]);
	if (p->bias)
		b = rw_init_value(n->inputs[2]);
	if (!w || (p->bias && !b) || phase_weights(p, pa, w, b, dcr, &vw, &vb) < 0)
		rc = ir_diag_error(c->d, IR_ENOMEM, "conv-transpose: cannot read the weight");
	rt_value_unref(w);
	rt_value_unref(b);
	if (rc < 0) {
		rt_value_unref(vw);
		rt_value_unref(vb);
		return rc;
	}
	rw_begin(c, n, &e);
	y = conv(&e, p, n->inputs[0], rw_const_value(&e, vw), vb ? rw_const_value(&e, vb) : NULL,
		 kc, one, pads, NULL);
	if (d2s) {
		struct ir_node *ds = rw_node(&e, "DepthToSpace", NULL, &y, 1, crop ? NULL : out);

		if (ds && (ir_node_set_int(ds, "blocksize", p->st[0]) < 0 ||
			   (c->opset >= 11 && ir_node_set_string(ds, "mode", dcr ? "DCR" : "CRD") < 0)))
			e.failed = 1;
		y = ds ? ds->outputs[0] : NULL;
	} else {
		int64_t s1[2 + 2 * MAXS] = { 0, p->m }, perm[2 + 2 * MAXS] = { 0, 1 };
		int64_t s2[2 + MAXS] = { 0, p->m };

		for (int i = 0; i < p->s; i++) {
			s1[2 + i] = p->st[i];
			s1[2 + p->s + i] = pa[i].zl;
			perm[2 + 2 * i] = 2 + p->s + i;
			perm[3 + 2 * i] = 2 + i;
			s2[2 + i] = pa[i].zl * p->st[i];
		}
		y = rw_reshape(&e, y, s1, 2 + 2 * (size_t)p->s, NULL);
		y = rw_transpose(&e, y, perm, 2 + 2 * (size_t)p->s, NULL);
		y = rw_reshape(&e, y, s2, 2 + (size_t)p->s, crop ? NULL : out);
	}
	if (crop) {
		int64_t st[MAXS], en[MAXS], ax[MAXS];
		size_t k = 0;

		for (int i = 0; i < p->s; i++) {
			if (!pa[i].off && pa[i].zl * p->st[i] == p->o[i])
				continue;
			st[k] = pa[i].off * p->st[i];
			en[k] = st[k] + p->o[i];
			ax[k++] = 2 + i;
		}
		rw_slice(&e, y, st, en, ax, NULL, k, out);
	}
	rt_value_unref(vw);
	rt_value_unref(vb);
	return rw_end(&e, 0);
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct plan p;
	char why[128];

	if (!make_plan(c, n, &p, why, sizeof(why)))
		return ir_diag_error(c->d, IR_EINVAL, "conv-transpose: %s", why);
	if (v >= V_D2S && v <= V_PHASES_SLICE)
		return apply_phases(c, n, &p, v);
	return apply_zero(c, n, &p, v);
}

static const char *const matches[] = { "ConvTranspose", NULL };
static const char *const conv_ops[] = { "Conv", NULL };
static const char *const conv_slice_ops[] = { "Slice", "Conv", NULL };
static const char *const d2s_ops[] = { "Conv", "DepthToSpace", NULL };
static const char *const d2s_slice_ops[] = { "Conv", "DepthToSpace", "Slice", NULL };
static const char *const phase_ops[] = { "Conv", "Reshape", "Transpose", NULL };
static const char *const phase_slice_ops[] = { "Conv", "Reshape", "Transpose", "Slice", NULL };
static const char *const zero_ops[] = { "Reshape", "Pad", "Conv", NULL };
static const char *const zero_slice_ops[] = { "Reshape", "Pad", "Slice", "Conv", NULL };
static const char *const dyn_ops[] = { "Slice", "Reshape", "Transpose", "Conv", NULL };
static const char *const dyn_pad_ops[] = { "Slice", "Reshape", "Transpose", "Pad", "Conv", NULL };
static const struct rw_variant variants[] = {
	{ "conv", conv_ops }, { "conv-slice", conv_slice_ops },
	{ "phases-d2s", d2s_ops }, { "phases-d2s-slice", d2s_slice_ops },
	{ "phases", phase_ops }, { "phases-slice", phase_slice_ops },
	{ "zero-insert", zero_ops }, { "zero-insert-slice", zero_slice_ops },
	{ "dynamic", dyn_ops }, { "dynamic-pad", dyn_pad_ops },
};
_Static_assert(sizeof(variants) / sizeof(variants[0]) == N_VARIANTS, "one line per variant");
RW_DECOMPOSITION(conv_transpose, "conv-transpose",
		 "ConvTranspose (any strides, dilations, group, pads, output_shape, auto_pad) as Conv: direct, sub-pixel phases, or zero insertion",
		 matches, variants, check, vcheck, apply);
