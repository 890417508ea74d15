/* summary_doc.c: the summaries for people, summary.md and the
 * self-contained index.html: one document (a title, the model x target
 * matrix, the results, the failures) written by one write_doc() in either
 * markup.  Like every summary, a function of the sorted rows only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_int.h"

static const struct batch_row *find_row(const struct batch_summary *s,
					const char *model, const char *target)
{
	for (size_t i = 0; i < s->n_rows; i++)
		if (!strcmp(s->rows[i].model, model) && !strcmp(s->rows[i].target, target))
			return &s->rows[i];
	return NULL;
}

/* Text of one cell: "status native%/after%" (or the status alone). */
static void cell_text(const struct batch_row *r, char *b, size_t n)
{
	if (!r)
		snprintf(b, n, "-");
	else if (r->native_pct >= 0 && r->after_pct >= 0)
		snprintf(b, n, "%s %.1f%% / %.1f%%", batch_status_name(r->status),
			 r->native_pct, r->after_pct);
	else
		snprintf(b, n, "%s", batch_status_name(r->status));
}

static void md_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '\\' || *s == '*' || *s == '_' || *s == '`')
			fputc('\\', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
}

static void fmt_num(char *b, size_t n, const char *fmt, double x, int known)
{
	if (known && isfinite(x))
		snprintf(b, n, fmt, x);
	else
		snprintf(b, n, "-");
}

/* The detail columns of one row, formatted (shared by md and html). */
struct row_text { char nodes[32], native[32], after[32], blockers[32], err[32], secs[32]; };

static void row_text(const struct batch_row *r, struct row_text *t)
{
	fmt_num(t->nodes, sizeof(t->nodes), "%.0f", (double)r->nodes, r->nodes >= 0);
	fmt_num(t->native, sizeof(t->native), "%.1f%%", r->native_pct, r->native_pct >= 0);
	fmt_num(t->after, sizeof(t->after), "%.1f%%", r->after_pct, r->after_pct >= 0);
	fmt_num(t->blockers, sizeof(t->blockers), "%.0f", (double)r->blockers, r->blockers >= 0);
	fmt_num(t->err, sizeof(t->err), "%.3g", r->max_error, r->max_error >= 0);
	fmt_num(t->secs, sizeof(t->secs), "%.2f", r->seconds, r->seconds >= 0);
}

static void html_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* summary.md and index.html are one document (a title, the matrix, the
 * results, the failures) in two markups, written by one write_doc().
 * Text goes through str; the fields named fmt are printf formats, given:
 * intro the mode and the numbers of models, targets, jobs and failures;
 * cell a status for a class and the cell's text; result the status twice
 * and the detail columns (md shows no class: "%.0s"). */
struct markup {
	void (*str)(FILE *f, const char *s);
	const char *head, *intro_fmt;
	const char *th, *th_end, *head_end, *rule, *rule_end;   /* matrix heading */
	const char *row, *row_name_end, *cell_fmt, *row_end;    /* matrix rows */
	const char *results, *sep, *result_fmt;                 /* results table */
	const char *failures, *none, *list, *item, *item_end, *list_end;
	const char *tail;
};

static const struct markup md = {
	.str = md_str,
	.head = "",
	.intro_fmt = "# opmig batch (%s)\n\n%zu models, %zu targets, %zu jobs, %zu failed.\n\n"
		"## Matrix\n\nEach cell: status, native coverage / coverage after rewrites.\n\n"
		"| model |",
	.th = " ", .th_end = " |", .head_end = "\n| --- |", .rule = " --- |", .rule_end = "\n",
	.row = "| ", .row_name_end = " |", .cell_fmt = " %.0s%s |", .row_end = "\n",
	.results = "\n## Results\n\n| model | target | status | nodes | native | after rewrites | blockers | max error | seconds |\n"
		"| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
	.sep = " | ",
	.result_fmt = " | %.0s%s | %s | %s | %s | %s | %s | %s |\n",
	.failures = "\n## Failures\n\n", .none = "None.\n", .list = "",
	.item = "- ", .item_end = "\n", .list_end = "",
	.tail = "",
};

static const struct markup html = {
	.str = html_str,
	.head = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<title>opmig batch</title>\n<style>\n"
		"body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}\n"
		"td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left}\n"
		".scanned,.migrated{background:#dfd}.not_migrated{background:#ffd}\n"
		".error,.crashed,.timeout,.out_of_memory{background:#fdd}\n"
		"</style>\n</head>\n<body>\n",
	.intro_fmt = "<h1>opmig batch (%s)</h1>\n<p>%zu models, %zu targets, %zu jobs, %zu failed.</p>\n"
		"<h2>Matrix</h2>\n<p>Each cell: status, native coverage / coverage after rewrites.</p>\n"
		"<table>\n<tr><th>model</th>",
	.th = "<th>", .th_end = "</th>", .head_end = "</tr>\n", .rule = "", .rule_end = "",
	.row = "<tr><td>", .row_name_end = "</td>", .cell_fmt = "<td class=\"%s\">%s</td>",
	.row_end = "</tr>\n",
	.results = "</table>\n<h2>Results</h2>\n<table>\n<tr><th>model</th><th>target</th><th>status</th>"
		"<th>nodes</th><th>native</th><th>after rewrites</th><th>blockers</th>"
		"<th>max error</th><th>seconds</th></tr>\n",
	.sep = "</td><td>",
	.result_fmt = "</td><td class=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
	.failures = "</table>\n<h2>Failures</h2>\n", .none = "<p>None.</p>\n", .list = "<ul>\n",
	.item = "<li>", .item_end = "</li>\n", .list_end = "</ul>\n",
	.tail = "</body>\n</html>\n",
};

static void put_matrix(const struct batch_summary *s, FILE *f, const struct markup *mk,
		       const char **models, size_t nm, const char **targets, size_t nt)
{
	char b[128];

	for (size_t t = 0; t < nt; t++) {
		fputs(mk->th, f);
		mk->str(f, targets[t]);
		fputs(mk->th_end, f);
	}
	fputs(mk->head_end, f);
	for (size_t t = 0; t < nt; t++)
		fputs(mk->rule, f);
	fputs(mk->rule_end, f);
	for (size_t m = 0; m < nm; m++) {
		fputs(mk->row, f);
		mk->str(f, models[m]);
		fputs(mk->row_name_end, f);
		for (size_t t = 0; t < nt; t++) {
			const struct batch_row *r = find_row(s, models[m], targets[t]);

			cell_text(r, b, sizeof(b));
			fprintf(f, mk->cell_fmt, r ? batch_status_name(r->status) : "none", b);
		}
		fputs(mk->row_end, f);
	}
}

static void put_results(const struct batch_summary *s, FILE *f, const struct markup *mk)
{
	fputs(mk->results, f);
	for (size_t i = 0; i < s->n_rows; i++) {
		const struct batch_row *r = &s->rows[i];
		const char *st = batch_status_name(r->status);
		struct row_text t;

		row_text(r, &t);
		fputs(mk->row, f);
		mk->str(f, r->model);
		fputs(mk->sep, f);
		mk->str(f, r->target);
		fprintf(f, mk->result_fmt, st, st, t.nodes, t.native, t.after, t.blockers,
			t.err, t.secs);
	}
}

static void put_failures(const struct batch_summary *s, FILE *f, const struct markup *mk,
			 size_t nf)
{
	fputs(mk->failures, f);
	fputs(nf ? mk->list : mk->none, f);
	for (size_t i = 0; i < s->n_rows; i++) {
		const struct batch_row *r = &s->rows[i];

		if (!batch_status_failed(r->status))
			continue;
		fputs(mk->item, f);
		mk->str(f, r->model);
		fputs(" on ", f);
		mk->str(f, r->target);
		fprintf(f, ": %s: ", batch_status_name(r->status));
		mk->str(f, *r->message ? r->message : "(no message)");
		fputs(mk->item_end, f);
	}
	if (nf)
		fputs(mk->list_end, f);
}

static int write_doc(const struct batch_summary *s, FILE *f, const struct markup *mk)
{
	const char **targets, **models;
	size_t nt = batch_summary_distinct(s, 1, &targets);
	size_t nm = batch_summary_distinct(s, 0, &models), nf = batch_summary_n_failed(s);

	if (!targets || !models) {
		free(targets);
		free(models);
		return -1;
	}
	fputs(mk->head, f);
	fprintf(f, mk->intro_fmt, s->mode == BATCH_SCAN ? "scan" : "migrate", nm, nt,
		s->n_rows, nf);
	put_matrix(s, f, mk, models, nm, targets, nt);
	put_results(s, f, mk);
	put_failures(s, f, mk, nf);
	fputs(mk->tail, f);
	free(targets);
	free(models);
	return ferror(f) ? -1 : 0;
}

int batch_summary_md(const struct batch_summary *s, FILE *f)
{
	return write_doc(s, f, &md);
}

int batch_summary_html(const struct batch_summary *s, FILE *f)
{
	return write_doc(s, f, &html);
}
