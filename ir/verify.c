/* verify.c: structural checks of a loaded model with messages that name the
 * node and op: undefined inputs, missing opset imports, attribute kinds that
 * contradict their declared type or the schema, missing required attributes
 * and inputs, attributes a function call passes by reference with the wrong
 * type, bad dims and dtypes, payload sizes that do not match dims, recursive
 * calls, and cycles; out-of-order nodes are sorted (a warning). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir_int.h"
#include "ir/registry.h"

struct fntab;

struct vctx {
	struct ir_model *m;
	struct ir_diag *d;
	const struct ir_function *fn;  /* set while checking a function body */
	const struct fntab *fns;       /* the model's functions */
	const char *where;             /* "node 'x' (Op): " prefix or "" */
	char buf[300];
};

static int check_tensor(struct vctx *c, const struct ir_tensor *t)
{
	const struct ir_dtype_info *di;
	int64_t n, want;

	if (!t)
		return 0;
	for (size_t i = 0; i < t->n_dims; i++)
		if (t->dims[i] < 0)
			return diag_error(c->d, "%stensor '%s' has negative dim %lld",
					  c->where, ir_s(t->name), (long long)t->dims[i]);
	if (!(di = ir_dtype_get(t->dtype)))
		return diag_error(c->d, "%stensor '%s' has unknown data type %d",
				  c->where, ir_s(t->name), t->dtype);
	if ((n = ir_tensor_numel(t)) < 0 ||
	    (t->dtype != IR_DTYPE_STRING && ir_dtype_raw_size(t->dtype, n) < 0))
		return diag_error(c->d, "%stensor '%s': dims overflow the element count",
				  c->where, ir_s(t->name));
	if ((t->present & IR_TENSOR_HAS_RAW) && t->field != IR_FIELD_NONE)
		return diag_error(c->d, "%stensor '%s' has both raw_data and typed data",
				  c->where, ir_s(t->name));
	switch (t->storage) {
	case IR_STORE_RAW:
		want = ir_dtype_raw_size(t->dtype, n);
		if (t->dtype == IR_DTYPE_STRING)
			return diag_error(c->d, "%stensor '%s': string tensors cannot use raw_data",
					  c->where, ir_s(t->name));
		if ((int64_t)t->raw_len != want)
			return diag_error(c->d, "%stensor '%s': raw_data has %zu bytes, dims x element size is %lld",
					  c->where, ir_s(t->name), t->raw_len, (long long)want);
		break;
	case IR_STORE_TYPED:
		if (t->field != di->field)
			return diag_error(c->d, "%stensor '%s': %s data stored in the wrong typed field",
					  c->where, ir_s(t->name), di->name);
		want = di->bits == 4 ? -1 : n * (int64_t)di->per_field;
		if (di->bits == 4 ? (t->n_typed != (size_t)n &&
				     t->n_typed != (size_t)(n / 2 + (n & 1))) :
		    (int64_t)t->n_typed != want)
			return diag_error(c->d, "%stensor '%s': %zu stored values, dims need %lld",
					  c->where, ir_s(t->name), t->n_typed,
					  (long long)(want < 0 ? n : want));
		break;
	case IR_STORE_NONE:
		if (n != 0 && !(t->present & IR_TENSOR_HAS_SEGMENT))
			return diag_error(c->d, "%stensor '%s' has %lld elements but no data",
					  c->where, ir_s(t->name), (long long)n);
		break;
	case IR_STORE_EXTERNAL:
		break; /* bounds checked when binding the file */
	case IR_STORE_DERIVED:
		if (!t->ops && ir_tensor_numel(t->src) != n)
			return diag_error(c->d, "%stensor '%s': %lld elements derived from %lld",
					  c->where, ir_s(t->name), (long long)n,
					  (long long)ir_tensor_numel(t->src));
		break;
	}
	return 0;
}

static int check_sparse(struct vctx *c, const struct ir_sparse *s)
{
	int rc;

	if (!s)
		return 0;
	if ((rc = check_tensor(c, s->values)) < 0)
		return rc;
	return check_tensor(c, s->indices);
}

static int check_type(struct vctx *c, const char *what, const char *name,
		      const struct ir_type *t)
{
	for (; t; t = t->inner) {
		if ((t->present & IR_TYPE_HAS_ELEM) && t->elem_type != 0 &&
		    !ir_dtype_get(t->elem_type))
			return diag_error(c->d, "%s'%s' has unknown data type %d",
					  what, name, t->elem_type);
		for (size_t i = 0; i < t->shape.n_dims; i++)
			if (t->shape.dims[i].kind == IR_DIM_VALUE &&
			    t->shape.dims[i].value < 0)
				return diag_error(c->d, "%s'%s' has negative dim %lld",
						  what, name,
						  (long long)t->shape.dims[i].value);
	}
	return 0;
}

/* Which field kinds an attribute actually carries, as a type code; 0 if none,
 * -1 if several. */
static int attr_filled(const struct ir_attr *a)
{
	int k = 0, n = 0;

#define HAS(cond, code) if (cond) { k = code; n++; }
	HAS(a->present & IR_ATTR_HAS_F, IR_ATTR_FLOAT)
	HAS(a->present & IR_ATTR_HAS_I, IR_ATTR_INT)
	HAS(a->present & IR_ATTR_HAS_S, IR_ATTR_STRING)
	HAS(a->t != NULL, IR_ATTR_TENSOR)
	HAS(a->g != NULL, IR_ATTR_GRAPH)
	HAS(a->sparse != NULL, IR_ATTR_SPARSE_TENSOR)
	HAS(a->tp != NULL, IR_ATTR_TYPE_PROTO)
	HAS(a->n_floats, IR_ATTR_FLOATS)
	HAS(a->n_ints, IR_ATTR_INTS)
	HAS(a->n_strings, IR_ATTR_STRINGS)
	HAS(a->n_tensors, IR_ATTR_TENSORS)
	HAS(a->n_graphs, IR_ATTR_GRAPHS)
	HAS(a->n_sparses, IR_ATTR_SPARSE_TENSORS)
	HAS(a->n_tps, IR_ATTR_TYPE_PROTOS)
#undef HAS
	return n > 1 ? -1 : k;
}

static int check_attr(struct vctx *c, const struct ir_attr *a)
{
	int filled = attr_filled(a), rc;

	if (a->ref_attr_name)
		return 0;
	if (!(a->present & IR_ATTR_HAS_TYPE) || a->type == IR_ATTR_UNDEFINED ||
	    a->type > IR_ATTR_TYPE_PROTOS || a->type < 0)
		return diag_error(c->d, "%sattribute '%s' has no valid type (%d)",
				  c->where, ir_s(a->name), a->type);
	if (filled < 0)
		return diag_error(c->d, "%sattribute '%s' of type %s carries values of several kinds",
				  c->where, ir_s(a->name), ir_attr_type_name(a->type));
	/* An empty list attribute carries nothing: fine for list types. */
	if (filled != 0 && filled != a->type)
		return diag_error(c->d, "%sattribute '%s' is declared %s but holds %s",
				  c->where, ir_s(a->name), ir_attr_type_name(a->type),
				  ir_attr_type_name(filled));
	if (filled == 0 && a->type < IR_ATTR_FLOATS && a->type != IR_ATTR_FLOAT &&
	    a->type != IR_ATTR_INT && a->type != IR_ATTR_STRING)
		return diag_error(c->d, "%sattribute '%s' of type %s has no value",
				  c->where, ir_s(a->name), ir_attr_type_name(a->type));
	if ((rc = check_tensor(c, a->t)) < 0 || (rc = check_sparse(c, a->sparse)) < 0)
		return rc;
	for (size_t i = 0; i < a->n_tensors; i++)
		if ((rc = check_tensor(c, a->tensors[i])) < 0)
			return rc;
	for (size_t i = 0; i < a->n_sparses; i++)
		if ((rc = check_sparse(c, a->sparses[i])) < 0)
			return rc;
	return 0;
}

static int defined(const struct ir_value *v)
{
	return v->producer || v->init || v->sparse_init || v->is_input;
}

/* The opset a node of `domain` resolves to in the current scope: the
 * function's own import first, then the model's ("" and "ai.onnx" are
 * one).  Returns 1 when an import exists. */
static int scope_opset(const struct vctx *c, const char *domain, int64_t *v)
{
	const char *want = !strcmp(domain, "ai.onnx") ? "" : domain;

	for (size_t i = 0; c->fn && i < c->fn->n_opsets; i++) {
		const char *dd = ir_s(c->fn->opsets[i].domain);

		if (!strcmp(dd, "ai.onnx"))
			dd = "";
		if (!strcmp(dd, want)) {
			*v = c->fn->opsets[i].version;
			return 1;
		}
	}
	*v = ir_model_opset(c->m, want);
	return *v != 0;
}

static int has_opset(const struct vctx *c, const char *domain)
{
	int64_t v;

	return scope_opset(c, domain, &v) ||
	       (c->fn && !strcmp(!strcmp(domain, "ai.onnx") ? "" : domain,
				 ir_s(c->fn->domain)));
}

/* The schema of node n in the current scope; NULL for a call of the
 * enclosing function's own domain and for ops the registry does not know. */
static const struct ir_op_schema *node_schema(const struct vctx *c,
					      const struct ir_node *n)
{
	const char *dom = ir_s(n->domain);
	int64_t v;

	if (c->fn && !strcmp(dom, ir_s(c->fn->domain)))
		return NULL;
	scope_opset(c, dom, &v);
	return ir_registry_find_flags(dom, ir_s(n->op_type), v,
				      IR_REGISTRY_ORT_DEFAULT);
}

/* ---- model-local functions and attributes passed by reference -------- */

struct fnref {
	const char *domain, *name;  /* domain "" for ai.onnx */
	size_t idx;                 /* in m->functions */
};

/* One attribute a function body reads from its call node (ref_attr_name),
 * with the type the reading node expects. */
struct refuse {
	const char *ref;            /* the call node's attribute */
	int want;                   /* an IR_ATTR_* type */
	const struct ir_node *n;    /* the body node reading it */
	const char *attr;           /* under this name */
};

/* The model's functions sorted by (domain, name), and every function's
 * references: refs[start[i]..start[i+1]) for m->functions[i], sorted by
 * (ref, want) without duplicates, so that checking a call costs a binary
 * search per attribute of the call, whatever the body's size. */
struct fntab {
	struct fnref *tab;
	size_t n;
	struct refuse *refs;
	size_t *start, n_refs, cap_refs;
};

static const char *dom_norm(const char *d)
{
	return d && *d && strcmp(d, "ai.onnx") ? d : "";
}

static int fnref_cmp(const void *a, const void *b)
{
	const struct fnref *x = a, *y = b;
	int r = strcmp(x->domain, y->domain);

	return r ? r : strcmp(x->name, y->name);
}

static int refuse_cmp(const void *a, const void *b)
{
	const struct refuse *x = a, *y = b;
	int r = strcmp(x->ref, y->ref);

	return r ? r : (x->want > y->want) - (x->want < y->want);
}

/* The type an attribute declares, 0 when it declares none valid. */
static int attr_declared(const struct ir_attr *a)
{
	return (a->present & IR_ATTR_HAS_TYPE) && a->type > IR_ATTR_UNDEFINED &&
	       a->type <= IR_ATTR_TYPE_PROTOS ? a->type : 0;
}

struct refctx {
	struct fntab *t;
	const struct vctx *scope;   /* the function's, for schema lookups */
};

/* Note each attribute given by reference in g (a function body or one of
 * its subgraphs): the type the node expects is its schema's, else the one
 * the reference declares; neither known, there is nothing to check. */
static int collect_refs(struct ir_graph *g, int depth, void *ctx)
{
	struct refctx *k = ctx;
	struct fntab *t = k->t;

	(void)depth;
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct ir_node *n = g->nodes[i];
		const struct ir_op_schema *s = NULL;
		int looked = 0;

		for (size_t j = 0; j < n->n_attrs; j++) {
			const struct ir_attr *a = n->attrs[j];
			const struct ir_op_attr *sa;
			int want;

			if (!a->ref_attr_name || !*a->ref_attr_name)
				continue;
			if (!looked++)
				s = node_schema(k->scope, n);
			sa = s ? ir_op_schema_attr(s, ir_s(a->name)) : NULL;
			if (!(want = sa ? (int)sa->type : attr_declared(a)))
				continue;
			if (t->n_refs == t->cap_refs) {
				size_t cap = t->cap_refs ? 2 * t->cap_refs : 16;
				struct refuse *p = realloc(t->refs, cap * sizeof(*p));

				if (!p)
					return IR_ENOMEM;
				t->refs = p;
				t->cap_refs = cap;
			}
			t->refs[t->n_refs++] = (struct refuse){
				a->ref_attr_name, want, n, ir_s(a->name) };
		}
	}
	return 0;
}

static void fntab_release(struct fntab *t)
{
	free(t->tab);
	free(t->refs);
	free(t->start);
}

static int fntab_init(struct fntab *t, struct ir_model *m, struct ir_diag *d)
{
	size_t n = m->n_functions;
	struct vctx scope = { .m = m, .d = d, .where = "" };
	struct refctx k = { t, &scope };
	int rc;

	memset(t, 0, sizeof(*t));
	if (!n)
		return 0;
	if (!(t->tab = calloc(n, sizeof(*t->tab))) ||
	    !(t->start = calloc(n + 1, sizeof(*t->start))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		size_t w = t->n_refs;

		t->tab[i] = (struct fnref){ dom_norm(m->functions[i]->domain),
					    ir_s(m->functions[i]->name), i };
		t->start[i] = t->n_refs;
		scope.fn = m->functions[i];
		if (m->functions[i]->body &&
		    (rc = ir_graph_walk(m->functions[i]->body, collect_refs, &k)) < 0)
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		if (t->n_refs > t->start[i])
			qsort(t->refs + t->start[i], t->n_refs - t->start[i],
			      sizeof(*t->refs), refuse_cmp);
		for (size_t j = t->start[i]; j < t->n_refs; j++)
			if (w == t->start[i] ||
			    refuse_cmp(&t->refs[w - 1], &t->refs[j]))
				t->refs[w++] = t->refs[j];
		t->n_refs = w;
	}
	t->start[n] = t->n_refs;
	qsort(t->tab, n, sizeof(*t->tab), fnref_cmp);
	t->n = n;
	return 0;
}

static const struct fnref *fntab_find(const struct fntab *t,
				      const struct ir_node *n)
{
	struct fnref key = { dom_norm(n->domain), ir_s(n->op_type), 0 };

	return t && t->n ? bsearch(&key, t->tab, t->n, sizeof(*t->tab), fnref_cmp)
			 : NULL;
}

/* A call of a model-local function: each of its attributes the body reads
 * by reference must have the type the reading node expects (a float where
 * an int is read would reach inference and the kernels converted). */
static int check_call(struct vctx *c, const struct ir_node *call)
{
	const struct fnref *f = fntab_find(c->fns, call);
	const struct refuse *lo, *hi;

	if (!f || !c->fns->n_refs)
		return 0;
	lo = c->fns->refs + c->fns->start[f->idx];
	hi = c->fns->refs + c->fns->start[f->idx + 1];
	for (size_t i = 0; i < call->n_attrs && lo < hi; i++) {
		const char *name = ir_s(call->attrs[i]->name);
		int have = attr_declared(call->attrs[i]);
		const struct refuse *a = lo, *b = hi;

		while (a < b) {     /* the first reference to name */
			const struct refuse *mid = a + (b - a) / 2;

			if (strcmp(mid->ref, name) < 0)
				a = mid + 1;
			else
				b = mid;
		}
		for (; have && a < hi && !strcmp(a->ref, name); a++)
			if (a->want != have)
				return diag_error(c->d, "%sattribute '%s' is %s but function '%s' reads it as %s (node '%s' (%s), attribute '%s')",
						  c->where, name,
						  ir_attr_type_name(have), f->name,
						  ir_attr_type_name(a->want),
						  ir_s(a->n->name),
						  ir_s(a->n->op_type), a->attr);
	}
	return 0;
}

/* Every input the schema requires must be given: a single (neither
 * optional nor variadic) formal's slot may not be missing or "", and a
 * variadic tail needs its minimum arity (s->min_inputs counts it).  As in
 * onnx's checker, optional slots and variadic ones may be "". */
static int check_inputs(struct vctx *c, const struct ir_node *n,
			const struct ir_op_schema *s)
{
	for (size_t i = 0; i < s->n_inputs; i++) {
		const struct ir_op_formal *f = &s->inputs[i];
		int missing;

		if (f->variadic)
			missing = n->n_inputs < (size_t)s->min_inputs;
		else
			missing = !f->optional &&
				  (i >= n->n_inputs || !n->inputs[i]);
		if (missing)
			return diag_error(c->d, "%smissing required input '%s' of %s-%d",
					  c->where, f->name, s->name,
					  s->since_version);
	}
	return 0;
}

/* Attributes of a known standard op must have the schema's types, and
 * required ones must be present; so must required inputs. */
static int check_schema(struct vctx *c, const struct ir_node *n)
{
	const struct ir_op_schema *s = node_schema(c, n);

	if (!s)
		return 0;
	for (size_t i = 0; i < n->n_attrs; i++) {
		const struct ir_attr *a = n->attrs[i];
		const struct ir_op_attr *sa = ir_op_schema_attr(s, ir_s(a->name));

		if (!sa || a->ref_attr_name)
			continue;
		if ((int)sa->type != a->type)
			return diag_error(c->d, "%sattribute '%s' must be %s, not %s",
					  c->where, ir_s(a->name),
					  ir_attr_type_name((int)sa->type),
					  ir_attr_type_name(a->type));
	}
	for (size_t i = 0; i < s->n_attrs; i++) {
		int found = 0;

		if (!s->attrs[i].required)
			continue;
		for (size_t k = 0; k < n->n_attrs && !found; k++)
			found = !strcmp(ir_s(n->attrs[k]->name), s->attrs[i].name);
		if (!found)
			return diag_error(c->d, "%smissing required attribute '%s' of %s-%d",
					  c->where, s->attrs[i].name, s->name,
					  s->since_version);
	}
	return check_inputs(c, n, s);
}

static int check_node(struct vctx *c, const struct ir_node *n)
{
	int rc;

	snprintf(c->buf, sizeof(c->buf), "node '%s' (%s): ", ir_s(n->name),
		 ir_s(n->op_type));
	c->where = c->buf;
	if (!n->op_type || !*n->op_type)
		return diag_error(c->d, "%snode has no op_type", c->where);
	if (!has_opset(c, ir_s(n->domain)))
		return diag_error(c->d, "%sdomain '%s' has no opset_import",
				  c->where, *ir_s(n->domain) ? n->domain : "ai.onnx");
	for (size_t i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] && !defined(n->inputs[i]))
			return diag_error(c->d, "%sinput '%s' is not defined by any node, input or initializer",
					  c->where, n->inputs[i]->name);
	for (size_t i = 0; i < n->n_attrs; i++)
		if ((rc = check_attr(c, n->attrs[i])) < 0)
			return rc;
	if ((rc = check_schema(c, n)) < 0)
		return rc;
	return check_call(c, n);
}

static int verify_graph(struct ir_graph *g, int depth, void *ctx)
{
	struct vctx *c = ctx;
	int rc;

	(void)depth;
	c->where = "";
	for (size_t i = 0; i < g->n_inits; i++)
		if ((rc = check_tensor(c, g->inits[i])) < 0)
			return rc;
	for (size_t i = 0; i < g->n_sparse_inits; i++)
		if ((rc = check_sparse(c, g->sparse_inits[i])) < 0)
			return rc;
	for (size_t i = 0; i < g->n_inputs; i++)
		if ((rc = check_type(c, "graph input ", g->inputs[i].value->name,
				     g->inputs[i].type)) < 0)
			return rc;
	for (size_t i = 0; i < g->n_value_info; i++)
		if ((rc = check_type(c, "value ", g->value_info[i].value->name,
				     g->value_info[i].type)) < 0)
			return rc;
	for (size_t i = 0; i < g->n_nodes; i++)
		if ((rc = check_node(c, g->nodes[i])) < 0)
			return rc;
	for (size_t i = 0; i < g->n_outputs; i++) {
		const struct ir_value *v = g->outputs[i].value;

		if ((rc = check_type(c, "graph output ", v->name,
				     g->outputs[i].type)) < 0)
			return rc;
		if (!defined(v))
			return diag_error(c->d, "graph output '%s' is not produced by any node, input or initializer",
					  v->name);
	}
	if (ir_graph_is_sorted(g))
		return 0;
	if ((rc = ir_graph_toposort(g, c->d)) < 0)
		return rc;
	ir_diag_warn(c->d, "graph '%s': nodes were not in topological order; sorted",
		     ir_s(g->name));
	return 0;
}

/* ---- calls between model-local functions ----------------------------- */

struct calls {
	const struct fntab *t;
	size_t *to, n_to, cap_to;   /* callees, function after function */
};

static int collect_calls(struct ir_graph *g, int depth, void *ctx)
{
	struct calls *k = ctx;

	(void)depth;
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct fnref *f = fntab_find(k->t, g->nodes[i]);

		if (!f)
			continue;
		if (k->n_to == k->cap_to) {
			size_t cap = k->cap_to ? 2 * k->cap_to : 64;
			size_t *p = realloc(k->to, cap * sizeof(*p));

			if (!p)
				return IR_ENOMEM;
			k->to = p;
			k->cap_to = cap;
		}
		k->to[k->n_to++] = f->idx;
	}
	return 0;
}

/* Functions may not call themselves, directly or not (ONNX forbids it),
 * and call chains stay within IR_MAX_CALL_DEPTH: every later walk over
 * calls (inference, scan, inlining, the interpreter) is then bounded.
 * Iterative, so a chain of 100,000 functions cannot overflow the stack. */
static int verify_calls(struct ir_model *m, const struct fntab *t,
			struct ir_diag *d)
{
	size_t n = m->n_functions, *first = NULL, *depth = NULL, *stack = NULL,
	       *next = NULL;
	struct calls k = { t, NULL, 0, 0 };
	char *state = NULL;   /* 0 new, 1 on the stack, 2 done */
	int rc = 0;

	if (!n)
		return 0;
	if (!(first = calloc(n + 1, sizeof(*first))) ||
	    !(depth = calloc(n, sizeof(*depth))) ||
	    !(next = calloc(n, sizeof(*next))) ||
	    !(stack = calloc(IR_MAX_CALL_DEPTH + 2, sizeof(*stack))) ||
	    !(state = calloc(n, 1)))
		goto oom;
	for (size_t i = 0; i < n; i++) {
		first[i] = k.n_to;
		if (m->functions[i]->body &&
		    (rc = ir_graph_walk(m->functions[i]->body, collect_calls, &k)) < 0)
			goto oom;
	}
	first[n] = k.n_to;
	for (size_t root = 0; root < n; root++) {
		size_t sp = 0;

		if (state[root])
			continue;
		stack[sp++] = root;
		state[root] = 1;
		next[root] = first[root];
		while (sp) {
			size_t f = stack[sp - 1], g;

			if (next[f] == first[f + 1]) {      /* done with f */
				depth[f]++;
				state[f] = 2;
				if (--sp && depth[f] > depth[stack[sp - 1]])
					depth[stack[sp - 1]] = depth[f];
				continue;
			}
			g = k.to[next[f]++];
			if (state[g] == 1) {
				rc = diag_error(d, "function '%s' calls itself (through '%s')",
						ir_s(m->functions[g]->name),
						ir_s(m->functions[f]->name));
				goto cleanup;
			}
			if (state[g] == 2) {
				if (depth[g] > depth[f])
					depth[f] = depth[g];
				continue;
			}
			if (sp > IR_MAX_CALL_DEPTH) {
				rc = diag_error(d, "functions call each other more than %d levels deep (at function '%s')",
						IR_MAX_CALL_DEPTH, ir_s(m->functions[g]->name));
				goto cleanup;
			}
			stack[sp++] = g;
			state[g] = 1;
			next[g] = first[g];
		}
		if (depth[root] > IR_MAX_CALL_DEPTH) {
			rc = diag_error(d, "functions call each other more than %d levels deep (at function '%s')",
					IR_MAX_CALL_DEPTH, ir_s(m->functions[root]->name));
			goto cleanup;
		}
	}
	goto cleanup;
oom:
	rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
cleanup:
	free(k.to);
	free(first);
	free(depth);
	free(next);
	free(stack);
	free(state);
	return rc;
}

int ir_model_verify(struct ir_model *m, struct ir_diag *d)
{
	struct vctx c = { .m = m, .d = d, .where = "" };
	struct fntab fns;
	int rc;

	if (!m->graph)
		return diag_error(d, "model has no graph");
	for (size_t i = 0; i < m->n_opsets; i++)
		if (m->opsets[i].version <= 0)
			return diag_error(d, "opset_import for domain '%s' has version %lld",
					  ir_s(m->opsets[i].domain),
					  (long long)m->opsets[i].version);
	if ((rc = fntab_init(&fns, m, d)) < 0)
		goto cleanup;
	c.fns = &fns;
	if ((rc = ir_graph_walk(m->graph, verify_graph, &c)) < 0)
		goto cleanup;
	for (size_t i = 0; i < m->n_functions; i++) {
		c.fn = m->functions[i];
		if (c.fn->body &&
		    (rc = ir_graph_walk(c.fn->body, verify_graph, &c)) < 0)
			goto cleanup;
	}
	rc = verify_calls(m, &fns, d);
cleanup:
	fntab_release(&fns);
	return rc;
}
