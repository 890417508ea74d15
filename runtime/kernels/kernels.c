/* kernels.c: the kernel registry: one line per family table (each k_*.c
 * file ends with its own sorted table), merged once into one table sorted
 * by (domain, op, since_min) and searched with bsearch; and the test hook
 * OPMIG_NO_KERNEL that hides kernels from the lookup. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_int.h"

/* The family files, one name each: runtime/kernels/k_<name>.c defines
 * rt_kernels_<name>[] and rt_n_kernels_<name>. */
#define RT_FAMILIES(X) \
	X(core) \
	X(elem) \
	X(binary) \
	X(act) \
	X(cast) \
	X(reduce) \
	X(softmax) \
	X(sort) \
	X(einsum) \
	X(conv) \
	X(pool) \
	X(matmul) \
	X(qlinear) \
	X(norm) \
	X(rnn) \
	X(quant) \
	X(attn) \
	X(contrib) \
	X(nbits) \
	X(shape) \
	X(gather) \
	X(slice) \
	X(resize) \
	X(layout) \
	X(control) \
	X(seq) \
	X(optional) \
	X(misc) \
	X(random) \
	X(string) \
	X(ml) \
	X(signal) \
	X(detect) \
	X(train)

#define FAMILY(x) extern const struct rt_kernel rt_kernels_##x[]; \
	extern const size_t rt_n_kernels_##x;
RT_FAMILIES(FAMILY)
#undef FAMILY
#define FAMILY(x) { #x, rt_kernels_##x, &rt_n_kernels_##x },
const struct rt_family rt_families[] = { RT_FAMILIES(FAMILY) };
#undef FAMILY
const size_t rt_n_families = sizeof(rt_families) / sizeof(rt_families[0]);

static const struct rt_kernel **merged;
static size_t n_merged;
static pthread_once_t once = PTHREAD_ONCE_INIT;
/* OPMIG_NO_KERNEL=Op[,Op...], read once with the table: rt_kernel_find
 * acts as if those ops (of any domain) had no kernel, so the fallback to
 * spec function bodies (plan.c) can be tested on ops that have a kernel.
 * A copy of the variable, kept for the whole program; NULL when unset. */
static char *hidden;

static int cmp_kernel(const void *a, const void *b)
{
	const struct rt_kernel *x = *(const struct rt_kernel *const *)a;
	const struct rt_kernel *y = *(const struct rt_kernel *const *)b;
	int c = strcmp(x->domain, y->domain);

	if (!c)
		c = strcmp(x->op, y->op);
	if (!c)
		c = (x->since_min > y->since_min) - (x->since_min < y->since_min);
	return c;
}

static void build(void)
{
	size_t n = 0, k = 0;
	const char *env;

	for (size_t f = 0; f < rt_n_families; f++)
		n += *rt_families[f].n;
	if (!(merged = malloc((n ? n : 1) * sizeof(*merged))))
		return;
	for (size_t f = 0; f < rt_n_families; f++)
		for (size_t i = 0; i < *rt_families[f].n; i++)
			merged[k++] = &rt_families[f].kernels[i];
	qsort(merged, n, sizeof(*merged), cmp_kernel);
	n_merged = n;
	if ((env = getenv("OPMIG_NO_KERNEL")) && *env)
		hidden = strdup(env);
}

/* Is op named in OPMIG_NO_KERNEL's comma-separated list? */
static int is_hidden(const char *op)
{
	size_t n = strlen(op);

	for (const char *p = hidden; p && *p; ) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len == n && !memcmp(p, op, n))
			return 1;
		p += len + (comma != NULL);
	}
	return 0;
}

size_t rt_kernel_count(void)
{
	pthread_once(&once, build);
	return n_merged;
}

const struct rt_kernel *rt_kernel_at(size_t i)
{
	pthread_once(&once, build);
	return i < n_merged ? merged[i] : NULL;
}

void rt_kernel_hide(const char *ops)
{
	pthread_once(&once, build);
	free(hidden);
	hidden = ops && *ops ? strdup(ops) : NULL;
}

const struct rt_kernel *rt_kernel_find(const char *domain, const char *op,
				       int since_version)
{
	size_t lo = 0, hi;

	if (!domain || !*domain)
		domain = "ai.onnx";
	hi = rt_kernel_count();
	if (hidden && is_hidden(op))
		return NULL;
	/* first entry >= (domain, op) */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(merged[mid]->domain, domain);

		if (!c)
			c = strcmp(merged[mid]->op, op);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n_merged && !strcmp(merged[lo]->domain, domain) &&
	       !strcmp(merged[lo]->op, op); lo++)
		if (merged[lo]->since_min <= since_version &&
		    since_version <= merged[lo]->since_max)
			return merged[lo];
	return NULL;
}
