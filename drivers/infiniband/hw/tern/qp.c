// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern_ib: queue pairs (RC, user space). The provider allocates both rings and picks their
 * depths and strides; the driver checks them against the device's limits and the requested
 * capabilities, pins the rings and creates the QP. modify_qp translates the verbs'
 * attributes, including the RoCEv2 path (addresses, VLAN, traffic class, UDP source port),
 * into struct tern_qp_attrs.
 */

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>

#include "tern_ib.h"

/* modify_qp attributes tern_ib translates; IB_QP_PKEY_INDEX and IB_QP_PORT only as 0/1. */
#define TERN_IB_QP_ATTRS (IB_QP_STATE | IB_QP_CUR_STATE | IB_QP_EN_SQD_ASYNC_NOTIFY |	\
			  IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_AV |	\
			  IB_QP_PATH_MTU | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |		\
			  IB_QP_RNR_RETRY | IB_QP_RQ_PSN | IB_QP_MAX_QP_RD_ATOMIC |	\
			  IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |	\
			  IB_QP_DEST_QPN)

#define TERN_IB_PSN_MASK	0xffffff

/**
 * tern_ib_access_to_hw() - translate IB_ACCESS_* into TERN_ACCESS_*
 * @ib_access: IB_ACCESS_* flags
 *
 * Return: the TERN_ACCESS_* flags (atomics never: the device has no atomic operations).
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

static struct tern_ib_qp *tern_ib_qp_get(struct tern_ib_dev *dev, u32 qpn)
{
	struct tern_ib_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&dev->qp_xa, flags);
	qp = xa_load(&dev->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->refcount))
		qp = NULL;
	xa_unlock_irqrestore(&dev->qp_xa, flags);
	return qp;
}

static void tern_ib_qp_put(struct tern_ib_qp *qp)
{
	if (refcount_dec_and_test(&qp->refcount))
		complete(&qp->free);
}

/**
 * tern_ib_qp_event() - an affiliated QP event of the async EQ
 * @dev: the device
 * @eqe: TERN_EQE_QP_EVENT
 *
 * Hard interrupt context: reports the event to the QP's owner.
 */
void tern_ib_qp_event(struct tern_ib_dev *dev, const struct tern_eqe *eqe)
{
	u32 qpn = le32_to_cpu(eqe->data[0]);
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
	default:
		ibdev_warn_ratelimited(&dev->ibdev, "unknown QP event %u for QP %u\n",
				       eqe->subtype, qpn);
		return;
	}
	qp = tern_ib_qp_get(dev, qpn);
	if (!qp)
		return;
	if (eqe->subtype == TERN_QP_EV_FATAL)
		WRITE_ONCE(qp->state, IB_QPS_ERR);
	if (qp->ibqp.event_handler) {
		ev.device = &dev->ibdev;
		ev.element.qp = &qp->ibqp;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
	tern_ib_qp_put(qp);
}

static int tern_ib_qp_hw_destroy(struct tern_ib_dev *dev, u32 qpn)
{
	struct tern_cmd_destroy_qp_in in = { .qpn = cpu_to_le32(qpn) };

	return tern_ib_cmd(dev, TERN_CMD_DESTROY_QP, &in, sizeof(in), NULL, 0, NULL);
}

/* Check the provider's ring geometry against the device and the requested capabilities. */
static int tern_ib_qp_check_cmd(struct tern_ib_dev *dev, const struct tern_create_qp_cmd *cmd,
				struct ib_qp_cap *cap)
{
	const struct tern_cmd_query_rdma_out *c = &dev->caps;
	u32 sq_slot, rq_slot, send_sge, recv_sge, inl;

	if (cmd->rsvd || !cmd->log_sq_depth || cmd->log_sq_depth > c->max_sq_log_depth ||
	    !cmd->log_rq_depth || cmd->log_rq_depth > c->max_rq_log_depth ||
	    cmd->log_sq_stride < TERN_SQ_MIN_LOG_STRIDE ||
	    cmd->log_sq_stride > TERN_SQ_MAX_LOG_STRIDE ||
	    cmd->log_rq_stride < TERN_RQ_MIN_LOG_STRIDE ||
	    cmd->log_rq_stride > TERN_RQ_MAX_LOG_STRIDE) {
		ibdev_dbg(&dev->ibdev, "create_qp: bad ring geometry sq %u/%u rq %u/%u\n",
			  cmd->log_sq_depth, cmd->log_sq_stride, cmd->log_rq_depth,
			  cmd->log_rq_stride);
		return -EINVAL;
	}
	sq_slot = 1u << cmd->log_sq_stride;
	rq_slot = 1u << cmd->log_rq_stride;
	send_sge = min_t(u32, c->max_send_sge,
			 (sq_slot - sizeof(struct tern_sq_wqe)) / sizeof(struct tern_sge));
	recv_sge = min_t(u32, c->max_recv_sge,
			 (rq_slot - sizeof(struct tern_rq_wqe)) / sizeof(struct tern_sge));
	inl = min_t(u32, le16_to_cpu(c->max_inline), sq_slot - sizeof(struct tern_sq_wqe));

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
	cap->max_recv_wr = 1u << cmd->log_rq_depth;
	cap->max_send_sge = send_sge;
	cap->max_recv_sge = recv_sge;
	cap->max_inline_data = inl;
	return 0;
}

/**
 * tern_ib_create_qp() - create a user RC QP
 * @ibqp: the QP
 * @init_attr: type RC, CQs, capabilities (updated to what the QP really has)
 * @udata: struct tern_create_qp_cmd in, struct tern_create_qp_resp out; NULL for kernel
 *	QPs, which are not supported
 *
 * Return: 0 or a negative errno (-EOPNOTSUPP for kernel QPs, other types, SRQs and create
 * flags; -EINVAL for capabilities or rings the device cannot take; -ENOSPC when the device
 * has no QP left).
 */
int tern_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		      struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tdev(ibqp->device);
	struct tern_ib_qp *qp = to_tqp(ibqp);
	struct tern_cmd_create_qp_in in = {};
	struct tern_create_qp_resp resp = {};
	struct tern_create_qp_cmd cmd = {};
	struct ib_qp_cap cap = init_attr->cap;
	struct tern_ib_ucontext *uc;
	u32 qpn;
	int err;

	if (!udata || init_attr->qp_type != IB_QPT_RC || init_attr->srq ||
	    init_attr->create_flags || init_attr->rwq_ind_tbl)
		return -EOPNOTSUPP;
	if (!init_attr->send_cq || !init_attr->recv_cq)
		return -EINVAL;
	if (udata->inlen < offsetofend(struct tern_create_qp_cmd, log_rq_stride) ||
	    udata->outlen < sizeof(resp))
		return -EINVAL;
	err = ib_copy_from_udata(&cmd, udata, min(udata->inlen, sizeof(cmd)));
	if (err)
		return err;
	if (udata->inlen > sizeof(cmd) &&
	    !ib_is_udata_cleared(udata, sizeof(cmd), udata->inlen - sizeof(cmd)))
		return -EINVAL;
	err = tern_ib_qp_check_cmd(dev, &cmd, &cap);
	if (err)
		return err;
	uc = rdma_udata_to_drv_context(udata, struct tern_ib_ucontext, ibuc);

	err = tern_ib_queue_mem_get(dev, &qp->sq, cmd.sq_va, cmd.sq_len,
				    (size_t)1 << (cmd.log_sq_depth + cmd.log_sq_stride));
	if (err)
		return err;
	err = tern_ib_queue_mem_get(dev, &qp->rq, cmd.rq_va, cmd.rq_len,
				    (size_t)1 << (cmd.log_rq_depth + cmd.log_rq_stride));
	if (err)
		goto err_sq;

	mutex_init(&qp->lock);
	refcount_set(&qp->refcount, 1);
	init_completion(&qp->free);
	qp->cap = cap;
	qp->sig_all = init_attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->state = IB_QPS_RESET;

	in.pdn = cpu_to_le32(to_tpd(ibqp->pd)->pdn);
	in.send_cqn = cpu_to_le32(to_tcq(init_attr->send_cq)->cqn);
	in.recv_cqn = cpu_to_le32(to_tcq(init_attr->recv_cq)->cqn);
	in.type = TERN_QPT_RC;
	in.flags = qp->sig_all ? TERN_QP_F_SQ_SIG_ALL : 0;
	in.uar = cpu_to_le16(uc->uar);
	in.log_sq_depth = cmd.log_sq_depth;
	in.log_sq_stride = cmd.log_sq_stride;
	in.log_rq_depth = cmd.log_rq_depth;
	in.log_rq_stride = cmd.log_rq_stride;
	in.sq_mem = qp->sq.desc;
	in.rq_mem = qp->rq.desc;
	err = tern_ib_cmd(dev, TERN_CMD_CREATE_QP, &in, sizeof(in), NULL, 0, &qpn);
	tern_ib_queue_mem_done(dev, &qp->sq);
	tern_ib_queue_mem_done(dev, &qp->rq);
	if (err)
		goto err_rq;
	qp->qpn = qpn;
	if (qpn < 2 || qpn >= le32_to_cpu(dev->caps.max_qp)) {
		ibdev_err(&dev->ibdev, "CREATE_QP returned QPN %u (valid 2..%u)\n", qpn,
			  le32_to_cpu(dev->caps.max_qp) - 1);
		err = -EIO;
		goto err_destroy;
	}
	err = xa_insert_irq(&dev->qp_xa, qpn, qp, GFP_KERNEL);
	if (err) {
		ibdev_err(&dev->ibdev, "QPN %u already in use: %d\n", qpn, err);
		err = -EIO;
		goto err_destroy;
	}
	resp.qpn = qpn;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_erase;
	ibqp->qp_num = qpn;
	init_attr->cap = cap;
	return 0;

err_erase:
	xa_erase_irq(&dev->qp_xa, qpn);
	tern_ib_qp_put(qp);
	wait_for_completion(&qp->free);
err_destroy:
	if (tern_ib_destroy_failed(dev, "QP", qpn, tern_ib_qp_hw_destroy(dev, qpn))) {
		tern_ib_queue_mem_put(dev, &qp->rq, true);
		tern_ib_queue_mem_put(dev, &qp->sq, true);
		return err;
	}
err_rq:
	tern_ib_queue_mem_put(dev, &qp->rq, false);
err_sq:
	tern_ib_queue_mem_put(dev, &qp->sq, false);
	return err;
}

/* The RoCEv2 path of an address vector; the RDMA core resolved its sgid_attr and dmac. */
static int tern_ib_fill_path(struct tern_ib_dev *dev, struct tern_ib_qp *qp,
			     const struct rdma_ah_attr *ah, u32 dest_qpn,
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
		ibdev_dbg(&dev->ibdev, "modify_qp: source GID %u is not a RoCEv2 GID\n",
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
	/* As the RDMA core derives it: from the flow label, or from both QPNs without one. */
	path->udp_sport = cpu_to_le16(rdma_get_udp_sport(grh->flow_label, qp->qpn, dest_qpn));
	return 0;
}

/**
 * tern_ib_modify_qp() - change a QP's state and attributes
 * @ibqp: the QP
 * @attr: the attributes
 * @attr_mask: IB_QP_* naming the valid ones
 * @udata: no driver data
 *
 * Return: 0, -EOPNOTSUPP for attributes the device does not have (alternate path, rate
 * limit, ...), -EINVAL for an invalid transition or value, or another negative errno.
 */
int tern_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int attr_mask,
		      struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tdev(ibqp->device);
	const struct tern_cmd_query_rdma_out *c = &dev->caps;
	struct tern_ib_qp *qp = to_tqp(ibqp);
	struct tern_cmd_modify_qp_in in = {};
	struct tern_qp_attrs *a = &in.attrs;
	enum ib_qp_state cur, next;
	u32 mask = 0, dest_qpn;
	int err;

	if (attr_mask & ~TERN_IB_QP_ATTRS)
		return -EOPNOTSUPP;
	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (((attr_mask & IB_QP_PKEY_INDEX) && attr->pkey_index) ||
	    ((attr_mask & IB_QP_PORT) && attr->port_num != TERN_IB_PORT))
		return -EINVAL;

	mutex_lock(&qp->lock);
	cur = (attr_mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : READ_ONCE(qp->state);
	next = (attr_mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, IB_QPT_RC, attr_mask)) {
		ibdev_dbg(&dev->ibdev, "modify_qp %u: %d -> %d with mask %#x not allowed\n",
			  qp->qpn, cur, next, attr_mask);
		err = -EINVAL;
		goto out;
	}
	err = -EINVAL;
	if (attr_mask & IB_QP_STATE) {
		mask |= TERN_QP_ATTR_STATE;
		a->state = next;
	}
	if (attr_mask & IB_QP_ACCESS_FLAGS) {
		/*
		 * Remote atomics are dropped: the device has no atomic operations, and its
		 * responder rejects them whatever the QP allows.
		 */
		mask |= TERN_QP_ATTR_ACCESS;
		a->access = cpu_to_le32(tern_ib_access_to_hw(attr->qp_access_flags) &
					~TERN_ACCESS_LOCAL_WRITE);
	}
	if (attr_mask & IB_QP_PATH_MTU) {
		if (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096)
			goto out;
		mask |= TERN_QP_ATTR_PATH_MTU;
		a->path_mtu = attr->path_mtu;
	}
	if (attr_mask & IB_QP_TIMEOUT) {
		if (attr->timeout > 31)
			goto out;
		mask |= TERN_QP_ATTR_TIMEOUT;
		a->timeout = attr->timeout;
	}
	if (attr_mask & IB_QP_RETRY_CNT) {
		if (attr->retry_cnt > 7)
			goto out;
		mask |= TERN_QP_ATTR_RETRY_CNT;
		a->retry_cnt = attr->retry_cnt;
	}
	if (attr_mask & IB_QP_RNR_RETRY) {
		if (attr->rnr_retry > 7)
			goto out;
		mask |= TERN_QP_ATTR_RNR_RETRY;
		a->rnr_retry = attr->rnr_retry;
	}
	if (attr_mask & IB_QP_MIN_RNR_TIMER) {
		if (attr->min_rnr_timer > 31)
			goto out;
		mask |= TERN_QP_ATTR_MIN_RNR_TIMER;
		a->min_rnr_timer = attr->min_rnr_timer;
	}
	if (attr_mask & IB_QP_MAX_QP_RD_ATOMIC) {
		if (attr->max_rd_atomic > c->max_rd_atomic)
			goto out;
		mask |= TERN_QP_ATTR_MAX_RD_ATOMIC;
		a->max_rd_atomic = attr->max_rd_atomic;
	}
	if (attr_mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		if (attr->max_dest_rd_atomic > c->max_dest_rd_atomic)
			goto out;
		mask |= TERN_QP_ATTR_MAX_DEST_RD_ATOMIC;
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	}
	dest_qpn = qp->dest_qpn;
	if (attr_mask & IB_QP_DEST_QPN) {
		if (attr->dest_qp_num > TERN_IB_PSN_MASK)
			goto out;
		mask |= TERN_QP_ATTR_DEST_QPN;
		dest_qpn = attr->dest_qp_num;
		a->dest_qpn = cpu_to_le32(dest_qpn);
	}
	if (attr_mask & IB_QP_RQ_PSN) {
		mask |= TERN_QP_ATTR_RQ_PSN;
		a->rq_psn = cpu_to_le32(attr->rq_psn & TERN_IB_PSN_MASK);
	}
	if (attr_mask & IB_QP_SQ_PSN) {
		mask |= TERN_QP_ATTR_SQ_PSN;
		a->sq_psn = cpu_to_le32(attr->sq_psn & TERN_IB_PSN_MASK);
	}
	if ((attr_mask & IB_QP_EN_SQD_ASYNC_NOTIFY) && attr->en_sqd_async_notify)
		mask |= TERN_QP_ATTR_SQD_NOTIFY;
	if (attr_mask & IB_QP_AV) {
		err = tern_ib_fill_path(dev, qp, &attr->ah_attr, dest_qpn, &a->path);
		if (err)
			goto out;
		mask |= TERN_QP_ATTR_PATH;
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
	if (attr_mask & IB_QP_STATE)
		WRITE_ONCE(qp->state, next);
	if (attr_mask & IB_QP_DEST_QPN)
		qp->dest_qpn = dest_qpn;
	if (attr_mask & IB_QP_AV)
		qp->sgid_index = attr->ah_attr.grh.sgid_index;
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
	struct tern_ib_dev *dev = to_tdev(ibqp->device);
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

	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->event_handler = ibqp->event_handler;
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->cap = qp->cap;
	init_attr->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init_attr->qp_type = IB_QPT_RC;
	init_attr->port_num = TERN_IB_PORT;
out:
	mutex_unlock(&qp->lock);
	return err;
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
	struct tern_ib_dev *dev = to_tdev(ibqp->device);
	struct tern_ib_qp *qp = to_tqp(ibqp);
	bool hold;

	xa_erase_irq(&dev->qp_xa, qp->qpn);
	tern_ib_qp_put(qp);
	wait_for_completion(&qp->free);

	hold = tern_ib_destroy_failed(dev, "QP", qp->qpn, tern_ib_qp_hw_destroy(dev, qp->qpn));
	tern_ib_queue_mem_put(dev, &qp->rq, hold);
	tern_ib_queue_mem_put(dev, &qp->sq, hold);
	mutex_destroy(&qp->lock);
	return 0;
}
