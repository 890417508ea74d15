/* rt_int.h: the interface between the engine (runtime/) and the op kernels
 * (runtime/kernels/: one family per k_<family>.c, a family's own paths in
 * k_<family>_<path>.c), what the kernels share: the kernel context, the
 * kernel tables, attribute access, output allocation, dtype load/store
 * tables, broadcasting, subgraph calls and the parallel loop.  Included
 * by runtime/, runtime/kernels/, and validators/ for element access.
 *
 * Writing a kernel:
 *  1. in the family file (runtime/kernels/k_<family>.c) write
 *     `static int k_<op>(struct rt_kctx *k)`: read inputs with rt_in(),
 *     attributes with rt_attr_*() (defaults as the spec says), make
 *     outputs with rt_out_tensor() or rt_out_set(), fail with rt_err()
 *     (the message gets "node 'N' (Op): " in front);
 *  2. add one line to the family's sorted table at the bottom of the file:
 *     { "ai.onnx", "Op", since_min, since_max, k_<op> }, where the range
 *     covers the registry since_versions the kernel implements (since_max
 *     RT_OPEN for "and every later one");
 *  3. a new family file also gets one line in rt_families[] (kernels.c);
 *  4. the conformance run (make conformance) shows what passes.
 * Kernels own nothing between calls; values in k->in are borrowed.
 */
#ifndef OPMIG_RT_INT_H
#define OPMIG_RT_INT_H

#include <math.h>
#include <stdint.h>

#include "ir/registry.h"
#include "runtime/runtime.h"

#define RT_OPEN 1000000

struct rt_frame;
struct rt_nplan;

struct rt_kctx {
	struct rt_session *s;
	struct rt_frame *f;
	struct rt_nplan *np;         /* the engine's plan of this node */
	const struct ir_node *node;
	const struct ir_op_schema *schema;  /* may be NULL (model function) */
	int version;                 /* schema->since_version */
	int64_t opset;               /* model's import of the node's domain */
	size_t n_in, n_out;
	struct rt_value **in;        /* borrowed; NULL: optional input absent */
	struct rt_value **out;       /* the kernel stores one reference each */
	struct rt_mem *mem;
	struct ir_diag *d;
	struct rt_epilogue *epi;     /* taken by the kernel (rt_kctx_epilogue) */
	int lowp;                    /* float16/bfloat16 widened (lowp.c): the
				      * dtype, 0 when not */
	uint64_t lowp_flip;          /* inputs (< 64) kept in float32 shown
				      * to the kernel as float32 (lowp.c) */
	int lowp_done;               /* output 0 rounded to lowp by the kernel
				      * as it wrote it (rt_lowp_round_out) */
	int lowp_temp;               /* a constant input widened for this run
				      * only (lowp.c): its address is not the
				      * session's, so no shared cache */
	struct rt_value **plain;     /* per input: a plain copy of a channels-
				      * last one (layout_cl.c), or NULL */
};

/* The per-channel steps that may follow a node in the main graph
 * (chain.c): each does its node's own float operation, y * m + a for an
 * inference BatchNormalization (m, a from rt_bn_coeff), y op m or m op y
 * for the binary ones (m the channel's constant), y < 0 ? 0 : y for Relu,
 * y < m ? m : y then > a ? a : y for Clip (m, a its bounds); y + t
 * for an Add (or a Sum of two) whose other operand t is a tensor of y's
 * shape (a residual connection's); y * sigmoid(y) for a Sigmoid of y
 * and the Mul of y by it (SiLU as exporters write it: the Sigmoid
 * kernel's float32 sigmoid, then the product), both nodes one step; and
 * GELU in Erf form, y * (erf(y / m) + 1) (Div; y * m with GELU_MUL),
 * times a when a != 0 as (y * a) * (...) (the Mul by a half first), five
 * or six nodes one step (chain_act.c); HardSwish, y * clamp(y / 6 + 0.5),
 * and HardSigmoid, clamp(m * y + a) (m, a: alpha, beta), clamp(v) being
 * v < 1 ? (v > 0 ? v : 0) : 1 as k_act.c's.  RT_CHAIN_MOVE does nothing: a
 * Transpose, Reshape or Identity whose reader is a Relu or Clip (the last
 * step), which commutes with it, is done by the head (a convolution's
 * post-op) before the move, which runs as a node; the Relu or Clip then
 * gives the move's result as its own (tf2onnx's Conv, Transpose, Relu). */
enum {
	RT_CHAIN_BN = 1, RT_CHAIN_MUL, RT_CHAIN_ADD, RT_CHAIN_SUB, RT_CHAIN_RSUB,
	RT_CHAIN_DIV, RT_CHAIN_RDIV, RT_CHAIN_RELU, RT_CHAIN_CLIP, RT_CHAIN_ADDT,
	RT_CHAIN_SILU, RT_CHAIN_GELU_DIV, RT_CHAIN_GELU_MUL, RT_CHAIN_MOVE,
	RT_CHAIN_HSWISH, RT_CHAIN_HSIG
};
#define RT_CHAIN_MAX 8

/* x * sigmoid(x) of n float32 values (y may be x): bit for bit the
 * Sigmoid kernel's float32 result multiplied by x as Mul does (k_act.c),
 * for RT_CHAIN_SILU. */
void rt_silu_f32(const float *x, float *y, int64_t n);
/* The same on a float16/bfloat16 (dtype) result kept in float32
 * (lowp.c): the sigmoid rounded to dtype, then the product rounded, as
 * the two nodes computing in float32 give. */
void rt_silu_round(float *y, int64_t n, int dtype);
/* GELU in Erf form on n float32 values in place, each node's float
 * operation in its order (k_elem.c): t = y / m (y * m when !div), erf(t)
 * as the Erf kernel, + 1, then y * that (a == 0) or (y * a) * that; each
 * result rounded to round (a 16-bit float dtype) when it is not 0. */
void rt_gelu_f32(float *y, int64_t n, int div, float m, float a, int round);

/* The steps as a kernel may do them itself on its float32 result y (its
 * output 0, channels on axis 1): step s on channel ch with m = coef[2 * c
 * * s + ch] and a = coef[2 * c * s + c + ch]; an RT_CHAIN_ADDT step adds
 * element i of y the element i of t[s] (y's shape). */
struct rt_chain;
struct rt_epilogue {
	size_t n;
	int64_t c;
	int kind[RT_CHAIN_MAX];
	float *coef;
	const float *t[RT_CHAIN_MAX];
	int round;                   /* y a float16/bfloat16 result kept in
				      * float32 (lowp.c): its dtype, each
				      * step's result rounded to it; else 0 */
	int head_round;              /* round y itself first: the head's
				      * kernel computes a float16 node in
				      * float32 and has not rounded yet */
	const struct rt_chain *ch;   /* (chain.c's) */
};
/* This node's steps as its kernel may do them on y, or NULL (none this
 * run, or an observer); with tensors 0 the steps stop before the first
 * RT_CHAIN_ADDT (that one and the rest then run as nodes).  On a float16
 * node computed in float32 (lowp.c) the epilogue rounds (round and
 * head_round set): the kernel rounds y to float16 first, then each step's
 * result (rt_epilogue_span; in registers knn_epi512_head and
 * knn_epi512_rstep), and the node's own rounding pass is then skipped.
 * A kernel that takes them must, before it returns 0, have applied them once to
 * every element of y, after its final value is stored, in the order of
 * kind[] (rt_epilogue_span, or the same operations in vector registers);
 * the steps are then not run again.  If it fails, nothing is applied. */
const struct rt_epilogue *rt_kctx_epilogue(struct rt_kctx *k, struct rt_value *y,
					   int tensors);
/* The steps on n consecutive values of channel ch, the first of them
 * element off of y (whose data starts at y - off). */
void rt_epilogue_span(const struct rt_epilogue *e, int64_t ch, int64_t off, float *y,
		      int64_t n);
/* e's steps over y stored plain, planes planes of sp values (plane p
 * channel p % e->c), split over the session's threads. */
void rt_epilogue_planes(struct rt_kctx *k, const struct rt_epilogue *e, float *y,
			int64_t planes, int64_t sp);
/* Whether a step of e adds a tensor (RT_CHAIN_ADDT: its operand stored
 * channels first). */
int rt_epilogue_has_tensor(const struct rt_epilogue *e);
/* e's steps over y stored channels last: rows of e->c channels, split
 * over the session's threads; a step adding a tensor (whose operand is
 * stored plain) only where the rows are y's plain storage too (planes of
 * one value). */
void rt_epilogue_cl(struct rt_kctx *k, const struct rt_epilogue *e, float *y, int64_t rows);
/* Whether the kernel of a float32 product may fold e's first step, an
 * inference BatchNormalization, into its weights and bias (W[o] * mul[o],
 * B[o] * mul[o] + add[o], with mul and add e's first coefficients) as
 * onnxruntime's Conv+BatchNormalization fusion does, instead of doing it
 * on the result: not on a 16-bit float result, not with --exact, not
 * under OPMIG_NO_BNFOLD (the tests' reference: then the chain gives the
 * nodes' bytes).  The last bits then differ from the nodes' (one product
 * and one rounding fewer). */
int rt_epilogue_bn_fold(const struct rt_kctx *k, const struct rt_epilogue *e);
/* rest: e without its first step (which the kernel did); e->n >= 1. */
void rt_epilogue_rest(const struct rt_epilogue *e, struct rt_epilogue *rest);

/* on 1: oneDNN's OpenMP threads are in use, the session pools' loops run
 * on them from now on (0: on the pools' own threads; the tests); the
 * setting before (threads.c). */
int rt_pool_openmp(int on);

typedef int (*rt_kernel_fn)(struct rt_kctx *k);

struct rt_kernel {
	const char *domain;          /* "ai.onnx", "ai.onnx.ml", "com.microsoft" */
	const char *op;
	int since_min, since_max;    /* registry since_versions covered */
	rt_kernel_fn run;
};

/* Channels last (layout_cl.c): the kernels of the ops listed there read
 * inputs stored channels last (RT_VALUE_CL) themselves, computing on them
 * as they are or asking rt_cl_plain_in() for a plain copy; every other
 * kernel gets plain copies from the engine.  rt_cl_plain_in: input i plain (a copy
 * when it is stored channels last; the copy lives until the node ends);
 * rt_cl_may_write: may the node store output 0 channels last (the plan
 * found its every reader to be of a listed op); rt_cl_set: flag y as stored so
 * (or not); rt_cl_to_first: n planes of c channels of sp elements of
 * esize bytes from channels last into channels first (k NULL: on the
 * caller's thread). */
int rt_cl_plain_in(struct rt_kctx *k, size_t i);
int rt_cl_may_write(const struct rt_kctx *k);
void rt_cl_set(struct rt_value *y, int cl);
void rt_cl_to_first(struct rt_kctx *k, const void *x, void *y, int64_t n, int64_t c,
		    int64_t sp, size_t esize);
/* rt_cl_per_channel: is x stored channels last (N, C, spatial) and o,
 * stored plain, one value per channel or per image at most (an
 * elementwise op's other operand: a squeeze and excitation's scale, a
 * per-channel bias); rt_cl_view: v (x's shape, or per channel of x's)
 * seen as it lies beside x stored so, (N, positions, C), its data
 * shared. */
int rt_cl_per_channel(const struct rt_value *x, const struct rt_value *o);
void rt_cl_view(const struct rt_value *v, const struct rt_value *x, struct rt_value *out);
/* rt_cl_view of a binary op's operands and result: beside a (cl 2) or b
 * (cl 3), the other per channel of it; into v[0], v[1], v[2]. */
void rt_cl_views(const struct rt_value *a, const struct rt_value *b, const struct rt_value *y,
		 int cl, struct rt_value v[3]);

/* One family table, defined at the bottom of each k_*.c file. */
struct rt_family {
	const char *name;
	const struct rt_kernel *kernels;
	const size_t *n;
};

extern const struct rt_family rt_families[];
extern const size_t rt_n_families;

/* The kernel for (domain, op) covering since_version; NULL if none, or
 * if the test hook OPMIG_NO_KERNEL names op (see kernels.c). */
const struct rt_kernel *rt_kernel_find(const char *domain, const char *op,
				       int since_version);
/* Test hook: hide the kernels of the ops in a comma-separated list (NULL
 * or "": none) from rt_kernel_find, replacing OPMIG_NO_KERNEL's list.
 * Not thread-safe: call it before creating sessions. */
void rt_kernel_hide(const char *ops);
/* Every kernel, merged and sorted by (domain, op, since_min). */
size_t rt_kernel_count(void);
const struct rt_kernel *rt_kernel_at(size_t i);

/* Charge bytes to mem (NULL: nothing) as tensor data is: IR_ENOMEM, with
 * the limit's message in d (may be NULL), when the session's limit leaves
 * no room; the peak follows.  Give them back with mem->cur -= bytes. */
int rt_mem_charge(struct rt_mem *mem, int64_t bytes, struct ir_diag *d);

/* A zeroed value struct (malloc + memset, not calloc: see value.c); the
 * caller fills it in.  NULL when out of memory. */
struct rt_value *rt_value_alloc(void);

/* ---- errors --------------------------------------------------------- */

/* "node 'NAME' (Op)", or "node #INDEX (Op)" for an unnamed node, into buf
 * (RT_WHERE_SIZE bytes); returns buf. */
#define RT_WHERE_SIZE 192
const char *rt_node_where(const struct ir_node *n, char *buf);

/* Record "node 'N' (Op): <message>" as IR_EINVAL; returns IR_EINVAL. */
int rt_err(struct rt_kctx *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int rt_oom(struct rt_kctx *k);

/* ---- inputs --------------------------------------------------------- */

/* Input i, or NULL when absent (i >= n_in or the name was ""). */
static inline struct rt_value *rt_in(struct rt_kctx *k, size_t i)
{
	return i < k->n_in ? k->in[i] : NULL;
}
/* Input i, which must be present and a tensor (error otherwise). */
int rt_in_tensor(struct rt_kctx *k, size_t i, struct rt_value **out);
/* Elements of an integer (or, converted, float) tensor as int64;
 * *n gets numel.  The array is malloc'd: free it. */
int rt_in_ints(struct rt_kctx *k, size_t i, int64_t **vals, size_t *n);
/* One scalar (or one-element tensor) input as int64 / double. */
int rt_in_int(struct rt_kctx *k, size_t i, int64_t *v);
int rt_in_double(struct rt_kctx *k, size_t i, double *v);

/* Is input i a constant of the model (an initializer, or a kept result of
 * a constant node: the same value, at the same address, on every later
 * run of the session)? */
int rt_in_const(struct rt_kctx *k, size_t i);

/* ---- per-node cache ----------------------------------------------------
 * Data a kernel derives from constant inputs (packed weights), kept for
 * the session's life in the node's plan: NULL until set.  _set takes p
 * (freed with free_fn with the plan) and charges bytes to the session's
 * memory; -1 (nothing stored, p still the caller's) when the memory
 * limit leaves no room, the session keeps no weight caches
 * (rt_opts.no_weight_cache) or the node has a cache already. */
void *rt_node_cache(struct rt_kctx *k);
int rt_node_cache_set(struct rt_kctx *k, void *p, void (*free_fn)(void *),
		      int64_t bytes);
/* Whether this call of the node is at least its second in the session
 * and the node may keep a cache of `bytes` (none yet, weight caches on,
 * room under the memory limit): kernels whose kept data costs more to
 * make than one run saves (fresh memory for a copy of the weights) make
 * it on the second run, so a session that runs once never pays for it,
 * and not at all when it could not be kept. */
int rt_node_cache_worth(struct rt_kctx *k, int64_t bytes);

/* ---- caches shared between nodes (shared.c) -----------------------------
 * Nodes that read the same constant (an unrolled decoder's steps, tied
 * layers) keep one copy of what a kernel derives from it.  A key names
 * the data exactly: the kernel's cache kind, the constants' data it is
 * made from (their addresses, the same on every run of the session) and
 * whatever else it depends on (shapes, attributes), compared in full.
 * A shared cache never changes once made. */
#define RT_SHARE_DIMS 8
enum { RT_SHARE_LOWP = -1 };        /* lowp.c's widened constants */
struct rt_share_key {
	int kind;                         /* the cache's kind (KNN_WC_*, RT_SHARE_*) */
	const void *data[3];              /* the constants' data, or NULL */
	int64_t dim[RT_SHARE_DIMS];       /* the rest it depends on, 0 unused */
};
/* The cache another node of the session made under key, now this node's
 * too (NULL: none, the node has a cache, or weight caches are off). */
void *rt_node_cache_shared(struct rt_kctx *k, const struct rt_share_key *key);
/* rt_node_cache_set, p then kept by the session (freed with it) and
 * offered to its other nodes under key. */
int rt_node_cache_set_shared(struct rt_kctx *k, void *p, void (*free_fn)(void *),
			     int64_t bytes, const struct rt_share_key *key);

/* ---- attributes (resolving ref_attr_name inside functions) ---------- */

const struct ir_attr *rt_attr(struct rt_kctx *k, const char *name);
int64_t rt_attr_int(struct rt_kctx *k, const char *name, int64_t dflt);
float rt_attr_float(struct rt_kctx *k, const char *name, float dflt);
/* The string (NUL-terminated), or dflt when absent. */
const char *rt_attr_str(struct rt_kctx *k, const char *name, const char *dflt);
/* List attributes: the array (borrowed) and *n; NULL, *n = 0 if absent. */
const int64_t *rt_attr_ints(struct rt_kctx *k, const char *name, size_t *n);
const float *rt_attr_floats(struct rt_kctx *k, const char *name, size_t *n);
/* A tensor attribute as a new value (a reference for the caller). */
int rt_attr_tensor(struct rt_kctx *k, const char *name, struct rt_value **out);
/* A graph attribute; NULL if absent. */
const struct ir_graph *rt_attr_graph(struct rt_kctx *k, const char *name);

/* ---- outputs -------------------------------------------------------- */

/* Is output i wanted (present and named)? */
int rt_out_wanted(struct rt_kctx *k, size_t i);
/* A new tensor stored as output i; NULL on error (diag set).  The data is
 * uninitialised.  For an unwanted output it still returns a tensor (kept
 * until the node finishes) so kernels need not check. */
struct rt_value *rt_out_tensor(struct rt_kctx *k, size_t i, int dtype,
			       int rank, const int64_t *dims);
/* Output i as the tensor of an input in `ins` (bit j: input j) when that
 * tensor has this dtype and shape and dies with this node (the frame's
 * only reference, released after it): an elementwise kernel then writes
 * its result in place, each element after reading it.  Otherwise a new
 * tensor, as rt_out_tensor(). */
struct rt_value *rt_out_tensor_reuse(struct rt_kctx *k, size_t i,
				     unsigned ins, int dtype, int rank,
				     const int64_t *dims);
/* Store a value as output i (takes the caller's reference). */
int rt_out_set(struct rt_kctx *k, size_t i, struct rt_value *v);
/* Output i as a view of `base` with new dims (same dtype and numel):
 * Reshape, Squeeze, Flatten without copying. */
int rt_out_view(struct rt_kctx *k, size_t i, struct rt_value *base, int rank,
		const int64_t *dims);

/* ---- dtypes ---------------------------------------------------------- */

int rt_dtype_is_float(int dtype);      /* float16/32/64, bfloat16, float8 */
int rt_dtype_is_int(int dtype);        /* signed/unsigned ints, int4/uint4 */
int rt_dtype_is_signed(int dtype);
/* Load element i of a numeric tensor's data as double / int64, and store
 * one (with C conversion rules; float8/int4 saturate as the spec says). */
double rt_load_f64(int dtype, const void *data, int64_t i);
int64_t rt_load_i64(int dtype, const void *data, int64_t i);
void rt_store_f64(int dtype, void *data, int64_t i, double v);
void rt_store_i64(int dtype, void *data, int64_t i, int64_t v);
/* Copy the first of n elements of es bytes over the other n - 1 (not
 * for strings: their elements own their text). */
void rt_fill_repeat(void *data, size_t es, int64_t n);
float rt_half_to_float(uint16_t h);
uint16_t rt_float_to_half(float f);
float rt_bf16_to_float(uint16_t h);
uint16_t rt_float_to_bf16(float f);
/* The same over n elements (F16C where the processor has it: the same
 * results, rounding to nearest even). */
void rt_half_to_float_n(const uint16_t *h, float *f, int64_t n);
void rt_float_to_half_n(const float *f, uint16_t *h, int64_t n);
/* Round n floats in place to the nearest float16 (dtype IR_DTYPE_FLOAT16)
 * or bfloat16 value, ties to even: what narrowing and widening back
 * give. */
void rt_float_round_n(float *f, int64_t n, int dtype);
/* For a kernel writing output 0 of a node computed in float32 for float16
 * or bfloat16 (k->lowp; output 0 of its input 0's type: the elementwise
 * and normalization kernels): the dtype to round each value to as it is
 * written, in cache, sparing the pass over the result after the node
 * (lowp.c); 0 when the node is not such.  A kernel that rounded all of
 * output 0 so sets k->lowp_done. */
static inline int rt_lowp_round_out(const struct rt_kctx *k)
{
	return k->lowp;
}
/* The run of float32 results such a kernel computes, then rounds while
 * in cache (the elementwise kernels) */
#define RT_ROUND_RUN 4096
/* A Cast of float32 x to float16 or bfloat16 (to) whose result the plan
 * keeps in float32 (lowp.c): output 0 is x rounded to `to`, flagged so,
 * with no narrowing for the Cast and no widening for its readers.  1 done,
 * 0 not such a Cast, or an error. */
int rt_lowp_cast_keep(struct rt_kctx *k, const struct rt_value *x, int to);
/* float8 of each kind <-> float (saturate: clamp to the largest finite
 * value instead of inf/NaN, as Cast's saturate=1). */
float rt_f8_to_float(int dtype, uint8_t v);
uint8_t rt_float_to_f8(int dtype, float f, int saturate);

/* Tensor data: malloc, or a large block kept from a freed tensor
 * (bigblk.c); rt_big_free takes any malloc'd block (NULL too). */
void *rt_big_alloc(size_t bytes);
void rt_big_free(void *p);

/* ---- shapes and broadcasting --------------------------------------- */

int64_t rt_numel(int rank, const int64_t *dims);
/* Normalise a possibly negative axis for rank r; error if out of range. */
int rt_axis(struct rt_kctx *k, int64_t axis, int rank, int *out);
/* numpy broadcast of n shapes; error naming both shapes when they clash. */
int rt_broadcast_shape(struct rt_kctx *k, struct rt_value *const *ts, size_t n,
		       int *rank, int64_t *dims);
/* Strides (in elements) of t read as a tensor of `rank` dims `dims` under
 * broadcasting: 0 along broadcast dims. */
void rt_broadcast_strides(const struct rt_value *t, int rank,
			  const int64_t *dims, int64_t *strides);
/* Iterate the numpy broadcast of n tensors (n <= RT_BCAST_MAX) over the
 * output shape (rank, dims) in row-major order, in runs along the
 * innermost dimension: fn gets, for each run, the element offset of every
 * input at the run's start (off[i]), each input's step along the run
 * (step[i]: 0 when broadcast, else 1), the output offset (off[n]) and the
 * run length.  Big outputs are split over the session's threads (fn must
 * only write the output elements of its run). */
#define RT_BCAST_MAX 8
typedef void (*rt_bcast_fn)(void *ctx, const int64_t *off, const int64_t *step,
			    int64_t len);
void rt_bcast_run(struct rt_kctx *k, struct rt_value *const *ts, size_t n,
		  int rank, const int64_t *dims, rt_bcast_fn fn, void *ctx);

/* "[2,3,4]" */
void rt_dims_text(int rank, const int64_t *dims, char *buf, size_t size);

/* ---- running subgraphs and threads --------------------------------- */

/* Run a graph-attribute body (If branch, Loop/Scan body) with its formal
 * inputs bound to ins (borrowed; NULL for an absent optional), in a frame
 * that sees the current node's scope.  outs gets g->n_outputs references. */
int rt_subgraph_run(struct rt_kctx *k, const struct ir_graph *g,
		    struct rt_value **ins, size_t n_in, struct rt_value **outs);

/* An inference BatchNormalization's per-channel y = x * mul + add, from
 * its scale, bias, mean and var: computed in double, rounded once (the
 * kernel, k_norm.c, and the epilogue chains, chain.c, share it). */
static inline void rt_bn_coeff(double scale, double bias, double mean, double var,
			       float eps, float *mul, float *add)
{
	double a = scale / sqrt(var + eps);

	*mul = (float)a;
	*add = (float)(bias - mean * a);
}

/* The sum in double of x[i] - mean over n float32 values (of their
 * squares when sq), in partial sums that vectorize (sum_f32.c). */
double rt_sum_f32(const float *x, int64_t n, double mean, int sq);

/* The clock: CLOCK_MONOTONIC seconds (profile.c) */
double rt_now(void);

/* fn(ctx, begin, end) over [0, n) split into chunks run on the session's
 * threads (inline when threads == 1 or n is small).  grain: the fewest
 * items worth a chunk. */
typedef void (*rt_range_fn)(void *ctx, int64_t begin, int64_t end);
void rt_parallel_for(struct rt_kctx *k, int64_t n, int64_t grain,
		     rt_range_fn fn, void *ctx);
int rt_threads(struct rt_kctx *k);

#endif
