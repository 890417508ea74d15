/* casefile.c: the files of a probe case, in the ONNX backend test layout
 * runtime adapters read: CASE/model.onnx; CASE/test_data_set_0/ with
 * input_K.pb and input_K.npy (the K-th graph input), inputs.txt and
 * outputs.txt (the graph's input and output names, one a line) and the
 * reference output_K.pb; CASE/case.json (what the case varies and the
 * facts derivation needs).  And reading what a runtime wrote into its
 * output folder (output_K.npy or output_K.pb), compared with the
 * reference. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir.h"
#include "probe/probe_int.h"
#include "runtime/tensor_io.h"
#include "validators/validate.h"

static int mkdir_ok(const char *path, struct ir_diag *d)
{
	if (mkdir(path, 0777) < 0 && errno != EEXIST)
		return ir_diag_error(d, IR_EIO, "cannot create '%s': %s", path, ir_strerror(errno));
	return 0;
}

static int names_write(const char *path, char *const *names, size_t n, struct ir_diag *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	if (!f)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\n", names[i]);
	if (fclose(f) != 0) {
		free(buf);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	rc = ir_file_write_atomic(path, buf, len, d);
	free(buf);
	return rc;
}

int probe_inputs_write(const char *dir, char *const *in_names, struct rt_value **in,
		       size_t n_in, char *const *out_names, size_t n_out,
		       struct ir_diag *d)
{
	char path[4200];
	int rc;

	if ((rc = mkdir_ok(dir, d)) < 0)
		return rc;
	for (size_t i = 0; i < n_in; i++) {
		snprintf(path, sizeof(path), "%s/input_%zu.pb", dir, i);
		if ((rc = rt_value_write_pb(in[i], in_names[i], path, d)) < 0)
			return rc;
		/* NumPy has no bfloat16 or float8: those inputs are .pb only */
		if (in[i]->dtype == IR_DTYPE_BFLOAT16 || in[i]->dtype >= IR_DTYPE_FLOAT8E4M3FN)
			continue;
		snprintf(path, sizeof(path), "%s/input_%zu.npy", dir, i);
		if ((rc = rt_npy_write(in[i], path, d)) < 0)
			return rc;
	}
	snprintf(path, sizeof(path), "%s/inputs.txt", dir);
	if ((rc = names_write(path, in_names, n_in, d)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/outputs.txt", dir);
	return names_write(path, out_names, n_out, d);
}

/* The rank of the node's input 0, -1 when absent. */
static int in0_rank(const struct ir_model *m)
{
	const struct ir_node *n = m->graph->nodes[0];
	const struct ir_value *v = n->n_inputs ? n->inputs[0] : NULL;

	if (!v)
		return -1;
	if (v->init)
		return (int)v->init->n_dims;
	return v->type ? (int)v->type->shape.n_dims : -1;
}

static int case_json(const char *path, const struct probe_case *c, const struct probe_built *b,
		     struct ir_diag *d)
{
	cJSON *o = cJSON_CreateObject(), *a = NULL;
	char *text = NULL, val[512];
	rules_dtypes io = 0, in = 0;
	int max_rank = 0, rc;

	for (size_t i = 0; i < b->n_in; i++) {
		in |= RULES_DTYPE_BIT(b->in[i]->dtype);
		io |= RULES_DTYPE_BIT(b->in[i]->dtype);
		max_rank = b->in[i]->rank > max_rank ? b->in[i]->rank : max_rank;
	}
	for (size_t i = 0; i < b->n_out; i++) {
		io |= RULES_DTYPE_BIT(b->out[i]->dtype);
		max_rank = b->out[i]->rank > max_rank ? b->out[i]->rank : max_rank;
	}
	if (!o || !cJSON_AddStringToObject(o, "id", c->id) ||
	    !cJSON_AddStringToObject(o, "op", c->schema->name) ||
	    !cJSON_AddStringToObject(o, "domain", c->schema->domain) ||
	    !cJSON_AddNumberToObject(o, "version", c->schema->since_version) ||
	    !cJSON_AddNumberToObject(o, "opset", c->opset) ||
	    !cJSON_AddStringToObject(o, "kind", probe_kind_name(c->kind)) ||
	    !cJSON_AddStringToObject(o, "dtype", c->dtype ? ir_dtype_name(c->dtype) : "") ||
	    !(a = cJSON_AddArrayToObject(o, "io_dtypes")))
		goto oom;
	for (int t = 1; t < IR_DTYPE_COUNT; t++)
		if ((io & RULES_DTYPE_BIT(t)) && !cJSON_AddItemToArray(a, cJSON_CreateNumber(t)))
			goto oom;
	if (!(a = cJSON_AddArrayToObject(o, "in_dtypes")))
		goto oom;
	for (int t = 1; t < IR_DTYPE_COUNT; t++)
		if ((in & RULES_DTYPE_BIT(t)) && !cJSON_AddItemToArray(a, cJSON_CreateNumber(t)))
			goto oom;
	if (!cJSON_AddNumberToObject(o, "max_rank", max_rank) ||
	    !cJSON_AddNumberToObject(o, "in0_rank", in0_rank(b->m)) ||
	    !cJSON_AddBoolToObject(o, "shapes_only", b->shapes_only))
		goto oom;
	if (c->kind == PROBE_ATTR) {
		probe_aval_json(&c->value, val, sizeof(val));
		if (!cJSON_AddStringToObject(o, "attr", c->attr) ||
		    !cJSON_AddRawToObject(o, "value", val))
			goto oom;
	}
	if (c->backend && !cJSON_AddStringToObject(o, "backend", c->backend))
		goto oom;
	if (!(text = cJSON_Print(o)))
		goto oom;
	cJSON_Delete(o);
	rc = ir_file_write_atomic(path, text, strlen(text), d);
	free(text);
	return rc;
oom:
	cJSON_Delete(o);
	return ir_diag_error(d, IR_ENOMEM, "out of memory");
}

int probe_case_write(const char *dir, const struct probe_case *c,
		     const struct probe_built *b, struct ir_diag *d)
{
	char path[4400], data[4200];
	int rc;

	if ((rc = mkdir_ok(dir, d)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	if ((rc = ir_model_save(b->m, path, NULL, d)) < 0)
		return rc;
	snprintf(data, sizeof(data), "%s/test_data_set_0", dir);
	if ((rc = probe_inputs_write(data, b->in_names, b->in, b->n_in, b->out_names, b->n_out, d)) < 0)
		return rc;
	for (size_t i = 0; i < b->n_out; i++) {
		snprintf(path, sizeof(path), "%s/output_%zu.pb", data, i);
		if ((rc = rt_value_write_pb(b->out[i], b->out_names[i], path, d)) < 0)
			return rc;
	}
	snprintf(path, sizeof(path), "%s/case.json", dir);
	return case_json(path, c, b, d);
}

static char *slurp(const char *path, size_t max, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || (size_t)n > max ||
	    fseek(f, 0, SEEK_SET) < 0 || !(buf = malloc((size_t)n + 1))) {
		fclose(f);
		return NULL;
	}
	*len = fread(buf, 1, (size_t)n, f);
	buf[*len] = 0;
	fclose(f);
	return buf;
}

int probe_case_read(const char *dir, struct probe_case *c)
{
	char path[4200];
	size_t len;
	char *text;
	cJSON *o, *x;
	const cJSON *a;
	int rc = -1;

	snprintf(path, sizeof(path), "%s/case.json", dir);
	if (!(text = slurp(path, 1 << 20, &len)))
		return -1;
	o = cJSON_ParseWithLength(text, len);
	free(text);
	if (!o)
		return -1;
	x = cJSON_GetObjectItemCaseSensitive(o, "id");
	if (!cJSON_IsString(x) || strcmp(x->valuestring, c->id))
		goto cleanup;
	c->io_dtypes = 0;
	a = cJSON_GetObjectItemCaseSensitive(o, "io_dtypes");
	cJSON_ArrayForEach(x, a)
		if (cJSON_IsNumber(x) && x->valueint > 0 && x->valueint < IR_DTYPE_COUNT)
			c->io_dtypes |= RULES_DTYPE_BIT(x->valueint);
	c->in_dtypes = 0;
	a = cJSON_GetObjectItemCaseSensitive(o, "in_dtypes");
	cJSON_ArrayForEach(x, a)
		if (cJSON_IsNumber(x) && x->valueint > 0 && x->valueint < IR_DTYPE_COUNT)
			c->in_dtypes |= RULES_DTYPE_BIT(x->valueint);
	x = cJSON_GetObjectItemCaseSensitive(o, "max_rank");
	c->max_rank = cJSON_IsNumber(x) ? x->valueint : 0;
	x = cJSON_GetObjectItemCaseSensitive(o, "in0_rank");
	c->in0_rank = cJSON_IsNumber(x) ? x->valueint : -1;
	c->shapes_only = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "shapes_only"));
	rc = 0;
cleanup:
	cJSON_Delete(o);
	return rc;
}

/* ---- a runtime's outputs ---------------------------------------------- */

/* Same data, dims differing only by size-1 dims (a runtime that returns
 * [1,5] for [5], or drops a leading 1)? */
static int same_but_ones(const struct rt_value *a, const struct rt_value *b)
{
	int i = 0, j = 0;

	if (a->numel != b->numel)
		return 0;
	for (;;) {
		while (i < a->rank && a->dims[i] == 1)
			i++;
		while (j < b->rank && b->dims[j] == 1)
			j++;
		if (i == a->rank || j == b->rank)
			return i == a->rank && j == b->rank;
		if (a->dims[i++] != b->dims[j++])
			return 0;
	}
}

int probe_output_read(const char *outdir, size_t k, const struct rt_value *want,
		      const char *name, struct rt_value **got, char *note, size_t note_size,
		      char *why, size_t why_size, struct ir_diag *d)
{
	char path[4200];
	struct rt_value *v = NULL, *conv = NULL;
	struct ir_diag sub;
	int rc;

	*got = NULL;
	ir_diag_init(&sub);
	snprintf(path, sizeof(path), "%s/output_%zu.npy", outdir, k);
	if (access(path, F_OK) != 0)
		snprintf(path, sizeof(path), "%s/output_%zu.pb", outdir, k);
	if (access(path, F_OK) != 0) {
		snprintf(why, why_size, "no output_%zu.npy or output_%zu.pb for output '%s'", k, k, name);
		return 0;
	}
	if (rt_tensor_read_file(NULL, path, &v, &sub) < 0) {
		snprintf(why, why_size, "output_%zu unreadable: %s", k, sub.msg);
		return 0;
	}
	if (v->dtype != want->dtype && v->dtype != IR_DTYPE_STRING && want->dtype != IR_DTYPE_STRING) {
		if ((rc = rt_tensor_cast(NULL, v, want->dtype, &conv, d)) < 0) {
			rt_value_unref(v);
			return rc;
		}
		if (!note[0])
			snprintf(note, note_size, "output '%s' returned as %s, not %s", name,
				 ir_dtype_name(v->dtype), ir_dtype_name(want->dtype));
		rt_value_unref(v);
		v = conv;
	}
	if ((v->rank != want->rank || memcmp(v->dims, want->dims, (size_t)v->rank * sizeof(v->dims[0]))) &&
	    same_but_ones(v, want)) {
		if ((rc = rt_tensor_clone(NULL, v, &conv, d)) < 0) {
			rt_value_unref(v);
			return rc;
		}
		if (!note[0])
			snprintf(note, note_size, "output '%s' returned with dims of size 1 changed", name);
		conv->rank = want->rank;
		memcpy(conv->dims, want->dims, sizeof(conv->dims));
		rt_value_unref(v);
		v = conv;
	}
	*got = v;
	return 0;
}

/* Within tolerance when the absolute term grows to rtol times the
 * output's largest magnitude?  Another implementation of a sum (DFT, a
 * reduction) leaves errors of that size where values cancel to 0. */
static int scaled_ok(const struct rt_value *got, const struct rt_value *want,
		     const struct rt_cmp_opts *t)
{
	struct rt_tensor_summary s;
	struct rt_cmp_opts wide = *t;
	struct rt_metrics m;

	if (want->kind != RT_TENSOR || want->dtype == IR_DTYPE_STRING)
		return 0;
	rt_tensor_summarize(want, &s);
	if (!s.n_finite)
		return 0;
	wide.atol += t->rtol * (fabs(s.max) > fabs(s.min) ? fabs(s.max) : fabs(s.min));
	rt_compare(got, want, &wide, &m);
	return m.ok;
}

int probe_outputs_compare(const char *outdir, struct rt_value **want, char *const *names,
			  size_t n, const struct rt_cmp_opts *tol, int shapes_only,
			  int *equal, double *max_abs, char *why, size_t size,
			  struct ir_diag *d)
{
	char lenient[256] = "";
	int rc = 0;

	*equal = 1;
	*max_abs = 0;
	why[0] = 0;
	for (size_t k = 0; k < n && *equal; k++) {
		struct rt_value *got = NULL;
		struct rt_cmp_opts t;
		struct rt_metrics m;

		if ((rc = probe_output_read(outdir, k, want[k], names[k], &got, lenient,
					    sizeof(lenient), why, size, d)) < 0)
			return rc;
		if (!got) {
			*equal = 0;
			break;
		}
		if (tol)
			t = *tol;
		else
			val_default_tolerance(want[k]->dtype == IR_DTYPE_FLOAT16 ||
					      want[k]->dtype == IR_DTYPE_BFLOAT16 ? VAL_FP16 : VAL_FP32,
					      &t);
		if (shapes_only) {
			*equal = got->dtype == want[k]->dtype && got->rank == want[k]->rank &&
				!memcmp(got->dims, want[k]->dims, (size_t)got->rank * sizeof(got->dims[0]));
			if (!*equal)
				snprintf(why, size, "output '%s': type or shape differs", names[k]);
		} else {
			rt_compare(got, want[k], &t, &m);
			if (m.max_abs > *max_abs)
				*max_abs = m.max_abs;
			if (!m.ok && scaled_ok(got, want[k], &t) && !lenient[0])
				snprintf(lenient, sizeof(lenient),
					 "output '%s' equal within rtol of its largest value only (max abs error %.3g)",
					 names[k], m.max_abs);
			else if (!m.ok) {
				*equal = 0;
				snprintf(why, size, "output '%s': %s", names[k], m.why);
			}
		}
		rt_value_unref(got);
	}
	if (*equal && lenient[0])
		snprintf(why, size, "%s", lenient);
	return 0;
}

void probe_rm_tree(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;

	if (!dir) {
		unlink(path);
		return;
	}
	while ((e = readdir(dir))) {
		char p[4200];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		probe_rm_tree(p);
	}
	closedir(dir);
	rmdir(path);
}
