/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Ethernet: TX and RX rings, filtering, counters, backpressure, faults. */
#include <stdlib.h>

#include "tests.h"

#define TXD(f) OFF(struct tern_eth_txd, f)
#define RXD(f) OFF(struct tern_eth_rxd, f)

static const uint8_t other_mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t mcast_mac[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb };

/* Device with a command queue and one EQ (vector 1) for Ethernet events. */
static bool eth_setup(struct fake *f, struct drv_ring *eq)
{
	if (!drv_cmdq_enable(f, 4))
		return false;
	return drv_eq_create(f, eq, 12, 1, 0, false) == TERN_CMD_OK;
}

static void tx_post(struct fake *f, struct drv_ring *q, uint64_t addr, uint16_t len)
{
	uint8_t *d = drv_ring_entry(f, q, q->pi);

	memset(d, 0, 16);
	wr64(d + TXD(addr), addr);
	wr16(d + TXD(len), len);
	q->pi++;
}

static void rx_post(struct fake *f, struct drv_ring *q, uint64_t addr, uint16_t buf_len)
{
	uint8_t *d = drv_ring_entry(f, q, q->pi);

	memset(d, 0, 16);
	wr64(d + RXD(addr), addr);
	wr16(d + RXD(buf_len), buf_len);
	q->pi++;
}

/* Arm first (for the descriptors about to be posted), then ring the producer index. */
static void q_ring(struct fake *f, struct drv_ring *q, bool rx, bool arm)
{
	if (arm)
		drv_ethq_arm(f, q, rx);
	db(f, rx ? TERN_DB_ETH_RXQ(q->num) : TERN_DB_ETH_TXQ(q->num), q->pi & TERN_ETH_DB_PI_MASK);
}

static void make_frame(uint8_t *buf, size_t len, const uint8_t dst[6], unsigned int seed)
{
	size_t i;

	memcpy(buf, dst, 6);
	memcpy(buf + 6, other_mac, 6);
	for (i = 12; i < len; i++)
		buf[i] = (uint8_t)(seed * 31 + i * 7);
}

static unsigned int drain_events(struct fake *f, struct drv_ring *eq, uint8_t want_type,
				 uint32_t want_d0)
{
	unsigned int n = 0;
	uint8_t type;
	uint32_t d0;

	while (drv_eq_poll(f, eq, &type, &d0)) {
		if (type == want_type && d0 == want_d0)
			n++;
	}
	return n;
}

static void tx_wrap(bool page_list)
{
	struct fake f;
	struct drv_ring eq, tx;
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)];
	uint64_t bufs[512];
	unsigned int log = page_list ? 9 : 6, depth = 1u << log;
	unsigned int sent = 0, seen = 0, total = 5 * depth + 17, batch = 1, events = 0, i;
	uint64_t bytes = 0;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(drv_ethq_create(&f, &tx, false, log, eq.num, page_list) == TERN_CMD_OK);
	CHECK_EQ(tx.num, 0);
	for (i = 0; i < depth; i++)
		bufs[i] = fk_alloc(&f, 1518, 2);	/* odd alignment on purpose */
	while (seen < total) {
		unsigned int n = batch;

		if (n > total - sent)
			n = total - sent;
		for (i = 0; i < n; i++) {
			uint16_t len = (uint16_t)(14 + (sent * 37) % (1518 - 14 + 1));
			uint64_t a = bufs[sent % depth];

			make_frame(fk_ptr(&f, a, len), len, other_mac, sent);
			tx_post(&f, &tx, a, len);
			sent++;
		}
		q_ring(&f, &tx, false, true);
		fk_run(&f);
		events += drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num);
		/* everything posted went out, in order, byte for byte; descriptors DONE */
		if (f.nframes != n) {
			t_failures++;
			printf("#   batch of %u: %u frames sent\n", n, f.nframes);
			break;
		}
		for (i = 0; i < n; i++, seen++) {
			uint16_t len = (uint16_t)(14 + (seen * 37) % (1518 - 14 + 1));
			uint8_t expect[1518];
			uint8_t *d = drv_ring_entry(&f, &tx, seen);

			make_frame(expect, len, other_mac, seen);
			CHECK_EQ(f.frames[i].len, len);
			CHECK(f.frames[i].len == len && !memcmp(f.frames[i].data, expect, len));
			CHECK_EQ(rd16(d + TXD(status)), TERN_ETH_DESC_DONE);
			bytes += len;
		}
		fk_clear_frames(&f);
		batch = batch * 3 % depth + 1;
	}
	CHECK_EQ(seen, total);
	/* one event per armed doorbell (each batch) */
	CHECK(events >= 1);
	CHECK(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, tx_frames), total);
	CHECK_EQ(STAT(st, tx_bytes), bytes);
	CHECK_EQ(STAT(st, tx_bad_len), 0);
	CHECK_EQ(STAT(st, tx_dma_errors), 0);
	CHECK_EQ(f.dma_faults, 0);
	fk_fini(&f);
}

static void t_tx_wrap_direct(void)
{
	tx_wrap(false);
}

static void t_tx_wrap_page_list(void)
{
	tx_wrap(true);
}

static void t_tx_events(void)
{
	struct fake f;
	struct drv_ring eq, tx;
	uint64_t buf;
	unsigned int i;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(drv_ethq_create(&f, &tx, false, 6, eq.num, false) == TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &tx, false, 6, eq.num, false) == TERN_CMD_OK);
	CHECK_EQ(tx.num, 1);
	drv_eq_arm(&f, &eq);
	buf = fk_alloc(&f, 64, 64);
	make_frame(fk_ptr(&f, buf, 60), 60, other_mac, 1);
	/* not armed: no event */
	tx_post(&f, &tx, buf, 60);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 1);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, 1), 0);
	CHECK_EQ(f.msix[1], 0);
	/* armed: one event for a batch of 5, one interrupt */
	for (i = 0; i < 5; i++)
		tx_post(&f, &tx, buf, 60);
	q_ring(&f, &tx, false, true);
	fk_run(&f);
	CHECK_EQ(f.nframes, 6);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, 1), 1);
	CHECK_EQ(f.msix[1], 1);
	/* arming with nothing pending: the event comes with the next completion */
	q_ring(&f, &tx, false, true);
	fk_run(&f);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, 1), 0);
	tx_post(&f, &tx, buf, 60);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, 1), 1);
	fk_fini(&f);
}

/*
 * The arm doorbells: an event at once for descriptors finished past the driver's CI, one
 * event per arming, none unarmed; bad arm and producer doorbells ignored and counted.
 */
static void t_arm_doorbell(void)
{
	struct fake f;
	struct drv_ring eq, tx, rx;
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)], fr[60];
	uint64_t buf;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(drv_ethq_create(&f, &tx, false, 6, eq.num, false) == TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == TERN_CMD_OK);
	drv_eq_arm(&f, &eq);
	buf = fk_alloc(&f, 2048, 64);
	make_frame(fk_ptr(&f, buf, 60), 60, other_mac, 1);
	/* not armed: two frames sent, no event */
	tx_post(&f, &tx, buf, 60);
	tx_post(&f, &tx, buf, 60);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 2);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 0);
	CHECK_EQ(f.msix[1], 0);
	/* armed with CI 0 while the device finished 2: one event at once, one interrupt */
	db(&f, TERN_DB_ETH_TXQ_ARM(tx.num), 0);
	fk_run(&f);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 1);
	CHECK_EQ(f.msix[1], 1);
	/* the event disarmed the queue: the next frame raises nothing */
	drv_eq_arm(&f, &eq);
	tx_post(&f, &tx, buf, 60);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 0);
	/* armed with the device's CI (3): nothing at once, one event with the next frame */
	db(&f, TERN_DB_ETH_TXQ_ARM(tx.num), 3);
	fk_run(&f);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 0);
	tx_post(&f, &tx, buf, 60);
	tx_post(&f, &tx, buf, 60);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 5);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 1);
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, db_ignored), 0);

	/* bad arm doorbells: ignored (the queue stays disarmed) and counted */
	drv_eq_arm(&f, &eq);
	db(&f, TERN_DB_ETH_TXQ_ARM(5), 0);			/* no such queue */
	db(&f, TERN_DB_ETH_TXQ_ARM(TERN_DB_ETH_MAX_QUEUES - 1), 0);
	db(&f, TERN_DB_ETH_RXQ_ARM(15), 0);
	db(&f, TERN_DB_ETH_TXQ_ARM(tx.num), 5 | (1u << 16));	/* reserved bits */
	db(&f, TERN_DB_ETH_TXQ_ARM(tx.num), 6);			/* past the device's CI */
	db(&f, TERN_DB_ETH_TXQ_ARM(tx.num), (5 - 65) & 0xffff);	/* a ring behind */
	/* the 1.x ARM bit on the producer doorbell: reserved now, the doorbell ignored */
	tx_post(&f, &tx, buf, 60);
	db(&f, TERN_DB_ETH_TXQ(tx.num), (tx.pi & TERN_ETH_DB_PI_MASK) | (1u << 31));
	fk_run(&f);
	CHECK_EQ(f.nframes, 5);
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, db_ignored), 7);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 6);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 0);
	CHECK_EQ(f.msix[1], 2);

	/* RX: a frame received unarmed is reported by the arming that comes after it */
	rx_post(&f, &rx, buf, 2048);
	rx_post(&f, &rx, buf, 2048);
	q_ring(&f, &rx, true, false);
	make_frame(fr, sizeof(fr), test_mac, 2);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	fk_run(&f);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 0);
	db(&f, TERN_DB_ETH_RXQ_ARM(rx.num), 0);
	fk_run(&f);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 1);
	/* a driver that reaped it arms with CI 1: nothing until the next frame */
	drv_eq_arm(&f, &eq);
	db(&f, TERN_DB_ETH_RXQ_ARM(rx.num), 1);
	fk_run(&f);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 0);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	fk_run(&f);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 1);
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, db_ignored), 7);
	fk_fini(&f);
}

static void t_tx_errors(void)
{
	struct fake f;
	struct drv_ring eq, tx;
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)];
	static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 1 };
	uint64_t buf;
	unsigned long logs;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(drv_ethq_create(&f, &tx, false, 6, eq.num, false) == TERN_CMD_OK);
	buf = fk_alloc(&f, 9618, 64);
	make_frame(fk_ptr(&f, buf, 9618), 9618, other_mac, 3);
	tx_post(&f, &tx, buf, 13);			/* runt */
	tx_post(&f, &tx, buf, 0);
	tx_post(&f, &tx, buf, 1519);			/* MTU 1500 + 18 + 1 */
	tx_post(&f, &tx, buf, 1518);			/* fine */
	tx_post(&f, &tx, FK_BAD_ADDR, 100);		/* unreachable */
	tx_post(&f, &tx, FK_LOW_BASE + FK_LOW_SIZE - 50, 100);	/* straddles the end */
	tx_post(&f, &tx, buf, 14);			/* fine */
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 2);
	CHECK_EQ(rd16(drv_ring_entry(&f, &tx, 0) + TXD(status)), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	CHECK_EQ(rd16(drv_ring_entry(&f, &tx, 1) + TXD(status)), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	CHECK_EQ(rd16(drv_ring_entry(&f, &tx, 2) + TXD(status)), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	CHECK_EQ(rd16(drv_ring_entry(&f, &tx, 3) + TXD(status)), TERN_ETH_DESC_DONE);
	CHECK_EQ(rd16(drv_ring_entry(&f, &tx, 4) + TXD(status)), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	CHECK_EQ(rd16(drv_ring_entry(&f, &tx, 5) + TXD(status)), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	CHECK_EQ(rd16(drv_ring_entry(&f, &tx, 6) + TXD(status)), TERN_ETH_DESC_DONE);
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, tx_bad_len), 3);
	CHECK_EQ(STAT(st, tx_dma_errors), 2);
	CHECK_EQ(STAT(st, tx_frames), 2);
	CHECK_EQ(STAT(st, tx_bytes), 1518 + 14);
	/* jumbo after SET_PORT mtu 9600 */
	REQUIRE(drv_set_port(&f, 0, 9600, mac) == TERN_CMD_OK);
	tx_post(&f, &tx, buf, 9618);
	tx_post(&f, &tx, buf, 9619);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 3);
	CHECK_EQ(f.frames[2].len, 9618);
	CHECK_EQ(rd16(drv_ring_entry(&f, &tx, 8) + TXD(status)), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	/* link down: descriptors complete without sending */
	tern_model_set_link(f.m, false);
	tx_post(&f, &tx, buf, 60);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 3);
	CHECK_EQ(rd16(drv_ring_entry(&f, &tx, 9) + TXD(status)), TERN_ETH_DESC_DONE);
	tern_model_set_link(f.m, true);
	/* doorbell PI beyond CI + depth, or behind CI: ignored */
	logs = f.logs;
	db(&f, TERN_DB_ETH_TXQ(tx.num), (tx.pi + 65) & 0xffff);
	db(&f, TERN_DB_ETH_TXQ(tx.num), (tx.pi - 1) & 0xffff);
	fk_run(&f);
	CHECK(f.logs >= logs + 2);
	CHECK_EQ(f.nframes, 3);
	/* doorbells for queues that do not exist */
	db(&f, TERN_DB_ETH_TXQ(5), 1);
	db(&f, TERN_DB_ETH_TXQ(127), 1);
	db(&f, TERN_DB_ETH_RXQ(15), 1);
	fk_run(&f);
	CHECK_EQ(f.nframes, 3);
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, tx_frames), 3);
	CHECK_EQ(STAT(st, db_ignored), 5);
	fk_fini(&f);
}

/* A TX ring in unreachable memory stops that queue only. */
static void t_tx_ring_fault(void)
{
	typedef struct tern_cmd_create_eth_queue_in T;
	struct fake f;
	struct drv_ring eq, good;
	uint8_t in[sizeof(T)] = { 0 }, st[sizeof(struct tern_cmd_eth_stats_out)];
	struct cqe c;
	uint64_t buf;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	wr64(in + OFF(T, mem), FK_BAD_ADDR);
	wr32(in + OFF(T, mem) + 8, 1);
	in[OFF(T, mem) + 12] = 12;
	in[OFF(T, log_depth)] = 6;
	wr16(in + OFF(T, eqn), (uint16_t)eq.num);
	REQUIRE(drv_cmd(&f, TERN_CMD_CREATE_ETH_TXQ, in, sizeof(in), NULL, 0, &c) == TERN_CMD_OK);
	CHECK_EQ(c.result, 0);
	REQUIRE(drv_ethq_create(&f, &good, false, 6, eq.num, false) == TERN_CMD_OK);
	buf = fk_alloc(&f, 64, 64);
	make_frame(fk_ptr(&f, buf, 60), 60, other_mac, 9);
	db(&f, TERN_DB_ETH_TXQ_ARM(0), 0);
	db(&f, TERN_DB_ETH_TXQ(0), 3);
	tx_post(&f, &good, buf, 60);
	q_ring(&f, &good, false, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 1);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_FATAL, 0);
	db(&f, TERN_DB_ETH_TXQ(0), 4);
	fk_run(&f);
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, tx_dma_errors), 1);
	/* the broken queue can still be destroyed */
	wr32(in, 0);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_ETH_TXQ, in, 4, NULL, 0, &c), TERN_CMD_OK);
	fk_fini(&f);
}

/* One busy queue does not starve the others; work is bounded per run. */
static void t_tx_budget(void)
{
	struct fake f;
	struct drv_ring eq, big, small;
	uint64_t buf;
	unsigned int i;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(drv_ethq_create(&f, &big, false, 12, eq.num, false) == TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &small, false, 6, eq.num, false) == TERN_CMD_OK);
	buf = fk_alloc(&f, 64, 64);
	make_frame(fk_ptr(&f, buf, 60), 60, other_mac, 2);
	for (i = 0; i < 1000; i++)
		tx_post(&f, &big, buf, 60);
	for (i = 0; i < 10; i++)
		tx_post(&f, &small, buf, 61);
	q_ring(&f, &big, false, false);
	q_ring(&f, &small, false, false);
	f.kicks = 0;
	tern_model_run(f.m);
	CHECK(f.nframes < 1000);
	CHECK(f.kicks > 0);			/* asks to be run again */
	for (i = 0; i < f.nframes && f.frames[i].len != 61; i++)
		;
	CHECK(i < f.nframes);			/* the small queue got its turn */
	fk_run(&f);
	CHECK_EQ(f.nframes, 1010);
	CHECK_EQ(rd16(drv_ring_entry(&f, &big, 999) + TXD(status)), TERN_ETH_DESC_DONE);
	fk_fini(&f);
}

static void rx_frame_check(struct fake *f, struct drv_ring *rx, uint32_t idx, uint64_t buf,
			   const uint8_t *frame, size_t len, int line)
{
	uint8_t *d = drv_ring_entry(f, rx, idx);

	if (rd16(d + RXD(status)) != TERN_ETH_DESC_DONE || rd16(d + RXD(pkt_len)) != len ||
	    memcmp(fk_ptr(f, buf, len), frame, len)) {
		t_failures++;
		printf("#   line %d: RX descriptor %u: status %u pkt_len %u (want %zu)\n", line, idx,
		       rd16(d + RXD(status)), rd16(d + RXD(pkt_len)), len);
	}
}
#define RX_CHECK(idx, buf, frame, len) rx_frame_check(&f, &rx, idx, buf, frame, len, __LINE__)

static void rx_delivery(bool page_list)
{
	struct fake f;
	struct drv_ring eq, rx;
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)], fr[9618];
	static const uint8_t new_mac[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee };
	uint64_t bufs[8];
	unsigned int i, idx = 0;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(drv_ethq_create(&f, &rx, true, page_list ? 9 : 6, eq.num, page_list) == 0);
	for (i = 0; i < 8; i++) {
		bufs[i] = fk_alloc(&f, 2048, 64);
		rx_post(&f, &rx, bufs[i], 2048);
	}
	q_ring(&f, &rx, true, true);
	drv_eq_arm(&f, &eq);

	/* unicast to us: delivered, event, interrupt */
	make_frame(fr, 60, test_mac, 1);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 60);
	RX_CHECK(idx, bufs[idx], fr, 60);
	idx++;
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 1);
	CHECK_EQ(f.msix[1], 1);
	/* broadcast and multicast: delivered; no more events until re-armed */
	make_frame(fr, 1518, bcast_mac, 2);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 1518), 1518);
	RX_CHECK(idx, bufs[idx], fr, 1518);
	idx++;
	make_frame(fr, 14, mcast_mac, 3);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 14), 14);
	RX_CHECK(idx, bufs[idx], fr, 14);
	idx++;
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 0);
	/* someone else's unicast: filtered, nothing consumed */
	make_frame(fr, 100, other_mac, 4);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 100), 100);
	CHECK_EQ(rd16(drv_ring_entry(&f, &rx, idx) + RXD(status)), 0);
	/* runt */
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 13), 13);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 1), 1);
	/* longer than MTU + 18 */
	make_frame(fr, 1519, test_mac, 5);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 1519), 1519);
	CHECK_EQ(rd16(drv_ring_entry(&f, &rx, idx) + RXD(status)), 0);
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, rx_frames), 3);
	CHECK_EQ(STAT(st, rx_bytes), 60 + 1518 + 14);
	CHECK_EQ(STAT(st, rx_broadcast), 1);
	CHECK_EQ(STAT(st, rx_multicast), 1);
	CHECK_EQ(STAT(st, rx_filtered), 1);
	CHECK_EQ(STAT(st, rx_runt), 2);
	CHECK_EQ(STAT(st, rx_oversize), 1);
	CHECK_EQ(STAT(st, rx_no_queue), 0);

	/* promiscuous: someone else's unicast is delivered */
	REQUIRE(drv_set_port(&f, TERN_PORT_F_PROMISC, 1500, test_mac) == TERN_CMD_OK);
	make_frame(fr, 100, other_mac, 6);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 100), 100);
	RX_CHECK(idx, bufs[idx], fr, 100);
	idx++;
	/* a new MAC: the old one is filtered, the new one accepted */
	REQUIRE(drv_set_port(&f, TERN_PORT_F_ALLMULTI, 9000, new_mac) == TERN_CMD_OK);
	make_frame(fr, 64, test_mac, 7);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 64), 64);
	make_frame(fr, 64, new_mac, 8);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 64), 64);
	RX_CHECK(idx, bufs[idx], fr, 64);
	idx++;
	/* MTU 9000: a 3000-byte frame passes the MTU check but not the 2048-byte buffer;
	 * the descriptor stays for the next frame */
	make_frame(fr, 3000, new_mac, 9);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 3000), 3000);
	CHECK_EQ(rd16(drv_ring_entry(&f, &rx, idx) + RXD(status)), 0);
	make_frame(fr, 9019, new_mac, 9);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 9019), 9019);
	make_frame(fr, 2048, new_mac, 10);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 2048), 2048);
	RX_CHECK(idx, bufs[idx], fr, 2048);
	idx++;
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, rx_frames), 6);
	CHECK_EQ(STAT(st, rx_filtered), 2);
	CHECK_EQ(STAT(st, rx_oversize), 3);
	fk_fini(&f);
}

static void t_rx_delivery_direct(void)
{
	rx_delivery(false);
}

static void t_rx_delivery_page_list(void)
{
	rx_delivery(true);
}

/* RX ring wrap with many frames over several passes, buffers reposted as consumed. */
static void t_rx_wrap(void)
{
	struct fake f;
	struct drv_ring eq, rx;
	uint8_t fr[1518];
	uint64_t bufs[64];
	unsigned int i, n;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, true) == 0);
	for (i = 0; i < 64; i++) {
		bufs[i] = fk_alloc(&f, 1518, 64);
		rx_post(&f, &rx, bufs[i], 1518);
	}
	q_ring(&f, &rx, true, false);
	for (n = 0; n < 64 * 6; n++) {
		uint16_t len = (uint16_t)(14 + (n * 53) % 1505);

		make_frame(fr, len, test_mac, n);
		if (tern_model_rx_frame(f.m, fr, len) != len) {
			t_failures++;
			printf("#   frame %u not taken\n", n);
			break;
		}
		RX_CHECK(n, bufs[n % 64], fr, len);
		/* repost the buffer (descriptor cleared) */
		rx_post(&f, &rx, bufs[n % 64], 1518);
		q_ring(&f, &rx, true, false);
	}
	fk_fini(&f);
}

/* No RX buffer: the frame is refused (0) and rx_ready comes once buffers are posted. */
static void t_rx_backpressure(void)
{
	struct fake f;
	struct drv_ring eq, rx;
	uint8_t fr[200], st[sizeof(struct tern_cmd_eth_stats_out)], d4[4];
	uint64_t buf;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	make_frame(fr, 200, test_mac, 1);
	/* no RX queue at all: consumed and counted */
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 200), 200);
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == 0);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 200), 0);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 200), 0);
	fk_run(&f);
	CHECK_EQ(f.rx_ready_calls, 0);
	/* a doorbell that posts nothing new does not help */
	q_ring(&f, &rx, true, false);
	fk_run(&f);
	CHECK_EQ(f.rx_ready_calls, 0);
	/* post one buffer: rx_ready once, and the embedding re-delivers from inside it */
	buf = fk_alloc(&f, 2048, 64);
	rx_post(&f, &rx, buf, 2048);
	f.held_frame = fr;
	f.held_len = 200;
	q_ring(&f, &rx, true, false);
	CHECK_EQ(f.rx_ready_calls, 0);		/* not from inside the doorbell write */
	fk_run(&f);
	CHECK_EQ(f.rx_ready_calls, 1);
	CHECK_EQ(f.held_result, 200);
	CHECK(f.held_frame == NULL);
	RX_CHECK(0, buf, fr, 200);
	/* full again; destroying the queue also releases the held frame */
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 200), 0);
	wr32(d4, rx.num);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_ETH_RXQ, d4, 4, NULL, 0, NULL), TERN_CMD_OK);
	CHECK_EQ(f.rx_ready_calls, 2);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 200), 200);
	/* blocked, then link down releases it too; frames while down are dropped */
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == 0);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 200), 0);
	tern_model_set_link(f.m, false);
	fk_run(&f);
	CHECK_EQ(f.rx_ready_calls, 3);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 200), 200);
	tern_model_set_link(f.m, true);
	/* blocked, then CTRL.RESET releases it */
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 200), 0);
	wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
	fk_run(&f);
	CHECK_EQ(f.rx_ready_calls, 4);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 200), 200);	/* not ready: dropped */
	fk_advance(&f, 1000000);
	REQUIRE(drv_cmdq_enable(&f, 3));
	REQUIRE(drv_eth_stats(&f, st));
	/* reset cleared the counters: only the frame dropped while resetting is left */
	CHECK_EQ(STAT(st, rx_no_queue), 1);
	CHECK_EQ(f.msix_bad, 0);
	fk_fini(&f);
}

static void t_rx_dma_fault(void)
{
	struct fake f;
	struct drv_ring eq, rx;
	uint8_t fr[100], st[sizeof(struct tern_cmd_eth_stats_out)];
	uint64_t buf;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == 0);
	buf = fk_alloc(&f, 2048, 64);
	rx_post(&f, &rx, FK_BAD_ADDR, 2048);
	rx_post(&f, &rx, FK_LOW_BASE + FK_LOW_SIZE - 64, 2048);	/* runs off the end */
	rx_post(&f, &rx, buf, 2048);
	q_ring(&f, &rx, true, true);
	make_frame(fr, 100, test_mac, 1);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 100), 100);
	CHECK_EQ(rd16(drv_ring_entry(&f, &rx, 0) + RXD(status)), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	CHECK_EQ(rd16(drv_ring_entry(&f, &rx, 0) + RXD(pkt_len)), 0);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 1);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 100), 100);
	CHECK_EQ(rd16(drv_ring_entry(&f, &rx, 1) + RXD(status)), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 100), 100);
	RX_CHECK(2, buf, fr, 100);
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, rx_dma_errors), 2);
	CHECK_EQ(STAT(st, rx_frames), 1);
	CHECK_EQ(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_FATAL, 0);
	fk_fini(&f);
}

/* The lowest-numbered RX queue receives. */
static void t_rx_lowest_queue(void)
{
	struct fake f;
	struct drv_ring eq, rx0, rx1;
	uint8_t fr[60], d4[4];
	uint64_t b0, b1;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(drv_ethq_create(&f, &rx0, true, 6, eq.num, false) == 0);
	REQUIRE(drv_ethq_create(&f, &rx1, true, 6, eq.num, false) == 0);
	CHECK_EQ(rx1.num, 1);
	b0 = fk_alloc(&f, 2048, 64);
	b1 = fk_alloc(&f, 2048, 64);
	rx_post(&f, &rx1, b1, 2048);
	q_ring(&f, &rx1, true, false);
	make_frame(fr, 60, test_mac, 1);
	/* queue 0 has no buffer: the frame waits, it does not go to queue 1 */
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 0);
	rx_post(&f, &rx0, b0, 2048);
	q_ring(&f, &rx0, true, false);
	fk_run(&f);
	CHECK_EQ(f.rx_ready_calls, 1);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 60);
	CHECK_EQ(rd16(drv_ring_entry(&f, &rx0, 0) + RXD(pkt_len)), 60);
	CHECK_EQ(rd16(drv_ring_entry(&f, &rx1, 0) + RXD(status)), 0);
	/* with queue 0 gone, queue 1 receives */
	wr32(d4, 0);
	REQUIRE(drv_cmd(&f, TERN_CMD_DESTROY_ETH_RXQ, d4, 4, NULL, 0, NULL) == TERN_CMD_OK);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 60);
	CHECK_EQ(rd16(drv_ring_entry(&f, &rx1, 0) + RXD(status)), TERN_ETH_DESC_DONE);
	fk_fini(&f);
}

/* Create/destroy many times, then reset: nothing is left behind. */
static void t_destroy_recreate_reset(void)
{
	struct fake f;
	struct drv_ring eq, tx, rx;
	uint8_t d4[4], fr[60], st[sizeof(struct tern_cmd_eth_stats_out)];
	uint64_t buf;
	unsigned int i;
	unsigned int k;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 4));
	buf = fk_alloc(&f, 2048, 64);
	make_frame(fr, 60, test_mac, 0);
	for (i = 0; i < 40; i++) {
		REQUIRE(drv_eq_create(&f, &eq, 4, i % 8, TERN_EQ_F_ASYNC, i & 1) == 0);
		CHECK_EQ(eq.num, 0);
		REQUIRE(drv_ethq_create(&f, &tx, false, 6, eq.num, i & 1) == 0);
		REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, !(i & 1)) == 0);
		CHECK_EQ(tx.num, 0);
		CHECK_EQ(rx.num, 0);
		tx_post(&f, &tx, buf, 60);
		q_ring(&f, &tx, false, true);
		rx_post(&f, &rx, buf, 2048);
		q_ring(&f, &rx, true, true);
		fk_run(&f);
		CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 60);
		wr32(d4, 0);
		CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_ETH_TXQ, d4, 4, NULL, 0, NULL), 0);
		CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_ETH_RXQ, d4, 4, NULL, 0, NULL), 0);
		CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_EQ, d4, 4, NULL, 0, NULL), 0);
	}
	CHECK_EQ(f.nframes, 40);
	/* state left in place, then reset */
	for (k = 0; k < 3; k++)
		REQUIRE(drv_eq_create(&f, &eq, 4, 0, 0, false) == 0);
	REQUIRE(drv_ethq_create(&f, &tx, false, 6, eq.num, false) == 0);
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == 0);
	wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
	fk_advance(&f, 1000000);
	REQUIRE(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_READY);
	/* the old doorbells do nothing */
	tx_post(&f, &tx, buf, 60);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 40);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 60);	/* no queue: dropped */
	REQUIRE(drv_cmdq_enable(&f, 4));
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, tx_frames), 0);
	CHECK_EQ(STAT(st, rx_frames), 0);
	CHECK_EQ(STAT(st, rx_no_queue), 1);
	wr32(d4, 0);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_ETH_TXQ, d4, 4, NULL, 0, NULL), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_ETH_RXQ, d4, 4, NULL, 0, NULL), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_EQ, d4, 4, NULL, 0, NULL), TERN_CMD_BAD_RESOURCE);
	/* the numbers start from 0 again */
	REQUIRE(drv_eq_create(&f, &eq, 4, 0, TERN_EQ_F_CMD | TERN_EQ_F_ASYNC, false) == 0);
	CHECK_EQ(eq.num, 0);
	/* 16 TX queues max */
	for (k = 0; k < 16; k++)
		CHECK_EQ(drv_ethq_create(&f, &tx, false, 6, eq.num, false), 0);
	CHECK_EQ(drv_ethq_create(&f, &tx, false, 6, eq.num, false), TERN_CMD_NO_RESOURCES);
	fk_fini(&f);
}

/* ---- event moderation ------------------------------------------------------------------- */

#define CQ_IN(f) OFF(struct tern_cmd_create_eth_queue_in, f)
#define MQ_IN(f) OFF(struct tern_cmd_modify_eth_queue_in, f)
#define US 1000ull

/* CREATE_ETH_TXQ/RXQ with moderation bounds; the completion in *@c. */
static int moder_create(struct fake *f, struct drv_ring *q, bool rx, uint32_t eqn,
			uint16_t period_us, uint16_t frames, struct cqe *c)
{
	uint8_t in[sizeof(struct tern_cmd_create_eth_queue_in)] = { 0 };
	int st;

	drv_ring_alloc(f, q, 6, 16, false);
	drv_ring_desc(q, in + CQ_IN(mem));
	in[CQ_IN(log_depth)] = 6;
	wr16(in + CQ_IN(eqn), (uint16_t)eqn);
	wr16(in + CQ_IN(moder_period_us), period_us);
	wr16(in + CQ_IN(moder_frames), frames);
	st = drv_cmd(f, rx ? TERN_CMD_CREATE_ETH_RXQ : TERN_CMD_CREATE_ETH_TXQ, in, sizeof(in),
		     NULL, 0, c);
	if (st == TERN_CMD_OK)
		q->num = c->result;
	return st;
}

static int moder_modify(struct fake *f, bool rx, uint32_t qid, uint16_t period_us,
			uint16_t frames, uint32_t rsvd, struct cqe *c)
{
	uint8_t in[sizeof(struct tern_cmd_modify_eth_queue_in)] = { 0 };

	wr32(in + MQ_IN(qid), qid);
	wr16(in + MQ_IN(moder_period_us), period_us);
	wr16(in + MQ_IN(moder_frames), frames);
	wr32(in + MQ_IN(rsvd), rsvd);
	return drv_cmd(f, rx ? TERN_CMD_MODIFY_ETH_RXQ : TERN_CMD_MODIFY_ETH_TXQ, in, sizeof(in),
		       NULL, 0, c);
}

/* RX: the count bound, the period from the first unreported frame, re-arming. */
static void t_moder_rx(void)
{
	struct fake f;
	struct drv_ring eq, rx;
	struct cqe c;
	uint8_t fr[60], st[sizeof(struct tern_cmd_eth_stats_out)];
	uint64_t bufs[40];
	unsigned int i, idx = 0;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(moder_create(&f, &rx, true, eq.num, 100, 4, &c) == TERN_CMD_OK);
	for (i = 0; i < 40; i++) {
		bufs[i] = fk_alloc(&f, 2048, 64);
		rx_post(&f, &rx, bufs[i], 2048);
	}
	q_ring(&f, &rx, true, true);
	drv_eq_arm(&f, &eq);
	/* frames 1..3: delivered, no event; the 4th: one event, one interrupt */
	for (i = 0; i < 4; i++) {
		make_frame(fr, 60, test_mac, i);
		CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 60);
		RX_CHECK(idx, bufs[idx], fr, 60);
		idx++;
		CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), i == 3 ? 1u : 0u);
	}
	CHECK_EQ(f.msix[1], 1);
	/* not re-armed: frames and time raise nothing */
	for (i = 0; i < 6; i++) {
		make_frame(fr, 60, test_mac, 10 + i);
		CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 60);
		idx++;
	}
	fk_advance(&f, 1000 * US);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 0);
	/* re-armed: frames already in the ring raise nothing; one new frame starts the period */
	drv_eq_arm(&f, &eq);
	q_ring(&f, &rx, true, true);
	fk_run(&f);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 0);
	make_frame(fr, 60, test_mac, 20);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 60);
	RX_CHECK(idx, bufs[idx], fr, 60);
	idx++;
	fk_advance(&f, 60 * US);
	/* a second frame within the period counts but does not move the deadline */
	make_frame(fr, 60, test_mac, 21);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 60);
	idx++;
	/* re-arming while the event is pending changes nothing */
	q_ring(&f, &rx, true, true);
	fk_run(&f);
	fk_advance(&f, 39 * US);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 0);
	fk_advance(&f, 1 * US);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 1);
	CHECK_EQ(f.msix[1], 2);
	/* the timer fires once: nothing more without a new arming */
	fk_advance(&f, 500 * US);
	make_frame(fr, 60, test_mac, 22);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 60);
	idx++;
	fk_advance(&f, 500 * US);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 0);
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, rx_frames), idx);
	CHECK_EQ(STAT(st, eq_overflows), 0);
	fk_fini(&f);
}

/* TX: frames (not descriptors) count; the period alone; MODIFY on a live moderation. */
static void t_moder_tx(void)
{
	struct fake f;
	struct drv_ring eq, tx;
	struct cqe c;
	uint64_t buf;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(moder_create(&f, &tx, false, eq.num, 200, 2, &c) == TERN_CMD_OK);
	drv_eq_arm(&f, &eq);
	buf = fk_alloc(&f, 128, 64);
	make_frame(fk_ptr(&f, buf, 120), 120, other_mac, 1);
	/* a frame in three descriptors counts once: no event yet */
	tx_post(&f, &tx, buf, 40);
	wr16(drv_ring_entry(&f, &tx, tx.pi - 1) + TXD(flags), TERN_ETH_TXD_MORE);
	tx_post(&f, &tx, buf + 40, 40);
	wr16(drv_ring_entry(&f, &tx, tx.pi - 1) + TXD(flags), TERN_ETH_TXD_MORE);
	tx_post(&f, &tx, buf + 80, 40);
	q_ring(&f, &tx, false, true);
	fk_run(&f);
	CHECK_EQ(f.nframes, 1);
	CHECK_EQ(rd16(drv_ring_entry(&f, &tx, 2) + TXD(status)), TERN_ETH_DESC_DONE);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 0);
	/* the second frame: the count is met */
	tx_post(&f, &tx, buf, 60);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 2);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 1);

	/* period only (frames 0): 10 frames, one event 200 us after the first */
	drv_eq_arm(&f, &eq);
	REQUIRE(moder_modify(&f, false, tx.num, 200, 0, 0, &c) == TERN_CMD_OK);
	q_ring(&f, &tx, false, true);
	for (unsigned int i = 0; i < 10; i++) {
		tx_post(&f, &tx, buf, 60);
		q_ring(&f, &tx, false, true);
		fk_run(&f);
		fk_advance(&f, 10 * US);
	}
	CHECK_EQ(f.nframes, 12);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 0);
	fk_advance(&f, 100 * US);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 1);

	/* a moderation under way takes new bounds at once: a shorter period already past */
	drv_eq_arm(&f, &eq);
	q_ring(&f, &tx, false, true);
	tx_post(&f, &tx, buf, 60);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	fk_advance(&f, 50 * US);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 0);
	REQUIRE(moder_modify(&f, false, tx.num, 20, 0, 0, &c) == TERN_CMD_OK);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 1);
	/* and 0/0 posts a pending event at once, then every frame of an armed queue again */
	drv_eq_arm(&f, &eq);
	q_ring(&f, &tx, false, true);
	tx_post(&f, &tx, buf, 60);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 0);
	REQUIRE(moder_modify(&f, false, tx.num, 0, 0, 0, &c) == TERN_CMD_OK);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 1);
	drv_eq_arm(&f, &eq);
	q_ring(&f, &tx, false, true);
	tx_post(&f, &tx, buf, 60);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_TXQ, tx.num), 1);
	CHECK_EQ(f.nframes, 15);
	fk_fini(&f);
}

/* Limits in QUERY_DEVICE; out-of-range values refused with the field's offset. */
static void t_moder_bad_values(void)
{
	typedef struct tern_cmd_query_device_out Q;
	struct fake f;
	struct drv_ring eq, q;
	struct cqe c;
	uint8_t out[sizeof(Q)];

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(drv_cmd(&f, TERN_CMD_QUERY_DEVICE, NULL, 0, out, sizeof(out), &c) == TERN_CMD_OK);
	CHECK(rd32(out + OFF(Q, caps)) & TERN_DEV_CAP_ETH_MODERATION);
	CHECK_EQ(rd16(out + OFF(Q, max_eth_moder_period)), 4095);
	CHECK_EQ(rd16(out + OFF(Q, max_eth_moder_frames)), 4095);
	for (int rx = 0; rx < 2; rx++) {
		CHECK_EQ(moder_create(&f, &q, rx, eq.num, 4096, 0, &c), TERN_CMD_BAD_PARAM);
		CHECK_EQ(c.syndrome, CQ_IN(moder_period_us));
		CHECK_EQ(moder_create(&f, &q, rx, eq.num, 10, 4096, &c), TERN_CMD_BAD_PARAM);
		CHECK_EQ(c.syndrome, CQ_IN(moder_frames));
		/* a count with no period to bound the wait */
		CHECK_EQ(moder_create(&f, &q, rx, eq.num, 0, 2, &c), TERN_CMD_BAD_PARAM);
		CHECK_EQ(c.syndrome, CQ_IN(moder_frames));
		REQUIRE(moder_create(&f, &q, rx, eq.num, 0, 1, &c) == TERN_CMD_OK);
		CHECK_EQ(moder_modify(&f, rx, q.num, 65535, 1, 0, &c), TERN_CMD_BAD_PARAM);
		CHECK_EQ(c.syndrome, MQ_IN(moder_period_us));
		CHECK_EQ(moder_modify(&f, rx, q.num, 8, 65535, 0, &c), TERN_CMD_BAD_PARAM);
		CHECK_EQ(c.syndrome, MQ_IN(moder_frames));
		CHECK_EQ(moder_modify(&f, rx, q.num, 0, 64, 0, &c), TERN_CMD_BAD_PARAM);
		CHECK_EQ(c.syndrome, MQ_IN(moder_frames));
		CHECK_EQ(moder_modify(&f, rx, q.num, 8, 64, 1, &c), TERN_CMD_BAD_PARAM);
		CHECK_EQ(c.syndrome, MQ_IN(rsvd));
		CHECK_EQ(moder_modify(&f, rx, q.num + 1, 8, 64, 0, &c), TERN_CMD_BAD_RESOURCE);
		CHECK_EQ(moder_modify(&f, rx, 1000, 8, 64, 0, &c), TERN_CMD_BAD_RESOURCE);
		CHECK_EQ(moder_modify(&f, rx, q.num, 4095, 4095, 0, &c), TERN_CMD_OK);
	}
	/* wrong length */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_MODIFY_ETH_RXQ, out, 8, NULL, 0, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, sizeof(struct tern_cmd_modify_eth_queue_in));
	fk_fini(&f);
}

/* A pending moderation dies with its queue and with a device reset. */
static void t_moder_destroy_reset(void)
{
	struct fake f;
	struct drv_ring eq, rx;
	struct cqe c;
	uint8_t fr[60], d4[4];
	uint64_t buf;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(moder_create(&f, &rx, true, eq.num, 300, 0, &c) == TERN_CMD_OK);
	buf = fk_alloc(&f, 2048, 64);
	rx_post(&f, &rx, buf, 2048);
	rx_post(&f, &rx, buf, 2048);
	q_ring(&f, &rx, true, true);
	drv_eq_arm(&f, &eq);
	make_frame(fr, 60, test_mac, 1);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 60);
	wr32(d4, rx.num);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_ETH_RXQ, d4, 4, NULL, 0, NULL), 0);
	fk_advance(&f, 1000 * US);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 0);

	/* pending at the reset: gone; a queue made after it is unmoderated */
	REQUIRE(moder_create(&f, &rx, true, eq.num, 300, 0, &c) == TERN_CMD_OK);
	rx_post(&f, &rx, buf, 2048);
	q_ring(&f, &rx, true, true);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 60);
	wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
	fk_advance(&f, 1000000);
	REQUIRE(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_READY);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == TERN_CMD_OK);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 0);
	rx_post(&f, &rx, buf, 2048);
	q_ring(&f, &rx, true, true);
	drv_eq_arm(&f, &eq);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 60), 60);
	CHECK_EQ(drain_events(&f, &eq, TERN_EQE_ETH_RXQ, rx.num), 1);
	fk_fini(&f);
}

static uint64_t dev_clock(struct fake *f)
{
	return tern_model_mmio_read(f->m, TERN_BAR_REGS, TERN_REG_CLOCK_LO, 8);
}

/*
 * Frame timestamps (TERN_DEV_CAP_ETH_TS): TXD_TS on a frame's last descriptor gets the device
 * clock at the MAC over that descriptor's address with DESC_TS, the other descriptors and
 * other frames nothing; TXD_TS elsewhere is a bad frame. PORT_F_RX_TS stamps every frame
 * received instead of the RSS hash, and turns coalescing off.
 */
static void t_timestamps(void)
{
	struct fake f;
	struct drv_ring eq, tx, rx;
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)], fr[1000], out[128];
	struct cqe c;
	uint64_t a, b, rbuf[3];
	uint8_t *d0, *d1;
	unsigned int i;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq));
	REQUIRE(drv_cmd(&f, TERN_CMD_QUERY_DEVICE, NULL, 0, out, sizeof(out), &c) == TERN_CMD_OK);
	REQUIRE(rd32(out + OFF(struct tern_cmd_query_device_out, caps)) & TERN_DEV_CAP_ETH_TS);
	REQUIRE(drv_ethq_create(&f, &tx, false, 6, eq.num, false) == TERN_CMD_OK);
	a = fk_alloc(&f, 600, 8);
	b = fk_alloc(&f, 400, 8);
	make_frame(fk_ptr(&f, a, 600), 600, other_mac, 1);
	make_frame(fk_ptr(&f, b, 400), 400, other_mac, 2);

	/* a frame in two pieces, the time asked on the last */
	f.now += 123456;
	d0 = drv_ring_entry(&f, &tx, tx.pi);
	tx_post(&f, &tx, a, 600);
	wr16(d0 + TXD(flags), TERN_ETH_TXD_MORE);
	d1 = drv_ring_entry(&f, &tx, tx.pi);
	tx_post(&f, &tx, b, 400);
	wr16(d1 + TXD(flags), TERN_ETH_TXD_TS);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 1);
	CHECK(f.nframes == 1 && f.frames[0].len == 1000);
	CHECK_EQ(rd16(d0 + TXD(status)), TERN_ETH_DESC_DONE);
	CHECK_EQ(rd64(d0 + TXD(addr)), a);
	CHECK_EQ(rd16(d1 + TXD(status)), TERN_ETH_DESC_DONE | TERN_ETH_DESC_TS);
	CHECK_EQ(rd64(d1 + TXD(ts)), dev_clock(&f));
	fk_clear_frames(&f);

	/* no TXD_TS: no time, the address left alone */
	d0 = drv_ring_entry(&f, &tx, tx.pi);
	tx_post(&f, &tx, a, 600);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 1);
	CHECK_EQ(rd16(d0 + TXD(status)), TERN_ETH_DESC_DONE);
	CHECK_EQ(rd64(d0 + TXD(addr)), a);
	fk_clear_frames(&f);

	/* TXD_TS with TXD_MORE: a bad frame, not sent, no time */
	d0 = drv_ring_entry(&f, &tx, tx.pi);
	tx_post(&f, &tx, a, 600);
	wr16(d0 + TXD(flags), TERN_ETH_TXD_MORE | TERN_ETH_TXD_TS);
	d1 = drv_ring_entry(&f, &tx, tx.pi);
	tx_post(&f, &tx, b, 400);
	wr16(d1 + TXD(flags), TERN_ETH_TXD_TS);
	q_ring(&f, &tx, false, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 0);
	CHECK_EQ(rd16(d0 + TXD(status)), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	CHECK_EQ(rd16(d1 + TXD(status)), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	CHECK_EQ(rd64(d1 + TXD(addr)), b);
	CHECK(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, tx_timestamps), 1);
	CHECK_EQ(STAT(st, tx_bad_len), 1);

	/* RX: with PORT_F_RX_TS (and LRO asked for too) each frame alone, with its time */
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == TERN_CMD_OK);
	for (i = 0; i < 3; i++) {
		rbuf[i] = fk_alloc(&f, 1518, 64);
		rx_post(&f, &rx, rbuf[i], 1518);
	}
	q_ring(&f, &rx, true, false);
	REQUIRE(drv_set_port(&f, TERN_PORT_F_RX_TS | TERN_PORT_F_LRO, 1500, test_mac) ==
		TERN_CMD_OK);
	for (i = 0; i < 2; i++) {
		f.now += 1000 + i;
		make_frame(fr, 200, test_mac, 10 + i);
		CHECK_EQ(tern_model_rx_frame(f.m, fr, 200), 200);
		d0 = drv_ring_entry(&f, &rx, i);
		CHECK_EQ(rd16(d0 + RXD(status)), TERN_ETH_DESC_DONE | TERN_ETH_DESC_TS);
		CHECK_EQ(rd16(d0 + RXD(pkt_len)), 200);
		CHECK_EQ(rd64(d0 + RXD(ts)), dev_clock(&f));
		CHECK(!memcmp(fk_ptr(&f, rbuf[i], 200), fr, 200));
	}
	/* off again: no time, the address left alone */
	REQUIRE(drv_set_port(&f, 0, 1500, test_mac) == TERN_CMD_OK);
	make_frame(fr, 200, test_mac, 12);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, 200), 200);
	d0 = drv_ring_entry(&f, &rx, 2);
	CHECK_EQ(rd16(d0 + RXD(status)) & TERN_ETH_DESC_TS, 0);
	CHECK_EQ(rd64(d0 + RXD(addr)), rbuf[2]);
	CHECK(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, rx_timestamps), 2);
	CHECK_EQ(STAT(st, rx_lro_frames), 0);
	/* a flag the device does not know is refused */
	CHECK_EQ(drv_set_port(&f, 1u << 4, 1500, test_mac), TERN_CMD_BAD_PARAM);
	fk_fini(&f);
}

const struct test eth_tests[] = {
	{ "TX ring wrap-around, many frames byte-exact (DIRECT ring)", t_tx_wrap_direct },
	{ "TX ring wrap-around, many frames byte-exact (PAGE_LIST ring)", t_tx_wrap_page_list },
	{ "TX completion events only when armed, one per arm", t_tx_events },
	{ "arm doorbells: event at once for work past the CI, bad values ignored and counted",
	  t_arm_doorbell },
	{ "TX bad length / bad buffer -> DONE|ERR + counters; jumbo; link down; bad doorbells",
	  t_tx_errors },
	{ "TX ring DMA fault stops only that queue", t_tx_ring_fault },
	{ "TX work bounded per run, no starvation between queues", t_tx_budget },
	{ "RX delivery, filter, broadcast/multicast, promisc, MAC change, oversize, runt (DIRECT)",
	  t_rx_delivery_direct },
	{ "RX delivery, filter, broadcast/multicast, promisc, MAC change, oversize, runt (PAGE_LIST)",
	  t_rx_delivery_page_list },
	{ "RX ring wrap-around over 6 passes (page list)", t_rx_wrap },
	{ "RX backpressure: 0 without buffers, rx_ready after posting/destroy/link/reset",
	  t_rx_backpressure },
	{ "RX buffer DMA fault -> DONE|ERR, rx_dma_errors, descriptor consumed", t_rx_dma_fault },
	{ "RX goes to the lowest-numbered queue", t_rx_lowest_queue },
	{ "destroy/recreate 40x, reset leaves nothing behind, queue limits", t_destroy_recreate_reset },
	{ "moderation RX: frames counted, period from the first unreported frame, re-arm",
	  t_moder_rx },
	{ "moderation TX: a frame counts once, period only, MODIFY on a live moderation",
	  t_moder_tx },
	{ "moderation limits in QUERY_DEVICE, bad values refused with the field's offset",
	  t_moder_bad_values },
	{ "moderation: a pending event dies with its queue and with a reset", t_moder_destroy_reset },
	{ "frame timestamps: TXD_TS on the last descriptor, PORT_F_RX_TS, bad placement refused",
	  t_timestamps },
	{ NULL, NULL },
};
