// SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file
/*
 * tern libibverbs provider: shared receive queues. The ring lives in the provider's memory
 * (tern_ib.ko pins it at create); post_srq_recv writes WQEs there and then the doorbell
 * record after the ring (TERN_UCTX_CAP_DB_REC) or, with an older kernel, rings TERN_UDB_SRQ,
 * with no system call. Slots are reclaimed by the receive completions of the QPs on the
 * SRQ (see struct tern_srq).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <util/mmio.h>
#include <util/udma_barrier.h>
#include <util/util.h>

#include "tern.h"

/* A free-running u16 producer index tells at most 0xffff outstanding WQEs apart. */
#define TERN_SRQ_MAX_WQE	0xffffu

static void tern_free_srq(struct tern_srq *srq)
{
	tern_buf_free(&srq->buf);
	pthread_spin_destroy(&srq->lock);
	free(srq);
}

/*
 * The ring of an SRQ for @a: log2 of its WQE stride (the header and max_sge SGEs, at least
 * the device's smallest) and of its depth; false if @a or the result is out of range.
 */
static bool tern_srq_geometry(struct tern_context *ctx, const struct ibv_srq_attr *a,
			      unsigned int *log_stride, unsigned int *log_depth)
{
	if (!a->max_wr || a->max_wr > TERN_SRQ_MAX_WQE || a->max_sge > UINT8_MAX)
		return false;
	*log_stride = tern_order(TERN_RQ_WQE_HDR + (size_t)a->max_sge * sizeof(struct tern_sge));
	if (*log_stride < ctx->rq_min_log_stride)
		*log_stride = ctx->rq_min_log_stride;
	*log_depth = tern_order(a->max_wr);
	if (*log_depth < 1)
		*log_depth = 1;
	/* the SRQ depth limit is the kernel's to check (max_srq_wr of ibv_query_device) */
	return *log_stride <= ctx->rq_max_log_stride && *log_depth <= 16;
}

/* What the SRQ really holds: the kernel's answer @ka, within its ring and the device's limit. */
static void tern_srq_set_caps(struct tern_srq *srq, const struct ibv_srq_attr *ka)
{
	unsigned int log_depth = srq->log_depth, log_stride = srq->log_stride;

	srq->max_wqe = ka->max_wr < (1u << log_depth) ? ka->max_wr : 1u << log_depth;
	if (srq->max_wqe > TERN_SRQ_MAX_WQE)
		srq->max_wqe = TERN_SRQ_MAX_WQE;
	srq->max_sge = ka->max_sge;
	if (srq->max_sge > ((1u << log_stride) - TERN_RQ_WQE_HDR) / sizeof(struct tern_sge))
		srq->max_sge = ((1u << log_stride) - TERN_RQ_WQE_HDR) / sizeof(struct tern_sge);
}

struct ibv_srq *tern_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct tern_context *ctx = to_tctx(pd->context);
	struct tern_ucmd_create_srq_resp resp = {};
	struct tern_ucmd_create_srq cmd = {};
	struct ibv_srq_init_attr kattr;
	unsigned int log_stride, log_depth;
	struct tern_srq *srq;
	int ret;

	if (!tern_srq_geometry(ctx, &attr->attr, &log_stride, &log_depth)) {
		errno = EINVAL;
		return NULL;
	}

	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	srq->log_depth = log_depth;
	srq->log_stride = log_stride;
	ret = tern_buf_alloc(&srq->buf, ((size_t)1 << (log_depth + log_stride)) +
			     (ctx->db_rec ? sizeof(struct tern_wq_db_rec) : 0));
	if (ret)
		goto err_free;
	if (ctx->db_rec) {
		srq->db_rec = (struct tern_wq_db_rec *)((char *)srq->buf.addr +
							((size_t)1 << (log_depth + log_stride)));
		cmd.flags = TERN_CREATE_SRQ_F_DB_REC;
	}

	cmd.buf_va = (uintptr_t)srq->buf.addr;
	cmd.buf_len = srq->buf.len;
	cmd.log_depth = log_depth;
	cmd.log_stride = log_stride;
	/* tern_ib.ko checks the capabilities we will really provide */
	kattr = *attr;
	kattr.attr.max_wr = 1u << log_depth;
	if (kattr.attr.max_wr > TERN_SRQ_MAX_WQE)
		kattr.attr.max_wr = TERN_SRQ_MAX_WQE;
	ret = ibv_cmd_create_srq(pd, &srq->ibv_srq, &kattr, &cmd.ibv_cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_buf;
	srq->srqn = resp.srqn;
	tern_srq_set_caps(srq, &kattr.attr);
	if (srq->max_wqe < attr->attr.max_wr || srq->max_sge < attr->attr.max_sge) {
		verbs_err(&ctx->ibv_ctx, "SRQ %u smaller than asked (%u/%u wr, %u/%u sge)\n",
			  srq->srqn, srq->max_wqe, attr->attr.max_wr, srq->max_sge,
			  attr->attr.max_sge);
		ibv_cmd_destroy_srq(&srq->ibv_srq);
		ret = EINVAL;
		goto err_buf;
	}
	attr->attr.max_wr = srq->max_wqe;
	attr->attr.max_sge = srq->max_sge;
	return &srq->ibv_srq;

err_buf:
	tern_buf_free(&srq->buf);
err_free:
	pthread_spin_destroy(&srq->lock);
	free(srq);
	errno = ret;
	return NULL;
}

int tern_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int attr_mask)
{
	struct ibv_modify_srq cmd;

	/* resizing is not supported: tern_ib.ko answers IBV_SRQ_MAX_WR with EOPNOTSUPP */
	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int tern_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct tern_srq *srq = to_tsrq(ibsrq);
	struct ibv_query_srq cmd;
	int ret;

	ret = ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	attr->max_wr = srq->max_wqe;
	attr->max_sge = srq->max_sge;
	return 0;
}

int tern_destroy_srq(struct ibv_srq *ibsrq)
{
	int ret = ibv_cmd_destroy_srq(ibsrq);

	if (ret)
		return ret;
	tern_free_srq(to_tsrq(ibsrq));
	return 0;
}

int tern_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct tern_context *ctx = to_tctx(ibsrq->context);
	struct tern_srq *srq = to_tsrq(ibsrq);
	struct tern_rq_wqe *wqe;
	struct tern_sge *sge;
	uint16_t pi0, done;
	uint64_t db;
	int i, ret = 0;

	pthread_spin_lock(&srq->lock);
	pi0 = srq->pi;
	for (; wr; wr = wr->next) {
		done = __atomic_load_n(&srq->done, __ATOMIC_ACQUIRE);
		if ((uint16_t)(srq->pi - done) >= srq->max_wqe) {
			ret = ENOMEM;
			*bad_wr = wr;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_sge) {
			ret = EINVAL;
			*bad_wr = wr;
			break;
		}
		wqe = (struct tern_rq_wqe *)((char *)srq->buf.addr +
					     ((size_t)(srq->pi & ((1u << srq->log_depth) - 1))
					      << srq->log_stride));
		memset(wqe, 0, sizeof(*wqe));
		wqe->wr_id = htole64(wr->wr_id);
		wqe->num_sge = wr->num_sge;
		sge = (struct tern_sge *)(wqe + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = htole64(wr->sg_list[i].addr);
			sge[i].length = htole32(wr->sg_list[i].length);
			sge[i].lkey = htole32(wr->sg_list[i].lkey);
		}
		srq->pi++;
	}
	if (srq->pi != pi0 && srq->db_rec) {
		/* the WQEs are in memory before the record says so; SRQ WQEs are never
		 * flushed, so no doorbell is needed */
		udma_to_device_barrier();
		__atomic_store_n(&srq->db_rec->pi, htole16(srq->pi), __ATOMIC_RELAXED);
	} else if (srq->pi != pi0) {
		db = tern_udb_wq(srq->srqn, srq->pi);
		/* the WQEs are in memory before the device hears of them */
		udma_to_device_barrier();
		mmio_write64_le((char *)ctx->uar + TERN_UDB_SRQ, htole64(db));
	}
	pthread_spin_unlock(&srq->lock);
	return ret;
}
