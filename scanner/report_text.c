/* report_text.c: the plain-text scan report: the model line, then per
 * target a summary line, the model-level findings and the table of nodes
 * that are not supported, grouped by op type and reason (count, first
 * node names, fix); with several targets, the compatibility matrix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scanner/report.h"
#include "scanner/scan_int.h"

/* "Erf" or "com.microsoft:Gelu". */
static void op_name(const char *domain, const char *op, char *buf, size_t size)
{
	if (!strcmp(domain, "ai.onnx"))
		snprintf(buf, size, "%s", op);
	else
		snprintf(buf, size, "%s:%s", domain, op);
}

static int write_target(const struct scan_result *r, size_t t, FILE *out)
{
	const struct scan_target_result *tr = &r->targets[t];
	struct scan_group *g;
	size_t ng;
	char line[512];

	scan_summary_line(tr, line, sizeof(line));
	fprintf(out, "\n%s\n", line);
	if (tr->n_findings) {
		fputs("  model findings:\n", out);
		for (size_t i = 0; i < tr->n_findings; i++)
			fprintf(out, "    %-10s %-19s %s\n", scan_status_name(tr->findings[i].status),
				tr->findings[i].code, tr->findings[i].message);
	}
	if (scan_groups_build(r, t, &g, &ng) < 0)
		return -1;
	if (ng) {
		fprintf(out, "  %-10s %-24s %-20s %6s  %-32s %s\n", "status", "op", "reason",
			"count", "nodes", "fix");
		for (size_t i = 0; i < ng; i++) {
			char op[160], nodes[256];
			size_t len = 0;

			op_name(g[i].domain, g[i].op_type, op, sizeof(op));
			nodes[0] = 0;
			for (size_t k = 0; k < g[i].n_first && len < sizeof(nodes); k++) {
				int w = snprintf(nodes + len, sizeof(nodes) - len, "%s%s", k ? ", " : "",
						 r->nodes[g[i].first[k]].label);

				len = w < 0 ? len : len + (size_t)w;
			}
			if (g[i].count > g[i].n_first && len < sizeof(nodes))
				snprintf(nodes + len, sizeof(nodes) - len, ", ...");
			fprintf(out, "  %-10s %-24s %-20s %6zu  %-32s %s\n",
				scan_status_name(g[i].status), op, *g[i].code ? g[i].code : "-",
				g[i].count, nodes, g[i].rewrite ? g[i].rewrite : "-");
			if (*g[i].message)
				fprintf(out, "  %-10s %s\n", "", g[i].message);
		}
	}
	free(g);
	return 0;
}

static int write_matrix(const struct scan_result *r, FILE *out)
{
	struct scan_matrix mx;

	if (scan_matrix_build(r, &mx) < 0)
		return -1;
	fputs("\ncompatibility matrix (worst verdict of each op type):\n", out);
	fprintf(out, "  %-32s %6s", "op", "nodes");
	for (size_t t = 0; t < r->n_targets; t++)
		fprintf(out, t + 1 < r->n_targets ? "  %-12s" : "  %s", r->targets[t].target->id);
	putc('\n', out);
	for (size_t i = 0; i < mx.n_rows; i++) {
		char op[160];

		op_name(mx.rows[i].domain, mx.rows[i].op_type, op, sizeof(op));
		fprintf(out, "  %-32s %6zu", op, mx.rows[i].count);
		for (size_t t = 0; t < r->n_targets; t++)
			fprintf(out, t + 1 < r->n_targets ? "  %-12s" : "  %s",
				scan_status_short(mx.rows[i].status[t]));
		putc('\n', out);
	}
	scan_matrix_release(&mx);
	return 0;
}

int scan_write_text(const struct scan_result *r, FILE *out)
{
	fprintf(out, "model: %s\n", r->path);
	fprintf(out, "opset: ai.onnx %lld, ir_version %lld\n", r->opset, r->ir_version);
	fprintf(out, "nodes: %zu (%zu main graph, %zu in subgraphs, %zu in functions)\n",
		r->n_nodes, r->n_main_nodes, r->n_sub_nodes, r->n_function_nodes);
	for (size_t t = 0; t < r->n_targets; t++)
		if (write_target(r, t, out) < 0)
			return -1;
	if (r->n_targets > 1 && write_matrix(r, out) < 0)
		return -1;
	return 0;
}
