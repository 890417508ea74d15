/* fuzz_extdata.c: libFuzzer harness of the external-data resolver: the
 * input is a tensor's external data location, resolved against a model
 * folder holding files, a subfolder and symlinks pointing in and out, with
 * a "secret" file beside the folder.  Whatever resolves must be a file
 * inside the folder (abort otherwise: a path-safety bug). */
#include <errno.h>
#include <sys/mman.h>

#include "ir/ir.h"
#include "ir/ir_int.h"
#include "tests/fuzz/fuzz.h"

static char root[PATH_MAX], real_root[PATH_MAX];

static void mk(const char *rel, const char *target)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", fuzz_scratch(), rel);
	if (!target) {
		if (mkdir(path, 0700) < 0 && access(path, F_OK) < 0)
			abort();
	} else if (target[0] == '=') {
		FILE *f = fopen(path, "w");

		if (!f)
			abort();
		fputs(target + 1, f);
		fclose(f);
	} else if (symlink(target, path) < 0 && access(path, F_OK) < 0 &&
		   errno != ENOENT) {
		abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	mk("secret.bin", "=secret");
	mk("m", NULL);
	mk("m/sub", NULL);
	mk("m/w.bin", "=weights");
	mk("m/sub/w.bin", "=weights in sub");
	mk("m/empty.bin", "=");
	mk("m/in.bin", "w.bin");
	mk("m/sub/up.bin", "../w.bin");
	mk("m/out.bin", "../secret.bin");
	mk("m/abs.bin", "/etc/passwd");
	mk("m/loop", "loop");
	mk("m/dangling", "nowhere");
	mk("m/subdir-link", "sub");
	mk("m/outdir-link", "..");
	snprintf(root, sizeof(root), "%s/m", fuzz_scratch());
	if (!realpath(root, real_root))
		abort();
	return 0;
}

static void check_inside(const char *what, const char *loc, const char *path)
{
	size_t n = strlen(real_root);

	if (strncmp(path, real_root, n) != 0 || path[n] != '/') {
		fprintf(stderr, "%s: location '%s' resolved to '%s', outside '%s'\n",
			what, loc, path, real_root);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ir_model *m;
	struct ir_extfile *x = NULL;
	const uint8_t *base;
	size_t len;
	struct ir_diag d;
	char *loc, *out = NULL;

	if (size > 4096)
		return 0;
	if (!(loc = malloc(size + 1)))
		return 0;
	memcpy(loc, data, size);
	loc[size] = 0;
	ir_diag_init(&d);
	if (ir_path_resolve_inside(root, loc, &out, &d) == 0) {
		check_inside("ir_path_resolve_inside", loc, out);
		free(out);
	}
	/* The same through a model: one shared handle per location, its whole
	 * file mapped as a tensor's window would be. */
	if ((m = ir_model_new()) && (m->dir = strdup(root))) {
		ir_diag_init(&d);
		if (ir_extfile_open(m, loc, &x, &d) == 0) {
			struct ir_extfile *again = NULL;

			check_inside("ir_extfile_open", loc, x->path);
			ir_diag_init(&d);
			if (ir_extfile_open(m, loc, &again, &d) != 0 || again != x)
				abort();
			ir_diag_init(&d);
			if (ir_extfile_window(x, 0, (int64_t)x->size, &base, &len, &d) == 0 && base)
				munmap((void *)base, len);
		}
	}
	ir_model_free(m);
	free(loc);
	return 0;
}
