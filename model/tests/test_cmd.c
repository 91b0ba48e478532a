/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The firmware command processor. */
#include <stdlib.h>

#include "tests.h"

#define QD(field) OFF(struct tern_cmd_query_device_out, field)

static void t_query_device(void)
{
	struct fake f;
	uint8_t out[sizeof(struct tern_cmd_query_device_out)];
	struct cqe c;
	unsigned int i;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	memset(out, 0x55, sizeof(out));
	REQUIRE(drv_cmd(&f, TERN_CMD_QUERY_DEVICE, NULL, 0, out, sizeof(out), &c) == TERN_CMD_OK);
	CHECK_EQ(c.out_len, 112);
	CHECK_EQ(c.syndrome, 0);
	CHECK_EQ(c.sq_ci, 1);
	CHECK_EQ(rd32(out + QD(fw_version)), rreg(&f, TERN_REG_FW_VERSION));
	CHECK_EQ(rd32(out + QD(caps)), TERN_DEV_CAP_ETH | TERN_DEV_CAP_RDMA | TERN_DEV_CAP_DCB |
					 TERN_DEV_CAP_ETH_OFFLOAD | TERN_DEV_CAP_ETH_MODERATION |
					 TERN_DEV_CAP_ETH_RSS | TERN_DEV_CAP_ETH_LRO |
					 TERN_DEV_CAP_CLOCK | TERN_DEV_CAP_ETH_TS);
	CHECK(!strcmp((char *)out + QD(serial), "SN-TEST-0001"));
	CHECK(!strcmp((char *)out + QD(board_id), "TERN-EMU-1"));
	CHECK(!memcmp(out + QD(mac), test_mac, 6));
	CHECK_EQ(rd16(out + QD(max_mtu)), 9600);
	CHECK_EQ(rd16(out + QD(min_mtu)), 68);
	CHECK_EQ(out[QD(max_eqs)], 16);
	CHECK_EQ(out[QD(max_eth_txqs)], 16);
	CHECK_EQ(out[QD(max_eth_rxqs)], 16);
	CHECK_EQ(out[QD(num_msix)], 8);
	CHECK_EQ(out[QD(max_eq_log)], 12);
	CHECK_EQ(out[QD(max_eth_log)], 12);
	CHECK_EQ(rd16(out + QD(num_db_pages)), 256);
	CHECK_EQ(rd32(out + QD(link_speed_mbps)), 25000);
	CHECK_EQ(rd16(out + QD(max_eth_moder_period)), 4095);
	CHECK_EQ(rd16(out + QD(max_eth_moder_frames)), 4095);
	for (i = 0; i < 7; i++)
		CHECK_EQ(rd32(out + QD(rsvd) + 4 * i), 0);
	/* bytes beyond the output are not touched */
	CHECK_EQ(fk_ptr(&f, f.out_mb, 113)[112], 0xaa);
	/* a larger out_len still reports 112 bytes written */
	REQUIRE(drv_cmd(&f, TERN_CMD_QUERY_DEVICE, NULL, 0, NULL, 4096, &c) == TERN_CMD_OK);
	CHECK_EQ(c.out_len, 112);
	fk_fini(&f);
}

static void t_bad_opcode(void)
{
	static const uint16_t ops[] = { 0x0000, 0x0006, 0x0012, 0x0027, 0x00ff, 0x01ff, 0xffff };
	struct fake f;
	struct cqe c;
	unsigned int i;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		CHECK_EQ(drv_cmd(&f, ops[i], NULL, 0, NULL, 64, &c), TERN_CMD_BAD_OPCODE);
		CHECK_EQ(c.out_len, 0);
		CHECK_EQ(c.result, 0);
	}
	/* the device carries on */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	fk_fini(&f);
}

static void t_bad_in_len(void)
{
	static const struct {
		uint16_t op, in_len;
		uint32_t expect;
	} cases[] = {
		{ TERN_CMD_QUERY_DEVICE, 4, 0 },
		{ TERN_CMD_QUERY_PORT, 1, 0 },
		{ TERN_CMD_QUERY_ETH_STATS, 64, 0 },
		{ TERN_CMD_SET_PORT, 8, 12 },
		{ TERN_CMD_SET_PORT, 16, 12 },
		{ TERN_CMD_CREATE_EQ, 20, 24 },
		{ TERN_CMD_CREATE_EQ, 48, 24 },
		{ TERN_CMD_DESTROY_EQ, 0, 4 },
		{ TERN_CMD_CREATE_ETH_TXQ, 23, 24 },
		{ TERN_CMD_CREATE_ETH_RXQ, 25, 24 },
		{ TERN_CMD_DESTROY_ETH_TXQ, 8, 4 },
		{ TERN_CMD_DESTROY_ETH_RXQ, 2, 4 },
		{ TERN_CMD_NOP, 0, 16 },
		{ TERN_CMD_NOP, 15, 16 },
		{ TERN_CMD_NOP, 4097, 4096 },
		{ TERN_CMD_NOP, 0xffff, 4096 },
	};
	static uint8_t zeros[TERN_CMD_MAX_IN];
	struct fake f;
	struct cqe c;
	unsigned int i;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		drv_cmd_post(&f, cases[i].op, (uint16_t)(100 + i), zeros, cases[i].in_len, f.in_mb,
			     64, f.out_mb);
		drv_cmd_ring(&f);
		fk_run(&f);
		REQUIRE(drv_cmd_poll(&f, &c));
		CHECK_EQ(c.token, 100 + i);
		CHECK_EQ(c.status, TERN_CMD_BAD_LEN);
		CHECK_EQ(c.syndrome, cases[i].expect);
		CHECK_EQ(c.out_len, 0);
	}
	fk_fini(&f);
}

static void t_small_out_len(void)
{
	struct fake f;
	struct cqe c;
	uint8_t nop[40] = { 0 };

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_DEVICE, NULL, 0, NULL, 111, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, 112);
	CHECK_EQ(c.out_len, 0);
	CHECK_EQ(fk_ptr(&f, f.out_mb, 1)[0], 0xaa);	/* nothing written */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_DEVICE, NULL, 0, NULL, 0, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, 112);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 35, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, 36);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_ETH_STATS, NULL, 0, NULL, 175, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, 176);
	/* NOP needs room for its echo */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_NOP, nop, 40, NULL, 23, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, 24);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_NOP, nop, 40, NULL, 24, &c), TERN_CMD_OK);
	CHECK_EQ(c.out_len, 24);
	/* NOP without payload needs no output at all */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_NOP, nop, 16, NULL, 0, &c), TERN_CMD_OK);
	CHECK_EQ(c.out_len, 0);
	fk_fini(&f);
}

/* Expect BAD_PARAM with @off for @in. */
static void expect_param(struct fake *f, uint16_t op, const uint8_t *in, uint16_t len,
			 uint8_t status, uint32_t syndrome, int line)
{
	struct cqe c;
	int st = drv_cmd(f, op, in, len, NULL, 64, &c);

	if (st != status || c.syndrome != syndrome) {
		t_failures++;
		printf("#   line %d: op 0x%04x: status %d syndrome %u, expected %u/%u\n", line, op,
		       st, c.syndrome, status, syndrome);
	}
}
#define EXPECT(op, in, st, syn) expect_param(&f, op, in, sizeof(in), st, syn, __LINE__)

static void t_bad_params(void)
{
	typedef struct tern_cmd_create_eq_in EQ;
	typedef struct tern_cmd_create_eth_queue_in ETH;
	struct fake f;
	uint8_t nop[16], port[12], eq[24], good_eq[24], eth[24], good_eth[24], d4[4];
	struct drv_ring r;
	uint64_t ring;
	const size_t md = OFF(EQ, mem);

	fk_init(&f, true);
	REQUIRE(drv_cmdq_enable(&f, 3));

	/* NOP */
	memset(nop, 0, sizeof(nop));
	wr32(nop, 1u << 4);
	EXPECT(TERN_CMD_NOP, nop, TERN_CMD_BAD_PARAM, 0);
	wr32(nop, 0x80000000u);
	EXPECT(TERN_CMD_NOP, nop, TERN_CMD_BAD_PARAM, 0);
	memset(nop, 0, sizeof(nop));
	nop[10] = 1;
	EXPECT(TERN_CMD_NOP, nop, TERN_CMD_BAD_PARAM, 9);
	memset(nop, 0, sizeof(nop));
	wr32(nop, TERN_NOP_F_DELAY);
	wr32(nop + 4, TERN_NOP_MAX_DELAY_US + 1);
	EXPECT(TERN_CMD_NOP, nop, TERN_CMD_BAD_PARAM, 4);
	/* delay_us without the DELAY flag is not looked at */
	wr32(nop, 0);
	EXPECT(TERN_CMD_NOP, nop, TERN_CMD_OK, 0);

	/* SET_PORT */
	memset(port, 0, sizeof(port));
	wr16(port + 4, 1500);
	memcpy(port + 6, test_mac, 6);
	EXPECT(TERN_CMD_SET_PORT, port, TERN_CMD_OK, 0);
	wr32(port, 16);			/* the first flag not defined */
	EXPECT(TERN_CMD_SET_PORT, port, TERN_CMD_BAD_PARAM, 0);
	wr32(port, 0);
	wr16(port + 4, 67);
	EXPECT(TERN_CMD_SET_PORT, port, TERN_CMD_BAD_PARAM, 4);
	wr16(port + 4, 9601);
	EXPECT(TERN_CMD_SET_PORT, port, TERN_CMD_BAD_PARAM, 4);
	wr16(port + 4, 9600);
	port[6] = 0x01;		/* multicast */
	EXPECT(TERN_CMD_SET_PORT, port, TERN_CMD_BAD_PARAM, 6);
	memset(port + 6, 0, 6);
	EXPECT(TERN_CMD_SET_PORT, port, TERN_CMD_BAD_PARAM, 6);

	/* CREATE_EQ: a good one first, then one bad field at a time */
	ring = fk_alloc(&f, 4096, 4096);
	memset(good_eq, 0, sizeof(good_eq));
	wr64(good_eq + md + OFF(struct tern_mem_desc, addr), ring);
	wr32(good_eq + md + OFF(struct tern_mem_desc, npages), 1);
	good_eq[md + OFF(struct tern_mem_desc, page_shift)] = 12;
	good_eq[OFF(EQ, log_depth)] = 4;
	good_eq[OFF(EQ, msix_vector)] = 7;
#define EQCASE(mod, st, syn)                                                              \
	do {                                                                               \
		memcpy(eq, good_eq, sizeof(eq));                                           \
		mod;                                                                       \
		EXPECT(TERN_CMD_CREATE_EQ, eq, st, syn);                                   \
	} while (0)
	EQCASE(eq[OFF(EQ, rsvd) + 3] = 1, TERN_CMD_BAD_PARAM, 20);
	EQCASE(eq[OFF(EQ, log_depth)] = 3, TERN_CMD_BAD_PARAM, 16);
	EQCASE(eq[OFF(EQ, log_depth)] = 13, TERN_CMD_BAD_PARAM, 16);
	EQCASE(eq[OFF(EQ, msix_vector)] = 8, TERN_CMD_BAD_PARAM, 17);
	EQCASE(wr16(eq + OFF(EQ, flags), 4), TERN_CMD_BAD_PARAM, 18);
	EQCASE(eq[md + 14] = 1, TERN_CMD_BAD_PARAM, 14);			/* mem.rsvd */
	EQCASE(eq[md + 13] = 2, TERN_CMD_BAD_PARAM, 13);			/* mem.mode */
	EQCASE(eq[md + 12] = 11, TERN_CMD_BAD_PARAM, 12);			/* page_shift */
	EQCASE(eq[md + 12] = 31, TERN_CMD_BAD_PARAM, 12);
	EQCASE(wr32(eq + md + 8, 0), TERN_CMD_BAD_PARAM, 8);			/* npages */
	EQCASE(wr32(eq + md + 8, 2), TERN_CMD_BAD_PARAM, 8);
	EQCASE(wr32(eq + md + 8, 0xffffffff), TERN_CMD_BAD_PARAM, 8);
	EQCASE(wr64(eq + md, ring + 8), TERN_CMD_BAD_PARAM, 0);			/* misaligned */
	EQCASE(wr64(eq + md, 0), TERN_CMD_BAD_PARAM, 0);
	EQCASE(wr64(eq + md, UINT64_MAX - 63), TERN_CMD_BAD_PARAM, 0);		/* wraps */
	/* page lists: the list must be readable and hold aligned page addresses */
	EQCASE((eq[md + 13] = 1, wr64(eq + md, FK_BAD_ADDR)), TERN_CMD_DMA_ERROR, 0);
	EQCASE((eq[md + 13] = 1, wr64(eq + md, ring + 4)), TERN_CMD_BAD_PARAM, 0);
	wr64(fk_ptr(&f, ring + 2048, 8), ring + 100);
	EQCASE((eq[md + 13] = 1, wr64(eq + md, ring + 2048)), TERN_CMD_BAD_PARAM, 0);
	wr64(fk_ptr(&f, ring + 2048, 8), 0);
	EQCASE((eq[md + 13] = 1, wr64(eq + md, ring + 2048)), TERN_CMD_BAD_PARAM, 0);
	/* nothing was created by any of that */
	memcpy(d4, "\0\0\0\0", 4);
	EXPECT(TERN_CMD_DESTROY_EQ, d4, TERN_CMD_BAD_RESOURCE, 0);

	/* CREATE_ETH_*: needs an EQ */
	REQUIRE(drv_eq_create(&f, &r, 4, 0, 0, false) == TERN_CMD_OK);
	ring = fk_alloc(&f, 4096, 4096);
	memset(good_eth, 0, sizeof(good_eth));
	wr64(good_eth + OFF(ETH, mem), ring);
	wr32(good_eth + OFF(ETH, mem) + 8, 1);
	good_eth[OFF(ETH, mem) + 12] = 12;
	good_eth[OFF(ETH, log_depth)] = 6;
	wr16(good_eth + OFF(ETH, eqn), (uint16_t)r.num);
#define ETHCASE(op, mod, st, syn)                                                         \
	do {                                                                               \
		memcpy(eth, good_eth, sizeof(eth));                                        \
		mod;                                                                       \
		EXPECT(op, eth, st, syn);                                                  \
	} while (0)
	ETHCASE(TERN_CMD_CREATE_ETH_TXQ, eth[OFF(ETH, rsvd0)] = 1, TERN_CMD_BAD_PARAM, 17);
	ETHCASE(TERN_CMD_CREATE_ETH_RXQ, eth[OFF(ETH, moder_period_us) + 1] = 0x10, TERN_CMD_BAD_PARAM,
		20);
	ETHCASE(TERN_CMD_CREATE_ETH_TXQ, eth[OFF(ETH, moder_frames)] = 2, TERN_CMD_BAD_PARAM, 22);
	ETHCASE(TERN_CMD_CREATE_ETH_TXQ, eth[OFF(ETH, log_depth)] = 5, TERN_CMD_BAD_PARAM, 16);
	ETHCASE(TERN_CMD_CREATE_ETH_RXQ, eth[OFF(ETH, log_depth)] = 13, TERN_CMD_BAD_PARAM, 16);
	ETHCASE(TERN_CMD_CREATE_ETH_TXQ, wr16(eth + OFF(ETH, eqn), 3), TERN_CMD_BAD_RESOURCE, 18);
	ETHCASE(TERN_CMD_CREATE_ETH_TXQ, wr16(eth + OFF(ETH, eqn), 999), TERN_CMD_BAD_RESOURCE,
		18);
	ETHCASE(TERN_CMD_CREATE_ETH_RXQ, eth[OFF(ETH, mem) + 14] = 1, TERN_CMD_BAD_PARAM, 14);
	ETHCASE(TERN_CMD_CREATE_ETH_RXQ, eth[OFF(ETH, mem) + 12] = 40, TERN_CMD_BAD_PARAM, 12);
	/* 16 << 9 = 8 KiB needs two 4 KiB pages, not one */
	ETHCASE(TERN_CMD_CREATE_ETH_TXQ, eth[OFF(ETH, log_depth)] = 9, TERN_CMD_BAD_PARAM, 8);
	ETHCASE(TERN_CMD_CREATE_ETH_TXQ, (void)0, TERN_CMD_OK, 0);
	/* destroy of things that do not exist */
	wr32(d4, 5);
	EXPECT(TERN_CMD_DESTROY_ETH_TXQ, d4, TERN_CMD_BAD_RESOURCE, 0);
	EXPECT(TERN_CMD_DESTROY_ETH_RXQ, d4, TERN_CMD_BAD_RESOURCE, 0);
	wr32(d4, 0x80000000u);
	EXPECT(TERN_CMD_DESTROY_ETH_RXQ, d4, TERN_CMD_BAD_RESOURCE, 0);
	EXPECT(TERN_CMD_DESTROY_EQ, d4, TERN_CMD_BAD_RESOURCE, 0);
	fk_fini(&f);
}

static void t_inline_vs_mailbox(void)
{
	struct fake f;
	uint8_t in[TERN_CMD_MAX_IN], out[TERN_CMD_MAX_OUT];
	static const uint16_t lens[] = { 16, 17, 39, 40, 41, 64, 1000, 4095, 4096 };
	unsigned int i, j;
	struct cqe c;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		memset(in, 0, 16);
		for (j = 16; j < lens[i]; j++)
			in[j] = (uint8_t)(j * 7 + i);
		memset(out, 0, sizeof(out));
		CHECK_EQ(drv_cmd(&f, TERN_CMD_NOP, in, lens[i], out, 4096, &c), TERN_CMD_OK);
		CHECK_EQ(c.out_len, lens[i] - 16);
		CHECK(!memcmp(out, in + 16, lens[i] - 16u));
		/* the byte after the echo is untouched */
		CHECK_EQ(fk_ptr(&f, f.out_mb + c.out_len, 1)[0], 0xaa);
	}
	/* inline input is taken from the entry even if in_addr is garbage */
	memset(in, 0, 40);
	in[20] = 0x5a;
	drv_cmd_post(&f, TERN_CMD_NOP, 77, in, 40, FK_BAD_ADDR, 24, f.out_mb);
	drv_cmd_ring(&f);
	fk_run(&f);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.status, TERN_CMD_OK);
	CHECK_EQ(fk_ptr(&f, f.out_mb, 8)[4], 0x5a);
	/* mailbox input is taken from in_addr, not the inline bytes */
	memset(fk_ptr(&f, f.in_mb, 64), 0, 64);
	fk_ptr(&f, f.in_mb, 64)[50] = 0x33;
	drv_cmd_post(&f, TERN_CMD_NOP, 78, NULL, 64, f.in_mb, 48, f.out_mb);
	memset(fk_ptr(&f, f.sq + 64ull * ((f.sq_pi - 1) & 7), 64) + 24, 0x77, 40);
	drv_cmd_ring(&f);
	fk_run(&f);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.status, TERN_CMD_OK);
	CHECK_EQ(c.out_len, 48);
	CHECK_EQ(fk_ptr(&f, f.out_mb, 48)[34], 0x33);
	CHECK_EQ(fk_ptr(&f, f.out_mb, 48)[0], 0);
	fk_fini(&f);
}

static void t_cmd_dma_faults(void)
{
	struct fake f;
	struct cqe c;
	uint8_t in[100] = { 0 };

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 2));
	/* unreachable input mailbox */
	drv_cmd_post(&f, TERN_CMD_NOP, 1, NULL, 100, FK_BAD_ADDR, 100, f.out_mb);
	/* input straddling the end of mapped memory */
	drv_cmd_post(&f, TERN_CMD_NOP, 2, NULL, 100, FK_LOW_BASE + FK_LOW_SIZE - 50, 100,
		     f.out_mb);
	/* unreachable output */
	drv_cmd_post(&f, TERN_CMD_QUERY_DEVICE, 3, NULL, 0, 0, 112, FK_BAD_ADDR);
	memcpy(fk_ptr(&f, f.in_mb, 100), in, 100);
	drv_cmd_post(&f, TERN_CMD_NOP, 4, NULL, 100, f.in_mb, 100, 0);
	drv_cmd_ring(&f);
	fk_run(&f);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 1);
	CHECK_EQ(c.status, TERN_CMD_DMA_ERROR);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 2);
	CHECK_EQ(c.status, TERN_CMD_DMA_ERROR);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 3);
	CHECK_EQ(c.status, TERN_CMD_DMA_ERROR);
	CHECK_EQ(c.out_len, 0);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 4);
	CHECK_EQ(c.status, TERN_CMD_DMA_ERROR);	/* out_addr 0 is not mapped in this arena */
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_FATAL, 0);
	CHECK(f.dma_faults >= 4);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_DEVICE, NULL, 0, NULL, 112, &c), TERN_CMD_OK);
	fk_fini(&f);
}

static void post_nop(struct fake *f, uint16_t token, uint32_t flags, uint32_t delay_us,
		     uint8_t fail_status, uint32_t fail_syn, const void *payload, uint16_t plen,
		     uint64_t out)
{
	uint8_t in[TERN_CMD_MAX_IN] = { 0 };
	uint16_t len = (uint16_t)(16 + plen);

	wr32(in, flags);
	wr32(in + 4, delay_us);
	in[8] = fail_status;
	wr32(in + 12, fail_syn);
	if (plen)
		memcpy(in + 16, payload, plen);
	if (len > TERN_CMD_INLINE_MAX) {
		uint64_t mb = fk_alloc(f, len, 64);

		memcpy(fk_ptr(f, mb, len), in, len);
		drv_cmd_post(f, TERN_CMD_NOP, token, NULL, len, mb, plen, out);
	} else {
		drv_cmd_post(f, TERN_CMD_NOP, token, in, len, 0, plen, out);
	}
}

static void t_delayed_out_of_order(void)
{
	struct fake f;
	struct cqe c;
	uint64_t outa, outb, outc;
	char a[100], b[8], cc[3];

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	memset(a, 'A', sizeof(a));
	memset(b, 'B', sizeof(b));
	memset(cc, 'C', sizeof(cc));
	outa = fk_alloc(&f, 256, 64);
	outb = fk_alloc(&f, 256, 64);
	outc = fk_alloc(&f, 256, 64);
	post_nop(&f, 0xa, TERN_NOP_F_DELAY, 300, 0, 0, a, sizeof(a), outa);
	post_nop(&f, 0xb, TERN_NOP_F_DELAY, 100, 0, 0, b, sizeof(b), outb);
	post_nop(&f, 0xc, 0, 0, 0, 0, cc, sizeof(cc), outc);
	post_nop(&f, 0xd, TERN_NOP_F_DELAY, 0, 0, 0, NULL, 0, 0);	/* delay 0: at once */
	drv_cmd_ring(&f);
	fk_run(&f);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 0xc);
	CHECK_EQ(c.sq_ci, 3);
	CHECK(!memcmp(fk_ptr(&f, outc, 3), cc, 3));
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 0xd);
	CHECK(!drv_cmd_poll(&f, &c));
	/* the delayed outputs are written when they complete */
	CHECK(memcmp(fk_ptr(&f, outb, 8), b, 8) != 0);
	CHECK_EQ(f.deadline, f.now + 100000);
	fk_advance(&f, 99999);
	CHECK(!drv_cmd_poll(&f, &c));
	fk_advance(&f, 1);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 0xb);
	CHECK_EQ(c.status, TERN_CMD_OK);
	CHECK_EQ(c.out_len, 8);
	CHECK_EQ(c.sq_ci, 4);
	CHECK(!memcmp(fk_ptr(&f, outb, 8), b, 8));
	CHECK(!drv_cmd_poll(&f, &c));
	fk_advance(&f, 200000);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 0xa);
	CHECK_EQ(c.out_len, 100);
	CHECK(!memcmp(fk_ptr(&f, outa, 100), a, 100));
	CHECK_EQ(f.deadline, UINT64_MAX);
	/* equal deadlines complete in submission order; max delay accepted */
	post_nop(&f, 1, TERN_NOP_F_DELAY, 50, 0, 0, NULL, 0, 0);
	post_nop(&f, 2, TERN_NOP_F_DELAY, 50, 0, 0, NULL, 0, 0);
	post_nop(&f, 3, TERN_NOP_F_DELAY, TERN_NOP_MAX_DELAY_US, 0, 0, NULL, 0, 0);
	drv_cmd_ring(&f);
	fk_run(&f);
	fk_advance(&f, 50000);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 1);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 2);
	CHECK(!drv_cmd_poll(&f, &c));
	fk_advance(&f, 1000000000ull);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 3);
	fk_fini(&f);
}

static void t_hooks_off(void)
{
	struct fake f;
	struct cqe c;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	post_nop(&f, 1, TERN_NOP_F_FAIL, 0, TERN_CMD_INTERNAL, 42, NULL, 0, 0);
	post_nop(&f, 2, TERN_NOP_F_DROP, 0, 0, 0, NULL, 0, 0);
	post_nop(&f, 3, TERN_NOP_F_DROP | TERN_NOP_F_DELAY, 10, 0, 0, NULL, 0, 0);
	drv_cmd_ring(&f);
	fk_run(&f);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 1);
	CHECK_EQ(c.status, TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, 0);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 2);
	CHECK_EQ(c.status, TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, 0);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 3);
	CHECK_EQ(c.status, TERN_CMD_BAD_PARAM);
	fk_advance(&f, 100000);
	CHECK(!drv_cmd_poll(&f, &c));
	fk_fini(&f);
}

static void t_hooks_on(void)
{
	struct fake f;
	struct cqe c;
	char p[4] = "abc";

	fk_init(&f, true);
	REQUIRE(drv_cmdq_enable(&f, 2));
	post_nop(&f, 1, TERN_NOP_F_FAIL, 0, TERN_CMD_INTERNAL, 42, p, 4, f.out_mb);
	post_nop(&f, 2, TERN_NOP_F_DROP, 0, 0, 0, NULL, 0, 0);
	post_nop(&f, 3, 0, 0, 0, 0, NULL, 0, 0);
	post_nop(&f, 4, TERN_NOP_F_FAIL | TERN_NOP_F_DELAY, 20, TERN_CMD_NO_RESOURCES, 7, NULL, 0,
		 0);
	drv_cmd_ring(&f);
	fk_run(&f);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 1);
	CHECK_EQ(c.status, TERN_CMD_INTERNAL);
	CHECK_EQ(c.syndrome, 42);
	CHECK_EQ(c.out_len, 0);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 3);		/* 2 was dropped */
	CHECK_EQ(c.status, TERN_CMD_OK);
	CHECK_EQ(c.sq_ci, 3);
	CHECK(!drv_cmd_poll(&f, &c));
	fk_advance(&f, 20000);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 4);
	CHECK_EQ(c.status, TERN_CMD_NO_RESOURCES);
	CHECK_EQ(c.syndrome, 7);
	fk_advance(&f, 2000000000ull);
	CHECK(!drv_cmd_poll(&f, &c));
	/* a dropped command does not hold a ring slot: the ring keeps going */
	for (int i = 0; i < 10; i++)
		CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	fk_fini(&f);
}

/*
 * NOP FATAL: the firmware dies in the middle of the command. STATUS.FATAL with the INTERNAL
 * syndrome, one FATAL event on the async EQ, no completion for it or anything behind it; a
 * reset recovers. Without the test hooks: BAD_PARAM and nothing else.
 */
static void t_hooks_fatal(void)
{
	struct fake f;
	struct drv_ring eq;
	struct cqe c;
	uint8_t type;
	uint32_t d0;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	post_nop(&f, 1, TERN_NOP_F_FATAL, 0, 0, 0, NULL, 0, 0);
	drv_cmd_ring(&f);
	fk_run(&f);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.status, TERN_CMD_BAD_PARAM);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_FATAL, 0);
	fk_fini(&f);

	fk_init(&f, true);
	REQUIRE(drv_cmdq_enable(&f, 3));
	REQUIRE(drv_eq_create(&f, &eq, 4, 2, TERN_EQ_F_ASYNC, false) == TERN_CMD_OK);
	drv_eq_arm(&f, &eq);
	post_nop(&f, 1, TERN_NOP_F_FATAL, 0, 0, 0, NULL, 0, 0);
	post_nop(&f, 2, 0, 0, 0, 0, NULL, 0, 0);
	drv_cmd_ring(&f);
	fk_run(&f);
	CHECK(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_FATAL);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) >> TERN_STATUS_SYNDROME_SHIFT, TERN_FATAL_INTERNAL);
	REQUIRE(drv_eq_poll(&f, &eq, &type, &d0));
	CHECK_EQ(type, TERN_EQE_FATAL);
	CHECK_EQ(d0, TERN_FATAL_INTERNAL);
	CHECK(!drv_eq_poll(&f, &eq, NULL, NULL));
	fk_advance(&f, 100000000ull);
	CHECK(!drv_cmd_poll(&f, &c));
	wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
	fk_advance(&f, 2000000);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS), TERN_STATUS_READY | TERN_STATUS_LINK_UP);
	REQUIRE(drv_cmdq_enable(&f, 3));
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	fk_fini(&f);
}

/* Many passes over a small ring with batches of varying size; phases and tokens checked. */
static void t_ring_wrap(void)
{
	struct fake f;
	struct cqe c;
	unsigned int log, done, posted, batch, i;
	uint16_t token;

	for (log = 1; log <= 8; log++) {
		unsigned int depth = 1u << log;
		unsigned int total = depth * 5 + 3;

		fk_init(&f, false);
		REQUIRE(drv_cmdq_enable(&f, log));
		token = 1000;
		done = posted = 0;
		batch = 1;
		while (done < total) {
			uint8_t payload[4];
			unsigned int n = batch;

			if (n > total - posted)
				n = total - posted;
			for (i = 0; i < n; i++) {
				wr32(payload, posted);
				post_nop(&f, (uint16_t)(token + posted), 0, 0, 0, 0, payload, 4,
					 f.out_mb + 4 * (posted % 256));
				posted++;
			}
			drv_cmd_ring(&f);
			fk_run(&f);
			for (i = 0; i < n; i++) {
				uint8_t phase = ((f.cq_ci >> log) & 1) ? 0 : 1;

				if (!drv_cmd_poll(&f, &c)) {
					t_failures++;
					printf("#   log %u: completion %u missing\n", log, done);
					fk_fini(&f);
					return;
				}
				CHECK_EQ(c.flags & 1, phase);
				CHECK_EQ(c.token, (uint16_t)(token + done));
				CHECK_EQ(c.status, 0);
				/* each command completes as soon as it is consumed */
				CHECK_EQ(c.sq_ci, (uint16_t)(done + 1));
				CHECK_EQ(rd32(fk_ptr(&f, f.out_mb + 4 * (done % 256), 4)), done);
				done++;
			}
			CHECK(!drv_cmd_poll(&f, &c));
			batch = batch % depth + 1;
		}
		fk_fini(&f);
	}
}

/* Doorbells that would overfill the ring are ignored. */
static void t_doorbell_flow_control(void)
{
	struct fake f;
	struct cqe c;
	unsigned long logs;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 2));	/* depth 4 */
	logs = f.logs;
	db(&f, TERN_DB_CMDQ, 5);		/* 5 > depth */
	CHECK_EQ(f.kicks, 0);
	CHECK(f.logs > logs);
	db(&f, TERN_DB_CMDQ, 0xffff);		/* behind CI */
	CHECK_EQ(f.kicks, 0);
	/* 2 delayed commands in flight + 3 new ones > depth: ignored until they complete */
	post_nop(&f, 1, TERN_NOP_F_DELAY, 10, 0, 0, NULL, 0, 0);
	post_nop(&f, 2, TERN_NOP_F_DELAY, 10, 0, 0, NULL, 0, 0);
	drv_cmd_ring(&f);
	fk_run(&f);
	post_nop(&f, 3, 0, 0, 0, 0, NULL, 0, 0);
	post_nop(&f, 4, 0, 0, 0, 0, NULL, 0, 0);
	post_nop(&f, 5, 0, 0, 0, 0, NULL, 0, 0);
	drv_cmd_ring(&f);
	fk_run(&f);
	CHECK(!drv_cmd_poll(&f, &c));
	fk_advance(&f, 10000);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 1);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 2);
	CHECK(!drv_cmd_poll(&f, &c));
	drv_cmd_ring(&f);			/* now there is room */
	fk_run(&f);
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 3);
	REQUIRE(drv_cmd_poll(&f, &c));
	REQUIRE(drv_cmd_poll(&f, &c));
	CHECK_EQ(c.token, 5);
	/* re-enabling resets the indices to 0 */
	REQUIRE(drv_cmdq_enable(&f, 2));
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	CHECK_EQ(c.sq_ci, 1);
	fk_fini(&f);
}

static void t_port(void)
{
	typedef struct tern_cmd_query_port_out T;
	struct fake f;
	uint8_t out[sizeof(T)];
	static const uint8_t mac2[6] = { 0x02, 0, 0, 0, 0, 0x99 };

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	REQUIRE(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, out, sizeof(out), NULL) == TERN_CMD_OK);
	CHECK_EQ(rd32(out + OFF(T, flags)), 0);
	CHECK_EQ(rd16(out + OFF(T, mtu)), 1500);
	CHECK(!memcmp(out + OFF(T, mac), test_mac, 6));
	CHECK_EQ(rd32(out + OFF(T, link_up)), 1);
	REQUIRE(drv_set_port(&f, TERN_PORT_F_PROMISC | TERN_PORT_F_ALLMULTI, 9000, mac2) == 0);
	REQUIRE(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, out, sizeof(out), NULL) == TERN_CMD_OK);
	CHECK_EQ(rd32(out + OFF(T, flags)), TERN_PORT_F_PROMISC | TERN_PORT_F_ALLMULTI);
	CHECK_EQ(rd16(out + OFF(T, mtu)), 9000);
	CHECK(!memcmp(out + OFF(T, mac), mac2, 6));
	/* reset restores the defaults */
	wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
	fk_advance(&f, 1000000);
	REQUIRE(drv_cmdq_enable(&f, 3));
	REQUIRE(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, out, sizeof(out), NULL) == TERN_CMD_OK);
	CHECK_EQ(rd32(out + OFF(T, flags)), 0);
	CHECK_EQ(rd16(out + OFF(T, mtu)), 1500);
	CHECK(!memcmp(out + OFF(T, mac), test_mac, 6));
	fk_fini(&f);
}

/* Random ring entries: every one completes (or is refused), nothing crashes. */
static void t_garbage_commands(void)
{
	static const uint16_t ops[] = { 0x0001, 0x0002, 0x0003, 0x0004, 0x0005, 0x0010, 0x0011,
					0x0020, 0x0021, 0x0022, 0x0023, 0x0042 };
	static const uint64_t addrs[] = { 0, FK_BAD_ADDR, FK_LOW_BASE + 0x200000,
					  FK_LOW_BASE + FK_LOW_SIZE - 16, FK_HIGH_BASE,
					  UINT64_MAX - 7 };
	struct fake f;
	struct cqe c;
	unsigned int i, j, completions = 0, seed = 12345;
	uint8_t *sqe;

	fk_init(&f, true);
	REQUIRE(drv_cmdq_enable(&f, 4));
	/* fill part of the arena with random bytes so mailboxes hold garbage */
	for (j = 0; j < 0x10000; j++) {
		seed = seed * 1103515245 + 12345;
		fk_ptr(&f, FK_LOW_BASE + 0x200000 + j, 1)[0] = (uint8_t)(seed >> 16);
	}
	for (i = 0; i < 4000; i++) {
		unsigned int slot = f.sq_pi & 15;

		sqe = fk_ptr(&f, f.sq + 64ull * slot, 64);
		for (j = 0; j < 64; j++) {
			seed = seed * 1103515245 + 12345;
			sqe[j] = (uint8_t)(seed >> 16);
		}
		wr16(sqe, ops[(seed >> 8) % 12]);
		wr16(sqe + 2, (uint16_t)i);
		if (seed & 0x10000)
			wr16(sqe + 4, (uint16_t)(sqe[4] % 48));
		wr16(sqe + 6, (uint16_t)(seed & 0x100 ? 4096 : sqe[6]));
		wr64(sqe + 8, addrs[(seed >> 3) % 6]);
		wr64(sqe + 16, addrs[(seed >> 5) % 6]);
		/* keep delays and drops short-lived/rare */
		if (rd16(sqe) == TERN_CMD_NOP)
			wr32(sqe + 24, rd32(sqe + 24) & TERN_NOP_F_FAIL);
		f.sq_pi++;
		drv_cmd_ring(&f);
		fk_run(&f);
		while (drv_cmd_poll(&f, &c))
			completions++;
		REQUIRE(!(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_FATAL));
	}
	CHECK_EQ(completions, 4000);
	CHECK_EQ(f.msix_bad, 0);
	fk_fini(&f);
}

const struct test cmd_tests[] = {
	{ "QUERY_DEVICE reports identity and limits", t_query_device },
	{ "unknown opcodes -> BAD_OPCODE, queue carries on", t_bad_opcode },
	{ "wrong in_len -> BAD_LEN with the expected length", t_bad_in_len },
	{ "too-small out_len -> BAD_LEN with the needed length, nothing written",
	  t_small_out_len },
	{ "reserved/invalid fields -> BAD_PARAM with byte offset (NOP, SET_PORT, CREATE_*)",
	  t_bad_params },
	{ "inline vs mailbox input, NOP echo byte-exact up to 4096", t_inline_vs_mailbox },
	{ "bad in_addr / out_addr -> DMA_ERROR, not fatal", t_cmd_dma_faults },
	{ "delayed NOPs complete out of order, tokens and outputs matched", t_delayed_out_of_order },
	{ "test hooks off: NOP FAIL/DROP -> BAD_PARAM", t_hooks_off },
	{ "test hooks on: FAIL status/syndrome, DROP never completes, late FAIL", t_hooks_on },
	{ "test hook NOP FATAL: STATUS.FATAL INTERNAL, FATAL event, nothing completes; reset",
	  t_hooks_fatal },
	{ "command ring wrap-around, depth 2..256, phase bits and sq_ci", t_ring_wrap },
	{ "command doorbell beyond depth (incl. delayed in flight) ignored", t_doorbell_flow_control },
	{ "SET_PORT / QUERY_PORT, defaults restored by reset", t_port },
	{ "4000 random ring entries all complete, no crash", t_garbage_commands },
	{ NULL, NULL },
};
