/* SPDX-License-Identifier: GPL-2.0 or OpenIB.org BSD (MIT) See COPYING file */
/*
 * tern libibverbs provider: private objects.
 *
 * Kernel bypass: the provider allocates the send, receive and completion rings in its own
 * page-aligned memory (tern_ib.ko pins them at create time), writes WQEs and reads CQEs in
 * those rings, and rings the device's doorbells with single 64-bit stores to the doorbell
 * (UAR) page of BAR2 that alloc_context mmaps. post_send, post_recv, poll_cq and
 * req_notify_cq, and post_srq_recv make no system call. When the kernel offers doorbell
 * records (TERN_UCTX_CAP_DB_REC), receives are posted through a record in the RQ's or SRQ's
 * buffer instead of a doorbell, so they cost no MMIO write (a VM exit in a guest) either.
 * Layouts: tern_rdma.h (the device's, <linux/tern/tern_rdma.h> in the kernel); the udata
 * exchanged with tern_ib.ko: <rdma/tern-abi.h>.
 */
#ifndef TERN_PROVIDER_H
#define TERN_PROVIDER_H

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <rdma/tern-abi.h>
#include <kernel-abi/tern-abi.h>

#include <linux/tern/tern_rdma.h>

DECLARE_DRV_CMD(tern_ucmd_alloc_context, IB_USER_VERBS_CMD_GET_CONTEXT, empty,
		tern_alloc_ucontext_resp);
DECLARE_DRV_CMD(tern_ucmd_create_cq, IB_USER_VERBS_CMD_CREATE_CQ, tern_create_cq_cmd,
		tern_create_cq_resp);
DECLARE_DRV_CMD(tern_ucmd_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ, tern_create_cq_cmd, empty);
DECLARE_DRV_CMD(tern_ucmd_create_cq_ex, IB_USER_VERBS_EX_CMD_CREATE_CQ, tern_create_cq_cmd,
		tern_create_cq_resp);
DECLARE_DRV_CMD(tern_ucmd_create_qp, IB_USER_VERBS_CMD_CREATE_QP, tern_create_qp_cmd,
		tern_create_qp_resp);
DECLARE_DRV_CMD(tern_ucmd_modify_qp, IB_USER_VERBS_EX_CMD_MODIFY_QP, tern_modify_qp_cmd, empty);
DECLARE_DRV_CMD(tern_ucmd_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ, tern_create_srq_cmd,
		tern_create_srq_resp);
DECLARE_DRV_CMD(tern_ucmd_create_ah, IB_USER_VERBS_CMD_CREATE_AH, empty,
		tern_create_ah_resp);

#define TERN_SQ_WQE_HDR		sizeof(struct tern_sq_wqe)
#define TERN_RQ_WQE_HDR		sizeof(struct tern_rq_wqe)

struct tern_device {
	struct verbs_device ibv_dev;
};

/*
 * QPN -> QP lookup for poll_cq, in two levels of TERN_QP_TABLE_SIZE entries (QPNs are 24
 * bits). Writers hold qp_table_lock and, for the QP they add or remove, the locks of its CQs
 * (tern_lock_cqs), so a poller holding one of those CQ locks sees a stable entry for every
 * QP that can have CQEs in its CQ. A second-level array lives as long as it has users.
 */
#define TERN_QP_TABLE_SHIFT	12
#define TERN_QP_TABLE_SIZE	(1u << TERN_QP_TABLE_SHIFT)
#define TERN_QP_TABLE_MASK	(TERN_QP_TABLE_SIZE - 1)

struct tern_context {
	struct verbs_context ibv_ctx;
	void *uar;			/* the doorbell page, TERN_DB_PAGE_SIZE bytes, mmapped */
	/* limits from tern_alloc_ucontext_resp; constant after alloc_context */
	uint32_t uar_index;
	uint32_t max_inline;
	uint8_t sq_min_log_stride;
	uint8_t sq_max_log_stride;
	uint8_t rq_min_log_stride;
	uint8_t rq_max_log_stride;
	uint8_t max_sq_log_depth;
	uint8_t max_rq_log_depth;
	uint8_t max_cq_log_depth;
	bool db_rec;			/* TERN_UCTX_CAP_DB_REC: RQs and SRQs get records */
	bool cqe_ts;			/* TERN_UCTX_CAP_CQE_TS: CQs with completion timestamps */
	/* the device clock page (TERN_UCTX_RESP_CLOCK), mapped read-only; NULL without one */
	const void *clock_page;

	pthread_mutex_t qp_table_lock;	/* protects qp_table's arrays and refcnts */
	struct {
		struct tern_qp **qps;
		unsigned int refcnt;
	} qp_table[TERN_QP_TABLE_SIZE];
};

struct tern_pd {
	struct ibv_pd ibv_pd;
};

/* A page-aligned, zeroed buffer the device reads or writes (excluded from fork()). */
struct tern_buf {
	void *addr;
	size_t len;
};

struct tern_cq {
	struct verbs_cq vcq;
	/*
	 * lock protects ci, the ring and ci_rec against other threads polling, arming,
	 * cleaning (destroy_qp, modify_qp to RESET) the same CQ; an extended CQ's poller
	 * holds it from a successful start_poll to end_poll, over cur and poll_ci0 too.
	 */
	pthread_spinlock_t lock;
	uint32_t cqn;
	uint8_t log_depth;
	uint8_t flags;			/* TERN_CREATE_CQ_F_* (TIMESTAMP: 64-byte CQEs) */
	uint8_t cqe_size;		/* 32, or 64 with TERN_CREATE_CQ_F_TIMESTAMP */
	uint32_t ci;			/* CQEs consumed, free-running */
	void *ring;			/* 1 << log_depth entries of cqe_size bytes */
	struct tern_cq_ci_rec *ci_rec;	/* right after the ring */
	struct tern_buf buf;
	uint64_t events;		/* completion events acknowledged (cq_event) */
	/* extended CQ: the completion start_poll/next_poll took, and ci at start_poll */
	struct ibv_wc cur;
	uint64_t cur_ts;		/* its completion timestamp (64-byte CQEs) */
	uint32_t poll_ci0;
};

/* One work queue (SQ or RQ) of a QP. */
struct tern_wq {
	/* lock serialises posting: pi, the slots between ci and pi, the doorbell */
	pthread_spinlock_t lock;
	struct tern_buf buf;
	uint8_t log_depth;
	uint8_t log_stride;
	uint16_t pi;			/* WQEs posted, free-running (the doorbell value) */
	/*
	 * WQEs the device is done with, free-running. Written by poll_cq under the CQ's lock
	 * (atomic store, release) and read by posters under @lock (atomic load, acquire):
	 * a stale value only makes the queue look fuller than it is. modify_qp to RESET
	 * sets it with both locks held.
	 */
	uint16_t ci;
	uint32_t max_wqe;		/* WQEs that may be outstanding */
	uint32_t max_sge;
	uint32_t max_inline;		/* SQ only */
	/*
	 * RQ only, with TERN_CREATE_QP_F_RQ_DB_REC: the doorbell record right after the ring
	 * (written under @lock), and ring_db: also ring TERN_UDB_RQ after writing it, because the
	 * QP is or may be in ERR and the device flushes only what it has been told of. Set
	 * (seq_cst) by modify_qp to ERR and by poll_cq on an error completion of the QP, cleared
	 * by modify_qp to RESET; posters read it (seq_cst) after the record store.
	 */
	struct tern_wq_db_rec *db_rec;
	bool ring_db;
};

/*
 * A shared receive queue. The device takes its WQEs in ring order and copies each one when
 * it takes it, so every receive completion of a QP on this SRQ frees the oldest slot:
 * @done counts them (free-running; poll_cq adds with an atomic increment, under whichever
 * CQ lock it holds, release) and posters see pi - done WQEs outstanding (acquire). A stale
 * @done only makes the SRQ look fuller than it is.
 */
struct tern_srq {
	struct ibv_srq ibv_srq;
	pthread_spinlock_t lock;	/* serialises posting: pi, the free slots, the doorbell */
	struct tern_buf buf;
	uint32_t srqn;
	uint8_t log_depth;
	uint8_t log_stride;
	uint16_t pi;			/* WQEs posted, free-running (the doorbell value) */
	uint16_t done;			/* receive completions seen, free-running */
	uint32_t max_wqe;
	uint32_t max_sge;
	/* TERN_CREATE_SRQ_F_DB_REC: right after the ring; posting writes it, rings nothing */
	struct tern_wq_db_rec *db_rec;
};

struct tern_qp {
	struct verbs_qp vqp;
	struct tern_wq sq;
	struct tern_wq rq;		/* unused (no ring) on an SRQ */
	struct tern_srq *srq;		/* the SRQ it receives from, or NULL */
	uint32_t qpn;
	bool ud;			/* UD QP: every send WQE carries a struct tern_ud_seg */
	bool uc;			/* UC QP: SEND and RDMA WRITE only */
	bool sq_sig_all;
	/* last state set through modify_qp (the device may have moved to ERR since) */
	enum ibv_qp_state state;
	/*
	 * ECE (<rdma/tern-abi.h>): the TERN_ECE_* options tern_ib offered at creation, and
	 * once ibv_set_ece() took the peer's (ece_set), those both sides have, passed to
	 * tern_ib by every later modify_qp (it applies them at INIT->RTR). A modify_qp to RTR
	 * without them sets ece_set with nothing agreed; one to RESET clears it. The caller
	 * of set_ece and modify_qp serialises them, as the verbs require of one QP's
	 * modify_qp.
	 */
	uint32_t ece_offer;
	uint32_t ece_agreed;
	bool ece_set;
	/*
	 * The ibv_wr_* interface (a QP created with send_ops_flags), between wr_start and
	 * wr_complete/wr_abort, all under sq.lock: the WR being assembled (wr_open from its
	 * opcode call to its data call, which writes the WQE at sq.pi and advances it), sq.pi
	 * at wr_start (restored on abort or error), the first error met (wr_complete returns
	 * it and posts nothing). wr_sge has max(sq.max_sge, 1) entries and wr_inline
	 * sq.max_inline bytes; both NULL on a QP without send_ops_flags.
	 */
	uint64_t send_ops;		/* IBV_QP_EX_WITH_* the QP was created with */
	struct ibv_send_wr wr;
	struct ibv_sge *wr_sge;
	uint8_t *wr_inline;
	uint16_t wr_pi0;
	bool wr_open;
	int wr_err;
};

/* An address handle: the path tern_ib.ko built, copied into each UD WQE sent with it. */
struct tern_ah {
	struct ibv_ah ibv_ah;
	struct tern_qp_path path;
};

static inline struct tern_context *to_tctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct tern_context, ibv_ctx.context);
}

static inline struct tern_cq *to_tcq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct tern_cq, vcq.cq);
}

static inline struct tern_qp *to_tqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct tern_qp, vqp.qp);
}

/*
 * libibverbs finds a QP's struct ibv_qp_ex (ibv_qp_to_qp_ex) through VERBS_QP_EX in
 * verbs_qp.comp_mask, which follows the union of struct ibv_qp and struct ibv_qp_ex. The
 * rdma-core tree this provider is built in (56, private ABI 34) appended wr_flush to struct
 * ibv_qp_ex; Debian 12's libibverbs 44 (also private ABI 34), which loads the provider, has
 * no wr_flush, so its comp_mask sits where this build sees qp_ex.wr_flush (and this build's
 * comp_mask is its xrcd). The provider marks an extended QP where libibverbs 44 looks and
 * offers no flush (IBV_QP_EX_WITH_FLUSH is refused), so nothing calls through wr_flush.
 * tests/static/provider.t checks this offset against Debian's <infiniband/verbs.h>.
 */
#define TERN_LIBIBVERBS_QP_COMP_MASK_OFF	offsetof(struct ibv_qp_ex, wr_flush)

static inline void tern_qp_mark_ex(struct tern_qp *qp)
{
	uint32_t *comp_mask = (uint32_t *)((char *)&qp->vqp.qp_ex +
					   TERN_LIBIBVERBS_QP_COMP_MASK_OFF);

	*comp_mask |= VERBS_QP_EX;
}

static inline struct tern_qp *to_tqp_ex(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct tern_qp, vqp.qp_ex);
}

static inline struct tern_srq *to_tsrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct tern_srq, ibv_srq);
}

static inline struct tern_ah *to_tah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct tern_ah, ibv_ah);
}

static inline void *tern_wq_slot(struct tern_wq *wq, uint32_t idx)
{
	return (char *)wq->buf.addr +
	       ((size_t)(idx & ((1u << wq->log_depth) - 1)) << wq->log_stride);
}

/* Smallest n with 1 << n >= v (v >= 1). */
static inline unsigned int tern_order(uint64_t v)
{
	return v <= 1 ? 0 : 64 - __builtin_clzll(v - 1);
}

/* tern.c */
int tern_buf_alloc(struct tern_buf *buf, size_t len);
void tern_buf_free(struct tern_buf *buf);
struct tern_qp *tern_find_qp(struct tern_context *ctx, uint32_t qpn);
int tern_store_qp(struct tern_context *ctx, struct tern_qp *qp);
void tern_clear_qp(struct tern_context *ctx, uint32_t qpn);

/* tern_cq.c */
struct ibv_cq *tern_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel, int comp_vector);
struct ibv_cq_ex *tern_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr);
int tern_resize_cq(struct ibv_cq *ibcq, int cqe);
int tern_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr);
int tern_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc);
int tern_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
void tern_cq_event(struct ibv_cq *ibcq);
int tern_destroy_cq(struct ibv_cq *ibcq);
void tern_cq_clean(struct tern_cq *cq, struct tern_qp *qp);
void tern_lock_cqs(struct tern_cq *a, struct tern_cq *b);
void tern_unlock_cqs(struct tern_cq *a, struct tern_cq *b);

/* tern_qp.c */
void tern_rq_may_be_err(struct tern_context *ctx, struct tern_qp *qp);

struct ibv_qp *tern_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *tern_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr);
int tern_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask);
int tern_query_ece(struct ibv_qp *ibqp, struct ibv_ece *ece);
int tern_set_ece(struct ibv_qp *ibqp, struct ibv_ece *ece);
int tern_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr);
int tern_destroy_qp(struct ibv_qp *ibqp);
int tern_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int tern_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);

/* tern_srq.c */
struct ibv_srq *tern_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
int tern_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int attr_mask);
int tern_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int tern_destroy_srq(struct ibv_srq *ibsrq);
int tern_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);

#endif /* TERN_PROVIDER_H */
