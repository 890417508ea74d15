/* prov.c: provenance of rewrites: which log entry emitted each node a
 * node pass made (by node name), so that a rewrite of an emitted node is
 * logged under the rewrite that made it, and the chain of rewrites one
 * node of the model went through ("Erf -> erf-poly -> Max -> max-relu")
 * can be reported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"

struct slot {
	char *name;
	long entry;
};

struct rw_prov {
	size_t n, cap;          /* cap a power of two, or 0 */
	struct slot *s;
};

void rw_prov_free(struct rw_prov *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->cap; i++)
		free(p->s[i].name);
	free(p->s);
	free(p);
}

static size_t hash(const char *s)
{
	size_t h = 1469598103934665603u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211u;
	return h;
}

static struct slot *find(const struct rw_prov *p, const char *name)
{
	size_t i;

	if (!p || !p->cap)
		return NULL;
	for (i = hash(name) & (p->cap - 1); p->s[i].name; i = (i + 1) & (p->cap - 1))
		if (!strcmp(p->s[i].name, name))
			return &p->s[i];
	return &p->s[i];
}

static int grow(struct rw_prov *p)
{
	struct rw_prov q = { 0, p->cap ? p->cap * 2 : 64, NULL };

	if (!(q.s = calloc(q.cap, sizeof(*q.s))))
		return -1;
	for (size_t i = 0; i < p->cap; i++)
		if (p->s[i].name) {
			struct slot *t = find(&q, p->s[i].name);

			*t = p->s[i];
			q.n++;
		}
	free(p->s);
	*p = q;
	return 0;
}

int rw_prov_add(struct rw_ctx *c, const char *name, long entry)
{
	struct slot *t;

	if (!name || !*name)
		return 0;
	if (!c->prov && !(c->prov = calloc(1, sizeof(*c->prov))))
		return IR_ENOMEM;
	if ((c->prov->n + 1) * 2 > c->prov->cap && grow(c->prov) < 0)
		return IR_ENOMEM;
	t = find(c->prov, name);
	if (!t->name) {
		if (!(t->name = strdup(name)))
			return IR_ENOMEM;
		c->prov->n++;
	}
	t->entry = entry;
	return 0;
}

long rw_prov_find(const struct rw_ctx *c, const char *name)
{
	const struct slot *t = name && *name ? find(c->prov, name) : NULL;

	return t && t->name ? t->entry : -1;
}

/* Does entry j descend from entry i? */
static int descends(const struct rw_log_entry *log, size_t j, size_t i)
{
	for (long p = log[j].parent; p >= 0; p = log[p].parent)
		if ((size_t)p == i)
			return 1;
	return 0;
}


static void put(char *buf, size_t size, size_t *len, const char *fmt, const char *a,
		const char *b)
{
	int k;

	if (*len >= size)
		return;
	k = snprintf(buf + *len, size - *len, fmt, a, b);
	if (k > 0)
		*len += (size_t)k < size - *len ? (size_t)k : size - *len - 1;
}

static int same_hop(const struct rw_log_entry *a, const struct rw_log_entry *b)
{
	return !strcmp(a->op, b->op) && !strcmp(a->pass, b->pass) &&
	       !strcmp(a->variant ? a->variant : "", b->variant ? b->variant : "");
}

/* " -> Op -> pass(variant)" */
static void hop(char *buf, size_t size, size_t *len, const struct rw_log_entry *e, int first)
{
	put(buf, size, len, first ? "%s -> %s" : " -> %s -> %s", e->op, e->pass);
	if (e->variant)
		put(buf, size, len, "(%s)%s", e->variant, "");
}

void rw_log_chain(const struct rw_log_entry *log, size_t n, size_t i, char *buf,
		  size_t size)
{
	size_t len = 0, nd = 0, *d;

	buf[0] = 0;
	if (!(d = malloc((n - i) * sizeof(*d) + 1)))
		return;
	for (size_t j = i + 1; j < n; j++)
		if (descends(log, j, i))
			d[nd++] = j;
	/* one hop per distinct (op, pass), where it first appears */
	for (size_t a = 0; a < nd; a++) {
		size_t count = 1;
		int seen = 0;
		char times[32];

		for (size_t b = 0; b < a && !seen; b++)
			seen = same_hop(&log[d[b]], &log[d[a]]);
		if (seen)
			continue;
		for (size_t b = a + 1; b < nd; b++)
			count += same_hop(&log[d[b]], &log[d[a]]);
		if (!len)
			hop(buf, size, &len, &log[i], 1);
		hop(buf, size, &len, &log[d[a]], 0);
		if (count > 1) {
			snprintf(times, sizeof(times), " (x%zu)", count);
			put(buf, size, &len, "%s%s", times, "");
		}
	}
	free(d);
}
