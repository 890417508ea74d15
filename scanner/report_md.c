/* report_md.c: the Markdown scan report for people: a summary table with
 * coverage per target, then per target its model-level findings and the
 * nodes that are not supported (grouped by op type and reason), and with
 * several targets the compatibility matrix. */
#include <stdio.h>

#include "scanner/report.h"
#include "scanner/scan_int.h"

static const struct scan_markup groups_md = {
	.put = scan_put_md,
	.head = "\n### Nodes not supported\n\n"
		"| status | op | reason | count | first nodes | fix | message |\n"
		"| --- | --- | --- | ---: | --- | --- | --- |\n",
	.row = "| %s | ",
	.counts = " | %s | %zu | ",
	.sep = " | ",
	.end = " |\n",
	.tail = "",
};

static int put_target(const struct scan_result *r, size_t t, FILE *out)
{
	const struct scan_target_result *tr = &r->targets[t];
	char line[512];

	fputs("\n## ", out);
	scan_put_md(out, tr->target->id);
	fputs(": ", out);
	scan_put_md(out, tr->target->name);
	scan_summary_line(tr, line, sizeof(line));
	fputs("\n\n", out);
	scan_put_md(out, line);
	fputs("\n", out);
	if (tr->n_findings) {
		fputs("\n### Model findings\n\n| status | code | message |\n| --- | --- | --- |\n", out);
		for (size_t i = 0; i < tr->n_findings; i++) {
			fprintf(out, "| %s | %s | ", scan_status_name(tr->findings[i].status),
				tr->findings[i].code);
			scan_put_md(out, tr->findings[i].message);
			fputs(" |\n", out);
		}
	}
	return scan_put_groups(r, t, out, &groups_md);
}

static int put_matrix(const struct scan_result *r, FILE *out)
{
	struct scan_matrix mx;

	if (scan_matrix_build(r, &mx) < 0)
		return -1;
	fputs("\n## Compatibility matrix\n\nThe worst verdict of each op type's nodes.\n\n| op | nodes |", out);
	for (size_t t = 0; t < r->n_targets; t++) {
		putc(' ', out);
		scan_put_md(out, r->targets[t].target->id);
		fputs(" |", out);
	}
	fputs("\n| --- | ---: |", out);
	for (size_t t = 0; t < r->n_targets; t++)
		fputs(" --- |", out);
	putc('\n', out);
	for (size_t i = 0; i < mx.n_rows; i++) {
		fputs("| ", out);
		scan_put_op(out, scan_put_md, mx.rows[i].domain, mx.rows[i].op_type);
		fprintf(out, " | %zu |", mx.rows[i].count);
		for (size_t t = 0; t < r->n_targets; t++)
			fprintf(out, " %s |", scan_status_name(mx.rows[i].status[t]));
		putc('\n', out);
	}
	scan_matrix_release(&mx);
	return 0;
}

int scan_write_md(const struct scan_result *r, FILE *out)
{
	fputs("# opmig scan: ", out);
	scan_put_md(out, r->path);
	fprintf(out, "\n\nai.onnx opset %lld, ir_version %lld, %zu nodes (%zu main graph, "
		"%zu in subgraphs, %zu in functions).\n\n## Summary\n\n"
		"| target | nodes | supported | limited | rewritable | blocked | coverage |\n"
		"| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
		r->opset, r->ir_version, r->n_nodes, r->n_main_nodes, r->n_sub_nodes,
		r->n_function_nodes);
	for (size_t t = 0; t < r->n_targets; t++) {
		const struct scan_counts *k = &r->targets[t].counts;

		fputs("| ", out);
		scan_put_md(out, r->targets[t].target->id);
		fprintf(out, " | %zu | %zu | %zu | %zu | %zu | %.1f%% |\n", k->nodes,
			k->supported, k->limited, k->rewritable, k->blocked,
			scan_pct(k->supported, k->nodes));
	}
	for (size_t t = 0; t < r->n_targets; t++)
		if (put_target(r, t, out) < 0)
			return -1;
	if (r->n_targets > 1 && put_matrix(r, out) < 0)
		return -1;
	return 0;
}
