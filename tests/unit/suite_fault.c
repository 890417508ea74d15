/* suite_fault.c: allocation fault injection over the whole pipeline: load,
 * verify, infer, scan, migrate (without and with validation) and save of
 * real models, and over the rules loader, failing the N-th allocation for
 * N = 1, 2, ... (fault.c).  Each run must fail cleanly with IR_ENOMEM and a
 * message, or, when the failed allocation was optional, write exactly the
 * bytes of a run without faults.  Whole commands (cli/) likewise exit 4
 * having printed nothing on stdout, or print what a run without faults
 * prints.  Under ASan, LeakSanitizer checks every 32 runs that nothing
 * leaked.  Release builds try every N, ASan builds every
 * few (BUDGET); OPMIG_FAULT_STRIDE=K tries every K-th N.  To debug a
 * finding: OPMIG_FAULT_TRACE=1 prints the backtrace of each failed
 * allocation (fault.c), OPMIG_FAULT_KEEP=1 keeps an output that differs as
 * /tmp/opmig-fault-N.onnx; UNIT_SUITE=fault runs only this suite. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "ir/infer.h"
#include "ir/ir.h"
#include "oprules/rules.h"
#include "rewriters/migrate.h"
#include "scanner/scan.h"
#include "tests/unit/fault.h"
#include "tests/unit/suites.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() __lsan_do_recoverable_leak_check()
#else
#define LEAK_CHECK() 0
#endif

/* Runs per test by default: every N in the release build, every few
 * under ASan, which is slower (OPMIG_FAULT_STRIDE=1: every N anyway). */
#ifdef __SANITIZE_ADDRESS__
#define BUDGET 500
#else
#define BUDGET 4000
#endif

static struct rules_db db;
static const struct rules_target *target;
static const char *stage;      /* of the pipeline, for messages */

static int validate;           /* migrate validates against a second load */

static int pipeline(const char *path, const char *out, struct ir_diag *d)
{
	struct ir_model *m = NULL, *orig = NULL;
	struct ir_infer inf;
	struct scan_result sr = { 0 };
	struct mg_report r = { 0 };
	struct mg_opts o = { .target = target, .batch = 1, .samples = 1,
			     .threads = 1 };
	struct ir_save_opts so = { NULL, 1024 };
	int rc;

	ir_infer_init(&inf);
	if ((stage = "load", rc = ir_model_parse(path, NULL, &m, d)) < 0 ||
	    (stage = "verify", rc = ir_model_verify(m, d)) < 0 ||
	    (stage = "infer", rc = ir_infer_model(m, &inf, d)) < 0 ||
	    (stage = "scan", rc = scan_model(m, path, &target, 1, NULL, &sr, d)) < 0)
		goto cleanup;
	ir_infer_release(&inf);
	scan_result_release(&sr);
	o.validate = validate;
	if (validate && (stage = "load", rc = ir_model_load(path, NULL, &orig, d)) < 0)
		goto cleanup;
	if ((stage = "migrate", rc = mg_run(m, orig, path, &o, &r, d)) < 0 ||
	    (stage = "save", rc = ir_model_save(m, out, &so, d)) < 0)
		goto cleanup;
cleanup:
	mg_report_release(&r);
	scan_result_release(&sr);
	ir_infer_release(&inf);
	ir_model_free(m);
	ir_model_free(orig);
	return rc;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
	    fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	*len = buf ? (size_t)n : 0;
	fclose(f);
	return buf;
}

static void run_faults(const char *model)
{
	char out[64], tmpl[] = "/tmp/opmig-fault-XXXXXX";
	char *dir = mkdtemp(tmpl), *want, *got;
	size_t want_len, got_len;
	long total, stride = 0, runs = 0, oom = 0, same = 0, bad = 0;
	const char *env = getenv("OPMIG_FAULT_STRIDE");
	struct ir_diag d;

	CU_ASSERT_FATAL(dir != NULL);
	CU_ASSERT_FATAL(target != NULL);
	snprintf(out, sizeof(out), "%s/out.onnx", dir);
	/* the reference run, counting allocations */
	ir_diag_init(&d);
	fault_fail_at(1L << 60);
	CU_ASSERT_FATAL(pipeline(model, out, &d) == 0);
	total = fault_calls();
	fault_fail_at(0);
	want = slurp(out, &want_len);
	CU_ASSERT_FATAL(want != NULL);
	unlink(out);
	if (env)
		stride = atol(env);
	if (stride < 1)
		stride = total > BUDGET ? (total + BUDGET - 1) / BUDGET : 1;
	for (long n = 1; n <= total; n += stride) {
		int rc;

		ir_diag_init(&d);
		fault_fail_at(n);
		rc = pipeline(model, out, &d);
		fault_fail_at(0);
		runs++;
		if (rc < 0) {
			oom++;
			if (rc != IR_ENOMEM || !d.msg[0]) {
				bad++;
				fprintf(stderr, "\n%s: allocation %ld failed in %s: status %d, '%s'\n",
					model, n, stage, rc, d.msg);
			}
			if (access(out, F_OK) == 0) {
				bad++;
				fprintf(stderr, "\n%s: allocation %ld failed: %s written anyway\n",
					model, n, out);
			}
		} else if ((got = slurp(out, &got_len)) &&
			   got_len == want_len && !memcmp(got, want, want_len)) {
			same++;
			free(got);
		} else {
			bad++;
			fprintf(stderr, "\n%s: allocation %ld failed: no error, but the output differs\n",
				model, n);
			if (getenv("OPMIG_FAULT_KEEP")) {
				char keep[128];

				snprintf(keep, sizeof(keep), "/tmp/opmig-fault-%ld.onnx", n);
				rename(out, keep);
			}
			free(got);
		}
		unlink(out);
		/* a leak check costs more than a run: one per 32 runs, and
		 * leaks stay reported, so stop at the first */
		if ((runs % 32 == 0 || n + stride > total) && LEAK_CHECK()) {
			bad += 100;
			fprintf(stderr, "\n%s: a run failing allocation %ld or one of the 31 before leaked (above)\n",
				model, n);
		}
		if (bad > 20)
			break;
	}
	printf("\n  %s: %ld allocations, %ld runs: %ld failed cleanly, %ld recovered, %ld bad\n",
	       model, total, runs, oom, same, bad);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(oom > 0);
	free(want);
	rmdir(dir);
}

static void test_sample(void)
{
	run_faults(TESTDATA("sample.onnx"));
}

/* migrate with validation: both models run in the interpreter */
static void test_sample_validated(void)
{
	validate = 1;
	run_faults(TESTDATA("sample.onnx"));
	validate = 0;
}

/* the rules loader (its own allocations; cJSON's are not counted) */
static int load_rules(long n, struct ir_diag *d)
{
	struct rules_db x;
	int rc;

	rules_db_init(&x);
	fault_fail_at(n);
	rc = rules_load_dir("oprules", &x, d);
	fault_fail_at(0);
	rules_db_release(&x);
	return rc;
}

static void test_rules(void)
{
	const char *env = getenv("OPMIG_FAULT_STRIDE");
	long n, fails = 0, total, stride = env ? atol(env) : 0;
	struct ir_diag d;
	int rc = -1;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(load_rules(1L << 60, &d) == 0);
	total = fault_calls();
	if (stride < 1)
		stride = total > BUDGET ? (total + BUDGET - 1) / BUDGET : 1;
	for (n = 1; n <= total; n += stride) {
		ir_diag_init(&d);
		if ((rc = load_rules(n, &d)) < 0) {
			fails++;
			if (rc != IR_ENOMEM || !d.msg[0])
				fprintf(stderr, "\nrules: allocation %ld failed: status %d, '%s'\n",
					n, rc, d.msg);
			CU_ASSERT_EQUAL(rc, IR_ENOMEM);
		}
		if (((n / stride) % 32 == 0 || n + stride > total) && LEAK_CHECK()) {
			fprintf(stderr, "\nrules: a run failing allocation %ld or one of the 31 before leaked (above)\n", n);
			CU_FAIL("leak");
			break;
		}
	}
	printf("\n  oprules: %ld allocations, %ld runs failed cleanly\n", total, fails);
	CU_ASSERT(fails > 0);
}

/* Run a command with stdout on the file of fd, emptied first, failing
 * allocation n; the exit code, and in *len how many bytes it printed. */
static int run_cmd(int (*cmd)(int, char **), int argc, char **argv, int fd,
		   long n, long *len)
{
	int rc;

	fflush(stdout);
	if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
		return -1;
	fault_fail_at(n);
	rc = cmd(argc, argv);
	fault_fail_at(0);
	fflush(stdout);
	*len = lseek(fd, 0, SEEK_CUR);
	return rc;
}

/* Whole commands (cli/cmd_*.c) with their reports; cJSON allocates
 * through the counted malloc too.  Each run exits as without faults and
 * prints the same bytes on stdout, or exits 4 having printed nothing: a
 * report is written whole or not at all (oprules/jbuild.h), never one
 * with fields silently missing or cut short. */
static void cli_faults(int (*cmd)(int, char **), const char *const *args)
{
	const char *env = getenv("OPMIG_FAULT_STRIDE");
	char *argv[16], out[] = "/tmp/opmig-fault-out-XXXXXX", *want_out, *got;
	char what[200] = "";
	int argc = 0, want, rc, saved = dup(1), saved_err = dup(2);
	int null = open("/dev/null", O_WRONLY), fd = mkstemp(out);
	long total, stride = env ? atol(env) : 0, runs = 0, oom = 0, same = 0;
	long bad = 0, len;
	size_t want_len, got_len;
	cJSON_Hooks hooks = { malloc, free };

	CU_ASSERT_FATAL(saved >= 0 && saved_err >= 0 && null >= 0 && fd >= 0);
	cJSON_InitHooks(&hooks);
	for (; args[argc]; argc++) {
		argv[argc] = (char *)args[argc];
		snprintf(what + strlen(what), sizeof(what) - strlen(what), "%s%s",
			 argc ? " " : "", args[argc]);
	}
	argv[argc] = NULL;
	fflush(stdout);
	dup2(fd, 1);
	dup2(null, 2);
	want = run_cmd(cmd, argc, argv, fd, 1L << 60, &len);
	total = fault_calls();
	want_out = slurp(out, &want_len);
	if (!want_out || want < 0) {
		bad += 100;
		dprintf(saved_err, "\n%s: cannot capture stdout in %s\n", what, out);
	}
	if (stride < 1)
		stride = total > BUDGET / 2 ? (total + BUDGET / 2 - 1) / (BUDGET / 2) : 1;
	for (long n = 1; n <= total && want_out; n += stride) {
		rc = run_cmd(cmd, argc, argv, fd, n, &len);
		runs++;
		if (rc != want && rc != CLI_EXIT_INTERNAL) {
			bad++;
			dprintf(saved_err, "\n%s: allocation %ld failed: exit %d\n", what, n, rc);
		} else if (rc != want) {
			oom++;
			if (len != 0) {
				bad++;
				dprintf(saved_err, "\n%s: allocation %ld failed: exit 4, but %ld bytes on stdout\n",
					what, n, len);
			}
		} else if ((got = slurp(out, &got_len)) && got_len == want_len &&
			   !memcmp(got, want_out, want_len)) {
			same++;
			free(got);
		} else {
			bad++;
			dprintf(saved_err, "\n%s: allocation %ld failed: exit %d, but stdout differs (%zu bytes, %zu without faults)\n",
				what, n, rc, got_len, want_len);
			free(got);
		}
		if ((runs % 32 == 0 || n + stride > total) && LEAK_CHECK()) {
			bad += 100;
			dprintf(saved_err, "\n%s: a run failing allocation %ld or one of the 31 before leaked\n",
				what, n);
		}
		if (bad > 20)
			break;
	}
	dup2(saved, 1);
	dup2(saved_err, 2);
	close(saved);
	close(saved_err);
	close(null);
	close(fd);
	unlink(out);
	free(want_out);
	cJSON_InitHooks(NULL);
	printf("\n  opmig %s: %ld allocations, %ld runs: %ld exit 4, %ld recovered, %ld bad\n",
	       what, total, runs, oom, same, bad);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(oom > 0);
}

static void test_cli(void)
{
	static const char *const convert[] = { "convert", "testdata/sample.onnx",
		"/tmp/opmig-fault-cli.onnx", "--external-data", "opmig-fault-cli.data",
		"--size-threshold", "64", NULL };
	static const char *const scan[] = { "scan", "testdata/sample.onnx",
		"--target", "generic-npu,tensorrt", "--format", "json", NULL };
	static const char *const migrate[] = { "migrate", "testdata/sample.onnx",
		"--batch", "1", "--format", "json", "-o", "/tmp/opmig-fault-cli-m.onnx", NULL };
	static const char *const inspect[] = { "inspect", "testdata/models/loop_scan.onnx",
		"--json", "--shapes", NULL };

	cli_faults(cmd_convert, convert);
	cli_faults(cmd_scan, scan);
	cli_faults(cmd_migrate, migrate);
	cli_faults(cmd_inspect, inspect);
	unlink("/tmp/opmig-fault-cli.onnx");
	unlink("/tmp/opmig-fault-cli.data");
	unlink("/tmp/opmig-fault-cli-m.onnx");
}

/* The other JSON reports: inspect without --shapes (models with symbolic
 * dims and with external data), the listings, a target's rules and
 * validate's comparison (one thread: allocations in a fixed order). */
static void test_cli_json(void)
{
	static const char *const inspect[] = { "inspect", "testdata/models/symbolic.onnx",
		"--json", NULL };
	static const char *const inspect_ext[] = { "inspect", "testdata/ext/model.onnx",
		"--json", NULL };
	static const char *const targets[] = { "targets", "--json", NULL };
	static const char *const op[] = { "ops", "Conv", "--json", NULL };
	static const char *const ops[] = { "ops", "--domain", "ai.onnx.ml", "--json", NULL };
	static const char *const rules[] = { "rules", "show", "generic-npu", "--json", NULL };
	static const char *const compare[] = { "validate", "testdata/sample.onnx",
		"testdata/sample.onnx", "--format", "json", "--threads", "1", NULL };

	cli_faults(cmd_inspect, inspect);
	cli_faults(cmd_inspect, inspect_ext);
	cli_faults(cmd_targets, targets);
	cli_faults(cmd_ops, op);
	cli_faults(cmd_ops, ops);
	cli_faults(cmd_rules, rules);
	cli_faults(cmd_validate, compare);
}

static void test_loop_scan(void)
{
	run_faults(TESTDATA("models/loop_scan.onnx"));
}

static void test_functions(void)
{
	run_faults(TESTDATA("models/functions.onnx"));
}

static int setup(void)
{
	struct ir_diag d;

	ir_diag_init(&d);
	rules_db_init(&db);
	if (rules_load_dir("oprules", &db, &d) < 0)
		return -1;
	target = rules_db_find(&db, "generic-npu");
	return 0;
}

static const struct unit_test tests[] = {
	{ "pipeline of sample.onnx under allocation failures", test_sample },
	{ "pipeline of sample.onnx, validated, under allocation failures", test_sample_validated },
	{ "rules loader under allocation failures", test_rules },
	{ "convert, scan, migrate and inspect under allocation failures", test_cli },
	{ "the JSON reports of inspect, targets, ops, rules and validate under allocation failures", test_cli_json },
	{ "pipeline of loop_scan.onnx under allocation failures", test_loop_scan },
	{ "pipeline of functions.onnx under allocation failures", test_functions },
	{ NULL, NULL }
};

int suite_fault_register(void)
{
	if (setup() < 0)
		return -1;
	return unit_add_suite("fault", tests);
}
