/* qdq_wo.c: weight-only quantized MatMuls as one unit.  A weight-only
 * model in the DequantizeLinear form (`opmig migrate --precision int4
 * --target tensorrt`: blocked DequantizeLinear-21 of int4 codes, and
 * --weight-only int8 alike) writes each MatMul as MatMul(A,
 * DequantizeLinear(codes, scale[, zero point])) with constant codes.
 * Computed as written, the DequantizeLinear is a constant node: its float
 * result (the weight in float32, eight times its int4 codes) is kept for
 * the session (fold.c), and a decoder's every weight ends up in memory in
 * float.  The unit instead dequantizes B into a scratch freed as soon as
 * the product is done, and multiplies A with it: one weight in float at a
 * time, however many layers (the MatMulNBits kernel, k_nbits.c, goes
 * further, a slice of rows at a time, since nothing there is computed as
 * written to be equal to).
 *
 * 4-bit codes stay packed, two a byte as the file has them
 * (RT_VALUE_PACKED, plan.c): the unit unpacks one row of B at a time into
 * a row of bytes and dequantizes that, so a decoder's int4 codes are never
 * held a byte each (exec.c unpacks them for any other reader).
 *
 * Exactness: each element of the scratch is the DequantizeLinear
 * kernel's, (float)(code - zero point) * scale in float32 (k_quant.c), and
 * the product is the MatMul kernel's own call on a whole 2-D B
 * (k_matmul.c: A's batches folded into one product of their rows,
 * rt_gemm_f32_par), so the unit equals the graph as written, bit for bit,
 * as the MatMul computes it on its first run (tests/cli/t1203 checks it
 * against `opmig run --exact`, which runs the graph as written).
 * Dequantizing a block of columns at a time would bound the scratch
 * further, but sgemm and sgemv round differently on narrower products
 * (their small-matrix and tail kernels), so the results would no longer
 * be the written graph's.  On later runs of a session the written graph's
 * MatMul may multiply with a packed copy of the kept weight (k_matmul_pk.c,
 * another summation order); the unit keeps no such copy.
 *
 * A unit (rt_qdq_wo_at, from rt_qdq_mark) is a MatMul whose B is
 * DequantizeLinear of a constant 2-D int4, uint4, int8 or uint8 tensor
 * with a float32 scale (per tensor, per axis or blocked along either
 * axis) and a zero point of the codes' type or none, every one an
 * initializer, and whose A is not constant.  Float16 scales (a float16
 * MatMul) are left as written.
 *
 * The cast chain.  Below opset 21 migrate writes MatMulNBits' codes as
 * Cast(codes) -> Sub(zero points) -> Mul(scales) [-> Reshape -> Slice]
 * (rewriters/nbits.c, "cast-codes": uint8 codes [K/block, block, N],
 * uint8 zero points with their own Cast to float32 (or none: a float32
 * scalar) and float32 scales [K/block, 1, N] or broadcast; one block
 * over K: codes [K, N], neither Reshape nor Slice), whose results are as
 * many float copies of the weight kept for the session.  The same unit
 * computes that chain instead, each element as the nodes do, ((float)code
 * - zero point) * scale in float32 (the Cast exact, the Sub and the Mul
 * one rounding each), so the product is again the written graph's bit for
 * bit.  It matches int8/uint8 codes of rank 2 or 3 read by a Cast to
 * float32 alone, a Sub of the Cast's result minus a float32 initializer
 * or minus a Cast to float32 of an int8/uint8 initializer read by that
 * Sub alone (both Casts fused: the zero points made floats for the run),
 * a Mul by one (either order), a Reshape to [rows, N] (absent for codes
 * of rank 2) and optionally a Slice of rows [0, e) along axis 0, each
 * result read once, by the next; zero points and scales broadcast along
 * any of the codes' three axes (shapes of 1 or the codes'). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/gemm.h"
#include "runtime/qdq_int.h"

/* Rows of B a thread dequantizes at once. */
#define WO_GRAIN 16

enum { WO_A, WO_Q, WO_S, WO_Z, WO_N_IN };
enum { WO_TENSOR, WO_AXIS, WO_BLOCK };

static int wo_run(struct rt_kctx *k);
static struct rt_nplan *chain_cast(struct rt_gplan *p, struct rt_nplan *np);
static struct rt_qdq *wo_cast_at(struct rt_session *s, struct rt_gplan *p, size_t i,
				 struct rt_nplan *cp);

static int64_t attr_int(const struct ir_node *n, const char *name, int64_t dflt)
{
	const struct ir_attr *a = ir_node_attr(n, name);

	return a && a->type == IR_ATTR_INT ? a->i : dflt;
}

static int is_code(int dtype)
{
	return dtype == IR_DTYPE_INT8 || dtype == IR_DTYPE_UINT8 || dtype == IR_DTYPE_INT4 ||
	       dtype == IR_DTYPE_UINT4;
}

/* How the scale of DequantizeLinear d (opset version `version`) indexes
 * codes w (2-D): WO_TENSOR, WO_AXIS or WO_BLOCK with *axis and *block,
 * or -1 when the shapes are not the spec's (the kernel as written then
 * says why). */
static int scale_mode(const struct ir_node *d, int64_t version, const struct rt_value *w,
		      const struct rt_value *sc, int *axis, int64_t *block)
{
	int64_t ax = attr_int(d, "axis", 1), nb;

	*block = version >= 21 ? attr_int(d, "block_size", 0) : 0;
	if (sc->numel == 1 && *block <= 0 && sc->rank <= 1)
		return WO_TENSOR;
	if (version < 13 || ax < -2 || ax > 1)
		return -1;
	*axis = (int)(ax < 0 ? ax + 2 : ax);
	if (*block <= 0)
		return sc->rank == 1 && sc->dims[0] == w->dims[*axis] ? WO_AXIS : -1;
	nb = (w->dims[*axis] + *block - 1) / *block;
	if (sc->rank != 2 || sc->dims[*axis] != nb || sc->dims[1 - *axis] != w->dims[1 - *axis])
		return -1;
	return WO_BLOCK;
}

struct rt_qdq *rt_qdq_wo_at(struct rt_session *s, struct rt_gplan *p, size_t i)
{
	struct rt_nplan *h = &p->nodes[i], *dp;
	const struct ir_node *n = h->node, *d;
	const struct rt_value *w, *sc, *zp = NULL;
	struct rt_qdq *u;
	int64_t block;
	int axis = 0;

	if (!rt_qdq_is_op(n, "MatMul") || !h->kernel || h->fold != RT_FOLD_NONE ||
	    n->n_inputs != 2 || n->n_outputs != 1 || !n->outputs[0] || !n->inputs[0] ||
	    !n->inputs[1] || !(dp = rt_plan_node(p, n->inputs[1]->producer)) || !dp->schema)
		return NULL;
	d = dp->node;
	if (!rt_qdq_is_op(d, "DequantizeLinear"))
		return wo_cast_at(s, p, i, chain_cast(p, dp));
	if (d->n_inputs < 2 || d->n_outputs != 1 ||
	    ir_node_attr(d, "output_dtype") || !(w = rt_qdq_init_val(s, p, d->inputs[0])) ||
	    !is_code(w->dtype) || w->rank != 2 || !(sc = rt_qdq_init_val(s, p, d->inputs[1])) ||
	    sc->dtype != IR_DTYPE_FLOAT ||
	    (d->n_inputs > 2 && d->inputs[2] && !(zp = rt_qdq_init_val(s, p, d->inputs[2]))) ||
	    (zp && (zp->dtype != w->dtype || zp->rank != sc->rank ||
		    memcmp(zp->dims, sc->dims, (size_t)sc->rank * sizeof(*sc->dims)))) ||
	    scale_mode(d, dp->schema->since_version, w, sc, &axis, &block) < 0)
		return NULL;
	if (!(u = rt_qdq_unit_new(n, WO_N_IN)))
		return NULL;
	if (!(u->dq = calloc(1, sizeof(*u->dq))))
		goto fail;
	u->dq[0] = dp;
	u->ins[WO_A] = n->inputs[0];
	u->ins[WO_Q] = d->inputs[0];
	u->ins[WO_S] = d->inputs[1];
	u->ins[WO_Z] = zp ? d->inputs[2] : NULL;
	u->outs[0] = n->outputs[0];
	u->head = h;
	u->kernel = (struct rt_kernel){ "ai.onnx", "MatMul", 1, RT_OPEN, wo_run };
	if (rt_qdq_unit_plan(p, i, u) == 0)
		return u;
fail:
	rt_qdq_unit_free(u);
	return NULL;
}

/* The plan of the producer of node n's input i, or NULL. */
static struct rt_nplan *producer_of(struct rt_gplan *p, const struct ir_node *n, size_t i)
{
	return n->n_inputs > i && n->inputs[i] ? rt_plan_node(p, n->inputs[i]->producer) : NULL;
}

/* v's sole use when it is node op of p (else NULL). */
static struct rt_nplan *sole_op(struct rt_gplan *p, const struct ir_value *v, const char *op)
{
	struct rt_nplan *c = v ? rt_plan_sole_use(p, v) : NULL;

	return c && c->kernel && rt_qdq_is_op(c->node, op) && c->node->n_outputs == 1 &&
	       c->node->outputs[0] ? c : NULL;
}

/* The int64 initializer v's count values into o (0: none, or another). */
static int i64s(const struct rt_session *s, const struct rt_gplan *p, const struct ir_value *v,
		int64_t count, int64_t *o)
{
	const struct rt_value *t = rt_qdq_init_val(s, p, v);

	if (!t || t->dtype != IR_DTYPE_INT64 || t->numel != count)
		return 0;
	memcpy(o, t->data, (size_t)count * sizeof(*o));
	return 1;
}

/* Does the float32 initializer t broadcast onto codes viewed as [kb, bs,
 * n] without widening them (rank <= 3, each dim 1 or the codes')? */
static int fits3(const struct rt_value *t, const int64_t *d3)
{
	if (!t || t->dtype != IR_DTYPE_FLOAT || t->rank > 3)
		return 0;
	for (int i = 0; i < t->rank; i++) {
		int64_t want = d3[3 - t->rank + i];

		if (t->dims[i] != 1 && t->dims[i] != want)
			return 0;
	}
	return 1;
}

/* Codes w of rank 2 or 3 viewed as [kb, bs, n] (kb 1 for rank 2). */
static void codes3(const struct rt_value *w, int64_t *d3)
{
	d3[0] = w->rank == 3 ? w->dims[0] : 1;
	d3[1] = w->dims[w->rank - 2];
	d3[2] = w->dims[w->rank - 1];
}

/* The zero points the Sub sub subtracts: a float32 initializer, or
 * one of 8-bit codes read by a Cast to float32 whose result only sub
 * reads (*zc that Cast's plan); NULL when neither, or when they do not
 * broadcast onto the codes d3. */
static struct ir_value *zero_points(const struct rt_session *s, struct rt_gplan *p,
				    const struct rt_nplan *sub, const int64_t *d3,
				    struct rt_nplan **zc)
{
	struct ir_value *z = sub->node->inputs[1];
	const struct rt_value *t = rt_qdq_init_val(s, p, z);
	struct rt_nplan *c;

	*zc = NULL;
	if (t)
		return fits3(t, d3) ? z : NULL;
	if (!(c = producer_of(p, sub->node, 1)) || !rt_qdq_is_op(c->node, "Cast") || !c->kernel ||
	    c->node->n_inputs != 1 || attr_int(c->node, "to", 0) != IR_DTYPE_FLOAT ||
	    rt_plan_sole_use(p, z) != sub || !(t = rt_qdq_init_val(s, p, c->node->inputs[0])) ||
	    (t->dtype != IR_DTYPE_UINT8 && t->dtype != IR_DTYPE_INT8) || t->rank > 3)
		return NULL;
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i] != 1 && t->dims[i] != d3[3 - t->rank + i])
			return NULL;
	*zc = c;
	return c->node->inputs[0];
}

/* The chain from the Cast c of codes w to b, the value MatMul reads:
 * fills u's inputs, inner nodes and rows; 0 when it is no such chain. */
static int cast_chain(const struct rt_session *s, struct rt_gplan *p, struct rt_nplan *c,
		      const struct rt_value *w, const struct ir_value *b, struct rt_qdq *u)
{
	struct rt_nplan *sub, *mul, *rs = NULL, *sl = NULL, *zc;
	struct ir_value *sv, *zv;
	int64_t shape[2], v[1], d3[3];

	codes3(w, d3);
	if (attr_int(c->node, "to", 0) != IR_DTYPE_FLOAT || c->node->n_inputs != 1 ||
	    !(sub = sole_op(p, c->node->outputs[0], "Sub")) || sub->node->n_inputs != 2 ||
	    sub->node->inputs[0] != c->node->outputs[0] ||
	    !(zv = zero_points(s, p, sub, d3, &zc)) ||
	    !(mul = sole_op(p, sub->node->outputs[0], "Mul")) || mul->node->n_inputs != 2)
		return 0;
	sv = mul->node->inputs[mul->node->inputs[0] == sub->node->outputs[0] ? 1 : 0];
	if (!fits3(rt_qdq_init_val(s, p, sv), d3))
		return 0;
	u->rows = d3[0] * d3[1];
	/* codes [K, N] are B as they are */
	if (mul->node->outputs[0] == b && w->rank == 2)
		goto done;
	if (!(rs = sole_op(p, mul->node->outputs[0], "Reshape")) || rs->node->n_inputs != 2 ||
	    rs->node->inputs[0] != mul->node->outputs[0] ||
	    !i64s(s, p, rs->node->inputs[1], 2, shape) || shape[1] != d3[2] ||
	    (shape[0] != -1 && shape[0] != d3[0] * d3[1]))
		return 0;
	if (rs->node->outputs[0] != b) {
		const struct ir_node *n;
		int64_t at = 0, step = 1;

		if (!(sl = sole_op(p, rs->node->outputs[0], "Slice")) || (n = sl->node)->outputs[0] != b ||
		    n->n_inputs < 3 || n->inputs[0] != rs->node->outputs[0] ||
		    !i64s(s, p, n->inputs[1], 1, v) || v[0] != 0 ||
		    !i64s(s, p, n->inputs[2], 1, v) ||
		    (n->n_inputs > 3 && n->inputs[3] && (!i64s(s, p, n->inputs[3], 1, &at) ||
							 (at != 0 && at != -2))) ||
		    (n->n_inputs > 4 && n->inputs[4] && (!i64s(s, p, n->inputs[4], 1, &step) ||
							 step != 1)) || v[0] < 1)
			return 0;
		if (v[0] < u->rows)
			u->rows = v[0];
	}
done:
	u->ins[WO_Q] = c->node->inputs[0];
	u->ins[WO_Z] = zv;
	u->ins[WO_S] = sv;
	/* at most RT_QDQ_MAX_CHAIN nodes: the six below */
	if (zc)
		u->chain_nodes[u->n_chain_nodes++] = zc->node->index;
	u->chain_nodes[u->n_chain_nodes++] = c->node->index;
	u->chain_nodes[u->n_chain_nodes++] = sub->node->index;
	u->chain_nodes[u->n_chain_nodes++] = mul->node->index;
	if (rs)
		u->chain_nodes[u->n_chain_nodes++] = rs->node->index;
	if (sl)
		u->chain_nodes[u->n_chain_nodes++] = sl->node->index;
	return 1;
}

static int wo_cast_run(struct rt_kctx *k);

/* From B's producer back to the chain's Cast (Slice, Reshape, Mul, Sub,
 * Cast; cast_chain checks the rest), or NULL. */
static struct rt_nplan *chain_cast(struct rt_gplan *p, struct rt_nplan *np)
{
	static const char *const ops[] = { "Slice", "Reshape", "Mul", "Sub", "Cast" };

	for (size_t j = 0; np && j < sizeof(ops) / sizeof(*ops); j++) {
		const struct ir_node *n = np->node;

		if (!rt_qdq_is_op(n, ops[j])) {
			if (j <= 1)     /* Slice and Reshape may be absent */
				continue;
			return NULL;
		}
		if (j == 4)
			return np;
		if (j == 2) {   /* the Sub's side of the Mul */
			struct rt_nplan *a = producer_of(p, n, 0), *b = producer_of(p, n, 1);

			np = a && rt_qdq_is_op(a->node, "Sub") ? a : b;
			continue;
		}
		np = producer_of(p, n, 0);
	}
	return NULL;
}

/* A MatMul whose B is the cast chain of constant 8-bit codes. */
static struct rt_qdq *wo_cast_at(struct rt_session *s, struct rt_gplan *p, size_t i,
				 struct rt_nplan *cp)
{
	const struct ir_node *n = p->nodes[i].node;
	const struct rt_value *w;
	struct rt_qdq *u;

	if (!cp || !rt_qdq_is_op(cp->node, "Cast") || !cp->kernel ||
	    !(w = rt_qdq_init_val(s, p, cp->node->inputs[0])) ||
	    (w->dtype != IR_DTYPE_UINT8 && w->dtype != IR_DTYPE_INT8) ||
	    (w->rank != 2 && w->rank != 3))
		return NULL;
	if (!(u = rt_qdq_unit_new(n, WO_N_IN)))
		return NULL;
	if (cast_chain(s, p, cp, w, n->inputs[1], u)) {
		u->ins[WO_A] = n->inputs[0];
		u->outs[0] = n->outputs[0];
		u->head = &p->nodes[i];
		u->kernel = (struct rt_kernel){ "ai.onnx", "MatMul", 1, RT_OPEN, wo_cast_run };
		if (rt_qdq_unit_plan(p, i, u) == 0)
			return u;
	}
	rt_qdq_unit_free(u);
	return NULL;
}

/* One product: y (rows x n) = a (rows x kd) * dequantized B (kd x n). */
struct wo_job {
	const float *a, *s;
	const uint8_t *q, *z;   /* one byte an element, or q packed (4-bit
				 * codes as the file has them) */
	float *y, *w;           /* w: B dequantized, kd x n */
	int64_t rows, kd, n, block, slen;
	int mode, axis, sgn, packed;
	int failed;             /* a thread's row buffer was refused */
	/* the cast chain: float zero points zf; zero points and scales
	 * broadcast over the codes as [kd / bs, bs, n] with these element
	 * strides */
	const float *zf;
	int64_t bs, zst[3], sst[3];
};

/* len elements of one row of B: scales (and zero points) one apart
 * (sstep 1) or one for all (sstep 0), as k_quant.c computes them. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void wo_row(const uint8_t *q, const uint8_t *z, const float *s, int sstep, int sgn,
		   int64_t len, float *w)
{
	if (sgn) {
		const int8_t *qi = (const int8_t *)q, *zi = (const int8_t *)z;

		if (sstep && zi)
			for (int64_t j = 0; j < len; j++)
				w[j] = (float)((int32_t)qi[j] - (int32_t)zi[j]) * s[j];
		else if (sstep)
			for (int64_t j = 0; j < len; j++)
				w[j] = (float)(int32_t)qi[j] * s[j];
		else
			for (int64_t j = 0; j < len; j++)
				w[j] = (float)((int32_t)qi[j] - (zi ? (int32_t)zi[0] : 0)) * s[0];
	} else {
		if (sstep && z)
			for (int64_t j = 0; j < len; j++)
				w[j] = (float)((int32_t)q[j] - (int32_t)z[j]) * s[j];
		else if (sstep)
			for (int64_t j = 0; j < len; j++)
				w[j] = (float)(int32_t)q[j] * s[j];
		else
			for (int64_t j = 0; j < len; j++)
				w[j] = (float)((int32_t)q[j] - (z ? (int32_t)z[0] : 0)) * s[0];
	}
}

/* Columns [j0, j0 + len) of row r of B into w; qrow: the row's codes,
 * one byte each. */
static void wo_fill(const struct wo_job *p, const uint8_t *qrow, int64_t r, int64_t j0,
		    int64_t len, float *w)
{
	const uint8_t *q = qrow + j0;
	int64_t si;

	switch (p->mode) {
	case WO_TENSOR:
		wo_row(q, p->z, p->s, 0, p->sgn, len, w);
		return;
	case WO_AXIS:
		si = p->axis == 0 ? r : j0;
		wo_row(q, p->z ? p->z + si : NULL, p->s + si, p->axis, p->sgn, len, w);
		return;
	default:
		break;
	}
	if (p->axis == 0) {
		si = (r / p->block) * p->n + j0;
		wo_row(q, p->z ? p->z + si : NULL, p->s + si, 1, p->sgn, len, w);
		return;
	}
	/* blocks along the row: one scale for each run of block columns */
	for (int64_t j = 0; j < len;) {
		int64_t c = j0 + j, end = (c / p->block + 1) * p->block - j0;

		if (end > len)
			end = len;
		si = r * p->slen + c / p->block;
		wo_row(q + j, p->z ? p->z + si : NULL, p->s + si, 0, p->sgn, end - j, w + j);
		j = end;
	}
}

/* The n codes from element e of packed 4-bit codes q, a byte each
 * (int4 sign-extended), as tensor_conv.c unpacks them. */
static void wo_unpack(const uint8_t *q, int64_t e, int64_t n, int sgn, uint8_t *o)
{
	int64_t j = 0;

	if (e & 1)
		o[j++] = q[e / 2] >> 4;
	for (const uint8_t *b = q + (e + j) / 2; j + 1 < n; j += 2, b++) {
		o[j] = *b & 15;
		o[j + 1] = *b >> 4;
	}
	if (j < n)
		o[j] = q[(e + j) / 2] & 15;
	if (sgn)
		for (j = 0; j < n; j++)
			o[j] = (uint8_t)(o[j] >= 8 ? o[j] - 16 : o[j]);
}

/* One row of the cast chain: ((float)code - z) * s, z and s one apart
 * (step 1) or one for all (step 0), as the Cast, Sub and Mul kernels
 * compute it. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void wc_row(const uint8_t *q, int sgn, const float *z, int64_t zs, const float *s,
		   int64_t ss, int64_t len, float *w)
{
	if (zs == 1 && ss == 1 && !sgn) {
		for (int64_t j = 0; j < len; j++)
			w[j] = ((float)q[j] - z[j]) * s[j];
		return;
	}
	for (int64_t j = 0; j < len; j++)
		w[j] = ((sgn ? (float)(int8_t)q[j] : (float)q[j]) - z[j * zs]) * s[j * ss];
}

static void wc_rows(void *ctx, int64_t lo, int64_t hi)
{
	const struct wo_job *p = ctx;

	for (int64_t r = lo; r < hi; r++) {
		int64_t b = r / p->bs, i = r % p->bs;

		wc_row(p->q + r * p->n, p->sgn, p->zf + b * p->zst[0] + i * p->zst[1], p->zst[2],
		       p->s + b * p->sst[0] + i * p->sst[1], p->sst[2], p->n, p->w + r * p->n);
	}
}

/* Element strides of t broadcast onto [d3[0], d3[1], d3[2]]. */
static void strides3(const struct rt_value *t, const int64_t *d3, int64_t *st)
{
	int64_t inner = 1;

	for (int a = 2; a >= 0; a--) {
		int ti = a - (3 - t->rank);

		st[a] = ti < 0 || t->dims[ti] == 1 || d3[a] == 1 ? 0 : inner;
		if (ti >= 0)
			inner *= t->dims[ti];
	}
}

/* Rows [lo, hi) of B, dequantized into p->w (packed codes through a row
 * of bytes). */
static void wo_rows(void *ctx, int64_t lo, int64_t hi)
{
	struct wo_job *p = ctx;
	uint8_t *row = NULL;

	if (p->packed && !(row = malloc((size_t)p->n))) {
		__atomic_store_n(&p->failed, 1, __ATOMIC_RELAXED);
		return;
	}
	for (int64_t r = lo; r < hi; r++) {
		if (row)
			wo_unpack(p->q, r * p->n, p->n, p->sgn, row);
		wo_fill(p, row ? row : p->q + r * p->n, r, 0, p->n, p->w + r * p->n);
	}
	free(row);
}

int rt_qdq_wo_packed_in(const struct rt_nplan *np, size_t i)
{
	return np->kernel && np->kernel->run == wo_run && i == WO_Q;
}

/* y = A times B, B's kd rows dequantized by fill over the threads into a
 * scratch freed after the product: the MatMul's own product of a B of
 * one batch (k_matmul.c: A's batches folded into one product of their
 * rows). */
static int wo_product(struct rt_kctx *k, const struct rt_value *a, struct wo_job *p,
		      void (*fill)(void *, int64_t, int64_t))
{
	int64_t dims[RT_MAX_RANK];
	struct rt_value *y;

	memcpy(dims, a->dims, (size_t)a->rank * sizeof(*dims));
	dims[a->rank - 1] = p->n;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_FLOAT, a->rank, dims)))
		return IR_ENOMEM;
	p->y = y->data;
	if (!y->numel)
		return 0;
	if (p->kd == 0) {
		memset(y->data, 0, (size_t)y->numel * sizeof(float));
		return 0;
	}
	if (!(p->w = malloc((size_t)(p->kd * p->n) * sizeof(float))))
		return rt_oom(k);
	rt_parallel_for(k, p->kd, WO_GRAIN, fill, p);
	if (p->failed) {
		free(p->w);
		return rt_oom(k);
	}
	rt_gemm_f32_par(k, 0, 0, p->rows, p->n, p->kd, 1.0f, p->a, p->kd, p->w, p->n, 0.0f,
			p->y, p->n);
	free(p->w);
	return 0;
}

static int wo_run(struct rt_kctx *k)
{
	struct rt_qdq *u = (struct rt_qdq *)(void *)((char *)k->np - offsetof(struct rt_qdq, np));
	const struct ir_node *d = u->dq[0]->node;
	struct rt_value *a, *q, *sc, *zp = rt_in(k, WO_Z);
	struct wo_job p = { 0 };

	if (rt_in_tensor(k, WO_A, &a) < 0 || rt_in_tensor(k, WO_Q, &q) < 0 ||
	    rt_in_tensor(k, WO_S, &sc) < 0)
		return IR_EINVAL;
	if (a->dtype != IR_DTYPE_FLOAT)
		return rt_err(k, "inputs A and B differ in dtype");
	if (a->rank < 1 || a->dims[a->rank - 1] != q->dims[0])
		return rt_err(k, "matmul shapes of A (rank %d, last dim %lld) and B (%lld x %lld) "
			      "do not match", a->rank, a->rank ? (long long)a->dims[a->rank - 1] : 0,
			      (long long)q->dims[0], (long long)q->dims[1]);
	p.mode = scale_mode(d, u->dq[0]->schema->since_version, q, sc, &p.axis, &p.block);
	p.kd = q->dims[0];
	p.n = q->dims[1];
	p.rows = p.kd ? a->numel / p.kd : 0;
	p.slen = p.mode == WO_BLOCK ? (q->dims[p.axis] + p.block - 1) / p.block : 0;
	p.sgn = q->dtype == IR_DTYPE_INT8 || q->dtype == IR_DTYPE_INT4;
	p.a = a->data;
	p.q = q->data;
	p.packed = (q->flags & RT_VALUE_PACKED) != 0;
	p.s = sc->data;
	p.z = zp ? zp->data : NULL;
	return wo_product(k, a, &p, wo_rows);
}

static int wo_cast_run(struct rt_kctx *k)
{
	struct rt_qdq *u = (struct rt_qdq *)(void *)((char *)k->np - offsetof(struct rt_qdq, np));
	struct rt_value *a, *q, *sc, *zp;
	int64_t d3[3];
	struct wo_job p = { 0 };
	int rc;

	if (rt_in_tensor(k, WO_A, &a) < 0 || rt_in_tensor(k, WO_Q, &q) < 0 ||
	    rt_in_tensor(k, WO_S, &sc) < 0 || rt_in_tensor(k, WO_Z, &zp) < 0)
		return IR_EINVAL;
	codes3(q, d3);
	if (a->dtype != IR_DTYPE_FLOAT)
		return rt_err(k, "inputs A and B differ in dtype");
	if (a->rank < 1 || a->dims[a->rank - 1] != u->rows)
		return rt_err(k, "matmul shapes of A (rank %d, last dim %lld) and B (%lld x %lld) "
			      "do not match", a->rank, a->rank ? (long long)a->dims[a->rank - 1] : 0,
			      (long long)u->rows, (long long)d3[2]);
	p.kd = u->rows;
	p.n = d3[2];
	p.bs = d3[1];
	p.rows = p.kd ? a->numel / p.kd : 0;
	p.sgn = q->dtype == IR_DTYPE_INT8;
	p.a = a->data;
	p.q = q->data;
	p.s = sc->data;
	p.zf = zp->data;
	/* 8-bit zero points (their Cast fused): as floats, exactly as the
	 * Cast makes them, for the run */
	if (zp->dtype != IR_DTYPE_FLOAT) {
		float *zf = malloc((size_t)zp->numel * sizeof(float) + 1);

		if (!zf)
			return rt_oom(k);
		for (int64_t i = 0; i < zp->numel; i++)
			zf[i] = zp->dtype == IR_DTYPE_INT8 ? (float)((const int8_t *)zp->data)[i] :
				(float)((const uint8_t *)zp->data)[i];
		p.zf = zf;
	}
	strides3(zp, d3, p.zst);
	strides3(sc, d3, p.sst);
	rc = wo_product(k, a, &p, wc_rows);
	if (p.zf != zp->data)
		free((void *)p.zf);
	return rc;
}
