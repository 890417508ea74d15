/* tensor_io.h: tensor files of the interpreter and the validator: ONNX
 * TensorProto (.pb, the backend test format input_N.pb / output_N.pb,
 * also SequenceProto and OptionalProto for sequence and optional values)
 * and NumPy .npy (little and big endian, C and Fortran order, every
 * numeric dtype, bool and fixed-width strings).
 *
 * Ownership: values read are new references for the caller (owned data,
 * charged to mem when given).  Writers only read the value.  Errors do not
 * name the file: callers prefix it ("opmig: FILE: message").
 */
#ifndef OPMIG_TENSOR_IO_H
#define OPMIG_TENSOR_IO_H

#include "runtime/runtime.h"

/* .npy when the name ends in ".npy", else a TensorProto. */
int rt_tensor_read_file(struct rt_mem *mem, const char *path,
			struct rt_value **out, struct ir_diag *d);

/* A backend-test value file whose kind follows the declared type (a
 * tensor, a sequence of tensors, an optional); NULL type: a tensor. */
int rt_value_read_file(struct rt_mem *mem, const char *path,
		       const struct ir_type *type, struct rt_value **out,
		       struct ir_diag *d);

/* Write a value atomically: a tensor as a TensorProto named `name`, a
 * sequence or optional as SequenceProto / OptionalProto. */
int rt_value_write_pb(const struct rt_value *v, const char *name,
		      const char *path, struct ir_diag *d);

/* NumPy .npy. */
int rt_npy_read(struct rt_mem *mem, const char *path, struct rt_value **out,
		struct ir_diag *d);
int rt_npy_parse(struct rt_mem *mem, const uint8_t *buf, size_t len,
		 struct rt_value **out, struct ir_diag *d);
int rt_npy_write(const struct rt_value *v, const char *path,
		 struct ir_diag *d);

#endif
