/* value.c: lifecycle of runtime values: reference counting, tensor,
 * sequence and optional construction, deep copies, memory accounting and
 * a one-line description. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/rt_int.h"

struct rt_value *rt_value_ref(struct rt_value *v)
{
	if (v)
		v->refs++;
	return v;
}

static void uncharge(struct rt_value *v)
{
	if (v->mem)
		v->mem->cur -= v->nbytes;
	v->nbytes = 0;
}

void rt_value_detach(struct rt_value *v)
{
	/* a kept result stays the session's until it is freed (fold.c) */
	if (!v || (v->flags & RT_VALUE_KEPT))
		return;
	uncharge(v);
	v->mem = NULL;
	rt_value_detach(v->base);
	for (size_t i = 0; i < v->n; i++)
		rt_value_detach(v->items[i]);
}

void rt_value_unref(struct rt_value *v)
{
	if (!v || --v->refs > 0)
		return;
	if (v->kind == RT_TENSOR && v->dtype == IR_DTYPE_STRING &&
	    (v->flags & RT_VALUE_OWNS_DATA) && v->data) {
		char **s = v->data;

		for (int64_t i = 0; i < v->numel; i++)
			free(s[i]);
	}
	if (v->flags & RT_VALUE_OWNS_DATA)
		rt_big_free(v->data);
	uncharge(v);
	rt_value_unref(v->base);
	for (size_t i = 0; i < v->n; i++)
		rt_value_unref(v->items[i]);
	free(v->items);
	free(v);
}

size_t rt_dtype_size(int dtype)
{
	const struct ir_dtype_info *di = ir_dtype_get(dtype);

	if (!di)
		return 0;
	if (dtype == IR_DTYPE_STRING)
		return sizeof(char *);
	if (di->bits < 8)
		return 1;
	return di->bits / 8;
}

int rt_mem_charge(struct rt_mem *mem, int64_t bytes, struct ir_diag *d)
{
	if (!mem)
		return 0;
	if (mem->limit && mem->cur + bytes > mem->limit)
		return ir_diag_error(d, IR_ENOMEM,
				     "memory limit of %lld bytes reached (%lld in use, %lld more wanted)",
				     (long long)mem->limit, (long long)mem->cur,
				     (long long)bytes);
	mem->cur += bytes;
	if (mem->cur > mem->peak)
		mem->peak = mem->cur;
	return 0;
}

/* A zeroed value struct.  Not calloc: glibc's calloc skips the thread
 * cache, so the struct of the next tensor was carved out of the block the
 * last freed tensor left, which then no longer fit a tensor of its size:
 * the heap grew by one tensor in `validate --layerwise`, whose two
 * interleaved runs free and allocate same-sized tensors in turn. */
struct rt_value *rt_value_alloc(void)
{
	struct rt_value *v = malloc(sizeof(*v));

	if (v)
		memset(v, 0, sizeof(*v));
	return v;
}

/* Bytes of physical memory (INT64_MAX when unknown). */
static int64_t phys_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || size <= 0 || pages > INT64_MAX / size)
		return INT64_MAX;
	return (int64_t)pages * size;
}

int rt_tensor_new(struct rt_mem *mem, int dtype, int rank,
		  const int64_t *dims, struct rt_value **out,
		  struct ir_diag *d)
{
	size_t es = rt_dtype_size(dtype);
	int64_t n = 1, bytes;
	struct rt_value *v;

	*out = NULL;
	if (!es)
		return diag_error(d, "tensor of unsupported dtype %s",
				  ir_dtype_name(dtype));
	if (rank < 0 || rank > RT_MAX_RANK)
		return diag_error(d, "tensor of rank %d (at most %d supported)",
				  rank, RT_MAX_RANK);
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0)
			return diag_error(d, "negative dimension %lld",
					  (long long)dims[i]);
		if (dims[i] && n > INT64_MAX / 16 / dims[i])
			return diag_error(d, "tensor too large (element count overflows)");
		n *= dims[i];
	}
	bytes = n * (int64_t)es;
	if ((uint64_t)bytes > SIZE_MAX / 2)
		return ir_diag_error(d, IR_ENOMEM, "tensor of %lld bytes too large",
				     (long long)bytes);
	/* a model asking for more than the machine has (ConstantOfShape of
	 * [10^6, 10^6]) is refused as bad input, before malloc is asked */
	if (bytes > ((int64_t)1 << 30) && bytes > phys_memory())
		return diag_error(d, "tensor of %lld bytes is larger than this machine's memory (%lld bytes)",
				  (long long)bytes, (long long)phys_memory());
	if (rt_mem_charge(mem, bytes, d) < 0)
		return IR_ENOMEM;
	if (!(v = rt_value_alloc()))
		goto oom;
	v->data = dtype == IR_DTYPE_STRING ? calloc((size_t)n ? (size_t)n : 1, es)
					   : rt_big_alloc((size_t)bytes);
	if (!v->data)
		goto oom;
	v->refs = 1;
	v->kind = RT_TENSOR;
	v->dtype = dtype;
	v->rank = rank;
	if (rank)
		memcpy(v->dims, dims, (size_t)rank * sizeof(*dims));
	v->numel = n;
	v->nbytes = bytes;
	v->mem = mem;
	v->flags = RT_VALUE_OWNS_DATA;
	*out = v;
	return 0;
oom:
	if (mem)
		mem->cur -= bytes;
	free(v);
	return ir_diag_error(d, IR_ENOMEM, "out of memory allocating %lld bytes",
			     (long long)bytes);
}

static int container_new(enum rt_kind kind, int dtype, struct rt_value **out,
			 struct ir_diag *d)
{
	struct rt_value *v = rt_value_alloc();

	*out = v;
	if (!v)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	v->refs = 1;
	v->kind = kind;
	v->dtype = dtype;
	v->elem_kind = RT_TENSOR;
	return 0;
}

int rt_seq_new(int dtype, struct rt_value **out, struct ir_diag *d)
{
	return container_new(RT_SEQUENCE, dtype, out, d);
}

int rt_seq_push(struct rt_value *seq, struct rt_value *item, struct ir_diag *d)
{
	if (seq->n == seq->cap) {
		size_t cap = seq->cap ? seq->cap * 2 : 4;
		struct rt_value **p = realloc(seq->items, cap * sizeof(*p));

		if (!p) {
			rt_value_unref(item);
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		}
		seq->items = p;
		seq->cap = cap;
	}
	seq->items[seq->n++] = item;
	if (!seq->dtype && item)
		seq->dtype = item->dtype;
	return 0;
}

int rt_optional_new(int dtype, int elem_kind, struct rt_value *content,
		    struct rt_value **out, struct ir_diag *d)
{
	int rc = container_new(RT_OPTIONAL, dtype, out, d);

	if (rc < 0) {
		rt_value_unref(content);
		return rc;
	}
	(*out)->elem_kind = elem_kind;
	if (content) {
		(*out)->elem_kind = (int)content->kind;
		if (!dtype)
			(*out)->dtype = content->dtype;
		return rt_seq_push(*out, content, d);
	}
	return 0;
}

int rt_tensor_clone(struct rt_mem *mem, const struct rt_value *t,
		    struct rt_value **out, struct ir_diag *d)
{
	int rc = rt_tensor_new(mem, t->dtype, t->rank, t->dims, out, d);

	if (rc < 0)
		return rc;
	if (t->dtype != IR_DTYPE_STRING) {
		if (t->numel)
			memcpy((*out)->data, t->data,
			       (size_t)t->numel * rt_dtype_size(t->dtype));
		return 0;
	}
	for (int64_t i = 0; i < t->numel; i++) {
		const char *s = ((char *const *)t->data)[i];

		if (!(((char **)(*out)->data)[i] = strdup(s ? s : ""))) {
			rt_value_unref(*out);
			*out = NULL;
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		}
	}
	return 0;
}

void rt_value_describe(const struct rt_value *v, char *buf, size_t size)
{
	size_t o;

	if (!v) {
		snprintf(buf, size, "none");
		return;
	}
	switch (v->kind) {
	case RT_SEQUENCE:
		snprintf(buf, size, "seq(%s) of %zu", ir_dtype_name(v->dtype), v->n);
		return;
	case RT_OPTIONAL:
		if (!v->n) {
			snprintf(buf, size, "optional(empty)");
			return;
		}
		o = (size_t)snprintf(buf, size, "optional(");
		if (o < size)
			rt_value_describe(v->items[0], buf + o, size - o);
		o = strlen(buf);
		if (o + 1 < size)
			snprintf(buf + o, size - o, ")");
		return;
	case RT_MAP:
		snprintf(buf, size, "map(%s,%s) of %lld", ir_dtype_name(v->dtype),
			 v->n > 1 ? ir_dtype_name(v->items[1]->dtype) : "?",
			 v->n ? (long long)v->items[0]->numel : 0LL);
		return;
	case RT_TENSOR:
		break;
	}
	o = (size_t)snprintf(buf, size, "%s[", ir_dtype_name(v->dtype));
	for (int i = 0; i < v->rank && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? "," : "",
				      (long long)v->dims[i]);
	if (o < size)
		snprintf(buf + o, size - o, "]");
}

double rt_value_get_f64(const struct rt_value *v, int64_t i)
{
	return rt_load_f64(v->dtype, v->data, i);
}

void rt_value_set_f64(struct rt_value *v, int64_t i, double x)
{
	rt_store_f64(v->dtype, v->data, i, x);
}
