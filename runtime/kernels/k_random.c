/* k_random.c: kernels of the random family: RandomNormal(Like),
 * RandomUniform(Like), Bernoulli and Multinomial.  Draws come from a
 * splitmix64 generator seeded by the `seed` attribute when given, else by
 * a hash of the node's name (and op), so a model's runs are reproducible.
 * The spec leaves the generator open: values can never match another
 * runtime's, only their shape, dtype and distribution. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/inputs.h"
#include "runtime/rt_int.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static uint64_t seed_of(struct rt_kctx *k)
{
	const struct ir_attr *a = rt_attr(k, "seed");
	uint64_t h = 1469598103934665603ull;
	const char *p;

	if (a && (a->type == IR_ATTR_FLOAT || a->type == IR_ATTR_INT)) {
		double s = a->type == IR_ATTR_FLOAT ? a->f : (double)a->i;
		uint64_t bits;

		memcpy(&bits, &s, sizeof(bits));
		return bits ^ 0x9e3779b97f4a7c15ull;
	}
	for (p = ir_s(k->node->name); *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (p = ir_s(k->node->op_type); *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h ^ (uint64_t)k->node->index;
}

static int check_float_dtype(struct rt_kctx *k, int64_t dt)
{
	if (dt != IR_DTYPE_FLOAT && dt != IR_DTYPE_DOUBLE && dt != IR_DTYPE_FLOAT16 &&
	    dt != IR_DTYPE_BFLOAT16)
		return rt_err(k, "dtype %s is not a float type", ir_dtype_name((int)dt));
	return 0;
}

/* The output of a generator: shape from the attribute (no input) or from
 * input 0 (the *Like forms); dtype from the attribute, else the input's. */
static struct rt_value *gen_out(struct rt_kctx *k, int like)
{
	int64_t dt = rt_attr_int(k, "dtype", IR_DTYPE_FLOAT);
	struct rt_value *x;

	if (like) {
		if (rt_in_tensor(k, 0, &x) < 0)
			return NULL;
		if (!rt_attr(k, "dtype"))
			dt = x->dtype;
		if (check_float_dtype(k, dt) < 0)
			return NULL;
		return rt_out_tensor(k, 0, (int)dt, x->rank, x->dims);
	} else {
		size_t n;
		const int64_t *shape = rt_attr_ints(k, "shape", &n);

		if (!rt_attr(k, "shape")) {
			rt_err(k, "attribute 'shape' is required");
			return NULL;
		}
		if (n > RT_MAX_RANK) {
			rt_err(k, "shape of rank %zu too large", n);
			return NULL;
		}
		if (check_float_dtype(k, dt) < 0)
			return NULL;
		return rt_out_tensor(k, 0, (int)dt, (int)n, shape);
	}
}

static double normal(uint64_t *st)
{
	double u1 = rt_rand_unit(st), u2 = rt_rand_unit(st);

	return sqrt(-2 * log(1 - u1)) * cos(2 * M_PI * u2);
}

static int random_normal(struct rt_kctx *k, int like)
{
	double mean = rt_attr_float(k, "mean", 0), scale = rt_attr_float(k, "scale", 1);
	uint64_t st = seed_of(k);
	struct rt_value *y = gen_out(k, like);

	if (!y)
		return k->d->status ? k->d->status : IR_ENOMEM;
	for (int64_t i = 0; i < y->numel; i++)
		rt_store_f64(y->dtype, y->data, i, mean + scale * normal(&st));
	return 0;
}

static int random_uniform(struct rt_kctx *k, int like)
{
	double lo = rt_attr_float(k, "low", 0), hi = rt_attr_float(k, "high", 1);
	uint64_t st = seed_of(k);
	struct rt_value *y = gen_out(k, like);

	if (!y)
		return k->d->status ? k->d->status : IR_ENOMEM;
	for (int64_t i = 0; i < y->numel; i++)
		rt_store_f64(y->dtype, y->data, i, lo + (hi - lo) * rt_rand_unit(&st));
	return 0;
}

static int k_random_normal(struct rt_kctx *k) { return random_normal(k, 0); }
static int k_random_normal_like(struct rt_kctx *k) { return random_normal(k, 1); }
static int k_random_uniform(struct rt_kctx *k) { return random_uniform(k, 0); }
static int k_random_uniform_like(struct rt_kctx *k) { return random_uniform(k, 1); }

static int k_bernoulli(struct rt_kctx *k)
{
	uint64_t st = seed_of(k);
	struct rt_value *x, *y;
	int64_t dt;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (!rt_dtype_is_float(x->dtype))
		return rt_err(k, "input must hold float probabilities, is %s",
			      ir_dtype_name(x->dtype));
	dt = rt_attr_int(k, "dtype", x->dtype);
	if (dt == IR_DTYPE_STRING || !rt_dtype_size((int)dt))
		return rt_err(k, "unsupported dtype %s", ir_dtype_name((int)dt));
	if (!(y = rt_out_tensor(k, 0, (int)dt, x->rank, x->dims)))
		return IR_ENOMEM;
	for (int64_t i = 0; i < x->numel; i++) {
		double p = rt_load_f64(x->dtype, x->data, i);

		if (!(p >= 0 && p <= 1))
			return rt_err(k, "probability %g at %lld outside [0, 1]", p, (long long)i);
		rt_store_f64((int)dt, y->data, i, rt_rand_unit(&st) < p ? 1 : 0);
	}
	return 0;
}

/* Input [batch, classes] of unnormalised log-probabilities; each row gets
 * sample_size class indices drawn from softmax(row). */
static int k_multinomial(struct rt_kctx *k)
{
	int64_t dt = rt_attr_int(k, "dtype", IR_DTYPE_INT32);
	int64_t ss = rt_attr_int(k, "sample_size", 1), dims[2];
	uint64_t st = seed_of(k);
	struct rt_value *x, *y;
	double *cdf = NULL;
	int64_t nb, nc;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (x->rank != 2)
		return rt_err(k, "input must be [batch, classes], has rank %d", x->rank);
	if (dt != IR_DTYPE_INT32 && dt != IR_DTYPE_INT64)
		return rt_err(k, "dtype must be int32 or int64, is %s", ir_dtype_name((int)dt));
	if (ss < 1)
		return rt_err(k, "sample_size %lld must be positive", (long long)ss);
	nb = x->dims[0];
	nc = x->dims[1];
	if (nc < 1)
		return rt_err(k, "no classes");
	dims[0] = nb;
	dims[1] = ss;
	if (!(y = rt_out_tensor(k, 0, (int)dt, 2, dims)))
		return IR_ENOMEM;
	if (!(cdf = malloc((size_t)nc * sizeof(*cdf))))
		return rt_oom(k);
	for (int64_t b = 0; b < nb; b++) {
		double mx = -INFINITY, sum = 0;

		for (int64_t c = 0; c < nc; c++)
			mx = fmax(mx, rt_load_f64(x->dtype, x->data, b * nc + c));
		for (int64_t c = 0; c < nc; c++) {
			sum += exp(rt_load_f64(x->dtype, x->data, b * nc + c) - mx);
			cdf[c] = sum;
		}
		for (int64_t s = 0; s < ss; s++) {
			double u = rt_rand_unit(&st) * sum;
			int64_t c = 0;

			while (c < nc - 1 && cdf[c] <= u)
				c++;
			rt_store_i64((int)dt, y->data, b * ss + s, c);
		}
	}
	free(cdf);
	return 0;
}

const struct rt_kernel rt_kernels_random[] = {
	{ "ai.onnx", "Bernoulli", 15, RT_OPEN, k_bernoulli },
	{ "ai.onnx", "Multinomial", 7, RT_OPEN, k_multinomial },
	{ "ai.onnx", "RandomNormal", 1, RT_OPEN, k_random_normal },
	{ "ai.onnx", "RandomNormalLike", 1, RT_OPEN, k_random_normal_like },
	{ "ai.onnx", "RandomUniform", 1, RT_OPEN, k_random_uniform },
	{ "ai.onnx", "RandomUniformLike", 1, RT_OPEN, k_random_uniform_like },
};
const size_t rt_n_kernels_random = sizeof(rt_kernels_random) / sizeof(rt_kernels_random[0]);
