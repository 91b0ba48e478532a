/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef TERN_TESTS_H
#define TERN_TESTS_H

#include "harness.h"
#include "roce.h"

struct test {
	const char *name;
	void (*fn)(void);
};

extern const struct test device_tests[];
extern const struct test reentry_tests[];
extern const struct test cmd_tests[];
extern const struct test eq_tests[];
extern const struct test eth_tests[];
extern const struct test eth_offload_tests[];
extern const struct test eth_lro_tests[];
extern const struct test eth_rss_tests[];
extern const struct test rdma_cmd_tests[];
extern const struct test rdma_data_tests[];
extern const struct test rdma_wire_tests[];
extern const struct test rdma_rel_tests[];
extern const struct test rdma_err_tests[];
extern const struct test rdma_hostile_tests[];
extern const struct test rdma_qp_tests[];
extern const struct test wire_tests[];
extern const struct test rdma_loss_tests[];
extern const struct test rdma_sr_tests[];
extern const struct test rdma_rto_tests[];
extern const struct test rdma_uc_tests[];
extern const struct test rdma_interop_tests[];
extern const struct test rdma_ud_tests[];
extern const struct test rdma_mcast_tests[];
extern const struct test rdma_ctr_tests[];
extern const struct test rdma_atomic_tests[];
extern const struct test rdma_frwr_tests[];
extern const struct test rdma_srq_tests[];
extern const struct test rdma_dbrec_tests[];
extern const struct test rdma_mem_tests[];
extern const struct test mac_tests[];

#endif
