/* threads.c: a small fixed pool of worker threads for data-parallel
 * kernels: rt_pool_for splits [0, n) into one chunk per thread, runs the
 * first on the caller and waits for the rest.  Calls from inside a chunk
 * (nested parallelism) run inline. */
#include <pthread.h>
#include <stdlib.h>

#include "validators/exec_int.h"

struct rt_pool {
	int n;                     /* worker threads (threads - 1) */
	pthread_t *tid;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	unsigned long gen;         /* bumped per job */
	int pending;               /* chunks not yet finished */
	int quit;
	rt_range_fn fn;
	void *ctx;
	int64_t n_items, chunk;
};

static __thread int in_chunk;

struct worker_arg {
	struct rt_pool *p;
	int index;
};

static void *worker(void *arg)
{
	struct rt_pool *p = ((struct worker_arg *)arg)->p;
	int index = ((struct worker_arg *)arg)->index;
	unsigned long seen = 0;

	free(arg);
	in_chunk = 1;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->quit && p->gen == seen)
			pthread_cond_wait(&p->work, &p->mu);
		if (p->quit)
			break;
		seen = p->gen;
		{
			int64_t b = (int64_t)(index + 1) * p->chunk;
			int64_t e = b + p->chunk;
			rt_range_fn fn = p->fn;
			void *ctx = p->ctx;

			if (e > p->n_items)
				e = p->n_items;
			pthread_mutex_unlock(&p->mu);
			if (b < e)
				fn(ctx, b, e);
			pthread_mutex_lock(&p->mu);
		}
		if (--p->pending == 0)
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
		a->index = i;
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

void rt_pool_for(struct rt_pool *p, int64_t n, int64_t grain,
		 rt_range_fn fn, void *ctx)
{
	int64_t chunk;

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
	pthread_mutex_lock(&p->mu);
	p->fn = fn;
	p->ctx = ctx;
	p->n_items = n;
	p->chunk = chunk;
	p->pending = p->n;
	p->gen++;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	in_chunk = 1;
	fn(ctx, 0, chunk < n ? chunk : n);
	in_chunk = 0;
	pthread_mutex_lock(&p->mu);
	while (p->pending > 0)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}
