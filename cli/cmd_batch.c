/* cmd_batch.c: `opmig batch SRC... -o OUTDIR` and `opmig batch merge`:
 * options, the rules, the progress display (a bar on a terminal, a line
 * per job otherwise) and the exit code; the work is in batch/batch.h. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch.h"
#include "cli/cli.h"
#include "ir/ir.h"
#include "oprules/rules.h"
#include "probe/probe.h"

const char cmd_batch_help[] =
	"usage: opmig batch SRC... --target T[,T2...] -o OUTDIR [--mode scan|migrate] [-j N] [--resume] [--shard K/N] [--timeout SEC] [--max-memory SIZE] [--manifest FILE]... [--rules FILE]... [--zip OUT.zip] [--times] [--quiet] [--layout nchw|nhwc] [--batch N] [--dim NAME=V]... [--precision fp32|fp16] [--no-validate]\n"
	"       opmig batch merge OUTDIR... -o MERGED [--zip OUT.zip]\n"
	"\n"
	"Scan or migrate a whole zoo of models for one or more targets, in\n"
	"crash-isolated worker processes, and write a model x target matrix.\n"
	"SRC is a model file, a folder (searched recursively for *.onnx), a .zip\n"
	"archive of models (read without extracting; unsafe entries refuse it)\n"
	"or a manifest (.json or .csv, with per-model targets and options).\n"
	"\n"
	"  --target T[,T2...]  targets (default generic-npu; repeatable)\n"
	"  -o OUTDIR           outputs: OUTDIR/<model>/<target>/ and summary.json,\n"
	"                      summary.csv, summary.md, index.html\n"
	"  --mode M            scan (default) or migrate (with validation)\n"
	"  -j N                worker processes (default 1)\n"
	"  --resume            skip jobs whose outputs are complete and whose input,\n"
	"                      options and rules are unchanged\n"
	"  --shard K/N         only the K-th of N shares of the models\n"
	"  --timeout SEC       stop a model's worker after SEC seconds\n"
	"  --max-memory SIZE   address-space limit of a worker (K, M, G suffixes)\n"
	"  --manifest FILE     a manifest (also accepted as SRC)\n"
	"  --rules FILE        load an extra rules file (repeatable)\n"
	"  --zip OUT.zip       pack OUTDIR into OUT.zip when done\n"
	"  --times             record each job's seconds in the summaries\n"
	"                      (they are then no longer deterministic)\n"
	"  --quiet             no progress display\n"
	"  --max-entry-size S  largest zip entry, uncompressed (default 1G)\n"
	"  --max-ratio R       largest compression ratio of a zip entry (default 100)\n"
	"  --layout, --batch, --dim, --precision\n"
	"                      migrate options for models their manifest does not\n"
	"                      set (see opmig-migrate(1))\n"
	"  --no-validate       migrate without the numerical check in the\n"
	"                      interpreter (as opmig migrate --no-validate)\n"
	"  --help              show this help\n"
	"\n"
	"merge: combine the summaries of shard runs (each OUTDIR) into MERGED; the\n"
	"result equals the summary of an unsharded run.\n"
	"\n"
	"Exit status: 0 every job succeeded, 1 some failed (named in the summary),\n"
	"2 usage, 3 bad input, 4 internal error, 130/143 interrupted.\n";

struct bargs {
	const char *out, *zip;
	int quiet;
	char **srcs;
	size_t n_srcs;
	char **targets;
	size_t n_targets;
	char *rules[16];
	size_t n_rules;
	struct batch_opts o;
	struct batch_mopts def;
	struct batch_limits lim;
};

static int parse_args(int argc, char **argv, struct bargs *a,
		      const struct cli_command *self)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 'T' },
		{ "output", required_argument, NULL, 'o' },
		{ "mode", required_argument, NULL, 'M' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "resume", no_argument, NULL, 'R' },
		{ "shard", required_argument, NULL, 'S' },
		{ "timeout", required_argument, NULL, 't' },
		{ "max-memory", required_argument, NULL, 'm' },
		{ "manifest", required_argument, NULL, 'f' },
		{ "rules", required_argument, NULL, 'r' },
		{ "zip", required_argument, NULL, 'z' },
		{ "times", no_argument, NULL, 'x' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "max-entry-size", required_argument, NULL, 'E' },
		{ "max-ratio", required_argument, NULL, 'X' },
		{ "layout", required_argument, NULL, 'L' },
		{ "batch", required_argument, NULL, 'b' },
		{ "dim", required_argument, NULL, 'D' },
		{ "precision", required_argument, NULL, 'p' },
		{ "no-validate", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	long long v;
	char *end;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:j:q", opts, NULL)) != -1) {
		switch (c) {
		case 'T':
			if ((rc = cli_add_targets(self, &a->targets, &a->n_targets, optarg)) != CLI_EXIT_OK)
				return rc;
			break;
		case 'o': a->out = optarg; break;
		case 'z': a->zip = optarg; break;
		case 'R': a->o.resume = 1; break;
		case 'x': a->o.times = 1; break;
		case 'N': a->o.no_validate = 1; break;
		case 'q': a->quiet = 1; break;
		case 'M':
			if (strcmp(optarg, "scan") && strcmp(optarg, "migrate"))
				return cli_usage_error(self, "--mode is scan or migrate, not '%s'", optarg);
			a->o.mode = strcmp(optarg, "scan") ? BATCH_MIGRATE : BATCH_SCAN;
			break;
		case 'j':
			if (cli_parse_count(optarg, &v) < 0 || v < 1 || v > 1024)
				return cli_usage_error(self, "-j wants 1 to 1024, not '%s'", optarg);
			a->o.jobs = (unsigned)v;
			break;
		case 'S':
			if (batch_shard_parse(optarg, &a->o.shard_k, &a->o.shard_n) < 0)
				return cli_usage_error(self, "--shard wants K/N with 1 <= K <= N, not '%s'", optarg);
			break;
		case 't':
			a->o.timeout = strtod(optarg, &end);
			if (*end || end == optarg || !(a->o.timeout > 0) || a->o.timeout > 1e7)
				return cli_usage_error(self, "--timeout wants seconds > 0, not '%s'", optarg);
			break;
		case 'm':
			if (cli_parse_size(optarg, &v) < 0 || v < (16 << 20))
				return cli_usage_error(self, "--max-memory wants a size of 16M or more, not '%s'", optarg);
			a->o.max_memory = (uint64_t)v;
			break;
		case 'E':
			if (cli_parse_size(optarg, &v) < 0 || v < 1)
				return cli_usage_error(self, "--max-entry-size wants a size, not '%s'", optarg);
			a->lim.max_entry = (uint64_t)v;
			break;
		case 'X':
			a->lim.max_ratio = strtod(optarg, &end);
			if (*end || end == optarg || !(a->lim.max_ratio >= 1))
				return cli_usage_error(self, "--max-ratio wants a number >= 1, not '%s'", optarg);
			break;
		case 'f':
		case 'r':
			if (c == 'f' && cli_push(&a->srcs, &a->n_srcs, optarg) < 0)
				return CLI_EXIT_INTERNAL;
			if (c == 'r') {
				if (a->n_rules == 16)
					return cli_usage_error(self, "more than 16 --rules files");
				a->rules[a->n_rules++] = optarg;
			}
			break;
		case 'L':
			if (strcmp(optarg, "nchw") && strcmp(optarg, "nhwc"))
				return cli_usage_error(self, "--layout is nchw or nhwc, not '%s'", optarg);
			a->def.layout = optarg;
			break;
		case 'p':
			if (strcmp(optarg, "fp32") && strcmp(optarg, "fp16"))
				return cli_usage_error(self, "--precision is fp32 or fp16, not '%s'", optarg);
			a->def.precision = optarg;
			break;
		case 'b':
			if (cli_parse_count(optarg, &v) < 0 || v < 1)
				return cli_usage_error(self, "--batch wants a count >= 1, not '%s'", optarg);
			a->def.batch = v;
			break;
		case 'D': {
			const char *eq = strchr(optarg, '=');

			if (!eq || eq == optarg || cli_parse_count(eq + 1, &v) < 0 || v < 1)
				return cli_usage_error(self, "--dim wants NAME=VALUE, not '%s'", optarg);
			if (cli_push(&a->def.dims, &a->def.n_dims, optarg) < 0)
				return CLI_EXIT_INTERNAL;
			break;
		}
		default:
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
		}
	}
	for (int i = optind; i < argc; i++)
		if (cli_push(&a->srcs, &a->n_srcs, argv[i]) < 0)
			return CLI_EXIT_INTERNAL;
	if (!a->n_srcs)
		return cli_usage_error(self, "batch needs at least one SRC");
	if (!a->out)
		return cli_usage_error(self, "batch needs -o OUTDIR");
	if (!a->n_targets &&
	    (rc = cli_add_targets(self, &a->targets, &a->n_targets, "generic-npu")) != CLI_EXIT_OK)
		return rc;
	return 0;
}

/* ---- progress ----------------------------------------------------------- */

struct prog {
	int tty;
	size_t kept;              /* jobs kept by --resume so far */
};

static void progress(void *ctx, const struct batch_progress *p)
{
	struct prog *g = ctx;
	int tty = g->tty, kept = p->skipped != g->kept;
	double rate = p->elapsed > 0 ? (double)p->done / p->elapsed : 0;

	if (!p->row && !tty)
		return;
	g->kept = p->skipped;
	if (!tty) {
		fprintf(stderr, "[%zu/%zu] %s on %s: %s%s%s%s\n", p->done, p->total, p->row->model,
			p->row->target, batch_status_name(p->row->status),
			kept ? " (kept by --resume)" : "",
			*p->row->message ? ": " : "", p->row->message);
		return;
	}
	{
		char bar[31];
		size_t fill = p->total ? 30 * p->done / p->total : 30;
		double eta = rate > 0 ? (double)(p->total - p->done) / rate : 0;

		for (size_t i = 0; i < 30; i++)
			bar[i] = i < fill ? '#' : '.';
		bar[30] = 0;
		fprintf(stderr, "\r\033[K[%s] %zu/%zu, %zu failed, %.1f jobs/s, ETA %d:%02d",
			bar, p->done, p->total, p->failed, rate, (int)(eta / 60), (int)fmod(eta, 60));
		if (p->done == p->total && p->row)
			fputc('\n', stderr);
	}
}

/* A manifest's verify_with: the migrated model on the runtime, in the
 * worker (one sample, the interpreter single-threaded as batch runs it). */
static int verify(struct ir_model *m, const char *command, struct mg_report *r,
		  struct ir_diag *d)
{
	struct probe_verify_opts o = { 0 };
	struct probe_verify v;
	int rc;

	o.command = command;
	o.samples = 1;
	o.threads = 1;
	rc = probe_verify_report(m, &o, &v, r, d);
	probe_verify_release(&v);
	return rc;
}

static int finish(const struct batch_summary *s, const char *dir, const char *zip,
		  int quiet)
{
	struct ir_diag d;
	size_t failed = 0;

	ir_diag_init(&d);
	if (batch_summary_write(s, dir, &d) < 0 || (zip && batch_zip_dir(dir, zip, &d) < 0)) {
		cli_error(NULL, "%s", d.msg);
		return cli_exit_code(d.status);
	}
	for (size_t i = 0; i < s->n_rows; i++)
		failed += batch_status_failed(s->rows[i].status) != 0;
	if (!quiet)
		printf("%zu jobs, %zu failed, %zu kept by --resume: %s/summary.md\n", s->n_rows,
		       failed, s->n_kept, dir);
	return failed ? CLI_EXIT_FINDINGS : CLI_EXIT_OK;
}

static int merge(int argc, char **argv, const struct cli_command *self)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "zip", required_argument, NULL, 'z' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *zip = NULL;
	struct batch_summary s;
	struct ir_diag d;
	int c, code, quiet = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:q", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'z': zip = optarg; break;
		case 'q': quiet = 1; break;
		default:
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error(self, "batch merge needs at least one OUTDIR");
	if (!out)
		return cli_usage_error(self, "batch merge needs -o MERGED");
	batch_summary_init(&s);
	ir_diag_init(&d);
	batch_summary_merge(&s, argv + optind, (size_t)(argc - optind), &d);
	if (d.status) {
		cli_error(NULL, "%s", d.msg);
		code = cli_exit_code(d.status);
	} else {
		code = finish(&s, out, zip, quiet);
	}
	batch_summary_release(&s);
	return code;
}

int cmd_batch(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("batch");
	struct bargs a;
	struct rules_db base, extra;
	const struct rules_target **targets = NULL;
	const struct rules_db *dbs[2] = { &extra, &base };
	struct batch_src src;
	struct batch_summary sum;
	struct ir_diag d;
	struct prog g = { isatty(2), 0 };
	int code;

	if (argc >= 2 && !strcmp(argv[1], "merge"))
		return cli_finish(merge(argc - 1, argv + 1, self));
	memset(&a, 0, sizeof(a));
	a.o.jobs = 1;
	a.o.shard_k = a.o.shard_n = 1;
	a.lim.max_entry = BATCH_MAX_ENTRY_DEFAULT;
	a.lim.max_ratio = BATCH_MAX_RATIO_DEFAULT;
	rules_db_init(&base);
	rules_db_init(&extra);
	batch_src_init(&src);
	batch_summary_init(&sum);
	if ((code = parse_args(argc, argv, &a, self)) != CLI_EXIT_OK)
		goto cleanup;
	if ((code = cli_load_rules_with(a.rules, a.n_rules, &base, &extra)) != CLI_EXIT_OK)
		goto cleanup;
	if (!(targets = calloc(a.n_targets, sizeof(*targets)))) {
		code = CLI_EXIT_INTERNAL;
		goto cleanup;
	}
	for (size_t i = 0; i < a.n_targets; i++)
		if (!(targets[i] = cli_find_target(&base, &extra, a.targets[i]))) {
			code = cli_usage_error(self, "no target '%s' (see 'opmig targets')", a.targets[i]);
			goto cleanup;
		}
	src.lim = a.lim;
	ir_diag_init(&d);
	for (size_t i = 0; i < a.n_srcs && d.status == 0; i++)
		batch_src_add(&src, a.srcs[i], &d);
	if (d.status == 0 && batch_src_defaults(&src, &a.def) < 0)
		ir_diag_error(&d, IR_ENOMEM, "out of memory");
	if (d.status == 0)
		batch_src_finish(&src, &d);
	if (d.status) {
		cli_error(NULL, "%s", d.msg);
		code = cli_exit_code(d.status);
		goto cleanup;
	}
	a.o.outdir = a.out;
	a.o.targets = targets;
	a.o.n_targets = a.n_targets;
	a.o.dbs = dbs;
	a.o.n_dbs = 2;
	a.o.progress = a.quiet ? NULL : progress;
	a.o.verify = verify;
	a.o.ctx = &g;
	if (batch_run(&src, &a.o, &sum, &d) < 0) {
		if (g.tty && !a.quiet)
			fputc('\n', stderr);
		cli_error(NULL, "%s", d.msg);
		code = !strncmp(d.msg, "interrupted", 11) ? (strstr(d.msg, "signal 2 ") ? 130 : 143) :
			cli_exit_code(d.status);
		goto cleanup;
	}
	code = finish(&sum, a.out, a.zip, a.quiet);
cleanup:
	batch_summary_release(&sum);
	batch_src_release(&src);
	free(targets);
	rules_db_release(&extra);
	rules_db_release(&base);
	for (size_t i = 0; i < a.n_targets; i++)
		free(a.targets[i]);
	free(a.targets);
	free(a.srcs);
	free(a.def.dims);
	return cli_finish(code);
}
