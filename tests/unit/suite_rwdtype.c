/* suite_rwdtype.c: property tests of the dtype passes (narrow-int64,
 * narrow-float64) and the precision pass (fp16) on small models: each
 * model is copied, the pass runs on one copy for a target lacking int64
 * and float64 (with or without a Cast taking int64), the result verifies,
 * keeps the names of the values it did not replace, has the dtypes the
 * pass promises, and validates against the original through the name map
 * the pass wrote (exactly for int64, within the fp32 defaults for
 * float64, within the fp16 defaults for fp16); values beyond int32 are
 * refused with a note. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rewrite.h"
#include "validators/validate.h"
#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"

#define BIT(t) RULES_DTYPE_BIT(t)

/* A target without int64 and float64 whose only op is Cast (taking
 * int64 when cast_wide), so the passes see the missing dtypes. */
static struct rules_op cast_op;
static struct rules_target lacking;

static const struct rules_target *target(int cast_wide)
{
	memset(&cast_op, 0, sizeof(cast_op));
	cast_op.domain = (char *)"ai.onnx";
	cast_op.name = (char *)"Cast";
	cast_op.supported = 1;
	cast_op.version_min = 1;
	cast_op.version_max = RULES_UNBOUNDED;
	cast_op.dtypes = BIT(IR_DTYPE_FLOAT) | BIT(IR_DTYPE_INT32) |
			 (cast_wide ? BIT(IR_DTYPE_INT64) : 0);
	memset(&lacking, 0, sizeof(lacking));
	lacking.id = (char *)"lacking";
	lacking.opset_min = lacking.opset_max = -1;
	lacking.has_missing_dtypes = 1;
	lacking.missing_dtypes = BIT(IR_DTYPE_INT64) | BIT(IR_DTYPE_DOUBLE);
	lacking.dynamic_shapes = 1;
	lacking.max_rank = -1;
	lacking.device_memory_bytes = -1;
	lacking.ops = &cast_op;
	lacking.n_ops = 1;
	lacking.resolved = 1;
	return &lacking;
}

struct run {
	struct rw_ctx ctx;
	struct ir_diag d;
	size_t changed;
};

/* Run pass `name` on m for t (fp16_io for the fp16 pass). */
static void run_pass(struct run *r, struct ir_model *m, const struct rules_target *t,
		     const char *name, int fp16_io)
{
	const struct rw_pass *p = rw_pass_find(name);

	CU_ASSERT_FATAL(p != NULL);
	ir_diag_init(&r->d);
	CU_ASSERT_FATAL(rw_ctx_init(&r->ctx, m, t, &r->d) == 0);
	r->ctx.fp16_io = fp16_io;
	if (rw_run(&r->ctx, p, &r->changed) < 0)
		fprintf(stderr, "\n%s: %s\n", name, r->d.msg);
	CU_ASSERT_FATAL(r->d.status == 0);
	tm_verify(m);
}

/* Validate cand against ref through the pass's name map; returns the
 * largest max_abs over the outputs (INFINITY when not equivalent). */
static double check_equiv(struct ir_model *ref, struct ir_model *cand,
			  const struct val_map *map, int precision)
{
	struct val_opts vo;
	struct val_report rep;
	struct ir_diag d;
	char bad[256];
	double worst = 0;

	memset(&vo, 0, sizeof(vo));
	vo.precision = precision;
	vo.samples = 3;
	vo.gen.seed = 7;
	vo.map = map;
	vo.threads = 1;
	ir_diag_init(&d);
	if (val_run(ref, cand, &vo, &rep, bad, sizeof(bad), &d) < 0) {
		fprintf(stderr, "\nvalidate: %s\n", d.msg);
		CU_FAIL("validation failed to run");
		return INFINITY;
	}
	for (size_t i = 0; i < rep.n_outputs; i++) {
		if (!rep.outputs[i].m.ok)
			fprintf(stderr, "\noutput '%s': %s\n", rep.outputs[i].ref_name,
				rep.outputs[i].m.why);
		worst = fmax(worst, rep.outputs[i].m.max_abs);
	}
	if (!rep.equivalent)
		worst = INFINITY;
	val_report_release(&rep);
	return worst;
}

static int dtype_of(struct ir_model *m, const char *name)
{
	struct ir_value *v = ir_graph_find(m->graph, name);
	struct ir_diag d;
	struct ir_infer inf;
	int dt = 0;

	CU_ASSERT_FATAL(v != NULL);
	if (v->init)
		return v->init->dtype;
	ir_infer_init(&inf);
	ir_diag_init(&d);
	if (ir_infer_model(m, &inf, &d) == 0 && ir_infer_get(&inf, v))
		dt = ir_infer_get(&inf, v)->dtype;
	ir_infer_release(&inf);
	return dt;
}

static size_t count_op(const struct ir_model *m, const char *op)
{
	size_t k = 0;

	for (size_t i = 0; i < m->graph->n_nodes; i++)
		k += !strcmp(ir_s(m->graph->nodes[i]->op_type), op);
	return k;
}

static int has_note(const struct rw_ctx *c, const char *a, const char *b)
{
	for (size_t i = 0; i < c->n_notes; i++)
		if (strstr(c->notes[i], a) && (!b || strstr(c->notes[i], b)))
			return 1;
	return 0;
}

static const struct val_map_entry *map_entry(const struct rw_ctx *c, enum val_map_kind k,
					     const char *name)
{
	return val_map_by_ref(&c->map, k, name);
}

/* ---- models ---------------------------------------------------------- */

/* ids (int64 token ids) -> Gather(emb) -> Gather(sel, axis 1) -> Reshape(shp). */
static struct ir_model *m_tokens(void)
{
	struct ir_model *m = tm_new(13);
	double emb[40], sel[3] = { 2, 0, 1 }, shp[2] = { 6, 3 };

	for (int i = 0; i < 40; i++)
		emb[i] = sin(i * 0.7);
	tm_input(m, "ids", IR_DTYPE_INT64, TM_DIMS(2, 3), 2);
	tm_init(m, "emb", IR_DTYPE_FLOAT, TM_DIMS(10, 4), 2, emb);
	tm_init(m, "sel", IR_DTYPE_INT64, TM_DIMS(3), 1, sel);
	tm_init(m, "shp", IR_DTYPE_INT64, TM_DIMS(2), 1, shp);
	tm_node(m, "Gather", NULL, TM_NAMES("emb", "ids"), 2, TM_NAMES("e"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(tm_node(m, "Gather", NULL, TM_NAMES("e", "sel"), 2,
						TM_NAMES("e2"), 1), "axis", 2) == 0);
	tm_node(m, "Reshape", NULL, TM_NAMES("e2", "shp"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(6, 3), 2);
	tm_verify(m);
	return m;
}

/* Shape arithmetic: s = Shape(x); d = Gather(s, 1); k = Div(d, two);
 * Reshape(x, Concat(k, minus1))... and an int64 graph output z = d * 3. */
static struct ir_model *m_shapes(void)
{
	struct ir_model *m = tm_new(13);
	double one[1] = { 1 }, two[1] = { 2 }, m1[1] = { -1 }, three[1] = { 3 };

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 8), 2);
	tm_init(m, "one", IR_DTYPE_INT64, TM_DIMS(1), 1, one);
	tm_init(m, "two", IR_DTYPE_INT64, NULL, 0, two);
	tm_init(m, "minus1", IR_DTYPE_INT64, TM_DIMS(1), 1, m1);
	tm_init(m, "three", IR_DTYPE_INT64, NULL, 0, three);
	tm_node(m, "Shape", NULL, TM_NAMES("x"), 1, TM_NAMES("s"), 1);
	tm_node(m, "Gather", NULL, TM_NAMES("s", "one"), 2, TM_NAMES("d"), 1);
	tm_node(m, "Div", NULL, TM_NAMES("d", "two"), 2, TM_NAMES("k"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(tm_node(m, "Concat", NULL, TM_NAMES("minus1", "k"), 2,
						TM_NAMES("shape"), 1), "axis", 0) == 0);
	tm_node(m, "Reshape", NULL, TM_NAMES("x", "shape"), 2, TM_NAMES("y"), 1);
	tm_node(m, "Mul", NULL, TM_NAMES("d", "three"), 2, TM_NAMES("z"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "z", IR_DTYPE_INT64, TM_DIMS(1), 1);
	tm_verify(m);
	return m;
}

/* ids + big, where big holds a value beyond int32. */
static struct ir_model *m_big(void)
{
	struct ir_model *m = tm_new(13);
	double big[4] = { 3e9, 1, 2, 3 };

	tm_input(m, "ids", IR_DTYPE_INT64, TM_DIMS(4), 1);
	tm_init(m, "big", IR_DTYPE_INT64, TM_DIMS(4), 1, big);
	tm_node(m, "Add", NULL, TM_NAMES("ids", "big"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_INT64, TM_DIMS(4), 1);
	tm_verify(m);
	return m;
}

/* float64: y = Cast(x * k, to double) + k, all double. */
static struct ir_model *m_double(void)
{
	struct ir_model *m = tm_new(13);
	double k[6] = { 0.5, -1.25, 2, 1e-3, 3.5, -7 };

	tm_input(m, "x", IR_DTYPE_DOUBLE, TM_DIMS(2, 3), 2);
	tm_init(m, "k", IR_DTYPE_DOUBLE, TM_DIMS(2, 3), 2, k);
	tm_node(m, "Mul", NULL, TM_NAMES("x", "k"), 2, TM_NAMES("a"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(tm_node(m, "Cast", NULL, TM_NAMES("a"), 1,
						TM_NAMES("b"), 1), "to", IR_DTYPE_DOUBLE) == 0);
	tm_node(m, "Add", NULL, TM_NAMES("b", "k"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_DOUBLE, TM_DIMS(2, 3), 2);
	tm_verify(m);
	return m;
}

/* An MLP with sensitive ops: MatMul, Add, Relu, ReduceMean (16 elements),
 * Softmax, Exp, and a ReduceSum over 512 elements. */
static struct ir_model *m_mlp(uint64_t seed)
{
	struct ir_model *m = tm_new(13);
	double w[16 * 16], b[16];
	int64_t ax[1] = { 1 };

	for (int i = 0; i < 256; i++)
		w[i] = sin((double)(i + 1) * 0.37 + (double)seed) * 0.5;
	for (int i = 0; i < 16; i++)
		b[i] = cos((double)i + (double)seed) * 0.1;
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4, 16), 2);
	tm_input(m, "big", IR_DTYPE_FLOAT, TM_DIMS(2, 512), 2);
	tm_init(m, "w", IR_DTYPE_FLOAT, TM_DIMS(16, 16), 2, w);
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(16), 1, b);
	tm_node(m, "MatMul", NULL, TM_NAMES("x", "w"), 2, TM_NAMES("h1"), 1);
	tm_node(m, "Add", NULL, TM_NAMES("h1", "b"), 2, TM_NAMES("h2"), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("h2"), 1, TM_NAMES("h3"), 1);
	tm_node(m, "Softmax", NULL, TM_NAMES("h3"), 1, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_ints(tm_node(m, "ReduceMean", NULL, TM_NAMES("h3"), 1,
						 TM_NAMES("mean"), 1), "axes", ax, 1) == 0);
	tm_node(m, "Exp", NULL, TM_NAMES("mean"), 1, TM_NAMES("e"), 1);
	tm_node(m, "Mul", NULL, TM_NAMES("e", "b"), 2, TM_NAMES("z"), 1);
	tm_node(m, "ReduceSum", NULL, TM_NAMES("big"), 1, TM_NAMES("s"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(4, 16), 2);
	tm_output(m, "z", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "s", IR_DTYPE_FLOAT, NULL, 0);
	tm_verify(m);
	return m;
}

/* ---- tests ----------------------------------------------------------- */

/* Token ids and index constants narrow; the Reshape shape constant stays
 * int64 (its signature); the input becomes int32 when the target's Cast
 * takes no int64, else stays int64 behind a Cast. */
static void test_int64_tokens(void)
{
	for (int wide = 0; wide < 2; wide++) {
		struct ir_model *ref = m_tokens(), *m = m_tokens();
		const struct val_map_entry *e;
		struct run r;

		run_pass(&r, m, target(wide), "narrow-int64", 0);
		CU_ASSERT(r.changed > 0);
		CU_ASSERT_EQUAL(dtype_of(m, "sel"), IR_DTYPE_INT32);
		CU_ASSERT_EQUAL(dtype_of(m, "shp"), IR_DTYPE_INT64);
		CU_ASSERT(has_note(&r.ctx, "constant", "shp"));
		CU_ASSERT_STRING_EQUAL(ir_s(m->graph->outputs[0].value->name), "y");
		e = map_entry(&r.ctx, VAL_MAP_INPUT, "ids");
		if (wide) {
			CU_ASSERT(e == NULL);
			CU_ASSERT_EQUAL(m->graph->inputs[0].type->elem_type, IR_DTYPE_INT64);
			CU_ASSERT_EQUAL(count_op(m, "Cast"), 1);
		} else {
			CU_ASSERT(e != NULL && e->dtype == IR_DTYPE_INT32);
			CU_ASSERT_EQUAL(m->graph->inputs[0].type->elem_type, IR_DTYPE_INT32);
			CU_ASSERT_EQUAL(count_op(m, "Cast"), 0);
		}
		CU_ASSERT(has_note(&r.ctx, "input 'ids'", "assumed to fit"));
		CU_ASSERT(check_equiv(ref, m, &r.ctx.map, VAL_FP32) == 0);
		rw_ctx_release(&r.ctx);
		ir_model_free(ref);
		ir_model_free(m);
	}
}

/* Shape values bounded by static dims narrow: Shape gets a Cast after it,
 * Reshape's shape a Cast back to int64, the int64 graph output becomes
 * int32 with the name map saying so; the results are exact. */
static void test_int64_shapes(void)
{
	struct ir_model *ref = m_shapes(), *m = m_shapes();
	const struct val_map_entry *e;
	struct ir_value *s;
	struct run r;

	run_pass(&r, m, target(0), "narrow-int64", 0);
	CU_ASSERT(r.changed > 0);
	CU_ASSERT_EQUAL(dtype_of(m, "s"), IR_DTYPE_INT32);
	CU_ASSERT_EQUAL(dtype_of(m, "d"), IR_DTYPE_INT32);
	CU_ASSERT_EQUAL(dtype_of(m, "k"), IR_DTYPE_INT32);
	CU_ASSERT_EQUAL(dtype_of(m, "z"), IR_DTYPE_INT32);
	CU_ASSERT_EQUAL(dtype_of(m, "one"), IR_DTYPE_INT32);
	s = ir_graph_find(m->graph, "s");
	CU_ASSERT_FATAL(s != NULL && s->producer != NULL);
	CU_ASSERT_STRING_EQUAL(ir_s(s->producer->op_type), "Cast");
	CU_ASSERT_EQUAL(count_op(m, "Cast"), 2);
	e = map_entry(&r.ctx, VAL_MAP_OUTPUT, "z");
	CU_ASSERT(e != NULL && e->dtype == IR_DTYPE_INT32);
	CU_ASSERT_EQUAL(m->graph->outputs[1].type->elem_type, IR_DTYPE_INT32);
	CU_ASSERT(check_equiv(ref, m, &r.ctx.map, VAL_FP32) == 0);
	rw_ctx_release(&r.ctx);
	ir_model_free(ref);
	ir_model_free(m);
}

/* Values set by attributes: a Constant (value_ints) read only as a
 * ConstantOfShape shape stays int64; the ConstantOfShape's int64 fill and
 * a Range narrow (their attribute and inputs follow); exact. */
static void test_int64_attrs(void)
{
	struct ir_model *ms[2];
	double z[1] = { 0 }, lim[1] = { 3 }, one[1] = { 1 };
	const struct ir_attr *a;
	struct ir_value *f;
	struct run r;

	for (int k = 0; k < 2; k++) {
		struct ir_model *m = ms[k] = tm_new(13);
		struct ir_tensor *t;
		int64_t five = 5, dims[2] = { 2, 3 };
		struct ir_node *n;

		tm_input(m, "x", IR_DTYPE_INT64, TM_DIMS(2, 3), 2);
		tm_init(m, "z0", IR_DTYPE_INT64, NULL, 0, z);
		tm_init(m, "lim", IR_DTYPE_INT64, NULL, 0, lim);
		tm_init(m, "one", IR_DTYPE_INT64, NULL, 0, one);
		n = tm_node(m, "Constant", NULL, NULL, 0, TM_NAMES("c"), 1);
		CU_ASSERT_FATAL(ir_node_set_ints(n, "value_ints", dims, 2) == 0);
		n = tm_node(m, "ConstantOfShape", NULL, TM_NAMES("c"), 1, TM_NAMES("f"), 1);
		t = ir_tensor_new_raw("value", IR_DTYPE_INT64, dims, 1, &five, sizeof(five));
		CU_ASSERT_FATAL(t != NULL);
		t->dims[0] = 1;
		CU_ASSERT_FATAL(ir_node_set_tensor(n, "value", t) == 0);
		tm_node(m, "Range", NULL, TM_NAMES("z0", "lim", "one"), 3, TM_NAMES("rg"), 1);
		tm_node(m, "Add", NULL, TM_NAMES("f", "rg"), 2, TM_NAMES("s"), 1);
		tm_node(m, "Neg", NULL, TM_NAMES("x"), 1, TM_NAMES("z"), 1);
		tm_output(m, "s", IR_DTYPE_INT64, TM_DIMS(2, 3), 2);
		tm_output(m, "z", IR_DTYPE_INT64, TM_DIMS(2, 3), 2);
		tm_verify(m);
	}
	run_pass(&r, ms[1], target(0), "narrow-int64", 0);
	CU_ASSERT_EQUAL(dtype_of(ms[1], "c"), IR_DTYPE_INT64);
	CU_ASSERT_EQUAL(dtype_of(ms[1], "f"), IR_DTYPE_INT32);
	CU_ASSERT_EQUAL(dtype_of(ms[1], "rg"), IR_DTYPE_INT32);
	f = ir_graph_find(ms[1]->graph, "f");
	CU_ASSERT_FATAL(f && f->producer);
	a = ir_node_attr(f->producer, "value");
	CU_ASSERT(a && a->t && a->t->dtype == IR_DTYPE_INT32);
	CU_ASSERT_EQUAL(dtype_of(ms[1], "s"), IR_DTYPE_INT32);
	/* z = -x: x (an input) is unbounded, so z and x stay int64 */
	CU_ASSERT_EQUAL(dtype_of(ms[1], "z"), IR_DTYPE_INT64);
	CU_ASSERT(has_note(&r.ctx, "'z' stays int64", "cannot bound"));
	CU_ASSERT(has_note(&r.ctx, "'x' stays int64", NULL));
	CU_ASSERT(check_equiv(ms[0], ms[1], &r.ctx.map, VAL_FP32) == 0);
	rw_ctx_release(&r.ctx);
	ir_model_free(ms[0]);
	ir_model_free(ms[1]);
}

/* ArgMax's int64 output (its signature) gets a Cast after it, bounded by
 * the axis' static size; Slice's starts/ends/axes narrow together (Tind
 * admits int32); exact. */
static void test_int64_indices(void)
{
	struct ir_model *ms[2];
	double one[1] = { 1 }, st[1] = { 1 }, en[1] = { 4 }, ax[1] = { 1 };
	struct ir_value *v;
	struct run r;

	for (int k = 0; k < 2; k++) {
		struct ir_model *m = ms[k] = tm_new(13);

		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 5), 2);
		tm_init(m, "one", IR_DTYPE_INT64, NULL, 0, one);
		tm_init(m, "starts", IR_DTYPE_INT64, TM_DIMS(1), 1, st);
		tm_init(m, "ends", IR_DTYPE_INT64, TM_DIMS(1), 1, en);
		tm_init(m, "axes", IR_DTYPE_INT64, TM_DIMS(1), 1, ax);
		CU_ASSERT_FATAL(ir_node_set_int(tm_node(m, "ArgMax", NULL, TM_NAMES("x"), 1,
							TM_NAMES("idx"), 1), "axis", 1) == 0);
		tm_node(m, "Add", NULL, TM_NAMES("idx", "one"), 2, TM_NAMES("y"), 1);
		tm_node(m, "Slice", NULL, TM_NAMES("x", "starts", "ends", "axes"), 4,
			TM_NAMES("z"), 1);
		tm_output(m, "y", IR_DTYPE_INT64, TM_DIMS(3, 1), 2);
		tm_output(m, "z", IR_DTYPE_FLOAT, TM_DIMS(3, 3), 2);
		tm_verify(m);
	}
	run_pass(&r, ms[1], target(0), "narrow-int64", 0);
	CU_ASSERT_EQUAL(dtype_of(ms[1], "idx"), IR_DTYPE_INT32);
	CU_ASSERT_EQUAL(dtype_of(ms[1], "y"), IR_DTYPE_INT32);
	CU_ASSERT_EQUAL(dtype_of(ms[1], "starts"), IR_DTYPE_INT32);
	CU_ASSERT_EQUAL(dtype_of(ms[1], "axes"), IR_DTYPE_INT32);
	v = ir_graph_find(ms[1]->graph, "idx");
	CU_ASSERT_FATAL(v && v->producer);
	CU_ASSERT_STRING_EQUAL(ir_s(v->producer->op_type), "Cast");
	CU_ASSERT(check_equiv(ms[0], ms[1], &r.ctx.map, VAL_FP32) == 0);
	rw_ctx_release(&r.ctx);
	ir_model_free(ms[0]);
	ir_model_free(ms[1]);
}

/* A constant beyond int32 is refused with a note, and so is everything
 * tied to it; nothing changes.  Without a target lacking int64 the pass
 * does nothing at all. */
static void test_int64_refused(void)
{
	struct ir_model *m = m_big();
	struct run r;

	run_pass(&r, m, target(0), "narrow-int64", 0);
	CU_ASSERT_EQUAL(r.changed, 0);
	CU_ASSERT_EQUAL(dtype_of(m, "big"), IR_DTYPE_INT64);
	CU_ASSERT_EQUAL(m->graph->inputs[0].type->elem_type, IR_DTYPE_INT64);
	CU_ASSERT(has_note(&r.ctx, "'big' stays int64", "beyond int32"));
	CU_ASSERT(has_note(&r.ctx, "'ids' stays int64", NULL));
	CU_ASSERT(has_note(&r.ctx, "'y' stays int64", NULL));
	CU_ASSERT_EQUAL(r.ctx.map.n, 0);
	rw_ctx_release(&r.ctx);
	ir_model_free(m);

	m = m_tokens();
	run_pass(&r, m, NULL, "narrow-int64", 0);
	CU_ASSERT_EQUAL(r.changed, 0);
	CU_ASSERT_EQUAL(r.ctx.n_notes, 0);
	rw_ctx_release(&r.ctx);
	ir_model_free(m);
}

/* float64 everywhere becomes float32: the initializer, the Cast, the
 * interface (in the name map); within the fp32 tolerances. */
static void test_float64(void)
{
	struct ir_model *ref = m_double(), *m = m_double();
	const struct val_map_entry *e;
	struct run r;

	run_pass(&r, m, target(0), "narrow-float64", 0);
	CU_ASSERT(r.changed > 0);
	CU_ASSERT_EQUAL(dtype_of(m, "k"), IR_DTYPE_FLOAT);
	CU_ASSERT_EQUAL(dtype_of(m, "b"), IR_DTYPE_FLOAT);
	CU_ASSERT_EQUAL(dtype_of(m, "y"), IR_DTYPE_FLOAT);
	CU_ASSERT_EQUAL(m->graph->inputs[0].type->elem_type, IR_DTYPE_FLOAT);
	CU_ASSERT_EQUAL(m->graph->outputs[0].type->elem_type, IR_DTYPE_FLOAT);
	e = map_entry(&r.ctx, VAL_MAP_INPUT, "x");
	CU_ASSERT(e != NULL && e->dtype == IR_DTYPE_FLOAT);
	e = map_entry(&r.ctx, VAL_MAP_OUTPUT, "y");
	CU_ASSERT(e != NULL && e->dtype == IR_DTYPE_FLOAT);
	CU_ASSERT(check_equiv(ref, m, &r.ctx.map, VAL_FP32) < 1e-5);
	rw_ctx_release(&r.ctx);
	ir_model_free(ref);
	ir_model_free(m);
}

/* fp16: weights converted in place, MatMul/Add/Relu/ReduceMean(16) in
 * float16, Softmax, Exp and the 512-element ReduceSum kept in float32;
 * interface float32 (no map entries) or float16 with --fp16-io (map
 * entries); within the fp16 tolerances over seeded weights. */
static void test_fp16(void)
{
	for (uint64_t seed = 1; seed <= 3; seed++)
		for (int io = 0; io < 2; io++) {
			struct ir_model *ref = m_mlp(seed), *m = m_mlp(seed);
			const struct val_map_entry *e;
			struct ir_value *v;
			struct run r;
			double err;

			run_pass(&r, m, NULL, "fp16", io);
			CU_ASSERT(r.changed > 0);
			CU_ASSERT_EQUAL(dtype_of(m, "w"), IR_DTYPE_FLOAT16);
			CU_ASSERT_EQUAL(dtype_of(m, "h3"), IR_DTYPE_FLOAT16);
			CU_ASSERT_EQUAL(dtype_of(m, "mean"), IR_DTYPE_FLOAT16);
			v = ir_graph_find(m->graph, "y");
			CU_ASSERT_FATAL(v && v->producer);
			CU_ASSERT_STRING_EQUAL(ir_s(v->producer->op_type), io ? "Cast" : "Softmax");
			CU_ASSERT_EQUAL(dtype_of(m, "y"), io ? IR_DTYPE_FLOAT16 : IR_DTYPE_FLOAT);
			v = ir_graph_find(m->graph, "s");
			CU_ASSERT_FATAL(v && v->producer);
			CU_ASSERT(io ? !strcmp(ir_s(v->producer->op_type), "Cast") :
				  !strcmp(ir_s(v->producer->op_type), "ReduceSum"));
			CU_ASSERT(has_note(&r.ctx, "Softmax node stays float32", NULL));
			CU_ASSERT(has_note(&r.ctx, "ReduceSum node stays float32", "256"));
			CU_ASSERT(has_note(&r.ctx, "Exp node stays float32", NULL));
			CU_ASSERT_EQUAL(m->graph->inputs[0].type->elem_type,
					io ? IR_DTYPE_FLOAT16 : IR_DTYPE_FLOAT);
			e = map_entry(&r.ctx, VAL_MAP_INPUT, "x");
			CU_ASSERT(io ? e && e->dtype == IR_DTYPE_FLOAT16 : e == NULL);
			e = map_entry(&r.ctx, VAL_MAP_OUTPUT, "z");
			CU_ASSERT(io ? e && e->dtype == IR_DTYPE_FLOAT16 : e == NULL);
			for (size_t i = 0; i < m->graph->n_outputs; i++)
				CU_ASSERT_EQUAL(m->graph->outputs[i].type->elem_type,
						io ? IR_DTYPE_FLOAT16 : IR_DTYPE_FLOAT);
			err = check_equiv(ref, m, &r.ctx.map, VAL_FP16);
			if (!(err < 0.05))
				fprintf(stderr, "\nfp16 seed %llu io %d: max abs %g\n",
					(unsigned long long)seed, io, err);
			CU_ASSERT(err < 0.05);
			rw_ctx_release(&r.ctx);
			ir_model_free(ref);
			ir_model_free(m);
		}
}

/* Nodes a LayerNormalization was decomposed into (by their provenance)
 * keep float32; a Resize keeps its scales float32; a Cast to float32 read
 * only in float16 casts to float16. */
static void test_fp16_kept(void)
{
	struct ir_model *ref = NULL, *m = NULL;
	double sc[4] = { 1, 1, 2, 2 };
	struct ir_node *n;
	struct run r;
	int k;

	for (k = 0; k < 2; k++) {
		m = tm_new(13);
		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 3, 3), 4);
		tm_init(m, "scales", IR_DTYPE_FLOAT, TM_DIMS(4), 1, sc);
		n = tm_node(m, "Sqrt", NULL, TM_NAMES("x"), 1, TM_NAMES("a"), 1);
		CU_ASSERT_FATAL((n->doc = strdup("opmig: layer-norm from ln (LayerNormalization)")) != NULL);
		tm_node(m, "Resize", NULL, TM_NAMES("a", "", "scales"), 3, TM_NAMES("b"), 1);
		tm_node(m, "Relu", NULL, TM_NAMES("b"), 1, TM_NAMES("r"), 1);
		tm_input(m, "k", IR_DTYPE_INT32, TM_DIMS(1), 1);
		CU_ASSERT_FATAL(ir_node_set_int(tm_node(m, "Cast", NULL, TM_NAMES("k"), 1,
							TM_NAMES("kf"), 1), "to", IR_DTYPE_FLOAT) == 0);
		tm_node(m, "Mul", NULL, TM_NAMES("r", "kf"), 2, TM_NAMES("y"), 1);
		tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
		tm_verify(m);
		if (k == 0)
			ref = m;
	}
	run_pass(&r, m, NULL, "fp16", 0);
	CU_ASSERT_EQUAL(dtype_of(m, "a"), IR_DTYPE_FLOAT);
	CU_ASSERT_EQUAL(dtype_of(m, "scales"), IR_DTYPE_FLOAT);
	CU_ASSERT_EQUAL(dtype_of(m, "b"), IR_DTYPE_FLOAT16);
	CU_ASSERT(has_note(&r.ctx, "Sqrt node stays float32", "decomposition"));
	/* the Cast to float32 read only in float16 casts to float16 */
	CU_ASSERT_EQUAL(dtype_of(m, "kf"), IR_DTYPE_FLOAT16);
	CU_ASSERT_EQUAL(count_op(m, "Cast"), 3);
	CU_ASSERT(check_equiv(ref, m, &r.ctx.map, VAL_FP16) < 0.05);
	rw_ctx_release(&r.ctx);
	ir_model_free(ref);
	ir_model_free(m);
}

static const struct unit_test tests[] = {
	{ "int64 token ids and index constants", test_int64_tokens },
	{ "int64 shape values", test_int64_shapes },
	{ "int64 beyond int32 refused", test_int64_refused },
	{ "int64 values set by attributes", test_int64_attrs },
	{ "int64 indices of ArgMax and Slice", test_int64_indices },
	{ "float64 to float32", test_float64 },
	{ "fp16 with sensitive ops kept", test_fp16 },
	{ "fp16 decompositions and parameters kept", test_fp16_kept },
	{ NULL, NULL },
};

int suite_rwdtype_register(void)
{
	return unit_add_suite("rwdtype", tests);
}
