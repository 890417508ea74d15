/* suite_util.c: helper registering a NULL-terminated table of tests as one
 * CUnit suite. */
#include "tests/unit/suites.h"

int unit_add_suite(const char *name, const struct unit_test *t)
{
	CU_pSuite s = CU_add_suite(name, NULL, NULL);

	if (!s)
		return -1;
	for (; t->name; t++)
		if (!CU_add_test(s, t->name, t->fn))
			return -1;
	return 0;
}
