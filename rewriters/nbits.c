/* nbits.c: com.microsoft MatMulNBits with constant weights as standard
 * ops, then MatMul(A, W) and Add(bias) when there is one:
 *   dequantize-linear  W = DequantizeLinear-21 of the codes kept as a
 *       uint4 (2 and 4 bits) or uint8 [K, N] initializer, blocked along
 *       axis 0 (block_size, scales and zero points [ceil(K / block), N]);
 *       opset >= 21, integer zero points only; a symmetric MatMulNBits (no
 *       zero points: 2^(bits - 1) implied) for a target that takes only
 *       signed codes gets them as int4 / int8 (code - 2^(bits - 1)) with
 *       no zero point (0, as TensorRT wants); a model's own 4-bit B for a
 *       target without 4-bit codes (or float16 data of odd N) as int8
 *       code - zero point (no zero point) or uint8 codes and zero points
 *   dequantize-per-axis  one block over all of K (block_size >= K):
 *       DequantizeLinear (axis 1, opset >= 13; float16 scales from 19) of
 *       uint8 codes [K, N] and zero points [N] (int8 code - zero point or
 *       code - 2^(bits - 1) for a target that takes only int8)
 *   cast-codes  uint8 codes [K / block, block, N] (K padded with B's own
 *       codes of the last block), Cast to the data's dtype, Sub of the
 *       zero points (uint8 [K / block, 1, N] with their own Cast, a byte
 *       each where float32 ones took four; a scalar 2^(bits - 1) when
 *       none) and Mul of the scales [K / block, 1, N] in that dtype,
 *       Reshape to [K', N], Slice of K rows: exact for float32 ((code -
 *       zero point) exact, one rounding of the product, as onnxruntime
 *       computes it in float32); the zero points' Cast is the codes' own
 *       op and dtypes, which the target's rules are asked about
 *       these two, one byte a weight, for opsets 13 to 20 (or a target
 *       without DequantizeLinear-21 of the codes) where the target's rules
 *       take every op (the Cast of uint8 too), a model's own B (and
 *       for cast-codes also the quantizer's codes of float32 weights,
 *       widened to a byte: `migrate --precision int4` below opset 21)
 *   dequantized  B dequantized ((code - zero point) * scale, block by
 *       block along K, in float32 as onnxruntime does) into a [K, N]
 *       initializer of the data's dtype (float16: each weight rounded to
 *       float16 once), computed while the model is written (a derived
 *       tensor: one piece of one weight in memory at a time)
 * for the targets that take none of these.  float16
 * data (float16 A and scales, as onnxruntime-genai's int4 exports have):
 * DequantizeLinear-21 with the float16 scales writes W in float16 for a
 * float16 MatMul, and the dequantized W and the cast form's float16 Mul
 * (as the per-axis DequantizeLinear-19's) are float16 too; each rounds each
 * (code - zero point) * scale to float16, where onnxruntime's MatMulNBits
 * keeps it in float32 (one float16 ulp in some outputs).  g_idx, prepacked
 * B and the quantizer's own float16 codes are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/quantize.h"
#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

struct nb {
	int64_t kd, n, bs, kb, blob, zrow;
	int bits;
};

static int has(const struct ir_node *n, size_t i)
{
	return n->n_inputs > i && n->inputs[i];
}

static int is_const_init(const struct ir_value *v)
{
	return v && v->init && !v->is_input;
}

static void nb_geometry(const struct ir_node *n, struct nb *p)
{
	p->kd = rw_attr_int(n, "K", 0);
	p->n = rw_attr_int(n, "N", 0);
	p->bs = rw_attr_int(n, "block_size", 0);
	p->bits = (int)rw_attr_int(n, "bits", 4);
	p->kb = p->bs > 0 ? (p->kd + p->bs - 1) / p->bs : 0;
	p->blob = p->bs * p->bits / 8;
	p->zrow = (p->kb * p->bits + 7) / 8;
}

static int node_codes(const struct rw_ctx *c, const struct ir_node *n);

static int check_nbits(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct nb p;
	int dt = rw_node_dtype(c, n), sdt = dt == IR_DTYPE_FLOAT16 ? dt : IR_DTYPE_FLOAT;

	nb_geometry(n, &p);
	if (dt != IR_DTYPE_FLOAT && dt != IR_DTYPE_FLOAT16) {
		snprintf(why, size, "only for float32 or float16 data");
		return 0;
	}
	if (p.bits != 2 && p.bits != 4 && p.bits != 8) {
		snprintf(why, size, "bits %d is not 2, 4 or 8", p.bits);
		return 0;
	}
	if (p.bs < 16 || (p.bs & (p.bs - 1)) || p.kd < 1 || p.n < 1) {
		snprintf(why, size, "block_size, K or N is invalid");
		return 0;
	}
	if (has(n, 4) || rw_attr_int(n, "weight_prepacked", 0)) {
		snprintf(why, size, "g_idx or a prepacked B");
		return 0;
	}
	if (!is_const_init(n->inputs[1]) || !is_const_init(n->inputs[2]) ||
	    (has(n, 3) && !is_const_init(n->inputs[3]))) {
		snprintf(why, size, "B, scales or zero_points is not an initializer");
		return 0;
	}
	if (rw_static_numel(c, n->inputs[1]) != (double)(p.n * p.kb * p.blob) ||
	    rw_static_numel(c, n->inputs[2]) != (double)(p.n * p.kb) ||
	    n->inputs[1]->init->dtype != IR_DTYPE_UINT8 ||
	    n->inputs[2]->init->dtype != sdt) {
		snprintf(why, size, "B or scales does not have the size K, N and block_size give");
		return 0;
	}
	if (has(n, 3)) {
		int zd = n->inputs[3]->init->dtype;
		double want = zd == IR_DTYPE_UINT8 ? (double)(p.n * p.zrow) : (double)(p.n * p.kb);

		if ((zd != IR_DTYPE_UINT8 && zd != IR_DTYPE_FLOAT) ||
		    rw_static_numel(c, n->inputs[3]) != want) {
			snprintf(why, size, "zero_points is not packed uint8 or float of its size");
			return 0;
		}
	}
	if (c->opset < 7 || (has(n, 5) && rw_rank(c, n->inputs[5]) != 1)) {
		snprintf(why, size, "needs opset >= 7 and a 1-D bias");
		return 0;
	}
	if (sdt == IR_DTYPE_FLOAT16 &&
	    (n->inputs[1]->init->storage == IR_STORE_DERIVED ||
	     (has(n, 3) && n->inputs[3]->init->dtype != IR_DTYPE_UINT8))) {
		snprintf(why, size, "float16 data: only the model's own codes with packed uint8 "
			 "zero points");
		return 0;
	}
	return 1;
}

enum { V_DQ, V_AXIS, V_CAST, V_FLOAT };

/* Does the target take DequantizeLinear-21 of codes of dtype dt (its
 * rules' version range, input 0's dtypes, the dtypes its chip lacks)? */
static int target_takes_codes(const struct rw_ctx *c, int dt)
{
	const struct rules_op *o = c->target ?
		rules_target_find_op(c->target, "ai.onnx", "DequantizeLinear") : NULL;

	if (c->opset < 21 || !o || !o->supported || o->version_max < 21 ||
	    (c->target->missing_dtypes & RULES_DTYPE_BIT(dt)) ||
	    (o->dtypes && !(o->dtypes & RULES_DTYPE_BIT(dt))))
		return 0;
	for (size_t i = 0; i < o->n_inputs; i++)
		if (o->inputs[i].index == 0 && o->inputs[i].dtypes &&
		    !(o->inputs[i].dtypes & RULES_DTYPE_BIT(dt)))
			return 0;
	return 1;
}

int rw_nbits_codes(const struct rw_ctx *c, int bits, int zero_points)
{
	int u = bits == 8 ? IR_DTYPE_UINT8 : IR_DTYPE_UINT4;
	int s = bits == 8 ? IR_DTYPE_INT8 : IR_DTYPE_INT4;

	if (target_takes_codes(c, u))
		return u;
	return !zero_points && target_takes_codes(c, s) ? s : 0;
}

/* The dtype node n's codes are kept in (0: none the target takes).  A
 * model's own 4-bit B may be widened where 4-bit codes are not taken (or
 * cannot be computed: float16 data, whose codes are always derived, of an
 * odd N has no whole bytes per row): int8 code - zero point (within
 * [-15, 15], no zero point, so TensorRT's zero point 0 holds), else
 * uint8 codes and zero points. */
static int node_codes(const struct rw_ctx *c, const struct ir_node *n)
{
	int bits = (int)rw_attr_int(n, "bits", 4);
	int dt = rw_nbits_codes(c, bits, has(n, 3));
	int half = rw_node_dtype(c, n) == IR_DTYPE_FLOAT16;
	int odd = rw_attr_int(n, "N", 0) % 2 != 0;

	if (has(n, 3) && n->inputs[3]->init && n->inputs[3]->init->dtype != IR_DTYPE_UINT8)
		return 0;
	if ((dt == IR_DTYPE_UINT4 || dt == IR_DTYPE_INT4) && half && odd)
		dt = 0;
	if (dt || bits != 4 || !n->inputs[1] || !n->inputs[1]->init ||
	    n->inputs[1]->init->storage == IR_STORE_DERIVED)
		return dt;
	if (target_takes_codes(c, IR_DTYPE_INT8))
		return IR_DTYPE_INT8;
	return target_takes_codes(c, IR_DTYPE_UINT8) ? IR_DTYPE_UINT8 : 0;
}

/* Does the target take op at the model's opset for data of dtype dt,
 * input 0 (the rules' per-input list) of dtype in0 too? */
static int takes(const struct rw_ctx *c, const char *op, int dt, int in0)
{
	const struct rules_op *o = c->target ?
		rules_target_find_op(c->target, "ai.onnx", op) : NULL;

	if (!rw_target_accepts(c, "", op, dt) || (in0 && !rw_target_accepts(c, "", op, in0)))
		return 0;
	for (size_t i = 0; o && in0 && i < o->n_inputs; i++)
		if (o->inputs[i].index == 0 && o->inputs[i].dtypes &&
		    !(o->inputs[i].dtypes & RULES_DTYPE_BIT(in0)))
			return 0;
	return 1;
}

/* Codes kept one a byte below opset 21 (or where the target takes no
 * DequantizeLinear-21 of them): the form (V_AXIS, V_CAST; V_FLOAT when
 * neither) and the codes' dtype.  One block over all of K: a per-axis
 * DequantizeLinear (axis 1 of the [K, N] codes; opset >= 13, float16
 * scales from 19) of uint8 codes and zero points, or int8 code - zero
 * point (4-bit B) or code - 2^(bits - 1) (B symmetric) for a target
 * that takes only int8.  Otherwise (and where that DequantizeLinear is not
 * taken) Cast of uint8 codes [K / bs, bs, N] to the data's dtype, Sub of
 * the zero points (uint8 too, through a Cast of their own: the same Cast
 * of uint8) and Mul of the scales [K / bs, 1, N], Reshape to [K', N] and
 * Slice of the K rows: every op of the data's dtype, the Cast of uint8,
 * taken by the target (MatMul and Add are every form's: the
 * planner asks about them).  The model's own B, with packed uint8 zero
 * points or none, or the quantizer's codes of float32 weights (derived,
 * `migrate --precision int4` below opset 21): those in the cast form
 * only. */
static int byte_form(const struct rw_ctx *c, const struct ir_node *n, int *wdtype)
{
	struct nb p;
	int dt = c->probe_dtype, probe = !n->n_inputs, own = 1;
	int half, zp = has(n, 3);

	nb_geometry(n, &p);
	*wdtype = IR_DTYPE_UINT8;
	if (!probe) {
		dt = rw_node_dtype(c, n);
		if (!n->inputs[1] || !n->inputs[1]->init ||
		    (zp && (!n->inputs[3]->init || n->inputs[3]->init->dtype != IR_DTYPE_UINT8)))
			return V_FLOAT;
		own = n->inputs[1]->init->storage != IR_STORE_DERIVED;
		if (!own && dt != IR_DTYPE_FLOAT)
			return V_FLOAT;
	}
	half = dt == IR_DTYPE_FLOAT16;
	if (c->opset < 13 || (dt != IR_DTYPE_FLOAT && dt != IR_DTYPE_FLOAT16))
		return V_FLOAT;
	/* the scan reads a MatMul of a per-axis DequantizeLinear's output as
	 * a QDQ unit of the codes' dtype (only blocked ones are weight-only
	 * there): the target's MatMul must take that dtype too */
	if (!probe && own && p.kb == 1 && (!half || c->opset >= 19)) {
		if (takes(c, "DequantizeLinear", IR_DTYPE_UINT8, IR_DTYPE_UINT8) &&
		    takes(c, "MatMul", IR_DTYPE_UINT8, 0))
			return V_AXIS;
		if ((!zp || p.bits == 4) && takes(c, "MatMul", IR_DTYPE_INT8, 0) &&
		    takes(c, "DequantizeLinear", IR_DTYPE_INT8, IR_DTYPE_INT8)) {
			*wdtype = IR_DTYPE_INT8;
			return V_AXIS;
		}
	}
	if (!takes(c, "Cast", dt, IR_DTYPE_UINT8) || !takes(c, "Sub", dt, 0) ||
	    !takes(c, "Mul", dt, 0) || !takes(c, "Reshape", dt, 0) || !takes(c, "Slice", dt, 0))
		return V_FLOAT;
	return V_CAST;
}

int rw_nbits_cast_form(struct rw_ctx *c, int dtype)
{
	struct ir_node probe = { 0 };
	int was = c->probe_dtype, wdtype, v;

	c->probe_dtype = dtype;
	v = byte_form(c, &probe, &wdtype);
	c->probe_dtype = was;
	return v == V_CAST;
}

/* The form node n's weights take. */
static int nbits_form(struct rw_ctx *c, const struct ir_node *n, int *wdtype)
{
	if ((*wdtype = node_codes(c, n)) != 0)
		return V_DQ;
	return byte_form(c, n, wdtype);
}

/* Would node n keep codes at opset 21 (the target's opset range allowing
 * it)? */
static int codes_at_21(struct rw_ctx *c, const struct ir_node *n)
{
	int64_t was = c->opset;
	int dt;

	if (!c->target || (c->target->opset_max >= 0 && c->target->opset_max < 21))
		return 0;
	c->opset = 21;
	dt = node_codes(c, n);
	c->opset = was;
	return dt != 0;
}

/* Says once per migration which form matmul-nbits gave and why. */
static int note_form(struct rw_ctx *c, const struct ir_node *n, int v, int wdtype)
{
	char buf[512];
	const char *tid = c->target ? c->target->id : "the target";
	int half = rw_node_dtype(c, n) == IR_DTYPE_FLOAT16;

	if (v == V_DQ)
		snprintf(buf, sizeof(buf), "matmul-nbits: %d-bit MatMulNBits of %s data as "
			 "DequantizeLinear-21 of %s codes blocked along K and a MatMul: %s takes "
			 "DequantizeLinear-21 of them at opset %lld",
			 (int)rw_attr_int(n, "bits", 4), half ? "float16" : "float32",
			 ir_dtype_name(wdtype), tid, (long long)c->opset);
	else if (v == V_AXIS)
		snprintf(buf, sizeof(buf), "matmul-nbits: %d-bit MatMulNBits of %s data with one "
			 "block over K as a per-axis DequantizeLinear of %s codes (axis 1, a scale "
			 "per column) and a MatMul: %s takes DequantizeLinear of them at opset %lld "
			 "(one byte a weight)%s",
			 (int)rw_attr_int(n, "bits", 4), half ? "float16" : "float32",
			 ir_dtype_name(wdtype), tid, (long long)c->opset,
			 c->opset < 21 && codes_at_21(c, n) ? " (--opset 21 would keep 4-bit codes)" :
			 "");
	else if (v == V_CAST)
		snprintf(buf, sizeof(buf), "matmul-nbits: %d-bit MatMulNBits of %s data as uint8 "
			 "codes [K / block, block, N] cast to %s, minus the zero points, times the "
			 "scales, reshaped to [K, N] for a MatMul: %s takes no DequantizeLinear of "
			 "blocked codes at opset %lld but Cast of uint8 (one byte a weight)%s%s",
			 (int)rw_attr_int(n, "bits", 4), half ? "float16" : "float32",
			 half ? "float16" : "float32", tid, (long long)c->opset,
			 c->opset < 21 && codes_at_21(c, n) ? " (--opset 21 would keep them as codes)" :
			 "",
			 half ? " (each weight rounded to float16, where onnxruntime's "
			 "MatMulNBits keeps float32: one float16 ulp in some outputs)" : "");
	else
		snprintf(buf, sizeof(buf), "matmul-nbits: %d-bit MatMulNBits of %s data as a "
			 "MatMul on %s weights dequantized while the model is written: %s takes no "
			 "DequantizeLinear-21 of the codes at opset %lld%s%s",
			 (int)rw_attr_int(n, "bits", 4), half ? "float16" : "float32",
			 ir_dtype_name(wdtype), tid, (long long)c->opset,
			 c->opset < 21 && codes_at_21(c, n) ? " (--opset 21 would keep them as codes)" :
			 "",
			 half ? " (each weight rounded to float16, where onnxruntime's "
			 "MatMulNBits keeps float32: one float16 ulp in some outputs)" : "");
	for (size_t i = 0; i < c->n_notes; i++)
		if (!strcmp(c->notes[i], buf))
			return 0;
	return rw_note(c, "%s", buf);
}

/* The codes stay integers (dequantize-linear) where the target takes
 * them, which keeps the weights 2 to 8 times smaller than float32; the
 * float variant is for the others (the planner would otherwise pick it,
 * having fewer ops). */
static int vcheck_nbits(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int wdtype;

	return v == nbits_form(c, n, &wdtype);
}

/* The codes of B and the blocks' zero points and scales, transposed:
 * w [K, N] of wdtype gets (code(r, k) - zero point) * scale (float32)
 * or, when wdtype is an integer type, the codes, with scales [kb, N]
 * into *sout and zero points [kb, N] of wdtype into *zout; a signed
 * wdtype (B symmetric) gets code - 2^(bits - 1) and no zero points. */
static int unpack(const struct nb *p, const struct rt_value *b, const struct rt_value *sc,
		  const struct rt_value *zp, int wdtype, struct rt_value **w,
		  struct rt_value **sout, struct rt_value **zout)
{
	int64_t dims[2] = { p->kd, p->n }, bdims[2] = { p->kb, p->n };
	unsigned mask = (1u << p->bits) - 1, per = 8 / (unsigned)p->bits;
	const uint8_t *q = b->data;
	const float *s = sc->data;
	int ints = wdtype != IR_DTYPE_FLOAT;
	int sgn = wdtype == IR_DTYPE_INT4 || wdtype == IR_DTYPE_INT8;
	int mid = 1 << (p->bits - 1);
	struct ir_diag d;

	ir_diag_init(&d);
	if (rt_tensor_new(NULL, wdtype, 2, dims, w, &d) < 0 ||
	    (ints && (rt_tensor_new(NULL, IR_DTYPE_FLOAT, 2, bdims, sout, &d) < 0 ||
		      (!sgn && rt_tensor_new(NULL, wdtype, 2, bdims, zout, &d) < 0))))
		return -1;
	for (int64_t r = 0; r < p->n; r++)
		for (int64_t kb = 0; kb < p->kb; kb++) {
			const uint8_t *blk = q + (r * p->kb + kb) * p->blob;
			float z = (float)(1 << (p->bits - 1)), sv = s[r * p->kb + kb];

			if (zp && zp->dtype == IR_DTYPE_UINT8)
				z = (float)((((const uint8_t *)zp->data)[r * p->zrow + kb / per] >>
					     ((unsigned)(kb % per) * (unsigned)p->bits)) & mask);
			else if (zp)
				z = ((const float *)zp->data)[r * p->kb + kb];
			if (ints) {
				((float *)(*sout)->data)[kb * p->n + r] = sv;
				if (!sgn)
					((uint8_t *)(*zout)->data)[kb * p->n + r] = (uint8_t)z;
			}
			for (int64_t j = 0; j < p->bs && kb * p->bs + j < p->kd; j++) {
				unsigned code = (blk[j / per] >> ((unsigned)(j % per) *
								  (unsigned)p->bits)) & mask;
				int64_t at = (kb * p->bs + j) * p->n + r;

				if (sgn)
					((int8_t *)(*w)->data)[at] = (int8_t)((int)code - mid);
				else if (ints)
					((uint8_t *)(*w)->data)[at] = (uint8_t)code;
				else
					((float *)(*w)->data)[at] = ((float)code - z) * sv;
			}
		}
	return 0;
}

/* The DequantizeLinear's codes, scales and zero points as derived
 * tensors t[0..2] (computed while the model is written, a range of rows
 * at a time: a 7B model's weights are never in memory): 1 made, 0 when B
 * is not of that kind (then unpack computes them), < 0 with c->d. */
static int derive_dq(struct rw_ctx *c, const struct ir_node *n, const struct nb *p, int wdtype,
		     struct ir_tensor **t)
{
	static const char *const nm[3] = { "codes", "scales", "zero_points" };

	return qz_nbits_dq_derive(n->inputs[1]->init, n->inputs[2]->init,
				  has(n, 3) ? n->inputs[3]->init : NULL, p->kd, p->n, p->bits,
				  p->bs, wdtype, nm, &t[0], &t[1], &t[2], c->d);
}

/* Derived tensors t as the rewrite's constants, named as rw_const_value
 * names them (each taken). */
static void add_derived(struct rw_emit *e, struct ir_tensor **t, struct ir_value **out)
{
	for (int i = 0; i < 3; i++) {
		char name[200], *dup;

		out[i] = NULL;
		if (!t[i])
			continue;
		snprintf(name, sizeof(name), "%.170s/const_%d", e->base, e->k++);
		if (e->failed || !(dup = strdup(name))) {
			ir_tensor_free(t[i]);
			e->failed = 1;
			continue;
		}
		free(t[i]->name);
		t[i]->name = dup;
		/* ir_graph_add_initializer frees what it cannot add */
		if (!(out[i] = ir_graph_add_initializer(e->g, t[i])))
			e->failed = 1;
	}
}

/* V_AXIS and V_CAST: the codes one a byte (byte_form), derived tensors
 * of the model's own B (a piece of rows at a time while written). */
static int apply_bytes(struct rw_ctx *c, struct ir_node *n, int v, int wdtype)
{
	static const char *const nm[3] = { "codes", "scales", "zero_points" };
	struct rw_emit e;
	struct nb p;
	struct ir_tensor *t[3] = { NULL, NULL, NULL };
	struct ir_value *dv[3], *w, *y;
	int dt = rw_node_dtype(c, n), bias = has(n, 5), rc;
	struct qz_nbits_shape f = { wdtype, 0, 0, 1 };

	nb_geometry(n, &p);
	if (v == V_CAST) {
		/* zero points as uint8 codes [kb, 1, n] (a quarter of float32
		 * ones) with their own Cast; none: a scalar 2^(bits - 1) */
		f.zdt = has(n, 3) ? 0 : dt;
		f.pad = p.kb > 1;
		f.side_rank = p.kb > 1 ? 3 : 1;
	}
	if ((rc = note_form(c, n, v, wdtype)) < 0)
		return rc;
	rc = qz_nbits_codes_derive(n->inputs[1]->init, n->inputs[2]->init,
				   has(n, 3) ? n->inputs[3]->init : NULL, p.kd, p.n, p.bits, p.bs,
				   &f, nm, &t[0], &t[1], &t[2], c->d);
	if (rc <= 0)
		return rc < 0 ? rc : ir_diag_error(c->d, IR_EINTERNAL, "matmul-nbits: the codes "
						   "of node '%s' cannot be derived",
						   ir_s(n->name));
	rw_begin(c, n, &e);
	add_derived(&e, t, dv);
	if (v == V_AXIS) {
		struct ir_node *dq = rw_node(&e, "DequantizeLinear", NULL, dv, dv[2] ? 3 : 2, NULL);

		if (dq && ir_node_set_int(dq, "axis", 1) < 0)
			e.failed = 1;
		w = dq ? dq->outputs[0] : NULL;
	} else {
		struct ir_node *cast = rw_node(&e, "Cast", NULL, dv, 1, NULL);
		int64_t shape[2] = { p.kb * p.bs, p.n }, zero = 0;

		struct ir_node *zc = dv[2] ? rw_node(&e, "Cast", NULL, &dv[2], 1, NULL) : NULL;

		if ((cast && ir_node_set_int(cast, "to", dt) < 0) ||
		    (zc && ir_node_set_int(zc, "to", dt) < 0) || (dv[2] && !zc))
			e.failed = 1;
		/* (code - zero point) * scale: exact integers, one rounding */
		w = rw_op(&e, "Sub", cast ? cast->outputs[0] : NULL,
			  zc ? zc->outputs[0] : rw_scalar(&e, dt, (double)(1 << (p.bits - 1))));
		w = rw_op(&e, "Mul", w, dv[1]);
		if (p.kb > 1)
			w = rw_reshape(&e, w, shape, 2, NULL);
		if (p.kb * p.bs > p.kd && p.kb > 1)
			w = rw_slice(&e, w, &zero, &p.kd, &zero, NULL, 1, NULL);
	}
	y = rw_op_to(&e, "MatMul", n->inputs[0], w, bias ? NULL : n->outputs[0]);
	if (bias)
		rw_op_to(&e, "Add", y, n->inputs[5], n->outputs[0]);
	return rw_end(&e, 0);
}

static int apply_nbits(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct nb p;
	struct rt_value *b, *sc, *zp = NULL, *w = NULL, *ws = NULL, *wz = NULL;
	struct ir_value *y, *wv;
	struct ir_tensor *dt[3] = { NULL, NULL, NULL };
	int bias = has(n, 5), rc = 0;
	int wdtype;

	if (v == V_AXIS || v == V_CAST) {
		if (nbits_form(c, n, &wdtype) != v)
			return ir_diag_error(c->d, IR_EINTERNAL, "matmul-nbits: the target takes no "
					     "such form");
		return apply_bytes(c, n, v, wdtype);
	}
	nb_geometry(n, &p);
	wdtype = v == V_FLOAT ? (n->inputs[2]->init->dtype == IR_DTYPE_FLOAT16 ?
				 IR_DTYPE_FLOAT16 : IR_DTYPE_FLOAT) : node_codes(c, n);
	if (!wdtype)
		return ir_diag_error(c->d, IR_EINTERNAL, "matmul-nbits: the target takes no codes");
	if ((rc = note_form(c, n, v, wdtype)) < 0)
		return rc;
	if ((rc = derive_dq(c, n, &p, wdtype, dt)) == 0 &&
	    n->inputs[2]->init->dtype != IR_DTYPE_FLOAT)
		return ir_diag_error(c->d, IR_EINTERNAL, "matmul-nbits: float16 weights not derived");
	if (v == V_FLOAT && rc != 0) {
		struct ir_value *dv[3];

		if (rc < 0)
			return rc;
		rw_begin(c, n, &e);
		add_derived(&e, dt, dv);
		y = rw_op_to(&e, "MatMul", n->inputs[0], dv[0], bias ? NULL : n->outputs[0]);
		if (bias)
			rw_op_to(&e, "Add", y, n->inputs[5], n->outputs[0]);
		return rw_end(&e, 0);
	}
	if (v == V_DQ && rc != 0) {
		struct ir_value *dv[3];
		struct ir_node *dq;

		if (rc < 0)
			return rc;
		rw_begin(c, n, &e);
		add_derived(&e, dt, dv);
		dq = rw_node(&e, "DequantizeLinear", NULL, dv, dv[2] ? 3 : 2, NULL);
		if (dq && (ir_node_set_int(dq, "axis", 0) < 0 ||
			   ir_node_set_int(dq, "block_size", p.bs) < 0))
			e.failed = 1;
		y = rw_op_to(&e, "MatMul", n->inputs[0], dq ? dq->outputs[0] : NULL,
			     bias ? NULL : n->outputs[0]);
		if (bias)
			rw_op_to(&e, "Add", y, n->inputs[5], n->outputs[0]);
		return rw_end(&e, 0);
	}
	rc = -1;
	b = rw_init_value(n->inputs[1]);
	sc = rw_init_value(n->inputs[2]);
	if (has(n, 3))
		zp = rw_init_value(n->inputs[3]);
	if (b && sc && (zp || !has(n, 3)))
		rc = unpack(&p, b, sc, zp, wdtype, &w, &ws, &wz);
	rt_value_unref(b);
	rt_value_unref(sc);
	rt_value_unref(zp);
	if (rc < 0) {
		rt_value_unref(w);
		rt_value_unref(ws);
		rt_value_unref(wz);
		return ir_diag_error(c->d, IR_ENOMEM, "matmul-nbits: cannot dequantize B");
	}
	rw_begin(c, n, &e);
	wv = rw_const_value(&e, w);
	if (v == V_DQ) {
		struct ir_value *ins[3] = { wv, rw_const_value(&e, ws), wz ? rw_const_value(&e, wz) :
					    NULL };
		struct ir_node *dq = rw_node(&e, "DequantizeLinear", NULL, ins, wz ? 3 : 2, NULL);

		if (dq && (ir_node_set_int(dq, "axis", 0) < 0 ||
			   ir_node_set_int(dq, "block_size", p.bs) < 0))
			e.failed = 1;
		wv = dq ? dq->outputs[0] : NULL;
	}
	y = rw_op_to(&e, "MatMul", n->inputs[0], wv, bias ? NULL : n->outputs[0]);
	if (bias)
		rw_op_to(&e, "Add", y, n->inputs[5], n->outputs[0]);
	rt_value_unref(w);
	rt_value_unref(ws);
	rt_value_unref(wz);
	return rw_end(&e, 0);
}

static const char *const m_nbits[] = { "com.microsoft:MatMulNBits", NULL };
static const char *const dq_ops[] = { "DequantizeLinear", "MatMul", "Add", NULL };
static const char *const nbits_ops[] = { "MatMul", "Add", NULL };
static const char *const cast_ops[] = { "Cast", "Sub", "Mul", "Reshape", "Slice", "MatMul",
					"Add", NULL };
static const struct rw_variant v_nbits[] = {
	[V_DQ] = { "dequantize-linear", dq_ops }, [V_AXIS] = { "dequantize-per-axis", dq_ops },
	[V_CAST] = { "cast-codes", cast_ops }, [V_FLOAT] = { "dequantized", nbits_ops }
};
RW_DECOMPOSITION(matmul_nbits, "matmul-nbits",
		 "MatMulNBits with constant weights as blocked DequantizeLinear-21 of uint4/uint8 codes (int4/int8 with zero point 0 when symmetric, 4-bit codes widened to int8 code - zero point or uint8, for targets that take only those); below opset 21 (or where the target takes none of those) with the codes kept one a byte: a per-axis DequantizeLinear (axis 1) of uint8 codes where one block spans K, else uint8 codes [K / block, block, N] through Cast, Sub of the zero points (uint8, through their own Cast), Mul of the scales, Reshape and Slice; where the target takes none of these either, MatMul on weights dequantized while the model is written, in the data's dtype (and Add of the bias); float16 weights are rounded before the product (see Numerics)",
		 m_nbits, v_nbits, check_nbits, vcheck_nbits, apply_nbits);
