/* report_html.c: the HTML scan report: one self-contained page (inline
 * style, no scripts or external assets), readable in print: a summary per
 * target with a coverage bar, the model-level findings and the table of
 * blockers and other nodes not supported, and the compatibility matrix
 * when several targets are scanned. */
#include <stdio.h>

#include "scanner/report.h"
#include "scanner/scan_int.h"

static const char style[] =
	"body{font-family:sans-serif;margin:2em;color:#222;max-width:72em}\n"
	"table{border-collapse:collapse;margin:.5em 0 1.5em}\n"
	"th,td{border:1px solid #bbb;padding:.2em .5em;text-align:left;vertical-align:top}\n"
	"td.n{text-align:right}\n"
	".bar{display:flex;width:30em;height:1em;border:1px solid #888}\n"
	".bar div{height:100%}\n"
	".supported{background:#b7e1a1}.limited{background:#ffe08a}\n"
	".rewritable{background:#9ecbff}.blocked{background:#f4a6a6}\n"
	"@media print{body{margin:0}.bar,.supported,.limited,.rewritable,.blocked"
	"{-webkit-print-color-adjust:exact;print-color-adjust:exact}"
	"h2{page-break-before:auto}tr{page-break-inside:avoid}}\n";

static const struct scan_markup groups_html = {
	.put = scan_put_html,
	.head = "<h3>Blockers and other nodes not supported</h3>\n<table>\n"
		"<tr><th>status</th><th>op</th><th>reason</th><th>count</th>"
		"<th>first nodes</th><th>fix</th><th>message</th></tr>\n",
	.row = "<tr><td class=\"%s\">%s</td><td>",
	.counts = "</td><td>%s</td><td class=\"n\">%zu</td><td>",
	.sep = "</td><td>",
	.end = "</td></tr>\n",
	.tail = "</table>\n",
};

static void put_bar(FILE *out, const struct scan_counts *k)
{
	static const char *const cls[SCAN_N_STATUS] = {
		"supported", "limited", "rewritable", "blocked"
	};
	size_t v[SCAN_N_STATUS] = { k->supported, k->limited, k->rewritable, k->blocked };

	fprintf(out, "<div class=\"bar\" title=\"%.1f%% supported\">",
		scan_pct(k->supported, k->nodes));
	for (int i = 0; i < SCAN_N_STATUS; i++)
		if (v[i])
			fprintf(out, "<div class=\"%s\" style=\"width:%.2f%%\"></div>", cls[i],
				scan_pct(v[i], k->nodes));
	fputs("</div>\n", out);
}

static int put_target(const struct scan_result *r, size_t t, FILE *out)
{
	const struct scan_target_result *tr = &r->targets[t];
	char line[512];

	fputs("<h2 id=\"t-", out);
	scan_put_html(out, tr->target->id);
	fputs("\">", out);
	scan_put_html(out, tr->target->id);
	fputs(": ", out);
	scan_put_html(out, tr->target->name);
	fputs("</h2>\n<p>", out);
	scan_summary_line(tr, line, sizeof(line));
	scan_put_html(out, line);
	fputs("</p>\n", out);
	put_bar(out, &tr->counts);
	if (tr->n_findings) {
		fputs("<h3>Model findings</h3>\n<table>\n<tr><th>status</th><th>code</th>"
		      "<th>message</th></tr>\n", out);
		for (size_t i = 0; i < tr->n_findings; i++) {
			fprintf(out, "<tr><td class=\"%s\">%s</td><td>%s</td><td>",
				scan_status_name(tr->findings[i].status),
				scan_status_name(tr->findings[i].status), tr->findings[i].code);
			scan_put_html(out, tr->findings[i].message);
			fputs("</td></tr>\n", out);
		}
		fputs("</table>\n", out);
	}
	return scan_put_groups(r, t, out, &groups_html);
}

static int put_matrix(const struct scan_result *r, FILE *out)
{
	struct scan_matrix mx;

	if (scan_matrix_build(r, &mx) < 0)
		return -1;
	fputs("<h2>Compatibility matrix</h2>\n<p>The worst verdict of each op type's "
	      "nodes.</p>\n<table>\n<tr><th>op</th><th>nodes</th>", out);
	for (size_t t = 0; t < r->n_targets; t++) {
		fputs("<th>", out);
		scan_put_html(out, r->targets[t].target->id);
		fputs("</th>", out);
	}
	fputs("</tr>\n", out);
	for (size_t i = 0; i < mx.n_rows; i++) {
		fputs("<tr><td>", out);
		scan_put_op(out, scan_put_html, mx.rows[i].domain, mx.rows[i].op_type);
		fprintf(out, "</td><td class=\"n\">%zu</td>", mx.rows[i].count);
		for (size_t t = 0; t < r->n_targets; t++)
			fprintf(out, "<td class=\"%s\">%s</td>",
				scan_status_name(mx.rows[i].status[t]),
				scan_status_name(mx.rows[i].status[t]));
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
	scan_matrix_release(&mx);
	return 0;
}

int scan_write_html(const struct scan_result *r, FILE *out)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<title>opmig scan: ", out);
	scan_put_html(out, r->path);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>opmig scan: ", style);
	scan_put_html(out, r->path);
	fprintf(out, "</h1>\n<p>ai.onnx opset %lld, ir_version %lld, %zu nodes (%zu main "
		"graph, %zu in subgraphs, %zu in functions).</p>\n", r->opset, r->ir_version,
		r->n_nodes, r->n_main_nodes, r->n_sub_nodes, r->n_function_nodes);
	fputs("<h2>Summary</h2>\n<table>\n<tr><th>target</th><th>nodes</th><th>supported</th>"
	      "<th>limited</th><th>rewritable</th><th>blocked</th><th>coverage</th></tr>\n", out);
	for (size_t t = 0; t < r->n_targets; t++) {
		const struct scan_counts *k = &r->targets[t].counts;

		fputs("<tr><td><a href=\"#t-", out);
		scan_put_html(out, r->targets[t].target->id);
		fputs("\">", out);
		scan_put_html(out, r->targets[t].target->id);
		fprintf(out, "</a></td><td class=\"n\">%zu</td><td class=\"n\">%zu</td>"
			"<td class=\"n\">%zu</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td>"
			"<td>%.1f%%</td></tr>\n", k->nodes, k->supported, k->limited,
			k->rewritable, k->blocked, scan_pct(k->supported, k->nodes));
	}
	fputs("</table>\n<p>Bars: <span class=\"supported\">&#160;supported&#160;</span> "
	      "<span class=\"limited\">&#160;limited&#160;</span> "
	      "<span class=\"rewritable\">&#160;rewritable&#160;</span> "
	      "<span class=\"blocked\">&#160;blocked&#160;</span></p>\n", out);
	for (size_t t = 0; t < r->n_targets; t++)
		if (put_target(r, t, out) < 0)
			return -1;
	if (r->n_targets > 1 && put_matrix(r, out) < 0)
		return -1;
	fputs("</body>\n</html>\n", out);
	return 0;
}
