/* fuzz_tensorpb.c: libFuzzer harness of the tensor file readers of the
 * backend test format: the input is read as a TensorProto, a SequenceProto,
 * an OptionalProto and a MapProto, converted to runtime values as `opmig
 * run` and `opmig validate` do, and the tensors serialized again. */
#include "ir/infer.h"
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

static void use_value(struct rt_mem *mem, struct rt_value *v)
{
	struct ir_tensor *t = NULL;
	struct ir_diag d;
	char text[256];
	uint8_t *buf = NULL;
	size_t len = 0;

	rt_value_describe(v, text, sizeof(text));
	ir_diag_init(&d);
	if (v->kind == RT_TENSOR && rt_value_to_ir(v, "x", &t, &d) == 0) {
		ir_diag_init(&d);
		if (ir_tensor_serialize(t, &buf, &len, &d) == 0)
			free(buf);
		ir_tensor_free(t);
	}
	rt_value_unref(v);
	if (mem->cur != 0) {
		fprintf(stderr, "tensorpb: %lld bytes still charged after unref\n",
			(long long)mem->cur);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ir_type tensor = { .kind = IR_TYPE_TENSOR };
	static struct ir_type seq = { .kind = IR_TYPE_SEQUENCE, .inner = &tensor };
	static struct ir_type opt = { .kind = IR_TYPE_OPTIONAL, .inner = &tensor };
	const struct ir_type *types[] = { NULL, &seq, &opt };
	static const enum ir_data_kind kinds[] = {
		IR_DATA_SEQUENCE, IR_DATA_OPTIONAL, IR_DATA_MAP
	};
	struct rt_mem mem = { .limit = 64 << 20 };
	struct rt_value *v;
	struct ir_diag d;
	char path[64];
	int fd;

	if ((fd = fuzz_memfd(data, size, path, sizeof(path))) < 0)
		return 0;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		v = NULL;
		ir_diag_init(&d);
		if (rt_value_read_file(&mem, path, types[i], &v, &d) == 0)
			use_value(&mem, v);
		else if (v)
			abort();
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct ir_data x;
		uint8_t *buf = NULL;
		size_t len = 0;

		ir_diag_init(&d);
		if (ir_data_read(path, kinds[i], &x, &d) < 0)
			continue;
		ir_diag_init(&d);
		if (kinds[i] != IR_DATA_MAP &&
		    ir_data_serialize(&x, "x", &buf, &len, &d) == 0)
			free(buf);
		ir_data_release(&x);
	}
	close(fd);
	return 0;
}
