/* fuzz_rules.c: libFuzzer harness of the oprules loader: the input is a
 * target rules file (JSON), loaded, resolved against the shipped targets
 * (its `extends`), looked up, written back as JSON and loaded again. */
#include "ir/ir.h"
#include "oprules/rules.h"
#include "tests/fuzz/fuzz.h"

static struct rules_db shipped;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[PATH_MAX + 16];
	struct ir_diag d;

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/oprules", fuzz_top());
	rules_db_init(&shipped);
	ir_diag_init(&d);
	if (rules_load_dir(dir, &shipped, &d) < 0) {
		fprintf(stderr, "opmig fuzz: %s\n", d.msg);
		abort();
	}
	return 0;
}

/* Write t as JSON and load it again: it must load. */
static void round_trip(const struct rules_target *t)
{
	struct rules_db db;
	struct ir_diag d;
	char path[64];
	char *json = rules_target_to_json(t);
	int fd;

	if (!json)
		return;
	fd = fuzz_memfd((const uint8_t *)json, strlen(json), path, sizeof(path));
	free(json);
	if (fd < 0)
		return;
	rules_db_init(&db);
	ir_diag_init(&d);
	if (rules_load_file(path, &db, &d) < 0) {
		fprintf(stderr, "target '%s' written as JSON does not load: %s\n",
			t->id, d.msg);
		abort();
	}
	rules_db_release(&db);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rules_db db;
	struct ir_diag d;
	char path[64];
	int fd;

	if ((fd = fuzz_memfd(data, size, path, sizeof(path))) < 0)
		return 0;
	rules_db_init(&db);
	ir_diag_init(&d);
	if (rules_load_file(path, &db, &d) == 0 &&
	    rules_db_resolve(&db, &shipped, &d) == 0) {
		for (size_t i = 0; i < db.n_targets; i++) {
			const struct rules_target *t = &db.targets[i];

			if (rules_db_find(&db, t->id) != t)
				abort();
			rules_target_find_op(t, "", "Conv");
			rules_target_find_op(t, "com.microsoft", "Gelu");
			rules_target_n_supported(t);
			round_trip(t);
		}
	}
	rules_db_release(&db);
	close(fd);
	return 0;
}
