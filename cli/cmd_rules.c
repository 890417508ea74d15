/* cmd_rules.c: `opmig rules show TARGET [--json] | check FILE | diff A B`:
 * print one target of the rules database after `extends` is applied
 * (text, or the resolved rules file as JSON), validate a user's rules
 * file, or print what two targets disagree on (oprules/diff.c). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ir/ir.h"
#include "oprules/rules.h"

const char cmd_rules_help[] =
	"usage: opmig rules show TARGET [--json] | check FILE | diff A B\n"
	"\n"
	"show TARGET  print a target of the installed rules database, with what\n"
	"             it inherits through extends applied\n"
	"check FILE   validate a rules file (see opmig-rules(5)); a file that\n"
	"             extends an installed target is resolved against it\n"
	"diff A B     what two targets disagree on, op by op; A and B are rules\n"
	"             files or installed targets' ids (exit 1 when they differ)\n"
	"\n"
	"  --json      with show: print the resolved target as a rules file\n"
	"  --help      show this help\n";

static void print_dtypes(rules_dtypes m)
{
	const char *sep = "";

	for (int i = 1; i < IR_DTYPE_COUNT; i++)
		if ((m & RULES_DTYPE_BIT(i)) && rules_dtype_name(i)) {
			printf("%s%s", sep, rules_dtype_name(i));
			sep = ",";
		}
}

static void print_range(int min, int max)
{
	if (max == RULES_UNBOUNDED)
		printf("%d+", min);
	else if (min == max)
		printf("%d", min);
	else
		printf("%d-%d", min, max);
}

static void print_value(const struct rules_value *v)
{
	if (v->kind == RULES_VALUE_STRING) {
		printf("%s", v->str);
	} else if (v->kind == RULES_VALUE_NUMBER) {
		printf("%g", v->num);
	} else {
		putchar('[');
		for (size_t i = 0; i < v->n_nums; i++)
			printf("%s%g", i ? "," : "", v->nums[i]);
		putchar(']');
	}
}

static void print_ios(const char *what, const struct rules_io *io, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		printf("; %s %d", what, io[i].index);
		if (io[i].dtypes) {
			printf(" dtypes ");
			print_dtypes(io[i].dtypes);
		}
		if (io[i].min_rank >= 0) {
			printf(" rank ");
			print_range(io[i].min_rank, io[i].max_rank);
		}
		if (io[i].is_const)
			printf(" const");
	}
}

static void print_op(const struct rules_op *op)
{
	printf("  %s%s%s", strcmp(op->domain, "ai.onnx") ? op->domain : "",
	       strcmp(op->domain, "ai.onnx") ? ":" : "", op->name);
	if (!op->supported) {
		printf(": not supported");
	} else {
		printf(": ");
		if (op->version_min > 1 || op->version_max != RULES_UNBOUNDED) {
			printf("versions ");
			print_range(op->version_min, op->version_max);
			printf("; ");
		}
		printf("dtypes ");
		if (op->dtypes)
			print_dtypes(op->dtypes);
		else
			printf("any");
		print_ios("input", op->inputs, op->n_inputs);
		print_ios("output", op->outputs, op->n_outputs);
		for (size_t i = 0; i < op->n_attrs; i++) {
			const struct rules_attr *a = &op->attrs[i];

			printf("; %s", a->name);
			if (a->n_allowed) {
				printf(" in ");
				for (size_t j = 0; j < a->n_allowed; j++) {
					printf("%s", j ? "|" : "");
					print_value(&a->allowed[j]);
				}
			}
			if (a->has_min)
				printf(" >= %g", a->min);
			if (a->has_max)
				printf(" <= %g", a->max);
			if (a->has_equals) {
				printf(" == ");
				print_value(&a->equals);
			}
		}
		if (op->static_shape)
			printf("; static shape");
		if (op->max_dim > 0)
			printf("; max dim %lld", (long long)op->max_dim);
		if (op->severity == RULES_LIMITED)
			printf("; limited");
	}
	putchar('\n');
	if (op->notes && *op->notes)
		printf("      %s\n", op->notes);
	for (size_t i = 0; i < op->n_sources; i++)
		printf("      source: %s\n", op->sources[i]);
}

static void print_target(const struct rules_target *t)
{
	size_t sup = rules_target_n_supported(t);

	printf("target %s: %s\n", t->id, t->name);
	if (t->vendor)
		printf("  vendor: %s\n", t->vendor);
	if (t->family)
		printf("  family: %s\n", t->family);
	if (t->description)
		printf("  description: %s\n", t->description);
	printf("  file: %s\n", t->file);
	if (t->extends)
		printf("  extends: %s\n", t->extends);
	printf("  opset: ");
	if (t->opset_min >= 0)
		print_range(t->opset_min, t->opset_max);
	else
		printf("not stated");
	printf("\n  missing dtypes: ");
	if (t->missing_dtypes)
		print_dtypes(t->missing_dtypes);
	else
		printf(t->has_missing_dtypes ? "none" : "not stated");
	printf("\n  dynamic shapes: %s\n", t->dynamic_shapes < 0 ? "not stated" :
	       t->dynamic_shapes ? "allowed" : "not allowed");
	if (t->max_rank >= 0)
		printf("  max rank: %d\n", t->max_rank);
	if (t->preferred_layout)
		printf("  preferred layout: %s\n", t->preferred_layout);
	if (t->preferred_precision)
		printf("  preferred precision: %s\n", t->preferred_precision);
	if (t->device_memory_bytes >= 0)
		printf("  device memory: %lld bytes\n", (long long)t->device_memory_bytes);
	for (size_t i = 0; i < t->n_fused; i++) {
		printf("  fused: %s (", t->fused[i].name);
		for (size_t j = 0; j < t->fused[i].n_ops; j++)
			printf("%s%s", j ? ", " : "", t->fused[i].ops[j]);
		printf(")%s%s\n", *t->fused[i].notes ? ": " : "", t->fused[i].notes);
	}
	for (size_t i = 0; i < t->n_sources; i++)
		printf("  source: %s\n", t->sources[i]);
	if (t->notes && *t->notes)
		printf("  notes: %s\n", t->notes);
	printf("ops: %zu supported, %zu stated unsupported\n", sup, t->n_ops - sup);
	for (size_t i = 0; i < t->n_ops; i++)
		print_op(&t->ops[i]);
}

static int show(const struct cli_command *self, const char *id, int json)
{
	const struct rules_target *t;
	struct rules_db db;
	int rc;

	if ((rc = cli_load_rules(&db)))
		return rc;
	if (!(t = rules_db_find(&db, id))) {
		rules_db_release(&db);
		return cli_usage_error(self, "no target '%s' (see 'opmig targets')", id);
	}
	if (json) {
		char *text = rules_target_to_json(t);

		if (!text) {
			rules_db_release(&db);
			cli_error(NULL, "out of memory");
			return CLI_EXIT_INTERNAL;
		}
		puts(text);
		free(text);
	} else {
		print_target(t);
	}
	rules_db_release(&db);
	return cli_finish(CLI_EXIT_OK);
}

static int check(const char *file)
{
	struct rules_db db, base;
	struct ir_diag d;
	int rc, code = CLI_EXIT_OK;

	rules_db_init(&db);
	rules_db_init(&base);
	ir_diag_init(&d);
	rc = rules_load_file(file, &db, &d);
	if (rc == 0 && db.targets[0].extends &&
	    (code = cli_load_rules(&base)) != CLI_EXIT_OK)
		goto cleanup;
	if (rc == 0)
		rc = rules_db_resolve(&db, &base, &d);
	if (rc < 0) {
		cli_error(NULL, "%s", d.msg);
		code = cli_exit_code(rc);
		goto cleanup;
	}
	printf("%s: ok: target %s, %zu ops supported, %zu stated unsupported\n", file,
	       db.targets[0].id, rules_target_n_supported(&db.targets[0]),
	       db.targets[0].n_ops - rules_target_n_supported(&db.targets[0]));
	code = cli_finish(CLI_EXIT_OK);
cleanup:
	rules_db_release(&db);
	rules_db_release(&base);
	return code;
}

/* A rules file (when the path exists) or an installed target's id,
 * resolved: the target is in one of the dbs. */
static int load_side(const struct cli_command *self, const char *arg, struct rules_db *base,
		     struct rules_db *own, const struct rules_target **t)
{
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	if (!access(arg, F_OK)) {
		if ((rc = rules_load_file(arg, own, &d)) == 0)
			rc = rules_db_resolve(own, base, &d);
		if (rc < 0) {
			cli_error(NULL, "%s", d.msg);
			return cli_exit_code(rc);
		}
		*t = &own->targets[0];
		return CLI_EXIT_OK;
	}
	if (!(*t = rules_db_find(base, arg)))
		return cli_usage_error(self, "'%s' is neither a rules file nor a target (see 'opmig targets')",
				       arg);
	return CLI_EXIT_OK;
}

static int diff(const struct cli_command *self, const char *a, const char *b)
{
	struct rules_db base, da, db;
	const struct rules_target *ta = NULL, *tb = NULL;
	struct rules_diff d;
	const char *last = NULL;
	size_t only_a = 0, only_b = 0, both = 0;
	int code;

	rules_db_init(&da);
	rules_db_init(&db);
	memset(&d, 0, sizeof(d));
	if ((code = cli_load_rules(&base)) != CLI_EXIT_OK)
		return code;
	if ((code = load_side(self, a, &base, &da, &ta)) != CLI_EXIT_OK ||
	    (code = load_side(self, b, &base, &db, &tb)) != CLI_EXIT_OK)
		goto cleanup;
	if (rules_diff(ta, tb, &d) < 0) {
		cli_error(NULL, "out of memory");
		code = CLI_EXIT_INTERNAL;
		goto cleanup;
	}
	printf("--- %s (%s)\n+++ %s (%s)\n", ta->id, ta->file, tb->id, tb->file);
	for (size_t i = 0; i < d.n; i++) {
		const struct rules_diff_line *l = &d.lines[i];

		if (!*l->op) {
			printf("%s: %s | %s\n", l->what, l->a, l->b);
			continue;
		}
		if (!strcmp(l->what, "op")) {
			only_a += !strcmp(l->a, "supported");
			only_b += !strcmp(l->b, "supported");
		} else if (!last || strcmp(last, l->op)) {
			both++;
		}
		last = l->op;
		printf("%s: %s: %s | %s\n", l->op, l->what, l->a, l->b);
	}
	printf("%zu difference%s: %zu ops only %s supports, %zu only %s, %zu ops both support with different rules\n",
	       d.n, d.n == 1 ? "" : "s", only_a, ta->id, only_b, tb->id, both);
	code = cli_finish(d.n ? CLI_EXIT_FINDINGS : CLI_EXIT_OK);
cleanup:
	rules_diff_release(&d);
	rules_db_release(&da);
	rules_db_release(&db);
	rules_db_release(&base);
	return code;
}

int cmd_rules(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *self = cli_command_find("rules");
	int c, json = 0;
	const char *sub;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'j')
			json = 1;
		else
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
	}
	if (argc - optind < 1)
		return cli_usage_error(self, "rules needs show TARGET, check FILE or diff A B");
	sub = argv[optind];
	if (!strcmp(sub, "diff")) {
		if (json)
			return cli_usage_error(self, "--json goes with show only");
		if (argc - optind != 3)
			return cli_usage_error(self, "rules diff takes two arguments");
		return diff(self, argv[optind + 1], argv[optind + 2]);
	}
	if (argc - optind != 2)
		return cli_usage_error(self, "rules %s takes one argument", sub);
	if (!strcmp(sub, "show"))
		return show(self, argv[optind + 1], json);
	if (!strcmp(sub, "check")) {
		if (json)
			return cli_usage_error(self, "--json goes with show only");
		return check(argv[optind + 1]);
	}
	return cli_usage_error(self, "unknown subcommand '%s' (want show, check or diff)", sub);
}
