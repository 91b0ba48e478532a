/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Registers, resets, MMIO access sizes, link, fatal state. */
#include "tests.h"

static void t_power_on_registers(void)
{
	struct fake f;

	fk_init(&f, false);
	CHECK_EQ(rreg(&f, TERN_REG_MAGIC), TERN_MAGIC);
	CHECK_EQ(rreg(&f, TERN_REG_VERSION), TERN_IF_VERSION);
	CHECK_EQ(rreg(&f, TERN_REG_FW_VERSION), 0x01000000u);
	/* the worst cases the driver waits for (config cmd_timeout_ms 0: the defaults) */
	CHECK_EQ(rreg(&f, TERN_REG_CMD_TIMEOUT), TERN_CMD_TIMEOUT_DEFAULT_MS);
	CHECK_EQ(rreg(&f, TERN_REG_RESET_TIMEOUT), TERN_RESET_TIMEOUT_DEFAULT_MS);
	CHECK_EQ(rreg(&f, TERN_REG_CTRL), 0);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS), TERN_STATUS_READY | TERN_STATUS_LINK_UP);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_STATUS), 0);
	wreg(&f, TERN_REG_SCRATCH, 0xdeadbeef);
	CHECK_EQ(rreg(&f, TERN_REG_SCRATCH), 0xdeadbeef);
	/* read-only registers ignore writes */
	wreg(&f, TERN_REG_MAGIC, 0);
	wreg(&f, TERN_REG_STATUS, 0);
	wreg(&f, TERN_REG_CMD_TIMEOUT, 1);
	CHECK_EQ(rreg(&f, TERN_REG_MAGIC), TERN_MAGIC);
	CHECK_EQ(rreg(&f, TERN_REG_CMD_TIMEOUT), TERN_CMD_TIMEOUT_DEFAULT_MS);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS), TERN_STATUS_READY | TERN_STATUS_LINK_UP);
	/* unknown registers read 0 and ignore writes */
	wreg(&f, 0x100, 0x12345678);
	CHECK_EQ(rreg(&f, 0x100), 0);
	CHECK_EQ(rreg(&f, TERN_BAR_REGS_SIZE - 4), 0);
	/* BAR2 reads 0, other BARs read 0 */
	CHECK_EQ(tern_model_mmio_read(f.m, TERN_BAR_DB, TERN_DB_CMDQ, 4), 0);
	CHECK_EQ(tern_model_mmio_read(f.m, TERN_BAR_MSIX, 0, 4), 0);
	CHECK_EQ(f.total_kicks, 0);
	fk_fini(&f);
}

static void t_mmio_sizes(void)
{
	struct fake f;

	fk_init(&f, false);
	/* narrow and wide reads are assembled from the 32-bit registers */
	CHECK_EQ(tern_model_mmio_read(f.m, 0, TERN_REG_MAGIC, 1), 0x54);
	CHECK_EQ(tern_model_mmio_read(f.m, 0, TERN_REG_MAGIC + 1, 1), 0x45);
	CHECK_EQ(tern_model_mmio_read(f.m, 0, TERN_REG_MAGIC + 2, 2), 0x4e52);
	CHECK_EQ(tern_model_mmio_read(f.m, 0, TERN_REG_MAGIC, 8),
		 ((uint64_t)TERN_IF_VERSION << 32) | TERN_MAGIC);
	/* bad sizes and out-of-range offsets */
	CHECK_EQ(tern_model_mmio_read(f.m, 0, TERN_REG_MAGIC, 3), 0);
	CHECK_EQ(tern_model_mmio_read(f.m, 0, TERN_BAR_REGS_SIZE, 4), 0);
	CHECK_EQ(tern_model_mmio_read(f.m, 0, TERN_BAR_REGS_SIZE - 4, 8), 0);
	CHECK_EQ(tern_model_mmio_read(f.m, 0, UINT64_MAX - 1, 4), 0);
	/* a 64-bit write is two 32-bit writes */
	tern_model_mmio_write(f.m, 0, TERN_REG_CMDQ_SQ_LO, 0x0000000123456740ull, 8);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_SQ_LO), 0x23456740);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_SQ_HI), 0x1);
	/* sub-word and misaligned writes are ignored (and logged) */
	wreg(&f, TERN_REG_SCRATCH, 0x11111111);
	unsigned long logs = f.logs;
	tern_model_mmio_write(f.m, 0, TERN_REG_SCRATCH, 0xff, 1);
	tern_model_mmio_write(f.m, 0, TERN_REG_SCRATCH, 0xffff, 2);
	tern_model_mmio_write(f.m, 0, TERN_REG_SCRATCH + 1, 0xffffffff, 4);
	tern_model_mmio_write(f.m, 0, TERN_BAR_REGS_SIZE, 1, 4);
	tern_model_mmio_write(f.m, 2, TERN_BAR_DB_SIZE - 4, 1, 8);
	tern_model_mmio_write(f.m, 5, 0, 1, 4);
	CHECK_EQ(rreg(&f, TERN_REG_SCRATCH), 0x11111111);
	CHECK(f.logs > logs);
	/* doorbells outside page 0, and doorbells for nothing, do nothing */
	tern_model_mmio_write(f.m, 2, TERN_DB_PAGE_SIZE * 7, 5, 4);
	tern_model_mmio_write(f.m, 2, TERN_DB_ETH_TXQ(100), 5, 4);
	tern_model_mmio_write(f.m, 2, TERN_DB_EQ(60), 5, 4);
	CHECK_EQ(f.total_kicks, 0);
	CHECK_EQ(f.dma_faults, 0);
	fk_fini(&f);
}

static void t_reset_handshake(void)
{
	struct fake f;
	uint64_t t0;
	struct cqe c;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	wreg(&f, TERN_REG_SCRATCH, 7);
	t0 = f.now;
	wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
	CHECK_EQ(rreg(&f, TERN_REG_CTRL), TERN_CTRL_RESET);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_READY, 0);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_LINK_UP, TERN_STATUS_LINK_UP);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_STATUS), 0);
	CHECK_EQ(rreg(&f, TERN_REG_SCRATCH), 0);
	CHECK(f.deadline >= t0 + 900000 && f.deadline <= t0 + 1100000);
	/* while resetting, the command queue cannot be configured */
	wreg(&f, TERN_REG_CMDQ_SQ_LO, 0x1000);
	wreg(&f, TERN_REG_CMDQ_CFG, TERN_CMDQ_CFG_ENABLE | 3);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_STATUS), 0);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_SQ_LO), 0);
	fk_advance(&f, 500000);
	CHECK_EQ(rreg(&f, TERN_REG_CTRL), TERN_CTRL_RESET);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_READY, 0);
	fk_advance(&f, 600000);
	CHECK_EQ(rreg(&f, TERN_REG_CTRL), 0);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS), TERN_STATUS_READY | TERN_STATUS_LINK_UP);
	CHECK_EQ(f.deadline, UINT64_MAX);
	/* and the device works again */
	REQUIRE(drv_cmdq_enable(&f, 3));
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	/* a second reset written during a reset restarts the countdown */
	wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
	fk_advance(&f, 800000);
	wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
	fk_advance(&f, 800000);
	CHECK_EQ(rreg(&f, TERN_REG_CTRL), TERN_CTRL_RESET);
	fk_advance(&f, 300000);
	CHECK_EQ(rreg(&f, TERN_REG_CTRL), 0);
	/* writing 0 to CTRL does nothing */
	wreg(&f, TERN_REG_CTRL, 0);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_READY, TERN_STATUS_READY);
	fk_fini(&f);
}

static void t_pci_reset(void)
{
	struct fake f;
	uint8_t nop[16] = { 0 };
	struct drv_ring eq;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 4));
	CHECK_EQ(drv_eq_create(&f, &eq, 4, 0, TERN_EQ_F_ASYNC, false), TERN_CMD_OK);
	/* leave delayed commands in flight and a reset pending: reset forgets them (no leak) */
	wr32(nop, TERN_NOP_F_DELAY);
	wr32(nop + 4, 1000);
	drv_cmd_post(&f, TERN_CMD_NOP, 1, nop, 16, 0, 0, 0);
	drv_cmd_post(&f, TERN_CMD_NOP, 2, nop, 16, 0, 0, 0);
	drv_cmd_ring(&f);
	fk_run(&f);
	CHECK(f.deadline != UINT64_MAX);
	wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
	tern_model_reset(f.m);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS), TERN_STATUS_READY | TERN_STATUS_LINK_UP);
	CHECK_EQ(rreg(&f, TERN_REG_CTRL), 0);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_STATUS), 0);
	CHECK_EQ(f.deadline, UINT64_MAX);
	/* link state belongs to the wire: survives */
	tern_model_set_link(f.m, false);
	tern_model_reset(f.m);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS), TERN_STATUS_READY);
	tern_model_set_link(f.m, true);
	/* nothing completes later */
	fk_advance(&f, 5000000);
	struct cqe c;
	CHECK(!drv_cmd_poll(&f, &c));
	fk_fini(&f);
}

static void t_cmdq_config(void)
{
	struct fake f;
	uint64_t sq, cq;

	fk_init(&f, false);
	sq = fk_alloc(&f, 64 * 16, 64);
	cq = fk_alloc(&f, 16 * 16, 64);
	wreg(&f, TERN_REG_CMDQ_SQ_LO, (uint32_t)sq);
	wreg(&f, TERN_REG_CMDQ_CQ_LO, (uint32_t)cq);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_SQ_LO), (uint32_t)sq);
	/* depth 0 and 9 refused */
	wreg(&f, TERN_REG_CMDQ_CFG, TERN_CMDQ_CFG_ENABLE | 0);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_STATUS), TERN_CMDQ_STATUS_ERROR);
	wreg(&f, TERN_REG_CMDQ_CFG, TERN_CMDQ_CFG_ENABLE | 9);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_STATUS), TERN_CMDQ_STATUS_ERROR);
	/* misaligned or zero addresses refused */
	wreg(&f, TERN_REG_CMDQ_SQ_LO, (uint32_t)sq + 32);
	wreg(&f, TERN_REG_CMDQ_CFG, TERN_CMDQ_CFG_ENABLE | 4);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_STATUS), TERN_CMDQ_STATUS_ERROR);
	wreg(&f, TERN_REG_CMDQ_SQ_LO, (uint32_t)sq);
	wreg(&f, TERN_REG_CMDQ_CQ_LO, 0);
	wreg(&f, TERN_REG_CMDQ_CFG, TERN_CMDQ_CFG_ENABLE | 4);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_STATUS), TERN_CMDQ_STATUS_ERROR);
	/* a doorbell on a disabled queue does nothing */
	db(&f, TERN_DB_CMDQ, 1);
	CHECK_EQ(f.total_kicks, 0);
	/* good config: enabled, error cleared, CFG reads back */
	wreg(&f, TERN_REG_CMDQ_CQ_LO, (uint32_t)cq);
	wreg(&f, TERN_REG_CMDQ_CFG, TERN_CMDQ_CFG_ENABLE | 4);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_STATUS), TERN_CMDQ_STATUS_ENABLED);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_CFG), TERN_CMDQ_CFG_ENABLE | 4);
	/* disable */
	wreg(&f, TERN_REG_CMDQ_CFG, 4);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_STATUS), 0);
	fk_fini(&f);
}

static void t_commands_not_in_mmio(void)
{
	struct fake f;
	struct cqe c;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 2));
	drv_cmd_post(&f, TERN_CMD_QUERY_PORT, 5, NULL, 0, 0, 64, f.out_mb);
	drv_cmd_ring(&f);
	CHECK_EQ(f.kicks, 1);
	CHECK(!drv_cmd_poll(&f, &c));	/* nothing happened inside the doorbell write */
	fk_run(&f);
	CHECK(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 5);
	CHECK_EQ(c.status, TERN_CMD_OK);
	fk_fini(&f);
}

static void t_link_change(void)
{
	struct fake f;
	struct drv_ring eq;
	uint8_t type, out[sizeof(struct tern_cmd_query_port_out)];
	uint32_t d0;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	/* no ASYNC EQ yet: a change only shows in STATUS */
	tern_model_set_link(f.m, false);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_LINK_UP, 0);
	tern_model_set_link(f.m, true);
	REQUIRE(drv_eq_create(&f, &eq, 4, 5, TERN_EQ_F_ASYNC, false) == TERN_CMD_OK);
	drv_eq_arm(&f, &eq);
	tern_model_set_link(f.m, false);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_LINK_UP, 0);
	CHECK(drv_eq_poll(&f, &eq, &type, &d0));
	CHECK_EQ(type, TERN_EQE_LINK_CHANGE);
	CHECK_EQ(d0, 0);
	CHECK_EQ(f.msix[5], 1);
	/* same state again: no event */
	tern_model_set_link(f.m, false);
	CHECK(!drv_eq_poll(&f, &eq, NULL, NULL));
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, out, sizeof(out), NULL), TERN_CMD_OK);
	CHECK_EQ(rd32(out + OFF(struct tern_cmd_query_port_out, link_up)), 0);
	CHECK_EQ(rd32(out + OFF(struct tern_cmd_query_port_out, link_speed_mbps)), 0);
	tern_model_set_link(f.m, true);
	CHECK(drv_eq_poll(&f, &eq, &type, &d0));
	CHECK_EQ(type, TERN_EQE_LINK_CHANGE);
	CHECK_EQ(d0, 1);
	CHECK_EQ(f.msix[5], 1);		/* not re-armed: no second interrupt */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, out, sizeof(out), NULL), TERN_CMD_OK);
	CHECK_EQ(rd32(out + OFF(struct tern_cmd_query_port_out, link_up)), 1);
	CHECK_EQ(rd32(out + OFF(struct tern_cmd_query_port_out, link_speed_mbps)), 25000);
	fk_fini(&f);
}

/* Command ring unreachable: FATAL, FATAL event on the ASYNC EQ, recovery by reset. */
static void t_fatal_cmdq_dma(void)
{
	struct fake f;
	struct drv_ring eq;
	uint8_t type;
	uint32_t d0, st;
	struct cqe c;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	REQUIRE(drv_eq_create(&f, &eq, 4, 2, TERN_EQ_F_ASYNC, false) == TERN_CMD_OK);
	drv_eq_arm(&f, &eq);
	/* move the command ring somewhere unmapped (well-formed address) */
	wreg(&f, TERN_REG_CMDQ_SQ_LO, (uint32_t)FK_BAD_ADDR);
	wreg(&f, TERN_REG_CMDQ_SQ_HI, (uint32_t)(FK_BAD_ADDR >> 32));
	wreg(&f, TERN_REG_CMDQ_CFG, TERN_CMDQ_CFG_ENABLE | 3);
	REQUIRE(rreg(&f, TERN_REG_CMDQ_STATUS) == TERN_CMDQ_STATUS_ENABLED);
	db(&f, TERN_DB_CMDQ, 1);
	fk_run(&f);
	st = rreg(&f, TERN_REG_STATUS);
	CHECK(st & TERN_STATUS_FATAL);
	CHECK_EQ(st >> TERN_STATUS_SYNDROME_SHIFT, TERN_FATAL_CMDQ_DMA);
	CHECK(rreg(&f, TERN_REG_CMDQ_STATUS) & TERN_CMDQ_STATUS_ERROR);
	CHECK(drv_eq_poll(&f, &eq, &type, &d0));
	CHECK_EQ(type, TERN_EQE_FATAL);
	CHECK_EQ(d0, TERN_FATAL_CMDQ_DMA);
	CHECK_EQ(f.msix[2], 1);
	/* dead until reset: further doorbells, events and frames do nothing */
	db(&f, TERN_DB_CMDQ, 2);
	fk_run(&f);
	tern_model_set_link(f.m, false);
	tern_model_set_link(f.m, true);
	CHECK(!drv_eq_poll(&f, &eq, NULL, NULL));
	/* the command queue cannot be re-enabled while fatal */
	REQUIRE(!drv_cmdq_enable(&f, 3));
	/* reset recovers */
	wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
	fk_advance(&f, 2000000);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS), TERN_STATUS_READY | TERN_STATUS_LINK_UP);
	REQUIRE(drv_cmdq_enable(&f, 3));
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	fk_fini(&f);
}

/* Completion ring unreachable: FATAL too. */
static void t_fatal_cq_dma(void)
{
	struct fake f;
	uint64_t sq = 0;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	sq = f.sq;
	wreg(&f, TERN_REG_CMDQ_CQ_LO, (uint32_t)FK_BAD_ADDR);
	wreg(&f, TERN_REG_CMDQ_CQ_HI, (uint32_t)(FK_BAD_ADDR >> 32));
	wreg(&f, TERN_REG_CMDQ_CFG, TERN_CMDQ_CFG_ENABLE | 3);
	REQUIRE(rreg(&f, TERN_REG_CMDQ_STATUS) == TERN_CMDQ_STATUS_ENABLED);
	f.sq_pi = 0;
	drv_cmd_post(&f, TERN_CMD_QUERY_PORT, 1, NULL, 0, 0, 64, f.out_mb);
	drv_cmd_post(&f, TERN_CMD_QUERY_PORT, 2, NULL, 0, 0, 64, f.out_mb);
	drv_cmd_ring(&f);
	fk_run(&f);
	CHECK(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_FATAL);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) >> TERN_STATUS_SYNDROME_SHIFT, TERN_FATAL_CMDQ_DMA);
	/* processing stopped at the first failure: one CQ write attempt (split in two) */
	CHECK(f.dma_faults >= 1 && f.dma_faults <= 2);
	(void)sq;
	/* a frame arriving now is consumed and dropped, not queued */
	uint8_t frame[60] = { 0 };
	memcpy(frame, test_mac, 6);
	CHECK_EQ(tern_model_rx_frame(f.m, frame, sizeof(frame)), sizeof(frame));
	fk_fini(&f);
}

/* An EQ whose ring is unreachable: FATAL with EQ_DMA, reported on the ASYNC EQ. */
static void t_fatal_eq_dma(void)
{
	struct fake f;
	struct drv_ring async;
	uint8_t in[sizeof(struct tern_cmd_create_eq_in)] = { 0 };
	uint8_t type;
	uint32_t d0;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	REQUIRE(drv_eq_create(&f, &async, 4, 1, TERN_EQ_F_ASYNC, false) == TERN_CMD_OK);
	/* well-formed but unmapped ring: accepted (the device only finds out when it writes) */
	wr64(in + OFF(struct tern_cmd_create_eq_in, mem) + OFF(struct tern_mem_desc, addr),
	     FK_BAD_ADDR);
	wr32(in + OFF(struct tern_cmd_create_eq_in, mem) + OFF(struct tern_mem_desc, npages), 1);
	in[OFF(struct tern_cmd_create_eq_in, mem) + OFF(struct tern_mem_desc, page_shift)] = 12;
	in[OFF(struct tern_cmd_create_eq_in, log_depth)] = 4;
	wr16(in + OFF(struct tern_cmd_create_eq_in, flags), TERN_EQ_F_CMD);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_CREATE_EQ, in, sizeof(in), NULL, 0, NULL), TERN_CMD_OK);
	/* the CREATE_EQ completion itself was written, then its event faulted */
	CHECK(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_FATAL);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) >> TERN_STATUS_SYNDROME_SHIFT, TERN_FATAL_EQ_DMA);
	CHECK(drv_eq_poll(&f, &async, &type, &d0));
	CHECK_EQ(type, TERN_EQE_FATAL);
	CHECK_EQ(d0, TERN_FATAL_EQ_DMA);
	CHECK_EQ(rreg(&f, TERN_REG_CMDQ_STATUS) & TERN_CMDQ_STATUS_ERROR, 0);
	fk_fini(&f);
}

/*
 * A guest can make the device warn at will (here: doorbells for a queue that does not exist):
 * at most 64 lines a second of device time, then one line with the number left out.
 */
static void t_log_rate_limit(void)
{
	struct fake f;
	unsigned long logs;
	unsigned int i;

	fk_init(&f, false);
	logs = f.logs;
	for (i = 0; i < 1000; i++)
		tern_model_mmio_write(f.m, 2, TERN_DB_ETH_TXQ(100), i, 4);
	CHECK_EQ(f.logs - logs, 64);
	f.now += 999999999;
	tern_model_mmio_write(f.m, 2, TERN_DB_ETH_TXQ(100), 1, 4);
	CHECK_EQ(f.logs - logs, 64);		/* the same second */
	f.now += 1;
	tern_model_mmio_write(f.m, 2, TERN_DB_ETH_TXQ(100), 1, 4);
	CHECK_EQ(f.logs - logs, 66);		/* the count, then the line */
	CHECK(strstr(f.last_log, "does not exist") != NULL);
	/* errors always go out: the fatal state (a command ring that cannot be read) */
	for (i = 0; i < 100; i++)
		tern_model_mmio_write(f.m, 2, TERN_DB_ETH_TXQ(100), i, 4);
	REQUIRE(drv_cmdq_enable(&f, 3));
	wreg(&f, TERN_REG_CMDQ_SQ_LO, (uint32_t)FK_BAD_ADDR);
	wreg(&f, TERN_REG_CMDQ_SQ_HI, (uint32_t)(FK_BAD_ADDR >> 32));
	wreg(&f, TERN_REG_CMDQ_CFG, TERN_CMDQ_CFG_ENABLE | 3);
	logs = f.logs;
	db(&f, TERN_DB_CMDQ, 1);
	fk_run(&f);
	CHECK(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_FATAL);
	CHECK(f.logs > logs);
	CHECK(strstr(f.last_log, "fatal device error") != NULL);
	fk_fini(&f);
}

static uint64_t clock_read(struct fake *f)
{
	return tern_model_mmio_read(f->m, TERN_BAR_REGS, TERN_REG_CLOCK_LO, 8);
}

static void clock_cmd(struct fake *f, uint32_t cmd, uint64_t arg)
{
	wreg(f, TERN_REG_CLOCK_ARG_LO, (uint32_t)arg);
	wreg(f, TERN_REG_CLOCK_ARG_HI, (uint32_t)(arg >> 32));
	wreg(f, TERN_REG_CLOCK_CMD, cmd);
}

/*
 * The device clock: nanoseconds of host time since power-on, one sample per access (a
 * 64-bit read agrees with its halves), stepped by SET and ADJUST, its rate moved by FREQ
 * within +-10^8 ppb (anything else ignored), kept across CTRL.RESET and FLR.
 */
static void t_clock(void)
{
	struct fake f;
	uint64_t t, t0;
	unsigned int i;

	fk_init(&f, false);
	t0 = clock_read(&f);
	f.now += 1000;
	CHECK_EQ(clock_read(&f), t0 + 1000);
	CHECK_EQ(rreg(&f, TERN_REG_CLOCK_LO), (uint32_t)(t0 + 1000));
	CHECK_EQ(rreg(&f, TERN_REG_CLOCK_HI), (uint32_t)((t0 + 1000) >> 32));
	/* the rest of the clock page reads 0 and ignores writes */
	CHECK_EQ(rreg(&f, TERN_CLOCK_PAGE + 8), 0);
	wreg(&f, TERN_REG_CLOCK_LO, 5);
	CHECK_EQ(clock_read(&f), t0 + 1000);

	/* SET, across the 32-bit boundary; the clock runs on from there */
	clock_cmd(&f, TERN_CLOCK_CMD_SET, 0x1fffffff0ull);
	CHECK_EQ(clock_read(&f), 0x1fffffff0ull);
	f.now += 0x20;
	CHECK_EQ(clock_read(&f), 0x200000010ull);
	CHECK_EQ(rreg(&f, TERN_REG_CLOCK_HI), 2);
	CHECK_EQ(rreg(&f, TERN_REG_CLOCK_LO), 0x10);
	CHECK_EQ(rreg(&f, TERN_REG_CLOCK_CMD), 0);
	CHECK_EQ(rreg(&f, TERN_REG_CLOCK_ARG_HI), 1);

	/* ADJUST by a signed step, both ways */
	clock_cmd(&f, TERN_CLOCK_CMD_ADJUST, 1000000);
	CHECK_EQ(clock_read(&f), 0x200000010ull + 1000000);
	clock_cmd(&f, TERN_CLOCK_CMD_ADJUST, (uint64_t)-3000000ll);
	CHECK_EQ(clock_read(&f), 0x200000010ull - 2000000);
	/* an unknown command changes nothing */
	clock_cmd(&f, 3, 77);
	CHECK_EQ(clock_read(&f), 0x200000010ull - 2000000);

	/* FREQ: +1000 ppb gains 1 us a second, -10^8 ppb runs at 0.9 */
	clock_cmd(&f, TERN_CLOCK_CMD_SET, 0);
	wreg(&f, TERN_REG_CLOCK_FREQ, 1000);
	CHECK_EQ(rreg(&f, TERN_REG_CLOCK_FREQ), 1000);
	f.now += 1000000000;
	CHECK_EQ(clock_read(&f), 1000001000);
	wreg(&f, TERN_REG_CLOCK_FREQ, (uint32_t)-TERN_CLOCK_MAX_ADJ_PPB);
	f.now += 1000000000;
	CHECK_EQ(clock_read(&f), 1000001000 + 900000000);
	/* out of range: ignored (and logged), the rate stays */
	wreg(&f, TERN_REG_CLOCK_FREQ, TERN_CLOCK_MAX_ADJ_PPB + 1);
	wreg(&f, TERN_REG_CLOCK_FREQ, 0x80000000u);
	CHECK_EQ(rreg(&f, TERN_REG_CLOCK_FREQ), (uint32_t)-TERN_CLOCK_MAX_ADJ_PPB);
	CHECK(strstr(f.last_log, "out of range") != NULL);
	/* never backwards as time goes on, whatever the rate and the interval */
	wreg(&f, TERN_REG_CLOCK_FREQ, (uint32_t)-99999999);
	t = clock_read(&f);
	for (i = 0; i < 1000; i++) {
		uint64_t u;

		f.now += 1 + i * 7919;
		u = clock_read(&f);
		CHECK(u >= t);
		t = u;
	}
	/* a very long interval at the largest rate does not overflow */
	wreg(&f, TERN_REG_CLOCK_FREQ, TERN_CLOCK_MAX_ADJ_PPB);
	clock_cmd(&f, TERN_CLOCK_CMD_SET, 0);
	f.now += 1000000000ull * 1000000;	/* 10^6 s */
	CHECK_EQ(clock_read(&f), 1100000000ull * 1000000);

	/* resets leave the clock and its rate alone */
	wreg(&f, TERN_REG_CLOCK_FREQ, 0);
	clock_cmd(&f, TERN_CLOCK_CMD_SET, 5000);
	wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
	wreg(&f, TERN_REG_CLOCK_FREQ, 500);	/* ignored while resetting */
	fk_advance(&f, 2000000);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_READY, TERN_STATUS_READY);
	CHECK_EQ(clock_read(&f), 5000 + 2000000);
	CHECK_EQ(rreg(&f, TERN_REG_CLOCK_FREQ), 0);
	tern_model_reset(f.m);
	CHECK_EQ(clock_read(&f), 5000 + 2000000);
	fk_fini(&f);
}

const struct test device_tests[] = {
	{ "registers at power-on: identity, READY, scratch, unknown offsets", t_power_on_registers },
	{ "MMIO access sizes: narrow/wide reads, split 64-bit writes, bad writes ignored",
	  t_mmio_sizes },
	{ "CTRL.RESET handshake: RESET reads 1, READY 0 for ~1 ms of model time", t_reset_handshake },
	{ "PCI reset forgets queues and delayed commands, keeps link", t_pci_reset },
	{ "command queue config: bad depth/address -> ERROR, good -> ENABLED", t_cmdq_config },
	{ "commands run in tern_model_run, never in the doorbell write", t_commands_not_in_mmio },
	{ "link change: STATUS.LINK_UP, LINK_CHANGE events, QUERY_PORT", t_link_change },
	{ "command ring DMA fault -> FATAL + event; reset recovers", t_fatal_cmdq_dma },
	{ "completion ring DMA fault -> FATAL; RX frames dropped while fatal", t_fatal_cq_dma },
	{ "EQ ring DMA fault -> FATAL EQ_DMA on the ASYNC EQ", t_fatal_eq_dma },
	{ "warnings a guest can cause are rate-limited, with the number left out", t_log_rate_limit },
	{ "device clock: 64-bit ns, SET/ADJUST, bounded FREQ, monotonic, kept across resets",
	  t_clock },
	{ NULL, NULL },
};
