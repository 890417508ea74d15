/* schema.c: what probe reads from the operator registry: the data
 * constraint of an op (the dtypes a rules file's "dtypes" are about), the
 * dtypes a formal type admits, the opsets a version applies to, the IR
 * version of an opset, and the ops whose outputs are random. */
#include <string.h>

#include "probe/probe_int.h"

const char *probe_formal_type(const struct ir_op_schema *s, int input, size_t i)
{
	const struct ir_op_formal *f = input ? s->inputs : s->outputs;
	size_t n = input ? s->n_inputs : s->n_outputs;

	if (i < n)
		return f[i].type;
	if (n && f[n - 1].variadic)
		return f[n - 1].type;
	return NULL;
}

/* As scanner/check.c reads it: the rules' "dtypes" constrain the inputs
 * and outputs of this constraint. */
const char *probe_data_constraint(const struct ir_op_schema *s)
{
	const char *t;

	if (!s)
		return NULL;
	t = probe_formal_type(s, 1, 0);
	if (t && strncmp(t, "tensor(", 7) && strncmp(t, "seq(", 4))
		return t;
	t = probe_formal_type(s, 0, 0);
	if (t && strncmp(t, "tensor(", 7) && strncmp(t, "seq(", 4))
		return t;
	return NULL;
}

/* "tensor(float16), tensor(float)" -> its tensor dtypes. */
static rules_dtypes list_dtypes(const char *list)
{
	rules_dtypes m = 0;

	for (int i = 1; i < IR_DTYPE_COUNT; i++) {
		char want[48];
		size_t k = (size_t)snprintf(want, sizeof(want), "tensor(%s)", ir_dtype_name(i));

		for (const char *p = list; (p = strstr(p, want)); p += k)
			if ((p == list || p[-1] == ' ' || p[-1] == ',') &&
			    (p[k] == 0 || p[k] == ',' || p[k] == ' ')) {
				m |= RULES_DTYPE_BIT(i);
				break;
			}
	}
	return m;
}

rules_dtypes probe_type_dtypes(const struct ir_op_schema *s, const char *type)
{
	if (!type)
		return 0;
	if (strchr(type, '('))
		return list_dtypes(type);
	for (size_t i = 0; i < s->n_constraints; i++)
		if (!strcmp(s->constraints[i].name, type))
			return list_dtypes(s->constraints[i].types);
	return 0;
}

const struct ir_op_schema *probe_schema_next(const struct ir_op_schema *s)
{
	const struct ir_op_schema *first;
	size_t n = ir_registry_versions(s->domain, s->name, &first);

	for (size_t i = 0; i + 1 < n; i++)
		if (&first[i] == s)
			return &first[i + 1];
	return NULL;
}

/* The IR version each opset came with (onnx/helper.py's VERSION_TABLE);
 * at least 4, where initializers need not be graph inputs. */
int64_t probe_ir_version(int opset)
{
	if (opset <= 9)
		return 4;
	if (opset == 10)
		return 5;
	if (opset == 11)
		return 6;
	if (opset <= 14)
		return 7;
	if (opset <= 18)
		return 8;
	if (opset <= 20)
		return 9;
	return 10;
}

int probe_op_random(const char *op)
{
	static const char *const ops[] = {
		"Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike",
		"RandomUniform", "RandomUniformLike",
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(op, ops[i]))
			return 1;
	return 0;
}
