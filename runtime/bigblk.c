/* bigblk.c: a few large freed tensor blocks kept for the next tensors.
 * glibc serves blocks above its mmap threshold (at most 32 MiB, set by
 * the CLI) with fresh pages and unmaps them on free, so every tensor that
 * large came in as page faults: a float16 1024x1024 RSU block spent a
 * third of its time in the kernel's fault path.  Blocks of 32 MiB and
 * more are kept here on free (at most BIG_N, at most 1/16 of the
 * machine's memory, and at most 1 GiB, in all) and handed to the next
 * tensor they fit without wasting more than half of the block; when
 * malloc fails they are all given back first.  The cache is process-wide
 * and locked. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "runtime/rt_int.h"

#define BIG_MIN ((size_t)32 << 20)
#define BIG_N 8

static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { void *p; size_t cap; } big[BIG_N];
static size_t big_total, big_limit;

static size_t limit(void)
{
	if (!big_limit) {
		long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
		size_t l = pages > 0 && size > 0 ? (size_t)pages * (size_t)size / 16 : 0;

		big_limit = l < ((size_t)1 << 30) ? l : (size_t)1 << 30;
		if (!big_limit)
			big_limit = 1;
	}
	return big_limit;
}

void *rt_big_alloc(size_t bytes)
{
	void *p = NULL;
	int best = -1;

	if (bytes < BIG_MIN)
		return malloc(bytes ? bytes : 1);
	pthread_mutex_lock(&big_lock);
	for (int i = 0; i < BIG_N; i++)
		if (big[i].p && big[i].cap >= bytes && big[i].cap / 2 <= bytes &&
		    (best < 0 || big[i].cap < big[best].cap))
			best = i;
	if (best >= 0) {
		p = big[best].p;
		big_total -= big[best].cap;
		big[best].p = NULL;
	}
	pthread_mutex_unlock(&big_lock);
	if (p || (p = malloc(bytes)))
		return p;
	/* short of memory (a ulimit): give the kept blocks back and retry */
	pthread_mutex_lock(&big_lock);
	for (int i = 0; i < BIG_N; i++) {
		free(big[i].p);
		big[i].p = NULL;
	}
	big_total = 0;
	pthread_mutex_unlock(&big_lock);
	return malloc(bytes);
}

void rt_big_free(void *p)
{
#ifdef __GLIBC__
	size_t cap = p ? malloc_usable_size(p) : 0;

	if (cap >= BIG_MIN) {
		pthread_mutex_lock(&big_lock);
		for (int i = 0; i < BIG_N; i++) {
			if (big[i].p || big_total + cap > limit())
				continue;
			big[i].p = p;
			big[i].cap = cap;
			big_total += cap;
			p = NULL;
			break;
		}
		pthread_mutex_unlock(&big_lock);
	}
#endif
	free(p);
}
