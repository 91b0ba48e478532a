/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: RDMA objects (PD, CQ, QP), their firmware commands and user doorbells.
 *
 * Memory regions are in rdma_mr.c, the transport scheduler (work and timer lists) in
 * rdma_sched.c. Numbering: PDNs and CQNs are the lowest free; QPNs are allocated round-robin
 * from 2 so that a destroyed QP's number is not reused at once (late packets for it are
 * dropped rather than delivered to a new QP). Every page list is copied while the command
 * runs. Destroying a PD that an MR or QP uses, or a CQ that a QP uses, is BAD_STATE.
 */
#include <stdlib.h>

#include "rdma.h"

_Static_assert(TERNM_MEM_MAX_SIZE >= (sizeof(struct tern_cqe) << TERNM_MAX_CQ_LOG) +
	       sizeof(struct tern_cq_ci_rec), "the deepest CQ and its CI record");
_Static_assert(TERNM_MEM_MAX_SIZE >= (1ull << (TERNM_MAX_SQ_LOG + TERN_SQ_MAX_LOG_STRIDE)),
	       "the deepest SQ of the largest slots");

/* ---- lookups --------------------------------------------------------------------------- */

struct ternm_qp *ternm_qp_get(struct tern_model *m, uint32_t qpn)
{
	if (!m->rdma || qpn >= TERNM_MAX_QP)
		return NULL;
	return m->rdma->qp[qpn];
}

static struct ternm_cq *cq_get(struct tern_model *m, uint32_t cqn)
{
	if (cqn >= TERNM_MAX_CQ || !m->rdma->cq[cqn].used)
		return NULL;
	return &m->rdma->cq[cqn];
}

/* ---- events and errors ------------------------------------------------------------------- */

void ternm_qp_event(struct tern_model *m, struct ternm_qp *qp, uint8_t ev)
{
	ternm_eq_post_flag_sub(m, TERN_EQ_F_ASYNC, TERN_EQE_QP_EVENT, ev, qp->qpn);
}

/* Move @qp to ERR: nothing more is sent; every outstanding and later WQE is flushed. */
void ternm_qp_to_err(struct tern_model *m, struct ternm_qp *qp)
{
	if (qp->state == TERN_QPS_ERR)
		return;
	qp->state = TERN_QPS_ERR;
	qp->retx_deadline = qp->rnr_deadline = TERNM_NO_DEADLINE;
	qp->rnr_wait = false;
	ternm_cc_qp_reset(m, qp);
	ternm_qp_timer_sync(m, qp);
	ternm_qp_work(m, qp);
}

/* ---- doorbells --------------------------------------------------------------------------- */

/* A write to a UAR page (@off is the BAR2 offset, page >= TERN_DB_FIRST_UAR). */
void ternm_rdma_doorbell(struct tern_model *m, uint64_t off, uint64_t val, unsigned int size)
{
	struct ternm_rdma *r = m->rdma;
	uint16_t page = (uint16_t)(off / TERN_DB_PAGE_SIZE);
	uint64_t reg = off % TERN_DB_PAGE_SIZE;
	uint32_t obj = tern_udb_num(val);
	struct ternm_qp *qp;
	struct ternm_cq *cq;

	if (size != 8 || !m->ready || m->fatal)
		return;
	if (reg == TERN_UDB_SQ || reg == TERN_UDB_RQ) {
		uint16_t pi = tern_udb_pi(val);
		bool sq = reg == TERN_UDB_SQ;

		qp = ternm_qp_get(m, obj);
		if (!qp || qp->uar != page || (!sq && (qp->flags & TERN_QP_F_SRQ))) {
			r->stats.db_misdirected++;
			return;
		}
		if (sq ? !ternm_wq_pi_ok(pi, qp->sq_pi, qp->sq_ci, qp->log_sq_depth) :
		    !(qp->flags & TERN_QP_F_RQ_DB_REC) &&
		    !ternm_wq_pi_ok(pi, qp->rq_pi, qp->rq_ci, qp->log_rq_depth)) {
			ternm_log(m, TERN_MODEL_LOG_WARN,
				  "QP %u %s doorbell PI %u backwards or beyond depth: ignored", obj,
				  sq ? "SQ" : "RQ", pi);
			return;
		}
		if (sq) {
			qp->sq_pi = pi;
			if (qp->state == TERN_QPS_RTS || qp->state == TERN_QPS_ERR)
				ternm_qp_work(m, qp);
		} else {
			/* with a record the doorbell only says "read it" (its PI may be stale) */
			if (!(qp->flags & TERN_QP_F_RQ_DB_REC))
				qp->rq_pi = pi;
			else if (ternm_rq_db_rec(m, qp, false))
				return;
			if (qp->state == TERN_QPS_ERR)
				ternm_qp_work(m, qp);
		}
	} else if (reg == TERN_UDB_SRQ) {
		ternm_srq_doorbell(m, page, val);
	} else if (reg == TERN_UDB_CQ) {
		cq = cq_get(m, obj);
		if (!cq || cq->uar != page) {
			r->stats.db_misdirected++;
			return;
		}
		ternm_cq_doorbell(cq, val);
	}
}

/* ---- commands ------------------------------------------------------------------------------ */

static void put_stats(struct tern_model *m, uint8_t *o)
{
	typedef struct tern_cmd_rdma_stats_out T;
	const struct ternm_rdma_stats *s = &m->rdma->stats;

	memset(o, 0, sizeof(T));
#define X(n) put_le64(FLD(o, T, n), s->n);
	TERNM_RDMA_STATS(X)
#undef X
}

static void put_query(uint8_t *o)
{
	typedef struct tern_cmd_query_rdma_out T;

	memset(o, 0, sizeof(T));
	put_le32(FLD(o, T, max_qp), TERNM_MAX_QP);
	put_le32(FLD(o, T, max_cq), TERNM_MAX_CQ);
	put_le32(FLD(o, T, max_mr), TERNM_MAX_MR);
	put_le32(FLD(o, T, max_pd), TERNM_MAX_PD);
	put_le64(FLD(o, T, max_mr_size), TERNM_MAX_MR_SIZE);
	put_le64(FLD(o, T, page_size_cap), TERNM_PAGE_SIZE_CAP);
	put_le32(FLD(o, T, max_msg_size), TERNM_MAX_MSG);
	put_le32(FLD(o, T, max_mr_pages), TERNM_MAX_MR_PAGES);
	o[offsetof(T, max_sq_log_depth)] = TERNM_MAX_SQ_LOG;
	o[offsetof(T, max_rq_log_depth)] = TERNM_MAX_RQ_LOG;
	o[offsetof(T, max_cq_log_depth)] = TERNM_MAX_CQ_LOG;
	o[offsetof(T, max_send_sge)] = TERNM_MAX_SEND_SGE;
	o[offsetof(T, max_recv_sge)] = TERNM_MAX_RECV_SGE;
	o[offsetof(T, max_rd_atomic)] = TERNM_MAX_RD_ATOMIC;
	o[offsetof(T, max_dest_rd_atomic)] = TERNM_MAX_DEST_RD;
	o[offsetof(T, local_ca_ack_delay)] = TERNM_ACK_DELAY;
	put_le16(FLD(o, T, max_inline), TERNM_MAX_INLINE);
	put_le32(FLD(o, T, cap_flags), get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_UD);
	put_le32(FLD(o, T, cap_flags), get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_SRQ);
	put_le32(FLD(o, T, cap_flags), get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_UC);
	put_le32(FLD(o, T, cap_flags), get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_SR);
	put_le32(FLD(o, T, cap_flags), get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_ADAPTIVE_RTO);
	put_le32(FLD(o, T, cap_flags), get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_DB_REC);
	put_le32(FLD(o, T, max_srq), TERNM_MAX_SRQ);
	o[offsetof(T, max_srq_log_depth)] = TERNM_MAX_SRQ_LOG;
	put_le32(FLD(o, T, max_total_mr_pages), TERNM_TOTAL_MR_PAGES);
	put_le32(FLD(o, T, max_total_sq_wqes), TERNM_TOTAL_SQ_WQES);
	put_le32(FLD(o, T, cap_flags), get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_ATOMIC);
	put_le32(FLD(o, T, cap_flags),
		 get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_CQ_MODERATION);
	put_le16(FLD(o, T, max_cq_moder_count), TERNM_MAX_CQ_MODER_COUNT);
	put_le16(FLD(o, T, max_cq_moder_period), TERNM_MAX_CQ_MODER_PERIOD);
	put_le32(FLD(o, T, cap_flags), get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_MEM_MGT);
	put_le32(FLD(o, T, cap_flags), get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_MW);
	put_le32(FLD(o, T, cap_flags), get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_REREG_MR);
	put_le32(FLD(o, T, max_fast_reg_pages), TERNM_MAX_FAST_REG_PAGES);
	put_le32(FLD(o, T, cap_flags), get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_MCAST);
	put_le32(FLD(o, T, cap_flags), get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_CQE_TS);
	put_le16(FLD(o, T, max_mcast_grp), TERNM_MAX_MCAST_GRP);
	put_le16(FLD(o, T, max_mcast_qp_attach), TERNM_MAX_MCAST_QP);
	put_le32(FLD(o, T, cap_flags), get_le32(FLD(o, T, cap_flags)) | TERN_RDMA_CAP_QP_COUNTERS);
	put_le16(FLD(o, T, max_counter_sets), TERNM_MAX_CTR_SET);
}

static int create_pd(struct tern_model *m, struct ternm_cmd_result *r)
{
	unsigned int i;

	for (i = 0; i < TERNM_MAX_PD; i++) {
		if (!m->rdma->pd[i].used) {
			m->rdma->pd[i].used = true;
			m->rdma->pd[i].refs = 0;
			r->result = i;
			return TERN_CMD_OK;
		}
	}
	return TERN_CMD_NO_RESOURCES;
}

static int destroy_pd(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	uint32_t pdn = get_le32(CFLD(in, struct tern_cmd_destroy_pd_in, pdn));

	if (pdn >= TERNM_MAX_PD || !m->rdma->pd[pdn].used)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE,
				    offsetof(struct tern_cmd_destroy_pd_in, pdn));
	if (m->rdma->pd[pdn].refs)
		return ternm_refuse(r, TERN_CMD_BAD_STATE,
				    offsetof(struct tern_cmd_destroy_pd_in, pdn));
	m->rdma->pd[pdn].used = false;
	return TERN_CMD_OK;
}

static bool uar_ok(uint16_t uar)
{
	return uar >= TERN_DB_FIRST_UAR && uar < TERN_DB_NUM_PAGES;
}

static int create_cq(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_create_cq_in T;
	uint8_t log = in[offsetof(T, log_depth)];
	uint8_t flags = in[offsetof(T, flags)];
	uint16_t eqn = get_le16(CFLD(in, T, eqn));
	uint16_t uar = get_le16(CFLD(in, T, uar));
	uint8_t cqe_size = (flags & TERN_CQ_F_TIMESTAMP) ? sizeof(struct tern_cqe_ts) :
			   sizeof(struct tern_cqe);
	struct ternm_cq *cq = NULL;
	struct ternm_mem mem;
	uint32_t bad_off, i;
	int rc;

	if (flags & ~TERN_CQ_F_TIMESTAMP)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, flags));
	/* 64-byte CQEs: the deepest ring holds half as many */
	if (log < 1 || log > TERNM_MAX_CQ_LOG - (cqe_size == sizeof(struct tern_cqe) ? 0 : 1))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, log_depth));
	if (get_le16(CFLD(in, T, rsvd1)))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, rsvd1));
	if (!uar_ok(uar))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, uar));
	if (eqn >= TERNM_MAX_EQS || !m->eq[eqn].used)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, eqn));
	for (i = 0; i < TERNM_MAX_CQ; i++) {
		if (!m->rdma->cq[i].used) {
			cq = &m->rdma->cq[i];
			break;
		}
	}
	if (!cq)
		return TERN_CMD_NO_RESOURCES;
	rc = ternm_mem_init_ex(m, &mem, CFLD(in, T, mem),
			       ((uint64_t)cqe_size << log) + sizeof(struct tern_cq_ci_rec),
			       true, &bad_off);
	if (rc != TERN_CMD_OK)
		return ternm_refuse(r, rc,
				    rc == TERN_CMD_BAD_PARAM ? offsetof(T, mem) + bad_off : 0);
	memset(cq, 0, sizeof(*cq));
	cq->used = true;
	cq->log_depth = log;
	cq->cqe_size = cqe_size;
	cq->eqn = eqn;
	cq->uar = uar;
	cq->mem = mem;
	r->result = i;
	return TERN_CMD_OK;
}

static int destroy_cq(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	uint32_t cqn = get_le32(CFLD(in, struct tern_cmd_destroy_cq_in, cqn));
	struct ternm_cq *cq = cq_get(m, cqn);

	if (!cq)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE,
				    offsetof(struct tern_cmd_destroy_cq_in, cqn));
	if (cq->refs)
		return ternm_refuse(r, TERN_CMD_BAD_STATE,
				    offsetof(struct tern_cmd_destroy_cq_in, cqn));
	ternm_cq_cancel(m, cq);
	ternm_mem_free(m, &cq->mem);
	memset(cq, 0, sizeof(*cq));
	return TERN_CMD_OK;
}

static int modify_cq(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	struct ternm_cq *cq = cq_get(m, get_le32(CFLD(in, struct tern_cmd_modify_cq_in, cqn)));

	if (!cq)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE,
				    offsetof(struct tern_cmd_modify_cq_in, cqn));
	return ternm_cq_modify(m, cq, in, &r->syndrome);
}

/* RESIZE_CQ: see struct tern_cmd_resize_cq_in. */
static int resize_cq(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_resize_cq_in T;
	struct ternm_cq *cq = cq_get(m, get_le32(CFLD(in, T, cqn)));
	uint8_t log = in[offsetof(T, log_depth)];
	typedef struct tern_cqe E;
	uint32_t old_mask, ci, n, k, bad_off;
	struct ternm_mem mem;
	uint8_t rec[4], e[sizeof(struct tern_cqe_ts)];
	uint64_t sz;
	int rc;

	if (!cq)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, cqn));
	/* the CQ keeps its CQE size */
	sz = cq->cqe_size;
	if (log < 1 || log > TERNM_MAX_CQ_LOG - (sz == sizeof(E) ? 0 : 1))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, log_depth));
	for (k = 0; k < sizeof(((T *)0)->rsvd); k++)
		if (in[offsetof(T, rsvd) + k])
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, rsvd) + k);
	if (cq->err)
		return ternm_refuse(r, TERN_CMD_BAD_STATE, offsetof(T, cqn));
	old_mask = (1u << cq->log_depth) - 1;
	if (ternm_mem_read(m, &cq->mem, sz << cq->log_depth, rec, 4))
		return ternm_refuse(r, TERN_CMD_BAD_STATE, offsetof(T, cqn));
	ci = get_le32(rec);
	/* a CI record past the producer, or behind it by more than the ring: nothing valid */
	n = cq->pi - ci;
	if (n > old_mask + 1 || n > (1u << log))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, log_depth));
	rc = ternm_mem_init_ex(m, &mem, CFLD(in, T, mem),
			       (sz << log) + sizeof(struct tern_cq_ci_rec), true, &bad_off);
	if (rc != TERN_CMD_OK)
		return ternm_refuse(r, rc,
				    rc == TERN_CMD_BAD_PARAM ? offsetof(T, mem) + bad_off : 0);
	for (k = 0; k < n; k++) {
		uint64_t off = (uint64_t)k * sz;

		if (ternm_mem_read(m, &cq->mem, (uint64_t)((ci + k) & old_mask) * sz, e, sz)) {
			ternm_mem_free(m, &mem);
			return ternm_refuse(r, TERN_CMD_BAD_STATE, offsetof(T, cqn));
		}
		/* the new ring's first pass: phase 1, the other flags as they were */
		e[offsetof(E, flags)] |= TERN_CQE_F_PHASE;
		if (ternm_mem_write(m, &mem, off, e, offsetof(E, flags)) ||
		    (sz > sizeof(E) &&
		     ternm_mem_write(m, &mem, off + sizeof(E), e + sizeof(E), sz - sizeof(E)))) {
			ternm_mem_free(m, &mem);
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, mem));
		}
		__atomic_thread_fence(__ATOMIC_RELEASE);
		if (ternm_mem_write(m, &mem, off + offsetof(E, flags), e + offsetof(E, flags), 1)) {
			ternm_mem_free(m, &mem);
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, mem));
		}
	}
	ternm_mem_free(m, &cq->mem);
	cq->mem = mem;
	cq->log_depth = log;
	cq->pi = n;
	cq->ci = 0;
	cq->db_ci = 0;
	return TERN_CMD_OK;
}

/* Host memory of a QP (its WQE cache included) and its send state for 2^@lsd WQEs. */
static uint64_t qp_bytes(unsigned int lsd)
{
	return sizeof(struct ternm_qp) + ((uint64_t)sizeof(struct ternm_swqe) << lsd);
}

static void qp_free(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_rdma *r = m->rdma;

	ternm_qp_unschedule(m, qp);
	ternm_cc_qp_reset(m, qp);
	ternm_sr_free(m, qp);
	ternm_srq_qp_release(m, qp, false);	/* DESTROY_QP flushed them; a device reset not */
	r->pd[qp->pdn].refs--;
	r->cq[qp->scqn].refs--;
	r->cq[qp->rcqn].refs--;
	ternm_srq_qp_ref(m, qp, false);
	ternm_ctr_qp_gone(m, qp);
	r->qp[qp->qpn] = NULL;
	ternm_mem_free(m, &qp->sq_mem);
	ternm_mem_free(m, &qp->rq_mem);
	r->sq_wqes -= 1u << qp->log_sq_depth;
	ternm_host_mem_release(m, qp_bytes(qp->log_sq_depth));
	free(qp->swq);
	free(qp);
}

/* The parameters of CREATE_QP @in: TERN_CMD_OK, or the refusal (the offset of the field). */
static int create_qp_check(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_create_qp_in T;
	struct ternm_rdma *rd = m->rdma;
	uint32_t pdn = get_le32(CFLD(in, T, pdn));
	uint8_t lsd = in[offsetof(T, log_sq_depth)], lss = in[offsetof(T, log_sq_stride)];
	uint8_t lrd = in[offsetof(T, log_rq_depth)], lrs = in[offsetof(T, log_rq_stride)];
	uint8_t flags = in[offsetof(T, flags)], type = in[offsetof(T, type)];

	if (pdn >= TERNM_MAX_PD || !rd->pd[pdn].used)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, pdn));
	if (!cq_get(m, get_le32(CFLD(in, T, send_cqn))))
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, send_cqn));
	if (!cq_get(m, get_le32(CFLD(in, T, recv_cqn))))
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, recv_cqn));
	if (type != TERN_QPT_RC && type != TERN_QPT_UD && type != TERN_QPT_GSI &&
	    type != TERN_QPT_UC)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, type));
	if ((flags & ~(uint8_t)(TERN_QP_F_SQ_SIG_ALL | TERN_QP_F_SRQ | TERN_QP_F_RQ_DB_REC)) ||
	    ((flags & TERN_QP_F_SRQ) && (flags & TERN_QP_F_RQ_DB_REC)))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, flags));
	if (!uar_ok(get_le16(CFLD(in, T, uar))))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, uar));
	if (lsd < 1 || lsd > TERNM_MAX_SQ_LOG)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, log_sq_depth));
	if (lss < (type == TERN_QPT_RC || type == TERN_QPT_UC ? TERN_SQ_MIN_LOG_STRIDE :
		   TERN_SQ_UD_MIN_LOG_STRIDE) ||
	    lss > TERN_SQ_MAX_LOG_STRIDE)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, log_sq_stride));
	if (flags & TERN_QP_F_SRQ)
		return ternm_srq_qp_check(m, in, r);
	if (lrd < 1 || lrd > TERNM_MAX_RQ_LOG)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, log_rq_depth));
	if (lrs < TERN_RQ_MIN_LOG_STRIDE || lrs > TERN_RQ_MAX_LOG_STRIDE)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, log_rq_stride));
	if (get_le32(CFLD(in, T, srqn)))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, srqn));
	return TERN_CMD_OK;
}

/*
 * The number for a new QP of @type: QP1 for the GSI QP, else the next free one from
 * next_qpn on. 0 if there is none; -1 if the GSI QP exists already.
 */
static int64_t create_qp_number(const struct ternm_rdma *rd, uint8_t type)
{
	uint32_t i;

	if (type == TERN_QPT_GSI)
		return rd->qp[1] ? -1 : 1;	/* the GSI QP is always QP1 */
	for (i = 0; i < TERNM_MAX_QP - 2; i++) {
		uint32_t n = 2 + (rd->next_qpn - 2 + i) % (TERNM_MAX_QP - 2);

		if (!rd->qp[n])
			return n;
	}
	return 0;
}

/*
 * A new QP's memory: the structure, its send WQE table (2^@lsd entries, charged with
 * qp_bytes()) and its rings as CREATE_QP @in describes them. NULL with *@rc the failure (and
 * r->syndrome for a bad ring) if any is refused or missing.
 */
static struct ternm_qp *create_qp_alloc(struct tern_model *m, const uint8_t *in,
					struct ternm_cmd_result *r, int *rc)
{
	typedef struct tern_cmd_create_qp_in T;
	uint8_t lsd = in[offsetof(T, log_sq_depth)], lss = in[offsetof(T, log_sq_stride)];
	uint8_t lrd = in[offsetof(T, log_rq_depth)], lrs = in[offsetof(T, log_rq_stride)];
	uint8_t flags = in[offsetof(T, flags)];
	struct ternm_qp *qp;
	uint32_t bad_off;

	*rc = TERN_CMD_NO_RESOURCES;
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		ternm_host_mem_release(m, qp_bytes(lsd));
		return NULL;
	}
	qp->swq = calloc(1u << lsd, sizeof(*qp->swq));
	if (!qp->swq) {
		free(qp);
		ternm_host_mem_release(m, qp_bytes(lsd));
		return NULL;
	}
	*rc = ternm_mem_init_ex(m, &qp->sq_mem, CFLD(in, T, sq_mem), 1ull << (lsd + lss), true,
				&bad_off);
	if (*rc != TERN_CMD_OK) {
		r->syndrome = *rc == TERN_CMD_BAD_PARAM ? offsetof(T, sq_mem) + bad_off : 0;
		goto fail;
	}
	*rc = (flags & TERN_QP_F_SRQ) ? TERN_CMD_OK :
	      ternm_mem_init_ex(m, &qp->rq_mem, CFLD(in, T, rq_mem),
				(1ull << (lrd + lrs)) + ((flags & TERN_QP_F_RQ_DB_REC) ?
							 sizeof(struct tern_wq_db_rec) : 0),
				true, &bad_off);
	if (*rc != TERN_CMD_OK) {
		r->syndrome = *rc == TERN_CMD_BAD_PARAM ? offsetof(T, rq_mem) + bad_off : 0;
		goto fail;
	}
	return qp;
fail:
	ternm_mem_free(m, &qp->sq_mem);
	ternm_mem_free(m, &qp->rq_mem);
	free(qp->swq);
	free(qp);
	ternm_host_mem_release(m, qp_bytes(lsd));
	return NULL;
}

/* New QP @qp (number @qpn) in RESET, with the parameters of CREATE_QP @in; counted. */
static void create_qp_init(struct tern_model *m, struct ternm_qp *qp, uint32_t qpn,
			   const uint8_t *in)
{
	typedef struct tern_cmd_create_qp_in T;
	struct ternm_rdma *rd = m->rdma;

	qp->qpn = qpn;
	qp->state = TERN_QPS_RESET;
	qp->type = in[offsetof(T, type)];
	qp->flags = in[offsetof(T, flags)];
	qp->uar = get_le16(CFLD(in, T, uar));
	qp->pdn = get_le32(CFLD(in, T, pdn));
	qp->scqn = get_le32(CFLD(in, T, send_cqn));
	qp->rcqn = get_le32(CFLD(in, T, recv_cqn));
	qp->log_sq_depth = in[offsetof(T, log_sq_depth)];
	qp->log_sq_stride = in[offsetof(T, log_sq_stride)];
	qp->log_rq_depth = in[offsetof(T, log_rq_depth)];
	qp->log_rq_stride = in[offsetof(T, log_rq_stride)];
	qp->path_mtu = 1;
	qp->mtu = 256;
	qp->retx_deadline = qp->rnr_deadline = TERNM_NO_DEADLINE;
	qp->max_unacked = TERNM_MAX_UNACKED;
	ternm_cc_qp_reset(m, qp);
	put_le16(qp->path + offsetof(struct tern_qp_path, vlan_id), TERN_VLAN_NONE);
	rd->qp[qpn] = qp;
	rd->sq_wqes += 1u << qp->log_sq_depth;
	rd->pd[qp->pdn].refs++;
	rd->cq[qp->scqn].refs++;
	rd->cq[qp->rcqn].refs++;
	qp->srqn = (qp->flags & TERN_QP_F_SRQ) ? get_le32(CFLD(in, T, srqn)) : 0;
	ternm_srq_qp_ref(m, qp, true);
	if (qp->type != TERN_QPT_GSI)
		rd->next_qpn = qpn + 1;
}

static int create_qp(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_create_qp_in T;
	struct ternm_rdma *rd = m->rdma;
	uint8_t lsd = in[offsetof(T, log_sq_depth)];
	struct ternm_qp *qp;
	int64_t qpn;
	int rc;

	rc = create_qp_check(m, in, r);
	if (rc != TERN_CMD_OK)
		return rc;
	qpn = create_qp_number(rd, in[offsetof(T, type)]);
	if (qpn < 0)
		return ternm_refuse(r, TERN_CMD_BAD_STATE, offsetof(T, type));
	if (!qpn || (1u << lsd) > TERNM_TOTAL_SQ_WQES - rd->sq_wqes ||
	    !ternm_host_mem_charge(m, qp_bytes(lsd)))
		return TERN_CMD_NO_RESOURCES;
	qp = create_qp_alloc(m, in, r, &rc);
	if (!qp)
		return rc;
	create_qp_init(m, qp, (uint32_t)qpn, in);
	r->result = (uint32_t)qpn;
	return TERN_CMD_OK;
}

/* Back to RESET: queues empty, indices 0, no transport state. */
static void qp_reset(struct tern_model *m, struct ternm_qp *qp)
{
	ternm_qp_unschedule(m, qp);
	qp->retx_deadline = qp->rnr_deadline = TERNM_NO_DEADLINE;
	ternm_cc_qp_reset(m, qp);
	qp->sq_pi = qp->sq_ci = 0;
	qp->rq_pi = qp->rq_ci = 0;
	ternm_req_reset(qp);
	ternm_srq_qp_release(m, qp, true);	/* SRQ WQEs it holds: flushed, not lost */
	ternm_resp_reset(qp);
	ternm_sr_config(m, qp, 0);	/* back to go-back-N; never fails */
	qp->sqd_notify = false;
	qp->comm_est = false;
}

static bool transition_ok(uint8_t cur, uint8_t next)
{
	if (next == TERN_QPS_RESET || next == TERN_QPS_ERR)
		return true;
	switch (cur) {
	case TERN_QPS_RESET:
		return next == TERN_QPS_INIT;
	case TERN_QPS_INIT:
		return next == TERN_QPS_INIT || next == TERN_QPS_RTR;
	case TERN_QPS_RTR:
		return next == TERN_QPS_RTS;
	case TERN_QPS_RTS:
		return next == TERN_QPS_RTS || next == TERN_QPS_SQD;
	case TERN_QPS_SQD:
		return next == TERN_QPS_SQD || next == TERN_QPS_RTS;
	case TERN_QPS_SQE:
		return next == TERN_QPS_RTS;
	default:
		return false;
	}
}

#define ATTR_RTR_NEED	(TERN_QP_ATTR_PATH | TERN_QP_ATTR_PATH_MTU | TERN_QP_ATTR_DEST_QPN | \
			 TERN_QP_ATTR_RQ_PSN | TERN_QP_ATTR_MAX_DEST_RD_ATOMIC | \
			 TERN_QP_ATTR_MIN_RNR_TIMER)
#define ATTR_RTS_NEED	(TERN_QP_ATTR_SQ_PSN | TERN_QP_ATTR_TIMEOUT | TERN_QP_ATTR_RETRY_CNT | \
			 TERN_QP_ATTR_RNR_RETRY | TERN_QP_ATTR_MAX_RD_ATOMIC)
#define ATTR_ALL	((TERN_QP_ATTR_XPORT << 1) - 1)

/* Attributes a transition may carry besides STATE. */
static uint32_t transition_attrs(uint8_t cur, uint8_t next)
{
	if (next == TERN_QPS_RESET || next == TERN_QPS_ERR)
		return 0;
	if (next == TERN_QPS_INIT)
		return TERN_QP_ATTR_ACCESS;
	if (cur == TERN_QPS_INIT && next == TERN_QPS_RTR)
		return ATTR_RTR_NEED | TERN_QP_ATTR_ACCESS | TERN_QP_ATTR_XPORT;
	if (cur == TERN_QPS_RTR && next == TERN_QPS_RTS)
		return ATTR_RTS_NEED | TERN_QP_ATTR_ACCESS | TERN_QP_ATTR_MIN_RNR_TIMER;
	if (cur == TERN_QPS_RTS && next == TERN_QPS_SQD)
		return TERN_QP_ATTR_SQD_NOTIFY;
	if (cur == TERN_QPS_SQD && next == TERN_QPS_SQD)
		return ATTR_ALL & ~(TERN_QP_ATTR_SQD_NOTIFY | TERN_QP_ATTR_STATE);
	/* RTS->RTS, SQD->RTS, SQE->RTS */
	return TERN_QP_ATTR_ACCESS | TERN_QP_ATTR_MIN_RNR_TIMER | TERN_QP_ATTR_TIMEOUT |
	       TERN_QP_ATTR_RETRY_CNT | TERN_QP_ATTR_RNR_RETRY | TERN_QP_ATTR_MAX_RD_ATOMIC;
}

/*
 * UC: IB's attributes for UC (no acknowledgement, retry or RDMA READ/atomic ones, and no
 * TERN_QP_ATTR_XPORT: selective repeat is RC's).
 */
#define ATTR_UC		(TERN_QP_ATTR_ACCESS | TERN_QP_ATTR_PATH | TERN_QP_ATTR_PATH_MTU | \
			 TERN_QP_ATTR_DEST_QPN | TERN_QP_ATTR_RQ_PSN | TERN_QP_ATTR_SQ_PSN | \
			 TERN_QP_ATTR_SQD_NOTIFY)

static uint32_t uc_attrs(uint8_t cur, uint8_t next, uint32_t *need)
{
	*need = 0;
	if (cur == TERN_QPS_INIT && next == TERN_QPS_RTR)
		*need = TERN_QP_ATTR_PATH | TERN_QP_ATTR_PATH_MTU | TERN_QP_ATTR_DEST_QPN |
			TERN_QP_ATTR_RQ_PSN;
	else if (cur == TERN_QPS_RTR && next == TERN_QPS_RTS)
		*need = TERN_QP_ATTR_SQ_PSN;
	return transition_attrs(cur, next) & ATTR_UC;
}

static bool v4_mapped(const uint8_t *gid)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(gid, pfx, sizeof(pfx));
}

/* Check a struct tern_qp_path; returns -1 or the offset of the bad field inside it. */
int ternm_path_check(const uint8_t *p)
{
	typedef struct tern_qp_path P;
	uint16_t vlan = get_le16(CFLD(p, P, vlan_id));
	uint8_t ipv = p[offsetof(P, ip_version)];

	if ((p[offsetof(P, dmac)] & 1))
		return offsetof(P, dmac);
	if ((p[offsetof(P, smac)] & 1))
		return offsetof(P, smac);
	if (vlan != TERN_VLAN_NONE && vlan > 4095)
		return offsetof(P, vlan_id);
	if (ipv != 4 && ipv != 6)
		return offsetof(P, ip_version);
	if (p[offsetof(P, sl)] > 7)
		return offsetof(P, sl);
	if (get_le32(CFLD(p, P, flow_label)) > 0xfffff)
		return offsetof(P, flow_label);
	if (get_le16(CFLD(p, P, rsvd0)))
		return offsetof(P, rsvd0);
	if (ipv == 4 && !v4_mapped(CFLD(p, P, sgid)))
		return offsetof(P, sgid);
	if (ipv == 4 && !v4_mapped(CFLD(p, P, dgid)))
		return offsetof(P, dgid);
	if (get_le32(CFLD(p, P, rsvd1)))
		return offsetof(P, rsvd1);
	return -1;
}

/* The attributes a MODIFY_QP does not select must be zero: offset of the first that is not. */
static int unmasked_nonzero(const uint8_t *a, uint32_t mask)
{
	typedef struct tern_qp_attrs A;
	static const struct {
		uint32_t bit;
		uint8_t off, len;
	} f[] = {
		{ TERN_QP_ATTR_STATE, offsetof(A, state), 1 },
		{ TERN_QP_ATTR_PATH_MTU, offsetof(A, path_mtu), 1 },
		{ TERN_QP_ATTR_TIMEOUT, offsetof(A, timeout), 1 },
		{ TERN_QP_ATTR_RETRY_CNT, offsetof(A, retry_cnt), 1 },
		{ TERN_QP_ATTR_RNR_RETRY, offsetof(A, rnr_retry), 1 },
		{ TERN_QP_ATTR_MIN_RNR_TIMER, offsetof(A, min_rnr_timer), 1 },
		{ TERN_QP_ATTR_MAX_RD_ATOMIC, offsetof(A, max_rd_atomic), 1 },
		{ TERN_QP_ATTR_MAX_DEST_RD_ATOMIC, offsetof(A, max_dest_rd_atomic), 1 },
		{ TERN_QP_ATTR_ACCESS, offsetof(A, access), 4 },
		{ TERN_QP_ATTR_DEST_QPN, offsetof(A, dest_qpn), 4 },
		{ TERN_QP_ATTR_RQ_PSN, offsetof(A, rq_psn), 4 },
		{ TERN_QP_ATTR_SQ_PSN, offsetof(A, sq_psn), 4 },
		{ TERN_QP_ATTR_QKEY, offsetof(A, qkey), 4 },
		{ TERN_QP_ATTR_PATH, offsetof(A, path), sizeof(struct tern_qp_path) },
	};
	unsigned int i, k;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (mask & f[i].bit)
			continue;
		for (k = 0; k < f[i].len; k++)
			if (a[f[i].off + k])
				return f[i].off + k;
	}
	return -1;
}

/* Where MODIFY_QP's input has its attributes, and attribute @f (for a refusal's syndrome). */
#define MQP_AO		offsetof(struct tern_cmd_modify_qp_in, attrs)
#define MQP_ATTR(f)	(MQP_AO + offsetof(struct tern_qp_attrs, f))

/*
 * MODIFY_QP of @qp from state @cur to @next: whether the transition is one, and @mask
 * selects the attributes it may change and those it needs. TERN_CMD_OK, or the refusal.
 */
static int modify_qp_check_mask(const struct ternm_qp *qp, uint32_t mask, uint8_t cur,
				uint8_t next, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_modify_qp_in T;

	if (!transition_ok(cur, next) ||
	    (!(mask & TERN_QP_ATTR_STATE) && cur != TERN_QPS_INIT && cur != TERN_QPS_RTS &&
	     cur != TERN_QPS_SQD))
		return ternm_refuse(r, TERN_CMD_BAD_STATE, MQP_ATTR(state));
	if (qp->type == TERN_QPT_UD || qp->type == TERN_QPT_GSI || qp->type == TERN_QPT_UC) {
		uint32_t need, allow = qp->type == TERN_QPT_UC ? uc_attrs(cur, next, &need) :
				       ternm_ud_attrs(cur, next, &need);	/* rdma_ud.c */

		if ((mask & ~(allow | TERN_QP_ATTR_STATE)) || (mask & need) != need)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, attr_mask));
	}
	if (qp->type == TERN_QPT_RC &&
	    (mask & ~((transition_attrs(cur, next) & ~TERN_QP_ATTR_QKEY) | TERN_QP_ATTR_STATE)))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, attr_mask));
	/*
	 * SQD->SQD changes attributes only once the send queue has drained: the requester's
	 * outstanding WQEs (segments, retransmissions, READ responses expected) were counted
	 * with the old path MTU and PSNs, and nothing may mix the two.
	 */
	if (cur == TERN_QPS_SQD && next == TERN_QPS_SQD && (mask & ~TERN_QP_ATTR_STATE) &&
	    qp->sq_ci != qp->req_max)
		return ternm_refuse(r, TERN_CMD_BAD_STATE, MQP_ATTR(state));
	if (qp->type == TERN_QPT_RC && cur == TERN_QPS_INIT && next == TERN_QPS_RTR &&
	    (mask & ATTR_RTR_NEED) != ATTR_RTR_NEED)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, attr_mask));
	if (qp->type == TERN_QPT_RC && cur == TERN_QPS_RTR && next == TERN_QPS_RTS &&
	    (mask & ATTR_RTS_NEED) != ATTR_RTS_NEED)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, attr_mask));
	return TERN_CMD_OK;
}

/*
 * The attributes of MODIFY_QP input @in for @qp: those @mask does not select are zero, and
 * those it selects in range. TERN_CMD_OK, or the refusal (the offset of the field).
 */
static int modify_qp_check_values(const struct ternm_qp *qp, const uint8_t *in, uint32_t mask,
				  struct ternm_cmd_result *r)
{
	typedef struct tern_qp_attrs A;
	typedef struct tern_cmd_modify_qp_in T;
	const uint8_t *a = in + MQP_AO;
	uint32_t v;
	int off;

	off = unmasked_nonzero(a, mask);
	if (off >= 0)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_AO + (uint32_t)off);
	/* xport: the input of before it (TERN_MODIFY_QP_IN_V1_LEN) reads as 0 here (cmd.c) */
	v = get_le32(CFLD(in, T, xport));
	if (v && (!(mask & TERN_QP_ATTR_XPORT) || ternm_sr_check(qp, v)))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, xport));
	if (get_le32(CFLD(in, T, rsvd)))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, rsvd));
	v = a[offsetof(A, path_mtu)];
	if ((mask & TERN_QP_ATTR_PATH_MTU) && (v < 1 || v > 5))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_ATTR(path_mtu));
	if ((mask & TERN_QP_ATTR_TIMEOUT) && a[offsetof(A, timeout)] > 31)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_ATTR(timeout));
	if ((mask & TERN_QP_ATTR_RETRY_CNT) && a[offsetof(A, retry_cnt)] > 7)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_ATTR(retry_cnt));
	if ((mask & TERN_QP_ATTR_RNR_RETRY) && a[offsetof(A, rnr_retry)] > 7)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_ATTR(rnr_retry));
	if ((mask & TERN_QP_ATTR_MIN_RNR_TIMER) && a[offsetof(A, min_rnr_timer)] > 31)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_ATTR(min_rnr_timer));
	if ((mask & TERN_QP_ATTR_MAX_RD_ATOMIC) && a[offsetof(A, max_rd_atomic)] > TERNM_MAX_RD_ATOMIC)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_ATTR(max_rd_atomic));
	if ((mask & TERN_QP_ATTR_MAX_DEST_RD_ATOMIC) &&
	    a[offsetof(A, max_dest_rd_atomic)] > TERNM_MAX_DEST_RD)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_ATTR(max_dest_rd_atomic));
	if ((mask & TERN_QP_ATTR_ACCESS) &&
	    (get_le32(CFLD(a, A, access)) & ~(uint32_t)(TERN_ACCESS_LOCAL_WRITE |
			TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_REMOTE_READ | TERN_ACCESS_REMOTE_ATOMIC)))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_ATTR(access));
	if ((mask & TERN_QP_ATTR_DEST_QPN) && get_le32(CFLD(a, A, dest_qpn)) > TERNM_PSN_MASK)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_ATTR(dest_qpn));
	if ((mask & TERN_QP_ATTR_RQ_PSN) && get_le32(CFLD(a, A, rq_psn)) > TERNM_PSN_MASK)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_ATTR(rq_psn));
	if ((mask & TERN_QP_ATTR_SQ_PSN) && get_le32(CFLD(a, A, sq_psn)) > TERNM_PSN_MASK)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_ATTR(sq_psn));
	if (mask & TERN_QP_ATTR_PATH) {
		off = ternm_path_check(CFLD(a, A, path));
		if (off >= 0)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_ATTR(path) + (uint32_t)off);
	}
	return TERN_CMD_OK;
}

/* Set the attributes @a that @mask selects, checked by modify_qp_check_values(). */
static void modify_qp_apply(struct ternm_qp *qp, const uint8_t *a, uint32_t mask)
{
	typedef struct tern_qp_attrs A;

	if (mask & TERN_QP_ATTR_ACCESS)
		qp->access = get_le32(CFLD(a, A, access));
	if (mask & TERN_QP_ATTR_PATH) {
		memcpy(qp->path, CFLD(a, A, path), sizeof(qp->path));
		ternm_qp_build_hdr(qp);
	}
	if (mask & TERN_QP_ATTR_PATH_MTU) {
		qp->path_mtu = a[offsetof(A, path_mtu)];
		qp->mtu = 256u << (qp->path_mtu - 1);
	}
	if (mask & TERN_QP_ATTR_TIMEOUT)
		qp->timeout = a[offsetof(A, timeout)];
	if (mask & TERN_QP_ATTR_RETRY_CNT)
		qp->retry_cnt = qp->retry_left = a[offsetof(A, retry_cnt)];
	if (mask & TERN_QP_ATTR_RNR_RETRY)
		qp->rnr_retry = qp->rnr_left = a[offsetof(A, rnr_retry)];
	if (mask & TERN_QP_ATTR_MIN_RNR_TIMER)
		qp->min_rnr_timer = a[offsetof(A, min_rnr_timer)];
	if (mask & TERN_QP_ATTR_MAX_RD_ATOMIC)
		qp->max_rd_atomic = a[offsetof(A, max_rd_atomic)];
	if (mask & TERN_QP_ATTR_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = a[offsetof(A, max_dest_rd_atomic)];
	if (mask & TERN_QP_ATTR_DEST_QPN)
		qp->dest_qpn = get_le32(CFLD(a, A, dest_qpn));
	if (mask & TERN_QP_ATTR_RQ_PSN)
		qp->epsn = get_le32(CFLD(a, A, rq_psn)) & TERNM_PSN_MASK;
	if (mask & TERN_QP_ATTR_QKEY)
		qp->qkey = get_le32(CFLD(a, A, qkey));
	if (mask & TERN_QP_ATTR_SQ_PSN) {
		uint32_t v = get_le32(CFLD(a, A, sq_psn));

		qp->next_psn = qp->una_psn = qp->req_psn = qp->sent_psn = v;
		ternm_sr_sq_start(qp);	/* the requester's selective-repeat PSNs from here */
	}
}

/* Move @qp from state @cur to @next (the same, or one transition_ok() allows). */
static void modify_qp_state(struct tern_model *m, struct ternm_qp *qp, uint32_t mask,
			    uint8_t cur, uint8_t next)
{
	if (next == TERN_QPS_RESET || next == TERN_QPS_ERR)
		ternm_resp_flush_acks(m, qp);
	if (next == TERN_QPS_RESET) {
		qp->state = next;
		qp_reset(m, qp);
		return;
	}
	if (next == TERN_QPS_ERR) {
		ternm_qp_to_err(m, qp);
		return;
	}
	qp->state = next;
	if (next == TERN_QPS_SQD && cur == TERN_QPS_RTS) {
		qp->sqd_notify = !!(mask & TERN_QP_ATTR_SQD_NOTIFY);
		ternm_req_check_drained(m, qp);
	}
	if (next == TERN_QPS_RTS && qp->sq_pi != qp->req_idx)
		ternm_qp_work(m, qp);
}

static int modify_qp(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_modify_qp_in T;
	const uint8_t *a = in + MQP_AO;
	uint32_t qpn = get_le32(CFLD(in, T, qpn));
	uint32_t mask = get_le32(CFLD(in, T, attr_mask));
	struct ternm_qp *qp = ternm_qp_get(m, qpn);
	uint8_t cur, next;
	int st;

	if (!qp)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, qpn));
	if (mask & ~(uint32_t)ATTR_ALL)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, attr_mask));
	cur = qp->state;
	next = (mask & TERN_QP_ATTR_STATE) ? a[offsetof(struct tern_qp_attrs, state)] : cur;
	if (next > TERN_QPS_ERR)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, MQP_ATTR(state));
	st = modify_qp_check_mask(qp, mask, cur, next, r);
	if (st == TERN_CMD_OK)
		st = modify_qp_check_values(qp, in, mask, r);
	if (st != TERN_CMD_OK)
		return st;
	/*
	 * Selective repeat on or off (rdma_sr.c): the one step that may fail, so first. A new
	 * rq_psn without TERN_QP_ATTR_XPORT (SQD->SQD) keeps the mode but starts its state
	 * afresh, as nothing held survives a new PSN start; that never fails (no allocation).
	 */
	if ((mask & TERN_QP_ATTR_XPORT) &&
	    ternm_sr_config(m, qp, get_le32(CFLD(in, T, xport))))
		return ternm_refuse(r, TERN_CMD_NO_RESOURCES, offsetof(T, xport));
	if ((mask & (TERN_QP_ATTR_XPORT | TERN_QP_ATTR_RQ_PSN)) == TERN_QP_ATTR_RQ_PSN)
		ternm_sr_config(m, qp, qp->xport);
	modify_qp_apply(qp, a, mask);
	modify_qp_state(m, qp, mask, cur, next);
	return TERN_CMD_OK;
}

static int query_qp(struct tern_model *m, const uint8_t *in, uint16_t out_len,
		    struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_query_qp_out T;
	typedef struct tern_qp_attrs A;
	struct ternm_qp *qp = ternm_qp_get(m, get_le32(CFLD(in, struct tern_cmd_query_qp_in, qpn)));
	uint8_t *o = m->cmd_out, *a = m->cmd_out + offsetof(T, attrs);
	struct ternm_hpcc_view hv;
	struct ternm_timely_view tv;
	uint32_t rate, alpha;

	if (!qp)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE,
				    offsetof(struct tern_cmd_query_qp_in, qpn));
	if (out_len < TERN_QUERY_QP_OUT_V1_LEN)
		return ternm_refuse(r, TERN_CMD_BAD_LEN, sizeof(T));
	memset(o, 0, sizeof(T));
	ternm_cc_query_qp(m, qp, &rate, &alpha);
	put_le32(FLD(o, T, cc_rate_mbps), rate);
	put_le32(FLD(o, T, cc_alpha), alpha);
	if (ternm_hpcc_query(m, qp, &hv)) {
		put_le32(FLD(o, T, status), TERN_QP_STATUS_HPCC);
		put_le32(FLD(o, T, hpcc_window), hv.window);
		put_le16(FLD(o, T, hpcc_util), hv.util);
		o[offsetof(T, hpcc_inc_stage)] = hv.inc_stage;
	}
	if (ternm_timely_query(m, qp, &tv)) {
		put_le32(FLD(o, T, status), TERN_QP_STATUS_TIMELY);
		put_le32(FLD(o, T, timely_rate_mbps), tv.rate_mbps);
		put_le32(FLD(o, T, timely_rtt_ns), tv.rtt_ns);
		put_le32(FLD(o, T, timely_rtt_diff_ns), (uint32_t)tv.rtt_diff_ns);
		o[offsetof(T, timely_hai_count)] = tv.hai_count;
	}
	a[offsetof(A, state)] = qp->state;
	a[offsetof(A, path_mtu)] = qp->path_mtu;
	a[offsetof(A, timeout)] = qp->timeout;
	a[offsetof(A, retry_cnt)] = qp->retry_cnt;
	a[offsetof(A, rnr_retry)] = qp->rnr_retry;
	a[offsetof(A, min_rnr_timer)] = qp->min_rnr_timer;
	a[offsetof(A, max_rd_atomic)] = qp->max_rd_atomic;
	a[offsetof(A, max_dest_rd_atomic)] = qp->max_dest_rd_atomic;
	put_le32(FLD(a, A, access), qp->access);
	put_le32(FLD(a, A, dest_qpn), qp->dest_qpn);
	put_le32(FLD(a, A, rq_psn), qp->epsn);
	put_le32(FLD(a, A, sq_psn), qp->next_psn);
	put_le32(FLD(a, A, qkey), qp->qkey);
	memcpy(FLD(a, A, path), qp->path, sizeof(qp->path));
	if (qp->state == TERN_QPS_SQD && qp->sq_ci != qp->req_max)
		put_le32(FLD(o, T, status),
			 get_le32(FLD(o, T, status)) | TERN_QP_STATUS_SQ_DRAINING);
	put_le16(FLD(o, T, sq_ci), qp->sq_ci);
	put_le16(FLD(o, T, rq_ci), qp->rq_ci);
	put_le32(FLD(o, T, xport), qp->xport);
	put_le64(FLD(o, T, srtt_ns), qp->rtt.srtt_ns);
	put_le64(FLD(o, T, rttvar_ns), qp->rtt.rttvar_ns);
	put_le64(FLD(o, T, rto_ns), qp->type == TERN_QPT_RC ? ternm_rto_ns(qp) : 0);
	/* a buffer of one of the older, shorter versions gets that version's bytes */
	if (out_len >= sizeof(T))
		r->out_size = sizeof(T);
	else if (out_len >= TERN_QUERY_QP_OUT_V4_LEN)
		r->out_size = TERN_QUERY_QP_OUT_V4_LEN;
	else if (out_len >= TERN_QUERY_QP_OUT_V3_LEN)
		r->out_size = TERN_QUERY_QP_OUT_V3_LEN;
	else if (out_len >= TERN_QUERY_QP_OUT_V2_LEN)
		r->out_size = TERN_QUERY_QP_OUT_V2_LEN;
	else
		r->out_size = TERN_QUERY_QP_OUT_V1_LEN;
	return TERN_CMD_OK;
}

static int destroy_qp(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	struct ternm_qp *qp = ternm_qp_get(m, get_le32(CFLD(in, struct tern_cmd_destroy_qp_in, qpn)));

	if (!qp)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE,
				    offsetof(struct tern_cmd_destroy_qp_in, qpn));
	ternm_resp_flush_acks(m, qp);
	ternm_mw_qp_gone(m, qp->qpn);
	ternm_mcast_qp_gone(m, qp->qpn);
	ternm_srq_qp_release(m, qp, true);	/* SRQ WQEs it holds: flushed, not lost */
	qp_free(m, qp);
	return TERN_CMD_OK;
}

int ternm_rdma_cmd_in_len(uint16_t opcode)
{
	switch (opcode) {
	case TERN_CMD_QUERY_RDMA:
	case TERN_CMD_CREATE_PD:
	case TERN_CMD_QUERY_RDMA_STATS:
		return 0;
	case TERN_CMD_DESTROY_PD:
		return sizeof(struct tern_cmd_destroy_pd_in);
	case TERN_CMD_CREATE_MR:
		return sizeof(struct tern_cmd_create_mr_in);
	case TERN_CMD_DESTROY_MR:
		return sizeof(struct tern_cmd_destroy_mr_in);
	case TERN_CMD_REREG_MR:
		return sizeof(struct tern_cmd_rereg_mr_in);
	case TERN_CMD_CREATE_CQ:
		return sizeof(struct tern_cmd_create_cq_in);
	case TERN_CMD_DESTROY_CQ:
		return sizeof(struct tern_cmd_destroy_cq_in);
	case TERN_CMD_RESIZE_CQ:
		return sizeof(struct tern_cmd_resize_cq_in);
	case TERN_CMD_MODIFY_CQ:
		return sizeof(struct tern_cmd_modify_cq_in);
	case TERN_CMD_CREATE_QP:
		return sizeof(struct tern_cmd_create_qp_in);
	case TERN_CMD_MODIFY_QP:
		return sizeof(struct tern_cmd_modify_qp_in);
	case TERN_CMD_QUERY_QP:
		return sizeof(struct tern_cmd_query_qp_in);
	case TERN_CMD_DESTROY_QP:
		return sizeof(struct tern_cmd_destroy_qp_in);
	case TERN_CMD_ATTACH_MCAST:
	case TERN_CMD_DETACH_MCAST:
		return sizeof(struct tern_cmd_mcast_in);
	case TERN_CMD_ALLOC_COUNTER:
		return 0;
	case TERN_CMD_FREE_COUNTER:
	case TERN_CMD_QUERY_COUNTER:
		return sizeof(struct tern_cmd_counter_in);
	case TERN_CMD_BIND_QP_COUNTER:
		return sizeof(struct tern_cmd_bind_qp_counter_in);
	default:
		return ternm_srq_cmd_in_len(opcode);
	}
}

void ternm_rdma_cmd(struct tern_model *m, uint16_t opcode, const uint8_t *in, uint16_t out_len,
		    struct ternm_cmd_result *r)
{
	int st = TERN_CMD_OK;

	switch (opcode) {
	case TERN_CMD_QUERY_RDMA:
		if (out_len < sizeof(struct tern_cmd_query_rdma_out)) {
			st = TERN_CMD_BAD_LEN;
			r->syndrome = sizeof(struct tern_cmd_query_rdma_out);
			break;
		}
		put_query(m->cmd_out);
		r->out_size = sizeof(struct tern_cmd_query_rdma_out);
		break;
	case TERN_CMD_QUERY_RDMA_STATS:
		if (out_len < TERN_RDMA_STATS_OUT_V1_LEN) {
			st = TERN_CMD_BAD_LEN;
			r->syndrome = sizeof(struct tern_cmd_rdma_stats_out);
			break;
		}
		put_stats(m, m->cmd_out);
		/* a driver from before the doorbell records, the adaptive timer or TIMELY gets
		 * the counters it knows
		 */
		if (out_len >= sizeof(struct tern_cmd_rdma_stats_out))
			r->out_size = sizeof(struct tern_cmd_rdma_stats_out);
		else if (out_len >= TERN_RDMA_STATS_OUT_V3_LEN)
			r->out_size = TERN_RDMA_STATS_OUT_V3_LEN;
		else if (out_len >= TERN_RDMA_STATS_OUT_V2_LEN)
			r->out_size = TERN_RDMA_STATS_OUT_V2_LEN;
		else
			r->out_size = TERN_RDMA_STATS_OUT_V1_LEN;
		break;
	case TERN_CMD_CREATE_PD:
		st = create_pd(m, r);
		break;
	case TERN_CMD_DESTROY_PD:
		st = destroy_pd(m, in, r);
		break;
	case TERN_CMD_CREATE_MR:
		st = ternm_mr_create(m, in, r);
		break;
	case TERN_CMD_DESTROY_MR:
		st = ternm_mr_destroy(m, in, r);
		break;
	case TERN_CMD_REREG_MR:
		st = ternm_mr_rereg(m, in, r);
		break;
	case TERN_CMD_CREATE_CQ:
		st = create_cq(m, in, r);
		break;
	case TERN_CMD_DESTROY_CQ:
		st = destroy_cq(m, in, r);
		break;
	case TERN_CMD_RESIZE_CQ:
		st = resize_cq(m, in, r);
		break;
	case TERN_CMD_MODIFY_CQ:
		st = modify_cq(m, in, r);
		break;
	case TERN_CMD_CREATE_QP:
		st = create_qp(m, in, r);
		break;
	case TERN_CMD_MODIFY_QP:
		st = modify_qp(m, in, r);
		break;
	case TERN_CMD_QUERY_QP:
		st = query_qp(m, in, out_len, r);
		break;
	case TERN_CMD_DESTROY_QP:
		st = destroy_qp(m, in, r);
		break;
	case TERN_CMD_ATTACH_MCAST:
	case TERN_CMD_DETACH_MCAST:
		st = ternm_mcast_cmd(m, opcode == TERN_CMD_ATTACH_MCAST, in, r);
		break;
	case TERN_CMD_ALLOC_COUNTER:
	case TERN_CMD_FREE_COUNTER:
	case TERN_CMD_BIND_QP_COUNTER:
	case TERN_CMD_QUERY_COUNTER:
		st = ternm_ctr_cmd(m, opcode, in, out_len, r);
		break;
	default:
		st = ternm_srq_cmd(m, opcode, in, out_len, r);
		break;
	}
	r->status = (uint8_t)st;
}

bool ternm_rdma_eq_in_use(struct tern_model *m, unsigned int eqn)
{
	unsigned int i;

	if (!m->rdma)
		return false;
	for (i = 0; i < TERNM_MAX_CQ; i++)
		if (m->rdma->cq[i].used && m->rdma->cq[i].eqn == eqn)
			return true;
	return false;
}

/* ---- life cycle ------------------------------------------------------------------------- */

int ternm_rdma_init(struct tern_model *m)
{
	m->rdma = calloc(1, sizeof(*m->rdma));
	if (!m->rdma)
		return -1;
	m->rdma->next_qpn = 2;
	if (ternm_cc_init(m)) {
		free(m->rdma);
		m->rdma = NULL;
		return -1;
	}
	return 0;
}

/* Device reset: every object goes, counters restart. */
void ternm_rdma_clear(struct tern_model *m)
{
	struct ternm_rdma *r = m->rdma;
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < TERNM_MAX_QP; i++)
		if (r->qp[i])
			qp_free(m, r->qp[i]);
	ternm_mr_clear(m);
	ternm_srq_clear(m);
	for (i = 0; i < TERNM_MAX_CQ; i++)
		ternm_mem_free(m, &r->cq[i].mem);
	memset(r->cq, 0, sizeof(r->cq));
	r->cq_timer_head = NULL;
	memset(r->pd, 0, sizeof(r->pd));
	memset(r->mcast, 0, sizeof(r->mcast));
	memset(r->ctr, 0, sizeof(r->ctr));
	memset(&r->stats, 0, sizeof(r->stats));
	r->work_head = r->work_tail = NULL;
	r->macwait_head = r->macwait_tail = NULL;
	r->timer_head = NULL;
	ternm_cc_clear(m);
	r->next_qpn = 2;
	r->sq_wqes = 0;
	r->sr_buf_bytes = 0;
	r->sr_slot_bytes = 0;
}

void ternm_rdma_fini(struct tern_model *m)
{
	ternm_rdma_clear(m);
	ternm_cc_fini(m);
	free(m->rdma);
	m->rdma = NULL;
}
