/* spec_functions.c: lookup in the generated table of spec operators'
 * function bodies (ir/spec_functions_table.c). */
#include <stdlib.h>
#include <string.h>

#include "ir/spec_functions.h"

struct key {
	const char *domain, *op;
	int since_version;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct key *k = a;
	const struct ir_spec_function *e = b;
	int c = strcmp(k->domain, e->domain);

	if (!c)
		c = strcmp(k->op, e->op);
	if (!c)
		c = (k->since_version > e->since_version) -
		    (k->since_version < e->since_version);
	return c;
}

const struct ir_spec_function *ir_spec_function_find(const char *domain,
						     const char *op,
						     int since_version)
{
	struct key k = { domain && *domain ? domain : "ai.onnx", op, since_version };

	if (!op)
		return NULL;
	return bsearch(&k, ir_spec_function_table, ir_spec_function_table_len,
		       sizeof(ir_spec_function_table[0]), cmp_entry);
}
