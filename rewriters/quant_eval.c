/* quant_eval.c: the samples calibration and evaluation run on, and the
 * evaluation.  A sample folder is either the backend-test layout
 * (DIR/test_data_set_N/input_M.pb, sets in numeric order) or a flat
 * folder of .npy/.pb files taken in natural name order and bound
 * positionally, one file per graph input and sample; without a folder
 * the samples are seeded random values (the seed plus the sample's
 * number).  The evaluation runs a quantized model on every evaluation
 * sample, one at a time, and compares its outputs with the float model's:
 * cosine, SNR and largest error over all samples, and top-1 agreement
 * (argmax over the last axis, per row); a decoder's logits must also keep
 * every position's cosine and top-1 token, its key/value cache outputs
 * every row's cosine (validators/logits.c). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rewriters/quant_int.h"
#include "runtime/runtime.h"
#include "validators/validate.h"

/* Natural order: digit runs compare as numbers. */
static int natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			unsigned long long x = strtoull(a, (char **)&a, 10);
			unsigned long long y = strtoull(b, (char **)&b, 10);

			if (x != y)
				return x < y ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static int str_natural(const void *a, const void *b)
{
	return natural_cmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

static int push(char ***v, size_t *n, size_t *cap, const char *dir, const char *name)
{
	char *s;

	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		char **q = realloc(*v, c * sizeof(*q));

		if (!q)
			return -1;
		*v = q;
		*cap = c;
	}
	if (!(s = malloc(strlen(dir) + strlen(name) + 2)))
		return -1;
	sprintf(s, "%s/%s", dir, name);
	(*v)[(*n)++] = s;
	return 0;
}

void qz_samples_release(struct qz_samples *s)
{
	for (size_t i = 0; s->dirs && i < s->n; i++)
		free(s->dirs[i]);
	for (size_t i = 0; s->files && i < s->n * s->per; i++)
		free(s->files[i]);
	free(s->dirs);
	free(s->files);
	memset(s, 0, sizeof(*s));
}

int qz_samples_open(struct qz_ctx *q, struct qz_samples *s, const char *dir, size_t n_inputs,
		    uint64_t seed, struct ir_diag *d)
{
	DIR *dh;
	struct dirent *e;
	char **sets = NULL, **files = NULL;
	size_t n_sets = 0, cap_sets = 0, n_files = 0, cap_files = 0;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	s->seed = seed;
	if (!dir) {
		s->kind = QZ_S_RANDOM;
		s->n = q->o->samples > 0 ? (size_t)q->o->samples : QZ_DEFAULT_SAMPLES;
		return 0;
	}
	if (!(dh = opendir(dir)))
		return ir_diag_error(d, IR_EINVAL, "%s: cannot read the sample folder", dir);
	while ((e = readdir(dh))) {
		char path[4400];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode) && !strncmp(e->d_name, "test_data_set_", 14)) {
			if (push(&sets, &n_sets, &cap_sets, dir, e->d_name) < 0)
				goto oom;
		} else if (S_ISREG(st.st_mode) && strncmp(e->d_name, "output_", 7) &&
			   (ends_with(e->d_name, ".npy") || ends_with(e->d_name, ".pb"))) {
			if (push(&files, &n_files, &cap_files, dir, e->d_name) < 0)
				goto oom;
		}
	}
	closedir(dh);
	if (n_sets) {
		qsort(sets, n_sets, sizeof(*sets), str_natural);
		s->kind = QZ_S_DIRS;
		s->dirs = sets;
		s->n = n_sets;
		sets = NULL;
	} else if (n_files) {
		if (!n_inputs || n_files % n_inputs) {
			rc = ir_diag_error(d, IR_EINVAL, "%s: %zu tensor files do not make samples of "
					   "%zu input%s each", dir, n_files, n_inputs,
					   n_inputs == 1 ? "" : "s");
			goto cleanup;
		}
		qsort(files, n_files, sizeof(*files), str_natural);
		s->kind = QZ_S_FILES;
		s->files = files;
		s->per = n_inputs;
		s->n = n_files / n_inputs;
		files = NULL;
		n_files = 0;
	} else {
		rc = ir_diag_error(d, IR_EINVAL, "%s: no samples (test_data_set_N folders or "
				   ".npy/.pb files)", dir);
	}
cleanup:
	for (size_t i = 0; sets && i < n_sets; i++)
		free(sets[i]);
	for (size_t i = 0; files && i < n_files; i++)
		free(files[i]);
	free(sets);
	free(files);
	return rc;
oom:
	closedir(dh);
	rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
	goto cleanup;
}

int qz_samples_bind(struct qz_ctx *q, const struct qz_samples *s, size_t k,
		    struct rt_session *sess, struct rt_value **vals, struct ir_diag *d)
{
	struct rt_input_opts gen = { .seed = s->seed + k, .n_dims = q->o->n_dims,
				     .dims = q->o->dims };
	char bad[4096];
	int rc;

	if (s->kind == QZ_S_DIRS &&
	    (rc = rt_inputs_from_dir(sess, s->dirs[k], vals, bad, sizeof(bad), d)) < 0)
		return qz_wrap(d, rc, "%s", bad[0] ? bad : s->dirs[k]);
	if (s->kind == QZ_S_FILES &&
	    (rc = rt_inputs_from_files(sess, s->files + k * s->per, s->per, vals, bad,
				       sizeof(bad), d)) < 0)
		return qz_wrap(d, rc, "%s", bad);
	return rt_inputs_random(sess, q->ref, &gen, vals, d);
}

/* Float weights above this size are not copied into packed forms by
 * the evaluation's sessions (rt_opts.no_weight_cache): the copies, kept
 * from a session's second run on, take as much memory as the weights
 * (27 GB for a 7B decoder, where the weights themselves are mapped file
 * pages) for a tenth of a product's time. */
#define QZ_EVAL_CACHE_MAX ((int64_t)1 << 30)

static int big_weights(const struct ir_model *m)
{
	int64_t bytes = 0;

	for (size_t i = 0; i < m->graph->n_inits; i++) {
		const struct ir_tensor *t = m->graph->inits[i];
		int64_t n = ir_tensor_numel(t);

		if (n > 0)
			bytes += ir_dtype_raw_size(t->dtype, n);
	}
	return bytes > QZ_EVAL_CACHE_MAX;
}

int qz_eval_reference(struct qz_ctx *q, struct ir_diag *d)
{
	struct rt_opts ro = { .threads = q->o->threads, .no_weight_cache = big_weights(q->ref) };
	struct rt_session *s = NULL;
	struct rt_value **in = NULL;
	size_t n_in = 0;
	int rc;

	if ((rc = rt_session_new(q->ref, &ro, &s, d)) < 0)
		return rc;
	n_in = rt_session_n_inputs(s);
	if (!(in = calloc(n_in + 1, sizeof(*in)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t k = 0; k < q->eval->n; k++) {
		if ((rc = qz_samples_bind(q, q->eval, k, s, in, d)) < 0 ||
		    (rc = rt_session_run(s, in, n_in, q->ref_out + k * q->n_out, d)) < 0)
			goto cleanup;
		rt_inputs_release(in, n_in);
	}
cleanup:
	if (in)
		rt_inputs_release(in, n_in);
	free(in);
	rt_session_free(s);
	return rc;
}

/* Rows of t (over its last axis) whose argmax agrees with want's. */
static void top1_add(const struct rt_value *got, const struct rt_value *want, double *agree,
		     double *rows)
{
	int64_t c, n;

	if (got->kind != RT_TENSOR || want->kind != RT_TENSOR || got->numel != want->numel ||
	    want->rank < 1 || (c = want->dims[want->rank - 1]) < 2)
		return;
	n = want->numel / c;
	for (int64_t r = 0; r < n; r++) {
		int64_t ia = 0, ib = 0;

		for (int64_t i = 1; i < c; i++) {
			if (rt_value_get_f64(got, r * c + i) > rt_value_get_f64(got, r * c + ia))
				ia = i;
			if (rt_value_get_f64(want, r * c + i) > rt_value_get_f64(want, r * c + ib))
				ib = i;
		}
		*agree += ia == ib;
		*rows += 1;
	}
}

static double metric_of(const struct qz_output *o, enum qz_metric m)
{
	switch (m) {
	case QZ_SNR: return o->m.snr_db;
	case QZ_TOP1: return o->top1;
	case QZ_MAX_ABS: return o->m.max_abs;
	default: return o->m.cosine;
	}
}

int qz_evaluate(struct qz_ctx *q, struct ir_model *m, struct qz_output *out, double *worst,
		int *met, struct ir_diag *d)
{
	struct rt_opts ro = { .threads = q->o->threads, .no_weight_cache = big_weights(q->ref) };
	struct rt_cmp_opts tol = { 5e-2, 5e-2 };
	struct rt_session *s = NULL;
	struct rt_value **in = NULL, **res = NULL;
	struct rt_cmp_acc *acc = NULL;
	double *agree = NULL, *rows = NULL;
	double lgc = q->o->metric == QZ_COSINE ? q->o->threshold : val_logits_min_cosine(VAL_INT8);
	size_t n_in = 0, n_out = q->n_out;
	char *lg = NULL;
	int rc, any = 0;

	*met = 1;
	*worst = q->o->metric == QZ_MAX_ABS ? 0 : INFINITY;
	if ((rc = rt_session_new(m, &ro, &s, d)) < 0)
		return rc;
	n_in = rt_session_n_inputs(s);
	if (rt_session_n_outputs(s) != n_out) {
		rc = ir_diag_error(d, IR_EINTERNAL, "quantize: the quantized model has %zu outputs, "
				   "the float model %zu", rt_session_n_outputs(s), n_out);
		goto cleanup;
	}
	if (!(in = calloc(n_in + 1, sizeof(*in))) || !(res = calloc(n_out + 1, sizeof(*res))) ||
	    !(acc = calloc(n_out + 1, sizeof(*acc))) || !(agree = calloc(n_out + 1, sizeof(double))) ||
	    !(rows = calloc(n_out + 1, sizeof(double))) || !(lg = calloc(n_out + 1, 1))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < n_out; i++) {
		rt_cmp_begin(&acc[i]);
		/* a decoder's logits (1) or key/value cache (2): by position */
		if (!q->o->logits_whole &&
		    (lg[i] = (char)val_is_logits(q->ref, rt_session_output(s, i))))
			rt_logits_begin(&acc[i].m, lg[i] == 2);
	}
	for (size_t k = 0; k < q->eval->n; k++) {
		if ((rc = qz_samples_bind(q, q->eval, k, s, in, d)) < 0 ||
		    (rc = rt_session_run(s, in, n_in, res, d)) < 0)
			goto cleanup;
		rt_inputs_release(in, n_in);
		for (size_t i = 0; i < n_out; i++) {
			struct rt_value *want = q->ref_out[k * n_out + i];

			rt_cmp_add(&acc[i], res[i], want, &tol);
			if (lg[i])
				rt_logits_add(&acc[i].m, res[i], want);
			if (res[i]->kind == RT_TENSOR && res[i]->dtype == IR_DTYPE_FLOAT)
				top1_add(res[i], want, &agree[i], &rows[i]);
		}
		rt_inputs_release(res, n_out);
	}
	for (size_t i = 0; i < n_out; i++) {
		struct qz_output *o = &out[i];
		const struct ir_vinfo *vi = rt_session_output(s, i);
		double x;

		rt_cmp_end(&acc[i], &o->m);
		if (lg[i])
			rt_logits_judge(&o->m, lgc);
		o->top1 = rows[i] > 0 ? agree[i] / rows[i] : NAN;
		o->name = (char *)ir_s(vi->value->name);
		if (!vi->type || vi->type->elem_type != IR_DTYPE_FLOAT) {
			o->ok = 1;       /* judged only on float outputs */
			continue;
		}
		x = metric_of(o, q->o->metric);
		if (q->o->metric == QZ_TOP1 && isnan(x)) {
			o->ok = 1;
			continue;
		}
		any = 1;
		o->ok = q->o->metric == QZ_MAX_ABS ? x <= q->o->threshold : x >= q->o->threshold;
		if (isnan(x) || (lg[i] && !o->m.ok))
			o->ok = 0;
		*met &= o->ok;
		if (q->o->metric == QZ_MAX_ABS ? !(x <= *worst) : !(x >= *worst))
			*worst = x;
	}
	if (!any && q->o->metric == QZ_TOP1)
		rc = ir_diag_error(d, IR_EUSAGE, "top1 needs a float output with a class axis "
				   "(last axis of 2 or more)");
cleanup:
	if (in)
		rt_inputs_release(in, n_in);
	if (res)
		rt_inputs_release(res, n_out);
	free(in);
	free(res);
	free(acc);
	free(agree);
	free(rows);
	free(lg);
	rt_session_free(s);
	return rc;
}
