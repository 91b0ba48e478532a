/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Go-back-N's adaptive retransmit timer (TERN_QP_XPORT_ADAPTIVE_RTO, Documentation/hw/rdma.rst
 * "Adaptive retransmit timer"), in virtual time: a lost tail is resent after the timeout
 * measured from the round trip, not the configured one, without using retry_cnt; a dead peer
 * still fails the QP after retry_cnt + 1 configured timeouts; without the bit nothing
 * changes; QUERY_QP reports the round trip and the timeout.
 */
#include "test_rdma.h"

#define QQO(f)		OFF(struct tern_cmd_query_qp_out, f)

/* Frames 0 -> 1 counted from when the filter is set; [from, from + n) of them are lost. */
struct rto_drop {
	unsigned int seen;
	unsigned int from, n;
};

static enum wire_action rto_filter(struct wire *w, unsigned int dir, unsigned int idx,
				   uint8_t *frame, size_t *len)
{
	struct rto_drop *b = w->ctx;
	unsigned int k;

	(void)frame;
	(void)len;
	(void)idx;
	if (dir != 0)
		return W_DELIVER;
	k = b->seen++;
	return k >= b->from && k - b->from < b->n ? W_DROP : W_DELIVER;
}

struct rto_pair {
	struct conn c;
	struct rmr m[2];
	bool mrs;
	struct rto_drop drop;
};

/* A go-back-N pair with @xport, timeout @timeout and retry_cnt @retry; the MRs filled. */
static bool rto_setup(struct rto_pair *p, uint32_t xport, uint8_t timeout, uint8_t retry)
{
	struct connopt o;

	memset(p, 0, sizeof(*p));
	connopt_default(&o);
	o.timeout = timeout;
	o.retry_cnt = retry;
	o.xport = xport;
	if (!conn_setup(&p->c, &o))
		return false;
	if (mr_create(p->c.d[0], &p->m[0], p->c.d[0]->pdn, 256 * 1024,
		      TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0))
		return false;
	if (mr_create(p->c.d[1], &p->m[1], p->c.d[1]->pdn, 256 * 1024,
		      TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0)) {
		mr_release(&p->m[0]);
		return false;
	}
	p->mrs = true;
	mr_fill(p->c.d[0], &p->m[0], 17);
	p->c.w.filter = rto_filter;
	p->c.w.ctx = &p->drop;
	return true;
}

static void rto_free(struct rto_pair *p)
{
	if (p->mrs) {
		mr_release(&p->m[0]);
		mr_release(&p->m[1]);
	}
	conn_free(&p->c);
}

/* A signaled WRITE of @len bytes to offset @off, wr_id @id: the completion, its time in *dt. */
static unsigned int rto_write(struct rto_pair *p, uint64_t off, uint32_t len, uint64_t id,
			      uint64_t max_ns, struct wc *w, uint64_t *dt)
{
	struct sge sg = mr_sge(&p->m[0], off, len);
	uint64_t t0 = wire_now(&p->c.w);
	unsigned int n;

	post_send(p->c.d[0], &p->c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, id, &sg, 1,
		  p->m[1].iova + off, p->m[1].key, 0);
	ring_sq(p->c.d[0], &p->c.qp[0]);
	n = conn_poll(&p->c, 0, w, 1, max_ns);
	*dt = wire_now(&p->c.w) - t0;
	return n;
}

static uint64_t rto_query(struct rto_pair *p, size_t field)
{
	uint8_t q[sizeof(struct tern_cmd_query_qp_out)];

	if (qp_query(p->c.d[0], p->c.qp[0].qpn, q))
		return ~0ull;
	return rd64(q + field);
}

/*
 * Timeout 14 (67 ms), a lost last packet: with the adaptive timer it is resent after the
 * measured timeout (well under a millisecond here), counted in adaptive_retrans, retry_cnt
 * untouched; without, after the full 67 ms, counted in local_ack_timeout_err.
 */
static void rto_tail(bool adaptive)
{
	struct rto_pair p;
	const uint64_t full = 4096ull << 14;
	uint64_t dt, srtt, rto;
	struct wc w;

	RQ(rto_setup(&p, adaptive ? TERN_QP_XPORT_ADAPTIVE_RTO : 0, 14, 7));
	/* before any sample: the configured timeout */
	CHECK_EQ(rto_query(&p, QQO(srtt_ns)), 0);
	CHECK_EQ(rto_query(&p, QQO(rto_ns)), full);
	/* a few clean WRITEs: the round trip is measured (with or without the bit) */
	for (unsigned int i = 0; i < 4; i++) {
		RQ(rto_write(&p, 0, 3000, 1, full, &w, &dt) == 1);
		CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	}
	srtt = rto_query(&p, QQO(srtt_ns));
	rto = rto_query(&p, QQO(rto_ns));
	CHECK(srtt > 0);
	CHECK(srtt < 1000000);
	if (adaptive) {
		CHECK(rto >= 8000);
		CHECK(rto < 1000000);
		CHECK(rto >= srtt);
	} else {
		CHECK_EQ(rto, full);
	}
	/* the next WRITE's third and last packet is lost */
	p.drop.seen = 0;
	p.drop.from = 2;
	p.drop.n = 1;
	RQ(rto_write(&p, 8192, 3000, 2, 2 * full, &w, &dt) == 1);
	CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 2);
	CHECK_EQ(mr_diff_pattern(p.c.d[1], &p.m[1], 8192, 3000, 17, 8192), -1);
	CHECK(RDEV_STAT(p.c.d[0], retrans_pkts) >= 1);
	if (adaptive) {
		CHECK(dt < 2000000);	/* a few ms at most, not 67 */
		CHECK_EQ(RDEV_STAT(p.c.d[0], adaptive_retrans), 1);
		CHECK_EQ(RDEV_STAT(p.c.d[0], local_ack_timeout_err), 0);
	} else {
		CHECK(dt >= full);
		CHECK_EQ(RDEV_STAT(p.c.d[0], adaptive_retrans), 0);
		CHECK_EQ(RDEV_STAT(p.c.d[0], local_ack_timeout_err), 1);
	}
	CHECK_EQ(qp_state(p.c.d[0], p.c.qp[0].qpn), TERN_QPS_RTS);
	printf("#   %s: srtt %llu ns, rto %.1f us, lost tail resent after %.1f us (timeout %.1f ms)\n",
	       adaptive ? "adaptive" : "configured", (unsigned long long)srtt, rto / 1e3, dt / 1e3, full / 1e6);
out:
	rto_free(&p);
}

static void t_rto_tail(void)
{
	rto_tail(true);
}

static void t_rto_off(void)
{
	rto_tail(false);
}

/*
 * Every frame lost after the round trip was measured: the measured timeout goes back N
 * early, doubling each time, but the QP fails with RETRY_EXC_ERR only after retry_cnt + 1
 * configured timeouts, each counted once in local_ack_timeout_err.
 */
static void t_rto_dead_peer(void)
{
	struct rto_pair p;
	const uint8_t retry = 2;
	const uint64_t full = 4096ull << 10;	/* 4.2 ms */
	uint64_t dt;
	struct wc w;

	RQ(rto_setup(&p, TERN_QP_XPORT_ADAPTIVE_RTO, 10, retry));
	for (unsigned int i = 0; i < 4; i++) {
		RQ(rto_write(&p, 0, 3000, 1, full, &w, &dt) == 1);
		CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	}
	p.drop.seen = 0;
	p.drop.from = 0;
	p.drop.n = ~0u;
	RQ(rto_write(&p, 8192, 3000, 2, 10 * full, &w, &dt) == 1);
	CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_RETRY_EXC_ERR, 2);
	CHECK_EQ(RDEV_STAT(p.c.d[0], local_ack_timeout_err), retry + 1);
	CHECK_EQ(RDEV_STAT(p.c.d[0], req_transport_retries_exceeded), 1);
	CHECK(RDEV_STAT(p.c.d[0], adaptive_retrans) >= 3);
	CHECK(dt >= (retry + 1) * full);
	CHECK(dt < (retry + 2) * full);
	CHECK_EQ(qp_state(p.c.d[0], p.c.qp[0].qpn), TERN_QPS_ERR);
	printf("#   dead peer: RETRY_EXC_ERR after %.1f ms (%u timeouts of %.1f ms), %llu early go-backs\n",
	       dt / 1e6, retry + 1, full / 1e6,
	       (unsigned long long)RDEV_STAT(p.c.d[0], adaptive_retrans));
out:
	rto_free(&p);
}

/*
 * QUERY_QP's trailing fields: a buffer of the reply of before them (TERN_QUERY_QP_OUT_V3_LEN)
 * is answered with that much; QUERY_RDMA_STATS of before adaptive_retrans likewise; the
 * capability is announced.
 */
static void t_rto_layout(void)
{
	struct rdev *d = rdev_new(0);
	uint8_t out[sizeof(struct tern_cmd_rdma_stats_out)];
	struct cqe c;

	RQ(d);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA, NULL, 0, out,
			  sizeof(struct tern_cmd_query_rdma_out), &c), TERN_CMD_OK);
	CHECK(rd32(out + OFF(struct tern_cmd_query_rdma_out, cap_flags)) &
	      TERN_RDMA_CAP_ADAPTIVE_RTO);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA_STATS, NULL, 0, out, sizeof(out), &c),
		 TERN_CMD_OK);
	CHECK_EQ(c.out_len, sizeof(out));
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA_STATS, NULL, 0, out,
			  TERN_RDMA_STATS_OUT_V3_LEN - 1, &c), TERN_CMD_OK);
	CHECK_EQ(c.out_len, TERN_RDMA_STATS_OUT_V2_LEN);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA_STATS, NULL, 0, out,
			  TERN_RDMA_STATS_OUT_V2_LEN - 1, &c), TERN_CMD_OK);
	CHECK_EQ(c.out_len, TERN_RDMA_STATS_OUT_V1_LEN);
out:
	rdev_free(d);
}

const struct test rdma_rto_tests[] = {
	{ "rdma rto: adaptive timer, timeout 67 ms: a lost tail resent after the measured RTO, "
	  "retry_cnt untouched", t_rto_tail },
	{ "rdma rto: adaptive timer off: the lost tail waits the configured timeout", t_rto_off },
	{ "rdma rto: adaptive timer, every frame lost: RETRY_EXC_ERR after retry_cnt + 1 "
	  "configured timeouts", t_rto_dead_peer },
	{ "rdma rto: capability, QUERY_RDMA_STATS lengths of before adaptive_retrans", t_rto_layout },
	{ NULL, NULL },
};
