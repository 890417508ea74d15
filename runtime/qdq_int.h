/* qdq_int.h: what qdq.c (the units' analysis, QLinearConv/QLinearMatMul
 * units), qdq_table.c (units computed through a table of codes),
 * qdq_pair.c (two-input table units in vectors), qdq_wo.c (weight-only
 * products) and unit_padconv.c (a Pad done by its Conv) share: a unit is
 * a node run in place of several.  Internal to the runtime's engine. */
#ifndef OPMIG_QDQ_INT_H
#define OPMIG_QDQ_INT_H

#include "runtime/exec_int.h"

/* qdq_pair.c: a binary table unit's codes in float32 vectors, the op
 * and both DequantizeLinear and the QuantizeLinear per tensor; ok when
 * the path this CPU takes gave the pair table's every code. */
struct rt_qpair {
	int ok, op, isa512, recip;
	int sgn[2];                         /* operand j int8 */
	float s[2];
	int32_t z[2];
	float so, inv, zo, lo, hi;
};
/* Check the path against table (65536 codes, input 0's code index high):
 * dt, s, z the operands' and the output's dtype, scale and zero point;
 * returns q->ok. */
int rt_qpair_make(struct rt_qpair *q, const char *op, const int dt[3], const float s[3],
		  const int32_t z[3], const uint8_t *table);
/* y[i] = the unit's code of a[i * as] and b[i * bs], i < n. */
void rt_qpair_run(const struct rt_qpair *q, const uint8_t *a, int64_t as, const uint8_t *b,
		  int64_t bs, uint8_t *y, int64_t n);

/* The most outputs of a unit (a Split's pieces, each quantized), and
 * the most nodes of a weight-only unit's cast chain (qdq_wo.c). */
#define RT_QDQ_MAX_OUT 6
#define RT_QDQ_MAX_CHAIN 6

struct rt_qdq {
	struct ir_node node;                /* the unit's node: a copy of the
					     * head's with its own inputs,
					     * output and op */
	struct ir_value **ins;
	struct ir_value *outs[RT_QDQ_MAX_OUT];   /* node.n_outputs of them */
	struct rt_nplan np;                 /* its plan */
	size_t skip[3];                     /* QuantizeLinear, Relu, the
					     * unary unit a derived one
					     * does (or ~0) */
	/* table units (qdq_table.c) */
	char op[32];
	struct rt_kernel kernel;
	const struct rt_nplan *head;        /* the float op (NULL: Concat) */
	const struct rt_nplan **dq;         /* per coded input, its
					     * DequantizeLinear */
	const struct rt_nplan *q;
	/* a Split's outputs after the first: their QuantizeLinear (done
	 * by the unit, skipped) */
	const struct rt_nplan *q_more[RT_QDQ_MAX_OUT - 1];
	size_t n_more;
	int pool;                           /* a MaxPool (head) over codes */
	int move;                           /* a move op (head) of codes */
	const struct rt_qdq *inner;         /* derived: the unary unit whose
					     * result of input 0's codes is
					     * the head's other input */
	size_t derived;                     /* that input's place (0, 1) */
	int keeps_layout;                   /* its result is stored as its
					     * inputs are (layout_cl.c) */
	size_t chain_from;                  /* the node whose epilogue chain
					     * (chain.c) the unit takes, or ~0 */
	size_t n_codes;
	uint8_t *table;                     /* made on the first run */
	struct rt_qpair pair;               /* a binary unit's vectors (qdq_pair.c),
					     * checked when the table is made */
	/* weight-only units of a cast chain (qdq_wo.c) */
	size_t chain_nodes[RT_QDQ_MAX_CHAIN];   /* the chain's nodes, computed
						 * by the unit (skipped) */
	size_t n_chain_nodes;
	int64_t rows;                       /* rows of B the chain keeps */
	/* a Pad folded into a Conv (unit_padconv.c): the unit node's
	 * attributes, its pads */
	struct ir_attr **attrs;
	struct ir_attr pads;
	int64_t pads_v[2 * RT_MAX_RANK];
};

/* qdq.c: the pieces of a unit's pattern. */
int rt_qdq_is_op(const struct ir_node *n, const char *op);
/* v's value when it is an initializer no input overrides, else NULL. */
const struct rt_value *rt_qdq_init_val(const struct rt_session *s, const struct rt_gplan *p,
				       const struct ir_value *v);
/* The DequantizeLinear producing v, per tensor with an 8-bit zero point,
 * its parameters initializers (NULL: none such). */
const struct ir_node *rt_qdq_dq_act(const struct rt_session *s, struct rt_gplan *p,
				    const struct ir_value *v);
/* The QuantizeLinear taking v as its only use (through a Relu that
 * changes nothing), per tensor to 8 bits; *relu the Relu's plan or NULL. */
const struct ir_node *rt_qdq_q_out(const struct rt_session *s, struct rt_gplan *p,
				   const struct ir_value *v, struct rt_nplan **relu);
/* A unit of n_in inputs (ins allocated) for p's node head, NULL when out
 * of memory; plan: give it its plan (the kernel set or found by op), 0
 * or -1 (free it with unit_free then). */
struct rt_qdq *rt_qdq_unit_new(const struct ir_node *head, size_t n_in);
int rt_qdq_unit_plan(struct rt_gplan *p, size_t head, struct rt_qdq *u);
void rt_qdq_unit_free(struct rt_qdq *u);

/* qdq_table.c: a unit of a Concat, of an elementwise op of one or two
 * inputs, of a MaxPool or of an op that moves elements (a nearest
 * Resize, Transpose, Reshape, Slice, ...) between DequantizeLinear and
 * QuantizeLinear, or of x * Sigmoid(x) of one DequantizeLinear (a
 * quantized SiLU, one table of x's codes), or NULL. */
struct rt_qdq *rt_qdq_table_at(struct rt_session *s, struct rt_gplan *p, size_t i);

/* unit_padconv.c: a Conv reading a Pad of zeros (spatial axes, by
 * non-negative amounts) that nothing else reads, as the Conv with those
 * amounts added to its pads, or NULL. */
struct rt_qdq *rt_unit_padconv_at(struct rt_session *s, struct rt_gplan *p, size_t i);

/* qdq_wo.c: a MatMul of a weight-only quantized B (DequantizeLinear of
 * constant 4- or 8-bit codes, float32 scale, or the same written as
 * Cast, Sub, Mul, Reshape and Slice) as one dequantizing product, or
 * NULL. */
struct rt_qdq *rt_qdq_wo_at(struct rt_session *s, struct rt_gplan *p, size_t i);

#endif
