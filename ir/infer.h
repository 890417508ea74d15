/* infer.h: static type and shape inference over the IR, with constant
 * propagation of small integer tensors (shape arithmetic): a result type
 * per value, kept in a side table keyed by struct ir_value *.
 *
 * Ownership: struct ir_infer owns its table, the constant arrays and
 * sequence elements of every struct ir_vtype in it (cval, fval, elems) and
 * its list of nodes not inferred, and the names of symbolic sums
 * ("(past + seq)", ir_vdim.param).  Other symbolic dim names and node
 * pointers borrow from the model: release
 * the result (ir_infer_release) before freeing the model.  Tensors bound by
 * ir_infer_model_inputs are only read during that call; the table keeps
 * their pointers (never dereferenced after it) until released.  ir_infer_get
 * returns a pointer into the table, valid until the next inference call.
 *
 * Rules: dims are values, symbolic names or unknown; a symbolic name may
 * be a sum of symbols "(past + seq)" that inference made, equal to another
 * dim exactly when the names are equal (ir/infer_sym.c); a node whose op has
 * no rule (and is no model-local function) gets unknown outputs, is listed
 * in not_inferred, and its declared value_info still fills them.  Declared
 * types never override an inferred static dim: conflicts are warnings.
 * Adding an op: write `int infer_<rule>(struct infer_ctx *)` in the family
 * file (infer_elem/nn/shape/ctrl/misc/seq/special/values/more/ml.c),
 * declare it in infer_int.h, add one line to the sorted table in
 * infer_table.c, and a case to tests/unit/suite_infer.c (a unit test checks
 * that every registry op has a rule).
 */
#ifndef OPMIG_INFER_H
#define OPMIG_INFER_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "ir/registry.h"

#define IR_INFER_MAX_RANK 16     /* higher ranks read as unknown rank */
#define IR_INFER_MAX_CONST 4096  /* constants of more elements are dropped */

enum ir_vdim_kind { IR_VDIM_UNKNOWN, IR_VDIM_VALUE, IR_VDIM_PARAM };

struct ir_vdim {
	enum ir_vdim_kind kind;
	int64_t value;         /* IR_VDIM_VALUE */
	const char *param;     /* IR_VDIM_PARAM, borrowed from the model */
};

/* Inferred type of one value.  A constant, when known, is an integer
 * tensor of n_const elements in row-major order; each element is a vdim so
 * that symbolic sizes flow through Shape -> Gather -> Concat chains. */
struct ir_vtype {
	int dtype;             /* IR_DTYPE_UNDEFINED when unknown */
	int rank;              /* -1 unknown */
	struct ir_vdim dims[IR_INFER_MAX_RANK];
	int has_const;
	size_t n_const;
	struct ir_vdim *cval;  /* owned */
	/* A float or double tensor's values, when known (small initializers,
	 * Constants, bound inputs, folded arithmetic). */
	int has_fconst;
	size_t n_fconst;
	double *fval;          /* owned */
	/* A sequence of tensors: dtype, rank and dims describe every element
	 * (dims where all agree); with has_elems, its elements one by one
	 * (owned, no constants, no nested sequences). */
	int is_seq;
	/* A sequence of maps (ZipMap): the key dtype (string, int64), the
	 * values being scalars of dtype; rank and dims do not apply, there
	 * are no elems.  IR_DTYPE_UNDEFINED: elements are tensors. */
	int map_key;
	int has_elems;
	size_t n_elems;
	struct ir_vtype *elems;
};

struct ir_infer_slot {
	const struct ir_value *v;
	struct ir_vtype t;
};

#define IR_INFER_NO_MERGE 1u  /* ignore declared types except graph inputs */

struct infer_syms;

struct ir_infer {
	unsigned flags;                /* IR_INFER_*, set before inferring */
	size_t n_slots, cap_slots;
	struct ir_infer_slot *slots;   /* open addressing, NULL v = empty */
	size_t n_nodes;                /* nodes visited (all graphs) */
	size_t n_inferred;             /* nodes whose op has an inference */
	size_t n_not_inferred, cap_not_inferred;
	const struct ir_node **not_inferred;
	/* The symbolic sums that dims name (ir/infer_sym.c), owned: a dim
	 * param "(a + b)" points into it. */
	struct infer_syms *syms;
	/* Graph inputs bound to tensors by ir_infer_model_inputs (the array
	 * is owned, the tensors borrowed): rules needing element values
	 * (strings, floats, data-dependent shapes) read them. */
	size_t n_bound;
	struct ir_infer_bound {
		const struct ir_value *v;
		struct ir_tensor *t;
	} *bound;
};

/* ir_infer_release keeps flags. */
void ir_infer_init(struct ir_infer *r);
void ir_infer_release(struct ir_infer *r);

/* Infer the main graph (and subgraphs, model functions it calls).  Errors
 * name node and op; conflicts with declared value_info are warnings naming
 * the value.  Returns 0 or a negative status. */
int ir_infer_model(struct ir_model *m, struct ir_infer *out,
		   struct ir_diag *d);

/* Infer the main graph with its inputs bound to concrete tensors (borrowed,
 * only read): inputs[k] binds the k-th graph input not backed by an
 * initializer, as the ONNX backend tests number input_K.pb.  Each binding
 * gives dtype and shape; integer tensors of at most IR_INFER_MAX_CONST
 * elements also give their values as a constant, so shape arithmetic fed by
 * graph inputs folds.  A NULL entry, or inputs beyond n, keep the declared
 * type.  More tensors than such inputs is an error. */
int ir_infer_model_inputs(struct ir_model *m, struct ir_tensor **inputs,
			  size_t n, struct ir_infer *out, struct ir_diag *d);

struct ir_data;
/* The same with test values (see struct ir_data below, borrowed): a
 * tensor binds as above, a sequence of tensors binds its elements one by
 * one, an optional its content; an empty optional, maps and a tensor
 * member NULL keep the declared type. */
int ir_infer_model_data(struct ir_model *m, const struct ir_data *inputs,
			size_t n, struct ir_infer *out, struct ir_diag *d);

/* Do n's input and output dtypes, as inf has them, fit the type
 * constraints of schema s (which need not be the one n resolves to: the
 * opset converter asks about the version a node is going to)?  Values of
 * unknown type fit; slots s does not have are not looked at.  1 yes, 0 no
 * with the strict check's message for the first misfit in why
 * (ir/verify_schema.c). */
int ir_node_types_fit(struct ir_model *m, const struct ir_node *n,
		      const struct ir_op_schema *s, const struct ir_infer *inf,
		      char *why, size_t size);

/* Result of a value; NULL when nothing was recorded. */
const struct ir_vtype *ir_infer_get(const struct ir_infer *r,
				    const struct ir_value *v);
/* "float[N,3,?,32]" style text (rank unknown: "float[*]"). */
void ir_vtype_format(const struct ir_vtype *t, char *buf, size_t size);

/* A value of the ONNX backend test data format (test_data_set_N/KIND_K.pb):
 * a TensorProto, or one of onnx-data.proto's SequenceProto, OptionalProto
 * and MapProto, read to compare inference results with.  A sequence holds
 * its n elements in items; an optional 0 (empty) or 1 item; a map its
 * values sequence as its one item (keys are not kept); a sparse tensor only
 * its kind.  elem_type is the message's elem_type (a map: its key_type). */
enum ir_data_kind {
	IR_DATA_TENSOR, IR_DATA_SEQUENCE, IR_DATA_OPTIONAL, IR_DATA_MAP,
	IR_DATA_SPARSE
};

struct ir_data {
	enum ir_data_kind kind;
	int elem_type;
	struct ir_tensor *tensor;  /* IR_DATA_TENSOR, owned */
	size_t n;
	struct ir_data *items;     /* owned */
};

/* Read `path` as a serialized message of `kind` (ir/tensor_pb.c).  On
 * error *out is left empty. */
int ir_data_read(const char *path, enum ir_data_kind kind, struct ir_data *out,
		 struct ir_diag *d);
/* Serialize a sequence or optional (of tensors or sequences) as
 * SequenceProto / OptionalProto into a malloc'd buffer. */
int ir_data_serialize(const struct ir_data *v, const char *name, uint8_t **buf,
		      size_t *len, struct ir_diag *d);
/* Free what v owns (v itself is not freed) and leave it empty. */
void ir_data_release(struct ir_data *v);

/* Resize's output lengths, which shape inference and the interpreter's
 * kernel share.  ir_resize_len_scaled: floor(n * extent * scale), extent
 * being roi_end - roi_start under tf_crop_and_resize and 1 otherwise,
 * computed so that the product of an int64 and float32 operands is exact;
 * -1 when it is negative, NaN or beyond int64.  ir_resize_policy_axis: for
 * keep_aspect_ratio_policy not_larger (larger 0) or not_smaller (1), the
 * index k of the axis whose sizes[k] / in[k] is the smallest (largest),
 * the ratios compared exactly; axes of length 0 take no part; -1 when
 * none is left or a size is negative.  ir_resize_len_policy: the length of
 * an axis of length n under that policy, round_int(n * size_k / in_k)
 * (halves up) computed exactly; -1 when beyond int64. */
int64_t ir_resize_len_scaled(int64_t n, double extent, double scale);
int ir_resize_policy_axis(const int64_t *sizes, const int64_t *in, size_t n,
			  int larger);
int64_t ir_resize_len_policy(int64_t n, int64_t size_k, int64_t in_k);

#endif
