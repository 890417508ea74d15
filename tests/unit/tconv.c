/* tconv.c: the convolution cases' helpers shared by the conv suites
 * (tconv.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/tconv.h"
#include "tests/unit/tgen.h"

/* n seeded values in [-1, 1) (tgen's generator), malloc'd */
double *tc_fill(int64_t n, uint64_t seed)
{
	double *v = malloc((size_t)(n + 1) * sizeof(double));

	CU_ASSERT_FATAL(v != NULL);
	tg_fill(&seed, v, n);
	return v;
}

/* |got - want| <= 1e-5 * (1 + sum of |terms|) for each element. */
int tc_close(double got, double want, double scale)
{
	double e = got - want;

	return (e < 0 ? -e : e) <= 1e-5 * (1 + scale);
}

int64_t tc_out_dim(const struct ccase *cs, int d)
{
	return (cs->in[d] + cs->pad[d] + cs->pad[cs->nsp + d] - ((cs->k[d] - 1) * cs->dl[d] + 1)) /
	       cs->s[d] + 1;
}

/* Naive convolution in double over flattened indices (each output's
 * coordinates and each tap's decoded once). */
double *tc_naive_conv(const struct ccase *cs, const double *x, const double *w,
		      const double *b, int64_t *ny)
{
	int64_t osz = 1, isz = 1, ksz = 1, cg = cs->c / cs->group, mg = cs->m / cs->group;
	int64_t od[3], (*kc)[3];
	double *y;

	for (int d = 0; d < cs->nsp; d++) {
		od[d] = tc_out_dim(cs, d);
		osz *= od[d];
		isz *= cs->in[d];
		ksz *= cs->k[d];
	}
	*ny = cs->n * cs->m * osz;
	y = malloc((size_t)(*ny + 1) * sizeof(double));
	kc = malloc((size_t)ksz * sizeof(*kc));
	CU_ASSERT_FATAL(y != NULL && kc != NULL);
	for (int64_t t = 0; t < ksz; t++)
		for (int d = cs->nsp - 1, tr = (int)t; d >= 0; d--) {
			kc[t][d] = tr % cs->k[d];
			tr /= (int)cs->k[d];
		}
	for (int64_t bn = 0; bn < cs->n; bn++)
		for (int64_t o = 0; o < cs->m; o++)
			for (int64_t p = 0; p < osz; p++) {
				double acc = b ? b[o] : 0;
				int64_t oc[3], pr = p;

				for (int d = cs->nsp - 1; d >= 0; d--) {
					oc[d] = pr % od[d];
					pr /= od[d];
				}
				for (int64_t ci = 0; ci < cg; ci++)
					for (int64_t t = 0; t < ksz; t++) {
						int64_t pos = 0, ok = 1;

						for (int d = 0; d < cs->nsp; d++) {
							int64_t i = oc[d] * cs->s[d] - cs->pad[d] + kc[t][d] * cs->dl[d];

							if (i < 0 || i >= cs->in[d])
								ok = 0;
							pos = pos * cs->in[d] + i;
						}
						if (ok)
							acc += x[(bn * cs->c + (o / mg) * cg + ci) * isz + pos] *
							       w[(o * cg + ci) * ksz + t];
					}
				y[(bn * cs->m + o) * osz + p] = acc;
			}
	free(kc);
	return y;
}

struct ir_model *tc_conv_model(const struct ccase *cs, const double *w, const double *b,
			       int w_input)
{
	struct ir_model *m = tm_new(13);
	int64_t xd[5] = { cs->n, cs->c }, wd[5] = { cs->m, cs->c / cs->group }, od[5];
	int64_t pads[6];
	struct ir_node *n;

	for (int d = 0; d < cs->nsp; d++) {
		xd[2 + d] = cs->in[d];
		wd[2 + d] = cs->k[d];
		pads[d] = cs->pad[d];
		pads[cs->nsp + d] = cs->pad[cs->nsp + d];
	}
	tm_input(m, "x", IR_DTYPE_FLOAT, xd, (size_t)cs->nsp + 2);
	if (w_input)
		tm_input(m, "w", IR_DTYPE_FLOAT, wd, (size_t)cs->nsp + 2);
	else
		tm_init(m, "w", IR_DTYPE_FLOAT, wd, (size_t)cs->nsp + 2, w);
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(cs->m), 1, b);
	od[0] = cs->n;
	od[1] = cs->m;
	for (int d = 0; d < cs->nsp; d++)
		od[2 + d] = tc_out_dim(cs, d);
	tm_output(m, "y", IR_DTYPE_FLOAT, od, (size_t)cs->nsp + 2);
	n = tm_node(m, "Conv", NULL, TM_NAMES("x", "w", "b"), 3, TM_NAMES("y"), 1);
	ir_node_set_int(n, "group", cs->group);
	ir_node_set_ints(n, "strides", cs->s, (size_t)cs->nsp);
	ir_node_set_ints(n, "dilations", cs->dl, (size_t)cs->nsp);
	ir_node_set_ints(n, "pads", pads, 2 * (size_t)cs->nsp);
	tm_verify(m);
	return m;
}

struct rt_value *tc_tensor(const double *v, int rank, const int64_t *dims)
{
	struct rt_value *t;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, rank, dims, &t, &d) == 0);
	for (int64_t i = 0; i < t->numel; i++)
		((float *)t->data)[i] = (float)v[i];
	return t;
}

int tc_check_floats(const float *got, const double *want, int64_t n, const char *what)
{
	for (int64_t i = 0; i < n; i++)
		if (!tc_close(got[i], want[i], 50)) {
			fprintf(stderr, "\n%s: y[%lld] = %g, want %g\n", what, (long long)i, got[i],
				want[i]);
			return 0;
		}
	return 1;
}

int tc_check_out(const struct rt_value *y, const double *want, int64_t n, const char *what)
{
	CU_ASSERT_FATAL(y != NULL);
	CU_ASSERT_EQUAL_FATAL(y->numel, n);
	return tc_check_floats(y->data, want, n, what);
}

static int tc_no_op(void *ctx, const struct ir_node *n, size_t i, struct rt_value **slot)
{
	(void)ctx;
	(void)n;
	(void)i;
	(void)slot;
	return 0;
}

size_t tc_run(struct ir_model *m, struct rt_value **ins, size_t n_in, int th,
		     int observed, int runs, float *y, int64_t ny)
{
	struct rt_opts o = { .threads = th, .collect_stats = 1 };
	struct rt_session *s = NULL;
	struct rt_value *out = NULL;
	const struct rt_stats *st;
	struct ir_diag d;
	size_t fused = 0;

	ir_diag_init(&d);
	if (observed)
		o.observe = tc_no_op;
	CU_ASSERT_FATAL(rt_session_new(m, &o, &s, &d) == 0);
	for (int r = 0; r < runs; r++) {
		if (rt_session_run(s, ins, n_in, &out, &d) < 0)
			fprintf(stderr, "\nrun: %s\n", d.msg);
		CU_ASSERT_FATAL(out != NULL && out->numel == ny);
		memcpy(y, out->data, (size_t)ny * sizeof(float));
		rt_value_unref(out);
		out = NULL;
	}
	st = rt_session_stats(s);
	for (size_t i = 0; i < st->n_ops; i++)
		if (!strcmp(st->ops[i].op, "Relu") || !strcmp(st->ops[i].op, "Clip"))
			fused = st->ops[i].fused;
	rt_session_free(s);
	return fused;
}
