/* cmd_ops.c: `opmig ops [NAME] [--domain D] [--json]`: print the operator
 * registry: every op with its versions, or one op's signature, attributes
 * and type constraints per version (text, or opmig.ops/1 JSON). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "ir/registry.h"
#include "oprules/jbuild.h"

const char cmd_ops_help[] =
	"usage: opmig ops [NAME] [--domain D] [--json]\n"
	"\n"
	"List the operators opmig knows with their versions, or show one\n"
	"operator's versions: inputs, outputs, attributes with defaults, type\n"
	"constraints.\n"
	"\n"
	"  --domain D  only this domain (ai.onnx, ai.onnx.ml, com.microsoft, ...)\n"
	"  --json      print one JSON object (schema opmig.ops/1)\n"
	"  --help      show this help\n";

static int domain_match(const char *want, const char *dom)
{
	if (!want)
		return 1;
	if (!*want)
		want = "ai.onnx";
	return !strcmp(want, dom);
}

static void print_formals(const char *title, const struct ir_op_formal *f,
			  size_t n)
{
	printf("  %s:", title);
	if (!n)
		printf(" none");
	putchar('\n');
	for (size_t i = 0; i < n; i++)
		printf("    %s: %s%s%s\n", f[i].name, f[i].type,
		       f[i].optional ? " (optional)" : "",
		       f[i].variadic ? " (variadic)" : "");
}

static void print_schema(const struct ir_op_schema *s)
{
	printf("%s %s-%d%s\n", s->domain, s->name, s->since_version,
	       s->deprecated ? " (deprecated)" : "");
	if (s->doc && *s->doc)
		printf("  %s\n", s->doc);
	print_formals("inputs", s->inputs, s->n_inputs);
	print_formals("outputs", s->outputs, s->n_outputs);
	printf("  attributes:%s\n", s->n_attrs ? "" : " none");
	for (size_t i = 0; i < s->n_attrs; i++) {
		const struct ir_op_attr *a = &s->attrs[i];

		printf("    %s: %s", a->name, ir_attr_type_name((int)a->type));
		if (a->required)
			printf(" (required)");
		else if (a->default_value)
			printf(" = %s", a->default_value);
		putchar('\n');
	}
	for (size_t i = 0; i < s->n_constraints; i++)
		printf("  %s in %s\n", s->constraints[i].name, s->constraints[i].types);
}

static cJSON *json_formals(const struct ir_op_formal *f, size_t n, int *ok)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		jb_need(cJSON_AddStringToObject(o, "name", f[i].name), ok);
		jb_need(cJSON_AddStringToObject(o, "type", f[i].type), ok);
		jb_need(cJSON_AddBoolToObject(o, "optional", f[i].optional), ok);
		jb_need(cJSON_AddBoolToObject(o, "variadic", f[i].variadic), ok);
		jb_put(a, o, ok);
	}
	return a;
}

static cJSON *json_schema(const struct ir_op_schema *s, int full, int *ok)
{
	cJSON *o = cJSON_CreateObject(), *a;

	jb_need(cJSON_AddStringToObject(o, "domain", s->domain), ok);
	jb_need(cJSON_AddStringToObject(o, "name", s->name), ok);
	jb_need(cJSON_AddNumberToObject(o, "since_version", s->since_version), ok);
	jb_need(cJSON_AddBoolToObject(o, "deprecated", s->deprecated), ok);
	if (!full)
		return o;
	jb_need(cJSON_AddStringToObject(o, "doc", s->doc ? s->doc : ""), ok);
	jb_put_obj(o, "inputs", json_formals(s->inputs, s->n_inputs, ok), ok);
	jb_put_obj(o, "outputs", json_formals(s->outputs, s->n_outputs, ok), ok);
	jb_need(cJSON_AddNumberToObject(o, "min_inputs", s->min_inputs), ok);
	jb_need(cJSON_AddNumberToObject(o, "max_inputs", s->max_inputs), ok);
	jb_need(cJSON_AddNumberToObject(o, "min_outputs", s->min_outputs), ok);
	jb_need(cJSON_AddNumberToObject(o, "max_outputs", s->max_outputs), ok);
	a = cJSON_AddArrayToObject(o, "attributes");
	jb_need(a, ok);
	for (size_t i = 0; a && i < s->n_attrs; i++) {
		cJSON *x = cJSON_CreateObject();

		jb_need(cJSON_AddStringToObject(x, "name", s->attrs[i].name), ok);
		jb_need(cJSON_AddStringToObject(x, "type", ir_attr_type_name((int)s->attrs[i].type)), ok);
		jb_need(cJSON_AddBoolToObject(x, "required", s->attrs[i].required), ok);
		if (s->attrs[i].default_value)
			jb_need(cJSON_AddStringToObject(x, "default", s->attrs[i].default_value), ok);
		else
			jb_need(cJSON_AddNullToObject(x, "default"), ok);
		jb_put(a, x, ok);
	}
	a = cJSON_AddObjectToObject(o, "type_constraints");
	jb_need(a, ok);
	for (size_t i = 0; a && i < s->n_constraints; i++)
		jb_need(cJSON_AddStringToObject(a, s->constraints[i].name,
						s->constraints[i].types), ok);
	return o;
}

/* List: ok NULL prints one line per op, "domain Name v1, v2, ...";
 * otherwise (JSON) an object per version goes into arr.  Building stops
 * once *ok is 0, as nothing will be printed then (arr may be NULL). */
static size_t list_ops(const char *domain, cJSON *arr, int *ok)
{
	size_t n = ir_registry_count(), shown = 0;

	for (size_t i = 0; i < n; i++) {
		const struct ir_op_schema *s = ir_registry_at(i), *p;
		int first = i == 0 || (p = ir_registry_at(i - 1),
				       strcmp(p->name, s->name) || strcmp(p->domain, s->domain));

		if (!domain_match(domain, s->domain))
			continue;
		if (ok) {
			if (*ok)
				jb_put(arr, json_schema(s, 0, ok), ok);
			continue;
		}
		if (first) {
			printf("%s%s %s %d", shown ? "\n" : "", s->domain, s->name,
			       s->since_version);
			shown++;
		} else {
			printf(", %d", s->since_version);
		}
	}
	if (!ok && shown)
		putchar('\n');
	return shown;
}

/* One op's versions: text when ok is NULL, else into arr, as list_ops */
static size_t show_op(const char *domain, const char *name, cJSON *arr, int *ok)
{
	size_t n = ir_registry_count(), shown = 0;

	for (size_t i = 0; i < n; i++) {
		const struct ir_op_schema *s = ir_registry_at(i);

		if (strcmp(s->name, name) || !domain_match(domain, s->domain))
			continue;
		if (!ok)
			print_schema(s);
		else if (*ok)
			jb_put(arr, json_schema(s, 1, ok), ok);
		shown++;
	}
	return shown;
}

int cmd_ops(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "domain", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *self = cli_command_find("ops");
	const char *domain = NULL, *name;
	cJSON *root = NULL, *arr = NULL;
	int c, json = 0, ok = 1;
	size_t shown;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'd')
			domain = optarg;
		else if (c == 'j')
			json = 1;
		else
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
	}
	if (argc - optind > 1)
		return cli_usage_error(self, "ops takes at most one NAME");
	name = argc > optind ? argv[optind] : NULL;
	if (json) {
		root = cJSON_CreateObject();
		jb_need(root, &ok);
		jb_need(cJSON_AddStringToObject(root, "schema", "opmig.ops/1"), &ok);
		arr = cJSON_AddArrayToObject(root, "operators");
		jb_need(arr, &ok);
	}
	shown = name ? show_op(domain, name, arr, json ? &ok : NULL) :
		list_ops(domain, arr, json ? &ok : NULL);
	if (!shown && name) {
		cJSON_Delete(root);
		cli_error(NULL, "no operator '%s'%s%s in the registry", name,
			  domain ? " in domain " : "", domain ? domain : "");
		return CLI_EXIT_USAGE;
	}
	if (json) {
		char *text = jb_print(root, ok);

		if (!text) {
			cli_error(NULL, "out of memory");
			return CLI_EXIT_INTERNAL;
		}
		puts(text);
		free(text);
	}
	return cli_finish(CLI_EXIT_OK);
}
