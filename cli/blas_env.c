/* blas_env.c: OpenBLAS 0.3.21 (Debian 12) does not recognise some CPUs
 * (this project's VMs among them) and falls back to its generic kernels,
 * three times slower than the AVX2/AVX-512 ones the CPU can run.  It reads
 * OPENBLAS_CORETYPE only when it loads, so a command that computes sets it
 * to the kernel set the CPU supports and runs itself again, once.  Nothing
 * happens when OPENBLAS_CORETYPE is already set (also the user's way to
 * choose), or when OpenBLAS picked a fitting set itself. */
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"
#include "validators/gemm.h"

void cli_tune_blas(char **argv)
{
	const char *better;

	if (getenv("OPENBLAS_CORETYPE") || !(better = rt_gemm_better_coretype()))
		return;
	if (setenv("OPENBLAS_CORETYPE", better, 1) != 0)
		return;
	execv("/proc/self/exe", argv);
	/* exec failed: go on with the kernels OpenBLAS chose */
}
