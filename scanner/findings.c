/* findings.c: model-level findings per target: the default-domain opset
 * outside the target's range, graph inputs with dynamic dims, int64 and
 * float64 values anywhere, weights in external data, weights larger than
 * the device memory.  The facts are collected once (scan_facts_collect). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scanner/scan_int.h"

static void note_dtype(struct scan_ctx *c, const struct ir_value *v, int dtype)
{
	struct scan_mfacts *f = &c->facts;
	int rt = !scan_value_is_const(c, v);

	if (dtype == IR_DTYPE_INT64) {
		f->n_int64++;
		f->n_int64_rt += rt;
		if (!f->int64_first || (rt && f->n_int64_rt == 1))
			f->int64_first = ir_s(v->name);
	} else if (dtype == IR_DTYPE_DOUBLE) {
		f->n_float64++;
		f->n_float64_rt += rt;
		if (!f->float64_first || (rt && f->n_float64_rt == 1))
			f->float64_first = ir_s(v->name);
	}
}

static int visit_graph(struct ir_graph *g, int depth, void *ctx)
{
	struct scan_ctx *c = ctx;

	(void)depth;
	for (size_t i = 0; i < g->n_values; i++) {
		const struct ir_value *v = g->value_list[i];
		const struct ir_vtype *t = ir_infer_get(c->inf, v);
		int dtype = t ? t->dtype : 0;

		if (!dtype && v->type && v->type->kind == IR_TYPE_TENSOR)
			dtype = v->type->elem_type;
		if (!dtype && v->init)
			dtype = v->init->dtype;
		note_dtype(c, v, dtype);
	}
	return 0;
}

static int visit_tensor(struct ir_tensor *t, void *ctx)
{
	struct scan_mfacts *f = ctx;
	int64_t nb = ir_tensor_nbytes(t);

	if (nb > 0)
		f->param_bytes += nb;
	if (t->storage != IR_STORE_EXTERNAL)
		return 0;
	f->n_ext++;
	if (t->ext_length > 0)
		f->ext_bytes += t->ext_length;
	else if (nb > 0)
		f->ext_bytes += nb;
	for (size_t i = 0; !f->ext_location && i < t->n_external; i++)
		if (!strcmp(ir_s(t->external[i].key), "location"))
			f->ext_location = ir_s(t->external[i].value);
	return 0;
}

int scan_facts_collect(struct scan_ctx *c)
{
	int rc = ir_model_walk(c->m, visit_graph, c);

	if (rc < 0)
		return rc;
	return ir_model_for_each_tensor(c->m, visit_tensor, &c->facts);
}

static int add(struct scan_target_result *tr, enum scan_status st,
	       const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int add(struct scan_target_result *tr, enum scan_status st,
	       const char *code, const char *fmt, ...)
{
	struct scan_finding *f;
	char buf[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!(f = realloc(tr->findings, (tr->n_findings + 1) * sizeof(*f))))
		return IR_ENOMEM;
	tr->findings = f;
	f += tr->n_findings;
	f->status = st;
	f->code = code;
	if (!(f->message = strdup(buf)))
		return IR_ENOMEM;
	tr->n_findings++;
	return 0;
}

static int dims_dynamic(const struct ir_type *ty)
{
	if (!ty || ty->kind != IR_TYPE_TENSOR)
		return 0;
	if (!(ty->present & IR_TYPE_HAS_SHAPE))
		return 1;
	for (size_t i = 0; i < ty->shape.n_dims; i++)
		if (ty->shape.dims[i].kind != IR_DIM_VALUE)
			return 1;
	return 0;
}

static void fmt_type(const struct ir_type *ty, char *buf, size_t size)
{
	size_t len;

	len = (size_t)snprintf(buf, size, "%s", ir_dtype_name(ty->elem_type));
	if (!(ty->present & IR_TYPE_HAS_SHAPE)) {
		snprintf(buf + len, size - len, "[*]");
		return;
	}
	len += (size_t)snprintf(buf + len, size - len, "[");
	for (size_t i = 0; i < ty->shape.n_dims && len + 24 < size; i++) {
		const struct ir_dim *d = &ty->shape.dims[i];

		if (d->kind == IR_DIM_VALUE)
			len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? "," : "",
						(long long)d->value);
		else if (d->kind == IR_DIM_PARAM)
			len += (size_t)snprintf(buf + len, size - len, "%s%.16s", i ? "," : "",
						ir_s(d->param));
		else
			len += (size_t)snprintf(buf + len, size - len, "%s?", i ? "," : "");
	}
	snprintf(buf + len, size - len, "]");
}

static int dynamic_inputs(const struct scan_ctx *c, const struct rules_target *t,
			  struct scan_target_result *tr)
{
	const struct ir_graph *g = c->m->graph;
	const struct ir_vinfo *first = NULL;
	size_t n = 0;
	char ty[128];

	if (t->dynamic_shapes == 1)
		return 0;
	for (size_t i = 0; i < g->n_inputs; i++) {
		const struct ir_vinfo *vi = &g->inputs[i];

		if (!vi->value || vi->value->init || !dims_dynamic(vi->type))
			continue;
		if (!n++)
			first = vi;
	}
	if (!n)
		return 0;
	fmt_type(first->type, ty, sizeof(ty));
	if (t->dynamic_shapes == 0)
		return add(tr, SCAN_BLOCKED, SCAN_FINDING_DYNAMIC_INPUT,
			   "%zu graph input%s with dynamic dims (first '%s' %s); the target "
			   "needs static shapes: fix them with migrate --batch/--dim",
			   n, n == 1 ? "" : "s", ir_s(first->value->name), ty);
	return add(tr, SCAN_LIMITED, SCAN_FINDING_DYNAMIC_INPUT,
		   "%zu graph input%s with dynamic dims (first '%s' %s); the target's "
		   "rules do not say whether dynamic shapes run",
		   n, n == 1 ? "" : "s", ir_s(first->value->name), ty);
}

static int wide_dtype(const struct scan_ctx *c, const struct rules_target *t,
		      struct scan_target_result *tr, int dtype)
{
	const struct scan_mfacts *f = &c->facts;
	size_t n = dtype == IR_DTYPE_INT64 ? f->n_int64 : f->n_float64;
	size_t rt = dtype == IR_DTYPE_INT64 ? f->n_int64_rt : f->n_float64_rt;
	const char *first = dtype == IR_DTYPE_INT64 ? f->int64_first : f->float64_first;
	const char *code = dtype == IR_DTYPE_INT64 ? SCAN_FINDING_INT64 : SCAN_FINDING_FLOAT64;
	const char *name = rules_dtype_name(dtype);

	if (!n || !t->has_missing_dtypes || !(t->missing_dtypes & RULES_DTYPE_BIT(dtype)))
		return 0;
	if (rt)
		return add(tr, SCAN_BLOCKED, code,
			   "%zu %s value%s, %zu computed at run time (first '%s'); the target "
			   "lacks %s", n, name, n == 1 ? "" : "s", rt, first, name);
	return add(tr, SCAN_LIMITED, code,
		   "%zu %s value%s, all constant (first '%s'); the target lacks %s: "
		   "they must be narrowed or folded", n, name, n == 1 ? "" : "s", first, name);
}

int scan_findings_for(const struct scan_ctx *c, const struct rules_target *t,
		      struct scan_target_result *tr)
{
	const struct scan_mfacts *f = &c->facts;
	long long opset = ir_model_opset(c->m, "");
	int rc;

	if (t->opset_min >= 0 && (opset < t->opset_min || opset > t->opset_max) &&
	    (rc = add(tr, SCAN_BLOCKED, SCAN_FINDING_OPSET,
		      "the model imports ai.onnx opset %lld, the target accepts %d to %d",
		      opset, t->opset_min, t->opset_max)) < 0)
		return rc;
	if ((rc = dynamic_inputs(c, t, tr)) < 0 ||
	    (rc = wide_dtype(c, t, tr, IR_DTYPE_INT64)) < 0 ||
	    (rc = wide_dtype(c, t, tr, IR_DTYPE_DOUBLE)) < 0)
		return rc;
	if (f->n_ext &&
	    (rc = add(tr, SCAN_LIMITED, SCAN_FINDING_EXTERNAL_DATA,
		      "%zu tensor%s in external data ('%s', %lld bytes): the target's "
		      "converter must read the data file beside the model",
		      f->n_ext, f->n_ext == 1 ? "" : "s", ir_s(f->ext_location),
		      f->ext_bytes)) < 0)
		return rc;
	if (t->device_memory_bytes > 0 && f->param_bytes > t->device_memory_bytes &&
	    (rc = add(tr, SCAN_BLOCKED, SCAN_FINDING_DEVICE_MEMORY,
		      "the weights take %lld bytes, more than the target's %lld bytes "
		      "of device memory", f->param_bytes,
		      (long long)t->device_memory_bytes)) < 0)
		return rc;
	return 0;
}
