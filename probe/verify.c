/* verify.c: `opmig migrate --verify-with CMD`: the migrated model run on
 * the real runtime.  The model is saved into a temporary folder with
 * seeded inputs per sample in the layout probe's cases use; CMD runs in a
 * worker of batch's pool (its own process group, under a timeout); its
 * outputs are compared with the interpreter's for the same model and
 * inputs, with the tolerances of the model's precision.  A runtime that
 * refuses, crashes, hangs or differs is a result, not an error. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch/batch.h"
#include "probe/probe.h"
#include "probe/probe_int.h"
#include "rewriters/migrate.h"
#include "runtime/inputs.h"
#include "validators/validate.h"

void probe_verify_release(struct probe_verify *v)
{
	for (size_t i = 0; i < v->n_outputs; i++)
		free(v->outputs[i].name);
	free(v->outputs);
	free(v->message);
	free(v->runtime);
	free(v->command);
	memset(v, 0, sizeof(*v));
}

/* The one task of the pool: the command on one sample. */
struct vtask {
	const char *cmd;
	const char *out_file, *err_file;
	int status, timed_out;
};

static int v_child(void *ctx, size_t i)
{
	struct vtask *t = ctx;

	(void)i;
	return probe_exec_shell(t->cmd, t->out_file, t->err_file);
}

static int v_done(void *ctx, size_t i, int status, int timed_out, double secs, struct ir_diag *d)
{
	struct vtask *t = ctx;

	(void)i;
	(void)secs;
	(void)d;
	t->status = status;
	t->timed_out = timed_out;
	return 0;
}

/* The session's input (or output) names: 0, or -1 out of memory. */
static int dup_names(const struct rt_session *s, int input, size_t n, char ***out)
{
	char **v = calloc(n + 1, sizeof(*v));

	*out = v;
	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct ir_vinfo *vi = input ? rt_session_input(s, i) : rt_session_output(s, i);

		if (!(v[i] = strdup(ir_s(vi->value->name))))
			return -1;
	}
	return 0;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* One sample: inputs, the interpreter, the command, the comparison. */
static int run_sample(struct ir_model *m, struct rt_session *s, const struct probe_verify_opts *o,
		      const char *work, size_t k, struct rt_cmp_acc *acc, char **in_names,
		      char **out_names, struct probe_verify *v, struct ir_diag *d)
{
	size_t n_in = rt_session_n_inputs(s), n_out = rt_session_n_outputs(s);
	struct rt_value **in = calloc(n_in + 1, sizeof(*in)), **want = calloc(n_out + 1, sizeof(*want));
	struct rt_input_opts gen;
	struct batch_pool pool;
	struct vtask t;
	struct probe_exec e;
	char dir[4300], data[4400], out[4400], so[4400], se[4400], model[4400], note[256] = "";
	char *cmd = NULL;
	int rc;

	memset(&e, 0, sizeof(e));
	if (!in || !want) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	memset(&gen, 0, sizeof(gen));
	gen.seed = o->seed + k;
	snprintf(dir, sizeof(dir), "%s/sample_%zu", work, k);
	snprintf(data, sizeof(data), "%s/inputs", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(so, sizeof(so), "%s/stdout.txt", dir);
	snprintf(se, sizeof(se), "%s/stderr.txt", dir);
	snprintf(model, sizeof(model), "%s/model.onnx", work);
	if (mkdir(dir, 0777) < 0 || mkdir(out, 0777) < 0) {
		rc = ir_diag_error(d, IR_EIO, "cannot create '%s'", dir);
		goto cleanup;
	}
	if ((rc = rt_inputs_random(s, m, &gen, in, d)) < 0 ||
	    (rc = rt_session_run(s, in, n_in, want, d)) < 0 ||
	    (rc = probe_inputs_write(data, in_names, in, n_in, out_names, n_out, d)) < 0)
		goto cleanup;
	if (!(cmd = probe_template_expand(o->command, model, data, out))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	memset(&t, 0, sizeof(t));
	t.cmd = cmd;
	t.out_file = so;
	t.err_file = se;
	memset(&pool, 0, sizeof(pool));
	pool.jobs = 1;
	pool.timeout = o->timeout > 0 ? o->timeout : 600;
	pool.own_group = 1;
	pool.child = v_child;
	pool.done = v_done;
	pool.ctx = &t;
	if ((rc = batch_pool_run(&pool, 1, d)) < 0)
		goto cleanup;
	probe_exec_classify(t.status, t.timed_out, pool.timeout, se, so, model, &e);
	if (e.runtime && !v->runtime)
		v->runtime = strdup(e.runtime);
	v->ran = 1;
	if (e.verdict != PROBE_PENDING) {
		v->verdict = e.verdict;
		v->message = e.message;
		e.message = NULL;
		goto cleanup;
	}
	for (size_t i = 0; i < n_out; i++) {
		struct rt_value *got = NULL;
		char why[512] = "";

		if ((rc = probe_output_read(out, i, want[i], out_names[i], &got, note, sizeof(note),
					    why, sizeof(why), d)) < 0)
			goto cleanup;
		if (!got) {
			v->verdict = PROBE_WRONG;
			if (!v->message)
				v->message = strdup(why);
			continue;
		}
		rt_cmp_add(&acc[i], got, want[i], &v->tol);
		rt_value_unref(got);
	}
	if (note[0] && !v->message)
		v->message = strdup(note);
cleanup:
	probe_exec_release(&e);
	free(cmd);
	rt_inputs_release(in, n_in);
	rt_inputs_release(want, n_out);
	free(in);
	free(want);
	return rc;
}

int probe_verify_model(struct ir_model *m, const struct probe_verify_opts *o,
		       struct probe_verify *v, struct ir_diag *d)
{
	struct ir_save_opts so = { NULL, 1024 };
	struct rt_session *s = NULL;
	struct rt_opts ro;
	struct rt_cmp_acc *acc = NULL;
	char work[4200], path[4300], **in_names = NULL, **out_names = NULL;
	const char *tmp = getenv("TMPDIR");
	size_t n_out = 0, n_in = 0;
	int rc;

	memset(v, 0, sizeof(*v));
	memset(&ro, 0, sizeof(ro));
	ro.threads = o->threads;
	if (!(v->command = strdup(o->command)))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	v->verdict = PROBE_EQUAL;
	if (o->have_tol)
		v->tol = o->tol;
	else
		val_default_tolerance(val_guess_precision(m), &v->tol);
	snprintf(work, sizeof(work), "%s/opmig-verify.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(work))
		return ir_diag_error(d, IR_EIO, "cannot create a temporary folder in %s",
				     tmp && *tmp ? tmp : "/tmp");
	snprintf(path, sizeof(path), "%s/model.onnx", work);
	if (ir_model_needs_external(m))
		so.external_data = "model.onnx.data";
	if ((rc = ir_model_save(m, path, &so, d)) < 0 || (rc = rt_session_new(m, &ro, &s, d)) < 0)
		goto cleanup;
	n_in = rt_session_n_inputs(s);
	n_out = rt_session_n_outputs(s);
	if (dup_names(s, 1, n_in, &in_names) < 0 || dup_names(s, 0, n_out, &out_names) < 0 ||
	    !(acc = calloc(n_out + 1, sizeof(*acc))) ||
	    !(v->outputs = calloc(n_out + 1, sizeof(*v->outputs)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < n_out; i++)
		rt_cmp_begin(&acc[i]);
	for (size_t k = 0; k < (size_t)(o->samples > 0 ? o->samples : 1); k++) {
		if ((rc = run_sample(m, s, o, work, k, acc, in_names, out_names, v, d)) < 0)
			goto cleanup;
		v->n_samples = k + 1;
		if (v->verdict != PROBE_EQUAL)
			break;
	}
	if (v->verdict == PROBE_EQUAL) {
		v->n_outputs = n_out;
		for (size_t i = 0; i < n_out; i++) {
			rt_cmp_end(&acc[i], &v->outputs[i].m);
			if (!(v->outputs[i].name = strdup(out_names[i]))) {
				rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
				goto cleanup;
			}
			if (!v->outputs[i].m.ok && v->verdict == PROBE_EQUAL) {
				char buf[600];

				v->verdict = PROBE_WRONG;
				snprintf(buf, sizeof(buf), "output '%s': %s", out_names[i],
					 v->outputs[i].m.why);
				free(v->message);
				v->message = strdup(buf);
			}
		}
	}
	v->ok = v->ran && v->verdict == PROBE_EQUAL;
cleanup:
	rt_session_free(s);
	free(acc);
	free_names(in_names, n_in);
	free_names(out_names, n_out);
	probe_rm_tree(work);
	return rc;
}

char *probe_verify_json(const struct probe_verify *v)
{
	cJSON *o = cJSON_CreateObject(), *a;
	char *text;

	if (!o || !cJSON_AddStringToObject(o, "command", v->command ? v->command : "") ||
	    !(v->runtime ? cJSON_AddStringToObject(o, "runtime", v->runtime) :
	      cJSON_AddNullToObject(o, "runtime")) ||
	    !cJSON_AddStringToObject(o, "verdict", probe_verdict_name(v->verdict)) ||
	    !cJSON_AddBoolToObject(o, "ok", v->ok) ||
	    !(v->message ? cJSON_AddStringToObject(o, "message", v->message) :
	      cJSON_AddNullToObject(o, "message")) ||
	    !cJSON_AddNumberToObject(o, "samples", (double)v->n_samples) ||
	    !cJSON_AddNumberToObject(o, "rtol", v->tol.rtol) ||
	    !cJSON_AddNumberToObject(o, "atol", v->tol.atol) ||
	    !(a = cJSON_AddArrayToObject(o, "outputs")))
		goto oom;
	for (size_t i = 0; i < v->n_outputs; i++) {
		cJSON *x = rt_metrics_json(&v->outputs[i].m);

		if (!x || !cJSON_AddStringToObject(x, "name", v->outputs[i].name) ||
		    !cJSON_AddItemToArray(a, x)) {
			cJSON_Delete(x);
			goto oom;
		}
	}
	text = cJSON_Print(o);
	cJSON_Delete(o);
	return text;
oom:
	cJSON_Delete(o);
	return NULL;
}

void probe_verify_text(const struct probe_verify *v, FILE *f)
{
	fprintf(f, "runtime check (%s, %zu sample%s, rtol %g, atol %g): %s%s%s\n",
		v->runtime ? v->runtime : "the runtime printed no version", v->n_samples,
		v->n_samples == 1 ? "" : "s", v->tol.rtol, v->tol.atol,
		v->ok ? "equal" : v->verdict == PROBE_WRONG ? "DIFFERS" : "FAILED, ",
		v->ok || v->verdict == PROBE_WRONG ? "" : probe_verdict_name(v->verdict),
		v->ok || v->verdict == PROBE_WRONG ? "" : " by the runtime");
	if (v->message)
		fprintf(f, "  %s\n", v->message);
	for (size_t i = 0; i < v->n_outputs; i++) {
		const struct rt_metrics *m = &v->outputs[i].m;

		fprintf(f, "  %-24s max abs %.3g, max rel %.3g, cosine %.6f%s%s\n", v->outputs[i].name,
			m->max_abs, m->max_rel, m->cosine, m->ok ? "" : ": ", m->ok ? "" : m->why);
	}
}

int probe_verify_report(struct ir_model *m, const struct probe_verify_opts *o,
			struct probe_verify *v, struct mg_report *r, struct ir_diag *d)
{
	int rc;

	if ((rc = probe_verify_model(m, o, v, d)) < 0)
		return rc;
	free(r->runtime_check);
	if (!(r->runtime_check = probe_verify_json(v)))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	if (!v->ok && r->ok) {
		r->ok = 0;
		snprintf(r->why, sizeof(r->why), "the runtime %s: %.200s",
			 v->verdict == PROBE_WRONG ? "computes something else" :
			 v->verdict == PROBE_REJECTED ? "rejects the model" :
			 v->verdict == PROBE_CRASHED ? "crashed" : "did not answer",
			 v->message ? v->message : "");
	}
	return 0;
}
