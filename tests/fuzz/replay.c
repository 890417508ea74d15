/* replay.c: runs inputs through one fuzz harness without libFuzzer, for
 * `make test` (tests/cli/t1400-fuzz-replay.sh): each argument is a file or
 * a folder of files (corpus, regressions), each file is one call of the
 * harness's LLVMFuzzerTestOneInput.  Linked with each tests/fuzz/fuzz_*.c
 * in the normal and sanitizer builds; a crash or sanitizer report is the
 * failure. */
#include <dirent.h>
#include <errno.h>

#include "tests/fuzz/fuzz.h"

static int replay_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL, *grown;
	size_t len = 0, cap = 0, got;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			if (!(grown = realloc(buf, cap))) {
				free(buf);
				fclose(f);
				fprintf(stderr, "replay: %s: out of memory\n", path);
				return -1;
			}
			buf = grown;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got);
	fclose(f);
	/* An exact-size copy, so overreads hit ASan's redzone as in libFuzzer. */
	grown = malloc(len ? len : 1);
	if (!grown) {
		free(buf);
		return -1;
	}
	memcpy(grown, buf, len);
	free(buf);
	if (getenv("REPLAY_VERBOSE"))
		fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(grown, len);
	free(grown);
	(*n)++;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, size_t *n)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char **names = NULL, **grown;
	size_t k = 0;
	int rc = 0;

	if (!dp)
		return -1;
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		if (!(grown = realloc(names, (k + 1) * sizeof(*names))) ||
		    !(grown[k] = malloc(strlen(dir) + strlen(e->d_name) + 2))) {
			names = grown ? grown : names;
			rc = -1;
			break;
		}
		names = grown;
		sprintf(names[k++], "%s/%s", dir, e->d_name);
	}
	closedir(dp);
	if (k)
		qsort(names, k, sizeof(*names), name_cmp);
	for (size_t i = 0; i < k; i++) {
		struct stat st;

		if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
			rc = replay_file(names[i], n);
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	size_t n = 0;
	int rc = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc && rc == 0; i++) {
		struct stat st;

		if (stat(argv[i], &st) < 0 && errno == ENOENT)
			continue;  /* a harness without regressions yet */
		if (S_ISDIR(st.st_mode))
			rc = replay_dir(argv[i], &n);
		else
			rc = replay_file(argv[i], &n);
	}
	printf("replayed %zu inputs\n", n);
	return rc ? 1 : 0;
}
