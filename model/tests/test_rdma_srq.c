/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared receive queues: the SRQ commands and doorbell, RC QPs on one SRQ receiving
 * interleaved multi-packet SENDs, the limit event, RNR on an empty SRQ, a QP on the SRQ going
 * to ERR (flush of its WQE, LAST_WQE_REACHED), an unreadable SRQ ring, device reset, and an
 * SRQ with a doorbell record (TERN_SRQ_F_DB_REC) and the shorter CREATE_SRQ of before it.
 */
#include <stdlib.h>

#include "test_rdma.h"

#define SRQI(f)	OFF(struct tern_cmd_create_srq_in, f)
#define QPI(f)	OFF(struct tern_cmd_create_qp_in, f)
#define RQE(f)	OFF(struct tern_rq_wqe, f)
#define SGE(f)	OFF(struct tern_sge, f)

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

/* Count (and consume) the async events of @d with @type/@subtype naming @obj; others are
 * counted in *other when given. */
static unsigned int count_events(struct rdev *d, uint8_t type, uint8_t subtype, uint32_t obj,
				 unsigned int *other)
{
	unsigned int n = 0;
	struct ev e;

	while (eq_next(&d->f, &d->async_eq, &e)) {
		if (e.type == type && e.subtype == subtype && e.data0 == obj)
			n++;
		else if (other)
			(*other)++;
	}
	return n;
}

static int srq_create(struct rdev *d, struct rsrq *s, unsigned int log, unsigned int stride)
{
	return srq_create_ex(d, s, log, stride, 0);
}

static int srq_destroy(struct rdev *d, uint32_t srqn, struct cqe *c)
{
	uint8_t in[4];

	wr32(in, srqn);
	return rdev_cmd(d, TERN_CMD_DESTROY_SRQ, in, 4, NULL, 0, c);
}

static int srq_modify(struct rdev *d, uint32_t srqn, uint32_t limit, struct cqe *c)
{
	uint8_t in[sizeof(struct tern_cmd_modify_srq_in)];

	wr32(in + OFF(struct tern_cmd_modify_srq_in, srqn), srqn);
	wr32(in + OFF(struct tern_cmd_modify_srq_in, limit), limit);
	return rdev_cmd(d, TERN_CMD_MODIFY_SRQ, in, sizeof(in), NULL, 0, c);
}

struct srqstate {
	uint32_t limit;
	uint16_t pi, ci;
};

static int srq_query(struct rdev *d, uint32_t srqn, struct srqstate *q)
{
	typedef struct tern_cmd_query_srq_out T;
	uint8_t in[4], out[sizeof(T)];
	unsigned int i;
	int st;

	wr32(in, srqn);
	memset(out, 0xee, sizeof(out));
	st = rdev_cmd(d, TERN_CMD_QUERY_SRQ, in, 4, out, sizeof(out), NULL);
	if (st != TERN_CMD_OK)
		return st;
	q->limit = rd32(out + OFF(T, limit));
	q->pi = rd16(out + OFF(T, pi));
	q->ci = rd16(out + OFF(T, ci));
	for (i = 0; i < 8; i++)
		CHECK_EQ(out[OFF(T, rsvd) + i], 0);
	return st;
}

static void srq_qp_in(struct rdev *d, uint8_t in[sizeof(struct tern_cmd_create_qp_in)],
		      struct rqp *qp, struct rcq *cq, uint32_t srqn)
{
	srq_qp_in_type(d, in, qp, cq, srqn, TERN_QPT_RC);
}

static int srq_qp_create(struct rdev *d, struct rqp *qp, struct rcq *cq, uint32_t srqn,
			 struct cqe *c)
{
	return srq_qp_create_type(d, qp, cq, srqn, TERN_QPT_RC, c);
}

/* ---- a fixture: device 0 sends on NQP RC QPs to NQP QPs of device 1 on one SRQ -------------- */

#define NQP		3
#define SLOT_BYTES	16384u

struct sfix {
	struct conn c;		/* devices, wire and one CQ per side; c.qp unused */
	struct rsrq srq;
	struct rqp tx[NQP], rx[NQP];
	struct rmr smr, rmr;
	bool drop_send_last;	/* filter: SEND_LAST/SEND_LAST_IMM to device 1 are lost */
	unsigned int dropped;
	/* selective repeat: frames to device 1 lost, changed */
	bool base_valid;
	uint32_t base_psn;	/* the first request's PSN */
	uint64_t drop_off;	/* bit i: base_psn + i is lost, the first time it is sent */
	bool block_first;	/* the first SEND_FIRST's PSN is lost, every time it is sent */
	bool blocked_valid;
	uint32_t blocked_psn;
	int mangle_off;		/* base_psn + it (with an SPH): rord moved by rord_delta, once */
	int32_t rord_delta;
	unsigned int mangled;
};

static enum wire_action sfix_filter(struct wire *w, unsigned int dir, unsigned int idx,
				    uint8_t *frame, size_t *len)
{
	struct sfix *x = w->ctx;
	struct pkt p;
	uint32_t off;

	(void)idx;
	if (dir != 0 || !pkt_parse(frame, *len, &p))
		return W_DELIVER;
	if (x->drop_send_last && (p.opcode == OP_SEND_LAST || p.opcode == OP_SEND_LAST_IMM)) {
		x->dropped++;
		return W_DROP;
	}
	if (!x->base_valid) {
		x->base_valid = true;
		x->base_psn = p.psn;
	}
	off = (p.psn - x->base_psn) & 0xffffffu;
	if (off < 64 && (x->drop_off >> off) & 1) {
		x->drop_off &= ~(1ull << off);
		x->dropped++;
		return W_DROP;
	}
	if (x->block_first && !x->blocked_valid && p.opcode == OP_SEND_FIRST) {
		x->blocked_valid = true;
		x->blocked_psn = p.psn;
	}
	if (x->block_first && x->blocked_valid && p.psn == x->blocked_psn) {
		x->dropped++;
		return W_DROP;
	}
	if ((int)off == x->mangle_off && p.has_sph) {
		uint8_t *sph = frame + 14 + 20 + 8 + 12;

		x->mangle_off = -1;
		wr32be(sph, (rd32be(sph) + (uint32_t)x->rord_delta) & 0xffffffu);
		pkt_fix_icrc(frame, *len);
		x->mangled++;
	}
	return W_DELIVER;
}

static bool sfix_setup_ex(struct sfix *x, const struct connopt *o, unsigned int srq_log,
			  uint32_t srq_flags)
{
	struct conn *c = &x->c;
	unsigned int s, q;

	memset(x, 0, sizeof(*x));
	x->mangle_off = -1;
	c->o = *o;
	for (s = 0; s < 2; s++) {
		c->d[s] = rdev_new(s);
		if (!c->d[s])
			return false;
	}
	wire_init(&c->w, &c->d[0]->f, &c->d[1]->f);
	c->w.filter = sfix_filter;
	c->w.ctx = x;
	for (s = 0; s < 2; s++) {
		if (cq_create(c->d[s], &c->cq[s], o->cq_log, false) != TERN_CMD_OK) {
			printf("#   sfix: CREATE_CQ\n");
			return false;
		}
	}
	if (srq_create_ex(c->d[1], &x->srq, srq_log, 6, srq_flags) != TERN_CMD_OK) {
		printf("#   sfix: CREATE_SRQ\n");
		return false;
	}
	for (q = 0; q < NQP; q++) {
		if (qp_create(c->d[0], &x->tx[q], c->d[0]->pdn, &c->cq[0], &c->cq[0], o->sq_log,
			      o->sq_stride, o->rq_log, o->rq_stride, 0, false) != TERN_CMD_OK ||
		    srq_qp_create(c->d[1], &x->rx[q], &c->cq[1], x->srq.srqn, NULL) != TERN_CMD_OK) {
			printf("#   sfix: CREATE_QP %u\n", q);
			return false;
		}
	}
	for (q = 0; q < NQP; q++) {
		if (!qp_connect(c->d[0], &x->tx[q], c->d[1], x->rx[q].qpn, o, 0) ||
		    !qp_connect(c->d[1], &x->rx[q], c->d[0], x->tx[q].qpn, o, 1))
			return false;
	}
	if (mr_create(c->d[0], &x->smr, c->d[0]->pdn, 1 << 20, TERN_ACCESS_LOCAL_WRITE, 0) ||
	    mr_create(c->d[1], &x->rmr, c->d[1]->pdn, 1 << 20, TERN_ACCESS_LOCAL_WRITE, 0)) {
		printf("#   sfix: CREATE_MR\n");
		return false;
	}
	mr_fill(c->d[0], &x->smr, 11);
	memset(mr_ptr(c->d[1], &x->rmr, 0), 0, 8 * SLOT_BYTES);
	return true;
}

static bool sfix_setup(struct sfix *x, const struct connopt *o, unsigned int srq_log)
{
	return sfix_setup_ex(x, o, srq_log, 0);
}

static void sfix_free(struct sfix *x)
{
	unsigned int q;

	for (q = 0; q < NQP; q++) {
		qmem_free(&x->tx[q].sq);
		qmem_free(&x->tx[q].rq);
		qmem_free(&x->rx[q].sq);
	}
	qmem_free(&x->srq.mem);
	mr_release(&x->smr);
	mr_release(&x->rmr);
	conn_free(&x->c);
}

/* Post an SRQ WQE for slot-sized receive buffers: wr_id 1000 + slot, two SGEs (the first
 * 1000 bytes at the slot's start, the rest 1024 bytes further). */
static unsigned int sfix_post(struct sfix *x)
{
	unsigned int slot = x->srq.pi & ((1u << x->srq.log) - 1);
	uint64_t base = (uint64_t)slot * SLOT_BYTES;
	struct sge sg[2] = {
		mr_sge(&x->rmr, base, 1000),
		mr_sge(&x->rmr, base + 1024, SLOT_BYTES - 1024),
	};

	return srq_post(x->c.d[1], &x->srq, 1000 + slot, sg, 2);
}

/* The message of @len bytes at @off of the send MR landed in @slot (layout of sfix_post). */
static bool slot_holds(struct sfix *x, unsigned int slot, uint64_t off, uint32_t len)
{
	uint64_t base = (uint64_t)slot * SLOT_BYTES;
	uint32_t a = len < 1000 ? len : 1000;

	if (mr_diff_pattern(x->c.d[1], &x->rmr, base, a, 11, off) != -1)
		return false;
	return len <= 1000 ||
	       mr_diff_pattern(x->c.d[1], &x->rmr, base + 1024, len - a, 11, off + a) == -1;
}

static void sfix_send(struct sfix *x, unsigned int q, uint8_t opcode, uint64_t wr_id, uint64_t off,
		      uint32_t len, uint32_t imm)
{
	struct sge sg = mr_sge(&x->smr, off, len);

	post_send(x->c.d[0], &x->tx[q], opcode, TERN_WQE_F_SIGNALED, wr_id, &sg, 1, 0, 0, imm);
}

/* ---- tests ------------------------------------------------------------------------------------ */

static void t_srq_cmds(void)
{
	typedef struct tern_cmd_query_rdma_out Q;
	struct rdev *d = rdev_new(0);
	uint8_t in[sizeof(struct tern_cmd_create_srq_in)];
	uint8_t qin[sizeof(struct tern_cmd_create_qp_in)];
	uint8_t out[sizeof(Q)], small[15];
	struct rcq cq;
	struct rsrq s, s2;
	struct rqp qp;
	struct srqstate st;
	struct cqe c;
	uint32_t max_srq, n, i, pdn2;
	uint64_t mis;

	REQUIRE(d);
	memset(&s, 0, sizeof(s));
	memset(&s2, 0, sizeof(s2));
	memset(&qp, 0, sizeof(qp));
	memset(&cq, 0, sizeof(cq));
	/* QUERY_RDMA says SRQs exist and how many */
	RQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA, NULL, 0, out, sizeof(out), NULL) == TERN_CMD_OK);
	CHECK(rd32(out + OFF(Q, cap_flags)) & TERN_RDMA_CAP_SRQ);
	max_srq = rd32(out + OFF(Q, max_srq));
	CHECK(max_srq >= 1 && max_srq <= 65536);
	CHECK(out[OFF(Q, max_srq_log_depth)] >= 6 && out[OFF(Q, max_srq_log_depth)] <= 15);
	CHECK_EQ(out[OFF(Q, rsvd1)] | out[OFF(Q, rsvd1) + 1] | out[OFF(Q, rsvd1) + 2], 0);

	/* CREATE_SRQ validation */
	qmem_alloc(d, &s.mem, 1 << 12, false);
	s.log = 4;
	s.stride = 6;
	s.uar = d->uar;
	srq_in(d, in, &s.mem, 4, 6);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in) - 1, NULL, 0, &c),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, sizeof(in));
	wr32(in + SRQI(pdn), d->pdn + 1);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c),
		 TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(c.syndrome, SRQI(pdn));
	srq_in(d, in, &s.mem, 4, 6);
	wr16(in + SRQI(uar), TERN_DB_FIRST_UAR - 1);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, SRQI(uar));
	wr16(in + SRQI(uar), TERN_DB_NUM_PAGES);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, SRQI(uar));
	srq_in(d, in, &s.mem, 0, 6);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, SRQI(log_depth));
	srq_in(d, in, &s.mem, out[OFF(Q, max_srq_log_depth)] + 1u, 6);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, SRQI(log_depth));
	srq_in(d, in, &s.mem, 4, TERN_RQ_MIN_LOG_STRIDE - 1);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, SRQI(log_stride));
	srq_in(d, in, &s.mem, 4, TERN_RQ_MAX_LOG_STRIDE + 1);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, SRQI(log_stride));
	srq_in(d, in, &s.mem, 4, 6);
	in[SRQI(mem) + OFF(struct tern_mem_desc, mode)] = 0x7f;
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK(c.syndrome >= SRQI(mem) && c.syndrome < SRQI(mem) + 16);
	/* a 4 KiB ring is too small for 2^7 slots of 64 bytes */
	srq_in(d, in, &s.mem, 7, 6);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK(c.syndrome >= SRQI(mem) && c.syndrome < SRQI(mem) + 16);
	srq_in(d, in, &s.mem, 4, 6);
	RQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c) == TERN_CMD_OK);
	s.srqn = c.result;
	CHECK(s.srqn < max_srq);

	/* QUERY_SRQ */
	RQ(srq_query(d, s.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.limit, 0);
	CHECK_EQ(st.pi, 0);
	CHECK_EQ(st.ci, 0);
	wr32(small, s.srqn);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_SRQ, small, 4, small, sizeof(small), &c),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, sizeof(struct tern_cmd_query_srq_out));
	CHECK_EQ(srq_query(d, s.srqn + 1, &st), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(srq_query(d, 0xffffff, &st), TERN_CMD_BAD_RESOURCE);

	/* MODIFY_SRQ: limit below the depth */
	CHECK_EQ(srq_modify(d, s.srqn, 16, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(struct tern_cmd_modify_srq_in, limit));
	CHECK_EQ(srq_modify(d, s.srqn + 1, 1, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(c.syndrome, OFF(struct tern_cmd_modify_srq_in, srqn));
	CHECK_EQ(srq_modify(d, s.srqn, 15, &c), TERN_CMD_OK);
	RQ(srq_query(d, s.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.limit, 15);
	CHECK_EQ(srq_modify(d, s.srqn, 0, &c), TERN_CMD_OK);
	RQ(srq_query(d, s.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.limit, 0);

	/* doorbell: PI recorded; beyond the depth ignored; wrong UAR or SRQN ignored and counted */
	mis = RDEV_STAT(d, db_misdirected);
	db64(d, d->uar, TERN_UDB_SRQ, s.srqn | 3ull << TERN_UDB_PI_SHIFT);
	RQ(srq_query(d, s.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.pi, 3);
	db64(d, d->uar, TERN_UDB_SRQ, s.srqn | 17ull << TERN_UDB_PI_SHIFT);
	RQ(srq_query(d, s.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.pi, 3);
	db64(d, d->uar, TERN_UDB_SRQ, s.srqn | 16ull << TERN_UDB_PI_SHIFT);
	RQ(srq_query(d, s.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.pi, 16);
	db64(d, (uint16_t)(d->uar + 1), TERN_UDB_SRQ, s.srqn | 5ull << TERN_UDB_PI_SHIFT);
	db64(d, d->uar, TERN_UDB_SRQ, (s.srqn + 1) | 5ull << TERN_UDB_PI_SHIFT);
	RQ(srq_query(d, s.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.pi, 16);
	CHECK_EQ(st.ci, 0);
	CHECK_EQ(RDEV_STAT(d, db_misdirected), mis + 2);

	/* CREATE_QP on the SRQ: RQ fields must be zero, srqn must exist */
	RQ(cq_create(d, &cq, 6, false) == TERN_CMD_OK);
	qp.sq_log = 6;
	qp.sq_stride = 7;
	qmem_alloc(d, &qp.sq, 1 << 13, false);
	srq_qp_in(d, qin, &qp, &cq, s.srqn);
	qin[QPI(log_rq_depth)] = 4;
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_QP, qin, sizeof(qin), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, QPI(log_rq_depth));
	srq_qp_in(d, qin, &qp, &cq, s.srqn);
	qin[QPI(log_rq_stride)] = 6;
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_QP, qin, sizeof(qin), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, QPI(log_rq_stride));
	srq_qp_in(d, qin, &qp, &cq, s.srqn);
	qin[QPI(rq_mem) + OFF(struct tern_mem_desc, npages)] = 1;
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_QP, qin, sizeof(qin), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, QPI(rq_mem) + OFF(struct tern_mem_desc, npages));
	srq_qp_in(d, qin, &qp, &cq, s.srqn + 1);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_QP, qin, sizeof(qin), NULL, 0, &c),
		 TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(c.syndrome, QPI(srqn));
	srq_qp_in(d, qin, &qp, &cq, 0xffffffu);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_QP, qin, sizeof(qin), NULL, 0, &c),
		 TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(c.syndrome, QPI(srqn));
	/* without the flag, srqn must be zero */
	srq_qp_in(d, qin, &qp, &cq, s.srqn);
	qin[QPI(flags)] = 0;
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_QP, qin, sizeof(qin), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	srq_qp_in(d, qin, &qp, &cq, s.srqn);
	RQ(rdev_cmd(d, TERN_CMD_CREATE_QP, qin, sizeof(qin), NULL, 0, &c) == TERN_CMD_OK);
	qp.qpn = c.result;
	qp.uar = d->uar;
	/* an RQ doorbell for a QP without RQ is misdirected */
	mis = RDEV_STAT(d, db_misdirected);
	qp.rq_pi = 1;
	ring_rq(d, &qp);
	CHECK_EQ(RDEV_STAT(d, db_misdirected), mis + 1);

	/* in use: the SRQ, and its PD, cannot be destroyed */
	CHECK_EQ(srq_destroy(d, s.srqn, &c), TERN_CMD_BAD_STATE);
	CHECK_EQ(c.syndrome, OFF(struct tern_cmd_destroy_srq_in, srqn));
	RQ(pd_create(d, &pdn2) == TERN_CMD_OK);
	srq_in(d, in, &s.mem, 4, 6);
	wr32(in + SRQI(pdn), pdn2);
	RQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c) == TERN_CMD_OK);
	s2.srqn = c.result;
	CHECK(s2.srqn != s.srqn);
	CHECK_EQ(pd_destroy(d, pdn2), TERN_CMD_BAD_STATE);
	CHECK_EQ(srq_destroy(d, s2.srqn, &c), TERN_CMD_OK);
	CHECK_EQ(pd_destroy(d, pdn2), TERN_CMD_OK);
	CHECK_EQ(srq_destroy(d, s2.srqn, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(c.syndrome, OFF(struct tern_cmd_destroy_srq_in, srqn));
	CHECK_EQ(qp_destroy(d, &qp), TERN_CMD_OK);
	CHECK_EQ(srq_destroy(d, s.srqn, &c), TERN_CMD_OK);
	CHECK_EQ(srq_query(d, s.srqn, &st), TERN_CMD_BAD_RESOURCE);
	mis = RDEV_STAT(d, db_misdirected);
	db64(d, d->uar, TERN_UDB_SRQ, s.srqn | 1ull << TERN_UDB_PI_SHIFT);
	CHECK_EQ(RDEV_STAT(d, db_misdirected), mis + 1);

	/* exhaustion: max_srq of them, then NO_RESOURCES; one freed is reused */
	RQ(max_srq <= 4096);
	srq_in(d, in, &s.mem, 4, 6);
	for (n = 0; n < max_srq + 1; n++) {
		if (rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c) != TERN_CMD_OK)
			break;
	}
	CHECK_EQ(n, max_srq);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c),
		 TERN_CMD_NO_RESOURCES);
	CHECK_EQ(srq_destroy(d, max_srq / 2, &c), TERN_CMD_OK);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_OK);
	CHECK_EQ(c.result, max_srq / 2);
	for (i = 0; i < max_srq; i++)
		CHECK_EQ(srq_destroy(d, i, &c), TERN_CMD_OK);
	CHECK_EQ(cq_destroy(d, &cq), TERN_CMD_OK);
out:
	qmem_free(&qp.sq);
	qmem_free(&cq.mem);
	rdev_free(d);
}

/* Device reset forgets SRQs (and their doorbells go nowhere). */
static void t_srq_reset(void)
{
	struct rdev *d = rdev_new(0);
	struct rsrq s;
	struct srqstate st;
	struct cqe c;

	REQUIRE(d);
	memset(&s, 0, sizeof(s));
	RQ(srq_create(d, &s, 3, 5) == TERN_CMD_OK);
	RQ(srq_modify(d, s.srqn, 2, &c) == TERN_CMD_OK);
	tern_model_reset(d->f.m);
	d->f.now += 10 * 1000 * 1000;
	if (d->f.deadline != UINT64_MAX) {
		d->f.deadline = UINT64_MAX;
		tern_model_timer(d->f.m);
	}
	fk_run(&d->f);
	RQ(drv_cmdq_enable(&d->f, 4));
	CHECK_EQ(srq_query(d, s.srqn, &st), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(srq_destroy(d, s.srqn, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(RDEV_STAT(d, srq_limit_events), 0);
	/* a PD again, then the first SRQN again */
	RQ(pd_create(d, &d->pdn) == TERN_CMD_OK);
	qmem_free(&s.mem);
	RQ(srq_create(d, &s, 3, 5) == TERN_CMD_OK);
	CHECK_EQ(s.srqn, 0);
	RQ(srq_query(d, s.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.limit, 0);
	CHECK_EQ(st.pi, 0);
out:
	qmem_free(&s.mem);
	rdev_free(d);
}

/*
 * Three RC QPs on one SRQ receive interleaved SENDs of 1 to 47 packets (MTU 256, so the
 * longer messages span several scheduling turns of their sender and are in progress on
 * several QPs at once): each message lands intact in the slot its CQE names, the CQE names
 * the right QP, every slot is used once, and the SRQ's CI counts the messages. With @sr, the
 * same in selective repeat with 3 % of the frames lost and 2 % reordered on both ports: the
 * SENDs after a gap take their QP's next SRQ WQEs ahead and are placed at once, and the
 * result is the same.
 */
static void srq_interleaved(bool sr)
{
	static const uint32_t lens[4] = { 100, 9000, 2600, 12000 };
	struct connopt o;
	struct sfix x;
	struct wc w[32];
	struct srqstate st;
	unsigned int q, k, i, got_per_qp[NQP] = { 0 };
	bool slot_used[16] = { false };

	connopt_default(&o);
	o.mtu = 1;
	if (sr) {
		o.xport = TERN_QP_XPORT_SR;
		o.timeout = 8;
		o.retry_cnt = 7;
	}
	REQUIRE(sfix_setup(&x, &o, 4));
	for (i = 0; sr && i < 2; i++)
		RQ(faults_set(x.c.d[i], 30000, 0, 0, 20000, 77 + i) == TERN_CMD_OK);
	for (i = 0; i < 14; i++)
		sfix_post(&x);
	srq_ring(x.c.d[1], &x.srq);
	for (k = 0; k < 4; k++) {
		for (q = 0; q < NQP; q++) {
			uint64_t off = (uint64_t)(q * 4 + k) * SLOT_BYTES;

			sfix_send(&x, q, k == 2 ? TERN_WQE_SEND_IMM : TERN_WQE_SEND, q * 10 + k, off,
				  lens[k] - q, 0xabc00000u + q * 16 + k);
		}
	}
	for (q = 0; q < NQP; q++)
		ring_sq(x.c.d[0], &x.tx[q]);
	RQ(conn_poll(&x.c, 1, w, 4 * NQP, sr ? 5000000000ull : 50000000) == 4 * NQP);
	for (i = 0; i < 4 * NQP; i++) {
		unsigned int slot = w[i].wqe_idx;

		q = NQP;
		for (k = 0; k < NQP; k++)
			if (w[i].qpn == x.rx[k].qpn)
				q = k;
		RQ(q < NQP);
		k = got_per_qp[q]++;	/* RC: the k-th receive of a QP is its k-th message */
		RQ(k < 4);
		CHECK_EQ(w[i].status, TERN_CQE_OK);
		CHECK_EQ(w[i].opcode, k == 2 ? TERN_CQE_RECV_IMM : TERN_CQE_RECV);
		CHECK_EQ(w[i].byte_len, lens[k] - q);
		CHECK_EQ(w[i].src_qpn, 0);
		RQ(slot < 16);
		CHECK_EQ(w[i].wr_id, 1000 + slot);
		CHECK(!slot_used[slot]);
		slot_used[slot] = true;
		if (k == 2) {
			CHECK(w[i].flags & TERN_CQE_F_IMM);
			CHECK_EQ(w[i].imm, 0xabc00000u + q * 16 + k);
		}
		if (!slot_holds(&x, slot, (uint64_t)(q * 4 + k) * SLOT_BYTES, lens[k] - q)) {
			t_failures++;
			printf("#   QP %u message %u: data in slot %u wrong\n", q, k, slot);
		}
	}
	/* the first 12 slots were taken, in order, two are left */
	for (i = 0; i < 16; i++)
		CHECK_EQ(slot_used[i], i < 4 * NQP);
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.pi, 14);
	CHECK_EQ(st.ci, 4 * NQP);
	RQ(conn_poll(&x.c, 0, w, 4 * NQP, sr ? 5000000000ull : 10000000) == 4 * NQP);
	for (i = 0; i < 4 * NQP; i++)
		CHECK_EQ(w[i].status, TERN_CQE_OK);
	if (sr) {
		/* kept after a gap, none refused */
		CHECK(RDEV_STAT(x.c.d[1], out_of_order_accepted) > 0);
		CHECK_EQ(RDEV_STAT(x.c.d[1], rx_roce_discards), 0);
		goto out;	/* the wire log holds resends: the interleaving is not counted */
	}
	/* messages really were in progress on several QPs at once: SEND_FIRSTs of different
	 * QPs arrived between a SEND_FIRST and its SEND_LAST */
	{
		unsigned int open = 0, max_open = 0;
		struct pkt p;

		for (i = 0; i < x.c.w.nlog; i++) {
			if (x.c.w.log[i].dir != 0 ||
			    !pkt_parse(x.c.w.log[i].data, x.c.w.log[i].len, &p))
				continue;
			if (p.opcode == OP_SEND_FIRST)
				open++;
			if (p.opcode == OP_SEND_LAST || p.opcode == OP_SEND_LAST_IMM)
				open--;
			if (open > max_open)
				max_open = open;
		}
		CHECK(max_open >= 2);
	}
	CHECK_EQ(RDEV_STAT(x.c.d[1], rnr_naks_sent), 0);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
	/* the QPs have no RQ: their RQ index does not move */
	for (q = 0; q < NQP; q++) {
		uint8_t qo[sizeof(struct tern_cmd_query_qp_out)];

		RQ(qp_query(x.c.d[1], x.rx[q].qpn, qo) == TERN_CMD_OK);
		CHECK_EQ(rd16(qo + OFF(struct tern_cmd_query_qp_out, rq_ci)), 0);
	}
out:
	sfix_free(&x);
}

static void t_srq_interleaved(void)
{
	srq_interleaved(false);
}

static void t_srq_interleaved_sr(void)
{
	srq_interleaved(true);
}

/* ---- selective repeat: SENDs after a gap take their SRQ WQEs ahead (IRN) -------------------- */

static void sr_opts(struct connopt *o)
{
	connopt_default(o);
	o->mtu = 1;		/* 256 */
	o->xport = TERN_QP_XPORT_SR;
	o->timeout = 8;
	o->retry_cnt = 7;
}

/* How many request frames to device 1 the wire log holds for PSN base + @off. */
static unsigned int psn_sent(struct sfix *x, uint32_t off)
{
	unsigned int i, n = 0;
	struct pkt p;

	for (i = 0; i < x->c.w.nlog; i++)
		if (x->c.w.log[i].dir == 0 &&
		    pkt_parse(x->c.w.log[i].data, x->c.w.log[i].len, &p) &&
		    ((p.psn - x->base_psn) & 0xffffffu) == off)
			n++;
	return n;
}

/* Bytes [@a, @b) of a message at @off of the send MR are in @slot (layout of sfix_post). */
static bool slot_part(struct sfix *x, unsigned int slot, uint64_t off, uint32_t a, uint32_t b)
{
	uint64_t base = (uint64_t)slot * SLOT_BYTES;
	uint32_t e = b < 1000 ? b : 1000;

	if (a < e && mr_diff_pattern(x->c.d[1], &x->rmr, base + a, e - a, 11, off + a) != -1)
		return false;
	if (b > 1000) {
		uint32_t s = a > 1000 ? a : 1000;

		return mr_diff_pattern(x->c.d[1], &x->rmr, base + 24 + s, b - s, 11, off + s) == -1;
	}
	return true;
}

/* Nothing was written to @slot (both of its SGEs' bytes are still 0). */
static bool slot_zero(struct sfix *x, unsigned int slot)
{
	const uint8_t *b = mr_ptr(x->c.d[1], &x->rmr, (uint64_t)slot * SLOT_BYTES);
	unsigned int i;

	for (i = 0; i < SLOT_BYTES; i++)
		if (b[i])
			return false;
	return true;
}

/*
 * Selective repeat on an SRQ QP: five SENDs of 1 to 12 packets (MTU 256). The second
 * message's first packet (PSN 1) is lost until everything else arrived; PSNs 14 and 25
 * (inside the third and fourth) are lost once. The MIDDLE and LAST packets after the gap
 * name their receive ordinal: the responder takes the SRQ WQEs up to it, in order, and
 * places them at once: their bytes are in the later messages' slots while the hole is
 * still open and no receive has completed, and those takes raise the SRQ's limit event
 * as any take does. Then every message is intact in slot k, the
 * CQEs come in order with the right wr_id and byte_len, only the lost PSNs are resent
 * (and the tail-loss probe's one), nothing was refused, the SRQ's CI counts the messages.
 */
static void t_srq_sr_place(void)
{
	static const uint32_t lens[5] = { 100, 2600, 3000, 1800, 700 };
	struct connopt o;
	struct sfix x;
	struct wc w[8];
	struct srqstate st;
	struct cqe c;
	uint64_t off[5];
	unsigned int i, last = 0, other = 0;

	sr_opts(&o);
	REQUIRE(sfix_setup(&x, &o, 4));
	for (i = 0; i < 8; i++)
		sfix_post(&x);
	srq_ring(x.c.d[1], &x.srq);
	RQ(srq_modify(x.c.d[1], x.srq.srqn, 4, &c) == TERN_CMD_OK);	/* fewer than 4 left */
	x.block_first = true;
	x.drop_off = 1ull << 14 | 1ull << 25;
	for (i = 0; i < 5; i++) {
		off[i] = (uint64_t)i * SLOT_BYTES;
		sfix_send(&x, 0, i == 4 ? TERN_WQE_SEND_IMM : TERN_WQE_SEND, 10 + i, off[i], lens[i],
			  0x5eed0000u + i);
		last += (lens[i] + 255) / 256;
	}
	RQ(last == 35);
	ring_sq(x.c.d[0], &x.tx[0]);
	wire_pump(&x.c.w);
	RQ(x.blocked_valid && ((x.blocked_psn - x.base_psn) & 0xffffffu) == 1);
	/* the hole is open: the first message only completed; the rest placed ahead */
	RQ(cq_poll(x.c.d[1], &x.c.cq[1], &w[0]));
	CHECK_EQ(w[0].wr_id, 1000);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
	CHECK(slot_part(&x, 1, off[1], 256, 2599));	/* all of it but its FIRST and last byte */
	CHECK(slot_part(&x, 2, off[2], 256, 512));	/* PSN 13, before the lost 14 */
	CHECK(slot_part(&x, 2, off[2], 768, 2999));
	CHECK(slot_part(&x, 3, off[3], 512, 1799));	/* after the lost 25 */
	CHECK(slot_part(&x, 4, off[4], 256, 699));
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 5);		/* reserved ahead, in order */
	/* a take ahead is a take: 3 left, the limit event went out once */
	CHECK_EQ(RDEV_STAT(x.c.d[1], srq_limit_events), 1);
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_SRQ_EVENT, TERN_SRQ_EV_LIMIT, x.srq.srqn, &other),
		 1);
	x.block_first = false;
	RQ(conn_poll(&x.c, 1, w + 1, 4, 5000000000ull) == 4);
	for (i = 0; i < 5; i++) {
		CHECK_EQ(w[i].status, TERN_CQE_OK);
		CHECK_EQ(w[i].qpn, x.rx[0].qpn);
		CHECK_EQ(w[i].wqe_idx, i);
		CHECK_EQ(w[i].wr_id, 1000 + i);
		CHECK_EQ(w[i].byte_len, lens[i]);
		CHECK_EQ(w[i].opcode, i == 4 ? TERN_CQE_RECV_IMM : TERN_CQE_RECV);
		if (!slot_holds(&x, i, off[i], lens[i])) {
			t_failures++;
			printf("#   message %u: data in slot %u wrong\n", i, i);
		}
	}
	CHECK_EQ(w[4].imm, 0x5eed0004u);
	RQ(conn_poll(&x.c, 0, w, 5, 5000000000ull) == 5);
	for (i = 0; i < 5; i++)
		CHECK_WC(&w[i], i == 4 ? TERN_WQE_SEND_IMM : TERN_WQE_SEND, TERN_CQE_OK, 10 + i);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
	/* only what was lost went again, and the probe's last packet */
	for (i = 0; i < last; i++) {
		unsigned int n = psn_sent(&x, i);

		if (i == 1)
			CHECK(n >= 2);
		else if (i == 14 || i == 25)
			CHECK_EQ(n, 2);
		else if (i != last - 1)
			CHECK_EQ(n, 1);
		if (t_failures) {
			printf("#   PSN +%u sent %u times\n", i, n);
			goto out;
		}
	}
	CHECK(RDEV_STAT(x.c.d[0], selective_retrans_pkts) >= 3);
	CHECK(RDEV_STAT(x.c.d[1], out_of_order_accepted) >= 30);
	CHECK_EQ(RDEV_STAT(x.c.d[1], rx_roce_discards), 0);
	CHECK_EQ(RDEV_STAT(x.c.d[1], rnr_naks_sent), 0);
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 5);
out:
	sfix_free(&x);
}

/*
 * A message's first packet never arrives: the three SENDs after it took SRQ WQEs 0..2
 * ahead. The QP goes to ERR (@how 0), straight to RESET (1) or is destroyed (2): the three
 * complete with WR_FLUSH_ERR on its receive CQ, in order, so software gets their slots back
 * (a destroyed QP's CQEs are the driver's to clean and count); the SRQ
 * gives nothing twice (another QP's SEND gets slot 3), and memory for the reservations is
 * given back.
 */
static void srq_sr_flush(unsigned int how)
{
	static const uint32_t lens[3] = { 2600, 3000, 1800 };
	struct connopt o;
	struct sfix x;
	struct wc w[4];
	struct srqstate st;
	unsigned int i, other = 0;
	uint64_t h0;

	sr_opts(&o);
	REQUIRE(sfix_setup(&x, &o, 3));
	for (i = 0; i < 6; i++)
		sfix_post(&x);
	srq_ring(x.c.d[1], &x.srq);
	h0 = tern_model_host_mem(x.c.d[1]->f.m);
	x.block_first = true;
	for (i = 0; i < 3; i++)
		sfix_send(&x, 0, TERN_WQE_SEND, 10 + i, (uint64_t)i * SLOT_BYTES, lens[i], 0);
	ring_sq(x.c.d[0], &x.tx[0]);
	wire_pump(&x.c.w);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 3);
	CHECK(tern_model_host_mem(x.c.d[1]->f.m) > h0);	/* reorder window, reservations */
	if (how == 2) {
		RQ(qp_destroy(x.c.d[1], &x.rx[0]) == TERN_CMD_OK);
	} else if (how == 1) {
		struct qpattr a;

		memset(&a, 0, sizeof(a));
		a.state = TERN_QPS_RESET;
		RQ(qp_modify(x.c.d[1], x.rx[0].qpn, TERN_QP_ATTR_STATE, &a, NULL) ==
		   TERN_CMD_OK);
	} else {
		RQ(qp_to_err(x.c.d[1], &x.rx[0]) == TERN_CMD_OK);
	}
	x.block_first = false;
	wire_pump(&x.c.w);
	for (i = 0; i < 3; i++) {
		RQ(cq_poll(x.c.d[1], &x.c.cq[1], &w[i]));
		CHECK_EQ(w[i].qpn, x.rx[0].qpn);
		CHECK_EQ(w[i].status, TERN_CQE_WR_FLUSH_ERR);
		CHECK_EQ(w[i].opcode, TERN_CQE_RECV);
		CHECK_EQ(w[i].wr_id, 1000 + i);
		CHECK_EQ(w[i].wqe_idx, i);
	}
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_QP_EVENT, TERN_QP_EV_LAST_WQE_REACHED,
			      x.rx[0].qpn, &other), how ? 0 : 1);
	if (how)	/* the reorder window and reservations went with the QP's state */
		CHECK(tern_model_host_mem(x.c.d[1]->f.m) < h0);
	/* the next SRQ WQE goes to another QP */
	sfix_send(&x, 1, TERN_WQE_SEND, 20, 8192, 500, 0);
	ring_sq(x.c.d[0], &x.tx[1]);
	RQ(conn_poll(&x.c, 1, w, 1, 100000000ull) == 1);
	CHECK_EQ(w[0].status, TERN_CQE_OK);
	CHECK_EQ(w[0].qpn, x.rx[1].qpn);
	CHECK_EQ(w[0].wr_id, 1003);
	CHECK(slot_holds(&x, 3, 8192, 500));
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 4);
	if (how != 2)
		CHECK_EQ(qp_destroy(x.c.d[1], &x.rx[0]), TERN_CMD_OK);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));	/* flushed once, not again */
out:
	sfix_free(&x);
}

static void t_srq_sr_flush(void)
{
	unsigned int how;

	for (how = 0; how < 3 && !t_failures; how++)
		srq_sr_flush(how);
}

/*
 * The SRQ runs dry while SENDs after a gap take WQEs ahead: two WQEs posted, three SENDs,
 * the second's first packet lost until the rest arrived. The first SEND took WQE 0 in
 * order, the second's packets WQE 1 ahead; the third's find the SRQ empty and are kept
 * whole, taking nothing. In order the third meets the empty SRQ: RNR NAK, as without
 * selective repeat; once a WQE is posted it lands there intact. Every WQE used once.
 */
static void t_srq_sr_rnr(void)
{
	static const uint32_t lens[3] = { 100, 2600, 1800 };
	struct connopt o;
	struct sfix x;
	struct wc w[4];
	struct srqstate st;
	unsigned int i;

	sr_opts(&o);
	REQUIRE(sfix_setup(&x, &o, 3));
	for (i = 0; i < 2; i++)
		sfix_post(&x);
	srq_ring(x.c.d[1], &x.srq);
	x.block_first = true;
	for (i = 0; i < 3; i++)
		sfix_send(&x, 0, TERN_WQE_SEND, 10 + i, (uint64_t)i * SLOT_BYTES, lens[i], 0);
	ring_sq(x.c.d[0], &x.tx[0]);
	wire_pump(&x.c.w);
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 2);
	CHECK_EQ(RDEV_STAT(x.c.d[1], rnr_naks_sent), 0);
	CHECK_EQ(RDEV_STAT(x.c.d[1], rx_roce_discards), 0);
	x.block_first = false;
	RQ(conn_poll(&x.c, 1, w, 2, 5000000000ull) == 2);
	wire_advance(&x.c.w, 200000);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
	CHECK(RDEV_STAT(x.c.d[1], rnr_naks_sent) >= 1);
	sfix_post(&x);
	srq_ring(x.c.d[1], &x.srq);
	RQ(conn_poll(&x.c, 1, w + 2, 1, 5000000000ull) == 1);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(w[i].status, TERN_CQE_OK);
		CHECK_EQ(w[i].wr_id, 1000 + i);
		CHECK_EQ(w[i].byte_len, lens[i]);
		CHECK(slot_holds(&x, i, (uint64_t)i * SLOT_BYTES, lens[i]));
	}
	RQ(conn_poll(&x.c, 0, w, 3, 5000000000ull) == 3);
	for (i = 0; i < 3; i++)
		CHECK_WC(&w[i], TERN_WQE_SEND, TERN_CQE_OK, 10 + i);
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 3);
out:
	sfix_free(&x);
}

/*
 * Hostile receive ordinals after a gap: the second message's first packet is lost once,
 * and its second packet (a MIDDLE) names another ordinal. One the reorder window (1024)
 * or more ahead, or of the message already completed, is dropped and counted, takes no
 * SRQ WQE and writes nothing: the requester resends it and both messages complete intact.
 * One 3 ahead, inside the window, takes the WQEs up to it (bounded by the window); in its
 * turn it is an invalid request (QP to ERR, as without an SRQ) and every WQE the QP took
 * completes with a flush: none is lost or used twice, nothing beyond them is written.
 */
static void t_srq_sr_hostile(void)
{
	static const int32_t delta[4] = { 1024, 0x800000, -1, 3 };
	unsigned int v;

	for (v = 0; v < 4; v++) {
		struct connopt o;
		struct sfix x;
		struct wc w[8];
		struct srqstate st;
		unsigned int i;
		bool in_win = delta[v] == 3;

		sr_opts(&o);
		REQUIRE(sfix_setup(&x, &o, 4));
		for (i = 0; i < 8; i++)
			sfix_post(&x);
		srq_ring(x.c.d[1], &x.srq);
		x.drop_off = 1ull << 1;
		x.mangle_off = 2;
		x.rord_delta = delta[v];
		sfix_send(&x, 0, TERN_WQE_SEND, 10, 0, 100, 0);
		sfix_send(&x, 0, TERN_WQE_SEND, 11, SLOT_BYTES, 2600, 0);
		ring_sq(x.c.d[0], &x.tx[0]);
		RQ(conn_poll(&x.c, 1, w, in_win ? 5 : 2, 5000000000ull) == (in_win ? 5 : 2));
		CHECK_EQ(x.mangled, 1);
		CHECK_EQ(w[0].status, TERN_CQE_OK);
		CHECK_EQ(w[0].wr_id, 1000);
		CHECK_EQ(w[0].byte_len, 100);
		CHECK(slot_holds(&x, 0, 0, 100));
		RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
		for (i = 5; i < 8; i++)
			CHECK(slot_zero(&x, i));
		if (!in_win) {
			CHECK_EQ(w[1].status, TERN_CQE_OK);
			CHECK_EQ(w[1].wr_id, 1001);
			CHECK_EQ(w[1].byte_len, 2600);
			CHECK_EQ(RDEV_STAT(x.c.d[1], rx_roce_discards), 1);
			CHECK(slot_holds(&x, 1, SLOT_BYTES, 2600));
			/* nothing written to the slots after them */
			for (i = 2; i < 5; i++)
				CHECK(slot_zero(&x, i));
			CHECK_EQ(st.ci, 2);
			CHECK_EQ(qp_state(x.c.d[1], x.rx[0].qpn), TERN_QPS_RTS);
			RQ(qp_to_err(x.c.d[1], &x.rx[0]) == TERN_CMD_OK);
			wire_pump(&x.c.w);
		} else {
			/*
			 * WQEs up to ordinal 4 were taken (the window bounds how many); the
			 * packet is caught as an invalid request in its turn (its ordinal is
			 * not the message's), as without an SRQ: the QP goes to ERR and the
			 * message's WQE and the three reserved complete with a flush, in order
			 */
			CHECK_EQ(st.ci, 2 + 3);
			CHECK_EQ(qp_state(x.c.d[1], x.rx[0].qpn), TERN_QPS_ERR);
			for (i = 1; i < 5; i++) {
				CHECK_EQ(w[i].status, TERN_CQE_WR_FLUSH_ERR);
				CHECK_EQ(w[i].wr_id, 1000 + i);
			}
		}
		CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
		if (t_failures)
			printf("#   variant %u (rord %+d)\n", v, delta[v]);
out:
		sfix_free(&x);
		if (t_failures)
			return;
	}
}

/* The limit event: not sent while not armed; armed, sent once when the WQEs left fall below
 * the limit, then disarmed. */
static void t_srq_limit(void)
{
	struct connopt o;
	struct sfix x;
	struct wc w[16];
	struct srqstate st;
	unsigned int i, other = 0;
	struct cqe c;

	connopt_default(&o);
	REQUIRE(sfix_setup(&x, &o, 4));
	for (i = 0; i < 10; i++)
		sfix_post(&x);
	srq_ring(x.c.d[1], &x.srq);
	/* not armed: 10 -> 6 left, no event */
	for (i = 0; i < 4; i++)
		sfix_send(&x, i % NQP, TERN_WQE_SEND, i, 64 * i, 64, 0);
	for (i = 0; i < NQP; i++)
		ring_sq(x.c.d[0], &x.tx[i]);
	RQ(conn_poll(&x.c, 1, w, 4, 10000000) == 4);
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_SRQ_EVENT, TERN_SRQ_EV_LIMIT, x.srq.srqn, &other),
		 0);
	CHECK_EQ(RDEV_STAT(x.c.d[1], srq_limit_events), 0);
	/* armed at 4: 6 -> 5 -> 4 left: no event; 3 left: one event; 2, 1: no more */
	RQ(srq_modify(x.c.d[1], x.srq.srqn, 4, &c) == TERN_CMD_OK);
	for (i = 0; i < 2; i++)
		sfix_send(&x, 0, TERN_WQE_SEND, 10 + i, 64 * i, 64, 0);
	ring_sq(x.c.d[0], &x.tx[0]);
	RQ(conn_poll(&x.c, 1, w, 2, 10000000) == 2);
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_SRQ_EVENT, TERN_SRQ_EV_LIMIT, x.srq.srqn, &other),
		 0);
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.limit, 4);
	CHECK_EQ((uint16_t)(st.pi - st.ci), 4);
	sfix_send(&x, 1, TERN_WQE_SEND, 20, 0, 64, 0);
	ring_sq(x.c.d[0], &x.tx[1]);
	RQ(conn_poll(&x.c, 1, w, 1, 10000000) == 1);
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_SRQ_EVENT, TERN_SRQ_EV_LIMIT, x.srq.srqn, &other),
		 1);
	CHECK_EQ(RDEV_STAT(x.c.d[1], srq_limit_events), 1);
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.limit, 0);
	for (i = 0; i < 2; i++)
		sfix_send(&x, 2, TERN_WQE_SEND, 30 + i, 0, 64, 0);
	ring_sq(x.c.d[0], &x.tx[2]);
	RQ(conn_poll(&x.c, 1, w, 2, 10000000) == 2);
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_SRQ_EVENT, TERN_SRQ_EV_LIMIT, x.srq.srqn, &other),
		 0);
	/* re-armed (1 left, limit 2): fires at the next take */
	RQ(srq_modify(x.c.d[1], x.srq.srqn, 2, &c) == TERN_CMD_OK);
	sfix_send(&x, 0, TERN_WQE_SEND, 40, 0, 64, 0);
	ring_sq(x.c.d[0], &x.tx[0]);
	RQ(conn_poll(&x.c, 1, w, 1, 10000000) == 1);
	CHECK_EQ(w[0].status, TERN_CQE_OK);
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_SRQ_EVENT, TERN_SRQ_EV_LIMIT, x.srq.srqn, &other),
		 1);
	CHECK_EQ(RDEV_STAT(x.c.d[1], srq_limit_events), 2);
	CHECK_EQ(other, 0);
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 10);
	CHECK_EQ(st.pi, 10);
out:
	sfix_free(&x);
}

/* An empty SRQ: the SENDs are RNR NAKed, nothing is consumed; once WQEs are posted the
 * retries land. */
static void t_srq_rnr(void)
{
	struct connopt o;
	struct sfix x;
	struct wc w[8];
	struct srqstate st;
	unsigned int i, q;

	connopt_default(&o);
	REQUIRE(sfix_setup(&x, &o, 3));
	for (q = 0; q < 2; q++) {
		sfix_send(&x, q, TERN_WQE_SEND, q, (uint64_t)q * 4096, 3000, 0);
		ring_sq(x.c.d[0], &x.tx[q]);
	}
	wire_pump(&x.c.w);
	wire_advance(&x.c.w, 200000);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
	CHECK(!cq_peek(x.c.d[0], &x.c.cq[0]));
	CHECK(RDEV_STAT(x.c.d[1], rnr_naks_sent) >= 2);
	CHECK(RDEV_STAT(x.c.d[1], out_of_buffer) >= 2);
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 0);
	/* post: both land */
	for (i = 0; i < 2; i++)
		sfix_post(&x);
	srq_ring(x.c.d[1], &x.srq);
	RQ(conn_poll(&x.c, 1, w, 2, 10000000) == 2);
	for (i = 0; i < 2; i++) {
		q = w[i].qpn == x.rx[0].qpn ? 0 : 1;
		CHECK_EQ(w[i].qpn, x.rx[q].qpn);
		CHECK_EQ(w[i].status, TERN_CQE_OK);
		CHECK_EQ(w[i].byte_len, 3000);
		CHECK_EQ(w[i].wqe_idx, i);
		CHECK(slot_holds(&x, w[i].wqe_idx, (uint64_t)q * 4096, 3000));
	}
	CHECK(w[0].qpn != w[1].qpn);
	RQ(conn_poll(&x.c, 0, w, 2, 10000000) == 2);
	CHECK_EQ(w[0].status, TERN_CQE_OK);
	CHECK_EQ(w[1].status, TERN_CQE_OK);
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 2);
out:
	sfix_free(&x);
}

/*
 * A QP on the SRQ goes to ERR in the middle of a message: the WQE it holds completes with a
 * flush, LAST_WQE_REACHED is raised once, the SRQ's other WQEs are not flushed and nothing
 * more is taken for that QP; the other QPs keep receiving from the SRQ.
 */
static void t_srq_qp_err(void)
{
	struct connopt o;
	struct sfix x;
	struct wc w[8];
	struct srqstate st;
	struct cqe c;
	unsigned int i, other = 0;

	connopt_default(&o);
	REQUIRE(sfix_setup(&x, &o, 3));
	for (i = 0; i < 6; i++)
		sfix_post(&x);
	srq_ring(x.c.d[1], &x.srq);
	/* QP 0's message loses its last packet: its WQE (slot 0) stays held */
	x.drop_send_last = true;
	sfix_send(&x, 0, TERN_WQE_SEND, 1, 0, 2500, 0);
	ring_sq(x.c.d[0], &x.tx[0]);
	wire_pump(&x.c.w);
	RQ(x.dropped == 1);
	x.drop_send_last = false;
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 1);
	/* to ERR */
	RQ(qp_to_err(x.c.d[1], &x.rx[0]) == TERN_CMD_OK);
	wire_pump(&x.c.w);
	RQ(cq_poll(x.c.d[1], &x.c.cq[1], &w[0]));
	CHECK_EQ(w[0].qpn, x.rx[0].qpn);
	CHECK_EQ(w[0].status, TERN_CQE_WR_FLUSH_ERR);
	CHECK_EQ(w[0].opcode, TERN_CQE_RECV);
	CHECK_EQ(w[0].wr_id, 1000);
	CHECK_EQ(w[0].wqe_idx, 0);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));	/* the SRQ's WQEs are not flushed */
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_QP_EVENT, TERN_QP_EV_LAST_WQE_REACHED,
			      x.rx[0].qpn, &other), 1);
	CHECK_EQ(other, 0);
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 1);
	/* more for the QP in ERR takes nothing; the other QPs get slots 1, 2, 3 */
	sfix_send(&x, 0, TERN_WQE_SEND, 2, 0, 100, 0);
	ring_sq(x.c.d[0], &x.tx[0]);
	sfix_send(&x, 1, TERN_WQE_SEND, 3, 8192, 700, 0);
	sfix_send(&x, 1, TERN_WQE_SEND, 4, 16384, 1500, 0);
	sfix_send(&x, 2, TERN_WQE_SEND, 5, 24576, 300, 0);
	ring_sq(x.c.d[0], &x.tx[1]);
	ring_sq(x.c.d[0], &x.tx[2]);
	RQ(conn_poll(&x.c, 1, w, 3, 10000000) == 3);
	{
		static const uint32_t len1[2] = { 700, 1500 };
		unsigned int n1 = 0, n2 = 0, slots = 0;

		for (i = 0; i < 3; i++) {
			CHECK_EQ(w[i].status, TERN_CQE_OK);
			if (w[i].qpn == x.rx[1].qpn) {
				RQ(n1 < 2);
				CHECK_EQ(w[i].byte_len, len1[n1]);
				CHECK(slot_holds(&x, w[i].wqe_idx, n1 ? 16384 : 8192, len1[n1]));
				n1++;
			} else {
				CHECK_EQ(w[i].qpn, x.rx[2].qpn);
				CHECK_EQ(w[i].byte_len, 300);
				CHECK(slot_holds(&x, w[i].wqe_idx, 24576, 300));
				n2++;
			}
			RQ(w[i].wqe_idx >= 1 && w[i].wqe_idx <= 3);
			CHECK_EQ(w[i].wr_id, 1000 + w[i].wqe_idx);
			slots |= 1u << w[i].wqe_idx;
		}
		CHECK_EQ(n1, 2);
		CHECK_EQ(n2, 1);
		CHECK_EQ(slots, 0xe);
	}
	wire_advance(&x.c.w, 1000000);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 4);
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_QP_EVENT, TERN_QP_EV_LAST_WQE_REACHED,
			      x.rx[0].qpn, &other), 0);
	/* the QP in ERR still holds the SRQ; destroyed, the SRQ is still used by the others */
	CHECK_EQ(srq_destroy(x.c.d[1], x.srq.srqn, &c), TERN_CMD_BAD_STATE);
	CHECK_EQ(qp_destroy(x.c.d[1], &x.rx[0]), TERN_CMD_OK);
	CHECK_EQ(srq_destroy(x.c.d[1], x.srq.srqn, &c), TERN_CMD_BAD_STATE);
	/* a QP holding no WQE goes to ERR: no CQE, LAST_WQE_REACHED all the same */
	RQ(qp_to_err(x.c.d[1], &x.rx[1]) == TERN_CMD_OK);
	wire_pump(&x.c.w);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));	/* held nothing: no CQE */
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_QP_EVENT, TERN_QP_EV_LAST_WQE_REACHED,
			      x.rx[1].qpn, &other), 1);
out:
	sfix_free(&x);
}

/* The SRQ ring becomes unreadable: TERN_SRQ_EV_ERROR once, the QP that needed a WQE goes to
 * ERR, and so does the next; nothing is taken. */
static void t_srq_ring_fault(void)
{
	struct connopt o;
	struct sfix x;
	struct srqstate st;
	struct wc w;
	unsigned int other = 0;

	connopt_default(&o);
	REQUIRE(sfix_setup(&x, &o, 3));
	sfix_post(&x);
	sfix_post(&x);
	srq_ring(x.c.d[1], &x.srq);
	x.c.d[1]->f.fault_lo = x.srq.mem.base;
	x.c.d[1]->f.fault_hi = x.srq.mem.base + 4096;
	sfix_send(&x, 0, TERN_WQE_SEND, 1, 0, 100, 0);
	ring_sq(x.c.d[0], &x.tx[0]);
	wire_pump(&x.c.w);
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_SRQ_EVENT, TERN_SRQ_EV_ERROR, x.srq.srqn, NULL),
		 1);
	CHECK_EQ(qp_state(x.c.d[1], x.rx[0].qpn), TERN_QPS_ERR);
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 0);
	/* the ring is readable again, but the SRQ stays in error */
	x.c.d[1]->f.fault_lo = x.c.d[1]->f.fault_hi = 0;
	sfix_send(&x, 1, TERN_WQE_SEND, 2, 0, 100, 0);
	ring_sq(x.c.d[0], &x.tx[1]);
	wire_pump(&x.c.w);
	CHECK_EQ(qp_state(x.c.d[1], x.rx[1].qpn), TERN_QPS_ERR);
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_SRQ_EVENT, TERN_SRQ_EV_ERROR, x.srq.srqn, &other),
		 0);
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 0);
	CHECK(!cq_poll(x.c.d[1], &x.c.cq[1], &w));	/* no WQE was taken: nothing to report */
out:
	sfix_free(&x);
}

/* ---- UD QPs on an SRQ -------------------------------------------------------------------- */

#define UD_QKEY		0x600d5eedu
#define UD_HDR		(sizeof(struct tern_sq_wqe) + sizeof(struct tern_ud_seg))

/* A UD SEND of @len bytes at @off of the send MR to @dest_qpn on device 1 (no doorbell). */
static void ud_send(struct sfix *x, struct rqp *qp, uint64_t wr_id, uint32_t dest_qpn,
		    uint64_t off, uint32_t len)
{
	struct sge sg = mr_sge(&x->smr, off, len);

	post_ud_send(x->c.d[0], qp, x->c.d[1], &x->c.o, wr_id, dest_qpn, UD_QKEY, &sg);
}

/*
 * UD QPs take their receive WQEs from an SRQ exactly as RC QPs do, from the same SRQ: ring
 * order across QP types, the CQE names the UD QP and the slot, the GRH area and payload land
 * in the WQE; with the SRQ empty the datagram is dropped (no RNR for UD) and nothing is
 * taken; a UD QP on the SRQ going to ERR raises LAST_WQE_REACHED.
 */
static void t_srq_ud(void)
{
	struct connopt o;
	struct sfix x;
	struct rsrq s0;
	struct rqp su, ru[2];
	struct srqstate st;
	struct wc w[8];
	unsigned int i, other = 0;
	uint64_t oob;

	memset(&s0, 0, sizeof(s0));
	memset(&su, 0, sizeof(su));
	memset(ru, 0, sizeof(ru));
	connopt_default(&o);
	REQUIRE(sfix_setup(&x, &o, 3));
	/* device 0: a UD sender on an SRQ of its own; device 1: two UD QPs on the RC QPs' SRQ */
	RQ(srq_create(x.c.d[0], &s0, 2, 5) == TERN_CMD_OK);
	RQ(srq_qp_create_type(x.c.d[0], &su, &x.c.cq[0], s0.srqn, TERN_QPT_UD, NULL) ==
	   TERN_CMD_OK);
	for (i = 0; i < 2; i++)
		RQ(srq_qp_create_type(x.c.d[1], &ru[i], &x.c.cq[1], x.srq.srqn, TERN_QPT_UD, NULL) ==
		   TERN_CMD_OK);
	RQ(ud_up(x.c.d[0], &su, UD_QKEY, 0x42) && ud_up(x.c.d[1], &ru[0], UD_QKEY, 0x42) &&
	   ud_up(x.c.d[1], &ru[1], UD_QKEY, 0x42));
	/* empty SRQ: dropped, counted, nothing taken, and no RNR NAK */
	ud_send(&x, &su, 1, ru[0].qpn, 0, 100);
	ring_sq(x.c.d[0], &su);
	oob = RDEV_STAT(x.c.d[1], out_of_buffer);
	RQ(conn_poll(&x.c, 0, w, 1, 1000000) == 1);
	CHECK_EQ(w[0].status, TERN_CQE_OK);
	wire_pump(&x.c.w);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
	CHECK_EQ(RDEV_STAT(x.c.d[1], out_of_buffer), oob + 1);
	CHECK_EQ(RDEV_STAT(x.c.d[1], rnr_naks_sent), 0);
	/* an RC SEND, then datagrams to UD QP 1, 0, 1: slots 0..3 in arrival order */
	for (i = 0; i < 4; i++)
		sfix_post(&x);
	srq_ring(x.c.d[1], &x.srq);
	sfix_send(&x, 0, TERN_WQE_SEND, 9, 0, 500, 0);
	ring_sq(x.c.d[0], &x.tx[0]);
	RQ(conn_poll(&x.c, 1, w, 1, 1000000) == 1);
	CHECK_EQ(w[0].qpn, x.rx[0].qpn);
	CHECK_EQ(w[0].wqe_idx, 0);
	for (i = 0; i < 3; i++)
		ud_send(&x, &su, 10 + i, ru[(i + 1) % 2].qpn, 4096 * (i + 1), 200 + 100 * i);
	ring_sq(x.c.d[0], &su);
	RQ(conn_poll(&x.c, 1, w, 3, 1000000) == 3);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(w[i].qpn, ru[(i + 1) % 2].qpn);
		CHECK_EQ(w[i].status, TERN_CQE_OK);
		CHECK_EQ(w[i].opcode, TERN_CQE_RECV);
		CHECK_EQ(w[i].wqe_idx, i + 1);
		CHECK_EQ(w[i].wr_id, 1000 + i + 1);
		CHECK_EQ(w[i].byte_len, 40 + 200 + 100 * i);
		CHECK_EQ(w[i].src_qpn, su.qpn);
		CHECK(w[i].flags & TERN_CQE_F_GRH);
		CHECK_EQ(mr_diff_pattern(x.c.d[1], &x.rmr, (uint64_t)(i + 1) * SLOT_BYTES + 40,
					 200 + 100 * i, 11, 4096 * (i + 1)), -1);
	}
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.ci, 4);
	/* a UD QP on the SRQ to ERR: no WQE held, LAST_WQE_REACHED once */
	RQ(qp_to_err(x.c.d[1], &ru[0]) == TERN_CMD_OK);
	wire_pump(&x.c.w);
	CHECK(!cq_peek(x.c.d[1], &x.c.cq[1]));
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_QP_EVENT, TERN_QP_EV_LAST_WQE_REACHED, ru[0].qpn,
			      &other), 1);
	CHECK_EQ(other, 0);
	CHECK_EQ(srq_destroy(x.c.d[1], x.srq.srqn, NULL), TERN_CMD_BAD_STATE);
out:
	for (i = 0; i < 2; i++)
		qmem_free(&ru[i].sq);
	qmem_free(&su.sq);
	qmem_free(&s0.mem);
	sfix_free(&x);
}

/*
 * An SRQ with a doorbell record: WQEs posted through the record alone serve SENDs; the limit
 * is judged on the record (re-read when the cached view falls below it), not on a stale
 * cache; QUERY_SRQ reads it; a record beyond the depth stops the SRQ (counted, event).
 */
static void t_srq_db_rec(void)
{
	struct connopt o;
	struct sfix x;
	struct wc w[8];
	struct srqstate st;
	unsigned int i, other = 0;
	struct cqe c;

	connopt_default(&o);
	REQUIRE(sfix_setup_ex(&x, &o, 4, TERN_SRQ_F_DB_REC));
	for (i = 0; i < 4; i++)
		sfix_post(&x);
	srq_rec_write(x.c.d[1], &x.srq, x.srq.pi);
	RQ(srq_modify(x.c.d[1], x.srq.srqn, 3, &c) == TERN_CMD_OK);
	/* 4 -> 3 left: no event */
	sfix_send(&x, 0, TERN_WQE_SEND, 1, 0, 700, 0);
	ring_sq(x.c.d[0], &x.tx[0]);
	RQ(conn_poll(&x.c, 1, w, 1, 10000000) == 1);
	CHECK_EQ(w[0].status, TERN_CQE_OK);
	CHECK(slot_holds(&x, w[0].wqe_idx, 0, 700));
	/* two more posted (record only): the next take leaves 2 by the cache, 4 by the record */
	sfix_post(&x);
	sfix_post(&x);
	srq_rec_write(x.c.d[1], &x.srq, x.srq.pi);
	sfix_send(&x, 1, TERN_WQE_SEND, 2, 64, 1500, 0);
	ring_sq(x.c.d[0], &x.tx[1]);
	RQ(conn_poll(&x.c, 1, w, 1, 10000000) == 1);
	CHECK_EQ(w[0].status, TERN_CQE_OK);
	CHECK(slot_holds(&x, w[0].wqe_idx, 64, 1500));
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_SRQ_EVENT, TERN_SRQ_EV_LIMIT, x.srq.srqn, &other),
		 0);
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.pi, 6);
	CHECK_EQ(st.ci, 2);
	CHECK_EQ(st.limit, 3);
	/* 4 -> 3 -> 2 left: the event, once */
	for (i = 0; i < 2; i++)
		sfix_send(&x, 2, TERN_WQE_SEND, 3 + i, 0, 64, 0);
	ring_sq(x.c.d[0], &x.tx[2]);
	RQ(conn_poll(&x.c, 1, w, 2, 10000000) == 2);
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_SRQ_EVENT, TERN_SRQ_EV_LIMIT, x.srq.srqn, &other),
		 1);
	CHECK_EQ(RDEV_STAT(x.c.d[1], db_rec_errors), 0);
	CHECK_EQ(RDEV_STAT(x.c.d[1], rnr_naks_sent), 0);
	/* an SRQ doorbell with a record only says "read it": an absurd PI is not taken */
	srq_ring(x.c.d[1], &(struct rsrq){ .srqn = x.srq.srqn, .uar = x.srq.uar, .pi = 0x7777 });
	RQ(srq_query(x.c.d[1], x.srq.srqn, &st) == TERN_CMD_OK);
	CHECK_EQ(st.pi, 6);
	/* a hostile record: beyond the depth (16) from ci 6, where it is read (4 and 5 are
	 * known from the cache and taken first) */
	srq_rec_write(x.c.d[1], &x.srq, 6 + 17);
	for (i = 0; i < 2; i++)
		sfix_send(&x, 0, TERN_WQE_SEND, 10 + i, 0, 64, 0);
	ring_sq(x.c.d[0], &x.tx[0]);
	RQ(conn_poll(&x.c, 1, w, 2, 10000000) == 2);	/* the two WQEs it knew */
	CHECK_EQ(w[0].status, TERN_CQE_OK);
	CHECK_EQ(w[1].status, TERN_CQE_OK);
	sfix_send(&x, 0, TERN_WQE_SEND, 12, 0, 64, 0);
	ring_sq(x.c.d[0], &x.tx[0]);
	RQ(conn_poll(&x.c, 0, w, 7, 10000000) == 7);	/* every SEND of the test */
	for (i = 0; i < 6; i++)
		CHECK_EQ(w[i].status, TERN_CQE_OK);
	CHECK_EQ(w[6].wr_id, 12);
	CHECK_EQ(w[6].status, TERN_CQE_REM_OP_ERR);
	CHECK_EQ(RDEV_STAT(x.c.d[1], db_rec_errors), 1);
	CHECK_EQ(count_events(x.c.d[1], TERN_EQE_SRQ_EVENT, TERN_SRQ_EV_ERROR, x.srq.srqn, &other),
		 1);
out:
	sfix_free(&x);
}

/* CREATE_SRQ of before the records (TERN_CREATE_SRQ_IN_V1_LEN bytes) still works; the
 * record flag needs room for the record; unknown flags and other lengths are refused. */
static void t_srq_create_v1(void)
{
	uint8_t in[sizeof(struct tern_cmd_create_srq_in)];
	struct rdev *d = rdev_new(0);
	struct qmem mem = { 0 };
	struct cqe c;

	RQ(d);
	qmem_alloc(d, &mem, 4096, false);
	srq_in(d, in, &mem, 4, 6);
	memset(in + TERN_CREATE_SRQ_IN_V1_LEN, 0xff, sizeof(in) - TERN_CREATE_SRQ_IN_V1_LEN);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, TERN_CREATE_SRQ_IN_V1_LEN, NULL, 0, &c),
		 TERN_CMD_OK);
	CHECK_EQ(c.result, 0);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, TERN_CREATE_SRQ_IN_V1_LEN + 4, NULL, 0, &c),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, sizeof(in));
	srq_in(d, in, &mem, 4, 6);
	wr32(in + SRQI(flags), 2);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, SRQI(flags));
	wr32(in + SRQI(flags), 0);
	wr32(in + SRQI(rsvd), 1);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, SRQI(rsvd));
	/* 16 x 256 B fill the one page exactly: no room for the record */
	srq_in(d, in, &mem, 4, 8);
	wr32(in + SRQI(flags), TERN_SRQ_F_DB_REC);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK(c.syndrome >= SRQI(mem) && c.syndrome < SRQI(mem) + 16);
	wr32(in + SRQI(flags), 0);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_OK);
	CHECK_EQ(c.result, 1);
out:
	qmem_free(&mem);
	rdev_free(d);
}

const struct test rdma_srq_tests[] = {
	{ "rdma srq: doorbell record: posts, limit on the record, hostile record stops it",
	  t_srq_db_rec },
	{ "rdma srq: CREATE_SRQ of before the records, flags and lengths checked",
	  t_srq_create_v1 },
	{ "rdma srq: CREATE/MODIFY/QUERY/DESTROY_SRQ rules, doorbell, QPs on it", t_srq_cmds },
	{ "rdma srq: device reset forgets SRQs", t_srq_reset },
	{ "rdma srq: 3 QPs, interleaved multi-packet SENDs, right QP/slot/data", t_srq_interleaved },
	{ "rdma srq: the same in selective repeat under 3% loss, 2% reordering: SENDs after a gap "
	  "placed in SRQ WQEs taken ahead", t_srq_interleaved_sr },
	{ "rdma srq: selective repeat: SENDs after a gap take their SRQ WQEs ahead, in order, and "
	  "are placed at once; bytes, CQEs and resends right", t_srq_sr_place },
	{ "rdma srq: selective repeat: WQEs taken ahead complete with a flush at ERR, RESET and "
	  "DESTROY_QP",
	  t_srq_sr_flush },
	{ "rdma srq: selective repeat: the SRQ runs dry while WQEs are taken ahead: kept whole, "
	  "RNR NAK in order, then placed", t_srq_sr_rnr },
	{ "rdma srq: selective repeat: a receive ordinal beyond the window or done is dropped; "
	  "one inside takes WQEs bounded by it", t_srq_sr_hostile },
	{ "rdma srq: limit event once when armed, never when not", t_srq_limit },
	{ "rdma srq: empty SRQ RNR NAKs, posting recovers", t_srq_rnr },
	{ "rdma srq: QP to ERR flushes its WQE, LAST_WQE_REACHED, others go on", t_srq_qp_err },
	{ "rdma srq: unreadable ring: SRQ error event, QPs to ERR", t_srq_ring_fault },
	{ "rdma srq: UD QPs share the SRQ with RC QPs; empty SRQ drops", t_srq_ud },
	{ NULL, NULL },
};
