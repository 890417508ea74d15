/* cmd_scan.c: `opmig scan MODEL --target T[,T...]`: load the model and the
 * rules (installed targets plus --rules files), run the scanner against
 * each target and write the report (scanner/report.h) to stdout or,
 * atomically, to -o FILE; the exit code says whether anything at or above
 * --fail-on remains. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ir/ir.h"
#include "oprules/rules.h"
#include "rewriters/rewrite.h"
#include "scanner/report.h"
#include "scanner/scan.h"

const char cmd_scan_help[] =
	"usage: opmig scan MODEL --target T[,T2...] [--rules FILE]... [--format text|json|md|html|dot] [-o FILE] [--fail-on blocked|limited|never]\n"
	"\n"
	"Check every node of MODEL (main graph, subgraphs, model-local functions)\n"
	"against the rules of one or more target chips: supported, limited,\n"
	"rewritable (opmig has a rewrite) or blocked, with reasons; plus\n"
	"model-level findings (opset, dynamic inputs, int64/float64, external\n"
	"data).  Several targets give a compatibility matrix too.\n"
	"\n"
	"  --target T[,T2...]  targets to scan against (default generic-npu;\n"
	"                      may be repeated; see 'opmig targets')\n"
	"  --rules FILE        load an extra rules file (repeatable; its targets\n"
	"                      may extend the installed ones)\n"
	"  --format F          text (default), json (schema opmig.scan/1), md,\n"
	"                      html or dot\n"
	"  -o FILE             write the report to FILE (atomically), not stdout\n"
	"  --fail-on S         exit 1 when a node or finding at or above S\n"
	"                      remains: blocked (default), limited (limited,\n"
	"                      rewritable or blocked) or never\n"
	"  --help              show this help\n";

struct scan_args {
	const char *model, *out;
	const struct scan_format *format;
	int fail_on;                 /* enum scan_status, or -1 never */
	char **targets;              /* ids, owned */
	size_t n_targets;
	char **rules;                /* borrowed from argv */
	size_t n_rules;
};

static void args_release(struct scan_args *a)
{
	for (size_t i = 0; i < a->n_targets; i++)
		free(a->targets[i]);
	free(a->targets);
	free(a->rules);
}

static int parse_args(struct scan_args *a, int argc, char **argv,
		      const struct cli_command *self)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "rules", required_argument, NULL, 'r' },
		{ "format", required_argument, NULL, 'f' },
		{ "fail-on", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	optind = 1;
	opterr = 0;
	a->format = scan_format_find("text");
	a->fail_on = SCAN_BLOCKED;
	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if ((rc = cli_add_targets(self, &a->targets, &a->n_targets, optarg)) != CLI_EXIT_OK)
				return rc;
			break;
		case 'r':
			if (cli_push(&a->rules, &a->n_rules, optarg) < 0)
				return CLI_EXIT_INTERNAL;
			break;
		case 'f':
			if (!(a->format = scan_format_find(optarg)))
				return cli_usage_error(self, "--format is text, json, md, html or dot, not '%s'", optarg);
			break;
		case 'F':
			if (!strcmp(optarg, "never"))
				a->fail_on = -1;
			else if (!strcmp(optarg, "blocked"))
				a->fail_on = SCAN_BLOCKED;
			else if (!strcmp(optarg, "limited"))
				a->fail_on = SCAN_LIMITED;
			else
				return cli_usage_error(self, "--fail-on is blocked, limited or never, not '%s'", optarg);
			break;
		case 'o':
			a->out = optarg;
			break;
		default:
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return cli_usage_error(self, "scan needs one MODEL");
	a->model = argv[optind];
	if (!a->n_targets &&
	    (rc = cli_add_targets(self, &a->targets, &a->n_targets, "generic-npu")) != CLI_EXIT_OK)
		return rc;
	return CLI_EXIT_OK;
}

/* The report into a memory buffer, then whole into the file (atomically)
 * or on standard output (path NULL): never cut short. */
static int write_file(const char *path, const struct scan_result *r,
		      const struct scan_format *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	struct ir_diag d;
	int rc;

	if (!mem) {
		cli_error(path, "out of memory");
		return CLI_EXIT_INTERNAL;
	}
	rc = scan_report_write(r, f, mem);
	if (fclose(mem) != 0 || rc < 0) {
		free(buf);
		cli_error(path, "out of memory writing the report");
		return CLI_EXIT_INTERNAL;
	}
	if (!path) {
		rc = fwrite(buf, 1, len, stdout) == len ? CLI_EXIT_OK : CLI_EXIT_INTERNAL;
		free(buf);
		if (rc != CLI_EXIT_OK)
			cli_error(NULL, "cannot write to standard output");
		return rc;
	}
	ir_diag_init(&d);
	rc = ir_file_write_atomic(path, buf, len, &d);
	free(buf);
	if (rc < 0) {
		cli_error(NULL, "%s", d.msg);
		return rc == IR_EINVAL ? CLI_EXIT_BAD_INPUT : CLI_EXIT_INTERNAL;
	}
	return CLI_EXIT_OK;
}

int cmd_scan(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("scan");
	struct scan_args a;
	struct rules_db base, extra;
	const struct rules_target **targets = NULL;
	struct ir_model *m = NULL;
	struct scan_result res;
	struct scan_options so;
	struct rw_ctx rw;
	struct ir_diag hook_d;
	int code, rc, have_rw = 0;
	struct ir_diag d;

	memset(&a, 0, sizeof(a));
	memset(&res, 0, sizeof(res));
	rules_db_init(&base);
	rules_db_init(&extra);
	if ((code = parse_args(&a, argc, argv, self)) != CLI_EXIT_OK)
		goto cleanup;
	if ((code = cli_load_rules_with(a.rules, a.n_rules, &base, &extra)) != CLI_EXIT_OK)
		goto cleanup;
	if (!(targets = calloc(a.n_targets, sizeof(*targets)))) {
		code = CLI_EXIT_INTERNAL;
		goto cleanup;
	}
	for (size_t i = 0; i < a.n_targets; i++)
		if (!(targets[i] = cli_find_target(&base, &extra, a.targets[i]))) {
			code = cli_usage_error(self, "no target '%s' (see 'opmig targets')",
					       a.targets[i]);
			goto cleanup;
		}
	if ((code = cli_load(a.model, &m)) != CLI_EXIT_OK)
		goto cleanup;
	/* opmig's rewrite passes say what migrate would do about a node that
	 * is limited or blocked on a target (rewriters/scan_hook.c) */
	ir_diag_init(&hook_d);
	have_rw = rw_ctx_init(&rw, m, NULL, &hook_d) == 0;
	so.can_rewrite = have_rw ? rw_scan_hook : NULL;
	so.ctx = &rw;
	so.fp16 = 0;

	ir_diag_init(&d);
	/* the rewrite context's inference serves the scan too; a failed one
	 * is left to the scan, which reports it */
	if ((rc = scan_model_inferred(m, a.model, targets, a.n_targets, &so,
				      have_rw && rw.have_inf ? &rw.inf : NULL,
				      &res, &d)) < 0) {
		cli_error(a.model, "%s", d.msg);
		code = cli_exit_code(rc);
		goto cleanup;
	}
	code = write_file(a.out, &res, a.format);
	if (code == CLI_EXIT_OK && a.fail_on >= 0)
		for (size_t i = 0; i < res.n_targets; i++)
			if (scan_target_has(&res.targets[i], (enum scan_status)a.fail_on))
				code = CLI_EXIT_FINDINGS;
	code = cli_finish(code);
cleanup:
	scan_result_release(&res);
	if (have_rw)
		rw_ctx_release(&rw);
	ir_model_free(m);
	free(targets);
	rules_db_release(&extra);
	rules_db_release(&base);
	args_release(&a);
	return code;
}
