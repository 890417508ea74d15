/* probe.h: `opmig probe`: measure what a real runtime or converter
 * accepts.  Tiny one-node models are generated from the operator registry
 * and the ONNX backend node cases (every op version of an opset range, each
 * main dtype, representative attribute values, ranks 1-5, constant or
 * graph inputs), with seeded inputs and reference outputs from opmig's
 * interpreter, in the backend test layout; a user's command runs each in
 * an isolated worker (batch's pool); its outputs are compared with the
 * reference; each case gets a verdict, and the verdicts become a rules
 * file (oprules format) and a report.  Also `migrate --verify-with`: one
 * model on the real runtime, compared with the interpreter (verify.c).
 *
 * Ownership: a struct probe_run owns its cases and every string in them;
 * probe_run_release frees them.  Options are borrowed.  A struct
 * rules_target made by probe_derive owns its contents (release it with
 * rules_target_release).  Nothing here prints: progress goes to the
 * caller's callback, errors into a struct ir_diag.
 */
#ifndef OPMIG_PROBE_H
#define OPMIG_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "oprules/rules.h"
#include "validators/compare.h"

struct ir_diag;
struct ir_op_schema;
struct ir_model;

#define PROBE_SCHEMA "opmig.probe/1"

/* What a case varies, one factor at a time from its op's base case. */
enum probe_kind {
	PROBE_BASE,       /* the op as its seed has it, in one main dtype */
	PROBE_BACKEND,    /* an ONNX backend node case, at the probed opset */
	PROBE_ATTR,       /* one attribute set to another value */
	PROBE_RANK,       /* the data inputs at another rank */
	PROBE_GRAPH,      /* input k, constant in the base, a graph input */
	PROBE_CONST,      /* input 0, a graph input in the base, constant */
	PROBE_OPSET,      /* target-wide: Relu in a model of one opset */
	PROBE_DYNAMIC,    /* target-wide: Relu with a symbolic batch dim */
	PROBE_BACKEND_CONST,  /* a backend case with input 0 a graph input
			       * and the others constant, as in real models */
};
#define PROBE_N_KINDS 9

enum probe_verdict {
	PROBE_PENDING,    /* not run (yet) */
	PROBE_INVALID,    /* no valid model: the interpreter refused it */
	PROBE_EQUAL,      /* accepted, outputs equal the reference */
	PROBE_ACCEPTED,   /* --accept-only: exit status 0 */
	PROBE_WRONG,      /* accepted, outputs differ (or missing) */
	PROBE_REJECTED,   /* non-zero exit status */
	PROBE_CRASHED,    /* killed by a signal */
	PROBE_TIMEOUT,    /* stopped after --timeout */
};
#define PROBE_N_VERDICTS 8

const char *probe_kind_name(enum probe_kind k);
const char *probe_verdict_name(enum probe_verdict v);
int probe_verdict_parse(const char *s);
/* Equal, or accepted under --accept-only. */
int probe_verdict_ok(enum probe_verdict v);

/* An attribute value of an ATTR case. */
struct probe_aval {
	int type;                /* IR_ATTR_INT, _FLOAT, _STRING, _INTS;
				  * IR_ATTR_UNDEFINED: the attribute absent */
	int64_t i;
	double f;
	char *s;
	int64_t *ints;
	size_t n;
};

struct probe_case {
	char *id;                /* folder name under WORKDIR/cases */
	const struct ir_op_schema *schema;  /* the op and version probed */
	int opset;               /* default-domain opset the model imports */
	enum probe_kind kind;
	int seed;                /* index of its seed (see plan.c), -1 none */
	int dtype;               /* main dtype (the op's data tensors) */
	int ref;                 /* the base case of the reference dtype */
	char *attr;              /* ATTR: the attribute */
	struct probe_aval value; /* ATTR: its value */
	struct probe_aval base_value;  /* ATTR: the base case's value */
	int input;               /* GRAPH, CONST: the input; else -1 */
	int rank;                /* RANK: the rank of the data inputs */
	char *backend;           /* BACKEND and seeds: the backend case */
	/* filled when the case is generated */
	rules_dtypes io_dtypes;  /* of its graph inputs and outputs */
	rules_dtypes in_dtypes;  /* of its graph inputs */
	int max_rank;            /* largest rank of those */
	int in0_rank;            /* rank of input 0, -1 none */
	int shapes_only;         /* compare dtypes and shapes only */
	/* filled when the runtime ran it */
	enum probe_verdict verdict;
	char *message;           /* the runtime's message, or why it is wrong */
	double max_abs;          /* WRONG: largest error, -1 none */
	double seconds;
	int kept;                /* --resume kept its result */
};

struct probe_progress {
	const char *phase;       /* "generate" or "run" */
	size_t done, total;
	size_t counts[PROBE_N_VERDICTS];
	double elapsed;
	const struct probe_case *c;  /* just finished; NULL on ticks */
};

struct probe_opts {
	const char *command;     /* template: {model} {inputs} {outdir} */
	const char *workdir;     /* cases and results */
	int opset_min, opset_max;
	char *const *ops;        /* op names to probe; NULL: all of domain */
	size_t n_ops;
	const char *domain;      /* "ai.onnx" (default), "com.microsoft" ... */
	rules_dtypes dtypes;     /* main dtypes to try (0: the default set) */
	int accept_only;
	unsigned jobs;
	double timeout;          /* seconds per case */
	uint64_t max_memory;     /* RLIMIT_AS per case, 0 none */
	int resume;
	const char *backend_dir; /* ONNX backend node cases; NULL none */
	uint64_t seed;           /* of generated inputs */
	void (*progress)(void *ctx, const struct probe_progress *p);
	void *ctx;
};

/* The default main dtypes: float32, float16, float64, int8, uint8,
 * int32, int64, bool. */
rules_dtypes probe_default_dtypes(void);

struct probe_run {
	size_t n_cases;
	struct probe_case *cases;  /* sorted by id */
	size_t n_ops;              /* ops probed */
	size_t n_seeds_backend;    /* ops whose seed is a backend case */
	size_t n_no_case;          /* ops without one valid case */
	char **no_case;            /* their names ("Op-VERSION") */
	char *runtime;             /* "NAME VERSION" a case printed, or NULL */
	char *command;             /* the template */
	int opset_min, opset_max;
	int accept_only;
	double seconds;            /* wall time of the whole run */
};

void probe_run_release(struct probe_run *r);

/* Plan, generate and run every case (see opmig-probe(1)).  Errors of
 * the probe itself only (bad options, WORKDIR not writable, interrupted);
 * a case that fails is a verdict. */
int probe_run(const struct probe_opts *o, struct probe_run *r, struct ir_diag *d);

/* The rules file the verdicts say (see derive.c): id and name of the
 * target; tool ("opmig 0.1.0") and date ("YYYY-MM-DD") for its sources. */
int probe_derive(const struct probe_run *r, const char *id, const char *name,
		 const char *tool, const char *date, struct rules_target *t,
		 struct ir_diag *d);

/* Reports: text for people, JSON (opmig.probe/1), HTML op x dtype
 * matrix.  0, or -1 when writing failed or memory ran out. */
int probe_report_text(const struct probe_run *r, FILE *f);
int probe_report_json(const struct probe_run *r, FILE *f);
int probe_report_html(const struct probe_run *r, FILE *f);

/* ---- command templates (cmdline.c) ---------------------------------- */

/* Does the template name {model}?  A template without it is a usage
 * error; {inputs} and {outdir} are optional. */
int probe_template_ok(const char *tmpl, char *why, size_t size);
/* The shell command for one model: each placeholder replaced by the
 * shell-quoted path.  malloc'd; NULL out of memory. */
char *probe_template_expand(const char *tmpl, const char *model,
			    const char *inputs, const char *outdir);

/* ---- running one command (exec.c) ---------------------------------- */

struct probe_exec {
	enum probe_verdict verdict;  /* REJECTED, CRASHED, TIMEOUT, or
				      * PENDING when it exited 0 */
	int status;                  /* exit status, or the signal */
	char *message;               /* representative line, NULL none */
	char *runtime;               /* an "opmig-runtime: ..." line's text */
};

/* The verdict of a finished command (waitpid status), its message from
 * the stderr and stdout files it wrote (model_path replaced by MODEL). */
int probe_exec_classify(int status, int timed_out, double timeout,
			const char *err_file, const char *out_file,
			const char *model_path, struct probe_exec *e);
void probe_exec_release(struct probe_exec *e);
/* In a forked child: stdin from /dev/null, stdout and stderr to the
 * files, then /bin/sh -c cmd.  Returns only on failure (127). */
int probe_exec_shell(const char *cmd, const char *out_file, const char *err_file);

/* ---- case files (casefile.c) ---------------------------------------- */

/* Write a model's graph inputs into dir as input_K.pb and input_K.npy,
 * and inputs.txt / outputs.txt (the names, one a line), the layout
 * runtime adapters read. */
struct rt_value;
int probe_inputs_write(const char *dir, char *const *in_names, struct rt_value **in,
		       size_t n_in, char *const *out_names, size_t n_out,
		       struct ir_diag *d);
/* Output k a runtime wrote into outdir (output_K.npy, else .pb) as want's
 * dtype and dims when it differs only by dtype or by dims of size 1 (note,
 * when empty, gets what was changed).  *got NULL when it is missing or
 * unreadable (why says so); negative only when memory ran out. */
int probe_output_read(const char *outdir, size_t k, const struct rt_value *want,
		      const char *name, struct rt_value **got, char *note, size_t note_size,
		      char *why, size_t why_size, struct ir_diag *d);
/* Compare the runtime's outputs in outdir (output_K.npy or .pb) with
 * want[0..n) under tol (NULL: by the dtype's precision); lenient on a
 * dtype or on size-1 dims the runtime changed (noted in why).  *equal
 * 1 or 0; why says what differs (or what was lenient). */
int probe_outputs_compare(const char *outdir, struct rt_value **want, char *const *names,
			  size_t n, const struct rt_cmp_opts *tol, int shapes_only,
			  int *equal, double *max_abs, char *why, size_t size,
			  struct ir_diag *d);

/* ---- migrate --verify-with (verify.c) ------------------------------- */

struct probe_verify_opts {
	const char *command;     /* template */
	double timeout;          /* seconds, 0: 600 */
	int samples;             /* >= 1 */
	uint64_t seed;
	int threads;
	int have_tol;
	struct rt_cmp_opts tol;  /* else by the model's precision */
};

struct probe_verify_output {
	char *name;
	struct rt_metrics m;
};

struct probe_verify {
	int ran;                 /* the command was run */
	int ok;                  /* accepted, and every output equal */
	enum probe_verdict verdict;
	char *message;           /* the runtime's or the comparison's */
	char *runtime;           /* "NAME VERSION" when it printed one */
	char *command;           /* the template */
	size_t n_samples;
	struct rt_cmp_opts tol;
	size_t n_outputs;
	struct probe_verify_output *outputs;  /* over all samples */
};

void probe_verify_release(struct probe_verify *v);
/* Run m (saved to a temporary folder) on the runtime with seeded inputs
 * and compare with the interpreter's outputs for m.  A runtime that
 * refuses, crashes or differs is not an error: v->ok says. */
int probe_verify_model(struct ir_model *m, const struct probe_verify_opts *o,
		       struct probe_verify *v, struct ir_diag *d);
/* For migrate and batch: probe_verify_model, then the result recorded in
 * r: r->runtime_check gets the JSON, and a runtime that refuses, crashes,
 * hangs or differs clears r->ok with why. */
struct mg_report;
int probe_verify_report(struct ir_model *m, const struct probe_verify_opts *o,
			struct probe_verify *v, struct mg_report *r, struct ir_diag *d);
/* The "runtime_check" object of opmig.migrate/1 as JSON text (malloc'd,
 * NULL out of memory), and the text report's lines. */
char *probe_verify_json(const struct probe_verify *v);
void probe_verify_text(const struct probe_verify *v, FILE *f);

#endif
