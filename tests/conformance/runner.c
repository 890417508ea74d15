/* runner.c: the interpreter's conformance run over Debian's
 * libonnx-testdata backend cases (node, pytorch-converted,
 * pytorch-operator, simple): every test_data_set_N of each case is run
 * with its input_K.pb and compared with its output_K.pb by the rule of
 * `opmig run --check` (|a-b| <= atol + rtol*|b|, rtol 1e-3, atol 1e-7,
 * NaN equals NaN).  Each case runs in a forked child (a crash or a hang
 * fails that case alone).  Failures must be exactly the cases listed in
 * tests/conformance/expected_failures.txt: an unlisted failure and a listed
 * case that passes both make the run fail, so the list can only shrink.
 *
 * usage: conformance [--data DIR] [--expected FILE] [--filter SUBSTR]
 *                    [--jobs N] [--timeout SEC] [--dump FILE] [-v]
 * The last line is "N passed, M failed, K skipped". */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ir/ir.h"
#include "validators/compare.h"
#include "runtime/runtime.h"
#include "runtime/tensor_io.h"

#define MAX_IO 64

static const char *const categories[] = {
	"node", "pytorch-converted", "pytorch-operator", "simple"
};

enum verdict { PASS, FAIL, SKIP };

struct item {
	char name[200];          /* "node/test_abs" */
	char dir[600];
	enum verdict v;
	char why[400];
	double seconds;
	int listed;
};

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entries of dir matching prefix (malloc'd strings). */
static size_t list_dir(const char *dir, const char *prefix, char ***out)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	if (!dp)
		return 0;
	while ((e = readdir(dp))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		if (n == cap) {
			char **q = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));

			if (!q)
				break;
			v = q;
		}
		if (!(v[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(dp);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*out = v;
	return n;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* onnx 1.12 writes bfloat16 test tensors as uint16 tensors holding the
 * bfloat16 bits (numpy has no bfloat16): read them as what they hold
 * when the model declares bfloat16 there (both are 16-bit words here). */
static void bf16_words(struct rt_value *v, const struct ir_type *t)
{
	if (v && t && t->kind == IR_TYPE_TENSOR && t->elem_type == IR_DTYPE_BFLOAT16 &&
	    v->kind == RT_TENSOR && v->dtype == IR_DTYPE_UINT16)
		v->dtype = IR_DTYPE_BFLOAT16;
}

/* Run one data set; writes the reason of a failure into why. */
static int run_set(struct rt_session *s, const char *set, char *why, size_t size)
{
	struct rt_value *in[MAX_IO] = { 0 }, *out[MAX_IO] = { 0 }, *want = NULL;
	size_t n_in = rt_session_n_inputs(s), n_out = rt_session_n_outputs(s), k;
	struct rt_cmp_opts o = { RT_CMP_RTOL, RT_CMP_ATOL };
	struct ir_diag d;
	char path[800];
	int rc = -1;

	ir_diag_init(&d);
	if (n_in > MAX_IO || n_out > MAX_IO) {
		snprintf(why, size, "too many inputs or outputs");
		return -1;
	}
	for (k = 0; k < n_in; k++) {
		snprintf(path, sizeof(path), "%s/input_%zu.pb", set, k);
		if (!is_file(path))
			break;
		if (rt_value_read_file(NULL, path, rt_session_input(s, k)->type,
				       &in[k], &d) < 0) {
			snprintf(why, size, "input_%zu.pb: %.300s", k, d.msg);
			goto cleanup;
		}
		bf16_words(in[k], rt_session_input(s, k)->type);
	}
	if (rt_session_run(s, in, k, out, &d) < 0) {
		snprintf(why, size, "%.370s", d.msg);
		goto cleanup;
	}
	for (k = 0; k < n_out; k++) {
		struct rt_metrics m;

		snprintf(path, sizeof(path), "%s/output_%zu.pb", set, k);
		if (rt_value_read_file(NULL, path, rt_session_output(s, k)->type,
				       &want, &d) < 0) {
			snprintf(why, size, "output_%zu.pb: %.300s", k, d.msg);
			goto cleanup;
		}
		bf16_words(want, rt_session_output(s, k)->type);
		rt_compare(out[k], want, &o, &m);
		rt_value_unref(want);
		want = NULL;
		if (!m.ok) {
			snprintf(why, size, "output %zu ('%s'): %s", k,
				 ir_s(rt_session_output(s, k)->value->name), m.why);
			goto cleanup;
		}
	}
	rc = 0;
cleanup:
	for (k = 0; k < MAX_IO; k++) {
		rt_value_unref(in[k]);
		rt_value_unref(out[k]);
	}
	return rc;
}

/* The whole case, in the child: 0 pass, 1 fail (why written to fd). */
static int run_case(const char *dir, int fd)
{
	char path[700], why[400] = "", **sets;
	struct ir_model *m = NULL;
	struct rt_session *s = NULL;
	struct rt_opts o = { .threads = 1 };
	struct ir_diag d;
	size_t n;
	int rc = 1;

	ir_diag_init(&d);
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	n = list_dir(dir, "test_data_set_", &sets);
	if (ir_model_load(path, NULL, &m, &d) < 0) {
		snprintf(why, sizeof(why), "load: %.380s", d.msg);
		goto cleanup;
	}
	if (rt_session_new(m, &o, &s, &d) < 0) {
		snprintf(why, sizeof(why), "%.390s", d.msg);
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		char set[700], w[380];

		snprintf(set, sizeof(set), "%s/%s", dir, sets[i]);
		if (run_set(s, set, w, sizeof(w)) < 0) {
			snprintf(why, sizeof(why), "%s: %s", sets[i], w);
			goto cleanup;
		}
	}
	rc = 0;
cleanup:
	if (rc && write(fd, why, strlen(why)) < 0)
		rc = 1;
	free_list(sets, n);
	rt_session_free(s);
	ir_model_free(m);
	return rc;
}

struct job {
	pid_t pid;
	int fd;
	struct item *it;
	double start;
	int killed;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int start(struct job *j, struct item *it)
{
	int p[2];

	if (pipe(p) != 0)
		return -1;
	j->it = it;
	j->start = now();
	j->killed = 0;
	j->pid = fork();
	if (j->pid < 0)
		return -1;
	if (j->pid == 0) {
		close(p[0]);
		exit(run_case(it->dir, p[1]));  /* exit: LeakSanitizer checks */
	}
	close(p[1]);
	j->fd = p[0];
	return 0;
}

static void finish(struct job *j, int status)
{
	struct item *it = j->it;
	ssize_t r = read(j->fd, it->why, sizeof(it->why) - 1);

	it->why[r > 0 ? r : 0] = 0;
	close(j->fd);
	it->seconds = now() - j->start;
	if (j->killed) {
		it->v = FAIL;
		snprintf(it->why, sizeof(it->why), "timed out");
	} else if (WIFSIGNALED(status)) {
		it->v = FAIL;
		snprintf(it->why, sizeof(it->why), "crashed (signal %d)", WTERMSIG(status));
	} else {
		it->v = WEXITSTATUS(status) == 0 ? PASS : FAIL;
		if (it->v == FAIL && !it->why[0])
			snprintf(it->why, sizeof(it->why), "failed (exit %d)", WEXITSTATUS(status));
	}
	for (char *c = it->why; *c; c++)
		if (*c == '\n' || *c == '\t')
			*c = ' ';
}

/* Global so that a forked child exiting inside run_all still reaches it
 * (LeakSanitizer runs at the child's exit). */
static struct job *js;

static void run_all(struct item *items, size_t n, int jobs, double timeout)
{
	size_t next = 0, active = 0;

	if (!(js = calloc((size_t)jobs, sizeof(*js))))
		exit(4);
	while (next < n || active) {
		int status;
		pid_t pid;

		for (int j = 0; j < jobs && next < n; j++) {
			if (js[j].pid)
				continue;
			while (next < n && items[next].v == SKIP)
				next++;
			if (next >= n)
				break;
			if (start(&js[j], &items[next++]) < 0) {
				perror("conformance: fork");
				exit(4);
			}
			active++;
		}
		if (!active)
			break;
		pid = waitpid(-1, &status, WNOHANG);
		if (pid <= 0) {
			for (int j = 0; j < jobs; j++)
				if (js[j].pid && !js[j].killed &&
				    now() - js[j].start > timeout) {
					kill(js[j].pid, SIGKILL);
					js[j].killed = 1;
				}
			usleep(2000);
			continue;
		}
		for (int j = 0; j < jobs; j++)
			if (js[j].pid == pid) {
				finish(&js[j], status);
				js[j].pid = 0;
				active--;
			}
	}
	free(js);
	js = NULL;
}

/* Read "category/case  reason" lines; returns the names (malloc'd). */
static size_t read_expected(const char *path, char ***out)
{
	FILE *f = fopen(path, "r");
	char line[1024], **v = NULL;
	size_t n = 0;

	*out = NULL;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *e;

		while (*p == ' ')
			p++;
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		e = p + strcspn(p, " \t\n");
		*e = 0;
		v = realloc(v, (n + 1) * sizeof(*v));
		if (!v || !(v[n] = strdup(p)))
			exit(4);
		n++;
	}
	fclose(f);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*out = v;
	return n;
}

int main(int argc, char **argv)
{
	const char *data = "/usr/share/libonnx-testdata/data";
	const char *expected = "tests/conformance/expected_failures.txt";
	const char *filter = NULL, *dump = NULL;
	int jobs = 2, verbose = 0, bad = 0;
	double timeout = 120;
	static struct item *items;
	size_t n = 0, n_exp, pass = 0, failed = 0, skipped = 0;
	char **exp;
	FILE *df = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
		else if (!strcmp(argv[i], "--expected") && i + 1 < argc) expected = argv[++i];
		else if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
		else if (!strcmp(argv[i], "--dump") && i + 1 < argc) dump = argv[++i];
		else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) jobs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout = atof(argv[++i]);
		else if (!strcmp(argv[i], "-v")) verbose = 1;
		else {
			fprintf(stderr, "usage: conformance [--data DIR] [--expected FILE] [--filter SUBSTR] [--jobs N] [--timeout SEC] [--dump FILE] [-v]\n");
			return 2;
		}
	}
	if (jobs < 1)
		jobs = 1;
	if (!is_dir(data)) {
		fprintf(stderr, "conformance: %s: no backend test data (install libonnx-testdata: make deps)\n", data);
		return 3;
	}
	for (size_t c = 0; c < sizeof(categories) / sizeof(categories[0]); c++) {
		char dir[512], **cases;
		size_t nc;

		snprintf(dir, sizeof(dir), "%s/%s", data, categories[c]);
		nc = list_dir(dir, "test_", &cases);
		for (size_t i = 0; i < nc; i++) {
			struct item *it;
			char model[900], **sets;
			size_t ns;

			if (filter && !strstr(cases[i], filter))
				continue;
			if (!(items = realloc(items, (n + 1) * sizeof(*items))))
				return 4;
			it = &items[n++];
			memset(it, 0, sizeof(*it));
			snprintf(it->name, sizeof(it->name), "%s/%s", categories[c], cases[i]);
			snprintf(it->dir, sizeof(it->dir), "%s/%s", dir, cases[i]);
			snprintf(model, sizeof(model), "%s/model.onnx", it->dir);
			ns = list_dir(it->dir, "test_data_set_", &sets);
			free_list(sets, ns);
			if (!is_file(model) || !ns) {
				it->v = SKIP;
				snprintf(it->why, sizeof(it->why), "no model or no data set");
			}
		}
		free_list(cases, nc);
	}
	run_all(items, n, jobs, timeout);
	n_exp = read_expected(expected, &exp);
	if (dump && !(df = fopen(dump, "w"))) {
		perror(dump);
		return 4;
	}
	for (size_t i = 0; i < n; i++) {
		struct item *it = &items[i];
		int listed = n_exp && bsearch(&(const char *){ it->name }, exp, n_exp,
					      sizeof(*exp), cmp_str) != NULL;

		if (it->v == SKIP) {
			skipped++;
			continue;
		}
		if (it->v == PASS) {
			pass++;
			if (listed) {
				bad = 1;
				printf("UNEXPECTED PASS %s (remove it from %s)\n", it->name, expected);
			}
			continue;
		}
		failed++;
		if (df)
			fprintf(df, "%s  %s\n", it->name, it->why);
		if (!listed) {
			bad = 1;
			printf("FAIL %s: %s\n", it->name, it->why);
		} else if (verbose) {
			printf("expected failure %s: %s\n", it->name, it->why);
		}
	}
	if (df)
		fclose(df);
	free_list(exp, n_exp);
	free(items);
	printf("%zu passed, %zu failed, %zu skipped\n", pass, failed, skipped);
	return bad;
}
