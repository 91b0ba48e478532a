/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Congestion control (tern_dcb.h, Documentation/hw/congestion.rst): SET/QUERY_CC_PARAMS,
 * ECN marking of data packets, CNPs from the notification point (byte-exact, rate limited),
 * DCQCN's reaction point (cut, monitor period, alpha, recovery, clamps) read back through
 * QUERY_QP, and the pacer measured in virtual time. Two models on the test wire; the test
 * marks CE in flight and injects CNPs of its own making.
 */
#include <math.h>
#include <stdlib.h>

#include <linux/tern/tern_dcb.h>

#include "test_rdma.h"

#define CCP(f)		OFF(struct tern_cc_params, f)
#define QQO(f)		OFF(struct tern_cmd_query_qp_out, f)
#define CC_LEN		sizeof(struct tern_cc_params)
#define LINE_MBPS	25000u	/* the default link speed */
#define US		1000ull

static bool cc_query(struct fake *f, uint8_t p[CC_LEN])
{
	memset(p, 0xee, CC_LEN);
	return drv_cmd(f, TERN_CMD_QUERY_CC_PARAMS, NULL, 0, p, CC_LEN, NULL) == TERN_CMD_OK;
}

/* Set parameters on a device of a connection; false (reported) if refused. */
static bool cc_apply(struct rdev *d, const uint8_t p[CC_LEN])
{
	uint32_t syn = 0;
	int st = cc_set(&d->f, p, &syn);

	if (st != TERN_CMD_OK)
		printf("#   SET_CC_PARAMS: status %d syndrome %u\n", st, syn);
	return st == TERN_CMD_OK;
}

static uint32_t qp_rate(struct rdev *d, uint32_t qpn)
{
	uint8_t o[sizeof(struct tern_cmd_query_qp_out)];

	if (qp_query(d, qpn, o) != TERN_CMD_OK)
		return ~0u;
	return rd32(o + QQO(cc_rate_mbps));
}

static uint32_t qp_alpha(struct rdev *d, uint32_t qpn)
{
	uint8_t o[sizeof(struct tern_cmd_query_qp_out)];

	if (qp_query(d, qpn, o) != TERN_CMD_OK)
		return ~0u;
	return rd32(o + QQO(cc_alpha));
}

/* QUERY_QP's HPCC view of a QP: false if the query failed or the QP does not run HPCC. */
struct hpcc_q {
	uint32_t window, rate;
	uint16_t util;
	uint8_t stage;
};

static bool qp_hpcc(struct rdev *d, uint32_t qpn, struct hpcc_q *h)
{
	uint8_t o[sizeof(struct tern_cmd_query_qp_out)];

	memset(h, 0, sizeof(*h));
	if (qp_query(d, qpn, o) != TERN_CMD_OK)
		return false;
	h->window = rd32(o + QQO(hpcc_window));
	h->util = rd16(o + QQO(hpcc_util));
	h->stage = o[QQO(hpcc_inc_stage)];
	h->rate = rd32(o + QQO(cc_rate_mbps));
	return rd32(o + QQO(status)) & TERN_QP_STATUS_HPCC;
}

/* Where a frame's IP header and BTH are, if it is RoCEv2; NULL if not. */
static uint8_t *frame_bth(const uint8_t *fr, size_t len, size_t *l3, bool *v6)
{
	size_t o = 14, u;

	if (len < 18)
		return NULL;
	if (fr[12] == 0x81 && fr[13] == 0x00)
		o = 18;
	*l3 = o;
	if (fr[o - 2] == 0x08 && fr[o - 1] == 0x00) {
		*v6 = false;
		u = o + 20;
	} else if (fr[o - 2] == 0x86 && fr[o - 1] == 0xdd) {
		*v6 = true;
		u = o + 40;
	} else {
		return NULL;
	}
	if (len < u + 8 + 12 || fr[u + 2] != 0x12 || fr[u + 3] != 0xb7)
		return NULL;
	return (uint8_t *)(uintptr_t)(fr + u + 8);
}

static unsigned int frame_ecn(const uint8_t *fr, size_t l3, bool v6)
{
	return v6 ? (fr[l3 + 1] >> 4) & 3 : fr[l3 + 1] & 3;
}

/* Our own ICRC: masked copy of IP/UDP/BTH after eight 0xff bytes, then the rest. */
static uint32_t t_icrc(const uint8_t *ip, bool v6, const uint8_t *icrc_at)
{
	size_t iph = v6 ? 40 : 20, hl = iph + 8 + 12;
	uint8_t h[80], ff[8];
	uint32_t crc;

	memset(ff, 0xff, sizeof(ff));
	memcpy(h, ip, hl);
	if (v6) {
		h[0] |= 0x0f;
		h[1] = h[2] = h[3] = 0xff;
		h[7] = 0xff;
	} else {
		h[1] = 0xff;
		h[8] = 0xff;
		h[10] = h[11] = 0xff;
	}
	h[iph + 6] = h[iph + 7] = 0xff;
	h[iph + 8 + 4] = 0xff;
	crc = crc32_ieee(0, ff, 8);
	crc = crc32_ieee(crc, h, hl);
	return crc32_ieee(crc, ip + hl, (size_t)(icrc_at - (ip + hl)));
}

static uint16_t t_csum(const uint8_t *p, size_t n, uint32_t s)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/*
 * Build an IPv4 CNP from device @from to device @to for QP @dqpn (as a switch-free peer
 * would); returns its length.
 */
static size_t build_cnp(uint8_t *fr, const struct rdev *from, const struct rdev *to,
			uint32_t dqpn)
{
	uint8_t *ip = fr + 14, *udp = ip + 20, *bth = udp + 8;
	uint16_t c;

	memset(fr, 0, 80);
	memcpy(fr, to->mac, 6);
	memcpy(fr + 6, from->mac, 6);
	fr[12] = 0x08;
	ip[0] = 0x45;
	ip[1] = 48 << 2;
	ip[3] = 60;
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, from->ip, 4);
	memcpy(ip + 16, to->ip, 4);
	c = t_csum(ip, 20, 0);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	udp[0] = 0xc1;
	udp[1] = 0x23;
	udp[2] = 0x12;
	udp[3] = 0xb7;
	udp[5] = 40;
	bth[0] = 0x81;
	bth[2] = bth[3] = 0xff;
	bth[4] = 0x40;
	bth[5] = (uint8_t)(dqpn >> 16);
	bth[6] = (uint8_t)(dqpn >> 8);
	bth[7] = (uint8_t)dqpn;
	wr32(bth + 28, t_icrc(ip, false, bth + 28));
	return 14 + 60;
}

static void inject_cnp(struct conn *c, unsigned int to, uint32_t dqpn)
{
	uint8_t fr[80];
	size_t n = build_cnp(fr, c->d[!to], c->d[to], dqpn);

	CHECK_EQ(tern_model_rx_frame(c->d[to]->f.m, fr, n), n);
	wire_pump(&c->w);
}

/* CNPs in the wire log in direction @dir. */
static unsigned int count_cnps(const struct wire *w, unsigned int dir)
{
	unsigned int i, n = 0;
	size_t l3;
	bool v6;

	for (i = 0; i < w->nlog; i++) {
		const uint8_t *bth = frame_bth(w->log[i].data, w->log[i].len, &l3, &v6);

		if (w->log[i].dir == dir && bth && bth[0] == 0x81)
			n++;
	}
	return n;
}

static bool is_data_op(uint8_t op)
{
	return op <= OP_READ_RESP_ONLY || op == OP_CMP_SWAP || op == OP_FETCH_ADD;
}

/* The test's switch: marks CE on ECT data frames in direction 0 while @on. */
struct marker {
	bool on;
	bool all;		/* mark even frames that are not ECT */
	unsigned int marked;
};

static enum wire_action mark_ce(struct wire *w, unsigned int dir, unsigned int idx,
				uint8_t *fr, size_t *len)
{
	struct marker *mk = w->ctx;
	uint8_t *bth;
	size_t l3;
	bool v6;

	(void)idx;
	if (!mk || !mk->on || dir != 0)
		return W_DELIVER;
	bth = frame_bth(fr, *len, &l3, &v6);
	if (!bth || !is_data_op(bth[0]))
		return W_DELIVER;
	if (!mk->all && frame_ecn(fr, l3, v6) != 2)
		return W_DELIVER;
	if (v6) {
		fr[l3 + 1] |= 0x30;
	} else {
		fr[l3 + 1] |= 3;
		pkt_fix_ipv4_csum(fr, *len);
	}
	mk->marked++;
	return W_DELIVER;
}

/* Post one WRITE of @len bytes from side @s and wait for its completion (no time limit use). */
static bool do_write(struct conn *c, unsigned int s, struct rmr *src, struct rmr *dst,
		     uint32_t len, uint64_t id)
{
	struct sge sg = mr_sge(src, 0, len);
	struct wc w;

	post_send(c->d[s], &c->qp[s], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, id, &sg, 1,
		  dst->iova, dst->key, 0);
	ring_sq(c->d[s], &c->qp[s]);
	if (conn_poll(c, s, &w, 1, 200000000) != 1)
		return false;
	return w.status == TERN_CQE_OK && w.wr_id == id;
}

#define MR_RW	(TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_REMOTE_READ)

/* ---- parameters --------------------------------------------------------------------------- */

static void t_params(void)
{
	static const struct {
		uint8_t off, width;
		uint32_t bad, good;
	} cases[] = {
		{ CCP(cnp_dscp), 1, 64, 63 },
		{ CCP(cnp_prio), 1, 8, 7 },
		{ CCP(min_time_between_cnps), 4, 4096, 4095 },
		{ CCP(min_time_between_cnps), 4, 0x01000000, 0 },
		{ CCP(rpg_time_reset), 4, 0, 1 },
		{ CCP(rpg_time_reset), 4, 131072, 131071 },
		{ CCP(rpg_byte_reset), 4, (1u << 30) + 1, 1u << 30 },
		{ CCP(rpg_byte_reset), 4, 0xffffffff, 0 },
		{ CCP(rpg_threshold), 4, 0, 1 },
		{ CCP(rpg_threshold), 4, 32, 31 },
		{ CCP(rpg_max_rate), 4, LINE_MBPS + 1, LINE_MBPS },
		{ CCP(rpg_ai_rate), 4, 0, 1 },
		{ CCP(rpg_ai_rate), 4, LINE_MBPS + 1, LINE_MBPS },
		{ CCP(rpg_hai_rate), 4, 0, 1 },
		{ CCP(rpg_hai_rate), 4, LINE_MBPS + 1, LINE_MBPS },
		{ CCP(rpg_gd), 4, 0, 1 },
		{ CCP(rpg_gd), 4, 16, 15 },
		{ CCP(rpg_min_dec_fac), 4, 0, 1 },
		{ CCP(rpg_min_dec_fac), 4, 101, 100 },
		{ CCP(rpg_min_rate), 4, 0, 1 },
		{ CCP(rpg_min_rate), 4, LINE_MBPS + 1, LINE_MBPS },
		{ CCP(rate_to_set_on_first_cnp), 4, LINE_MBPS + 1, LINE_MBPS },
		{ CCP(dce_tcp_g), 4, 1024, 1023 },
		{ CCP(dce_tcp_g), 4, 0x80000000, 0 },
		{ CCP(dce_tcp_rtt), 4, 0, 1 },
		{ CCP(dce_tcp_rtt), 4, 131072, 131071 },
		{ CCP(rate_reduce_monitor_period), 4, 131072, 0 },
		{ CCP(initial_alpha_value), 4, 1024, 0 },
		/* HPCC: never on a priority with DCQCN (rp_en is 0x08 here) */
		{ CCP(hpcc_en), 1, 0x18, 0x10 },
		{ CCP(hpcc_max_stage), 1, 32, 31 },
		{ CCP(hpcc_eta), 2, 499, 500 },
		{ CCP(hpcc_eta), 2, 1001, 1000 },
		{ CCP(hpcc_ai_rate), 4, LINE_MBPS + 1, LINE_MBPS },
		{ CCP(hpcc_base_rtt), 4, 999, 1000 },
		{ CCP(hpcc_base_rtt), 4, 100000001, 100000000 },
		/* TIMELY: never on a priority with DCQCN (0x08) or HPCC (0x10 here) */
		{ CCP(timely_en), 1, 0x48, 0x40 },
		{ CCP(timely_en), 1, 0x50, 0x40 },
		{ CCP(timely_hai_thresh), 1, 32, 31 },
		{ CCP(timely_alpha), 2, 1025, 1024 },
		{ CCP(timely_beta), 2, 1025, 1024 },
		{ CCP(rsvd0), 2, 1, 0 },
		{ CCP(timely_delta), 4, LINE_MBPS + 1, LINE_MBPS },
		{ CCP(timely_t_low), 4, 999, 1000 },
		{ CCP(timely_t_low), 4, 100000001, 30000 },
		{ CCP(timely_t_high), 4, 30000, 30001 },	/* not above t_low */
		{ CCP(timely_t_high), 4, 100000001, 100000000 },
		{ CCP(timely_min_rtt), 4, 999, 1000 },
		{ CCP(timely_min_rtt), 4, 100000001, 100000000 },
		{ CCP(timely_seg), 4, 1023, 1024 },
		{ CCP(timely_seg), 4, (1u << 20) + 1, 1u << 20 },
		{ CCP(timely_min_rate), 4, LINE_MBPS + 1, LINE_MBPS },
		{ CCP(rsvd), 4, 1, 0 },
		{ CCP(rsvd), 4, 0x80000000, 0 },
	};
	uint8_t p[CC_LEN], q[CC_LEN], last[CC_LEN];
	struct fake f;
	struct cqe c;
	uint32_t syn;
	unsigned int i;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 5));
	/* reset state: RP and NP off, the defaults */
	cc_defaults(p);
	REQUIRE(cc_query(&f, q));
	CHECK(!memcmp(p, q, CC_LEN));
	/* round trip of a full set of non-default values */
	p[CCP(rp_en)] = 0x08;
	p[CCP(np_en)] = 0x88;
	p[CCP(cnp_dscp)] = 46;
	p[CCP(cnp_prio)] = 7;
	wr32(p + CCP(min_time_between_cnps), 50);
	wr32(p + CCP(rpg_time_reset), 55);
	wr32(p + CCP(rpg_byte_reset), 150000);
	wr32(p + CCP(rpg_threshold), 5);
	wr32(p + CCP(rpg_max_rate), 10000);
	wr32(p + CCP(rpg_ai_rate), 40);
	wr32(p + CCP(rpg_hai_rate), 200);
	wr32(p + CCP(rpg_gd), 7);
	wr32(p + CCP(rpg_min_dec_fac), 10);
	wr32(p + CCP(rpg_min_rate), 100);
	wr32(p + CCP(rate_to_set_on_first_cnp), 5000);
	wr32(p + CCP(dce_tcp_g), 1020);
	wr32(p + CCP(dce_tcp_rtt), 55);
	wr32(p + CCP(rate_reduce_monitor_period), 50);
	wr32(p + CCP(initial_alpha_value), 512);
	p[CCP(hpcc_en)] = 0x20;
	p[CCP(hpcc_max_stage)] = 3;
	wr16(p + CCP(hpcc_eta), 900);
	wr32(p + CCP(hpcc_ai_rate), 80);
	wr32(p + CCP(hpcc_base_rtt), 9000);
	p[CCP(timely_en)] = 0x41;
	p[CCP(timely_hai_thresh)] = 7;
	wr16(p + CCP(timely_alpha), 300);
	wr16(p + CCP(timely_beta), 500);
	wr32(p + CCP(timely_delta), 20);
	wr32(p + CCP(timely_t_low), 30000);
	wr32(p + CCP(timely_t_high), 300000);
	wr32(p + CCP(timely_min_rtt), 15000);
	wr32(p + CCP(timely_seg), 65536);
	wr32(p + CCP(timely_min_rate), 50);
	CHECK_EQ(cc_set(&f, p, NULL), TERN_CMD_OK);
	REQUIRE(cc_query(&f, q));
	CHECK(!memcmp(p, q, CC_LEN));
	memcpy(last, p, CC_LEN);
	/* every field out of range: BAD_PARAM at its byte offset, nothing changes; the
	 * boundary value next to it is taken */
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(p, last, CC_LEN);
		if (cases[i].width == 1)
			p[cases[i].off] = (uint8_t)cases[i].bad;
		else if (cases[i].width == 2)
			wr16(p + cases[i].off, (uint16_t)cases[i].bad);
		else
			wr32(p + cases[i].off, cases[i].bad);
		syn = ~0u;
		CHECK_EQ(cc_set(&f, p, &syn), TERN_CMD_BAD_PARAM);
		if (syn != cases[i].off)
			printf("#   case %u: offset %u\n", i, cases[i].off);
		CHECK_EQ(syn, cases[i].off);
		REQUIRE(cc_query(&f, q));
		CHECK(!memcmp(q, last, CC_LEN));
		if (cases[i].width == 1)
			p[cases[i].off] = (uint8_t)cases[i].good;
		else if (cases[i].width == 2)
			wr16(p + cases[i].off, (uint16_t)cases[i].good);
		else
			wr32(p + cases[i].off, cases[i].good);
		CHECK_EQ(cc_set(&f, p, NULL), TERN_CMD_OK);
		REQUIRE(cc_query(&f, q));
		CHECK(!memcmp(q, p, CC_LEN));
		memcpy(last, p, CC_LEN);
	}
	/* HPCC's parameters at 0 select their defaults (a driver that predates HPCC) */
	memcpy(p, last, CC_LEN);
	p[CCP(hpcc_max_stage)] = 0;
	wr16(p + CCP(hpcc_eta), 0);
	wr32(p + CCP(hpcc_ai_rate), 0);
	wr32(p + CCP(hpcc_base_rtt), 0);
	CHECK_EQ(cc_set(&f, p, NULL), TERN_CMD_OK);
	REQUIRE(cc_query(&f, q));
	CHECK_EQ(q[CCP(hpcc_max_stage)], TERN_CC_DEF_HPCC_MAX_STAGE);
	CHECK_EQ(rd16(q + CCP(hpcc_eta)), TERN_CC_DEF_HPCC_ETA);
	CHECK_EQ(rd32(q + CCP(hpcc_ai_rate)), TERN_CC_DEF_HPCC_AI_RATE);
	CHECK_EQ(rd32(q + CCP(hpcc_base_rtt)), TERN_CC_DEF_HPCC_BASE_RTT);
	memcpy(p, q, CC_LEN);		/* the values in force */
	/* lengths */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_SET_CC_PARAMS, p, CC_LEN - 1, NULL, 0, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_CC_PARAMS, NULL, 0, q, TERN_CC_PARAMS_V1_LEN - 1, &c),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, CC_LEN);
	/* a driver from before TIMELY: its 80 bytes leave TIMELY off at its defaults, and
	 * its reply buffer gets those 80 bytes */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_SET_CC_PARAMS, p, TERN_CC_PARAMS_V1_LEN, NULL, 0, &c),
		 TERN_CMD_OK);
	REQUIRE(cc_query(&f, q));
	CHECK_EQ(q[CCP(timely_en)], 0);
	CHECK_EQ(q[CCP(timely_hai_thresh)], TERN_CC_DEF_TIMELY_HAI_THRESH);
	CHECK_EQ(rd16(q + CCP(timely_alpha)), TERN_CC_DEF_TIMELY_ALPHA);
	CHECK_EQ(rd16(q + CCP(timely_beta)), TERN_CC_DEF_TIMELY_BETA);
	CHECK_EQ(rd32(q + CCP(timely_delta)), TERN_CC_DEF_TIMELY_DELTA);
	CHECK_EQ(rd32(q + CCP(timely_t_low)), TERN_CC_DEF_TIMELY_T_LOW);
	CHECK_EQ(rd32(q + CCP(timely_t_high)), TERN_CC_DEF_TIMELY_T_HIGH);
	CHECK_EQ(rd32(q + CCP(timely_min_rtt)), TERN_CC_DEF_TIMELY_MIN_RTT);
	CHECK_EQ(rd32(q + CCP(timely_seg)), TERN_CC_DEF_TIMELY_SEG);
	CHECK_EQ(rd32(q + CCP(timely_min_rate)), TERN_CC_DEF_TIMELY_MIN_RATE);
	CHECK(!memcmp(q, p, TERN_CC_PARAMS_V1_LEN));
	memset(q, 0xee, CC_LEN);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_CC_PARAMS, NULL, 0, q, CC_LEN - 1, &c), TERN_CMD_OK);
	CHECK_EQ(c.out_len, TERN_CC_PARAMS_V1_LEN);
	CHECK(!memcmp(q, p, TERN_CC_PARAMS_V1_LEN));
	/* a device reset goes back to the reset state */
	tern_model_reset(f.m);
	REQUIRE(drv_cmdq_enable(&f, 5));
	cc_defaults(p);
	REQUIRE(cc_query(&f, q));
	CHECK(!memcmp(p, q, CC_LEN));
	fk_fini(&f);
}

/* ---- ECN ----------------------------------------------------------------------------------- */

/* Traffic of every kind; returns false if it did not complete. */
static bool mixed_traffic(struct conn *c, struct rmr *a, struct rmr *b)
{
	struct sge sg;
	struct wc w[3];

	sg = mr_sge(b, 0, 4096);
	post_recv(c->d[1], &c->qp[1], 1, &sg, 1);
	ring_rq(c->d[1], &c->qp[1]);
	sg = mr_sge(a, 0, 3000);
	post_send(c->d[0], &c->qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1, 0, 0, 0);
	sg = mr_sge(a, 0, 2500);
	post_send(c->d[0], &c->qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 2, &sg, 1,
		  b->iova + 8192, b->key, 0);
	sg = mr_sge(a, 16384, 3500);
	post_send(c->d[0], &c->qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 3, &sg, 1,
		  b->iova + 20000, b->key, 0);
	ring_sq(c->d[0], &c->qp[0]);
	return conn_poll(c, 0, w, 3, 10000000) == 3 && w[0].status == 0 && w[1].status == 0 &&
	       w[2].status == 0 && conn_poll(c, 1, w, 1, 1000000) == 1;
}

/* Check the ECN field of every logged frame: @ect_dir[d] says whether direction d's data
 * frames are ECT(0); ACKs never are. */
static void check_ecn(const struct wire *w, bool ect0, bool ect1, unsigned int *ndata)
{
	unsigned int i;

	for (i = 0; i < w->nlog; i++) {
		const struct wire_rec *r = &w->log[i];
		const uint8_t *bth;
		size_t l3;
		bool v6, data;

		bth = frame_bth(r->data, r->len, &l3, &v6);
		if (!bth)
			continue;
		data = is_data_op(bth[0]);
		if (data)
			ndata[r->dir]++;
		CHECK_EQ(frame_ecn(r->data, l3, v6), data && (r->dir ? ect1 : ect0) ? 2 : 0);
		/* the DSCP stays the path's */
		CHECK_EQ(v6 ? (uint8_t)(r->data[l3] << 4 | r->data[l3 + 1] >> 4) >> 2 :
			 r->data[l3 + 1] >> 2, 26);
	}
}

static void ect_case(bool v6_vlan)
{
	struct connopt o;
	struct conn c;
	struct rmr a, b;
	uint8_t p[CC_LEN];
	unsigned int nd[2];
	bool mr_ok = false;

	connopt_default(&o);
	o.tclass = 26 << 2 | 3;		/* the path's ECN bits are not what goes out */
	if (v6_vlan) {
		o.ip_version = 6;
		o.vlan_id = 7;
		o.sl = 5;
		o.flow_label = 0x54321;
	}
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 65536, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 65536, MR_RW, 0) == 0);
	mr_ok = true;
	/* RP off: no ECT anywhere */
	RQ(mixed_traffic(&c, &a, &b));
	memset(nd, 0, sizeof(nd));
	check_ecn(&c.w, false, false, nd);
	CHECK(nd[0] >= 7 && nd[1] >= 4);
	/* RP on the other priorities only: still none */
	cc_defaults(p);
	p[CCP(rp_en)] = (uint8_t)~(1u << (v6_vlan ? 5 : 0));
	RQ(cc_apply(c.d[0], p) && cc_apply(c.d[1], p));
	wire_clear_log(&c.w);
	RQ(mixed_traffic(&c, &a, &b));
	memset(nd, 0, sizeof(nd));
	check_ecn(&c.w, false, false, nd);
	/* RP on the sender's priority: its requests ECT(0), the responder's ACKs not */
	p[CCP(rp_en)] = (uint8_t)(1u << (v6_vlan ? 5 : 0));
	RQ(cc_apply(c.d[0], p));
	wire_clear_log(&c.w);
	RQ(mixed_traffic(&c, &a, &b));
	memset(nd, 0, sizeof(nd));
	check_ecn(&c.w, true, false, nd);
	/* and on the responder's: READ responses ECT(0) too */
	RQ(cc_apply(c.d[1], p));
	wire_clear_log(&c.w);
	RQ(mixed_traffic(&c, &a, &b));
	memset(nd, 0, sizeof(nd));
	check_ecn(&c.w, true, true, nd);
	CHECK(nd[1] >= 4);	/* READ responses */
	/* no CE anywhere: no CNP, no NP counts */
	CHECK_EQ(count_cnps(&c.w, 0) + count_cnps(&c.w, 1), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], np_ecn_marked_roce_packets), 0);
out:
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

static void t_ect_v4(void)
{
	ect_case(false);
}

static void t_ect_v6_vlan(void)
{
	ect_case(true);
}

/* ---- notification point --------------------------------------------------------------------- */

/* The CNP @fr (from side 1 of @c to side 0) byte for byte, IPv4 untagged. */
static void check_cnp_v4(const struct conn *c, const uint8_t *fr, size_t len, uint8_t dscp)
{
	uint8_t exp[80];
	const uint8_t *ip = exp + 14, *udp = ip + 20, *bth = udp + 8;
	uint16_t cs;

	REQUIRE(len == 74);
	memset(exp, 0, sizeof(exp));
	memcpy(exp, c->d[0]->mac, 6);
	memcpy(exp + 6, c->d[1]->mac, 6);
	exp[12] = 0x08;
	exp[14] = 0x45;
	exp[15] = (uint8_t)(dscp << 2);			/* not ECT */
	exp[17] = 60;
	exp[18] = fr[18];				/* identification: the port's counter */
	exp[19] = fr[19];
	exp[20] = 0x40;					/* DF */
	exp[22] = c->o.hop_limit;
	exp[23] = 17;
	memcpy(exp + 26, c->d[1]->ip, 4);
	memcpy(exp + 30, c->d[0]->ip, 4);
	cs = t_csum(exp + 14, 20, 0);
	exp[24] = (uint8_t)(cs >> 8);
	exp[25] = (uint8_t)cs;
	exp[34] = (uint8_t)(c->o.sport >> 8);		/* the QP's own ports */
	exp[35] = (uint8_t)c->o.sport;
	exp[36] = 0x12;
	exp[37] = 0xb7;
	exp[39] = 40;
	exp[42] = 0x81;					/* CNP */
	exp[43] = 0x00;
	exp[44] = exp[45] = 0xff;			/* P_Key */
	exp[46] = 0x40;					/* BECN */
	exp[47] = (uint8_t)(c->qp[0].qpn >> 16);
	exp[48] = (uint8_t)(c->qp[0].qpn >> 8);
	exp[49] = (uint8_t)c->qp[0].qpn;
	/* A = 0, PSN 0, 16 reserved zero bytes */
	wr32(exp + 70, t_icrc(ip, false, bth + 28));
	if (memcmp(exp, fr, 74)) {
		unsigned int i;

		for (i = 0; i < 74; i++)
			if (exp[i] != fr[i])
				printf("#   CNP byte %u: 0x%02x, expected 0x%02x\n", i, fr[i],
				       exp[i]);
		CHECK(!"CNP bytes");
	}
}

static void t_cnp_np(void)
{
	struct connopt o;
	struct conn c;
	struct rmr a, b;
	struct marker mk = { 0 };
	uint8_t p[CC_LEN];
	unsigned int i, n;
	bool mr_ok = false;

	connopt_default(&o);
	o.tclass = 26 << 2;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 65536, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 65536, MR_RW, 0) == 0);
	mr_ok = true;
	mr_fill(c.d[0], &a, 7);
	c.w.filter = mark_ce;
	c.w.ctx = &mk;
	mk.on = true;
	mk.all = true;		/* the sender has no RP: mark what it sends anyway */
	/* NP off: CE packets are accepted, nothing else happens */
	RQ(do_write(&c, 0, &a, &b, 16384, 1));
	CHECK_EQ(mk.marked, 16);
	CHECK_EQ(RDEV_STAT(c.d[1], np_ecn_marked_roce_packets), 0);
	CHECK_EQ(count_cnps(&c.w, 1), 0);
	/* NP on: one CNP for 16 CE packets arriving within 4 us */
	cc_defaults(p);
	p[CCP(np_en)] = 0xff;
	RQ(cc_apply(c.d[1], p));
	wire_clear_log(&c.w);
	mk.marked = 0;
	RQ(do_write(&c, 0, &a, &b, 16384, 2));
	CHECK_EQ(mr_diff_pattern(c.d[1], &b, 0, 16384, 7, 0), -1);
	CHECK_EQ(mk.marked, 16);
	CHECK_EQ(RDEV_STAT(c.d[1], np_ecn_marked_roce_packets), 16);
	CHECK_EQ(RDEV_STAT(c.d[1], np_cnp_sent), 1);
	CHECK_EQ(count_cnps(&c.w, 1), 1);
	for (i = 0; i < c.w.nlog; i++) {
		size_t l3;
		bool v6;
		const uint8_t *bth = frame_bth(c.w.log[i].data, c.w.log[i].len, &l3, &v6);

		if (c.w.log[i].dir == 1 && bth && bth[0] == 0x81)
			check_cnp_v4(&c, c.w.log[i].data, c.w.log[i].len, 48);
	}
	/* the sender has no RP: the CNP is ignored */
	CHECK_EQ(RDEV_STAT(c.d[0], rp_cnp_ignored), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_cnp_handled), 0);
	CHECK_EQ(qp_rate(c.d[0], c.qp[0].qpn), 0);
	/* 3 us later: still within min_time_between_cnps of the last CNP */
	wire_advance(&c.w, 3 * US);
	RQ(do_write(&c, 0, &a, &b, 1000, 3));
	CHECK_EQ(RDEV_STAT(c.d[1], np_ecn_marked_roce_packets), 17);
	CHECK_EQ(RDEV_STAT(c.d[1], np_cnp_sent), 1);
	/* 4 us after it: the next one */
	wire_advance(&c.w, 1 * US);
	RQ(do_write(&c, 0, &a, &b, 1000, 4));
	CHECK_EQ(RDEV_STAT(c.d[1], np_cnp_sent), 2);
	/* another CNP DSCP, min_time_between_cnps 0: every CE packet answered */
	p[CCP(cnp_dscp)] = 46;
	wr32(p + CCP(min_time_between_cnps), 0);
	RQ(cc_apply(c.d[1], p));
	wire_clear_log(&c.w);
	RQ(do_write(&c, 0, &a, &b, 8192, 5));
	CHECK_EQ(RDEV_STAT(c.d[1], np_cnp_sent), 10);
	n = 0;
	for (i = 0; i < c.w.nlog; i++) {
		size_t l3;
		bool v6;
		const uint8_t *bth = frame_bth(c.w.log[i].data, c.w.log[i].len, &l3, &v6);

		if (c.w.log[i].dir == 1 && bth && bth[0] == 0x81) {
			check_cnp_v4(&c, c.w.log[i].data, c.w.log[i].len, 46);
			n++;
		}
	}
	CHECK_EQ(n, 8);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_cnp_ignored), 10);
	/* packets without CE are not counted */
	mk.on = false;
	RQ(do_write(&c, 0, &a, &b, 8192, 6));
	CHECK_EQ(RDEV_STAT(c.d[1], np_ecn_marked_roce_packets), 26);
	CHECK_EQ(RDEV_STAT(c.d[1], np_cnp_sent), 10);
out:
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

/* IPv6 + VLAN: PCP cnp_prio (VID kept), traffic class cnp_dscp, the QP's flow label. */
static void t_cnp_v6_vlan(void)
{
	struct connopt o;
	struct conn c;
	struct rmr a, b;
	struct marker mk = { 0 };
	uint8_t p[CC_LEN];
	unsigned int i, n = 0;
	bool mr_ok = false;

	connopt_default(&o);
	o.ip_version = 6;
	o.vlan_id = 100;
	o.sl = 3;
	o.tclass = 26 << 2;
	o.flow_label = 0xabcde;
	o.hop_limit = 17;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 65536, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 65536, MR_RW, 0) == 0);
	mr_ok = true;
	cc_defaults(p);
	p[CCP(rp_en)] = 1u << 3;
	RQ(cc_apply(c.d[0], p));
	p[CCP(np_en)] = 0xff;
	p[CCP(cnp_prio)] = 6;
	p[CCP(cnp_dscp)] = 48;
	RQ(cc_apply(c.d[1], p));
	c.w.filter = mark_ce;
	c.w.ctx = &mk;
	mk.on = true;
	RQ(do_write(&c, 0, &a, &b, 4096, 1));
	CHECK_EQ(mk.marked, 4);		/* the sender's RP made them ECT */
	for (i = 0; i < c.w.nlog; i++) {
		const struct wire_rec *r = &c.w.log[i];
		const uint8_t *fr = r->data, *ip, *udp, *bth;
		size_t l3;
		bool v6;
		uint32_t s;
		unsigned int k;

		bth = frame_bth(fr, r->len, &l3, &v6);
		if (r->dir != 1 || !bth || bth[0] != 0x81)
			continue;
		n++;
		ip = fr + l3;
		udp = ip + 40;
		CHECK_EQ(r->len, 18 + 40 + 40);
		CHECK(!memcmp(fr, c.d[0]->mac, 6));
		CHECK(!memcmp(fr + 6, c.d[1]->mac, 6));
		CHECK_EQ(fr[12] << 8 | fr[13], 0x8100);
		CHECK_EQ(fr[14] >> 5, 6);			/* PCP cnp_prio */
		CHECK_EQ((fr[14] << 8 | fr[15]) & 0xfff, 100);	/* VID kept */
		CHECK_EQ(fr[16] << 8 | fr[17], 0x86dd);
		CHECK(v6);
		CHECK_EQ(ip[0] >> 4, 6);
		CHECK_EQ((uint8_t)(ip[0] << 4 | ip[1] >> 4), 48 << 2);	/* DSCP 48, not ECT */
		CHECK_EQ((uint32_t)(ip[1] & 0xf) << 16 | ip[2] << 8 | ip[3], 0xabcde);
		CHECK_EQ(ip[4] << 8 | ip[5], 40);
		CHECK_EQ(ip[6], 17);
		CHECK_EQ(ip[7], 17);
		CHECK_EQ(ip[23], c.d[1]->ip[3]);
		CHECK_EQ(ip[39], c.d[0]->ip[3]);
		CHECK_EQ(udp[0] << 8 | udp[1], o.sport);
		CHECK_EQ(udp[2] << 8 | udp[3], 4791);
		CHECK_EQ(udp[4] << 8 | udp[5], 40);
		/* UDP checksum over the pseudo-header: 0 when folded with it */
		s = 40 + 17;
		for (k = 8; k < 40; k += 2)
			s += (uint32_t)ip[k] << 8 | ip[k + 1];
		CHECK_EQ(t_csum(udp, 40, s), 0);
		CHECK_EQ(bth[0], 0x81);
		CHECK_EQ(bth[1], 0);
		CHECK_EQ(bth[2] << 8 | bth[3], 0xffff);
		CHECK_EQ(bth[4], 0x40);
		CHECK_EQ((uint32_t)bth[5] << 16 | bth[6] << 8 | bth[7], c.qp[0].qpn);
		for (k = 8; k < 28; k++)
			CHECK_EQ(bth[k], 0);
		CHECK_EQ(rd32(bth + 28), t_icrc(ip, true, bth + 28));
	}
	CHECK_EQ(n, 1);
	/* and the sender took it: its rate was cut */
	CHECK_EQ(RDEV_STAT(c.d[0], rp_cnp_handled), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_rate_decrease_events), 1);
	CHECK(qp_rate(c.d[0], c.qp[0].qpn) > 0);
out:
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

/* ---- reaction point ---------------------------------------------------------------------- */

/* A connection whose side 0 has RP on every priority with parameters @p. */
static bool rp_setup(struct conn *c, const uint8_t p[CC_LEN])
{
	struct connopt o;

	connopt_default(&o);
	o.tclass = 26 << 2;
	if (!conn_setup(c, &o))
		return false;
	return cc_apply(c->d[0], p);
}

/* Cut, monitor period, alpha. */
static void t_rp_cut(void)
{
	struct conn c;
	uint8_t p[CC_LEN];
	uint32_t qpn, alpha;
	unsigned int i;

	cc_defaults(p);
	p[CCP(rp_en)] = 0xff;
	RQ(rp_setup(&c, p));
	qpn = c.qp[0].qpn;
	CHECK_EQ(qp_rate(c.d[0], qpn), 0);
	CHECK_EQ(qp_alpha(c.d[0], qpn), 0);
	/* first CNP: alpha 1023, Rc = 25000000 kb/s - 25000000 * 1023 / 2048 = 12512208 */
	inject_cnp(&c, 0, qpn);
	CHECK_EQ(qp_rate(c.d[0], qpn), 12512);
	CHECK_EQ(qp_alpha(c.d[0], qpn), 1023);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_cnp_handled), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_rate_decrease_events), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_limited_qps), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_min_rate_events), 0);
	/* 2 us later, inside the 4 us monitor period: alpha only. Periods: 1023 * 1019 / 1024
	 * + 5 = 1023 (a CNP in it), then 1023 * 1019 / 1024 = 1018 */
	wire_advance(&c.w, 2 * US);
	inject_cnp(&c, 0, qpn);
	CHECK_EQ(qp_rate(c.d[0], qpn), 12512);
	CHECK_EQ(qp_alpha(c.d[0], qpn), 1018);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_cnp_handled), 2);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_rate_decrease_events), 1);
	/* at 5 us: 3 periods (1018 -> 1013 + 5 -> 1013 -> 1008), then the cut with 1008:
	 * 12512208 - 12512208 * 1008 / 2048 = 6353856 */
	wire_advance(&c.w, 3 * US);
	inject_cnp(&c, 0, qpn);
	CHECK_EQ(qp_alpha(c.d[0], qpn), 1008);
	CHECK_EQ(qp_rate(c.d[0], qpn), 6353);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_rate_decrease_events), 2);
	/* alpha decays every dce_tcp_rtt without CNPs, evaluated from elapsed time */
	wire_advance(&c.w, 100 * US);
	alpha = 1008 * 1019 / 1024 + 5;
	for (i = 1; i < 100; i++)
		alpha = alpha * 1019 / 1024;
	CHECK_EQ(qp_alpha(c.d[0], qpn), alpha);
	CHECK_EQ(qp_rate(c.d[0], qpn), 6353);	/* no increase before rpg_time_reset */
	/* no busy timer: the host timer was armed for the increase event, not every 1 us */
	CHECK(c.d[0]->f.timer_arms < 20);
	/* a CNP for the QP once it went to ERR changes nothing */
	RQ(qp_to_err(c.d[0], &c.qp[0]) == TERN_CMD_OK);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_limited_qps), 0);
	CHECK_EQ(qp_rate(c.d[0], qpn), 0);
	inject_cnp(&c, 0, qpn);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_cnp_ignored), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_rate_decrease_events), 2);
out:
	conn_free(&c);
}

/* Reference DCQCN increase (the documented formula), rates in kb/s. */
struct ref {
	uint64_t rc, rt, max;
	uint32_t t, b, f, ai, hai;
	bool limited;
};

static void ref_inc(struct ref *r)
{
	if (r->t >= r->f && r->b >= r->f)
		r->rt += (uint64_t)r->hai * 1000 * ((r->t < r->b ? r->t : r->b) - r->f + 1);
	else if (r->t >= r->f || r->b >= r->f)
		r->rt += (uint64_t)r->ai * 1000;
	if (r->rt > r->max)
		r->rt = r->max;
	r->rc = (r->rt + r->rc + 1) / 2;
	if (r->rc >= r->max) {
		r->rc = r->max;
		r->limited = false;
	}
}

/* Timer stage only: fast recovery, then additive increase, back to unlimited. */
static void t_rp_recovery_timer(void)
{
	struct conn c;
	uint8_t p[CC_LEN];
	struct ref r;
	uint32_t qpn;
	unsigned int ev = 0, fr = 0, ai = 0;

	cc_defaults(p);
	p[CCP(rp_en)] = 0xff;
	wr32(p + CCP(rpg_time_reset), 10);
	wr32(p + CCP(rpg_byte_reset), 0);
	wr32(p + CCP(rpg_threshold), 3);
	wr32(p + CCP(rpg_ai_rate), 700);
	RQ(rp_setup(&c, p));
	qpn = c.qp[0].qpn;
	inject_cnp(&c, 0, qpn);
	/* one fast recovery step, then a second cut so that Rt is below the maximum */
	wire_advance(&c.w, 10 * US);
	CHECK_EQ(qp_rate(c.d[0], qpn), (25000000 + 12512208 + 1) / 2 / 1000);
	inject_cnp(&c, 0, qpn);
	memset(&r, 0, sizeof(r));
	r.max = 25000000;
	r.rt = (25000000 + 12512208 + 1) / 2;	/* 18756104 */
	/* alpha at 10 us: 1023 + 9 decays... read back what the device used */
	r.rc = 0;
	r.f = 3;
	r.ai = 700;
	r.hai = 50;
	r.limited = true;
	{
		uint32_t al = qp_alpha(c.d[0], qpn);
		uint64_t rc = r.rt - (r.rt * al >> 11);

		/* alpha at 10 us after the first CNP: one period with it, nine without */
		uint32_t x = 1023 * 1019 / 1024 + 5;
		unsigned int k;

		for (k = 1; k < 10; k++)
			x = x * 1019 / 1024;
		CHECK_EQ(al, x);
		if (rc < r.rt / 2)
			rc = r.rt / 2;
		r.rc = rc;
	}
	CHECK_EQ(qp_rate(c.d[0], qpn), r.rc / 1000);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_rate_increase_events), 1);
	while (r.limited && ev < 200) {
		wire_advance(&c.w, 10 * US);
		r.t++;
		if (r.t < r.f)
			fr++;
		else
			ai++;
		ref_inc(&r);
		ev++;
		CHECK_EQ(qp_rate(c.d[0], qpn), r.limited ? r.rc / 1000 : 0);
		CHECK_EQ(RDEV_STAT(c.d[0], rp_rate_increase_events), 1 + ev);
	}
	CHECK(!r.limited);
	CHECK_EQ(fr, 2);
	CHECK(ai > 5);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_limited_qps), 0);
	CHECK_EQ(qp_alpha(c.d[0], qpn), 0);
	/* unlimited: no more events, no timer left */
	wire_advance(&c.w, 100 * US);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_rate_increase_events), 1 + ev);
	CHECK_EQ(c.d[0]->f.deadline, UINT64_MAX);
	/* the next CNP is a first one again: alpha from initial_alpha_value */
	inject_cnp(&c, 0, qpn);
	CHECK_EQ(qp_rate(c.d[0], qpn), 12512);
	CHECK_EQ(qp_alpha(c.d[0], qpn), 1023);
out:
	conn_free(&c);
}

/* Byte stage driven by traffic: additive, then hyper increase. */
static void t_rp_hyper(void)
{
	struct conn c;
	struct rmr a, b;
	uint8_t p[CC_LEN];
	struct ref r;
	uint32_t qpn;
	unsigned int i;
	bool mr_ok = false;
	/* a 1000-byte WRITE_ONLY: 14 + 20 + 8 + 12 + 16 + 1000 + 4 bytes */
	const uint32_t frame = 1074;

	cc_defaults(p);
	p[CCP(rp_en)] = 0xff;
	wr32(p + CCP(rpg_time_reset), 100);
	wr32(p + CCP(rpg_byte_reset), frame);
	wr32(p + CCP(rpg_threshold), 1);
	wr32(p + CCP(rpg_ai_rate), 10);
	wr32(p + CCP(rpg_hai_rate), 100);
	wr32(p + CCP(rate_to_set_on_first_cnp), 1000);
	RQ(rp_setup(&c, p));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 65536, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 65536, MR_RW, 0) == 0);
	mr_ok = true;
	qpn = c.qp[0].qpn;
	inject_cnp(&c, 0, qpn);
	memset(&r, 0, sizeof(r));
	r.max = 25000000;
	r.rt = 25000000;
	r.rc = 1000000;			/* rate_to_set_on_first_cnp */
	r.f = 1;
	r.ai = 10;
	r.hai = 100;
	r.limited = true;
	CHECK_EQ(qp_rate(c.d[0], qpn), 1000);
	/* Rt stays at the maximum on the first cut: cut again 10 us later so AI/HAI show */
	wire_advance(&c.w, 10 * US);
	inject_cnp(&c, 0, qpn);
	{
		uint32_t al = qp_alpha(c.d[0], qpn);

		r.rt = r.rc;
		r.rc = r.rc - (r.rc * al >> 11);
		if (r.rc < r.rt / 2)
			r.rc = r.rt / 2;
	}
	CHECK_EQ(qp_rate(c.d[0], qpn), r.rc / 1000);
	/* t = 10 us: one packet: byte stage 1, timer stage 0 -> additive */
	RQ(do_write(&c, 0, &a, &b, 1000, 1));
	r.b = 1;
	ref_inc(&r);
	CHECK_EQ(qp_rate(c.d[0], qpn), r.rc / 1000);
	/* t = 110 us: timer stage 1 -> hyper, i = 1 */
	wire_advance(&c.w, 100 * US);
	r.t = 1;
	ref_inc(&r);
	CHECK_EQ(qp_rate(c.d[0], qpn), r.rc / 1000);
	for (i = 2; i <= 4; i++) {
		/* packets: byte stage i, min(1, i) = 1 -> HAI * 1 */
		RQ(do_write(&c, 0, &a, &b, 1000, i));
		r.b = i;
		ref_inc(&r);
		CHECK_EQ(qp_rate(c.d[0], qpn), r.rc / 1000);
	}
	/* t = 210, 310 us: timer stages 2, 3 -> HAI * 2, HAI * 3 */
	for (i = 2; i <= 3; i++) {
		wire_advance(&c.w, 100 * US);
		r.t = i;
		ref_inc(&r);
		CHECK_EQ(qp_rate(c.d[0], qpn), r.limited ? r.rc / 1000 : 0);
	}
	CHECK_EQ(RDEV_STAT(c.d[0], rp_rate_increase_events), 7);
out:
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

/* rpg_min_dec_fac, rpg_min_rate, rate_to_set_on_first_cnp, rpg_max_rate. */
static void t_rp_clamps(void)
{
	struct conn c;
	uint8_t p[CC_LEN];
	uint32_t qpn;

	cc_defaults(p);
	p[CCP(rp_en)] = 0xff;
	wr32(p + CCP(rpg_gd), 1);		/* alpha/2 in 1/1024: more than everything */
	wr32(p + CCP(rpg_min_dec_fac), 80);
	wr32(p + CCP(rpg_time_reset), 131071);
	RQ(rp_setup(&c, p));
	qpn = c.qp[0].qpn;
	inject_cnp(&c, 0, qpn);
	CHECK_EQ(qp_rate(c.d[0], qpn), 20000);	/* 80 % of 25000 */
	CHECK_EQ(RDEV_STAT(c.d[0], rp_min_rate_events), 0);
	/* a minimum rate above 80 % of 20000 */
	wr32(p + CCP(rpg_min_rate), 19000);
	RQ(cc_apply(c.d[0], p));
	wire_advance(&c.w, 4 * US);
	inject_cnp(&c, 0, qpn);
	CHECK_EQ(qp_rate(c.d[0], qpn), 19000);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_min_rate_events), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_rate_decrease_events), 2);
	/* a lower maximum caps a limited QP at once; the maximum itself is not limited */
	wr32(p + CCP(rpg_max_rate), 19500);
	RQ(cc_apply(c.d[0], p));
	CHECK_EQ(qp_rate(c.d[0], qpn), 19000);
	wr32(p + CCP(rpg_max_rate), 19000);
	RQ(cc_apply(c.d[0], p));
	CHECK_EQ(qp_rate(c.d[0], qpn), 0);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_limited_qps), 0);
	/* rate_to_set_on_first_cnp replaces a first cut only */
	wr32(p + CCP(rpg_max_rate), 0);
	wr32(p + CCP(rpg_min_rate), 1);
	wr32(p + CCP(rpg_gd), 11);
	wr32(p + CCP(rpg_min_dec_fac), 50);
	wr32(p + CCP(rate_to_set_on_first_cnp), 3000);
	RQ(cc_apply(c.d[0], p));
	wire_advance(&c.w, 10 * US);
	inject_cnp(&c, 0, qpn);
	CHECK_EQ(qp_rate(c.d[0], qpn), 3000);
	wire_advance(&c.w, 4 * US);
	inject_cnp(&c, 0, qpn);
	/* alpha 1023 -> 4 periods: (1023*1019/1024 + 5) = 1023, 1018, 1013, 1008 */
	CHECK_EQ(qp_rate(c.d[0], qpn), (3000000 - (3000000ull * 1008 >> 11)) / 1000);
	/* gd 1 cuts to the floor: 1 % of the rate, then the minimum rate (1 Mb/s) */
	wr32(p + CCP(rpg_gd), 1);
	wr32(p + CCP(rpg_min_dec_fac), 1);
	wr32(p + CCP(rpg_min_rate), 1);
	RQ(cc_apply(c.d[0], p));
	wire_advance(&c.w, 4 * US);
	inject_cnp(&c, 0, qpn);
	CHECK_EQ(qp_rate(c.d[0], qpn), 15);	/* 1 % of 1523438 kb/s */
	CHECK_EQ(RDEV_STAT(c.d[0], rp_min_rate_events), 1);
	wire_advance(&c.w, 4 * US);
	inject_cnp(&c, 0, qpn);
	CHECK_EQ(qp_rate(c.d[0], qpn), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_min_rate_events), 2);
	/* RP turned off: the limiter goes at once */
	p[CCP(rp_en)] = 0;
	RQ(cc_apply(c.d[0], p));
	CHECK_EQ(qp_rate(c.d[0], qpn), 0);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_limited_qps), 0);
out:
	conn_free(&c);
}

/* CNPs the reaction point does not take. */
static void t_rp_ignored(void)
{
	struct conn c;
	uint8_t p[CC_LEN], fr[80];
	size_t n;
	uint32_t qpn;

	cc_defaults(p);
	p[CCP(rp_en)] = 0xfe;			/* not priority 0, the QP's */
	RQ(rp_setup(&c, p));
	qpn = c.qp[0].qpn;
	inject_cnp(&c, 0, qpn);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_cnp_ignored), 1);
	CHECK_EQ(qp_rate(c.d[0], qpn), 0);
	p[CCP(rp_en)] = 0xff;
	RQ(cc_apply(c.d[0], p));
	inject_cnp(&c, 0, qpn + 17);		/* no such QP */
	CHECK_EQ(RDEV_STAT(c.d[0], rp_cnp_ignored), 2);
	CHECK_EQ(RDEV_STAT(c.d[0], rx_roce_discards), 0);
	/* a CNP with a bad ICRC is an ICRC error, nothing more */
	n = build_cnp(fr, c.d[1], c.d[0], qpn);
	fr[n - 1] ^= 1;
	tern_model_rx_frame(c.d[0]->f.m, fr, n);
	CHECK_EQ(RDEV_STAT(c.d[0], rx_icrc_errors), 1);
	/* a switch may set FECN/BECN and CE: the ICRC does not cover them */
	n = build_cnp(fr, c.d[1], c.d[0], qpn);
	fr[15] |= 3;				/* CE */
	fr[46] |= 0x80;				/* FECN */
	fr[24] = fr[25] = 0;
	{
		uint16_t cs = t_csum(fr + 14, 20, 0);

		fr[24] = (uint8_t)(cs >> 8);
		fr[25] = (uint8_t)cs;
	}
	tern_model_rx_frame(c.d[0]->f.m, fr, n);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_cnp_handled), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], rx_icrc_errors), 1);
	CHECK_EQ(qp_rate(c.d[0], qpn), 12512);
	/* a QP in RESET does not take CNPs */
	{
		struct qpattr a;

		memset(&a, 0, sizeof(a));
		a.state = TERN_QPS_RESET;
		RQ(qp_modify(c.d[0], qpn, TERN_QP_ATTR_STATE, &a, NULL) == TERN_CMD_OK);
	}
	CHECK_EQ(RDEV_STAT(c.d[0], rp_limited_qps), 0);
	inject_cnp(&c, 0, qpn);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_cnp_ignored), 3);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_cnp_handled), 1);
out:
	conn_free(&c);
}

/* ---- devices with a given link speed and burst allowance -------------------------------- */

static bool conn_setup_cfg(struct conn *c, const struct connopt *o, uint32_t speed_mbps,
			   uint32_t burst)
{
	unsigned int s;

	memset(c, 0, sizeof(*c));
	c->o = *o;
	for (s = 0; s < 2; s++) {
		c->d[s] = rdev_new_cfg(s, speed_mbps, burst);
		if (!c->d[s])
			return false;
	}
	wire_init(&c->w, &c->d[0]->f, &c->d[1]->f);
	for (s = 0; s < 2; s++)
		if (cq_create(c->d[s], &c->cq[s], o->cq_log, false) != TERN_CMD_OK ||
		    qp_create(c->d[s], &c->qp[s], c->d[s]->pdn, &c->cq[s], &c->cq[s], o->sq_log,
			      o->sq_stride, o->rq_log, o->rq_stride, 0, false) != TERN_CMD_OK)
			return false;
	for (s = 0; s < 2; s++)
		if (!qp_connect(c->d[s], &c->qp[s], c->d[!s], c->qp[!s].qpn, o, s))
			return false;
	return true;
}

/* ---- the pacer --------------------------------------------------------------------------- */

/* Data frames of direction @dir: bytes sent from the first one to the last, in virtual time. */
static double measured_mbps(const struct wire *w, unsigned int dir, unsigned int *nframes)
{
	uint64_t t0 = 0, t1 = 0, bytes = 0;
	unsigned int i, n = 0;
	size_t l3;
	bool v6;

	for (i = 0; i < w->nlog; i++) {
		const struct wire_rec *r = &w->log[i];
		const uint8_t *bth = frame_bth(r->data, r->len, &l3, &v6);

		if (r->dir != dir || !bth || !is_data_op(bth[0]))
			continue;
		if (!n)
			t0 = r->t;
		else
			bytes += r->len;	/* the first frame's bytes went before t0 */
		t1 = r->t;
		n++;
	}
	*nframes = n;
	if (t1 <= t0)
		return 0;
	return (double)bytes * 8 * 1000 / (double)(t1 - t0);
}

static void t_pacing(void)
{
	struct conn c;
	struct rmr a, b;
	uint8_t p[CC_LEN];
	struct sge sg;
	struct wc w;
	double mbps;
	unsigned int n;
	unsigned long kicks;
	uint64_t t;
	bool mr_ok = false;

	struct connopt o;

	cc_defaults(p);
	p[CCP(rp_en)] = 0xff;
	wr32(p + CCP(rpg_time_reset), 131071);	/* no increase for 131 ms */
	wr32(p + CCP(rpg_byte_reset), 0);
	wr32(p + CCP(rate_to_set_on_first_cnp), 1000);
	connopt_default(&o);
	RQ(conn_setup_cfg(&c, &o, 25000, 0));	/* exact: no burst allowance */
	RQ(cc_apply(c.d[0], p));
	RQ(cc_apply(c.d[1], p));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 1 << 20, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 1 << 20, MR_RW, 0) == 0);
	mr_ok = true;
	/* unlimited: at line rate (25G: 256 KiB in 86 us; conn_poll waits in 20 us steps) */
	t = wire_now(&c.w);
	RQ(do_write(&c, 0, &a, &b, 256 << 10, 1));
	CHECK(wire_now(&c.w) - t <= 100 * US);
	/* limited to 1000 Mb/s: 1 MiB takes 8.6 ms of virtual time */
	inject_cnp(&c, 0, c.qp[0].qpn);
	CHECK_EQ(qp_rate(c.d[0], c.qp[0].qpn), 1000);
	wire_clear_log(&c.w);
	kicks = c.d[0]->f.total_kicks;
	t = wire_now(&c.w);
	RQ(do_write(&c, 0, &a, &b, 1 << 20, 2));
	mbps = measured_mbps(&c.w, 0, &n);
	printf("#   paced WRITE: %u frames, %.1f Mb/s, %.3f ms\n", n, mbps,
	       (double)(wire_now(&c.w) - t) / 1e6);
	CHECK_EQ(n, 1024);
	CHECK(mbps > 990 && mbps < 1010);
	CHECK(wire_now(&c.w) - t > 8000000);
	/* no spinning: a handful of kicks and timers per packet at most */
	CHECK(c.d[0]->f.total_kicks - kicks < 4 * n);
	/* idle time is no credit (no burst allowance): after 2 ms idle, still 1000 Mb/s */
	wire_advance(&c.w, 2000 * US);
	wire_clear_log(&c.w);
	RQ(do_write(&c, 0, &a, &b, 64 << 10, 3));
	mbps = measured_mbps(&c.w, 0, &n);
	CHECK_EQ(n, 64);
	CHECK(mbps > 990 && mbps < 1010);
	/* READ responses of a limited responder are paced the same way */
	mr_fill(c.d[1], &b, 9);
	inject_cnp(&c, 1, c.qp[1].qpn);
	CHECK_EQ(qp_rate(c.d[1], c.qp[1].qpn), 1000);
	wire_clear_log(&c.w);
	sg = mr_sge(&a, 0, 512 << 10);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 4, &sg, 1, b.iova,
		  b.key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 100000000) == 1);
	CHECK_EQ(w.status, TERN_CQE_OK);
	mbps = measured_mbps(&c.w, 1, &n);
	printf("#   paced READ responses: %u frames, %.1f Mb/s\n", n, mbps);
	CHECK_EQ(n, 512);
	CHECK(mbps > 990 && mbps < 1010);
	CHECK_EQ(mr_diff_pattern(c.d[0], &a, 0, 512 << 10, 9, 0), -1);
out:
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

/* ---- under the MAC: PFC pauses one priority's QPs, nobody spins -------------------------- */

static void pfc_frame(uint8_t fr[60], const struct rdev *from, unsigned int prio, uint16_t quanta)
{
	static const uint8_t dmac[6] = TERN_PFC_DMAC;

	memset(fr, 0, 60);
	memcpy(fr, dmac, 6);
	memcpy(fr + 6, from->mac, 6);
	fr[12] = 0x88;
	fr[13] = 0x08;
	fr[14] = 0x01;
	fr[15] = 0x01;			/* opcode 0x0101 */
	fr[17] = (uint8_t)(1u << prio);	/* class-enable vector */
	fr[18 + 2 * prio] = (uint8_t)(quanta >> 8);
	fr[19 + 2 * prio] = (uint8_t)quanta;
}

static void t_mac_pause(void)
{
	struct connopt o, o3;
	struct conn c;
	struct rqp q3[2];
	struct rmr a, b;
	uint8_t dcb[sizeof(struct tern_dcb_cfg)], fr[60];
	struct sge sg;
	struct wc w[2];
	unsigned long kicks;
	unsigned int s;
	bool mr_ok = false, q3_ok = false;

	memset(q3, 0, sizeof(q3));
	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 1 << 20, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 1 << 20, MR_RW, 0) == 0);
	mr_ok = true;
	/* a second QP pair on priority 3 (VLAN PCP 3) */
	o3 = o;
	o3.vlan_id = 5;
	o3.sl = 3;
	for (s = 0; s < 2; s++)
		RQ(qp_create(c.d[s], &q3[s], c.d[s]->pdn, &c.cq[s], &c.cq[s], o.sq_log, o.sq_stride,
			     o.rq_log, o.rq_stride, 0, false) == TERN_CMD_OK);
	q3_ok = true;
	for (s = 0; s < 2; s++)
		RQ(qp_connect(c.d[s], &q3[s], c.d[!s], q3[!s].qpn, &o3, s));
	/* priority 3 lossless on side 0; the peer pauses it for 65535 quanta */
	RQ(rdev_cmd(c.d[0], TERN_CMD_QUERY_DCB, NULL, 0, dcb, sizeof(dcb), NULL) == TERN_CMD_OK);
	dcb[OFF(struct tern_dcb_cfg, pfc_en)] = 1u << 3;
	RQ(rdev_cmd(c.d[0], TERN_CMD_SET_DCB, dcb, sizeof(dcb), NULL, 0, NULL) == TERN_CMD_OK);
	pfc_frame(fr, c.d[1], 3, 0xffff);
	tern_model_rx_frame(c.d[0]->f.m, fr, sizeof(fr));
	wire_clear_log(&c.w);
	kicks = c.d[0]->f.total_kicks;
	sg = mr_sge(&a, 0, 64 << 10);
	post_send(c.d[0], &q3[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 3, &sg, 1, b.iova,
		  b.key, 0);
	ring_sq(c.d[0], &q3[0]);
	sg = mr_sge(&a, 65536, 64 << 10);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 0, &sg, 1,
		  b.iova + 65536, b.key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	/* priority 0 goes through; priority 3 sends nothing and nothing spins */
	RQ(conn_poll(&c, 0, w, 1, 0) == 1);
	CHECK_EQ(w[0].wr_id, 0);
	CHECK_EQ(w[0].status, TERN_CQE_OK);
	CHECK_EQ(wire_count(&c.w, 0, OP_WRITE_FIRST), 1);
	CHECK(c.d[0]->f.total_kicks - kicks < 100);
	wire_advance(&c.w, 500 * US);
	CHECK(!cq_poll(c.d[0], &c.cq[0], &w[0]));
	CHECK_EQ(wire_count(&c.w, 0, OP_WRITE_FIRST), 1);
	CHECK(c.d[0]->f.total_kicks - kicks < 100);
	/* XON: it goes at once */
	pfc_frame(fr, c.d[1], 3, 0);
	tern_model_rx_frame(c.d[0]->f.m, fr, sizeof(fr));
	RQ(conn_poll(&c, 0, w, 1, 0) == 1);
	CHECK_EQ(w[0].wr_id, 3);
	CHECK_EQ(w[0].status, TERN_CQE_OK);
	CHECK_EQ(wire_count(&c.w, 0, OP_WRITE_FIRST), 2);
	/* a pause that runs out by itself: 1000 quanta at 25G = 20.48 us */
	pfc_frame(fr, c.d[1], 3, 1000);
	tern_model_rx_frame(c.d[0]->f.m, fr, sizeof(fr));
	sg = mr_sge(&a, 0, 4096);
	post_send(c.d[0], &q3[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 4, &sg, 1, b.iova,
		  b.key, 0);
	ring_sq(c.d[0], &q3[0]);
	wire_pump(&c.w);
	CHECK(!cq_poll(c.d[0], &c.cq[0], &w[0]));
	wire_advance(&c.w, 20 * US);
	CHECK(!cq_poll(c.d[0], &c.cq[0], &w[0]));
	wire_advance(&c.w, 1 * US);
	RQ(cq_poll(c.d[0], &c.cq[0], &w[0]));
	CHECK_EQ(w[0].wr_id, 4);
	/* the responder's READ responses wait for its priority too */
	RQ(rdev_cmd(c.d[1], TERN_CMD_SET_DCB, dcb, sizeof(dcb), NULL, 0, NULL) == TERN_CMD_OK);
	pfc_frame(fr, c.d[0], 3, 0xffff);
	tern_model_rx_frame(c.d[1]->f.m, fr, sizeof(fr));
	wire_clear_log(&c.w);
	kicks = c.d[1]->f.total_kicks;
	sg = mr_sge(&a, 0, 16384);
	post_send(c.d[0], &q3[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 5, &sg, 1, b.iova,
		  b.key, 0);
	ring_sq(c.d[0], &q3[0]);
	wire_advance(&c.w, 100 * US);
	CHECK(!cq_poll(c.d[0], &c.cq[0], &w[0]));
	CHECK_EQ(wire_count(&c.w, 0, OP_READ_REQ), 1);
	CHECK_EQ(wire_count(&c.w, 1, -1), 0);
	CHECK(c.d[1]->f.total_kicks - kicks < 100);
	pfc_frame(fr, c.d[0], 3, 0);
	tern_model_rx_frame(c.d[1]->f.m, fr, sizeof(fr));
	RQ(conn_poll(&c, 0, w, 1, 0) == 1);
	CHECK_EQ(w[0].wr_id, 5);
	CHECK_EQ(w[0].status, TERN_CQE_OK);
	CHECK_EQ(wire_count(&c.w, 1, -1), 16);
out:
	if (q3_ok)
		for (s = 0; s < 2; s++) {
			qmem_free(&q3[s].sq);
			qmem_free(&q3[s].rq);
		}
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

static void t_line_rate(void)
{
	struct connopt o;
	struct conn c;
	struct rmr a, b;
	uint8_t p[CC_LEN];
	double mbps, line;
	unsigned int n;
	unsigned long kicks;
	bool mr_ok = false;

	connopt_default(&o);
	o.mtu = 5;				/* 4096: frames of 4150 bytes */
	RQ(conn_setup_cfg(&c, &o, 10000, 0));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 4 << 20, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 4 << 20, MR_RW, 0) == 0);
	mr_ok = true;
	cc_defaults(p);
	p[CCP(rp_en)] = 0xff;
	wr32(p + CCP(rpg_time_reset), 131071);
	wr32(p + CCP(rpg_byte_reset), 0);
	wr32(p + CCP(rate_to_set_on_first_cnp), 2000);
	RQ(cc_apply(c.d[0], p));
	/* not limited: the line's rate, (L + 24) bytes of line time per frame of L */
	kicks = c.d[0]->f.total_kicks;
	RQ(do_write(&c, 0, &a, &b, 4 << 20, 1));
	mbps = measured_mbps(&c.w, 0, &n);
	line = 10000.0 * (4096 + 54) / (4096 + 54 + 24);
	printf("#   unlimited at 10G: %u frames, %.1f Mb/s (line %.1f)\n", n, mbps, line);
	CHECK_EQ(n, 1024);
	CHECK(mbps > line * 0.995 && mbps < line * 1.005);
	CHECK(c.d[0]->f.total_kicks - kicks < 4 * n);
	/* limited to 2000 Mb/s: the pacer, not the line */
	inject_cnp(&c, 0, c.qp[0].qpn);
	CHECK_EQ(qp_rate(c.d[0], c.qp[0].qpn), 2000);
	wire_clear_log(&c.w);
	kicks = c.d[0]->f.total_kicks;
	RQ(do_write(&c, 0, &a, &b, 2 << 20, 2));
	mbps = measured_mbps(&c.w, 0, &n);
	printf("#   limited at 10G: %u frames, %.1f Mb/s\n", n, mbps);
	CHECK_EQ(n, 512);
	CHECK(mbps > 1990 && mbps < 2010);
	CHECK(c.d[0]->f.total_kicks - kicks < 4 * n);
out:
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

/* With a burst allowance (QEMU: 64 KiB) the pacer wakes once per half of it, not per frame. */
static void t_pacing_burst(void)
{
	struct connopt o;
	struct conn c;
	struct rmr a, b;
	uint8_t p[CC_LEN];
	double mbps;
	unsigned int n;
	unsigned long arms;
	uint64_t t;
	bool mr_ok = false;

	cc_defaults(p);
	p[CCP(rp_en)] = 0xff;
	wr32(p + CCP(rpg_time_reset), 131071);
	wr32(p + CCP(rpg_byte_reset), 0);
	wr32(p + CCP(rate_to_set_on_first_cnp), 1000);
	connopt_default(&o);
	o.mtu = 5;
	RQ(conn_setup_cfg(&c, &o, 25000, 64 << 10));
	RQ(cc_apply(c.d[0], p));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 8 << 20, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 8 << 20, MR_RW, 0) == 0);
	mr_ok = true;
	inject_cnp(&c, 0, c.qp[0].qpn);
	wire_clear_log(&c.w);
	arms = c.d[0]->f.timer_arms;
	t = wire_now(&c.w);
	RQ(do_write(&c, 0, &a, &b, 8 << 20, 1));
	mbps = measured_mbps(&c.w, 0, &n);
	printf("#   8 MiB at 1000 Mb/s, 64 KiB burst: %.1f Mb/s, %.3f ms, %lu timer arms\n", mbps,
	       (double)(wire_now(&c.w) - t) / 1e6, c.d[0]->f.timer_arms - arms);
	CHECK_EQ(n, 2048);
	/* the first 64 KiB go at once; the rest at the rate */
	CHECK(mbps > 1000 && mbps < 1000 * 1.02);
	CHECK(wire_now(&c.w) - t > (uint64_t)((8 << 20) - (64 << 10)) * 8);
	/* one wakeup per 32 KiB (256, not one per frame: 2048), each arming the host timer
	 * twice (the pacer's deadline, then the retransmit timer's again) */
	CHECK(c.d[0]->f.timer_arms - arms < 600);
out:
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

/* ---- HPCC and INT ----------------------------------------------------------------------- */

static void put_b16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_b32(uint8_t *p, uint32_t v)
{
	put_b16(p, v >> 16);
	put_b16(p + 2, v);
}

/* HPCC (and INT) on @prios; 0x01 is the test connections' priority. */
static bool hpcc_apply(struct rdev *d, uint8_t prios)
{
	uint8_t p[CC_LEN];

	cc_defaults(p);
	p[CCP(hpcc_en)] = prios;
	return cc_apply(d, p);
}

/* WRITE @len bytes of a's pattern to b at 0 and compare both sides. */
static bool write_check(struct conn *c, struct rmr *a, struct rmr *b, uint32_t len,
			uint64_t id)
{
	uint8_t *x = malloc(len), *y = malloc(len);
	bool ok = x && y && do_write(c, 0, a, b, len, id);

	if (ok) {
		mr_read(c->d[0], a, 0, x, len);
		mr_read(c->d[1], b, 0, y, len);
		ok = !memcmp(x, y, len);
	}
	free(x);
	free(y);
	return ok;
}

/* Count the logged frames per direction: with INT (of @type), without, and bad ICRCs. */
struct int_count {
	unsigned int with[2], without[2], bad_icrc, bad_shim;
};

static struct int_count count_int(const struct wire *w, uint8_t type1)
{
	struct int_count n;
	unsigned int i;
	struct pkt p;

	memset(&n, 0, sizeof(n));
	for (i = 0; i < w->nlog; i++) {
		const struct wire_rec *r = &w->log[i];

		if (!pkt_parse(r->data, r->len, &p))
			continue;
		if (p.icrc_wire != p.icrc_calc)
			n.bad_icrc++;
		if (!p.has_int) {
			n.without[r->dir]++;
			continue;
		}
		n.with[r->dir]++;
		/* requests one way, their echoes the other */
		if (p.int_type != (r->dir ? type1 ^ 3 : type1) || p.int_max_hops != 5 ||
		    p.int_next_dport != TERN_ROCE_UDP_DPORT || p.int_flags || p.tclass & 3)
			n.bad_shim++;
	}
	return n;
}

/*
 * INT on the wire between two NICs (no switch: no records): HPCC's requests carry a REQUEST
 * shim, the ACKs an ECHO; the ICRC is the one without the shim; a receiver with HPCC on
 * other priorities only takes the requests and answers plainly; a receiver with INT off
 * (hpcc_en 0) does not take port-4792 frames as RoCE at all, like a NIC that does not know
 * INT; HPCC off everywhere sends what it always did.
 */
static void t_hpcc_wire(void)
{
	struct conn c;
	struct connopt o;
	struct rmr a, b;
	struct int_count n;
	struct wire_rec req = { 0 };
	struct pkt p;
	bool mr_ok = false;
	uint64_t acks, sent, rx, discards;
	unsigned int i;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 1 << 20, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 1 << 20, MR_RW, 0) == 0);
	mr_ok = true;
	mr_fill(c.d[0], &a, 7);
	/* both ends */
	RQ(hpcc_apply(c.d[0], 0x01) && hpcc_apply(c.d[1], 0x01));
	CHECK(write_check(&c, &a, &b, 256 << 10, 1));
	n = count_int(&c.w, TERN_INT_TYPE_REQUEST);
	CHECK_EQ(n.without[0], 0);
	CHECK(n.with[0] >= 64);			/* 256 KiB at MTU 4096 */
	CHECK(n.with[1] >= 1);
	CHECK_EQ(n.without[1], 0);
	CHECK_EQ(n.bad_icrc, 0);
	CHECK_EQ(n.bad_shim, 0);
	acks = RDEV_STAT(c.d[0], hpcc_int_echo_acks);
	sent = RDEV_STAT(c.d[1], hpcc_int_echoes_sent);
	CHECK(acks >= 1);
	CHECK_EQ(sent, acks);		/* no switch: echoes of no records, every one counted */
	CHECK_EQ(RDEV_STAT(c.d[1], rx_int_discards), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_discards), 0);
	/* a receiver with HPCC on another priority only: takes the requests, plain ACKs */
	RQ(hpcc_apply(c.d[1], 0x80));
	wire_clear_log(&c.w);
	CHECK(write_check(&c, &a, &b, 256 << 10, 2));
	n = count_int(&c.w, TERN_INT_TYPE_REQUEST);
	CHECK(n.with[0] >= 64);
	CHECK_EQ(n.with[1], 0);
	CHECK(n.without[1] >= 1);
	CHECK_EQ(n.bad_icrc, 0);
	CHECK_EQ(RDEV_STAT(c.d[0], hpcc_int_echo_acks), acks);
	/* a receiver with INT off: one of those requests again is not RoCE to it */
	for (i = 0; i < c.w.nlog && !req.len; i++)
		if (c.w.log[i].dir == 0 && pkt_parse(c.w.log[i].data, c.w.log[i].len, &p) &&
		    p.has_int)
			req = c.w.log[i];
	RQ(req.len);
	RQ(hpcc_apply(c.d[1], 0));
	rx = RDEV_STAT(c.d[1], rx_roce_packets);
	discards = RDEV_STAT(c.d[1], rx_roce_discards) + RDEV_STAT(c.d[1], rx_int_discards) +
		   RDEV_STAT(c.d[1], duplicate_request);
	CHECK_EQ(tern_model_rx_frame(c.d[1]->f.m, req.data, req.len), req.len);
	fk_run(&c.d[1]->f);
	CHECK_EQ(c.d[1]->f.nframes, 0);		/* no ACK */
	fk_clear_frames(&c.d[1]->f);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_packets), rx);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_discards) + RDEV_STAT(c.d[1], rx_int_discards) +
		 RDEV_STAT(c.d[1], duplicate_request), discards);
	/* and with it on, the same frame is a duplicate request, ACKed */
	RQ(hpcc_apply(c.d[1], 0x80));
	CHECK_EQ(tern_model_rx_frame(c.d[1]->f.m, req.data, req.len), req.len);
	fk_run(&c.d[1]->f);
	CHECK(c.d[1]->f.nframes >= 1);
	fk_clear_frames(&c.d[1]->f);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_packets), rx + 1);
	/* off everywhere (the default): no shim, port 4791 */
	RQ(hpcc_apply(c.d[0], 0));
	wire_clear_log(&c.w);
	CHECK(write_check(&c, &a, &b, 64 << 10, 3));
	n = count_int(&c.w, TERN_INT_TYPE_REQUEST);
	CHECK_EQ(n.with[0] + n.with[1], 0);
	CHECK(n.without[0] >= 16);
	CHECK_EQ(qp_rate(c.d[0], c.qp[0].qpn), 0);
out:
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

/*
 * The test as one switch on the way from side 0 to side 1: every INT request gets a record
 * and reaches side 1 that way. The hop's clock is its own (the wire moves a burst in no
 * virtual time): busy, each frame takes its time at the line rate and counts its line
 * bytes, with @qlen queued; idle, 10 us pass per frame and no byte.
 */
struct int_sw {
	bool busy;
	uint32_t qlen;
	uint64_t tx, ts;
	unsigned int inserted;
	unsigned int dir;	/* the direction it is on: 0, side 0 to 1 (requests); 1 back */
	unsigned int drop_at;	/* lose the frame that would be record number drop_at (0: none) */
	unsigned int dropped;
};

static enum wire_action int_switch(struct wire *w, unsigned int dir, unsigned int idx,
				   uint8_t *f, size_t *len)
{
	struct int_sw *s = w->ctx;
	size_t sh = 14 + 20 + 8, n = *len + 16;
	struct pkt p;
	uint8_t *g;

	(void)idx;
	if (dir != s->dir || !pkt_parse(f, *len, &p) || !p.has_int ||
	    p.int_type != TERN_INT_TYPE_REQUEST || p.vlan || p.ipver != 4 || p.int_nhops)
		return W_DELIVER;
	if (s->drop_at && s->inserted + 1 == s->drop_at) {
		s->drop_at = 0;
		s->dropped++;
		return W_DROP;
	}
	if (s->busy) {
		s->tx += n + 24;
		s->ts += (n + 24) * 8000 / LINE_MBPS;
	} else {
		s->ts += 10000;
	}
	g = malloc(n);
	if (!g)
		return W_DELIVER;
	memcpy(g, f, sh + 8);
	put_b32(g + sh + 8, (uint32_t)s->ts);
	put_b32(g + sh + 12, (uint32_t)s->tx);
	put_b32(g + sh + 16, s->qlen);
	put_b32(g + sh + 20, LINE_MBPS);
	memcpy(g + sh + 24, f + sh + 8, *len - sh - 8);
	g[sh + 1] = 1;
	put_b16(g + 14 + 2, (uint32_t)(n - 14));
	put_b16(g + 14 + 20 + 4, (uint32_t)(n - 34));
	pkt_fix_ipv4_csum(g, n);	/* the ICRC stays: it does not cover the shim */
	tern_model_rx_frame(w->end[!dir]->m, g, n);
	free(g);
	s->inserted++;
	return W_DROP;
}

/* Every echo in direction 1 carries one record with @qlen at the line rate. */
static bool echoes_are(const struct wire *w, uint32_t qlen, unsigned int *nechoes)
{
	unsigned int i;
	struct pkt p;
	bool ok = true;

	*nechoes = 0;
	for (i = 0; i < w->nlog; i++) {
		if (w->log[i].dir != 1 || !pkt_parse(w->log[i].data, w->log[i].len, &p) ||
		    !p.has_int)
			continue;
		(*nechoes)++;
		ok &= p.int_type == TERN_INT_TYPE_ECHO && p.int_nhops == 1 &&
		      p.int_hop[0].qlen == qlen && p.int_hop[0].rate_mbps == LINE_MBPS &&
		      p.icrc_wire == p.icrc_calc;
	}
	return ok;
}

/*
 * The window from the echoes: a busy hop with a standing queue (U > eta) cuts it and the QP
 * is paced below the line rate; an idle hop (U -> 0) grows it back to the line-rate BDP,
 * where the QP is no longer limited. Data intact, nothing resent.
 */
static void t_hpcc_window(void)
{
	struct conn c;
	struct connopt o;
	struct rmr a, b;
	struct int_sw sw = { .busy = true, .qlen = 100000 };
	uint8_t in[4], qo[sizeof(struct tern_cmd_query_qp_out)];
	uint32_t rate, bdp = LINE_MBPS * TERN_CC_DEF_HPCC_BASE_RTT / 8000;
	bool mr_ok = false;
	struct hpcc_q h;
	struct cqe cq;
	unsigned int ne;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 1 << 20, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 1 << 20, MR_RW, 0) == 0);
	mr_ok = true;
	mr_fill(c.d[0], &a, 9);
	CHECK(!qp_hpcc(c.d[0], c.qp[0].qpn, &h) && !h.window);
	RQ(hpcc_apply(c.d[0], 0x01) && hpcc_apply(c.d[1], 0x01));
	/* before any request: the window is the line-rate BDP */
	CHECK(qp_hpcc(c.d[0], c.qp[0].qpn, &h));
	CHECK_EQ(h.window, bdp);
	CHECK_EQ(h.util, 0);
	c.w.filter = int_switch;
	c.w.ctx = &sw;
	/* congested: qlen 100 kB against B x T = 37.5 kB, the link full */
	CHECK(write_check(&c, &a, &b, 1 << 20, 1));
	CHECK(sw.inserted >= 256);
	CHECK(echoes_are(&c.w, 100000, &ne));
	CHECK(ne >= 16);
	CHECK(RDEV_STAT(c.d[1], hpcc_int_echoes_sent) >= ne);
	CHECK(RDEV_STAT(c.d[0], hpcc_window_updates) >= 2);
	rate = qp_rate(c.d[0], c.qp[0].qpn);
	printf("#   congested hop: paced at %u Mb/s (line %u)\n", rate, LINE_MBPS);
	CHECK(rate > 0 && rate < LINE_MBPS / 2);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_limited_qps), 1);
	/* QUERY_QP shows why: U far above eta, the window cut below the BDP, paced at W / T */
	CHECK(qp_hpcc(c.d[0], c.qp[0].qpn, &h));
	printf("#   QUERY_QP: window %u bytes, U %u/1000, stage %u\n", h.window, h.util, h.stage);
	CHECK(h.util > 2000);
	CHECK(h.window > 0 && h.window < bdp / 2);
	CHECK_EQ(h.rate, (uint32_t)((uint64_t)h.window * 8000 / TERN_CC_DEF_HPCC_BASE_RTT));
	/* a caller with the reply's first version (no HPCC fields) still gets its answer */
	wr32(in, c.qp[0].qpn);
	CHECK_EQ(rdev_cmd(c.d[0], TERN_CMD_QUERY_QP, in, 4, qo, TERN_QUERY_QP_OUT_V1_LEN, &cq),
		 TERN_CMD_OK);
	CHECK_EQ(cq.out_len, TERN_QUERY_QP_OUT_V1_LEN);
	CHECK_EQ(rd32(qo + QQO(cc_rate_mbps)), rate);
	CHECK_EQ(rdev_cmd(c.d[0], TERN_CMD_QUERY_QP, in, 4, qo, TERN_QUERY_QP_OUT_V1_LEN - 1, NULL),
		 TERN_CMD_BAD_LEN);
	/* the hop goes idle: back to the line rate, not limited */
	sw.busy = false;
	sw.qlen = 0;
	wire_clear_log(&c.w);
	CHECK(write_check(&c, &a, &b, 1 << 20, 2));
	CHECK(echoes_are(&c.w, 0, &ne));
	CHECK_EQ(qp_rate(c.d[0], c.qp[0].qpn), 0);
	CHECK(qp_hpcc(c.d[0], c.qp[0].qpn, &h));
	CHECK(h.util < 950 && h.window == bdp);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_limited_qps), 0);
	CHECK_EQ(RDEV_STAT(c.d[0], retrans_pkts), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_int_discards), 0);
	/* turning HPCC off releases a limited QP */
	sw.busy = true;
	sw.qlen = 100000;
	CHECK(write_check(&c, &a, &b, 1 << 20, 3));
	CHECK(qp_rate(c.d[0], c.qp[0].qpn) > 0);
	RQ(hpcc_apply(c.d[0], 0));
	CHECK_EQ(qp_rate(c.d[0], c.qp[0].qpn), 0);
	CHECK(!qp_hpcc(c.d[0], c.qp[0].qpn, &h) && !h.window && !h.util);
out:
	c.w.filter = NULL;
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

/* Side 0 READs @len bytes of b into a: completed OK with b's bytes. */
static bool read_check(struct conn *c, struct rmr *a, struct rmr *b, uint32_t len, uint64_t id)
{
	uint8_t *x = malloc(len), *y = malloc(len);
	struct sge sg = mr_sge(a, 0, len);
	struct wc w;
	bool ok = x && y;

	if (ok) {
		post_send(c->d[0], &c->qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, id, &sg, 1,
			  b->iova, b->key, 0);
		ring_sq(c->d[0], &c->qp[0]);
		ok = conn_poll(c, 0, &w, 1, 200000000) == 1 && w.status == TERN_CQE_OK &&
		     w.wr_id == id;
	}
	if (ok) {
		mr_read(c->d[0], a, 0, x, len);
		mr_read(c->d[1], b, 0, y, len);
		ok = !memcmp(x, y, len);
	}
	free(x);
	free(y);
	return ok;
}

/*
 * Every RESP_ECHO (from side 0) carries one record with @qlen at the line rate and the PSN of
 * a READ response; none goes to port 4791 (an ACK there would be the requester's).
 */
static bool resp_echoes_are(const struct wire *w, uint32_t qlen, unsigned int *nechoes,
			    unsigned int *nacks)
{
	unsigned int i;
	struct pkt p;
	bool ok = true;

	*nechoes = *nacks = 0;
	for (i = 0; i < w->nlog; i++) {
		if (w->log[i].dir != 0 || !pkt_parse(w->log[i].data, w->log[i].len, &p) ||
		    p.opcode != OP_ACK)
			continue;
		if (!p.has_int) {
			(*nacks)++;
			continue;
		}
		(*nechoes)++;
		ok &= p.int_type == TERN_INT_TYPE_RESP_ECHO && p.int_nhops == 1 &&
		      p.int_hop[0].qlen == qlen && p.int_hop[0].rate_mbps == LINE_MBPS &&
		      p.icrc_wire == p.icrc_calc;
	}
	return ok;
}

/*
 * READ responses under HPCC: the responder's QP is their data sender. They cross a congested
 * hop (side 1 to 0) that appends its record; the requester sends each record back in a
 * RESP_ECHO, and the responder's window and pacer follow: U far above eta, W below half the
 * BDP, paced below half the line, while the requester's own window stays at the BDP. A
 * RESP_ECHO is telemetry only: no ACK from side 0, side 1's own WRITE afterwards completes and
 * nothing is resent. An idle hop brings the responder back to the line rate. A response lost
 * on the way is recovered (go-back-N or selective repeat: @sr) with the data intact.
 */
static void hpcc_read(bool sr)
{
	struct conn c;
	struct connopt o;
	struct rmr a, b;
	struct int_sw sw = { .busy = true, .qlen = 100000, .dir = 1 };
	uint32_t rate, bdp = LINE_MBPS * TERN_CC_DEF_HPCC_BASE_RTT / 8000;
	bool mr_ok = false;
	struct hpcc_q h;
	unsigned int ne, nacks, ins;

	connopt_default(&o);		/* MTU 1024: 1024 responses per MiB */
	if (sr)
		o.xport = TERN_QP_XPORT_SR;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 1 << 20, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 1 << 20, MR_RW, 0) == 0);
	mr_ok = true;
	mr_fill(c.d[1], &b, 7);
	RQ(hpcc_apply(c.d[0], 0x01) && hpcc_apply(c.d[1], 0x01));
	c.w.filter = int_switch;
	c.w.ctx = &sw;
	wire_clear_log(&c.w);
	CHECK(read_check(&c, &a, &b, 1 << 20, 1));
	CHECK_EQ(sw.inserted, 1024);
	CHECK(resp_echoes_are(&c.w, 100000, &ne, &nacks));
	printf("#   %u READ responses with a record, %u RESP_ECHOs, %u plain ACKs from the "
	       "requester\n", sw.inserted, ne, nacks);
	CHECK_EQ(ne, sw.inserted);
	CHECK_EQ(nacks, 0);
	CHECK_EQ(RDEV_STAT(c.d[0], hpcc_int_echoes_sent), ne);
	CHECK_EQ(RDEV_STAT(c.d[1], hpcc_int_echo_acks), ne);
	CHECK(RDEV_STAT(c.d[1], hpcc_window_updates) >= 2);
	rate = qp_rate(c.d[1], c.qp[1].qpn);
	CHECK(qp_hpcc(c.d[1], c.qp[1].qpn, &h));
	printf("#   responder: paced at %u Mb/s, window %u bytes, U %u/1000\n", rate, h.window,
	       h.util);
	CHECK(rate > 0 && rate < LINE_MBPS / 2);
	CHECK(h.util > 2000);
	CHECK(h.window > 0 && h.window < bdp / 2);
	/* the requester's window: no echo of its own (its READ requests met no switch) */
	CHECK(qp_hpcc(c.d[0], c.qp[0].qpn, &h));
	CHECK_EQ(h.window, bdp);
	CHECK_EQ(qp_rate(c.d[0], c.qp[0].qpn), 0);
	/* RESP_ECHOs never reached side 1's ACK path: its own WRITE is fine */
	CHECK(do_write(&c, 1, &b, &a, 65536, 2));
	CHECK_EQ(RDEV_STAT(c.d[0], retrans_pkts) + RDEV_STAT(c.d[1], retrans_pkts), 0);
	CHECK_EQ(RDEV_STAT(c.d[0], rx_int_discards) + RDEV_STAT(c.d[1], rx_int_discards), 0);
	/* the hop goes idle: back to the line rate */
	sw.busy = false;
	sw.qlen = 0;
	CHECK(read_check(&c, &a, &b, 1 << 20, 3));
	CHECK_EQ(qp_rate(c.d[1], c.qp[1].qpn), 0);
	CHECK(qp_hpcc(c.d[1], c.qp[1].qpn, &h));
	CHECK(h.util < 950 && h.window == bdp);
	/* a full line with no queue (U about 1), and one response lost: recovered, intact */
	sw.busy = true;
	sw.qlen = 0;
	mr_fill(c.d[1], &b, 8);
	ins = sw.inserted;
	sw.drop_at = ins + 300;
	CHECK(read_check(&c, &a, &b, 1 << 20, 4));
	printf("#   one response lost: %u records after it, requester resent %lu (selective %lu)\n",
	       sw.inserted - ins, (unsigned long)RDEV_STAT(c.d[0], retrans_pkts),
	       (unsigned long)RDEV_STAT(c.d[0], selective_retrans_pkts));
	CHECK_EQ(sw.dropped, 1);
	CHECK(sw.inserted - ins >= 1024);
	CHECK(RDEV_STAT(c.d[0], retrans_pkts) + RDEV_STAT(c.d[0], selective_retrans_pkts) > 0);
	CHECK(qp_rate(c.d[1], c.qp[1].qpn) > 0);
out:
	c.w.filter = NULL;
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

static void t_hpcc_read(void)
{
	hpcc_read(false);
}

static void t_hpcc_read_sr(void)
{
	hpcc_read(true);
}

/* Malformed INT shims are dropped and counted, nothing else happens. */
static void t_hpcc_bad_shim(void)
{
	static const struct {
		size_t off;
		uint8_t val;
	} cases[] = {
		{ 0, 0 }, { 0, 4 },		/* type (3 is RESP_ECHO) */
		{ 2, 0 }, { 2, 6 },		/* max_hops */
		{ 1, 6 },			/* nhops > max_hops */
		{ 3, 2 },			/* unknown flag */
		{ 4, 0x13 },			/* next_dport not 4791 */
		{ 7, 1 },			/* reserved */
	};
	struct conn c;
	struct connopt o;
	struct rmr a, b;
	struct wire_rec r = { 0 };
	bool mr_ok = false;
	uint8_t f[TERN_ETH_MAX_FRAME];
	size_t sh = 14 + 20 + 8;
	unsigned int i;
	struct pkt p;
	uint64_t rx;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 65536, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 65536, MR_RW, 0) == 0);
	mr_ok = true;
	RQ(hpcc_apply(c.d[0], 0x01) && hpcc_apply(c.d[1], 0x01));
	CHECK(write_check(&c, &a, &b, 1000, 1));
	for (i = 0; i < c.w.nlog; i++)
		if (c.w.log[i].dir == 0 && pkt_parse(c.w.log[i].data, c.w.log[i].len, &p) &&
		    p.has_int && !p.vlan && p.ipver == 4)
			r = c.w.log[i];
	RQ(r.len && r.len <= sizeof(f));
	rx = RDEV_STAT(c.d[1], rx_roce_packets);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(f, r.data, r.len);
		f[sh + cases[i].off] = cases[i].val;
		CHECK_EQ(tern_model_rx_frame(c.d[1]->f.m, f, r.len), r.len);
		fk_run(&c.d[1]->f);
		fk_clear_frames(&c.d[1]->f);
		CHECK_EQ(RDEV_STAT(c.d[1], rx_int_discards), i + 1);
	}
	/* a bad IPv4 header checksum is not repaired by the shim's removal */
	memcpy(f, r.data, r.len);
	f[14 + 10] ^= 0x40;
	CHECK_EQ(tern_model_rx_frame(c.d[1]->f.m, f, r.len), r.len);
	fk_run(&c.d[1]->f);
	fk_clear_frames(&c.d[1]->f);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_int_discards), i + 1);
	/* a record more than the UDP length holds */
	memcpy(f, r.data, r.len);
	f[sh + 1] = 5;
	f[sh + 2] = 5;
	f[sh - 8 + 4] = 0;
	f[sh - 8 + 5] = 8 + 8 + 16;
	CHECK_EQ(tern_model_rx_frame(c.d[1]->f.m, f, r.len), r.len);
	fk_run(&c.d[1]->f);
	fk_clear_frames(&c.d[1]->f);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_int_discards), i + 2);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_packets), rx);
	/* the original once more: a duplicate, taken as one */
	CHECK_EQ(tern_model_rx_frame(c.d[1]->f.m, r.data, r.len), r.len);
	fk_run(&c.d[1]->f);
	fk_clear_frames(&c.d[1]->f);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_packets), rx + 1);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_int_discards), i + 2);
out:
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

/*
 * The transport scheduler shares a busy line among the QPs that have work: @nq QP pairs each
 * post a 64 KiB WRITE at once on an exact 25 Gb/s line (no burst allowance: one frame per
 * turn); the first @npaced are held by their DCQCN pacers at 15 Gb/s each (a CNP, no
 * increase), so their timers wake them packet by packet, together asking for more than the
 * line. They must take turns: when the first WRITE ends, every other QP has sent at least
 * 24 of its 64 packets (one of two alike: 63; the unpaced one among two paced: it gets every
 * other turn, 32 each). The scheduler once kept the MAC-wait list in the order of the last turn
 * and let QPs woken by an ACK or their pacer's timer pass it, so the QP at its head, or the
 * paced ones, took the line and starved the rest.
 */
#define SCHED_NQ	3

static void sched_share(unsigned int nq, unsigned int npaced)
{
	struct connopt o;
	struct conn c;
	struct rqp q[SCHED_NQ][2];
	struct rmr a, b;
	struct sge sg;
	struct wc w;
	uint8_t p[CC_LEN];
	unsigned int s, i, k, n[SCHED_NQ] = { 0 }, at_end[SCHED_NQ] = { 0 }, got = 0, extra = 0;
	unsigned int first = SCHED_NQ;
	bool mr_ok = false;

	memset(q, 0, sizeof(q));
	connopt_default(&o);				/* MTU 1024: 64 packets each */
	RQ(nq >= 2 && nq <= SCHED_NQ && npaced < nq);
	RQ(conn_setup_cfg(&c, &o, 25000, 0));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 1 << 20, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 1 << 20, MR_RW, 0) == 0);
	mr_ok = true;
	q[0][0] = c.qp[0];
	q[0][1] = c.qp[1];
	for (k = 1; k < nq; k++, extra++) {
		for (s = 0; s < 2; s++)
			RQ(qp_create(c.d[s], &q[k][s], c.d[s]->pdn, &c.cq[s], &c.cq[s], o.sq_log,
				     o.sq_stride, o.rq_log, o.rq_stride, 0, false) == TERN_CMD_OK);
		for (s = 0; s < 2; s++)
			RQ(qp_connect(c.d[s], &q[k][s], c.d[!s], q[k][!s].qpn, &o, s));
	}
	if (npaced) {
		cc_defaults(p);
		p[CCP(rp_en)] = 0xff;
		wr32(p + CCP(rpg_time_reset), 131071);	/* no increase for 131 ms */
		wr32(p + CCP(rpg_byte_reset), 0);
		wr32(p + CCP(rate_to_set_on_first_cnp), 15000);
		RQ(cc_apply(c.d[0], p));
		RQ(cc_apply(c.d[1], p));
		for (k = 0; k < npaced; k++) {
			inject_cnp(&c, 0, q[k][0].qpn);
			CHECK_EQ(qp_rate(c.d[0], q[k][0].qpn), 15000);
		}
	}
	wire_clear_log(&c.w);
	for (k = 0; k < nq; k++) {
		sg = mr_sge(&a, k << 16, 64 << 10);
		post_send(c.d[0], &q[k][0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, k, &sg, 1,
			  b.iova + (k << 16), b.key, 0);
	}
	for (k = 0; k < nq; k++)
		ring_sq(c.d[0], &q[k][0]);
	while (got < nq && conn_poll(&c, 0, &w, 1, 10000000) == 1 && w.status == TERN_CQE_OK)
		got++;
	RQ(got == nq);
	/* per QP, the WRITE packets on the wire; everyone's count at the first LAST */
	for (i = 0; i < c.w.nlog; i++) {
		struct pkt pk;

		if (c.w.log[i].dir || !pkt_parse(c.w.log[i].data, c.w.log[i].len, &pk) ||
		    !pk.ok || pk.opcode < OP_WRITE_FIRST || pk.opcode > OP_WRITE_LAST)
			continue;
		for (k = 0; k < nq && pk.dqpn != q[k][1].qpn; k++)
			;
		if (k == nq)
			continue;
		n[k]++;
		if (pk.opcode == OP_WRITE_LAST && first == SCHED_NQ) {
			first = k;
			memcpy(at_end, n, sizeof(at_end));
		}
	}
	printf("#   %u QPs (%u paced at 15 of 25 Gb/s), 64 packets each: QP %u ended first; "
	       "the others had sent", nq, npaced, first);
	for (k = 0; k < nq; k++)
		if (k != first)
			printf(" %u", at_end[k]);
	printf("\n");
	CHECK(first < nq);
	for (k = 0; k < nq; k++) {
		CHECK_EQ(n[k], 64);
		CHECK(at_end[k] >= 24);
	}
out:
	for (k = 1; k < 1 + extra; k++)
		for (s = 0; s < 2; s++) {
			qmem_free(&q[k][s].sq);
			qmem_free(&q[k][s].rq);
		}
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

static void t_sched_share_line(void)
{
	sched_share(2, 0);
}

static void t_sched_share_line_paced(void)
{
	sched_share(3, 2);
}

/* ---- TIMELY ---------------------------------------------------------------------------------- */

/*
 * A delay line on the test wire: what side 1 sends (ACKs) reaches side 0 @delay ns after it
 * left, in order; side 0's frames pass at once. With @drop_psn_once set, the first request
 * packet side 0 sends with that PSN is lost.
 */
#define DL_MAX	64

struct dline {
	uint64_t delay;
	unsigned int n;
	bool drop_once;
	uint32_t drop_psn;
	struct {
		uint64_t due;
		size_t len;
		uint8_t f[TERN_ETH_MAX_FRAME];
	} q[DL_MAX];
};

static enum wire_action dline_filter(struct wire *w, unsigned int dir, unsigned int idx,
				     uint8_t *f, size_t *len)
{
	struct dline *dl = w->ctx;
	struct pkt p;

	(void)idx;
	if (!dir) {
		if (dl->drop_once && pkt_parse(f, *len, &p) && p.psn == dl->drop_psn &&
		    p.opcode != 0x81) {
			dl->drop_once = false;
			return W_DROP;
		}
		return W_DELIVER;
	}
	if (dl->n == DL_MAX || *len > TERN_ETH_MAX_FRAME)
		return W_DELIVER;	/* not expected: the test checks dl->n stays small */
	dl->q[dl->n].due = wire_now(w) + dl->delay;
	dl->q[dl->n].len = *len;
	memcpy(dl->q[dl->n].f, f, *len);
	dl->n++;
	return W_DROP;
}

/* Run the wire until side 0 has a CQE: the delayed frames arrive when due. */
static bool dline_poll(struct conn *c, struct dline *dl, struct wc *wc, uint64_t max_ns)
{
	uint64_t end = wire_now(&c->w) + max_ns;

	wire_pump(&c->w);
	while (wire_now(&c->w) < end) {
		uint64_t now = wire_now(&c->w);

		if (cq_poll(c->d[0], &c->cq[0], wc))
			return true;
		if (dl->n && dl->q[0].due <= now) {
			tern_model_rx_frame(c->d[0]->f.m, dl->q[0].f, dl->q[0].len);
			memmove(&dl->q[0], &dl->q[1], (dl->n - 1) * sizeof(dl->q[0]));
			dl->n--;
			wire_pump(&c->w);
			continue;
		}
		wire_advance(&c->w, dl->n ? dl->q[0].due - now : 10000);
	}
	return cq_poll(c->d[0], &c->cq[0], wc);
}

/* QUERY_QP's TIMELY view of a QP: false if the query failed or the QP does not run TIMELY. */
struct timely_q {
	uint32_t rate, rtt, cc_rate;
	int32_t diff;
	uint8_t hai;
};

static bool qp_timely(struct rdev *d, uint32_t qpn, struct timely_q *t)
{
	uint8_t o[sizeof(struct tern_cmd_query_qp_out)];

	memset(t, 0, sizeof(*t));
	if (qp_query(d, qpn, o) != TERN_CMD_OK)
		return false;
	t->rate = rd32(o + QQO(timely_rate_mbps));
	t->rtt = rd32(o + QQO(timely_rtt_ns));
	t->diff = (int32_t)rd32(o + QQO(timely_rtt_diff_ns));
	t->hai = o[QQO(timely_hai_count)];
	t->cc_rate = rd32(o + QQO(cc_rate_mbps));
	return rd32(o + QQO(status)) & TERN_QP_STATUS_TIMELY;
}

/* The test's parameters: t_low 30 us, t_high 300 us, min_rtt 100 us, delta 100 Mb/s,
 * beta 0.8, alpha 0.5, N 5, the rest defaults; TIMELY on @prios. */
#define TL_T_LOW	30000u
#define TL_T_HIGH	300000u
#define TL_MIN_RTT	100000u
#define TL_DELTA	100u
#define TL_BETA		819u
#define TL_ALPHA	512u
#define TL_N		5u

static bool timely_apply(struct rdev *d, uint8_t prios)
{
	uint8_t p[CC_LEN];

	cc_defaults(p);
	p[CCP(timely_en)] = prios;
	p[CCP(timely_hai_thresh)] = TL_N;
	wr16(p + CCP(timely_alpha), TL_ALPHA);
	wr16(p + CCP(timely_beta), TL_BETA);
	wr32(p + CCP(timely_delta), TL_DELTA);
	wr32(p + CCP(timely_t_low), TL_T_LOW);
	wr32(p + CCP(timely_t_high), TL_T_HIGH);
	wr32(p + CCP(timely_min_rtt), TL_MIN_RTT);
	return cc_apply(d, p);
}

/* The paper's algorithm in floating point: the reference the device's fixed point follows. */
struct timely_ref {
	bool init;
	double rate, prev, diff;	/* Mb/s, ns, ns */
	unsigned int hai;
};

/* One completion event of @rtt ns; returns -1, 0 or 1: a decrease, no change, an increase. */
static int timely_ref_event(struct timely_ref *r, double rtt)
{
	double a = TL_ALPHA / 1024.0, b = TL_BETA / 1024.0, g, old;

	if (!r->init) {
		r->init = true;
		r->rate = LINE_MBPS;
		r->prev = rtt;
		r->diff = 0;
		r->hai = 0;
	}
	r->diff = (1 - a) * r->diff + a * (rtt - r->prev);
	r->prev = rtt;
	g = r->diff / TL_MIN_RTT;
	r->hai = g <= 0 ? r->hai + 1 : 0;
	old = r->rate;
	if (rtt < TL_T_LOW)
		r->rate += TL_DELTA;
	else if (rtt > TL_T_HIGH)
		r->rate *= 1 - b * (1 - TL_T_HIGH / rtt);
	else if (g <= 0)
		r->rate += (r->hai >= TL_N ? TL_N : 1) * TL_DELTA;
	else
		r->rate *= 1 - b * g;
	if (r->rate > LINE_MBPS)
		r->rate = LINE_MBPS;
	if (r->rate < TERN_CC_DEF_TIMELY_MIN_RATE)
		r->rate = TERN_CC_DEF_TIMELY_MIN_RATE;
	return r->rate < old ? -1 : r->rate > old;
}

/*
 * TIMELY's rate from the RTTs the requester measures: one 4 KiB WRITE (one segment) per
 * round, its ACK held back by a delay line. Each round must be one RTT sample, the RTT the
 * delay, and the rate, the smoothed difference and the hyperactive count those of the
 * paper's algorithm (a floating-point reference) for the RTTs measured: an RTT above t_high
 * cuts the rate, below t_low adds delta, a rising RTT between them (positive gradient) cuts
 * it, a falling one adds delta and, from the N-th such event in a row, N x delta. A segment
 * with a resent packet gives no sample (Karn). Data intact throughout.
 */
static void t_timely_rate(void)
{
	static const uint32_t delay_us[] = {
		400,			/* above t_high: the cut of T_high */
		10, 10, 10,		/* below t_low: + delta each */
		40, 40, 40, 40,		/* between, the difference still negative: hyperactive */
		80, 120, 160, 150, 140,	/* rising: positive gradient, multiplicative decrease */
		130, 120, 110, 100, 90,	/* falling: + delta, the N-th in a row N x delta */
	};
	/* events seen: T_high cut, T_low, gradient cut, + delta, + N delta */
	unsigned int seen[5] = { 0 };
	struct conn c;
	struct connopt o;
	struct rmr a, b;
	struct dline *dl = calloc(1, sizeof(*dl));
	struct timely_ref ref = { 0 };
	struct timely_q t, t0;
	bool mr_ok = false;
	unsigned int i, ups = 0, downs = 0;
	uint64_t samples;
	struct sge sg;
	struct wc w;
	uint8_t x[4096], y[4096];

	connopt_default(&o);
	RQ(dl);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 65536, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 65536, MR_RW, 0) == 0);
	mr_ok = true;
	CHECK(!qp_timely(c.d[0], c.qp[0].qpn, &t) && !t.rate);
	RQ(timely_apply(c.d[0], 0x01) && timely_apply(c.d[1], 0x01));
	/* before any sample: the line rate, not limited */
	CHECK(qp_timely(c.d[0], c.qp[0].qpn, &t));
	CHECK_EQ(t.rate, LINE_MBPS);
	CHECK_EQ(t.rtt, 0);
	CHECK_EQ(t.cc_rate, 0);
	c.w.filter = dline_filter;
	c.w.ctx = dl;
	for (i = 0; i < sizeof(delay_us) / sizeof(delay_us[0]); i++) {
		int dir;

		mr_fill(c.d[0], &a, 20 + i);
		samples = RDEV_STAT(c.d[0], timely_rtt_samples);
		REQUIRE(qp_timely(c.d[0], c.qp[0].qpn, &t0));
		dl->delay = (uint64_t)delay_us[i] * US;
		sg = mr_sge(&a, 0, sizeof(x));
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, i, &sg, 1,
			  b.iova, b.key, 0);
		ring_sq(c.d[0], &c.qp[0]);
		RQ(dline_poll(&c, dl, &w, 100000000));
		CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, i);
		mr_read(c.d[0], &a, 0, x, sizeof(x));
		mr_read(c.d[1], &b, 0, y, sizeof(y));
		CHECK(!memcmp(x, y, sizeof(x)));
		CHECK_EQ(RDEV_STAT(c.d[0], timely_rtt_samples), samples + 1);
		REQUIRE(qp_timely(c.d[0], c.qp[0].qpn, &t));
		/* the RTT is the delay, and a little: the ACK's own time on the line */
		CHECK(t.rtt >= delay_us[i] * US && t.rtt < delay_us[i] * US + 2000);
		dir = timely_ref_event(&ref, t.rtt);
		printf("#   delay %3u us: rtt %u ns, diff %d ns, hai %u, rate %u Mb/s (reference %.1f)\n",
		       delay_us[i], t.rtt, t.diff, t.hai, t.rate, ref.rate);
		CHECK(fabs(t.rate - ref.rate) <= 1 + ref.rate / 1000);
		CHECK(fabs(t.diff - ref.diff) <= 2);
		CHECK_EQ(t.hai, ref.hai);
		CHECK_EQ(t.cc_rate, t.rate < LINE_MBPS ? t.rate : 0);
		if (dir < 0)
			CHECK(t.rate < t0.rate);
		if (dir > 0)
			CHECK(t.rate > t0.rate);
		ups += dir > 0;
		downs += dir < 0;
		/* which of the paper's cases this event was, and its effect */
		if (t.rtt > TL_T_HIGH) {
			CHECK(dir < 0);
			seen[0]++;
		} else if (t.rtt < TL_T_LOW) {
			CHECK_EQ(t.rate, t0.rate + TL_DELTA);
			seen[1]++;
		} else if (ref.diff > 0) {
			CHECK(dir < 0 && t.diff > 0 && !t.hai);
			seen[2]++;
		} else if (t.hai < TL_N) {
			CHECK_EQ(t.rate, t0.rate + TL_DELTA);
			seen[3]++;
		} else {
			CHECK_EQ(t.rate, t0.rate + TL_N * TL_DELTA);
			seen[4]++;
		}
	}
	printf("#   events: %u T_high, %u T_low, %u gradient cuts, %u + delta, %u + N delta\n",
	       seen[0], seen[1], seen[2], seen[3], seen[4]);
	for (i = 0; i < 5; i++)
		CHECK(seen[i] >= 1);
	CHECK(dl->n == 0);
	CHECK_EQ(RDEV_STAT(c.d[0], timely_rate_increases), ups);
	CHECK_EQ(RDEV_STAT(c.d[0], timely_rate_decreases), downs);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_limited_qps), 1);
	/* Karn: the segment's first packet is lost and resent after the timeout: no sample */
	samples = RDEV_STAT(c.d[0], timely_rtt_samples);
	REQUIRE(qp_timely(c.d[0], c.qp[0].qpn, &t0));
	{
		uint8_t qo[sizeof(struct tern_cmd_query_qp_out)];

		REQUIRE(qp_query(c.d[0], c.qp[0].qpn, qo) == TERN_CMD_OK);
		dl->drop_psn = rd32(qo + QQO(attrs) + OFF(struct tern_qp_attrs, sq_psn));
	}
	dl->drop_once = true;
	dl->delay = 1000 * US;		/* a sample of it would be above t_high: a cut */
	sg = mr_sge(&a, 0, sizeof(x));
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 99, &sg, 1,
		  b.iova, b.key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(dline_poll(&c, dl, &w, 1000000000));
	CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 99);
	CHECK(!dl->drop_once);
	CHECK(RDEV_STAT(c.d[0], retrans_pkts) >= 1);
	CHECK_EQ(RDEV_STAT(c.d[0], timely_rtt_samples), samples);
	REQUIRE(qp_timely(c.d[0], c.qp[0].qpn, &t));
	CHECK_EQ(t.rate, t0.rate);
	/* a reply buffer of the version before TIMELY: the status bit, but none of its fields */
	{
		uint8_t in[4], qo[sizeof(struct tern_cmd_query_qp_out)];
		struct cqe cq;

		memset(qo, 0, sizeof(qo));
		wr32(in, c.qp[0].qpn);
		CHECK_EQ(rdev_cmd(c.d[0], TERN_CMD_QUERY_QP, in, 4, qo, TERN_QUERY_QP_OUT_V4_LEN,
				  &cq), TERN_CMD_OK);
		CHECK_EQ(cq.out_len, TERN_QUERY_QP_OUT_V4_LEN);
		CHECK(rd32(qo + QQO(status)) & TERN_QP_STATUS_TIMELY);
		CHECK_EQ(rd32(qo + QQO(cc_rate_mbps)), t.rate);
	}
	/* turning TIMELY off releases the limited QP */
	RQ(timely_apply(c.d[0], 0));
	CHECK_EQ(qp_rate(c.d[0], c.qp[0].qpn), 0);
	CHECK(!qp_timely(c.d[0], c.qp[0].qpn, &t) && !t.rate && !t.rtt);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_limited_qps), 0);
out:
	c.w.filter = NULL;
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
	free(dl);
}

/*
 * The segment: a WRITE of 64 KiB at MTU 1024 with timely_seg 16 KiB is timed one segment
 * at a time (the next segment opens only once the last is acknowledged), each segment's
 * last packet asks for an ACK, and TIMELY on a priority other than the QP's leaves it alone.
 */
static void t_timely_segments(void)
{
	struct conn c;
	struct connopt o;
	struct rmr a, b;
	bool mr_ok = false, ack16 = false;
	unsigned int i, ackreq = 0, pkts = 0;
	struct timely_q t;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 1 << 20, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 1 << 20, MR_RW, 0) == 0);
	mr_ok = true;
	mr_fill(c.d[0], &a, 3);
	/* TIMELY on another priority: no sample, no state, AckReq as without it */
	RQ(timely_apply(c.d[0], 0x80));
	wire_clear_log(&c.w);
	CHECK(write_check(&c, &a, &b, 64 << 10, 1));
	CHECK_EQ(RDEV_STAT(c.d[0], timely_rtt_samples), 0);
	CHECK(!qp_timely(c.d[0], c.qp[0].qpn, &t));
	for (i = 0; i < c.w.nlog; i++) {
		struct pkt p;

		if (!c.w.log[i].dir && pkt_parse(c.w.log[i].data, c.w.log[i].len, &p) && p.ok)
			ackreq += p.ackreq;
	}
	CHECK_EQ(ackreq, 2);		/* the 32nd packet and the last */
	RQ(timely_apply(c.d[0], 0x01));
	wire_clear_log(&c.w);
	CHECK(write_check(&c, &a, &b, 64 << 10, 2));
	ackreq = 0;
	for (i = 0; i < c.w.nlog; i++) {
		struct pkt p;

		if (c.w.log[i].dir || !pkt_parse(c.w.log[i].data, c.w.log[i].len, &p) || !p.ok)
			continue;
		pkts++;
		ackreq += p.ackreq;
		if (pkts == 16)
			ack16 = p.ackreq;
	}
	printf("#   64 KiB in %u packets: %u ask for an ACK; %llu RTT samples\n", pkts, ackreq,
	       (unsigned long long)RDEV_STAT(c.d[0], timely_rtt_samples));
	CHECK_EQ(pkts, 64);
	/* the wire moves a burst in no time: the first segment (16 packets of 1 KiB) is
	 * timed and its last asks for an ACK, which comes after the whole burst went out
	 * (the 48th, 32 after it, and the last ask too); that ACK ends the only sample */
	CHECK_EQ(ackreq, 3);
	CHECK(ack16);
	CHECK_EQ(RDEV_STAT(c.d[0], timely_rtt_samples), 1);
	CHECK(qp_timely(c.d[0], c.qp[0].qpn, &t));
out:
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}


/*
 * A QP DCQCN holds below the line rate when its priority moves to TIMELY: it keeps that
 * rate, but DCQCN's increase timer no longer runs (no rp_rate_increase_events while time
 * passes), until TIMELY's first sample sets the rate (here an empty wire: the line rate,
 * not limited).
 */
static void t_timely_from_dcqcn(void)
{
	struct conn c;
	struct connopt o;
	struct rmr a, b;
	bool mr_ok = false;
	uint8_t p[CC_LEN];
	uint32_t rate;
	uint64_t inc;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &a, c.d[0]->pdn, 65536, MR_RW, 0) == 0);
	RQ(mr_create(c.d[1], &b, c.d[1]->pdn, 65536, MR_RW, 0) == 0);
	mr_ok = true;
	cc_defaults(p);
	p[CCP(rp_en)] = 0x01;
	RQ(cc_apply(c.d[0], p));
	inject_cnp(&c, 0, c.qp[0].qpn);
	rate = qp_rate(c.d[0], c.qp[0].qpn);
	CHECK(rate > 0 && rate < LINE_MBPS);
	RQ(timely_apply(c.d[0], 0x01));
	CHECK_EQ(qp_rate(c.d[0], c.qp[0].qpn), rate);
	inc = RDEV_STAT(c.d[0], rp_rate_increase_events);
	wire_advance(&c.w, 10000 * US);		/* 33 of DCQCN's 300 us timer periods */
	CHECK_EQ(RDEV_STAT(c.d[0], rp_rate_increase_events), inc);
	CHECK_EQ(qp_rate(c.d[0], c.qp[0].qpn), rate);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_limited_qps), 1);
	CHECK(write_check(&c, &a, &b, 4096, 1));
	CHECK_EQ(RDEV_STAT(c.d[0], timely_rtt_samples), 1);
	CHECK_EQ(qp_rate(c.d[0], c.qp[0].qpn), 0);
	CHECK_EQ(RDEV_STAT(c.d[0], rp_limited_qps), 0);
out:
	if (mr_ok) {
		mr_release(&a);
		mr_release(&b);
	}
	conn_free(&c);
}

const struct test rdma_cc_tests[] = {
	{ "cc: SET/QUERY_CC_PARAMS round trip, every range error, reset", t_params },
	{ "cc: ECT(0) on data only with RP on its priority (IPv4)", t_ect_v4 },
	{ "cc: ECT(0) on data only with RP on its priority (IPv6 + VLAN)", t_ect_v6_vlan },
	{ "cc: CE -> CNP byte-exact, min_time_between_cnps, counters, RP off ignores",
	  t_cnp_np },
	{ "cc: CNP over IPv6 + VLAN: cnp_prio PCP, cnp_dscp, flow label, checksums",
	  t_cnp_v6_vlan },
	{ "cc: RP cut formula, monitor period, alpha periods and decay", t_rp_cut },
	{ "cc: RP timer stage: fast recovery, additive increase, back to unlimited",
	  t_rp_recovery_timer },
	{ "cc: RP byte stage: additive and hyper increase", t_rp_hyper },
	{ "cc: RP min_dec_fac, min_rate, rate_to_set_on_first_cnp, max_rate, RP off",
	  t_rp_clamps },
	{ "cc: CNPs ignored (RP off, unknown QP, RESET), bad ICRC, CE/BECN masked",
	  t_rp_ignored },
	{ "cc: pacer holds WRITEs and READ responses at the QP's rate", t_pacing },
	{ "cc: pacer with a burst allowance: rate kept, a wakeup per half burst", t_pacing_burst },
	{ "cc: PFC pause holds priority 3 QPs (no spinning), not priority 0", t_mac_pause },
	{ "cc: two QPs share a busy line turn by turn (no QP starves the other)",
	  t_sched_share_line },
	{ "cc: QPs their pacers wake do not pass one waiting for the line",
	  t_sched_share_line_paced },
	{ "cc: exact serialization: line rate unlimited, the pacer's rate limited",
	  t_line_rate },
	{ "cc: HPCC's INT shims on the wire, ICRC without them, receiver echo off, INT off",
	  t_hpcc_wire },
	{ "cc: HPCC window from echoed telemetry: cut when congested, back to line rate",
	  t_hpcc_window },
	{ "cc: HPCC READ responses: RESP_ECHOs, the responder windowed and paced, loss recovered",
	  t_hpcc_read },
	{ "cc: HPCC READ responses under selective repeat: a lost response recovered",
	  t_hpcc_read_sr },
	{ "cc: malformed INT shims dropped and counted", t_hpcc_bad_shim },
	{ "cc: TIMELY rate from measured RTTs: T_high cut, T_low and hyperactive increase, "
	  "gradient decrease, Karn, off", t_timely_rate },
	{ "cc: TIMELY segments: one sample at a time, AckReq on a segment's last, other priority",
	  t_timely_segments },
	{ "cc: a DCQCN-limited QP moved to TIMELY: DCQCN's timer stops, TIMELY sets the rate",
	  t_timely_from_dcqcn },
	{ NULL, NULL },
};
