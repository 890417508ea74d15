/* suite_specfn.c: spec operators run through their function bodies: the
 * generated table (sorted, unique, every body parses and belongs to a
 * registry entry), parsing bad bodies and under failing allocations, and
 * the interpreter's fallback: with the kernels of the ops hidden
 * (rt_kernel_hide, what OPMIG_NO_KERNEL does) a model gives the same
 * outputs as with them, a body op without kernel names the calling node,
 * and session creation cleans up after every failed allocation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/registry.h"
#include "ir/spec_functions.h"
#include "runtime/inputs.h"
#include "runtime/rt_int.h"
#include "tests/unit/fault.h"
#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"

/* Every op of the table, hidden in the fallback tests. */
#define SPEC_OPS "BlackmanWindow,DynamicQuantizeLinear,GreaterOrEqual," \
	"HammingWindow,HannWindow,HardSwish,LessOrEqual," \
	"MeanVarianceNormalization,Range"

static void test_table(void)
{
	const struct ir_spec_function *t = ir_spec_function_table;

	CU_ASSERT_FATAL(ir_spec_function_table_len >= 12);
	for (size_t i = 0; i < ir_spec_function_table_len; i++) {
		const struct ir_op_schema *sc =
			ir_registry_find(t[i].domain, t[i].op, t[i].since_version);
		struct ir_function *fn = NULL;
		struct ir_diag d;

		if (i) {
			int c = strcmp(t[i - 1].domain, t[i].domain);

			if (!c)
				c = strcmp(t[i - 1].op, t[i].op);
			if (!c)
				c = t[i - 1].since_version - t[i].since_version;
			CU_ASSERT(c < 0);
		}
		CU_ASSERT(ir_spec_function_find(t[i].domain, t[i].op,
						t[i].since_version) == &t[i]);
		/* the body of a registry entry of exactly that version */
		CU_ASSERT_FATAL(sc != NULL);
		CU_ASSERT(sc->since_version == t[i].since_version);
		ir_diag_init(&d);
		CU_ASSERT_FATAL(ir_function_parse(t[i].body, t[i].len, &fn, &d) == 0);
		CU_ASSERT_STRING_EQUAL(ir_s(fn->name), t[i].op);
		CU_ASSERT(fn->body && fn->body->n_nodes > 0);
		CU_ASSERT(fn->n_inputs >= (size_t)sc->min_inputs);
		CU_ASSERT(fn->n_outputs >= (size_t)sc->min_outputs);
		for (size_t a = 0; a < fn->n_attr_names; a++)
			CU_ASSERT(ir_op_schema_attr(sc, fn->attr_names[a]) != NULL);
		ir_function_free(fn);
	}
	CU_ASSERT(ir_spec_function_find("", "HardSwish", 14) != NULL);
	CU_ASSERT(ir_spec_function_find("ai.onnx", "HardSwish", 22) == NULL);
	CU_ASSERT(ir_spec_function_find("ai.onnx", "Relu", 14) == NULL);
	/* context-dependent bodies are left out */
	CU_ASSERT(ir_spec_function_find("ai.onnx", "Softmax", 13) == NULL);
}

static void test_parse_bad(void)
{
	const struct ir_spec_function *e = ir_spec_function_find("", "Range", 11);
	static const unsigned char junk[] = { 0x3a, 0x7f, 0x01 };
	struct ir_function *fn = (struct ir_function *)1;
	struct ir_diag d;

	CU_ASSERT_FATAL(e != NULL);
	ir_diag_init(&d);
	CU_ASSERT(ir_function_parse(junk, sizeof(junk), &fn, &d) == IR_EINVAL);
	CU_ASSERT(fn == NULL);
	CU_ASSERT(d.msg[0] != 0);
	ir_diag_init(&d);
	CU_ASSERT(ir_function_parse(e->body, e->len - 7, &fn, &d) == IR_EINVAL);
	CU_ASSERT(fn == NULL);
	ir_function_free(NULL);
}

static void test_parse_faults(void)
{
	const struct ir_spec_function *e = ir_spec_function_find("", "Range", 11);
	long total, fails = 0;
	struct ir_function *fn;
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	fault_fail_at(1L << 60);
	rc = ir_function_parse(e->body, e->len, &fn, &d);
	total = fault_calls();
	fault_fail_at(0);
	CU_ASSERT_FATAL(rc == 0);
	ir_function_free(fn);
	for (long n = 1; n <= total; n++) {
		ir_diag_init(&d);
		fault_fail_at(n);
		rc = ir_function_parse(e->body, e->len, &fn, &d);
		fault_fail_at(0);
		if (rc == 0) {
			ir_function_free(fn);
			continue;
		}
		fails++;
		CU_ASSERT(rc == IR_ENOMEM && fn == NULL);
	}
	CU_ASSERT(fails > 0);
}

/* A model of every op with a body, at opset 17, attributes left to
 * their defaults on some nodes (periodic, output_datatype, axes). */
static struct ir_model *spec_model(void)
{
	struct ir_model *m = tm_new(17);
	const double size = 10, range[] = { 1, 9.5, 1.25 };
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 4, 5), 4);
	tm_init(m, "size", IR_DTYPE_INT64, NULL, 0, &size);
	tm_init(m, "start", IR_DTYPE_FLOAT, NULL, 0, &range[0]);
	tm_init(m, "limit", IR_DTYPE_FLOAT, NULL, 0, &range[1]);
	tm_init(m, "delta", IR_DTYPE_FLOAT, NULL, 0, &range[2]);
	tm_node(m, "HardSwish", NULL, TM_NAMES("x"), 1, TM_NAMES("hs"), 1);
	tm_node(m, "MeanVarianceNormalization", NULL, TM_NAMES("x"), 1,
		TM_NAMES("mvn"), 1);
	n = tm_node(m, "MeanVarianceNormalization", NULL, TM_NAMES("x"), 1,
		    TM_NAMES("mvn1"), 1);
	CU_ASSERT_FATAL(ir_node_set_ints(n, "axes", TM_DIMS(1, 3), 2) == 0);
	tm_node(m, "GreaterOrEqual", NULL, TM_NAMES("x", "hs"), 2, TM_NAMES("ge"), 1);
	tm_node(m, "LessOrEqual", NULL, TM_NAMES("x", "hs"), 2, TM_NAMES("le"), 1);
	tm_node(m, "HannWindow", NULL, TM_NAMES("size"), 1, TM_NAMES("hann"), 1);
	n = tm_node(m, "HammingWindow", NULL, TM_NAMES("size"), 1, TM_NAMES("hamming"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "periodic", 0) == 0);
	n = tm_node(m, "BlackmanWindow", NULL, TM_NAMES("size"), 1,
		    TM_NAMES("blackman"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "output_datatype", IR_DTYPE_DOUBLE) == 0);
	tm_node(m, "Range", NULL, TM_NAMES("start", "limit", "delta"), 3,
		TM_NAMES("range"), 1);
	tm_node(m, "DynamicQuantizeLinear", NULL, TM_NAMES("x"), 1,
		TM_NAMES("q", "scale", "zp"), 3);
	tm_output(m, "hs", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 4, 5), 4);
	tm_output(m, "mvn", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 4, 5), 4);
	tm_output(m, "mvn1", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 4, 5), 4);
	tm_output(m, "ge", IR_DTYPE_BOOL, TM_DIMS(2, 3, 4, 5), 4);
	tm_output(m, "le", IR_DTYPE_BOOL, TM_DIMS(2, 3, 4, 5), 4);
	tm_output(m, "hann", IR_DTYPE_FLOAT, TM_DIMS(10), 1);
	tm_output(m, "hamming", IR_DTYPE_FLOAT, TM_DIMS(10), 1);
	tm_output(m, "blackman", IR_DTYPE_DOUBLE, TM_DIMS(10), 1);
	tm_output(m, "range", IR_DTYPE_FLOAT, TM_DIMS(7), 1);
	tm_output(m, "q", IR_DTYPE_UINT8, TM_DIMS(2, 3, 4, 5), 4);
	tm_output(m, "scale", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "zp", IR_DTYPE_UINT8, NULL, 0);
	tm_verify(m);
	return m;
}

#define N_SPEC_OUT 12

static void release(struct rt_value **v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		rt_value_unref(v[i]);
		v[i] = NULL;
	}
}

static void test_fallback_same(void)
{
	struct ir_model *m = spec_model();
	struct rt_value *want[N_SPEC_OUT] = { 0 }, *got[N_SPEC_OUT] = { 0 };

	CU_ASSERT_FATAL(tm_run(m, 7, want, N_SPEC_OUT) == 0);
	rt_kernel_hide(SPEC_OPS);
	CU_ASSERT(rt_kernel_find("", "HardSwish", 14) == NULL);
	CU_ASSERT(rt_kernel_find("", "Relu", 14) != NULL);
	CU_ASSERT(tm_run(m, 7, got, N_SPEC_OUT) == 0);
	rt_kernel_hide(NULL);
	CU_ASSERT(rt_kernel_find("", "HardSwish", 14) != NULL);
	for (size_t i = 0; i < N_SPEC_OUT; i++) {
		double worst = 0;

		CU_ASSERT_FATAL(want[i] && got[i]);
		CU_ASSERT(want[i]->dtype == got[i]->dtype);
		CU_ASSERT_FATAL(want[i]->numel == got[i]->numel);
		CU_ASSERT(want[i]->rank == got[i]->rank);
		for (int64_t j = 0; j < want[i]->numel; j++) {
			double a = rt_load_f64(want[i]->dtype, want[i]->data, j);
			double b = rt_load_f64(got[i]->dtype, got[i]->data, j);
			double e = fabs(a - b) / (1e-5 + 1e-4 * fabs(a));

			if (e > worst)
				worst = e;
		}
		if (worst > 1)
			fprintf(stderr, "\noutput %zu: kernel and function body differ\n", i);
		CU_ASSERT(worst <= 1);
	}
	release(want, N_SPEC_OUT);
	release(got, N_SPEC_OUT);
	ir_model_free(m);
}

/* Session creation and one run, without test assertions (for faults). */
static int session_run(struct ir_model *m, struct rt_value **outs,
		       struct ir_diag *d)
{
	struct rt_opts o = { .threads = 1 };
	struct rt_input_opts io = { .seed = 3 };
	struct rt_value *ins[1] = { 0 };
	struct rt_session *s = NULL;
	int rc;

	if ((rc = rt_session_new(m, &o, &s, d)) < 0)
		return rc;
	if ((rc = rt_inputs_random(s, m, &io, ins, d)) == 0)
		rc = rt_session_run(s, ins, rt_session_n_inputs(s), outs, d);
	rt_inputs_release(ins, rt_session_n_inputs(s));
	rt_session_free(s);
	return rc;
}

static void test_fallback_missing(void)
{
	struct ir_model *m = tm_new(14);
	struct rt_value *out[1] = { 0 };
	struct ir_diag d;
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3), 1);
	n = tm_node(m, "HardSwish", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	free(n->name);
	CU_ASSERT_FATAL((n->name = strdup("hs")) != NULL);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(3), 1);
	tm_verify(m);
	/* a body op without kernel: the message names the calling node */
	rt_kernel_hide("HardSigmoid,HardSwish");
	ir_diag_init(&d);
	CU_ASSERT(session_run(m, out, &d) == IR_EINVAL);
	CU_ASSERT(strstr(d.msg, "no kernel for ai.onnx HardSigmoid version 6") != NULL);
	CU_ASSERT(strstr(d.msg, "function body of ai.onnx HardSwish version 14 run for node 'hs' (HardSwish)") != NULL);
	/* an op without kernel and without body */
	rt_kernel_hide("Mul,HardSwish");
	ir_diag_init(&d);
	CU_ASSERT(session_run(m, out, &d) == IR_EINVAL);
	CU_ASSERT(strstr(d.msg, "(Mul): no kernel for ai.onnx Mul version 14") != NULL);
	rt_kernel_hide(NULL);
	ir_diag_init(&d);
	CU_ASSERT(session_run(m, out, &d) == 0);
	release(out, 1);
	ir_model_free(m);
}

static void test_fallback_faults(void)
{
	struct ir_model *m = spec_model();
	struct rt_value *out[N_SPEC_OUT] = { 0 };
	long total, fails = 0;
	struct ir_diag d;
	int rc;

	rt_kernel_hide(SPEC_OPS);
	ir_diag_init(&d);
	fault_fail_at(1L << 60);
	rc = session_run(m, out, &d);
	total = fault_calls();
	fault_fail_at(0);
	release(out, N_SPEC_OUT);
	CU_ASSERT_FATAL(rc == 0);
	for (long n = 1; n <= total; n++) {
		ir_diag_init(&d);
		fault_fail_at(n);
		rc = session_run(m, out, &d);
		fault_fail_at(0);
		release(out, N_SPEC_OUT);
		if (rc == 0)
			continue;
		fails++;
		if (rc != IR_ENOMEM)
			fprintf(stderr, "\nallocation %ld: status %d, '%s'\n", n, rc, d.msg);
		CU_ASSERT(rc == IR_ENOMEM);
	}
	rt_kernel_hide(NULL);
	CU_ASSERT(fails > 0);
	ir_model_free(m);
}

static const struct unit_test tests[] = {
	{ "table", test_table },
	{ "parse_bad", test_parse_bad },
	{ "parse_faults", test_parse_faults },
	{ "fallback_same", test_fallback_same },
	{ "fallback_missing", test_fallback_missing },
	{ "fallback_faults", test_fallback_faults },
	{ NULL, NULL }
};

int suite_specfn_register(void)
{
	return unit_add_suite("specfn", tests);
}
