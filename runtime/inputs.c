/* inputs.c: binding model inputs from tensor files and generating seeded
 * random inputs (see inputs.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/inputs.h"
#include "runtime/rt_int.h"
#include "runtime/tensor_io.h"

uint64_t rt_rand_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double rt_rand_unit(uint64_t *s)
{
	return (double)(rt_rand_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

int rt_dim_set_parse(const char *s, struct rt_dim_set *out)
{
	const char *eq = strchr(s, '=');
	char *end;
	long long v;

	if (!eq || eq == s || !eq[1])
		return -1;
	errno = 0;
	v = strtoll(eq + 1, &end, 10);
	if (errno || *end || v < 0)
		return -1;
	out->name = s;     /* compared up to '=' by users of the set */
	out->value = v;
	return 0;
}

int rt_value_range_parse(const char *s, struct rt_value_range *out)
{
	const char *eq = strchr(s, '=');
	char *end, *end2;

	if (!eq || eq == s)
		return -1;
	errno = 0;
	out->lo = strtod(eq + 1, &end);
	if (errno || end == eq + 1 || *end != ':')
		return -1;
	out->hi = strtod(end + 1, &end2);
	if (errno || end2 == end + 1 || *end2 || out->hi < out->lo)
		return -1;
	out->name = s;
	return 0;
}

/* "name=..." matches name. */
static int key_is(const char *spec, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(spec, name, n) && spec[n] == '=';
}

void rt_inputs_release(struct rt_value **vals, size_t n)
{
	for (size_t i = 0; vals && i < n; i++) {
		rt_value_unref(vals[i]);
		vals[i] = NULL;
	}
}

static int input_index(struct rt_session *s, const char *spec, size_t *at)
{
	for (size_t i = 0; i < rt_session_n_inputs(s); i++)
		if (key_is(spec, ir_s(rt_session_input(s, i)->value->name))) {
			*at = i;
			return 1;
		}
	return 0;
}

static int bind_file(struct rt_session *s, size_t i, const char *path,
		     struct rt_value **vals, struct ir_diag *d)
{
	const struct ir_vinfo *vi = rt_session_input(s, i);

	int rc;

	if (vals[i])
		return diag_error(d, "input '%s' is given twice", ir_s(vi->value->name));
	if ((rc = rt_value_read_file(NULL, path, vi->type, &vals[i], d)) < 0)
		return rc;
	if ((rc = rt_session_check_input(s, i, vals[i], d)) < 0) {
		rt_value_unref(vals[i]);
		vals[i] = NULL;
	}
	return rc;
}

int rt_inputs_from_files(struct rt_session *s, char *const *specs, size_t n,
			 struct rt_value **vals, char *bad_file, size_t size,
			 struct ir_diag *d)
{
	size_t next = 0;
	int rc;

	bad_file[0] = 0;
	for (size_t k = 0; k < n; k++) {
		const char *spec = specs[k], *path = spec;
		size_t i;

		if (input_index(s, spec, &i)) {
			path = strchr(spec, '=') + 1;
		} else {
			while (next < rt_session_n_inputs(s) && vals[next])
				next++;
			if (next >= rt_session_n_inputs(s)) {
				snprintf(bad_file, size, "%s", spec);
				return ir_diag_error(d, IR_EUSAGE,
						     "more input files than the model has inputs (%zu)",
						     rt_session_n_inputs(s));
			}
			i = next;
		}
		if ((rc = bind_file(s, i, path, vals, d)) < 0) {
			snprintf(bad_file, size, "%s", path);
			return rc;
		}
	}
	return 0;
}

int rt_inputs_from_dir(struct rt_session *s, const char *dir,
		       struct rt_value **vals, char *bad_file, size_t size,
		       struct ir_diag *d)
{
	char path[4200];
	int rc;

	bad_file[0] = 0;
	for (size_t i = 0; i < rt_session_n_inputs(s); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/input_%zu.pb", dir, i);
		if (!(f = fopen(path, "rb")))
			continue;   /* not given: random or an error later */
		fclose(f);
		if ((rc = bind_file(s, i, path, vals, d)) < 0) {
			snprintf(bad_file, size, "%s", path);
			return rc;
		}
	}
	return 0;
}

/* ---- random inputs ----------------------------------------------------- */

static int64_t initializer_dim(const struct ir_value *v, int64_t axis)
{
	const struct ir_tensor *t = v ? v->init : NULL;

	if (!t || axis < -(int64_t)t->n_dims || axis >= (int64_t)t->n_dims)
		return -1;
	return t->dims[axis < 0 ? axis + (int64_t)t->n_dims : axis];
}

static int64_t attr_int(const struct ir_node *n, const char *name, int64_t dflt)
{
	for (size_t i = 0; i < n->n_attrs; i++)
		if (!strcmp(ir_s(n->attrs[i]->name), name) &&
		    n->attrs[i]->type == IR_ATTR_INT)
			return n->attrs[i]->i;
	return dflt;
}

/* The smallest size of an initializer axis v indexes through Gather (or
 * the like); -1 none. */
static int64_t index_bound(const struct ir_value *v)
{
	int64_t bound = -1;

	for (size_t i = 0; i < v->n_uses; i++) {
		const struct ir_node *n = v->uses[i];
		const char *op = ir_s(n->op_type);
		int64_t size = -1;

		if (n->n_inputs < 2 || n->inputs[1] != v)
			continue;
		if (!strcmp(op, "Gather") || !strcmp(op, "GatherElements"))
			size = initializer_dim(n->inputs[0], attr_int(n, "axis", 0));
		else if (!strcmp(op, "GatherND"))
			size = initializer_dim(n->inputs[0], attr_int(n, "batch_dims", 0));
		if (size > 0 && (bound < 0 || size < bound))
			bound = size;
	}
	return bound;
}

void rt_input_int_range(const struct ir_model *m, const struct ir_value *v,
			double *lo, double *hi)
{
	int64_t bound = index_bound(v);

	(void)m;
	*lo = 0;
	*hi = 7;
	if (bound > 0)
		*hi = (double)(bound - 1);
}

/* ---- decoder inputs ----------------------------------------------------- */

static int name_starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

enum rt_input_role rt_input_role_of(const struct ir_vinfo *vi)
{
	const struct ir_type *t = vi->type;
	const char *name = ir_s(vi->value->name);
	int rank, dt;

	if (!t || t->kind != IR_TYPE_TENSOR || !IR_HAS(t, IR_TYPE_HAS_ELEM) ||
	    !IR_HAS(t, IR_TYPE_HAS_SHAPE))
		return RT_ROLE_NONE;
	rank = (int)t->shape.n_dims;
	dt = t->elem_type;
	if (!strcmp(name, "attention_mask") && rank == 2 && rt_dtype_is_int(dt))
		return RT_ROLE_ATTENTION_MASK;
	if (!strcmp(name, "position_ids") && rank >= 1 && rt_dtype_is_int(dt))
		return RT_ROLE_POSITION_IDS;
	if (!strcmp(name, "input_ids") && rt_dtype_is_int(dt))
		return RT_ROLE_INPUT_IDS;
	if ((name_starts(name, "past_key_values.") || name_starts(name, "past_key") ||
	     name_starts(name, "past_value")) && rank == 4 && rt_dtype_is_float(dt))
		return RT_ROLE_PAST_KV;
	return RT_ROLE_NONE;
}

const char *rt_input_role_rule(enum rt_input_role r)
{
	switch (r) {
	case RT_ROLE_ATTENTION_MASK: return "all ones";
	case RT_ROLE_POSITION_IDS: return "past length + 0..S-1 per row";
	case RT_ROLE_INPUT_IDS: return "random token ids below the vocabulary size";
	case RT_ROLE_PAST_KV: return "random in [-1, 1)";
	default: return "random";
	}
}

int64_t rt_input_vocab(const struct ir_model *m)
{
	const struct ir_graph *g = m->graph;

	for (size_t i = 0; i < g->n_inputs; i++)
		if (rt_input_role_of(&g->inputs[i]) == RT_ROLE_INPUT_IDS)
			return index_bound(g->inputs[i].value);
	return -1;
}

static int64_t dim_value(const struct ir_dim *dm, const struct rt_input_opts *o);

int64_t rt_input_past_length(const struct ir_model *m, const struct rt_input_opts *o)
{
	const struct ir_graph *g = m->graph;

	for (size_t i = 0; i < g->n_inputs; i++)
		if (rt_input_role_of(&g->inputs[i]) == RT_ROLE_PAST_KV)
			return dim_value(&g->inputs[i].type->shape.dims[2], o);
	return 0;
}

/* A symbolic dim's value from --dim: 1 and *given 0 when none names it. */
static int64_t dim_lookup(const struct ir_dim *dm, const struct rt_input_opts *o, int *given)
{
	*given = 1;
	if (dm->kind == IR_DIM_VALUE)
		return dm->value;
	if (dm->kind == IR_DIM_PARAM)
		for (size_t i = 0; i < o->n_dims; i++)
			if (key_is(o->dims[i].name, ir_s(dm->param)))
				return o->dims[i].value;
	*given = 0;
	return 1;
}

static int64_t dim_value(const struct ir_dim *dm, const struct rt_input_opts *o)
{
	int given;

	return dim_lookup(dm, o, &given);
}

/* The last dim of the first input of role r, or 0 when none has one. */
static int64_t role_last_dim(const struct ir_model *m, const struct rt_input_opts *o,
			     enum rt_input_role r)
{
	const struct ir_graph *g = m->graph;

	for (size_t i = 0; i < g->n_inputs; i++) {
		const struct ir_type *t = g->inputs[i].type;

		if (rt_input_role_of(&g->inputs[i]) == r && t && IR_HAS(t, IR_TYPE_HAS_SHAPE) &&
		    t->shape.n_dims >= 1)
			return dim_value(&t->shape.dims[t->shape.n_dims - 1], o);
	}
	return 0;
}

/* The new tokens' count: input_ids' (else position_ids') last dim, or 0
 * when the model has neither. */
static int64_t seq_length(const struct ir_model *m, const struct rt_input_opts *o)
{
	int64_t s = role_last_dim(m, o, RT_ROLE_INPUT_IDS);

	return s ? s : role_last_dim(m, o, RT_ROLE_POSITION_IDS);
}

static const char *const words[] = {
	"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"
};

static int random_tensor(const struct ir_model *m, const struct ir_vinfo *vi,
			 const struct rt_input_opts *o, uint64_t *st,
			 struct rt_value **out, struct ir_diag *d)
{
	const struct ir_type *t = vi->type;
	int64_t dims[RT_MAX_RANK];
	double lo = -1, hi = 1;
	int rank = 0, have_range = 0, rc;
	enum rt_input_role role;
	struct rt_value *v;

	if (!t || t->kind != IR_TYPE_TENSOR || !IR_HAS(t, IR_TYPE_HAS_ELEM))
		return diag_error(d, "input '%s': cannot generate data for a non-tensor or untyped input; give a file",
				  ir_s(vi->value->name));
	if (IR_HAS(t, IR_TYPE_HAS_SHAPE)) {
		if (t->shape.n_dims > RT_MAX_RANK)
			return diag_error(d, "input '%s' has rank %zu", ir_s(vi->value->name),
					  t->shape.n_dims);
		int64_t s;
		int given = 1;

		rank = (int)t->shape.n_dims;
		for (int i = 0; i < rank; i++)
			dims[i] = dim_lookup(&t->shape.dims[i], o, &given);
		/* an attention mask spans the past and the new tokens: its
		 * last dim, when no --dim names it, is their sum */
		if (rank >= 1 && !given && rt_input_role_of(vi) == RT_ROLE_ATTENTION_MASK &&
		    (s = seq_length(m, o)) > 0)
			dims[rank - 1] = rt_input_past_length(m, o) + s;
	}
	for (size_t i = 0; i < o->n_ranges; i++)
		if (key_is(o->ranges[i].name, ir_s(vi->value->name))) {
			lo = o->ranges[i].lo;
			hi = o->ranges[i].hi;
			have_range = 1;
		}
	if (!have_range && rt_dtype_is_int(t->elem_type)) {
		rt_input_int_range(m, vi->value, &lo, &hi);
		if (!rt_dtype_is_signed(t->elem_type) && lo < 0)
			lo = 0;
	}
	if ((rc = rt_tensor_new(NULL, t->elem_type, rank, dims, &v, d)) < 0)
		return rc;
	role = have_range ? RT_ROLE_NONE : rt_input_role_of(vi);
	if (role == RT_ROLE_ATTENTION_MASK || role == RT_ROLE_POSITION_IDS) {
		int64_t past = rt_input_past_length(m, o), s = rank ? dims[rank - 1] : 1;

		for (int64_t i = 0; i < v->numel; i++)
			rt_store_i64(t->elem_type, v->data, i, role == RT_ROLE_ATTENTION_MASK ?
				     1 : past + (s > 0 ? i % s : 0));
		*out = v;
		return 0;
	}
	for (int64_t i = 0; i < v->numel; i++) {
		double u = rt_rand_unit(st);

		if (t->elem_type == IR_DTYPE_STRING) {
			char *s = strdup(words[rt_rand_next(st) % 8]);

			if (!s) {
				rt_value_unref(v);
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
			}
			((char **)v->data)[i] = s;
		} else if (t->elem_type == IR_DTYPE_BOOL) {
			((uint8_t *)v->data)[i] = u < 0.5;
		} else if (rt_dtype_is_int(t->elem_type)) {
			int64_t a = (int64_t)lo, b = (int64_t)hi;

			rt_store_i64(t->elem_type, v->data, i,
				     a + (int64_t)(rt_rand_next(st) % (uint64_t)(b - a + 1)));
		} else {
			rt_store_f64(t->elem_type, v->data, i, lo + (hi - lo) * u);
		}
	}
	*out = v;
	return 0;
}

int rt_inputs_random(struct rt_session *s, const struct ir_model *m,
		     const struct rt_input_opts *o, struct rt_value **vals,
		     struct ir_diag *d)
{
	uint64_t st = o->seed;
	int rc;

	for (size_t i = 0; i < rt_session_n_inputs(s); i++) {
		/* one stream per input, independent of the others being bound */
		uint64_t sub = st ^ (0x632be59bd9b4e019ull * (i + 1));

		rt_rand_next(&sub);
		if (vals[i])
			continue;
		if ((rc = random_tensor(m, rt_session_input(s, i), o, &sub, &vals[i], d)) < 0)
			return rc;
	}
	return 0;
}
