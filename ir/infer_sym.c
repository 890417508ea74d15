/* infer_sym.c: symbolic sums of dims for shape inference: a dim, or an
 * element of a shape tensor, may be c + k1*s1 + ... + kn*sn over symbolic
 * dims s (each >= 0), kept as an IR_VDIM_PARAM whose name is the sum's
 * canonical text "(k1*s1 + ... + c)", interned in the ir_infer (owned
 * there).  Equal sums get equal text, so comparing names proves equality;
 * different text proves nothing.  Declared dims named like a sum ("(...)")
 * read as unknown (infer_vtype.c), so a user's name never poses as one.
 * Sums come from Add, Sub and Mul by a constant of shape elements, from
 * Concat lengths and Range lengths; int64 wrap-around is not modelled
 * (dims are far below 2^62 in any model that can run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer_int.h"

#define SYM_TERMS 4
#define SYM_TEXT 512

struct sym_form {
	int64_t c;
	size_t n;
	const char *s[SYM_TERMS];   /* sorted by name, distinct */
	int64_t k[SYM_TERMS];       /* nonzero */
};

struct infer_syms {
	size_t n, cap;
	struct sym_entry {
		char *text;
		struct sym_form f;
	} *e;
};

int infer_sym_is_sum(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	return n >= 2 && name[0] == '(' && name[n - 1] == ')';
}

void infer_sym_release(struct ir_infer *r)
{
	struct infer_syms *t = r->syms;

	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->e[i].text);
	free(t->e);
	free(t);
	r->syms = NULL;
}

/* Symbols a sum may name: a letter or '_' first, then letters, digits and
 * "_.:/-" (no spaces, parentheses or '*', which the text uses, so that
 * the text of a sum names one sum only) */
static int plain_name(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("_.:/-", *s)))
			return 0;
	return 1;
}

/* The form of a dim; 0 when unknown or not one of ours */
static int form_of(const struct ir_infer *r, const struct ir_vdim *d, struct sym_form *f)
{
	memset(f, 0, sizeof(*f));
	if (d->kind == IR_VDIM_VALUE) {
		f->c = d->value;
		return 1;
	}
	if (d->kind != IR_VDIM_PARAM || !d->param || !*d->param)
		return 0;
	if (!infer_sym_is_sum(d->param)) {
		if (!plain_name(d->param))
			return 0;
		f->n = 1;
		f->s[0] = d->param;
		f->k[0] = 1;
		return 1;
	}
	for (size_t i = 0; r->syms && i < r->syms->n; i++)
		if (!strcmp(r->syms->e[i].text, d->param)) {
			*f = r->syms->e[i].f;
			return 1;
		}
	return 0;
}

/* f += k * g; 0 on overflow or too many terms */
static int form_add(struct sym_form *f, const struct sym_form *g, int64_t k)
{
	int64_t x;

	if (__builtin_mul_overflow(g->c, k, &x) || __builtin_add_overflow(f->c, x, &f->c))
		return 0;
	for (size_t i = 0; i < g->n; i++) {
		size_t j = 0;

		if (__builtin_mul_overflow(g->k[i], k, &x))
			return 0;
		while (j < f->n && strcmp(f->s[j], g->s[i]) < 0)
			j++;
		if (j < f->n && !strcmp(f->s[j], g->s[i])) {
			if (__builtin_add_overflow(f->k[j], x, &f->k[j]))
				return 0;
			if (!f->k[j]) {
				memmove(&f->s[j], &f->s[j + 1], (f->n - j - 1) * sizeof(f->s[0]));
				memmove(&f->k[j], &f->k[j + 1], (f->n - j - 1) * sizeof(f->k[0]));
				f->n--;
			}
			continue;
		}
		if (!x)
			continue;
		if (f->n == SYM_TERMS)
			return 0;
		memmove(&f->s[j + 1], &f->s[j], (f->n - j) * sizeof(f->s[0]));
		memmove(&f->k[j + 1], &f->k[j], (f->n - j) * sizeof(f->k[0]));
		f->s[j] = g->s[i];
		f->k[j] = x;
		f->n++;
	}
	return 1;
}

static int text_of(const struct sym_form *f, char *buf, size_t size)
{
	size_t o = 0;
	int w;

	w = snprintf(buf, size, "(");
	o += (size_t)w;
	for (size_t i = 0; i < f->n; i++) {
		int64_t k = f->k[i];
		const char *sign = k < 0 ? (i ? " - " : "-") : (i ? " + " : "");
		uint64_t a = k < 0 ? -(uint64_t)k : (uint64_t)k;

		if (a == 1)
			w = snprintf(buf + o, size - o, "%s%s", sign, f->s[i]);
		else
			w = snprintf(buf + o, size - o, "%s%llu*%s", sign, (unsigned long long)a,
				     f->s[i]);
		if (w < 0 || (size_t)w >= size - o)
			return 0;
		o += (size_t)w;
	}
	if (f->c) {
		uint64_t a = f->c < 0 ? -(uint64_t)f->c : (uint64_t)f->c;

		w = snprintf(buf + o, size - o, "%s%llu", f->c < 0 ? " - " : " + ",
			     (unsigned long long)a);
		if (w < 0 || (size_t)w >= size - o)
			return 0;
		o += (size_t)w;
	}
	w = snprintf(buf + o, size - o, ")");
	return w > 0 && (size_t)w < size - o;
}

/* The dim of form f: a value, a plain symbol, or an interned sum */
static int dim_of(struct ir_infer *r, const struct sym_form *f, struct ir_vdim *out)
{
	char buf[SYM_TEXT];
	struct infer_syms *t;
	struct sym_entry *e;

	*out = infer_dim_unknown();
	if (!f->n) {
		*out = infer_dim_val(f->c);
		return 0;
	}
	if (f->n == 1 && f->k[0] == 1 && !f->c) {
		out->kind = IR_VDIM_PARAM;
		out->param = f->s[0];
		return 0;
	}
	if (!text_of(f, buf, sizeof(buf)))
		return 0;
	if (!r->syms && !(r->syms = calloc(1, sizeof(*r->syms))))
		return IR_ENOMEM;
	t = r->syms;
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->e[i].text, buf)) {
			out->kind = IR_VDIM_PARAM;
			out->param = t->e[i].text;
			return 0;
		}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;

		if (!(e = realloc(t->e, cap * sizeof(*e))))
			return IR_ENOMEM;
		t->e = e;
		t->cap = cap;
	}
	e = &t->e[t->n];
	if (!(e->text = strdup(buf)))
		return IR_ENOMEM;
	e->f = *f;
	t->n++;
	out->kind = IR_VDIM_PARAM;
	out->param = e->text;
	return 0;
}

int infer_sym_arith(struct ir_infer *r, enum infer_sym_op op, const struct ir_vdim *a,
		    const struct ir_vdim *b, struct ir_vdim *out)
{
	struct sym_form fa, fb, f;

	*out = infer_dim_unknown();
	if (!form_of(r, a, &fa) || !form_of(r, b, &fb))
		return 0;
	memset(&f, 0, sizeof(f));
	switch (op) {
	case INFER_SYM_ADD:
		if (!form_add(&f, &fa, 1) || !form_add(&f, &fb, 1))
			return 0;
		break;
	case INFER_SYM_SUB:
		if (!form_add(&f, &fa, 1) || !form_add(&f, &fb, -1))
			return 0;
		break;
	case INFER_SYM_MUL:   /* by a constant only */
		if (fb.n && fa.n)
			return 0;
		if (!form_add(&f, fb.n ? &fb : &fa, fb.n ? fa.c : fb.c))
			return 0;
		break;
	default:
		return 0;
	}
	return dim_of(r, &f, out);
}

int infer_sym_range_len(struct ir_infer *r, const struct ir_vdim *start,
			const struct ir_vdim *limit, struct ir_vdim *out)
{
	struct sym_form fs, fl, f;

	*out = infer_dim_unknown();
	if (!form_of(r, start, &fs) || !form_of(r, limit, &fl))
		return 0;
	memset(&f, 0, sizeof(f));
	if (!form_add(&f, &fl, 1) || !form_add(&f, &fs, -1))
		return 0;
	/* max(limit - start, 0) is the sum itself where no term can make it
	 * negative (every symbol is a dim, >= 0) */
	if (f.c < 0)
		return 0;
	for (size_t i = 0; i < f.n; i++)
		if (f.k[i] < 0)
			return 0;
	return dim_of(r, &f, out);
}
