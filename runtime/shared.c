/* shared.c: data the session derives once from a model constant for
 * every node that reads that constant.  An unrolled decoder's steps and
 * tied layers read one initializer through many nodes; a copy of its
 * packed (or widened) form for each node multiplies the memory every
 * run reads (a Tacotron-style decoder's twenty one-step LSTMs: 230 MB
 * of packed weights where 23 MB serve, read from memory where 23 MB stay
 * in the last-level cache).  Plans live as long as their session, so an
 * entry does too: freed with the session, after its plans. */
#include <stdlib.h>

#include "runtime/exec_int.h"

struct rt_shared_ent {
	struct rt_share_key key;
	void *p;
	void (*free_fn)(void *);
	int64_t bytes;
	struct rt_shared_ent *next;
};

static int key_eq(const struct rt_share_key *a, const struct rt_share_key *b)
{
	if (a->kind != b->kind || a->data[0] != b->data[0] || a->data[1] != b->data[1] ||
	    a->data[2] != b->data[2])
		return 0;
	for (int i = 0; i < RT_SHARE_DIMS; i++)
		if (a->dim[i] != b->dim[i])
			return 0;
	return 1;
}

static size_t key_bucket(const struct rt_share_key *k)
{
	uint64_t h = (uint64_t)(uintptr_t)k->data[0] * 0x9E3779B97F4A7C15u;

	h ^= (uint64_t)(uintptr_t)k->data[1] + (uint64_t)k->kind * 0xBF58476D1CE4E5B9u;
	return (size_t)(h >> 56) % RT_SHARE_BUCKETS;
}

static struct rt_shared_ent *find(const struct rt_session *s, const struct rt_share_key *key)
{
	for (struct rt_shared_ent *e = s->shared[key_bucket(key)]; e; e = e->next)
		if (key_eq(&e->key, key))
			return e;
	return NULL;
}

void *rt_shared_take(struct rt_session *s, const struct rt_share_key *key)
{
	struct rt_shared_ent *e = find(s, key);

	if (!e)
		return NULL;
	s->stats.shared_nodes++;
	s->stats.shared_bytes += e->bytes;
	return e->p;
}

int rt_shared_add(struct rt_session *s, const struct rt_share_key *key, void *p,
		  void (*free_fn)(void *), int64_t bytes)
{
	struct rt_shared_ent *e;
	size_t b = key_bucket(key);

	if (find(s, key) || !(e = malloc(sizeof(*e))))
		return -1;
	*e = (struct rt_shared_ent){ *key, p, free_fn, bytes, s->shared[b] };
	s->shared[b] = e;
	return 0;
}

void rt_shared_free(struct rt_session *s)
{
	for (size_t b = 0; b < RT_SHARE_BUCKETS; b++)
		while (s->shared[b]) {
			struct rt_shared_ent *e = s->shared[b];

			s->shared[b] = e->next;
			if (e->free_fn)
				e->free_fn(e->p);
			free(e);
		}
}
