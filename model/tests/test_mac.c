/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The MAC: DCB configuration and classification, line-rate serialization, received PFC,
 * the lossless receive buffer with XOFF/XON generation, the storm guard and the counters
 * (include/linux/tern/tern_dcb.h, Documentation/hw/dcb.rst).
 */
#include <stdlib.h>

#include <linux/tern/tern_dcb.h>

#include "tests.h"

#define TXD(f) OFF(struct tern_eth_txd, f)
#define RXD(f) OFF(struct tern_eth_rxd, f)
#define DCB(f) OFF(struct tern_dcb_cfg, f)
#define PS_SIZE sizeof(struct tern_cmd_pfc_stats_out)
/* A per-priority counter, and a port counter, of QUERY_PFC_STATS output @o. */
#define PS(o, p, f)							\
	rd64((o) + OFF(struct tern_cmd_pfc_stats_out, prio) +		\
	     (p) * sizeof(struct tern_pfc_prio_stats) + OFF(struct tern_pfc_prio_stats, f))
#define PT(o, f) rd64((o) + OFF(struct tern_cmd_pfc_stats_out, f))

#define MS	1000000ull
/* 0xffff quanta of 512 bit times at 1 Gb/s, in ns */
#define XOFF_NS_1G	(0xffffull * 512)

static const uint8_t peer_mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
static const uint8_t pfc_dmac[6] = TERN_PFC_DMAC;

/* Device with a command queue and an ASYNC EQ (vector 1) that also takes queue events. */
static bool mac_setup(struct fake *f, struct drv_ring *eq, uint32_t speed, uint32_t burst)
{
	fk_init_cfg(f, false, test_mac, speed, burst);
	if (!drv_cmdq_enable(f, 4))
		return false;
	return drv_eq_create(f, eq, 10, 1, TERN_EQ_F_ASYNC, false) == TERN_CMD_OK;
}

static void dcb_defaults(uint8_t c[sizeof(struct tern_dcb_cfg)])
{
	unsigned int i;

	memset(c, 0, sizeof(struct tern_dcb_cfg));
	for (i = 0; i < TERN_NUM_TC; i++)
		c[DCB(tc_tsa) + i] = TERN_DCB_TSA_ETS;
	c[DCB(tc_bw)] = 100;
	memset(c + DCB(dscp_prio), TERN_DCB_DSCP_UNMAPPED, TERN_NUM_DSCP);
	wr32(c + DCB(rx_buf_bytes), TERN_DCB_DEF_RX_BUF);
	wr32(c + DCB(xoff_bytes), TERN_DCB_DEF_XOFF);
	wr32(c + DCB(xon_bytes), TERN_DCB_DEF_XON);
}

/* Lossless priority 3 with a small buffer: XOFF at 4000 bytes, XON at 2000. */
static void dcb_lossless3(uint8_t c[sizeof(struct tern_dcb_cfg)], uint32_t storm_ms)
{
	dcb_defaults(c);
	c[DCB(pfc_en)] = 1u << 3;
	wr32(c + DCB(rx_buf_bytes), 8000);
	wr32(c + DCB(xoff_bytes), 4000);
	wr32(c + DCB(xon_bytes), 2000);
	wr32(c + DCB(pfc_storm_ms), storm_ms);
}

static int set_dcb(struct fake *f, const uint8_t *c, uint32_t *syndrome)
{
	struct cqe q;
	int st = drv_cmd(f, TERN_CMD_SET_DCB, c, sizeof(struct tern_dcb_cfg), NULL, 0, &q);

	if (syndrome)
		*syndrome = q.syndrome;
	return st;
}

static bool pfc_stats(struct fake *f, uint8_t *o)
{
	return drv_cmd(f, TERN_CMD_QUERY_PFC_STATS, NULL, 0, o, PS_SIZE, NULL) == TERN_CMD_OK;
}

/* ---- frames ---------------------------------------------------------------------------- */

static void put_seq(uint8_t *p, uint32_t seq)
{
	p[0] = (uint8_t)(seq >> 24);
	p[1] = (uint8_t)(seq >> 16);
	p[2] = (uint8_t)(seq >> 8);
	p[3] = (uint8_t)seq;
}

/* 802.1Q-tagged frame of @len bytes with PCP @pcp, a non-IP payload, @seq at byte 18. */
static void vlan_frame(uint8_t *b, size_t len, const uint8_t dst[6], unsigned int pcp,
		       uint32_t seq)
{
	size_t i;

	memcpy(b, dst, 6);
	memcpy(b + 6, peer_mac, 6);
	b[12] = 0x81;
	b[13] = 0x00;
	b[14] = (uint8_t)(pcp << 5);
	b[15] = 7;		/* VID 7 */
	b[16] = 0x88;		/* local experimental EtherType */
	b[17] = 0xb5;
	put_seq(b + 18, seq);
	for (i = 22; i < len; i++)
		b[i] = (uint8_t)(seq * 13 + i);
}

/* Untagged frame: @type 0x0800 (IPv4 with @dscp), 0x86dd (IPv6 with @dscp) or other. */
static void untagged_frame(uint8_t *b, size_t len, uint16_t type, unsigned int dscp, uint32_t seq)
{
	size_t i;

	memset(b, 0, len);
	memcpy(b, peer_mac, 6);
	memcpy(b + 6, test_mac, 6);
	b[12] = (uint8_t)(type >> 8);
	b[13] = (uint8_t)type;
	if (type == 0x0800) {
		b[14] = 0x45;
		b[15] = (uint8_t)(dscp << 2 | 1);	/* ECN bits must not matter */
		b[23] = 6;				/* TCP */
	} else if (type == 0x86dd) {
		b[14] = (uint8_t)(0x60 | (dscp >> 2));
		b[15] = (uint8_t)((dscp & 3) << 6 | 0x20);	/* + ECN bit, flow label bits */
		b[20] = 6;
	}
	put_seq(b + 54, seq);
	for (i = 58; i < len; i++)
		b[i] = (uint8_t)i;
}

/* 802.1Qbb frame: @vec class-enable vector, @t the 8 times (quanta). */
static void pfc_frame(uint8_t b[60], const uint8_t src[6], uint16_t vec, const uint16_t t[8])
{
	unsigned int i;

	memset(b, 0, 60);
	memcpy(b, pfc_dmac, 6);
	memcpy(b + 6, src, 6);
	b[12] = 0x88;
	b[13] = 0x08;
	b[14] = 0x01;
	b[15] = 0x01;
	b[16] = (uint8_t)(vec >> 8);
	b[17] = (uint8_t)vec;
	for (i = 0; i < 8; i++) {
		b[18 + 2 * i] = (uint8_t)(t[i] >> 8);
		b[19 + 2 * i] = (uint8_t)t[i];
	}
}

/* Send a PFC frame for one priority to the device; true if consumed. */
static bool rx_pfc(struct fake *f, unsigned int prio, uint16_t quanta)
{
	uint16_t t[8] = { 0 };
	uint8_t b[60];

	t[prio] = quanta;
	pfc_frame(b, peer_mac, (uint16_t)(1u << prio), t);
	return tern_model_rx_frame(f->m, b, 60) == 60;
}

/* Is captured frame @i exactly the PFC frame the device sends for @prio, @quanta? */
static bool is_our_pfc(struct fake *f, unsigned int i, unsigned int prio, uint16_t quanta)
{
	uint16_t t[8] = { 0 };
	uint8_t b[60];

	if (i >= f->nframes)
		return false;
	t[prio] = quanta;
	pfc_frame(b, test_mac, (uint16_t)(1u << prio), t);
	return f->frames[i].len == 60 && !memcmp(f->frames[i].data, b, 60);
}

/* ---- rings ----------------------------------------------------------------------------- */

static void tx_post(struct fake *f, struct drv_ring *q, const uint8_t *frame, uint16_t len)
{
	uint64_t a = fk_alloc(f, len, 64);
	uint8_t *d = drv_ring_entry(f, q, q->pi);

	memcpy(fk_ptr(f, a, len), frame, len);
	memset(d, 0, 16);
	wr64(d + TXD(addr), a);
	wr16(d + TXD(len), len);
	q->pi++;
}

static void rx_post(struct fake *f, struct drv_ring *q, unsigned int n)
{
	while (n--) {
		uint8_t *d = drv_ring_entry(f, q, q->pi);
		uint64_t a = fk_alloc(f, 2048, 64);

		memset(d, 0, 16);
		wr64(d + RXD(addr), a);
		wr16(d + RXD(buf_len), 2048);
		q->pi++;
	}
}

static void ring(struct fake *f, struct drv_ring *q, bool rx)
{
	db(f, rx ? TERN_DB_ETH_RXQ(q->num) : TERN_DB_ETH_TXQ(q->num), q->pi & TERN_ETH_DB_PI_MASK);
}

/* The sequence number of the frame in RX descriptor @idx, or -1 if not delivered. */
static long rx_seq(struct fake *f, struct drv_ring *q, uint32_t idx)
{
	uint8_t *d = drv_ring_entry(f, q, idx);
	uint8_t *b;

	if (rd16(d + RXD(status)) != TERN_ETH_DESC_DONE)
		return -1;
	b = fk_ptr(f, rd64(d + RXD(addr)), 22);
	return (long)((uint32_t)b[18] << 24 | (uint32_t)b[19] << 16 | (uint32_t)b[20] << 8 | b[21]);
}

/* The next EQE of type @type: subtype and data[0..1]; false if none is left. */
static bool next_event(struct fake *f, struct drv_ring *eq, uint8_t type, uint8_t *sub,
		       uint32_t *d0, uint32_t *d1)
{
	uint8_t e[16];

	while (drv_eq_poll_eqe(f, eq, e)) {
		if (e[OFF(struct tern_eqe, type)] != type)
			continue;
		*sub = e[OFF(struct tern_eqe, subtype)];
		*d0 = rd32(e + OFF(struct tern_eqe, data));
		*d1 = rd32(e + OFF(struct tern_eqe, data) + 4);
		return true;
	}
	return false;
}

/* ---- configuration ---------------------------------------------------------------------- */

static void t_dcb_query_set(void)
{
	struct fake f;
	struct drv_ring eq;
	uint8_t c[sizeof(struct tern_dcb_cfg)], o[sizeof(struct tern_dcb_cfg)], def[sizeof(c)];
	uint8_t dev[sizeof(struct tern_cmd_query_device_out)], ps[PS_SIZE];
	uint8_t port[sizeof(struct tern_cmd_query_port_out)];
	struct cqe q;
	unsigned int i;

	REQUIRE(mac_setup(&f, &eq, 40000, 0));
	/* QUERY_DEVICE: DCB capability, configured link speed; QUERY_PORT too */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_DEVICE, NULL, 0, dev, sizeof(dev), NULL), 0);
	CHECK(rd32(dev + OFF(struct tern_cmd_query_device_out, caps)) & TERN_DEV_CAP_DCB);
	CHECK_EQ(rd32(dev + OFF(struct tern_cmd_query_device_out, link_speed_mbps)), 40000);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, port, sizeof(port), NULL), 0);
	CHECK_EQ(rd32(port + OFF(struct tern_cmd_query_port_out, link_speed_mbps)), 40000);

	/* the reset state */
	dcb_defaults(def);
	memset(o, 0x5a, sizeof(o));
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_DCB, NULL, 0, o, sizeof(o), &q), TERN_CMD_OK);
	CHECK_EQ(q.out_len, sizeof(o));
	CHECK(!memcmp(o, def, sizeof(o)));
	/* output and input lengths */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_DCB, NULL, 0, o, sizeof(o) - 1, &q), TERN_CMD_BAD_LEN);
	CHECK_EQ(q.syndrome, sizeof(o));
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PFC_STATS, NULL, 0, ps, PS_SIZE - 1, &q),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(q.syndrome, PS_SIZE);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_SET_DCB, def, sizeof(def) - 1, NULL, 0, &q),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(q.syndrome, sizeof(def));
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_DCB, def, 4, o, sizeof(o), &q), TERN_CMD_BAD_LEN);

	/* a full round trip, at the limits of every range */
	for (i = 0; i < sizeof(c); i++)
		c[i] = 0;
	c[DCB(pfc_en)] = 0xa5;
	c[DCB(trust)] = TERN_DCB_TRUST_DSCP;
	c[DCB(default_prio)] = 7;
	for (i = 0; i < TERN_NUM_PRIO; i++)
		c[DCB(prio_tc) + i] = (uint8_t)(7 - i);
	c[DCB(tc_tsa) + 0] = TERN_DCB_TSA_STRICT;
	for (i = 1; i < TERN_NUM_TC; i++)
		c[DCB(tc_tsa) + i] = TERN_DCB_TSA_ETS;
	c[DCB(tc_bw) + 1] = 40;
	c[DCB(tc_bw) + 2] = 60;
	for (i = 0; i < TERN_NUM_DSCP; i++)
		c[DCB(dscp_prio) + i] = i % 3 ? TERN_DCB_DSCP_UNMAPPED : (uint8_t)(i % 8);
	wr32(c + DCB(pfc_storm_ms), TERN_DCB_STORM_MAX_MS);
	wr32(c + DCB(rx_buf_bytes), TERN_DCB_MAX_RX_BUF);
	wr32(c + DCB(xoff_bytes), TERN_DCB_MAX_RX_BUF);
	wr32(c + DCB(xon_bytes), TERN_DCB_MAX_RX_BUF - 1);
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_DCB, NULL, 0, o, sizeof(o), NULL), TERN_CMD_OK);
	CHECK(!memcmp(o, c, sizeof(o)));
	/* other valid corners: storm guard minimum, every TC strict (no bandwidth), xon 0 */
	wr32(c + DCB(pfc_storm_ms), TERN_DCB_STORM_MIN_MS);
	memset(c + DCB(tc_tsa), TERN_DCB_TSA_STRICT, TERN_NUM_TC);
	memset(c + DCB(tc_bw), 0, TERN_NUM_TC);
	wr32(c + DCB(rx_buf_bytes), 0);
	wr32(c + DCB(xoff_bytes), 0);
	wr32(c + DCB(xon_bytes), 0);
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_BAD_PARAM);	/* xon < xoff needs xoff >= 1 */
	wr32(c + DCB(rx_buf_bytes), 1);
	wr32(c + DCB(xoff_bytes), 1);
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_DCB, NULL, 0, o, sizeof(o), NULL), TERN_CMD_OK);
	CHECK(!memcmp(o, c, sizeof(o)));
	fk_fini(&f);
}

struct bad_case {
	size_t off;		/* byte to change */
	unsigned int width;	/* 1 or 4 */
	uint32_t val;
	uint32_t syndrome;
	const char *what;
};

static void t_dcb_validation(void)
{
	static const struct bad_case cases[] = {
		{ DCB(trust), 1, 2, DCB(trust), "trust" },
		{ DCB(trust), 1, 0xff, DCB(trust), "trust" },
		{ DCB(default_prio), 1, 8, DCB(default_prio), "default_prio" },
		{ DCB(rsvd0), 1, 1, DCB(rsvd0), "rsvd0" },
		{ DCB(prio_tc) + 0, 1, 8, DCB(prio_tc) + 0, "prio_tc[0]" },
		{ DCB(prio_tc) + 5, 1, 0xff, DCB(prio_tc) + 5, "prio_tc[5]" },
		{ DCB(tc_tsa) + 2, 1, 1, DCB(tc_tsa) + 2, "tc_tsa[2] (CBS)" },
		{ DCB(tc_tsa) + 7, 1, 3, DCB(tc_tsa) + 7, "tc_tsa[7]" },
		{ DCB(tc_bw) + 0, 1, 101, DCB(tc_bw) + 0, "tc_bw[0] > 100" },
		{ DCB(tc_bw) + 0, 1, 90, DCB(tc_bw), "ETS sum 90" },
		{ DCB(tc_bw) + 3, 1, 1, DCB(tc_bw), "ETS sum 101" },
		{ DCB(dscp_prio) + 0, 1, 8, DCB(dscp_prio) + 0, "dscp_prio[0]" },
		{ DCB(dscp_prio) + 63, 1, 0xfe, DCB(dscp_prio) + 63, "dscp_prio[63]" },
		{ DCB(pfc_storm_ms), 4, TERN_DCB_STORM_MIN_MS - 1, DCB(pfc_storm_ms), "storm 9" },
		{ DCB(pfc_storm_ms), 4, TERN_DCB_STORM_MAX_MS + 1, DCB(pfc_storm_ms), "storm big" },
		{ DCB(rx_buf_bytes), 4, TERN_DCB_MAX_RX_BUF + 1, DCB(rx_buf_bytes), "rx_buf > max" },
		{ DCB(rx_buf_bytes), 4, TERN_DCB_DEF_XOFF - 1, DCB(xoff_bytes), "xoff > rx_buf" },
		{ DCB(xoff_bytes), 4, TERN_DCB_DEF_RX_BUF + 1, DCB(xoff_bytes), "xoff > rx_buf" },
		{ DCB(xoff_bytes), 4, TERN_DCB_DEF_XON, DCB(xon_bytes), "xon == xoff" },
		{ DCB(xon_bytes), 4, TERN_DCB_DEF_XOFF + 1, DCB(xon_bytes), "xon > xoff" },
		{ DCB(rsvd1) + 0, 4, 1, DCB(rsvd1) + 0, "rsvd1[0]" },
		{ DCB(rsvd1) + 12, 4, 0x80000000u, DCB(rsvd1) + 12, "rsvd1[3]" },
	};
	struct fake f;
	struct drv_ring eq;
	uint8_t c[sizeof(struct tern_dcb_cfg)], good[sizeof(c)], o[sizeof(c)];
	unsigned int i;
	uint32_t syn;

	REQUIRE(mac_setup(&f, &eq, 0, 0));
	dcb_lossless3(good, 100);
	CHECK_EQ(set_dcb(&f, good, NULL), TERN_CMD_OK);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *b = &cases[i];
		int st;

		dcb_defaults(c);
		if (b->width == 1)
			c[b->off] = (uint8_t)b->val;
		else
			wr32(c + b->off, b->val);
		syn = 0xdead;
		st = set_dcb(&f, c, &syn);
		if (st != TERN_CMD_BAD_PARAM || syn != b->syndrome) {
			t_failures++;
			printf("#   %s: status %d syndrome %u, expected BAD_PARAM %u\n", b->what, st,
			       syn, b->syndrome);
		}
	}
	/* a strict TC with bandwidth, with the ETS ones still summing to 100 */
	dcb_defaults(c);
	c[DCB(tc_tsa) + 4] = TERN_DCB_TSA_STRICT;
	c[DCB(tc_bw) + 4] = 10;
	CHECK_EQ(set_dcb(&f, c, &syn), TERN_CMD_BAD_PARAM);
	CHECK_EQ(syn, DCB(tc_bw) + 4);
	/* several bad fields: the first one (lowest offset) is reported */
	dcb_defaults(c);
	c[DCB(dscp_prio) + 9] = 9;
	c[DCB(prio_tc) + 6] = 9;
	wr32(c + DCB(xon_bytes), 0xffffffff);
	CHECK_EQ(set_dcb(&f, c, &syn), TERN_CMD_BAD_PARAM);
	CHECK_EQ(syn, DCB(prio_tc) + 6);
	/* nothing of a refused SET_DCB was applied */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_DCB, NULL, 0, o, sizeof(o), NULL), TERN_CMD_OK);
	CHECK(!memcmp(o, good, sizeof(o)));
	fk_fini(&f);
}

static void t_dcb_reset(void)
{
	struct fake f;
	struct drv_ring eq, rx;
	uint8_t c[sizeof(struct tern_dcb_cfg)], o[sizeof(c)], def[sizeof(c)], ps[PS_SIZE];
	uint8_t fr[1000];
	unsigned int i, n;

	REQUIRE(mac_setup(&f, &eq, 1000, 0));
	dcb_lossless3(c, 0);
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == TERN_CMD_OK);
	/* buffer frames past XOFF, take a pause from the peer */
	for (i = 0; i < 5; i++) {
		vlan_frame(fr, sizeof(fr), test_mac, 3, i);
		CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	}
	CHECK(rx_pfc(&f, 3, 1000));
	CHECK(is_our_pfc(&f, 0, 3, 0xffff));
	n = f.nframes;
	/* a device reset releases the peer (XON), forgets the buffer, config and counters */
	wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
	CHECK_EQ(f.nframes, n + 1);
	CHECK(is_our_pfc(&f, n, 3, 0));
	fk_advance(&f, 2 * MS);
	REQUIRE(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_READY);
	REQUIRE(drv_cmdq_enable(&f, 4));
	dcb_defaults(def);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_DCB, NULL, 0, o, sizeof(o), NULL), TERN_CMD_OK);
	CHECK(!memcmp(o, def, sizeof(o)));
	CHECK(pfc_stats(&f, ps));
	for (i = 0; i < PS_SIZE; i++) {
		if (ps[i]) {
			t_failures++;
			printf("#   PFC stats byte %u is %u after reset\n", i, ps[i]);
			break;
		}
	}
	/* nothing left running: no timer, no more PFC frames */
	CHECK_EQ(f.deadline, UINT64_MAX);
	n = f.nframes;
	fk_advance(&f, 100 * MS);
	CHECK_EQ(f.nframes, n);
	/* PCI reset (tern_model_reset) too */
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
	tern_model_reset(f.m);
	REQUIRE(drv_cmdq_enable(&f, 4));
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_DCB, NULL, 0, o, sizeof(o), NULL), TERN_CMD_OK);
	CHECK(!memcmp(o, def, sizeof(o)));
	fk_fini(&f);
}

/* ---- classification ---------------------------------------------------------------------- */

static void t_classify(void)
{
	struct fake f;
	struct drv_ring eq, tx;
	uint8_t c[sizeof(struct tern_dcb_cfg)], ps[PS_SIZE], fr[200];
	/* frames: tagged PCP 4 with IPv4 inside; IPv4 DSCP 26, 10 (unmapped); IPv6 DSCP 26, 48;
	 * ARP; IPv4 DSCP 48 */
	static const struct {
		int pcp;	/* < 0: untagged */
		uint16_t type;
		unsigned int dscp;
		unsigned int prio_dscp, prio_pcp;	/* expected with trust DSCP / PCP */
	} k[] = {
		{ 4, 0x0800, 26, 4, 4 },
		{ -1, 0x0800, 26, 3, 5 },
		{ -1, 0x0800, 10, 5, 5 },
		{ -1, 0x86dd, 26, 3, 5 },
		{ -1, 0x86dd, 48, 6, 5 },
		{ -1, 0x0806, 26, 5, 5 },
		{ 0, 0x86dd, 48, 0, 0 },
	};
	unsigned int i, round, p, expect_frames[8] = { 0 };
	uint64_t expect_bytes[8] = { 0 };

	REQUIRE(mac_setup(&f, &eq, 0, FK_UNPACED));
	REQUIRE(drv_ethq_create(&f, &tx, false, 6, eq.num, false) == TERN_CMD_OK);
	dcb_defaults(c);
	c[DCB(default_prio)] = 5;
	c[DCB(dscp_prio) + 26] = 3;
	c[DCB(dscp_prio) + 48] = 6;
	for (round = 0; round < 2; round++) {
		c[DCB(trust)] = round ? TERN_DCB_TRUST_PCP : TERN_DCB_TRUST_DSCP;
		CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
		for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
			size_t len = 100 + i;

			untagged_frame(fr, len, k[i].type, k[i].dscp, i);
			if (k[i].pcp >= 0) {
				/* insert a tag in front of the EtherType */
				memmove(fr + 16, fr + 12, len - 16);
				fr[12] = 0x81;
				fr[13] = 0x00;
				fr[14] = (uint8_t)(k[i].pcp << 5);
				fr[15] = 1;
			}
			tx_post(&f, &tx, fr, (uint16_t)len);
			/* the same frame received counts on the receive side */
			CHECK_EQ(tern_model_rx_frame(f.m, fr, len), len);
			p = round ? k[i].prio_pcp : k[i].prio_dscp;
			expect_frames[p]++;
			expect_bytes[p] += len;
		}
		ring(&f, &tx, false);
		fk_run(&f);
	}
	CHECK_EQ(f.nframes, 2 * sizeof(k) / sizeof(k[0]));
	CHECK(pfc_stats(&f, ps));
	for (p = 0; p < 8; p++) {
		CHECK_EQ(PS(ps, p, tx_frames), expect_frames[p]);
		CHECK_EQ(PS(ps, p, tx_bytes), expect_bytes[p]);
		CHECK_EQ(PS(ps, p, rx_frames), expect_frames[p]);
		CHECK_EQ(PS(ps, p, rx_bytes), expect_bytes[p]);
	}
	fk_fini(&f);
}

/* ---- serialization ---------------------------------------------------------------------- */

static void t_serialize_exact(void)
{
	struct fake f;
	struct drv_ring eq, tx;
	uint8_t fr[1518];
	uint16_t lens[40];
	unsigned int i, n = 40;
	unsigned long kicks;
	uint64_t t0;

	REQUIRE(mac_setup(&f, &eq, 1000, 0));
	REQUIRE(drv_ethq_create(&f, &tx, false, 6, eq.num, false) == TERN_CMD_OK);
	for (i = 0; i < n; i++) {
		lens[i] = (uint16_t)(60 + (i * 397) % 1400);
		untagged_frame(fr, lens[i], 0x0806, 0, i);
		tx_post(&f, &tx, fr, lens[i]);
	}
	t0 = f.now;
	kicks = f.total_kicks;
	ring(&f, &tx, false);
	fk_run(&f);
	/* one frame on the line, the rest wait for the MAC's timer: no spinning */
	CHECK_EQ(f.nframes, 1);
	CHECK_EQ(f.deadline, t0 + (lens[0] + 24) * 8ull);
	CHECK(f.total_kicks - kicks <= 2);
	fk_advance(&f, 100 * MS);
	REQUIRE(f.nframes == n);
	CHECK_EQ(f.frames[0].t, t0);
	for (i = 1; i < n; i++)
		CHECK_EQ(f.frames[i].t - f.frames[i - 1].t, (lens[i - 1] + 24) * 8ull);
	/* one timer and one kick per frame at most */
	CHECK(f.total_kicks - kicks <= 2 * n + 2);
	CHECK_EQ(f.deadline, UINT64_MAX);
	fk_fini(&f);

	/* 25 Gb/s: a 60-byte frame is 26.88 ns; the fraction is kept, never rounded away */
	REQUIRE(mac_setup(&f, &eq, 25000, 0));
	REQUIRE(drv_ethq_create(&f, &tx, false, 8, eq.num, false) == TERN_CMD_OK);
	for (i = 0; i < 200; i++) {
		untagged_frame(fr, 60, 0x0806, 0, i);
		tx_post(&f, &tx, fr, 60);
	}
	t0 = f.now;
	ring(&f, &tx, false);
	fk_run(&f);
	fk_advance(&f, MS);
	REQUIRE(f.nframes == 200);
	for (i = 0; i < 200; i++)
		CHECK_EQ(f.frames[i].t - t0, (i * 672ull * 1000 + 24999) / 25000);
	fk_fini(&f);
}

static void t_serialize_burst(void)
{
	struct fake f;
	struct drv_ring eq, tx;
	uint8_t fr[1000];
	unsigned int i;
	uint64_t t0;

	/* 3000 bytes of allowance = 24 us at 1 Gb/s; frames of 1000 bytes take 8192 ns */
	REQUIRE(mac_setup(&f, &eq, 1000, 3000));
	REQUIRE(drv_ethq_create(&f, &tx, false, 6, eq.num, false) == TERN_CMD_OK);
	for (i = 0; i < 10; i++) {
		untagged_frame(fr, sizeof(fr), 0x0806, 0, i);
		tx_post(&f, &tx, fr, sizeof(fr));
	}
	t0 = f.now;
	ring(&f, &tx, false);
	fk_run(&f);
	/* three go at once (the line runs up to 24576 ns ahead), then one per frame time */
	CHECK_EQ(f.nframes, 3);
	fk_advance(&f, MS);
	REQUIRE(f.nframes == 10);
	for (i = 0; i < 10; i++)
		CHECK_EQ(f.frames[i].t - t0, i < 3 ? 0 : i * 8192ull - 24000);
	/* an idle line gives the whole allowance back */
	fk_clear_frames(&f);
	for (i = 0; i < 4; i++) {
		untagged_frame(fr, sizeof(fr), 0x0806, 0, i);
		tx_post(&f, &tx, fr, sizeof(fr));
	}
	ring(&f, &tx, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 3);
	fk_fini(&f);
}

/* ---- received PFC ------------------------------------------------------------------------- */

static void t_pfc_rx_pause(void)
{
	struct fake f;
	struct drv_ring eq, txa, txb, txc, rx;
	uint8_t c[sizeof(struct tern_dcb_cfg)], fr[100], ps[PS_SIZE], b[60];
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)];
	uint16_t t[8] = { 0 };
	uint64_t t0, t1;
	unsigned long kicks;

	REQUIRE(mac_setup(&f, &eq, 1000, FK_UNPACED));
	dcb_defaults(c);
	c[DCB(pfc_en)] = 1u << 3;
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &txa, false, 6, eq.num, false) == TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &txb, false, 6, eq.num, false) == TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &txc, false, 6, eq.num, false) == TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == TERN_CMD_OK);
	rx_post(&f, &rx, 8);
	ring(&f, &rx, true);
	fk_run(&f);

	/* the peer pauses priority 3 (lossless) for 100 quanta and 5 (lossy) for 200 */
	t0 = f.now;
	t[3] = 100;
	t[5] = 200;
	pfc_frame(b, peer_mac, (1u << 3) | (1u << 5), t);
	CHECK_EQ(tern_model_rx_frame(f.m, b, 60), 60);
	vlan_frame(fr, sizeof(fr), peer_mac, 3, 1);
	tx_post(&f, &txa, fr, sizeof(fr));
	vlan_frame(fr, sizeof(fr), peer_mac, 0, 2);
	tx_post(&f, &txb, fr, sizeof(fr));
	vlan_frame(fr, sizeof(fr), peer_mac, 5, 3);
	tx_post(&f, &txc, fr, sizeof(fr));
	kicks = f.total_kicks;
	ring(&f, &txa, false);
	ring(&f, &txb, false);
	ring(&f, &txc, false);
	fk_run(&f);
	/* priorities 0 and 5 went; 3 waits exactly 100 * 512 ns, without spinning */
	CHECK_EQ(f.nframes, 2);
	CHECK(f.total_kicks - kicks <= 3);
	CHECK_EQ(f.deadline, t0 + 51200);
	fk_advance(&f, 51199);
	CHECK_EQ(f.nframes, 2);
	fk_advance(&f, 1);
	REQUIRE(f.nframes == 3);
	CHECK_EQ(f.frames[2].t, t0 + 51200);
	CHECK_EQ(f.frames[2].data[14] >> 5, 3);

	/* XOFF (0xffff quanta), then XON after 1 us: it goes at once */
	t1 = f.now;
	CHECK(rx_pfc(&f, 3, 0xffff));
	vlan_frame(fr, sizeof(fr), peer_mac, 3, 4);
	tx_post(&f, &txa, fr, sizeof(fr));
	ring(&f, &txa, false);
	fk_run(&f);
	fk_advance(&f, 1000);
	CHECK_EQ(f.nframes, 3);
	CHECK(rx_pfc(&f, 3, 0));
	fk_run(&f);
	REQUIRE(f.nframes == 4);
	CHECK_EQ(f.frames[3].t, t1 + 1000);

	/* 802.3x PAUSE is dropped, never honoured, never a PFC frame; MAC control never reaches RX */
	memcpy(b, pfc_dmac, 6);
	b[15] = 0x01;
	b[14] = 0x00;
	b[16] = 0xff;
	b[17] = 0xff;
	CHECK_EQ(tern_model_rx_frame(f.m, b, 60), 60);
	tx_post(&f, &txa, fr, sizeof(fr));
	ring(&f, &txa, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 5);
	CHECK(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, rx_frames), 0);
	CHECK_EQ(rd16(drv_ring_entry(&f, &rx, 0) + RXD(status)), 0);

	/* counters: prio 5's pause ran out by itself at t0 + 102400 */
	fk_advance(&f, 200000);
	CHECK(pfc_stats(&f, ps));
	CHECK_EQ(PT(ps, rx_pfc_frames), 3);
	CHECK_EQ(PS(ps, 3, rx_pause), 2);
	CHECK_EQ(PS(ps, 3, rx_pause_transition), 2);
	CHECK_EQ(PS(ps, 3, rx_pause_duration_us), (51200 + 1000) / 1000);
	CHECK_EQ(PS(ps, 5, rx_pause), 1);
	CHECK_EQ(PS(ps, 5, rx_pause_transition), 1);
	CHECK_EQ(PS(ps, 5, rx_pause_duration_us), 102400 / 1000);
	CHECK_EQ(PS(ps, 0, rx_pause), 0);
	CHECK_EQ(PS(ps, 3, tx_frames), 3);
	CHECK_EQ(PS(ps, 0, tx_frames), 1);
	CHECK_EQ(PS(ps, 5, tx_frames), 1);
	CHECK_EQ(PS(ps, 3, tx_bytes), 300);
	CHECK_EQ(PS(ps, 3, rx_frames), 0);	/* PFC frames are not data frames */
	CHECK_EQ(PT(ps, tx_pfc_frames), 0);

	/* a pause in progress counts in the duration so far */
	t1 = f.now;
	CHECK(rx_pfc(&f, 3, 0xffff));
	fk_advance(&f, 7000);
	CHECK(pfc_stats(&f, ps));
	CHECK_EQ(PS(ps, 3, rx_pause_duration_us), 52 + 7);
	CHECK_EQ(PS(ps, 3, rx_pause_transition), 2);
	(void)t1;
	fk_fini(&f);
}

/* ---- the lossless receive buffer ------------------------------------------------------- */

static void t_lossless_rx(void)
{
	struct fake f;
	struct drv_ring eq, rx;
	uint8_t c[sizeof(struct tern_dcb_cfg)], fr[1000], ps[PS_SIZE], roce[100];
	uint64_t t0, t_xon;
	unsigned int i;

	REQUIRE(mac_setup(&f, &eq, 1000, FK_UNPACED));
	dcb_lossless3(c, 0);
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == TERN_CMD_OK);
	t0 = f.now;
	/* no descriptors: lossless frames are kept, XOFF when 4000 bytes are held */
	for (i = 0; i < 3; i++) {
		vlan_frame(fr, sizeof(fr), test_mac, 3, i);
		CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	}
	CHECK_EQ(f.nframes, 0);
	vlan_frame(fr, sizeof(fr), test_mac, 3, 3);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	REQUIRE(f.nframes == 1);
	CHECK(is_our_pfc(&f, 0, 3, 0xffff));
	CHECK_EQ(f.frames[0].t, t0);
	for (i = 4; i < 8; i++) {
		vlan_frame(fr, sizeof(fr), test_mac, 3, i);
		CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	}
	CHECK_EQ(f.nframes, 1);
	/* full (8000 bytes): dropped and counted */
	vlan_frame(fr, sizeof(fr), test_mac, 3, 99);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	/* a lossy priority keeps the old behaviour: refused, the embedding keeps it */
	vlan_frame(fr, sizeof(fr), test_mac, 2, 98);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), 0);
	/* RoCE of the lossless priority is handled at once, never buffered */
	vlan_frame(roce, sizeof(roce), test_mac, 3, 97);
	roce[16] = 0x08;
	roce[17] = 0x00;
	memset(roce + 18, 0, 28);
	roce[18] = 0x45;
	roce[27] = 17;
	roce[40] = 4791 >> 8;
	roce[41] = 4791 & 0xff;
	CHECK_EQ(tern_model_rx_frame(f.m, roce, sizeof(roce)), sizeof(roce));
	/* refreshed every half pause time while above XON */
	CHECK_EQ(f.deadline, t0 + XOFF_NS_1G / 2);
	fk_advance(&f, XOFF_NS_1G / 2 - 1);
	CHECK_EQ(f.nframes, 1);
	fk_advance(&f, 1);
	REQUIRE(f.nframes == 2);
	CHECK(is_our_pfc(&f, 1, 3, 0xffff));
	CHECK_EQ(f.frames[1].t, t0 + XOFF_NS_1G / 2);
	fk_advance(&f, XOFF_NS_1G / 2);
	CHECK_EQ(f.nframes, 3);
	CHECK(is_our_pfc(&f, 2, 3, 0xffff));

	/* five descriptors: 3000 bytes left, still above XON */
	rx_post(&f, &rx, 5);
	ring(&f, &rx, true);
	fk_run(&f);
	for (i = 0; i < 5; i++)
		CHECK_EQ(rx_seq(&f, &rx, i), i);
	CHECK_EQ(rx_seq(&f, &rx, 5), -1);
	CHECK_EQ(f.nframes, 3);
	/* one more: 2000 bytes = xon_bytes -> XON */
	fk_advance(&f, 5000);
	t_xon = f.now;
	rx_post(&f, &rx, 1);
	ring(&f, &rx, true);
	fk_run(&f);
	CHECK_EQ(rx_seq(&f, &rx, 5), 5);
	REQUIRE(f.nframes == 4);
	CHECK(is_our_pfc(&f, 3, 3, 0));
	CHECK_EQ(f.frames[3].t, t_xon);
	/* the rest drains in order; the lossy frame the embedding kept is retried after it */
	f.held_frame = fr;
	f.held_len = sizeof(fr);
	rx_post(&f, &rx, 4);
	ring(&f, &rx, true);
	fk_run(&f);
	CHECK_EQ(rx_seq(&f, &rx, 6), 6);
	CHECK_EQ(rx_seq(&f, &rx, 7), 7);
	CHECK_EQ(rx_seq(&f, &rx, 8), 98);
	CHECK(f.held_frame == NULL);
	CHECK_EQ(rx_seq(&f, &rx, 9), -1);
	/* nothing more to send; the refresh timer may fire once more, idle, then none is left */
	fk_advance(&f, 100 * MS);
	CHECK_EQ(f.nframes, 4);
	CHECK_EQ(f.deadline, UINT64_MAX);
	/* with descriptors, lossless frames go straight to the ring */
	vlan_frame(fr, sizeof(fr), test_mac, 3, 50);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	CHECK_EQ(rx_seq(&f, &rx, 9), 50);

	CHECK(pfc_stats(&f, ps));
	CHECK_EQ(PS(ps, 3, rx_frames), 11);	/* 8 kept, 1 dropped, RoCE, 1 direct */
	CHECK_EQ(PS(ps, 3, rx_bytes), 10 * 1000 + sizeof(roce));
	CHECK_EQ(PS(ps, 3, rx_discards), 1);
	CHECK_EQ(PS(ps, 3, tx_pause), 3);
	CHECK_EQ(PS(ps, 3, tx_pause_duration_us), (t_xon - t0) / 1000);
	CHECK_EQ(PS(ps, 2, rx_frames), 1);
	CHECK_EQ(PS(ps, 2, rx_discards), 0);
	CHECK_EQ(PT(ps, tx_pfc_frames), 4);
	CHECK_EQ(PS(ps, 3, tx_frames), 0);	/* PFC frames are not data frames */
	fk_fini(&f);
}

/* Lossless priority removed while pausing the peer: XON at once, frames still drain. */
static void t_lossless_reconfig(void)
{
	struct fake f;
	struct drv_ring eq, rx;
	uint8_t c[sizeof(struct tern_dcb_cfg)], fr[1000];
	unsigned int i;

	REQUIRE(mac_setup(&f, &eq, 1000, FK_UNPACED));
	dcb_lossless3(c, 0);
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == TERN_CMD_OK);
	for (i = 0; i < 5; i++) {
		vlan_frame(fr, sizeof(fr), test_mac, 3, i);
		CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	}
	CHECK_EQ(f.nframes, 1);
	/* raise XOFF above the occupancy: nothing changes until it falls to XON */
	wr32(c + DCB(xoff_bytes), 6000);
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
	CHECK_EQ(f.nframes, 1);
	/* priority 3 no longer lossless: XON now; new frames of it are refused as lossy */
	c[DCB(pfc_en)] = 0;
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
	REQUIRE(f.nframes == 2);
	CHECK(is_our_pfc(&f, 1, 3, 0));
	vlan_frame(fr, sizeof(fr), test_mac, 3, 9);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), 0);
	rx_post(&f, &rx, 8);
	ring(&f, &rx, true);
	fk_run(&f);
	for (i = 0; i < 5; i++)
		CHECK_EQ(rx_seq(&f, &rx, i), i);
	CHECK_EQ(f.nframes, 2);
	fk_fini(&f);
}

/* ---- storm guard ---------------------------------------------------------------------------- */

static void t_storm_tx(void)
{
	struct fake f;
	struct drv_ring eq, rx;
	uint8_t c[sizeof(struct tern_dcb_cfg)], fr[1000], ps[PS_SIZE], sub;
	uint32_t d0, d1;
	uint64_t t0;
	unsigned int i;

	REQUIRE(mac_setup(&f, &eq, 1000, FK_UNPACED));
	dcb_lossless3(c, 10);
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == TERN_CMD_OK);
	t0 = f.now;
	for (i = 0; i < 5; i++) {
		vlan_frame(fr, sizeof(fr), test_mac, 3, i);
		CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	}
	CHECK(is_our_pfc(&f, 0, 3, 0xffff));
	/* the host never posts a descriptor: after 10 ms of XOFF the port stops pausing */
	fk_advance(&f, 10 * MS - 1);
	CHECK_EQ(f.nframes, 1);
	CHECK(!next_event(&f, &eq, TERN_EQE_PFC_STORM, &sub, &d0, &d1));
	fk_advance(&f, 1);
	REQUIRE(f.nframes == 2);
	CHECK(is_our_pfc(&f, 1, 3, 0));
	CHECK_EQ(f.frames[1].t, t0 + 10 * MS);
	CHECK(next_event(&f, &eq, TERN_EQE_PFC_STORM, &sub, &d0, &d1));
	CHECK_EQ(sub, TERN_PFC_STORM_TX_PAUSE);
	CHECK_EQ(d0, 3);
	CHECK_EQ(d1, 1);
	/* what cannot be delivered is dropped now, and nothing is paused any more */
	vlan_frame(fr, sizeof(fr), test_mac, 3, 77);
	CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	fk_advance(&f, 50 * MS);
	CHECK_EQ(f.nframes, 2);
	CHECK(pfc_stats(&f, ps));
	CHECK_EQ(PT(ps, tx_pause_storm_events), 1);
	CHECK_EQ(PS(ps, 3, rx_discards), 1);
	CHECK_EQ(PS(ps, 3, tx_pause), 1);
	CHECK_EQ(PS(ps, 3, tx_pause_duration_us), 10000);
	/* the buffer drains (to 2000 = xon_bytes): recovered, pausing works again */
	rx_post(&f, &rx, 3);
	ring(&f, &rx, true);
	fk_run(&f);
	CHECK(next_event(&f, &eq, TERN_EQE_PFC_STORM, &sub, &d0, &d1));
	CHECK_EQ(sub, TERN_PFC_STORM_TX_PAUSE);
	CHECK_EQ(d0, 3);
	CHECK_EQ(d1, 0);
	CHECK_EQ(f.nframes, 2);
	for (i = 0; i < 2; i++) {
		vlan_frame(fr, sizeof(fr), test_mac, 3, 10 + i);
		CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	}
	REQUIRE(f.nframes == 3);
	CHECK(is_our_pfc(&f, 2, 3, 0xffff));
	rx_post(&f, &rx, 8);
	ring(&f, &rx, true);
	fk_run(&f);
	CHECK_EQ(rx_seq(&f, &rx, 3), 3);
	CHECK_EQ(rx_seq(&f, &rx, 4), 4);
	CHECK_EQ(rx_seq(&f, &rx, 5), 10);
	CHECK_EQ(rx_seq(&f, &rx, 6), 11);
	CHECK(is_our_pfc(&f, 3, 3, 0));
	CHECK(!next_event(&f, &eq, TERN_EQE_PFC_STORM, &sub, &d0, &d1));
	CHECK(pfc_stats(&f, ps));
	CHECK_EQ(PT(ps, tx_pause_storm_events), 1);
	CHECK_EQ(PS(ps, 3, rx_discards), 1);
	fk_fini(&f);
}

static void t_storm_rx(void)
{
	struct fake f;
	struct drv_ring eq, tx;
	uint8_t c[sizeof(struct tern_dcb_cfg)], fr[100], ps[PS_SIZE], sub;
	uint32_t d0, d1;
	uint64_t t0, t_last;
	unsigned int i, n;

	REQUIRE(mac_setup(&f, &eq, 1000, FK_UNPACED));
	dcb_lossless3(c, 10);
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &tx, false, 6, eq.num, false) == TERN_CMD_OK);
	vlan_frame(fr, sizeof(fr), peer_mac, 3, 1);
	/* the peer pauses priority 3 and keeps refreshing every 5 ms */
	t0 = f.now;
	CHECK(rx_pfc(&f, 3, 0xffff));
	tx_post(&f, &tx, fr, sizeof(fr));
	ring(&f, &tx, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, 0);
	fk_advance(&f, 5 * MS);
	CHECK(rx_pfc(&f, 3, 0xffff));
	fk_advance(&f, 5 * MS - 1);
	CHECK_EQ(f.nframes, 0);
	CHECK(!next_event(&f, &eq, TERN_EQE_PFC_STORM, &sub, &d0, &d1));
	/* 10 ms paused: the port stops honouring it and sends */
	fk_advance(&f, 1);
	REQUIRE(f.nframes == 1);
	CHECK_EQ(f.frames[0].t, t0 + 10 * MS);
	CHECK(next_event(&f, &eq, TERN_EQE_PFC_STORM, &sub, &d0, &d1));
	CHECK_EQ(sub, TERN_PFC_STORM_RX_PAUSE);
	CHECK_EQ(d0, 3);
	CHECK_EQ(d1, 1);
	/* pauses keep coming and are ignored */
	for (i = 0; i < 4; i++) {
		fk_advance(&f, 5 * MS);
		CHECK(rx_pfc(&f, 3, 0xffff));
		tx_post(&f, &tx, fr, sizeof(fr));
		ring(&f, &tx, false);
		fk_run(&f);
		CHECK_EQ(f.nframes, 2 + i);
	}
	t_last = f.now;
	/* recovered 10 ms after the last pause */
	fk_advance(&f, 10 * MS - 1);
	CHECK(!next_event(&f, &eq, TERN_EQE_PFC_STORM, &sub, &d0, &d1));
	fk_advance(&f, 1);
	CHECK(next_event(&f, &eq, TERN_EQE_PFC_STORM, &sub, &d0, &d1));
	CHECK_EQ(sub, TERN_PFC_STORM_RX_PAUSE);
	CHECK_EQ(d0, 3);
	CHECK_EQ(d1, 0);
	CHECK_EQ(f.now, t_last + 10 * MS);
	/* pauses are honoured again */
	n = f.nframes;
	CHECK(rx_pfc(&f, 3, 10));
	tx_post(&f, &tx, fr, sizeof(fr));
	ring(&f, &tx, false);
	fk_run(&f);
	CHECK_EQ(f.nframes, n);
	fk_advance(&f, 5120);
	CHECK_EQ(f.nframes, n + 1);
	CHECK(pfc_stats(&f, ps));
	CHECK_EQ(PT(ps, rx_pause_storm_events), 1);
	CHECK_EQ(PS(ps, 3, rx_pause), 7);
	CHECK_EQ(PS(ps, 3, rx_pause_duration_us), 10000 + 5);
	CHECK_EQ(PS(ps, 3, rx_pause_transition), 2);
	fk_fini(&f);
}

/* Link down empties the buffer (as the Ethernet path drops), no PFC while down; storm guard
 * turned off during a storm ends it. */
static void t_lossless_link_storm_off(void)
{
	struct fake f;
	struct drv_ring eq, rx;
	uint8_t c[sizeof(struct tern_dcb_cfg)], fr[1000], ps[PS_SIZE], sub;
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)];
	uint32_t d0, d1;
	unsigned int i;

	REQUIRE(mac_setup(&f, &eq, 1000, FK_UNPACED));
	dcb_lossless3(c, 10);
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == TERN_CMD_OK);
	for (i = 0; i < 5; i++) {
		vlan_frame(fr, sizeof(fr), test_mac, 3, i);
		CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	}
	CHECK_EQ(f.nframes, 1);
	fk_advance(&f, 3 * MS);
	tern_model_set_link(f.m, false);
	fk_run(&f);
	/* dropped as the Ethernet path drops while down; no XON on a dead link */
	CHECK(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, rx_no_queue), 5);
	CHECK_EQ(f.nframes, 1);
	CHECK(pfc_stats(&f, ps));
	CHECK_EQ(PS(ps, 3, tx_pause_duration_us), 3000);
	fk_advance(&f, 100 * MS);
	CHECK_EQ(f.nframes, 1);
	CHECK(!next_event(&f, &eq, TERN_EQE_PFC_STORM, &sub, &d0, &d1));
	tern_model_set_link(f.m, true);

	/* a TX storm, then SET_DCB without the guard: recovered, and pausing resumes */
	for (i = 0; i < 5; i++) {
		vlan_frame(fr, sizeof(fr), test_mac, 3, 10 + i);
		CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
	}
	CHECK_EQ(f.nframes, 2);
	fk_advance(&f, 10 * MS);
	CHECK_EQ(f.nframes, 3);
	CHECK(is_our_pfc(&f, 2, 3, 0));
	CHECK(next_event(&f, &eq, TERN_EQE_PFC_STORM, &sub, &d0, &d1));
	CHECK_EQ(d1, 1);
	wr32(c + DCB(pfc_storm_ms), 0);
	CHECK_EQ(set_dcb(&f, c, NULL), TERN_CMD_OK);
	CHECK(next_event(&f, &eq, TERN_EQE_PFC_STORM, &sub, &d0, &d1));
	CHECK_EQ(sub, TERN_PFC_STORM_TX_PAUSE);
	CHECK_EQ(d0, 3);
	CHECK_EQ(d1, 0);
	/* still 5000 bytes held, at or above XOFF: paused again */
	CHECK_EQ(f.nframes, 4);
	CHECK(is_our_pfc(&f, 3, 3, 0xffff));
	fk_fini(&f);
}

/* ---- two ports, end to end: PFC keeps a lossless priority lossless ------------------- */

static void t_pfc_end_to_end(void)
{
	struct fake a, b;
	struct wire w;
	struct drv_ring eqa, eqb, tx, rx, tx0;
	uint8_t c[sizeof(struct tern_dcb_cfg)], fr[1000], ps[PS_SIZE];
	unsigned int i, n = 20, data = 0;

	REQUIRE(mac_setup(&a, &eqa, 1000, 0));
	REQUIRE(mac_setup(&b, &eqb, 1000, 0));
	/* b answers to peer_mac */
	REQUIRE(drv_set_port(&b, 0, 1500, peer_mac) == TERN_CMD_OK);
	dcb_lossless3(c, 0);
	CHECK_EQ(set_dcb(&a, c, NULL), TERN_CMD_OK);
	CHECK_EQ(set_dcb(&b, c, NULL), TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&a, &tx, false, 6, eqa.num, false) == TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&a, &tx0, false, 6, eqa.num, false) == TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&b, &rx, true, 6, eqb.num, false) == TERN_CMD_OK);
	wire_init(&w, &a, &b);
	for (i = 0; i < n; i++) {
		vlan_frame(fr, sizeof(fr), peer_mac, 3, i);
		tx_post(&a, &tx, fr, sizeof(fr));
	}
	ring(&a, &tx, false);
	wire_advance(&w, MS);
	/* b holds 4 frames and paused a; a holds the rest */
	for (i = 0; i < w.nlog; i++)
		data += w.log[i].dir == 0;
	CHECK_EQ(data, 4);
	/* priority 0 still flows while 3 is paused */
	vlan_frame(fr, sizeof(fr), peer_mac, 0, 1000);
	tx_post(&a, &tx0, fr, sizeof(fr));
	ring(&a, &tx0, false);
	wire_advance(&w, MS);
	CHECK_EQ(w.refused, 1);		/* lossy, no descriptor: the wire drops it */
	/* b's host posts descriptors: everything arrives, in order, nothing lost */
	rx_post(&b, &rx, 32);
	ring(&b, &rx, true);
	wire_advance(&w, 50 * MS);
	for (i = 0; i < n; i++)
		CHECK_EQ(rx_seq(&b, &rx, i), i);
	CHECK(pfc_stats(&b, ps));
	CHECK_EQ(PS(ps, 3, rx_discards), 0);
	CHECK_EQ(PS(ps, 3, rx_frames), n);
	CHECK(PS(ps, 3, tx_pause) >= 1);
	CHECK(pfc_stats(&a, ps));
	CHECK_EQ(PS(ps, 3, tx_frames), n);
	CHECK(PS(ps, 3, rx_pause) >= 1);
	CHECK_EQ(PS(ps, 3, rx_pause_transition), PS(ps, 3, rx_pause));
	wire_fini(&w);
	fk_fini(&a);
	fk_fini(&b);
}

const struct test mac_tests[] = {
	{ "mac: QUERY_DEVICE DCB cap and speed; QUERY/SET_DCB round trip, lengths", t_dcb_query_set },
	{ "mac: SET_DCB validation, syndrome = byte offset of the bad field", t_dcb_validation },
	{ "mac: reset sends XON, restores DCB defaults, clears buffer and counters", t_dcb_reset },
	{ "mac: classification PCP / DSCP / default, per-priority tx and rx counters", t_classify },
	{ "mac: exact line-rate serialization (L + 24) * 8 / speed, fractions kept", t_serialize_exact },
	{ "mac: tx_burst_bytes lets the transmitter run ahead, then paces", t_serialize_burst },
	{ "mac: received PFC pauses its priority only, for quanta * 512 bit times; XON", t_pfc_rx_pause },
	{ "mac: lossless RX buffer, XOFF byte-exact, refresh, XON, order, overflow", t_lossless_rx },
	{ "mac: SET_DCB while pausing: thresholds, lossless off sends XON", t_lossless_reconfig },
	{ "mac: storm guard, TX pause: stop pausing, drop, event, recover", t_storm_tx },
	{ "mac: storm guard, RX pause: ignore the peer, event, recover", t_storm_rx },
	{ "mac: link down empties the buffer silently; storm guard off ends a storm",
	  t_lossless_link_storm_off },
	{ "mac: two ports, PFC end to end: nothing lost, in order", t_pfc_end_to_end },
	{ NULL, NULL },
};
