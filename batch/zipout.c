/* zipout.c: `--zip OUT.zip`: the files of OUTDIR packed with libzip, in
 * sorted order with a fixed timestamp so the archive is deterministic too.
 * libzip writes to a temporary beside OUT and renames it on close. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>

#include "batch/batch_int.h"
#include "ir/ir.h"

static int add_tree(zip_t *z, const char *root, const char *rel, const char *skip,
		    struct ir_diag *d)
{
	char path[4200];
	struct dirent **ents = NULL;
	int n, rc = 0;

	snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
	if ((n = scandir(path, &ents, NULL, alphasort)) < 0)
		return ir_diag_error(d, IR_EIO, "%s: cannot read: %s", path, ir_strerror(errno));
	for (int i = 0; i < n; i++) {
		const char *e = ents[i]->d_name;
		char sub[4200], full[8400];
		struct stat st;

		if (rc < 0 || e[0] == '.')   /* also the writers' temporaries */
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e);
		snprintf(full, sizeof(full), "%s/%s", root, sub);
		if (lstat(full, &st) < 0)
			continue;
		if (skip && S_ISREG(st.st_mode)) {   /* never the archive itself */
			char *r = realpath(full, NULL);
			int same = r && !strcmp(r, skip);

			free(r);
			if (same)
				continue;
		}
		if (S_ISDIR(st.st_mode)) {
			rc = add_tree(z, root, sub, skip, d);
		} else if (S_ISREG(st.st_mode)) {
			zip_source_t *s = zip_source_file(z, full, 0, -1);
			zip_int64_t idx;

			if (!s || (idx = zip_file_add(z, sub, s, ZIP_FL_ENC_UTF_8)) < 0) {
				zip_source_free(s);
				rc = ir_diag_error(d, IR_EIO, "%s: cannot add: %s", full, zip_strerror(z));
			} else {
				zip_file_set_mtime(z, (zip_uint64_t)idx, 946684800, 0);
			}
		}
	}
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return rc;
}

int batch_zip_dir(const char *dir, const char *out, struct ir_diag *d)
{
	int err = 0, rc;
	char *real = realpath(out, NULL);   /* NULL when it does not exist yet */
	zip_t *z = zip_open(out, ZIP_CREATE | ZIP_TRUNCATE, &err);

	if (!z) {
		free(real);
		return ir_diag_error(d, IR_EINVAL, "%s: cannot create the archive", out);
	}
	rc = add_tree(z, dir, "", real, d);
	free(real);
	if (rc < 0) {
		zip_discard(z);
		return rc;
	}
	if (zip_close(z) < 0) {
		rc = ir_diag_error(d, IR_EIO, "%s: cannot write: %s", out, zip_strerror(z));
		zip_discard(z);
	}
	return rc;
}
