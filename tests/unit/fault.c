/* fault.c: allocation fault injection for the unit runner.  The runner is
 * linked with GNU ld's --wrap=malloc,calloc,realloc,strdup,strndup (see the
 * Makefile), so every call from opmig's own code, and from protobuf-c
 * through ir/pbuf.c's allocator, lands here first.  fault_fail_at(N) makes
 * the N-th call from now return NULL; production binaries are untouched. */
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>
#include <execinfo.h>

#include "tests/unit/fault.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static atomic_long countdown;   /* 0: off */
static atomic_long calls;       /* allocations seen while armed */
static atomic_int fired;

void fault_fail_at(long n)
{
	atomic_store(&countdown, n);
	if (n > 0) {            /* disarming keeps the counts for reading */
		atomic_store(&fired, 0);
		atomic_store(&calls, 0);
	}
}

int fault_fired(void)
{
	return atomic_load(&fired);
}

long fault_calls(void)
{
	return atomic_load(&calls);
}

/* Should this allocation fail? */
static int hit(void)
{
	long c;

	if (atomic_load_explicit(&countdown, memory_order_relaxed) <= 0)
		return 0;
	atomic_fetch_add(&calls, 1);
	c = atomic_fetch_sub(&countdown, 1);
	if (c == 1) {
		if (getenv("OPMIG_FAULT_TRACE")) {  /* who asked */
			void *bt[24];

			backtrace_symbols_fd(bt, backtrace(bt, 24), 2);
		}
		atomic_store(&fired, 1);
		return 1;
	}
	if (c <= 0)     /* raced below zero: off */
		atomic_store(&countdown, 0);
	return 0;
}

void *__wrap_malloc(size_t n)
{
	return hit() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
	return hit() ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
	/* realloc(p, 0) frees: not an allocation that can fail */
	return n && hit() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return hit() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return hit() ? NULL : __real_strndup(s, n);
}
