/* diff.c: what two targets' rules disagree on (`opmig rules diff A B`):
 * the target-wide facts (opset range, missing dtypes, max rank, dynamic
 * shapes), then op by op in sorted order: listed or not, supported or
 * not, versions, dtypes, each attribute's constraint, each input's and
 * output's dtypes, ranks and constness.  Values are rendered as text the
 * way `rules show` prints them; "any" where a side does not constrain. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "oprules/rules.h"

void rules_diff_release(struct rules_diff *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->lines[i].op);
		free(d->lines[i].what);
		free(d->lines[i].a);
		free(d->lines[i].b);
	}
	free(d->lines);
	memset(d, 0, sizeof(*d));
}

static int add(struct rules_diff *d, const char *op, const char *a, const char *b,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int add(struct rules_diff *d, const char *op, const char *a, const char *b,
	       const char *fmt, ...)
{
	struct rules_diff_line *q, *l;
	char what[256];
	va_list ap;

	if (!strcmp(a, b))
		return 0;
	if (!(q = realloc(d->lines, (d->n + 1) * sizeof(*q))))
		return -1;
	d->lines = q;
	l = &q[d->n];
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!(l->op = strdup(op)) || !(l->what = strdup(what)) || !(l->a = strdup(a)) ||
	    !(l->b = strdup(b))) {
		free(l->op);
		free(l->what);
		free(l->a);
		return -1;
	}
	d->n++;
	return 0;
}

static void dtypes_str(rules_dtypes m, const char *none, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (int i = 1; i < IR_DTYPE_COUNT && len + 1 < size; i++)
		if ((m & RULES_DTYPE_BIT(i)) && rules_dtype_name(i))
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "",
						rules_dtype_name(i));
	if (!m)
		snprintf(buf, size, "%s", none);
}

static void range_str(int min, int max, char *buf, size_t size)
{
	if (min < 0)
		snprintf(buf, size, "any");
	else if (max == RULES_UNBOUNDED)
		snprintf(buf, size, "%d+", min);
	else if (min == max)
		snprintf(buf, size, "%d", min);
	else
		snprintf(buf, size, "%d-%d", min, max);
}

static size_t value_str(const struct rules_value *v, char *buf, size_t size)
{
	size_t len = 0;

	if (v->kind == RULES_VALUE_STRING)
		return (size_t)snprintf(buf, size, "%s", v->str);
	if (v->kind == RULES_VALUE_NUMBER)
		return (size_t)snprintf(buf, size, "%g", v->num);
	len = (size_t)snprintf(buf, size, "[");
	for (size_t i = 0; i < v->n_nums && len + 16 < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%g", i ? "," : "", v->nums[i]);
	if (len + 2 < size)
		len += (size_t)snprintf(buf + len, size - len, "]");
	return len;
}

static void attr_str(const struct rules_attr *a, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	if (!a) {
		snprintf(buf, size, "any");
		return;
	}
	if (a->n_allowed) {
		len += (size_t)snprintf(buf + len, size - len, "in ");
		for (size_t j = 0; j < a->n_allowed && len + 32 < size; j++) {
			if (j)
				buf[len++] = '|';
			len += value_str(&a->allowed[j], buf + len, size - len);
		}
	}
	if (a->has_min && len + 32 < size)
		len += (size_t)snprintf(buf + len, size - len, "%s>= %g", len ? " " : "", a->min);
	if (a->has_max && len + 32 < size)
		len += (size_t)snprintf(buf + len, size - len, "%s<= %g", len ? " " : "", a->max);
	if (a->has_equals && len + 32 < size) {
		len += (size_t)snprintf(buf + len, size - len, "%s== ", len ? " " : "");
		value_str(&a->equals, buf + len, size - len);
	}
}

static const struct rules_attr *find_attr(const struct rules_op *op, const char *name)
{
	for (size_t i = 0; op && i < op->n_attrs; i++)
		if (!strcmp(op->attrs[i].name, name))
			return &op->attrs[i];
	return NULL;
}

static const struct rules_io *find_io(const struct rules_io *io, size_t n, int index)
{
	for (size_t i = 0; i < n; i++)
		if (io[i].index == index)
			return &io[i];
	return NULL;
}

static int diff_ios(struct rules_diff *d, const char *name, const char *what,
		    const struct rules_io *ia, size_t na, const struct rules_io *ib, size_t nb)
{
	int max_index = -1;

	for (size_t i = 0; i < na; i++)
		max_index = ia[i].index > max_index ? ia[i].index : max_index;
	for (size_t i = 0; i < nb; i++)
		max_index = ib[i].index > max_index ? ib[i].index : max_index;
	for (int k = 0; k <= max_index; k++) {
		const struct rules_io *x = find_io(ia, na, k), *y = find_io(ib, nb, k);
		char a[256], b[256];

		if (!x && !y)
			continue;
		dtypes_str(x ? x->dtypes : 0, "any", a, sizeof(a));
		dtypes_str(y ? y->dtypes : 0, "any", b, sizeof(b));
		if (add(d, name, a, b, "%s %d dtypes", what, k) < 0)
			return -1;
		range_str(x ? x->min_rank : -1, x ? x->max_rank : -1, a, sizeof(a));
		range_str(y ? y->min_rank : -1, y ? y->max_rank : -1, b, sizeof(b));
		if (add(d, name, a, b, "%s %d rank", what, k) < 0 ||
		    add(d, name, x && x->is_const ? "constant" : "any",
			y && y->is_const ? "constant" : "any", "%s %d", what, k) < 0)
			return -1;
	}
	return 0;
}

static const char *listing(const struct rules_op *op)
{
	return !op ? "not listed" : op->supported ? "supported" : "unsupported";
}

static int diff_op(struct rules_diff *d, const struct rules_op *x, const struct rules_op *y)
{
	const struct rules_op *any = x ? x : y;
	char name[256], a[512], b[512];

	if (strcmp(any->domain, "ai.onnx"))
		snprintf(name, sizeof(name), "%s:%s", any->domain, any->name);
	else
		snprintf(name, sizeof(name), "%s", any->name);
	if (add(d, name, listing(x), listing(y), "op") < 0)
		return -1;
	if (!x || !y || !x->supported || !y->supported)
		return 0;
	range_str(x->version_min, x->version_max, a, sizeof(a));
	range_str(y->version_min, y->version_max, b, sizeof(b));
	if (add(d, name, a, b, "versions") < 0)
		return -1;
	dtypes_str(x->dtypes, "any", a, sizeof(a));
	dtypes_str(y->dtypes, "any", b, sizeof(b));
	if (add(d, name, a, b, "dtypes") < 0)
		return -1;
	for (int side = 0; side < 2; side++) {
		const struct rules_op *o = side ? y : x;

		for (size_t i = 0; i < o->n_attrs; i++) {
			const char *an = o->attrs[i].name;

			if (side && find_attr(x, an))
				continue;   /* compared from x's side */
			attr_str(find_attr(x, an), a, sizeof(a));
			attr_str(find_attr(y, an), b, sizeof(b));
			if (add(d, name, a, b, "attr %s", an) < 0)
				return -1;
		}
	}
	if (diff_ios(d, name, "input", x->inputs, x->n_inputs, y->inputs, y->n_inputs) < 0 ||
	    diff_ios(d, name, "output", x->outputs, x->n_outputs, y->outputs, y->n_outputs) < 0)
		return -1;
	if (add(d, name, x->static_shape ? "static" : "any", y->static_shape ? "static" : "any",
		"shapes") < 0)
		return -1;
	snprintf(a, sizeof(a), "%lld", (long long)x->max_dim);
	snprintf(b, sizeof(b), "%lld", (long long)y->max_dim);
	return add(d, name, x->max_dim ? a : "any", y->max_dim ? b : "any", "max dim");
}

static int op_cmp(const struct rules_op *x, const struct rules_op *y)
{
	int c = strcmp(x->domain, y->domain);

	return c ? c : strcmp(x->name, y->name);
}

int rules_diff(const struct rules_target *a, const struct rules_target *b,
	       struct rules_diff *d)
{
	char x[512], y[512];
	size_t i = 0, j = 0;

	memset(d, 0, sizeof(*d));
	range_str(a->opset_min, a->opset_max, x, sizeof(x));
	range_str(b->opset_min, b->opset_max, y, sizeof(y));
	if (add(d, "", x, y, "opset") < 0)
		goto oom;
	dtypes_str(a->missing_dtypes, a->has_missing_dtypes ? "none" : "not stated", x, sizeof(x));
	dtypes_str(b->missing_dtypes, b->has_missing_dtypes ? "none" : "not stated", y, sizeof(y));
	if (add(d, "", x, y, "missing dtypes") < 0)
		goto oom;
	snprintf(x, sizeof(x), "%d", a->max_rank);
	snprintf(y, sizeof(y), "%d", b->max_rank);
	if (add(d, "", a->max_rank >= 0 ? x : "not stated", b->max_rank >= 0 ? y : "not stated",
		"max rank") < 0)
		goto oom;
	if (add(d, "", a->dynamic_shapes < 0 ? "not stated" : a->dynamic_shapes ? "allowed" : "not allowed",
		b->dynamic_shapes < 0 ? "not stated" : b->dynamic_shapes ? "allowed" : "not allowed",
		"dynamic shapes") < 0)
		goto oom;
	while (i < a->n_ops || j < b->n_ops) {
		const struct rules_op *p = i < a->n_ops ? &a->ops[i] : NULL;
		const struct rules_op *q = j < b->n_ops ? &b->ops[j] : NULL;
		int c = !p ? 1 : !q ? -1 : op_cmp(p, q);

		if (diff_op(d, c <= 0 ? p : NULL, c >= 0 ? q : NULL) < 0)
			goto oom;
		i += c <= 0;
		j += c >= 0;
	}
	return 0;
oom:
	rules_diff_release(d);
	return -1;
}
