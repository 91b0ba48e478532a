// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern_ib: the kernel data path, for kernel consumers (the MAD layer, the IB CM, rdma_cm
 * and kernel ULPs such as NVMe-oF and NFS over RDMA). post_send, post_recv and
 * post_srq_recv write WQEs into the rings of kernel QPs and SRQs (coherent DMA memory,
 * allocated by qp.c and srq.c) and ring their doorbells on the driver's own UAR page; poll_cq
 * (cq.c) frees the slots again. User QPs and SRQs have their data path in the provider.
 * Locking: tern_ib.h.
 */

#include <linux/io.h>
#include <rdma/ib_verbs.h>

#include "tern_ib.h"

static void *tern_ib_kq_slot(struct tern_ib_kq *q, u16 idx)
{
	return q->buf.va + ((size_t)(idx & ((1u << q->log_depth) - 1)) << q->log_stride);
}

static bool tern_ib_kq_full(struct tern_ib_kq *q)
{
	/* Pairs with poll_cq's smp_store_release(): its reads of the slots are done. */
	return (u16)(q->pi - smp_load_acquire(&q->ci)) >= (1u << q->log_depth);
}

/*
 * Ring a kernel QP's or SRQ's doorbell (@offset: TERN_UDB_SQ, _RQ or _SRQ; @num: the QPN or
 * SRQN): the WQEs (coherent memory) are ordered before it by writeq.
 */
static void tern_ib_kq_doorbell(struct tern_ib_dev *dev, unsigned int offset, u32 num, u16 pi)
{
	writeq(tern_udb_wq(num, pi), dev->kdb + offset);
}

#define TERN_IB_SEND_FLAGS	(IB_SEND_SIGNALED | IB_SEND_SOLICITED | IB_SEND_FENCE | \
				 IB_SEND_INLINE)

static int tern_ib_wqe_opcode(struct tern_ib_dev *dev, struct tern_ib_qp *qp,
			      enum ib_wr_opcode op, u8 *opcode)
{
	switch (op) {
	case IB_WR_SEND:
		*opcode = TERN_WQE_SEND;
		return 0;
	case IB_WR_SEND_WITH_IMM:
		*opcode = TERN_WQE_SEND_IMM;
		return 0;
	default:
		break;
	}
	if (tern_ib_qpt_ud(qp->type))
		return -EINVAL;
	switch (op) {
	case IB_WR_RDMA_WRITE:
		*opcode = TERN_WQE_RDMA_WRITE;
		return 0;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		*opcode = TERN_WQE_RDMA_WRITE_IMM;
		return 0;
	default:
		break;
	}
	if (op == IB_WR_REG_MR || op == IB_WR_LOCAL_INV) {
		*opcode = op == IB_WR_REG_MR ? TERN_WQE_REG_MR : TERN_WQE_LOCAL_INV;
		return tern_ib_has_cap(dev, TERN_RDMA_CAP_MEM_MGT) ? 0 : -EINVAL;
	}
	if (qp->type != TERN_QPT_RC)
		return -EINVAL;		/* UC: no READ, no atomics, no SEND with invalidate */
	switch (op) {
	case IB_WR_SEND_WITH_INV:
		*opcode = TERN_WQE_SEND_INV;
		return tern_ib_has_cap(dev, TERN_RDMA_CAP_MEM_MGT) ? 0 : -EINVAL;
	case IB_WR_RDMA_READ:
		*opcode = TERN_WQE_RDMA_READ;
		return 0;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		*opcode = TERN_WQE_ATOMIC_CMP_SWP;
		break;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		*opcode = TERN_WQE_ATOMIC_FETCH_ADD;
		break;
	default:
		return -EINVAL;
	}
	return tern_ib_has_cap(dev, TERN_RDMA_CAP_ATOMIC) ? 0 : -EINVAL;
}

/*
 * The rest of a REG_MR or LOCAL_INV WQE (@wqe: its header, zeroed, wr_id set): the key and,
 * for REG_MR, the MR's page list as .map_mr_sg left it (struct tern_reg_mr_seg).
 */
static int tern_ib_build_local_wqe(struct tern_ib_qp *qp, const struct ib_send_wr *wr,
				   u8 opcode, struct tern_sq_wqe *wqe, u32 room)
{
	const struct ib_reg_wr *reg = reg_wr(wr);
	struct tern_reg_mr_seg *seg = (void *)(wqe + 1);
	struct tern_ib_mr *mr;

	if (wr->num_sge || (wr->send_flags & IB_SEND_INLINE))
		return -EINVAL;
	if (opcode == TERN_WQE_LOCAL_INV) {
		wqe->rkey = cpu_to_le32(wr->ex.invalidate_rkey);
		return 0;
	}
	mr = to_tmr(reg->mr);
	if (!mr->fr_max || !mr->fr_n || sizeof(*seg) > room ||
	    !is_power_of_2(reg->mr->page_size) || reg->mr->page_size < SZ_4K ||
	    (reg->access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			     IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |
			     IB_ACCESS_RELAXED_ORDERING)) ||
	    (reg->key >> 8) != (reg->mr->lkey >> 8))
		return -EINVAL;
	wqe->rkey = cpu_to_le32(reg->key);
	memset(seg, 0, sizeof(*seg));
	seg->iova = cpu_to_le64(reg->mr->iova);
	seg->length = cpu_to_le64(reg->mr->length);
	seg->pbl_addr = cpu_to_le64(mr->fr_list.dma);
	seg->npages = cpu_to_le32(mr->fr_n);
	seg->page_shift = ilog2(reg->mr->page_size);
	seg->access = tern_ib_access_to_hw(reg->access);
	return 0;
}

/* The WQE's flags for @wr's send flags (inline is added with the data). */
static u8 tern_ib_send_wqe_flags(struct tern_ib_qp *qp, const struct ib_send_wr *wr, u8 opcode)
{
	u8 flags = 0;

	if ((wr->send_flags & IB_SEND_SIGNALED) || qp->sig_all)
		flags |= TERN_WQE_F_SIGNALED;
	if ((wr->send_flags & IB_SEND_SOLICITED) && tern_wqe_op_solicits(opcode))
		flags |= TERN_WQE_F_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		flags |= TERN_WQE_F_FENCE;
	return flags;
}

/*
 * The remote side of the WQE: the UD destination or the atomic operands between header and
 * data, or the RDMA address and key in the header. Returns where the data goes, less what
 * it used of *@room, or NULL when @wr is invalid.
 */
static void *tern_ib_build_remote(struct tern_ib_qp *qp, const struct ib_send_wr *wr,
				  u8 opcode, struct tern_sq_wqe *wqe, u32 *room)
{
	if (tern_ib_qpt_ud(qp->type)) {
		const struct ib_ud_wr *ud = ud_wr(wr);
		struct tern_ud_seg *us = (void *)(wqe + 1);

		if (!ud->ah || ud->remote_qpn > TERN_UDB_OBJ_MASK)
			return NULL;
		memset(us, 0, sizeof(*us));
		us->path = to_tah(ud->ah)->path;
		us->dest_qpn = cpu_to_le32(ud->remote_qpn);
		us->qkey = cpu_to_le32(ud->remote_qkey);
		*room -= sizeof(*us);
		return us + 1;
	}
	if (tern_wqe_op_atomic(opcode)) {
		const struct ib_atomic_wr *at = atomic_wr(wr);
		struct tern_atomic_seg *as = (void *)(wqe + 1);

		/* One 8-byte SGE receives the original value. */
		if (wr->num_sge != 1 || wr->sg_list[0].length != sizeof(u64) ||
		    (wr->send_flags & IB_SEND_INLINE))
			return NULL;
		wqe->rkey = cpu_to_le32(at->rkey);
		wqe->remote_addr = cpu_to_le64(at->remote_addr);
		if (opcode == TERN_WQE_ATOMIC_CMP_SWP) {
			as->swap_add = cpu_to_le64(at->swap);
			as->compare = cpu_to_le64(at->compare_add);
		} else {
			as->swap_add = cpu_to_le64(at->compare_add);
			as->compare = 0;
		}
		*room -= sizeof(*as);
		return as + 1;
	}
	if (opcode != TERN_WQE_SEND && opcode != TERN_WQE_SEND_IMM &&
	    opcode != TERN_WQE_SEND_INV) {
		wqe->rkey = cpu_to_le32(rdma_wr(wr)->rkey);
		wqe->remote_addr = cpu_to_le64(rdma_wr(wr)->remote_addr);
	}
	return wqe + 1;
}

/* Copy @wr's data into the slot at @seg: inline (kernel virtual addresses) or as SGEs. */
static int tern_ib_build_data(struct tern_ib_qp *qp, const struct ib_send_wr *wr, u8 opcode,
			      struct tern_sq_wqe *wqe, void *seg, u32 room)
{
	struct tern_sge *sge = seg;
	u32 len = 0;
	int i;

	if (wr->send_flags & IB_SEND_INLINE) {
		if (opcode == TERN_WQE_RDMA_READ)
			return -EINVAL;
		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length > qp->cap.max_inline_data - len)
				return -EINVAL;
			memcpy(seg + len, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		wqe->inline_len = cpu_to_le32(len);
		return 0;
	}
	if (wr->num_sge > qp->ksq.max_sge || wr->num_sge * sizeof(struct tern_sge) > room)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = cpu_to_le64(wr->sg_list[i].addr);
		sge[i].length = cpu_to_le32(wr->sg_list[i].length);
		sge[i].lkey = cpu_to_le32(wr->sg_list[i].lkey);
	}
	wqe->num_sge = wr->num_sge;
	return 0;
}

/* Build one send WQE at the SQ's producer index. Caller holds ksq.lock and found room. */
static int tern_ib_build_send_wqe(struct tern_ib_dev *dev, struct tern_ib_qp *qp,
				  const struct ib_send_wr *wr)
{
	struct tern_sq_wqe *wqe = tern_ib_kq_slot(&qp->ksq, qp->ksq.pi);
	u32 room = (1u << qp->ksq.log_stride) - sizeof(*wqe);
	u8 opcode, flags;
	void *seg;
	int err;

	err = tern_ib_wqe_opcode(dev, qp, wr->opcode, &opcode);
	if (err)
		return err;
	if (wr->send_flags & ~TERN_IB_SEND_FLAGS || wr->num_sge < 0)
		return -EINVAL;
	flags = tern_ib_send_wqe_flags(qp, wr, opcode);

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = cpu_to_le64(wr->wr_id);
	if (opcode == TERN_WQE_SEND_IMM || opcode == TERN_WQE_RDMA_WRITE_IMM)
		wqe->imm_data = wr->ex.imm_data;
	if (opcode == TERN_WQE_SEND_INV)
		wqe->rkey = cpu_to_le32(wr->ex.invalidate_rkey);
	if (opcode == TERN_WQE_REG_MR || opcode == TERN_WQE_LOCAL_INV) {
		err = tern_ib_build_local_wqe(qp, wr, opcode, wqe, room);
		if (err)
			return err;
		wqe->flags = flags & (TERN_WQE_F_SIGNALED | TERN_WQE_F_FENCE);
		wqe->opcode = opcode;
		return 0;
	}

	seg = tern_ib_build_remote(qp, wr, opcode, wqe, &room);
	if (!seg)
		return -EINVAL;
	err = tern_ib_build_data(qp, wr, opcode, wqe, seg, room);
	if (err)
		return err;
	if (wr->send_flags & IB_SEND_INLINE)
		flags |= TERN_WQE_F_INLINE;
	wqe->flags = flags;
	wqe->opcode = opcode;
	return 0;
}

/**
 * tern_ib_post_send() - post send work requests on a kernel QP
 * @ibqp: the QP
 * @wr: the first work request
 * @bad_wr: set to the first request not posted, on error
 *
 * Any context. RC: SEND, SEND_WITH_IMM, RDMA_WRITE(_WITH_IMM), RDMA_READ and, on a device
 * with atomics, ATOMIC_CMP_AND_SWP and ATOMIC_FETCH_AND_ADD; with fast registration
 * (TERN_RDMA_CAP_MEM_MGT) SEND_WITH_INV, and REG_MR and LOCAL_INV on RC and UC; UD and
 * GSI: SEND and SEND_WITH_IMM to the AH, remote QPN and Q_Key of each request.
 *
 * Return: 0, -EINVAL for a QP not yet in RTS (nor SQD, SQE, ERR) or a malformed request,
 * -ENOMEM when the send queue is full.
 */
int tern_ib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr)
{
	struct tern_ib_dev *dev = to_tibdev(ibqp->device);
	struct tern_ib_qp *qp = to_tqp(ibqp);
	enum ib_qp_state state;
	unsigned long flags;
	int err = 0;
	u16 pi0;

	if (!qp->kernel) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	spin_lock_irqsave(&qp->ksq.lock, flags);
	pi0 = qp->ksq.pi;
	state = READ_ONCE(qp->state);
	if (state == IB_QPS_RESET || state == IB_QPS_INIT || state == IB_QPS_RTR) {
		err = -EINVAL;
		*bad_wr = wr;
		goto out;
	}
	for (; wr; wr = wr->next) {
		if (tern_ib_kq_full(&qp->ksq)) {
			err = -ENOMEM;
			*bad_wr = wr;
			break;
		}
		err = tern_ib_build_send_wqe(dev, qp, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
		qp->ksq.pi++;
	}
	if (qp->ksq.pi != pi0)
		tern_ib_kq_doorbell(dev, TERN_UDB_SQ, qp->qpn, qp->ksq.pi);
out:
	spin_unlock_irqrestore(&qp->ksq.lock, flags);
	return err;
}

/**
 * tern_ib_fill_rq_wqe() - write a receive WQE (RQ or SRQ ring slot) from a work request
 * @wqe: the slot, with room for @wr's SGEs (the caller checked num_sge against its max_sge)
 * @wr: the work request
 */
static void tern_ib_fill_rq_wqe(struct tern_rq_wqe *wqe, const struct ib_recv_wr *wr)
{
	struct tern_sge *sge = (struct tern_sge *)(wqe + 1);
	int i;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = cpu_to_le64(wr->wr_id);
	wqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = cpu_to_le64(wr->sg_list[i].addr);
		sge[i].length = cpu_to_le32(wr->sg_list[i].length);
		sge[i].lkey = cpu_to_le32(wr->sg_list[i].lkey);
	}
}

/**
 * tern_ib_post_recv() - post receive work requests on a kernel QP
 * @ibqp: the QP
 * @wr: the first work request
 * @bad_wr: set to the first request not posted, on error
 *
 * Any context. On UD and GSI QPs the first 40 bytes of each receive get the packet's
 * network header (the GRH area).
 *
 * Return: 0, -EINVAL for a QP in RESET or on an SRQ (ib_post_srq_recv() feeds it) or too
 * many SGEs, -ENOMEM when the receive queue is full.
 */
int tern_ib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct tern_ib_dev *dev = to_tibdev(ibqp->device);
	struct tern_ib_qp *qp = to_tqp(ibqp);
	struct tern_rq_wqe *wqe;
	unsigned long flags;
	int err = 0;
	u16 pi0;

	if (!qp->kernel) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	if (ibqp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->krq.lock, flags);
	pi0 = qp->krq.pi;
	if (READ_ONCE(qp->state) == IB_QPS_RESET) {
		err = -EINVAL;
		*bad_wr = wr;
		goto out;
	}
	for (; wr; wr = wr->next) {
		if (tern_ib_kq_full(&qp->krq)) {
			err = -ENOMEM;
			*bad_wr = wr;
			break;
		}
		if (wr->num_sge < 0 || wr->num_sge > qp->krq.max_sge) {
			err = -EINVAL;
			*bad_wr = wr;
			break;
		}
		wqe = tern_ib_kq_slot(&qp->krq, qp->krq.pi);
		tern_ib_fill_rq_wqe(wqe, wr);
		qp->krq.pi++;
	}
	if (qp->krq.pi != pi0)
		tern_ib_kq_doorbell(dev, TERN_UDB_RQ, qp->qpn, qp->krq.pi);
out:
	spin_unlock_irqrestore(&qp->krq.lock, flags);
	return err;
}

/**
 * tern_ib_srq_complete() - a receive WQE of a kernel SRQ has completed
 * @srq: the kernel SRQ of the QP whose receive CQE was consumed (or invalidated)
 *
 * Any context; called under the lock of the CQ that held the CQE. The device takes an SRQ's
 * WQEs in ring order, so the oldest slot in use is free again, whichever QP completed.
 */
void tern_ib_srq_complete(struct tern_ib_srq *srq)
{
	/* Pairs with post_srq_recv's atomic_read_acquire(): the slot is no longer read. */
	atomic_inc_return_release(&srq->done);
}

/**
 * tern_ib_post_srq_recv() - post receive work requests on a kernel SRQ
 * @ibsrq: the SRQ
 * @wr: the first work request
 * @bad_wr: set to the first request not posted, on error
 *
 * Any context.
 *
 * Return: 0, -EINVAL for too many SGEs or a user SRQ, -ENOMEM when the SRQ is full.
 */
int tern_ib_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	struct tern_ib_dev *dev = to_tibdev(ibsrq->device);
	struct tern_ib_srq *srq = to_tsrq(ibsrq);
	struct tern_rq_wqe *wqe;
	unsigned long flags;
	int err = 0;
	u16 pi0;

	if (!srq->kernel) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->klock, flags);
	pi0 = srq->pi;
	for (; wr; wr = wr->next) {
		if ((u16)(srq->pi - (u16)atomic_read_acquire(&srq->done)) >= srq->max_wr) {
			err = -ENOMEM;
			*bad_wr = wr;
			break;
		}
		if (wr->num_sge < 0 || wr->num_sge > srq->max_sge) {
			err = -EINVAL;
			*bad_wr = wr;
			break;
		}
		wqe = srq->kbuf.va + ((size_t)(srq->pi & ((1u << srq->log_depth) - 1)) <<
				      srq->log_stride);
		tern_ib_fill_rq_wqe(wqe, wr);
		srq->pi++;
	}
	if (srq->pi != pi0)
		tern_ib_kq_doorbell(dev, TERN_UDB_SRQ, srq->srqn, srq->pi);
	spin_unlock_irqrestore(&srq->klock, flags);
	return err;
}
