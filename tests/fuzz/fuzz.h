/* fuzz.h: helpers shared by the libFuzzer harnesses tests/fuzz/fuzz_*.c
 * and their replay driver: hand the input bytes to loaders that only read
 * from a path (an in-memory file, or a file in a private scratch folder),
 * and find the source tree for the shipped rules.  Header-only: each
 * harness is its own program.
 *
 * Ownership: fuzz_memfd() returns an fd the caller closes; paths are
 * written into caller buffers; fuzz_scratch() and fuzz_top() return
 * static strings valid for the whole process.
 */
#ifndef OPMIG_FUZZ_H
#define OPMIG_FUZZ_H

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Write all of data to fd: 0, or -1. */
static inline int fuzz_write_all(int fd, const uint8_t *data, size_t size)
{
	while (size) {
		ssize_t w = write(fd, data, size);

		if (w <= 0)
			return -1;
		data += w;
		size -= (size_t)w;
	}
	return 0;
}

/* The bytes as an in-memory file: its fd (or -1) and "/proc/self/fd/N". */
static inline int fuzz_memfd(const uint8_t *data, size_t size, char *path,
			     size_t n)
{
	int fd = memfd_create("opmig-fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fuzz_write_all(fd, data, size) < 0) {
		close(fd);
		return -1;
	}
	snprintf(path, n, "/proc/self/fd/%d", fd);
	return fd;
}

/* A private folder for this process (created on first use, left behind
 * in $TMPDIR as fuzz runs crash by design; small). */
static inline const char *fuzz_scratch(void)
{
	static char dir[256];

	if (!dir[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/opmig-fuzz-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(dir)) {
			perror("opmig fuzz: mkdtemp");
			abort();
		}
	}
	return dir;
}

/* Write the bytes to scratch/name (replacing it): 0, or -1. */
static inline int fuzz_put_file(const char *name, const uint8_t *data,
				size_t size, char *path, size_t n)
{
	int fd, rc;

	snprintf(path, n, "%s/%s", fuzz_scratch(), name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	rc = fuzz_write_all(fd, data, size);
	close(fd);
	return rc;
}

/* The source tree (holding Makefile and oprules/): $OPMIG_TOP, else the
 * current folder or one above the executable's. */
static inline const char *fuzz_top(void)
{
	static char top[PATH_MAX];
	char probe[PATH_MAX + 32];
	const char *env = getenv("OPMIG_TOP");
	ssize_t n;

	if (top[0])
		return top;
	if (env && *env) {
		snprintf(top, sizeof(top), "%s", env);
		return top;
	}
	if (access("oprules/generic-npu.json", R_OK) == 0) {
		snprintf(top, sizeof(top), ".");
		return top;
	}
	n = readlink("/proc/self/exe", top, sizeof(top) - 1);
	if (n > 0) {
		top[n] = 0;
		while (strrchr(top, '/')) {
			*strrchr(top, '/') = 0;
			snprintf(probe, sizeof(probe), "%s/oprules/generic-npu.json", top);
			if (access(probe, R_OK) == 0)
				return top;
		}
	}
	fprintf(stderr, "opmig fuzz: cannot find the source tree: set OPMIG_TOP\n");
	abort();
}

#endif
