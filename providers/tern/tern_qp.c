// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * tern libibverbs provider: queue pairs (RC and UD, with or without an SRQ). post_send, the
 * ibv_wr_* calls and post_recv write WQEs into the rings the provider allocated and ring the
 * doorbell page; no system call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <util/mmio.h>
#include <util/udma_barrier.h>
#include <util/util.h>

#include "tern.h"

/* A free-running u16 producer index tells at most 0xffff outstanding WQEs apart. */
#define TERN_WQ_MAX_WQE		0xffffu
#define TERN_SEND_FLAGS		(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
				 IBV_SEND_INLINE)

/*
 * Size one queue: the smallest power-of-two stride that holds @hdr + @data bytes (at
 * least 2^min_log), and the smallest power-of-two depth that holds @wr WQEs (at least 2).
 * EINVAL when that exceeds the limits tern_ib.ko reported.
 */
static int tern_size_wq(struct tern_wq *wq, uint32_t wr, size_t hdr, size_t data,
			unsigned int min_log, unsigned int max_log, unsigned int max_log_depth)
{
	unsigned int log_stride = tern_order(hdr + data);
	unsigned int log_depth;

	if (log_stride < min_log)
		log_stride = min_log;
	if (log_stride > max_log)
		return EINVAL;
	if (wr > TERN_WQ_MAX_WQE)
		return EINVAL;
	log_depth = tern_order(wr ? wr : 1);
	if (log_depth < 1)
		log_depth = 1;
	if (log_depth > max_log_depth)
		return EINVAL;
	wq->log_stride = log_stride;
	wq->log_depth = log_depth;
	wq->max_wqe = (1u << log_depth) < TERN_WQ_MAX_WQE ? 1u << log_depth : TERN_WQ_MAX_WQE;
	return 0;
}

/* @reported, but no less than @asked and no more than @room (room >= asked). */
static uint32_t tern_cap(uint32_t reported, uint32_t asked, uint32_t room)
{
	if (reported > room)
		reported = room;
	return reported > asked ? reported : asked;
}

static void tern_report_caps(struct tern_qp *qp, struct ibv_qp_cap *cap)
{
	cap->max_send_wr = qp->sq.max_wqe;
	cap->max_recv_wr = qp->rq.max_wqe;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = qp->rq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;
}

static void tern_free_qp(struct tern_qp *qp)
{
	free(qp->wr_sge);
	free(qp->wr_inline);
	tern_buf_free(&qp->sq.buf);
	tern_buf_free(&qp->rq.buf);
	pthread_spin_destroy(&qp->sq.lock);
	pthread_spin_destroy(&qp->rq.lock);
	free(qp);
}

/* What tern_create_qp() refuses before it allocates anything: an errno, or 0. */
static int tern_qp_check_attr(struct tern_context *ctx, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_cap *cap = &attr->cap;

	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD)
		return EOPNOTSUPP;
	if (!attr->send_cq || !attr->recv_cq)
		return EINVAL;
	if (cap->max_inline_data > ctx->max_inline || cap->max_send_sge > UINT8_MAX ||
	    cap->max_recv_sge > UINT8_MAX)
		return EINVAL;
	return 0;
}

/* The send WQE's header: a UD WQE carries the address vector between header and data. */
static size_t tern_sq_hdr(struct tern_qp *qp)
{
	return TERN_SQ_WQE_HDR + (qp->ud ? sizeof(struct tern_ud_seg) : 0);
}

/* Size the send queue and, without an SRQ, the receive queue for what @cap asks. */
static int tern_qp_size(struct tern_context *ctx, struct tern_qp *qp, struct ibv_qp_cap *cap)
{
	unsigned int sq_min_log = ctx->sq_min_log_stride;
	size_t hdr = tern_sq_hdr(qp), data;
	int ret;

	if (qp->ud && sq_min_log < TERN_SQ_UD_MIN_LOG_STRIDE)
		sq_min_log = TERN_SQ_UD_MIN_LOG_STRIDE;
	data = (size_t)cap->max_send_sge * sizeof(struct tern_sge);
	if (data < cap->max_inline_data)
		data = cap->max_inline_data;
	ret = tern_size_wq(&qp->sq, cap->max_send_wr, hdr, data, sq_min_log,
			   ctx->sq_max_log_stride, ctx->max_sq_log_depth);
	if (ret)
		return ret;
	qp->sq.max_sge = cap->max_send_sge;
	qp->sq.max_inline = (1u << qp->sq.log_stride) - hdr;
	if (qp->sq.max_inline > ctx->max_inline)
		qp->sq.max_inline = ctx->max_inline;

	/* a QP on an SRQ has no receive ring of its own */
	if (qp->srq)
		return 0;
	ret = tern_size_wq(&qp->rq, cap->max_recv_wr, TERN_RQ_WQE_HDR,
			   (size_t)cap->max_recv_sge * sizeof(struct tern_sge),
			   ctx->rq_min_log_stride, ctx->rq_max_log_stride, ctx->max_rq_log_depth);
	if (ret)
		return ret;
	qp->rq.max_sge = cap->max_recv_sge;
	return 0;
}

/* Allocate the rings (and the receive doorbell record) and describe them in @cmd. */
static int tern_qp_alloc_rings(struct tern_context *ctx, struct tern_qp *qp,
			       struct tern_ucmd_create_qp *cmd)
{
	size_t ring;
	int ret;

	ret = tern_buf_alloc(&qp->sq.buf, (size_t)1 << (qp->sq.log_depth + qp->sq.log_stride));
	if (ret)
		return ret;
	cmd->sq_va = (uintptr_t)qp->sq.buf.addr;
	cmd->sq_len = qp->sq.buf.len;
	cmd->log_sq_depth = qp->sq.log_depth;
	cmd->log_sq_stride = qp->sq.log_stride;
	if (qp->srq)
		return 0;

	/* the doorbell record, when the kernel takes one, right after the ring */
	ring = (size_t)1 << (qp->rq.log_depth + qp->rq.log_stride);
	ret = tern_buf_alloc(&qp->rq.buf,
			     ring + (ctx->db_rec ? sizeof(struct tern_wq_db_rec) : 0));
	if (ret)
		return ret;
	if (ctx->db_rec) {
		qp->rq.db_rec = (struct tern_wq_db_rec *)((char *)qp->rq.buf.addr + ring);
		cmd->flags = TERN_CREATE_QP_F_RQ_DB_REC;
	} else {
		qp->rq.ring_db = true;
	}
	cmd->rq_va = (uintptr_t)qp->rq.buf.addr;
	cmd->rq_len = qp->rq.buf.len;
	cmd->log_rq_depth = qp->rq.log_depth;
	cmd->log_rq_stride = qp->rq.log_stride;
	return 0;
}

/*
 * tern_ib.ko answers with what the device and the slots allow (at least what was asked in
 * @cap): take that, never beyond what our slots hold.
 */
static void tern_qp_take_caps(struct tern_qp *qp, const struct ibv_qp_cap *kcap,
			      const struct ibv_qp_cap *cap)
{
	qp->sq.max_sge = tern_cap(kcap->max_send_sge, cap->max_send_sge,
				  ((1u << qp->sq.log_stride) - tern_sq_hdr(qp)) /
				  sizeof(struct tern_sge));
	if (!qp->srq)
		qp->rq.max_sge = tern_cap(kcap->max_recv_sge, cap->max_recv_sge,
					  ((1u << qp->rq.log_stride) - TERN_RQ_WQE_HDR) /
					  sizeof(struct tern_sge));
	qp->sq.max_inline = tern_cap(kcap->max_inline_data, cap->max_inline_data,
				     qp->sq.max_inline);
}

struct ibv_qp *tern_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct tern_context *ctx = to_tctx(pd->context);
	struct tern_ucmd_create_qp_resp resp = {};
	struct tern_ucmd_create_qp cmd = {};
	struct ibv_qp_init_attr kattr;
	struct tern_cq *send_cq, *recv_cq;
	struct tern_qp *qp;
	int ret;

	ret = tern_qp_check_attr(ctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	qp->ud = attr->qp_type == IBV_QPT_UD;
	qp->uc = attr->qp_type == IBV_QPT_UC;
	qp->srq = attr->srq ? to_tsrq(attr->srq) : NULL;

	ret = tern_qp_size(ctx, qp, &attr->cap);
	if (!ret)
		ret = tern_qp_alloc_rings(ctx, qp, &cmd);
	if (ret)
		goto err_free;

	/* tern_ib.ko checks the capabilities we will really provide */
	kattr = *attr;
	tern_report_caps(qp, &kattr.cap);
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, &kattr, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	qp->qpn = qp->vqp.qp.qp_num;
	if (resp.qpn != qp->qpn) {
		verbs_err(&ctx->ibv_ctx, "QPN %u from uverbs but %u from tern_ib\n",
			  qp->qpn, resp.qpn);
		ret = EPROTO;
		goto err_destroy;
	}
	tern_qp_take_caps(qp, &kattr.cap, &attr->cap);
	qp->ece_offer = resp.ece_options;
	qp->sq_sig_all = attr->sq_sig_all;
	qp->state = IBV_QPS_RESET;

	send_cq = to_tcq(attr->send_cq);
	recv_cq = to_tcq(attr->recv_cq);
	tern_lock_cqs(send_cq, recv_cq);
	ret = tern_store_qp(ctx, qp);
	tern_unlock_cqs(send_cq, recv_cq);
	if (ret)
		goto err_destroy;

	tern_report_caps(qp, &attr->cap);
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	tern_free_qp(qp);
	errno = ret;
	return NULL;
}

/* The ibv_wr_* operations each QP type offers (the opcodes post_send takes). */
#define TERN_RC_SEND_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |	\
				 IBV_QP_EX_WITH_RDMA_WRITE |				\
				 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |			\
				 IBV_QP_EX_WITH_RDMA_READ |				\
				 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |			\
				 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |			\
				 IBV_QP_EX_WITH_SEND_WITH_INV |				\
				 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)
#define TERN_UC_SEND_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |	\
				 IBV_QP_EX_WITH_RDMA_WRITE |				\
				 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |			\
				 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)
#define TERN_UD_SEND_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)

static void tern_qp_set_wr_ops(struct tern_qp *qp);

/*
 * What ibv_create_qp asks for, plus the ibv_wr_* interface (IBV_QP_INIT_ATTR_SEND_OPS_FLAGS
 * with the operations of tern_rc/ud_send_ops); other extensions: EOPNOTSUPP.
 */
struct ibv_qp *tern_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_init_attr init = {};
	uint64_t ops = 0, allowed;
	struct tern_qp *tqp;
	struct ibv_qp *qp;

	if (attr->comp_mask & ~(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != ibctx) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = attr->send_ops_flags;
		allowed = attr->qp_type == IBV_QPT_UD ? TERN_UD_SEND_OPS :
			  attr->qp_type == IBV_QPT_UC ? TERN_UC_SEND_OPS : TERN_RC_SEND_OPS;
		if (!ops || (ops & ~allowed)) {
			errno = EOPNOTSUPP;
			return NULL;
		}
	}
	init.qp_context = attr->qp_context;
	init.send_cq = attr->send_cq;
	init.recv_cq = attr->recv_cq;
	init.srq = attr->srq;
	init.cap = attr->cap;
	init.qp_type = attr->qp_type;
	init.sq_sig_all = attr->sq_sig_all;
	qp = tern_create_qp(attr->pd, &init);
	if (!qp)
		return NULL;
	attr->cap = init.cap;
	if (!ops)
		return qp;

	tqp = to_tqp(qp);
	tqp->send_ops = ops;
	tqp->wr_sge = calloc(tqp->sq.max_sge ? tqp->sq.max_sge : 1, sizeof(*tqp->wr_sge));
	tqp->wr_inline = malloc(tqp->sq.max_inline ? tqp->sq.max_inline : 1);
	if (!tqp->wr_sge || !tqp->wr_inline) {
		tern_destroy_qp(qp);
		errno = ENOMEM;
		return NULL;
	}
	tern_qp_set_wr_ops(tqp);
	return qp;
}

/* The in-flight cap of TERN_ECE_* options @o: 2^n PSNs, n = 4..8 (0: the device's default). */
static uint32_t tern_ece_log_cap(uint32_t o)
{
	uint32_t cap = (o & TERN_ECE_SR_LOG_CAP_MASK) >> TERN_ECE_SR_LOG_CAP_SHIFT;

	return cap ? cap : TERN_QP_XPORT_DEF_LOG_CAP;
}

/*
 * ibv_query_ece(): the options this QP offers, or after ibv_set_ece() those agreed (what
 * librdmacm answers a connection request with, and what the QP runs from RTR on); a QP
 * that went to RTR without ibv_set_ece() agreed on nothing (standard go-back-N).
 */
int tern_query_ece(struct ibv_qp *ibqp, struct ibv_ece *ece)
{
	struct tern_qp *qp = to_tqp(ibqp);

	ece->vendor_id = TERN_ECE_VENDOR_ID;
	ece->options = qp->ece_set ? qp->ece_agreed : qp->ece_offer;
	ece->comp_mask = 0;
	return 0;
}

/*
 * ibv_set_ece(): the options the peer offered (a connection request) or agreed (the
 * reply). Selective repeat is agreed if both sides have it, with the smaller in-flight cap.
 * Options of another vendor, unknown bits or a cap outside 4..8: EINVAL.
 */
int tern_set_ece(struct ibv_qp *ibqp, struct ibv_ece *ece)
{
	struct tern_qp *qp = to_tqp(ibqp);
	uint32_t o = ece->options, cap = (o & TERN_ECE_SR_LOG_CAP_MASK) >>
					  TERN_ECE_SR_LOG_CAP_SHIFT;
	uint32_t agreed = 0;

	if (ece->comp_mask || ece->vendor_id != TERN_ECE_VENDOR_ID || (o & ~TERN_ECE_OPTIONS) ||
	    (cap && (cap < TERN_QP_XPORT_MIN_LOG_CAP || cap > TERN_QP_XPORT_MAX_LOG_CAP)) ||
	    (cap && !(o & TERN_ECE_SR)))
		return EINVAL;
	/* the transport is fixed from RTR on (tern_ib applies the options at INIT->RTR) */
	if (qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_INIT)
		return EINVAL;
	if ((o & TERN_ECE_SR) && (qp->ece_offer & TERN_ECE_SR)) {
		uint32_t mine = tern_ece_log_cap(qp->ece_offer), theirs = tern_ece_log_cap(o);

		agreed = TERN_ECE_SR |
			 (mine < theirs ? mine : theirs) << TERN_ECE_SR_LOG_CAP_SHIFT;
	}
	qp->ece_agreed = agreed;
	qp->ece_set = true;
	return 0;
}

int tern_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct tern_qp *qp = to_tqp(ibqp);
	struct tern_cq *send_cq = to_tcq(ibqp->send_cq);
	struct tern_cq *recv_cq = to_tcq(ibqp->recv_cq);
	struct tern_ucmd_modify_qp cmd = {};
	struct tern_ucmd_modify_qp_resp resp = {};
	int ret;

	if (qp->ece_set) {
		/* the agreed options reach tern_ib through the extended command's driver data */
		cmd.ece_options = qp->ece_agreed;
		ret = ibv_cmd_modify_qp_ex(ibqp, attr, attr_mask, &cmd.ibv_cmd, sizeof(cmd),
					   &resp.ibv_resp, sizeof(resp));
	} else {
		struct ibv_modify_qp legacy = {};

		ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &legacy, sizeof(legacy));
	}
	if (ret)
		return ret;
	if (!(attr_mask & IBV_QP_STATE))
		return 0;
	/* ERR: the device read the record on the way; later posts must ring as well */
	if (attr->qp_state == IBV_QPS_ERR)
		tern_rq_may_be_err(to_tctx(ibqp->context), qp);

	/* RTR fixes the transport (nothing agreed: go-back-N); RESET offers again */
	if (attr->qp_state == IBV_QPS_RTR && !qp->ece_set) {
		qp->ece_agreed = 0;
		qp->ece_set = true;
	} else if (attr->qp_state == IBV_QPS_RESET) {
		qp->ece_agreed = 0;
		qp->ece_set = false;
	}
	if (attr->qp_state == IBV_QPS_RESET) {
		/* the device emptied both queues: drop their completions, restart at 0 */
		tern_lock_cqs(send_cq, recv_cq);
		tern_cq_clean(recv_cq, qp);
		if (send_cq != recv_cq)
			tern_cq_clean(send_cq, qp);
		pthread_spin_lock(&qp->sq.lock);
		pthread_spin_lock(&qp->rq.lock);
		qp->sq.pi = 0;
		__atomic_store_n(&qp->sq.ci, 0, __ATOMIC_RELEASE);
		qp->rq.pi = 0;
		__atomic_store_n(&qp->rq.ci, 0, __ATOMIC_RELEASE);
		/* the device's indices are 0 again: so is the record, and no error is pending */
		if (qp->rq.db_rec) {
			__atomic_store_n(&qp->rq.db_rec->pi, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&qp->rq.ring_db, false, __ATOMIC_SEQ_CST);
		}
		__atomic_store_n(&qp->state, attr->qp_state, __ATOMIC_RELEASE);
		pthread_spin_unlock(&qp->rq.lock);
		pthread_spin_unlock(&qp->sq.lock);
		tern_unlock_cqs(send_cq, recv_cq);
	} else {
		__atomic_store_n(&qp->state, attr->qp_state, __ATOMIC_RELEASE);
	}
	return 0;
}

int tern_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr)
{
	struct tern_qp *qp = to_tqp(ibqp);
	struct ibv_query_qp cmd = {};
	int ret;

	ret = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	tern_report_caps(qp, &attr->cap);
	tern_report_caps(qp, &init_attr->cap);
	return 0;
}

int tern_destroy_qp(struct ibv_qp *ibqp)
{
	struct tern_context *ctx = to_tctx(ibqp->context);
	struct tern_qp *qp = to_tqp(ibqp);
	struct tern_cq *send_cq = to_tcq(ibqp->send_cq);
	struct tern_cq *recv_cq = to_tcq(ibqp->recv_cq);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	/* the device writes no more CQEs for it: drop those not yet polled */
	tern_lock_cqs(send_cq, recv_cq);
	tern_cq_clean(recv_cq, qp);
	if (send_cq != recv_cq)
		tern_cq_clean(send_cq, qp);
	tern_clear_qp(ctx, qp->qpn);
	tern_unlock_cqs(send_cq, recv_cq);

	tern_free_qp(qp);
	return 0;
}

/* ----------------------------------------------------------------------------------- */
/* Data path                                                                             */

static inline bool tern_wq_full(struct tern_wq *wq)
{
	uint16_t ci = __atomic_load_n(&wq->ci, __ATOMIC_ACQUIRE);

	return (uint16_t)(wq->pi - ci) >= wq->max_wqe;
}

static inline void tern_ring_db(struct tern_context *ctx, unsigned int offset,
				uint32_t qpn, uint16_t pi)
{
	uint64_t db = tern_udb_wq(qpn, pi);

	/* the WQEs are in memory before the device hears of them */
	udma_to_device_barrier();
	mmio_write64_le((char *)ctx->uar + offset, htole64(db));
}

/**
 * tern_rq_may_be_err() - the QP is, or may be, in ERR: post receives with the RQ doorbell too
 * @ctx: the QP's context
 * @qp: the QP
 *
 * With a doorbell record the device learns of receives when it needs one, but a QP in ERR
 * needs none: it flushes what it knows of. From now on post_recv rings TERN_UDB_RQ after the
 * record, and one doorbell now covers what was posted before a poster could see the flag
 * (the device reads the record for it; the doorbell's PI is not used). Called by modify_qp
 * to ERR and by poll_cq for an error completion of the QP. No-op without a record.
 */
void tern_rq_may_be_err(struct tern_context *ctx, struct tern_qp *qp)
{
	if (!qp->rq.db_rec || __atomic_load_n(&qp->rq.ring_db, __ATOMIC_SEQ_CST))
		return;
	__atomic_store_n(&qp->rq.ring_db, true, __ATOMIC_SEQ_CST);
	udma_to_device_barrier();
	mmio_write64_le((char *)ctx->uar + TERN_UDB_RQ, htole64(tern_udb_wq(qp->qpn, 0)));
}

static int tern_wqe_opcode(enum ibv_wr_opcode op, uint8_t *opcode)
{
	switch (op) {
	case IBV_WR_SEND:
		*opcode = TERN_WQE_SEND;
		return 0;
	case IBV_WR_SEND_WITH_IMM:
		*opcode = TERN_WQE_SEND_IMM;
		return 0;
	case IBV_WR_RDMA_WRITE:
		*opcode = TERN_WQE_RDMA_WRITE;
		return 0;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		*opcode = TERN_WQE_RDMA_WRITE_IMM;
		return 0;
	case IBV_WR_RDMA_READ:
		*opcode = TERN_WQE_RDMA_READ;
		return 0;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		*opcode = TERN_WQE_ATOMIC_CMP_SWP;
		return 0;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		*opcode = TERN_WQE_ATOMIC_FETCH_ADD;
		return 0;
	case IBV_WR_SEND_WITH_INV:
		*opcode = TERN_WQE_SEND_INV;
		return 0;
	case IBV_WR_LOCAL_INV:
		*opcode = TERN_WQE_LOCAL_INV;
		return 0;
	case IBV_WR_BIND_MW:
		*opcode = TERN_WQE_BIND_MW;
		return 0;
	default:
		/* TSO, atomic write, driver opcodes: not supported */
		return EINVAL;
	}
}

/*
 * The rights a window may be given. IBV_ACCESS_LOCAL_WRITE means nothing for a window (it
 * is reached only remotely) and is ignored, as are the optional hints; zero-based windows
 * are not supported.
 */
#define TERN_MW_ACCESS	(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_ATOMIC)
#define TERN_MW_ACCESS_IGNORED	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_OPTIONAL_RANGE)

/*
 * LOCAL_INV (the key in the header) and BIND_MW (the window's new key in the header, struct
 * tern_bind_mw_seg after it): no data. A bind of length 0 (type 1: unbind) may name an MR
 * or not. The window's new key is its index with the key byte of wr->bind_mw.rkey: only
 * that byte is the consumer's (the IB spec's key portion), the rest of the rkey given is
 * not looked at, as mlx5 does.
 */
static int tern_build_local_wqe(struct tern_qp *qp, struct ibv_send_wr *wr, uint8_t opcode,
				struct tern_sq_wqe *wqe)
{
	const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;
	struct tern_bind_mw_seg *seg = (void *)(wqe + 1);
	struct ibv_mw *mw = wr->bind_mw.mw;

	if (wr->send_flags & IBV_SEND_INLINE)
		return EINVAL;
	if (opcode == TERN_WQE_LOCAL_INV) {
		wqe->rkey = htole32(wr->invalidate_rkey);
		return 0;
	}
	if (!mw || (bi->mw_access_flags & ~(TERN_MW_ACCESS | TERN_MW_ACCESS_IGNORED)) ||
	    (!bi->mr && bi->length) || (bi->mr && bi->mr->pd != mw->pd))
		return EINVAL;
	wqe->rkey = htole32((mw->rkey & ~0xffu) | (wr->bind_mw.rkey & 0xffu));
	memset(seg, 0, sizeof(*seg));
	seg->addr = htole64(bi->addr);
	seg->length = htole64(bi->length);
	seg->mr_key = htole32(bi->mr ? bi->mr->lkey : 0);
	if (bi->mw_access_flags & IBV_ACCESS_REMOTE_READ)
		seg->access |= TERN_ACCESS_REMOTE_READ;
	if (bi->mw_access_flags & IBV_ACCESS_REMOTE_WRITE)
		seg->access |= TERN_ACCESS_REMOTE_WRITE;
	if (bi->mw_access_flags & IBV_ACCESS_REMOTE_ATOMIC)
		seg->access |= TERN_ACCESS_REMOTE_ATOMIC;
	return 0;
}

/* Whether @wr, of WQE opcode @opcode, is one this QP may post: 0 or EINVAL. */
static int tern_check_send_wr(struct tern_qp *qp, struct ibv_send_wr *wr, uint8_t opcode)
{
	if (wr->send_flags & ~TERN_SEND_FLAGS)
		return EINVAL;
	/* UD: SEND and SEND_WITH_IMM only, each to the address of an AH */
	if (qp->ud && ((opcode != TERN_WQE_SEND && opcode != TERN_WQE_SEND_IMM) ||
		       !wr->wr.ud.ah))
		return EINVAL;
	/* UC: SEND and RDMA WRITE (with or without immediate), no READ, no atomics */
	if (qp->uc && (opcode == TERN_WQE_RDMA_READ || tern_wqe_op_atomic(opcode) ||
		       opcode == TERN_WQE_SEND_INV))
		return EINVAL;
	/* atomics: one 8-byte SGE that receives the original value, never inline */
	if (tern_wqe_op_atomic(opcode) &&
	    ((wr->send_flags & IBV_SEND_INLINE) || wr->num_sge != 1 ||
	     wr->sg_list[0].length != 8))
		return EINVAL;
	return 0;
}

/* The WQE's flags for @wr's send flags (inline is added with the data). */
static uint8_t tern_send_wqe_flags(struct tern_qp *qp, struct ibv_send_wr *wr, uint8_t opcode)
{
	uint8_t flags = 0;

	if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		flags |= TERN_WQE_F_SIGNALED;
	if ((wr->send_flags & IBV_SEND_SOLICITED) && tern_wqe_op_solicits(opcode))
		flags |= TERN_WQE_F_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		flags |= TERN_WQE_F_FENCE;
	return flags;
}

/*
 * The remote side of the WQE: the RDMA address and key in the header, then the UD
 * destination and the atomic operands between header and data. Returns where the data goes.
 */
static void *tern_build_remote(struct tern_qp *qp, struct ibv_send_wr *wr, uint8_t opcode,
			       struct tern_sq_wqe *wqe)
{
	void *data = wqe + 1;

	if (opcode == TERN_WQE_RDMA_WRITE || opcode == TERN_WQE_RDMA_WRITE_IMM ||
	    opcode == TERN_WQE_RDMA_READ) {
		wqe->rkey = htole32(wr->wr.rdma.rkey);
		wqe->remote_addr = htole64(wr->wr.rdma.remote_addr);
	}
	if (qp->ud) {
		struct tern_ud_seg *ud = data;

		memcpy(&ud->path, &to_tah(wr->wr.ud.ah)->path, sizeof(ud->path));
		ud->dest_qpn = htole32(wr->wr.ud.remote_qpn);
		ud->qkey = htole32(wr->wr.ud.remote_qkey);
		ud->rsvd[0] = 0;
		ud->rsvd[1] = 0;
		data = ud + 1;
	}
	if (tern_wqe_op_atomic(opcode)) {
		struct tern_atomic_seg *at = data;

		wqe->rkey = htole32(wr->wr.atomic.rkey);
		wqe->remote_addr = htole64(wr->wr.atomic.remote_addr);
		if (opcode == TERN_WQE_ATOMIC_CMP_SWP) {
			at->swap_add = htole64(wr->wr.atomic.swap);
			at->compare = htole64(wr->wr.atomic.compare_add);
		} else {
			at->swap_add = htole64(wr->wr.atomic.compare_add);
			at->compare = 0;
		}
		data = at + 1;
	}
	return data;
}

/* Copy @wr's scatter list into the slot at @dst as inline data (at most max_inline). */
static int tern_build_inline(struct tern_qp *qp, struct ibv_send_wr *wr, uint8_t opcode,
			     struct tern_sq_wqe *wqe, uint8_t *dst)
{
	size_t len = 0;
	int i;

	if (opcode == TERN_WQE_RDMA_READ || wr->num_sge < 0)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->sq.max_inline - len)
			return EINVAL;
		memcpy(dst + len, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	wqe->inline_len = htole32(len);
	return 0;
}

/* Copy @wr's scatter list into the slot at @sge as SGEs (at most max_sge). */
static int tern_build_sges(struct tern_qp *qp, struct ibv_send_wr *wr, uint8_t opcode,
			   struct tern_sq_wqe *wqe, struct tern_sge *sge)
{
	int i;

	/* an atomic's SGE has room in every slot (64 bytes at least) */
	if (wr->num_sge < 0 ||
	    ((uint32_t)wr->num_sge > qp->sq.max_sge && !tern_wqe_op_atomic(opcode)))
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = htole64(wr->sg_list[i].addr);
		sge[i].length = htole32(wr->sg_list[i].length);
		sge[i].lkey = htole32(wr->sg_list[i].lkey);
	}
	wqe->num_sge = wr->num_sge;
	return 0;
}

/* Build one send WQE in its slot. Caller holds qp->sq.lock and checked for room. */
static int tern_build_send_wqe(struct tern_qp *qp, struct ibv_send_wr *wr)
{
	struct tern_sq_wqe *wqe = tern_wq_slot(&qp->sq, qp->sq.pi);
	uint8_t opcode, flags;
	void *data;
	int ret;

	ret = tern_wqe_opcode(wr->opcode, &opcode);
	if (!ret)
		ret = tern_check_send_wr(qp, wr, opcode);
	if (ret)
		return ret;
	flags = tern_send_wqe_flags(qp, wr, opcode);

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = htole64(wr->wr_id);
	if (opcode == TERN_WQE_SEND_IMM || opcode == TERN_WQE_RDMA_WRITE_IMM)
		wqe->imm_data = wr->imm_data;
	if (opcode == TERN_WQE_SEND_INV)
		wqe->rkey = htole32(wr->invalidate_rkey);
	if (opcode == TERN_WQE_LOCAL_INV || opcode == TERN_WQE_BIND_MW) {
		ret = tern_build_local_wqe(qp, wr, opcode, wqe);
		if (ret)
			return ret;
		wqe->flags = flags & (TERN_WQE_F_SIGNALED | TERN_WQE_F_FENCE);
		wqe->opcode = opcode;
		return 0;
	}
	data = tern_build_remote(qp, wr, opcode, wqe);
	if (wr->send_flags & IBV_SEND_INLINE) {
		ret = tern_build_inline(qp, wr, opcode, wqe, data);
		flags |= TERN_WQE_F_INLINE;
	} else {
		ret = tern_build_sges(qp, wr, opcode, wqe, data);
	}
	if (ret)
		return ret;
	wqe->flags = flags;
	wqe->opcode = opcode;
	return 0;
}

int tern_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct tern_context *ctx = to_tctx(ibqp->context);
	struct tern_qp *qp = to_tqp(ibqp);
	enum ibv_qp_state state;
	uint16_t pi0;
	int ret = 0;

	pthread_spin_lock(&qp->sq.lock);
	pi0 = qp->sq.pi;
	state = __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT || state == IBV_QPS_RTR) {
		ret = EINVAL;
		*bad_wr = wr;
		goto out;
	}
	for (; wr; wr = wr->next) {
		if (tern_wq_full(&qp->sq)) {
			ret = ENOMEM;
			*bad_wr = wr;
			break;
		}
		ret = tern_build_send_wqe(qp, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		qp->sq.pi++;
	}
	if (qp->sq.pi != pi0)
		tern_ring_db(ctx, TERN_UDB_SQ, qp->qpn, qp->sq.pi);
out:
	pthread_spin_unlock(&qp->sq.lock);
	return ret;
}

/*
 * The ibv_wr_* interface. wr_start takes the SQ lock; each opcode call opens a WR from
 * qpx->wr_id and qpx->wr_flags, ibv_wr_set_ud_addr adds a UD destination, and the data call
 * (set_sge, set_sge_list, set_inline_data, set_inline_data_list) completes it: the WQE is
 * built by the same code as post_send's, in the next slot, without a doorbell. wr_complete
 * rings the doorbell once for the batch; at the first error it posts nothing and returns
 * that error (the ibv_wr_* calls themselves return nothing); wr_abort drops the batch.
 */
static void tern_wr_start(struct ibv_qp_ex *qpx)
{
	struct tern_qp *qp = to_tqp_ex(qpx);
	enum ibv_qp_state state;

	pthread_spin_lock(&qp->sq.lock);
	qp->wr_pi0 = qp->sq.pi;
	qp->wr_open = false;
	qp->wr_err = 0;
	state = __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT || state == IBV_QPS_RTR)
		qp->wr_err = EINVAL;
}

static void tern_wr_fail(struct tern_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
}

static void tern_wr_open(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode)
{
	struct tern_qp *qp = to_tqp_ex(qpx);

	if (qp->wr_open)	/* the previous WR got no data call */
		tern_wr_fail(qp, EINVAL);
	qp->wr_open = true;
	if (tern_wq_full(&qp->sq))
		tern_wr_fail(qp, ENOMEM);
	memset(&qp->wr, 0, sizeof(qp->wr));
	qp->wr.wr_id = qpx->wr_id;
	/* inline or not is the data call's choice */
	qp->wr.send_flags = qpx->wr_flags & ~IBV_SEND_INLINE;
	qp->wr.opcode = opcode;
}

/* The data call: build the WQE from qp->wr, whose sg_list/num_sge are set. */
static void tern_wr_close(struct tern_qp *qp)
{
	int ret;

	if (!qp->wr_open) {
		tern_wr_fail(qp, EINVAL);
		return;
	}
	qp->wr_open = false;
	if (qp->wr_err)
		return;
	ret = tern_build_send_wqe(qp, &qp->wr);
	if (ret)
		tern_wr_fail(qp, ret);
	else
		qp->sq.pi++;
}

static int tern_wr_complete(struct ibv_qp_ex *qpx)
{
	struct tern_qp *qp = to_tqp_ex(qpx);
	int ret;

	if (qp->wr_open)
		tern_wr_fail(qp, EINVAL);
	ret = qp->wr_err;
	if (ret)
		qp->sq.pi = qp->wr_pi0;	/* the device never saw these slots */
	else if (qp->sq.pi != qp->wr_pi0)
		tern_ring_db(to_tctx(qp->vqp.qp.context), TERN_UDB_SQ, qp->qpn, qp->sq.pi);
	pthread_spin_unlock(&qp->sq.lock);
	return ret;
}

static void tern_wr_abort(struct ibv_qp_ex *qpx)
{
	struct tern_qp *qp = to_tqp_ex(qpx);

	qp->sq.pi = qp->wr_pi0;
	pthread_spin_unlock(&qp->sq.lock);
}

static void tern_wr_send(struct ibv_qp_ex *qpx)
{
	tern_wr_open(qpx, IBV_WR_SEND);
}

static void tern_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	tern_wr_open(qpx, IBV_WR_SEND_WITH_IMM);
	to_tqp_ex(qpx)->wr.imm_data = imm_data;
}

static void tern_wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode, uint32_t rkey,
			 uint64_t remote_addr)
{
	struct tern_qp *qp = to_tqp_ex(qpx);

	tern_wr_open(qpx, opcode);
	qp->wr.wr.rdma.rkey = rkey;
	qp->wr.wr.rdma.remote_addr = remote_addr;
}

static void tern_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	tern_wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr);
}

static void tern_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, __be32 imm_data)
{
	tern_wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr);
	to_tqp_ex(qpx)->wr.imm_data = imm_data;
}

static void tern_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	tern_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr);
}

static void tern_wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode, uint32_t rkey,
			   uint64_t remote_addr, uint64_t compare_add, uint64_t swap)
{
	struct tern_qp *qp = to_tqp_ex(qpx);

	tern_wr_open(qpx, opcode);
	qp->wr.wr.atomic.rkey = rkey;
	qp->wr.wr.atomic.remote_addr = remote_addr;
	qp->wr.wr.atomic.compare_add = compare_add;
	qp->wr.wr.atomic.swap = swap;
}

static void tern_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, uint64_t compare, uint64_t swap)
{
	tern_wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr, compare, swap);
}

static void tern_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				     uint64_t remote_addr, uint64_t add)
{
	tern_wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add, 0);
}

static void tern_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	tern_wr_open(qpx, IBV_WR_SEND_WITH_INV);
	to_tqp_ex(qpx)->wr.invalidate_rkey = invalidate_rkey;
}

/* LOCAL_INV and BIND_MW carry no data: the opcode call builds the WQE at once. */
static void tern_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct tern_qp *qp = to_tqp_ex(qpx);

	tern_wr_open(qpx, IBV_WR_LOCAL_INV);
	qp->wr.invalidate_rkey = invalidate_rkey;
	tern_wr_close(qp);
}

static void tern_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
			    const struct ibv_mw_bind_info *bind_info)
{
	struct tern_qp *qp = to_tqp_ex(qpx);

	tern_wr_open(qpx, IBV_WR_BIND_MW);
	qp->wr.bind_mw.mw = mw;
	qp->wr.bind_mw.rkey = rkey;
	qp->wr.bind_mw.bind_info = *bind_info;
	tern_wr_close(qp);
}

static void tern_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct tern_qp *qp = to_tqp_ex(qpx);

	if (!qp->ud || !qp->wr_open) {
		tern_wr_fail(qp, EINVAL);
		return;
	}
	qp->wr.wr.ud.ah = ah;
	qp->wr.wr.ud.remote_qpn = remote_qpn;
	qp->wr.wr.ud.remote_qkey = remote_qkey;
}

static void tern_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	struct tern_qp *qp = to_tqp_ex(qpx);
	size_t room = qp->sq.max_sge ? qp->sq.max_sge : 1;

	if (num_sge > room) {
		qp->wr_open = false;
		tern_wr_fail(qp, EINVAL);
		return;
	}
	memcpy(qp->wr_sge, sg_list, num_sge * sizeof(*sg_list));
	qp->wr.sg_list = qp->wr_sge;
	qp->wr.num_sge = (int)num_sge;
	tern_wr_close(qp);
}

static void tern_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
			    uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	tern_wr_set_sge_list(qpx, 1, &sge);
}

static void tern_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	struct tern_qp *qp = to_tqp_ex(qpx);
	size_t i, len = 0;

	for (i = 0; i < num_buf; i++) {
		if (buf_list[i].length > qp->sq.max_inline - len) {
			qp->wr_open = false;
			tern_wr_fail(qp, EINVAL);
			return;
		}
		memcpy(qp->wr_inline + len, buf_list[i].addr, buf_list[i].length);
		len += buf_list[i].length;
	}
	qp->wr_sge[0].addr = (uintptr_t)qp->wr_inline;
	qp->wr_sge[0].length = (uint32_t)len;
	qp->wr_sge[0].lkey = 0;
	qp->wr.sg_list = qp->wr_sge;
	qp->wr.num_sge = 1;
	qp->wr.send_flags |= IBV_SEND_INLINE;
	tern_wr_close(qp);
}

static void tern_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	tern_wr_set_inline_data_list(qpx, 1, &buf);
}

static void tern_qp_set_wr_ops(struct tern_qp *qp)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	uint64_t ops = qp->send_ops;

	qpx->wr_start = tern_wr_start;
	qpx->wr_complete = tern_wr_complete;
	qpx->wr_abort = tern_wr_abort;
	if (ops & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = tern_wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = tern_wr_send_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = tern_wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = tern_wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = tern_wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qpx->wr_atomic_cmp_swp = tern_wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qpx->wr_atomic_fetch_add = tern_wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		qpx->wr_send_inv = tern_wr_send_inv;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		qpx->wr_local_inv = tern_wr_local_inv;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		qpx->wr_bind_mw = tern_wr_bind_mw;
	if (qp->ud)
		qpx->wr_set_ud_addr = tern_wr_set_ud_addr;
	qpx->wr_set_sge = tern_wr_set_sge;
	qpx->wr_set_sge_list = tern_wr_set_sge_list;
	qpx->wr_set_inline_data = tern_wr_set_inline_data;
	qpx->wr_set_inline_data_list = tern_wr_set_inline_data_list;
	tern_qp_mark_ex(qp);
}

int tern_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct tern_context *ctx = to_tctx(ibqp->context);
	struct tern_qp *qp = to_tqp(ibqp);
	struct tern_rq_wqe *wqe;
	struct tern_sge *sge;
	uint16_t pi0;
	int i, ret = 0;

	pthread_spin_lock(&qp->rq.lock);
	pi0 = qp->rq.pi;
	/* a QP on an SRQ has no receive queue: ibv_post_srq_recv feeds it */
	if (qp->srq || __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE) == IBV_QPS_RESET) {
		ret = EINVAL;
		*bad_wr = wr;
		goto out;
	}
	for (; wr; wr = wr->next) {
		if (tern_wq_full(&qp->rq)) {
			ret = ENOMEM;
			*bad_wr = wr;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->rq.max_sge) {
			ret = EINVAL;
			*bad_wr = wr;
			break;
		}
		wqe = tern_wq_slot(&qp->rq, qp->rq.pi);
		memset(wqe, 0, sizeof(*wqe));
		wqe->wr_id = htole64(wr->wr_id);
		wqe->num_sge = wr->num_sge;
		sge = (struct tern_sge *)(wqe + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = htole64(wr->sg_list[i].addr);
			sge[i].length = htole32(wr->sg_list[i].length);
			sge[i].lkey = htole32(wr->sg_list[i].lkey);
		}
		qp->rq.pi++;
	}
	if (qp->rq.pi != pi0 && qp->rq.db_rec) {
		/* the WQEs are in memory before the record says so */
		udma_to_device_barrier();
		__atomic_store_n(&qp->rq.db_rec->pi, htole16(qp->rq.pi), __ATOMIC_RELAXED);
		/* the record store before the flag load (tern_rq_may_be_err stores, then rings) */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&qp->rq.ring_db, __ATOMIC_SEQ_CST))
			tern_ring_db(ctx, TERN_UDB_RQ, qp->qpn, qp->rq.pi);
	} else if (qp->rq.pi != pi0) {
		tern_ring_db(ctx, TERN_UDB_RQ, qp->qpn, qp->rq.pi);
	}
out:
	pthread_spin_unlock(&qp->rq.lock);
	return ret;
}
