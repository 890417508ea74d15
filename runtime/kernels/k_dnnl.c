/* k_dnnl.c: the oneDNN plumbing the kernels on it share (k_dnnl.h): one
 * CPU engine for the process, the VNNI test that makes integer primitives
 * exact, which of them run on AMX, OpenMP's thread count, and the buffers
 * for data in oneDNN's layouts. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/k_dnnl.h"

/* libgomp's (oneDNN's threads are OpenMP's); declared here, as omp.h is
 * gcc's own header and not on clang's path. */
void omp_set_num_threads(int n);

static dnnl_engine_t dn_engine;
static pthread_once_t dn_once = PTHREAD_ONCE_INIT;
static _Atomic int64_t dn_runs, dn_int_runs, dn_folds;

static int dn_off(void)
{
	const char *v = getenv("OPMIG_NO_DNNL");

	return v && *v && *v != '0';
}

/* AMX for oneDNN's integer primitives: "0" never, "all" wherever oneDNN
 * takes it (the tests' way to reach it on small shapes), else where
 * knn_dnnl_amx_pays says so. */
static const char *dn_amx_env(void)
{
	const char *v = getenv("OPMIG_DNNL_AMX");

	return v && *v ? v : NULL;
}

static void dn_engine_make(void)
{
	/* oneDNN 2.6 runs nothing on AMX unless asked (its default cap here
	 * was AVX-512 VNNI): asked, unless the user chose a cap */
	if (!getenv("ONEDNN_MAX_CPU_ISA") && !getenv("DNNL_MAX_CPU_ISA"))
		(void)dnnl_set_max_cpu_isa(dn_amx_env() && !strcmp(dn_amx_env(), "0") ?
					   dnnl_cpu_isa_avx512_core_vnni :
					   dnnl_cpu_isa_avx512_core_amx);
	if (dnnl_engine_create(&dn_engine, dnnl_cpu, 0) != dnnl_success)
		dn_engine = NULL;
}

int knn_dnnl_amx_pays(int64_t k, int64_t macs, int three_d)
{
	const char *v = dn_amx_env();

	/* oneDNN 2.6's AMX int8 convolution gave wrong sums for a 3-D
	 * convolution with a source zero point (suite kdnnl's integer case
	 * 48): never there */
	if (three_d)
		return 0;
	if (v)
		return !strcmp(v, "all");
	return k >= KNN_DNNL_AMX_MIN_K && macs >= KNN_DNNL_AMX_MIN_MACS;
}

static _Atomic int64_t dn_amx_made;

int64_t knn_dnnl_amx_made(void)
{
	return dn_amx_made;
}

int knn_dnnl_amx_ok(void)
{
	const unsigned amx = (unsigned)dnnl_cpu_isa_avx512_core_amx;

	return knn_dnnl_engine() && ((unsigned)dnnl_get_effective_cpu_isa() & amx) == amx;
}

int knn_dnnl_pd(dnnl_primitive_desc_t *pd, const_dnnl_op_desc_t d,
		const_dnnl_primitive_attr_t attr, int amx)
{
	dnnl_primitive_desc_iterator_t it;
	const char *name = NULL;
	int rc = -1;

	*pd = NULL;
	if (amx) {
		if (dnnl_primitive_desc_create(pd, d, attr, knn_dnnl_engine(), NULL) !=
		    dnnl_success)
			return -1;
		if (dnnl_primitive_desc_query(*pd, dnnl_query_impl_info_str, 0, &name) ==
		    dnnl_success && name && strstr(name, "amx"))
			dn_amx_made++;
		return 0;
	}
	if (dnnl_primitive_desc_iterator_create(&it, d, attr, knn_dnnl_engine(), NULL) !=
	    dnnl_success)
		return -1;
	do {
		dnnl_primitive_desc_t p = dnnl_primitive_desc_iterator_fetch(it);

		name = NULL;
		if (p && dnnl_primitive_desc_query(p, dnnl_query_impl_info_str, 0, &name) ==
			 dnnl_success && name && !strstr(name, "amx")) {
			*pd = p;
			rc = 0;
			break;
		}
		dnnl_primitive_desc_destroy(p);
	} while (dnnl_primitive_desc_iterator_next(it) == dnnl_success);
	dnnl_primitive_desc_iterator_destroy(it);
	return rc;
}

dnnl_engine_t knn_dnnl_engine(void)
{
	/* read at each call: a test may turn oneDNN off for a while to reach
	 * the own kernels (suite kown); the engine is made at the first call
	 * while it is on */
	if (dn_off())
		return NULL;
	pthread_once(&dn_once, dn_engine_make);
	return dn_engine;
}

int knn_dnnl_reorder_new(dnnl_stream_t st, const dnnl_memory_desc_t *from, const void *data,
			 const dnnl_memory_desc_t *to, dnnl_memory_t *m)
{
	dnnl_engine_t eng = knn_dnnl_engine();
	dnnl_primitive_desc_t rpd = NULL;
	dnnl_primitive_t rp = NULL;
	dnnl_memory_t um = NULL;
	int rc = -1;

	*m = NULL;
	if (!dnnl_memory_create(m, to, eng, DNNL_MEMORY_ALLOCATE) &&
	    !dnnl_memory_create(&um, from, eng, (void *)data) &&
	    !dnnl_reorder_primitive_desc_create(&rpd, from, eng, to, eng, NULL) &&
	    !dnnl_primitive_create(&rp, rpd) &&
	    !dnnl_primitive_execute(rp, st, 2,
				    (dnnl_exec_arg_t[]){ { DNNL_ARG_FROM, um }, { DNNL_ARG_TO, *m } }) &&
	    dnnl_stream_wait(st) == dnnl_success)
		rc = 0;
	dnnl_primitive_destroy(rp);
	dnnl_primitive_desc_destroy(rpd);
	dnnl_memory_destroy(um);
	return rc;
}

int knn_dnnl_parts(int64_t most, int64_t terms, int corr)
{
	int64_t room = KNN_DNNL_F32_EXACT / 255 - terms;

	if (corr && 255 * terms > KNN_DNNL_F32_EXACT)
		return 0;
	if (255 * most <= KNN_DNNL_F32_EXACT)
		return 1;
	if (room <= 0 || (most + room - 1) / room > KNN_DNNL_MAX_PARTS)
		return 0;
	return (int)((most + room - 1) / room);
}

void knn_dnnl_threads(int n)
{
	rt_pool_openmp(1);   /* opmig's loops on OpenMP's threads from now on */
	omp_set_num_threads(n);
}

void knn_dnnl_count(void)
{
	dn_runs++;
}

int64_t knn_dnnl_runs(void)
{
	return dn_runs;
}

void knn_dnnl_int_count(void)
{
	dn_runs++;
	dn_int_runs++;
}

int64_t knn_dnnl_int_runs(void)
{
	return dn_int_runs;
}

void knn_dnnl_fold_count(void)
{
	dn_folds++;
}

int64_t knn_dnnl_folds(void)
{
	return dn_folds;
}

int knn_dnnl_ok(void)
{
	return knn_dnnl_engine() != NULL;
}

/* oneDNN's integer primitives are exact only with VNNI's dot products:
 * without them it pairs u8 x s8 products into saturating int16 sums. */
int knn_dnnl_int_ok(void)
{
	unsigned isa;

	if (!knn_dnnl_engine())
		return 0;
	isa = (unsigned)dnnl_get_effective_cpu_isa();
	return (isa & 0x40u) != 0 || (isa & 0x400u) != 0;
}

void knn_dnnl_to_s8(int dtype, const void *v, int64_t n, int8_t *s8)
{
	if (dtype == IR_DTYPE_UINT8)
		for (int64_t i = 0; i < n; i++)
			s8[i] = (int8_t)(((const uint8_t *)v)[i] - 128);
	else
		memcpy(s8, v, (size_t)n);
}

int knn_dnnl_zp_shift(int dtype, const double *z, int64_t nz, int64_t n, int32_t *d)
{
	int any = 0;

	for (int64_t i = 0; i < n; i++) {
		d[i] = (dtype == IR_DTYPE_UINT8 ? 128 : 0) - (z ? (int32_t)z[nz == 1 ? 0 : i] : 0);
		any |= d[i] != 0;
	}
	return any;
}

static struct {
	pthread_mutex_t mu;
	void *raw[KNN_DN_BUFS];
	size_t cap[KNN_DN_BUFS];
} dn_arena = { PTHREAD_MUTEX_INITIALIZER, { NULL }, { 0 } };

void knn_dnnl_lock(void)
{
	pthread_mutex_lock(&dn_arena.mu);
}

void knn_dnnl_unlock(void)
{
	pthread_mutex_unlock(&dn_arena.mu);
}

int knn_dnnl_buf(int i, size_t n, void **p)
{
	*p = NULL;
	if (!n)
		return 0;
	if (dn_arena.cap[i] < n) {
		free(dn_arena.raw[i]);
		dn_arena.cap[i] = 0;
		if (!(dn_arena.raw[i] = malloc(n + 64)))
			return -1;
		dn_arena.cap[i] = n;
	}
	*p = (void *)(((uintptr_t)dn_arena.raw[i] + 63) & ~(uintptr_t)63);
	return 0;
}
