// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suites for tern_core's logic that needs no device: the hardware interface's layout,
 * command encoding and completion decoding, ring and doorbell arithmetic, receive buffer
 * sizing, MTU and ring size limits, ethtool statistics, firmware version strings and the
 * values behind the debugfs files.
 *
 * Built as tern_core_test.ko when the kernel has KUnit (see Kbuild); it uses tern_core.ko's
 * internals, exported in the TERN_KUNIT namespace only in such kernels. Load it and read
 * /sys/kernel/debug/kunit/<suite>/results (tests/kunit/kunit.t does).
 */

#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <net/dcbnl.h>

#include <linux/tern/tern_rdma.h>

#include "en.h"

MODULE_IMPORT_NS(TERN_KUNIT);

/* ---------------------------------------------------------------------------------------
 * Hardware interface layout: offsets and byte order of what the device reads and writes.
 */

struct tern_test_field {
	const char *name;
	size_t offset;
	size_t want;
};

#define TERN_FIELD(type, field, off) { #type "." #field, offsetof(struct type, field), off }

static const struct tern_test_field tern_test_fields[] = {
	TERN_FIELD(tern_mem_desc, addr, 0),
	TERN_FIELD(tern_mem_desc, npages, 8),
	TERN_FIELD(tern_mem_desc, page_shift, 12),
	TERN_FIELD(tern_mem_desc, mode, 13),
	TERN_FIELD(tern_mem_desc, rsvd, 14),
	TERN_FIELD(tern_cmd_sqe, opcode, 0),
	TERN_FIELD(tern_cmd_sqe, token, 2),
	TERN_FIELD(tern_cmd_sqe, in_len, 4),
	TERN_FIELD(tern_cmd_sqe, out_len, 6),
	TERN_FIELD(tern_cmd_sqe, in_addr, 8),
	TERN_FIELD(tern_cmd_sqe, out_addr, 16),
	TERN_FIELD(tern_cmd_sqe, inline_in, 24),
	TERN_FIELD(tern_cmd_cqe, token, 0),
	TERN_FIELD(tern_cmd_cqe, status, 2),
	TERN_FIELD(tern_cmd_cqe, flags, 3),
	TERN_FIELD(tern_cmd_cqe, syndrome, 4),
	TERN_FIELD(tern_cmd_cqe, result, 8),
	TERN_FIELD(tern_cmd_cqe, out_len, 12),
	TERN_FIELD(tern_cmd_cqe, sq_ci, 14),
	TERN_FIELD(tern_eqe, type, 0),
	TERN_FIELD(tern_eqe, subtype, 1),
	TERN_FIELD(tern_eqe, rsvd, 2),
	TERN_FIELD(tern_eqe, flags, 3),
	TERN_FIELD(tern_eqe, data, 4),
	TERN_FIELD(tern_eth_txd, addr, 0),
	TERN_FIELD(tern_eth_txd, len, 8),
	TERN_FIELD(tern_eth_txd, flags, 10),
	TERN_FIELD(tern_eth_txd, rsvd, 12),
	TERN_FIELD(tern_eth_txd, status, 14),
	TERN_FIELD(tern_eth_txd_ctx, csum_start, 0),
	TERN_FIELD(tern_eth_txd_ctx, csum_offset, 2),
	TERN_FIELD(tern_eth_txd_ctx, mss, 4),
	TERN_FIELD(tern_eth_txd_ctx, ctx_flags, 6),
	TERN_FIELD(tern_eth_txd_ctx, flags, 10),
	TERN_FIELD(tern_eth_txd_ctx, status, 14),
	TERN_FIELD(tern_eth_rxd, addr, 0),
	TERN_FIELD(tern_eth_rxd, buf_len, 8),
	TERN_FIELD(tern_eth_rxd, pkt_len, 10),
	TERN_FIELD(tern_eth_rxd, lro_mss, 12),
	TERN_FIELD(tern_eth_rxd, status, 14),
	TERN_FIELD(tern_cmd_nop_in, flags, 0),
	TERN_FIELD(tern_cmd_nop_in, delay_us, 4),
	TERN_FIELD(tern_cmd_nop_in, fail_status, 8),
	TERN_FIELD(tern_cmd_nop_in, rsvd, 9),
	TERN_FIELD(tern_cmd_nop_in, fail_syndrome, 12),
	TERN_FIELD(tern_cmd_query_device_out, fw_version, 0),
	TERN_FIELD(tern_cmd_query_device_out, caps, 4),
	TERN_FIELD(tern_cmd_query_device_out, serial, 8),
	TERN_FIELD(tern_cmd_query_device_out, board_id, 40),
	TERN_FIELD(tern_cmd_query_device_out, mac, 56),
	TERN_FIELD(tern_cmd_query_device_out, max_mtu, 62),
	TERN_FIELD(tern_cmd_query_device_out, min_mtu, 64),
	TERN_FIELD(tern_cmd_query_device_out, max_eqs, 66),
	TERN_FIELD(tern_cmd_query_device_out, max_eth_txqs, 67),
	TERN_FIELD(tern_cmd_query_device_out, max_eth_rxqs, 68),
	TERN_FIELD(tern_cmd_query_device_out, num_msix, 69),
	TERN_FIELD(tern_cmd_query_device_out, max_eq_log, 70),
	TERN_FIELD(tern_cmd_query_device_out, max_eth_log, 71),
	TERN_FIELD(tern_cmd_query_device_out, num_db_pages, 72),
	TERN_FIELD(tern_cmd_query_device_out, link_speed_mbps, 76),
	TERN_FIELD(tern_cmd_query_device_out, max_eth_moder_period, 80),
	TERN_FIELD(tern_cmd_query_device_out, max_eth_moder_frames, 82),
	TERN_FIELD(tern_cmd_query_device_out, rsvd, 84),
	TERN_FIELD(tern_cmd_set_port_in, flags, 0),
	TERN_FIELD(tern_cmd_set_port_in, mtu, 4),
	TERN_FIELD(tern_cmd_set_port_in, mac, 6),
	TERN_FIELD(tern_cmd_query_port_out, flags, 0),
	TERN_FIELD(tern_cmd_query_port_out, link_up, 4),
	TERN_FIELD(tern_cmd_query_port_out, link_speed_mbps, 8),
	TERN_FIELD(tern_cmd_query_port_out, mtu, 12),
	TERN_FIELD(tern_cmd_query_port_out, mac, 14),
	TERN_FIELD(tern_cmd_query_port_out, rsvd, 20),
	TERN_FIELD(tern_cmd_create_eq_in, mem, 0),
	TERN_FIELD(tern_cmd_create_eq_in, log_depth, 16),
	TERN_FIELD(tern_cmd_create_eq_in, msix_vector, 17),
	TERN_FIELD(tern_cmd_create_eq_in, flags, 18),
	TERN_FIELD(tern_cmd_create_eq_in, rsvd, 20),
	TERN_FIELD(tern_cmd_destroy_eq_in, eqn, 0),
	TERN_FIELD(tern_cmd_create_eth_queue_in, mem, 0),
	TERN_FIELD(tern_cmd_create_eth_queue_in, log_depth, 16),
	TERN_FIELD(tern_cmd_create_eth_queue_in, rsvd0, 17),
	TERN_FIELD(tern_cmd_create_eth_queue_in, eqn, 18),
	TERN_FIELD(tern_cmd_create_eth_queue_in, moder_period_us, 20),
	TERN_FIELD(tern_cmd_create_eth_queue_in, moder_frames, 22),
	TERN_FIELD(tern_cmd_destroy_eth_queue_in, qid, 0),
	TERN_FIELD(tern_cmd_modify_eth_queue_in, qid, 0),
	TERN_FIELD(tern_cmd_modify_eth_queue_in, moder_period_us, 4),
	TERN_FIELD(tern_cmd_modify_eth_queue_in, moder_frames, 6),
	TERN_FIELD(tern_cmd_modify_eth_queue_in, rsvd, 8),
};

static void tern_hw_field_offsets(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tern_test_fields); i++) {
		const struct tern_test_field *f = &tern_test_fields[i];

		KUNIT_EXPECT_EQ_MSG(test, f->offset, f->want, "offset of %s", f->name);
	}
}

/* The ethtool "hw_" statistics, in struct order: every field, 8 bytes each. */
static const struct {
	const char *name;
	size_t offset;
} tern_test_hw_stats[] = {
#define TERN_TEST_HW_STAT(f) { #f, offsetof(struct tern_cmd_eth_stats_out, f) }
	TERN_TEST_HW_STAT(tx_frames),
	TERN_TEST_HW_STAT(tx_bytes),
	TERN_TEST_HW_STAT(rx_frames),
	TERN_TEST_HW_STAT(rx_bytes),
	TERN_TEST_HW_STAT(rx_multicast),
	TERN_TEST_HW_STAT(rx_broadcast),
	TERN_TEST_HW_STAT(rx_filtered),
	TERN_TEST_HW_STAT(rx_oversize),
	TERN_TEST_HW_STAT(rx_runt),
	TERN_TEST_HW_STAT(rx_no_queue),
	TERN_TEST_HW_STAT(rx_dma_errors),
	TERN_TEST_HW_STAT(tx_bad_len),
	TERN_TEST_HW_STAT(tx_dma_errors),
	TERN_TEST_HW_STAT(eq_overflows),
	TERN_TEST_HW_STAT(rx_csum_bad),
	TERN_TEST_HW_STAT(tx_tso_segments),
	TERN_TEST_HW_STAT(rx_lro_frames),
	TERN_TEST_HW_STAT(rx_lro_segments),
	TERN_TEST_HW_STAT(self_dma_dropped),
	TERN_TEST_HW_STAT(db_ignored),
	TERN_TEST_HW_STAT(tx_timestamps),
	TERN_TEST_HW_STAT(rx_timestamps),
#undef TERN_TEST_HW_STAT
};

static void tern_hw_eth_stats_layout(struct kunit *test)
{
	unsigned int i;

	/* The list above is complete: counters are contiguous and fill the structure. */
	for (i = 0; i < ARRAY_SIZE(tern_test_hw_stats); i++)
		KUNIT_EXPECT_EQ_MSG(test, tern_test_hw_stats[i].offset, (size_t)i * 8,
				    "offset of %s", tern_test_hw_stats[i].name);
	KUNIT_EXPECT_EQ(test, sizeof(struct tern_cmd_eth_stats_out),
			ARRAY_SIZE(tern_test_hw_stats) * 8);
}

static void tern_hw_doorbells_and_limits(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, TERN_DB_CMDQ, 0x000);
	KUNIT_EXPECT_EQ(test, TERN_DB_EQ(0), 0x100);
	KUNIT_EXPECT_EQ(test, TERN_DB_EQ(3), 0x10c);
	KUNIT_EXPECT_EQ(test, TERN_DB_ETH_TXQ(1), 0x204);
	KUNIT_EXPECT_EQ(test, TERN_DB_ETH_RXQ(2), 0x408);
	/* A frame of the largest MTU, VLAN tag included, fits the device's largest frame. */
	KUNIT_EXPECT_EQ(test, TERN_EN_RX_FRAME_LEN(TERN_ETH_MAX_MTU), TERN_ETH_MAX_FRAME);
	/* A slot index must fit the token's low byte. */
	KUNIT_EXPECT_LE(test, 1u << TERN_CMDQ_MAX_LOG, 256u);
	KUNIT_EXPECT_EQ(test, TERN_CQE_PHASE, TERN_EQE_PHASE);
}

/* Descriptors are little-endian whatever the CPU. */
static void tern_hw_desc_byte_order(struct kunit *test)
{
	static const u8 want[16] = {
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,	/* addr */
		0xee, 0x05,					/* buf_len 0x5ee */
		0x34, 0x12,					/* pkt_len */
		0x00, 0x00,					/* rsvd */
		0x03, 0x00,					/* status DONE | ERR */
	};
	struct tern_eth_rxd rxd = {
		.addr = cpu_to_le64(0x1122334455667788ull),
		.buf_len = cpu_to_le16(0x5ee),
		.pkt_len = cpu_to_le16(0x1234),
		.status = cpu_to_le16(TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR),
	};

	KUNIT_EXPECT_EQ(test, memcmp(&rxd, want, sizeof(want)), 0);
	/* the RSS hash's write-back: the first 4 bytes, little-endian */
	KUNIT_EXPECT_EQ(test, offsetof(struct tern_eth_rxd, rss_hash), (size_t)0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rxd.rss_hash), 0x55667788u);
}

static struct kunit_case tern_hw_cases[] = {
	KUNIT_CASE(tern_hw_field_offsets),
	KUNIT_CASE(tern_hw_eth_stats_layout),
	KUNIT_CASE(tern_hw_doorbells_and_limits),
	KUNIT_CASE(tern_hw_desc_byte_order),
	{}
};

static struct kunit_suite tern_hw_suite = {
	.name = "tern_hw_layout",
	.test_cases = tern_hw_cases,
};

/* ---------------------------------------------------------------------------------------
 * Command queue: entry encoding, tokens, statuses, completion decoding.
 */

static void tern_cmd_token_roundtrip(struct kunit *test)
{
	u32 idx, gen;

	for (idx = 0; idx < (1u << TERN_CMDQ_MAX_LOG); idx++) {
		for (gen = 0; gen < 256; gen++) {
			u16 token = tern_cmd_token(idx, gen);

			KUNIT_ASSERT_EQ(test, tern_cmd_token_slot(token), idx);
			KUNIT_ASSERT_EQ(test, token >> 8, gen);
		}
	}
	/* A reused slot gets a different token. */
	KUNIT_EXPECT_NE(test, tern_cmd_token(5, 1), tern_cmd_token(5, 2));
}

static void tern_cmd_sqe_inline(struct kunit *test)
{
	struct tern_cmd_sqe sqe;
	u8 in[TERN_CMD_INLINE_MAX];
	const u8 *raw = (const u8 *)&sqe;
	unsigned int i;

	for (i = 0; i < sizeof(in); i++)
		in[i] = i + 1;
	memset(&sqe, 0xa5, sizeof(sqe));
	tern_cmd_fill_sqe(&sqe, 0x0102, 0x0304, in, sizeof(in), 16, 0x1000, 0xaabbccdd00112233ull);

	/* opcode, token, in_len, out_len: little-endian u16s. */
	KUNIT_EXPECT_EQ(test, raw[0], 0x02);
	KUNIT_EXPECT_EQ(test, raw[1], 0x01);
	KUNIT_EXPECT_EQ(test, raw[2], 0x04);
	KUNIT_EXPECT_EQ(test, raw[3], 0x03);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(sqe.in_len), TERN_CMD_INLINE_MAX);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(sqe.out_len), 16);
	/* At most TERN_CMD_INLINE_MAX bytes travel inline: no input address. */
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe.in_addr), 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe.out_addr), 0xaabbccdd00112233ull);
	KUNIT_EXPECT_EQ(test, raw[16], 0x33);
	KUNIT_EXPECT_EQ(test, memcmp(sqe.inline_in, in, sizeof(in)), 0);
}

static void tern_cmd_sqe_mailbox(struct kunit *test)
{
	static const u8 zero[TERN_CMD_INLINE_MAX];
	struct tern_cmd_sqe sqe;

	memset(&sqe, 0xa5, sizeof(sqe));
	/* The input is in the mailbox already: tern_cmd_fill_sqe() must not read it. */
	tern_cmd_fill_sqe(&sqe, TERN_CMD_NOP, 7, NULL, TERN_CMD_INLINE_MAX + 1, 0,
			  0x123456789000ull, 0x5000);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(sqe.in_len), TERN_CMD_INLINE_MAX + 1);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe.in_addr), 0x123456789000ull);
	/* No output buffer: out_addr must be 0 whatever the mailbox address. */
	KUNIT_EXPECT_EQ(test, le16_to_cpu(sqe.out_len), 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe.out_addr), 0);
	KUNIT_EXPECT_EQ(test, memcmp(sqe.inline_in, zero, sizeof(zero)), 0);

	memset(&sqe, 0xa5, sizeof(sqe));
	tern_cmd_fill_sqe(&sqe, TERN_CMD_QUERY_DEVICE, 9, NULL, 0, TERN_CMD_MAX_OUT, 0x1000,
			  0x2000);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(sqe.in_len), 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe.in_addr), 0);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(sqe.out_len), TERN_CMD_MAX_OUT);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe.out_addr), 0x2000);
	KUNIT_EXPECT_EQ(test, memcmp(sqe.inline_in, zero, sizeof(zero)), 0);
}

static const struct {
	u8 status;
	int err;
	const char *name;
} tern_test_statuses[] = {
	{ TERN_CMD_OK, 0, "OK" },
	{ TERN_CMD_BAD_OPCODE, -EOPNOTSUPP, "BAD_OPCODE" },
	{ TERN_CMD_BAD_LEN, -EINVAL, "BAD_LEN" },
	{ TERN_CMD_BAD_PARAM, -EINVAL, "BAD_PARAM" },
	{ TERN_CMD_NO_RESOURCES, -ENOSPC, "NO_RESOURCES" },
	{ TERN_CMD_BAD_RESOURCE, -ENOENT, "BAD_RESOURCE" },
	{ TERN_CMD_BAD_STATE, -EBUSY, "BAD_STATE" },
	{ TERN_CMD_DMA_ERROR, -EFAULT, "DMA_ERROR" },
	{ TERN_CMD_INTERNAL, -EIO, "INTERNAL" },
	{ 0x09, -EIO, "UNKNOWN" },
	{ 0xff, -EIO, "UNKNOWN" },
};

static void tern_cmd_status_mapping(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tern_test_statuses); i++) {
		u8 status = tern_test_statuses[i].status;

		KUNIT_EXPECT_EQ_MSG(test, tern_cmd_status_to_errno(status),
				    tern_test_statuses[i].err, "status %#x", status);
		KUNIT_EXPECT_STREQ(test, tern_cmd_status_name(status),
				   tern_test_statuses[i].name);
	}
}

static void tern_cmd_opcode_names(struct kunit *test)
{
	static const struct {
		u16 opcode;
		const char *name;
	} ops[] = {
		{ TERN_CMD_NOP, "NOP" },
		{ TERN_CMD_QUERY_DEVICE, "QUERY_DEVICE" },
		{ TERN_CMD_SET_PORT, "SET_PORT" },
		{ TERN_CMD_QUERY_PORT, "QUERY_PORT" },
		{ TERN_CMD_QUERY_ETH_STATS, "QUERY_ETH_STATS" },
		{ TERN_CMD_CREATE_EQ, "CREATE_EQ" },
		{ TERN_CMD_DESTROY_EQ, "DESTROY_EQ" },
		{ TERN_CMD_CREATE_ETH_TXQ, "CREATE_ETH_TXQ" },
		{ TERN_CMD_DESTROY_ETH_TXQ, "DESTROY_ETH_TXQ" },
		{ TERN_CMD_CREATE_ETH_RXQ, "CREATE_ETH_RXQ" },
		{ TERN_CMD_DESTROY_ETH_RXQ, "DESTROY_ETH_RXQ" },
		{ TERN_CMD_MODIFY_ETH_TXQ, "MODIFY_ETH_TXQ" },
		{ TERN_CMD_MODIFY_ETH_RXQ, "MODIFY_ETH_RXQ" },
		{ TERN_CMD_QUERY_RDMA, "QUERY_RDMA" },
		{ TERN_CMD_CREATE_MR, "CREATE_MR" },
		{ TERN_CMD_MODIFY_QP, "MODIFY_QP" },
		{ TERN_CMD_QUERY_RDMA_STATS, "QUERY_RDMA_STATS" },
		{ TERN_CMD_CREATE_SRQ, "CREATE_SRQ" },
		{ TERN_CMD_DESTROY_SRQ, "DESTROY_SRQ" },
		{ TERN_CMD_RESIZE_CQ, "RESIZE_CQ" },
		{ TERN_CMD_MODIFY_CQ, "MODIFY_CQ" },
		{ TERN_CMD_REREG_MR, "REREG_MR" },
		{ TERN_CMD_ATTACH_MCAST, "ATTACH_MCAST" },
		{ TERN_CMD_DETACH_MCAST, "DETACH_MCAST" },
		{ TERN_CMD_SET_DCB, "SET_DCB" },
		{ TERN_CMD_QUERY_PFC_STATS, "QUERY_PFC_STATS" },
		{ TERN_CMD_SET_CC_PARAMS, "SET_CC_PARAMS" },
		{ TERN_CMD_QUERY_CC_PARAMS, "QUERY_CC_PARAMS" },
		{ 0x0205, "UNKNOWN" },
		{ 0x0000, "UNKNOWN" },
		{ 0x0115, "UNKNOWN" },
		{ 0xffff, "UNKNOWN" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		KUNIT_EXPECT_STREQ(test, tern_cmd_opcode_name(ops[i].opcode), ops[i].name);
}

/* A command queue without a device: a completion ring and slots in ordinary memory. */
struct tern_test_cmdq {
	struct tern_dev *tdev;
	struct tern_cmdq *cmdq;
	u32 dev_pi;	/* the "device": next completion ring entry it writes */
	u8 dev_phase;	/* and the phase bit of its current pass */
};

static void tern_test_cmdq_init(struct kunit *test, struct tern_test_cmdq *q, u8 log_depth)
{
	struct pci_dev *pdev;
	struct tern_cmdq *cmdq;
	u32 i;

	pdev = kunit_kzalloc(test, sizeof(*pdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pdev);
	pdev->dev.init_name = "tern-kunit";
	q->tdev = kunit_kzalloc(test, sizeof(*q->tdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q->tdev);
	q->tdev->pdev = pdev;
	cmdq = &q->tdev->cmdq;
	q->cmdq = cmdq;
	spin_lock_init(&cmdq->lock);
	cmdq->timeout_ms = TERN_CMD_TIMEOUT_DEFAULT_MS;
	cmdq->log_depth = log_depth;
	cmdq->depth = 1u << log_depth;
	cmdq->cq = kunit_kcalloc(test, cmdq->depth, sizeof(*cmdq->cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cmdq->cq);
	cmdq->slots = kunit_kcalloc(test, cmdq->depth, sizeof(*cmdq->slots), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cmdq->slots);
	sema_init(&cmdq->slots_sem, cmdq->depth);
	/* Every slot is taken, as by callers: tests count the slots completions give back. */
	for (i = 0; i < cmdq->depth; i++) {
		init_completion(&cmdq->slots[i].done);
		KUNIT_ASSERT_EQ(test, down_trylock(&cmdq->slots_sem), 0);
	}
	q->dev_pi = 0;
	q->dev_phase = TERN_CQE_PHASE;
}

/* A command occupies slot @idx with generation @gen, as tern_cmd_get_slot() leaves it. */
static struct tern_cmd_slot *tern_test_post(struct tern_test_cmdq *q, u32 idx, u8 gen)
{
	struct tern_cmd_slot *slot = &q->cmdq->slots[idx];

	slot->busy = true;
	slot->completed = false;
	slot->abandoned = false;
	slot->token = tern_cmd_token(idx, gen);
	reinit_completion(&slot->done);
	return slot;
}

/* The device writes its next completion; the phase bit flips after each pass. */
static void tern_test_complete(struct tern_test_cmdq *q, u16 token, u8 status, u32 syndrome,
			       u32 result, u16 out_len)
{
	struct tern_cmd_cqe *cqe = &q->cmdq->cq[q->dev_pi & (q->cmdq->depth - 1)];

	cqe->token = cpu_to_le16(token);
	cqe->status = status;
	cqe->syndrome = cpu_to_le32(syndrome);
	cqe->result = cpu_to_le32(result);
	cqe->out_len = cpu_to_le16(out_len);
	cqe->sq_ci = 0;
	cqe->flags = q->dev_phase;
	if (!(++q->dev_pi & (q->cmdq->depth - 1)))
		q->dev_phase ^= TERN_CQE_PHASE;
}

static void tern_cmd_completion_decode(struct kunit *test)
{
	struct tern_test_cmdq q;
	struct tern_cmd_slot *slot;

	tern_test_cmdq_init(test, &q, 2);
	slot = tern_test_post(&q, 2, 7);
	tern_test_complete(&q, slot->token, TERN_CMD_BAD_PARAM, 0x11223344, 0xdeadbeef, 0x1234);
	tern_cmdq_handle_completions(q.tdev);

	KUNIT_EXPECT_TRUE(test, slot->completed);
	KUNIT_EXPECT_TRUE(test, try_wait_for_completion(&slot->done));
	KUNIT_EXPECT_EQ(test, slot->status, TERN_CMD_BAD_PARAM);
	KUNIT_EXPECT_EQ(test, slot->syndrome, 0x11223344);
	KUNIT_EXPECT_EQ(test, slot->result, 0xdeadbeef);
	KUNIT_EXPECT_EQ(test, slot->out_len, 0x1234);
	KUNIT_EXPECT_EQ(test, q.cmdq->cq_ci, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&q.cmdq->stale), 0);
	/* Nothing new: a second pass consumes nothing. */
	tern_cmdq_handle_completions(q.tdev);
	KUNIT_EXPECT_EQ(test, q.cmdq->cq_ci, 1);
}

/* Completions are found by phase bit, pass after pass, and old entries are never re-read. */
static void tern_cmd_completion_phase_wraps(struct kunit *test)
{
	const u32 depth = 4, rounds = 5 * depth + 1;
	struct tern_test_cmdq q;
	u32 i, batch;

	tern_test_cmdq_init(test, &q, 2);
	for (i = 0; i < rounds; i += batch) {
		struct tern_cmd_slot *slots[3];
		u32 k;

		/* 1, 2 or 3 completions per call, so that batches straddle the ring's end. */
		batch = min(1 + i % 3, rounds - i);
		for (k = 0; k < batch; k++)
			slots[k] = tern_test_post(&q, (i + k) % depth, i + k);

		tern_cmdq_handle_completions(q.tdev);
		KUNIT_ASSERT_EQ_MSG(test, q.cmdq->cq_ci, i, "consumed a stale entry at %u", i);

		for (k = 0; k < batch; k++)
			tern_test_complete(&q, slots[k]->token, TERN_CMD_OK, 0, i + k, 0);
		tern_cmdq_handle_completions(q.tdev);
		KUNIT_ASSERT_EQ_MSG(test, q.cmdq->cq_ci, i + batch, "round %u", i);
		for (k = 0; k < batch; k++) {
			KUNIT_ASSERT_TRUE_MSG(test, slots[k]->completed, "command %u", i + k);
			KUNIT_ASSERT_EQ(test, slots[k]->result, i + k);
			slots[k]->busy = false;
		}
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&q.cmdq->stale), 0);
}

/* Completions naming no waiting command are counted and dropped, leaving slots alone. */
static void tern_cmd_completion_stale(struct kunit *test)
{
	struct tern_test_cmdq q;
	struct tern_cmd_slot *waiting, *done, *idle;

	tern_test_cmdq_init(test, &q, 2);
	waiting = tern_test_post(&q, 0, 3);
	done = tern_test_post(&q, 1, 4);
	done->completed = true;
	idle = &q.cmdq->slots[2];

	tern_test_complete(&q, tern_cmd_token(0, 2), TERN_CMD_OK, 0, 0, 0);	/* old gen */
	tern_test_complete(&q, tern_cmd_token(1, 4), TERN_CMD_OK, 0, 0, 0);	/* duplicate */
	tern_test_complete(&q, tern_cmd_token(2, 0), TERN_CMD_OK, 0, 0, 0);	/* idle slot */
	tern_test_complete(&q, tern_cmd_token(200, 3), TERN_CMD_OK, 0, 0, 0);	/* no slot */
	tern_cmdq_handle_completions(q.tdev);

	KUNIT_EXPECT_EQ(test, q.cmdq->cq_ci, 4);
	KUNIT_EXPECT_EQ(test, atomic_read(&q.cmdq->stale), 4);
	KUNIT_EXPECT_FALSE(test, waiting->completed);
	KUNIT_EXPECT_FALSE(test, completion_done(&waiting->done));
	KUNIT_EXPECT_FALSE(test, idle->busy);
	KUNIT_EXPECT_FALSE(test, completion_done(&done->done));
	KUNIT_EXPECT_NE(test, down_trylock(&q.cmdq->slots_sem), 0);

	/* The right token still completes the waiting command afterwards. */
	tern_test_complete(&q, waiting->token, TERN_CMD_OK, 0, 0, 0);
	tern_cmdq_handle_completions(q.tdev);
	KUNIT_EXPECT_TRUE(test, waiting->completed);
	KUNIT_EXPECT_EQ(test, atomic_read(&q.cmdq->stale), 4);
}

/* The late completion of a timed-out command frees its slot. */
static void tern_cmd_completion_late(struct kunit *test)
{
	struct tern_test_cmdq q;
	struct tern_cmd_slot *slot;

	tern_test_cmdq_init(test, &q, 2);
	slot = tern_test_post(&q, 3, 9);
	slot->abandoned = true;
	tern_test_complete(&q, slot->token, TERN_CMD_OK, 0, 0, 0);
	tern_cmdq_handle_completions(q.tdev);

	KUNIT_EXPECT_FALSE(test, slot->busy);
	KUNIT_EXPECT_FALSE(test, slot->abandoned);
	KUNIT_EXPECT_FALSE(test, completion_done(&slot->done));
	KUNIT_EXPECT_EQ(test, atomic_read(&q.cmdq->late), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&q.cmdq->stale), 0);
	/* The slot went back to the semaphore: exactly one up(). */
	KUNIT_EXPECT_EQ(test, down_trylock(&q.cmdq->slots_sem), 0);
	KUNIT_EXPECT_NE(test, down_trylock(&q.cmdq->slots_sem), 0);
}

static struct kunit_case tern_cmdq_cases[] = {
	KUNIT_CASE(tern_cmd_token_roundtrip),
	KUNIT_CASE(tern_cmd_sqe_inline),
	KUNIT_CASE(tern_cmd_sqe_mailbox),
	KUNIT_CASE(tern_cmd_status_mapping),
	KUNIT_CASE(tern_cmd_opcode_names),
	KUNIT_CASE(tern_cmd_completion_decode),
	KUNIT_CASE(tern_cmd_completion_phase_wraps),
	KUNIT_CASE(tern_cmd_completion_stale),
	KUNIT_CASE(tern_cmd_completion_late),
	{}
};

static struct kunit_suite tern_cmdq_suite = {
	.name = "tern_cmdq",
	.test_cases = tern_cmdq_cases,
};

/* ---------------------------------------------------------------------------------------
 * Event queues: phase bit and doorbell.
 */

static void tern_eq_phase(struct kunit *test)
{
	u8 log;

	KUNIT_EXPECT_EQ(test, tern_ring_phase(0, 4), TERN_EQE_PHASE);
	KUNIT_EXPECT_EQ(test, tern_ring_phase(15, 4), TERN_EQE_PHASE);
	KUNIT_EXPECT_EQ(test, tern_ring_phase(16, 4), 0);
	KUNIT_EXPECT_EQ(test, tern_ring_phase(31, 4), 0);
	KUNIT_EXPECT_EQ(test, tern_ring_phase(32, 4), TERN_EQE_PHASE);
	KUNIT_EXPECT_EQ(test, tern_ring_phase(65535, 16), TERN_EQE_PHASE);
	KUNIT_EXPECT_EQ(test, tern_ring_phase(65536, 16), 0);
	/* The free-running index wraps at 2^32 on a pass boundary: the last pass is odd. */
	for (log = 1; log <= TERN_EQ_MAX_LOG; log++) {
		KUNIT_EXPECT_EQ_MSG(test, tern_ring_phase(U32_MAX, log), 0, "log %u", log);
		KUNIT_EXPECT_EQ_MSG(test, tern_ring_phase(U32_MAX + 1u, log), TERN_EQE_PHASE,
				    "log %u", log);
	}
}

/* A device writing events pass after pass; the consumer finds exactly the new ones. */
static void tern_eq_consume_simulated(struct kunit *test)
{
	const u8 log = TERN_EQ_MIN_LOG;
	const u32 depth = 1u << log;
	struct tern_eqe *ring;
	u32 pi = 0, ci = 0, consumed = 0, i;
	u8 dev_phase = TERN_EQE_PHASE;

	ring = kunit_kcalloc(test, depth, sizeof(*ring), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ring);
	for (i = 0; i < 40; i++) {
		u32 n = (i * 7) % depth + 1, k;

		/* The device never overwrites an unconsumed entry: at most depth at once. */
		for (k = 0; k < n; k++) {
			struct tern_eqe *e = &ring[pi % depth];

			e->type = TERN_EQE_ETH_RXQ;
			e->data[0] = cpu_to_le32(pi);
			e->flags = dev_phase;
			if (++pi % depth == 0)
				dev_phase ^= TERN_EQE_PHASE;
		}
		while ((ring[ci % depth].flags & TERN_EQE_PHASE) == tern_ring_phase(ci, log)) {
			KUNIT_ASSERT_EQ(test, le32_to_cpu(ring[ci % depth].data[0]), ci);
			ci++;
			consumed++;
			KUNIT_ASSERT_LE(test, consumed, pi);
		}
		KUNIT_ASSERT_EQ_MSG(test, ci, pi, "batch %u of %u events", i, n);
	}
	KUNIT_EXPECT_GT(test, pi, 10 * depth);
}

static void tern_eq_doorbell(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, tern_eq_db_value(0, true), TERN_EQ_DB_ARM);
	KUNIT_EXPECT_EQ(test, tern_eq_db_value(5, false), 5);
	KUNIT_EXPECT_EQ(test, tern_eq_db_value(0x00ffffff, true), 0x80ffffffu);
	/* The consumer index travels modulo 2^24: it never sets the ARM bit by itself. */
	KUNIT_EXPECT_EQ(test, tern_eq_db_value(0x01000005, false), 5);
	KUNIT_EXPECT_EQ(test, tern_eq_db_value(U32_MAX, false), 0x00ffffffu);
}

static struct kunit_case tern_eq_cases[] = {
	KUNIT_CASE(tern_eq_phase),
	KUNIT_CASE(tern_eq_consume_simulated),
	KUNIT_CASE(tern_eq_doorbell),
	{}
};

static struct kunit_suite tern_eq_suite = {
	.name = "tern_eq",
	.test_cases = tern_eq_cases,
};

/* ---------------------------------------------------------------------------------------
 * Ethernet: ring arithmetic, flow control, doorbells, receive buffers, MTU.
 */

static void tern_en_ring_arith(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, tern_en_ring_room(256, 0, 0), 256);
	KUNIT_EXPECT_EQ(test, tern_en_ring_room(256, 256, 0), 0);
	KUNIT_EXPECT_EQ(test, tern_en_ring_room(256, 300, 100), 56);
	/* Free-running u32 indices wrap: pi has wrapped, ci not yet. */
	KUNIT_EXPECT_EQ(test, tern_en_ring_room(256, 5, U32_MAX - 2), 248);
	KUNIT_EXPECT_EQ(test, tern_en_ring_room(64, 63, U32_MAX), 0);
	KUNIT_EXPECT_EQ(test, tern_en_ring_room(64, 0x10003, 0xffc3), 0);
}

static void tern_en_doorbell(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, tern_en_db_value(5), 5);
	KUNIT_EXPECT_EQ(test, tern_en_db_value(0xffff), 0xffff);
	/* The index travels modulo 2^16; the reserved bits 31:16 stay clear. */
	KUNIT_EXPECT_EQ(test, tern_en_db_value(0x10000), 0);
	KUNIT_EXPECT_EQ(test, tern_en_db_value(0x12345), 0x2345);
	KUNIT_EXPECT_EQ(test, tern_en_db_value(U32_MAX), 0xffff);
	/* Each kind of doorbell has its own 512-byte block of page 0. */
	KUNIT_EXPECT_EQ(test, TERN_DB_ETH_TXQ_ARM(1), 0x604);
	KUNIT_EXPECT_EQ(test, TERN_DB_ETH_RXQ_ARM(2), 0x808);
}

static void tern_en_tx_flow_control(struct kunit *test)
{
	u32 size;

	/* A running queue always has room for the largest frame (context + 19 pieces). */
	KUNIT_EXPECT_TRUE(test, tern_en_tx_should_stop(0));
	KUNIT_EXPECT_TRUE(test, tern_en_tx_should_stop(TERN_ETH_TX_MAX_DESCS - 1));
	KUNIT_EXPECT_FALSE(test, tern_en_tx_should_stop(TERN_ETH_TX_MAX_DESCS));
	KUNIT_EXPECT_FALSE(test, tern_en_tx_can_wake(256, 63));
	KUNIT_EXPECT_TRUE(test, tern_en_tx_can_wake(256, 64));
	/* the smallest ring: a quarter (16) is less than a frame may take */
	KUNIT_EXPECT_FALSE(test, tern_en_tx_can_wake(64, TERN_ETH_TX_MAX_DESCS - 1));
	KUNIT_EXPECT_TRUE(test, tern_en_tx_can_wake(64, TERN_ETH_TX_MAX_DESCS));
	for (size = TERN_EN_MIN_RING_SIZE; size <= (1u << TERN_ETH_MAX_LOG); size <<= 1) {
		u32 wake = max_t(u32, size / 4, TERN_EN_TX_STOP_THRESH);

		/* A full ring stops the queue and does not wake it... */
		KUNIT_EXPECT_TRUE(test, tern_en_tx_should_stop(tern_en_ring_room(size, size, 0)));
		KUNIT_EXPECT_FALSE(test, tern_en_tx_can_wake(size, 0));
		/* ...an empty one wakes it, and a woken queue has room for any frame. */
		KUNIT_EXPECT_TRUE(test, tern_en_tx_can_wake(size, size));
		KUNIT_EXPECT_FALSE(test, tern_en_tx_should_stop(wake));
		KUNIT_EXPECT_FALSE(test, tern_en_tx_can_wake(size, wake - 1));
	}
}

static void tern_en_rx_buffers(struct kunit *test)
{
	unsigned int mtu;

	for (mtu = ETH_MIN_MTU; mtu <= TERN_ETH_MAX_MTU; mtu++) {
		u32 buf_len = TERN_EN_RX_FRAME_LEN(mtu);
		u32 order = tern_en_rx_buf_order(buf_len);
		size_t need = SKB_DATA_ALIGN(TERN_EN_RX_HEADROOM + buf_len) +
			      SKB_DATA_ALIGN(sizeof(struct skb_shared_info));

		/* Large enough for headroom, frame and skb_shared_info; not twice too large. */
		KUNIT_ASSERT_GE_MSG(test, PAGE_SIZE << order, need, "MTU %u", mtu);
		if (order)
			KUNIT_ASSERT_LT_MSG(test, PAGE_SIZE << (order - 1), need, "MTU %u", mtu);
	}
	KUNIT_EXPECT_EQ(test, TERN_EN_RX_FRAME_LEN(1500), 1518);
	if (PAGE_SIZE == 4096) {
		KUNIT_EXPECT_EQ(test, tern_en_rx_buf_order(TERN_EN_RX_FRAME_LEN(1500)), 0);
		KUNIT_EXPECT_EQ(test, tern_en_rx_buf_order(TERN_EN_RX_FRAME_LEN(9000)), 2);
		KUNIT_EXPECT_EQ(test, tern_en_rx_buf_order(TERN_EN_RX_FRAME_LEN(9600)), 2);
	}
}

static void tern_en_mtu_limits(struct kunit *test)
{
	static const struct {
		unsigned int dev_min, dev_max, min, max;
		bool ok;
	} cases[] = {
		{ 68, 9600, 68, 9600, true },
		{ 0, 65535, ETH_MIN_MTU, TERN_ETH_MAX_MTU, true },
		{ 1000, 2000, 1000, 2000, true },
		{ 1500, 1500, 1500, 1500, true },
		{ 5000, 100, ETH_MIN_MTU, ETH_DATA_LEN, false },
		{ 10000, 12000, ETH_MIN_MTU, ETH_DATA_LEN, false },
		{ 0, 0, ETH_MIN_MTU, ETH_DATA_LEN, false },
	};
	unsigned int i, min, max;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		bool ok = tern_en_mtu_range(cases[i].dev_min, cases[i].dev_max, &min, &max);

		KUNIT_EXPECT_EQ_MSG(test, ok, cases[i].ok, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, min, cases[i].min, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, max, cases[i].max, "case %u", i);
	}
}

static struct kunit_case tern_en_cases[] = {
	KUNIT_CASE(tern_en_ring_arith),
	KUNIT_CASE(tern_en_doorbell),
	KUNIT_CASE(tern_en_tx_flow_control),
	KUNIT_CASE(tern_en_rx_buffers),
	KUNIT_CASE(tern_en_mtu_limits),
	{}
};

static struct kunit_suite tern_en_suite = {
	.name = "tern_en",
	.test_cases = tern_en_cases,
};

/* ---------------------------------------------------------------------------------------
 * ethtool: statistics tables, ring sizes, firmware version. The netdev is never registered
 * and its device has no command queue: commands fail at once with -EIO.
 */

static int tern_ethtool_test_init(struct kunit *test)
{
	struct tern_en_priv *priv;
	struct net_device *netdev;

	netdev = alloc_etherdev(sizeof(*priv));
	if (!netdev)
		return -ENOMEM;
	priv = netdev_priv(netdev);
	priv->netdev = netdev;
	priv->tdev = kunit_kzalloc(test, sizeof(*priv->tdev), GFP_KERNEL);
	if (!priv->tdev) {
		free_netdev(netdev);
		return -ENOMEM;
	}
	mutex_init(&priv->hw_stats_mutex);
	spin_lock_init(&priv->hw_stats_lock);
	u64_stats_init(&priv->ch[0].tx.stats.syncp);
	u64_stats_init(&priv->ch[0].tx.xstats.syncp);
	u64_stats_init(&priv->ch[0].rx.stats.syncp);
	u64_stats_init(&priv->ch[0].eq_stats.syncp);
	priv->max_ring_size = 1024;
	priv->tx_ring_size = 256;
	priv->rx_ring_size = 256;
	test->priv = netdev;
	return 0;
}

static void tern_ethtool_test_exit(struct kunit *test)
{
	struct net_device *netdev = test->priv;
	struct tern_en_priv *priv = netdev_priv(netdev);

	mutex_destroy(&priv->hw_stats_mutex);
	free_netdev(netdev);
}

static int tern_test_hw_stat(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tern_test_hw_stats); i++)
		if (!strcmp(name, tern_test_hw_stats[i].name))
			return i;
	return -1;
}

static const struct {
	const char *name;
	u64 value;
} tern_test_sw_stats[] = {
	{ "tx_packets", 1 }, { "tx_bytes", 2 }, { "tx_errors", 3 }, { "tx_queue_wake", 4 },
	{ "tx_dropped", 5 }, { "tx_busy", 6 }, { "tx_queue_stop", 7 },
	{ "tx_carrier_errors", 8 }, { "tx_timeouts", 9 }, { "rx_packets", 10 },
	{ "rx_bytes", 11 }, { "rx_multicast", 12 }, { "rx_errors", 13 },
	{ "rx_length_errors", 14 }, { "rx_dropped", 15 }, { "rx_alloc_fail", 16 },
	{ "eq_events", 17 }, { "eq_unknown_events", 18 },
};

/* Give every counter the value tern_test_sw_stats[] or tern_test_hw_stats[] expects. */
static void tern_test_set_stats(struct tern_en_priv *priv)
{
	struct tern_en_channel *ch = &priv->ch[0];
	unsigned int i;

	u64_stats_update_begin(&ch->tx.stats.syncp);
	u64_stats_set(&ch->tx.stats.packets, 1);
	u64_stats_set(&ch->tx.stats.bytes, 2);
	u64_stats_set(&ch->tx.stats.errors, 3);
	u64_stats_set(&ch->tx.stats.wakes, 4);
	u64_stats_update_end(&ch->tx.stats.syncp);
	u64_stats_update_begin(&ch->tx.xstats.syncp);
	u64_stats_set(&ch->tx.xstats.dropped, 5);
	u64_stats_set(&ch->tx.xstats.busy, 6);
	u64_stats_set(&ch->tx.xstats.stops, 7);
	u64_stats_set(&ch->tx.xstats.carrier, 8);
	u64_stats_update_end(&ch->tx.xstats.syncp);
	priv->tx_timeouts = 9;
	u64_stats_update_begin(&ch->rx.stats.syncp);
	u64_stats_set(&ch->rx.stats.packets, 10);
	u64_stats_set(&ch->rx.stats.bytes, 11);
	u64_stats_set(&ch->rx.stats.multicast, 12);
	u64_stats_set(&ch->rx.stats.errors, 13);
	u64_stats_set(&ch->rx.stats.length_errors, 14);
	u64_stats_set(&ch->rx.stats.dropped, 15);
	u64_stats_set(&ch->rx.stats.alloc_fail, 16);
	u64_stats_update_end(&ch->rx.stats.syncp);
	u64_stats_update_begin(&ch->eq_stats.syncp);
	u64_stats_set(&ch->eq_stats.events, 17);
	u64_stats_set(&ch->eq_stats.unknown, 18);
	u64_stats_update_end(&ch->eq_stats.syncp);

	/* Hardware counters: 0x1000 + the field's offset (rsvd gets a value never expected). */
	memset(&priv->hw_stats, 0xee, sizeof(priv->hw_stats));
	for (i = 0; i < ARRAY_SIZE(tern_test_hw_stats); i++) {
		__le64 *v = (__le64 *)((u8 *)&priv->hw_stats + tern_test_hw_stats[i].offset);

		*v = cpu_to_le64(0x1000 + tern_test_hw_stats[i].offset);
	}
}

static void tern_ethtool_stats(struct kunit *test)
{
	const struct ethtool_ops *ops = &tern_ethtool_ops;
	struct net_device *netdev = test->priv;
	unsigned int n_hw = 0, n_sw = 0, i, j;
	int count;
	u8 *names;
	u64 *values;

	count = ops->get_sset_count(netdev, ETH_SS_STATS);
	KUNIT_EXPECT_EQ(test, ops->get_sset_count(netdev, ETH_SS_TEST), -EOPNOTSUPP);
	KUNIT_ASSERT_EQ(test, count, (int)(ARRAY_SIZE(tern_test_sw_stats) +
					   ARRAY_SIZE(tern_test_hw_stats)));
	/* Every software counter has a name: struct tern_en_sw_stats is all u64. */
	KUNIT_EXPECT_EQ(test, sizeof(struct tern_en_sw_stats),
			ARRAY_SIZE(tern_test_sw_stats) * sizeof(u64));

	/* One more entry than announced, to catch writes past the end. */
	names = kunit_kzalloc(test, (count + 1) * ETH_GSTRING_LEN, GFP_KERNEL);
	values = kunit_kcalloc(test, count + 1, sizeof(*values), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, names);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, values);
	memset(names + count * ETH_GSTRING_LEN, 0xa5, ETH_GSTRING_LEN);
	values[count] = 0xa5a5a5a5a5a5a5a5ull;

	tern_test_set_stats(netdev_priv(netdev));
	ops->get_strings(netdev, ETH_SS_STATS, names);
	ops->get_ethtool_stats(netdev, NULL, values);
	KUNIT_EXPECT_EQ(test, names[count * ETH_GSTRING_LEN], 0xa5);
	KUNIT_EXPECT_EQ(test, values[count], 0xa5a5a5a5a5a5a5a5ull);

	for (i = 0; i < (unsigned int)count; i++) {
		const char *name = (const char *)names + i * ETH_GSTRING_LEN;
		int hw;

		KUNIT_ASSERT_TRUE_MSG(test, strnlen(name, ETH_GSTRING_LEN) < ETH_GSTRING_LEN,
				      "name %u is not terminated", i);
		KUNIT_EXPECT_GT_MSG(test, strlen(name), 0, "name %u is empty", i);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_STRNEQ(test, name, (const char *)names + j * ETH_GSTRING_LEN);

		if (!strncmp(name, "hw_", 3)) {
			hw = tern_test_hw_stat(name + 3);
			KUNIT_EXPECT_GE_MSG(test, hw, 0, "unknown hardware counter %s", name);
			if (hw >= 0)
				KUNIT_EXPECT_EQ_MSG(test, values[i],
						    0x1000 + tern_test_hw_stats[hw].offset,
						    "value of %s", name);
			n_hw++;
			continue;
		}
		for (j = 0; j < ARRAY_SIZE(tern_test_sw_stats); j++)
			if (!strcmp(name, tern_test_sw_stats[j].name))
				break;
		if (j == ARRAY_SIZE(tern_test_sw_stats)) {
			KUNIT_FAIL(test, "unknown software counter %s", name);
			continue;
		}
		KUNIT_EXPECT_EQ_MSG(test, values[i], tern_test_sw_stats[j].value, "value of %s",
				    name);
		n_sw++;
	}
	/* Names are unique, so each counter of each kind appears exactly once. */
	KUNIT_EXPECT_EQ(test, n_hw, ARRAY_SIZE(tern_test_hw_stats));
	KUNIT_EXPECT_EQ(test, n_sw, ARRAY_SIZE(tern_test_sw_stats));
}

static void tern_ethtool_ringparam(struct kunit *test)
{
	const struct ethtool_ops *ops = &tern_ethtool_ops;
	struct net_device *netdev = test->priv;
	struct tern_en_priv *priv = netdev_priv(netdev);
	struct kernel_ethtool_ringparam kring = {};
	struct ethtool_ringparam ring = {};
	int err;

	ops->get_ringparam(netdev, &ring, &kring, NULL);
	KUNIT_EXPECT_EQ(test, ring.rx_max_pending, 1024);
	KUNIT_EXPECT_EQ(test, ring.tx_max_pending, 1024);
	KUNIT_EXPECT_EQ(test, ring.rx_pending, 256);
	KUNIT_EXPECT_EQ(test, ring.tx_pending, 256);

	rtnl_lock();
	/* Rounded up to a power of two; the interface is down, so only the sizes change. */
	ring.rx_pending = 100;
	ring.tx_pending = 64;
	err = ops->set_ringparam(netdev, &ring, &kring, NULL);
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ(test, priv->rx_ring_size, 128);
	KUNIT_EXPECT_EQ(test, priv->tx_ring_size, 64);

	ring.rx_pending = TERN_EN_MIN_RING_SIZE - 1;
	KUNIT_EXPECT_EQ(test, ops->set_ringparam(netdev, &ring, &kring, NULL), -EINVAL);
	ring.rx_pending = 1025;
	KUNIT_EXPECT_EQ(test, ops->set_ringparam(netdev, &ring, &kring, NULL), -EINVAL);
	ring.rx_pending = 1024;
	ring.rx_jumbo_pending = 1;
	KUNIT_EXPECT_EQ(test, ops->set_ringparam(netdev, &ring, &kring, NULL), -EINVAL);
	ring.rx_jumbo_pending = 0;
	ring.rx_mini_pending = 1;
	KUNIT_EXPECT_EQ(test, ops->set_ringparam(netdev, &ring, &kring, NULL), -EINVAL);
	/* Refused changes leave the sizes alone. */
	KUNIT_EXPECT_EQ(test, priv->rx_ring_size, 128);
	KUNIT_EXPECT_EQ(test, priv->tx_ring_size, 64);
	rtnl_unlock();
}

static void tern_fw_version_string(struct kunit *test)
{
	char buf[ETHTOOL_FWVERS_LEN];
	char small[4];

	tern_fw_version_format(buf, sizeof(buf), 0x01020003);
	KUNIT_EXPECT_STREQ(test, buf, "1.2.3");
	tern_fw_version_format(buf, sizeof(buf), 0);
	KUNIT_EXPECT_STREQ(test, buf, "0.0.0");
	/* The patch level has 16 bits. */
	tern_fw_version_format(buf, sizeof(buf), U32_MAX);
	KUNIT_EXPECT_STREQ(test, buf, "255.255.65535");
	tern_fw_version_format(buf, sizeof(buf), 0x0a0b1234);
	KUNIT_EXPECT_STREQ(test, buf, "10.11.4660");
	/* Truncated, still terminated. */
	KUNIT_EXPECT_EQ(test, tern_fw_version_format(small, sizeof(small), 0x01020003), 5);
	KUNIT_EXPECT_STREQ(test, small, "1.2");
}

static struct kunit_case tern_ethtool_cases[] = {
	KUNIT_CASE(tern_ethtool_stats),
	KUNIT_CASE(tern_ethtool_ringparam),
	KUNIT_CASE(tern_fw_version_string),
	{}
};

static struct kunit_suite tern_ethtool_suite = {
	.name = "tern_ethtool",
	.init = tern_ethtool_test_init,
	.exit = tern_ethtool_test_exit,
	.test_cases = tern_ethtool_cases,
};

/* ---------------------------------------------------------------------------------------
 * debugfs: the NOP each cmd_test/ trigger runs, and the wire_faults/ files' values.
 */

static void tern_dbg_nop_in_triggers(struct kunit *test)
{
	const struct tern_dbg dbg = {
		.nop_delay_us = 100, .nop_len = 16, .fail_status = TERN_CMD_BAD_STATE,
		.fail_syndrome = 0x11223344,
	};
	static const u32 flags[] = { 0, TERN_NOP_F_FAIL, TERN_NOP_F_DROP, TERN_NOP_F_FATAL };
	struct tern_cmd_nop_in nop;
	unsigned int i;
	size_t tail;

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		memset(&nop, 0xa5, sizeof(nop));
		tail = 12345;
		KUNIT_ASSERT_EQ(test, tern_dbg_nop_in(&dbg, flags[i], &nop, &tail), 0);
		/* the delay and echo belong to "nop", the status and syndrome to "fail" */
		KUNIT_EXPECT_EQ(test, le32_to_cpu(nop.flags), flags[i] ? : TERN_NOP_F_DELAY);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(nop.delay_us), flags[i] ? 0 : 100);
		KUNIT_EXPECT_EQ(test, tail, flags[i] ? 0 : 16);
		KUNIT_EXPECT_EQ(test, nop.fail_status,
				flags[i] == TERN_NOP_F_FAIL ? TERN_CMD_BAD_STATE : 0);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(nop.fail_syndrome),
				flags[i] == TERN_NOP_F_FAIL ? 0x11223344 : 0);
		/* Reserved bytes must be zero, or the device answers BAD_PARAM. */
		KUNIT_EXPECT_EQ(test, nop.rsvd[0] | nop.rsvd[1] | nop.rsvd[2], 0);
	}
}

static void tern_dbg_nop_in_limits(struct kunit *test)
{
	struct tern_dbg dbg = {};
	struct tern_cmd_nop_in nop;
	size_t tail;

	/* no delay: a plain NOP, without the delay flag */
	KUNIT_ASSERT_EQ(test, tern_dbg_nop_in(&dbg, 0, &nop, &tail), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(nop.flags), 0);
	KUNIT_EXPECT_EQ(test, tail, 0);
	dbg.nop_len = TERN_CMD_MAX_IN - sizeof(nop);
	KUNIT_ASSERT_EQ(test, tern_dbg_nop_in(&dbg, 0, &nop, &tail), 0);
	KUNIT_EXPECT_EQ(test, tail, TERN_CMD_MAX_IN - sizeof(nop));
	dbg.nop_len++;
	memset(&nop, 0xa5, sizeof(nop));
	KUNIT_EXPECT_EQ(test, tern_dbg_nop_in(&dbg, 0, &nop, &tail), -EINVAL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(nop.flags), 0xa5a5a5a5);
	/* a length above the limit does not matter to the other triggers */
	KUNIT_EXPECT_EQ(test, tern_dbg_nop_in(&dbg, TERN_NOP_F_DROP, &nop, &tail), 0);
	dbg.fail_status = U8_MAX;
	KUNIT_ASSERT_EQ(test, tern_dbg_nop_in(&dbg, TERN_NOP_F_FAIL, &nop, &tail), 0);
	KUNIT_EXPECT_EQ(test, nop.fail_status, U8_MAX);
	dbg.fail_status++;
	KUNIT_EXPECT_EQ(test, tern_dbg_nop_in(&dbg, TERN_NOP_F_FAIL, &nop, &tail), -EINVAL);
	KUNIT_EXPECT_EQ(test, tern_dbg_nop_in(&dbg, 0, &nop, &tail), -EINVAL);
	dbg.nop_len = 0;
	KUNIT_EXPECT_EQ(test, tern_dbg_nop_in(&dbg, 0, &nop, &tail), 0);
	KUNIT_EXPECT_EQ(test, tern_dbg_nop_in(&dbg, TERN_NOP_F_DELAY, &nop, &tail), -EINVAL);
}

static void tern_dbg_wf_update_values(struct kunit *test)
{
	struct tern_cmd_query_wire_faults_out q = {};
	struct tern_wire_faults *wf = &q.cfg;
	unsigned int f;

	/* each writable file changes its value only, and reads it back */
	for (f = TERN_DBG_WF_DROP; f <= TERN_DBG_WF_REORDER; f++) {
		KUNIT_EXPECT_EQ(test, tern_dbg_wf_update(wf, f, 10000 + f), 0);
		KUNIT_EXPECT_EQ(test, tern_dbg_wf_update(wf, f, TERN_WIRE_FAULT_PPM_MAX + 1),
				-EINVAL);
	}
	KUNIT_EXPECT_EQ(test, le32_to_cpu(wf->drop_ppm), 10000 + TERN_DBG_WF_DROP);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(wf->corrupt_ppm), 10000 + TERN_DBG_WF_CORRUPT);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(wf->duplicate_ppm), 10000 + TERN_DBG_WF_DUPLICATE);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(wf->reorder_ppm), 10000 + TERN_DBG_WF_REORDER);
	KUNIT_EXPECT_EQ(test, tern_dbg_wf_update(wf, TERN_DBG_WF_DROP, TERN_WIRE_FAULT_PPM_MAX),
			0);
	KUNIT_EXPECT_EQ(test, tern_dbg_wf_value(&q, TERN_DBG_WF_DROP), TERN_WIRE_FAULT_PPM_MAX);
	KUNIT_EXPECT_EQ(test, tern_dbg_wf_value(&q, TERN_DBG_WF_REORDER),
			10000 + TERN_DBG_WF_REORDER);

	KUNIT_EXPECT_EQ(test, tern_dbg_wf_update(wf, TERN_DBG_WF_ROCE_ONLY, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(wf->flags), 0);
	KUNIT_EXPECT_EQ(test, tern_dbg_wf_update(wf, TERN_DBG_WF_ROCE_ONLY, 1), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(wf->flags), TERN_WIRE_FAULT_F_ROCE_ONLY);
	KUNIT_EXPECT_EQ(test, tern_dbg_wf_value(&q, TERN_DBG_WF_ROCE_ONLY), 1);
	KUNIT_EXPECT_EQ(test, tern_dbg_wf_update(wf, TERN_DBG_WF_ROCE_ONLY, 0), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(wf->flags), 0);

	KUNIT_EXPECT_EQ(test, tern_dbg_wf_update(wf, TERN_DBG_WF_SEED, U64_MAX), 0);
	KUNIT_EXPECT_EQ(test, tern_dbg_wf_value(&q, TERN_DBG_WF_SEED), U64_MAX);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(wf->rsvd), 0);

	/* the counters are read-only */
	for (f = TERN_DBG_WF_FRAMES; f <= TERN_DBG_WF_NUM; f++)
		KUNIT_EXPECT_EQ(test, tern_dbg_wf_update(wf, f, 1), -EINVAL);
	q.frames = cpu_to_le64(1000);
	q.dropped = cpu_to_le64(1);
	q.corrupted = cpu_to_le64(2);
	q.duplicated = cpu_to_le64(3);
	q.reordered = cpu_to_le64(4);
	KUNIT_EXPECT_EQ(test, tern_dbg_wf_value(&q, TERN_DBG_WF_FRAMES), 1000);
	KUNIT_EXPECT_EQ(test, tern_dbg_wf_value(&q, TERN_DBG_WF_DROPPED), 1);
	KUNIT_EXPECT_EQ(test, tern_dbg_wf_value(&q, TERN_DBG_WF_CORRUPTED), 2);
	KUNIT_EXPECT_EQ(test, tern_dbg_wf_value(&q, TERN_DBG_WF_DUPLICATED), 3);
	KUNIT_EXPECT_EQ(test, tern_dbg_wf_value(&q, TERN_DBG_WF_REORDERED), 4);
}

static struct kunit_case tern_debugfs_cases[] = {
	KUNIT_CASE(tern_dbg_nop_in_triggers),
	KUNIT_CASE(tern_dbg_nop_in_limits),
	KUNIT_CASE(tern_dbg_wf_update_values),
	{}
};

static struct kunit_suite tern_debugfs_suite = {
	.name = "tern_debugfs",
	.test_cases = tern_debugfs_cases,
};

/* ---------------------------------------------------------------------------------------
 * DCB: what dcbnl settings the driver refuses before the firmware sees them.
 */

#if IS_ENABLED(CONFIG_DCB)

static int tern_dcb_test_init(struct kunit *test)
{
	struct net_device *netdev = alloc_etherdev(0);

	if (!netdev)
		return -ENOMEM;
	test->priv = netdev;
	return 0;
}

static void tern_dcb_test_exit(struct kunit *test)
{
	free_netdev(test->priv);
}

/* Priority 3 lossless in TC 3 at 60 %, TC 0 at 40 %, CNPs in strict TC 6. */
static void tern_test_ets(struct ieee_ets *ets)
{
	int i;

	memset(ets, 0, sizeof(*ets));
	ets->ets_cap = IEEE_8021QAZ_MAX_TCS;
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		ets->tc_tsa[i] = IEEE_8021QAZ_TSA_ETS;
	ets->tc_tsa[2] = IEEE_8021QAZ_TSA_STRICT;
	ets->tc_tsa[6] = IEEE_8021QAZ_TSA_STRICT;
	ets->tc_tx_bw[0] = 40;
	ets->tc_tx_bw[3] = 60;
	ets->prio_tc[3] = 3;
	ets->prio_tc[6] = 6;
}

static void tern_dcb_ets_checks(struct kunit *test)
{
	static const u8 tsas[] = { IEEE_8021QAZ_TSA_STRICT, IEEE_8021QAZ_TSA_CB_SHAPER,
				   IEEE_8021QAZ_TSA_ETS, 3, IEEE_8021QAZ_TSA_VENDOR };
	struct net_device *netdev = test->priv;
	struct ieee_ets ets;
	unsigned int i;

	tern_test_ets(&ets);
	KUNIT_EXPECT_EQ(test, tern_dcb_check_ets(netdev, &ets), 0);

	/* Every TC strict: no ETS TC, so no sum to reach. */
	memset(ets.tc_tsa, IEEE_8021QAZ_TSA_STRICT, sizeof(ets.tc_tsa));
	memset(ets.tc_tx_bw, 0, sizeof(ets.tc_tx_bw));
	KUNIT_EXPECT_EQ(test, tern_dcb_check_ets(netdev, &ets), 0);

	tern_test_ets(&ets);
	ets.tc_tx_bw[3] = 50;			/* ETS TCs sum to 90 */
	KUNIT_EXPECT_EQ(test, tern_dcb_check_ets(netdev, &ets), -EINVAL);
	ets.tc_tx_bw[2] = 10;			/* ... 100 in all, 10 of them on a strict TC */
	KUNIT_EXPECT_EQ(test, tern_dcb_check_ets(netdev, &ets), -EINVAL);

	tern_test_ets(&ets);
	ets.tc_tx_bw[0] = 140;			/* above 100 % (sum 200) */
	ets.tc_tx_bw[3] = 60;
	KUNIT_EXPECT_EQ(test, tern_dcb_check_ets(netdev, &ets), -EINVAL);

	/* strict (TC 1 has 0 %) and ETS pass; CBS, 3 and vendor do not */
	for (i = 0; i < ARRAY_SIZE(tsas); i++) {
		tern_test_ets(&ets);
		ets.tc_tsa[1] = tsas[i];
		KUNIT_EXPECT_EQ_MSG(test, tern_dcb_check_ets(netdev, &ets),
				    tsas[i] == IEEE_8021QAZ_TSA_STRICT ||
				    tsas[i] == IEEE_8021QAZ_TSA_ETS ? 0 : -EINVAL,
				    "TSA %u", tsas[i]);
	}

	tern_test_ets(&ets);
	ets.prio_tc[7] = IEEE_8021QAZ_MAX_TCS;	/* TC 8 does not exist */
	KUNIT_EXPECT_EQ(test, tern_dcb_check_ets(netdev, &ets), -EINVAL);

	tern_test_ets(&ets);
	ets.cbs = 1;
	KUNIT_EXPECT_EQ(test, tern_dcb_check_ets(netdev, &ets), -EINVAL);
}

static void tern_dcb_app_checks(struct kunit *test)
{
	struct net_device *netdev = test->priv;
	struct dcb_app app = { .selector = IEEE_8021QAZ_APP_SEL_DSCP, .protocol = 26,
			       .priority = 3 };
	int sel;

	KUNIT_EXPECT_EQ(test, tern_dcb_check_app(netdev, &app), 0);
	app.protocol = 63;
	app.priority = 7;
	KUNIT_EXPECT_EQ(test, tern_dcb_check_app(netdev, &app), 0);
	app.protocol = 64;
	KUNIT_EXPECT_EQ(test, tern_dcb_check_app(netdev, &app), -EINVAL);
	app.protocol = 48;
	app.priority = 8;
	KUNIT_EXPECT_EQ(test, tern_dcb_check_app(netdev, &app), -EINVAL);

	/* Only the DSCP selector: ethertype, TCP/UDP ports and the rest are refused. */
	app.priority = 6;
	for (sel = 0; sel <= 8; sel++) {
		app.selector = sel;
		KUNIT_EXPECT_EQ_MSG(test, tern_dcb_check_app(netdev, &app),
				    sel == IEEE_8021QAZ_APP_SEL_DSCP ? 0 : -EINVAL,
				    "selector %d", sel);
	}
}

static struct kunit_case tern_dcb_cases[] = {
	KUNIT_CASE(tern_dcb_ets_checks),
	KUNIT_CASE(tern_dcb_app_checks),
	{}
};

static struct kunit_suite tern_dcb_suite = {
	.name = "tern_dcb",
	.init = tern_dcb_test_init,
	.exit = tern_dcb_test_exit,
	.test_cases = tern_dcb_cases,
};

kunit_test_suites(&tern_hw_suite, &tern_cmdq_suite, &tern_eq_suite, &tern_en_suite,
		  &tern_ethtool_suite, &tern_debugfs_suite, &tern_dcb_suite);

#else

kunit_test_suites(&tern_hw_suite, &tern_cmdq_suite, &tern_eq_suite, &tern_en_suite,
		  &tern_ethtool_suite, &tern_debugfs_suite);

#endif /* CONFIG_DCB */

MODULE_DESCRIPTION("KUnit tests for tern_core");
MODULE_LICENSE("Dual BSD/GPL");
