/* blas_env.c: process-wide tuning of the libraries a computing command
 * runs on.  OpenBLAS 0.3.21 (Debian 12) does not recognise some CPUs
 * (this project's VMs among them) and falls back to its generic kernels,
 * three times slower than the AVX2/AVX-512 ones the CPU can run.  It reads
 * OPENBLAS_CORETYPE only when it loads, so a command that computes sets it
 * to the kernel set the CPU supports and runs itself again, once.  Nothing
 * happens when OPENBLAS_CORETYPE is already set (also the user's way to
 * choose), or when OpenBLAS picked a fitting set itself.  The same run
 * again sets OMP_WAIT_POLICY=PASSIVE for oneDNN's OpenMP threads unless
 * the user set it, with a short spin first (GOMP_SPINCOUNT) while the
 * machine has a CPU idle, and OPENBLAS_NUM_THREADS=1 unless the user set
 * it: opmig calls OpenBLAS from its own threads, one product each, and
 * ends OpenBLAS's pool at once (rt_gemm_single_thread); the pool's
 * workers each reserved a 128 MiB buffer when they started, and under a
 * memory limit (ulimit -v of 140-200 MB) a worker retried that allocation
 * forever, so every computing command hung before it began. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli/cli.h"
#include "runtime/kernels/gemm.h"

/* This process's threads running or runnable now (its libraries' pools
 * start with it). */
static int own_running(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char path[64], buf[256];
		FILE *f;
		char *c;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.20s/stat", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof(buf), f) && (c = strrchr(buf, ')')) && c[1] == ' ' && c[2] == 'R')
			n++;
		fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/* Has the machine a CPU idle beside this process: no other process's
 * thread runnable but on CPUs past one, in the fewest of five looks 0.5
 * ms apart?  (The load over the last minute was asked too; a run that
 * followed other runs, as a benchmark's do, counted their load as another
 * process's: the same model at two threads took 8 or 19 ms by what had
 * run in the minute before it, the fourteenth set's mixer_dyn.) */
static int cpus_idle(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	int fewest = 1 << 30;

	for (int i = 0; i < 5; i++) {
		FILE *f = fopen("/proc/loadavg", "r");
		int running, others;

		if (!f)
			return 0;
		if (fscanf(f, "%*f %*f %*f %d/", &running) == 1 &&
		    (others = running - own_running()) < fewest)
			fewest = others;
		fclose(f);
		if (i < 4)
			usleep(500);
	}
	return n > 1 && fewest <= n - 2;
}

void cli_tune_blas(char **argv)
{
	const char *better = getenv("OPENBLAS_CORETYPE") ? NULL : rt_gemm_better_coretype();
	int again = 0;

	/* oneDNN's OpenMP workers spin after each primitive by default, on
	 * the core opmig's own thread pool needs for the next node: at two
	 * threads the integer models ran 1.3-1.5x slower than with the
	 * workers asleep (bench/README.md).  libgomp, like OpenBLAS, reads
	 * its setting only when it loads. */
	if (!getenv("OMP_WAIT_POLICY") && setenv("OMP_WAIT_POLICY", "PASSIVE", 1) == 0) {
		again = 1;
		/* asleep, a worker is woken for each primitive: a model of many
		 * small convolutions waited on that more than it computed
		 * (an int8 YOLO at two threads 13.8 ms, 8.8 when the workers
		 * wait 30000 spins first).  Spinning takes a CPU a busy
		 * machine's other processes need (an NHWC MobileNet stack
		 * 1.5x slower beside one busy process), so only while the
		 * machine has a CPU idle (bench/README.md). */
		if (!getenv("GOMP_SPINCOUNT") && cpus_idle())
			setenv("GOMP_SPINCOUNT", "30000", 1);
	}
	if (better && setenv("OPENBLAS_CORETYPE", better, 1) == 0)
		again = 1;
	if (!getenv("OPENBLAS_NUM_THREADS") && setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0)
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
