/* strip.c: zero-copy inline weights.  Before protobuf-c unpacks a model, big
 * TensorProto.raw_data payloads (noted by the pre-scan in pbuf.c) are cut
 * out of a copy of the message skeleton and replaced by 16-byte markers (a
 * per-load random magic plus an index); enclosing length prefixes are
 * recomputed.  The loader then points those tensors into the mapped file
 * instead of copying their bytes. */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "ir/ir_int.h"

struct ir_strip_event {
	size_t len_at;     /* offset of the length varint */
	size_t len_size;   /* bytes of that varint */
	size_t content;    /* offset of the content */
	size_t content_len;
	long parent;       /* event index of the enclosing frame, -1 top */
	int is_payload;
	size_t shrink;     /* frames: bytes their content loses */
};

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static long push_event(struct ir_strip *s, const struct ir_strip_event *e)
{
	if (s->n_events == s->cap_events) {
		size_t nc = s->cap_events ? s->cap_events * 2 : 64;
		struct ir_strip_event *g = realloc(s->events, nc * sizeof(*g));

		if (!g)
			return -1;
		s->events = g;
		s->cap_events = nc;
	}
	s->events[s->n_events] = *e;
	return (long)s->n_events++;
}

/* Record the open frames not recorded yet (outer first), then the payload:
 * a frame is recorded only when it holds a payload, so events stay few and
 * in file order. */
int ir_strip_note(struct ir_strip *s, struct ir_pbuf_frame *st, int top,
		  size_t len_at, size_t len_size, size_t content, size_t n)
{
	struct ir_strip_event e = { len_at, len_size, content, n, -1, 1, 0 };

	for (int i = 1; i <= top; i++) {
		struct ir_strip_event fe = { st[i].len_at, st[i].len_size,
					     st[i].content, st[i].end - st[i].content,
					     st[i - 1].ev, 0, 0 };

		if (st[i].ev < 0 && (st[i].ev = push_event(s, &fe)) < 0)
			return -1;
	}
	e.parent = st[top].ev;
	if (push_event(s, &e) < 0)
		return -1;
	s->n_payloads++;
	return 0;
}

static void make_magic(uint8_t magic[8])
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
		v = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uintptr_t)magic;
	memcpy(magic, &v, 8);
}

int ir_strip_build(const uint8_t *buf, size_t len, struct ir_strip *s,
		   struct ir_diag *d)
{
	struct ir_strip_event *ev = s->events;
	size_t total = 0, cur = 0, out = 0, k = 0;
	int rc = 0;

	if (s->n_payloads == 0)
		goto cleanup;
	/* Children follow their parents, so a reverse pass sees every
	 * frame after all it contains. */
	for (size_t i = s->n_events; i-- > 0;) {
		struct ir_strip_event *e = &ev[i];
		size_t delta;

		if (e->is_payload)
			delta = e->len_size + e->content_len - 17;
		else
			delta = e->shrink + e->len_size -
				varint_size(e->content_len - e->shrink);
		if (e->parent >= 0)
			ev[e->parent].shrink += delta;
		else
			total += delta;
	}
	s->len = len - total;
	s->payloads = calloc(s->n_payloads, sizeof(*s->payloads));
	s->buf = malloc(s->len ? s->len : 1);
	if (!s->payloads || !s->buf) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	make_magic(s->magic);
	for (size_t i = 0; i < s->n_events; i++) {
		const struct ir_strip_event *e = &ev[i];

		memcpy(s->buf + out, buf + cur, e->len_at - cur);
		out += e->len_at - cur;
		if (e->is_payload) {
			uint64_t idx = k;

			out += put_varint(s->buf + out, 16);
			memcpy(s->buf + out, s->magic, 8);
			for (int b = 0; b < 8; b++)
				s->buf[out + 8 + b] = (uint8_t)(idx >> (8 * b));
			out += 16;
			s->payloads[k].off = e->content;
			s->payloads[k].len = e->content_len;
			k++;
			cur = e->content + e->content_len;
		} else {
			out += put_varint(s->buf + out, e->content_len - e->shrink);
			cur = e->content;
		}
	}
	memcpy(s->buf + out, buf + cur, len - cur);
	out += len - cur;
	if (out != s->len)
		rc = ir_diag_error(d, IR_EIO, "internal error: stripped size %zu, expected %zu",
				   out, s->len);
cleanup:
	free(s->events);
	s->events = NULL;
	s->n_events = s->cap_events = 0;
	if (rc < 0)
		ir_strip_release(s);
	return rc;
}

void ir_strip_release(struct ir_strip *s)
{
	free(s->buf);
	free(s->payloads);
	free(s->events);
	memset(s, 0, sizeof(*s));
}

int ir_strip_claim(struct ir_strip *s, const uint8_t *data, size_t len,
		   size_t *off, size_t *plen)
{
	uint64_t idx = 0;

	if (!s->n_payloads || len != 16 || memcmp(data, s->magic, 8) != 0)
		return 0;
	for (int b = 0; b < 8; b++)
		idx |= (uint64_t)data[8 + b] << (8 * b);
	if (idx >= s->n_payloads || s->payloads[idx].claimed)
		return 0;
	s->payloads[idx].claimed = 1;
	*off = s->payloads[idx].off;
	*plen = s->payloads[idx].len;
	return 1;
}
