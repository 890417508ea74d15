/* tensor_pb.c: reading one serialized TensorProto file (the ONNX backend
 * test format, test_data_set_N/input_K.pb): read, pre-scan, unpack under the
 * counting allocator, convert to an owned struct ir_tensor and check dtype,
 * dims and payload size as ir_model_verify does for initializers.  Also
 * the SequenceProto / OptionalProto / MapProto files of the same test
 * format (ir_data_read, declared in infer.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer.h"
#include "ir/ir_int.h"

#define TENSOR_MAX_FILE ((size_t)1 << 31)
#define TENSOR_DEPTH 16

static int read_file(const char *path, uint8_t **buf, size_t *len,
		     struct ir_diag *d)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *p = NULL;
	size_t cap = 0, n = 0;
	int rc = 0;

	*buf = NULL;
	*len = 0;
	if (!fp)
		return diag_error(d, "cannot open: %s", ir_strerror(errno));
	for (;;) {
		size_t got;

		if (n == cap) {
			uint8_t *q;

			if (cap >= TENSOR_MAX_FILE) {
				rc = diag_error(d, "tensor file is larger than %zu bytes",
						TENSOR_MAX_FILE);
				goto cleanup;
			}
			cap = cap ? cap * 2 : 65536;
			if (!(q = realloc(p, cap))) {
				rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
				goto cleanup;
			}
			p = q;
		}
		got = fread(p + n, 1, cap - n, fp);
		n += got;
		if (got == 0) {
			if (ferror(fp))
				rc = ir_diag_error(d, IR_EIO, "cannot read: %s",
						   ir_strerror(errno));
			break;
		}
	}
cleanup:
	fclose(fp);
	if (rc < 0) {
		free(p);
		return rc;
	}
	*buf = p;
	*len = n;
	return 0;
}

/* The checks ir_model_verify applies to a model's tensors. */
static int check(const struct ir_tensor *t, struct ir_diag *d)
{
	const struct ir_dtype_info *di;
	int64_t n, want;

	for (size_t i = 0; i < t->n_dims; i++)
		if (t->dims[i] < 0)
			return diag_error(d, "tensor '%s' has negative dim %lld",
					  ir_s(t->name), (long long)t->dims[i]);
	if (!IR_HAS(t, IR_TENSOR_HAS_DTYPE) || !(di = ir_dtype_get(t->dtype)) ||
	    t->dtype == IR_DTYPE_UNDEFINED)
		return diag_error(d, "tensor '%s' has unknown data type %d",
				  ir_s(t->name), t->dtype);
	if ((n = ir_tensor_numel(t)) < 0 ||
	    (t->dtype != IR_DTYPE_STRING && ir_dtype_raw_size(t->dtype, n) < 0))
		return diag_error(d, "tensor '%s': dims overflow the element count",
				  ir_s(t->name));
	if (IR_HAS(t, IR_TENSOR_HAS_RAW) && t->field != IR_FIELD_NONE)
		return diag_error(d, "tensor '%s' has both raw_data and typed data",
				  ir_s(t->name));
	switch (t->storage) {
	case IR_STORE_RAW:
		if (t->dtype == IR_DTYPE_STRING)
			return diag_error(d, "tensor '%s': string tensors cannot use raw_data",
					  ir_s(t->name));
		want = ir_dtype_raw_size(t->dtype, n);
		if ((int64_t)t->raw_len != want)
			return diag_error(d, "tensor '%s': raw_data has %zu bytes, dims x element size is %lld",
					  ir_s(t->name), t->raw_len, (long long)want);
		break;
	case IR_STORE_TYPED:
		if (t->field != di->field)
			return diag_error(d, "tensor '%s': %s data stored in the wrong typed field",
					  ir_s(t->name), di->name);
		want = n * (int64_t)di->per_field;
		if (di->bits == 4 ? (t->n_typed != (size_t)n &&
				     t->n_typed != (size_t)(n / 2 + (n & 1))) :
		    (int64_t)t->n_typed != want)
			return diag_error(d, "tensor '%s': %zu stored values, dims need %lld",
					  ir_s(t->name), t->n_typed, (long long)want);
		break;
	case IR_STORE_NONE:
		if (n != 0)
			return diag_error(d, "tensor '%s' has %lld elements but no data",
					  ir_s(t->name), (long long)n);
		break;
	case IR_STORE_EXTERNAL:
	case IR_STORE_DERIVED:
		return diag_error(d, "tensor '%s': external data is not supported in a tensor file",
				  ir_s(t->name));
	}
	return 0;
}

/* One serialized TensorProto in buf: pre-scan, unpack, convert, check. */
static int tensor_from_buf(const uint8_t *buf, size_t len,
			   struct ir_tensor **out, struct ir_diag *d)
{
	struct ir_pbuf_alloc alloc;
	Onnx__TensorProto *pb = NULL;
	struct ir_tensor *t = NULL;
	size_t limit;
	int rc;

	*out = NULL;
	if ((rc = ir_pbuf_prescan(buf, len, &onnx__tensor_proto__descriptor,
				  TENSOR_DEPTH, NULL, d)) < 0)
		return rc;
	limit = 4 * len + (16u << 20);
	ir_pbuf_alloc_init(&alloc, limit);
	if (!(pb = onnx__tensor_proto__unpack(&alloc.base, len, buf))) {
		if (alloc.failed == 2)
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		else if (alloc.failed == 1)
			rc = diag_error(d, "parsing needs more than %zu bytes of memory",
					limit);
		else
			rc = diag_error(d, "corrupt protobuf: not a valid ONNX TensorProto");
		goto cleanup;
	}
	if (!(t = ir_tensor_from_pb(pb, d))) {
		rc = d->status ? d->status : IR_ENOMEM;
		goto cleanup;
	}
	if ((rc = check(t, d)) < 0)
		goto cleanup;
cleanup:
	if (pb)
		onnx__tensor_proto__free_unpacked(pb, &alloc.base);
	if (rc < 0) {
		ir_tensor_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int ir_tensor_read(const char *path, struct ir_tensor **out, struct ir_diag *d)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if ((rc = read_file(path, &buf, &len, d)) < 0)
		return rc;
	rc = tensor_from_buf(buf, len, out, d);
	free(buf);
	return rc;
}

/* ---- SequenceProto / OptionalProto / MapProto (onnx-data.proto) -------
 * onnx-data.proto is not compiled into the build, so these few messages
 * are walked with a minimal wire-format reader; their tensors go through
 * the TensorProto path above. */

/* Field numbers shared by SequenceProto and OptionalProto (singular in
 * the optional, repeated in the sequence). */
enum { DF_ELEM_TYPE = 2, DF_TENSOR = 3, DF_SPARSE = 4, DF_SEQUENCE = 5,
       DF_MAP = 6, DF_OPTIONAL = 7 };
/* MapProto */
enum { MF_KEY_TYPE = 2, MF_VALUES = 5 };

static int wire_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	size_t pos = 0;
	int rc = ir_pbuf_varint(*p, (size_t)(end - *p), &pos, v);

	*p += pos;
	return rc;
}

/* Next field of [*p, end): number, wire type, varint value or the bytes
 * of a length-delimited field.  0 ok, -1 malformed. */
static int wire_next(const uint8_t **p, const uint8_t *end, uint32_t *field,
		     int *wt, uint64_t *v, const uint8_t **data, size_t *len)
{
	uint64_t key;

	if (wire_varint(p, end, &key) < 0 || (key >> 3) == 0 ||
	    (key >> 3) > 0x1fffffff)
		return -1;
	*field = (uint32_t)(key >> 3);
	*wt = (int)(key & 7);
	*v = 0;
	*data = NULL;
	*len = 0;
	switch (*wt) {
	case 0:
		return wire_varint(p, end, v);
	case 1:
	case 5: {
		size_t k = *wt == 1 ? 8 : 4;

		if ((size_t)(end - *p) < k)
			return -1;
		*p += k;
		return 0;
	}
	case 2:
		if (wire_varint(p, end, v) < 0 || *v > (uint64_t)(end - *p))
			return -1;
		*data = *p;
		*len = (size_t)*v;
		*p += *len;
		return 0;
	default:
		return -1;
	}
}

static int data_parse(const uint8_t *buf, size_t len, enum ir_data_kind kind,
		      int depth, struct ir_data *out, struct ir_diag *d);

static int data_push(struct ir_data *out, struct ir_data **slot,
		     struct ir_diag *d)
{
	struct ir_data *q;

	if (!(q = realloc(out->items, (out->n + 1) * sizeof(*q))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	out->items = q;
	*slot = &q[out->n];
	memset(*slot, 0, sizeof(**slot));
	out->n++;
	return 0;
}

static int data_parse(const uint8_t *buf, size_t len, enum ir_data_kind kind,
		      int depth, struct ir_data *out, struct ir_diag *d)
{
	const uint8_t *p = buf, *end = buf + len;
	static const char *const names[] = {
		"TensorProto", "SequenceProto", "OptionalProto", "MapProto",
		"SparseTensorProto"
	};

	memset(out, 0, sizeof(*out));
	out->kind = kind;
	if (depth > TENSOR_DEPTH)
		return diag_error(d, "values nested deeper than %d levels",
				  TENSOR_DEPTH);
	if (kind == IR_DATA_TENSOR)
		return tensor_from_buf(buf, len, &out->tensor, d);
	if (kind == IR_DATA_SPARSE)
		return 0;
	while (p < end) {
		enum ir_data_kind sub = IR_DATA_TENSOR;
		const uint8_t *data;
		struct ir_data *slot = NULL;
		uint32_t f;
		uint64_t v;
		size_t dl;
		int wt, rc;

		if (wire_next(&p, end, &f, &wt, &v, &data, &dl) < 0)
			return diag_error(d, "corrupt protobuf: not a valid ONNX %s",
					  names[kind]);
		if (kind == IR_DATA_MAP) {
			if (f == MF_KEY_TYPE && wt == 0) {
				out->elem_type = (int)(int32_t)v;
				continue;
			}
			if (f != MF_VALUES || wt != 2)
				continue;
			sub = IR_DATA_SEQUENCE;
		} else {
			if (f == DF_ELEM_TYPE && wt == 0) {
				out->elem_type = (int)(int32_t)v;
				continue;
			}
			if (wt != 2)
				continue;
			switch (f) {
			case DF_TENSOR: sub = IR_DATA_TENSOR; break;
			case DF_SPARSE: sub = IR_DATA_SPARSE; break;
			case DF_SEQUENCE: sub = IR_DATA_SEQUENCE; break;
			case DF_MAP: sub = IR_DATA_MAP; break;
			case DF_OPTIONAL: sub = IR_DATA_OPTIONAL; break;
			default: continue;  /* name, unknown fields */
			}
		}
		/* A singular field given twice: the last one wins. */
		if (kind != IR_DATA_SEQUENCE && out->n) {
			ir_data_release(out->items);
			out->n = 0;
		}
		if ((rc = data_push(out, &slot, d)) < 0 ||
		    (rc = data_parse(data, dl, sub, depth + 1, slot, d)) < 0)
			return rc;
	}
	return 0;
}

void ir_data_release(struct ir_data *v)
{
	if (!v)
		return;
	ir_tensor_free(v->tensor);
	for (size_t i = 0; i < v->n; i++)
		ir_data_release(&v->items[i]);
	free(v->items);
	memset(v, 0, sizeof(*v));
}

int ir_data_read(const char *path, enum ir_data_kind kind, struct ir_data *out,
		 struct ir_diag *d)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = read_file(path, &buf, &len, d)) < 0)
		return rc;
	if ((rc = data_parse(buf, len, kind, 0, out, d)) < 0)
		ir_data_release(out);
	free(buf);
	return rc;
}

/* ---- writing SequenceProto / OptionalProto ----------------------------- */

struct wbuf {
	uint8_t *p;
	size_t len, cap;
	int failed;
};

static void wb_put(struct wbuf *b, const void *data, size_t n)
{
	if (b->failed || n == 0)  /* data may be NULL then */
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *q;

		while (cap < b->len + n)
			cap *= 2;
		if (!(q = realloc(b->p, cap))) {
			b->failed = 1;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void wb_varint(struct wbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)((v & 127) | (v > 127 ? 128 : 0));
		v >>= 7;
	} while (v);
	wb_put(b, tmp, n);
}

static void wb_bytes(struct wbuf *b, uint32_t field, const void *data, size_t n)
{
	wb_varint(b, (uint64_t)field << 3 | 2);
	wb_varint(b, n);
	wb_put(b, data, n);
}

/* onnx-data.proto elem_type of SequenceProto/OptionalProto contents. */
enum { DE_TENSOR = 1, DE_SEQUENCE = 3 };

static int data_write(const struct ir_data *v, const char *name, int depth,
		      struct wbuf *b, struct ir_diag *d)
{
	int rc = 0;

	if (depth > 8)
		return diag_error(d, "values nested too deeply to write");
	if (name && *name)
		wb_bytes(b, 1, name, strlen(name));
	if (v->kind != IR_DATA_SEQUENCE && v->kind != IR_DATA_OPTIONAL)
		return diag_error(d, "only sequences and optionals are written here");
	if (v->n) {
		const struct ir_data *first = &v->items[0];

		wb_varint(b, (uint64_t)DF_ELEM_TYPE << 3);
		wb_varint(b, first->kind == IR_DATA_TENSOR ? DE_TENSOR : DE_SEQUENCE);
	}
	for (size_t i = 0; i < v->n && rc == 0; i++) {
		const struct ir_data *it = &v->items[i];
		uint8_t *buf = NULL;
		size_t len = 0;

		if (it->kind == IR_DATA_TENSOR && it->tensor) {
			if ((rc = ir_tensor_serialize(it->tensor, &buf, &len, d)) == 0)
				wb_bytes(b, DF_TENSOR, buf, len);
		} else if (it->kind == IR_DATA_SEQUENCE) {
			struct wbuf sub = { 0 };

			if ((rc = data_write(it, NULL, depth + 1, &sub, d)) == 0)
				wb_bytes(b, DF_SEQUENCE, sub.p, sub.len);
			if (sub.failed)
				b->failed = 1;
			free(sub.p);
		} else {
			rc = diag_error(d, "maps and sparse tensors cannot be written");
		}
		free(buf);
	}
	return rc;
}

int ir_data_serialize(const struct ir_data *v, const char *name, uint8_t **buf,
		      size_t *len, struct ir_diag *d)
{
	struct wbuf b = { 0 };
	int rc;

	*buf = NULL;
	*len = 0;
	if ((rc = data_write(v, name, 0, &b, d)) == 0 && b.failed)
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
	if (rc < 0) {
		free(b.p);
		return rc;
	}
	*buf = b.p ? b.p : calloc(1, 1);
	*len = b.len;
	return *buf ? 0 : ir_diag_error(d, IR_ENOMEM, "out of memory");
}
