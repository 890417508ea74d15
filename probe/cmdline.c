/* cmdline.c: the runtime command template of `opmig probe --runtime` and
 * `migrate --verify-with`: 'CMD {model} {inputs} {outdir}', each
 * placeholder replaced by a shell-quoted path, run by /bin/sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"

int probe_template_ok(const char *tmpl, char *why, size_t size)
{
	if (!tmpl || !*tmpl) {
		snprintf(why, size, "the runtime command is empty");
		return 0;
	}
	if (!strstr(tmpl, "{model}")) {
		snprintf(why, size, "the runtime command '%s' does not name {model}", tmpl);
		return 0;
	}
	return 1;
}

/* Append s to the buffer, single-quoted for the shell when quote. */
static int put(char **buf, size_t *len, size_t *cap, const char *s, size_t n, int quote)
{
	size_t need = *len + (quote ? 4 * n + 3 : n) + 1;

	if (need > *cap) {
		size_t c = need * 2;
		char *p = realloc(*buf, c);

		if (!p)
			return -1;
		*buf = p;
		*cap = c;
	}
	if (!quote) {
		memcpy(*buf + *len, s, n);
		*len += n;
	} else {
		(*buf)[(*len)++] = '\'';
		for (size_t i = 0; i < n; i++) {
			if (s[i] == '\'') {
				memcpy(*buf + *len, "'\\''", 4);
				*len += 4;
			} else {
				(*buf)[(*len)++] = s[i];
			}
		}
		(*buf)[(*len)++] = '\'';
	}
	(*buf)[*len] = 0;
	return 0;
}

char *probe_template_expand(const char *tmpl, const char *model,
			    const char *inputs, const char *outdir)
{
	static const char *const keys[] = { "{model}", "{inputs}", "{outdir}" };
	const char *vals[] = { model, inputs, outdir };
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (put(&buf, &len, &cap, "", 0, 0) < 0)
		return NULL;
	for (const char *p = tmpl; *p;) {
		size_t k;

		for (k = 0; k < 3; k++)
			if (!strncmp(p, keys[k], strlen(keys[k])))
				break;
		if (k < 3) {
			if (put(&buf, &len, &cap, vals[k] ? vals[k] : "", strlen(vals[k] ? vals[k] : ""), 1) < 0)
				goto fail;
			p += strlen(keys[k]);
		} else {
			if (put(&buf, &len, &cap, p, 1, 0) < 0)
				goto fail;
			p++;
		}
	}
	return buf;
fail:
	free(buf);
	return NULL;
}
