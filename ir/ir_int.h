/* ir_int.h: internals shared by ir/ files only: the protobuf-c generated
 * types, the counting allocator, the wire-format pre-scan and the mapped
 * external-data files. */
#ifndef OPMIG_IR_INT_H
#define OPMIG_IR_INT_H

#include <stdio.h>

#include <protobuf-c/protobuf-c.h>

#include "onnx.pb-c.h"
#include "ir/ir.h"

/* Counting, limiting allocator for protobuf-c (pbuf.c). */
struct ir_pbuf_alloc {
	ProtobufCAllocator base;
	size_t used, limit;
	int failed;              /* 1: limit hit, 2: injected failure */
};
void ir_pbuf_alloc_init(struct ir_pbuf_alloc *a, size_t limit);

/* Read one varint at *pos of buf[0..end); 0 ok, -1 truncated or too long. */
int ir_pbuf_varint(const uint8_t *buf, size_t end, size_t *pos, uint64_t *out);

/* One open message of the pre-scan: where it ends, its type, and where its
 * own field (length prefix, content) sits in the buffer. */
struct ir_pbuf_frame {
	size_t end;
	const ProtobufCMessageDescriptor *desc;
	size_t len_at, len_size, content;
	long ev;                 /* strip event recorded for it, -1 none */
	size_t n_attrs;          /* a NodeProto's attributes so far */
};

struct ir_strip;

/* Check framing, wire types and nesting depth of a serialized message
 * iteratively before protobuf-c's recursive unpacker sees it.  With a
 * strip (NULL: none), the same walk notes TensorProto.raw_data payloads of
 * at least strip->threshold bytes for ir_strip_build. */
int ir_pbuf_prescan(const uint8_t *buf, size_t len,
		    const ProtobufCMessageDescriptor *desc, int max_depth,
		    struct ir_strip *strip, struct ir_diag *d);

/* Skeleton of a model with big raw_data payloads cut out (strip.c). */
struct ir_strip_event;
struct ir_strip {
	size_t threshold;        /* set before the pre-scan */
	uint8_t *buf;            /* stripped copy, NULL when nothing was cut */
	size_t len;
	size_t n_events, cap_events;
	struct ir_strip_event *events;  /* noted by the pre-scan, file order */
	size_t n_payloads;
	struct ir_strip_payload {
		size_t off, len;     /* where the bytes are in the original */
		int claimed;
	} *payloads;
	uint8_t magic[8];
};

/* Pre-scan hook: a payload field (length prefix at len_at, len_size bytes,
 * content at content, n bytes) inside the open frames st[1..top]. */
int ir_strip_note(struct ir_strip *s, struct ir_pbuf_frame *st, int top,
		  size_t len_at, size_t len_size, size_t content, size_t n);
/* Build the stripped copy of buf from the payloads the pre-scan noted. */
int ir_strip_build(const uint8_t *buf, size_t len, struct ir_strip *s,
		   struct ir_diag *d);
void ir_strip_release(struct ir_strip *s);
/* If (data, len) is one of our markers not claimed yet, give the payload's
 * place in the original buffer and return 1. */
int ir_strip_claim(struct ir_strip *s, const uint8_t *data, size_t len,
		   size_t *off, size_t *plen);

/* A mapped external data file (extdata.c). */
struct ir_extfile {
	int refs;
	char *location;          /* as written in the model */
	char *path;              /* resolved path */
	const uint8_t *map;      /* the model file's own mapping (self_map,
				  * which tensors view); NULL for data files */
	size_t size;
};

int ir_extfile_open(struct ir_model *m, const char *location,
		    struct ir_extfile **out, struct ir_diag *d);
/* Map bytes off..off+len of x read-only: *base, *map_len for munmap; the
 * bytes start at *base + off % page size. */
int ir_extfile_window(struct ir_extfile *x, int64_t off, int64_t len,
		      const uint8_t **base, size_t *map_len, struct ir_diag *d);
void ir_extfile_unref(struct ir_extfile *x);
/* Read bytes off..off+len of x with pread, handing sink pieces of at most
 * `piece` bytes (whole passes of a file: no page mapped, no page fault);
 * direct: past the page cache (O_DIRECT) where the file system allows it,
 * for a pass that reads the bytes once. */
int ir_extfile_read(struct ir_extfile *x, int64_t off, int64_t len, size_t piece, int direct,
		    ir_tensor_sink_fn sink, void *ctx, struct ir_diag *d);
/* Bytes [off, off + want) of fd, opened with O_DIRECT: the blocks around
 * them read whole into blk (aligned to IR_DIRECT_ALIGN, want + 2 blocks
 * long); *at points at the first byte.  1 where the file system refuses
 * direct reads here (the caller reads as usual), 0 done, < 0 -errno. */
#define IR_DIRECT_ALIGN 4096
/* Whole passes read tensors of this size up past the page cache. */
#define IR_DIRECT_MIN ((int64_t)1 << 20)
/* x's file opened to read: with O_DIRECT when *direct and the file
 * system takes it, else as usual (*direct then 0); -1 with errno. */
int ir_extfile_fd(const struct ir_extfile *x, int *direct);
int ir_extfile_pread_direct(int fd, uint8_t *blk, int64_t off, size_t want,
			    const uint8_t **at);
/* Compute a derived tensor's payload into its cache (derived.c). */
int ir_derived_materialize(struct ir_tensor *t, struct ir_diag *d);
/* The folder part of a path ("." if none); malloc'd, NULL on OOM. */
char *ir_path_dir(const char *path);
/* Resolve `location` against dir, refusing absolute paths, ".." escapes and
 * symlinks leading outside dir.  *out is malloc'd. */
int ir_path_resolve_inside(const char *dir, const char *location,
			   char **out, struct ir_diag *d);

/* Conversions between protobuf-c messages and IR (load.c, save.c). */
/* `strip` (may be NULL) maps markers back into `self`, the mapped model. */
int ir_from_pb(Onnx__ModelProto *pb, struct ir_model *m,
	       struct ir_strip *strip, struct ir_extfile *self,
	       struct ir_diag *d);

/* Convert one unpacked TensorProto, stealing its buffers (load.c). */
struct ir_tensor *ir_tensor_from_pb(Onnx__TensorProto *pb, struct ir_diag *d);

/* Pack the model into `model`, big tensors into `ext` when set (save.c). */
int ir_save_streams(struct ir_model *m, FILE *model, FILE *ext,
		    const char *ext_name, const struct ir_save_opts *o,
		    struct ir_diag *d);

#endif
