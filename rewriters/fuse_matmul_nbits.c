/* fuse_matmul_nbits.c: pass "fuse-matmul-nbits": MatMul(A, W) whose W is
 * DequantizeLinear-21 of constant int4/uint4 codes [K, N], blocked along
 * axis 0 (block_size a power of two >= 16; scales and zero points
 * [ceil(K / block), N] initializers), fused into com.microsoft MatMulNBits
 * (4 bits) for targets that declare it for A's dtype.  The codes are
 * repacked into B [N, blocks, block / 2] (uint4: int4 codes move up by 8,
 * and so do their zero points), the scales transposed, zero points packed
 * two to a byte (explicit for uint4: MatMulNBits' default is 8).  W must
 * be read by that MatMul only, and the DequantizeLinear made by no pass
 * (the matmul-nbits lowering's output stays). */
#include <string.h>

#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

struct match {
	struct ir_node *dq, *mm;
	int64_t k, n, bs, kb;
	int sgn;                 /* int4 codes */
};

static int is_const_init(const struct ir_value *v)
{
	return v && v->init && !v->is_input;
}

static int match(const struct rw_ctx *c, struct ir_node *mm, struct match *m)
{
	struct ir_node *dq;
	const struct ir_vtype *a;
	int64_t wd[IR_INFER_MAX_RANK], sd[IR_INFER_MAX_RANK], zd[IR_INFER_MAX_RANK];
	int wr, sr, zr, dt;

	memset(m, 0, sizeof(*m));
	if (mm->n_inputs != 2 || !(dq = rw_producer(mm->inputs[1], "DequantizeLinear")) ||
	    !rw_single_use(mm->inputs[1]) || dq->n_inputs < 2 ||
	    rw_attr_int(dq, "axis", 1) != 0 || (m->bs = rw_attr_int(dq, "block_size", 0)) < 16 ||
	    (m->bs & (m->bs - 1)) || !is_const_init(dq->inputs[0]) ||
	    !is_const_init(dq->inputs[1]) ||
	    (dq->n_inputs > 2 && dq->inputs[2] && !is_const_init(dq->inputs[2])))
		return 0;
	dt = dq->inputs[0]->init->dtype;
	if ((dt != IR_DTYPE_INT4 && dt != IR_DTYPE_UINT4) ||
	    !rw_static_shape(c, dq->inputs[0], wd, &wr) || wr != 2 ||
	    !rw_static_shape(c, dq->inputs[1], sd, &sr) || sr != 2)
		return 0;
	m->k = wd[0];
	m->n = wd[1];
	m->kb = (m->k + m->bs - 1) / m->bs;
	if (sd[0] != m->kb || sd[1] != m->n || !(a = rw_type(c, mm->inputs[0])) || a->rank < 2 ||
	    a->dims[a->rank - 1].kind != IR_VDIM_VALUE || a->dims[a->rank - 1].value != m->k ||
	    dq->inputs[1]->init->dtype != a->dtype)
		return 0;
	if (dq->n_inputs > 2 && dq->inputs[2] &&
	    (dq->inputs[2]->init->dtype != dt || !rw_static_shape(c, dq->inputs[2], zd, &zr) ||
	     zr != 2 || zd[0] != m->kb || zd[1] != m->n))
		return 0;
	m->dq = dq;
	m->mm = mm;
	m->sgn = dt == IR_DTYPE_INT4;
	return 1;
}

/* B [N, kb, bs / 2], scales [N * kb] and zero points [N * ceil(kb / 2)]
 * (uint8, unsigned codes) from the DequantizeLinear's [K, N] codes and
 * [kb, N] scales and zero points (zp NULL: 0) */
static int repack(const struct match *m, const struct rt_value *w, const struct rt_value *s,
		  const struct rt_value *zp, struct rt_value **b, struct rt_value **so,
		  struct rt_value **zo)
{
	int64_t bd[3] = { m->n, m->kb, m->bs / 2 }, sdim[1] = { m->n * m->kb };
	int64_t zdim[1] = { m->n * ((m->kb + 1) / 2) };
	size_t es = rt_dtype_size(s->dtype);
	int off = m->sgn ? 8 : 0;
	uint8_t *q, *z;
	struct ir_diag d;

	ir_diag_init(&d);
	if (rt_tensor_new(NULL, IR_DTYPE_UINT8, 3, bd, b, &d) < 0 ||
	    rt_tensor_new(NULL, s->dtype, 1, sdim, so, &d) < 0 ||
	    rt_tensor_new(NULL, IR_DTYPE_UINT8, 1, zdim, zo, &d) < 0)
		return -1;
	q = (*b)->data;
	z = (*zo)->data;
	memset(q, 0, (size_t)(m->n * m->kb * (m->bs / 2)));
	memset(z, 0, (size_t)zdim[0]);
	for (int64_t r = 0; r < m->n; r++)
		for (int64_t kb = 0; kb < m->kb; kb++) {
			uint8_t *blk = q + (r * m->kb + kb) * (m->bs / 2);
			int zv = zp ? (m->sgn ? ((const int8_t *)zp->data)[kb * m->n + r] :
				       ((const uint8_t *)zp->data)[kb * m->n + r]) : 0;

			memcpy((char *)(*so)->data + (size_t)(r * m->kb + kb) * es,
			       (const char *)s->data + (size_t)(kb * m->n + r) * es, es);
			z[r * ((m->kb + 1) / 2) + kb / 2] |=
				(uint8_t)(((zv + off) & 15) << (kb % 2 * 4));
			for (int64_t j = 0; j < m->bs && kb * m->bs + j < m->k; j++) {
				int64_t at = (kb * m->bs + j) * m->n + r;
				int v = m->sgn ? ((const int8_t *)w->data)[at] :
					((const uint8_t *)w->data)[at];

				blk[j / 2] |= (uint8_t)(((v + off) & 15) << (j % 2 * 4));
			}
		}
	return 0;
}

static int fuse(struct rw_ctx *c, struct match *m)
{
	const struct ir_vtype *a = rw_type(c, m->mm->inputs[0]);
	struct rt_value *w = NULL, *s = NULL, *zp = NULL, *b = NULL, *so = NULL, *zo = NULL;
	struct ir_value *in[4];
	struct ir_node *nb, *dq = m->dq;
	struct rw_emit e;
	int rc = -1, has_zp = dq->n_inputs > 2 && dq->inputs[2];

	if (!a || (a->dtype != IR_DTYPE_FLOAT && a->dtype != IR_DTYPE_FLOAT16) ||
	    rw_made_by_pass(&m->dq, 1) ||
	    !rw_target_accepts(c, "com.microsoft", "MatMulNBits", a->dtype))
		return 0;
	w = rw_init_value(dq->inputs[0]);
	s = rw_init_value(dq->inputs[1]);
	if (has_zp)
		zp = rw_init_value(dq->inputs[2]);
	if (w && s && (zp || !has_zp))
		rc = repack(m, w, s, zp, &b, &so, &zo);
	rt_value_unref(w);
	rt_value_unref(s);
	rt_value_unref(zp);
	if (rc < 0 || rw_domain_ensure(c->m, "com.microsoft") < 0) {
		rt_value_unref(b);
		rt_value_unref(so);
		rt_value_unref(zo);
		return ir_diag_error(c->d, IR_ENOMEM,
				     "fuse-matmul-nbits: cannot repack the weights");
	}
	rw_begin(c, m->mm, &e);
	in[0] = m->mm->inputs[0];
	in[1] = rw_const_value(&e, b);
	in[2] = rw_const_value(&e, so);
	/* int4 codes without zero points are 8 off in unsigned form: the
	 * default zero point of MatMulNBits */
	in[3] = has_zp || !m->sgn ? rw_const_value(&e, zo) : NULL;
	nb = rw_node(&e, "MatMulNBits", "com.microsoft", in, in[3] ? 4 : 3, m->mm->outputs[0]);
	if (nb && (ir_node_set_int(nb, "K", m->k) < 0 || ir_node_set_int(nb, "N", m->n) < 0 ||
		   ir_node_set_int(nb, "bits", 4) < 0 ||
		   ir_node_set_int(nb, "block_size", m->bs) < 0))
		e.failed = 1;
	rt_value_unref(b);
	rt_value_unref(so);
	rt_value_unref(zo);
	if ((rc = rw_end(&e, 0)) < 0)
		return rc;
	rw_remove_unread(c->m->graph, &dq, 1);
	return 1;
}

static int fuse_at(struct rw_ctx *c, struct ir_node *n)
{
	struct match m;

	if (strcmp(ir_s(n->op_type), "MatMul") || (n->domain && *n->domain) || !match(c, n, &m))
		return 0;
	return fuse(c, &m);
}

RW_FUSION(fuse_matmul_nbits, "fuse-matmul-nbits",
	  "MatMul of a blocked DequantizeLinear-21 of int4/uint4 weights fused into "
	  "com.microsoft MatMulNBits",
	  fuse_at);
