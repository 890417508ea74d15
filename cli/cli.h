/* cli.h: what the command-line front end shares: the command table entry,
 * exit codes, error and output helpers.  Only cli/ prints or exits.
 *
 * Adding a command takes:
 *   1. cli/cmd_<name>.c: usage text (first line "usage: opmig <name> ..."),
 *      option parsing, calls into module APIs, output formatting;
 *   2. one line in cli_commands[] (cli/commands.c), kept sorted (unit test);
 *   3. man/opmig-<name>.1 whose SYNOPSIS equals the usage line and whose
 *      EXAMPLES run in tests/cli/t0010-man.sh;
 *   4. CLI tests in tests/cli/ (exit codes, bad input, golden output).
 */
#ifndef OPMIG_CLI_H
#define OPMIG_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OPMIG_VERSION "0.1.0"

enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FINDINGS = 1,
	CLI_EXIT_USAGE = 2,
	CLI_EXIT_BAD_INPUT = 3,
	CLI_EXIT_INTERNAL = 4,
};

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);  /* argv[0] is the command name */
	const char *help;                   /* full --help text */
	const char *summary;                /* one line for `opmig help` */
};

extern const struct cli_command cli_commands[];
extern const size_t cli_n_commands;
const struct cli_command *cli_command_find(const char *name);

/* Map an ir_status (or any module status) to an exit code. */
int cli_exit_code(int status);
/* "opmig: FILE: message" on stderr (FILE may be NULL). */
void cli_error(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cli_warn(const char *file, const char *msg);
/* Print usage error plus a hint; returns CLI_EXIT_USAGE. */
int cli_usage_error(const struct cli_command *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Flush stdout; CLI_EXIT_INTERNAL with a message if writing failed. */
int cli_finish(int code);
/* Colour on this stream?  Only on a TTY, never with NO_COLOR set. */
int cli_use_color(FILE *f);
/* Handle --help as the only argument form shared by all commands: returns
 * 1 when argv asks for help (and prints it). */
int cli_wants_help(const struct cli_command *c, int argc, char **argv);

/* A report to standard output (path NULL) or to the file path, written
 * whole and atomically when closed (output.c).  cli_out_open returns the
 * stream to print to (NULL: out of memory); cli_out_close takes the exit
 * code so far and returns it, or the error of writing the file (reported;
 * nothing is written when code is not CLI_EXIT_OK). */
struct cli_out {
	const char *path;
	FILE *f;
	char *buf;
	size_t len;
};
FILE *cli_out_open(struct cli_out *o, const char *path);
int cli_out_close(struct cli_out *o, int code);
struct ir_model;
/* Where a written model's weights go (--external-data FILE,
 * --size-threshold BYTES; list CLI_SAVE_OPTIONS in the option table and
 * hand those codes to cli_parse_save_opt). */
struct cli_save {
	const char *external_data;     /* NULL: "OUT.data" when needed */
	long long threshold;           /* when have_threshold (else 1024) */
	int have_threshold;
};
enum { CLI_OPT_EXTERNAL_DATA = 0x180, CLI_OPT_SIZE_THRESHOLD };
#define CLI_SAVE_OPTIONS \
	{ "external-data", required_argument, NULL, CLI_OPT_EXTERNAL_DATA }, \
	{ "size-threshold", required_argument, NULL, CLI_OPT_SIZE_THRESHOLD }
struct cli_command;
int cli_parse_save_opt(const struct cli_command *self, int c, const char *arg,
		       struct cli_save *s);
/* Save m to out atomically.  Weights of at least the threshold go to an
 * external data file: the one named, else "OUT.data" beside OUT when the
 * model's weights were external or would pass protobuf's 2 GiB; errors are
 * reported and returned as exit codes.  s may be NULL (the defaults). */
int cli_save_model(struct ir_model *m, const char *out, const struct cli_save *s);
/* The refusals cli_save_model would meet (a file the input reads, the
 * external data over OUT, a bad name), checked before a long run. */
int cli_save_check(struct ir_model *m, const char *out, const struct cli_save *s);

/* A non-negative decimal count; 0 or -1. */
int cli_parse_count(const char *s, long long *out);
/* A byte count with an optional K, M, G or T suffix (powers of 1024). */
int cli_parse_size(const char *s, long long *out);
/* Append s to the array *v of *n strings (s is not copied); 0 or -1 out of
 * memory. */
int cli_push(char ***v, size_t *n, char *s);

/* The options of the interpreter runs migrate and validate share,
 * --samples N, --seed S and --threads N: their getopt_long entries (in an
 * option table: CLI_RUN_OPTIONS,), the values getopt_long returns for them
 * and where cli_parse_run_opt stores them (run takes --seed and --threads
 * only, and leaves samples NULL). */
enum { CLI_OPT_SAMPLES = 0x100, CLI_OPT_SEED, CLI_OPT_THREADS };
#define CLI_RUN_OPTIONS \
	{ "samples", required_argument, NULL, CLI_OPT_SAMPLES }, \
	{ "seed", required_argument, NULL, CLI_OPT_SEED }, \
	{ "threads", required_argument, NULL, CLI_OPT_THREADS }
struct cli_run_opts {
	int *samples;                /* --samples: 1 to max_samples */
	uint64_t *seed;              /* --seed: any count */
	int *threads;                /* --threads: 1 to 1024 */
	long long max_samples;
};
/* Option c (a CLI_OPT_* value) with its argument arg into o: CLI_EXIT_OK
 * or the usage error's exit code. */
int cli_parse_run_opt(const struct cli_command *self, int c, const char *arg,
		      const struct cli_run_opts *o);
/* The quantization options quantize and migrate share (quant_opts.c):
 * their getopt_long entries (CLI_QUANT_OPTIONS, in an option table; each
 * command adds its own entry for the format, CLI_OPT_QFORMAT, and quantize
 * those of weight-only quantization, CLI_OPT_WEIGHT_ONLY and after), and
 * cli_parse_quant_opt storing one into a struct qz_opts. */
enum {
	CLI_OPT_CALIBRATE = 0x200, CLI_OPT_VALDATA, CLI_OPT_METHOD, CLI_OPT_PERCENTILE,
	CLI_OPT_QFORMAT, CLI_OPT_DYNAMIC, CLI_OPT_PER_CHANNEL, CLI_OPT_PER_TENSOR,
	CLI_OPT_SYMMETRIC, CLI_OPT_ACTS, CLI_OPT_WEIGHTS, CLI_OPT_EXCLUDE, CLI_OPT_EXCLUDE_OPS,
	CLI_OPT_ACCURACY, CLI_OPT_NO_FALLBACK, CLI_OPT_SENSITIVITY, CLI_OPT_MAX_FALLBACK,
	CLI_OPT_WEIGHT_ONLY, CLI_OPT_BLOCK_SIZE, CLI_OPT_ACC_LEVEL
};
#define CLI_QUANT_OPTIONS \
	{ "calibrate", required_argument, NULL, CLI_OPT_CALIBRATE }, \
	{ "validation-data", required_argument, NULL, CLI_OPT_VALDATA }, \
	{ "method", required_argument, NULL, CLI_OPT_METHOD }, \
	{ "percentile", required_argument, NULL, CLI_OPT_PERCENTILE }, \
	{ "dynamic", no_argument, NULL, CLI_OPT_DYNAMIC }, \
	{ "per-channel", no_argument, NULL, CLI_OPT_PER_CHANNEL }, \
	{ "per-tensor", no_argument, NULL, CLI_OPT_PER_TENSOR }, \
	{ "symmetric", no_argument, NULL, CLI_OPT_SYMMETRIC }, \
	{ "activations", required_argument, NULL, CLI_OPT_ACTS }, \
	{ "weights", required_argument, NULL, CLI_OPT_WEIGHTS }, \
	{ "exclude", required_argument, NULL, CLI_OPT_EXCLUDE }, \
	{ "exclude-ops", required_argument, NULL, CLI_OPT_EXCLUDE_OPS }, \
	{ "accuracy", required_argument, NULL, CLI_OPT_ACCURACY }, \
	{ "no-fallback", no_argument, NULL, CLI_OPT_NO_FALLBACK }, \
	{ "sensitivity", required_argument, NULL, CLI_OPT_SENSITIVITY }, \
	{ "max-fallback", required_argument, NULL, CLI_OPT_MAX_FALLBACK }
struct qz_opts;
int cli_parse_quant_opt(const struct cli_command *self, int c, const char *arg,
			struct qz_opts *o);

struct rt_dim_set;
/* Append --dim's NAME=VALUE to the array *dims of *n: CLI_EXIT_OK, the
 * usage error's exit code, or CLI_EXIT_INTERNAL out of memory. */
int cli_add_dim(const struct cli_command *self, struct rt_dim_set **dims, size_t *n,
		const char *arg);

struct ir_model;
/* Load and verify a model; on failure print the error line and return the
 * exit code (warnings are printed, not fatal: the loader's, and one line
 * per fault of the strict schema check, ir_model_check_loaded, the first
 * ten of them and then their count). */
int cli_load(const char *path, struct ir_model **m);
/* The same without the strict check's warnings (a second copy). */
int cli_load_quiet(const char *path, struct ir_model **m);

int cmd_batch(int argc, char **argv); extern const char cmd_batch_help[];
int cmd_convert(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
extern const char cmd_migrate_help[];
int cmd_ops(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
extern const char cmd_quantize_help[];
extern const char cmd_convert_help[], cmd_inspect_help[], cmd_ops_help[];
int cmd_run(int argc, char **argv);
extern const char cmd_run_help[];
int cmd_probe(int argc, char **argv);
extern const char cmd_probe_help[];
int cmd_rules(int argc, char **argv);
int cmd_scan(int argc, char **argv);
extern const char cmd_scan_help[];
int cmd_targets(int argc, char **argv);
int cmd_validate(int argc, char **argv);
extern const char cmd_validate_help[];
extern const char cmd_rules_help[], cmd_targets_help[];

/* Run the process again with OPENBLAS_CORETYPE set when OpenBLAS fell
 * back to generic kernels on a CPU that has better ones, and with
 * OMP_WAIT_POLICY=PASSIVE unless it is set (blas_env.c). */
void cli_tune_blas(char **argv);
/* Keep freed tensor buffers in malloc's heap for the next node instead of
 * returning them to the system (blas_env.c; glibc only). */
void cli_tune_malloc(void);

struct rules_db;
struct rules_target;

/* Load the rules data folder (resolved) into db; on failure print the
 * error line and return the exit code (db is then empty). */
int cli_load_rules(struct rules_db *db);
/* The installed targets into base and the --rules FILEs into extra
 * (resolved against base); prints the error and returns the exit code. */
int cli_load_rules_with(char *const *files, size_t n, struct rules_db *base,
			struct rules_db *extra);
/* A target by id: the --rules files' first, then the installed ones. */
const struct rules_target *cli_find_target(const struct rules_db *base,
					   const struct rules_db *extra,
					   const char *id);
/* Add the ids of --target's "a,b,c" to *ids (copies the caller frees, each
 * and the array), skipping ones already there: CLI_EXIT_OK, the usage
 * error for an empty id, or CLI_EXIT_INTERNAL out of memory. */
int cli_add_targets(const struct cli_command *self, char ***ids, size_t *n,
		    const char *list);

#endif
