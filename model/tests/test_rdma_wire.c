/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* RoCEv2 wire format, decoded independently, and what the receiver drops. */
#include <stdlib.h>

#include "test_rdma.h"

/* Common header checks of every frame of a connection. */
static void check_common(const struct pkt *p, const struct conn *c, unsigned int dir)
{
	const struct rdev *src = c->d[dir], *dst = c->d[!dir];
	uint8_t gid[16];

	CHECK(p->ok);
	CHECK(!memcmp(p->dmac, dst->mac, 6));
	CHECK(!memcmp(p->smac, src->mac, 6));
	CHECK_EQ(p->icrc_wire, p->icrc_calc);
	CHECK_EQ(p->dport, TERN_ROCE_UDP_DPORT);
	CHECK_EQ(p->sport, c->o.sport);
	CHECK_EQ(p->pkey, 0xffff);
	CHECK_EQ(p->tver, 0);
	CHECK_EQ(p->bth4 & 0x3f, 0);
	CHECK_EQ(p->dqpn, c->qp[!dir].qpn);
	CHECK_EQ(p->tclass, c->o.tclass);
	CHECK_EQ(p->ttl, c->o.hop_limit);
	CHECK_EQ(p->ipver, c->o.ip_version);
	if (c->o.ip_version == 4) {
		CHECK(p->ip_csum_ok);
		memset(gid, 0, 16);
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, src->ip, 4);
		CHECK(!memcmp(p->sip, gid, 16));
		memcpy(gid + 12, dst->ip, 4);
		CHECK(!memcmp(p->dip, gid, 16));
	} else {
		CHECK_EQ(p->flow_label, c->o.flow_label);
		CHECK_EQ(p->sip[15], src->ip[3]);
		CHECK_EQ(p->dip[15], dst->ip[3]);
		CHECK_EQ(p->sip[0], 0x20);
	}
	if (c->o.vlan_id != TERN_VLAN_NONE) {
		CHECK(p->vlan);
		CHECK_EQ(p->vid, c->o.vlan_id);
		CHECK_EQ(p->pcp, c->o.sl);
	} else {
		CHECK(!p->vlan);
	}
	/* payload + pad is a multiple of 4 */
	CHECK_EQ((p->payload_len + p->padcnt) % 4, 0);
}

static void wire_format(bool v6_vlan)
{
	struct connopt o;
	struct conn c;
	struct rmr smr, dmr;
	struct sge sg;
	struct wc w[8];
	struct pkt p;
	unsigned int i, n0 = 0, max_msn = 0, acks = 0;
	bool mr_ok = false, acked_last = false;
	/* expected requester frames: opcode, psn, payload offset in smr, length, ackreq */
	struct {
		uint8_t op;
		uint32_t psn;
		uint32_t off, len;
		int ackreq;
	} exp[] = {
		{ OP_SEND_FIRST, 0xfffffe, 0, 256, -1 },
		{ OP_SEND_MIDDLE, 0xffffff, 256, 256, -1 },
		{ OP_SEND_LAST_IMM, 0x000000, 512, 88, 1 },
		{ OP_WRITE_FIRST, 0x000001, 1000, 256, -1 },
		{ OP_WRITE_LAST, 0x000002, 1256, 44, 1 },
		{ OP_READ_REQ, 0x000003, 0, 0, -1 },
		{ OP_WRITE_ONLY_IMM, 0x000006, 2000, 10, 1 },
	};

	connopt_default(&o);
	o.mtu = 1;
	o.psn[0] = 0xfffffe;
	o.tclass = 0x68;
	o.hop_limit = 33;
	o.sport = 0xc0de;
	if (v6_vlan) {
		o.ip_version = 6;
		o.vlan_id = 100;
		o.sl = 5;
		o.flow_label = 0x12345;
		o.tclass = 0x20;
	}
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &smr, c.d[0]->pdn, 8192,
		     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_READ, 0x123) == 0);
	RQ(mr_create(c.d[1], &dmr, c.d[1]->pdn, 8192,
		     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_REMOTE_READ,
		     0x321) == 0);
	mr_ok = true;
	mr_fill(c.d[0], &smr, 1);
	mr_fill(c.d[1], &dmr, 2);
	sg = mr_sge(&dmr, 0, 1000);
	post_recv(c.d[1], &c.qp[1], 1, &sg, 1);
	post_recv(c.d[1], &c.qp[1], 2, &sg, 1);
	ring_rq(c.d[1], &c.qp[1]);
	sg = mr_sge(&smr, 0, 600);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND_IMM, TERN_WQE_F_SIGNALED | TERN_WQE_F_SOLICITED,
		  10, &sg, 1, 0, 0, 0xcafef00d);
	sg = mr_sge(&smr, 1000, 300);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 11, &sg, 1,
		  dmr.iova + 4000, dmr.key, 0);
	sg = mr_sge(&smr, 3000, 600);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 12, &sg, 1,
		  dmr.iova + 5000, dmr.key, 0);
	sg = mr_sge(&smr, 2000, 10);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE_IMM, TERN_WQE_F_SIGNALED, 13, &sg, 1,
		  dmr.iova + 7000, dmr.key, 0x01020304);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 4, 10000000) == 4);
	for (i = 0; i < 4; i++)
		CHECK_WC(&w[i], i == 0 ? TERN_WQE_SEND_IMM : i == 1 ? TERN_WQE_RDMA_WRITE :
				i == 2 ? TERN_WQE_RDMA_READ : TERN_WQE_RDMA_WRITE_IMM,
			 TERN_CQE_OK, 10 + i);
	RQ(conn_poll(&c, 1, w, 2, 1000000) == 2);
	CHECK_EQ(w[0].imm, 0xcafef00d);
	CHECK_EQ(w[1].imm, 0x01020304);
	CHECK_EQ(mr_diff_pattern(c.d[0], &smr, 3000, 600, 2, 5000), -1);
	for (i = 0; i < c.w.nlog; i++) {
		const struct wire_rec *r = &c.w.log[i];
		uint8_t buf[512];

		RQ(pkt_parse(r->data, r->len, &p));
		check_common(&p, &c, r->dir);
		if (r->dir == 0) {
			if (n0 >= sizeof(exp) / sizeof(exp[0])) {
				t_failures++;
				printf("#   extra requester frame opcode 0x%02x\n", p.opcode);
				continue;
			}
			CHECK_EQ(p.opcode, exp[n0].op);
			CHECK_EQ(p.psn, exp[n0].psn);
			CHECK_EQ(p.payload_len, exp[n0].len);
			if (exp[n0].ackreq >= 0)
				CHECK_EQ(p.ackreq, exp[n0].ackreq);
			CHECK_EQ(p.se, p.opcode == OP_SEND_LAST_IMM);
			if (p.payload_len == exp[n0].len && exp[n0].len) {
				mr_read(c.d[0], &smr, exp[n0].off, buf, exp[n0].len);
				CHECK(!memcmp(p.payload, buf, exp[n0].len));
			}
			if (p.opcode == OP_SEND_LAST_IMM)
				CHECK_EQ(p.imm, 0xcafef00d);
			if (p.opcode == OP_WRITE_ONLY_IMM) {
				CHECK_EQ(p.imm, 0x01020304);
				CHECK_EQ(p.padcnt, 2);
				CHECK_EQ(p.va, dmr.iova + 7000);
				CHECK_EQ(p.dma_len, 10);
				CHECK_EQ(p.rkey, dmr.key);
			}
			if (p.opcode == OP_WRITE_FIRST) {
				CHECK_EQ(p.va, dmr.iova + 4000);
				CHECK_EQ(p.rkey, dmr.key);
				CHECK_EQ(p.dma_len, 300);
			}
			if (p.opcode == OP_READ_REQ) {
				CHECK_EQ(p.va, dmr.iova + 5000);
				CHECK_EQ(p.rkey, dmr.key);
				CHECK_EQ(p.dma_len, 600);
			}
			n0++;
		} else {
			CHECK(p.opcode == OP_ACK || (p.opcode >= OP_READ_RESP_FIRST &&
						     p.opcode <= OP_READ_RESP_ONLY));
			if (p.has_aeth) {
				/* ACK type, credits field whatever it is */
				CHECK_EQ(p.syndrome & 0xe0, 0);
				if (p.msn > max_msn)
					max_msn = p.msn;
			}
			if (p.opcode == OP_ACK)
				acks++;
			if (p.opcode == OP_ACK && p.psn == 6)
				acked_last = true;
			if (p.opcode >= OP_READ_RESP_FIRST && p.opcode <= OP_READ_RESP_LAST) {
				uint32_t k = p.psn - 3;

				CHECK(k < 3);
				CHECK_EQ(p.payload_len, k < 2 ? 256 : 88);
				if (k < 3 && p.payload_len == (k < 2 ? 256u : 88u)) {
					mr_read(c.d[1], &dmr, 5000 + 256 * k, buf, p.payload_len);
					CHECK(!memcmp(p.payload, buf, p.payload_len));
				}
				CHECK_EQ(p.opcode, OP_READ_RESP_FIRST + k);
			}
		}
	}
	CHECK_EQ(n0, sizeof(exp) / sizeof(exp[0]));
	CHECK(acks >= 1);
	CHECK(acked_last);
	CHECK_EQ(max_msn, 4);
	CHECK_EQ(wire_count(&c.w, 1, OP_READ_RESP_FIRST), 1);
	CHECK_EQ(wire_count(&c.w, 1, OP_READ_RESP_MIDDLE), 1);
	CHECK_EQ(wire_count(&c.w, 1, OP_READ_RESP_LAST), 1);
	/* counters */
	CHECK_EQ(RDEV_STAT(c.d[0], tx_roce_packets), n0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_packets), n0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_send_requests), 1);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_write_requests), 2);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_read_requests), 1);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_icrc_errors), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_discards), 0);
	CHECK_EQ(RDEV_STAT(c.d[0], rx_roce_discards), 0);
	{
		uint64_t bytes = 0;

		for (i = 0; i < c.w.nlog; i++)
			if (c.w.log[i].dir == 0)
				bytes += c.w.log[i].len;
		/* counted as frames (without FCS) or as UDP payloads: either is a real choice */
		CHECK(RDEV_STAT(c.d[0], tx_roce_bytes) > 0);
		CHECK(RDEV_STAT(c.d[0], tx_roce_bytes) <= bytes);
	}
out:
	if (mr_ok) {
		mr_release(&smr);
		mr_release(&dmr);
	}
	conn_free(&c);
}

static void t_wire_format_v4(void)
{
	wire_format(false);
}

static void t_wire_format_v6_vlan(void)
{
	wire_format(true);
}

/* Sanity of the decoder itself: CRC-32 check value and a masked field leaves the ICRC alone. */
static void t_icrc_selftest(void)
{
	static const char check[] = "123456789";
	static const uint8_t ff[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	CHECK_EQ(crc32_ieee(0, check, 9), 0xcbf43926);
	/* the register state after eight 0xff bytes, as rxe seeds it */
	CHECK_EQ(~crc32_ieee(0, ff, 8), 0xdebb20e3);
}

struct keep_ctx {
	uint8_t *frame;
	size_t len;
};

static enum wire_action keep_first(struct wire *w, unsigned int dir, unsigned int idx,
				   uint8_t *frame, size_t *len)
{
	struct keep_ctx *k = w->ctx;

	if (dir != 0)
		return W_DELIVER;
	if (idx == 0) {
		k->frame = malloc(*len);
		memcpy(k->frame, frame, *len);
		k->len = *len;
	}
	return W_DROP;
}

/* Inject a frame into device 1; returns how many frames device 1 sent in response. */
static unsigned int inject(struct conn *c, const uint8_t *f, size_t len)
{
	unsigned int n;

	CHECK_EQ(tern_model_rx_frame(c->d[1]->f.m, f, len), len);
	fk_run(&c->d[1]->f);
	n = c->d[1]->f.nframes;
	fk_clear_frames(&c->d[1]->f);
	return n;
}

/*
 * Bad frames are dropped and counted, and write nothing: bad ICRC, truncated headers,
 * inconsistent lengths, unknown QP. A frame whose masked fields (TTL, TOS) changed is fine.
 */
static void t_rx_drops(void)
{
	struct connopt o;
	struct conn c;
	struct rmr smr, dmr;
	struct keep_ctx k = { NULL, 0 };
	struct sge sg;
	struct pkt p;
	uint8_t *f = NULL;
	size_t l3;
	uint64_t disc, icrc;
	unsigned int i, tr;
	bool mr_ok = false;
	size_t cuts[4];

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &smr, c.d[0]->pdn, 4096, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	RQ(mr_create(c.d[1], &dmr, c.d[1]->pdn, 4096,
		     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0) == 0);
	mr_ok = true;
	mr_fill(c.d[0], &smr, 5);
	c.w.filter = keep_first;
	c.w.ctx = &k;
	sg = mr_sge(&smr, 0, 200);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  dmr.iova + 100, dmr.key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);
	RQ(k.frame);
	RQ(pkt_parse(k.frame, k.len, &p));
	CHECK_EQ(p.opcode, OP_WRITE_ONLY);
	f = malloc(k.len);
	RQ(f);
	l3 = 14;
	/* 1. a payload bit flipped: ICRC error */
	memcpy(f, k.frame, k.len);
	f[k.len - 10] ^= 0x10;
	CHECK_EQ(inject(&c, f, k.len), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_icrc_errors), 1);
	/* 2. the ICRC itself wrong */
	memcpy(f, k.frame, k.len);
	f[k.len - 1] ^= 0x80;
	CHECK_EQ(inject(&c, f, k.len), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_icrc_errors), 2);
	/* 3. a non-masked header field changed (IP identification): ICRC error */
	memcpy(f, k.frame, k.len);
	f[l3 + 4] ^= 0x01;
	pkt_fix_ipv4_csum(f, k.len);
	CHECK_EQ(inject(&c, f, k.len), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_icrc_errors), 3);
	/* 4. truncated (IP/UDP lengths say more): inside BTH, inside RETH, in the payload, ICRC */
	cuts[0] = l3 + 20 + 8 + 6;
	cuts[1] = l3 + 20 + 8 + 12 + 9;
	cuts[2] = l3 + 20 + 8 + 12 + 16 + 1;
	cuts[3] = k.len - 2;
	disc = RDEV_STAT(c.d[1], rx_roce_discards);
	icrc = RDEV_STAT(c.d[1], rx_icrc_errors);
	for (i = 0; i < 4; i++) {
		uint64_t d2, i2;

		CHECK_EQ(inject(&c, k.frame, cuts[i]), 0);
		d2 = RDEV_STAT(c.d[1], rx_roce_discards);
		i2 = RDEV_STAT(c.d[1], rx_icrc_errors);
		if (d2 + i2 != disc + icrc + 1) {
			t_failures++;
			printf("#   truncated to %zu: discards %llu->%llu icrc %llu->%llu\n", cuts[i],
			       (unsigned long long)disc, (unsigned long long)d2,
			       (unsigned long long)icrc, (unsigned long long)i2);
		}
		disc = d2;
		icrc = i2;
	}
	/* 5. headers that agree with a short frame: UDP/IP lengths cut below BTH + ICRC */
	memcpy(f, k.frame, k.len);
	f[l3 + 2] = 0;
	f[l3 + 3] = 20 + 8 + 8;
	f[l3 + 20 + 4] = 0;
	f[l3 + 20 + 5] = 8 + 8;
	pkt_fix_ipv4_csum(f, k.len);
	disc = RDEV_STAT(c.d[1], rx_roce_discards);
	CHECK_EQ(inject(&c, f, l3 + 20 + 8 + 8), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_discards) + RDEV_STAT(c.d[1], rx_icrc_errors),
		 disc + icrc + 1);
	/* 6. an unknown destination QP (ICRC recomputed): discarded */
	memcpy(f, k.frame, k.len);
	f[l3 + 20 + 8 + 7] ^= 0x40;
	pkt_fix_icrc(f, k.len);
	disc = RDEV_STAT(c.d[1], rx_roce_discards);
	CHECK_EQ(inject(&c, f, k.len), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_discards), disc + 1);
	/* 7. a QP number 0 and a QP that exists but is RESET: discarded */
	memcpy(f, k.frame, k.len);
	f[l3 + 20 + 8 + 5] = f[l3 + 20 + 8 + 6] = f[l3 + 20 + 8 + 7] = 0;
	pkt_fix_icrc(f, k.len);
	CHECK_EQ(inject(&c, f, k.len), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_discards), disc + 2);
	/* nothing reached memory, no completion, nothing accepted */
	for (i = 0; i < 4096; i++)
		if (*mr_ptr(c.d[1], &dmr, i))
			break;
	CHECK_EQ(i, 4096);
	CHECK(!cq_peek(c.d[1], &c.cq[1]));
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_packets), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_write_requests), 0);
	/* 8. TTL and TOS changed, IP checksum fixed: masked out of the ICRC, accepted */
	memcpy(f, k.frame, k.len);
	f[l3 + 8] = 3;
	f[l3 + 1] = 0x04;
	pkt_fix_ipv4_csum(f, k.len);
	tr = inject(&c, f, k.len);
	CHECK_EQ(tr, 1);	/* the ACK */
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_packets), 1);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_write_requests), 1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &dmr, 100, 200, 5, 0), -1);
	/* 9. the original now is a duplicate: re-ACKed, not executed again, counted */
	memset(mr_ptr(c.d[1], &dmr, 100), 0, 1);
	tr = inject(&c, k.frame, k.len);
	CHECK_EQ(tr, 1);
	CHECK_EQ(*mr_ptr(c.d[1], &dmr, 100), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], duplicate_request), 1);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_icrc_errors), 3);
out:
	free(k.frame);
	free(f);
	if (mr_ok) {
		mr_release(&smr);
		mr_release(&dmr);
	}
	conn_free(&c);
}

/* Frames for a QP that is only in INIT (not RTR) are discarded; in RTR they are accepted. */
static void t_rx_qp_not_ready(void)
{
	struct connopt o;
	struct conn c;
	struct rmr smr;
	struct sge sg;
	struct qpattr a;
	bool mr_ok = false;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &smr, c.d[0]->pdn, 4096, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	mr_ok = true;
	/* side 1 back to RESET, then INIT only */
	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_RESET;
	RQ(qp_modify(c.d[1], c.qp[1].qpn, TERN_QP_ATTR_STATE, &a, NULL) == 0);
	c.qp[1].sq_pi = c.qp[1].rq_pi = 0;
	a.state = TERN_QPS_INIT;
	RQ(qp_modify(c.d[1], c.qp[1].qpn, TERN_QP_ATTR_STATE, &a, NULL) == 0);
	c.w.filter = NULL;
	sg = mr_sge(&smr, 0, 10);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);
	CHECK(RDEV_STAT(c.d[1], rx_roce_discards) >= 1);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_packets), 0);
	CHECK_EQ(wire_count(&c.w, 1, -1), 0);
	CHECK(!cq_peek(c.d[0], &c.cq[0]));
out:
	if (mr_ok)
		mr_release(&smr);
	conn_free(&c);
}

/* A WRITE_MIDDLE at the expected PSN with no WRITE_FIRST before it: invalid request NAK,
 * responder QP to ERR with a REQ_ERR event, nothing written. */
static void t_rx_opcode_sequence(void)
{
	struct connopt o;
	struct conn c;
	struct rmr smr, dmr;
	struct sge sg;
	struct pkt p;
	uint8_t *f = NULL;
	size_t len = 0;
	unsigned int i, naks = 0, evs = 0;
	bool mr_ok = false;

	connopt_default(&o);
	o.mtu = 1;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &smr, c.d[0]->pdn, 4096, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	RQ(mr_create(c.d[1], &dmr, c.d[1]->pdn, 4096,
		     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0) == 0);
	mr_ok = true;
	c.w.filter = wire_drop_dir0;
	sg = mr_sge(&smr, 0, 700);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1, dmr.iova,
		  dmr.key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);
	for (i = 0; i < c.w.nlog && !f; i++) {
		if (c.w.log[i].dir == 0 && pkt_parse(c.w.log[i].data, c.w.log[i].len, &p) &&
		    p.opcode == OP_WRITE_MIDDLE) {
			len = c.w.log[i].len;
			f = malloc(len);
			memcpy(f, c.w.log[i].data, len);
		}
	}
	RQ(f);
	/* PSN := the first PSN of the message (what the responder expects) */
	f[14 + 20 + 8 + 9] = (uint8_t)(o.psn[0] >> 16);
	f[14 + 20 + 8 + 10] = (uint8_t)(o.psn[0] >> 8);
	f[14 + 20 + 8 + 11] = (uint8_t)o.psn[0];
	pkt_fix_icrc(f, len);
	CHECK_EQ(tern_model_rx_frame(c.d[1]->f.m, f, len), len);
	fk_run(&c.d[1]->f);
	for (i = 0; i < c.d[1]->f.nframes; i++) {
		if (pkt_parse(c.d[1]->f.frames[i].data, c.d[1]->f.frames[i].len, &p) &&
		    p.opcode == OP_ACK) {
			CHECK_EQ(p.syndrome, 0x61);
			CHECK_EQ(p.psn, o.psn[0]);
			naks++;
		}
	}
	CHECK_EQ(naks, 1);
	fk_clear_frames(&c.d[1]->f);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
	{
		uint8_t type;
		uint32_t d0;
		struct drv_ring *eq = &c.d[1]->async_eq;

		for (;;) {
			uint8_t *e = drv_ring_entry(&c.d[1]->f, eq, eq->ci);
			uint8_t sub = e[OFF(struct tern_eqe, subtype)];

			if (!drv_eq_poll(&c.d[1]->f, eq, &type, &d0))
				break;
			if (type == TERN_EQE_QP_EVENT) {
				CHECK_EQ(sub, TERN_QP_EV_REQ_ERR);
				CHECK_EQ(d0, c.qp[1].qpn);
				evs++;
			}
		}
	}
	CHECK_EQ(evs, 1);
	for (i = 0; i < 4096; i++)
		if (*mr_ptr(c.d[1], &dmr, i))
			break;
	CHECK_EQ(i, 4096);
out:
	free(f);
	if (mr_ok) {
		mr_release(&smr);
		mr_release(&dmr);
	}
	conn_free(&c);
}

/* Edits the first dir-1 frame with opcode @op: new opcode and/or PSN offset, ICRC fixed. */
struct edit_ctx {
	uint8_t op, new_op;
	uint32_t psn_add;
	unsigned int done;
};

static enum wire_action edit_first(struct wire *w, unsigned int dir, unsigned int idx,
				   uint8_t *frame, size_t *len)
{
	struct edit_ctx *e = w->ctx;
	struct pkt p;
	uint8_t *bth;
	uint32_t psn;

	(void)idx;
	if (dir != 1 || e->done || !pkt_parse(frame, *len, &p) || p.opcode != e->op)
		return W_DELIVER;
	bth = frame + 14 + 20 + 8;
	bth[0] = e->new_op;
	psn = (p.psn + e->psn_add) & 0xffffff;
	bth[9] = (uint8_t)(psn >> 16);
	bth[10] = (uint8_t)(psn >> 8);
	bth[11] = (uint8_t)psn;
	pkt_fix_icrc(frame, *len);
	e->done++;
	return W_DELIVER;
}

/* A READ answered with RESP_FIRST where RESP_ONLY belongs: BAD_RESP_ERR, QP to ERR. */
static void t_bad_read_response(void)
{
	struct connopt o;
	struct conn c;
	struct rmr smr, dmr;
	struct edit_ctx e = { OP_READ_RESP_ONLY, OP_READ_RESP_FIRST, 0, 0 };
	struct sge sg;
	struct wc wc;
	bool mr_ok = false;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &smr, c.d[0]->pdn, 4096, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	RQ(mr_create(c.d[1], &dmr, c.d[1]->pdn, 4096,
		     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_READ, 0) == 0);
	mr_ok = true;
	c.w.filter = edit_first;
	c.w.ctx = &e;
	sg = mr_sge(&smr, 0, 100);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 1, &sg, 1, dmr.iova,
		  dmr.key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &wc, 1, 1000000) == 1);
	CHECK_EQ(e.done, 1);
	CHECK_EQ(wc.status, TERN_CQE_BAD_RESP_ERR);
	CHECK_EQ(wc.vendor_err, TERN_SYND_BAD_RESP);
	CHECK_EQ(wc.wr_id, 1);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
out:
	if (mr_ok) {
		mr_release(&smr);
		mr_release(&dmr);
	}
	conn_free(&c);
}

/* An ACK for a PSN never sent is ignored: nothing completes early; the real ACK after the
 * retransmission completes the WRITE. */
static void t_ghost_ack(void)
{
	struct connopt o;
	struct conn c;
	struct rmr smr, dmr;
	struct edit_ctx e = { OP_ACK, OP_ACK, 1000, 0 };
	struct sge sg;
	struct wc wc;
	bool mr_ok = false;

	connopt_default(&o);
	o.timeout = 8;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &smr, c.d[0]->pdn, 4096, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	RQ(mr_create(c.d[1], &dmr, c.d[1]->pdn, 4096,
		     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0) == 0);
	mr_ok = true;
	c.w.filter = edit_first;
	c.w.ctx = &e;
	sg = mr_sge(&smr, 0, 100);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1, dmr.iova,
		  dmr.key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);
	CHECK_EQ(e.done, 1);
	CHECK(!cq_peek(c.d[0], &c.cq[0]));
	RQ(conn_poll(&c, 0, &wc, 1, 10 * (4096ull << 8)) == 1);
	CHECK_WC(&wc, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 1);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
out:
	if (mr_ok) {
		mr_release(&smr);
		mr_release(&dmr);
	}
	conn_free(&c);
}

/*
 * The ICRC of packets of every payload length from 0 to 300 bytes and of MTU-sized ones
 * (long pieces take the device's folding CRC, short ones and the tails its byte-wise one),
 * READ responses included, in both directions and with IPv4 and IPv6 headers: every frame's
 * ICRC is the independent decoder's, the receiver counts no ICRC error and the data arrives.
 */
static void icrc_lengths(bool v6)
{
	static const uint32_t big[] = { 1000, 4031, 4095, 4096, 4097, 8191, 12345 };
	struct connopt o;
	struct conn c;
	struct rmr smr, dmr;
	struct sge sg;
	struct wc w;
	struct pkt p;
	unsigned int i, n = 0, frames = 0;
	bool mr_ok = false;

	connopt_default(&o);
	o.mtu = 5;
	if (v6)
		o.ip_version = 6;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &smr, c.d[0]->pdn, 16384,
		     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_READ, 0x10) == 0);
	RQ(mr_create(c.d[1], &dmr, c.d[1]->pdn, 16384,
		     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_REMOTE_READ,
		     0x7) == 0);
	mr_ok = true;
	mr_fill(c.d[0], &smr, 3);
	mr_fill(c.d[1], &dmr, 4);
	for (i = 0; i <= 300 + sizeof(big) / sizeof(big[0]); i++) {
		uint32_t len = i <= 300 ? i : big[i - 301];
		uint32_t off = i % 13;
		bool read = i % 3 == 2;

		/* WRITE device 0's bytes at off to device 1 at off + 1; READ them to 2 * off */
		sg = mr_sge(&smr, read ? 2 * off : off, len);
		post_send(c.d[0], &c.qp[0], read ? TERN_WQE_RDMA_READ : TERN_WQE_RDMA_WRITE,
			  TERN_WQE_F_SIGNALED, i, &sg, 1, dmr.iova + off + 1, dmr.key, 0);
		ring_sq(c.d[0], &c.qp[0]);
		if (conn_poll(&c, 0, &w, 1, 10000000) != 1 || w.status != TERN_CQE_OK) {
			t_failures++;
			printf("#   length %u: no successful completion\n", len);
			goto out;
		}
		if (read)
			CHECK_EQ(mr_diff_pattern(c.d[0], &smr, 2 * off, len, 4, off + 1), -1);
		else
			CHECK_EQ(mr_diff_pattern(c.d[1], &dmr, off + 1, len, 3, off), -1);
		/* what the READ placed is device 1's pattern again for the next WRITE's check */
		if (read)
			mr_fill(c.d[0], &smr, 3);
		else
			mr_fill(c.d[1], &dmr, 4);
		for (; n < c.w.nlog; n++) {
			const struct wire_rec *r = &c.w.log[n];

			if (!pkt_parse(r->data, r->len, &p) || p.icrc_wire != p.icrc_calc) {
				t_failures++;
				printf("#   length %u: frame %u: ICRC 0x%08x, not 0x%08x\n", len,
				       n, p.icrc_wire, p.icrc_calc);
			}
			frames++;
		}
		wire_clear_log(&c.w);
		n = 0;
	}
	CHECK(frames > 600);
	CHECK_EQ(RDEV_STAT(c.d[0], rx_icrc_errors), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_icrc_errors), 0);
out:
	if (mr_ok) {
		mr_release(&smr);
		mr_release(&dmr);
	}
	conn_free(&c);
}

static void t_icrc_lengths_v4(void)
{
	icrc_lengths(false);
}

static void t_icrc_lengths_v6(void)
{
	icrc_lengths(true);
}

const struct test rdma_wire_tests[] = {
	{ "rdma wire: decoder self-test (CRC-32 check value, ICRC seed)", t_icrc_selftest },
	{ "rdma wire: IPv4 frames: headers, BTH, RETH/AETH/ImmDt, pad, ICRC", t_wire_format_v4 },
	{ "rdma wire: IPv6 + VLAN frames: tag, TC, flow label, ICRC", t_wire_format_v6_vlan },
	{ "rdma wire: bad ICRC, truncated, unknown QP dropped+counted; masked ok",
	  t_rx_drops },
	{ "rdma wire: frames for a QP not in RTR are discarded", t_rx_qp_not_ready },
	{ "rdma wire: WRITE_MIDDLE without FIRST: NAK inv req, ERR, REQ_ERR event",
	  t_rx_opcode_sequence },
	{ "rdma wire: READ_RESP_FIRST where ONLY belongs: BAD_RESP_ERR", t_bad_read_response },
	{ "rdma wire: ACK for a PSN never sent is ignored", t_ghost_ack },
	{ "rdma wire: ICRC of every payload length 0..300 and MTU-sized, IPv4", t_icrc_lengths_v4 },
	{ "rdma wire: ICRC of every payload length 0..300 and MTU-sized, IPv6", t_icrc_lengths_v6 },
	{ NULL, NULL },
};
