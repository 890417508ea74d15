/* interface.c: what migration changed of the model's interface: graph
 * inputs (those without an initializer) and outputs compared by name,
 * element type and rank between the original and the migrated model.
 * Passes keep the interface where the target lets them (a Cast at the
 * boundary); what they could not keep is listed in the report, one entry
 * per change, and `migrate --keep-interface` refuses the result then.
 * Sizes of dims are not compared: --batch, --dim and the static-shape
 * default change them on purpose, and say so in notes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/migrate.h"

static int elem(const struct ir_vinfo *v)
{
	return v->type && v->type->kind == IR_TYPE_TENSOR && IR_HAS(v->type, IR_TYPE_HAS_ELEM) ?
	       v->type->elem_type : 0;
}

static int rank(const struct ir_vinfo *v)
{
	return v->type && v->type->kind == IR_TYPE_TENSOR && IR_HAS(v->type, IR_TYPE_HAS_SHAPE) ?
	       (int)v->type->shape.n_dims : -1;
}

void mg_iface_release(struct mg_iface *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->items[i].name);
	free(f->items);
	memset(f, 0, sizeof(*f));
}

static int take(struct mg_iface *f, const struct ir_vinfo *v, size_t n, int input)
{
	for (size_t i = 0; i < n; i++) {
		struct mg_iface_item *it = &f->items[f->n];

		if (input && v[i].value->init)
			continue;
		if (!(it->name = strdup(ir_s(v[i].value->name))))
			return IR_ENOMEM;
		it->input = input;
		it->dtype = elem(&v[i]);
		it->rank = rank(&v[i]);
		f->n++;
	}
	return 0;
}

int mg_iface_snapshot(const struct ir_model *m, struct mg_iface *f, struct ir_diag *d)
{
	const struct ir_graph *g = m->graph;

	memset(f, 0, sizeof(*f));
	if (!(f->items = calloc(g->n_inputs + g->n_outputs + 1, sizeof(*f->items))) ||
	    take(f, g->inputs, g->n_inputs, 1) < 0 || take(f, g->outputs, g->n_outputs, 0) < 0) {
		mg_iface_release(f);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	return 0;
}

static const struct mg_iface_item *find(const struct mg_iface *f, const char *name, int input)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->items[i].input == input && !strcmp(f->items[i].name, name))
			return &f->items[i];
	return NULL;
}

static int add(struct mg_report *r, int input, const char *name, const char *what,
	       const char *from, const char *to)
{
	struct mg_iface_change *q = realloc(r->iface, (r->n_iface + 1) * sizeof(*q));

	if (!q)
		return IR_ENOMEM;
	r->iface = q;
	q += r->n_iface;
	memset(q, 0, sizeof(*q));
	q->input = input;
	q->what = what;
	if (!(q->name = strdup(name)) || !(q->from = strdup(from)) || !(q->to = strdup(to))) {
		free(q->name);
		free(q->from);
		return IR_ENOMEM;
	}
	r->n_iface++;
	return 0;
}

int mg_iface_diff(const struct mg_iface *before, const struct ir_model *m,
		  struct mg_report *r, struct ir_diag *d)
{
	struct mg_iface after;
	char x[32], y[32];
	int rc = 0;

	if ((rc = mg_iface_snapshot(m, &after, d)) < 0)
		return rc;
	for (size_t i = 0; i < before->n && rc == 0; i++) {
		const struct mg_iface_item *a = &before->items[i], *b;

		if (!(b = find(&after, a->name, a->input))) {
			/* an input bound by --input-value is an initializer now */
			rc = add(r, a->input, a->name, "removed", "present", "absent");
		} else if (a->dtype && b->dtype && a->dtype != b->dtype) {
			rc = add(r, a->input, a->name, "dtype", ir_dtype_name(a->dtype),
				 ir_dtype_name(b->dtype));
		} else if (a->rank >= 0 && b->rank >= 0 && a->rank != b->rank) {
			snprintf(x, sizeof(x), "%d", a->rank);
			snprintf(y, sizeof(y), "%d", b->rank);
			rc = add(r, a->input, a->name, "rank", x, y);
		}
	}
	for (size_t i = 0; i < after.n && rc == 0; i++)
		if (!find(before, after.items[i].name, after.items[i].input))
			rc = add(r, after.items[i].input, after.items[i].name, "added", "absent",
				 "present");
	mg_iface_release(&after);
	return rc < 0 ? ir_diag_error(d, IR_ENOMEM, "out of memory") : 0;
}
