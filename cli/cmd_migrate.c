/* cmd_migrate.c: `opmig migrate MODEL --target T -o OUT`: options, the
 * pass catalogue (--list-passes), loading the model twice (one copy is
 * rewritten, the other is validation's reference), the report as text or
 * JSON (opmig.migrate/1), and writing OUT and the name map only when the
 * migration succeeded (or --force). */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ir/ir.h"
#include "oprules/rules.h"
#include "probe/probe.h"
#include "rewriters/migrate.h"
#include "rewriters/quantize.h"

const char cmd_migrate_help[] =
	"usage: opmig migrate MODEL [--target T] -o OUT [--rules F] [--layout nchw|nhwc] [--batch N | --fit-memory] [--dim NAME=V]... [--input-value NAME=VALUE|FILE]... [--opset N] [--precision fp32|fp16|int8|int4] [--fp16-io] [QUANTIZE OPTIONS] [--weight-only int4|int8] [--block-size N] [--accuracy-level L] [--no-accuracy-check] [--passes LIST] [--keep-interface] [--dry-run] [--no-validate] [--data DIR] [--samples N] [--seed S] [--threads N] [--time] [--external-data FILE] [--size-threshold BYTES] [--map FILE] [--report FILE] [--format text|json] [--verify-with CMD] [--force]\n"
	"       opmig migrate --list-passes\n"
	"\n"
	"Rewrite MODEL so that TARGET can run it, check numerically that it still\n"
	"computes the same function, and write it to OUT.\n"
	"\n"
	"  --target T          the target chip (see 'opmig targets'; default generic-npu)\n"
	"  -o OUT              the migrated model (written atomically, never over MODEL)\n"
	"  --rules F           also load a rules file (its target becomes selectable)\n"
	"  --layout L          nchw (keep) or nhwc (convert 4-D conv chains)\n"
	"  --batch N           make the batch dim static N\n"
	"  --fit-memory        make it the largest batch that fits the target's\n"
	"                      device memory (estimated: weights + activations)\n"
	"  --dim NAME=V        make a symbolic dim static (on a target that takes\n"
	"                      static shapes only, dims left open become 1)\n"
	"  --input-value NAME=VALUE|FILE\n"
	"                      bind a graph input to a constant (numbers \"16000\",\n"
	"                      \"1,2,3\", or a .npy/.pb file): it leaves the interface\n"
	"                      and what depends on it folds\n"
	"  --opset N           convert to this default-domain opset (default: the\n"
	"                      one of the target's range where most nodes are legal)\n"
	"  --precision P       fp32, fp16, int8 (weights and activations) or int4\n"
	"                      (MatMul weights only, as opmig quantize --weight-only\n"
	"                      int4: MatMulNBits where the target declares it, else\n"
	"                      blocked DequantizeLinear-21 of int4 codes + MatMul,\n"
	"                      symmetric where the target wants zero point 0, else\n"
	"                      refused); default: fp16 where the target runs more\n"
	"                      nodes in it, else fp32\n"
	"  QUANTIZE OPTIONS    with int8 or int4, those of opmig quantize (--calibrate\n"
	"                      DIR, --method, --accuracy, ...; --quant-format\n"
	"                      qdq|qoperator for its --format; int4: --symmetric,\n"
	"                      --accuracy, --exclude, --no-fallback, ...): see\n"
	"                      opmig-quantize(1)\n"
	"  --weight-only B     int4 or int8: the weights only, as opmig quantize\n"
	"                      --weight-only B (int4: as --precision int4; int8:\n"
	"                      8-bit codes the same way, activations float)\n"
	"  --block-size N      int4, int8 weight-only: weights in blocks of N along\n"
	"                      K (default 32)\n"
	"  --accuracy-level L  int4, int8 weight-only: MatMulNBits' accuracy_level\n"
	"                      (0 to 4)\n"
	"  --no-accuracy-check int4, int8 weight-only: quantize every MatMul without\n"
	"                      the quantization's accuracy check and fallback\n"
	"                      (validation still runs unless --no-validate)\n"
	"  --fp16-io           with fp16, the inputs and outputs too\n"
	"  --passes LIST       only these passes (comma-separated) besides\n"
	"                      canonicalization; see --list-passes\n"
	"  --keep-interface    refuse a result whose inputs or outputs changed\n"
	"                      name, element type or rank\n"
	"  --dry-run           show the plan and the coverage it reaches; write nothing\n"
	"  --no-validate       skip the numerical comparison with MODEL; with int4\n"
	"                      or int8 weight-only, the quantization's accuracy\n"
	"                      check too (nothing runs: the weights are read once,\n"
	"                      while OUT is written)\n"
	"  --data DIR          validate on these input sets (DIR/test_data_set_N/\n"
	"                      input_M.pb, or DIR/input_M.pb); default: the sets\n"
	"                      next to MODEL, else seeded random inputs\n"
	"  --samples N         validation samples (default 1)\n"
	"  --seed S            seed of the validation inputs (default 0)\n"
	"  --threads N         interpreter threads (default: all cores)\n"
	"  --time              report the validation's time per run of each model\n"
	"  --map FILE          write the name map between MODEL and OUT (for\n"
	"                      opmig validate --map)\n"
	"  --external-data FILE  weights of at least --size-threshold bytes go to\n"
	"                      FILE, relative to OUT's folder (default: OUT.data\n"
	"                      when MODEL's weights are external or pass 2 GiB)\n"
	"  --size-threshold BYTES  smallest weight written externally (1024)\n"
	"  --report FILE       write the report to FILE instead of standard output\n"
	"  --format F          text (default) or json (opmig.migrate/1)\n"
	"  --verify-with CMD   after validation, run OUT on a real runtime: CMD as\n"
	"                      in opmig-probe(1), 'CMD {model} {inputs} {outdir}';\n"
	"                      its outputs must equal the interpreter's\n"
	"  --force             write OUT even when blockers remain or validation fails\n"
	"                      (never a model that fails the strict schema check)\n"
	"  --list-passes       print the pass catalogue and exit\n"
	"  --help              show this help\n"
	"\n"
	"Exit status: 0 migrated, 1 blockers remain, the outputs differ or the\n"
	"runtime rejects or differs (OUT not written unless --force) or the\n"
	"migrated model is invalid (never written), 2 usage, 3 bad input,\n"
	"4 internal error.\n";

struct margs {
	const char *model, *out, *target, *report, *map, *verify_with;
	struct probe_verify verify;
	char *rules[8];
	size_t n_rules;
	int json, dry_run, force, list, quant_opts;
	const char *wo_opt;            /* --block-size, --accuracy-level or
					* --no-accuracy-check given */
	int wo_bits;                   /* --weight-only int4 (4) or int8 (8) */
	struct cli_save save;
	struct mg_opts o;
	struct qz_opts qo;
	struct rt_dim_set *dims;
	struct mg_binding *bindings;
};

static int add_binding(const struct cli_command *self, struct margs *a, char *arg)
{
	char *eq = strchr(arg, '=');
	struct mg_binding *q;

	if (!eq || eq == arg || !eq[1])
		return cli_usage_error(self, "--input-value wants NAME=VALUE or NAME=FILE, not '%s'",
				       arg);
	if (!(q = realloc(a->bindings, (a->o.n_bindings + 1) * sizeof(*q))))
		return CLI_EXIT_INTERNAL;
	a->bindings = q;
	*eq = 0;    /* argv's own storage: the name ends there */
	q[a->o.n_bindings].name = arg;
	q[a->o.n_bindings].value = eq + 1;
	a->o.n_bindings++;
	a->o.bindings = a->bindings;
	return CLI_EXIT_OK;
}

static int parse_args(int argc, char **argv, struct margs *a)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 'T' },
		{ "rules", required_argument, NULL, 'r' },
		{ "layout", required_argument, NULL, 'L' },
		{ "batch", required_argument, NULL, 'b' },
		{ "fit-memory", no_argument, NULL, 'M' },
		{ "dim", required_argument, NULL, 'D' },
		{ "input-value", required_argument, NULL, 'V' },
		{ "opset", required_argument, NULL, 'O' },
		{ "keep-interface", no_argument, NULL, 'K' },
		{ "data", required_argument, NULL, 'X' },
		{ "precision", required_argument, NULL, 'p' },
		{ "fp16-io", no_argument, NULL, 'I' },
		{ "passes", required_argument, NULL, 'P' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "no-validate", no_argument, NULL, 'N' },
		{ "time", no_argument, NULL, 'Z' },
		CLI_RUN_OPTIONS,
		CLI_SAVE_OPTIONS,
		{ "map", required_argument, NULL, 'm' },
		{ "report", required_argument, NULL, 'R' },
		{ "format", required_argument, NULL, 'f' },
		{ "force", no_argument, NULL, 'F' },
		{ "verify-with", required_argument, NULL, 'W' },
		{ "list-passes", no_argument, NULL, 'l' },
		CLI_QUANT_OPTIONS,
		{ "quant-format", required_argument, NULL, CLI_OPT_QFORMAT },
		{ "block-size", required_argument, NULL, CLI_OPT_BLOCK_SIZE },
		{ "accuracy-level", required_argument, NULL, CLI_OPT_ACC_LEVEL },
		{ "weight-only", required_argument, NULL, CLI_OPT_WEIGHT_ONLY },
		{ "no-accuracy-check", no_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *self = cli_command_find("migrate");
	const struct cli_run_opts run = { &a->o.samples, &a->o.seed, &a->o.threads, 10000 };
	long long v;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'T': a->target = optarg; break;
		case 'o': a->out = optarg; break;
		case 'R': a->report = optarg; break;
		case 'm': a->map = optarg; break;
		case 'P': a->o.passes = optarg; break;
		case 'n': a->dry_run = 1; break;
		case 'N': a->o.validate = 0; break;
		case 'Z': a->o.time = 1; break;
		case 'A':
			a->qo.no_check = 1;
			a->wo_opt = "--no-accuracy-check";
			break;
		case 'F': a->force = 1; break;
		case 'I': a->o.fp16_io = 1; break;
		case 'M': a->o.fit_memory = 1; break;
		case 'l': a->list = 1; break;
		case 'r':
			if (a->n_rules == 8)
				return cli_usage_error(self, "more than 8 --rules files");
			a->rules[a->n_rules++] = optarg;
			break;
		case 'L':
			if (strcmp(optarg, "nchw") && strcmp(optarg, "nhwc"))
				return cli_usage_error(self, "--layout is nchw or nhwc, not '%s'", optarg);
			a->o.layout = optarg;
			break;
		case 'p':
			if (strcmp(optarg, "fp32") && strcmp(optarg, "fp16") && strcmp(optarg, "int8") &&
			    strcmp(optarg, "int4"))
				return cli_usage_error(self, "--precision is fp32, fp16, int8 or int4, "
						       "not '%s'", optarg);
			a->o.precision = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return cli_usage_error(self, "--format is text or json, not '%s'", optarg);
			a->json = !strcmp(optarg, "json");
			break;
		case 'b':
			if (cli_parse_count(optarg, &v) < 0 || v < 1)
				return cli_usage_error(self, "--batch wants a count >= 1, not '%s'", optarg);
			a->o.batch = v;
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
		case 'D':
			if ((rc = cli_add_dim(self, &a->dims, &a->o.n_dims, optarg)) != CLI_EXIT_OK)
				return rc;
			a->o.dims = a->dims;
			break;
		case 'V':
			if ((rc = add_binding(self, a, optarg)) != CLI_EXIT_OK)
				return rc;
			break;
		case 'O':
			if (cli_parse_count(optarg, &v) < 0 || v < 1 || v > 1000)
				return cli_usage_error(self, "--opset wants an opset version, not '%s'",
						       optarg);
			a->o.opset = v;
			break;
		case 'K': a->o.keep_interface = 1; break;
		case 'X': a->o.data = optarg; break;
		case 'W': {
			char why[300];

			if (!probe_template_ok(optarg, why, sizeof(why)))
				return cli_usage_error(self, "--verify-with: %s", why);
			a->verify_with = optarg;
			break;
		}
		case '?':
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
		default:
			if (c >= CLI_OPT_CALIBRATE && c <= CLI_OPT_ACC_LEVEL) {
				if ((rc = cli_parse_quant_opt(self, c, optarg, &a->qo)) != CLI_EXIT_OK)
					return rc;
				if (c == CLI_OPT_WEIGHT_ONLY) {
					a->wo_bits = a->qo.nbits;
					break;
				}
				a->quant_opts = 1;
				if (c == CLI_OPT_BLOCK_SIZE || c == CLI_OPT_ACC_LEVEL)
					a->wo_opt = c == CLI_OPT_BLOCK_SIZE ? "--block-size" :
						    "--accuracy-level";
				break;
			}
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (a->list)
		return argc - optind ? cli_usage_error(self, "--list-passes takes no MODEL") : 0;
	if (argc - optind != 1)
		return cli_usage_error(self, "migrate needs one MODEL");
	a->model = argv[optind];
	if (!a->target)
		a->target = "generic-npu";    /* the default target, as for scan */
	if (!a->out && !a->dry_run)
		return cli_usage_error(self, "migrate needs -o OUT (or --dry-run)");
	if (a->o.fit_memory && a->o.batch)
		return cli_usage_error(self, "--batch and --fit-memory exclude each other");
	if (a->o.fp16_io && (!a->o.precision || strcmp(a->o.precision, "fp16")))
		return cli_usage_error(self, "--fp16-io needs --precision fp16");
	/* --weight-only int4|int8 (quantize's option): the precision, weights
	 * only; with --precision, the same bits */
	if (a->wo_bits && a->o.precision &&
	    strcmp(a->o.precision, a->wo_bits == 4 ? "int4" : "int8"))
		return cli_usage_error(self, "--weight-only int%d contradicts --precision %s",
				       a->wo_bits, a->o.precision);
	if (a->wo_bits && !a->o.precision)
		a->o.precision = a->wo_bits == 4 ? "int4" : "int8";
	if (a->quant_opts && (!a->o.precision || (strcmp(a->o.precision, "int8") &&
						 strcmp(a->o.precision, "int4"))))
		return cli_usage_error(self, "quantization options need --precision int8 or int4");
	if (a->wo_opt && (!a->o.precision || (strcmp(a->o.precision, "int4") && a->wo_bits != 8)))
		return cli_usage_error(self, "%s needs --precision int4 or --weight-only int8",
				       a->wo_opt);
	if (a->o.precision && (!strcmp(a->o.precision, "int4") || a->wo_bits) &&
	    (a->qo.format == QZ_DYNAMIC || a->qo.method || a->qo.percentile > 0 ||
	     a->qo.act_dtype || a->qo.weight_dtype))
		return cli_usage_error(self, "--precision %s quantizes weights only: --dynamic, "
				       "--method, --percentile, --activations and --weights are "
				       "int8's", a->wo_bits == 8 ? "int8 --weight-only int8" : "int4");
	a->qo.samples = a->o.samples > 1 ? a->o.samples : 0;
	a->qo.seed = a->o.seed;
	a->qo.threads = a->o.threads;
	a->o.quant = &a->qo;
	return 0;
}

static int list_passes(void)
{
	for (size_t i = 0; i < rw_n_passes; i++) {
		const struct rw_pass *p = rw_passes[i];

		printf("%-24s %-12s %s\n", p->name, rw_kind_name(p->kind), p->summary);
		if (p->matches) {
			fputs("    matches:", stdout);
			for (const char *const *m = p->matches; *m; m++)
				printf(" %s", *m);
			putchar('\n');
		}
		for (size_t v = 0; v < p->n_variants; v++) {
			printf("    variant %s emits:", p->variants[v].name);
			for (const char *const *e = p->variants[v].emits; e && *e; e++)
				printf(" %s", *e);
			putchar('\n');
		}
	}
	return cli_finish(CLI_EXIT_OK);
}

/* ---- reports --------------------------------------------------------- */

static void text_counts(FILE *f, const char *what, const struct scan_counts *c)
{
	fprintf(f, "%s: %zu/%zu nodes supported, %zu limited, %zu rewritable, %zu blocked\n",
		what, c->supported, c->nodes, c->limited, c->rewritable, c->blocked);
}

static void text_report(FILE *f, const struct margs *a, const struct mg_report *r,
			int written)
{
	char chain[1024];

	fprintf(f, "migrate %s for %s%s\n", a->model, r->target, a->dry_run ? " (dry run)" : "");
	text_counts(f, "before", &r->before);
	text_counts(f, "after", &r->after);
	fprintf(f, "rewrites: %zu\n", r->n_rewrites);
	for (size_t i = 0; i < r->n_rewrites; i++) {
		const struct rw_log_entry *e = &r->rewrites[i];

		if (!*e->op) {          /* a graph pass */
			fprintf(f, "  %s: %zu change%s\n", e->pass, e->n_emitted,
				e->n_emitted == 1 ? "" : "s");
			continue;
		}
		if (e->parent >= 0)     /* shown in its root's chain */
			continue;
		fprintf(f, "  %s%s%s%s: node '%s' (%s) -> %zu node%s\n", e->pass,
			e->variant ? " (" : "", e->variant ? e->variant : "",
			e->variant ? ")" : "", e->node, e->op, e->n_emitted,
			e->n_emitted == 1 ? "" : "s");
		rw_log_chain(r->rewrites, r->n_rewrites, i, chain, sizeof(chain));
		if (*chain)
			fprintf(f, "    chain: %s\n", chain);
	}
	if (r->n_blockers) {
		fprintf(f, "residual blockers: %zu\n", r->n_blockers);
		for (size_t i = 0; i < r->n_blockers; i++)
			fprintf(f, "  node '%s' (%s): %s\n", r->blockers[i].node,
				r->blockers[i].op, r->blockers[i].why);
	}
	for (size_t i = 0; i < r->n_findings; i++)
		fprintf(f, "model: %s\n", r->findings[i]);
	for (size_t i = 0; i < r->n_iface; i++)
		fprintf(f, "interface: %s '%s' %s: %s -> %s\n", r->iface[i].input ? "input" : "output",
			r->iface[i].name, r->iface[i].what, r->iface[i].from, r->iface[i].to);
	for (size_t i = 0; i < r->n_notes; i++)
		fprintf(f, "note: %s\n", r->notes[i]);
	if (r->validated && r->val_label[0]) {
		/* weight-only: judged by the quantization's criterion */
		fprintf(f, "validation (%s, %s, %zu sample%s): %s\n", r->val_label,
			r->val_criterion, r->val.n_samples, r->val.n_samples == 1 ? "" : "s",
			r->val.equivalent ? "equivalent" : "NOT equivalent");
	} else if (r->validated) {
		fprintf(f, "validation (%s, rtol %g, atol %g, %zu sample%s): %s\n",
			val_precision_name(r->val.precision), r->val.tol.rtol, r->val.tol.atol,
			r->val.n_samples, r->val.n_samples == 1 ? "" : "s",
			r->val.equivalent ? "equivalent" : "NOT equivalent");
	}
	if (r->validated) {
		char tl[200];

		val_time_describe(&r->val, tl, sizeof(tl));
		if (tl[0])
			fprintf(f, "  %s\n", tl);
		for (size_t i = 0; i < r->val.n_outputs; i++) {
			const struct rt_metrics *m = &r->val.outputs[i].m;

			fprintf(f, "  %-24s max abs %.3g, max rel %.3g, cosine %.6f%s%s\n",
				r->val.outputs[i].ref_name, m->max_abs, m->max_rel, m->cosine,
				m->ok ? "" : ": ", m->ok ? "" : m->why);
			if (m->lg.on) {
				char line[320];

				rt_logits_describe(m, line, sizeof(line));
				fprintf(f, "    %s\n", line);
			}
		}
		if (r->val.inputs_note[0])
			fprintf(f, "  inputs: %s\n", r->val.inputs_note);
	} else if (r->val_error[0]) {
		fprintf(f, "validation: could not run: %s\n", r->val_error);
	} else {
		fprintf(f, "validation: skipped\n");
	}
	if (a->verify.command)
		probe_verify_text(&a->verify, f);
	if (a->dry_run)
		fprintf(f, "result: dry run, nothing written%s%s\n", r->ok ? "" : "; ",
			r->ok ? "" : r->why);
	else if (written)
		fprintf(f, "result: %s written%s%s\n", a->out, r->ok ? "" : " (--force) although ",
			r->ok ? "" : r->why);
	else if (r->invalid)
		fprintf(f, "result: NOT written: %s\n", r->why);
	else
		fprintf(f, "result: NOT written: %s (use --force to write it anyway)\n", r->why);
}

static int emit_report(const struct margs *a, const struct mg_report *r, int written)
{
	struct cli_out o;
	FILE *f = cli_out_open(&o, a->report);
	int rc = CLI_EXIT_OK;

	if (!f)
		return CLI_EXIT_INTERNAL;
	if (a->json) {
		char *text = mg_report_json(r, a->model, a->out, a->dry_run, written);

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

static int save(const struct margs *a, struct ir_model *m, const struct mg_report *r)
{
	struct ir_diag d;
	int rc;

	if ((rc = cli_save_model(m, a->out, &a->save)) != CLI_EXIT_OK)
		return rc;
	ir_diag_init(&d);
	if (a->map && (rc = val_map_save(&r->map, a->map, &d)) < 0) {
		cli_error(a->map, "%s", d.msg);
		return cli_exit_code(rc);
	}
	return CLI_EXIT_OK;
}

/* --verify-with: the migrated model on the real runtime; a rejection or
 * a difference makes the migration fail (OUT then needs --force). */
static int runtime_check(struct margs *a, struct ir_model *m, struct mg_report *r)
{
	struct probe_verify_opts vo;
	struct ir_diag d;
	int rc;

	memset(&vo, 0, sizeof(vo));
	vo.command = a->verify_with;
	vo.samples = a->o.samples;
	vo.seed = a->o.seed;
	vo.threads = a->o.threads;
	ir_diag_init(&d);
	if ((rc = probe_verify_report(m, &vo, &a->verify, r, &d)) < 0) {
		cli_error(a->model, "runtime check: %s", d.msg);
		return cli_exit_code(rc);
	}
	return CLI_EXIT_OK;
}

int cmd_migrate(int argc, char **argv)
{
	const struct cli_command *self = cli_command_find("migrate");
	struct margs a = { 0 };
	struct rules_db base, extra;
	struct ir_model *m = NULL, *orig = NULL;
	struct mg_report r = { 0 };
	struct ir_diag d;
	int code, rc, written = 0;

	rules_db_init(&base);
	rules_db_init(&extra);
	a.o.validate = 1;
	if ((code = parse_args(argc, argv, &a)) != CLI_EXIT_OK)
		goto cleanup;
	if (a.list) {
		code = list_passes();
		goto cleanup;
	}
	if ((code = cli_load_rules_with(a.rules, a.n_rules, &base, &extra)) != CLI_EXIT_OK)
		goto cleanup;
	if (!(a.o.target = cli_find_target(&base, &extra, a.target))) {
		code = cli_usage_error(self, "no target '%s' (see 'opmig targets')", a.target);
		goto cleanup;
	}
	if ((code = cli_load(a.model, &m)) != CLI_EXIT_OK)
		goto cleanup;
	if (!a.dry_run && a.out && (code = cli_save_check(m, a.out, &a.save)) != CLI_EXIT_OK)
		goto cleanup;
	if (a.o.validate && !a.dry_run && (code = cli_load_quiet(a.model, &orig)) != CLI_EXIT_OK)
		goto cleanup;
	if (a.dry_run)
		a.o.validate = 0;
	a.o.dry_run = a.dry_run;
	ir_diag_init(&d);
	if ((rc = mg_run(m, orig, a.model, &a.o, &r, &d)) < 0) {
		cli_error(a.model, "%s", d.msg);
		code = cli_exit_code(rc);
		goto cleanup;
	}
	if (a.verify_with && !a.dry_run && (r.ok || a.force) &&
	    (code = runtime_check(&a, m, &r)) != CLI_EXIT_OK)
		goto cleanup;
	code = r.ok ? CLI_EXIT_OK : CLI_EXIT_FINDINGS;
	if (!a.dry_run && (r.ok || (a.force && !r.invalid))) {
		int sc = save(&a, m, &r);

		if (sc != CLI_EXIT_OK) {
			code = sc;
			goto cleanup;
		}
		written = 1;
	}
	if ((rc = emit_report(&a, &r, written)) != CLI_EXIT_OK)
		code = rc;
cleanup:
	mg_report_release(&r);
	probe_verify_release(&a.verify);
	ir_model_free(m);
	ir_model_free(orig);
	rules_db_release(&base);
	rules_db_release(&extra);
	free(a.dims);
	free(a.bindings);
	return cli_finish(code);
}
