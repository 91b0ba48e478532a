/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * QP counter sets (TERN_RDMA_CAP_QP_COUNTERS): ALLOC/FREE_COUNTER, BIND_QP_COUNTER and
 * QUERY_COUNTER rules and limits (every set taken, sets and QPs that do not exist, a set
 * with QPs bound, DESTROY_QP unbinding), and traffic: two connections between two devices,
 * each QP of one device in its own set, each set counting exactly its QP's packets while the
 * port counts both; an unbound QP counts in no set.
 */
#include "test_rdma.h"

#define BQI	struct tern_cmd_bind_qp_counter_in
#define CSO	struct tern_cmd_counter_set_out
#define RDO	struct tern_cmd_query_rdma_out
#define CSTAT(buf, f)	rd64((buf) + OFF(CSO, f))

static int ctr_alloc(struct rdev *d, uint32_t *set)
{
	struct cqe c;
	int st = rdev_cmd(d, TERN_CMD_ALLOC_COUNTER, NULL, 0, NULL, 0, &c);

	*set = st ? 0 : c.result;
	return st;
}

static int ctr_one(struct rdev *d, uint16_t op, uint32_t set, struct cqe *c)
{
	uint8_t in[sizeof(struct tern_cmd_counter_in)];

	wr32(in, set);
	return rdev_cmd(d, op, in, sizeof(in), NULL, 0, c);
}

static int ctr_bind(struct rdev *d, uint32_t qpn, uint32_t set, uint32_t rsvd, struct cqe *c)
{
	uint8_t in[sizeof(BQI)];

	wr32(in + OFF(BQI, qpn), qpn);
	wr32(in + OFF(BQI, set), set);
	wr32(in + OFF(BQI, rsvd), rsvd);
	return rdev_cmd(d, TERN_CMD_BIND_QP_COUNTER, in, sizeof(in), NULL, 0, c);
}

static int ctr_query(struct rdev *d, uint32_t set, uint8_t out[sizeof(CSO)], struct cqe *c)
{
	uint8_t in[sizeof(struct tern_cmd_counter_in)];

	wr32(in, set);
	return rdev_cmd(d, TERN_CMD_QUERY_COUNTER, in, sizeof(in), out, sizeof(CSO), c);
}

static void t_ctr_cmds(void)
{
	struct rdev *d = rdev_new(0);
	uint8_t out[sizeof(RDO)], cs[sizeof(CSO)], in[4];
	uint32_t set[65], s;
	bool seen[65] = { false };
	struct rqp qp[2];
	unsigned int i, nqp = 0;
	struct rcq cq;
	struct cqe c;

	REQUIRE(d);
	REQUIRE(cq_create(d, &cq, 6, false) == TERN_CMD_OK);
	RQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA, NULL, 0, out, sizeof(out), NULL) == TERN_CMD_OK);
	CHECK(rd32(out + OFF(RDO, cap_flags)) & TERN_RDMA_CAP_QP_COUNTERS);
	CHECK_EQ(rd16(out + OFF(RDO, max_counter_sets)), 64);
	for (nqp = 0; nqp < 2; nqp++)
		RQ(qp_create(d, &qp[nqp], d->pdn, &cq, &cq, 4, 6, 4, 5, 0, false) ==
		   TERN_CMD_OK);

	/* every set, each once, numbered 1..64; then none */
	for (i = 0; i < 64; i++) {
		RQ(ctr_alloc(d, &set[i]) == TERN_CMD_OK);
		RQ(set[i] >= 1 && set[i] <= 64 && !seen[set[i]]);
		seen[set[i]] = true;
	}
	CHECK_EQ(ctr_alloc(d, &s), TERN_CMD_NO_RESOURCES);

	/* sets and QPs that do not exist, reserved bits, short buffers */
	CHECK_EQ(ctr_one(d, TERN_CMD_FREE_COUNTER, 0, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(c.syndrome, OFF(struct tern_cmd_counter_in, set));
	CHECK_EQ(ctr_one(d, TERN_CMD_FREE_COUNTER, 65, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(ctr_one(d, TERN_CMD_FREE_COUNTER, 0xffffffff, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(ctr_query(d, 0, cs, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(ctr_query(d, 256 + set[0], cs, &c), TERN_CMD_BAD_RESOURCE);
	wr32(in, set[0]);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_COUNTER, in, sizeof(in), cs, sizeof(cs) - 8, &c),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, sizeof(CSO));
	CHECK_EQ(rdev_cmd(d, TERN_CMD_FREE_COUNTER, in, 2, NULL, 0, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(ctr_bind(d, 0x00ffffff, set[0], 0, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(c.syndrome, OFF(BQI, qpn));
	CHECK_EQ(ctr_bind(d, 0xffffffff, set[0], 0, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(ctr_bind(d, qp[0].qpn, 65, 0, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(c.syndrome, OFF(BQI, set));
	CHECK_EQ(ctr_bind(d, qp[0].qpn, 0x80000001, 0, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(ctr_bind(d, qp[0].qpn, set[0], 1, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(BQI, rsvd));
	/* unbinding a QP bound to nothing changes nothing */
	CHECK_EQ(ctr_bind(d, qp[0].qpn, 0, 0, &c), TERN_CMD_OK);

	/* a set with QPs bound stays until the last one goes (unbind, move, DESTROY_QP) */
	RQ(ctr_bind(d, qp[0].qpn, set[0], 0, &c) == TERN_CMD_OK);
	CHECK_EQ(ctr_bind(d, qp[0].qpn, set[0], 0, &c), TERN_CMD_OK);	/* again: nothing */
	RQ(ctr_bind(d, qp[1].qpn, set[0], 0, &c) == TERN_CMD_OK);
	CHECK_EQ(ctr_one(d, TERN_CMD_FREE_COUNTER, set[0], &c), TERN_CMD_BAD_STATE);
	CHECK_EQ(c.syndrome, OFF(struct tern_cmd_counter_in, set));
	RQ(ctr_bind(d, qp[1].qpn, set[1], 0, &c) == TERN_CMD_OK);	/* moves */
	CHECK_EQ(ctr_one(d, TERN_CMD_FREE_COUNTER, set[0], &c), TERN_CMD_BAD_STATE);
	RQ(ctr_bind(d, qp[0].qpn, 0, 0, &c) == TERN_CMD_OK);
	CHECK_EQ(ctr_one(d, TERN_CMD_FREE_COUNTER, set[0], &c), TERN_CMD_OK);
	CHECK_EQ(ctr_one(d, TERN_CMD_FREE_COUNTER, set[0], &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(ctr_bind(d, qp[0].qpn, set[0], 0, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(ctr_one(d, TERN_CMD_FREE_COUNTER, set[1], &c), TERN_CMD_BAD_STATE);
	RQ(qp_destroy(d, &qp[1]) == TERN_CMD_OK);
	nqp = 1;
	CHECK_EQ(ctr_one(d, TERN_CMD_FREE_COUNTER, set[1], &c), TERN_CMD_OK);
	/* a freed set is taken again, zero */
	RQ(ctr_alloc(d, &s) == TERN_CMD_OK);
	CHECK(s == set[0] || s == set[1]);
	RQ(ctr_query(d, s, cs, &c) == TERN_CMD_OK);
	CHECK_EQ(c.out_len, sizeof(CSO));
	for (i = 0; i < sizeof(CSO); i++)
		CHECK_EQ(cs[i], 0);

	/* a device reset frees every set (and every QP: bound is none) */
	RQ(ctr_bind(d, qp[0].qpn, s, 0, &c) == TERN_CMD_OK);
	RQ(qp_destroy(d, &qp[0]) == TERN_CMD_OK);
	nqp = 0;
	cq_destroy(d, &cq);
	RQ(rdev_reset(d));
	REQUIRE(cq_create(d, &cq, 6, false) == TERN_CMD_OK);
	for (i = 0; i < 64; i++)
		RQ(ctr_alloc(d, &set[i]) == TERN_CMD_OK);
	CHECK_EQ(ctr_alloc(d, &s), TERN_CMD_NO_RESOURCES);
out:
	for (i = 0; i < nqp; i++)
		qp_destroy(d, &qp[i]);
	cq_destroy(d, &cq);
	rdev_free(d);
}

/* @n signaled WRITEs of @len bytes on @qp from @mr to the peer's @rmr, rung. */
static void writes(struct rdev *d, struct rqp *qp, const struct rmr *mr, const struct rmr *rmr,
		   unsigned int n, uint32_t len, uint64_t wr_id)
{
	struct sge sg;
	unsigned int i;

	for (i = 0; i < n; i++) {
		sg = mr_sge(mr, (uint64_t)i * len, len);
		post_send(d, qp, TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, wr_id + i, &sg, 1,
			  rmr->iova + (uint64_t)i * len, rmr->key, 0);
	}
	ring_sq(d, qp);
}

static void t_ctr_traffic(void)
{
	const uint32_t acc = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE;
	uint8_t a0[sizeof(CSO)], b0[sizeof(CSO)], a1[sizeof(CSO)], b1[sizeof(CSO)];
	uint8_t p0[sizeof(struct tern_cmd_rdma_stats_out)], p1[sizeof(p0)];
	struct rqp qb[2];
	bool have_qb[2] = { false, false }, mr_ok = false;
	uint32_t sa = 0, sb = 0;
	struct connopt o;
	struct rmr mr[2];
	struct conn c;
	struct wc w[64];
	struct cqe e;
	unsigned int s, i;

	connopt_default(&o);
	o.mtu = 3;		/* 1024 */
	RQ(conn_setup(&c, &o));
	for (s = 0; s < 2; s++) {
		RQ(qp_create_type(c.d[s], &qb[s], TERN_QPT_RC, c.d[s]->pdn, &c.cq[s], &c.cq[s],
				  o.sq_log, o.sq_stride, o.rq_log, o.rq_stride, 0, false) ==
		   TERN_CMD_OK);
		have_qb[s] = true;
	}
	for (s = 0; s < 2; s++)
		RQ(qp_connect(c.d[s], &qb[s], c.d[!s], qb[!s].qpn, &o, s));
	for (s = 0; s < 2; s++)
		RQ(mr_create(c.d[s], &mr[s], c.d[s]->pdn, 1 << 20, acc, 0) == 0);
	mr_ok = true;
	RQ(ctr_alloc(c.d[0], &sa) == TERN_CMD_OK);
	RQ(ctr_alloc(c.d[0], &sb) == TERN_CMD_OK);
	RQ(ctr_bind(c.d[0], c.qp[0].qpn, sa, 0, &e) == TERN_CMD_OK);
	RQ(ctr_bind(c.d[0], qb[0].qpn, sb, 0, &e) == TERN_CMD_OK);
	RQ(rdev_stats(c.d[0], p0));

	/* connection A: 8 x 16 KiB; connection B: 3 x 4 KiB */
	mr_fill(c.d[0], &mr[0], 7);
	writes(c.d[0], &c.qp[0], &mr[0], &mr[1], 8, 16384, 100);
	writes(c.d[0], &qb[0], &mr[0], &mr[1], 3, 4096, 200);
	RQ(conn_poll(&c, 0, w, 11, 50000000) == 11);
	for (i = 0; i < 11; i++)
		CHECK_EQ(w[i].status, TERN_CQE_OK);
	CHECK_EQ(mr_diff_pattern(c.d[1], &mr[1], 0, 8 * 16384, 7, 0), -1);
	RQ(rdev_stats(c.d[0], p1));
	RQ(ctr_query(c.d[0], sa, a0, &e) == TERN_CMD_OK);
	RQ(ctr_query(c.d[0], sb, b0, &e) == TERN_CMD_OK);

	/* each set has exactly its QP's packets: 16 per 16 KiB WRITE, 4 per 4 KiB */
	CHECK_EQ(CSTAT(a0, tx_roce_packets), 8 * 16);
	CHECK_EQ(CSTAT(b0, tx_roce_packets), 3 * 4);
	CHECK(CSTAT(a0, tx_roce_bytes) > 8 * 16384);
	CHECK(CSTAT(a0, tx_roce_bytes) < 8 * 16384 + 8 * 16 * 100);
	CHECK(CSTAT(b0, tx_roce_bytes) > 3 * 4096);
	CHECK(CSTAT(b0, tx_roce_bytes) < 3 * 4096 + 3 * 4 * 100);
	CHECK(CSTAT(a0, rx_roce_packets) >= 1);	/* ACKs */
	CHECK(CSTAT(b0, rx_roce_packets) >= 1);
	CHECK_EQ(CSTAT(a0, retrans_pkts), 0);
	/* the port counts both, as before */
#define DELTA(f) (RSTAT(p1, f) - RSTAT(p0, f))
	CHECK_EQ(DELTA(tx_roce_packets), CSTAT(a0, tx_roce_packets) + CSTAT(b0, tx_roce_packets));
	CHECK_EQ(DELTA(tx_roce_bytes), CSTAT(a0, tx_roce_bytes) + CSTAT(b0, tx_roce_bytes));
	CHECK_EQ(DELTA(rx_roce_packets), CSTAT(a0, rx_roce_packets) + CSTAT(b0, rx_roce_packets));
	CHECK_EQ(DELTA(rx_roce_bytes), CSTAT(a0, rx_roce_bytes) + CSTAT(b0, rx_roce_bytes));

	/* unbound, connection A counts in no set; the port still counts it */
	RQ(ctr_bind(c.d[0], c.qp[0].qpn, 0, 0, &e) == TERN_CMD_OK);
	writes(c.d[0], &c.qp[0], &mr[0], &mr[1], 2, 16384, 300);
	RQ(conn_poll(&c, 0, w, 2, 50000000) == 2);
	RQ(ctr_query(c.d[0], sa, a1, &e) == TERN_CMD_OK);
	RQ(ctr_query(c.d[0], sb, b1, &e) == TERN_CMD_OK);
	CHECK(!memcmp(a0, a1, sizeof(a0)));
	CHECK(!memcmp(b0, b1, sizeof(b0)));
	CHECK_EQ(RDEV_STAT(c.d[0], tx_roce_packets), RSTAT(p1, tx_roce_packets) + 2 * 16);
	/* the set keeps what it counted; with no QP it may go */
	CHECK_EQ(ctr_one(c.d[0], TERN_CMD_FREE_COUNTER, sa, &e), TERN_CMD_OK);
	sa = 0;
	/* DESTROY_QP unbinds: set B may go after */
	CHECK_EQ(ctr_one(c.d[0], TERN_CMD_FREE_COUNTER, sb, &e), TERN_CMD_BAD_STATE);
	RQ(qp_destroy(c.d[0], &qb[0]) == TERN_CMD_OK);
	have_qb[0] = false;
	CHECK_EQ(ctr_one(c.d[0], TERN_CMD_FREE_COUNTER, sb, &e), TERN_CMD_OK);
	sb = 0;
out:
	if (mr_ok) {
		mr_release(&mr[0]);
		mr_release(&mr[1]);
	}
	for (s = 0; s < 2; s++) {
		if (have_qb[s])
			qp_destroy(c.d[s], &qb[s]);
		qmem_free(&qb[s].sq);
		qmem_free(&qb[s].rq);
	}
	conn_free(&c);
}

const struct test rdma_ctr_tests[] = {
	{ "rdma ctr: ALLOC/FREE/BIND/QUERY_COUNTER rules, every set, DESTROY_QP unbinds",
	  t_ctr_cmds },
	{ "rdma ctr: a set counts its QP's packets only, the port counts all", t_ctr_traffic },
	{ NULL, NULL },
};
