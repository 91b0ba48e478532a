// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern_ib: completion queues. The provider allocates the ring and its consumer-index record
 * in one buffer; the driver pins it, creates the CQ bound to the context's UAR and to the
 * completion EQ of the chosen vector, and forwards completion and error events.
 */

#include <rdma/uverbs_ioctl.h>

#include "tern_ib.h"

static struct tern_ib_cq *tern_ib_cq_get(struct tern_ib_dev *dev, u32 cqn)
{
	struct tern_ib_cq *cq;
	unsigned long flags;

	xa_lock_irqsave(&dev->cq_xa, flags);
	cq = xa_load(&dev->cq_xa, cqn);
	if (cq && !refcount_inc_not_zero(&cq->refcount))
		cq = NULL;
	xa_unlock_irqrestore(&dev->cq_xa, flags);
	return cq;
}

static void tern_ib_cq_put(struct tern_ib_cq *cq)
{
	if (refcount_dec_and_test(&cq->refcount))
		complete(&cq->free);
}

/**
 * tern_ib_comp_event() - an event of a completion EQ
 * @ctx: the struct tern_ib_ceq
 * @eqe: the event
 *
 * Hard interrupt context: calls the CQ's completion handler.
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
	tern_ib_cq_put(cq);
}

/**
 * tern_ib_cq_event() - a CQ error event of the async EQ
 * @dev: the device
 * @eqe: TERN_EQE_CQ_ERROR
 *
 * Hard interrupt context: reports IB_EVENT_CQ_ERR to the CQ's owner.
 */
void tern_ib_cq_event(struct tern_ib_dev *dev, const struct tern_eqe *eqe)
{
	u32 cqn = le32_to_cpu(eqe->data[0]);
	struct tern_ib_cq *cq;
	struct ib_event ev;

	cq = tern_ib_cq_get(dev, cqn);
	if (!cq)
		return;
	ibdev_warn_ratelimited(&dev->ibdev, "CQ %u error (%s)\n", cqn,
			       eqe->subtype == TERN_CQ_ERR_OVERFLOW ? "overflow" :
			       eqe->subtype == TERN_CQ_ERR_DMA ? "memory unreachable" :
			       "unknown");
	if (cq->ibcq.event_handler) {
		ev.device = &dev->ibdev;
		ev.element.cq = &cq->ibcq;
		ev.event = IB_EVENT_CQ_ERR;
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	tern_ib_cq_put(cq);
}

static int tern_ib_cq_hw_destroy(struct tern_ib_dev *dev, u32 cqn)
{
	struct tern_cmd_destroy_cq_in in = { .cqn = cpu_to_le32(cqn) };

	return tern_ib_cmd(dev, TERN_CMD_DESTROY_CQ, &in, sizeof(in), NULL, 0, NULL);
}

/**
 * tern_ib_create_cq() - create a user CQ
 * @ibcq: the CQ
 * @attr: cqe (at most 2^log_depth), comp_vector; no flags
 * @udata: struct tern_create_cq_cmd in, struct tern_create_cq_resp out; NULL for kernel
 *	CQs, which are not supported
 *
 * Return: 0 or a negative errno (-EOPNOTSUPP for kernel CQs and flags, -EINVAL for bad
 * sizes, -ENOSPC when the device has no CQ left).
 */
int tern_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tdev(ibcq->device);
	struct tern_ib_cq *cq = to_tcq(ibcq);
	struct tern_create_cq_resp resp = {};
	struct tern_cmd_create_cq_in in = {};
	struct tern_create_cq_cmd cmd = {};
	struct tern_ib_ucontext *uc;
	size_t need;
	u32 cqn;
	int err;

	if (!udata)
		return -EOPNOTSUPP;
	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->comp_vector >= dev->num_ceqs)
		return -EINVAL;
	if (udata->inlen < offsetofend(struct tern_create_cq_cmd, log_depth) ||
	    udata->outlen < sizeof(resp))
		return -EINVAL;
	err = ib_copy_from_udata(&cmd, udata, min(udata->inlen, sizeof(cmd)));
	if (err)
		return err;
	if (memchr_inv(cmd.rsvd0, 0, sizeof(cmd.rsvd0)) ||
	    (udata->inlen > sizeof(cmd) &&
	     !ib_is_udata_cleared(udata, sizeof(cmd), udata->inlen - sizeof(cmd))))
		return -EINVAL;
	if (!cmd.log_depth || cmd.log_depth > dev->caps.max_cq_log_depth ||
	    attr->cqe < 1 || attr->cqe > (1u << cmd.log_depth)) {
		ibdev_dbg(&dev->ibdev, "create_cq: log_depth %u (max %u) for %u entries\n",
			  cmd.log_depth, dev->caps.max_cq_log_depth, attr->cqe);
		return -EINVAL;
	}
	uc = rdma_udata_to_drv_context(udata, struct tern_ib_ucontext, ibuc);

	need = (sizeof(struct tern_cqe) << cmd.log_depth) + sizeof(struct tern_cq_ci_rec);
	err = tern_ib_queue_mem_get(dev, &cq->mem, cmd.buf_va, cmd.buf_len, need);
	if (err)
		return err;

	refcount_set(&cq->refcount, 1);
	init_completion(&cq->free);
	in.mem = cq->mem.desc;
	in.log_depth = cmd.log_depth;
	in.eqn = cpu_to_le16(dev->ceqs[attr->comp_vector].eqn);
	in.uar = cpu_to_le16(uc->uar);
	err = tern_ib_cmd(dev, TERN_CMD_CREATE_CQ, &in, sizeof(in), NULL, 0, &cqn);
	tern_ib_queue_mem_done(dev, &cq->mem);
	if (err)
		goto err_mem;
	cq->cqn = cqn;
	if (cqn >= le32_to_cpu(dev->caps.max_cq)) {
		ibdev_err(&dev->ibdev, "CREATE_CQ returned CQN %u (limit %u)\n", cqn,
			  le32_to_cpu(dev->caps.max_cq));
		err = -EIO;
		goto err_destroy;
	}
	err = xa_insert_irq(&dev->cq_xa, cqn, cq, GFP_KERNEL);
	if (err) {
		ibdev_err(&dev->ibdev, "CQN %u already in use: %d\n", cqn, err);
		err = -EIO;
		goto err_destroy;
	}
	resp.cqn = cqn;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_erase;
	ibcq->cqe = 1 << cmd.log_depth;
	return 0;

err_erase:
	xa_erase_irq(&dev->cq_xa, cqn);
	tern_ib_cq_put(cq);
	wait_for_completion(&cq->free);
err_destroy:
	tern_ib_queue_mem_put(dev, &cq->mem,
			      tern_ib_destroy_failed(dev, "CQ", cqn,
						     tern_ib_cq_hw_destroy(dev, cqn)));
	return err;
err_mem:
	tern_ib_queue_mem_put(dev, &cq->mem, false);
	return err;
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
	struct tern_ib_dev *dev = to_tdev(ibcq->device);
	struct tern_ib_cq *cq = to_tcq(ibcq);
	int err;

	xa_erase_irq(&dev->cq_xa, cq->cqn);
	tern_ib_cq_put(cq);
	wait_for_completion(&cq->free);

	err = tern_ib_cq_hw_destroy(dev, cq->cqn);
	tern_ib_queue_mem_put(dev, &cq->mem, tern_ib_destroy_failed(dev, "CQ", cq->cqn, err));
	return 0;
}
