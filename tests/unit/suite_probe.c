/* suite_probe.c: unit tests of probe/ without a runtime: command
 * templates and their quoting, the verdict of an exit status and the
 * message picked from a runtime's output, the attribute values tried,
 * building a case (rank, constant and graph inputs, checked against a
 * float64 Relu written here), comparing a runtime's outputs (leniency and
 * failure), and the rules derived from hand-made verdicts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/registry.h"
#include "probe/probe.h"
#include "probe/probe_int.h"
#include "tests/unit/suites.h"
#include "runtime/tensor_io.h"

static void test_template(void)
{
	char why[300], *s;

	CU_ASSERT_TRUE(probe_template_ok("rt {model} {inputs} {outdir}", why, sizeof(why)));
	CU_ASSERT_FALSE(probe_template_ok("rt {inputs} {outdir}", why, sizeof(why)));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "{model}"));
	CU_ASSERT_FALSE(probe_template_ok("", why, sizeof(why)));
	s = probe_template_expand("rt {model} -i {inputs} -o {outdir} {other}", "/a b/m'x.onnx",
				  "/in", "/o u t");
	CU_ASSERT_STRING_EQUAL(s, "rt '/a b/m'\\''x.onnx' -i '/in' -o '/o u t' {other}");
	free(s);
	s = probe_template_expand("{model}{model}", "m", NULL, NULL);
	CU_ASSERT_STRING_EQUAL(s, "'m''m'");
	free(s);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static void test_classify(void)
{
	char dir[] = "/tmp/opmig-probe-XXXXXX", err[64], out[64];
	struct probe_exec e;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(err, sizeof(err), "%s/err", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	write_file(err, "opmig-runtime: rt 2.1  \nTraceback (most recent call last):\n"
		   "  File \"x.py\", line 3, in <module>\n    net = load(m)\n"
		   "cv2.error: cannot load /w/cases/c1/model.onnx: bad node in /w/cases/c1/x\n\n");
	write_file(out, "");
	/* exit 2: rejected, with the last line that says why, paths neutral */
	probe_exec_classify(2 << 8, 0, 60, err, out, "/w/cases/c1/model.onnx", &e);
	CU_ASSERT_EQUAL(e.verdict, PROBE_REJECTED);
	CU_ASSERT_EQUAL(e.status, 2);
	CU_ASSERT_STRING_EQUAL(e.message, "cv2.error: cannot load MODEL: bad node in CASE/x");
	CU_ASSERT_STRING_EQUAL(e.runtime, "rt 2.1");
	probe_exec_release(&e);
	/* killed by SIGSEGV, or a shell saying so with 139 */
	probe_exec_classify(11, 0, 60, err, out, NULL, &e);
	CU_ASSERT_EQUAL(e.verdict, PROBE_CRASHED);
	CU_ASSERT_EQUAL(e.status, 11);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "signal 11"));
	probe_exec_release(&e);
	probe_exec_classify(139 << 8, 0, 60, err, out, NULL, &e);
	CU_ASSERT_EQUAL(e.verdict, PROBE_CRASHED);
	CU_ASSERT_EQUAL(e.status, 11);
	probe_exec_release(&e);
	/* a timeout wins over the status of the kill */
	probe_exec_classify(9, 1, 2.5, err, out, NULL, &e);
	CU_ASSERT_EQUAL(e.verdict, PROBE_TIMEOUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "2.5 s"));
	probe_exec_release(&e);
	/* exit 0: pending a comparison; silent failure: the status */
	probe_exec_classify(0, 0, 60, err, out, NULL, &e);
	CU_ASSERT_EQUAL(e.verdict, PROBE_PENDING);
	probe_exec_release(&e);
	write_file(err, "");
	probe_exec_classify(3 << 8, 0, 60, err, out, NULL, &e);
	CU_ASSERT_EQUAL(e.verdict, PROBE_REJECTED);
	CU_ASSERT_STRING_EQUAL(e.message, "exited with status 3");
	CU_ASSERT_PTR_NULL(e.runtime);
	probe_exec_release(&e);
	unlink(err);
	unlink(out);
	rmdir(dir);
}

/* A spec of one float input of dims, for candidate and build tests. */
static struct probe_spec *spec_of(const char *op, int version, int rank, const int64_t *dims)
{
	const struct ir_op_schema *s = ir_registry_find("", op, version);
	struct probe_spec *sp = probe_spec_synth(s, 1);
	struct ir_diag d;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sp);
	ir_diag_init(&d);
	rt_value_unref(sp->in[0]);
	CU_ASSERT_EQUAL_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, rank, dims, &sp->in[0], &d), 0);
	for (int64_t i = 0; i < sp->in[0]->numel; i++)
		rt_value_set_f64(sp->in[0], i, (double)(i % 7) - 3);
	return sp;
}

static int has_string(const struct probe_aval *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].type == IR_ATTR_STRING && !strcmp(v[i].s, s))
			return 1;
	return 0;
}

static void free_vals(struct probe_aval *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		probe_aval_release(&v[i]);
	free(v);
}

static void test_candidates(void)
{
	static const int64_t d3[] = { 2, 3, 4 }, d4[] = { 1, 3, 5, 5 };
	const struct ir_op_schema *sm = ir_registry_find("", "Softmax", 13);
	const struct ir_op_schema *mp = ir_registry_find("", "MaxPool", 12);
	struct probe_spec *sp = spec_of("Softmax", 13, 3, d3), *pp = spec_of("MaxPool", 12, 4, d4);
	struct probe_aval *v;
	size_t n;

	/* axis: every axis but the default -1 */
	CU_ASSERT_EQUAL(probe_aval_candidates(sm, ir_op_schema_attr(sm, "axis"), sp, &v, &n), 0);
	CU_ASSERT_EQUAL(n, 3);
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(v[i].type, IR_ATTR_INT);
		CU_ASSERT_EQUAL(v[i].i, (int64_t)i);
	}
	free_vals(v, n);
	/* auto_pad: the spec's other values */
	CU_ASSERT_EQUAL(probe_aval_candidates(mp, ir_op_schema_attr(mp, "auto_pad"), pp, &v, &n), 0);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_TRUE(has_string(v, n, "SAME_UPPER") && has_string(v, n, "SAME_LOWER") &&
		       has_string(v, n, "VALID"));
	CU_ASSERT_FALSE(has_string(v, n, "NOTSET"));
	free_vals(v, n);
	/* strides of a 2-D pool: [1,1] and [2,2]; flags 0 and 1 */
	CU_ASSERT_EQUAL(probe_aval_candidates(mp, ir_op_schema_attr(mp, "strides"), pp, &v, &n), 0);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_TRUE(v[0].type == IR_ATTR_INTS && v[0].n == 2 && v[0].ints[0] == 1 && v[0].ints[1] == 1);
	CU_ASSERT_TRUE(v[1].type == IR_ATTR_INTS && v[1].n == 2 && v[1].ints[0] == 2 && v[1].ints[1] == 2);
	free_vals(v, n);
	CU_ASSERT_EQUAL(probe_aval_candidates(mp, ir_op_schema_attr(mp, "ceil_mode"), pp, &v, &n), 0);
	CU_ASSERT_EQUAL_FATAL(n, 1);   /* the default 0 is the base's */
	CU_ASSERT_EQUAL(v[0].i, 1);
	free_vals(v, n);
	probe_spec_free(sp);
	probe_spec_free(pp);
}

static void test_build(void)
{
	static const int64_t d2[] = { 2, 3 };
	const struct ir_op_schema *s = ir_registry_find("", "Relu", 14);
	struct probe_spec *sp = spec_of("Relu", 14, 2, d2);
	struct probe_case c;
	struct probe_built b;
	struct ir_diag d;

	memset(&c, 0, sizeof(c));
	c.id = (char *)"Relu-14.rank5";
	c.schema = s;
	c.opset = 14;
	c.kind = PROBE_RANK;
	c.rank = 5;
	c.dtype = IR_DTYPE_FLOAT;
	c.input = -1;
	ir_diag_init(&d);
	CU_ASSERT_EQUAL_FATAL(probe_build(&c, sp, 7, &b, &d), 0);
	CU_ASSERT_EQUAL(b.n_in, 1);
	CU_ASSERT_EQUAL(b.in[0]->rank, 5);
	CU_ASSERT_EQUAL(b.m->graph->n_inits, 0);
	CU_ASSERT_EQUAL(b.m->opsets[0].version, 14);
	CU_ASSERT_EQUAL_FATAL(b.n_out, 1);
	CU_ASSERT_EQUAL(b.out[0]->numel, 2 * 3 * 4 * 5 * 3);
	for (int64_t i = 0; i < b.out[0]->numel; i++) {
		double x = rt_value_get_f64(b.in[0], i);

		CU_ASSERT_EQUAL(rt_value_get_f64(b.out[0], i), x > 0 ? x : 0);
	}
	/* the output is declared from the reference */
	CU_ASSERT_EQUAL(b.m->graph->outputs[0].type->elem_type, IR_DTYPE_FLOAT);
	CU_ASSERT_EQUAL(b.m->graph->outputs[0].type->shape.n_dims, 5);
	probe_built_release(&b);
	/* input 0 constant: no graph input, an initializer */
	c.id = (char *)"Relu-14.const0";
	c.kind = PROBE_CONST;
	c.input = 0;
	CU_ASSERT_EQUAL_FATAL(probe_build(&c, sp, 7, &b, &d), 0);
	CU_ASSERT_EQUAL(b.n_in, 0);
	CU_ASSERT_EQUAL(b.m->graph->n_inits, 1);
	probe_built_release(&b);
	/* a dtype the op does not take makes no valid model */
	c.id = (char *)"Relu-14.bool";
	c.kind = PROBE_BASE;
	c.input = -1;
	c.dtype = IR_DTYPE_BOOL;
	CU_ASSERT_EQUAL(probe_build(&c, sp, 7, &b, &d), IR_EINVAL);
	probe_built_release(&b);
	probe_spec_free(sp);
}

static void test_compare(void)
{
	char dir[] = "/tmp/opmig-probe-XXXXXX", path[128], why[512];
	static const int64_t d1[] = { 4 }, d2[] = { 1, 4 };
	struct rt_value *want, *got;
	char y[] = "y", *names[] = { y };
	struct ir_diag d;
	double max_abs;
	int equal;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	ir_diag_init(&d);
	CU_ASSERT_EQUAL_FATAL(rt_tensor_new(NULL, IR_DTYPE_INT64, 1, d1, &want, &d), 0);
	CU_ASSERT_EQUAL_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, 2, d2, &got, &d), 0);
	for (int i = 0; i < 4; i++) {
		rt_value_set_f64(want, i, i * 10);
		rt_value_set_f64(got, i, i * 10);
	}
	/* none written */
	CU_ASSERT_EQUAL(probe_outputs_compare(dir, &want, names, 1, NULL, 0, &equal, &max_abs, why,
					      sizeof(why), &d), 0);
	CU_ASSERT_FALSE(equal);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "no output_0"));
	/* float [1,4] for int64 [4]: equal, said */
	snprintf(path, sizeof(path), "%s/output_0.npy", dir);
	CU_ASSERT_EQUAL(rt_npy_write(got, path, &d), 0);
	CU_ASSERT_EQUAL(probe_outputs_compare(dir, &want, names, 1, NULL, 0, &equal, &max_abs, why,
					      sizeof(why), &d), 0);
	CU_ASSERT_TRUE(equal);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "returned as float"));
	/* one element off by one: wrong */
	rt_value_set_f64(got, 2, 21);
	CU_ASSERT_EQUAL(rt_npy_write(got, path, &d), 0);
	CU_ASSERT_EQUAL(probe_outputs_compare(dir, &want, names, 1, NULL, 0, &equal, &max_abs, why,
					      sizeof(why), &d), 0);
	CU_ASSERT_FALSE(equal);
	CU_ASSERT_DOUBLE_EQUAL(max_abs, 1, 1e-12);
	/* a float output whose cancelled values carry the sum's error */
	rt_value_unref(want);
	CU_ASSERT_EQUAL_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, 2, d2, &want, &d), 0);
	rt_value_set_f64(want, 0, 100);
	rt_value_set_f64(want, 1, 0);
	rt_value_set_f64(want, 2, -50);
	rt_value_set_f64(want, 3, 1);
	rt_value_set_f64(got, 0, 100);
	rt_value_set_f64(got, 1, 1e-3);      /* 1e-3 <= 1e-5 + 1e-3 * 100 */
	rt_value_set_f64(got, 2, -50);
	rt_value_set_f64(got, 3, 1);
	CU_ASSERT_EQUAL(rt_npy_write(got, path, &d), 0);
	CU_ASSERT_EQUAL(probe_outputs_compare(dir, &want, names, 1, NULL, 0, &equal, &max_abs, why,
					      sizeof(why), &d), 0);
	CU_ASSERT_TRUE(equal);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "largest value"));
	rt_value_set_f64(got, 1, 0.5);       /* beyond that too */
	CU_ASSERT_EQUAL(rt_npy_write(got, path, &d), 0);
	CU_ASSERT_EQUAL(probe_outputs_compare(dir, &want, names, 1, NULL, 0, &equal, &max_abs, why,
					      sizeof(why), &d), 0);
	CU_ASSERT_FALSE(equal);
	rt_value_unref(want);
	rt_value_unref(got);
	unlink(path);
	rmdir(dir);
}

/* ---- derivation from hand-made verdicts ------------------------------- */

static struct probe_case *mk(struct probe_case *c, const char *op, int version, int opset,
			     enum probe_kind kind, int dtype, enum probe_verdict v)
{
	memset(c, 0, sizeof(*c));
	c->id = strdup("x");
	c->schema = ir_registry_find("", op, version);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c->schema);
	CU_ASSERT_EQUAL_FATAL(c->schema->since_version, version);
	c->opset = opset;
	c->kind = kind;
	c->dtype = dtype;
	c->verdict = v;
	c->input = -1;
	c->in0_rank = 3;
	c->max_rank = 3;
	c->max_abs = -1;
	c->io_dtypes = dtype ? RULES_DTYPE_BIT(dtype) : RULES_DTYPE_BIT(IR_DTYPE_FLOAT);
	c->in_dtypes = c->io_dtypes;
	c->message = strdup(v == PROBE_EQUAL ? "" : "it said no");
	return c;
}

static void attr_int(struct probe_case *c, const char *name, int64_t v, int64_t base)
{
	c->attr = strdup(name);
	c->value.type = IR_ATTR_INT;
	c->value.i = v;
	c->base_value.type = IR_ATTR_INT;
	c->base_value.i = base;
}

static const struct rules_op *op_of(const struct rules_target *t, const char *name)
{
	return rules_target_find_op(t, "ai.onnx", name);
}

static void test_derive(void)
{
	struct probe_case cs[40];
	struct probe_run r;
	struct rules_target t;
	const struct rules_op *op;
	struct ir_diag d;
	size_t n = 0;
	enum { F = IR_DTYPE_FLOAT, H = IR_DTYPE_FLOAT16, I = IR_DTYPE_INT32 };

	/* Relu: version 6 refused, 14 runs float32 and int32, float16 wrong,
	 * rank 5 crashes, input 0 constant fine */
	mk(&cs[n++], "Relu", 6, 12, PROBE_BASE, F, PROBE_REJECTED)->ref = 1;
	mk(&cs[n++], "Relu", 14, 14, PROBE_BASE, F, PROBE_EQUAL)->ref = 1;
	mk(&cs[n++], "Relu", 14, 14, PROBE_BASE, H, PROBE_WRONG);
	mk(&cs[n++], "Relu", 14, 14, PROBE_BASE, I, PROBE_EQUAL);
	for (int k = 1; k <= 5; k += k == 1 ? 3 : 1) {
		mk(&cs[n], "Relu", 14, 14, PROBE_RANK, F, k == 5 ? PROBE_CRASHED : PROBE_EQUAL);
		cs[n].rank = cs[n].max_rank = k;
		n++;
	}
	mk(&cs[n++], "Relu", 14, 14, PROBE_CONST, F, PROBE_EQUAL)->input = 0;
	/* Softmax: axis 0 refused, 1 and 2 fine (base -1 fine); input 1 n/a */
	mk(&cs[n++], "Softmax", 13, 13, PROBE_BASE, F, PROBE_EQUAL)->ref = 1;
	attr_int(mk(&cs[n++], "Softmax", 13, 13, PROBE_ATTR, F, PROBE_REJECTED), "axis", 0, -1);
	attr_int(mk(&cs[n++], "Softmax", 13, 13, PROBE_ATTR, F, PROBE_EQUAL), "axis", 1, -1);
	attr_int(mk(&cs[n++], "Softmax", 13, 13, PROBE_ATTR, F, PROBE_EQUAL), "axis", 2, -1);
	/* Gemm: transB 1 refused (a bound: max 0); input 1 must be constant */
	mk(&cs[n++], "Gemm", 13, 13, PROBE_BASE, F, PROBE_EQUAL)->ref = 1;
	attr_int(mk(&cs[n++], "Gemm", 13, 13, PROBE_ATTR, F, PROBE_REJECTED), "transB", 1, 0);
	mk(&cs[n++], "Gemm", 13, 13, PROBE_GRAPH, F, PROBE_REJECTED)->input = 1;
	mk(&cs[n++], "Gemm", 13, 13, PROBE_GRAPH, F, PROBE_EQUAL)->input = 2;
	/* Reshape: the graph-input shape fails only where the base did too:
	 * not a constness rule */
	mk(&cs[n++], "Reshape", 14, 14, PROBE_BASE, F, PROBE_TIMEOUT)->ref = 1;
	mk(&cs[n++], "Reshape", 14, 14, PROBE_GRAPH, F, PROBE_REJECTED)->input = 1;
	mk(&cs[n++], "Reshape", 14, 14, PROBE_BACKEND, 0, PROBE_EQUAL);
	/* Abs: nothing passes */
	mk(&cs[n++], "Abs", 13, 13, PROBE_BASE, F, PROBE_REJECTED)->ref = 1;
	mk(&cs[n++], "Abs", 13, 13, PROBE_BASE, I, PROBE_REJECTED);
	/* target-wide: opsets 12 fails, 13 and 14 pass; dynamic fails */
	mk(&cs[n++], "Relu", 6, 12, PROBE_OPSET, F, PROBE_REJECTED);
	mk(&cs[n++], "Relu", 13, 13, PROBE_OPSET, F, PROBE_EQUAL);
	mk(&cs[n++], "Relu", 14, 14, PROBE_OPSET, F, PROBE_EQUAL);
	mk(&cs[n++], "Relu", 14, 14, PROBE_DYNAMIC, F, PROBE_REJECTED);
	memset(&r, 0, sizeof(r));
	r.cases = cs;
	r.n_cases = n;
	r.command = strdup("rt {model}");
	r.runtime = strdup("rt 1.0");
	r.opset_min = 12;
	r.opset_max = 14;
	ir_diag_init(&d);
	CU_ASSERT_EQUAL_FATAL(probe_derive(&r, "x", "X", "opmig 0", "2026-01-01", &t, &d), 0);
	CU_ASSERT_EQUAL(t.opset_min, 13);
	CU_ASSERT_EQUAL(t.opset_max, 14);
	CU_ASSERT_EQUAL(t.max_rank, 4);
	CU_ASSERT_EQUAL(t.dynamic_shapes, 0);
	/* float16 was never right anywhere */
	CU_ASSERT_TRUE(t.has_missing_dtypes);
	CU_ASSERT_EQUAL(t.missing_dtypes, RULES_DTYPE_BIT(H));
	CU_ASSERT_EQUAL(t.n_sources, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.sources[0], "rt {model}"));
	CU_ASSERT_STRING_EQUAL(t.sources[1], "runtime: rt 1.0");
	CU_ASSERT_EQUAL(t.n_ops, 5);
	op = op_of(&t, "Relu");
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	CU_ASSERT_TRUE(op->supported);
	CU_ASSERT_EQUAL(op->version_min, 14);
	CU_ASSERT_EQUAL(op->version_max, RULES_UNBOUNDED);
	CU_ASSERT_EQUAL(op->dtypes, RULES_DTYPE_BIT(F) | RULES_DTYPE_BIT(I));
	CU_ASSERT_EQUAL_FATAL(op->n_inputs, 1);
	CU_ASSERT_EQUAL(op->inputs[0].index, 0);
	CU_ASSERT_EQUAL(op->inputs[0].min_rank, 0);
	CU_ASSERT_EQUAL(op->inputs[0].max_rank, 4);
	CU_ASSERT_FALSE(op->inputs[0].is_const);
	CU_ASSERT_PTR_NOT_NULL(strstr(op->notes, "accepted but wrong"));
	op = op_of(&t, "Softmax");
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	CU_ASSERT_EQUAL(op->dtypes, 0);
	CU_ASSERT_EQUAL_FATAL(op->n_attrs, 1);
	CU_ASSERT_STRING_EQUAL(op->attrs[0].name, "axis");
	CU_ASSERT_EQUAL_FATAL(op->attrs[0].n_allowed, 3);
	CU_ASSERT_EQUAL(op->attrs[0].allowed[0].num, -1);
	CU_ASSERT_EQUAL(op->attrs[0].allowed[1].num, 1);
	CU_ASSERT_EQUAL(op->attrs[0].allowed[2].num, 2);
	op = op_of(&t, "Gemm");
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	CU_ASSERT_EQUAL_FATAL(op->n_attrs, 1);
	CU_ASSERT_TRUE(op->attrs[0].has_max && op->attrs[0].max == 0 && !op->attrs[0].n_allowed);
	CU_ASSERT_EQUAL_FATAL(op->n_inputs, 1);
	CU_ASSERT_EQUAL(op->inputs[0].index, 1);
	CU_ASSERT_TRUE(op->inputs[0].is_const);
	op = op_of(&t, "Reshape");
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	CU_ASSERT_TRUE(op->supported);
	CU_ASSERT_EQUAL(op->n_inputs, 0);
	op = op_of(&t, "Abs");
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	CU_ASSERT_FALSE(op->supported);
	CU_ASSERT_PTR_NOT_NULL(strstr(op->notes, "it said no"));
	rules_target_release(&t);
	for (size_t i = 0; i < n; i++)
		probe_case_release(&cs[i]);
	free(r.command);
	free(r.runtime);
}

static const struct unit_test tests[] = {
	{ "command templates and quoting", test_template },
	{ "verdict and message of a command", test_classify },
	{ "attribute values tried", test_candidates },
	{ "building a case", test_build },
	{ "comparing a runtime's outputs", test_compare },
	{ "rules derived from verdicts", test_derive },
	{ NULL, NULL },
};

int suite_probe_register(void)
{
	return unit_add_suite("probe", tests);
}
