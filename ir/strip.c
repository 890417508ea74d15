/* strip.c: zero-copy inline weights.  Before protobuf-c unpacks a model, big
 * TensorProto.raw_data payloads are cut out of a copy of the message
 * skeleton and replaced by 16-byte markers (a per-load random magic plus an
 * index); enclosing length prefixes are recomputed.  The loader then points
 * those tensors into the mapped file instead of copying their bytes. */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "ir/ir_int.h"

struct event {
	size_t len_at;     /* offset of the length varint */
	size_t len_size;   /* bytes of that varint */
	size_t content;    /* offset of the content */
	size_t content_len;
	long parent;       /* event index of the enclosing frame, -1 top */
	int is_payload;
	size_t shrink;     /* frames: bytes their content loses */
};

struct level {
	size_t end;
	const ProtobufCMessageDescriptor *desc;
	size_t len_at, len_size, content;
	long ev;           /* recorded event, -1 if none yet */
};

static int varint(const uint8_t *p, size_t end, size_t *pos, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64 && *pos < end; s += 7) {
		uint8_t b = p[(*pos)++];

		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

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

static int push_event(struct ir_strip *s, struct event **ev, size_t *cap,
		      const struct event *e)
{
	if (s->n_events == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct event *g = realloc(*ev, nc * sizeof(*g));

		if (!g)
			return -1;
		*ev = g;
		*cap = nc;
	}
	(*ev)[s->n_events++] = *e;
	return 0;
}

/* Record the frames on the stack that are not recorded yet (outer first). */
static int record_path(struct ir_strip *s, struct level *st, int top,
		       struct event **ev, size_t *cap)
{
	for (int i = 1; i <= top; i++) {
		struct event e = { st[i].len_at, st[i].len_size, st[i].content,
				   st[i].end - st[i].content, st[i - 1].ev, 0, 0 };

		if (st[i].ev >= 0)
			continue;
		if (push_event(s, ev, cap, &e) < 0)
			return -1;
		st[i].ev = (long)s->n_events - 1;
	}
	return 0;
}

static void make_magic(uint8_t magic[8])
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
		v = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uintptr_t)magic;
	memcpy(magic, &v, 8);
}

/* Walk a pre-scanned (well-framed) buffer and note big raw_data fields. */
static int find_payloads(struct ir_strip *s, const uint8_t *buf, size_t len,
			 int max_depth, size_t threshold, struct event **ev)
{
	struct level *st = calloc((size_t)max_depth + 1, sizeof(*st));
	size_t pos = 0, cap = 0;
	int top = 0, rc = 0;

	if (!st)
		return -1;
	st[0].end = len;
	st[0].desc = &onnx__model_proto__descriptor;
	st[0].ev = -1;
	while (top >= 0) {
		const ProtobufCFieldDescriptor *f;
		uint64_t key, n;
		size_t len_at;

		if (pos >= st[top].end) {
			top--;
			continue;
		}
		if (varint(buf, st[top].end, &pos, &key) < 0)
			goto bad;
		f = protobuf_c_message_descriptor_get_field(st[top].desc,
							    (unsigned)(key >> 3));
		switch (key & 7) {
		case 0:
			if (varint(buf, st[top].end, &pos, &n) < 0)
				goto bad;
			break;
		case 1:
			pos += 8;
			break;
		case 5:
			pos += 4;
			break;
		case 2:
			len_at = pos;
			if (varint(buf, st[top].end, &pos, &n) < 0 ||
			    n > st[top].end - pos)
				goto bad;
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    top < max_depth) {
				top++;
				st[top] = (struct level){ pos + n, f->descriptor,
							  len_at, pos - len_at, pos, -1 };
			} else {
				if (f && f->id == 9 && n >= threshold &&
				    st[top].desc == &onnx__tensor_proto__descriptor) {
					struct event e = { len_at, pos - len_at, pos, n,
							   -1, 1, 0 };

					if (record_path(s, st, top, ev, &cap) < 0)
						goto oom;
					e.parent = st[top].ev;
					if (push_event(s, ev, &cap, &e) < 0)
						goto oom;
					s->n_payloads++;
				}
				pos += n;
			}
			break;
		default:
			goto bad;
		}
	}
	goto cleanup;
bad:
	rc = -2;
	goto cleanup;
oom:
	rc = -1;
cleanup:
	free(st);
	return rc;
}

int ir_strip_build(const uint8_t *buf, size_t len, int max_depth,
		   size_t threshold, struct ir_strip *s, struct ir_diag *d)
{
	struct event *ev = NULL;
	size_t total = 0, cur = 0, out = 0, k = 0;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = find_payloads(s, buf, len, max_depth, threshold, &ev);
	if (rc == -2)
		rc = diag_error(d, "corrupt protobuf while scanning tensors");
	else if (rc < 0)
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
	if (rc < 0 || s->n_payloads == 0)
		goto cleanup;
	/* Children follow their parents, so a reverse pass sees every
	 * frame after all it contains. */
	for (size_t i = s->n_events; i-- > 0;) {
		struct event *e = &ev[i];
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
		const struct event *e = &ev[i];

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
	free(ev);
	if (rc < 0)
		ir_strip_release(s);
	return rc;
}

void ir_strip_release(struct ir_strip *s)
{
	free(s->buf);
	free(s->payloads);
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
