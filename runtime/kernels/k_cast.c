/* k_cast.c: dtype conversion kernels: Cast (every numeric pair, strings
 * both ways, float8 with and without saturation, 4-bit integers wrapped
 * as other integer narrowings), CastLike, and BitCast (same bits, other dtype). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime/kernels/k_elem_int.h"

static int is_f8(int t)
{
	return t == IR_DTYPE_FLOAT8E4M3FN || t == IR_DTYPE_FLOAT8E4M3FNUZ ||
	       t == IR_DTYPE_FLOAT8E5M2 || t == IR_DTYPE_FLOAT8E5M2FNUZ;
}

/* ---- numbers to text, as numpy's str() of a scalar ------------------ */

/* Does text parse back to element i of (dt, data) exactly? */
static int round_trips(int dt, const void *data, int64_t i, const char *text)
{
	double v = strtod(text, NULL);
	unsigned char want[8], got[8];
	size_t es = rt_dtype_size(dt);

	if (dt == IR_DTYPE_FLOAT)
		v = strtof(text, NULL);
	memcpy(want, (const char *)data + (size_t)i * es, es);
	rt_store_f64(dt, got, 0, v);
	return !memcmp(want, got, es);
}

/* Shortest digits that read back as the same value; positional for
 * 1e-4 <= |v| < 1e16, else d.ddde+XX (Python's repr rule). */
static void format_float(int dt, const void *data, int64_t i, char *out,
			 size_t size)
{
	double v = rt_load_f64(dt, data, i);
	char sci[40], digits[24];
	int exp10, nd = 0, o = 0;

	if (isnan(v)) {
		snprintf(out, size, "nan");
		return;
	}
	if (isinf(v)) {
		snprintf(out, size, v < 0 ? "-inf" : "inf");
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(sci, sizeof(sci), "%.*e", p - 1, v);
		if (round_trips(dt, data, i, sci))
			break;
	}
	/* sci: [-]d[.ddd]e[+-]XX */
	{
		const char *s = sci;
		char *e;

		if (*s == '-')
			s++;
		for (; *s && *s != 'e'; s++)
			if (*s != '.')
				digits[nd++] = *s;
		exp10 = (int)strtol(s + 1, &e, 10);
		while (nd > 1 && digits[nd - 1] == '0')
			nd--;
		digits[nd] = 0;
	}
	if (signbit(v))
		out[o++] = '-';
	if (v == 0) {
		snprintf(out + o, size - (size_t)o, "0.0");
		return;
	}
	if (exp10 >= -4 && exp10 < 16) {
		if (exp10 >= 0) {
			for (int d = 0; d <= exp10; d++)
				out[o++] = d < nd ? digits[d] : '0';
			out[o++] = '.';
			if (nd > exp10 + 1)
				for (int d = exp10 + 1; d < nd; d++)
					out[o++] = digits[d];
			else
				out[o++] = '0';
		} else {
			out[o++] = '0';
			out[o++] = '.';
			for (int d = 0; d < -exp10 - 1; d++)
				out[o++] = '0';
			for (int d = 0; d < nd; d++)
				out[o++] = digits[d];
		}
		out[o] = 0;
		return;
	}
	out[o++] = digits[0];
	if (nd > 1) {
		out[o++] = '.';
		for (int d = 1; d < nd; d++)
			out[o++] = digits[d];
	}
	snprintf(out + o, size - (size_t)o, "e%c%02d", exp10 < 0 ? '-' : '+',
		 exp10 < 0 ? -exp10 : exp10);
}

static int to_strings(struct rt_kctx *k, const struct rt_value *x,
		      struct rt_value *y)
{
	char **o = y->data, buf[64];
	int dt = x->dtype;

	for (int64_t i = 0; i < x->numel; i++) {
		if (dt == IR_DTYPE_STRING) {
			const char *s = ((char *const *)x->data)[i];

			if (!(o[i] = strdup(s ? s : "")))
				return rt_oom(k);
			continue;
		}
		if (dt == IR_DTYPE_BOOL)
			snprintf(buf, sizeof(buf), "%s",
				 ((const uint8_t *)x->data)[i] ? "True" : "False");
		else if (dt == IR_DTYPE_UINT64)
			snprintf(buf, sizeof(buf), "%llu",
				 (unsigned long long)((const uint64_t *)x->data)[i]);
		else if (rt_dtype_is_int(dt))
			snprintf(buf, sizeof(buf), "%lld",
				 (long long)rt_load_i64(dt, x->data, i));
		else
			format_float(dt, x->data, i, buf, sizeof(buf));
		if (!(o[i] = strdup(buf)))
			return rt_oom(k);
	}
	return 0;
}

/* An integer into a 4-bit dtype: the low four bits, as any integer
 * narrowing (int4 sign-extended in its byte). */
static uint8_t nibble(int dt, int64_t v)
{
	uint64_t n = (uint64_t)v & 15u;

	return (uint8_t)(dt == IR_DTYPE_INT4 && n >= 8 ? n + 0xf0u : n);
}

/* ---- text to numbers ---------------------------------------------------- */

static int from_strings(struct rt_kctx *k, const struct rt_value *x,
			struct rt_value *y, int saturate)
{
	int dt = y->dtype;

	for (int64_t i = 0; i < x->numel; i++) {
		const char *s = ((char *const *)x->data)[i];
		char *end;

		if (!s)
			s = "";
		if (dt == IR_DTYPE_BOOL && (!strcasecmp(s, "true") || !strcasecmp(s, "false"))) {
			((uint8_t *)y->data)[i] = !strcasecmp(s, "true");
			continue;
		}
		if (rt_dtype_is_int(dt) || dt == IR_DTYPE_BOOL) {
			long long v = strtoll(s, &end, 10);

			if (end != s && !*end) {
				if (dt == IR_DTYPE_UINT64 && *s != '-')
					((uint64_t *)y->data)[i] = strtoull(s, NULL, 10);
				else if (dt == IR_DTYPE_INT4 || dt == IR_DTYPE_UINT4)
					((uint8_t *)y->data)[i] = nibble(dt, v);
				else
					rt_store_i64(dt, y->data, i, v);
				continue;
			}
		}
		if (dt == IR_DTYPE_FLOAT) {
			((float *)y->data)[i] = strtof(s, &end);
		} else {
			double v = strtod(s, &end);

			if (is_f8(dt))
				((uint8_t *)y->data)[i] = rt_float_to_f8(dt, (float)v, saturate);
			else if (dt == IR_DTYPE_INT4 || dt == IR_DTYPE_UINT4)
				((uint8_t *)y->data)[i] = nibble(dt, (int64_t)fmax(fmin(v, 9e18), -9e18));
			else
				rt_store_f64(dt, y->data, i, v);
		}
		if (end == s)
			return rt_err(k, "element %lld: '%.40s' is not a number",
				      (long long)i, s);
	}
	return 0;
}

/* ---- numbers to numbers ---------------------------------------------- */

struct cjob {
	const struct rt_value *x;
	struct rt_value *y;
	int saturate;
	void (*loop)(const void *x, void *y, int64_t n);   /* a typed loop, or NULL */
};

/* v as a float rounded to odd: exact when v is, else the float below |v|
 * with its last bit set, so that rounding it again to a narrower format
 * (half, bfloat16, float8) gives what rounding v directly would. */
static float odd_float(double v)
{
	float f = (float)v;
	uint32_t b;

	if (isnan(v) || (double)f == v)
		return f;
	if (fabs((double)f) > fabs(v))
		f = nextafterf(f, 0.0f);
	memcpy(&b, &f, 4);
	b |= 1;
	memcpy(&f, &b, 4);
	return f;
}

/* Element i of (s, xd) into the narrow float dtype d, rounded once. */
static void store_narrow(int d, void *yd, int64_t i, int s, const void *xd,
			 int saturate)
{
	float f = odd_float(rt_load_f64(s, xd, i));

	if (d == IR_DTYPE_FLOAT16)
		((uint16_t *)yd)[i] = rt_float_to_half(f);
	else if (d == IR_DTYPE_BFLOAT16)
		((uint16_t *)yd)[i] = rt_float_to_bf16(f);
	else
		((uint8_t *)yd)[i] = rt_float_to_f8(d, f, is_f8(d) ? saturate : 1);
}

/* Typed loops of the common pairs among float32, double, int64, int32,
 * int8, uint8 and bool, which the per-element load and store below took
 * at 2 ns an element (a keypoint net's Casts of bool masks to float).
 * Each gives what rt_store_f64/rt_store_i64 of rt_load_f64/rt_load_i64
 * give: integers wrap to the width, any nonzero (NaN too) is true, a
 * float goes to an integer through int64 as C truncates (NaN and values
 * below -2^63 are INT64_MIN, above INT64_MAX, dtype.c's trunc_i64), and
 * int64 to float32 through double (rounded twice, as before). */
static inline int64_t trunc_f64(double v)
{
	return v != v || v <= -9.2233720368547758e18 ? INT64_MIN :
	       v >= 9.2233720368547758e18 ? INT64_MAX : (int64_t)v;
}

typedef void (*cast_loop_fn)(const void *x, void *y, int64_t n);

#define CAST_LOOP(name, S, D, EXPR) \
static void name(const void *xv, void *yv, int64_t n) \
{ \
	const S *x = xv; \
	D *y = yv; \
	for (int64_t i = 0; i < n; i++) { \
		S v = x[i]; \
		y[i] = (D)(EXPR); \
	} \
}
/* from an integer type S (bool as uint8_t) to each destination; W:
 * double for int64 (the rounding twice), else S (exact in double) */
#define CAST_FROM_INT(sn, S, W) \
	CAST_LOOP(sn##_f32, S, float, (W)v) \
	CAST_LOOP(sn##_f64, S, double, v) \
	CAST_LOOP(sn##_i64, S, int64_t, v) \
	CAST_LOOP(sn##_i32, S, int32_t, v) \
	CAST_LOOP(sn##_i8, S, int8_t, v) \
	CAST_LOOP(sn##_u8, S, uint8_t, v) \
	CAST_LOOP(sn##_b, S, uint8_t, v != 0)
#define CAST_FROM_FLOAT(sn, S) \
	CAST_LOOP(sn##_i64, S, int64_t, trunc_f64(v)) \
	CAST_LOOP(sn##_i32, S, int32_t, trunc_f64(v)) \
	CAST_LOOP(sn##_i8, S, int8_t, trunc_f64(v)) \
	CAST_LOOP(sn##_u8, S, uint8_t, trunc_f64(v)) \
	CAST_LOOP(sn##_b, S, uint8_t, v != 0)
CAST_FROM_INT(i64, int64_t, double)
CAST_FROM_INT(i32, int32_t, int32_t)
CAST_FROM_INT(i8, int8_t, int8_t)
CAST_FROM_INT(u8, uint8_t, uint8_t)
CAST_FROM_FLOAT(f32, float)
CAST_FROM_FLOAT(f64, double)
CAST_LOOP(f32_f64, float, double, v)
CAST_LOOP(f64_f32, double, float, v)

#define CAST_ROWS(sd, sn) \
	{ sd, IR_DTYPE_FLOAT, sn##_f32 }, { sd, IR_DTYPE_DOUBLE, sn##_f64 }, \
	{ sd, IR_DTYPE_INT64, sn##_i64 }, { sd, IR_DTYPE_INT32, sn##_i32 }, \
	{ sd, IR_DTYPE_INT8, sn##_i8 }, { sd, IR_DTYPE_UINT8, sn##_u8 }, \
	{ sd, IR_DTYPE_BOOL, sn##_b }

static const struct cast_loop {
	int s, d;
	cast_loop_fn fn;
} cast_loops[] = {
	CAST_ROWS(IR_DTYPE_INT64, i64),
	CAST_ROWS(IR_DTYPE_INT32, i32),
	CAST_ROWS(IR_DTYPE_INT8, i8),
	CAST_ROWS(IR_DTYPE_UINT8, u8),
	CAST_ROWS(IR_DTYPE_BOOL, u8),
	{ IR_DTYPE_FLOAT, IR_DTYPE_DOUBLE, f32_f64 },
	{ IR_DTYPE_FLOAT, IR_DTYPE_INT64, f32_i64 },
	{ IR_DTYPE_FLOAT, IR_DTYPE_INT32, f32_i32 },
	{ IR_DTYPE_FLOAT, IR_DTYPE_INT8, f32_i8 },
	{ IR_DTYPE_FLOAT, IR_DTYPE_UINT8, f32_u8 },
	{ IR_DTYPE_FLOAT, IR_DTYPE_BOOL, f32_b },
	{ IR_DTYPE_DOUBLE, IR_DTYPE_FLOAT, f64_f32 },
	{ IR_DTYPE_DOUBLE, IR_DTYPE_INT64, f64_i64 },
	{ IR_DTYPE_DOUBLE, IR_DTYPE_INT32, f64_i32 },
	{ IR_DTYPE_DOUBLE, IR_DTYPE_INT8, f64_i8 },
	{ IR_DTYPE_DOUBLE, IR_DTYPE_UINT8, f64_u8 },
	{ IR_DTYPE_DOUBLE, IR_DTYPE_BOOL, f64_b },
};

/* The typed loop of (s, d), or NULL (same dtypes never come here). */
static cast_loop_fn cast_loop_find(int s, int d)
{
	for (size_t i = 0; i < sizeof(cast_loops) / sizeof(cast_loops[0]); i++)
		if (cast_loops[i].s == s && cast_loops[i].d == d)
			return cast_loops[i].fn;
	return NULL;
}

static void cast_range(void *arg, int64_t begin, int64_t end)
{
	const struct cjob *j = arg;
	int s = j->x->dtype, d = j->y->dtype;
	const void *xd = j->x->data;
	void *yd = j->y->data;
	size_t ss = rt_dtype_size(s), ds = rt_dtype_size(d);

	if (j->loop) {
		j->loop((const char *)xd + (size_t)begin * ss, (char *)yd + (size_t)begin * ds,
			end - begin);
	} else if (s == IR_DTYPE_FLOAT && d == IR_DTYPE_FLOAT16) {
		rt_float_to_half_n((const float *)xd + begin, (uint16_t *)yd + begin, end - begin);
	} else if (s == IR_DTYPE_FLOAT16 && d == IR_DTYPE_FLOAT) {
		rt_half_to_float_n((const uint16_t *)xd + begin, (float *)yd + begin, end - begin);
	} else if (s == IR_DTYPE_FLOAT && d == IR_DTYPE_BFLOAT16) {
		for (int64_t i = begin; i < end; i++)
			((uint16_t *)yd)[i] = rt_float_to_bf16(((const float *)xd)[i]);
	} else if (s == IR_DTYPE_BFLOAT16 && d == IR_DTYPE_FLOAT) {
		for (int64_t i = begin; i < end; i++)
			((float *)yd)[i] = rt_bf16_to_float(((const uint16_t *)xd)[i]);
	} else if (kel_is_narrow_float(d)) {
		for (int64_t i = begin; i < end; i++)
			store_narrow(d, yd, i, s, xd, j->saturate);
	} else if (d == IR_DTYPE_INT4 || d == IR_DTYPE_UINT4) {
		/* as any integer narrowing: floats truncate, then the low
		 * four bits are kept (ml_dtypes' astype, which the ONNX
		 * reference uses) */
		for (int64_t i = begin; i < end; i++)
			((uint8_t *)yd)[i] = nibble(d, rt_load_i64(s, xd, i));
	} else if (rt_dtype_is_float(d) || rt_dtype_is_float(s)) {
		for (int64_t i = begin; i < end; i++)
			rt_store_f64(d, yd, i, rt_load_f64(s, xd, i));
	} else {
		for (int64_t i = begin; i < end; i++)
			rt_store_i64(d, yd, i, rt_load_i64(s, xd, i));
	}
}

static int numeric_dtype(int t)
{
	return rt_dtype_is_float(t) || rt_dtype_is_int(t) || t == IR_DTYPE_BOOL;
}

/* Output 0 = input 0 converted to dtype `to`. */
static int cast_to(struct rt_kctx *k, int to)
{
	int saturate = (int)rt_attr_int(k, "saturate", 1);
	struct rt_value *x, *y;
	struct cjob j;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (!ir_dtype_get(to) || (to != IR_DTYPE_STRING && !numeric_dtype(to)))
		return rt_err(k, "cannot cast to %s (dtype %d)", ir_dtype_name(to), to);
	if (x->dtype != IR_DTYPE_STRING && !numeric_dtype(x->dtype))
		return kel_bad_dtype(k, x->dtype);
	if (x->dtype == to && to != IR_DTYPE_STRING)
		return rt_out_set(k, 0, rt_value_ref(x));
	/* to float16 for readers that compute in float32: kept so */
	if ((rc = rt_lowp_cast_keep(k, x, to)) != 0)
		return rc < 0 ? rc : 0;
	if (!(y = rt_out_tensor(k, 0, to, x->rank, x->dims)))
		return IR_ENOMEM;
	if (to == IR_DTYPE_STRING)
		return to_strings(k, x, y);
	if (x->dtype == IR_DTYPE_STRING)
		return from_strings(k, x, y, saturate);
	j.x = x;
	j.y = y;
	j.saturate = saturate;
	j.loop = cast_loop_find(x->dtype, to);
	rt_parallel_for(k, x->numel, 16384, cast_range, &j);
	return 0;
}

static int k_cast(struct rt_kctx *k)
{
	const struct ir_attr *a = rt_attr(k, "to");

	if (!a)
		return rt_err(k, "attribute 'to' is missing");
	if (a->type == IR_ATTR_STRING && a->s) {   /* opset 1: a type name */
		for (int t = 1; t < IR_DTYPE_COUNT; t++)
			if (ir_dtype_get(t) && !strcasecmp((const char *)a->s, ir_dtype_name(t)))
				return cast_to(k, t);
		return rt_err(k, "unknown type name '%s'", (const char *)a->s);
	}
	return cast_to(k, (int)rt_attr_int(k, "to", 0));
}

static int k_castlike(struct rt_kctx *k)
{
	struct rt_value *like;
	int rc;

	if ((rc = rt_in_tensor(k, 1, &like)) < 0)
		return rc;
	return cast_to(k, like->dtype);
}

/* ---- BitCast ------------------------------------------------------------ */

static int k_bitcast(struct rt_kctx *k)
{
	int to = (int)rt_attr_int(k, "to", 0);
	const struct ir_dtype_info *si, *di = ir_dtype_get(to);
	struct rt_value *x, *y;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	si = ir_dtype_get(x->dtype);
	if (!di || to == IR_DTYPE_STRING)
		return rt_err(k, "cannot bitcast to %s (dtype %d)", ir_dtype_name(to), to);
	if (!si || x->dtype == IR_DTYPE_STRING)
		return kel_bad_dtype(k, x->dtype);
	if (si->bits != di->bits)
		return rt_err(k, "%s has %u bits, %s %u", ir_dtype_name(x->dtype),
			      si->bits, ir_dtype_name(to), di->bits);
	if (!(y = rt_out_tensor(k, 0, to, x->rank, x->dims)))
		return IR_ENOMEM;
	if (si->bits == 4) {
		const uint8_t *s = x->data;
		uint8_t *o = y->data;

		for (int64_t i = 0; i < x->numel; i++) {
			unsigned nib = s[i] & 15u;

			o[i] = (uint8_t)(to == IR_DTYPE_INT4 && nib >= 8 ? nib + 0xf0u : nib);
		}
	} else if (x->numel) {
		memcpy(y->data, x->data, (size_t)x->numel * rt_dtype_size(to));
		if (to == IR_DTYPE_BOOL)
			for (int64_t i = 0; i < y->numel; i++)
				((uint8_t *)y->data)[i] = ((uint8_t *)y->data)[i] != 0;
	}
	return 0;
}

const struct rt_kernel rt_kernels_cast[] = {
	{ "ai.onnx", "BitCast", 26, RT_OPEN, k_bitcast },
	{ "ai.onnx", "Cast", 1, RT_OPEN, k_cast },
	{ "ai.onnx", "CastLike", 15, RT_OPEN, k_castlike },
};
const size_t rt_n_kernels_cast = sizeof(rt_kernels_cast) / sizeof(rt_kernels_cast[0]);
