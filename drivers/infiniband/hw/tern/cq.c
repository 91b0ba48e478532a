// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern_ib: completion queues. For user CQs the provider allocates the ring and its
 * consumer-index record in one buffer; the driver pins it, creates the CQ bound to the
 * context's UAR and to the completion EQ of the chosen vector, and forwards completion and
 * error events; resize_cq moves a user CQ to a new ring the provider allocated. Kernel CQs
 * have both in coherent DMA memory and are bound to the driver's own UAR; poll_cq turns
 * their CQEs into work completions and req_notify_cq arms them.
 */

#include <linux/io.h>
#include <linux/log2.h>
#include <rdma/restrack.h>
#include <rdma/uverbs_ioctl.h>

#include "tern_ib.h"

/* The CQ an event names, held (tern_ib_obj_put()), or NULL. */
static struct tern_ib_cq *tern_ib_cq_get(struct tern_ib_dev *dev, u32 cqn)
{
	struct tern_ib_obj *obj = tern_ib_obj_get(&dev->cq_xa, cqn);

	return obj ? container_of(obj, struct tern_ib_cq, obj) : NULL;
}

/**
 * tern_ib_comp_event() - an event of a completion EQ
 * @ctx: the struct tern_ib_ceq
 * @eqe: the event
 *
 * From the completion EQ's hard interrupt handler: calls the CQ's completion handler, which
 * the RDMA core allows in hard interrupt context (ib_cq's handlers raise irq_poll or queue
 * work; uverbs' takes an IRQ-safe lock), as mlx5 calls it.
 */
void tern_ib_comp_event(void *ctx, const struct tern_eqe *eqe)
{
	struct tern_ib_ceq *ceq = ctx;
	struct tern_ib_cq *cq;

	if (eqe->type != TERN_EQE_CQ_COMPLETION)
		return;
	cq = tern_ib_cq_get(ceq->dev, le32_to_cpu(eqe->data[0]));
	if (!cq)
		return;		/* destroyed meanwhile */
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	tern_ib_obj_put(&cq->obj);
}

/**
 * tern_ib_cq_event() - a CQ error event of the async EQ
 * @dev: the device
 * @eqe: TERN_EQE_CQ_ERROR
 *
 * From the async EQ's hard interrupt handler: reports
 * IB_EVENT_CQ_ERR to the CQ's owner.
 */
void tern_ib_cq_event(struct tern_ib_dev *dev, const struct tern_eqe *eqe)
{
	u32 cqn = le32_to_cpu(eqe->data[0]);
	struct ib_event ev = { .event = IB_EVENT_CQ_ERR };
	struct tern_ib_cq *cq;

	cq = tern_ib_cq_get(dev, cqn);
	if (!cq)
		return;
	ibdev_warn_ratelimited(&dev->ibdev, "CQ %u error (%s)\n", cqn,
			       eqe->subtype == TERN_CQ_ERR_OVERFLOW ? "overflow" :
			       eqe->subtype == TERN_CQ_ERR_DMA ? "memory unreachable" :
			       "unknown");
	ev.element.cq = &cq->ibcq;
	tern_ib_obj_event(dev, &cq->obj, &ev, cq->ibcq.event_handler, cq->ibcq.cq_context);
}

static int tern_ib_cq_hw_destroy(struct tern_ib_dev *dev, u32 cqn)
{
	struct tern_cmd_destroy_cq_in in = { .cqn = cpu_to_le32(cqn) };

	return tern_ib_cmd(dev, TERN_CMD_DESTROY_CQ, &in, sizeof(in), NULL, 0, NULL);
}

/* Insert a new CQ into cq_xa once the device created it. */
static int tern_ib_cq_publish(struct tern_ib_dev *dev, struct tern_ib_cq *cq, u32 cqn)
{
	cq->cqn = cqn;
	return tern_ib_obj_publish(dev, &dev->cq_xa, &cq->obj, cqn,
				   le32_to_cpu(dev->caps.max_cq), "CQ");
}

/* Bytes of a user CQ's CQE: 64 with completion timestamps (struct tern_cqe_ts), else 32. */
static size_t tern_ib_cqe_size(u8 flags)
{
	return flags & TERN_CREATE_CQ_F_TIMESTAMP ? sizeof(struct tern_cqe_ts) :
						   sizeof(struct tern_cqe);
}

/* The deepest user CQ: 64-byte CQEs take twice the memory, so half as many. */
static u8 tern_ib_cq_max_log(struct tern_ib_dev *dev, u8 flags)
{
	return dev->caps.max_cq_log_depth - (flags & TERN_CREATE_CQ_F_TIMESTAMP ? 1 : 0);
}

static size_t tern_ib_kcq_ring_bytes(const struct tern_ib_cq *cq)
{
	return sizeof(struct tern_cqe) << cq->log_depth;
}

static struct tern_cq_ci_rec *tern_ib_kcq_ci_rec(const struct tern_ib_cq *cq)
{
	return cq->kbuf.va + tern_ib_kcq_ring_bytes(cq);
}

/* Create a kernel CQ: ring and CI record in one coherent buffer, doorbells on the kernel UAR. */
static int tern_ib_create_kernel_cq(struct tern_ib_dev *dev, struct tern_ib_cq *cq,
				    const struct ib_cq_init_attr *attr)
{
	struct tern_cmd_create_cq_in in = {};
	u32 log_depth, cqn;
	int err;

	if (attr->cqe < 1 || attr->cqe > (1u << dev->caps.max_cq_log_depth))
		return -EINVAL;
	log_depth = max_t(u32, order_base_2(attr->cqe), 1);
	cq->log_depth = log_depth;
	spin_lock_init(&cq->lock);
	INIT_LIST_HEAD(&cq->dying);
	cq->ci = 0;
	err = tern_ib_dma_buf_alloc(dev, &cq->kbuf, tern_ib_kcq_ring_bytes(cq) +
				    sizeof(struct tern_cq_ci_rec));
	if (err)
		return err;

	tern_ib_obj_init(&cq->obj);
	tern_ib_dma_buf_desc(&cq->kbuf, &in.mem);
	in.log_depth = log_depth;
	in.eqn = cpu_to_le16(dev->ceqs[attr->comp_vector].eqn);
	in.uar = cpu_to_le16(dev->kuar);
	err = tern_ib_cmd(dev, TERN_CMD_CREATE_CQ, &in, sizeof(in), NULL, 0, &cqn);
	if (err)
		goto err_free;
	err = tern_ib_cq_publish(dev, cq, cqn);
	if (err) {
		if (tern_ib_destroy_failed(dev, "CQ", cqn, tern_ib_cq_hw_destroy(dev, cqn)))
			return err;	/* the device may still write the ring: leak it */
		goto err_free;
	}
	cq->ibcq.cqe = 1 << log_depth;
	return 0;

err_free:
	tern_ib_dma_buf_free(dev, &cq->kbuf);
	return err;
}

/* The CQE at free-running index @idx if the device has written it, else NULL. */
static struct tern_cqe *tern_ib_cqe_valid(struct tern_ib_cq *cq, u32 idx)
{
	struct tern_cqe *ring = cq->kbuf.va;
	struct tern_cqe *cqe = &ring[idx & ((1u << cq->log_depth) - 1)];

	if ((READ_ONCE(cqe->flags) & TERN_CQE_F_PHASE) != tern_cqe_phase(idx, cq->log_depth))
		return NULL;
	/* The device writes the flags byte last: read the rest after it. */
	dma_rmb();
	return cqe;
}

/* A CQE's QPN after tern_ib_cq_clean() invalidated it: no QP has this number. */
#define TERN_IB_CQE_QPN_STALE	0xffffffffu

/* The WQE at slot @wqe_idx is done, and so is every earlier one (queues complete in order). */
static void tern_ib_kq_complete(struct tern_ib_kq *q, u16 wqe_idx)
{
	u16 ci = q->ci;
	u16 delta = (u16)(wqe_idx - ci) & ((1u << q->log_depth) - 1);

	/* Pairs with the poster's smp_load_acquire(): the slots are free once it sees ci. */
	smp_store_release(&q->ci, (u16)(ci + delta + 1));
}

static enum ib_wc_status tern_ib_wc_status(u8 status)
{
	switch (status) {
	case TERN_CQE_OK:
	case TERN_CQE_LOC_LEN_ERR:
	case TERN_CQE_LOC_QP_OP_ERR:
	case TERN_CQE_LOC_PROT_ERR:
	case TERN_CQE_MW_BIND_ERR:
	case TERN_CQE_WR_FLUSH_ERR:
	case TERN_CQE_BAD_RESP_ERR:
	case TERN_CQE_LOC_ACCESS_ERR:
	case TERN_CQE_REM_INV_REQ_ERR:
	case TERN_CQE_REM_ACCESS_ERR:
	case TERN_CQE_REM_OP_ERR:
	case TERN_CQE_RETRY_EXC_ERR:
	case TERN_CQE_RNR_RETRY_EXC_ERR:
	case TERN_CQE_GENERAL_ERR:
		/* numbered as the verbs' statuses */
		return (enum ib_wc_status)status;
	default:
		return IB_WC_GENERAL_ERR;
	}
}

static enum ib_wc_opcode tern_ib_wc_send_opcode(u8 opcode)
{
	switch (opcode) {
	case TERN_WQE_RDMA_WRITE:
	case TERN_WQE_RDMA_WRITE_IMM:
		return IB_WC_RDMA_WRITE;
	case TERN_WQE_RDMA_READ:
		return IB_WC_RDMA_READ;
	case TERN_WQE_ATOMIC_CMP_SWP:
		return IB_WC_COMP_SWAP;
	case TERN_WQE_ATOMIC_FETCH_ADD:
		return IB_WC_FETCH_ADD;
	case TERN_WQE_REG_MR:
		return IB_WC_REG_MR;
	case TERN_WQE_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case TERN_WQE_BIND_MW:
		return IB_WC_BIND_MW;
	default:
		return IB_WC_SEND;
	}
}

/*
 * A receive CQE of a kernel QP on an SRQ that is being destroyed gives its SRQ slot back
 * (the QP is on @cq's dying list from before it left qp_xa). Caller holds cq->lock.
 */
static void tern_ib_cq_dying_srq_complete(struct tern_ib_cq *cq, const struct tern_cqe *cqe,
					  u32 qpn)
{
	struct tern_ib_qp *qp;

	lockdep_assert_held(&cq->lock);
	if (!(cqe->opcode & 0x80))
		return;
	list_for_each_entry(qp, &cq->dying, dying) {
		if (qp->qpn == qpn) {
			tern_ib_srq_complete(to_tsrq(qp->ibqp.srq));
			return;
		}
	}
}

/**
 * tern_ib_cq_dying() - put a kernel QP on an SRQ on its receive CQ's dying list, or off it
 * @cq: the QP's receive CQ (a kernel CQ)
 * @qp: the QP, being destroyed: added before it leaves qp_xa, removed once its CQEs were
 *	cleaned with tern_ib_cq_clean()
 * @add: add or remove
 *
 * Any context.
 */
void tern_ib_cq_dying(struct tern_ib_cq *cq, struct tern_ib_qp *qp, bool add)
{
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (add)
		list_add(&qp->dying, &cq->dying);
	else
		list_del(&qp->dying);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/* Turn the CQE at cq->ci into *wc. Caller holds cq->lock. Return: false when empty. */
static bool tern_ib_poll_one(struct tern_ib_dev *dev, struct tern_ib_cq *cq, struct ib_wc *wc)
{
	struct tern_ib_obj *obj;
	struct tern_cqe *cqe;
	struct tern_ib_qp *qp;
	u32 qpn;

	for (;;) {
		cqe = tern_ib_cqe_valid(cq, cq->ci);
		if (!cqe)
			return false;
		cq->ci++;
		qpn = le32_to_cpu(cqe->qpn);
		if (qpn == TERN_IB_CQE_QPN_STALE)
			continue;	/* its QP was destroyed */
		obj = xa_load(&dev->qp_xa, qpn);
		qp = obj ? container_of(obj, struct tern_ib_qp, obj) : NULL;
		if (qp && qp->kernel)
			break;
		/* A QP being destroyed (erased before its CQEs are cleaned): drop the CQE. */
		ibdev_dbg(&dev->ibdev, "CQ %u: CQE of QP %u without a kernel QP\n", cq->cqn, qpn);
		tern_ib_cq_dying_srq_complete(cq, cqe, qpn);
	}

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = le64_to_cpu(cqe->wr_id);
	wc->status = tern_ib_wc_status(cqe->status);
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = le32_to_cpu(cqe->byte_len);
	wc->qp = &qp->ibqp;
	wc->port_num = TERN_IB_PORT;
	if (cqe->opcode & 0x80) {
		if (qp->ibqp.srq)
			tern_ib_srq_complete(to_tsrq(qp->ibqp.srq));
		else
			tern_ib_kq_complete(&qp->krq, le16_to_cpu(cqe->wqe_idx));
		wc->opcode = cqe->opcode == TERN_CQE_RECV_RDMA_WRITE_IMM ?
			     IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV;
		wc->src_qp = le32_to_cpu(cqe->src_qpn) & TERN_UDB_OBJ_MASK;
		if (cqe->flags & TERN_CQE_F_IMM) {
			wc->ex.imm_data = cqe->imm_data;
			wc->wc_flags |= IB_WC_WITH_IMM;
		} else if (cqe->flags & TERN_CQE_F_INV) {
			wc->ex.invalidate_rkey = le32_to_cpu(cqe->invalidated_rkey);
			wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		}
		if (cqe->flags & TERN_CQE_F_GRH) {
			wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
			wc->network_hdr_type = cqe->flags & TERN_CQE_F_IPV4 ?
					       RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
		}
	} else {
		tern_ib_kq_complete(&qp->ksq, le16_to_cpu(cqe->wqe_idx));
		wc->opcode = tern_ib_wc_send_opcode(cqe->opcode);
	}
	return true;
}

/**
 * tern_ib_poll_cq() - take work completions from a kernel CQ
 * @ibcq: the CQ
 * @num_entries: room in @wc
 * @wc: output
 *
 * Any context.
 *
 * Return: the number of completions (0 when the CQ is empty).
 */
int tern_ib_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct tern_ib_dev *dev = to_tibdev(ibcq->device);
	struct tern_ib_cq *cq = to_tcq(ibcq);
	unsigned long flags;
	u32 ci0;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	ci0 = cq->ci;
	while (n < num_entries && tern_ib_poll_one(dev, cq, wc + n))
		n++;
	if (cq->ci != ci0) {
		/* Every read of the consumed CQEs is done before the device may reuse them. */
		mb();
		WRITE_ONCE(tern_ib_kcq_ci_rec(cq)->ci, cpu_to_le32(cq->ci));
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * tern_ib_req_notify_cq() - arm a kernel CQ for one completion event
 * @ibcq: the CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, optionally IB_CQ_REPORT_MISSED_EVENTS
 *
 * The device raises the event for the next CQE it writes after the doorbell, not for CQEs
 * already in the ring; IB_CQ_REPORT_MISSED_EVENTS covers those, read after the doorbell so
 * that a CQE is either seen here or raises the event.
 *
 * Return: 0; with IB_CQ_REPORT_MISSED_EVENTS, 1 when a CQE is waiting to be polled.
 */
int tern_ib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct tern_ib_dev *dev = to_tibdev(ibcq->device);
	struct tern_ib_cq *cq = to_tcq(ibcq);
	unsigned long irqflags;
	int ret = 0;
	u64 db;

	spin_lock_irqsave(&cq->lock, irqflags);
	db = tern_udb_cq(cq->cqn, cq->ci,
			 (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
			 TERN_UDB_CQ_ARM_SOLICITED : TERN_UDB_CQ_ARM_NEXT);
	/* writeq() orders the CI record (coherent memory) before the doorbell. */
	writeq(db, dev->kdb + TERN_UDB_CQ);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && tern_ib_cqe_valid(cq, cq->ci))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/**
 * tern_ib_cq_clean() - invalidate the CQEs a kernel CQ still holds for a destroyed QP
 * @cq: the kernel CQ
 * @qpn: the QP, already erased from qp_xa and destroyed in the device
 * @srq: the QP's SRQ when @cq is its receive CQ, else NULL: each receive CQE invalidated
 *	gives its slot back (tern_ib_srq_complete())
 *
 * Any context. poll_cq skips the invalidated CQEs.
 */
void tern_ib_cq_clean(struct tern_ib_cq *cq, u32 qpn, struct tern_ib_srq *srq)
{
	struct tern_cqe *cqe;
	unsigned long flags;
	u32 idx;

	spin_lock_irqsave(&cq->lock, flags);
	for (idx = cq->ci; idx - cq->ci < (1u << cq->log_depth); idx++) {
		cqe = tern_ib_cqe_valid(cq, idx);
		if (!cqe)
			break;
		if (le32_to_cpu(cqe->qpn) != qpn)
			continue;
		if (srq && (cqe->opcode & 0x80))
			tern_ib_srq_complete(srq);
		WRITE_ONCE(cqe->qpn, cpu_to_le32(TERN_IB_CQE_QPN_STALE));
	}
	spin_unlock_irqrestore(&cq->lock, flags);
}

/**
 * tern_ib_create_cq() - create a CQ
 * @ibcq: the CQ
 * @attr: cqe (user: at most 2^log_depth), comp_vector; no flags
 * @udata: struct tern_create_cq_cmd in, struct tern_create_cq_resp out; NULL for kernel
 *	CQs
 *
 * Return: 0 or a negative errno (-EOPNOTSUPP for flags, -EINVAL for bad sizes, -ENOSPC
 * when the device has no CQ left).
 */
int tern_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibcq->device);
	struct tern_ib_cq *cq = to_tcq(ibcq);
	struct tern_create_cq_resp resp = {};
	struct tern_cmd_create_cq_in in = {};
	struct tern_create_cq_cmd cmd = {};
	struct tern_ib_ucontext *uc;
	size_t need;
	u32 cqn;
	int err;

	/*
	 * libibverbs asks for IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION when the application
	 * wants completion timestamps; the provider asks for the 64-byte CQEs themselves.
	 */
	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
		return -EOPNOTSUPP;
	if (attr->flags && (!udata || !tern_ib_has_cqe_ts(dev)))
		return -EOPNOTSUPP;
	if (attr->comp_vector >= dev->num_ceqs)
		return -EINVAL;
	cq->vector = attr->comp_vector;
	if (!udata)
		return tern_ib_create_kernel_cq(dev, cq, attr);
	err = tern_ib_udata_cmd(udata, &cmd, sizeof(cmd),
				offsetofend(struct tern_create_cq_cmd, log_depth),
				sizeof(resp));
	if (err)
		return err;
	if (memchr_inv(cmd.rsvd0, 0, sizeof(cmd.rsvd0)) ||
	    (cmd.flags & ~TERN_CREATE_CQ_F_TIMESTAMP))
		return -EINVAL;
	if ((cmd.flags & TERN_CREATE_CQ_F_TIMESTAMP) && !tern_ib_has_cqe_ts(dev))
		return -EOPNOTSUPP;
	if (!cmd.log_depth || cmd.log_depth > tern_ib_cq_max_log(dev, cmd.flags) ||
	    attr->cqe < 1 || attr->cqe > (1u << cmd.log_depth)) {
		ibdev_dbg(&dev->ibdev, "create_cq: log_depth %u (max %u) for %u entries\n",
			  cmd.log_depth, tern_ib_cq_max_log(dev, cmd.flags), attr->cqe);
		return -EINVAL;
	}
	uc = rdma_udata_to_drv_context(udata, struct tern_ib_ucontext, ibuc);

	need = (tern_ib_cqe_size(cmd.flags) << cmd.log_depth) + sizeof(struct tern_cq_ci_rec);
	err = tern_ib_queue_mem_get(dev, &cq->mem, cmd.buf_va, cmd.buf_len, need);
	if (err)
		return err;

	tern_ib_obj_init(&cq->obj);
	mutex_init(&cq->resize_lock);
	in.mem = cq->mem.desc;
	in.log_depth = cmd.log_depth;
	if (cmd.flags & TERN_CREATE_CQ_F_TIMESTAMP)
		in.flags = TERN_CQ_F_TIMESTAMP;
	cq->flags = cmd.flags;
	in.eqn = cpu_to_le16(dev->ceqs[attr->comp_vector].eqn);
	in.uar = cpu_to_le16(uc->uar);
	err = tern_ib_cmd(dev, TERN_CMD_CREATE_CQ, &in, sizeof(in), NULL, 0, &cqn);
	tern_ib_queue_mem_done(dev, &cq->mem);
	if (err)
		goto err_mem;
	err = tern_ib_cq_publish(dev, cq, cqn);
	if (err)
		goto err_destroy;
	resp.cqn = cqn;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_erase;
	ibcq->cqe = 1 << cmd.log_depth;
	return 0;

err_erase:
	tern_ib_obj_unpublish(&dev->cq_xa, cqn, &cq->obj);
err_destroy:
	tern_ib_queue_mem_put(dev, &cq->mem,
			      tern_ib_destroy_failed(dev, "CQ", cqn,
						     tern_ib_cq_hw_destroy(dev, cqn)));
	mutex_destroy(&cq->resize_lock);
	return err;
err_mem:
	tern_ib_queue_mem_put(dev, &cq->mem, false);
	mutex_destroy(&cq->resize_lock);
	return err;
}

/**
 * tern_ib_resize_cq() - move a user CQ to a new, larger or smaller, ring
 * @ibcq: the CQ
 * @cqe: entries asked for (at most 2^log_depth of the new ring)
 * @udata: struct tern_create_cq_cmd in, describing the new ring the provider allocated (it
 *	has published its consumer index in the old ring's CI record and holds the CQ's lock)
 *
 * The device copies the CQEs not yet polled to the start of the new ring
 * (TERN_CMD_RESIZE_CQ); then the old ring's pages are released. Concurrent resizes of one
 * CQ (uverbs takes the CQ shared for resize) are serialised by @resize_lock.
 *
 * Return: 0, -EOPNOTSUPP for a kernel CQ, -EINVAL for a bad ring or one too small for the
 * CQEs outstanding, or another negative errno; the CQ is unchanged on error.
 */
int tern_ib_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibcq->device);
	struct tern_ib_cq *cq = to_tcq(ibcq);
	struct tern_cmd_resize_cq_in in = {};
	struct tern_create_cq_cmd cmd = {};
	struct tern_ib_queue_mem mem = {};
	size_t need;
	int err;

	if (!udata || cq->kbuf.va)
		return -EOPNOTSUPP;
	err = tern_ib_udata_cmd(udata, &cmd, sizeof(cmd),
				offsetofend(struct tern_create_cq_cmd, log_depth), 0);
	if (err)
		return err;
	/* the CQ keeps its CQE size: the provider passes the flags it was created with */
	if (memchr_inv(cmd.rsvd0, 0, sizeof(cmd.rsvd0)) || cmd.flags != cq->flags)
		return -EINVAL;
	if (!cmd.log_depth || cmd.log_depth > tern_ib_cq_max_log(dev, cmd.flags) ||
	    cqe < 1 || cqe > (1 << cmd.log_depth))
		return -EINVAL;

	mutex_lock(&cq->resize_lock);
	need = (tern_ib_cqe_size(cmd.flags) << cmd.log_depth) + sizeof(struct tern_cq_ci_rec);
	err = tern_ib_queue_mem_get(dev, &mem, cmd.buf_va, cmd.buf_len, need);
	if (err)
		goto out;
	in.mem = mem.desc;
	in.cqn = cpu_to_le32(cq->cqn);
	in.log_depth = cmd.log_depth;
	err = tern_ib_cmd(dev, TERN_CMD_RESIZE_CQ, &in, sizeof(in), NULL, 0, NULL);
	tern_ib_queue_mem_done(dev, &mem);
	if (err) {
		/* a device that did not answer may have moved to the new ring: keep both */
		tern_ib_queue_mem_put(dev, &mem, err == -ETIMEDOUT &&
				      tern_core_alive(dev->tdev));
		goto out;
	}
	tern_ib_queue_mem_put(dev, &cq->mem, false);
	cq->mem = mem;
	ibcq->cqe = 1 << cmd.log_depth;
out:
	mutex_unlock(&cq->resize_lock);
	return err;
}

/**
 * tern_ib_modify_cq() - moderate a CQ's completion events
 * @ibcq: the CQ
 * @cq_count: an event waits until this many CQEs have come (0: no such bound)...
 * @cq_period: ...or until this many microseconds after the first of them (0: no such
 *	bound); both 0: an event at every armed completion, as a new CQ has
 *
 * ibv_modify_cq() (IBV_CQ_ATTR_MODERATE) and the RDMA core's adaptive moderation (DIM) of
 * kernel CQs land here. The device applies the bounds to the next event and to one already
 * waiting (TERN_CMD_MODIFY_CQ).
 *
 * Return: 0, -EOPNOTSUPP on a device without TERN_RDMA_CAP_CQ_MODERATION, -EINVAL beyond
 * its limits (ib_device_attr.cq_caps), or another negative errno (the bounds stay).
 */
int tern_ib_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period)
{
	struct tern_ib_dev *dev = to_tibdev(ibcq->device);
	struct tern_ib_cq *cq = to_tcq(ibcq);
	struct tern_cmd_modify_cq_in in = {};
	bool user = !cq->kbuf.va;
	int err;

	if (!tern_ib_has_cap(dev, TERN_RDMA_CAP_CQ_MODERATION))
		return -EOPNOTSUPP;
	if (cq_count > le16_to_cpu(dev->caps.max_cq_moder_count) ||
	    cq_period > le16_to_cpu(dev->caps.max_cq_moder_period))
		return -EINVAL;
	in.cqn = cpu_to_le32(cq->cqn);
	in.max_count = cpu_to_le16(cq_count);
	in.period_us = cpu_to_le16(cq_period);
	if (user)
		mutex_lock(&cq->resize_lock);
	err = tern_ib_cmd(dev, TERN_CMD_MODIFY_CQ, &in, sizeof(in), NULL, 0, NULL);
	if (!err) {
		WRITE_ONCE(cq->moder_count, cq_count);
		WRITE_ONCE(cq->moder_period, cq_period);
	}
	if (user)
		mutex_unlock(&cq->resize_lock);
	return err;
}

/**
 * tern_ib_fill_res_cq_entry() - the driver's view of a CQ for ``rdma res show cq -dd``
 * @msg: the netlink message the RDMA core is filling
 * @ibcq: the CQ (held by restrack for the call)
 *
 * The device's CQ number, the completion vector and event queue its events go to, who polls
 * it (the kernel, or user space through the provider), its event moderation, and for kernel
 * CQs the CQEs consumed.
 *
 * Return: 0 or -EMSGSIZE when @msg is full.
 */
int tern_ib_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct tern_ib_dev *dev = to_tibdev(ibcq->device);
	struct tern_ib_cq *cq = to_tcq(ibcq);
	bool kernel = !ibcq->uobject;
	struct nlattr *table;
	unsigned long flags;
	u32 ci = 0;

	if (kernel) {
		spin_lock_irqsave(&cq->lock, flags);
		ci = cq->ci;
		spin_unlock_irqrestore(&cq->lock, flags);
	}
	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "cqn", cq->cqn) ||
	    rdma_nl_put_driver_u32(msg, "vector", cq->vector) ||
	    rdma_nl_put_driver_u32(msg, "eqn", dev->ceqs[cq->vector].eqn) ||
	    rdma_nl_put_driver_string(msg, "poll", kernel ? "kernel" : "user") ||
	    rdma_nl_put_driver_u32(msg, "moder_count", READ_ONCE(cq->moder_count)) ||
	    rdma_nl_put_driver_u32(msg, "moder_period_us", READ_ONCE(cq->moder_period)) ||
	    (kernel && rdma_nl_put_driver_u32(msg, "ci", ci)))
		goto err;
	nla_nest_end(msg, table);
	return 0;

err:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

/**
 * tern_ib_destroy_cq() - destroy a CQ
 * @ibcq: the CQ; no QP uses it any more
 * @udata: unused
 *
 * No event handler runs for the CQ once this returns.
 *
 * Return: 0.
 */
int tern_ib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibcq->device);
	struct tern_ib_cq *cq = to_tcq(ibcq);
	int err;

	tern_ib_obj_unpublish(&dev->cq_xa, cq->cqn, &cq->obj);

	err = tern_ib_cq_hw_destroy(dev, cq->cqn);
	if (!cq->kbuf.va) {
		tern_ib_queue_mem_put(dev, &cq->mem,
				      tern_ib_destroy_failed(dev, "CQ", cq->cqn, err));
		mutex_destroy(&cq->resize_lock);
		return 0;
	}
	/* A device that is alive but kept the CQ may still write the ring: leak it. */
	if (!tern_ib_destroy_failed(dev, "CQ", cq->cqn, err))
		tern_ib_dma_buf_free(dev, &cq->kbuf);
	return 0;
}
