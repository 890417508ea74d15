/* kctx.c: the kernel-facing helpers: error messages naming the node,
 * input access, attributes (resolving references inside functions),
 * output allocation and views, axes, shapes and numpy broadcasting. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/exec_int.h"

const char *rt_node_where(const struct ir_node *n, char *buf)
{
	if (n->name && *n->name)
		snprintf(buf, RT_WHERE_SIZE, "node '%.120s' (%.50s)", n->name,
			 ir_s(n->op_type));
	else
		snprintf(buf, RT_WHERE_SIZE, "node #%zu (%.50s)", n->index,
			 ir_s(n->op_type));
	return buf;
}

int rt_err(struct rt_kctx *k, const char *fmt, ...)
{
	char msg[400], w[RT_WHERE_SIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ir_diag_error(k->d, IR_EINVAL, "%s: %s", rt_node_where(k->node, w), msg);
}

int rt_oom(struct rt_kctx *k)
{
	char w[RT_WHERE_SIZE];

	return ir_diag_error(k->d, IR_ENOMEM, "%s: out of memory",
			     rt_node_where(k->node, w));
}

/* A failure of a lower layer (allocation, limit) reported by `d`-style
 * callees gets the node prefix too. */
static int prefixed(struct rt_kctx *k, int rc, struct ir_diag *sub)
{
	char w[RT_WHERE_SIZE];

	return ir_diag_error(k->d, rc, "%s: %s", rt_node_where(k->node, w), sub->msg);
}

int rt_in_tensor(struct rt_kctx *k, size_t i, struct rt_value **out)
{
	struct rt_value *v = rt_in(k, i);

	*out = v;
	if (!v)
		return rt_err(k, "input %zu is missing", i);
	if (v->kind != RT_TENSOR)
		return rt_err(k, "input %zu is a %s, not a tensor", i,
			      v->kind == RT_SEQUENCE ? "sequence" :
			      v->kind == RT_OPTIONAL ? "optional" : "map");
	return 0;
}

int rt_in_ints(struct rt_kctx *k, size_t i, int64_t **vals, size_t *n)
{
	struct rt_value *v;
	int rc;

	*vals = NULL;
	*n = 0;
	if ((rc = rt_in_tensor(k, i, &v)) < 0)
		return rc;
	if (v->dtype == IR_DTYPE_STRING)
		return rt_err(k, "input %zu: expected numbers, got strings", i);
	if (!(*vals = malloc((size_t)(v->numel ? v->numel : 1) * sizeof(int64_t))))
		return rt_oom(k);
	if (v->dtype == IR_DTYPE_INT64)
		memcpy(*vals, v->data, (size_t)v->numel * sizeof(int64_t));
	else if (v->dtype == IR_DTYPE_INT32)
		for (int64_t j = 0; j < v->numel; j++)
			(*vals)[j] = ((const int32_t *)v->data)[j];
	else
		for (int64_t j = 0; j < v->numel; j++)
			(*vals)[j] = rt_load_i64(v->dtype, v->data, j);
	*n = (size_t)v->numel;
	return 0;
}

int rt_in_int(struct rt_kctx *k, size_t i, int64_t *out)
{
	struct rt_value *v;
	int rc;

	if ((rc = rt_in_tensor(k, i, &v)) < 0)
		return rc;
	if (v->numel != 1 || v->dtype == IR_DTYPE_STRING)
		return rt_err(k, "input %zu must be a single number, has %lld elements",
			      i, (long long)v->numel);
	*out = rt_load_i64(v->dtype, v->data, 0);
	return 0;
}

int rt_in_double(struct rt_kctx *k, size_t i, double *out)
{
	struct rt_value *v;
	int rc;

	if ((rc = rt_in_tensor(k, i, &v)) < 0)
		return rc;
	if (v->numel != 1 || v->dtype == IR_DTYPE_STRING)
		return rt_err(k, "input %zu must be a single number, has %lld elements",
			      i, (long long)v->numel);
	*out = rt_load_f64(v->dtype, v->data, 0);
	return 0;
}

/* ---- attributes ------------------------------------------------------ */

const struct ir_attr *rt_attr(struct rt_kctx *k, const char *name)
{
	return rt_frame_attr(k->f, k->node, name);
}

int64_t rt_attr_int(struct rt_kctx *k, const char *name, int64_t dflt)
{
	const struct ir_attr *a = rt_attr(k, name);

	return a && a->type == IR_ATTR_INT ? a->i : dflt;
}

float rt_attr_float(struct rt_kctx *k, const char *name, float dflt)
{
	const struct ir_attr *a = rt_attr(k, name);

	if (a && a->type == IR_ATTR_INT)
		return (float)a->i;
	return a && a->type == IR_ATTR_FLOAT ? a->f : dflt;
}

const char *rt_attr_str(struct rt_kctx *k, const char *name, const char *dflt)
{
	const struct ir_attr *a = rt_attr(k, name);

	return a && a->type == IR_ATTR_STRING && a->s ? (const char *)a->s : dflt;
}

const int64_t *rt_attr_ints(struct rt_kctx *k, const char *name, size_t *n)
{
	const struct ir_attr *a = rt_attr(k, name);

	*n = 0;
	if (!a || a->type != IR_ATTR_INTS)
		return NULL;
	*n = a->n_ints;
	return a->ints;
}

const float *rt_attr_floats(struct rt_kctx *k, const char *name, size_t *n)
{
	const struct ir_attr *a = rt_attr(k, name);

	*n = 0;
	if (!a || a->type != IR_ATTR_FLOATS)
		return NULL;
	*n = a->n_floats;
	return a->floats;
}

int rt_attr_tensor(struct rt_kctx *k, const char *name, struct rt_value **out)
{
	const struct ir_attr *a = rt_attr(k, name);
	struct ir_diag sub;
	int rc;

	*out = NULL;
	if (!a || a->type != IR_ATTR_TENSOR || !a->t)
		return rt_err(k, "attribute '%s' (a tensor) is missing", name);
	ir_diag_init(&sub);
	if ((rc = rt_value_from_ir(k->mem, a->t, out, &sub)) < 0)
		return prefixed(k, rc, &sub);
	return 0;
}

const struct ir_graph *rt_attr_graph(struct rt_kctx *k, const char *name)
{
	const struct ir_attr *a = rt_attr(k, name);

	return a && a->type == IR_ATTR_GRAPH ? a->g : NULL;
}

/* ---- outputs --------------------------------------------------------- */

int rt_out_wanted(struct rt_kctx *k, size_t i)
{
	return i < k->node->n_outputs && k->node->outputs[i];
}

int rt_out_set(struct rt_kctx *k, size_t i, struct rt_value *v)
{
	if (i >= k->n_out) {
		rt_value_unref(v);
		return rt_err(k, "output %zu out of range", i);
	}
	rt_value_unref(k->out[i]);
	k->out[i] = v;
	return 0;
}

struct rt_value *rt_out_tensor(struct rt_kctx *k, size_t i, int dtype,
			       int rank, const int64_t *dims)
{
	struct rt_value *v;
	struct ir_diag sub;
	int rc;

	/* into its place in a Concat's result (catbuf.c) */
	if (k->np && k->np->cat_dest && (v = rt_cat_out(k, i, dtype, rank, dims)))
		return v;
	ir_diag_init(&sub);
	if ((rc = rt_tensor_new(k->mem, dtype, rank, dims, &v, &sub)) < 0) {
		prefixed(k, rc, &sub);
		return NULL;
	}
	if (rt_out_set(k, i, v) < 0)
		return NULL;
	return v;
}

/* Can input `in`'s tensor become an output: its own data, referenced by
 * this frame's slot alone, and that slot released after this node?  Never
 * a constant the session holds: an initializer's copy (the plan's
 * reference) or a kept result of a constant node (fold.c's reference, and
 * RT_VALUE_KEPT said explicitly). */
static int owns(const struct rt_kctx *k, const struct rt_value *v)
{
	return !v->base && (v->flags & RT_VALUE_OWNS_DATA) && v->mem == k->mem &&
	       !(v->flags & (RT_VALUE_READONLY | RT_VALUE_KEPT));
}

static int in_dies_here(struct rt_kctx *k, size_t in, const struct rt_value *v)
{
	struct rt_ref r;

	if (!k->np || !k->f || in >= k->n_in || in >= k->node->n_inputs || !v ||
	    v->refs != 1 || v->kind != RT_TENSOR || v->dtype == IR_DTYPE_STRING ||
	    (v->flags & (RT_VALUE_READONLY | RT_VALUE_KEPT)) ||
	    /* its own data, a region of a Concat's result (catbuf.c), or a
	     * view (Reshape's, a Transpose's, layout_cl.c) of data no other
	     * value holds */
	    (!(v->flags & RT_VALUE_REGION) && !owns(k, v) &&
	     !(v->base && v->base->refs == 1 && v->base->kind == RT_TENSOR && owns(k, v->base))))
		return 0;
	r = k->np->in[in];
	if (r.up != 0 || r.slot < 0 || k->f->vals[r.slot] != v)
		return 0;
	for (size_t j = 0; j < k->np->n_release; j++)
		if (k->np->release[j] == r.slot)
			return 1;
	return 0;
}

struct rt_value *rt_out_tensor_reuse(struct rt_kctx *k, size_t i,
				     unsigned ins, int dtype, int rank,
				     const int64_t *dims)
{
	for (size_t in = 0; in < k->n_in && in < 8 * sizeof(ins); in++) {
		struct rt_value *v = k->in[in];

		if (!(ins & (1u << in)) || !in_dies_here(k, in, v) ||
		    v->dtype != dtype || v->rank != rank ||
		    (rank && memcmp(v->dims, dims, (size_t)rank * sizeof(*dims))))
			continue;
		if (rt_out_set(k, i, rt_value_ref(v)) < 0)
			return NULL;
		return v;
	}
	return rt_out_tensor(k, i, dtype, rank, dims);
}

int rt_out_view(struct rt_kctx *k, size_t i, struct rt_value *base, int rank,
		const int64_t *dims)
{
	struct rt_value *v;

	if (rank > RT_MAX_RANK)
		return rt_err(k, "rank %d above the supported %d", rank, RT_MAX_RANK);
	if (rt_numel(rank, dims) != base->numel)
		return rt_err(k, "cannot view %lld elements as %lld",
			      (long long)base->numel,
			      (long long)rt_numel(rank, dims));
	if (base->dtype == IR_DTYPE_STRING) {
		struct ir_diag sub;
		int rc;

		ir_diag_init(&sub);
		if ((rc = rt_tensor_clone(k->mem, base, &v, &sub)) < 0)
			return prefixed(k, rc, &sub);
	} else {
		if (!(v = rt_value_alloc()))
			return rt_oom(k);
		v->refs = 1;
		v->kind = RT_TENSOR;
		v->dtype = base->dtype;
		v->data = base->data;
		v->numel = base->numel;
		v->flags = base->flags & RT_VALUE_READONLY;
		v->base = rt_value_ref(base);
	}
	v->rank = rank;
	if (rank)
		memcpy(v->dims, dims, (size_t)rank * sizeof(*dims));
	return rt_out_set(k, i, v);
}

/* ---- shapes ---------------------------------------------------------- */

int64_t rt_numel(int rank, const int64_t *dims)
{
	int64_t n = 1;

	for (int i = 0; i < rank; i++)
		n *= dims[i];
	return n;
}

int rt_axis(struct rt_kctx *k, int64_t axis, int rank, int *out)
{
	if (axis < -rank || axis >= (rank ? rank : 1))
		return rt_err(k, "axis %lld out of range for rank %d",
			      (long long)axis, rank);
	*out = (int)(axis < 0 ? axis + rank : axis);
	return 0;
}

void rt_dims_text(int rank, const int64_t *dims, char *buf, size_t size)
{
	size_t o = (size_t)snprintf(buf, size, "[");

	for (int i = 0; i < rank && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? "," : "",
				      (long long)dims[i]);
	if (o < size)
		snprintf(buf + o, size - o, "]");
}

int rt_broadcast_shape(struct rt_kctx *k, struct rt_value *const *ts, size_t n,
		       int *rank, int64_t *dims)
{
	int r = 0;

	for (size_t i = 0; i < n; i++)
		if (ts[i] && ts[i]->rank > r)
			r = ts[i]->rank;
	for (int j = 0; j < r; j++)
		dims[j] = 1;
	for (size_t i = 0; i < n; i++) {
		const struct rt_value *t = ts[i];

		if (!t)
			continue;
		for (int j = 0; j < t->rank; j++) {
			int64_t *o = &dims[r - t->rank + j], x = t->dims[j];

			if (x == *o || x == 1)
				continue;
			if (*o == 1) {
				*o = x;
				continue;
			}
			{
				char a[128], b[128];

				rt_dims_text(t->rank, t->dims, a, sizeof(a));
				rt_dims_text(ts[0]->rank, ts[0]->dims, b, sizeof(b));
				return rt_err(k, "shapes %s and %s do not broadcast", b, a);
			}
		}
	}
	*rank = r;
	return 0;
}

void rt_broadcast_strides(const struct rt_value *t, int rank,
			  const int64_t *dims, int64_t *strides)
{
	int64_t s = 1;

	for (int j = rank - 1; j >= 0; j--) {
		int tj = j - (rank - t->rank);

		if (tj < 0 || t->dims[tj] == 1 || dims[j] == 1) {
			strides[j] = 0;
		} else {
			strides[j] = s;
		}
		if (tj >= 0)
			s *= t->dims[tj];
	}
}

/* An initializer, or a result of a constant node the session keeps: that
 * value object (and its data) stays the same until the session is freed,
 * so a cache keyed by its data pointer cannot see another tensor at the
 * same address.  A constant node's result not kept (a run under a memory
 * limit that left no room, an observer) is a new tensor every run: no. */
int rt_in_const(struct rt_kctx *k, size_t i)
{
	const struct ir_node *n = k->node;
	const struct rt_value *v = rt_in(k, i);

	if (v && (v->flags & RT_VALUE_KEPT))
		return 1;
	return i < n->n_inputs && n->inputs[i] &&
	       (n->inputs[i]->init || n->inputs[i]->sparse_init);
}

void *rt_node_cache(struct rt_kctx *k)
{
	return k->np ? k->np->cache : NULL;
}

/* The node may take a cache of `bytes`: it has none, the session keeps
 * weight caches, and the memory limit has room. */
static int cache_may(struct rt_kctx *k, int64_t bytes)
{
	return k->np && !k->np->cache && k->mem && !k->s->o.no_weight_cache &&
	       (!k->mem->limit || k->mem->cur + bytes <= k->mem->limit);
}

int rt_node_cache_worth(struct rt_kctx *k, int64_t bytes)
{
	return cache_may(k, bytes) && k->np->runs > 0;
}

void *rt_node_cache_shared(struct rt_kctx *k, const struct rt_share_key *key)
{
	void *p;

	if (!cache_may(k, 0) || k->lowp_temp || !(p = rt_shared_take(k->s, key)))
		return NULL;
	k->np->cache = p;   /* not the node's to free, nothing charged again */
	k->np->cache_free = NULL;
	k->np->cache_bytes = 0;
	k->np->cache_mem = k->mem;
	return p;
}

int rt_node_cache_set_shared(struct rt_kctx *k, void *p, void (*free_fn)(void *),
			     int64_t bytes, const struct rt_share_key *key)
{
	if (rt_node_cache_set(k, p, free_fn, bytes) < 0)
		return -1;
	if (!k->lowp_temp && rt_shared_add(k->s, key, p, free_fn, bytes) == 0)
		k->np->cache_free = NULL;   /* the session frees it, after the plans */
	return 0;
}

int rt_node_cache_set(struct rt_kctx *k, void *p, void (*free_fn)(void *),
		      int64_t bytes)
{
	struct rt_nplan *np = k->np;
	struct rt_mem *mem = k->mem;

	if (!cache_may(k, bytes) || rt_mem_charge(mem, bytes, NULL) < 0)
		return -1;
	np->cache = p;
	np->cache_free = free_fn;
	np->cache_bytes = bytes;
	np->cache_mem = mem;
	return 0;
}
