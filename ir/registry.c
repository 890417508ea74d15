/* registry.c: lookups in the operator table of ir/registry_table.c: version
 * selection by opset (binary search over the sorted table), version lists,
 * iteration and attribute lookup, and onnxruntime's default-domain
 * fallback to contrib entries. */
#include <string.h>

#include "ir/registry.h"

static const char *norm_domain(const char *domain)
{
	return (!domain || !*domain) ? "ai.onnx" : domain;
}

static int cmp_key(const struct ir_op_schema *e, const char *domain,
		   const char *op, int64_t since)
{
	int c = strcmp(e->domain, domain);

	if (c == 0)
		c = strcmp(e->name, op);
	if (c == 0)
		c = e->since_version < since ? -1 : e->since_version > since;
	return c;
}

/* Index of the first entry not below (domain, op, since). */
static size_t lower_bound(const char *domain, const char *op, int64_t since)
{
	size_t lo = 0, hi = ir_registry_table_len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_key(&ir_registry_table[mid], domain, op, since) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int same_op(size_t i, const char *domain, const char *op)
{
	return i < ir_registry_table_len &&
	       strcmp(ir_registry_table[i].domain, domain) == 0 &&
	       strcmp(ir_registry_table[i].name, op) == 0;
}

const struct ir_op_schema *ir_registry_find(const char *domain,
					    const char *op, int64_t opset)
{
	size_t i;

	if (!op)
		return NULL;
	domain = norm_domain(domain);
	if (opset < INT64_MAX)
		opset++;
	/* First entry at or after (op, opset + 1); the one before it is the
	 * newest version <= opset, if it is the same op. */
	i = lower_bound(domain, op, opset);
	if (i == 0 || !same_op(i - 1, domain, op))
		return NULL;
	return &ir_registry_table[i - 1];
}

/* Contrib ops onnxruntime registers in the default domain too. */
static const char *const ort_default_ops[] = {
	"LayerNormalization", "SimplifiedLayerNormalization",
};

const char *ir_registry_default_fallback(const char *domain, const char *op)
{
	size_t i;

	if (!op || strcmp(norm_domain(domain), "ai.onnx") != 0)
		return NULL;
	for (i = 0; i < sizeof(ort_default_ops) / sizeof(*ort_default_ops); i++)
		if (!strcmp(ort_default_ops[i], op))
			break;
	if (i == sizeof(ort_default_ops) / sizeof(*ort_default_ops))
		return NULL;
	/* only when ai.onnx has no version at all of that name */
	if (same_op(lower_bound("ai.onnx", op, INT64_MIN), "ai.onnx", op))
		return NULL;
	return "com.microsoft";
}

const struct ir_op_schema *ir_registry_find_flags(const char *domain,
						  const char *op, int64_t opset,
						  unsigned flags)
{
	const char *fb;

	if ((flags & IR_REGISTRY_ORT_DEFAULT) &&
	    (fb = ir_registry_default_fallback(domain, op)))
		return ir_registry_find(fb, op, opset);
	return ir_registry_find(domain, op, opset);
}

size_t ir_registry_versions(const char *domain, const char *op,
			    const struct ir_op_schema **first)
{
	size_t i, j;

	*first = NULL;
	if (!op)
		return 0;
	domain = norm_domain(domain);
	i = lower_bound(domain, op, INT64_MIN);
	for (j = i; same_op(j, domain, op); j++)
		;
	if (j > i)
		*first = &ir_registry_table[i];
	return j - i;
}

size_t ir_registry_count(void)
{
	return ir_registry_table_len;
}

const struct ir_op_schema *ir_registry_at(size_t i)
{
	return i < ir_registry_table_len ? &ir_registry_table[i] : NULL;
}

const struct ir_op_attr *ir_op_schema_attr(const struct ir_op_schema *s,
					   const char *name)
{
	for (size_t i = 0; i < s->n_attrs; i++)
		if (strcmp(s->attrs[i].name, name) == 0)
			return &s->attrs[i];
	return NULL;
}

int ir_registry_max_version(const char *domain)
{
	int max = 0;

	domain = norm_domain(domain);
	for (size_t i = 0; i < ir_registry_table_len; i++)
		if (strcmp(ir_registry_table[i].domain, domain) == 0 &&
		    ir_registry_table[i].since_version > max)
			max = ir_registry_table[i].since_version;
	return max;
}
