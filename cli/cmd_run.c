/* cmd_run.c: `opmig run`: run a model in the reference interpreter with
 * inputs from files, a backend-test folder or a seed; print, save or check
 * its outputs; time the run and report per-op statistics. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "ir/ir.h"
#include "validators/compare.h"
#include "runtime/inputs.h"
#include "runtime/runtime.h"
#include "runtime/tensor_io.h"

const char cmd_run_help[] =
	"usage: opmig run MODEL [INPUT...] [--data DIR] [-O OUTDIR] [--out-format pb|npy] [--seed S] [--dim NAME=V]... [--threads N] [--check DIR] [--rtol R] [--atol A] [--time] [--repeat N] [--stats] [--max-memory BYTES] [--exact] [--profile FILE]\n"
	"\n"
	"Run MODEL in opmig's reference interpreter.\n"
	"\n"
	"INPUTs are TensorProto (.pb) or NumPy (.npy) files bound in order to the\n"
	"graph inputs that no initializer backs, or NAME=FILE.  Inputs left\n"
	"unbound get seeded random data (floats in [-1,1), integers in a range\n"
	"that keeps indices valid, dynamic dims from --dim, else 1).\n"
	"\n"
	"  --data DIR          bind DIR/input_N.pb to the N-th input (ONNX backend\n"
	"                      test layout)\n"
	"  -O OUTDIR           write output_N.pb (or .npy) in graph output order\n"
	"  --out-format F      pb (default) or npy for -O\n"
	"  --seed S            seed of the random inputs (default 0)\n"
	"  --dim NAME=V        value of a symbolic dim of the inputs\n"
	"  --threads N         threads (default: all cores)\n"
	"  --check DIR         compare the outputs with DIR/output_N.pb by\n"
	"                      |a-b| <= atol + rtol*|b| (NaN equals NaN); exit 1\n"
	"                      on a mismatch\n"
	"  --rtol R, --atol A  tolerances of --check (default 1e-3 and 1e-7)\n"
	"  --time              print the wall time of the run(s)\n"
	"  --repeat N          run N times (with --time: min, median, mean)\n"
	"  --stats             nodes and time per op type, the slowest nodes,\n"
	"                      peak tensor memory\n"
	"  --profile FILE      write every node run to FILE as a Chrome\n"
	"                      trace-event JSON array (onnxruntime's profile\n"
	"                      format: chrome://tracing, Perfetto)\n"
	"  --max-memory BYTES  refuse to run when the planned peak of live tensors\n"
	"                      is above BYTES (suffixes K, M, G), and stop a run\n"
	"                      that goes above it\n"
	"  --exact             compute float16 and bfloat16 in double, rounding\n"
	"                      once per op (default: in float32, as onnxruntime's\n"
	"                      CPU provider does), and static QDQ units node by\n"
	"                      node (default: one integer op each); slower, for\n"
	"                      investigations\n"
	"  --help              show this help\n"
	"\n"
	"Exit status: 0 ok, 1 outputs differ from --check, 2 usage, 3 bad model,\n"
	"input file or data (including a refused --max-memory), 4 internal error.\n";

struct run_args {
	const char *model, *data, *outdir, *check, *profile;
	int npy, threads, time, stats, repeat, exact;
	uint64_t seed;
	double rtol, atol;
	int64_t max_memory;
	char **inputs;
	size_t n_inputs;
	struct rt_dim_set *dims;
	size_t n_dims;
};

static int parse_args(int argc, char **argv, struct run_args *a)
{
	static const struct option opts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "out-format", required_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, CLI_OPT_SEED },
		{ "dim", required_argument, NULL, 'D' },
		{ "threads", required_argument, NULL, CLI_OPT_THREADS },
		{ "check", required_argument, NULL, 'c' },
		{ "rtol", required_argument, NULL, 'r' },
		{ "atol", required_argument, NULL, 'a' },
		{ "time", no_argument, NULL, 'T' },
		{ "repeat", required_argument, NULL, 'R' },
		{ "stats", no_argument, NULL, 'S' },
		{ "max-memory", required_argument, NULL, 'm' },
		{ "exact", no_argument, NULL, 'x' },
		{ "profile", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *self = cli_command_find("run");
	const struct cli_run_opts run = { NULL, &a->seed, &a->threads, 0 };
	long long v;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "O:", opts, NULL)) != -1) {
		switch (c) {
		case 'd': a->data = optarg; break;
		case 'O': a->outdir = optarg; break;
		case 'c': a->check = optarg; break;
		case 'T': a->time = 1; break;
		case 'S': a->stats = 1; break;
		case 'x': a->exact = 1; break;
		case 'P': a->profile = optarg; break;
		case 'f':
			if (strcmp(optarg, "pb") && strcmp(optarg, "npy"))
				return cli_usage_error(self, "--out-format is pb or npy, not '%s'", optarg);
			a->npy = !strcmp(optarg, "npy");
			break;
		case CLI_OPT_SEED:
		case CLI_OPT_THREADS:
			if ((rc = cli_parse_run_opt(self, c, optarg, &run)) != CLI_EXIT_OK)
				return rc;
			break;
		case 'D':
			if ((rc = cli_add_dim(self, &a->dims, &a->n_dims, optarg)) != CLI_EXIT_OK)
				return rc;
			break;
		case 'R':
			if (cli_parse_count(optarg, &v) < 0 || v < 1 || v > 1000000)
				return cli_usage_error(self, "--repeat wants a count >= 1, not '%s'", optarg);
			a->repeat = (int)v;
			break;
		case 'r':
		case 'a': {
			char *end;
			double x;

			errno = 0;
			x = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(x >= 0))
				return cli_usage_error(self, "--%s wants a number >= 0, not '%s'",
						       c == 'r' ? "rtol" : "atol", optarg);
			*(c == 'r' ? &a->rtol : &a->atol) = x;
			break;
		}
		case 'm':
			if (cli_parse_size(optarg, &v) < 0 || v < 1)
				return cli_usage_error(self, "--max-memory wants a byte count (suffixes K, M, G), not '%s'", optarg);
			a->max_memory = v;
			break;
		default:
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error(self, "run needs a MODEL");
	a->model = argv[optind];
	a->inputs = argv + optind + 1;
	a->n_inputs = (size_t)(argc - optind - 1);
	return CLI_EXIT_OK;
}

static double clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static void print_values(const struct rt_value *v)
{
	int64_t n = v->numel < 8 ? v->numel : 8;

	fputs("  [", stdout);
	for (int64_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", stdout);
		if (v->dtype == IR_DTYPE_STRING)
			printf("\"%s\"", ((char *const *)v->data)[i]);
		else if (v->dtype == IR_DTYPE_COMPLEX64 || v->dtype == IR_DTYPE_COMPLEX128)
			printf("(%.6g%+.6gj)", v->dtype == IR_DTYPE_COMPLEX64 ?
			       (double)((float *)v->data)[2 * i] : ((double *)v->data)[2 * i],
			       v->dtype == IR_DTYPE_COMPLEX64 ?
			       (double)((float *)v->data)[2 * i + 1] : ((double *)v->data)[2 * i + 1]);
		else
			printf("%.6g", rt_value_get_f64(v, i));
	}
	printf("%s]\n", v->numel > n ? ", ..." : "");
}

static void print_value(const char *name, const struct rt_value *v, int indent)
{
	char desc[256];
	struct rt_tensor_summary s;

	rt_value_describe(v, desc, sizeof(desc));
	printf("%*s%s  %s", indent, "", name, desc);
	if (v->kind != RT_TENSOR) {
		putchar('\n');
		for (size_t i = 0; i < v->n; i++) {
			char item[32];

			snprintf(item, sizeof(item), "[%zu]", i);
			print_value(item, v->items[i], indent + 2);
		}
		return;
	}
	rt_tensor_summarize(v, &s);
	if (s.n_finite)
		printf("  min %.6g  max %.6g  mean %.6g", s.min, s.max, s.mean);
	if (s.n_nan || s.n_inf)
		printf("  nan %lld  inf %lld", (long long)s.n_nan, (long long)s.n_inf);
	putchar('\n');
	if (v->numel) {
		printf("%*s", indent, "");
		print_values(v);
	}
}

static int make_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : -1;
	return mkdir(dir, 0777);
}

static int write_outputs(const struct run_args *a, struct rt_session *s,
			 struct rt_value **outs)
{
	struct ir_diag d;
	char path[4200];

	if (make_dir(a->outdir) != 0) {
		cli_error(a->outdir, "cannot create output folder: %s", strerror(errno));
		return CLI_EXIT_BAD_INPUT;
	}
	for (size_t i = 0; i < rt_session_n_outputs(s); i++) {
		const char *name = ir_s(rt_session_output(s, i)->value->name);
		int rc;

		ir_diag_init(&d);
		snprintf(path, sizeof(path), "%s/output_%zu.%s", a->outdir, i,
			 a->npy ? "npy" : "pb");
		rc = a->npy ? rt_npy_write(outs[i], path, &d) :
			      rt_value_write_pb(outs[i], name, path, &d);
		if (rc < 0) {
			cli_error(path, "output '%s': %s", name, d.msg);
			return cli_exit_code(rc);
		}
	}
	return CLI_EXIT_OK;
}

static int check_outputs(const struct run_args *a, struct rt_session *s,
			 struct rt_value **outs)
{
	struct rt_cmp_opts o = { a->rtol, a->atol };
	int code = CLI_EXIT_OK;
	char path[4200];

	for (size_t i = 0; i < rt_session_n_outputs(s); i++) {
		const struct ir_vinfo *vi = rt_session_output(s, i);
		struct rt_value *want = NULL;
		struct rt_metrics m;
		struct ir_diag d;

		ir_diag_init(&d);
		snprintf(path, sizeof(path), "%s/output_%zu.pb", a->check, i);
		if (rt_value_read_file(NULL, path, vi->type, &want, &d) < 0) {
			cli_error(path, "%s", d.msg);
			return CLI_EXIT_BAD_INPUT;
		}
		rt_compare(outs[i], want, &o, &m);
		rt_value_unref(want);
		if (m.ok) {
			printf("ok    output %zu '%s': max abs error %.3g, max rel error %.3g\n",
			       i, ir_s(vi->value->name), m.max_abs, m.max_rel);
		} else {
			printf("FAIL  output %zu '%s': %s\n", i, ir_s(vi->value->name), m.why);
			code = CLI_EXIT_FINDINGS;
		}
	}
	return code;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* "what: ..." of n times (sorted here) */
static void print_times(const char *what, double *t, int n)
{
	double sum = 0;

	for (int i = 0; i < n; i++)
		sum += t[i];
	if (n == 1) {
		printf("%s: %.3f ms\n", what, t[0] * 1e3);
		return;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	printf("%s: %d runs, min %.3f ms, median %.3f ms, mean %.3f ms\n", what, n,
	       t[0] * 1e3, t[n / 2] * 1e3, sum / n * 1e3);
}

#define TOP_NODES 10

static void print_stats(struct rt_session *s)
{
	const struct rt_stats *st = rt_session_stats(s);
	double total = 0;

	for (size_t i = 0; i < st->n_ops; i++)
		total += st->ops[i].seconds;
	printf("%-28s %8s %8s %8s %12s %7s\n", "op", "nodes", "reused", "fused", "time ms",
	       "share");
	for (size_t i = 0; i < st->n_ops; i++) {
		const struct rt_op_stat *o = &st->ops[i];
		char name[160];

		if (strcmp(o->domain, "ai.onnx"))
			snprintf(name, sizeof(name), "%s:%s", o->domain, o->op);
		else
			snprintf(name, sizeof(name), "%s", o->op);
		printf("%-28s %8zu %8zu %8zu %12.3f %6.1f%%\n", name, o->count, o->reused,
		       o->fused, o->seconds * 1e3, total > 0 ? 100 * o->seconds / total : 0.0);
	}
	if (st->n_nodes)
		printf("slowest nodes:\n%-40s %-20s %8s %12s %7s\n", "node", "op", "runs",
		       "time ms", "share");
	for (size_t i = 0; i < st->n_nodes && i < TOP_NODES; i++) {
		const struct rt_node_stat *n = &st->nodes[i];

		char name[48];

		if (n->node->name && *n->node->name)
			snprintf(name, sizeof(name), "%s", n->node->name);
		else
			snprintf(name, sizeof(name), "#%zu", n->node->index);
		printf("%-40s %-20s %8lld %12.3f %6.1f%%\n", name, n->node->op_type,
		       (long long)n->count, n->seconds * 1e3,
		       total > 0 ? 100 * n->seconds / total : 0.0);
	}
	printf("peak tensor memory: %lld bytes\n", (long long)st->peak_bytes);
	printf("weights used in place: %lld bytes\n", (long long)st->viewed_bytes);
	printf("constant results kept: %lld bytes of %zu nodes\n",
	       (long long)st->kept_bytes, st->kept_nodes);
	printf("results stored channels last: %lld\n", (long long)st->cl_values);
	printf("16-bit float results kept in float32: %lld\n", (long long)st->wide_values);
	printf("derived weights shared: %lld bytes, taken %zu times\n", (long long)st->shared_bytes,
	       st->shared_nodes);
}

static int write_profile(const struct run_args *a, struct rt_session *s)
{
	struct cli_out o;
	FILE *f = cli_out_open(&o, a->profile);
	char *text = f ? rt_profile_json(s) : NULL;
	int code = text ? CLI_EXIT_OK : CLI_EXIT_INTERNAL;

	if (text)
		fprintf(f, "%s\n", text);
	free(text);
	return f ? cli_out_close(&o, code) : code;
}

static int bind_inputs(const struct run_args *a, struct ir_model *m,
		       struct rt_session *s, struct rt_value **ins)
{
	struct rt_input_opts io = { a->seed, a->n_dims, a->dims, 0, NULL };
	char bad[4200];
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	if (a->data && (rc = rt_inputs_from_dir(s, a->data, ins, bad, sizeof(bad), &d)) < 0)
		goto fail;
	if ((rc = rt_inputs_from_files(s, a->inputs, a->n_inputs, ins, bad, sizeof(bad), &d)) < 0)
		goto fail;
	if ((rc = rt_inputs_random(s, m, &io, ins, &d)) < 0) {
		cli_error(a->model, "%s", d.msg);
		return cli_exit_code(rc);
	}
	return CLI_EXIT_OK;
fail:
	cli_error(bad[0] ? bad : a->model, "%s", d.msg);
	return rc == IR_EUSAGE ? CLI_EXIT_USAGE : cli_exit_code(rc);
}

static int run_model(const struct run_args *a, struct ir_model *m)
{
	struct rt_opts ro = { .threads = a->threads, .max_memory = a->max_memory,
			      .collect_stats = a->stats, .exact = a->exact,
			      .profile = a->profile != NULL };
	struct rt_session *s = NULL;
	struct rt_value **ins = NULL, **outs = NULL;
	double *times = NULL;
	size_t n_in = 0, n_out = 0;
	struct ir_diag d;
	int code = CLI_EXIT_INTERNAL, rc;

	ir_diag_init(&d);
	if ((rc = rt_session_new(m, &ro, &s, &d)) < 0) {
		cli_error(a->model, "%s", d.msg);
		return cli_exit_code(rc);
	}
	n_in = rt_session_n_inputs(s);
	n_out = rt_session_n_outputs(s);
	if (!(ins = calloc(n_in + 1, sizeof(*ins))) ||
	    !(outs = calloc(n_out + 1, sizeof(*outs))) ||
	    !(times = calloc(2 * (size_t)a->repeat, sizeof(*times))))
		goto cleanup;
	if ((code = bind_inputs(a, m, s, ins)) != CLI_EXIT_OK)
		goto cleanup;
	if (a->max_memory) {
		int64_t peak;
		size_t unknown;

		if ((rc = rt_session_plan_peak(s, ins, n_in, &peak, &unknown, &d)) < 0) {
			cli_error(a->model, "%s", d.msg);
			code = cli_exit_code(rc);
			goto cleanup;
		}
		if (peak > a->max_memory) {
			cli_error(a->model, "planned peak of live tensors is %lld bytes, above --max-memory %lld; not running",
				  (long long)peak, (long long)a->max_memory);
			code = CLI_EXIT_BAD_INPUT;
			goto cleanup;
		}
	}
	for (int r = 0; r < a->repeat; r++) {
		double t0 = now(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);

		rt_inputs_release(outs, n_out);
		if ((rc = rt_session_run(s, ins, n_in, outs, &d)) < 0) {
			cli_error(a->model, "%s", d.msg);
			code = rc == IR_ENOMEM && a->max_memory ? CLI_EXIT_BAD_INPUT :
			       cli_exit_code(rc);
			goto cleanup;
		}
		times[r] = now() - t0;
		times[a->repeat + r] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	}
	code = CLI_EXIT_OK;
	if (a->outdir)
		code = write_outputs(a, s, outs);
	else if (!a->check)
		for (size_t i = 0; i < n_out; i++)
			print_value(ir_s(rt_session_output(s, i)->value->name), outs[i], 0);
	if (code == CLI_EXIT_OK && a->check)
		code = check_outputs(a, s, outs);
	if (a->time) {
		print_times("time", times, a->repeat);
		print_times("cpu", times + a->repeat, a->repeat);
	}
	if (a->stats)
		print_stats(s);
	if (code == CLI_EXIT_OK && a->profile)
		code = write_profile(a, s);
cleanup:
	if (code == CLI_EXIT_INTERNAL && !d.status)
		cli_error(a->model, "out of memory");
	rt_inputs_release(ins, n_in);
	rt_inputs_release(outs, n_out);
	free(ins);
	free(outs);
	free(times);
	rt_session_free(s);
	return code;
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = { .rtol = RT_CMP_RTOL, .atol = RT_CMP_ATOL, .repeat = 1 };
	struct ir_model *m = NULL;
	int code;

	if ((code = parse_args(argc, argv, &a)) != CLI_EXIT_OK)
		goto cleanup;
	if ((code = cli_load(a.model, &m)) != CLI_EXIT_OK)
		goto cleanup;
	code = run_model(&a, m);
cleanup:
	ir_model_free(m);
	free(a.dims);
	return cli_finish(code);
}
