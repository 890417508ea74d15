/* cmd_validate.c: `opmig validate REF CANDIDATE`: options, the report as
 * text or JSON (opmig.validate/1) and the exit code; the engine is
 * validators/validate.h. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ir/ir.h"
#include "oprules/jbuild.h"
#include "validators/validate.h"

const char cmd_validate_help[] =
	"usage: opmig validate REF CANDIDATE [--data DIR]... [--input NAME=FILE]... [--samples N] [--seed S] [--dim NAME=V]... [--range NAME=LO:HI]... [--rtol R] [--atol A] [--precision fp32|fp16|int8] [--logits cosine|exact] [--layerwise] [--map FILE] [--format text|json] [--save DIR] [--threads N] [--time]\n"
	"\n"
	"Run REF and CANDIDATE on the same inputs and compare their outputs.\n"
	"\n"
	"  --data DIR           one sample from DIR/input_N.pb; repeatable\n"
	"  --input NAME=FILE    bind input NAME (of REF) to a .pb/.npy file in\n"
	"                       every sample\n"
	"  --samples N          seeded random samples when no --data (default 1)\n"
	"  --seed S             seed of the first sample (sample k uses S+k)\n"
	"  --dim NAME=V         value of a symbolic input dim (default 1)\n"
	"  --range NAME=LO:HI   value range of the random data of input NAME\n"
	"  --rtol R, --atol A   tolerances (default: by precision)\n"
	"  --precision P        fp32, fp16 or int8 (default: guessed from CANDIDATE)\n"
	"  --logits C           a decoder's logits: cosine (default: every position's\n"
	"                       cosine >= 0.999, 0.99 for int8, and its top-1 token\n"
	"                       agrees) or exact (rtol/atol like any output)\n"
	"  --layerwise          also compare every intermediate value both models\n"
	"                       compute and find the first that diverges\n"
	"  --map FILE           name map written by opmig migrate\n"
	"  --format F           text (default) or json (opmig.validate/1)\n"
	"  --save DIR           write each sample's inputs and both models'\n"
	"                       outputs as .pb files under DIR/sample_K/\n"
	"  --threads N          threads per model (default: all cores)\n"
	"  --time               report each model's time per run (wall clock;\n"
	"                       reports are otherwise the same every time)\n"
	"  --help               show this help\n"
	"\n"
	"Exit status: 0 equivalent within tolerance, 1 not equivalent, 2 usage,\n"
	"3 bad input (including signatures that cannot be paired), 4 internal.\n";

struct vargs {
	const char *ref, *cand, *map;
	int json;
	struct val_opts o;
	char **data, **inputs;
	size_t n_data, n_inputs;
	struct rt_dim_set *dims;
	struct rt_value_range *ranges;
	size_t n_dims, n_ranges;
};

static int parse_double(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !(*out >= 0) ? -1 : 0;
}

static int parse_args(int argc, char **argv, struct vargs *a)
{
	static const struct option opts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "input", required_argument, NULL, 'i' },
		CLI_RUN_OPTIONS,
		{ "dim", required_argument, NULL, 'D' },
		{ "range", required_argument, NULL, 'R' },
		{ "rtol", required_argument, NULL, 'r' },
		{ "atol", required_argument, NULL, 'a' },
		{ "precision", required_argument, NULL, 'p' },
		{ "layerwise", no_argument, NULL, 'l' },
		{ "time", no_argument, NULL, 'Z' },
		{ "logits", required_argument, NULL, 'L' },
		{ "map", required_argument, NULL, 'm' },
		{ "format", required_argument, NULL, 'f' },
		{ "save", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *self = cli_command_find("validate");
	const struct cli_run_opts run = { &a->o.samples, &a->o.gen.seed, &a->o.threads, 100000 };
	int c, rc, have_r = 0, have_a = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (cli_push(&a->data, &a->n_data, optarg) < 0)
				return CLI_EXIT_INTERNAL;
			break;
		case 'i':
			if (!strchr(optarg, '=') || optarg[0] == '=')
				return cli_usage_error(self, "--input wants NAME=FILE, not '%s'", optarg);
			if (cli_push(&a->inputs, &a->n_inputs, optarg) < 0)
				return CLI_EXIT_INTERNAL;
			break;
		case CLI_OPT_SAMPLES:
		case CLI_OPT_SEED:
		case CLI_OPT_THREADS:
			if ((rc = cli_parse_run_opt(self, c, optarg, &run)) != CLI_EXIT_OK)
				return rc;
			break;
		case 'D':
			if ((rc = cli_add_dim(self, &a->dims, &a->n_dims, optarg)) != CLI_EXIT_OK)
				return rc;
			break;
		case 'R': {
			struct rt_value_range *q = realloc(a->ranges, (a->n_ranges + 1) * sizeof(*q));

			if (!q)
				return CLI_EXIT_INTERNAL;
			a->ranges = q;
			if (rt_value_range_parse(optarg, &q[a->n_ranges]) < 0)
				return cli_usage_error(self, "--range wants NAME=LO:HI with LO <= HI, not '%s'", optarg);
			a->n_ranges++;
			break;
		}
		case 'r':
		case 'a':
			if (parse_double(optarg, c == 'r' ? &a->o.tol.rtol : &a->o.tol.atol) < 0)
				return cli_usage_error(self, "--%s wants a number >= 0, not '%s'",
						       c == 'r' ? "rtol" : "atol", optarg);
			*(c == 'r' ? &have_r : &have_a) = 1;
			break;
		case 'p':
			if ((a->o.precision = val_precision_parse(optarg)) < 0)
				return cli_usage_error(self, "--precision is fp32, fp16 or int8, not '%s'", optarg);
			break;
		case 'l': a->o.layerwise = 1; break;
		case 'Z': a->o.time = 1; break;
		case 'L':
			if (strcmp(optarg, "cosine") && strcmp(optarg, "exact"))
				return cli_usage_error(self, "--logits is cosine or exact, not '%s'", optarg);
			a->o.logits_exact = !strcmp(optarg, "exact");
			break;
		case 'm': a->map = optarg; break;
		case 'S': a->o.save_dir = optarg; break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return cli_usage_error(self, "--format is text or json, not '%s'", optarg);
			a->json = !strcmp(optarg, "json");
			break;
		default:
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return cli_usage_error(self, "validate needs REF and CANDIDATE");
	if (a->n_data && a->o.samples)
		return cli_usage_error(self, "--samples and --data exclude each other (each --data folder is a sample)");
	a->ref = argv[optind];
	a->cand = argv[optind + 1];
	/* which tolerances were given: the other keeps the precision's
	 * default, known once CANDIDATE is loaded (cmd_validate) */
	a->o.have_tol = 2 * have_r + have_a;
	a->o.data_dirs = a->data;
	a->o.n_data_dirs = a->n_data;
	a->o.input_files = a->inputs;
	a->o.n_input_files = a->n_inputs;
	a->o.gen.dims = a->dims;
	a->o.gen.n_dims = a->n_dims;
	a->o.gen.ranges = a->ranges;
	a->o.gen.n_ranges = a->n_ranges;
	return CLI_EXIT_OK;
}

static cJSON *json_layer(const struct val_layer *l, int *ok)
{
	cJSON *o = cJSON_CreateObject();

	jb_need(cJSON_AddStringToObject(o, "value", l->value), ok);
	jb_need(cJSON_AddStringToObject(o, "node", l->node), ok);
	jb_need(cJSON_AddStringToObject(o, "op_type", l->op), ok);
	jb_put_obj(o, "accumulated", rt_metrics_json(&l->acc), ok);
	jb_put_obj(o, "local", rt_metrics_json(&l->local), ok);
	return o;
}

static int print_json(const struct vargs *a, const struct val_report *r)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	char *text;
	int ok = o != NULL;

	jb_need(cJSON_AddStringToObject(o, "schema", "opmig.validate/1"), &ok);
	jb_need(cJSON_AddStringToObject(o, "reference", a->ref), &ok);
	jb_need(cJSON_AddStringToObject(o, "candidate", a->cand), &ok);
	jb_need(cJSON_AddStringToObject(o, "precision", val_precision_name(r->precision)), &ok);
	jb_need(cJSON_AddNumberToObject(o, "rtol", r->tol.rtol), &ok);
	jb_need(cJSON_AddNumberToObject(o, "atol", r->tol.atol), &ok);
	jb_need(cJSON_AddNumberToObject(o, "samples", (double)r->n_samples), &ok);
	jb_need(cJSON_AddBoolToObject(o, "equivalent", r->equivalent), &ok);
	jb_need(val_time_json(o, r) ? o : NULL, &ok);
	if (r->note[0])
		jb_need(cJSON_AddStringToObject(o, "note", r->note), &ok);
	if (r->inputs_note[0])
		jb_need(cJSON_AddStringToObject(o, "generated_inputs", r->inputs_note), &ok);
	arr = cJSON_AddArrayToObject(o, "outputs");
	jb_need(arr, &ok);
	for (size_t i = 0; i < r->n_outputs; i++) {
		cJSON *x = rt_metrics_json(&r->outputs[i].m);

		jb_need(cJSON_AddStringToObject(x, "reference_name", r->outputs[i].ref_name), &ok);
		jb_need(cJSON_AddStringToObject(x, "candidate_name", r->outputs[i].cand_name), &ok);
		jb_put(arr, x, &ok);
	}
	if (r->layerwise) {
		cJSON *lw = cJSON_AddObjectToObject(o, "layerwise");

		jb_need(lw, &ok);
		jb_need(cJSON_AddNumberToObject(lw, "compared", (double)r->n_layers), &ok);
		jb_need(cJSON_AddNumberToObject(lw, "skipped_order_differs", (double)r->n_unordered), &ok);
		if (r->first_bad >= 0) {
			cJSON *f = json_layer(&r->layers[r->first_bad], &ok);

			jb_need(cJSON_AddStringToObject(f, "error", r->first_bad_local ?
							"local" : "accumulated"), &ok);
			jb_put_obj(lw, "first_divergent", f, &ok);
		} else {
			jb_need(cJSON_AddNullToObject(lw, "first_divergent"), &ok);
		}
		arr = cJSON_AddArrayToObject(lw, "worst");
		jb_need(arr, &ok);
		for (size_t i = 0; i < r->n_top; i++)
			jb_put(arr, json_layer(&r->layers[r->top[i]], &ok), &ok);
	}
	if (!(text = jb_print(o, ok))) {
		cli_error(NULL, "out of memory");
		return CLI_EXIT_INTERNAL;
	}
	puts(text);
	free(text);
	return CLI_EXIT_OK;
}

static void print_text(const struct vargs *a, const struct val_report *r)
{
	char tl[200];

	printf("reference: %s\ncandidate: %s\n", a->ref, a->cand);
	printf("precision %s: rtol %g, atol %g; %zu sample%s\n",
	       val_precision_name(r->precision), r->tol.rtol, r->tol.atol,
	       r->n_samples, r->n_samples == 1 ? "" : "s");
	val_time_describe(r, tl, sizeof(tl));
	if (tl[0])
		printf("%s\n", tl);
	if (r->note[0])
		printf("note: %s\n", r->note);
	if (r->inputs_note[0])
		printf("inputs: %s\n", r->inputs_note);
	printf("%-24s %10s %10s %10s %10s %9s %8s %14s\n", "output", "max abs",
	       "max rel", "mean abs", "rmse", "cosine", "snr dB", "outside tol");
	for (size_t i = 0; i < r->n_outputs; i++) {
		const struct rt_metrics *m = &r->outputs[i].m;
		char bad[48];

		snprintf(bad, sizeof(bad), "%lld/%lld", (long long)m->n_bad, (long long)m->n);
		printf("%-24s %10.3g %10.3g %10.3g %10.3g %9.6f %8.1f %14s\n",
		       r->outputs[i].ref_name, m->max_abs, m->max_rel, m->mean_abs,
		       m->rmse, m->cosine, m->snr_db, bad);
		if (m->nan_got || m->nan_want || m->inf_got || m->inf_want)
			printf("  NaN: candidate %lld, reference %lld; Inf: candidate %lld, reference %lld\n",
			       (long long)m->nan_got, (long long)m->nan_want,
			       (long long)m->inf_got, (long long)m->inf_want);
		if (m->lg.on) {
			char line[320];

			rt_logits_describe(m, line, sizeof(line));
			printf("  %s\n", line);
		}
		if (!m->ok)
			printf("  %s\n", m->why);
	}
	if (r->layerwise) {
		printf("layerwise (sample 0): %zu shared values compared", r->n_layers);
		if (r->n_unordered)
			printf(", %zu skipped (computed in a different order)", r->n_unordered);
		putchar('\n');
		if (r->first_bad >= 0) {
			const struct val_layer *l = &r->layers[r->first_bad];

			printf("first divergent value: '%s' from node '%s' (%s): %s error\n",
			       l->value, l->node, l->op, r->first_bad_local ?
			       "local (the node alone, fed the reference's values, diverges)" :
			       "accumulated (the node alone, fed the reference's values, agrees)");
			printf("  %s\n", l->acc.why);
		} else {
			printf("no intermediate value diverges\n");
		}
		if (r->n_top) {
			printf("worst values:\n  %-24s %-24s %10s %10s %10s %12s\n", "value", "node (op)",
			       "max abs", "max rel", "tol ratio", "local max abs");
			for (size_t i = 0; i < r->n_top; i++) {
				const struct val_layer *l = &r->layers[r->top[i]];
				char node[96];

				snprintf(node, sizeof(node), "%s (%s)", l->node, l->op);
				printf("  %-24s %-24s %10.3g %10.3g %10.3g %12.3g\n", l->value, node,
				       l->acc.max_abs, l->acc.max_rel, l->acc.max_ratio,
				       l->local.max_abs);
			}
		}
	}
	printf("%s\n", r->equivalent ? "equivalent within tolerance" : "NOT equivalent");
}

int cmd_validate(int argc, char **argv)
{
	struct vargs a = { 0 };
	struct ir_model *ref = NULL, *cand = NULL;
	struct val_report r = { 0 };
	struct val_map map;
	char bad[4200];
	struct ir_diag d;
	int code, rc;

	val_map_init(&map);
	a.o.precision = -1;
	if ((code = parse_args(argc, argv, &a)) != CLI_EXIT_OK)
		goto cleanup;
	if ((code = cli_load(a.ref, &ref)) != CLI_EXIT_OK ||
	    (code = cli_load(a.cand, &cand)) != CLI_EXIT_OK)
		goto cleanup;
	ir_diag_init(&d);
	if (a.map && (rc = val_map_load(a.map, &map, &d)) < 0) {
		cli_error(a.map, "%s", d.msg);
		code = cli_exit_code(rc);
		goto cleanup;
	}
	a.o.map = &map;
	if (a.o.have_tol) {
		/* fill the tolerance not given from the precision's default */
		struct rt_cmp_opts def;
		int given = a.o.have_tol;

		val_default_tolerance(a.o.precision >= 0 ? (enum val_precision)a.o.precision :
				      val_guess_precision(cand), &def);
		if (!(given & 2))
			a.o.tol.rtol = def.rtol;
		if (!(given & 1))
			a.o.tol.atol = def.atol;
		a.o.have_tol = 1;
	}
	if ((rc = val_run(ref, cand, &a.o, &r, bad, sizeof(bad), &d)) < 0) {
		cli_error(bad[0] ? bad : NULL, "%s", d.msg);
		code = cli_exit_code(rc);
		goto cleanup;
	}
	if (a.json)
		code = print_json(&a, &r);
	else
		print_text(&a, &r);
	if (code == CLI_EXIT_OK && !r.equivalent)
		code = CLI_EXIT_FINDINGS;
cleanup:
	val_report_release(&r);
	val_map_release(&map);
	ir_model_free(ref);
	ir_model_free(cand);
	free(a.data);
	free(a.inputs);
	free(a.dims);
	free(a.ranges);
	return cli_finish(code);
}
