/* report_dot.c: the scan as a Graphviz graph: one box per node coloured
 * by its verdict (the worst over the targets when there are several, each
 * target's verdict then in the label), edges along the values, subgraphs
 * and function bodies as clusters, graph inputs and outputs as ellipses;
 * with several targets the compatibility matrix as an HTML-like table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scanner/report.h"
#include "scanner/scan_int.h"

static const char *const colors[SCAN_N_STATUS] = {
	"#b7e1a1", "#ffe08a", "#9ecbff", "#f4a6a6"
};

struct nidx {
	const struct ir_node *n;
	size_t i;
};

static int nidx_cmp(const void *a, const void *b)
{
	const struct nidx *x = a, *y = b;

	return x->n < y->n ? -1 : x->n > y->n;
}

static long find_node(const struct nidx *v, size_t n, const struct ir_node *key)
{
	struct nidx k = { key, 0 };
	const struct nidx *p = n ? bsearch(&k, v, n, sizeof(*v), nidx_cmp) : NULL;

	return p ? (long)p->i : -1;
}

struct gidx {
	const char *graph;
	size_t i;
};

static int gidx_cmp(const void *a, const void *b)
{
	const struct gidx *x = a, *y = b;
	int c = strcmp(x->graph, y->graph);

	return c ? c : (x->i < y->i ? -1 : x->i > y->i);
}

static enum scan_status worst(const struct scan_result *r, size_t i)
{
	enum scan_status s = SCAN_SUPPORTED;

	for (size_t t = 0; t < r->n_targets; t++)
		if (r->targets[t].verdicts[i].status > s)
			s = r->targets[t].verdicts[i].status;
	return s;
}

static void put_node(const struct scan_result *r, size_t i, FILE *out)
{
	const struct scan_node *sn = &r->nodes[i];
	enum scan_status s = worst(r, i);

	fprintf(out, "  n%zu [label=\"", i);
	if (strcmp(sn->domain, "ai.onnx")) {
		scan_put_dot_str(out, sn->domain);
		putc(':', out);
	}
	scan_put_dot_str(out, sn->op_type);
	fputs("\\n", out);
	scan_put_dot_str(out, sn->label);
	if (r->n_targets > 1) {
		for (size_t t = 0; t < r->n_targets; t++) {
			fputs(t ? ", " : "\\n", out);
			scan_put_dot_str(out, r->targets[t].target->id);
			fprintf(out, " %s", scan_status_short(r->targets[t].verdicts[i].status));
		}
	} else if (s != SCAN_SUPPORTED) {
		const struct scan_verdict *v = &r->targets[0].verdicts[i];

		fprintf(out, "\\n%s", scan_status_name(s));
		if (v->n_reasons)
			fprintf(out, ": %s", v->reasons[0].code);
	}
	fprintf(out, "\", fillcolor=\"%s\"];\n", colors[s]);
}

static void put_matrix(const struct scan_result *r, const struct scan_matrix *mx, FILE *out)
{
	fputs("  matrix [shape=plaintext, label=<<table border=\"0\" cellborder=\"1\" "
	      "cellspacing=\"0\"><tr><td><b>op</b></td><td><b>nodes</b></td>", out);
	for (size_t t = 0; t < r->n_targets; t++) {
		fputs("<td><b>", out);
		scan_put_html(out, r->targets[t].target->id);
		fputs("</b></td>", out);
	}
	fputs("</tr>", out);
	for (size_t i = 0; i < mx->n_rows; i++) {
		fputs("<tr><td>", out);
		if (strcmp(mx->rows[i].domain, "ai.onnx")) {
			scan_put_html(out, mx->rows[i].domain);
			putc(':', out);
		}
		scan_put_html(out, mx->rows[i].op_type);
		fprintf(out, "</td><td>%zu</td>", mx->rows[i].count);
		for (size_t t = 0; t < r->n_targets; t++)
			fprintf(out, "<td bgcolor=\"%s\">%s</td>", colors[mx->rows[i].status[t]],
				scan_status_short(mx->rows[i].status[t]));
		fputs("</tr>", out);
	}
	fputs("</table>>];\n", out);
}

/* Edges into node i: from the scanned producer of each input (any scope),
 * or from the graph-input ellipse of the main graph. */
static void put_edges(const struct scan_result *r, const struct nidx *map, size_t i,
		      const struct ir_graph *main_g, FILE *out)
{
	const struct ir_node *n = r->nodes[i].node;

	for (size_t k = 0; k < n->n_inputs; k++) {
		const struct ir_value *v = n->inputs[k];
		long p;

		if (!v)
			continue;
		if (v->producer && (p = find_node(map, r->n_nodes, v->producer)) >= 0)
			fprintf(out, "  n%ld -> n%zu;\n", p, i);
		else if (v->is_input && v->graph == main_g && !v->init) {
			fputs("  \"in:", out);
			scan_put_dot_str(out, v->name);
			fprintf(out, "\" -> n%zu;\n", i);
		}
	}
}

int scan_write_dot(const struct scan_result *r, FILE *out)
{
	struct nidx *map = NULL;
	struct gidx *gs = NULL;
	const struct ir_graph *main_g = NULL;
	int rc = 0;

	if (r->n_nodes && (!(map = malloc(r->n_nodes * sizeof(*map))) ||
			   !(gs = malloc(r->n_nodes * sizeof(*gs))))) {
		rc = -1;
		goto cleanup;
	}
	for (size_t i = 0; i < r->n_nodes; i++) {
		map[i].n = r->nodes[i].node;
		map[i].i = i;
		gs[i].graph = r->nodes[i].graph;
		gs[i].i = i;
		if (!main_g && !r->nodes[i].depth && !r->nodes[i].function)
			main_g = r->nodes[i].node->graph;
	}
	if (r->n_nodes > 1) {
		qsort(map, r->n_nodes, sizeof(*map), nidx_cmp);
		qsort(gs, r->n_nodes, sizeof(*gs), gidx_cmp);
	}
	fputs("digraph scan {\n  graph [fontname=\"Helvetica\", label=\"opmig scan: ", out);
	scan_put_dot_str(out, r->path);
	for (size_t t = 0; t < r->n_targets; t++) {
		char line[512];

		scan_summary_line(&r->targets[t], line, sizeof(line));
		fputs("\\n", out);
		scan_put_dot_str(out, line);
	}
	fputs("\", labelloc=t];\n  node [shape=box, style=\"rounded,filled\", "
	      "fontname=\"Helvetica\", fontsize=10];\n", out);
	for (size_t i = 0; i < r->n_nodes;) {
		const char *g = gs[i].graph;
		int cluster = strcmp(g, "main") != 0;

		if (cluster) {
			fprintf(out, "  subgraph cluster_%zu {\n  label=\"", i);
			scan_put_dot_str(out, g);
			fputs("\"; style=dashed;\n", out);
		}
		for (; i < r->n_nodes && !strcmp(gs[i].graph, g); i++)
			put_node(r, gs[i].i, out);
		if (cluster)
			fputs("  }\n", out);
	}
	if (main_g) {
		for (size_t k = 0; k < main_g->n_inputs; k++) {
			const struct ir_value *v = main_g->inputs[k].value;

			if (!v || v->init)
				continue;
			fputs("  \"in:", out);
			scan_put_dot_str(out, v->name);
			fputs("\" [shape=ellipse, style=solid, label=\"", out);
			scan_put_dot_str(out, v->name);
			fputs("\"];\n", out);
		}
		for (size_t k = 0; k < main_g->n_outputs; k++) {
			const struct ir_value *v = main_g->outputs[k].value;
			long p;

			if (!v)
				continue;
			fputs("  \"out:", out);
			scan_put_dot_str(out, v->name);
			fputs("\" [shape=ellipse, style=solid, label=\"", out);
			scan_put_dot_str(out, v->name);
			fputs("\"];\n", out);
			if (v->producer && (p = find_node(map, r->n_nodes, v->producer)) >= 0) {
				fprintf(out, "  n%ld -> \"out:", p);
				scan_put_dot_str(out, v->name);
				fputs("\";\n", out);
			}
		}
	}
	for (size_t i = 0; i < r->n_nodes; i++)
		put_edges(r, map, i, main_g, out);
	if (r->n_targets > 1) {
		struct scan_matrix mx;

		if (scan_matrix_build(r, &mx) < 0) {
			rc = -1;
			goto cleanup;
		}
		put_matrix(r, &mx, out);
		scan_matrix_release(&mx);
	}
	fputs("}\n", out);
cleanup:
	free(map);
	free(gs);
	return rc;
}
