/* main.c: opmig's entry point: global options (--help, --version), `help
 * [COMMAND]`, and dispatch through the sorted command table. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "oprules/rules.h"

static void general_help(FILE *f)
{
	fputs("usage: opmig [--version] [--help] COMMAND [ARGS]\n\n"
	      "Migrate ONNX models to accelerators with partial operator coverage.\n\n"
	      "commands:\n", f);
	for (size_t i = 0; i < cli_n_commands; i++)
		fprintf(f, "  %-10s %s\n", cli_commands[i].name,
			cli_commands[i].summary);
	char dir[4096];
	int found = rules_data_dir(dir, sizeof(dir)) == 0;

	fputs("  help       show help for a command\n\n"
	      "Run 'opmig help COMMAND' or see opmig(1) for details.\n"
	      "Exit status: 0 ok, 1 findings, 2 usage, 3 bad input, 4 internal.\n",
	      f);
	fprintf(f, "Target rules: %s%s\n", dir, found ? "" : " (missing)");
}

static int help(int argc, char **argv)
{
	const struct cli_command *c;

	if (argc < 2) {
		general_help(stdout);
		return cli_finish(CLI_EXIT_OK);
	}
	if (argc > 2 || !(c = cli_command_find(argv[1]))) {
		fprintf(stderr, "opmig: no such command '%s'; try 'opmig help'\n",
			argv[1]);
		return CLI_EXIT_USAGE;
	}
	fputs(c->help, stdout);
	return cli_finish(CLI_EXIT_OK);
}

/* Models and weights are mapped: if another process truncates a file while
 * we read it, the kernel raises SIGBUS.  Say so instead of crashing. */
static void on_sigbus(int sig)
{
	static const char msg[] =
		"opmig: an input file shrank while it was being read (truncated by another process?)\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(CLI_EXIT_BAD_INPUT);
	_exit(CLI_EXIT_BAD_INPUT);
}

int main(int argc, char **argv)
{
	const struct cli_command *c;
	const char *name = argc > 1 ? argv[1] : NULL;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigaction(SIGBUS, &sa, NULL);
	/* Past a file size limit (ulimit -f) a write should fail with EFBIG,
	 * so that the temporary is removed and the error said, rather than
	 * the signal killing us half-way. */
	signal(SIGXFSZ, SIG_IGN);
	if (!name) {
		general_help(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(name, "--help") || !strcmp(name, "-h"))
		return help(1, argv);
	if (!strcmp(name, "--version")) {
		printf("opmig %s\n", OPMIG_VERSION);
		return cli_finish(CLI_EXIT_OK);
	}
	if (!strcmp(name, "help"))
		return help(argc - 1, argv + 1);
	if (!(c = cli_command_find(name))) {
		fprintf(stderr, "opmig: '%s' is not a command; try 'opmig help'\n",
			name);
		return CLI_EXIT_USAGE;
	}
	if (cli_wants_help(c, argc - 1, argv + 1))
		return cli_finish(CLI_EXIT_OK);
	if (!strcmp(name, "run") || !strcmp(name, "validate") || !strcmp(name, "migrate") ||
	    !strcmp(name, "batch") || !strcmp(name, "quantize")) {
		cli_tune_blas(argv);
		cli_tune_malloc();
	}
	return c->run(argc - 1, argv + 1);
}
