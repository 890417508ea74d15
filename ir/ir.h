/* ir.h: opmig's in-memory ONNX model (model, graph, node, value, tensor,
 * attribute), its lifecycle, name lookup with outer scopes, verification and
 * topological ordering, loading and saving.  Nothing outside ir/ sees
 * protobuf-c types.
 *
 * Ownership: a struct ir_model owns everything reachable from it: graphs,
 * nodes, values, attributes, tensors, strings (malloc'd, freed by
 * ir_model_free).  Strings are NUL-terminated; a NULL string means "absent in
 * the protobuf" and reads as "" (use ir_s()).  Tensor payloads are owned
 * buffers or borrowed views into a mapped external-data file, kept alive by a
 * reference-counted struct ir_extfile.  Every pointer returned by a lookup
 * borrows from the model.  Functions that take a `struct ir_diag *` write the
 * first error there and return a negative status.
 */
#ifndef OPMIG_IR_H
#define OPMIG_IR_H

#include <stddef.h>
#include <stdint.h>

/* ---- diagnostics ----------------------------------------------------- */

enum ir_status {
	IR_OK = 0,
	IR_EINVAL = -1,   /* bad input: corrupt, unsafe or invalid model */
	IR_ENOMEM = -2,   /* allocation failed or memory limit reached */
	IR_EIO = -3,      /* read/write failure of the system */
	IR_EUSAGE = -4,   /* caller asked for something impossible */
	IR_EINTERNAL = -5, /* opmig's own fault (exit 4) */
};

struct ir_diag {
	int status;        /* first error's status, 0 when none */
	char msg[512];     /* first error, lower case, no trailing period */
	int n_warnings;
	char warning[512]; /* first warning */
};

void ir_diag_init(struct ir_diag *d);
/* Record an error (if none yet) and return its status. */
int ir_diag_error(struct ir_diag *d, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ir_diag_warn(struct ir_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* strerror(err) in lower case, as our messages are. */
const char *ir_strerror(int err);
#define diag_error(d, ...) ir_diag_error((d), IR_EINVAL, __VA_ARGS__)

static inline const char *ir_s(const char *s) { return s ? s : ""; }

/* ---- data types ------------------------------------------------------ */

enum ir_dtype {
	IR_DTYPE_UNDEFINED = 0,
	IR_DTYPE_FLOAT = 1,
	IR_DTYPE_UINT8 = 2,
	IR_DTYPE_INT8 = 3,
	IR_DTYPE_UINT16 = 4,
	IR_DTYPE_INT16 = 5,
	IR_DTYPE_INT32 = 6,
	IR_DTYPE_INT64 = 7,
	IR_DTYPE_STRING = 8,
	IR_DTYPE_BOOL = 9,
	IR_DTYPE_FLOAT16 = 10,
	IR_DTYPE_DOUBLE = 11,
	IR_DTYPE_UINT32 = 12,
	IR_DTYPE_UINT64 = 13,
	IR_DTYPE_COMPLEX64 = 14,
	IR_DTYPE_COMPLEX128 = 15,
	IR_DTYPE_BFLOAT16 = 16,
	IR_DTYPE_FLOAT8E4M3FN = 17,
	IR_DTYPE_FLOAT8E4M3FNUZ = 18,
	IR_DTYPE_FLOAT8E5M2 = 19,
	IR_DTYPE_FLOAT8E5M2FNUZ = 20,
	IR_DTYPE_UINT4 = 21,
	IR_DTYPE_INT4 = 22,
	IR_DTYPE_FLOAT4E2M1 = 23,
	IR_DTYPE_COUNT
};

/* Which typed TensorProto field holds a dtype's elements. */
enum ir_field {
	IR_FIELD_NONE, IR_FIELD_FLOAT, IR_FIELD_INT32, IR_FIELD_STRING,
	IR_FIELD_INT64, IR_FIELD_DOUBLE, IR_FIELD_UINT64
};

struct ir_dtype_info {
	const char *name;      /* "float16" */
	unsigned bits;         /* element size in bits (4, 8, ... 128; 0 string) */
	enum ir_field field;   /* typed field used when raw_data is absent */
	unsigned per_field;    /* typed-field entries per element (2 complex) */
};

/* NULL for an unknown dtype code. */
const struct ir_dtype_info *ir_dtype_get(int dtype);
const char *ir_dtype_name(int dtype); /* "dtype(99)" style never: "?" */
/* Bytes of n elements in raw_data form; -1 on overflow or string/unknown. */
int64_t ir_dtype_raw_size(int dtype, int64_t n);

/* ---- presence bits: which optional proto2 scalars were present ------- */
#define IR_HAS(obj, bit) (((obj)->present & (bit)) != 0)

/* ---- types of values ------------------------------------------------- */

enum ir_dim_kind { IR_DIM_UNKNOWN, IR_DIM_VALUE, IR_DIM_PARAM };

struct ir_dim {
	enum ir_dim_kind kind;
	int64_t value;       /* IR_DIM_VALUE */
	char *param;         /* IR_DIM_PARAM */
	char *denotation;
};

struct ir_shape {
	size_t n_dims;
	struct ir_dim *dims;
};

enum ir_type_kind {
	IR_TYPE_NONE = 0, IR_TYPE_TENSOR = 1, IR_TYPE_SEQUENCE = 4,
	IR_TYPE_MAP = 5, IR_TYPE_SPARSE_TENSOR = 8, IR_TYPE_OPTIONAL = 9
};

#define IR_TYPE_HAS_ELEM 1u   /* elem_type / key_type present */
#define IR_TYPE_HAS_SHAPE 2u  /* shape present (possibly rank 0) */

struct ir_type {
	enum ir_type_kind kind;
	unsigned present;
	int elem_type;            /* tensor, sparse: dtype; map: key dtype */
	struct ir_shape shape;    /* tensor, sparse */
	struct ir_type *inner;    /* sequence/optional elem, map value */
	char *denotation;
	struct ir_unknown *unknown;
};

/* ---- unknown protobuf fields, kept for a faithful round trip --------- */

struct ir_unknown {
	size_t n;
	struct ir_unknown_field {
		uint32_t tag;
		int wire_type;
		size_t len;
		uint8_t *data;
	} *fields;
};

struct ir_kv {
	char *key;
	char *value;
};

/* ---- tensors ----------------------------------------------------------- */

struct ir_extfile;   /* a mapped external data file, refcounted */

enum ir_storage {
	IR_STORE_NONE,     /* no data (empty tensor or absent) */
	IR_STORE_RAW,      /* raw_data */
	IR_STORE_TYPED,    /* float_data/int32_data/... */
	IR_STORE_EXTERNAL, /* data_location = EXTERNAL */
	IR_STORE_DERIVED,  /* computed on demand from another tensor's payload:
			    * cast element by element, or by pieces
			    * (ir/derived.c) */
};

/* Convert n elements of dtype `from` at in to dtype `to` at out (both
 * little-endian raw form, whole bytes per element). */
typedef int (*ir_tensor_cast_fn)(int from, const uint8_t *in, int to, uint8_t *out,
				 size_t n, struct ir_diag *d);

#define IR_TENSOR_HAS_DTYPE 1u
#define IR_TENSOR_HAS_LOCATION 2u
#define IR_TENSOR_HAS_SEGMENT 4u
#define IR_TENSOR_HAS_RAW 8u

struct ir_tensor {
	char *name;
	char *doc;
	unsigned present;
	int dtype;
	int data_location;     /* as stored: 0 default, 1 external */
	size_t n_dims;
	int64_t *dims;
	int64_t seg_begin, seg_end;
	enum ir_storage storage;
	/* IR_STORE_RAW: raw bytes, owned unless raw_owner is set: then they
	 * are a read-only view into the mapped model file. */
	uint8_t *raw;
	size_t raw_len;
	struct ir_extfile *raw_owner;
	/* IR_STORE_TYPED: one typed array, as stored. */
	enum ir_field field;
	size_t n_typed;
	void *typed;           /* float/int32_t/int64_t/double/uint64_t */
	char **strings;        /* IR_FIELD_STRING: n_typed byte strings */
	size_t *string_lens;
	/* IR_STORE_EXTERNAL: the key/value entries as stored, plus the view. */
	size_t n_external;
	struct ir_kv *external;
	struct ir_extfile *ext;
	int64_t ext_offset, ext_length;
	const uint8_t *win;     /* its bytes' mapping, made by ir_tensor_data() */
	size_t win_len;
	/* IR_STORE_DERIVED: cast(src's payload), or with ops computed from
	 * src by ops->fill, n_units units at a time (src owned, arg shared
	 * through ops->hold/drop); materialized into cache by
	 * ir_tensor_data(), streamed by ir_tensor_stream(). */
	struct ir_tensor *src;
	ir_tensor_cast_fn cast;
	const struct ir_derive_ops *ops;
	void *arg;
	int64_t n_units;
	/* decoded view cache for typed and derived storage (owned). */
	uint8_t *cache;
	struct ir_unknown unknown;
};

/* Number of elements; -1 if a dim is negative or the product overflows. */
int64_t ir_tensor_numel(const struct ir_tensor *t);
/* Little-endian raw bytes of a numeric tensor (maps external data on first
 * use, decodes typed fields into a cache).  Borrowed until the model dies
 * or ir_tensor_release_data(t). */
int ir_tensor_data(struct ir_tensor *t, const uint8_t **data, size_t *len,
		   struct ir_diag *d);
/* Payload size in bytes as it would be stored in raw_data (0 strings). */
int64_t ir_tensor_nbytes(const struct ir_tensor *t);

/* ---- weights without copies (ir/derived.c) ---------------------------- */

/* A tensor named name holding src (taken: freed on failure) cast to dtype
 * by cast, nothing computed yet.  Both dtypes whole bytes per element. */
struct ir_tensor *ir_tensor_new_derived(const char *name, struct ir_tensor *src,
					int dtype, ir_tensor_cast_fn cast);
/* A derivation by pieces: t's payload is n_units units of equal size
 * (nbytes / n_units), each computed from t->src by fill; outputs that are
 * not element-wise casts of their source (blockwise quantization). */
struct ir_derive_ops {
	/* units [u0, u1) of t's payload into out */
	int (*fill)(struct ir_tensor *t, int64_t u0, int64_t u1, uint8_t *out,
		    struct ir_diag *d);
	/* units per piece when streamed (NULL or <= 0: 4 MiB worth) */
	int64_t (*piece)(const struct ir_tensor *t);
	/* the whole payload was handed out, streamed or materialized (may be
	 * NULL) */
	void (*done)(struct ir_tensor *t);
	/* one more, one fewer tensor sharing arg */
	void (*hold)(void *arg);
	void (*drop)(void *arg);
	/* do two args compute the same payload from equal sources of equal
	 * dtype and shape (dedup-constants asks)?  NULL: any two do (the
	 * payload depends on the source's bytes and the dims only) */
	int (*same)(const void *a, const void *b);
};
/* A tensor named name of dtype and dims computed from src (taken) by ops
 * with arg (a reference taken: dropped on failure); nothing computed yet.
 * dtype whole bytes per element, or 4 bits with an even count of elements
 * per unit (packed two to a byte, the first in the low nibble); n_units
 * divides its element count. */
struct ir_tensor *ir_tensor_new_computed(const char *name, struct ir_tensor *src, int dtype,
					 const int64_t *dims, size_t rank, int64_t n_units,
					 const struct ir_derive_ops *ops, void *arg);
/* Reading parts of a payload (bounded pieces of a big weight): external
 * bytes not mapped are read from the file with pread, anything else is
 * copied from ir_tensor_data()'s view. */
struct ir_tensor_reader {
	struct ir_tensor *t;
	int fd;                  /* >= 0: reading the external file */
	int direct;              /* fd opened with O_DIRECT: reads through blk */
	uint8_t *blk;
	size_t blk_cap;
	int64_t base;            /* its offset in the file */
	const uint8_t *data;     /* else: the payload */
	size_t len;
};
int ir_tensor_reader_open(struct ir_tensor_reader *r, struct ir_tensor *t,
			  struct ir_diag *d);
/* Bytes [off, off + len) of the payload into buf (an external tensor of
 * 1 MiB up read past the page cache where the file system allows it: a
 * reader's pass reads each byte once). */
int ir_tensor_reader_read(struct ir_tensor_reader *r, uint64_t off, size_t len,
			  uint8_t *buf, struct ir_diag *d);
void ir_tensor_reader_close(struct ir_tensor_reader *r);
/* A copy of t under name (NULL: t's) sharing mapped payloads (external
 * files, views of the model file); owned bytes are copied. */
struct ir_tensor *ir_tensor_clone(const struct ir_tensor *t, const char *name);
/* Does ir_tensor_clone(t) share t's payload rather than copy it: external
 * data, a view of the model file, or a derived tensor of such a source? */
int ir_tensor_shares_payload(const struct ir_tensor *t);
/* Hand t's payload to sink in pieces (whole elements), in order: external
 * bytes not mapped yet are read from the file (past the page cache from
 * 1 MiB up, where the file system allows it: a pass reads them once, and
 * a weights file larger than memory is not pushed through the cache), a
 * derived tensor is converted piece by piece, never materialized; what
 * was mapped for it is released afterwards. */
typedef int (*ir_tensor_sink_fn)(const uint8_t *data, size_t len, void *ctx);
int ir_tensor_stream(struct ir_tensor *t, ir_tensor_sink_fn sink, void *ctx,
		     struct ir_diag *d);
/* t's payload is not needed for now: unmap its external bytes (or give
 * back the resident pages of its view of the model file), free a derived
 * tensor's computed payload.  The next ir_tensor_data() reads them again;
 * no pointer it returned before may be in use. */
void ir_tensor_release_data(struct ir_tensor *t);
/* Does t's payload live in an external file (itself or its source)? */
int ir_tensor_is_external(const struct ir_tensor *t);
struct ir_model;
/* Must m be saved with external data: it was loaded with external data
 * (whatever its weights are now), a weight still reads an external file,
 * or inline they would pass protobuf's 2 GiB? */
int ir_model_needs_external(struct ir_model *m);

/* Visit every tensor of a model: initializers, sparse parts, attribute
 * tensors, in all graphs and functions.  Stops at the first negative rc. */
typedef int (*ir_tensor_visit_fn)(struct ir_tensor *t, void *ctx);
struct ir_model;
int ir_model_for_each_tensor(struct ir_model *m, ir_tensor_visit_fn fn,
			     void *ctx);

struct ir_sparse {
	struct ir_tensor *values;
	struct ir_tensor *indices;
	size_t n_dims;
	int64_t *dims;
	struct ir_unknown unknown;
};

/* ---- attributes -------------------------------------------------------- */

enum ir_attr_type {
	IR_ATTR_UNDEFINED = 0, IR_ATTR_FLOAT = 1, IR_ATTR_INT = 2,
	IR_ATTR_STRING = 3, IR_ATTR_TENSOR = 4, IR_ATTR_GRAPH = 5,
	IR_ATTR_FLOATS = 6, IR_ATTR_INTS = 7, IR_ATTR_STRINGS = 8,
	IR_ATTR_TENSORS = 9, IR_ATTR_GRAPHS = 10, IR_ATTR_SPARSE_TENSOR = 11,
	IR_ATTR_SPARSE_TENSORS = 12, IR_ATTR_TYPE_PROTO = 13,
	IR_ATTR_TYPE_PROTOS = 14
};

#define IR_ATTR_HAS_TYPE 1u
#define IR_ATTR_HAS_F 2u
#define IR_ATTR_HAS_I 4u
#define IR_ATTR_HAS_S 8u

struct ir_graph;

struct ir_attr {
	char *name;
	char *ref_attr_name;
	char *doc;
	unsigned present;
	int type;              /* enum ir_attr_type, as stored */
	float f;
	int64_t i;
	uint8_t *s;            /* bytes, s_len long, NUL-terminated for ease */
	size_t s_len;
	struct ir_tensor *t;
	struct ir_graph *g;
	struct ir_sparse *sparse;
	struct ir_type *tp;
	size_t n_floats, n_ints, n_strings, n_tensors, n_graphs;
	size_t n_sparses, n_tps;
	float *floats;
	int64_t *ints;
	uint8_t **strings;
	size_t *string_lens;
	struct ir_tensor **tensors;
	struct ir_graph **graphs;
	struct ir_sparse **sparses;
	struct ir_type **tps;
	struct ir_unknown unknown;
};

const char *ir_attr_type_name(int type);

/* ---- values, nodes, graphs --------------------------------------------- */

struct ir_node;

/* A named value of one graph scope: graph input, initializer, node output,
 * or a value only declared in value_info.  Def-use: producer is the node
 * writing it (NULL for inputs/initializers); uses lists consuming nodes,
 * including nodes of nested subgraphs that capture it from outer scope.
 * type borrows the first declaration (graph input, output, value_info). */
struct ir_value {
	char *name;
	struct ir_graph *graph;        /* scope the value lives in */
	const struct ir_type *type;    /* declared type, NULL if none */
	struct ir_node *producer;
	struct ir_tensor *init;        /* initializer, if any */
	struct ir_sparse *sparse_init; /* sparse initializer, if any */
	int is_input;                  /* listed in graph inputs */
	size_t n_uses, cap_uses;
	struct ir_node **uses;
};

/* One ValueInfoProto of a graph's input, output or value_info list; owns
 * its declared type. */
struct ir_vinfo {
	struct ir_value *value;
	struct ir_type *type;          /* NULL when the proto had none */
	char *doc;
	struct ir_unknown unknown;
};

struct ir_node {
	char *name;
	char *op_type;
	char *domain;
	char *doc;
	struct ir_graph *graph;
	size_t n_inputs, n_outputs;
	struct ir_value **inputs;      /* NULL entry: optional input "" */
	struct ir_value **outputs;     /* NULL entry: optional output "" */
	size_t n_attrs;
	struct ir_attr **attrs;
	struct ir_unknown unknown;
	size_t index;                  /* position in graph->nodes */
};

struct ir_graph {
	char *name;
	char *doc;
	struct ir_graph *parent;       /* enclosing scope, NULL at top */
	struct ir_node *owner;         /* node whose attribute holds it */
	size_t n_nodes, cap_nodes;
	struct ir_node **nodes;
	/* Interface and declarations, in file order. */
	size_t n_inputs, n_outputs, n_value_info;
	struct ir_vinfo *inputs;
	struct ir_vinfo *outputs;
	struct ir_vinfo *value_info;
	size_t n_inits, n_sparse_inits;
	struct ir_tensor **inits;          /* file order */
	struct ir_sparse **sparse_inits;   /* file order */
	/* Values of this scope: hash map name -> value. */
	size_t n_values, cap_values;
	struct ir_value **values;          /* open-addressing table */
	struct ir_value **value_list;      /* insertion order, n_values long */
	struct ir_unknown quant;           /* quantization_annotation, opaque */
	struct ir_unknown unknown;
};

struct ir_opset {
	char *domain;          /* NULL or "" = ai.onnx */
	int64_t version;
	unsigned present;      /* 1: version present */
};

struct ir_function {
	char *name;
	char *domain;
	char *doc;
	size_t n_inputs, n_outputs, n_attr_names, n_opsets;
	char **inputs, **outputs, **attr_names;
	struct ir_opset *opsets;
	struct ir_graph *body;  /* nodes; inputs/outputs as values */
	struct ir_unknown unknown;
};

#define IR_MODEL_HAS_IR_VERSION 1u
#define IR_MODEL_HAS_MODEL_VERSION 2u

struct ir_model {
	unsigned present;
	int64_t ir_version;
	char *producer_name;
	char *producer_version;
	char *domain;
	int64_t model_version;
	char *doc;
	size_t n_opsets;
	struct ir_opset *opsets;
	size_t n_metadata;
	struct ir_kv *metadata;
	struct ir_graph *graph;
	size_t n_functions;
	struct ir_function **functions;
	struct ir_unknown training;    /* training_info, kept as opaque bytes */
	struct ir_unknown unknown;
	char *dir;                     /* folder external data is relative to */
	char *path;                    /* file it was loaded from */
	size_t n_extfiles;
	struct ir_extfile **extfiles;
	struct ir_extfile *self_map;   /* the model file, when tensors view it */
};

/* ---- lifecycle and editing -------------------------------------------- */

struct ir_model *ir_model_new(void);
void ir_model_free(struct ir_model *m);
struct ir_graph *ir_graph_new(struct ir_graph *parent);
void ir_graph_free(struct ir_graph *g);
void ir_tensor_free(struct ir_tensor *t);
void ir_sparse_free(struct ir_sparse *s);
void ir_type_free(struct ir_type *t);
void ir_attr_free(struct ir_attr *a);
void ir_node_free(struct ir_node *n);
void ir_unknown_release(struct ir_unknown *u);

/* Find or create the value `name` in this scope (not outer ones). */
struct ir_value *ir_graph_value(struct ir_graph *g, const char *name);
/* Find `name` in this scope; NULL if absent. */
struct ir_value *ir_graph_find(const struct ir_graph *g, const char *name);
/* Find `name` here or in an enclosing scope; NULL if absent. */
struct ir_value *ir_graph_lookup(const struct ir_graph *g, const char *name);
/* Is v one of g's outputs? */
int ir_graph_is_output(const struct ir_graph *g, const struct ir_value *v);
/* Append a node (takes ownership) and record def-use. */
int ir_graph_add_node(struct ir_graph *g, struct ir_node *n);
int ir_value_add_use(struct ir_value *v, struct ir_node *n);

/* ---- editing (ir/edit.c): keeps def-use lists consistent ------------- */

/* An empty node (domain NULL, "" or "ai.onnx": the default domain). */
struct ir_node *ir_node_create(const char *op_type, const char *domain,
			       const char *name);
/* Append an input (NULL: an absent optional one) / an output (sets its
 * producer). */
int ir_node_append_input(struct ir_node *n, struct ir_value *v);
int ir_node_append_output(struct ir_node *n, struct ir_value *v);
/* Replace input i, moving the use from the old value to v. */
int ir_node_set_input(struct ir_node *n, size_t i, struct ir_value *v);
void ir_value_remove_use(struct ir_value *v, const struct ir_node *n);
/* Insert n (taking ownership) at position pos of g's node list. */
int ir_graph_insert_node(struct ir_graph *g, struct ir_node *n, size_t pos);
/* Take n out of g: its inputs lose the use (also those of its subgraphs'
 * captures), its outputs their producer; n is not freed (the caller owns
 * it).  remove = detach + free. */
void ir_graph_detach_node(struct ir_graph *g, struct ir_node *n);
void ir_graph_remove_node(struct ir_graph *g, struct ir_node *n);
/* Every node reading `from` (in any nested scope) reads `to` instead, and
 * graph outputs of from's scope naming it name `to`. */
int ir_value_replace_uses(struct ir_value *from, struct ir_value *to);
/* A new value whose name, built from hint, is unused in g and its
 * enclosing scopes. */
struct ir_value *ir_graph_new_value(struct ir_graph *g, const char *hint);
/* A tensor with an owned raw payload of len bytes. */
struct ir_tensor *ir_tensor_new_raw(const char *name, int dtype,
				    const int64_t *dims, size_t n_dims,
				    const void *data, size_t len);
/* Add an initializer (taking ownership; renamed if its name is taken);
 * returns its value, NULL when out of memory (t is then freed). */
struct ir_value *ir_graph_add_initializer(struct ir_graph *g, struct ir_tensor *t);
void ir_graph_remove_initializer(struct ir_graph *g, struct ir_value *v);
/* Make t (taken; renamed to v's name) v's initializer in place of the one
 * it has, at the same position of g's list (the old one is freed). */
int ir_value_replace_initializer(struct ir_graph *g, struct ir_value *v,
				 struct ir_tensor *t);
/* Make t (taking ownership, renamed to v's name) the initializer of v, a
 * value of g that no node produces (detach its producer first). */
int ir_value_attach_initializer(struct ir_graph *g, struct ir_value *v,
				struct ir_tensor *t);
/* Forget the value_info declarations of v (its type changed). */
void ir_graph_drop_value_info(struct ir_graph *g, const struct ir_value *v);
/* Take v off the graph's inputs (its declaration goes with it); it stays a
 * value of the graph, to become an initializer, say. */
void ir_graph_remove_input(struct ir_graph *g, struct ir_value *v);
/* Attributes: set (replacing one of the same name), remove, find. */
int ir_node_set_int(struct ir_node *n, const char *name, int64_t v);
int ir_node_set_float(struct ir_node *n, const char *name, float v);
int ir_node_set_string(struct ir_node *n, const char *name, const char *v);
int ir_node_set_ints(struct ir_node *n, const char *name, const int64_t *v, size_t k);
int ir_node_set_floats(struct ir_node *n, const char *name, const float *v, size_t k);
int ir_node_set_tensor(struct ir_node *n, const char *name, struct ir_tensor *t);
int ir_node_remove_attr(struct ir_node *n, const char *name);
/* Set attribute `name` of n to a copy of src: float, int, string, their
 * lists, and numeric tensors; IR_EINVAL for other kinds (graphs, sparse
 * tensors, type protos, string tensors). */
int ir_node_copy_attr(struct ir_node *n, const char *name, const struct ir_attr *src);
/* Free a function (ir_function_parse's); NULL is a no-op. */
void ir_function_free(struct ir_function *f);
/* Remove model-local function i (freeing it). */
void ir_model_remove_function(struct ir_model *m, size_t i);
const struct ir_attr *ir_node_attr(const struct ir_node *n, const char *name);

/* Opset version imported for a domain ("" and "ai.onnx" are one); 0 if none. */
int64_t ir_model_opset(const struct ir_model *m, const char *domain);

/* ---- verification and order ------------------------------------------- */

/* Check the model; errors name node and op.  Sorts nodes topologically when
 * they are out of order (reported as a warning, not an error). */
int ir_model_verify(struct ir_model *m, struct ir_diag *d);
/* Topologically sort one graph's nodes (stable); error on a cycle. */
int ir_graph_toposort(struct ir_graph *g, struct ir_diag *d);
int ir_graph_is_sorted(const struct ir_graph *g);

/* The strict schema check (ir/verify_schema.c), onnx.checker's: every node
 * of every graph (main graph, subgraphs, model-local functions' bodies)
 * against the registry schema its domain's opset resolves to: deprecated
 * versions, input and output counts, "" in a slot that is neither
 * optional nor variadic, attributes the version does not declare (except
 * "__" names), repeated or of another type, required attributes missing,
 * and the type constraints of inputs and outputs against the dtypes in
 * inf (NULL: inferred here; values inference does not know, those after
 * a node it failed at included, are not checked).  Ops and domains the registry does not know, and calls of
 * model-local functions, are not checked.  Each fault goes to report (may
 * be NULL) as "node 'p' (AveragePool): attribute 'ceil_mode' is not in
 * AveragePool-7"; report returns 0 to go on, a negative status to stop
 * with it.  Returns the number of faults, or a negative status. */
struct ir_infer;
typedef int (*ir_fault_fn)(void *ctx, const struct ir_node *n, const char *msg);
int ir_model_check_schema(struct ir_model *m, const struct ir_infer *inf,
			  ir_fault_fn report, void *ctx, struct ir_diag *d);
/* The check of a model as loaded, for warnings: types are checked only
 * when inference accepts the model (one it rejects is bad input, with
 * inference's own error, to every command that infers it). */
int ir_model_check_loaded(struct ir_model *m, ir_fault_fn report, void *ctx,
			  struct ir_diag *d);
/* The same as one error: IR_EINVAL with the first fault (and how many
 * more) in d; 0 when there is none. */
int ir_model_verify_strict(struct ir_model *m, const struct ir_infer *inf,
			   struct ir_diag *d);

/* Visit every graph of the model (main, functions, nested subgraphs). */
typedef int (*ir_graph_visit_fn)(struct ir_graph *g, int depth, void *ctx);
int ir_model_walk(struct ir_model *m, ir_graph_visit_fn fn, void *ctx);
/* Visit g and every graph nested in its nodes' attributes. */
int ir_graph_walk(struct ir_graph *g, ir_graph_visit_fn fn, void *ctx);
/* The smallest IR version m's contents need (ir/irver.c): 3, or more for
 * bfloat16 (4), quantization annotations (5), sparse tensors (6),
 * training info (7), model-local functions, optional and sparse types,
 * type attributes (8), float8 (9), int4/uint4 (10), float4e2m1 (11); at
 * least m's own when it holds fields or dtypes opmig does not know. */
int64_t ir_model_ir_needed(struct ir_model *m);

/* ---- summary (what `opmig inspect` shows) --------------------------------- */

struct ir_op_count {
	const char *domain;    /* "ai.onnx" for the default domain */
	const char *op_type;
	size_t count, in_subgraphs;
};

struct ir_ext_count {
	const char *location;
	size_t tensors;
	int64_t bytes;
};

/* Borrows names from the model; release with ir_summary_release. */
struct ir_summary {
	size_t n_nodes, n_sub_nodes;
	size_t n_ops;
	struct ir_op_count *ops;       /* sorted by domain, op_type */
	size_t n_inits;
	int64_t n_params, param_bytes; /* initializers of every graph */
	size_t n_ext;
	struct ir_ext_count *ext;
	size_t n_dyn, n_unknown_dims;
	char **dyn;                    /* symbolic dims of inputs/outputs */
};

int ir_model_summarize(struct ir_model *m, struct ir_summary *s,
		       struct ir_diag *d);
void ir_summary_release(struct ir_summary *s);

/* ---- loading and saving (ir/load.c, ir/save.c) ------------------------ */

/* Limits of a model file, checked before it is unpacked. */
#define IR_MAX_NODES 2000000     /* nodes, in all graphs and functions */
#define IR_MAX_NODE_ATTRS 10000  /* attributes of one node */
/* Model-local functions calling functions (checked by ir_model_verify,
 * which also refuses recursion). */
#define IR_MAX_CALL_DEPTH 32

struct ir_load_opts {
	size_t max_memory;   /* protobuf allocation cap; 0 = default */
	int max_depth;       /* nesting limit of messages; 0 = default (64) */
	size_t view_threshold; /* raw_data this big is viewed in the mapped
				* file, not copied; 0 = default (4096) */
};

/* Load and verify a model file.  Bad input gives IR_EINVAL with a message
 * naming what is wrong (the caller prefixes the file name). */
int ir_model_load(const char *path, const struct ir_load_opts *o,
		  struct ir_model **out, struct ir_diag *d);
/* An independent copy of m (verified), its initializers sharing m's
 * weights (ir_tensor_clone: mapped external data and views of the model
 * file shared, owned bytes copied): memory for the graph, not the weights
 * (ir/clone.c).  m must outlive nothing of the copy's; the copy holds its
 * own references. */
int ir_model_clone(struct ir_model *m, struct ir_model **out, struct ir_diag *d);
/* Parse without verifying (for tools that report on broken models). */
int ir_model_parse(const char *path, const struct ir_load_opts *o,
		   struct ir_model **out, struct ir_diag *d);
/* Parse one serialized FunctionProto (the bodies of ir/spec_functions.h)
 * into a new function the caller owns (free with ir_function_free), its
 * body's nodes in topological order.  Not verified against a model;
 * tensors stored as external data stay unbound. */
int ir_function_parse(const void *buf, size_t len, struct ir_function **out,
		      struct ir_diag *d);

struct ir_save_opts {
	const char *external_data; /* file for big tensors, relative to OUT */
	int64_t size_threshold;    /* bytes; tensors >= go external (1024) */
};

/* Write atomically (temp + rename in the target folder).  Refused, before
 * anything is written: an external data name that is empty, absolute or
 * holds ".." (IR_EUSAGE), OUT naming the model file m was loaded from
 * (IR_EUSAGE); OUT or the external data file being a file m reads (an
 * external data file of its load or of its tensors), the external data
 * file being OUT itself or an existing non-regular file (IR_EINVAL).
 * Files are compared by device and inode where they exist, by their
 * resolved names where they do not yet. */
int ir_model_save(struct ir_model *m, const char *path,
		  const struct ir_save_opts *o, struct ir_diag *d);
/* The checks ir_model_save makes first, alone: a command calls it before
 * a long run whose result it will save. */
int ir_model_save_check(struct ir_model *m, const char *path,
			const struct ir_save_opts *o, struct ir_diag *d);

/* Read a serialized TensorProto file (the backend test format, input_N.pb /
 * output_N.pb) into a new tensor; its payload is owned (ir/tensor_pb.c). */
int ir_tensor_read(const char *path, struct ir_tensor **out, struct ir_diag *d);

/* Serialize one tensor as a TensorProto into a malloc'd buffer. */
int ir_tensor_serialize(struct ir_tensor *t, uint8_t **buf, size_t *len,
			struct ir_diag *d);

/* Write len bytes to path atomically: a temporary beside it, fsync,
 * rename; on failure the temporary is removed and path is untouched. */
int ir_file_write_atomic(const char *path, const void *data, size_t len,
			 struct ir_diag *d);

/* Test hook: make the N-th protobuf allocation from now fail (0 = off). */
void ir_alloc_fail_at(long n);

#endif
