// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern_ib: shared receive queues. For a user SRQ the provider allocates the ring and picks
 * its depth and stride; the driver checks them against the device's limits and the
 * requested capabilities, pins the ring and creates the SRQ bound to the context's UAR. The
 * provider posts receive WQEs and rings TERN_UDB_SRQ itself. A kernel SRQ has its ring in
 * coherent DMA memory and is bound to the driver's own UAR; post_srq_recv (datapath.c) fills
 * it, and poll_cq gives its slots back (tern_ib_srq_complete()). For both, this driver arms the
 * limit (modify_srq), reads it back (query_srq) and forwards the SRQ's events.
 */

#include <linux/log2.h>
#include <rdma/uverbs_ioctl.h>

#include "tern_ib.h"

/**
 * tern_ib_srq_event() - an affiliated SRQ event of the async EQ
 * @dev: the device
 * @eqe: TERN_EQE_SRQ_EVENT
 *
 * From the async EQ's hard interrupt handler: reports
 * IB_EVENT_SRQ_LIMIT_REACHED or IB_EVENT_SRQ_ERR to the SRQ's owner. The device disarmed
 * the limit when it sent the event.
 */
void tern_ib_srq_event(struct tern_ib_dev *dev, const struct tern_eqe *eqe)
{
	u32 srqn = le32_to_cpu(eqe->data[0]);
	struct tern_ib_obj *obj;
	struct tern_ib_srq *srq;
	struct ib_event ev;

	switch (eqe->subtype) {
	case TERN_SRQ_EV_LIMIT:
		ev.event = IB_EVENT_SRQ_LIMIT_REACHED;
		break;
	case TERN_SRQ_EV_ERROR:
		ev.event = IB_EVENT_SRQ_ERR;
		break;
	default:
		ibdev_warn_ratelimited(&dev->ibdev, "unknown SRQ event %u for SRQ %u\n",
				       eqe->subtype, srqn);
		return;
	}
	obj = tern_ib_obj_get(&dev->srq_xa, srqn);
	if (!obj)
		return;		/* destroyed meanwhile */
	srq = container_of(obj, struct tern_ib_srq, obj);
	if (eqe->subtype == TERN_SRQ_EV_ERROR)
		ibdev_warn_ratelimited(&dev->ibdev, "SRQ %u error: ring unreachable\n", srqn);
	ev.element.srq = &srq->ibsrq;
	tern_ib_obj_event(dev, obj, &ev, srq->ibsrq.event_handler, srq->ibsrq.srq_context);
}

static int tern_ib_srq_hw_destroy(struct tern_ib_dev *dev, u32 srqn)
{
	struct tern_cmd_destroy_srq_in in = { .srqn = cpu_to_le32(srqn) };

	return tern_ib_cmd(dev, TERN_CMD_DESTROY_SRQ, &in, sizeof(in), NULL, 0, NULL);
}

/* Check the provider's ring geometry against the device and the requested attributes. */
static int tern_ib_srq_check_cmd(struct tern_ib_dev *dev,
				 const struct tern_create_srq_cmd *cmd, struct ib_srq_attr *attr)
{
	const struct tern_cmd_query_rdma_out *c = &dev->caps;
	u32 sge;

	if (memchr_inv(cmd->rsvd0, 0, sizeof(cmd->rsvd0)) || cmd->rsvd1 ||
	    (cmd->flags & ~TERN_CREATE_SRQ_F_DB_REC) ||
	    ((cmd->flags & TERN_CREATE_SRQ_F_DB_REC) &&
	     !tern_ib_has_cap(dev, TERN_RDMA_CAP_DB_REC)) || !cmd->log_depth ||
	    cmd->log_depth > c->max_srq_log_depth || cmd->log_depth > 16 ||
	    cmd->log_stride < TERN_RQ_MIN_LOG_STRIDE ||
	    cmd->log_stride > TERN_RQ_MAX_LOG_STRIDE) {
		ibdev_dbg(&dev->ibdev, "create_srq: bad ring geometry %u/%u (max depth %u)\n",
			  cmd->log_depth, cmd->log_stride, c->max_srq_log_depth);
		return -EINVAL;
	}
	sge = min_t(u32, c->max_recv_sge,
		    ((1u << cmd->log_stride) - sizeof(struct tern_rq_wqe)) /
		    sizeof(struct tern_sge));
	if (!attr->max_wr || attr->max_wr > (1u << cmd->log_depth) || attr->max_sge > sge) {
		ibdev_dbg(&dev->ibdev, "create_srq: %u wr, %u sge exceed %u, %u\n",
			  attr->max_wr, attr->max_sge, 1u << cmd->log_depth, sge);
		return -EINVAL;
	}
	/* What the SRQ really takes (the verbs report it back to the caller). */
	attr->max_wr = 1u << cmd->log_depth;
	attr->max_sge = sge;
	attr->srq_limit = 0;
	return 0;
}

/* A free-running u16 producer index tells at most 0xffff outstanding WQEs apart. */
#define TERN_IB_SRQ_MAX_WQE	0xffffu

/* Size a kernel SRQ's ring from the requested attributes; report what it really has. */
static int tern_ib_ksrq_geometry(struct tern_ib_dev *dev, struct tern_ib_srq *srq,
				 struct ib_srq_attr *attr)
{
	const struct tern_cmd_query_rdma_out *c = &dev->caps;
	u32 log_depth, log_stride;

	if (!attr->max_wr || attr->max_wr > TERN_IB_SRQ_MAX_WQE ||
	    attr->max_sge > c->max_recv_sge)
		return -EINVAL;
	log_depth = max_t(u32, order_base_2(attr->max_wr), 1);
	log_stride = max_t(u32, order_base_2(sizeof(struct tern_rq_wqe) +
					     attr->max_sge * sizeof(struct tern_sge)),
			   TERN_RQ_MIN_LOG_STRIDE);
	if (log_depth > c->max_srq_log_depth || log_depth > 16 ||
	    log_stride > TERN_RQ_MAX_LOG_STRIDE)
		return -EINVAL;
	srq->log_depth = log_depth;
	srq->log_stride = log_stride;
	attr->max_wr = min_t(u32, 1u << log_depth, TERN_IB_SRQ_MAX_WQE);
	attr->max_sge = min_t(u32, c->max_recv_sge,
			      ((1u << log_stride) - sizeof(struct tern_rq_wqe)) /
			      sizeof(struct tern_sge));
	attr->srq_limit = 0;
	return 0;
}

/* The ring of a kernel SRQ, described in @in. */
static int tern_ib_ksrq_ring(struct tern_ib_dev *dev, struct tern_ib_srq *srq,
			     struct ib_srq_attr *attr, struct tern_cmd_create_srq_in *in)
{
	int err;

	err = tern_ib_ksrq_geometry(dev, srq, attr);
	if (err) {
		ibdev_dbg(&dev->ibdev, "create_srq: kernel SRQ of %u wr, %u sge not possible\n",
			  attr->max_wr, attr->max_sge);
		return err;
	}
	err = tern_ib_dma_buf_alloc(dev, &srq->kbuf,
				    (size_t)1 << (srq->log_depth + srq->log_stride));
	if (err)
		return err;
	spin_lock_init(&srq->klock);
	srq->pi = 0;
	atomic_set(&srq->done, 0);
	in->uar = cpu_to_le16(dev->kuar);
	in->log_depth = srq->log_depth;
	in->log_stride = srq->log_stride;
	tern_ib_dma_buf_desc(&srq->kbuf, &in->mem);
	return 0;
}

/* A user SRQ's ring from struct tern_create_srq_cmd: checked, pinned, described in @in. */
static int tern_ib_usrq_ring(struct tern_ib_dev *dev, struct tern_ib_srq *srq,
			     struct ib_udata *udata, struct ib_srq_attr *attr,
			     struct tern_cmd_create_srq_in *in)
{
	struct tern_create_srq_cmd cmd = {};
	struct tern_ib_ucontext *uc;
	int err;

	err = tern_ib_udata_cmd(udata, &cmd, sizeof(cmd),
				offsetofend(struct tern_create_srq_cmd, log_stride),
				sizeof(struct tern_create_srq_resp));
	if (err)
		return err;
	err = tern_ib_srq_check_cmd(dev, &cmd, attr);
	if (err)
		return err;
	uc = rdma_udata_to_drv_context(udata, struct tern_ib_ucontext, ibuc);

	/* the doorbell record lives right after the ring, in the same pinned buffer */
	err = tern_ib_queue_mem_get(dev, &srq->mem, cmd.buf_va, cmd.buf_len,
				    ((size_t)1 << (cmd.log_depth + cmd.log_stride)) +
				    ((cmd.flags & TERN_CREATE_SRQ_F_DB_REC) ?
				     sizeof(struct tern_wq_db_rec) : 0));
	if (err)
		return err;
	if (cmd.flags & TERN_CREATE_SRQ_F_DB_REC)
		in->flags = cpu_to_le32(TERN_SRQ_F_DB_REC);
	in->uar = cpu_to_le16(uc->uar);
	in->log_depth = cmd.log_depth;
	in->log_stride = cmd.log_stride;
	in->mem = srq->mem.desc;
	return 0;
}

/* Release an SRQ's ring; @hold: the device, alive, may still use it (failed destroy). */
static void tern_ib_srq_ring_put(struct tern_ib_dev *dev, struct tern_ib_srq *srq, bool hold)
{
	if (!srq->kernel) {
		tern_ib_queue_mem_put(dev, &srq->mem, hold);
		return;
	}
	if (hold)
		return;		/* leaked on purpose: the device may still read there */
	tern_ib_dma_buf_free(dev, &srq->kbuf);
}

/**
 * tern_ib_create_srq() - create an SRQ
 * @ibsrq: the SRQ
 * @init_attr: basic SRQ, max_wr and max_sge (updated to what the SRQ really has); the
 *	limit is not armed at creation (modify_srq arms it)
 * @udata: struct tern_create_srq_cmd in, struct tern_create_srq_resp out; NULL for kernel
 *	SRQs, whose ring the driver allocates
 *
 * Return: 0 or a negative errno (-EOPNOTSUPP for XRC and tag-matching SRQs and a device
 * without SRQs; -EINVAL for sizes or a ring the device cannot take; -ENOMEM; -ENOSPC when
 * the device has no SRQ left).
 */
int tern_ib_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init_attr,
		       struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibsrq->device);
	struct tern_ib_srq *srq = to_tsrq(ibsrq);
	struct ib_srq_attr attr = init_attr->attr;
	struct tern_cmd_create_srq_in in = {};
	struct tern_create_srq_resp resp = {};
	u32 srqn;
	int err;

	if (init_attr->srq_type != IB_SRQT_BASIC ||
	    !(le32_to_cpu(dev->caps.cap_flags) & TERN_RDMA_CAP_SRQ) ||
	    !le32_to_cpu(dev->caps.max_srq))
		return -EOPNOTSUPP;
	srq->kernel = !udata;
	if (udata)
		err = tern_ib_usrq_ring(dev, srq, udata, &attr, &in);
	else
		err = tern_ib_ksrq_ring(dev, srq, &attr, &in);
	if (err)
		return err;

	mutex_init(&srq->lock);
	tern_ib_obj_init(&srq->obj);
	srq->max_wr = attr.max_wr;
	srq->max_sge = attr.max_sge;

	in.pdn = cpu_to_le32(to_tpd(ibsrq->pd)->pdn);
	/* a device without doorbell records takes only the input of before them */
	err = tern_ib_cmd(dev, TERN_CMD_CREATE_SRQ, &in,
			  tern_ib_has_cap(dev, TERN_RDMA_CAP_DB_REC) ? sizeof(in) :
			  TERN_CREATE_SRQ_IN_V1_LEN, NULL, 0, &srqn);
	if (!srq->kernel)
		tern_ib_queue_mem_done(dev, &srq->mem);
	if (err)
		goto err_ring;
	srq->srqn = srqn;
	err = tern_ib_obj_publish(dev, &dev->srq_xa, &srq->obj, srqn,
				  le32_to_cpu(dev->caps.max_srq), "SRQ");
	if (err)
		goto err_destroy;
	if (udata) {
		resp.srqn = srqn;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	init_attr->attr = attr;
	return 0;

err_erase:
	tern_ib_obj_unpublish(&dev->srq_xa, srqn, &srq->obj);
err_destroy:
	tern_ib_srq_ring_put(dev, srq,
			     tern_ib_destroy_failed(dev, "SRQ", srqn,
						    tern_ib_srq_hw_destroy(dev, srqn)));
	mutex_destroy(&srq->lock);
	return err;
err_ring:
	tern_ib_srq_ring_put(dev, srq, false);
	mutex_destroy(&srq->lock);
	return err;
}

/**
 * tern_ib_modify_srq() - arm or disarm an SRQ's limit
 * @ibsrq: the SRQ
 * @attr: srq_limit with IB_SRQ_LIMIT
 * @attr_mask: IB_SRQ_LIMIT; IB_SRQ_MAX_WR (resizing) is not supported
 * @udata: no driver data
 *
 * The device reports IB_EVENT_SRQ_LIMIT_REACHED once when the WQEs available fall below
 * the limit, and disarms it; a limit of 0 disarms.
 *
 * Return: 0, -EOPNOTSUPP for a resize, -EINVAL for a limit not below the depth, or another
 * negative errno.
 */
int tern_ib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask attr_mask, struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibsrq->device);
	struct tern_ib_srq *srq = to_tsrq(ibsrq);
	struct tern_cmd_modify_srq_in in = {};
	int err;

	if (attr_mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (attr_mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (!(attr_mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit >= srq->max_wr)
		return -EINVAL;

	in.srqn = cpu_to_le32(srq->srqn);
	in.limit = cpu_to_le32(attr->srq_limit);
	mutex_lock(&srq->lock);
	err = tern_ib_cmd(dev, TERN_CMD_MODIFY_SRQ, &in, sizeof(in), NULL, 0, NULL);
	mutex_unlock(&srq->lock);
	if (err) {
		ibdev_dbg(&dev->ibdev, "MODIFY_SRQ %u (limit %u) failed: %d\n", srq->srqn,
			  attr->srq_limit, err);
		if (err == -EBUSY)
			err = -EINVAL;
	}
	return err;
}

/**
 * tern_ib_query_srq() - an SRQ's attributes
 * @ibsrq: the SRQ
 * @attr: output: max_wr and max_sge it has, the limit the device has armed (0: none)
 *
 * Return: 0 or a negative errno.
 */
int tern_ib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct tern_ib_dev *dev = to_tibdev(ibsrq->device);
	struct tern_ib_srq *srq = to_tsrq(ibsrq);
	struct tern_cmd_query_srq_in in = { .srqn = cpu_to_le32(srq->srqn) };
	struct tern_cmd_query_srq_out out = {};
	int err;

	mutex_lock(&srq->lock);
	err = tern_ib_cmd(dev, TERN_CMD_QUERY_SRQ, &in, sizeof(in), &out, sizeof(out), NULL);
	mutex_unlock(&srq->lock);
	if (err)
		return err;
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = le32_to_cpu(out.limit);
	return 0;
}

/**
 * tern_ib_destroy_srq() - destroy an SRQ
 * @ibsrq: the SRQ; no QP uses it any more
 * @udata: unused
 *
 * No event handler runs for the SRQ once this returns; its ring is unpinned unless the
 * device, alive, refused to destroy it.
 *
 * Return: 0.
 */
int tern_ib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibsrq->device);
	struct tern_ib_srq *srq = to_tsrq(ibsrq);
	bool hold;

	tern_ib_obj_unpublish(&dev->srq_xa, srq->srqn, &srq->obj);

	hold = tern_ib_destroy_failed(dev, "SRQ", srq->srqn,
				      tern_ib_srq_hw_destroy(dev, srq->srqn));
	tern_ib_srq_ring_put(dev, srq, hold);
	mutex_destroy(&srq->lock);
	return 0;
}
