/* einsum.c: pass "einsum": Einsum of one or two operands with static
 * shapes and no index repeated within an operand (no traces, no
 * diagonals) and no ellipsis, as primitives:
 *   letters only in one operand and not in the output: ReduceSum first;
 *   A transposed to [batch, a-kept, contracted], B to [batch, contracted,
 *   b-kept], reshaped to rank 3, one MatMul, reshaped to [batch, a-kept,
 *   b-kept] and transposed to the output's order.
 * One operand: ReduceSum and Transpose.  Implicit outputs (no "->") are
 * the letters seen once, in alphabetical order.  A letter whose dims
 * differ between operands (broadcast) is refused.  Float data. */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

#define MAXL 16

struct term {
	int n;
	char l[MAXL];
};

struct plan {
	int n_in;
	struct term in[2], out;
	int64_t size[128];               /* per letter */
};

static int find(const struct term *t, char ch)
{
	for (int i = 0; i < t->n; i++)
		if (t->l[i] == ch)
			return i;
	return -1;
}

static int parse_term(const char *s, size_t len, struct term *t, char *why, size_t size)
{
	t->n = 0;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if (ch == ' ')
			continue;
		if (ch == '.') {
			snprintf(why, size, "ellipsis ('...') is not supported");
			return 0;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) || t->n == MAXL) {
			snprintf(why, size, "bad term in the equation");
			return 0;
		}
		if (find(t, ch) >= 0) {
			snprintf(why, size, "index '%c' repeats within a term (trace or diagonal)", ch);
			return 0;
		}
		t->l[t->n++] = ch;
	}
	return 1;
}

static int make_plan(struct rw_ctx *c, const struct ir_node *n, struct plan *p,
		     char *why, size_t size)
{
	const char *eq = rw_attr_str(n, "equation", NULL), *arrow, *s, *end;
	int count[128] = { 0 };

	memset(p, 0, sizeof(*p));
	if (!eq || !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "no equation");
		return 0;
	}
	if (n->n_inputs < 1 || n->n_inputs > 2) {
		snprintf(why, size, "%zu operands (only 1 or 2)", n->n_inputs);
		return 0;
	}
	arrow = strstr(eq, "->");
	end = arrow ? arrow : eq + strlen(eq);
	p->n_in = 1;
	for (s = eq; s < end; s++)
		p->n_in += *s == ',';
	if (p->n_in > 2) {
		snprintf(why, size, "%d operands (only 1 or 2)", p->n_in);
		return 0;
	}
	s = eq;
	for (int k = 0; k < p->n_in; k++) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		const char *stop = comma ? comma : end;

		if (!parse_term(s, (size_t)(stop - s), &p->in[k], why, size))
			return 0;
		s = stop + 1;
	}
	if (p->n_in != (int)n->n_inputs) {
		snprintf(why, size, "the equation's terms do not match the %zu inputs", n->n_inputs);
		return 0;
	}
	for (int k = 0; k < p->n_in; k++) {
		int64_t dims[IR_INFER_MAX_RANK];
		int r;

		if (!n->inputs[k] || !rw_static_shape(c, n->inputs[k], dims, &r) ||
		    r != p->in[k].n) {
			snprintf(why, size, "operand %d's shape is not static or does not match its term", k);
			return 0;
		}
		for (int i = 0; i < r; i++) {
			unsigned char ch = (unsigned char)p->in[k].l[i];

			if (dims[i] < 1) {
				snprintf(why, size, "an operand is empty");
				return 0;
			}
			if (count[ch] && p->size[ch] != dims[i]) {
				snprintf(why, size, "index '%c' has sizes %lld and %lld (broadcast)",
					 ch, (long long)p->size[ch], (long long)dims[i]);
				return 0;
			}
			p->size[ch] = dims[i];
			count[ch]++;
		}
	}
	if (arrow) {
		if (!parse_term(arrow + 2, strlen(arrow + 2), &p->out, why, size))
			return 0;
		for (int i = 0; i < p->out.n; i++)
			if (!count[(unsigned char)p->out.l[i]]) {
				snprintf(why, size, "output index '%c' is in no operand", p->out.l[i]);
				return 0;
			}
	} else {
		for (int ch = 'A'; ch <= 'z'; ch++)
			if (count[ch] == 1)
				p->out.l[p->out.n++] = (char)ch;
	}
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct plan p;

	return rw_check_float_node(c, n, 12, why, size) && make_plan(c, n, &p, why, size);
}

/* x (letters from) in the order of to, written into out when set (an
 * order already right becomes a Reshape to the same shape) */
static struct ir_value *permute(struct rw_emit *e, const struct plan *p, struct ir_value *x,
				const struct term *from, const struct term *to,
				struct ir_value *out)
{
	int64_t perm[MAXL];
	int ident = 1;
	struct ir_node *t;

	for (int i = 0; i < to->n; i++) {
		perm[i] = find(from, to->l[i]);
		ident &= perm[i] == i;
	}
	if (ident && !out)
		return x;
	if (ident) {
		int64_t d[MAXL];

		for (int i = 0; i < to->n; i++)
			d[i] = p->size[(unsigned char)to->l[i]];
		return rw_op_to(e, "Reshape", x, rw_ints(e, d, (size_t)to->n), out);
	}
	t = rw_node(e, "Transpose", NULL, &x, 1, out);
	if (t && ir_node_set_ints(t, "perm", perm, (size_t)to->n) < 0)
		e->failed = 1;
	return t ? t->outputs[0] : NULL;
}

/* Sum out the letters of t not in keep1 or keep2; t becomes the rest. */
static struct ir_value *sum_out(struct rw_emit *e, struct ir_value *x, struct term *t,
				const struct term *keep1, const struct term *keep2,
				struct ir_value *out)
{
	int64_t axes[MAXL];
	size_t k = 0;
	struct term rest = { 0, { 0 } };

	for (int i = 0; i < t->n; i++) {
		if (find(keep1, t->l[i]) < 0 && (!keep2 || find(keep2, t->l[i]) < 0))
			axes[k++] = i;
		else
			rest.l[rest.n++] = t->l[i];
	}
	if (!k)
		return x;
	*t = rest;
	return rw_reduce(e, "ReduceSum", x, axes, k, 0, out);
}

static int64_t prod(const struct plan *p, const struct term *t)
{
	int64_t k = 1;

	for (int i = 0; i < t->n; i++)
		k *= p->size[(unsigned char)t->l[i]];
	return k;
}

static void add(struct term *t, const struct term *u)
{
	for (int i = 0; i < u->n; i++)
		t->l[t->n++] = u->l[i];
}

static struct ir_value *reshape(struct rw_emit *e, const struct plan *p, struct ir_value *x,
				const struct term *t)
{
	int64_t d[MAXL];

	for (int i = 0; i < t->n; i++)
		d[i] = p->size[(unsigned char)t->l[i]];
	return rw_op(e, "Reshape", x, rw_ints(e, d, (size_t)t->n));
}

static void apply_two(struct rw_emit *e, struct plan *p, struct ir_value *a,
		      struct ir_value *b, struct ir_value *y)
{
	struct term *ta = &p->in[0], *tb = &p->in[1];
	struct term bat = { 0, { 0 } }, con = { 0, { 0 } }, ak = { 0, { 0 } }, bk = { 0, { 0 } };
	struct term pa = { 0, { 0 } }, pb = { 0, { 0 } }, mid = { 0, { 0 } };
	int64_t s3[3];

	a = sum_out(e, a, ta, tb, &p->out, NULL);
	b = sum_out(e, b, tb, ta, &p->out, NULL);
	for (int i = 0; i < p->out.n; i++)
		if (find(ta, p->out.l[i]) >= 0 && find(tb, p->out.l[i]) >= 0)
			bat.l[bat.n++] = p->out.l[i];
	for (int i = 0; i < ta->n; i++) {
		if (find(tb, ta->l[i]) < 0)
			ak.l[ak.n++] = ta->l[i];
		else if (find(&p->out, ta->l[i]) < 0)
			con.l[con.n++] = ta->l[i];
	}
	for (int i = 0; i < tb->n; i++)
		if (find(ta, tb->l[i]) < 0)
			bk.l[bk.n++] = tb->l[i];
	add(&pa, &bat), add(&pa, &ak), add(&pa, &con);
	add(&pb, &bat), add(&pb, &con), add(&pb, &bk);
	a = permute(e, p, a, ta, &pa, NULL);
	b = permute(e, p, b, tb, &pb, NULL);
	s3[0] = prod(p, &bat);
	s3[1] = prod(p, &ak);
	s3[2] = prod(p, &con);
	a = rw_op(e, "Reshape", a, rw_ints(e, s3, 3));
	s3[1] = prod(p, &con);
	s3[2] = prod(p, &bk);
	b = rw_op(e, "Reshape", b, rw_ints(e, s3, 3));
	add(&mid, &bat), add(&mid, &ak), add(&mid, &bk);
	a = reshape(e, p, rw_op(e, "MatMul", a, b), &mid);
	permute(e, p, a, &mid, &p->out, y);
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct plan p;
	struct rw_emit e;
	char why[128];

	(void)v;
	make_plan(c, n, &p, why, sizeof(why));
	rw_begin(c, n, &e);
	if (p.n_in == 2) {
		apply_two(&e, &p, n->inputs[0], n->inputs[1], n->outputs[0]);
	} else {
		struct ir_value *x = sum_out(&e, n->inputs[0], &p.in[0], &p.out, NULL, NULL);

		permute(&e, &p, x, &p.in[0], &p.out, n->outputs[0]);
	}
	return rw_end(&e, 0);
}

static const char *const matches[] = { "Einsum", NULL };
static const char *const ops[] = { "ReduceSum", "Transpose", "Reshape", "MatMul", NULL };
static const struct rw_variant variants[] = { { "matmul", ops } };
RW_DECOMPOSITION(einsum, "einsum",
		 "Einsum of 1 or 2 operands (no repeated index, no ellipsis, static shapes) as ReduceSum, Transpose, Reshape, MatMul",
		 matches, variants, check, NULL, apply);
