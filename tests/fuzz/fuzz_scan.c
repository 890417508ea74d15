/* fuzz_scan.c: libFuzzer harness of `opmig scan` end to end: the input is
 * a model file, loaded and verified, scanned against every shipped target
 * (inference, rules checks, findings) and written in every report format. */
#include "ir/ir.h"
#include "oprules/rules.h"
#include "scanner/report.h"
#include "scanner/scan.h"
#include "tests/fuzz/fuzz.h"

static struct rules_db shipped;
static const struct rules_target **targets;
static FILE *sink;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[PATH_MAX + 16];
	struct ir_diag d;

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/oprules", fuzz_top());
	rules_db_init(&shipped);
	ir_diag_init(&d);
	if (rules_load_dir(dir, &shipped, &d) < 0 ||
	    !(targets = calloc(shipped.n_targets, sizeof(*targets))) ||
	    !(sink = fopen("/dev/null", "w"))) {
		fprintf(stderr, "opmig fuzz: %s\n", d.msg);
		abort();
	}
	for (size_t i = 0; i < shipped.n_targets; i++)
		targets[i] = &shipped.targets[i];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ir_load_opts o = { .max_memory = 64u << 20 };
	struct ir_model *m = NULL;
	struct scan_result r;
	struct ir_diag d;
	char path[PATH_MAX];

	if (fuzz_put_file("model.onnx", data, size, path, sizeof(path)) < 0)
		return 0;
	ir_diag_init(&d);
	if (ir_model_load(path, &o, &m, &d) < 0)
		goto cleanup;
	memset(&r, 0, sizeof(r));
	ir_diag_init(&d);
	if (scan_model(m, path, targets, shipped.n_targets, NULL, &r, &d) == 0) {
		for (size_t i = 0; i < scan_n_formats; i++)
			scan_report_write(&r, &scan_formats[i], sink);
	}
	scan_result_release(&r);
cleanup:
	ir_model_free(m);
	return 0;
}
