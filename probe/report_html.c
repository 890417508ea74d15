/* report_html.c: the probe's HTML report: one self-contained page (inline
 * style, no scripts or assets): the counts, then the op x dtype matrix,
 * one row per op version, a cell per main dtype with the verdict of its
 * base case (the runtime's message as the cell's title), how many of the
 * version's other cases passed, and the first message of one that did
 * not. */
#include <stdio.h>
#include <string.h>

#include "probe/probe_int.h"

static const char style[] =
	"body{font-family:sans-serif;margin:2em;color:#222}\n"
	"table{border-collapse:collapse;margin:.5em 0 1.5em}\n"
	"th,td{border:1px solid #bbb;padding:.15em .4em;text-align:left;vertical-align:top;"
	"font-size:90%}\n"
	"td.v{text-align:center}\n"
	".equal,.accepted{background:#b7e1a1}.wrong{background:#ffc47a}\n"
	".rejected{background:#f4a6a6}.crashed,.timeout{background:#c9a0dc}\n"
	"@media print{body{margin:0}td{-webkit-print-color-adjust:exact;"
	"print-color-adjust:exact}tr{page-break-inside:avoid}}\n";

static void put(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static const char *const marks[PROBE_N_VERDICTS] = {
	"", "", "&#10003;", "&#10003;", "wrong", "&#10007;", "crash", "hang",
};

int probe_report_html(const struct probe_run *r, FILE *f)
{
	static const int order[] = {
		IR_DTYPE_FLOAT, IR_DTYPE_FLOAT16, IR_DTYPE_DOUBLE, IR_DTYPE_BFLOAT16,
		IR_DTYPE_INT8, IR_DTYPE_UINT8, IR_DTYPE_INT16, IR_DTYPE_UINT16,
		IR_DTYPE_INT32, IR_DTYPE_UINT32, IR_DTYPE_INT64, IR_DTYPE_UINT64, IR_DTYPE_BOOL,
	};
	size_t n_order = sizeof(order) / sizeof(order[0]);
	rules_dtypes tried = 0;
	size_t n[PROBE_N_VERDICTS] = { 0 };

	for (size_t i = 0; i < r->n_cases; i++) {
		n[r->cases[i].verdict]++;
		if (r->cases[i].kind == PROBE_BASE && r->cases[i].dtype)
			tried |= RULES_DTYPE_BIT(r->cases[i].dtype);
	}
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>opmig probe</title>\n"
	      "<style>\n", f);
	fputs(style, f);
	fputs("</style></head><body>\n<h1>opmig probe</h1>\n<p>runtime: ", f);
	put(f, r->runtime ? r->runtime : "(it printed no version)");
	fputs("<br>command: <code>", f);
	put(f, r->command);
	fprintf(f, "</code><br>opset %d to %d: %zu equal, %zu accepted, %zu wrong, %zu rejected, "
		"%zu crashed, %zu timed out; %zu variants made no valid model</p>\n",
		r->opset_min, r->opset_max, n[PROBE_EQUAL], n[PROBE_ACCEPTED], n[PROBE_WRONG],
		n[PROBE_REJECTED], n[PROBE_CRASHED], n[PROBE_TIMEOUT], n[PROBE_INVALID]);
	fputs("<table>\n<tr><th>op</th>", f);
	for (size_t k = 0; k < n_order; k++)
		if (tried & RULES_DTYPE_BIT(order[k]))
			fprintf(f, "<th>%s</th>", rules_dtype_name(order[k]));
	fputs("<th>other cases</th><th>first failure</th></tr>\n", f);
	for (size_t i = 0; i < r->n_cases;) {
		const struct ir_op_schema *s = r->cases[i].schema;
		const struct probe_case *fail = NULL;
		size_t j = i, n_other = 0, n_pass = 0;

		while (j < r->n_cases && r->cases[j].schema == s && r->cases[j].kind != PROBE_OPSET &&
		       r->cases[j].kind != PROBE_DYNAMIC)
			j++;
		if (j == i) {
			i++;
			continue;
		}
		fprintf(f, "<tr><td>%s-%d</td>", s->name, s->since_version);
		for (size_t k = 0; k < n_order; k++) {
			const struct probe_case *b = NULL;

			if (!(tried & RULES_DTYPE_BIT(order[k])))
				continue;
			for (size_t q = i; q < j; q++)
				if (r->cases[q].kind == PROBE_BASE && r->cases[q].dtype == order[k] &&
				    r->cases[q].verdict >= PROBE_EQUAL)
					b = &r->cases[q];
			if (!b) {
				fputs("<td></td>", f);
				continue;
			}
			fprintf(f, "<td class=\"v %s\" title=\"", probe_verdict_name(b->verdict));
			put(f, b->message ? b->message : probe_verdict_name(b->verdict));
			fprintf(f, "\">%s</td>", marks[b->verdict]);
		}
		for (size_t q = i; q < j; q++) {
			const struct probe_case *c = &r->cases[q];

			if ((c->kind == PROBE_BASE && c->dtype) || c->verdict < PROBE_EQUAL)
				continue;
			n_other++;
			n_pass += probe_verdict_ok(c->verdict);
			if (!probe_verdict_ok(c->verdict) && !fail)
				fail = c;
		}
		fprintf(f, "<td>%zu of %zu</td><td>", n_pass, n_other);
		if (fail) {
			char what[300];

			probe_case_what(fail, what, sizeof(what));
			put(f, what);
			fputs(": ", f);
			put(f, fail->message ? fail->message : probe_verdict_name(fail->verdict));
		}
		fputs("</td></tr>\n", f);
		i = j;
	}
	fputs("</table>\n", f);
	if (r->n_no_case) {
		fputs("<p>no valid case:", f);
		for (size_t i = 0; i < r->n_no_case; i++) {
			fputc(' ', f);
			put(f, r->no_case[i]);
		}
		fputs("</p>\n", f);
	}
	fputs("</body></html>\n", f);
	return ferror(f) ? -1 : 0;
}
