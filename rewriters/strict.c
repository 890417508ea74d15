/* strict.c: the strict schema check (ir_model_check_schema) around the
 * passes: the input model's faulty nodes are noted when the context is
 * made (exporters emit such nodes: they are tolerated while passes run);
 * after every pass a fault on any other node fails the pass, naming it;
 * and the final model must have no fault at all to be written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"

static int ptr_cmp(const void *a, const void *b)
{
	const struct ir_node *x = *(const struct ir_node *const *)a;
	const struct ir_node *y = *(const struct ir_node *const *)b;

	return (x > y) - (x < y);
}

static int note_faulty(void *ctx, const struct ir_node *n, const char *msg)
{
	struct rw_ctx *c = ctx;
	const struct ir_node **p;

	(void)msg;
	if (c->n_faulty && c->faulty[c->n_faulty - 1] == n)
		return 0;
	if (!(p = realloc(c->faulty, (c->n_faulty + 1) * sizeof(*p))))
		return IR_ENOMEM;
	c->faulty = p;
	p[c->n_faulty++] = n;
	return 0;
}

static int known_faulty(const struct rw_ctx *c, const struct ir_node *n)
{
	return c->n_faulty && bsearch(&n, c->faulty, c->n_faulty, sizeof(*c->faulty), ptr_cmp);
}

/* The pass a node came from, by its provenance ("opmig: PASS from ..."). */
static void pass_of(const struct ir_node *n, char *buf, size_t size)
{
	const char *d = n->doc;

	if (d && !strncmp(d, "opmig: ", 7))
		snprintf(buf, size, "%.*s", (int)strcspn(d + 7, " ,"), d + 7);
	else
		snprintf(buf, size, "?");
}

struct found {
	struct rw_ctx *c;
	char msg[512];
	const struct ir_node *n;
};

static int first_new(void *ctx, const struct ir_node *n, const char *msg)
{
	struct found *f = ctx;

	if (!f->n && !known_faulty(f->c, n)) {
		f->n = n;
		snprintf(f->msg, sizeof(f->msg), "%s", msg);
	}
	return 0;
}

int rw_strict_check(struct rw_ctx *c)
{
	struct found f = { c, "", NULL };
	char pass[64];
	int rc;

	if (!c->strict_ready) {
		c->strict_ready = 1;
		if ((rc = ir_model_check_schema(c->m, &c->inf, note_faulty, c, c->d)) < 0)
			return rc == IR_ENOMEM ? ir_diag_error(c->d, rc, "out of memory") : rc;
		if (c->n_faulty > 1)
			qsort(c->faulty, c->n_faulty, sizeof(*c->faulty), ptr_cmp);
		return 0;
	}
	if ((rc = ir_model_check_schema(c->m, &c->inf, first_new, &f, c->d)) < 0)
		return rc;
	if (!f.n)
		return 0;
	c->invalid = 1;
	if (c->pass)
		snprintf(pass, sizeof(pass), "%s", c->pass);
	else
		pass_of(f.n, pass, sizeof(pass));
	return ir_diag_error(c->d, IR_EINVAL, "the rewritten model is invalid after pass %s: %s", pass, f.msg);
}

int rw_strict_final(struct rw_ctx *c, char *why, size_t size)
{
	struct found f = { c, "", NULL };
	int n;
	const struct ir_node **keep = c->faulty;
	size_t nk = c->n_faulty;

	/* every fault counts here, the input's too */
	c->faulty = NULL;
	c->n_faulty = 0;
	n = ir_model_check_schema(c->m, &c->inf, first_new, &f, c->d);
	c->faulty = keep;
	c->n_faulty = nk;
	if (n <= 0)
		return n < 0 ? n : 1;
	if (n > 1)
		snprintf(why, size, "the migrated model is invalid: %.400s%s (and %d more fault%s)",
			 f.msg, known_faulty(c, f.n) ? ", as in the input model" : "", n - 1,
			 n == 2 ? "" : "s");
	else
		snprintf(why, size, "the migrated model is invalid: %.400s%s", f.msg,
			 known_faulty(c, f.n) ? ", as in the input model" : "");
	return 0;
}
