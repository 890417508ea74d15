/* cmd_inspect.c: `opmig inspect MODEL [--json]`: print the model summary
 * (ir_model_summarize) as text for people or as opmig.inspect/1 JSON. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "ir/infer.h"
#include "ir/ir.h"
#include "oprules/jbuild.h"

const char cmd_inspect_help[] =
	"usage: opmig inspect MODEL [--json] [--shapes]\n"
	"\n"
	"Load and verify MODEL and summarize it: producer, IR version, opsets,\n"
	"inputs and outputs with dtype and shape, node count, op histogram per\n"
	"domain, parameters, external data files and dynamic dims.\n"
	"\n"
	"  --json     print one JSON object (schema opmig.inspect/1)\n"
	"  --shapes   also infer and print every value's dtype and shape\n"
	"  --help     show this help\n";

static const struct ir_type *tensor_type(const struct ir_type *t)
{
	while (t && t->kind != IR_TYPE_TENSOR && t->kind != IR_TYPE_SPARSE_TENSOR)
		t = t->inner;
	return t;
}

static const char *kind_name(const struct ir_type *t)
{
	switch (t ? t->kind : IR_TYPE_NONE) {
	case IR_TYPE_SEQUENCE: return "sequence";
	case IR_TYPE_MAP: return "map";
	case IR_TYPE_OPTIONAL: return "optional";
	case IR_TYPE_SPARSE_TENSOR: return "sparse_tensor";
	case IR_TYPE_TENSOR: return "tensor";
	default: return "unknown";
	}
}

static void print_type(const struct ir_type *t)
{
	const struct ir_type *tt = tensor_type(t);

	if (t && t->kind != IR_TYPE_TENSOR)
		printf("%s of ", kind_name(t));
	if (!tt) {
		printf("?");
		return;
	}
	printf("%s", ir_dtype_name(tt->elem_type));
	if (!(tt->present & IR_TYPE_HAS_SHAPE)) {
		printf("[...]");
		return;
	}
	putchar('[');
	for (size_t i = 0; i < tt->shape.n_dims; i++) {
		const struct ir_dim *dm = &tt->shape.dims[i];

		if (i)
			putchar(',');
		if (dm->kind == IR_DIM_VALUE)
			printf("%" PRId64, dm->value);
		else if (dm->kind == IR_DIM_PARAM)
			printf("%s", dm->param);
		else
			putchar('?');
	}
	putchar(']');
}

static int is_weight(const struct ir_vinfo *vi)
{
	return vi->value->init || vi->value->sparse_init;
}

static void print_values(const char *title, const struct ir_vinfo *vi, size_t n)
{
	size_t w = 0, skipped = 0;

	for (size_t i = 0; i < n; i++)
		if (!is_weight(&vi[i]) && strlen(vi[i].value->name) > w)
			w = strlen(vi[i].value->name);
	printf("%s:\n", title);
	for (size_t i = 0; i < n; i++) {
		if (is_weight(&vi[i])) {
			skipped++;
			continue;
		}
		printf("  %-*s  ", (int)w, vi[i].value->name);
		print_type(vi[i].type);
		putchar('\n');
	}
	if (skipped)
		printf("  (+%zu backed by initializers)\n", skipped);
}

static void print_text(const char *path, const struct ir_model *m,
		       const struct ir_summary *s)
{
	printf("model: %s\n", path);
	printf("producer: %s%s%s\n", *ir_s(m->producer_name) ? m->producer_name : "(none)",
	       *ir_s(m->producer_version) ? " " : "", ir_s(m->producer_version));
	printf("ir_version: %" PRId64 "\n", m->ir_version);
	printf("opsets:");
	for (size_t i = 0; i < m->n_opsets; i++)
		printf("%s %s %" PRId64, i ? "," : "",
		       *ir_s(m->opsets[i].domain) ? m->opsets[i].domain : "ai.onnx",
		       m->opsets[i].version);
	printf("\n");
	print_values("inputs", m->graph->inputs, m->graph->n_inputs);
	print_values("outputs", m->graph->outputs, m->graph->n_outputs);
	printf("nodes: %zu", s->n_nodes);
	if (s->n_sub_nodes)
		printf(" (%zu in subgraphs)", s->n_sub_nodes);
	printf("\nops:\n");
	for (size_t i = 0; i < s->n_ops; i++) {
		const struct ir_op_count *o = &s->ops[i];
		int first = i == 0 || strcmp(o->domain, s->ops[i - 1].domain);

		if (first)
			printf("%s  %s:", i ? "\n" : "", o->domain);
		printf("%s %s %zu", first ? "" : ",", o->op_type, o->count);
		if (o->in_subgraphs)
			printf(" (%zu in subgraphs)", o->in_subgraphs);
	}
	if (s->n_ops)
		putchar('\n');
	printf("parameters: %" PRId64 " in %zu initializers (%" PRId64 " bytes)\n",
	       s->n_params, s->n_inits, s->param_bytes);
	printf("external data:");
	if (!s->n_ext)
		printf(" none");
	for (size_t i = 0; i < s->n_ext; i++)
		printf("%s %s (%zu tensors, %" PRId64 " bytes)", i ? "," : "",
		       s->ext[i].location, s->ext[i].tensors, s->ext[i].bytes);
	printf("\ndynamic dims:");
	if (!s->n_dyn && !s->n_unknown_dims)
		printf(" none");
	for (size_t i = 0; i < s->n_dyn; i++)
		printf("%s %s", i ? "," : "", s->dyn[i]);
	if (s->n_unknown_dims)
		printf("%s %zu unknown", s->n_dyn ? "," : "", s->n_unknown_dims);
	putchar('\n');
}

/* A dim of a shape as JSON: its value, its parameter's name, or null. */
static cJSON *json_dim(const struct ir_dim *dm)
{
	if (dm->kind == IR_DIM_VALUE)
		return cJSON_CreateNumber((double)dm->value);
	if (dm->kind == IR_DIM_PARAM)
		return cJSON_CreateString(dm->param);
	return cJSON_CreateNull();
}

static cJSON *json_values(const struct ir_vinfo *vi, size_t n, int *ok)
{
	cJSON *arr = cJSON_CreateArray();

	jb_need(arr, ok);
	for (size_t i = 0; arr && i < n; i++) {
		const struct ir_type *tt = tensor_type(vi[i].type);
		cJSON *o, *shape;

		if (is_weight(&vi[i]))
			continue;
		o = cJSON_CreateObject();
		jb_need(cJSON_AddStringToObject(o, "name", vi[i].value->name), ok);
		jb_need(cJSON_AddStringToObject(o, "kind", kind_name(vi[i].type)), ok);
		if (tt)
			jb_need(cJSON_AddStringToObject(o, "dtype", ir_dtype_name(tt->elem_type)), ok);
		else
			jb_need(cJSON_AddNullToObject(o, "dtype"), ok);
		if (!tt || !(tt->present & IR_TYPE_HAS_SHAPE)) {
			jb_need(cJSON_AddNullToObject(o, "shape"), ok);
		} else {
			shape = cJSON_AddArrayToObject(o, "shape");
			jb_need(shape, ok);
			for (size_t k = 0; k < tt->shape.n_dims; k++)
				jb_put(shape, json_dim(&tt->shape.dims[k]), ok);
		}
		jb_put(arr, o, ok);
	}
	return arr;
}

static int print_shapes(const char *path, struct ir_model *m, cJSON *r, int *ok);

/* 0 printed, -1 out of memory (nothing printed), or an exit code from
 * --shapes. */
static int print_json(const char *path, struct ir_model *m,
		      const struct ir_summary *s, int shapes)
{
	cJSON *r = cJSON_CreateObject(), *o, *a;
	int rc, ok = r != NULL;
	char *text;

	jb_need(cJSON_AddStringToObject(r, "schema", "opmig.inspect/1"), &ok);
	jb_need(cJSON_AddStringToObject(r, "model", path), &ok);
	o = cJSON_AddObjectToObject(r, "producer");
	jb_need(o, &ok);
	jb_need(cJSON_AddStringToObject(o, "name", ir_s(m->producer_name)), &ok);
	jb_need(cJSON_AddStringToObject(o, "version", ir_s(m->producer_version)), &ok);
	jb_need(cJSON_AddNumberToObject(r, "ir_version", (double)m->ir_version), &ok);
	a = cJSON_AddArrayToObject(r, "opsets");
	jb_need(a, &ok);
	for (size_t i = 0; i < m->n_opsets; i++) {
		o = cJSON_CreateObject();
		jb_need(cJSON_AddStringToObject(o, "domain", *ir_s(m->opsets[i].domain) ?
						m->opsets[i].domain : "ai.onnx"), &ok);
		jb_need(cJSON_AddNumberToObject(o, "version", (double)m->opsets[i].version), &ok);
		jb_put(a, o, &ok);
	}
	jb_put_obj(r, "inputs", json_values(m->graph->inputs, m->graph->n_inputs, &ok), &ok);
	jb_put_obj(r, "outputs", json_values(m->graph->outputs, m->graph->n_outputs, &ok), &ok);
	jb_need(cJSON_AddNumberToObject(r, "node_count", (double)s->n_nodes), &ok);
	jb_need(cJSON_AddNumberToObject(r, "subgraph_node_count", (double)s->n_sub_nodes), &ok);
	a = cJSON_AddArrayToObject(r, "ops");
	jb_need(a, &ok);
	for (size_t i = 0; i < s->n_ops; i++) {
		o = cJSON_CreateObject();
		jb_need(cJSON_AddStringToObject(o, "domain", s->ops[i].domain), &ok);
		jb_need(cJSON_AddStringToObject(o, "op_type", s->ops[i].op_type), &ok);
		jb_need(cJSON_AddNumberToObject(o, "count", (double)s->ops[i].count), &ok);
		jb_need(cJSON_AddNumberToObject(o, "in_subgraphs", (double)s->ops[i].in_subgraphs), &ok);
		jb_put(a, o, &ok);
	}
	o = cJSON_AddObjectToObject(r, "parameters");
	jb_need(o, &ok);
	jb_need(cJSON_AddNumberToObject(o, "count", (double)s->n_params), &ok);
	jb_need(cJSON_AddNumberToObject(o, "bytes", (double)s->param_bytes), &ok);
	jb_need(cJSON_AddNumberToObject(o, "initializers", (double)s->n_inits), &ok);
	a = cJSON_AddArrayToObject(r, "external_data");
	jb_need(a, &ok);
	for (size_t i = 0; i < s->n_ext; i++) {
		o = cJSON_CreateObject();
		jb_need(cJSON_AddStringToObject(o, "location", s->ext[i].location), &ok);
		jb_need(cJSON_AddNumberToObject(o, "tensors", (double)s->ext[i].tensors), &ok);
		jb_need(cJSON_AddNumberToObject(o, "bytes", (double)s->ext[i].bytes), &ok);
		jb_put(a, o, &ok);
	}
	a = cJSON_AddArrayToObject(r, "dynamic_dims");
	jb_need(a, &ok);
	for (size_t i = 0; i < s->n_dyn; i++)
		jb_put(a, cJSON_CreateString(s->dyn[i]), &ok);
	jb_need(cJSON_AddNumberToObject(r, "unknown_dims", (double)s->n_unknown_dims), &ok);
	if (shapes && (rc = print_shapes(path, m, r, &ok)) != 0) {
		cJSON_Delete(r);
		return rc;
	}
	if (!(text = jb_print(r, ok)))
		return -1;
	puts(text);
	free(text);
	return 0;
}

/* ---- --shapes ---------------------------------------------------------- */

struct shapes_ctx {
	const struct ir_infer *inf;
	cJSON *arr;           /* JSON mode: array of values, else NULL */
	/* JSON mode: the report's jbuild.h flag, set even when arr could
	 * not be made (so nothing goes to stdout as text); text mode: NULL */
	int *ok;
};

/* The same for an inferred dim. */
static cJSON *json_vdim(const struct ir_vdim *dm)
{
	if (dm->kind == IR_VDIM_VALUE)
		return cJSON_CreateNumber((double)dm->value);
	if (dm->kind == IR_VDIM_PARAM)
		return cJSON_CreateString(dm->param);
	return cJSON_CreateNull();
}

static void one_value(struct shapes_ctx *c, const struct ir_value *v,
		      int depth, const char *origin, const struct ir_node *n)
{
	const struct ir_vtype *t = ir_infer_get(c->inf, v);
	char buf[512];

	if (!c->ok) {
		if (t)
			ir_vtype_format(t, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "?");
		printf("  %*s%s  %s  (", 2 * depth, "", v->name, buf);
		if (n)
			printf("%s '%s')\n", ir_s(n->op_type), ir_s(n->name));
		else
			printf("%s)\n", origin);
		return;
	}
	cJSON *o = cJSON_CreateObject(), *shape;
	int *ok = c->ok;

	jb_need(cJSON_AddStringToObject(o, "name", v->name), ok);
	jb_need(cJSON_AddNumberToObject(o, "depth", depth), ok);
	jb_need(cJSON_AddStringToObject(o, "origin", origin), ok);
	if (n) {
		jb_need(cJSON_AddStringToObject(o, "op_type", ir_s(n->op_type)), ok);
		jb_need(cJSON_AddStringToObject(o, "node", ir_s(n->name)), ok);
	}
	if (!t || !t->dtype)
		jb_need(cJSON_AddNullToObject(o, "dtype"), ok);
	else
		jb_need(cJSON_AddStringToObject(o, "dtype", ir_dtype_name(t->dtype)), ok);
	if (!t || t->rank < 0) {
		jb_need(cJSON_AddNullToObject(o, "shape"), ok);
	} else {
		shape = cJSON_AddArrayToObject(o, "shape");
		jb_need(shape, ok);
		for (int i = 0; i < t->rank; i++)
			jb_put(shape, json_vdim(&t->dims[i]), ok);
	}
	jb_put(c->arr, o, ok);
}

static int shapes_graph(struct ir_graph *g, int depth, void *ctx)
{
	struct shapes_ctx *c = ctx;

	for (size_t i = 0; i < g->n_inputs; i++)
		one_value(c, g->inputs[i].value, depth,
			  g->inputs[i].value->init ? "initializer" : "input", NULL);
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t k = 0; k < g->nodes[i]->n_outputs; k++)
			if (g->nodes[i]->outputs[k])
				one_value(c, g->nodes[i]->outputs[k], depth,
					  "node", g->nodes[i]);
	return 0;
}

/* Infer; print the values (text: r and ok NULL) or add them to the JSON
 * report r, clearing *ok when a builder fails. */
static int print_shapes(const char *path, struct ir_model *m, cJSON *r, int *ok)
{
	struct shapes_ctx c = { NULL, NULL, ok };
	struct ir_infer inf;
	struct ir_diag d;
	int rc;

	ir_infer_init(&inf);
	ir_diag_init(&d);
	if ((rc = ir_infer_model(m, &inf, &d)) < 0) {
		cli_error(path, "%s", d.msg);
		ir_infer_release(&inf);
		return cli_exit_code(rc);
	}
	if (d.n_warnings) {
		char w[600];

		snprintf(w, sizeof(w), "%.500s%s", d.warning,
			 d.n_warnings > 1 ? " (and more)" : "");
		cli_warn(path, w);
	}
	c.inf = &inf;
	if (ok) {
		c.arr = cJSON_AddArrayToObject(r, "values");
		jb_need(c.arr, ok);
	} else {
		printf("values:\n");
	}
	ir_graph_walk(m->graph, shapes_graph, &c);
	if (ok) {
		cJSON *a = cJSON_AddArrayToObject(r, "not_inferred");

		jb_need(a, ok);
		for (size_t i = 0; i < inf.n_not_inferred; i++) {
			cJSON *o = cJSON_CreateObject();

			jb_need(cJSON_AddStringToObject(o, "node", ir_s(inf.not_inferred[i]->name)), ok);
			jb_need(cJSON_AddStringToObject(o, "op_type", ir_s(inf.not_inferred[i]->op_type)), ok);
			jb_put(a, o, ok);
		}
	} else {
		printf("not inferred: %zu of %zu nodes", inf.n_not_inferred, inf.n_nodes);
		for (size_t i = 0; i < inf.n_not_inferred && i < 20; i++)
			printf("%s %s '%s'", i ? "," : "", ir_s(inf.not_inferred[i]->op_type),
			       ir_s(inf.not_inferred[i]->name));
		printf("%s\n", inf.n_not_inferred > 20 ? ", ..." : "");
	}
	ir_infer_release(&inf);
	return 0;
}

int cmd_inspect(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "shapes", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *self = cli_command_find("inspect");
	struct ir_model *m = NULL;
	struct ir_summary s;
	struct ir_diag d;
	int c, json = 0, shapes = 0, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'j')
			json = 1;
		else if (c == 's')
			shapes = 1;
		else
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
	}
	if (argc - optind != 1)
		return cli_usage_error(self, "inspect needs exactly one MODEL");
	if ((rc = cli_load(argv[optind], &m)) != CLI_EXIT_OK)
		return rc;
	ir_diag_init(&d);
	if ((rc = ir_model_summarize(m, &s, &d)) < 0) {
		cli_error(argv[optind], "%s", d.msg);
		ir_model_free(m);
		return cli_exit_code(rc);
	}
	if (json) {
		rc = print_json(argv[optind], m, &s, shapes);
	} else {
		print_text(argv[optind], m, &s);
		rc = shapes ? print_shapes(argv[optind], m, NULL, NULL) : 0;
	}
	ir_summary_release(&s);
	ir_model_free(m);
	if (rc == -1) {
		cli_error(NULL, "out of memory");
		return CLI_EXIT_INTERNAL;
	}
	return cli_finish(rc);
}
