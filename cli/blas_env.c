/* blas_env.c: process-wide tuning of the libraries a computing command
 * runs on.  OpenBLAS 0.3.21 (Debian 12) does not recognise some CPUs
 * (this project's VMs among them) and falls back to its generic kernels,
 * three times slower than the AVX2/AVX-512 ones the CPU can run.  It reads
 * OPENBLAS_CORETYPE only when it loads, so a command that computes sets it
 * to the kernel set the CPU supports and runs itself again, once.  Nothing
 * happens when OPENBLAS_CORETYPE is already set (also the user's way to
 * choose), or when OpenBLAS picked a fitting set itself.  The same run
 * again sets OMP_WAIT_POLICY=PASSIVE for oneDNN's OpenMP threads unless
 * the user set it. */
#include <stdlib.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli/cli.h"
#include "runtime/kernels/gemm.h"

void cli_tune_blas(char **argv)
{
	const char *better = getenv("OPENBLAS_CORETYPE") ? NULL : rt_gemm_better_coretype();
	int again = 0;

	/* oneDNN's OpenMP workers spin after each primitive by default, on
	 * the core opmig's own thread pool needs for the next node: at two
	 * threads the integer models ran 1.3-1.5x slower than with the
	 * workers asleep (bench/README.md).  libgomp, like OpenBLAS, reads
	 * its setting only when it loads. */
	if (!getenv("OMP_WAIT_POLICY") && setenv("OMP_WAIT_POLICY", "PASSIVE", 1) == 0)
		again = 1;
	if (better && setenv("OPENBLAS_CORETYPE", better, 1) == 0)
		again = 1;
	if (again)
		execv("/proc/self/exe", argv);
	/* exec failed or not needed: go on with what the libraries chose */
	rt_gemm_single_thread();
}

/* glibc serves blocks above 128 KiB (a dynamic threshold) with mmap and
 * gives them back with munmap on free, so every intermediate tensor of an
 * inference came in as fresh zeroed pages: page faults were a quarter of
 * MobileNetV2's time.  Keeping blocks up to 32 MiB (glibc's largest
 * threshold) in the heap and not trimming it lets the next node reuse the
 * pages; the process's footprint stays at its peak until exit. */
void cli_tune_malloc(void)
{
#ifdef __GLIBC__
	mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
	mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}
