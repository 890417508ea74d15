/* tensor_pb.c: reading one serialized TensorProto file (the ONNX backend
 * test format, test_data_set_N/input_K.pb): read, pre-scan, unpack under the
 * counting allocator, convert to an owned struct ir_tensor and check dtype,
 * dims and payload size as ir_model_verify does for initializers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		return diag_error(d, "tensor '%s': external data is not supported in a tensor file",
				  ir_s(t->name));
	}
	return 0;
}

int ir_tensor_read(const char *path, struct ir_tensor **out, struct ir_diag *d)
{
	struct ir_pbuf_alloc alloc;
	Onnx__TensorProto *pb = NULL;
	struct ir_tensor *t = NULL;
	uint8_t *buf = NULL;
	size_t len = 0, limit;
	int rc;

	*out = NULL;
	if ((rc = read_file(path, &buf, &len, d)) < 0)
		return rc;
	if ((rc = ir_pbuf_prescan(buf, len, &onnx__tensor_proto__descriptor,
				  TENSOR_DEPTH, d)) < 0)
		goto cleanup;
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
	free(buf);
	if (rc < 0) {
		ir_tensor_free(t);
		return rc;
	}
	*out = t;
	return 0;
}
