/* k_ml_tree.c: tree ensembles of ai.onnx.ml: TreeEnsembleRegressor and
 * TreeEnsembleClassifier (versions 1 and 3: nodes keyed by (tree id, node
 * id), LEAF nodes carrying weighted votes) and TreeEnsemble (version 5:
 * branch nodes and a separate leaf table).  Both are turned into one form:
 * an array of nodes where leaves carry a run of (target, weight) votes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_ml_int.h"

enum { M_LEQ, M_LT, M_GTE, M_GT, M_EQ, M_NEQ, M_MEMBER, M_LEAF };

struct tnode {
	int mode;
	int64_t feat;
	double split;
	int64_t t, f;            /* node indices of the branches */
	int miss_true;
	int64_t set0, nset;      /* MEMBER: run in the member values */
	int64_t vote0, nvote;    /* LEAF: run in the votes */
	int64_t tree, id;        /* versions 1/3: keys */
};

struct tvote {
	int64_t target;
	double w;
};

struct forest {
	int64_t n_nodes, n_votes, n_roots, n_targets, n_members;
	struct tnode *nodes;
	struct tvote *votes;
	int64_t *roots;
	double *members;
	double *base;            /* n_targets or NULL */
	int agg;                 /* 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX */
};

static void forest_release(struct forest *fo)
{
	free(fo->nodes);
	free(fo->votes);
	free(fo->roots);
	free(fo->members);
	free(fo->base);
	memset(fo, 0, sizeof(*fo));
}

/* A float list attribute or its _as_tensor form, as doubles (malloc'd). */
static int attr_doubles(struct rt_kctx *k, const char *name, double **out, size_t *n)
{
	char tn[64];
	const float *f = rt_attr_floats(k, name, n);
	struct rt_value *t = NULL;
	int rc;

	*out = NULL;
	snprintf(tn, sizeof(tn), "%s_as_tensor", name);
	if (!f && rt_attr(k, tn)) {
		if ((rc = rt_attr_tensor(k, tn, &t)) < 0)
			return rc;
		*n = (size_t)t->numel;
	} else if (!f && rt_attr(k, name) && rt_attr(k, name)->type == IR_ATTR_TENSOR) {
		if ((rc = rt_attr_tensor(k, name, &t)) < 0)
			return rc;
		*n = (size_t)t->numel;
	}
	if (!f && !t) {
		*n = 0;
		return 0;
	}
	if (!(*out = malloc((*n ? *n : 1) * sizeof(double)))) {
		rt_value_unref(t);
		return rt_oom(k);
	}
	for (size_t i = 0; i < *n; i++)
		(*out)[i] = t ? rt_load_f64(t->dtype, t->data, (int64_t)i) : f[i];
	rt_value_unref(t);
	return 0;
}

static int mode_of(const char *s)
{
	static const char *const names[] = {
		"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ",
		"BRANCH_NEQ", "BRANCH_MEMBER", "LEAF"
	};

	for (int i = 0; i < 8; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

/* Node lookup by (tree id, node id) through an index sorted by key, so
 * forests of many nodes build in n log n. */
struct nkey {
	int64_t tree, id, at;
};

static int cmp_nkey(const void *a, const void *b)
{
	const struct nkey *x = a, *y = b;

	if (x->tree != y->tree)
		return x->tree < y->tree ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

static int64_t find_node(const struct nkey *idx, size_t n, int64_t tree, int64_t id)
{
	struct nkey key = { tree, id, 0 };
	const struct nkey *e = bsearch(&key, idx, n, sizeof(*idx), cmp_nkey);

	return e ? e->at : -1;
}

/* Versions 1 and 3; `pre` is "target" (regressor) or "class". */
static int forest_legacy(struct rt_kctx *k, struct forest *fo, const char *pre)
{
	size_t n, n2, nv, n_vn = 0, n_ids = 0, n_ft, n_t, n_f, n_m = 0, n_w = 0;
	const int64_t *tids = rt_attr_ints(k, "nodes_treeids", &n);
	const int64_t *nids = rt_attr_ints(k, "nodes_nodeids", &n2);
	const int64_t *feats = rt_attr_ints(k, "nodes_featureids", &n_ft);
	const int64_t *tr = rt_attr_ints(k, "nodes_truenodeids", &n_t);
	const int64_t *fa = rt_attr_ints(k, "nodes_falsenodeids", &n_f);
	const int64_t *miss = rt_attr_ints(k, "nodes_missing_value_tracks_true", &n_m);
	const struct ir_attr *modes = rt_attr(k, "nodes_modes");
	const int64_t *vt, *vn, *vi;
	char name[64];
	double *vals = NULL, *w = NULL;
	size_t n_vals = 0;
	int64_t *cnt = NULL;
	struct nkey *idx = NULL;
	char *child = NULL;
	int rc;

	if ((rc = attr_doubles(k, "nodes_values", &vals, &n_vals)) < 0)
		return rc;
	snprintf(name, sizeof(name), "%s_weights", pre);
	if ((rc = attr_doubles(k, name, &w, &n_w)) < 0)
		goto cleanup;
	snprintf(name, sizeof(name), "%s_treeids", pre);
	vt = rt_attr_ints(k, name, &nv);
	snprintf(name, sizeof(name), "%s_nodeids", pre);
	vn = rt_attr_ints(k, name, &n_vn);
	snprintf(name, sizeof(name), "%s_ids", pre);
	vi = rt_attr_ints(k, name, &n_ids);
	rc = rt_err(k, "tree attributes are missing or differ in length");
	if (!n || !tids || !nids || !feats || !tr || !fa || !modes ||
	    modes->type != IR_ATTR_STRINGS || n2 != n || n_ft != n || n_t != n || n_f != n ||
	    modes->n_strings != n || n_vals != n || (n_m && n_m != n))
		goto cleanup;
	if (!vt || !vn || !vi || n_w != nv || n_ids != nv || n_vn != nv)
		goto cleanup;
	fo->n_nodes = (int64_t)n;
	fo->n_votes = (int64_t)nv;
	fo->nodes = calloc(n, sizeof(*fo->nodes));
	fo->votes = calloc(nv ? nv : 1, sizeof(*fo->votes));
	fo->roots = calloc(n, sizeof(*fo->roots));
	cnt = calloc(n + 1, sizeof(*cnt));
	child = calloc(n, 1);
	idx = malloc(n * sizeof(*idx));
	if (!fo->nodes || !fo->votes || !fo->roots || !cnt || !child || !idx) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		struct tnode *t = &fo->nodes[i];

		t->tree = tids[i];
		t->id = nids[i];
		t->feat = feats[i];
		t->split = vals[i];
		t->miss_true = n_m ? (int)miss[i] : 0;
		if ((t->mode = mode_of((const char *)modes->strings[i])) < 0) {
			rc = rt_err(k, "unknown node mode '%s'", (const char *)modes->strings[i]);
			goto cleanup;
		}
		if (t->mode == M_MEMBER) {
			rc = rt_err(k, "BRANCH_MEMBER needs TreeEnsemble (version 5)");
			goto cleanup;
		}
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = (struct nkey){ tids[i], nids[i], (int64_t)i };
	qsort(idx, n, sizeof(*idx), cmp_nkey);
	for (size_t i = 1; i < n; i++)
		if (!cmp_nkey(&idx[i - 1], &idx[i])) {
			rc = rt_err(k, "node %lld of tree %lld is defined twice",
				    (long long)idx[i].id, (long long)idx[i].tree);
			goto cleanup;
		}
	for (size_t i = 0; i < n; i++) {
		struct tnode *t = &fo->nodes[i];

		if (t->mode == M_LEAF)
			continue;
		t->t = find_node(idx, n, t->tree, tr[i]);
		t->f = find_node(idx, n, t->tree, fa[i]);
		if (t->t < 0 || t->f < 0) {
			rc = rt_err(k, "node %lld of tree %lld branches to a missing node",
				    (long long)t->id, (long long)t->tree);
			goto cleanup;
		}
		child[t->t] = child[t->f] = 1;
	}
	for (size_t v = 0; v < nv; v++) {
		int64_t j = find_node(idx, n, vt[v], vn[v]);

		if (j < 0 || fo->nodes[j].mode != M_LEAF) {
			rc = rt_err(k, "vote %zu names node %lld of tree %lld, not a leaf", v,
				    (long long)vn[v], (long long)vt[v]);
			goto cleanup;
		}
		cnt[j + 1]++;
	}
	for (size_t i = 0; i < n; i++) {
		cnt[i + 1] += cnt[i];
		fo->nodes[i].vote0 = cnt[i];
	}
	for (size_t v = 0; v < nv; v++) {
		int64_t j = find_node(idx, n, vt[v], vn[v]);
		struct tnode *t = &fo->nodes[j];

		fo->votes[t->vote0 + t->nvote].target = vi[v];
		fo->votes[t->vote0 + t->nvote].w = w[v];
		t->nvote++;
	}
	for (size_t i = 0; i < n; i++)
		if (!child[i])
			fo->roots[fo->n_roots++] = (int64_t)i;
	rc = 0;
cleanup:
	free(vals);
	free(w);
	free(cnt);
	free(child);
	free(idx);
	return rc;
}

/* Version 5. */
static int forest_v5(struct rt_kctx *k, struct forest *fo)
{
	size_t n, n2, n3, n4, n5, n_m = 0, nl, nl2, nr, n_sp, n_mem = 0, n_modes;
	const int64_t *feats = rt_attr_ints(k, "nodes_featureids", &n);
	const int64_t *tr = rt_attr_ints(k, "nodes_truenodeids", &n2);
	const int64_t *fa = rt_attr_ints(k, "nodes_falsenodeids", &n3);
	const int64_t *tl = rt_attr_ints(k, "nodes_trueleafs", &n4);
	const int64_t *fl = rt_attr_ints(k, "nodes_falseleafs", &n5);
	const int64_t *miss = rt_attr_ints(k, "nodes_missing_value_tracks_true", &n_m);
	const int64_t *lt = rt_attr_ints(k, "leaf_targetids", &nl);
	const int64_t *roots = rt_attr_ints(k, "tree_roots", &nr);
	double *splits = NULL, *lw = NULL, *modes = NULL, *mem = NULL;
	int64_t m = 0;
	int rc;

	if ((rc = attr_doubles(k, "nodes_splits", &splits, &n_sp)) < 0 ||
	    (rc = attr_doubles(k, "leaf_weights", &lw, &nl2)) < 0 ||
	    (rc = attr_doubles(k, "nodes_modes", &modes, &n_modes)) < 0 ||
	    (rc = attr_doubles(k, "membership_values", &mem, &n_mem)) < 0)
		goto cleanup;
	rc = rt_err(k, "tree attributes are missing or differ in length");
	if (!n || !feats || !tr || !fa || !tl || !fl || !lt || !roots || !nr ||
	    n2 != n || n3 != n || n4 != n || n5 != n || n_sp != n || n_modes != n ||
	    (n_m && n_m != n) || nl2 != nl || !nl)
		goto cleanup;
	fo->n_nodes = (int64_t)(n + nl);
	fo->n_votes = (int64_t)nl;
	fo->n_roots = (int64_t)nr;
	fo->nodes = calloc(n + nl, sizeof(*fo->nodes));
	fo->votes = calloc(nl, sizeof(*fo->votes));
	fo->roots = calloc(nr, sizeof(*fo->roots));
	if (n_mem && !(fo->members = malloc(n_mem * sizeof(double)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	if (!fo->nodes || !fo->votes || !fo->roots) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (size_t i = 0; i < nl; i++) {
		struct tnode *t = &fo->nodes[n + i];

		t->mode = M_LEAF;
		t->vote0 = (int64_t)i;
		t->nvote = 1;
		fo->votes[i].target = lt[i];
		fo->votes[i].w = lw[i];
	}
	for (size_t i = 0; i < n; i++) {
		struct tnode *t = &fo->nodes[i];

		t->mode = (int)modes[i];
		t->feat = feats[i];
		t->split = splits[i];
		t->miss_true = n_m ? (int)miss[i] : 0;
		t->t = tl[i] ? (int64_t)n + tr[i] : tr[i];
		t->f = fl[i] ? (int64_t)n + fa[i] : fa[i];
		if (t->mode < M_LEQ || t->mode > M_MEMBER || tr[i] < 0 || fa[i] < 0 ||
		    t->t >= fo->n_nodes || t->f >= fo->n_nodes ||
		    (tl[i] && tr[i] >= (int64_t)nl) || (fl[i] && fa[i] >= (int64_t)nl) ||
		    (!tl[i] && tr[i] >= (int64_t)n) || (!fl[i] && fa[i] >= (int64_t)n)) {
			rc = rt_err(k, "node %zu: bad mode or branch index", i);
			goto cleanup;
		}
		if (t->mode == M_MEMBER) {
			/* this node's set: the next NaN-terminated run */
			t->set0 = m;
			while ((size_t)m < n_mem && !isnan(mem[m]))
				fo->members[fo->n_members++] = mem[m++];
			t->nset = m - t->set0;
			t->set0 = fo->n_members - t->nset;
			m++;
		}
	}
	for (size_t i = 0; i < nr; i++) {
		if (roots[i] < 0 || roots[i] >= (int64_t)n) {
			rc = rt_err(k, "tree root %lld out of range", (long long)roots[i]);
			goto cleanup;
		}
		fo->roots[i] = roots[i];
		/* a root whose two branches name the same leaf is a one-leaf
		 * tree whose leaf has the root's index, as the ONNX reference
		 * reads it */
		if (tl[roots[i]] && fl[roots[i]] && tr[roots[i]] == fa[roots[i]]) {
			if (roots[i] >= (int64_t)nl) {
				rc = rt_err(k, "one-leaf tree %zu: leaf %lld out of range", i,
					    (long long)roots[i]);
				goto cleanup;
			}
			fo->roots[i] = (int64_t)n + roots[i];
		}
	}
	rc = 0;
cleanup:
	free(splits);
	free(lw);
	free(modes);
	free(mem);
	return rc;
}

/* The leaf reached by row x from root r (bounded walk). */
static const struct tnode *walk(const struct forest *fo, int64_t r, const struct rt_value *x,
				int64_t row, int64_t nf)
{
	const struct tnode *t = &fo->nodes[r];

	for (int64_t steps = 0; t->mode != M_LEAF && steps <= fo->n_nodes; steps++) {
		double v = t->feat >= 0 && t->feat < nf ?
			   rt_load_f64(x->dtype, x->data, row * nf + t->feat) : NAN;
		int go;

		if (isnan(v) && t->miss_true) {
			go = 1;
		} else {
			switch (t->mode) {
			case M_LEQ: go = v <= t->split; break;
			case M_LT: go = v < t->split; break;
			case M_GTE: go = v >= t->split; break;
			case M_GT: go = v > t->split; break;
			case M_EQ: go = v == t->split; break;
			case M_NEQ: go = v != t->split; break;
			default:
				go = 0;
				for (int64_t j = 0; j < t->nset; j++)
					if (fo->members[t->set0 + j] == v)
						go = 1;
			}
		}
		t = &fo->nodes[go ? t->t : t->f];
	}
	return t->mode == M_LEAF ? t : NULL;
}

/* Scores of one row over fo->n_targets (aggregated, base added). */
static int score_row(struct rt_kctx *k, const struct forest *fo, const struct rt_value *x,
		     int64_t row, int64_t nf, double *s, char *has)
{
	memset(has, 0, (size_t)fo->n_targets);
	for (int64_t t = 0; t < fo->n_targets; t++)
		s[t] = 0;
	for (int64_t r = 0; r < fo->n_roots; r++) {
		const struct tnode *l = walk(fo, fo->roots[r], x, row, nf);

		if (!l)
			return rt_err(k, "tree %lld has a cycle", (long long)r);
		for (int64_t v = 0; v < l->nvote; v++) {
			const struct tvote *vo = &fo->votes[l->vote0 + v];

			if (vo->target < 0 || vo->target >= fo->n_targets)
				return rt_err(k, "leaf target %lld outside [0, %lld)",
					      (long long)vo->target, (long long)fo->n_targets);
			if (fo->agg == 2)
				s[vo->target] = has[vo->target] ? fmin(s[vo->target], vo->w) : vo->w;
			else if (fo->agg == 3)
				s[vo->target] = has[vo->target] ? fmax(s[vo->target], vo->w) : vo->w;
			else
				s[vo->target] += vo->w;
			has[vo->target] = 1;
		}
	}
	for (int64_t t = 0; t < fo->n_targets; t++) {
		if (fo->agg == 0 && fo->n_roots)
			s[t] /= (double)fo->n_roots;
		if (fo->base)
			s[t] += fo->base[t];
	}
	return 0;
}

static int agg_attr(struct rt_kctx *k, int *agg)
{
	static const char *const names[] = { "AVERAGE", "SUM", "MIN", "MAX" };
	const struct ir_attr *a = rt_attr(k, "aggregate_function");

	*agg = 1;
	if (!a)
		return 0;
	if (a->type == IR_ATTR_INT) {
		if (a->i < 0 || a->i > 3)
			return rt_err(k, "unknown aggregate_function %lld", (long long)a->i);
		*agg = (int)a->i;
		return 0;
	}
	for (int i = 0; i < 4; i++)
		if (a->s && !strcmp((const char *)a->s, names[i])) {
			*agg = i;
			return 0;
		}
	return rt_err(k, "unknown aggregate_function '%s'", a->s ? (const char *)a->s : "");
}

static int run_regression(struct rt_kctx *k, struct forest *fo, int out_dtype)
{
	enum ml_post post;
	struct rt_value *x, *y;
	int64_t n, nf, dims[2];
	double *s = NULL;
	char *has = NULL;
	int rc;

	if ((rc = ml_post_attr(k, &post)) < 0 || (rc = ml_in_rows(k, &x, &n, &nf)) < 0)
		return rc;
	dims[0] = n;
	dims[1] = fo->n_targets;
	if (!(y = rt_out_tensor(k, 0, out_dtype, 2, dims)))
		return IR_ENOMEM;
	s = malloc((size_t)fo->n_targets * sizeof(*s));
	has = malloc((size_t)fo->n_targets);
	if (!s || !has) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t r = 0; r < n; r++) {
		if ((rc = score_row(k, fo, x, r, nf, s, has)) < 0)
			goto cleanup;
		ml_post_apply(post, s, fo->n_targets);
		for (int64_t t = 0; t < fo->n_targets; t++)
			rt_store_f64(out_dtype, y->data, r * fo->n_targets + t, s[t]);
	}
	rc = 0;
cleanup:
	free(s);
	free(has);
	return rc;
}

static int base_values(struct rt_kctx *k, struct forest *fo)
{
	size_t nb = 0;
	int rc = attr_doubles(k, "base_values", &fo->base, &nb);

	if (rc < 0)
		return rc;
	if (fo->base && (int64_t)nb != fo->n_targets) {
		if (nb == 1 && fo->n_targets > 1) {
			double b = fo->base[0];
			double *p = realloc(fo->base, (size_t)fo->n_targets * sizeof(double));

			if (!p)
				return rt_oom(k);
			fo->base = p;
			for (int64_t t = 0; t < fo->n_targets; t++)
				p[t] = b;
			return 0;
		}
		return rt_err(k, "%zu base_values for %lld targets", nb, (long long)fo->n_targets);
	}
	return 0;
}

int ml_k_tree_regressor(struct rt_kctx *k)
{
	struct forest fo = { 0 };
	int rc;

	if ((rc = forest_legacy(k, &fo, "target")) < 0 || (rc = agg_attr(k, &fo.agg)) < 0)
		goto cleanup;
	fo.n_targets = rt_attr_int(k, "n_targets", 1);
	if (fo.n_targets < 1) {
		rc = rt_err(k, "n_targets must be positive");
		goto cleanup;
	}
	if ((rc = base_values(k, &fo)) < 0)
		goto cleanup;
	rc = run_regression(k, &fo, IR_DTYPE_FLOAT);
cleanup:
	forest_release(&fo);
	return rc;
}

int ml_k_tree_ensemble(struct rt_kctx *k)
{
	struct forest fo = { 0 };
	struct rt_value *x;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (!rt_dtype_is_float(x->dtype))
		return rt_err(k, "input must be float, double or float16, is %s",
			      ir_dtype_name(x->dtype));
	if ((rc = forest_v5(k, &fo)) < 0 || (rc = agg_attr(k, &fo.agg)) < 0)
		goto cleanup;
	fo.n_targets = rt_attr_int(k, "n_targets", -1);
	if (fo.n_targets < 1) {
		fo.n_targets = 0;
		for (int64_t v = 0; v < fo.n_votes; v++)
			if (fo.votes[v].target + 1 > fo.n_targets)
				fo.n_targets = fo.votes[v].target + 1;
	}
	rc = run_regression(k, &fo, x->dtype);
cleanup:
	forest_release(&fo);
	return rc;
}

/* Classifier: scores per class index (base values added).  When every
 * vote names one class index (the binary case of onnxruntime and the
 * ONNX reference), column 0's score s is moved to column 1 and column 0
 * becomes 1 - s (post transform NONE or PROBIT) or -s; the label is the
 * argmax of the transformed scores. */
int ml_k_tree_classifier(struct rt_kctx *k)
{
	struct forest fo = { 0 };
	struct ml_labels l;
	enum ml_post post;
	struct rt_value *x, *y, *z;
	int64_t n, nf, dims[2], one_class = -1;
	double *s = NULL;
	char *has = NULL;
	int binary, rc;

	if ((rc = ml_labels_get(k, &l)) < 0 || (rc = ml_post_attr(k, &post)) < 0 ||
	    (rc = ml_in_rows(k, &x, &n, &nf)) < 0)
		return rc;
	if ((rc = forest_legacy(k, &fo, "class")) < 0)
		goto cleanup;
	fo.n_targets = (int64_t)l.n;
	if ((rc = base_values(k, &fo)) < 0)
		goto cleanup;
	for (int64_t v = 0; v < fo.n_votes; v++) {
		if (one_class == -1)
			one_class = fo.votes[v].target;
		else if (one_class != fo.votes[v].target)
			one_class = -2;
	}
	binary = one_class >= 0;
	dims[0] = n;
	dims[1] = (int64_t)l.n;
	if (!(y = ml_labels_out(k, &l, n)) || !(z = rt_out_tensor(k, 1, IR_DTYPE_FLOAT, 2, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	s = malloc((l.n + 2) * sizeof(*s));
	has = malloc(l.n + 2);
	if (!s || !has) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t r = 0; r < n; r++) {
		size_t best = 0;

		if ((rc = score_row(k, &fo, x, r, nf, s, has)) < 0)
			goto cleanup;
		if (binary && l.n >= 2) {
			s[1] = s[0];
			s[0] = post == ML_POST_NONE || post == ML_POST_PROBIT ? 1 - s[1] : -s[1];
		}
		ml_post_apply(post, s, (int64_t)l.n);
		for (size_t c = 1; c < l.n; c++)
			if (s[c] > s[best])
				best = c;
		if ((rc = ml_label_set(k, &l, y, r, best)) < 0)
			goto cleanup;
		for (size_t c = 0; c < l.n; c++)
			((float *)z->data)[r * (int64_t)l.n + (int64_t)c] = (float)s[c];
	}
	rc = 0;
cleanup:
	free(s);
	free(has);
	forest_release(&fo);
	return rc;
}
