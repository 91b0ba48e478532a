/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: the RC responder.
 *
 * A request with the expected PSN is executed at once (data placed, receive CQE written);
 * what it calls for (ACK when AckReq is set, NAK, READ response) is queued in the QP's
 * output FIFO and sent by the next tern_model_run(), in order, consecutive ACKs merged into
 * one. A PSN ahead of the expected one gets one sequence NAK (until the expected PSN
 * arrives); one behind is a duplicate: SEND/WRITE are re-ACKed with the last PSN done, a
 * READ is served again from its resource. No receive WQE for a SEND (or WRITE with
 * immediate): RNR NAK with min_rnr_timer, nothing consumed. Remote access errors (rkey,
 * PD, bounds, MR or QP rights) are NAKed and move the QP to ERR with TERN_QP_EV_ACCESS_ERR;
 * invalid requests (opcode sequence, lengths, a SEND longer than the receive WQE, too many
 * READs) are NAKed and move it to ERR with TERN_QP_EV_REQ_ERR; in ERR the RQ is flushed.
 * On the last packet of a message the final payload byte is written last. A SEND with
 * invalidate (IETH on its last packet) invalidates the key once the message is placed
 * (rdma_mr.c); a key the QP may not invalidate is an invalid request.
 *
 * Atomics (COMPARE_SWAP, FETCH_ADD) execute at once on the 8 bytes they name (misaligned:
 * invalid request; rights as for WRITE/READ but REMOTE_ATOMIC) and take a READ resource
 * that keeps the original value; the ATOMIC_ACKNOWLEDGE goes through the output FIFO. A
 * duplicate atomic whose PSN a resource still holds is answered from it without executing
 * again (atomic_replays); an older one is dropped, the requester retries.
 *
 * UC (resp_uc_rx) answers nothing and takes a message only whole and in PSN order; see there.
 */
#include "rdma.h"

void ternm_resp_reset(struct ternm_qp *qp)
{
	qp->epsn = 0;
	qp->msn = 0;
	qp->nak_sent = false;
	qp->msg = RQ_MSG_NONE;
	qp->msg_off = 0;
	qp->rq_rord = 0;
	qp->rqe_valid = false;
	qp->rqe_inv = false;
	qp->srq_last_wqe = false;
	memset(qp->rd, 0, sizeof(qp->rd));
	qp->rd_next = 0;
	qp->fifo_head = qp->fifo_count = 0;
}

/* ---- output FIFO -------------------------------------------------------------------------- */

static void fifo_push(struct tern_model *m, struct ternm_qp *qp, uint8_t type, uint8_t syn,
		      uint32_t psn, uint8_t res)
{
	struct ternm_resp_item *it;

	if (type == RESP_ACK && qp->fifo_count) {
		it = &qp->fifo[(qp->fifo_head + qp->fifo_count - 1) % TERNM_RESP_FIFO];
		if (it->type == RESP_ACK) {
			it->psn = psn;
			it->msn = qp->msn;
			return;
		}
	}
	if (qp->fifo_count == TERNM_RESP_FIFO) {
		/* full: dropped; the requester's timer recovers */
		if (type == RESP_READ)
			qp->rd[res].busy = false;
		return;
	}
	it = &qp->fifo[(qp->fifo_head + qp->fifo_count) % TERNM_RESP_FIFO];
	it->type = type;
	it->syndrome = syn;
	it->psn = psn;
	it->res = res;
	it->msn = qp->msn;
	qp->fifo_count++;
	ternm_qp_work(m, qp);
}

static void fifo_pop(struct ternm_qp *qp)
{
	qp->fifo_head = (uint8_t)((qp->fifo_head + 1) % TERNM_RESP_FIFO);
	qp->fifo_count--;
}

/* ---- errors ------------------------------------------------------------------------------- */

static void recv_cqe(struct tern_model *m, struct ternm_qp *qp, uint8_t opcode, uint8_t status,
		     uint8_t synd, uint32_t len, const uint8_t *imm, bool se)
{
	struct ternm_cqe_info ci;

	memset(&ci, 0, sizeof(ci));
	ci.wr_id = qp->rqe_wr_id;
	ci.byte_len = len;
	ci.wqe_idx = qp->rqe_idx;
	ci.opcode = opcode;
	ci.status = status;
	ci.vendor_err = status ? synd : 0;
	if (imm) {
		memcpy(ci.imm, imm, 4);
		ci.flags |= TERN_CQE_F_IMM;
	}
	if (se)
		ci.flags |= TERN_CQE_F_SOLICITED;
	if (qp->rqe_inv) {
		put_le32(ci.imm, qp->rqe_inv_key);	/* invalidated_rkey */
		ci.flags |= TERN_CQE_F_INV;
		qp->rqe_inv = false;
	}
	ci.flags |= qp->ud_cqe_flags;
	ci.src_qpn = qp->ud_src_qpn;
	ternm_cq_write(m, qp, qp->rcqn, &ci);
	if (!(qp->flags & TERN_QP_F_SRQ))
		qp->rq_ci++;
	qp->rq_rord = (qp->rq_rord + 1) & TERN_SR_SPH_RORD_MASK;
	qp->rqe_valid = false;
}

/* NAK the request at @psn with @syn and move the QP to ERR with @ev. */
static void resp_fatal(struct tern_model *m, struct ternm_qp *qp, uint32_t psn, uint8_t syn,
		       uint8_t ev)
{
	fifo_push(m, qp, RESP_NAK, syn, psn, 0);
	ternm_qp_to_err(m, qp);
	ternm_qp_event(m, qp, ev);
}

static void inv_req(struct tern_model *m, struct ternm_qp *qp, uint32_t psn, const char *why)
{
	ternm_log(m, TERN_MODEL_LOG_INFO, "QP %u: invalid request at PSN 0x%06x (%s): NAK, QP to ERR",
		  qp->qpn, psn, why);
	resp_fatal(m, qp, psn, AETH_NAK_INV_REQ, TERN_QP_EV_REQ_ERR);
}

static void access_err(struct tern_model *m, struct ternm_qp *qp, uint32_t psn)
{
	TERNM_QSTAT(m, qp, resp_remote_access_errors, 1);
	resp_fatal(m, qp, psn, AETH_NAK_ACCESS, TERN_QP_EV_ACCESS_ERR);
}

/* ---- receive WQEs ---------------------------------------------------------------------------- */

/*
 * Read the receive WQE at @off of @mem (slots of @slot bytes): its wr_id into *@wr_id (once
 * its header was read: *@hdr true), its scatter list into @sge and *@nsge. Returns 0, -1 if it
 * is malformed, -2 if the ring cannot be read.
 */
int ternm_rqe_parse(struct tern_model *m, const struct ternm_mem *mem, uint64_t off,
		    uint32_t slot, bool *hdr, uint64_t *wr_id, struct ternm_sge *sge,
		    uint8_t *nsge)
{
	typedef struct tern_rq_wqe W;
	uint8_t b[sizeof(W) + TERNM_MAX_RECV_SGE * sizeof(struct tern_sge)];
	unsigned int i, n;

	*hdr = false;
	*nsge = 0;
	if (ternm_mem_read(m, mem, off, b, sizeof(W)))
		return -2;
	*wr_id = get_le64(CFLD(b, W, wr_id));
	n = b[offsetof(W, num_sge)];
	*hdr = true;
	if (n > TERNM_MAX_RECV_SGE || sizeof(W) + n * sizeof(struct tern_sge) > slot)
		return -1;
	if (ternm_mem_read(m, mem, off + sizeof(W), b + sizeof(W), n * sizeof(struct tern_sge)))
		return -2;
	for (i = 0; i < n; i++) {
		const uint8_t *e = b + sizeof(W) + i * sizeof(struct tern_sge);

		sge[i].addr = get_le64(CFLD(e, struct tern_sge, addr));
		sge[i].len = get_le32(CFLD(e, struct tern_sge, length));
		sge[i].key = get_le32(CFLD(e, struct tern_sge, lkey));
	}
	*nsge = (uint8_t)n;
	return 0;
}

/*
 * Read the receive WQE at @off of @mem (slots of @slot bytes) into the QP. Returns 0, -1 if
 * it is malformed, -2 if the ring cannot be read (rqe_valid tells whether its header could).
 */
int ternm_rqe_read(struct tern_model *m, struct ternm_qp *qp, const struct ternm_mem *mem,
		   uint64_t off, uint32_t slot)
{
	bool hdr;
	int st = ternm_rqe_parse(m, mem, off, slot, &hdr, &qp->rqe_wr_id, qp->rqe_sge,
				 &qp->rqe_nsge);

	if (hdr)
		qp->rqe_valid = true;	/* from here, a CQE reports on it */
	return st;
}

/**
 * ternm_wq_db_rec_read() - the producer index in a work queue's doorbell record
 * @m: the device
 * @mem: the queue's memory: the ring of 2^@log_depth slots of 2^@log_stride bytes, then the
 *       record (struct tern_wq_db_rec)
 * @log_depth: log2 of the ring's slots
 * @log_stride: log2 of a slot's bytes
 * @ci: the device's consumer index of the queue
 * @pi: the device's producer index of the queue; the record's, when 0 is returned
 *
 * The record is guest memory, never trusted: a PI behind *@pi or more than the depth ahead of
 * @ci (ternm_wq_pi_ok()) is refused as an unreadable record is. The WQEs were written before
 * the record, so they are read after it (acquire). Shared by RQs (ternm_rq_db_rec()) and SRQs
 * (rdma_srq.c).
 *
 * Return: 0, or -2 when the record cannot be read, is backwards or is beyond the depth.
 */
int ternm_wq_db_rec_read(struct tern_model *m, const struct ternm_mem *mem, unsigned int log_depth,
			 unsigned int log_stride, uint16_t ci, uint16_t *pi)
{
	uint8_t rec[sizeof(((struct tern_wq_db_rec *)0)->pi)];
	uint16_t v;

	if (ternm_mem_read(m, mem, 1ull << (log_depth + log_stride), rec, sizeof(rec)))
		return -2;
	v = get_le16(rec);
	if (!ternm_wq_pi_ok(v, *pi, ci, log_depth))
		return -2;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	*pi = v;
	return 0;
}

/*
 * An RQ with a doorbell record (TERN_QP_F_RQ_DB_REC, right after the ring): take its producer
 * index as rq_pi. Returns 0, or -2 when the record cannot be read, is behind rq_pi or is more
 * than the depth ahead of rq_ci (guest memory: never trusted further), counted in
 * db_rec_errors unless @quiet (the flush of a QP already in ERR); rq_pi then stays as it was.
 */
int ternm_rq_db_rec(struct tern_model *m, struct ternm_qp *qp, bool quiet)
{
	if (!ternm_wq_db_rec_read(m, &qp->rq_mem, qp->log_rq_depth, qp->log_rq_stride,
				  qp->rq_ci, &qp->rq_pi))
		return 0;
	if (!quiet) {
		ternm_log(m, TERN_MODEL_LOG_WARN,
			  "QP %u RQ doorbell record unreadable, backwards or beyond depth", qp->qpn);
		m->rdma->stats.db_rec_errors++;
	}
	return -2;
}

/*
 * Fetch the receive WQE for the message starting (kept until its CQE): the one at rq_ci, or
 * on an SRQ QP the one it took ahead for this receive ordinal (selective repeat), else the
 * SRQ's next. Returns 0, 1 if none is posted, or ternm_rqe_read's errors
 * (-2 also for a bad doorbell record). Its completion reports wqe_idx = rqe_idx and advances
 * rq_ci only on a QP with its own RQ.
 */
int ternm_rqe_fetch(struct tern_model *m, struct ternm_qp *qp)
{
	uint32_t idx = qp->rq_ci & ((1u << qp->log_rq_depth) - 1);

	if (qp->rqe_valid)
		return 0;
	if (qp->flags & TERN_QP_F_SRQ)
		return ternm_srq_fetch(m, qp);
	/* the cached producer index says empty: the record may know more */
	if (qp->rq_ci == qp->rq_pi && (qp->flags & TERN_QP_F_RQ_DB_REC) &&
	    ternm_rq_db_rec(m, qp, false))
		return -2;
	if (qp->rq_ci == qp->rq_pi)
		return 1;
	qp->rqe_idx = (uint16_t)idx;
	return ternm_rqe_read(m, qp, &qp->rq_mem, (uint64_t)idx << qp->log_rq_stride,
			      1u << qp->log_rq_stride);
}

/* The bytes a receive WQE's scatter list @sge (@nsge entries) holds. */
static uint64_t rqe_room(const struct ternm_sge *sge, unsigned int nsge)
{
	uint64_t room = 0;
	unsigned int i;

	for (i = 0; i < nsge; i++)
		room += sge[i].len;
	return room;
}

/*
 * Scatter @n bytes at message offset @off into the scatter list @sge (@nsge entries, each
 * checked for LOCAL_WRITE); with @last the final byte goes last, behind a release fence.
 * Returns 0, or the CQE status (LOC_LEN_ERR when the list is too small) with *synd set.
 */
static int sge_place(struct tern_model *m, struct ternm_qp *qp, const struct ternm_sge *sge,
		     unsigned int nsge, uint32_t off, const uint8_t *buf, uint32_t n, bool last,
		     uint8_t *synd)
{
	uint64_t room = rqe_room(sge, nsge);
	unsigned int i;

	if ((uint64_t)off + n > room) {
		*synd = TERN_SYND_MSG_TOO_LONG;
		return TERN_CQE_LOC_LEN_ERR;
	}
	for (i = 0; i < nsge && n; i++) {
		const struct ternm_sge *g = &sge[i];
		uint32_t c;
		int bad;

		if (off >= g->len) {
			off -= g->len;
			continue;
		}
		c = g->len - off < n ? g->len - off : n;
		bad = ternm_mr_check(m, g->key, qp, TERN_ACCESS_LOCAL_WRITE, g->addr + off, c);
		if (bad) {
			*synd = (uint8_t)bad;
			return TERN_CQE_LOC_PROT_ERR;
		}
		if (ternm_mr_copy(m, g->key, g->addr + off, (void *)(uintptr_t)buf, c, true,
				  last && c == n)) {
			*synd = TERN_SYND_DMA;
			return TERN_CQE_LOC_PROT_ERR;
		}
		buf += c;
		n -= c;
		off = 0;
	}
	return 0;
}

/* sge_place() into the QP's receive WQE in progress. */
static int rqe_place(struct tern_model *m, struct ternm_qp *qp, uint32_t off, const uint8_t *buf,
		     uint32_t n, bool last, uint8_t *synd)
{
	return sge_place(m, qp, qp->rqe_sge, qp->rqe_nsge, off, buf, n, last, synd);
}

static bool is_last_or_only(uint8_t op);

/**
 * ternm_resp_place() - place a selective-repeat SEND/WRITE packet that came after a gap
 * @m: the model
 * @qp: an RC QP in selective repeat
 * @p: a MIDDLE or LAST packet with its placement header (@p->place), ahead of the expected
 *	PSN
 *
 * A WRITE's payload goes to the address its RETH names, a SEND's to its offset in the
 * receive WQE its SPH names (rq_rord + k is the k-th WQE posted after the one at rq_ci; on
 * an SRQ QP the SRQ WQE reserved for that ordinal, ternm_srq_reserve());
 * a LAST packet's final byte is kept in @p->tail and written when the packet's turn comes
 * (ternm_resp_rx), behind the rest. Everything is checked first, as the in-order path
 * would: payload length (a MIDDLE exactly the path MTU, a LAST 1..MTU), the RETH's length
 * (what is left of the message: more than a MIDDLE's payload, exactly a LAST's), the key's
 * range and rights and the QP's REMOTE_WRITE, the SPH's offset (a nonzero multiple of the
 * MTU, within the receive WQE) and ordinal (a WQE posted and not consumed), the scatter
 * list's keys. Returns true if the payload was placed; false if the packet is to be
 * dropped (nothing, or for a memory fault part of it, was written, and only where the
 * checks allowed).
 */
bool ternm_resp_place(struct tern_model *m, struct ternm_qp *qp, struct ternm_pkt *p)
{
	bool last = is_last_or_only(p->opcode);
	uint32_t n = last ? p->paylen - 1 : p->paylen;

	if (last ? !p->paylen || p->paylen > qp->mtu : p->paylen != qp->mtu)
		return false;
	if (p->place == PKT_PLACE_RETH) {
		if (p->dmalen > TERNM_MAX_MSG || (last ? p->dmalen != p->paylen :
						  p->dmalen <= p->paylen))
			return false;
		if (!(qp->access & TERN_ACCESS_REMOTE_WRITE) ||
		    ternm_mr_check(m, p->rkey, qp, TERN_ACCESS_REMOTE_WRITE, p->va, p->paylen))
			return false;
		if (n && ternm_mr_copy(m, p->rkey, p->va, (void *)(uintptr_t)p->payload, n, true,
				       false))
			return false;
	} else {
		struct ternm_sge sge[TERNM_MAX_RECV_SGE];
		const struct ternm_sge *g = qp->rqe_sge;
		uint32_t mask = (1u << qp->log_rq_depth) - 1;
		uint32_t ahead = (p->rord - qp->rq_rord) & TERN_SR_SPH_RORD_MASK;
		uint32_t posted = (uint16_t)(qp->rq_pi - qp->rq_ci);
		uint8_t nsge = qp->rqe_nsge, synd;
		uint64_t wr_id;
		bool hdr;

		if (!p->moff || p->moff % qp->mtu || (uint64_t)p->moff + p->paylen > TERNM_MAX_MSG)
			return false;
		if (qp->flags & TERN_QP_F_SRQ) {
			/* the SRQ WQE reserved for its ordinal (sr_hold() reserved it) */
			if (ternm_srq_reserve(m, qp, ahead, ternm_sr_win(qp), &g, &nsge))
				return false;
			goto place;
		}
		/*
		 * Beyond what the cached producer index shows: an RQ with a doorbell record
		 * may have more (a bad record is counted when the in-order path reads it).
		 */
		if (ahead >= posted && (qp->flags & TERN_QP_F_RQ_DB_REC) &&
		    !ternm_rq_db_rec(m, qp, true))
			posted = (uint16_t)(qp->rq_pi - qp->rq_ci);
		if (posted > mask + 1 || ahead >= posted)
			return false;	/* no such receive WQE (yet) */
		if (ahead || !qp->rqe_valid) {
			uint32_t idx = (qp->rq_ci + ahead) & mask;

			/* ternm_rqe_fetch reads it again: each copy MR-checked on its own */

			if (ternm_rqe_parse(m, &qp->rq_mem, (uint64_t)idx << qp->log_rq_stride,
					    1u << qp->log_rq_stride, &hdr, &wr_id, sge, &nsge))
				return false;
			g = sge;
		}
place:
		if ((uint64_t)p->moff + p->paylen > rqe_room(g, nsge) ||
		    sge_place(m, qp, g, nsge, p->moff, p->payload, n, false, &synd))
			return false;
	}
	if (last)
		p->tail = p->payload[p->paylen - 1];
	p->placed = true;
	return true;
}

/* The receive WQE could not be used (@st from rqe_fetch): report it, NAK, QP to ERR. */
static void rqe_bad(struct tern_model *m, struct ternm_qp *qp, uint32_t psn, int st, uint8_t op)
{
	if (qp->rqe_valid)
		recv_cqe(m, qp, op, TERN_CQE_LOC_QP_OP_ERR,
			 st == -2 ? TERN_SYND_DMA : TERN_SYND_BAD_SGE_COUNT, 0, NULL, false);
	resp_fatal(m, qp, psn, AETH_NAK_OP, TERN_QP_EV_FATAL);
}

/* ---- requests --------------------------------------------------------------------------------- */

static bool is_first_or_only(uint8_t op)
{
	return op == IBOP_SEND_FIRST || op == IBOP_SEND_ONLY || op == IBOP_SEND_ONLY_IMM ||
	       op == IBOP_WRITE_FIRST || op == IBOP_WRITE_ONLY || op == IBOP_WRITE_ONLY_IMM ||
	       op == IBOP_READ_REQ || op == IBOP_CMP_SWAP || op == IBOP_FETCH_ADD;
}

static bool is_last_or_only(uint8_t op)
{
	return op == IBOP_SEND_LAST || op == IBOP_SEND_LAST_IMM || op == IBOP_SEND_ONLY ||
	       op == IBOP_SEND_ONLY_IMM || op == IBOP_WRITE_LAST || op == IBOP_WRITE_LAST_IMM ||
	       op == IBOP_WRITE_ONLY || op == IBOP_WRITE_ONLY_IMM;
}

static uint32_t rd_npkts(const struct ternm_qp *qp, uint32_t len)
{
	return len ? (uint32_t)(((uint64_t)len + qp->mtu - 1) / qp->mtu) : 1;
}

/*
 * Selective repeat re-asks a hole of READ @res: packets [@d, @d + the packets @len covers),
 * at least one, with the opcodes and AETHs of their places in the READ. A READ not being
 * sent sends just that. One being sent extends its run for a hole that starts inside it;
 * a hole behind its cursor is sent first (the cursor is kept to go on from there); any
 * other is queued (TERNM_RD_HOLES; when full, the last one grows to cover it) and sent
 * when the run is done.
 */
static void resp_sr_hole(struct ternm_rd_res *res, uint32_t d, uint32_t len)
{
	uint64_t k = len ? ((uint64_t)len + res->mtu - 1) / res->mtu : 1;
	uint32_t end = k >= res->npkts - d ? res->npkts : d + (uint32_t)k;
	unsigned int i;

	if (!res->busy) {
		res->next = d;
		res->stop = end;
		res->resume_stop = 0;
		res->nholes = 0;
		return;
	}
	if (d >= res->next && d <= res->stop) {
		if (end > res->stop)
			res->stop = end;
		return;
	}
	if (d < res->next && !res->resume_stop) {
		res->resume_next = res->next;
		res->resume_stop = res->stop;
		res->next = d;
		res->stop = end;
		return;
	}
	for (i = 0; i < res->nholes; i++)
		if (d >= res->hole[i].from && end <= res->hole[i].to)
			return;		/* queued already */
	if (res->nholes < TERNM_RD_HOLES) {
		res->hole[res->nholes].from = d;
		res->hole[res->nholes].to = end;
		res->nholes++;
		return;
	}
	if (d < res->hole[res->nholes - 1].from)
		res->hole[res->nholes - 1].from = d;
	if (end > res->hole[res->nholes - 1].to)
		res->hole[res->nholes - 1].to = end;
}

/* READ @res sent up to its stop: the next queued hole, or on from where it was. */
static void resp_sr_next(struct ternm_rd_res *res)
{
	if (res->nholes) {
		res->next = res->hole[0].from;
		res->stop = res->hole[0].to;
		res->nholes--;
		memmove(&res->hole[0], &res->hole[1], res->nholes * sizeof(res->hole[0]));
		return;
	}
	if (res->next < res->resume_next)
		res->next = res->resume_next;
	res->stop = res->resume_stop;
	res->resume_stop = 0;
}

static void resp_dup(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	unsigned int i;

	TERNM_QSTAT(m, qp, duplicate_request, 1);
	if (p->opcode == IBOP_CMP_SWAP || p->opcode == IBOP_FETCH_ADD) {
		for (i = 0; i < TERNM_MAX_DEST_RD; i++) {
			struct ternm_rd_res *res = &qp->rd[i];

			if (!res->valid || !res->atomic || res->first_psn != p->psn ||
			    res->rkey != p->rkey || res->va != p->va)
				continue;
			/* executed before: answer with the saved original value */
			if (!res->busy) {
				m->rdma->stats.atomic_replays++;
				res->busy = true;
				fifo_push(m, qp, RESP_READ, 0, res->first_psn, (uint8_t)i);
			}
			return;
		}
		return;		/* older than every saved result: dropped, never run twice */
	}
	if (p->opcode != IBOP_READ_REQ) {
		fifo_push(m, qp, RESP_ACK, AETH_ACK, psn_add(qp->epsn, TERNM_PSN_MASK), 0);
		return;
	}
	for (i = 0; i < TERNM_MAX_DEST_RD; i++) {
		struct ternm_rd_res *res = &qp->rd[i];
		int32_t d = psn_diff(p->psn, res->first_psn);

		if (!res->valid || res->atomic || d < 0 || (uint32_t)d >= res->npkts ||
		    res->rkey != p->rkey)
			continue;
		if (qp->sr) {
			resp_sr_hole(res, (uint32_t)d, p->dmalen);
		} else {
			res->next = (uint32_t)d;
			res->stop = res->npkts;
			res->resume_stop = 0;
			res->nholes = 0;
		}
		if (!res->busy) {
			res->busy = true;
			fifo_push(m, qp, RESP_READ, 0, res->first_psn, (uint8_t)i);
		}
		return;
	}
	/* no such READ any more: dropped */
}

static void resp_read(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	struct ternm_rd_res *res;
	unsigned int slots = qp->max_dest_rd_atomic;

	m->rdma->stats.rx_read_requests++;
	if (p->dmalen > TERNM_MAX_MSG || rd_npkts(qp, p->dmalen) > TERNM_MAX_MSG_PKTS ||
	    slots == 0) {
		inv_req(m, qp, p->psn, "READ length, or no READ resources");
		return;
	}
	if (p->dmalen && (!(qp->access & TERN_ACCESS_REMOTE_READ) ||
			  ternm_mr_check(m, p->rkey, qp, TERN_ACCESS_REMOTE_READ, p->va,
					 p->dmalen))) {
		access_err(m, qp, p->psn);
		return;
	}
	/*
	 * The resources hold the last max_dest_rd_atomic READs, oldest overwritten first: a
	 * requester within its max_rd_atomic can only re-request one of those. A response
	 * still queued for the overwritten READ (a replay for a duplicate) is dropped.
	 */
	if (qp->rd_next >= slots)
		qp->rd_next = 0;
	res = &qp->rd[qp->rd_next];
	qp->rd_next = (uint8_t)((qp->rd_next + 1) % slots);
	res->valid = true;
	res->busy = true;
	res->atomic = false;
	res->first_psn = p->psn;
	res->npkts = rd_npkts(qp, p->dmalen);
	res->mtu = qp->mtu;
	res->next = 0;
	res->stop = res->npkts;
	res->resume_stop = 0;
	res->nholes = 0;
	res->rkey = p->rkey;
	res->va = p->va;
	res->len = p->dmalen;
	qp->epsn = psn_add(p->psn, res->npkts);
	qp->msn = psn_add(qp->msn, 1);
	res->msn = qp->msn;
	fifo_push(m, qp, RESP_READ, 0, p->psn, (uint8_t)(res - qp->rd));
}

static void resp_atomic(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	struct ternm_rd_res *res;
	unsigned int slots = qp->max_dest_rd_atomic;
	uint64_t orig;

	if (slots == 0) {
		inv_req(m, qp, p->psn, "atomic, but no responder resources");
		return;
	}
	if (p->va & 7) {
		inv_req(m, qp, p->psn, "atomic at a misaligned address");
		return;
	}
	if (!(qp->access & TERN_ACCESS_REMOTE_ATOMIC) ||
	    ternm_mr_check(m, p->rkey, qp, TERN_ACCESS_REMOTE_ATOMIC, p->va, 8)) {
		access_err(m, qp, p->psn);
		return;
	}
	if (ternm_atomic_exec(m, p, &orig)) {
		resp_fatal(m, qp, p->psn, AETH_NAK_OP, TERN_QP_EV_FATAL);
		return;
	}
	m->rdma->stats.rx_atomic_requests++;
	/* the same ring of resources as READs: the oldest result is overwritten first */
	if (qp->rd_next >= slots)
		qp->rd_next = 0;
	res = &qp->rd[qp->rd_next];
	qp->rd_next = (uint8_t)((qp->rd_next + 1) % slots);
	memset(res, 0, sizeof(*res));
	res->valid = true;
	res->busy = true;
	res->atomic = true;
	res->orig = orig;
	res->first_psn = p->psn;
	res->npkts = 1;
	res->rkey = p->rkey;
	res->va = p->va;
	res->len = 8;
	qp->epsn = psn_add(p->psn, 1);
	qp->msn = psn_add(qp->msn, 1);
	res->msn = qp->msn;
	fifo_push(m, qp, RESP_READ, 0, p->psn, (uint8_t)(res - qp->rd));
}

/* ---- rules RC and UC share (what breaking one does differs: NAK and ERR, or drop) ---------- */

/* Payload length of a SEND/WRITE packet: MIDDLE and FIRST exactly the MTU, LAST 1..MTU. */
static bool paylen_ok(const struct ternm_qp *qp, const struct ternm_pkt *p, bool first, bool last)
{
	return last ? p->paylen <= qp->mtu && (first || p->paylen) : p->paylen == qp->mtu;
}

/* A WRITE's RETH: within max_msg_size (else *too_long) and what the QP and rkey allow. */
static bool write_reth_ok(struct tern_model *m, const struct ternm_qp *qp,
			  const struct ternm_pkt *p, bool *too_long)
{
	*too_long = p->dmalen > TERNM_MAX_MSG;
	if (*too_long)
		return false;
	return !p->dmalen || ((qp->access & TERN_ACCESS_REMOTE_WRITE) &&
			      !ternm_mr_check(m, p->rkey, qp, TERN_ACCESS_REMOTE_WRITE,
					      p->va, p->dmalen));
}

/* The packet stays within its WRITE's RETH length, and the last one ends exactly there. */
static bool write_bounds_ok(const struct ternm_qp *qp, const struct ternm_pkt *p, bool last)
{
	return (uint64_t)qp->msg_off + p->paylen <= qp->wr_len &&
	       (!last || qp->msg_off + p->paylen == qp->wr_len);
}

/*
 * Every packet after the first is checked against the MR as it is now: the key may have been
 * deregistered, or its slot registered again, since the first packet (a guest driver may
 * reuse key bytes).
 */
static bool write_mr_still_ok(struct tern_model *m, const struct ternm_qp *qp,
			      const struct ternm_pkt *p, bool first)
{
	return first || !p->paylen ||
	       !ternm_mr_check(m, qp->wr_rkey, qp, TERN_ACCESS_REMOTE_WRITE,
			       qp->wr_va + qp->msg_off, p->paylen);
}

/*
 * Selective repeat: a MIDDLE/LAST packet's placement header names the message in progress
 * at the expected place: a WRITE's RETH its key, the address of this packet's first byte
 * and the bytes left; a SEND's SPH this message's receive ordinal and offset.
 */
static bool place_hdr_ok(const struct ternm_qp *qp, const struct ternm_pkt *p)
{
	if (p->place == PKT_PLACE_RETH)
		return qp->msg == RQ_MSG_WRITE && p->rkey == qp->wr_rkey &&
		       p->va == qp->wr_va + qp->msg_off && p->dmalen == qp->wr_len - qp->msg_off;
	return qp->msg == RQ_MSG_SEND && p->rord == qp->rq_rord && p->moff == qp->msg_off;
}

/* UC: the QP cannot go on (a receive WQE that cannot be read or used): report, QP to ERR. */
static void uc_fatal(struct tern_model *m, struct ternm_qp *qp, uint8_t opcode, uint8_t st,
		     uint8_t synd)
{
	if (qp->rqe_valid)
		recv_cqe(m, qp, opcode, st, synd, 0, NULL, false);
	ternm_qp_to_err(m, qp);
	ternm_qp_event(m, qp, TERN_QP_EV_FATAL);
}

/* The immediate data of @p, if its opcode has it; else NULL. */
static const uint8_t *pkt_imm(const struct ternm_pkt *p)
{
	uint8_t op = p->opcode;

	return (op == IBOP_SEND_LAST_IMM || op == IBOP_SEND_ONLY_IMM ||
		op == IBOP_WRITE_LAST_IMM || op == IBOP_WRITE_ONLY_IMM) ? p->imm : NULL;
}

/* A UC message cannot go on: what is left of it is dropped. */
static void uc_drop(struct ternm_qp *qp)
{
	qp->msg = RQ_MSG_DROP;
}

/*
 * UC packet @p: its PSN (a gap loses the message in progress), its opcode against the
 * message in progress, its payload length. Returns false if it is dropped.
 */
static bool uc_check(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	struct ternm_rdma *r = m->rdma;
	uint8_t op = p->opcode;
	bool first = is_first_or_only(op), last = is_last_or_only(op);
	bool is_send = op <= IBOP_SEND_ONLY_IMM;

	if (p->psn != qp->epsn) {
		/* a gap: whatever was in progress is lost (counted here, not as a sequence error) */
		TERNM_QSTAT(m, qp, out_of_sequence, 1);
		uc_drop(qp);
	}
	qp->epsn = psn_add(p->psn, 1);
	if (first) {
		if (qp->msg == RQ_MSG_SEND || qp->msg == RQ_MSG_WRITE)
			r->stats.rx_opcode_seq_err++;	/* its LAST never came */
		qp->msg = RQ_MSG_NONE;
	} else if (qp->msg != (is_send ? RQ_MSG_SEND : RQ_MSG_WRITE)) {
		if (qp->msg != RQ_MSG_DROP)
			r->stats.rx_opcode_seq_err++;
		uc_drop(qp);
		return false;
	}
	if (!paylen_ok(qp, p, first, last)) {
		r->stats.rx_opcode_seq_err++;
		uc_drop(qp);
		return false;
	}
	return true;
}

/* A UC SEND packet, in sequence. */
static void uc_rx_send(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	struct ternm_rdma *r = m->rdma;
	bool first = is_first_or_only(p->opcode), last = is_last_or_only(p->opcode);
	const uint8_t *imm = pkt_imm(p);
	uint8_t synd;
	int st;

	if (first)
		r->stats.rx_send_requests++;
	st = ternm_rqe_fetch(m, qp);
	if (st > 0) {
		TERNM_QSTAT(m, qp, out_of_buffer, 1);
		uc_drop(qp);
		return;
	}
	if (first)
		qp->msg_off = 0;
	if (st < 0) {
		uc_fatal(m, qp, TERN_CQE_RECV, TERN_CQE_LOC_QP_OP_ERR,
			 st == -2 ? TERN_SYND_DMA : TERN_SYND_BAD_SGE_COUNT);
		return;
	}
	st = rqe_place(m, qp, qp->msg_off, p->payload, p->paylen, last, &synd);
	if (st == TERN_CQE_LOC_LEN_ERR) {
		TERNM_QSTAT(m, qp, resp_local_length_error, 1);
		uc_drop(qp);
		return;
	}
	if (st) {
		uc_fatal(m, qp, TERN_CQE_RECV, (uint8_t)st, synd);
		return;
	}
	qp->msg_off += p->paylen;
	qp->msg = RQ_MSG_SEND;
	if (last) {
		recv_cqe(m, qp, imm ? TERN_CQE_RECV_IMM : TERN_CQE_RECV, TERN_CQE_OK, 0,
			 qp->msg_off, imm, p->se);
		qp->msg = RQ_MSG_NONE;
	}
}

/* A WRITE's first packet, its RETH checked: the message goes where the RETH says. */
static void write_begin(struct ternm_qp *qp, const struct ternm_pkt *p)
{
	qp->wr_rkey = p->rkey;
	qp->wr_va = p->va;
	qp->wr_len = p->dmalen;
	qp->msg_off = 0;
}

/* The first packet of UC WRITE @p: its RETH, checked, is where the message goes. */
static bool uc_write_first(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	bool too_long;

	m->rdma->stats.rx_write_requests++;
	if (!write_reth_ok(m, qp, p, &too_long)) {
		TERNM_QSTAT(m, qp, resp_remote_access_errors, 1);
		uc_drop(qp);
		return false;
	}
	write_begin(qp, p);
	return true;
}

/* A UC WRITE packet, in sequence. */
static void uc_rx_write(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	struct ternm_rdma *r = m->rdma;
	bool first = is_first_or_only(p->opcode), last = is_last_or_only(p->opcode);
	const uint8_t *imm = pkt_imm(p);
	const uint8_t cqe_op = TERN_CQE_RECV_RDMA_WRITE_IMM;
	int st;

	if (first && !uc_write_first(m, qp, p))
		return;
	if (!write_bounds_ok(qp, p, last)) {
		r->stats.rx_opcode_seq_err++;
		uc_drop(qp);
		return;
	}
	if (imm) {
		st = ternm_rqe_fetch(m, qp);
		if (st > 0) {
			TERNM_QSTAT(m, qp, out_of_buffer, 1);
			uc_drop(qp);
			return;
		}
		if (st < 0) {
			uc_fatal(m, qp, cqe_op, TERN_CQE_LOC_QP_OP_ERR,
				 st == -2 ? TERN_SYND_DMA : TERN_SYND_BAD_SGE_COUNT);
			return;
		}
	}
	if (!write_mr_still_ok(m, qp, p, first)) {
		TERNM_QSTAT(m, qp, resp_remote_access_errors, 1);
		uc_drop(qp);
		return;
	}
	if (p->paylen && ternm_mr_copy(m, qp->wr_rkey, qp->wr_va + qp->msg_off,
				       (void *)(uintptr_t)p->payload, p->paylen, true, last)) {
		uc_fatal(m, qp, cqe_op, TERN_CQE_LOC_PROT_ERR, TERN_SYND_DMA);
		return;
	}
	qp->msg_off += p->paylen;
	qp->msg = RQ_MSG_WRITE;
	if (last) {
		if (imm)
			recv_cqe(m, qp, cqe_op, TERN_CQE_OK, 0, qp->wr_len, imm, p->se);
		qp->msg = RQ_MSG_NONE;
	}
}

/*
 * A UC request (@p->opcode is the RC one). Nothing is acknowledged and nothing comes again, so
 * a message is taken only whole and in order: a PSN other than the expected one drops the
 * message in progress, and the responder resynchronizes on the next FIRST or ONLY packet,
 * whatever its PSN (out_of_sequence counts the gaps). A packet that cannot continue the
 * message (MIDDLE or LAST with none in progress, FIRST or ONLY in the middle of one, a wrong
 * payload length) drops it too (rx_opcode_seq_err). A SEND with no receive WQE posted
 * (out_of_buffer) or longer than its receive WQE (resp_local_length_error), a WRITE outside
 * what its rkey grants or the QP's REMOTE_WRITE allows (resp_remote_access_errors), or a
 * WRITE_IMM finding no receive WQE are dropped whole and silently: the receive WQE stays for
 * the next message, bytes already placed stay placed, the QP stays as it is (IB's class D).
 * Only a receive WQE that cannot be read or is malformed, or memory that fails under a valid
 * MR, ends the QP (ERR, FATAL event), as on RC.
 */
static void resp_uc_rx(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	if (!uc_check(m, qp, p))
		return;
	if (p->opcode <= IBOP_SEND_ONLY_IMM)
		uc_rx_send(m, qp, p);
	else
		uc_rx_write(m, qp, p);
}

/*
 * The PSN of request @p against the expected one: true if it is the one. Ahead of it, a
 * sequence NAK goes out (once per gap); behind it, the duplicate is answered (resp_dup).
 */
static bool resp_check_psn(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	int32_t d = psn_diff(p->psn, qp->epsn);

	if (d > 0) {
		TERNM_QSTAT(m, qp, out_of_sequence, 1);
		if (!qp->nak_sent) {
			qp->nak_sent = true;
			fifo_push(m, qp, RESP_NAK, AETH_NAK_SEQ, qp->epsn, 0);
		}
		return false;
	}
	if (d < 0) {
		resp_dup(m, qp, p);
		return false;
	}
	qp->nak_sent = false;
	return true;
}

static bool is_atomic_req(uint8_t op)
{
	return op == IBOP_CMP_SWAP || op == IBOP_FETCH_ADD;
}

/*
 * Request @p at the expected PSN: whether its opcode continues the message in progress, and
 * its payload length and placement header fit. Else an INVALID REQUEST NAK went out.
 */
static bool resp_check_op(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	uint8_t op = p->opcode;
	bool first = is_first_or_only(op), last = is_last_or_only(op);
	bool is_send = op <= IBOP_SEND_ONLY_IMM;

	if (qp->msg == RQ_MSG_SEND ? (!is_send || first) :
	    qp->msg == RQ_MSG_WRITE ? (is_send || first || op == IBOP_READ_REQ) : !first) {
		m->rdma->stats.rx_opcode_seq_err++;
		inv_req(m, qp, p->psn, "opcode out of sequence");
		return false;
	}
	if (op != IBOP_READ_REQ && !is_atomic_req(op) && !paylen_ok(qp, p, first, last)) {
		inv_req(m, qp, p->psn, "payload length");
		return false;
	}
	if (p->place && !place_hdr_ok(qp, p)) {
		inv_req(m, qp, p->psn, "placement header does not continue the message");
		return false;
	}
	return true;
}

/* No receive WQE for request @p: RNR NAK. */
static void resp_rnr(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	TERNM_QSTAT(m, qp, out_of_buffer, 1);
	fifo_push(m, qp, RESP_NAK, AETH_RNR_NAK | qp->min_rnr_timer, p->psn, 0);
}

/*
 * The payload of SEND packet @p into the receive WQE at msg_off (of one placed after a gap,
 * only its final byte, when it is the last). On failure the receive completes with the error
 * and the request is NAKed; returns false.
 */
static bool resp_rx_send_place(struct tern_model *m, struct ternm_qp *qp,
			       const struct ternm_pkt *p, bool last)
{
	uint8_t synd;
	int st;

	if (!p->placed)
		st = rqe_place(m, qp, qp->msg_off, p->payload, p->paylen, last, &synd);
	else if (last)		/* placed after a gap: the final byte, last */
		st = rqe_place(m, qp, qp->msg_off + p->paylen - 1, &p->tail, 1, true, &synd);
	else
		st = 0;
	if (!st)
		return true;
	recv_cqe(m, qp, TERN_CQE_RECV, (uint8_t)st, synd, 0, NULL, false);
	if (st == TERN_CQE_LOC_LEN_ERR) {
		ternm_log(m, TERN_MODEL_LOG_INFO,
			  "QP %u: opcode 0x%02x PSN 0x%06x: %u bytes at message offset %u overflow the receive WQE",
			  qp->qpn, p->opcode, p->psn, p->paylen, qp->msg_off);
		TERNM_QSTAT(m, qp, resp_local_length_error, 1);
		inv_req(m, qp, p->psn, "SEND longer than the receive WQE");
	} else {
		resp_fatal(m, qp, p->psn, AETH_NAK_OP, TERN_QP_EV_FATAL);
	}
	return false;
}

/*
 * SEND with invalidate @p, its last packet: the key in its IETH goes, and the receive
 * remembers it for its CQE. Returns false if the key may not be invalidated (the receive
 * completes with an error, the request is NAKed).
 */
static bool resp_rx_send_inv(struct tern_model *m, struct ternm_qp *qp,
			     const struct ternm_pkt *p)
{
	uint8_t synd = (uint8_t)ternm_mr_invalidate(m, qp->pdn, p->ieth);

	if (synd) {
		ternm_log(m, TERN_MODEL_LOG_INFO,
			  "QP %u: PSN 0x%06x: SEND with invalidate of key 0x%08x, which cannot be invalidated",
			  qp->qpn, p->psn, p->ieth);
		recv_cqe(m, qp, TERN_CQE_RECV, TERN_CQE_REM_INV_REQ_ERR, TERN_SYND_INV_RKEY,
			 qp->msg_off, NULL, false);
		inv_req(m, qp, p->psn, "SEND with invalidate of a key it may not");
		return false;
	}
	qp->rqe_inv = true;
	qp->rqe_inv_key = p->ieth;
	return true;
}

/* A SEND packet at the expected PSN: true if it was taken (else it was answered). */
static bool resp_rx_send(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	bool first = is_first_or_only(p->opcode), last = is_last_or_only(p->opcode);
	const uint8_t *imm = pkt_imm(p);
	int st;

	if (first)
		m->rdma->stats.rx_send_requests++;
	st = ternm_rqe_fetch(m, qp);
	if (st > 0) {
		resp_rnr(m, qp, p);
		return false;
	}
	if (first)
		qp->msg_off = 0;
	if (st < 0) {
		rqe_bad(m, qp, p->psn, st, TERN_CQE_RECV);
		return false;
	}
	if (!resp_rx_send_place(m, qp, p, last))
		return false;
	qp->msg_off += p->paylen;
	qp->msg = RQ_MSG_SEND;
	/* SEND with invalidate: the key goes, then the receive completes */
	if (last && p->inv && !resp_rx_send_inv(m, qp, p))
		return false;
	if (last) {
		recv_cqe(m, qp, imm ? TERN_CQE_RECV_IMM : TERN_CQE_RECV, TERN_CQE_OK, 0,
			 qp->msg_off, imm, p->se);
		qp->msg = RQ_MSG_NONE;
		qp->msn = psn_add(qp->msn, 1);
	}
	return true;
}

/* The first packet of WRITE @p: its RETH, checked, is where the message goes. */
static bool resp_rx_write_first(struct tern_model *m, struct ternm_qp *qp,
				const struct ternm_pkt *p)
{
	bool too_long;

	m->rdma->stats.rx_write_requests++;
	if (!write_reth_ok(m, qp, p, &too_long)) {
		if (too_long)
			inv_req(m, qp, p->psn, "WRITE length above max_msg_size");
		else
			access_err(m, qp, p->psn);
		return false;
	}
	write_begin(qp, p);
	return true;
}

/*
 * The payload of WRITE packet @p into the MR at msg_off (of one placed after a gap, only
 * its final byte, when it is the last). Returns non-zero if the memory failed.
 */
static int resp_rx_write_copy(struct tern_model *m, struct ternm_qp *qp,
			      const struct ternm_pkt *p, bool last)
{
	if (p->placed)
		return last && ternm_mr_copy(m, qp->wr_rkey, qp->wr_va + qp->msg_off + p->paylen - 1,
					     (void *)(uintptr_t)&p->tail, 1, true, true);
	return p->paylen && ternm_mr_copy(m, qp->wr_rkey, qp->wr_va + qp->msg_off,
					  (void *)(uintptr_t)p->payload, p->paylen, true, last);
}

/* A WRITE packet at the expected PSN: true if it was taken (else it was answered). */
static bool resp_rx_write(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	bool first = is_first_or_only(p->opcode), last = is_last_or_only(p->opcode);
	const uint8_t *imm = pkt_imm(p);
	int st;

	if (first && !resp_rx_write_first(m, qp, p))
		return false;
	if (!write_bounds_ok(qp, p, last)) {
		inv_req(m, qp, p->psn, "WRITE payload beyond its RETH length");
		return false;
	}
	if (imm) {
		st = ternm_rqe_fetch(m, qp);
		if (st > 0) {
			resp_rnr(m, qp, p);
			return false;
		}
		if (st < 0) {
			rqe_bad(m, qp, p->psn, st, TERN_CQE_RECV_RDMA_WRITE_IMM);
			return false;
		}
	}
	if (!write_mr_still_ok(m, qp, p, first)) {
		access_err(m, qp, p->psn);
		return false;
	}
	if (resp_rx_write_copy(m, qp, p, last)) {
		/* the MR was fine when checked: its memory failed (or it went away) */
		resp_fatal(m, qp, p->psn, AETH_NAK_OP, TERN_QP_EV_FATAL);
		return false;
	}
	qp->msg_off += p->paylen;
	qp->msg = RQ_MSG_WRITE;
	if (last) {
		if (imm)
			recv_cqe(m, qp, TERN_CQE_RECV_RDMA_WRITE_IMM, TERN_CQE_OK, 0, qp->wr_len,
				 imm, p->se);
		qp->msg = RQ_MSG_NONE;
		qp->msn = psn_add(qp->msn, 1);
	}
	return true;
}

void ternm_resp_rx(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	if (qp->state == TERN_QPS_ERR)
		return;
	if (qp->state == TERN_QPS_RTR && !qp->comm_est) {
		qp->comm_est = true;
		ternm_qp_event(m, qp, TERN_QP_EV_COMM_EST);
	}
	if (qp->type == TERN_QPT_UC) {
		resp_uc_rx(m, qp, p);
		return;
	}
	if (qp->sr && ternm_sr_resp_rx(m, qp, p))
		return;			/* selective repeat (rdma_sr.c) */
	if (!resp_check_psn(m, qp, p) || !resp_check_op(m, qp, p))
		return;
	if (p->opcode == IBOP_READ_REQ) {
		resp_read(m, qp, p);
		return;
	}
	if (is_atomic_req(p->opcode)) {
		resp_atomic(m, qp, p);
		return;
	}
	if (p->opcode <= IBOP_SEND_ONLY_IMM ? !resp_rx_send(m, qp, p) : !resp_rx_write(m, qp, p))
		return;
	qp->epsn = psn_add(qp->epsn, 1);
	if (p->ackreq)
		fifo_push(m, qp, RESP_ACK, AETH_ACK, p->psn, 0);
}

/* ---- sending responses ------------------------------------------------------------------------- */

static void send_aeth(struct tern_model *m, struct ternm_qp *qp, uint8_t syn, uint32_t psn,
		      uint32_t msn)
{
	uint8_t *x = ternm_pkt_start(m, qp, IBOP_ACK, false, false, psn);

	x[0] = syn;
	x[1] = (uint8_t)(msn >> 16);
	x[2] = (uint8_t)(msn >> 8);
	x[3] = (uint8_t)msn;
	ternm_pkt_send(m, qp, x + AETH_LEN);
}

/*
 * Send the ACKs and NAKs at the head of the responder's queue now, before the QP is destroyed,
 * reset or moved to error: the peer must learn that the messages it already completed here
 * arrived (software may have seen their receive completions and torn the QP down since), or it
 * retransmits into a QP that no longer answers. READ responses queued behind are not sent.
 */
void ternm_resp_flush_acks(struct tern_model *m, struct ternm_qp *qp)
{
	if (qp->state < TERN_QPS_RTR || qp->state > TERN_QPS_SQD)
		return;
	while (qp->fifo_count && qp->fifo[qp->fifo_head].type != RESP_READ)
		if (!ternm_resp_send(m, qp, 1))
			break;
}

/* READ @res cannot go on: NAK @syndrome at its next packet, the QP to ERR with event @ev. */
static void read_abort(struct tern_model *m, struct ternm_qp *qp, struct ternm_rd_res *res,
		       uint8_t syndrome, uint8_t ev)
{
	res->busy = false;
	fifo_pop(qp);
	send_aeth(m, qp, syndrome, psn_add(res->first_psn, res->next), res->msn);
	ternm_qp_to_err(m, qp);
	ternm_qp_event(m, qp, ev);
}

unsigned int ternm_resp_send(struct tern_model *m, struct ternm_qp *qp, unsigned int budget)
{
	unsigned int sent = 0;

	while (sent < budget && qp->fifo_count) {
		struct ternm_resp_item *it = &qp->fifo[qp->fifo_head];
		struct ternm_rd_res *res;
		uint32_t off, n, psn;
		uint8_t op, *x;
		size_t len;

		if (qp->state == TERN_QPS_RESET) {
			qp->fifo_count = 0;
			break;
		}
		if (it->type == RESP_SACK) {
			fifo_pop(qp);
			ternm_sr_send_sack(m, qp);	/* rdma_sr.c */
			sent++;
			continue;
		}
		if (it->type != RESP_READ) {
			if (it->syndrome == AETH_NAK_SEQ)
				TERNM_QSTAT(m, qp, seq_err_naks_sent, 1);
			else if ((it->syndrome & 0xe0) == AETH_RNR_NAK)
				TERNM_QSTAT(m, qp, rnr_naks_sent, 1);
			send_aeth(m, qp, it->syndrome, it->psn, it->msn);
			fifo_pop(qp);
			sent++;
			continue;
		}
		res = &qp->rd[it->res];
		if (!res->valid || res->first_psn != it->psn) {
			fifo_pop(qp);	/* its READ was overwritten by a newer one */
			continue;
		}
		if (qp->state == TERN_QPS_ERR || !res->busy) {
			res->busy = false;
			fifo_pop(qp);
			continue;
		}
		if (res->atomic) {
			x = ternm_pkt_start(m, qp, IBOP_ATOMIC_ACK, false, false, res->first_psn);
			x[0] = AETH_ACK;
			put_be24(x + 1, res->msn);
			x += AETH_LEN;
			put_be64(x, res->orig);
			res->busy = false;
			fifo_pop(qp);
			ternm_pkt_send(m, qp, x + ATOMIC_ACK_LEN);
			sent++;
			continue;
		}
		if (!ternm_hpcc_rsp_gate(m, qp, psn_add(res->first_psn, res->next))) {
			qp->tx_block = TX_PACE;	/* HPCC window full: a RESP_ECHO wakes it */
			break;
		}
		if (!ternm_tx_gate(m, qp, qp->path))
			break;		/* paced (timer list) or the MAC is busy: retried later */
		if (res->npkts == 1)
			op = IBOP_READ_RESP_ONLY;
		else if (res->next == 0)
			op = IBOP_READ_RESP_FIRST;
		else if (res->next == res->npkts - 1)
			op = IBOP_READ_RESP_LAST;
		else
			op = IBOP_READ_RESP_MIDDLE;
		/* res->mtu, not the QP's: npkts was counted with it (SQD->SQD may change it) */
		off = res->next * res->mtu;
		n = res->next == res->npkts - 1 ? res->len - off : res->mtu;
		psn = psn_add(res->first_psn, res->next);
		x = ternm_pkt_start(m, qp, op, false, false, psn);
		if (op != IBOP_READ_RESP_MIDDLE) {
			x[0] = AETH_ACK;
			x[1] = (uint8_t)(res->msn >> 16);
			x[2] = (uint8_t)(res->msn >> 8);
			x[3] = (uint8_t)res->msn;
			x += AETH_LEN;
		}
		/* the MR as it is now, not as it was at the request (as for WRITEs) */
		if (n && ternm_mr_check(m, res->rkey, qp, TERN_ACCESS_REMOTE_READ,
					res->va + off, n)) {
			TERNM_QSTAT(m, qp, resp_remote_access_errors, 1);
			read_abort(m, qp, res, AETH_NAK_ACCESS, TERN_QP_EV_ACCESS_ERR);
			sent++;
			continue;
		}
		if (n && ternm_mr_copy(m, res->rkey, res->va + off, x, n, false, false)) {
			/* its memory faults */
			read_abort(m, qp, res, AETH_NAK_OP, TERN_QP_EV_FATAL);
			sent++;
			continue;
		}
		res->next++;
		while (res->next >= res->stop && (res->nholes || res->resume_stop))
			resp_sr_next(res);	/* the hole asked for is served */
		if (res->next >= res->stop) {
			res->busy = false;
			fifo_pop(qp);
		}
		len = ternm_pkt_send(m, qp, x + n);
		ternm_cc_sent(m, qp, len);
		if (len)
			ternm_hpcc_rsp_sent(m, qp, psn);
		sent++;
	}
	return sent;
}

/* ---- for selective repeat (rdma_sr.c) ------------------------------------------------------ */

/* Queue an output; false if the FIFO is full (a SACK is then not queued: the next one is). */
bool ternm_resp_push(struct tern_model *m, struct ternm_qp *qp, uint8_t type, uint8_t syn,
		     uint32_t psn)
{
	if (type == RESP_SACK && qp->fifo_count == TERNM_RESP_FIFO)
		return false;
	fifo_push(m, qp, type, syn, psn, 0);
	return true;
}

void ternm_resp_send_aeth(struct tern_model *m, struct ternm_qp *qp, uint8_t syn, uint32_t psn,
			  uint32_t msn)
{
	send_aeth(m, qp, syn, psn, msn);
}

/* ---- UD/GSI receive (rdma_ud.c): the same receive WQEs and CQEs as an RC SEND ------------ */

/* The whole message (GRH area and payload) in one go: a UD receive is one packet. */
int ternm_ud_rqe_place(struct tern_model *m, struct ternm_qp *qp, const uint8_t *buf, uint32_t n,
		       uint8_t *synd)
{
	return rqe_place(m, qp, 0, buf, n, true, synd);
}

void ternm_ud_recv_cqe(struct tern_model *m, struct ternm_qp *qp, uint8_t opcode, uint8_t status,
		       uint8_t synd, uint32_t len, const uint8_t *imm, bool se, uint8_t flags,
		       uint32_t src_qpn)
{
	qp->ud_cqe_flags = flags;
	qp->ud_src_qpn = src_qpn;
	recv_cqe(m, qp, opcode, status, synd, len, imm, se);
	qp->ud_cqe_flags = 0;
	qp->ud_src_qpn = 0;
}
