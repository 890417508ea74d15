/* derived.c: weights without copies.  A derived tensor is another
 * tensor's payload cast element by element, or computed from it by pieces
 * (blockwise quantization: ops), only when something reads it
 * (ir_tensor_data) or streamed piece by piece into a file
 * (ir_tensor_stream), so converting a 7B model's weights never holds more
 * than one piece of them; mapped pages read are given back to the kernel
 * as soon as they have been used. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ir/ir_int.h"

#define PIECE_ELEMS ((size_t)1 << 18)

static size_t elem_size(int dtype)
{
	const struct ir_dtype_info *di = ir_dtype_get(dtype);

	return di && di->bits >= 8 && dtype != IR_DTYPE_STRING ? (size_t)di->bits / 8 : 0;
}

static int copy_dims(struct ir_tensor *t, const int64_t *dims, size_t n)
{
	t->n_dims = n;
	if (!(t->dims = malloc((n + 1) * sizeof(*dims))))
		return -1;
	if (n)
		memcpy(t->dims, dims, n * sizeof(*dims));
	return 0;
}

struct ir_tensor *ir_tensor_new_derived(const char *name, struct ir_tensor *src,
					int dtype, ir_tensor_cast_fn cast)
{
	struct ir_tensor *t;

	if (!src || !cast || !elem_size(dtype) || !elem_size(src->dtype) ||
	    !(t = calloc(1, sizeof(*t)))) {
		ir_tensor_free(src);
		return NULL;
	}
	t->present = IR_TENSOR_HAS_DTYPE;
	t->dtype = dtype;
	t->storage = IR_STORE_DERIVED;
	t->src = src;
	t->cast = cast;
	if (!(t->name = strdup(name ? name : ir_s(src->name))) ||
	    copy_dims(t, src->dims, src->n_dims) < 0) {
		ir_tensor_free(t);
		return NULL;
	}
	return t;
}

/* Whole bytes per element, or 4-bit elements whose units are whole
 * bytes (an even count of them each). */
static int unit_bytes_whole(int dtype, const struct ir_tensor *t, int64_t n_units)
{
	const struct ir_dtype_info *di = ir_dtype_get(dtype);
	int64_t n = ir_tensor_numel(t);

	if (elem_size(dtype))
		return 1;
	return di && di->bits == 4 && n > 0 && n_units > 0 && n % n_units == 0 &&
	       (n / n_units) % 2 == 0;
}

struct ir_tensor *ir_tensor_new_computed(const char *name, struct ir_tensor *src, int dtype,
					 const int64_t *dims, size_t rank, int64_t n_units,
					 const struct ir_derive_ops *ops, void *arg)
{
	struct ir_tensor *t = NULL;
	const struct ir_dtype_info *di = ir_dtype_get(dtype);

	if (!src || !ops || !ops->fill || !di || (!elem_size(dtype) && di->bits != 4) ||
	    n_units <= 0 ||
	    !(t = calloc(1, sizeof(*t)))) {
		ir_tensor_free(src);
		if (ops && ops->drop)
			ops->drop(arg);
		return NULL;
	}
	t->present = IR_TENSOR_HAS_DTYPE;
	t->dtype = dtype;
	t->storage = IR_STORE_DERIVED;
	t->src = src;
	t->ops = ops;
	t->arg = arg;
	t->n_units = n_units;
	if (!(t->name = strdup(name ? name : ir_s(src->name))) || copy_dims(t, dims, rank) < 0 ||
	    ir_tensor_numel(t) % n_units || !unit_bytes_whole(dtype, t, n_units)) {
		ir_tensor_free(t);
		return NULL;
	}
	return t;
}

static struct ir_kv *kv_copy(const struct ir_kv *kv, size_t n)
{
	struct ir_kv *c = calloc(n + 1, sizeof(*c));

	for (size_t i = 0; c && i < n; i++)
		if ((kv[i].key && !(c[i].key = strdup(kv[i].key))) ||
		    (kv[i].value && !(c[i].value = strdup(kv[i].value)))) {
			for (size_t k = 0; k <= i; k++) {
				free(c[k].key);
				free(c[k].value);
			}
			free(c);
			return NULL;
		}
	return c;
}

struct ir_tensor *ir_tensor_clone(const struct ir_tensor *t, const char *name)
{
	struct ir_tensor *c;
	int ok;

	if (!t || t->dtype == IR_DTYPE_STRING || !(c = calloc(1, sizeof(*c))))
		return NULL;
	c->present = t->present;
	c->dtype = t->dtype;
	c->data_location = t->data_location;
	c->seg_begin = t->seg_begin;
	c->seg_end = t->seg_end;
	c->storage = t->storage;
	ok = (c->name = strdup(name ? name : ir_s(t->name))) &&
	     copy_dims(c, t->dims, t->n_dims) == 0;
	switch (t->storage) {
	case IR_STORE_RAW:
		c->raw_len = t->raw_len;
		if (t->raw_owner) {
			c->raw = t->raw;
			c->raw_owner = t->raw_owner;
			t->raw_owner->refs++;
		} else if (ok && (c->raw = malloc(t->raw_len + 1))) {
			if (t->raw_len)   /* an empty tensor may have no bytes at all */
				memcpy(c->raw, t->raw, t->raw_len);
		} else {
			ok = 0;
		}
		break;
	case IR_STORE_TYPED: {
		size_t bytes = t->n_typed * (t->field == IR_FIELD_FLOAT ||
					     t->field == IR_FIELD_INT32 ? 4 : 8);

		c->field = t->field;
		c->n_typed = t->n_typed;
		if (ok && (c->typed = malloc(bytes + 1))) {
			if (bytes)
				memcpy(c->typed, t->typed, bytes);
		} else {
			ok = 0;
		}
		break;
	}
	case IR_STORE_EXTERNAL:
		c->ext = t->ext;
		if (t->ext)
			t->ext->refs++;
		c->ext_offset = t->ext_offset;
		c->ext_length = t->ext_length;
		c->n_external = t->n_external;
		if (t->n_external && !(c->external = kv_copy(t->external, t->n_external)))
			ok = 0;
		break;
	case IR_STORE_DERIVED:
		c->cast = t->cast;
		if (t->ops) {
			if (t->ops->hold)
				t->ops->hold(t->arg);
			c->ops = t->ops;
			c->arg = t->arg;
			c->n_units = t->n_units;
		}
		if (!(c->src = ir_tensor_clone(t->src, NULL)))
			ok = 0;
		break;
	default:
		break;
	}
	if (!ok) {
		ir_tensor_free(c);
		return NULL;
	}
	return c;
}

int ir_tensor_shares_payload(const struct ir_tensor *t)
{
	switch (t->storage) {
	case IR_STORE_EXTERNAL: return 1;
	case IR_STORE_RAW: return t->raw_owner != NULL;
	case IR_STORE_DERIVED: return t->src && ir_tensor_shares_payload(t->src);
	default: return 0;
	}
}

int ir_derived_materialize(struct ir_tensor *t, struct ir_diag *d)
{
	size_t es = elem_size(t->src->dtype), n;
	const uint8_t *in;
	uint8_t *out;
	size_t len;
	int rc;

	if (t->cache)
		return 0;
	if (t->ops) {
		len = (size_t)ir_tensor_nbytes(t);
		if (!(out = malloc(len + 1)))
			return ir_diag_error(d, IR_ENOMEM, "tensor '%s': out of memory (%zu bytes)",
					     ir_s(t->name), len);
		if ((rc = t->ops->fill(t, 0, t->n_units, out, d)) < 0) {
			free(out);
			return rc;
		}
		t->cache = out;
		if (t->ops->done)
			t->ops->done(t);
		return 0;
	}
	if ((rc = ir_tensor_data(t->src, &in, &len, d)) < 0)
		return rc;
	n = es ? len / es : 0;
	if (!(out = malloc(n * elem_size(t->dtype) + 1)))
		return ir_diag_error(d, IR_ENOMEM, "tensor '%s': out of memory (%zu bytes)",
				     ir_s(t->name), n * elem_size(t->dtype));
	if (n && (rc = t->cast(t->src->dtype, in, t->dtype, out, n, d)) < 0) {
		free(out);
		return rc;
	}
	t->cache = out;
	return 0;
}

#define PIECE_BYTES ((size_t)4 << 20)

/* Source pieces cast into buf and handed on. */
struct conv {
	struct ir_tensor *t;
	ir_tensor_sink_fn sink;
	void *ctx;
	uint8_t *buf;
	struct ir_diag *d;
};

static int conv_piece(const uint8_t *data, size_t len, void *ctx)
{
	struct conv *c = ctx;
	size_t es = elem_size(c->t->src->dtype), os = elem_size(c->t->dtype);
	size_t n = len / es;
	int rc;

	for (size_t i = 0; i < n; i += PIECE_ELEMS) {
		size_t k = n - i < PIECE_ELEMS ? n - i : PIECE_ELEMS;

		if ((rc = c->t->cast(c->t->src->dtype, data + i * es, c->t->dtype, c->buf, k,
				     c->d)) < 0 ||
		    (rc = c->sink(c->buf, k * os, c->ctx)) < 0)
			return rc;
	}
	return 0;
}

/* A derivation by pieces: a run of units at a time. */
static int stream_units(struct ir_tensor *t, ir_tensor_sink_fn sink, void *ctx,
			struct ir_diag *d)
{
	size_t unit = (size_t)ir_tensor_nbytes(t) / (size_t)t->n_units;
	int64_t per = t->ops->piece ? t->ops->piece(t) : 0;
	uint8_t *buf;
	int rc = 0;

	if (per <= 0)
		per = unit && unit < PIECE_BYTES ? (int64_t)(PIECE_BYTES / unit) : 1;
	if (per > t->n_units)
		per = t->n_units;
	if (!(buf = malloc((size_t)per * unit + 1)))
		return ir_diag_error(d, IR_ENOMEM, "tensor '%s': out of memory", ir_s(t->name));
	for (int64_t u = 0; u < t->n_units && rc == 0; u += per) {
		int64_t k = t->n_units - u < per ? t->n_units - u : per;

		if ((rc = t->ops->fill(t, u, u + k, buf, d)) == 0)
			rc = sink(buf, (size_t)k * unit, ctx);
	}
	free(buf);
	if (rc == 0 && t->ops->done)
		t->ops->done(t);
	return rc;
}

int ir_tensor_stream(struct ir_tensor *t, ir_tensor_sink_fn sink, void *ctx,
		     struct ir_diag *d)
{
	struct conv c = { t, sink, ctx, NULL, d };
	const uint8_t *in;
	size_t len;
	int rc;

	if (t->storage == IR_STORE_EXTERNAL && !t->win && t->ext)
		return ir_extfile_read(t->ext, t->ext_offset, t->ext_length, PIECE_BYTES,
				       t->ext_length >= IR_DIRECT_MIN, sink, ctx, d);
	if (t->storage != IR_STORE_DERIVED || t->cache) {
		if ((rc = ir_tensor_data(t, &in, &len, d)) < 0)
			return rc;
		rc = len ? sink(in, len, ctx) : 0;
		if (t->storage != IR_STORE_DERIVED)
			ir_tensor_release_data(t);
		return rc;
	}
	if (t->ops)
		return stream_units(t, sink, ctx, d);
	if (!(c.buf = malloc(PIECE_ELEMS * elem_size(t->dtype))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	rc = ir_tensor_stream(t->src, conv_piece, &c, d);
	free(c.buf);
	return rc;
}

int ir_tensor_reader_open(struct ir_tensor_reader *r, struct ir_tensor *t,
			  struct ir_diag *d)
{
	memset(r, 0, sizeof(*r));
	r->t = t;
	r->fd = -1;
	if (t->storage == IR_STORE_EXTERNAL && !t->win && t->ext) {
		r->direct = t->ext_length >= IR_DIRECT_MIN;
		if ((r->fd = ir_extfile_fd(t->ext, &r->direct)) < 0)
			return ir_diag_error(d, IR_EIO, "external data file '%s': %s",
					     t->ext->location, ir_strerror(errno));
		if (t->ext_offset < 0 || t->ext_length < 0 ||
		    (uint64_t)t->ext_offset + (uint64_t)t->ext_length > t->ext->size) {
			ir_tensor_reader_close(r);
			return ir_diag_error(d, IR_EINVAL, "external data file '%s': bytes "
					     "%lld..%lld past its end", t->ext->location,
					     (long long)t->ext_offset,
					     (long long)(t->ext_offset + t->ext_length));
		}
		r->base = t->ext_offset;
		r->len = (size_t)t->ext_length;
		return 0;
	}
	return ir_tensor_data(t, &r->data, &r->len, d);
}

int ir_tensor_reader_read(struct ir_tensor_reader *r, uint64_t off, size_t len,
			  uint8_t *buf, struct ir_diag *d)
{
	size_t got = 0;

	if (off > r->len || len > r->len - off)
		return ir_diag_error(d, IR_EINTERNAL, "tensor '%s': bytes %llu..%llu of %zu read",
				     ir_s(r->t->name), (unsigned long long)off,
				     (unsigned long long)(off + len), r->len);
	if (r->fd < 0) {
		if (len)
			memcpy(buf, r->data + off, len);
		return 0;
	}
	if (r->direct && len) {
		const uint8_t *at;
		int rc;

		if (r->blk_cap < len + 2 * IR_DIRECT_ALIGN) {
			free(r->blk);
			r->blk = NULL;
			r->blk_cap = 0;
			if (posix_memalign((void **)&r->blk, IR_DIRECT_ALIGN,
					   len + 2 * IR_DIRECT_ALIGN))
				return ir_diag_error(d, IR_ENOMEM, "tensor '%s': out of memory",
						     ir_s(r->t->name));
			r->blk_cap = len + 2 * IR_DIRECT_ALIGN;
		}
		rc = ir_extfile_pread_direct(r->fd, r->blk, r->base + (int64_t)off, len, &at);
		if (rc == 0) {
			memcpy(buf, at, len);
			return 0;
		}
		if (rc < 0)
			return ir_diag_error(d, IR_EIO, "external data file '%s': %s",
					     r->t->ext->location, ir_strerror(-rc));
		/* no direct reads here: on as usual */
		close(r->fd);
		r->direct = 0;
		if ((r->fd = ir_extfile_fd(r->t->ext, &r->direct)) < 0)
			return ir_diag_error(d, IR_EIO, "external data file '%s': %s",
					     r->t->ext->location, ir_strerror(errno));
	}
	while (got < len) {
		ssize_t n = pread(r->fd, buf + got, len - got,
				  (off_t)((uint64_t)r->base + off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ir_diag_error(d, IR_EIO, "external data file '%s': %s",
					     r->t->ext->location, n < 0 ? ir_strerror(errno) :
					     "it ends early");
		got += (size_t)n;
	}
	return 0;
}

void ir_tensor_reader_close(struct ir_tensor_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	free(r->blk);
	r->blk = NULL;
	r->blk_cap = 0;
}

void ir_tensor_release_data(struct ir_tensor *t)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a, b;

	if (t->storage == IR_STORE_DERIVED) {
		free(t->cache);
		t->cache = NULL;
		ir_tensor_release_data(t->src);
	} else if (t->storage == IR_STORE_EXTERNAL && t->win) {
		munmap((void *)t->win, t->win_len);
		t->win = NULL;
		t->win_len = 0;
	} else if (t->storage == IR_STORE_RAW && t->raw_owner && page) {
		/* whole pages inside the payload only: neighbours keep theirs */
		a = ((uintptr_t)t->raw + page - 1) / page * page;
		b = ((uintptr_t)t->raw + t->raw_len) / page * page;
		if (b > a)
			madvise((void *)a, b - a, MADV_DONTNEED);
	}
}

int ir_tensor_is_external(const struct ir_tensor *t)
{
	return t->storage == IR_STORE_EXTERNAL ||
	       (t->storage == IR_STORE_DERIVED && ir_tensor_is_external(t->src));
}

/* Weights in external data, or more than protobuf's 2 GiB (less a margin
 * for the graph): 1 stops the walk. */
static int needs_external(struct ir_tensor *t, void *ctx)
{
	int64_t *bytes = ctx, n = ir_tensor_nbytes(t);

	*bytes += n > 0 ? n : 0;
	return ir_tensor_is_external(t) || *bytes > ((int64_t)1 << 31) - (64 << 20) ? 1 : 0;
}

int ir_model_needs_external(struct ir_model *m)
{
	int64_t bytes = 0;

	/* an input with external data keeps it, also where every weight was
	 * replaced (int8 weights computed in memory, say) */
	return m->n_extfiles > 0 || ir_model_for_each_tensor(m, needs_external, &bytes) == 1;
}
