/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RQ doorbell records (TERN_QP_F_RQ_DB_REC): receive WQEs posted through the record alone,
 * the record re-read when the device's view is empty (also before an RNR NAK), an RQ
 * doorbell as a "read the record" hint, a hostile record (a queue error, counted, no
 * overrun), the flush of WQEs known only from the record, and QUERY_RDMA_STATS for a driver
 * from before the record's counter. The SRQ's record is in test_rdma_srq.c; every other RQ
 * test runs the doorbell path unchanged.
 */
#include "test_rdma.h"

#define RECV_OFF	8192u	/* receive buffers: 512 bytes each from here in the MR */

struct dfix {
	struct conn c;
	struct rmr m[2];
	bool mrs;
};

static bool dfix_setup(struct dfix *x, struct connopt *o)
{
	unsigned int s;

	memset(x, 0, sizeof(*x));
	o->qp_flags = TERN_QP_F_RQ_DB_REC;
	if (!conn_setup(&x->c, o))
		return false;
	for (s = 0; s < 2; s++) {
		if (mr_create(x->c.d[s], &x->m[s], x->c.d[s]->pdn, 1 << 16,
			      TERN_ACCESS_LOCAL_WRITE, 0x30 + s)) {
			if (s)
				mr_release(&x->m[0]);
			return false;
		}
		mr_fill(x->c.d[s], &x->m[s], 40 + s);
	}
	x->mrs = true;
	return true;
}

static void dfix_free(struct dfix *x)
{
	if (x->mrs) {
		mr_release(&x->m[0]);
		mr_release(&x->m[1]);
	}
	conn_free(&x->c);
}

/* Side 1 posts a 512-byte receive buffer per WQE (wr_id 100 + n); no doorbell, no record. */
static void recv_post(struct dfix *x, unsigned int n)
{
	struct sge sg = mr_sge(&x->m[1], RECV_OFF + 512ull * (n % 64), 512);

	post_recv(x->c.d[1], &x->c.qp[1], 100 + n, &sg, 1);
}

/* Side 0 sends @len bytes from offset 64 * @n of its MR (wr_id n). */
static void send_post(struct dfix *x, unsigned int n, uint32_t len)
{
	struct sge sg = mr_sge(&x->m[0], 64ull * n, len);

	post_send(x->c.d[0], &x->c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, n, &sg, 1, 0, 0, 0);
}

/* SENDs n0..n1-1 went through: both sides' CQEs right, the bytes intact. */
static void expect_sends(struct dfix *x, unsigned int n0, unsigned int n1, uint32_t len)
{
	unsigned int n;
	struct wc w;

	for (n = n0; n < n1; n++) {
		if (conn_poll(&x->c, 0, &w, 1, 10000000) != 1) {
			t_failures++;
			printf("#   no send CQE for %u\n", n);
			return;
		}
		CHECK_WC(&w, TERN_WQE_SEND, TERN_CQE_OK, n);
		if (conn_poll(&x->c, 1, &w, 1, 10000000) != 1) {
			t_failures++;
			printf("#   no receive CQE for %u\n", n);
			return;
		}
		CHECK_WC(&w, TERN_CQE_RECV, TERN_CQE_OK, 100 + n);
		CHECK_EQ(w.byte_len, len);
		CHECK_EQ(mr_diff_pattern(x->c.d[1], &x->m[1], RECV_OFF + 512ull * (n % 64), len, 40,
					 64ull * n), -1);
	}
}

/* Receives posted through the record alone (no RQ doorbell): SENDs land, nothing RNR'd. */
static void t_rec_send(void)
{
	struct connopt o;
	struct dfix x;
	unsigned int n;

	connopt_default(&o);
	RQ(dfix_setup(&x, &o));
	for (n = 0; n < 3; n++)
		recv_post(&x, n);
	rq_rec_write(x.c.d[1], &x.c.qp[1], x.c.qp[1].rq_pi);
	for (n = 0; n < 3; n++)
		send_post(&x, n, 200 + n);
	ring_sq(x.c.d[0], &x.c.qp[0]);
	for (n = 0; n < 3; n++)
		expect_sends(&x, n, n + 1, 200 + n);
	/* the device's view is empty again: the next SENDs make it read the record again */
	for (n = 3; n < 5; n++)
		recv_post(&x, n);
	rq_rec_write(x.c.d[1], &x.c.qp[1], x.c.qp[1].rq_pi);
	send_post(&x, 3, 64);
	send_post(&x, 4, 64);
	ring_sq(x.c.d[0], &x.c.qp[0]);
	expect_sends(&x, 3, 5, 64);
	CHECK_EQ(RDEV_STAT(x.c.d[1], out_of_buffer), 0);
	CHECK_EQ(RDEV_STAT(x.c.d[1], rnr_naks_sent), 0);
	CHECK_EQ(RDEV_STAT(x.c.d[1], db_rec_errors), 0);
	CHECK_EQ(qp_state(x.c.d[1], x.c.qp[1].qpn), TERN_QPS_RTS);
out:
	dfix_free(&x);
}

/* An empty record: RNR NAK; a receive posted through the record meanwhile serves the retry. */
static void t_rec_rnr(void)
{
	struct connopt o;
	struct dfix x;

	connopt_default(&o);
	RQ(dfix_setup(&x, &o));
	send_post(&x, 0, 300);
	ring_sq(x.c.d[0], &x.c.qp[0]);
	wire_pump(&x.c.w);
	CHECK_EQ(RDEV_STAT(x.c.d[1], rnr_naks_sent), 1);
	CHECK_EQ(RDEV_STAT(x.c.d[1], out_of_buffer), 1);
	CHECK(!cq_peek(x.c.d[0], &x.c.cq[0]));
	recv_post(&x, 0);
	rq_rec_write(x.c.d[1], &x.c.qp[1], x.c.qp[1].rq_pi);
	expect_sends(&x, 0, 1, 300);
	CHECK_EQ(RDEV_STAT(x.c.d[1], rnr_naks_sent), 1);
	CHECK_EQ(RDEV_STAT(x.c.d[1], db_rec_errors), 0);
out:
	dfix_free(&x);
}

/*
 * With a record, an RQ doorbell only says "read it": its producer index is not used (an
 * absurd one is neither taken nor a reason to ignore the record).
 */
static void t_rec_doorbell_hint(void)
{
	struct connopt o;
	struct dfix x;

	connopt_default(&o);
	RQ(dfix_setup(&x, &o));
	recv_post(&x, 0);
	rq_rec_write(x.c.d[1], &x.c.qp[1], x.c.qp[1].rq_pi);
	db64(x.c.d[1], x.c.qp[1].uar, TERN_UDB_RQ, tern_udb_wq(x.c.qp[1].qpn, 0x7fff));
	send_post(&x, 0, 100);
	ring_sq(x.c.d[0], &x.c.qp[0]);
	expect_sends(&x, 0, 1, 100);
	/* had the doorbell's 0x7fff been taken, a second SEND would find a "WQE" */
	send_post(&x, 1, 100);
	ring_sq(x.c.d[0], &x.c.qp[0]);
	wire_pump(&x.c.w);
	CHECK_EQ(RDEV_STAT(x.c.d[1], rnr_naks_sent), 1);
	CHECK_EQ(RDEV_STAT(x.c.d[1], db_rec_errors), 0);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
out:
	dfix_free(&x);
}

/*
 * A hostile record: a producer index more than the depth ahead of the device's consumer
 * index. Nothing is read beyond the ring (ASan watches), db_rec_errors counts it, the QP
 * goes to ERR with a fatal event and the requester sees the NAK.
 */
static void t_rec_bad(void)
{
	struct connopt o;
	struct dfix x;
	struct wc w;

	connopt_default(&o);
	RQ(dfix_setup(&x, &o));
	rq_rec_write(x.c.d[1], &x.c.qp[1], (uint16_t)((1u << o.rq_log) + 1));
	send_post(&x, 0, 100);
	ring_sq(x.c.d[0], &x.c.qp[0]);
	RQ(conn_poll(&x.c, 0, &w, 1, 10000000) == 1);
	CHECK_EQ(w.wr_id, 0);
	CHECK_EQ(w.status, TERN_CQE_REM_OP_ERR);
	CHECK_EQ(RDEV_STAT(x.c.d[1], db_rec_errors), 1);
	CHECK_EQ(qp_state(x.c.d[1], x.c.qp[1].qpn), TERN_QPS_ERR);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));	/* no WQE was taken: nothing to complete */
	/* 0xffff: "behind" the consumer index, as far ahead modulo 2^16: refused as well */
	rq_rec_write(x.c.d[1], &x.c.qp[1], 0xffff);
	db64(x.c.d[1], x.c.qp[1].uar, TERN_UDB_RQ, x.c.qp[1].qpn);
	wire_pump(&x.c.w);
	CHECK_EQ(RDEV_STAT(x.c.d[1], db_rec_errors), 2);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
out:
	dfix_free(&x);
}

/*
 * WQEs posted through the record only, then the QP to ERR: the flush reads the record and
 * completes them; one posted in ERR with the record and an RQ doorbell is flushed too.
 */
static void t_rec_err_flush(void)
{
	struct connopt o;
	struct qpattr a;
	struct dfix x;
	struct wc w;
	unsigned int n;

	connopt_default(&o);
	RQ(dfix_setup(&x, &o));
	recv_post(&x, 0);
	recv_post(&x, 1);
	rq_rec_write(x.c.d[1], &x.c.qp[1], x.c.qp[1].rq_pi);
	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_ERR;
	RQ(qp_modify(x.c.d[1], x.c.qp[1].qpn, TERN_QP_ATTR_STATE, &a, NULL) == 0);
	for (n = 0; n < 2; n++) {
		RQ(conn_poll(&x.c, 1, &w, 1, 1000000) == 1);
		CHECK_WC(&w, TERN_CQE_RECV, TERN_CQE_WR_FLUSH_ERR, 100 + n);
	}
	recv_post(&x, 2);
	rq_rec_write(x.c.d[1], &x.c.qp[1], x.c.qp[1].rq_pi);
	ring_rq(x.c.d[1], &x.c.qp[1]);
	RQ(conn_poll(&x.c, 1, &w, 1, 1000000) == 1);
	CHECK_WC(&w, TERN_CQE_RECV, TERN_CQE_WR_FLUSH_ERR, 102);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
	CHECK_EQ(RDEV_STAT(x.c.d[1], db_rec_errors), 0);
out:
	dfix_free(&x);
}

/*
 * Producer indices only move forward. An SQ doorbell moving PI back over WQEs the device
 * started (sent, not yet acknowledged) is ignored: exactly those WQEs complete, nothing after
 * them is read. An RQ record moved back (between the consumer index and the device's view) is
 * refused and counted: the WQEs posted before it still serve SENDs.
 */
static void t_pi_back(void)
{
	struct connopt o;
	struct dfix x;
	unsigned long logs;
	unsigned int n;
	struct wc w;

	connopt_default(&o);
	RQ(dfix_setup(&x, &o));
	for (n = 0; n < 6; n++)
		recv_post(&x, n);
	rq_rec_write(x.c.d[1], &x.c.qp[1], x.c.qp[1].rq_pi);
	for (n = 0; n < 4; n++)
		send_post(&x, n, 100 + n);
	ring_sq(x.c.d[0], &x.c.qp[0]);
	fk_run(&x.c.d[0]->f);		/* the 4 SENDs go out; the wire holds them */
	logs = x.c.d[0]->f.logs;
	db64(x.c.d[0], x.c.qp[0].uar, TERN_UDB_SQ, tern_udb_wq(x.c.qp[0].qpn, 1));
	fk_run(&x.c.d[0]->f);
	CHECK_EQ(x.c.d[0]->f.logs, logs + 1);
	for (n = 0; n < 4; n++)
		expect_sends(&x, n, n + 1, 100 + n);
	CHECK(conn_poll(&x.c, 0, &w, 1, 1000000) == 0);
	CHECK_EQ(qp_state(x.c.d[0], x.c.qp[0].qpn), TERN_QPS_RTS);
	/* RQ: consumer index 4, view 6; a record of 5 is behind the view */
	rq_rec_write(x.c.d[1], &x.c.qp[1], 5);
	db64(x.c.d[1], x.c.qp[1].uar, TERN_UDB_RQ, x.c.qp[1].qpn);
	wire_pump(&x.c.w);
	CHECK_EQ(RDEV_STAT(x.c.d[1], db_rec_errors), 1);
	rq_rec_write(x.c.d[1], &x.c.qp[1], x.c.qp[1].rq_pi);
	send_post(&x, 4, 64);
	send_post(&x, 5, 64);
	ring_sq(x.c.d[0], &x.c.qp[0]);
	expect_sends(&x, 4, 6, 64);
	CHECK_EQ(RDEV_STAT(x.c.d[1], rnr_naks_sent), 0);
	CHECK_EQ(qp_state(x.c.d[1], x.c.qp[1].qpn), TERN_QPS_RTS);
out:
	dfix_free(&x);
}

/* A driver from before db_rec_errors (or TIMELY's counters) asks for its length and gets it. */
static void t_stats_v1_len(void)
{
	typedef struct tern_cmd_rdma_stats_out T;
	struct rdev *d = rdev_new(0);
	uint8_t out[sizeof(T)];
	struct cqe c;

	RQ(d);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA_STATS, NULL, 0, out, TERN_RDMA_STATS_OUT_V1_LEN,
			  &c), TERN_CMD_OK);
	CHECK_EQ(c.out_len, TERN_RDMA_STATS_OUT_V1_LEN);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA_STATS, NULL, 0, out, sizeof(out), &c),
		 TERN_CMD_OK);
	CHECK_EQ(c.out_len, sizeof(T));
	/* a driver from before TIMELY's counters: V3, up to adaptive_retrans */
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA_STATS, NULL, 0, out, sizeof(out) - 1, &c),
		 TERN_CMD_OK);
	CHECK_EQ(c.out_len, TERN_RDMA_STATS_OUT_V3_LEN);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA_STATS, NULL, 0, out,
			  TERN_RDMA_STATS_OUT_V2_LEN - 1, &c), TERN_CMD_OK);
	CHECK_EQ(c.out_len, TERN_RDMA_STATS_OUT_V1_LEN);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA_STATS, NULL, 0, out,
			  TERN_RDMA_STATS_OUT_V1_LEN - 8, &c), TERN_CMD_BAD_LEN);
out:
	rdev_free(d);
}

const struct test rdma_dbrec_tests[] = {
	{ "rdma dbrec: receives posted through the record alone, re-read when empty",
	  t_rec_send },
	{ "rdma dbrec: empty record RNR-NAKs; a receive in the record serves the retry",
	  t_rec_rnr },
	{ "rdma dbrec: an RQ doorbell only says read the record (its PI unused)",
	  t_rec_doorbell_hint },
	{ "rdma dbrec: record beyond the depth: counted, QP to ERR, NAK, no overrun",
	  t_rec_bad },
	{ "rdma dbrec: ERR flushes WQEs known only from the record", t_rec_err_flush },
	{ "rdma dbrec: QUERY_RDMA_STATS answers a pre-record or pre-TIMELY driver's length",
	  t_stats_v1_len },
	{ "rdma dbrec: an SQ doorbell or an RQ record moving PI backwards is refused", t_pi_back },
	{ NULL, NULL },
};
