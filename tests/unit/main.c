/* main.c: the CUnit runner: registers every module's suites, runs them,
 * prints the summary and exits non-zero on any failure. */
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "tests/unit/suites.h"

int main(void)
{
	int failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 4;
	if (suite_ir_register() != 0 || suite_io_register() != 0 ||
	    suite_cli_register() != 0 || suite_registry_register() != 0 ||
	    suite_rules_register() != 0 ||
	    suite_infer_register() != 0 ||
	    suite_conformance_register() != 0 ||
	    suite_runtime_register() != 0 ||
	    suite_rewrite_register() != 0 ||
	    suite_kelem_register() != 0 ||
	    suite_kreduce_register() != 0 ||
	    suite_knn_register() != 0 ||
	    suite_kown_register() != 0 ||
	    suite_pgemm_register() != 0 ||
	    suite_knorm_register() != 0 ||
	    suite_kshape_register() != 0 ||
	    suite_kresize_register() != 0 ||
	    suite_kctrl_register() != 0 ||
	    suite_kmisc_register() != 0 ||
	    suite_rwdtype_register() != 0 ||
	    suite_scan_register() != 0 ||
	    suite_decomp_register() != 0 ||
	    suite_rwgraph_register() != 0 ||
	    suite_decomp2_register() != 0 ||
	    suite_decomp3_register() != 0 ||
	    suite_decomp4_register() != 0 ||
	    suite_decomp5_register() != 0 || suite_decomp6_register() != 0 ||
	    suite_fuse_register() != 0 ||
	    suite_batch_register() != 0 ||
	    suite_fault_register() != 0 ||
	    suite_specfn_register() != 0 ||
	    suite_fold_register() != 0 || suite_chain_register() != 0 ||
	    suite_catbuf_register() != 0 || suite_kcl_register() != 0 ||
	    suite_kdnnl_register() != 0 ||
	    suite_krnn_register() != 0 ||
	    suite_rnn_register() != 0 || suite_plan_register() != 0 ||
	    suite_verify_register() != 0 || suite_opset_register() != 0 ||
	    suite_probe_register() != 0 || suite_quant_register() != 0 ||
	    suite_kquant_register() != 0) {
		fprintf(stderr, "unit-tests: cannot register suites: %s\n",
			CU_get_error_msg());
		CU_cleanup_registry();
		return 4;
	}
	CU_basic_set_mode(CU_BRM_NORMAL);
	if (getenv("UNIT_SUITE"))    /* one suite, by name */
		CU_basic_run_suite(CU_get_suite(getenv("UNIT_SUITE")));
	else
		CU_basic_run_tests();
	failed = (int)(CU_get_number_of_failures() +
		       CU_get_number_of_tests_failed());
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
