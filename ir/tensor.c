/* tensor.c: tensor payload access: element counts and byte sizes, the
 * little-endian raw view of any storage form (raw_data, typed fields decoded
 * into a cache, or a window of a mapped external file), and a visitor over
 * every tensor a model holds. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir_int.h"

int64_t ir_tensor_numel(const struct ir_tensor *t)
{
	int64_t n = 1;

	for (size_t i = 0; i < t->n_dims; i++) {
		if (t->dims[i] < 0)
			return -1;
		if (t->dims[i] && n > INT64_MAX / t->dims[i])
			return -1;
		n *= t->dims[i];
	}
	return n;
}

int64_t ir_tensor_nbytes(const struct ir_tensor *t)
{
	int64_t n = ir_tensor_numel(t);

	if (n < 0)
		return -1;
	if (t->dtype == IR_DTYPE_STRING) {
		int64_t s = 0;

		for (size_t i = 0; t->strings && i < t->n_typed; i++)
			s += (int64_t)t->string_lens[i];
		return s;
	}
	return ir_dtype_raw_size(t->dtype, n);
}

static void store_le(uint8_t *dst, uint64_t v, unsigned bytes)
{
	for (unsigned b = 0; b < bytes; b++)
		dst[b] = (uint8_t)(v >> (8 * b));
}

/* Decode typed-field storage into t->cache (little-endian raw form). */
static int decode_typed(struct ir_tensor *t, size_t len, struct ir_diag *d)
{
	const struct ir_dtype_info *di = ir_dtype_get(t->dtype);
	int64_t n = ir_tensor_numel(t);
	uint8_t *out;

	if (!di || di->field != t->field)
		return diag_error(d, "tensor '%s': %s data stored in the wrong typed field",
				  ir_s(t->name), ir_dtype_name(t->dtype));
	if (!(out = calloc(1, len ? len : 1)))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	if (di->bits == 4) {
		const int32_t *v = t->typed;
		size_t packed = (size_t)(n / 2 + (n & 1));

		if (t->n_typed == packed) {
			for (size_t i = 0; i < packed; i++)
				out[i] = (uint8_t)v[i];
		} else {
			for (size_t i = 0; i < (size_t)n; i++)
				out[i / 2] |= (uint8_t)((v[i] & 15) << (4 * (i & 1)));
		}
	} else if (t->field == IR_FIELD_INT32) {
		const int32_t *v = t->typed;

		for (size_t i = 0; i < (size_t)n; i++)
			store_le(out + i * (di->bits / 8), (uint32_t)v[i],
				 di->bits / 8);
	} else if (t->field == IR_FIELD_UINT64 && di->bits == 32) {
		const uint64_t *v = t->typed;

		for (size_t i = 0; i < (size_t)n; i++)
			store_le(out + 4 * i, v[i], 4);
	} else {
		memcpy(out, t->typed, len); /* float, int64, double, uint64 */
	}
	free(t->cache);
	t->cache = out;
	return 0;
}

int ir_tensor_data(struct ir_tensor *t, const uint8_t **data, size_t *len,
		   struct ir_diag *d)
{
	int64_t want = ir_tensor_nbytes(t);
	int rc;

	if (t->dtype == IR_DTYPE_STRING || want < 0)
		return diag_error(d, "tensor '%s': no numeric payload (%s)",
				  ir_s(t->name), ir_dtype_name(t->dtype));
	switch (t->storage) {
	case IR_STORE_RAW:
		*data = t->raw;
		*len = t->raw_len;
		break;
	case IR_STORE_EXTERNAL:
		if (!t->ext)
			return diag_error(d, "tensor '%s': external data not bound",
					  ir_s(t->name));
		if (!t->win && (rc = ir_extfile_window(t->ext, t->ext_offset, t->ext_length,
						       &t->win, &t->win_len, d)) < 0)
			return rc;
		*data = t->win ? t->win + (t->win_len - (size_t)t->ext_length) : NULL;
		*len = (size_t)t->ext_length;
		break;
	case IR_STORE_TYPED:
		/* Element counts were checked by ir_model_verify. */
		if (!t->cache && (rc = decode_typed(t, (size_t)want, d)) < 0)
			return rc;
		*data = t->cache;
		*len = (size_t)want;
		break;
	case IR_STORE_DERIVED:
		if ((rc = ir_derived_materialize(t, d)) < 0)
			return rc;
		*data = t->cache;
		*len = (size_t)want;
		break;
	default:
		*data = NULL;
		*len = 0;
	}
	return 0;
}

static int visit_tensor(struct ir_tensor *t, ir_tensor_visit_fn fn, void *ctx)
{
	return t ? fn(t, ctx) : 0;
}

static int visit_sparse(struct ir_sparse *s, ir_tensor_visit_fn fn, void *ctx)
{
	int rc;

	if (!s)
		return 0;
	if ((rc = visit_tensor(s->values, fn, ctx)) < 0)
		return rc;
	return visit_tensor(s->indices, fn, ctx);
}

struct tensor_walk {
	ir_tensor_visit_fn fn;
	void *ctx;
};

static int visit_graph(struct ir_graph *g, int depth, void *ctx)
{
	struct tensor_walk *w = ctx;
	int rc = 0;

	(void)depth;
	for (size_t i = 0; rc == 0 && i < g->n_inits; i++)
		rc = visit_tensor(g->inits[i], w->fn, w->ctx);
	for (size_t i = 0; rc == 0 && i < g->n_sparse_inits; i++)
		rc = visit_sparse(g->sparse_inits[i], w->fn, w->ctx);
	for (size_t i = 0; rc == 0 && i < g->n_nodes; i++) {
		struct ir_node *n = g->nodes[i];

		for (size_t j = 0; rc == 0 && j < n->n_attrs; j++) {
			struct ir_attr *a = n->attrs[j];

			rc = visit_tensor(a->t, w->fn, w->ctx);
			if (rc == 0)
				rc = visit_sparse(a->sparse, w->fn, w->ctx);
			for (size_t k = 0; rc == 0 && k < a->n_tensors; k++)
				rc = visit_tensor(a->tensors[k], w->fn, w->ctx);
			for (size_t k = 0; rc == 0 && k < a->n_sparses; k++)
				rc = visit_sparse(a->sparses[k], w->fn, w->ctx);
		}
	}
	return rc;
}

int ir_model_for_each_tensor(struct ir_model *m, ir_tensor_visit_fn fn,
			     void *ctx)
{
	struct tensor_walk w = { fn, ctx };

	return ir_model_walk(m, visit_graph, &w);
}
