/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RDMA tests' checks, over the host driver's RDMA part (model/hostdrv/rdma_drv.h), its
 * connected pair on a wire (rdma_pair.h) and the independent RoCEv2 decoder (roce.h).
 */
#ifndef TERN_TEST_RDMA_H
#define TERN_TEST_RDMA_H

#include "rdma_drv.h"
#include "rdma_pair.h"
#include "tests.h"

/* Stop the test but run its cleanup (at label "out"): objects are freed, LSan stays quiet. */
#define RQ(cond)                                                                             \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			t_failures++;                                                        \
			printf("#   %s:%d: required: %s\n", __FILE__, __LINE__, #cond);         \
			goto out;                                                            \
		}                                                                            \
	} while (0)

/* Check a WC against expected values; prints the location on mismatch. */
#define CHECK_WC(w, op, st, id)                                                             \
	do {                                                                                \
		CHECK_EQ((w)->opcode, (op));                                                \
		CHECK_EQ((w)->status, (st));                                                \
		CHECK_EQ((w)->wr_id, (id));                                                 \
	} while (0)

#endif
