/* dtype.c: the ONNX element-type table (names, bit widths, the typed
 * TensorProto field each type is stored in), size arithmetic, and the
 * attribute type names. */
#include <stdio.h>

#include "ir/ir.h"

static const struct ir_dtype_info dtypes[IR_DTYPE_COUNT] = {
	[IR_DTYPE_FLOAT] = { "float", 32, IR_FIELD_FLOAT, 1 },
	[IR_DTYPE_UINT8] = { "uint8", 8, IR_FIELD_INT32, 1 },
	[IR_DTYPE_INT8] = { "int8", 8, IR_FIELD_INT32, 1 },
	[IR_DTYPE_UINT16] = { "uint16", 16, IR_FIELD_INT32, 1 },
	[IR_DTYPE_INT16] = { "int16", 16, IR_FIELD_INT32, 1 },
	[IR_DTYPE_INT32] = { "int32", 32, IR_FIELD_INT32, 1 },
	[IR_DTYPE_INT64] = { "int64", 64, IR_FIELD_INT64, 1 },
	[IR_DTYPE_STRING] = { "string", 0, IR_FIELD_STRING, 1 },
	[IR_DTYPE_BOOL] = { "bool", 8, IR_FIELD_INT32, 1 },
	[IR_DTYPE_FLOAT16] = { "float16", 16, IR_FIELD_INT32, 1 },
	[IR_DTYPE_DOUBLE] = { "double", 64, IR_FIELD_DOUBLE, 1 },
	[IR_DTYPE_UINT32] = { "uint32", 32, IR_FIELD_UINT64, 1 },
	[IR_DTYPE_UINT64] = { "uint64", 64, IR_FIELD_UINT64, 1 },
	[IR_DTYPE_COMPLEX64] = { "complex64", 64, IR_FIELD_FLOAT, 2 },
	[IR_DTYPE_COMPLEX128] = { "complex128", 128, IR_FIELD_DOUBLE, 2 },
	[IR_DTYPE_BFLOAT16] = { "bfloat16", 16, IR_FIELD_INT32, 1 },
	[IR_DTYPE_FLOAT8E4M3FN] = { "float8e4m3fn", 8, IR_FIELD_INT32, 1 },
	[IR_DTYPE_FLOAT8E4M3FNUZ] = { "float8e4m3fnuz", 8, IR_FIELD_INT32, 1 },
	[IR_DTYPE_FLOAT8E5M2] = { "float8e5m2", 8, IR_FIELD_INT32, 1 },
	[IR_DTYPE_FLOAT8E5M2FNUZ] = { "float8e5m2fnuz", 8, IR_FIELD_INT32, 1 },
	[IR_DTYPE_UINT4] = { "uint4", 4, IR_FIELD_INT32, 1 },
	[IR_DTYPE_INT4] = { "int4", 4, IR_FIELD_INT32, 1 },
	[IR_DTYPE_FLOAT4E2M1] = { "float4e2m1", 4, IR_FIELD_INT32, 1 },
};

const struct ir_dtype_info *ir_dtype_get(int dtype)
{
	if (dtype <= 0 || dtype >= IR_DTYPE_COUNT)
		return NULL;
	return &dtypes[dtype];
}

const char *ir_dtype_name(int dtype)
{
	const struct ir_dtype_info *i = ir_dtype_get(dtype);

	if (dtype == IR_DTYPE_UNDEFINED)
		return "undefined";
	return i ? i->name : "unknown";
}

int64_t ir_dtype_raw_size(int dtype, int64_t n)
{
	const struct ir_dtype_info *i = ir_dtype_get(dtype);

	if (!i || i->bits == 0 || n < 0)
		return -1;
	if (i->bits == 4)
		return n / 2 + (n & 1);
	if (n > INT64_MAX / (i->bits / 8))
		return -1;
	return n * (int64_t)(i->bits / 8);
}

static const char *const attr_types[] = {
	"undefined", "float", "int", "string", "tensor", "graph", "floats",
	"ints", "strings", "tensors", "graphs", "sparse_tensor",
	"sparse_tensors", "type_proto", "type_protos",
};

const char *ir_attr_type_name(int type)
{
	if (type < 0 || type >= (int)(sizeof(attr_types) / sizeof(*attr_types)))
		return "unknown";
	return attr_types[type];
}
