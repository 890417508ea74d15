/* bind.c: migrate --input-value NAME=VALUE|FILE: a graph input bound to a
 * constant becomes an initializer of that value and leaves the model's
 * interface, so that an If on it, and shape arithmetic reading it, fold.
 * VALUE is one number or comma-separated numbers (a scalar for an input of
 * rank 0, a list for rank 1, else as many as the static shape holds; in
 * the input's dtype); FILE is a .npy or TensorProto (.pb) file whose dtype
 * and shape must match the input's declaration.  Migrate binds the model
 * and validation's reference alike: they are compared for that value. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rewriters/migrate.h"
#include "runtime/runtime.h"
#include "runtime/tensor_io.h"

#define MAX_LITERAL 4096

static int parse_literal(const char *s, double *v, size_t *n)
{
	*n = 0;
	while (*s) {
		char *end;

		if (*n == MAX_LITERAL)
			return -1;
		errno = 0;
		v[(*n)++] = strtod(s, &end);
		if (end == s || errno)
			return -1;
		s = end;
		while (*s == ' ')
			s++;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return *n ? 0 : -1;
}

/* The literal as a tensor shaped after the declaration. */
static int from_literal(const struct ir_type *t, const char *name, const char *s,
			struct rt_value **out, struct ir_diag *d)
{
	static double v[MAX_LITERAL];
	int64_t dims[16];
	int64_t numel = 1;
	size_t n;
	int rank = (int)t->shape.n_dims, rc;

	if (parse_literal(s, v, &n) < 0)
		return ir_diag_error(d, IR_EUSAGE, "--input-value %s: '%s' is neither a file nor "
				     "comma-separated numbers", name, s);
	if (!IR_HAS(t, IR_TYPE_HAS_SHAPE) || rank > 16)
		return ir_diag_error(d, IR_EUSAGE, "--input-value %s: the input declares no "
				     "shape; give a .npy or .pb file", name);
	for (int i = 0; i < rank; i++) {
		const struct ir_dim *dm = &t->shape.dims[i];

		dims[i] = dm->kind == IR_DIM_VALUE ? dm->value : -1;
		if (rank == 1 && dims[i] < 0)
			dims[i] = (int64_t)n;
		if (dims[i] < 0)
			return ir_diag_error(d, IR_EUSAGE, "--input-value %s: dim %d is not "
					     "static; give a .npy or .pb file", name, i);
		numel *= dims[i];
	}
	if (numel != (int64_t)n)
		return ir_diag_error(d, IR_EUSAGE, "--input-value %s: %zu value%s given, the "
				     "input holds %lld", name, n, n == 1 ? "" : "s",
				     (long long)numel);
	if ((rc = rt_tensor_new(NULL, t->elem_type, rank, dims, out, d)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		rt_value_set_f64(*out, (int64_t)i, v[i]);
	return 0;
}

/* A file's tensor must have the declared dtype and static dims. */
static int check_file(const struct ir_type *t, const char *name, const struct rt_value *v,
		      struct ir_diag *d)
{
	if (v->kind != RT_TENSOR || v->dtype != t->elem_type)
		return ir_diag_error(d, IR_EUSAGE, "--input-value %s: the file holds %s, the "
				     "input is %s", name, v->kind != RT_TENSOR ? "no tensor" :
				     ir_dtype_name(v->dtype), ir_dtype_name(t->elem_type));
	if (IR_HAS(t, IR_TYPE_HAS_SHAPE)) {
		int ok = v->rank == (int)t->shape.n_dims;

		for (int i = 0; ok && i < v->rank; i++)
			ok = t->shape.dims[i].kind != IR_DIM_VALUE ||
			     t->shape.dims[i].value == v->dims[i];
		if (!ok)
			return ir_diag_error(d, IR_EUSAGE, "--input-value %s: the file's shape "
					     "does not match the input's", name);
	}
	return 0;
}

static int bind_one(struct ir_model *m, const struct mg_binding *b, struct ir_diag *d)
{
	struct ir_graph *g = m->graph;
	struct ir_value *v = ir_graph_find(g, b->name);
	const struct ir_type *t = NULL;
	struct rt_value *val = NULL;
	struct ir_tensor *it = NULL;
	struct stat st;
	int rc;

	for (size_t i = 0; v && i < g->n_inputs; i++)
		if (g->inputs[i].value == v)
			t = g->inputs[i].type;
	if (!v || !v->is_input || v->init)
		return ir_diag_error(d, IR_EUSAGE, "--input-value %s: the model has no graph "
				     "input of that name (without an initializer)", b->name);
	if (!t || t->kind != IR_TYPE_TENSOR || !IR_HAS(t, IR_TYPE_HAS_ELEM))
		return ir_diag_error(d, IR_EUSAGE, "--input-value %s: not a typed tensor input",
				     b->name);
	if (stat(b->value, &st) == 0 && S_ISREG(st.st_mode)) {
		struct ir_diag fd;

		ir_diag_init(&fd);
		if ((rc = rt_tensor_read_file(NULL, b->value, &val, &fd)) < 0)
			return ir_diag_error(d, rc, "--input-value %s: %s: %s", b->name,
					     b->value, fd.msg);
		rc = check_file(t, b->name, val, d);
	} else {
		rc = from_literal(t, b->name, b->value, &val, d);
	}
	if (rc == 0)
		rc = rt_value_to_ir(val, b->name, &it, d);
	rt_value_unref(val);
	if (rc < 0)
		return rc;
	ir_graph_remove_input(g, v);
	return ir_value_attach_initializer(g, v, it) < 0 ?
	       ir_diag_error(d, IR_ENOMEM, "out of memory") : 0;
}

int mg_bind_inputs(struct ir_model *m, const struct mg_binding *b, size_t n,
		   struct ir_diag *d)
{
	int rc;

	for (size_t i = 0; i < n; i++)
		if ((rc = bind_one(m, &b[i], d)) < 0)
			return rc;
	/* initializers not listed as inputs need IR 4 */
	if (n && m->ir_version < 4)
		m->ir_version = 4;
	return 0;
}
