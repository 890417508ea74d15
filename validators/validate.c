/* validate.c: `opmig validate`'s engine: pair the two models' inputs and
 * outputs (by name, by the name map, or the one left over on each side),
 * build the samples (folders, files, seeded random data), convert inputs to
 * the candidate's dtypes and layouts, run both models, compare outputs with
 * metrics aggregated over samples, save the samples for replay, and hand
 * the first sample to the layer-by-layer comparison (whose first pass
 * also gives that sample's outputs). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/rt_int.h"
#include "runtime/tensor_io.h"
#include "validators/val_int.h"

void val_report_release(struct val_report *r)
{
	free(r->outputs);
	free(r->layers);
	memset(r, 0, sizeof(*r));
}

static const char *in_name(struct rt_session *s, size_t i)
{
	return ir_s(rt_session_input(s, i)->value->name);
}

static const char *out_name(struct rt_session *s, size_t i)
{
	return ir_s(rt_session_output(s, i)->value->name);
}

typedef const char *(*name_fn)(struct rt_session *, size_t);

/* Pair every reference name with a candidate one; the candidate may have
 * extra outputs (ignored), not extra inputs. */
static int pair_names(struct rt_session *ref, struct rt_session *cand,
		      size_t nr, size_t nc, name_fn name, enum val_map_kind kind,
		      const struct val_map *map, struct val_pair *p,
		      char *note, size_t note_size, struct ir_diag *d)
{
	const char *what = kind == VAL_MAP_INPUT ? "input" : "output";
	char *used = calloc(nc + 1, 1);
	size_t lost_r = 0, lost_c = 0, last_r = 0, last_c = 0;
	int rc = 0;

	if (!used)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < nr; i++) {
		const struct val_map_entry *e = val_map_by_ref(map, kind, name(ref, i));
		const char *want = e ? e->cand : name(ref, i);

		p[i] = (struct val_pair){ i, (size_t)-1, e };
		for (size_t j = 0; j < nc; j++)
			if (!used[j] && !strcmp(name(cand, j), want)) {
				p[i].cand = j;
				used[j] = 1;
				break;
			}
		if (p[i].cand == (size_t)-1 && e) {
			rc = diag_error(d, "the name map pairs reference %s '%s' with '%s', which the candidate does not have",
					what, name(ref, i), e->cand);
			goto cleanup;
		}
		if (p[i].cand == (size_t)-1) {
			lost_r++;
			last_r = i;
		}
	}
	for (size_t j = 0; j < nc; j++)
		if (!used[j]) {
			lost_c++;
			last_c = j;
		}
	if (lost_r == 1 && lost_c == 1) {
		p[last_r].cand = last_c;
		used[last_c] = 1;
		snprintf(note, note_size, "reference %s '%s' paired with candidate %s '%s' (the only ones without a match)",
			 what, name(ref, last_r), what, name(cand, last_c));
		lost_r = 0;
		lost_c = 0;
	}
	if (lost_r) {
		for (size_t i = 0; i < nr; i++)
			if (p[i].cand == (size_t)-1) {
				rc = diag_error(d, "incompatible signatures: reference %s '%s' has no counterpart among the candidate's %ss (%zu of them unmatched); pair them with --map",
						what, name(ref, i), what, lost_c);
				goto cleanup;
			}
	}
	if (lost_c && kind == VAL_MAP_INPUT) {
		for (size_t j = 0; j < nc; j++)
			if (!used[j]) {
				rc = diag_error(d, "incompatible signatures: candidate input '%s' has no counterpart in the reference; pair it with --map",
						name(cand, j));
				goto cleanup;
			}
	}
cleanup:
	free(used);
	return rc;
}

int val_to_cand(struct rt_value *v, const struct val_map_entry *e,
		int cand_dtype, struct rt_value **out, struct ir_diag *d)
{
	struct rt_value *t = NULL;
	int rc;

	if (v->kind != RT_TENSOR) {
		*out = rt_value_ref(v);
		return 0;
	}
	if (e && e->rank) {
		if (e->rank != v->rank)
			return diag_error(d, "the name map's permutation has rank %d, '%s' has rank %d",
					  e->rank, e->ref, v->rank);
		if ((rc = rt_tensor_transpose(NULL, v, e->perm, &t, d)) < 0)
			return rc;
	} else {
		t = rt_value_ref(v);
	}
	rc = rt_tensor_cast(NULL, t, cand_dtype ? cand_dtype : t->dtype, out, d);
	rt_value_unref(t);
	return rc;
}

int val_to_ref(struct rt_value *v, const struct val_map_entry *e,
	       int ref_dtype, struct rt_value **out, struct ir_diag *d)
{
	struct rt_value *t = NULL;
	int inv[RT_MAX_RANK], rc;

	if (v->kind != RT_TENSOR) {
		*out = rt_value_ref(v);
		return 0;
	}
	if ((rc = rt_tensor_cast(NULL, v, ref_dtype ? ref_dtype : v->dtype, &t, d)) < 0)
		return rc;
	if (!e || !e->rank) {
		*out = t;
		return 0;
	}
	if (e->rank != t->rank) {
		rt_value_unref(t);
		return diag_error(d, "the name map's permutation has rank %d, '%s' has rank %d",
				  e->rank, e->cand, v->rank);
	}
	for (int i = 0; i < e->rank; i++)
		inv[e->perm[i]] = i;
	rc = rt_tensor_transpose(NULL, t, inv, out, d);
	rt_value_unref(t);
	return rc;
}

static int declared_dtype(const struct ir_vinfo *vi)
{
	return vi && vi->type && vi->type->kind == IR_TYPE_TENSOR ? vi->type->elem_type : 0;
}

struct val_ctx {
	struct ir_model *ref_m, *cand_m;
	struct rt_session *ref, *cand;
	const struct val_opts *o;
	struct val_pair *in, *out;
	size_t n_in, n_out;
	struct rt_cmp_acc *acc;
	char *logits;             /* per output: val_is_logits */
	struct rt_value **ref_in, **cand_in, **ref_out, **cand_out;
};

static int bind_sample(struct val_ctx *c, size_t k, char *bad, size_t bad_size,
		       struct ir_diag *d)
{
	struct rt_input_opts gen = c->o->gen;
	struct ir_diag sub;
	int rc;

	rt_inputs_release(c->ref_in, c->n_in);
	rt_inputs_release(c->cand_in, c->n_in);
	if (k < c->o->n_data_dirs &&
	    (rc = rt_inputs_from_dir(c->ref, c->o->data_dirs[k], c->ref_in, bad,
				     bad_size, d)) < 0)
		return rc;
	if ((rc = rt_inputs_from_files(c->ref, c->o->input_files, c->o->n_input_files,
				       c->ref_in, bad, bad_size, d)) < 0)
		return rc;
	gen.seed = c->o->gen.seed + k;
	if ((rc = rt_inputs_random(c->ref, c->ref_m, &gen, c->ref_in, d)) < 0)
		return rc;
	for (size_t i = 0; i < c->n_in; i++) {
		const struct val_pair *p = &c->in[i];
		int dt = declared_dtype(rt_session_input(c->cand, p->cand));

		if (p->e && p->e->dtype)
			dt = p->e->dtype;
		if ((rc = val_to_cand(c->ref_in[p->ref], p->e, dt, &c->cand_in[p->cand], d)) < 0)
			return rc;
		ir_diag_init(&sub);
		if (rt_session_check_input(c->cand, p->cand, c->cand_in[p->cand], &sub) < 0)
			return diag_error(d, "incompatible signatures: reference input '%s' converted for the candidate: %.400s",
					  in_name(c->ref, p->ref), sub.msg);
	}
	return 0;
}

static int mkdirs(const char *path, struct ir_diag *d)
{
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	if (mkdir(path, 0777) != 0 && errno != EEXIST)
		return ir_diag_error(d, IR_EIO, "cannot create '%s': %s", path,
				     ir_strerror(errno));
	return 0;
}

static int save_sample(struct val_ctx *c, size_t k, struct ir_diag *d)
{
	char dir[4096], path[4300];
	int rc;

	snprintf(dir, sizeof(dir), "%s/sample_%zu", c->o->save_dir, k);
	if ((rc = mkdirs(c->o->save_dir, d)) < 0 || (rc = mkdirs(dir, d)) < 0)
		return rc;
	for (size_t i = 0; i < c->n_in; i++) {
		snprintf(path, sizeof(path), "%s/input_%zu.pb", dir, i);
		if ((rc = rt_value_write_pb(c->ref_in[i], in_name(c->ref, i), path, d)) < 0)
			return rc;
	}
	for (int side = 0; side < 2; side++) {
		struct rt_session *s = side ? c->cand : c->ref;
		struct rt_value **outs = side ? c->cand_out : c->ref_out;

		snprintf(path, sizeof(path), "%s/%s", dir, side ? "candidate" : "reference");
		if ((rc = mkdirs(path, d)) < 0)
			return rc;
		for (size_t i = 0; i < rt_session_n_outputs(s); i++) {
			snprintf(path, sizeof(path), "%s/%s/output_%zu.pb", dir,
				 side ? "candidate" : "reference", i);
			if ((rc = rt_value_write_pb(outs[i], out_name(s, i), path, d)) < 0)
				return rc;
		}
	}
	return 0;
}

/* Compare the sample's outputs (in c->ref_out and c->cand_out), save the
 * sample when asked, and release the outputs. */
static int sample_outputs(struct val_ctx *c, size_t k, struct ir_diag *d)
{
	int rc = 0;

	for (size_t i = 0; i < c->n_out; i++) {
		const struct val_pair *p = &c->out[i];
		struct rt_value *got, *want = c->ref_out[p->ref];

		if ((rc = val_to_ref(c->cand_out[p->cand], p->e,
				     want->kind == RT_TENSOR ? want->dtype : 0, &got, d)) < 0)
			goto cleanup;
		rt_cmp_add(&c->acc[i], got, want, &c->o->tol);
		if (c->logits[i])
			rt_logits_add(&c->acc[i].m, got, want);
		rt_value_unref(got);
	}
	if (c->o->save_dir)
		rc = save_sample(c, k, d);
cleanup:
	rt_inputs_release(c->ref_out, rt_session_n_outputs(c->ref));
	rt_inputs_release(c->cand_out, rt_session_n_outputs(c->cand));
	return rc;
}

/* One run's time into a model's sum and least */
static void timed(struct val_report *r, double t, double *sum, double *least)
{
	*sum += t;
	if (!r->n_timed || t < *least)
		*least = t;
}

static int run_sample(struct val_ctx *c, struct val_report *r, size_t k, struct ir_diag *d)
{
	double t0 = rt_now(), t1, t2;
	int rc;

	if ((rc = rt_session_run(c->ref, c->ref_in, c->n_in, c->ref_out, d)) < 0)
		return rc;
	t1 = rt_now();
	if ((rc = rt_session_run(c->cand, c->cand_in, c->n_in, c->cand_out, d)) < 0)
		return rc;
	t2 = rt_now();
	if (c->o->time) {
		timed(r, t1 - t0, &r->ref_s, &r->ref_min_s);
		timed(r, t2 - t1, &r->cand_s, &r->cand_min_s);
		r->n_timed++;
	}
	return sample_outputs(c, k, d);
}

/* The first sample with --layerwise: its first pass gives the outputs. */
static int first_outputs(void *ctx, struct ir_diag *d)
{
	return sample_outputs(ctx, 0, d);
}

static int run_layerwise(struct val_ctx *c, struct val_report *r, struct ir_diag *d)
{
	struct val_side rs = { c->ref_m, c->ref, c->ref_in, c->ref_out };
	struct val_side cs = { c->cand_m, c->cand, c->cand_in, c->cand_out };

	return val_layerwise(&rs, &cs, c->o, first_outputs, c, r, d);
}

static int pair_all(struct val_ctx *c, struct val_report *r, struct ir_diag *d)
{
	size_t nr = rt_session_n_inputs(c->ref), nc = rt_session_n_inputs(c->cand);
	char note[256] = "";
	int rc;

	c->n_in = nr;
	c->n_out = rt_session_n_outputs(c->ref);
	if (!(c->in = calloc(nr + 1, sizeof(*c->in))) ||
	    !(c->out = calloc(c->n_out + 1, sizeof(*c->out))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	if ((rc = pair_names(c->ref, c->cand, nr, nc, in_name, VAL_MAP_INPUT,
			     c->o->map, c->in, note, sizeof(note), d)) < 0)
		return rc;
	if (note[0])
		snprintf(r->note, sizeof(r->note), "%s", note);
	note[0] = 0;
	if ((rc = pair_names(c->ref, c->cand, c->n_out, rt_session_n_outputs(c->cand),
			     out_name, VAL_MAP_OUTPUT, c->o->map, c->out, note,
			     sizeof(note), d)) < 0)
		return rc;
	if (note[0] && !r->note[0])
		snprintf(r->note, sizeof(r->note), "%s", note);
	return 0;
}

int val_is_logits(const struct ir_model *ref, const struct ir_vinfo *out)
{
	const struct ir_type *t = out->type;
	const struct ir_dim *last;
	int64_t vocab;

	if (!t || t->kind != IR_TYPE_TENSOR || !IR_HAS(t, IR_TYPE_HAS_ELEM) ||
	    !rt_dtype_is_float(t->elem_type) || !IR_HAS(t, IR_TYPE_HAS_SHAPE))
		return 0;
	if (!strcmp(ir_s(out->value->name), "logits"))
		return t->shape.n_dims >= 2;
	if (t->shape.n_dims == 4 && (!strncmp(ir_s(out->value->name), "present.", 8) ||
				     !strncmp(ir_s(out->value->name), "present_key", 11) ||
				     !strncmp(ir_s(out->value->name), "present_value", 13)))
		return 2;
	if (t->shape.n_dims != 3)
		return 0;
	last = &t->shape.dims[2];
	vocab = rt_input_vocab(ref);
	return vocab > 0 && last->kind == IR_DIM_VALUE && last->value == vocab;
}

double val_logits_min_cosine(enum val_precision p)
{
	return p == VAL_INT8 ? 0.99 : 0.999;
}

/* Say which decoder inputs the generator fills by rule (inputs.h). */
static void note_inputs(struct val_ctx *c, struct val_report *r)
{
	size_t at = 0;

	if (c->o->n_data_dirs)
		return;
	for (size_t i = 0; i < c->n_in; i++) {
		const struct ir_vinfo *vi = rt_session_input(c->ref, i);
		enum rt_input_role role = rt_input_role_of(vi);
		const char *name = ir_s(vi->value->name);
		int given = 0;

		for (size_t k = 0; k < c->o->gen.n_ranges; k++)
			given |= !strncmp(c->o->gen.ranges[k].name, name, strlen(name)) &&
				 c->o->gen.ranges[k].name[strlen(name)] == '=';
		for (size_t k = 0; k < c->o->n_input_files; k++)
			given |= !strncmp(c->o->input_files[k], name, strlen(name)) &&
				 c->o->input_files[k][strlen(name)] == '=';
		if (given || (role != RT_ROLE_ATTENTION_MASK && role != RT_ROLE_POSITION_IDS))
			continue;
		at += (size_t)snprintf(r->inputs_note + at, sizeof(r->inputs_note) - at,
				       "%s%s %s", at ? "; " : "", name, rt_input_role_rule(role));
		if (role == RT_ROLE_POSITION_IDS && at < sizeof(r->inputs_note))
			at += (size_t)snprintf(r->inputs_note + at, sizeof(r->inputs_note) - at,
					       " (past length %lld)", (long long)
					       rt_input_past_length(c->ref_m, &c->o->gen));
		if (at >= sizeof(r->inputs_note))
			break;
	}
}

int val_run(struct ir_model *ref, struct ir_model *cand,
	    const struct val_opts *o, struct val_report *r, char *bad_file,
	    size_t bad_size, struct ir_diag *d)
{
	/* --layerwise holds both models at once by design: their sessions
	 * keep no transformed copies of the weights */
	struct rt_opts ro = { .threads = o->threads, .no_weight_cache = o->layerwise };
	struct val_ctx c = { .ref_m = ref, .cand_m = cand, .o = o };
	size_t n_samples;
	int rc;

	memset(r, 0, sizeof(*r));
	r->first_bad = -1;
	bad_file[0] = 0;
	r->precision = o->precision >= 0 ? (enum val_precision)o->precision :
		       val_guess_precision(cand);
	r->tol = o->tol;
	if (!o->have_tol)
		val_default_tolerance(r->precision, &r->tol);
	if ((rc = rt_session_new(ref, &ro, &c.ref, d)) < 0 ||
	    (rc = rt_session_new(cand, &ro, &c.cand, d)) < 0)
		goto cleanup;
	if ((rc = pair_all(&c, r, d)) < 0)
		goto cleanup;
	if (!(c.acc = calloc(c.n_out + 1, sizeof(*c.acc))) ||
	    !(c.logits = calloc(c.n_out + 1, 1)) ||
	    !(c.ref_in = calloc(c.n_in + 1, sizeof(*c.ref_in))) ||
	    !(c.cand_in = calloc(c.n_in + 1, sizeof(*c.cand_in))) ||
	    !(c.ref_out = calloc(rt_session_n_outputs(c.ref) + 1, sizeof(*c.ref_out))) ||
	    !(c.cand_out = calloc(rt_session_n_outputs(c.cand) + 1, sizeof(*c.cand_out))) ||
	    !(r->outputs = calloc(c.n_out + 1, sizeof(*r->outputs)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	{
		struct val_opts oo = *o;

		oo.tol = r->tol;
		c.o = &oo;
		note_inputs(&c, r);
		for (size_t i = 0; i < c.n_out; i++) {
			rt_cmp_begin(&c.acc[i]);
			c.logits[i] = (char)(o->logits_exact ? 0 :
				      val_is_logits(ref, rt_session_output(c.ref, c.out[i].ref)));
			if (c.logits[i])
				rt_logits_begin(&c.acc[i].m, c.logits[i] == 2);
		}
		n_samples = o->n_data_dirs ? o->n_data_dirs : (size_t)(o->samples > 0 ? o->samples : 1);
		for (size_t k = 0; k < n_samples && rc == 0; k++) {
			if ((rc = bind_sample(&c, k, bad_file, bad_size, d)) < 0)
				break;
			rc = k == 0 && o->layerwise ? run_layerwise(&c, r, d) :
			     run_sample(&c, r, k, d);
		}
		c.o = o;
	}
	if (rc < 0)
		goto cleanup;
	r->n_samples = n_samples;
	r->n_outputs = c.n_out;
	r->equivalent = 1;
	for (size_t i = 0; i < c.n_out; i++) {
		r->outputs[i].ref_name = out_name(c.ref, c.out[i].ref);
		r->outputs[i].cand_name = out_name(c.cand, c.out[i].cand);
		rt_cmp_end(&c.acc[i], &r->outputs[i].m);
		if (c.logits[i])
			rt_logits_judge(&r->outputs[i].m, val_logits_min_cosine(r->precision));
		r->equivalent &= r->outputs[i].m.ok;
	}
cleanup:
	if (c.ref_in)
		rt_inputs_release(c.ref_in, c.n_in);
	if (c.cand_in && c.cand)
		rt_inputs_release(c.cand_in, rt_session_n_inputs(c.cand));
	if (c.ref_out)
		rt_inputs_release(c.ref_out, rt_session_n_outputs(c.ref));
	if (c.cand_out)
		rt_inputs_release(c.cand_out, rt_session_n_outputs(c.cand));
	free(c.ref_in);
	free(c.cand_in);
	free(c.ref_out);
	free(c.cand_out);
	free(c.acc);
	free(c.logits);
	free(c.in);
	free(c.out);
	rt_session_free(c.ref);
	rt_session_free(c.cand);
	if (rc < 0) {
		free(r->outputs);
		r->outputs = NULL;
	}
	return rc;
}
