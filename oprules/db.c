/* db.c: the rules database as a whole: lifecycle of the typed structs,
 * loading a folder, `extends` resolution (inherit, override, cycle and
 * unknown-parent detection, duplicate ids), sorted lookups and the dtype
 * name table. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "oprules/rules.h"
#include "oprules/rules_int.h"

/* ---- dtype names ------------------------------------------------------- */

static const char *const dtype_names[IR_DTYPE_COUNT] = {
	[IR_DTYPE_FLOAT] = "float32", [IR_DTYPE_UINT8] = "uint8",
	[IR_DTYPE_INT8] = "int8", [IR_DTYPE_UINT16] = "uint16",
	[IR_DTYPE_INT16] = "int16", [IR_DTYPE_INT32] = "int32",
	[IR_DTYPE_INT64] = "int64", [IR_DTYPE_STRING] = "string",
	[IR_DTYPE_BOOL] = "bool", [IR_DTYPE_FLOAT16] = "float16",
	[IR_DTYPE_DOUBLE] = "float64", [IR_DTYPE_UINT32] = "uint32",
	[IR_DTYPE_UINT64] = "uint64", [IR_DTYPE_COMPLEX64] = "complex64",
	[IR_DTYPE_COMPLEX128] = "complex128", [IR_DTYPE_BFLOAT16] = "bfloat16",
	[IR_DTYPE_FLOAT8E4M3FN] = "float8e4m3fn",
	[IR_DTYPE_FLOAT8E4M3FNUZ] = "float8e4m3fnuz",
	[IR_DTYPE_FLOAT8E5M2] = "float8e5m2",
	[IR_DTYPE_FLOAT8E5M2FNUZ] = "float8e5m2fnuz",
	[IR_DTYPE_UINT4] = "uint4", [IR_DTYPE_INT4] = "int4",
	[IR_DTYPE_FLOAT4E2M1] = "float4e2m1",
};

const char *rules_dtype_name(int dtype)
{
	if (dtype <= 0 || dtype >= IR_DTYPE_COUNT || !dtype_names[dtype])
		return NULL;
	return dtype_names[dtype];
}

rules_dtypes rules_dtype_parse(const char *name)
{
	if (!strcmp(name, "float8"))
		return RULES_DTYPE_BIT(IR_DTYPE_FLOAT8E4M3FN) |
		       RULES_DTYPE_BIT(IR_DTYPE_FLOAT8E4M3FNUZ) |
		       RULES_DTYPE_BIT(IR_DTYPE_FLOAT8E5M2) |
		       RULES_DTYPE_BIT(IR_DTYPE_FLOAT8E5M2FNUZ);
	if (!strcmp(name, "float4"))
		return RULES_DTYPE_BIT(IR_DTYPE_FLOAT4E2M1);
	for (int i = 1; i < IR_DTYPE_COUNT; i++)
		if (dtype_names[i] && !strcmp(dtype_names[i], name))
			return RULES_DTYPE_BIT(i);
	return 0;
}

const char *rules_severity_name(enum rules_severity s)
{
	return s == RULES_LIMITED ? "limited" : "unsupported";
}

/* ---- release ------------------------------------------------------------ */

void rules_strv_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static void value_release(struct rules_value *v)
{
	free(v->str);
	free(v->nums);
}

static void op_release(struct rules_op *op)
{
	for (size_t i = 0; i < op->n_attrs; i++) {
		for (size_t j = 0; j < op->attrs[i].n_allowed; j++)
			value_release(&op->attrs[i].allowed[j]);
		free(op->attrs[i].allowed);
		value_release(&op->attrs[i].equals);
		free(op->attrs[i].name);
	}
	free(op->attrs);
	free(op->inputs);
	free(op->outputs);
	free(op->domain);
	free(op->name);
	free(op->notes);
	rules_strv_free(op->sources, op->n_sources);
}

static void fused_release(struct rules_fused *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++) {
		free(f[i].name);
		rules_strv_free(f[i].ops, f[i].n_ops);
		free(f[i].notes);
	}
	free(f);
}

void rules_target_release(struct rules_target *t)
{
	free(t->id);
	free(t->name);
	free(t->vendor);
	free(t->family);
	free(t->description);
	free(t->notes);
	free(t->extends);
	free(t->file);
	rules_strv_free(t->sources, t->n_sources);
	free(t->preferred_layout);
	free(t->preferred_precision);
	fused_release(t->fused, t->n_fused);
	for (size_t i = 0; i < t->n_ops; i++)
		op_release(&t->ops[i]);
	free(t->ops);
	memset(t, 0, sizeof(*t));
}

void rules_db_init(struct rules_db *db)
{
	db->targets = NULL;
	db->n_targets = 0;
}

void rules_db_release(struct rules_db *db)
{
	for (size_t i = 0; i < db->n_targets; i++)
		rules_target_release(&db->targets[i]);
	free(db->targets);
	rules_db_init(db);
}

/* ---- sorting and lookup ------------------------------------------------ */

static int op_cmp(const void *a, const void *b)
{
	const struct rules_op *x = a, *y = b;
	int c = strcmp(x->domain, y->domain);

	return c ? c : strcmp(x->name, y->name);
}

void rules_ops_sort(struct rules_op *ops, size_t n)
{
	if (n > 1)
		qsort(ops, n, sizeof(*ops), op_cmp);
}

static int target_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rules_target *)a)->id,
		      ((const struct rules_target *)b)->id);
}

static int target_key_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct rules_target *)elem)->id);
}

const struct rules_target *rules_db_find(const struct rules_db *db, const char *id)
{
	if (!db || !db->n_targets)
		return NULL;
	return bsearch(id, db->targets, db->n_targets, sizeof(db->targets[0]),
		       target_key_cmp);
}

const struct rules_op *rules_target_find_op(const struct rules_target *t,
					    const char *domain, const char *name)
{
	struct rules_op key;

	memset(&key, 0, sizeof(key));
	key.domain = (char *)(domain && *domain ? domain : "ai.onnx");
	key.name = (char *)name;
	if (!t->n_ops)
		return NULL;
	return bsearch(&key, t->ops, t->n_ops, sizeof(t->ops[0]), op_cmp);
}

size_t rules_target_n_supported(const struct rules_target *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n_ops; i++)
		n += t->ops[i].supported != 0;
	return n;
}

/* ---- deep copies (for extends) ----------------------------------------- */

static int dup_opt(const char *s, char **out)
{
	if (!s) {
		*out = NULL;
		return 0;
	}
	return (*out = strdup(s)) ? 0 : -1;
}

static int strv_dup(char *const *v, size_t n, char ***out, size_t *n_out)
{
	*out = NULL;
	*n_out = 0;
	if (!n)
		return 0;
	if (!(*out = calloc(n, sizeof(char *))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!((*out)[i] = strdup(v[i])))
			return -1;
		*n_out = i + 1;
	}
	return 0;
}

static int mem_dup(const void *src, size_t size, void **out)
{
	*out = NULL;
	if (!size)
		return 0;
	if (!(*out = malloc(size)))
		return -1;
	memcpy(*out, src, size);
	return 0;
}

static int value_dup(const struct rules_value *v, struct rules_value *out)
{
	*out = *v;
	out->str = NULL;
	out->nums = NULL;
	if (dup_opt(v->str, &out->str))
		return -1;
	return mem_dup(v->nums, v->n_nums * sizeof(double), (void **)&out->nums);
}

static int op_dup(const struct rules_op *op, struct rules_op *out)
{
	*out = *op;
	out->domain = out->name = out->notes = NULL;
	out->sources = NULL;
	out->n_sources = 0;
	out->inputs = out->outputs = NULL;
	out->attrs = NULL;
	out->n_attrs = 0;
	if (dup_opt(op->domain, &out->domain) || dup_opt(op->name, &out->name) ||
	    dup_opt(op->notes, &out->notes) ||
	    strv_dup(op->sources, op->n_sources, &out->sources, &out->n_sources) ||
	    mem_dup(op->inputs, op->n_inputs * sizeof(*op->inputs), (void **)&out->inputs) ||
	    mem_dup(op->outputs, op->n_outputs * sizeof(*op->outputs), (void **)&out->outputs))
		return -1;
	if (op->n_attrs && !(out->attrs = calloc(op->n_attrs, sizeof(*out->attrs))))
		return -1;
	for (size_t i = 0; i < op->n_attrs; i++) {
		const struct rules_attr *a = &op->attrs[i];
		struct rules_attr *b = &out->attrs[i];

		out->n_attrs = i + 1;
		*b = *a;
		b->name = NULL;
		b->allowed = NULL;
		b->n_allowed = 0;
		memset(&b->equals, 0, sizeof(b->equals));
		if (dup_opt(a->name, &b->name) || value_dup(&a->equals, &b->equals))
			return -1;
		if (a->n_allowed && !(b->allowed = calloc(a->n_allowed, sizeof(*b->allowed))))
			return -1;
		for (size_t j = 0; j < a->n_allowed; j++) {
			b->n_allowed = j + 1;
			if (value_dup(&a->allowed[j], &b->allowed[j]))
				return -1;
		}
	}
	return 0;
}

/* Child gets every field it left unset from parent p; ops of p that the
 * child does not list are copied in (a child's op entry replaces the
 * parent's entry of that op whole). */
static int inherit(struct rules_target *t, const struct rules_target *p)
{
	struct rules_op *ops;
	size_t n = t->n_ops;

	if ((!t->name && dup_opt(p->name, &t->name)) ||
	    (!t->vendor && dup_opt(p->vendor, &t->vendor)) ||
	    (!t->family && dup_opt(p->family, &t->family)) ||
	    (!t->description && dup_opt(p->description, &t->description)) ||
	    (!t->preferred_layout && dup_opt(p->preferred_layout, &t->preferred_layout)) ||
	    (!t->preferred_precision &&
	     dup_opt(p->preferred_precision, &t->preferred_precision)))
		return -1;
	if (t->opset_min < 0) {
		t->opset_min = p->opset_min;
		t->opset_max = p->opset_max;
	}
	if (!t->has_missing_dtypes) {
		t->has_missing_dtypes = p->has_missing_dtypes;
		t->missing_dtypes = p->missing_dtypes;
	}
	if (t->dynamic_shapes < 0)
		t->dynamic_shapes = p->dynamic_shapes;
	if (t->max_rank < 0)
		t->max_rank = p->max_rank;
	if (t->device_memory_bytes < 0)
		t->device_memory_bytes = p->device_memory_bytes;
	if (!t->has_fused && p->n_fused) {
		if (!(t->fused = calloc(p->n_fused, sizeof(*t->fused))))
			return -1;
		t->has_fused = 1;
		for (size_t i = 0; i < p->n_fused; i++) {
			t->n_fused = i + 1;
			if (dup_opt(p->fused[i].name, &t->fused[i].name) ||
			    dup_opt(p->fused[i].notes, &t->fused[i].notes) ||
			    strv_dup(p->fused[i].ops, p->fused[i].n_ops,
				     &t->fused[i].ops, &t->fused[i].n_ops))
				return -1;
		}
	}
	if (!p->n_ops)
		return 0;
	if (!(ops = realloc(t->ops, (t->n_ops + p->n_ops) * sizeof(*ops))))
		return -1;
	t->ops = ops;
	for (size_t i = 0; i < p->n_ops; i++) {
		const struct rules_op *po = &p->ops[i];

		if (bsearch(po, t->ops, n, sizeof(*t->ops), op_cmp))
			continue;
		memset(&t->ops[t->n_ops], 0, sizeof(t->ops[0]));
		t->n_ops++;
		if (op_dup(po, &t->ops[t->n_ops - 1]))
			return -1;
	}
	rules_ops_sort(t->ops, t->n_ops);
	return 0;
}

/* Resolve db->targets[i]; state: 0 new, 1 on the current chain. */
static int resolve_one(struct rules_db *db, const struct rules_db *base, size_t i,
		       unsigned char *state, struct ir_diag *d)
{
	struct rules_target *t = &db->targets[i];
	const struct rules_target *p;

	if (t->resolved)
		return 0;
	if (state[i])
		return ir_diag_error(d, IR_EINVAL, "%s: extends: cycle through '%s'",
				     t->file, t->id);
	if (t->extends) {
		p = rules_db_find(db, t->extends);
		if (p) {
			int rc;

			state[i] = 1;
			rc = resolve_one(db, base, (size_t)(p - db->targets), state, d);
			state[i] = 0;
			if (rc)
				return rc;
		} else if (!(p = rules_db_find(base, t->extends))) {
			return ir_diag_error(d, IR_EINVAL, "%s: extends: unknown target '%s'",
					     t->file, t->extends);
		}
		if (inherit(t, p))
			return ir_diag_error(d, IR_ENOMEM, "%s: out of memory", t->file);
	}
	if (!t->name && !(t->name = strdup(t->id)))
		return ir_diag_error(d, IR_ENOMEM, "%s: out of memory", t->file);
	t->resolved = 1;
	return 0;
}

int rules_db_resolve(struct rules_db *db, const struct rules_db *base,
		     struct ir_diag *d)
{
	unsigned char *state;
	int rc = 0;

	if (db->n_targets > 1)
		qsort(db->targets, db->n_targets, sizeof(db->targets[0]), target_cmp);
	for (size_t i = 1; i < db->n_targets; i++)
		if (!strcmp(db->targets[i - 1].id, db->targets[i].id))
			return ir_diag_error(d, IR_EINVAL, "%s: id: duplicate target id '%s' (also in %s)",
					     db->targets[i].file, db->targets[i].id,
					     db->targets[i - 1].file);
	if (!(state = calloc(db->n_targets + 1, 1)))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < db->n_targets && !rc; i++)
		rc = resolve_one(db, base, i, state, d);
	free(state);
	return rc;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rules_load_dir(const char *dir, struct rules_db *db, struct ir_diag *d)
{
	DIR *dh = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!dh)
		return ir_diag_error(d, IR_EINVAL, "%s: cannot open rules folder", dir);
	while ((e = readdir(dh))) {
		size_t len = strlen(e->d_name);

		if (len < 6 || e->d_name[0] == '.' || strcmp(e->d_name + len - 5, ".json"))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(char *));

			if (!nn) {
				rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
				goto cleanup;
			}
			names = nn;
		}
		if (!(names[n] = malloc(strlen(dir) + len + 2))) {
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
			goto cleanup;
		}
		sprintf(names[n++], "%s/%s", dir, e->d_name);
	}
	if (n > 1)
		qsort(names, n, sizeof(char *), name_cmp);
	for (size_t i = 0; i < n && !rc; i++)
		rc = rules_load_file(names[i], db, d);
	if (!rc)
		rc = rules_db_resolve(db, NULL, d);
cleanup:
	closedir(dh);
	rules_strv_free(names, n);
	return rc;
}
