/* worker.c: the batch's scheduler on one machine: the jobs of this shard
 * (item x target, in sorted order), one forked worker process per model
 * (its jobs are consecutive), at most -j at a time, each under its memory
 * limit (RLIMIT_AS) and timeout; a worker that crashes, hangs or runs out
 * of memory fails its model's jobs alone, with the reason recorded in a
 * result.json that a resume runs again.  SIGINT and SIGTERM stop the
 * workers and the run. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "batch/batch_int.h"
#include "ir/ir.h"
#include "oprules/rules.h"

static volatile sig_atomic_t stop_signal;

static const char *const summaries[] = {
	"summary.json", "summary.csv", "summary.md", "index.html",
};

static void on_signal(int sig)
{
	stop_signal = sig;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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

struct slot {
	pid_t pid;
	size_t job, n;               /* jobs[job .. job + n): one model */
	double start;
	int timed_out;
};

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

static void run_child(const struct batch_job *j, size_t n)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A worker never outlives the batch (kill -9 of the parent included). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(4);
	if (j->o->max_memory) {
		struct rlimit rl = { (rlim_t)j->o->max_memory, (rlim_t)j->o->max_memory };

		setrlimit(RLIMIT_AS, &rl);
	}
	switch (batch_group_run(j, n)) {
	case 0: _exit(0);
	case 1: _exit(BATCH_EXIT_KEPT);
	default: _exit(4);
	}
}

int batch_run(const struct batch_src *src, const struct batch_opts *o,
	      struct batch_summary *sum, struct ir_diag *d)
{
	struct batch_job *jobs = NULL;
	struct slot *slots = NULL;
	uint64_t *inos = NULL;
	struct batch_progress p;
	struct sigaction sa, old_int, old_term, old_chld;
	size_t n_jobs = 0, next = 0, running = 0;
	uint64_t rh = rules_hash(o);
	double t0 = now(), last_tick = t0;
	int rc = 0;

	memset(&p, 0, sizeof(p));
	sum->mode = o->mode;
	if (mkdir(o->outdir, 0777) < 0 && errno != EEXIST)
		return ir_diag_error(d, IR_EINVAL, "%s: cannot make the folder: %s", o->outdir,
				     ir_strerror(errno));
	if ((rc = batch_plan(src, o, rh, &jobs, &n_jobs, d)) < 0)
		goto cleanup;
	/* The summaries of an earlier run would not describe this one. */
	for (size_t i = 0; i < sizeof(summaries) / sizeof(summaries[0]); i++) {
		char path[4200];

		snprintf(path, sizeof(path), "%s/%s", o->outdir, summaries[i]);
		unlink(path);
	}
	p.total = n_jobs;
	if (!(slots = calloc(o->jobs ? o->jobs : 1, sizeof(*slots))) ||
	    !(inos = calloc(n_jobs + 1, sizeof(*inos)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	stop_signal = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sa.sa_handler = SIG_DFL;            /* workers must be waitable */
	sigaction(SIGCHLD, &sa, &old_chld);
	fflush(NULL);
	while ((next < n_jobs || running) && rc == 0) {
		int progressed = 0;

		while (!stop_signal && running < o->jobs && next < n_jobs) {
			struct slot *s = NULL;
			size_t n;
			pid_t pid;

			for (unsigned k = 0; k < o->jobs; k++)
				if (!slots[k].pid) {
					s = &slots[k];
					break;
				}
			for (n = 1; next + n < n_jobs && jobs[next + n].item == jobs[next].item; n++)
				;
			for (size_t k = 0; k < n; k++)
				inos[next + k] = o->resume ? result_ino(&jobs[next + k]) : 0;
			if ((pid = fork()) < 0) {
				rc = ir_diag_error(d, IR_EIO, "fork: %s", ir_strerror(errno));
				break;
			}
			if (pid == 0)
				run_child(&jobs[next], n);
			s->pid = pid;
			s->job = next;
			s->n = n;
			next += n;
			s->start = now();
			s->timed_out = 0;
			running++;
		}
		if (stop_signal) {
			for (unsigned k = 0; k < o->jobs; k++)
				if (slots[k].pid) {
					kill(slots[k].pid, SIGKILL);
					waitpid(slots[k].pid, NULL, 0);
					slots[k].pid = 0;
				}
			rc = ir_diag_error(d, IR_EIO, "interrupted by signal %d (%s)", (int)stop_signal,
					   strsignal(stop_signal));
			break;
		}
		for (unsigned k = 0; k < o->jobs && rc == 0; k++) {
			struct slot *s = &slots[k];
			int status = 0;
			pid_t w;

			if (!s->pid)
				continue;
			w = waitpid(s->pid, &status, WNOHANG);
			if (w == 0) {
				if (o->timeout > 0 && !s->timed_out && now() - s->start > o->timeout) {
					kill(s->pid, SIGKILL);
					s->timed_out = 1;
				}
				continue;
			}
			if (w < 0 && errno == EINTR)
				continue;
			s->pid = 0;
			running--;
			progressed = 1;
			for (size_t q = 0; q < s->n && rc == 0; q++) {
				rc = collect(&jobs[s->job + q], status, s->timed_out, now() - s->start,
					     inos[s->job + q], sum, &p, d);
				p.elapsed = now() - t0;
				if (rc == 0 && o->progress)
					o->progress(o->ctx, &p);
			}
		}
		if (!progressed && rc == 0) {
			/* a terminal's bar moves on (rate, ETA) between jobs too */
			if (o->progress && now() - last_tick > 0.5) {
				last_tick = now();
				p.elapsed = last_tick - t0;
				p.row = NULL;
				o->progress(o->ctx, &p);
			}
			usleep(2000);
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	sum->n_kept = p.skipped;
	if (rc == 0)
		rc = batch_summary_sort(sum, d);
cleanup:
	if (slots)
		for (unsigned k = 0; k < o->jobs; k++)
			if (slots[k].pid) {
				kill(slots[k].pid, SIGKILL);
				waitpid(slots[k].pid, NULL, 0);
			}
	free(slots);
	free(inos);
	free(jobs);
	return rc;
}
