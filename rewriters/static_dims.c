/* static_dims.c: pass "static-dims" (--batch N, --dim NAME=V): symbolic
 * and unknown dims of the graph inputs become the values asked for (dim 0
 * of every input of rank >= 1 with --batch), and so does every declared
 * dim with the same symbolic name (outputs, value_info).  With --batch, a
 * static batch dim that differs is changed too, and constant Reshape
 * shapes that hard-code the old batch as their first entry follow (each
 * one reported as a note).  Inference then makes shapes static
 * downstream; fold-constants turns the Shape arithmetic into constants.
 * On a target whose rules say dynamic_shapes false, every input dim left
 * symbolic or unknown becomes 1 (or the validation data's size, when
 * migrate validates with files), with a note naming --batch and --dim.
 * Dims still symbolic afterwards are reported. */
#include <stdio.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rw_int.h"
#include "runtime/inputs.h"

struct names {
	size_t n;
	const char *name[64];
	int64_t value[64];
};

/* Names compare up to '=': --dim sets keep "NAME=V" (rt_dim_set_parse). */
static int same_name(const char *a, const char *b)
{
	size_t k = strcspn(a, "=");

	return k == strcspn(b, "=") && !strncmp(a, b, k);
}

static void add(struct names *s, const char *name, int64_t v)
{
	for (size_t i = 0; i < s->n; i++)
		if (same_name(s->name[i], name))
			return;
	if (s->n < 64) {
		s->name[s->n] = name;
		s->value[s->n++] = v;
	}
}

static int lookup(const struct names *s, const char *name, int64_t *v)
{
	for (size_t i = 0; name && i < s->n; i++)
		if (same_name(s->name[i], name)) {
			*v = s->value[i];
			return 1;
		}
	return 0;
}

static size_t set_dims(struct ir_type *t, const struct names *s)
{
	size_t k = 0;
	int64_t v;

	if (!t || t->kind != IR_TYPE_TENSOR)
		return 0;
	for (size_t i = 0; i < t->shape.n_dims; i++) {
		struct ir_dim *d = &t->shape.dims[i];

		if (d->kind == IR_DIM_PARAM && lookup(s, d->param, &v)) {
			d->kind = IR_DIM_VALUE;
			d->value = v;
			k++;
		}
	}
	return k;
}

/* A Reshape whose constant shape starts with the old batch size. */
static int fix_reshape(struct rw_ctx *c, struct ir_node *n, int64_t old, int64_t batch)
{
	struct ir_value *s = n->n_inputs > 1 ? n->inputs[1] : NULL;
	struct ir_tensor *t = s ? s->init : NULL;
	int64_t *v;

	if (!t || t->dtype != IR_DTYPE_INT64 || t->n_dims != 1 || t->storage != IR_STORE_RAW ||
	    t->raw_owner || t->raw_len < sizeof(int64_t) || s->n_uses != 1)
		return 0;
	v = (int64_t *)t->raw;
	if (v[0] != old)
		return 0;
	v[0] = batch;
	return rw_note(c, "Reshape '%s': shape constant '%s' hard-coded batch %lld, now %lld",
		       ir_s(n->name), ir_s(s->name), (long long)old, (long long)batch) < 0 ? -1 : 1;
}

/* A target that takes static shapes only: every input dim still
 * symbolic or unknown becomes 1 (polygraphy's default), each with a note,
 * and the symbolic ones are recorded for validation (the original runs
 * with the same sizes). */
/* The size validation data gives input `name` on dim k, else 1. */
static int64_t hinted(const struct rw_ctx *c, const char *name, size_t k, size_t rank,
		      int *from_data)
{
	for (size_t i = 0; i < c->n_hints; i++)
		if (!strcmp(c->hints[i].name, name) && c->hints[i].rank == (int)rank &&
		    c->hints[i].dims[k] > 0) {
			*from_data = 1;
			return c->hints[i].dims[k];
		}
	*from_data = 0;
	return 1;
}

static int default_dims(struct rw_ctx *c, struct names *s, size_t *changed)
{
	struct ir_graph *g = c->m->graph;

	for (size_t i = 0; i < g->n_inputs; i++) {
		struct ir_type *t = g->inputs[i].type;
		const char *in = ir_s(g->inputs[i].value->name);

		if (!t || t->kind != IR_TYPE_TENSOR || g->inputs[i].value->init)
			continue;
		for (size_t k = 0; k < t->shape.n_dims; k++) {
			struct ir_dim *d = &t->shape.dims[k];
			const char *name = d->kind == IR_DIM_PARAM ? d->param : NULL;
			int from_data;
			int64_t v, size;

			if (d->kind == IR_DIM_VALUE)
				continue;
			if (name && lookup(s, name, &v)) {    /* set with another input */
				d->kind = IR_DIM_VALUE;
				d->value = v;
				(*changed)++;
				continue;
			}
			size = hinted(c, in, k, t->shape.n_dims, &from_data);
			if (rw_note(c, "input '%s' dim %zu (%s) set to %lld%s: %s takes static "
				    "shapes only; give --batch N or --dim %s=V for another size",
				    in, k, name ? name : "unnamed", (long long)size,
				    from_data ? " (the validation data's)" : "", c->target->id,
				    name ? name : "NAME") < 0 ||
			    (name && rw_auto_dim(c, name, size) < 0))
				return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
			if (name)
				add(s, name, size);
			d->kind = IR_DIM_VALUE;
			d->value = size;
			(*changed)++;
		}
	}
	/* the same names elsewhere (outputs, value_info) follow */
	for (size_t i = 0; i < g->n_outputs; i++)
		*changed += set_dims(g->outputs[i].type, s);
	for (size_t i = 0; i < g->n_value_info; i++)
		*changed += set_dims(g->value_info[i].type, s);
	return 0;
}

static int run(struct rw_ctx *c, size_t *changed)
{
	struct ir_graph *g = c->m->graph;
	struct names s = { 0 };
	int64_t old_batch = 0;
	int rc;

	*changed = 0;
	for (size_t i = 0; i < c->n_dims; i++)
		add(&s, c->dims[i].name, c->dims[i].value);
	for (size_t i = 0; c->batch && i < g->n_inputs; i++) {
		struct ir_type *t = g->inputs[i].type;
		struct ir_dim *d;

		if (!t || t->kind != IR_TYPE_TENSOR || !t->shape.n_dims || g->inputs[i].value->init)
			continue;
		d = &t->shape.dims[0];
		if (d->kind == IR_DIM_PARAM) {
			add(&s, d->param, c->batch);
		} else if (d->kind == IR_DIM_VALUE && d->value != c->batch) {
			old_batch = d->value;
			d->value = c->batch;
			(*changed)++;
		} else if (d->kind != IR_DIM_VALUE) {
			d->kind = IR_DIM_VALUE;
			d->value = c->batch;
			(*changed)++;
		}
	}
	for (size_t i = 0; i < g->n_inputs; i++)
		*changed += set_dims(g->inputs[i].type, &s);
	for (size_t i = 0; i < g->n_outputs; i++) {
		struct ir_type *t = g->outputs[i].type;

		*changed += set_dims(t, &s);
		if (old_batch && t && t->kind == IR_TYPE_TENSOR && t->shape.n_dims &&
		    t->shape.dims[0].kind == IR_DIM_VALUE && t->shape.dims[0].value == old_batch)
			t->shape.dims[0].value = c->batch;
	}
	for (size_t i = 0; i < g->n_value_info; i++)
		*changed += set_dims(g->value_info[i].type, &s);
	if (old_batch) {
		/* declared shapes of intermediates may hold the old batch */
		while (g->n_value_info)
			ir_graph_drop_value_info(g, g->value_info[0].value);
		for (size_t i = 0; i < g->n_nodes; i++)
			if (!strcmp(ir_s(g->nodes[i]->op_type), "Reshape")) {
				if ((rc = fix_reshape(c, g->nodes[i], old_batch, c->batch)) < 0)
					return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
				*changed += (size_t)rc;
			}
	}
	if (c->target && c->target->dynamic_shapes == 0 && (rc = default_dims(c, &s, changed)) < 0)
		return rc;
	for (size_t i = 0; i < g->n_inputs; i++) {
		const struct ir_type *t = g->inputs[i].type;

		for (size_t k = 0; t && t->kind == IR_TYPE_TENSOR && k < t->shape.n_dims; k++)
			if (t->shape.dims[k].kind != IR_DIM_VALUE &&
			    rw_note(c, "input '%s' dim %zu stays dynamic (%s): use --dim NAME=V",
				    ir_s(g->inputs[i].value->name), k,
				    t->shape.dims[k].kind == IR_DIM_PARAM ? t->shape.dims[k].param :
				    "unnamed") < 0)
				return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	}
	return 0;
}

const struct rw_pass rw_pass_static_dims = {
	.name = "static-dims",
	.summary = "make the graph inputs' symbolic dims static from --batch and --dim",
	.kind = RW_BATCH,
	.run = run,
};
