/* runtime.h: opmig's reference interpreter: runs an IR model on CPU values
 * (tensors, sequences, optionals, maps) through kernels registered per
 * operator version, freeing each intermediate after its last consumer.
 *
 * runtime/ owns running a model: sessions, execution plans, memory
 * accounting, threads, values, float16/bfloat16 computed in float32,
 * results kept channels last between the kernels that read them so
 * (layout_cl.c; outputs always leave channels first), the per-node
 * profile, tensor files (tensor_io.h) and input binding and
 * generation (inputs.h).  runtime/kernels/ owns the op kernels (rt_int.h
 * is their interface).  Comparing two models' results is validators/'s.
 *
 * Ownership: struct rt_value is reference counted.  rt_value_ref() adds a
 * reference, rt_value_unref() drops one and frees the value (and the
 * values it holds) at zero; unref(NULL) is a no-op.  A value's data is
 * owned, or borrowed from a base value or from the model (initializers
 * viewed in the mapped file): keep the model alive as long as the session
 * and its values.  rt_session_run() borrows its inputs and gives the caller
 * one reference per output; an output may share data with the session's
 * constants (initializers, kept results of constant nodes): read it, do
 * not write it.  A session borrows the model: free the session
 * first.
 *
 * Errors: every function taking a struct ir_diag returns 0 or a negative
 * ir_status and writes the first error there; messages name the node, op,
 * domain and version where one is involved.
 */
#ifndef OPMIG_RUNTIME_H
#define OPMIG_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

#define RT_MAX_RANK 16

enum rt_kind { RT_TENSOR, RT_SEQUENCE, RT_OPTIONAL, RT_MAP };

/* Memory accounting of one session (or several sharing it). */
struct rt_mem {
	int64_t cur, peak;      /* bytes of tensor data owned by live values */
	int64_t limit;          /* 0: none; else allocations beyond fail */
};

/* A runtime value.
 *  - tensor: dtype, rank, dims, numel elements at data, row-major.
 *    Element layout: the dtype's natural C type (float16/bfloat16 as
 *    uint16_t bits, float8 as one byte, bool as uint8_t 0/1, int4/uint4/
 *    float4e2m1 unpacked to ONE BYTE per element, complex as pairs, string
 *    as char * (NUL-terminated, owned by the value)).
 *  - sequence: n tensors in items; dtype is the element dtype (also when
 *    empty; 0 if unknown).
 *  - optional: n == 0 (empty) or 1 (items[0], a tensor or a sequence);
 *    dtype as for the contents.
 *  - map: items[0] the keys (1-D tensor), items[1] the values (1-D), dtype
 *    the key dtype. */
struct rt_value {
	int refs;
	enum rt_kind kind;
	int dtype;
	int rank;
	int64_t dims[RT_MAX_RANK];
	int64_t numel;
	void *data;
	int64_t nbytes;            /* bytes charged to mem (owned data) */
	struct rt_mem *mem;        /* charged here; NULL: uncharged */
	unsigned flags;            /* RT_VALUE_* */
	struct rt_value *base;     /* data borrowed from this value (a ref) */
	size_t n, cap;
	struct rt_value **items;   /* owned references */
	int elem_kind;             /* optional/sequence contents when empty:
				    * RT_TENSOR or RT_SEQUENCE */
};

#define RT_VALUE_OWNS_DATA 1u      /* free(data) on release */
#define RT_VALUE_READONLY 2u       /* data viewed in the model file */
#define RT_VALUE_REGION 8u         /* a view of a region no other value
				    * reads (a Concat's input written in
				    * place, catbuf.c): written like owned
				    * data */
#define RT_VALUE_KEPT 4u           /* a constant node's result the session
				    * keeps between runs: never written,
				    * alive until the session is freed */
#define RT_VALUE_CL 16u            /* a tensor of rank 3 to 5 stored channels
				    * last (N, spatial..., C; dims still say
				    * N, C, spatial...): made and read only
				    * by the kernels layout_cl.c lists */
#define RT_VALUE_WIDE 32u          /* a float16 or bfloat16 tensor whose data
				    * are float32 holding values of that
				    * dtype exactly (4 bytes an element):
				    * made and read only as lowp.c says */
#define RT_VALUE_PACKED 64u        /* an int4/uint4/float4e2m1 constant
				    * viewed in its file form: two elements a
				    * byte, low nibble first, read-only (not
				    * the layout above); made by
				    * rt_value_from_ir_packed for the plan's
				    * initializers, read as it is only by the
				    * weight-only unit (qdq_wo.c); every
				    * other reader gets it unpacked first
				    * (rt_value_unpack, exec.c) */

struct rt_value *rt_value_ref(struct rt_value *v);
void rt_value_unref(struct rt_value *v);
/* Stop charging v (and what it holds) to its session's memory account, so
 * it may outlive the session: rt_session_run does this to its outputs.
 * A result the session keeps (RT_VALUE_KEPT) stays charged while the
 * session lives; freeing the session detaches it. */
void rt_value_detach(struct rt_value *v);

/* Element size in bytes of the runtime layout (strings: sizeof(char *));
 * 0 for an unknown dtype. */
size_t rt_dtype_size(int dtype);

/* A new tensor with uninitialised data (strings: all NULL), charged to
 * mem (may be NULL).  rank <= RT_MAX_RANK, dims >= 0. */
int rt_tensor_new(struct rt_mem *mem, int dtype, int rank,
		  const int64_t *dims, struct rt_value **out,
		  struct ir_diag *d);
/* A new empty sequence or optional of element dtype. */
int rt_seq_new(int dtype, struct rt_value **out, struct ir_diag *d);
int rt_optional_new(int dtype, int elem_kind, struct rt_value *content,
		    struct rt_value **out, struct ir_diag *d);
/* Append a reference to item (taken from the caller's reference). */
int rt_seq_push(struct rt_value *seq, struct rt_value *item,
		struct ir_diag *d);
/* A deep copy of a tensor (strings duplicated), charged to mem. */
int rt_tensor_clone(struct rt_mem *mem, const struct rt_value *t,
		    struct rt_value **out, struct ir_diag *d);

/* Tensor conversion with the IR (runtime/tensor_conv.c).  From: views
 * the payload when its layout allows (little-endian, aligned, not
 * sub-byte); else copies.  To: a new owned ir_tensor (raw_data or
 * string_data), named `name`. */
int rt_value_from_ir(struct rt_mem *mem, struct ir_tensor *t,
		     struct rt_value **out, struct ir_diag *d);
/* The same, except that a 4-bit tensor is viewed packed (RT_VALUE_PACKED)
 * in t's payload, which must then stay as it is while the value lives. */
int rt_value_from_ir_packed(struct rt_mem *mem, struct ir_tensor *t,
			    struct rt_value **out, struct ir_diag *d);
/* Unpack a packed value in place (its data become one byte an element,
 * owned, charged to its mem, for every holder of the value); 0 when it
 * is not packed. */
int rt_value_unpack(struct rt_mem *mem, struct rt_value *v, struct ir_diag *d);
int rt_value_to_ir(const struct rt_value *v, const char *name,
		   struct ir_tensor **out, struct ir_diag *d);

/* A copy of tensor t converted to dtype (as Cast does, saturating for the
 * float8 kinds), or a new reference to t when it already has it. */
int rt_tensor_cast(struct rt_mem *mem, struct rt_value *t, int dtype,
		   struct rt_value **out, struct ir_diag *d);
/* The same on n elements in raw form (an ir_tensor_cast_fn): float16 to
 * and from float32 vectorized, others through double or int64. */
int rt_cast_raw(int from, const uint8_t *in, int to, uint8_t *out, size_t n,
		struct ir_diag *d);
/* A copy of t with its dims permuted: out dim i is t's dim perm[i]. */
int rt_tensor_transpose(struct rt_mem *mem, const struct rt_value *t,
			const int *perm, struct rt_value **out,
			struct ir_diag *d);

/* Element i of a numeric tensor as a double (bool 0/1), and set. */
double rt_value_get_f64(const struct rt_value *v, int64_t i);
void rt_value_set_f64(struct rt_value *v, int64_t i, double x);

/* "float[2,3]" / "seq(float)" / "optional(empty)" text. */
void rt_value_describe(const struct rt_value *v, char *buf, size_t size);

/* ---- sessions ------------------------------------------------------- */

struct rt_session;

/* Called after each node of the MAIN graph ran, for each of its outputs:
 * *slot holds the value (borrowed; take a reference to keep one).  The
 * observer may replace it (unref the old value, store a new reference),
 * and the run goes on with the replacement: `opmig validate --layerwise`
 * feeds a model the other model's values that way.  Return non-zero to
 * stop the run (rt_session_run then returns IR_EUSAGE).  A run with an
 * observer runs every node: results of constant nodes kept by earlier runs
 * (see rt_opts) are neither reused nor kept, so the observer sees each
 * node computed, and a value it replaces cannot end up kept. */
typedef int (*rt_observe_fn)(void *ctx, const struct ir_node *n,
			     size_t out_index, struct rt_value **slot);

struct rt_opts {
	int threads;              /* 0: all cores */
	int64_t max_memory;       /* 0: none; refused before running when the
				   * planned peak is above, enforced while
				   * running */
	int collect_stats;        /* time per op type */
	int profile;              /* record every node run (rt_profile_json) */
	int exact;                /* float16/bfloat16 computed by each kernel
				   * in double (default: in float32, rounded
				   * once at each output; lowp.c), and static
				   * QDQ units node by node (qdq.c) */
	int no_weight_cache;      /* kernels keep no data derived from the
				   * weights between runs (packed or
				   * transformed copies), and the session
				   * keeps no results of constant nodes:
				   * less memory, more time per run */
	rt_observe_fn observe;
	void *observe_ctx;
	/* when set, only the main-graph nodes it returns nonzero for run (the
	 * others are skipped and leave their outputs unset): constant folding
	 * runs just the nodes it folds, whatever the inputs */
	int (*only)(void *ctx, const struct ir_node *n);
	void *only_ctx;
};

/* Prepare a session: resolves a kernel for every node of every graph
 * (main, subgraphs, called functions); a node without one is an error
 * naming node, op, domain and version.
 *
 * Constant nodes: a node of the main graph whose inputs are all
 * initializers (not overridable graph inputs) or results of other such
 * nodes, and which is deterministic and no call or control flow, gives the
 * same results on every run.  The session keeps them (references, still
 * counted in its memory) from the first run that computes them, and later
 * runs bind them instead of running the node; kernels see them as
 * constants (rt_in_const).  Under max_memory only while the highest peak
 * of a run so far plus everything kept stays within the limit (so the
 * first run keeps nothing); with no_weight_cache or an observer, nothing.
 * See runtime/fold.c. */
int rt_session_new(struct ir_model *m, const struct rt_opts *o,
		   struct rt_session **out, struct ir_diag *d);
void rt_session_free(struct rt_session *s);
/* Set (or clear, fn NULL) the observer of later runs. */
void rt_session_set_observer(struct rt_session *s, rt_observe_fn fn, void *ctx);

/* The main graph's inputs that the caller binds (not backed by an
 * initializer), in graph order. */
size_t rt_session_n_inputs(const struct rt_session *s);
const struct ir_vinfo *rt_session_input(const struct rt_session *s, size_t i);
size_t rt_session_n_outputs(const struct rt_session *s);
const struct ir_vinfo *rt_session_output(const struct rt_session *s, size_t i);

/* Check a value for input i against the declared dtype, rank and static
 * dims; the error names the input and both types. */
int rt_session_check_input(const struct rt_session *s, size_t i,
			   const struct rt_value *v, struct ir_diag *d);

/* Estimated peak bytes of tensors live at once for these inputs, from
 * static inference (main graph; values of unknown size counted as 0 and
 * reported in *n_unknown).  Used to refuse a run before it starts. */
int rt_session_plan_peak(struct rt_session *s, struct rt_value **inputs,
			 size_t n, int64_t *peak, size_t *n_unknown,
			 struct ir_diag *d);

/* Run once: inputs[i] binds rt_session_input(s, i) (borrowed; checked
 * against the declared dtype and static dims).  outputs must hold
 * rt_session_n_outputs() slots; each gets one reference. */
int rt_session_run(struct rt_session *s, struct rt_value **inputs, size_t n,
		   struct rt_value **outputs, struct ir_diag *d);

/* The same run node by node, so that a caller can interleave two models'
 * runs in one thread (`opmig validate --layerwise`).  rt_run_begin checks
 * and binds the inputs as rt_session_run does (they stay borrowed until
 * the run ends or is freed).  rt_run_step runs the next node of the main
 * graph (the observer sees its outputs): 1 when a node ran, 0 when none is
 * left, or an error.  rt_run_end takes the last step's result: when it is
 * not an error, outputs (rt_session_n_outputs() slots) get one reference
 * each; it frees the run either way and returns rc or its own error.
 * rt_run_free abandons a run (NULL: no-op).  One run at a time per
 * session. */
struct rt_run;

int rt_run_begin(struct rt_session *s, struct rt_value **inputs, size_t n,
		 struct rt_run **out, struct ir_diag *d);
int rt_run_step(struct rt_run *r, struct ir_diag *d);
int rt_run_end(struct rt_run *r, int rc, struct rt_value **outputs,
	       struct ir_diag *d);
void rt_run_free(struct rt_run *r);

struct rt_op_stat {
	const char *domain, *op;  /* borrowed from the model */
	size_t count;             /* nodes run (all runs, all graphs) */
	double seconds;
	size_t reused;            /* node runs skipped: results kept */
	size_t fused;             /* node runs done in the pass of the node
				   * heading their chain (its time has
				   * theirs; chain.c) */
};

struct rt_node_stat {
	const struct ir_node *node;  /* borrowed from the model */
	int64_t count;            /* runs */
	double seconds;
};

struct rt_stats {
	int64_t peak_bytes;       /* peak of owned tensor bytes */
	int64_t viewed_bytes;     /* initializer bytes used in place */
	int64_t kept_bytes;       /* results of constant nodes kept */
	size_t kept_nodes;        /* ... and the nodes they come from */
	int64_t cl_values;        /* results stored channels last (layout_cl.c) */
	int64_t wide_values;      /* float16/bfloat16 results kept in float32
				   * (lowp.c) */
	size_t shared_nodes;      /* nodes that took derived weights (packed,
				   * widened) another node made (shared.c) */
	int64_t shared_bytes;     /* ... their bytes, not made again */
	size_t n_ops;
	struct rt_op_stat *ops;   /* sorted by seconds, descending */
	size_t n_nodes;
	struct rt_node_stat *nodes;  /* every node run, by seconds descending */
};

/* Statistics so far (borrowed until the next run or free). */
const struct rt_stats *rt_session_stats(struct rt_session *s);
struct rt_mem *rt_session_mem(struct rt_session *s);
/* The runs so far as a Chrome trace-event JSON array (opts.profile; the
 * format of onnxruntime's profiler, profile.c); malloc'd, NULL when out of
 * memory. */
char *rt_profile_json(struct rt_session *s);

#endif
