/* infer_int.h: internals shared by the ir/infer*.c files only: the
 * per-node inference context, the op rule table and vtype helpers. */
#ifndef OPMIG_INFER_INT_H
#define OPMIG_INFER_INT_H

#include "ir/infer.h"


struct infer_ctx {
	struct ir_infer *r;
	struct ir_model *m;
	struct ir_function *fn;         /* body being inferred, or NULL */
	const struct ir_node *caller;   /* node calling fn (ref attributes) */
	int depth;                      /* nesting of subgraphs and functions */
	struct ir_node *n;
	const struct ir_op_schema *schema;
	int64_t opset;
	struct ir_diag *d;
	size_t n_in;
	const struct ir_vtype **in;     /* NULL: absent or unknown input */
	struct ir_vtype *out;           /* n->n_outputs, start unknown */
};

/* 0 inferred, 1 not inferred (outputs stay unknown), negative error. */
typedef int (*infer_fn)(struct infer_ctx *c);

struct infer_op {
	const char *domain;
	const char *op;
	infer_fn fn;
};

extern const struct infer_op infer_ops[];
extern const size_t infer_ops_len;
const struct infer_op *infer_op_find(const char *domain, const char *op);

/* vtype helpers (infer.c) */
void infer_vt_unknown(struct ir_vtype *t);
void infer_vt_release(struct ir_vtype *t);
int infer_vt_copy(struct ir_vtype *dst, const struct ir_vtype *src);
int infer_vt_set_const(struct ir_vtype *t, const struct ir_vdim *v, size_t n);
int infer_vt_set_fconst(struct ir_vtype *t, const double *v, size_t n);
int infer_vt_set_elems(struct ir_vtype *t, const struct ir_vtype *e, size_t n);
int infer_vt_const_int(const struct ir_vtype *t, size_t i, int64_t *out);
int infer_vt_const_ints(const struct ir_vtype *t, int64_t *out, size_t cap,
			size_t *n);
int64_t infer_vt_numel(const struct ir_vtype *t);   /* -1 unknown */
struct ir_vdim infer_dim_val(int64_t v);
struct ir_vdim infer_dim_unknown(void);
int infer_dim_eq(const struct ir_vdim *a, const struct ir_vdim *b);
int infer_tensor_vtype(struct ir_tensor *t, struct ir_vtype *out,
		       struct ir_diag *d);
/* A declared tensor type as a vtype (unknown for other kinds). */
void infer_vt_declared(const struct ir_type *ty, struct ir_vtype *t);

/* node helpers (infer.c) */
const struct ir_vtype *infer_in(struct infer_ctx *c, size_t i);
int infer_has_in(struct infer_ctx *c, size_t i);
const struct ir_attr *infer_attr(struct infer_ctx *c, const char *name);
/* 0 found (attr or default), 1 absent with no default, negative error
 * when required and absent. */
int infer_attr_int(struct infer_ctx *c, const char *name, int64_t *v);
int infer_attr_ints(struct infer_ctx *c, const char *name, int64_t *v,
		    size_t cap, size_t *n);
int infer_attr_float(struct infer_ctx *c, const char *name, float *v);
int infer_attr_str(struct infer_ctx *c, const char *name, char *buf,
		   size_t size);
int infer_err(struct infer_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int infer_same_dtype(struct infer_ctx *c, size_t a, size_t b);
int infer_norm_axis(struct infer_ctx *c, int64_t axis, int rank, int64_t *out);
void infer_fmt_dims(const struct ir_vtype *t, char *buf, size_t size);
/* Infer a subgraph whose inputs were seeded by the caller. */
int infer_graph(struct infer_ctx *c, struct ir_graph *g);
int infer_set(struct infer_ctx *c, const struct ir_value *v,
	      const struct ir_vtype *t);
/* numpy broadcasting of two shapes; error names node and op. */
int infer_broadcast2(struct infer_ctx *c, const struct ir_vdim *a, int ra,
		     const struct ir_vdim *b, int rb, struct ir_vdim *out,
		     int *ro);
/* The tensor behind input i (initializer, Constant, bound input) or NULL. */
struct ir_tensor *infer_value_tensor(struct infer_ctx *c, size_t input);
/* Float values of a value fed by an initializer or Constant node. */
int infer_value_floats(struct infer_ctx *c, size_t input, double *out,
		       size_t cap, size_t *n);
int infer_is_int_dtype(int dtype);

/* infer_sym.c: dims as sums of symbols (interned in r); unknown where
 * not provable.  0 or IR_ENOMEM. */
enum infer_sym_op { INFER_SYM_ADD, INFER_SYM_SUB, INFER_SYM_MUL };
int infer_sym_arith(struct ir_infer *r, enum infer_sym_op op, const struct ir_vdim *a,
		    const struct ir_vdim *b, struct ir_vdim *out);
/* Range(start, limit, 1)'s length where limit - start is provably >= 0 */
int infer_sym_range_len(struct ir_infer *r, const struct ir_vdim *start,
			const struct ir_vdim *limit, struct ir_vdim *out);
int infer_sym_is_sum(const char *name);
void infer_sym_release(struct ir_infer *r);

/* per family (infer_elem.c, infer_nn.c, infer_shape.c, infer_ctrl.c,
 * infer_misc.c) */
#define INFER_FN(name) int infer_##name(struct infer_ctx *c)
INFER_FN(unary); INFER_FN(cast); INFER_FN(binary); INFER_FN(compare);
INFER_FN(logical); INFER_FN(where); INFER_FN(variadic); INFER_FN(bool_unary);
INFER_FN(castlike); INFER_FN(dropout); INFER_FN(arg_reduce);
INFER_FN(conv); INFER_FN(pool); INFER_FN(global_pool); INFER_FN(batchnorm);
INFER_FN(gemm); INFER_FN(matmul); INFER_FN(flatten); INFER_FN(reduce);
INFER_FN(layernorm);
INFER_FN(reshape); INFER_FN(transpose); INFER_FN(squeeze);
INFER_FN(unsqueeze); INFER_FN(concat); INFER_FN(gather); INFER_FN(shape);
INFER_FN(size); INFER_FN(constant_of_shape); INFER_FN(constant);
INFER_FN(range); INFER_FN(slice); INFER_FN(split); INFER_FN(expand);
INFER_FN(tile); INFER_FN(pad); INFER_FN(resize);
INFER_FN(if); INFER_FN(loop); INFER_FN(scan);
INFER_FN(quantize); INFER_FN(dequantize); INFER_FN(topk); INFER_FN(nonzero);
INFER_FN(gather_elements); INFER_FN(depth_space); INFER_FN(onehot);
INFER_FN(conv_transpose); INFER_FN(loss); INFER_FN(like_dtype); INFER_FN(rnn);
INFER_FN(gather_nd); INFER_FN(sample);
INFER_FN(dyn_quantize); INFER_FN(det); INFER_FN(matmul_integer);
INFER_FN(window); INFER_FN(max_unpool); INFER_FN(einsum); INFER_FN(ms_attention);
INFER_FN(matmul_nbits);
INFER_FN(ms_gqa);
/* infer_special.c */
INFER_FN(dft); INFER_FN(stft); INFER_FN(mel_weight); INFER_FN(str_normalizer);
INFER_FN(tfidf); INFER_FN(optimizer); INFER_FN(gradient);
INFER_FN(optional_has); INFER_FN(optional_get); INFER_FN(optional);
/* infer_values.c: shapes that depend on known element values */
INFER_FN(compress); INFER_FN(unique); INFER_FN(nms);
/* infer_more.c */
INFER_FN(random); INFER_FN(multinomial); INFER_FN(rms_norm);
INFER_FN(string_split); INFER_FN(col2im); INFER_FN(affine_grid);
INFER_FN(center_crop_pad); INFER_FN(max_roi_pool); INFER_FN(image_decoder);
INFER_FN(bitcast); INFER_FN(sequence_map); INFER_FN(attention);
INFER_FN(linear_attention); INFER_FN(causal_conv_state);
INFER_FN(flex_attention);
/* infer_ml.c */
INFER_FN(ml_float_like); INFER_FN(ml_regressor); INFER_FN(ml_classifier);
INFER_FN(ml_label_encoder); INFER_FN(ml_onehot); INFER_FN(ml_array_feature);
INFER_FN(ml_feature_vectorizer); INFER_FN(ml_cast_map);
INFER_FN(ml_dict_vectorizer); INFER_FN(ml_zipmap);
/* infer_seq.c */
INFER_FN(seq_empty); INFER_FN(seq_construct); INFER_FN(seq_insert);
INFER_FN(seq_erase); INFER_FN(seq_at); INFER_FN(seq_length);
INFER_FN(concat_from_seq); INFER_FN(split_to_seq);


#endif
