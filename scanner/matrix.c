/* matrix.c: the compatibility matrix of a multi-target scan: one row per
 * op type (domain, name) of the model, one column per target, each cell
 * the worst verdict of that op type's nodes on that target. */
#include <stdlib.h>
#include <string.h>

#include "scanner/report.h"
#include "scanner/scan_int.h"

static const struct scan_result *sort_r;

static int node_cmp(const void *a, const void *b)
{
	const struct scan_node *x = &sort_r->nodes[*(const size_t *)a];
	const struct scan_node *y = &sort_r->nodes[*(const size_t *)b];
	int c = strcmp(x->domain, y->domain);

	return c ? c : strcmp(x->op_type, y->op_type);
}

int scan_matrix_build(const struct scan_result *r, struct scan_matrix *mx)
{
	size_t *idx = NULL, nr = 0;

	memset(mx, 0, sizeof(*mx));
	mx->n_targets = r->n_targets;
	if (!r->n_nodes)
		return 0;
	if (!(idx = malloc(r->n_nodes * sizeof(*idx))))
		return IR_ENOMEM;
	for (size_t i = 0; i < r->n_nodes; i++)
		idx[i] = i;
	sort_r = r;
	qsort(idx, r->n_nodes, sizeof(*idx), node_cmp);
	for (size_t i = 0; i < r->n_nodes; i++)
		nr += !i || node_cmp(&idx[i - 1], &idx[i]);
	if (!(mx->rows = calloc(nr, sizeof(*mx->rows))) ||
	    !(mx->cells = calloc(nr * (r->n_targets ? r->n_targets : 1), sizeof(*mx->cells)))) {
		free(idx);
		scan_matrix_release(mx);
		return IR_ENOMEM;
	}
	for (size_t i = 0; i < r->n_nodes; i++) {
		const struct scan_node *sn = &r->nodes[idx[i]];
		struct scan_matrix_row *row;

		if (!i || node_cmp(&idx[i - 1], &idx[i])) {
			row = &mx->rows[mx->n_rows];
			row->status = &mx->cells[mx->n_rows * r->n_targets];
			row->domain = sn->domain;
			row->op_type = sn->op_type;
			mx->n_rows++;
		}
		row = &mx->rows[mx->n_rows - 1];
		row->count++;
		for (size_t t = 0; t < r->n_targets; t++)
			if (r->targets[t].verdicts[idx[i]].status > row->status[t])
				row->status[t] = r->targets[t].verdicts[idx[i]].status;
	}
	free(idx);
	return 0;
}

void scan_matrix_release(struct scan_matrix *mx)
{
	free(mx->rows);
	free(mx->cells);
	memset(mx, 0, sizeof(*mx));
}
