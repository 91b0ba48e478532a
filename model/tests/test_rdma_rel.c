/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* RC reliability over a lossy wire: loss, duplicates, reordering, timeouts, RNR. */
#include <stdlib.h>

#include "test_rdma.h"

/* Acts on frames of one direction: the @nth (counted from 0) with BTH opcode @op (-1 any). */
struct fctx {
	int dir;
	int op;
	unsigned int nth;
	bool every;		/* every matching frame, not only the nth */
	enum wire_action act;
	unsigned int seen;
	unsigned int hits;
};

static enum wire_action fctx_filter(struct wire *w, unsigned int dir, unsigned int idx,
				    uint8_t *frame, size_t *len)
{
	struct fctx *x = w->ctx;
	struct pkt p;

	(void)idx;
	if (x->dir >= 0 && (unsigned int)x->dir != dir)
		return W_DELIVER;
	if (x->op >= 0 && (!pkt_parse(frame, *len, &p) || p.opcode != x->op))
		return W_DELIVER;
	if (x->every || x->seen++ == x->nth) {
		x->hits++;
		return x->act;
	}
	return W_DELIVER;
}

static void set_filter(struct conn *c, struct fctx *x, int dir, int op, unsigned int nth,
		       bool every, enum wire_action act)
{
	memset(x, 0, sizeof(*x));
	x->dir = dir;
	x->op = op;
	x->nth = nth;
	x->every = every;
	x->act = act;
	c->w.ctx = x;
	c->w.filter = fctx_filter;
}

/* Logged frames of @dir with this opcode and PSN. */
static unsigned int count_psn(const struct wire *w, unsigned int dir, int op, uint32_t psn)
{
	unsigned int i, n = 0;
	struct pkt p;

	for (i = 0; i < w->nlog; i++)
		if (w->log[i].dir == dir && pkt_parse(w->log[i].data, w->log[i].len, &p) &&
		    (op < 0 || p.opcode == op) && p.psn == (psn & 0xffffff))
			n++;
	return n;
}

/* ACK-opcode frames of @dir whose AETH syndrome is @syn (mask @m). */
static unsigned int count_aeth(const struct wire *w, unsigned int dir, uint8_t syn, uint8_t m)
{
	unsigned int i, n = 0;
	struct pkt p;

	for (i = 0; i < w->nlog; i++)
		if (w->log[i].dir == dir && pkt_parse(w->log[i].data, w->log[i].len, &p) &&
		    p.opcode == OP_ACK && (p.syndrome & m) == syn)
			n++;
	return n;
}

/* First / nth log index in @dir with opcode @op and PSN @psn, or -1. */
static int find_frame(const struct wire *w, unsigned int dir, int op, uint32_t psn,
		      unsigned int nth)
{
	unsigned int i;
	struct pkt p;

	for (i = 0; i < w->nlog; i++)
		if (w->log[i].dir == dir && pkt_parse(w->log[i].data, w->log[i].len, &p) &&
		    (op < 0 || p.opcode == op) && p.psn == (psn & 0xffffff) && !nth--)
			return (int)i;
	return -1;
}

struct pair_mrs {
	struct rmr m[2];
	bool ok;
};

static bool mrs_make(struct conn *c, struct pair_mrs *p, uint64_t len)
{
	unsigned int s;
	const uint32_t acc = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
			     TERN_ACCESS_REMOTE_READ;

	p->ok = false;
	for (s = 0; s < 2; s++) {
		if (mr_create(c->d[s], &p->m[s], c->d[s]->pdn, len, acc, 0x40 * (s + 1)) != 0) {
			if (s)
				mr_release(&p->m[0]);
			return false;
		}
		mr_fill(c->d[s], &p->m[s], 20 + s);
	}
	p->ok = true;
	return true;
}

static void mrs_free(struct pair_mrs *p)
{
	if (p->ok) {
		mr_release(&p->m[0]);
		mr_release(&p->m[1]);
	}
	p->ok = false;
}

/* One lost WRITE packet: a single sequence NAK, go-back-N from it, no timeout, data intact. */
static void t_drop_data_packet(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct fctx x;
	struct sge sg;
	struct wc w[2];
	int nak;
	struct pkt pk;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mrs_make(&c, &p, 64 * 1024));
	set_filter(&c, &x, 0, -1, 3, false, W_DROP);
	sg = mr_sge(&p.m[0], 0, 10 * 1024);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  p.m[1].iova + 100, p.m[1].key, 0);
	sg = mr_sge(&p.m[0], 20000, 3000);
	post_recv(c.d[1], &c.qp[1], 7, &(struct sge){ p.m[1].iova + 30000, 4000, p.m[1].key }, 1);
	ring_rq(c.d[1], &c.qp[1]);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 2, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 2, 10000000) == 2);
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	CHECK_WC(&w[1], TERN_WQE_SEND, TERN_CQE_OK, 2);
	RQ(conn_poll(&c, 1, w, 1, 1000000) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 7);
	CHECK_EQ(w[0].byte_len, 3000);
	CHECK_EQ(x.hits, 1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 100, 10 * 1024, 20, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 30000, 3000, 20, 20000), -1);
	/* exactly one sequence NAK, for the lost PSN */
	CHECK_EQ(count_aeth(&c.w, 1, 0x60, 0xff), 1);
	nak = -1;
	{
		unsigned int i;

		for (i = 0; i < c.w.nlog; i++)
			if (c.w.log[i].dir == 1 && pkt_parse(c.w.log[i].data, c.w.log[i].len, &pk) &&
			    pk.opcode == OP_ACK && pk.syndrome == 0x60)
				nak = (int)i;
	}
	RQ(nak >= 0);
	pkt_parse(c.w.log[nak].data, c.w.log[nak].len, &pk);
	CHECK_EQ(pk.psn, (o.psn[0] + 3) & 0xffffff);
	/* go-back-N: the lost PSN and every later one of the WRITE went again */
	CHECK_EQ(count_psn(&c.w, 0, -1, o.psn[0] + 3), 2);
	CHECK_EQ(count_psn(&c.w, 0, -1, o.psn[0] + 9), 2);
	CHECK_EQ(count_psn(&c.w, 0, -1, o.psn[0] + 2), 1);
	CHECK(RDEV_STAT(c.d[1], out_of_sequence) >= 1);
	CHECK_EQ(RDEV_STAT(c.d[0], packet_seq_err), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
out:
	mrs_free(&p);
	conn_free(&c);
}

/* A lost ACK: the requester times out (after at least 4.096 us << timeout) and resends; the
 * responder sees a duplicate, re-ACKs, does not deliver twice. */
static void t_drop_ack(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct fctx x;
	struct sge sg;
	struct wc w[2];
	int a, b;
	uint64_t dt, tmo;

	connopt_default(&o);
	o.timeout = 10;
	tmo = 4096ull << 10;
	RQ(conn_setup(&c, &o));
	RQ(mrs_make(&c, &p, 8192));
	set_filter(&c, &x, 1, OP_ACK, 0, false, W_DROP);
	post_recv(c.d[1], &c.qp[1], 7, &(struct sge){ p.m[1].iova, 4000, p.m[1].key }, 1);
	post_recv(c.d[1], &c.qp[1], 8, &(struct sge){ p.m[1].iova + 4000, 4000, p.m[1].key }, 1);
	ring_rq(c.d[1], &c.qp[1]);
	sg = mr_sge(&p.m[0], 0, 100);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 1, 5 * tmo) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_OK, 1);
	RQ(conn_poll(&c, 1, w, 1, 100000) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 7);
	wire_advance(&c.w, 4 * tmo);
	CHECK(!cq_peek(c.d[1], &c.cq[1]));	/* not delivered twice */
	CHECK(!cq_peek(c.d[0], &c.cq[0]));
	a = find_frame(&c.w, 0, OP_SEND_ONLY, o.psn[0], 0);
	b = find_frame(&c.w, 0, OP_SEND_ONLY, o.psn[0], 1);
	RQ(a >= 0 && b >= 0);
	CHECK_EQ(find_frame(&c.w, 0, OP_SEND_ONLY, o.psn[0], 2), -1);
	dt = c.w.log[b].t - c.w.log[a].t;
	if (dt < tmo || dt > 4 * tmo + 100000) {
		t_failures++;
		printf("#   retransmit after %llu ns; timeout %llu ns\n", (unsigned long long)dt,
		       (unsigned long long)tmo);
	}
	CHECK_EQ(RDEV_STAT(c.d[1], duplicate_request), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 1);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_send_requests), 1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 0, 100, 20, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 100, 8000, 21, 100), -1);
out:
	mrs_free(&p);
	conn_free(&c);
}

/* A lost READ response: the requester asks again for what is missing; data intact. */
static void t_drop_read_resp(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct fctx x;
	struct sge sg;
	struct wc w;
	struct pkt pk;
	int r;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mrs_make(&c, &p, 16384));
	set_filter(&c, &x, 1, OP_READ_RESP_MIDDLE, 0, false, W_DROP);
	sg = mr_sge(&p.m[0], 333, 5 * 1024);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 3, &sg, 1,
		  p.m[1].iova + 1000, p.m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 10000000) == 1);
	CHECK_WC(&w, TERN_WQE_RDMA_READ, TERN_CQE_OK, 3);
	CHECK_EQ(w.byte_len, 5 * 1024);
	CHECK_EQ(x.hits, 1);
	CHECK_EQ(mr_diff_pattern(c.d[0], &p.m[0], 333, 5 * 1024, 21, 1000), -1);
	CHECK_EQ(mr_diff_pattern(c.d[0], &p.m[0], 0, 333, 20, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[0], &p.m[0], 333 + 5 * 1024, 1000, 20, 333 + 5 * 1024), -1);
	/* the READ was asked again from the first missing response on */
	r = find_frame(&c.w, 0, OP_READ_REQ, o.psn[0] + 1, 0);
	RQ(r >= 0);
	pkt_parse(c.w.log[r].data, c.w.log[r].len, &pk);
	CHECK_EQ(pk.va, p.m[1].iova + 1000 + 1024);
	CHECK_EQ(pk.dma_len, 4 * 1024);
	CHECK_EQ(pk.rkey, p.m[1].key);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
	CHECK(RDEV_STAT(c.d[0], implied_nak_seq_err) >= 1);
out:
	mrs_free(&p);
	conn_free(&c);
}

/* Every frame delivered twice, both ways: nothing executes twice, all completes once. */
static void t_duplicate_frames(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct fctx x;
	struct sge sg;
	struct wc w[3];

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mrs_make(&c, &p, 64 * 1024));
	set_filter(&c, &x, -1, -1, 0, true, W_DUP);
	post_recv(c.d[1], &c.qp[1], 7, &(struct sge){ p.m[1].iova + 40000, 4000, p.m[1].key }, 1);
	post_recv(c.d[1], &c.qp[1], 8, &(struct sge){ p.m[1].iova + 44000, 4000, p.m[1].key }, 1);
	ring_rq(c.d[1], &c.qp[1]);
	sg = mr_sge(&p.m[0], 0, 5000);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  p.m[1].iova, p.m[1].key, 0);
	sg = mr_sge(&p.m[0], 10000, 3000);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 2, &sg, 1, 0, 0, 0);
	sg = mr_sge(&p.m[0], 20000, 2500);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 3, &sg, 1,
		  p.m[1].iova + 50000, p.m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 3, 10000000) == 3);
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	CHECK_WC(&w[1], TERN_WQE_SEND, TERN_CQE_OK, 2);
	CHECK_WC(&w[2], TERN_WQE_RDMA_READ, TERN_CQE_OK, 3);
	RQ(conn_poll(&c, 1, w, 1, 100000) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 7);
	wire_advance(&c.w, 1000000);
	CHECK(!cq_peek(c.d[1], &c.cq[1]));	/* the second receive is still posted */
	CHECK(!cq_peek(c.d[0], &c.cq[0]));
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 0, 5000, 20, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 40000, 3000, 20, 10000), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 43000, 5000, 21, 43000), -1);
	CHECK_EQ(mr_diff_pattern(c.d[0], &p.m[0], 20000, 2500, 21, 50000), -1);
	/* 5 + 3 + 1 request packets, each seen once more */
	CHECK_EQ(c.w.sent[0], 9);
	CHECK_EQ(RDEV_STAT(c.d[1], duplicate_request), 9);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_send_requests), 1);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_read_requests), 1);
out:
	mrs_free(&p);
	conn_free(&c);
}

/* Two request packets swapped on the wire. */
static void t_reorder(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct fctx x;
	struct sge sg;
	struct wc w;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mrs_make(&c, &p, 16384));
	set_filter(&c, &x, 0, -1, 1, false, W_HOLD);
	sg = mr_sge(&p.m[0], 7, 6 * 1024);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  p.m[1].iova + 9, p.m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 10000000) == 1);
	CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 9, 6 * 1024, 20, 7), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 0, 9, 21, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 9 + 6 * 1024, 100, 21, 9 + 6 * 1024), -1);
	CHECK(RDEV_STAT(c.d[1], out_of_sequence) >= 1);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
out:
	mrs_free(&p);
	conn_free(&c);
}

/* A 1 MiB WRITE at MTU 4096: 256 packets, far fewer ACKs, AckReq on the last packet. */
static void t_ack_coalescing(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct sge sg;
	struct wc w;
	struct pkt pk;
	unsigned int data, acks, i, last_ackreq = 0;

	connopt_default(&o);
	o.mtu = 5;
	RQ(conn_setup(&c, &o));
	RQ(mrs_make(&c, &p, 1 << 20));
	sg = mr_sge(&p.m[0], 0, 1 << 20);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  p.m[1].iova, p.m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 20000000) == 1);
	CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 0, 1 << 20, 20, 0), -1);
	data = wire_count(&c.w, 0, -1);
	acks = wire_count(&c.w, 1, OP_ACK);
	CHECK_EQ(data, 256);
	CHECK(acks >= 1);
	if (acks * 8 > data) {
		t_failures++;
		printf("#   %u ACKs for %u packets\n", acks, data);
	}
	for (i = 0; i < c.w.nlog; i++)
		if (c.w.log[i].dir == 0 && pkt_parse(c.w.log[i].data, c.w.log[i].len, &pk) &&
		    pk.opcode == OP_WRITE_LAST)
			last_ackreq = pk.ackreq;
	CHECK_EQ(last_ackreq, 1);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
out:
	mrs_free(&p);
	conn_free(&c);
}

/* The wire eats every request: retry_cnt retransmissions, then RETRY_EXC_ERR, ERR, flushes. */
static void t_retry_exceeded(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct fctx x;
	struct sge sg;
	struct wc w[4];
	unsigned int i, slot;
	uint64_t t0, tmo = 4096ull << 8;

	connopt_default(&o);
	o.timeout = 8;
	o.retry_cnt = 3;
	RQ(conn_setup(&c, &o));
	RQ(mrs_make(&c, &p, 8192));
	set_filter(&c, &x, 0, -1, 0, true, W_DROP);
	t0 = wire_now(&c.w);
	for (i = 0; i < 3; i++) {
		sg = mr_sge(&p.m[0], i * 100, 100);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 10 + i, &sg, 1,
			  p.m[1].iova + i * 100, p.m[1].key, 0);
	}
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 3, 40 * tmo) == 3);
	CHECK_EQ(w[0].status, TERN_CQE_RETRY_EXC_ERR);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_RETRY);
	CHECK_EQ(w[0].wr_id, 10);
	CHECK_EQ(w[0].wqe_idx, 0);
	CHECK_EQ(w[0].qpn, c.qp[0].qpn);
	for (i = 1; i < 3; i++) {
		CHECK_EQ(w[i].status, TERN_CQE_WR_FLUSH_ERR);
		CHECK_EQ(w[i].vendor_err, TERN_SYND_FLUSH);
		CHECK_EQ(w[i].wr_id, 10 + i);
		CHECK_EQ(w[i].wqe_idx, i);
	}
	if (wire_now(&c.w) - t0 < 4 * tmo) {
		t_failures++;
		printf("#   gave up after %llu ns, before 4 timeouts of %llu\n",
		       (unsigned long long)(wire_now(&c.w) - t0), (unsigned long long)tmo);
	}
	CHECK_EQ(count_psn(&c.w, 0, -1, o.psn[0]), 1 + 3);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
	CHECK_EQ(RDEV_STAT(c.d[0], req_transport_retries_exceeded), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 4);
	/* later WQEs are flushed, never sent */
	i = c.w.nlog;
	sg = mr_sge(&p.m[0], 0, 10);
	slot = post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 99, &sg, 1, 0, 0,
			 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 1, 10 * tmo) == 1);
	CHECK_EQ(w[0].status, TERN_CQE_WR_FLUSH_ERR);
	CHECK_EQ(w[0].wr_id, 99);
	CHECK_EQ(w[0].wqe_idx, slot);
	CHECK_EQ(c.w.nlog, i);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 0, 8192, 21, 0), -1);
out:
	mrs_free(&p);
	conn_free(&c);
}

/* RNR: SEND with no receive posted; RNR NAK with the responder's min_rnr_timer; the retry
 * waits at least that long; a receive posted meanwhile makes it succeed. */
static void t_rnr_then_success(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct sge sg;
	struct wc w;
	int nak, rtx;
	unsigned int before;
	const uint64_t rnr_ns = 1280000;	/* code 14: 1.28 ms */

	connopt_default(&o);
	o.min_rnr_timer[1] = 14;
	RQ(conn_setup(&c, &o));
	RQ(mrs_make(&c, &p, 8192));
	sg = mr_sge(&p.m[0], 0, 300);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);
	CHECK_EQ(count_aeth(&c.w, 1, 0x20 | 14, 0xff), 1);
	nak = find_frame(&c.w, 1, OP_ACK, o.psn[0], 0);
	RQ(nak >= 0);
	CHECK_EQ(RDEV_STAT(c.d[1], out_of_buffer), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], rnr_nak_retry_err), 1);
	before = c.w.sent[0];
	wire_advance(&c.w, rnr_ns - 80000);
	CHECK_EQ(c.w.sent[0], before);		/* too early for a retry */
	CHECK(!cq_peek(c.d[0], &c.cq[0]));
	post_recv(c.d[1], &c.qp[1], 5, &(struct sge){ p.m[1].iova + 10, 1000, p.m[1].key }, 1);
	ring_rq(c.d[1], &c.qp[1]);
	RQ(conn_poll(&c, 0, &w, 1, 4 * rnr_ns) == 1);
	CHECK_WC(&w, TERN_WQE_SEND, TERN_CQE_OK, 1);
	RQ(conn_poll(&c, 1, &w, 1, 100000) == 1);
	CHECK_WC(&w, TERN_CQE_RECV, TERN_CQE_OK, 5);
	CHECK_EQ(w.byte_len, 300);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 10, 300, 20, 0), -1);
	rtx = find_frame(&c.w, 0, OP_SEND_ONLY, o.psn[0], 1);
	RQ(rtx >= 0);
	if (c.w.log[rtx].t - c.w.log[nak].t < rnr_ns ||
	    c.w.log[rtx].t - c.w.log[nak].t > 2 * rnr_ns + 40000) {
		t_failures++;
		printf("#   RNR retry %llu ns after the NAK, timer %llu\n",
		       (unsigned long long)(c.w.log[rtx].t - c.w.log[nak].t),
		       (unsigned long long)rnr_ns);
	}
	CHECK_EQ(find_frame(&c.w, 0, OP_SEND_ONLY, o.psn[0], 2), -1);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
out:
	mrs_free(&p);
	conn_free(&c);
}

/* rnr_retry 0 and 2: RNR_RETRY_EXC_ERR after 1 and 3 attempts; rnr_retry 7 never gives up. */
static void t_rnr_retry_counts(void)
{
	static const uint8_t tries[] = { 0, 2, 7 };
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct sge sg;
	struct wc w[2];
	unsigned int k;

	for (k = 0; k < 3; k++) {
		connopt_default(&o);
		o.rnr_retry = tries[k];
		o.min_rnr_timer[1] = 1;	/* 10 us */
		RQ(conn_setup(&c, &o));
		RQ(mrs_make(&c, &p, 8192));
		sg = mr_sge(&p.m[0], 0, 50);
		/* one message at a time: a second one would draw sequence NAKs as well */
		post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1, 0, 0, 0);
		ring_sq(c.d[0], &c.qp[0]);
		if (tries[k] < 7) {
			RQ(conn_poll(&c, 0, w, 1, 5000000) == 1);
			CHECK_EQ(w[0].status, TERN_CQE_RNR_RETRY_EXC_ERR);
			CHECK_EQ(w[0].vendor_err, TERN_SYND_RNR_RETRY);
			CHECK_EQ(w[0].wr_id, 1);
			post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 2, &sg, 1, 0,
				  0, 0);
			ring_sq(c.d[0], &c.qp[0]);
			RQ(conn_poll(&c, 0, w + 1, 1, 1000000) == 1);
			CHECK_EQ(w[1].status, TERN_CQE_WR_FLUSH_ERR);
			CHECK_EQ(w[1].wr_id, 2);
			CHECK_EQ(count_psn(&c.w, 0, OP_SEND_ONLY, o.psn[0]), tries[k] + 1u);
			CHECK_EQ(RDEV_STAT(c.d[1], out_of_buffer), tries[k] + 1u);
			CHECK_EQ(RDEV_STAT(c.d[0], rnr_nak_retry_err), tries[k] + 1u);
			CHECK_EQ(RDEV_STAT(c.d[0], req_rnr_retries_exceeded), 1);
			CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
			CHECK(!cq_peek(c.d[1], &c.cq[1]));
		} else {
			wire_advance(&c.w, 2000000);	/* ~100 RNR rounds */
			CHECK(!cq_peek(c.d[0], &c.cq[0]));
			CHECK(count_psn(&c.w, 0, OP_SEND_ONLY, o.psn[0]) > 20);
			post_recv(c.d[1], &c.qp[1], 5, &(struct sge){ p.m[1].iova, 100, p.m[1].key },
				  1);
			post_recv(c.d[1], &c.qp[1], 6, &(struct sge){ p.m[1].iova, 100, p.m[1].key },
				  1);
			ring_rq(c.d[1], &c.qp[1]);
			RQ(conn_poll(&c, 0, w, 1, 2000000) == 1);
			CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_OK, 1);
			post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 2, &sg, 1, 0,
				  0, 0);
			ring_sq(c.d[0], &c.qp[0]);
			RQ(conn_poll(&c, 0, w + 1, 1, 2000000) == 1);
			CHECK_WC(&w[1], TERN_WQE_SEND, TERN_CQE_OK, 2);
			CHECK_EQ(RDEV_STAT(c.d[0], req_rnr_retries_exceeded), 0);
		}
		mrs_free(&p);
		conn_free(&c);
	}
	return;
out:
	mrs_free(&p);
	conn_free(&c);
}

/* The RNR wait follows the IB table of min_rnr_timer codes (milliseconds). */
static void t_rnr_timer_codes(void)
{
	static const struct {
		uint8_t code;
		uint64_t ns;
	} tab[] = { { 1, 10000 }, { 6, 80000 }, { 13, 960000 }, { 18, 5120000 },
		    { 26, 81920000 }, { 0, 655360000 } };
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct sge sg;
	struct wc w;
	unsigned int k;
	int nak, rtx;

	for (k = 0; k < sizeof(tab) / sizeof(tab[0]); k++) {
		uint64_t dt;

		connopt_default(&o);
		o.min_rnr_timer[1] = tab[k].code;
		RQ(conn_setup(&c, &o));
		RQ(mrs_make(&c, &p, 4096));
		sg = mr_sge(&p.m[0], 0, 8);
		post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1, 0, 0, 0);
		ring_sq(c.d[0], &c.qp[0]);
		wire_pump(&c.w);
		CHECK_EQ(count_aeth(&c.w, 1, 0x20 | tab[k].code, 0xff), 1);
		post_recv(c.d[1], &c.qp[1], 5, &(struct sge){ p.m[1].iova, 100, p.m[1].key }, 1);
		ring_rq(c.d[1], &c.qp[1]);
		wire_advance(&c.w, 3 * tab[k].ns);
		RQ(cq_poll(c.d[0], &c.cq[0], &w));
		CHECK_WC(&w, TERN_WQE_SEND, TERN_CQE_OK, 1);
		nak = find_frame(&c.w, 1, OP_ACK, o.psn[0], 0);
		rtx = find_frame(&c.w, 0, OP_SEND_ONLY, o.psn[0], 1);
		RQ(nak >= 0 && rtx >= 0);
		dt = c.w.log[rtx].t - c.w.log[nak].t;
		if (dt < tab[k].ns || dt > 2 * tab[k].ns + 20000) {
			t_failures++;
			printf("#   RNR code %u: retry after %llu ns, table %llu ns\n", tab[k].code,
			       (unsigned long long)dt, (unsigned long long)tab[k].ns);
		}
		mrs_free(&p);
		conn_free(&c);
	}
	return;
out:
	mrs_free(&p);
	conn_free(&c);
}

/* timeout 0 waits forever; retry_cnt 0 gives up after the first timeout. */
static void t_timeout_edges(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct fctx x;
	struct sge sg;
	struct wc w;
	unsigned int pass;

	for (pass = 0; pass < 2; pass++) {
		connopt_default(&o);
		o.timeout = pass ? 6 : 0;
		o.retry_cnt = pass ? 0 : 7;
		RQ(conn_setup(&c, &o));
		RQ(mrs_make(&c, &p, 4096));
		set_filter(&c, &x, 0, -1, 0, true, W_DROP);
		sg = mr_sge(&p.m[0], 0, 8);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
			  p.m[1].iova, p.m[1].key, 0);
		ring_sq(c.d[0], &c.qp[0]);
		if (!pass) {
			wire_advance(&c.w, 10000000000ull);	/* 10 s */
			CHECK(!cq_peek(c.d[0], &c.cq[0]));
			CHECK_EQ(c.w.sent[0], 1);
			CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
			CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
		} else {
			RQ(conn_poll(&c, 0, &w, 1, 100 * (4096ull << 6)) == 1);
			CHECK_EQ(w.status, TERN_CQE_RETRY_EXC_ERR);
			CHECK_EQ(c.w.sent[0], 1);
			CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 1);
		}
		mrs_free(&p);
		conn_free(&c);
	}
	return;
out:
	mrs_free(&p);
	conn_free(&c);
}

/* Loss across the 24-bit PSN wrap: WRITE and READ spanning 0xffffff -> 0, one packet lost in
 * each, one NAK / re-READ, data intact. */
static void t_psn_wrap_loss(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct fctx x;
	struct sge sg;
	struct wc w[2];

	connopt_default(&o);
	o.psn[0] = 0xfffffd;
	RQ(conn_setup(&c, &o));
	RQ(mrs_make(&c, &p, 1 << 16));
	/* WRITE PSNs fffffd..000002 (6 packets); the one with PSN 0 is lost */
	set_filter(&c, &x, 0, -1, 3, false, W_DROP);
	sg = mr_sge(&p.m[0], 0, 6 * 1024);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  p.m[1].iova, p.m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 1, 10000000) == 1);
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	CHECK_EQ(count_aeth(&c.w, 1, 0x60, 0xff), 1);
	CHECK_EQ(count_psn(&c.w, 0, -1, 0), 2);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 0, 6 * 1024, 20, 0), -1);
	/* then a READ (PSNs 3..7) with its 4th response lost, right after the wrap */
	set_filter(&c, &x, 1, OP_READ_RESP_MIDDLE, 1, false, W_DROP);
	sg = mr_sge(&p.m[0], 0x8000, 5 * 1024);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 2, &sg, 1,
		  p.m[1].iova + 0x8000, p.m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 1, 10000000) == 1);
	CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_OK, 2);
	CHECK_EQ(mr_diff_pattern(c.d[0], &p.m[0], 0x8000, 5 * 1024, 21, 0x8000), -1);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
out:
	mrs_free(&p);
	conn_free(&c);
}

/* A READ whose responses straddle the PSN wrap, with a response lost after the wrap. */
static void t_psn_wrap_read(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct fctx x;
	struct sge sg;
	struct wc w;
	int r;
	struct pkt pk;

	connopt_default(&o);
	o.psn[0] = 0xfffffe;
	RQ(conn_setup(&c, &o));
	RQ(mrs_make(&c, &p, 1 << 16));
	/* responses fffffe, ffffff, 0, 1, 2: the one with PSN 1 is lost */
	set_filter(&c, &x, 1, OP_READ_RESP_MIDDLE, 2, false, W_DROP);
	sg = mr_sge(&p.m[0], 100, 5 * 1024);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 2, &sg, 1,
		  p.m[1].iova + 200, p.m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 10000000) == 1);
	CHECK_WC(&w, TERN_WQE_RDMA_READ, TERN_CQE_OK, 2);
	CHECK_EQ(w.byte_len, 5 * 1024);
	CHECK_EQ(x.hits, 1);
	CHECK_EQ(mr_diff_pattern(c.d[0], &p.m[0], 100, 5 * 1024, 21, 200), -1);
	r = find_frame(&c.w, 0, OP_READ_REQ, 1, 0);
	RQ(r >= 0);
	pkt_parse(c.w.log[r].data, c.w.log[r].len, &pk);
	CHECK_EQ(pk.va, p.m[1].iova + 200 + 3 * 1024);
	CHECK_EQ(pk.dma_len, 2 * 1024);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
out:
	mrs_free(&p);
	conn_free(&c);
}

/* The last packet of a 3-packet SEND is lost: the retransmission after the timeout must not
 * restart or duplicate the receive; one CQE with the full length. */
static void t_send_last_lost(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct fctx x;
	struct sge sg;
	struct wc w;

	connopt_default(&o);
	o.timeout = 8;
	RQ(conn_setup(&c, &o));
	RQ(mrs_make(&c, &p, 16384));
	set_filter(&c, &x, 0, OP_SEND_LAST, 0, false, W_DROP);
	post_recv(c.d[1], &c.qp[1], 7, &(struct sge){ p.m[1].iova + 5, 4000, p.m[1].key }, 1);
	post_recv(c.d[1], &c.qp[1], 8, &(struct sge){ p.m[1].iova + 8000, 4000, p.m[1].key }, 1);
	ring_rq(c.d[1], &c.qp[1]);
	sg = mr_sge(&p.m[0], 3, 2500);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 20 * (4096ull << 8)) == 1);
	CHECK_WC(&w, TERN_WQE_SEND, TERN_CQE_OK, 1);
	RQ(conn_poll(&c, 1, &w, 1, 100000) == 1);
	CHECK_WC(&w, TERN_CQE_RECV, TERN_CQE_OK, 7);
	CHECK_EQ(w.byte_len, 2500);
	CHECK(!cq_peek(c.d[1], &c.cq[1]));
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 5, 2500, 20, 3), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], 8000, 4000, 21, 8000), -1);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 1);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_send_requests), 1);
out:
	mrs_free(&p);
	conn_free(&c);
}

const struct test rdma_rel_tests[] = {
	{ "rdma rel: lost WRITE packet: one seq NAK, go-back-N, intact", t_drop_data_packet },
	{ "rdma rel: lost ACK: timeout retransmit, duplicate re-ACKed once", t_drop_ack },
	{ "rdma rel: lost READ response: re-READ from the gap, intact", t_drop_read_resp },
	{ "rdma rel: every frame duplicated both ways", t_duplicate_frames },
	{ "rdma rel: reordered request packets", t_reorder },
	{ "rdma rel: ACK coalescing on a 256-packet WRITE", t_ack_coalescing },
	{ "rdma rel: retry_cnt exhausted: RETRY_EXC_ERR, ERR, flush", t_retry_exceeded },
	{ "rdma rel: RNR NAK, min_rnr_timer honoured, later receive succeeds",
	  t_rnr_then_success },
	{ "rdma rel: rnr_retry 0/2 exhaust (RNR_RETRY_EXC_ERR), 7 forever", t_rnr_retry_counts },
	{ "rdma rel: RNR wait per min_rnr_timer code (0, 1, 6, 13, 18, 26)", t_rnr_timer_codes },
	{ "rdma rel: timeout 0 waits forever; retry_cnt 0 fails at once", t_timeout_edges },
	{ "rdma rel: lost WRITE packet at the 24-bit PSN wrap", t_psn_wrap_loss },
	{ "rdma rel: lost READ response after the PSN wrap: re-READ", t_psn_wrap_read },
	{ "rdma rel: last packet of a SEND lost: timeout, one CQE", t_send_last_lost },
	{ NULL, NULL },
};
