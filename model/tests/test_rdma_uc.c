/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * UC QPs: SEND/WRITE messages of several packets with UC opcodes and no AckReq, nothing sent
 * back, send WQEs complete once on the wire; a lost packet loses its message only and the
 * responder takes the next one into the same receive WQE; a SEND with no receive WQE or too
 * long for it, and a WRITE outside its rkey, are dropped whole and counted while both QPs stay
 * usable; READ and atomic WQEs fail locally; MODIFY_QP takes only UC's attributes; UC and RC
 * opcodes reach only QPs of their own type.
 */
#include "test_rdma.h"

#define UC_MSG	3000		/* three packets at MTU 1024 */
#define MASK_OFF	OFF(struct tern_cmd_modify_qp_in, attr_mask)

static bool uc_conn(struct conn *c)
{
	struct connopt o;

	connopt_default(&o);
	o.uc = true;
	o.access = TERN_ACCESS_REMOTE_WRITE;
	return conn_setup(c, &o);
}

/* Side 0 posts @op of @len bytes at @soff of @smr (WRITE: to @doff of @dmr), signaled. */
static void uc_post(struct conn *c, uint8_t op, const struct rmr *smr, uint64_t soff,
		    uint32_t len, const struct rmr *dmr, uint64_t doff, uint64_t wr_id)
{
	struct sge sg = mr_sge(smr, soff, len);

	post_send(c->d[0], &c->qp[0], op, TERN_WQE_F_SIGNALED, wr_id, &sg, 1,
		  dmr ? dmr->iova + doff : 0, dmr ? dmr->key : 0, 0x01020304);
	ring_sq(c->d[0], &c->qp[0]);
}

static int drop_nth;	/* the frame (side 0 -> 1) to lose, or -1 */

static enum wire_action drop_filter(struct wire *w, unsigned int dir, unsigned int idx,
				    uint8_t *frame, size_t *len)
{
	(void)w;
	(void)frame;
	(void)len;
	return dir == 0 && (int)idx == drop_nth ? W_DROP : W_DELIVER;
}

/* Wire: UC opcodes, no AckReq, no frame back; data and CQEs on both sides. */
static void t_uc_data(void)
{
	struct conn c;
	struct rmr s = { 0 }, d = { 0 };
	struct wc wc[4];
	struct pkt p;
	unsigned int i, n;
	int seen[0x40] = { 0 };

	RQ(uc_conn(&c));
	RQ(mr_create(c.d[0], &s, c.d[0]->pdn, 16384, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	RQ(mr_create(c.d[1], &d, c.d[1]->pdn, 16384,
		     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0) == 0);
	mr_fill(c.d[0], &s, 7);
	mr_fill(c.d[1], &d, 9);
	wire_clear_log(&c.w);

	/* SEND of three packets into a receive WQE at offset 8192 */
	{
		struct sge r = mr_sge(&d, 8192, 4096);

		post_recv(c.d[1], &c.qp[1], 0xa1, &r, 1);
		ring_rq(c.d[1], &c.qp[1]);
	}
	uc_post(&c, TERN_WQE_SEND, &s, 100, UC_MSG, NULL, 0, 0x51);
	RQ(conn_poll(&c, 0, wc, 1, 1000000) == 1);
	CHECK_WC(&wc[0], TERN_WQE_SEND, TERN_CQE_OK, 0x51);
	RQ(conn_poll(&c, 1, wc, 1, 1000000) == 1);
	CHECK_WC(&wc[0], TERN_CQE_RECV, TERN_CQE_OK, 0xa1);
	CHECK_EQ(wc[0].byte_len, UC_MSG);
	CHECK_EQ(mr_diff_pattern(c.d[1], &d, 8192, UC_MSG, 7, 100), -1);

	/* WRITE (no CQE at the responder), then WRITE with immediate */
	uc_post(&c, TERN_WQE_RDMA_WRITE, &s, 0, UC_MSG, &d, 0, 0x52);
	RQ(conn_poll(&c, 0, wc, 1, 1000000) == 1);
	CHECK_WC(&wc[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 0x52);
	wire_advance(&c.w, 100000);
	CHECK_EQ(mr_diff_pattern(c.d[1], &d, 0, UC_MSG, 7, 0), -1);
	CHECK(!cq_peek(c.d[1], &c.cq[1]));
	{
		struct sge r = mr_sge(&d, 12288, 16);

		post_recv(c.d[1], &c.qp[1], 0xa2, &r, 1);
		ring_rq(c.d[1], &c.qp[1]);
	}
	uc_post(&c, TERN_WQE_RDMA_WRITE_IMM, &s, 5000, 2048, &d, 4096, 0x53);
	RQ(conn_poll(&c, 1, wc, 1, 1000000) == 1);
	CHECK_WC(&wc[0], TERN_CQE_RECV_RDMA_WRITE_IMM, TERN_CQE_OK, 0xa2);
	CHECK_EQ(wc[0].byte_len, 2048);
	CHECK(wc[0].flags & TERN_CQE_F_IMM);
	CHECK_EQ(mr_diff_pattern(c.d[1], &d, 4096, 2048, 7, 5000), -1);
	RQ(conn_poll(&c, 0, wc, 1, 1000000) == 1);
	CHECK_WC(&wc[0], TERN_WQE_RDMA_WRITE_IMM, TERN_CQE_OK, 0x53);

	/* what went over the wire: 3 + 3 + 2 UC packets one way, nothing back */
	n = 0;
	for (i = 0; i < c.w.nlog; i++) {
		struct wire_rec *r = &c.w.log[i];

		RQ(pkt_parse(r->data, r->len, &p));
		CHECK_EQ(r->dir, 0);
		CHECK(!p.ackreq);
		CHECK_EQ(p.opcode & 0xe0, 0x20);
		seen[p.opcode & 0x3f]++;
		n++;
	}
	CHECK_EQ(n, 8);
	CHECK_EQ(seen[0x20 | OP_SEND_FIRST], 1);
	CHECK_EQ(seen[0x20 | OP_SEND_MIDDLE], 1);
	CHECK_EQ(seen[0x20 | OP_SEND_LAST], 1);
	CHECK_EQ(seen[0x20 | OP_WRITE_FIRST], 2);
	CHECK_EQ(seen[0x20 | OP_WRITE_MIDDLE], 1);
	CHECK_EQ(seen[0x20 | OP_WRITE_LAST], 1);
	CHECK_EQ(seen[0x20 | OP_WRITE_LAST_IMM], 1);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_RTS);
out:
	mr_release(&s);
	mr_release(&d);
	conn_free(&c);
}

/* A message of more packets than the RC window (TERNM_MAX_UNACKED, 256): 1 MiB at MTU 1024. */
static void t_uc_long(void)
{
	const uint32_t len = 1u << 20;
	struct conn c;
	struct rmr s = { 0 }, d = { 0 };
	struct wc wc[2];
	struct sge r;

	RQ(uc_conn(&c));
	RQ(mr_create(c.d[0], &s, c.d[0]->pdn, len, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	RQ(mr_create(c.d[1], &d, c.d[1]->pdn, len,
		     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0) == 0);
	mr_fill(c.d[0], &s, 11);
	mr_fill(c.d[1], &d, 12);
	uc_post(&c, TERN_WQE_RDMA_WRITE, &s, 0, len, &d, 0, 0xd1);
	RQ(conn_poll(&c, 0, wc, 1, 100000000) == 1);
	CHECK_WC(&wc[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 0xd1);
	wire_advance(&c.w, 1000000);
	CHECK_EQ(mr_diff_pattern(c.d[1], &d, 0, len, 11, 0), -1);
	r = mr_sge(&d, 0, len);
	post_recv(c.d[1], &c.qp[1], 0xd2, &r, 1);
	ring_rq(c.d[1], &c.qp[1]);
	mr_fill(c.d[0], &s, 13);
	uc_post(&c, TERN_WQE_SEND, &s, 0, len, NULL, 0, 0xd3);
	RQ(conn_poll(&c, 1, wc, 1, 100000000) == 1);
	CHECK_WC(&wc[0], TERN_CQE_RECV, TERN_CQE_OK, 0xd2);
	CHECK_EQ(wc[0].byte_len, len);
	CHECK_EQ(mr_diff_pattern(c.d[1], &d, 0, len, 13, 0), -1);
	CHECK_EQ(c.w.sent[1], 0);
out:
	mr_release(&s);
	mr_release(&d);
	conn_free(&c);
}

/*
 * A lost middle packet loses its SEND (the requester completes it anyway: nothing is
 * resent); the next SEND lands in the same receive WQE. A lost FIRST of a WRITE: the rest
 * is dropped, the next WRITE is placed.
 */
static void t_uc_loss(void)
{
	struct conn c;
	struct rmr s = { 0 }, d = { 0 };
	struct wc wc[4];
	struct sge r;
	uint64_t oos, seqerr;

	RQ(uc_conn(&c));
	RQ(mr_create(c.d[0], &s, c.d[0]->pdn, 16384, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	RQ(mr_create(c.d[1], &d, c.d[1]->pdn, 16384,
		     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0) == 0);
	mr_fill(c.d[0], &s, 3);
	mr_fill(c.d[1], &d, 4);
	oos = RDEV_STAT(c.d[1], out_of_sequence);
	seqerr = RDEV_STAT(c.d[1], rx_opcode_seq_err);
	r = mr_sge(&d, 0, 4096);
	post_recv(c.d[1], &c.qp[1], 0xb1, &r, 1);
	ring_rq(c.d[1], &c.qp[1]);

	drop_nth = 1;		/* the SEND_MIDDLE */
	c.w.filter = drop_filter;
	uc_post(&c, TERN_WQE_SEND, &s, 0, UC_MSG, NULL, 0, 0x61);
	RQ(conn_poll(&c, 0, wc, 1, 1000000) == 1);
	CHECK_WC(&wc[0], TERN_WQE_SEND, TERN_CQE_OK, 0x61);
	wire_advance(&c.w, 200000000);	/* 200 ms: no retransmission, no receive CQE */
	CHECK(!cq_peek(c.d[1], &c.cq[1]));
	CHECK_EQ(c.w.sent[0], 3);
	CHECK_EQ(c.w.sent[1], 0);
	CHECK_EQ(RDEV_STAT(c.d[1], out_of_sequence), oos + 1);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_opcode_seq_err), seqerr);

	uc_post(&c, TERN_WQE_SEND, &s, 4096, 2000, NULL, 0, 0x62);
	RQ(conn_poll(&c, 1, wc, 1, 1000000) == 1);
	CHECK_WC(&wc[0], TERN_CQE_RECV, TERN_CQE_OK, 0xb1);
	CHECK_EQ(wc[0].byte_len, 2000);
	CHECK_EQ(mr_diff_pattern(c.d[1], &d, 0, 2000, 3, 4096), -1);
	RQ(conn_poll(&c, 0, wc, 1, 1000000) == 1);
	CHECK_WC(&wc[0], TERN_WQE_SEND, TERN_CQE_OK, 0x62);

	/* WRITE whose FIRST is lost: its MIDDLE and LAST are dropped, nothing placed */
	drop_nth = 5;		/* frames so far: 3 + 2; this WRITE's FIRST is frame 5 */
	mr_fill(c.d[1], &d, 4);
	uc_post(&c, TERN_WQE_RDMA_WRITE, &s, 0, UC_MSG, &d, 8192, 0x63);
	RQ(conn_poll(&c, 0, wc, 1, 1000000) == 1);
	CHECK_WC(&wc[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 0x63);
	wire_advance(&c.w, 1000000);
	CHECK_EQ(mr_diff_pattern(c.d[1], &d, 0, 16384, 4, 0), -1);
	uc_post(&c, TERN_WQE_RDMA_WRITE, &s, 100, UC_MSG, &d, 8192, 0x64);
	RQ(conn_poll(&c, 0, wc, 1, 1000000) == 1);
	wire_advance(&c.w, 1000000);
	CHECK_EQ(mr_diff_pattern(c.d[1], &d, 8192, UC_MSG, 3, 100), -1);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_RTS);
out:
	c.w.filter = NULL;
	mr_release(&s);
	mr_release(&d);
	conn_free(&c);
}

/*
 * Dropped whole, counted, both QPs stay in RTS and the receive WQE waits for the next
 * message: a SEND with no receive WQE, one longer than its receive WQE, a WRITE with a bad
 * rkey and one beyond its MR.
 */
static void t_uc_drops(void)
{
	struct conn c;
	struct rmr s = { 0 }, d = { 0 };
	struct wc wc[4];
	struct sge r;
	uint64_t oob, len, acc;

	RQ(uc_conn(&c));
	RQ(mr_create(c.d[0], &s, c.d[0]->pdn, 16384, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	RQ(mr_create(c.d[1], &d, c.d[1]->pdn, 16384,
		     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0) == 0);
	mr_fill(c.d[0], &s, 5);
	mr_fill(c.d[1], &d, 6);
	oob = RDEV_STAT(c.d[1], out_of_buffer);
	len = RDEV_STAT(c.d[1], resp_local_length_error);
	acc = RDEV_STAT(c.d[1], resp_remote_access_errors);

	uc_post(&c, TERN_WQE_SEND, &s, 0, UC_MSG, NULL, 0, 0x71);	/* no receive WQE */
	RQ(conn_poll(&c, 0, wc, 1, 1000000) == 1);
	CHECK_WC(&wc[0], TERN_WQE_SEND, TERN_CQE_OK, 0x71);
	wire_advance(&c.w, 1000000);
	CHECK_EQ(RDEV_STAT(c.d[1], out_of_buffer), oob + 1);
	CHECK_EQ(c.w.sent[1], 0);		/* no RNR NAK */

	r = mr_sge(&d, 0, 2048);
	post_recv(c.d[1], &c.qp[1], 0xc1, &r, 1);
	ring_rq(c.d[1], &c.qp[1]);
	uc_post(&c, TERN_WQE_SEND, &s, 0, UC_MSG, NULL, 0, 0x72);	/* 3000 > 2048 */
	RQ(conn_poll(&c, 0, wc, 1, 1000000) == 1);
	wire_advance(&c.w, 1000000);
	CHECK(!cq_peek(c.d[1], &c.cq[1]));
	CHECK_EQ(RDEV_STAT(c.d[1], resp_local_length_error), len + 1);

	uc_post(&c, TERN_WQE_RDMA_WRITE, &s, 0, 1000, &d, 0, 0x73);
	/* a wrong rkey: the same MR with its key byte changed */
	{
		struct rmr bad = d;

		bad.key ^= 0x5a;
		uc_post(&c, TERN_WQE_RDMA_WRITE, &s, 0, 1000, &bad, 0, 0x74);
	}
	uc_post(&c, TERN_WQE_RDMA_WRITE, &s, 0, 2000, &d, 16384 - 1000, 0x75); /* beyond */
	RQ(conn_poll(&c, 0, wc, 3, 1000000) == 3);
	CHECK_WC(&wc[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 0x73);
	CHECK_WC(&wc[1], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 0x74);
	CHECK_WC(&wc[2], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 0x75);
	wire_advance(&c.w, 1000000);
	CHECK_EQ(RDEV_STAT(c.d[1], resp_remote_access_errors), acc + 2);
	CHECK_EQ(mr_diff_pattern(c.d[1], &d, 16384 - 1000, 1000, 6, 16384 - 1000), -1);

	/* the receive WQE is still there, the QPs still work */
	uc_post(&c, TERN_WQE_SEND, &s, 300, 1500, NULL, 0, 0x76);
	RQ(conn_poll(&c, 1, wc, 1, 1000000) == 1);
	CHECK_WC(&wc[0], TERN_CQE_RECV, TERN_CQE_OK, 0xc1);
	CHECK_EQ(wc[0].byte_len, 1500);
	CHECK_EQ(mr_diff_pattern(c.d[1], &d, 0, 1500, 5, 300), -1);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_RTS);
	CHECK_EQ(c.w.sent[1], 0);
out:
	mr_release(&s);
	mr_release(&d);
	conn_free(&c);
}

/* READ and atomics are not UC operations: LOC_QP_OP_ERR, the QP goes to ERR, nothing sent. */
static void t_uc_no_read(void)
{
	static const uint8_t ops[] = { TERN_WQE_RDMA_READ, TERN_WQE_ATOMIC_FETCH_ADD };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct conn c;
		struct rmr s = { 0 };
		struct wc wc[2];

		RQ(uc_conn(&c));
		RQ(mr_create(c.d[0], &s, c.d[0]->pdn, 4096, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
		uc_post(&c, ops[i], &s, 0, 8, &s, 0, 0x81);
		RQ(conn_poll(&c, 0, wc, 1, 1000000) == 1);
		CHECK_WC(&wc[0], ops[i], TERN_CQE_LOC_QP_OP_ERR, 0x81);
		CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
		CHECK_EQ(c.w.sent[0], 0);
out:
		mr_release(&s);
		conn_free(&c);
	}
}

/*
 * MODIFY_QP on UC: RTR needs path, MTU, dest QPN and RQ PSN; RTS needs SQ PSN; the RC-only
 * attributes are refused at every step.
 */
static void t_uc_modify(void)
{
	struct rdev *d = rdev_new(0), *peer = rdev_new(1);
	struct rcq cq = { 0 };
	struct rqp qp = { 0 };
	struct connopt o;
	struct qpattr a;
	struct cqe c;
	const uint32_t rtr = TERN_QP_ATTR_STATE | TERN_QP_ATTR_PATH | TERN_QP_ATTR_PATH_MTU |
			     TERN_QP_ATTR_DEST_QPN | TERN_QP_ATTR_RQ_PSN;
	static const uint32_t rc_only[] = {
		TERN_QP_ATTR_TIMEOUT, TERN_QP_ATTR_RETRY_CNT, TERN_QP_ATTR_RNR_RETRY,
		TERN_QP_ATTR_MIN_RNR_TIMER, TERN_QP_ATTR_MAX_RD_ATOMIC,
		TERN_QP_ATTR_MAX_DEST_RD_ATOMIC, TERN_QP_ATTR_QKEY,
	};
	unsigned int i;

	RQ(d && peer);
	connopt_default(&o);
	RQ(cq_create(d, &cq, 6, false) == 0);
	RQ(qp_create_type(d, &qp, TERN_QPT_UC, d->pdn, &cq, &cq, 4, 7, 4, 6, 0, false) == 0);
	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_INIT;
	for (i = 0; i < sizeof(rc_only) / sizeof(rc_only[0]); i++)
		CHECK_EQ(qp_modify(d, qp.qpn, TERN_QP_ATTR_STATE | rc_only[i], &a, &c),
			 TERN_CMD_BAD_PARAM);
	CHECK_EQ(qp_modify(d, qp.qpn, TERN_QP_ATTR_STATE, &a, &c), TERN_CMD_OK);
	a.state = TERN_QPS_RTR;
	path_fill(&a, d, peer, &o);
	a.path_mtu = 3;
	a.dest_qpn = 5;
	/* a required attribute left out: refused for the mask (rq_psn 0 is a value too) */
	CHECK_EQ(qp_modify(d, qp.qpn, rtr & ~TERN_QP_ATTR_RQ_PSN, &a, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, MASK_OFF);
	a.dest_qpn = 0;
	CHECK_EQ(qp_modify(d, qp.qpn, rtr & ~TERN_QP_ATTR_DEST_QPN, &a, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, MASK_OFF);
	a.dest_qpn = 5;
	a.rq_psn = 0x10;
	for (i = 0; i < sizeof(rc_only) / sizeof(rc_only[0]); i++) {
		CHECK_EQ(qp_modify(d, qp.qpn, rtr | rc_only[i], &a, &c), TERN_CMD_BAD_PARAM);
		CHECK_EQ(c.syndrome, MASK_OFF);
	}
	CHECK_EQ(qp_modify(d, qp.qpn, rtr | TERN_QP_ATTR_ACCESS, &a, &c), TERN_CMD_OK);
	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_RTS;
	CHECK_EQ(qp_modify(d, qp.qpn, TERN_QP_ATTR_STATE, &a, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, MASK_OFF);
	a.sq_psn = 0x20;
	a.timeout = 14;
	CHECK_EQ(qp_modify(d, qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_SQ_PSN |
			   TERN_QP_ATTR_TIMEOUT, &a, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, MASK_OFF);
	a.timeout = 0;
	CHECK_EQ(qp_modify(d, qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_SQ_PSN, &a, &c),
		 TERN_CMD_OK);
	CHECK_EQ(qp_state(d, qp.qpn), TERN_QPS_RTS);
	CHECK_EQ(qp_destroy(d, &qp), TERN_CMD_OK);
out:
	qmem_free(&cq.mem);
	rdev_free(d);
	rdev_free(peer);
}

/* A UC opcode reaches only a UC QP and an RC opcode only an RC QP: else discarded. */
static int edit_to;		/* new top bits for side 0's data frames, -1: none */

static enum wire_action retype_filter(struct wire *w, unsigned int dir, unsigned int idx,
				      uint8_t *frame, size_t *len)
{
	struct pkt p;
	uint8_t *bth;

	(void)w;
	(void)idx;
	if (dir != 0 || edit_to < 0 || !pkt_parse(frame, *len, &p))
		return W_DELIVER;
	bth = frame + (p.vlan ? 18 : 14) + (p.ipver == 4 ? 20 : 40) + 8;
	bth[0] = (uint8_t)((bth[0] & 0x1f) | edit_to);
	pkt_fix_icrc(frame, *len);
	return W_DELIVER;
}

static void t_uc_opcode_type(void)
{
	unsigned int uc;

	for (uc = 0; uc < 2; uc++) {
		struct conn c;
		struct connopt o;
		struct rmr s = { 0 }, d = { 0 };
		struct wc wc[2];
		uint64_t disc;

		connopt_default(&o);
		o.uc = uc;
		RQ(conn_setup(&c, &o));
		RQ(mr_create(c.d[0], &s, c.d[0]->pdn, 4096, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
		RQ(mr_create(c.d[1], &d, c.d[1]->pdn, 4096,
			     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0) == 0);
		mr_fill(c.d[1], &d, 1);
		disc = RDEV_STAT(c.d[1], rx_roce_discards);
		edit_to = uc ? 0x00 : 0x20;	/* the other type's opcode */
		c.w.filter = retype_filter;
		uc_post(&c, TERN_WQE_RDMA_WRITE, &s, 0, 100, &d, 0, 0x91);
		if (uc)
			RQ(conn_poll(&c, 0, wc, 1, 1000000) == 1);
		else
			wire_advance(&c.w, 1000000);
		wire_advance(&c.w, 1000000);
		CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_discards), disc + 1);
		CHECK_EQ(mr_diff_pattern(c.d[1], &d, 0, 4096, 1, 0), -1);
out:
		edit_to = -1;
		c.w.filter = NULL;
		mr_release(&s);
		mr_release(&d);
		conn_free(&c);
	}
}

const struct test rdma_uc_tests[] = {
	{ "rdma uc: SEND/WRITE/WRITE_IMM of 3 packets, UC opcodes, no AckReq, nothing back",
	  t_uc_data },
	{ "rdma uc: 1 MiB WRITE and SEND: more packets than the RC window", t_uc_long },
	{ "rdma uc: a lost packet loses its message only, no resend, next one delivered",
	  t_uc_loss },
	{ "rdma uc: no receive WQE, too long, bad rkey, beyond MR: dropped, counted, QPs go on",
	  t_uc_drops },
	{ "rdma uc: READ and atomic WQEs fail LOC_QP_OP_ERR, nothing sent", t_uc_no_read },
	{ "rdma uc: MODIFY_QP takes UC's attributes only", t_uc_modify },
	{ "rdma uc: UC opcodes reach UC QPs only, RC opcodes RC QPs only", t_uc_opcode_type },
	{ NULL, NULL },
};
