/* file.c: reading a model file: map it, pre-scan, unpack under the counting
 * allocator, convert to IR, bind external data (checked for safety and
 * bounds, mapped later on use), then verify. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir_int.h"

/* raw_data payloads at least this big are viewed in place, not copied. */
#define STRIP_THRESHOLD 4096

static int parse_u64(const char *s, int64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > INT64_MAX)
		return -1;
	*out = (int64_t)v;
	return 0;
}

static int bind_external(struct ir_tensor *t, void *ctx)
{
	struct ir_model *m = ((void **)ctx)[0];
	struct ir_diag *d = ((void **)ctx)[1];
	const char *loc = NULL;
	int64_t off = 0, len = -1, want;
	struct ir_diag sub;
	int rc;

	if (t->storage != IR_STORE_EXTERNAL)
		return 0;
	for (size_t i = 0; i < t->n_external; i++) {
		const char *k = ir_s(t->external[i].key);
		const char *v = t->external[i].value;

		if (!strcmp(k, "location"))
			loc = ir_s(v);
		else if (!strcmp(k, "offset") && parse_u64(v, &off) < 0)
			return diag_error(d, "tensor '%s': bad external data offset '%s'",
					  ir_s(t->name), ir_s(v));
		else if (!strcmp(k, "length") && parse_u64(v, &len) < 0)
			return diag_error(d, "tensor '%s': bad external data length '%s'",
					  ir_s(t->name), ir_s(v));
	}
	if (!loc)
		return diag_error(d, "tensor '%s': external data has no location",
				  ir_s(t->name));
	want = ir_tensor_nbytes(t);
	if (want < 0 || t->dtype == IR_DTYPE_STRING)
		return diag_error(d, "tensor '%s': external data needs a numeric dtype and valid dims",
				  ir_s(t->name));
	if (len < 0)
		len = want;
	if (len != want)
		return diag_error(d, "tensor '%s': external data length %lld differs from dims x element size %lld",
				  ir_s(t->name), (long long)len, (long long)want);
	ir_diag_init(&sub);
	if ((rc = ir_extfile_open(m, loc, &t->ext, &sub)) < 0)
		return ir_diag_error(d, rc, "tensor '%s': %.400s", ir_s(t->name),
				     sub.msg);
	t->ext->refs++;
	if ((uint64_t)off > t->ext->size || (uint64_t)len > t->ext->size - (uint64_t)off) {
		int r = diag_error(d, "tensor '%s': external data file '%s' is %zu bytes, too short for offset %lld + length %lld",
				   ir_s(t->name), loc, t->ext->size,
				   (long long)off, (long long)len);
		return r;
	}
	t->ext_offset = off;
	t->ext_length = len;
	return 0;
}

int ir_model_parse(const char *path, const struct ir_load_opts *o,
		   struct ir_model **out, struct ir_diag *d)
{
	struct ir_pbuf_alloc alloc;
	struct ir_strip strip = { 0 };
	struct ir_extfile *self = NULL;
	Onnx__ModelProto *pb = NULL;
	struct ir_model *m = NULL;
	void *map = MAP_FAILED;
	struct stat st;
	size_t size = 0, limit;
	int fd, rc = 0, depth = o && o->max_depth ? o->max_depth : 64;
	void *ctx[2];

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return diag_error(d, "cannot open: %s", ir_strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = diag_error(d, "cannot stat: %s", ir_strerror(errno));
		goto cleanup;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = diag_error(d, "is a directory, not a model file");
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = diag_error(d, "not a regular file");
		goto cleanup;
	}
	if (st.st_size == 0) {
		rc = diag_error(d, "empty file, not an ONNX model");
		goto cleanup;
	}
	size = (size_t)st.st_size;
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		rc = ir_diag_error(d, IR_EIO, "cannot map: %s", ir_strerror(errno));
		goto cleanup;
	}
	strip.threshold = o && o->view_threshold ? o->view_threshold :
			  STRIP_THRESHOLD;
	if ((rc = ir_pbuf_prescan(map, size, &onnx__model_proto__descriptor,
				  depth, &strip, d)) < 0)
		goto cleanup;
	if ((rc = ir_strip_build(map, size, &strip, d)) < 0)
		goto cleanup;
	limit = o && o->max_memory ? o->max_memory :
		(size > SIZE_MAX / 16 ? SIZE_MAX : 16 * size + (256u << 20));
	ir_pbuf_alloc_init(&alloc, limit);
	pb = strip.buf ? onnx__model_proto__unpack(&alloc.base, strip.len, strip.buf) :
		onnx__model_proto__unpack(&alloc.base, size, map);
	free(strip.buf);
	strip.buf = NULL;
	if (!pb) {
		if (alloc.failed == 2)
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		else if (alloc.failed == 1)
			rc = diag_error(d, "parsing needs more than %zu bytes of memory", limit);
		else
			rc = diag_error(d, "corrupt protobuf: not a valid ONNX ModelProto");
		goto cleanup;
	}
	if (!(m = ir_model_new()) || !(m->path = strdup(path)) ||
	    !(m->dir = ir_path_dir(path))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	if (strip.n_payloads) {
		/* Tensors will view the mapping: the model owns it now. */
		if (!(self = calloc(1, sizeof(*self))) ||
		    !(self->location = strdup(path)) || !(self->path = strdup(path))) {
			ir_extfile_unref(self);
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
			goto cleanup;
		}
		self->refs = 1;
		self->map = map;
		self->size = size;
		m->self_map = self;
		map = MAP_FAILED;
	}
	if ((rc = ir_from_pb(pb, m, strip.n_payloads ? &strip : NULL, self, d)) < 0)
		goto cleanup;
	onnx__model_proto__free_unpacked(pb, &alloc.base);
	pb = NULL;
	if (map != MAP_FAILED)
		munmap(map, size);
	map = MAP_FAILED;
	ctx[0] = m;
	ctx[1] = d;
	if ((rc = ir_model_for_each_tensor(m, bind_external, ctx)) < 0)
		goto cleanup;
cleanup:
	ir_strip_release(&strip);
	if (pb)
		onnx__model_proto__free_unpacked(pb, &alloc.base);
	if (map != MAP_FAILED)
		munmap(map, size);
	close(fd);
	if (rc < 0)
		ir_model_free(m);
	else
		*out = m;
	return rc;
}

int ir_model_load(const char *path, const struct ir_load_opts *o,
		  struct ir_model **out, struct ir_diag *d)
{
	int rc = ir_model_parse(path, o, out, d);

	if (rc < 0)
		return rc;
	if ((rc = ir_model_verify(*out, d)) < 0) {
		ir_model_free(*out);
		*out = NULL;
	}
	return rc;
}
