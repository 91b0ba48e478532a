/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* QP behaviour: several QPs, READ credits, FENCE, CQ overflow, COMM_EST, SQD, PI wrap. */
#include <stdlib.h>

#include "test_rdma.h"

static const uint32_t ALL_ACC = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
				TERN_ACCESS_REMOTE_READ;

struct ev {
	uint8_t type, subtype;
	uint32_t data0;
};

static bool eq_next(struct fake *f, struct drv_ring *eq, struct ev *e)
{
	uint8_t *p = drv_ring_entry(f, eq, eq->ci);

	if (!drv_eq_poll(f, eq, &e->type, &e->data0))
		return false;
	e->subtype = p[OFF(struct tern_eqe, subtype)];
	return true;
}

/* Count async events of @type/@subtype for @data0 (consumes the EQ). */
static unsigned int async_events(struct rdev *d, uint8_t type, uint8_t subtype, uint32_t data0)
{
	struct ev e;
	unsigned int n = 0;

	while (eq_next(&d->f, &d->async_eq, &e))
		if (e.type == type && e.subtype == subtype && e.data0 == data0)
			n++;
	return n;
}

/* PSN of the last SEND_FIRST/SEND_ONLY in the log (dir 0). */
static uint32_t count_first_psn(const struct wire *w)
{
	unsigned int i;
	uint32_t psn = 0xffffffff;
	struct pkt p;

	for (i = 0; i < w->nlog; i++)
		if (w->log[i].dir == 0 && pkt_parse(w->log[i].data, w->log[i].len, &p) &&
		    (p.opcode == OP_SEND_FIRST || p.opcode == OP_SEND_ONLY))
			psn = p.psn;
	return psn;
}

/* Two QP pairs between the same devices share the CQs; traffic is kept apart by QPN. */
static void t_two_pairs(void)
{
	struct connopt o;
	struct conn c;
	struct rqp q2[2];
	struct rmr m[2];
	struct sge sg;
	struct wc w[40];
	unsigned int s, i, got, per[2] = { 0, 0 };
	bool ok = false, q2ok = false;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	for (s = 0; s < 2; s++)
		RQ(qp_create(c.d[s], &q2[s], c.d[s]->pdn, &c.cq[s], &c.cq[s], 5, 6, 5, 5, 0,
			     false) == 0);
	q2ok = true;
	CHECK(q2[0].qpn != c.qp[0].qpn);
	for (s = 0; s < 2; s++)
		RQ(qp_connect(c.d[s], &q2[s], c.d[!s], q2[!s].qpn, &o, s));
	for (s = 0; s < 2; s++)
		RQ(mr_create(c.d[s], &m[s], c.d[s]->pdn, 1 << 16, ALL_ACC, 0) == 0);
	ok = true;
	mr_fill(c.d[0], &m[0], 1);
	/* receives: QP1 buffers at 0x0000.., QP2 at 0x8000.. */
	for (i = 0; i < 10; i++) {
		post_recv(c.d[1], &c.qp[1], 100 + i,
			  &(struct sge){ m[1].iova + i * 1024, 1024, m[1].key }, 1);
		post_recv(c.d[1], &q2[1], 200 + i,
			  &(struct sge){ m[1].iova + 0x8000 + i * 1024, 1024, m[1].key }, 1);
	}
	ring_rq(c.d[1], &c.qp[1]);
	ring_rq(c.d[1], &q2[1]);
	for (i = 0; i < 10; i++) {
		sg = mr_sge(&m[0], i * 2048, 500 + i);
		post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 100 + i, &sg, 1, 0, 0,
			  0);
		sg = mr_sge(&m[0], i * 2048 + 1024, 600 + i);
		post_send(c.d[0], &q2[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 200 + i, &sg, 1, 0, 0, 0);
		/* ring one QP's doorbell per message, alternating the order */
		if (i & 1) {
			ring_sq(c.d[0], &q2[0]);
			ring_sq(c.d[0], &c.qp[0]);
		} else {
			ring_sq(c.d[0], &c.qp[0]);
			ring_sq(c.d[0], &q2[0]);
		}
	}
	got = conn_poll(&c, 1, w, 20, 5000000);
	CHECK_EQ(got, 20);
	for (i = 0; i < got; i++) {
		unsigned int which = w[i].wr_id >= 200, k = (unsigned int)(w[i].wr_id % 100);

		CHECK_EQ(w[i].status, TERN_CQE_OK);
		CHECK_EQ(w[i].qpn, which ? q2[1].qpn : c.qp[1].qpn);
		CHECK_EQ(w[i].byte_len, (which ? 600 : 500) + k);
		CHECK_EQ(w[i].wqe_idx, k);
		CHECK_EQ(k, per[which]);	/* in order per QP */
		per[which]++;
		CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], (which ? 0x8000 : 0) + k * 1024,
					 (which ? 600 : 500) + k, 1, k * 2048 + (which ? 1024 : 0)),
			 -1);
	}
	got = conn_poll(&c, 0, w, 20, 1000000);
	CHECK_EQ(got, 20);
	for (i = 0; i < got; i++)
		CHECK_EQ(w[i].qpn, w[i].wr_id >= 200 ? q2[0].qpn : c.qp[0].qpn);
	/* destroying one pair leaves the other working */
	CHECK_EQ(qp_destroy(c.d[1], &q2[1]), TERN_CMD_OK);
	CHECK_EQ(qp_destroy(c.d[0], &q2[0]), TERN_CMD_OK);
	q2ok = false;
	post_recv(c.d[1], &c.qp[1], 300, &(struct sge){ m[1].iova, 1024, m[1].key }, 1);
	ring_rq(c.d[1], &c.qp[1]);
	sg = mr_sge(&m[0], 0, 10);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 301, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 1, w, 1, 1000000) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 300);
out:
	if (q2ok) {
		qmem_free(&q2[0].sq);
		qmem_free(&q2[0].rq);
		qmem_free(&q2[1].sq);
		qmem_free(&q2[1].rq);
	}
	if (ok) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* max_rd_atomic: never more READs outstanding than allowed; all complete, data intact. */
static void t_rd_atomic_limit(void)
{
	static const uint8_t limits[] = { 1, 3 };
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct sge sg;
	struct wc w[8];
	struct pkt p;
	unsigned int k, i, out, max_out;
	bool ok = false;

	for (k = 0; k < 2; k++) {
		connopt_default(&o);
		o.rd_atomic = limits[k];
		RQ(conn_setup(&c, &o));
		RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 1 << 16, ALL_ACC, 0) == 0);
		RQ(mr_create(c.d[1], &m[1], c.d[1]->pdn, 1 << 16, ALL_ACC, 0) == 0);
		ok = true;
		mr_fill(c.d[1], &m[1], 8);
		for (i = 0; i < 8; i++) {
			sg = mr_sge(&m[0], i * 4096, 3000);
			post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, i, &sg, 1,
				  m[1].iova + 0x8000 + i * 4096, m[1].key, 0);
		}
		ring_sq(c.d[0], &c.qp[0]);
		RQ(conn_poll(&c, 0, w, 8, 5000000) == 8);
		for (i = 0; i < 8; i++) {
			CHECK_WC(&w[i], TERN_WQE_RDMA_READ, TERN_CQE_OK, i);
			CHECK_EQ(w[i].byte_len, 3000);
			CHECK_EQ(mr_diff_pattern(c.d[0], &m[0], i * 4096, 3000, 8, 0x8000 + i * 4096),
				 -1);
		}
		out = max_out = 0;
		for (i = 0; i < c.w.nlog; i++) {
			if (!pkt_parse(c.w.log[i].data, c.w.log[i].len, &p))
				continue;
			if (c.w.log[i].dir == 0 && p.opcode == OP_READ_REQ)
				out++;
			if (c.w.log[i].dir == 1 && p.opcode == OP_READ_RESP_LAST && out)
				out--;
			if (out > max_out)
				max_out = out;
		}
		if (max_out > limits[k]) {
			t_failures++;
			printf("#   %u READs outstanding with max_rd_atomic %u\n", max_out, limits[k]);
		}
		CHECK_EQ(wire_count(&c.w, 0, OP_READ_REQ), 8);
		mr_release(&m[0]);
		mr_release(&m[1]);
		ok = false;
		conn_free(&c);
	}
	return;
out:
	if (ok) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* FENCE: a WRITE fenced behind a READ does not start before the READ has completed. */
static void t_fence(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct sge sg;
	struct wc w[3];
	struct pkt p;
	unsigned int i;
	int last_resp = -1, first_fenced = -1;
	bool ok = false;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 1 << 16, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &m[1], c.d[1]->pdn, 1 << 16, ALL_ACC, 0) == 0);
	ok = true;
	mr_fill(c.d[0], &m[0], 1);
	mr_fill(c.d[1], &m[1], 2);
	sg = mr_sge(&m[0], 0, 8192);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 1, &sg, 1, m[1].iova,
		  m[1].key, 0);
	/* the fenced WRITE sends what the READ brought in: only right if it waited */
	sg = mr_sge(&m[0], 0, 2000);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED | TERN_WQE_F_FENCE, 2,
		  &sg, 1, m[1].iova + 0x8000, m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 2, 5000000) == 2);
	CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_OK, 1);
	CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 2);
	for (i = 0; i < c.w.nlog; i++) {
		if (!pkt_parse(c.w.log[i].data, c.w.log[i].len, &p))
			continue;
		if (c.w.log[i].dir == 1 && p.opcode == OP_READ_RESP_LAST)
			last_resp = (int)i;
		if (c.w.log[i].dir == 0 && p.opcode == OP_WRITE_FIRST && first_fenced < 0)
			first_fenced = (int)i;
	}
	CHECK(last_resp >= 0 && first_fenced > last_resp);
	CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 0x8000, 2000, 2, 0), -1);
out:
	if (ok) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* A CQ that really fills (CI record never updated): CQ error event, QP to ERR, the unconsumed
 * CQEs are never overwritten. */
static void t_cq_overflow(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct sge sg;
	struct wc w;
	struct ev e;
	unsigned int i, errs = 0;
	uint8_t before[4][32];
	bool ok = false;

	connopt_default(&o);
	o.cq_log = 2;
	o.timeout = 10;
	o.retry_cnt = 1;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 8192, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &m[1], c.d[1]->pdn, 8192, ALL_ACC, 0) == 0);
	ok = true;
	for (i = 0; i < 6; i++)
		post_recv(c.d[1], &c.qp[1], 10 + i, &(struct sge){ m[1].iova, 100, m[1].key }, 1);
	ring_rq(c.d[1], &c.qp[1]);
	for (i = 0; i < 4; i++) {
		sg = mr_sge(&m[0], 0, 10);
		post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, i, &sg, 1, 0, 0, 0);
		ring_sq(c.d[0], &c.qp[0]);
		RQ(conn_poll(&c, 0, &w, 1, 1000000) == 1);
		CHECK_WC(&w, TERN_WQE_SEND, TERN_CQE_OK, i);
	}
	/* B's CQ: 4 CQEs, none consumed */
	for (i = 0; i < 4; i++)
		memcpy(before[i], qmem_ptr(c.d[1], &c.cq[1].mem, i * 32, 32), 32);
	CHECK_EQ(RDEV_STAT(c.d[1], cq_overflows), 0);
	sg = mr_sge(&m[0], 0, 10);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 4, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	wire_advance(&c.w, 100000);
	CHECK_EQ(RDEV_STAT(c.d[1], cq_overflows), 1);
	while (eq_next(&c.d[1]->f, &c.d[1]->async_eq, &e)) {
		if (e.type == TERN_EQE_CQ_ERROR) {
			CHECK_EQ(e.subtype, TERN_CQ_ERR_OVERFLOW);
			CHECK_EQ(e.data0, c.cq[1].cqn);
			errs++;
		}
	}
	CHECK_EQ(errs, 1);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
	for (i = 0; i < 4; i++)
		CHECK(!memcmp(before[i], qmem_ptr(c.d[1], &c.cq[1].mem, i * 32, 32), 32));
	for (i = 0; i < 4; i++) {
		RQ(cq_poll(c.d[1], &c.cq[1], &w));
		CHECK_WC(&w, TERN_CQE_RECV, TERN_CQE_OK, 10 + i);
	}
	/* the QP is gone to ERR; destroying it and the CQ works */
	CHECK_EQ(qp_destroy(c.d[1], &c.qp[1]), TERN_CMD_OK);
	CHECK_EQ(cq_destroy(c.d[1], &c.cq[1]), TERN_CMD_OK);
out:
	if (ok) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* A responder in RTR receives, ACKs, and raises COMM_EST once. */
static void t_comm_est(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct sge sg;
	struct wc w[2];
	bool ok = false;

	connopt_default(&o);
	o.rtr_only = 2;
	RQ(conn_setup(&c, &o));
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_RTR);
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 8192, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &m[1], c.d[1]->pdn, 8192, ALL_ACC, 0) == 0);
	ok = true;
	CHECK_EQ(async_events(c.d[1], TERN_EQE_QP_EVENT, TERN_QP_EV_COMM_EST, c.qp[1].qpn), 0);
	post_recv(c.d[1], &c.qp[1], 1, &(struct sge){ m[1].iova, 100, m[1].key }, 1);
	post_recv(c.d[1], &c.qp[1], 2, &(struct sge){ m[1].iova, 100, m[1].key }, 1);
	ring_rq(c.d[1], &c.qp[1]);
	sg = mr_sge(&m[0], 0, 50);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1, 0, 0, 0);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 2, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 2, 1000000) == 2);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_OK, 1);
	RQ(conn_poll(&c, 1, w, 2, 1000000) == 2);
	CHECK_WC(&w[1], TERN_CQE_RECV, TERN_CQE_OK, 2);
	CHECK_EQ(async_events(c.d[1], TERN_EQE_QP_EVENT, TERN_QP_EV_COMM_EST, c.qp[1].qpn), 1);
	/* the initiator side never was in RTR when it first heard from the peer */
	CHECK_EQ(async_events(c.d[0], TERN_EQE_QP_EVENT, TERN_QP_EV_COMM_EST, c.qp[0].qpn), 0);
out:
	if (ok) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* RTS->SQD with SQD_NOTIFY: DRAINING while WQEs are outstanding, SQ_DRAINED event once they
 * complete; WQEs posted in SQD wait until SQD->RTS. */
static void t_sqd_drain(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct sge sg;
	struct wc w[4];
	struct qpattr a;
	uint8_t q[sizeof(struct tern_cmd_query_qp_out)];
	unsigned int i, sent;
	bool ok = false;

	connopt_default(&o);
	o.timeout = 10;		/* 4.2 ms */
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 8192, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &m[1], c.d[1]->pdn, 8192, ALL_ACC, 0) == 0);
	ok = true;
	mr_fill(c.d[0], &m[0], 3);
	c.w.filter = wire_drop_dir0;
	for (i = 0; i < 2; i++) {
		sg = mr_sge(&m[0], i * 1000, 1000);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, i, &sg, 1,
			  m[1].iova + i * 1000, m[1].key, 0);
	}
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);
	CHECK(c.w.sent[0] >= 2);
	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_SQD;
	RQ(qp_modify(c.d[0], c.qp[0].qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_SQD_NOTIFY, &a, NULL) ==
	   TERN_CMD_OK);
	RQ(qp_query(c.d[0], c.qp[0].qpn, q) == TERN_CMD_OK);
	CHECK_EQ(q[OFF(struct tern_cmd_query_qp_out, attrs) + QPA(state)], TERN_QPS_SQD);
	CHECK_EQ(rd32(q + OFF(struct tern_cmd_query_qp_out, status)) & TERN_QP_STATUS_SQ_DRAINING,
		 TERN_QP_STATUS_SQ_DRAINING);
	CHECK_EQ(async_events(c.d[0], TERN_EQE_QP_EVENT, TERN_QP_EV_SQ_DRAINED, c.qp[0].qpn), 0);
	/* a WQE posted now waits */
	sg = mr_sge(&m[0], 2000, 1000);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 2, &sg, 1,
		  m[1].iova + 2000, m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	/* the wire heals; the retransmission completes the outstanding two */
	c.w.filter = NULL;
	RQ(conn_poll(&c, 0, w, 2, 20000000) == 2);
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 0);
	CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	wire_advance(&c.w, 1000000);
	CHECK_EQ(async_events(c.d[0], TERN_EQE_QP_EVENT, TERN_QP_EV_SQ_DRAINED, c.qp[0].qpn), 1);
	RQ(qp_query(c.d[0], c.qp[0].qpn, q) == TERN_CMD_OK);
	CHECK_EQ(rd32(q + OFF(struct tern_cmd_query_qp_out, status)), 0);
	CHECK(!cq_peek(c.d[0], &c.cq[0]));
	sent = c.w.sent[0];
	wire_advance(&c.w, 1000000);
	CHECK_EQ(c.w.sent[0], sent);	/* WQE 2 not started in SQD */
	/* SQD->RTS: it goes */
	a.state = TERN_QPS_RTS;
	RQ(qp_modify(c.d[0], c.qp[0].qpn, TERN_QP_ATTR_STATE, &a, NULL) == TERN_CMD_OK);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 1, 1000000) == 1);
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 2);
	CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 0, 3000, 3, 0), -1);
out:
	if (ok) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* The free-running 16-bit SQ producer index wraps: 66,000 WQEs through a ring of 256. */
static void t_sq_pi_wrap(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct sge sg;
	struct wc w;
	uint8_t q[sizeof(struct tern_cmd_query_qp_out)];
	unsigned int i, n = 0;
	const unsigned int total = 66048, batch = 256;
	bool ok = false;

	connopt_default(&o);
	o.sq_log = 8;
	o.sq_stride = 6;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 4096, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &m[1], c.d[1]->pdn, 4096, ALL_ACC, 0) == 0);
	ok = true;
	while (n < total) {
		for (i = 0; i < batch; i++, n++) {
			uint8_t v[4] = { (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), 0x5a };

			mr_write(c.d[0], &m[0], (n % batch) * 4, v, 4);
			sg = mr_sge(&m[0], (n % batch) * 4, 4);
			post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE,
				  i == batch - 1 ? TERN_WQE_F_SIGNALED : 0, n, &sg, 1,
				  m[1].iova + (n % batch) * 4, m[1].key, 0);
		}
		ring_sq(c.d[0], &c.qp[0]);
		if (conn_poll(&c, 0, &w, 1, 2000000) != 1) {
			t_failures++;
			printf("#   stuck at WQE %u\n", n);
			break;
		}
		wire_clear_log(&c.w);
		if (w.status != TERN_CQE_OK || w.wr_id != n - 1 || w.wqe_idx != batch - 1) {
			t_failures++;
			printf("#   WQE %u: status %u wr_id %llu idx %u\n", n - 1, w.status,
			       (unsigned long long)w.wr_id, w.wqe_idx);
			break;
		}
	}
	CHECK_EQ(n, total);
	for (i = 0; i < batch; i++) {
		unsigned int k = total - batch + i;
		uint8_t v[4];

		mr_read(c.d[1], &m[1], i * 4, v, 4);
		CHECK(v[0] == (uint8_t)k && v[1] == (uint8_t)(k >> 8) && v[3] == 0x5a);
		if (t_failures > 3)
			break;
	}
	RQ(qp_query(c.d[0], c.qp[0].qpn, q) == TERN_CMD_OK);
	CHECK_EQ(rd16(q + OFF(struct tern_cmd_query_qp_out, sq_ci)), total & 0xffff);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_write_requests), total);
out:
	if (ok) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* CQE write order: bytes 0..30 first, byte 31 (flags with the phase) in a later write that
 * carries nothing else, as the header requires. */
struct cqe_watch {
	uint64_t base;		/* ring, DIRECT */
	unsigned int n;		/* entries */
	uint8_t body_seen[64];	/* per entry: bytes 0..30 written since the last flags write */
	unsigned int flags_writes, bad;
};

static void cqe_watch_fn(struct fake *f, uint64_t addr, size_t len)
{
	struct cqe_watch *w = f->watch_ctx;
	uint64_t end = addr + len, e;

	if (end <= w->base || addr >= w->base + 32ull * w->n)
		return;
	for (e = 0; e < w->n; e++) {
		uint64_t s = w->base + 32 * e, fl = s + 31;
		bool body = addr < fl && end > s;
		bool flag = addr <= fl && end > fl;

		if (flag) {
			w->flags_writes++;
			if (body || !w->body_seen[e])
				w->bad++;
			w->body_seen[e] = 0;
		} else if (body) {
			if (addr <= s && end >= fl)
				w->body_seen[e] = 1;
		}
	}
}

static void t_cqe_write_order(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct cqe_watch cw;
	struct sge sg;
	struct wc w[16];
	unsigned int i;
	bool ok = false;

	connopt_default(&o);
	o.cq_log = 4;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 8192, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &m[1], c.d[1]->pdn, 8192, ALL_ACC, 0) == 0);
	ok = true;
	memset(&cw, 0, sizeof(cw));
	cw.base = c.cq[1].mem.base;
	cw.n = 16;
	c.d[1]->f.watch_ctx = &cw;
	c.d[1]->f.dma_watch = cqe_watch_fn;
	for (i = 0; i < 20; i++) {
		post_recv(c.d[1], &c.qp[1], i, &(struct sge){ m[1].iova, 100, m[1].key }, 1);
		ring_rq(c.d[1], &c.qp[1]);
		sg = mr_sge(&m[0], 0, 50);
		post_send(c.d[0], &c.qp[0], TERN_WQE_SEND_IMM, TERN_WQE_F_SIGNALED, i, &sg, 1, 0, 0,
			  i);
		ring_sq(c.d[0], &c.qp[0]);
		RQ(conn_poll(&c, 0, w, 1, 1000000) == 1);
		RQ(conn_poll(&c, 1, w, 1, 1000000) == 1);
		CHECK_WC(&w[0], TERN_CQE_RECV_IMM, TERN_CQE_OK, i);
	}
	c.d[1]->f.dma_watch = NULL;
	CHECK_EQ(cw.flags_writes, 20);
	CHECK_EQ(cw.bad, 0);
out:
	if (ok) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* A receive WQE with no SGE takes a 0-byte SEND; a 1-byte SEND is too long for it. */
static void t_zero_sge_receive(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m;
	struct sge sg;
	struct wc w;
	bool ok = false;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m, c.d[0]->pdn, 4096, ALL_ACC, 0) == 0);
	ok = true;
	post_recv(c.d[1], &c.qp[1], 1, NULL, 0);
	post_recv(c.d[1], &c.qp[1], 2, NULL, 0);
	ring_rq(c.d[1], &c.qp[1]);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, NULL, 0, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 1, &w, 1, 1000000) == 1);
	CHECK_WC(&w, TERN_CQE_RECV, TERN_CQE_OK, 1);
	CHECK_EQ(w.byte_len, 0);
	RQ(conn_poll(&c, 0, &w, 1, 1000000) == 1);
	CHECK_WC(&w, TERN_WQE_SEND, TERN_CQE_OK, 1);
	sg = mr_sge(&m, 0, 1);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 2, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 1, &w, 1, 1000000) == 1);
	CHECK_EQ(w.status, TERN_CQE_LOC_LEN_ERR);
	CHECK_EQ(w.wr_id, 2);
	RQ(conn_poll(&c, 0, &w, 1, 1000000) == 1);
	CHECK_EQ(w.status, TERN_CQE_REM_INV_REQ_ERR);
out:
	if (ok)
		mr_release(&m);
	conn_free(&c);
}

/* Zero-length RDMA: neither VA nor rkey is checked (IBA C9-88). */
static void t_zero_length_rdma(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m;
	struct wc w[3];
	bool ok = false;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[1], &m, c.d[1]->pdn, 4096, ALL_ACC, 0) == 0);
	ok = true;
	post_recv(c.d[1], &c.qp[1], 9, NULL, 0);
	ring_rq(c.d[1], &c.qp[1]);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, NULL, 0, 0, 0, 0);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 2, NULL, 0, 0x1234, 7,
		  0);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE_IMM, TERN_WQE_F_SIGNALED, 3, NULL, 0, 0, 0,
		  0x77);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 3, 1000000) == 3);
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	CHECK_WC(&w[1], TERN_WQE_RDMA_READ, TERN_CQE_OK, 2);
	CHECK_EQ(w[1].byte_len, 0);
	CHECK_WC(&w[2], TERN_WQE_RDMA_WRITE_IMM, TERN_CQE_OK, 3);
	RQ(conn_poll(&c, 1, w, 1, 1000000) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV_RDMA_WRITE_IMM, TERN_CQE_OK, 9);
	CHECK_EQ(w[0].byte_len, 0);
	CHECK_EQ(w[0].imm, 0x77);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_RTS);
	CHECK_EQ(RDEV_STAT(c.d[1], resp_remote_access_errors), 0);
out:
	if (ok)
		mr_release(&m);
	conn_free(&c);
}

/* A receive WQE naming a bad lkey: the SEND that lands on it fails on both sides, and
 * nothing is written anywhere. */
static void t_bad_recv_lkey(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct sge sg;
	struct wc w;
	bool ok = false;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 4096, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &m[1], c.d[1]->pdn, 4096, ALL_ACC, 0) == 0);
	ok = true;
	mr_fill(c.d[1], &m[1], 6);
	post_recv(c.d[1], &c.qp[1], 1, &(struct sge){ m[1].iova, 100, m[1].key ^ 0x10 }, 1);
	ring_rq(c.d[1], &c.qp[1]);
	sg = mr_sge(&m[0], 0, 50);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 1, &w, 1, 1000000) == 1);
	CHECK(w.status == TERN_CQE_LOC_PROT_ERR || w.status == TERN_CQE_LOC_QP_OP_ERR ||
	      w.status == TERN_CQE_LOC_ACCESS_ERR);
	CHECK_EQ(w.wr_id, 1);
	RQ(conn_poll(&c, 0, &w, 1, 1000000) == 1);
	CHECK(w.status == TERN_CQE_REM_OP_ERR || w.status == TERN_CQE_REM_ACCESS_ERR ||
	      w.status == TERN_CQE_REM_INV_REQ_ERR);
	CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 0, 4096, 6, 0), -1);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
out:
	if (ok) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* QPs destroyed or reset while their timers are armed (RNR wait, ACK timeout): time goes on,
 * nothing fires on freed state (ASan), the peer gives up cleanly. */
static void t_destroy_busy_qps(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m;
	struct sge sg;
	struct wc w;
	struct qpattr a;
	bool ok = false;
	unsigned int pass;

	for (pass = 0; pass < 2; pass++) {
		connopt_default(&o);
		o.timeout = 8;
		o.retry_cnt = 2;
		o.min_rnr_timer[1] = 20;	/* 10 ms */
		RQ(conn_setup(&c, &o));
		RQ(mr_create(c.d[0], &m, c.d[0]->pdn, 4096, ALL_ACC, 0) == 0);
		ok = true;
		/* QP 0: one SEND waiting out an RNR, one WRITE unacked behind it */
		sg = mr_sge(&m, 0, 100);
		post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1, 0, 0, 0);
		ring_sq(c.d[0], &c.qp[0]);
		wire_pump(&c.w);
		CHECK_EQ(RDEV_STAT(c.d[0], rnr_nak_retry_err), 1);
		if (pass == 0) {
			RQ(qp_destroy(c.d[0], &c.qp[0]) == TERN_CMD_OK);
			c.qp[0].qpn = 0;
		} else {
			memset(&a, 0, sizeof(a));
			a.state = TERN_QPS_RESET;
			RQ(qp_modify(c.d[0], c.qp[0].qpn, TERN_QP_ATTR_STATE, &a, NULL) == 0);
		}
		wire_advance(&c.w, 100000000);
		CHECK_EQ(c.w.sent[0], 1);
		CHECK(!cq_peek(c.d[0], &c.cq[0]));	/* RESET/destroy: no completions */
		/* QP 1 destroyed while QP 0 (re-made) retransmits to it */
		if (pass == 0) {
			RQ(qp_create(c.d[0], &c.qp[0], c.d[0]->pdn, &c.cq[0], &c.cq[0], o.sq_log,
				     o.sq_stride, o.rq_log, o.rq_stride, 0, false) == 0);
		} else {
			c.qp[0].sq_pi = c.qp[0].rq_pi = 0;
		}
		RQ(qp_connect(c.d[0], &c.qp[0], c.d[1], c.qp[1].qpn, &o, 0));
		RQ(qp_destroy(c.d[1], &c.qp[1]) == TERN_CMD_OK);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 2, &sg, 1,
			  0x1000, 0x100, 0);
		ring_sq(c.d[0], &c.qp[0]);
		RQ(conn_poll(&c, 0, &w, 1, 20 * (4096ull << 8)) == 1);
		CHECK_EQ(w.status, TERN_CQE_RETRY_EXC_ERR);
		CHECK_EQ(w.wr_id, 2);
		CHECK(RDEV_STAT(c.d[1], rx_roce_discards) >= 3);
		mr_release(&m);
		ok = false;
		conn_free(&c);
	}
	return;
out:
	if (ok)
		mr_release(&m);
	conn_free(&c);
}

/* Both sides reset in the middle of traffic and connect again with new PSNs: works. */
static void t_reset_reconnect(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct sge sg;
	struct wc w[4];
	struct qpattr a;
	unsigned int s, i;
	bool ok = false;

	connopt_default(&o);
	o.min_rnr_timer[1] = 0;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 1 << 16, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &m[1], c.d[1]->pdn, 1 << 16, ALL_ACC, 0) == 0);
	ok = true;
	mr_fill(c.d[0], &m[0], 12);
	for (i = 0; i < 3; i++) {
		sg = mr_sge(&m[0], 0, 20000);
		post_send(c.d[0], &c.qp[0], i ? TERN_WQE_RDMA_WRITE : TERN_WQE_SEND,
			  TERN_WQE_F_SIGNALED, i, &sg, 1, m[1].iova, m[1].key, 0);
	}
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);	/* the SEND meets an RNR with a 655 ms wait */
	for (s = 0; s < 2; s++) {
		memset(&a, 0, sizeof(a));
		a.state = TERN_QPS_RESET;
		RQ(qp_modify(c.d[s], c.qp[s].qpn, TERN_QP_ATTR_STATE, &a, NULL) == 0);
		c.qp[s].sq_pi = c.qp[s].rq_pi = 0;
	}
	CHECK(!cq_peek(c.d[0], &c.cq[0]));
	o.psn[0] = 0x555;
	o.psn[1] = 0x777;
	for (s = 0; s < 2; s++)
		RQ(qp_connect(c.d[s], &c.qp[s], c.d[!s], c.qp[!s].qpn, &o, s));
	post_recv(c.d[1], &c.qp[1], 50, &(struct sge){ m[1].iova + 0x8000, 0x8000, m[1].key }, 1);
	ring_rq(c.d[1], &c.qp[1]);
	sg = mr_sge(&m[0], 0, 9000);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 10, &sg, 1, 0, 0, 0);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 11, &sg, 1,
		  m[1].iova, m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 2, 5000000) == 2);
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_OK, 10);
	CHECK_EQ(w[0].wqe_idx, 0);
	CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 11);
	RQ(conn_poll(&c, 1, w, 1, 1000000) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 50);
	CHECK_EQ(w[0].byte_len, 9000);
	CHECK_EQ(w[0].wqe_idx, 0);
	CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 0x8000, 9000, 12, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 0, 9000, 12, 0), -1);
	CHECK_EQ(count_first_psn(&c.w), 0x555);
out:
	if (ok) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* Host memory faults: the CQ ring (CQ_ERROR DMA event), the SQ ring (QP FATAL event), a local
 * data page (error CQE with syndrome DMA), a remote data page (REM_OP_ERR at the requester). */
static void t_dma_faults(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct sge sg;
	struct wc w;
	struct ev e;
	unsigned int k, n;
	bool ok = false;

	for (k = 0; k < 6; k++) {
		int fails = t_failures;

		connopt_default(&o);
		RQ(conn_setup(&c, &o));
		RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 3 * 4096, ALL_ACC, 0) == 0);
		RQ(mr_create(c.d[1], &m[1], c.d[1]->pdn, 3 * 4096, ALL_ACC, 0) == 0);
		ok = true;
		post_recv(c.d[1], &c.qp[1], 5, &(struct sge){ m[1].iova, 100, m[1].key }, 1);
		if (k == 5) {		/* B's RQ ring, after the WQE was written */
			c.d[1]->f.fault_lo = c.qp[1].rq.base;
			c.d[1]->f.fault_hi = c.qp[1].rq.base + c.qp[1].rq.npages * 4096ull;
		}
		ring_rq(c.d[1], &c.qp[1]);
		if (k == 0) {		/* B's CQ ring and record */
			c.d[1]->f.fault_lo = c.cq[1].mem.base;
			c.d[1]->f.fault_hi = c.cq[1].mem.base + c.cq[1].mem.npages * 4096ull;
		} else if (k == 2) {	/* A's source page 1 */
			c.d[0]->f.fault_lo = m[0].pages[1];
			c.d[0]->f.fault_hi = m[0].pages[1] + 4096;
		} else if (k == 3 || k == 4) {	/* B's target (WRITE) or source (READ) page 1 */
			c.d[1]->f.fault_lo = m[1].pages[1];
			c.d[1]->f.fault_hi = m[1].pages[1] + 4096;
		}
		sg = mr_sge(&m[0], 0, k == 0 || k == 5 ? 100 : 3 * 4096);
		post_send(c.d[0], &c.qp[0], k == 4 ? TERN_WQE_RDMA_READ :
			  k == 2 || k == 3 ? TERN_WQE_RDMA_WRITE : TERN_WQE_SEND,
			  TERN_WQE_F_SIGNALED, 1, &sg, 1, m[1].iova, m[1].key, 0);
		if (k == 1) {		/* A's SQ ring, after the WQE was written */
			c.d[0]->f.fault_lo = c.qp[0].sq.base;
			c.d[0]->f.fault_hi = c.qp[0].sq.base + c.qp[0].sq.npages * 4096ull;
		}
		ring_sq(c.d[0], &c.qp[0]);
		wire_advance(&c.w, 1000000);
		n = 0;
		switch (k) {
		case 0:
			while (eq_next(&c.d[1]->f, &c.d[1]->async_eq, &e)) {
				if (e.type == TERN_EQE_CQ_ERROR) {
					CHECK_EQ(e.subtype, TERN_CQ_ERR_DMA);
					CHECK_EQ(e.data0, c.cq[1].cqn);
					n++;
				}
			}
			CHECK_EQ(n, 1);
			CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
			break;
		case 1:
			/* the WQE cannot be read, so no CQE can describe it: a catastrophic
			 * local error, reported as an affiliated event */
			CHECK_EQ(async_events(c.d[0], TERN_EQE_QP_EVENT, TERN_QP_EV_FATAL,
					      c.qp[0].qpn), 1);
			CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
			CHECK_EQ(c.w.sent[0], 0);
			break;
		case 2:
			RQ(cq_poll(c.d[0], &c.cq[0], &w));
			CHECK(w.status != TERN_CQE_OK);
			CHECK_EQ(w.vendor_err, TERN_SYND_DMA);
			CHECK_EQ(w.wr_id, 1);
			CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
			break;
		case 3:
			/* rkey, bounds and rights were fine: the responder failed on its own
			 * memory, an operational error, not an access violation */
			RQ(cq_poll(c.d[0], &c.cq[0], &w));
			CHECK_EQ(w.status, TERN_CQE_REM_OP_ERR);
			CHECK_EQ(w.vendor_err, TERN_SYND_NAK_OP);
			CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
			CHECK_EQ(async_events(c.d[1], TERN_EQE_QP_EVENT, TERN_QP_EV_FATAL,
					      c.qp[1].qpn), 1);
			break;
		case 5:
			/* the device may read the WQE at the doorbell or when the SEND comes;
			 * either way the SEND cannot succeed */
			if (cq_poll(c.d[0], &c.cq[0], &w))
				CHECK(w.status != TERN_CQE_OK);
			CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
			CHECK_EQ(async_events(c.d[1], TERN_EQE_QP_EVENT, TERN_QP_EV_FATAL,
					      c.qp[1].qpn), 1);
			/* a CQE for the unreadable receive, if any, says why: DMA */
			while (cq_poll(c.d[1], &c.cq[1], &w))
				if (w.status != TERN_CQE_WR_FLUSH_ERR)
					CHECK_EQ(w.vendor_err, TERN_SYND_DMA);
			break;
		case 4:
			RQ(cq_poll(c.d[0], &c.cq[0], &w));
			CHECK_EQ(w.status, TERN_CQE_REM_OP_ERR);
			CHECK_EQ(w.vendor_err, TERN_SYND_NAK_OP);
			CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
			CHECK_EQ(async_events(c.d[1], TERN_EQE_QP_EVENT, TERN_QP_EV_FATAL,
					      c.qp[1].qpn), 1);
			break;
		}
		if (t_failures != fails)
			printf("#   ^ fault case %u\n", k);
		c.d[0]->f.fault_lo = c.d[0]->f.fault_hi = 0;
		c.d[1]->f.fault_lo = c.d[1]->f.fault_hi = 0;
		mr_release(&m[0]);
		mr_release(&m[1]);
		ok = false;
		conn_free(&c);
	}
	return;
out:
	if (ok) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

static enum wire_action drop_dir1(struct wire *w, unsigned int dir, unsigned int idx,
				  uint8_t *frame, size_t *len)
{
	return wire_drop_dir0(w, !dir, idx, frame, len);
}

static int sqd_set_mtu(struct rdev *d, uint32_t qpn, uint8_t path_mtu)
{
	struct qpattr a;

	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_SQD;
	a.path_mtu = path_mtu;
	return qp_modify(d, qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_PATH_MTU, &a, NULL);
}

/*
 * SQD->SQD with a new path MTU (issue 14, bugs 2 and 3). Requester: refused while the SQ
 * still drains (a 1000-byte WRITE counted as 4 packets at MTU 256 and retransmitted at 4096
 * used to read 4096 bytes past the WQE: ASan heap-buffer-overflow READ), allowed once
 * drained. Responder: a READ answered at MTU 256 and replayed for a duplicate request after
 * its QP went to MTU 4096 keeps the MTU it was counted with (it used to write 4096 bytes
 * past the RDMA state: ASan heap-buffer-overflow WRITE), and the data arrives intact.
 */
static void t_sqd_mtu_change(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct sge sg;
	struct wc w[2];
	struct qpattr a;
	uint8_t q[sizeof(struct tern_cmd_query_qp_out)];
	unsigned int sent;
	bool ok = false;

	connopt_default(&o);
	o.mtu = 1;		/* 256 */
	o.timeout = 10;		/* 4.2 ms */
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 8192, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &m[1], c.d[1]->pdn, 8192, ALL_ACC, 0) == 0);
	ok = true;
	mr_fill(c.d[0], &m[0], 3);
	mr_fill(c.d[1], &m[1], 5);

	/* requester: a WRITE in flight (its packets lost), RTS->SQD, then a new MTU */
	c.w.filter = wire_drop_dir0;
	sg = mr_sge(&m[0], 0, 1000);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  m[1].iova + 4096, m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);
	CHECK_EQ(c.w.sent[0], 4);
	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_SQD;
	RQ(qp_modify(c.d[0], c.qp[0].qpn, TERN_QP_ATTR_STATE, &a, NULL) == TERN_CMD_OK);
	CHECK_EQ(sqd_set_mtu(c.d[0], c.qp[0].qpn, 5), TERN_CMD_BAD_STATE);
	RQ(qp_query(c.d[0], c.qp[0].qpn, q) == TERN_CMD_OK);
	CHECK_EQ(q[OFF(struct tern_cmd_query_qp_out, attrs) + QPA(path_mtu)], 1);
	/* the retransmission at MTU 256 completes it; drained, the change is taken */
	c.w.filter = NULL;
	RQ(conn_poll(&c, 0, w, 1, 20000000) == 1);
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 4096, 1000, 3, 0), -1);
	CHECK_EQ(sqd_set_mtu(c.d[0], c.qp[0].qpn, 1), TERN_CMD_OK);

	/* responder: a READ answered at MTU 256, all 4 responses lost */
	sent = c.w.sent[1];
	c.w.filter = drop_dir1;
	sg = mr_sge(&m[0], 2048, 1024);
	a.state = TERN_QPS_RTS;
	RQ(qp_modify(c.d[0], c.qp[0].qpn, TERN_QP_ATTR_STATE, &a, NULL) == TERN_CMD_OK);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 2, &sg, 1,
		  m[1].iova, m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);
	CHECK_EQ(c.w.sent[1], sent + 4);
	/* the responder's QP (its SQ empty: drained at once) goes to MTU 4096 */
	a.state = TERN_QPS_SQD;
	RQ(qp_modify(c.d[1], c.qp[1].qpn, TERN_QP_ATTR_STATE, &a, NULL) == TERN_CMD_OK);
	CHECK_EQ(sqd_set_mtu(c.d[1], c.qp[1].qpn, 5), TERN_CMD_OK);
	/* the requester's retry is a duplicate READ: replayed in 256-byte packets */
	c.w.filter = NULL;
	RQ(conn_poll(&c, 0, w, 1, 20000000) == 1);
	CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_OK, 2);
	CHECK_EQ(mr_diff_pattern(c.d[0], &m[0], 2048, 1024, 5, 0), -1);
	CHECK_EQ(c.w.sent[1], sent + 8);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_SQD);
out:
	if (ok) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* Frames per direction still let through by pass_some(); the rest are dropped. */
static unsigned int pass_left[2];

static enum wire_action pass_some(struct wire *w, unsigned int dir, unsigned int idx,
				  uint8_t *frame, size_t *len)
{
	(void)w;
	(void)idx;
	(void)frame;
	(void)len;
	if (!pass_left[dir])
		return W_DROP;
	pass_left[dir]--;
	return W_DELIVER;
}

/*
 * Deregister @mr on side 1 and register it again as a hostile guest driver may: the same
 * slot (cycling through the others), key byte, iova and pages, but in a new PD; then fill
 * it with @seed. False if that fails.
 */
static bool mr_reregister_other_pd(struct conn *c, struct rmr *mr, uint32_t *pdn,
				   unsigned int seed)
{
	uint32_t slot, want = mr->key >> 8, n;
	uint8_t key = (uint8_t)mr->key;

	if (mr_destroy(c->d[1], mr) != TERN_CMD_OK || pd_create(c->d[1], pdn) != TERN_CMD_OK)
		return false;
	for (n = 0; n < 16384; n++) {
		if (mr_register_again(c->d[1], mr, *pdn, key) != TERN_CMD_OK)
			return false;
		slot = mr->key >> 8;
		if (slot == want)
			break;
		if (mr_destroy(c->d[1], mr) != TERN_CMD_OK)
			return false;
	}
	mr_fill(c->d[1], mr, seed);
	return slot == want;
}

/*
 * A key deregistered and registered again (same slot, key byte and iova, another PD) in the
 * middle of a message: the rest of a WRITE (@read false) or the replay of a READ is checked
 * against the MR as it is now, so it completes with REM_ACCESS_ERR and the new MR is neither
 * written nor read (issue 14: continuations used to reuse the rkey checked at the first
 * packet). The first packet (1024 bytes) gets through before the MR changes hands.
 */
static void rkey_reuse(bool read)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct sge sg;
	struct wc w[2];
	uint32_t pdn2;
	bool ok = false;

	connopt_default(&o);
	o.timeout = 10;		/* 4.2 ms */
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 16384, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &m[1], c.d[1]->pdn, 16384, ALL_ACC, 0) == 0);
	ok = true;
	mr_fill(c.d[0], &m[0], 3);
	mr_fill(c.d[1], &m[1], 5);
	/* 3 packets; only the first of the requests (WRITE) or of the responses (READ) passes */
	pass_left[0] = read ? 100 : 1;
	pass_left[1] = read ? 1 : 100;
	c.w.filter = pass_some;
	sg = mr_sge(&m[0], 8192, 3000);
	post_send(c.d[0], &c.qp[0], read ? TERN_WQE_RDMA_READ : TERN_WQE_RDMA_WRITE,
		  TERN_WQE_F_SIGNALED, 1, &sg, 1, m[1].iova, m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);
	CHECK_EQ(c.w.sent[read ? 1 : 0], 3);
	if (!read)
		CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 0, 1024, 3, 8192), -1);
	RQ(mr_reregister_other_pd(&c, &m[1], &pdn2, 7));
	c.w.filter = NULL;
	RQ(conn_poll(&c, 0, w, 1, 20000000) == 1);
	CHECK_WC(&w[0], read ? TERN_WQE_RDMA_READ : TERN_WQE_RDMA_WRITE, TERN_CQE_REM_ACCESS_ERR,
		 1);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
	/* nothing written to the new MR, nothing of it read */
	CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 0, 16384, 7, 0), -1);
	if (read) {
		CHECK_EQ(mr_diff_pattern(c.d[0], &m[0], 8192, 1024, 5, 0), -1);
		CHECK_EQ(mr_diff_pattern(c.d[0], &m[0], 8192 + 1024, 1976, 3, 8192 + 1024), -1);
	}
out:
	if (ok) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

static void t_rkey_reuse(void)
{
	rkey_reuse(false);
}

static void t_rkey_reuse_read(void)
{
	rkey_reuse(true);
}

const struct test rdma_qp_tests[] = {
	{ "rdma qp: two QP pairs on one CQ kept apart by QPN", t_two_pairs },
	{ "rdma qp: max_rd_atomic 1 and 3 limit outstanding READs", t_rd_atomic_limit },
	{ "rdma qp: FENCE waits for the READ before it", t_fence },
	{ "rdma qp: CQ overflow: CQ_ERROR event, QP ERR, CQEs kept", t_cq_overflow },
	{ "rdma qp: responder in RTR receives and raises COMM_EST once", t_comm_est },
	{ "rdma qp: SQD drains, SQ_DRAINED event, SQD->RTS resumes", t_sqd_drain },
	{ "rdma qp: SQD->SQD path MTU: refused while draining, replays keep their MTU",
	  t_sqd_mtu_change },
	{ "rdma qp: rkey re-registered in another PD mid-WRITE: REM_ACCESS_ERR, not written",
	  t_rkey_reuse },
	{ "rdma qp: rkey re-registered in another PD mid-READ: REM_ACCESS_ERR, not read",
	  t_rkey_reuse_read },
	{ "rdma qp: 16-bit SQ producer index wraps (66048 WQEs)", t_sq_pi_wrap },
	{ "rdma qp: CQE bytes 0..30 written before byte 31 (phase)", t_cqe_write_order },
	{ "rdma qp: receive with no SGE: 0-byte SEND ok, 1 byte LOC_LEN_ERR", t_zero_sge_receive },
	{ "rdma qp: zero-length WRITE/READ/WRITE_IMM skip rkey checks (C9-88)",
	  t_zero_length_rdma },
	{ "rdma qp: receive WQE with a bad lkey fails both sides, writes nothing",
	  t_bad_recv_lkey },
	{ "rdma qp: destroy/reset QPs with RNR and ACK timers armed", t_destroy_busy_qps },
	{ "rdma qp: both sides RESET mid-traffic, reconnect, new PSNs work", t_reset_reconnect },
	{ "rdma qp: DMA faults: CQ, SQ, RQ rings, local page, remote WRITE/READ page", t_dma_faults },
	{ NULL, NULL },
};
