/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef TERN_TESTS_H
#define TERN_TESTS_H

#include "harness.h"

/*
 * Network byte order, and the Internet checksum word by word: the tests' own code, which the
 * model's (frame.h: eight bytes at a time) is checked against.
 */
static inline uint16_t rd16be(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t rd32be(const uint8_t *p)
{
	return (uint32_t)rd16be(p) << 16 | rd16be(p + 2);
}

static inline void wr16be(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void wr32be(uint8_t *p, uint32_t v)
{
	wr16be(p, (uint16_t)(v >> 16));
	wr16be(p + 2, (uint16_t)v);
}

/* Adds @n bytes at @p to the one's complement sum @s (an odd last byte as a high half). */
static inline uint32_t ref_sum(uint32_t s, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2) {
		s += (uint32_t)p[i] << 8 | p[i + 1];
		if (s >> 24)
			s = (s & 0xffff) + (s >> 16);
	}
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static inline uint16_t ref_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

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
extern const struct test rdma_uc_tests[];
extern const struct test rdma_interop_tests[];
extern const struct test rdma_ud_tests[];
extern const struct test rdma_atomic_tests[];
extern const struct test rdma_frwr_tests[];
extern const struct test rdma_srq_tests[];
extern const struct test rdma_dbrec_tests[];
extern const struct test rdma_mem_tests[];
extern const struct test mac_tests[];

#endif
