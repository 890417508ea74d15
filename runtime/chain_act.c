/* chain_act.c: activations that exporters write as several nodes, each
 * found as one step of an epilogue chain (chain.c) on the value v they
 * read:
 *   SiLU   Mul(v, Sigmoid(v))                      (either operand order)
 *   GELU   Mul(v, Add(Erf(Div(v, m)), 1))          (torch's F.gelu)
 *          Mul(Mul(v, a), Add(Erf(Div(v, m)), 1))  (BERT's x * 0.5 * ...)
 *          with Mul(v, m) for the Div, constants scalars, the Adds and
 *          Muls in either order.
 * Every node in between has that single reader and is no graph output, so
 * the step can stand for them all; the step then does each node's own
 * float32 operation in the node's order (the Sigmoid and Erf kernels'
 * functions: rt_silu_f32, rt_gelu_f32), so the results are the nodes'. */
#include <string.h>

#include "runtime/exec_int.h"

static int is_op(const struct rt_nplan *np, const char *op, size_t n_in)
{
	return np && rt_chain_steppable(np) && !strcmp(ir_s(np->node->op_type), op) &&
	       np->node->n_inputs == n_in;
}

/* The input of np that is not v (np has two, one of them v), or NULL */
static const struct ir_value *other(const struct rt_nplan *np, const struct ir_value *v)
{
	const struct ir_node *n = np->node;

	if (n->inputs[0] == v)
		return n->inputs[1] != v ? n->inputs[1] : NULL;
	return n->inputs[1] == v ? n->inputs[0] : NULL;
}

static struct rt_nplan *silu_use(struct rt_gplan *p, const struct ir_value *v,
				 struct rt_chain_step *st)
{
	for (size_t i = 0; i < 2; i++) {
		struct rt_nplan *a = rt_plan_node(p, v->uses[i]), *m;

		if (!is_op(a, "Sigmoid", 1) || a->node->inputs[0] != v ||
		    !(m = rt_plan_sole_use(p, a->node->outputs[0])) || !is_op(m, "Mul", 2) ||
		    m->node != v->uses[1 - i])
			continue;
		st->kind = RT_CHAIN_SILU;
		st->aux[0] = (size_t)(a - p->nodes);
		st->n_aux = 1;
		return m;
	}
	return NULL;
}

/* v's reader a as GELU's Div(v, m) or Mul(v, m) then Erf then Add of a
 * constant: the Add (its nodes in st->aux from 0), or NULL. */
static struct rt_nplan *erf_arm(struct rt_gplan *p, const struct ir_value *v,
				struct rt_nplan *a, struct rt_chain_step *st)
{
	struct rt_nplan *e, *d;

	if (is_op(a, "Div", 2) && a->node->inputs[0] == v && a->node->inputs[1] != v)
		st->kind = RT_CHAIN_GELU_DIV;
	else if (is_op(a, "Mul", 2) && other(a, v))
		st->kind = RT_CHAIN_GELU_MUL;
	else
		return NULL;
	if (!(e = rt_plan_sole_use(p, a->node->outputs[0])) || !is_op(e, "Erf", 1) ||
	    !(d = rt_plan_sole_use(p, e->node->outputs[0])) || !is_op(d, "Add", 2) ||
	    !other(d, e->node->outputs[0]))
		return NULL;
	st->aux[0] = (size_t)(a - p->nodes);
	st->aux[1] = (size_t)(e - p->nodes);
	st->aux[2] = (size_t)(d - p->nodes);
	st->n_aux = 3;
	return d;
}

static struct rt_nplan *gelu_use(struct rt_gplan *p, const struct ir_value *v,
				 struct rt_chain_step *st)
{
	for (size_t i = 0; i < 2; i++) {
		struct rt_nplan *d = erf_arm(p, v, rt_plan_node(p, v->uses[i]), st), *m, *h;
		const struct ir_value *w;

		if (!d || !(m = rt_plan_sole_use(p, d->node->outputs[0])) || !is_op(m, "Mul", 2) ||
		    !(w = other(m, d->node->outputs[0])))
			continue;
		if (w == v && m->node == v->uses[1 - i])   /* v * (erf + 1) */
			return m;
		/* (v * a) * (erf + 1) */
		h = rt_plan_node(p, v->uses[1 - i]);
		if (is_op(h, "Mul", 2) && h->node->outputs[0] == w && other(h, v) &&
		    rt_plan_sole_use(p, w) == m) {
			st->aux[st->n_aux++] = (size_t)(h - p->nodes);
			return m;
		}
	}
	return NULL;
}

struct rt_nplan *rt_chain_act_use(struct rt_gplan *p, const struct ir_value *v,
				  struct rt_chain_step *st)
{
	struct rt_nplan *m;

	if (!v || v->n_uses != 2 || ir_graph_is_output(p->g, v))
		return NULL;
	st->operand = -1;
	if ((m = silu_use(p, v, st)) != NULL)
		return m;
	if ((m = gelu_use(p, v, st)) != NULL)   /* the Div's or Mul's constant */
		st->operand = p->nodes[st->aux[0]].node->inputs[0] == v ? 1 : 0;
	return m;
}

/* Input i of np as a scalar this run has at hand, in float32 (a float16
 * or bfloat16 one as the node computing in float32 widens it): 1, or 0 */
static int scalar(struct rt_frame *f, const struct rt_nplan *np, size_t i, float *out)
{
	const struct rt_value *t = rt_chain_operand(f, np, i);

	if (!t || t->kind != RT_TENSOR || t->numel != 1)
		return 0;
	if (t->dtype == IR_DTYPE_FLOAT || (t->flags & RT_VALUE_WIDE))
		*out = ((const float *)t->data)[0];
	else if (t->dtype == IR_DTYPE_FLOAT16)
		*out = rt_half_to_float(((const uint16_t *)t->data)[0]);
	else if (t->dtype == IR_DTYPE_BFLOAT16)
		*out = rt_bf16_to_float(((const uint16_t *)t->data)[0]);
	else
		return 0;
	return 1;
}

int rt_chain_act_coef(struct rt_frame *f, const struct rt_chain_step *st, float *m, float *a)
{
	const struct rt_nplan *nodes = f->p->nodes, *arm, *add, *h;
	const struct ir_value *v, *e;
	float one;

	*m = *a = 0;
	if (st->kind == RT_CHAIN_SILU)
		return 1;
	arm = &nodes[st->aux[0]];
	add = &nodes[st->aux[2]];
	v = arm->node->inputs[1 - st->operand];
	e = nodes[st->aux[1]].node->outputs[0];
	if (!scalar(f, arm, (size_t)st->operand, m) ||
	    !scalar(f, add, add->node->inputs[0] == e ? 1 : 0, &one) || one != 1.0f)
		return 0;
	if (st->n_aux < 4)
		return 1;
	/* the half's constant; 0 would read as "none" */
	h = &nodes[st->aux[3]];
	return scalar(f, h, h->node->inputs[0] == v ? 1 : 0, a) && *a != 0;
}
