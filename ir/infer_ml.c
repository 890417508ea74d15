/* infer_ml.c: inference of the ai.onnx.ml operators: regressors and
 * classifiers (Linear, SVM, TreeEnsemble*), encoders (LabelEncoder,
 * CategoryMapper, OneHotEncoder), feature ops (ArrayFeatureExtractor,
 * FeatureVectorizer, DictVectorizer, CastMap), Scaler, Normalizer and
 * ZipMap (maps have no vtype: left not inferred).  Binarizer and Imputer
 * use infer_unary. */
#include <string.h>

#include "ir/infer_int.h"

/* The batch size of a [N, C] (or [C]: one row) input. */
static struct ir_vdim batch_of(const struct ir_vtype *x)
{
	if (x && x->rank >= 2)
		return x->dims[0];
	if (x && x->rank == 1)
		return infer_dim_val(1);
	return infer_dim_unknown();
}

static void set_2d(struct ir_vtype *o, int dtype, struct ir_vdim n, struct ir_vdim e)
{
	o->dtype = dtype;
	o->rank = 2;
	o->dims[0] = n;
	o->dims[1] = e;
}

static size_t attr_len(struct infer_ctx *c, const char *name)
{
	const struct ir_attr *a = infer_attr(c, name);

	if (!a)
		return 0;
	return a->n_ints + a->n_floats + a->n_strings;
}

/* Scaler, Normalizer: float, the input's shape. */
int infer_ml_float_like(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);

	c->out[0].dtype = IR_DTYPE_FLOAT;
	if (x) {
		c->out[0].rank = x->rank;
		memcpy(c->out[0].dims, x->dims, sizeof(x->dims));
	}
	return 0;
}

/* LinearRegressor [N, targets], SVMRegressor [N, 1],
 * TreeEnsembleRegressor [N, n_targets] float; TreeEnsemble the same of
 * the input's dtype. */
int infer_ml_regressor(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	const char *op = c->n->op_type;
	int64_t t = 1;
	int rc = 0;

	if (!strcmp(op, "LinearRegressor"))
		rc = infer_attr_int(c, "targets", &t);
	else if (strcmp(op, "SVMRegressor"))
		rc = infer_attr_int(c, "n_targets", &t);
	if (rc < 0)
		return rc;
	set_2d(&c->out[0], IR_DTYPE_FLOAT, batch_of(x),
	       rc == 1 ? infer_dim_unknown() : infer_dim_val(t));
	if (!strcmp(op, "TreeEnsemble"))
		c->out[0].dtype = x ? x->dtype : IR_DTYPE_UNDEFINED;
	return 0;
}

/* LinearClassifier, SVMClassifier, TreeEnsembleClassifier: labels [N] of
 * int64 or string (whichever classlabels attribute is set), scores
 * [N, number of classes] float. */
int infer_ml_classifier(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	const char *ints = strcmp(c->n->op_type, "TreeEnsembleClassifier") ?
			   "classlabels_ints" : "classlabels_int64s";
	size_t ni = attr_len(c, ints), ns = attr_len(c, "classlabels_strings");
	struct ir_vdim n = batch_of(x);

	if (ni && ns)
		return infer_err(c, "both %s and classlabels_strings are set", ints);
	c->out[0].dtype = ns ? IR_DTYPE_STRING : ni ? IR_DTYPE_INT64 :
			  IR_DTYPE_UNDEFINED;
	c->out[0].rank = 1;
	c->out[0].dims[0] = n;
	if (c->n->n_outputs > 1)
		set_2d(&c->out[1], IR_DTYPE_FLOAT, n,
		       ni + ns ? infer_dim_val((int64_t)(ni + ns)) : infer_dim_unknown());
	return 0;
}

/* LabelEncoder: the input's shape; dtype from the values_* attribute set
 * (version 1 and CategoryMapper: string <-> int64). */
int infer_ml_label_encoder(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	const struct ir_attr *vt = infer_attr(c, "values_tensor");
	int dt = IR_DTYPE_UNDEFINED;

	if (vt && vt->t)
		dt = vt->t->dtype;
	else if (infer_attr(c, "values_strings"))
		dt = IR_DTYPE_STRING;
	else if (infer_attr(c, "values_int64s"))
		dt = IR_DTYPE_INT64;
	else if (infer_attr(c, "values_floats"))
		dt = IR_DTYPE_FLOAT;
	else if (x && x->dtype == IR_DTYPE_STRING)
		dt = IR_DTYPE_INT64;
	else if (x && x->dtype == IR_DTYPE_INT64)
		dt = IR_DTYPE_STRING;
	if (x) {
		c->out[0].rank = x->rank;
		memcpy(c->out[0].dims, x->dims, sizeof(x->dims));
	}
	c->out[0].dtype = dt;
	return 0;
}

/* OneHotEncoder: float, the input's shape plus one dim of the categories. */
int infer_ml_onehot(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	size_t n = attr_len(c, "cats_int64s") + attr_len(c, "cats_strings");

	c->out[0].dtype = IR_DTYPE_FLOAT;
	if (!x || x->rank < 0 || x->rank >= IR_INFER_MAX_RANK)
		return 0;
	c->out[0].rank = x->rank + 1;
	memcpy(c->out[0].dims, x->dims, sizeof(x->dims));
	c->out[0].dims[x->rank] = n ? infer_dim_val((int64_t)n) : infer_dim_unknown();
	return 0;
}

/* ArrayFeatureExtractor: X's dtype; the last dim becomes the number of
 * indices ([1, n] for a 1-D X). */
int infer_ml_array_feature(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int64_t k = infer_vt_numel(infer_in(c, 1));
	struct ir_vdim nk = k >= 0 ? infer_dim_val(k) : infer_dim_unknown();

	if (!x)
		return 0;
	c->out[0].dtype = x->dtype;
	if (x->rank == 1) {
		set_2d(&c->out[0], x->dtype, infer_dim_val(1), nk);
	} else if (x->rank >= 2) {
		c->out[0].rank = x->rank;
		memcpy(c->out[0].dims, x->dims, sizeof(x->dims));
		c->out[0].dims[x->rank - 1] = nk;
	}
	return 0;
}

/* FeatureVectorizer: float [N, sum of inputdimensions]. */
int infer_ml_feature_vectorizer(struct infer_ctx *c)
{
	const struct ir_attr *a = infer_attr(c, "inputdimensions");
	int64_t sum = 0;

	for (size_t i = 0; a && i < a->n_ints; i++)
		if (__builtin_add_overflow(sum, a->ints[i], &sum))
			return infer_err(c, "the sum of inputdimensions overflows");
	set_2d(&c->out[0], IR_DTYPE_FLOAT, batch_of(infer_in(c, 0)),
	       a && a->n_ints ? infer_dim_val(sum) : infer_dim_unknown());
	return 0;
}

/* CastMap: the cast_to type; the spec calls the result 1-D while
 * runtimes give [1, n], so the rank stays unknown. */
int infer_ml_cast_map(struct infer_ctx *c)
{
	char to[32] = "TO_FLOAT";
	int rc;

	if ((rc = infer_attr_str(c, "cast_to", to, sizeof(to))) < 0)
		return rc;
	if (!strcmp(to, "TO_FLOAT"))
		c->out[0].dtype = IR_DTYPE_FLOAT;
	else if (!strcmp(to, "TO_STRING"))
		c->out[0].dtype = IR_DTYPE_STRING;
	else if (!strcmp(to, "TO_INT64"))
		c->out[0].dtype = IR_DTYPE_INT64;
	else
		return infer_err(c, "unsupported cast_to '%s'", to);
	return 0;
}

/* DictVectorizer: [1, vocabulary length] of the declared input map's
 * value type. */
int infer_ml_dict_vectorizer(struct infer_ctx *c)
{
	const struct ir_value *v = c->n->n_inputs ? c->n->inputs[0] : NULL;
	const struct ir_type *ty = v ? v->type : NULL;
	size_t n = attr_len(c, "int64_vocabulary") + attr_len(c, "string_vocabulary");

	if (ty && ty->kind == IR_TYPE_MAP && ty->inner &&
	    ty->inner->kind == IR_TYPE_TENSOR && IR_HAS(ty->inner, IR_TYPE_HAS_ELEM))
		c->out[0].dtype = ty->inner->elem_type;
	set_2d(&c->out[0], c->out[0].dtype, infer_dim_val(1),
	       n ? infer_dim_val((int64_t)n) : infer_dim_unknown());
	return 0;
}

/* ZipMap: seq(map(string, float)) with classlabels_strings,
 * seq(map(int64, float)) with classlabels_int64s. */
int infer_ml_zipmap(struct infer_ctx *c)
{
	int strs = attr_len(c, "classlabels_strings") > 0;
	int ints = attr_len(c, "classlabels_int64s") > 0;

	if (strs == ints)  /* the spec wants exactly one */
		return 1;
	c->out[0].is_seq = 1;
	c->out[0].map_key = strs ? IR_DTYPE_STRING : IR_DTYPE_INT64;
	c->out[0].dtype = IR_DTYPE_FLOAT;
	return 0;
}
