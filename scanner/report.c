/* report.c: the table of report formats (sorted by name, found by
 * bsearch), writing a report, the one-line summary per target every
 * format shows, and the pieces the md and html writers share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scanner/report.h"
#include "scanner/scan_int.h"

const struct scan_format scan_formats[] = {
	{ "dot", scan_write_dot, "the graph for Graphviz, nodes coloured by verdict" },
	{ "html", scan_write_html, "one self-contained HTML page" },
	{ "json", scan_write_json, "one JSON object, schema " SCAN_JSON_SCHEMA },
	{ "md", scan_write_md, "Markdown" },
	{ "text", scan_write_text, "plain text for people" },
};
const size_t scan_n_formats = sizeof(scan_formats) / sizeof(scan_formats[0]);

static int fmt_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct scan_format *)elem)->name);
}

const struct scan_format *scan_format_find(const char *name)
{
	return bsearch(name, scan_formats, scan_n_formats, sizeof(scan_formats[0]),
		       fmt_cmp);
}

int scan_report_write(const struct scan_result *r, const struct scan_format *f,
		      FILE *out)
{
	if (f->write(r, out) < 0 || ferror(out))
		return -1;
	return 0;
}

void scan_summary_line(const struct scan_target_result *tr, char *buf, size_t size)
{
	const struct scan_counts *k = &tr->counts;

	snprintf(buf, size, "%s: %zu/%zu nodes supported, %zu limited, %zu rewritable, "
		 "%zu blocked (%zu op type%s)", tr->target->id, k->supported, k->nodes,
		 k->limited, k->rewritable, k->blocked, tr->blocked_op_types,
		 tr->blocked_op_types == 1 ? "" : "s");
}

double scan_pct(size_t a, size_t b)
{
	return b ? 100.0 * (double)a / (double)b : 100.0;
}

void scan_put_op(FILE *f, void (*put)(FILE *f, const char *s),
		 const char *domain, const char *op)
{
	if (strcmp(domain, "ai.onnx")) {
		put(f, domain);
		putc(':', f);
	}
	put(f, op);
}

int scan_put_groups(const struct scan_result *r, size_t t, FILE *out,
		    const struct scan_markup *mk)
{
	struct scan_group *g;
	size_t ng;

	if (scan_groups_build(r, t, &g, &ng) < 0)
		return -1;
	if (ng)
		fputs(mk->head, out);
	for (size_t i = 0; i < ng; i++) {
		const char *st = scan_status_name(g[i].status);

		fprintf(out, mk->row, st, st);
		scan_put_op(out, mk->put, g[i].domain, g[i].op_type);
		fprintf(out, mk->counts, *g[i].code ? g[i].code : "-", g[i].count);
		for (size_t k = 0; k < g[i].n_first; k++) {
			fputs(k ? ", " : "", out);
			mk->put(out, r->nodes[g[i].first[k]].label);
		}
		if (g[i].count > g[i].n_first)
			fputs(", ...", out);
		fputs(mk->sep, out);
		mk->put(out, g[i].rewrite ? g[i].rewrite : "-");
		fputs(mk->sep, out);
		mk->put(out, g[i].message);
		fputs(mk->end, out);
	}
	if (ng)
		fputs(mk->tail, out);
	free(g);
	return 0;
}

const char *scan_status_short(enum scan_status s)
{
	static const char *const names[SCAN_N_STATUS] = { "ok", "lim", "rw", "BLOCK" };

	return (unsigned)s < SCAN_N_STATUS ? names[s] : "?";
}

void scan_put_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : ""), *q;

	putc_unlocked('"', f);
	while (*p) {
		for (q = p; *q >= 0x20 && *q != '"' && *q != '\\'; q++)
			;
		if (q > p)
			fwrite_unlocked(p, 1, (size_t)(q - p), f);
		if (!*q)
			break;
		switch (*q) {
		case '"': fputs_unlocked("\\\"", f); break;
		case '\\': fputs_unlocked("\\\\", f); break;
		case '\n': fputs_unlocked("\\n", f); break;
		case '\t': fputs_unlocked("\\t", f); break;
		case '\r': fputs_unlocked("\\r", f); break;
		default: fprintf(f, "\\u%04x", *q);
		}
		p = q + 1;
	}
	putc_unlocked('"', f);
}

void scan_put_html(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if (*p < 0x20 && *p != '\n' && *p != '\t')
				putc(' ', f);
			else
				putc(*p, f);
		}
	}
}

void scan_put_md(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '|': fputs("\\|", f); break;
		case '\\': case '`': case '*': case '_': case '<': case '>':
		case '[': case ']':
			putc('\\', f);
			putc(*p, f);
			break;
		case '\n': case '\r': case '\t': putc(' ', f); break;
		default: putc(*p, f);
		}
	}
}

void scan_put_dot_str(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			putc('\\', f);
		if (*p == '\n')
			fputs("\\n", f);
		else if (*p < 0x20)
			putc(' ', f);
		else
			putc(*p, f);
	}
}
