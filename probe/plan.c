/* plan.c: which cases a probe runs.  For every op of the domain (or of
 * --ops) and every version of it that some opset of the range resolves
 * to: a seed (the simplest backend node case of that version, else one of
 * another version whose node fits this one, else one synthesized from the
 * schema); the backend cases of that version as they are; a base case per
 * main dtype; and, in the reference dtype, one factor varied at a time:
 * each attribute through its values worth trying, the data inputs at
 * ranks 1-5, each constant input as a graph input and input 0 constant.
 * Plus two target-wide probes: Relu at each opset of the range (the
 * opsets the runtime takes) and Relu with a symbolic batch dim (dynamic
 * shapes).  Cases are sorted by id, which names op, version and variant. */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_int.h"

/* The order dtypes are tried and listed in (float32 first: the
 * reference dtype of an op is the first of these it admits). */
static const int dtype_order[] = {
	IR_DTYPE_FLOAT, IR_DTYPE_FLOAT16, IR_DTYPE_DOUBLE, IR_DTYPE_BFLOAT16,
	IR_DTYPE_INT8, IR_DTYPE_UINT8, IR_DTYPE_INT16, IR_DTYPE_UINT16,
	IR_DTYPE_INT32, IR_DTYPE_UINT32, IR_DTYPE_INT64, IR_DTYPE_UINT64,
	IR_DTYPE_BOOL,
};

rules_dtypes probe_default_dtypes(void)
{
	return RULES_DTYPE_BIT(IR_DTYPE_FLOAT) | RULES_DTYPE_BIT(IR_DTYPE_FLOAT16) |
	       RULES_DTYPE_BIT(IR_DTYPE_DOUBLE) | RULES_DTYPE_BIT(IR_DTYPE_INT8) |
	       RULES_DTYPE_BIT(IR_DTYPE_UINT8) | RULES_DTYPE_BIT(IR_DTYPE_INT32) |
	       RULES_DTYPE_BIT(IR_DTYPE_INT64) | RULES_DTYPE_BIT(IR_DTYPE_BOOL);
}

void probe_case_release(struct probe_case *c)
{
	free(c->id);
	free(c->attr);
	free(c->backend);
	free(c->message);
	probe_aval_release(&c->value);
	probe_aval_release(&c->base_value);
	memset(c, 0, sizeof(*c));
}

void probe_plan_release(struct probe_plan *p)
{
	for (size_t i = 0; i < p->n_seeds; i++)
		probe_spec_free(p->seeds[i]);
	for (size_t i = 0; i < p->n_cases; i++)
		probe_case_release(&p->cases[i]);
	for (size_t i = 0; i < p->n_no_seed; i++)
		free(p->no_seed[i]);
	free(p->no_seed);
	free(p->seeds);
	free(p->cases);
	memset(p, 0, sizeof(*p));
}

static int add_seed(struct probe_plan *p, struct probe_spec *sp)
{
	struct probe_spec **q = realloc(p->seeds, (p->n_seeds + 1) * sizeof(*q));

	if (!q)
		return -1;
	p->seeds = q;
	p->seeds[p->n_seeds++] = sp;
	return 0;
}

static struct probe_case *add_case(struct probe_plan *p, const struct ir_op_schema *s,
				   int opset, enum probe_kind kind, int seed, int dtype,
				   const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static struct probe_case *add_case(struct probe_plan *p, const struct ir_op_schema *s,
				   int opset, enum probe_kind kind, int seed, int dtype,
				   const char *fmt, ...)
{
	struct probe_case *c;
	char id[512];
	va_list ap;

	if (p->n_cases == p->cap_cases) {
		size_t cap = p->cap_cases ? 2 * p->cap_cases : 256;
		struct probe_case *q = realloc(p->cases, cap * sizeof(*q));

		if (!q)
			return NULL;
		p->cases = q;
		p->cap_cases = cap;
	}
	va_start(ap, fmt);
	vsnprintf(id, sizeof(id), fmt, ap);
	va_end(ap);
	c = &p->cases[p->n_cases];
	memset(c, 0, sizeof(*c));
	if (!(c->id = strdup(id)))
		return NULL;
	p->n_cases++;
	c->schema = s;
	c->opset = opset;
	c->kind = kind;
	c->seed = seed;
	c->dtype = dtype;
	c->input = -1;
	c->in0_rank = -1;
	c->max_abs = -1;
	return c;
}

/* ---- the backend node cases ------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int in_ops(const struct probe_opts *o, const char *op)
{
	if (!o->ops)
		return 1;
	for (size_t i = 0; i < o->n_ops; i++)
		if (!strcmp(o->ops[i], op))
			return 1;
	return 0;
}

/* Every backend node case of the domain's ops in scope becomes a seed. */
static int load_backend(const struct probe_opts *o, const char *domain, struct probe_plan *p,
			struct ir_diag *d)
{
	DIR *dir = opendir(o->backend_dir);
	struct dirent *e;
	char **names = NULL, why[256];
	size_t n = 0;
	int rc = 0;

	if (!dir)
		return 0;     /* no backend data: synthesized seeds only */
	while ((e = readdir(dir))) {
		char **q;

		if (strncmp(e->d_name, "test_", 5))
			continue;
		if (!(q = realloc(names, (n + 1) * sizeof(*q))) || !(q[n] = strdup(e->d_name))) {
			names = q ? q : names;
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
			break;
		}
		names = q;
		n++;
	}
	closedir(dir);
	if (rc == 0)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && rc == 0; i++) {
		char path[4200];
		struct probe_spec *sp;

		snprintf(path, sizeof(path), "%s/%s", o->backend_dir, names[i]);
		if (!(sp = probe_spec_from_backend(path, names[i], why, sizeof(why))))
			continue;
		if (strcmp(sp->own->domain, domain) || !in_ops(o, sp->own->name) ||
		    sp->own->deprecated) {
			probe_spec_free(sp);
			continue;
		}
		if (add_seed(p, sp) < 0) {
			probe_spec_free(sp);
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* ---- one op version ---------------------------------------------------- */

static size_t numel_of(const struct probe_spec *sp)
{
	size_t n = 0;

	for (size_t i = 0; i < sp->n_in; i++)
		n += sp->in[i] ? (size_t)sp->in[i]->numel : 0;
	return n;
}

/* Inputs all of one shape (no broadcasting), and how usual the rank of
 * input 0 is in real models (4 first: NCHW). */
static int one_shape(const struct probe_spec *sp)
{
	const struct rt_value *first = NULL;

	for (size_t i = 0; i < sp->n_in; i++) {
		const struct rt_value *v = sp->in[i];

		if (!v || v->dtype != (first ? first->dtype : v->dtype))
			continue;
		if (!first)
			first = v;
		else if (v->rank != first->rank ||
			 memcmp(v->dims, first->dims, (size_t)v->rank * sizeof(v->dims[0])))
			return 0;
	}
	return 1;
}

static int rank_pref(const struct probe_spec *sp)
{
	static const int pref[] = { 1, 2, 4, 5, 6, 3 };    /* by rank 0..5 */
	int r = sp->n_in && sp->in[0] ? sp->in[0]->rank : 0;

	return r <= 5 ? pref[r] : 0;
}

/* The better seed: fewer attributes set, inputs of one shape, the usual
 * rank, then smaller inputs. */
static int simpler(const struct probe_spec *a, const struct probe_spec *b)
{
	if (a->n_attrs_set != b->n_attrs_set)
		return a->n_attrs_set < b->n_attrs_set;
	if (one_shape(a) != one_shape(b))
		return one_shape(a);
	if (rank_pref(a) != rank_pref(b))
		return rank_pref(a) > rank_pref(b);
	return numel_of(a) < numel_of(b);
}

static int has_data_input(const struct probe_spec *sp, const char *dc, const struct ir_op_schema *s)
{
	for (size_t i = 0; dc && i < sp->n_in; i++) {
		const char *t = probe_formal_type(s, 1, i);

		if (sp->in[i] && t && !strcmp(t, dc))
			return 1;
	}
	return 0;
}

/* Do the data inputs all have one shape (an elementwise op, so that a
 * rank variant stays valid)? */
static int data_same_shape(const struct probe_spec *sp, const char *dc, const struct ir_op_schema *s)
{
	const struct rt_value *first = NULL;

	for (size_t i = 0; dc && i < sp->n_in; i++) {
		const char *t = probe_formal_type(s, 1, i);
		const struct rt_value *v = sp->in[i];

		if (!v || !t || strcmp(t, dc))
			continue;
		if (!first) {
			first = v;
			continue;
		}
		if (v->rank != first->rank ||
		    memcmp(v->dims, first->dims, (size_t)v->rank * sizeof(v->dims[0])))
			return 0;
	}
	return first && first->rank >= 1;
}

static int plan_version(const struct probe_opts *o, const struct ir_op_schema *s, int opset,
			struct probe_plan *p, struct ir_diag *d)
{
	const char *dc = probe_data_constraint(s);
	rules_dtypes want = o->dtypes ? o->dtypes : probe_default_dtypes();
	rules_dtypes have = dc ? probe_type_dtypes(s, dc) & want : 0;
	const struct probe_spec *seed = NULL;
	struct probe_case *c;
	int si = -1, ref_dt = 0, exact = 0;
	char vname[160];

	snprintf(vname, sizeof(vname), "%s-%d", s->name, s->since_version);
	/* the seed: an exact backend case, else one that fits, else synthesized */
	for (size_t i = 0; i < p->n_seeds; i++) {
		const struct probe_spec *sp = p->seeds[i];
		int ex = sp->own == s;

		if (strcmp(sp->own->name, s->name) || strcmp(sp->own->domain, s->domain) ||
		    !sp->model)
			continue;
		if (!ex && !probe_spec_fits(sp, s))
			continue;
		if (!seed || (ex && !exact) || (ex == exact && simpler(sp, seed))) {
			seed = sp;
			si = (int)i;
			exact = ex;
		}
	}
	if (!seed) {
		struct probe_spec *sp = probe_spec_synth(s, o->seed);

		char **q;

		if (!sp) {
			/* no seed: reported as an op version without cases */
			if (!(q = realloc(p->no_seed, (p->n_no_seed + 1) * sizeof(*q))))
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
			p->no_seed = q;
			if (!(q[p->n_no_seed] = strdup(vname)))
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
			p->n_no_seed++;
			return 0;
		}
		if (add_seed(p, sp) < 0) {
			probe_spec_free(sp);
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		}
		si = (int)p->n_seeds - 1;
		seed = sp;
	} else {
		p->n_seeds_backend++;
	}
	/* the backend cases of this very version, as they are */
	for (size_t i = 0; i < p->n_seeds; i++) {
		const struct probe_spec *sp = p->seeds[i];

		if (sp->own != s || !sp->model)
			continue;
		if (!(c = add_case(p, s, opset, PROBE_BACKEND, (int)i, 0, "%s.backend.%s", vname,
				   sp->name + 5)) || !(c->backend = strdup(sp->name)))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		/* and with its parameters constant, where they were not */
		for (size_t k = 1; k < sp->n_in; k++)
			if (sp->in[k] && !sp->is_const[k]) {
				if (!(c = add_case(p, s, opset, PROBE_BACKEND_CONST, (int)i, 0,
						   "%s.backendc.%s", vname, sp->name + 5)) ||
				    !(c->backend = strdup(sp->name)))
					return ir_diag_error(d, IR_ENOMEM, "out of memory");
				break;
			}
	}
	/* a base case per main dtype */
	if (has_data_input(seed, dc, s) && have) {
		for (size_t k = 0; k < sizeof(dtype_order) / sizeof(dtype_order[0]); k++) {
			int t = dtype_order[k];

			if (!(have & RULES_DTYPE_BIT(t)))
				continue;
			if (!ref_dt)
				ref_dt = t;
			if (!(c = add_case(p, s, opset, PROBE_BASE, si, t, "%s.%s", vname,
					   rules_dtype_name(t))))
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
			c->ref = t == ref_dt;
			if (seed != NULL && seed->model && !(c->backend = strdup(seed->name)))
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
		}
	} else {
		if (!(c = add_case(p, s, opset, PROBE_BASE, si, 0, "%s.base", vname)))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		c->ref = 1;
		if (seed->model && !(c->backend = strdup(seed->name)))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	/* one factor at a time, in the reference dtype */
	for (size_t k = 0; k < s->n_attrs; k++) {
		const struct ir_op_attr *a = &s->attrs[k];
		struct probe_aval *vals = NULL;
		size_t nv = 0;

		if (a->type != IR_ATTR_INT && a->type != IR_ATTR_FLOAT && a->type != IR_ATTR_STRING &&
		    a->type != IR_ATTR_INTS)
			continue;
		if (probe_aval_candidates(s, a, seed, &vals, &nv) < 0)
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		for (size_t j = 0; j < nv; j++) {
			char slug[128];

			probe_aval_slug(&vals[j], slug, sizeof(slug));
			if (!(c = add_case(p, s, opset, PROBE_ATTR, si, ref_dt, "%s.attr.%s=%s", vname,
					   a->name, slug)) || !(c->attr = strdup(a->name)) ||
			    probe_aval_copy(&c->value, &vals[j]) < 0 ||
			    probe_aval_of(seed->node, s, a->name, &c->base_value) < 0) {
				for (; j < nv; j++)
					probe_aval_release(&vals[j]);
				free(vals);
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
			}
			probe_aval_release(&vals[j]);
		}
		free(vals);
	}
	if (has_data_input(seed, dc, s) && data_same_shape(seed, dc, s) && ref_dt) {
		int r0 = seed->in[0] ? seed->in[0]->rank : -1;

		for (int r = 1; r <= 5; r++) {
			if (r == r0)
				continue;
			if (!(c = add_case(p, s, opset, PROBE_RANK, si, ref_dt, "%s.rank%d", vname, r)))
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
			c->rank = r;
		}
	}
	for (size_t i = 0; i < seed->n_in; i++) {
		if (!seed->in[i])
			continue;
		if (!(c = add_case(p, s, opset, i ? PROBE_GRAPH : PROBE_CONST, si, ref_dt,
				   i ? "%s.graph%zu" : "%s.const%zu", vname, i)))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		c->input = (int)i;
	}
	return 0;
}

/* Does some opset of [a, b] resolve the op to version s? */
static int reachable(const struct ir_op_schema *s, int a, int b, int *opset)
{
	const struct ir_op_schema *next = probe_schema_next(s);
	int lo = s->since_version > a ? s->since_version : a;
	int hi = next && next->since_version - 1 < b ? next->since_version - 1 : b;

	*opset = lo;
	return lo <= hi;
}

static int plan_target_wide(const struct probe_opts *o, struct probe_plan *p, struct ir_diag *d)
{
	struct probe_case *c;

	for (int k = o->opset_min; k <= o->opset_max; k++) {
		const struct ir_op_schema *s = ir_registry_find("", "Relu", k);
		struct probe_spec *sp;

		if (!s)
			continue;
		if (!(sp = probe_spec_synth(s, o->seed)) || add_seed(p, sp) < 0) {
			probe_spec_free(sp);
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		}
		if (!(c = add_case(p, s, k, PROBE_OPSET, (int)p->n_seeds - 1, IR_DTYPE_FLOAT,
				   "~opset.%02d", k)))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		if (k == o->opset_max &&
		    !(c = add_case(p, s, k, PROBE_DYNAMIC, (int)p->n_seeds - 1, IR_DTYPE_FLOAT,
				   "~dynamic")))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	return 0;
}

static int cmp_case(const void *a, const void *b)
{
	return strcmp(((const struct probe_case *)a)->id, ((const struct probe_case *)b)->id);
}

int probe_plan_make(const struct probe_opts *o, struct probe_plan *p, struct ir_diag *d)
{
	const char *domain = o->domain && *o->domain ? o->domain : "ai.onnx";
	int dflt = !strcmp(domain, "ai.onnx");
	const char *last = NULL;
	int rc;

	memset(p, 0, sizeof(*p));
	if (o->backend_dir && (rc = load_backend(o, domain, p, d)) < 0)
		return rc;
	for (size_t i = 0; i < ir_registry_count(); i++) {
		const struct ir_op_schema *s = ir_registry_at(i);
		int opset;

		if (strcmp(s->domain, domain) || s->deprecated || !in_ops(o, s->name))
			continue;
		if (dflt && !reachable(s, o->opset_min, o->opset_max, &opset))
			continue;
		if (!dflt)
			opset = o->opset_max;
		if (!last || strcmp(last, s->name)) {
			p->n_ops++;
			last = s->name;
		}
		if ((rc = plan_version(o, s, opset, p, d)) < 0)
			return rc;
	}
	if (dflt && (rc = plan_target_wide(o, p, d)) < 0)
		return rc;
	qsort(p->cases, p->n_cases, sizeof(*p->cases), cmp_case);
	for (size_t i = 1; i < p->n_cases; i++)
		if (!strcmp(p->cases[i].id, p->cases[i - 1].id))
			return ir_diag_error(d, IR_EINTERNAL, "two probe cases named '%s'", p->cases[i].id);
	return 0;
}
