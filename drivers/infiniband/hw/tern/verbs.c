// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern_ib: user contexts and their doorbell page, protection domains, and address handles
 * (the RoCEv2 path of UD sends).
 */

#include <linux/jhash.h>
#include <linux/mm.h>
#include <linux/sched/task.h>
#include <rdma/uverbs_ioctl.h>

#include "tern_ib.h"

/* The device clock page's mmap entry, when the device has a clock (for query_rt_values). */
static int alloc_ucontext_clock(struct tern_ib_dev *dev, struct tern_ib_ucontext *uc)
{
	struct tern_ib_mmap_entry *entry;
	resource_size_t addr;
	int err;

	addr = tern_core_clock_page_addr(dev->tdev);
	if (!addr)
		return 0;
	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->dev = dev;
	entry->address = addr;
	err = rdma_user_mmap_entry_insert(&uc->ibuc, &entry->rdma, PAGE_SIZE);
	if (err) {
		kfree(entry);
		return err;
	}
	uc->clock_entry = entry;
	return 0;
}

/* Give the context a UAR and its mmap entry and answer; see tern_ib_alloc_ucontext(). */
static int alloc_ucontext_uar(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibuc->device);
	struct tern_ib_ucontext *uc = to_tuc(ibuc);
	struct tern_alloc_ucontext_resp resp = {};
	struct tern_ib_mmap_entry *entry;
	int uar, err;

	if (udata->outlen < offsetofend(struct tern_alloc_ucontext_resp, max_cq_log_depth)) {
		ibdev_dbg(&dev->ibdev, "alloc_ucontext: response buffer too small (%zu)\n",
			  udata->outlen);
		return -EINVAL;
	}

	uar = ida_alloc_range(&dev->uar_ida, TERN_DB_FIRST_UAR, dev->num_uars - 1, GFP_KERNEL);
	if (uar < 0)
		return uar == -ENOSPC ? -ENOSPC : uar;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry) {
		ida_free(&dev->uar_ida, uar);
		return -ENOMEM;
	}
	entry->dev = dev;
	entry->uar = uar;
	entry->address = tern_core_db_page_addr(dev->tdev, uar);
	if (!entry->address) {
		kfree(entry);
		ida_free(&dev->uar_ida, uar);
		return -EINVAL;
	}
	err = rdma_user_mmap_entry_insert(ibuc, &entry->rdma, PAGE_SIZE);
	if (err) {
		kfree(entry);
		ida_free(&dev->uar_ida, uar);
		return err;
	}
	/* From here on the entry owns the UAR: tern_ib_mmap_free() releases both. */
	uc->uar = uar;
	uc->db_entry = entry;

	resp.uar = uar;
	resp.db_mmap_key = rdma_user_mmap_get_offset(&entry->rdma);
	resp.max_inline = le16_to_cpu(dev->caps.max_inline);
	resp.sq_min_log_stride = TERN_SQ_MIN_LOG_STRIDE;
	resp.sq_max_log_stride = TERN_SQ_MAX_LOG_STRIDE;
	resp.rq_min_log_stride = TERN_RQ_MIN_LOG_STRIDE;
	resp.rq_max_log_stride = TERN_RQ_MAX_LOG_STRIDE;
	resp.max_sq_log_depth = dev->caps.max_sq_log_depth;
	resp.max_rq_log_depth = dev->caps.max_rq_log_depth;
	resp.max_cq_log_depth = dev->caps.max_cq_log_depth;
	resp.comp_mask = TERN_UCTX_RESP_CAPS;
	if (tern_ib_has_cap(dev, TERN_RDMA_CAP_DB_REC))
		resp.caps |= TERN_UCTX_CAP_DB_REC;
	if (tern_ib_has_cqe_ts(dev))
		resp.caps |= TERN_UCTX_CAP_CQE_TS;
	if (udata->outlen >= offsetofend(struct tern_alloc_ucontext_resp, clock_mmap_key)) {
		err = alloc_ucontext_clock(dev, uc);
		if (err)
			goto err_remove;
		if (uc->clock_entry) {
			resp.comp_mask |= TERN_UCTX_RESP_CLOCK;
			resp.clock_mmap_key = rdma_user_mmap_get_offset(&uc->clock_entry->rdma);
		}
	}
	err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (err)
		goto err_remove;
	return 0;

err_remove:
	if (uc->clock_entry)
		rdma_user_mmap_entry_remove(&uc->clock_entry->rdma);
	uc->clock_entry = NULL;
	rdma_user_mmap_entry_remove(&entry->rdma);
	uc->db_entry = NULL;
	return err;
}

/**
 * tern_ib_alloc_ucontext() - create a user context with its own doorbell page (UAR)
 * @ibuc: the context
 * @udata: response: struct tern_alloc_ucontext_resp
 *
 * Before calling the driver the RDMA core attaches the calling task to the context's
 * resource-tracking entry, which takes a reference on the task. When the driver refuses
 * the context, the core's ioctl path (UVERBS_METHOD_GET_CONTEXT, what libibverbs uses)
 * frees it with kfree() and never drops that reference, so each refused context leaked
 * the caller's task_struct once the process exited (Linux 6.1; measured in a guest: 24
 * processes refused with -ENOSPC left 21 more task_structs allocated). A refused context
 * drops the reference here; the core's other path (the write() command) releases the
 * entry with rdma_restrack_put(), which skips a task that is already gone. A context the
 * core itself refuses before asking the driver (the rdma cgroup's hca_handle limit) still
 * leaks in the core.
 *
 * Return: 0, -ENOSPC when every UAR is taken, or another negative errno.
 */
int tern_ib_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	int err = alloc_ucontext_uar(ibuc, udata);

	if (err && ibuc->res.task) {
		put_task_struct(ibuc->res.task);
		ibuc->res.task = NULL;
	}
	return err;
}

/**
 * tern_ib_dealloc_ucontext() - destroy a user context
 * @ibuc: the context; its QPs and CQs are gone
 *
 * The UAR is reused only once no mapping of the page is left (tern_ib_mmap_free()).
 */
void tern_ib_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct tern_ib_ucontext *uc = to_tuc(ibuc);

	if (uc->db_entry)
		rdma_user_mmap_entry_remove(&uc->db_entry->rdma);
	uc->db_entry = NULL;
	if (uc->clock_entry)
		rdma_user_mmap_entry_remove(&uc->clock_entry->rdma);
	uc->clock_entry = NULL;
}

/**
 * tern_ib_mmap() - map a context's doorbell page or the device clock page, uncached
 * @ibuc: the context
 * @vma: the mapping: one page at an offset alloc_ucontext returned; the clock page only
 *	without write access (and never to gain it by mprotect())
 *
 * Return: 0 or a negative errno (-EINVAL for an unknown offset or size, -EPERM for an
 * executable mapping or a writable one of the clock page).
 */
int tern_ib_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct tern_ib_mmap_entry *entry;
	int err;

	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	rdma_entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = container_of(rdma_entry, struct tern_ib_mmap_entry, rdma);
	if (!entry->uar) {
		/* the clock page: BAR0 beyond it holds the control registers */
		if (vma->vm_flags & VM_WRITE) {
			rdma_user_mmap_entry_put(rdma_entry);
			return -EPERM;
		}
		vma->vm_flags &= ~VM_MAYWRITE;
	}
	err = rdma_user_mmap_io(ibuc, vma, PHYS_PFN(entry->address), PAGE_SIZE,
				pgprot_noncached(vma->vm_page_prot), rdma_entry);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

/**
 * tern_ib_mmap_free() - the last reference to a doorbell page entry is gone
 * @rdma_entry: the entry
 */
void tern_ib_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct tern_ib_mmap_entry *entry =
		container_of(rdma_entry, struct tern_ib_mmap_entry, rdma);

	if (entry->uar)
		ida_free(&entry->dev->uar_ida, entry->uar);
	kfree(entry);
}

/**
 * tern_ib_disassociate_ucontext() - the device goes away under a live context
 * @ibuc: the context
 *
 * Nothing to do: the RDMA core zaps the doorbell mappings (made by rdma_user_mmap_io()) and
 * destroys the context's objects through the destroy verbs.
 */
void tern_ib_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/**
 * tern_ib_alloc_pd() - create a protection domain
 * @ibpd: the PD
 * @udata: unused (no driver data); NULL for kernel PDs
 *
 * Return: 0 or a negative errno (-ENOSPC when the device has no PD left).
 */
int tern_ib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibpd->device);
	struct tern_ib_pd *pd = to_tpd(ibpd);
	u32 pdn;
	int err;

	err = tern_ib_cmd(dev, TERN_CMD_CREATE_PD, NULL, 0, NULL, 0, &pdn);
	if (err)
		return err;
	if (pdn >= le32_to_cpu(dev->caps.max_pd)) {
		struct tern_cmd_destroy_pd_in in = { .pdn = cpu_to_le32(pdn) };

		ibdev_err(&dev->ibdev, "CREATE_PD returned PDN %u (limit %u)\n", pdn,
			  le32_to_cpu(dev->caps.max_pd));
		tern_ib_cmd(dev, TERN_CMD_DESTROY_PD, &in, sizeof(in), NULL, 0, NULL);
		return -EIO;
	}
	pd->pdn = pdn;
	return 0;
}

/**
 * tern_ib_dealloc_pd() - destroy a protection domain
 * @ibpd: the PD; its MRs and QPs are gone
 * @udata: unused
 *
 * Return: 0 (the PD is gone from the kernel's view even if the command failed).
 */
int tern_ib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibpd->device);
	struct tern_ib_pd *pd = to_tpd(ibpd);
	struct tern_cmd_destroy_pd_in in = { .pdn = cpu_to_le32(pd->pdn) };
	int err;

	err = tern_ib_cmd(dev, TERN_CMD_DESTROY_PD, &in, sizeof(in), NULL, 0, NULL);
	/* A PD owns no memory the device could write. */
	if (err && tern_core_alive(dev->tdev))
		ibdev_err(&dev->ibdev, "DESTROY_PD %u failed: %d\n", pd->pdn, err);
	return 0;
}

/*
 * The UDP source port of a UD destination: from the flow label, or without one from a hash
 * of both GIDs (a UD QP talks to many peers, so the QPNs do not name the flow).
 */
static u16 tern_ib_ah_udp_sport(const struct ib_global_route *grh)
{
	u32 fl = grh->flow_label & IB_GRH_FLOWLABEL_MASK;

	if (!fl)
		fl = jhash(grh->dgid.raw, sizeof(grh->dgid.raw),
			   jhash(grh->sgid_attr->gid.raw, sizeof(grh->sgid_attr->gid.raw), 0)) &
		     IB_GRH_FLOWLABEL_MASK;
	return rdma_flow_label_to_udp_sport(fl);
}

/* The AH's path as struct tern_ah_path (uapi) gives it: host byte order. */
static void tern_ib_ah_path_to_user(const struct tern_qp_path *p, struct tern_ah_path *u)
{
	memcpy(u->dmac, p->dmac, sizeof(u->dmac));
	memcpy(u->smac, p->smac, sizeof(u->smac));
	u->vlan_id = le16_to_cpu(p->vlan_id);
	u->ip_version = p->ip_version;
	u->hop_limit = p->hop_limit;
	u->traffic_class = p->traffic_class;
	u->sl = p->sl;
	u->flow_label = le32_to_cpu(p->flow_label);
	u->udp_sport = le16_to_cpu(p->udp_sport);
	memcpy(u->sgid, p->sgid, sizeof(u->sgid));
	memcpy(u->dgid, p->dgid, sizeof(u->dgid));
}

/**
 * tern_ib_create_ah() - create an address handle (RoCEv2, GRH required)
 * @ibah: the AH
 * @init_attr: attributes; the RDMA core resolved the destination MAC
 * @udata: user AHs: struct tern_create_ah_resp out (the path the provider builds its UD
 *	WQEs' address from); NULL for kernel AHs
 *
 * Does not sleep (callers may hold spinlocks without RDMA_CREATE_AH_SLEEPABLE).
 *
 * Return: 0 or a negative errno.
 */
int tern_ib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		      struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibah->device);
	struct rdma_ah_attr *attr = init_attr->ah_attr;
	struct tern_ib_ah *ah = to_tah(ibah);
	struct tern_create_ah_resp resp = {};
	const struct ib_global_route *grh;
	int err;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	if (!grh->sgid_attr || grh->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	err = tern_ib_build_path(dev, attr, tern_ib_ah_udp_sport(grh), &ah->path);
	if (err)
		return err;
	if (udata && udata->outlen) {
		if (udata->outlen < sizeof(resp))
			return -EINVAL;
		tern_ib_ah_path_to_user(&ah->path, &resp.path);
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			return err;
	}
	if (atomic_inc_return(&dev->num_ah) > TERN_IB_MAX_AH) {
		atomic_dec(&dev->num_ah);
		return -ENOMEM;
	}
	ah->attr = *attr;
	/* The copy holds no reference: the RDMA core keeps ibah->sgid_attr. */
	ah->attr.grh.sgid_attr = NULL;
	return 0;
}

/**
 * tern_ib_query_ah() - the attributes an address handle was created with
 * @ibah: the AH
 * @ah_attr: output
 *
 * Return: 0.
 */
int tern_ib_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *ah_attr)
{
	*ah_attr = to_tah(ibah)->attr;
	return 0;
}

/**
 * tern_ib_destroy_ah() - destroy an address handle
 * @ibah: the AH
 * @flags: RDMA_DESTROY_AH_* (nothing sleeps here)
 *
 * Return: 0.
 */
int tern_ib_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_tibdev(ibah->device)->num_ah);
	return 0;
}
