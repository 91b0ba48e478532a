/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: completion queues (CQE writes, the CI record, arming and events).
 *
 * A CQE is written as bytes 0..30 (and 32..63 of a CQ with TERN_CQ_F_TIMESTAMP: the device
 * clock then), a release fence, then byte 31 (flags with the phase), so
 * a vCPU on another host thread that sees the new phase sees the whole entry. Before a CQE
 * would overwrite one software has not consumed, the CI record is re-read; if the ring is
 * really full the CQ goes to error (TERN_CQ_ERR_OVERFLOW on the async EQ, cq_overflows
 * counted), later CQEs are dropped and the CQ's QPs go to ERR. A ring that cannot be written
 * does the same with TERN_CQ_ERR_DMA.
 *
 * Arming: the CQ doorbell carries the consumer index and ARM_NEXT or ARM_SOLICITED. An armed
 * CQ posts one TERN_EQE_CQ_COMPLETION to its EQ and disarms: ARM_NEXT at the next CQE written
 * after the arming, ARM_SOLICITED at the next such CQE that is solicited or has an error
 * status. CQEs already in the ring raise nothing (the verbs' "next completion"): software
 * arms after taking an event and before polling, and an event for the CQE it is about to
 * poll anyway would reach it later as a stale one (perftest's latency loops then poll the
 * wrong CQ). Software that may have missed a CQE polls after arming; the kernel driver
 * answers IB_CQ_REPORT_MISSED_EVENTS by looking at the ring.
 *
 * Moderation (MODIFY_CQ): with a count or a period set, the CQE that fires the arming starts
 * a moderation instead: every CQE written from then on counts, and the event is posted at
 * the max_count-th or period_us after the start, whichever is first. A CQ whose moderation
 * can end by time sits on the rdma cq_timer_head list (singly linked, in no order: it holds
 * only CQs with an event pending, so it stays short); the model's timer walks it.
 */
#include "rdma.h"

#define ARM_SOL		1
#define ARM_NEXT	2

static void cq_timer_remove(struct ternm_rdma *r, struct ternm_cq *cq)
{
	struct ternm_cq **pp;

	if (!cq->on_timer)
		return;
	for (pp = &r->cq_timer_head; *pp; pp = &(*pp)->timer_next) {
		if (*pp == cq) {
			*pp = cq->timer_next;
			break;
		}
	}
	cq->on_timer = false;
	cq->timer_next = NULL;
}

/* No event pending any more: the CQ leaves the timer list. */
static void cq_moder_stop(struct tern_model *m, struct ternm_cq *cq)
{
	cq->moder_n = 0;
	cq_timer_remove(m->rdma, cq);
}

static void cq_event(struct tern_model *m, struct ternm_cq *cq)
{
	cq->arm = 0;
	cq_moder_stop(m, cq);
	ternm_eq_post(m, cq->eqn, TERN_EQE_CQ_COMPLETION, (uint32_t)(cq - m->rdma->cq));
}

static uint64_t cq_moder_deadline(const struct ternm_cq *cq)
{
	return cq->moder_start + (uint64_t)cq->moder_period_us * TERNM_NS_PER_US;
}

/*
 * A moderation under way (moder_n > 0) met its bounds, or must now wait on the timer: the
 * event goes out, or the CQ goes on (or stays on) the timer list.
 */
static void cq_moder_check(struct tern_model *m, struct ternm_cq *cq)
{
	struct ternm_rdma *r = m->rdma;

	if ((!cq->moder_count && !cq->moder_period_us) ||
	    (cq->moder_count && cq->moder_n >= cq->moder_count) ||
	    (cq->moder_period_us && cq_moder_deadline(cq) <= ternm_now(m))) {
		cq_event(m, cq);
		return;
	}
	if (!cq->moder_period_us) {
		cq_timer_remove(r, cq);
		return;
	}
	if (!cq->on_timer) {
		cq->on_timer = true;
		cq->timer_next = r->cq_timer_head;
		r->cq_timer_head = cq;
	}
	if (cq_moder_deadline(cq) < m->timer_armed_ns)
		ternm_timer_update(m);
}

uint64_t ternm_cq_next_deadline(const struct tern_model *m)
{
	const struct ternm_cq *cq;
	uint64_t next = TERNM_NO_DEADLINE;

	for (cq = m->rdma->cq_timer_head; cq; cq = cq->timer_next)
		if (cq_moder_deadline(cq) < next)
			next = cq_moder_deadline(cq);
	return next;
}

void ternm_cq_timer(struct tern_model *m, uint64_t now)
{
	struct ternm_cq *cq = m->rdma->cq_timer_head, *next;

	while (cq) {
		next = cq->timer_next;
		/* cq_event unlinks only @cq itself: @next stays on the list */
		if (cq_moder_deadline(cq) <= now)
			cq_event(m, cq);
		cq = next;
	}
}

/* The CQ goes away or into error: no event stays pending. */
void ternm_cq_cancel(struct tern_model *m, struct ternm_cq *cq)
{
	cq->arm = 0;
	cq_moder_stop(m, cq);
}

static void cq_fail(struct tern_model *m, struct ternm_cq *cq, uint8_t why)
{
	struct ternm_rdma *r = m->rdma;
	uint32_t cqn = (uint32_t)(cq - r->cq);
	unsigned int i;

	cq->err = true;
	ternm_cq_cancel(m, cq);
	if (why == TERN_CQ_ERR_OVERFLOW)
		r->stats.cq_overflows++;
	ternm_log(m, TERN_MODEL_LOG_WARN, "CQ %u %s: CQ in error", cqn,
		  why == TERN_CQ_ERR_OVERFLOW ? "overflow" : "ring unreachable");
	ternm_eq_post_flag_sub(m, TERN_EQ_F_ASYNC, TERN_EQE_CQ_ERROR, why, cqn);
	for (i = 0; i < TERNM_MAX_QP; i++) {
		struct ternm_qp *qp = r->qp[i];

		if (qp && (qp->scqn == cqn || qp->rcqn == cqn) && qp->state != TERN_QPS_ERR &&
		    qp->state != TERN_QPS_RESET) {
			ternm_qp_to_err(m, qp);
			ternm_qp_event(m, qp, TERN_QP_EV_FATAL);
		}
	}
}

void ternm_cq_write(struct tern_model *m, struct ternm_qp *qp, uint32_t cqn,
		    const struct ternm_cqe_info *ci)
{
	typedef struct tern_cqe T;
	struct ternm_cq *cq = &m->rdma->cq[cqn];
	uint32_t depth = 1u << cq->log_depth;
	uint8_t e[sizeof(struct tern_cqe_ts)];
	uint64_t sz = cq->cqe_size;
	uint64_t off;
	uint8_t flags;

	if (!cq->used || cq->err)
		return;
	if (cq->pi - cq->ci >= depth) {
		uint8_t rec[4];

		if (ternm_mem_read(m, &cq->mem, sz << cq->log_depth, rec, 4)) {
			cq_fail(m, cq, TERN_CQ_ERR_DMA);
			return;
		}
		cq->ci = get_le32(rec);
		if (cq->pi - cq->ci >= depth) {
			cq_fail(m, cq, TERN_CQ_ERR_OVERFLOW);
			return;
		}
	}
	flags = ci->flags | tern_cqe_phase(cq->pi, cq->log_depth);
	memset(e, 0, sizeof(e));
	put_le64(FLD(e, T, wr_id), ci->wr_id);
	put_le32(FLD(e, T, byte_len), ci->byte_len);
	memcpy(FLD(e, T, imm_data), ci->imm, 4);
	put_le32(FLD(e, T, qpn), qp->qpn);
	put_le32(FLD(e, T, src_qpn), ci->src_qpn);
	put_le16(FLD(e, T, wqe_idx), ci->wqe_idx);
	e[offsetof(T, opcode)] = ci->opcode;
	e[offsetof(T, status)] = ci->status;
	e[offsetof(T, vendor_err)] = ci->vendor_err;
	e[offsetof(T, flags)] = flags;
	if (sz > sizeof(T))
		put_le64(FLD(e, struct tern_cqe_ts, timestamp), ternm_clock_now(m));
	off = (uint64_t)(cq->pi & (depth - 1)) * sz;
	if (ternm_mem_write(m, &cq->mem, off, e, offsetof(T, flags)) ||
	    (sz > sizeof(T) &&
	     ternm_mem_write(m, &cq->mem, off + sizeof(T), e + sizeof(T), sz - sizeof(T)))) {
		cq_fail(m, cq, TERN_CQ_ERR_DMA);
		return;
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (ternm_mem_write(m, &cq->mem, off + offsetof(T, flags), e + offsetof(T, flags), 1)) {
		cq_fail(m, cq, TERN_CQ_ERR_DMA);
		return;
	}
	cq->pi++;
	if (cq->moder_n) {
		if (cq->moder_n < UINT32_MAX)
			cq->moder_n++;
		cq_moder_check(m, cq);
	} else if (cq->arm == ARM_NEXT ||
		   (cq->arm == ARM_SOL &&
		    ((ci->flags & TERN_CQE_F_SOLICITED) || ci->status != TERN_CQE_OK))) {
		cq->moder_n = 1;
		cq->moder_start = ternm_now(m);
		cq_moder_check(m, cq);
	}
}

/* MODIFY_CQ: see struct tern_cmd_modify_cq_in. @cq is in use. */
int ternm_cq_modify(struct tern_model *m, struct ternm_cq *cq, const uint8_t *in,
		    uint32_t *syndrome)
{
	typedef struct tern_cmd_modify_cq_in T;
	uint16_t count = get_le16(CFLD(in, T, max_count));
	uint16_t period = get_le16(CFLD(in, T, period_us));

	if (count > TERNM_MAX_CQ_MODER_COUNT) {
		*syndrome = offsetof(T, max_count);
		return TERN_CMD_BAD_PARAM;
	}
	if (period > TERNM_MAX_CQ_MODER_PERIOD) {
		*syndrome = offsetof(T, period_us);
		return TERN_CMD_BAD_PARAM;
	}
	if (get_le32(CFLD(in, T, rsvd))) {
		*syndrome = offsetof(T, rsvd);
		return TERN_CMD_BAD_PARAM;
	}
	if (cq->err) {
		*syndrome = offsetof(T, cqn);
		return TERN_CMD_BAD_STATE;
	}
	cq->moder_count = count;
	cq->moder_period_us = period;
	if (cq->moder_n)
		cq_moder_check(m, cq);
	return TERN_CMD_OK;
}

void ternm_cq_doorbell(struct ternm_cq *cq, uint64_t val)
{
	uint32_t ci = tern_udb_ci(val);

	cq->db_ci = ci;
	if (cq->err)
		return;
	if (val & TERN_UDB_CQ_ARM_NEXT) {
		cq->arm = ARM_NEXT;
	} else if (val & TERN_UDB_CQ_ARM_SOLICITED) {
		if (cq->arm != ARM_NEXT)
			cq->arm = ARM_SOL;
	}
}
