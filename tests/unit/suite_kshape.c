/* suite_kshape.c: unit tests of the shape, gather, slice, resize and
 * layout kernels on what the backend data does not cover (strings, int8,
 * allowzero, newer opsets' attributes, error paths), against values
 * derived by hand in the comments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"
#include "runtime/rt_int.h"
#include "runtime/runtime.h"

/* Run a model without graph inputs (everything is an initializer).  err
 * (512 bytes) gets the error message, if any; without err an error is
 * printed. */
static int run_threads(struct ir_model *m, struct rt_value **outs, size_t n,
		       char *err, int threads)
{
	struct rt_opts o = { .threads = threads };
	struct rt_session *s = NULL;
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	memset(outs, 0, n * sizeof(*outs));
	if ((rc = rt_session_new(m, &o, &s, &d)) == 0)
		rc = rt_session_run(s, NULL, 0, outs, &d);
	if (err)
		snprintf(err, 512, "%s", rc < 0 ? d.msg : "");
	else if (rc < 0)
		fprintf(stderr, "\nrun: %s\n", d.msg);
	rt_session_free(s);
	return rc;
}

static int run(struct ir_model *m, struct rt_value **outs, size_t n, char *err)
{
	return run_threads(m, outs, n, err, 1);
}

static void str_init(struct ir_model *m, const char *name, const int64_t *dims,
		     size_t n, const char *const *vals)
{
	struct rt_value *t;
	struct ir_tensor *it;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_STRING, (int)n, dims, &t, &d) == 0);
	for (int64_t i = 0; i < t->numel; i++)
		CU_ASSERT_FATAL((((char **)t->data)[i] = strdup(vals[i])) != NULL);
	CU_ASSERT_FATAL(rt_value_to_ir(t, name, &it, &d) == 0);
	rt_value_unref(t);
	CU_ASSERT_FATAL(ir_graph_add_initializer(m->graph, it) != NULL);
}

/* One node reading initializers, one output "y" of dtype. */
static struct ir_node *one(struct ir_model *m, const char *op,
			   const char *const *in, size_t n_in, int dtype)
{
	struct ir_node *n = tm_node(m, op, NULL, in, n_in, TM_NAMES("y"), 1);

	tm_output(m, "y", dtype, NULL, 0);
	return n;
}

static void check_dims(const struct rt_value *v, int rank, const int64_t *dims)
{
	CU_ASSERT_FATAL(v != NULL);
	CU_ASSERT_EQUAL_FATAL(v->rank, rank);
	for (int i = 0; i < rank; i++)
		CU_ASSERT_EQUAL(v->dims[i], dims[i]);
}

static void check_f64(const struct rt_value *v, const double *want, int64_t n)
{
	CU_ASSERT_FATAL(v != NULL);
	CU_ASSERT_EQUAL_FATAL(v->numel, n);
	for (int64_t i = 0; i < n; i++) {
		double got = rt_value_get_f64(v, i);

		if (fabs(got - want[i]) > 1e-5)
			fprintf(stderr, "\nelement %lld: got %g, want %g\n", (long long)i,
				got, want[i]);
		CU_ASSERT(fabs(got - want[i]) <= 1e-5);
	}
}

static void check_str(const struct rt_value *v, const char *const *want, int64_t n)
{
	CU_ASSERT_FATAL(v != NULL && v->dtype == IR_DTYPE_STRING);
	CU_ASSERT_EQUAL_FATAL(v->numel, n);
	for (int64_t i = 0; i < n; i++)
		CU_ASSERT_STRING_EQUAL(((char **)v->data)[i], want[i]);
}

static const double iota[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
	20, 21, 22, 23
};

/* ---- shape ----------------------------------------------------------- */

static void test_reshape_allowzero(void)
{
	struct ir_model *m = tm_new(14);
	struct rt_value *y[3];

	/* [2,3,4] with [4,0,-1]: 0 copies dim 1 (3), -1 is 24/12 = 2 */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 4), 3, iota);
	tm_init(m, "s1", IR_DTYPE_INT64, TM_DIMS(3), 1, (const double[]){ 4, 0, -1 });
	/* [0,3] with allowzero and [3,0]: a real zero-sized dim */
	tm_init(m, "e", IR_DTYPE_FLOAT, TM_DIMS(0, 3), 2, iota);
	tm_init(m, "s2", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 3, 0 });
	/* [2,3,4] with [0,-1] (no allowzero): [2,12] */
	tm_init(m, "s3", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 0, -1 });
	tm_node(m, "Reshape", NULL, TM_NAMES("x", "s1"), 2, TM_NAMES("a"), 1);
	ir_node_set_int(tm_node(m, "Reshape", NULL, TM_NAMES("e", "s2"), 2,
				TM_NAMES("b"), 1), "allowzero", 1);
	tm_node(m, "Reshape", NULL, TM_NAMES("x", "s3"), 2, TM_NAMES("c"), 1);
	tm_output(m, "a", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "b", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "c", IR_DTYPE_FLOAT, NULL, 0);
	CU_ASSERT_FATAL(run(m, y, 3, NULL) == 0);
	check_dims(y[0], 3, TM_DIMS(4, 3, 2));
	check_f64(y[0], iota, 24);
	check_dims(y[1], 2, TM_DIMS(3, 0));
	check_dims(y[2], 2, TM_DIMS(2, 12));
	for (int i = 0; i < 3; i++)
		rt_value_unref(y[i]);
	ir_model_free(m);
}

static void test_reshape_bad_count(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *y;
	char err[512];

	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2, iota);
	tm_init(m, "s", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 4, 2 });
	one(m, "Reshape", TM_NAMES("x", "s"), 2, IR_DTYPE_FLOAT);
	CU_ASSERT(run(m, &y, 1, err) < 0);
	CU_ASSERT(strstr(err, "cannot reshape [2,3] (6 elements) to [4,2]") != NULL);
	ir_model_free(m);
}

static void test_squeeze_unsqueeze_attrs(void)
{
	struct ir_model *m = tm_new(11);
	struct rt_value *y[2];

	/* opset 11 takes axes as attributes: [1,3,1] squeezed on -1 is [1,3];
	 * [3] unsqueezed on {0,-1} (of the output rank 3) is [1,3,1] */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 3, 1), 3, iota);
	tm_init(m, "v", IR_DTYPE_FLOAT, TM_DIMS(3), 1, iota);
	ir_node_set_ints(tm_node(m, "Squeeze", NULL, TM_NAMES("x"), 1, TM_NAMES("a"), 1),
			 "axes", TM_DIMS(-1), 1);
	ir_node_set_ints(tm_node(m, "Unsqueeze", NULL, TM_NAMES("v"), 1, TM_NAMES("b"), 1),
			 "axes", TM_DIMS(0, -1), 2);
	tm_output(m, "a", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "b", IR_DTYPE_FLOAT, NULL, 0);
	CU_ASSERT_FATAL(run(m, y, 2, NULL) == 0);
	check_dims(y[0], 2, TM_DIMS(1, 3));
	check_dims(y[1], 3, TM_DIMS(1, 3, 1));
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);
	ir_model_free(m);
}

/* ---- strings --------------------------------------------------------- */

static void test_string_moves(void)
{
	static const char *const s[] = { "a", "bb", "", "dddd", "e", "ff" };
	struct ir_model *m = tm_new(13);
	struct rt_value *y[3];

	str_init(m, "s", TM_DIMS(2, 3), 2, s);
	tm_init(m, "i", IR_DTYPE_INT64, TM_DIMS(3), 1, (const double[]){ 2, -3, 1 });
	ir_node_set_int(tm_node(m, "Gather", NULL, TM_NAMES("s", "i"), 2, TM_NAMES("g"), 1),
			"axis", 1);
	ir_node_set_int(tm_node(m, "Concat", NULL, TM_NAMES("s", "s"), 2, TM_NAMES("c"), 1),
			"axis", 0);
	tm_node(m, "Transpose", NULL, TM_NAMES("s"), 1, TM_NAMES("t"), 1);
	tm_output(m, "g", IR_DTYPE_STRING, NULL, 0);
	tm_output(m, "c", IR_DTYPE_STRING, NULL, 0);
	tm_output(m, "t", IR_DTYPE_STRING, NULL, 0);
	CU_ASSERT_FATAL(run(m, y, 3, NULL) == 0);
	/* rows [a bb ""] [dddd e ff], columns 2, 0, 1 */
	check_dims(y[0], 2, TM_DIMS(2, 3));
	check_str(y[0], (const char *const[]){ "", "a", "bb", "ff", "dddd", "e" }, 6);
	check_dims(y[1], 2, TM_DIMS(4, 3));
	check_str(y[1], (const char *const[]){ "a", "bb", "", "dddd", "e", "ff",
					       "a", "bb", "", "dddd", "e", "ff" }, 12);
	check_dims(y[2], 2, TM_DIMS(3, 2));
	check_str(y[2], (const char *const[]){ "a", "dddd", "bb", "e", "", "ff" }, 6);
	for (int i = 0; i < 3; i++)
		rt_value_unref(y[i]);
	ir_model_free(m);
}

/* ---- gather and scatter ---------------------------------------------- */

static void test_gather_out_of_range(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *y;
	char err[512];

	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 2), 2, iota);
	tm_init(m, "i", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 1, 5 });
	one(m, "Gather", TM_NAMES("x", "i"), 2, IR_DTYPE_FLOAT);
	CU_ASSERT(run(m, &y, 1, err) < 0);
	CU_ASSERT(strstr(err, "index 5 out of range [-3, 2]") != NULL);
	ir_model_free(m);
}

static void test_gather_nd_batch(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *y;

	/* data [2,2,2] = 0..7, batch_dims 1, indices [[1],[0]]:
	 * batch 0 row 1 = [2,3], batch 1 row 0 = [4,5] */
	tm_init(m, "x", IR_DTYPE_INT32, TM_DIMS(2, 2, 2), 3, iota);
	tm_init(m, "i", IR_DTYPE_INT64, TM_DIMS(2, 1), 2, (const double[]){ 1, 0 });
	ir_node_set_int(one(m, "GatherND", TM_NAMES("x", "i"), 2, IR_DTYPE_INT32),
			"batch_dims", 1);
	CU_ASSERT_FATAL(run(m, &y, 1, NULL) == 0);
	check_dims(y, 2, TM_DIMS(2, 2));
	check_f64(y, (const double[]){ 2, 3, 4, 5 }, 4);
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_scatter_reductions(void)
{
	struct ir_model *m = tm_new(18);
	struct rt_value *y[3];

	/* data [1,2,3,4]; ScatterND max with indices [[0],[0],[3]] and updates
	 * [5, 0, 1] -> [max(1,5,0), 2, 3, max(4,1)] = [5,2,3,4]; min -> [0,2,3,1] */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4), 1, (const double[]){ 1, 2, 3, 4 });
	tm_init(m, "i", IR_DTYPE_INT64, TM_DIMS(3, 1), 2, (const double[]){ 0, 0, 3 });
	tm_init(m, "u", IR_DTYPE_FLOAT, TM_DIMS(3), 1, (const double[]){ 5, 0, 1 });
	/* ScatterElements mul on int64 [[1,2],[3,4]], axis 1, indices
	 * [[1,1],[0,0]], updates [[2,3],[5,7]] -> [[1,12],[105,4]] */
	tm_init(m, "xe", IR_DTYPE_INT64, TM_DIMS(2, 2), 2, (const double[]){ 1, 2, 3, 4 });
	tm_init(m, "ie", IR_DTYPE_INT64, TM_DIMS(2, 2), 2, (const double[]){ 1, 1, 0, 0 });
	tm_init(m, "ue", IR_DTYPE_INT64, TM_DIMS(2, 2), 2, (const double[]){ 2, 3, 5, 7 });
	ir_node_set_string(tm_node(m, "ScatterND", NULL, TM_NAMES("x", "i", "u"), 3,
				   TM_NAMES("a"), 1), "reduction", "max");
	ir_node_set_string(tm_node(m, "ScatterND", NULL, TM_NAMES("x", "i", "u"), 3,
				   TM_NAMES("b"), 1), "reduction", "min");
	{
		struct ir_node *n = tm_node(m, "ScatterElements", NULL,
					    TM_NAMES("xe", "ie", "ue"), 3, TM_NAMES("c"), 1);

		ir_node_set_string(n, "reduction", "mul");
		ir_node_set_int(n, "axis", 1);
	}
	tm_output(m, "a", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "b", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "c", IR_DTYPE_INT64, NULL, 0);
	CU_ASSERT_FATAL(run(m, y, 3, NULL) == 0);
	check_f64(y[0], (const double[]){ 5, 2, 3, 4 }, 4);
	check_f64(y[1], (const double[]){ 0, 2, 3, 1 }, 4);
	check_f64(y[2], (const double[]){ 1, 12, 105, 4 }, 4);
	for (int i = 0; i < 3; i++)
		rt_value_unref(y[i]);
	ir_model_free(m);
}

static void test_scatter_elements_bad_index(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *y;
	char err[512];

	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, iota);
	tm_init(m, "i", IR_DTYPE_INT64, TM_DIMS(1, 1), 2, (const double[]){ -3 });
	tm_init(m, "u", IR_DTYPE_FLOAT, TM_DIMS(1, 1), 2, iota);
	one(m, "ScatterElements", TM_NAMES("x", "i", "u"), 3, IR_DTYPE_FLOAT);
	CU_ASSERT(run(m, &y, 1, err) < 0);
	CU_ASSERT(strstr(err, "index -3 out of range [-2, 1]") != NULL);
	ir_model_free(m);
}

static void test_tensor_scatter(void)
{
	struct ir_model *m = tm_new(24);
	struct rt_value *y;
	struct ir_node *n;

	/* cache [2,3,1] zeros-ish (0..5), update [2,2,1] = [10,11],[12,13],
	 * write_indices [2,0], circular: batch 0 writes rows 2 and 0 (wrap),
	 * batch 1 rows 0 and 1 */
	tm_init(m, "c", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 1), 3, iota);
	tm_init(m, "u", IR_DTYPE_FLOAT, TM_DIMS(2, 2, 1), 3, (const double[]){ 10, 11, 12, 13 });
	tm_init(m, "w", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 2, 0 });
	n = one(m, "TensorScatter", TM_NAMES("c", "u", "w"), 3, IR_DTYPE_FLOAT);
	ir_node_set_string(n, "mode", "circular");
	CU_ASSERT_FATAL(run(m, &y, 1, NULL) == 0);
	check_f64(y, (const double[]){ 11, 1, 10, 12, 13, 5 }, 6);
	rt_value_unref(y);
	ir_model_free(m);
}

/* ---- slice, split, pad ----------------------------------------------- */

static void test_slice_negative_steps_int8(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *y[2];

	/* int8 0..9 from -1 to about INT64_MIN by -3: 9, 6, 3, 0 */
	tm_init(m, "x", IR_DTYPE_INT8, TM_DIMS(10), 1, iota);
	tm_init(m, "s", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ -1 });
	tm_init(m, "e", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ -9.2e18 });
	tm_init(m, "st", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ -3 });
	/* [3,4] int8 = 0..11, rows 2..0 step -2 (rows 2, 0), columns 1..100
	 * step 2 (1, 3): [9, 11, 1, 3] */
	tm_init(m, "x2", IR_DTYPE_INT8, TM_DIMS(3, 4), 2, iota);
	tm_init(m, "s2", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 1, 5 });
	tm_init(m, "e2", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 100, -5 });
	tm_init(m, "a2", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ -1, 0 });
	tm_init(m, "st2", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 2, -2 });
	tm_node(m, "Slice", NULL, TM_NAMES("x", "s", "e", "", "st"), 5, TM_NAMES("a"), 1);
	tm_node(m, "Slice", NULL, TM_NAMES("x2", "s2", "e2", "a2", "st2"), 5,
		TM_NAMES("b"), 1);
	tm_output(m, "a", IR_DTYPE_INT8, NULL, 0);
	tm_output(m, "b", IR_DTYPE_INT8, NULL, 0);
	CU_ASSERT_FATAL(run(m, y, 2, NULL) == 0);
	check_dims(y[0], 1, TM_DIMS(4));
	check_f64(y[0], (const double[]){ 9, 6, 3, 0 }, 4);
	check_dims(y[1], 2, TM_DIMS(2, 2));
	check_f64(y[1], (const double[]){ 9, 11, 1, 3 }, 4);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);
	ir_model_free(m);
}

static void test_split_num_outputs(void)
{
	struct ir_model *m = tm_new(18);
	struct rt_value *y[3];

	/* 7 elements in 3 parts: ceil(7/3) = 3, 3, 1 */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(7), 1, iota);
	ir_node_set_int(tm_node(m, "Split", NULL, TM_NAMES("x"), 1,
				TM_NAMES("a", "b", "c"), 3), "num_outputs", 3);
	tm_output(m, "a", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "b", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "c", IR_DTYPE_FLOAT, NULL, 0);
	CU_ASSERT_FATAL(run(m, y, 3, NULL) == 0);
	check_f64(y[0], (const double[]){ 0, 1, 2 }, 3);
	check_f64(y[1], (const double[]){ 3, 4, 5 }, 3);
	check_f64(y[2], (const double[]){ 6 }, 1);
	for (int i = 0; i < 3; i++)
		rt_value_unref(y[i]);
	ir_model_free(m);
}

static void test_pad_modes(void)
{
	static const char *const modes[] = { "wrap", "reflect", "edge", "constant" };
	/* [2,3] = [[0,1,2],[3,4,5]], axes [1] only, pads begin 2 end 1:
	 * wrap    1 2 | 0 1 2 | 0      reflect 2 1 | 0 1 2 | 1
	 * edge    0 0 | 0 1 2 | 2      constant 9 9 | 0 1 2 | 9 */
	static const double want[4][12] = {
		{ 1, 2, 0, 1, 2, 0, 4, 5, 3, 4, 5, 3 },
		{ 2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4 },
		{ 0, 0, 0, 1, 2, 2, 3, 3, 3, 4, 5, 5 },
		{ 9, 9, 0, 1, 2, 9, 9, 9, 3, 4, 5, 9 },
	};

	for (int i = 0; i < 4; i++) {
		struct ir_model *m = tm_new(19);
		struct rt_value *y;

		tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2, iota);
		tm_init(m, "p", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 2, 1 });
		tm_init(m, "v", IR_DTYPE_FLOAT, NULL, 0, (const double[]){ 9 });
		tm_init(m, "a", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ -1 });
		ir_node_set_string(one(m, "Pad", TM_NAMES("x", "p", "v", "a"), 4,
				       IR_DTYPE_FLOAT), "mode", modes[i]);
		CU_ASSERT_FATAL(run(m, &y, 1, NULL) == 0);
		check_dims(y, 2, TM_DIMS(2, 6));
		check_f64(y, want[i], 12);
		rt_value_unref(y);
		ir_model_free(m);
	}
}

static void test_center_crop_pad(void)
{
	struct ir_model *m = tm_new(18);
	struct rt_value *y[2];

	/* 1..5 cropped to 3 starts at (5-3)/2 = 1: [2,3,4]; padded to 8 gets
	 * (8-5)/2 = 1 zero before and 2 after */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(5), 1, (const double[]){ 1, 2, 3, 4, 5 });
	tm_init(m, "s1", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ 3 });
	tm_init(m, "s2", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ 8 });
	tm_node(m, "CenterCropPad", NULL, TM_NAMES("x", "s1"), 2, TM_NAMES("a"), 1);
	tm_node(m, "CenterCropPad", NULL, TM_NAMES("x", "s2"), 2, TM_NAMES("b"), 1);
	tm_output(m, "a", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "b", IR_DTYPE_FLOAT, NULL, 0);
	CU_ASSERT_FATAL(run(m, y, 2, NULL) == 0);
	check_f64(y[0], (const double[]){ 2, 3, 4 }, 3);
	check_f64(y[1], (const double[]){ 0, 1, 2, 3, 4, 5, 0, 0 }, 8);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);
	ir_model_free(m);
}

static void test_tile_and_trilu(void)
{
	struct ir_model *m = tm_new(14);
	struct rt_value *y[2];

	/* Tile [[0,1],[2,3]] by [1,2]; Trilu lower k=-1 of 3x3 0..8
	 * keeps j - i <= -1: [[0,0,0],[3,0,0],[6,7,0]] */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, iota);
	tm_init(m, "r", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 1, 2 });
	tm_init(m, "t", IR_DTYPE_UINT8, TM_DIMS(3, 3), 2, iota);
	tm_init(m, "k", IR_DTYPE_INT64, NULL, 0, (const double[]){ -1 });
	tm_node(m, "Tile", NULL, TM_NAMES("x", "r"), 2, TM_NAMES("a"), 1);
	ir_node_set_int(tm_node(m, "Trilu", NULL, TM_NAMES("t", "k"), 2, TM_NAMES("b"), 1),
			"upper", 0);
	tm_output(m, "a", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "b", IR_DTYPE_UINT8, NULL, 0);
	CU_ASSERT_FATAL(run(m, y, 2, NULL) == 0);
	check_dims(y[0], 2, TM_DIMS(2, 4));
	check_f64(y[0], (const double[]){ 0, 1, 0, 1, 2, 3, 2, 3 }, 8);
	check_f64(y[1], (const double[]){ 0, 0, 0, 3, 0, 0, 6, 7, 0 }, 9);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);
	ir_model_free(m);
}

/* ---- resize, grids ----------------------------------------------------- */

static void test_resize_antialias(void)
{
	struct ir_model *m = tm_new(18);
	struct rt_value *y;
	struct ir_node *n;

	/* [0,1,2,3] to 2, linear, antialias, half_pixel: scale 1/2 widens the
	 * triangle to 2 pixels.  Output 0 sits at 0.5: taps -1..2 at
	 * distances 1.5, .5, .5, 1.5 (x 0.5) weigh .25 .75 .75 .25 (/2),
	 * values 0 0 1 2 (-1 clamps): 0.625.  Output 1 at 2.5: taps 1..4,
	 * values 1 2 3 3: (.25 + 1.5 + 2.25 + .75) / 2 = 2.375 */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4), 1, iota);
	tm_init(m, "sz", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ 2 });
	n = one(m, "Resize", TM_NAMES("x", "", "", "sz"), 4, IR_DTYPE_FLOAT);
	ir_node_set_string(n, "mode", "linear");
	ir_node_set_int(n, "antialias", 1);
	CU_ASSERT_FATAL(run(m, &y, 1, NULL) == 0);
	check_f64(y, (const double[]){ 0.625, 2.375 }, 2);
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_resize_axes_aspect(void)
{
	struct ir_model *m = tm_new(18);
	struct rt_value *y;
	struct ir_node *n;

	/* [1,2,2] resized on axes (2, 1) to sizes (3, 5), not_smaller: the
	 * scale is max(3/2, 5/2) = 2.5 on both, sizes round(5) = 5 each.
	 * Nearest, asymmetric, floor: x / 2.5 -> 0 0 0 1 1 */
	tm_init(m, "x", IR_DTYPE_INT32, TM_DIMS(1, 2, 2), 3, iota);
	tm_init(m, "sz", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 3, 5 });
	n = one(m, "Resize", TM_NAMES("x", "", "", "sz"), 4, IR_DTYPE_INT32);
	ir_node_set_ints(n, "axes", TM_DIMS(2, 1), 2);
	ir_node_set_string(n, "keep_aspect_ratio_policy", "not_smaller");
	ir_node_set_string(n, "coordinate_transformation_mode", "asymmetric");
	ir_node_set_string(n, "nearest_mode", "floor");
	CU_ASSERT_FATAL(run(m, &y, 1, NULL) == 0);
	check_dims(y, 3, TM_DIMS(1, 5, 5));
	{
		double want[25];

		for (int i = 0; i < 5; i++)
			for (int j = 0; j < 5; j++)
				want[i * 5 + j] = (i < 3 ? 0 : 2) + (j < 3 ? 0 : 1);
		check_f64(y, want, 25);
	}
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_resize_strings_nearest(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *y;

	/* strings move too: [a, b] doubled with nearest, half_pixel,
	 * round_prefer_floor: (x+.5)/2-.5 = -.25 .25 .75 1.25 -> a a b b */
	str_init(m, "x", TM_DIMS(2), 1, (const char *const[]){ "a", "b" });
	tm_init(m, "sc", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 2 });
	one(m, "Resize", TM_NAMES("x", "", "sc"), 3, IR_DTYPE_STRING);
	CU_ASSERT_FATAL(run(m, &y, 1, NULL) == 0);
	check_str(y, (const char *const[]){ "a", "a", "b", "b" }, 4);
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_grid_sample_3d(void)
{
	struct ir_model *m = tm_new(20);
	struct rt_value *y;
	struct ir_node *n;

	/* X [1,1,2,2,2] = 0..7; grid points (0,0,0) -> the centre, the mean
	 * 3.5; (1,-1,-1) with align_corners -> (x=1, y=0, z=0) = 1;
	 * (-1,1,1) -> x=0, y=1, z=1 = 6 */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 2, 2), 5, iota);
	tm_init(m, "g", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 1, 3, 3), 5,
		(const double[]){ 0, 0, 0, 1, -1, -1, -1, 1, 1 });
	n = one(m, "GridSample", TM_NAMES("x", "g"), 2, IR_DTYPE_FLOAT);
	ir_node_set_int(n, "align_corners", 1);
	CU_ASSERT_FATAL(run(m, &y, 1, NULL) == 0);
	check_dims(y, 5, TM_DIMS(1, 1, 1, 1, 3));
	check_f64(y, (const double[]){ 3.5, 1, 6 }, 3);
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_affine_grid(void)
{
	struct ir_model *m = tm_new(20);
	struct rt_value *y;

	/* theta = [[2,0,1],[0,1,0]] on a 2x2 grid, align_corners 0: base
	 * coordinates -0.5, 0.5; x' = 2x + 1, y' = y */
	tm_init(m, "t", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 3), 3,
		(const double[]){ 2, 0, 1, 0, 1, 0 });
	tm_init(m, "s", IR_DTYPE_INT64, TM_DIMS(4), 1, (const double[]){ 1, 1, 2, 2 });
	one(m, "AffineGrid", TM_NAMES("t", "s"), 2, IR_DTYPE_FLOAT);
	CU_ASSERT_FATAL(run(m, &y, 1, NULL) == 0);
	check_dims(y, 4, TM_DIMS(1, 2, 2, 2));
	check_f64(y, (const double[]){ 0, -0.5, 2, -0.5, 0, 0.5, 2, 0.5 }, 8);
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_big_transpose_threads(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *y[2];
	double *v = malloc(40 * 30 * 64 * sizeof(double));
	int bad = 0;

	/* x[i][j][k] = i*10000 + j*100 + k, [40,30,64] (76800 elements, split
	 * over 2 threads); perm (2,0,1) puts x[i][j][k] at y[k][i][j].  Slice
	 * of the same with step -1 on axis 0: y2[i] = x[39 - i] */
	CU_ASSERT_FATAL(v != NULL);
	for (int i = 0; i < 40; i++)
		for (int j = 0; j < 30; j++)
			for (int k = 0; k < 64; k++)
				v[(i * 30 + j) * 64 + k] = i * 10000 + j * 100 + k;
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(40, 30, 64), 3, v);
	free(v);
	tm_init(m, "s", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ -1 });
	tm_init(m, "e", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ -100 });
	tm_init(m, "st", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ -1 });
	ir_node_set_ints(tm_node(m, "Transpose", NULL, TM_NAMES("x"), 1, TM_NAMES("a"), 1),
			 "perm", TM_DIMS(2, 0, 1), 3);
	tm_node(m, "Slice", NULL, TM_NAMES("x", "s", "e", "", "st"), 5, TM_NAMES("b"), 1);
	tm_output(m, "a", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "b", IR_DTYPE_FLOAT, NULL, 0);
	CU_ASSERT_FATAL(run_threads(m, y, 2, NULL, 2) == 0);
	check_dims(y[0], 3, TM_DIMS(64, 40, 30));
	check_dims(y[1], 3, TM_DIMS(40, 30, 64));
	for (int k = 0; k < 64; k++)
		for (int i = 0; i < 40; i++)
			for (int j = 0; j < 30; j++) {
				bad += ((float *)y[0]->data)[(k * 40 + i) * 30 + j] !=
				       (float)(i * 10000 + j * 100 + k);
				bad += ((float *)y[1]->data)[(i * 30 + j) * 64 + k] !=
				       (float)((39 - i) * 10000 + j * 100 + k);
			}
	CU_ASSERT_EQUAL(bad, 0);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);
	ir_model_free(m);
}

/* Every permutation of ranks 1 to 5 (dims 1 to 5, seeded), in four
 * element sizes (uint8, float16, float, int64), on 1 and 2 threads: the
 * tiled batch-of-transposes path (NHWC <-> NCHW and every other perm that
 * swaps two runs of axes after a kept prefix) and the strided copy give
 * each element where the permutation puts it (values are the flat input
 * index). */
static void test_transpose_every_perm(void)
{
	static const int dts[] = { IR_DTYPE_UINT8, IR_DTYPE_FLOAT16, IR_DTYPE_FLOAT,
				   IR_DTYPE_INT64 };
	uint64_t seed = 26;
	int bad = 0, cases = 0;

	for (int r = 1; r <= 5; r++) {
		int perm[5] = { 0, 1, 2, 3, 4 };

		for (;;) {
			int64_t dims[5], od[5], pd[5], numel = 1;
			double *v;

			for (int i = 0; i < r; i++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				dims[i] = 1 + (int64_t)(seed >> 33) % 5;
				numel *= dims[i];
			}
			for (int i = 0; i < r; i++) {
				od[i] = dims[perm[i]];
				pd[i] = perm[i];
			}
			v = malloc((size_t)numel * sizeof(double));
			CU_ASSERT_FATAL(v != NULL);
			for (int64_t i = 0; i < numel; i++)
				v[i] = (double)(i % 251);
			for (size_t t = 0; t < sizeof(dts) / sizeof(*dts); t++) {
				struct ir_model *m = tm_new(13);
				struct rt_value *y = NULL;

				tm_init(m, "x", dts[t], dims, r, v);
				ir_node_set_ints(tm_node(m, "Transpose", NULL, TM_NAMES("x"), 1,
							 TM_NAMES("y"), 1), "perm", pd, r);
				tm_output(m, "y", dts[t], NULL, 0);
				if (run_threads(m, &y, 1, NULL, 1 + (int)(t & 1)) != 0) {
					bad++;
				} else {
					/* walk y in order, its coordinates o */
					int64_t o[5] = { 0 };

					for (int64_t i = 0; i < numel; i++) {
						int64_t src = 0;

						for (int d = 0; d < r; d++) {
							int64_t c = 0;

							for (int e = 0; e < r; e++)
								if (perm[e] == d)
									c = o[e];
							src = src * dims[d] + c;
						}
						bad += rt_load_f64(dts[t], y->data, i) != (double)(src % 251);
						for (int d = r - 1; d >= 0 && ++o[d] == od[d]; d--)
							o[d] = 0;
					}
				}
				rt_value_unref(y);
				ir_model_free(m);
				cases++;
			}
			free(v);
			/* next permutation (lexicographic) */
			{
				int i = r - 2, j = r - 1, tmp;

				while (i >= 0 && perm[i] > perm[i + 1])
					i--;
				if (i < 0)
					break;
				while (perm[j] < perm[i])
					j--;
				tmp = perm[i], perm[i] = perm[j], perm[j] = tmp;
				for (int a = i + 1, b = r - 1; a < b; a++, b--)
					tmp = perm[a], perm[a] = perm[b], perm[b] = tmp;
			}
		}
	}
	CU_ASSERT_EQUAL(cases, 4 * (1 + 2 + 6 + 24 + 120));
	CU_ASSERT_EQUAL(bad, 0);
}

static void test_resize_threads_agree(void)
{
	struct rt_value *y[2];
	double *v = malloc(2 * 48 * 40 * sizeof(double));
	int bad = 0;

	/* the same cubic resize on 1 and 2 threads gives the same bits */
	CU_ASSERT_FATAL(v != NULL);
	for (int i = 0; i < 2 * 48 * 40; i++)
		v[i] = (i * 7919 % 1013) / 100.0;
	for (int t = 0; t < 2; t++) {
		struct ir_model *m = tm_new(13);

		tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 48, 40), 3, v);
		tm_init(m, "sz", IR_DTYPE_INT64, TM_DIMS(3), 1, (const double[]){ 2, 150, 130 });
		ir_node_set_string(one(m, "Resize", TM_NAMES("x", "", "", "sz"), 4,
				       IR_DTYPE_FLOAT), "mode", "cubic");
		CU_ASSERT_FATAL(run_threads(m, &y[t], 1, NULL, t + 1) == 0);
		ir_model_free(m);
	}
	free(v);
	check_dims(y[1], 3, TM_DIMS(2, 150, 130));
	CU_ASSERT_FATAL(y[0]->numel == y[1]->numel);
	for (int64_t i = 0; i < y[0]->numel; i++)
		bad += ((float *)y[0]->data)[i] != ((float *)y[1]->data)[i];
	CU_ASSERT_EQUAL(bad, 0);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);
}

static void test_resize_uint8_truncates(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *y;
	struct ir_node *n;

	/* uint8 [0,3] x2 linear asymmetric: 0, 1.5, 3, 3 -> 0, 1, 3, 3 */
	tm_init(m, "x", IR_DTYPE_UINT8, TM_DIMS(2), 1, (const double[]){ 0, 3 });
	tm_init(m, "sc", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 2 });
	n = one(m, "Resize", TM_NAMES("x", "", "sc"), 3, IR_DTYPE_UINT8);
	ir_node_set_string(n, "mode", "linear");
	ir_node_set_string(n, "coordinate_transformation_mode", "asymmetric");
	CU_ASSERT_FATAL(run(m, &y, 1, NULL) == 0);
	check_f64(y, (const double[]){ 0, 1, 3, 3 }, 4);
	rt_value_unref(y);
	ir_model_free(m);
}

/* One node on initializers x ([2,3] floats) and i (int64 values iv),
 * expected to fail with a message containing want. */
static void expect_error(int opset, const char *op, const char *const *in, size_t n_in,
			 const int64_t *idims, size_t ir, const double *iv,
			 const char *attr, int64_t aval, const char *want)
{
	struct ir_model *m = tm_new(opset);
	struct rt_value *y;
	struct ir_node *n;
	char err[512];

	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2, iota);
	if (iv)
		tm_init(m, "i", IR_DTYPE_INT64, idims, ir, iv);
	n = one(m, op, in, n_in, IR_DTYPE_FLOAT);
	if (attr)
		ir_node_set_int(n, attr, aval);
	CU_ASSERT(run(m, &y, 1, err) < 0);
	if (!strstr(err, want))
		fprintf(stderr, "\n%s: got '%s', want '%s'\n", op, err, want);
	CU_ASSERT(strstr(err, want) != NULL);
	ir_model_free(m);
}

static void test_error_paths(void)
{
	expect_error(13, "GatherND", TM_NAMES("x", "i"), 2, TM_DIMS(1, 2), 2,
		     (const double[]){ 1, -4 }, NULL, 0, "index -4 out of range [-3, 2]");
	expect_error(13, "GatherElements", TM_NAMES("x", "i"), 2, TM_DIMS(1, 1), 2,
		     (const double[]){ 3 }, "axis", 1, "index 3 out of range [-3, 2]");
	expect_error(13, "Expand", TM_NAMES("x", "i"), 2, TM_DIMS(2), 1,
		     (const double[]){ 2, 4 }, NULL, 0, "cannot expand [2,3] to [2,4]");
	expect_error(13, "Slice", TM_NAMES("x", "i", "i", "", "i"), 5, TM_DIMS(1), 1,
		     (const double[]){ 0 }, NULL, 0, "step of axis 0 is 0");
	expect_error(13, "Split", TM_NAMES("x", "i"), 2, TM_DIMS(1), 1,
		     (const double[]){ 3 }, NULL, 0, "splits add up to 3, axis 0 has 2");
	expect_error(13, "Pad", TM_NAMES("x", "i"), 2, TM_DIMS(3), 1,
		     (const double[]){ 1, 1, 1 }, NULL, 0, "pads has 3 entries, expected 4");
	expect_error(13, "Squeeze", TM_NAMES("x", "i"), 2, TM_DIMS(1), 1,
		     (const double[]){ 1 }, NULL, 0, "cannot squeeze axis 1 of size 3");
	expect_error(13, "DepthToSpace", TM_NAMES("x"), 1, NULL, 0, NULL, "blocksize", 2,
		     "input must be 4-D, has rank 2");
	expect_error(13, "Tile", TM_NAMES("x", "i"), 2, TM_DIMS(1), 1,
		     (const double[]){ 2 }, NULL, 0, "repeats has 1 entries for rank 2");
	expect_error(11, "Compress", TM_NAMES("x", "i"), 2, TM_DIMS(4), 1,
		     (const double[]){ 0, 0, 0, 1 }, "axis", 1,
		     "condition selects index 3 beyond the axis size 3");
}

/* DepthToSpace in both modes, blocks of 2 and 3, elements of 1, 2, 4
 * and 8 bytes, one and two threads, against the specification's
 * reshape-transpose-reshape read by index: DCR y[n, c, h b + i, w b + j]
 * = x[n, (i b + j) C' + c, h, w]; CRD x[n, c b b + i b + j, h, w]. */
static void test_depth_to_space(void)
{
	static const int dts[4] = { IR_DTYPE_UINT8, IR_DTYPE_FLOAT16, IR_DTYPE_FLOAT,
				    IR_DTYPE_INT64 };
	static double xv[2 * 18 * 3 * 5];

	for (int t = 0; t < 4; t++)
		for (int64_t b = 2; b <= 3; b++)
			for (int crd = 0; crd < 2; crd++) {
				int64_t n = 2, cp = 2, c = cp * b * b, h = 3, w = 5, nx = n * c * h * w;
				struct ir_model *m = tm_new(13);
				struct ir_node *nd;
				struct rt_value *y;
				int bad = 0;

				for (int64_t i = 0; i < nx; i++)
					xv[i] = (double)(i % 200);
				tm_init(m, "x", dts[t], TM_DIMS(n, c, h, w), 4, xv);
				nd = one(m, "DepthToSpace", TM_NAMES("x"), 1, dts[t]);
				ir_node_set_int(nd, "blocksize", b);
				ir_node_set_string(nd, "mode", crd ? "CRD" : "DCR");
				CU_ASSERT_FATAL(run_threads(m, &y, 1, NULL, 1 + (int)b % 2) == 0);
				check_dims(y, 4, TM_DIMS(n, cp, h * b, w * b));
				for (int64_t in = 0; in < n; in++)
					for (int64_t oc = 0; oc < cp; oc++)
						for (int64_t yy = 0; yy < h * b; yy++)
							for (int64_t xx = 0; xx < w * b; xx++) {
								int64_t i = yy % b, j = xx % b;
								int64_t ch = crd ? oc * b * b + i * b + j :
										   (i * b + j) * cp + oc;
								double want = xv[((in * c + ch) * h + yy / b) * w +
										 xx / b];
								int64_t at = ((in * cp + oc) * h * b + yy) * w * b + xx;

								bad += rt_value_get_f64(y, at) != want;
							}
				CU_ASSERT_EQUAL(bad, 0);
				rt_value_unref(y);
				ir_model_free(m);
			}
}

static void test_upsample1_resize10(void)
{
	struct rt_value *y;
	struct ir_model *m = tm_new(1);
	struct ir_node *n;

	/* Upsample-1 bilinear x2 of [[0,2],[4,6]], asymmetric: coordinates 0,
	 * .5, 1, 1.5 (the last clamps) on both axes */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 2), 4, (const double[]){ 0, 2, 4, 6 });
	n = one(m, "Upsample", TM_NAMES("x"), 1, IR_DTYPE_FLOAT);
	ir_node_set_string(n, "mode", "bilinear");
	ir_node_set_float(n, "height_scale", 2);
	ir_node_set_float(n, "width_scale", 2);
	CU_ASSERT_FATAL(run(m, &y, 1, NULL) == 0);
	check_dims(y, 4, TM_DIMS(1, 1, 4, 4));
	check_f64(y, (const double[]){ 0, 1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 6, 4, 5, 6, 6 }, 16);
	rt_value_unref(y);
	ir_model_free(m);

	/* Resize-10 nearest x0.6 of 0..4: 3 outputs at x/0.6 = 0, 1.67, 3.33;
	 * opset 10 has no nearest_mode: downsampling takes the ceiling (as
	 * onnxruntime does): 0, 2, 4 */
	m = tm_new(10);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(5), 1, iota);
	tm_init(m, "sc", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 0.6 });
	one(m, "Resize", TM_NAMES("x", "sc"), 2, IR_DTYPE_FLOAT);
	CU_ASSERT_FATAL(run(m, &y, 1, NULL) == 0);
	check_f64(y, (const double[]){ 0, 2, 4 }, 3);
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_grid_sample_threads_agree(void)
{
	struct rt_value *y[2];
	double *xv = malloc(2 * 40 * 40 * sizeof(double));
	double *gv = malloc(64 * 64 * 2 * sizeof(double));
	int bad = 0;

	/* bicubic with reflection on 1 and 2 threads gives the same bits */
	CU_ASSERT_FATAL(xv && gv);
	for (int i = 0; i < 2 * 40 * 40; i++)
		xv[i] = (i * 7919 % 1013) / 100.0;
	for (int i = 0; i < 64 * 64 * 2; i++)
		gv[i] = (i * 104729 % 2003) / 834.0 - 1.2;
	for (int t = 0; t < 2; t++) {
		struct ir_model *m = tm_new(16);
		struct ir_node *n;

		tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 40, 40), 4, xv);
		tm_init(m, "g", IR_DTYPE_FLOAT, TM_DIMS(1, 64, 64, 2), 4, gv);
		n = one(m, "GridSample", TM_NAMES("x", "g"), 2, IR_DTYPE_FLOAT);
		ir_node_set_string(n, "mode", "bicubic");
		ir_node_set_string(n, "padding_mode", "reflection");
		CU_ASSERT_FATAL(run_threads(m, &y[t], 1, NULL, t + 1) == 0);
		ir_model_free(m);
	}
	free(xv);
	free(gv);
	check_dims(y[1], 4, TM_DIMS(1, 2, 64, 64));
	for (int64_t i = 0; i < y[0]->numel; i++)
		bad += ((float *)y[0]->data)[i] != ((float *)y[1]->data)[i];
	CU_ASSERT_EQUAL(bad, 0);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);
}

/* ---- older opsets' attribute forms ------------------------------------ */

static void test_old_attribute_forms(void)
{
	struct ir_model *m = tm_new(2);
	struct rt_value *y[4];
	struct ir_node *n;

	/* Slice-1 attrs: [0..4] from 1 to a huge end on axis 0: [1,2,3,4].
	 * Pad-2 attrs: [1,2] padded 1 before with 7: [7,1,2].
	 * Split-2 attr split [1,2] of [0,1,2]: [0] and [1,2]. */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(5), 1, iota);
	tm_init(m, "p", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1, 2 });
	tm_init(m, "q", IR_DTYPE_FLOAT, TM_DIMS(3), 1, iota);
	n = tm_node(m, "Slice", NULL, TM_NAMES("x"), 1, TM_NAMES("a"), 1);
	ir_node_set_ints(n, "starts", TM_DIMS(1), 1);
	ir_node_set_ints(n, "ends", TM_DIMS(INT64_MAX), 1);
	ir_node_set_ints(n, "axes", TM_DIMS(0), 1);
	n = tm_node(m, "Pad", NULL, TM_NAMES("p"), 1, TM_NAMES("b"), 1);
	ir_node_set_ints(n, "pads", TM_DIMS(1, 0), 2);
	ir_node_set_float(n, "value", 7);
	n = tm_node(m, "Split", NULL, TM_NAMES("q"), 1, TM_NAMES("c", "d"), 2);
	ir_node_set_ints(n, "split", TM_DIMS(1, 2), 2);
	tm_output(m, "a", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "b", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "c", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "d", IR_DTYPE_FLOAT, NULL, 0);
	CU_ASSERT_FATAL(run(m, y, 4, NULL) == 0);
	check_f64(y[0], (const double[]){ 1, 2, 3, 4 }, 4);
	check_f64(y[1], (const double[]){ 7, 1, 2 }, 3);
	check_f64(y[2], (const double[]){ 0 }, 1);
	check_f64(y[3], (const double[]){ 1, 2 }, 2);
	for (int i = 0; i < 4; i++)
		rt_value_unref(y[i]);
	ir_model_free(m);
}

static void test_tile1_upsample7(void)
{
	struct ir_model *m = tm_new(7);
	struct rt_value *y[2];
	struct ir_node *n;

	/* Tile-1 with tiles 2 on axis 0: [1,2,1,2].  Upsample-7 linear x2 of
	 * [0,2]: asymmetric x/2 = 0, .5, 1, 1.5 -> 0, 1, 2, 2 (edge clamps) */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1, 2 });
	tm_init(m, "t", IR_DTYPE_INT64, NULL, 0, (const double[]){ 2 });
	tm_init(m, "ax", IR_DTYPE_INT64, NULL, 0, (const double[]){ 0 });
	tm_init(m, "u", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 0, 2 });
	tm_node(m, "Tile", NULL, TM_NAMES("x", "t", "ax"), 3, TM_NAMES("a"), 1);
	n = tm_node(m, "Upsample", NULL, TM_NAMES("u"), 1, TM_NAMES("b"), 1);
	ir_node_set_floats(n, "scales", (const float[]){ 2 }, 1);
	ir_node_set_string(n, "mode", "linear");
	tm_output(m, "a", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "b", IR_DTYPE_FLOAT, NULL, 0);
	CU_ASSERT_FATAL(run(m, y, 2, NULL) == 0);
	check_f64(y[0], (const double[]){ 1, 2, 1, 2 }, 4);
	check_f64(y[1], (const double[]){ 0, 1, 2, 2 }, 4);
	rt_value_unref(y[0]);
	rt_value_unref(y[1]);
	ir_model_free(m);
}

static void test_resize_half_pixel_symmetric(void)
{
	struct ir_model *m = tm_new(19);
	struct rt_value *y;
	struct ir_node *n;

	/* [1,2,3,4] x0.6: 2 outputs for a nominal 2.4; adjustment 2/2.4, offset
	 * 2 * (1 - 5/6) = 1/3; x = 1/3 + (o + .5)/.6 - .5 = 2/3, 7/3 ->
	 * linear 1 + 2/3, 3 + 1/3 */
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4), 1, (const double[]){ 1, 2, 3, 4 });
	tm_init(m, "sc", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 0.6 });
	n = one(m, "Resize", TM_NAMES("x", "", "sc"), 3, IR_DTYPE_FLOAT);
	ir_node_set_string(n, "mode", "linear");
	ir_node_set_string(n, "coordinate_transformation_mode", "half_pixel_symmetric");
	CU_ASSERT_FATAL(run(m, &y, 1, NULL) == 0);
	check_f64(y, (const double[]){ 1 + 2.0 / 3, 3 + 1.0 / 3 }, 2);
	rt_value_unref(y);
	ir_model_free(m);
}

static const struct unit_test tests[] = {
	{ "Reshape 0, -1 and allowzero", test_reshape_allowzero },
	{ "Reshape with a wrong element count fails", test_reshape_bad_count },
	{ "Squeeze/Unsqueeze with axes attributes", test_squeeze_unsqueeze_attrs },
	{ "string Gather, Concat, Transpose", test_string_moves },
	{ "Gather index out of range fails", test_gather_out_of_range },
	{ "GatherND batch_dims", test_gather_nd_batch },
	{ "ScatterND max/min, ScatterElements mul", test_scatter_reductions },
	{ "ScatterElements index out of range fails", test_scatter_elements_bad_index },
	{ "TensorScatter circular", test_tensor_scatter },
	{ "Slice negative steps on int8", test_slice_negative_steps_int8 },
	{ "Split num_outputs uneven", test_split_num_outputs },
	{ "Pad modes with axes", test_pad_modes },
	{ "CenterCropPad crop and pad", test_center_crop_pad },
	{ "Tile and Trilu", test_tile_and_trilu },
	{ "Resize linear antialias", test_resize_antialias },
	{ "Resize axes and keep_aspect_ratio_policy", test_resize_axes_aspect },
	{ "Resize nearest on strings", test_resize_strings_nearest },
	{ "GridSample 3-D linear", test_grid_sample_3d },
	{ "AffineGrid 2-D", test_affine_grid },
	{ "Slice-1, Pad-2, Split-2 attribute forms", test_old_attribute_forms },
	{ "Tile-1 inputs, Upsample-7 linear", test_tile1_upsample7 },
	{ "Resize half_pixel_symmetric", test_resize_half_pixel_symmetric },
	{ "big Transpose and Slice on 2 threads", test_big_transpose_threads },
	{ "Transpose: every perm of ranks 1-5", test_transpose_every_perm },
	{ "Resize on 1 and 2 threads agrees", test_resize_threads_agree },
	{ "Resize linear on uint8 truncates", test_resize_uint8_truncates },
	{ "error messages name the fault", test_error_paths },
	{ "Upsample-1 bilinear, Resize-10 nearest", test_upsample1_resize10 },
	{ "DepthToSpace modes, blocks and element sizes", test_depth_to_space },
	{ "GridSample on 1 and 2 threads agrees", test_grid_sample_threads_agree },
	{ NULL, NULL },
};

int suite_kshape_register(void)
{
	return unit_add_suite("kshape", tests);
}
