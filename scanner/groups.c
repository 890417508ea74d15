/* groups.c: the per-target table of the text and people's reports: the
 * nodes that are not supported, grouped by op type and reason code, with
 * their count, first node names and the fix. */
#include <stdlib.h>
#include <string.h>

#include "scanner/report.h"
#include "scanner/scan_int.h"

struct gitem {
	size_t node;
	const char *code;
	const char *message;
	enum scan_status status;
	const char *rewrite;
	const struct scan_node *sn;
};

static int key_cmp(const struct gitem *x, const struct gitem *y)
{
	int c = strcmp(x->sn->op_type, y->sn->op_type);

	if (!c)
		c = strcmp(x->sn->domain, y->sn->domain);
	if (!c)
		c = strcmp(x->code, y->code);
	return c;
}

static int item_cmp(const void *a, const void *b)
{
	const struct gitem *x = a, *y = b;
	int c = key_cmp(x, y);

	if (c)
		return c;
	return x->node < y->node ? -1 : x->node > y->node;
}

static int group_cmp(const void *a, const void *b)
{
	const struct scan_group *x = a, *y = b;
	int c;

	if (x->status != y->status)
		return x->status > y->status ? -1 : 1;
	if ((c = strcmp(x->op_type, y->op_type)))
		return c;
	if ((c = strcmp(x->domain, y->domain)))
		return c;
	return strcmp(x->code, y->code);
}

/* Has node v a reason of this code before index k? */
static int seen_code(const struct scan_verdict *v, size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (!strcmp(v->reasons[j].code, v->reasons[k].code))
			return 1;
	return 0;
}

int scan_groups_build(const struct scan_result *r, size_t target,
		      struct scan_group **out, size_t *n)
{
	const struct scan_target_result *tr = &r->targets[target];
	struct gitem *it = NULL;
	struct scan_group *g = NULL;
	size_t ni = 0, cap = 0, ng = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < r->n_nodes; i++) {
		const struct scan_verdict *v = &tr->verdicts[i];
		size_t k = v->n_reasons ? v->n_reasons : 1;

		if (v->status == SCAN_SUPPORTED)
			continue;
		if (ni + k > cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct gitem *p;

			while (nc < ni + k)
				nc *= 2;
			if (!(p = realloc(it, nc * sizeof(*p)))) {
				free(it);
				return IR_ENOMEM;
			}
			it = p;
			cap = nc;
		}
		for (size_t j = 0; j < k; j++) {
			if (v->n_reasons && seen_code(v, j))
				continue;
			it[ni].node = i;
			it[ni].sn = &r->nodes[i];
			it[ni].code = v->n_reasons ? v->reasons[j].code : "";
			it[ni].message = v->n_reasons ? v->reasons[j].message : "";
			it[ni].status = v->status;
			it[ni].rewrite = v->rewrite;
			ni++;
		}
	}
	if (ni > 1)
		qsort(it, ni, sizeof(*it), item_cmp);
	if (ni && !(g = calloc(ni, sizeof(*g)))) {
		free(it);
		return IR_ENOMEM;
	}
	for (size_t i = 0; i < ni; i++) {
		struct scan_group *cur;

		if (!i || key_cmp(&it[i - 1], &it[i])) {
			cur = &g[ng++];
			cur->domain = it[i].sn->domain;
			cur->op_type = it[i].sn->op_type;
			cur->code = it[i].code;
			cur->message = it[i].message;
			cur->status = it[i].status;
		} else {
			cur = &g[ng - 1];
		}
		if (it[i].status > cur->status)
			cur->status = it[i].status;
		if (!cur->rewrite)
			cur->rewrite = it[i].rewrite;
		if (cur->n_first < SCAN_GROUP_FIRST)
			cur->first[cur->n_first++] = it[i].node;
		cur->count++;
	}
	free(it);
	if (ng > 1)
		qsort(g, ng, sizeof(*g), group_cmp);
	*out = g;
	*n = ng;
	return 0;
}
