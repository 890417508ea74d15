/* fuzz_model.c: libFuzzer harness of the ONNX model loader: the input is a
 * model file, loaded (parse, convert, bind external data, verify) from a
 * scratch folder that also holds external data files and symlinks, then
 * shape inference, the summary, and every tensor's payload (mapping
 * external data, decoding typed fields). */
#include "ir/infer.h"
#include "ir/ir.h"
#include "tests/fuzz/fuzz.h"

static void put(const char *name, const char *text)
{
	char path[PATH_MAX];

	if (fuzz_put_file(name, (const uint8_t *)text, strlen(text), path,
			  sizeof(path)) < 0)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[PATH_MAX];

	(void)argc;
	(void)argv;
	/* External data the inputs may name: in the folder, in a subfolder,
	 * a symlink inside, a symlink leading out, a folder. */
	put("weights.bin", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	snprintf(path, sizeof(path), "%s/sub", fuzz_scratch());
	mkdir(path, 0700);
	put("sub/w.bin", "\x01\x02\x03\x04\x05\x06\x07\x08");
	snprintf(path, sizeof(path), "%s/in.bin", fuzz_scratch());
	if (symlink("weights.bin", path) < 0 && access(path, F_OK) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/out.bin", fuzz_scratch());
	if (symlink("/etc/passwd", path) < 0 && access(path, F_OK) < 0)
		abort();
	return 0;
}

/* Read back so the payload's first and last bytes are touched. */
static volatile uint8_t sink;

static int touch_tensor(struct ir_tensor *t, void *ctx)
{
	const uint8_t *p;
	size_t len;
	struct ir_diag d;

	(void)ctx;
	ir_diag_init(&d);
	ir_tensor_numel(t);
	ir_tensor_nbytes(t);
	if (ir_tensor_data(t, &p, &len, &d) == 0 && len)
		sink ^= p[0] ^ p[len - 1];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ir_load_opts o = { .max_memory = 64u << 20 };
	struct ir_model *m = NULL;
	struct ir_infer inf;
	struct ir_summary s;
	struct ir_diag d;
	char path[PATH_MAX];

	if (fuzz_put_file("model.onnx", data, size, path, sizeof(path)) < 0)
		return 0;
	ir_diag_init(&d);
	if (ir_model_load(path, &o, &m, &d) < 0) {
		ir_model_free(m);
		return 0;
	}
	ir_infer_init(&inf);
	ir_diag_init(&d);
	ir_infer_model(m, &inf, &d);
	ir_infer_release(&inf);
	ir_diag_init(&d);
	memset(&s, 0, sizeof(s));
	if (ir_model_summarize(m, &s, &d) == 0)
		ir_summary_release(&s);
	ir_model_for_each_tensor(m, touch_tensor, NULL);
	ir_model_free(m);
	return 0;
}
