/* quant_nbits.c: weight-only blockwise quantization (`opmig quantize
 * --weight-only int4|int8`) in the form onnxruntime's MatMulNBitsQuantizer
 * writes (its default algorithm, MLAS's blockwise quantizer): each MatMul
 * whose B is a constant float [K, N] initializer becomes com.microsoft
 * MatMulNBits; the activations stay float. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/dtype_int.h"
#include "rewriters/quant_int.h"
#include "runtime/runtime.h"

/* Blocks of bs rows of one column of w [k, n] (row-major), a scale (and a
 * zero point) each, computed in float32 as onnxruntime does:
 *   asymmetric: lo = min(min, 0), hi = max(max, 0),
 *               scale = (hi - lo) / (2^bits - 1),
 *               zero point = roundf(-lo / scale) clamped to [0, 2^bits - 1]
 *   symmetric:  m = the one of max and min of larger magnitude (min on a
 *               tie), scale = -m / 2^(bits - 1), zero point 2^(bits - 1)
 *   code = clamp(roundf(w * (1 / scale) + zero point), 0, 2^bits - 1)
 * (roundf rounds halves away from zero; 1 / 0 counts as 0).  With half,
 * scales are stored as float16 and the codes use the rounded scale.
 * Output: q [n, kb, blob] codes, low bits first, the rows past k (K padded
 * to a whole block) holding the zero point, so that they dequantize to 0;
 * scales [n, kb]; zp (asymmetric only) [n, zrow] packed like the codes,
 * the unused high bits of a row's last byte 2^(bits - 1) as onnxruntime
 * leaves them. */
void qz_nbits_quantize(const float *w, int64_t k, int64_t n, int bits, int64_t bs, int sym,
		       int half, uint8_t *q, float *scales, uint8_t *zp, float *work)
{
	int64_t kb = (k + bs - 1) / bs, blob = bs * bits / 8, zrow = (kb * bits + 7) / 8;
	unsigned qmax = (1u << bits) - 1, mid = 1u << (bits - 1), per = 8 / (unsigned)bits;
	float *mn = work, *mx = work + n, *sc = work + 2 * n;
	uint8_t *z = (uint8_t *)(work + 3 * n);

	if (zp)
		for (int64_t r = 0; r < n * zrow; r++)
			zp[r] = bits == 8 ? 0 : (uint8_t)(bits == 4 ? mid << 4 | mid : 0);
	for (int64_t b = 0; b < kb; b++) {
		int64_t k0 = b * bs, k1 = k0 + bs < k ? k0 + bs : k;

		for (int64_t r = 0; r < n; r++) {
			mn[r] = 3.40282347e38f;
			mx[r] = -3.40282347e38f;
		}
		for (int64_t i = k0; i < k1; i++)
			for (int64_t r = 0; r < n; r++) {
				float v = w[i * n + r];

				if (v < mn[r])
					mn[r] = v;
				if (v > mx[r])
					mx[r] = v;
			}
		for (int64_t r = 0; r < n; r++) {
			float s;

			if (sym) {
				float m = fabsf(mx[r]) > fabsf(mn[r]) ? mx[r] : mn[r];

				s = -m / (float)mid;
				z[r] = (uint8_t)mid;
			} else {
				float lo = mn[r] < 0.0f ? mn[r] : 0.0f, hi = mx[r] > 0.0f ? mx[r] : 0.0f;
				float zf = lo;

				s = (hi - lo) / (float)qmax;
				if (s != 0.0f)
					zf = 0.0f - lo / s;
				z[r] = zf < 0.0f ? 0 : zf > (float)qmax ? (uint8_t)qmax : (uint8_t)roundf(zf);
			}
			sc[r] = s;
		}
		if (half)
			for (int64_t r = 0; r < n; r++) {
				uint16_t h;

				rt_cast_raw(IR_DTYPE_FLOAT, (const uint8_t *)&sc[r], IR_DTYPE_FLOAT16,
					    (uint8_t *)&h, 1, NULL);
				rt_cast_raw(IR_DTYPE_FLOAT16, (const uint8_t *)&h, IR_DTYPE_FLOAT,
					    (uint8_t *)&sc[r], 1, NULL);
			}
		for (int64_t r = 0; r < n; r++) {
			scales[r * kb + b] = sc[r];
			if (zp)
				zp[r * zrow + b / per] = (uint8_t)((zp[r * zrow + b / per] &
					~(qmax << (b % per * (unsigned)bits))) |
					(unsigned)z[r] << (b % per * (unsigned)bits));
		}
		for (int64_t i = k0; i < k0 + bs; i++) {
			int64_t j = i - k0;
			unsigned shift = (unsigned)(j % per) * (unsigned)bits;

			for (int64_t r = 0; r < n; r++) {
				uint8_t *at = &q[(r * kb + b) * blob + j / per];
				unsigned code = z[r];

				if (i < k1) {
					float rs = sc[r] != 0.0f ? 1.0f / sc[r] : 0.0f;
					float t = w[i * n + r] * rs;

					t = t + (float)z[r];
					t = roundf(t);
					code = isnan(t) ? z[r] : t < 0.0f ? 0 : t > (float)qmax ? qmax :
					       (unsigned)t;
				}
				if (!shift)
					*at = 0;
				*at = (uint8_t)(*at | code << shift);
			}
		}
	}
}

/* ---- the MatMul to MatMulNBits rewrite ------------------------------- */

struct done {
	const struct ir_value *w;        /* the float weight */
	struct ir_value *q, *s, *z;      /* its codes, scales, zero points */
	int64_t k, n;
};

struct nbuild {
	struct qz_ctx *q;
	struct rw_ctx *c;
	struct ir_graph *g;
	struct done *done;
	size_t n_done;
	struct ir_diag *d;
};

static int ensure_domain(struct ir_model *m, const char *dom)
{
	struct ir_opset *o;

	if (ir_model_opset(m, dom) > 0)
		return 0;
	if (!(o = realloc(m->opsets, (m->n_opsets + 1) * sizeof(*o))))
		return IR_ENOMEM;
	m->opsets = o;
	memset(&o[m->n_opsets], 0, sizeof(*o));
	if (!(o[m->n_opsets].domain = strdup(dom)))
		return IR_ENOMEM;
	o[m->n_opsets].version = 1;
	o[m->n_opsets].present = 1;
	m->n_opsets++;
	return 0;
}

static struct ir_value *add_init(struct nbuild *b, const char *base, const char *suffix,
				 int dtype, const int64_t *dims, size_t rank, const void *data,
				 size_t len)
{
	char name[400];
	struct ir_tensor *t;
	struct ir_value *v = NULL;

	snprintf(name, sizeof(name), "%.300s_%s", base, suffix);
	if (!(t = ir_tensor_new_raw(name, dtype, dims, rank, data, len)) ||
	    !(v = ir_graph_add_initializer(b->g, t)))
		ir_diag_error(b->d, IR_ENOMEM, "out of memory");
	return v;
}

/* The quantized form of weight w (one per weight, shared by its readers):
 * 0, or < 0 with the error in b->d. */
static int quantize_weight(struct nbuild *b, struct ir_value *w, struct done **out)
{
	const struct qz_opts *o = b->q->o;
	struct rt_value *t = NULL, *f = NULL;
	int bits = o->nbits, sym = o->symmetric, half;
	int64_t bs = o->block_size, k, n, kb, blob, zrow;
	uint8_t *qb = NULL, *zb = NULL;
	float *sb = NULL, *work = NULL;
	uint16_t *sh = NULL;
	struct done *e;
	struct qz_tensor info = { 0 };
	char suffix[16];
	int rc = IR_ENOMEM;

	for (size_t i = 0; i < b->n_done; i++)
		if (b->done[i].w == w) {
			*out = &b->done[i];
			return 0;
		}
	if (!(t = rw_init_value(w)))
		return ir_diag_error(b->d, IR_EINVAL, "quantize: cannot read the weight '%s'",
				     ir_s(w->name));
	half = t->dtype == IR_DTYPE_FLOAT16;
	if (rt_tensor_cast(NULL, t, IR_DTYPE_FLOAT, &f, b->d) < 0) {
		rc = b->d->status;
		goto cleanup;
	}
	k = f->dims[0];
	n = f->dims[1];
	kb = (k + bs - 1) / bs;
	blob = bs * bits / 8;
	zrow = (kb * bits + 7) / 8;
	if (!(qb = malloc((size_t)(n * kb * blob) + 1)) ||
	    !(sb = malloc((size_t)(n * kb + 1) * sizeof(float))) ||
	    !(work = malloc((size_t)(4 * n + 1) * sizeof(float))) ||
	    (!sym && !(zb = malloc((size_t)(n * zrow) + 1))) ||
	    (half && !(sh = malloc((size_t)(n * kb + 1) * sizeof(uint16_t)))))
		goto oom;
	qz_nbits_quantize(f->data, k, n, bits, bs, sym, half, qb, sb, zb, work);
	if (!(e = realloc(b->done, (b->n_done + 1) * sizeof(*e))))
		goto oom;
	b->done = e;
	e = &e[b->n_done];
	memset(e, 0, sizeof(*e));
	e->w = w;
	e->k = k;
	e->n = n;
	snprintf(suffix, sizeof(suffix), "Q%d", bits);
	{
		int64_t qd[3] = { n, kb, blob }, sd[1] = { n * kb }, zd[1] = { n * zrow };

		if (half)
			rt_cast_raw(IR_DTYPE_FLOAT, (const uint8_t *)sb, IR_DTYPE_FLOAT16,
				    (uint8_t *)sh, (size_t)(n * kb), NULL);
		if (!(e->q = add_init(b, ir_s(w->name), suffix, IR_DTYPE_UINT8, qd, 3, qb,
				      (size_t)(n * kb * blob))) ||
		    !(e->s = add_init(b, ir_s(w->name), "scales",
				      half ? IR_DTYPE_FLOAT16 : IR_DTYPE_FLOAT, sd, 1,
				      half ? (const void *)sh : (const void *)sb,
				      (size_t)(n * kb) * (half ? 2 : 4))) ||
		    (!sym && !(e->z = add_init(b, ir_s(w->name), "zero_points", IR_DTYPE_UINT8,
					       zd, 1, zb, (size_t)(n * zrow)))))
			goto fail;
	}
	b->n_done++;
	*out = e;
	if (b->q->collect) {
		struct rt_tensor_summary ts;

		rt_tensor_summarize(f, &ts);
		info.kind = "weight";
		info.dtype = bits == 4 ? IR_DTYPE_UINT4 : IR_DTYPE_UINT8;
		info.axis = 0;
		info.n = (size_t)(n * kb);
		info.scale = sb[0];
		info.zero_point = sym ? (double)(1 << (bits - 1)) : (double)(zb[0] & ((1 << bits) - 1));
		info.scale_min = info.scale_max = sb[0];
		for (int64_t i = 1; i < n * kb; i++) {
			if (sb[i] < info.scale_min)
				info.scale_min = sb[i];
			if (sb[i] > info.scale_max)
				info.scale_max = sb[i];
		}
		info.min = info.lo = ts.min;
		info.max = info.hi = ts.max;
		if (!(info.name = strdup(ir_s(w->name))))
			goto oom;
		if (qz_tensor_add(b->q->r, &info, b->d) < 0) {
			free(info.name);
			goto fail;
		}
	}
	rc = 0;
	goto cleanup;
oom:
	ir_diag_error(b->d, IR_ENOMEM, "out of memory");
fail:
	rc = b->d->status ? b->d->status : IR_ENOMEM;
cleanup:
	rt_value_unref(t);
	rt_value_unref(f);
	free(qb);
	free(sb);
	free(zb);
	free(sh);
	free(work);
	return rc;
}

/* MatMul(A, B) -> MatMulNBits(A, B codes, scales[, zero points]), keeping
 * the output's name. */
static int one(struct nbuild *b, struct ir_node *n)
{
	const struct qz_opts *o = b->q->o;
	struct ir_value *w = n->inputs[1], *y = n->outputs[0];
	struct ir_node *mm;
	struct done *e = NULL;
	char hint[320];
	int rc;

	if ((rc = quantize_weight(b, w, &e)) < 0)
		return rc;
	snprintf(hint, sizeof(hint), "%.300s_Q%d", *ir_s(n->name) ? ir_s(n->name) :
		 ir_s(y->name), o->nbits);
	if (!(mm = qz_node_new(b->g, "MatMulNBits", hint)))
		goto oom;
	free(mm->domain);
	if (!(mm->domain = strdup("com.microsoft")) ||
	    ir_node_append_input(mm, n->inputs[0]) < 0 || ir_node_append_input(mm, e->q) < 0 ||
	    ir_node_append_input(mm, e->s) < 0 || (e->z && ir_node_append_input(mm, e->z) < 0) ||
	    ir_node_set_int(mm, "K", e->k) < 0 ||
	    ir_node_set_int(mm, "N", e->n) < 0 ||
	    ir_node_set_int(mm, "bits", o->nbits) < 0 ||
	    ir_node_set_int(mm, "block_size", o->block_size) < 0 ||
	    (o->accuracy_level && ir_node_set_int(mm, "accuracy_level", o->accuracy_level) < 0)) {
		ir_node_free(mm);
		goto oom;
	}
	ir_graph_detach_node(b->g, n);
	ir_node_free(n);
	if (ir_node_append_output(mm, y) < 0 || ir_graph_add_node(b->g, mm) < 0) {
		ir_node_free(mm);
		goto oom;
	}
	return 0;
oom:
	return ir_diag_error(b->d, IR_ENOMEM, "out of memory");
}

int qz_build_nbits(struct qz_ctx *q, struct rw_ctx *c, const unsigned char *fl,
		   struct ir_diag *d)
{
	const struct qz_plan *p = &q->plan;
	struct nbuild b = { .q = q, .c = c, .g = c->m->graph, .d = d };
	struct ir_node **todo;
	size_t n = 0;
	int rc = 0;

	if (b.g->n_nodes != p->n_nodes)
		return ir_diag_error(d, IR_EINTERNAL, "quantize: the model changed under the plan");
	if (!(todo = calloc(p->n_nodes + 1, sizeof(*todo))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	/* indices move as nodes go: the nodes are collected first */
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->units[i].candidate && !(fl && fl[i]))
			todo[n++] = b.g->nodes[i];
	if (n && ensure_domain(c->m, "com.microsoft") < 0)
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t k = 0; k < n && rc >= 0; k++)
		rc = one(&b, todo[k]);
	free(todo);
	free(b.done);
	if (rc < 0)
		return rc;
	if ((rc = rw_dt_finish(c, b.g)) < 0)
		return rc;
	return rw_refresh(c);
}
