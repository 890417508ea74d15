/* threads.c: a small fixed pool of worker threads for data-parallel
 * kernels: rt_pool_for splits [0, n) into one chunk per thread; the caller
 * and the woken workers take chunks from a shared counter, so a worker
 * the system has not scheduled yet (the other CPUs busy) does not hold the
 * caller up: the caller takes its chunk too.  The caller then waits only
 * for chunks a worker has started.  Calls from inside a chunk (nested
 * parallelism) run inline.
 *
 * Waking a sleeping thread costs tens of microseconds, and a model run
 * makes hundreds of parallel loops a few microseconds apart: a worker
 * that finished a job watches for the next one for RT_POOL_SPIN_NS before
 * it sleeps, and the caller watches for the workers' last chunks as long
 * before it sleeps on them, yielding the CPU now and then to any other
 * runnable thread.  (gen and busy are written under mu, with atomic
 * stores, so the watching reads need no lock.)
 *
 * Once oneDNN has run in the process (rt_pool_openmp), its OpenMP
 * threads take the chunks instead: two sets of workers watching for work
 * took turns on the same CPUs, each primitive's OpenMP worker waiting for
 * the pool's watcher to yield and the pool's for OpenMP's to stop
 * spinning (at two threads on two CPUs, an EfficientNet-B0 in float16
 * 16.6 -> 13.2 ms, a Whisper-style encoder 56.5 -> 47.9, a YOLO-style
 * detector 14.1 -> 9.2-11.8).  Without oneDNN the pool stays: OpenMP's
 * fork and join cost more than its hand-offs on a recurrent net's
 * hundreds of small loops (a batch-4 LSTM 3.6 -> 4.7 ms). */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "runtime/exec_int.h"

/* A job's chunks not yet taken: the first 64 by a mask, those after by a
 * counter. */
struct claims {
	uint64_t mask;   /* chunks [0, 64) taken (atomic) */
	int64_t next;    /* the next chunk from 64 on to take (atomic) */
};

struct rt_pool {
	int n;                     /* worker threads (threads - 1) */
	pthread_t *tid;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	unsigned long gen;         /* bumped per job */
	unsigned long busy;        /* workers inside the current job */
	int quit;
	rt_range_fn fn;
	void *ctx;
	int64_t n_items, chunk, n_chunks;
	struct claims claims;      /* the job's chunks taken */
};

static void claims_reset(struct claims *c)
{
	__atomic_store_n(&c->mask, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->next, 64, __ATOMIC_RELAXED);
}

/* Whether this thread takes chunk i (< 64) */
static int claim(struct claims *c, int64_t i)
{
	uint64_t bit = (uint64_t)1 << i;

	return !(__atomic_fetch_or(&c->mask, bit, __ATOMIC_RELAXED) & bit);
}

static void run_chunk(rt_range_fn fn, void *ctx, int64_t n_items, int64_t chunk, int64_t i)
{
	int64_t b = i * chunk, e = b + chunk > n_items ? n_items : b + chunk;

	if (b < e)
		fn(ctx, b, e);
}

/* Run chunks of the current job until none is left (self: this thread's
 * place, the caller 0).  A thread takes the chunk of its own place first,
 * then any left: so a job split as the last was gives each thread the
 * same part of the data while every thread is there to take its own (a
 * recurrent net's R read by halves, each from its own CPU's L2, step
 * after step), and a thread the system has not scheduled yet still holds
 * nobody up. */
static void take_chunks(struct claims *c, int self, rt_range_fn fn, void *ctx,
			int64_t n_items, int64_t chunk, int64_t n_chunks)
{
	int64_t i;

	if (self < 64 && self < n_chunks && claim(c, self))
		run_chunk(fn, ctx, n_items, chunk, self);
	for (i = 0; i < 64 && i < n_chunks; i++)
		if (claim(c, i))
			run_chunk(fn, ctx, n_items, chunk, i);
	while ((i = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED)) < n_chunks)
		run_chunk(fn, ctx, n_items, chunk, i);
}

static __thread int in_chunk;

/* 2 ms: on this project's 2-CPU VMs a sleeping worker took long enough to
 * wake that 0.2 ms cost ResNet-50 about 10% at 2 threads (bench/README.md,
 * fifth session of 2026-12-03); a worker spins at most this long after a
 * run's last job */
#define RT_POOL_SPIN_NS 2000000

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Watch *v (without the lock) for up to RT_POOL_SPIN_NS while it equals
 * still; 1 when it changed. */
static int spin_while(const unsigned long *v, unsigned long still)
{
	int64_t end = 0;

	for (unsigned i = 0;; i++) {
		if (__atomic_load_n(v, __ATOMIC_ACQUIRE) != still)
			return 1;
		if ((i & 63) == 0) {
			int64_t t = now_ns();

			if (!end)
				end = t + RT_POOL_SPIN_NS;
			else if (t > end)
				return 0;
		}
		/* every ~50 us of watching, let another runnable thread have
		 * this CPU: oneDNN's OpenMP thread, woken for a primitive while
		 * a worker watches here, otherwise waited its turn (a YOLO-style
		 * det at two threads 18.5 -> 15.8 ms, a U-Net 100 -> 91) */
		if ((i & 1023) == 1023)
			sched_yield();
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
}

struct worker_arg {
	struct rt_pool *p;
	int self;   /* its place (1 to n; the caller is 0) */
};

static void *worker(void *arg)
{
	struct rt_pool *p = ((struct worker_arg *)arg)->p;
	int self = ((struct worker_arg *)arg)->self;
	unsigned long seen = 0;

	free(arg);
	in_chunk = 1;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (!p->quit && p->gen == seen) {
			pthread_mutex_unlock(&p->mu);
			spin_while(&p->gen, seen);
			pthread_mutex_lock(&p->mu);
		}
		while (!p->quit && p->gen == seen)
			pthread_cond_wait(&p->work, &p->mu);
		if (p->quit)
			break;
		/* the job's fields are read with its generation, under mu: a
		 * worker that wakes after the caller finished one job and began
		 * the next joins the next */
		seen = p->gen;
		{
			rt_range_fn fn = p->fn;
			void *ctx = p->ctx;
			int64_t n_items = p->n_items, chunk = p->chunk, n_chunks = p->n_chunks;

			__atomic_store_n(&p->busy, p->busy + 1, __ATOMIC_RELEASE);
			pthread_mutex_unlock(&p->mu);
			take_chunks(&p->claims, self, fn, ctx, n_items, chunk, n_chunks);
			pthread_mutex_lock(&p->mu);
		}
		__atomic_store_n(&p->busy, p->busy - 1, __ATOMIC_RELEASE);
		if (p->busy == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int rt_pool_new(int threads, struct rt_pool **out)
{
	struct rt_pool *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return IR_ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	if (threads > 1 && !(p->tid = calloc((size_t)threads, sizeof(pthread_t)))) {
		rt_pool_free(p);
		return IR_ENOMEM;
	}
	for (int i = 0; i < threads - 1; i++) {
		struct worker_arg *a = malloc(sizeof(*a));

		if (!a)
			break;
		a->p = p;
		a->self = i + 1;
		if (pthread_create(&p->tid[i], NULL, worker, a) != 0) {
			free(a);
			break;
		}
		p->n++;
	}
	*out = p;
	return 0;
}

void rt_pool_free(struct rt_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->n; i++)
		pthread_join(p->tid[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	free(p->tid);
	free(p);
}

/* libgomp's entry for a parallel region (what gcc makes of `#pragma omp
 * parallel`), declared here as omp.h is gcc's own header and not on
 * clang's path: fn(data) on each of num_threads threads, the caller one
 * of them; flags 0. */
void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);
int omp_get_thread_num(void);   /* libgomp's: this thread's place in the team, the caller 0 */

static int use_openmp;

int rt_pool_openmp(int on)
{
	return __atomic_exchange_n(&use_openmp, on, __ATOMIC_RELAXED);
}

struct omp_job {
	rt_range_fn fn;
	void *ctx;
	int64_t n, chunk, n_chunks;
	struct claims claims;
};

static void omp_chunks(void *arg)
{
	struct omp_job *j = arg;
	int was = in_chunk;

	in_chunk = 1;   /* (a call from inside a chunk runs inline) */
	take_chunks(&j->claims, omp_get_thread_num(), j->fn, j->ctx, j->n, j->chunk, j->n_chunks);
	in_chunk = was;
}

void rt_pool_for(struct rt_pool *p, int64_t n, int64_t grain,
		 rt_range_fn fn, void *ctx)
{
	int64_t chunk, n_chunks;

	if (n <= 0)
		return;
	if (grain < 1)
		grain = 1;
	if (!p || p->n == 0 || in_chunk || n < 2 * grain) {
		fn(ctx, 0, n);
		return;
	}
	chunk = (n + p->n) / (p->n + 1);
	if (chunk < grain)
		chunk = grain;
	n_chunks = (n + chunk - 1) / chunk;
	if (__atomic_load_n(&use_openmp, __ATOMIC_RELAXED)) {
		struct omp_job j = { fn, ctx, n, chunk, n_chunks, { 0, 0 } };

		claims_reset(&j.claims);

		GOMP_parallel(omp_chunks, &j, (unsigned)(p->n + 1), 0);
		return;
	}
	pthread_mutex_lock(&p->mu);
	/* a worker that woke late for the last job, found nothing left and is
	 * on its way out must be out before the counter is reset */
	while (p->busy > 0)
		pthread_cond_wait(&p->done, &p->mu);
	p->fn = fn;
	p->ctx = ctx;
	p->n_items = n;
	p->chunk = chunk;
	p->n_chunks = n_chunks;
	claims_reset(&p->claims);
	__atomic_store_n(&p->gen, p->gen + 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	in_chunk = 1;
	take_chunks(&p->claims, 0, fn, ctx, n, chunk, n_chunks);
	in_chunk = 0;
	/* every chunk is taken; wait for the workers still running theirs
	 * (the mutex orders their writes before this thread's reads) */
	for (unsigned long b; (b = __atomic_load_n(&p->busy, __ATOMIC_ACQUIRE)) > 0;)
		if (!spin_while(&p->busy, b))
			break;
	pthread_mutex_lock(&p->mu);
	while (p->busy > 0)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}
