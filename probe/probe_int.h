/* probe_int.h: what the probe/ files share and nobody else needs: the
 * seed of an op (a one-node spec: attributes and input values, from a
 * backend node case or synthesized from the registry), the plan that
 * turns seeds into cases, building a case's model, and the helpers over
 * schemas and attribute values. */
#ifndef OPMIG_PROBE_INT_H
#define OPMIG_PROBE_INT_H

#include "ir/ir.h"
#include "ir/registry.h"
#include "probe/probe.h"
#include "runtime/runtime.h"

#define PROBE_MAX_IO 16

/* A one-node model in parts: the node (its attributes, op and domain)
 * and a value for each input slot. */
struct probe_spec {
	char *name;                  /* backend case name, or "synthesized" */
	const struct ir_op_schema *own;  /* the node's schema where it came
					  * from (its own opset) */
	struct ir_model *model;      /* owns node when from a backend case */
	struct ir_node *node;        /* else owned here */
	size_t n_in;
	struct rt_value *in[PROBE_MAX_IO];   /* NULL: an absent optional */
	int is_const[PROBE_MAX_IO];
	size_t n_out;
	int out_present[PROBE_MAX_IO];
	int n_attrs_set;             /* attributes the node sets */
};

void probe_spec_free(struct probe_spec *s);
/* A spec from a backend node case folder (model.onnx and
 * test_data_set_0/input_K.pb): NULL when it is not one node of tensor
 * inputs and outputs (then why says so). */
struct probe_spec *probe_spec_from_backend(const char *dir, const char *name,
					   char *why, size_t size);
/* A spec made from the schema alone (synth.c): generic shapes and
 * values, attributes at their defaults, required ones given a plausible
 * value; NULL when opmig cannot make one for this op. */
struct probe_spec *probe_spec_synth(const struct ir_op_schema *s, uint64_t seed);
/* Could spec's node be a node of schema s (its attributes exist there,
 * its input and output counts fit, its dtypes are allowed)? */
int probe_spec_fits(const struct probe_spec *sp, const struct ir_op_schema *s);

/* ---- schemas (schema.c) --------------------------------------------- */

/* The type constraint of an op's data tensors, as the scanner reads it:
 * input 0's when it is a constraint, else output 0's; NULL none. */
const char *probe_data_constraint(const struct ir_op_schema *s);
/* The formal type of input (or output) i, variadic tails included. */
const char *probe_formal_type(const struct ir_op_schema *s, int input, size_t i);
/* The dtypes a formal type ("T" or "tensor(int64)") admits. */
rules_dtypes probe_type_dtypes(const struct ir_op_schema *s, const char *type);
/* The next version of the op after s, or NULL: s applies to opsets
 * [s->since_version, next - 1]. */
const struct ir_op_schema *probe_schema_next(const struct ir_op_schema *s);
/* The ir_version that goes with an opset. */
int64_t probe_ir_version(int opset);
/* Ops that give different outputs every run (Random*, Multinomial,
 * Bernoulli): only dtype and shape are compared. */
int probe_op_random(const char *op);

/* ---- attribute values (avals.c) ------------------------------------- */

void probe_aval_release(struct probe_aval *v);
int probe_aval_copy(struct probe_aval *dst, const struct probe_aval *src);
int probe_aval_equal(const struct probe_aval *a, const struct probe_aval *b);
/* The value a node has for an attribute (its own, else the schema's
 * default; type UNDEFINED when neither). */
int probe_aval_of(const struct ir_node *n, const struct ir_op_schema *s,
		  const char *name, struct probe_aval *out);
/* JSON text ("2", "\"NOTSET\"", "[1,1]", "null") and a file-name-safe
 * form ("2", "NOTSET", "1_1", "absent"). */
void probe_aval_json(const struct probe_aval *v, char *buf, size_t size);
void probe_aval_slug(const struct probe_aval *v, char *buf, size_t size);
/* Set (or remove, for UNDEFINED) the attribute on n. */
int probe_aval_set(struct ir_node *n, const char *name, const struct probe_aval *v);
/* The values worth trying for attribute a of s on spec's node, besides
 * the one it has (see avals.c); *out malloc'd. */
int probe_aval_candidates(const struct ir_op_schema *s, const struct ir_op_attr *a,
			  const struct probe_spec *sp, struct probe_aval **out,
			  size_t *n);

/* ---- building a case (build.c) -------------------------------------- */

struct probe_built {
	struct ir_model *m;
	size_t n_in;                 /* graph inputs */
	struct rt_value **in;        /* their values (references) */
	char **in_names;
	size_t n_out;
	struct rt_value **out;       /* the interpreter's outputs */
	char **out_names;
	int shapes_only;             /* outputs not determined by the inputs
				      * (random ops, training Dropout, an
				      * unsorted TopK's order) */
};

void probe_built_release(struct probe_built *b);
/* The model of case c from its seed spec: the variant applied, the
 * interpreter run on it (its outputs are the reference), output types
 * declared from them.  IR_EINVAL with why when the variant makes no valid
 * model. */
int probe_build(const struct probe_case *c, const struct probe_spec *seed,
		uint64_t rseed, struct probe_built *b, struct ir_diag *d);
/* Write the case folder: model.onnx, test_data_set_0/ (inputs, names,
 * reference outputs output_K.pb) and case.json. */
int probe_case_write(const char *dir, const struct probe_case *c,
		     const struct probe_built *b, struct ir_diag *d);
/* Read case.json's generated facts back into c: 0, or -1. */
int probe_case_read(const char *dir, struct probe_case *c);
/* Remove path and everything below it (a case's or a run's folder). */
void probe_rm_tree(const char *path);

/* ---- plan (plan.c) --------------------------------------------------- */

struct probe_plan {
	size_t n_seeds;
	struct probe_spec **seeds;
	size_t n_cases, cap_cases;
	struct probe_case *cases;
	size_t n_ops;
	size_t n_seeds_backend;
	size_t n_no_seed;
	char **no_seed;              /* "Op-VERSION" without any seed */
};

void probe_plan_release(struct probe_plan *p);
/* Every case of the options' ops, versions and dtypes (no files yet). */
int probe_plan_make(const struct probe_opts *o, struct probe_plan *p, struct ir_diag *d);
void probe_case_release(struct probe_case *c);

/* ---- derive helpers -------------------------------------------------- */

/* A short description of what case c varies ("dtype float16", "attr
 * auto_pad=SAME_UPPER", "input 1 graph", "rank 5", "backend test_x"). */
void probe_case_what(const struct probe_case *c, char *buf, size_t size);

#endif
