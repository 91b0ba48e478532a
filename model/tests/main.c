/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Runs every test as one TAP test point; exits non-zero if any failed. */
#include <stdlib.h>

#include "tests.h"

extern const struct test rdma_cc_tests[];	/* test_cc.c */

static const struct test *const suites[] = {
	device_tests, cmd_tests, eq_tests, eth_tests, eth_offload_tests, eth_lro_tests, eth_rss_tests,
	rdma_cmd_tests, rdma_data_tests, rdma_wire_tests, rdma_rel_tests, rdma_err_tests,
	rdma_hostile_tests,
	rdma_qp_tests, wire_tests, rdma_loss_tests, rdma_sr_tests, rdma_rto_tests, rdma_interop_tests,
	rdma_ud_tests,
	rdma_mcast_tests, rdma_ctr_tests,
	rdma_uc_tests, rdma_atomic_tests, rdma_frwr_tests,
	rdma_srq_tests, rdma_dbrec_tests, rdma_mem_tests, rdma_cc_tests, mac_tests, reentry_tests,
};

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	unsigned int i, n = 0, failed = 0;
	const struct test *t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		for (t = suites[i]; t->name; t++)
			if (!only || strstr(t->name, only))
				n++;
	printf("1..%u\n", n);
	n = 0;
	for (i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		for (t = suites[i]; t->name; t++) {
			if (only && !strstr(t->name, only))
				continue;
			t_failures = 0;
			t->fn();
			n++;
			if (t_failures)
				failed++;
			printf("%sok %u - %s\n", t_failures ? "not " : "", n, t->name);
		}
	}
	printf("# %u passed, %u failed\n", n - failed, failed);
	return failed ? 1 : 0;
}
