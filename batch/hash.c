/* hash.c: the content hash of --resume keys: 64-bit FNV-1a, streamed over
 * buffers and files. */
#include <fcntl.h>
#include <unistd.h>

#include "batch/batch.h"

uint64_t batch_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int batch_hash_file(const char *path, uint64_t *out)
{
	unsigned char buf[65536];
	uint64_t h = BATCH_HASH_INIT;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		h = batch_hash(h, buf, (size_t)got);
	close(fd);
	if (got < 0)
		return -1;
	*out = h;
	return 0;
}

