/* summary.c: the rows of a batch (a model on a target) and the summaries
 * written from them: summary.json (opmig.batch/1, documented in
 * opmig-batch(1)), summary.csv, and summary.md and a self-contained
 * index.html through summary_doc.c; and reading summary.json back (for
 * `opmig batch merge`).
 * Everything written is a function of the sorted rows only, so the same
 * inputs give the same bytes, and merged shards equal an unsharded run. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch/batch_int.h"
#include "ir/ir.h"

static const char *const status_names[BATCH_N_STATUS] = {
	"scanned", "migrated", "not_migrated", "error", "crashed", "timeout",
	"out_of_memory",
};

const char *batch_status_name(enum batch_status s)
{
	return (unsigned)s < BATCH_N_STATUS ? status_names[s] : "?";
}

int batch_status_parse(const char *s)
{
	for (int i = 0; i < BATCH_N_STATUS; i++)
		if (!strcmp(s, status_names[i]))
			return i;
	return -1;
}

int batch_status_failed(enum batch_status s)
{
	return s != BATCH_OK_SCANNED && s != BATCH_OK_MIGRATED;
}

char *batch_strdup(const char *s)
{
	return strdup(s ? s : "");
}

void batch_summary_init(struct batch_summary *s)
{
	memset(s, 0, sizeof(*s));
}

void batch_row_release(struct batch_row *r)
{
	free(r->model);
	free(r->target);
	free(r->source);
	free(r->message);
	memset(r, 0, sizeof(*r));
}

void batch_summary_release(struct batch_summary *s)
{
	for (size_t i = 0; i < s->n_rows; i++)
		batch_row_release(&s->rows[i]);
	free(s->rows);
	s->rows = NULL;
	s->n_rows = s->cap_rows = 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct batch_row *x = a, *y = b;
	int c = strcmp(x->model, y->model);

	return c ? c : strcmp(x->target, y->target);
}

int batch_summary_sort(struct batch_summary *s, struct ir_diag *d)
{
	qsort(s->rows, s->n_rows, sizeof(*s->rows), row_cmp);
	for (size_t i = 1; i < s->n_rows; i++)
		if (!row_cmp(&s->rows[i], &s->rows[i - 1]))
			return ir_diag_error(d, IR_EINVAL, "model '%s' on '%s' appears twice",
					     s->rows[i].model, s->rows[i].target);
	return 0;
}

/* ---- JSON ------------------------------------------------------------- */

void batch_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void num_or_null(FILE *f, const char *fmt, double x, int known)
{
	if (known && isfinite(x))
		fprintf(f, fmt, x);
	else
		fputs("null", f);
}

void batch_row_json(FILE *f, const struct batch_row *r, const char *in)
{
	fprintf(f, "%s\"model\": ", in);
	batch_json_str(f, r->model);
	fprintf(f, ",\n%s\"target\": ", in);
	batch_json_str(f, r->target);
	fprintf(f, ",\n%s\"source\": ", in);
	batch_json_str(f, r->source);
	fprintf(f, ",\n%s\"status\": \"%s\",\n%s\"nodes\": ", in, batch_status_name(r->status), in);
	num_or_null(f, "%.0f", (double)r->nodes, r->nodes >= 0);
	fprintf(f, ",\n%s\"native_coverage\": ", in);
	num_or_null(f, "%.1f", r->native_pct, r->native_pct >= 0);
	fprintf(f, ",\n%s\"coverage_after_rewrites\": ", in);
	num_or_null(f, "%.1f", r->after_pct, r->after_pct >= 0);
	fprintf(f, ",\n%s\"blockers\": ", in);
	num_or_null(f, "%.0f", (double)r->blockers, r->blockers >= 0);
	fprintf(f, ",\n%s\"max_error\": ", in);
	num_or_null(f, "%.6g", r->max_error, r->max_error >= 0);
	fprintf(f, ",\n%s\"seconds\": ", in);
	num_or_null(f, "%.3f", r->seconds, r->seconds >= 0);
	fprintf(f, ",\n%s\"message\": ", in);
	batch_json_str(f, r->message);
}

static double jnum(const cJSON *o, const char *k)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(x) ? x->valuedouble : -1;
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(x) ? x->valuestring : NULL;
}

int batch_row_from_json(const cJSON *o, struct batch_row *r)
{
	const char *st = jstr(o, "status");
	int s = st ? batch_status_parse(st) : -1;

	memset(r, 0, sizeof(*r));
	if (s < 0 || !jstr(o, "model") || !jstr(o, "target") || !jstr(o, "source"))
		return -1;
	r->status = (enum batch_status)s;
	r->nodes = (long)jnum(o, "nodes");
	r->native_pct = jnum(o, "native_coverage");
	r->after_pct = jnum(o, "coverage_after_rewrites");
	r->blockers = (long)jnum(o, "blockers");
	r->max_error = jnum(o, "max_error");
	r->seconds = jnum(o, "seconds");
	if (!(r->model = batch_strdup(jstr(o, "model"))) ||
	    !(r->target = batch_strdup(jstr(o, "target"))) ||
	    !(r->source = batch_strdup(jstr(o, "source"))) ||
	    !(r->message = batch_strdup(jstr(o, "message")))) {
		batch_row_release(r);
		return -1;
	}
	return 0;
}

size_t batch_summary_distinct(const struct batch_summary *s, int target, const char ***out)
{
	const char **v = malloc((s->n_rows + 1) * sizeof(*v));
	size_t n = 0;

	*out = v;
	if (!v)
		return 0;
	for (size_t i = 0; i < s->n_rows; i++) {
		const char *x = target ? s->rows[i].target : s->rows[i].model;
		size_t k = 0;

		while (k < n && strcmp(v[k], x))
			k++;
		if (k == n)
			v[n++] = x;
	}
	for (size_t i = 1; i < n; i++)   /* insertion sort: n is small */
		for (size_t k = i; k > 0 && strcmp(v[k - 1], v[k]) > 0; k--) {
			const char *t = v[k];

			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	return n;
}

size_t batch_summary_n_failed(const struct batch_summary *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_rows; i++)
		n += batch_status_failed(s->rows[i].status) != 0;
	return n;
}

int batch_summary_json(const struct batch_summary *s, FILE *f)
{
	const char **targets, **models;
	size_t nt = batch_summary_distinct(s, 1, &targets);
	size_t nm = batch_summary_distinct(s, 0, &models);
	size_t counts[BATCH_N_STATUS] = { 0 };
	int first = 1;

	if (!targets || !models) {
		free(targets);
		free(models);
		return -1;
	}
	for (size_t i = 0; i < s->n_rows; i++)
		counts[s->rows[i].status]++;
	fprintf(f, "{\n  \"schema\": \"%s\",\n  \"mode\": \"%s\",\n  \"models\": %zu,\n  \"targets\": [",
		BATCH_SCHEMA, s->mode == BATCH_SCAN ? "scan" : "migrate", nm);
	for (size_t i = 0; i < nt; i++) {
		fputs(i ? ", " : "", f);
		batch_json_str(f, targets[i]);
	}
	fprintf(f, "],\n  \"jobs\": %zu,\n  \"failed\": %zu,\n  \"status_counts\": {", s->n_rows,
		batch_summary_n_failed(s));
	for (int i = 0; i < BATCH_N_STATUS; i++)
		fprintf(f, "%s\"%s\": %zu", i ? ", " : "", status_names[i], counts[i]);
	fputs("},\n  \"results\": [", f);
	for (size_t i = 0; i < s->n_rows; i++) {
		fputs(i ? ",\n    {\n" : "\n    {\n", f);
		batch_row_json(f, &s->rows[i], "      ");
		fputs("\n    }", f);
	}
	fputs(s->n_rows ? "\n  ],\n  \"failures\": [" : "],\n  \"failures\": [", f);
	for (size_t i = 0; i < s->n_rows; i++) {
		const struct batch_row *r = &s->rows[i];

		if (!batch_status_failed(r->status))
			continue;
		fputs(first ? "\n    {" : ",\n    {", f);
		first = 0;
		fputs("\"model\": ", f);
		batch_json_str(f, r->model);
		fputs(", \"target\": ", f);
		batch_json_str(f, r->target);
		fprintf(f, ", \"status\": \"%s\", \"message\": ", batch_status_name(r->status));
		batch_json_str(f, r->message);
		fputc('}', f);
	}
	fputs(first ? "]\n}\n" : "\n  ]\n}\n", f);
	free(targets);
	free(models);
	return ferror(f) ? -1 : 0;
}

/* ---- CSV, Markdown, HTML --------------------------------------------- */

static void csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void cell_num(FILE *f, const char *fmt, double x, int known)
{
	if (known && isfinite(x))
		fprintf(f, fmt, x);
}

static int write_csv(const struct batch_summary *s, FILE *f)
{
	fputs("model,target,source,status,nodes,native_coverage,coverage_after_rewrites,blockers,max_error,seconds,message\n", f);
	for (size_t i = 0; i < s->n_rows; i++) {
		const struct batch_row *r = &s->rows[i];

		csv_str(f, r->model);
		fputc(',', f);
		csv_str(f, r->target);
		fputc(',', f);
		csv_str(f, r->source);
		fprintf(f, ",%s,", batch_status_name(r->status));
		cell_num(f, "%.0f", (double)r->nodes, r->nodes >= 0);
		fputc(',', f);
		cell_num(f, "%.1f", r->native_pct, r->native_pct >= 0);
		fputc(',', f);
		cell_num(f, "%.1f", r->after_pct, r->after_pct >= 0);
		fputc(',', f);
		cell_num(f, "%.0f", (double)r->blockers, r->blockers >= 0);
		fputc(',', f);
		cell_num(f, "%.6g", r->max_error, r->max_error >= 0);
		fputc(',', f);
		cell_num(f, "%.3f", r->seconds, r->seconds >= 0);
		fputc(',', f);
		csv_str(f, r->message);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

int batch_write_text(const char *path, char *buf, size_t len, int ok,
		     struct ir_diag *d)
{
	int rc;

	if (!ok) {
		free(buf);
		return ir_diag_error(d, IR_ENOMEM, "%s: out of memory writing it", path);
	}
	rc = ir_file_write_atomic(path, buf, len, d);
	free(buf);
	return rc;
}

int batch_summary_write(const struct batch_summary *s, const char *dir,
			struct ir_diag *d)
{
	static const struct {
		const char *name;
		int (*fn)(const struct batch_summary *, FILE *);
	} files[] = {
		{ "summary.json", batch_summary_json },
		{ "summary.csv", write_csv },
		{ "summary.md", batch_summary_md },
		{ "index.html", batch_summary_html },
	};

	if (mkdir(dir, 0777) < 0 && errno != EEXIST)
		return ir_diag_error(d, IR_EINVAL, "%s: cannot make the folder: %s", dir,
				     ir_strerror(errno));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[4200], *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		int ok, rc;

		if (!f)
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		ok = files[i].fn(s, f) == 0;
		ok &= fclose(f) == 0;
		if ((rc = batch_write_text(path, buf, len, ok, d)) < 0)
			return rc;
	}
	return 0;
}

int batch_summary_read(struct batch_summary *s, const char *dir, int first,
		       struct ir_diag *d)
{
	char path[4200];
	FILE *f;
	char *text = NULL;
	size_t len = 0, cap = 0, got;
	cJSON *root = NULL;
	const cJSON *res, *x;
	const char *schema, *mode;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	if (!(f = fopen(path, "rb")))
		return ir_diag_error(d, IR_EINVAL, "%s: cannot open: %s", path, ir_strerror(errno));
	do {
		if (len + 65536 + 1 > cap) {
			char *p = realloc(text, cap = 2 * cap + 65536 + 1);

			if (!p) {
				fclose(f);
				free(text);
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
			}
			text = p;
		}
		got = fread(text + len, 1, 65536, f);
		len += got;
	} while (got == 65536);
	fclose(f);
	root = cJSON_ParseWithLength(text, len);
	free(text);
	schema = root ? jstr(root, "schema") : NULL;
	mode = root ? jstr(root, "mode") : NULL;
	if (!root || !schema || strcmp(schema, BATCH_SCHEMA) || !mode ||
	    (strcmp(mode, "scan") && strcmp(mode, "migrate"))) {
		rc = ir_diag_error(d, IR_EINVAL, "%s: not an %s summary", path, BATCH_SCHEMA);
		goto cleanup;
	}
	if (first)
		s->mode = strcmp(mode, "scan") ? BATCH_MIGRATE : BATCH_SCAN;
	else if ((s->mode == BATCH_SCAN) != !strcmp(mode, "scan")) {
		rc = ir_diag_error(d, IR_EINVAL, "%s: a %s run; the others are not", path, mode);
		goto cleanup;
	}
	res = cJSON_GetObjectItemCaseSensitive(root, "results");
	if (!cJSON_IsArray(res)) {
		rc = ir_diag_error(d, IR_EINVAL, "%s: no \"results\" array", path);
		goto cleanup;
	}
	cJSON_ArrayForEach(x, res) {
		if (s->n_rows == s->cap_rows) {
			size_t c = s->cap_rows ? 2 * s->cap_rows : 64;
			struct batch_row *p = realloc(s->rows, c * sizeof(*p));

			if (!p) {
				rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
				goto cleanup;
			}
			s->rows = p;
			s->cap_rows = c;
		}
		if (batch_row_from_json(x, &s->rows[s->n_rows]) < 0) {
			rc = ir_diag_error(d, IR_EINVAL, "%s: result %zu is not a valid row", path, s->n_rows + 1);
			goto cleanup;
		}
		s->n_rows++;
	}
cleanup:
	cJSON_Delete(root);
	return rc;
}

int batch_summary_merge(struct batch_summary *s, char *const *dirs, size_t n,
			struct ir_diag *d)
{
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++)
		rc = batch_summary_read(s, dirs[i], i == 0, d);
	return rc < 0 ? rc : batch_summary_sort(s, d);
}
