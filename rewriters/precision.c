/* precision.c: pass "fp16" (RW_PRECISION, migrate --precision fp16):
 * weights and activations of the main graph from float32 to float16.
 * A node runs in float16 when its op's signature at the model's opset
 * admits float16 for its float32 data (type constraints bound by its
 * inputs), the target accepts the op in float16, its float32 weights fit
 * float16's range, and it is not numerically sensitive; the others stay
 * float32 behind Casts: Softmax, LogSoftmax, the normalizations whose
 * statistics need range (InstanceNormalization, GroupNormalization,
 * MeanVarianceNormalization, LpNormalization; BatchNormalization's
 * inference form converts; LayerNormalization and RMSNormalization
 * convert with stash_type 1, their statistics in float32 whatever their
 * data, and stay float32 with another stash_type, as does onnxruntime's
 * com.microsoft SkipSimplifiedLayerNormalization where a target keeps it:
 * its kernel takes float16 and computes the statistics in float32), the statistics of
 * decomposed LayerNorms and RMS norms (precision_norm.c: the mean, the
 * square, its mean, the epsilon, the square root and the division stay
 * float32, x is cast up once and the normalized result down, the Mul by
 * gamma and the Add of beta convert, as torch's half export has them), Exp,
 * Pow, Log, Softplus, CumSum, Range, ReduceProd, ReduceLogSumExp, sums and
 * means over more than RW_FP16_MAX_REDUCE elements (ReduceSum, ReduceMean,
 * ReduceL1/L2, ReduceSumSquare, ReduceLogSum, GlobalAveragePool,
 * GlobalLpPool) or over an unknown count, the nodes a decomposition of
 * one of those ops made (by their provenance), nodes turning float32 data into
 * int64, int32 or bool (comparisons, ArgMax, TopK), ops
 * of other domains, nodes with subgraphs, and nodes whose float32 output
 * type an attribute sets (Cast to float, Constant; a Cast to float32 read
 * only in float16 casts to float16 instead); Resize keeps roi and scales
 * in float32.  Initializers read only in float16 are converted in place
 * (same name); read both ways, a float16 copy is added.  Graph inputs and
 * outputs keep float32 (Casts at the boundary) unless --fp16-io, which
 * makes them float16 and records the change in the name map.  A note
 * lists the nodes kept in float32, by op and reason.  A sensitive op the
 * target takes only in float16 converts anyway (kept in float32 it would
 * stay blocked), with its own note.  Shape, Size and
 * Casts to integers read their input in whichever type it has. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/dtype_int.h"
#include "runtime/runtime.h"

#define RW_FP16_MAX_REDUCE 256
#define FP16_MAX 65504.0

enum pmode { P_NEUTRAL, P_HALF, P_KEEP, P_ANY };

struct pnode {
	enum pmode mode;
	size_t n_conv;
	const char *conv[8];          /* type constraints converted */
	const char *why;              /* P_KEEP: static reason */
	int forced;                   /* sensitive, but the target has no
				       * float32 form of it */
	int stash;                    /* a norm op computing its statistics
				       * in float32 whatever its data */
};

struct prec {
	struct rw_ctx *c;
	struct ir_graph *g;
	struct pnode *nodes;
	size_t n_nodes;                /* classified (Casts come after) */
	const char **stats;            /* per node: a decomposed norm's
					* statistics (precision_norm.c) */
	struct rw_fp16_norms norms;
};

/* Ops kept in float32 whatever their data (sorted, bsearch). */
static const char *const sensitive[] = {
	"CumSum", "Exp", "GroupNormalization", "InstanceNormalization",
	"Log", "LogSoftmax", "LpNormalization",
	"MeanVarianceNormalization", "Pow", "Range",
	"ReduceLogSumExp", "ReduceProd", "Softmax", "Softplus",
};

/* Norms whose stash_type (default 1, float32) sets the type their
 * statistics are computed in: float16 data keeps float32 statistics
 * (sorted, bsearch).  A decomposition of one stays float32 as a
 * sensitive op's does. */
static const char *const stash_norms[] = {
	"LayerNormalization", "RMSNormalization",
};
#define N_STASH (sizeof(stash_norms) / sizeof(*stash_norms))

/* The op a node was decomposed from, by its provenance ("opmig: PASS
 * from NODE (OP)"), into buf; "" when none. */
static const char *origin_op(const struct ir_node *n, char *buf, size_t size)
{
	const char *d = ir_s(n->doc), *open = strrchr(d, '(');
	size_t len = strlen(d);

	buf[0] = 0;
	if (strncmp(d, "opmig: ", 7) || !open || len < 2 || d[len - 1] != ')')
		return buf;
	snprintf(buf, size, "%.*s", (int)(d + len - 1 - open - 1), open + 1);
	return buf;
}

/* Sums and means: kept when they reduce many elements into one. */
static const char *const sums[] = {
	"GlobalAveragePool", "GlobalLpPool", "ReduceL1", "ReduceL2", "ReduceLogSum",
	"ReduceMean", "ReduceSum", "ReduceSumSquare",
};

static int str_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

static int in_list(const char *op, const char *const *list, size_t n)
{
	return bsearch(op, list, n, sizeof(*list), str_cmp) != NULL;
}

/* onnxruntime's com.microsoft norms a target may keep (sorted): their
 * CPU kernels take float16 T and compute the statistics in float32
 * (SkipSimplifiedLayerNormalization has no stash_type: always), so they
 * convert as the stash_norms do; their mean and inv_std_var outputs (U)
 * stay float32.  (onnxruntime registers SimplifiedLayerNormalization in
 * the default domain only, where expand-simplified-ln lowers it: no
 * com.microsoft one runs there, so none is converted.) */
static const char *const ms_norms[] = {
	"SkipSimplifiedLayerNormalization",
};
#define N_MS_NORMS (sizeof(ms_norms) / sizeof(*ms_norms))

static int ms_norm(const struct ir_node *n)
{
	return n->domain && !strcmp(n->domain, "com.microsoft") &&
	       in_list(ir_s(n->op_type), ms_norms, N_MS_NORMS);
}

/* The signature the pass reads: the default domain's, or one of
 * ms_norms'. */
static const struct ir_op_schema *pschema(const struct rw_ctx *c, const struct ir_node *n)
{
	int64_t v;

	if (!ms_norm(n))
		return rw_dt_schema(c, n);
	v = ir_model_opset(c->m, "com.microsoft");
	return ir_registry_find("com.microsoft", ir_s(n->op_type), v > 0 ? v : 1);
}

/* Inputs that keep float32 (parameters, not data). */
static int param_input(const struct ir_node *n, size_t i)
{
	const char *op = ir_s(n->op_type);

	return (!strcmp(op, "Resize") && (i == 1 || i == 2)) ||
	       (!strcmp(op, "Upsample") && i == 1);
}

/* The largest finite magnitude's bits in a piece of float32s.  For
 * non-negative floats the integer order is the float order, and the
 * finite ones are below 0x7f800000 (a loop the compiler vectorizes). */
static int max_piece(const uint8_t *raw, size_t len, void *ctx)
{
	uint32_t *m = ctx, lane[8] = { 0 };
	size_t n = len / 4;

	for (size_t i = 0; i < n; i += 8) {
		uint32_t u[8] = { 0 };

		if (n - i >= 8)
			memcpy(u, raw + 4 * i, sizeof(u));
		else
			memcpy(u, raw + 4 * i, 4 * (n - i));
		for (int k = 0; k < 8; k++) {
			uint32_t a = u[k] & 0x7fffffffu;

			lane[k] = a < 0x7f800000u && a > lane[k] ? a : lane[k];
		}
	}
	for (int k = 0; k < 8; k++)
		*m = lane[k] > *m ? lane[k] : *m;
	return 0;
}

/* Largest finite magnitude of a float32 initializer, or -1; read piece by
 * piece where it lies (external data straight from the file). */
static double init_max(struct ir_value *v)
{
	struct ir_diag d;
	uint32_t m = 0;
	float f;

	ir_diag_init(&d);
	if (!v->init || v->init->dtype != IR_DTYPE_FLOAT ||
	    ir_tensor_stream(v->init, max_piece, &m, &d) < 0)
		return -1;
	memcpy(&f, &m, 4);
	return f;
}

/* Is n part of a decomposition of a sensitive op (kept whole in float32,
 * its affine part too, by its provenance)? */
static int from_sensitive(const struct ir_node *n)
{
	char from[64];

	return in_list(origin_op(n, from, sizeof(from)), sensitive,
		       sizeof(sensitive) / sizeof(*sensitive)) ||
	       in_list(from, stash_norms, N_STASH);
}

static int has_conv(const struct pnode *pn, const char *type)
{
	for (size_t i = 0; type && i < pn->n_conv; i++)
		if (!strcmp(pn->conv[i], type))
			return 1;
	return 0;
}

static void classify(struct prec *p, const struct ir_node *n, struct pnode *pn)
{
	const struct ir_op_schema *s;
	const char *op = ir_s(n->op_type);
	int any32 = 0, in32 = 0, out_int = 0, attr_out = 0, only16;
	const char *dom;

	for (size_t i = 0; i < n->n_inputs + n->n_outputs; i++) {
		int input = i < n->n_inputs;
		const struct ir_value *v = input ? n->inputs[i] : n->outputs[i - n->n_inputs];
		int dt = v ? rw_dt_dtype(p->c, v) : 0;

		any32 |= dt == IR_DTYPE_FLOAT;
		in32 |= input && dt == IR_DTYPE_FLOAT;
		out_int |= !input && dt && !rw_dtype_is_float(dt);
	}
	pn->mode = P_KEEP;
	if (!any32) {
		pn->mode = P_NEUTRAL;
		return;
	}
	if (!(s = pschema(p->c, n))) {
		pn->why = "op of another domain, unknown op or subgraphs";
		return;
	}
	for (size_t i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] && n->inputs[i]->sparse_init) {
			pn->why = "reads a sparse initializer (kept as it is)";
			return;
		}
	if (!strcmp(op, "Shape") || !strcmp(op, "Size") || (!strcmp(op, "Cast") && out_int)) {
		/* reads no values, or converts float16 to integers exactly
		 * as it converts the float32 the float16 would become */
		pn->mode = P_ANY;
		return;
	}
	/* a target that takes the op only in float16: kept in float32 it
	 * would stay blocked, so sensitivity gives way (and a note says so) */
	dom = ms_norm(n) ? "com.microsoft" : "";
	only16 = p->c->target && !rw_target_accepts(p->c, dom, op, IR_DTYPE_FLOAT) &&
		 rw_target_accepts(p->c, dom, op, IR_DTYPE_FLOAT16);
	if (p->stats[n->index])
		pn->why = p->stats[n->index];
	else if (in_list(op, sensitive, sizeof(sensitive) / sizeof(*sensitive)))
		pn->why = "numerically sensitive";
	else if (from_sensitive(n))
		pn->why = "part of a numerically sensitive op's decomposition (its statistics)";
	else if ((in_list(op, stash_norms, N_STASH) && (!n->domain || !*n->domain)) ||
		 ms_norm(n)) {
		if (rw_attr_int(n, "stash_type", 1) != IR_DTYPE_FLOAT)
			pn->why = "its stash_type asks for statistics in a type other than float32";
		else
			pn->stash = 1;
	}
	else if (in_list(op, sums, sizeof(sums) / sizeof(*sums))) {
		double a = rw_static_numel(p->c, n->inputs[0]);
		double b = rw_static_numel(p->c, n->outputs[0]);

		if (a < 0 || b <= 0 || a / b > RW_FP16_MAX_REDUCE)
			pn->why = "sums more than " "256" " elements (or an unknown count)";
	}
	if (pn->why && !only16)
		return;
	pn->forced = pn->why != NULL;
	pn->why = NULL;
	if (in32 && out_int) {
		pn->why = "turns float data into integers or booleans";
		return;
	}
	if (p->c->target && !rw_target_accepts(p->c, dom, op, IR_DTYPE_FLOAT16)) {
		pn->why = "the target does not take it in float16";
		return;
	}
	for (size_t i = 0; i < n->n_inputs + n->n_outputs; i++) {
		int input = i < n->n_inputs;
		size_t k = input ? i : i - n->n_inputs;
		const struct ir_value *v = input ? n->inputs[k] : n->outputs[k];
		const char *type = rw_dt_slot(s, input, k);

		if (!v || rw_dt_dtype(p->c, v) != IR_DTYPE_FLOAT || !rw_dt_is_var(type) ||
		    (input && param_input(n, k)) || has_conv(pn, type) || pn->n_conv >= 8 ||
		    !rw_dt_admits(s, type, IR_DTYPE_FLOAT16))
			continue;
		if (!rw_dt_var_bound_by_input(s, n, type)) {
			attr_out = 1;
			continue;
		}
		pn->conv[pn->n_conv++] = type;
	}
	for (size_t i = 0; i < n->n_inputs; i++)
		if (param_input(n, i))
			for (size_t q = 0; q < pn->n_conv; q++)
				if (!strcmp(pn->conv[q], rw_dt_slot(s, 1, i) ? rw_dt_slot(s, 1, i) : ""))
					pn->conv[q] = pn->conv[--pn->n_conv];
	if (!pn->n_conv) {
		pn->why = attr_out ? "an attribute sets its float32 output's type" :
			  "its signature has no float16 form for its float32 data";
		return;
	}
	for (size_t i = 0; i < n->n_inputs; i++) {
		struct ir_value *v = n->inputs[i];

		if (v && rw_dt_const_init(p->c, v) && rw_dt_dtype(p->c, v) == IR_DTYPE_FLOAT &&
		    has_conv(pn, rw_dt_slot(s, 1, i)) && !p->c->dry_run && init_max(v) > FP16_MAX) {
			pn->why = "a weight exceeds float16's range";
			return;
		}
	}
	pn->mode = P_HALF;
}

/* Does input j of u need float16? */
static int wants16(struct prec *p, const struct ir_node *u, size_t j)
{
	const struct pnode *pn = u->index < p->n_nodes ? &p->nodes[u->index] : NULL;
	const struct ir_op_schema *s;

	if (u->graph != p->g || u->index >= p->n_nodes || !pn || pn->mode != P_HALF ||
	    !(s = pschema(p->c, u)))
		return 0;
	return has_conv(pn, rw_dt_slot(s, 1, j));
}

static int wants32(struct prec *p, const struct ir_node *u)
{
	return u->graph != p->g || u->index >= p->n_nodes || p->nodes[u->index].mode != P_ANY;
}

struct use {
	struct ir_node *u;
	size_t j;
};

/* Split v's reads into those needing float16 and those needing float32. */
static int split_uses(struct prec *p, struct ir_value *v, struct use **u16, size_t *n16,
		      struct use **u32, size_t *n32)
{
	*n16 = *n32 = 0;
	*u16 = calloc(v->n_uses * 4 + 1, sizeof(**u16));
	*u32 = calloc(v->n_uses * 4 + 1, sizeof(**u32));
	if (!*u16 || !*u32)
		return ir_diag_error(p->c->d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < v->n_uses; i++) {
		struct ir_node *u = v->uses[i];
		int dup = 0;

		for (size_t q = 0; q < i; q++)
			dup |= v->uses[q] == u;
		if (dup)
			continue;
		if (u->graph != p->g) {
			(*u32)[(*n32)++] = (struct use){ u, (size_t)-1 };
			continue;
		}
		for (size_t j = 0; j < u->n_inputs; j++) {
			if (u->inputs[j] != v)
				continue;
			if (wants16(p, u, j))
				(*u16)[(*n16)++] = (struct use){ u, j };
			else if (wants32(p, u))
				(*u32)[(*n32)++] = (struct use){ u, j };
		}
	}
	return 0;
}

static int rewire(struct prec *p, const struct use *us, size_t n, struct ir_value *to)
{
	for (size_t i = 0; i < n; i++)
		if (us[i].j != (size_t)-1 && ir_node_set_input(us[i].u, us[i].j, to) < 0)
			return ir_diag_error(p->c->d, IR_ENOMEM, "out of memory");
	return 0;
}

static void declare_vi(struct ir_graph *g, const struct ir_value *v, int dtype)
{
	for (size_t i = 0; i < g->n_value_info; i++)
		if (g->value_info[i].value == v && g->value_info[i].type &&
		    g->value_info[i].type->kind == IR_TYPE_TENSOR)
			g->value_info[i].type->elem_type = dtype;
}

/* v, read only in float16, made by a ConstantOfShape of a float32 value
 * (kept float32: its attribute sets the type): the node fills float16
 * itself, the value rounded to it and a finite one past float16's range
 * saturated to +-65504.  A Cast would turn float32's lowest, the mask
 * value transformers exports (torch.finfo(float32).min), into -inf,
 * and -inf times the 0 of the causal mask's comparison is NaN; torch's
 * own half export writes float16's lowest there.  1 done (*rc: 0 or an
 * error), 0 not such a value. */
static int fill16(struct prec *p, struct ir_value *v, int *rc)
{
	struct ir_node *n = v->producer;
	const struct ir_attr *a;
	const uint8_t *raw;
	size_t len;
	struct ir_tensor *t32, *t16;
	float f;

	*rc = 0;
	if (!n || n->graph != p->g || n->index >= p->n_nodes || n->n_outputs != 1 ||
	    strcmp(ir_s(n->op_type), "ConstantOfShape") || (n->domain && *n->domain) ||
	    !(a = ir_node_attr(n, "value")) || !a->t || a->t->dtype != IR_DTYPE_FLOAT ||
	    ir_tensor_numel(a->t) != 1 || ir_tensor_data(a->t, &raw, &len, NULL) < 0 ||
	    len != sizeof(f))
		return 0;
	memcpy(&f, raw, sizeof(f));
	if (isfinite(f) && fabsf(f) > (float)FP16_MAX)
		f = f < 0 ? -(float)FP16_MAX : (float)FP16_MAX;
	if (!(t32 = ir_tensor_new_raw("value", IR_DTYPE_FLOAT, (const int64_t[]){ 1 }, 1, &f,
				      sizeof(f)))) {
		*rc = ir_diag_error(p->c->d, IR_ENOMEM, "out of memory");
		return 1;
	}
	t16 = rw_dt_convert_tensor(p->c, t32, IR_DTYPE_FLOAT16, "value");
	ir_tensor_free(t32);
	if (!t16) {
		*rc = p->c->d->status;
		return 1;
	}
	if (ir_node_set_tensor(n, "value", t16) < 0) {   /* (frees t16) */
		*rc = ir_diag_error(p->c->d, IR_ENOMEM, "out of memory");
		return 1;
	}
	declare_vi(p->g, v, IR_DTYPE_FLOAT16);
	p->nodes[n->index].mode = P_HALF;
	return 1;
}

static int convert_value(struct prec *p, struct ir_value *v, size_t *changed)
{
	struct rw_ctx *c = p->c;
	struct ir_graph *g = p->g;
	struct use *u16 = NULL, *u32 = NULL;
	size_t n16, n32;
	int out = ir_graph_is_output(g, v), rc, home16 = 0;
	char hint[300];

	if ((rc = split_uses(p, v, &u16, &n16, &u32, &n32)) < 0)
		goto cleanup;
	if (v->producer) {
		struct ir_node *pr = v->producer;
		const struct ir_op_schema *s = pschema(c, pr);
		size_t k = 0;

		while (k < pr->n_outputs && pr->outputs[k] != v)
			k++;
		home16 = pr->graph == g && pr->index < p->n_nodes &&
			 p->nodes[pr->index].mode == P_HALF && s &&
			 has_conv(&p->nodes[pr->index], rw_dt_slot(s, 0, k));
		if (home16 && ((out && !c->fp16_io) || rw_dt_captured(v))) {
			/* v keeps float32 under its name: the node writes a
			 * float16 value, a Cast makes v */
			struct ir_value *f;

			snprintf(hint, sizeof(hint), "%.200s_fp16", ir_s(v->name));
			if (!(f = rw_dt_split_output(c, g, pr, k, hint)) ||
			    !rw_dt_cast(c, g, f, IR_DTYPE_FLOAT, v, NULL)) {
				rc = c->d->status;
				goto cleanup;
			}
			rc = rewire(p, u16, n16, f);
			(*changed)++;
			goto cleanup;
		}
		if (!home16 && out && c->fp16_io) {
			/* a float32 result leaves as float16 */
			struct ir_value *f;

			snprintf(hint, sizeof(hint), "%.200s_fp32", ir_s(v->name));
			if (!(f = rw_dt_split_output(c, g, pr, k, hint)) ||
			    !rw_dt_cast(c, g, f, IR_DTYPE_FLOAT16, v, NULL)) {
				rc = c->d->status;
				goto cleanup;
			}
			rw_dt_declare(g, v, IR_DTYPE_FLOAT16);
			if ((rc = val_map_add(&c->map, VAL_MAP_OUTPUT, ir_s(v->name), ir_s(v->name),
					      NULL, 0, IR_DTYPE_FLOAT16, c->d)) < 0 ||
			    (rc = rewire(p, u32, n32, f)) < 0)
				goto cleanup;
			(*changed)++;
			goto cleanup;
		}
	} else if (v->is_input && !v->init && c->fp16_io) {
		home16 = 1;
		rw_dt_declare(g, v, IR_DTYPE_FLOAT16);
		if ((rc = val_map_add(&c->map, VAL_MAP_INPUT, ir_s(v->name), ir_s(v->name), NULL,
				      0, IR_DTYPE_FLOAT16, c->d)) < 0)
			goto cleanup;
		(*changed)++;
	} else if (rw_dt_const_init(c, v)) {
		if (!n16)
			goto cleanup;
		(*changed)++;
		if (!n32 && !out) {
			declare_vi(g, v, IR_DTYPE_FLOAT16);
			rc = rw_dt_convert_init(c, g, v, IR_DTYPE_FLOAT16);
		} else {
			struct ir_value *h;

			snprintf(hint, sizeof(hint), "%.200s_fp16", ir_s(v->name));
			rc = (h = rw_dt_copy_init(c, g, v, IR_DTYPE_FLOAT16, hint)) ?
			     rewire(p, u16, n16, h) : c->d->status;
		}
		goto cleanup;
	}
	if (home16) {
		if (v->producer) {
			declare_vi(g, v, IR_DTYPE_FLOAT16);
			(*changed)++;
		}
		if (out && (rw_dt_declare(g, v, IR_DTYPE_FLOAT16),
			    (rc = val_map_add(&c->map, VAL_MAP_OUTPUT, ir_s(v->name), ir_s(v->name),
					      NULL, 0, IR_DTYPE_FLOAT16, c->d)) < 0))
			goto cleanup;
		if (n32) {
			struct ir_value *f;

			snprintf(hint, sizeof(hint), "%.200s_fp32", ir_s(v->name));
			if (!(f = rw_dt_cast(c, g, v, IR_DTYPE_FLOAT, NULL, hint))) {
				rc = c->d->status;
				goto cleanup;
			}
			rc = rewire(p, u32, n32, f);
		}
	} else if (n16 && !n32 && !out && !rw_dt_captured(v) && v->producer &&
		   v->producer->graph == g && v->producer->index < p->n_nodes &&
		   !strcmp(ir_s(v->producer->op_type), "Cast") && rw_dt_schema(c, v->producer)) {
		/* a Cast to float32 read only in float16 casts to float16 */
		if ((rc = ir_node_set_int(v->producer, "to", IR_DTYPE_FLOAT16)) < 0) {
			rc = ir_diag_error(c->d, IR_ENOMEM, "out of memory");
			goto cleanup;
		}
		declare_vi(g, v, IR_DTYPE_FLOAT16);
		p->nodes[v->producer->index].mode = P_HALF;
		(*changed)++;
	} else if (n16 && !n32 && !out && !rw_dt_captured(v) && fill16(p, v, &rc)) {
		(*changed)++;
	} else if (n16) {
		struct ir_value *h;

		snprintf(hint, sizeof(hint), "%.200s_fp16", ir_s(v->name));
		if (!(h = rw_dt_cast(c, g, v, IR_DTYPE_FLOAT16, NULL, hint))) {
			rc = c->d->status;
			goto cleanup;
		}
		rc = rewire(p, u16, n16, h);
		(*changed)++;
	}
cleanup:
	free(u16);
	free(u32);
	return rc;
}

/* One note per (op, reason) of the nodes kept in float32. */
static int report(struct prec *p, size_t n_half)
{
	struct ir_graph *g = p->g;
	char *done = calloc(g->n_nodes + 1, 1);
	size_t kept = 0;
	int rc = 0;

	if (!done)
		return ir_diag_error(p->c->d, IR_ENOMEM, "out of memory");
	if (p->norms.n_ln)
		rc = rw_note(p->c, "fp16: %zu layer norm%s (first at '%s') keep%s the statistics "
			     "in float32 (x cast up once, the normalized result cast down, gamma "
			     "and beta in float16): a square of a value above 256 overflows "
			     "float16 (65504)", p->norms.n_ln, p->norms.n_ln == 1 ? "" : "s",
			     ir_s(p->norms.first_ln->name), p->norms.n_ln == 1 ? "s" : "");
	if (p->norms.n_rms && rc == 0)
		rc = rw_note(p->c, "fp16: %zu RMS norm%s (first at '%s') keep%s the statistics in "
			     "float32 (x cast up once, the normalized result cast down, gamma in "
			     "float16): a square of a value above 256 overflows float16 (65504)",
			     p->norms.n_rms, p->norms.n_rms == 1 ? "" : "s",
			     ir_s(p->norms.first_rms->name), p->norms.n_rms == 1 ? "s" : "");
	for (size_t i = 0; i < p->n_nodes && rc == 0; i++) {
		const struct ir_node *n = g->nodes[i];
		size_t k = 0;

		if (p->nodes[i].mode != P_HALF || !p->nodes[i].stash || done[i])
			continue;
		for (size_t j = i; j < p->n_nodes; j++)
			if (p->nodes[j].mode == P_HALF && p->nodes[j].stash && !done[j] &&
			    !strcmp(ir_s(g->nodes[j]->op_type), ir_s(n->op_type))) {
				done[j] = 1;
				k++;
			}
		rc = rw_note(p->c, "fp16: %zu %s node%s run%s in float16 with float32 statistics "
			     "(first '%s'; %s)", k, ir_s(n->op_type), k == 1 ? "" : "s",
			     k == 1 ? "s" : "", ir_s(n->name),
			     !strcmp(ir_s(n->op_type), "SkipSimplifiedLayerNormalization") ?
			     "onnxruntime's kernel computes them in float32" : "stash_type 1");
	}
	for (size_t i = 0; i < p->n_nodes && rc == 0; i++) {
		const struct ir_node *n = g->nodes[i];
		size_t k = 0;

		if (p->nodes[i].mode != P_KEEP || done[i])
			continue;
		for (size_t j = i; j < p->n_nodes; j++)
			if (p->nodes[j].mode == P_KEEP && !done[j] &&
			    !strcmp(ir_s(g->nodes[j]->op_type), ir_s(n->op_type)) &&
			    p->nodes[j].why == p->nodes[i].why) {
				done[j] = 1;
				k++;
			}
		kept += k;
		rc = rw_note(p->c, "fp16: %zu %s node%s stay%s float32 (first '%s'): %s", k,
			     ir_s(n->op_type), k == 1 ? "" : "s", k == 1 ? "s" : "",
			     ir_s(n->name), p->nodes[i].why);
	}
	for (size_t i = 0; i < p->n_nodes && rc == 0; i++) {
		const struct ir_node *n = g->nodes[i];
		size_t k = 0;

		if (p->nodes[i].mode != P_HALF || !p->nodes[i].forced || done[i])
			continue;
		for (size_t j = i; j < p->n_nodes; j++)
			if (p->nodes[j].mode == P_HALF && p->nodes[j].forced && !done[j] &&
			    !strcmp(ir_s(g->nodes[j]->op_type), ir_s(n->op_type))) {
				done[j] = 1;
				k++;
			}
		rc = rw_note(p->c, "fp16: %zu %s node%s run%s in float16 (first '%s') although "
			     "numerically sensitive: the target has no float32 form", k,
			     ir_s(n->op_type), k == 1 ? "" : "s", k == 1 ? "s" : "", ir_s(n->name));
	}
	if (rc == 0)
		rc = rw_note(p->c, "fp16: %zu node%s run in float16, %zu stay float32; inputs and outputs %s",
			     n_half, n_half == 1 ? "" : "s", kept,
			     p->c->fp16_io ? "are float16 (--fp16-io)" : "stay float32");
	free(done);
	return rc;
}

static int run(struct rw_ctx *c, size_t *changed)
{
	struct prec p = { .c = c, .g = c->m->graph };
	struct ir_graph *g = p.g;
	struct ir_value **vals = NULL;
	size_t n_vals = g->n_values, n_half = 0;
	int rc = 0;

	*changed = 0;
	if (!(p.nodes = calloc(g->n_nodes + 1, sizeof(*p.nodes))) ||
	    !(p.stats = calloc(g->n_nodes + 1, sizeof(*p.stats))) ||
	    !(vals = calloc(n_vals + 1, sizeof(*vals)))) {
		rc = ir_diag_error(c->d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	p.n_nodes = g->n_nodes;
	if ((rc = rw_fp16_norm_stats(c, g, p.stats, from_sensitive, &p.norms)) < 0)
		goto cleanup;
	for (size_t i = 0; i < g->n_nodes; i++) {
		classify(&p, g->nodes[i], &p.nodes[i]);
		n_half += p.nodes[i].mode == P_HALF;
	}
	/* the values as they are now (converting adds some) */
	for (size_t i = 0; i < n_vals; i++)
		vals[i] = g->value_list[i];
	for (size_t i = 0; i < n_vals && rc == 0; i++)
		if (rw_dt_dtype(c, vals[i]) == IR_DTYPE_FLOAT && !vals[i]->sparse_init)
			rc = convert_value(&p, vals[i], changed);
	n_half = 0;            /* Casts retargeted to float16 count too */
	for (size_t i = 0; i < p.n_nodes; i++)
		n_half += p.nodes[i].mode == P_HALF;
	if (rc == 0)
		rc = report(&p, n_half);
	if (rc == 0 && n_half && c->dry_run)
		rc = rw_note(c, "fp16: weights not read in a dry run; a node whose weight exceeds float16's range (65504) stays float32 when the model is migrated");
	if (rc == 0 && *changed)
		rc = rw_dt_finish(c, g);
cleanup:
	free(vals);
	free(p.stats);
	free(p.nodes);
	return rc;
}

const struct rw_pass rw_pass_fp16 = {
	.name = "fp16",
	.summary = "weights and activations to float16, numerically sensitive ops kept in float32 behind Casts",
	.kind = RW_PRECISION,
	.run = run,
};
