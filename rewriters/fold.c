/* fold.c: pass "fold-constants": every main-graph node whose inputs are
 * all constant (initializers, or outputs of other such nodes) and whose
 * result is deterministic is evaluated once by the interpreter, and the
 * values other nodes (or the graph's outputs) read become initializers
 * under their own names; the folded nodes go.  Constant nodes become
 * initializers too.  The values come from one run of the folded nodes
 * and the nodes they read (the session's `only` filter: a model whose
 * other nodes fail on seeded inputs still folds), captured by the run's
 * observer; the run stops as soon
 * as the last one is captured.  Nodes whose outputs inference already knows (Shape of a
 * static tensor, and arithmetic on it) are folded the same way.  Results above 16 MiB stay computed unless they are
 * ConstantOfShape fills (weights); blocked DequantizeLinear (quantized
 * weights) is never folded, nor any node reading 8- or 4-bit codes
 * computed while the model is written (Cast and per-axis
 * DequantizeLinear of matmul-nbits' codes).  When the model cannot run (an op
 * without kernel, a dim that needs --dim), nothing is folded and a note
 * says why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"
#include "runtime/inputs.h"
#include "runtime/runtime.h"

#define FOLD_MAX_BYTES (16 << 20)

static const char *const never[] = {
	"Bernoulli", "Dropout", "Multinomial", "RandomNormal", "RandomNormalLike",
	"RandomUniform", "RandomUniformLike", NULL
};

struct fold {
	struct rw_ctx *c;
	struct ir_graph *g;
	char *foldable;              /* per node index */
	char *needed;                /* foldable, or read by a foldable one */
	char *kept;                  /* reads kept codes (reads_codes) */
	size_t n_front;
	struct ir_value **front;     /* values to make initializers */
	struct rt_value **vals;      /* their captured values */
	size_t n_got;                /* how many are captured */
};

static int value_const(const struct fold *f, const struct ir_value *v)
{
	if (!v)
		return 1;                    /* absent optional input */
	if (v->init)   /* an input may override it, except before IR 4 where
			* every initializer had to be listed as an input */
		return !v->is_input || f->c->m->ir_version < 4;
	return v->producer && v->producer->graph == f->g &&
	       f->foldable[v->producer->index];
}

static int small_enough(struct rw_ctx *c, const struct ir_node *n)
{
	for (size_t i = 0; i < n->n_outputs; i++) {
		const struct ir_vtype *t = n->outputs[i] ? rw_type(c, n->outputs[i]) : NULL;
		double numel;

		if (!n->outputs[i])
			continue;
		if (!t || t->is_seq || !t->dtype || t->dtype == IR_DTYPE_STRING ||
		    (numel = rw_static_numel(c, n->outputs[i])) < 0)
			return 0;
		if (8 * numel > FOLD_MAX_BYTES && strcmp(ir_s(n->op_type), "ConstantOfShape"))
			return 0;
	}
	return 1;
}

/* Inference knows every output's values (integer or float). */
static int outputs_known(struct rw_ctx *c, const struct ir_node *n)
{
	size_t k = 0;

	for (size_t i = 0; i < n->n_outputs; i++) {
		const struct ir_vtype *t = n->outputs[i] ? rw_type(c, n->outputs[i]) : NULL;

		if (!n->outputs[i])
			continue;
		if (!t || !(t->has_const || t->has_fconst))
			return 0;
		for (size_t j = 0; t->has_const && j < t->n_const; j++)
			if (t->cval[j].kind != IR_VDIM_VALUE)
				return 0;
		k++;
	}
	return k > 0;
}

/* Integer codes kept for the target (matmul-nbits' per-axis
 * DequantizeLinear and Cast forms, chosen where the target takes them):
 * an 8- or 4-bit initializer computed while the model is written.
 * Folding what reads it, or what is computed from it (inference may know
 * the values of the Cast's Sub, Mul, Reshape and Slice), would compute
 * the weights whole and store them as float, 2 to 8 times the bytes.
 * Nodes come in graph order: f->kept of a producer is known. */
static int reads_codes(const struct fold *f, const struct ir_node *n)
{
	for (size_t i = 0; i < n->n_inputs; i++) {
		const struct ir_value *v = n->inputs[i];
		const struct ir_tensor *t = v ? v->init : NULL;

		if (t && !v->is_input && t->storage == IR_STORE_DERIVED &&
		    (t->dtype == IR_DTYPE_UINT8 || t->dtype == IR_DTYPE_INT8 ||
		     t->dtype == IR_DTYPE_UINT4 || t->dtype == IR_DTYPE_INT4))
			return 1;
		if (v && !t && v->producer && v->producer->graph == f->g &&
		    v->producer->index < f->g->n_nodes && f->kept[v->producer->index])
			return 1;
	}
	return 0;
}

static int can_fold(struct fold *f, const struct ir_node *n)
{
	const char *op = ir_s(n->op_type);

	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
		return 0;
	for (const char *const *p = never; *p; p++)
		if (!strcmp(op, *p))
			return 0;
	/* blocked weights stay quantized: folding would store them as
	 * float, 4 to 16 times the bytes, on targets that take the codes */
	if (!strcmp(op, "DequantizeLinear") && rw_attr_int(n, "block_size", 0) > 0)
		return 0;
	if (f->kept[n->index])
		return 0;
	for (size_t i = 0; i < n->n_attrs; i++)
		if (n->attrs[i]->g || n->attrs[i]->n_graphs)
			return 0;
	if (!n->n_inputs && strcmp(op, "Constant"))
		return 0;
	if (!small_enough(f->c, n))
		return 0;
	if (outputs_known(f->c, n))
		return 1;      /* Shape of a static tensor, and the like */
	for (size_t i = 0; i < n->n_inputs; i++)
		if (!value_const(f, n->inputs[i]))
			return 0;
	return 1;
}

/* Read by a node that stays (or a graph output)? */
static int frontier(const struct fold *f, const struct ir_value *v)
{
	if (ir_graph_is_output(f->g, v))
		return 1;
	for (size_t i = 0; i < v->n_uses; i++) {
		const struct ir_node *u = v->uses[i];

		if (u->graph != f->g || !f->foldable[u->index])
			return 1;
	}
	return 0;
}

static int observe(void *ctx, const struct ir_node *n, size_t k, struct rt_value **slot)
{
	struct fold *f = ctx;

	if (n->graph != f->g || !f->foldable[n->index] || k >= n->n_outputs)
		return 0;
	for (size_t i = 0; i < f->n_front; i++)
		if (f->front[i] == n->outputs[k] && !f->vals[i]) {
			f->vals[i] = rt_value_ref(*slot);
			rt_value_detach(f->vals[i]);   /* outlives the session */
			f->n_got++;
		}
	return f->n_got == f->n_front;   /* all captured: stop the run */
}

static int only_needed(void *ctx, const struct ir_node *n)
{
	const struct fold *f = ctx;

	return n->graph == f->g && f->needed[n->index];
}

/* The folded nodes and what they read: a Shape whose output inference
 * knows may read a value computed from the graph inputs. */
static void mark_needed(struct fold *f)
{
	struct ir_graph *g = f->g;

	for (size_t i = g->n_nodes; i-- > 0;) {
		const struct ir_node *n = g->nodes[i];

		if (!f->foldable[i] && !f->needed[i])
			continue;
		f->needed[i] = 1;
		for (size_t k = 0; k < n->n_inputs; k++) {
			const struct ir_value *v = n->inputs[k];

			if (v && v->producer && v->producer->graph == g)
				f->needed[v->producer->index] = 1;
		}
	}
}

/* One run of the folded nodes and what they need (mostly no graph input
 * at all) capturing the frontier values. */
static int evaluate(struct fold *f, char *why, size_t size)
{
	struct rt_opts o = { .threads = 1, .observe = observe, .observe_ctx = f,
			     .only = only_needed, .only_ctx = f };
	struct rw_sample r;
	struct rt_value **outs = NULL;
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	if ((rc = rw_sample_init(&r, f->c->m, &o, f->c->dims, f->c->n_dims, &d)) < 0)
		goto done;
	if (!(outs = calloc(rt_session_n_outputs(r.s) + 1, sizeof(*outs)))) {
		rc = ir_diag_error(&d, IR_ENOMEM, "out of memory");
		goto done;
	}
	rc = rt_session_run(r.s, r.ins, r.n_ins, outs, &d);
	if (rc == IR_EUSAGE && f->n_got == f->n_front)
		rc = 0;          /* stopped by the observer once all were captured */
	rt_inputs_release(outs, rt_session_n_outputs(r.s));
done:
	if (rc < 0)
		snprintf(why, size, "%.200s", d.msg);
	free(outs);
	rw_sample_release(&r);
	return rc;
}

static int c_ir_bump(struct ir_model *m)
{
	if (m->ir_version >= 4)
		return 0;
	m->ir_version = 4;
	return 1;
}

static int replace(struct fold *f, size_t *changed)
{
	struct ir_graph *g = f->g;
	struct ir_tensor **ts;
	struct ir_diag d;
	int rc = 0;

	ir_diag_init(&d);
	for (size_t i = 0; i < f->n_front; i++)
		if (!f->vals[i] || f->vals[i]->kind != RT_TENSOR)
			return 1;            /* not captured: fold nothing */
	/* the values first: they may view the folded nodes' attributes */
	if (!(ts = calloc(f->n_front + 1, sizeof(*ts))))
		return ir_diag_error(f->c->d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < f->n_front && rc >= 0; i++)
		rc = rt_value_to_ir(f->vals[i], f->front[i]->name, &ts[i], &d);
	if (rc < 0) {
		for (size_t i = 0; i < f->n_front; i++)
			ir_tensor_free(ts[i]);
		free(ts);
		return ir_diag_error(f->c->d, rc, "fold-constants: %s", d.msg);
	}
	/* every foldable node goes; the frontier values become initializers */
	for (size_t i = g->n_nodes; i-- > 0;) {
		struct ir_node *n = g->nodes[i];

		if (!f->foldable[i])
			continue;
		ir_graph_detach_node(g, n);
		ir_node_free(n);
		(*changed)++;
	}
	for (size_t i = 0; i < f->n_front; i++) {
		int r = ir_value_attach_initializer(g, f->front[i], ts[i]);

		ir_graph_drop_value_info(g, f->front[i]);
		if (r < 0 && rc >= 0)
			rc = r;
	}
	free(ts);
	/* initializers that are not graph inputs need IR 4 */
	if (rc >= 0 && c_ir_bump(f->c->m))
		(*changed)++;
	return rc < 0 ? ir_diag_error(f->c->d, rc, "fold-constants: cannot attach a value") : 0;
}

static int run(struct rw_ctx *c, size_t *changed)
{
	struct fold f = { .c = c, .g = c->m->graph };
	struct ir_graph *g = f.g;
	size_t n_fold = 0, n_inner = 0;
	char why[256];
	int rc = 0;

	*changed = 0;
	if (!(f.foldable = calloc(g->n_nodes + 1, 1)) || !(f.needed = calloc(g->n_nodes + 1, 1)) ||
	    !(f.kept = calloc(g->n_nodes + 1, 1)) ||
	    !(f.front = calloc(g->n_values + g->n_nodes + 1, sizeof(*f.front))))
		goto oom;
	for (size_t i = 0; i < g->n_nodes; i++) {
		f.kept[i] = (char)reads_codes(&f, g->nodes[i]);
		if ((f.foldable[i] = (char)can_fold(&f, g->nodes[i])))
			n_fold++;
	}
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct ir_node *n = g->nodes[i];

		if (!f.foldable[i])
			continue;
		n_inner += strcmp(ir_s(n->op_type), "Constant") != 0;
		for (size_t k = 0; k < n->n_outputs; k++)
			if (n->outputs[k] && frontier(&f, n->outputs[k]))
				f.front[f.n_front++] = n->outputs[k];
	}
	if (!n_fold)
		goto done;
	if (!(f.vals = calloc(f.n_front + 1, sizeof(*f.vals))))
		goto oom;
	mark_needed(&f);
	if ((rc = evaluate(&f, why, sizeof(why))) < 0) {
		/* out of memory is an error, not a reason to skip quietly */
		rc = rc == IR_ENOMEM ? ir_diag_error(c->d, rc, "fold-constants: %s", why) :
			rw_note(c, "constant folding skipped: %s", why);
		goto done;
	}
	if ((rc = replace(&f, changed)) > 0) {
		rc = rw_note(c, "constant folding skipped: a constant value was not computed");
		goto done;
	}
	(void)n_inner;
done:
	for (size_t i = 0; f.vals && i < f.n_front; i++)
		rt_value_unref(f.vals[i]);
	free(f.vals);
	free(f.front);
	free(f.foldable);
	free(f.needed);
	free(f.kept);
	return rc;
oom:
	rc = ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	goto done;
}

const struct rw_pass rw_pass_fold_constants = {
	.name = "fold-constants",
	.summary = "evaluate nodes whose inputs are all constant and store their results as initializers",
	.kind = RW_CANON,
	.run = run,
};
