/* derive.c: a rules file from a probe's verdicts.  Per op: supported when
 * some case was accepted and equal; the versions around the newest that
 * passed; the main dtypes whose base case passed (listed only when one
 * failed); per attribute the values that passed, as allowed values or a
 * bound, when some value failed where the base passed; the ranks of input
 * 0 that passed; inputs that had to be constant.  Target-wide: the opsets
 * Relu passed at, dtypes no passing case used, the largest rank that
 * passed, dynamic shapes.  "Accepted but wrong" counts as failed: a wrong
 * answer is worse than a refusal.  Notes quote what the runtime said. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_int.h"

/* A case as derivation sees it: ran (a verdict other than invalid) and
 * passed. */
static int ran(const struct probe_case *c)
{
	return c->verdict >= PROBE_EQUAL;
}

static int ok(const struct probe_case *c)
{
	return probe_verdict_ok(c->verdict);
}

static int target_wide(const struct probe_case *c)
{
	return c->kind == PROBE_OPSET || c->kind == PROBE_DYNAMIC;
}

/* ---- notes ----------------------------------------------------------- */

struct notes {
	char *buf;
	size_t len;
	FILE *f;
	int n;                   /* messages quoted */
	const struct probe_case *seen[8];
};

static int notes_open(struct notes *n)
{
	memset(n, 0, sizeof(*n));
	return (n->f = open_memstream(&n->buf, &n->len)) ? 0 : -1;
}

static void notes_sep(struct notes *n)
{
	if (n->len || ftell(n->f) > 0)
		fputs(" ", n->f);
}

/* Quote a failed case: its variant, verdict and message, each distinct
 * verdict and message once, at most 6. */
static void notes_case(struct notes *n, const struct probe_case *c)
{
	char what[300];

	if (!c->message || n->n >= 6)
		return;
	for (int i = 0; i < n->n && i < 8; i++)
		if (n->seen[i]->verdict == c->verdict && !strcmp(n->seen[i]->message, c->message))
			return;
	n->seen[n->n++] = c;
	probe_case_what(c, what, sizeof(what));
	notes_sep(n);
	if (c->verdict == PROBE_WRONG)
		fprintf(n->f, "%s (opset %d): accepted but wrong: %s.", what, c->opset, c->message);
	else
		fprintf(n->f, "%s (opset %d): %s: %s.", what, c->opset, probe_verdict_name(c->verdict),
			c->message);
}

static char *notes_close(struct notes *n)
{
	if (fclose(n->f) != 0) {
		free(n->buf);
		return NULL;
	}
	return n->buf;
}

/* ---- values of an attribute ----------------------------------------- */

struct seen_val {
	struct probe_aval v;     /* borrowed */
	int pass, fail;
};

struct vset {
	struct seen_val *v;
	size_t n, cap;
};

static int vset_add(struct vset *s, const struct probe_aval *v, int pass)
{
	for (size_t i = 0; i < s->n; i++)
		if (probe_aval_equal(&s->v[i].v, v)) {
			s->v[i].pass |= pass;
			s->v[i].fail |= !pass;
			return 0;
		}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct seen_val *q = realloc(s->v, cap * sizeof(*q));

		if (!q)
			return -1;
		s->v = q;
		s->cap = cap;
	}
	s->v[s->n].v = *v;
	s->v[s->n].pass = pass;
	s->v[s->n].fail = !pass;
	s->n++;
	return 0;
}

/* One number standing for a value: an int, a float, or a list whose
 * elements are all equal; 0 when it has none. */
static int scalar_of(const struct probe_aval *v, double *x)
{
	switch (v->type) {
	case IR_ATTR_INT: *x = (double)v->i; return 1;
	case IR_ATTR_FLOAT: *x = v->f; return 1;
	case IR_ATTR_INTS:
		if (!v->n)
			return 0;
		for (size_t i = 1; i < v->n; i++)
			if (v->ints[i] != v->ints[0])
				return 0;
		*x = (double)v->ints[0];
		return 1;
	default:
		return 0;
	}
}

static int rvalue_of(const struct probe_aval *v, struct rules_value *out)
{
	memset(out, 0, sizeof(*out));
	switch (v->type) {
	case IR_ATTR_STRING:
		out->kind = RULES_VALUE_STRING;
		return (out->str = strdup(v->s ? v->s : "")) ? 0 : -1;
	case IR_ATTR_INTS:
		out->kind = RULES_VALUE_NUMBERS;
		out->n_nums = v->n;
		if (v->n && !(out->nums = malloc(v->n * sizeof(*out->nums))))
			return -1;
		for (size_t i = 0; i < v->n; i++)
			out->nums[i] = (double)v->ints[i];
		return 0;
	default:
		out->kind = RULES_VALUE_NUMBER;
		out->num = v->type == IR_ATTR_INT ? (double)v->i : v->f;
		return 0;
	}
}

/* The constraint the passing and failing values of one attribute make:
 * 1 when there is one (written into a), 0 none, -1 out of memory. */
static int attr_constraint(const char *name, const struct vset *s, struct rules_attr *a)
{
	double pmin = INFINITY, pmax = -INFINITY, fmin = INFINITY, fmax = -INFINITY, x = 0;
	int n_fail = 0, n_pass = 0, scalar = 1;

	memset(a, 0, sizeof(*a));
	for (size_t i = 0; i < s->n; i++) {
		const struct seen_val *v = &s->v[i];

		if (v->v.type == IR_ATTR_UNDEFINED)
			continue;   /* "absent" has no value to write */
		if (!scalar_of(&v->v, &x))
			scalar = 0;
		if (v->pass) {
			n_pass++;
			pmin = x < pmin ? x : pmin;
			pmax = x > pmax ? x : pmax;
		} else {
			n_fail++;
			fmin = x < fmin ? x : fmin;
			fmax = x > fmax ? x : fmax;
		}
	}
	if (!n_fail || !n_pass)
		return 0;
	if (!(a->name = strdup(name)))
		return -1;
	if (scalar && fmin > pmax) {
		a->has_max = 1;
		a->max = pmax;
		return 1;
	}
	if (scalar && fmax < pmin) {
		a->has_min = 1;
		a->min = pmin;
		return 1;
	}
	if (!(a->allowed = calloc((size_t)n_pass, sizeof(*a->allowed))))
		return -1;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].pass && s->v[i].v.type != IR_ATTR_UNDEFINED &&
		    rvalue_of(&s->v[i].v, &a->allowed[a->n_allowed++]) < 0)
			return -1;
	return 1;
}

/* ---- one op ----------------------------------------------------------- */

struct opview {
	const struct probe_case *c;   /* the op's cases (consecutive) */
	size_t n;
	int versions[64];
	size_t n_versions;
	int vmin, vmax;               /* passing range, 0 none */
};

/* The reference base case of a version, NULL when it did not run. */
static const struct probe_case *ref_of(const struct opview *v, int version)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->c[i].kind == PROBE_BASE && v->c[i].ref &&
		    v->c[i].schema->since_version == version && ran(&v->c[i]))
			return &v->c[i];
	return NULL;
}

static int in_range(const struct opview *v, const struct probe_case *c)
{
	return c->schema->since_version >= v->vmin && c->schema->since_version <= v->vmax;
}

static void versions(struct opview *v)
{
	int pass[64] = { 0 };

	for (size_t i = 0; i < v->n; i++) {
		int ver = v->c[i].schema->since_version;
		size_t k;

		if (!ran(&v->c[i]))
			continue;
		for (k = 0; k < v->n_versions && v->versions[k] != ver; k++)
			;
		if (k == v->n_versions && k < 64)
			v->versions[v->n_versions++] = ver;
		if (k < 64)
			pass[k] |= ok(&v->c[i]);
	}
	v->vmin = v->vmax = 0;
	/* versions are in ascending order: the cases are sorted by id and
	 * "Op-9" sorts after "Op-13", so order them here */
	for (size_t a = 0; a < v->n_versions; a++)
		for (size_t b = a + 1; b < v->n_versions; b++)
			if (v->versions[b] < v->versions[a]) {
				int t = v->versions[a], p = pass[a];

				v->versions[a] = v->versions[b];
				pass[a] = pass[b];
				v->versions[b] = t;
				pass[b] = p;
			}
	for (size_t k = v->n_versions; k-- > 0;)
		if (pass[k]) {
			v->vmax = v->versions[k];
			v->vmin = v->versions[k];
			while (k-- > 0 && pass[k])
				v->vmin = v->versions[k];
			break;
		}
}

static int add_io(struct rules_io **io, size_t *n, int index, struct rules_io **out)
{
	struct rules_io *q;

	for (size_t i = 0; i < *n; i++)
		if ((*io)[i].index == index) {
			*out = &(*io)[i];
			return 0;
		}
	if (!(q = realloc(*io, (*n + 1) * sizeof(*q))))
		return -1;
	*io = q;
	memset(&q[*n], 0, sizeof(q[*n]));
	q[*n].index = index;
	q[*n].min_rank = q[*n].max_rank = -1;
	*out = &q[(*n)++];
	return 0;
}

static int derive_dtypes(const struct opview *v, struct rules_op *op, struct notes *nt)
{
	rules_dtypes tried = 0, pass = 0;

	for (size_t i = 0; i < v->n; i++) {
		const struct probe_case *c = &v->c[i];

		if (c->kind != PROBE_BASE || !c->dtype || !ran(c) || !in_range(v, c))
			continue;
		tried |= RULES_DTYPE_BIT(c->dtype);
		pass |= ok(c) ? RULES_DTYPE_BIT(c->dtype) : 0;
	}
	if (pass && pass != tried) {
		op->dtypes = pass;
		for (size_t i = 0; i < v->n; i++) {
			const struct probe_case *c = &v->c[i];

			if (c->kind == PROBE_BASE && c->dtype && ran(c) && in_range(v, c) && !ok(c) &&
			    !(pass & RULES_DTYPE_BIT(c->dtype)))
				notes_case(nt, c);
		}
	}
	return 0;
}

static int derive_attrs(const struct opview *v, struct rules_op *op, struct notes *nt)
{
	const char *names[64];
	size_t n_names = 0;

	for (size_t i = 0; i < v->n; i++) {
		const struct probe_case *c = &v->c[i];
		size_t k;

		if (c->kind != PROBE_ATTR || !ran(c) || !in_range(v, c))
			continue;
		for (k = 0; k < n_names && strcmp(names[k], c->attr); k++)
			;
		if (k == n_names && n_names < 64)
			names[n_names++] = c->attr;
	}
	for (size_t k = 0; k < n_names; k++) {
		struct vset s = { 0 };
		struct rules_attr a;
		int any_variant_ok = 0, rc = 0;

		for (size_t i = 0; i < v->n; i++) {
			const struct probe_case *c = &v->c[i];

			if (c->kind == PROBE_ATTR && ran(c) && in_range(v, c) && !strcmp(c->attr, names[k]))
				any_variant_ok |= ok(c);
		}
		for (size_t i = 0; i < v->n && rc == 0; i++) {
			const struct probe_case *c = &v->c[i], *ref;

			if (c->kind != PROBE_ATTR || !ran(c) || !in_range(v, c) || strcmp(c->attr, names[k]))
				continue;
			rc = vset_add(&s, &c->value, ok(c));
			ref = ref_of(v, c->schema->since_version);
			/* the base's value: it passed, or failed where another
			 * value of this attribute passed */
			if (rc == 0 && ref && (ok(ref) || any_variant_ok))
				rc = vset_add(&s, &c->base_value, ok(ref));
		}
		if (rc == 0 && (rc = attr_constraint(names[k], &s, &a)) == 1) {
			struct rules_attr *q = realloc(op->attrs, (op->n_attrs + 1) * sizeof(*q));

			if (!q) {
				free(a.name);
				free(a.allowed);
				rc = -1;
			} else {
				op->attrs = q;
				op->attrs[op->n_attrs++] = a;
				rc = 0;
				for (size_t i = 0; i < v->n; i++) {
					const struct probe_case *c = &v->c[i];

					if (c->kind == PROBE_ATTR && ran(c) && !ok(c) && in_range(v, c) &&
					    !strcmp(c->attr, names[k]))
						notes_case(nt, c);
				}
			}
		}
		free(s.v);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int derive_ranks(const struct opview *v, struct rules_op *op, struct notes *nt)
{
	int pass[8] = { 0 }, fail[8] = { 0 }, lo = -1, hi = -1, any_fail = 0;
	struct rules_io *io;

	for (size_t i = 0; i < v->n; i++) {
		const struct probe_case *c = &v->c[i];
		int r = c->kind == PROBE_RANK ? c->rank : c->in0_rank;

		if ((c->kind != PROBE_RANK && !(c->kind == PROBE_BASE && c->ref)) || !ran(c) ||
		    !in_range(v, c) || r < 0 || r > 7)
			continue;
		if (ok(c))
			pass[r] = 1;
		else
			fail[r] = 1;
	}
	for (int r = 0; r < 8; r++) {
		fail[r] &= !pass[r];
		any_fail |= fail[r];
		if (pass[r]) {
			lo = lo < 0 ? r : lo;
			hi = r;
		}
	}
	if (!any_fail || lo < 0)
		return 0;
	if (add_io(&op->inputs, &op->n_inputs, 0, &io) < 0)
		return -1;
	io->min_rank = lo;
	io->max_rank = hi;
	for (int r = 0; r < lo && !fail[r]; r++)
		if (r == lo - 1)
			io->min_rank = 0;     /* nothing below failed */
	for (int r = hi + 1; r < 8; r++)
		if (fail[r])
			break;
		else if (r == 7)
			io->max_rank = RT_MAX_RANK;   /* nothing above failed: up to
						       * the interpreter's largest */
	for (size_t i = 0; i < v->n; i++)
		if (v->c[i].kind == PROBE_RANK && ran(&v->c[i]) && !ok(&v->c[i]) && in_range(v, &v->c[i]))
			notes_case(nt, &v->c[i]);
	return 0;
}

static int derive_const(const struct opview *v, struct rules_op *op, struct notes *nt)
{
	for (int k = 0; k < PROBE_MAX_IO; k++) {
		int need = 0, graph_ok = 0;

		for (size_t i = 0; i < v->n; i++) {
			const struct probe_case *c = &v->c[i], *ref;

			if ((c->kind != PROBE_GRAPH && c->kind != PROBE_CONST) || c->input != k ||
			    !ran(c) || !in_range(v, c) || !(ref = ref_of(v, c->schema->since_version)))
				continue;
			if (c->kind == PROBE_GRAPH) {     /* base: k constant */
				need |= ok(ref) && !ok(c);
				graph_ok |= ok(c);
			} else {                          /* base: k a graph input */
				need |= ok(c) && !ok(ref);
				graph_ok |= ok(ref);
			}
		}
		if (need && !graph_ok) {
			struct rules_io *io;

			if (add_io(&op->inputs, &op->n_inputs, k, &io) < 0)
				return -1;
			io->is_const = 1;
			for (size_t i = 0; i < v->n; i++) {
				const struct probe_case *c = &v->c[i];

				if (c->kind == PROBE_GRAPH && c->input == k && ran(c) && !ok(c))
					notes_case(nt, c);
			}
		}
	}
	return 0;
}

static int io_cmp(const void *a, const void *b)
{
	return ((const struct rules_io *)a)->index - ((const struct rules_io *)b)->index;
}

static int derive_op(const struct opview *v, struct rules_op *op)
{
	struct notes nt;
	size_t n_ran = 0, n_ok = 0, n_wrong = 0;
	const struct probe_case *first_fail = NULL;

	memset(op, 0, sizeof(*op));
	op->version_min = 1;
	op->version_max = RULES_UNBOUNDED;
	if (!(op->domain = strdup(v->c[0].schema->domain)) ||
	    !(op->name = strdup(v->c[0].schema->name)) || notes_open(&nt) < 0)
		return -1;
	for (size_t i = 0; i < v->n; i++) {
		n_ran += ran(&v->c[i]);
		n_ok += ok(&v->c[i]);
		n_wrong += v->c[i].verdict == PROBE_WRONG;
		if (ran(&v->c[i]) && !ok(&v->c[i]) && !first_fail)
			first_fail = &v->c[i];
	}
	fprintf(nt.f, "Probed: %zu of %zu cases passed.", n_ok, n_ran);
	if (!v->vmax) {
		op->supported = 0;
		/* the base cases first: they say most about the op */
		for (size_t i = 0; i < v->n; i++)
			if (v->c[i].kind == PROBE_BASE && v->c[i].ref && ran(&v->c[i]))
				notes_case(&nt, &v->c[i]);
		if (first_fail)
			notes_case(&nt, first_fail);
	} else {
		op->supported = 1;
		if (v->vmin != v->versions[0])
			op->version_min = v->vmin;
		if (v->vmax != v->versions[v->n_versions - 1])
			op->version_max = v->vmax;
		if (op->version_min > 1 || op->version_max != RULES_UNBOUNDED)
			for (size_t i = 0; i < v->n; i++)
				if (!in_range(v, &v->c[i]) && ran(&v->c[i]) && !ok(&v->c[i]))
					notes_case(&nt, &v->c[i]);
		if (derive_dtypes(v, op, &nt) < 0 || derive_attrs(v, op, &nt) < 0 ||
		    derive_ranks(v, op, &nt) < 0 || derive_const(v, op, &nt) < 0) {
			free(notes_close(&nt));
			return -1;
		}
		if (op->n_inputs > 1)
			qsort(op->inputs, op->n_inputs, sizeof(*op->inputs), io_cmp);
		/* failures no constraint explains, wrong answers first */
		for (size_t i = 0; i < v->n; i++)
			if (v->c[i].verdict == PROBE_WRONG && in_range(v, &v->c[i]))
				notes_case(&nt, &v->c[i]);
		for (size_t i = 0; i < v->n; i++)
			if (ran(&v->c[i]) && !ok(&v->c[i]) && in_range(v, &v->c[i]))
				notes_case(&nt, &v->c[i]);
	}
	(void)n_wrong;
	return (op->notes = notes_close(&nt)) ? 0 : -1;
}

/* ---- the target --------------------------------------------------------- */

static int target_facts(const struct probe_run *r, struct rules_target *t)
{
	int opset_ok[256] = { 0 }, hi = -1, max_ok = -1, max_ran = -1, dyn = -1;
	rules_dtypes tried = 0, used = 0;

	/* the largest rank: of the rank cases (the others' ranks are their
	 * ops'); the dtypes used: graph inputs of cases that passed (an
	 * output the comparison converted says nothing) */

	for (size_t i = 0; i < r->n_cases; i++) {
		const struct probe_case *c = &r->cases[i];

		if (!ran(c))
			continue;
		if (c->kind == PROBE_OPSET && c->opset >= 0 && c->opset < 256) {
			opset_ok[c->opset] = ok(c);
			if (ok(c))
				hi = c->opset;
		}
		if (c->kind == PROBE_DYNAMIC)
			dyn = ok(c);
		if (c->kind == PROBE_BASE && c->dtype)
			tried |= RULES_DTYPE_BIT(c->dtype);
		if (ok(c))
			used |= c->in_dtypes;
		if (c->kind != PROBE_RANK)
			continue;
		if (ok(c))
			max_ok = c->rank > max_ok ? c->rank : max_ok;
		max_ran = c->rank > max_ran ? c->rank : max_ran;
	}
	t->opset_min = t->opset_max = -1;
	if (hi >= 0) {
		int lo = hi;

		while (lo - 1 >= r->opset_min && opset_ok[lo - 1])
			lo--;
		t->opset_min = lo;
		t->opset_max = hi;
	}
	t->has_missing_dtypes = 1;
	t->missing_dtypes = tried & ~used;
	t->max_rank = max_ok >= 0 && max_ok < max_ran ? max_ok : -1;
	t->dynamic_shapes = dyn;
	t->device_memory_bytes = -1;
	return 0;
}

int probe_derive(const struct probe_run *r, const char *id, const char *name,
		 const char *tool, const char *date, struct rules_target *t,
		 struct ir_diag *d)
{
	char buf[1200];
	size_t n_ok = 0, n_ran = 0;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < r->n_cases; i++) {
		n_ran += ran(&r->cases[i]);
		n_ok += ok(&r->cases[i]);
	}
	if (!(t->id = strdup(id)) || !(t->name = strdup(name)) ||
	    !(t->sources = calloc(2, sizeof(*t->sources))))
		goto oom;
	snprintf(buf, sizeof(buf), "%s probe, %s: --runtime '%s'%s", tool, date, r->command,
		 r->accept_only ? " --accept-only" : "");
	if (!(t->sources[t->n_sources++] = strdup(buf)))
		goto oom;
	if (r->runtime) {
		snprintf(buf, sizeof(buf), "runtime: %s", r->runtime);
		if (!(t->sources[t->n_sources++] = strdup(buf)))
			goto oom;
	}
	snprintf(buf, sizeof(buf), "What %s %s of %zu generated one-node models (opset %d to %d), measured by opmig probe.",
		 r->runtime ? r->runtime : "the runtime", r->accept_only ? "accepted" :
		 "ran and computed right", n_ran, r->opset_min, r->opset_max);
	if (!(t->description = strdup(buf)))
		goto oom;
	snprintf(buf, sizeof(buf), "Measured, not documented: %zu of %zu cases passed. An op not listed had no case that passed or none opmig could make; dtypes, attribute values and ranks not probed are not restricted.",
		 n_ok, n_ran);
	if (!(t->notes = strdup(buf)))
		goto oom;
	target_facts(r, t);
	for (size_t i = 0; i < r->n_cases;) {
		struct opview v;
		size_t j = i;
		struct rules_op *q;

		if (target_wide(&r->cases[i]) || !r->cases[i].schema) {
			i++;
			continue;
		}
		memset(&v, 0, sizeof(v));
		while (j < r->n_cases && !target_wide(&r->cases[j]) &&
		       !strcmp(r->cases[j].schema->name, r->cases[i].schema->name))
			j++;
		v.c = &r->cases[i];
		v.n = j - i;
		i = j;
		versions(&v);
		if (!v.n_versions)
			continue;     /* nothing ran */
		if (!(q = realloc(t->ops, (t->n_ops + 1) * sizeof(*q))))
			goto oom;
		t->ops = q;
		if (derive_op(&v, &t->ops[t->n_ops]) < 0) {
			t->n_ops++;
			goto oom;
		}
		t->n_ops++;
	}
	rules_ops_sort(t->ops, t->n_ops);
	t->resolved = 1;
	return 0;
oom:
	rules_target_release(t);
	return ir_diag_error(d, IR_ENOMEM, "out of memory");
}
