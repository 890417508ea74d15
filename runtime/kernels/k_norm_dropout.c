/* k_norm_dropout.c: the Dropout kernel of the norm family, every version:
 * identity at inference (mask all true), and in training mode (opset 12+
 * training_mode input) a mask drawn like numpy's legacy RandomState, so a
 * seeded node reproduces the reference's numbers. */
#include <stdint.h>
#include <time.h>

#include "runtime/kernels/k_nq.h"

/* numpy's legacy RandomState (MT19937 seeded with one integer, doubles of
 * 53 bits), so a seeded training-mode Dropout draws numpy's mask. */
struct mt {
	uint32_t s[624];
	int i;
};

static void mt_seed(struct mt *m, uint32_t seed)
{
	m->s[0] = seed;
	for (int i = 1; i < 624; i++)
		m->s[i] = 1812433253u * (m->s[i - 1] ^ (m->s[i - 1] >> 30)) + (uint32_t)i;
	m->i = 624;
}

static uint32_t mt_next(struct mt *m)
{
	uint32_t y;

	if (m->i >= 624) {
		for (int i = 0; i < 624; i++) {
			y = (m->s[i] & 0x80000000u) | (m->s[(i + 1) % 624] & 0x7fffffffu);
			m->s[i] = m->s[(i + 397) % 624] ^ (y >> 1) ^ (y & 1 ? 0x9908b0dfu : 0);
		}
		m->i = 0;
	}
	y = m->s[m->i++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	return y ^ (y >> 18);
}

static double mt_double(struct mt *m)
{
	uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;

	return (a * 67108864.0 + b) / 9007199254740992.0;
}

int nq_dropout(struct rt_kctx *k)
{
	struct rt_value *x, *y, *mask = NULL;
	double ratio = rt_attr_float(k, "ratio", 0.5f);
	int64_t training = 0;
	int rc, mdtype;
	struct mt m;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (k->version >= 12) {
		if (rt_in(k, 1) && (rc = rt_in_double(k, 1, &ratio)) < 0)
			return rc;
		if (rt_in(k, 2) && (rc = rt_in_int(k, 2, &training)) < 0)
			return rc;
	} else if (k->version < 7) {
		/* is_test=0 asked for training; inference is what a reference
		 * run of a trained model means, as onnxruntime does */
		training = 0;
	}
	if (training && ratio != 0 && (ratio < 0 || ratio >= 1))
		return rt_err(k, "ratio %g outside [0, 1)", ratio);
	mdtype = k->version >= 10 ? IR_DTYPE_BOOL : x->dtype;
	if (rt_out_wanted(k, 1) &&
	    !(mask = rt_out_tensor(k, 1, mdtype, x->rank, x->dims)))
		return IR_ENOMEM;
	if (!training || ratio == 0) {
		if (mask && mask->numel > 0) {
			rt_store_f64(mdtype, mask->data, 0, 1);
			rt_fill_repeat(mask->data, rt_dtype_size(mdtype), mask->numel);
		}
		return rt_out_set(k, 0, rt_value_ref(x));
	}
	if (!rt_dtype_is_float(x->dtype))
		return rt_err(k, "training mode needs a float input, not %s",
			      ir_dtype_name(x->dtype));
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, x->dims)))
		return IR_ENOMEM;
	mt_seed(&m, rt_attr(k, "seed") ? (uint32_t)rt_attr_int(k, "seed", 0) :
		(uint32_t)time(NULL) ^ (uint32_t)(uintptr_t)x);
	for (int64_t i = 0; i < x->numel; i++) {
		int keep = mt_double(&m) >= ratio;

		rt_store_f64(x->dtype, y->data, i,
			     keep ? rt_load_f64(x->dtype, x->data, i) / (1 - ratio) : 0);
		if (mask)
			rt_store_f64(mdtype, mask->data, i, keep);
	}
	return 0;
}
