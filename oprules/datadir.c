/* datadir.c: locating the rules folder relative to the running binary, so
 * an installed opmig finds its data without the source tree and a built
 * one (bin/opmig or build/<flavour>/bin/opmig) finds the tree's oprules/. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oprules/rules.h"

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int rules_data_dir(char *buf, size_t size)
{
	const char *env = getenv("OPMIG_DATADIR");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(buf, size, "%s/oprules", env);
		return is_dir(buf) ? 0 : -1;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(buf, size, "oprules");
		return is_dir(buf) ? 0 : -1;
	}
	exe[n] = 0;
	if ((slash = strrchr(exe, '/')))
		*slash = 0;
	/* bin/opmig, or build/<flavour>/bin/opmig, of a source tree. */
	for (int up = 0; up < 2; up++) {
		const char *rel = up ? "/../../.." : "/..";
		char tree[PATH_MAX + 32];

		snprintf(buf, size, "%s%s/oprules", exe, rel);
		if (!is_dir(buf) || access(buf, R_OK) != 0)
			continue;
		/* Only the source tree has a Makefile beside oprules/. */
		snprintf(tree, sizeof(tree), "%s%s/Makefile", exe, rel);
		if (access(tree, R_OK) == 0)
			return 0;
	}
	snprintf(buf, size, "%s/../share/opmig/oprules", exe);
	return is_dir(buf) ? 0 : -1;
}
