/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * UD and GSI QPs: commands, datagrams both ways over IPv4 and IPv6 (with and without VLAN),
 * the GRH area checked against the tests' own decode of the frame, DETH byte for byte, Q_Key
 * rules, drops without a receive WQE, message and receive-buffer length errors, the GSI QP,
 * UD/RC separation, and ERR/RESET.
 */
#include <stdlib.h>

#include "test_rdma.h"

#define SQE(f)	OFF(struct tern_sq_wqe, f)
#define UDS(f)	(sizeof(struct tern_sq_wqe) + OFF(struct tern_ud_seg, f))
#define UD_HDR	(sizeof(struct tern_sq_wqe) + sizeof(struct tern_ud_seg))
#define QPO	struct tern_cmd_query_qp_out
#define QPI	struct tern_cmd_create_qp_in
#define MQI	struct tern_cmd_modify_qp_in

#define QKEY_A		0x11223344u
#define QKEY_B		0x0badcafeu
#define GSI_QKEY	0x80010000u
#define GRH_LEN		40
#define MR_LEN		(64 * 1024)
#define RX_OFF		(32 * 1024)	/* receive buffers in the second half of each MR */

/* ---- helpers ------------------------------------------------------------------------------- */

static uint32_t qp_attr32(struct rdev *d, uint32_t qpn, size_t off)
{
	uint8_t out[sizeof(QPO)];

	if (qp_query(d, qpn, out) != TERN_CMD_OK)
		return 0xdeadbeef;
	return rd32(out + OFF(QPO, attrs) + off);
}

/*
 * Write a UD SEND WQE (no doorbell): to @dest_qpn of @peer along the path @o describes, with
 * @qkey; SGEs, or @inl_len bytes of inline data when @inl is set.
 */
static void post_ud(struct rdev *d, struct rqp *qp, const struct rdev *peer,
		    const struct connopt *o, uint8_t opcode, uint8_t flags, uint64_t wr_id,
		    uint32_t dest_qpn, uint32_t qkey, const struct sge *sg, unsigned int nsge,
		    const void *inl, uint32_t inl_len, uint32_t imm)
{
	unsigned int slot = qp->sq_pi & ((1u << qp->sq_log) - 1), i;
	size_t sz = 1u << qp->sq_stride;
	uint8_t *w = qmem_ptr(d, &qp->sq, slot * sz, sz);
	uint8_t attrs[sizeof(struct tern_qp_attrs)];
	struct qpattr a;

	memset(w, 0, sz);
	w[SQE(opcode)] = opcode;
	w[SQE(flags)] = flags | (inl ? TERN_WQE_F_INLINE : 0);
	w[SQE(imm_data)] = (uint8_t)(imm >> 24);
	w[SQE(imm_data) + 1] = (uint8_t)(imm >> 16);
	w[SQE(imm_data) + 2] = (uint8_t)(imm >> 8);
	w[SQE(imm_data) + 3] = (uint8_t)imm;
	wr64(w + SQE(wr_id), wr_id);
	memset(&a, 0, sizeof(a));
	path_fill(&a, d, peer, o);
	qpattr_encode(&a, attrs);
	memcpy(w + UDS(path), attrs + QPA(path), sizeof(struct tern_qp_path));
	wr32(w + UDS(dest_qpn), dest_qpn);
	wr32(w + UDS(qkey), qkey);
	if (inl) {
		wr32(w + SQE(inline_len), inl_len);
		memcpy(w + UD_HDR, inl, inl_len <= sz - UD_HDR ? inl_len : sz - UD_HDR);
	} else {
		w[SQE(num_sge)] = (uint8_t)nsge;
		for (i = 0; i < nsge && UD_HDR + 16 * (i + 1) <= sz; i++) {
			uint8_t *s = w + UD_HDR + 16 * i;

			wr64(s + OFF(struct tern_sge, addr), sg[i].addr);
			wr32(s + OFF(struct tern_sge, length), sg[i].len);
			wr32(s + OFF(struct tern_sge, lkey), sg[i].lkey);
		}
	}
	qp->sq_pi++;
}

/* Two devices on a wire, one CQ, one UD QP and one MR each. */
struct udside {
	struct rdev *d;
	struct rcq cq;
	struct rqp qp;
	struct rmr mr;
};

struct udpair {
	struct udside s[2];
	struct wire w;
	struct connopt o;
	bool wired;
};

static const uint32_t ud_psn[2] = { 0xfffffe, 0x000100 };	/* side 0 wraps */

static bool ud_setup(struct udpair *p, uint8_t ipver, uint16_t vlan)
{
	unsigned int s;

	memset(p, 0, sizeof(*p));
	connopt_default(&p->o);
	p->o.ip_version = ipver;
	p->o.vlan_id = vlan;
	p->o.sl = vlan != TERN_VLAN_NONE ? 5 : 0;
	p->o.tclass = 0x48;
	p->o.flow_label = 0x5a5a5;
	p->o.hop_limit = 17;
	for (s = 0; s < 2; s++) {
		struct udside *u = &p->s[s];

		u->d = rdev_new(s);
		if (!u->d)
			return false;
		if (cq_create(u->d, &u->cq, 8, false) != TERN_CMD_OK ||
		    ud_create(u->d, &u->qp, TERN_QPT_UD, &u->cq, 7, NULL) != TERN_CMD_OK ||
		    mr_create(u->d, &u->mr, u->d->pdn, MR_LEN, TERN_ACCESS_LOCAL_WRITE, 100) !=
			    TERN_CMD_OK ||
		    !ud_up(u->d, &u->qp, QKEY_A, ud_psn[s])) {
			printf("#   ud_setup side %u failed\n", s);
			return false;
		}
		mr_fill(u->d, &u->mr, 7 + s);
	}
	wire_init(&p->w, &p->s[0].d->f, &p->s[1].d->f);
	p->wired = true;
	return true;
}

static void ud_free(struct udpair *p)
{
	unsigned int s;

	if (p->wired)
		wire_fini(&p->w);
	for (s = 0; s < 2; s++) {
		struct udside *u = &p->s[s];

		qmem_free(&u->qp.sq);
		qmem_free(&u->qp.rq);
		qmem_free(&u->cq.mem);
		mr_release(&u->mr);
		rdev_free(u->d);
	}
}

/* Move the frames, then poll up to @n CQEs of side @s; returns how many there were. */
static unsigned int ud_poll(struct udpair *p, unsigned int s, struct wc *wc, unsigned int n)
{
	unsigned int got = 0;

	wire_pump(&p->w);
	while (got < n && cq_poll(p->s[s].d, &p->s[s].cq, &wc[got]))
		got++;
	return got;
}

/* The last frame logged in direction @dir, decoded; NULL if there is none. */
static const struct wire_rec *last_frame(const struct wire *w, unsigned int dir, struct pkt *k)
{
	unsigned int i;

	for (i = w->nlog; i-- > 0;) {
		if (w->log[i].dir != dir)
			continue;
		if (!pkt_parse(w->log[i].data, w->log[i].len, k))
			return NULL;
		return &w->log[i];
	}
	return NULL;
}

/* Offset of the IP header in a frame (after Ethernet and an optional 802.1Q tag). */
static size_t l3_of(const uint8_t *f)
{
	return f[12] == 0x81 && f[13] == 0x00 ? 18 : 14;
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void t_ud_cmds(void)
{
	struct rdev *d = rdev_new(0);
	uint8_t out[sizeof(struct tern_cmd_query_rdma_out)];
	struct rqp ud, rc;
	struct rcq cq;
	struct cqe c;
	struct qpattr a;

	REQUIRE(d);
	REQUIRE(cq_create(d, &cq, 6, false) == TERN_CMD_OK);
	/* QUERY_RDMA says UD */
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA, NULL, 0, out, sizeof(out), NULL), TERN_CMD_OK);
	CHECK(rd32(out + OFF(struct tern_cmd_query_rdma_out, cap_flags)) & TERN_RDMA_CAP_UD);
	/* SQ stride: a UD WQE needs 128 bytes */
	CHECK_EQ(ud_create(d, &ud, TERN_QPT_UD, &cq, TERN_SQ_UD_MIN_LOG_STRIDE - 1, &c),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(QPI, log_sq_stride));
	CHECK_EQ(ud_create(d, &ud, TERN_QPT_GSI, &cq, TERN_SQ_UD_MIN_LOG_STRIDE - 1, &c),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(QPI, log_sq_stride));
	REQUIRE(ud_create(d, &ud, TERN_QPT_UD, &cq, TERN_SQ_UD_MIN_LOG_STRIDE, &c) == TERN_CMD_OK);
	CHECK(ud.qpn >= 2);
	REQUIRE(qp_create(d, &rc, d->pdn, &cq, &cq, 4, 6, 4, 5, 0, false) == TERN_CMD_OK);

	/* RESET->INIT: QKEY needed, RC attributes refused */
	CHECK_EQ(ud_modify(d, ud.qpn, TERN_QP_ATTR_STATE, TERN_QPS_INIT, 0, 0, &c),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MQI, attr_mask));
	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_INIT;
	a.access = TERN_ACCESS_REMOTE_WRITE;
	CHECK_EQ(qp_modify(d, ud.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_ACCESS, &a, &c),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MQI, attr_mask));
	CHECK_EQ(qp_state(d, ud.qpn), TERN_QPS_RESET);
	CHECK_EQ(ud_modify(d, ud.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_QKEY, TERN_QPS_INIT, QKEY_A,
			   0, &c), TERN_CMD_OK);
	CHECK_EQ(qp_state(d, ud.qpn), TERN_QPS_INIT);
	CHECK_EQ(qp_attr32(d, ud.qpn, QPA(qkey)), QKEY_A);
	/* QKEY alone in INIT */
	CHECK_EQ(ud_modify(d, ud.qpn, TERN_QP_ATTR_QKEY, 0, QKEY_B, 0, &c), TERN_CMD_OK);
	CHECK_EQ(qp_attr32(d, ud.qpn, QPA(qkey)), QKEY_B);
	/* INIT->RTR: nothing needed, a path is RC-only */
	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_RTR;
	a.dest_qpn = 5;
	CHECK_EQ(qp_modify(d, ud.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_DEST_QPN, &a, &c),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MQI, attr_mask));
	CHECK_EQ(ud_modify(d, ud.qpn, TERN_QP_ATTR_STATE, TERN_QPS_RTR, 0, 0, &c), TERN_CMD_OK);
	/* RTR->RTS: SQ_PSN needed, TIMEOUT refused */
	CHECK_EQ(ud_modify(d, ud.qpn, TERN_QP_ATTR_STATE, TERN_QPS_RTS, 0, 0, &c),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MQI, attr_mask));
	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_RTS;
	a.sq_psn = 77;
	a.timeout = 14;
	CHECK_EQ(qp_modify(d, ud.qpn,
			   TERN_QP_ATTR_STATE | TERN_QP_ATTR_SQ_PSN | TERN_QP_ATTR_TIMEOUT, &a, &c),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MQI, attr_mask));
	CHECK_EQ(ud_modify(d, ud.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_SQ_PSN, TERN_QPS_RTS, 0,
			   0x1000000, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MQI, attrs) + QPA(sq_psn));
	CHECK_EQ(ud_modify(d, ud.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_SQ_PSN | TERN_QP_ATTR_QKEY,
			   TERN_QPS_RTS, QKEY_A, 77, &c), TERN_CMD_OK);
	CHECK_EQ(qp_state(d, ud.qpn), TERN_QPS_RTS);
	CHECK_EQ(qp_attr32(d, ud.qpn, QPA(sq_psn)), 77);
	CHECK_EQ(qp_attr32(d, ud.qpn, QPA(qkey)), QKEY_A);
	/* a Q_Key given without its mask bit */
	{
		uint8_t in[sizeof(MQI)];

		memset(in, 0, sizeof(in));
		wr32(in + OFF(MQI, qpn), ud.qpn);
		wr32(in + OFF(MQI, attr_mask), TERN_QP_ATTR_STATE);
		in[OFF(MQI, attrs) + QPA(state)] = TERN_QPS_RTS;
		wr32(in + OFF(MQI, attrs) + QPA(qkey), 9);
		CHECK_EQ(qp_modify_raw(d, in, &c), TERN_CMD_BAD_PARAM);
		CHECK_EQ(c.syndrome, OFF(MQI, attrs) + QPA(qkey));
		/* an unknown mask bit */
		wr32(in + OFF(MQI, attr_mask), TERN_QP_ATTR_QKEY << 1);
		CHECK_EQ(qp_modify_raw(d, in, &c), TERN_CMD_BAD_PARAM);
		CHECK_EQ(c.syndrome, OFF(MQI, attr_mask));
	}
	/* RTS->RTS, RTS->SQD, SQD->SQD and SQD->RTS with QKEY */
	CHECK_EQ(ud_modify(d, ud.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_QKEY, TERN_QPS_RTS, QKEY_B,
			   0, &c), TERN_CMD_OK);
	CHECK_EQ(ud_modify(d, ud.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_QKEY, TERN_QPS_SQD, 1, 0,
			   &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(ud_modify(d, ud.qpn, TERN_QP_ATTR_STATE, TERN_QPS_SQD, 0, 0, &c), TERN_CMD_OK);
	CHECK_EQ(ud_modify(d, ud.qpn, TERN_QP_ATTR_QKEY, 0, 3, 0, &c), TERN_CMD_OK);
	CHECK_EQ(ud_modify(d, ud.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_QKEY, TERN_QPS_RTS, 4, 0,
			   &c), TERN_CMD_OK);
	CHECK_EQ(qp_attr32(d, ud.qpn, QPA(qkey)), 4);
	CHECK_EQ(qp_state(d, ud.qpn), TERN_QPS_RTS);
	/* RTR is only reached from INIT, as for RC */
	CHECK_EQ(ud_modify(d, ud.qpn, TERN_QP_ATTR_STATE, TERN_QPS_RTR, 0, 0, &c),
		 TERN_CMD_BAD_STATE);

	/* QKEY is a UD attribute: an RC QP refuses it */
	CHECK_EQ(ud_modify(d, rc.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_QKEY, TERN_QPS_INIT, QKEY_A,
			   0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MQI, attr_mask));
	CHECK_EQ(ud_modify(d, rc.qpn, TERN_QP_ATTR_STATE, TERN_QPS_INIT, 0, 0, &c), TERN_CMD_OK);
	CHECK_EQ(ud_modify(d, rc.qpn, TERN_QP_ATTR_QKEY, 0, QKEY_A, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(qp_attr32(d, rc.qpn, QPA(qkey)), 0);

	CHECK_EQ(qp_destroy(d, &ud), TERN_CMD_OK);
	CHECK_EQ(qp_destroy(d, &rc), TERN_CMD_OK);
	CHECK_EQ(cq_destroy(d, &cq), TERN_CMD_OK);
	rdev_free(d);
}

/*
 * One datagram from side @s to side !s: @len bytes from the sender's MR at @soff (inline
 * when @inl), received into one or two SGEs. Checks both CQEs, the frame (decoded by the
 * tests' decoder: BTH, DETH byte for byte, PSN, ICRC), the GRH area against the frame's own
 * IP header and the payload.
 */
static void ud_one(struct udpair *p, unsigned int s, uint8_t opcode, uint32_t len, bool inl,
		   bool two_sge, uint32_t *psn, uint64_t id)
{
	struct udside *tx = &p->s[s], *rx = &p->s[!s];
	uint32_t imm = 0xa1b2c3d4u ^ (uint32_t)id;
	uint8_t data[16], grh[GRH_LEN], want[GRH_LEN], deth[8];
	const struct wire_rec *fr;
	struct sge rsg[2], ssg;
	struct wc w[2];
	struct pkt k;
	uint64_t roff = RX_OFF + 1000 * (id & 7);
	size_t l3, bth;
	unsigned int i, slot;
	long bad;

	mr_fill(rx->d, &rx->mr, 7 + !s);
	if (two_sge) {
		rsg[0] = mr_sge(&rx->mr, roff, GRH_LEN);
		rsg[1] = mr_sge(&rx->mr, roff + 4096, len + 8);
	} else {
		rsg[0] = mr_sge(&rx->mr, roff, GRH_LEN + len + 8);
	}
	post_recv(rx->d, &rx->qp, id + 100, rsg, two_sge ? 2 : 1);
	ring_rq(rx->d, &rx->qp);
	ssg = mr_sge(&tx->mr, 3 * id, len);
	slot = tx->qp.sq_pi & ((1u << tx->qp.sq_log) - 1);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(0x30 + i + id);
	post_ud(tx->d, &tx->qp, rx->d, &p->o, opcode, TERN_WQE_F_SIGNALED |
		(opcode == TERN_WQE_SEND_IMM ? TERN_WQE_F_SOLICITED : 0), id, rx->qp.qpn, QKEY_A,
		&ssg, len ? 1 : 0, inl ? data : NULL, len, imm);
	ring_sq(tx->d, &tx->qp);
	CHECK_EQ(ud_poll(p, s, w, 2), 1);
	CHECK_WC(&w[0], opcode, TERN_CQE_OK, id);
	CHECK_EQ(w[0].qpn, tx->qp.qpn);
	CHECK_EQ(w[0].wqe_idx, slot);
	CHECK_EQ(w[0].src_qpn, 0);
	CHECK_EQ(w[0].byte_len, 0);
	CHECK_EQ(ud_poll(p, !s, w, 2), 1);
	CHECK_WC(&w[0], opcode == TERN_WQE_SEND_IMM ? TERN_CQE_RECV_IMM : TERN_CQE_RECV,
		 TERN_CQE_OK, id + 100);
	CHECK_EQ(w[0].byte_len, GRH_LEN + len);
	CHECK_EQ(w[0].qpn, rx->qp.qpn);
	CHECK_EQ(w[0].src_qpn, tx->qp.qpn);
	CHECK_EQ(w[0].flags & ~TERN_CQE_F_PHASE,
		 TERN_CQE_F_GRH | (p->o.ip_version == 4 ? TERN_CQE_F_IPV4 : 0) |
		 (opcode == TERN_WQE_SEND_IMM ? TERN_CQE_F_IMM | TERN_CQE_F_SOLICITED : 0));
	if (opcode == TERN_WQE_SEND_IMM)
		CHECK_EQ(w[0].imm, imm);

	/* the frame, decoded independently */
	fr = last_frame(&p->w, s, &k);
	REQUIRE(fr);
	CHECK_EQ(k.opcode, opcode == TERN_WQE_SEND_IMM ? OP_UD_SEND_ONLY_IMM : OP_UD_SEND_ONLY);
	CHECK(k.has_deth);
	CHECK_EQ(k.icrc_wire, k.icrc_calc);
	CHECK(k.ip_csum_ok);
	CHECK_EQ(k.ipver, p->o.ip_version);
	CHECK_EQ(k.vlan, p->o.vlan_id != TERN_VLAN_NONE);
	if (k.vlan) {
		CHECK_EQ(k.vid, p->o.vlan_id);
		CHECK_EQ(k.pcp, p->o.sl);
	}
	CHECK_EQ(k.ttl, p->o.hop_limit);
	CHECK_EQ(k.tclass, p->o.tclass);
	CHECK(!memcmp(k.dmac, rx->d->mac, 6));
	CHECK_EQ(k.dqpn, rx->qp.qpn);
	CHECK_EQ(k.psn, *psn);
	CHECK_EQ(k.pkey, 0xffff);
	CHECK_EQ(k.tver, 0);
	CHECK(!k.ackreq);
	CHECK_EQ(k.se, opcode == TERN_WQE_SEND_IMM);
	CHECK_EQ(k.qkey, QKEY_A);
	CHECK_EQ(k.src_qp, tx->qp.qpn);
	CHECK_EQ(k.payload_len, len);
	CHECK_EQ(k.padcnt, (4 - (len & 3)) & 3);
	if (opcode == TERN_WQE_SEND_IMM)
		CHECK_EQ(k.imm, imm);
	l3 = l3_of(fr->data);
	bth = l3 + (k.ipver == 4 ? 20 : 40) + 8;
	deth[0] = (uint8_t)(QKEY_A >> 24);
	deth[1] = (uint8_t)(QKEY_A >> 16);
	deth[2] = (uint8_t)(QKEY_A >> 8);
	deth[3] = (uint8_t)QKEY_A;
	deth[4] = 0;
	deth[5] = (uint8_t)(tx->qp.qpn >> 16);
	deth[6] = (uint8_t)(tx->qp.qpn >> 8);
	deth[7] = (uint8_t)tx->qp.qpn;
	CHECK(!memcmp(fr->data + bth + 12, deth, 8));
	*psn = (*psn + 1) & 0xffffff;

	/* the GRH area is the frame's network header; then the payload */
	memset(want, 0, sizeof(want));
	if (k.ipver == 6) {
		memcpy(want, fr->data + l3, 40);
		CHECK(!memcmp(want + 8, k.sip, 16));
		CHECK(!memcmp(want + 24, k.dip, 16));
	} else {
		memcpy(want + 20, fr->data + l3, 20);
		CHECK_EQ(want[20], 0x45);
		CHECK(!memcmp(want + 32, k.sip + 12, 4));
		CHECK(!memcmp(want + 36, k.dip + 12, 4));
	}
	mr_read(rx->d, &rx->mr, roff, grh, GRH_LEN);
	CHECK(!memcmp(grh, want, GRH_LEN));
	if (inl) {
		uint8_t got[16];

		mr_read(rx->d, &rx->mr, two_sge ? roff + 4096 : roff + GRH_LEN, got, len);
		CHECK(!memcmp(got, data, len));
		CHECK(!memcmp(k.payload, data, len));
	} else {
		bad = mr_diff_pattern(rx->d, &rx->mr, two_sge ? roff + 4096 : roff + GRH_LEN, len,
				      7 + s, 3 * id);
		CHECK_EQ(bad, -1);
	}
	/* nothing placed past the message */
	bad = mr_diff_pattern(rx->d, &rx->mr, two_sge ? roff + 4096 + len : roff + GRH_LEN + len,
			      8, 7 + !s, two_sge ? roff + 4096 + len : roff + GRH_LEN + len);
	CHECK_EQ(bad, -1);
}

static void ud_both_ways(uint8_t ipver, uint16_t vlan)
{
	static const uint32_t lens[] = { 0, 1, 333, 1024, 4096 };
	struct udpair p;
	uint32_t psn[2] = { ud_psn[0], ud_psn[1] };
	uint64_t id = 1;
	unsigned int s, i, n = 0;

	if (!ud_setup(&p, ipver, vlan)) {
		t_failures++;
		goto out;
	}
	for (s = 0; s < 2; s++) {
		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			ud_one(&p, s, TERN_WQE_SEND, lens[i], false, i & 1, &psn[s], id++);
			ud_one(&p, s, TERN_WQE_SEND_IMM, lens[i], false, !(i & 1), &psn[s], id++);
			n += 2;
		}
		ud_one(&p, s, TERN_WQE_SEND, 13, true, false, &psn[s], id++);
		ud_one(&p, s, TERN_WQE_SEND_IMM, 16, true, true, &psn[s], id++);
		n += 2;
	}
	for (s = 0; s < 2; s++) {
		CHECK_EQ(RDEV_STAT(p.s[s].d, tx_ud_packets), n / 2);
		CHECK_EQ(RDEV_STAT(p.s[s].d, rx_ud_packets), n / 2);
		CHECK_EQ(RDEV_STAT(p.s[s].d, tx_roce_packets), n / 2);
		CHECK_EQ(RDEV_STAT(p.s[s].d, rx_roce_packets), n / 2);
		CHECK_EQ(RDEV_STAT(p.s[s].d, rx_roce_discards), 0);
		CHECK_EQ(qp_attr32(p.s[s].d, p.s[s].qp.qpn, QPA(sq_psn)), psn[s]);
	}
	CHECK_EQ(wire_count(&p.w, 0, OP_UD_SEND_ONLY) + wire_count(&p.w, 0, OP_UD_SEND_ONLY_IMM),
		 n / 2);
out:
	ud_free(&p);
}

static void t_ud_ipv4(void)
{
	ud_both_ways(4, TERN_VLAN_NONE);
}

static void t_ud_ipv6(void)
{
	ud_both_ways(6, TERN_VLAN_NONE);
}

static void t_ud_vlan(void)
{
	ud_both_ways(4, 100);
	ud_both_ways(6, 4000);
}

static void t_ud_qkey(void)
{
	struct udpair p;
	struct udside *a, *b;
	struct sge sg, rsg;
	struct wc w[4];
	struct pkt k;
	unsigned int i;

	if (!ud_setup(&p, 4, TERN_VLAN_NONE)) {
		t_failures++;
		goto out;
	}
	a = &p.s[0];
	b = &p.s[1];
	sg = mr_sge(&a->mr, 0, 64);
	for (i = 0; i < 3; i++) {
		rsg = mr_sge(&b->mr, RX_OFF + 256 * i, 256);
		post_recv(b->d, &b->qp, 50 + i, &rsg, 1);
	}
	ring_rq(b->d, &b->qp);
	/* wrong Q_Key: dropped and counted; the send itself completes */
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, b->qp.qpn,
		QKEY_A + 1, &sg, 1, NULL, 0, 0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 0, w, 1) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_OK, 1);
	CHECK_EQ(ud_poll(&p, 1, w, 1), 0);
	CHECK_EQ(RDEV_STAT(b->d, rx_qkey_mismatch), 1);
	CHECK_EQ(RDEV_STAT(b->d, rx_ud_packets), 0);
	RQ(last_frame(&p.w, 0, &k));
	CHECK_EQ(k.qkey, QKEY_A + 1);
	/* bit 31: the QP's own Q_Key goes on the wire */
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 2, b->qp.qpn,
		0x80000000u, &sg, 1, NULL, 0, 0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 0, w, 1) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_OK, 2);
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 50);
	CHECK_EQ(w[0].byte_len, GRH_LEN + 64);
	RQ(last_frame(&p.w, 0, &k));
	CHECK_EQ(k.qkey, QKEY_A);
	/* a new Q_Key on the sender (RTS->RTS): bit 31 now sends that one, which b refuses */
	CHECK_EQ(ud_modify(a->d, a->qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_QKEY, TERN_QPS_RTS,
			   QKEY_B, 0, NULL), TERN_CMD_OK);
	CHECK_EQ(qp_attr32(a->d, a->qp.qpn, QPA(qkey)), QKEY_B);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 3, b->qp.qpn,
		0xffffffffu, &sg, 1, NULL, 0, 0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 0, w, 1) == 1);
	CHECK_EQ(ud_poll(&p, 1, w, 1), 0);
	CHECK_EQ(RDEV_STAT(b->d, rx_qkey_mismatch), 2);
	RQ(last_frame(&p.w, 0, &k));
	CHECK_EQ(k.qkey, QKEY_B);
	/* the receiver takes the new Q_Key (without a state change): accepted */
	CHECK_EQ(ud_modify(b->d, b->qp.qpn, TERN_QP_ATTR_QKEY, 0, QKEY_B, 0, NULL), TERN_CMD_OK);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 4, b->qp.qpn,
		0x80000000u, &sg, 1, NULL, 0, 0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 0, w, 1) == 1);
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 51);
	CHECK_EQ(RDEV_STAT(b->d, rx_ud_packets), 2);
	CHECK_EQ(RDEV_STAT(b->d, rx_qkey_mismatch), 2);
	CHECK_EQ(RDEV_STAT(b->d, rx_roce_discards), 0);
out:
	ud_free(&p);
}

static void t_ud_no_rqe(void)
{
	struct udpair p;
	struct udside *a, *b;
	struct sge sg, rsg;
	struct wc w[2];

	if (!ud_setup(&p, 6, TERN_VLAN_NONE)) {
		t_failures++;
		goto out;
	}
	a = &p.s[0];
	b = &p.s[1];
	sg = mr_sge(&a->mr, 10, 200);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, b->qp.qpn, QKEY_A,
		&sg, 1, NULL, 0, 0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 0, w, 1) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_OK, 1);
	CHECK_EQ(ud_poll(&p, 1, w, 1), 0);
	CHECK_EQ(RDEV_STAT(b->d, out_of_buffer), 1);
	CHECK_EQ(RDEV_STAT(b->d, rnr_naks_sent), 0);
	CHECK_EQ(wire_count(&p.w, 1, -1), 0);	/* no answer of any kind */
	CHECK_EQ(qp_state(b->d, b->qp.qpn), TERN_QPS_RTS);
	/* the next one finds a WQE */
	rsg = mr_sge(&b->mr, RX_OFF, 512);
	post_recv(b->d, &b->qp, 77, &rsg, 1);
	ring_rq(b->d, &b->qp);
	sg = mr_sge(&a->mr, 20, 100);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, 0, 2, b->qp.qpn, QKEY_A, &sg, 1, NULL, 0,
		0);
	ring_sq(a->d, &a->qp);
	CHECK_EQ(ud_poll(&p, 0, w, 1), 0);	/* unsignaled */
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 77);
	CHECK_EQ(w[0].byte_len, GRH_LEN + 100);
	CHECK_EQ(w[0].wqe_idx, 0);
	CHECK_EQ(mr_diff_pattern(b->d, &b->mr, RX_OFF + GRH_LEN, 100, 7, 20), -1);
	CHECK_EQ(RDEV_STAT(b->d, out_of_buffer), 1);
	CHECK_EQ(RDEV_STAT(b->d, rx_ud_packets), 2);
	CHECK_EQ(RDEV_STAT(a->d, tx_ud_packets), 2);
out:
	ud_free(&p);
}

static void t_ud_too_long(void)
{
	struct udpair p;
	struct udside *a, *b;
	struct sge sg, rsg;
	struct wc w[4];
	unsigned int before;

	if (!ud_setup(&p, 4, TERN_VLAN_NONE)) {
		t_failures++;
		goto out;
	}
	a = &p.s[0];
	b = &p.s[1];
	/* port MTU 1500: RoCE MTU 1024 */
	RQ(drv_set_port(&a->d->f, 0, 1500, a->d->mac) == TERN_CMD_OK);
	rsg = mr_sge(&b->mr, RX_OFF, 8192);
	post_recv(b->d, &b->qp, 10, &rsg, 1);
	ring_rq(b->d, &b->qp);
	sg = mr_sge(&a->mr, 0, 1024);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, b->qp.qpn, QKEY_A,
		&sg, 1, NULL, 0, 0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 0, w, 1) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_OK, 1);
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_EQ(w[0].byte_len, GRH_LEN + 1024);
	/* 1025 bytes: LOC_LEN_ERR, nothing sent, QP in ERR; the WQE behind it is flushed */
	before = wire_count(&p.w, 0, -1);
	sg = mr_sge(&a->mr, 0, 1025);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, 0, 2, b->qp.qpn, QKEY_A, &sg, 1, NULL, 0,
		0);
	sg = mr_sge(&a->mr, 0, 8);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND_IMM, 0, 3, b->qp.qpn, QKEY_A, &sg, 1, NULL,
		0, 0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 0, w, 2) == 2);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_LOC_LEN_ERR, 2);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_MSG_TOO_LONG);
	CHECK_WC(&w[1], TERN_WQE_SEND_IMM, TERN_CQE_WR_FLUSH_ERR, 3);
	CHECK_EQ(w[1].wqe_idx, 2);
	CHECK_EQ(qp_state(a->d, a->qp.qpn), TERN_QPS_ERR);
	CHECK_EQ(wire_count(&p.w, 0, -1), before);

	/* port MTU 9000 (side 1): RoCE MTU 4096, so 4097 bytes fail */
	rsg = mr_sge(&b->mr, RX_OFF, 8192);
	post_recv(b->d, &b->qp, 11, &rsg, 1);
	ring_rq(b->d, &b->qp);
	sg = mr_sge(&b->mr, 0, 4097);
	post_ud(b->d, &b->qp, a->d, &p.o, TERN_WQE_SEND, 0, 4, a->qp.qpn, QKEY_A, &sg, 1, NULL, 0,
		0);
	ring_sq(b->d, &b->qp);
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_LOC_LEN_ERR, 4);
	CHECK_EQ(qp_state(b->d, b->qp.qpn), TERN_QPS_ERR);
	/* and its receive WQE is flushed */
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_WR_FLUSH_ERR, 11);
	CHECK_EQ(RDEV_STAT(b->d, tx_ud_packets), 0);

	/* port MTU 1100: 1100 - 88 leaves 1012 bytes, so the RoCE MTU is 512 */
	CHECK_EQ(ud_modify(a->d, a->qp.qpn, TERN_QP_ATTR_STATE, TERN_QPS_RESET, 0, 0, NULL),
		 TERN_CMD_OK);
	a->qp.sq_pi = a->qp.rq_pi = 0;
	RQ(ud_up(a->d, &a->qp, QKEY_A, 0));
	RQ(drv_set_port(&a->d->f, 0, 1100, a->d->mac) == TERN_CMD_OK);
	sg = mr_sge(&a->mr, 0, 512);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 5, b->qp.qpn, QKEY_A,
		&sg, 1, NULL, 0, 0);
	sg = mr_sge(&a->mr, 0, 513);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 6, b->qp.qpn, QKEY_A,
		&sg, 1, NULL, 0, 0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 0, w, 2) == 2);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_OK, 5);
	CHECK_WC(&w[1], TERN_WQE_SEND, TERN_CQE_LOC_LEN_ERR, 6);
out:
	ud_free(&p);
}

/* A receive WQE smaller than GRH + payload: LOC_LEN_ERR, QP in ERR, the rest flushed. */
static void t_ud_rqe_too_small(void)
{
	struct udpair p;
	struct udside *a, *b;
	struct sge sg, rsg;
	struct wc w[4];

	if (!ud_setup(&p, 6, 7)) {
		t_failures++;
		goto out;
	}
	a = &p.s[0];
	b = &p.s[1];
	rsg = mr_sge(&b->mr, RX_OFF, GRH_LEN + 10);
	post_recv(b->d, &b->qp, 20, &rsg, 1);
	rsg = mr_sge(&b->mr, RX_OFF + 1024, 1024);
	post_recv(b->d, &b->qp, 21, &rsg, 1);
	ring_rq(b->d, &b->qp);
	/* exactly fits */
	sg = mr_sge(&a->mr, 0, 10);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, 0, 1, b->qp.qpn, QKEY_A, &sg, 1, NULL, 0,
		0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 20);
	rsg = mr_sge(&b->mr, RX_OFF, GRH_LEN + 10);
	post_recv(b->d, &b->qp, 22, &rsg, 1);
	ring_rq(b->d, &b->qp);
	/* WQE 21 is big enough; WQE 22 is one byte short */
	sg = mr_sge(&a->mr, 0, 11);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, 0, 2, b->qp.qpn, QKEY_A, &sg, 1, NULL, 0,
		0);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, 0, 3, b->qp.qpn, QKEY_A, &sg, 1, NULL, 0,
		0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 1, w, 2) == 2);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 21);
	CHECK_EQ(w[0].byte_len, GRH_LEN + 11);
	CHECK_WC(&w[1], TERN_CQE_RECV, TERN_CQE_LOC_LEN_ERR, 22);
	CHECK_EQ(w[1].vendor_err, TERN_SYND_MSG_TOO_LONG);
	CHECK_EQ(qp_state(b->d, b->qp.qpn), TERN_QPS_ERR);
	CHECK_EQ(RDEV_STAT(b->d, resp_local_length_error), 1);
	/* in ERR: later receive WQEs are flushed, later packets dropped */
	rsg = mr_sge(&b->mr, RX_OFF, 4096);
	post_recv(b->d, &b->qp, 23, &rsg, 1);
	ring_rq(b->d, &b->qp);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, 0, 4, b->qp.qpn, QKEY_A, &sg, 1, NULL, 0,
		0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 1, w, 2) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_WR_FLUSH_ERR, 23);
	CHECK_EQ(RDEV_STAT(b->d, rx_roce_discards), 1);
out:
	ud_free(&p);
}

static void t_ud_gsi(void)
{
	struct udpair p;
	struct udside *a, *b;
	struct rqp ga, gb, g2;
	struct sge sg, rsg;
	struct cqe c;
	struct wc w[2];
	struct pkt k;
	bool ga_ok = false, gb_ok = false;

	if (!ud_setup(&p, 4, TERN_VLAN_NONE)) {
		t_failures++;
		goto out;
	}
	a = &p.s[0];
	b = &p.s[1];
	RQ(ud_create(a->d, &ga, TERN_QPT_GSI, &a->cq, 7, &c) == TERN_CMD_OK);
	ga_ok = true;
	CHECK_EQ(ga.qpn, 1);
	CHECK_EQ(ud_create(a->d, &g2, TERN_QPT_GSI, &a->cq, 7, &c), TERN_CMD_BAD_STATE);
	CHECK_EQ(c.syndrome, OFF(QPI, type));
	RQ(ud_create(b->d, &gb, TERN_QPT_GSI, &b->cq, 8, &c) == TERN_CMD_OK);
	gb_ok = true;
	CHECK_EQ(gb.qpn, 1);
	/* destroyed, it can come back (as QP1 again) */
	CHECK_EQ(qp_destroy(a->d, &ga), TERN_CMD_OK);
	ga_ok = false;
	RQ(ud_create(a->d, &ga, TERN_QPT_GSI, &a->cq, 7, &c) == TERN_CMD_OK);
	ga_ok = true;
	CHECK_EQ(ga.qpn, 1);
	RQ(ud_up(a->d, &ga, GSI_QKEY, 5));
	RQ(ud_up(b->d, &gb, GSI_QKEY, 9));
	CHECK_EQ(qp_attr32(b->d, gb.qpn, QPA(qkey)), GSI_QKEY);

	/*
	 * A UD QP to the peer's QP1. 0x80010000 has bit 31 set: the WQE asks for the QP's own
	 * Q_Key (QKEY_A), which QP1 refuses. With the QP's Q_Key set to the GSI one, it goes.
	 */
	rsg = mr_sge(&b->mr, RX_OFF, 512);
	post_recv(b->d, &gb, 30, &rsg, 1);
	ring_rq(b->d, &gb);
	sg = mr_sge(&a->mr, 0, 256);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, 0, 1, 1, GSI_QKEY, &sg, 1, NULL, 0, 0);
	ring_sq(a->d, &a->qp);
	CHECK_EQ(ud_poll(&p, 1, w, 1), 0);
	CHECK_EQ(RDEV_STAT(b->d, rx_qkey_mismatch), 1);
	RQ(last_frame(&p.w, 0, &k));
	CHECK_EQ(k.qkey, QKEY_A);
	CHECK_EQ(k.dqpn, 1);
	CHECK_EQ(ud_modify(a->d, a->qp.qpn, TERN_QP_ATTR_QKEY, 0, GSI_QKEY, 0, NULL), TERN_CMD_OK);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, 0, 1, 1, GSI_QKEY, &sg, 1, NULL, 0, 0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 30);
	CHECK_EQ(w[0].qpn, 1);
	CHECK_EQ(w[0].src_qpn, a->qp.qpn);
	CHECK_EQ(w[0].byte_len, GRH_LEN + 256);
	CHECK_EQ(mr_diff_pattern(b->d, &b->mr, RX_OFF + GRH_LEN, 256, 7, 0), -1);
	/* QP1 to QP1: DETH source QPN 1, the GSI QP's Q_Key via bit 31 */
	rsg = mr_sge(&a->mr, RX_OFF, 512);
	post_recv(a->d, &ga, 31, &rsg, 1);
	ring_rq(a->d, &ga);
	sg = mr_sge(&b->mr, 64, 100);
	post_ud(b->d, &gb, a->d, &p.o, TERN_WQE_SEND_IMM, TERN_WQE_F_SIGNALED, 2, 1, 0x80000000u,
		&sg, 1, NULL, 0, 0x01020304);
	ring_sq(b->d, &gb);
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND_IMM, TERN_CQE_OK, 2);
	CHECK_EQ(w[0].qpn, 1);
	RQ(last_frame(&p.w, 1, &k));
	CHECK_EQ(k.dqpn, 1);
	CHECK_EQ(k.src_qp, 1);
	CHECK_EQ(k.qkey, GSI_QKEY);
	CHECK_EQ(k.psn, 9);
	CHECK_EQ(k.icrc_wire, k.icrc_calc);
	RQ(ud_poll(&p, 0, w, 1) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV_IMM, TERN_CQE_OK, 31);
	CHECK_EQ(w[0].qpn, 1);
	CHECK_EQ(w[0].src_qpn, 1);
	CHECK_EQ(w[0].imm, 0x01020304);
	CHECK_EQ(mr_diff_pattern(a->d, &a->mr, RX_OFF + GRH_LEN, 100, 8, 64), -1);
	CHECK_EQ(RDEV_STAT(a->d, rx_qkey_mismatch), 0);
	CHECK_EQ(RDEV_STAT(b->d, rx_ud_packets), 1);
	CHECK_EQ(RDEV_STAT(a->d, rx_ud_packets), 1);
out:
	if (ga_ok)
		CHECK_EQ(qp_destroy(a->d, &ga), TERN_CMD_OK);
	if (gb_ok)
		CHECK_EQ(qp_destroy(b->d, &gb), TERN_CMD_OK);
	ud_free(&p);
}

/* UD opcodes to an RC QP and RC opcodes to a UD QP are dropped (rx_roce_discards). */
static void t_ud_rc_apart(void)
{
	struct udpair p;
	struct udside *a, *b;
	struct rqp rc;
	struct sge sg, rsg;
	struct wc w[2];
	bool rc_ok = false;

	if (!ud_setup(&p, 4, TERN_VLAN_NONE)) {
		t_failures++;
		goto out;
	}
	a = &p.s[0];
	b = &p.s[1];
	RQ(qp_create(a->d, &rc, a->d->pdn, &a->cq, &a->cq, 4, 6, 4, 6, 0, false) == TERN_CMD_OK);
	rc_ok = true;
	/* an RC QP "connected" to b's UD QP */
	RQ(qp_connect(a->d, &rc, b->d, b->qp.qpn, &p.o, 0));
	rsg = mr_sge(&b->mr, RX_OFF, 512);
	post_recv(b->d, &b->qp, 40, &rsg, 1);
	ring_rq(b->d, &b->qp);
	rsg = mr_sge(&a->mr, RX_OFF, 512);
	post_recv(a->d, &rc, 41, &rsg, 1);
	ring_rq(a->d, &rc);
	sg = mr_sge(&a->mr, 0, 32);
	post_send(a->d, &rc, TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1, 0, 0, 0);
	ring_sq(a->d, &rc);
	wire_pump(&p.w);
	CHECK_EQ(wire_count(&p.w, 0, OP_SEND_ONLY), 1);
	CHECK_EQ(RDEV_STAT(b->d, rx_roce_discards), 1);
	CHECK_EQ(RDEV_STAT(b->d, rx_ud_packets), 0);
	CHECK(!cq_peek(b->d, &b->cq));
	/* a UD datagram to the RC QP's number */
	sg = mr_sge(&b->mr, 0, 32);
	post_ud(b->d, &b->qp, a->d, &p.o, TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 2, rc.qpn, QKEY_A,
		&sg, 1, NULL, 0, 0);
	ring_sq(b->d, &b->qp);
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_OK, 2);
	CHECK_EQ(RDEV_STAT(a->d, rx_roce_discards), 1);
	CHECK_EQ(RDEV_STAT(a->d, rx_ud_packets), 0);
	CHECK(!cq_peek(a->d, &a->cq));
	/* and to a QPN nobody has */
	post_ud(b->d, &b->qp, a->d, &p.o, TERN_WQE_SEND, 0, 3, 0x123456, QKEY_A, &sg, 1, NULL, 0,
		0);
	ring_sq(b->d, &b->qp);
	wire_pump(&p.w);
	CHECK_EQ(RDEV_STAT(a->d, rx_roce_discards), 2);
	CHECK_EQ(qp_state(a->d, rc.qpn), TERN_QPS_RTS);
	CHECK_EQ(qp_state(b->d, b->qp.qpn), TERN_QPS_RTS);
out:
	if (rc_ok)
		CHECK_EQ(qp_destroy(a->d, &rc), TERN_CMD_OK);
	ud_free(&p);
}

/* ERR flushes both queues with WR_FLUSH_ERR; RESET and up again works. */
static void t_ud_flush_reset(void)
{
	struct udpair p;
	struct udside *a, *b;
	struct sge sg, rsg;
	struct wc w[8];
	unsigned int i;

	if (!ud_setup(&p, 6, TERN_VLAN_NONE)) {
		t_failures++;
		goto out;
	}
	a = &p.s[0];
	b = &p.s[1];
	for (i = 0; i < 3; i++) {
		rsg = mr_sge(&b->mr, RX_OFF + 512 * i, 512);
		post_recv(b->d, &b->qp, 60 + i, &rsg, 1);
	}
	ring_rq(b->d, &b->qp);
	RQ(qp_to_err(b->d, &b->qp) == TERN_CMD_OK);
	RQ(ud_poll(&p, 1, w, 4) == 3);
	for (i = 0; i < 3; i++) {
		CHECK_WC(&w[i], TERN_CQE_RECV, TERN_CQE_WR_FLUSH_ERR, 60 + i);
		CHECK_EQ(w[i].vendor_err, TERN_SYND_FLUSH);
	}
	sg = mr_sge(&b->mr, 0, 16);
	post_ud(b->d, &b->qp, a->d, &p.o, TERN_WQE_SEND, 0, 5, a->qp.qpn, QKEY_A, &sg, 1, NULL, 0,
		0);
	ring_sq(b->d, &b->qp);
	RQ(ud_poll(&p, 1, w, 2) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_WR_FLUSH_ERR, 5);
	CHECK_EQ(wire_count(&p.w, 1, -1), 0);
	/* back to RESET (indices 0) and up */
	CHECK_EQ(ud_modify(b->d, b->qp.qpn, TERN_QP_ATTR_STATE, TERN_QPS_RESET, 0, 0, NULL),
		 TERN_CMD_OK);
	b->qp.sq_pi = b->qp.rq_pi = 0;
	RQ(ud_up(b->d, &b->qp, QKEY_A, 0x42));
	rsg = mr_sge(&b->mr, RX_OFF, 512);
	post_recv(b->d, &b->qp, 70, &rsg, 1);
	ring_rq(b->d, &b->qp);
	sg = mr_sge(&a->mr, 5, 300);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, 0, 6, b->qp.qpn, QKEY_A, &sg, 1, NULL, 0,
		0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 70);
	CHECK_EQ(w[0].wqe_idx, 0);
	CHECK_EQ(mr_diff_pattern(b->d, &b->mr, RX_OFF + GRH_LEN, 300, 7, 5), -1);
	sg = mr_sge(&b->mr, 0, 16);
	post_ud(b->d, &b->qp, a->d, &p.o, TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 7, a->qp.qpn, QKEY_A,
		&sg, 1, NULL, 0, 0);
	ring_sq(b->d, &b->qp);
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_OK, 7);
	CHECK_EQ(w[0].wqe_idx, 0);
	{
		struct pkt k;

		RQ(last_frame(&p.w, 1, &k));
		CHECK_EQ(k.psn, 0x42);
	}
	/* a's receive queue was empty: dropped there */
	CHECK_EQ(RDEV_STAT(a->d, out_of_buffer), 1);
out:
	ud_free(&p);
}

/* Malformed UD WQEs and bad lkeys fail like RC ones. */
static void t_ud_bad_wqe(void)
{
	struct udpair p;
	struct udside *a, *b;
	struct sge sg;
	struct wc w[2];
	uint8_t *slot;

	if (!ud_setup(&p, 4, TERN_VLAN_NONE)) {
		t_failures++;
		goto out;
	}
	a = &p.s[0];
	b = &p.s[1];
	/* lkey of nothing */
	sg = mr_sge(&a->mr, 0, 16);
	sg.lkey ^= 0x100;
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, 0, 1, b->qp.qpn, QKEY_A, &sg, 1, NULL, 0,
		0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 0, w, 1) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_LOC_PROT_ERR, 1);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_LKEY);
	CHECK_EQ(qp_state(a->d, a->qp.qpn), TERN_QPS_ERR);
	/* b: an RDMA WRITE on a UD QP, then a bad address vector */
	sg = mr_sge(&b->mr, 0, 16);
	post_ud(b->d, &b->qp, a->d, &p.o, TERN_WQE_RDMA_WRITE, 0, 2, a->qp.qpn, QKEY_A, &sg, 1,
		NULL, 0, 0);
	ring_sq(b->d, &b->qp);
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_LOC_QP_OP_ERR, 2);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_BAD_OPCODE);
	CHECK_EQ(ud_modify(b->d, b->qp.qpn, TERN_QP_ATTR_STATE, TERN_QPS_RESET, 0, 0, NULL),
		 TERN_CMD_OK);
	b->qp.sq_pi = b->qp.rq_pi = 0;
	RQ(ud_up(b->d, &b->qp, QKEY_A, 0));
	post_ud(b->d, &b->qp, a->d, &p.o, TERN_WQE_SEND, 0, 3, a->qp.qpn, QKEY_A, &sg, 1, NULL, 0,
		0);
	slot = qmem_ptr(b->d, &b->qp.sq, 0, 128);
	slot[UDS(path) + OFF(struct tern_qp_path, ip_version)] = 5;
	ring_sq(b->d, &b->qp);
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_LOC_QP_OP_ERR, 3);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_BAD_AV);
	CHECK_EQ(RDEV_STAT(b->d, tx_ud_packets), 0);
	CHECK_EQ(RDEV_STAT(a->d, tx_ud_packets), 0);
out:
	ud_free(&p);
}

/*
 * A UD SEND frame from @tmpl (an IPv4 UD SEND_ONLY without a VLAN tag or pad) grown to
 * @paylen payload bytes of 0xa5, with consistent IPv4/UDP lengths, IPv4 checksum and ICRC,
 * so that it passes every check before the payload's length is looked at. Returns its
 * length; @out holds at least 14 + 48 + @paylen + 4 bytes.
 */
static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static size_t ud_grow(const uint8_t *tmpl, uint8_t *out, uint32_t paylen)
{
	const size_t l3 = 14, hdr = l3 + 20 + 8 + 12 + 8;
	size_t len = hdr + paylen + 4;

	memcpy(out, tmpl, hdr);
	memset(out + hdr, 0xa5, paylen);
	put_be16(out + l3 + 2, (uint16_t)(len - l3));		/* IPv4 total length */
	put_be16(out + l3 + 20 + 4, (uint16_t)(len - l3 - 20));	/* UDP length */
	out[l3 + 20 + 12 + 1] &= 0xcf;				/* no pad */
	pkt_fix_ipv4_csum(out, len);
	pkt_fix_icrc(out, len);
	return len;
}

/*
 * Hostile lengths from the wire (issue 14, bug 1): a UD frame longer than the MAC's largest
 * frame never enters the model (rx_oversize), and a UD payload above the receiving port's
 * RoCE MTU is malformed (rx_roce_discards): neither is copied anywhere, nothing completes,
 * and the QP still takes a good packet afterwards. Before the fix the 20,000-byte payload
 * overflowed the model's stack (ASan: stack-buffer-overflow WRITE of size 20000) and the
 * 9,500-byte one was delivered past a 1024-byte MTU.
 */
static void t_ud_hostile_len(void)
{
	static uint8_t big[20000 + 128];
	struct udpair p;
	struct udside *a, *b;
	struct sge sg, rsg;
	struct wc w[2];
	struct pkt k;
	const struct wire_rec *rec;
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)];
	uint64_t oversize0, discards0;
	uint8_t tmpl[256];
	size_t n;

	if (!ud_setup(&p, 4, TERN_VLAN_NONE)) {
		t_failures++;
		goto out;
	}
	a = &p.s[0];
	b = &p.s[1];
	/* port MTU 9000 on the receiver: RoCE MTU 4096 */
	RQ(drv_set_port(&b->d->f, 0, 9000, b->d->mac) == TERN_CMD_OK);
	/* one good packet, to have a frame to grow */
	rsg = mr_sge(&b->mr, RX_OFF, 16384);
	post_recv(b->d, &b->qp, 20, &rsg, 1);
	post_recv(b->d, &b->qp, 21, &rsg, 1);
	ring_rq(b->d, &b->qp);
	sg = mr_sge(&a->mr, 0, 64);
	post_ud(a->d, &a->qp, b->d, &p.o, TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, b->qp.qpn, QKEY_A,
		&sg, 1, NULL, 0, 0);
	ring_sq(a->d, &a->qp);
	RQ(ud_poll(&p, 0, w, 1) == 1);
	RQ(ud_poll(&p, 1, w, 1) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 20);
	rec = last_frame(&p.w, 0, &k);
	RQ(rec && rec->len <= sizeof(tmpl) && k.opcode == OP_UD_SEND_ONLY && !k.vlan);
	memcpy(tmpl, rec->data, rec->len);
	RQ(drv_eth_stats(&b->d->f, st));
	oversize0 = STAT(st, rx_oversize);
	discards0 = RDEV_STAT(b->d, rx_roce_discards);

	/* far above the largest frame: dropped where frames enter, before any parser */
	n = ud_grow(tmpl, big, 20000);
	RQ(pkt_parse(big, n, &k) && k.icrc_wire == k.icrc_calc);
	CHECK_EQ(tern_model_rx_frame(b->d->f.m, big, n), n);
	/* and just above it */
	n = ud_grow(tmpl, big, TERN_ETH_MAX_FRAME - 14 - 48 - 4 + 4);
	CHECK_EQ(n, TERN_ETH_MAX_FRAME + 4);
	CHECK_EQ(tern_model_rx_frame(b->d->f.m, big, n), n);
	RQ(drv_eth_stats(&b->d->f, st));
	CHECK_EQ(STAT(st, rx_oversize), oversize0 + 2);
	CHECK_EQ(RDEV_STAT(b->d, rx_roce_discards), discards0);

	/* a frame the MAC takes whose UD payload is above the RoCE MTU: malformed */
	n = ud_grow(tmpl, big, 9500);
	CHECK(n <= TERN_ETH_MAX_FRAME);
	CHECK_EQ(tern_model_rx_frame(b->d->f.m, big, n), n);
	n = ud_grow(tmpl, big, 4100);
	CHECK_EQ(tern_model_rx_frame(b->d->f.m, big, n), n);
	CHECK_EQ(RDEV_STAT(b->d, rx_roce_discards), discards0 + 2);
	RQ(drv_eth_stats(&b->d->f, st));
	CHECK_EQ(STAT(st, rx_oversize), oversize0 + 2);
	CHECK_EQ(ud_poll(&p, 1, w, 2), 0);
	CHECK_EQ(qp_state(b->d, b->qp.qpn), TERN_QPS_RTS);

	/* exactly the RoCE MTU still lands, in the receive WQE that was left */
	n = ud_grow(tmpl, big, 4096);
	CHECK_EQ(tern_model_rx_frame(b->d->f.m, big, n), n);
	RQ(ud_poll(&p, 1, w, 2) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 21);
	CHECK_EQ(w[0].byte_len, GRH_LEN + 4096);
out:
	ud_free(&p);
}

const struct test rdma_ud_tests[] = {
	{ "rdma ud: CREATE/MODIFY/QUERY_QP rules for UD (stride, QKEY, RC-only attributes)",
	  t_ud_cmds },
	{ "rdma ud: SEND/SEND_IMM both ways over IPv4: GRH area, DETH, PSN, ICRC, data",
	  t_ud_ipv4 },
	{ "rdma ud: SEND/SEND_IMM both ways over IPv6", t_ud_ipv6 },
	{ "rdma ud: SEND/SEND_IMM both ways with VLAN tags (IPv4 and IPv6)", t_ud_vlan },
	{ "rdma ud: Q_Key mismatch dropped and counted, bit 31 sends the QP's Q_Key", t_ud_qkey },
	{ "rdma ud: no receive WQE: dropped, out_of_buffer, no RNR; the next one lands",
	  t_ud_no_rqe },
	{ "rdma ud: message above the RoCE MTU: LOC_LEN_ERR, QP in ERR, flushed", t_ud_too_long },
	{ "rdma ud: receive WQE too small: LOC_LEN_ERR, QP in ERR", t_ud_rqe_too_small },
	{ "rdma ud: hostile lengths: 20,000-byte frame and payload above the RoCE MTU dropped",
	  t_ud_hostile_len },
	{ "rdma ud: GSI QP is QPN 1, one at a time, QP1 to QP1", t_ud_gsi },
	{ "rdma ud: UD and RC opcodes do not cross QP types", t_ud_rc_apart },
	{ "rdma ud: ERR flushes both queues, RESET and back up", t_ud_flush_reset },
	{ "rdma ud: bad lkey, opcode and address vector fail the WQE", t_ud_bad_wqe },
	{ NULL, NULL },
};
