/* matrix.c: the compatibility matrix of a multi-target scan: one row per
 * op type (domain, name) of the model, one column per target, each cell
 * the worst verdict of that op type's nodes on that target. */
#include <stdlib.h>
#include <string.h>

#include "scanner/report.h"
#include "scanner/scan_int.h"

struct mkey {
	const char *domain, *op_type;
	size_t node;
};

static int key_cmp(const void *a, const void *b)
{
	const struct mkey *x = a, *y = b;
	int c = strcmp(x->domain, y->domain);

	return c ? c : strcmp(x->op_type, y->op_type);
}

int scan_matrix_build(const struct scan_result *r, struct scan_matrix *mx)
{
	struct mkey *k;
	size_t nr = 0;

	memset(mx, 0, sizeof(*mx));
	mx->n_targets = r->n_targets;
	if (!r->n_nodes)
		return 0;
	if (!(k = malloc(r->n_nodes * sizeof(*k))))
		return IR_ENOMEM;
	for (size_t i = 0; i < r->n_nodes; i++) {
		k[i].domain = r->nodes[i].domain;
		k[i].op_type = r->nodes[i].op_type;
		k[i].node = i;
	}
	qsort(k, r->n_nodes, sizeof(*k), key_cmp);
	for (size_t i = 0; i < r->n_nodes; i++)
		nr += !i || key_cmp(&k[i - 1], &k[i]);
	if (!(mx->rows = calloc(nr, sizeof(*mx->rows))) ||
	    !(mx->cells = calloc(nr * (r->n_targets ? r->n_targets : 1), sizeof(*mx->cells)))) {
		free(k);
		scan_matrix_release(mx);
		return IR_ENOMEM;
	}
	for (size_t i = 0; i < r->n_nodes; i++) {
		struct scan_matrix_row *row;

		if (!i || key_cmp(&k[i - 1], &k[i])) {
			row = &mx->rows[mx->n_rows];
			row->status = &mx->cells[mx->n_rows * r->n_targets];
			row->domain = k[i].domain;
			row->op_type = k[i].op_type;
			mx->n_rows++;
		}
		row = &mx->rows[mx->n_rows - 1];
		row->count++;
		for (size_t t = 0; t < r->n_targets; t++)
			if (r->targets[t].verdicts[k[i].node].status > row->status[t])
				row->status[t] = r->targets[t].verdicts[k[i].node].status;
	}
	free(k);
	return 0;
}

void scan_matrix_release(struct scan_matrix *mx)
{
	free(mx->rows);
	free(mx->cells);
	memset(mx, 0, sizeof(*mx));
}
