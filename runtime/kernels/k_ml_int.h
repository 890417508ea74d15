/* k_ml_int.h: what the ai.onnx.ml kernel files share (k_ml.c,
 * k_ml_enc.c, k_ml_tree.c, k_ml_svm.c): score post-transforms, class labels and the
 * kernels the other files define for k_ml.c's table. */
#ifndef OPMIG_K_ML_INT_H
#define OPMIG_K_ML_INT_H

#include "runtime/rt_int.h"

enum ml_post {
	ML_POST_NONE, ML_POST_SOFTMAX, ML_POST_LOGISTIC, ML_POST_SOFTMAX_ZERO,
	ML_POST_PROBIT
};

/* The post_transform attribute (a string before TreeEnsemble-5, an int
 * from it); error on an unknown name. */
int ml_post_attr(struct rt_kctx *k, enum ml_post *out);
/* Apply the transform to n scores in place. */
void ml_post_apply(enum ml_post p, double *s, int64_t n);
double ml_probit(double p);
double ml_logistic(double x);

/* Class labels: classlabels_strings or classlabels_ints (or _int64s). */
struct ml_labels {
	int strings;
	size_t n;
	const int64_t *ints;
	const struct ir_attr *strs;
};

int ml_labels_get(struct rt_kctx *k, struct ml_labels *l);
/* Output 0 of a classifier: [n] labels of the right type; fill with
 * ml_label_set(). */
struct rt_value *ml_labels_out(struct rt_kctx *k, const struct ml_labels *l, int64_t n);
int ml_label_set(struct rt_kctx *k, const struct ml_labels *l, struct rt_value *y,
		 int64_t i, size_t label);

/* Input X as rows: [N, F] or [F] (one row); *n, *f. */
int ml_in_rows(struct rt_kctx *k, struct rt_value **x, int64_t *n, int64_t *f);

int ml_k_category_mapper(struct rt_kctx *k);
int ml_k_label_encoder(struct rt_kctx *k);
int ml_k_one_hot_encoder(struct rt_kctx *k);
int ml_k_cast_map(struct rt_kctx *k);
int ml_k_dict_vectorizer(struct rt_kctx *k);
int ml_k_zip_map(struct rt_kctx *k);
int ml_k_tree_classifier(struct rt_kctx *k);
int ml_k_tree_regressor(struct rt_kctx *k);
int ml_k_tree_ensemble(struct rt_kctx *k);
int ml_k_svm_classifier(struct rt_kctx *k);
int ml_k_svm_regressor(struct rt_kctx *k);

#endif
