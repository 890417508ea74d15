/* verify_schema.c: the strict check of every node against the registry
 * schema its domain's opset resolves to, as onnx.checker (full_check) does
 * it: deprecated versions, input and output arity, "" in a slot that is
 * neither optional nor variadic, attributes the version does not declare,
 * repeated or of the wrong type, required ones missing, and the type
 * constraints of inputs and outputs against inferred dtypes. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer.h"
#include "ir/registry.h"

struct sctx {
	struct ir_model *m;
	const struct ir_infer *inf;
	const struct ir_function *fn;   /* set while checking a function body */
	ir_fault_fn report;
	void *report_ctx;
	size_t n_faults;
	int rc;                         /* a negative status stops the walk */
};

/* The opset of `domain` in the current scope: the function's import
 * first, then the model's; 0 when none. */
static int64_t scope_opset(const struct sctx *c, const char *domain)
{
	const char *want = !strcmp(domain, "ai.onnx") ? "" : domain;

	for (size_t i = 0; c->fn && i < c->fn->n_opsets; i++) {
		const char *dd = ir_s(c->fn->opsets[i].domain);

		if (!strcmp(dd, "ai.onnx"))
			dd = "";
		if (!strcmp(dd, want))
			return c->fn->opsets[i].version;
	}
	return ir_model_opset(c->m, want);
}

/* Is node n a call of a model-local function? */
static int is_call(const struct sctx *c, const struct ir_node *n)
{
	const char *dom = n->domain && *n->domain ? n->domain : "ai.onnx";

	for (size_t i = 0; i < c->m->n_functions; i++) {
		const struct ir_function *f = c->m->functions[i];
		const char *fd = f->domain && *f->domain ? f->domain : "ai.onnx";

		if (!strcmp(fd, dom) && !strcmp(ir_s(f->name), ir_s(n->op_type)))
			return 1;
	}
	return 0;
}

static void fault(struct sctx *c, const struct ir_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fault(struct sctx *c, const struct ir_node *n, const char *fmt, ...)
{
	char msg[512], full[700];
	va_list ap;
	int rc;

	if (c->rc < 0)
		return;
	c->n_faults++;
	if (!c->report)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "node '%s' (%s): %s", ir_s(n->name),
		 ir_s(n->op_type), msg);
	if ((rc = c->report(c->report_ctx, n, full)) < 0)
		c->rc = rc;
}

/* The variadic formals whose values may differ in type (python-onnx's
 * isHomogeneous false): control flow and the training optimizers. */
static int heterogeneous(const struct ir_op_schema *s, const struct ir_op_formal *f)
{
	static const char *const ops[] = { "If", "Loop", "Scan", "SequenceMap" };

	if (!f->variadic)
		return 0;
	if (!strcmp(s->domain, "ai.onnx.preview.training"))
		return 1;
	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
		if (!strcmp(s->domain, "ai.onnx") && !strcmp(s->name, ops[i]))
			return 1;
	return 0;
}

/* The allowed types of a formal: its constraint's list, or the formal's
 * own type when it names one ("tensor(int64)"); NULL when unknown. */
static const char *allowed_types(const struct ir_op_schema *s, const struct ir_op_formal *f)
{
	if (strchr(f->type, '('))
		return f->type;
	for (size_t k = 0; k < s->n_constraints; k++)
		if (!strcmp(s->constraints[k].name, f->type))
			return s->constraints[k].types;
	return NULL;
}

/* Is `want` one of the ", "-separated entries of list (nesting kept)? */
static int list_has(const char *list, const char *want)
{
	size_t n = strlen(want);

	for (const char *p = list; *p;) {
		const char *q = p;
		int depth = 0;

		while (*q && (depth || *q != ',')) {
			depth += (*q == '(') - (*q == ')');
			q++;
		}
		if ((size_t)(q - p) == n && !strncmp(p, want, n))
			return 1;
		p = *q ? q + 1 : q;
		while (*p == ' ')
			p++;
	}
	return 0;
}

/* A declared type as the spec writes it; 0 when it is not spelled out
 * down to a tensor's element type (maps are not). */
static int declared_type(const struct ir_type *t, char *buf, size_t size)
{
	char inner[64];

	if (!t)
		return 0;
	switch (t->kind) {
	case IR_TYPE_TENSOR:
		if (!(t->present & IR_TYPE_HAS_ELEM) || !t->elem_type)
			return 0;
		snprintf(buf, size, "tensor(%s)", ir_dtype_name(t->elem_type));
		return 1;
	case IR_TYPE_SEQUENCE:
	case IR_TYPE_OPTIONAL:
		if (!declared_type(t->inner, inner, sizeof(inner)))
			return 0;
		snprintf(buf, size, "%s(%.50s)", t->kind == IR_TYPE_SEQUENCE ? "seq" : "optional",
			 inner);
		return 1;
	default:
		return 0;
	}
}

/* The type of a value as the spec writes it ("tensor(float)",
 * "seq(tensor(int64))"): inferred, except that an optional, which
 * inference does not tell from its content, is known by its declaration;
 * 0 when neither knows it well enough (unknown dtype, maps). */
static int value_type(const struct sctx *c, const struct ir_value *v, char *buf, size_t size)
{
	const struct ir_vtype *t = v && c->inf ? ir_infer_get(c->inf, v) : NULL;

	if (v && v->type && v->type->kind == IR_TYPE_OPTIONAL)
		return declared_type(v->type, buf, size);
	if (!t || !t->dtype || t->map_key)
		return 0;
	snprintf(buf, size, t->is_seq ? "seq(tensor(%s))" : "tensor(%s)",
		 ir_dtype_name(t->dtype));
	return 1;
}

/* One constraint's first binding on this node. */
struct binding {
	const char *name;
	char type[64];
	const char *what;
	size_t index;
};

static void check_value_type(struct sctx *c, const struct ir_node *n,
			     const struct ir_op_schema *s, const struct ir_op_formal *f,
			     const struct ir_value *v, const char *what, size_t index,
			     struct binding *b, size_t *n_b)
{
	const char *types = allowed_types(s, f);
	char have[64];

	if (!types || !value_type(c, v, have, sizeof(have)))
		return;
	if (!list_has(types, have)) {
		/* an undeclared value may be an optional holding this type:
		 * inference does not tell them apart */
		if (strstr(types, "optional(") && strncmp(have, "optional(", 9))
			return;
		fault(c, n, "%s %zu ('%s') is %s, which %s of %s-%d does not allow (%s)",
		      what, index, v->name, have, f->type, s->name, s->since_version, types);
		return;
	}
	if (strchr(f->type, '(') || heterogeneous(s, f))
		return;
	for (size_t i = 0; i < *n_b; i++)
		if (!strcmp(b[i].name, f->type)) {
			/* an undeclared value inferred from an optional looks
			 * like its content: optionals bind nothing here */
			if (strcmp(b[i].type, have) && strncmp(have, "optional(", 9) &&
			    strncmp(b[i].type, "optional(", 9))
				fault(c, n, "%s %zu ('%s') is %s but %s %zu is %s: %s of %s-%d binds one type",
				      what, index, v->name, have, b[i].what, b[i].index,
				      b[i].type, f->type, s->name, s->since_version);
			return;
		}
	if (*n_b < 16) {
		b[*n_b].name = f->type;
		snprintf(b[*n_b].type, sizeof(b[*n_b].type), "%s", have);
		b[*n_b].what = what;
		b[(*n_b)++].index = index;
	}
}

/* The formal of slot i of a signature; NULL past a non-variadic end. */
static const struct ir_op_formal *formal_at(const struct ir_op_formal *f, size_t n, size_t i)
{
	if (i < n)
		return &f[i];
	return n && f[n - 1].variadic ? &f[n - 1] : NULL;
}

/* The dtypes of one side's values against their formals' constraints. */
static void check_slot_types(struct sctx *c, const struct ir_node *n,
			     const struct ir_op_schema *s, int out, struct binding *b, size_t *n_b)
{
	const struct ir_op_formal *formals = out ? s->outputs : s->inputs;
	size_t nf = out ? s->n_outputs : s->n_inputs;
	size_t k = out ? n->n_outputs : n->n_inputs;
	struct ir_value *const *vals = out ? n->outputs : n->inputs;

	for (size_t i = 0; i < k; i++) {
		const struct ir_op_formal *f = formal_at(formals, nf, i);

		if (!f)
			break;
		if (vals[i])
			check_value_type(c, n, s, f, vals[i], out ? "output" : "input", i, b, n_b);
	}
}

static void check_slots(struct sctx *c, const struct ir_node *n, const struct ir_op_schema *s,
			int out, struct binding *b, size_t *n_b)
{
	const struct ir_op_formal *formals = out ? s->outputs : s->inputs;
	size_t nf = out ? s->n_outputs : s->n_inputs;
	size_t k = out ? n->n_outputs : n->n_inputs;
	struct ir_value *const *vals = out ? n->outputs : n->inputs;
	int lo = out ? s->min_outputs : s->min_inputs, hi = out ? s->max_outputs : s->max_inputs;
	const char *what = out ? "output" : "input";

	if ((int64_t)k < lo || (int64_t)k > hi) {
		const char *pl = k == 1 ? "" : "s";

		if (hi == IR_OP_UNBOUNDED)
			fault(c, n, "%zu %s%s, %s-%d takes at least %d", k, what, pl, s->name,
			      s->since_version, lo);
		else if (lo == hi)
			fault(c, n, "%zu %s%s, %s-%d takes %d", k, what, pl, s->name,
			      s->since_version, lo);
		else
			fault(c, n, "%zu %s%s, %s-%d takes %d to %d", k, what, pl, s->name,
			      s->since_version, lo, hi);
	}
	for (size_t i = 0; i < k; i++) {
		const struct ir_op_formal *f = formal_at(formals, nf, i);

		if (!f)
			break;          /* counted above */
		if (!vals[i] && !f->optional && !f->variadic)
			fault(c, n, "%s %zu ('%s') of %s-%d is not optional but is \"\"",
			      what, i, f->name, s->name, s->since_version);
	}
	check_slot_types(c, n, s, out, b, n_b);
}

/* The one schema the spec lets take attributes it does not declare
 * (AllowUncheckedAttributes in onnx's defs, as onnx.checker honours). */
static int unchecked_attrs(const struct ir_op_schema *s)
{
	return !strcmp(s->domain, "ai.onnx") && !strcmp(s->name, "LayerNormalization") &&
	       s->since_version == 17;
}

static void check_attrs(struct sctx *c, const struct ir_node *n, const struct ir_op_schema *s)
{
	for (size_t i = 0; i < n->n_attrs; i++) {
		const struct ir_attr *a = n->attrs[i];
		const char *name = ir_s(a->name);
		const struct ir_op_attr *sa = ir_op_schema_attr(s, name);

		for (size_t j = 0; j < i; j++)
			if (!strcmp(ir_s(n->attrs[j]->name), name)) {
				fault(c, n, "attribute '%s' appears twice", name);
				break;
			}
		if (!sa) {
			/* names starting with "__" are implementation details
			 * onnx.checker ignores */
			if (strncmp(name, "__", 2) && !unchecked_attrs(s))
				fault(c, n, "attribute '%s' is not in %s-%d", name, s->name,
				      s->since_version);
			continue;
		}
		if ((int)sa->type != a->type)
			fault(c, n, "attribute '%s' is %s, %s-%d declares %s", name,
			      ir_attr_type_name(a->type), s->name, s->since_version,
			      ir_attr_type_name((int)sa->type));
	}
	for (size_t i = 0; i < s->n_attrs; i++)
		if (s->attrs[i].required && !ir_node_attr(n, s->attrs[i].name))
			fault(c, n, "required attribute '%s' of %s-%d is missing",
			      s->attrs[i].name, s->name, s->since_version);
}

static void check_node(struct sctx *c, const struct ir_node *n)
{
	const char *dom = n->domain && *n->domain ? n->domain : "ai.onnx";
	const struct ir_op_schema *s;
	struct binding b[16];
	size_t n_b = 0;

	if (!n->n_inputs && !n->n_outputs)
		fault(c, n, "no inputs and no outputs");
	/* calls of the enclosing function's domain and of model-local
	 * functions have no schema */
	if ((c->fn && !strcmp(ir_s(n->domain), ir_s(c->fn->domain))) || is_call(c, n))
		return;
	s = ir_registry_find_flags(dom, ir_s(n->op_type), scope_opset(c, dom),
				   IR_REGISTRY_ORT_DEFAULT);
	if (!s)
		return;     /* unknown ops and versions: the scanner's finding */
	if (s->deprecated) {
		fault(c, n, "%s-%d is deprecated", s->name, s->since_version);
		return;
	}
	check_slots(c, n, s, 0, b, &n_b);
	check_slots(c, n, s, 1, b, &n_b);
	check_attrs(c, n, s);
}

static int visit(struct ir_graph *g, int depth, void *ctx)
{
	struct sctx *c = ctx;

	(void)depth;
	for (size_t i = 0; i < g->n_nodes && c->rc >= 0; i++)
		check_node(c, g->nodes[i]);
	return c->rc < 0 ? c->rc : 0;
}

int ir_model_check_schema(struct ir_model *m, const struct ir_infer *inf,
			  ir_fault_fn report, void *report_ctx, struct ir_diag *d)
{
	struct sctx c = { m, inf, NULL, report, report_ctx, 0, 0 };
	struct ir_infer own;
	struct ir_diag id;
	int rc;

	if (!m->graph)
		return 0;
	if (!inf) {
		ir_infer_init(&own);
		ir_diag_init(&id);
		/* an inference error leaves the values after it unknown: their
		 * types are then not checked */
		if (ir_infer_model(m, &own, &id) == IR_ENOMEM) {
			ir_infer_release(&own);
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		}
		c.inf = &own;
	}
	rc = ir_graph_walk(m->graph, visit, &c);
	for (size_t i = 0; rc >= 0 && i < m->n_functions; i++) {
		c.fn = m->functions[i];
		if (c.fn->body)
			rc = ir_graph_walk(c.fn->body, visit, &c);
	}
	if (!inf)
		ir_infer_release(&own);
	if (rc < 0)
		return rc == IR_ENOMEM ? ir_diag_error(d, rc, "out of memory") : rc;
	return c.n_faults > (size_t)INT32_MAX ? INT32_MAX : (int)c.n_faults;
}

static int first_fault(void *ctx, const struct ir_node *n, const char *msg);

int ir_node_types_fit(struct ir_model *m, const struct ir_node *n, const struct ir_op_schema *s,
		      const struct ir_infer *inf, char *why, size_t size)
{
	char msg[512] = "";
	struct sctx c = { m, inf, NULL, first_fault, msg, 0, 0 };
	struct binding b[16];
	size_t n_b = 0, skip;

	check_slot_types(&c, n, s, 0, b, &n_b);
	check_slot_types(&c, n, s, 1, b, &n_b);
	if (!c.n_faults)
		return 1;
	/* without the "node 'x' (Op): " the caller's message has */
	skip = (size_t)snprintf(NULL, 0, "node '%s' (%s): ", ir_s(n->name), ir_s(n->op_type));
	snprintf(why, size, "%s", msg + (skip < strlen(msg) ? skip : strlen(msg)));
	return 0;
}

int ir_model_check_loaded(struct ir_model *m, ir_fault_fn report, void *ctx,
			  struct ir_diag *d)
{
	struct ir_infer inf;
	struct ir_diag id;
	int rc;

	ir_infer_init(&inf);
	ir_diag_init(&id);
	if ((rc = ir_infer_model(m, &inf, &id)) == IR_ENOMEM) {
		ir_infer_release(&inf);
		return ir_diag_error(d, rc, "out of memory");
	}
	if (rc < 0) {           /* an empty table: no type is checked */
		ir_infer_release(&inf);
		ir_infer_init(&inf);
	}
	rc = ir_model_check_schema(m, &inf, report, ctx, d);
	ir_infer_release(&inf);
	return rc;
}

struct first {
	char msg[512];
};

static int keep_first(void *ctx, const struct ir_node *n, const char *msg)
{
	struct first *f = ctx;

	(void)n;
	if (!f->msg[0])
		snprintf(f->msg, sizeof(f->msg), "%s", msg);
	return 0;
}

static int first_fault(void *ctx, const struct ir_node *n, const char *msg)
{
	char *buf = ctx;

	(void)n;
	if (!buf[0])
		snprintf(buf, 512, "%s", msg);
	return 0;
}

int ir_model_verify_strict(struct ir_model *m, const struct ir_infer *inf, struct ir_diag *d)
{
	struct first f = { "" };
	int n = ir_model_check_schema(m, inf, keep_first, &f, d);

	if (n <= 0)
		return n;
	if (n == 1)
		return diag_error(d, "%s", f.msg);
	return diag_error(d, "%s (and %d more fault%s)", f.msg, n - 1, n == 2 ? "" : "s");
}
