/* diag.c: the diagnostics struct every fallible ir/ function writes its first
 * error (and first warning, plus a warning count) into. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

void ir_diag_init(struct ir_diag *d)
{
	memset(d, 0, sizeof(*d));
}

int ir_diag_error(struct ir_diag *d, int status, const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return status;
	if (d->status == 0) {
		d->status = status;
		va_start(ap, fmt);
		vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
		va_end(ap);
	}
	return d->status;
}

void ir_diag_warn(struct ir_diag *d, const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return;
	if (d->n_warnings++ == 0) {
		va_start(ap, fmt);
		vsnprintf(d->warning, sizeof(d->warning), fmt, ap);
		va_end(ap);
	}
}

const char *ir_strerror(int err)
{
	static _Thread_local char buf[128];

	snprintf(buf, sizeof(buf), "%s", strerror(err));
	if (buf[0] >= 'A' && buf[0] <= 'Z')
		buf[0] = (char)(buf[0] - 'A' + 'a');
	return buf;
}
