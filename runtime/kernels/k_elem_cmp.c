/* k_elem_cmp.c: the kernels that pick or compare elements: Equal (also on
 * strings), Greater, GreaterOrEqual, Less, LessOrEqual (bool outputs, the
 * opset < 7 broadcast attributes too) and Where (any dtype, strings
 * copied); their table lines are in k_binary.c. */
#include <string.h>

#include "runtime/kernels/k_elem_int.h"

/* ---- comparisons ----------------------------------------------------- */

enum { CMP_EQ, CMP_GT, CMP_GE, CMP_LT, CMP_LE };

struct cjob {
	const struct rt_value *a, *b;
	uint8_t *y;
	int mode;
};

/* One comparison OP over a run in C type T, each operand's step (0 or 1,
 * all the engines give) a constant, so that the loops vectorize: the
 * per-element path below ran Equal on 76800 floats at 0.7 ns an element.
 * C's comparisons give the values the per-element path does: false on
 * NaN, unsigned types compared unsigned. */
#define CMP_RUN(OP, SA, SB) \
	for (int64_t i = 0; i < len; i++) \
		y[i] = (uint8_t)(a[i * (SA)] OP b[i * (SB)])
#define CMP_STEPS(OP) do { \
		if (sa && sb) \
			CMP_RUN(OP, 1, 1); \
		else if (sa) \
			CMP_RUN(OP, 1, 0); \
		else \
			CMP_RUN(OP, 0, sb); \
	} while (0)
#define CMP_TYPED(T) do { \
		const T *a = (const T *)j->a->data + off[0]; \
		const T *b = (const T *)j->b->data + off[1]; \
		switch (m) { \
		case CMP_EQ: CMP_STEPS(==); break; \
		case CMP_GT: CMP_STEPS(>); break; \
		case CMP_GE: CMP_STEPS(>=); break; \
		case CMP_LT: CMP_STEPS(<); break; \
		default: CMP_STEPS(<=); break; \
		} \
		return; \
	} while (0)

static void cmp_run(void *arg, const int64_t *off, const int64_t *step,
		    int64_t len)
{
	const struct cjob *j = arg;
	int dt = j->a->dtype, m = j->mode;
	int uns = rt_dtype_is_int(dt) && !rt_dtype_is_signed(dt);
	int64_t sa = step[0], sb = step[1];
	uint8_t *y = j->y + off[2];

	switch (dt) {
	case IR_DTYPE_FLOAT: CMP_TYPED(float);
	case IR_DTYPE_DOUBLE: CMP_TYPED(double);
	case IR_DTYPE_INT64: CMP_TYPED(int64_t);
	case IR_DTYPE_INT32: CMP_TYPED(int32_t);
	case IR_DTYPE_INT8: CMP_TYPED(int8_t);
	case IR_DTYPE_UINT8: case IR_DTYPE_BOOL: CMP_TYPED(uint8_t);
	default: break;
	}
	for (int64_t i = 0; i < len; i++) {
		int64_t ia = off[0] + i * step[0], ib = off[1] + i * step[1];
		int lt, gt;

		if (dt == IR_DTYPE_STRING) {
			const char *x = ((char *const *)j->a->data)[ia];
			const char *z = ((char *const *)j->b->data)[ib];
			int c = strcmp(x ? x : "", z ? z : "");

			lt = c < 0;
			gt = c > 0;
		} else if (rt_dtype_is_float(dt)) {
			double x = rt_load_f64(dt, j->a->data, ia);
			double z = rt_load_f64(dt, j->b->data, ib);

			if (x != x || z != z) {   /* NaN: only != holds */
				j->y[off[2] + i] = 0;
				continue;
			}
			lt = x < z;
			gt = x > z;
		} else {
			int64_t x = rt_load_i64(dt, j->a->data, ia);
			int64_t z = rt_load_i64(dt, j->b->data, ib);

			lt = uns ? (uint64_t)x < (uint64_t)z : x < z;
			gt = uns ? (uint64_t)x > (uint64_t)z : x > z;
		}
		j->y[off[2] + i] = (uint8_t)(m == CMP_EQ ? !lt && !gt :
					     m == CMP_GT ? gt : m == CMP_GE ? !lt :
					     m == CMP_LT ? lt : !gt);
	}
}
#undef CMP_TYPED
#undef CMP_STEPS
#undef CMP_RUN

static int compare(struct rt_kctx *k, int mode)
{
	struct rt_value *a, *b, *y, view, *ts[2];
	int64_t dims[RT_MAX_RANK];
	struct cjob j;
	int rank, rc;

	if ((rc = rt_in_tensor(k, 0, &a)) < 0 || (rc = rt_in_tensor(k, 1, &b)) < 0)
		return rc;
	if (a->dtype != b->dtype)
		return rt_err(k, "input types differ: %s and %s",
			      ir_dtype_name(a->dtype), ir_dtype_name(b->dtype));
	if (a->dtype == IR_DTYPE_STRING ? mode != CMP_EQ :
	    !rt_dtype_is_float(a->dtype) && !rt_dtype_is_int(a->dtype) &&
	    a->dtype != IR_DTYPE_BOOL)
		return kel_bad_dtype(k, a->dtype);
	if ((rc = kel_legacy_bcast(k, a, b, &view, &ts[1])) < 0)
		return rc;
	ts[0] = a;
	if ((rc = rt_broadcast_shape(k, ts, 2, &rank, dims)) < 0)
		return rc;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_BOOL, rank, dims)))
		return IR_ENOMEM;
	j.a = a;
	j.b = ts[1];
	j.y = y->data;
	j.mode = mode;
	kel_elementwise(k, ts, 2, rank, dims, cmp_run, &j);
	return 0;
}

int kel_equal(struct rt_kctx *k) { return compare(k, CMP_EQ); }
int kel_greater(struct rt_kctx *k) { return compare(k, CMP_GT); }
int kel_greater_eq(struct rt_kctx *k) { return compare(k, CMP_GE); }
int kel_less(struct rt_kctx *k) { return compare(k, CMP_LT); }
int kel_less_eq(struct rt_kctx *k) { return compare(k, CMP_LE); }

/* ---- Where ------------------------------------------------------------- */

struct wjob {
	const struct rt_value *c, *x, *z;
	struct rt_value *y;
	size_t es;
	int oom;
};

static void where_run(void *arg, const int64_t *off, const int64_t *step,
		      int64_t len)
{
	struct wjob *j = arg;
	const uint8_t *c = j->c->data;
	size_t es = j->es;

	/* strides of 0 or 1 (whole operands and single values, the common
	 * case) as constants, and both values read, so that the loops
	 * vectorize without branches (an attention mask's Where ran at 4 ns
	 * an element, mispredicting) */
#define WHERE_RUN(T, S0, S1, S2) \
		for (int64_t i = 0; i < len; i++) { \
			T a = x[i * (S1)], b = z[i * (S2)]; \
			y[i] = cc[i * (S0)] ? a : b; \
		}
#define WHERE_LOOP(T) do { \
		const T *x = (const T *)j->x->data + off[1]; \
		const T *z = (const T *)j->z->data + off[2]; \
		const uint8_t *cc = c + off[0]; \
		T *y = (T *)j->y->data + off[3]; \
		switch ((step[0] == 1) | (step[1] == 1) << 1 | (step[2] == 1) << 2 | \
			(((uint64_t)step[0] | (uint64_t)step[1] | (uint64_t)step[2]) > 1) << 3) { \
		case 0: WHERE_RUN(T, 0, 0, 0); break; \
		case 1: WHERE_RUN(T, 1, 0, 0); break; \
		case 2: WHERE_RUN(T, 0, 1, 0); break; \
		case 3: WHERE_RUN(T, 1, 1, 0); break; \
		case 4: WHERE_RUN(T, 0, 0, 1); break; \
		case 5: WHERE_RUN(T, 1, 0, 1); break; \
		case 6: WHERE_RUN(T, 0, 1, 1); break; \
		case 7: WHERE_RUN(T, 1, 1, 1); break; \
		default: WHERE_RUN(T, step[0], step[1], step[2]); break; \
		} \
		return; \
	} while (0)
	if (j->y->dtype != IR_DTYPE_STRING) {
		switch (es) {
		case 1: WHERE_LOOP(uint8_t);
		case 2: WHERE_LOOP(uint16_t);
		case 4: WHERE_LOOP(uint32_t);
		case 8: WHERE_LOOP(uint64_t);
		default: break;
		}
	}
#undef WHERE_LOOP
#undef WHERE_RUN
	for (int64_t i = 0; i < len; i++) {
		int take = c[off[0] + i * step[0]] != 0;
		const struct rt_value *src = take ? j->x : j->z;
		int64_t si = take ? off[1] + i * step[1] : off[2] + i * step[2];
		int64_t o = off[3] + i;

		if (j->y->dtype == IR_DTYPE_STRING) {
			const char *s = ((char *const *)src->data)[si];

			if (!(((char **)j->y->data)[o] = strdup(s ? s : "")))
				j->oom = 1;
		} else {
			memcpy((char *)j->y->data + (size_t)o * es,
			       (const char *)src->data + (size_t)si * es, es);
		}
	}
}

int kel_where(struct rt_kctx *k)
{
	struct rt_value *ts[3], *y;
	int64_t dims[RT_MAX_RANK];
	struct wjob j;
	int rank, rc;

	for (size_t i = 0; i < 3; i++)
		if ((rc = rt_in_tensor(k, i, &ts[i])) < 0)
			return rc;
	if (ts[0]->dtype != IR_DTYPE_BOOL)
		return rt_err(k, "condition must be bool, not %s",
			      ir_dtype_name(ts[0]->dtype));
	if (ts[1]->dtype != ts[2]->dtype)
		return rt_err(k, "input types differ: %s and %s",
			      ir_dtype_name(ts[1]->dtype), ir_dtype_name(ts[2]->dtype));
	if ((rc = rt_broadcast_shape(k, ts, 3, &rank, dims)) < 0)
		return rc;
	if (!(y = rt_out_tensor(k, 0, ts[1]->dtype, rank, dims)))
		return IR_ENOMEM;
	j.c = ts[0];
	j.x = ts[1];
	j.z = ts[2];
	j.y = y;
	j.es = rt_dtype_size(y->dtype);
	j.oom = 0;
	kel_elementwise(k, ts, 3, rank, dims, where_run, &j);
	return j.oom ? rt_oom(k) : 0;
}
