/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Interoperability with other RoCEv2 implementations (tests/interop/rxe.t runs the real thing
 * against Soft-RoCE): frames as such a peer sends them, and a responder as slow as Soft-RoCE
 * under emulation.
 */
#include <stdlib.h>

#include "test_rdma.h"

struct pair_mrs {
	struct rmr m[2];
	bool ok;
};

static bool mrs_make(struct conn *c, struct pair_mrs *p, uint64_t len)
{
	const uint32_t acc = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
			     TERN_ACCESS_REMOTE_READ;
	unsigned int s;

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

/*
 * The AETH of every ACK and READ response from the responder rewritten as Soft-RoCE and
 * other implementations send it: the low five bits of an ACK's syndrome carry a credit
 * count (0x1f: unlimited), not 0.
 */
struct credits {
	unsigned int rewritten;
	unsigned int next;
};

static enum wire_action credit_filter(struct wire *w, unsigned int dir, unsigned int idx,
				      uint8_t *frame, size_t *len)
{
	struct credits *x = w->ctx;
	struct pkt p;
	size_t off;

	(void)idx;
	if (dir != 1 || !pkt_parse(frame, *len, &p) || !p.has_aeth || (p.syndrome & 0x60))
		return W_DELIVER;
	off = (size_t)(p.payload - frame) - 4;	/* the AETH ends where the payload starts */
	frame[off] = (uint8_t)(x->next++ % 0x20);
	pkt_fix_icrc(frame, *len);
	x->rewritten++;
	return W_DELIVER;
}

/* ACKs and READ responses with credit counts in their AETH complete as plain ACKs do. */
static void t_aeth_credits(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct credits x = { 0, 0x1f };
	struct sge sg;
	struct wc w[4];
	unsigned int i;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mrs_make(&c, &p, 65536));
	c.w.ctx = &x;
	c.w.filter = credit_filter;
	for (i = 0; i < 2; i++) {
		sg = mr_sge(&p.m[0], i * 16384, 5000 + i * 3000);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 10 + i, &sg, 1,
			  p.m[1].iova + i * 16384, p.m[1].key, 0);
		sg = mr_sge(&p.m[0], 32768 + i * 16384, 7000 + i * 1000);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 20 + i, &sg, 1,
			  p.m[1].iova + 32768 + i * 16384, p.m[1].key, 0);
	}
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 4, 10000000) == 4);
	for (i = 0; i < 4; i++) {
		CHECK_WC(&w[i], i % 2 ? TERN_WQE_RDMA_READ : TERN_WQE_RDMA_WRITE, TERN_CQE_OK,
			 (i % 2 ? 20 : 10) + i / 2);
	}
	CHECK(x.rewritten >= 4);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(mr_diff_pattern(c.d[1], &p.m[1], i * 16384, 5000 + i * 3000, 20,
					 i * 16384), -1);
		CHECK_EQ(mr_diff_pattern(c.d[0], &p.m[0], 32768 + i * 16384, 7000 + i * 1000, 21,
					 32768 + i * 16384), -1);
	}
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
	CHECK_EQ(RDEV_STAT(c.d[0], implied_nak_seq_err), 0);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
out:
	mrs_free(&p);
	conn_free(&c);
}

/*
 * A slow link from the responder: every frame it sends waits in a queue and arrives one at
 * a time, @gap ns apart; the @lose-th (counted from 0) is lost.
 */
#define SLOW_MAX 512
struct slow {
	uint8_t *f[SLOW_MAX];
	size_t len[SLOW_MAX];
	unsigned int head, tail, queued, lose;
	bool overflow;
};

static enum wire_action slow_filter(struct wire *w, unsigned int dir, unsigned int idx,
				    uint8_t *frame, size_t *len)
{
	struct slow *s = w->ctx;

	(void)idx;
	if (dir != 1)
		return W_DELIVER;
	if (s->tail == SLOW_MAX) {
		s->overflow = true;
		return W_DROP;
	}
	if (s->queued++ == s->lose)
		return W_DROP;
	s->f[s->tail] = malloc(*len);
	if (!s->f[s->tail]) {
		s->overflow = true;
		return W_DROP;
	}
	memcpy(s->f[s->tail], frame, *len);
	s->len[s->tail++] = *len;
	return W_DROP;		/* delivered later, by slow_release */
}

/*
 * Two 8 KiB READs outstanding; the second response of the first is lost. As Soft-RoCE does,
 * the responder first sends every response already asked for (14 more) and only then
 * answers the re-request, one response per half retransmit timeout: the draining takes 7
 * timeouts, more than retry_cnt 2 allows. Responses out of sequence show the responder is
 * alive: the READs complete, intact, and no timeout expires.
 */
static void t_slow_responder_drain(void)
{
	struct connopt o;
	struct conn c;
	struct pair_mrs p = { .ok = false };
	struct slow s;
	struct sge sg;
	struct wc w[2];
	unsigned int i, n;
	uint64_t tmo;

	memset(&s, 0, sizeof(s));
	s.lose = 1;
	connopt_default(&o);
	o.timeout = 8;
	o.retry_cnt = 2;
	tmo = 4096ull << o.timeout;
	RQ(conn_setup(&c, &o));
	RQ(mrs_make(&c, &p, 32768));
	c.w.ctx = &s;
	c.w.filter = slow_filter;
	for (i = 0; i < 2; i++) {
		sg = mr_sge(&p.m[0], i * 8192, 8192);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 30 + i, &sg, 1,
			  p.m[1].iova + 16384 + i * 8192, p.m[1].key, 0);
	}
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);
	CHECK_EQ(s.tail, 15);	/* 16 responses, one lost */
	for (n = 0; s.head < s.tail && n < 1000; n++) {
		i = s.head++;
		tern_model_rx_frame(c.d[0]->f.m, s.f[i], s.len[i]);
		free(s.f[i]);
		s.f[i] = NULL;
		wire_advance(&c.w, tmo / 2);
	}
	CHECK(!s.overflow);
	CHECK(s.head == s.tail);
	CHECK(s.tail > 15);	/* the re-request was answered after the rest */
	RQ(conn_poll(&c, 0, w, 2, 2 * tmo) == 2);
	CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_OK, 30);
	CHECK_WC(&w[1], TERN_WQE_RDMA_READ, TERN_CQE_OK, 31);
	CHECK_EQ(mr_diff_pattern(c.d[0], &p.m[0], 0, 16384, 21, 16384), -1);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
	CHECK_EQ(RDEV_STAT(c.d[0], req_transport_retries_exceeded), 0);
	CHECK(RDEV_STAT(c.d[0], implied_nak_seq_err) >= 1);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
out:
	for (i = s.head; i < s.tail; i++)
		free(s.f[i]);
	c.w.filter = NULL;
	mrs_free(&p);
	conn_free(&c);
}

const struct test rdma_interop_tests[] = {
	{ "rdma interop: ACKs and READ responses with AETH credit counts", t_aeth_credits },
	{ "rdma interop: a slow responder drains stale READ responses: no retry exhausted",
	  t_slow_responder_drain },
	{ NULL, NULL },
};
