/* plan_peak.c: the memory a run will need, estimated before it starts:
 * static inference with the actual inputs bound gives each main-graph
 * value's size; replaying the plan's allocation and release order gives
 * the peak of live tensor bytes (constants copied out of the model, and
 * results of constant nodes the session keeps, count from the start).
 * Used by --max-memory to refuse a run up front. */
#include <stdlib.h>

#include "ir/infer.h"
#include "runtime/exec_int.h"

static int64_t vtype_bytes(const struct ir_vtype *t)
{
	int64_t n = 1;
	size_t es;

	if (!t || t->is_seq || !t->dtype || t->rank < 0)
		return -1;
	if (!(es = rt_dtype_size(t->dtype)))
		return -1;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i].kind != IR_VDIM_VALUE || t->dims[i].value < 0)
			return -1;
		if (t->dims[i].value && n > INT64_MAX / 16 / t->dims[i].value)
			return -1;
		n *= t->dims[i].value;
	}
	return n * (int64_t)es;
}

int rt_session_plan_peak(struct rt_session *s, struct rt_value **inputs,
			 size_t n, int64_t *peak, size_t *n_unknown,
			 struct ir_diag *d)
{
	struct rt_gplan *p = s->main;
	struct ir_tensor **ts = calloc(n + 1, sizeof(*ts));
	int64_t *size = calloc(p->n_slots + 1, sizeof(*size));
	struct ir_infer inf;
	int64_t live = s->mem.cur;
	int fold = rt_fold_active(s), rc;

	ir_infer_init(&inf);
	*peak = 0;
	*n_unknown = 0;
	if (!ts || !size) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		if (!inputs[i] || inputs[i]->kind != RT_TENSOR)
			continue;
		if ((rc = rt_value_to_ir(inputs[i], "input", &ts[i], d)) < 0)
			goto cleanup;
		live += inputs[i]->numel * (int64_t)rt_dtype_size(inputs[i]->dtype);
	}
	if ((rc = ir_infer_model_inputs(s->m, ts, n, &inf, d)) < 0)
		goto cleanup;
	*peak = live;
	for (size_t i = 0; i < p->n_nodes; i++) {
		const struct rt_nplan *np = &p->nodes[i];

		/* kept results (fold.c) are bound, in use already */
		for (size_t j = 0; j < np->node->n_outputs && !(np->kept && fold); j++) {
			const struct ir_vtype *t;
			int64_t b;

			if (np->out[j] < 0)
				continue;
			t = ir_infer_get(&inf, np->node->outputs[j]);
			b = vtype_bytes(t);
			if (b < 0) {
				(*n_unknown)++;
				continue;
			}
			/* a 16-bit float result kept in float32 (lowp.c) */
			if (np->wide_out && (t->dtype == IR_DTYPE_FLOAT16 ||
					     t->dtype == IR_DTYPE_BFLOAT16))
				b *= 2;
			size[np->out[j]] = b;
			live += b;
		}
		if (live > *peak)
			*peak = live;
		for (size_t j = 0; j < np->n_release; j++) {
			live -= size[np->release[j]];
			size[np->release[j]] = 0;
		}
	}
	rc = 0;
cleanup:
	for (size_t i = 0; ts && i < n; i++)
		ir_tensor_free(ts[i]);
	free(ts);
	free(size);
	ir_infer_release(&inf);
	return rc;
}
