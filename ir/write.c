/* write.c: saving a model to disk safely: refuse to overwrite the input,
 * check the external data name, write model and external data into
 * temporaries beside the target, fsync, then rename over the targets. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir_int.h"

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static char *join(const char *dir, const char *name)
{
	char *p = malloc(strlen(dir) + strlen(name) + 2);

	if (p)
		sprintf(p, "%s/%s", dir, name);
	return p;
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

int ir_model_save(struct ir_model *m, const char *path,
		  const struct ir_save_opts *o, struct ir_diag *d)
{
	struct ir_save_opts def = { NULL, 1024 };
	char *dir = NULL, *ext_path = NULL, *tmp = NULL, *ext_tmp = NULL;
	FILE *f = NULL, *xf = NULL;
	int rc = 0;

	if (!o)
		o = &def;
	if (same_file(path, m->path))
		return ir_diag_error(d, IR_EUSAGE, "refusing to write over the input model '%s'", path);
	if (o->external_data) {
		if ((rc = check_ext_name(o->external_data, d)) < 0)
			return rc;
		if (!(dir = ir_path_dir(path)) || !(ext_path = join(dir, o->external_data))) {
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
			goto cleanup;
		}
		if (same_file(ext_path, m->path) || same_file(ext_path, path) ||
		    !strcmp(ext_path, path)) {
			rc = ir_diag_error(d, IR_EUSAGE, "--external-data '%s' would overwrite a model file", o->external_data);
			goto cleanup;
		}
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
	free(dir);
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
