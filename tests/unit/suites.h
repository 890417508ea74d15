/* suites.h: registration functions of the unit suites, one per file, and
 * the helper that adds a table of tests as one CUnit suite. */
#ifndef OPMIG_TEST_SUITES_H
#define OPMIG_TEST_SUITES_H

#include <CUnit/CUnit.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
};

int unit_add_suite(const char *name, const struct unit_test *t);
int suite_ir_register(void);
int suite_io_register(void);
int suite_cli_register(void);
int suite_rules_register(void);
int suite_registry_register(void);
int suite_infer_register(void);
int suite_conformance_register(void);
int suite_runtime_register(void);
int suite_rewrite_register(void);
int suite_kelem_register(void);
int suite_kreduce_register(void);
int suite_knn_register(void);
int suite_kown_register(void);
int suite_kcl_register(void);
int suite_kdnnl_register(void);
int suite_krnn_register(void);
int suite_pgemm_register(void);
int suite_knorm_register(void);
int suite_kshape_register(void);
int suite_kresize_register(void);
int suite_kctrl_register(void);
int suite_kmisc_register(void);
int suite_rwdtype_register(void);
int suite_scan_register(void);
int suite_decomp_register(void);
int suite_rwgraph_register(void);
int suite_decomp2_register(void);
int suite_fuse_register(void);
int suite_batch_register(void);
int suite_fault_register(void);
int suite_specfn_register(void);
int suite_fold_register(void);
int suite_chain_register(void);
int suite_catbuf_register(void);
int suite_rnn_register(void);
int suite_plan_register(void);
int suite_decomp3_register(void);
int suite_decomp4_register(void);
int suite_verify_register(void);
int suite_opset_register(void);
int suite_decomp5_register(void);
int suite_decomp6_register(void);
int suite_probe_register(void);
int suite_quant_register(void);
int suite_kquant_register(void);

/* Path of a file in the source tree (tests run from the top folder). */
#define TESTDATA(p) "testdata/" p

#endif
