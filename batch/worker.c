/* worker.c: the batch's scheduler on one machine: the jobs of this shard
 * (item x target, in sorted order), one task of the worker pool (pool.c)
 * per model (its jobs are consecutive), at most -j at a time, each under
 * its memory limit and timeout; a worker that crashes, hangs or runs out
 * of memory fails its model's jobs alone, with the reason recorded in a
 * result.json that a resume runs again.  SIGINT and SIGTERM stop the
 * workers and the run. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batch/batch_int.h"
#include "ir/ir.h"
#include "oprules/rules.h"

static const char *const summaries[] = {
	"summary.json", "summary.csv", "summary.md", "index.html",
};

static uint64_t rules_hash(const struct batch_opts *o)
{
	uint64_t h = BATCH_HASH_INIT;

	for (size_t i = 0; i < o->n_dbs; i++)
		for (size_t k = 0; k < o->dbs[i]->n_targets; k++) {
			const struct rules_target *t = &o->dbs[i]->targets[k];
			uint64_t f = 0;

			h = batch_hash(h, t->id, strlen(t->id) + 1);
			if (t->file && batch_hash_file(t->file, &f) == 0)
				h = batch_hash(h, &f, sizeof(f));
		}
	return h;
}

/* A worker's exit status when a resume kept the job's outputs. */
#define BATCH_EXIT_KEPT 10

static int push_row(struct batch_summary *s, struct batch_row *r)
{
	if (s->n_rows == s->cap_rows) {
		size_t c = s->cap_rows ? 2 * s->cap_rows : 64;
		struct batch_row *p = realloc(s->rows, c * sizeof(*p));

		if (!p)
			return -1;
		s->rows = p;
		s->cap_rows = c;
	}
	s->rows[s->n_rows++] = *r;
	return 0;
}

/* The row of a finished worker: its result.json, or the reason it died. */
/* Identity of DIR/result.json (inode and change time), 0 when absent: a
 * result the worker wrote is a new file (written atomically, though its
 * inode number may be reused), one a resume kept is the old one. */
static uint64_t result_ino(const struct batch_job *j)
{
	char path[4200];
	struct stat st;
	uint64_t h = BATCH_HASH_INIT;

	snprintf(path, sizeof(path), "%s/result.json", j->dir);
	if (stat(path, &st) < 0)
		return 0;
	h = batch_hash(h, &st.st_ino, sizeof(st.st_ino));
	h = batch_hash(h, &st.st_ctim.tv_sec, sizeof(st.st_ctim.tv_sec));
	h = batch_hash(h, &st.st_ctim.tv_nsec, sizeof(st.st_ctim.tv_nsec));
	return h ? h : 1;
}

static int collect(struct batch_job *j, int status, int timed_out, double secs,
		   uint64_t before, struct batch_summary *sum, struct batch_progress *p,
		   struct ir_diag *d)
{
	struct batch_row r;
	int ok = WIFEXITED(status) && (WEXITSTATUS(status) == 0 ||
				      WEXITSTATUS(status) == BATCH_EXIT_KEPT);
	int kept = ok && before && result_ino(j) == before;

	if (!timed_out && ok &&
	    batch_result_read(j->dir, &r, NULL) == 0) {
		p->skipped += kept;
		if (!j->o->times)
			r.seconds = -1;
	} else {
		char msg[256];

		memset(&r, 0, sizeof(r));
		r.nodes = r.blockers = -1;
		r.native_pct = r.after_pct = r.max_error = -1;
		r.seconds = j->o->times ? secs : -1;
		if (timed_out) {
			r.status = BATCH_TIMEOUT;
			snprintf(msg, sizeof(msg), "worker stopped after the --timeout of %g s", j->o->timeout);
		} else if (WIFSIGNALED(status)) {
			int sig = WTERMSIG(status);

			r.status = BATCH_CRASHED;
			snprintf(msg, sizeof(msg), "worker killed by signal %d (%s)%s", sig, strsignal(sig),
				 j->o->max_memory ? " (under --max-memory)" : "");
		} else {
			r.status = BATCH_CRASHED;
			snprintf(msg, sizeof(msg), "worker exited with status %d and no result",
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		}
		if (!(r.model = batch_strdup(j->item->name)) || !(r.target = batch_strdup(j->target->id)) ||
		    !(r.source = batch_strdup(j->item->source)) || !(r.message = batch_strdup(msg))) {
			batch_row_release(&r);
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		}
		/* retry: a resume runs this job again */
		if (mkdir(j->dir, 0777) < 0 && errno != EEXIST) {
			/* the worker died before making it: nothing to record */
		} else {
			struct ir_diag wd;

			ir_diag_init(&wd);
			batch_result_write(j->dir, &r, 0, 1, NULL, &wd);
		}
	}
	p->done++;
	p->failed += batch_status_failed(r.status) != 0;
	if (push_row(sum, &r) < 0) {
		batch_row_release(&r);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	p->row = &sum->rows[sum->n_rows - 1];
	return 0;
}

/* The pool's view of a run: tasks are models, each the group of its
 * consecutive jobs jobs[group[t] .. group[t + 1]). */
struct wctx {
	const struct batch_opts *o;
	struct batch_job *jobs;
	size_t *group;               /* n_groups + 1 starts */
	uint64_t *inos;
	struct batch_summary *sum;
	struct batch_progress p;
	double t0;
};

static int w_before(void *ctx, size_t t, struct ir_diag *d)
{
	struct wctx *w = ctx;

	(void)d;
	for (size_t k = w->group[t]; k < w->group[t + 1]; k++)
		w->inos[k] = w->o->resume ? result_ino(&w->jobs[k]) : 0;
	return 0;
}

static int w_child(void *ctx, size_t t)
{
	struct wctx *w = ctx;

	switch (batch_group_run(&w->jobs[w->group[t]], w->group[t + 1] - w->group[t])) {
	case 0: return 0;
	case 1: return BATCH_EXIT_KEPT;
	default: return 4;
	}
}

static int w_done(void *ctx, size_t t, int status, int timed_out, double secs,
		  struct ir_diag *d)
{
	struct wctx *w = ctx;
	int rc = 0;

	for (size_t q = w->group[t]; q < w->group[t + 1] && rc == 0; q++) {
		rc = collect(&w->jobs[q], status, timed_out, secs, w->inos[q], w->sum, &w->p, d);
		w->p.elapsed = batch_now() - w->t0;
		if (rc == 0 && w->o->progress)
			w->o->progress(w->o->ctx, &w->p);
	}
	return rc;
}

static void w_tick(void *ctx)
{
	struct wctx *w = ctx;

	if (!w->o->progress)
		return;
	w->p.elapsed = batch_now() - w->t0;
	w->p.row = NULL;
	w->o->progress(w->o->ctx, &w->p);
}

int batch_run(const struct batch_src *src, const struct batch_opts *o,
	      struct batch_summary *sum, struct ir_diag *d)
{
	struct batch_pool pool;
	struct wctx w;
	size_t n_jobs = 0, n_groups = 0;
	int rc = 0;

	memset(&w, 0, sizeof(w));
	w.o = o;
	w.sum = sum;
	w.t0 = batch_now();
	sum->mode = o->mode;
	if (mkdir(o->outdir, 0777) < 0 && errno != EEXIST)
		return ir_diag_error(d, IR_EINVAL, "%s: cannot make the folder: %s", o->outdir,
				     ir_strerror(errno));
	if ((rc = batch_plan(src, o, rules_hash(o), &w.jobs, &n_jobs, d)) < 0)
		goto cleanup;
	/* The summaries of an earlier run would not describe this one. */
	for (size_t i = 0; i < sizeof(summaries) / sizeof(summaries[0]); i++) {
		char path[4200];

		snprintf(path, sizeof(path), "%s/%s", o->outdir, summaries[i]);
		unlink(path);
	}
	w.p.total = n_jobs;
	if (!(w.inos = calloc(n_jobs + 1, sizeof(*w.inos))) ||
	    !(w.group = calloc(n_jobs + 1, sizeof(*w.group)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < n_jobs; i++)
		if (i == 0 || w.jobs[i].item != w.jobs[i - 1].item)
			w.group[n_groups++] = i;
	w.group[n_groups] = n_jobs;
	memset(&pool, 0, sizeof(pool));
	pool.jobs = o->jobs ? o->jobs : 1;
	pool.timeout = o->timeout;
	pool.max_memory = o->max_memory;
	pool.before = w_before;
	pool.child = w_child;
	pool.done = w_done;
	pool.tick = w_tick;
	pool.ctx = &w;
	rc = batch_pool_run(&pool, n_groups, d);
	sum->n_kept = w.p.skipped;
	if (rc == 0)
		rc = batch_summary_sort(sum, d);
cleanup:
	free(w.inos);
	free(w.group);
	free(w.jobs);
	return rc;
}
