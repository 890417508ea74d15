/* write.c: saving a model to disk safely: refuse to replace any file the
 * model reads (its model file, its external data) or to put the external
 * data over the model written, check the external data name, write model
 * and external data into temporaries beside the targets, fsync, then
 * rename over the targets (an existing file there is replaced whole). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir_int.h"

static char *join(const char *dir, const char *name)
{
	char *p = malloc(strlen(dir) + strlen(name) + 2);

	if (p)
		sprintf(p, "%s/%s", dir, name);
	return p;
}

/* A file a save replaces: its identity when it exists, else its name in
 * its folder resolved (links, "." and relative forms), to compare with
 * another file written that does not exist yet. */
struct dest {
	const char *path;
	int exists;
	struct stat st;
	char *canon;    /* NULL where the folder does not resolve */
};

static int dest_init(struct dest *t, const char *path)
{
	const char *base = strrchr(path, '/');
	char *dir = ir_path_dir(path), *rdir;

	memset(t, 0, sizeof(*t));
	t->path = path;
	t->exists = stat(path, &t->st) == 0;
	if (!dir)
		return -1;
	rdir = realpath(dir, NULL);
	free(dir);
	if (rdir && !(t->canon = join(rdir, base ? base + 1 : path))) {
		free(rdir);
		return -1;
	}
	free(rdir);
	return 0;
}

/* Is the existing file `path` the one t replaces? */
static int dest_is(const struct dest *t, const char *path)
{
	struct stat st;

	return t->exists && path && stat(path, &st) == 0 &&
	       st.st_dev == t->st.st_dev && st.st_ino == t->st.st_ino;
}

static int dest_same(const struct dest *a, const struct dest *b)
{
	if (a->exists && b->exists)
		return a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino;
	return a->canon && b->canon && !strcmp(a->canon, b->canon);
}

struct reads {
	const struct dest *t;
	const char *hit;   /* location of the file t is, as its model names it */
};

/* A tensor reads its external data file, the model file it views, or (a
 * computed one) what its source reads. */
static int reads_visit(struct ir_tensor *x, void *ctx)
{
	struct reads *r = ctx;

	for (; x; x = x->storage == IR_STORE_DERIVED ? x->src : NULL) {
		const struct ir_extfile *f = x->storage == IR_STORE_EXTERNAL ? x->ext :
					     x->storage == IR_STORE_RAW ? x->raw_owner : NULL;

		if (f && dest_is(r->t, f->path)) {
			r->hit = f->location;
			return 1;
		}
	}
	return 0;
}

/* The file m reads that t would replace: the model file, an external
 * data file bound when it was loaded, or one its tensors read now. */
static const char *reads_dest(struct ir_model *m, const struct dest *t)
{
	struct reads r = { t, NULL };

	if (dest_is(t, m->path))
		return m->path;
	for (size_t i = 0; i < m->n_extfiles; i++)
		if (dest_is(t, m->extfiles[i]->path))
			return m->extfiles[i]->location;
	ir_model_for_each_tensor(m, reads_visit, &r);
	return r.hit;
}

/* Nothing written may replace a file the model reads (the input would be
 * lost, its weights replaced while they are read), and the external data
 * may not be the model written (a model over its own weights). */
static int check_dests(struct ir_model *m, const struct dest *out,
		       const struct dest *ext, const char *ext_name,
		       struct ir_diag *d)
{
	const char *hit;

	if (dest_is(out, m->path))
		return ir_diag_error(d, IR_EUSAGE, "refusing to write over the input model '%s'",
				     out->path);
	if ((hit = reads_dest(m, out)))
		return ir_diag_error(d, IR_EINVAL, "refusing to write over the input model's external data '%s'",
				     hit);
	if (!ext)
		return 0;
	if (dest_same(ext, out))
		return ir_diag_error(d, IR_EINVAL, "external data file '%s' would be the output model itself",
				     ext_name);
	if (ext->exists && !S_ISREG(ext->st.st_mode))
		return ir_diag_error(d, IR_EINVAL, "external data file '%s' exists and is not a regular file",
				     ext_name);
	if (dest_is(ext, m->path))
		return ir_diag_error(d, IR_EINVAL, "external data file '%s' would overwrite the input model '%s'",
				     ext_name, m->path);
	if ((hit = reads_dest(m, ext)))
		return ir_diag_error(d, IR_EINVAL, "external data file '%s' would overwrite the input model's external data '%s'",
				     ext_name, hit);
	return 0;
}

/* A temporary beside `target`; *tmp is malloc'd. */
static FILE *open_temp(const char *target, char **tmp, struct ir_diag *d)
{
	char *dir = ir_path_dir(target), *t;
	const char *base = strrchr(target, '/');
	int fd;
	FILE *f;

	base = base ? base + 1 : target;
	*tmp = NULL;
	if (!dir || !(t = malloc(strlen(dir) + strlen(base) + 16))) {
		free(dir);
		ir_diag_error(d, IR_ENOMEM, "out of memory");
		return NULL;
	}
	sprintf(t, "%s/.%s.XXXXXX", dir, base);
	free(dir);
	fd = mkstemp(t);
	if (fd < 0) {
		ir_diag_error(d, IR_EIO, "cannot create '%s': %s", target,
			      ir_strerror(errno));
		free(t);
		return NULL;
	}
	fchmod(fd, 0644);
	if (!(f = fdopen(fd, "wb"))) {
		close(fd);
		unlink(t);
		free(t);
		ir_diag_error(d, IR_ENOMEM, "out of memory");
		return NULL;
	}
	*tmp = t;
	return f;
}

static int finish(FILE *f, const char *target, struct ir_diag *d)
{
	int bad = fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
	int e = errno;

	if (fclose(f) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	if (bad)
		return ir_diag_error(d, IR_EIO, "writing '%s' failed: %s", target,
				     ir_strerror(e));
	return 0;
}

static int check_ext_name(const char *name, struct ir_diag *d)
{
	const char *p = name;

	if (!*name || name[strlen(name) - 1] == '/')
		return ir_diag_error(d, IR_EUSAGE, "--external-data '%s' is not a file name", name);
	if (name[0] == '/')
		return ir_diag_error(d, IR_EUSAGE, "--external-data '%s' must be relative to the output's folder", name);
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return ir_diag_error(d, IR_EUSAGE, "--external-data '%s' must not contain '..'", name);
		p += n;
		while (*p == '/')
			p++;
	}
	return 0;
}

/* The files a save writes, checked: *ext_path (malloc'd, NULL without
 * external data) is the external data file's path. */
static int check_save(struct ir_model *m, const char *path, const struct ir_save_opts *o,
		      char **ext_path, struct ir_diag *d)
{
	struct dest out, ext = { 0 };
	char *dir = NULL;
	int rc = 0;

	*ext_path = NULL;
	if (dest_init(&out, path) < 0) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	if (o->external_data) {
		if ((rc = check_ext_name(o->external_data, d)) < 0)
			goto cleanup;
		if (!(dir = ir_path_dir(path)) || !(*ext_path = join(dir, o->external_data)) ||
		    dest_init(&ext, *ext_path) < 0) {
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
			goto cleanup;
		}
	}
	rc = check_dests(m, &out, *ext_path ? &ext : NULL, o->external_data, d);
cleanup:
	if (rc < 0) {
		free(*ext_path);
		*ext_path = NULL;
	}
	free(dir);
	free(out.canon);
	free(ext.canon);
	return rc;
}

int ir_model_save_check(struct ir_model *m, const char *path,
			const struct ir_save_opts *o, struct ir_diag *d)
{
	struct ir_save_opts def = { NULL, 1024 };
	char *ext_path;
	int rc = check_save(m, path, o ? o : &def, &ext_path, d);

	free(ext_path);
	return rc;
}

int ir_model_save(struct ir_model *m, const char *path,
		  const struct ir_save_opts *o, struct ir_diag *d)
{
	struct ir_save_opts def = { NULL, 1024 };
	char *ext_path = NULL, *tmp = NULL, *ext_tmp = NULL;
	FILE *f = NULL, *xf = NULL;
	int rc = 0;

	if (!o)
		o = &def;
	if ((rc = check_save(m, path, o, &ext_path, d)) < 0)
		return rc;
	if (o->external_data) {
		if (!(xf = open_temp(ext_path, &ext_tmp, d))) {
			rc = d->status;
			goto cleanup;
		}
	}
	if (!(f = open_temp(path, &tmp, d))) {
		rc = d->status;
		goto cleanup;
	}
	rc = ir_save_streams(m, f, xf, o->external_data, o, d);
	if (xf) {
		int r = finish(xf, ext_path, d);

		xf = NULL;
		if (rc == 0)
			rc = r;
	}
	{
		int r = finish(f, path, d);

		f = NULL;
		if (rc == 0)
			rc = r;
	}
	if (rc == 0 && ext_tmp && rename(ext_tmp, ext_path) != 0)
		rc = ir_diag_error(d, IR_EIO, "cannot rename to '%s': %s", ext_path, ir_strerror(errno));
	if (rc == 0 && rename(tmp, path) != 0)
		rc = ir_diag_error(d, IR_EIO, "cannot rename to '%s': %s", path, ir_strerror(errno));
cleanup:
	if (xf)
		fclose(xf);
	if (f)
		fclose(f);
	if (rc < 0) {
		if (tmp)
			unlink(tmp);
		if (ext_tmp)
			unlink(ext_tmp);
	}
	free(tmp);
	free(ext_tmp);
	free(ext_path);
	return rc;
}

int ir_file_write_atomic(const char *path, const void *data, size_t len,
			 struct ir_diag *d)
{
	char *tmp = NULL;
	FILE *f = open_temp(path, &tmp, d);
	int rc;

	if (!f)
		return d->status;
	if (len && fwrite(data, 1, len, f) != len) {
		rc = ir_diag_error(d, IR_EIO, "writing '%s' failed: %s", path,
				   ir_strerror(errno));
		fclose(f);
		goto cleanup;
	}
	if ((rc = finish(f, path, d)) < 0)
		goto cleanup;
	if (rename(tmp, path) != 0)
		rc = ir_diag_error(d, IR_EIO, "cannot rename to '%s': %s", path,
				   ir_strerror(errno));
cleanup:
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}
