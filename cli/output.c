/* output.c: where a command's report and model go.  A report goes to
 * standard output, or to a file written whole and atomically (a memory
 * stream first, so that a failure leaves no partial file); a model is
 * saved atomically, with an external data file beside it when its
 * weights came from one or would pass protobuf's 2 GiB limit. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ir/ir.h"

FILE *cli_out_open(struct cli_out *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->path = path;
	o->f = path ? open_memstream(&o->buf, &o->len) : stdout;
	return o->f;
}

int cli_out_close(struct cli_out *o, int code)
{
	struct ir_diag d;

	if (!o->path || !o->f)
		return o->f ? code : CLI_EXIT_INTERNAL;
	if (fclose(o->f) != 0 && code == CLI_EXIT_OK)
		code = CLI_EXIT_INTERNAL;
	ir_diag_init(&d);
	if (code == CLI_EXIT_OK && ir_file_write_atomic(o->path, o->buf, o->len, &d) < 0) {
		cli_error(o->path, "%s", d.msg);
		code = cli_exit_code(d.status);
	}
	free(o->buf);
	memset(o, 0, sizeof(*o));
	return code;
}

int cli_parse_save_opt(const struct cli_command *self, int c, const char *arg,
		       struct cli_save *s)
{
	long long v;

	if (c == CLI_OPT_EXTERNAL_DATA) {
		s->external_data = arg;
		return CLI_EXIT_OK;
	}
	if (cli_parse_size(arg, &v) < 0)
		return cli_usage_error(self, "--size-threshold wants a byte count, not '%s'", arg);
	s->threshold = v;
	s->have_threshold = 1;
	return CLI_EXIT_OK;
}

/* The save options for out: the external data file named, else "OUT.data"
 * (ext holds it) when m needs one. */
static void save_opts(struct ir_model *m, const char *out, const struct cli_save *s,
		      struct ir_save_opts *so, char *ext, size_t ext_size)
{
	so->external_data = NULL;
	so->size_threshold = s && s->have_threshold ? s->threshold : 1024;
	if (s && s->external_data) {
		so->external_data = s->external_data;
	} else if (ir_model_needs_external(m)) {
		const char *base = strrchr(out, '/');

		snprintf(ext, ext_size, "%s.data", base ? base + 1 : out);
		so->external_data = ext;
	}
}

static int save_error(const char *out, int rc, const struct ir_diag *d)
{
	cli_error(out, "%s", d->msg);
	return rc == IR_EUSAGE ? CLI_EXIT_USAGE : cli_exit_code(rc);
}

/* fn (ir_model_save or its check) with the options s makes for out */
static int save_with(int (*fn)(struct ir_model *, const char *, const struct ir_save_opts *,
			       struct ir_diag *),
		     struct ir_model *m, const char *out, const struct cli_save *s)
{
	struct ir_save_opts so;
	char ext[4200];
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	save_opts(m, out, s, &so, ext, sizeof(ext));
	if ((rc = fn(m, out, &so, &d)) < 0)
		return save_error(out, rc, &d);
	return CLI_EXIT_OK;
}

int cli_save_check(struct ir_model *m, const char *out, const struct cli_save *s)
{
	return save_with(ir_model_save_check, m, out, s);
}

int cli_save_model(struct ir_model *m, const char *out, const struct cli_save *s)
{
	return save_with(ir_model_save, m, out, s);
}
