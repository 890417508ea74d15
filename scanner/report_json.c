/* report_json.c: the opmig.scan/1 JSON report (schema in opmig-scan(1)):
 * model info, per target its counts, model-level findings and the nodes
 * that are not supported with their reasons and fix, and the matrix.
 * Written directly (no DOM) so that huge models stay fast. */
#include <stdio.h>
#include <stdlib.h>

#include "scanner/report.h"
#include "scanner/scan_int.h"

static void put_counts(FILE *out, const struct scan_counts *k)
{
	fprintf(out, "{\"nodes\": %zu, \"supported\": %zu, \"limited\": %zu, "
		"\"rewritable\": %zu, \"blocked\": %zu}", k->nodes, k->supported,
		k->limited, k->rewritable, k->blocked);
}

static void put_node(const struct scan_result *r, size_t i,
		     const struct scan_verdict *v, FILE *out)
{
	const struct scan_node *sn = &r->nodes[i];

	fprintf(out, "\n        {\"index\": %zu, \"name\": ", i);
	scan_put_json_str(out, sn->label);
	fputs(", \"op_type\": ", out);
	scan_put_json_str(out, sn->op_type);
	fputs(", \"domain\": ", out);
	scan_put_json_str(out, sn->domain);
	fprintf(out, ", \"version\": %d, \"graph\": ", sn->version);
	scan_put_json_str(out, sn->graph);
	fputs(", \"function\": ", out);
	if (sn->function)
		scan_put_json_str(out, sn->function);
	else
		fputs("null", out);
	fprintf(out, ", \"status\": \"%s\", \"reasons\": [", scan_status_name(v->status));
	for (size_t k = 0; k < v->n_reasons; k++) {
		fprintf(out, "%s{\"code\": \"%s\", \"message\": ", k ? ", " : "",
			v->reasons[k].code);
		scan_put_json_str(out, v->reasons[k].message);
		putc('}', out);
	}
	fputs("], \"rewrite\": ", out);
	if (v->rewrite)
		scan_put_json_str(out, v->rewrite);
	else
		fputs("null", out);
	putc('}', out);
}

static void put_target(const struct scan_result *r, size_t t, FILE *out)
{
	const struct scan_target_result *tr = &r->targets[t];
	int first = 1;

	fputs("\n    {\"id\": ", out);
	scan_put_json_str(out, tr->target->id);
	fputs(", \"name\": ", out);
	scan_put_json_str(out, tr->target->name);
	fputs(",\n      \"counts\": ", out);
	put_counts(out, &tr->counts);
	fprintf(out, ",\n      \"blocked_op_types\": %zu,\n      \"findings\": [",
		tr->blocked_op_types);
	for (size_t i = 0; i < tr->n_findings; i++) {
		fprintf(out, "%s\n        {\"status\": \"%s\", \"code\": \"%s\", \"message\": ",
			i ? "," : "", scan_status_name(tr->findings[i].status),
			tr->findings[i].code);
		scan_put_json_str(out, tr->findings[i].message);
		putc('}', out);
	}
	fputs(tr->n_findings ? "\n      ],\n      \"nodes\": [" : "],\n      \"nodes\": [", out);
	for (size_t i = 0; i < r->n_nodes; i++) {
		if (tr->verdicts[i].status == SCAN_SUPPORTED)
			continue;
		if (!first)
			putc(',', out);
		first = 0;
		put_node(r, i, &tr->verdicts[i], out);
	}
	fputs(first ? "]}" : "\n      ]}", out);
}

static void put_matrix(const struct scan_result *r, const struct scan_matrix *m, FILE *out)
{
	const struct scan_matrix mx = *m;

	fputs("  \"matrix\": [", out);
	for (size_t i = 0; i < mx.n_rows; i++) {
		fprintf(out, "%s\n    {\"op_type\": ", i ? "," : "");
		scan_put_json_str(out, mx.rows[i].op_type);
		fputs(", \"domain\": ", out);
		scan_put_json_str(out, mx.rows[i].domain);
		fprintf(out, ", \"nodes\": %zu, \"status\": {", mx.rows[i].count);
		for (size_t t = 0; t < r->n_targets; t++) {
			fprintf(out, "%s", t ? ", " : "");
			scan_put_json_str(out, r->targets[t].target->id);
			fprintf(out, ": \"%s\"", scan_status_name(mx.rows[i].status[t]));
		}
		fputs("}}", out);
	}
	fputs(mx.n_rows ? "\n  ]\n" : "]\n", out);
}

int scan_write_json(const struct scan_result *r, FILE *out)
{
	struct scan_matrix mx;

	/* everything that allocates before the first byte: a report is
	 * written whole or not at all */
	if (scan_matrix_build(r, &mx) < 0)
		return -1;
	fputs("{\n  \"schema\": \"" SCAN_JSON_SCHEMA "\",\n  \"model\": {\"path\": ", out);
	scan_put_json_str(out, r->path);
	fprintf(out, ", \"ir_version\": %lld, \"producer\": ", r->ir_version);
	scan_put_json_str(out, r->producer);
	fputs(", \"producer_version\": ", out);
	scan_put_json_str(out, r->producer_version);
	fprintf(out, ", \"opset\": %lld,\n    \"nodes\": %zu, \"main_nodes\": %zu, "
		"\"subgraph_nodes\": %zu, \"function_nodes\": %zu},\n  \"targets\": [",
		r->opset, r->n_nodes, r->n_main_nodes, r->n_sub_nodes, r->n_function_nodes);
	for (size_t t = 0; t < r->n_targets; t++) {
		if (t)
			putc(',', out);
		put_target(r, t, out);
	}
	fputs("\n  ],\n", out);
	put_matrix(r, &mx, out);
	scan_matrix_release(&mx);
	fputs("}\n", out);
	return 0;
}
