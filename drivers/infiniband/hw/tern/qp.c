// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern_ib: queue pairs (RC, UD and the GSI QP). For user QPs the provider allocates both
 * rings and picks their depths and strides; the driver checks them against the device's
 * limits and the requested capabilities, pins the rings and creates the QP. Kernel QPs get
 * their rings in coherent DMA memory, sized from the requested capabilities (their data path,
 * post_send and post_recv, is in datapath.c; poll_cq in cq.c). modify_qp translates the verbs'
 * attributes, including the RoCEv2 path (addresses, VLAN, traffic class, UDP source port),
 * into struct tern_qp_attrs; address handles use the same path builder.
 */

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/log2.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>
#include <rdma/uverbs_ioctl.h>

#include "tern_ib.h"

/* modify_qp attributes tern_ib translates; IB_QP_PKEY_INDEX and IB_QP_PORT only as 0/1. */
#define TERN_IB_QP_ATTRS (IB_QP_STATE | IB_QP_CUR_STATE | IB_QP_EN_SQD_ASYNC_NOTIFY |	\
			  IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_AV |	\
			  IB_QP_PATH_MTU | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |		\
			  IB_QP_RNR_RETRY | IB_QP_RQ_PSN | IB_QP_MAX_QP_RD_ATOMIC |	\
			  IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |	\
			  IB_QP_DEST_QPN | IB_QP_QKEY)

#define TERN_IB_PSN_MASK	0xffffff

/**
 * tern_ib_access_to_hw() - translate IB_ACCESS_* into TERN_ACCESS_*
 * @ib_access: IB_ACCESS_* flags
 *
 * Return: the TERN_ACCESS_* flags. Callers refuse or drop IB_ACCESS_REMOTE_ATOMIC on a
 * device without TERN_RDMA_CAP_ATOMIC.
 */
u32 tern_ib_access_to_hw(int ib_access)
{
	u32 hw = 0;

	if (ib_access & IB_ACCESS_LOCAL_WRITE)
		hw |= TERN_ACCESS_LOCAL_WRITE;
	if (ib_access & IB_ACCESS_REMOTE_WRITE)
		hw |= TERN_ACCESS_REMOTE_WRITE;
	if (ib_access & IB_ACCESS_REMOTE_READ)
		hw |= TERN_ACCESS_REMOTE_READ;
	if (ib_access & IB_ACCESS_REMOTE_ATOMIC)
		hw |= TERN_ACCESS_REMOTE_ATOMIC;
	return hw;
}

static int tern_ib_access_from_hw(u32 hw)
{
	int access = 0;

	if (hw & TERN_ACCESS_LOCAL_WRITE)
		access |= IB_ACCESS_LOCAL_WRITE;
	if (hw & TERN_ACCESS_REMOTE_WRITE)
		access |= IB_ACCESS_REMOTE_WRITE;
	if (hw & TERN_ACCESS_REMOTE_READ)
		access |= IB_ACCESS_REMOTE_READ;
	if (hw & TERN_ACCESS_REMOTE_ATOMIC)
		access |= IB_ACCESS_REMOTE_ATOMIC;
	return access;
}

/**
 * tern_ib_qp_event() - an affiliated QP event of the async EQ
 * @dev: the device
 * @eqe: TERN_EQE_QP_EVENT
 *
 * From the async EQ's hard interrupt handler: reports the event to the QP's owner, whose
 * handler must not sleep (it always ran with interrupts disabled).
 */
void tern_ib_qp_event(struct tern_ib_dev *dev, const struct tern_eqe *eqe)
{
	u32 qpn = le32_to_cpu(eqe->data[0]);
	struct tern_ib_obj *obj;
	struct tern_ib_qp *qp;
	struct ib_event ev;

	switch (eqe->subtype) {
	case TERN_QP_EV_FATAL:
		ev.event = IB_EVENT_QP_FATAL;
		break;
	case TERN_QP_EV_REQ_ERR:
		ev.event = IB_EVENT_QP_REQ_ERR;
		break;
	case TERN_QP_EV_ACCESS_ERR:
		ev.event = IB_EVENT_QP_ACCESS_ERR;
		break;
	case TERN_QP_EV_SQ_DRAINED:
		ev.event = IB_EVENT_SQ_DRAINED;
		break;
	case TERN_QP_EV_COMM_EST:
		ev.event = IB_EVENT_COMM_EST;
		break;
	case TERN_QP_EV_LAST_WQE_REACHED:
		ev.event = IB_EVENT_QP_LAST_WQE_REACHED;
		break;
	default:
		ibdev_warn_ratelimited(&dev->ibdev, "unknown QP event %u for QP %u\n",
				       eqe->subtype, qpn);
		return;
	}
	obj = tern_ib_obj_get(&dev->qp_xa, qpn);
	if (!obj)
		return;
	qp = container_of(obj, struct tern_ib_qp, obj);
	if (eqe->subtype == TERN_QP_EV_FATAL)
		WRITE_ONCE(qp->state, IB_QPS_ERR);
	ev.element.qp = &qp->ibqp;
	tern_ib_obj_event(dev, obj, &ev, qp->ibqp.event_handler, qp->ibqp.qp_context);
}

static int tern_ib_qp_hw_destroy(struct tern_ib_dev *dev, u32 qpn)
{
	struct tern_cmd_destroy_qp_in in = { .qpn = cpu_to_le32(qpn) };

	return tern_ib_cmd(dev, TERN_CMD_DESTROY_QP, &in, sizeof(in), NULL, 0, NULL);
}

/* Bytes of a send WQE before its SGEs or inline data (atomic segments aside). */
static u32 tern_ib_sq_hdr_bytes(u8 type)
{
	return sizeof(struct tern_sq_wqe) +
	       (tern_ib_qpt_ud(type) ? sizeof(struct tern_ud_seg) : 0);
}

static u32 tern_ib_sq_min_log_stride(u8 type)
{
	return tern_ib_qpt_ud(type) ? TERN_SQ_UD_MIN_LOG_STRIDE : TERN_SQ_MIN_LOG_STRIDE;
}

/*
 * Check the provider's ring geometry against the device and the requested capabilities.
 * A QP on an SRQ (@srq) has no receive ring: its RQ fields are zero.
 */
static int tern_ib_qp_check_cmd(struct tern_ib_dev *dev, const struct tern_create_qp_cmd *cmd,
				u8 type, struct ib_qp_cap *cap, bool srq)
{
	const struct tern_cmd_query_rdma_out *c = &dev->caps;
	u32 sq_slot, rq_slot, send_sge, recv_sge, inl, hdr = tern_ib_sq_hdr_bytes(type);
	bool rq_bad;

	if (srq) {
		rq_bad = cmd->log_rq_depth || cmd->log_rq_stride || cmd->rq_va || cmd->rq_len;
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	} else {
		rq_bad = !cmd->log_rq_depth || cmd->log_rq_depth > c->max_rq_log_depth ||
			 cmd->log_rq_stride < TERN_RQ_MIN_LOG_STRIDE ||
			 cmd->log_rq_stride > TERN_RQ_MAX_LOG_STRIDE;
	}
	if (cmd->rsvd || cmd->rsvd1 || (cmd->flags & ~TERN_CREATE_QP_F_RQ_DB_REC) || rq_bad ||
	    !cmd->log_sq_depth ||
	    cmd->log_sq_depth > c->max_sq_log_depth ||
	    cmd->log_sq_stride < tern_ib_sq_min_log_stride(type) ||
	    cmd->log_sq_stride > TERN_SQ_MAX_LOG_STRIDE) {
		ibdev_dbg(&dev->ibdev, "create_qp: bad ring geometry sq %u/%u rq %u/%u\n",
			  cmd->log_sq_depth, cmd->log_sq_stride, cmd->log_rq_depth,
			  cmd->log_rq_stride);
		return -EINVAL;
	}
	sq_slot = 1u << cmd->log_sq_stride;
	rq_slot = srq ? sizeof(struct tern_rq_wqe) : 1u << cmd->log_rq_stride;
	send_sge = min_t(u32, c->max_send_sge, (sq_slot - hdr) / sizeof(struct tern_sge));
	recv_sge = min_t(u32, c->max_recv_sge,
			 (rq_slot - sizeof(struct tern_rq_wqe)) / sizeof(struct tern_sge));
	inl = min_t(u32, le16_to_cpu(c->max_inline), sq_slot - hdr);

	if (cap->max_send_wr > (1u << cmd->log_sq_depth) ||
	    cap->max_recv_wr > (1u << cmd->log_rq_depth) || cap->max_send_sge > send_sge ||
	    cap->max_recv_sge > recv_sge || cap->max_inline_data > inl) {
		ibdev_dbg(&dev->ibdev,
			  "create_qp: caps %u/%u wr, %u/%u sge, %u inline exceed %u/%u, %u/%u, %u\n",
			  cap->max_send_wr, cap->max_recv_wr, cap->max_send_sge,
			  cap->max_recv_sge, cap->max_inline_data, 1u << cmd->log_sq_depth,
			  1u << cmd->log_rq_depth, send_sge, recv_sge, inl);
		return -EINVAL;
	}
	/* What the QP really takes (the verbs report it back to the caller). */
	cap->max_send_wr = 1u << cmd->log_sq_depth;
	cap->max_recv_wr = srq ? 0 : 1u << cmd->log_rq_depth;
	cap->max_send_sge = send_sge;
	cap->max_recv_sge = recv_sge;
	cap->max_inline_data = inl;
	return 0;
}

/*
 * Size a kernel QP's rings from the requested capabilities; report what it really has. A
 * QP on an SRQ (@srq) has no receive ring: its receive capabilities are zero.
 */
static int tern_ib_kqp_geometry(struct tern_ib_dev *dev, struct tern_ib_qp *qp,
				struct ib_qp_cap *cap, bool srq)
{
	const struct tern_cmd_query_rdma_out *c = &dev->caps;
	u32 hdr = tern_ib_sq_hdr_bytes(qp->type);
	u32 sq_need, rq_need, atomic_need = 0;
	u8 log_sq, log_rq;

	if (srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	if (cap->max_send_wr > (1u << c->max_sq_log_depth) ||
	    cap->max_recv_wr > (1u << c->max_rq_log_depth) ||
	    cap->max_send_sge > c->max_send_sge || cap->max_recv_sge > c->max_recv_sge ||
	    cap->max_inline_data > le16_to_cpu(c->max_inline))
		return -EINVAL;
	if (qp->type == TERN_QPT_RC && tern_ib_has_cap(dev, TERN_RDMA_CAP_ATOMIC))
		atomic_need = sizeof(struct tern_atomic_seg) + sizeof(struct tern_sge);
	sq_need = hdr + max3(cap->max_send_sge * (u32)sizeof(struct tern_sge),
			     cap->max_inline_data, atomic_need);
	rq_need = sizeof(struct tern_rq_wqe) + cap->max_recv_sge * sizeof(struct tern_sge);
	log_sq = max_t(u32, order_base_2(sq_need), tern_ib_sq_min_log_stride(qp->type));
	log_rq = max_t(u32, order_base_2(rq_need), TERN_RQ_MIN_LOG_STRIDE);
	if (log_sq > TERN_SQ_MAX_LOG_STRIDE || log_rq > TERN_RQ_MAX_LOG_STRIDE)
		return -EINVAL;
	qp->ksq.log_stride = log_sq;
	qp->krq.log_stride = log_rq;
	qp->ksq.log_depth = max_t(u32, order_base_2(max(cap->max_send_wr, 1u)), 1);
	qp->krq.log_depth = max_t(u32, order_base_2(max(cap->max_recv_wr, 1u)), 1);
	qp->ksq.max_sge = min_t(u32, c->max_send_sge,
				((1u << log_sq) - hdr) / sizeof(struct tern_sge));
	qp->krq.max_sge = min_t(u32, c->max_recv_sge,
				((1u << log_rq) - sizeof(struct tern_rq_wqe)) /
				sizeof(struct tern_sge));

	/* What the QP really takes (the verbs report it back to the caller). */
	cap->max_send_wr = 1u << qp->ksq.log_depth;
	cap->max_recv_wr = srq ? 0 : 1u << qp->krq.log_depth;
	cap->max_send_sge = qp->ksq.max_sge;
	cap->max_recv_sge = srq ? 0 : qp->krq.max_sge;
	cap->max_inline_data = min_t(u32, le16_to_cpu(c->max_inline), (1u << log_sq) - hdr);
	return 0;
}

static int tern_ib_kq_alloc(struct tern_ib_dev *dev, struct tern_ib_kq *q)
{
	spin_lock_init(&q->lock);
	q->pi = 0;
	q->ci = 0;
	return tern_ib_dma_buf_alloc(dev, &q->buf, (size_t)1 << (q->log_depth + q->log_stride));
}

/* Release a QP's rings; @hold: the device, alive, may still use them (failed destroy). */
static void tern_ib_qp_rings_put(struct tern_ib_dev *dev, struct tern_ib_qp *qp, bool hold)
{
	if (!qp->kernel) {
		tern_ib_queue_mem_put(dev, &qp->rq, hold);
		tern_ib_queue_mem_put(dev, &qp->sq, hold);
		return;
	}
	if (hold)
		return;		/* leaked on purpose: the device may still write there */
	tern_ib_dma_buf_free(dev, &qp->krq.buf);
	tern_ib_dma_buf_free(dev, &qp->ksq.buf);
}

/* A user QP's rings from struct tern_create_qp_cmd: checked, pinned, described in @in. */
static int tern_ib_uqp_rings(struct tern_ib_dev *dev, struct tern_ib_qp *qp,
			     struct ib_udata *udata, bool srq, struct ib_qp_cap *cap,
			     struct tern_cmd_create_qp_in *in)
{
	struct tern_create_qp_cmd cmd = {};
	struct tern_ib_ucontext *uc;
	size_t rec = 0;
	int err;

	err = tern_ib_udata_cmd(udata, &cmd, sizeof(cmd),
				offsetofend(struct tern_create_qp_cmd, log_rq_stride),
				sizeof(struct tern_create_qp_resp));
	if (err)
		return err;
	err = tern_ib_qp_check_cmd(dev, &cmd, qp->type, cap, srq);
	if (err)
		return err;
	/* the RQ's doorbell record lives right after its ring, in the same pinned buffer */
	if (cmd.flags & TERN_CREATE_QP_F_RQ_DB_REC) {
		if (srq || !tern_ib_has_cap(dev, TERN_RDMA_CAP_DB_REC))
			return -EINVAL;
		rec = sizeof(struct tern_wq_db_rec);
		in->flags |= TERN_QP_F_RQ_DB_REC;
	}
	uc = rdma_udata_to_drv_context(udata, struct tern_ib_ucontext, ibuc);

	err = tern_ib_queue_mem_get(dev, &qp->sq, cmd.sq_va, cmd.sq_len,
				    (size_t)1 << (cmd.log_sq_depth + cmd.log_sq_stride));
	if (err)
		return err;
	if (!srq) {
		err = tern_ib_queue_mem_get(dev, &qp->rq, cmd.rq_va, cmd.rq_len,
					    ((size_t)1 << (cmd.log_rq_depth + cmd.log_rq_stride)) +
					    rec);
		if (err) {
			tern_ib_queue_mem_put(dev, &qp->sq, false);
			return err;
		}
	}
	in->uar = cpu_to_le16(uc->uar);
	in->log_sq_depth = cmd.log_sq_depth;
	in->log_sq_stride = cmd.log_sq_stride;
	in->log_rq_depth = cmd.log_rq_depth;
	in->log_rq_stride = cmd.log_rq_stride;
	in->sq_mem = qp->sq.desc;
	in->rq_mem = qp->rq.desc;
	return 0;
}

/* A kernel QP's rings in coherent memory (no receive ring on an SRQ), described in @in. */
static int tern_ib_kqp_rings(struct tern_ib_dev *dev, struct tern_ib_qp *qp, bool srq,
			     struct ib_qp_cap *cap, struct tern_cmd_create_qp_in *in)
{
	int err;

	err = tern_ib_kqp_geometry(dev, qp, cap, srq);
	if (err) {
		ibdev_dbg(&dev->ibdev,
			  "create_qp: kernel caps %u/%u wr, %u/%u sge, %u inline not possible\n",
			  cap->max_send_wr, cap->max_recv_wr, cap->max_send_sge,
			  cap->max_recv_sge, cap->max_inline_data);
		return err;
	}
	err = tern_ib_kq_alloc(dev, &qp->ksq);
	if (err)
		return err;
	in->uar = cpu_to_le16(dev->kuar);
	in->log_sq_depth = qp->ksq.log_depth;
	in->log_sq_stride = qp->ksq.log_stride;
	tern_ib_dma_buf_desc(&qp->ksq.buf, &in->sq_mem);
	if (srq)
		return 0;
	err = tern_ib_kq_alloc(dev, &qp->krq);
	if (err) {
		tern_ib_dma_buf_free(dev, &qp->ksq.buf);
		return err;
	}
	in->log_rq_depth = qp->krq.log_depth;
	in->log_rq_stride = qp->krq.log_stride;
	tern_ib_dma_buf_desc(&qp->krq.buf, &in->rq_mem);
	return 0;
}

/* What tern_ib_create_qp() refuses before it allocates; sets the QP's type and owner. */
static int tern_ib_qp_check_attr(struct tern_ib_dev *dev, struct tern_ib_qp *qp,
				 struct ib_qp_init_attr *init_attr, struct ib_udata *udata)
{
	if (init_attr->create_flags || init_attr->rwq_ind_tbl)
		return -EOPNOTSUPP;
	switch (init_attr->qp_type) {
	case IB_QPT_RC:
		qp->type = TERN_QPT_RC;
		break;
	case IB_QPT_UC:
		if (!tern_ib_has_cap(dev, TERN_RDMA_CAP_UC))
			return -EOPNOTSUPP;
		qp->type = TERN_QPT_UC;
		break;
	case IB_QPT_UD:
		qp->type = TERN_QPT_UD;
		break;
	case IB_QPT_GSI:
		if (udata)
			return -EOPNOTSUPP;
		qp->type = TERN_QPT_GSI;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (tern_ib_qpt_ud(qp->type) && !tern_ib_has_cap(dev, TERN_RDMA_CAP_UD))
		return -EOPNOTSUPP;
	if (!init_attr->send_cq || !init_attr->recv_cq)
		return -EINVAL;
	qp->kernel = !udata;
	if (qp->kernel && (!to_tcq(init_attr->send_cq)->kbuf.va ||
			   !to_tcq(init_attr->recv_cq)->kbuf.va))
		return -EINVAL;
	if (init_attr->srq && to_tsrq(init_attr->srq)->kernel != qp->kernel)
		return -EINVAL;
	return 0;
}

/* The QPN the firmware chose: 1 for the GSI QP, else within [2, max_qp). */
static int tern_ib_qp_check_qpn(struct tern_ib_dev *dev, struct tern_ib_qp *qp)
{
	u32 max_qp = le32_to_cpu(dev->caps.max_qp);

	if (qp->type == TERN_QPT_GSI ? qp->qpn == 1 : qp->qpn >= 2 && qp->qpn < max_qp)
		return 0;
	ibdev_err(&dev->ibdev, "CREATE_QP (type %u) returned QPN %u (limit %u)\n",
		  qp->type, qp->qpn, max_qp);
	return -EIO;
}

static_assert(TERN_ECE_VENDOR_ID == TERN_PCI_VENDOR_ID);

/*
 * What user QP @qp offers through ECE (<rdma/tern-abi.h>): selective repeat with the port's
 * in-flight cap while devlink's roce_selective_repeat is on, for an RC QP on a device that
 * has it; nothing otherwise.
 */
static u32 tern_ib_qp_ece_offer(struct tern_ib_dev *dev, const struct tern_ib_qp *qp)
{
	u32 cap;

	if (qp->type != TERN_QPT_RC || !tern_ib_has_cap(dev, TERN_RDMA_CAP_SR) ||
	    !tern_core_roce_sr(dev->tdev))
		return 0;
	cap = tern_core_roce_sr_log_cap(dev->tdev) ?: TERN_QP_XPORT_DEF_LOG_CAP;
	return TERN_ECE_SR | cap << TERN_ECE_SR_LOG_CAP_SHIFT;
}

/*
 * The device's transport options (TERN_QP_XPORT_*) for the ECE options @ece a modify_qp of
 * @qp brought, checked against what the QP offered. Return: 0, or -EINVAL.
 */
static int tern_ib_qp_ece_xport(const struct tern_ib_qp *qp, u32 ece, u32 *xport)
{
	u32 cap = (ece & TERN_ECE_SR_LOG_CAP_MASK) >> TERN_ECE_SR_LOG_CAP_SHIFT;

	*xport = 0;
	if (!ece)
		return 0;
	if ((ece & ~TERN_ECE_OPTIONS) || !(ece & TERN_ECE_SR) || !(qp->ece_offer & TERN_ECE_SR) ||
	    (cap && (cap < TERN_QP_XPORT_MIN_LOG_CAP || cap > TERN_QP_XPORT_MAX_LOG_CAP)))
		return -EINVAL;
	if (!cap)
		cap = (qp->ece_offer & TERN_ECE_SR_LOG_CAP_MASK) >> TERN_ECE_SR_LOG_CAP_SHIFT;
	*xport = TERN_QP_XPORT_SR | cap << TERN_QP_XPORT_LOG_CAP_SHIFT;
	return 0;
}

/**
 * tern_ib_create_qp() - create a QP
 * @ibqp: the QP
 * @init_attr: type RC, UD or (kernel only) GSI, CQs, capabilities (updated to what the QP
 *	really has)
 * @udata: struct tern_create_qp_cmd in, struct tern_create_qp_resp out; NULL for kernel
 *	QPs
 *
 * UD and GSI QPs need a device with TERN_RDMA_CAP_UD; the GSI QP is QPN 1. A QP on an SRQ
 * (@init_attr->srq) has no receive ring and takes its receive WQEs from the SRQ
 * (TERN_QP_F_SRQ); a kernel QP takes them from a kernel SRQ, a user QP from a user SRQ.
 * A kernel QP's CQs must be kernel CQs.
 *
 * Return: 0 or a negative errno (-EOPNOTSUPP for other types and create flags; -EINVAL
 * for capabilities or rings the device cannot take, or an SRQ of the other kind; -ENOSPC
 * when the device has no QP left).
 */
int tern_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		      struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibqp->device);
	struct tern_ib_qp *qp = to_tqp(ibqp);
	struct tern_cmd_create_qp_in in = {};
	struct tern_create_qp_resp resp = {};
	struct ib_qp_cap cap = init_attr->cap;
	u32 qpn;
	int err;

	err = tern_ib_qp_check_attr(dev, qp, init_attr, udata);
	if (err)
		return err;
	INIT_LIST_HEAD(&qp->dying);

	if (udata)
		err = tern_ib_uqp_rings(dev, qp, udata, !!init_attr->srq, &cap, &in);
	else
		err = tern_ib_kqp_rings(dev, qp, !!init_attr->srq, &cap, &in);
	if (err)
		return err;

	mutex_init(&qp->lock);
	tern_ib_obj_init(&qp->obj);
	qp->cap = cap;
	qp->sig_all = init_attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->state = IB_QPS_RESET;

	in.pdn = cpu_to_le32(to_tpd(ibqp->pd)->pdn);
	in.send_cqn = cpu_to_le32(to_tcq(init_attr->send_cq)->cqn);
	in.recv_cqn = cpu_to_le32(to_tcq(init_attr->recv_cq)->cqn);
	in.type = qp->type;
	in.flags |= qp->sig_all ? TERN_QP_F_SQ_SIG_ALL : 0;	/* RQ_DB_REC: uqp_rings */
	if (init_attr->srq) {
		in.flags |= TERN_QP_F_SRQ;
		in.srqn = cpu_to_le32(to_tsrq(init_attr->srq)->srqn);
	}
	err = tern_ib_cmd(dev, TERN_CMD_CREATE_QP, &in, sizeof(in), NULL, 0, &qpn);
	if (!qp->kernel) {
		tern_ib_queue_mem_done(dev, &qp->sq);
		tern_ib_queue_mem_done(dev, &qp->rq);
	}
	if (err)
		goto err_rings;
	qp->qpn = qpn;
	err = tern_ib_qp_check_qpn(dev, qp);
	if (err)
		goto err_destroy;
	err = tern_ib_obj_publish(dev, &dev->qp_xa, &qp->obj, qpn,
				  le32_to_cpu(dev->caps.max_qp), "QP");
	if (err)
		goto err_destroy;
	if (udata) {
		qp->ece_offer = tern_ib_qp_ece_offer(dev, qp);
		resp.qpn = qpn;
		resp.ece_options = qp->ece_offer;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	ibqp->qp_num = qpn;
	init_attr->cap = cap;
	return 0;

err_erase:
	tern_ib_obj_unpublish(&dev->qp_xa, qpn, &qp->obj);
err_destroy:
	if (tern_ib_destroy_failed(dev, "QP", qpn, tern_ib_qp_hw_destroy(dev, qpn))) {
		tern_ib_qp_rings_put(dev, qp, true);
		mutex_destroy(&qp->lock);
		return err;
	}
err_rings:
	tern_ib_qp_rings_put(dev, qp, false);
	mutex_destroy(&qp->lock);
	return err;
}

/**
 * tern_ib_build_path() - the RoCEv2 path of an address vector, as the device takes it
 * @dev: the device
 * @ah: the address vector (RoCE, with GRH); the RDMA core resolved its sgid_attr and dmac
 * @udp_sport: the UDP source port of the packets
 * @path: output (for MODIFY_QP of an RC QP, or the tern_ud_seg of UD WQEs)
 *
 * Does not sleep.
 *
 * Return: 0 or a negative errno (-EINVAL for an address vector tern cannot use).
 */
int tern_ib_build_path(struct tern_ib_dev *dev, const struct rdma_ah_attr *ah, u16 udp_sport,
		       struct tern_qp_path *path)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	u16 vlan_id = 0xffff;
	int err;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE || !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH) ||
	    rdma_ah_get_port_num(ah) != TERN_IB_PORT)
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr || sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP) {
		ibdev_dbg(&dev->ibdev, "source GID %u is not a RoCEv2 GID\n",
			  grh->sgid_index);
		return -EINVAL;
	}
	err = rdma_read_gid_l2_fields(sgid_attr, &vlan_id, path->smac);
	if (err)
		return err;
	if (is_zero_ether_addr(ah->roce.dmac))
		return -EINVAL;
	ether_addr_copy(path->dmac, ah->roce.dmac);
	path->vlan_id = cpu_to_le16(vlan_id < VLAN_N_VID ? vlan_id : TERN_VLAN_NONE);

	if (ipv6_addr_v4mapped((const struct in6_addr *)sgid_attr->gid.raw)) {
		if (!ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw))
			return -EINVAL;
		path->ip_version = 4;
		path->flow_label = 0;
	} else {
		if (ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw))
			return -EINVAL;
		path->ip_version = 6;
		path->flow_label = cpu_to_le32(grh->flow_label & IB_GRH_FLOWLABEL_MASK);
	}
	memcpy(path->sgid, sgid_attr->gid.raw, sizeof(path->sgid));
	memcpy(path->dgid, grh->dgid.raw, sizeof(path->dgid));
	path->hop_limit = grh->hop_limit;
	path->traffic_class = grh->traffic_class;
	path->sl = rdma_ah_get_sl(ah) & 7;
	path->udp_sport = cpu_to_le16(udp_sport);
	return 0;
}

/*
 * The transport attributes of a modify_qp into @a, their TERN_QP_ATTR_* bits into @mask:
 * access flags, path MTU, timers and retry counts, RDMA READ and atomic depths.
 * Return: 0, or -EINVAL for a value out of range.
 */
static int tern_ib_qp_attrs_transport(struct tern_ib_dev *dev, const struct ib_qp_attr *attr,
				      int attr_mask, struct tern_qp_attrs *a, u32 *mask)
{
	const struct tern_cmd_query_rdma_out *c = &dev->caps;

	if (attr_mask & IB_QP_ACCESS_FLAGS) {
		u32 drop = TERN_ACCESS_LOCAL_WRITE;

		/*
		 * Without TERN_RDMA_CAP_ATOMIC remote atomics are dropped: the device has no
		 * atomic operations, and its responder rejects them whatever the QP allows.
		 */
		if (!tern_ib_has_cap(dev, TERN_RDMA_CAP_ATOMIC))
			drop |= TERN_ACCESS_REMOTE_ATOMIC;
		*mask |= TERN_QP_ATTR_ACCESS;
		a->access = cpu_to_le32(tern_ib_access_to_hw(attr->qp_access_flags) & ~drop);
	}
	if (attr_mask & IB_QP_PATH_MTU) {
		if (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096)
			return -EINVAL;
		*mask |= TERN_QP_ATTR_PATH_MTU;
		a->path_mtu = attr->path_mtu;
	}
	if (attr_mask & IB_QP_TIMEOUT) {
		if (attr->timeout > 31)
			return -EINVAL;
		*mask |= TERN_QP_ATTR_TIMEOUT;
		a->timeout = attr->timeout;
	}
	if (attr_mask & IB_QP_RETRY_CNT) {
		if (attr->retry_cnt > 7)
			return -EINVAL;
		*mask |= TERN_QP_ATTR_RETRY_CNT;
		a->retry_cnt = attr->retry_cnt;
	}
	if (attr_mask & IB_QP_RNR_RETRY) {
		if (attr->rnr_retry > 7)
			return -EINVAL;
		*mask |= TERN_QP_ATTR_RNR_RETRY;
		a->rnr_retry = attr->rnr_retry;
	}
	if (attr_mask & IB_QP_MIN_RNR_TIMER) {
		if (attr->min_rnr_timer > 31)
			return -EINVAL;
		*mask |= TERN_QP_ATTR_MIN_RNR_TIMER;
		a->min_rnr_timer = attr->min_rnr_timer;
	}
	if (attr_mask & IB_QP_MAX_QP_RD_ATOMIC) {
		if (attr->max_rd_atomic > c->max_rd_atomic)
			return -EINVAL;
		*mask |= TERN_QP_ATTR_MAX_RD_ATOMIC;
		a->max_rd_atomic = attr->max_rd_atomic;
	}
	if (attr_mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		if (attr->max_dest_rd_atomic > c->max_dest_rd_atomic)
			return -EINVAL;
		*mask |= TERN_QP_ATTR_MAX_DEST_RD_ATOMIC;
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	}
	return 0;
}

/*
 * The addressing attributes of a modify_qp into @a, their TERN_QP_ATTR_* bits into @mask:
 * destination QPN, PSNs, SQD notification, Q_Key and the RoCEv2 path. Caller holds
 * qp->lock. Return: 0, -EINVAL for a value out of range, or tern_ib_build_path()'s error.
 */
static int tern_ib_qp_attrs_address(struct tern_ib_dev *dev, struct tern_ib_qp *qp,
				    const struct ib_qp_attr *attr, int attr_mask,
				    struct tern_qp_attrs *a, u32 *mask)
{
	u32 dest_qpn = qp->dest_qpn;
	int err;

	lockdep_assert_held(&qp->lock);
	if (attr_mask & IB_QP_DEST_QPN) {
		if (attr->dest_qp_num > TERN_IB_PSN_MASK)
			return -EINVAL;
		*mask |= TERN_QP_ATTR_DEST_QPN;
		dest_qpn = attr->dest_qp_num;
		a->dest_qpn = cpu_to_le32(dest_qpn);
	}
	if (attr_mask & IB_QP_RQ_PSN) {
		*mask |= TERN_QP_ATTR_RQ_PSN;
		a->rq_psn = cpu_to_le32(attr->rq_psn & TERN_IB_PSN_MASK);
	}
	if (attr_mask & IB_QP_SQ_PSN) {
		*mask |= TERN_QP_ATTR_SQ_PSN;
		a->sq_psn = cpu_to_le32(attr->sq_psn & TERN_IB_PSN_MASK);
	}
	if ((attr_mask & IB_QP_EN_SQD_ASYNC_NOTIFY) && attr->en_sqd_async_notify)
		*mask |= TERN_QP_ATTR_SQD_NOTIFY;
	if (attr_mask & IB_QP_QKEY) {
		*mask |= TERN_QP_ATTR_QKEY;
		a->qkey = cpu_to_le32(attr->qkey);
	}
	if (attr_mask & IB_QP_AV) {
		/* As the RDMA core derives it: from the flow label, or from both QPNs. */
		u16 sport = rdma_get_udp_sport(attr->ah_attr.grh.flow_label, qp->qpn, dest_qpn);

		err = tern_ib_build_path(dev, &attr->ah_attr, sport, &a->path);
		if (err)
			return err;
		*mask |= TERN_QP_ATTR_PATH;
	}
	return 0;
}

/* What the driver keeps of a modify_qp the device accepted. Caller holds qp->lock. */
static void tern_ib_qp_attrs_keep(struct tern_ib_qp *qp, const struct ib_qp_attr *attr,
				  int attr_mask, enum ib_qp_state next)
{
	lockdep_assert_held(&qp->lock);
	if (attr_mask & IB_QP_STATE)
		WRITE_ONCE(qp->state, next);
	if (attr_mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (attr_mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (attr_mask & IB_QP_AV)
		qp->sgid_index = attr->ah_attr.grh.sgid_index;
}

/**
 * tern_ib_modify_qp() - change a QP's state and attributes
 * @ibqp: the QP
 * @attr: the attributes
 * @attr_mask: IB_QP_* naming the valid ones
 * @udata: struct tern_modify_qp_cmd in (optional): the ECE options agreed for the
 *	connection, which decide the transport at INIT->RTR (none: go-back-N)
 *
 * Return: 0, -EOPNOTSUPP for attributes the device does not have (alternate path, rate
 * limit, ...), -EINVAL for an invalid transition or value, or another negative errno.
 */
int tern_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int attr_mask,
		      struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibqp->device);
	struct tern_ib_qp *qp = to_tqp(ibqp);
	struct tern_cmd_modify_qp_in in = {};
	struct tern_modify_qp_cmd cmd = {};
	enum ib_qp_state cur, next;
	u32 mask = 0, xport;
	int err;

	if (attr_mask & ~TERN_IB_QP_ATTRS)
		return -EOPNOTSUPP;
	if (udata && udata->inlen) {
		err = tern_ib_udata_cmd(udata, &cmd, sizeof(cmd), sizeof(cmd), 0);
		if (err)
			return err;
		if (cmd.rsvd)
			return -EINVAL;
	}
	err = tern_ib_qp_ece_xport(qp, cmd.ece_options, &xport);
	if (err)
		return err;
	if (((attr_mask & IB_QP_PKEY_INDEX) && attr->pkey_index) ||
	    ((attr_mask & IB_QP_PORT) && attr->port_num != TERN_IB_PORT))
		return -EINVAL;

	mutex_lock(&qp->lock);
	cur = (attr_mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : READ_ONCE(qp->state);
	next = (attr_mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, attr_mask)) {
		ibdev_dbg(&dev->ibdev, "modify_qp %u: %d -> %d with mask %#x not allowed\n",
			  qp->qpn, cur, next, attr_mask);
		err = -EINVAL;
		goto out;
	}
	if (attr_mask & IB_QP_STATE) {
		mask |= TERN_QP_ATTR_STATE;
		in.attrs.state = next;
	}
	err = tern_ib_qp_attrs_transport(dev, attr, attr_mask, &in.attrs, &mask);
	if (!err)
		err = tern_ib_qp_attrs_address(dev, qp, attr, attr_mask, &in.attrs, &mask);
	if (err)
		goto out;
	/*
	 * the transport agreed for the connection, from INIT->RTR on (RESET: go-back-N), and
	 * the port's adaptive retransmit timer for every RC QP (no agreement needed)
	 */
	if (qp->type == TERN_QPT_RC && cur == IB_QPS_INIT && next == IB_QPS_RTR &&
	    tern_ib_has_cap(dev, TERN_RDMA_CAP_ADAPTIVE_RTO) &&
	    tern_core_roce_adaptive_rto(dev->tdev))
		xport |= TERN_QP_XPORT_ADAPTIVE_RTO;
	if (xport && cur == IB_QPS_INIT && next == IB_QPS_RTR) {
		mask |= TERN_QP_ATTR_XPORT;
		in.xport = cpu_to_le32(xport);
	}

	in.qpn = cpu_to_le32(qp->qpn);
	in.attr_mask = cpu_to_le32(mask);
	err = tern_ib_cmd(dev, TERN_CMD_MODIFY_QP, &in, sizeof(in), NULL, 0, NULL);
	if (err) {
		ibdev_dbg(&dev->ibdev, "MODIFY_QP %u (%d -> %d, mask %#x) failed: %d\n",
			  qp->qpn, cur, next, mask, err);
		/* BAD_STATE: the device's view of the transition differs (e.g. QP in error). */
		if (err == -EBUSY)
			err = -EINVAL;
		goto out;
	}
	tern_ib_qp_attrs_keep(qp, attr, attr_mask, next);
out:
	mutex_unlock(&qp->lock);
	return err;
}

/**
 * tern_ib_query_qp() - a QP's attributes as the device reports them
 * @ibqp: the QP
 * @attr: output
 * @attr_mask: ignored: everything is filled in
 * @init_attr: output: creation attributes
 *
 * Return: 0 or a negative errno.
 */
int tern_ib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int attr_mask,
		     struct ib_qp_init_attr *init_attr)
{
	struct tern_ib_dev *dev = to_tibdev(ibqp->device);
	struct tern_ib_qp *qp = to_tqp(ibqp);
	struct tern_cmd_query_qp_in in = { .qpn = cpu_to_le32(qp->qpn) };
	struct tern_cmd_query_qp_out out = {};
	const struct tern_qp_attrs *a = &out.attrs;
	const struct tern_qp_path *p = &a->path;
	struct ib_global_route *grh;
	int err;

	mutex_lock(&qp->lock);
	err = tern_ib_cmd(dev, TERN_CMD_QUERY_QP, &in, sizeof(in), &out, sizeof(out), NULL);
	if (err)
		goto out;
	if (a->state > TERN_QPS_ERR) {
		err = -EIO;
		goto out;
	}
	WRITE_ONCE(qp->state, (enum ib_qp_state)a->state);

	memset(attr, 0, sizeof(*attr));
	attr->qp_state = a->state;
	attr->cur_qp_state = a->state;
	attr->path_mtu = a->path_mtu ? a->path_mtu : IB_MTU_256;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->rq_psn = le32_to_cpu(a->rq_psn) & TERN_IB_PSN_MASK;
	attr->sq_psn = le32_to_cpu(a->sq_psn) & TERN_IB_PSN_MASK;
	attr->dest_qp_num = le32_to_cpu(a->dest_qpn);
	attr->qp_access_flags = tern_ib_access_from_hw(le32_to_cpu(a->access));
	attr->cap = qp->cap;
	attr->sq_draining = !!(le32_to_cpu(out.status) & TERN_QP_STATUS_SQ_DRAINING);
	attr->max_rd_atomic = a->max_rd_atomic;
	attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr->min_rnr_timer = a->min_rnr_timer;
	attr->port_num = TERN_IB_PORT;
	attr->timeout = a->timeout;
	attr->retry_cnt = a->retry_cnt;
	attr->rnr_retry = a->rnr_retry;
	attr->qkey = le32_to_cpu(a->qkey);
	attr->pkey_index = 0;

	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->event_handler = ibqp->event_handler;
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->srq = ibqp->srq;
	init_attr->cap = qp->cap;
	init_attr->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init_attr->qp_type = ibqp->qp_type;
	init_attr->port_num = TERN_IB_PORT;
	if (tern_ib_qpt_ud(qp->type))
		goto out;	/* UD and GSI QPs have no path of their own */

	attr->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr->ah_attr, TERN_IB_PORT);
	rdma_ah_set_sl(&attr->ah_attr, p->sl);
	memcpy(attr->ah_attr.roce.dmac, p->dmac, ETH_ALEN);
	rdma_ah_set_ah_flags(&attr->ah_attr, IB_AH_GRH);
	grh = rdma_ah_retrieve_grh(&attr->ah_attr);
	memcpy(grh->dgid.raw, p->dgid, sizeof(grh->dgid.raw));
	grh->flow_label = le32_to_cpu(p->flow_label) & IB_GRH_FLOWLABEL_MASK;
	grh->sgid_index = qp->sgid_index;
	grh->hop_limit = p->hop_limit;
	grh->traffic_class = p->traffic_class;

out:
	mutex_unlock(&qp->lock);
	return err;
}

/*
 * The congestion control of a connected QP as QUERY_QP reports it: HPCC's window, rate,
 * utilisation (1/1000 of the bottleneck) and stage when its priority runs HPCC; TIMELY's
 * rate, last RTT sample, smoothed RTT difference and run of non-positive gradients when it
 * runs TIMELY; else DCQCN's rate and alpha. Returns 0 or -EMSGSIZE.
 */
static int tern_ib_fill_res_qp_cc(struct sk_buff *msg, const struct tern_cmd_query_qp_out *out)
{
	char diff[12];

	if (le32_to_cpu(out->status) & TERN_QP_STATUS_TIMELY) {
		/* signed: a string, as this kernel has no driver attribute for an s32 */
		snprintf(diff, sizeof(diff), "%d", (s32)le32_to_cpu(out->timely_rtt_diff_ns));
		return rdma_nl_put_driver_u32(msg, "timely_rate_mbps",
					      le32_to_cpu(out->timely_rate_mbps)) ||
		       rdma_nl_put_driver_u32(msg, "timely_rtt_ns",
					      le32_to_cpu(out->timely_rtt_ns)) ||
		       rdma_nl_put_driver_string(msg, "timely_rtt_diff_ns", diff) ||
		       rdma_nl_put_driver_u32(msg, "timely_hai_count", out->timely_hai_count) ||
		       rdma_nl_put_driver_u32(msg, "timely_pacer_mbps",
					      le32_to_cpu(out->cc_rate_mbps)) ?
		       -EMSGSIZE : 0;
	}
	if (le32_to_cpu(out->status) & TERN_QP_STATUS_HPCC)
		return rdma_nl_put_driver_u32(msg, "hpcc_window", le32_to_cpu(out->hpcc_window)) ||
		       rdma_nl_put_driver_u32(msg, "hpcc_rate_mbps",
					      le32_to_cpu(out->cc_rate_mbps)) ||
		       rdma_nl_put_driver_u32(msg, "hpcc_util", le16_to_cpu(out->hpcc_util)) ||
		       rdma_nl_put_driver_u32(msg, "hpcc_inc_stage", out->hpcc_inc_stage) ?
		       -EMSGSIZE : 0;
	return rdma_nl_put_driver_u32(msg, "dcqcn_rate_mbps", le32_to_cpu(out->cc_rate_mbps)) ||
	       rdma_nl_put_driver_u32(msg, "dcqcn_alpha", le32_to_cpu(out->cc_alpha)) ?
	       -EMSGSIZE : 0;
}

/*
 * The transport of an RC QP as the device runs it (@out): "transport" go-back-n (standard
 * RoCEv2) or selective-repeat with its in-flight cap, whether the adaptive retransmit timer
 * runs, the measured round trip and the retransmit timeout armed now (ns; 0 from a device
 * whose reply ends before them). Returns 0 or -EMSGSIZE.
 */
static int tern_ib_fill_res_qp_xport(struct sk_buff *msg,
				     const struct tern_cmd_query_qp_out *out)
{
	u32 xport = le32_to_cpu(out->xport);
	u32 cap = (xport & TERN_QP_XPORT_LOG_CAP_MASK) >> TERN_QP_XPORT_LOG_CAP_SHIFT;

	if (!(xport & TERN_QP_XPORT_SR)) {
		if (rdma_nl_put_driver_string(msg, "transport", "go-back-n"))
			return -EMSGSIZE;
	} else if (rdma_nl_put_driver_string(msg, "transport", "selective-repeat") ||
		   rdma_nl_put_driver_u32(msg, "sr_inflight_cap",
					  1u << (cap ?: TERN_QP_XPORT_DEF_LOG_CAP))) {
		return -EMSGSIZE;
	}
	return rdma_nl_put_driver_u32(msg, "adaptive_rto",
				      !!(xport & TERN_QP_XPORT_ADAPTIVE_RTO)) ||
	       rdma_nl_put_driver_u64(msg, "srtt_ns", le64_to_cpu(out->srtt_ns)) ||
	       rdma_nl_put_driver_u64(msg, "rttvar_ns", le64_to_cpu(out->rttvar_ns)) ||
	       rdma_nl_put_driver_u64(msg, "rto_ns", le64_to_cpu(out->rto_ns)) ? -EMSGSIZE : 0;
}

/**
 * tern_ib_fill_res_qp_entry() - the device's own view of a QP for ``rdma res show qp -dd``
 * @msg: the netlink message the RDMA core is filling
 * @ibqp: the QP (held by restrack for the call)
 *
 * Process context (restrack's lock is not held). Asks the firmware (QUERY_QP) for the WQEs
 * it has completed, whether an SQD drain is still running, the retry settings in force and
 * the congestion-control state it keeps: the DCQCN rate (Mb/s, 0 when not limited) and alpha
 * (1/1024 units), or HPCC's window, rate and utilisation, so that an admin sees why one QP is
 * slow.
 *
 * Return: 0, -EMSGSIZE when @msg is full, or the command's errno.
 */
int tern_ib_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct tern_ib_dev *dev = to_tibdev(ibqp->device);
	struct tern_ib_qp *qp = to_tqp(ibqp);
	struct tern_cmd_query_qp_in in = { .qpn = cpu_to_le32(qp->qpn) };
	struct tern_cmd_query_qp_out out = {};
	struct nlattr *table;
	int err;

	mutex_lock(&qp->lock);
	err = tern_ib_cmd(dev, TERN_CMD_QUERY_QP, &in, sizeof(in), &out, sizeof(out), NULL);
	mutex_unlock(&qp->lock);
	if (err)
		return err;

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "sq_ci", le16_to_cpu(out.sq_ci)) ||
	    rdma_nl_put_driver_u32(msg, "rq_ci", le16_to_cpu(out.rq_ci)) ||
	    rdma_nl_put_driver_u32(msg, "sq_draining",
				   !!(le32_to_cpu(out.status) & TERN_QP_STATUS_SQ_DRAINING)))
		goto err;
	if (qp->type == TERN_QPT_RC && tern_ib_fill_res_qp_xport(msg, &out))
		goto err;
	if (qp->type == TERN_QPT_RC &&
	    (rdma_nl_put_driver_u32(msg, "timeout", out.attrs.timeout) ||
	     rdma_nl_put_driver_u32(msg, "retry_cnt", out.attrs.retry_cnt) ||
	     rdma_nl_put_driver_u32(msg, "rnr_retry", out.attrs.rnr_retry)))
		goto err;
	if (!tern_ib_qpt_ud(qp->type) && tern_ib_fill_res_qp_cc(msg, &out))
		goto err;
	nla_nest_end(msg, table);
	return 0;

err:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

/**
 * tern_ib_destroy_qp() - destroy a QP
 * @ibqp: the QP
 * @udata: unused
 *
 * No event handler runs for the QP once this returns; its rings are unpinned unless the
 * device, alive, refused to destroy it.
 *
 * Return: 0.
 */
int tern_ib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibqp->device);
	struct tern_ib_srq *srq = ibqp->srq ? to_tsrq(ibqp->srq) : NULL;
	struct tern_ib_qp *qp = to_tqp(ibqp);
	bool hold;

	/* The receive CQEs poll_cq drops from now on still give their SRQ slots back. */
	if (qp->kernel && srq)
		tern_ib_cq_dying(to_tcq(ibqp->recv_cq), qp, true);
	tern_ib_obj_unpublish(&dev->qp_xa, qp->qpn, &qp->obj);

	hold = tern_ib_destroy_failed(dev, "QP", qp->qpn, tern_ib_qp_hw_destroy(dev, qp->qpn));
	if (qp->kernel) {
		/* poll_cq must not hand out this QP's completions any more. */
		if (ibqp->recv_cq != ibqp->send_cq)
			tern_ib_cq_clean(to_tcq(ibqp->send_cq), qp->qpn, NULL);
		tern_ib_cq_clean(to_tcq(ibqp->recv_cq), qp->qpn, srq);
		if (srq)
			tern_ib_cq_dying(to_tcq(ibqp->recv_cq), qp, false);
	}
	tern_ib_qp_rings_put(dev, qp, hold);
	mutex_destroy(&qp->lock);
	return 0;
}

/*
 * ATTACH_MCAST or DETACH_MCAST of @ibqp to the group @gid. The group table lives in the
 * device, which serializes the commands: the driver keeps no state of its own for it.
 */
static int tern_ib_mcast_cmd(struct ib_qp *ibqp, union ib_gid *gid, u16 opcode)
{
	struct tern_ib_dev *dev = to_tibdev(ibqp->device);
	struct tern_cmd_mcast_in in = {};

	if (!tern_ib_has_cap(dev, TERN_RDMA_CAP_MCAST))
		return -EOPNOTSUPP;
	if (ibqp->qp_type != IB_QPT_UD ||
	    !rdma_is_multicast_addr((struct in6_addr *)gid->raw))
		return -EINVAL;
	memcpy(in.gid, gid->raw, sizeof(in.gid));
	in.qpn = cpu_to_le32(to_tqp(ibqp)->qpn);
	return tern_ib_cmd(dev, opcode, &in, sizeof(in), NULL, 0, NULL);
}

/**
 * tern_ib_attach_mcast() - attach a UD QP to a multicast group
 * @ibqp: the QP
 * @gid: the group (IPv6 multicast or IPv4-mapped multicast GID)
 * @lid: unused on RoCE
 *
 * Sleeps. Attaching a QP that is already attached succeeds.
 *
 * Return: 0, -EINVAL for a QP that is not UD or a GID that is not multicast, -ENOSPC when
 * the device's group table or the group is full, or another negative errno.
 */
int tern_ib_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return tern_ib_mcast_cmd(ibqp, gid, TERN_CMD_ATTACH_MCAST);
}

/**
 * tern_ib_detach_mcast() - detach a UD QP from a multicast group
 * @ibqp: the QP
 * @gid: the group
 * @lid: unused on RoCE
 *
 * Sleeps.
 *
 * Return: 0, -EINVAL for a QP that is not UD, a GID that is not multicast or a QP that is
 * not attached to the group, or another negative errno.
 */
int tern_ib_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	int err = tern_ib_mcast_cmd(ibqp, gid, TERN_CMD_DETACH_MCAST);

	return err == -ENOENT ? -EINVAL : err;
}
