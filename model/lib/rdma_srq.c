/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: shared receive queues (SRQ).
 *
 * An SRQ is a receive ring like a QP's RQ (same WQE format), created with CREATE_SRQ and
 * posted through its own doorbell (TERN_UDB_SRQ, on the UAR page given at creation). QPs
 * created with TERN_QP_F_SRQ have no RQ: when a message that needs a receive WQE starts, the
 * responder takes the SRQ's next WQE (ci++), reads it once and keeps it in the QP until the
 * message's CQE, exactly as it keeps an RQ WQE; the CQE's wqe_idx is the SRQ slot. With no
 * SRQ WQE posted the responder sends an RNR NAK, as with an empty RQ. In selective repeat a
 * SEND packet after a gap names its receive ordinal: the QP takes the SRQ WQEs up to it
 * ahead, in order, and keeps them for those messages (ternm_srq_reserve()).
 *
 * Limit: MODIFY_SRQ arms a limit; after a take leaves fewer than that many WQEs posted and
 * not taken, TERN_EQE_SRQ_EVENT/TERN_SRQ_EV_LIMIT goes to the async EQ once and the limit is
 * disarmed (counted in srq_limit_events). An SRQ whose ring cannot be read sends
 * TERN_SRQ_EV_ERROR once and gives out no more WQEs (the QP that hit it goes to ERR as on an
 * unreadable RQ, and so does any QP that needs a WQE from it later).
 *
 * A QP on an SRQ that goes to ERR completes the WQEs it holds (the one in progress, those
 * taken ahead) with WR_FLUSH_ERR, takes nothing more, and raises
 * TERN_QP_EV_LAST_WQE_REACHED once; one going to RESET or away completes them the same way.
 * The SRQ's WQEs are not flushed: they belong to the SRQ and go to the other QPs.
 */
#include <stdlib.h>

#include "rdma.h"

/* ---- lookups and references -------------------------------------------------------------- */

struct ternm_srq *ternm_srq_get(struct tern_model *m, uint32_t srqn)
{
	if (!m->rdma || srqn >= TERNM_MAX_SRQ || !m->rdma->srq[srqn].used)
		return NULL;
	return &m->rdma->srq[srqn];
}

static uint32_t srq_num(struct tern_model *m, const struct ternm_srq *srq)
{
	return (uint32_t)(srq - m->rdma->srq);
}

/*
 * CREATE_QP with TERN_QP_F_SRQ: the RQ fields must be zero and srqn must name an SRQ.
 * Returns TERN_CMD_OK or the status, with r->syndrome the offset of the field.
 */
int ternm_srq_qp_check(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_create_qp_in T;
	unsigned int i;

	if (in[offsetof(T, log_rq_depth)]) {
		r->syndrome = offsetof(T, log_rq_depth);
		return TERN_CMD_BAD_PARAM;
	}
	if (in[offsetof(T, log_rq_stride)]) {
		r->syndrome = offsetof(T, log_rq_stride);
		return TERN_CMD_BAD_PARAM;
	}
	for (i = 0; i < sizeof(struct tern_mem_desc); i++) {
		if (in[offsetof(T, rq_mem) + i]) {
			r->syndrome = offsetof(T, rq_mem) + i;
			return TERN_CMD_BAD_PARAM;
		}
	}
	if (!ternm_srq_get(m, get_le32(CFLD(in, T, srqn)))) {
		r->syndrome = offsetof(T, srqn);
		return TERN_CMD_BAD_RESOURCE;
	}
	return TERN_CMD_OK;
}

/* A QP on an SRQ was created (@get) or is going away. */
void ternm_srq_qp_ref(struct tern_model *m, struct ternm_qp *qp, bool get)
{
	if (!(qp->flags & TERN_QP_F_SRQ))
		return;
	if (get)
		m->rdma->srq[qp->srqn].refs++;
	else
		m->rdma->srq[qp->srqn].refs--;
}

/* ---- events ------------------------------------------------------------------------------------ */

static void srq_event(struct tern_model *m, struct ternm_srq *srq, uint8_t ev)
{
	ternm_eq_post_flag_sub(m, TERN_EQ_F_ASYNC, TERN_EQE_SRQ_EVENT, ev, srq_num(m, srq));
}

static void srq_fail(struct tern_model *m, struct ternm_srq *srq)
{
	if (srq->err)
		return;
	srq->err = true;
	ternm_log(m, TERN_MODEL_LOG_WARN, "SRQ %u ring unreachable: SRQ in error",
		  srq_num(m, srq));
	srq_event(m, srq, TERN_SRQ_EV_ERROR);
}

/*
 * An SRQ with a doorbell record (TERN_SRQ_F_DB_REC, right after the ring): take its producer
 * index. Returns 0, or -2 when the record cannot be read or is more than the depth ahead of
 * ci (counted in db_rec_errors): the SRQ is then in error, as with an unreadable ring.
 */
static int srq_db_rec(struct tern_model *m, struct ternm_srq *srq)
{
	if (!ternm_wq_db_rec_read(m, &srq->mem, srq->log_depth, srq->log_stride, srq->ci,
				  &srq->pi))
		return 0;
	m->rdma->stats.db_rec_errors++;
	ternm_log(m, TERN_MODEL_LOG_WARN,
		  "SRQ %u doorbell record unreadable, backwards or beyond depth",
		  srq_num(m, srq));
	srq_fail(m, srq);
	return -2;
}

/* ---- the receive path -------------------------------------------------------------------------- */

/*
 * Take the SRQ's next WQE for @qp into @r. Returns 0, 1 if none is posted, -1 if it is
 * malformed, -2 if the ring cannot be read. A WQE whose header was read (*@hdr) is taken
 * (ci++) whatever follows: its CQE reports on it.
 */
static int srq_take(struct tern_model *m, struct ternm_qp *qp, struct ternm_rqe_res *r,
		    bool *hdr)
{
	struct ternm_srq *srq = &m->rdma->srq[qp->srqn];
	uint16_t idx = (uint16_t)(srq->ci & ((1u << srq->log_depth) - 1));
	int st;

	*hdr = false;
	if (srq->err)
		return -2;
	if (srq->ci == srq->pi && srq->db_rec && srq_db_rec(m, srq))
		return -2;
	if (srq->ci == srq->pi)
		return 1;
	r->idx = idx;
	st = ternm_rqe_parse(m, &srq->mem, (uint64_t)idx << srq->log_stride,
			     1u << srq->log_stride, hdr, &r->wr_id, r->sge, &r->nsge);
	if (st == -2)
		srq_fail(m, srq);
	if (!*hdr)
		return st;
	r->st = (int8_t)st;
	srq->ci++;
	/* below the limit by the cached view: the record may say otherwise */
	if (srq->limit && (uint16_t)(srq->pi - srq->ci) < srq->limit && srq->db_rec &&
	    srq_db_rec(m, srq))
		return st;
	if (srq->limit && (uint16_t)(srq->pi - srq->ci) < srq->limit) {
		srq->limit = 0;
		m->rdma->stats.srq_limit_events++;
		srq_event(m, srq, TERN_SRQ_EV_LIMIT);
	}
	return st;
}

/*
 * The WQE for the message starting on @qp (ternm_rqe_fetch on an SRQ QP, rqe_valid false):
 * the first one reserved ahead for it (ternm_srq_reserve()), else the SRQ's next. Returns
 * 0, 1 if none is posted, -1 if it is malformed, -2 if the ring cannot be read; with its
 * header read, the QP holds it (rqe_valid) until its CQE.
 */
int ternm_srq_fetch(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_rqe_res r;
	bool hdr = true;
	int st;

	if (qp->srq_res_n) {
		r = qp->srq_res[qp->srq_res_head];
		qp->srq_res_head = (uint16_t)((qp->srq_res_head + 1) % qp->srq_res_cap);
		qp->srq_res_n--;
		st = r.st;
	} else {
		st = srq_take(m, qp, &r, &hdr);
	}
	if (!hdr)
		return st;
	qp->rqe_valid = true;
	qp->rqe_idx = r.idx;
	qp->rqe_wr_id = r.wr_id;
	qp->rqe_nsge = r.nsge;
	memcpy(qp->rqe_sge, r.sge, sizeof(r.sge[0]) * r.nsge);
	return st;
}

/*
 * The ring for @qp's reservations, room for @bound ordinals: allocated at the first one
 * (counted in host memory); a larger window gets a larger ring once it is empty. Returns
 * false without memory.
 */
static bool srq_res_ring(struct tern_model *m, struct ternm_qp *qp, uint32_t bound)
{
	struct ternm_rqe_res *ring;

	if (bound > TERNM_SR_MAX_WIN)
		bound = TERNM_SR_MAX_WIN;
	if (qp->srq_res && (qp->srq_res_cap >= bound || qp->srq_res_n))
		return true;
	if (!ternm_host_mem_try(m, (uint64_t)bound * sizeof(*ring)))
		return false;
	ring = calloc(bound, sizeof(*ring));
	if (!ring) {
		ternm_host_mem_release(m, (uint64_t)bound * sizeof(*ring));
		return false;
	}
	if (qp->srq_res) {
		free(qp->srq_res);
		ternm_host_mem_release(m, (uint64_t)qp->srq_res_cap * sizeof(*ring));
	}
	qp->srq_res = ring;
	qp->srq_res_cap = (uint16_t)bound;
	qp->srq_res_head = 0;
	return true;
}

/**
 * ternm_srq_reserve() - the SRQ WQE of a later receive ordinal of a selective-repeat QP
 * @m: the model
 * @qp: an RC QP on an SRQ, in selective repeat
 * @ahead: the ordinal, counted from rq_rord (the message in progress or next to start)
 * @bound: the most ordinals that may be ahead (the QP's reorder window)
 * @sge: the WQE's scatter list, when 0 is returned
 * @nsge: its entries
 *
 * A SEND packet after a gap names its receive ordinal (the SPH's rord); with an SRQ the
 * WQEs come from a ring shared in arrival order, so each ordinal up to @ahead that has none
 * yet takes the SRQ's next now, in order, and keeps it until its message starts in order
 * (ternm_srq_fetch()) or the QP goes to ERR or RESET (flushed). The SRQ's limit event and
 * the device's view of the ring work as for any take.
 *
 * Return: 0; 1 if there is no usable WQE for it (none posted: the message goes the in-order
 * way, which sends the RNR NAK; or one that cannot be read, reported in turn); -1 if
 * @ahead is beyond @bound or there is no memory for the ring (the packet is dropped).
 */
int ternm_srq_reserve(struct tern_model *m, struct ternm_qp *qp, uint32_t ahead, uint32_t bound,
		      const struct ternm_sge **sge, uint8_t *nsge)
{
	uint32_t base = qp->rqe_valid ? 1 : 0, k;
	const struct ternm_rqe_res *r;

	if (ahead >= bound || ahead >= TERNM_SR_MAX_WIN)
		return -1;
	if (ahead < base) {
		*sge = qp->rqe_sge;	/* the message in progress */
		*nsge = qp->rqe_nsge;
		return 0;
	}
	k = ahead - base;
	if (!srq_res_ring(m, qp, bound) || k >= qp->srq_res_cap)
		return -1;
	while (qp->srq_res_n <= k) {
		struct ternm_rqe_res *t;
		bool hdr;

		t = &qp->srq_res[(qp->srq_res_head + qp->srq_res_n) % qp->srq_res_cap];
		(void)srq_take(m, qp, t, &hdr);
		if (!hdr)
			return 1;	/* nothing taken */
		qp->srq_res_n++;
	}
	r = &qp->srq_res[(qp->srq_res_head + k) % qp->srq_res_cap];
	if (r->st)
		return 1;
	*sge = r->sge;
	*nsge = r->nsge;
	return 0;
}

/* Complete the receive WQE @wr_id at SRQ slot @idx of @qp with WR_FLUSH_ERR. */
static void srq_flush_cqe(struct tern_model *m, struct ternm_qp *qp, uint64_t wr_id,
			  uint16_t idx)
{
	struct ternm_cqe_info ci;

	memset(&ci, 0, sizeof(ci));
	ci.wr_id = wr_id;
	ci.opcode = TERN_CQE_RECV;
	ci.wqe_idx = idx;
	ci.status = TERN_CQE_WR_FLUSH_ERR;
	ci.vendor_err = TERN_SYND_FLUSH;
	ternm_cq_write(m, qp, qp->rcqn, &ci);
}

/* Complete every SRQ WQE @qp holds (in progress, then reserved in order) with a flush. */
static unsigned int srq_flush_held(struct tern_model *m, struct ternm_qp *qp)
{
	unsigned int n = 0;

	if (qp->rqe_valid) {
		qp->rqe_valid = false;
		srq_flush_cqe(m, qp, qp->rqe_wr_id, qp->rqe_idx);
		n++;
	}
	while (qp->srq_res_n) {
		const struct ternm_rqe_res *r = &qp->srq_res[qp->srq_res_head];

		srq_flush_cqe(m, qp, r->wr_id, r->idx);
		qp->srq_res_head = (uint16_t)((qp->srq_res_head + 1) % qp->srq_res_cap);
		qp->srq_res_n--;
		n++;
	}
	return n;
}

/*
 * @qp (on an SRQ) is in ERR: complete the WQEs it holds (the one in progress and those
 * reserved ahead) with a flush, and say once that no more SRQ WQE will be used. Returns
 * the CQEs written.
 */
unsigned int ternm_srq_qp_flush(struct tern_model *m, struct ternm_qp *qp)
{
	unsigned int n = srq_flush_held(m, qp);

	if (!qp->srq_last_wqe) {
		qp->srq_last_wqe = true;
		ternm_qp_event(m, qp, TERN_QP_EV_LAST_WQE_REACHED);
	}
	return n;
}

/*
 * @qp goes to RESET or is destroyed: with @flush the SRQ WQEs it still holds (not flushed
 * in ERR) complete with a flush, so software gets their slots back (not at a device reset,
 * which writes nothing); the reservation ring is freed.
 */
void ternm_srq_qp_release(struct tern_model *m, struct ternm_qp *qp, bool flush)
{
	if (!(qp->flags & TERN_QP_F_SRQ))
		return;
	if (flush)
		(void)srq_flush_held(m, qp);
	qp->rqe_valid = false;
	qp->srq_res_n = 0;
	if (qp->srq_res) {
		free(qp->srq_res);
		ternm_host_mem_release(m, (uint64_t)qp->srq_res_cap * sizeof(*qp->srq_res));
	}
	qp->srq_res = NULL;
	qp->srq_res_cap = qp->srq_res_head = qp->srq_res_n = 0;
}

/* ---- doorbell ------------------------------------------------------------------------------------ */

/* TERN_UDB_SRQ written on UAR page @page. */
void ternm_srq_doorbell(struct tern_model *m, uint16_t page, uint64_t val)
{
	uint32_t srqn = tern_udb_num(val);
	uint16_t pi = tern_udb_pi(val);
	struct ternm_srq *srq = ternm_srq_get(m, srqn);

	if (!srq || srq->uar != page) {
		m->rdma->stats.db_misdirected++;
		return;
	}
	if (srq->db_rec) {
		/* the record is the producer index; the doorbell only says "read it" */
		if (!srq->err)
			(void)srq_db_rec(m, srq);
		return;
	}
	if (!ternm_wq_pi_ok(pi, srq->pi, srq->ci, srq->log_depth)) {
		ternm_log(m, TERN_MODEL_LOG_WARN,
			  "SRQ %u doorbell PI %u backwards or beyond depth: ignored", srqn, pi);
		return;
	}
	srq->pi = pi;
}

/* ---- commands ------------------------------------------------------------------------------------ */

static int create_srq(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_create_srq_in T;
	struct ternm_rdma *rd = m->rdma;
	uint32_t pdn = get_le32(CFLD(in, T, pdn));
	uint16_t uar = get_le16(CFLD(in, T, uar));
	uint8_t log = in[offsetof(T, log_depth)], lstride = in[offsetof(T, log_stride)];
	uint32_t flags = get_le32(CFLD(in, T, flags));	/* 0 from a V1 (shorter) input */
	struct ternm_srq *srq = NULL;
	struct ternm_mem mem;
	uint32_t bad_off, i;
	int rc;

	if (pdn >= TERNM_MAX_PD || !rd->pd[pdn].used)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, pdn));
	if (uar < TERN_DB_FIRST_UAR || uar >= TERN_DB_NUM_PAGES)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, uar));
	if (log < 1 || log > TERNM_MAX_SRQ_LOG)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, log_depth));
	if (lstride < TERN_RQ_MIN_LOG_STRIDE || lstride > TERN_RQ_MAX_LOG_STRIDE)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, log_stride));
	if (flags & ~TERN_SRQ_F_DB_REC)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, flags));
	if (get_le32(CFLD(in, T, rsvd)))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, rsvd));
	for (i = 0; i < TERNM_MAX_SRQ; i++) {
		if (!rd->srq[i].used) {
			srq = &rd->srq[i];
			break;
		}
	}
	if (!srq)
		return TERN_CMD_NO_RESOURCES;
	rc = ternm_mem_init_ex(m, &mem, CFLD(in, T, mem),
			       (1ull << (log + lstride)) +
			       ((flags & TERN_SRQ_F_DB_REC) ? sizeof(struct tern_wq_db_rec) : 0),
			       true, &bad_off);
	if (rc != TERN_CMD_OK)
		return ternm_refuse(r, rc,
				    rc == TERN_CMD_BAD_PARAM ? offsetof(T, mem) + bad_off : 0);
	memset(srq, 0, sizeof(*srq));
	srq->used = true;
	srq->log_depth = log;
	srq->log_stride = lstride;
	srq->uar = uar;
	srq->pdn = pdn;
	srq->mem = mem;
	srq->db_rec = flags & TERN_SRQ_F_DB_REC;
	rd->pd[pdn].refs++;
	r->result = i;
	return TERN_CMD_OK;
}

static int modify_srq(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_modify_srq_in T;
	struct ternm_srq *srq = ternm_srq_get(m, get_le32(CFLD(in, T, srqn)));
	uint32_t limit = get_le32(CFLD(in, T, limit));

	if (!srq)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, srqn));
	if (limit >= 1u << srq->log_depth)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, limit));
	srq->limit = limit;
	return TERN_CMD_OK;
}

static int query_srq(struct tern_model *m, const uint8_t *in, uint16_t out_len,
		     struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_query_srq_out T;
	typedef struct tern_cmd_query_srq_in I;
	struct ternm_srq *srq = ternm_srq_get(m, get_le32(CFLD(in, I, srqn)));
	uint8_t *o = m->cmd_out;

	if (!srq)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(I, srqn));
	if (out_len < sizeof(T))
		return ternm_refuse(r, TERN_CMD_BAD_LEN, sizeof(T));
	if (srq->db_rec && !srq->err)
		(void)srq_db_rec(m, srq);
	memset(o, 0, sizeof(T));
	put_le32(FLD(o, T, limit), srq->limit);
	put_le16(FLD(o, T, pi), srq->pi);
	put_le16(FLD(o, T, ci), srq->ci);
	r->out_size = sizeof(T);
	return TERN_CMD_OK;
}

static void srq_free(struct tern_model *m, struct ternm_srq *srq)
{
	m->rdma->pd[srq->pdn].refs--;
	ternm_mem_free(m, &srq->mem);
	memset(srq, 0, sizeof(*srq));
}

static int destroy_srq(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_destroy_srq_in T;
	struct ternm_srq *srq = ternm_srq_get(m, get_le32(CFLD(in, T, srqn)));

	if (!srq)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, srqn));
	if (srq->refs)
		return ternm_refuse(r, TERN_CMD_BAD_STATE, offsetof(T, srqn));
	srq_free(m, srq);
	return TERN_CMD_OK;
}

/* Input length of an SRQ command, -2 if @opcode is none. */
int ternm_srq_cmd_in_len(uint16_t opcode)
{
	switch (opcode) {
	case TERN_CMD_CREATE_SRQ:
		return sizeof(struct tern_cmd_create_srq_in);
	case TERN_CMD_MODIFY_SRQ:
		return sizeof(struct tern_cmd_modify_srq_in);
	case TERN_CMD_QUERY_SRQ:
		return sizeof(struct tern_cmd_query_srq_in);
	case TERN_CMD_DESTROY_SRQ:
		return sizeof(struct tern_cmd_destroy_srq_in);
	default:
		return -2;
	}
}

/* Run an SRQ command; returns its status (BAD_OPCODE if @opcode is none). */
int ternm_srq_cmd(struct tern_model *m, uint16_t opcode, const uint8_t *in, uint16_t out_len,
		  struct ternm_cmd_result *r)
{
	switch (opcode) {
	case TERN_CMD_CREATE_SRQ:
		return create_srq(m, in, r);
	case TERN_CMD_MODIFY_SRQ:
		return modify_srq(m, in, r);
	case TERN_CMD_QUERY_SRQ:
		return query_srq(m, in, out_len, r);
	case TERN_CMD_DESTROY_SRQ:
		return destroy_srq(m, in, r);
	default:
		return TERN_CMD_BAD_OPCODE;
	}
}

/* Device reset (after the QPs went): every SRQ goes. */
void ternm_srq_clear(struct tern_model *m)
{
	unsigned int i;

	for (i = 0; i < TERNM_MAX_SRQ; i++)
		ternm_mem_free(m, &m->rdma->srq[i].mem);
	memset(m->rdma->srq, 0, sizeof(m->rdma->srq));
}
