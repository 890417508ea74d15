/* commands.c: the sorted command table (found by bsearch) and the shared
 * helpers every command uses: exit-code mapping, error lines, colour,
 * option values. */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ir/ir.h"
#include "runtime/inputs.h"

const struct cli_command cli_commands[] = {
	{ "batch", cmd_batch, cmd_batch_help, "scan or migrate a zoo of models in parallel: a model x target matrix" },
	{ "convert", cmd_convert, cmd_convert_help,
	  "re-serialize a model, optionally moving weights to external data" },
	{ "inspect", cmd_inspect, cmd_inspect_help,
	  "summarize a model: interface, opsets, op histogram, parameters" },
	{ "migrate", cmd_migrate, cmd_migrate_help,
	  "rewrite a model for a target and check it still computes the same" },
	{ "ops", cmd_ops, cmd_ops_help,
	  "list the operator registry, or one operator's versions" },
	{ "probe", cmd_probe, cmd_probe_help,
	  "measure what a runtime accepts and derive its rules file" },
	{ "quantize", cmd_quantize, cmd_quantize_help,
	  "quantize a float model to int8: calibrate, insert QDQ, fall back to float where accuracy needs it" },
	{ "rules", cmd_rules, cmd_rules_help,
	  "show a target's rules, or check a rules file" },
	{ "run", cmd_run, cmd_run_help,
	  "run a model in the reference interpreter" },
	{ "scan", cmd_scan, cmd_scan_help,
	  "check a model against target chips' rules: a verdict per node" },
	{ "targets", cmd_targets, cmd_targets_help,
	  "list the targets of the rules database" },
	{ "validate", cmd_validate, cmd_validate_help,
	  "compare two models' outputs, optionally layer by layer" },
};
const size_t cli_n_commands = sizeof(cli_commands) / sizeof(cli_commands[0]);

static int cmd_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct cli_command *)elem)->name);
}

const struct cli_command *cli_command_find(const char *name)
{
	return bsearch(name, cli_commands, cli_n_commands,
		       sizeof(cli_commands[0]), cmd_cmp);
}

int cli_exit_code(int status)
{
	switch (status) {
	case IR_OK: return CLI_EXIT_OK;
	case IR_EINVAL: return CLI_EXIT_BAD_INPUT;
	case IR_EUSAGE: return CLI_EXIT_USAGE;
	default: return CLI_EXIT_INTERNAL;
	}
}

int cli_use_color(FILE *f)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

	if (nc)
		return 0;
	if (term && !strcmp(term, "dumb"))
		return 0;
	return isatty(fileno(f));
}

/* "opmig: FILE: " with "opmig:" in bold red (errors) or yellow (warnings)
 * on a colour terminal. */
static void prefix(FILE *f, const char *file, int warn)
{
	if (cli_use_color(f))
		fprintf(f, "\033[1;%sm%s\033[0m ", warn ? "33" : "31", "opmig:");
	else
		fputs("opmig: ", f);
	if (file)
		fprintf(f, "%s: ", file);
	if (warn)
		fputs("warning: ", f);
}

void cli_error(const char *file, const char *fmt, ...)
{
	va_list ap;

	prefix(stderr, file, 0);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_warn(const char *file, const char *msg)
{
	prefix(stderr, file, 1);
	fprintf(stderr, "%s\n", msg);
}

/* The strict schema check's faults of a loaded model, one warning line
 * each, the first CLI_LOAD_FAULTS of them. */
#define CLI_LOAD_FAULTS 10

struct load_faults {
	const char *path;
	int shown;
};

static int warn_fault(void *ctx, const struct ir_node *n, const char *msg)
{
	struct load_faults *f = ctx;

	(void)n;
	if (f->shown < CLI_LOAD_FAULTS) {
		cli_warn(f->path, msg);
		f->shown++;
	}
	return 0;
}

static int load(const char *path, struct ir_model **m, int strict)
{
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	rc = ir_model_load(path, NULL, m, &d);
	if (rc < 0) {
		cli_error(path, "%s", d.msg);
		return cli_exit_code(rc);
	}
	if (d.n_warnings)
		cli_warn(path, d.warning);
	if (strict) {
		struct load_faults f = { path, 0 };
		char more[80];

		ir_diag_init(&d);
		if ((rc = ir_model_check_loaded(*m, warn_fault, &f, &d)) < 0) {
			cli_error(path, "%s", d.msg);
			ir_model_free(*m);
			*m = NULL;
			return cli_exit_code(rc);
		}
		if (rc > CLI_LOAD_FAULTS) {
			snprintf(more, sizeof(more), "%d more faults not shown",
				 rc - CLI_LOAD_FAULTS);
			cli_warn(path, more);
		}
	}
	return CLI_EXIT_OK;
}

int cli_load(const char *path, struct ir_model **m)
{
	return load(path, m, 1);
}

int cli_load_quiet(const char *path, struct ir_model **m)
{
	return load(path, m, 0);
}

int cli_usage_error(const struct cli_command *c, const char *fmt, ...)
{
	va_list ap;
	const char *nl = strchr(c->help, '\n');

	fputs("opmig: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%.*s\n", nl ? (int)(nl - c->help) : (int)strlen(c->help),
		c->help);
	return CLI_EXIT_USAGE;
}

int cli_finish(int code)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error(NULL, "cannot write to standard output");
		return code ? code : CLI_EXIT_INTERNAL;
	}
	return code;
}

int cli_wants_help(const struct cli_command *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(c->help, stdout);
			return 1;
		}
	}
	return 0;
}

int cli_parse_count(const char *s, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	return (errno || end == s || *end || *out < 0) ? -1 : 0;
}

int cli_parse_run_opt(const struct cli_command *self, int c, const char *arg,
		      const struct cli_run_opts *o)
{
	long long v;

	switch (c) {
	case CLI_OPT_SAMPLES:
		if (cli_parse_count(arg, &v) < 0 || v < 1 || v > o->max_samples)
			return cli_usage_error(self, "--samples wants a count >= 1, not '%s'", arg);
		*o->samples = (int)v;
		break;
	case CLI_OPT_SEED:
		if (cli_parse_count(arg, &v) < 0)
			return cli_usage_error(self, "--seed wants a number, not '%s'", arg);
		*o->seed = (uint64_t)v;
		break;
	default:
		if (cli_parse_count(arg, &v) < 0 || v < 1 || v > 1024)
			return cli_usage_error(self, "--threads wants 1 to 1024, not '%s'", arg);
		*o->threads = (int)v;
	}
	return CLI_EXIT_OK;
}

int cli_add_dim(const struct cli_command *self, struct rt_dim_set **dims, size_t *n,
		const char *arg)
{
	struct rt_dim_set *q = realloc(*dims, (*n + 1) * sizeof(*q));

	if (!q)
		return CLI_EXIT_INTERNAL;
	*dims = q;
	if (rt_dim_set_parse(arg, &q[*n]) < 0)
		return cli_usage_error(self, "--dim wants NAME=VALUE, not '%s'", arg);
	(*n)++;
	return CLI_EXIT_OK;
}

int cli_push(char ***v, size_t *n, char *s)
{
	char **p = realloc(*v, (*n + 1) * sizeof(*p));

	if (!p)
		return -1;
	*v = p;
	p[(*n)++] = s;
	return 0;
}

int cli_parse_size(const char *s, long long *out)
{
	static const char units[] = "KMGT";
	const char *u;
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || v < 0)
		return -1;
	if (*end) {
		if (end[1] && !(end[1] == 'B' && !end[2]) && !(end[1] == 'i' && end[2] == 'B' && !end[3]))
			return -1;
		if (!(u = strchr(units, *end)) || !*end)
			return -1;
		for (const char *p = units; p <= u; p++) {
			if (v > LLONG_MAX / 1024)
				return -1;
			v *= 1024;
		}
	}
	*out = v;
	return 0;
}
