/* manifest.c: manifests listing models with per-model options.
 *   JSON: [{"path": "a.onnx", "targets": ["ascend"], "batch": 1,
 *          "layout": "nhwc", "precision": "fp16", "dims": {"N": 1},
 *          "verify_with": "CMD {model} {inputs} {outdir}"}, ...]
 *         (or {"models": [...]})
 *   CSV:  a header naming the columns (path required; targets, batch,
 *         layout, precision, dims, verify_with optional), one model a
 *         line; lists inside a cell are separated by ';' ("N=1;S=128").
 * Paths are relative to the manifest's folder. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_int.h"
#include "ir/ir.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			char *p = realloc(buf, cap = 2 * cap + 8192);

			if (!p) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
		}
		got = fread(buf + n, 1, 4096, f);
		n += got;
	} while (got == 4096 && n < (64u << 20));
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

static char *dir_of(const char *path)
{
	const char *sl = strrchr(path, '/');

	if (!sl)
		return strdup(".");
	return strndup(path, sl == path ? 1 : (size_t)(sl - path));
}

static int push_str(char ***v, size_t *n, const char *s, size_t len)
{
	char **p = realloc(*v, (*n + 1) * sizeof(*p));

	if (!p)
		return -1;
	*v = p;
	if (!(p[*n] = strndup(s, len)))
		return -1;
	(*n)++;
	return 0;
}

/* "a;b c,d" into v (empty parts skipped). */
static int split_list(char ***v, size_t *n, const char *s)
{
	while (*s) {
		size_t len = strcspn(s, ";, ");

		if (len && push_str(v, n, s, len) < 0)
			return -1;
		s += len;
		if (*s)
			s++;
	}
	return 0;
}

static int check_opts(const char *mf, size_t line, const struct batch_mopts *o,
		      struct ir_diag *d)
{
	if (o->layout && strcmp(o->layout, "nchw") && strcmp(o->layout, "nhwc"))
		return ir_diag_error(d, IR_EINVAL, "%s: model %zu: layout is nchw or nhwc, not '%s'", mf, line, o->layout);
	if (o->precision && strcmp(o->precision, "fp32") && strcmp(o->precision, "fp16"))
		return ir_diag_error(d, IR_EINVAL, "%s: model %zu: precision is fp32 or fp16, not '%s'", mf, line, o->precision);
	if (o->verify_with && !strstr(o->verify_with, "{model}"))
		return ir_diag_error(d, IR_EINVAL, "%s: model %zu: verify_with does not name {model}", mf, line);
	for (size_t i = 0; i < o->n_dims; i++) {
		const char *eq = strchr(o->dims[i], '=');
		char *end;

		if (!eq || eq == o->dims[i] || !eq[1] || (strtoll(eq + 1, &end, 10) < 1) || *end)
			return ir_diag_error(d, IR_EINVAL, "%s: model %zu: dim wants NAME=V, not '%s'", mf, line, o->dims[i]);
	}
	if (o->batch < 0)
		return ir_diag_error(d, IR_EINVAL, "%s: model %zu: batch wants a count >= 1", mf, line);
	return 0;
}

static int add_model(struct batch_src *s, const char *mf, const char *dir,
		     const char *rel, struct batch_mopts *o, size_t line,
		     struct ir_diag *d)
{
	char path[8200];
	int rc;

	if ((rc = check_opts(mf, line, o, d)) < 0)
		return rc;
	if (rel[0] == '/')
		snprintf(path, sizeof(path), "%s", rel);
	else
		snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return batch_src_add_with(s, path, o, d);
}

static int json_models(struct batch_src *s, const char *mf, const char *dir,
		       const cJSON *arr, struct ir_diag *d)
{
	size_t k = 0;
	const cJSON *m;
	int rc = 0;

	cJSON_ArrayForEach(m, arr) {
		struct batch_mopts o = { 0 };
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(m, "path"), *x;

		k++;
		if (!cJSON_IsObject(m) || !cJSON_IsString(p))
			return ir_diag_error(d, IR_EINVAL, "%s: model %zu: wants an object with a \"path\" string", mf, k);
		cJSON_ArrayForEach(x, m) {
			const char *key = x->string;

			if (!strcmp(key, "path"))
				continue;
			if (!strcmp(key, "targets") && cJSON_IsString(x)) {
				rc = split_list(&o.targets, &o.n_targets, x->valuestring);
			} else if (!strcmp(key, "targets") && cJSON_IsArray(x)) {
				const cJSON *t;

				cJSON_ArrayForEach(t, x) {
					if (!cJSON_IsString(t)) {
						rc = -2;
						break;
					}
					if (push_str(&o.targets, &o.n_targets, t->valuestring, strlen(t->valuestring)) < 0)
						rc = -1;
				}
			} else if (!strcmp(key, "batch") && cJSON_IsNumber(x) && x->valuedouble >= 1 &&
				   x->valuedouble < 1e9) {
				o.batch = (int64_t)x->valuedouble;
			} else if (!strcmp(key, "layout") && cJSON_IsString(x)) {
				rc = (o.layout = strdup(x->valuestring)) ? 0 : -1;
			} else if (!strcmp(key, "precision") && cJSON_IsString(x)) {
				rc = (o.precision = strdup(x->valuestring)) ? 0 : -1;
			} else if (!strcmp(key, "verify_with") && cJSON_IsString(x)) {
				rc = (o.verify_with = strdup(x->valuestring)) ? 0 : -1;
			} else if (!strcmp(key, "dims") && cJSON_IsObject(x)) {
				const cJSON *v;

				cJSON_ArrayForEach(v, x) {
					char b[512];

					if (!cJSON_IsNumber(v)) {
						rc = -2;
						break;
					}
					snprintf(b, sizeof(b), "%s=%lld", v->string, (long long)v->valuedouble);
					if (push_str(&o.dims, &o.n_dims, b, strlen(b)) < 0)
						rc = -1;
				}
			} else if (!strcmp(key, "dims") && cJSON_IsString(x)) {
				rc = split_list(&o.dims, &o.n_dims, x->valuestring);
			} else {
				rc = -2;
			}
			if (rc == -2) {
				batch_mopts_release(&o);
				return ir_diag_error(d, IR_EINVAL, "%s: model %zu: bad \"%s\" (see opmig-batch(1))", mf, k, key);
			}
			if (rc < 0) {
				batch_mopts_release(&o);
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
			}
		}
		rc = add_model(s, mf, dir, p->valuestring, &o, k, d);
		batch_mopts_release(&o);
		if (rc < 0)
			return rc;
	}
	if (!k)
		return ir_diag_error(d, IR_EINVAL, "%s: lists no model", mf);
	return 0;
}

/* Split one CSV line into cells (double quotes with "" escapes). */
static int csv_cells(char *line, char **cells, int max)
{
	int n = 0;
	char *p = line;

	while (n < max) {
		char *out = p;

		cells[n++] = p;
		if (*p == '"') {
			char *q = p + 1;

			for (;;) {
				if (!*q)
					return -1;
				if (*q == '"' && q[1] == '"') {
					*out++ = '"';
					q += 2;
				} else if (*q == '"') {
					q++;
					break;
				} else {
					*out++ = *q++;
				}
			}
			if (*q && *q != ',')
				return -1;
			*out = 0;
			if (!*q)
				return n;
			p = q + 1;
			continue;
		}
		p += strcspn(p, ",");
		if (!*p)
			return n;
		*p++ = 0;
	}
	return -1;
}

enum { COL_PATH, COL_TARGETS, COL_BATCH, COL_LAYOUT, COL_PRECISION, COL_DIMS, COL_VERIFY,
       N_COLS };
static const char *const col_names[N_COLS] = {
	"path", "targets", "batch", "layout", "precision", "dims", "verify_with",
};

static int csv_models(struct batch_src *s, const char *mf, const char *dir,
		      char *text, struct ir_diag *d)
{
	int col[32], n_head = 0;
	size_t line = 0, k = 0;
	char *save = NULL, *ln;

	for (ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		char *cells[32];
		int n;
		size_t len = strlen(ln);

		line++;
		if (len && ln[len - 1] == '\r')
			ln[--len] = 0;
		if (!len || ln[0] == '#')
			continue;
		if ((n = csv_cells(ln, cells, 32)) < 0)
			return ir_diag_error(d, IR_EINVAL, "%s:%zu: bad CSV line", mf, line);
		if (!n_head) {
			int have_path = 0;

			for (int i = 0; i < n; i++) {
				col[i] = -1;
				for (int c = 0; c < N_COLS; c++)
					if (!strcmp(cells[i], col_names[c]))
						col[i] = c;
				if (col[i] < 0)
					return ir_diag_error(d, IR_EINVAL, "%s:%zu: unknown column '%s'", mf, line, cells[i]);
				have_path |= col[i] == COL_PATH;
			}
			if (!have_path)
				return ir_diag_error(d, IR_EINVAL, "%s:%zu: the header has no 'path' column", mf, line);
			n_head = n;
			continue;
		}
		if (n > n_head)
			return ir_diag_error(d, IR_EINVAL, "%s:%zu: %d cells, the header has %d", mf, line, n, n_head);
		{
			struct batch_mopts o = { 0 };
			const char *path = NULL;
			int rc = 0;
			char *end;

			for (int i = 0; i < n && rc == 0; i++) {
				const char *v = cells[i];

				if (!*v)
					continue;
				switch (col[i]) {
				case COL_PATH: path = v; break;
				case COL_TARGETS: rc = split_list(&o.targets, &o.n_targets, v); break;
				case COL_DIMS: rc = split_list(&o.dims, &o.n_dims, v); break;
				case COL_LAYOUT: rc = (o.layout = strdup(v)) ? 0 : -1; break;
				case COL_PRECISION: rc = (o.precision = strdup(v)) ? 0 : -1; break;
				case COL_VERIFY: rc = (o.verify_with = strdup(v)) ? 0 : -1; break;
				case COL_BATCH:
					o.batch = strtoll(v, &end, 10);
					if (*end || o.batch < 1)
						rc = -2;
					break;
				}
			}
			k++;
			if (rc == 0 && !path)
				rc = -3;
			if (rc == 0)
				rc = add_model(s, mf, dir, path, &o, k, d);
			else if (rc == -1)
				rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
			else if (rc == -2)
				rc = ir_diag_error(d, IR_EINVAL, "%s:%zu: batch wants a count >= 1", mf, line);
			else if (rc == -3)
				rc = ir_diag_error(d, IR_EINVAL, "%s:%zu: no path", mf, line);
			batch_mopts_release(&o);
			if (rc < 0)
				return rc;
		}
	}
	if (!k)
		return ir_diag_error(d, IR_EINVAL, "%s: lists no model", mf);
	return 0;
}

int batch_manifest_add(struct batch_src *s, const char *path, struct ir_diag *d)
{
	size_t len = 0;
	char *text = slurp(path, &len), *dir = dir_of(path);
	int rc;

	if (!text || !dir) {
		rc = ir_diag_error(d, IR_EINVAL, "%s: cannot read: %s", path,
				   ir_strerror(text ? ENOMEM : errno));
		goto cleanup;
	}
	if (strlen(text) != len) {
		rc = ir_diag_error(d, IR_EINVAL, "%s: not a text manifest", path);
		goto cleanup;
	}
	if (len >= 4 && !strcasecmp(path + strlen(path) - 4, ".csv")) {
		rc = csv_models(s, path, dir, text, d);
	} else {
		cJSON *root = cJSON_ParseWithLength(text, len), *arr = root;

		if (!root) {
			rc = ir_diag_error(d, IR_EINVAL, "%s: not valid JSON", path);
			goto cleanup;
		}
		if (cJSON_IsObject(root))
			arr = cJSON_GetObjectItemCaseSensitive(root, "models");
		if (!cJSON_IsArray(arr))
			rc = ir_diag_error(d, IR_EINVAL, "%s: wants an array of models (or {\"models\": [...]})", path);
		else
			rc = json_models(s, path, dir, arr, d);
		cJSON_Delete(root);
	}
cleanup:
	free(text);
	free(dir);
	return rc;
}
