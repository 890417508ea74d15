/* cmd_targets.c: `opmig targets [--json]`: list the targets of the rules
 * data folder (id, name, vendor, op counts, sources), as text or as
 * opmig.targets/1 JSON; and what the commands share about targets:
 * loading the rules, finding a target, the --target list. */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "ir/ir.h"
#include "oprules/jbuild.h"
#include "oprules/rules.h"

const char cmd_targets_help[] =
	"usage: opmig targets [--json]\n"
	"\n"
	"List the targets of the installed rules database: id, name, vendor,\n"
	"the number of operators supported and stated unsupported, the opset\n"
	"range and the sources.\n"
	"\n"
	"  --json      print one JSON object (schema opmig.targets/1)\n"
	"  --help      show this help\n";

/* Load the data folder's rules, printing the error; exit code. */
int cli_load_rules(struct rules_db *db)
{
	char dir[PATH_MAX];
	struct ir_diag d;
	int rc;

	rules_db_init(db);
	if (rules_data_dir(dir, sizeof(dir)) != 0) {
		cli_error(NULL, "no rules folder (looked for %s; set OPMIG_DATADIR)", dir);
		return CLI_EXIT_BAD_INPUT;
	}
	ir_diag_init(&d);
	rc = rules_load_dir(dir, db, &d);
	if (rc < 0) {
		cli_error(NULL, "%s", d.msg);
		rules_db_release(db);
		return cli_exit_code(rc);
	}
	return CLI_EXIT_OK;
}

int cli_load_rules_with(char *const *files, size_t n, struct rules_db *base,
			struct rules_db *extra)
{
	struct ir_diag d;
	int rc = 0, code;

	rules_db_init(extra);
	if ((code = cli_load_rules(base)) != CLI_EXIT_OK)
		return code;
	ir_diag_init(&d);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = rules_load_file(files[i], extra, &d);
	if (rc == 0 && n)
		rc = rules_db_resolve(extra, base, &d);
	if (rc < 0) {
		cli_error(NULL, "%s", d.msg);
		return cli_exit_code(rc);
	}
	return CLI_EXIT_OK;
}

const struct rules_target *cli_find_target(const struct rules_db *base,
					   const struct rules_db *extra,
					   const char *id)
{
	const struct rules_target *t = extra ? rules_db_find(extra, id) : NULL;

	return t ? t : rules_db_find(base, id);
}

int cli_add_targets(const struct cli_command *self, char ***ids, size_t *n,
		    const char *list)
{
	const char *p = list;

	for (;;) {
		size_t len = strcspn(p, ",");
		char *id;
		int dup = 0;

		if (!len)
			return cli_usage_error(self, "--target wants ids separated by commas, not '%s'", list);
		for (size_t i = 0; i < *n; i++)
			dup |= strlen((*ids)[i]) == len && !strncmp((*ids)[i], p, len);
		if (!dup && (!(id = strndup(p, len)) || cli_push(ids, n, id) < 0)) {
			free(id);
			return CLI_EXIT_INTERNAL;
		}
		if (!p[len])
			return CLI_EXIT_OK;
		p += len + 1;
	}
}

static cJSON *json_target(const struct rules_target *t, int *ok)
{
	cJSON *o = cJSON_CreateObject(), *a;
	size_t sup = rules_target_n_supported(t);

	jb_need(cJSON_AddStringToObject(o, "id", t->id), ok);
	jb_need(cJSON_AddStringToObject(o, "name", t->name), ok);
	if (t->vendor)
		jb_need(cJSON_AddStringToObject(o, "vendor", t->vendor), ok);
	else
		jb_need(cJSON_AddNullToObject(o, "vendor"), ok);
	if (t->extends)
		jb_need(cJSON_AddStringToObject(o, "extends", t->extends), ok);
	else
		jb_need(cJSON_AddNullToObject(o, "extends"), ok);
	jb_need(cJSON_AddNumberToObject(o, "ops_supported", (double)sup), ok);
	jb_need(cJSON_AddNumberToObject(o, "ops_unsupported", (double)(t->n_ops - sup)), ok);
	if (t->opset_min >= 0) {
		a = cJSON_AddArrayToObject(o, "opset");
		jb_need(a, ok);
		jb_put(a, cJSON_CreateNumber(t->opset_min), ok);
		jb_put(a, cJSON_CreateNumber(t->opset_max), ok);
	} else {
		jb_need(cJSON_AddNullToObject(o, "opset"), ok);
	}
	a = cJSON_AddArrayToObject(o, "sources");
	jb_need(a, ok);
	for (size_t i = 0; i < t->n_sources; i++)
		jb_put(a, cJSON_CreateString(t->sources[i]), ok);
	return o;
}

int cmd_targets(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *self = cli_command_find("targets");
	struct rules_db db;
	int c, json = 0, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'j')
			json = 1;
		else
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
	}
	if (argc > optind)
		return cli_usage_error(self, "targets takes no arguments");
	if ((rc = cli_load_rules(&db)))
		return rc;
	if (json) {
		cJSON *root = cJSON_CreateObject(), *arr;
		char *text;
		int ok = root != NULL;

		jb_need(cJSON_AddStringToObject(root, "schema", "opmig.targets/1"), &ok);
		arr = cJSON_AddArrayToObject(root, "targets");
		jb_need(arr, &ok);
		for (size_t i = 0; i < db.n_targets; i++)
			jb_put(arr, json_target(&db.targets[i], &ok), &ok);
		text = jb_print(root, ok);
		rules_db_release(&db);
		if (!text) {
			cli_error(NULL, "out of memory");
			return CLI_EXIT_INTERNAL;
		}
		puts(text);
		free(text);
		return cli_finish(CLI_EXIT_OK);
	}
	for (size_t i = 0; i < db.n_targets; i++) {
		const struct rules_target *t = &db.targets[i];
		size_t sup = rules_target_n_supported(t);

		printf("%-14s %s (%s): %zu ops supported", t->id, t->name,
		       t->vendor ? t->vendor : "no vendor", sup);
		if (t->n_ops > sup)
			printf(", %zu stated unsupported", t->n_ops - sup);
		if (t->opset_min >= 0)
			printf(", opset %d-%d", t->opset_min, t->opset_max);
		if (t->extends)
			printf(", extends %s", t->extends);
		putchar('\n');
		for (size_t j = 0; j < t->n_sources; j++)
			printf("%-14s source: %s\n", "", t->sources[j]);
	}
	rules_db_release(&db);
	return cli_finish(CLI_EXIT_OK);
}
