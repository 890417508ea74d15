/* infer_special.c: inference for the signal ops (DFT, STFT,
 * MelWeightMatrix), the text ops (StringNormalizer, TfIdfVectorizer), the
 * ai.onnx.preview.training ops (Adagrad, Adam, Momentum, Gradient) and the
 * optional ops (Optional, OptionalHasElement, OptionalGetElement). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ir/infer_int.h"

static void copy_shape(struct ir_vtype *o, const struct ir_vtype *x)
{
	o->dtype = x->dtype;
	o->rank = x->rank;
	memcpy(o->dims, x->dims, sizeof(x->dims));
}

/* A scalar (or one-element) integer input's value; 0 when unknown. */
static int const_scalar(struct infer_ctx *c, size_t i, int64_t *v)
{
	double f;
	size_t n;

	if (infer_vt_const_int(infer_in(c, i), 0, v))
		return 1;
	if (infer_value_floats(c, i, &f, 1, &n) == 1 && f > -9.2e18 && f < 9.2e18) {
		*v = (int64_t)f;
		return 1;
	}
	return 0;
}

/* DFT: the input's shape with the last dim 2 (complex) and the transformed
 * axis dft_length long (onesided: length / 2 + 1). */
int infer_dft(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t axis = 1, onesided = 0, len, ax;
	struct ir_vtype *o = &c->out[0];
	int rc;

	if (!x)
		return 0;
	o->dtype = x->dtype;
	if ((rc = infer_attr_int(c, "onesided", &onesided)) < 0)
		return rc;
	if (c->opset >= 20) {
		axis = -2;
		if (infer_has_in(c, 2) && !const_scalar(c, 2, &axis))
			return 0;
	} else if ((rc = infer_attr_int(c, "axis", &axis)) < 0) {
		return rc;
	}
	if (x->rank < 2)
		return 0;
	if ((rc = infer_norm_axis(c, axis, x->rank, &ax)) < 0)
		return rc;
	if (ax == x->rank - 1)
		return infer_err(c, "axis %lld is the complex dimension",
				 (long long)axis);
	copy_shape(o, x);
	o->dims[x->rank - 1] = infer_dim_val(2);
	if (infer_has_in(c, 1)) {
		if (!const_scalar(c, 1, &len)) {
			o->dims[ax] = infer_dim_unknown();
			return 0;
		}
		o->dims[ax] = infer_dim_val(len);
	}
	if (onesided && o->dims[ax].kind == IR_VDIM_VALUE)
		o->dims[ax] = infer_dim_val(o->dims[ax].value / 2 + 1);
	else if (onesided)
		o->dims[ax] = infer_dim_unknown();
	return 0;
}

/* STFT: [batch, frames, bins, 2], frames = (length - frame_length) /
 * frame_step + 1, bins = frame_length (onesided: frame_length / 2 + 1). */
int infer_stft(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *w = infer_in(c, 2);
	int64_t onesided = 1, step, flen = -1;
	struct ir_vtype *o = &c->out[0];
	int rc;

	if ((rc = infer_attr_int(c, "onesided", &onesided)) < 0)
		return rc;
	if (!x)
		return 0;
	o->dtype = x->dtype;
	o->rank = 4;
	for (int i = 0; i < 4; i++)
		o->dims[i] = infer_dim_unknown();
	o->dims[3] = infer_dim_val(2);
	if (x->rank != 3)
		return x->rank < 0 ? 0 : infer_err(c, "signal has rank %d, not 3", x->rank);
	o->dims[0] = x->dims[0];
	if (infer_has_in(c, 3))
		const_scalar(c, 3, &flen);
	else if (w && w->rank == 1 && w->dims[0].kind == IR_VDIM_VALUE)
		flen = w->dims[0].value;
	if (flen <= 0)
		return 0;
	o->dims[2] = infer_dim_val(onesided ? flen / 2 + 1 : flen);
	if (const_scalar(c, 1, &step) && step > 0 &&
	    x->dims[1].kind == IR_VDIM_VALUE && x->dims[1].value >= flen)
		o->dims[1] = infer_dim_val((x->dims[1].value - flen) / step + 1);
	return 0;
}

/* MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins], output_datatype. */
int infer_mel_weight(struct infer_ctx *c)
{
	int64_t dt = IR_DTYPE_FLOAT, bins, len;
	struct ir_vtype *o = &c->out[0];
	int rc;

	if ((rc = infer_attr_int(c, "output_datatype", &dt)) < 0)
		return rc;
	o->dtype = (int)dt;
	o->rank = 2;
	o->dims[0] = const_scalar(c, 1, &len) ? infer_dim_val(len / 2 + 1) :
		     infer_dim_unknown();
	o->dims[1] = const_scalar(c, 0, &bins) ? infer_dim_val(bins) :
		     infer_dim_unknown();
	return 0;
}

static int is_stopword(const struct ir_attr *sw, const char *s, size_t len,
		       int sensitive)
{
	for (size_t i = 0; sw && i < sw->n_strings; i++) {
		if (sw->string_lens[i] != len)
			continue;
		if (sensitive ? !memcmp(sw->strings[i], s, len) :
		    !strncasecmp((const char *)sw->strings[i], s, len))
			return 1;
	}
	return 0;
}

/* StringNormalizer: [C] or [1, C] strings; the count left after removing
 * stopwords is known when the input's strings are (at least 1: an empty
 * result is one empty string). */
int infer_str_normalizer(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	const struct ir_attr *sw = infer_attr(c, "stopwords");
	struct ir_tensor *t = infer_value_tensor(c, 0);
	struct ir_vtype *o = &c->out[0];
	int64_t sensitive = 0, left = 0;
	int rc;

	if ((rc = infer_attr_int(c, "is_case_sensitive", &sensitive)) < 0)
		return rc;
	o->dtype = IR_DTYPE_STRING;
	if (!x || x->rank < 0)
		return 0;
	if (x->rank != 1 && x->rank != 2)
		return infer_err(c, "input has rank %d, not 1 or 2", x->rank);
	copy_shape(o, x);
	o->dtype = IR_DTYPE_STRING;
	if (!sw || !sw->n_strings)
		return 0;
	o->dims[x->rank - 1] = infer_dim_unknown();
	if (!t || t->dtype != IR_DTYPE_STRING || t->field != IR_FIELD_STRING)
		return 0;
	for (size_t i = 0; i < t->n_typed; i++)
		left += !is_stopword(sw, t->strings[i], t->string_lens[i],
				     (int)sensitive);
	o->dims[x->rank - 1] = infer_dim_val(left ? left : 1);
	return 0;
}

/* TfIdfVectorizer: [C] -> [max(ngram_indexes) + 1], [N, C] -> [N, that]. */
int infer_tfidf(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	const struct ir_attr *a = infer_attr(c, "ngram_indexes");
	struct ir_vtype *o = &c->out[0];
	int64_t width = -1;

	o->dtype = IR_DTYPE_FLOAT;
	for (size_t i = 0; a && i < a->n_ints; i++)
		if (a->ints[i] >= width) {
			if (a->ints[i] == INT64_MAX)
				return infer_err(c, "ngram_indexes value %lld is too large",
						 (long long)a->ints[i]);
			width = a->ints[i] + 1;
		}
	if (!x || x->rank < 0)
		return 0;
	if (x->rank != 1 && x->rank != 2)
		return infer_err(c, "input has rank %d, not 1 or 2", x->rank);
	o->rank = x->rank;
	o->dims[0] = x->dims[0];
	o->dims[x->rank - 1] = width >= 0 ? infer_dim_val(width) :
			       infer_dim_unknown();
	return 0;
}

/* Adagrad, Momentum, Adam: inputs R, T, then n tensors in each of g groups
 * (X, G, and the optimizer's states); outputs X_new and the new states:
 * output group 0 is typed like input group 0, output group k like input
 * group k + 1. */
int infer_optimizer(struct infer_ctx *c)
{
	size_t n_out = c->n->n_outputs, n;

	if (c->n_in < 2 || c->n_in - 2 <= n_out)
		return infer_err(c, "%zu inputs do not fit %zu outputs", c->n_in, n_out);
	n = c->n_in - 2 - n_out;
	if (!n || n_out % n || (c->n_in - 2) % n)
		return infer_err(c, "%zu inputs do not fit %zu outputs", c->n_in, n_out);
	for (size_t j = 0; j < n_out; j++) {
		size_t grp = j / n, src = 2 + (grp ? grp + 1 : 0) * n + j % n;
		const struct ir_vtype *x = infer_in(c, src);

		if (x)
			copy_shape(&c->out[j], x);
	}
	return 0;
}

/* Gradient: output i is typed like the value named xs[i]. */
int infer_gradient(struct infer_ctx *c)
{
	const struct ir_attr *xs = infer_attr(c, "xs");

	if (!xs)
		return infer_err(c, "missing required attribute 'xs'");
	for (size_t i = 0; i < c->n->n_outputs && i < xs->n_strings; i++) {
		const struct ir_value *v = ir_graph_lookup(c->n->graph,
							   (const char *)xs->strings[i]);
		const struct ir_vtype *t = v ? ir_infer_get(c->r, v) : NULL;

		if (t)
			copy_shape(&c->out[i], t);
	}
	return 0;
}

int infer_optional_has(struct infer_ctx *c)
{
	c->out[0].dtype = IR_DTYPE_BOOL;
	c->out[0].rank = 0;
	return 0;
}

/* An optional reads as its element's type. */
int infer_optional(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	const struct ir_attr *a = infer_attr(c, "type");

	if (x)
		return infer_vt_copy(&c->out[0], x);
	if (a && a->tp)
		infer_vt_declared(a->tp, &c->out[0]);
	return 0;
}

int infer_optional_get(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	const struct ir_value *v = infer_has_in(c, 0) ? c->n->inputs[0] : NULL;

	if (x && (x->dtype || x->rank >= 0))
		return infer_vt_copy(&c->out[0], x);
	if (v && v->type && v->type->kind == IR_TYPE_OPTIONAL && v->type->inner)
		infer_vt_declared(v->type->inner, &c->out[0]);
	else if (v && v->type)
		infer_vt_declared(v->type, &c->out[0]);
	return 0;
}
