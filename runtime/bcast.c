/* bcast.c: the one broadcasting loop every multi-input elementwise kernel
 * shares (rt_bcast_run in rt_int.h): dims are collapsed where all inputs
 * agree, runs follow the innermost dimension, and big outputs are split by
 * rows over the session's threads. */
#include <string.h>

#include "runtime/rt_int.h"

struct bplan {
	size_t n;
	int rank;                                 /* after collapsing */
	int64_t dims[RT_MAX_RANK];
	int64_t strides[RT_BCAST_MAX][RT_MAX_RANK];
	int64_t step[RT_BCAST_MAX + 1];
	rt_bcast_fn fn;
	void *ctx;
};

/* Rows [begin, end): each row is one run along the last dim. */
static void rows(void *arg, int64_t begin, int64_t end)
{
	const struct bplan *p = arg;
	int64_t len = p->rank ? p->dims[p->rank - 1] : 1;
	int64_t off[RT_BCAST_MAX + 1];

	for (int64_t r = begin; r < end; r++) {
		int64_t rem = r;

		for (size_t i = 0; i < p->n; i++)
			off[i] = 0;
		for (int d = p->rank - 2; d >= 0; d--) {
			int64_t idx = rem % p->dims[d];

			rem /= p->dims[d];
			for (size_t i = 0; i < p->n; i++)
				off[i] += idx * p->strides[i][d];
		}
		off[p->n] = r * len;
		p->fn(p->ctx, off, p->step, len);
	}
}

void rt_bcast_run(struct rt_kctx *k, struct rt_value *const *ts, size_t n,
		  int rank, const int64_t *dims, rt_bcast_fn fn, void *ctx)
{
	struct bplan p;
	int64_t st[RT_BCAST_MAX][RT_MAX_RANK], total = rt_numel(rank, dims);
	int64_t n_rows;

	if (total == 0)
		return;
	memset(&p, 0, sizeof(p));
	p.n = n;
	p.fn = fn;
	p.ctx = ctx;
	for (size_t i = 0; i < n; i++)
		rt_broadcast_strides(ts[i], rank, dims, st[i]);
	/* collapse adjacent dims whose strides chain for every input */
	for (int d = 0; d < rank; d++) {
		int merge = p.rank > 0 && dims[d] != 1;

		if (dims[d] == 1 && rank > 1)
			continue;   /* size-1 dims never matter */
		for (size_t i = 0; merge && i < n; i++) {
			int64_t prev = p.strides[i][p.rank - 1];

			merge = prev == st[i][d] * dims[d] ||
				(prev == 0 && st[i][d] == 0);
		}
		if (merge) {
			p.dims[p.rank - 1] *= dims[d];
			for (size_t i = 0; i < n; i++)
				p.strides[i][p.rank - 1] = st[i][d];
		} else {
			p.dims[p.rank] = dims[d];
			for (size_t i = 0; i < n; i++)
				p.strides[i][p.rank] = st[i][d];
			p.rank++;
		}
	}
	if (p.rank == 0) {
		p.rank = 1;
		p.dims[0] = 1;
	}
	for (size_t i = 0; i < n; i++)
		p.step[i] = p.strides[i][p.rank - 1] ? 1 : 0;
	p.step[n] = 1;
	n_rows = total / p.dims[p.rank - 1];
	if (total >= 65536 && n_rows > 1)
		rt_parallel_for(k, n_rows, 1 + 16384 / p.dims[p.rank - 1], rows, &p);
	else
		rows(&p, 0, n_rows);
}
