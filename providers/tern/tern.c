// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * tern libibverbs provider: device matching, context, PD, MR, AH, and the helpers the CQ
 * and QP code share (ring buffers, the QPN table).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <util/mmio.h>
#include <util/util.h>

#include "tern.h"

/* ----------------------------------------------------------------------------------- */
/* Ring memory                                                                          */

/*
 * Anonymous mappings are page aligned and zeroed, which the CQ needs (a zeroed CQE has
 * phase 0, so nothing is valid before the device's first pass writes phase 1).
 * ibv_dontfork_range keeps a fork()ed child from taking the pages copy-on-write under
 * the device.
 */
int tern_buf_alloc(struct tern_buf *buf, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *addr;

	if (page <= 0)
		page = 4096;
	len = align(len, page);
	addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (addr == MAP_FAILED)
		return errno;
	if (ibv_dontfork_range(addr, len)) {
		munmap(addr, len);
		return ENOMEM;
	}
	buf->addr = addr;
	buf->len = len;
	return 0;
}

void tern_buf_free(struct tern_buf *buf)
{
	if (!buf->addr)
		return;
	ibv_dofork_range(buf->addr, buf->len);
	munmap(buf->addr, buf->len);
	buf->addr = NULL;
	buf->len = 0;
}

/* ----------------------------------------------------------------------------------- */
/* QPN table                                                                            */

/* Caller holds a lock of one of the QP's CQs (see struct tern_context). */
struct tern_qp *tern_find_qp(struct tern_context *ctx, uint32_t qpn)
{
	uint32_t top = (qpn >> TERN_QP_TABLE_SHIFT) & TERN_QP_TABLE_MASK;
	struct tern_qp **qps = __atomic_load_n(&ctx->qp_table[top].qps, __ATOMIC_ACQUIRE);

	if (qpn >> (2 * TERN_QP_TABLE_SHIFT) || !qps)
		return NULL;
	return qps[qpn & TERN_QP_TABLE_MASK];
}

/* Caller holds the locks of the QP's CQs. */
int tern_store_qp(struct tern_context *ctx, struct tern_qp *qp)
{
	uint32_t top = qp->qpn >> TERN_QP_TABLE_SHIFT;
	int ret = 0;

	if (top >= TERN_QP_TABLE_SIZE)
		return EINVAL;
	pthread_mutex_lock(&ctx->qp_table_lock);
	if (!ctx->qp_table[top].refcnt) {
		struct tern_qp **qps = calloc(TERN_QP_TABLE_SIZE, sizeof(*qps));

		if (!qps) {
			ret = ENOMEM;
			goto out;
		}
		__atomic_store_n(&ctx->qp_table[top].qps, qps, __ATOMIC_RELEASE);
	}
	if (ctx->qp_table[top].qps[qp->qpn & TERN_QP_TABLE_MASK]) {
		ret = EEXIST;
		goto out;
	}
	ctx->qp_table[top].refcnt++;
	ctx->qp_table[top].qps[qp->qpn & TERN_QP_TABLE_MASK] = qp;
out:
	if (ret && !ctx->qp_table[top].refcnt) {
		free(ctx->qp_table[top].qps);
		ctx->qp_table[top].qps = NULL;
	}
	pthread_mutex_unlock(&ctx->qp_table_lock);
	return ret;
}

/* Caller holds the locks of the QP's CQs. */
void tern_clear_qp(struct tern_context *ctx, uint32_t qpn)
{
	uint32_t top = qpn >> TERN_QP_TABLE_SHIFT;

	pthread_mutex_lock(&ctx->qp_table_lock);
	if (top < TERN_QP_TABLE_SIZE && ctx->qp_table[top].qps &&
	    ctx->qp_table[top].qps[qpn & TERN_QP_TABLE_MASK]) {
		ctx->qp_table[top].qps[qpn & TERN_QP_TABLE_MASK] = NULL;
		if (!--ctx->qp_table[top].refcnt) {
			free(ctx->qp_table[top].qps);
			ctx->qp_table[top].qps = NULL;
		}
	}
	pthread_mutex_unlock(&ctx->qp_table_lock);
}

/* ----------------------------------------------------------------------------------- */
/* Device, port, PD, MR, AH                                                             */

static int tern_query_device_ex(struct ibv_context *ibctx,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp, &resp_size);
	if (ret)
		return ret;
	/* the kernel passes the firmware version raw: major << 24 | minor << 16 | patch */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "%u.%u.%u",
		 (unsigned int)(fw >> 24) & 0xff, (unsigned int)(fw >> 16) & 0xff,
		 (unsigned int)fw & 0xffff);
	return 0;
}

/*
 * ibv_query_rt_values_ex(): the device clock (IBV_VALUES_MASK_RAW_CLOCK), in nanoseconds
 * (hca_core_clock is 1,000,000 kHz), read with one 64-bit load from the clock page the
 * kernel mapped read-only: no system call.
 */
static int tern_query_rt_values(struct ibv_context *ibctx, struct ibv_values_ex *values)
{
	struct tern_context *ctx = to_tctx(ibctx);
	uint64_t ns;

	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (!values->comp_mask)
		return 0;
	if (!ctx->clock_page)
		return EOPNOTSUPP;
	ns = le64toh(mmio_read64_le((const char *)ctx->clock_page +
				    (TERN_REG_CLOCK_LO - TERN_CLOCK_PAGE)));
	values->raw_clock.tv_sec = ns / 1000000000ull;
	values->raw_clock.tv_nsec = ns % 1000000000ull;
	values->comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	return 0;
}

static int tern_query_port(struct ibv_context *ibctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *tern_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct tern_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return &pd->ibv_pd;
}

static int tern_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret = ibv_cmd_dealloc_pd(ibpd);

	if (ret)
		return ret;
	free(container_of(ibpd, struct tern_pd, ibv_pd));
	return 0;
}

static struct ibv_mr *tern_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				  uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd, sizeof(cmd),
			     &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * ibv_reg_dmabuf_mr: the uverbs method is built here with libibverbs' command buffer and
 * execute_ioctl(), as ibv_cmd_reg_dmabuf_mr does it; that helper cannot be called, because it
 * gained an argument after rdma-core 44 under the same private ABI (IBVERBS_PRIVATE_34), so
 * the version this provider is built against and the one Debian 12 loads it into disagree.
 * tern_ib.ko pins the dma-buf for the MR's lifetime.
 */
static struct ibv_mr *tern_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
					 uint64_t iova, int fd, int access)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_MR, UVERBS_METHOD_REG_DMABUF_MR, 9);
	struct ib_uverbs_attr *handle;
	struct verbs_mr *vmr;
	uint32_t lkey, rkey;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	handle = fill_attr_out_obj(cmdb, UVERBS_ATTR_REG_DMABUF_MR_HANDLE);
	fill_attr_out_ptr(cmdb, UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY, &lkey);
	fill_attr_out_ptr(cmdb, UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY, &rkey);
	fill_attr_in_obj(cmdb, UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE, pd->handle);
	fill_attr_in_uint64(cmdb, UVERBS_ATTR_REG_DMABUF_MR_OFFSET, offset);
	fill_attr_in_uint64(cmdb, UVERBS_ATTR_REG_DMABUF_MR_LENGTH, length);
	fill_attr_in_uint64(cmdb, UVERBS_ATTR_REG_DMABUF_MR_IOVA, iova);
	fill_attr_in_uint32(cmdb, UVERBS_ATTR_REG_DMABUF_MR_FD, fd);
	fill_attr_in_uint32(cmdb, UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS, access);
	ret = execute_ioctl(pd->context, cmdb);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	vmr->ibv_mr.handle = read_attr_obj(UVERBS_ATTR_REG_DMABUF_MR_HANDLE, handle);
	vmr->ibv_mr.context = pd->context;
	vmr->ibv_mr.pd = pd;
	vmr->ibv_mr.lkey = lkey;
	vmr->ibv_mr.rkey = rkey;
	vmr->ibv_mr.addr = (void *)(uintptr_t)offset;
	vmr->ibv_mr.length = length;
	/* ibv_dereg_mr must not ibv_dofork_range() the offset as if it were an address */
	vmr->mr_type = IBV_MR_TYPE_DMABUF_MR;
	return &vmr->ibv_mr;
}

/*
 * tern_ib.ko changes the MR in place where the device can (TERN_RDMA_CAP_REREG_MR): the keys
 * stay. On a device without it tern_ib.ko registers a new MR and the kernel destroys the old
 * one: the keys change. Either way ibv_cmd_rereg_mr copies the keys the kernel answers with
 * into @vmr, and a failure leaves the MR as it was.
 */
static int tern_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr,
			 size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;

	return ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr, access, pd, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
}

static int tern_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (ret)
		return ret;
	free(vmr);
	return 0;
}

/* Memory windows: tern_ib.ko creates them unbound; binds go through a QP's send queue. */
static struct ibv_mw *tern_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int tern_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (ret)
		return ret;
	free(mw);
	return 0;
}

/*
 * ibv_bind_mw (type 1 windows): a BIND_MW work request with the next key byte; the window's
 * rkey is the new key once it is posted (as the verbs define it), its CQE reports the bind.
 */
static int tern_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {}, *bad;
	int ret;

	wr.opcode = IBV_WR_BIND_MW;
	wr.wr_id = mw_bind->wr_id;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	ret = tern_post_send(qp, &wr, &bad);
	if (ret)
		return ret;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

/* The device's address (struct tern_qp_path, little endian) from the AH's path (uapi). */
static void tern_ah_path_from_kernel(struct tern_qp_path *p, const struct tern_ah_path *u)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->dmac, u->dmac, sizeof(p->dmac));
	memcpy(p->smac, u->smac, sizeof(p->smac));
	p->vlan_id = htole16(u->vlan_id);
	p->ip_version = u->ip_version;
	p->hop_limit = u->hop_limit;
	p->traffic_class = u->traffic_class;
	p->sl = u->sl;
	p->flow_label = htole32(u->flow_label);
	p->udp_sport = htole16(u->udp_sport);
	memcpy(p->sgid, u->sgid, sizeof(p->sgid));
	memcpy(p->dgid, u->dgid, sizeof(p->dgid));
}

/*
 * tern_ib.ko resolves the destination and answers with the path (struct
 * tern_create_ah_resp); the provider builds the device's address from it once, and
 * post_send copies that into each WQE. A kernel that answers without a path cannot serve UD
 * QPs: the AH is refused.
 */
static struct ibv_ah *tern_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct tern_ucmd_create_ah_resp resp = {};
	struct tern_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	tern_ah_path_from_kernel(&ah->path, &resp.path);
	if (ah->path.ip_version != 4 && ah->path.ip_version != 6) {
		verbs_err(&to_tctx(pd->context)->ibv_ctx,
			  "tern_ib.ko returned no address for the AH (UD not supported)\n");
		ibv_cmd_destroy_ah(&ah->ibv_ah);
		free(ah);
		errno = EOPNOTSUPP;
		return NULL;
	}
	return &ah->ibv_ah;
}

static int tern_destroy_ah(struct ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (ret)
		return ret;
	free(to_tah(ibah));
	return 0;
}

/* ----------------------------------------------------------------------------------- */
/* Context                                                                              */

static void tern_free_context(struct ibv_context *ibctx)
{
	struct tern_context *ctx = to_tctx(ibctx);
	unsigned int i;

	munmap(ctx->uar, TERN_DB_PAGE_SIZE);
	if (ctx->clock_page)
		munmap((void *)ctx->clock_page, TERN_CLOCK_PAGE_SIZE);
	for (i = 0; i < TERN_QP_TABLE_SIZE; i++)
		free(ctx->qp_table[i].qps);
	pthread_mutex_destroy(&ctx->qp_table_lock);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

/*
 * create_cq_ex is not set: libibverbs answers ibv_create_cq_ex with EOPNOTSUPP.
 * create_srq_ex, XRC, flows, DM, counters: likewise not supported.
 */
static const struct verbs_context_ops tern_ctx_ops = {
	.alloc_mw = tern_alloc_mw,
	.alloc_pd = tern_alloc_pd,
	/* the group table is the device's: uverbs' generic commands reach tern_ib */
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = tern_bind_mw,
	.create_ah = tern_create_ah,
	.create_cq = tern_create_cq,
	.create_cq_ex = tern_create_cq_ex,
	.create_qp = tern_create_qp,
	.create_qp_ex = tern_create_qp_ex,
	.create_srq = tern_create_srq,
	.cq_event = tern_cq_event,
	.dealloc_mw = tern_dealloc_mw,
	.dealloc_pd = tern_dealloc_pd,
	.dereg_mr = tern_dereg_mr,
	.destroy_ah = tern_destroy_ah,
	.destroy_cq = tern_destroy_cq,
	.destroy_qp = tern_destroy_qp,
	.destroy_srq = tern_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = tern_free_context,
	.modify_cq = tern_modify_cq,
	.modify_qp = tern_modify_qp,
	.query_ece = tern_query_ece,
	.set_ece = tern_set_ece,
	.modify_srq = tern_modify_srq,
	.poll_cq = tern_poll_cq,
	.post_recv = tern_post_recv,
	.post_send = tern_post_send,
	.post_srq_recv = tern_post_srq_recv,
	.query_device_ex = tern_query_device_ex,
	.query_rt_values = tern_query_rt_values,
	.query_port = tern_query_port,
	.query_qp = tern_query_qp,
	.query_srq = tern_query_srq,
	.reg_dmabuf_mr = tern_reg_dmabuf_mr,
	.reg_mr = tern_reg_mr,
	.rereg_mr = tern_rereg_mr,
	.req_notify_cq = tern_req_notify_cq,
	.resize_cq = tern_resize_cq,
};

/* The limits tern_ib.ko reported must be ones this provider's WQE layouts can use. */
static int tern_check_limits(struct tern_context *ctx)
{
	if (ctx->sq_min_log_stride < TERN_SQ_MIN_LOG_STRIDE ||
	    ctx->sq_max_log_stride > TERN_SQ_MAX_LOG_STRIDE ||
	    ctx->sq_min_log_stride > ctx->sq_max_log_stride)
		return EPROTO;
	if (ctx->rq_min_log_stride < TERN_RQ_MIN_LOG_STRIDE ||
	    ctx->rq_max_log_stride > TERN_RQ_MAX_LOG_STRIDE ||
	    ctx->rq_min_log_stride > ctx->rq_max_log_stride)
		return EPROTO;
	if (!ctx->max_sq_log_depth || ctx->max_sq_log_depth > 16 ||
	    !ctx->max_rq_log_depth || ctx->max_rq_log_depth > 16 ||
	    !ctx->max_cq_log_depth || ctx->max_cq_log_depth > 24)
		return EPROTO;
	return 0;
}

static struct verbs_context *tern_alloc_context(struct ibv_device *ibdev, int cmd_fd,
						void *private_data)
{
	struct tern_ucmd_alloc_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct tern_context *ctx;
	int ret;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx, TERN_RDMA_DRIVER_ID);
	if (!ctx)
		return NULL;
	pthread_mutex_init(&ctx->qp_table_lock, NULL);

	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd), &resp.ibv_resp,
				  sizeof(resp));
	if (ret)
		goto err;

	ctx->uar_index = resp.uar;
	ctx->max_inline = resp.max_inline;
	ctx->sq_min_log_stride = resp.sq_min_log_stride;
	ctx->sq_max_log_stride = resp.sq_max_log_stride;
	ctx->rq_min_log_stride = resp.rq_min_log_stride;
	ctx->rq_max_log_stride = resp.rq_max_log_stride;
	ctx->max_sq_log_depth = resp.max_sq_log_depth;
	ctx->max_rq_log_depth = resp.max_rq_log_depth;
	ctx->max_cq_log_depth = resp.max_cq_log_depth;
	ctx->db_rec = (resp.comp_mask & TERN_UCTX_RESP_CAPS) &&
		      (resp.caps & TERN_UCTX_CAP_DB_REC);
	ctx->cqe_ts = (resp.comp_mask & TERN_UCTX_RESP_CAPS) &&
		      (resp.caps & TERN_UCTX_CAP_CQE_TS);
	ret = tern_check_limits(ctx);
	if (ret) {
		verbs_err(&ctx->ibv_ctx, "kernel reported unusable queue limits\n");
		goto err;
	}

	ctx->uar = mmap(NULL, TERN_DB_PAGE_SIZE, PROT_WRITE, MAP_SHARED, cmd_fd,
			resp.db_mmap_key);
	if (ctx->uar == MAP_FAILED) {
		ret = errno;
		verbs_err(&ctx->ibv_ctx, "cannot map the doorbell page: %s\n",
			  strerror(ret));
		goto err;
	}

	/* the device clock, read by query_rt_values without a system call */
	if (resp.comp_mask & TERN_UCTX_RESP_CLOCK) {
		void *page = mmap(NULL, TERN_CLOCK_PAGE_SIZE, PROT_READ, MAP_SHARED, cmd_fd,
				  resp.clock_mmap_key);

		if (page == MAP_FAILED)
			verbs_warn(&ctx->ibv_ctx, "cannot map the device clock page: %s\n",
				   strerror(errno));
		else
			ctx->clock_page = page;
	}

	verbs_set_ops(&ctx->ibv_ctx, &tern_ctx_ops);
	return &ctx->ibv_ctx;

err:
	pthread_mutex_destroy(&ctx->qp_table_lock);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static struct verbs_device *tern_device_alloc(struct verbs_sysfs_dev *sysfs_dev)
{
	struct tern_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->ibv_dev;
}

static void tern_device_free(struct verbs_device *vdev)
{
	free(container_of(vdev, struct tern_device, ibv_dev));
}

/*
 * tern has no RDMA_DRIVER_ id of its own out of tree (TERN_RDMA_DRIVER_ID in
 * <rdma/tern-abi.h> is RDMA_DRIVER_UNKNOWN, which libibverbs never matches by id), so the
 * device is matched by its PCI function, the parent of the ib_device (as for mlx5, irdma,
 * bnxt_re): it holds whatever name udev or "rdma dev set ... name" gives it.
 */
static const struct verbs_match_ent tern_match_table[] = {
	VERBS_PCI_MATCH(TERN_PCI_VENDOR_ID, TERN_PCI_DEVICE_ID, NULL),
	{},
};

static const struct verbs_device_ops tern_dev_ops = {
	.name = "tern",
	.match_min_abi_version = TERN_UVERBS_ABI_VERSION,
	.match_max_abi_version = TERN_UVERBS_ABI_VERSION,
	.match_table = tern_match_table,
	.alloc_device = tern_device_alloc,
	.uninit_device = tern_device_free,
	.alloc_context = tern_alloc_context,
};

PROVIDER_DRIVER(tern, tern_dev_ops);
