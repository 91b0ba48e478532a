// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * tern libibverbs provider: completion queues. poll_cq, the extended CQ poll calls
 * (start_poll/next_poll/end_poll, read_*) and req_notify_cq run in userspace on the ring the
 * provider allocated and the doorbell page; no system call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <util/mmio.h>
#include <util/udma_barrier.h>
#include <util/util.h>

#include "tern.h"

/* wc->sl of a UD receive: the RoCE network header type, as ConnectX reports it */
#define TERN_WC_SL_L3_IPV6	1
#define TERN_WC_SL_L3_IPV4	2

static inline uint32_t tern_cq_mask(struct tern_cq *cq)
{
	return (1u << cq->log_depth) - 1;
}

/* The CQE at free-running index @idx (32 or 64 bytes each: the first 32 are a tern_cqe). */
static inline struct tern_cqe *tern_cqe_at(struct tern_cq *cq, uint32_t idx)
{
	return (struct tern_cqe *)((char *)cq->ring + (size_t)(idx & tern_cq_mask(cq)) *
				   cq->cqe_size);
}

/* The CQE at free-running index @idx if the device has written it, else NULL. */
static inline struct tern_cqe *tern_cqe_valid(struct tern_cq *cq, uint32_t idx)
{
	struct tern_cqe *cqe = tern_cqe_at(cq, idx);
	uint8_t flags = __atomic_load_n(&cqe->flags, __ATOMIC_RELAXED);

	if ((flags & TERN_CQE_F_PHASE) != tern_cqe_phase(idx, cq->log_depth))
		return NULL;
	/* the rest of the CQE was written before its flags byte: read it after */
	udma_from_device_barrier();
	return cqe;
}

/* Tell the device how far software has consumed, so it may reuse those entries. */
static inline void tern_cq_update_ci(struct tern_cq *cq)
{
	/* every read of the consumed CQEs happens before the device may overwrite them */
	udma_to_device_barrier();
	__atomic_store_n(&cq->ci_rec->ci, htole32(cq->ci), __ATOMIC_RELAXED);
}

/*
 * A CQ of at least @cqe entries with its ring and CI record, not yet known to the kernel;
 * NULL with errno set.
 */
static struct tern_cq *tern_cq_alloc(struct tern_context *ctx, int cqe, uint8_t flags)
{
	unsigned int log_depth;
	size_t ring_len;
	struct tern_cq *cq;
	int ret;

	if (cqe < 1) {
		errno = EINVAL;
		return NULL;
	}
	log_depth = tern_order(cqe);
	if (log_depth < 1)
		log_depth = 1;
	/* 64-byte CQEs: half as many fit in the deepest ring */
	if (log_depth > ctx->max_cq_log_depth - ((flags & TERN_CREATE_CQ_F_TIMESTAMP) ? 1 : 0)) {
		errno = EINVAL;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cq->log_depth = log_depth;
	cq->flags = flags;
	cq->cqe_size = (flags & TERN_CREATE_CQ_F_TIMESTAMP) ? sizeof(struct tern_cqe_ts) :
							     sizeof(struct tern_cqe);
	ring_len = (size_t)cq->cqe_size << log_depth;
	ret = tern_buf_alloc(&cq->buf, ring_len + sizeof(struct tern_cq_ci_rec));
	if (ret) {
		pthread_spin_destroy(&cq->lock);
		free(cq);
		errno = ret;
		return NULL;
	}
	cq->ring = cq->buf.addr;
	cq->ci_rec = (struct tern_cq_ci_rec *)((char *)cq->buf.addr + ring_len);
	return cq;
}

static void tern_cq_free(struct tern_cq *cq)
{
	tern_buf_free(&cq->buf);
	pthread_spin_destroy(&cq->lock);
	free(cq);
}

static void tern_cq_fill_cmd(struct tern_cq *cq, struct tern_create_cq_cmd *cmd)
{
	cmd->buf_va = (uintptr_t)cq->buf.addr;
	cmd->buf_len = cq->buf.len;
	cmd->log_depth = cq->log_depth;
	cmd->flags = cq->flags;
}

struct ibv_cq *tern_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel, int comp_vector)
{
	struct tern_ucmd_create_cq_resp resp = {};
	struct tern_ucmd_create_cq cmd = {};
	struct tern_cq *cq;
	int ret;

	cq = tern_cq_alloc(to_tctx(ibctx), cqe, 0);
	if (!cq)
		return NULL;
	tern_cq_fill_cmd(cq, &cmd.drv_payload);
	ret = ibv_cmd_create_cq(ibctx, 1 << cq->log_depth, channel, comp_vector, &cq->vcq.cq,
				&cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		tern_cq_free(cq);
		errno = ret;
		return NULL;
	}
	cq->cqn = resp.cqn;
	/* the device never overwrites an unconsumed CQE: all 2^n entries are usable */
	cq->vcq.cq.cqe = 1 << cq->log_depth;
	return &cq->vcq.cq;
}

/*
 * Move the CQ to a new ring of at least @cqe entries. Under the CQ's lock (no poll, arm or
 * clean meanwhile) the consumer index is published in the old ring's record; the device
 * copies the CQEs not yet polled to the start of the new ring (tern_ib.ko's
 * TERN_CMD_RESIZE_CQ) and goes on there, so polling resumes at entry 0. EINVAL when more
 * CQEs are outstanding than the new ring holds; the CQ is unchanged on any error.
 */
int tern_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct ib_uverbs_resize_cq_resp resp = {};
	struct tern_ucmd_resize_cq cmd = {};
	struct tern_cq *cq = to_tcq(ibcq), *nq;
	int ret;

	nq = tern_cq_alloc(to_tctx(ibcq->context), cqe, cq->flags);
	if (!nq)
		return errno;
	tern_cq_fill_cmd(nq, &cmd.drv_payload);
	pthread_spin_lock(&cq->lock);
	tern_cq_update_ci(cq);
	ret = ibv_cmd_resize_cq(ibcq, 1 << nq->log_depth, &cmd.ibv_cmd, sizeof(cmd), &resp,
				sizeof(resp));
	if (!ret) {
		struct tern_buf old = cq->buf;

		cq->buf = nq->buf;
		cq->ring = nq->ring;
		cq->ci_rec = nq->ci_rec;
		cq->log_depth = nq->log_depth;
		cq->ci = 0;
		ibcq->cqe = 1 << nq->log_depth;
		nq->buf = old;
	}
	pthread_spin_unlock(&cq->lock);
	tern_cq_free(nq);	/* the old ring, or the unused new one */
	return ret;
}

/*
 * ibv_modify_cq(): completion-event moderation (IBV_CQ_ATTR_MODERATE, limits in
 * ibv_query_device_ex()'s cq_mod_caps) is the device's business, through tern_ib
 * (TERN_CMD_MODIFY_CQ): nothing changes on the polling side.
 */
int tern_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr)
{
	struct ibv_modify_cq cmd = {};

	return ibv_cmd_modify_cq(ibcq, attr, &cmd, sizeof(cmd));
}

int tern_destroy_cq(struct ibv_cq *ibcq)
{
	struct tern_cq *cq = to_tcq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	tern_cq_free(cq);
	return 0;
}

static enum ibv_wc_status tern_wc_status(uint8_t status)
{
	switch (status) {
	case TERN_CQE_OK:			return IBV_WC_SUCCESS;
	case TERN_CQE_LOC_LEN_ERR:		return IBV_WC_LOC_LEN_ERR;
	case TERN_CQE_LOC_QP_OP_ERR:		return IBV_WC_LOC_QP_OP_ERR;
	case TERN_CQE_LOC_PROT_ERR:		return IBV_WC_LOC_PROT_ERR;
	case TERN_CQE_MW_BIND_ERR:		return IBV_WC_MW_BIND_ERR;
	case TERN_CQE_WR_FLUSH_ERR:		return IBV_WC_WR_FLUSH_ERR;
	case TERN_CQE_BAD_RESP_ERR:		return IBV_WC_BAD_RESP_ERR;
	case TERN_CQE_LOC_ACCESS_ERR:		return IBV_WC_LOC_ACCESS_ERR;
	case TERN_CQE_REM_INV_REQ_ERR:		return IBV_WC_REM_INV_REQ_ERR;
	case TERN_CQE_REM_ACCESS_ERR:		return IBV_WC_REM_ACCESS_ERR;
	case TERN_CQE_REM_OP_ERR:		return IBV_WC_REM_OP_ERR;
	case TERN_CQE_RETRY_EXC_ERR:		return IBV_WC_RETRY_EXC_ERR;
	case TERN_CQE_RNR_RETRY_EXC_ERR:	return IBV_WC_RNR_RETRY_EXC_ERR;
	default:				return IBV_WC_GENERAL_ERR;
	}
}

/*
 * The WQE at slot @wqe_idx (of @wq) is done: so is every earlier one, signaled or not,
 * since the device completes a queue's WQEs in order. @wqe_idx is taken modulo the depth.
 */
static void tern_wq_complete(struct tern_wq *wq, uint16_t wqe_idx)
{
	uint16_t ci = __atomic_load_n(&wq->ci, __ATOMIC_RELAXED);
	uint16_t delta = (uint16_t)(wqe_idx - ci) & ((1u << wq->log_depth) - 1);

	__atomic_store_n(&wq->ci, (uint16_t)(ci + delta + 1), __ATOMIC_RELEASE);
}

/* Caller holds cq->lock. Returns 1 with *wc filled, 0 when the CQ is empty. */
/* The next valid CQE of a QP we know, its QP in *@qpp; NULL when the CQ is empty. */
static struct tern_cqe *tern_next_cqe(struct tern_context *ctx, struct tern_cq *cq,
				      struct tern_qp **qpp)
{
	struct tern_cqe *cqe;

	for (;;) {
		cqe = tern_cqe_valid(cq, cq->ci);
		if (!cqe)
			return NULL;
		cq->ci++;
		*qpp = tern_find_qp(ctx, le32toh(cqe->qpn));
		if (*qpp)
			return cqe;
		/* no such QP any more (cleaned on destroy, so not expected): drop it */
		verbs_warn_datapath(&ctx->ibv_ctx, "CQE for unknown QP %u\n",
				    le32toh(cqe->qpn));
	}
}

/* A receive completion: the slot freed, the opcode, immediate or invalidate, the GRH. */
static void tern_wc_recv(struct tern_qp *qp, const struct tern_cqe *cqe, uint8_t opcode,
			 struct ibv_wc *wc)
{
	/* an SRQ's slots are freed one per receive completion, in ring order */
	if (qp->srq)
		__atomic_fetch_add(&qp->srq->done, 1, __ATOMIC_RELEASE);
	else
		tern_wq_complete(&qp->rq, le16toh(cqe->wqe_idx));
	switch (opcode) {
	case TERN_CQE_RECV_RDMA_WRITE_IMM:
		wc->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		break;
	default:
		wc->opcode = IBV_WC_RECV;
		break;
	}
	if (cqe->flags & TERN_CQE_F_IMM) {
		wc->imm_data = cqe->imm_data;
		wc->wc_flags |= IBV_WC_WITH_IMM;
	} else if (cqe->flags & TERN_CQE_F_INV) {
		wc->invalidated_rkey = le32toh(cqe->invalidated_rkey);
		wc->wc_flags |= IBV_WC_WITH_INV;
	}
	/*
	 * UD: the first 40 bytes placed are the network header, IPv6's, or for IPv4
	 * 20 undefined (zero) bytes then IPv4's (RoCEv2 annex A17.4.5.2). The annex
	 * (A17.4.5.1) has the completion say which one it is; struct ibv_wc has no
	 * field for it, and ConnectX reports it in sl, bits 2:0 (0 GRH, 1 IPv6, 2
	 * IPv4), which SL leaves free on RoCE (no LRH). So does tern, for users such as
	 * UCX's ud_verbs that find the destination GID by it.
	 */
	if (cqe->flags & TERN_CQE_F_GRH) {
		wc->wc_flags |= IBV_WC_GRH;
		wc->sl = cqe->flags & TERN_CQE_F_IPV4 ? TERN_WC_SL_L3_IPV4 :
							 TERN_WC_SL_L3_IPV6;
	}
}

/* A send queue completion: the slot freed and the opcode of the work request. */
static void tern_wc_send(struct tern_qp *qp, const struct tern_cqe *cqe, uint8_t opcode,
			 struct ibv_wc *wc)
{
	tern_wq_complete(&qp->sq, le16toh(cqe->wqe_idx));
	switch (opcode) {
	case TERN_WQE_RDMA_WRITE:
	case TERN_WQE_RDMA_WRITE_IMM:
		wc->opcode = IBV_WC_RDMA_WRITE;
		break;
	case TERN_WQE_RDMA_READ:
		wc->opcode = IBV_WC_RDMA_READ;
		break;
	case TERN_WQE_ATOMIC_CMP_SWP:
		wc->opcode = IBV_WC_COMP_SWAP;
		break;
	case TERN_WQE_ATOMIC_FETCH_ADD:
		wc->opcode = IBV_WC_FETCH_ADD;
		break;
	case TERN_WQE_LOCAL_INV:
		wc->opcode = IBV_WC_LOCAL_INV;
		break;
	case TERN_WQE_BIND_MW:
		wc->opcode = IBV_WC_BIND_MW;
		break;
	default:
		wc->opcode = IBV_WC_SEND;
		break;
	}
}

static int tern_poll_one(struct tern_context *ctx, struct tern_cq *cq, struct ibv_wc *wc)
{
	struct tern_cqe *cqe;
	struct tern_qp *qp;
	uint8_t opcode;

	cqe = tern_next_cqe(ctx, cq, &qp);
	if (!cqe)
		return 0;
	opcode = cqe->opcode;
	/* any error completion means the QP is in ERR: receives must ring from now on */
	if (cqe->status != TERN_CQE_OK && qp->rq.db_rec)
		tern_rq_may_be_err(ctx, qp);
	wc->wr_id = le64toh(cqe->wr_id);
	wc->status = tern_wc_status(cqe->status);
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = le32toh(cqe->byte_len);
	wc->qp_num = qp->qpn;
	wc->src_qp = le32toh(cqe->src_qpn);
	wc->wc_flags = 0;
	wc->imm_data = 0;
	wc->pkey_index = 0;
	wc->slid = 0;
	wc->sl = 0;
	wc->dlid_path_bits = 0;
	if (cq->cqe_size > sizeof(struct tern_cqe))
		cq->cur_ts = le64toh(((struct tern_cqe_ts *)cqe)->timestamp);

	if (opcode & 0x80)
		tern_wc_recv(qp, cqe, opcode, wc);
	else
		tern_wc_send(qp, cqe, opcode, wc);
	return 1;
}

int tern_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct tern_context *ctx = to_tctx(ibcq->context);
	struct tern_cq *cq = to_tcq(ibcq);
	uint32_t ci0;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	ci0 = cq->ci;
	while (n < ne && tern_poll_one(ctx, cq, wc + n))
		n++;
	if (cq->ci != ci0)
		tern_cq_update_ci(cq);
	pthread_spin_unlock(&cq->lock);
	return n;
}

/*
 * Extended CQs (ibv_create_cq_ex). start_poll takes the CQ's lock and decodes the first CQE
 * into cq->cur with the same decoder as poll_cq; next_poll decodes the next; the read_*
 * accessors return fields of cq->cur; end_poll publishes the consumer index once for the
 * whole batch and drops the lock. No system call on any of them.
 */
static inline struct tern_cq *to_tcq_ex(struct ibv_cq_ex *ibcq)
{
	return to_tcq(ibv_cq_ex_to_cq(ibcq));
}

static int tern_cq_ex_take(struct tern_cq *cq)
{
	if (!tern_poll_one(to_tctx(cq->vcq.cq.context), cq, &cq->cur))
		return ENOENT;
	cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
	cq->vcq.cq_ex.status = cq->cur.status;
	return 0;
}

static int tern_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct tern_cq *cq = to_tcq_ex(ibcq);

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	cq->poll_ci0 = cq->ci;
	if (tern_cq_ex_take(cq)) {
		/* nothing to poll: the caller does not call end_poll */
		if (cq->ci != cq->poll_ci0)
			tern_cq_update_ci(cq);
		pthread_spin_unlock(&cq->lock);
		return ENOENT;
	}
	return 0;
}

static int tern_next_poll(struct ibv_cq_ex *ibcq)
{
	return tern_cq_ex_take(to_tcq_ex(ibcq));
}

static void tern_end_poll(struct ibv_cq_ex *ibcq)
{
	struct tern_cq *cq = to_tcq_ex(ibcq);

	if (cq->ci != cq->poll_ci0)
		tern_cq_update_ci(cq);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode tern_read_opcode(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur.opcode;
}

static uint32_t tern_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur.vendor_err;
}

static uint32_t tern_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur.byte_len;
}

static __be32 tern_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur.imm_data;
}

static uint32_t tern_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur.qp_num;
}

static uint32_t tern_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur.src_qp;
}

static unsigned int tern_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur.wc_flags;
}

static uint32_t tern_read_slid(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur.slid;
}

static uint8_t tern_read_sl(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur.sl;
}

/* The device clock (ns) when the device wrote the completion: hca_core_clock's unit. */
static uint64_t tern_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur_ts;
}

static uint8_t tern_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur.dlid_path_bits;
}

/* What a tern CQE carries; RoCE has no LIDs, so SLID and DLID path bits read as 0. */
#define TERN_CQ_EX_WC_FLAGS	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |		\
				 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |		\
				 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |			\
				 IBV_WC_EX_WITH_DLID_PATH_BITS)

struct ibv_cq_ex *tern_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct tern_ucmd_create_cq_ex_resp resp = {};
	struct tern_ucmd_create_cq_ex cmd = {};
	struct ibv_cq_ex *cx;
	struct tern_cq *cq;
	int ret;

	struct tern_context *ctx = to_tctx(ibctx);
	uint64_t wc_flags = TERN_CQ_EX_WC_FLAGS;

	/* completion timestamps where the kernel and device have them (not wallclock: the
	 * device clock is not the system's), no parent domains, no overrun-ignoring CQs
	 */
	if (ctx->cqe_ts)
		wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	if ((attr->wc_flags & ~wc_flags) ||
	    (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cq = tern_cq_alloc(ctx, (int)attr->cqe,
			   (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) ?
			   TERN_CREATE_CQ_F_TIMESTAMP : 0);
	if (!cq)
		return NULL;
	tern_cq_fill_cmd(cq, &cmd.drv_payload);
	ret = ibv_cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd.ibv_cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp), 0);
	if (ret) {
		tern_cq_free(cq);
		errno = ret;
		return NULL;
	}
	cq->cqn = resp.drv_payload.cqn;
	cq->vcq.cq.cqe = 1 << cq->log_depth;

	/* single-threaded CQs keep the lock: uncontended, it costs one atomic per batch */
	cx = &cq->vcq.cq_ex;
	cx->start_poll = tern_start_poll;
	cx->next_poll = tern_next_poll;
	cx->end_poll = tern_end_poll;
	cx->read_opcode = tern_read_opcode;
	cx->read_vendor_err = tern_read_vendor_err;
	cx->read_wc_flags = tern_read_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cx->read_byte_len = tern_read_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		cx->read_imm_data = tern_read_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cx->read_qp_num = tern_read_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cx->read_src_qp = tern_read_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		cx->read_slid = tern_read_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		cx->read_sl = tern_read_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cx->read_dlid_path_bits = tern_read_dlid_path_bits;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cx->read_completion_ts = tern_read_completion_ts;
	return cx;
}

int tern_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct tern_context *ctx = to_tctx(ibcq->context);
	struct tern_cq *cq = to_tcq(ibcq);
	uint64_t db;

	pthread_spin_lock(&cq->lock);
	db = tern_udb_cq(cq->cqn, cq->ci,
			 solicited_only ? TERN_UDB_CQ_ARM_SOLICITED : TERN_UDB_CQ_ARM_NEXT);
	/* the CI record the doorbell refers to is written before it */
	udma_to_device_barrier();
	mmio_write64_le((char *)ctx->uar + TERN_UDB_CQ, htole64(db));
	pthread_spin_unlock(&cq->lock);
	return 0;
}

/*
 * ibv_get_cq_event got an event for this CQ. Each arming yields at most one event and
 * the device keeps no per-arming state to acknowledge, so this only counts.
 */
void tern_cq_event(struct ibv_cq *ibcq)
{
	struct tern_cq *cq = to_tcq(ibcq);

	pthread_spin_lock(&cq->lock);
	cq->events++;
	pthread_spin_unlock(&cq->lock);
}

/*
 * Remove every CQE of QP @qp from @cq (destroy_qp, modify_qp to RESET), so that a gone
 * or reset QP's completions are not returned; a removed receive completion of a QP on an
 * SRQ still frees its SRQ slot. Caller holds cq->lock. The entries that
 * stay are moved towards the producer end, over the removed ones, and the consumer index
 * advances by the number removed. The device only writes past the last valid entry, which
 * this never touches.
 */
void tern_cq_clean(struct tern_cq *cq, struct tern_qp *qp)
{
	uint32_t end, idx, nfreed = 0, qpn = qp->qpn;
	struct tern_cqe *src, *dst;

	for (end = cq->ci; end - cq->ci <= tern_cq_mask(cq); end++)
		if (!tern_cqe_valid(cq, end))
			break;

	for (idx = end; idx-- != cq->ci;) {
		src = tern_cqe_at(cq, idx);
		if (le32toh(src->qpn) == qpn) {
			if (qp->srq && (src->opcode & 0x80))
				__atomic_fetch_add(&qp->srq->done, 1, __ATOMIC_RELEASE);
			nfreed++;
			continue;
		}
		if (!nfreed)
			continue;
		dst = tern_cqe_at(cq, idx + nfreed);
		/* copy all but the flags byte, then flags with the destination's phase */
		memcpy(dst, src, offsetof(struct tern_cqe, flags));
		if (cq->cqe_size > sizeof(*src))
			memcpy(dst + 1, src + 1, cq->cqe_size - sizeof(*src));
		udma_to_device_barrier();
		dst->flags = (src->flags & ~TERN_CQE_F_PHASE) | tern_cqe_phase(idx + nfreed, cq->log_depth);
	}
	if (nfreed) {
		cq->ci += nfreed;
		tern_cq_update_ci(cq);
	}
}

/* Lock two CQs (possibly the same one) in a fixed order. */
void tern_lock_cqs(struct tern_cq *a, struct tern_cq *b)
{
	if (a == b) {
		pthread_spin_lock(&a->lock);
	} else if (a < b) {
		pthread_spin_lock(&a->lock);
		pthread_spin_lock(&b->lock);
	} else {
		pthread_spin_lock(&b->lock);
		pthread_spin_lock(&a->lock);
	}
}

void tern_unlock_cqs(struct tern_cq *a, struct tern_cq *b)
{
	if (a != b)
		pthread_spin_unlock(&b->lock);
	pthread_spin_unlock(&a->lock);
}
