/* vmap.c: the name map between a reference and a candidate model (see
 * validate.h for the text format), precision names and defaults, and the
 * guess of a candidate's precision. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_int.h"
#include "validators/validate.h"

static const char *const kind_names[] = { "input", "output", "value" };
static const char *const precision_names[] = { "fp32", "fp16", "int8" };

const char *val_precision_name(enum val_precision p)
{
	return precision_names[p];
}

int val_precision_parse(const char *s)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(s, precision_names[i]))
			return i;
	return -1;
}

void val_default_tolerance(enum val_precision p, struct rt_cmp_opts *t)
{
	switch (p) {
	case VAL_FP16:
		t->rtol = 1e-2;
		t->atol = 1e-3;
		break;
	case VAL_INT8:
		t->rtol = 5e-2;
		t->atol = 5e-2;
		break;
	default:
		t->rtol = 1e-3;
		t->atol = 1e-5;
		break;
	}
}

static int visit_half(struct ir_graph *g, int depth, void *ctx)
{
	int *found = ctx;

	(void)depth;
	for (size_t i = 0; i < g->n_inits && !*found; i++)
		*found |= g->inits[i]->dtype == IR_DTYPE_FLOAT16 ||
			  g->inits[i]->dtype == IR_DTYPE_BFLOAT16;
	for (size_t i = 0; i < g->n_nodes && !*found; i++) {
		const char *op = ir_s(g->nodes[i]->op_type);

		if (!strcmp(op, "QuantizeLinear") || !strcmp(op, "DequantizeLinear") ||
		    !strncmp(op, "QLinear", 7) || !strcmp(op, "DynamicQuantizeLinear") ||
		    !strcmp(op, "MatMulNBits"))
			*found = 2;
	}
	return 0;
}

enum val_precision val_guess_precision(const struct ir_model *cand)
{
	int found = 0;

	ir_model_walk((struct ir_model *)cand, visit_half, &found);
	if (found == 2)
		return VAL_INT8;
	if (!found && cand->graph)
		for (size_t i = 0; i < cand->graph->n_value_info + cand->graph->n_inputs; i++) {
			const struct ir_vinfo *vi = i < cand->graph->n_inputs ?
				&cand->graph->inputs[i] :
				&cand->graph->value_info[i - cand->graph->n_inputs];

			if (vi->type && (vi->type->elem_type == IR_DTYPE_FLOAT16 ||
					 vi->type->elem_type == IR_DTYPE_BFLOAT16))
				found = 1;
		}
	return found ? VAL_FP16 : VAL_FP32;
}

void val_map_init(struct val_map *m)
{
	memset(m, 0, sizeof(*m));
}

void val_map_release(struct val_map *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->e[i].ref);
		free(m->e[i].cand);
	}
	free(m->e);
	val_map_init(m);
}

int val_map_add(struct val_map *m, enum val_map_kind kind, const char *ref,
		const char *cand, const int *perm, int rank, int dtype,
		struct ir_diag *d)
{
	struct val_map_entry *q = realloc(m->e, (m->n + 1) * sizeof(*q)), *e;

	if (!q)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	m->e = q;
	e = &q[m->n];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->rank = rank;
	e->dtype = dtype;
	if (rank)
		memcpy(e->perm, perm, (size_t)rank * sizeof(*perm));
	if (!(e->ref = strdup(ref)) || !(e->cand = strdup(cand))) {
		free(e->ref);
		free(e->cand);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	m->n++;
	return 0;
}

static int dtype_by_name(const char *s)
{
	for (int t = 1; t < IR_DTYPE_COUNT; t++)
		if (!strcmp(ir_dtype_name(t), s))
			return t;
	return 0;
}

static int parse_perm(const char *s, int *perm, int *rank)
{
	int seen = 0;

	*rank = 0;
	while (*s) {
		char *end;
		long v;

		errno = 0;
		v = strtol(s, &end, 10);
		if (errno || end == s || v < 0 || v >= RT_MAX_RANK || *rank >= RT_MAX_RANK)
			return -1;
		perm[(*rank)++] = (int)v;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	for (int i = 0; i < *rank; i++) {
		if (perm[i] >= *rank || (seen & (1 << perm[i])))
			return -1;
		seen |= 1 << perm[i];
	}
	return *rank ? 0 : -1;
}

static int parse_line(char *line, int no, struct val_map *m, struct ir_diag *d)
{
	char *tok[8], *save = NULL, *t;
	int n = 0, kind = -1, perm[RT_MAX_RANK], rank = 0, dtype = 0;

	for (t = strtok_r(line, " \t\r\n", &save); t && n < 8;
	     t = strtok_r(NULL, " \t\r\n", &save))
		tok[n++] = t;
	if (!n || tok[0][0] == '#')
		return 0;
	for (int k = 0; k < 3; k++)
		if (!strcmp(tok[0], kind_names[k]))
			kind = k;
	if (kind < 0)
		return diag_error(d, "line %d: unknown entry '%s' (input, output or value)",
				  no, tok[0]);
	if (n < 3)
		return diag_error(d, "line %d: %s needs REF_NAME CAND_NAME", no, tok[0]);
	for (int i = 3; i < n; i++) {
		if (!strncmp(tok[i], "perm=", 5)) {
			if (parse_perm(tok[i] + 5, perm, &rank) < 0)
				return diag_error(d, "line %d: bad permutation '%s'", no, tok[i] + 5);
		} else if (!strncmp(tok[i], "dtype=", 6)) {
			if (!(dtype = dtype_by_name(tok[i] + 6)))
				return diag_error(d, "line %d: unknown dtype '%s'", no, tok[i] + 6);
		} else {
			return diag_error(d, "line %d: unknown field '%s'", no, tok[i]);
		}
	}
	return val_map_add(m, (enum val_map_kind)kind, tok[1], tok[2], perm, rank,
			   dtype, d);
}

int val_map_load(const char *path, struct val_map *m, struct ir_diag *d)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int no = 0, rc = 0;

	if (!f)
		return diag_error(d, "cannot open: %s", ir_strerror(errno));
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		no++;
		if (!strchr(line, '\n') && !feof(f)) {
			rc = diag_error(d, "line %d: longer than %zu bytes", no, sizeof(line) - 1);
			break;
		}
		rc = parse_line(line, no, m, d);
	}
	if (rc == 0 && ferror(f))
		rc = ir_diag_error(d, IR_EIO, "read failed");
	fclose(f);
	if (rc < 0)
		val_map_release(m);
	return rc;
}

int val_map_save(const struct val_map *m, const char *path, struct ir_diag *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	if (!f)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	fputs("# opmig name map: KIND REFERENCE CANDIDATE [perm=..] [dtype=..]\n", f);
	for (size_t i = 0; i < m->n; i++) {
		const struct val_map_entry *e = &m->e[i];

		fprintf(f, "%s %s %s", kind_names[e->kind], e->ref, e->cand);
		for (int k = 0; k < e->rank; k++)
			fprintf(f, "%s%d", k ? "," : " perm=", e->perm[k]);
		if (e->dtype)
			fprintf(f, " dtype=%s", ir_dtype_name(e->dtype));
		fputc('\n', f);
	}
	if (fclose(f) != 0) {
		free(buf);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	rc = ir_file_write_atomic(path, buf, len, d);
	free(buf);
	return rc;
}

const struct val_map_entry *val_map_by_ref(const struct val_map *m,
					   enum val_map_kind kind, const char *ref)
{
	for (size_t i = 0; m && i < m->n; i++)
		if (m->e[i].kind == kind && !strcmp(m->e[i].ref, ref))
			return &m->e[i];
	return NULL;
}

const struct val_map_entry *val_map_by_cand(const struct val_map *m,
					    enum val_map_kind kind, const char *cand)
{
	for (size_t i = 0; m && i < m->n; i++)
		if (m->e[i].kind == kind && !strcmp(m->e[i].cand, cand))
			return &m->e[i];
	return NULL;
}
