/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RC atomics: COMPARE_SWAP and FETCH_ADD return the original value in the local SGE; the
 * AtomicETH and AtomicAckETH on the wire (independent decoder, ICRC); misaligned and
 * no-right requests are NAKed; local WQE checks; exactly-once execution when the response
 * or the request is lost or duplicated (replays from the saved result, older duplicates
 * ignored); max_rd_atomic and FENCE; N fetch-and-adds from two QPs over a lossy wire.
 */
#include <stdlib.h>

#include "test_rdma.h"


static const uint32_t acc_atomic = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
				   TERN_ACCESS_REMOTE_READ | TERN_ACCESS_REMOTE_ATOMIC;

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

/* QP events of @qpn on device @d's async EQ: how many, all must be @sub. */
static unsigned int qp_events(struct rdev *d, uint32_t qpn, uint8_t sub)
{
	unsigned int n = 0;
	struct ev e;

	while (eq_next(&d->f, &d->async_eq, &e)) {
		if (e.type != TERN_EQE_QP_EVENT)
			continue;
		CHECK_EQ(e.subtype, sub);
		CHECK_EQ(e.data0, qpn);
		n++;
	}
	return n;
}

static uint64_t mr_u64(struct rdev *d, const struct rmr *mr, uint64_t off)
{
	uint8_t b[8];

	mr_read(d, mr, off, b, 8);
	return rd64(b);
}

static void mr_set_u64(struct rdev *d, const struct rmr *mr, uint64_t off, uint64_t v)
{
	uint8_t b[8];

	wr64(b, v);
	mr_write(d, mr, off, b, 8);
}

/* Logged frames of direction @dir with opcode @op, from log index @from on. */
static unsigned int frames(const struct wire *w, unsigned int dir, uint8_t op, unsigned int from,
			   struct pkt *out, unsigned int max)
{
	unsigned int i, n = 0;
	struct pkt p;

	for (i = from; i < w->nlog; i++) {
		if (w->log[i].dir != dir || !pkt_parse(w->log[i].data, w->log[i].len, &p) ||
		    p.opcode != op)
			continue;
		if (n < max)
			out[n] = p;
		n++;
	}
	return n;
}

/* One atomic on side 0 towards @raddr: waits for its CQE; false (reported) if none. */
static bool atomic_op(struct conn *c, uint8_t op, uint64_t id, const struct sge *sg,
		      uint64_t raddr, uint32_t rkey, uint64_t swap_add, uint64_t compare,
		      struct wc *w)
{
	post_atomic(c->d[0], &c->qp[0], op, id, sg, raddr, rkey, swap_add, compare);
	ring_sq(c->d[0], &c->qp[0]);
	return conn_poll(c, 0, w, 1, 1000000000ull) == 1;
}

/*
 * CAS that succeeds, CAS that fails (memory unchanged, the current value returned), FAA
 * (also wrapping), each returning the original value little-endian in the local SGE; the
 * requests and responses on the wire with their big-endian fields; counters; cap_flags.
 */
static void t_atomic_basic(void)
{
	struct connopt o;
	struct conn c;
	struct rmr lm, rm;
	bool mrs = false;
	struct sge sg;
	struct wc w;
	struct pkt req[8], rsp[8];
	uint8_t raw[8];
	static const uint8_t le[8] = { 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 };
	const uint64_t v0 = 0x1122334455667788ull, v1 = 0xdeadbeefcafef00dull;
	uint8_t q[sizeof(struct tern_cmd_query_rdma_out)];
	unsigned int i, n;

	connopt_default(&o);
	o.access |= TERN_ACCESS_REMOTE_ATOMIC;
	RQ(conn_setup(&c, &o));
	RQ(rdev_cmd(c.d[0], TERN_CMD_QUERY_RDMA, NULL, 0, q, sizeof(q), NULL) == 0);
	CHECK(rd32(q + OFF(struct tern_cmd_query_rdma_out, cap_flags)) & TERN_RDMA_CAP_ATOMIC);
	RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 4096, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	if (mr_create(c.d[1], &rm, c.d[1]->pdn, 4096, acc_atomic, 0x40) != 0) {
		mr_release(&lm);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &lm, 1);
	mr_fill(c.d[1], &rm, 2);
	mr_set_u64(c.d[1], &rm, 8, v0);

	/* CAS, compare equal: swapped; the old value arrives in the SGE, little-endian */
	sg = mr_sge(&lm, 16, 8);
	RQ(atomic_op(&c, TERN_WQE_ATOMIC_CMP_SWP, 1, &sg, rm.iova + 8, rm.key, v1, v0, &w));
	CHECK_WC(&w, TERN_WQE_ATOMIC_CMP_SWP, TERN_CQE_OK, 1);
	CHECK_EQ(w.byte_len, 8);
	CHECK_EQ(w.qpn, c.qp[0].qpn);
	mr_read(c.d[0], &lm, 16, raw, 8);
	CHECK(!memcmp(raw, le, 8));
	CHECK_EQ(mr_u64(c.d[1], &rm, 8), v1);
	/* nothing else touched, either side */
	CHECK_EQ(mr_diff_pattern(c.d[0], &lm, 0, 16, 1, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[0], &lm, 24, 4096 - 24, 1, 24), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0, 8, 2, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 16, 4096 - 16, 2, 16), -1);

	/* CAS, compare different: memory unchanged, the current value returned */
	sg = mr_sge(&lm, 24, 8);
	RQ(atomic_op(&c, TERN_WQE_ATOMIC_CMP_SWP, 2, &sg, rm.iova + 8, rm.key, 5, v0, &w));
	CHECK_WC(&w, TERN_WQE_ATOMIC_CMP_SWP, TERN_CQE_OK, 2);
	CHECK_EQ(w.byte_len, 8);
	CHECK_EQ(mr_u64(c.d[0], &lm, 24), v1);
	CHECK_EQ(mr_u64(c.d[1], &rm, 8), v1);

	/* FAA: the old value back, the sum in memory; and one that wraps around 2^64 */
	sg = mr_sge(&lm, 32, 8);
	RQ(atomic_op(&c, TERN_WQE_ATOMIC_FETCH_ADD, 3, &sg, rm.iova + 8, rm.key,
		     0x0000000100000003ull, 0x5555555555555555ull, &w));
	CHECK_WC(&w, TERN_WQE_ATOMIC_FETCH_ADD, TERN_CQE_OK, 3);
	CHECK_EQ(w.byte_len, 8);
	CHECK_EQ(mr_u64(c.d[0], &lm, 32), v1);
	CHECK_EQ(mr_u64(c.d[1], &rm, 8), v1 + 0x0000000100000003ull);
	sg = mr_sge(&lm, 40, 8);
	RQ(atomic_op(&c, TERN_WQE_ATOMIC_FETCH_ADD, 4, &sg, rm.iova + 8, rm.key,
		     ~0ull - (v1 + 0x0000000100000003ull) + 8, 0, &w));
	CHECK_WC(&w, TERN_WQE_ATOMIC_FETCH_ADD, TERN_CQE_OK, 4);
	CHECK_EQ(mr_u64(c.d[0], &lm, 40), v1 + 0x0000000100000003ull);
	CHECK_EQ(mr_u64(c.d[1], &rm, 8), 7);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 16, 4096 - 16, 2, 16), -1);
	CHECK_EQ(mr_diff_pattern(c.d[0], &lm, 48, 4096 - 48, 1, 48), -1);

	/* the wire: AtomicETH big-endian, one PSN each, AckReq; AtomicAckETH with the value */
	n = frames(&c.w, 0, OP_CMP_SWAP, 0, req, 8);
	CHECK_EQ(n, 2);
	n = frames(&c.w, 0, OP_FETCH_ADD, 0, req + 2, 6);
	CHECK_EQ(n, 2);
	CHECK_EQ(frames(&c.w, 1, OP_ATOMIC_ACK, 0, rsp, 8), 4);
	for (i = 0; i < 4; i++) {
		CHECK_EQ(req[i].icrc_wire, req[i].icrc_calc);
		CHECK_EQ(rsp[i].icrc_wire, rsp[i].icrc_calc);
		CHECK_EQ(req[i].va, rm.iova + 8);
		CHECK_EQ(req[i].rkey, rm.key);
		CHECK(req[i].ackreq);
		CHECK_EQ(req[i].payload_len, 0);
		CHECK_EQ(req[i].padcnt, 0);
		CHECK_EQ(req[i].psn, (o.psn[0] + i) & 0xffffff);
		CHECK_EQ(req[i].dqpn, c.qp[1].qpn);
		CHECK_EQ(req[i].udp_len, 8 + 12 + 28 + 4);
		CHECK_EQ(rsp[i].psn, req[i].psn);
		CHECK_EQ(rsp[i].syndrome & 0x60, 0);
		CHECK_EQ(rsp[i].msn, i + 1);
		CHECK_EQ(rsp[i].payload_len, 0);
		CHECK_EQ(rsp[i].udp_len, 8 + 12 + 4 + 8 + 4);
		CHECK_EQ(rsp[i].dqpn, c.qp[0].qpn);
	}
	CHECK_EQ(req[0].swap_add, v1);
	CHECK_EQ(req[0].compare, v0);
	CHECK_EQ(req[1].swap_add, 5);
	CHECK_EQ(req[1].compare, v0);
	CHECK_EQ(req[2].swap_add, 0x0000000100000003ull);
	CHECK_EQ(req[2].compare, 0);		/* FETCH_ADD: Compare Data sent as zero */
	CHECK_EQ(rsp[0].orig, v0);
	CHECK_EQ(rsp[1].orig, v1);
	CHECK_EQ(rsp[2].orig, v1);
	CHECK_EQ(rsp[3].orig, v1 + 0x0000000100000003ull);
	/* byte order on the wire, spelled out: VA, R_Key, Swap, Compare */
	{
		const uint8_t *x = NULL;
		uint8_t e[28];

		for (i = 0; i < c.w.nlog && !x; i++) {
			struct pkt p;

			if (c.w.log[i].dir == 0 && pkt_parse(c.w.log[i].data, c.w.log[i].len, &p) &&
			    p.opcode == OP_CMP_SWAP)
				x = c.w.log[i].data + 14 + 20 + 8 + 12;
		}
		RQ(x);
		for (i = 0; i < 8; i++) {
			e[i] = (uint8_t)((rm.iova + 8) >> (56 - 8 * i));
			e[12 + i] = (uint8_t)(v1 >> (56 - 8 * i));
			e[20 + i] = (uint8_t)(v0 >> (56 - 8 * i));
		}
		for (i = 0; i < 4; i++)
			e[8 + i] = (uint8_t)(rm.key >> (24 - 8 * i));
		CHECK(!memcmp(x, e, 28));
	}
	CHECK_EQ(RDEV_STAT(c.d[1], rx_atomic_requests), 4);
	CHECK_EQ(RDEV_STAT(c.d[1], atomic_replays), 0);
	CHECK_EQ(RDEV_STAT(c.d[0], rx_atomic_requests), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_read_requests), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_write_requests), 0);
	CHECK_EQ(RDEV_STAT(c.d[0], rx_roce_discards), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_discards), 0);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_RTS);
out:
	if (mrs) {
		mr_release(&lm);
		mr_release(&rm);
	}
	conn_free(&c);
}

enum acase { A_TWO_SGE, A_NO_SGE, A_INLINE, A_SHORT_SGE, A_LONG_SGE, A_BAD_LKEY, A_NO_LWRITE,
	     A_NO_RD_ATOMIC, A_NCASES };

/* Malformed atomic WQEs fail locally with the right status and syndrome; nothing is sent. */
static void t_atomic_local_errors(void)
{
	static const struct {
		uint8_t status, synd;
		const char *name;
	} exp[A_NCASES] = {
		[A_TWO_SGE] = { TERN_CQE_LOC_QP_OP_ERR, TERN_SYND_BAD_SGE_COUNT, "two SGEs" },
		[A_NO_SGE] = { TERN_CQE_LOC_QP_OP_ERR, TERN_SYND_BAD_SGE_COUNT, "no SGE" },
		[A_INLINE] = { TERN_CQE_LOC_QP_OP_ERR, TERN_SYND_BAD_INLINE, "inline" },
		[A_SHORT_SGE] = { TERN_CQE_LOC_LEN_ERR, TERN_SYND_MSG_TOO_LONG, "4-byte SGE" },
		[A_LONG_SGE] = { TERN_CQE_LOC_LEN_ERR, TERN_SYND_MSG_TOO_LONG, "16-byte SGE" },
		[A_BAD_LKEY] = { TERN_CQE_LOC_PROT_ERR, TERN_SYND_LKEY, "stale lkey" },
		[A_NO_LWRITE] = { TERN_CQE_LOC_PROT_ERR, TERN_SYND_ACCESS, "no LOCAL_WRITE" },
		[A_NO_RD_ATOMIC] = { TERN_CQE_LOC_QP_OP_ERR, TERN_SYND_BAD_OPCODE,
				     "max_rd_atomic 0" },
	};
	struct connopt o;
	struct conn c;
	struct rmr lm, ro, rm;
	bool mrs = false;
	struct sge sg[2];
	struct wc w[2];
	unsigned int k, fails;

	for (k = 0; k < A_NCASES; k++) {
		uint8_t op = k & 1 ? TERN_WQE_ATOMIC_FETCH_ADD : TERN_WQE_ATOMIC_CMP_SWP;

		fails = (unsigned int)t_failures;
		connopt_default(&o);
		o.access |= TERN_ACCESS_REMOTE_ATOMIC;
		if (k == A_NO_RD_ATOMIC)
			o.rtr_only = 1;		/* side 0: to RTS below, max_rd_atomic 0 */
		RQ(conn_setup(&c, &o));
		if (k == A_NO_RD_ATOMIC) {
			struct qpattr a;
			struct cqe cq;

			memset(&a, 0, sizeof(a));
			a.state = TERN_QPS_RTS;
			a.sq_psn = o.psn[0];
			a.timeout = o.timeout;
			a.retry_cnt = o.retry_cnt;
			a.rnr_retry = o.rnr_retry;
			a.max_rd_atomic = 0;
			RQ(qp_modify(c.d[0], c.qp[0].qpn,
				     TERN_QP_ATTR_STATE | TERN_QP_ATTR_SQ_PSN |
				     TERN_QP_ATTR_TIMEOUT | TERN_QP_ATTR_RETRY_CNT |
				     TERN_QP_ATTR_RNR_RETRY | TERN_QP_ATTR_MAX_RD_ATOMIC,
				     &a, &cq) == 0);
		}
		RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 4096, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
		RQ(mr_create(c.d[0], &ro, c.d[0]->pdn, 4096, 0, 0) == 0);
		RQ(mr_create(c.d[1], &rm, c.d[1]->pdn, 4096, acc_atomic, 0) == 0);
		mrs = true;
		mr_fill(c.d[0], &lm, 3);
		mr_fill(c.d[1], &rm, 4);
		sg[0] = mr_sge(&lm, 0, 8);
		sg[1] = mr_sge(&lm, 8, 8);
		switch (k) {
		case A_TWO_SGE:
			post_atomic_ex(c.d[0], &c.qp[0], op, TERN_WQE_F_SIGNALED, 1, sg, 2, rm.iova,
				       rm.key, 1, 0);
			break;
		case A_NO_SGE:
			post_atomic_ex(c.d[0], &c.qp[0], op, TERN_WQE_F_SIGNALED, 1, sg, 0, rm.iova,
				       rm.key, 1, 0);
			break;
		case A_INLINE:
			post_atomic_ex(c.d[0], &c.qp[0], op,
				       TERN_WQE_F_SIGNALED | TERN_WQE_F_INLINE, 1, sg, 0, rm.iova,
				       rm.key, 1, 0);
			break;
		case A_SHORT_SGE:
		case A_LONG_SGE:
			sg[0].len = k == A_SHORT_SGE ? 4 : 16;
			post_atomic(c.d[0], &c.qp[0], op, 1, sg, rm.iova, rm.key, 1, 0);
			break;
		case A_BAD_LKEY:
			sg[0].lkey ^= 0x80;
			post_atomic(c.d[0], &c.qp[0], op, 1, sg, rm.iova, rm.key, 1, 0);
			break;
		case A_NO_LWRITE:
			sg[0] = mr_sge(&ro, 0, 8);
			post_atomic(c.d[0], &c.qp[0], op, 1, sg, rm.iova, rm.key, 1, 0);
			break;
		default:
			post_atomic(c.d[0], &c.qp[0], op, 1, sg, rm.iova, rm.key, 1, 0);
			break;
		}
		/* the next WQE is flushed */
		post_atomic(c.d[0], &c.qp[0], op, 2, sg, rm.iova, rm.key, 1, 0);
		ring_sq(c.d[0], &c.qp[0]);
		RQ(conn_poll(&c, 0, w, 2, 1000000) == 2);
		CHECK_EQ(w[0].wr_id, 1);
		CHECK_EQ(w[0].opcode, op);
		CHECK_EQ(w[0].status, exp[k].status);
		CHECK_EQ(w[0].vendor_err, exp[k].synd);
		CHECK_EQ(w[1].wr_id, 2);
		CHECK_EQ(w[1].status, TERN_CQE_WR_FLUSH_ERR);
		CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
		CHECK_EQ(wire_count(&c.w, 0, OP_CMP_SWAP) + wire_count(&c.w, 0, OP_FETCH_ADD), 0);
		CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0, 4096, 4, 0), -1);
		CHECK_EQ(mr_diff_pattern(c.d[0], &lm, 0, 4096, 3, 0), -1);
		CHECK_EQ(RDEV_STAT(c.d[1], rx_atomic_requests), 0);
		if ((unsigned int)t_failures != fails)
			printf("#   ^ case: %s\n", exp[k].name);
		mr_release(&lm);
		mr_release(&ro);
		mr_release(&rm);
		mrs = false;
		conn_free(&c);
	}
	return;
out:
	if (mrs) {
		mr_release(&lm);
		mr_release(&ro);
		mr_release(&rm);
	}
	conn_free(&c);
}

enum rcase { R_MISALIGNED, R_MR_NO_ATOMIC, R_QP_NO_ATOMIC, R_BAD_RKEY, R_OUT_OF_BOUNDS,
	     R_NCASES };

/*
 * Responder checks: a misaligned VA is an invalid request, a missing REMOTE_ATOMIC right (MR
 * or QP), a bad rkey or a range outside the MR a remote access error. The requester's WQE
 * fails with the NAK's status, the responder QP goes to ERR with its event, nothing executes.
 */
static void t_atomic_remote_errors(void)
{
	static const struct {
		uint8_t status, synd, nak, ev;
		const char *name;
	} exp[R_NCASES] = {
		[R_MISALIGNED] = { TERN_CQE_REM_INV_REQ_ERR, TERN_SYND_NAK_INV_REQ, 0x61,
				   TERN_QP_EV_REQ_ERR, "misaligned" },
		[R_MR_NO_ATOMIC] = { TERN_CQE_REM_ACCESS_ERR, TERN_SYND_NAK_ACCESS, 0x62,
				     TERN_QP_EV_ACCESS_ERR, "MR without REMOTE_ATOMIC" },
		[R_QP_NO_ATOMIC] = { TERN_CQE_REM_ACCESS_ERR, TERN_SYND_NAK_ACCESS, 0x62,
				     TERN_QP_EV_ACCESS_ERR, "QP without REMOTE_ATOMIC" },
		[R_BAD_RKEY] = { TERN_CQE_REM_ACCESS_ERR, TERN_SYND_NAK_ACCESS, 0x62,
				 TERN_QP_EV_ACCESS_ERR, "stale rkey" },
		[R_OUT_OF_BOUNDS] = { TERN_CQE_REM_ACCESS_ERR, TERN_SYND_NAK_ACCESS, 0x62,
				      TERN_QP_EV_ACCESS_ERR, "beyond the MR" },
	};
	struct connopt o;
	struct conn c;
	struct rmr lm, rm;
	bool mrs = false;
	struct sge sg;
	struct wc w[2];
	struct pkt p[4];
	unsigned int k, i, fails;

	for (k = 0; k < R_NCASES; k++) {
		uint8_t op = k & 1 ? TERN_WQE_ATOMIC_FETCH_ADD : TERN_WQE_ATOMIC_CMP_SWP;
		uint64_t raddr;
		uint32_t rkey;

		fails = (unsigned int)t_failures;
		connopt_default(&o);
		if (k != R_QP_NO_ATOMIC)
			o.access |= TERN_ACCESS_REMOTE_ATOMIC;
		RQ(conn_setup(&c, &o));
		RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 4096, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
		RQ(mr_create(c.d[1], &rm, c.d[1]->pdn, 4096,
			     k == R_MR_NO_ATOMIC ? acc_atomic & ~TERN_ACCESS_REMOTE_ATOMIC
						 : acc_atomic, 0) == 0);
		mrs = true;
		mr_fill(c.d[0], &lm, 5);
		mr_fill(c.d[1], &rm, 6);
		raddr = rm.iova + 64;
		rkey = rm.key;
		if (k == R_MISALIGNED)
			raddr = rm.iova + 68;
		else if (k == R_BAD_RKEY)
			rkey ^= 0x80;
		else if (k == R_OUT_OF_BOUNDS)
			raddr = rm.iova + 4096;
		sg = mr_sge(&lm, 0, 8);
		/* compare = the memory's value, so a CAS that ran would change it */
		post_atomic(c.d[0], &c.qp[0], op, 1, &sg, raddr, rkey, 0x1111,
			    mr_u64(c.d[1], &rm, 64));
		post_atomic(c.d[0], &c.qp[0], op, 2, &sg, rm.iova, rm.key, 1, 0);
		ring_sq(c.d[0], &c.qp[0]);
		RQ(conn_poll(&c, 0, w, 2, 1000000) == 2);
		CHECK_EQ(w[0].wr_id, 1);
		CHECK_EQ(w[0].opcode, op);
		CHECK_EQ(w[0].status, exp[k].status);
		CHECK_EQ(w[0].vendor_err, exp[k].synd);
		CHECK_EQ(w[1].wr_id, 2);
		CHECK_EQ(w[1].status, TERN_CQE_WR_FLUSH_ERR);
		CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
		/* the request (and maybe the next, pipelined), one NAK back for its PSN */
		i = wire_count(&c.w, 0, OP_CMP_SWAP) + wire_count(&c.w, 0, OP_FETCH_ADD);
		CHECK(i == 1 || i == 2);
		CHECK_EQ(wire_count(&c.w, 1, OP_ATOMIC_ACK), 0);
		CHECK_EQ(frames(&c.w, 1, OP_ACK, 0, p, 4), 1);
		CHECK_EQ(p[0].syndrome, exp[k].nak);
		CHECK_EQ(p[0].psn, o.psn[0]);
		CHECK_EQ(p[0].icrc_wire, p[0].icrc_calc);
		/* responder: ERR with its event, memory as it was */
		CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
		CHECK_EQ(qp_events(c.d[1], c.qp[1].qpn, exp[k].ev), 1);
		CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0, 4096, 6, 0), -1);
		CHECK_EQ(mr_diff_pattern(c.d[0], &lm, 0, 4096, 5, 0), -1);
		CHECK_EQ(RDEV_STAT(c.d[1], rx_atomic_requests), 0);
		CHECK_EQ(RDEV_STAT(c.d[1], resp_remote_access_errors),
			 exp[k].nak == 0x62 ? 1u : 0u);
		CHECK_EQ(RDEV_STAT(c.d[0], req_remote_access_errors), exp[k].nak == 0x62 ? 1u : 0u);
		CHECK_EQ(RDEV_STAT(c.d[0], req_remote_invalid_request),
			 exp[k].nak == 0x61 ? 1u : 0u);
		if ((unsigned int)t_failures != fails)
			printf("#   ^ case: %s\n", exp[k].name);
		mr_release(&lm);
		mr_release(&rm);
		mrs = false;
		conn_free(&c);
	}
	return;
out:
	if (mrs) {
		mr_release(&lm);
		mr_release(&rm);
	}
	conn_free(&c);
}

/* Wire filter: frames of direction @dir with opcode @op (or @op2), from the @nth on, @count
 * of them (0: all), get @act. */
struct flt {
	unsigned int dir;
	uint8_t op, op2;
	unsigned int nth, count;
	enum wire_action act;
	unsigned int seen, hits;
};

static enum wire_action flt_fn(struct wire *w, unsigned int dir, unsigned int idx,
			       uint8_t *frame, size_t *len)
{
	struct flt *f = w->ctx;
	struct pkt p;

	(void)idx;
	if (dir != f->dir || !pkt_parse(frame, *len, &p) ||
	    (p.opcode != f->op && p.opcode != f->op2))
		return W_DELIVER;
	if (f->seen++ < f->nth || (f->count && f->hits >= f->count))
		return W_DELIVER;
	f->hits++;
	return f->act;
}

static void flt_set(struct conn *c, struct flt *f, unsigned int dir, uint8_t op,
		    unsigned int nth, unsigned int count, enum wire_action act)
{
	memset(f, 0, sizeof(*f));
	f->dir = dir;
	f->op = op;
	f->op2 = op;
	f->nth = nth;
	f->count = count;
	f->act = act;
	c->w.filter = flt_fn;
	c->w.ctx = f;
}

/* Copy of the first logged frame of @dir with @op and @psn; its length, 0 if none. */
static size_t frame_copy(const struct wire *w, unsigned int dir, uint8_t op, uint32_t psn,
			 uint8_t *buf, size_t cap)
{
	unsigned int i;
	struct pkt p;

	for (i = 0; i < w->nlog; i++) {
		if (w->log[i].dir != dir || !pkt_parse(w->log[i].data, w->log[i].len, &p) ||
		    p.opcode != op || p.psn != psn || w->log[i].len > cap)
			continue;
		memcpy(buf, w->log[i].data, w->log[i].len);
		return w->log[i].len;
	}
	return 0;
}

/*
 * Exactly once: a lost ATOMIC_ACK makes the requester retry after its timeout and the
 * responder answer from the saved value (atomic_replays) without adding again; a duplicated
 * request executes once. With max_dest_rd_atomic 1, a duplicate of an atomic older than the
 * saved one is ignored (no response, no execution); one of the saved atomic is replayed.
 */
static void t_atomic_replay(void)
{
	struct connopt o;
	struct conn c;
	struct rmr lm, rm;
	bool mrs = false;
	struct sge sg;
	struct wc w;
	struct flt f;
	struct pkt p[8];
	uint64_t rep, dup;
	unsigned int n, pass;
	uint8_t fr[256], fr2[256];
	size_t flen, flen2;

	for (pass = 0; pass < 2; pass++) {
		connopt_default(&o);
		o.access |= TERN_ACCESS_REMOTE_ATOMIC;
		o.timeout = 8;			/* 1 ms */
		if (pass == 1)
			o.rd_atomic = 1;
		RQ(conn_setup(&c, &o));
		RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 4096, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
		if (mr_create(c.d[1], &rm, c.d[1]->pdn, 4096, acc_atomic, 0) != 0) {
			mr_release(&lm);
			RQ(0);
		}
		mrs = true;
		mr_set_u64(c.d[1], &rm, 0, 100);
		if (pass == 1)
			goto older;

		/* the first ATOMIC_ACK is lost: retried after the timeout, replayed */
		flt_set(&c, &f, 1, OP_ATOMIC_ACK, 0, 1, W_DROP);
		sg = mr_sge(&lm, 0, 8);
		RQ(atomic_op(&c, TERN_WQE_ATOMIC_FETCH_ADD, 1, &sg, rm.iova, rm.key, 5, 0, &w));
		CHECK_WC(&w, TERN_WQE_ATOMIC_FETCH_ADD, TERN_CQE_OK, 1);
		CHECK_EQ(f.hits, 1);
		CHECK_EQ(mr_u64(c.d[0], &lm, 0), 100);
		CHECK_EQ(mr_u64(c.d[1], &rm, 0), 105);
		CHECK_EQ(RDEV_STAT(c.d[1], rx_atomic_requests), 1);
		CHECK_EQ(RDEV_STAT(c.d[1], atomic_replays), 1);
		CHECK_EQ(RDEV_STAT(c.d[1], duplicate_request), 1);
		CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 1);
		CHECK_EQ(RDEV_STAT(c.d[0], retrans_pkts), 1);
		CHECK_EQ(frames(&c.w, 0, OP_FETCH_ADD, 0, p, 8), 2);
		CHECK_EQ(p[0].psn, p[1].psn);
		CHECK_EQ(frames(&c.w, 1, OP_ATOMIC_ACK, 0, p, 8), 2);
		CHECK_EQ(p[0].orig, 100);
		CHECK_EQ(p[1].orig, 100);	/* the saved value, not the new one */
		CHECK(!cq_peek(c.d[0], &c.cq[0]));

		/* the request arrives twice: executed once, one CQE */
		rep = RDEV_STAT(c.d[1], atomic_replays);
		dup = RDEV_STAT(c.d[1], duplicate_request);
		wire_clear_log(&c.w);
		flt_set(&c, &f, 0, OP_FETCH_ADD, 0, 1, W_DUP);
		sg = mr_sge(&lm, 8, 8);
		RQ(atomic_op(&c, TERN_WQE_ATOMIC_FETCH_ADD, 2, &sg, rm.iova, rm.key, 1, 0, &w));
		CHECK_WC(&w, TERN_WQE_ATOMIC_FETCH_ADD, TERN_CQE_OK, 2);
		wire_advance(&c.w, 5000000);
		CHECK_EQ(f.hits, 1);
		CHECK_EQ(mr_u64(c.d[0], &lm, 8), 105);
		CHECK_EQ(mr_u64(c.d[1], &rm, 0), 106);
		CHECK_EQ(RDEV_STAT(c.d[1], rx_atomic_requests), 2);
		CHECK_EQ(RDEV_STAT(c.d[1], duplicate_request), dup + 1);
		/* answered by the response already queued, or replayed: never executed again */
		n = frames(&c.w, 1, OP_ATOMIC_ACK, 0, p, 8);
		CHECK_EQ(n, 1 + RDEV_STAT(c.d[1], atomic_replays) - rep);
		CHECK(n >= 1 && n <= 2);
		CHECK_EQ(p[0].orig, 105);
		CHECK(!cq_peek(c.d[0], &c.cq[0]));
		CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
		CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_RTS);
		goto next;
older:
		/* one saved result: A (PSN p) then B (p + 1); A's duplicate is older than it */
		c.w.filter = NULL;
		sg = mr_sge(&lm, 0, 8);
		RQ(atomic_op(&c, TERN_WQE_ATOMIC_FETCH_ADD, 1, &sg, rm.iova, rm.key, 10, 0, &w));
		CHECK_WC(&w, TERN_WQE_ATOMIC_FETCH_ADD, TERN_CQE_OK, 1);
		sg = mr_sge(&lm, 8, 8);
		RQ(atomic_op(&c, TERN_WQE_ATOMIC_CMP_SWP, 2, &sg, rm.iova, rm.key, 7, 110, &w));
		CHECK_WC(&w, TERN_WQE_ATOMIC_CMP_SWP, TERN_CQE_OK, 2);
		CHECK_EQ(mr_u64(c.d[1], &rm, 0), 7);
		CHECK_EQ(mr_u64(c.d[0], &lm, 0), 100);
		CHECK_EQ(mr_u64(c.d[0], &lm, 8), 110);
		dup = RDEV_STAT(c.d[1], duplicate_request);
		flen = frame_copy(&c.w, 0, OP_FETCH_ADD, o.psn[0], fr, sizeof(fr));
		flen2 = frame_copy(&c.w, 0, OP_CMP_SWAP, (o.psn[0] + 1) & 0xffffff, fr2,
				   sizeof(fr2));
		RQ(flen && flen2);
		wire_clear_log(&c.w);
		CHECK_EQ(tern_model_rx_frame(c.d[1]->f.m, fr, flen), flen);
		wire_pump(&c.w);
		CHECK_EQ(wire_count(&c.w, 1, -1), 0);		/* no answer at all */
		CHECK_EQ(mr_u64(c.d[1], &rm, 0), 7);
		CHECK_EQ(RDEV_STAT(c.d[1], rx_atomic_requests), 2);
		CHECK_EQ(RDEV_STAT(c.d[1], atomic_replays), 0);
		CHECK_EQ(RDEV_STAT(c.d[1], duplicate_request), dup + 1);
		/* B's duplicate: answered with B's saved value, not run again (memory 7) */
		CHECK_EQ(tern_model_rx_frame(c.d[1]->f.m, fr2, flen2), flen2);
		wire_pump(&c.w);
		CHECK_EQ(frames(&c.w, 1, OP_ATOMIC_ACK, 0, p, 8), 1);
		CHECK_EQ(p[0].orig, 110);
		CHECK_EQ(p[0].psn, (o.psn[0] + 1) & 0xffffff);
		CHECK_EQ(p[0].icrc_wire, p[0].icrc_calc);
		CHECK_EQ(mr_u64(c.d[1], &rm, 0), 7);
		CHECK_EQ(RDEV_STAT(c.d[1], rx_atomic_requests), 2);
		CHECK_EQ(RDEV_STAT(c.d[1], atomic_replays), 1);
		CHECK_EQ(RDEV_STAT(c.d[1], duplicate_request), dup + 2);
		CHECK_EQ(RDEV_STAT(c.d[0], duplicate_response), 1);
		CHECK(!cq_peek(c.d[0], &c.cq[0]));
		CHECK_EQ(mr_u64(c.d[0], &lm, 8), 110);
		CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
		CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_RTS);
next:
		c.w.filter = NULL;
		mr_release(&lm);
		mr_release(&rm);
		mrs = false;
		conn_free(&c);
	}
	return;
out:
	if (mrs) {
		mr_release(&lm);
		mr_release(&rm);
	}
	conn_free(&c);
}

/* PSNs of the distinct requests of @op sent in direction 0. */
static unsigned int distinct_reqs(const struct wire *w, uint8_t op)
{
	uint32_t psns[64];
	unsigned int i, j, n = 0;
	struct pkt p;

	for (i = 0; i < w->nlog; i++) {
		if (w->log[i].dir != 0 || !pkt_parse(w->log[i].data, w->log[i].len, &p) ||
		    p.opcode != op)
			continue;
		for (j = 0; j < n && psns[j] != p.psn; j++)
			;
		if (j == n && n < 64)
			psns[n++] = p.psn;
	}
	return n;
}

/*
 * max_rd_atomic 2: with responses held back, only two of a READ and five atomics go out; a
 * FENCE WQE waits for an outstanding atomic. Everything completes once responses flow.
 */
static void t_atomic_rd_limit(void)
{
	struct connopt o;
	struct conn c;
	struct rmr lm, rm;
	bool mrs = false;
	struct sge sg;
	struct wc w[8];
	struct flt f;
	unsigned int i, first_ack = ~0u, write_at = ~0u;
	uint64_t got[5];
	struct pkt p;

	connopt_default(&o);
	o.access |= TERN_ACCESS_REMOTE_ATOMIC;
	o.timeout = 8;
	o.rd_atomic = 2;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 4096, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	if (mr_create(c.d[1], &rm, c.d[1]->pdn, 4096, acc_atomic, 0) != 0) {
		mr_release(&lm);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &lm, 7);
	mr_fill(c.d[1], &rm, 8);
	mr_set_u64(c.d[1], &rm, 0, 1000);

	/* FENCE: a WRITE behind an atomic whose response is lost waits for the retry */
	flt_set(&c, &f, 1, OP_ATOMIC_ACK, 0, 1, W_DROP);
	sg = mr_sge(&lm, 0, 8);
	post_atomic(c.d[0], &c.qp[0], TERN_WQE_ATOMIC_FETCH_ADD, 1, &sg, rm.iova, rm.key, 1, 0);
	sg = mr_sge(&lm, 1024, 64);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED | TERN_WQE_F_FENCE, 2,
		  &sg, 1, rm.iova + 1024, rm.key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);
	CHECK_EQ(f.hits, 1);
	CHECK_EQ(wire_count(&c.w, 0, OP_FETCH_ADD), 1);
	CHECK_EQ(wire_count(&c.w, 0, OP_WRITE_ONLY), 0);
	RQ(conn_poll(&c, 0, w, 2, 100000000) == 2);
	CHECK_WC(&w[0], TERN_WQE_ATOMIC_FETCH_ADD, TERN_CQE_OK, 1);
	CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 2);
	for (i = 0; i < c.w.nlog; i++) {
		if (!pkt_parse(c.w.log[i].data, c.w.log[i].len, &p))
			continue;
		if (c.w.log[i].dir == 1 && p.opcode == OP_ATOMIC_ACK &&
		    c.w.log[i].action == W_DELIVER && first_ack == ~0u)
			first_ack = i;
		if (c.w.log[i].dir == 0 && p.opcode == OP_WRITE_ONLY && write_at == ~0u)
			write_at = i;
	}
	CHECK(first_ack != ~0u && write_at != ~0u && write_at > first_ack);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 1024, 64, 7, 1024), -1);
	CHECK_EQ(mr_u64(c.d[1], &rm, 0), 1001);

	/* a READ and five atomics, responses held: two requests go out */
	wire_clear_log(&c.w);
	flt_set(&c, &f, 1, OP_ATOMIC_ACK, 0, 0, W_DROP);
	f.op2 = OP_READ_RESP_ONLY;
	sg = mr_sge(&lm, 2048, 100);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 10, &sg, 1,
		  rm.iova + 2048, rm.key, 0);
	for (i = 0; i < 5; i++) {
		sg = mr_sge(&lm, 8 + 8 * i, 8);
		post_atomic(c.d[0], &c.qp[0], TERN_WQE_ATOMIC_FETCH_ADD, 11 + i, &sg, rm.iova,
			    rm.key, 1, 0);
	}
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);
	CHECK_EQ(wire_count(&c.w, 0, OP_READ_REQ), 1);
	CHECK_EQ(distinct_reqs(&c.w, OP_FETCH_ADD), 1);
	CHECK_EQ(mr_u64(c.d[1], &rm, 0), 1002);
	/* a timeout resends the same two, nothing new */
	wire_advance(&c.w, 1500000);
	CHECK_EQ(distinct_reqs(&c.w, OP_READ_REQ), 1);
	CHECK_EQ(distinct_reqs(&c.w, OP_FETCH_ADD), 1);
	CHECK(RDEV_STAT(c.d[0], local_ack_timeout_err) >= 2);
	CHECK_EQ(mr_u64(c.d[1], &rm, 0), 1002);
	c.w.filter = NULL;
	RQ(conn_poll(&c, 0, w, 6, 100000000) == 6);
	CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_OK, 10);
	CHECK_EQ(w[0].byte_len, 100);
	for (i = 0; i < 5; i++) {
		CHECK_WC(&w[1 + i], TERN_WQE_ATOMIC_FETCH_ADD, TERN_CQE_OK, 11 + i);
		CHECK_EQ(w[1 + i].byte_len, 8);
		got[i] = mr_u64(c.d[0], &lm, 8 + 8 * i);
		CHECK_EQ(got[i], 1001 + i);
	}
	CHECK_EQ(mr_diff_pattern(c.d[0], &lm, 2048, 100, 8, 2048), -1);
	CHECK_EQ(mr_u64(c.d[1], &rm, 0), 1006);
	CHECK_EQ(distinct_reqs(&c.w, OP_FETCH_ADD), 5);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_atomic_requests), 6);
	CHECK(RDEV_STAT(c.d[1], atomic_replays) >= 2);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_RTS);
out:
	if (mrs) {
		mr_release(&lm);
		mr_release(&rm);
	}
	conn_free(&c);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#define LOSSY_N		300	/* fetch-and-adds per QP */
#define LOSSY_BATCH	24

/*
 * Both devices drop, duplicate, reorder and corrupt RoCE frames: two QPs of device 0, each
 * connected to its own QP of device 1, do LOSSY_N fetch-and-adds of 1 each on one counter
 * in device 1's memory. The counter ends exactly 2 * LOSSY_N higher, the 2 * LOSSY_N values
 * returned are all distinct (exactly the values it went through), every atomic executed
 * once (rx_atomic_requests) and lost responses were replayed.
 */
static void t_atomic_lossy_exactly_once(void)
{
	const uint64_t base = 0xfffffffffffffe00ull;	/* the sum crosses 2^64 on the way */
	struct connopt o;
	struct conn c;
	struct rqp qb[2];
	struct rqp *rq[2];
	struct rmr lm, rm;
	bool mrs = false, qbs = false;
	unsigned int done[2] = { 0, 0 }, posted[2] = { 0, 0 }, total = 0, s, i;
	struct wc w[2 * LOSSY_BATCH];
	uint64_t *v = NULL;

	memset(qb, 0, sizeof(qb));
	connopt_default(&o);
	o.access |= TERN_ACCESS_REMOTE_ATOMIC;
	o.timeout = 8;			/* 1 ms */
	o.rd_atomic = 4;
	RQ(conn_setup(&c, &o));
	for (s = 0; s < 2; s++)
		RQ(qp_create(c.d[s], &qb[s], c.d[s]->pdn, &c.cq[s], &c.cq[s], o.sq_log, o.sq_stride,
			     o.rq_log, o.rq_stride, 0, false) == 0);
	qbs = true;
	for (s = 0; s < 2; s++)
		RQ(qp_connect(c.d[s], &qb[s], c.d[!s], qb[!s].qpn, &o, s));
	RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 2 * LOSSY_N * 8, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	if (mr_create(c.d[1], &rm, c.d[1]->pdn, 4096, acc_atomic, 0x100) != 0) {
		mr_release(&lm);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[1], &rm, 9);
	mr_set_u64(c.d[1], &rm, 0x80, base);
	for (s = 0; s < 2; s++)
		RQ(faults_set(c.d[s], 20000, 5000, 20000, 10000, 0xa70c + s) == 0);
	rq[0] = &c.qp[0];
	rq[1] = &qb[0];
	while (total < 2 * LOSSY_N) {
		unsigned int n = 0, got;

		for (s = 0; s < 2; s++) {
			for (i = 0; i < LOSSY_BATCH && posted[s] < LOSSY_N; i++, posted[s]++, n++) {
				struct sge sg = mr_sge(&lm, 8 * (s * LOSSY_N + posted[s]), 8);

				post_atomic(c.d[0], rq[s], TERN_WQE_ATOMIC_FETCH_ADD,
					    (uint64_t)s << 32 | posted[s], &sg, rm.iova + 0x80,
					    rm.key, 1, 0);
			}
			ring_sq(c.d[0], rq[s]);
		}
		got = conn_poll(&c, 0, w, n, 2000000000ull);
		for (i = 0; i < got; i++) {
			unsigned int side = (unsigned int)(w[i].wr_id >> 32);

			CHECK_EQ(w[i].status, TERN_CQE_OK);
			CHECK_EQ(w[i].opcode, TERN_WQE_ATOMIC_FETCH_ADD);
			CHECK_EQ(w[i].byte_len, 8);
			CHECK_EQ(w[i].qpn, rq[side & 1]->qpn);
			CHECK_EQ((uint32_t)w[i].wr_id, done[side & 1]);	/* in order per QP */
			done[side & 1]++;
		}
		total += got;
		RQ(got == n);
	}
	CHECK_EQ(done[0], LOSSY_N);
	CHECK_EQ(done[1], LOSSY_N);
	wire_advance(&c.w, 5000000);		/* stragglers: duplicates still on the wire */
	CHECK_EQ(mr_u64(c.d[1], &rm, 0x80), base + 2 * LOSSY_N);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0, 0x80, 9, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0x88, 4096 - 0x88, 9, 0x88), -1);
	v = calloc(2 * LOSSY_N, sizeof(*v));
	RQ(v);
	for (i = 0; i < 2 * LOSSY_N; i++)
		v[i] = mr_u64(c.d[0], &lm, 8 * i);
	/* per QP the values rise (the counter only grows, each QP's atomics run in order) */
	for (s = 0; s < 2; s++)
		for (i = 1; i < LOSSY_N; i++)
			CHECK(v[s * LOSSY_N + i] - base > v[s * LOSSY_N + i - 1] - base);
	qsort(v, 2 * LOSSY_N, sizeof(*v), cmp_u64);
	/* distinct and exactly base .. base + 2N - 1 (sorted as unsigned: wrapped ones first) */
	for (i = 1; i < 2 * LOSSY_N; i++)
		CHECK(v[i] != v[i - 1]);
	{
		unsigned int hit = 0;

		for (i = 0; i < 2 * LOSSY_N; i++)
			if (v[i] - base < 2 * LOSSY_N)
				hit++;
		CHECK_EQ(hit, 2 * LOSSY_N);
	}
	CHECK_EQ(RDEV_STAT(c.d[1], rx_atomic_requests), 2 * LOSSY_N);
	CHECK(RDEV_STAT(c.d[1], atomic_replays) > 0);
	CHECK(RDEV_STAT(c.d[1], duplicate_request) > 0);
	CHECK(RDEV_STAT(c.d[0], retrans_pkts) > 0);
	CHECK(RDEV_STAT(c.d[0], rx_icrc_errors) + RDEV_STAT(c.d[1], rx_icrc_errors) > 0);
	printf("#   lossy atomics: replays %llu, duplicate requests %llu, retransmitted %llu\n",
	       (unsigned long long)RDEV_STAT(c.d[1], atomic_replays),
	       (unsigned long long)RDEV_STAT(c.d[1], duplicate_request),
	       (unsigned long long)RDEV_STAT(c.d[0], retrans_pkts));
	for (s = 0; s < 2; s++) {
		CHECK_EQ(qp_state(c.d[s], c.qp[s].qpn), TERN_QPS_RTS);
		CHECK_EQ(qp_state(c.d[s], qb[s].qpn), TERN_QPS_RTS);
	}
out:
	free(v);
	if (mrs) {
		mr_release(&lm);
		mr_release(&rm);
	}
	if (qbs) {
		for (s = 0; s < 2; s++) {
			qmem_free(&qb[s].sq);
			qmem_free(&qb[s].rq);
		}
	}
	conn_free(&c);
}

const struct test rdma_atomic_tests[] = {
	{ "rdma atomic: CAS hit/miss, FAA: original value back, AtomicETH/AckETH on the wire",
	  t_atomic_basic },
	{ "rdma atomic: malformed atomic WQEs fail locally (SGE, inline, lkey, max_rd_atomic)",
	  t_atomic_local_errors },
	{ "rdma atomic: misaligned -> REM_INV_REQ_ERR, no right/rkey/bounds -> REM_ACCESS_ERR",
	  t_atomic_remote_errors },
	{ "rdma atomic: lost response replayed, duplicate once, older duplicate ignored",
	  t_atomic_replay },
	{ "rdma atomic: max_rd_atomic counts atomics and READs; FENCE waits for atomics",
	  t_atomic_rd_limit },
	{ "rdma atomic: lossy wire, two QPs: N fetch-and-adds each executed exactly once",
	  t_atomic_lossy_exactly_once },
	{ NULL, NULL },
};
