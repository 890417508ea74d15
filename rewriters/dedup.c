/* dedup.c: pass "dedup-constants": initializers of the main graph with the
 * same dtype, shape and bytes are one: readers of the later ones read the
 * first, and the later ones go.  Graph inputs (which may override an
 * initializer) and graph outputs keep theirs.  Exporters repeat small
 * constants (shape vectors, scalars) per use; the folded Shape arithmetic
 * of fold-constants repeats them too.  Weights are read where they lie:
 * a converted (derived) weight is compared by its source and conversion
 * (a computed one also by its computation's arguments, where they count),
 * a large one is hashed on sampled pages and read whole only to confirm a
 * match, and a dry run leaves large weights unread. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "rewriters/rw_int.h"

#define LARGE ((size_t)1 << 20)    /* bytes: hashed on samples */
#define SAMPLE 4096                /* bytes per sample */
#define N_SAMPLES 16
#define MAX_CHAIN 4

struct ent {
	struct ir_value *v;
	struct ir_tensor *base;        /* whose bytes are compared */
	const uint8_t *data;
	size_t len;
	uint64_t hash;
	size_t order;
	/* the conversions from base's bytes to the value (outermost first) */
	int n_chain;
	int chain_dtype[MAX_CHAIN];
	ir_tensor_cast_fn chain_cast[MAX_CHAIN];
	const struct ir_derive_ops *chain_ops[MAX_CHAIN];   /* computed ones */
	const void *chain_arg[MAX_CHAIN];
};

/* The tensor whose stored bytes t's value is computed from, and how;
 * NULL when the chain is too long to record. */
static struct ir_tensor *base_of(struct ir_tensor *t, struct ent *e)
{
	e->n_chain = 0;
	while (t->storage == IR_STORE_DERIVED && !t->cache) {
		if (e->n_chain == MAX_CHAIN)
			return NULL;
		e->chain_dtype[e->n_chain] = t->dtype;
		e->chain_ops[e->n_chain] = t->ops;
		e->chain_arg[e->n_chain] = t->arg;
		e->chain_cast[e->n_chain++] = t->cast;
		t = t->src;
	}
	return t;
}

static int same_chain(const struct ent *a, const struct ent *b)
{
	if (a->n_chain != b->n_chain || a->base->dtype != b->base->dtype)
		return 0;
	for (int k = 0; k < a->n_chain; k++) {
		const struct ir_derive_ops *ops = a->chain_ops[k];

		if (a->chain_dtype[k] != b->chain_dtype[k] || a->chain_cast[k] != b->chain_cast[k] ||
		    ops != b->chain_ops[k])
			return 0;
		/* a computation whose payload depends on more than its source
		 * (per-channel factors, say) says whether two are alike */
		if (ops && ops->same && a->chain_arg[k] != b->chain_arg[k] &&
		    !ops->same(a->chain_arg[k], b->chain_arg[k]))
			return 0;
	}
	return 1;
}

/* XXH3 of the bytes, or of N_SAMPLES pages spread over a large payload
 * (equal payloads hash equal either way; a match is confirmed whole). */
static uint64_t hash_payload(const uint8_t *data, size_t len)
{
	XXH3_state_t *st;
	uint64_t h;

	if (len <= LARGE || !(st = XXH3_createState()))
		return XXH3_64bits(data, len);
	XXH3_64bits_reset(st);
	for (size_t k = 0; k < N_SAMPLES; k++) {
		size_t at = (len - SAMPLE) / (N_SAMPLES - 1) * k;

		XXH3_64bits_update(st, data + at, SAMPLE);
	}
	h = XXH3_64bits_digest(st) ^ (uint64_t)len;
	XXH3_freeState(st);
	return h;
}

static int same_shape(const struct ir_tensor *a, const struct ir_tensor *b)
{
	return a->dtype == b->dtype && a->n_dims == b->n_dims &&
	       (!a->n_dims || !memcmp(a->dims, b->dims, a->n_dims * sizeof(*a->dims)));
}

static int cmp_ent(const void *x, const void *y)
{
	const struct ent *a = x, *b = y;

	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return (a->order > b->order) - (a->order < b->order);
}

/* Compare two payloads of equal length byte by byte (large ones mapped
 * again for it and released after); -1 when one cannot be read. */
static int payloads_differ(struct ent *a, struct ent *b)
{
	struct ir_diag d;
	int differ = -1;

	ir_diag_init(&d);
	if (a->len <= LARGE)
		return a->len && memcmp(a->data, b->data, a->len) != 0;
	if (ir_tensor_data(a->base, &a->data, &a->len, &d) == 0 &&
	    ir_tensor_data(b->base, &b->data, &b->len, &d) == 0 && a->len == b->len)
		differ = memcmp(a->data, b->data, a->len) != 0;
	if (a->base->storage != IR_STORE_DERIVED)
		ir_tensor_release_data(a->base);
	if (b->base->storage != IR_STORE_DERIVED)
		ir_tensor_release_data(b->base);
	return differ;
}

static int run(struct rw_ctx *c, size_t *changed)
{
	struct ir_graph *g = c->m->graph;
	struct ent *e = calloc(g->n_inits + 1, sizeof(*e));
	size_t n = 0;
	int rc = 0;

	*changed = 0;
	if (!e)
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < g->n_inits; i++) {
		struct ir_tensor *t = g->inits[i];
		struct ir_value *v = ir_graph_find(g, ir_s(t->name));
		struct ir_diag d;

		ir_diag_init(&d);
		if (!v || v->init != t || v->is_input || ir_graph_is_output(g, v) ||
		    t->dtype == IR_DTYPE_STRING || (c->dry_run && ir_tensor_nbytes(t) > (int64_t)LARGE) ||
		    !(e[n].base = base_of(t, &e[n])) ||
		    ir_tensor_data(e[n].base, &e[n].data, &e[n].len, &d) < 0)
			continue;
		e[n].v = v;
		/* XXH3 reads the bytes at memory speed (a byte-wise FNV was a
		 * third of a dry run of a 764-node model); equal hashes are
		 * compared byte by byte */
		e[n].hash = hash_payload(e[n].data, e[n].len) ^ (uint64_t)t->dtype ^
			    ((uint64_t)t->n_dims << 56) ^ ((uint64_t)e[n].n_chain << 48);
		if (e[n].len > LARGE && e[n].base->storage != IR_STORE_DERIVED)
			ir_tensor_release_data(e[n].base);
		e[n].order = i;
		n++;
	}
	if (n)
		qsort(e, n, sizeof(*e), cmp_ent);
	for (size_t i = 0; i < n && rc >= 0; i++) {
		size_t j = i;

		/* e[i] is the first of its run of equal hashes still standing */
		if (!e[i].v)
			continue;
		while (++j < n && e[j].hash == e[i].hash && e[j].len == e[i].len) {
			struct ir_value *dup = e[j].v;

			/* unequal, or unreadable (-1): not merged */
			if (!dup || !same_shape(dup->init, e[i].v->init) ||
			    !same_chain(&e[i], &e[j]) || payloads_differ(&e[i], &e[j]) != 0)
				continue;
			if ((rc = ir_value_replace_uses(dup, e[i].v)) < 0)
				break;
			ir_graph_remove_initializer(g, dup);
			e[j].v = NULL;
			(*changed)++;
		}
	}
	free(e);
	return rc < 0 ? ir_diag_error(c->d, IR_ENOMEM, "out of memory") : 0;
}

const struct rw_pass rw_pass_dedup_constants = {
	.name = "dedup-constants",
	.summary = "merge initializers with the same dtype, shape and bytes into one",
	.kind = RW_CANON,
	.run = run,
};
