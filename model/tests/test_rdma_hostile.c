/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A guest that rewrites its own SQ ring under the device: the WQE of a message already
 * started is read again when it is resent (go-back-N after a timeout) or when its READ
 * responses arrive. What the device recorded when it started the WQE (packets, length) must
 * not meet a different length, inline flag or opcode read later: such a WQE fails with
 * LOC_QP_OP_ERR / TERN_SYND_WQE_CHANGED and the QP goes to ERR, and nothing overruns a
 * buffer (the sanitizers of the test build watch the model). A rewrite with the same bytes
 * is no change.
 */
#include <stdlib.h>

#include "test_rdma.h"

static const uint32_t ALL_ACC = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
				TERN_ACCESS_REMOTE_READ;

/* What the wire filter does to side 0's requests, and the WQE it writes over slot @slot. */
struct hostile {
	struct conn *c;
	bool drop;		/* drop side 0's frames from PSN drop_from on ... */
	uint32_t drop_from;
	int trig_op;		/* ... up to the first with this BTH opcode (-1: PSN trigger) */
	uint32_t trigger;
	bool done;		/* the rewrite happened: every frame passes from then on */
	unsigned int dropped;
	/* the new WQE */
	unsigned int slot;
	uint8_t op;
	uint64_t id;
	struct sge sg;		/* sg.len 0 with @inl: inline */
	const void *inl;
	uint32_t inl_len;
	uint64_t raddr;
	uint32_t rkey;
};

/* Write h's WQE over its slot of side 0's SQ, as the guest's library would post it. */
static void hostile_rewrite(struct hostile *h)
{
	struct rqp *qp = &h->c->qp[0];
	uint16_t pi = qp->sq_pi;

	qp->sq_pi = (uint16_t)h->slot;
	if (h->inl)
		post_send_inline(h->c->d[0], qp, h->op, TERN_WQE_F_SIGNALED, h->id, h->inl,
				 h->inl_len, h->raddr, h->rkey, 0);
	else
		post_send(h->c->d[0], qp, h->op, TERN_WQE_F_SIGNALED, h->id, &h->sg, 1, h->raddr,
			  h->rkey, 0);
	qp->sq_pi = pi;
}

static enum wire_action hostile_filter(struct wire *w, unsigned int dir, unsigned int idx,
				       uint8_t *frame, size_t *len)
{
	struct hostile *h = w->ctx;
	struct pkt p;
	bool hit;

	(void)idx;
	if (dir != 0 || h->done || !pkt_parse(frame, *len, &p))
		return W_DELIVER;
	hit = h->trig_op >= 0 ? p.opcode == h->trig_op : p.psn == h->trigger;
	if (hit) {
		hostile_rewrite(h);
		h->done = true;
	}
	if (!h->drop || p.psn < h->drop_from)
		return W_DELIVER;
	h->dropped++;
	return W_DROP;
}

/* ---- SEND and WRITE resent after a timeout ---------------------------------------------------- */

enum scase {
	S_SEND_GROWS,		/* a 64-byte SEND becomes a 200,000-byte SGE */
	S_WRITE_GROWS,		/* the same with a WRITE */
	S_SEND_SAME,		/* the 64-byte SEND written again, same bytes */
	S_SEND_TO_INLINE,	/* a 200,000-byte SEND (MTU 4096) becomes 16 bytes inline */
	S_LONG_SEND_SAME,	/* the 200,000-byte SEND written again, same bytes */
	S_NCASES
};

#define BIG_LEN		200000u
#define MR_LEN		(256u << 10)

/*
 * Side 0 posts WQE A (slot 0) and a small WRITE B behind it. The wire loses side 0's frames
 * from A's first PSN (the long SEND: from its 33rd packet, after the first AckReq, so that
 * the resend starts in the middle of A) up to B's; when B's frame goes by, A's slot is
 * rewritten. The retransmit timeout then goes back into A, whose slot the requester's cache
 * no longer holds (B's does): A is read again. With selective repeat (@sr) the tail-loss
 * probe resends B, the responder's SACK shows A's packets missing and the requester resends
 * them alone (rdma_sr.c), reading A again the same way.
 */
static void send_case(enum scase k, bool sr)
{
	static const uint8_t inl[16] = "0123456789abcdef";
	bool big = k == S_SEND_TO_INLINE || k == S_LONG_SEND_SAME;
	bool same = k == S_SEND_SAME || k == S_LONG_SEND_SAME;
	uint8_t op = k == S_WRITE_GROWS ? TERN_WQE_RDMA_WRITE : TERN_WQE_SEND;
	uint32_t alen = big ? BIG_LEN : 64, apkts;
	struct connopt o;
	struct conn c;
	struct rmr src, dst;
	bool mrs = false;
	struct hostile h;
	struct sge sg;
	struct wc w[2];

	connopt_default(&o);
	o.timeout = 8;			/* 1 ms */
	o.xport = sr ? TERN_QP_XPORT_SR : 0;
	if (big)
		o.mtu = 5;		/* 4096 */
	apkts = (alen + (128u << o.mtu) - 1) / (128u << o.mtu);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &src, c.d[0]->pdn, MR_LEN, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	if (mr_create(c.d[1], &dst, c.d[1]->pdn, MR_LEN, ALL_ACC, 0) != 0) {
		mr_release(&src);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &src, 5);
	mr_fill(c.d[1], &dst, 9);
	if (op == TERN_WQE_SEND) {
		sg = mr_sge(&dst, 0, MR_LEN - 8192);
		post_recv(c.d[1], &c.qp[1], 100, &sg, 1);
		ring_rq(c.d[1], &c.qp[1]);
	}
	sg = mr_sge(&src, 0, alen);
	post_send(c.d[0], &c.qp[0], op, TERN_WQE_F_SIGNALED, 1, &sg, 1, dst.iova, dst.key, 0);
	sg = mr_sge(&src, MR_LEN - 4096, 32);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 2, &sg, 1,
		  dst.iova + MR_LEN - 4096, dst.key, 0);

	memset(&h, 0, sizeof(h));
	h.c = &c;
	h.drop = true;
	h.drop_from = o.psn[0] + (big ? 32 : 0);
	h.trig_op = -1;
	h.trigger = o.psn[0] + apkts;		/* B */
	h.slot = 0;
	h.op = op;
	h.id = 1;
	h.raddr = dst.iova;
	h.rkey = dst.key;
	if (same) {
		h.sg = mr_sge(&src, 0, alen);
	} else if (k == S_SEND_TO_INLINE) {
		h.inl = inl;
		h.inl_len = sizeof(inl);
	} else {
		h.sg = mr_sge(&src, 0, BIG_LEN);	/* all inside side 0's own MR */
	}
	c.w.filter = hostile_filter;
	c.w.ctx = &h;
	ring_sq(c.d[0], &c.qp[0]);

	RQ(conn_poll(&c, 0, w, 2, 100000000ull) == 2);
	CHECK(h.done);
	/* what read A again: the timeout (go-back-N), or resends after a SACK, before any */
	if (sr)
		CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
	else
		CHECK(RDEV_STAT(c.d[0], local_ack_timeout_err) > 0);
	if (same) {
		CHECK_WC(&w[0], op, TERN_CQE_OK, 1);
		CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 2);
		CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
		RQ(conn_poll(&c, 1, w, 1, 1000000ull) == 1);
		CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 100);
		CHECK_EQ(w[0].byte_len, alen);
		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, 0, alen, 5, 0), -1);
		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, alen, MR_LEN - 4096 - alen, 9, alen), -1);
		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, MR_LEN - 4096, 32, 5, MR_LEN - 4096), -1);
		CHECK(RDEV_STAT(c.d[0], retrans_pkts) > 0);
		goto out;
	}
	CHECK_WC(&w[0], op, TERN_CQE_LOC_QP_OP_ERR, 1);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_WQE_CHANGED);
	CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_WR_FLUSH_ERR, 2);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
	CHECK(!cq_peek(c.d[0], &c.cq[0]));
	/* the peer: what it placed of A (the long SEND's first 32 packets) is A's, nothing else */
	wire_advance(&c.w, 5000000);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_RTS);
	CHECK(!cq_peek(c.d[1], &c.cq[1]));
	if (big) {
		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, 0, 32 * 4096, 5, 0), -1);
		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, 32 * 4096, MR_LEN - 32 * 4096, 9,
					 32 * 4096), -1);
	} else {
		/* (selective repeat: B's probe got there and waits behind the hole) */
		if (!sr)
			CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_packets), 0);
		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, 0, MR_LEN, 9, 0), -1);
	}
out:
	if (mrs) {
		mr_release(&src);
		mr_release(&dst);
	}
	conn_free(&c);
}

static void t_send_grows(void)
{
	send_case(S_SEND_GROWS, false);
}

static void t_write_grows(void)
{
	send_case(S_WRITE_GROWS, false);
}

static void t_send_to_inline(void)
{
	send_case(S_SEND_TO_INLINE, false);
}

static void t_send_same(void)
{
	send_case(S_SEND_SAME, false);
	send_case(S_LONG_SEND_SAME, false);
}

static void t_sr(void)
{
	enum scase k;

	for (k = 0; k < S_NCASES; k++)
		send_case(k, true);
}

/* ---- READ rewritten before its responses arrive ------------------------------------------------ */

enum rcase {
	R_SHORTER,		/* 8 KiB -> 16 bytes */
	R_TO_WRITE,		/* READ -> WRITE, its SGE into an MR without LOCAL_WRITE */
	R_SAME,			/* the same bytes */
	R_NCASES
};

/*
 * Side 0 READs 8 KiB (8 responses at MTU 1024) and posts a small WRITE behind it; as the
 * READ request goes on the wire, the READ's slot is rewritten. The first response reads
 * the WQE (the READ's own cache) again.
 */
static void t_read_changed(void)
{
	static const char *const name[R_NCASES] = { "shorter", "to WRITE", "same" };
	struct connopt o;
	struct conn c;
	struct rmr dst, ro, peer;
	bool mrs = false;
	struct hostile h;
	struct sge sg;
	struct wc w[2];
	unsigned int k;
	int fails;

	for (k = 0; k < R_NCASES; k++) {
		fails = t_failures;
		mrs = false;
		connopt_default(&o);
		RQ(conn_setup(&c, &o));
		RQ(mr_create(c.d[0], &dst, c.d[0]->pdn, 16384, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
		RQ(mr_create(c.d[0], &ro, c.d[0]->pdn, 16384, 0, 0) == 0);
		RQ(mr_create(c.d[1], &peer, c.d[1]->pdn, 16384, ALL_ACC, 0) == 0);
		mrs = true;
		mr_fill(c.d[0], &dst, 5);
		mr_fill(c.d[0], &ro, 6);
		mr_fill(c.d[1], &peer, 9);
		sg = mr_sge(&dst, 0, 8192);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 1, &sg, 1,
			  peer.iova, peer.key, 0);
		sg = mr_sge(&dst, 12288, 32);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 2, &sg, 1,
			  peer.iova + 12288, peer.key, 0);

		memset(&h, 0, sizeof(h));
		h.c = &c;
		h.trig_op = OP_READ_REQ;
		h.slot = 0;
		h.op = k == R_TO_WRITE ? TERN_WQE_RDMA_WRITE : TERN_WQE_RDMA_READ;
		h.id = 1;
		h.raddr = peer.iova;
		h.rkey = peer.key;
		h.sg = k == R_SHORTER ? mr_sge(&dst, 0, 16) :
		       k == R_TO_WRITE ? mr_sge(&ro, 0, 8192) : mr_sge(&dst, 0, 8192);
		c.w.filter = hostile_filter;
		c.w.ctx = &h;
		ring_sq(c.d[0], &c.qp[0]);

		RQ(conn_poll(&c, 0, w, 2, 10000000ull) == 2);
		CHECK(h.done);
		/* the MR the rewritten WQE names without LOCAL_WRITE is never written */
		CHECK_EQ(mr_diff_pattern(c.d[0], &ro, 0, 16384, 6, 0), -1);
		if (k == R_SAME) {
			CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_OK, 1);
			CHECK_EQ(w[0].byte_len, 8192);
			CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 2);
			CHECK_EQ(mr_diff_pattern(c.d[0], &dst, 0, 8192, 9, 0), -1);
			CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
		} else {
			CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_LOC_QP_OP_ERR, 1);
			CHECK_EQ(w[0].vendor_err, TERN_SYND_WQE_CHANGED);
			CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_WR_FLUSH_ERR, 2);
			/* no response byte went anywhere */
			CHECK_EQ(mr_diff_pattern(c.d[0], &dst, 0, 16384, 5, 0), -1);
			CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
		}
		CHECK(!cq_peek(c.d[0], &c.cq[0]));
		if (t_failures != fails)
			printf("#   case: %s\n", name[k]);
		mr_release(&dst);
		mr_release(&ro);
		mr_release(&peer);
		mrs = false;
		conn_free(&c);
	}
	return;
out:
	if (mrs) {
		mr_release(&dst);
		mr_release(&ro);
		mr_release(&peer);
	}
	conn_free(&c);
}

/* ---- a later WQE rewritten while an earlier one is outstanding ------------------------------- */

/* hostile_filter, and side 1's first @hold_acks frames after the rewrite are lost too. */
struct hold {
	struct hostile h;
	unsigned int hold_acks;
};

static enum wire_action hold_filter(struct wire *w, unsigned int dir, unsigned int idx,
				    uint8_t *frame, size_t *len)
{
	struct hold *k = w->ctx;

	if (dir == 1 && k->h.done && k->hold_acks) {
		k->hold_acks--;
		return W_DROP;
	}
	w->ctx = &k->h;
	dir = hostile_filter(w, dir, idx, frame, len);
	w->ctx = k;
	return dir;
}

/*
 * Side 0 posts a SEND A and a small WRITE B; both are lost and B's slot is rewritten (longer)
 * as B goes by. The timeout goes back to A, which is resent; B, read again, changed, but is
 * not at sq_ci: the requester stops there until A is acknowledged, then fails B. The first
 * ACKs are lost too, so the requester waits through more timeouts: it must wait idle, not
 * have the scheduler run it (or kick the engine) again and again without progress.
 */
static void later_case(bool sr)
{
	struct connopt o;
	struct conn c;
	struct rmr src, dst;
	bool mrs = false;
	struct hold k;
	struct hostile *h = &k.h;
	struct sge sg;
	struct wc w[2];
	unsigned long kicks;

	connopt_default(&o);
	o.timeout = 8;			/* 1 ms */
	o.xport = sr ? TERN_QP_XPORT_SR : 0;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &src, c.d[0]->pdn, MR_LEN, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	if (mr_create(c.d[1], &dst, c.d[1]->pdn, MR_LEN, ALL_ACC, 0) != 0) {
		mr_release(&src);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &src, 5);
	mr_fill(c.d[1], &dst, 9);
	sg = mr_sge(&dst, 0, 4096);
	post_recv(c.d[1], &c.qp[1], 100, &sg, 1);
	ring_rq(c.d[1], &c.qp[1]);
	sg = mr_sge(&src, 0, 64);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1, 0, 0, 0);
	sg = mr_sge(&src, MR_LEN - 4096, 32);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 2, &sg, 1,
		  dst.iova + MR_LEN - 4096, dst.key, 0);

	memset(&k, 0, sizeof(k));
	k.hold_acks = 2;
	h->c = &c;
	h->drop = true;
	h->drop_from = o.psn[0];
	h->trig_op = -1;
	h->trigger = o.psn[0] + 1;		/* B */
	h->slot = 1;
	h->op = TERN_WQE_RDMA_WRITE;
	h->id = 2;
	h->raddr = dst.iova;
	h->rkey = dst.key;
	h->sg = mr_sge(&src, 0, BIG_LEN);
	c.w.filter = hold_filter;
	c.w.ctx = &k;
	kicks = c.d[0]->f.total_kicks;
	ring_sq(c.d[0], &c.qp[0]);

	RQ(conn_poll(&c, 0, w, 2, 100000000ull) == 2);
	CHECK(h->done);
	CHECK_EQ(k.hold_acks, 0);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_OK, 1);
	if (sr) {
		/* the tail-loss probe resent B from the cache, as first read: B as posted */
		CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 2);
		CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, MR_LEN - 4096, 32, 5, MR_LEN - 4096), -1);
		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, 64, MR_LEN - 4096 - 64, 9, 64), -1);
	} else {
		CHECK(RDEV_STAT(c.d[0], local_ack_timeout_err) >= 3);
		CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_LOC_QP_OP_ERR, 2);
		CHECK_EQ(w[1].vendor_err, TERN_SYND_WQE_CHANGED);
		CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, 64, MR_LEN - 64, 9, 64), -1);
	}
	/* a handful per timeout, ACK and CQE; a spinning QP makes it thousands */
	kicks = c.d[0]->f.total_kicks - kicks;
	printf("#   side 0%s: %lu kicks\n", sr ? " (selective repeat)" : "", kicks);
	CHECK(kicks < 64);
out:
	if (mrs) {
		mr_release(&src);
		mr_release(&dst);
	}
	conn_free(&c);
}

static void t_later_changed(void)
{
	later_case(false);
	later_case(true);
}

/* ---- the SQ producer index moved back behind what the device started ------------------------- */

/*
 * Side 0 (4-slot SQ) has four WRITEs in its ring but rings only two; they go out (not yet
 * acknowledged), then the doorbell says PI 1: behind the WQEs the device started. Such a
 * doorbell is ignored like one beyond the depth: nothing the guest did not post goes out
 * (the stale slots 2 and 3, and the ring round again over slots 0 and 1 whose WQEs are
 * still outstanding), and the two WQEs complete. Ringing PI 4 then sends the rest.
 */
static void t_sq_pi_back(void)
{
	struct connopt o;
	struct conn c;
	struct rmr src, dst;
	bool mrs = false;
	struct sge sg;
	struct wc w[4];
	unsigned int i;

	connopt_default(&o);
	o.sq_log = 2;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &src, c.d[0]->pdn, 16384, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	if (mr_create(c.d[1], &dst, c.d[1]->pdn, 16384, ALL_ACC, 0) != 0) {
		mr_release(&src);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &src, 5);
	mr_fill(c.d[1], &dst, 9);
	for (i = 0; i < 4; i++) {
		sg = mr_sge(&src, i * 4096, 32);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, i + 1, &sg,
			  1, dst.iova + i * 4096, dst.key, 0);
	}
	c.qp[0].sq_pi = 2;
	ring_sq(c.d[0], &c.qp[0]);
	fk_run(&c.d[0]->f);			/* WQEs 1 and 2 go out: sq_ci 0, two started */
	c.qp[0].sq_pi = 1;
	ring_sq(c.d[0], &c.qp[0]);

	RQ(conn_poll(&c, 0, w, 2, 10000000ull) == 2);
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 2);
	wire_advance(&c.w, 5000000);
	CHECK(!cq_peek(c.d[0], &c.cq[0]));
	CHECK_EQ(wire_count(&c.w, 0, OP_WRITE_ONLY), 2);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
	CHECK_EQ(mr_diff_pattern(c.d[1], &dst, 8192, 8192, 9, 8192), -1);

	c.qp[0].sq_pi = 4;
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 2, 10000000ull) == 2);
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 3);
	CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 4);
	CHECK_EQ(wire_count(&c.w, 0, OP_WRITE_ONLY), 4);
	for (i = 0; i < 4; i++)
		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, i * 4096, 32, 5, i * 4096), -1);
out:
	if (mrs) {
		mr_release(&src);
		mr_release(&dst);
	}
	conn_free(&c);
}

const struct test rdma_hostile_tests[] = {
	{ "rdma hostile: SEND rewritten longer before its resend: WQE_CHANGED, no overflow",
	  t_send_grows },
	{ "rdma hostile: WRITE rewritten longer before its resend: WQE_CHANGED", t_write_grows },
	{ "rdma hostile: long SEND rewritten to short inline mid-resend: WQE_CHANGED, no overread",
	  t_send_to_inline },
	{ "rdma hostile: READ rewritten (length, opcode) before its responses: WQE_CHANGED",
	  t_read_changed },
	{ "rdma hostile: WQEs rewritten with the same bytes still complete", t_send_same },
	{ "rdma hostile: selective repeat: the same rewrites before SACK-driven resends", t_sr },
	{ "rdma hostile: later WQE changed behind an outstanding one: waits idle, then fails",
	  t_later_changed },
	{ "rdma hostile: SQ doorbell PI behind the started WQEs: ignored, nothing unposted sent",
	  t_sq_pi_back },
	{ NULL, NULL },
};
