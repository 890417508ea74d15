/* load.c: ONNX file -> IR.  Maps the file, pre-scans the wire format, unpacks
 * it with protobuf-c under a counting allocator, and converts the messages
 * into IR objects, stealing big buffers (raw_data, typed arrays) rather than
 * copying them.  Name resolution follows ONNX scoping: a node input is looked
 * up in its own graph first, then in the enclosing graphs. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir_int.h"

struct conv {
	struct ir_model *m;
	struct ir_diag *d;
	struct ir_strip *strip;     /* markers of cut-out raw_data, or NULL */
	struct ir_extfile *self;    /* the mapped model file */
};

/* Duplicate an optional string; sets *bad when allocation failed. */
#define DUP(dst, src, bad) do { \
	if ((src) && !((dst) = strdup(src))) (bad) = 1; } while (0)

static int oom(struct conv *c)
{
	return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
}

static int unknown_from_pb(const ProtobufCMessage *pb, struct ir_unknown *u)
{
	if (!pb->n_unknown_fields)
		return 0;
	u->fields = calloc(pb->n_unknown_fields, sizeof(*u->fields));
	if (!u->fields)
		return IR_ENOMEM;
	for (size_t i = 0; i < pb->n_unknown_fields; i++) {
		const ProtobufCMessageUnknownField *f = &pb->unknown_fields[i];
		struct ir_unknown_field *o = &u->fields[u->n];

		o->data = malloc(f->len ? f->len : 1);
		if (!o->data)
			return IR_ENOMEM;
		memcpy(o->data, f->data, f->len);
		o->tag = f->tag;
		o->wire_type = (int)f->wire_type;
		o->len = f->len;
		u->n++;
	}
	return 0;
}

/* Append one message, packed, as an opaque length-delimited field; the
 * stored bytes carry the length prefix as protobuf-c expects. */
static int unknown_add_message(struct ir_unknown *u, uint32_t tag,
			       const ProtobufCMessage *msg)
{
	size_t len = protobuf_c_message_get_packed_size(msg), pre = 0;
	struct ir_unknown_field *f;
	uint8_t *data = malloc(len + 10);

	f = realloc(u->fields, (u->n + 1) * sizeof(*f));
	if (!data || !f) {
		free(data);
		if (f)
			u->fields = f;
		return IR_ENOMEM;
	}
	u->fields = f;
	for (size_t v = len; ; v >>= 7) {
		data[pre++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		if (v < 0x80)
			break;
	}
	protobuf_c_message_pack(msg, data + pre);
	f[u->n].tag = tag;
	f[u->n].wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
	f[u->n].len = pre + len;
	f[u->n].data = data;
	u->n++;
	return 0;
}

static int kv_from_pb(Onnx__StringStringEntryProto **pb, size_t n,
		      struct ir_kv **out, size_t *n_out)
{
	int bad = 0;

	if (!n)
		return 0;
	*out = calloc(n, sizeof(**out));
	if (!*out)
		return IR_ENOMEM;
	*n_out = n;
	for (size_t i = 0; i < n; i++) {
		DUP((*out)[i].key, pb[i]->key, bad);
		DUP((*out)[i].value, pb[i]->value, bad);
	}
	return bad ? IR_ENOMEM : 0;
}

static struct ir_tensor *tensor_from_pb(struct conv *c, Onnx__TensorProto *pb);

static int type_from_pb(struct conv *c, const Onnx__TypeProto *pb,
			struct ir_type **out);

static int shape_from_pb(const Onnx__TensorShapeProto *pb, struct ir_shape *s)
{
	int bad = 0;

	if (!pb->n_dim)
		return 0;
	s->dims = calloc(pb->n_dim, sizeof(*s->dims));
	if (!s->dims)
		return IR_ENOMEM;
	s->n_dims = pb->n_dim;
	for (size_t i = 0; i < pb->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *pd = pb->dim[i];
		struct ir_dim *dim = &s->dims[i];

		if (pd->value_case ==
		    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			dim->kind = IR_DIM_VALUE;
			dim->value = pd->dim_value;
		} else if (pd->value_case ==
			   ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
			dim->kind = IR_DIM_PARAM;
			DUP(dim->param, pd->dim_param ? pd->dim_param : "", bad);
		}
		DUP(dim->denotation, pd->denotation, bad);
		/* Unknown fields of a Dimension are not kept (see the note on
		 * issue 2). */
	}
	return bad ? IR_ENOMEM : 0;
}

static int type_from_pb(struct conv *c, const Onnx__TypeProto *pb,
			struct ir_type **out)
{
	struct ir_type *t = calloc(1, sizeof(*t));
	int bad = 0, rc = 0;

	if (!t)
		return oom(c);
	*out = t;
	DUP(t->denotation, pb->denotation, bad);
	switch (pb->value_case) {
	case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
	case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: {
		/* Tensor and SparseTensor share their layout. */
		const Onnx__TypeProto__Tensor *tt =
			pb->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ?
			pb->tensor_type :
			(const Onnx__TypeProto__Tensor *)pb->sparse_tensor_type;

		t->kind = pb->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ?
			IR_TYPE_TENSOR : IR_TYPE_SPARSE_TENSOR;
		if (tt->has_elem_type) {
			t->present |= IR_TYPE_HAS_ELEM;
			t->elem_type = tt->elem_type;
		}
		if (tt->shape) {
			t->present |= IR_TYPE_HAS_SHAPE;
			if (shape_from_pb(tt->shape, &t->shape) < 0)
				bad = 1;
		}
		break;
	}
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
		t->kind = IR_TYPE_SEQUENCE;
		if (pb->sequence_type->elem_type)
			rc = type_from_pb(c, pb->sequence_type->elem_type,
					  &t->inner);
		break;
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
		t->kind = IR_TYPE_OPTIONAL;
		if (pb->optional_type->elem_type)
			rc = type_from_pb(c, pb->optional_type->elem_type,
					  &t->inner);
		break;
	case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
		t->kind = IR_TYPE_MAP;
		if (pb->map_type->has_key_type) {
			t->present |= IR_TYPE_HAS_ELEM;
			t->elem_type = pb->map_type->key_type;
		}
		if (pb->map_type->value_type)
			rc = type_from_pb(c, pb->map_type->value_type,
					  &t->inner);
		break;
	default:
		t->kind = IR_TYPE_NONE;
	}
	if (pb->base.n_unknown_fields) {
		t->unknown = calloc(1, sizeof(*t->unknown));
		if (!t->unknown || unknown_from_pb(&pb->base, t->unknown) < 0)
			bad = 1;
	}
	if (rc < 0)
		return rc;
	return bad ? oom(c) : 0;
}

static struct ir_tensor *tensor_from_pb(struct conv *c, Onnx__TensorProto *pb)
{
	struct ir_tensor *t = calloc(1, sizeof(*t));
	int bad = 0;

	if (!t) {
		oom(c);
		return NULL;
	}
	DUP(t->name, pb->name, bad);
	DUP(t->doc, pb->doc_string, bad);
	if (pb->has_data_type) {
		t->present |= IR_TENSOR_HAS_DTYPE;
		t->dtype = pb->data_type;
	}
	if (pb->has_data_location) {
		t->present |= IR_TENSOR_HAS_LOCATION;
		t->data_location = (int)pb->data_location;
	}
	t->n_dims = pb->n_dims;
	t->dims = pb->dims;
	pb->dims = NULL;
	pb->n_dims = 0;
	if (pb->segment) {
		t->present |= IR_TENSOR_HAS_SEGMENT;
		t->seg_begin = pb->segment->begin;
		t->seg_end = pb->segment->end;
	}
	if (pb->has_raw_data) {
		size_t off, len;

		t->present |= IR_TENSOR_HAS_RAW;
		t->storage = IR_STORE_RAW;
		if (c->strip && ir_strip_claim(c->strip, pb->raw_data.data,
					       pb->raw_data.len, &off, &len)) {
			t->raw = (uint8_t *)c->self->map + off;
			t->raw_len = len;
			t->raw_owner = c->self;
			c->self->refs++;
		} else {
			t->raw = pb->raw_data.data;
			t->raw_len = pb->raw_data.len;
			pb->raw_data.data = NULL;
			pb->raw_data.len = 0;
		}
	}
#define TAKE(fld, kind) \
	if (pb->n_##fld && t->field == IR_FIELD_NONE) { \
		t->field = kind; t->n_typed = pb->n_##fld; \
		t->typed = pb->fld; pb->fld = NULL; pb->n_##fld = 0; \
		if (t->storage == IR_STORE_NONE) t->storage = IR_STORE_TYPED; \
	} else if (pb->n_##fld) { /* refused below; keeps the first array */ \
		bad = bad ? bad : 2; \
	}
	TAKE(float_data, IR_FIELD_FLOAT)
	TAKE(int32_data, IR_FIELD_INT32)
	TAKE(int64_data, IR_FIELD_INT64)
	TAKE(double_data, IR_FIELD_DOUBLE)
	TAKE(uint64_data, IR_FIELD_UINT64)
#undef TAKE
	if (pb->n_string_data) {
		size_t n = pb->n_string_data;

		if (t->field != IR_FIELD_NONE)
			bad = bad ? bad : 2;
		t->field = IR_FIELD_STRING;
		t->storage = IR_STORE_TYPED;
		t->n_typed = n;
		t->strings = calloc(n, sizeof(*t->strings));
		t->string_lens = calloc(n, sizeof(*t->string_lens));
		if (!t->strings || !t->string_lens) {
			t->n_typed = 0;
			bad = 1;
		}
		for (size_t i = 0; t->strings && t->string_lens && i < n; i++) {
			t->strings[i] = (char *)pb->string_data[i].data;
			t->string_lens[i] = pb->string_data[i].len;
			pb->string_data[i].data = NULL;
		}
	}
	if (pb->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		t->storage = IR_STORE_EXTERNAL;
	if (kv_from_pb(pb->external_data, pb->n_external_data, &t->external,
		       &t->n_external) < 0 ||
	    unknown_from_pb(&pb->base, &t->unknown) < 0)
		bad = 1;
	if (bad == 1) {
		ir_tensor_free(t);
		oom(c);
		return NULL;
	}
	if (bad == 2) {
		diag_error(c->d, "tensor '%s' stores data in more than one typed field",
			   ir_s(pb->name));
		ir_tensor_free(t);
		return NULL;
	}
	return t;
}

/* One TensorProto outside a model (tensor_pb.c): no strip, no mapping. */
struct ir_tensor *ir_tensor_from_pb(Onnx__TensorProto *pb, struct ir_diag *d)
{
	struct conv c = { NULL, d, NULL, NULL };

	return tensor_from_pb(&c, pb);
}

static struct ir_sparse *sparse_from_pb(struct conv *c,
					Onnx__SparseTensorProto *pb)
{
	struct ir_sparse *s = calloc(1, sizeof(*s));

	if (!s) {
		oom(c);
		return NULL;
	}
	if ((pb->values && !(s->values = tensor_from_pb(c, pb->values))) ||
	    (pb->indices && !(s->indices = tensor_from_pb(c, pb->indices))))
		goto fail;
	s->n_dims = pb->n_dims;
	s->dims = pb->dims;
	pb->dims = NULL;
	pb->n_dims = 0;
	if (unknown_from_pb(&pb->base, &s->unknown) < 0) {
		oom(c);
		goto fail;
	}
	return s;
fail:
	ir_sparse_free(s);
	return NULL;
}

static int graph_from_pb(struct conv *c, Onnx__GraphProto *pb,
			 struct ir_graph *g);

static int attr_from_pb(struct conv *c, struct ir_graph *g,
			Onnx__AttributeProto *pb, struct ir_attr **out)
{
	struct ir_attr *a = calloc(1, sizeof(*a));
	int bad = 0, rc = 0;

	if (!a)
		return oom(c);
	*out = a;
	DUP(a->name, pb->name, bad);
	DUP(a->ref_attr_name, pb->ref_attr_name, bad);
	DUP(a->doc, pb->doc_string, bad);
	if (pb->has_type) {
		a->present |= IR_ATTR_HAS_TYPE;
		a->type = (int)pb->type;
	}
	if (pb->has_f) {
		a->present |= IR_ATTR_HAS_F;
		a->f = pb->f;
	}
	if (pb->has_i) {
		a->present |= IR_ATTR_HAS_I;
		a->i = pb->i;
	}
	if (pb->has_s) {
		a->present |= IR_ATTR_HAS_S;
		a->s = malloc(pb->s.len + 1);
		if (a->s) {
			if (pb->s.len)  /* an empty string may have no data */
				memcpy(a->s, pb->s.data, pb->s.len);
			a->s[pb->s.len] = 0;
			a->s_len = pb->s.len;
		} else {
			bad = 1;
		}
	}
	if (pb->t && !(a->t = tensor_from_pb(c, pb->t)))
		return c->d->status;
	if (pb->sparse_tensor &&
	    !(a->sparse = sparse_from_pb(c, pb->sparse_tensor)))
		return c->d->status;
	if (pb->tp && (rc = type_from_pb(c, pb->tp, &a->tp)) < 0)
		return rc;
	if (pb->g) {
		if (!(a->g = ir_graph_new(g)))
			return oom(c);
		if ((rc = graph_from_pb(c, pb->g, a->g)) < 0)
			return rc;
	}
	a->n_floats = pb->n_floats;
	a->floats = pb->floats;
	pb->floats = NULL;
	pb->n_floats = 0;
	a->n_ints = pb->n_ints;
	a->ints = pb->ints;
	pb->ints = NULL;
	pb->n_ints = 0;
	if (pb->n_strings) {
		a->strings = calloc(pb->n_strings, sizeof(*a->strings));
		a->string_lens = calloc(pb->n_strings, sizeof(*a->string_lens));
		if (!a->strings || !a->string_lens)
			return oom(c);
		a->n_strings = pb->n_strings;
		for (size_t i = 0; i < pb->n_strings; i++) {
			a->strings[i] = malloc(pb->strings[i].len + 1);
			if (!a->strings[i])
				return oom(c);
			if (pb->strings[i].len)
				memcpy(a->strings[i], pb->strings[i].data,
				       pb->strings[i].len);
			a->strings[i][pb->strings[i].len] = 0;
			a->string_lens[i] = pb->strings[i].len;
		}
	}
	if (pb->n_tensors) {
		if (!(a->tensors = calloc(pb->n_tensors, sizeof(*a->tensors))))
			return oom(c);
		for (; a->n_tensors < pb->n_tensors; a->n_tensors++)
			if (!(a->tensors[a->n_tensors] =
			      tensor_from_pb(c, pb->tensors[a->n_tensors])))
				return c->d->status;
	}
	if (pb->n_sparse_tensors) {
		if (!(a->sparses = calloc(pb->n_sparse_tensors,
					  sizeof(*a->sparses))))
			return oom(c);
		for (; a->n_sparses < pb->n_sparse_tensors; a->n_sparses++)
			if (!(a->sparses[a->n_sparses] = sparse_from_pb(
				      c, pb->sparse_tensors[a->n_sparses])))
				return c->d->status;
	}
	if (pb->n_type_protos) {
		if (!(a->tps = calloc(pb->n_type_protos, sizeof(*a->tps))))
			return oom(c);
		for (; a->n_tps < pb->n_type_protos; a->n_tps++)
			if ((rc = type_from_pb(c, pb->type_protos[a->n_tps],
					       &a->tps[a->n_tps])) < 0)
				return rc;
	}
	if (pb->n_graphs) {
		if (!(a->graphs = calloc(pb->n_graphs, sizeof(*a->graphs))))
			return oom(c);
		for (; a->n_graphs < pb->n_graphs; a->n_graphs++) {
			struct ir_graph *sub = ir_graph_new(g);

			if (!sub)
				return oom(c);
			a->graphs[a->n_graphs] = sub;
			if ((rc = graph_from_pb(c, pb->graphs[a->n_graphs],
						sub)) < 0) {
				a->n_graphs++;
				return rc;
			}
		}
	}
	if (unknown_from_pb(&pb->base, &a->unknown) < 0)
		bad = 1;
	return bad ? oom(c) : 0;
}

/* outer: resolve names through enclosing scopes first (graph outputs may
 * name captured values). */
static int vinfo_from_pb(struct conv *c, struct ir_graph *g,
			 Onnx__ValueInfoProto **pb, size_t n,
			 struct ir_vinfo **out, size_t *n_out, int outer)
{
	int bad = 0, rc;

	if (!n)
		return 0;
	if (!(*out = calloc(n, sizeof(**out))))
		return oom(c);
	*n_out = n;   /* owned by the graph from now on, also on failure */
	for (size_t i = 0; i < n; i++) {
		struct ir_vinfo *vi = &(*out)[i];

		vi->value = outer ? ir_graph_lookup(g, ir_s(pb[i]->name)) : NULL;
		if (!vi->value)
			vi->value = ir_graph_value(g, ir_s(pb[i]->name));
		if (!vi->value)
			return oom(c);
		DUP(vi->doc, pb[i]->doc_string, bad);
		if (pb[i]->type &&
		    (rc = type_from_pb(c, pb[i]->type, &vi->type)) < 0)
			return rc;
		if (vi->type && !vi->value->type)
			vi->value->type = vi->type;
		if (unknown_from_pb(&pb[i]->base, &vi->unknown) < 0)
			bad = 1;
	}
	return bad ? oom(c) : 0;
}

static int node_from_pb(struct conv *c, struct ir_graph *g,
			Onnx__NodeProto *pb)
{
	struct ir_node *n = calloc(1, sizeof(*n));
	int bad = 0;

	if (!n)
		return oom(c);
	DUP(n->name, pb->name, bad);
	DUP(n->op_type, pb->op_type, bad);
	DUP(n->domain, pb->domain, bad);
	DUP(n->doc, pb->doc_string, bad);
	n->inputs = calloc(pb->n_input + 1, sizeof(*n->inputs));
	n->outputs = calloc(pb->n_output + 1, sizeof(*n->outputs));
	n->attrs = calloc(pb->n_attribute + 1, sizeof(*n->attrs));
	if (bad || !n->inputs || !n->outputs || !n->attrs ||
	    unknown_from_pb(&pb->base, &n->unknown) < 0 ||
	    ir_graph_add_node(g, n) < 0) {
		ir_node_free(n);
		return oom(c);
	}
	/* Outputs first so that def-use of this scope is complete before any
	 * subgraph resolves captured names. */
	for (size_t i = 0; i < pb->n_output; i++, n->n_outputs++) {
		struct ir_value *v;

		if (!pb->output[i][0])
			continue;
		if (!(v = ir_graph_value(g, pb->output[i])))
			return oom(c);
		if (v->producer)
			return diag_error(c->d, "node '%s' (%s): output '%s' is already produced by node '%s' (%s)",
					  ir_s(n->name), ir_s(n->op_type),
					  v->name, ir_s(v->producer->name),
					  ir_s(v->producer->op_type));
		if (v->init || v->is_input)
			return diag_error(c->d, "node '%s' (%s): output '%s' is also a graph %s",
					  ir_s(n->name), ir_s(n->op_type),
					  v->name, v->init ? "initializer" : "input");
		v->producer = n;
		n->outputs[i] = v;
	}
	return 0;
}

/* Second pass over a node: attributes (subgraphs) and input resolution. */
static int node_finish(struct conv *c, struct ir_graph *g, struct ir_node *n,
		       Onnx__NodeProto *pb)
{
	int rc;

	for (size_t i = 0; i < pb->n_attribute; i++) {
		rc = attr_from_pb(c, g, pb->attribute[i], &n->attrs[i]);
		n->n_attrs++;
		if (rc < 0)
			return rc;
		if (n->attrs[i]->g)
			n->attrs[i]->g->owner = n;
		for (size_t k = 0; k < n->attrs[i]->n_graphs; k++)
			n->attrs[i]->graphs[k]->owner = n;
	}
	for (size_t i = 0; i < pb->n_input; i++, n->n_inputs++) {
		struct ir_value *v;

		if (!pb->input[i][0])
			continue;
		v = ir_graph_lookup(g, pb->input[i]);
		if (!v && !(v = ir_graph_value(g, pb->input[i])))
			return oom(c);
		if (ir_value_add_use(v, n) < 0)
			return oom(c);
		n->inputs[i] = v;
	}
	return 0;
}

static int graph_from_pb(struct conv *c, Onnx__GraphProto *pb,
			 struct ir_graph *g)
{
	int bad = 0, rc;

	DUP(g->name, pb->name, bad);
	DUP(g->doc, pb->doc_string, bad);
	if (bad)
		return oom(c);
	if ((rc = vinfo_from_pb(c, g, pb->input, pb->n_input, &g->inputs,
				&g->n_inputs, 0)) < 0)
		return rc;
	for (size_t i = 0; i < g->n_inputs; i++)
		g->inputs[i].value->is_input = 1;
	if (pb->n_initializer &&
	    !(g->inits = calloc(pb->n_initializer, sizeof(*g->inits))))
		return oom(c);
	while (g->n_inits < pb->n_initializer) {
		struct ir_tensor *t = tensor_from_pb(c, pb->initializer[g->n_inits]);
		struct ir_value *v;

		if (!t)
			return c->d->status;
		g->inits[g->n_inits++] = t;   /* the graph owns it from here */
		if (!(v = ir_graph_value(g, ir_s(t->name))))
			return oom(c);
		if (v->init)
			return diag_error(c->d, "initializer '%s' is defined twice",
					  v->name);
		v->init = t;
	}
	if (pb->n_sparse_initializer &&
	    !(g->sparse_inits = calloc(pb->n_sparse_initializer,
				       sizeof(*g->sparse_inits))))
		return oom(c);
	while (g->n_sparse_inits < pb->n_sparse_initializer) {
		struct ir_sparse *s =
			sparse_from_pb(c, pb->sparse_initializer[g->n_sparse_inits]);
		struct ir_value *v;

		if (!s)
			return c->d->status;
		g->sparse_inits[g->n_sparse_inits++] = s;
		if (!(v = ir_graph_value(g, s->values ? ir_s(s->values->name) : "")))
			return oom(c);
		v->sparse_init = s;
	}
	for (size_t i = 0; i < pb->n_node; i++)
		if ((rc = node_from_pb(c, g, pb->node[i])) < 0)
			return rc;
	for (size_t i = 0; i < pb->n_node; i++)
		if ((rc = node_finish(c, g, g->nodes[i], pb->node[i])) < 0)
			return rc;
	if ((rc = vinfo_from_pb(c, g, pb->output, pb->n_output, &g->outputs,
				&g->n_outputs, 1)) < 0)
		return rc;
	if ((rc = vinfo_from_pb(c, g, pb->value_info, pb->n_value_info,
				&g->value_info, &g->n_value_info, 1)) < 0)
		return rc;
	for (size_t i = 0; i < pb->n_quantization_annotation; i++)
		if (unknown_add_message(&g->quant, 14,
					&pb->quantization_annotation[i]->base) < 0)
			return oom(c);
	if (unknown_from_pb(&pb->base, &g->unknown) < 0)
		return oom(c);
	return 0;
}

static int opsets_from_pb(struct conv *c, Onnx__OperatorSetIdProto **pb,
			  size_t n, struct ir_opset **out, size_t *n_out)
{
	int bad = 0;

	if (!n)
		return 0;
	if (!(*out = calloc(n, sizeof(**out))))
		return oom(c);
	*n_out = n;
	for (size_t i = 0; i < n; i++) {
		DUP((*out)[i].domain, pb[i]->domain, bad);
		(*out)[i].version = pb[i]->version;
		(*out)[i].present = pb[i]->has_version ? 1u : 0u;
	}
	return bad ? oom(c) : 0;
}

static char **strv_dup(char **v, size_t n)
{
	char **o = calloc(n + 1, sizeof(*o));

	for (size_t i = 0; o && i < n; i++)
		if (!(o[i] = strdup(v[i]))) {
			while (i--)
				free(o[i]);
			free(o);
			return NULL;
		}
	return o;
}

static int function_from_pb(struct conv *c, Onnx__FunctionProto *pb,
			    struct ir_function *f)
{
	int bad = 0, rc;
	struct ir_graph *g;

	DUP(f->name, pb->name, bad);
	DUP(f->domain, pb->domain, bad);
	DUP(f->doc, pb->doc_string, bad);
	/* each count is set as soon as its list is owned, for cleanup */
	if (bad || !(f->inputs = strv_dup(pb->input, pb->n_input)) ||
	    !(f->n_inputs = pb->n_input, f->outputs = strv_dup(pb->output, pb->n_output)) ||
	    !(f->n_outputs = pb->n_output,
	      f->attr_names = strv_dup(pb->attribute, pb->n_attribute)))
		return oom(c);
	f->n_attr_names = pb->n_attribute;
	if ((rc = opsets_from_pb(c, pb->opset_import, pb->n_opset_import,
				 &f->opsets, &f->n_opsets)) < 0)
		return rc;
	if (!(g = f->body = ir_graph_new(NULL)))
		return oom(c);
	for (size_t i = 0; i < pb->n_input; i++) {
		struct ir_value *v = ir_graph_value(g, pb->input[i]);

		if (!v)
			return oom(c);
		v->is_input = 1;
	}
	for (size_t i = 0; i < pb->n_node; i++)
		if ((rc = node_from_pb(c, g, pb->node[i])) < 0)
			return rc;
	for (size_t i = 0; i < pb->n_node; i++)
		if ((rc = node_finish(c, g, g->nodes[i], pb->node[i])) < 0)
			return rc;
	if (unknown_from_pb(&pb->base, &f->unknown) < 0)
		return oom(c);
	return 0;
}

int ir_from_pb(Onnx__ModelProto *pb, struct ir_model *m,
	       struct ir_strip *strip, struct ir_extfile *self,
	       struct ir_diag *d)
{
	struct conv c = { m, d, strip, self };
	int bad = 0, rc;

	if (pb->has_ir_version) {
		m->present |= IR_MODEL_HAS_IR_VERSION;
		m->ir_version = pb->ir_version;
	}
	if (pb->has_model_version) {
		m->present |= IR_MODEL_HAS_MODEL_VERSION;
		m->model_version = pb->model_version;
	}
	DUP(m->producer_name, pb->producer_name, bad);
	DUP(m->producer_version, pb->producer_version, bad);
	DUP(m->domain, pb->domain, bad);
	DUP(m->doc, pb->doc_string, bad);
	if (bad)
		return oom(&c);
	if ((rc = opsets_from_pb(&c, pb->opset_import, pb->n_opset_import,
				 &m->opsets, &m->n_opsets)) < 0)
		return rc;
	if (kv_from_pb(pb->metadata_props, pb->n_metadata_props, &m->metadata,
		       &m->n_metadata) < 0)
		return oom(&c);
	if (pb->graph) {
		if (!(m->graph = ir_graph_new(NULL)))
			return oom(&c);
		if ((rc = graph_from_pb(&c, pb->graph, m->graph)) < 0)
			return rc;
	}
	if (pb->n_functions &&
	    !(m->functions = calloc(pb->n_functions, sizeof(*m->functions))))
		return oom(&c);
	for (; m->n_functions < pb->n_functions; m->n_functions++) {
		struct ir_function *f = calloc(1, sizeof(*f));

		if (!f)
			return oom(&c);
		m->functions[m->n_functions] = f;
		if ((rc = function_from_pb(&c, pb->functions[m->n_functions], f)) < 0) {
			m->n_functions++;
			return rc;
		}
	}
	for (size_t i = 0; i < pb->n_training_info; i++)
		if (unknown_add_message(&m->training, 20,
					&pb->training_info[i]->base) < 0)
			return oom(&c);
	if (unknown_from_pb(&pb->base, &m->unknown) < 0)
		return oom(&c);
	return 0;
}

int ir_function_parse(const void *buf, size_t len, struct ir_function **out,
		      struct ir_diag *d)
{
	struct conv c = { NULL, d, NULL, NULL };
	struct ir_pbuf_alloc alloc;
	Onnx__FunctionProto *pb = NULL;
	struct ir_function *f = NULL;
	size_t limit = (len > SIZE_MAX / 16 - (1u << 20)) ? SIZE_MAX :
		       16 * len + (1u << 20);
	int rc;

	*out = NULL;
	if ((rc = ir_pbuf_prescan(buf, len, &onnx__function_proto__descriptor,
				  64, NULL, d)) < 0)
		return rc;
	ir_pbuf_alloc_init(&alloc, limit);
	if (!(pb = onnx__function_proto__unpack(&alloc.base, len, buf))) {
		if (alloc.failed == 2)
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		if (alloc.failed == 1)
			return diag_error(d, "parsing needs more than %zu bytes of memory",
					  limit);
		return diag_error(d, "corrupt protobuf: not a valid ONNX FunctionProto");
	}
	if (!(f = calloc(1, sizeof(*f)))) {
		rc = oom(&c);
		goto cleanup;
	}
	if ((rc = function_from_pb(&c, pb, f)) < 0 ||
	    (rc = ir_graph_toposort(f->body, d)) < 0)
		goto cleanup;
	*out = f;
	f = NULL;
cleanup:
	ir_function_free(f);
	onnx__function_proto__free_unpacked(pb, &alloc.base);
	return rc;
}
