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

/* cJSON keeps an item it failed to add (out of memory): free it. */
static cJSON *to_array(cJSON *a, cJSON *item)
{
	if (!cJSON_AddItemToArray(a, item)) {
		cJSON_Delete(item);
		return NULL;
	}
	return item;
}

static void to_object(cJSON *o, const char *key, cJSON *item)
{
	if (!cJSON_AddItemToObject(o, key, item))
		cJSON_Delete(item);
}

static cJSON *json_values(const struct ir_vinfo *vi, size_t n)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr && i < n; i++) {
		const struct ir_type *tt = tensor_type(vi[i].type);
		cJSON *o, *shape;

		if (is_weight(&vi[i]))
			continue;
		o = to_array(arr, cJSON_CreateObject());
		cJSON_AddStringToObject(o, "name", vi[i].value->name);
		cJSON_AddStringToObject(o, "kind", kind_name(vi[i].type));
		if (tt)
			cJSON_AddStringToObject(o, "dtype", ir_dtype_name(tt->elem_type));
		else
			cJSON_AddNullToObject(o, "dtype");
		if (!tt || !(tt->present & IR_TYPE_HAS_SHAPE)) {
			cJSON_AddNullToObject(o, "shape");
			continue;
		}
		shape = cJSON_AddArrayToObject(o, "shape");
		for (size_t k = 0; k < tt->shape.n_dims; k++) {
			const struct ir_dim *dm = &tt->shape.dims[k];

			to_array(shape,
				dm->kind == IR_DIM_VALUE ? cJSON_CreateNumber((double)dm->value) :
				dm->kind == IR_DIM_PARAM ? cJSON_CreateString(dm->param) :
				cJSON_CreateNull());
		}
	}
	return arr;
}

static int print_shapes(const char *path, struct ir_model *m, cJSON *r);

/* 0 printed, -1 out of memory, or an exit code from --shapes. */
static int print_json(const char *path, struct ir_model *m,
		      const struct ir_summary *s, int shapes)
{
	int rc = 0;
	cJSON *r = cJSON_CreateObject(), *o, *a;
	char *text;

	if (!r)
		return -1;
	cJSON_AddStringToObject(r, "schema", "opmig.inspect/1");
	cJSON_AddStringToObject(r, "model", path);
	o = cJSON_AddObjectToObject(r, "producer");
	cJSON_AddStringToObject(o, "name", ir_s(m->producer_name));
	cJSON_AddStringToObject(o, "version", ir_s(m->producer_version));
	cJSON_AddNumberToObject(r, "ir_version", (double)m->ir_version);
	a = cJSON_AddArrayToObject(r, "opsets");
	for (size_t i = 0; i < m->n_opsets; i++) {
		o = to_array(a, cJSON_CreateObject());
		cJSON_AddStringToObject(o, "domain", *ir_s(m->opsets[i].domain) ?
					m->opsets[i].domain : "ai.onnx");
		cJSON_AddNumberToObject(o, "version", (double)m->opsets[i].version);
	}
	to_object(r, "inputs", json_values(m->graph->inputs, m->graph->n_inputs));
	to_object(r, "outputs", json_values(m->graph->outputs, m->graph->n_outputs));
	cJSON_AddNumberToObject(r, "node_count", (double)s->n_nodes);
	cJSON_AddNumberToObject(r, "subgraph_node_count", (double)s->n_sub_nodes);
	a = cJSON_AddArrayToObject(r, "ops");
	for (size_t i = 0; i < s->n_ops; i++) {
		o = to_array(a, cJSON_CreateObject());
		cJSON_AddStringToObject(o, "domain", s->ops[i].domain);
		cJSON_AddStringToObject(o, "op_type", s->ops[i].op_type);
		cJSON_AddNumberToObject(o, "count", (double)s->ops[i].count);
		cJSON_AddNumberToObject(o, "in_subgraphs", (double)s->ops[i].in_subgraphs);
	}
	o = cJSON_AddObjectToObject(r, "parameters");
	cJSON_AddNumberToObject(o, "count", (double)s->n_params);
	cJSON_AddNumberToObject(o, "bytes", (double)s->param_bytes);
	cJSON_AddNumberToObject(o, "initializers", (double)s->n_inits);
	a = cJSON_AddArrayToObject(r, "external_data");
	for (size_t i = 0; i < s->n_ext; i++) {
		o = to_array(a, cJSON_CreateObject());
		cJSON_AddStringToObject(o, "location", s->ext[i].location);
		cJSON_AddNumberToObject(o, "tensors", (double)s->ext[i].tensors);
		cJSON_AddNumberToObject(o, "bytes", (double)s->ext[i].bytes);
	}
	a = cJSON_AddArrayToObject(r, "dynamic_dims");
	for (size_t i = 0; i < s->n_dyn; i++)
		to_array(a, cJSON_CreateString(s->dyn[i]));
	cJSON_AddNumberToObject(r, "unknown_dims", (double)s->n_unknown_dims);
	if (shapes && (rc = print_shapes(path, m, r)) != 0) {
		cJSON_Delete(r);
		return rc;
	}
	text = cJSON_Print(r);
	cJSON_Delete(r);
	if (!text)
		return -1;
	puts(text);
	free(text);
	return 0;
}

/* ---- --shapes ---------------------------------------------------------- */

struct shapes_ctx {
	const struct ir_infer *inf;
	cJSON *arr;           /* JSON mode: array of values, else NULL */
};

static void one_value(struct shapes_ctx *c, const struct ir_value *v,
		      int depth, const char *origin, const struct ir_node *n)
{
	const struct ir_vtype *t = ir_infer_get(c->inf, v);
	char buf[512];

	if (!c->arr) {
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
	cJSON *o = to_array(c->arr, cJSON_CreateObject()), *shape;

	cJSON_AddStringToObject(o, "name", v->name);
	cJSON_AddNumberToObject(o, "depth", depth);
	cJSON_AddStringToObject(o, "origin", origin);
	if (n) {
		cJSON_AddStringToObject(o, "op_type", ir_s(n->op_type));
		cJSON_AddStringToObject(o, "node", ir_s(n->name));
	}
	if (!t || !t->dtype)
		cJSON_AddNullToObject(o, "dtype");
	else
		cJSON_AddStringToObject(o, "dtype", ir_dtype_name(t->dtype));
	if (!t || t->rank < 0) {
		cJSON_AddNullToObject(o, "shape");
		return;
	}
	shape = cJSON_AddArrayToObject(o, "shape");
	for (int i = 0; i < t->rank; i++)
		to_array(shape,
			t->dims[i].kind == IR_VDIM_VALUE ? cJSON_CreateNumber((double)t->dims[i].value) :
			t->dims[i].kind == IR_VDIM_PARAM ? cJSON_CreateString(t->dims[i].param) :
			cJSON_CreateNull());
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

/* Infer; print the values (text) or add them to the JSON report r. */
static int print_shapes(const char *path, struct ir_model *m, cJSON *r)
{
	struct shapes_ctx c = { NULL, NULL };
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
	if (r)
		c.arr = cJSON_AddArrayToObject(r, "values");
	else
		printf("values:\n");
	ir_graph_walk(m->graph, shapes_graph, &c);
	if (r) {
		cJSON *a = cJSON_AddArrayToObject(r, "not_inferred");

		for (size_t i = 0; i < inf.n_not_inferred; i++) {
			cJSON *o = to_array(a, cJSON_CreateObject());

			cJSON_AddStringToObject(o, "node", ir_s(inf.not_inferred[i]->name));
			cJSON_AddStringToObject(o, "op_type", ir_s(inf.not_inferred[i]->op_type));
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
		rc = shapes ? print_shapes(argv[optind], m, NULL) : 0;
	}
	ir_summary_release(&s);
	ir_model_free(m);
	if (rc == -1) {
		cli_error(NULL, "out of memory");
		return CLI_EXIT_INTERNAL;
	}
	return cli_finish(rc);
}
