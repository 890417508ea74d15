/* suite_cli.c: unit tests of the CLI frame: the command table is sorted and
 * unique (bsearch relies on it), every command has help whose first line is
 * its usage, and statuses map to the documented exit codes. */
#include <string.h>

#include "cli/cli.h"
#include "ir/ir.h"
#include "tests/unit/suites.h"

static void test_table_sorted(void)
{
	CU_ASSERT_TRUE(cli_n_commands > 0);
	for (size_t i = 1; i < cli_n_commands; i++)
		CU_ASSERT_TRUE(strcmp(cli_commands[i - 1].name, cli_commands[i].name) < 0);
	for (size_t i = 0; i < cli_n_commands; i++) {
		char want[64];

		CU_ASSERT_PTR_EQUAL(cli_command_find(cli_commands[i].name), &cli_commands[i]);
		snprintf(want, sizeof(want), "usage: opmig %s ", cli_commands[i].name);
		CU_ASSERT_EQUAL(strncmp(cli_commands[i].help, want, strlen(want)), 0);
	}
	CU_ASSERT_PTR_NULL(cli_command_find("nope"));
}

static void test_exit_codes(void)
{
	CU_ASSERT_EQUAL(cli_exit_code(IR_OK), 0);
	CU_ASSERT_EQUAL(cli_exit_code(IR_EUSAGE), 2);
	CU_ASSERT_EQUAL(cli_exit_code(IR_EINVAL), 3);
	CU_ASSERT_EQUAL(cli_exit_code(IR_ENOMEM), 4);
	CU_ASSERT_EQUAL(cli_exit_code(IR_EIO), 4);
}

static const struct unit_test tests[] = {
	{ "command table sorted, unique, with usage", test_table_sorted },
	{ "status to exit code", test_exit_codes },
	{ NULL, NULL },
};

int suite_cli_register(void)
{
	return unit_add_suite("cli", tests);
}
