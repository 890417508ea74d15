/* save.c: IR -> protobuf-c messages -> file.  The messages borrow the IR's
 * strings and payloads (a pool frees the message structs afterwards), big
 * tensors optionally go to an external data file, and both files are
 * written to temporaries in the target folder, fsynced and renamed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir_int.h"

struct pool_block {
	struct pool_block *next;
	max_align_t data[];
};

struct sv {
	struct pool_block *blocks;
	struct ir_diag *d;
	const struct ir_save_opts *o;
	FILE *ext;            /* external data being written, or NULL */
	const char *ext_name; /* location written into the model */
	uint64_t ext_off;
	int failed;
};

static void *pz(struct sv *s, size_t size)
{
	struct pool_block *b = calloc(1, sizeof(*b) + (size ? size : 1));

	if (!b) {
		if (!s->failed)
			ir_diag_error(s->d, IR_ENOMEM, "out of memory");
		s->failed = 1;
		return NULL;
	}
	b->next = s->blocks;
	s->blocks = b;
	return b->data;
}

#define NEW(s, type, init) new_msg(s, sizeof(type), &(type)init)
static void *new_msg(struct sv *s, size_t size, const void *init)
{
	void *p = pz(s, size);

	if (p)
		memcpy(p, init, size);
	return p;
}

static void pool_release(struct sv *s)
{
	while (s->blocks) {
		struct pool_block *b = s->blocks;

		s->blocks = b->next;
		free(b);
	}
}

static void unknown_to_pb(struct sv *s, const struct ir_unknown *u,
			  ProtobufCMessage *base)
{
	ProtobufCMessageUnknownField *f;

	if (!u || !u->n || !(f = pz(s, u->n * sizeof(*f))))
		return;
	for (size_t i = 0; i < u->n; i++) {
		f[i].tag = u->fields[i].tag;
		f[i].wire_type = (ProtobufCWireType)u->fields[i].wire_type;
		f[i].len = u->fields[i].len;
		f[i].data = u->fields[i].data;
	}
	base->n_unknown_fields = u->n;
	base->unknown_fields = f;
}

static void unknown_concat(struct ir_unknown_field *dst,
			   const struct ir_unknown *a, const struct ir_unknown *b)
{
	if (a->n)
		memcpy(dst, a->fields, a->n * sizeof(*dst));
	if (b->n)
		memcpy(dst + a->n, b->fields, b->n * sizeof(*dst));
}

static Onnx__StringStringEntryProto **kv_to_pb(struct sv *s,
					       const struct ir_kv *kv, size_t n)
{
	Onnx__StringStringEntryProto **v = pz(s, (n + 1) * sizeof(*v));

	for (size_t i = 0; v && i < n; i++) {
		v[i] = NEW(s, Onnx__StringStringEntryProto,
			   ONNX__STRING_STRING_ENTRY_PROTO__INIT);
		if (!v[i])
			return NULL;
		v[i]->key = kv[i].key;
		v[i]->value = kv[i].value;
	}
	return v;
}

static Onnx__TypeProto *type_to_pb(struct sv *s, const struct ir_type *t)
{
	Onnx__TypeProto *p = NEW(s, Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);

	if (!p)
		return NULL;
	p->denotation = t->denotation;
	unknown_to_pb(s, t->unknown, &p->base);
	switch (t->kind) {
	case IR_TYPE_TENSOR:
	case IR_TYPE_SPARSE_TENSOR: {
		Onnx__TypeProto__Tensor *tt = NEW(s, Onnx__TypeProto__Tensor,
						  ONNX__TYPE_PROTO__TENSOR__INIT);

		if (!tt)
			return NULL;
		tt->has_elem_type = (t->present & IR_TYPE_HAS_ELEM) != 0;
		tt->elem_type = t->elem_type;
		if (t->present & IR_TYPE_HAS_SHAPE) {
			Onnx__TensorShapeProto *sh = NEW(s, Onnx__TensorShapeProto,
							 ONNX__TENSOR_SHAPE_PROTO__INIT);

			if (!sh || !(sh->dim = pz(s, (t->shape.n_dims + 1) *
						       sizeof(*sh->dim))))
				return NULL;
			sh->n_dim = t->shape.n_dims;
			for (size_t i = 0; i < t->shape.n_dims; i++) {
				const struct ir_dim *dm = &t->shape.dims[i];
				Onnx__TensorShapeProto__Dimension *pd = NEW(s,
					Onnx__TensorShapeProto__Dimension,
					ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT);

				if (!pd)
					return NULL;
				pd->denotation = dm->denotation;
				if (dm->kind == IR_DIM_VALUE) {
					pd->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
					pd->dim_value = dm->value;
				} else if (dm->kind == IR_DIM_PARAM) {
					pd->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
					pd->dim_param = dm->param;
				}
				sh->dim[i] = pd;
			}
			tt->shape = sh;
		}
		if (t->kind == IR_TYPE_TENSOR) {
			p->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
			p->tensor_type = tt;
		} else {
			/* SparseTensor has the Tensor layout under another
			 * descriptor. */
			tt->base.descriptor = &onnx__type_proto__sparse_tensor__descriptor;
			p->value_case = ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE;
			p->sparse_tensor_type = (Onnx__TypeProto__SparseTensor *)tt;
		}
		break;
	}
	case IR_TYPE_SEQUENCE: {
		Onnx__TypeProto__Sequence *q = NEW(s, Onnx__TypeProto__Sequence,
						   ONNX__TYPE_PROTO__SEQUENCE__INIT);

		if (!q || (t->inner && !(q->elem_type = type_to_pb(s, t->inner))))
			return NULL;
		p->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
		p->sequence_type = q;
		break;
	}
	case IR_TYPE_OPTIONAL: {
		Onnx__TypeProto__Optional *q = NEW(s, Onnx__TypeProto__Optional,
						   ONNX__TYPE_PROTO__OPTIONAL__INIT);

		if (!q || (t->inner && !(q->elem_type = type_to_pb(s, t->inner))))
			return NULL;
		p->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
		p->optional_type = q;
		break;
	}
	case IR_TYPE_MAP: {
		Onnx__TypeProto__Map *q = NEW(s, Onnx__TypeProto__Map,
					      ONNX__TYPE_PROTO__MAP__INIT);

		if (!q || (t->inner && !(q->value_type = type_to_pb(s, t->inner))))
			return NULL;
		q->has_key_type = (t->present & IR_TYPE_HAS_ELEM) != 0;
		q->key_type = t->elem_type;
		p->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
		p->map_type = q;
		break;
	}
	default:
		break;
	}
	return p;
}

static int ext_sink(const uint8_t *data, size_t len, void *ctx)
{
	struct sv *s = ctx;

	if (fwrite(data, 1, len, s->ext) != len)
		return ir_diag_error(s->d, IR_EIO, "writing external data '%s': %s",
				     s->ext_name, ir_strerror(errno));
	s->ext_off += len;
	return 0;
}

/* Append a tensor's bytes to the external file, 64-byte aligned, piece by
 * piece (a derived tensor is converted on the way, never held whole). */
static int write_external(struct sv *s, Onnx__TensorProto *p, struct ir_tensor *t)
{
	static const uint8_t zeros[64];
	size_t pad = (size_t)((64 - s->ext_off % 64) % 64);
	Onnx__StringStringEntryProto **kv = pz(s, 4 * sizeof(*kv));
	char *off = pz(s, 24), *lenbuf = pz(s, 24);
	uint64_t begin;

	if (!kv || !off || !lenbuf)
		return -1;
	if (pad && fwrite(zeros, 1, pad, s->ext) != pad) {
		ir_diag_error(s->d, IR_EIO, "writing external data '%s': %s",
			      s->ext_name, ir_strerror(errno));
		s->failed = 1;
		return -1;
	}
	s->ext_off += pad;
	begin = s->ext_off;
	if (ir_tensor_stream(t, ext_sink, s, s->d) < 0) {
		s->failed = 1;
		return -1;
	}
	snprintf(off, 24, "%llu", (unsigned long long)begin);
	snprintf(lenbuf, 24, "%llu", (unsigned long long)(s->ext_off - begin));
	for (int i = 0; i < 3; i++)
		if (!(kv[i] = NEW(s, Onnx__StringStringEntryProto,
				  ONNX__STRING_STRING_ENTRY_PROTO__INIT)))
			return -1;
	kv[0]->key = (char *)"location";
	kv[0]->value = (char *)s->ext_name;
	kv[1]->key = (char *)"offset";
	kv[1]->value = off;
	kv[2]->key = (char *)"length";
	kv[2]->value = lenbuf;
	p->external_data = kv;
	p->n_external_data = 3;
	p->has_data_location = 1;
	p->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	return 0;
}

static Onnx__TensorProto *tensor_to_pb(struct sv *s, struct ir_tensor *t)
{
	Onnx__TensorProto *p = NEW(s, Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
	int64_t nbytes = ir_tensor_nbytes(t);
	int go_ext;

	if (!p)
		return NULL;
	p->name = t->name;
	p->doc_string = t->doc;
	p->has_data_type = (t->present & IR_TENSOR_HAS_DTYPE) != 0;
	p->data_type = t->dtype;
	p->n_dims = t->n_dims;
	p->dims = t->dims;
	unknown_to_pb(s, &t->unknown, &p->base);
	if (t->present & IR_TENSOR_HAS_SEGMENT) {
		p->segment = NEW(s, Onnx__TensorProto__Segment,
				 ONNX__TENSOR_PROTO__SEGMENT__INIT);
		if (!p->segment)
			return NULL;
		p->segment->has_begin = p->segment->has_end = 1;
		p->segment->begin = t->seg_begin;
		p->segment->end = t->seg_end;
	}
	go_ext = s->ext && t->dtype != IR_DTYPE_STRING && nbytes >= 0 &&
		 nbytes >= s->o->size_threshold && t->storage != IR_STORE_NONE;
	if (go_ext)
		return write_external(s, p, t) < 0 ? NULL : p;
	if (t->storage == IR_STORE_EXTERNAL || t->storage == IR_STORE_DERIVED) {
		const uint8_t *data;
		size_t len;

		if (ir_tensor_data(t, &data, &len, s->d) < 0) {
			s->failed = 1;
			return NULL;
		}
		p->has_raw_data = 1;
		p->raw_data.data = (uint8_t *)data;
		p->raw_data.len = len;
		return p;
	}
	p->has_data_location = (t->present & IR_TENSOR_HAS_LOCATION) != 0;
	p->data_location = (Onnx__TensorProto__DataLocation)t->data_location;
	if (t->storage == IR_STORE_RAW || (t->present & IR_TENSOR_HAS_RAW)) {
		p->has_raw_data = 1;
		p->raw_data.data = t->raw;
		p->raw_data.len = t->raw_len;
	}
	if (t->storage != IR_STORE_TYPED)
		return p;
	switch (t->field) {
	case IR_FIELD_FLOAT: p->n_float_data = t->n_typed; p->float_data = t->typed; break;
	case IR_FIELD_INT32: p->n_int32_data = t->n_typed; p->int32_data = t->typed; break;
	case IR_FIELD_INT64: p->n_int64_data = t->n_typed; p->int64_data = t->typed; break;
	case IR_FIELD_DOUBLE: p->n_double_data = t->n_typed; p->double_data = t->typed; break;
	case IR_FIELD_UINT64: p->n_uint64_data = t->n_typed; p->uint64_data = t->typed; break;
	case IR_FIELD_STRING:
		if (!(p->string_data = pz(s, (t->n_typed + 1) * sizeof(*p->string_data))))
			return NULL;
		p->n_string_data = t->n_typed;
		for (size_t i = 0; i < t->n_typed; i++) {
			p->string_data[i].data = (uint8_t *)t->strings[i];
			p->string_data[i].len = t->string_lens[i];
		}
		break;
	default:
		break;
	}
	return p;
}

static Onnx__SparseTensorProto *sparse_to_pb(struct sv *s, struct ir_sparse *t)
{
	Onnx__SparseTensorProto *p = NEW(s, Onnx__SparseTensorProto,
					 ONNX__SPARSE_TENSOR_PROTO__INIT);

	if (!p || (t->values && !(p->values = tensor_to_pb(s, t->values))) ||
	    (t->indices && !(p->indices = tensor_to_pb(s, t->indices))))
		return NULL;
	p->n_dims = t->n_dims;
	p->dims = t->dims;
	unknown_to_pb(s, &t->unknown, &p->base);
	return p;
}

static Onnx__GraphProto *graph_to_pb(struct sv *s, struct ir_graph *g);

static Onnx__AttributeProto *attr_to_pb(struct sv *s, struct ir_attr *a)
{
	Onnx__AttributeProto *p = NEW(s, Onnx__AttributeProto,
				      ONNX__ATTRIBUTE_PROTO__INIT);

	if (!p)
		return NULL;
	p->name = a->name;
	p->ref_attr_name = a->ref_attr_name;
	p->doc_string = a->doc;
	p->has_type = (a->present & IR_ATTR_HAS_TYPE) != 0;
	p->type = (Onnx__AttributeProto__AttributeType)a->type;
	p->has_f = (a->present & IR_ATTR_HAS_F) != 0;
	p->f = a->f;
	p->has_i = (a->present & IR_ATTR_HAS_I) != 0;
	p->i = a->i;
	p->has_s = (a->present & IR_ATTR_HAS_S) != 0;
	p->s.data = a->s;
	p->s.len = a->s_len;
	unknown_to_pb(s, &a->unknown, &p->base);
	if ((a->t && !(p->t = tensor_to_pb(s, a->t))) ||
	    (a->g && !(p->g = graph_to_pb(s, a->g))) ||
	    (a->sparse && !(p->sparse_tensor = sparse_to_pb(s, a->sparse))) ||
	    (a->tp && !(p->tp = type_to_pb(s, a->tp))))
		return NULL;
	p->n_floats = a->n_floats;
	p->floats = a->floats;
	p->n_ints = a->n_ints;
	p->ints = a->ints;
#define LIST(nfield, field, n, src, conv) \
	if (n) { \
		if (!(p->field = pz(s, (n) * sizeof(*p->field)))) return NULL; \
		p->nfield = n; \
		for (size_t i = 0; i < (n); i++) \
			if (!(p->field[i] = conv(s, src[i]))) return NULL; \
	}
	LIST(n_tensors, tensors, a->n_tensors, a->tensors, tensor_to_pb)
	LIST(n_graphs, graphs, a->n_graphs, a->graphs, graph_to_pb)
	LIST(n_sparse_tensors, sparse_tensors, a->n_sparses, a->sparses, sparse_to_pb)
	LIST(n_type_protos, type_protos, a->n_tps, a->tps, type_to_pb)
#undef LIST
	if (a->n_strings) {
		if (!(p->strings = pz(s, a->n_strings * sizeof(*p->strings))))
			return NULL;
		p->n_strings = a->n_strings;
		for (size_t i = 0; i < a->n_strings; i++) {
			p->strings[i].data = a->strings[i];
			p->strings[i].len = a->string_lens[i];
		}
	}
	return p;
}

static char **names_of(struct sv *s, struct ir_value **v, size_t n)
{
	char **o = pz(s, (n + 1) * sizeof(*o));

	for (size_t i = 0; o && i < n; i++)
		o[i] = v[i] ? v[i]->name : (char *)"";
	return o;
}

static Onnx__NodeProto *node_to_pb(struct sv *s, struct ir_node *n)
{
	Onnx__NodeProto *p = NEW(s, Onnx__NodeProto, ONNX__NODE_PROTO__INIT);

	if (!p || !(p->input = names_of(s, n->inputs, n->n_inputs)) ||
	    !(p->output = names_of(s, n->outputs, n->n_outputs)) ||
	    !(p->attribute = pz(s, (n->n_attrs + 1) * sizeof(*p->attribute))))
		return NULL;
	p->n_input = n->n_inputs;
	p->n_output = n->n_outputs;
	p->name = n->name;
	p->op_type = n->op_type;
	p->domain = n->domain;
	p->doc_string = n->doc;
	unknown_to_pb(s, &n->unknown, &p->base);
	for (; p->n_attribute < n->n_attrs; p->n_attribute++)
		if (!(p->attribute[p->n_attribute] =
		      attr_to_pb(s, n->attrs[p->n_attribute])))
			return NULL;
	return p;
}

static Onnx__ValueInfoProto **vinfo_to_pb(struct sv *s,
					  const struct ir_vinfo *vi, size_t n)
{
	Onnx__ValueInfoProto **v = pz(s, (n + 1) * sizeof(*v));

	for (size_t i = 0; v && i < n; i++) {
		if (!(v[i] = NEW(s, Onnx__ValueInfoProto,
				 ONNX__VALUE_INFO_PROTO__INIT)))
			return NULL;
		v[i]->name = vi[i].value->name;
		v[i]->doc_string = vi[i].doc;
		if (vi[i].type && !(v[i]->type = type_to_pb(s, vi[i].type)))
			return NULL;
		unknown_to_pb(s, &vi[i].unknown, &v[i]->base);
	}
	return v;
}

static int nodes_to_pb(struct sv *s, struct ir_graph *g,
		       Onnx__NodeProto ***out, size_t *n_out)
{
	if (!(*out = pz(s, (g->n_nodes + 1) * sizeof(**out))))
		return -1;
	for (*n_out = 0; *n_out < g->n_nodes; (*n_out)++)
		if (!((*out)[*n_out] = node_to_pb(s, g->nodes[*n_out])))
			return -1;
	return 0;
}

static Onnx__GraphProto *graph_to_pb(struct sv *s, struct ir_graph *g)
{
	Onnx__GraphProto *p = NEW(s, Onnx__GraphProto, ONNX__GRAPH_PROTO__INIT);
	struct ir_unknown u = { 0, NULL };

	if (!p || nodes_to_pb(s, g, &p->node, &p->n_node) < 0)
		return NULL;
	p->name = g->name;
	p->doc_string = g->doc;
	if (!(p->input = vinfo_to_pb(s, g->inputs, g->n_inputs)) ||
	    !(p->output = vinfo_to_pb(s, g->outputs, g->n_outputs)) ||
	    !(p->value_info = vinfo_to_pb(s, g->value_info, g->n_value_info)))
		return NULL;
	p->n_input = g->n_inputs;
	p->n_output = g->n_outputs;
	p->n_value_info = g->n_value_info;
	if (!(p->initializer = pz(s, (g->n_inits + 1) * sizeof(*p->initializer))) ||
	    !(p->sparse_initializer = pz(s, (g->n_sparse_inits + 1) *
					    sizeof(*p->sparse_initializer))))
		return NULL;
	for (; p->n_initializer < g->n_inits; p->n_initializer++)
		if (!(p->initializer[p->n_initializer] =
		      tensor_to_pb(s, g->inits[p->n_initializer])))
			return NULL;
	for (; p->n_sparse_initializer < g->n_sparse_inits; p->n_sparse_initializer++)
		if (!(p->sparse_initializer[p->n_sparse_initializer] =
		      sparse_to_pb(s, g->sparse_inits[p->n_sparse_initializer])))
			return NULL;
	/* Opaque quantization annotations travel as unknown fields. */
	if (g->quant.n || g->unknown.n) {
		u.n = g->quant.n + g->unknown.n;
		if (!(u.fields = pz(s, u.n * sizeof(*u.fields))))
			return NULL;
		unknown_concat(u.fields, &g->quant, &g->unknown);
		unknown_to_pb(s, &u, &p->base);
	}
	return p;
}

static Onnx__OperatorSetIdProto **opsets_to_pb(struct sv *s,
					       const struct ir_opset *o, size_t n)
{
	Onnx__OperatorSetIdProto **v = pz(s, (n + 1) * sizeof(*v));

	for (size_t i = 0; v && i < n; i++) {
		if (!(v[i] = NEW(s, Onnx__OperatorSetIdProto,
				 ONNX__OPERATOR_SET_ID_PROTO__INIT)))
			return NULL;
		v[i]->domain = o[i].domain;
		v[i]->has_version = o[i].present != 0;
		v[i]->version = o[i].version;
	}
	return v;
}

static Onnx__FunctionProto *function_to_pb(struct sv *s, struct ir_function *f)
{
	Onnx__FunctionProto *p = NEW(s, Onnx__FunctionProto,
				     ONNX__FUNCTION_PROTO__INIT);

	if (!p || !(p->opset_import = opsets_to_pb(s, f->opsets, f->n_opsets)))
		return NULL;
	p->name = f->name;
	p->domain = f->domain;
	p->doc_string = f->doc;
	p->n_input = f->n_inputs;
	p->input = f->inputs;
	p->n_output = f->n_outputs;
	p->output = f->outputs;
	p->n_attribute = f->n_attr_names;
	p->attribute = f->attr_names;
	p->n_opset_import = f->n_opsets;
	unknown_to_pb(s, &f->unknown, &p->base);
	if (f->body && nodes_to_pb(s, f->body, &p->node, &p->n_node) < 0)
		return NULL;
	return p;
}

static Onnx__ModelProto *model_to_pb(struct sv *s, struct ir_model *m)
{
	Onnx__ModelProto *p = NEW(s, Onnx__ModelProto, ONNX__MODEL_PROTO__INIT);
	struct ir_unknown u = { 0, NULL };

	if (!p)
		return NULL;
	p->has_ir_version = (m->present & IR_MODEL_HAS_IR_VERSION) != 0;
	p->ir_version = m->ir_version;
	p->has_model_version = (m->present & IR_MODEL_HAS_MODEL_VERSION) != 0;
	p->model_version = m->model_version;
	p->producer_name = m->producer_name;
	p->producer_version = m->producer_version;
	p->domain = m->domain;
	p->doc_string = m->doc;
	if (!(p->opset_import = opsets_to_pb(s, m->opsets, m->n_opsets)) ||
	    !(p->metadata_props = kv_to_pb(s, m->metadata, m->n_metadata)) ||
	    (m->graph && !(p->graph = graph_to_pb(s, m->graph))) ||
	    !(p->functions = pz(s, (m->n_functions + 1) * sizeof(*p->functions))))
		return NULL;
	p->n_opset_import = m->n_opsets;
	p->n_metadata_props = m->n_metadata;
	for (; p->n_functions < m->n_functions; p->n_functions++)
		if (!(p->functions[p->n_functions] =
		      function_to_pb(s, m->functions[p->n_functions])))
			return NULL;
	if (m->training.n || m->unknown.n) {
		u.n = m->training.n + m->unknown.n;
		if (!(u.fields = pz(s, u.n * sizeof(*u.fields))))
			return NULL;
		unknown_concat(u.fields, &m->training, &m->unknown);
		unknown_to_pb(s, &u, &p->base);
	}
	return p;
}

/* ---- entry point used by write.c ---------------------------------------- */

struct file_buffer {
	ProtobufCBuffer base;
	FILE *f;
	int err;
};

static void file_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct file_buffer *fb = (struct file_buffer *)b;

	if (!fb->err && len && fwrite(data, 1, len, fb->f) != len)
		fb->err = errno ? errno : EIO;
}

int ir_save_streams(struct ir_model *m, FILE *model, FILE *ext,
		    const char *ext_name, const struct ir_save_opts *o,
		    struct ir_diag *d)
{
	struct sv s = { .d = d, .o = o, .ext = ext, .ext_name = ext_name };
	struct file_buffer fb = { { file_append }, model, 0 };
	Onnx__ModelProto *p = model_to_pb(&s, m);
	size_t size;
	int rc = 0;

	if (!p) {
		rc = d->status ? d->status : ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	size = onnx__model_proto__get_packed_size(p);
	if (size > (size_t)INT32_MAX) {
		rc = ir_diag_error(d, IR_EUSAGE, "model would be %zu bytes, over protobuf's 2 GiB limit; save its weights with --external-data FILE",
				   size);
		goto cleanup;
	}
	onnx__model_proto__pack_to_buffer(p, &fb.base);
	if (fb.err)
		rc = ir_diag_error(d, IR_EIO, "write failed: %s", ir_strerror(fb.err));
cleanup:
	pool_release(&s);
	return rc;
}

int ir_tensor_serialize(struct ir_tensor *t, uint8_t **buf, size_t *len,
			struct ir_diag *d)
{
	struct ir_save_opts o = { NULL, 0 };
	struct sv s = { .d = d, .o = &o };
	Onnx__TensorProto *p = tensor_to_pb(&s, t);
	int rc = 0;

	*buf = NULL;
	*len = 0;
	if (!p) {
		rc = d->status ? d->status : ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	*len = onnx__tensor_proto__get_packed_size(p);
	if (!(*buf = malloc(*len ? *len : 1))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	onnx__tensor_proto__pack(p, *buf);
cleanup:
	pool_release(&s);
	return rc;
}
