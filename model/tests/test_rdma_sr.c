/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RC selective repeat (TERN_QP_XPORT_SR, Documentation/hw/rdma.rst "Selective repeat"), in
 * virtual time: MODIFY_QP's checks; random loss at 0.1 %, 1 % and 5 % with duplicates and
 * reordering, where every byte arrives and every verb (WRITE, WRITE_IMM, SEND, READ, both
 * atomics) completes OK and in order, atomics exactly once; bursts of consecutive losses and
 * a lost tail, resent selectively and probed before the timeout; and the same work with
 * go-back-N, whose virtual times the selective repeat runs are printed against.
 */
#include <stdlib.h>

#include "test_rdma.h"

#define TERNM_TEST_MAX_QPN	1024	/* the model's TERNM_MAX_QP */
#define TERNM_TEST_SR_MAX_BUFS	64	/* the model's TERNM_SR_MAX_BUFS */

static const uint32_t acc_all = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
				TERN_ACCESS_REMOTE_READ | TERN_ACCESS_REMOTE_ATOMIC;

/* ---- MODIFY_QP ------------------------------------------------------------------------- */

/*
 * INIT->RTR of @qp with transport options @xport (TERN_QP_ATTR_XPORT in the mask when
 * @with_bit), rq_psn @rq_psn; the completion in @cq.
 */
static int rtr_raw(struct rdev *d, struct rqp *qp, const struct rdev *peer, uint32_t rq_psn,
		   uint32_t xport, bool with_bit, struct cqe *cq)
{
	struct qpattr a;

	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_INIT;
	a.access = acc_all;
	if (qp_modify(d, qp->qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_ACCESS, &a, cq))
		return -1;
	a.state = TERN_QPS_RTR;
	{
		struct connopt o;

		connopt_default(&o);
		path_fill(&a, d, peer, &o);
	}
	a.path_mtu = 3;
	a.dest_qpn = 2;
	a.rq_psn = rq_psn;
	a.xport = xport;
	a.max_dest_rd_atomic = 1;
	return qp_modify(d, qp->qpn,
			 TERN_QP_ATTR_STATE | TERN_QP_ATTR_PATH | TERN_QP_ATTR_PATH_MTU |
			 TERN_QP_ATTR_DEST_QPN | TERN_QP_ATTR_RQ_PSN |
			 TERN_QP_ATTR_MAX_DEST_RD_ATOMIC | TERN_QP_ATTR_MIN_RNR_TIMER |
			 (with_bit ? TERN_QP_ATTR_XPORT : 0), &a, cq);
}

static int rtr_with(struct rdev *d, struct rqp *qp, const struct rdev *peer, uint32_t xport,
		    struct cqe *cq)
{
	return rtr_raw(d, qp, peer, 0x123, xport, true, cq);
}

#define QQO_XPORT	OFF(struct tern_cmd_query_qp_out, xport)
#define QQO_RQ_PSN	(OFF(struct tern_cmd_query_qp_out, attrs) + OFF(struct tern_qp_attrs, rq_psn))
#define MQI_XPORT	OFF(struct tern_cmd_modify_qp_in, xport)

/*
 * The xport field (TERN_QP_ATTR_XPORT): SR with the default or a cap of 2^4..2^8 is taken
 * and reported by QUERY_QP in its own field, rq_psn holding only the PSN; a cap without SR,
 * caps outside 4..8 and unknown bits are BAD_PARAM at the field's offset; QUERY_RDMA
 * announces TERN_RDMA_CAP_SR; RESET goes back to go-back-N.
 */
static void t_sr_modify(void)
{
	static const struct {
		uint32_t xport;
		int ok;
	} v[] = {
		{ 0, 1 }, { TERN_QP_XPORT_SR, 1 },
		{ TERN_QP_XPORT_SR | 4u << TERN_QP_XPORT_LOG_CAP_SHIFT, 1 },
		{ TERN_QP_XPORT_SR | 8u << TERN_QP_XPORT_LOG_CAP_SHIFT, 1 },
		{ TERN_QP_XPORT_SR | 3u << TERN_QP_XPORT_LOG_CAP_SHIFT, 0 },
		{ TERN_QP_XPORT_SR | 9u << TERN_QP_XPORT_LOG_CAP_SHIFT, 0 },
		{ 6u << TERN_QP_XPORT_LOG_CAP_SHIFT, 0 },
		{ TERN_QP_XPORT_SR | 1u << 2, 0 }, { 1u << 3, 0 }, { TERN_QP_XPORT_SR | 1u << 8, 0 },
		{ 1u << 31, 0 },
		/* the adaptive retransmit timer: alone or with SR, never with a cap without SR */
		{ TERN_QP_XPORT_ADAPTIVE_RTO, 1 }, { TERN_QP_XPORT_ADAPTIVE_RTO | TERN_QP_XPORT_SR, 1 },
		{ TERN_QP_XPORT_ADAPTIVE_RTO | 6u << TERN_QP_XPORT_LOG_CAP_SHIFT, 0 },
		{ TERN_QP_XPORT_ADAPTIVE_RTO | 1u << 2, 0 },
	};
	struct rdev *d[2] = { rdev_new(0), rdev_new(1) };
	uint8_t caps[sizeof(struct tern_cmd_query_rdma_out)];
	struct rcq cq;
	bool cq_ok = false;
	unsigned int i;

	RQ(d[0] && d[1]);
	RQ(rdev_cmd(d[0], TERN_CMD_QUERY_RDMA, NULL, 0, caps, sizeof(caps), NULL) == 0);
	CHECK(rd32(caps + OFF(struct tern_cmd_query_rdma_out, cap_flags)) & TERN_RDMA_CAP_SR);
	RQ(cq_create(d[0], &cq, 6, false) == 0);
	cq_ok = true;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t out[sizeof(struct tern_cmd_query_qp_out)];
		struct rqp qp;
		struct cqe c;
		int st;

		RQ(qp_create(d[0], &qp, d[0]->pdn, &cq, &cq, 4, 6, 4, 5, 0, false) == 0);
		st = rtr_with(d[0], &qp, d[1], v[i].xport, &c);
		if (v[i].ok) {
			CHECK_EQ(st, 0);
			RQ(qp_query(d[0], qp.qpn, out) == 0);
			CHECK_EQ(rd32(out + QQO_RQ_PSN), 0x123);
			CHECK_EQ(rd32(out + QQO_XPORT), v[i].xport);
			/* RESET: back to go-back-N */
			{
				struct qpattr a;
				struct cqe r;

				memset(&a, 0, sizeof(a));
				a.state = TERN_QPS_RESET;
				CHECK_EQ(qp_modify(d[0], qp.qpn, TERN_QP_ATTR_STATE, &a, &r), 0);
				RQ(qp_query(d[0], qp.qpn, out) == 0);
				CHECK_EQ(rd32(out + QQO_XPORT), 0);
			}
		} else {
			CHECK_EQ(st, TERN_CMD_BAD_PARAM);
			CHECK_EQ(c.syndrome, MQI_XPORT);
			RQ(qp_query(d[0], qp.qpn, out) == 0);
			CHECK_EQ(out[OFF(struct tern_cmd_query_qp_out, attrs) +
				     OFF(struct tern_qp_attrs, state)], TERN_QPS_INIT);
		}
		CHECK_EQ(qp_destroy(d[0], &qp), 0);
	}
out:
	if (cq_ok)
		cq_destroy(d[0], &cq);
	rdev_free(d[0]);
	rdev_free(d[1]);
}

/* MODIFY_QP's input as qp_modify() would send it, for the tests that change its bytes. */
static void rtr_input(struct rdev *d, const struct rdev *peer, uint32_t qpn, uint32_t xport,
		      uint8_t in[sizeof(struct tern_cmd_modify_qp_in)])
{
	typedef struct tern_cmd_modify_qp_in T;
	struct connopt o;
	struct qpattr a;

	memset(&a, 0, sizeof(a));
	connopt_default(&o);
	path_fill(&a, d, peer, &o);
	a.state = TERN_QPS_RTR;
	a.path_mtu = 3;
	a.dest_qpn = 2;
	a.rq_psn = 0x123;
	a.max_dest_rd_atomic = 1;
	memset(in, 0, sizeof(T));
	wr32(in + OFF(T, qpn), qpn);
	wr32(in + OFF(T, attr_mask),
	     TERN_QP_ATTR_STATE | TERN_QP_ATTR_PATH | TERN_QP_ATTR_PATH_MTU |
	     TERN_QP_ATTR_DEST_QPN | TERN_QP_ATTR_RQ_PSN | TERN_QP_ATTR_MAX_DEST_RD_ATOMIC |
	     TERN_QP_ATTR_MIN_RNR_TIMER | (xport ? TERN_QP_ATTR_XPORT : 0));
	qpattr_encode(&a, in + OFF(T, attrs));
	wr32(in + OFF(T, xport), xport);
}

static int to_init(struct rdev *d, uint32_t qpn)
{
	struct qpattr a;
	struct cqe c;

	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_INIT;
	a.access = acc_all;
	return qp_modify(d, qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_ACCESS, &a, &c);
}

/*
 * The layout around the xport field: rq_psn's bits 31:24 are reserved (the options' old
 * place included); a value without TERN_QP_ATTR_XPORT, rsvd nonzero, and the bit at
 * RTR->RTS or on UC/UD QPs are refused, SQD->SQD takes it; the input of before the field
 * (TERN_MODIFY_QP_IN_V1_LEN) is taken as xport 0, go-back-N; QUERY_QP answers the reply of
 * before the field (TERN_QUERY_QP_OUT_V2_LEN) without it.
 */
static void t_sr_xport_layout(void)
{
	typedef struct tern_cmd_modify_qp_in T;
	typedef struct tern_cmd_query_qp_out Q;
	struct rdev *d[2] = { rdev_new(0), rdev_new(1) };
	uint8_t in[sizeof(T)], out[sizeof(Q)], k4[4];
	struct rqp qp, uc, ud;
	struct qpattr a;
	struct rcq cq;
	struct cqe c;
	bool cq_ok = false;

	RQ(d[0] && d[1]);
	RQ(cq_create(d[0], &cq, 6, false) == 0);
	cq_ok = true;
	RQ(qp_create(d[0], &qp, d[0]->pdn, &cq, &cq, 4, 6, 4, 5, 0, false) == 0);

	/* rq_psn 31:24 reserved: the old place of the SR bit, and any other */
	CHECK_EQ(rtr_raw(d[0], &qp, d[1], 0x123 | 1u << 31, 0, false, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(T, attrs) + OFF(struct tern_qp_attrs, rq_psn));
	CHECK_EQ(rtr_raw(d[0], &qp, d[1], 0x123 | 1u << 24, TERN_QP_XPORT_SR, true, &c),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(T, attrs) + OFF(struct tern_qp_attrs, rq_psn));
	/* a value without the mask bit, as any unselected attribute */
	rtr_input(d[0], d[1], qp.qpn, TERN_QP_XPORT_SR, in);
	wr32(in + OFF(T, attr_mask), rd32(in + OFF(T, attr_mask)) & ~TERN_QP_ATTR_XPORT);
	CHECK_EQ(qp_modify_raw(d[0], in, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, MQI_XPORT);
	/* rsvd */
	rtr_input(d[0], d[1], qp.qpn, TERN_QP_XPORT_SR, in);
	wr32(in + OFF(T, rsvd), 1);
	CHECK_EQ(qp_modify_raw(d[0], in, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(T, rsvd));
	CHECK_EQ(qp_state(d[0], qp.qpn), TERN_QPS_INIT);

	/* the input of before xport: its length taken, what follows it not read */
	rtr_input(d[0], d[1], qp.qpn, 0, in);
	memset(in + TERN_MODIFY_QP_IN_V1_LEN, 0xff, sizeof(in) - TERN_MODIFY_QP_IN_V1_LEN);
	CHECK_EQ(rdev_cmd(d[0], TERN_CMD_MODIFY_QP, in, TERN_MODIFY_QP_IN_V1_LEN, NULL, 0, &c),
		 TERN_CMD_OK);
	CHECK_EQ(qp_state(d[0], qp.qpn), TERN_QPS_RTR);
	RQ(qp_query(d[0], qp.qpn, out) == 0);
	CHECK_EQ(rd32(out + QQO_XPORT), 0);
	CHECK_EQ(rd32(out + QQO_RQ_PSN), 0x123);
	/* other lengths are not */
	CHECK_EQ(rdev_cmd(d[0], TERN_CMD_MODIFY_QP, in, TERN_MODIFY_QP_IN_V1_LEN + 4, NULL, 0, &c),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, sizeof(T));
	CHECK_EQ(rdev_cmd(d[0], TERN_CMD_MODIFY_QP, in, TERN_MODIFY_QP_IN_V1_LEN - 4, NULL, 0, &c),
		 TERN_CMD_BAD_LEN);

	/* RTR->RTS does not take the field, even with a value the RTR would */
	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	a.xport = TERN_QP_XPORT_SR;
	CHECK_EQ(qp_modify(d[0], qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_SQ_PSN |
			   TERN_QP_ATTR_TIMEOUT | TERN_QP_ATTR_RETRY_CNT | TERN_QP_ATTR_RNR_RETRY |
			   TERN_QP_ATTR_MAX_RD_ATOMIC | TERN_QP_ATTR_XPORT, &a, &c),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(T, attr_mask));
	CHECK_EQ(qp_state(d[0], qp.qpn), TERN_QPS_RTR);

	/*
	 * SQD->SQD on a drained QP takes the field: on, kept by a new rq_psn without the bit,
	 * off again
	 */
	CHECK_EQ(qp_modify(d[0], qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_SQ_PSN |
			   TERN_QP_ATTR_TIMEOUT | TERN_QP_ATTR_RETRY_CNT | TERN_QP_ATTR_RNR_RETRY |
			   TERN_QP_ATTR_MAX_RD_ATOMIC, &a, &c), 0);
	a.state = TERN_QPS_SQD;
	CHECK_EQ(qp_modify(d[0], qp.qpn, TERN_QP_ATTR_STATE, &a, &c), 0);
	a.xport = TERN_QP_XPORT_SR | 6u << TERN_QP_XPORT_LOG_CAP_SHIFT;
	CHECK_EQ(qp_modify(d[0], qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_XPORT, &a, &c), 0);
	RQ(qp_query(d[0], qp.qpn, out) == 0);
	CHECK_EQ(rd32(out + QQO_XPORT), TERN_QP_XPORT_SR | 6u << TERN_QP_XPORT_LOG_CAP_SHIFT);
	a.rq_psn = 0x456;
	CHECK_EQ(qp_modify(d[0], qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_RQ_PSN, &a, &c), 0);
	RQ(qp_query(d[0], qp.qpn, out) == 0);
	CHECK_EQ(rd32(out + QQO_XPORT), TERN_QP_XPORT_SR | 6u << TERN_QP_XPORT_LOG_CAP_SHIFT);
	CHECK_EQ(rd32(out + QQO_RQ_PSN), 0x456);
	a.xport = 0;
	CHECK_EQ(qp_modify(d[0], qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_XPORT, &a, &c), 0);
	RQ(qp_query(d[0], qp.qpn, out) == 0);
	CHECK_EQ(rd32(out + QQO_XPORT), 0);
	CHECK_EQ(qp_state(d[0], qp.qpn), TERN_QPS_SQD);

	/* QUERY_QP: the field for a full buffer, not for one of before it */
	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_RESET;
	CHECK_EQ(qp_modify(d[0], qp.qpn, TERN_QP_ATTR_STATE, &a, &c), 0);
	CHECK_EQ(rtr_with(d[0], &qp, d[1], TERN_QP_XPORT_SR | 5u << TERN_QP_XPORT_LOG_CAP_SHIFT,
			  &c), 0);
	wr32(k4, qp.qpn);
	CHECK_EQ(rdev_cmd(d[0], TERN_CMD_QUERY_QP, k4, 4, out, sizeof(out), &c), TERN_CMD_OK);
	CHECK_EQ(c.out_len, sizeof(Q));
	CHECK_EQ(rd32(out + QQO_XPORT), TERN_QP_XPORT_SR | 5u << TERN_QP_XPORT_LOG_CAP_SHIFT);
	CHECK_EQ(rd32(out + OFF(Q, rsvd1)), 0);
	CHECK_EQ(rd32(out + QQO_RQ_PSN), 0x123);
	CHECK_EQ(rdev_cmd(d[0], TERN_CMD_QUERY_QP, k4, 4, out, sizeof(out) - 1, &c), TERN_CMD_OK);
	CHECK_EQ(c.out_len, TERN_QUERY_QP_OUT_V4_LEN);
	CHECK_EQ(rd32(out + QQO_XPORT), TERN_QP_XPORT_SR | 5u << TERN_QP_XPORT_LOG_CAP_SHIFT);
	/* the device wrote no byte past that (the mailbox is filled with 0xaa before) */
	CHECK_EQ(fk_ptr(&d[0]->f, d[0]->f.out_mb, sizeof(Q))[TERN_QUERY_QP_OUT_V4_LEN], 0xaa);
	CHECK_EQ(rdev_cmd(d[0], TERN_CMD_QUERY_QP, k4, 4, out, TERN_QUERY_QP_OUT_V3_LEN - 1, &c),
		 TERN_CMD_OK);
	CHECK_EQ(c.out_len, TERN_QUERY_QP_OUT_V2_LEN);
	CHECK_EQ(fk_ptr(&d[0]->f, d[0]->f.out_mb, sizeof(Q))[QQO_XPORT], 0xaa);
	CHECK_EQ(rd32(out + QQO_RQ_PSN), 0x123);
	CHECK_EQ(rdev_cmd(d[0], TERN_CMD_QUERY_QP, k4, 4, out, TERN_QUERY_QP_OUT_V2_LEN, &c),
		 TERN_CMD_OK);
	CHECK_EQ(c.out_len, TERN_QUERY_QP_OUT_V2_LEN);
	CHECK_EQ(rdev_cmd(d[0], TERN_CMD_QUERY_QP, k4, 4, out, TERN_QUERY_QP_OUT_V2_LEN - 1, &c),
		 TERN_CMD_OK);
	CHECK_EQ(c.out_len, TERN_QUERY_QP_OUT_V1_LEN);
	CHECK_EQ(qp_destroy(d[0], &qp), 0);

	/* UC: the mask bit is refused at INIT->RTR like any attribute UC does not have */
	RQ(qp_create_type(d[0], &uc, TERN_QPT_UC, d[0]->pdn, &cq, &cq, 4, 6, 4, 5, 0, false) == 0);
	CHECK_EQ(to_init(d[0], uc.qpn), 0);
	rtr_input(d[0], d[1], uc.qpn, TERN_QP_XPORT_SR, in);
	wr32(in + OFF(T, attr_mask),
	     TERN_QP_ATTR_STATE | TERN_QP_ATTR_PATH | TERN_QP_ATTR_PATH_MTU |
	     TERN_QP_ATTR_DEST_QPN | TERN_QP_ATTR_RQ_PSN | TERN_QP_ATTR_XPORT);
	wr32(in + OFF(T, attrs) + OFF(struct tern_qp_attrs, max_dest_rd_atomic), 0);
	CHECK_EQ(qp_modify_raw(d[0], in, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(T, attr_mask));
	/* the same without the bit and the value: taken */
	wr32(in + OFF(T, attr_mask),
	     TERN_QP_ATTR_STATE | TERN_QP_ATTR_PATH | TERN_QP_ATTR_PATH_MTU |
	     TERN_QP_ATTR_DEST_QPN | TERN_QP_ATTR_RQ_PSN);
	wr32(in + OFF(T, xport), 0);
	CHECK_EQ(qp_modify_raw(d[0], in, &c), TERN_CMD_OK);
	CHECK_EQ(qp_destroy(d[0], &uc), 0);

	/* UD: likewise, at INIT->RTR */
	RQ(ud_create(d[0], &ud, TERN_QPT_UD, &cq, 7, NULL) == TERN_CMD_OK);
	CHECK_EQ(ud_modify(d[0], ud.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_QKEY, TERN_QPS_INIT,
			   0x11111111, 0, &c), 0);
	memset(in, 0, sizeof(in));
	wr32(in + OFF(T, qpn), ud.qpn);
	wr32(in + OFF(T, attr_mask), TERN_QP_ATTR_STATE | TERN_QP_ATTR_XPORT);
	in[OFF(T, attrs) + OFF(struct tern_qp_attrs, state)] = TERN_QPS_RTR;
	wr32(in + OFF(T, xport), TERN_QP_XPORT_SR);
	CHECK_EQ(qp_modify_raw(d[0], in, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(T, attr_mask));
	CHECK_EQ(ud_modify(d[0], ud.qpn, TERN_QP_ATTR_STATE, TERN_QPS_RTR, 0, 0, &c), 0);
	CHECK_EQ(qp_destroy(d[0], &ud), 0);
out:
	if (cq_ok)
		cq_destroy(d[0], &cq);
	rdev_free(d[0]);
	rdev_free(d[1]);
}

/* ---- a mixed workload under loss ----------------------------------------------------------- */

#define MB		(1u << 20)
#define BULK		MB		/* bytes of the bulk WRITE and READ */
#define SLOT(k)		(MB + (uint64_t)((k) % 192) * 8192)
#define CNT_OFF		(3 * MB + 512 * 1024)	/* the atomics' counter (side 1) */
#define RES_OFF(k)	(CNT_OFF + 64 + 8 * (uint64_t)(k))	/* their results (side 0) */
#define ROUNDS		6
#define PER_ROUND	36

struct sr_result {
	uint64_t t_write, t_read, t_mix;	/* virtual ns */
	uint64_t retrans, sel, probes, ooo, timeouts, dropped;
};

/*
 * On a fresh pair (selective repeat on or off), with @drop/@dup/@reorder ppm on both ports:
 * a bulk WRITE and a bulk READ of BULK bytes, then ROUNDS rounds of PER_ROUND WQEs of every
 * kind, checked completely. Returns false (reported) when anything was wrong.
 */
static bool sr_run(bool sr, uint32_t drop, uint32_t dup, uint32_t reorder, uint64_t seed,
		   struct sr_result *res)
{
	struct connopt o;
	struct conn c;
	struct rmr src[2], dst[2];
	unsigned int s, round, i, natomic = 0;
	int f0 = t_failures;
	bool mrs = false, conn = false;
	const uint64_t mrlen = 4 * MB;
	struct sge sg;
	struct wc w;
	uint64_t t0;

	memset(res, 0, sizeof(*res));
	connopt_default(&o);
	o.timeout = 8;			/* 1 ms */
	o.retry_cnt = 7;
	o.xport = sr ? TERN_QP_XPORT_SR : 0;
	o.access = TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_REMOTE_READ | TERN_ACCESS_REMOTE_ATOMIC;
	RQ(conn_setup(&c, &o));
	conn = true;
	for (s = 0; s < 2; s++) {
		RQ(mr_create(c.d[s], &src[s], c.d[s]->pdn, mrlen, acc_all, 0x30) == 0);
		RQ(mr_create(c.d[s], &dst[s], c.d[s]->pdn, mrlen, acc_all, 0x50) == 0);
		mr_fill(c.d[s], &src[s], 40 + s);
		RQ(faults_set(c.d[s], drop, 0, dup, reorder, seed + s) == TERN_CMD_OK);
	}
	mrs = true;
	{
		uint8_t z[8] = { 0 };

		mr_write(c.d[1], &dst[1], CNT_OFF, z, 8);
	}

	/* bulk WRITE 0 -> 1 */
	t0 = wire_now(&c.w);
	sg = mr_sge(&src[0], 0, BULK);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  dst[1].iova, dst[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 5000000000ull) == 1);
	res->t_write = wire_now(&c.w) - t0;
	CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &dst[1], 0, BULK, 40, 0), -1);
	wire_clear_log(&c.w);

	/* bulk READ by 0 from 1 */
	t0 = wire_now(&c.w);
	sg = mr_sge(&dst[0], 0, BULK);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 2, &sg, 1,
		  src[1].iova + 100, src[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 5000000000ull) == 1);
	res->t_read = wire_now(&c.w) - t0;
	CHECK_WC(&w, TERN_WQE_RDMA_READ, TERN_CQE_OK, 2);
	CHECK_EQ(mr_diff_pattern(c.d[0], &dst[0], 0, BULK, 41, 100), -1);
	wire_clear_log(&c.w);

	/* rounds of every kind at once: SEND, WRITE, WRITE_IMM, READ, FETCH_ADD, CMP_SWAP */
	t0 = wire_now(&c.w);
	for (round = 0; round < ROUNDS && t_failures == f0; round++) {
		struct wc wcs[PER_ROUND];
		unsigned int got, recvs = 0, k0 = round * PER_ROUND, n;

		for (i = 0; i < PER_ROUND; i++) {
			unsigned int k = k0 + i;
			uint32_t len = 1 + (k * 2654435761u) % 5000;
			struct sge r;

			switch (i % 6) {
			case 0:		/* SEND */
			case 2:		/* WRITE_IMM: its receive WQE takes nothing */
				r = mr_sge(&dst[1], SLOT(k), 8192);
				post_recv(c.d[1], &c.qp[1], k, &r, 1);
				recvs++;
				sg = mr_sge(&src[0], SLOT(k) + 1, len);
				post_send(c.d[0], &c.qp[0], i % 6 == 0 ? TERN_WQE_SEND :
					  TERN_WQE_RDMA_WRITE_IMM, TERN_WQE_F_SIGNALED, k, &sg, 1,
					  dst[1].iova + SLOT(k), dst[1].key, 0xab000000u | k);
				break;
			case 1:
				sg = mr_sge(&src[0], SLOT(k) + 1, len);
				post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED,
					  k, &sg, 1, dst[1].iova + SLOT(k), dst[1].key, 0);
				break;
			case 3:
				sg = mr_sge(&dst[0], SLOT(k), len);
				post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED,
					  k, &sg, 1, src[1].iova + SLOT(k) + 1, src[1].key, 0);
				break;
			case 4:
				sg = mr_sge(&dst[0], RES_OFF(natomic), 8);
				post_atomic(c.d[0], &c.qp[0], TERN_WQE_ATOMIC_FETCH_ADD, k, &sg,
					    dst[1].iova + CNT_OFF, dst[1].key, 1, 0);
				natomic++;
				break;
			default:
				/* executed in order, once: the counter holds natomic by then */
				sg = mr_sge(&dst[0], RES_OFF(natomic), 8);
				post_atomic(c.d[0], &c.qp[0], TERN_WQE_ATOMIC_CMP_SWP, k, &sg,
					    dst[1].iova + CNT_OFF, dst[1].key, natomic + 1,
					    natomic);
				natomic++;
				break;
			}
		}
		ring_rq(c.d[1], &c.qp[1]);
		ring_sq(c.d[0], &c.qp[0]);
		got = conn_poll(&c, 0, wcs, PER_ROUND, 5000000000ull);
		CHECK_EQ(got, PER_ROUND);
		for (i = 0; i < got; i++) {
			unsigned int k = k0 + i;
			uint32_t len = 1 + (k * 2654435761u) % 5000;

			CHECK_EQ(wcs[i].status, TERN_CQE_OK);
			CHECK_EQ(wcs[i].wr_id, k);
			if (i % 6 == 3)
				CHECK_EQ(mr_diff_pattern(c.d[0], &dst[0], SLOT(k), len, 41,
							 SLOT(k) + 1), -1);
			else if (i % 6 < 3)
				CHECK_EQ(mr_diff_pattern(c.d[1], &dst[1], SLOT(k), len, 40,
							 SLOT(k) + 1), -1);
		}
		n = conn_poll(&c, 1, wcs, recvs, 100000000ull);
		CHECK_EQ(n, recvs);
		for (i = 0; i < n; i++) {
			unsigned int k = k0 + 6 * (i / 2) + (i % 2 ? 2 : 0);
			uint32_t len = 1 + (k * 2654435761u) % 5000;

			CHECK_EQ(wcs[i].status, TERN_CQE_OK);
			CHECK_EQ(wcs[i].wr_id, k);
			CHECK_EQ(wcs[i].byte_len, len);
			if (i % 2) {
				CHECK_EQ(wcs[i].opcode, TERN_CQE_RECV_RDMA_WRITE_IMM);
				CHECK_EQ(wcs[i].imm, 0xab000000u | k);
			} else {
				CHECK_EQ(wcs[i].opcode, TERN_CQE_RECV);
			}
		}
		wire_clear_log(&c.w);
	}
	res->t_mix = wire_now(&c.w) - t0;
	/* atomics: each executed exactly once, in order */
	{
		uint8_t b[8];

		mr_read(c.d[1], &dst[1], CNT_OFF, b, 8);
		CHECK_EQ(rd64(b), natomic);
		for (i = 0; i < natomic; i++) {
			mr_read(c.d[0], &dst[0], RES_OFF(i), b, 8);
			CHECK_EQ(rd64(b), i);
		}
	}
	for (s = 0; s < 2; s++) {
		uint8_t q[sizeof(struct tern_cmd_query_wire_faults_out)];

		res->retrans += RDEV_STAT(c.d[s], retrans_pkts);
		res->sel += RDEV_STAT(c.d[s], selective_retrans_pkts);
		res->probes += RDEV_STAT(c.d[s], tail_loss_probes);
		res->ooo += RDEV_STAT(c.d[s], out_of_order_accepted);
		res->timeouts += RDEV_STAT(c.d[s], local_ack_timeout_err);
		if (!rdev_cmd(c.d[s], TERN_CMD_QUERY_WIRE_FAULTS, NULL, 0, q, sizeof(q), NULL))
			res->dropped += rd64(q + OFF(struct tern_cmd_query_wire_faults_out,
						       dropped));
		CHECK_EQ(qp_state(c.d[s], c.qp[s].qpn), TERN_QPS_RTS);
		CHECK(!cq_peek(c.d[s], &c.cq[s]));
		if (!sr) {
			CHECK_EQ(RDEV_STAT(c.d[s], selective_retrans_pkts), 0);
			CHECK_EQ(RDEV_STAT(c.d[s], tail_loss_probes), 0);
			CHECK_EQ(RDEV_STAT(c.d[s], out_of_order_accepted), 0);
		}
	}
out:
	if (mrs) {
		for (s = 0; s < 2; s++) {
			mr_release(&src[s]);
			mr_release(&dst[s]);
		}
	}
	if (conn)
		conn_free(&c);
	return t_failures == f0;
}

static void sr_print(const char *what, const struct sr_result *r)
{
	printf("#   %-4s WRITE %7.1f us READ %7.1f us mix %7.1f us: dropped %llu, resent %llu "
	       "(selective %llu), probes %llu, ooo kept %llu, timeouts %llu\n", what,
	       r->t_write / 1e3, r->t_read / 1e3, r->t_mix / 1e3,
	       (unsigned long long)r->dropped, (unsigned long long)r->retrans,
	       (unsigned long long)r->sel, (unsigned long long)r->probes,
	       (unsigned long long)r->ooo, (unsigned long long)r->timeouts);
}

/* The workload at @ppm random loss with selective repeat, then with go-back-N for comparison. */
static void sr_loss(uint32_t ppm, uint32_t dup, uint32_t reorder)
{
	struct sr_result sr, gbn;

	if (!sr_run(true, ppm, dup, reorder, 7000 + ppm, &sr))
		return;
	sr_print("SR", &sr);
	if (ppm >= 10000) {
		CHECK(sr.sel > 0);
		CHECK(sr.ooo > 0);
	}
	if (!sr_run(false, ppm, dup, reorder, 7000 + ppm, &gbn))
		return;
	sr_print("GBN", &gbn);
	/* at 1 % and more, resending only what is missing costs less wire and time */
	if (ppm >= 10000) {
		CHECK(sr.retrans < gbn.retrans);
		CHECK(sr.t_write <= gbn.t_write);
	}
}

static void t_sr_loss_01(void)
{
	sr_loss(1000, 0, 0);
}

static void t_sr_loss_1(void)
{
	sr_loss(10000, 0, 0);
}

static void t_sr_loss_5(void)
{
	sr_loss(50000, 0, 0);
}

static void t_sr_dup_reorder(void)
{
	sr_loss(10000, 20000, 20000);
}

/* ---- bursts and the tail ---------------------------------------------------------------- */

struct burst {
	unsigned int seen;	/* frames 0 -> 1 so far */
	unsigned int from, n;	/* of those, [from, from + n) are dropped */
};

static enum wire_action burst_filter(struct wire *w, unsigned int dir, unsigned int idx,
				     uint8_t *frame, size_t *len)
{
	struct burst *b = w->ctx;
	unsigned int k;

	(void)frame;
	(void)len;
	(void)idx;
	if (dir != 0)
		return W_DELIVER;
	k = b->seen++;
	return k >= b->from && k < b->from + b->n ? W_DROP : W_DELIVER;
}

/*
 * A WRITE of 120 packets loses 10 consecutive ones in the middle: those 10 are resent
 * selectively, nothing else, and no timeout runs. Then a 3-packet WRITE loses its last
 * packet: the tail-loss probe resends it after the probe time (from the measured round
 * trip), well before an eighth of the timeout.
 */
static void t_sr_burst_tail(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	bool mrs = false;
	struct burst b = { 0, 30, 10 };
	struct sge sg;
	struct wc w;
	uint64_t t0, dt, tmo = 4096ull << 8;

	connopt_default(&o);
	o.timeout = 8;
	o.retry_cnt = 7;
	o.xport = TERN_QP_XPORT_SR;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 256 * 1024, acc_all, 0) == 0);
	if (mr_create(c.d[1], &m[1], c.d[1]->pdn, 256 * 1024, acc_all, 0) != 0) {
		mr_release(&m[0]);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &m[0], 9);
	c.w.filter = burst_filter;
	c.w.ctx = &b;

	t0 = wire_now(&c.w);
	sg = mr_sge(&m[0], 0, 120 * 1024);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  m[1].iova, m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 100 * tmo) == 1);
	dt = wire_now(&c.w) - t0;
	CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 0, 120 * 1024, 9, 0), -1);
	CHECK_EQ(RDEV_STAT(c.d[0], selective_retrans_pkts), 10);
	CHECK_EQ(RDEV_STAT(c.d[0], retrans_pkts), 10);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
	CHECK(RDEV_STAT(c.d[1], out_of_order_accepted) > 0);
	CHECK(RDEV_STAT(c.d[1], out_of_order_accepted) <= 120 - 40);
	CHECK_EQ(RDEV_STAT(c.d[1], seq_err_naks_sent), 0);
	CHECK(dt < tmo / 8);
	printf("#   burst of 10 lost: done in %.1f us, %llu resent\n", dt / 1e3,
	       (unsigned long long)RDEV_STAT(c.d[0], retrans_pkts));

	/* the tail: the next WRITE's third and last packet is lost */
	b.seen = 0;
	b.from = 2;
	b.n = 1;
	t0 = wire_now(&c.w);
	sg = mr_sge(&m[0], 0, 3000);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 2, &sg, 1,
		  m[1].iova + 200000, m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 100 * tmo) == 1);
	dt = wire_now(&c.w) - t0;
	CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 2);
	CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 200000, 3000, 9, 0), -1);
	CHECK_EQ(RDEV_STAT(c.d[0], tail_loss_probes), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
	/* the probe time is twice the measured round trip (at least 8 us), not tmo / 8 */
	CHECK(dt < tmo / 8);
	printf("#   lost tail: done in %.1f us (timeout %.1f us)\n", dt / 1e3, tmo / 1e3);
out:
	if (mrs) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* ---- a hole does not stop the QP at its cap -------------------------------------------- */

/*
 * The WRITE's second packet 0 -> 1 is lost: its first @drops transmissions, or (@drops 0)
 * every one until a PSN @until past it was sent.
 */
struct hole_twice {
	unsigned int drops;
	uint32_t until;
	bool have;		/* psn is known */
	bool through;		/* a transmission of it was delivered */
	uint32_t psn;		/* that packet's PSN */
	unsigned int tx;	/* its transmissions so far */
	uint32_t hi;		/* the highest PSN sent before one of them was delivered */
	unsigned int probes, sel;	/* the requester's tail_loss_probes, selective resends */
	unsigned int sacks;		/* SACKs 1 -> 0 */
	unsigned int sack_bad;		/* of them: not ending at the highest PSN held */
};

static enum wire_action hole_filter(struct wire *w, unsigned int dir, unsigned int idx,
				    uint8_t *frame, size_t *len)
{
	struct hole_twice *h = w->ctx;
	const size_t bth = 14 + 20 + 8;	/* Ethernet, IPv4, UDP */
	uint32_t psn;

	(void)idx;
	if (dir == 1 && *len >= bth + 20 && frame[bth] == OP_ACK && frame[bth + 12] == 0x70) {
		/* a SACK: its bitmap words reach the highest PSN held, no further */
		unsigned int nw = frame[bth + 16];
		const uint8_t *last = frame + bth + 20 + 4 * (nw ? nw - 1 : 0);

		h->sacks++;
		if (!nw || *len < bth + 20 + 4 * (size_t)nw || !(last[0] | last[1] | last[2] | last[3]))
			h->sack_bad++;
		return W_DELIVER;
	}
	if (dir != 0 || *len < bth + 12)
		return W_DELIVER;
	psn = (uint32_t)frame[bth + 9] << 16 | (uint32_t)frame[bth + 10] << 8 | frame[bth + 11];
	if (!h->have && frame[bth] < 0x20) {
		/* the WRITE's first packet (RC): its second one, whatever its opcode, is lost */
		h->have = true;
		h->psn = (psn + 1) & 0xffffff;
		h->hi = h->psn;
		return W_DELIVER;
	}
	if (!h->have || h->through)
		return W_DELIVER;
	if (psn == h->psn) {
		h->tx++;
		if (h->drops ? h->tx <= h->drops : ((h->hi - h->psn) & 0xffffff) < h->until)
			return W_DROP;
		h->through = true;
		return W_DELIVER;
	}
	if (((psn - h->hi) & 0xffffff) < 0x800000)
		h->hi = psn;
	return W_DELIVER;
}

/*
 * In-flight cap 16 PSNs, so a reorder window of 64: a 200-packet WRITE loses its second
 * packet (and, per @h, its resends); every byte arrives, no timeout runs, and every SACK's
 * bitmap ends with the word that holds the highest PSN held.
 */
static void hole_run(struct hole_twice *h, const char *what)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	bool mrs = false;
	struct sge sg;
	struct wc w;

	connopt_default(&o);
	o.timeout = 8;
	o.retry_cnt = 7;
	o.xport = TERN_QP_XPORT_SR | 4u << TERN_QP_XPORT_LOG_CAP_SHIFT;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 256 * 1024, acc_all, 0) == 0);
	if (mr_create(c.d[1], &m[1], c.d[1]->pdn, 256 * 1024, acc_all, 0) != 0) {
		mr_release(&m[0]);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &m[0], 5);
	c.w.filter = hole_filter;
	c.w.ctx = h;
	sg = mr_sge(&m[0], 0, 200 * 1024);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  m[1].iova, m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 100ull * 4096 << 8) == 1);
	CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 0, 200 * 1024, 5, 0), -1);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], seq_err_naks_sent), 0);
	CHECK(h->sacks > 0);
	CHECK_EQ(h->sack_bad, 0);
	h->probes = RDEV_STAT(c.d[0], tail_loss_probes);
	h->sel = RDEV_STAT(c.d[0], selective_retrans_pkts);
	printf("#   cap 16, %s: sent %u times, up to %u PSNs past it, %llu resent, %u probes, "
	       "%u SACKs\n", what, h->tx, (h->hi - h->psn) & 0xffffff,
	       (unsigned long long)RDEV_STAT(c.d[0], retrans_pkts), h->probes, h->sacks);
out:
	if (mrs) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/*
 * While a hole waits, the PSNs the responder holds do not count against the cap: the
 * requester goes on up to the end of the window, 63 PSNs past the hole, and no further.
 */
static void t_sr_hole_cap(void)
{
	struct hole_twice h = { .until = 63 };

	hole_run(&h, "hole lost until 63 PSNs past it were sent");
	CHECK(h.through);
	CHECK_EQ((h.hi - h.psn) & 0xffffff, 63);
}

/*
 * The hole's first resend is lost too: SACKs of packets sent after the resend show it (as
 * RFC 8985 detects a lost retransmission), and it is resent again at once, without a
 * probe and before the window is full.
 */
static void t_sr_resend_lost(void)
{
	struct hole_twice h = { .drops = 2 };

	hole_run(&h, "hole and its first resend lost");
	CHECK_EQ(h.tx, 3);
	CHECK_EQ(h.probes, 0);
	CHECK_EQ(h.sel, 2);
	CHECK(((h.hi - h.psn) & 0xffffff) < 63);
}

/* Every SACK from 1 to 0 gets a word count of 33 (or, with @trunc, loses its last word). */
struct bad_sack {
	bool trunc;
	unsigned int seen, mangled;
};

static enum wire_action sack_filter(struct wire *w, unsigned int dir, unsigned int idx,
				    uint8_t *frame, size_t *len)
{
	struct bad_sack *b = w->ctx;
	const size_t bth = 14 + 20 + 8;	/* Ethernet, IPv4, UDP */

	(void)idx;
	if (dir == 0) {
		/* the first WRITE's third packet is lost: a gap, so SACKs */
		return b->seen++ == 2 ? W_DROP : W_DELIVER;
	}
	if (*len < bth + 12 + 4 + 4 + 4 || frame[bth] != OP_ACK || frame[bth + 12] != 0x70)
		return W_DELIVER;
	b->mangled++;
	if (b->trunc) {
		/* drop the last bitmap word, fix the IP and UDP lengths */
		*len -= 4;
		frame[14 + 2] = (uint8_t)((*len - 14) >> 8);
		frame[14 + 3] = (uint8_t)(*len - 14);
		frame[14 + 20 + 4] = (uint8_t)((*len - 14 - 20) >> 8);
		frame[14 + 20 + 5] = (uint8_t)(*len - 14 - 20);
		pkt_fix_ipv4_csum(frame, *len);
	} else {
		frame[bth + 16] = 33;
	}
	pkt_fix_icrc(frame, *len);
	return W_DELIVER;
}

/*
 * Malformed SACKs (a word count above 32; a bitmap shorter than its count) are dropped and
 * counted in rx_roce_discards; the requester recovers by its timeout (going back N), and
 * the WRITE completes intact.
 */
static void t_sr_bad_sack(void)
{
	unsigned int v;

	for (v = 0; v < 2; v++) {
		struct connopt o;
		struct conn c;
		struct rmr m[2];
		bool mrs = false;
		struct bad_sack b = { v == 1, 0, 0 };
		struct sge sg;
		struct wc w;

		connopt_default(&o);
		o.timeout = 8;
		o.retry_cnt = 7;
		o.xport = TERN_QP_XPORT_SR;
		RQ(conn_setup(&c, &o));
		RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 65536, acc_all, 0) == 0);
		if (mr_create(c.d[1], &m[1], c.d[1]->pdn, 65536, acc_all, 0) != 0) {
			mr_release(&m[0]);
			RQ(0);
		}
		mrs = true;
		mr_fill(c.d[0], &m[0], 3);
		c.w.filter = sack_filter;
		c.w.ctx = &b;
		sg = mr_sge(&m[0], 0, 10 * 1024);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
			  m[1].iova, m[1].key, 0);
		ring_sq(c.d[0], &c.qp[0]);
		RQ(conn_poll(&c, 0, &w, 1, 20ull * 4096 << 8) == 1);
		CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
		CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 0, 10 * 1024, 3, 0), -1);
		CHECK(b.mangled > 0);
		CHECK_EQ(RDEV_STAT(c.d[0], rx_roce_discards), b.mangled);
		CHECK_EQ(RDEV_STAT(c.d[0], selective_retrans_pkts), 0);
		CHECK_EQ(RDEV_STAT(c.d[0], tail_loss_probes), 3);
		CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 1);
		CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
		CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_RTS);
out:
		if (mrs) {
			mr_release(&m[0]);
			mr_release(&m[1]);
		}
		conn_free(&c);
		if (t_failures)
			return;
	}
}

#define NQ_EXTRA	66	/* QP pairs besides the connection's: more than 64 hold buffers */

struct first_mid {
	bool seen[TERNM_TEST_MAX_QPN];
};

/* Every QP's first WRITE_FIRST from 0 to 1 is lost (its resends pass). */
static enum wire_action mid_filter(struct wire *w, unsigned int dir, unsigned int idx,
				   uint8_t *frame, size_t *len)
{
	struct first_mid *f = w->ctx;
	const size_t bth = 14 + 20 + 8;
	uint32_t qpn;

	(void)idx;
	if (dir != 0 || *len < bth + 12 || frame[bth] != OP_WRITE_FIRST)
		return W_DELIVER;
	qpn = (uint32_t)frame[bth + 5] << 16 | (uint32_t)frame[bth + 6] << 8 | frame[bth + 7];
	if (qpn >= TERNM_TEST_MAX_QPN || f->seen[qpn])
		return W_DELIVER;
	f->seen[qpn] = true;
	return W_DROP;
}

/*
 * 67 selective-repeat QPs each get a gap at once, a 3000-byte WRITE's first packet: its
 * MIDDLE and LAST are placed at once on every QP (no payload kept), while the 100-byte WRITE
 * behind it (an ONLY packet, which is kept whole) finds a reorder buffer on 64 of them; the
 * others find none free (the device's bound), drop and count it, and recover; every WRITE
 * completes intact.
 */
static void t_sr_buffer_bound(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct rqp q[NQ_EXTRA][2];
	struct first_mid *f = calloc(1, sizeof(*f));
	unsigned int i, s, nq = 0;
	bool mrs = false;
	struct wc w[2 * (NQ_EXTRA + 1)];

	RQ(f);
	connopt_default(&o);
	o.timeout = 8;
	o.retry_cnt = 7;
	o.xport = TERN_QP_XPORT_SR;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 4096, acc_all, 0) == 0);
	if (mr_create(c.d[1], &m[1], c.d[1]->pdn, (NQ_EXTRA + 1) * 4096, acc_all, 0) != 0) {
		mr_release(&m[0]);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &m[0], 7);
	for (nq = 0; nq < NQ_EXTRA; nq++) {
		for (s = 0; s < 2; s++)
			RQ(qp_create(c.d[s], &q[nq][s], c.d[s]->pdn, &c.cq[s], &c.cq[s], 2,
				     o.sq_stride, 2, o.rq_stride, 0, false) == TERN_CMD_OK);
		for (s = 0; s < 2; s++)
			RQ(qp_connect(c.d[s], &q[nq][s], c.d[!s], q[nq][!s].qpn, &o, s));
	}
	c.w.filter = mid_filter;
	c.w.ctx = f;
	for (i = 0; i <= NQ_EXTRA; i++) {
		struct rqp *qp = i ? &q[i - 1][0] : &c.qp[0];
		struct sge sg = mr_sge(&m[0], 0, 3000);

		struct sge sb = mr_sge(&m[0], 3000, 100);

		post_send(c.d[0], qp, TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, i, &sg, 1,
			  m[1].iova + (uint64_t)i * 4096, m[1].key, 0);
		post_send(c.d[0], qp, TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, i, &sb, 1,
			  m[1].iova + (uint64_t)i * 4096 + 3000, m[1].key, 0);
		ring_sq(c.d[0], qp);
	}
	RQ(conn_poll(&c, 0, w, 2 * (NQ_EXTRA + 1), 100ull * 4096 << 8) == 2 * (NQ_EXTRA + 1));
	for (i = 0; i < 2 * (NQ_EXTRA + 1); i++)
		CHECK_EQ(w[i].status, TERN_CQE_OK);
	for (i = 0; i <= NQ_EXTRA; i++)
		CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], (uint64_t)i * 4096, 3100, 7, 0), -1);
	/* each QP's MIDDLE and LAST placed, 64 ONLY packets kept in a reorder buffer */
	CHECK_EQ(RDEV_STAT(c.d[1], out_of_order_accepted),
		 2 * (NQ_EXTRA + 1) + TERNM_TEST_SR_MAX_BUFS);
	CHECK(RDEV_STAT(c.d[1], rx_roce_discards) >= NQ_EXTRA + 1 - TERNM_TEST_SR_MAX_BUFS);
out:
	for (i = 0; i < nq; i++)
		for (s = 0; s < 2; s++) {
			qmem_free(&q[i][s].sq);
			qmem_free(&q[i][s].rq);
		}
	if (mrs) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
	free(f);
}

/* ---- READ responses placed out of order ---------------------------------------------------- */

/* Loss, duplication and reordering of the frames 1 -> 0 (the responses), from a seeded PRNG. */
struct rd_faults {
	uint64_t rng;
	uint32_t drop, dup, hold;	/* ppm */
	unsigned int burst_at, burst_n;	/* responses [burst_at, burst_at + burst_n) lost */
	unsigned int resp;		/* READ responses sent 1 -> 0 */
	uint32_t bad_psn;		/* the mangled responses' PSNs, when bad_first is set */
	uint32_t bad_first;		/* PSN of the READ whose responses get mangled; 0: none */
	unsigned int bad_done;
};

static uint32_t rd_rand(struct rd_faults *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return (uint32_t)(f->rng % 1000000);
}

static bool is_read_resp(uint8_t op)
{
	return op >= OP_READ_RESP_FIRST && op <= OP_READ_RESP_ONLY;
}

static enum wire_action rd_filter(struct wire *w, unsigned int dir, unsigned int idx,
				  uint8_t *frame, size_t *len)
{
	struct rd_faults *f = w->ctx;
	struct pkt p;
	unsigned int k;

	(void)idx;
	if (dir != 1 || !pkt_parse(frame, *len, &p) || !is_read_resp(p.opcode))
		return W_DELIVER;
	k = f->resp++;
	if (k >= f->burst_at && k < f->burst_at + f->burst_n)
		return W_DROP;
	if (f->drop && rd_rand(f) < f->drop)
		return W_DROP;
	if (f->dup && rd_rand(f) < f->dup)
		return W_DUP;
	if (f->hold && rd_rand(f) < f->hold)
		return W_HOLD;
	return W_DELIVER;
}

#define RD_N	9
static const uint32_t rd_len[RD_N] = { 1, 1000, 1024, 1025, 4096, 65536, 300000, 1048576, 77 };

/*
 * READs of 1 B to 1 MiB (two beyond the 256-PSN placement window), all posted at once, with
 * the responses lost, duplicated and reordered per @f: every byte lands, every READ completes
 * in order with its length. Returns the READ responses sent (0: something was wrong).
 */
static unsigned int rd_run(bool sr, struct rd_faults *f)
{
	struct connopt o;
	struct conn c;
	struct rmr src, dst;
	bool mrs = false;
	unsigned int i, n, sent = 0;
	uint64_t off[RD_N], at = 0;
	int f0 = t_failures;
	struct wc w[RD_N];
	struct sge sg;
	uint64_t t0;

	connopt_default(&o);
	o.timeout = 8;			/* 1 ms */
	o.retry_cnt = 7;
	o.xport = sr ? TERN_QP_XPORT_SR : 0;
	o.access = TERN_ACCESS_REMOTE_READ;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[1], &src, c.d[1]->pdn, 4 * MB, acc_all, 0x30) == 0);
	if (mr_create(c.d[0], &dst, c.d[0]->pdn, 4 * MB, acc_all, 0x50) != 0) {
		mr_release(&src);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[1], &src, 61);
	c.w.filter = rd_filter;
	c.w.ctx = f;
	for (i = 0; i < RD_N; i++) {
		off[i] = at;
		at += (rd_len[i] + 4095) & ~4095u;
		sg = mr_sge(&dst, off[i], rd_len[i]);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 100 + i, &sg,
			  1, src.iova + off[i] + 3, src.key, 0);
	}
	t0 = wire_now(&c.w);
	ring_sq(c.d[0], &c.qp[0]);
	n = conn_poll(&c, 0, w, RD_N, 2000000000ull);
	CHECK_EQ(n, RD_N);
	for (i = 0; i < n; i++) {
		CHECK_WC(&w[i], TERN_WQE_RDMA_READ, TERN_CQE_OK, 100 + i);
		CHECK_EQ(w[i].byte_len, rd_len[i]);
		CHECK_EQ(mr_diff_pattern(c.d[0], &dst, off[i], rd_len[i], 61, off[i] + 3), -1);
	}
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
	CHECK(!cq_peek(c.d[0], &c.cq[0]));
	CHECK_EQ(RDEV_STAT(c.d[0], req_transport_retries_exceeded), 0);
	if (!sr) {
		CHECK_EQ(RDEV_STAT(c.d[0], selective_retrans_pkts), 0);
		CHECK_EQ(RDEV_STAT(c.d[0], out_of_order_accepted), 0);
	}
	printf("#   %-3s responses %u, placed ahead %llu, READs re-asked %llu (probes %llu), "
	       "duplicates %llu, timeouts %llu, %.1f us\n", sr ? "SR" : "GBN", f->resp,
	       (unsigned long long)RDEV_STAT(c.d[0], out_of_order_accepted),
	       (unsigned long long)RDEV_STAT(c.d[0], selective_retrans_pkts),
	       (unsigned long long)RDEV_STAT(c.d[0], tail_loss_probes),
	       (unsigned long long)RDEV_STAT(c.d[0], duplicate_response),
	       (unsigned long long)RDEV_STAT(c.d[0], local_ack_timeout_err),
	       (wire_now(&c.w) - t0) / 1e3);
	if (t_failures == f0)
		sent = f->resp;
out:
	if (mrs) {
		mr_release(&src);
		mr_release(&dst);
	}
	conn_free(&c);
	return sent;
}

/* Selective repeat against go-back-N on the same faults (same seed). */
static void rd_compare(uint32_t drop, uint32_t dup, uint32_t hold, unsigned int burst_at,
		       unsigned int burst_n, uint64_t seed)
{
	struct rd_faults f = { .rng = seed, .drop = drop, .dup = dup, .hold = hold,
			       .burst_at = burst_at, .burst_n = burst_n };
	unsigned int lossless = 0, sr, gbn;

	for (unsigned int k = 0; k < RD_N; k++)
		lossless += (rd_len[k] + 1023) / 1024;
	sr = rd_run(true, &f);
	memset(&f, 0, sizeof(f));
	f = (struct rd_faults){ .rng = seed, .drop = drop, .dup = dup, .hold = hold,
				.burst_at = burst_at, .burst_n = burst_n };
	gbn = rd_run(false, &f);
	CHECK(sr && gbn);
	CHECK(sr >= lossless);
	/* what the responder sent beyond one of each: the lost ones, and GBN's whole rests */
	printf("#   resent: SR %u, GBN %u (of %u)\n", sr - lossless, gbn - lossless, lossless);
	if (drop || burst_n)
		CHECK(sr < gbn);
}

static void t_sr_read_loss(void)
{
	rd_compare(1000, 0, 0, ~0u, 0, 11);
	rd_compare(10000, 0, 0, ~0u, 0, 12);
	rd_compare(50000, 0, 0, ~0u, 0, 13);
}

static void t_sr_read_burst_reorder(void)
{
	rd_compare(0, 0, 0, 100, 20, 14);		/* 20 consecutive responses lost */
	rd_compare(10000, 20000, 20000, ~0u, 0, 15);	/* and duplicated and reordered */
	rd_compare(0, 50000, 50000, ~0u, 0, 16);	/* no loss: only duplicates and reordering */
}

/*
 * Responses mangled on the way, after a gap (the first lost), so that they arrive ahead:
 * one moved to the READ's last PSN (the last must be the remainder, 832 bytes, as a
 * READ_RESPONSE_LAST) and one moved onto the WRITE behind the READ. Neither is placed; the
 * READ still completes with every byte right, from re-requests of its holes.
 */
struct rd_bad {
	unsigned int resp;
	uint32_t first;
};

static enum wire_action rd_bad_filter(struct wire *w, unsigned int dir, unsigned int idx,
				      uint8_t *frame, size_t *len)
{
	struct rd_bad *b = w->ctx;
	struct pkt p;
	uint8_t *bth;
	unsigned int k;
	uint32_t psn;

	(void)idx;
	if (dir != 1 || !pkt_parse(frame, *len, &p) || !is_read_resp(p.opcode))
		return W_DELIVER;
	k = b->resp++;
	if (k == 0) {
		b->first = p.psn;
		return W_DROP;
	}
	if ((k != 3 && k != 4) || p.opcode != OP_READ_RESP_MIDDLE)
		return W_DELIVER;
	bth = (uint8_t *)(uintptr_t)p.payload - 12;	/* a MIDDLE has no AETH */
	psn = b->first + (k == 3 ? 7 : 8);
	bth[9] = (uint8_t)(psn >> 16);
	bth[10] = (uint8_t)(psn >> 8);
	bth[11] = (uint8_t)psn;
	pkt_fix_icrc(frame, *len);
	return W_DELIVER;
}

static void t_sr_read_bad_resp(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	struct rd_bad b = { 0, 0 };
	bool mrs = false;
	struct sge sg;
	struct wc w[2];
	uint64_t disc;

	connopt_default(&o);
	o.timeout = 8;
	o.retry_cnt = 7;
	o.xport = TERN_QP_XPORT_SR;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 64 * 1024, acc_all, 0) == 0);
	if (mr_create(c.d[1], &m[1], c.d[1]->pdn, 64 * 1024, acc_all, 0) != 0) {
		mr_release(&m[0]);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[1], &m[1], 23);
	mr_fill(c.d[0], &m[0], 5);
	c.w.filter = rd_bad_filter;
	c.w.ctx = &b;
	disc = RDEV_STAT(c.d[0], rx_roce_discards);
	sg = mr_sge(&m[0], 0, 8000);		/* 8 responses, the last of 832 bytes */
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  m[1].iova, m[1].key, 0);
	sg = mr_sge(&m[0], 16384, 100);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 2, &sg, 1,
		  m[1].iova + 32768, m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 2, 100000000ull) == 2);
	CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_OK, 1);
	CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 2);
	CHECK_EQ(w[0].byte_len, 8000);
	CHECK_EQ(mr_diff_pattern(c.d[0], &m[0], 0, 8000, 23, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[0], &m[0], 8000, 192, 5, 8000), -1);	/* nothing past */
	CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 32768, 100, 5, 16384), -1);
	/* the one at the wrong length counted; the one on the WRITE not taken as a READ's */
	CHECK(RDEV_STAT(c.d[0], rx_roce_discards) >= disc + 1);
	CHECK(RDEV_STAT(c.d[0], out_of_order_accepted) >= 4);
	CHECK(RDEV_STAT(c.d[0], selective_retrans_pkts) >= 1);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
out:
	if (mrs) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/*
 * Lost READ requests, then hole re-requests: READs larger than the in-flight cap (16 PSNs),
 * requests and responses lost at random (3 % each way, 24 seeds). A READ request the
 * responder never saw must be asked again whole: a shorter one would be a new, shorter READ
 * there, whose LAST response the requester would refuse (BAD_RESP_ERR). Every READ
 * completes, bytes intact, the QP stays in RTS.
 */
struct rq_loss {
	uint64_t rng;
	uint32_t drop;			/* ppm, both directions */
	unsigned int req_lost;		/* READ requests dropped */
};

static enum wire_action rq_filter(struct wire *w, unsigned int dir, unsigned int idx,
				  uint8_t *frame, size_t *len)
{
	struct rq_loss *f = w->ctx;
	struct rd_faults r = { .rng = f->rng };
	struct pkt p;
	bool drop;

	(void)idx;
	if (!pkt_parse(frame, *len, &p))
		return W_DELIVER;
	drop = rd_rand(&r) < f->drop;
	f->rng = r.rng;
	if (drop && dir == 0 && p.opcode == OP_READ_REQ)
		f->req_lost++;
	return drop ? W_DROP : W_DELIVER;
}

static void t_sr_read_req_lost(void)
{
	static const uint32_t len[] = { 40000, 4096, 70000, 1000, 33000, 100000, 20000, 65536 };
	const unsigned int nr = sizeof(len) / sizeof(len[0]);
	unsigned int seed, i, n, lost = 0;

	for (seed = 1; seed <= 24; seed++) {
		struct rq_loss f = { .rng = 0x9e3779b97f4a7c15ull * seed, .drop = 30000 };
		struct connopt o;
		struct conn c;
		struct rmr src, dst;
		bool mrs = false;
		uint64_t off[8], at = 0;
		struct wc w[8];
		struct sge sg;
		int f0 = t_failures;

		connopt_default(&o);
		o.timeout = 8;
		o.retry_cnt = 7;
		if (seed & 1)
			o.psn[0] = 0xabcdef;	/* above 2^23: see rd_stream */
		o.xport = TERN_QP_XPORT_SR | 4u << TERN_QP_XPORT_LOG_CAP_SHIFT;
		o.access = TERN_ACCESS_REMOTE_READ;
		RQ(conn_setup(&c, &o));
		RQ(mr_create(c.d[1], &src, c.d[1]->pdn, MB, acc_all, 0x30) == 0);
		if (mr_create(c.d[0], &dst, c.d[0]->pdn, MB, acc_all, 0x50) != 0) {
			mr_release(&src);
			RQ(0);
		}
		mrs = true;
		mr_fill(c.d[1], &src, 71);
		c.w.filter = rq_filter;
		c.w.ctx = &f;
		for (i = 0; i < nr; i++) {
			off[i] = at;
			at += (len[i] + 4095) & ~4095u;
			sg = mr_sge(&dst, off[i], len[i]);
			post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 10 + i,
				  &sg, 1, src.iova + off[i], src.key, 0);
		}
		ring_sq(c.d[0], &c.qp[0]);
		n = conn_poll(&c, 0, w, nr, 2000000000ull);
		CHECK_EQ(n, nr);
		for (i = 0; i < n; i++) {
			CHECK_WC(&w[i], TERN_WQE_RDMA_READ, TERN_CQE_OK, 10 + i);
			CHECK_EQ(w[i].byte_len, len[i]);
			CHECK_EQ(mr_diff_pattern(c.d[0], &dst, off[i], len[i], 71, off[i]), -1);
		}
		CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
		lost += f.req_lost;
		if (t_failures != f0)
			printf("#   seed %u failed (%u READ requests lost)\n", seed, f.req_lost);
out:
		if (mrs) {
			mr_release(&src);
			mr_release(&dst);
		}
		conn_free(&c);
	}
	printf("#   READ requests lost: %u\n", lost);
	CHECK(lost > 0);
}

/*
 * A stream of 64 KiB READs as perftest's ib_read_bw posts them (32 posted, each reposted as
 * it completes), path MTU @mtu (IB encoding), @ppm of the frames lost each way (and @dup,
 * @hold duplicated, reordered), seeds 1..@nseeds: every READ completes OK in order with its
 * bytes.
 */
static void rd_stream(unsigned int nseeds, unsigned int nreads, uint32_t ppm, uint32_t dup,
		      uint32_t hold, uint8_t mtu)
{
	for (unsigned int seed = 1; seed <= nseeds; seed++) {
		struct connopt o;
		struct conn c;
		struct rmr src, dst;
		bool mrs = false;
		unsigned int posted = 0, done = 0, i;
		int f0 = t_failures;
		struct wc w[8];
		struct sge sg;

		connopt_default(&o);
		/*
		 * Odd seeds start the requester's PSNs above 2^23 (near the wrap): the READ
		 * state must start from the send PSN given at RTR->RTS, not from RTR's.
		 */
		if (seed & 1)
			o.psn[0] = 0xfff000;
		o.mtu = mtu;
		o.xport = TERN_QP_XPORT_SR;
		o.access = TERN_ACCESS_REMOTE_READ;
		RQ(conn_setup(&c, &o));
		RQ(mr_create(c.d[1], &src, c.d[1]->pdn, 2 * MB, acc_all, 0x30) == 0);
		if (mr_create(c.d[0], &dst, c.d[0]->pdn, 2 * MB, acc_all, 0x50) != 0) {
			mr_release(&src);
			RQ(0);
		}
		mrs = true;
		mr_fill(c.d[1], &src, 91);
		for (i = 0; i < 2; i++)
			RQ(faults_set(c.d[i], ppm, 0, dup, hold, seed * 7 + i) == TERN_CMD_OK);
		while (done < nreads && t_failures == f0) {
			unsigned int n;

			while (posted < nreads && posted - done < 32) {
				uint64_t off = (uint64_t)(posted % 32) * 65536;

				sg = mr_sge(&dst, off, 65536);
				post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED,
					  posted, &sg, 1, src.iova + off, src.key, 0);
				posted++;
			}
			ring_sq(c.d[0], &c.qp[0]);
			n = conn_poll(&c, 0, w, 1, 1000000000ull);
			RQ(n == 1);
			if (w[0].status != TERN_CQE_OK || w[0].wr_id != done)
				printf("#   seed %u READ %u: status %u wr_id %llu\n", seed, done,
				       w[0].status, (unsigned long long)w[0].wr_id);
			CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_OK, done);
			CHECK_EQ(mr_diff_pattern(c.d[0], &dst, (uint64_t)(done % 32) * 65536, 65536,
						 91, (uint64_t)(done % 32) * 65536), -1);
			done++;
		}
		printf("#   seed %u: %u READs, re-asked %llu, probes %llu, timeouts %llu\n", seed,
		       done, (unsigned long long)RDEV_STAT(c.d[0], selective_retrans_pkts),
		       (unsigned long long)RDEV_STAT(c.d[0], tail_loss_probes),
		       (unsigned long long)RDEV_STAT(c.d[0], local_ack_timeout_err));
out:
		if (mrs) {
			mr_release(&src);
			mr_release(&dst);
		}
		conn_free(&c);
	}
}

static void t_sr_read_stream(void)
{
	rd_stream(3, 600, 10000, 0, 0, 5);		/* MTU 4096: 16 PSNs each */
	rd_stream(3, 600, 10000, 0, 0, 3);		/* MTU 1024: 64 PSNs each */
	rd_stream(2, 400, 50000, 5000, 10000, 3);
}

/* ---- WRITE and SEND placed out of order ------------------------------------------------- */

static const uint32_t place_sizes[] = { 1, 1023, 1024, 1025, 3000, 4097, 65539, MB };
#define NPLACE		(sizeof(place_sizes) / sizeof(place_sizes[0]))
#define PLACE_OFF(i)	((uint64_t)(i) * (MB + 8192))	/* each size's place in the MRs */
#define PLACE_MR	(NPLACE * (MB + 8192))

/*
 * The wire log's selective-repeat packets (0 -> 1) decode with the tests' own parser and say
 * what the spec says: a WRITE's RETH the address of the packet's own first byte within
 * [@lo, @hi), the bytes left (exactly the payload on a LAST); a SEND's SPH an offset that is
 * a nonzero multiple of the MTU. Returns how many there were (-1: one was wrong).
 */
static long sr_ops_check(const struct wire *w, uint64_t lo, uint64_t hi)
{
	unsigned int i;
	long n = 0;
	struct pkt p;

	for (i = 0; i < w->nlog; i++) {
		bool last;

		if (w->log[i].dir != 0 || !pkt_parse(w->log[i].data, w->log[i].len, &p))
			continue;
		if (p.opcode < OP_SR_WRITE_MIDDLE || p.opcode > OP_SR_SEND_LAST_INV)
			continue;
		last = p.opcode != OP_SR_WRITE_MIDDLE && p.opcode != OP_SR_SEND_MIDDLE;
		n++;
		if (p.opcode <= OP_SR_WRITE_LAST_IMM) {
			if (!p.has_reth || p.has_sph || p.va < lo || p.va + p.payload_len > hi ||
			    (last ? p.dma_len != p.payload_len : p.dma_len <= p.payload_len) ||
			    p.has_imm != (p.opcode == OP_SR_WRITE_LAST_IMM))
				return -1;
		} else if (!p.has_sph || p.has_reth || !p.sph_off || p.sph_off % 1024 ||
			   (p.sph_rord >> 24) || (last ? !p.payload_len : p.payload_len != 1024)) {
			return -1;
		}
	}
	return n;
}

/*
 * SENDs (every other one with immediate) and WRITEs (and a WRITE_IMM) of 1 B to 1 MiB at
 * once, with @drop/@dup/@reorder ppm on both ports: every byte lands where it belongs and
 * nowhere else (the rest of the destination keeps its old pattern), the requester's
 * completions come in order, the receives in order with their lengths and immediates.
 * With selective repeat the packets after a gap are placed (out_of_order_accepted) and the
 * MIDDLE/LAST packets carry the SR opcodes; with go-back-N (@sr false) none of them is on
 * the wire. With @dbrec the receiver's QP has an RQ doorbell record, written once for all
 * its receives, and never rings the RQ doorbell.
 */
static bool place_run(bool sr, uint32_t drop, uint32_t dup, uint32_t reorder, uint64_t seed,
		      struct burst *burst, bool dbrec)
{
	struct connopt o;
	struct conn c;
	struct rmr src, dst;
	bool mrs = false, conn = false;
	int f0 = t_failures;
	unsigned int i, got, nw = 0;
	struct wc wcs[2 * NPLACE + 1];
	long nsr;

	connopt_default(&o);
	o.timeout = 8;
	o.retry_cnt = 7;
	o.xport = sr ? TERN_QP_XPORT_SR : 0;
	o.qp_flags = dbrec ? TERN_QP_F_RQ_DB_REC : 0;
	RQ(conn_setup(&c, &o));
	conn = true;
	RQ(mr_create(c.d[0], &src, c.d[0]->pdn, 2 * PLACE_MR, acc_all, 0x10) == 0);
	if (mr_create(c.d[1], &dst, c.d[1]->pdn, 2 * PLACE_MR, acc_all, 0x70) != 0) {
		mr_release(&src);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &src, 21);
	mr_fill(c.d[1], &dst, 22);
	for (i = 0; i < 2; i++)
		RQ(faults_set(c.d[i], drop, 0, dup, reorder, seed + i) == TERN_CMD_OK);
	if (burst) {
		c.w.filter = burst_filter;
		c.w.ctx = burst;
	}
	for (i = 0; i < NPLACE; i++) {
		uint32_t len = place_sizes[i];
		uint64_t so = PLACE_OFF(i) + 1, wo = PLACE_MR + PLACE_OFF(i) + 3;
		struct sge r = mr_sge(&dst, PLACE_OFF(i) + 1, len);
		struct sge sg = mr_sge(&src, so, len), sw = mr_sge(&src, wo, len);

		post_recv(c.d[1], &c.qp[1], 100 + i, &r, 1);
		post_send(c.d[0], &c.qp[0], i & 1 ? TERN_WQE_SEND_IMM : TERN_WQE_SEND,
			  TERN_WQE_F_SIGNALED, 2 * i, &sg, 1, 0, 0, 0x77000000u | i);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 2 * i + 1,
			  &sw, 1, dst.iova + wo, dst.key, 0);
		nw += 2;
	}
	{
		/* a WRITE_IMM of the largest size again, over the WRITE's place */
		struct sge r = mr_sge(&dst, 0, 0);
		struct sge sw = mr_sge(&src, PLACE_MR + PLACE_OFF(NPLACE - 1) + 3, MB);

		post_recv(c.d[1], &c.qp[1], 100 + NPLACE, &r, 0);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE_IMM, TERN_WQE_F_SIGNALED,
			  2 * NPLACE, &sw, 1, dst.iova + PLACE_MR + PLACE_OFF(NPLACE - 1) + 3,
			  dst.key, 0x5a5a0000);
		nw++;
	}
	if (dbrec)
		rq_rec_write(c.d[1], &c.qp[1], c.qp[1].rq_pi);
	else
		ring_rq(c.d[1], &c.qp[1]);
	ring_sq(c.d[0], &c.qp[0]);
	got = conn_poll(&c, 0, wcs, nw, 5000000000ull);
	CHECK_EQ(got, nw);
	for (i = 0; i < got; i++) {
		CHECK_EQ(wcs[i].status, TERN_CQE_OK);
		CHECK_EQ(wcs[i].wr_id, i);
	}
	got = conn_poll(&c, 1, wcs, NPLACE + 1, 100000000ull);
	CHECK_EQ(got, NPLACE + 1);
	for (i = 0; i < got; i++) {
		CHECK_EQ(wcs[i].status, TERN_CQE_OK);
		CHECK_EQ(wcs[i].wr_id, 100 + i);
		CHECK_EQ(wcs[i].byte_len, i < NPLACE ? place_sizes[i] : MB);
		CHECK_EQ(wcs[i].opcode, i == NPLACE ? TERN_CQE_RECV_RDMA_WRITE_IMM :
					i & 1 ? TERN_CQE_RECV_IMM : TERN_CQE_RECV);
		if (i == NPLACE || i & 1)
			CHECK_EQ(wcs[i].imm, i == NPLACE ? 0x5a5a0000u : 0x77000000u | i);
	}
	/* every byte in place, and the bytes around each place untouched */
	for (i = 0; i < NPLACE; i++) {
		uint32_t len = place_sizes[i];
		uint64_t so = PLACE_OFF(i) + 1, wo = PLACE_MR + PLACE_OFF(i) + 3;
		uint64_t ends[2] = { so + len, wo + len };
		unsigned int k;

		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, so, len, 21, so), -1);
		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, wo, len, 21, wo), -1);
		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, PLACE_OFF(i), 1, 22, PLACE_OFF(i)), -1);
		CHECK_EQ(mr_diff_pattern(c.d[1], &dst, wo - 3, 3, 22, wo - 3), -1);
		for (k = 0; k < 2; k++) {
			uint64_t e = ends[k], next = k ? PLACE_MR + PLACE_OFF(i + 1) :
						       PLACE_OFF(i + 1);

			CHECK_EQ(mr_diff_pattern(c.d[1], &dst, e, next - e, 22, e), -1);
		}
	}
	nsr = sr_ops_check(&c.w, dst.iova + PLACE_MR, dst.iova + 2 * PLACE_MR);
	CHECK(nsr >= 0);
	if (sr) {
		CHECK(nsr > 0);
		if (drop >= 10000)
			CHECK(RDEV_STAT(c.d[1], out_of_order_accepted) > 0);
		if (burst)
			CHECK_EQ(RDEV_STAT(c.d[0], retrans_pkts), burst->n);
		/* every placement header fitted: none dropped (no frame is corrupted) */
		CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_discards), 0);
		printf("#   SR %u ppm lost%s%s: %ld SR-opcode packets, %llu placed/kept after a gap, "
		       "%llu resent, %llu timeouts\n", drop, burst ? ", a burst lost" : "",
		       dbrec ? ", RQ doorbell record" : "", nsr,
		       (unsigned long long)RDEV_STAT(c.d[1], out_of_order_accepted),
		       (unsigned long long)RDEV_STAT(c.d[0], retrans_pkts),
		       (unsigned long long)RDEV_STAT(c.d[0], local_ack_timeout_err));
	} else {
		CHECK_EQ(nsr, 0);
		CHECK_EQ(RDEV_STAT(c.d[1], out_of_order_accepted), 0);
	}
	for (i = 0; i < 2; i++) {
		CHECK_EQ(qp_state(c.d[i], c.qp[i].qpn), TERN_QPS_RTS);
		CHECK(!cq_peek(c.d[i], &c.cq[i]));
	}
out:
	if (mrs) {
		mr_release(&src);
		mr_release(&dst);
	}
	if (conn)
		conn_free(&c);
	return t_failures == f0;
}

static void t_sr_place_loss(void)
{
	/*
	 * 40 consecutive frames lost inside the 1 MiB SEND (after the 156 frames of the
	 * smaller messages: its packets 844..883): those 40 resent, nothing else
	 */
	struct burst b = { 0, 1000, 40 };
	/*
	 * The first SEND (1 B) lost with an RQ doorbell record: every later SEND packet comes
	 * after the gap, before the device has read the record, and names a receive WQE
	 * beyond its view; it reads the record and places them all (none refused)
	 */
	struct burst first = { 0, 0, 1 };

	if (!place_run(true, 1000, 0, 0, 31, NULL, false))
		return;
	if (!place_run(true, 10000, 0, 0, 32, NULL, false))
		return;
	if (!place_run(true, 50000, 0, 0, 33, NULL, false))
		return;
	if (!place_run(true, 10000, 20000, 20000, 34, NULL, false))
		return;
	if (!place_run(true, 0, 0, 0, 36, &b, false))
		return;
	CHECK_EQ(b.seen > 1040, true);
	if (!place_run(true, 0, 0, 0, 37, &first, true))
		return;
	if (!place_run(true, 10000, 0, 0, 38, NULL, true))
		return;
	place_run(false, 10000, 0, 0, 35, NULL, false);
}

/*
 * Hostile placement headers: the first packet of an 8 KiB WRITE or SEND is lost, so the
 * rest comes after a gap; its fourth packet (a MIDDLE) has its placement header changed
 * once, on the way. Each variant is dropped and counted (rx_roce_discards) and writes
 * nothing: the requester resends the packet, the message completes intact, and the
 * responder's memory around it keeps its pattern. In order (variant IN_ORDER: nothing lost
 * before it) a header that does not continue the message is an invalid request.
 */
enum {
	HB_RKEY, HB_VA_OUT, HB_LEN_SHORT, HB_LEN_HUGE,	/* WRITE: RETH */
	HB_RORD, HB_OFF_BEYOND, HB_OFF_ODD, HB_RSVD,	/* SEND: SPH */
	HB_IN_ORDER, HB_NOT_SR, HB_N
};

struct hostile {
	unsigned int v;
	uint64_t mr_end;	/* the responder MR's end (iova) */
	unsigned int mangled;
};

static enum wire_action hostile_filter(struct wire *w, unsigned int dir, unsigned int idx,
				       uint8_t *frame, size_t *len)
{
	struct hostile *h = w->ctx;
	uint8_t *bth = frame + 14 + 20 + 8, *x = bth + 12;

	if (dir != 0)
		return W_DELIVER;
	if (idx == 0 && h->v != HB_IN_ORDER && h->v != HB_NOT_SR)
		return W_DROP;
	if (idx != 3 || *len < 14 + 20 + 8 + 12 + 16)
		return W_DELIVER;
	h->mangled++;
	switch (h->v) {
	case HB_RKEY:
		wr32be(x + 8, rd32be(x + 8) ^ 0x00ffff00u);
		break;
	case HB_VA_OUT:
		wr32be(x, (uint32_t)((h->mr_end - 512) >> 32));
		wr32be(x + 4, (uint32_t)(h->mr_end - 512));
		break;
	case HB_LEN_SHORT:
		wr32be(x + 12, 1024);		/* a MIDDLE that says it is the last */
		break;
	case HB_LEN_HUGE:
		wr32be(x + 12, 0x80000001u);	/* above max_msg_size */
		break;
	case HB_RORD:
		wr32be(x, rd32be(x) + 1);	/* a receive WQE not posted */
		break;
	case HB_OFF_BEYOND:
		wr32be(x + 4, 8192);		/* the receive WQE holds 8192 */
		break;
	case HB_OFF_ODD:
		wr32be(x + 4, rd32be(x + 4) + 8);
		break;
	case HB_RSVD:
		x[0] |= 0x80;
		break;
	case HB_IN_ORDER:
		wr32be(x + 4, rd32be(x + 4) + 1024);	/* another place of the same MR */
		break;
	default:
		bth[0] = OP_SR_SEND_MIDDLE;	/* to a go-back-N QP */
		break;
	}
	pkt_fix_icrc(frame, *len);
	return W_DELIVER;
}

static void t_sr_place_hostile(void)
{
	unsigned int v;

	for (v = 0; v < HB_N; v++) {
		bool send = v >= HB_RORD && v <= HB_RSVD;
		struct hostile h = { v, 0, 0 };
		struct connopt o;
		struct conn c;
		struct rmr m[2];
		bool mrs = false;
		struct sge sg;
		struct wc w;

		connopt_default(&o);
		o.timeout = 8;
		o.retry_cnt = 7;
		o.xport = v == HB_NOT_SR ? 0 : TERN_QP_XPORT_SR;
		RQ(conn_setup(&c, &o));
		RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 65536, acc_all, 0) == 0);
		if (mr_create(c.d[1], &m[1], c.d[1]->pdn, 65536, acc_all, 0) != 0) {
			mr_release(&m[0]);
			RQ(0);
		}
		mrs = true;
		mr_fill(c.d[0], &m[0], 3);
		mr_fill(c.d[1], &m[1], 4);
		h.mr_end = m[1].iova + 65536;
		c.w.filter = hostile_filter;
		c.w.ctx = &h;
		sg = mr_sge(&m[0], 0, 8192);
		if (send || v == HB_NOT_SR) {
			struct sge r = mr_sge(&m[1], 16384, 8192);

			post_recv(c.d[1], &c.qp[1], 9, &r, 1);
			ring_rq(c.d[1], &c.qp[1]);
			post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1,
				  0, 0, 0);
		} else {
			post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1,
				  &sg, 1, m[1].iova + 16384, m[1].key, 0);
		}
		ring_sq(c.d[0], &c.qp[0]);
		RQ(conn_poll(&c, 0, &w, 1, 100ull * 4096 << 8) == 1);
		CHECK_EQ(h.mangled, 1);
		if (v == HB_IN_ORDER) {
			/* in order: NAKed as an invalid request, both QPs to ERR */
			CHECK_EQ(w.status, TERN_CQE_REM_INV_REQ_ERR);
			CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
			/* the packets before it were placed, nothing beyond the WRITE's range */
			CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 16384, 3072, 3, 0), -1);
			CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 0, 16384, 4, 0), -1);
			CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 16384 + 8192, 65536 - 16384 - 8192,
						 4, 16384 + 8192), -1);
		} else {
			CHECK_WC(&w, send || v == HB_NOT_SR ? TERN_WQE_SEND : TERN_WQE_RDMA_WRITE,
				 TERN_CQE_OK, 1);
			CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_discards), 1);
			CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 16384, 8192, 3, 0), -1);
			CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 0, 16384, 4, 0), -1);
			CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 16384 + 8192, 65536 - 16384 - 8192,
						 4, 16384 + 8192), -1);
			CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_RTS);
			CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
			if (send || v == HB_NOT_SR) {
				RQ(conn_poll(&c, 1, &w, 1, 100000000ull) == 1);
				CHECK_EQ(w.status, TERN_CQE_OK);
				CHECK_EQ(w.wr_id, 9);
				CHECK_EQ(w.byte_len, 8192);
			}
		}
		if (t_failures)
			printf("#   variant %u\n", v);
out:
		if (mrs) {
			mr_release(&m[0]);
			mr_release(&m[1]);
		}
		conn_free(&c);
		if (t_failures)
			return;
	}
}

/* ---- atomic responses ahead of a missing READ or atomic -------------------------------- */

struct at_ahead {
	uint8_t drop_op;	/* the first response 1 -> 0 with this opcode is lost */
	bool dropped;
	unsigned int atomic_reqs;	/* FETCH_ADD and CMP_SWAP requests 0 -> 1 */
};

static enum wire_action at_ahead_filter(struct wire *w, unsigned int dir, unsigned int idx,
					uint8_t *frame, size_t *len)
{
	struct at_ahead *a = w->ctx;
	const size_t bth = 14 + 20 + 8;	/* Ethernet, IPv4, UDP */

	(void)idx;
	if (*len < bth + 12)
		return W_DELIVER;
	if (dir == 0 && (frame[bth] == OP_FETCH_ADD || frame[bth] == OP_CMP_SWAP))
		a->atomic_reqs++;
	if (dir == 1 && !a->dropped && frame[bth] == a->drop_op) {
		a->dropped = true;
		return W_DROP;
	}
	return W_DELIVER;
}

/*
 * With @lose_read, a READ's only response is lost while the FETCH_ADD and CMP_SWAP posted
 * after it are answered: their responses are kept, the READ alone is asked again, and the
 * atomics complete after it, in SQ order, with their original values, never asked again.
 * Without, the FETCH_ADD's response is lost and the CMP_SWAP's is kept: the FETCH_ADD
 * alone is asked again (answered from the responder's saved result).
 */
static void at_ahead_run(bool lose_read)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	bool mrs = false;
	struct at_ahead a = { lose_read ? OP_READ_RESP_ONLY : OP_ATOMIC_ACK, false, 0 };
	const uint64_t cnt = 64 * 1024, res = 32 * 1024;
	uint8_t b[8];
	struct sge sg;
	struct wc w[3];
	unsigned int i;

	connopt_default(&o);
	o.timeout = 14;			/* 67 ms: recovery must not wait for it */
	o.retry_cnt = 7;
	o.xport = TERN_QP_XPORT_SR;
	o.access = TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_REMOTE_READ | TERN_ACCESS_REMOTE_ATOMIC;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 128 * 1024, acc_all, 0) == 0);
	if (mr_create(c.d[1], &m[1], c.d[1]->pdn, 128 * 1024, acc_all, 0) != 0) {
		mr_release(&m[0]);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[1], &m[1], 21);
	wr64(b, 100);
	mr_write(c.d[1], &m[1], cnt, b, 8);
	c.w.filter = at_ahead_filter;
	c.w.ctx = &a;

	sg = mr_sge(&m[0], 0, 700);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  m[1].iova + 5, m[1].key, 0);
	sg = mr_sge(&m[0], res, 8);
	post_atomic(c.d[0], &c.qp[0], TERN_WQE_ATOMIC_FETCH_ADD, 2, &sg, m[1].iova + cnt,
		    m[1].key, 5, 0);
	sg = mr_sge(&m[0], res + 8, 8);
	post_atomic(c.d[0], &c.qp[0], TERN_WQE_ATOMIC_CMP_SWP, 3, &sg, m[1].iova + cnt,
		    m[1].key, 7, 105);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 3, 20000000ull) == 3);
	CHECK(a.dropped);
	/* in SQ order, all OK */
	CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_OK, 1);
	CHECK_WC(&w[1], TERN_WQE_ATOMIC_FETCH_ADD, TERN_CQE_OK, 2);
	CHECK_WC(&w[2], TERN_WQE_ATOMIC_CMP_SWP, TERN_CQE_OK, 3);
	for (i = 1; i < 3; i++)
		CHECK_EQ(w[i].byte_len, 8);
	CHECK_EQ(mr_diff_pattern(c.d[0], &m[0], 0, 700, 21, 5), -1);
	/* the original values: 100 before the add, 105 before the swap; 7 in the end */
	mr_read(c.d[0], &m[0], res, b, 8);
	CHECK_EQ(rd64(b), 100);
	mr_read(c.d[0], &m[0], res + 8, b, 8);
	CHECK_EQ(rd64(b), 105);
	mr_read(c.d[1], &m[1], cnt, b, 8);
	CHECK_EQ(rd64(b), 7);
	/* each atomic executed once; only a lost atomic response is asked again */
	CHECK_EQ(RDEV_STAT(c.d[1], rx_atomic_requests), 2);
	CHECK_EQ(a.atomic_reqs, lose_read ? 2 : 3);
	CHECK_EQ(RDEV_STAT(c.d[1], atomic_replays), lose_read ? 0 : 1);
	CHECK_EQ(RDEV_STAT(c.d[0], retrans_pkts), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], out_of_order_accepted), lose_read ? 2 : 1);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 0);
	CHECK(!cq_peek(c.d[0], &c.cq[0]));
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
	printf("#   %s response lost: %u atomic requests for 2 atomics, %llu resent\n",
	       lose_read ? "READ" : "FETCH_ADD", a.atomic_reqs,
	       (unsigned long long)RDEV_STAT(c.d[0], retrans_pkts));
out:
	if (mrs) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

static void t_sr_atomic_ahead(void)
{
	at_ahead_run(true);
	at_ahead_run(false);
}

const struct test rdma_sr_tests[] = {
	{ "rdma sr: MODIFY_QP xport field: SR and its cap taken, bad ones refused", t_sr_modify },
	{ "rdma sr: xport layout: rq_psn 31:24 reserved, rsvd, UC/UD, RTR->RTS, V1 in/V2 out",
	  t_sr_xport_layout },
	{ "rdma sr: 0.1% loss: every verb in order, bytes intact, atomics once", t_sr_loss_01 },
	{ "rdma sr: 1% loss: every verb in order, selective resends, fewer than go-back-N",
	  t_sr_loss_1 },
	{ "rdma sr: 5% loss: every verb in order, selective resends, fewer than go-back-N",
	  t_sr_loss_5 },
	{ "rdma sr: 1% loss, 2% duplicates, 2% reordered: harmless", t_sr_dup_reorder },
	{ "rdma sr: burst of 10 lost resent selectively; lost tail probed before the timeout",
	  t_sr_burst_tail },
	{ "rdma sr: a hole takes one PSN of the cap: the QP sends on to its reorder window's end",
	  t_sr_hole_cap },
	{ "rdma sr: a lost resend is seen from later SACKs and resent without a probe",
	  t_sr_resend_lost },
	{ "rdma sr: malformed SACKs dropped and counted; the timeout recovers", t_sr_bad_sack },
	{ "rdma sr: at most 64 QPs hold a reorder buffer; the others recover without",
	  t_sr_buffer_bound },
	{ "rdma sr: READs of 1 B..1 MiB at 0.1/1/5% response loss: placed out of order, "
	  "holes re-asked, fewer responses resent than go-back-N", t_sr_read_loss },
	{ "rdma sr: READ responses in a burst lost, duplicated, reordered: bytes intact, in order",
	  t_sr_read_burst_reorder },
	{ "rdma sr: a READ response with a bad length or outside its READ is not placed",
	  t_sr_read_bad_resp },
	{ "rdma sr: lost READ requests and responses, READs beyond the cap: holes re-asked "
	  "without making a shorter READ", t_sr_read_req_lost },
	{ "rdma sr: a stream of 64 KiB READs at MTU 4096 and 1024, 1% and 5% lost each way: "
	  "every READ intact", t_sr_read_stream },
	{ "rdma sr: SEND and WRITE of 1 B..1 MiB at 0.1/1/5% loss, duplicates, reordering, a burst: "
	  "placed after a gap, every byte in place and nowhere else, completions in order",
	  t_sr_place_loss },
	{ "rdma sr: hostile placement headers (key, address, length, receive ordinal, offset) "
	  "dropped and counted, nothing written; in order an invalid request", t_sr_place_hostile },
	{ "rdma sr: atomic responses ahead of a lost READ or atomic response kept: not asked "
	  "again, original values right, completions in SQ order", t_sr_atomic_ahead },
	{ NULL, NULL },
};
