/* cmd_convert.c: `opmig convert IN OUT`: load and verify a model, write it
 * back atomically, optionally moving big tensors to an external file. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ir/ir.h"

const char cmd_convert_help[] =
	"usage: opmig convert IN OUT [--external-data FILE] [--size-threshold BYTES]\n"
	"\n"
	"Load IN, verify it and write it to OUT (temp file + rename; never over IN).\n"
	"Tensors IN keeps in external files are read from them and written inline\n"
	"unless --external-data is given.\n"
	"\n"
	"  --external-data FILE    write tensors of at least --size-threshold bytes\n"
	"                          to FILE, a path relative to OUT's folder\n"
	"  --size-threshold BYTES  threshold for --external-data (default 1024)\n"
	"  --help                  show this help\n";

int cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "external-data", required_argument, NULL, 'e' },
		{ "size-threshold", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *self = cli_command_find("convert");
	struct ir_save_opts so = { NULL, 1024 };
	struct ir_model *m = NULL;
	struct ir_diag d;
	long long v;
	int c, rc, have_threshold = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			so.external_data = optarg;
			break;
		case 's':
			if (cli_parse_count(optarg, &v) < 0)
				return cli_usage_error(self, "--size-threshold wants a byte count, not '%s'", optarg);
			so.size_threshold = v;
			have_threshold = 1;
			break;
		default:
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return cli_usage_error(self, "convert needs IN and OUT");
	if (have_threshold && !so.external_data)
		return cli_usage_error(self, "--size-threshold needs --external-data");
	if ((rc = cli_load(argv[optind], &m)) != CLI_EXIT_OK)
		return rc;
	ir_diag_init(&d);
	rc = ir_model_save(m, argv[optind + 1], &so, &d);
	if (rc < 0)
		cli_error(argv[optind + 1], "%s", d.msg);
	ir_model_free(m);
	return cli_finish(cli_exit_code(rc));
}
