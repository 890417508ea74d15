/* k_nbits.c: the nbits family: com.microsoft MatMulNBits, A [..., K]
 * times B, N rows of K weights quantized in blocks of block_size along K
 * (2, 4 or 8 bits packed low bits first, one scale and zero point per
 * block), transposed, plus bias.  Each call dequantizes B once, a slice
 * of rows at a time into a float32 scratch, and multiplies it with the
 * float32 GEMM (gemm.h).  accuracy_level is ignored: it lets onnxruntime
 * compute with lower-precision A, and this computes in float32. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/gemm.h"
#include "runtime/kernels/k_nq.h"

struct nbits {
	const float *a, *scales, *zpf, *bias;
	const uint8_t *b, *zpq;
	float *y;
	int64_t m, n, kd, bs, kb, blob, zrow, rows;
	int bits;
	atomic_int failed;
};

/* len 4-bit codes, two a byte (low nibble first), as (code - z) * s; a
 * byte at a time, which the compiler vectorizes. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void nbits_unpack4(const uint8_t *blk, float *w, int64_t len, float z, float s)
{
	int64_t j = 0;

	for (; j + 1 < len; j += 2) {
		unsigned byte = blk[j >> 1];

		w[j] = ((float)(byte & 15u) - z) * s;
		w[j + 1] = ((float)(byte >> 4) - z) * s;
	}
	if (j < len)
		w[j] = ((float)(blk[j >> 1] & 15u) - z) * s;
}

/* Row r of B dequantized into w (kd floats): (q - zero point) * scale. */
static void nbits_row(const struct nbits *p, int64_t r, float *w)
{
	const uint8_t *q = p->b + r * p->kb * p->blob;
	unsigned mask = (1u << p->bits) - 1, per = 8 / (unsigned)p->bits;
	float dflt = (float)(1 << (p->bits - 1));

	for (int64_t b = 0; b < p->kb; b++) {
		const uint8_t *blk = q + b * p->blob;
		float s = p->scales[r * p->kb + b], z = dflt;
		int64_t k0 = b * p->bs, len = p->kd - k0 < p->bs ? p->kd - k0 : p->bs;

		if (p->zpf) {
			z = p->zpf[r * p->kb + b];
		} else if (p->zpq) {
			uint8_t byte = p->zpq[r * p->zrow + b / per];

			z = (float)((byte >> ((unsigned)(b % per) * (unsigned)p->bits)) & mask);
		}
		if (p->bits == 8)
			for (int64_t j = 0; j < len; j++)
				w[k0 + j] = ((float)blk[j] - z) * s;
		else if (p->bits == 4)
			nbits_unpack4(blk, w + k0, len, z, s);
		else
			for (int64_t j = 0; j < len; j++)
				w[k0 + j] = ((float)((blk[j / per] >> ((unsigned)(j % per) *
									(unsigned)p->bits)) & mask) - z) * s;
	}
}

/* Slices [lo, hi) of p->rows rows of B: dequantize, multiply, add bias. */
static void nbits_range(void *ctx, int64_t lo, int64_t hi)
{
	struct nbits *p = ctx;
	float *w = malloc((size_t)(p->rows * p->kd) * sizeof(float));

	if (!w) {
		atomic_store(&p->failed, 1);
		return;
	}
	for (int64_t c = lo; c < hi; c++) {
		int64_t n0 = c * p->rows, nr = p->n - n0 < p->rows ? p->n - n0 : p->rows;

		for (int64_t r = 0; r < nr; r++)
			nbits_row(p, n0 + r, w + r * p->kd);
		rt_gemm_f32(0, 1, p->m, nr, p->kd, 1.0f, p->a, p->kd, w, p->kd, 0.0f,
			    p->y + n0, p->n);
		if (p->bias)
			for (int64_t i = 0; i < p->m; i++)
				for (int64_t j = 0; j < nr; j++)
					p->y[i * p->n + n0 + j] += p->bias[n0 + j];
	}
	free(w);
}

static int is_pow2(int64_t v)
{
	return v > 0 && !(v & (v - 1));
}

static int k_matmul_nbits(struct rt_kctx *k)
{
	struct rt_value *a, *b, *sc, *zp = rt_in(k, 3), *bias = rt_in(k, 5), *y;
	struct nbits p = { 0 };
	int64_t yd[RT_MAX_RANK];
	float *af = NULL, *sf = NULL, *zf = NULL, *bf = NULL, *yf = NULL;
	int ao = 0, so = 0, zo = 0, bo = 0, rc;

	p.kd = rt_attr_int(k, "K", 0);
	p.n = rt_attr_int(k, "N", 0);
	p.bs = rt_attr_int(k, "block_size", 0);
	p.bits = (int)rt_attr_int(k, "bits", 4);
	if ((rc = rt_in_tensor(k, 0, &a)) < 0 || (rc = rt_in_tensor(k, 1, &b)) < 0 ||
	    (rc = rt_in_tensor(k, 2, &sc)) < 0 || (rc = nq_check_float(k, a, 0)) < 0 ||
	    (rc = nq_check_float(k, sc, 2)) < 0)
		return rc;
	if (p.bits != 2 && p.bits != 4 && p.bits != 8)
		return rt_err(k, "bits must be 2, 4 or 8 (got %d)", p.bits);
	if (p.bs < 16 || !is_pow2(p.bs))
		return rt_err(k, "block_size must be a power of 2 >= 16 (got %lld)",
			      (long long)p.bs);
	if (p.kd < 1 || p.n < 0)
		return rt_err(k, "K must be > 0 and N >= 0 (got %lld, %lld)", (long long)p.kd,
			      (long long)p.n);
	if (rt_in(k, 4))
		return rt_err(k, "g_idx (input 4) is not supported");
	if (rt_attr_int(k, "weight_prepacked", 0))
		return rt_err(k, "weight_prepacked B (a provider's layout) is not supported");
	if (a->rank < 1 || a->dims[a->rank - 1] != p.kd)
		return rt_err(k, "A's last dim must be K = %lld", (long long)p.kd);
	p.kb = (p.kd + p.bs - 1) / p.bs;
	p.blob = p.bs * p.bits / 8;
	p.zrow = (p.kb * p.bits + 7) / 8;
	if (b->dtype != IR_DTYPE_UINT8 || b->numel != p.n * p.kb * p.blob)
		return rt_err(k, "B must be uint8 of N * ceil(K / block_size) * block_size * bits / 8 = %lld elements",
			      (long long)(p.n * p.kb * p.blob));
	if (sc->numel != p.n * p.kb)
		return rt_err(k, "scales must have N * ceil(K / block_size) = %lld elements",
			      (long long)(p.n * p.kb));
	if (zp && zp->dtype == IR_DTYPE_UINT8 && zp->numel != p.n * p.zrow)
		return rt_err(k, "packed zero_points must have N * ceil(k_blocks * bits / 8) = %lld elements",
			      (long long)(p.n * p.zrow));
	if (zp && zp->dtype != IR_DTYPE_UINT8 &&
	    (!rt_dtype_is_float(zp->dtype) || zp->numel != p.n * p.kb))
		return rt_err(k, "zero_points must be uint8 (packed) or float of N * k_blocks = %lld elements",
			      (long long)(p.n * p.kb));
	if (bias && bias->numel != p.n)
		return rt_err(k, "bias must have N = %lld elements", (long long)p.n);
	memcpy(yd, a->dims, (size_t)a->rank * sizeof(int64_t));
	yd[a->rank - 1] = p.n;
	if (!(y = rt_out_tensor(k, 0, a->dtype, a->rank, yd)))
		return IR_ENOMEM;
	p.m = a->numel / p.kd;
	if (!y->numel)
		return 0;
	rc = IR_ENOMEM;
	if (!(af = nq_f32(k, a, &ao)) || !(sf = nq_f32(k, sc, &so)) ||
	    (zp && zp->dtype != IR_DTYPE_UINT8 && !(zf = nq_f32(k, zp, &zo))) ||
	    (bias && !(bf = nq_f32(k, bias, &bo))) || !(yf = nq_out_buf(k, y)))
		goto cleanup;
	p.a = af;
	p.b = b->data;
	p.scales = sf;
	p.zpf = zf;
	p.zpq = zp && zp->dtype == IR_DTYPE_UINT8 ? zp->data : NULL;
	p.bias = bf;
	p.y = yf;
	/* slices of B rows of about 256 KiB of float32, 16 rows at least */
	p.rows = (1 << 16) / p.kd;
	p.rows = p.rows < 16 ? 16 : p.rows > 256 ? 256 : p.rows;
	atomic_init(&p.failed, 0);
	rt_parallel_for(k, (p.n + p.rows - 1) / p.rows, 1, nbits_range, &p);
	rc = atomic_load(&p.failed) ? rt_oom(k) : 0;
cleanup:
	if (yf)
		nq_out_done(y, yf);
	nq_f32_release(af, ao);
	nq_f32_release(sf, so);
	nq_f32_release(zf, zo);
	nq_f32_release(bf, bo);
	return rc;
}

const struct rt_kernel rt_kernels_nbits[] = {
	{ "com.microsoft", "MatMulNBits", 1, RT_OPEN, k_matmul_nbits },
};
const size_t rt_n_kernels_nbits = sizeof(rt_kernels_nbits) / sizeof(rt_kernels_nbits[0]);
