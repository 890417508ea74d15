/* rules.h: the rules database of target chips: typed structs for the
 * oprules/ JSON target files (format in man/opmig-rules.5), their strict
 * loader, `extends` resolution and lookups.  Only oprules/ walks cJSON.
 *
 * Ownership: a struct rules_db owns every target in it and every string,
 * array and op of those targets (all heap copies, nothing borrows from the
 * JSON text).  rules_db_init() makes an empty db, rules_db_release() frees
 * its contents (the struct itself is the caller's; release twice is fine).
 * Lookups return pointers borrowed from the db, valid until it is released
 * or loaded into again.  rules_data_dir() writes into a caller buffer.
 */
#ifndef OPMIG_RULES_H
#define OPMIG_RULES_H

#include <stddef.h>
#include <stdint.h>

struct ir_diag;

/* The format version files declare with "schema": 1. */
#define RULES_SCHEMA 1
/* Upper end of a range written with null ("no upper bound stated"). */
#define RULES_UNBOUNDED 2147483647

/* dtype sets are bit masks over enum ir_dtype: bit (1u << IR_DTYPE_x). */
typedef uint32_t rules_dtypes;
#define RULES_DTYPE_BIT(t) ((rules_dtypes)1u << (t))

/* What a violated constraint of an op means for a node. */
enum rules_severity {
	RULES_UNSUPPORTED = 0,   /* blocker */
	RULES_LIMITED = 1,       /* warning: may run, with restrictions */
};

/* An attribute value in a constraint: a number, a string or a list of
 * numbers (for ints/floats attributes). */
enum rules_value_kind { RULES_VALUE_NUMBER, RULES_VALUE_STRING, RULES_VALUE_NUMBERS };

struct rules_value {
	enum rules_value_kind kind;
	double num;
	char *str;
	double *nums;
	size_t n_nums;
};

/* Constraint on one attribute.  min/max bound the value, or each element
 * of a list attribute; allowed lists the accepted values; equals is the one
 * accepted value.  A node without the attribute is checked with the
 * registry's default (the scanner's job). */
struct rules_attr {
	char *name;
	struct rules_value *allowed;
	size_t n_allowed;
	int has_min, has_max, has_equals;
	double min, max;
	struct rules_value equals;
};

/* Constraint on one input or output, by index. */
struct rules_io {
	int index;
	rules_dtypes dtypes;     /* 0: not constrained */
	int min_rank, max_rank;  /* -1: not constrained */
	int is_const;            /* input must be an initializer/constant */
};

struct rules_op {
	char *domain;            /* "ai.onnx", "com.microsoft", ... */
	char *name;
	int supported;           /* 0: the sources state it is not supported */
	int version_min, version_max;   /* op since_version range; 1..UNBOUNDED */
	rules_dtypes dtypes;     /* types of the op's data tensors; 0: any */
	struct rules_io *inputs;
	size_t n_inputs;
	struct rules_io *outputs;
	size_t n_outputs;
	struct rules_attr *attrs;
	size_t n_attrs;
	int static_shape;        /* inputs must have fully static shapes */
	int64_t max_dim;         /* largest allowed dim size; 0: no limit */
	int64_t cost;            /* the planner's cost of one node of the op
				  * (migrate prefers cheaper lowerings); 0:
				  * not given, which counts as 1 */
	enum rules_severity severity;
	char *notes;             /* "" when none */
	char **sources;          /* empty: the target's sources apply */
	size_t n_sources;
};

/* A fusion the target's compiler performs on a pattern of ops. */
struct rules_fused {
	char *name;
	char **ops;              /* op names of the pattern, in order */
	size_t n_ops;
	char *notes;
};

/* One target.  Fields a file may leave out have "unset" values (NULL,
 * -1) until `extends` fills them from the parent; see rules_db_resolve. */
struct rules_target {
	char *id, *name, *vendor, *family, *description;
	char *notes;             /* uncertainty, caveats; "" when none */
	char *extends;           /* parent id or NULL */
	char *file;              /* file it was loaded from */
	char **sources;
	size_t n_sources;
	int opset_min, opset_max;        /* default-domain opset; -1 unset */
	int has_missing_dtypes;
	rules_dtypes missing_dtypes;     /* dtypes the chip lacks */
	int dynamic_shapes;              /* 1 allowed, 0 not, -1 unset */
	int max_rank;                    /* -1 unset */
	char *preferred_layout;          /* "nchw", "nhwc" or NULL */
	int64_t device_memory_bytes;     /* -1 unset */
	char *preferred_precision;       /* "fp32", "fp16", "bf16", "int8" or NULL */
	int has_fused;
	struct rules_fused *fused;
	size_t n_fused;
	struct rules_op *ops;            /* sorted by (domain, name) */
	size_t n_ops;
	int resolved;                    /* extends applied */
};

struct rules_db {
	struct rules_target *targets;    /* sorted by id once resolved */
	size_t n_targets;
};

void rules_db_init(struct rules_db *db);
void rules_db_release(struct rules_db *db);

/* Parse and validate one target file and add it to db (not resolved).
 * Errors are IR_EINVAL (bad file: "FILE: json.path: what"), IR_EIO,
 * IR_ENOMEM; db is unchanged on error. */
int rules_load_file(const char *path, struct rules_db *db, struct ir_diag *d);

/* Load every *.json directly in dir (sorted by name), then resolve. */
int rules_load_dir(const char *dir, struct rules_db *db, struct ir_diag *d);

/* Apply `extends` to every unresolved target: the parent is looked up in
 * db first, then in base (a resolved db, or NULL).  Unknown parents and
 * cycles are IR_EINVAL.  Sorts db by id; duplicate ids are IR_EINVAL. */
int rules_db_resolve(struct rules_db *db, const struct rules_db *base,
		     struct ir_diag *d);

/* Free what a target holds (a target built outside a db, e.g. by `opmig
 * probe`: every string and array malloc'd), and sort its ops by (domain,
 * name) as lookups need. */
void rules_target_release(struct rules_target *t);
void rules_ops_sort(struct rules_op *ops, size_t n);

/* Lookups (bsearch; db must be resolved, target ops are always sorted). */
const struct rules_target *rules_db_find(const struct rules_db *db, const char *id);
/* domain "" or NULL means "ai.onnx". */
const struct rules_op *rules_target_find_op(const struct rules_target *t,
					    const char *domain, const char *name);
/* Ops the target supports (entries with supported = 1). */
size_t rules_target_n_supported(const struct rules_target *t);

/* dtype names as in the files ("float32", "int64", ...): name of one
 * enum ir_dtype, and the mask a name stands for ("float8" is all four
 * float8 types); 0 if unknown. */
const char *rules_dtype_name(int dtype);
rules_dtypes rules_dtype_parse(const char *name);
const char *rules_severity_name(enum rules_severity s);

/* The target as a rules file (schema 1, no extends: the resolved view),
 * pretty-printed JSON in a malloc'ed string the caller frees; NULL when
 * out of memory.  Loading the text again gives the same target. */
char *rules_target_to_json(const struct rules_target *t);

/* What two targets disagree on (diff.c): one line per difference, in
 * order: target-wide facts (op ""), then ops sorted by (domain, name);
 * what is "op", "versions", "dtypes", "attr NAME", "input K dtypes",
 * "input K rank", "input K", ...; a and b render each side's value
 * ("not listed", "supported", "float32,float16", "in NOTSET|VALID",
 * "any" where a side does not constrain).  The lines own their strings. */
struct rules_diff_line {
	char *op, *what, *a, *b;
};

struct rules_diff {
	size_t n;
	struct rules_diff_line *lines;
};

int rules_diff(const struct rules_target *a, const struct rules_target *b,
	       struct rules_diff *d);
void rules_diff_release(struct rules_diff *d);

/* Find the folder holding the target rules: $OPMIG_DATADIR/oprules if set,
 * else <exe>/../oprules or <exe>/../../../oprules when a Makefile is beside
 * it (the source tree: bin/opmig, build/asan/bin/opmig), else
 * <exe>/../share/opmig/oprules (installed).  Writes it into buf; 0 if
 * found, -1 if not (buf then holds the installed location expected). */
int rules_data_dir(char *buf, size_t size);

#endif
