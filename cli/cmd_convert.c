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
	"When IN keeps weights in external files, or they pass protobuf's 2 GiB,\n"
	"OUT keeps them in OUT.data beside it (copied piece by piece, never held\n"
	"in memory); otherwise they are written inline unless --external-data is\n"
	"given.\n"
	"\n"
	"  --external-data FILE    write tensors of at least --size-threshold bytes\n"
	"                          to FILE, a path relative to OUT's folder\n"
	"  --size-threshold BYTES  smallest tensor written externally (default\n"
	"                          1024; K, M, G suffixes)\n"
	"  --help                  show this help\n";

int cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_SAVE_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *self = cli_command_find("convert");
	struct cli_save save = { NULL, 0, 0 };
	struct ir_model *m = NULL;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != CLI_OPT_EXTERNAL_DATA && c != CLI_OPT_SIZE_THRESHOLD)
			return cli_usage_error(self, "unknown option '%s'", argv[optind - 1]);
		if ((rc = cli_parse_save_opt(self, c, optarg, &save)) != CLI_EXIT_OK)
			return rc;
	}
	if (argc - optind != 2)
		return cli_usage_error(self, "convert needs IN and OUT");
	if ((rc = cli_load(argv[optind], &m)) != CLI_EXIT_OK)
		return rc;
	rc = cli_save_model(m, argv[optind + 1], &save);
	ir_model_free(m);
	return cli_finish(rc);
}
