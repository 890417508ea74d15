/* plan.c: job planning: the items sorted and uniquely named, whatever the
 * order of the arguments; the shard's share of them (by index in sorted
 * order, so shards of the same inputs never overlap); and the jobs, an item
 * on each of its targets, with their output folders. */
#include <stdlib.h>
#include <string.h>

#include "batch/batch_int.h"
#include "ir/ir.h"
#include "oprules/rules.h"

static int item_cmp(const void *a, const void *b)
{
	const struct batch_item *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->source, y->source);
}

int batch_src_finish(struct batch_src *s, struct ir_diag *d)
{
	qsort(s->items, s->n_items, sizeof(*s->items), item_cmp);
	for (size_t i = 1; i < s->n_items; i++) {
		if (!strcmp(s->items[i].source, s->items[i - 1].source))
			return ir_diag_error(d, IR_EINVAL, "%s: given twice", s->items[i].source);
	}
	/* Equal names get "~2", "~3"... in source order. */
	for (size_t i = 0; i < s->n_items;) {
		size_t j = i + 1;

		while (j < s->n_items && !strcmp(s->items[j].name, s->items[i].name))
			j++;
		for (size_t k = i + 1; k < j; k++) {
			size_t len = strlen(s->items[k].name) + 24;
			char *nm = malloc(len);

			if (!nm)
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
			snprintf(nm, len, "%s~%zu", s->items[k].name, k - i + 1);
			free(s->items[k].name);
			s->items[k].name = nm;
		}
		i = j;
	}
	qsort(s->items, s->n_items, sizeof(*s->items), item_cmp);
	return 0;
}

int batch_shard_parse(const char *s, unsigned *k, unsigned *n)
{
	char *end;
	unsigned long a, b;

	if (!s || *s < '0' || *s > '9')
		return -1;
	a = strtoul(s, &end, 10);
	if (*end != '/' || end[1] < '0' || end[1] > '9')
		return -1;
	b = strtoul(end + 1, &end, 10);
	if (*end || a < 1 || b < 1 || a > b || b > 100000)
		return -1;
	*k = (unsigned)a;
	*n = (unsigned)b;
	return 0;
}

int batch_shard_has(size_t i, unsigned k, unsigned n)
{
	return n <= 1 || i % n == (size_t)(k - 1);
}

static const struct rules_target *find_target(const struct batch_opts *o, const char *id)
{
	for (size_t i = 0; i < o->n_dbs; i++)
		for (size_t k = 0; k < o->dbs[i]->n_targets; k++)
			if (!strcmp(o->dbs[i]->targets[k].id, id))
				return &o->dbs[i]->targets[k];
	return NULL;
}

int batch_plan(const struct batch_src *src, const struct batch_opts *o,
	       uint64_t rules_hash, struct batch_job **out, size_t *n_out,
	       struct ir_diag *d)
{
	struct batch_job *jobs = NULL;
	size_t n_jobs = 0, cap = 0;

	*out = NULL;
	*n_out = 0;
	for (size_t i = 0; i < src->n_items; i++) {
		const struct batch_item *it = &src->items[i];
		size_t nt = it->o.n_targets ? it->o.n_targets : o->n_targets;

		if (!batch_shard_has(i, o->shard_k, o->shard_n))
			continue;
		for (size_t t = 0; t < nt; t++) {
			const struct rules_target *tg = it->o.n_targets ?
				find_target(o, it->o.targets[t]) : o->targets[t];

			if (!tg) {
				free(jobs);
				return ir_diag_error(d, IR_EINVAL, "%s: no target '%s' (see 'opmig targets')",
						     it->source, it->o.targets[t]);
			}
			if (n_jobs == cap) {
				struct batch_job *q = realloc(jobs, (cap = cap ? 2 * cap : 64) * sizeof(*q));

				if (!q) {
					free(jobs);
					return ir_diag_error(d, IR_ENOMEM, "out of memory");
				}
				jobs = q;
			}
			jobs[n_jobs].item = it;
			jobs[n_jobs].target = tg;
			jobs[n_jobs].o = o;
			jobs[n_jobs].lim = &src->lim;
			jobs[n_jobs].rules_hash = rules_hash;
			snprintf(jobs[n_jobs].dir, sizeof(jobs[n_jobs].dir), "%s/%s/%s",
				 o->outdir, it->name, tg->id);
			n_jobs++;
		}
	}
	*out = jobs;
	*n_out = n_jobs;
	return 0;
}
