/* fuse_gelu.c: pass "fuse-gelu": the decomposed Gelu that exporters emit,
 * fused into one op the target accepts (ai.onnx Gelu from opset 20, else
 * com.microsoft Gelu / FastGelu, whose domain import is added if absent):
 *   erf form   erf(x / sqrt 2) or erf(x * (1 / sqrt 2)), then + 1
 *   tanh form  tanh(sqrt(2/pi) (x + 0.044715 x^3)), x^3 as Pow(x, 3),
 *              x * x * x or x * (x * x), then + 1
 * followed by the product with x and 0.5 in any association: (x a) 0.5,
 * x (a 0.5), (x 0.5) a, operands of each Mul and Add in either order.
 * Every intermediate must be read only inside the pattern, and no node
 * of it made by a pass (the gelu decomposition's output stays).  Constants
 * match within 1e-4 (relative). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"

#define MAXP 16

struct match {
	struct ir_value *x;
	struct ir_node *nodes[MAXP];
	size_t n;
	int tanh;
	struct ir_node *last;
};

static void push(struct match *m, struct ir_node *n)
{
	if (m->n < MAXP)
		m->nodes[m->n++] = n;
}

/* Mul(x, k) or Mul(k, x) with x single-use into it: the other operand */
static struct ir_node *mul_by(const struct rw_ctx *c, const struct ir_value *v, double k,
			      struct ir_value **other)
{
	struct ir_node *p = rw_producer(v, "Mul");

	if (!p || p->n_inputs != 2)
		return NULL;
	for (int i = 0; i < 2; i++)
		if (rw_is_scalar_near(c, p->inputs[i], k)) {
			*other = p->inputs[1 - i];
			return p;
		}
	return NULL;
}

/* The tail after a = 1 + f(..): y = x * a * 0.5 in any association */
static int tail(const struct rw_ctx *c, struct match *m, struct ir_value *a)
{
	struct ir_node *u = rw_sole_user(a, "Mul"), *y;
	struct ir_value *o = rw_other_input(u, a), *xx;

	if (!u || !o)
		return 0;
	push(m, u);
	if (o == m->x || rw_is_scalar_near(c, o, 0.5)) {
		int half = o != m->x;

		if (!(y = rw_sole_user(u->outputs[0], "Mul")))
			return 0;
		o = rw_other_input(y, u->outputs[0]);
		if (!o || !(half ? o == m->x : rw_is_scalar_near(c, o, 0.5)))
			return 0;
		push(m, y);
		m->last = y;
		return 1;
	}
	if (!rw_single_use(o) || !mul_by(c, o, 0.5, &xx) || xx != m->x)
		return 0;
	push(m, o->producer);
	m->last = u;
	return 1;
}

/* a = Add(v, 1) with v single-use */
static struct ir_value *plus_one(const struct rw_ctx *c, struct match *m, struct ir_value *v)
{
	struct ir_node *a = rw_sole_user(v, "Add");

	if (!a || !rw_is_scalar_near(c, rw_other_input(a, v), 1.0))
		return NULL;
	push(m, a);
	return a->outputs[0];
}

static int match_erf(const struct rw_ctx *c, struct ir_node *erf, struct match *m)
{
	struct ir_value *z = erf->inputs[0], *a;
	struct ir_node *d = rw_producer(z, "Div");

	if (!rw_single_use(z))
		return 0;
	if (d && d->n_inputs == 2 && rw_is_scalar_near(c, d->inputs[1], sqrt(2.0))) {
		m->x = d->inputs[0];
		push(m, d);
	} else if ((d = mul_by(c, z, 1 / sqrt(2.0), &m->x)) != NULL) {
		push(m, d);
	} else {
		return 0;
	}
	push(m, erf);
	return (a = plus_one(c, m, erf->outputs[0])) && tail(c, m, a);
}

/* x^3 in the forms exporters use, every intermediate single-use */
static int cube_of(const struct rw_ctx *c, struct match *m, struct ir_value *v,
		   const struct ir_value *x)
{
	struct ir_node *p;

	if (!rw_single_use(v))
		return 0;
	if ((p = rw_producer(v, "Pow"))) {
		if (p->inputs[0] != x || p->n_inputs < 2 || !rw_is_scalar_near(c, p->inputs[1], 3))
			return 0;
		push(m, p);
		return 1;
	}
	if (!(p = rw_producer(v, "Mul")) || p->n_inputs != 2)
		return 0;
	for (int i = 0; i < 2; i++) {
		struct ir_node *q = rw_producer(p->inputs[1 - i], "Mul");

		if (p->inputs[i] == x && q && rw_single_use(p->inputs[1 - i]) &&
		    q->inputs[0] == x && q->inputs[1] == x) {
			push(m, p);
			push(m, q);
			return 1;
		}
	}
	return 0;
}

static int match_tanh(const struct rw_ctx *c, struct ir_node *t, struct match *m)
{
	struct ir_value *inner, *a;
	struct ir_node *z, *add;

	if (!rw_single_use(t->inputs[0]) ||
	    !(z = mul_by(c, t->inputs[0], sqrt(2.0 / M_PI), &inner)) ||
	    !rw_single_use(inner) || !(add = rw_producer(inner, "Add")) || add->n_inputs != 2)
		return 0;
	push(m, z);
	push(m, add);
	for (int i = 0; i < 2 && !m->x; i++) {
		struct ir_value *w = add->inputs[1 - i], *x3;
		struct ir_node *wm;
		size_t keep = m->n;

		if (!rw_single_use(w) || !(wm = mul_by(c, w, 0.044715, &x3)))
			continue;
		push(m, wm);
		if (cube_of(c, m, x3, add->inputs[i]))
			m->x = add->inputs[i];
		else
			m->n = keep;
	}
	if (!m->x)
		return 0;
	push(m, t);
	m->tanh = 1;
	return (a = plus_one(c, m, t->outputs[0])) && tail(c, m, a);
}

/* The fused op the target takes: ai.onnx Gelu or com.microsoft's */
static int pick(struct rw_ctx *c, int tanh, int dt, const char **dom, const char **op)
{
	if (c->opset >= 20 && rw_target_accepts(c, "", "Gelu", dt)) {
		*dom = NULL;
		*op = "Gelu";
		return 1;
	}
	*dom = "com.microsoft";
	*op = tanh ? "FastGelu" : "Gelu";
	return rw_target_accepts(c, *dom, *op, dt);
}

static int fuse(struct rw_ctx *c, struct match *m)
{
	const struct ir_vtype *t = rw_type(c, m->x);
	const char *dom, *op;
	struct rw_emit e;
	struct ir_node *g;

	if (!t || !rw_dtype_is_float(t->dtype) || rw_made_by_pass(m->nodes, m->n) ||
	    rw_made_by_pass(&m->last, 1) || !pick(c, m->tanh, t->dtype, &dom, &op))
		return 0;
	if (dom && rw_domain_ensure(c->m, dom) < 0)
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	rw_begin(c, m->last, &e);
	g = rw_node(&e, op, dom, &m->x, 1, m->last->outputs[0]);
	if (g && !dom && m->tanh && ir_node_set_string(g, "approximate", "tanh") < 0)
		e.failed = 1;
	return rw_fuse_finish(c, &e, m->nodes, m->n, m->last);
}

static int fuse_at(struct rw_ctx *c, struct ir_node *n)
{
	struct match m;
	const char *op = ir_s(n->op_type);

	memset(&m, 0, sizeof(m));
	if ((n->domain && *n->domain) || n->n_inputs != 1 || !n->n_outputs)
		return 0;
	if (!strcmp(op, "Erf") ? !match_erf(c, n, &m) :
	    !strcmp(op, "Tanh") ? !match_tanh(c, n, &m) : 1)
		return 0;
	return fuse(c, &m);
}

RW_FUSION(fuse_gelu, "fuse-gelu",
	  "the Erf and Tanh forms of Gelu fused into Gelu (opset 20) or com.microsoft Gelu/FastGelu",
	  fuse_at);
