/* k_seq.c: kernels of the seq family: sequences of tensors (construct,
 * empty, at, insert, erase, length, split into and concatenate from) and
 * SequenceMap, which runs its body once per position; also the slicing and
 * joining helpers of k_ctrl_int.h that Loop and Scan use too.  Sequences
 * are immutable once made: kernels build new ones holding references to
 * the same tensors. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_ctrl_int.h"

/* ---- helpers (k_ctrl_int.h) ------------------------------------------- */

static int new_tensor(struct rt_kctx *k, int dtype, int rank,
		      const int64_t *dims, struct rt_value **out)
{
	struct ir_diag sub;
	char w[RT_WHERE_SIZE];
	int rc;

	ir_diag_init(&sub);
	if ((rc = rt_tensor_new(k->mem, dtype, rank, dims, out, &sub)) < 0)
		return ir_diag_error(k->d, rc, "%s: %s", rt_node_where(k->node, w),
				     sub.msg);
	return 0;
}

/* Copy n elements from src[so..] to dst[do_..] (strings duplicated). */
static int copy_elems(struct rt_kctx *k, struct rt_value *dst, int64_t do_,
		      const struct rt_value *src, int64_t so, int64_t n)
{
	size_t es = rt_dtype_size(src->dtype);

	if (n <= 0)
		return 0;
	if (src->dtype != IR_DTYPE_STRING) {
		memcpy((char *)dst->data + do_ * (int64_t)es,
		       (const char *)src->data + so * (int64_t)es, (size_t)n * es);
		return 0;
	}
	for (int64_t i = 0; i < n; i++) {
		const char *s = ((char *const *)src->data)[so + i];
		char **d = &((char **)dst->data)[do_ + i];

		free(*d);
		if (!(*d = strdup(s ? s : "")))
			return rt_oom(k);
	}
	return 0;
}

int kc_take(struct rt_kctx *k, struct rt_value *t, int axis,
	    int64_t start, int64_t len, int keep, struct rt_value **out)
{
	int64_t dims[RT_MAX_RANK], outer = 1, inner = 1, n_axis;
	struct rt_value *r = NULL;
	int rank = 0, rc;

	*out = NULL;
	if (axis < 0 || axis >= t->rank || start < 0 || len < 0 ||
	    start + len > t->dims[axis] || (!keep && len != 1))
		return rt_err(k, "slice [%lld, %lld) of axis %d out of range",
			      (long long)start, (long long)(start + len), axis);
	n_axis = t->dims[axis];
	for (int i = 0; i < t->rank; i++) {
		if (i < axis)
			outer *= t->dims[i];
		else if (i > axis)
			inner *= t->dims[i];
		if (i != axis)
			dims[rank++] = t->dims[i];
		else if (keep)
			dims[rank++] = len;
	}
	if (outer == 1 && t->dtype != IR_DTYPE_STRING) {
		/* one contiguous run: a view sharing t's data */
		if (!(r = calloc(1, sizeof(*r))))
			return rt_oom(k);
		r->refs = 1;
		r->kind = RT_TENSOR;
		r->dtype = t->dtype;
		r->rank = rank;
		memcpy(r->dims, dims, sizeof(r->dims));
		r->numel = len * inner;
		r->data = (char *)t->data + start * inner * (int64_t)rt_dtype_size(t->dtype);
		r->flags = t->flags & RT_VALUE_READONLY;
		r->base = rt_value_ref(t);
		*out = r;
		return 0;
	}
	if ((rc = new_tensor(k, t->dtype, rank, dims, &r)) < 0)
		return rc;
	for (int64_t o = 0; o < outer; o++)
		if ((rc = copy_elems(k, r, o * len * inner, t,
				     (o * n_axis + start) * inner, len * inner)) < 0) {
			rt_value_unref(r);
			return rc;
		}
	*out = r;
	return 0;
}

int kc_join(struct rt_kctx *k, struct rt_value *const *items, size_t n,
	    int axis, int new_axis, struct rt_value **out)
{
	const struct rt_value *f;
	int64_t dims[RT_MAX_RANK], outer = 1, inner = 1, total = 0, at = 0;
	struct rt_value *r = NULL;
	int rank, rc;

	*out = NULL;
	if (!n)
		return rt_err(k, "nothing to join");
	f = items[0];
	rank = f->rank + (new_axis ? 1 : 0);
	if (axis < 0 || axis >= rank || rank > RT_MAX_RANK)
		return rt_err(k, "axis %d out of range for rank %d", axis, rank);
	for (size_t i = 0; i < n; i++) {
		const struct rt_value *t = items[i];
		int same = t->kind == RT_TENSOR && t->dtype == f->dtype &&
			   t->rank == f->rank;

		for (int j = 0; same && j < t->rank; j++)
			same = t->dims[j] == f->dims[j] || (!new_axis && j == axis);
		if (!same) {
			char a[160], b[160];

			rt_value_describe(f, a, sizeof(a));
			rt_value_describe(t, b, sizeof(b));
			return rt_err(k, "cannot %s %s and %s (item %zu)",
				      new_axis ? "stack" : "concatenate", a, b, i);
		}
		total += new_axis ? 1 : t->dims[axis];
	}
	for (int j = 0, s = 0; j < rank; j++) {
		if (j == axis) {
			dims[j] = total;
			if (!new_axis)
				s++;
			continue;
		}
		dims[j] = f->dims[s++];
		if (j < axis)
			outer *= dims[j];
		else
			inner *= dims[j];
	}
	if ((rc = new_tensor(k, f->dtype, rank, dims, &r)) < 0)
		return rc;
	/* each item fills, for every outer index, a run of its axis length
	 * times inner elements */
	for (size_t i = 0; i < n; i++) {
		int64_t len = new_axis ? 1 : items[i]->dims[axis];

		for (int64_t o = 0; o < outer; o++)
			if ((rc = copy_elems(k, r, (o * total + at) * inner, items[i],
					     o * len * inner, len * inner)) < 0) {
				rt_value_unref(r);
				return rc;
			}
		at += len;
	}
	*out = r;
	return 0;
}

int kc_zeros(struct rt_kctx *k, int dtype, int rank, const int64_t *dims,
	     struct rt_value **out)
{
	int rc = new_tensor(k, dtype, rank, dims, out);

	if (rc < 0)
		return rc;
	if (dtype != IR_DTYPE_STRING) {
		memset((*out)->data, 0, (size_t)(*out)->numel * rt_dtype_size(dtype));
		return 0;
	}
	for (int64_t i = 0; i < (*out)->numel; i++)
		if (!(((char **)(*out)->data)[i] = strdup(""))) {
			rt_value_unref(*out);
			*out = NULL;
			return rt_oom(k);
		}
	return 0;
}

void kc_declared(const struct ir_type *t, int *dtype, int *kind, int *rank,
		 int64_t *dims)
{
	*dtype = 0;
	*kind = RT_TENSOR;
	*rank = -1;
	if (!t)
		return;
	if (t->kind == IR_TYPE_SEQUENCE || t->kind == IR_TYPE_OPTIONAL) {
		*kind = t->kind == IR_TYPE_SEQUENCE ? RT_SEQUENCE : RT_OPTIONAL;
		if (t->inner && t->inner->kind == IR_TYPE_TENSOR)
			*dtype = t->inner->elem_type;
		else if (t->inner && t->inner->inner)
			*dtype = t->inner->inner->elem_type;
		return;
	}
	if (t->kind != IR_TYPE_TENSOR)
		return;
	*dtype = t->elem_type;
	if (!IR_HAS(t, IR_TYPE_HAS_SHAPE) || t->shape.n_dims > RT_MAX_RANK)
		return;
	for (size_t i = 0; i < t->shape.n_dims; i++) {
		if (t->shape.dims[i].kind != IR_DIM_VALUE)
			return;
		dims[i] = t->shape.dims[i].value;
	}
	*rank = (int)t->shape.n_dims;
}

/* ---- sequences -------------------------------------------------------- */

static const char *kind_name(const struct rt_value *v)
{
	return v->kind == RT_TENSOR ? "tensor" : v->kind == RT_SEQUENCE ?
	       "sequence" : v->kind == RT_OPTIONAL ? "optional" : "map";
}

static int in_seq(struct rt_kctx *k, size_t i, struct rt_value **out)
{
	struct rt_value *v = rt_in(k, i);

	*out = v;
	if (!v)
		return rt_err(k, "input %zu is missing", i);
	if (v->kind != RT_SEQUENCE)
		return rt_err(k, "input %zu is a %s, not a sequence", i, kind_name(v));
	return 0;
}

static int seq_err(struct rt_kctx *k, struct ir_diag *sub, int rc)
{
	char w[RT_WHERE_SIZE];

	return ir_diag_error(k->d, rc, "%s: %s", rt_node_where(k->node, w), sub->msg);
}

/* A new sequence of dtype holding references to items[0..n), with `ins`
 * (if not NULL) inserted at position pos. */
static int seq_build(struct rt_kctx *k, int dtype, struct rt_value *const *items,
		     size_t n, struct rt_value *ins, size_t pos,
		     struct rt_value **out)
{
	struct rt_value *s;
	struct ir_diag sub;
	int rc;

	ir_diag_init(&sub);
	*out = NULL;
	if ((rc = rt_seq_new(dtype, &s, &sub)) < 0)
		return seq_err(k, &sub, rc);
	for (size_t i = 0; i <= n; i++) {
		if (ins && i == pos &&
		    (rc = rt_seq_push(s, rt_value_ref(ins), &sub)) < 0)
			goto fail;
		if (i < n && (rc = rt_seq_push(s, rt_value_ref(items[i]), &sub)) < 0)
			goto fail;
	}
	*out = s;
	return 0;
fail:
	rt_value_unref(s);
	return seq_err(k, &sub, rc);
}

/* A position input (int32/int64 scalar) normalised against n; valid range
 * [-n, n - 1], or [-n, n] when `end_ok`. */
static int seq_pos(struct rt_kctx *k, size_t i, size_t n, int end_ok,
		   size_t *out)
{
	struct rt_value *t;
	int64_t p, hi = (int64_t)n - (end_ok ? 0 : 1);
	int rc;

	if ((rc = rt_in_tensor(k, i, &t)) < 0)
		return rc;
	if ((t->dtype != IR_DTYPE_INT32 && t->dtype != IR_DTYPE_INT64) || t->numel != 1)
		return rt_err(k, "position must be one int32 or int64, got %s[%lld]",
			      ir_dtype_name(t->dtype), (long long)t->numel);
	p = rt_load_i64(t->dtype, t->data, 0);
	if (p < -(int64_t)n || p > hi)
		return rt_err(k, "position %lld out of range for a sequence of %zu",
			      (long long)p, n);
	*out = (size_t)(p < 0 ? p + (int64_t)n : p);
	return 0;
}

static int check_item(struct rt_kctx *k, const struct rt_value *seq,
		      const struct rt_value *t)
{
	if (t->kind != RT_TENSOR)
		return rt_err(k, "cannot put a %s in a sequence of tensors", kind_name(t));
	if (seq->dtype && t->dtype != seq->dtype)
		return rt_err(k, "tensor of %s does not fit a sequence of %s",
			      ir_dtype_name(t->dtype), ir_dtype_name(seq->dtype));
	return 0;
}

static int k_sequence_construct(struct rt_kctx *k)
{
	struct rt_value *s, *t;
	size_t n = k->node->n_inputs;
	int rc;

	if (!n)
		return rt_err(k, "no inputs");
	for (size_t i = 0; i < n; i++) {
		if ((rc = rt_in_tensor(k, i, &t)) < 0)
			return rc;
		if (t->dtype != k->in[0]->dtype)
			return rt_err(k, "input %zu is %s, input 0 %s", i,
				      ir_dtype_name(t->dtype),
				      ir_dtype_name(k->in[0]->dtype));
	}
	if ((rc = seq_build(k, k->in[0]->dtype, k->in, n, NULL, 0, &s)) < 0)
		return rc;
	return rt_out_set(k, 0, s);
}

static int k_sequence_empty(struct rt_kctx *k)
{
	int64_t dtype = rt_attr_int(k, "dtype", IR_DTYPE_FLOAT);
	struct rt_value *s;
	int rc;

	if (dtype <= 0 || dtype >= IR_DTYPE_COUNT || !rt_dtype_size((int)dtype))
		return rt_err(k, "unsupported dtype %lld", (long long)dtype);
	if ((rc = seq_build(k, (int)dtype, NULL, 0, NULL, 0, &s)) < 0)
		return rc;
	return rt_out_set(k, 0, s);
}

static int k_sequence_at(struct rt_kctx *k)
{
	struct rt_value *s;
	size_t p;
	int rc;

	if ((rc = in_seq(k, 0, &s)) < 0 || (rc = seq_pos(k, 1, s->n, 0, &p)) < 0)
		return rc;
	return rt_out_set(k, 0, rt_value_ref(s->items[p]));
}

static int k_sequence_length(struct rt_kctx *k)
{
	struct rt_value *s, *t;
	int rc;

	if ((rc = in_seq(k, 0, &s)) < 0)
		return rc;
	if (!(t = rt_out_tensor(k, 0, IR_DTYPE_INT64, 0, NULL)))
		return IR_ENOMEM;
	*(int64_t *)t->data = (int64_t)s->n;
	return 0;
}

static int k_sequence_insert(struct rt_kctx *k)
{
	struct rt_value *s, *t, *r;
	size_t p;
	int rc;

	if ((rc = in_seq(k, 0, &s)) < 0 || (rc = rt_in_tensor(k, 1, &t)) < 0 ||
	    (rc = check_item(k, s, t)) < 0)
		return rc;
	p = s->n;
	if (rt_in(k, 2) && (rc = seq_pos(k, 2, s->n, 1, &p)) < 0)
		return rc;
	if ((rc = seq_build(k, s->dtype ? s->dtype : t->dtype, s->items, s->n,
			    t, p, &r)) < 0)
		return rc;
	return rt_out_set(k, 0, r);
}

static int k_sequence_erase(struct rt_kctx *k)
{
	struct rt_value *s, *r;
	size_t p;
	int rc;

	if ((rc = in_seq(k, 0, &s)) < 0)
		return rc;
	if (!s->n)
		return rt_err(k, "cannot erase from an empty sequence");
	p = s->n - 1;
	if (rt_in(k, 1) && (rc = seq_pos(k, 1, s->n, 0, &p)) < 0)
		return rc;
	if ((rc = seq_build(k, s->dtype, s->items, p, NULL, 0, &r)) < 0)
		return rc;
	for (size_t i = p + 1; i < s->n; i++) {
		struct ir_diag sub;

		ir_diag_init(&sub);
		if ((rc = rt_seq_push(r, rt_value_ref(s->items[i]), &sub)) < 0) {
			rt_value_unref(r);
			return seq_err(k, &sub, rc);
		}
	}
	return rt_out_set(k, 0, r);
}

static int k_split_to_sequence(struct rt_kctx *k)
{
	struct rt_value *t, *sp = rt_in(k, 1), *s = NULL, *part;
	int64_t keep = rt_attr_int(k, "keepdims", 1), dim, *lens = NULL;
	size_t n_lens = 0;
	int axis, rc;

	if ((rc = rt_in_tensor(k, 0, &t)) < 0)
		return rc;
	if (t->rank < 1)
		return rt_err(k, "cannot split a scalar");
	if ((rc = rt_axis(k, rt_attr_int(k, "axis", 0), t->rank, &axis)) < 0)
		return rc;
	dim = t->dims[axis];
	if (sp) {
		int64_t step;

		if ((rc = rt_in_ints(k, 1, &lens, &n_lens)) < 0)
			return rc;
		keep = 1;
		if (sp->rank == 0) {
			step = lens[0];
			if (step <= 0) {
				rc = rt_err(k, "split size %lld is not positive",
					    (long long)step);
				goto cleanup;
			}
			free(lens);
			n_lens = (size_t)(dim / step + (dim % step != 0));
			if (!(lens = malloc((n_lens + 1) * sizeof(*lens)))) {
				rc = rt_oom(k);
				goto cleanup;
			}
			for (size_t i = 0; i < n_lens; i++)
				lens[i] = dim - (int64_t)i * step < step ?
					  dim - (int64_t)i * step : step;
		} else if (sp->rank != 1) {
			rc = rt_err(k, "split must be a scalar or 1-D, has rank %d", sp->rank);
			goto cleanup;
		} else {
			int64_t sum = 0;

			for (size_t i = 0; i < n_lens; i++) {
				if (lens[i] < 0) {
					rc = rt_err(k, "negative split length %lld",
						    (long long)lens[i]);
					goto cleanup;
				}
				/* stop before the sum could overflow */
				if (lens[i] > dim - sum) {
					sum = -1;
					break;
				}
				sum += lens[i];
			}
			if (sum != dim) {
				rc = rt_err(k, "split lengths do not add up to %lld, the size of axis %d",
					    (long long)dim, axis);
				goto cleanup;
			}
		}
	} else {
		n_lens = (size_t)dim;
		if (!(lens = malloc((n_lens + 1) * sizeof(*lens))))
			return rt_oom(k);
		for (size_t i = 0; i < n_lens; i++)
			lens[i] = 1;
	}
	if ((rc = seq_build(k, t->dtype, NULL, 0, NULL, 0, &s)) < 0)
		goto cleanup;
	for (size_t i = 0, at = 0; i < n_lens; at += (size_t)lens[i], i++) {
		struct ir_diag sub;

		ir_diag_init(&sub);
		if ((rc = kc_take(k, t, axis, (int64_t)at, lens[i], keep != 0, &part)) < 0)
			goto cleanup;
		if ((rc = rt_seq_push(s, part, &sub)) < 0) {
			rc = seq_err(k, &sub, rc);
			goto cleanup;
		}
	}
	rc = rt_out_set(k, 0, s);
	s = NULL;
cleanup:
	rt_value_unref(s);
	free(lens);
	return rc;
}

static int k_concat_from_sequence(struct rt_kctx *k)
{
	struct rt_value *s, *r;
	int64_t new_axis = rt_attr_int(k, "new_axis", 0);
	int axis, rc;

	if ((rc = in_seq(k, 0, &s)) < 0)
		return rc;
	if (!rt_attr(k, "axis"))
		return rt_err(k, "attribute 'axis' is missing");
	if (!s->n)
		return rt_err(k, "cannot concatenate an empty sequence");
	if ((rc = rt_axis(k, rt_attr_int(k, "axis", 0),
			  s->items[0]->rank + (new_axis ? 1 : 0), &axis)) < 0)
		return rc;
	if (!new_axis && s->items[0]->rank == 0)
		return rt_err(k, "cannot concatenate scalars without new_axis");
	if ((rc = kc_join(k, s->items, s->n, axis, new_axis != 0, &r)) < 0)
		return rc;
	return rt_out_set(k, 0, r);
}

/* SequenceMap: the body runs once per position of the input sequences;
 * tensor inputs are passed whole every time; output j collects the body's
 * output j of every run. */
static int k_sequence_map(struct rt_kctx *k)
{
	const struct ir_graph *g = rt_attr_graph(k, "body");
	size_t n_in = k->node->n_inputs, n_out, len = 0;
	struct rt_value **ins = NULL, **outs = NULL, **seqs = NULL;
	struct ir_diag sub;
	int rc = 0;

	ir_diag_init(&sub);
	if (!g)
		return rt_err(k, "attribute 'body' is missing");
	n_out = g->n_outputs;
	if (g->n_inputs != n_in)
		return rt_err(k, "body has %zu inputs, the node %zu", g->n_inputs, n_in);
	if (k->node->n_outputs > n_out)
		return rt_err(k, "body has %zu outputs, the node %zu", n_out,
			      k->node->n_outputs);
	for (size_t i = 0; i < n_in; i++) {
		struct rt_value *v = rt_in(k, i);

		if (!v || (v->kind != RT_SEQUENCE && (i == 0 || v->kind != RT_TENSOR)))
			return rt_err(k, "input %zu must be a %s", i,
				      i ? "sequence or a tensor" : "sequence");
		if (v->kind != RT_SEQUENCE)
			continue;
		if (i == 0)
			len = v->n;
		else if (v->n != len)
			return rt_err(k, "input %zu has %zu items, input 0 %zu", i,
				      v->n, len);
	}
	if (!(ins = calloc(n_in + 1, sizeof(*ins))) ||
	    !(outs = calloc(n_out + 1, sizeof(*outs))) ||
	    !(seqs = calloc(n_out + 1, sizeof(*seqs)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (size_t j = 0; j < n_out; j++) {
		int dtype, kind, rank;
		int64_t dims[RT_MAX_RANK];

		kc_declared(g->outputs[j].type, &dtype, &kind, &rank, dims);
		if ((rc = seq_build(k, dtype, NULL, 0, NULL, 0, &seqs[j])) < 0)
			goto cleanup;
	}
	for (size_t p = 0; p < len; p++) {
		for (size_t i = 0; i < n_in; i++)
			ins[i] = k->in[i]->kind == RT_SEQUENCE ? k->in[i]->items[p] : k->in[i];
		if ((rc = rt_subgraph_run(k, g, ins, n_in, outs)) < 0)
			goto cleanup;
		for (size_t j = 0; j < n_out; j++) {
			struct rt_value *o = outs[j];

			outs[j] = NULL;
			if (o->kind != RT_TENSOR) {
				rt_value_unref(o);
				rc = rt_err(k, "body output %zu is not a tensor", j);
				goto cleanup;
			}
			if (seqs[j]->n && o->dtype != seqs[j]->dtype) {
				rc = rt_err(k, "body output %zu changes dtype from %s to %s", j,
					    ir_dtype_name(seqs[j]->dtype),
					    ir_dtype_name(o->dtype));
				rt_value_unref(o);
				goto cleanup;
			}
			if (!seqs[j]->n)
				seqs[j]->dtype = o->dtype;
			if ((rc = rt_seq_push(seqs[j], o, &sub)) < 0) {
				rc = seq_err(k, &sub, rc);
				goto cleanup;
			}
		}
	}
	for (size_t j = 0; j < n_out; j++) {
		rc = rt_out_set(k, j, seqs[j]);
		seqs[j] = NULL;
		if (rc < 0)
			goto cleanup;
	}
cleanup:
	for (size_t j = 0; seqs && j < n_out; j++)
		rt_value_unref(seqs[j]);
	for (size_t j = 0; outs && j < n_out; j++)
		rt_value_unref(outs[j]);
	free(ins);
	free(outs);
	free(seqs);
	return rc;
}

const struct rt_kernel rt_kernels_seq[] = {
	{ "ai.onnx", "ConcatFromSequence", 11, RT_OPEN, k_concat_from_sequence },
	{ "ai.onnx", "SequenceAt", 11, RT_OPEN, k_sequence_at },
	{ "ai.onnx", "SequenceConstruct", 11, RT_OPEN, k_sequence_construct },
	{ "ai.onnx", "SequenceEmpty", 11, RT_OPEN, k_sequence_empty },
	{ "ai.onnx", "SequenceErase", 11, RT_OPEN, k_sequence_erase },
	{ "ai.onnx", "SequenceInsert", 11, RT_OPEN, k_sequence_insert },
	{ "ai.onnx", "SequenceLength", 11, RT_OPEN, k_sequence_length },
	{ "ai.onnx", "SequenceMap", 17, RT_OPEN, k_sequence_map },
	{ "ai.onnx", "SplitToSequence", 11, RT_OPEN, k_split_to_sequence },
};
const size_t rt_n_kernels_seq = sizeof(rt_kernels_seq) / sizeof(rt_kernels_seq[0]);
