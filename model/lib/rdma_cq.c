/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: completion queues (CQE writes, the CI record, arming and events).
 *
 * A CQE is written as bytes 0..30, a release fence, then byte 31 (flags with the phase), so
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
 */
#include "rdma.h"

#define ARM_SOL		1
#define ARM_NEXT	2

static void cq_event(struct tern_model *m, struct ternm_cq *cq)
{
	cq->arm = 0;
	ternm_eq_post(m, cq->eqn, TERN_EQE_CQ_COMPLETION, (uint32_t)(cq - m->rdma->cq));
}

static void cq_fail(struct tern_model *m, struct ternm_cq *cq, uint8_t why)
{
	struct ternm_rdma *r = m->rdma;
	uint32_t cqn = (uint32_t)(cq - r->cq);
	unsigned int i;

	cq->err = true;
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
	uint8_t e[sizeof(T)];
	uint64_t off;
	uint8_t flags;

	if (!cq->used || cq->err)
		return;
	if (cq->pi - cq->ci >= depth) {
		uint8_t rec[4];

		if (ternm_mem_read(m, &cq->mem, (uint64_t)sizeof(T) << cq->log_depth, rec, 4)) {
			cq_fail(m, cq, TERN_CQ_ERR_DMA);
			return;
		}
		cq->ci = get_le32(rec);
		if (cq->pi - cq->ci >= depth) {
			cq_fail(m, cq, TERN_CQ_ERR_OVERFLOW);
			return;
		}
	}
	flags = ci->flags | (((cq->pi >> cq->log_depth) & 1) ? 0 : TERN_CQE_F_PHASE);
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
	off = (uint64_t)(cq->pi & (depth - 1)) * sizeof(T);
	if (ternm_mem_write(m, &cq->mem, off, e, offsetof(T, flags))) {
		cq_fail(m, cq, TERN_CQ_ERR_DMA);
		return;
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (ternm_mem_write(m, &cq->mem, off + offsetof(T, flags), e + offsetof(T, flags), 1)) {
		cq_fail(m, cq, TERN_CQ_ERR_DMA);
		return;
	}
	cq->pi++;
	if (cq->arm == ARM_NEXT ||
	    (cq->arm == ARM_SOL && ((ci->flags & TERN_CQE_F_SOLICITED) || ci->status != TERN_CQE_OK)))
		cq_event(m, cq);
}

void ternm_cq_doorbell(struct ternm_cq *cq, uint64_t val)
{
	uint32_t ci = (uint32_t)((val >> TERN_UDB_PI_SHIFT) & TERN_UDB_CI_MASK);

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
