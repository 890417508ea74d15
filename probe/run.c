/* run.c: a probe from plan to verdicts, in two rounds of batch's worker
 * pool: generating each case (its model built and run in the interpreter
 * in a worker of its own, so a variant the interpreter chokes on is a
 * dropped case), then running the runtime command on each valid case in
 * a process group of its own under --timeout, classifying how it ended
 * and comparing its outputs with the reference.  Every case keeps
 * CASE/result.json (keyed by the command and the case's files), so that
 * --resume runs only what an interrupted probe had not finished. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batch/batch.h"
#include "probe/probe_int.h"
#include "runtime/tensor_io.h"

/* Exit status of a generating worker whose variant makes no valid model. */
#define GEN_INVALID 3

struct pctx {
	const struct probe_opts *o;
	struct probe_plan *p;
	size_t *todo;              /* run round: case indices */
	size_t n_todo;
	struct probe_progress prog;
	double t0;
	char *runtime;
	const char *phase;
};

static void case_dir(const struct pctx *x, const struct probe_case *c, char *buf, size_t size)
{
	snprintf(buf, size, "%s/cases/%s", x->o->workdir, c->id);
}

static void progress(struct pctx *x, const struct probe_case *c)
{
	if (!x->o->progress)
		return;
	x->prog.phase = x->phase;
	x->prog.elapsed = batch_now() - x->t0;
	x->prog.c = c;
	x->o->progress(x->o->ctx, &x->prog);
}

static void tick(void *ctx)
{
	progress(ctx, NULL);
}

/* ---- small files ---------------------------------------------------- */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;
	size_t got;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || n > (1 << 20) ||
	    fseek(f, 0, SEEK_SET) < 0 || !(buf = malloc((size_t)n + 1))) {
		fclose(f);
		return NULL;
	}
	got = fread(buf, 1, (size_t)n, f);
	buf[got] = 0;
	fclose(f);
	return buf;
}

/* The key of what generated a case: its id, opset, seed and the
 * generation seed. */
static uint64_t gen_key(const struct pctx *x, const struct probe_case *c)
{
	uint64_t h = BATCH_HASH_INIT;
	const struct probe_spec *sp = c->seed >= 0 ? x->p->seeds[c->seed] : NULL;

	h = batch_hash(h, c->id, strlen(c->id) + 1);
	h = batch_hash(h, &c->opset, sizeof(c->opset));
	h = batch_hash(h, &x->o->seed, sizeof(x->o->seed));
	if (sp)
		h = batch_hash(h, sp->name, strlen(sp->name) + 1);
	return h;
}

/* The key of a verdict: the command and the case's model. */
static uint64_t run_key(const struct pctx *x, const struct probe_case *c)
{
	char path[4300];
	uint64_t h = BATCH_HASH_INIT, f = 0;

	case_dir(x, c, path, sizeof(path));
	strcat(path, "/model.onnx");
	h = batch_hash(h, x->o->command, strlen(x->o->command) + 1);
	h = batch_hash(h, &x->o->accept_only, sizeof(x->o->accept_only));
	if (batch_hash_file(path, &f) == 0)
		h = batch_hash(h, &f, sizeof(f));
	return batch_hash(h, c->id, strlen(c->id));
}

static int key_write(const char *path, uint64_t key, struct ir_diag *d)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%016" PRIx64 "\n", key);
	return ir_file_write_atomic(path, buf, strlen(buf), d);
}

static int key_matches(const char *path, uint64_t key)
{
	char *text = slurp(path), want[32];
	int ok;

	if (!text)
		return 0;
	snprintf(want, sizeof(want), "%016" PRIx64 "\n", key);
	ok = !strcmp(text, want);
	free(text);
	return ok;
}

/* ---- round 1: generate ---------------------------------------------- */

static int gen_before(void *ctx, size_t i, struct ir_diag *d)
{
	struct pctx *x = ctx;
	struct probe_case *c = &x->p->cases[i];
	char dir[4200], path[4300];

	(void)d;
	case_dir(x, c, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/gen.key", dir);
	if (x->o->resume && key_matches(path, gen_key(x, c)) && probe_case_read(dir, c) == 0) {
		x->prog.done++;
		progress(x, c);
		return 1;
	}
	probe_rm_tree(dir);
	return 0;
}

static int gen_child(void *ctx, size_t i)
{
	struct pctx *x = ctx;
	struct probe_case *c = &x->p->cases[i];
	struct probe_built b;
	struct ir_diag d;
	char dir[4200], path[4300];
	int rc;

	ir_diag_init(&d);
	case_dir(x, c, dir, sizeof(dir));
	rc = probe_build(c, x->p->seeds[c->seed], x->o->seed, &b, &d);
	if (rc == 0)
		rc = probe_case_write(dir, c, &b, &d);
	probe_built_release(&b);
	if (rc == IR_EINVAL) {
		/* why, for the report; the folder holds nothing else */
		probe_rm_tree(dir);
		if (mkdir(dir, 0777) == 0) {
			struct ir_diag w;

			ir_diag_init(&w);
			snprintf(path, sizeof(path), "%s/invalid.txt", dir);
			ir_file_write_atomic(path, d.msg, strlen(d.msg), &w);
		}
		return GEN_INVALID;
	}
	if (rc < 0)
		return 4;
	snprintf(path, sizeof(path), "%s/gen.key", dir);
	return key_write(path, gen_key(x, c), &d) < 0 ? 4 : 0;
}

static int gen_done(void *ctx, size_t i, int status, int timed_out, double secs,
		    struct ir_diag *d)
{
	struct pctx *x = ctx;
	struct probe_case *c = &x->p->cases[i];
	char dir[4200], path[4300], *why;

	(void)secs;
	case_dir(x, c, dir, sizeof(dir));
	x->prog.done++;
	if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0 && probe_case_read(dir, c) == 0) {
		progress(x, c);
		return 0;
	}
	c->verdict = PROBE_INVALID;
	snprintf(path, sizeof(path), "%s/invalid.txt", dir);
	why = WIFEXITED(status) && WEXITSTATUS(status) == GEN_INVALID ? slurp(path) : NULL;
	if (why) {
		c->message = why;
	} else {
		char buf[200];

		snprintf(buf, sizeof(buf), "generating the case failed (%s)",
			 timed_out ? "timed out" : WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) :
			 "internal error");
		if (!(c->message = strdup(buf)))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	x->prog.counts[PROBE_INVALID]++;
	progress(x, c);
	return 0;
}

/* ---- round 2: run the runtime --------------------------------------- */

static int result_write(const char *dir, const struct probe_case *c, const char *runtime,
			uint64_t key, struct ir_diag *d)
{
	cJSON *o = cJSON_CreateObject();
	char path[4300], k[32], *text;
	int rc;

	snprintf(k, sizeof(k), "%016" PRIx64, key);
	if (!o || !cJSON_AddStringToObject(o, "key", k) ||
	    !cJSON_AddStringToObject(o, "verdict", probe_verdict_name(c->verdict)) ||
	    !cJSON_AddStringToObject(o, "message", c->message ? c->message : "") ||
	    !cJSON_AddNumberToObject(o, "max_abs", c->max_abs) ||
	    !cJSON_AddNumberToObject(o, "seconds", c->seconds) ||
	    (runtime && !cJSON_AddStringToObject(o, "runtime", runtime)) ||
	    !(text = cJSON_Print(o))) {
		cJSON_Delete(o);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	cJSON_Delete(o);
	snprintf(path, sizeof(path), "%s/result.json", dir);
	rc = ir_file_write_atomic(path, text, strlen(text), d);
	free(text);
	return rc;
}

/* A result of an earlier run with this key: 0, else -1. */
static int result_read(struct pctx *x, const char *dir, struct probe_case *c, uint64_t key)
{
	char path[4300], k[32], *text;
	cJSON *o, *v;
	int rc = -1, vd;

	snprintf(path, sizeof(path), "%s/result.json", dir);
	if (!(text = slurp(path)))
		return -1;
	o = cJSON_Parse(text);
	free(text);
	snprintf(k, sizeof(k), "%016" PRIx64, key);
	v = cJSON_GetObjectItemCaseSensitive(o, "key");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, k))
		goto cleanup;
	v = cJSON_GetObjectItemCaseSensitive(o, "verdict");
	if (!cJSON_IsString(v) || (vd = probe_verdict_parse(v->valuestring)) < PROBE_EQUAL)
		goto cleanup;
	c->verdict = vd;
	v = cJSON_GetObjectItemCaseSensitive(o, "message");
	free(c->message);
	c->message = cJSON_IsString(v) && *v->valuestring ? strdup(v->valuestring) : NULL;
	v = cJSON_GetObjectItemCaseSensitive(o, "max_abs");
	c->max_abs = cJSON_IsNumber(v) ? v->valuedouble : -1;
	v = cJSON_GetObjectItemCaseSensitive(o, "seconds");
	c->seconds = cJSON_IsNumber(v) ? v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(o, "runtime");
	if (cJSON_IsString(v) && !x->runtime)
		x->runtime = strdup(v->valuestring);
	rc = 0;
cleanup:
	cJSON_Delete(o);
	return rc;
}

static int run_before(void *ctx, size_t i, struct ir_diag *d)
{
	struct pctx *x = ctx;
	struct probe_case *c = &x->p->cases[x->todo[i]];
	char dir[4200], out[4300];

	case_dir(x, c, dir, sizeof(dir));
	if (x->o->resume && result_read(x, dir, c, run_key(x, c)) == 0) {
		c->kept = 1;
		x->prog.done++;
		x->prog.counts[c->verdict]++;
		progress(x, c);
		return 1;
	}
	snprintf(out, sizeof(out), "%s/out", dir);
	probe_rm_tree(out);
	if (mkdir(out, 0777) < 0)
		return ir_diag_error(d, IR_EIO, "cannot create '%s': %s", out, ir_strerror(errno));
	return 0;
}

static int run_child(void *ctx, size_t i)
{
	struct pctx *x = ctx;
	const struct probe_case *c = &x->p->cases[x->todo[i]];
	char dir[4200], model[4300], inputs[4300], out[4300], so[4300], se[4300];
	char *cmd;

	case_dir(x, c, dir, sizeof(dir));
	snprintf(model, sizeof(model), "%s/model.onnx", dir);
	snprintf(inputs, sizeof(inputs), "%s/test_data_set_0", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(so, sizeof(so), "%s/stdout.txt", dir);
	snprintf(se, sizeof(se), "%s/stderr.txt", dir);
	if (!(cmd = probe_template_expand(x->o->command, model, inputs, out)))
		return 4;
	return probe_exec_shell(cmd, so, se);
}

/* Compare the runtime's outputs with the reference files of the case. */
static int judge(const char *dir, struct probe_case *c, struct ir_diag *d)
{
	char path[4300], out[4300], why[512], *names_text;
	struct rt_value *want[PROBE_MAX_IO] = { 0 };
	char *names[PROBE_MAX_IO];
	size_t n = 0;
	int equal = 0, rc = 0;

	snprintf(path, sizeof(path), "%s/test_data_set_0/outputs.txt", dir);
	if (!(names_text = slurp(path)))
		return ir_diag_error(d, IR_EIO, "%s: cannot read", path);
	for (char *p = names_text; *p && n < PROBE_MAX_IO;) {
		char *e = strchr(p, '\n');

		if (e)
			*e = 0;
		names[n++] = p;
		p = e ? e + 1 : p + strlen(p);
	}
	for (size_t k = 0; k < n && rc == 0; k++) {
		snprintf(path, sizeof(path), "%s/test_data_set_0/output_%zu.pb", dir, k);
		rc = rt_tensor_read_file(NULL, path, &want[k], d);
	}
	snprintf(out, sizeof(out), "%s/out", dir);
	if (rc == 0)
		rc = probe_outputs_compare(out, want, names, n, NULL, c->shapes_only,
					   &equal, &c->max_abs, why, sizeof(why), d);
	if (rc == 0) {
		c->verdict = equal ? PROBE_EQUAL : PROBE_WRONG;
		free(c->message);
		c->message = why[0] ? strdup(why) : NULL;
	}
	for (size_t k = 0; k < n; k++)
		rt_value_unref(want[k]);
	free(names_text);
	return rc;
}

static int run_done(void *ctx, size_t i, int status, int timed_out, double secs,
		    struct ir_diag *d)
{
	struct pctx *x = ctx;
	struct probe_case *c = &x->p->cases[x->todo[i]];
	char dir[4200], so[4300], se[4300], model[4300];
	struct probe_exec e;
	int rc;

	case_dir(x, c, dir, sizeof(dir));
	snprintf(so, sizeof(so), "%s/stdout.txt", dir);
	snprintf(se, sizeof(se), "%s/stderr.txt", dir);
	snprintf(model, sizeof(model), "%s/model.onnx", dir);
	probe_exec_classify(status, timed_out, x->o->timeout, se, so, model, &e);
	c->seconds = secs;
	if (e.runtime && !x->runtime)
		x->runtime = strdup(e.runtime);
	free(c->message);
	c->message = e.message;
	e.message = NULL;
	if (e.verdict != PROBE_PENDING)
		c->verdict = e.verdict;
	else if (x->o->accept_only)
		c->verdict = PROBE_ACCEPTED;
	else if ((rc = judge(dir, c, d)) < 0) {
		probe_exec_release(&e);
		return rc;
	}
	rc = result_write(dir, c, e.runtime, run_key(x, c), d);
	probe_exec_release(&e);
	x->prog.done++;
	x->prog.counts[c->verdict]++;
	progress(x, c);
	return rc;
}

/* ---- the whole probe -------------------------------------------------- */

static int mkdir_p(const char *path, struct ir_diag *d)
{
	if (mkdir(path, 0777) < 0 && errno != EEXIST)
		return ir_diag_error(d, IR_EUSAGE, "%s: cannot make the folder: %s", path,
				     ir_strerror(errno));
	return 0;
}

static int no_case_add(struct probe_run *r, const char *name)
{
	char **q = realloc(r->no_case, (r->n_no_case + 1) * sizeof(*q));

	if (!q)
		return -1;
	r->no_case = q;
	if (!(q[r->n_no_case] = strdup(name)))
		return -1;
	r->n_no_case++;
	return 0;
}

/* Op versions whose every case is invalid (or that had no seed). */
static int find_no_case(const struct probe_plan *p, struct probe_run *r)
{
	for (size_t i = 0; i < p->n_no_seed; i++)
		if (no_case_add(r, p->no_seed[i]) < 0)
			return -1;
	for (size_t i = 0; i < p->n_cases;) {
		const struct ir_op_schema *s = p->cases[i].schema;
		int valid = 0;
		size_t j = i;
		char name[160];

		for (; j < p->n_cases && p->cases[j].schema == s &&
		     p->cases[j].kind != PROBE_OPSET && p->cases[j].kind != PROBE_DYNAMIC; j++)
			valid |= p->cases[j].verdict != PROBE_INVALID;
		if (j == i) {
			i++;
			continue;
		}
		snprintf(name, sizeof(name), "%s-%d", s->name, s->since_version);
		if (!valid && no_case_add(r, name) < 0)
			return -1;
		i = j;
	}
	return 0;
}

void probe_run_release(struct probe_run *r)
{
	for (size_t i = 0; i < r->n_cases; i++)
		probe_case_release(&r->cases[i]);
	for (size_t i = 0; i < r->n_no_case; i++)
		free(r->no_case[i]);
	free(r->cases);
	free(r->no_case);
	free(r->runtime);
	free(r->command);
	memset(r, 0, sizeof(*r));
}

int probe_run(const struct probe_opts *o, struct probe_run *r, struct ir_diag *d)
{
	struct probe_plan p;
	struct batch_pool pool;
	struct pctx x;
	char path[4200], why[300];
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&x, 0, sizeof(x));
	memset(&p, 0, sizeof(p));
	if (!probe_template_ok(o->command, why, sizeof(why)))
		return ir_diag_error(d, IR_EUSAGE, "%s", why);
	x.o = o;
	x.p = &p;
	x.t0 = batch_now();
	snprintf(path, sizeof(path), "%s/cases", o->workdir);
	if ((rc = mkdir_p(o->workdir, d)) < 0 || (rc = mkdir_p(path, d)) < 0)
		return rc;
	if ((rc = probe_plan_make(o, &p, d)) < 0)
		goto cleanup;
	/* round 1: the cases' files */
	memset(&pool, 0, sizeof(pool));
	pool.jobs = o->jobs ? o->jobs : 1;
	pool.timeout = 120;
	pool.before = gen_before;
	pool.child = gen_child;
	pool.done = gen_done;
	pool.tick = tick;
	pool.ctx = &x;
	x.phase = "generate";
	x.prog.total = p.n_cases;
	if ((rc = batch_pool_run(&pool, p.n_cases, d)) < 0)
		goto cleanup;
	/* round 2: the runtime on every valid case */
	if (!(x.todo = calloc(p.n_cases + 1, sizeof(*x.todo)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < p.n_cases; i++)
		if (p.cases[i].verdict != PROBE_INVALID)
			x.todo[x.n_todo++] = i;
	pool.timeout = o->timeout;
	pool.max_memory = o->max_memory;
	pool.own_group = 1;
	pool.before = run_before;
	pool.child = run_child;
	pool.done = run_done;
	x.phase = "run";
	x.prog.done = 0;
	x.prog.total = x.n_todo;
	memset(x.prog.counts, 0, sizeof(x.prog.counts));
	if ((rc = batch_pool_run(&pool, x.n_todo, d)) < 0)
		goto cleanup;
	if (find_no_case(&p, r) < 0 || !(r->command = strdup(o->command))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	r->cases = p.cases;
	r->n_cases = p.n_cases;
	p.cases = NULL;
	p.n_cases = 0;
	r->n_ops = p.n_ops;
	r->n_seeds_backend = p.n_seeds_backend;
	r->runtime = x.runtime;
	x.runtime = NULL;
	r->opset_min = o->opset_min;
	r->opset_max = o->opset_max;
	r->accept_only = o->accept_only;
	r->seconds = batch_now() - x.t0;
cleanup:
	free(x.todo);
	free(x.runtime);
	probe_plan_release(&p);
	return rc;
}
