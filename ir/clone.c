/* clone.c: an independent copy of a model in memory whose weights are
 * shared, not copied: the graph, its attributes and every other message
 * go through the protobuf form (packed as ir_model_save packs them, read
 * back as loading reads them), and each initializer of the main graph is
 * ir_tensor_clone() of the original's (external data and views of the
 * model file shared, computed tensors computed again, small owned bytes
 * copied).  The quantizer's accuracy check builds each trial in such a
 * copy of the float model instead of writing the model to a temporary
 * folder and loading it back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir_int.h"

/* Pack m with every main-graph initializer that stubs[] names replaced
 * by an empty stand-in, into a malloc'd buffer. */
static int pack(struct ir_model *m, struct ir_tensor **stubs, uint8_t **buf, size_t *len,
		struct ir_diag *d)
{
	struct ir_graph *g = m->graph;
	struct ir_save_opts so = { NULL, INT64_MAX };
	char *mem = NULL;
	size_t n = 0;
	FILE *f;
	int rc;

	if (!(f = open_memstream(&mem, &n)))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < g->n_inits; i++)
		if (stubs[i]) {
			struct ir_tensor *t = g->inits[i];

			g->inits[i] = stubs[i];
			stubs[i] = t;
		}
	rc = ir_save_streams(m, f, NULL, NULL, &so, d);
	for (size_t i = 0; i < g->n_inits; i++)
		if (stubs[i]) {
			struct ir_tensor *t = g->inits[i];

			g->inits[i] = stubs[i];
			stubs[i] = t;
		}
	if (fclose(f) != 0 && rc == 0)
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
	if (rc < 0) {
		free(mem);
		return rc;
	}
	*buf = (uint8_t *)mem;
	*len = n;
	return 0;
}

int ir_model_clone(struct ir_model *m, struct ir_model **out, struct ir_diag *d)
{
	struct ir_graph *g = m->graph;
	struct ir_tensor **stubs = NULL;
	struct ir_model *c = NULL;
	Onnx__ModelProto *pb = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = 0;

	*out = NULL;
	if (!g)
		return ir_diag_error(d, IR_EINVAL, "the model has no graph");
	if (!(stubs = calloc(g->n_inits + 1, sizeof(*stubs))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < g->n_inits; i++) {
		const struct ir_tensor *t = g->inits[i];

		if (t->dtype == IR_DTYPE_STRING)
			continue;       /* copied whole: ir_tensor_clone takes none */
		if (!(stubs[i] = ir_tensor_new_raw(ir_s(t->name), t->dtype, t->dims, t->n_dims,
						   NULL, 0))) {
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
			goto cleanup;
		}
	}
	if ((rc = pack(m, stubs, &buf, &len, d)) < 0)
		goto cleanup;
	if (!(pb = onnx__model_proto__unpack(NULL, len, buf))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory reading the model back");
		goto cleanup;
	}
	if (!(c = ir_model_new()) || (m->path && !(c->path = strdup(m->path))) ||
	    (m->dir && !(c->dir = strdup(m->dir)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	if ((rc = ir_from_pb(pb, c, NULL, NULL, d)) < 0)
		goto cleanup;
	if (!c->graph || c->graph->n_inits != g->n_inits) {
		rc = ir_diag_error(d, IR_EINTERNAL, "the copy of the model lost initializers");
		goto cleanup;
	}
	/* the weights: the original's, shared */
	for (size_t i = 0; i < g->n_inits && rc == 0; i++) {
		struct ir_value *v;
		struct ir_tensor *t;

		if (!stubs[i])
			continue;
		v = ir_graph_find(c->graph, ir_s(c->graph->inits[i]->name));
		if (!v || v->init != c->graph->inits[i])
			rc = ir_diag_error(d, IR_EINTERNAL, "the copy of initializer '%s' is "
					   "not its value's", ir_s(g->inits[i]->name));
		else if (!(t = ir_tensor_clone(g->inits[i], NULL)))
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		else
			rc = ir_value_replace_initializer(c->graph, v, t);
	}
	if (rc == 0)
		rc = ir_model_verify(c, d);
cleanup:
	if (pb)
		onnx__model_proto__free_unpacked(pb, NULL);
	free(buf);
	for (size_t i = 0; stubs && i < g->n_inits; i++)
		ir_tensor_free(stubs[i]);
	free(stubs);
	if (rc < 0)
		ir_model_free(c);
	else
		*out = c;
	return rc;
}
