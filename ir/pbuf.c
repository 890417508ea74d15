/* pbuf.c: protobuf-c support: a counting, limiting allocator with a
 * fail-the-Nth-allocation hook for tests, and an iterative pre-scan of the
 * wire format that bounds nesting depth and names the first framing error. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir_int.h"

static long fail_countdown; /* 0: off; N: the N-th allocation fails */

void ir_alloc_fail_at(long n)
{
	fail_countdown = n;
}

static void *counting_alloc(void *data, size_t size)
{
	struct ir_pbuf_alloc *a = data;
	void *p;

	if (fail_countdown > 0 && --fail_countdown == 0) {
		a->failed = 2;
		return NULL;
	}
	if (size > a->limit - a->used) {
		a->failed = 1;
		return NULL;
	}
	if (!(p = malloc(size ? size : 1))) {
		a->failed = 2;  /* the system's, not the limit's */
		return NULL;
	}
	a->used += size;
	return p;
}

static void counting_free(void *data, void *p)
{
	(void)data;
	free(p);
}

void ir_pbuf_alloc_init(struct ir_pbuf_alloc *a, size_t limit)
{
	memset(a, 0, sizeof(*a));
	a->base.alloc = counting_alloc;
	a->base.free = counting_free;
	a->base.allocator_data = a;
	a->limit = limit;
}

int ir_pbuf_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *out)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (*pos >= len)
			return -1;
		b = p[(*pos)++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* Wire type protobuf uses for a field type when not packed. */
static int wire_type_of(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return 5;
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 1;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
	case PROTOBUF_C_TYPE_MESSAGE:
		return 2;
	default:
		return 0;
	}
}

int ir_pbuf_prescan(const uint8_t *buf, size_t len,
		    const ProtobufCMessageDescriptor *desc, int max_depth,
		    struct ir_strip *strip, struct ir_diag *d)
{
	struct ir_pbuf_frame *st = calloc((size_t)max_depth + 1, sizeof(*st));
	int top = 0, rc = 0;
	size_t pos = 0, n_nodes = 0;

	if (!st)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	st[0].end = len;
	st[0].desc = desc;
	st[0].ev = -1;
	while (top >= 0) {
		const ProtobufCFieldDescriptor *f;
		uint64_t key, n = 0;
		size_t at = pos;
		int wt;

		if (pos == st[top].end) {
			top--;
			continue;
		}
		if (ir_pbuf_varint(buf, st[top].end, &pos, &key) < 0 ||
		    (key >> 3) == 0 || (key >> 3) > 0x1fffffff) {
			rc = diag_error(d, "corrupt protobuf: bad field key at byte %zu", at);
			goto cleanup;
		}
		wt = (int)(key & 7);
		f = protobuf_c_message_descriptor_get_field(st[top].desc,
							    (unsigned)(key >> 3));
		if (f && wt != wire_type_of(f->type) &&
		    !(wt == 2 && f->label == PROTOBUF_C_LABEL_REPEATED &&
		      wire_type_of(f->type) != 2)) {
			rc = diag_error(d, "corrupt protobuf: field '%s' of %s has wire type %d at byte %zu",
					f->name, st[top].desc->short_name, wt, at);
			goto cleanup;
		}
		switch (wt) {
		case 0:
			if (ir_pbuf_varint(buf, st[top].end, &pos, &n) < 0)
				goto truncated;
			break;
		case 1:
		case 5:
			n = wt == 1 ? 8 : 4;
			if (st[top].end - pos < n)
				goto truncated;
			pos += n;
			break;
		case 2: {
			size_t len_at = pos;

			if (ir_pbuf_varint(buf, st[top].end, &pos, &n) < 0 ||
			    st[top].end - pos < n)
				goto truncated;
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
				if (top == max_depth) {
					rc = diag_error(d, "model nests messages deeper than %d levels (at byte %zu)",
							max_depth, at);
					goto cleanup;
				}
				/* counts that would cost memory and time long
				 * before the allocation cap notices */
				if (f->descriptor == &onnx__node_proto__descriptor &&
				    ++n_nodes > IR_MAX_NODES) {
					rc = diag_error(d, "model has more than %d nodes (at byte %zu)",
							IR_MAX_NODES, at);
					goto cleanup;
				}
				if (f->descriptor == &onnx__attribute_proto__descriptor &&
				    st[top].desc == &onnx__node_proto__descriptor &&
				    ++st[top].n_attrs > IR_MAX_NODE_ATTRS) {
					rc = diag_error(d, "a node has more than %d attributes (at byte %zu)",
							IR_MAX_NODE_ATTRS, at);
					goto cleanup;
				}
				top++;
				st[top] = (struct ir_pbuf_frame){ pos + n, f->descriptor,
								  len_at, pos - len_at, pos, -1, 0 };
				break;
			}
			if (strip && f && f->id == 9 && n >= strip->threshold &&
			    st[top].desc == &onnx__tensor_proto__descriptor &&
			    ir_strip_note(strip, st, top, len_at, pos - len_at, pos,
					  (size_t)n) < 0) {
				rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
				goto cleanup;
			}
			pos += n;
			break;
		}
		default:
			rc = diag_error(d, "corrupt protobuf: unsupported wire type %d at byte %zu",
					wt, at);
			goto cleanup;
		}
	}
	goto cleanup;
truncated:
	rc = diag_error(d, "truncated or corrupt protobuf: field at byte %zu runs past its end",
			pos);
cleanup:
	free(st);
	return rc;
}
