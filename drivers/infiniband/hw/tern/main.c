// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern_ib: auxiliary driver, ib_device registration, device and port attributes, port
 * events, RDMA event dispatch and completion EQs.
 *
 * Probe: QUERY_RDMA (a device that refuses it has no RDMA: probe fails with a message),
 * completion EQs (one per MSI-X vector tern_core leaves for them), the async handler, the
 * ib_device "tern%d" with port 1 on the core's netdev, then the netdevice notifier. Remove
 * runs the same steps backwards; ib_unregister_device() destroys what user space still
 * holds (disassociating live contexts) while commands still work.
 */

#include <linux/etherdevice.h>
#include <linux/io.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/random.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "tern_ib.h"

/**
 * tern_ib_cmd() - run a firmware command of the device
 * @dev: the device
 * @opcode: the command
 * @in: input, or NULL
 * @in_len: bytes of input
 * @out: output buffer, or NULL
 * @out_len: size of @out
 * @result: the command's result, or NULL
 *
 * Sleeps. See tern_core_cmd() for the errors.
 *
 * Return: 0 or a negative errno.
 */
int tern_ib_cmd(struct tern_ib_dev *dev, u16 opcode, const void *in, size_t in_len,
		void *out, size_t out_len, u32 *result)
{
	return tern_core_cmd(dev->tdev, opcode, in, in_len, out, out_len, result);
}

/**
 * tern_ib_destroy_failed() - report a failed destroy command and say whether to hold back
 *	the object's memory
 * @dev: the device
 * @what: the object's kind, for the message
 * @num: the object's number
 * @err: the destroy command's result
 *
 * Return: true when the device is alive and may still use the object's memory (the caller
 * hands it to tern_ib_zombie_add()); false when the memory may be freed.
 */
bool tern_ib_destroy_failed(struct tern_ib_dev *dev, const char *what, u32 num, int err)
{
	if (!err)
		return false;
	if (!tern_core_alive(dev->tdev))
		return false;
	ibdev_err(&dev->ibdev, "destroying %s %u failed: %d; its memory is held until the device is removed\n",
		  what, num, err);
	return true;
}

/**
 * tern_ib_zombie_add() - hold pinned memory the device may still use until removal
 * @dev: the device
 * @umem: pinned user pages, or NULL; ownership moves to @dev
 *
 * When even the bookkeeping cannot be allocated, the pages stay pinned for good: releasing
 * them under DMA would be worse.
 */
void tern_ib_zombie_add(struct tern_ib_dev *dev, struct ib_umem *umem)
{
	struct tern_ib_zombie *z;

	if (!umem)
		return;
	z = kzalloc(sizeof(*z), GFP_KERNEL);
	if (!z) {
		ibdev_err(&dev->ibdev, "leaking pinned memory of a failed destroy\n");
		return;
	}
	z->umem = umem;
	spin_lock(&dev->zombie_lock);
	list_add_tail(&z->node, &dev->zombies);
	spin_unlock(&dev->zombie_lock);
}

static void tern_ib_zombies_free(struct tern_ib_dev *dev)
{
	struct tern_ib_zombie *z, *tmp;

	list_for_each_entry_safe(z, tmp, &dev->zombies, node) {
		list_del(&z->node);
		ib_umem_release(z->umem);
		kfree(z);
	}
}

/**
 * tern_ib_udata_cmd() - copy a driver command from the provider, checking its length
 * @udata: the verb's udata
 * @cmd: the command structure, zeroed by the caller (fields an older provider does not send
 *	 stay zero)
 * @len: sizeof(*@cmd)
 * @min_len: the bytes every provider sends (up to the last field the verb needs)
 * @resp_len: the bytes of response the verb writes back, 0 for none
 *
 * A newer provider may send a longer command: the bytes this driver does not know must be
 * zero. Shared by create_cq, resize_cq, create_qp, modify_qp and create_srq.
 *
 * Return: 0; -EINVAL for a command shorter than @min_len, a response buffer shorter than
 * @resp_len or unknown non-zero bytes; -EFAULT for an unreadable command.
 */
int tern_ib_udata_cmd(struct ib_udata *udata, void *cmd, size_t len, size_t min_len,
		      size_t resp_len)
{
	int err;

	if (udata->inlen < min_len || udata->outlen < resp_len)
		return -EINVAL;
	err = ib_copy_from_udata(cmd, udata, min(udata->inlen, len));
	if (err)
		return err;
	if (udata->inlen > len && !ib_is_udata_cleared(udata, len, udata->inlen - len))
		return -EINVAL;
	return 0;
}

/**
 * tern_ib_obj_init() - a new CQ, QP or SRQ's event reference, before it is published
 * @obj: the object's struct tern_ib_obj
 */
void tern_ib_obj_init(struct tern_ib_obj *obj)
{
	refcount_set(&obj->refcount, 1);
	init_completion(&obj->free);
}

/**
 * tern_ib_obj_publish() - make a CQ, QP or SRQ the device created findable by its events
 * @dev: the device
 * @xa: tern_ib_dev.cq_xa, qp_xa or srq_xa
 * @obj: the object's struct tern_ib_obj (tern_ib_obj_init())
 * @num: the number the device gave it
 * @limit: the device's limit on such numbers (QUERY_RDMA)
 * @what: "CQ", "QP" or "SRQ", for the log
 *
 * Return: 0, or -EIO when the device gave a number beyond @limit or one already in use
 * (the caller destroys the object in the device).
 */
int tern_ib_obj_publish(struct tern_ib_dev *dev, struct xarray *xa, struct tern_ib_obj *obj,
			u32 num, u32 limit, const char *what)
{
	int err;

	if (num >= limit) {
		ibdev_err(&dev->ibdev, "CREATE_%s returned %sN %u (limit %u)\n", what, what, num,
			  limit);
		return -EIO;
	}
	err = xa_insert_irq(xa, num, obj, GFP_KERNEL);
	if (err) {
		ibdev_err(&dev->ibdev, "%sN %u already in use: %d\n", what, num, err);
		return -EIO;
	}
	return 0;
}

/**
 * tern_ib_obj_unpublish() - take a CQ, QP or SRQ out of its xarray and wait for its events
 * @xa: the xarray it was published in
 * @num: its number
 * @obj: its struct tern_ib_obj
 *
 * Sleeps until no event handler uses the object any more.
 */
void tern_ib_obj_unpublish(struct xarray *xa, u32 num, struct tern_ib_obj *obj)
{
	xa_erase_irq(xa, num);
	tern_ib_obj_put(obj);
	wait_for_completion(&obj->free);
}

/**
 * tern_ib_obj_get() - the CQ, QP or SRQ an event names, held
 * @xa: tern_ib_dev.cq_xa, qp_xa or srq_xa
 * @num: the number the event carries
 *
 * Any context (the xarrays' locks are IRQ-safe).
 *
 * Return: the object with a reference the caller drops with tern_ib_obj_put(), or NULL
 * when there is none (destroyed meanwhile, or a number the device made up).
 */
struct tern_ib_obj *tern_ib_obj_get(struct xarray *xa, u32 num)
{
	struct tern_ib_obj *obj;
	unsigned long flags;

	xa_lock_irqsave(xa, flags);
	obj = xa_load(xa, num);
	if (obj && !refcount_inc_not_zero(&obj->refcount))
		obj = NULL;
	xa_unlock_irqrestore(xa, flags);
	return obj;
}

/**
 * tern_ib_obj_put() - drop a reference to a CQ, QP or SRQ
 * @obj: the object's struct tern_ib_obj
 *
 * Any context.
 */
void tern_ib_obj_put(struct tern_ib_obj *obj)
{
	if (refcount_dec_and_test(&obj->refcount))
		complete(&obj->free);
}

/**
 * tern_ib_obj_event() - report an affiliated event to the owner of a held CQ, QP or SRQ
 * @dev: the device
 * @obj: the object (tern_ib_obj_get()); the reference is dropped here
 * @ev: the event, with its type and element set
 * @handler: the object's event handler, NULL for none
 * @ctx: the handler's context
 *
 * From an EQ's hard interrupt handler.
 */
void tern_ib_obj_event(struct tern_ib_dev *dev, struct tern_ib_obj *obj, struct ib_event *ev,
		       void (*handler)(struct ib_event *ev, void *ctx), void *ctx)
{
	if (handler) {
		ev->device = &dev->ibdev;
		handler(ev, ctx);
	}
	tern_ib_obj_put(obj);
}

static int tern_ib_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
				struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibdev);
	const struct tern_cmd_query_rdma_out *c = &dev->caps;
	struct pci_dev *pdev = to_pci_dev(tern_ib_dma_dev(dev));

	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = le32_to_cpu(tern_core_caps(dev->tdev)->fw_version);
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = le64_to_cpu(c->max_mr_size);
	attr->page_size_cap = le64_to_cpu(c->page_size_cap);
	attr->vendor_id = pdev->vendor;
	attr->vendor_part_id = pdev->device;
	attr->hw_ver = pdev->revision;
	/* QPNs 0 and 1 are reserved: max_qp - 2 numbers are left for CREATE_QP. */
	attr->max_qp = le32_to_cpu(c->max_qp) > 2 ? le32_to_cpu(c->max_qp) - 2 : 0;
	attr->max_qp_wr = 1 << min(c->max_sq_log_depth, c->max_rq_log_depth);
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN;
	attr->max_send_sge = c->max_send_sge;
	attr->max_recv_sge = c->max_recv_sge;
	attr->max_sge_rd = c->max_send_sge;
	attr->max_cq = le32_to_cpu(c->max_cq);
	attr->max_cqe = 1 << c->max_cq_log_depth;
	attr->max_mr = le32_to_cpu(c->max_mr);
	attr->max_pd = le32_to_cpu(c->max_pd);
	attr->max_qp_rd_atom = c->max_dest_rd_atomic;
	attr->max_qp_init_rd_atom = c->max_rd_atomic;
	if (le32_to_cpu(c->cap_flags) & TERN_RDMA_CAP_SRQ) {
		attr->max_srq = le32_to_cpu(c->max_srq);
		attr->max_srq_wr = attr->max_srq ? 1 << min_t(u8, c->max_srq_log_depth, 16) : 0;
		attr->max_srq_sge = c->max_recv_sge;
	}
	attr->atomic_cap = le32_to_cpu(c->cap_flags) & TERN_RDMA_CAP_ATOMIC ? IB_ATOMIC_HCA :
									IB_ATOMIC_NONE;
	attr->max_ah = TERN_IB_MAX_AH;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = c->local_ca_ack_delay;
	if (le32_to_cpu(c->cap_flags) & TERN_RDMA_CAP_MW)
		attr->device_cap_flags |= IB_DEVICE_MEM_WINDOW | IB_DEVICE_MEM_WINDOW_TYPE_2B;
	if (le32_to_cpu(c->cap_flags) & TERN_RDMA_CAP_MEM_MGT) {
		attr->device_cap_flags |= IB_DEVICE_MEM_MGT_EXTENSIONS;
		attr->max_fast_reg_page_list_len = le32_to_cpu(c->max_fast_reg_pages);
	}
	if (le32_to_cpu(c->cap_flags) & TERN_RDMA_CAP_MCAST) {
		attr->max_mcast_grp = le16_to_cpu(c->max_mcast_grp);
		attr->max_mcast_qp_attach = le16_to_cpu(c->max_mcast_qp_attach);
		attr->max_total_mcast_qp_attach = attr->max_mcast_grp *
						  attr->max_mcast_qp_attach;
	}
	/* User CQs may carry the device clock: ns, 64 bits (Documentation/app/verbs.rst). */
	if (tern_ib_has_cqe_ts(dev)) {
		attr->hca_core_clock = TERN_CLOCK_KHZ;
		attr->timestamp_mask = U64_MAX;
	}
	if (le32_to_cpu(c->cap_flags) & TERN_RDMA_CAP_CQ_MODERATION) {
		attr->cq_caps.max_cq_moderation_count = le16_to_cpu(c->max_cq_moder_count);
		attr->cq_caps.max_cq_moderation_period = le16_to_cpu(c->max_cq_moder_period);
	}
	return 0;
}

static void tern_ib_port_state(struct tern_ib_dev *dev, enum ib_port_state *state, u8 *phys)
{
	struct net_device *ndev = dev->netdev;

	if (netif_running(ndev) && netif_carrier_ok(ndev)) {
		*state = IB_PORT_ACTIVE;
		*phys = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		*state = IB_PORT_DOWN;
		*phys = IB_PORT_PHYS_STATE_DISABLED;
	}
}

static int tern_ib_query_port(struct ib_device *ibdev, u32 port, struct ib_port_attr *attr)
{
	struct tern_ib_dev *dev = to_tibdev(ibdev);
	int err;

	/* The RDMA core cleared *attr. */
	tern_ib_port_state(dev, &attr->state, &attr->phys_state);
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = iboe_get_mtu(READ_ONCE(dev->netdev->mtu));
	attr->gid_tbl_len = TERN_IB_GID_TBL_LEN;
	attr->ip_gids = true;
	attr->max_msg_sz = le32_to_cpu(dev->caps.max_msg_size);
	attr->pkey_tbl_len = 1;
	/* The IB CM runs over the GSI QP, which exists with TERN_RDMA_CAP_UD. */
	if (tern_ib_has_cap(dev, TERN_RDMA_CAP_UD))
		attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->bad_pkey_cntr = 0;
	attr->qkey_viol_cntr = 0;
	err = ib_get_eth_speed(ibdev, port, &attr->active_speed, &attr->active_width);
	if (err)
		return err;
	return 0;
}

static int tern_ib_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

/*
 * Port 1 speaks RoCEv2 only. With TERN_RDMA_CAP_UD the device has UD QPs and the GSI QP
 * (QP1): the port gets the IB_MAD/IB_CM capabilities (RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP),
 * so the MAD layer creates QP1 on it and the IB CM and rdma_cm run over it. Without it
 * there is no GSI QP, and connections are set up out of band (e.g. over TCP), as perftest
 * does without -R.
 */
static int tern_ib_get_port_immutable(struct ib_device *ibdev, u32 port,
				      struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	if (tern_ib_has_cap(to_tibdev(ibdev), TERN_RDMA_CAP_UD)) {
		immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
		immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	} else {
		immutable->core_cap_flags = RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP;
		immutable->max_mad_size = 0;
	}
	return 0;
}

static enum rdma_link_layer tern_ib_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static void tern_ib_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	u32 fw = le32_to_cpu(tern_core_caps(to_tibdev(ibdev)->tdev)->fw_version);

	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u.%u", fw >> 24, (fw >> 16) & 0xff,
		 fw & 0xffff);
}

/* Async EQ events (its hard interrupt handler; ib_dispatch_event() defers to a work item). */
static void tern_ib_async_event(void *ctx, const struct tern_eqe *eqe)
{
	struct tern_ib_dev *dev = ctx;

	switch (eqe->type) {
	case TERN_EQE_QP_EVENT:
		tern_ib_qp_event(dev, eqe);
		break;
	case TERN_EQE_CQ_ERROR:
		tern_ib_cq_event(dev, eqe);
		break;
	case TERN_EQE_SRQ_EVENT:
		tern_ib_srq_event(dev, eqe);
		break;
	case TERN_EQE_FATAL: {
		struct ib_event ev = { .device = &dev->ibdev, .event = IB_EVENT_DEVICE_FATAL };

		/* tern_core says it once per death; the core may be told from any context */
		ib_dispatch_event(&ev);
		break;
	}
	default:
		/*
		 * Completion events go to completion EQs; PFC and congestion events
		 * (0x20..0x2f) are tern_core's and are not forwarded here.
		 */
		break;
	}
}

/* Report a port state change once. RTNL held (netdevice notifier). */
static void tern_ib_port_update(struct tern_ib_dev *dev)
{
	struct ib_event ev = {};
	enum ib_port_state state;
	u8 phys;
	bool active;

	ASSERT_RTNL();
	tern_ib_port_state(dev, &state, &phys);
	active = state == IB_PORT_ACTIVE;
	if (active == dev->port_active)
		return;
	dev->port_active = active;
	ev.device = &dev->ibdev;
	ev.element.port_num = TERN_IB_PORT;
	ev.event = active ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

static int tern_ib_netdev_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct tern_ib_dev *dev = container_of(nb, struct tern_ib_dev, nb);
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);

	if (ndev != dev->netdev)
		return NOTIFY_DONE;
	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_REGISTER:
		tern_ib_port_update(dev);
		break;
	default:
		break;
	}
	return NOTIFY_DONE;
}

static const struct ib_device_ops tern_ib_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = TERN_RDMA_DRIVER_ID,
	.uverbs_abi_ver = TERN_UVERBS_ABI_VERSION,

	.alloc_hw_port_stats = tern_ib_alloc_hw_port_stats,
	.alloc_mr = tern_ib_alloc_mr,
	.alloc_mw = tern_ib_alloc_mw,
	.alloc_pd = tern_ib_alloc_pd,
	.alloc_ucontext = tern_ib_alloc_ucontext,
	.attach_mcast = tern_ib_attach_mcast,
	.create_ah = tern_ib_create_ah,
	.create_cq = tern_ib_create_cq,
	.create_qp = tern_ib_create_qp,
	.create_srq = tern_ib_create_srq,
	.create_user_ah = tern_ib_create_ah,
	.dealloc_mw = tern_ib_dealloc_mw,
	.dealloc_pd = tern_ib_dealloc_pd,
	.dealloc_ucontext = tern_ib_dealloc_ucontext,
	.dereg_mr = tern_ib_dereg_mr,
	.destroy_ah = tern_ib_destroy_ah,
	.destroy_cq = tern_ib_destroy_cq,
	.destroy_qp = tern_ib_destroy_qp,
	.destroy_srq = tern_ib_destroy_srq,
	.detach_mcast = tern_ib_detach_mcast,
	.disassociate_ucontext = tern_ib_disassociate_ucontext,
	.fill_res_cq_entry = tern_ib_fill_res_cq_entry,
	.fill_res_mr_entry = tern_ib_fill_res_mr_entry,
	.fill_res_qp_entry = tern_ib_fill_res_qp_entry,
	.get_dev_fw_str = tern_ib_get_dev_fw_str,
	.get_dma_mr = tern_ib_get_dma_mr,
	.get_hw_stats = tern_ib_get_hw_stats,
	.get_link_layer = tern_ib_get_link_layer,
	.get_port_immutable = tern_ib_get_port_immutable,
	.map_mr_sg = tern_ib_map_mr_sg,
	.mmap = tern_ib_mmap,
	.mmap_free = tern_ib_mmap_free,
	.modify_cq = tern_ib_modify_cq,
	.modify_qp = tern_ib_modify_qp,
	.modify_srq = tern_ib_modify_srq,
	.poll_cq = tern_ib_poll_cq,
	.post_recv = tern_ib_post_recv,
	.post_send = tern_ib_post_send,
	.post_srq_recv = tern_ib_post_srq_recv,
	.query_ah = tern_ib_query_ah,
	.query_device = tern_ib_query_device,
	.query_pkey = tern_ib_query_pkey,
	.query_port = tern_ib_query_port,
	.query_qp = tern_ib_query_qp,
	.query_srq = tern_ib_query_srq,
	.reg_user_mr = tern_ib_reg_user_mr,
	.reg_user_mr_dmabuf = tern_ib_reg_user_mr_dmabuf,
	.req_notify_cq = tern_ib_req_notify_cq,
	.rereg_user_mr = tern_ib_rereg_user_mr,
	.resize_cq = tern_ib_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, tern_ib_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, tern_ib_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, tern_ib_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, tern_ib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, tern_ib_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, tern_ib_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, tern_ib_ucontext, ibuc),
};

static int tern_ib_query_rdma(struct tern_ib_dev *dev)
{
	struct tern_cmd_query_rdma_out *c = &dev->caps;
	struct device *pdev = tern_ib_dma_dev(dev);
	int err;

	err = tern_ib_cmd(dev, TERN_CMD_QUERY_RDMA, NULL, 0, c, sizeof(*c), NULL);
	if (err) {
		dev_err(pdev, "QUERY_RDMA failed (%d): the firmware offers no RDMA; tern_ib not attached\n",
			err);
		return err;
	}
	if (le32_to_cpu(c->max_qp) <= 2 || !c->max_cq || !c->max_mr || !c->max_pd ||
	    !c->max_sq_log_depth || !c->max_rq_log_depth || !c->max_cq_log_depth ||
	    !(le64_to_cpu(c->page_size_cap) & SZ_4K) || !c->max_mr_pages) {
		dev_err(pdev, "QUERY_RDMA reports unusable limits (max_qp %u, max_cq %u, max_mr %u, max_pd %u, page sizes %#llx)\n",
			le32_to_cpu(c->max_qp), le32_to_cpu(c->max_cq), le32_to_cpu(c->max_mr),
			le32_to_cpu(c->max_pd), le64_to_cpu(c->page_size_cap));
		return -EINVAL;
	}
	return 0;
}

static void tern_ib_ceqs_destroy(struct tern_ib_dev *dev)
{
	while (dev->num_ceqs > 0) {
		dev->num_ceqs--;
		tern_core_comp_eq_destroy(dev->tdev, dev->ceqs[dev->num_ceqs].eq);
	}
}

static int tern_ib_ceqs_create(struct tern_ib_dev *dev)
{
	int n = min(tern_core_num_comp_vectors(dev->tdev), TERN_IB_MAX_COMP_EQS);
	u8 max_log = tern_core_caps(dev->tdev)->max_eq_log ?: TERN_EQ_MAX_LOG;
	u8 log;
	int i;

	/*
	 * A CQ has at most one completion event pending (the next needs a new arming), and
	 * the device drops events that find their EQ full: room for every CQ on each EQ.
	 */
	log = clamp_t(u8, order_base_2(le32_to_cpu(dev->caps.max_cq)), TERN_EQ_MIN_LOG,
		      min_t(u8, max_log, TERN_EQ_MAX_LOG));
	if ((1u << log) < le32_to_cpu(dev->caps.max_cq))
		dev_warn(tern_ib_dma_dev(dev),
			 "completion EQs hold %u events for %u CQs: events may be lost when more CQs wait for one\n",
			 1u << log, le32_to_cpu(dev->caps.max_cq));

	if (n <= 0) {
		dev_err(tern_ib_dma_dev(dev),
			"no MSI-X vector left for completion events; RDMA needs at least 3 vectors\n");
		return -ENOSPC;
	}
	for (i = 0; i < n; i++) {
		struct tern_ib_ceq *ceq = &dev->ceqs[i];
		struct tern_eq *eq;

		ceq->dev = dev;
		eq = tern_core_comp_eq_create(dev->tdev, i, log, tern_ib_comp_event, ceq);
		if (IS_ERR(eq)) {
			dev_err(tern_ib_dma_dev(dev), "cannot create completion EQ %d: %ld\n", i,
				PTR_ERR(eq));
			tern_ib_ceqs_destroy(dev);
			return PTR_ERR(eq);
		}
		ceq->eq = eq;
		ceq->eqn = tern_core_eqn(eq);
		dev->num_ceqs = i + 1;
	}
	return 0;
}

/* The doorbell page of kernel CQs and QPs: a UAR of the driver's own, mapped uncached. */
static int tern_ib_kuar_map(struct tern_ib_dev *dev)
{
	resource_size_t addr;
	int uar;

	uar = ida_alloc_range(&dev->uar_ida, TERN_DB_FIRST_UAR, dev->num_uars - 1, GFP_KERNEL);
	if (uar < 0)
		return uar;
	addr = tern_core_db_page_addr(dev->tdev, uar);
	dev->kdb = addr ? ioremap(addr, TERN_DB_PAGE_SIZE) : NULL;
	if (!dev->kdb) {
		ida_free(&dev->uar_ida, uar);
		return -ENOMEM;
	}
	dev->kuar = uar;
	return 0;
}

static void tern_ib_kuar_unmap(struct tern_ib_dev *dev)
{
	iounmap(dev->kdb);
	dev->kdb = NULL;
	ida_free(&dev->uar_ida, dev->kuar);
}

/* The software state of a new device: no hardware touched yet. */
static void tern_ib_dev_init(struct tern_ib_dev *dev, struct tern_aux_dev *tadev)
{
	dev->tadev = tadev;
	dev->tdev = tadev->tdev;
	dev->netdev = tern_core_netdev(dev->tdev);
	ida_init(&dev->uar_ida);
	xa_init_flags(&dev->qp_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->cq_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->srq_xa, XA_FLAGS_LOCK_IRQ);
	spin_lock_init(&dev->zombie_lock);
	INIT_LIST_HEAD(&dev->zombies);
	mutex_init(&dev->ctr_lock);
	atomic_set(&dev->mr_key, get_random_u32() & 0xff);
}

/*
 * Probe's first stage: the device's RDMA limits and doorbell pages, the kernel's doorbell
 * page, the completion EQs and the async event handler. Undone by tern_ib_hw_fini().
 */
static int tern_ib_hw_init(struct tern_ib_dev *dev, struct device *adev_dev)
{
	const struct tern_cmd_query_device_out *dcaps = tern_core_caps(dev->tdev);
	u16 db_pages = le16_to_cpu(dcaps->num_db_pages);
	int err;

	err = tern_ib_query_rdma(dev);
	if (err)
		return err;
	dev->num_uars = db_pages ? min_t(u32, db_pages, TERN_DB_NUM_PAGES) : TERN_DB_NUM_PAGES;
	if (dev->num_uars <= TERN_DB_FIRST_UAR) {
		dev_err(adev_dev, "device has no user doorbell pages\n");
		return -ENODEV;
	}
	err = tern_ib_kuar_map(dev);
	if (err) {
		dev_err(adev_dev, "cannot map a doorbell page for kernel queues: %d\n", err);
		return err;
	}
	err = tern_ib_ceqs_create(dev);
	if (err)
		goto err_kuar;
	err = tern_core_set_async_handler(dev->tdev, tern_ib_async_event, dev);
	if (err) {
		dev_err(adev_dev, "async events already taken: %d\n", err);
		goto err_ceqs;
	}
	return 0;

err_ceqs:
	tern_ib_ceqs_destroy(dev);
err_kuar:
	tern_ib_kuar_unmap(dev);
	return err;
}

static void tern_ib_hw_fini(struct tern_ib_dev *dev)
{
	tern_core_clear_async_handler(dev->tdev);
	tern_ib_ceqs_destroy(dev);
	tern_ib_kuar_unmap(dev);
}

/* The ib_device's identity and operations, before it is registered. */
static void tern_ib_dev_describe(struct tern_ib_dev *dev)
{
	const struct tern_cmd_query_device_out *dcaps = tern_core_caps(dev->tdev);

	addrconf_addr_eui48((u8 *)&dev->ibdev.node_guid, dcaps->mac);
	dev->ibdev.node_type = RDMA_NODE_IB_CA;
	dev->ibdev.phys_port_cnt = 1;
	dev->ibdev.num_comp_vectors = dev->num_ceqs;
	/*
	 * The PCI function is the parent, as for mlx5, irdma and bnxt_re: sysfs then shows the
	 * netdev beside the RDMA device (device/net/), udev names it by its PCI path, and the
	 * provider matches it by PCI ID.
	 */
	dev->ibdev.dev.parent = tern_ib_dma_dev(dev);
	strscpy(dev->ibdev.node_desc, "tern RoCEv2 NIC", sizeof(dev->ibdev.node_desc));
	ib_set_device_ops(&dev->ibdev, &tern_ib_dev_ops);
	if (tern_ib_has_cap(dev, TERN_RDMA_CAP_QP_COUNTERS) && dev->caps.max_counter_sets)
		ib_set_device_ops(&dev->ibdev, &tern_ib_counter_ops);
	/*
	 * Adaptive moderation of kernel CQs (the RDMA core's DIM driving modify_cq) is on by
	 * default, as mlx5 and erdma have it; `rdma dev set tern0 adaptive-moderation off`
	 * turns it off for the CQs created after.
	 */
	dev->ibdev.use_cq_dim = tern_ib_has_cap(dev, TERN_RDMA_CAP_CQ_MODERATION);
}

/* Probe's second stage: port 1 on the netdev, the ib_device, the netdev notifier. */
static int tern_ib_dev_register(struct tern_ib_dev *dev, struct device *adev_dev)
{
	int err;

	err = ib_device_set_netdev(&dev->ibdev, dev->netdev, TERN_IB_PORT);
	if (err) {
		dev_err(adev_dev, "cannot attach port 1 to %s: %d\n", dev->netdev->name, err);
		return err;
	}
	err = ib_register_device(&dev->ibdev, "tern%d", tern_ib_dma_dev(dev));
	if (err) {
		dev_err(adev_dev, "ib_register_device failed: %d\n", err);
		return err;
	}
	dev->nb.notifier_call = tern_ib_netdev_event;
	err = register_netdevice_notifier(&dev->nb);
	if (err) {
		ibdev_err(&dev->ibdev, "cannot register the netdevice notifier: %d\n", err);
		ib_unregister_device(&dev->ibdev);
		return err;
	}
	return 0;
}

static int tern_ib_probe(struct auxiliary_device *adev, const struct auxiliary_device_id *id)
{
	struct tern_aux_dev *tadev = to_tern_aux_dev(adev);
	struct tern_ib_dev *dev;
	int err;

	if (PAGE_SIZE != TERN_DB_PAGE_SIZE) {
		dev_err(&adev->dev, "doorbell pages are 4 KiB; this kernel maps %lu-byte pages\n",
			PAGE_SIZE);
		return -EOPNOTSUPP;
	}

	dev = ib_alloc_device(tern_ib_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	tern_ib_dev_init(dev, tadev);
	auxiliary_set_drvdata(adev, dev);

	err = tern_ib_hw_init(dev, &adev->dev);
	if (err)
		goto err_dealloc;
	tern_ib_dev_describe(dev);
	err = tern_ib_dev_register(dev, &adev->dev);
	if (err)
		goto err_hw;
	ibdev_info(&dev->ibdev, "RoCEv2 on %s: %u QPs, %u CQs, %u MRs, %d completion vectors\n",
		   dev->netdev->name, le32_to_cpu(dev->caps.max_qp) - 2,
		   le32_to_cpu(dev->caps.max_cq), le32_to_cpu(dev->caps.max_mr), dev->num_ceqs);
	return 0;

err_hw:
	tern_ib_hw_fini(dev);
err_dealloc:
	mutex_destroy(&dev->ctr_lock);
	ida_destroy(&dev->uar_ida);
	ib_dealloc_device(&dev->ibdev);
	return err;
}

static void tern_ib_remove(struct auxiliary_device *adev)
{
	struct tern_ib_dev *dev = auxiliary_get_drvdata(adev);

	unregister_netdevice_notifier(&dev->nb);
	/* Destroys every object user space still holds, through our destroy verbs. */
	ib_unregister_device(&dev->ibdev);
	tern_ib_hw_fini(dev);
	tern_ib_zombies_free(dev);
	WARN_ON(!xa_empty(&dev->qp_xa) || !xa_empty(&dev->cq_xa) || !xa_empty(&dev->srq_xa));
	xa_destroy(&dev->qp_xa);
	xa_destroy(&dev->cq_xa);
	xa_destroy(&dev->srq_xa);
	mutex_destroy(&dev->ctr_lock);
	ida_destroy(&dev->uar_ida);
	ib_dealloc_device(&dev->ibdev);
}

static const struct auxiliary_device_id tern_ib_id_table[] = {
	{ .name = "tern_core." TERN_AUX_RDMA_NAME },
	{ }
};
MODULE_DEVICE_TABLE(auxiliary, tern_ib_id_table);

static struct auxiliary_driver tern_ib_driver = {
	.name = "ib",
	.probe = tern_ib_probe,
	.remove = tern_ib_remove,
	.id_table = tern_ib_id_table,
};

module_auxiliary_driver(tern_ib_driver);

MODULE_DESCRIPTION("tern RoCEv2 NIC RDMA driver");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_IMPORT_NS(TERN);
