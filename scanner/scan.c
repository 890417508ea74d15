/* scan.c: scan_model: enumerate every node (main graph, nested subgraphs,
 * model-local function bodies), infer types and shapes once, find which
 * values are constant, then judge each node against each target, apply
 * the rewrite hook, count, and add the model-level findings. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scanner/scan_int.h"

static const char *const status_names[SCAN_N_STATUS] = {
	"supported", "limited", "rewritable", "blocked"
};

const char *scan_status_name(enum scan_status s)
{
	return (unsigned)s < SCAN_N_STATUS ? status_names[s] : "?";
}

int scan_status_parse(const char *name)
{
	for (int i = 0; i < SCAN_N_STATUS; i++)
		if (!strcmp(name, status_names[i]))
			return i;
	return -1;
}

/* ---- enumeration --------------------------------------------------------- */

struct enum_ctx {
	struct scan_result *r;
	size_t cap;
	struct ir_model *m;
	char **strings;         /* owned labels and graph paths */
	size_t n_strings, cap_strings;
};

/* Stored in the result, freed by scan_result_release: the strings block
 * follows the nodes array's owner (see own_string). */
struct scan_strings {
	size_t n;
	char **v;
};

static char *own_string(struct enum_ctx *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static char *own_string(struct enum_ctx *e, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int len;

	if (e->n_strings == e->cap_strings) {
		size_t cap = e->cap_strings ? e->cap_strings * 2 : 64;
		char **p = realloc(e->strings, cap * sizeof(*p));

		if (!p)
			return NULL;
		e->strings = p;
		e->cap_strings = cap;
	}
	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0 || !(s = malloc((size_t)len + 1)))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)len + 1, fmt, ap);
	va_end(ap);
	e->strings[e->n_strings++] = s;
	return s;
}

static int is_function_call(const struct ir_model *m, const struct ir_node *n)
{
	const char *dom = *ir_s(n->domain) ? n->domain : "ai.onnx";

	for (size_t i = 0; i < m->n_functions; i++) {
		const struct ir_function *f = m->functions[i];
		const char *fd = *ir_s(f->domain) ? f->domain : "ai.onnx";

		if (!strcmp(fd, dom) && !strcmp(ir_s(f->name), ir_s(n->op_type)))
			return 1;
	}
	return 0;
}

static int enum_graph(struct enum_ctx *e, const struct ir_graph *g,
		      const char *path, const char *function, int depth)
{
	struct scan_result *r = e->r;

	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct ir_node *n = g->nodes[i];
		struct scan_node *sn;
		size_t idx;

		if (r->n_nodes == e->cap) {
			size_t cap = e->cap ? e->cap * 2 : 64;
			struct scan_node *p = realloc(r->nodes, cap * sizeof(*p));

			if (!p)
				return IR_ENOMEM;
			r->nodes = p;
			e->cap = cap;
		}
		idx = r->n_nodes++;
		sn = &r->nodes[idx];
		memset(sn, 0, sizeof(*sn));
		sn->node = n;
		sn->op_type = ir_s(n->op_type);
		sn->domain = *ir_s(n->domain) ? n->domain : "ai.onnx";
		sn->function = function;
		sn->graph = path;
		sn->depth = depth;
		sn->is_call = is_function_call(e->m, n);
		if (*ir_s(n->name))
			sn->label = n->name;
		else if (!(sn->label = own_string(e, "#%zu", idx)))
			return IR_ENOMEM;
		if (function)
			r->n_function_nodes++;
		else if (depth)
			r->n_sub_nodes++;
		else
			r->n_main_nodes++;
		for (size_t k = 0; k < n->n_attrs; k++) {
			const struct ir_attr *a = n->attrs[k];
			size_t ng = a->g ? 1 : a->n_graphs;

			for (size_t j = 0; j < ng; j++) {
				const struct ir_graph *sub = a->g ? a->g : a->graphs[j];
				const char *p;
				int rc;

				if (!sub)
					continue;
				p = ng > 1 ? own_string(e, "%s/%s.%s[%zu]", path,
							r->nodes[idx].label, ir_s(a->name), j)
					   : own_string(e, "%s/%s.%s", path,
							r->nodes[idx].label, ir_s(a->name));
				if (!p)
					return IR_ENOMEM;
				if ((rc = enum_graph(e, sub, p, function, depth + 1)) < 0)
					return rc;
			}
		}
	}
	return 0;
}

/* ---- constant values ------------------------------------------------------- */

static size_t vhash(const struct ir_value *v, size_t cap)
{
	uintptr_t x = (uintptr_t)v;

	x ^= x >> 17;
	x *= (uintptr_t)0x9E3779B97F4A7C15ull;
	return (size_t)(x >> 7) & (cap - 1);
}

int scan_vset_has(const struct scan_vset *s, const struct ir_value *v)
{
	if (!s->cap)
		return 0;
	for (size_t h = vhash(v, s->cap);; h = (h + 1) & (s->cap - 1)) {
		if (!s->slots[h])
			return 0;
		if (s->slots[h] == v)
			return 1;
	}
}

int scan_vset_add(struct scan_vset *s, const struct ir_value *v)
{
	size_t h;

	if ((s->n + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		const struct ir_value **old = s->slots;
		size_t oc = s->cap;

		if (!(s->slots = calloc(cap, sizeof(*s->slots)))) {
			s->slots = old;
			return -1;
		}
		s->cap = cap;
		s->n = 0;
		for (size_t i = 0; i < oc; i++)
			if (old[i])
				scan_vset_add(s, old[i]);
		free(old);
	}
	for (h = vhash(v, s->cap); s->slots[h]; h = (h + 1) & (s->cap - 1))
		if (s->slots[h] == v)
			return 0;
	s->slots[h] = v;
	s->n++;
	return 0;
}

void scan_vset_release(struct scan_vset *s)
{
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

int scan_value_is_const(const struct scan_ctx *c, const struct ir_value *v)
{
	const struct ir_vtype *t;

	if (!v)
		return 0;
	if (v->init || v->sparse_init || scan_vset_has(&c->consts, v))
		return 1;
	t = ir_infer_get(c->inf, v);
	if (!t)
		return 0;
	if (t->has_fconst)
		return 1;
	if (!t->has_const)
		return 0;
	/* shape arithmetic with symbolic sizes is not a constant */
	for (size_t i = 0; i < t->n_const; i++)
		if (t->cval[i].kind != IR_VDIM_VALUE)
			return 0;
	return 1;
}

/* Ops whose outputs are not fixed even when every input is. */
static int nondeterministic(const char *op)
{
	return !strncmp(op, "Random", 6) || !strcmp(op, "Multinomial") ||
	       !strcmp(op, "Dropout");
}

/* Nodes are in enumeration order: producers (of one scope, and of outer
 * scopes) come before consumers, so one pass settles every value. */
static int find_consts(struct scan_ctx *c, struct scan_result *r)
{
	for (size_t i = 0; i < r->n_nodes; i++) {
		const struct ir_node *n = r->nodes[i].node;
		int all = !r->nodes[i].is_call && !nondeterministic(ir_s(n->op_type));

		for (size_t k = 0; all && k < n->n_attrs; k++)
			if (n->attrs[k]->g || n->attrs[k]->n_graphs)
				all = 0;
		for (size_t k = 0; all && k < n->n_inputs; k++)
			if (n->inputs[k] && !scan_value_is_const(c, n->inputs[k]))
				all = 0;
		if (!all || (!n->n_inputs && strcmp(ir_s(n->op_type), "Constant")))
			continue;
		r->nodes[i].constant = 1;
		for (size_t k = 0; k < n->n_outputs; k++)
			if (n->outputs[k] && scan_vset_add(&c->consts, n->outputs[k]) < 0)
				return IR_ENOMEM;
	}
	return 0;
}

/* ---- per-node facts ---------------------------------------------------------- */

static const struct ir_function *find_fn(const struct ir_model *m, const char *name)
{
	for (size_t i = 0; i < m->n_functions; i++)
		if (m->functions[i]->body && !strcmp(ir_s(m->functions[i]->name), name))
			return m->functions[i];
	return NULL;
}

static int64_t node_opset(const struct ir_model *m, const struct ir_function *f,
			  const char *domain)
{
	const char *want = strcmp(domain, "ai.onnx") ? domain : "";

	for (size_t i = 0; f && i < f->n_opsets; i++) {
		const char *dd = ir_s(f->opsets[i].domain);

		if (!strcmp(dd, "ai.onnx"))
			dd = "";
		if (!strcmp(dd, want))
			return f->opsets[i].version;
	}
	return ir_model_opset(m, domain);
}

static void node_info(struct scan_ctx *c, const struct scan_node *sn,
		      const struct ir_function *f, struct scan_ninfo *ni)
{
	const char *fb;

	ni->opset = node_opset(c->m, f, sn->domain);
	ni->schema = sn->is_call ? NULL :
		ir_registry_find(sn->domain, sn->op_type, ni->opset);
	if (!ni->schema && !sn->is_call &&
	    (fb = ir_registry_default_fallback(sn->domain, sn->op_type)))
		ni->schema = ir_registry_find(fb, sn->op_type, ni->opset);
}

/* Inferred types and constness of every node's inputs and outputs, once. */
static int io_facts(struct scan_ctx *c, const struct scan_result *r)
{
	size_t total = 0, k = 0, kc = 0;

	for (size_t i = 0; i < r->n_nodes; i++)
		total += r->nodes[i].node->n_inputs + r->nodes[i].node->n_outputs;
	if (!(c->vt_pool = calloc(total + 1, sizeof(*c->vt_pool))) ||
	    !(c->const_pool = calloc(total + 1, 1)))
		return IR_ENOMEM;
	for (size_t i = 0; i < r->n_nodes; i++) {
		const struct ir_node *n = r->nodes[i].node;
		struct scan_ninfo *ni = &c->info[i];

		ni->vt = &c->vt_pool[k];
		ni->in_const = &c->const_pool[kc];
		ni->n_in = n->n_inputs;
		for (size_t j = 0; j < n->n_inputs; j++) {
			c->vt_pool[k++] = n->inputs[j] ? ir_infer_get(c->inf, n->inputs[j]) : NULL;
			c->const_pool[kc++] = scan_value_is_const(c, n->inputs[j]);
		}
		for (size_t j = 0; j < n->n_outputs; j++)
			c->vt_pool[k++] = n->outputs[j] ? ir_infer_get(c->inf, n->outputs[j]) : NULL;
	}
	return 0;
}

/* ---- the scan ------------------------------------------------------------------ */

static void counts_add(struct scan_counts *k, enum scan_status s)
{
	k->nodes++;
	switch (s) {
	case SCAN_SUPPORTED: k->supported++; break;
	case SCAN_LIMITED: k->limited++; break;
	case SCAN_REWRITABLE: k->rewritable++; break;
	case SCAN_BLOCKED: k->blocked++; break;
	}
}

struct op_key {
	const char *op, *domain;
};

static int op_key_cmp(const void *a, const void *b)
{
	const struct op_key *x = a, *y = b;
	int c = strcmp(x->op, y->op);

	return c ? c : strcmp(x->domain, y->domain);
}

/* Distinct (domain, op type) among blocked nodes. */
static int count_blocked_types(const struct scan_result *r, struct scan_target_result *tr)
{
	struct op_key *v;
	size_t n = 0;

	tr->blocked_op_types = 0;
	if (!tr->counts.blocked)
		return 0;
	if (!(v = malloc(tr->counts.blocked * sizeof(*v))))
		return IR_ENOMEM;
	for (size_t i = 0; i < r->n_nodes; i++)
		if (tr->verdicts[i].status == SCAN_BLOCKED) {
			v[n].op = r->nodes[i].op_type;
			v[n++].domain = r->nodes[i].domain;
		}
	qsort(v, n, sizeof(*v), op_key_cmp);
	for (size_t i = 0; i < n; i++)
		tr->blocked_op_types += !i || op_key_cmp(&v[i - 1], &v[i]);
	free(v);
	return 0;
}

/* Would the node be legal with its float32 data in float16, or in int8 or
 * uint8 (a verdict of data-type reasons only)? */
static int precision_fixes(const struct scan_ctx *c, const struct scan_node *sn,
			   const struct scan_ninfo *ni, const struct rules_target *t,
			   struct scan_verdict *v)
{
	/* int8 quantization gives uint8 activations where a target wants them */
	static const int as[3] = { IR_DTYPE_FLOAT16, IR_DTYPE_INT8, IR_DTYPE_UINT8 };

	if (v->status < SCAN_LIMITED || c->f32_as)
		return 0;
	for (size_t i = 0; i < v->n_reasons; i++)
		if (strcmp(v->reasons[i].code, SCAN_REASON_DTYPE))
			return 0;
	for (int k = 0; k < 3; k++) {
		struct scan_ctx alt = *c;
		struct scan_verdict w = { 0 };
		int clean;

		alt.f32_as = as[k];
		if (scan_check_node(&alt, sn, ni, t, &w) < 0) {
			scan_verdict_release(&w);
			return -1;
		}
		clean = w.n_reasons == 0;
		scan_verdict_release(&w);
		if (clean) {
			v->fix = k ? SCAN_FIX_INT8 : SCAN_FIX_FP16;
			return 0;
		}
	}
	return 0;
}

static int scan_target(struct scan_ctx *c, struct scan_result *r, size_t ti,
		       const struct scan_options *so)
{
	struct scan_target_result *tr = &r->targets[ti];
	const struct rules_target *t = tr->target;
	int rc;

	if (r->n_nodes && !(tr->verdicts = calloc(r->n_nodes, sizeof(*tr->verdicts))))
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < r->n_nodes; i++) {
		struct scan_verdict *v = &tr->verdicts[i];
		const char *pass = NULL;

		if (scan_check_node(c, &r->nodes[i], &c->info[i], t, v) < 0 ||
		    precision_fixes(c, &r->nodes[i], &c->info[i], t, v) < 0)
			return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
		if ((v->status == SCAN_LIMITED || v->status == SCAN_BLOCKED) &&
		    so && so->can_rewrite) {
			if (so->can_rewrite(so->ctx, t, &r->nodes[i], v, &pass) && pass)
				v->status = SCAN_REWRITABLE;
			v->rewrite = pass;
		}
		counts_add(&tr->counts, v->status);
	}
	if ((rc = count_blocked_types(r, tr)) < 0)
		return ir_diag_error(c->d, rc, "out of memory");
	if ((rc = scan_findings_for(c, t, tr)) < 0)
		return ir_diag_error(c->d, rc, "out of memory");
	return 0;
}

int scan_model(struct ir_model *m, const char *path,
	       const struct rules_target *const *targets, size_t n_targets,
	       const struct scan_options *so, struct scan_result *out,
	       struct ir_diag *d)
{
	return scan_model_inferred(m, path, targets, n_targets, so, NULL, out, d);
}

int scan_model_inferred(struct ir_model *m, const char *path,
			const struct rules_target *const *targets, size_t n_targets,
			const struct scan_options *so, const struct ir_infer *inf,
			struct scan_result *out, struct ir_diag *d)
{
	struct scan_ctx c;
	struct enum_ctx e;
	struct scan_strings *strs;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	memset(&e, 0, sizeof(e));
	c.m = m;
	c.d = d;
	c.f32_as = so && so->fp16 ? IR_DTYPE_FLOAT16 : 0;
	c.path = path ? path : ir_s(m->path);
	ir_infer_init(&c.own_inf);
	c.inf = &c.own_inf;
	if (!m->graph)
		return ir_diag_error(d, IR_EINVAL, "model has no graph");
	if (!n_targets)
		return ir_diag_error(d, IR_EUSAGE, "no target to scan against");
	out->path = c.path;
	out->ir_version = m->ir_version;
	out->producer = ir_s(m->producer_name);
	out->producer_version = ir_s(m->producer_version);
	out->opset = ir_model_opset(m, "");
	e.r = out;
	e.m = m;
	rc = enum_graph(&e, m->graph, "main", NULL, 0);
	for (size_t i = 0; rc == 0 && i < m->n_functions; i++) {
		const struct ir_function *f = m->functions[i];
		const char *p;

		if (!f->body)
			continue;
		if (!(p = own_string(&e, "fn:%s:%s", *ir_s(f->domain) ? f->domain : "ai.onnx",
				     ir_s(f->name))))
			rc = IR_ENOMEM;
		else
			rc = enum_graph(&e, f->body, p, ir_s(f->name), 0);
	}
	/* hand the strings to the result before anything can fail */
	strs = calloc(1, sizeof(*strs));
	if (!strs) {
		for (size_t i = 0; i < e.n_strings; i++)
			free(e.strings[i]);
		free(e.strings);
		rc = IR_ENOMEM;
	} else {
		strs->n = e.n_strings;
		strs->v = e.strings;
		out->priv_strings = strs;
	}
	if (rc < 0) {
		rc = ir_diag_error(d, rc, "out of memory");
		goto cleanup;
	}
	if (inf)
		c.inf = inf;
	else if ((rc = ir_infer_model(m, &c.own_inf, d)) < 0)
		goto cleanup;
	out->inferred = 1;
	if (out->n_nodes && !(c.info = calloc(out->n_nodes, sizeof(*c.info)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < out->n_nodes; i++) {
		const struct scan_node *sn = &out->nodes[i];

		node_info(&c, sn, sn->function ? find_fn(m, sn->function) : NULL, &c.info[i]);
		out->nodes[i].version = c.info[i].schema ? c.info[i].schema->since_version : 0;
	}
	if ((rc = find_consts(&c, out)) < 0 || (rc = io_facts(&c, out)) < 0 ||
	    (rc = scan_facts_collect(&c)) < 0) {
		rc = ir_diag_error(d, rc, "out of memory");
		goto cleanup;
	}
	if (!(out->targets = calloc(n_targets, sizeof(*out->targets)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	out->n_targets = n_targets;
	for (size_t i = 0; i < n_targets; i++)
		out->targets[i].target = targets[i];
	for (size_t i = 0; i < n_targets && rc == 0; i++)
		rc = scan_target(&c, out, i, so);
cleanup:
	free(c.info);
	free(c.vt_pool);
	free(c.const_pool);
	scan_vset_release(&c.consts);
	ir_infer_release(&c.own_inf);
	if (rc < 0)
		scan_result_release(out);
	return rc < 0 ? rc : 0;
}

void scan_verdict_release(struct scan_verdict *v)
{
	for (size_t i = 0; i < v->n_reasons; i++)
		free(v->reasons[i].message);
	free(v->reasons);
	v->reasons = NULL;
	v->n_reasons = 0;
}

void scan_result_release(struct scan_result *r)
{
	struct scan_strings *s = r->priv_strings;

	for (size_t t = 0; t < r->n_targets; t++) {
		struct scan_target_result *tr = &r->targets[t];

		for (size_t i = 0; tr->verdicts && i < r->n_nodes; i++)
			scan_verdict_release(&tr->verdicts[i]);
		free(tr->verdicts);
		for (size_t i = 0; i < tr->n_findings; i++)
			free(tr->findings[i].message);
		free(tr->findings);
	}
	free(r->targets);
	free(r->nodes);
	if (s) {
		for (size_t i = 0; i < s->n; i++)
			free(s->v[i]);
		free(s->v);
		free(s);
	}
	memset(r, 0, sizeof(*r));
}

int scan_target_has(const struct scan_target_result *tr, enum scan_status min)
{
	const struct scan_counts *k = &tr->counts;

	if ((min <= SCAN_BLOCKED && k->blocked) ||
	    (min <= SCAN_REWRITABLE && k->rewritable) ||
	    (min <= SCAN_LIMITED && k->limited) ||
	    (min <= SCAN_SUPPORTED && k->supported))
		return 1;
	for (size_t i = 0; i < tr->n_findings; i++)
		if (tr->findings[i].status >= min)
			return 1;
	return 0;
}
