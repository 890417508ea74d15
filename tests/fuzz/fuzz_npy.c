/* fuzz_npy.c: libFuzzer harness of the NumPy .npy reader: the input is a
 * .npy file, parsed under a memory limit, described, and converted to an
 * IR tensor serialized as a TensorProto (what `opmig run` does with it). */
#include "ir/ir.h"
#include "runtime/runtime.h"
#include "runtime/tensor_io.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rt_mem mem = { .limit = 64 << 20 };
	struct rt_value *v = NULL;
	struct ir_tensor *t = NULL;
	struct ir_diag d;
	char text[256];
	uint8_t *buf = NULL;
	size_t len = 0;

	ir_diag_init(&d);
	if (rt_npy_parse(&mem, data, size, &v, &d) < 0) {
		if (v)
			abort();  /* *out set on error */
		return 0;
	}
	rt_value_describe(v, text, sizeof(text));
	ir_diag_init(&d);
	if (rt_value_to_ir(v, "x", &t, &d) == 0) {
		ir_diag_init(&d);
		if (ir_tensor_serialize(t, &buf, &len, &d) == 0)
			free(buf);
		ir_tensor_free(t);
	}
	rt_value_unref(v);
	if (mem.cur != 0) {
		fprintf(stderr, "npy: %lld bytes still charged after unref\n",
			(long long)mem.cur);
		abort();
	}
	return 0;
}
