/* fuzz_zip.c: libFuzzer harness of the zip model-archive reader of `opmig
 * batch`: the input is a .zip archive; its entries are listed with the
 * zip-slip, symlink, size and ratio checks, every listed entry is read
 * within the limits, and the items are named.  Listed entries must have
 * safe names, reads must respect the size limit, and the item folder
 * names must be unique plain names. */
#include "batch/batch_int.h"
#include "ir/ir.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static void check_name(const char *name)
{
	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		fprintf(stderr, "zip: unsafe item folder name '%s'\n", name);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct batch_src s;
	struct ir_diag d;
	char path[64];
	int fd;

	if ((fd = fuzz_memfd(data, size, path, sizeof(path))) < 0)
		return 0;
	batch_src_init(&s);
	s.lim.max_entry = 4u << 20;
	s.lim.max_ratio = 100.0;
	ir_diag_init(&d);
	if (batch_zip_add(&s, path, NULL, &d) < 0)
		goto cleanup;
	for (size_t i = 0; i < s.n_items; i++) {
		uint8_t *buf = NULL;
		size_t len = 0;

		if (!batch_zip_name_safe(s.items[i].entry)) {
			fprintf(stderr, "zip: unsafe entry '%s' listed\n", s.items[i].entry);
			abort();
		}
		ir_diag_init(&d);
		if (batch_zip_read(path, s.items[i].entry, &s.lim, &buf, &len, &d) == 0) {
			if (len > s.lim.max_entry)
				abort();
			free(buf);
		} else if (buf) {
			abort();
		}
	}
	ir_diag_init(&d);
	if (batch_src_finish(&s, &d) == 0) {
		for (size_t i = 0; i < s.n_items; i++) {
			check_name(s.items[i].name);
			if (i && !strcmp(s.items[i].name, s.items[i - 1].name)) {
				fprintf(stderr, "zip: two items named '%s'\n", s.items[i].name);
				abort();
			}
		}
	}
cleanup:
	batch_src_release(&s);
	close(fd);
	return 0;
}
