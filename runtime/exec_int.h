/* exec_int.h: the interpreter engine's internals shared by plan.c (per
 * graph execution plans: value slots, kernels, liveness), exec.c (frames
 * and running), fold.c (constant results kept across runs), kctx.c and
 * threads.c.  Not for kernels: they use rt_int.h. */
#ifndef OPMIG_EXEC_INT_H
#define OPMIG_EXEC_INT_H

#include <pthread.h>
#include <string.h>

#include "ir/spec_functions.h"
#include "runtime/rt_int.h"

/* Is n of the default domain ("", or "ai.onnx" spelled out)? */
static inline int rt_default_domain(const struct ir_node *n)
{
	return !n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx");
}

/* Where a node reads a value: `up` frames out (0: this graph), `slot`. */
struct rt_ref {
	int up;
	int slot;        /* -1: absent optional input */
};

/* A node's epilogue chain (chain.c): the nodes after it whose work one
 * pass over its output does (the kinds, RT_CHAIN_*, in rt_int.h). */
struct rt_chain_step {
	int kind;                           /* RT_CHAIN_* */
	int operand;                        /* binary ops: the constant's input */
	size_t node;                        /* index in the plan */
	size_t aux[4];                      /* an activation written as several
					     * nodes (chain_act.c): the others */
	int n_aux;
	float *coef;                        /* its 2 x coef_c coefficients when
					     * they come from initializers only:
					     * made by the first run (chain.c) */
	int64_t coef_c;
};

#define RT_SKIP_ALIAS 2

struct rt_chain {
	size_t n;
	struct rt_chain_step steps[RT_CHAIN_MAX];
};

struct rt_nplan {
	const struct ir_node *node;
	const struct rt_kernel *kernel;     /* NULL: a model-local function */
	struct rt_gplan *fn_plan;           /* the function body, if a call */
	const struct ir_op_schema *schema;
	int64_t opset;
	struct rt_ref *in;                  /* node->n_inputs */
	int *out;                           /* node->n_outputs slots, -1 "" */
	int *release;                       /* slots dead after this node */
	size_t n_release;
	size_t stat;                        /* index into session stats */
	size_t n_subs;                      /* graph attributes' plans */
	struct rt_gplan **subs;
	void *cache;                        /* rt_node_cache */
	void (*cache_free)(void *);
	int64_t cache_bytes;
	struct rt_mem *cache_mem;           /* charged with cache_bytes */
	int64_t runs;                       /* kernel calls so far */
	struct rt_value **lowp_const;       /* float16/bfloat16 constant inputs
					     * widened once (lowp.c), n_inputs
					     * entries, or NULL */
	double seconds;                     /* their time (collect_stats) */
	int fold;                           /* RT_FOLD_*, set by rt_fold_mark */
	struct rt_value **kept;             /* NULL, or node->n_outputs results
					     * the session keeps (fold.c) */
	struct rt_chain *chain;             /* its epilogue, or NULL (chain.c) */
	int chained;                        /* a step of another node's chain */
	size_t chain_head;                  /* ... whose step before it is
					     * this node's (chained only) */
	struct rt_cat *cat;                 /* a Concat's learnt shapes (catbuf.c) */
	size_t cat_dest;                    /* output 0 goes into Concat
					     * cat_dest - 1 (0: none) as its ... */
	size_t cat_input;                   /* ... input cat_input */
	struct rt_qdq *qdq;                 /* a unit headed here (qdq.c) */
	int cl_in;                          /* reads channels-last inputs */
	int cl_out;                         /* output 0 may be stored channels
					     * last (layout_cl.c) */
	int wide_out;                       /* float16/bfloat16 results may be
					     * kept in float32 (lowp.c) */
};

/* What fold.c's analysis says of a main-graph node. */
enum {
	RT_FOLD_NONE,     /* reads a graph input, random, a call, a body ... */
	RT_FOLD_CONST,    /* its results are the same on every run */
	RT_FOLD_KEEP      /* ... and may be kept (no graph output among them) */
};

struct rt_vidx {
	const struct ir_value *v;
	int slot;
};

struct rt_gplan {
	const struct ir_graph *g;
	struct rt_gplan *parent;            /* lexical parent plan */
	struct rt_vidx *index;              /* sorted by value pointer */
	const struct ir_function *fn;       /* a function body, else NULL */
	size_t n_slots;
	const struct ir_value **slot_value; /* slot -> value */
	size_t n_nodes;
	struct rt_nplan *nodes;
	size_t n_in, n_out;
	int *in;                            /* formal inputs' slots */
	struct rt_ref *out;                 /* formal outputs */
	size_t n_chains;                    /* nodes with an epilogue chain */
	size_t n_cats;                      /* Concats written in place */
	size_t n_qdq;                       /* quantized units (qdq.c) ... */
	size_t n_qdq_skip, *qdq_skip;       /* ... and the nodes they do */
	size_t n_consts;
	int *const_slot;                    /* initializers of this graph */
	struct rt_value **const_val;
	int building;                       /* recursion guard (functions) */
	/* The body of a spec operator run for want of a kernel (plan.c):
	 * the plan owns the parsed function and a node holding the schema
	 * defaults of its attributes, read where the call node has none. */
	const struct ir_spec_function *spec;
	struct ir_function *spec_fn;
	struct ir_node *fn_defaults;
};

struct rt_frame {
	struct rt_gplan *p;
	struct rt_value **vals;
	struct rt_frame *parent;            /* lexical parent; NULL in functions */
	const struct ir_node *call;         /* function frames: the call node */
	struct rt_frame *caller;            /* ... and the frame it ran in */
	int depth;
	size_t next;                        /* the next node (rt_frame_step) */
	unsigned char *skip;                /* per node: done by a chain or a
					     * unit this run (plans with chains
					     * or units only); RT_SKIP_ALIAS:
					     * its input 0 is its result */
	int qdq;                            /* units run this run (qdq.c) */
	struct rt_value **catbuf;           /* per node: a Concat's result,
					     * allocated by its first producer
					     * (plans with such Concats only) */
};

struct rt_pool;

/* A session's constant results kept across runs (fold.c). */
struct rt_fold {
	int64_t bytes;                      /* kept (counted in mem.cur) */
	size_t n_nodes;                     /* nodes whose results are kept */
	int64_t run_peak;                   /* highest peak of a whole run */
	int64_t saved_peak;                 /* mem.peak before this run */
};

#define RT_SHARE_BUCKETS 64
struct rt_shared_ent;
struct rt_session {
	struct ir_model *m;
	struct rt_opts o;
	int threads;
	struct rt_mem mem;
	int64_t lowp_kept;                  /* bytes of lowp_const values */
	struct rt_gplan *main;
	size_t n_plans, cap_plans;
	struct rt_gplan **plans;            /* every graph's plan, by graph */
	size_t n_inputs;                    /* bound graph inputs */
	const struct ir_vinfo **inputs;
	struct rt_stats stats;
	size_t cap_stats;
	int64_t viewed;
	struct rt_pool *pool;
	struct rt_fold fold;
	struct rt_profile *prof;            /* the trace (profile.c), or NULL */
	struct rt_shared_ent *shared[RT_SHARE_BUCKETS];   /* shared.c */
};

/* shared.c: the session's shared caches by key.  _take: the data under
 * key for one more node (counted in the stats: shared_nodes and, bytes
 * as added, shared_bytes), or NULL; _add: p (of `bytes`) kept under key,
 * freed by free_fn (may be NULL) in rt_shared_free, which the session
 * calls after freeing its plans (-1: the key is taken or no memory: p
 * still the caller's). */
void *rt_shared_take(struct rt_session *s, const struct rt_share_key *key);
int rt_shared_add(struct rt_session *s, const struct rt_share_key *key, void *p,
		  void (*free_fn)(void *), int64_t bytes);
void rt_shared_free(struct rt_session *s);

/* plan.c; rt_plan_slot: v's slot in p (-1: not of p's graph);
 * rt_plan_node: n's plan when n is a node of p's graph planned in p (else
 * NULL); rt_plan_sole_use: the plan of v's one use when v has one, read
 * once, in p, and is no graph output (else NULL);
 * rt_nplan_cache_free: drop a node's cache (its memory uncharged). */
int rt_plan_build(struct rt_session *s, struct ir_diag *d);
void rt_plan_free(struct rt_gplan *p);
struct rt_gplan *rt_plan_find(struct rt_session *s, const struct ir_graph *g);
int rt_plan_slot(const struct rt_gplan *p, const struct ir_value *v);
struct rt_nplan *rt_plan_node(struct rt_gplan *p, const struct ir_node *n);
struct rt_nplan *rt_plan_sole_use(struct rt_gplan *p, const struct ir_value *v);
void rt_nplan_cache_free(struct rt_nplan *np);

/* exec.c */
int rt_frame_run(struct rt_session *s, struct rt_frame *f,
		 struct rt_value **ins, size_t n_in, struct rt_value **outs,
		 struct ir_diag *d);
/* rt_frame_run in three steps, for running the main graph node by node
 * (struct rt_run): begin binds constants and inputs (on failure the frame
 * holds nothing); step runs the next node and releases what died, 1 when
 * a node ran, 0 when none is left, or an error; end gives outs a reference
 * per output when rc >= 0 (else NULLs them; outs may then be NULL),
 * releases the frame, and
 * returns rc or the error of collecting the outputs. */
int rt_frame_begin(struct rt_frame *f, struct rt_value **ins, size_t n_in,
		   struct ir_diag *d);
int rt_frame_step(struct rt_session *s, struct rt_frame *f, struct ir_diag *d);
int rt_frame_end(struct rt_frame *f, struct rt_value **outs, int rc,
		 struct ir_diag *d);
const struct ir_attr *rt_frame_attr(struct rt_frame *f,
				    const struct ir_node *n, const char *name);

/* fold.c: constant nodes of the main graph, computed once per session.
 * mark: the static analysis, when the plan is built (sets np->fold).
 * active: may this run keep and reuse results (no observer, weight caches
 * allowed).  bind: a node whose results are kept gets them in the frame
 * instead of running: 1, else 0.  keep: after a node ran, keep its
 * results if it is RT_FOLD_KEEP and the memory limit leaves room (no
 * error: a result not kept is recomputed).  release: drop a node's kept
 * results (plan freed).  run_begin/run_end: bracket each run of the main
 * graph, to measure its peak (ok: the run succeeded). */
void rt_fold_mark(struct rt_session *s, struct rt_gplan *p);
/* 0 for ops whose results are not a function of their inputs (random
 * draws, Dropout, Gradient): never constant. */
int rt_fold_deterministic(const char *op);
/* Is v the same on every run of p (an initializer no graph input
 * overrides, an absent input, a constant node's result)?  After mark. */
int rt_fold_value_const(const struct rt_session *s, const struct rt_gplan *p,
			const struct ir_value *v);
int rt_fold_active(const struct rt_session *s);
int rt_fold_bind(struct rt_session *s, struct rt_frame *f, struct rt_nplan *np);
void rt_fold_keep(struct rt_session *s, struct rt_frame *f, struct rt_nplan *np);
void rt_fold_release(struct rt_nplan *np);
void rt_fold_run_begin(struct rt_session *s);
void rt_fold_run_end(struct rt_session *s, int ok);

/* chain.c: mark finds the main graph's chains when the plan is built;
 * apply, after a node with a chain ran and its dead inputs were released,
 * does the chain's first steps that this run can on its result and moves
 * it to the last such step's slot, marking those steps done in f->skip:
 * 1, or 0 when this run can fuse none (nothing changed: the steps run as
 * nodes).  release frees a node's chain.  off: OPMIG_NO_CHAIN is set
 * (the tests' reference: every step runs as its node); the plan then
 * still finds the chains, so that layout_cl.c stores each result as it
 * would with them (the same kernels run both ways), and drop frees them
 * all before the run.  mark: 0, or IR_ENOMEM (the layout plan would
 * differ without the chains it could not record). */
int rt_chain_mark(struct rt_session *s, struct rt_gplan *p);
int rt_chain_off(void);
void rt_chain_drop(struct rt_gplan *p);
int rt_chain_apply(struct rt_session *s, struct rt_frame *f, struct rt_nplan *np);
void rt_chain_release(struct rt_nplan *np);
void rt_chain_free(struct rt_chain *ch);
/* After np's kernel ran with an epilogue it took (e, or NULL: nothing):
 * when it succeeded (done), np's result moves to the last step's slot and
 * the steps are marked done, as apply does; e is freed. */
void rt_epilogue_end(struct rt_frame *f, const struct rt_nplan *np, struct rt_epilogue *e,
		     int done);

/* catbuf.c: mark finds the main graph's Concats whose producers may
 * write into its result, when the plan is built; record, after such a
 * Concat ran (before its inputs are released), learns its shapes for the
 * next run; release frees what mark made.  rt_cat_out is rt_out_tensor's
 * first try: output i of the node as a view of its region of the
 * Concat's result (f->catbuf, allocated on the first call of a run), or
 * NULL: not this time, allocate as usual. */
void rt_cat_mark(struct rt_session *s, struct rt_gplan *p);
void rt_cat_record(struct rt_frame *f, struct rt_nplan *np);
void rt_cat_release(struct rt_nplan *np);
struct rt_value *rt_cat_out(struct rt_kctx *k, size_t i, int dtype, int rank,
			    const int64_t *dims);

/* layout_cl.c: mark finds, when the plan is built, the main graph's
 * nodes that read channels-last inputs (the ops it lists) and those whose
 * output 0 may be stored so (every reader one of them; not under an
 * observer, a run of chosen nodes or --exact); begin, before any other
 * node (or a function call) runs, puts plain
 * copies of channels-last inputs in k->in (kept in k->plain, which end
 * releases); rt_cl_plain_value: *v made plain (a new reference) if it is
 * stored channels last: a graph's outputs on the way out.  mark: 0, or
 * IR_ENOMEM (no plan rather than another one: the kernels a convolution
 * takes depend on it). */
int rt_cl_mark(struct rt_session *s, struct rt_gplan *p);
int rt_cl_begin(struct rt_kctx *k);
void rt_cl_end(struct rt_kctx *k);
int rt_cl_plain_value(struct rt_mem *mem, struct rt_value **v, struct ir_diag *d);

/* qdq.c: mark finds the main graph's quantized units when the plan is
 * built (after fold.c's mark, before the chains'); begin, at a frame's
 * first step, decides whether this run runs them and marks the nodes they
 * do in f->skip; plan is the plan to run for np (its unit's when units
 * run); release frees what mark made. */
void rt_qdq_mark(struct rt_session *s, struct rt_gplan *p);
void rt_qdq_begin(struct rt_session *s, struct rt_frame *f);
struct rt_nplan *rt_qdq_plan(struct rt_frame *f, struct rt_nplan *np);
void rt_qdq_release(struct rt_gplan *p);
/* qdq_wo.c: does the plan np read its input i as it is when packed
 * (RT_VALUE_PACKED)? */
int rt_qdq_wo_packed_in(const struct rt_nplan *np, size_t i);

/* threads.c */
int rt_pool_new(int threads, struct rt_pool **out);
void rt_pool_free(struct rt_pool *p);

/* chain_act.c: activations written as several nodes, one step each.  The
 * step reading v (its kind, aux nodes, the node whose result it gives) when
 * v's readers are one: NULL when they are none. */
struct rt_nplan *rt_chain_act_use(struct rt_gplan *p, const struct ir_value *v,
				  struct rt_chain_step *st);
/* Its two coefficients from the nodes' constants this run (1), or 0 when
 * they are not at hand or not what the step computes. */
int rt_chain_act_coef(struct rt_frame *f, const struct rt_chain_step *st, float *m, float *a);
/* (chain.c) whether np may be one of a step's nodes; input i of node np
 * as this run has it, or NULL */
int rt_chain_steppable(const struct rt_nplan *np);
const struct rt_value *rt_chain_operand(struct rt_frame *f, const struct rt_nplan *np, size_t i);
void rt_pool_for(struct rt_pool *p, int64_t n, int64_t grain,
		 rt_range_fn fn, void *ctx);

/* Float16/bfloat16 nodes in float32 (lowp.c).  Begin: when the node's op
 * is one computed so and an input is float16 or bfloat16 (one of them),
 * widen those inputs into wide[i] (k->n_in entries, NULL) and point
 * k->in there; returns the dtype (k->lowp), 0 when the node runs as it
 * is, or an error (inputs kept in float32 are shown to the kernel as
 * float32 in place; for a node that cannot take them, begin puts narrowed
 * copies in wide[]).  End, after the kernel (rc its status): round its
 * float32 outputs of that type back and release wide[]; returns rc or an
 * error. */
int rt_lowp_begin(struct rt_kctx *k, struct rt_value **wide);
int rt_lowp_end(struct rt_kctx *k, struct rt_value **wide, int rc);
/* ... mark, when the plan is built: the main graph's nodes whose results
 * may be kept in float32 (RT_VALUE_WIDE; after the chains' and the
 * Concats' marks); narrow_value: *v narrowed (a new reference) if it is
 * kept so: a graph's outputs on the way out. */
void rt_lowp_mark(struct rt_session *s, struct rt_gplan *p);
int rt_lowp_narrow_value(struct rt_mem *mem, struct rt_value **v, struct ir_diag *d);
/* The node's widened constants released (with its plan). */
void rt_lowp_release(struct rt_nplan *np);

/* profile.c: the dtypes and shapes of a node's inputs, taken before it
 * runs (NULL when out of memory); a node run of a graph at depth (0 main)
 * from t0 to t1, taking shapes; a whole run (the clock, rt_now, is in
 * rt_int.h); */
struct rt_profile;
void *rt_profile_shapes(struct rt_value *const *ins, size_t n_in);
void rt_profile_node(struct rt_session *s, const struct ir_node *n, int depth,
		     void *shapes, double t0, double t1);
void rt_profile_begin(struct rt_session *s, double t0);   /* a run starts */
void rt_profile_run(struct rt_session *s, double t0, double t1);
void rt_profile_free(struct rt_profile *p);

#endif
