/* pool.c: crash-isolated worker processes: tasks run one forked process
 * each, at most `jobs` at a time, each under its memory limit (RLIMIT_AS)
 * and timeout, optionally in a process group of its own so that a timeout
 * or a stop kills everything the task started.  A task that crashes, hangs
 * or runs out of memory is a status handed to the caller, never a failure
 * of the pool.  SIGINT and SIGTERM stop the tasks and the run.  Used by
 * `opmig batch` (worker.c) and `opmig probe`. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "batch/batch.h"
#include "ir/ir.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

double batch_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct pslot {
	pid_t pid;
	size_t task;
	double start;
	int timed_out;
};

static void kill_task(const struct batch_pool *p, pid_t pid)
{
	if (p->own_group)
		kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
}

static void run_child(const struct batch_pool *p, size_t i)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (p->own_group)
		setpgid(0, 0);
	/* A worker never outlives the run (kill -9 of the parent included). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(4);
	if (p->max_memory) {
		struct rlimit rl = { (rlim_t)p->max_memory, (rlim_t)p->max_memory };

		setrlimit(RLIMIT_AS, &rl);
	}
	_exit(p->child(p->ctx, i) & 0xff);
}

int batch_pool_run(const struct batch_pool *p, size_t n, struct ir_diag *d)
{
	unsigned jobs = p->jobs ? p->jobs : 1;
	struct pslot *slots = calloc(jobs, sizeof(*slots));
	struct sigaction sa, old_int, old_term, old_chld;
	size_t next = 0, running = 0;
	double last_tick = batch_now();
	int rc = 0;

	if (!slots)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	stop_signal = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sa.sa_handler = SIG_DFL;            /* workers must be waitable */
	sigaction(SIGCHLD, &sa, &old_chld);
	fflush(NULL);
	while ((next < n || running) && rc == 0) {
		int progressed = 0;

		while (!stop_signal && running < jobs && next < n) {
			struct pslot *s = NULL;
			pid_t pid;

			for (unsigned k = 0; k < jobs; k++)
				if (!slots[k].pid) {
					s = &slots[k];
					break;
				}
			if (p->before && (rc = p->before(p->ctx, next, d)) < 0)
				break;
			if (rc > 0) {           /* nothing to run for this task */
				rc = 0;
				next++;
				progressed = 1;
				continue;
			}
			fflush(NULL);
			if ((pid = fork()) < 0) {
				rc = ir_diag_error(d, IR_EIO, "fork: %s", ir_strerror(errno));
				break;
			}
			if (pid == 0)
				run_child(p, next);
			if (p->own_group)
				setpgid(pid, pid);   /* also here: no race with a kill */
			s->pid = pid;
			s->task = next++;
			s->start = batch_now();
			s->timed_out = 0;
			running++;
		}
		if (stop_signal) {
			rc = ir_diag_error(d, IR_EIO, "interrupted by signal %d (%s)", (int)stop_signal,
					   strsignal(stop_signal));
			break;
		}
		for (unsigned k = 0; k < jobs && rc == 0; k++) {
			struct pslot *s = &slots[k];
			int status = 0;
			pid_t w;

			if (!s->pid)
				continue;
			w = waitpid(s->pid, &status, WNOHANG);
			if (w == 0) {
				if (p->timeout > 0 && !s->timed_out && batch_now() - s->start > p->timeout) {
					kill_task(p, s->pid);
					s->timed_out = 1;
				}
				continue;
			}
			if (w < 0 && errno == EINTR)
				continue;
			if (p->own_group)
				kill(-s->pid, SIGKILL);   /* what the task left behind */
			s->pid = 0;
			running--;
			progressed = 1;
			rc = p->done(p->ctx, s->task, status, s->timed_out, batch_now() - s->start, d);
		}
		if (!progressed && rc == 0) {
			/* a terminal's bar moves on (rate, ETA) between tasks too */
			if (p->tick && batch_now() - last_tick > 0.5) {
				last_tick = batch_now();
				p->tick(p->ctx);
			}
			usleep(2000);
		}
	}
	for (unsigned k = 0; k < jobs; k++)
		if (slots[k].pid) {
			kill_task(p, slots[k].pid);
			waitpid(slots[k].pid, NULL, 0);
		}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	free(slots);
	return rc;
}
