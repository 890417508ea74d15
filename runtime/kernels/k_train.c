/* k_train.c: kernels of the training family (ai.onnx.preview.training):
 * the optimizer steps Adagrad, Adam and Momentum (standard and nesterov),
 * element by element in double precision over n tensor groups, and
 * Gradient (see k_train_grad.c). */
#include <math.h>
#include <string.h>

#include "runtime/kernels/k_train_int.h"

/* R (scalar learning rate) and T (scalar step count), then n groups of
 * `per` tensors each; every tensor of a group has the shape of X_i. */
static int opt_prologue(struct rt_kctx *k, int per, double *r, int64_t *t, size_t *n)
{
	int rc;

	if (k->n_in < 2 || (k->n_in - 2) % (size_t)per)
		return rt_err(k, "expected R, T and %d tensors per optimized input, got %zu inputs",
			      per, k->n_in);
	*n = (k->n_in - 2) / (size_t)per;
	if (k->node->n_outputs != *n * (size_t)(per - 1))
		return rt_err(k, "expected %zu outputs, got %zu", *n * (size_t)(per - 1), k->node->n_outputs);
	if ((rc = rt_in_double(k, 0, r)) < 0 || (rc = rt_in_int(k, 1, t)) < 0)
		return rc;
	for (size_t i = 0; i < *n; i++) {
		struct rt_value *x, *o;

		if ((rc = rt_in_tensor(k, 2 + i, &x)) < 0)
			return rc;
		if (!rt_dtype_is_float(x->dtype))
			return rt_err(k, "input %zu must be a float tensor, is %s", 2 + i,
				      ir_dtype_name(x->dtype));
		for (int g = 1; g < per; g++) {
			if ((rc = rt_in_tensor(k, 2 + i + (size_t)g * *n, &o)) < 0)
				return rc;
			if (o->numel != x->numel || o->rank != x->rank ||
			    memcmp(o->dims, x->dims, (size_t)x->rank * sizeof(*x->dims)))
				return rt_err(k, "input %zu must have the shape of input %zu",
					      2 + i + (size_t)g * *n, 2 + i);
		}
		for (int g = 0; g < per - 1; g++)
			if (!rt_out_tensor(k, i + (size_t)g * *n, x->dtype, x->rank, x->dims))
				return IR_ENOMEM;
	}
	return 0;
}

#define LD(v, j) rt_load_f64((v)->dtype, (v)->data, j)
#define ST(v, j, x) rt_store_f64((v)->dtype, (v)->data, j, x)

static int k_adagrad(struct rt_kctx *k)
{
	double decay = rt_attr_float(k, "decay_factor", 0.0f);
	double eps = rt_attr_float(k, "epsilon", 1e-6f);
	double norm = rt_attr_float(k, "norm_coefficient", 0.0f);
	double r, rr;
	int64_t t;
	size_t n;
	int rc;

	if ((rc = opt_prologue(k, 3, &r, &t, &n)) < 0)
		return rc;
	rr = r / (1 + (double)t * decay);
	for (size_t i = 0; i < n; i++) {
		struct rt_value *x = k->in[2 + i], *g = k->in[2 + n + i], *h = k->in[2 + 2 * n + i];
		struct rt_value *xo = k->out[i], *ho = k->out[n + i];

		for (int64_t j = 0; j < x->numel; j++) {
			double gr = norm * LD(x, j) + LD(g, j);
			double hn = LD(h, j) + gr * gr;

			ST(xo, j, LD(x, j) - rr * gr / (sqrt(hn) + eps));
			ST(ho, j, hn);
		}
	}
	return 0;
}

static int k_adam(struct rt_kctx *k)
{
	double alpha = rt_attr_float(k, "alpha", 0.9f);
	double beta = rt_attr_float(k, "beta", 0.999f);
	double eps = rt_attr_float(k, "epsilon", 1e-6f);
	double norm = rt_attr_float(k, "norm_coefficient", 0.0f);
	double post = rt_attr_float(k, "norm_coefficient_post", 0.0f);
	double r, rr;
	int64_t t;
	size_t n;
	int rc;

	if ((rc = opt_prologue(k, 4, &r, &t, &n)) < 0)
		return rc;
	rr = t > 0 ? r * sqrt(1 - pow(beta, (double)t)) / (1 - pow(alpha, (double)t)) : r;
	for (size_t i = 0; i < n; i++) {
		struct rt_value *x = k->in[2 + i], *g = k->in[2 + n + i];
		struct rt_value *v = k->in[2 + 2 * n + i], *h = k->in[2 + 3 * n + i];
		struct rt_value *xo = k->out[i], *vo = k->out[n + i], *ho = k->out[2 * n + i];

		for (int64_t j = 0; j < x->numel; j++) {
			double gr = norm * LD(x, j) + LD(g, j);
			double vn = alpha * LD(v, j) + (1 - alpha) * gr;
			double hn = beta * LD(h, j) + (1 - beta) * gr * gr;
			double xn = LD(x, j) - rr * vn / (sqrt(hn) + eps);

			ST(xo, j, (1 - post) * xn);
			ST(vo, j, vn);
			ST(ho, j, hn);
		}
	}
	return 0;
}

static int k_momentum(struct rt_kctx *k)
{
	const char *mode = rt_attr_str(k, "mode", NULL);
	int nesterov;
	double alpha, beta, norm, r, b;
	int64_t t;
	size_t n;
	int rc;

	if (!mode || !rt_attr(k, "alpha") || !rt_attr(k, "beta") ||
	    !rt_attr(k, "norm_coefficient"))
		return rt_err(k, "attributes alpha, beta, mode and norm_coefficient are required");
	if (!strcmp(mode, "standard"))
		nesterov = 0;
	else if (!strcmp(mode, "nesterov"))
		nesterov = 1;
	else
		return rt_err(k, "unknown mode '%s'", mode);
	alpha = rt_attr_float(k, "alpha", 0);
	beta = rt_attr_float(k, "beta", 0);
	norm = rt_attr_float(k, "norm_coefficient", 0);
	if ((rc = opt_prologue(k, 3, &r, &t, &n)) < 0)
		return rc;
	b = t > 0 ? beta : 1;
	for (size_t i = 0; i < n; i++) {
		struct rt_value *x = k->in[2 + i], *g = k->in[2 + n + i], *v = k->in[2 + 2 * n + i];
		struct rt_value *xo = k->out[i], *vo = k->out[n + i];

		for (int64_t j = 0; j < x->numel; j++) {
			double gr = norm * LD(x, j) + LD(g, j);
			double vn = alpha * LD(v, j) + b * gr;

			ST(xo, j, LD(x, j) - r * (nesterov ? gr + alpha * vn : vn));
			ST(vo, j, vn);
		}
	}
	return 0;
}

const struct rt_kernel rt_kernels_train[] = {
	{ "ai.onnx.preview.training", "Adagrad", 1, RT_OPEN, k_adagrad },
	{ "ai.onnx.preview.training", "Adam", 1, RT_OPEN, k_adam },
	{ "ai.onnx.preview.training", "Gradient", 1, RT_OPEN, rt_k_gradient },
	{ "ai.onnx.preview.training", "Momentum", 1, RT_OPEN, k_momentum },
};
const size_t rt_n_kernels_train = sizeof(rt_kernels_train) / sizeof(rt_kernels_train[0]);
