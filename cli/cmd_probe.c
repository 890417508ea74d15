/* cmd_probe.c: `opmig probe --runtime CMD -o RULES.json`: options, the
 * progress display, writing the derived rules file (checked by loading
 * it back) and the report; the work is in probe/probe.h. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ir/ir.h"
#include "ir/registry.h"
#include "oprules/rules.h"
#include "probe/probe.h"

#define BACKEND_DATA "/usr/share/libonnx-testdata/data/node"

const char cmd_probe_help[] =
	"usage: opmig probe --runtime 'CMD {model} {inputs} {outdir}' -o RULES.json [--id ID] [--name NAME] [--opset A..B] [--ops LIST] [--domain D] [--dtypes LIST] [--accept-only] [-j N] [--timeout S] [--max-memory SIZE] [--workdir DIR] [--backend-data DIR] [--seed S] [--report FILE] [--format text|json|html] [--resume] [--quiet]\n"
	"\n"
	"Measure what a runtime or converter accepts: run CMD on small one-node\n"
	"models of every op version, main dtype, representative attribute value,\n"
	"rank and constant or graph input, compare its outputs with opmig's\n"
	"interpreter, and write the rules file the verdicts make.\n"
	"\n"
	"  --runtime CMD       shell command run per case: {model} is the model,\n"
	"                      {inputs} the folder of input_K.pb / input_K.npy and\n"
	"                      inputs.txt, {outdir} where it writes output_K.npy\n"
	"                      (or .pb); a non-zero exit status is a rejection\n"
	"  -o RULES.json       the derived rules file (oprules format)\n"
	"  --id ID, --name N   the target's id (default: RULES without .json) and name\n"
	"  --opset A..B        default-domain opsets to probe (default 7..17; --opset\n"
	"                      17 for one)\n"
	"  --ops LIST          only these ops (comma-separated)\n"
	"  --domain D          the ops' domain (default ai.onnx)\n"
	"  --dtypes LIST       main dtypes to try (default float32,float16,float64,\n"
	"                      int8,uint8,int32,int64,bool)\n"
	"  --accept-only       exit status 0 is acceptance; outputs are not compared\n"
	"                      (converters that compile but cannot run on the host)\n"
	"  -j N                cases run at a time (default 1)\n"
	"  --timeout S         seconds per case before it counts as a hang (default 60)\n"
	"  --max-memory SIZE   address-space limit per case (K, M, G suffixes)\n"
	"  --workdir DIR       cases and results (default: RULES without .json,\n"
	"                      plus .probe)\n"
	"  --backend-data DIR  ONNX backend node cases to seed from (default\n"
	"                      " BACKEND_DATA ")\n"
	"  --seed S            seed of the generated inputs (default 0)\n"
	"  --report FILE       write the report to FILE instead of standard output\n"
	"  --format F          text (default), json (opmig.probe/1) or html\n"
	"  --resume            keep the results of an interrupted probe's cases\n"
	"  --quiet             no progress display\n"
	"  --help              show this help\n"
	"\n"
	"Exit status: 0 probed, 1 no case passed (is CMD right?), 2 usage, 3 bad\n"
	"input, 4 internal error, 130/143 interrupted.\n";

struct pargs {
	const char *out, *report, *id, *name, *workdir;
	char *ops_buf;
	char **ops;
	size_t n_ops;
	int format;               /* 0 text, 1 json, 2 html */
	int quiet;
	struct probe_opts o;
};

static int parse_opset(const char *s, int *a, int *b)
{
	char *end;
	long x = strtol(s, &end, 10), y;

	if (end == s || x < 1 || x > 1000)
		return -1;
	if (!*end) {
		*a = *b = (int)x;
		return 0;
	}
	if (strncmp(end, "..", 2))
		return -1;
	s = end + 2;
	y = strtol(s, &end, 10);
	if (end == s || *end || y < x || y > 1000)
		return -1;
	*a = (int)x;
	*b = (int)y;
	return 0;
}

static int split_ops(const struct cli_command *self, struct pargs *a, const char *list)
{
	free(a->ops_buf);
	free(a->ops);
	a->ops = NULL;
	a->n_ops = 0;
	if (!(a->ops_buf = strdup(list)))
		return CLI_EXIT_INTERNAL;
	for (char *p = strtok(a->ops_buf, ","); p; p = strtok(NULL, ","))
		if (cli_push(&a->ops, &a->n_ops, p) < 0)
			return CLI_EXIT_INTERNAL;
	if (!a->n_ops)
		return cli_usage_error(self, "--ops wants op names, not '%s'", list);
	return CLI_EXIT_OK;
}

static int parse_dtypes(const struct cli_command *self, const char *list, rules_dtypes *out)
{
	char buf[512];

	*out = 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *p = strtok(buf, ","); p; p = strtok(NULL, ",")) {
		rules_dtypes m = rules_dtype_parse(p);

		if (!m)
			return cli_usage_error(self, "--dtypes: unknown dtype '%s'", p);
		*out |= m;
	}
	if (!*out)
		return cli_usage_error(self, "--dtypes wants dtype names, not '%s'", list);
	return CLI_EXIT_OK;
}

static int parse_args(int argc, char **argv, struct pargs *a)
{
	static const struct option opts[] = {
		{ "runtime", required_argument, NULL, 'R' },
		{ "id", required_argument, NULL, 'i' },
		{ "name", required_argument, NULL, 'n' },
		{ "opset", required_argument, NULL, 'O' },
		{ "ops", required_argument, NULL, 'p' },
		{ "domain", required_argument, NULL, 'D' },
		{ "dtypes", required_argument, NULL, 't' },
		{ "accept-only", no_argument, NULL, 'A' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "max-memory", required_argument, NULL, 'm' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "backend-data", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 's' },
		{ "report", required_argument, NULL, 'r' },
		{ "format", required_argument, NULL, 'f' },
		{ "resume", no_argument, NULL, 'u' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *self = cli_command_find("probe");
	long long v;
	char why[300], *end;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:j:", opts, NULL)) != -1) {
		switch (c) {
		case 'R': a->o.command = optarg; break;
		case 'o': a->out = optarg; break;
		case 'i': a->id = optarg; break;
		case 'n': a->name = optarg; break;
		case 'D': a->o.domain = optarg; break;
		case 'A': a->o.accept_only = 1; break;
		case 'w': a->workdir = optarg; break;
		case 'b': a->o.backend_dir = optarg; break;
		case 'r': a->report = optarg; break;
		case 'u': a->o.resume = 1; break;
		case 'q': a->quiet = 1; break;
		case 'O':
			if (parse_opset(optarg, &a->o.opset_min, &a->o.opset_max) < 0)
				return cli_usage_error(self, "--opset wants A..B or N, not '%s'", optarg);
			break;
		case 'p':
			if ((rc = split_ops(self, a, optarg)) != CLI_EXIT_OK)
				return rc;
			break;
		case 't':
			if ((rc = parse_dtypes(self, optarg, &a->o.dtypes)) != CLI_EXIT_OK)
				return rc;
			break;
		case 'j':
			if (cli_parse_count(optarg, &v) < 0 || v < 1 || v > 1024)
				return cli_usage_error(self, "-j wants a count from 1 to 1024, not '%s'", optarg);
			a->o.jobs = (unsigned)v;
			break;
		case 'T':
			a->o.timeout = strtod(optarg, &end);
			if (end == optarg || *end || !(a->o.timeout > 0) || a->o.timeout > 1e6)
				return cli_usage_error(self, "--timeout wants seconds, not '%s'", optarg);
			break;
		case 'm':
			if (cli_parse_size(optarg, &v) < 0 || v < 1)
				return cli_usage_error(self, "--max-memory wants a size, not '%s'", optarg);
			a->o.max_memory = (uint64_t)v;
			break;
		case 's':
			if (cli_parse_count(optarg, &v) < 0)
				return cli_usage_error(self, "--seed wants a count, not '%s'", optarg);
			a->o.seed = (uint64_t)v;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				a->format = 0;
			else if (!strcmp(optarg, "json"))
				a->format = 1;
			else if (!strcmp(optarg, "html"))
				a->format = 2;
			else
				return cli_usage_error(self, "--format is text, json or html, not '%s'", optarg);
			break;
		default:
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error(self, "probe takes no argument '%s'", argv[optind]);
	if (!a->o.command)
		return cli_usage_error(self, "probe needs --runtime 'CMD {model} {inputs} {outdir}'");
	if (!probe_template_ok(a->o.command, why, sizeof(why)))
		return cli_usage_error(self, "%s", why);
	if (!a->out)
		return cli_usage_error(self, "probe needs -o RULES.json");
	return CLI_EXIT_OK;
}

/* Every --ops name is an op of the domain. */
static int check_ops(const struct cli_command *self, const struct pargs *a)
{
	const char *dom = a->o.domain && *a->o.domain ? a->o.domain : "ai.onnx";
	const struct ir_op_schema *first;

	for (size_t i = 0; i < a->n_ops; i++)
		if (!ir_registry_versions(dom, a->ops[i], &first))
			return cli_usage_error(self, "--ops: no operator '%s' in domain %s (see 'opmig ops')",
					       a->ops[i], dom);
	return CLI_EXIT_OK;
}

/* RULES.json -> RULES (and the default id: its base name). */
static char *strip_json(const char *path, int base)
{
	const char *s = base && strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(s);

	if (n > 5 && !strcmp(s + n - 5, ".json"))
		n -= 5;
	return strndup(s, n);
}

struct prog {
	int tty;
	const char *phase;
};

static void progress(void *ctx, const struct probe_progress *p)
{
	struct prog *g = ctx;
	double rate = p->elapsed > 0 ? (double)p->done / p->elapsed : 0;

	if (!g->tty)
		return;
	if (g->phase && strcmp(g->phase, p->phase))
		fputc('\n', stderr);
	g->phase = p->phase;
	fprintf(stderr, "\r\033[K%s: %zu/%zu", p->phase, p->done, p->total);
	if (!strcmp(p->phase, "run")) {
		double eta = rate > 0 ? (double)(p->total - p->done) / rate : 0;

		fprintf(stderr, ", %zu equal, %zu accepted, %zu wrong, %zu rejected, %zu crashed, "
			"%zu timed out, ETA %d:%02d", p->counts[PROBE_EQUAL], p->counts[PROBE_ACCEPTED],
			p->counts[PROBE_WRONG], p->counts[PROBE_REJECTED], p->counts[PROBE_CRASHED],
			p->counts[PROBE_TIMEOUT], (int)(eta / 60), (int)fmod(eta, 60));
	}
}

static void today(char *buf, size_t size)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	time_t t = sde && *sde ? (time_t)strtoll(sde, NULL, 10) : time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%d", &tm);
}

/* The derived file, written and loaded back (the loader's strict checks
 * prove it a valid rules file). */
static int write_rules(const struct pargs *a, const struct probe_run *r)
{
	struct rules_target t;
	struct rules_db db;
	struct ir_diag d;
	char date[16], *id = a->id ? NULL : strip_json(a->out, 1), *text = NULL;
	int rc;

	ir_diag_init(&d);
	today(date, sizeof(date));
	if (!a->id && !id)
		return CLI_EXIT_INTERNAL;
	rc = probe_derive(r, a->id ? a->id : id, a->name ? a->name : a->id ? a->id : id,
			  "opmig " OPMIG_VERSION, date, &t, &d);
	free(id);
	if (rc < 0) {
		cli_error(NULL, "%s", d.msg);
		return cli_exit_code(rc);
	}
	text = rules_target_to_json(&t);
	rules_target_release(&t);
	if (!text) {
		cli_error(NULL, "out of memory");
		return CLI_EXIT_INTERNAL;
	}
	rc = ir_file_write_atomic(a->out, text, strlen(text), &d);
	free(text);
	if (rc < 0) {
		cli_error(a->out, "%s", d.msg);
		return cli_exit_code(rc);
	}
	rules_db_init(&db);
	rc = rules_load_file(a->out, &db, &d);
	rules_db_release(&db);
	if (rc < 0) {
		cli_error(a->out, "the derived rules do not load: %s", d.msg);
		return CLI_EXIT_INTERNAL;
	}
	return CLI_EXIT_OK;
}

static int write_report(const struct pargs *a, const struct probe_run *r)
{
	struct cli_out o;
	FILE *f = cli_out_open(&o, a->report);
	int rc;

	if (!f)
		return CLI_EXIT_INTERNAL;
	rc = a->format == 1 ? probe_report_json(r, f) : a->format == 2 ? probe_report_html(r, f) :
		probe_report_text(r, f);
	return cli_out_close(&o, rc < 0 ? CLI_EXIT_INTERNAL : CLI_EXIT_OK);
}

int cmd_probe(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("probe");
	struct pargs a;
	struct probe_run r;
	struct prog g = { 0 };
	struct ir_diag d;
	char *workdir = NULL;
	size_t n_ok = 0;
	int code, rc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.o.opset_min = 7;
	a.o.opset_max = 17;
	a.o.jobs = 1;
	a.o.timeout = 60;
	a.o.backend_dir = BACKEND_DATA;
	if ((code = parse_args(argc, argv, &a)) != CLI_EXIT_OK || (code = check_ops(self, &a)) != CLI_EXIT_OK)
		goto cleanup;
	a.o.ops = a.ops;
	a.o.n_ops = a.n_ops;
	if (!a.workdir) {
		char *base = strip_json(a.out, 0);
		size_t n = base ? strlen(base) + 7 : 0;

		if (!base || !(workdir = malloc(n))) {
			free(base);
			code = CLI_EXIT_INTERNAL;
			goto cleanup;
		}
		snprintf(workdir, n, "%s.probe", base);
		free(base);
	}
	a.o.workdir = a.workdir ? a.workdir : workdir;
	g.tty = !a.quiet && isatty(2);
	a.o.progress = progress;
	a.o.ctx = &g;
	ir_diag_init(&d);
	rc = probe_run(&a.o, &r, &d);
	if (g.tty)
		fputc('\n', stderr);
	if (rc < 0) {
		cli_error(NULL, "%s", d.msg);
		if (rc == IR_EIO && strstr(d.msg, "interrupted"))
			code = strstr(d.msg, "signal 15") ? 143 : 130;
		else
			code = cli_exit_code(rc);
		goto cleanup;
	}
	if ((code = write_rules(&a, &r)) != CLI_EXIT_OK || (code = write_report(&a, &r)) != CLI_EXIT_OK)
		goto cleanup;
	for (size_t i = 0; i < r.n_cases; i++)
		n_ok += probe_verdict_ok(r.cases[i].verdict);
	if (!n_ok) {
		const char *msg = NULL;

		for (size_t i = 0; i < r.n_cases && !msg; i++)
			msg = r.cases[i].verdict >= PROBE_WRONG ? r.cases[i].message : NULL;
		cli_error(NULL, "no case passed: is the runtime command right? (first message: %s)",
			  msg ? msg : "none");
		code = CLI_EXIT_FINDINGS;
		goto cleanup;
	}
	code = CLI_EXIT_OK;
cleanup:
	probe_run_release(&r);
	free(workdir);
	free(a.ops);
	free(a.ops_buf);
	return cli_finish(code);
}
