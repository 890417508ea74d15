/* zipsrc.c: .zip archives of models, read with libzip and never extracted
 * to disk.  Before any entry is used the whole archive is checked: names
 * that are absolute, contain "..", a drive or a backslash (zip-slip),
 * symlink entries, entries above the size limit or compressed more than
 * the ratio limit (zip bombs) refuse the archive. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>

#include "batch/batch_int.h"
#include "ir/ir.h"

int batch_zip_name_safe(const char *name)
{
	const char *p = name;

	if (!*name || name[0] == '/' || strchr(name, '\\'))
		return 0;
	if (((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z')) &&
	    name[1] == ':')
		return 0;
	while (*p) {
		size_t len = strcspn(p, "/");

		if (len == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		p += len;
		if (*p)
			p++;
	}
	return 1;
}

int batch_zip_entry_ok(const struct batch_limits *l, uint64_t size,
		       uint64_t comp_size, char *why, size_t n)
{
	if (size > l->max_entry) {
		snprintf(why, n, "%llu bytes uncompressed, above the limit of %llu",
			 (unsigned long long)size, (unsigned long long)l->max_entry);
		return 0;
	}
	/* Small entries may compress well; the ratio matters from 1 MiB on. */
	if (size > (1u << 20) && (double)size > l->max_ratio * (double)(comp_size ? comp_size : 1)) {
		snprintf(why, n, "compression ratio %.0f:1 above the limit of %.0f:1 (zip bomb?)",
			 (double)size / (double)(comp_size ? comp_size : 1), l->max_ratio);
		return 0;
	}
	return 1;
}

static int is_symlink(zip_t *z, zip_uint64_t i)
{
	zip_uint8_t os;
	zip_uint32_t attr;

	if (zip_file_get_external_attributes(z, i, 0, &os, &attr) < 0)
		return 0;
	return os == ZIP_OPSYS_UNIX && ((attr >> 16) & S_IFMT) == S_IFLNK;
}

static int open_zip(const char *path, zip_t **z, struct ir_diag *d)
{
	int err = 0;

	if (!(*z = zip_open(path, ZIP_RDONLY, &err))) {
		zip_error_t e;
		int rc;

		zip_error_init_with_code(&e, err);
		rc = ir_diag_error(d, IR_EINVAL, "%s: not a readable zip archive: %s",
				   path, zip_error_strerror(&e));
		zip_error_fini(&e);
		return rc;
	}
	return 0;
}

int batch_zip_add(struct batch_src *s, const char *path, const struct batch_mopts *o,
		  struct ir_diag *d)
{
	zip_t *z;
	zip_int64_t n;
	size_t before = s->n_items;
	int rc = 0;

	if ((rc = open_zip(path, &z, d)) < 0)
		return rc;
	n = zip_get_num_entries(z, 0);
	for (zip_int64_t i = 0; i < n && rc == 0; i++) {
		zip_stat_t st;
		const char *name;
		char why[160], src[8200];
		size_t len;

		if (zip_stat_index(z, (zip_uint64_t)i, 0, &st) < 0 || !(st.valid & ZIP_STAT_NAME)) {
			rc = ir_diag_error(d, IR_EINVAL, "%s: entry %lld: unreadable", path, (long long)i);
			break;
		}
		name = st.name;
		if (!batch_zip_name_safe(name)) {
			rc = ir_diag_error(d, IR_EINVAL, "%s: entry '%s': unsafe path (absolute or with '..'): refused", path, name);
			break;
		}
		if (is_symlink(z, (zip_uint64_t)i)) {
			rc = ir_diag_error(d, IR_EINVAL, "%s: entry '%s': a symlink: refused", path, name);
			break;
		}
		if (!batch_zip_entry_ok(&s->lim, st.size, st.comp_size, why, sizeof(why))) {
			rc = ir_diag_error(d, IR_EINVAL, "%s: entry '%s': %s: refused", path, name, why);
			break;
		}
		len = strlen(name);
		if (!len || name[len - 1] == '/' || len < 5 || strcasecmp(name + len - 5, ".onnx"))
			continue;
		snprintf(src, sizeof(src), "%s:%s", path, name);
		if (batch_src_push(s, name, src, path, name, o) < 0)
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	zip_discard(z);
	if (rc == 0 && s->n_items == before)
		rc = ir_diag_error(d, IR_EINVAL, "%s: no *.onnx entry in the archive", path);
	return rc;
}

int batch_zip_read(const char *path, const char *entry,
		   const struct batch_limits *l, uint8_t **buf, size_t *len,
		   struct ir_diag *d)
{
	zip_t *z;
	zip_file_t *f = NULL;
	zip_stat_t st;
	uint8_t *b = NULL;
	zip_int64_t got;
	char why[160];
	int rc;

	*buf = NULL;
	*len = 0;
	if ((rc = open_zip(path, &z, d)) < 0)
		return rc;
	if (zip_stat(z, entry, 0, &st) < 0 || !(st.valid & ZIP_STAT_SIZE)) {
		rc = ir_diag_error(d, IR_EINVAL, "entry '%s' not found", entry);
		goto cleanup;
	}
	if (!batch_zip_entry_ok(l, st.size, st.comp_size, why, sizeof(why))) {
		rc = ir_diag_error(d, IR_EINVAL, "entry '%s': %s", entry, why);
		goto cleanup;
	}
	if (!(b = malloc(st.size + 1))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	if (!(f = zip_fopen(z, entry, 0))) {
		rc = ir_diag_error(d, IR_EINVAL, "entry '%s': %s", entry, zip_strerror(z));
		goto cleanup;
	}
	/* Never more than the declared size: a lying header gets no further. */
	got = zip_fread(f, b, st.size + 1);
	if (got < 0 || (zip_uint64_t)got != st.size) {
		rc = ir_diag_error(d, IR_EINVAL, "entry '%s': %s", entry,
				   got < 0 ? zip_file_strerror(f) : "size differs from its header");
		goto cleanup;
	}
	*buf = b;
	*len = (size_t)got;
	b = NULL;
	rc = 0;
cleanup:
	if (f)
		zip_fclose(f);
	free(b);
	zip_discard(z);
	return rc;
}
