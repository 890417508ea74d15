/* cmd_quantize.c: `opmig quantize MODEL -o OUT`: options, the report as
 * text or JSON (opmig.quantize/1), and writing OUT only when the accuracy
 * criterion holds (or --force). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ir/ir.h"
#include "oprules/rules.h"
#include "rewriters/quantize.h"

const char cmd_quantize_help[] =
	"usage: opmig quantize MODEL -o OUT [--calibrate DIR] [--validation-data DIR] [--method minmax|percentile|entropy] [--percentile P] [--format qdq|qoperator] [--dynamic] [--per-channel | --per-tensor] [--symmetric] [--activations uint8|int8|uint16|int16] [--weights int8|uint8|int4] [--weight-only int4|int8 [--block-size N] [--accuracy-level L] [--no-accuracy-check]] [--exclude NODE,...] [--exclude-ops OP,...] [--accuracy METRIC>=V] [--no-fallback] [--sensitivity output|local] [--max-fallback N] [--target T] [--rules F] [--dim NAME=V]... [--samples N] [--seed S] [--threads N] [--external-data FILE] [--size-threshold BYTES] [--report FILE] [--json] [--force]\n"
	"\n"
	"Quantize a float MODEL to 8-bit integers (post-training, no retraining):\n"
	"calibrate the activations' ranges in the interpreter, insert\n"
	"QuantizeLinear/DequantizeLinear around the quantizable nodes, compare the\n"
	"result with MODEL and return the most sensitive nodes to float until the\n"
	"accuracy criterion holds; write OUT.  With --weight-only, quantize only\n"
	"the MatMul weights, in blocks (onnxruntime's MatMulNBits).  A decoder's\n"
	"logits must also keep every position's cosine and top-1 token.\n"
	"\n"
	"  -o OUT              the quantized model (written atomically, never over MODEL)\n"
	"  --calibrate DIR     calibration samples: DIR/test_data_set_N/input_M.pb, or\n"
	"                      .npy/.pb files bound positionally, one per input and\n"
	"                      sample (default: seeded random samples, with a warning)\n"
	"  --validation-data DIR\n"
	"                      samples for the accuracy check (default: the\n"
	"                      calibration samples)\n"
	"  --method M          minmax (default), percentile or entropy (KL divergence\n"
	"                      over a 2048-bin histogram)\n"
	"  --percentile P      the percentile method's P (default 99.99)\n"
	"  --format F          qdq (default) or qoperator (QLinearConv, QLinearMatMul)\n"
	"  --dynamic           weights only; activations quantized at run time\n"
	"                      (DynamicQuantizeLinear + MatMulInteger/ConvInteger)\n"
	"  --per-channel       weights per output channel (the default)\n"
	"  --per-tensor        weights with one scale per tensor\n"
	"  --symmetric         activations symmetric (zero point in the middle);\n"
	"                      with --weight-only the weights (no zero points)\n"
	"  --activations T     uint8 (default), int8, uint16 or int16\n"
	"  --weights T         int8 (default), uint8 or int4\n"
	"  --weight-only B     weights only, blockwise, activations in float: every\n"
	"                      MatMul with a constant float 2-D B becomes\n"
	"                      com.microsoft MatMulNBits of int4 or int8 codes\n"
	"                      (asymmetric unless --symmetric); nothing calibrated\n"
	"  --block-size N      weights per block along K, a power of 2 >= 16 (32)\n"
	"  --accuracy-level L  MatMulNBits' accuracy_level, 0 to 4 (0: not written)\n"
	"  --no-accuracy-check with --weight-only: write OUT without running and\n"
	"                      comparing the two models (a 7B decoder's weights are\n"
	"                      then read once, while written)\n"
	"  --exclude LIST      node names kept in float (comma-separated)\n"
	"  --exclude-ops LIST  op types kept in float (comma-separated)\n"
	"  --accuracy C        the criterion every output must meet: cosine>=V,\n"
	"                      snr>=DB, top1>=FRACTION or max-abs<=V\n"
	"                      (default cosine>=0.99)\n"
	"  --no-fallback       keep every quantizable node quantized\n"
	"  --sensitivity S     how the fallback ranks nodes: output (default: the\n"
	"                      criterion with each node alone in float, a run per\n"
	"                      node) or local (its local SNR, layer by layer, one run)\n"
	"  --max-fallback N    return at most N nodes to float\n"
	"  --target T          the target's rules choose the dtypes and which ops\n"
	"                      must be quantized (see 'opmig targets')\n"
	"  --rules F           also load a rules file (its target becomes selectable)\n"
	"  --dim NAME=V        the value of a symbolic dim in the samples (default 1)\n"
	"  --samples N         random samples without --calibrate (default 8)\n"
	"  --seed S            seed of the random samples (default 0)\n"
	"  --threads N         interpreter threads (default: all cores)\n"
	"  --external-data FILE  weights of at least --size-threshold bytes go to\n"
	"                      FILE, relative to OUT's folder (default: OUT.data\n"
	"                      when MODEL's weights are external or pass 2 GiB)\n"
	"  --size-threshold BYTES  smallest weight written externally (1024)\n"
	"  --report FILE       write the report to FILE instead of standard output\n"
	"  --json              the report as JSON (opmig.quantize/1)\n"
	"  --force             write OUT even when the criterion fails\n"
	"  --help              show this help\n"
	"\n"
	"Exit status: 0 quantized, 1 the criterion fails (OUT not written unless\n"
	"--force), 2 usage, 3 bad input, 4 internal error.\n";

/* Options of activation (and int8 weight) quantization, which
 * --weight-only does not take. */
static const struct {
	int c;
	const char *name;
} int8_only[] = {
	{ CLI_OPT_CALIBRATE, "--calibrate" }, { CLI_OPT_METHOD, "--method" },
	{ CLI_OPT_PERCENTILE, "--percentile" }, { CLI_OPT_QFORMAT, "--format" },
	{ CLI_OPT_DYNAMIC, "--dynamic" }, { CLI_OPT_PER_CHANNEL, "--per-channel" },
	{ CLI_OPT_PER_TENSOR, "--per-tensor" }, { CLI_OPT_ACTS, "--activations" },
	{ CLI_OPT_WEIGHTS, "--weights" },
};

struct qargs {
	const char *model, *out, *target, *report;
	const char *int8_opt, *wo_opt;   /* the last option of either kind */
	int weight_only;
	char *rules[8];
	size_t n_rules;
	int json, force;
	struct cli_save save;
	struct qz_opts o;
	struct rt_dim_set *dims;
};

static int parse_args(int argc, char **argv, struct qargs *a)
{
	static const struct option opts[] = {
		CLI_QUANT_OPTIONS,
		{ "format", required_argument, NULL, CLI_OPT_QFORMAT },
		{ "weight-only", required_argument, NULL, CLI_OPT_WEIGHT_ONLY },
		{ "block-size", required_argument, NULL, CLI_OPT_BLOCK_SIZE },
		{ "accuracy-level", required_argument, NULL, CLI_OPT_ACC_LEVEL },
		{ "no-accuracy-check", no_argument, NULL, 'N' },
		{ "target", required_argument, NULL, 'T' },
		{ "rules", required_argument, NULL, 'r' },
		{ "dim", required_argument, NULL, 'D' },
		CLI_RUN_OPTIONS,
		CLI_SAVE_OPTIONS,
		{ "report", required_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ "force", no_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *self = cli_command_find("quantize");
	const struct cli_run_opts run = { &a->o.samples, &a->o.seed, &a->o.threads, 100000 };
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'o': a->out = optarg; break;
		case 'T': a->target = optarg; break;
		case 'R': a->report = optarg; break;
		case 'j': a->json = 1; break;
		case 'F': a->force = 1; break;
		case 'N':
			a->o.no_check = 1;
			a->wo_opt = "--no-accuracy-check";
			break;
		case 'r':
			if (a->n_rules == 8)
				return cli_usage_error(self, "more than 8 --rules files");
			a->rules[a->n_rules++] = optarg;
			break;
		case 'D':
			if ((rc = cli_add_dim(self, &a->dims, &a->o.n_dims, optarg)) != CLI_EXIT_OK)
				return rc;
			a->o.dims = a->dims;
			break;
		case CLI_OPT_EXTERNAL_DATA:
		case CLI_OPT_SIZE_THRESHOLD:
			if ((rc = cli_parse_save_opt(self, c, optarg, &a->save)) != CLI_EXIT_OK)
				return rc;
			break;
		case CLI_OPT_SAMPLES:
		case CLI_OPT_SEED:
		case CLI_OPT_THREADS:
			if ((rc = cli_parse_run_opt(self, c, optarg, &run)) != CLI_EXIT_OK)
				return rc;
			break;
		case '?':
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
		default:
			if ((rc = cli_parse_quant_opt(self, c, optarg, &a->o)) != CLI_EXIT_OK)
				return rc;
			for (size_t i = 0; i < sizeof(int8_only) / sizeof(int8_only[0]); i++)
				if (int8_only[i].c == c)
					a->int8_opt = int8_only[i].name;
			a->weight_only |= c == CLI_OPT_WEIGHT_ONLY;
			if (c == CLI_OPT_BLOCK_SIZE || c == CLI_OPT_ACC_LEVEL)
				a->wo_opt = c == CLI_OPT_BLOCK_SIZE ? "--block-size" : "--accuracy-level";
		}
	}
	if (a->weight_only && a->int8_opt)
		return cli_usage_error(self, "--weight-only quantizes no activations: %s does not "
				       "apply%s", a->int8_opt, strcmp(a->int8_opt, "--calibrate") ? "" :
				       " (--validation-data gives the accuracy check's samples)");
	if (!a->weight_only && a->wo_opt)
		return cli_usage_error(self, "%s needs --weight-only", a->wo_opt);
	if (argc - optind != 1)
		return cli_usage_error(self, "quantize needs one MODEL");
	a->model = argv[optind];
	if (!a->out)
		return cli_usage_error(self, "quantize needs -o OUT");
	if (a->o.method != QZ_MINMAX && a->o.format == QZ_DYNAMIC)
		return cli_usage_error(self, "--dynamic calibrates nothing: --method does not apply");
	return 0;
}

/* ---- the text report -------------------------------------------------- */

static void human_bytes(double b, char *buf, size_t size)
{
	if (b >= 1 << 20)
		snprintf(buf, size, "%.1f MiB", b / (1 << 20));
	else if (b >= 1 << 10)
		snprintf(buf, size, "%.1f KiB", b / (1 << 10));
	else
		snprintf(buf, size, "%.0f B", b);
}

static void text_report(FILE *f, const struct qargs *a, const struct qz_report *r, int written)
{
	char b1[32], b2[32];

	fprintf(f, "quantize %s: %s", a->model, r->format);
	if (r->n_calib)
		fprintf(f, ", %s calibration on %zu %ssample%s", r->method, r->n_calib,
			r->random_calib ? "seeded random " : "", r->n_calib == 1 ? "" : "s");
	fprintf(f, "\n");
	if (r->percentile > 0)
		fprintf(f, "percentile: %g\n", r->percentile);
	if (r->nbits)
		fprintf(f, "types: float activations, %s weights in blocks of %lld along K "
			"(%s), accuracy_level %d\n", ir_dtype_name(r->weight_dtype),
			(long long)r->block_size, r->symmetric ? "symmetric" :
			"asymmetric, zero points", r->accuracy_level);
	else
		fprintf(f, "types: %s activations (%s), %s weights %s\n",
			ir_dtype_name(r->act_dtype), r->symmetric ? "symmetric" : "asymmetric",
			ir_dtype_name(r->weight_dtype), r->per_channel ? "per channel" : "per tensor");
	if (r->unchecked)
		fprintf(f, "criterion %s: not checked (--no-accuracy-check)\n", r->criterion);
	else
		fprintf(f, "criterion %s on %zu sample%s: %s\n", r->criterion, r->n_eval,
			r->n_eval == 1 ? "" : "s", r->met ? "met" : "NOT met");
	for (size_t i = 0; i < r->n_outputs; i++) {
		const struct qz_output *o = &r->outputs[i];

		fprintf(f, "  %-24s cosine %.6f, snr %.1f dB, max abs %.3g", o->name, o->m.cosine,
			o->m.snr_db, o->m.max_abs);
		if (!isnan(o->top1))
			fprintf(f, ", top1 %.4f", o->top1);
		fprintf(f, "%s\n", o->ok ? "" : " (fails)");
		if (o->m.lg.on && o->m.lg.kv)
			fprintf(f, "    by row: min cosine %.6f at row %lld (>= %g required)\n",
				o->m.lg.min_cosine, (long long)o->m.lg.worst_position,
				o->m.lg.min_cosine_required);
		else if (o->m.lg.on)
			fprintf(f, "    by position: min cosine %.6f at position %lld (>= %g "
				"required), top-1 %lld/%lld, top-5 overlap %.3f\n",
				o->m.lg.min_cosine, (long long)o->m.lg.worst_position,
				o->m.lg.min_cosine_required, (long long)o->m.lg.top1_agree,
				(long long)o->m.lg.positions, o->m.lg.top5_overlap);
	}
	fprintf(f, "nodes: %zu quantized, %zu in float\n", r->n_quantized, r->n_float);
	if (r->n_ranked) {
		fprintf(f, "sensitivity (%s, most sensitive first):\n",
			strcmp(r->sensitivity, "local") ? !isnan(r->nodes[r->ranking[0]].flips_alone) ?
			"the top-1 flips with the node alone quantized, then the criterion with it "
			"alone in float" : "the criterion with the node alone in float" : "local SNR");
		for (size_t i = 0; i < r->n_ranked && i < 10; i++) {
			const struct qz_node *n = &r->nodes[r->ranking[i]];

			if (isnan(n->if_float))
				fprintf(f, "  %zu. %s (%s): local SNR %.1f dB\n", i + 1, n->name, n->op,
					n->sensitivity);
			else if (!isnan(n->flips_alone))
				fprintf(f, "  %zu. %s (%s): %.0f top-1 flip%s alone quantized, %s "
					"%.6g alone in float, local SNR %.1f dB\n", i + 1, n->name,
					n->op, n->flips_alone, n->flips_alone == 1 ? "" : "s",
					qz_metric_name(r->metric), n->if_float, n->sensitivity);
			else
				fprintf(f, "  %zu. %s (%s): %s %.6g alone in float, local SNR %.1f dB\n",
					i + 1, n->name, n->op, qz_metric_name(r->metric), n->if_float,
					n->sensitivity);
		}
		if (r->n_ranked > 10)
			fprintf(f, "  ... %zu more (see --json)\n", r->n_ranked - 10);
	}
	if (r->n_steps) {
		fprintf(f, "fallback: %zu node%s returned to float (%s of the worst output %.6g "
			"before)\n", r->n_steps, r->n_steps == 1 ? "" : "s", qz_metric_name(r->metric),
			r->worst_first);
		for (size_t i = 0; i < r->n_steps; i++)
			fprintf(f, "  %s (%s): %s %.6g -> %.6g\n", r->nodes[r->steps[i].node].name,
				r->nodes[r->steps[i].node].op, qz_metric_name(r->metric),
				r->steps[i].worst_before, r->steps[i].worst_after);
	}
	for (size_t i = 0; i < r->n_nodes; i++)
		if (r->nodes[i].state == QZ_NODE_FLOAT)
			fprintf(f, "float: %s (%s): %s\n", r->nodes[i].name, r->nodes[i].op,
				r->nodes[i].why ? r->nodes[i].why : "");
	fprintf(f, "tensors: %zu\n", r->n_tensors);
	for (size_t i = 0; i < r->n_tensors; i++) {
		const struct qz_tensor *t = &r->tensors[i];

		if (isnan(t->scale_min))
			fprintf(f, "  %-10s %s %s per channel (axis %d, %zu): not computed (OUT not "
				"written)\n", t->kind, t->name, ir_dtype_name(t->dtype), t->axis, t->n);
		else if (t->n > 1)
			fprintf(f, "  %-10s %s %s per channel (axis %d, %zu): scale %.4g..%.4g, range "
				"[%.4g, %.4g]\n", t->kind, t->name, ir_dtype_name(t->dtype), t->axis,
				t->n, t->scale_min, t->scale_max, t->lo, t->hi);
		else
			fprintf(f, "  %-10s %s %s: scale %.6g, zero point %.0f, range [%.4g, %.4g]%s\n",
				t->kind, t->name, ir_dtype_name(t->dtype), t->scale, t->zero_point,
				t->lo, t->hi, t->shared ? " (shared)" : "");
	}
	human_bytes((double)r->bytes_before, b1, sizeof(b1));
	human_bytes((double)r->bytes_after, b2, sizeof(b2));
	fprintf(f, "size: weights %s -> %s\n", b1, b2);
	for (size_t i = 0; i < r->n_notes; i++)
		fprintf(f, "note: %s\n", r->notes[i]);
	if (written)
		fprintf(f, "result: %s written%s\n", a->out, r->met ? "" : " (--force) although the "
			"criterion fails");
	else
		fprintf(f, "result: NOT written: the criterion fails (use --force to write it "
			"anyway)\n");
}

static int emit_report(const struct qargs *a, const struct qz_report *r, int written)
{
	struct cli_out o;
	FILE *f = cli_out_open(&o, a->report);
	int rc = CLI_EXIT_OK;

	if (!f)
		return CLI_EXIT_INTERNAL;
	if (a->json) {
		char *text = qz_report_json(r, a->model, a->out, written);

		if (!text)
			rc = CLI_EXIT_INTERNAL;
		else
			fprintf(f, "%s\n", text);
		free(text);
	} else {
		text_report(f, a, r, written);
	}
	return cli_out_close(&o, rc);
}

int cmd_quantize(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("quantize");
	struct qargs a = { 0 };
	struct rules_db base, extra;
	struct ir_model *m = NULL;
	struct qz_report r = { 0 };
	struct ir_diag d;
	int code, rc, written = 0;

	rules_db_init(&base);
	rules_db_init(&extra);
	a.o.prepare = 1;
	if ((code = parse_args(argc, argv, &a)) != CLI_EXIT_OK)
		goto cleanup;
	if (a.target || a.n_rules) {
		if ((code = cli_load_rules_with(a.rules, a.n_rules, &base, &extra)) != CLI_EXIT_OK)
			goto cleanup;
		if (a.target && !(a.o.target = cli_find_target(&base, &extra, a.target))) {
			code = cli_usage_error(self, "no target '%s' (see 'opmig targets')", a.target);
			goto cleanup;
		}
	}
	if ((code = cli_load(a.model, &m)) != CLI_EXIT_OK ||
	    (code = cli_save_check(m, a.out, &a.save)) != CLI_EXIT_OK)
		goto cleanup;
	a.o.source = a.model;   /* m is the file as loaded */
	if (!a.o.calibrate && a.o.format != QZ_WEIGHT_ONLY)
		cli_warn(a.model, "no --calibrate: scales come from seeded random samples and are "
			 "not representative of real data");
	ir_diag_init(&d);
	if ((rc = qz_run(m, a.model, &a.o, &r, &d)) < 0) {
		cli_error(a.model, "%s", d.msg);
		code = rc == IR_EUSAGE ? CLI_EXIT_USAGE : cli_exit_code(rc);
		goto cleanup;
	}
	code = r.met ? CLI_EXIT_OK : CLI_EXIT_FINDINGS;
	if (r.met || a.force) {
		int sc = cli_save_model(m, a.out, &a.save);

		if (sc != CLI_EXIT_OK) {
			code = sc;
			goto cleanup;
		}
		written = 1;
	}
	if ((rc = emit_report(&a, &r, written)) != CLI_EXIT_OK)
		code = rc;
cleanup:
	qz_report_release(&r);
	ir_model_free(m);
	rules_db_release(&base);
	rules_db_release(&extra);
	free(a.dims);
	return cli_finish(code);
}
