/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: the RC requester (SQ WQEs to packets) and completer (ACKs, NAKs and
 * READ responses to CQEs), with go-back-N retransmission.
 *
 * PSNs: a WQE gets its PSNs when it is first started: one per packet (a READ request takes
 * as many as its responses). una_psn is the oldest PSN not acknowledged; a READ's PSNs are
 * acknowledged by its responses, everything else by ACKs (coalesced: an ACK for n covers
 * every PSN up to n). At most TERNM_MAX_UNACKED PSNs are in flight. AckReq is set on the
 * last packet of each message and on every TERNM_ACK_EVERY-th packet.
 *
 * Going back (sequence NAK, implied NAK on a READ response gap or an ACK beyond an
 * unfinished READ, retransmit timeout, end of an RNR wait) restarts sending at una_psn,
 * in the middle of a WQE if need be (a READ is re-requested for its remaining part).
 * Timeouts count against retry_cnt, RNR NAKs against rnr_retry (7: forever); both counters
 * are reloaded whenever an ACK makes progress. With TERN_QP_XPORT_ADAPTIVE_RTO a go-back-N
 * requester also goes back at a timeout measured from the round trip (ternm_rtt_*,
 * gbn_timeout), before the configured one, which alone still counts against retry_cnt.
 *
 * A WQE starts only when: the QP is RTS (SQD: only WQEs already started), no RNR wait, the
 * window has room, FENCE WQEs find no READ outstanding, READs find fewer than max_rd_atomic
 * outstanding. A malformed WQE or a bad lkey completes with an error once every WQE before
 * it has completed, and the QP goes to ERR; error CQEs are written even for unsignaled WQEs.
 *
 * Atomics are handled like one-packet READs (rd_inflight, FENCE, max_rd_atomic, answered
 * only by their ATOMIC_ACKNOWLEDGE, whose original value goes to the WQE's one SGE).
 *
 * A UC QP sends the same packets (UC opcodes, set by ternm_pkt_start) without AckReq, and
 * nothing answers them: a WQE completes as soon as its last packet went out (una_psn follows),
 * no timer runs, nothing is resent. READ and atomic WQEs are malformed on UC.
 *
 * A QP in selective repeat (rdma_sr.c) sends the MIDDLE and LAST packets of SENDs and WRITEs
 * with the IBOP_SR_* opcodes: a WRITE's with a RETH for the packet's own first byte, a
 * SEND's with a SEND placement header (the WQE's receive ordinal, sq_rord when it started,
 * and the packet's message offset), so the responder can place them after a gap.
 */
#include "rdma.h"

static inline uint32_t sq_mask(const struct ternm_qp *qp)
{
	return (1u << qp->log_sq_depth) - 1;
}

static uint64_t retx_ns(const struct ternm_qp *qp)
{
	return 4096ull << qp->timeout;
}

/* IB RNR timer encoding (min_rnr_timer / AETH timer field) in nanoseconds. */
static uint64_t rnr_ns(unsigned int code)
{
	static const uint32_t us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920,
		122880, 163840, 245760, 327680, 491520,
	};

	return (uint64_t)us[code & 31] * TERNM_NS_PER_US;
}

void ternm_req_reset(struct ternm_qp *qp)
{
	qp->req_idx = qp->req_max = 0;
	qp->req_pkt = 0;
	qp->req_psn = qp->next_psn = qp->una_psn = qp->sent_psn = 0;
	qp->pkts_since_ack = 0;
	qp->sq_rord = 0;
	qp->rd_inflight = 0;
	qp->rnr_wait = qp->gbn_wait = false;
	qp->retx_deadline = qp->rnr_deadline = TERNM_NO_DEADLINE;
	memset(&qp->rtt, 0, sizeof(qp->rtt));
	qp->rto_full_deadline = TERNM_NO_DEADLINE;
	qp->rto_una = 0;
	qp->rto_backoff = 0;
	qp->wc.valid = false;
	qp->rwc.valid = false;
}

/* ---- WQEs ---------------------------------------------------------------------------------- */

/*
 * ternm_wqe_read_sges() with the slot's first @pre_len bytes already read into @pre: SGEs
 * that lie inside them are not read again.
 */
static int wqe_sges(struct tern_model *m, struct ternm_qp *qp, struct ternm_wqe_cache *wc,
		    uint64_t off, uint32_t hl, uint32_t access, uint64_t *total, uint8_t *synd,
		    const uint8_t *pre, uint32_t pre_len)
{
	uint8_t buf[TERNM_MAX_SEND_SGE * sizeof(struct tern_sge)];
	uint32_t slot = 1u << qp->log_sq_stride;
	const uint8_t *s = buf;
	uint32_t n;
	unsigned int i;

	*total = 0;
	*synd = TERN_SYND_BAD_SGE_COUNT;
	if (wc->num_sge > TERNM_MAX_SEND_SGE || hl > slot ||
	    wc->num_sge * sizeof(struct tern_sge) > slot - hl)
		return TERN_CQE_LOC_QP_OP_ERR;
	n = wc->num_sge * (uint32_t)sizeof(struct tern_sge);
	*synd = TERN_SYND_DMA;
	if (hl <= pre_len && n <= pre_len - hl)
		s = pre + hl;
	else if (ternm_mem_read(m, &qp->sq_mem, off + hl, buf, n))
		return TERN_CQE_LOC_QP_OP_ERR;
	for (i = 0; i < wc->num_sge; i++) {
		const uint8_t *e = s + i * sizeof(struct tern_sge);
		struct ternm_sge *g = &wc->sge[i];
		int bad;

		g->addr = get_le64(CFLD(e, struct tern_sge, addr));
		g->len = get_le32(CFLD(e, struct tern_sge, length));
		g->key = get_le32(CFLD(e, struct tern_sge, lkey));
		*total += g->len;
		if (!g->len)
			continue;
		bad = ternm_mr_check(m, g->key, qp, access, g->addr, g->len);
		if (bad) {
			*synd = (uint8_t)bad;
			return TERN_CQE_LOC_PROT_ERR;
		}
	}
	*synd = 0;
	return 0;
}

/**
 * ternm_wqe_read_sges() - read and check the SGE list of a send WQE
 * @m: the model
 * @qp: the QP whose SQ holds the WQE (its PD checks the lkeys)
 * @wc: the WQE being loaded: num_sge in, sge[] out
 * @off: the WQE's slot in the SQ ring
 * @hl: bytes before the SGEs (header and segments)
 * @access: TERN_ACCESS_* each SGE's MR must grant
 * @total: out: the sum of the SGE lengths
 * @synd: out: the syndrome when the result is not 0
 *
 * Returns 0 or a CQE status.
 */
int ternm_wqe_read_sges(struct tern_model *m, struct ternm_qp *qp, struct ternm_wqe_cache *wc,
			uint64_t off, uint32_t hl, uint32_t access, uint64_t *total,
			uint8_t *synd)
{
	return wqe_sges(m, qp, wc, off, hl, access, total, synd, NULL, 0);
}

/* REG_MR, LOCAL_INV, BIND_MW: work on the device's memory keys, nothing goes on the wire. */
static bool is_local(uint8_t wqe_opcode)
{
	return wqe_opcode == TERN_WQE_REG_MR || wqe_opcode == TERN_WQE_LOCAL_INV ||
	       wqe_opcode == TERN_WQE_BIND_MW;
}

/*
 * Read the header of the WQE at @off (a slot of @slot bytes) with what follows it in the
 * slot's first line into @h (*@hlen bytes of it read), and take its fields into @wc. Returns
 * 0, or a CQE status (the syndrome: TERN_SYND_DMA).
 */
static int wqe_read_header(struct tern_model *m, struct ternm_qp *qp, uint64_t off,
			   uint32_t slot, uint8_t h[TERNM_WQE_LINE], uint32_t *hlen,
			   struct ternm_wqe_cache *wc)
{
	typedef struct tern_sq_wqe W;

	_Static_assert(TERNM_WQE_LINE >= sizeof(W), "a WQE line holds the header");
	_Static_assert(TERNM_WQE_LINE <= 1u << TERN_SQ_MIN_LOG_STRIDE, "a slot holds a WQE line");
	*hlen = slot < TERNM_WQE_LINE ? slot : (uint32_t)TERNM_WQE_LINE;
	if (ternm_mem_read(m, &qp->sq_mem, off, h, *hlen)) {
		/* a fault after the header: the header alone, the rest fails where it is read */
		*hlen = sizeof(W);
		if (ternm_mem_read(m, &qp->sq_mem, off, h, *hlen))
			return TERN_CQE_LOC_QP_OP_ERR;
	}
	wc->opcode = h[offsetof(W, opcode)];
	wc->flags = h[offsetof(W, flags)];
	wc->num_sge = h[offsetof(W, num_sge)];
	memcpy(wc->imm, CFLD(h, W, imm_data), 4);
	wc->rkey = get_le32(CFLD(h, W, rkey));
	wc->raddr = get_le64(CFLD(h, W, remote_addr));
	wc->wr_id = get_le64(CFLD(h, W, wr_id));
	wc->len = 0;
	return 0;
}

/*
 * The rest of a local WQE (@wc, at @off in a slot of @slot bytes): no data; LOCAL_INV is the
 * header alone, REG_MR and BIND_MW have a segment. Returns 0, or a CQE status with *@synd.
 */
static int wqe_parse_local(struct tern_model *m, struct ternm_qp *qp,
			   struct ternm_wqe_cache *wc, uint64_t off, uint32_t slot,
			   uint8_t *synd)
{
	typedef struct tern_sq_wqe W;

	*synd = TERN_SYND_BAD_SGE_COUNT;
	if (wc->num_sge || (wc->flags & TERN_WQE_F_INLINE))
		return TERN_CQE_LOC_QP_OP_ERR;
	if (wc->opcode != TERN_WQE_LOCAL_INV) {
		*synd = TERN_SYND_BAD_REG;
		if (sizeof(W) + sizeof(wc->reg) > slot)
			return TERN_CQE_LOC_QP_OP_ERR;
		*synd = TERN_SYND_DMA;
		if (ternm_mem_read(m, &qp->sq_mem, off + sizeof(W), wc->reg, sizeof(wc->reg)))
			return TERN_CQE_LOC_QP_OP_ERR;
	}
	return 0;
}

/*
 * The rest of an atomic WQE (@wc, at @off in a slot of @slot bytes): exactly one SGE of 8
 * bytes, after the atomic segment. Returns 0, or a CQE status with *@synd.
 */
static int wqe_parse_atomic(struct tern_model *m, struct ternm_qp *qp,
			    struct ternm_wqe_cache *wc, uint64_t off, uint32_t slot,
			    uint8_t *synd)
{
	typedef struct tern_sq_wqe W;
	typedef struct tern_atomic_seg A;
	uint8_t a[sizeof(A) + sizeof(struct tern_sge)];
	const uint8_t *e = a + sizeof(A);
	struct ternm_sge *g = &wc->sge[0];
	int bad;

	*synd = TERN_SYND_BAD_INLINE;
	if (wc->flags & TERN_WQE_F_INLINE)
		return TERN_CQE_LOC_QP_OP_ERR;
	*synd = TERN_SYND_BAD_SGE_COUNT;
	if (wc->num_sge != 1 || sizeof(W) + sizeof(a) > slot)
		return TERN_CQE_LOC_QP_OP_ERR;
	*synd = TERN_SYND_DMA;
	if (ternm_mem_read(m, &qp->sq_mem, off + sizeof(W), a, sizeof(a)))
		return TERN_CQE_LOC_QP_OP_ERR;
	wc->swap_add = get_le64(CFLD(a, A, swap_add));
	wc->compare = get_le64(CFLD(a, A, compare));
	g->addr = get_le64(CFLD(e, struct tern_sge, addr));
	g->len = get_le32(CFLD(e, struct tern_sge, length));
	g->key = get_le32(CFLD(e, struct tern_sge, lkey));
	*synd = TERN_SYND_MSG_TOO_LONG;
	if (g->len != 8)
		return TERN_CQE_LOC_LEN_ERR;
	bad = ternm_mr_check(m, g->key, qp, TERN_ACCESS_LOCAL_WRITE, g->addr, 8);
	if (bad) {
		*synd = (uint8_t)bad;
		return TERN_CQE_LOC_PROT_ERR;
	}
	wc->len = 8;
	return 0;
}

/*
 * The data of a SEND, WRITE or READ WQE (@wc, at @off in a slot of @slot bytes; @h: the
 * first @hlen bytes of the slot, read already): inline, or its SGEs. Returns 0, or a CQE
 * status with *@synd.
 */
static int wqe_parse_data(struct tern_model *m, struct ternm_qp *qp, struct ternm_wqe_cache *wc,
			  uint64_t off, uint32_t slot, const uint8_t *h, uint32_t hlen,
			  uint8_t *synd)
{
	typedef struct tern_sq_wqe W;
	uint64_t total = 0;
	int st;

	if (wc->flags & TERN_WQE_F_INLINE) {
		uint32_t il = get_le32(CFLD(h, W, inline_len));

		*synd = TERN_SYND_BAD_INLINE;
		if (wc->num_sge || wc->opcode == TERN_WQE_RDMA_READ || il > TERNM_MAX_INLINE ||
		    il > slot - sizeof(W))
			return TERN_CQE_LOC_QP_OP_ERR;
		*synd = TERN_SYND_DMA;
		if (ternm_mem_read(m, &qp->sq_mem, off + sizeof(W), wc->inl, il))
			return TERN_CQE_LOC_QP_OP_ERR;
		wc->len = il;
		return 0;
	}
	st = wqe_sges(m, qp, wc, off, sizeof(W),
		      wc->opcode == TERN_WQE_RDMA_READ ? TERN_ACCESS_LOCAL_WRITE : 0,
		      &total, synd, h, hlen);
	if (st)
		return st;
	*synd = TERN_SYND_MSG_TOO_LONG;
	if (total > TERNM_MAX_MSG)
		return TERN_CQE_LOC_LEN_ERR;
	wc->len = (uint32_t)total;
	return 0;
}

/*
 * Read and check the WQE in slot @idx into @wc. Returns 0, or a CQE status with the
 * syndrome in *synd.
 */
static int wqe_parse(struct tern_model *m, struct ternm_qp *qp, uint16_t idx,
		     struct ternm_wqe_cache *wc, uint8_t *synd)
{
	uint32_t slot = 1u << qp->log_sq_stride;
	uint64_t off = (uint64_t)(idx & sq_mask(qp)) << qp->log_sq_stride;
	/* the header and what follows it in the slot's first 64 bytes, in one read */
	uint8_t h[TERNM_WQE_LINE];
	uint32_t hlen;
	int st;

	wc->valid = false;
	*synd = TERN_SYND_DMA;
	st = wqe_read_header(m, qp, off, slot, h, &hlen, wc);
	if (st)
		return st;
	wc->idx = idx;
	*synd = TERN_SYND_BAD_OPCODE;
	if (wc->opcode > TERN_WQE_BIND_MW ||
	    (wc->opcode == TERN_WQE_SEND_INV && qp->type != TERN_QPT_RC))
		return TERN_CQE_LOC_QP_OP_ERR;
	if (is_local(wc->opcode))
		st = wqe_parse_local(m, qp, wc, off, slot, synd);
	else if ((wc->opcode == TERN_WQE_RDMA_READ || tern_wqe_op_atomic(wc->opcode)) &&
		 (qp->max_rd_atomic == 0 || qp->type == TERN_QPT_UC))
		return TERN_CQE_LOC_QP_OP_ERR;
	else if (tern_wqe_op_atomic(wc->opcode))
		st = wqe_parse_atomic(m, qp, wc, off, slot, synd);
	else
		st = wqe_parse_data(m, qp, wc, off, slot, h, hlen, synd);
	if (st)
		return st;
	*synd = 0;
	wc->valid = true;
	return 0;
}

/* Whether the WQE in slot @idx has started: its swq entry is what the requester goes by. */
static bool wqe_started(const struct ternm_qp *qp, uint16_t idx)
{
	return (uint16_t)(idx - qp->sq_ci) < (uint16_t)(qp->req_max - qp->sq_ci);
}

/*
 * Read and check the WQE in slot @idx into @wc (wqe_parse). A WQE that has started is read
 * again whenever the cache holds another one: when it is resent (going back, selective
 * repeat) and when its READ or atomic responses arrive. The SQ ring is the guest's memory
 * and may have been rewritten since: what the requester recorded at the start (packets,
 * length, where responses go) must still describe it, else the packet count of one WQE
 * would meet the length and data of another. A changed WQE fails (WQE_CHANGED), as any
 * malformed WQE does. What the check leaves out (addresses, keys, immediate, the SGEs'
 * split of the same length) is checked again like a new WQE and only changes the bytes
 * sent, which the guest may choose anyway.
 */
static int wqe_load(struct tern_model *m, struct ternm_qp *qp, uint16_t idx,
		    struct ternm_wqe_cache *wc, uint8_t *synd)
{
	const struct ternm_swqe *s = &qp->swq[idx & sq_mask(qp)];
	int st = wqe_parse(m, qp, idx, wc, synd);

	if (st || !wqe_started(qp, idx))
		return st;
	if (wc->opcode != s->opcode || wc->len != s->len || wc->num_sge != s->num_sge ||
	    ((wc->flags ^ s->flags) & TERN_WQE_F_INLINE)) {
		/* no log line: the guest could repeat this at will; the CQE says it */
		wc->valid = false;
		*synd = TERN_SYND_WQE_CHANGED;
		return TERN_CQE_LOC_QP_OP_ERR;
	}
	return 0;
}

/*
 * Copy message bytes [off, off + n) between @buf and the WQE's SGEs (or inline data). The
 * range is checked against the WQE as loaded, whatever the caller computed it from.
 */
static int wqe_data(struct tern_model *m, const struct ternm_wqe_cache *wc, uint32_t off,
		    uint8_t *buf, uint32_t n, bool write)
{
	unsigned int i;

	if (off > wc->len || n > wc->len - off)
		return -1;
	if (wc->flags & TERN_WQE_F_INLINE) {
		if (wc->len > sizeof(wc->inl))
			return -1;
		memcpy(buf, wc->inl + off, n);
		return 0;
	}
	for (i = 0; i < wc->num_sge && n; i++) {
		const struct ternm_sge *g = &wc->sge[i];
		uint32_t c;

		if (off >= g->len) {
			off -= g->len;
			continue;
		}
		c = g->len - off < n ? g->len - off : n;
		if (ternm_mr_copy(m, g->key, g->addr + off, buf, c, write, false))
			return -1;
		buf += c;
		n -= c;
		off = 0;
	}
	return n ? -1 : 0;
}

static uint32_t npkts(const struct ternm_qp *qp, uint32_t len)
{
	return len ? (uint32_t)(((uint64_t)len + qp->mtu - 1) / qp->mtu) : 1;
}

/* ---- completions ----------------------------------------------------------------------------- */

void ternm_req_check_drained(struct tern_model *m, struct ternm_qp *qp)
{
	if (qp->state == TERN_QPS_SQD && qp->sqd_notify && qp->sq_ci == qp->req_max) {
		qp->sqd_notify = false;
		ternm_qp_event(m, qp, TERN_QP_EV_SQ_DRAINED);
	}
}

/*
 * Complete the WQE at sq_ci with @status. A started WQE is described by its swq entry; one
 * that failed before starting by @wc (or, failing that, by its slot's header).
 */
static void req_complete(struct tern_model *m, struct ternm_qp *qp, uint8_t status, uint8_t synd,
			 const struct ternm_wqe_cache *wc)
{
	uint16_t idx = qp->sq_ci;
	struct ternm_swqe *s = &qp->swq[idx & sq_mask(qp)];
	bool started = idx != qp->req_max;
	struct ternm_cqe_info ci;
	uint64_t wr_id = 0;
	uint32_t len = 0;
	uint8_t opcode = 0, flags = 0;

	if (started) {
		wr_id = s->wr_id;
		opcode = s->opcode;
		flags = s->flags;
		len = s->len;
	} else if (wc && wc->idx == idx) {
		wr_id = wc->wr_id;
		opcode = wc->opcode;
		flags = wc->flags;
	} else {
		uint8_t h[sizeof(struct tern_sq_wqe)];

		if (!ternm_mem_read(m, &qp->sq_mem, (uint64_t)(idx & sq_mask(qp)) << qp->log_sq_stride,
				    h, sizeof(h))) {
			wr_id = get_le64(CFLD(h, struct tern_sq_wqe, wr_id));
			opcode = h[offsetof(struct tern_sq_wqe, opcode)];
			flags = h[offsetof(struct tern_sq_wqe, flags)];
		}
	}
	if (status != TERN_CQE_OK || (flags & TERN_WQE_F_SIGNALED) ||
	    (qp->flags & TERN_QP_F_SQ_SIG_ALL)) {
		memset(&ci, 0, sizeof(ci));
		ci.wr_id = wr_id;
		ci.byte_len = opcode == TERN_WQE_RDMA_READ || tern_wqe_op_atomic(opcode) ? len : 0;
		ci.wqe_idx = (uint16_t)(idx & sq_mask(qp));
		ci.opcode = opcode;
		ci.status = status;
		ci.vendor_err = status != TERN_CQE_OK ? synd : 0;
		ternm_cq_write(m, qp, qp->scqn, &ci);
	}
	if (started && s->read && qp->rd_inflight)
		qp->rd_inflight--;
	if (!started)
		qp->req_max++;
	if (qp->req_idx == idx) {
		/* it was being (re)sent: carry on with the next one, at its own PSN */
		qp->req_idx++;
		qp->req_pkt = 0;
		qp->req_psn = qp->req_idx != qp->req_max ?
			      qp->swq[qp->req_idx & sq_mask(qp)].first_psn : qp->next_psn;
	}
	/* indices are 16 bits: never let a cache match a later WQE of the same index */
	if (qp->wc.idx == idx)
		qp->wc.valid = false;
	if (qp->rwc.idx == idx)
		qp->rwc.valid = false;
	qp->sq_ci++;
}

/* Complete the WQE at sq_ci with an error and move the QP to ERR. */
static void req_fail(struct tern_model *m, struct ternm_qp *qp, uint8_t status, uint8_t synd,
		     const struct ternm_wqe_cache *wc)
{
	req_complete(m, qp, status, synd, wc);
	ternm_qp_to_err(m, qp);
}

/*
 * Complete the local WQEs (REG_MR, LOCAL_INV) at sq_ci: they were executed when started
 * and only waited for the WQEs before them to complete.
 */
static void req_complete_locals(struct tern_model *m, struct ternm_qp *qp)
{
	while (qp->sq_ci != qp->req_max && qp->state != TERN_QPS_ERR &&
	       qp->swq[qp->sq_ci & sq_mask(qp)].local)
		req_complete(m, qp, TERN_CQE_OK, 0, NULL);
}

/* The SQ ring cannot be read: no CQE can describe the WQE; the QP goes to ERR (FATAL). */
static void req_ring_fault(struct tern_model *m, struct ternm_qp *qp)
{
	ternm_log(m, TERN_MODEL_LOG_WARN, "QP %u: SQ ring unreachable", qp->qpn);
	ternm_qp_to_err(m, qp);
	ternm_qp_event(m, qp, TERN_QP_EV_FATAL);
}

static bool outstanding(const struct ternm_qp *qp)
{
	return qp->sq_ci != qp->req_max;
}

static void retx_arm(struct tern_model *m, struct ternm_qp *qp)
{
	ternm_timely_acked(m, qp);	/* a segment acknowledged: TIMELY's sample */
	qp->retx_deadline = outstanding(qp) && qp->timeout && !qp->rnr_wait ?
			    ternm_now(m) + ternm_recovery(qp)->arm_ns(m, qp, retx_ns(qp)) : TERNM_NO_DEADLINE;
	ternm_qp_timer_sync(m, qp);
}

/* Restart sending at @psn (which lies in a started WQE, or is next_psn). */
static void req_goback(struct tern_model *m, struct ternm_qp *qp, uint32_t psn)
{
	uint16_t idx;

	for (idx = qp->sq_ci; idx != qp->req_max; idx++) {
		const struct ternm_swqe *s = &qp->swq[idx & sq_mask(qp)];
		int32_t d = psn_diff(psn, s->first_psn);

		if (d >= 0 && (uint32_t)d < s->npkts) {
			qp->req_idx = idx;
			qp->req_pkt = (uint32_t)d;
			qp->req_psn = psn;
			qp->pkts_since_ack = 0;
			ternm_qp_work(m, qp);
			return;
		}
	}
	qp->req_idx = qp->req_max;
	qp->req_pkt = 0;
	qp->req_psn = qp->next_psn;
	ternm_qp_work(m, qp);
}

/*
 * READ response @p at position @pos of READ @s (WQE @wc): whether it has the opcode, length and
 * AETH its place asks for; @off and @len are where its payload goes in the READ.
 */
static bool read_resp_fits(const struct ternm_qp *qp, const struct ternm_swqe *s,
			   const struct ternm_wqe_cache *wc, const struct ternm_pkt *p,
			   uint32_t pos, uint32_t *off, uint32_t *len)
{
	uint8_t exp;

	if (s->npkts == 1)
		exp = IBOP_READ_RESP_ONLY;
	else if (pos == 0)
		exp = IBOP_READ_RESP_FIRST;
	else if (pos == s->npkts - 1)
		exp = IBOP_READ_RESP_LAST;
	else
		exp = IBOP_READ_RESP_MIDDLE;
	*off = pos * qp->mtu;
	*len = pos == s->npkts - 1 ? wc->len - *off : qp->mtu;
	return p->opcode == exp && p->paylen == *len &&
	       !(exp != IBOP_READ_RESP_MIDDLE && (p->syndrome & 0x60));
}

/*
 * Every PSN up to and including @psn is acknowledged: complete the WQEs that ends. A READ
 * not fully answered by then lost responses: go back to it (implied NAK).
 */
static void req_ack_upto(struct tern_model *m, struct ternm_qp *qp, uint32_t psn)
{
	bool progress = false;

	if (psn_diff(psn, qp->una_psn) < 0)
		return;			/* old */
	if (psn_diff(psn, qp->next_psn) >= 0)
		return;			/* never sent: ignore */
	while (outstanding(qp) && qp->state != TERN_QPS_ERR) {
		const struct ternm_swqe *s = &qp->swq[qp->sq_ci & sq_mask(qp)];
		uint32_t last = psn_add(s->first_psn, s->npkts - 1);

		if (s->read) {
			if (ternm_recovery(qp)->rd_acked_ahead(m, qp, s))
				continue;	/* its responses came ahead of the ACK */
			if (psn_diff(psn, qp->una_psn) >= 0 && psn_diff(qp->una_psn, s->first_psn) >= 0) {
				/* acknowledged beyond a READ whose responses have not all come */
				TERNM_QSTAT(m, qp, implied_nak_seq_err, 1);
				ternm_recovery(qp)->implied_nak(m, qp, psn);
			}
			break;
		}
		if (psn_diff(last, psn) > 0)
			break;
		qp->una_psn = psn_add(last, 1);
		req_complete(m, qp, TERN_CQE_OK, 0, &qp->wc);
		progress = true;
	}
	if (qp->state == TERN_QPS_ERR)
		return;
	if (psn_diff(psn, qp->una_psn) >= 0 &&
	    (!outstanding(qp) || !qp->swq[qp->sq_ci & sq_mask(qp)].read)) {
		qp->una_psn = psn_add(psn, 1);
		progress = true;
	}
	/* never resend what is acknowledged */
	if (psn_diff(qp->req_psn, qp->una_psn) < 0 && outstanding(qp))
		req_goback(m, qp, qp->una_psn);
	if (progress) {
		qp->retry_left = qp->retry_cnt;
		qp->rnr_left = qp->rnr_retry;
		retx_arm(m, qp);
		ternm_req_check_drained(m, qp);
		ternm_qp_work(m, qp);
	}
}

/*
 * The atomic at sq_ci (loaded in @wc, PSN @psn) is answered with @orig: the original value
 * goes to its SGE, little-endian like the memory it came from, and it completes. Returns
 * false if it failed (the QP is in ERR).
 */
static bool req_atomic_complete(struct tern_model *m, struct ternm_qp *qp, uint32_t psn,
				uint64_t orig, struct ternm_wqe_cache *wc)
{
	uint8_t v[8];

	put_le64(v, orig);
	if (wqe_data(m, wc, 0, v, sizeof(v), true)) {
		req_fail(m, qp, TERN_CQE_LOC_PROT_ERR, TERN_SYND_DMA, wc);
		return false;
	}
	qp->una_psn = psn_add(psn, 1);
	qp->retry_left = qp->retry_cnt;
	qp->rnr_left = qp->rnr_retry;
	req_complete(m, qp, TERN_CQE_OK, 0, wc);
	req_complete_locals(m, qp);
	ternm_req_check_drained(m, qp);
	ternm_qp_work(m, qp);	/* a FENCE or max_rd_atomic may have been waiting */
	return true;
}

/* The response to the atomic at sq_ci (or a response of the wrong kind for it, @s). */
static void req_atomic_resp(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p,
			    const struct ternm_swqe *s, struct ternm_wqe_cache *wc)
{
	if (!s->atomic || p->opcode != IBOP_ATOMIC_ACK || (p->syndrome & 0x60)) {
		req_fail(m, qp, TERN_CQE_BAD_RESP_ERR, TERN_SYND_BAD_RESP, wc);
		return;
	}
	if (!req_atomic_complete(m, qp, p->psn, p->orig, wc))
		return;
	retx_arm(m, qp);
	ternm_recovery(qp)->atomic_done(m, qp);
}

/*
 * Load the WQE at sq_ci into qp->rwc, for its responses, unless it is there. Returns false
 * if it cannot be (the QP failed).
 */
static bool req_load_head(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_wqe_cache *wc = &qp->rwc;
	uint8_t synd;
	int st;

	if (wc->valid && wc->idx == qp->sq_ci)
		return true;
	st = wqe_load(m, qp, qp->sq_ci, wc, &synd);
	if (st && synd == TERN_SYND_DMA) {
		req_ring_fault(m, qp);
		return false;
	}
	if (st) {
		req_fail(m, qp, (uint8_t)st, synd, NULL);
		return false;
	}
	return true;
}

static void req_read_resp(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	struct ternm_rdma *r = m->rdma;
	struct ternm_wqe_cache *wc = &qp->rwc;
	struct ternm_swqe *s;
	uint32_t pos, off, want;
	int32_t d = psn_diff(p->psn, qp->una_psn);

	/*
	 * A response out of sequence is not progress, but it shows that the responder is still
	 * working through what was asked before: after a lost response it first sends the rest
	 * of every READ already queued (megabytes from a slow responder such as Soft-RoCE)
	 * before the re-request's turn comes. The retransmit timer restarts so that this
	 * draining does not use up retry_cnt (Soft-RoCE's requester does the same).
	 */
	if (d < 0) {
		r->stats.duplicate_response++;	/* already placed: ignored */
		retx_arm(m, qp);
		return;
	}
	if (d > 0) {
		if (psn_diff(p->psn, qp->next_psn) >= 0)
			return;			/* never asked for */
		if (ternm_recovery(qp)->rd_resp_ahead(m, qp, p))
			return;
		if (!qp->gbn_wait) {
			TERNM_QSTAT(m, qp, implied_nak_seq_err, 1);
			qp->gbn_wait = true;
			ternm_recovery(qp)->implied_nak(m, qp, psn_add(qp->una_psn, TERNM_PSN_MASK));
		}
		retx_arm(m, qp);
		return;
	}
	qp->gbn_wait = false;
	if (!outstanding(qp))
		return;
	s = &qp->swq[qp->sq_ci & sq_mask(qp)];
	if (!s->read || psn_diff(p->psn, s->first_psn) < 0) {
		req_fail(m, qp, TERN_CQE_BAD_RESP_ERR, TERN_SYND_BAD_RESP, NULL);
		return;
	}
	pos = (uint32_t)psn_diff(p->psn, s->first_psn);
	if (!req_load_head(m, qp))
		return;
	if (s->atomic || p->opcode == IBOP_ATOMIC_ACK) {
		req_atomic_resp(m, qp, p, s, wc);
		return;
	}
	if (!read_resp_fits(qp, s, wc, p, pos, &off, &want)) {
		ternm_log(m, TERN_MODEL_LOG_INFO,
			  "QP %u: READ response at PSN 0x%06x (opcode 0x%02x, %u bytes) does not fit position %u of the READ at 0x%06x (%u packets%s): BAD_RESP",
			  qp->qpn, p->psn, p->opcode, p->paylen, pos, s->first_psn, s->npkts,
			  ternm_recovery(qp)->log_tag);
		req_fail(m, qp, TERN_CQE_BAD_RESP_ERR, TERN_SYND_BAD_RESP, wc);
		return;
	}
	if (wqe_data(m, wc, off, (uint8_t *)(uintptr_t)p->payload, want, true)) {
		req_fail(m, qp, TERN_CQE_LOC_PROT_ERR, TERN_SYND_DMA, wc);
		return;
	}
	qp->una_psn = psn_add(p->psn, 1);
	qp->retry_left = qp->retry_cnt;
	qp->rnr_left = qp->rnr_retry;
	if (pos == s->npkts - 1) {
		req_complete(m, qp, TERN_CQE_OK, 0, wc);
		req_complete_locals(m, qp);
		ternm_req_check_drained(m, qp);
		ternm_qp_work(m, qp);	/* a FENCE or max_rd_atomic may have been waiting */
	}
	retx_arm(m, qp);
	ternm_recovery(qp)->rd_resp_done(m, qp, pos == s->npkts - 1);
}

void ternm_req_rx(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	struct ternm_rdma *r = m->rdma;
	uint8_t syn = p->syndrome;
	uint8_t st = 0, vsynd = 0;

	if (qp->state == TERN_QPS_ERR)
		return;
	if (p->opcode != IBOP_ACK) {
		/* a READ response with a NAK-free AETH also acknowledges what precedes it */
		req_read_resp(m, qp, p);
		return;
	}
	if (psn_diff(p->psn, qp->next_psn) >= 0)
		return;			/* for nothing we sent */
	switch (syn & 0x60) {
	case 0x00:			/* ACK */
		if (psn_diff(p->psn, qp->una_psn) < 0)
			r->stats.duplicate_response++;	/* acknowledged before */
		req_ack_upto(m, qp, p->psn);
		return;
	case 0x20:			/* RNR NAK */
		TERNM_QSTAT(m, qp, rnr_nak_retry_err, 1);
		if (psn_diff(p->psn, qp->una_psn) < 0)
			return;
		req_ack_upto(m, qp, psn_add(p->psn, TERNM_PSN_MASK));	/* everything before */
		if (qp->state == TERN_QPS_ERR || !outstanding(qp))
			return;
		if (qp->rnr_retry != 7) {
			if (qp->rnr_left == 0) {
				TERNM_QSTAT(m, qp, req_rnr_retries_exceeded, 1);
				req_fail(m, qp, TERN_CQE_RNR_RETRY_EXC_ERR, TERN_SYND_RNR_RETRY,
					 &qp->wc);
				return;
			}
			qp->rnr_left--;
		}
		qp->rnr_wait = true;
		qp->rnr_deadline = ternm_now(m) + rnr_ns(syn & 0x1f);
		qp->retx_deadline = TERNM_NO_DEADLINE;
		ternm_qp_timer_sync(m, qp);
		req_goback(m, qp, p->psn);
		return;
	case 0x60:			/* NAK */
		break;
	default:
		return;
	}
	if (psn_diff(p->psn, qp->una_psn) < 0)
		return;
	switch (syn) {
	case AETH_NAK_SEQ:
		TERNM_QSTAT(m, qp, packet_seq_err, 1);
		req_ack_upto(m, qp, psn_add(p->psn, TERNM_PSN_MASK));
		if (qp->state != TERN_QPS_ERR && outstanding(qp))
			req_goback(m, qp, qp->una_psn);
		return;
	case AETH_NAK_INV_REQ:
		TERNM_QSTAT(m, qp, req_remote_invalid_request, 1);
		st = TERN_CQE_REM_INV_REQ_ERR;
		vsynd = TERN_SYND_NAK_INV_REQ;
		break;
	case AETH_NAK_ACCESS:
		TERNM_QSTAT(m, qp, req_remote_access_errors, 1);
		st = TERN_CQE_REM_ACCESS_ERR;
		vsynd = TERN_SYND_NAK_ACCESS;
		break;
	case AETH_NAK_OP:
		st = TERN_CQE_REM_OP_ERR;
		vsynd = TERN_SYND_NAK_OP;
		break;
	case AETH_NAK_SACK:
		ternm_recovery(qp)->sack(m, qp, p);
		return;
	default:
		return;
	}
	req_ack_upto(m, qp, psn_add(p->psn, TERNM_PSN_MASK));
	if (qp->state != TERN_QPS_ERR && outstanding(qp))
		req_fail(m, qp, st, vsynd, &qp->wc);
}

void ternm_req_timer(struct tern_model *m, struct ternm_qp *qp, uint64_t now)
{
	if (qp->rnr_wait && qp->rnr_deadline <= now) {
		qp->rnr_wait = false;
		qp->rnr_deadline = TERNM_NO_DEADLINE;
		req_goback(m, qp, qp->una_psn);
		retx_arm(m, qp);
	}
	if (qp->retx_deadline <= now) {
		qp->retx_deadline = TERNM_NO_DEADLINE;
		if (ternm_recovery(qp)->timeout(m, qp, retx_ns(qp)))
			return;		/* the tail-loss probe's time, not the timeout yet */
		if (qp->state == TERN_QPS_RTS || qp->state == TERN_QPS_SQD) {
			if (outstanding(qp)) {
				TERNM_QSTAT(m, qp, local_ack_timeout_err, 1);
				if (qp->retry_left == 0) {
					TERNM_QSTAT(m, qp, req_transport_retries_exceeded, 1);
					req_fail(m, qp, TERN_CQE_RETRY_EXC_ERR, TERN_SYND_RETRY,
						 &qp->wc);
					ternm_qp_timer_sync(m, qp);
					return;
				}
				qp->retry_left--;
				qp->gbn_wait = false;
				req_goback(m, qp, qp->una_psn);
			}
			retx_arm(m, qp);
		}
	}
	ternm_qp_timer_sync(m, qp);
}

/* ---- sending ------------------------------------------------------------------------------ */

/*
 * A request for PSNs [psn, psn + n) went out as @len bytes (0: not sent): one starting below
 * sent_psn is a retransmission (go-back-N after a NAK, timeout or implied NAK, RNR retry).
 */
static void req_sent(struct tern_model *m, struct ternm_qp *qp, uint32_t psn, uint32_t n,
		     size_t len)
{
	ternm_cc_sent(m, qp, len);
	if (len) {
		ternm_recovery(qp)->sent(m, qp, psn, n);	/* a probe counts from the last one */
		ternm_timely_sent(m, qp, psn, n, len);
	}
	if (len && psn_diff(psn, qp->sent_psn) < 0) {
		TERNM_QSTAT(m, qp, retrans_pkts, 1);
		TERNM_QSTAT(m, qp, retrans_bytes, len);
	}
	if (psn_diff(psn_add(psn, n), qp->sent_psn) > 0)
		qp->sent_psn = psn_add(psn, n);
}

bool ternm_req_has_work(const struct ternm_qp *qp)
{
	if (qp->state != TERN_QPS_RTS && qp->state != TERN_QPS_SQD)
		return false;
	if (qp->rnr_wait || qp->req_idx == qp->sq_pi)
		return false;
	if (qp->state == TERN_QPS_SQD && qp->req_idx == qp->req_max)
		return false;
	return true;
}

/*
 * Start the local WQE (REG_MR, LOCAL_INV, BIND_MW) at req_idx, loaded in @wc: execute it and take it
 * off the requester's way; it completes in order (at once if nothing is outstanding before
 * it). Returns true if the QP must stop sending for now: the WQE waits (LOCAL_INV and FENCE
 * for what comes before), or it failed.
 */
static bool req_local(struct tern_model *m, struct ternm_qp *qp, struct ternm_wqe_cache *wc,
		      struct ternm_swqe *s)
{
	uint16_t idx = qp->req_idx;
	uint8_t synd = 0;
	int st;

	if ((wc->opcode == TERN_WQE_LOCAL_INV && qp->sq_ci != idx) ||
	    ((wc->flags & TERN_WQE_F_FENCE) && qp->rd_inflight))
		return true;
	if (wc->opcode == TERN_WQE_REG_MR) {
		st = ternm_mr_fast_reg(m, qp, wc->rkey, wc->reg, &synd);
	} else if (wc->opcode == TERN_WQE_BIND_MW) {
		st = ternm_mw_bind(m, qp, wc->rkey, wc->reg, &synd);
	} else {
		synd = (uint8_t)ternm_mr_invalidate(m, qp->pdn, wc->rkey);
		st = synd ? TERN_CQE_LOC_PROT_ERR : 0;
	}
	if (st) {
		if (qp->sq_ci == idx)	/* else reported in order, when it is retried */
			req_fail(m, qp, (uint8_t)st, synd, wc);
		return true;
	}
	s->first_psn = qp->next_psn;
	s->npkts = 0;
	s->opcode = wc->opcode;
	s->read = s->atomic = false;
	s->local = true;
	s->num_sge = wc->num_sge;
	s->wr_id = wc->wr_id;
	s->len = 0;
	s->flags = wc->flags;
	qp->req_max++;
	qp->req_idx++;
	qp->req_pkt = 0;
	qp->req_psn = qp->next_psn;
	req_complete_locals(m, qp);
	ternm_req_check_drained(m, qp);
	return false;
}

/* The selective-repeat opcode of SEND/WRITE MIDDLE or LAST opcode @op (rdma.rst). */
static uint8_t sr_opcode(uint8_t op)
{
	switch (op) {
	case IBOP_WRITE_MIDDLE:
		return IBOP_SR_WRITE_MIDDLE;
	case IBOP_WRITE_LAST:
		return IBOP_SR_WRITE_LAST;
	case IBOP_WRITE_LAST_IMM:
		return IBOP_SR_WRITE_LAST_IMM;
	case IBOP_SEND_MIDDLE:
		return IBOP_SR_SEND_MIDDLE;
	case IBOP_SEND_LAST:
		return IBOP_SR_SEND_LAST;
	case IBOP_SEND_LAST_IMM:
		return IBOP_SR_SEND_LAST_IMM;
	default:
		return IBOP_SR_SEND_LAST_INV;
	}
}

/* What one step of ternm_req_send() did. */
enum req_step {
	REQ_STOP,		/* nothing more for now (window, pacing, a wait, a failure) */
	REQ_NEXT,		/* a WQE passed without a packet: go on */
	REQ_SENT,		/* a packet went out */
};

/* Whether the packet at req_psn has to wait for acknowledgements (the in-flight cap). */
static bool req_window_full(const struct ternm_qp *qp)
{
	const struct ternm_recovery_ops *rec = ternm_recovery(qp);

	/* (selective repeat: a hole far into a long READ was counted when first asked) */
	return rec->cap_full(qp, qp->req_psn) && !rec->rd_lim(qp);
}

/* Move the send cursor past the WQE at req_idx, to the next one's first PSN. */
static void req_next_wqe(struct ternm_qp *qp)
{
	qp->req_idx++;
	qp->req_pkt = 0;
	qp->req_psn = qp->req_idx != qp->req_max ?
		      qp->swq[qp->req_idx & sq_mask(qp)].first_psn : qp->next_psn;
}

/*
 * Load the WQE at req_idx into qp->wc unless it is there. Returns false if it cannot be
 * read: the QP failed, or the failure waits to be reported in order.
 */
static bool req_fetch(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_wqe_cache *wc = &qp->wc;
	uint16_t idx = qp->req_idx;
	uint8_t synd;
	int st;

	if (wc->valid && wc->idx == idx)
		return true;
	st = wqe_load(m, qp, idx, wc, &synd);
	if (st && synd == TERN_SYND_DMA) {
		req_ring_fault(m, qp);
		return false;
	}
	if (st) {
		/* report it in order, once the earlier ones are done */
		if (qp->sq_ci == idx)
			req_fail(m, qp, (uint8_t)st, synd, NULL);
		return false;
	}
	return true;
}

/*
 * The WQE at req_idx (@wc, @s) goes out for the first time: give it its PSNs and count it
 * outstanding. Returns false if it has to wait (FENCE, max_rd_atomic) or failed.
 */
static bool req_start(struct tern_model *m, struct ternm_qp *qp, const struct ternm_wqe_cache *wc,
		      struct ternm_swqe *s)
{
	bool rd = wc->opcode == TERN_WQE_RDMA_READ || tern_wqe_op_atomic(wc->opcode);

	if ((wc->flags & TERN_WQE_F_FENCE) && qp->rd_inflight)
		return false;
	/* PSN arithmetic needs a message to stay well inside half the PSN space */
	if (npkts(qp, wc->len) > TERNM_MAX_MSG_PKTS) {
		if (qp->sq_ci == qp->req_idx)
			req_fail(m, qp, TERN_CQE_LOC_LEN_ERR, TERN_SYND_MSG_TOO_LONG, wc);
		return false;
	}
	if (rd && qp->rd_inflight >= qp->max_rd_atomic)
		return false;
	s->first_psn = qp->next_psn;
	s->npkts = npkts(qp, wc->len);
	s->opcode = wc->opcode;
	s->read = rd;
	s->atomic = tern_wqe_op_atomic(wc->opcode);
	s->local = false;
	s->num_sge = wc->num_sge;
	s->wr_id = wc->wr_id;
	s->len = wc->len;
	s->flags = wc->flags;
	s->rord = qp->sq_rord;
	if (wc->opcode == TERN_WQE_SEND || wc->opcode == TERN_WQE_SEND_IMM ||
	    wc->opcode == TERN_WQE_SEND_INV || wc->opcode == TERN_WQE_RDMA_WRITE_IMM)
		qp->sq_rord = (qp->sq_rord + 1) & TERN_SR_SPH_RORD_MASK;
	qp->next_psn = psn_add(qp->next_psn, s->npkts);
	qp->req_max++;
	qp->req_pkt = 0;
	qp->req_psn = s->first_psn;
	if (rd)
		qp->rd_inflight++;
	return true;
}

/* The READ request for the rest of READ @wc (@s) from req_pkt: one packet. */
static void req_send_read(struct tern_model *m, struct ternm_qp *qp,
			  const struct ternm_wqe_cache *wc, const struct ternm_swqe *s)
{
	uint32_t psn = qp->req_psn, left = s->npkts - qp->req_pkt;
	uint32_t lim = ternm_recovery(qp)->rd_lim(qp);
	uint32_t off = qp->req_pkt * qp->mtu, n;
	uint8_t *x;

	x = ternm_pkt_start(m, qp, IBOP_READ_REQ, false, true, qp->req_psn);
	put_be64(x, wc->raddr + off);
	put_be32(x + 8, wc->rkey);
	n = wc->len - off;
	if (lim && lim < left) {
		/* selective repeat: a hole in the READ's responses, no more */
		left = lim;
		n = lim * qp->mtu;
	}
	put_be32(x + 12, n);
	qp->req_idx++;
	qp->req_pkt = 0;
	qp->req_psn = psn_add(s->first_psn, s->npkts);
	qp->pkts_since_ack = 0;
	req_sent(m, qp, psn, left, ternm_pkt_send(m, qp, x + RETH_LEN));
}

/* The request of atomic WQE @wc: one packet. */
static void req_send_atomic(struct tern_model *m, struct ternm_qp *qp,
			    const struct ternm_wqe_cache *wc)
{
	uint32_t psn = qp->req_psn;
	uint8_t *x;

	x = ternm_pkt_start(m, qp, wc->opcode == TERN_WQE_ATOMIC_CMP_SWP ?
			    IBOP_CMP_SWAP : IBOP_FETCH_ADD, false, true, psn);
	x = ternm_atomic_put_eth(x, wc);
	qp->req_idx++;
	qp->req_pkt = 0;
	qp->req_psn = psn_add(psn, 1);
	qp->pkts_since_ack = 0;
	req_sent(m, qp, psn, 1, ternm_pkt_send(m, qp, x));
}

/* The kind of SEND or WRITE a WQE is: what picks its packets' opcodes and headers. */
struct req_data_kind {
	bool is_send, inv, imm;
};

static struct req_data_kind req_data_kind(const struct ternm_wqe_cache *wc)
{
	struct req_data_kind k;

	k.is_send = wc->opcode <= TERN_WQE_SEND_IMM || wc->opcode == TERN_WQE_SEND_INV;
	k.inv = wc->opcode == TERN_WQE_SEND_INV;
	k.imm = wc->opcode == TERN_WQE_SEND_IMM || wc->opcode == TERN_WQE_RDMA_WRITE_IMM;
	return k;
}

/*
 * The opcode of a SEND/WRITE packet (the first and/or last of its message or not), and in
 * @place the placement header it carries (PKT_PLACE_*, selective repeat only).
 */
static uint8_t req_data_opcode(const struct ternm_qp *qp, struct req_data_kind k, bool firstp,
			       bool last, uint8_t *place)
{
	uint8_t op;

	if (firstp && last)
		op = k.inv ? IBOP_SEND_ONLY_INV :
		     k.is_send ? (k.imm ? IBOP_SEND_ONLY_IMM : IBOP_SEND_ONLY)
			       : (k.imm ? IBOP_WRITE_ONLY_IMM : IBOP_WRITE_ONLY);
	else if (firstp)
		op = k.is_send ? IBOP_SEND_FIRST : IBOP_WRITE_FIRST;
	else if (last)
		op = k.inv ? IBOP_SEND_LAST_INV :
		     k.is_send ? (k.imm ? IBOP_SEND_LAST_IMM : IBOP_SEND_LAST)
			       : (k.imm ? IBOP_WRITE_LAST_IMM : IBOP_WRITE_LAST);
	else
		op = k.is_send ? IBOP_SEND_MIDDLE : IBOP_WRITE_MIDDLE;
	/* selective repeat: what its placement after a gap needs (RETH or SPH) */
	*place = ternm_recovery(qp)->place && !firstp ?
		 (k.is_send ? PKT_PLACE_SPH : PKT_PLACE_RETH) : 0;
	return *place ? sr_opcode(op) : op;
}

/* Whether the data packet at req_psn asks for an ACK (@last: the message's last). */
static bool req_data_ackreq(struct tern_model *m, struct ternm_qp *qp, bool last)
{
	bool ackreq;

	qp->pkts_since_ack++;
	ackreq = last || qp->pkts_since_ack >= TERNM_ACK_EVERY ||
		 ternm_hpcc_qp(m, qp) ||		/* an echo per packet */
		 ternm_timely_ackreq(m, qp) ||		/* a TIMELY segment's last */
		 ternm_recovery(qp)->cap_full(qp, psn_add(qp->req_psn, 1));
	if (ackreq)
		qp->pkts_since_ack = 0;
	return ackreq && qp->type != TERN_QPT_UC;
}

/* Write the headers after the BTH of a SEND/WRITE packet at @off of its message. */
static uint8_t *req_data_headers(uint8_t *x, const struct ternm_wqe_cache *wc,
				 const struct ternm_swqe *s, struct req_data_kind k,
				 uint8_t place, bool firstp, bool last, uint32_t off)
{
	if (!k.is_send && firstp) {
		put_be64(x, wc->raddr);
		put_be32(x + 8, wc->rkey);
		put_be32(x + 12, wc->len);
		x += RETH_LEN;
	} else if (place == PKT_PLACE_RETH) {
		put_be64(x, wc->raddr + off);	/* this packet's first byte */
		put_be32(x + 8, wc->rkey);
		put_be32(x + 12, wc->len - off);
		x += RETH_LEN;
	} else if (place == PKT_PLACE_SPH) {
		put_be32(x + offsetof(struct tern_sr_sph, rord), s->rord);
		put_be32(x + offsetof(struct tern_sr_sph, off), off);
		x += SPH_LEN;
	}
	if (k.imm && last) {
		memcpy(x, wc->imm, 4);
		x += IMM_LEN;
	}
	if (k.inv && last) {
		put_be32(x, wc->rkey);	/* IETH */
		x += IETH_LEN;
	}
	return x;
}

/*
 * The data packet of SEND/WRITE @wc (@s) at req_pkt went out as @len bytes: move the
 * cursor on. A UC WQE is done once its last packet is on the wire.
 */
static void req_data_sent(struct tern_model *m, struct ternm_qp *qp, struct ternm_wqe_cache *wc,
			  bool last, uint8_t *end)
{
	qp->req_psn = psn_add(qp->req_psn, 1);
	if (last) {
		qp->req_idx++;
		qp->req_pkt = 0;
	} else {
		qp->req_pkt++;
	}
	req_sent(m, qp, psn_add(qp->req_psn, TERNM_PSN_MASK), 1, ternm_pkt_send(m, qp, end));
	if (qp->type == TERN_QPT_UC) {
		/*
		 * Unacknowledged: nothing stays outstanding (no window, however long the
		 * message), and a WQE is done once its last packet is on the wire (or lost
		 * with the link).
		 */
		qp->una_psn = qp->req_psn;
		if (last) {
			req_complete(m, qp, TERN_CQE_OK, 0, wc);
			ternm_req_check_drained(m, qp);
		}
	}
}

/*
 * The next packet of SEND/WRITE @wc (@s), at req_pkt. Returns false if its payload cannot
 * be read (the QP failed, or the failure waits to be reported in order).
 */
static bool req_send_data(struct tern_model *m, struct ternm_qp *qp, struct ternm_wqe_cache *wc,
			  const struct ternm_swqe *s)
{
	struct req_data_kind k = req_data_kind(wc);
	bool firstp = qp->req_pkt == 0;
	bool last = qp->req_pkt == s->npkts - 1;
	uint32_t off = qp->req_pkt * qp->mtu;
	uint32_t n = last ? wc->len - off : qp->mtu;
	uint8_t op, place, *x;
	bool ackreq;

	op = req_data_opcode(qp, k, firstp, last, &place);
	ackreq = req_data_ackreq(m, qp, last);
	x = ternm_pkt_start(m, qp, op, last && (wc->flags & TERN_WQE_F_SOLICITED), ackreq,
			    qp->req_psn);
	x = req_data_headers(x, wc, s, k, place, firstp, last, off);
	/* never more than a packet, whatever the WQE says now */
	if (n > qp->mtu || wqe_data(m, wc, off, x, n, false)) {
		if (qp->sq_ci == qp->req_idx)
			req_fail(m, qp, TERN_CQE_LOC_PROT_ERR, TERN_SYND_DMA, wc);
		return false;
	}
	req_data_sent(m, qp, wc, last, x + n);
	return true;
}

/* The next step at req_idx: pass a WQE over, start one, or send one packet of it. */
static enum req_step req_send_one(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_wqe_cache *wc = &qp->wc;
	struct ternm_swqe *s = &qp->swq[qp->req_idx & sq_mask(qp)];
	bool first_time = qp->req_idx == qp->req_max;

	if (req_window_full(qp))
		return REQ_STOP;
	if (!first_time && s->local) {
		/* executed when first started: going back passes over it */
		req_next_wqe(qp);
		return REQ_NEXT;
	}
	if (!ternm_tx_gate(m, qp, qp->path))
		return REQ_STOP;	/* paced (timer list) or the MAC is busy: retried later */
	if (!req_fetch(m, qp))
		return REQ_STOP;
	/* a READ request is not windowed: its data comes back, windowed by the responder */
	if (wc->opcode != TERN_WQE_RDMA_READ && !ternm_hpcc_gate(m, qp)) {
		qp->tx_block = TX_PACE;	/* HPCC window full: an ACK wakes it */
		return REQ_STOP;
	}
	if (first_time && is_local(wc->opcode))
		return req_local(m, qp, wc, s) ? REQ_STOP : REQ_NEXT;
	if (first_time && !req_start(m, qp, wc, s))
		return REQ_STOP;
	if (wc->opcode == TERN_WQE_RDMA_READ)
		req_send_read(m, qp, wc, s);
	else if (tern_wqe_op_atomic(wc->opcode))
		req_send_atomic(m, qp, wc);
	else if (!req_send_data(m, qp, wc, s))
		return REQ_STOP;
	return REQ_SENT;
}

/* A packet went out from the WQE at @idx: start the retransmit timer, resume after it. */
static void req_after_packet(struct tern_model *m, struct ternm_qp *qp, uint16_t idx)
{
	if (qp->retx_deadline == TERNM_NO_DEADLINE && qp->timeout) {
		qp->retx_deadline = ternm_now(m) + ternm_recovery(qp)->arm_ns(m, qp, retx_ns(qp));
		ternm_qp_timer_sync(m, qp);
	}
	if (qp->req_idx != qp->req_max && qp->req_idx != idx) {
		/* resuming an already started WQE after going back */
		const struct ternm_swqe *ns = &qp->swq[qp->req_idx & sq_mask(qp)];

		qp->req_psn = ns->first_psn;
	}
}

unsigned int ternm_req_send(struct tern_model *m, struct ternm_qp *qp, unsigned int budget)
{
	unsigned int sent = ternm_recovery(qp)->resend(m, qp, budget);

	while (sent < budget && ternm_req_has_work(qp)) {
		uint16_t idx = qp->req_idx;
		enum req_step step = req_send_one(m, qp);

		if (step == REQ_STOP)
			break;
		if (step == REQ_NEXT)
			continue;
		sent++;
		req_after_packet(m, qp, idx);
	}
	return sent;
}

/* ---- the round trip (struct ternm_rtt), for go-back-N and selective repeat -------------- */

/**
 * ternm_rtt_sample() - take one round-trip sample into the smoothed estimate
 * @r: the sampler
 * @ns: the sample
 *
 * As TCP's (RFC 6298): srtt += (sample - srtt) / 8, rttvar += (|srtt - sample| - rttvar) / 4,
 * the first sample giving srtt = sample, rttvar = sample / 2. Ends the sample under way.
 */
void ternm_rtt_sample(struct ternm_rtt *r, uint64_t ns)
{
	uint64_t d;

	r->on = false;
	if (!r->srtt_ns) {
		r->srtt_ns = ns ? ns : 1;
		r->rttvar_ns = ns / 2;
		return;
	}
	d = r->srtt_ns > ns ? r->srtt_ns - ns : ns - r->srtt_ns;
	r->rttvar_ns = r->rttvar_ns - r->rttvar_ns / 4 + d / 4;
	r->srtt_ns = r->srtt_ns - r->srtt_ns / 8 + ns / 8;
	if (!r->srtt_ns)
		r->srtt_ns = 1;
}

/**
 * ternm_rtt_sent() - a request for PSNs [@psn, @psn + @n) went out (before sent_psn moves)
 * @qp: the QP (requester)
 * @psn: its first PSN
 * @n: its PSNs (a READ request: its responses)
 * @now: when
 *
 * New PSNs start a sample when none is under way (its last PSN is timed); a resend of the
 * timed PSN or of one before it voids the sample (Karn: the answer may be the resend's).
 */
void ternm_rtt_sent(struct ternm_qp *qp, uint32_t psn, uint32_t n, uint64_t now)
{
	struct ternm_rtt *r = &qp->rtt;

	if (psn_diff(psn, qp->sent_psn) < 0) {
		if (r->on && psn_diff(psn, r->psn) <= 0)
			r->on = false;
		return;
	}
	if (!r->on && n) {
		r->on = true;
		r->psn = psn_add(psn, n - 1);
		r->t0 = now;
	}
}

/**
 * ternm_rtt_acked() - una_psn may have passed the timed PSN: that ends its sample
 * @qp: the QP (requester)
 * @now: the time
 */
void ternm_rtt_acked(struct ternm_qp *qp, uint64_t now)
{
	struct ternm_rtt *r = &qp->rtt;

	if (r->on && psn_diff(qp->una_psn, r->psn) > 0)
		ternm_rtt_sample(r, now - r->t0);
}

/* ---- go-back-N: the loss recovery of an RC QP without selective repeat ------------------- */

/* Nothing is resent ahead of the cursor: req_goback() moved it back. */
static unsigned int gbn_resend(struct tern_model *m, struct ternm_qp *qp, unsigned int budget)
{
	(void)m;
	(void)qp;
	(void)budget;
	return 0;
}

/* At most max_unacked PSNs in flight. */
static bool gbn_cap_full(const struct ternm_qp *qp, uint32_t psn)
{
	return psn_diff(psn, qp->una_psn) >= qp->max_unacked;
}

/* A READ request always asks for the READ's whole rest. */
static uint32_t gbn_rd_lim(const struct ternm_qp *qp)
{
	(void)qp;
	return 0;
}

/* A request went out: a new one may start a round-trip sample, a resend voids one. */
static void gbn_sent(struct tern_model *m, struct ternm_qp *qp, uint32_t psn, uint32_t n)
{
	ternm_rtt_sent(qp, psn, n, ternm_now(m));
}

/* Whether go-back-N's adaptive timer runs (selective repeat has its probes instead). */
static bool gbn_adaptive(const struct ternm_qp *qp)
{
	return (qp->xport & TERN_QP_XPORT_ADAPTIVE_RTO) && !qp->sr;
}

/*
 * The timeout a go-back-N requester arms now for a configured one of @full_ns: with the
 * adaptive timer and a round trip measured, max(srtt + 4 rttvar, TERNM_MIN_RTO_NS) doubled
 * rto_backoff times, at most @full_ns; else @full_ns.
 */
static uint64_t gbn_rto_ns(const struct ternm_qp *qp, uint64_t full_ns)
{
	uint64_t t;
	unsigned int k;

	if (!gbn_adaptive(qp) || !qp->rtt.srtt_ns)
		return full_ns;
	t = qp->rtt.srtt_ns + 4 * qp->rtt.rttvar_ns;
	if (t < TERNM_MIN_RTO_NS)
		t = TERNM_MIN_RTO_NS;
	for (k = 0; k < qp->rto_backoff && t < full_ns; k++)
		t *= 2;
	return t < full_ns ? t : full_ns;
}

/**
 * ternm_rto_ns() - the retransmit timeout the requester arms now (QUERY_QP's rto_ns)
 * @qp: the QP
 *
 * Return: ns; 0 when no timer runs (timeout 0).
 */
uint64_t ternm_rto_ns(const struct ternm_qp *qp)
{
	return qp->timeout ? gbn_rto_ns(qp, retx_ns(qp)) : 0;
}

/*
 * The retransmit timer is being armed (progress, the first packet, a timeout): the
 * configured timeout @rto_ns starts over, and with the adaptive timer the measured one
 * runs first; its doublings start over when una_psn moved.
 */
static uint64_t gbn_arm_ns(struct tern_model *m, struct ternm_qp *qp, uint64_t rto_ns)
{
	uint64_t now = ternm_now(m);

	ternm_rtt_acked(qp, now);
	/* kept with the bit off too: an SQD->SQD may turn it on while the timer runs */
	qp->rto_full_deadline = now + rto_ns;
	if (qp->una_psn != qp->rto_una) {
		qp->rto_una = qp->una_psn;
		qp->rto_backoff = 0;
	}
	return gbn_rto_ns(qp, rto_ns);
}

/*
 * The retransmit timer expired. Without the adaptive timer, or at the end of the configured
 * timeout, false: ternm_req_timer counts it against retry_cnt and goes back N. Before that
 * end, the measured timeout expired with nothing acknowledged: go back N from una_psn now
 * (adaptive_retrans), double the measured timeout and arm it again, at most up to the
 * configured timeout's end; retry_cnt is not used.
 */
static bool gbn_timeout(struct tern_model *m, struct ternm_qp *qp, uint64_t rto_ns)
{
	uint64_t now = ternm_now(m), next;

	if (!gbn_adaptive(qp) || qp->rto_full_deadline == TERNM_NO_DEADLINE ||
	    now >= qp->rto_full_deadline || !outstanding(qp) ||
	    (qp->state != TERN_QPS_RTS && qp->state != TERN_QPS_SQD))
		return false;
	m->rdma->stats.adaptive_retrans++;
	if (qp->rto_backoff < 63)
		qp->rto_backoff++;
	qp->gbn_wait = false;
	req_goback(m, qp, qp->una_psn);
	next = now + gbn_rto_ns(qp, rto_ns);
	qp->retx_deadline = next < qp->rto_full_deadline ? next : qp->rto_full_deadline;
	ternm_qp_timer_sync(m, qp);
	return true;
}

/* A READ's or atomic's response lost: send again from una_psn, the READ's whole rest. */
static void gbn_implied_nak(struct tern_model *m, struct ternm_qp *qp, uint32_t acked)
{
	(void)acked;
	req_goback(m, qp, qp->una_psn);
}

/* READ responses are placed in order only. */
static bool gbn_rd_acked_ahead(struct tern_model *m, struct ternm_qp *qp,
			       const struct ternm_swqe *s)
{
	(void)m;
	(void)qp;
	(void)s;
	return false;
}

/* A READ response ahead of una_psn is a gap. */
static bool gbn_rd_resp_ahead(struct tern_model *m, struct ternm_qp *qp,
			      const struct ternm_pkt *p)
{
	(void)m;
	(void)qp;
	(void)p;
	return false;
}

static void gbn_rd_resp_done(struct tern_model *m, struct ternm_qp *qp, bool done)
{
	(void)m;
	(void)qp;
	(void)done;
}

static void gbn_atomic_done(struct tern_model *m, struct ternm_qp *qp)
{
	(void)m;
	(void)qp;
}

/* A SACK is not for a go-back-N QP. */
static void gbn_sack(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	(void)qp;
	(void)p;
	m->rdma->stats.rx_roce_discards++;
}

const struct ternm_recovery_ops ternm_gbn_recovery = {
	.log_tag = "",
	.resend = gbn_resend,
	.cap_full = gbn_cap_full,
	.rd_lim = gbn_rd_lim,
	.place = false,
	.sent = gbn_sent,
	.arm_ns = gbn_arm_ns,
	.timeout = gbn_timeout,
	.implied_nak = gbn_implied_nak,
	.rd_acked_ahead = gbn_rd_acked_ahead,
	.rd_resp_ahead = gbn_rd_resp_ahead,
	.rd_resp_done = gbn_rd_resp_done,
	.atomic_done = gbn_atomic_done,
	.sack = gbn_sack,
};

/*
 * ---- for selective repeat (rdma_sr.c) ------------------------------------------------------
 *
 * Only ternm_sr_recovery's operations call these: a READ's responses placed out of order go
 * straight to its scatter list, and complete it, with the requester's own WQE handling.
 */

void ternm_req_ack_upto(struct tern_model *m, struct ternm_qp *qp, uint32_t psn)
{
	req_ack_upto(m, qp, psn);
}

/*
 * una_psn passes the READ responses placed out of order that now follow it, completing (in
 * SQ order) every READ they finish, and every atomic whose response came ahead and was kept
 * (ternm_sr_atomic_keep). Returns true if una_psn moved.
 */
bool ternm_req_sr_advance(struct tern_model *m, struct ternm_qp *qp)
{
	bool progress = false;

	while (outstanding(qp) && qp->state != TERN_QPS_ERR) {
		const struct ternm_swqe *s = &qp->swq[qp->sq_ci & sq_mask(qp)];
		uint64_t orig;

		if (s->atomic) {
			if (qp->una_psn != s->first_psn ||
			    !ternm_sr_atomic_kept(qp, s->first_psn, &orig) ||
			    !req_load_head(m, qp) ||
			    !req_atomic_complete(m, qp, s->first_psn, orig, &qp->rwc))
				break;
			progress = true;
			ternm_sr_req_read_done(m, qp);	/* an ACK beyond it, held back */
			continue;
		}
		if (!s->read || psn_diff(qp->una_psn, s->first_psn) < 0 ||
		    !ternm_sr_rd_placed(qp, qp->una_psn))
			break;
		qp->una_psn = psn_add(qp->una_psn, 1);
		progress = true;
		if (qp->una_psn != psn_add(s->first_psn, s->npkts))
			continue;
		req_complete(m, qp, TERN_CQE_OK, 0, NULL);
		req_complete_locals(m, qp);
		ternm_req_check_drained(m, qp);
		ternm_qp_work(m, qp);	/* a FENCE or max_rd_atomic may have been waiting */
		ternm_sr_req_read_done(m, qp);	/* an ACK beyond it, held back */
	}
	if (progress && qp->state != TERN_QPS_ERR) {
		qp->retry_left = qp->retry_cnt;
		qp->rnr_left = qp->rnr_retry;
		retx_arm(m, qp);
	}
	return progress;
}

/*
 * The response of atomic @s came ahead of una_psn: a READ or atomic before it is still
 * missing responses. The responder ran everything before the atomic and answered it in
 * order, so its original value is kept (ternm_sr_atomic_keep) and the atomic completes in
 * SQ order without being asked again, and what precedes it is acknowledged: a READ or
 * atomic at una_psn is re-requested (implied NAK). Returns false when it is not kept (a
 * response of the wrong kind, or no slot): the caller treats it as a gap.
 */
static bool req_sr_atomic_ahead(struct tern_model *m, struct ternm_qp *qp,
				const struct ternm_swqe *s, const struct ternm_pkt *p)
{
	struct ternm_rdma *r = m->rdma;
	int k;

	if (p->opcode != IBOP_ATOMIC_ACK || (p->syndrome & 0x60) || p->psn != s->first_psn)
		return false;
	k = ternm_sr_atomic_keep(qp, p->psn, p->orig);
	if (k < 0)
		return false;
	retx_arm(m, qp);	/* the responder is answering: see req_read_resp */
	if (k > 0) {
		r->stats.duplicate_response++;
		return true;
	}
	r->stats.out_of_order_accepted++;
	req_ack_upto(m, qp, psn_add(p->psn, TERNM_PSN_MASK));
	return true;
}

/*
 * A READ response ahead of una_psn, inside a READ already asked for and less than
 * TERNM_SR_RD_WIN PSNs ahead, is checked as the in-order path checks it and goes straight to
 * its place in the READ's scatter list; the holes below it are re-requested. Further ahead
 * it is dropped, and re-requested once una_psn is close enough. One that does not fit (wrong
 * opcode or length, its WQE or memory unreadable) is dropped and counted in
 * rx_roce_discards. Returns false when the response is not for such a READ: the caller
 * treats it as a gap, as go-back-N does.
 */
bool ternm_req_sr_read_ahead(struct tern_model *m, struct ternm_qp *qp,
			     const struct ternm_pkt *p)
{
	struct ternm_rdma *r = m->rdma;
	struct ternm_wqe_cache *wc = &qp->rwc;
	const struct ternm_swqe *s = NULL;
	uint32_t pos, off, want;
	uint8_t synd;
	uint16_t idx;

	for (idx = qp->sq_ci; idx != qp->req_max; idx++) {
		const struct ternm_swqe *w = &qp->swq[idx & sq_mask(qp)];
		int32_t d = psn_diff(p->psn, w->first_psn);

		if (!w->local && d >= 0 && (uint32_t)d < w->npkts) {
			s = w;
			break;
		}
	}
	if (s && s->atomic)
		return req_sr_atomic_ahead(m, qp, s, p);
	if (!s || !s->read)
		return false;
	retx_arm(m, qp);	/* the responder is answering: see req_read_resp */
	if (psn_diff(p->psn, qp->una_psn) >= TERNM_SR_RD_WIN) {
		ternm_sr_rd_mark(qp, p->psn);	/* dropped: asked again when the window is there */
		return true;
	}
	if (ternm_sr_rd_placed(qp, p->psn)) {
		r->stats.duplicate_response++;	/* already placed: ignored */
		return true;
	}
	if ((!wc->valid || wc->idx != idx) && wqe_load(m, qp, idx, wc, &synd)) {
		r->stats.rx_roce_discards++;	/* it fails in order, when it is at the head */
		return true;
	}
	pos = (uint32_t)psn_diff(p->psn, s->first_psn);
	if (!read_resp_fits(qp, s, wc, p, pos, &off, &want) ||
	    wc->opcode != TERN_WQE_RDMA_READ || off > wc->len ||
	    wqe_data(m, wc, off, (uint8_t *)(uintptr_t)p->payload, want, true)) {
		r->stats.rx_roce_discards++;
		return true;
	}
	r->stats.out_of_order_accepted++;
	ternm_sr_rd_mark(qp, p->psn);
	ternm_sr_rd_gap(m, qp);
	return true;
}

/* ---- flushing (QP in ERR) ----------------------------------------------------------------- */

unsigned int ternm_qp_flush(struct tern_model *m, struct ternm_qp *qp, unsigned int budget)
{
	unsigned int done = 0;

	while (done < budget && qp->sq_ci != qp->sq_pi && qp->state == TERN_QPS_ERR) {
		uint8_t h[sizeof(struct tern_sq_wqe)];
		struct ternm_cqe_info ci;
		uint16_t idx = qp->sq_ci;

		memset(&ci, 0, sizeof(ci));
		qp->sq_ci++;
		done++;
		/* an unreadable slot has no wr_id to report: no CQE */
		if (ternm_mem_read(m, &qp->sq_mem, (uint64_t)(idx & sq_mask(qp)) << qp->log_sq_stride,
				   h, sizeof(h)))
			continue;
		ci.wr_id = get_le64(CFLD(h, struct tern_sq_wqe, wr_id));
		ci.opcode = h[offsetof(struct tern_sq_wqe, opcode)];
		/* a flushed REG_MR or LOCAL_INV leaves its MR free, whether it ran or not */
		if (is_local(ci.opcode))
			ternm_mr_flush_key(m, qp->pdn, get_le32(CFLD(h, struct tern_sq_wqe, rkey)));
		ci.wqe_idx = (uint16_t)(idx & sq_mask(qp));
		ci.status = TERN_CQE_WR_FLUSH_ERR;
		ci.vendor_err = TERN_SYND_FLUSH;
		ternm_cq_write(m, qp, qp->scqn, &ci);
	}
	qp->req_idx = qp->req_max = qp->sq_ci;
	qp->rd_inflight = 0;
	qp->wc.valid = false;
	qp->rwc.valid = false;
	if ((qp->flags & TERN_QP_F_SRQ) && qp->state == TERN_QPS_ERR)
		done += ternm_srq_qp_flush(m, qp);	/* at most one CQE, then LAST_WQE_REACHED */
	/* WQEs posted through the record only: flush them too (the QP is in ERR already) */
	if ((qp->flags & TERN_QP_F_RQ_DB_REC) && qp->state == TERN_QPS_ERR &&
	    qp->rq_ci == qp->rq_pi)
		(void)ternm_rq_db_rec(m, qp, true);
	while (done < budget && qp->rq_ci != qp->rq_pi && qp->state == TERN_QPS_ERR) {
		uint8_t h[sizeof(struct tern_rq_wqe)];
		struct ternm_cqe_info ci;
		uint16_t idx = qp->rq_ci;
		uint32_t mask = (1u << qp->log_rq_depth) - 1;

		memset(&ci, 0, sizeof(ci));
		qp->rq_ci++;
		qp->rqe_valid = false;
		done++;
		if (ternm_mem_read(m, &qp->rq_mem, (uint64_t)(idx & mask) << qp->log_rq_stride, h,
				   sizeof(h)))
			continue;
		ci.wr_id = get_le64(CFLD(h, struct tern_rq_wqe, wr_id));
		ci.opcode = TERN_CQE_RECV;
		ci.wqe_idx = (uint16_t)(idx & mask);
		ci.status = TERN_CQE_WR_FLUSH_ERR;
		ci.vendor_err = TERN_SYND_FLUSH;
		ternm_cq_write(m, qp, qp->rcqn, &ci);
	}
	return done;
}
