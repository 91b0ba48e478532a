/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * UD multicast: ATTACH_MCAST/DETACH_MCAST rules and limits, one send delivered to every QP
 * attached to the group on the other device and (loopback) on the sender's own, the IP
 * multicast MAC mapping and DestQP 0xffffff on the wire, detach, a member without a receive
 * WQE, and hostile packets (DestQP 0xffffff to a unicast address, a group nobody joined).
 */
#include "test_rdma.h"

#define SQE(f)	OFF(struct tern_sq_wqe, f)
#define UDS(f)	(sizeof(struct tern_sq_wqe) + OFF(struct tern_ud_seg, f))
#define UD_HDR	(sizeof(struct tern_sq_wqe) + sizeof(struct tern_ud_seg))
#define MCI	struct tern_cmd_mcast_in
#define RDO	struct tern_cmd_query_rdma_out

#define QKEY		0x01234567u
#define GRH_LEN		40
#define MR_LEN		(64 * 1024)
#define NRX		3		/* receivers on the far device */

static const uint8_t grp4[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 129, 2, 3 };
static const uint8_t grp6[16] = { 0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34,
				  0x56, 0x78 };

static int mcast(struct rdev *d, bool attach, const uint8_t *gid, uint32_t qpn, uint32_t rsvd,
		 struct cqe *c)
{
	uint8_t in[sizeof(MCI)];

	memset(in, 0, sizeof(in));
	memcpy(in + OFF(MCI, gid), gid, 16);
	wr32(in + OFF(MCI, qpn), qpn);
	wr32(in + OFF(MCI, rsvd), rsvd);
	return rdev_cmd(d, attach ? TERN_CMD_ATTACH_MCAST : TERN_CMD_DETACH_MCAST, in, sizeof(in),
			NULL, 0, c);
}

static void t_mcast_cmds(void)
{
	struct rdev *d = rdev_new(0);
	uint8_t out[sizeof(RDO)], gid[16], in[sizeof(MCI) + 4];
	struct rqp ud[10], rc, gsi;
	unsigned int i, nud = 0;
	bool have_rc = false, have_gsi = false;
	struct rcq cq;
	struct cqe c;

	REQUIRE(d);
	REQUIRE(cq_create(d, &cq, 6, false) == TERN_CMD_OK);
	RQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA, NULL, 0, out, sizeof(out), NULL) == TERN_CMD_OK);
	CHECK(rd32(out + OFF(RDO, cap_flags)) & TERN_RDMA_CAP_MCAST);
	CHECK_EQ(rd16(out + OFF(RDO, max_mcast_grp)), 64);
	CHECK_EQ(rd16(out + OFF(RDO, max_mcast_qp_attach)), 8);
	for (nud = 0; nud < 10; nud++)
		RQ(ud_create(d, &ud[nud], TERN_QPT_UD, &cq, 7, NULL) == TERN_CMD_OK);
	RQ(qp_create(d, &rc, d->pdn, &cq, &cq, 4, 6, 4, 5, 0, false) == TERN_CMD_OK);
	have_rc = true;
	RQ(ud_create(d, &gsi, TERN_QPT_GSI, &cq, 7, NULL) == TERN_CMD_OK);
	have_gsi = true;

	/* refusals */
	CHECK_EQ(mcast(d, true, grp4, rc.qpn, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MCI, qpn));
	CHECK_EQ(mcast(d, true, grp4, gsi.qpn, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MCI, qpn));
	CHECK_EQ(mcast(d, true, grp4, 0x00ffffff, 0, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(c.syndrome, OFF(MCI, qpn));
	CHECK_EQ(mcast(d, true, grp4, 0xffffffff, 0, &c), TERN_CMD_BAD_RESOURCE);
	memcpy(gid, grp4, 16);
	gid[12] = 10;		/* ::ffff:10.129.2.3 */
	CHECK_EQ(mcast(d, true, gid, ud[0].qpn, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MCI, gid));
	gid[12] = 239;
	gid[11] = 0;		/* not IPv4-mapped, not ff00::/8 */
	CHECK_EQ(mcast(d, true, gid, ud[0].qpn, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MCI, gid));
	CHECK_EQ(mcast(d, true, grp4, ud[0].qpn, 1, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MCI, rsvd));
	memset(in, 0, sizeof(in));
	CHECK_EQ(rdev_cmd(d, TERN_CMD_ATTACH_MCAST, in, sizeof(in), NULL, 0, &c),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(mcast(d, false, grp4, ud[0].qpn, 0, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(c.syndrome, OFF(MCI, gid));

	/* attach twice is one attachment: one detach empties it */
	CHECK_EQ(mcast(d, true, grp4, ud[0].qpn, 0, &c), TERN_CMD_OK);
	CHECK_EQ(mcast(d, true, grp4, ud[0].qpn, 0, &c), TERN_CMD_OK);
	CHECK_EQ(mcast(d, false, grp4, ud[0].qpn, 0, &c), TERN_CMD_OK);
	CHECK_EQ(mcast(d, false, grp4, ud[0].qpn, 0, &c), TERN_CMD_BAD_RESOURCE);

	/* 8 QPs per group, the 9th refused */
	for (i = 0; i < 8; i++)
		CHECK_EQ(mcast(d, true, grp6, ud[i].qpn, 0, &c), TERN_CMD_OK);
	CHECK_EQ(mcast(d, true, grp6, ud[8].qpn, 0, &c), TERN_CMD_NO_RESOURCES);
	CHECK_EQ(c.syndrome, OFF(MCI, qpn));
	/* DESTROY_QP takes a QP off its groups: room for another */
	CHECK_EQ(qp_destroy(d, &ud[3]), TERN_CMD_OK);
	CHECK_EQ(mcast(d, true, grp6, ud[8].qpn, 0, &c), TERN_CMD_OK);
	CHECK_EQ(mcast(d, true, grp6, ud[9].qpn, 0, &c), TERN_CMD_NO_RESOURCES);
	RQ(ud_create(d, &ud[3], TERN_QPT_UD, &cq, 7, NULL) == TERN_CMD_OK);

	/* 64 groups, the 65th refused; a freed group is reusable */
	memcpy(gid, grp6, 16);
	for (i = 1; i < 64; i++) {
		gid[15] = (uint8_t)i;
		gid[14] = 0x99;
		CHECK_EQ(mcast(d, true, gid, ud[9].qpn, 0, &c), TERN_CMD_OK);
	}
	gid[15] = 200;
	CHECK_EQ(mcast(d, true, gid, ud[9].qpn, 0, &c), TERN_CMD_NO_RESOURCES);
	CHECK_EQ(c.syndrome, OFF(MCI, gid));
	gid[15] = 5;
	CHECK_EQ(mcast(d, false, gid, ud[9].qpn, 0, &c), TERN_CMD_OK);
	gid[15] = 200;
	CHECK_EQ(mcast(d, true, gid, ud[9].qpn, 0, &c), TERN_CMD_OK);
	/* a device reset empties the table */
	RQ(rdev_reset(d));
	CHECK_EQ(mcast(d, false, grp6, ud[0].qpn, 0, &c), TERN_CMD_BAD_RESOURCE);
	rdev_free(d);
	for (i = 0; i < nud; i++) {
		qmem_free(&ud[i].sq);
		qmem_free(&ud[i].rq);
	}
	if (have_rc) {
		qmem_free(&rc.sq);
		qmem_free(&rc.rq);
	}
	if (have_gsi) {
		qmem_free(&gsi.sq);
		qmem_free(&gsi.rq);
	}
	qmem_free(&cq.mem);
	return;
out:
	for (i = 0; i < nud; i++)
		qp_destroy(d, &ud[i]);
	if (have_rc)
		qp_destroy(d, &rc);
	if (have_gsi)
		qp_destroy(d, &gsi);
	cq_destroy(d, &cq);
	rdev_free(d);
}

/* One side: a CQ, an MR and some UD QPs. */
struct mside {
	struct rdev *d;
	struct rcq cq;
	struct rmr mr;
	struct rqp qp[NRX];
	unsigned int nqp;
};

struct mpair {
	struct mside s[2];
	struct wire w;
	bool wired;
};

static bool m_setup(struct mpair *p, unsigned int nqp0)
{
	unsigned int s, i;

	memset(p, 0, sizeof(*p));
	for (s = 0; s < 2; s++) {
		struct mside *m = &p->s[s];

		m->d = rdev_new(s);
		if (!m->d || cq_create(m->d, &m->cq, 8, false) != TERN_CMD_OK ||
		    mr_create(m->d, &m->mr, m->d->pdn, MR_LEN, TERN_ACCESS_LOCAL_WRITE, 0) !=
			    TERN_CMD_OK)
			return false;
		for (i = 0; i < (s ? NRX : nqp0); i++) {
			if (ud_create(m->d, &m->qp[i], TERN_QPT_UD, &m->cq, 7, NULL) != TERN_CMD_OK)
				return false;
			m->nqp++;
			if (!ud_up(m->d, &m->qp[i], QKEY, 100))
				return false;
		}
		mr_fill(m->d, &m->mr, 3 + s);
	}
	wire_init(&p->w, &p->s[0].d->f, &p->s[1].d->f);
	p->wired = true;
	return true;
}

static void m_free(struct mpair *p)
{
	unsigned int s, i;

	if (p->wired)
		wire_fini(&p->w);
	for (s = 0; s < 2; s++) {
		struct mside *m = &p->s[s];

		if (!m->d)
			continue;
		for (i = 0; i < m->nqp; i++) {
			qmem_free(&m->qp[i].sq);
			qmem_free(&m->qp[i].rq);
		}
		qmem_free(&m->cq.mem);
		mr_release(&m->mr);
		rdev_free(m->d);
	}
}

/* A UD SEND of @len bytes of the MR at offset 0 from @qp towards group @gid (dest_qpn 77). */
static void post_mc(struct mside *m, struct rqp *qp, const uint8_t *gid, uint32_t len,
		    uint64_t wr_id)
{
	unsigned int slot = qp->sq_pi & ((1u << qp->sq_log) - 1);
	size_t sz = 1u << qp->sq_stride;
	uint8_t *w = qmem_ptr(m->d, &qp->sq, slot * sz, sz);
	uint8_t attrs[sizeof(struct tern_qp_attrs)];
	struct connopt o;
	struct qpattr a;
	struct sge sg = mr_sge(&m->mr, 0, len);

	connopt_default(&o);
	o.ip_version = gid[0] == 0xff ? 6 : 4;
	memset(&a, 0, sizeof(a));
	path_fill(&a, m->d, m->d, &o);
	memcpy(a.dgid, gid, 16);
	memset(a.dmac, 0, 6);		/* the device maps the group's address itself */
	qpattr_encode(&a, attrs);
	memset(w, 0, sz);
	w[SQE(opcode)] = TERN_WQE_SEND;
	w[SQE(flags)] = TERN_WQE_F_SIGNALED;
	wr64(w + SQE(wr_id), wr_id);
	memcpy(w + UDS(path), attrs + OFF(struct tern_qp_attrs, path),
	       sizeof(struct tern_qp_path));
	wr32(w + UDS(dest_qpn), 77);
	wr32(w + UDS(qkey), QKEY);
	w[SQE(num_sge)] = 1;
	wr64(w + UD_HDR + OFF(struct tern_sge, addr), sg.addr);
	wr32(w + UD_HDR + OFF(struct tern_sge, length), sg.len);
	wr32(w + UD_HDR + OFF(struct tern_sge, lkey), sg.lkey);
	qp->sq_pi++;
	ring_sq(m->d, qp);
}

static void recv_on(struct mside *m, unsigned int i, uint32_t len)
{
	struct sge sg = mr_sge(&m->mr, 4096 * (i + 1), GRH_LEN + len);

	post_recv(m->d, &m->qp[i], 1000 + i, &sg, 1);
	ring_rq(m->d, &m->qp[i]);
}

/* The receive CQEs of side @s: which QPs got one (bit i), checked against the data sent. */
static unsigned int got_from(struct mpair *p, unsigned int s, uint32_t src_qpn, uint32_t len)
{
	struct mside *m = &p->s[s];
	unsigned int mask = 0, i;
	struct wc wc;

	while (cq_poll(m->d, &m->cq, &wc)) {
		if (wc.opcode != TERN_CQE_RECV)
			continue;
		CHECK_EQ(wc.status, TERN_CQE_OK);
		CHECK_EQ(wc.src_qpn, src_qpn);
		CHECK_EQ(wc.byte_len, GRH_LEN + len);
		for (i = 0; i < m->nqp; i++) {
			if (wc.qpn != m->qp[i].qpn)
				continue;
			CHECK_EQ(wc.wr_id, 1000 + i);
			CHECK_EQ(mr_diff_pattern(m->d, &m->mr, 4096 * (i + 1) + GRH_LEN, len,
						 3, 0), -1);
			mask |= 1u << i;
		}
	}
	return mask;
}

static void mcast_delivery(const uint8_t *gid, const uint8_t *mac)
{
	struct mpair p;
	struct mside *a = &p.s[0], *b = &p.s[1];
	uint64_t oob0, disc0;
	unsigned int i, n;
	const struct wire_rec *r = NULL;
	struct wc wc;

	RQ(m_setup(&p, 2));
	for (i = 0; i < NRX; i++)
		RQ(mcast(b->d, true, gid, b->qp[i].qpn, 0, NULL) == TERN_CMD_OK);
	/* on the sender's device: the sender itself and one other QP are members */
	RQ(mcast(a->d, true, gid, a->qp[0].qpn, 0, NULL) == TERN_CMD_OK);
	RQ(mcast(a->d, true, gid, a->qp[1].qpn, 0, NULL) == TERN_CMD_OK);
	for (i = 0; i < NRX; i++)
		recv_on(b, i, 200);
	recv_on(a, 0, 200);
	recv_on(a, 1, 200);

	post_mc(a, &a->qp[0], gid, 200, 7);
	wire_pump(&p.w);
	/* the far device: every member once; its port counted one packet */
	CHECK_EQ(got_from(&p, 1, a->qp[0].qpn, 200), (1u << NRX) - 1);
	CHECK_EQ(RDEV_STAT(b->d, rx_ud_packets), 1);
	CHECK_EQ(RDEV_STAT(b->d, rx_roce_packets), 1);
	/* the sender's device: both members, the sender included, and the send's CQE */
	n = 0;
	CHECK_EQ(got_from(&p, 0, a->qp[0].qpn, 200), 3u);
	for (i = 0; i < p.w.nlog; i++)
		if (p.w.log[i].dir == 0)
			r = &p.w.log[i], n++;
	CHECK_EQ(n, 1);		/* one frame on the wire, whatever the members */
	RQ(r);
	CHECK(!memcmp(r->data, mac, 6));
	CHECK_EQ(rd32be(r->data + 14 + (gid[0] == 0xff ? 40 : 20) + 8 + 4) & 0xffffff,
		 TERN_MCAST_QPN);
	/* the sender's CQE was written too (it went out before the loopback's CQEs were read) */
	CHECK_EQ(RDEV_STAT(a->d, tx_ud_packets), 1);

	/* a detached QP gets nothing; a member without a receive WQE drops its copy */
	RQ(mcast(b->d, false, gid, b->qp[1].qpn, 0, NULL) == TERN_CMD_OK);
	recv_on(b, 0, 200);
	recv_on(b, 1, 200);
	oob0 = RDEV_STAT(b->d, out_of_buffer);
	post_mc(a, &a->qp[1], gid, 200, 8);
	wire_pump(&p.w);
	CHECK_EQ(got_from(&p, 1, a->qp[1].qpn, 200), 1u);
	CHECK_EQ(RDEV_STAT(b->d, out_of_buffer), oob0 + 1);	/* qp[2]: no WQE */
	/* qp[1]'s WQE is still there for the next unicast or group packet */
	RQ(mcast(b->d, true, gid, b->qp[1].qpn, 0, NULL) == TERN_CMD_OK);
	recv_on(b, 2, 200);
	recv_on(b, 0, 200);
	post_mc(a, &a->qp[1], gid, 200, 9);
	wire_pump(&p.w);
	CHECK_EQ(got_from(&p, 1, a->qp[1].qpn, 200), 7u);

	/* a group the far device has no member of: discarded there */
	for (i = 0; i < NRX; i++)
		RQ(mcast(b->d, false, gid, b->qp[i].qpn, 0, NULL) == TERN_CMD_OK);
	disc0 = RDEV_STAT(b->d, rx_roce_discards);
	for (i = 0; i < NRX; i++)
		recv_on(b, i, 200);
	post_mc(a, &a->qp[1], gid, 200, 10);
	wire_pump(&p.w);
	CHECK_EQ(got_from(&p, 1, a->qp[1].qpn, 200), 0u);
	CHECK_EQ(RDEV_STAT(b->d, rx_roce_discards), disc0 + 1);
	while (cq_poll(a->d, &a->cq, &wc))
		;
out:
	m_free(&p);
}

static void t_mcast_ipv4(void)
{
	static const uint8_t mac[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };

	mcast_delivery(grp4, mac);	/* 239.129.2.3: the 24th bit is not in the MAC */
}

static void t_mcast_ipv6(void)
{
	static const uint8_t mac[6] = { 0x33, 0x33, 0x12, 0x34, 0x56, 0x78 };

	mcast_delivery(grp6, mac);
}

/*
 * Hostile frames: DestQP 0xffffff to a unicast address (a member of a group with that
 * address as a GID cannot exist, the frame is dropped), and one to a group with a member but
 * a wrong Q_Key (counted, not delivered).
 */
static void t_mcast_hostile(void)
{
	struct mpair p;
	struct mside *a = &p.s[0], *b = &p.s[1];
	uint8_t f[2048];
	const struct wire_rec *r = NULL;
	uint64_t disc0, qk0;
	unsigned int i;
	size_t len;

	RQ(m_setup(&p, 1));
	RQ(mcast(b->d, true, grp4, b->qp[0].qpn, 0, NULL) == TERN_CMD_OK);
	recv_on(b, 0, 100);
	/* capture a real group frame, then replay it altered */
	post_mc(a, &a->qp[0], grp4, 100, 1);
	wire_pump(&p.w);
	CHECK_EQ(got_from(&p, 1, a->qp[0].qpn, 100), 1u);
	for (i = 0; i < p.w.nlog; i++)
		if (p.w.log[i].dir == 0)
			r = &p.w.log[i];
	RQ(r && r->len <= sizeof(f));
	len = r->len;
	recv_on(b, 0, 100);
	disc0 = RDEV_STAT(b->d, rx_roce_discards);
	qk0 = RDEV_STAT(b->d, rx_qkey_mismatch);
	/* the same frame again: delivered (the replay path works) */
	memcpy(f, r->data, len);
	CHECK_EQ(tern_model_rx_frame(b->d->f.m, f, len), len);
	CHECK_EQ(got_from(&p, 1, a->qp[0].qpn, 100), 1u);
	recv_on(b, 0, 100);
	/* Q_Key changed (DETH is not covered by anything but the ICRC: recompute) */
	memcpy(f, r->data, len);
	f[14 + 20 + 8 + 12 + 3] ^= 1;
	pkt_fix_icrc(f, len);
	CHECK_EQ(tern_model_rx_frame(b->d->f.m, f, len), len);
	CHECK_EQ(RDEV_STAT(b->d, rx_qkey_mismatch), qk0 + 1);
	CHECK_EQ(got_from(&p, 1, a->qp[0].qpn, 100), 0u);
	/* DestQP 0xffffff to a unicast IP, to the port's own MAC */
	memcpy(f, r->data, len);
	memcpy(f, b->d->mac, 6);
	f[14 + 16] = 10;
	pkt_fix_ipv4_csum(f, len);
	pkt_fix_icrc(f, len);
	CHECK_EQ(tern_model_rx_frame(b->d->f.m, f, len), len);
	CHECK_EQ(RDEV_STAT(b->d, rx_roce_discards), disc0 + 1);
	CHECK_EQ(got_from(&p, 1, a->qp[0].qpn, 100), 0u);
	/* the WQE is still there */
	memcpy(f, r->data, len);
	CHECK_EQ(tern_model_rx_frame(b->d->f.m, f, len), len);
	CHECK_EQ(got_from(&p, 1, a->qp[0].qpn, 100), 1u);
out:
	m_free(&p);
}

const struct test rdma_mcast_tests[] = {
	{ "rdma mcast: ATTACH/DETACH_MCAST rules, 64 groups x 8 QPs, DESTROY_QP, reset",
	  t_mcast_cmds },
	{ "rdma mcast: IPv4 group: every member on both devices, MAC mapping, detach, no WQE",
	  t_mcast_ipv4 },
	{ "rdma mcast: IPv6 group: every member on both devices, MAC mapping, detach, no WQE",
	  t_mcast_ipv6 },
	{ "rdma mcast: hostile: wrong Q_Key, DestQP 0xffffff to a unicast address",
	  t_mcast_hostile },
	{ NULL, NULL },
};
