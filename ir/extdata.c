/* extdata.c: external tensor data.  Resolves locations safely inside the
 * model's folder (no absolute paths, no ".." escapes, no symlinks leading
 * out), shares one refcounted handle per file, and maps each tensor's
 * bytes read-only on first use (a window of the file, unmapped when the
 * tensor is released), so weights are paged in on use, never copied
 * whole, and the address space used follows the tensors in use. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir_int.h"

char *ir_path_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d;

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	if (!(d = malloc((size_t)(slash - path) + 1)))
		return NULL;
	memcpy(d, path, (size_t)(slash - path));
	d[slash - path] = 0;
	return d;
}

int ir_path_resolve_inside(const char *dir, const char *location,
			   char **out, struct ir_diag *d)
{
	char *joined = NULL, *real = NULL, *rdir = NULL;
	size_t depth = 0, dl;
	const char *p = location;
	int rc = 0;

	*out = NULL;
	if (!*location)
		return diag_error(d, "external data location is empty");
	if (location[0] == '/')
		return diag_error(d, "external data location '%s' is an absolute path", location);
	/* Lexical check: no component may climb above the folder. */
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (depth == 0)
				return diag_error(d, "external data location '%s' escapes the model's folder", location);
			depth--;
		} else if (n && !(n == 1 && p[0] == '.')) {
			depth++;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	if (!(joined = malloc(strlen(dir) + strlen(location) + 2)))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	strcpy(joined, dir);
	strcat(joined, "/");
	strcat(joined, location);
	rdir = realpath(dir, NULL);
	real = realpath(joined, NULL);
	if (!rdir || !real) {
		rc = diag_error(d, "external data file '%s': %s", location,
				ir_strerror(errno));
		goto cleanup;
	}
	dl = strlen(rdir);
	if (strcmp(rdir, "/") != 0 &&
	    (strncmp(real, rdir, dl) != 0 || real[dl] != '/')) {
		rc = diag_error(d, "external data location '%s' resolves outside the model's folder", location);
		goto cleanup;
	}
	*out = real;
	real = NULL;
cleanup:
	free(joined);
	free(real);
	free(rdir);
	return rc;
}

int ir_extfile_open(struct ir_model *m, const char *location,
		    struct ir_extfile **out, struct ir_diag *d)
{
	struct ir_extfile *x, **grown;
	struct stat st;
	char *path;
	int rc;

	for (size_t i = 0; i < m->n_extfiles; i++)
		if (!strcmp(m->extfiles[i]->location, location)) {
			*out = m->extfiles[i];
			return 0;
		}
	if ((rc = ir_path_resolve_inside(m->dir ? m->dir : ".", location,
					 &path, d)) < 0)
		return rc;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
		free(path);
		return diag_error(d, "external data file '%s' is not a regular file", location);
	}
	x = calloc(1, sizeof(*x));
	grown = realloc(m->extfiles, (m->n_extfiles + 1) * sizeof(*grown));
	if (grown)
		m->extfiles = grown;
	if (!x || !grown || !(x->location = strdup(location))) {
		free(x);
		free(path);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	x->refs = 1;
	x->path = path;
	x->size = (size_t)st.st_size;
	m->extfiles[m->n_extfiles++] = x;
	*out = x;
	return 0;
}

int ir_extfile_window(struct ir_extfile *x, int64_t off, int64_t len,
		      const uint8_t **base, size_t *map_len, struct ir_diag *d)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), skip;
	int fd;
	void *p;

	*base = NULL;
	*map_len = 0;
	if (len <= 0)
		return 0;
	if (off < 0 || (uint64_t)off + (uint64_t)len > x->size)
		return diag_error(d, "external data file '%s': bytes %lld..%lld past its end",
				  x->location, (long long)off, (long long)(off + len));
	skip = (size_t)off % page;
	fd = open(x->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return diag_error(d, "external data file '%s': %s", x->location,
				  ir_strerror(errno));
	p = mmap(NULL, (size_t)len + skip, PROT_READ, MAP_PRIVATE, fd, (off_t)((size_t)off - skip));
	close(fd);
	if (p == MAP_FAILED)
		return ir_diag_error(d, IR_EIO, "external data file '%s': mmap: %s",
				     x->location, ir_strerror(errno));
	*base = p;
	*map_len = (size_t)len + skip;
	return 0;
}

int ir_extfile_pread_direct(int fd, uint8_t *blk, int64_t off, size_t want,
			    const uint8_t **at)
{
	int64_t a = off / IR_DIRECT_ALIGN * IR_DIRECT_ALIGN;
	size_t need = (size_t)(off - a) + want;
	size_t span = (need + IR_DIRECT_ALIGN - 1) / IR_DIRECT_ALIGN * IR_DIRECT_ALIGN, got = 0;

	while (got < need) {
		ssize_t r = pread(fd, blk + got, span - got, (off_t)a + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EINVAL && got == 0)
			return 1;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		got += (size_t)r;
		if (got % IR_DIRECT_ALIGN && got < need)
			return -EIO;            /* short read inside the file */
	}
	*at = blk + (off - a);
	return 0;
}

int ir_extfile_fd(const struct ir_extfile *x, int *direct)
{
	int fd = *direct ? open(x->path, O_RDONLY | O_CLOEXEC | O_DIRECT) : -1;

	if (fd < 0) {
		*direct = 0;
		fd = open(x->path, O_RDONLY | O_CLOEXEC);
	}
	return fd;
}

int ir_extfile_read(struct ir_extfile *x, int64_t off, int64_t len, size_t piece, int direct,
		    ir_tensor_sink_fn sink, void *ctx, struct ir_diag *d)
{
	uint8_t *buf;
	int fd, rc = 0;

	if (len <= 0)
		return 0;
	if (off < 0 || (uint64_t)off + (uint64_t)len > x->size)
		return diag_error(d, "external data file '%s': bytes %lld..%lld past its end",
				  x->location, (long long)off, (long long)(off + len));
	if ((fd = ir_extfile_fd(x, &direct)) < 0)
		return diag_error(d, "external data file '%s': %s", x->location,
				  ir_strerror(errno));
	/* whole blocks, and room for the blocks around a piece, should direct
	 * reads be refused only later */
	piece = (piece + IR_DIRECT_ALIGN - 1) / IR_DIRECT_ALIGN * IR_DIRECT_ALIGN;
	if (posix_memalign((void **)&buf, IR_DIRECT_ALIGN, piece + 2 * IR_DIRECT_ALIGN)) {
		close(fd);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	if (!direct)
		posix_fadvise(fd, (off_t)off, (off_t)len, POSIX_FADV_SEQUENTIAL);
	while (rc == 0 && len > 0) {
		size_t want = (uint64_t)len < piece ? (size_t)len : piece, got = 0;
		const uint8_t *at = buf;

		if (direct && (rc = ir_extfile_pread_direct(fd, buf, off, want, &at)) > 0) {
			/* no direct reads here: on as usual */
			close(fd);
			direct = rc = 0;
			if ((fd = ir_extfile_fd(x, &direct)) < 0) {
				free(buf);
				return diag_error(d, "external data file '%s': %s", x->location,
						  ir_strerror(errno));
			}
		} else if (direct) {
			if (rc < 0)
				rc = ir_diag_error(d, IR_EIO, "external data file '%s': %s",
						   x->location, ir_strerror(-rc));
			/* a tensor at an offset off the alignment malloc gives:
			 * moved to the buffer's start, for sinks that load its
			 * elements as their type */
			if (rc == 0 && (uintptr_t)at % 16) {
				memmove(buf, at, want);
				at = buf;
			}
			got = want;
		}
		while (got < want) {
			ssize_t r = pread(fd, buf + got, want - got, (off_t)off + (off_t)got);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				rc = r < 0 ? ir_diag_error(d, IR_EIO, "external data file '%s': %s",
							   x->location, ir_strerror(errno)) :
				     diag_error(d, "external data file '%s' ends early", x->location);
				break;
			}
			got += (size_t)r;
		}
		if (rc == 0)
			rc = sink(at, want, ctx);
		off += (int64_t)want;
		len -= (int64_t)want;
	}
	free(buf);
	close(fd);
	return rc;
}

void ir_extfile_unref(struct ir_extfile *x)
{
	if (!x || --x->refs > 0)
		return;
	if (x->map)
		munmap((void *)x->map, x->size);
	free(x->location);
	free(x->path);
	free(x);
}
