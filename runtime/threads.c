/* threads.c: the session's data-parallel loops on libgomp's thread team,
 * the same threads oneDNN's primitives run on (Debian's oneDNN is built
 * for OpenMP).  A pool of opmig's own had two sets of threads share the
 * CPUs: at two threads oneDNN's worker, woken for each primitive, waited
 * behind opmig's watching worker or paid a wake-up per primitive (a
 * YOLO-style det's 75 convolutions), and spinning it displaced opmig's
 * pool (bench/README.md, "one team of threads").  rt_pool_for splits
 * [0, n) into one chunk per thread that the team's threads (the caller
 * among them) take from a shared counter; libgomp keeps the team between
 * jobs and its threads watch for the next one before they sleep
 * (GOMP_SPINCOUNT; cli/blas_env.c leaves the default).  Calls from inside a
 * chunk (nested parallelism) run inline. */
#include <stdlib.h>

#include "runtime/exec_int.h"

/* libgomp's entry for a parallel region (what `#pragma omp parallel`
 * compiles to), declared here as k_dnnl.c declares omp_set_num_threads */
void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);

struct rt_pool {
	int n;                     /* threads besides the caller */
};

struct job {
	rt_range_fn fn;
	void *ctx;
	int64_t n, chunk, n_chunks, next;
};

static __thread int in_chunk;

static void take_chunks(void *arg)
{
	struct job *j = arg;
	int64_t i;

	in_chunk = 1;
	while ((i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->n_chunks) {
		int64_t b = i * j->chunk, e = b + j->chunk;

		j->fn(j->ctx, b, e > j->n ? j->n : e);
	}
	in_chunk = 0;
}

int rt_pool_new(int threads, struct rt_pool **out)
{
	if (!(*out = calloc(1, sizeof(**out))))
		return IR_ENOMEM;
	(*out)->n = threads > 1 ? threads - 1 : 0;
	return 0;
}

void rt_pool_free(struct rt_pool *p)
{
	free(p);
}

void rt_pool_for(struct rt_pool *p, int64_t n, int64_t grain,
		 rt_range_fn fn, void *ctx)
{
	struct job j = { fn, ctx, n, 0, 0, 0 };

	if (n <= 0)
		return;
	if (grain < 1)
		grain = 1;
	if (!p || p->n == 0 || in_chunk || n < 2 * grain) {
		fn(ctx, 0, n);
		return;
	}
	j.chunk = (n + p->n) / (p->n + 1);
	if (j.chunk < grain)
		j.chunk = grain;
	j.n_chunks = (n + j.chunk - 1) / j.chunk;
	GOMP_parallel(take_chunks, &j, (unsigned)(p->n + 1), 0);
}
