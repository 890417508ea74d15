/* source.c: discovery of the zoo: model files, folders searched
 * recursively for *.onnx (their external data stays beside them and is
 * found by the loader), dispatch of archives and manifests, folder names
 * and per-model option defaults. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch/batch_int.h"
#include "ir/ir.h"

void batch_src_init(struct batch_src *s)
{
	memset(s, 0, sizeof(*s));
	s->lim.max_entry = BATCH_MAX_ENTRY_DEFAULT;
	s->lim.max_ratio = BATCH_MAX_RATIO_DEFAULT;
}

void batch_mopts_release(struct batch_mopts *o)
{
	for (size_t i = 0; i < o->n_dims; i++)
		free(o->dims[i]);
	for (size_t i = 0; i < o->n_targets; i++)
		free(o->targets[i]);
	free(o->dims);
	free(o->targets);
	free(o->layout);
	free(o->precision);
	free(o->verify_with);
	memset(o, 0, sizeof(*o));
}

static int strv_copy(char ***dst, size_t *nd, char *const *src, size_t n)
{
	*dst = NULL;
	*nd = 0;
	if (!n)
		return 0;
	if (!(*dst = calloc(n, sizeof(char *))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!((*dst)[i] = strdup(src[i])))
			return -1;
		(*nd)++;
	}
	return 0;
}

int batch_mopts_copy(struct batch_mopts *dst, const struct batch_mopts *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src)
		return 0;
	dst->batch = src->batch;
	if ((src->layout && !(dst->layout = strdup(src->layout))) ||
	    (src->precision && !(dst->precision = strdup(src->precision))) ||
	    (src->verify_with && !(dst->verify_with = strdup(src->verify_with))) ||
	    strv_copy(&dst->dims, &dst->n_dims, src->dims, src->n_dims) < 0 ||
	    strv_copy(&dst->targets, &dst->n_targets, src->targets, src->n_targets) < 0) {
		batch_mopts_release(dst);
		return -1;
	}
	return 0;
}

void batch_src_release(struct batch_src *s)
{
	for (size_t i = 0; i < s->n_items; i++) {
		struct batch_item *it = &s->items[i];

		free(it->name);
		free(it->source);
		free(it->path);
		free(it->entry);
		batch_mopts_release(&it->o);
	}
	free(s->items);
	s->items = NULL;
	s->n_items = s->cap_items = 0;
}

int batch_src_push(struct batch_src *s, const char *name, const char *source,
		   const char *path, const char *entry,
		   const struct batch_mopts *o)
{
	struct batch_item *it;

	if (s->n_items == s->cap_items) {
		size_t cap = s->cap_items ? 2 * s->cap_items : 16;
		struct batch_item *p = realloc(s->items, cap * sizeof(*p));

		if (!p)
			return -1;
		s->items = p;
		s->cap_items = cap;
	}
	it = &s->items[s->n_items];
	memset(it, 0, sizeof(*it));
	if (!(it->name = batch_name_from_path(name)) || !(it->source = strdup(source)) ||
	    !(it->path = strdup(path)) || (entry && !(it->entry = strdup(entry))) ||
	    batch_mopts_copy(&it->o, o) < 0) {
		free(it->name);
		free(it->source);
		free(it->path);
		free(it->entry);
		return -1;
	}
	s->n_items++;
	return 0;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcasecmp(s + a - b, suf);
}

char *batch_name_from_path(const char *rel)
{
	size_t n = strlen(rel);
	char *out;

	while (n && rel[0] == '/')
		rel++, n--;
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2, n -= 2;
	if (n >= 5 && !strcasecmp(rel + n - 5, ".onnx"))
		n -= 5;
	if (!(out = malloc(n + 2)))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char c = rel[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';

		out[i] = ok ? c : '_';
	}
	out[n] = 0;
	if (!n || out[0] == '.') {   /* no hidden or empty folder names */
		memmove(out + 1, out, n + 1);
		out[0] = '_';
	}
	return out;
}

/* Walk dir (relative names under root) for *.onnx regular files; symlinked
 * folders are not followed (no loops). */
static int walk(struct batch_src *s, const char *root, const char *rel,
		const struct batch_mopts *o, struct ir_diag *d)
{
	char path[4096], sub[4096];
	struct dirent **ents = NULL;
	int n, rc = 0;

	snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
	if ((n = scandir(path, &ents, NULL, alphasort)) < 0)
		return ir_diag_error(d, IR_EINVAL, "%s: cannot read the folder: %s",
				     path, ir_strerror(errno));
	for (int i = 0; i < n; i++) {
		const char *e = ents[i]->d_name;
		struct stat st;
		char full[8200];

		if (rc < 0 || e[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e);
		snprintf(full, sizeof(full), "%s/%s", root, sub);
		if (lstat(full, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			rc = walk(s, root, sub, o, d);
		else if (ends_with(e, ".onnx") && (S_ISREG(st.st_mode) ||
			 (S_ISLNK(st.st_mode) && !stat(full, &st) && S_ISREG(st.st_mode))))
			if (batch_src_push(s, sub, full, full, NULL, o) < 0)
				rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return rc;
}

int batch_src_add_with(struct batch_src *s, const char *path,
		       const struct batch_mopts *o, struct ir_diag *d)
{
	struct stat st;
	const char *base;

	if (stat(path, &st) < 0)
		return ir_diag_error(d, IR_EINVAL, "%s: cannot open: %s", path,
				     ir_strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		size_t before = s->n_items;
		int rc = walk(s, path, "", o, d);

		if (rc == 0 && s->n_items == before)
			return ir_diag_error(d, IR_EINVAL, "%s: no *.onnx model in the folder", path);
		return rc;
	}
	if (!S_ISREG(st.st_mode))
		return ir_diag_error(d, IR_EINVAL, "%s: not a regular file", path);
	if (ends_with(path, ".zip"))
		return batch_zip_add(s, path, o, d);
	if (!o && (ends_with(path, ".json") || ends_with(path, ".csv")))
		return batch_manifest_add(s, path, d);
	base = strrchr(path, '/');
	if (batch_src_push(s, base ? base + 1 : path, path, path, NULL, o) < 0)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	return 0;
}

int batch_src_add(struct batch_src *s, const char *path, struct ir_diag *d)
{
	return batch_src_add_with(s, path, NULL, d);
}

int batch_src_defaults(struct batch_src *s, const struct batch_mopts *def)
{
	for (size_t i = 0; i < s->n_items; i++) {
		struct batch_mopts *o = &s->items[i].o;

		if (!o->batch)
			o->batch = def->batch;
		if (!o->layout && def->layout && !(o->layout = strdup(def->layout)))
			return -1;
		if (!o->precision && def->precision && !(o->precision = strdup(def->precision)))
			return -1;
		if (!o->n_dims && def->n_dims &&
		    strv_copy(&o->dims, &o->n_dims, def->dims, def->n_dims) < 0)
			return -1;
	}
	return 0;
}
