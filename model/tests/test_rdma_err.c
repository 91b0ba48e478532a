/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* RDMA errors (local, remote, length, flush, doorbells) and completion events. */
#include <stdlib.h>

#include "test_rdma.h"

struct ev {
	uint8_t type, subtype;
	uint32_t data0;
};

/* Next event of an EQ with its subtype. */
static bool eq_next(struct fake *f, struct drv_ring *eq, struct ev *e)
{
	uint8_t *p = drv_ring_entry(f, eq, eq->ci);

	if (!drv_eq_poll(f, eq, &e->type, &e->data0))
		return false;
	e->subtype = p[OFF(struct tern_eqe, subtype)];
	return true;
}

static const uint32_t ALL_ACC = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
				TERN_ACCESS_REMOTE_READ;

enum lcase { L_NO_MR, L_STALE_KEY, L_OTHER_PD, L_OOB_HIGH, L_OOB_LOW, L_READ_NO_LWRITE,
	     L_BAD_OPCODE, L_TOO_MANY_SGE, L_INLINE_TOO_LONG, L_MSG_TOO_LONG, L_UNSIGNALED,
	     L_NCASES };

/* Requester-side local errors: the WQE fails with the right status and syndrome, the QP
 * goes to ERR, the WQE behind it is flushed, nothing goes on the wire. */
static void t_local_errors(void)
{
	static const struct {
		uint8_t status, synd;
		const char *name;
	} exp[L_NCASES] = {
		[L_NO_MR] = { TERN_CQE_LOC_PROT_ERR, TERN_SYND_LKEY, "no such MR" },
		[L_STALE_KEY] = { TERN_CQE_LOC_PROT_ERR, TERN_SYND_LKEY, "stale key byte" },
		[L_OTHER_PD] = { TERN_CQE_LOC_PROT_ERR, TERN_SYND_PD, "MR of another PD" },
		[L_OOB_HIGH] = { TERN_CQE_LOC_PROT_ERR, TERN_SYND_BOUNDS, "past the MR end" },
		[L_OOB_LOW] = { TERN_CQE_LOC_PROT_ERR, TERN_SYND_BOUNDS, "below the MR start" },
		[L_READ_NO_LWRITE] = { TERN_CQE_LOC_PROT_ERR, TERN_SYND_ACCESS,
				       "READ into an MR without LOCAL_WRITE" },
		[L_BAD_OPCODE] = { TERN_CQE_LOC_QP_OP_ERR, TERN_SYND_BAD_OPCODE, "opcode 0x0f" },
		[L_TOO_MANY_SGE] = { TERN_CQE_LOC_QP_OP_ERR, TERN_SYND_BAD_SGE_COUNT,
				     "num_sge > max_send_sge" },
		[L_INLINE_TOO_LONG] = { TERN_CQE_LOC_QP_OP_ERR, TERN_SYND_BAD_INLINE,
					"inline longer than the slot" },
		[L_MSG_TOO_LONG] = { TERN_CQE_LOC_LEN_ERR, TERN_SYND_MSG_TOO_LONG,
				     "2 x 2 GiB SGEs (sum wraps 32 bits) of a PHYSICAL MR" },
		[L_UNSIGNALED] = { TERN_CQE_LOC_PROT_ERR, TERN_SYND_LKEY,
				   "unsignaled WQE with a bad lkey still completes" },
	};
	struct connopt o;
	struct conn c;
	struct rmr mr, mr2, rmr_;
	struct sge sg[64];
	struct wc w[2];
	uint32_t pd2;
	unsigned int k, i, fails;
	bool mrs = false;

	for (k = 0; k < L_NCASES; k++) {
		fails = (unsigned int)t_failures;
		connopt_default(&o);
		if (k == L_TOO_MANY_SGE)
			o.sq_stride = TERN_SQ_MAX_LOG_STRIDE;	/* the SGEs fit the slot */
		RQ(conn_setup(&c, &o));
		RQ(pd_create(c.d[0], &pd2) == 0);
		RQ(mr_create(c.d[0], &mr, c.d[0]->pdn, 8192, TERN_ACCESS_LOCAL_WRITE, 0x10) == 0);
		RQ(mr_create(c.d[0], &mr2, k == L_OTHER_PD ? pd2 : c.d[0]->pdn, 8192,
			     k == L_READ_NO_LWRITE ? 0 : TERN_ACCESS_LOCAL_WRITE, 0) == 0);
		RQ(mr_create(c.d[1], &rmr_, c.d[1]->pdn, 8192, ALL_ACC, 0) == 0);
		mrs = true;
		mr_fill(c.d[1], &rmr_, 9);
		sg[0] = mr_sge(&mr2, 0, 100);
		switch (k) {
		case L_NO_MR:
			sg[0].lkey = (c.d[0]->caps.max_mr - 1) << 8 | 0x11;
			break;
		case L_STALE_KEY:
		case L_UNSIGNALED:
			sg[0].lkey ^= 0x80;
			break;
		case L_OOB_HIGH:
			sg[0] = mr_sge(&mr2, 8192 - 50, 51);
			break;
		case L_OOB_LOW:
			sg[0].addr = mr2.iova - 1;
			break;
		default:
			break;
		}
		if (k == L_READ_NO_LWRITE) {
			post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 1, sg, 1,
				  rmr_.iova, rmr_.key, 0);
		} else if (k == L_BAD_OPCODE) {
			post_send(c.d[0], &c.qp[0], 0x0f, TERN_WQE_F_SIGNALED, 1, sg, 1, rmr_.iova,
				  rmr_.key, 0);
		} else if (k == L_TOO_MANY_SGE) {
			for (i = 0; i < 64; i++)
				sg[i] = mr_sge(&mr, i, 1);
			/* one more than allowed, all inside the 1 KiB slot */
			post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, sg,
				  c.d[0]->caps.max_send_sge + 1u, rmr_.iova, rmr_.key, 0);
		} else if (k == L_MSG_TOO_LONG) {
			typedef struct tern_cmd_create_mr_in T;
			uint8_t in[sizeof(T)] = { 0 };
			struct cqe cq;
			uint32_t pkey;

			wr32(in + OFF(T, pdn), c.d[0]->pdn);
			wr32(in + OFF(T, access), TERN_ACCESS_LOCAL_WRITE);
			in[OFF(T, flags)] = TERN_MR_F_PHYSICAL;
			in[OFF(T, key)] = 1;
			in[OFF(T, page_shift)] = 12;
			RQ(rdev_cmd(c.d[0], TERN_CMD_CREATE_MR, in, sizeof(in), NULL, 0, &cq) == 0);
			pkey = cq.result << 8 | 1;
			sg[0] = (struct sge){ FK_DATA_BASE, 0x80000000u, pkey };
			sg[1] = (struct sge){ FK_DATA_BASE, 0x80000000u, pkey };
			post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, sg, 2,
				  rmr_.iova, rmr_.key, 0);
		} else if (k == L_INLINE_TOO_LONG) {
			uint8_t junk[128] = { 0 };

			post_send_inline(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1,
					 junk, 128 - 32 + 1, rmr_.iova, rmr_.key, 0);
		} else {
			post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE,
				  k == L_UNSIGNALED ? 0 : TERN_WQE_F_SIGNALED, 1, sg, 1, rmr_.iova,
				  rmr_.key, 0);
		}
		sg[0] = mr_sge(&mr, 0, 10);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 2, sg, 1,
			  rmr_.iova + 4096, rmr_.key, 0);
		ring_sq(c.d[0], &c.qp[0]);
		RQ(conn_poll(&c, 0, w, 2, 2000000) == 2);
		CHECK_EQ(w[0].status, exp[k].status);
		CHECK_EQ(w[0].vendor_err, exp[k].synd);
		CHECK_EQ(w[0].wr_id, 1);
		CHECK_EQ(w[0].wqe_idx, 0);
		CHECK_EQ(w[0].qpn, c.qp[0].qpn);
		CHECK_EQ(w[1].status, TERN_CQE_WR_FLUSH_ERR);
		CHECK_EQ(w[1].wr_id, 2);
		CHECK_EQ(w[1].wqe_idx, 1);
		CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
		CHECK_EQ(wire_count(&c.w, 0, -1), 0);
		CHECK_EQ(mr_diff_pattern(c.d[1], &rmr_, 0, 8192, 9, 0), -1);
		/* the responder is unaffected */
		CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_RTS);
		if ((unsigned int)t_failures != fails)
			printf("#   ^ case: %s\n", exp[k].name);
		mr_release(&mr);
		mr_release(&mr2);
		mr_release(&rmr_);
		mrs = false;
		conn_free(&c);
	}
	return;
out:
	if (mrs) {
		mr_release(&mr);
		mr_release(&mr2);
		mr_release(&rmr_);
	}
	conn_free(&c);
}

enum rcase { R_OTHER_PD, R_OOB, R_NO_RWRITE, R_NO_RREAD, R_QP_NO_RWRITE, R_BAD_RKEY,
	     R_STALE_RKEY, R_NCASES };

/*
 * Remote access errors: the requester's WQE completes REM_ACCESS_ERR, the responder QP goes to
 * ERR with a TERN_QP_EV_ACCESS_ERR event on its async EQ and its posted receives are flushed;
 * the responder's memory is untouched.
 */
static void t_remote_access_errors(void)
{
	static const char *const names[R_NCASES] = {
		"rkey of another PD", "out of bounds", "MR without REMOTE_WRITE",
		"MR without REMOTE_READ", "QP without REMOTE_WRITE", "no such rkey",
		"rkey with the wrong key byte",
	};
	struct connopt o;
	struct conn c;
	struct rmr lm, rm;
	struct sge sg;
	struct wc w[3];
	struct ev e;
	uint32_t pd2, rkey;
	uint64_t raddr;
	unsigned int k, fails, events;
	bool mrs = false;
	uint8_t op;

	for (k = 0; k < R_NCASES; k++) {
		uint32_t acc = ALL_ACC;

		fails = (unsigned int)t_failures;
		connopt_default(&o);
		if (k == R_QP_NO_RWRITE)
			o.access = TERN_ACCESS_REMOTE_READ;
		RQ(conn_setup(&c, &o));
		RQ(pd_create(c.d[1], &pd2) == 0);
		if (k == R_NO_RWRITE)
			acc &= ~TERN_ACCESS_REMOTE_WRITE;
		if (k == R_NO_RREAD)
			acc &= ~TERN_ACCESS_REMOTE_READ;
		RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 8192, ALL_ACC, 0) == 0);
		RQ(mr_create(c.d[1], &rm, k == R_OTHER_PD ? pd2 : c.d[1]->pdn, 8192, acc, 0x80) == 0);
		mrs = true;
		mr_fill(c.d[0], &lm, 3);
		mr_fill(c.d[1], &rm, 4);
		post_recv(c.d[1], &c.qp[1], 71, &(struct sge){ rm.iova, 100, rm.key }, 1);
		post_recv(c.d[1], &c.qp[1], 72, &(struct sge){ rm.iova + 100, 100, rm.key }, 1);
		ring_rq(c.d[1], &c.qp[1]);
		raddr = rm.iova + 1000;
		rkey = rm.key;
		if (k == R_OOB)
			raddr = rm.iova + 8192 - 99;
		if (k == R_BAD_RKEY)
			rkey = (c.d[1]->caps.max_mr - 1) << 8 | 0x33;
		if (k == R_STALE_RKEY)
			rkey ^= 0x01;
		op = k == R_NO_RREAD ? TERN_WQE_RDMA_READ : TERN_WQE_RDMA_WRITE;
		sg = mr_sge(&lm, 0, 100);
		post_send(c.d[0], &c.qp[0], op, TERN_WQE_F_SIGNALED, 1, &sg, 1, raddr, rkey, 0);
		post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 2, &sg, 1, 0, 0, 0);
		ring_sq(c.d[0], &c.qp[0]);
		RQ(conn_poll(&c, 0, w, 2, 5000000) == 2);
		CHECK_EQ(w[0].status, TERN_CQE_REM_ACCESS_ERR);
		CHECK_EQ(w[0].vendor_err, TERN_SYND_NAK_ACCESS);
		CHECK_EQ(w[0].wr_id, 1);
		CHECK_EQ(w[1].status, TERN_CQE_WR_FLUSH_ERR);
		CHECK_EQ(w[1].wr_id, 2);
		CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
		/* the NAK on the wire: remote access error */
		{
			unsigned int i, naks = 0;
			struct pkt p;

			for (i = 0; i < c.w.nlog; i++)
				if (c.w.log[i].dir == 1 &&
				    pkt_parse(c.w.log[i].data, c.w.log[i].len, &p) &&
				    p.opcode == OP_ACK && p.syndrome == 0x62)
					naks++;
			CHECK_EQ(naks, 1);
		}
		/* responder: ERR, event, receives flushed, memory untouched */
		CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
		events = 0;
		while (eq_next(&c.d[1]->f, &c.d[1]->async_eq, &e)) {
			if (e.type == TERN_EQE_QP_EVENT) {
				CHECK_EQ(e.subtype, TERN_QP_EV_ACCESS_ERR);
				CHECK_EQ(e.data0, c.qp[1].qpn);
				events++;
			}
		}
		CHECK_EQ(events, 1);
		RQ(conn_poll(&c, 1, w, 2, 1000000) == 2);
		CHECK_EQ(w[0].status, TERN_CQE_WR_FLUSH_ERR);
		CHECK_EQ(w[0].wr_id, 71);
		CHECK_EQ(w[0].qpn, c.qp[1].qpn);
		CHECK_EQ(w[1].status, TERN_CQE_WR_FLUSH_ERR);
		CHECK_EQ(w[1].wr_id, 72);
		CHECK(!cq_peek(c.d[1], &c.cq[1]));
		CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0, 8192, 4, 0), -1);
		CHECK_EQ(mr_diff_pattern(c.d[0], &lm, 0, 8192, 3, 0), -1);
		CHECK_EQ(RDEV_STAT(c.d[0], req_remote_access_errors), 1);
		CHECK_EQ(RDEV_STAT(c.d[1], resp_remote_access_errors), 1);
		/* no event on the requester's side */
		while (eq_next(&c.d[0]->f, &c.d[0]->async_eq, &e))
			CHECK(e.type != TERN_EQE_QP_EVENT);
		if ((unsigned int)t_failures != fails)
			printf("#   ^ case: %s\n", names[k]);
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

/* A SEND longer than the receive WQE: LOC_LEN_ERR at the responder (ERR, REQ_ERR event),
 * REM_INV_REQ_ERR at the requester, nothing written past the receive buffer. */
static void t_send_too_long(void)
{
	struct connopt o;
	struct conn c;
	struct rmr lm, rm;
	struct sge sg;
	struct wc w[2];
	struct ev e;
	unsigned int events = 0;
	bool mrs = false;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 8192, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &rm, c.d[1]->pdn, 8192, ALL_ACC, 0) == 0);
	mrs = true;
	mr_fill(c.d[0], &lm, 3);
	mr_fill(c.d[1], &rm, 4);
	/* 2500 bytes in two SGEs; the third packet of a 3000-byte SEND overflows */
	{
		struct sge two[2] = { { rm.iova + 100, 1500, rm.key }, { rm.iova + 4000, 1000, rm.key } };

		post_recv(c.d[1], &c.qp[1], 81, two, 2);
	}
	post_recv(c.d[1], &c.qp[1], 82, &(struct sge){ rm.iova + 6000, 100, rm.key }, 1);
	ring_rq(c.d[1], &c.qp[1]);
	sg = mr_sge(&lm, 0, 3000);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 1, 5000000) == 1);
	CHECK_EQ(w[0].status, TERN_CQE_REM_INV_REQ_ERR);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_NAK_INV_REQ);
	CHECK_EQ(w[0].wr_id, 1);
	RQ(conn_poll(&c, 1, w, 2, 1000000) == 2);
	CHECK_EQ(w[0].status, TERN_CQE_LOC_LEN_ERR);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_MSG_TOO_LONG);
	CHECK_EQ(w[0].wr_id, 81);
	CHECK_EQ(w[0].qpn, c.qp[1].qpn);
	CHECK_EQ(w[1].status, TERN_CQE_WR_FLUSH_ERR);
	CHECK_EQ(w[1].wr_id, 82);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
	while (eq_next(&c.d[1]->f, &c.d[1]->async_eq, &e)) {
		if (e.type == TERN_EQE_QP_EVENT) {
			CHECK_EQ(e.subtype, TERN_QP_EV_REQ_ERR);
			CHECK_EQ(e.data0, c.qp[1].qpn);
			events++;
		}
	}
	CHECK_EQ(events, 1);
	/* nothing outside the two SGEs changed */
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0, 100, 4, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 1600, 4000 - 1600, 4, 1600), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 5000, 8192 - 5000, 4, 5000), -1);
	CHECK_EQ(RDEV_STAT(c.d[1], resp_local_length_error), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], req_remote_invalid_request), 1);
	{
		unsigned int i, naks = 0;
		struct pkt p;

		for (i = 0; i < c.w.nlog; i++)
			if (c.w.log[i].dir == 1 && pkt_parse(c.w.log[i].data, c.w.log[i].len, &p) &&
			    p.opcode == OP_ACK && p.syndrome == 0x61)
				naks++;
		CHECK_EQ(naks, 1);
	}
out:
	if (mrs) {
		mr_release(&lm);
		mr_release(&rm);
	}
	conn_free(&c);
}

/* MODIFY_QP to ERR flushes outstanding SQ and RQ WQEs in order, and every later one. */
static void t_modify_err_flush(void)
{
	struct connopt o;
	struct conn c;
	struct rmr lm;
	struct sge sg;
	struct wc w[8];
	uint8_t q[sizeof(struct tern_cmd_query_qp_out)];
	unsigned int i, nsq = 0, nrq = 0, sent;
	bool mrs = false;

	connopt_default(&o);
	o.min_rnr_timer[1] = 0;		/* 655 ms: the SENDs stay outstanding */
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 8192, ALL_ACC, 0) == 0);
	mrs = true;
	for (i = 0; i < 2; i++)
		post_recv(c.d[0], &c.qp[0], 50 + i, &(struct sge){ lm.iova, 100, lm.key }, 1);
	ring_rq(c.d[0], &c.qp[0]);
	sg = mr_sge(&lm, 0, 10);
	/* the middle one unsignaled: a flush is an error and always completes */
	for (i = 0; i < 3; i++)
		post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, i == 1 ? 0 : TERN_WQE_F_SIGNALED, 10 + i,
			  &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	wire_advance(&c.w, 100000);
	CHECK(!cq_peek(c.d[0], &c.cq[0]));
	RQ(qp_to_err(c.d[0], &c.qp[0]) == TERN_CMD_OK);
	sent = c.w.sent[0];
	/* later WQEs on both queues */
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 13, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	post_recv(c.d[0], &c.qp[0], 52, &(struct sge){ lm.iova, 100, lm.key }, 1);
	ring_rq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 7, 1000000) == 7);
	for (i = 0; i < 7; i++) {
		CHECK_EQ(w[i].status, TERN_CQE_WR_FLUSH_ERR);
		CHECK_EQ(w[i].qpn, c.qp[0].qpn);
		if (w[i].wr_id >= 50) {
			CHECK_EQ(w[i].wr_id, 50 + nrq);
			CHECK_EQ(w[i].wqe_idx, nrq);
			nrq++;
		} else {
			CHECK_EQ(w[i].wr_id, 10 + nsq);
			CHECK_EQ(w[i].wqe_idx, nsq);
			nsq++;
		}
	}
	CHECK_EQ(nsq, 4);
	CHECK_EQ(nrq, 3);
	RQ(qp_query(c.d[0], c.qp[0].qpn, q) == TERN_CMD_OK);
	CHECK_EQ(q[OFF(struct tern_cmd_query_qp_out, attrs) + QPA(state)], TERN_QPS_ERR);
	CHECK_EQ(rd16(q + OFF(struct tern_cmd_query_qp_out, sq_ci)), 4);
	CHECK_EQ(rd16(q + OFF(struct tern_cmd_query_qp_out, rq_ci)), 3);
	/* nothing more goes out, even after the RNR timer */
	wire_advance(&c.w, 1000000000ull);
	CHECK_EQ(c.w.sent[0], sent);
	CHECK(!cq_peek(c.d[0], &c.cq[0]));
	/* RESET: indices back to 0 */
	{
		struct qpattr a;

		memset(&a, 0, sizeof(a));
		a.state = TERN_QPS_RESET;
		RQ(qp_modify(c.d[0], c.qp[0].qpn, TERN_QP_ATTR_STATE, &a, NULL) == 0);
		RQ(qp_query(c.d[0], c.qp[0].qpn, q) == TERN_CMD_OK);
		CHECK_EQ(rd16(q + OFF(struct tern_cmd_query_qp_out, sq_ci)), 0);
		CHECK_EQ(rd16(q + OFF(struct tern_cmd_query_qp_out, rq_ci)), 0);
	}
out:
	if (mrs)
		mr_release(&lm);
	conn_free(&c);
}

/* Doorbells on the wrong UAR page, for unknown objects, or 32 bits wide do nothing. */
static void t_doorbells(void)
{
	struct connopt o;
	struct conn c;
	struct rmr lm, rm;
	struct sge sg;
	struct wc w;
	bool mrs = false;
	uint16_t wrong;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 8192, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &rm, c.d[1]->pdn, 8192, ALL_ACC, 0) == 0);
	mrs = true;
	mr_fill(c.d[0], &lm, 1);
	sg = mr_sge(&lm, 0, 500);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1, rm.iova,
		  rm.key, 0);
	wrong = (uint16_t)(c.qp[0].uar + 1);
	db64(c.d[0], wrong, TERN_UDB_SQ, tern_udb_wq(c.qp[0].qpn, c.qp[0].sq_pi));
	wire_advance(&c.w, 100000);
	CHECK_EQ(c.w.sent[0], 0);
	CHECK_EQ(RDEV_STAT(c.d[0], db_misdirected), 1);
	/* unknown QPN on the right page */
	db64(c.d[0], c.qp[0].uar, TERN_UDB_SQ, tern_udb_wq(c.qp[0].qpn + 5, c.qp[0].sq_pi));
	wire_advance(&c.w, 100000);
	CHECK_EQ(c.w.sent[0], 0);
	CHECK_EQ(RDEV_STAT(c.d[0], db_misdirected), 2);
	/* 32-bit writes to the doorbell (both halves) are ignored */
	tern_model_mmio_write(c.d[0]->f.m, TERN_BAR_DB,
			      (uint64_t)c.qp[0].uar * TERN_DB_PAGE_SIZE + TERN_UDB_SQ,
			      c.qp[0].qpn, 4);
	tern_model_mmio_write(c.d[0]->f.m, TERN_BAR_DB,
			      (uint64_t)c.qp[0].uar * TERN_DB_PAGE_SIZE + TERN_UDB_SQ + 4,
			      c.qp[0].sq_pi, 4);
	wire_advance(&c.w, 100000);
	CHECK_EQ(c.w.sent[0], 0);
	/* CQ doorbell on the wrong page: no arming (no event later) */
	drv_eq_arm(&c.d[0]->f, &c.d[0]->comp_eq);
	db64(c.d[0], wrong, TERN_UDB_CQ, c.cq[0].cqn | TERN_UDB_CQ_ARM_NEXT);
	CHECK_EQ(RDEV_STAT(c.d[0], db_misdirected), 3);
	/* reads of the UAR return 0 */
	CHECK_EQ(tern_model_mmio_read(c.d[0]->f.m, TERN_BAR_DB,
				      (uint64_t)c.qp[0].uar * TERN_DB_PAGE_SIZE, 8), 0);
	/* the right doorbell works */
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 1000000) == 1);
	CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0, 500, 1, 0), -1);
	CHECK_EQ(c.d[0]->f.msix[1], 0);
	CHECK_EQ(RDEV_STAT(c.d[0], db_misdirected), 3);
out:
	if (mrs) {
		mr_release(&lm);
		mr_release(&rm);
	}
	conn_free(&c);
}

/* ---- completion events ----------------------------------------------------------------------- */

static void send_one(struct conn *c, struct rmr *lm, struct rmr *rm, uint64_t id, uint8_t flags)
{
	struct sge sg = mr_sge(lm, 0, 64);

	post_recv(c->d[1], &c->qp[1], id, &(struct sge){ rm->iova, 64, rm->key }, 1);
	ring_rq(c->d[1], &c->qp[1]);
	post_send(c->d[0], &c->qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED | flags, id, &sg, 1, 0, 0,
		  0);
	ring_sq(c->d[0], &c->qp[0]);
	wire_advance(&c->w, 200000);
}

static unsigned int cq_events(struct conn *c, unsigned int s)
{
	struct ev e;
	unsigned int n = 0;

	while (eq_next(&c->d[s]->f, &c->d[s]->comp_eq, &e)) {
		CHECK_EQ(e.type, TERN_EQE_CQ_COMPLETION);
		CHECK_EQ(e.data0, c->cq[s].cqn);
		n++;
	}
	return n;
}

static void drain(struct conn *c, unsigned int s, unsigned int want)
{
	struct wc w;
	unsigned int n = 0;

	while (cq_poll(c->d[s], &c->cq[s], &w))
		n++;
	CHECK_EQ(n, want);
}

/*
 * RESIZE_CQ: the CQEs software has not polled move to the new ring in order (with its
 * phase), later CQEs follow them, arming survives; a ring smaller than what is outstanding,
 * an unknown CQ and reserved bits are refused and leave the CQ as it was.
 */
static void t_cq_resize(void)
{
	typedef struct tern_cmd_resize_cq_in T;
	uint8_t in[sizeof(T)] = { 0 };
	struct cqe res;
	struct connopt o;
	struct conn c;
	struct rmr lm, rm;
	struct wc w;
	bool mrs = false;
	uint64_t id;

	connopt_default(&o);
	o.cq_log = 2;		/* 4 entries */
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 4096, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &rm, c.d[1]->pdn, 4096, ALL_ACC, 0) == 0);
	mrs = true;
	/* 3 receive CQEs, 1 polled, then 4 -> 16 entries: the other 2 come out of the new ring */
	for (id = 1; id <= 3; id++) {
		send_one(&c, &lm, &rm, id, 0);
		drain(&c, 0, 1);	/* the requester's 4-entry CQ */
	}
	RQ(cq_poll(c.d[1], &c.cq[1], &w));
	CHECK_EQ(w.wr_id, 1);
	CHECK_EQ(cq_resize(c.d[1], &c.cq[1], 4, false), TERN_CMD_OK);
	RQ(cq_poll(c.d[1], &c.cq[1], &w));
	CHECK_EQ(w.wr_id, 2);
	CHECK_EQ(w.status, TERN_CQE_OK);
	RQ(cq_poll(c.d[1], &c.cq[1], &w));
	CHECK_EQ(w.wr_id, 3);
	CHECK(!cq_poll(c.d[1], &c.cq[1], &w));
	/* 6 more (more than the old ring held) go on in the new one, with an event when armed */
	drv_eq_arm(&c.d[1]->f, &c.d[1]->comp_eq);
	cq_arm(c.d[1], &c.cq[1], TERN_UDB_CQ_ARM_NEXT);
	for (id = 4; id <= 9; id++) {
		send_one(&c, &lm, &rm, id, 0);
		drain(&c, 0, 1);
	}
	CHECK_EQ(cq_events(&c, 1), 1);
	for (id = 4; id <= 9; id++) {
		RQ(cq_poll(c.d[1], &c.cq[1], &w));
		CHECK_EQ(w.wr_id, id);
	}
	/* 3 outstanding do not fit in 2 entries: refused, the CQ goes on as it was */
	for (id = 10; id <= 12; id++) {
		send_one(&c, &lm, &rm, id, 0);
		drain(&c, 0, 1);
	}
	CHECK_EQ(cq_resize(c.d[1], &c.cq[1], 1, true), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.cq[1].log, 4);
	/* ...but they fit in 4 entries (a page-list ring this time) */
	CHECK_EQ(cq_resize(c.d[1], &c.cq[1], 2, true), TERN_CMD_OK);
	for (id = 10; id <= 12; id++) {
		RQ(cq_poll(c.d[1], &c.cq[1], &w));
		CHECK_EQ(w.wr_id, id);
	}
	send_one(&c, &lm, &rm, 13, 0);
	drain(&c, 0, 1);
	RQ(cq_poll(c.d[1], &c.cq[1], &w));
	CHECK_EQ(w.wr_id, 13);
	/* an unknown CQ, reserved bits */
	wr32(in + OFF(T, cqn), 999);
	in[OFF(T, log_depth)] = 3;
	CHECK_EQ(rdev_cmd(c.d[1], TERN_CMD_RESIZE_CQ, in, sizeof(in), NULL, 0, &res),
		 TERN_CMD_BAD_RESOURCE);
	wr32(in + OFF(T, cqn), c.cq[1].cqn);
	in[OFF(T, rsvd) + 1] = 1;
	CHECK_EQ(rdev_cmd(c.d[1], TERN_CMD_RESIZE_CQ, in, sizeof(in), NULL, 0, &res),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(res.syndrome, OFF(T, rsvd) + 1);
out:
	if (mrs) {
		mr_release(&lm);
		mr_release(&rm);
	}
	conn_free(&c);
}

/* ARM_NEXT: exactly one event (and one MSI-X) for the next CQE; nothing without arming. */
static void t_cq_arm_next(void)
{
	struct connopt o;
	struct conn c;
	struct rmr lm, rm;
	bool mrs = false;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 4096, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &rm, c.d[1]->pdn, 4096, ALL_ACC, 0) == 0);
	mrs = true;
	drv_eq_arm(&c.d[1]->f, &c.d[1]->comp_eq);
	drv_eq_arm(&c.d[0]->f, &c.d[0]->comp_eq);
	/* not armed */
	send_one(&c, &lm, &rm, 1, 0);
	drain(&c, 1, 1);
	drain(&c, 0, 1);
	CHECK_EQ(cq_events(&c, 1), 0);
	CHECK_EQ(c.d[1]->f.msix[1], 0);
	/* armed: one event for two CQEs */
	cq_arm(c.d[1], &c.cq[1], TERN_UDB_CQ_ARM_NEXT);
	CHECK_EQ(cq_events(&c, 1), 0);		/* nothing new yet */
	send_one(&c, &lm, &rm, 2, 0);
	send_one(&c, &lm, &rm, 3, 0);
	CHECK_EQ(cq_events(&c, 1), 1);
	CHECK_EQ(c.d[1]->f.msix[1], 1);
	drain(&c, 1, 2);
	drain(&c, 0, 2);
	/* re-arm the EQ and the CQ: the next CQE raises one more */
	drv_eq_arm(&c.d[1]->f, &c.d[1]->comp_eq);
	cq_arm(c.d[1], &c.cq[1], TERN_UDB_CQ_ARM_NEXT);
	send_one(&c, &lm, &rm, 4, 0);
	CHECK_EQ(cq_events(&c, 1), 1);
	CHECK_EQ(c.d[1]->f.msix[1], 2);
	drain(&c, 1, 1);
	drain(&c, 0, 1);
	/*
	 * Armed while a CQE waits (software took the event, arms, then polls): that CQE raises
	 * nothing, the next one does. An event for the waiting CQE would arrive after the poll
	 * that consumed it, and perftest's latency loops would take it for another CQ's.
	 */
	drv_eq_arm(&c.d[1]->f, &c.d[1]->comp_eq);
	send_one(&c, &lm, &rm, 5, 0);
	cq_arm(c.d[1], &c.cq[1], TERN_UDB_CQ_ARM_NEXT);
	CHECK_EQ(cq_events(&c, 1), 0);
	CHECK_EQ(c.d[1]->f.msix[1], 2);
	drain(&c, 1, 1);
	send_one(&c, &lm, &rm, 6, 0);
	CHECK_EQ(cq_events(&c, 1), 1);
	CHECK_EQ(c.d[1]->f.msix[1], 3);
	drain(&c, 1, 1);
	drain(&c, 0, 2);
	/* the requester's CQ was never armed */
	CHECK_EQ(cq_events(&c, 0), 0);
	CHECK_EQ(c.d[0]->f.msix[1], 0);
	CHECK_EQ(c.d[1]->f.msix_bad + c.d[0]->f.msix_bad, 0);
out:
	if (mrs) {
		mr_release(&lm);
		mr_release(&rm);
	}
	conn_free(&c);
}

/* ARM_SOLICITED: no event for an ordinary CQE, one for a solicited one, one for an error. */
static void t_cq_arm_solicited(void)
{
	struct connopt o;
	struct conn c;
	struct rmr lm, rm;
	bool mrs = false;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 4096, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &rm, c.d[1]->pdn, 4096, ALL_ACC, 0) == 0);
	mrs = true;
	drv_eq_arm(&c.d[1]->f, &c.d[1]->comp_eq);
	cq_arm(c.d[1], &c.cq[1], TERN_UDB_CQ_ARM_SOLICITED);
	send_one(&c, &lm, &rm, 1, 0);
	CHECK_EQ(cq_events(&c, 1), 0);
	drain(&c, 1, 1);
	send_one(&c, &lm, &rm, 2, TERN_WQE_F_SOLICITED);
	CHECK_EQ(cq_events(&c, 1), 1);
	CHECK_EQ(c.d[1]->f.msix[1], 1);
	drain(&c, 1, 1);
	drain(&c, 0, 2);
	/* an error CQE (a flushed receive) also counts as solicited */
	drv_eq_arm(&c.d[1]->f, &c.d[1]->comp_eq);
	cq_arm(c.d[1], &c.cq[1], TERN_UDB_CQ_ARM_SOLICITED);
	post_recv(c.d[1], &c.qp[1], 9, &(struct sge){ rm.iova, 64, rm.key }, 1);
	ring_rq(c.d[1], &c.qp[1]);
	wire_pump(&c.w);
	CHECK_EQ(cq_events(&c, 1), 0);
	RQ(qp_to_err(c.d[1], &c.qp[1]) == TERN_CMD_OK);
	wire_pump(&c.w);
	CHECK_EQ(cq_events(&c, 1), 1);
	CHECK_EQ(c.d[1]->f.msix[1], 2);
	drain(&c, 1, 1);
out:
	if (mrs) {
		mr_release(&lm);
		mr_release(&rm);
	}
	conn_free(&c);
}

static int cq_moderate_raw(struct conn *c, unsigned int s, uint32_t cqn, uint16_t count,
			   uint16_t period, uint32_t rsvd, uint32_t *syndrome)
{
	typedef struct tern_cmd_modify_cq_in T;
	uint8_t in[sizeof(T)] = { 0 };
	struct cqe res = { 0 };
	int st;

	wr32(in + offsetof(T, cqn), cqn);
	wr16(in + offsetof(T, max_count), count);
	wr16(in + offsetof(T, period_us), period);
	wr32(in + offsetof(T, rsvd), rsvd);
	st = rdev_cmd(c->d[s], TERN_CMD_MODIFY_CQ, in, sizeof(in), NULL, 0, &res);
	if (syndrome)
		*syndrome = res.syndrome;
	return st;
}

static int cq_moderate(struct conn *c, unsigned int s, uint32_t cqn, uint16_t count,
		       uint16_t period, uint32_t *syndrome)
{
	return cq_moderate_raw(c, s, cqn, count, period, 0, syndrome);
}

/* Re-arms node 1's completion EQ and arms its CQ (@how: TERN_UDB_CQ_ARM_*). */
static void arm_cq1(struct conn *c, uint64_t how)
{
	drv_eq_arm(&c->d[1]->f, &c->d[1]->comp_eq);
	cq_arm(c->d[1], &c->cq[1], how);
}

/* Polls @n completions on each side: node 1's receives, node 0's sends. */
static void drain_both(struct conn *c, unsigned int n)
{
	drain(c, 1, n);
	drain(c, 0, n);
}

/*
 * MODIFY_CQ: an armed CQ's event waits for max_count CQEs or period_us after the CQE that
 * fired the arming, whichever is first; new bounds apply to a moderation under way; 0/0
 * is the unmoderated behaviour; limits and reserved bits are refused.
 */
static void t_cq_moderation(void)
{
	struct connopt o;
	struct conn c;
	struct rmr lm, rm;
	bool mrs = false;
	uint32_t syn, cqn;
	uint64_t id = 1;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 4096, ALL_ACC, 0) == 0);
	RQ(mr_create(c.d[1], &rm, c.d[1]->pdn, 4096, ALL_ACC, 0) == 0);
	mrs = true;
	cqn = c.cq[1].cqn;
	CHECK_EQ(cq_moderate(&c, 1, cqn, 4096, 0, &syn), TERN_CMD_BAD_PARAM);
	CHECK_EQ(syn, offsetof(struct tern_cmd_modify_cq_in, max_count));
	CHECK_EQ(cq_moderate(&c, 1, cqn, 0, 4096, &syn), TERN_CMD_BAD_PARAM);
	CHECK_EQ(syn, offsetof(struct tern_cmd_modify_cq_in, period_us));
	CHECK_EQ(cq_moderate(&c, 1, cqn + 1000, 1, 1, &syn), TERN_CMD_BAD_RESOURCE);
	/* a count of 3, no time bound: the third CQE from the one that fired */
	CHECK_EQ(cq_moderate(&c, 1, cqn, 3, 0, NULL), TERN_CMD_OK);
	arm_cq1(&c, TERN_UDB_CQ_ARM_NEXT);
	send_one(&c, &lm, &rm, id++, 0);
	send_one(&c, &lm, &rm, id++, 0);
	wire_advance(&c.w, 100 * 1000 * 1000);
	CHECK_EQ(cq_events(&c, 1), 0);
	send_one(&c, &lm, &rm, id++, 0);
	CHECK_EQ(cq_events(&c, 1), 1);
	CHECK_EQ(c.d[1]->f.msix[1], 1);
	drain_both(&c, 3);
	/* a period of 1 ms only: the event comes 1 ms after the CQE, not before */
	CHECK_EQ(cq_moderate(&c, 1, cqn, 0, 1000, NULL), TERN_CMD_OK);
	arm_cq1(&c, TERN_UDB_CQ_ARM_NEXT);
	send_one(&c, &lm, &rm, id++, 0);	/* the CQE, then 200 us */
	CHECK_EQ(cq_events(&c, 1), 0);
	wire_advance(&c.w, 700 * 1000);
	CHECK_EQ(cq_events(&c, 1), 0);
	wire_advance(&c.w, 300 * 1000);
	CHECK_EQ(cq_events(&c, 1), 1);
	drain_both(&c, 1);
	/* both bounds: the count wins when CQEs come fast, the time when they do not */
	CHECK_EQ(cq_moderate(&c, 1, cqn, 2, 1000, NULL), TERN_CMD_OK);
	arm_cq1(&c, TERN_UDB_CQ_ARM_NEXT);
	send_one(&c, &lm, &rm, id++, 0);
	send_one(&c, &lm, &rm, id++, 0);
	CHECK_EQ(cq_events(&c, 1), 1);
	drain_both(&c, 2);
	arm_cq1(&c, TERN_UDB_CQ_ARM_NEXT);
	send_one(&c, &lm, &rm, id++, 0);
	CHECK_EQ(cq_events(&c, 1), 0);
	wire_advance(&c.w, 1000 * 1000);
	CHECK_EQ(cq_events(&c, 1), 1);
	drain_both(&c, 1);
	/* new bounds reach a moderation under way: a count already met posts at once */
	CHECK_EQ(cq_moderate(&c, 1, cqn, 8, 0, NULL), TERN_CMD_OK);
	arm_cq1(&c, TERN_UDB_CQ_ARM_NEXT);
	send_one(&c, &lm, &rm, id++, 0);
	send_one(&c, &lm, &rm, id++, 0);
	CHECK_EQ(cq_events(&c, 1), 0);
	CHECK_EQ(cq_moderate(&c, 1, cqn, 2, 0, NULL), TERN_CMD_OK);
	CHECK_EQ(cq_events(&c, 1), 1);
	drain_both(&c, 2);
	/* ARM_SOLICITED: ordinary CQEs before the solicited one do not start it */
	CHECK_EQ(cq_moderate(&c, 1, cqn, 2, 0, NULL), TERN_CMD_OK);
	arm_cq1(&c, TERN_UDB_CQ_ARM_SOLICITED);
	send_one(&c, &lm, &rm, id++, 0);
	send_one(&c, &lm, &rm, id++, TERN_WQE_F_SOLICITED);
	CHECK_EQ(cq_events(&c, 1), 0);
	send_one(&c, &lm, &rm, id++, 0);
	CHECK_EQ(cq_events(&c, 1), 1);
	drain_both(&c, 3);
	/* a moderation pending by time, then the bounds taken off: the event at once */
	CHECK_EQ(cq_moderate(&c, 1, cqn, 0, 4000, NULL), TERN_CMD_OK);
	arm_cq1(&c, TERN_UDB_CQ_ARM_NEXT);
	send_one(&c, &lm, &rm, id++, 0);
	CHECK_EQ(cq_events(&c, 1), 0);
	CHECK_EQ(cq_moderate(&c, 1, cqn, 0, 0, NULL), TERN_CMD_OK);
	CHECK_EQ(cq_events(&c, 1), 1);
	drain_both(&c, 1);
	/* unmoderated again: the next CQE after arming raises the event; nothing fires later */
	arm_cq1(&c, TERN_UDB_CQ_ARM_NEXT);
	send_one(&c, &lm, &rm, id++, 0);
	CHECK_EQ(cq_events(&c, 1), 1);
	wire_advance(&c.w, 10 * 1000 * 1000);
	CHECK_EQ(cq_events(&c, 1), 0);
	drain_both(&c, 1);
	/* reserved bits; the requester's CQ was never armed */
	CHECK_EQ(cq_moderate_raw(&c, 1, cqn, 1, 1, 0x100, &syn), TERN_CMD_BAD_PARAM);
	CHECK_EQ(syn, offsetof(struct tern_cmd_modify_cq_in, rsvd));
	CHECK_EQ(cq_events(&c, 0), 0);
	CHECK_EQ(c.d[1]->f.msix_bad + c.d[0]->f.msix_bad, 0);
out:
	if (mrs) {
		mr_release(&lm);
		mr_release(&rm);
	}
	conn_free(&c);
}

const struct test rdma_err_tests[] = {
	{ "rdma err: local errors (lkey, PD, bounds, access, opcode, SGEs, inline)",
	  t_local_errors },
	{ "rdma err: remote access errors: REM_ACCESS_ERR, responder ERR+event+flush",
	  t_remote_access_errors },
	{ "rdma err: SEND longer than the receive: LOC_LEN_ERR / REM_INV_REQ_ERR",
	  t_send_too_long },
	{ "rdma err: modify to ERR flushes outstanding and later WQEs", t_modify_err_flush },
	{ "rdma err: misdirected, unknown and 32-bit doorbells do nothing", t_doorbells },
	{ "rdma ev: CQ ARM_NEXT: one event per arming, for CQEs after it", t_cq_arm_next },
	{ "rdma: RESIZE_CQ keeps unpolled CQEs in order, refuses a ring too small", t_cq_resize },
	{ "rdma ev: CQ ARM_SOLICITED: solicited and error CQEs only", t_cq_arm_solicited },
	{ "rdma ev: MODIFY_CQ moderates events by count and by time", t_cq_moderation },
	{ NULL, NULL },
};
