/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: selective repeat for RC (TERN_QP_XPORT_SR; Documentation/hw/rdma.rst,
 * "Selective repeat"). Only QPs that MODIFY_QP switched to it get here (qp->sr); every other
 * QP runs the standard go-back-N of rdma_req.c and rdma_resp.c untouched. The requester
 * reaches selective repeat only through ternm_sr_recovery (the end of this file): rdma_req.c
 * calls the loss-recovery operations of struct ternm_recovery_ops (rdma.h) at fixed points,
 * and go-back-N's (ternm_gbn_recovery, rdma_req.c) only go back to una_psn. The responder
 * hands a request to ternm_sr_resp_rx() before its in-order path (ternm_resp_rx), and
 * re-serves a re-requested READ hole alone (resp_sr_hole); rdma_wire.c takes the placement
 * opcodes only for a QP in the mode.
 *
 * Responder: a request less than the QP's window (TERNM_SR_WIN_CAPS times its in-flight
 * cap, at most TERNM_SR_MAX_WIN) PSNs ahead of the expected one is kept in the QP's reorder
 * window (one slot per PSN) instead of being NAKed: a SEND/WRITE MIDDLE or LAST with its
 * placement header (the IBOP_SR_* opcodes) is placed at once (ternm_resp_place; a SEND on
 * an SRQ QP first takes the SRQ WQEs up to its receive ordinal, ternm_srq_reserve) and its
 * slot keeps the headers and a LAST's final byte; anything
 * else keeps its payload too, in a buffer allocated when first needed. A SACK (AETH NAK code
 * AETH_NAK_SACK, then a SACKETH bitmap) tells the requester which PSNs after the expected
 * one are held. When the expected PSN arrives, it and the held PSNs
 * that follow it run through the responder's ordinary in-order path (rdma_resp.c), so
 * placement order, receive WQEs, CQEs, MSNs, READ and atomic execution (exactly once, from
 * the same responder resources) are what go-back-N gives. A duplicate while PSNs are held
 * is answered with a SACK as well.
 *
 * Requester: a SACK acknowledges everything before its PSN and lists what the responder
 * holds; the holes below the highest held PSN are resent once each, again only when later
 * SACKs show that resend lost too (rs_mark, sr_resend_pending) (rtx_next..rtx_end,
 * skipping what is held), before new packets, by positioning the send cursor on each hole
 * and sending one packet (ternm_req_send with a budget of one), then putting the cursor
 * back. READ responses are placed out of order (a bitmap of TERNM_SR_RD_WIN PSNs from
 * una_psn; the payload goes straight to the READ's scatter list, rdma_req.c), and each hole
 * below the highest placed is re-asked by a READ request of its own, which the responder
 * serves alone (rdma_resp.c, resp_sr_hole). A tail-loss probe resends
 * the last packet sent when nothing acknowledged progress for the probe time; the full
 * retransmit timeout stays behind it and still goes back N (the responder drops the
 * duplicates). At most max_unacked PSNs are in flight (the BDP cap; what a SACK lists as
 * held is no longer in flight), inside the responder's window. Holes count as lost
 * only TERNM_SR_DUPTHRESH PSNs behind the highest arrival (else they may be reordered), and
 * the probe waits twice the measured round trip (sr_tlp_ns).
 */
#include <stdlib.h>

#include "rdma.h"

struct ternm_sr_slot {
	bool used;
	struct ternm_pkt p;	/* bth and payload pointers are not kept */
};

struct ternm_sr {
	/* responder */
	struct ternm_sr_slot *slot;	/* win slots, PSN % win; at the first gap */
	uint8_t *buf;		/* win payloads of slot_bytes (the path MTU): at the first
				 * request held with a payload that was not placed */
	size_t buf_bytes;	/* buf, counted in m->rdma->sr_buf_bytes */
	size_t slot_alloc;	/* slot, counted in m->rdma->sr_slot_bytes */
	uint32_t win, slot_bytes;
	unsigned int held;
	uint32_t held_hi;	/* with held: no PSN held lies after it (the SACK stops there) */
	bool replay;		/* in ternm_resp_rx from here: the in-order path */
	bool sack_queued;	/* a RESP_SACK waits in the output FIFO */
	/* requester */
	bool rtx_busy;		/* in ternm_req_send from ternm_sr_req_retx */
	bool tlp_armed;		/* retx_deadline is the probe's, the RTO's rest follows */
	bool probing;		/* the pending resend is a probe (counted as such) */
	bool ack_hi_valid;	/* ack_hi: an ACK beyond a READ whose responses were lost */
	bool rd_rtx_valid;	/* rd_rtx_psn: the READ re-requested from there */
	uint32_t ack_hi;
	uint32_t rd_rtx_psn;
	uint32_t rtx_next, rtx_end;	/* holes in [rtx_next, rtx_end) to resend */
	uint32_t retx_done;	/* holes below it were resent since the last probe */
	bool no_thresh;		/* a probe went out: every hole is lost, no reorder wait */
	uint64_t last_tx_ns;	/* when the last request packet went out */
	unsigned int probes;	/* probes since the timer was last armed by progress */
	/*
	 * Round-trip time (sr_rtt_*), one sample at a time (struct ternm_rtt_probe): it ends
	 * when una_psn passes its PSN or a SACK lists it. srtt_ns 0: no sample yet.
	 */
	struct ternm_rtt_probe rtt;
	uint64_t srtt_ns, rttvar_ns;
	uint32_t sack_base;	/* the last SACK: bit i of sack_map is PSN sack_base + 1 + i */
	uint64_t sack_map[TERNM_SR_MAX_WIN / 64];
	bool sack_hi_valid;
	uint32_t sack_hi;	/* one past the highest PSN the last SACK lists as held */
	/*
	 * Holes resent for a SACK (not READs), slot PSN % TERNM_SR_MAX_WIN: rs_psn the PSN,
	 * rs_mark sent_psn when the resend went out (the first PSN sent new after it) with
	 * SR_RS_VALID. The resend is lost too once a SACK lists a PSN TERNM_SR_DUPTHRESH - 1
	 * or more past its mark (sr_resend_pending()). Cleared by a probe or a timeout.
	 */
	uint32_t rs_psn[TERNM_SR_MAX_WIN];
	uint32_t rs_mark[TERNM_SR_MAX_WIN];
	/*
	 * READ responses placed out of order: bit PSN % TERNM_SR_RD_WIN of rd_map, for PSNs in
	 * [una_psn, una_psn + TERNM_SR_RD_WIN) only; sr_rd_sync() drops the bits una_psn has
	 * passed since rd_base. rd_hi is one past the highest PSN placed or dropped beyond the
	 * window (holes lie below it), rd_done one past the last hole re-requested since the
	 * last timeout, rd_lim the packets the READ request being resent asks for (0:
	 * the READ's rest).
	 */
	uint64_t rd_map[TERNM_SR_RD_WIN / 64];
	uint32_t rd_base, rd_hi, rd_done;
	uint32_t rd_lim;
	bool rd_redo;		/* after a probe: re-ask the holes in the cap from una_psn */
};

#define SR_RS_VALID	(1u << 31)	/* rs_mark holds a mark */

/* ---- configuration (MODIFY_QP) ----------------------------------------------------------- */

/* Check a MODIFY_QP xport value (TERN_QP_XPORT_*) for @qp: 0 or -1. */
int ternm_sr_check(const struct ternm_qp *qp, uint32_t xport)
{
	uint32_t cap = (xport & TERN_QP_XPORT_LOG_CAP_MASK) >> TERN_QP_XPORT_LOG_CAP_SHIFT;

	if (!xport)
		return 0;
	if (xport & ~TERN_QP_XPORT_MASK || qp->type != TERN_QPT_RC)
		return -1;
	if (!(xport & TERN_QP_XPORT_SR) && cap)
		return -1;
	if (cap && (cap < TERN_QP_XPORT_MIN_LOG_CAP || cap > TERN_QP_XPORT_MAX_LOG_CAP))
		return -1;
	return 0;
}

/* Free the reorder buffer, if any, and give its bytes back to the device's budget. */
static void sr_buf_free(struct tern_model *m, struct ternm_sr *sr)
{
	m->rdma->sr_buf_bytes -= sr->buf_bytes;
	m->rdma->sr_slot_bytes -= sr->slot_alloc;
	ternm_host_mem_release(m, sr->buf_bytes + sr->slot_alloc);
	free(sr->buf);
	free(sr->slot);
	sr->buf = NULL;
	sr->slot = NULL;
	sr->buf_bytes = 0;
	sr->slot_alloc = 0;
	sr->held = 0;
}

/* Apply a checked xport value. Returns 0, or -1 when out of memory (nothing changed). */
int ternm_sr_config(struct tern_model *m, struct ternm_qp *qp, uint32_t xport)
{
	uint32_t cap = (xport & TERN_QP_XPORT_LOG_CAP_MASK) >> TERN_QP_XPORT_LOG_CAP_SHIFT;

	if (!(xport & TERN_QP_XPORT_SR)) {
		ternm_sr_free(m, qp);
		qp->xport = 0;
		qp->max_unacked = TERNM_MAX_UNACKED;
		return 0;
	}
	if (!qp->sr) {
		if (!ternm_host_mem_charge(m, sizeof(*qp->sr)))
			return -1;
		qp->sr = calloc(1, sizeof(*qp->sr));
		if (!qp->sr) {
			ternm_host_mem_release(m, sizeof(*qp->sr));
			return -1;
		}
	} else {
		/* SQD->SQD or INIT->RTR again: nothing held survives a new PSN start */
		sr_buf_free(m, qp->sr);
		memset(qp->sr, 0, sizeof(*qp->sr));
	}
	qp->xport = (uint8_t)xport;	/* TERN_QP_XPORT_MASK is the low byte */
	qp->max_unacked = (uint16_t)(1u << (cap ? cap : TERN_QP_XPORT_DEF_LOG_CAP));
	/*
	 * The responder keeps what its own cap would send, and more: a hole stops neither
	 * end while the PSNs after it arrive (ternm_sr_cap_full()).
	 */
	qp->sr->win = (uint32_t)qp->max_unacked * TERNM_SR_WIN_CAPS;
	if (qp->sr->win > TERNM_SR_MAX_WIN)
		qp->sr->win = TERNM_SR_MAX_WIN;
	qp->sr->retx_done = qp->una_psn;
	qp->sr->rd_base = qp->sr->rd_hi = qp->sr->rd_done = qp->una_psn;
	return 0;
}

/**
 * ternm_sr_sq_start() - the send PSN was set (MODIFY_QP sq_psn, RTR->RTS or SQD->SQD)
 * @qp: the QP, selective repeat or not
 *
 * The requester's selective-repeat PSNs start from una_psn: ternm_sr_config() ran at
 * INIT->RTR, before the send PSN was known. A PSN left from then could lie "ahead" of every
 * PSN sent (PSNs compare modulo 2^24): the READ state would take responses as seen that
 * never came, and re-ask part of a READ the responder never got, which it runs as a new,
 * shorter READ (BAD_RESP_ERR at the requester).
 */
void ternm_sr_sq_start(struct ternm_qp *qp)
{
	struct ternm_sr *sr = qp->sr;

	if (!sr)
		return;
	sr->rtx_next = sr->rtx_end = sr->retx_done = qp->una_psn;
	sr->rd_base = sr->rd_hi = sr->rd_done = qp->una_psn;
	memset(sr->rd_map, 0, sizeof(sr->rd_map));
	memset(sr->sack_map, 0, sizeof(sr->sack_map));
	memset(sr->rs_mark, 0, sizeof(sr->rs_mark));
	sr->sack_base = qp->una_psn;
	sr->ack_hi_valid = sr->rd_rtx_valid = sr->sack_hi_valid = false;
	sr->rtt.on = false;
}

void ternm_sr_free(struct tern_model *m, struct ternm_qp *qp)
{
	if (!qp->sr)
		return;
	sr_buf_free(m, qp->sr);
	free(qp->sr);
	qp->sr = NULL;
	ternm_host_mem_release(m, sizeof(struct ternm_sr));
}

/* ---- responder --------------------------------------------------------------------------- */

/* The responder's reorder window in PSNs (0 without selective repeat). */
uint32_t ternm_sr_win(const struct ternm_qp *qp)
{
	return qp->sr ? qp->sr->win : 0;
}

static void sr_queue_sack(struct tern_model *m, struct ternm_qp *qp)
{
	if (!qp->sr->sack_queued)
		qp->sr->sack_queued = ternm_resp_push(m, qp, RESP_SACK, AETH_NAK_SACK, qp->epsn);
}

static void sr_clear(struct ternm_sr *sr)
{
	unsigned int i;

	for (i = 0; sr->slot && i < sr->win; i++)
		sr->slot[i].used = false;
	sr->held = 0;
}

/*
 * Allocate the window's slots (and with @payload its payload buffer) if not yet done,
 * within the device's budgets for them and its host memory bound (ternm_host_mem_try()).
 * Returns false if there is no room (or memory).
 */
static bool sr_alloc(struct tern_model *m, struct ternm_qp *qp, bool payload)
{
	struct ternm_sr *sr = qp->sr;
	size_t bytes;

	/* the device's memory for reorder windows is bounded, whatever the guest asks */
	if (!sr->slot) {
		bytes = (size_t)sr->win * sizeof(*sr->slot);
		if (m->rdma->sr_slot_bytes + bytes > TERNM_SR_MAX_SLOT_BYTES ||
		    !ternm_host_mem_try(m, bytes))
			return false;
		sr->slot = calloc(sr->win, sizeof(*sr->slot));
		if (!sr->slot) {
			ternm_host_mem_release(m, bytes);
			return false;
		}
		sr->slot_alloc = bytes;
		m->rdma->sr_slot_bytes += bytes;
	}
	if (payload && !sr->buf) {
		bytes = (size_t)sr->win * qp->mtu;
		if (m->rdma->sr_buf_bytes + bytes > TERNM_SR_MAX_BUF_BYTES ||
		    !ternm_host_mem_try(m, bytes))
			return false;
		sr->buf = malloc(bytes);
		if (!sr->buf) {
			ternm_host_mem_release(m, bytes);
			return false;
		}
		sr->slot_bytes = qp->mtu;
		sr->buf_bytes = bytes;
		m->rdma->sr_buf_bytes += bytes;
	}
	return true;
}

/*
 * Keep the request @d PSNs ahead of the expected one, if the window has room for it: a
 * SEND or WRITE packet with a placement header is placed at once and only its headers are
 * kept (on an SRQ QP once the SRQ WQEs up to its ordinal are taken; with none left, kept
 * whole); anything else is kept whole, payload included.
 */
static void sr_hold(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p,
		    int32_t d)
{
	struct ternm_sr *sr = qp->sr;
	struct ternm_sr_slot *s;
	unsigned int i = p->psn % sr->win;
	bool place = p->place;

	TERNM_QSTAT(m, qp, out_of_sequence, 1);
	if (d >= (int32_t)sr->win || p->paylen > TERNM_SR_SLOT_BYTES || p->paylen > qp->mtu) {
		/* beyond the window (or malformed: the in-order path would refuse it): dropped */
		sr_queue_sack(m, qp);
		return;
	}
	if (p->place == PKT_PLACE_SPH && (qp->flags & TERN_QP_F_SRQ)) {
		const struct ternm_sge *g;
		uint8_t ng;
		int r;

		/* the SRQ WQEs up to its ordinal are taken now, in order (ternm_srq_reserve) */
		r = ternm_srq_reserve(m, qp, (p->rord - qp->rq_rord) & TERN_SR_SPH_RORD_MASK,
				      sr->win, &g, &ng);
		if (r < 0) {
			/* an ordinal beyond the window, or done already: dropped */
			m->rdma->stats.rx_roce_discards++;
			sr_queue_sack(m, qp);
			return;
		}
		place = !r;	/* no WQE for it: kept whole, the in-order path sends the RNR NAK */
	}
	if (!sr_alloc(m, qp, !place && p->paylen)) {
		m->rdma->stats.rx_roce_discards++;
		sr_queue_sack(m, qp);	/* dropped: the requester resends it */
		return;
	}
	if (!place && p->paylen > sr->slot_bytes) {
		sr_queue_sack(m, qp);	/* the path MTU grew since: not kept */
		return;
	}
	s = &sr->slot[i];
	if (s->used && s->p.psn == p->psn) {
		TERNM_QSTAT(m, qp, duplicate_request, 1);	/* held already: a probe, say what is missing */
		sr_queue_sack(m, qp);
		return;
	}
	if (s->used) {
		s->used = false;	/* a stale PSN's: replaced */
		sr->held--;
	}
	s->p = *p;
	if (place && !ternm_resp_place(m, qp, &s->p)) {
		/* a placement header that does not fit: nothing kept, the requester resends */
		m->rdma->stats.rx_roce_discards++;
		sr_queue_sack(m, qp);
		return;
	}
	sr->held++;
	if (sr->held == 1 || psn_diff(p->psn, sr->held_hi) > 0)
		sr->held_hi = p->psn;
	s->used = true;
	s->p.bth = NULL;
	s->p.payload = NULL;
	if (!place && p->paylen)
		memcpy(sr->buf + (size_t)i * sr->slot_bytes, p->payload, p->paylen);
	m->rdma->stats.out_of_order_accepted++;
	sr_queue_sack(m, qp);
}

/*
 * The expected PSN jumped from @from to @to (a READ spans PSNs): what is held for the PSNs
 * passed is stale. Only those slots are looked at (at most the window), not all of them.
 */
static void sr_stale(struct ternm_sr *sr, uint32_t from, uint32_t to)
{
	uint32_t n = (uint32_t)psn_diff(to, from), k;

	if (!sr->held || psn_diff(to, from) <= 0)
		return;
	if (n > sr->win)
		n = sr->win;
	for (k = 0; k < n; k++) {
		uint32_t psn = psn_add(from, k);
		struct ternm_sr_slot *s = &sr->slot[psn % sr->win];

		/* the slot of a PSN passed may hold one a window later: keep that */
		if (s->used && psn_diff(s->p.psn, to) < 0) {
			s->used = false;
			sr->held--;
		}
	}
}

/* Run the held requests that now follow in order. Returns how many ran. */
static unsigned int sr_drain(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_sr *sr = qp->sr;
	unsigned int n = 0;

	while (sr->held && qp->state != TERN_QPS_ERR && qp->state != TERN_QPS_RESET) {
		unsigned int i = qp->epsn % sr->win;
		struct ternm_sr_slot *s = &sr->slot[i];
		uint32_t before = qp->epsn;
		struct ternm_pkt p;

		if (!s->used || s->p.psn != qp->epsn)
			break;
		p = s->p;
		/*
		 * placed after the gap: no payload (its final byte is in p.tail); one without
		 * payload (a READ request, an atomic) may have come before the buffer
		 */
		p.payload = p.placed || !sr->buf ? NULL : sr->buf + (size_t)i * sr->slot_bytes;
		s->used = false;
		sr->held--;
		ternm_resp_rx(m, qp, &p);
		n++;
		if (qp->epsn == before) {
			/* not taken (RNR NAK, error): the requester goes back from there */
			sr_clear(sr);
			break;
		}
		sr_stale(sr, psn_add(before, 1), qp->epsn);
	}
	if (qp->state == TERN_QPS_ERR || qp->state == TERN_QPS_RESET)
		sr_clear(sr);
	return n;
}

/*
 * A request for a selective-repeat QP. Returns false when the caller (ternm_resp_rx) is to
 * handle it the ordinary way: the in-order path, while this function replays.
 */
bool ternm_sr_resp_rx(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	struct ternm_sr *sr = qp->sr;
	int32_t d = psn_diff(p->psn, qp->epsn);
	unsigned int n;

	if (sr->replay)
		return false;
	if (d > 0) {
		sr_hold(m, qp, p, d);
		return true;
	}
	sr->replay = true;
	ternm_resp_rx(m, qp, p);
	if (d == 0)
		sr_stale(sr, psn_add(p->psn, 1), qp->epsn);
	n = d == 0 ? sr_drain(m, qp) : 0;
	sr->replay = false;
	if (qp->state == TERN_QPS_ERR || qp->state == TERN_QPS_RESET)
		return true;
	if (sr->held && (d < 0 || n))
		sr_queue_sack(m, qp);	/* still holes: say what is missing */
	else if (n)
		ternm_resp_push(m, qp, RESP_ACK, AETH_ACK, psn_add(qp->epsn, TERNM_PSN_MASK));
	return true;
}

/*
 * Send the SACK queued: AETH NAK code AETH_NAK_SACK at the expected PSN, then the SACKETH:
 * a BE32 word count in bits 31:24 (the rest zero), then that many BE32 bitmap words, bit b
 * of word w standing for PSN + 1 + 32 w + b. With nothing held any more, a plain ACK.
 */
void ternm_sr_send_sack(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_sr *sr = qp->sr;
	uint32_t w[TERNM_SR_MAX_WIN / 32] = { 0 };
	unsigned int i, nw, hi;
	uint8_t *x;

	if (sr)
		sr->sack_queued = false;
	if (!sr || !sr->held) {
		ternm_resp_send_aeth(m, qp, AETH_ACK, psn_add(qp->epsn, TERNM_PSN_MASK), qp->msn);
		return;
	}
	nw = 1;
	hi = (uint32_t)psn_diff(sr->held_hi, qp->epsn);	/* > 0 while anything is held */
	for (i = 0; i < sr->win - 1 && i < hi; i++) {
		uint32_t psn = psn_add(qp->epsn, i + 1);
		const struct ternm_sr_slot *s = &sr->slot[psn % sr->win];

		if (s->used && s->p.psn == psn) {
			w[i / 32] |= 1u << (i % 32);
			nw = i / 32 + 1;	/* the words up to the highest PSN held */
		}
	}
	x = ternm_pkt_start(m, qp, IBOP_ACK, false, false, qp->epsn);
	x[0] = AETH_NAK_SACK;
	put_be24(x + 1, qp->msn);
	x += AETH_LEN;
	put_be32(x, nw << 24);
	x += 4;
	for (i = 0; i < nw; i++, x += 4)
		put_be32(x, w[i]);
	ternm_pkt_send(m, qp, x);
}

/* ---- requester --------------------------------------------------------------------------- */

static void sr_rtt_sacked(struct tern_model *m, struct ternm_qp *qp);

static bool sr_outstanding(const struct ternm_qp *qp)
{
	return qp->sq_ci != qp->req_max;
}

static bool sr_sacked(const struct ternm_sr *sr, uint32_t psn)
{
	int32_t d = psn_diff(psn, sr->sack_base);

	return d >= 1 && d <= TERNM_SR_MAX_WIN &&
	       ((sr->sack_map[(d - 1) / 64] >> ((d - 1) % 64)) & 1);
}

/*
 * Whether hole @psn was resent for a SACK and that resend is not known to be lost: no SACK
 * since listed a PSN TERNM_SR_DUPTHRESH - 1 or more past the first PSN sent new after it
 * (packets sent after the resend arrived, it did not: RFC 8985's rule, in sending order).
 */
static bool sr_resend_pending(const struct ternm_sr *sr, uint32_t psn)
{
	unsigned int i = psn % TERNM_SR_MAX_WIN;

	if (!(sr->rs_mark[i] & SR_RS_VALID) || sr->rs_psn[i] != psn)
		return false;
	return !sr->sack_hi_valid ||
	       psn_diff(sr->sack_hi, sr->rs_mark[i] & TERNM_PSN_MASK) < TERNM_SR_DUPTHRESH;
}

/* The first hole in [@from, @to) resent for a SACK and lost again, or @to. */
static uint32_t sr_resend_lost(const struct ternm_sr *sr, uint32_t from, uint32_t to)
{
	uint32_t n = 0;

	for (; psn_diff(to, from) > 0 && n < TERNM_SR_MAX_WIN; from = psn_add(from, 1), n++) {
		unsigned int i = from % TERNM_SR_MAX_WIN;

		if ((sr->rs_mark[i] & SR_RS_VALID) && sr->rs_psn[i] == from &&
		    !sr_sacked(sr, from) && !sr_resend_pending(sr, from))
			return from;
	}
	return to;
}

/* Forget the resends' marks (a probe or a timeout: every hole may be resent again). */
static void sr_resend_forget(struct ternm_sr *sr)
{
	memset(sr->rs_mark, 0, sizeof(sr->rs_mark));
	sr->sack_hi_valid = false;
}

/*
 * How many PSNs from @a to @b (a before b, both after sack_base) the last SACK listed as
 * held, a 64-bit word at a time.
 */
static uint32_t sr_sacked_count(const struct ternm_sr *sr, uint32_t a, uint32_t b)
{
	int32_t lo = psn_diff(a, sr->sack_base) - 1, hi = psn_diff(b, sr->sack_base) - 1;
	uint32_t n = 0;

	if (lo < 0)
		lo = 0;
	if (hi > TERNM_SR_MAX_WIN)
		hi = TERNM_SR_MAX_WIN;
	while (lo < hi) {
		uint64_t w = sr->sack_map[lo / 64] >> (lo % 64);
		int32_t k = 64 - lo % 64;

		if (k > hi - lo) {
			k = hi - lo;
			w &= (1ull << k) - 1;
		}
		n += (uint32_t)__builtin_popcountll(w);
		lo += k;
	}
	return n;
}

/**
 * ternm_sr_cap_full() - whether a request packet at @psn would exceed the QP's limits
 * @qp: a selective-repeat QP (requester)
 * @psn: the PSN of the packet to send, at or after una_psn
 *
 * Two limits hold (Documentation/hw/rdma.rst, "Requester"): the PSNs in flight, those
 * from una_psn to @psn that the last SACK does not list as held by the responder, stay
 * below the cap (max_unacked); and @psn lies inside the responder's reorder window (the
 * cap times TERNM_SR_WIN_CAPS, at most TERNM_SR_MAX_WIN) from una_psn. A hole that waits
 * for its resend thus takes one PSN of the cap, not all of it. A selective resend or a
 * probe (ternm_sr_req_retx) stands for a packet lost and only needs the window.
 *
 * Return: true if the packet has to wait.
 */
bool ternm_sr_cap_full(const struct ternm_qp *qp, uint32_t psn)
{
	const struct ternm_sr *sr = qp->sr;
	int32_t d = psn_diff(psn, qp->una_psn);

	if (d < qp->max_unacked)
		return false;
	if (d >= (int32_t)sr->win)
		return true;
	if (sr->rtx_busy)
		return false;	/* a resend of a PSN sent: it stands for one lost */
	return (uint32_t)d - sr_sacked_count(sr, qp->una_psn, psn) >= qp->max_unacked;
}

/* Forget the READ responses placed for PSNs una_psn has passed. */
static void sr_rd_sync(struct ternm_qp *qp)
{
	struct ternm_sr *sr = qp->sr;
	int32_t d = psn_diff(qp->una_psn, sr->rd_base);

	if (d < 0 || d >= TERNM_SR_RD_WIN) {
		memset(sr->rd_map, 0, sizeof(sr->rd_map));
	} else {
		for (; d > 0; d--) {
			uint32_t b = sr->rd_base % TERNM_SR_RD_WIN;

			sr->rd_map[b / 64] &= ~(1ull << (b % 64));
			sr->rd_base = psn_add(sr->rd_base, 1);
		}
	}
	sr->rd_base = qp->una_psn;
	if (psn_diff(sr->rd_hi, qp->una_psn) < 0)
		sr->rd_hi = qp->una_psn;
	if (psn_diff(sr->rd_done, qp->una_psn) < 0)
		sr->rd_done = qp->una_psn;
}

/**
 * ternm_sr_rd_placed() - whether the READ response for @psn was placed out of order
 * @qp: a selective-repeat QP (requester)
 * @psn: a PSN at or after una_psn
 *
 * Returns true if the response for @psn was placed ahead of una_psn and not passed yet.
 */
bool ternm_sr_rd_placed(struct ternm_qp *qp, uint32_t psn)
{
	int32_t d;
	uint32_t b = psn % TERNM_SR_RD_WIN;

	sr_rd_sync(qp);
	d = psn_diff(psn, qp->una_psn);
	return d >= 0 && d < TERNM_SR_RD_WIN && ((qp->sr->rd_map[b / 64] >> (b % 64)) & 1);
}

/**
 * ternm_sr_rd_mark() - record a READ response placed out of order (or dropped)
 * @qp: a selective-repeat QP (requester)
 * @psn: its PSN after una_psn, not placed yet: placed if less than TERNM_SR_RD_WIN after
 *	it, else dropped (and missing from then on)
 */
void ternm_sr_rd_mark(struct ternm_qp *qp, uint32_t psn)
{
	struct ternm_sr *sr = qp->sr;
	uint32_t b = psn % TERNM_SR_RD_WIN;
	int32_t d;

	sr_rd_sync(qp);
	d = psn_diff(psn, qp->una_psn);
	if (d <= 0)
		return;
	if (d < TERNM_SR_RD_WIN)
		sr->rd_map[b / 64] |= 1ull << (b % 64);
	/* beyond the window it was dropped: re-requested once the window reaches it */
	if (psn_diff(psn_add(psn, 1), sr->rd_hi) > 0)
		sr->rd_hi = psn_add(psn, 1);
}

/* The READ request being resent asks for at most this many packets (0: its whole rest). */
uint32_t ternm_sr_rd_lim(const struct ternm_qp *qp)
{
	return qp->sr->rd_lim;
}

/* The end of the hole in READ @s's responses that starts at @psn: the next placed, or the end. */
static uint32_t sr_rd_hole_end(struct ternm_qp *qp, const struct ternm_swqe *s, uint32_t psn)
{
	uint32_t end = psn_add(s->first_psn, s->npkts);
	uint32_t q = psn_add(psn, 1);

	while (psn_diff(end, q) > 0 && psn_diff(q, qp->una_psn) < TERNM_SR_RD_WIN &&
	       !ternm_sr_rd_placed(qp, q))
		q = psn_add(q, 1);
	/* nothing is placed beyond the window */
	return psn_diff(q, qp->una_psn) >= TERNM_SR_RD_WIN ? end : q;
}

/* Whether a response shows that the responder has READ @s (whose PSN @psn is missing). */
static bool sr_rd_seen(const struct ternm_qp *qp, const struct ternm_swqe *s, uint32_t psn)
{
	return psn_diff(qp->una_psn, s->first_psn) > 0 ||
	       psn_diff(qp->sr->rd_hi, psn_add(psn, 1)) > 0;
}

/* Resend the holes in [from, end) (what the last SACK does not list) before anything new. */
static void sr_rtx(struct tern_model *m, struct ternm_qp *qp, uint32_t from, uint32_t end)
{
	struct ternm_sr *sr = qp->sr;

	if (psn_diff(from, qp->una_psn) < 0)
		from = qp->una_psn;
	if (psn_diff(end, from) <= 0)
		return;
	if (psn_diff(sr->rtx_end, sr->rtx_next) > 0 && psn_diff(sr->rtx_next, from) < 0)
		from = sr->rtx_next;	/* resends still pending from before: keep them */
	sr->rtx_next = from;
	sr->probing = false;
	if (psn_diff(end, sr->rtx_end) > 0 || psn_diff(sr->rtx_end, from) <= 0)
		sr->rtx_end = end;
	if (psn_diff(end, sr->retx_done) > 0)
		sr->retx_done = end;
	ternm_qp_work(m, qp);
}

/**
 * ternm_sr_rd_gap() - re-request the READ responses missing below one placed out of order
 * @m: the model
 * @qp: a selective-repeat QP (requester)
 *
 * Every hole in [una_psn, the highest PSN placed) not re-requested since the last timeout
 * gets one READ request of its own (its PSN, address and length). After a probe, the holes
 * within the in-flight cap from una_psn may be re-asked once more, not all of them, so that
 * a slow responder is not asked for every hole again at each probe.
 */
void ternm_sr_rd_gap(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_sr *sr = qp->sr;
	uint32_t from;

	uint32_t end;

	sr_rd_sync(qp);
	from = sr->rd_done;
	end = sr->rd_hi;
	/* what was dropped beyond the window is asked for as the window reaches it */
	if (psn_diff(end, qp->una_psn) > TERNM_SR_RD_WIN)
		end = psn_add(qp->una_psn, TERNM_SR_RD_WIN);
	if (!sr->no_thresh) {
		/*
		 * A hole is lost once a response TERNM_SR_DUPTHRESH or more PSNs beyond it is
		 * placed (else it may only be reordered): the whole run of missing PSNs
		 * that holds end - TERNM_SR_DUPTHRESH.
		 */
		uint32_t e = psn_add(end, (uint32_t)-TERNM_SR_DUPTHRESH & TERNM_PSN_MASK);

		if (psn_diff(e, qp->una_psn) > 0 &&
		    !ternm_sr_rd_placed(qp, psn_add(e, TERNM_PSN_MASK)))
			while (psn_diff(end, e) > 0 && !ternm_sr_rd_placed(qp, e))
				e = psn_add(e, 1);
		if (psn_diff(e, end) < 0)
			end = e;
	}
	if (sr->rd_redo) {
		uint32_t e = psn_add(qp->una_psn, qp->max_unacked);

		sr->rd_redo = false;
		if (psn_diff(e, end) > 0)
			e = end;
		if (psn_diff(e, qp->una_psn) > 0) {
			if (psn_diff(e, sr->rd_done) > 0)
				sr->rd_done = e;
			sr_rtx(m, qp, qp->una_psn, e);
			return;
		}
	}
	if (psn_diff(end, from) <= 0)
		return;
	sr->rd_done = end;
	sr_rtx(m, qp, from, end);
}

/* A SACK (AETH_NAK_SACK at @p->psn, its SACKETH in the payload) for a selective-repeat QP. */
void ternm_sr_req_sack(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	struct ternm_sr *sr = qp->sr;
	uint64_t map[TERNM_SR_MAX_WIN / 64] = { 0 };
	uint32_t nw, hdr, from, end, i;
	int hb = -1;

	if (!sr || p->paylen < 4) {
		m->rdma->stats.rx_roce_discards++;	/* not ours to get, or no SACKETH */
		return;
	}
	hdr = get_be32(p->payload);
	nw = hdr >> 24;
	if ((hdr & 0xffffff) || nw == 0 || nw > TERNM_SR_MAX_WIN / 32 || p->paylen != 4 + 4 * nw) {
		m->rdma->stats.rx_roce_discards++;
		return;
	}
	for (i = 0; i < nw; i++)
		map[i / 2] |= (uint64_t)get_be32(p->payload + 4 + 4 * i) << (32 * (i % 2));
	ternm_req_ack_upto(m, qp, psn_add(p->psn, TERNM_PSN_MASK));
	if (qp->state == TERN_QPS_ERR || !sr_outstanding(qp))
		return;
	sr->sack_base = p->psn;
	memcpy(sr->sack_map, map, sizeof(map));
	for (i = 0; i < TERNM_SR_MAX_WIN / 64; i++)
		if (map[i])
			hb = (int)(64 * i + 63 - (uint32_t)__builtin_clzll(map[i]));
	/*
	 * The highest PSN held (bit hb: base + 1 + hb) bounds the holes; with none held, the
	 * base alone is missing.
	 */
	end = hb >= 0 ? psn_add(p->psn, (uint32_t)hb + 1) : psn_add(p->psn, 1);
	from = p->psn;
	sr->sack_hi_valid = hb >= 0;
	sr->sack_hi = psn_add(end, 1);
	sr_rtt_sacked(m, qp);
	if (hb >= 0 && !sr->no_thresh) {
		/*
		 * A hole is lost once a PSN TERNM_SR_DUPTHRESH or more beyond it is held;
		 * nearer ones may only be reordered (a probe recovers a tail).
		 */
		uint32_t e = psn_add(end, (uint32_t)(1 - TERNM_SR_DUPTHRESH) & TERNM_PSN_MASK);

		if (psn_diff(e, p->psn) <= 0)
			return;
		/* all of the run of missing PSNs that holds e - 1 */
		if (!sr_sacked(sr, psn_add(e, TERNM_PSN_MASK)))
			while (psn_diff(end, e) > 0 && !sr_sacked(sr, e))
				e = psn_add(e, 1);
		end = e;
	}
	if (psn_diff(sr->retx_done, from) > 0 && psn_diff(sr->retx_done, qp->sent_psn) <= 0)
		/* those were resent already: again only those whose resend was lost too */
		from = sr_resend_lost(sr, from, sr->retx_done);
	if (psn_diff(end, qp->sent_psn) > 0)
		end = qp->sent_psn;
	sr_rtx(m, qp, from, end);
}

/* The started WQE @psn belongs to (its index in *idx), or NULL. */
static const struct ternm_swqe *sr_find(const struct ternm_qp *qp, uint32_t psn, uint16_t *idx)
{
	uint32_t mask = (1u << qp->log_sq_depth) - 1;
	uint16_t i;

	for (i = qp->sq_ci; i != qp->req_max; i++) {
		const struct ternm_swqe *s = &qp->swq[i & mask];
		int32_t d = psn_diff(psn, s->first_psn);

		if (!s->local && d >= 0 && (uint32_t)d < s->npkts) {
			*idx = i;
			return s;
		}
	}
	return NULL;
}

/* Put the send cursor on @psn, in a started WQE; returns that WQE, or NULL. */
static const struct ternm_swqe *sr_seek(struct ternm_qp *qp, uint32_t psn)
{
	uint16_t idx;
	const struct ternm_swqe *s = sr_find(qp, psn, &idx);

	if (s) {
		qp->req_idx = idx;
		qp->req_pkt = (uint32_t)psn_diff(psn, s->first_psn);
		qp->req_psn = psn;
	}
	return s;
}

/*
 * Send the pending selective retransmissions (at most @budget packets). Called first by
 * ternm_req_send; returns the packets sent.
 */
unsigned int ternm_sr_req_retx(struct tern_model *m, struct ternm_qp *qp, unsigned int budget)
{
	struct ternm_sr *sr = qp->sr;
	uint16_t idx = qp->req_idx;
	uint32_t pkt = qp->req_pkt, psn = qp->req_psn, since = qp->pkts_since_ack;
	unsigned int sent = 0;

	if (sr->rtx_busy || psn_diff(sr->rtx_end, sr->rtx_next) <= 0)
		return 0;
	sr->rtx_busy = true;
	while (sent < budget && psn_diff(sr->rtx_end, sr->rtx_next) > 0 &&
	       qp->state != TERN_QPS_ERR) {
		uint32_t p = sr->rtx_next, hole;
		const struct ternm_swqe *s;
		unsigned int n;

		if (psn_diff(p, qp->una_psn) < 0) {
			sr->rtx_next = qp->una_psn;
			continue;
		}
		if (psn_diff(p, qp->sent_psn) >= 0) {
			sr->rtx_next = sr->rtx_end;	/* never sent: the ordinary path sends it */
			break;
		}
		/* a READ response from beyond it shows the responder did everything before */
		if (sr_sacked(sr, p) && psn_diff(p, sr->rd_hi) >= 0) {
			sr->rtx_next = psn_add(p, 1);
			continue;
		}
		if (ternm_sr_rd_placed(qp, p)) {
			sr->rtx_next = psn_add(p, 1);	/* its response is in place */
			continue;
		}
		s = sr_seek(qp, p);
		if (!s) {
			sr->rtx_next = sr->rtx_end;
			break;
		}
		if (!s->read && psn_diff(p, sr->rd_hi) < 0) {
			/*
			 * A READ response from beyond it: the responder, which runs requests in
			 * PSN order, has done this one; its ACK comes with the READ's.
			 */
			sr->rtx_next = psn_add(s->first_psn, s->npkts);
			continue;
		}
		if (!s->read && !sr->probing && sr_resend_pending(sr, p)) {
			sr->rtx_next = psn_add(p, 1);	/* resent, not known lost again */
			continue;
		}
		hole = psn_add(p, 1);
		if (s->read && !s->atomic) {
			/* a READ re-asks only the hole: up to the next response placed */
			hole = sr_rd_hole_end(qp, s, p);
			if (psn_diff(hole, sr->rtx_end) > 0)
				hole = sr->rtx_end;	/* the range asked for ends there */
			/*
			 * Only a response of this READ (una_psn past its start) or from beyond
			 * @p proves that the responder has it: else its request may have been
			 * lost, and a shorter one would be taken for a new, shorter READ. Then
			 * its whole rest is asked.
			 */
			if (!sr_rd_seen(qp, s, p))
				hole = psn_add(s->first_psn, s->npkts);
			sr->rd_lim = (uint32_t)psn_diff(hole, p);
		}
		qp->pkts_since_ack = TERNM_ACK_EVERY;	/* AckReq on every resent packet */
		n = ternm_req_send(m, qp, 1);
		sr->rd_lim = 0;
		if (!n)
			break;		/* held back (pacer, MAC, window): retried later */
		if (sr->probing) {
			sr->probing = false;	/* counted in tail_loss_probes */
		} else {
			m->rdma->stats.selective_retrans_pkts++;
			if (!s->read) {
				sr->rs_psn[p % TERNM_SR_MAX_WIN] = p;
				sr->rs_mark[p % TERNM_SR_MAX_WIN] = qp->sent_psn | SR_RS_VALID;
			}
		}
		sent++;
		/* one request re-asks a READ's hole, or an atomic */
		sr->rtx_next = hole;
	}
	sr->rtx_busy = false;
	if (qp->state != TERN_QPS_ERR) {
		qp->req_idx = idx;
		qp->req_pkt = pkt;
		qp->req_psn = psn;
		qp->pkts_since_ack = since;
	}
	return sent;
}

/*
 * The READ or atomic at una_psn lost responses (a gap in them, or an ACK up to @acked
 * beyond it): re-request only its rest, once, and remember @acked for when it completes.
 */
void ternm_sr_req_resend(struct tern_model *m, struct ternm_qp *qp, uint32_t acked)
{
	struct ternm_sr *sr = qp->sr;
	const struct ternm_swqe *s;
	uint16_t idx;
	uint32_t end;

	if (!sr->ack_hi_valid || psn_diff(acked, sr->ack_hi) > 0) {
		sr->ack_hi = acked;
		sr->ack_hi_valid = true;
	}
	if (sr->rd_rtx_valid && sr->rd_rtx_psn == qp->una_psn)
		return;			/* re-requested already: the probe or the RTO goes on */
	sr->rd_rtx_valid = true;
	sr->rd_rtx_psn = qp->una_psn;
	memset(sr->sack_map, 0, sizeof(sr->sack_map));
	end = psn_add(qp->una_psn, 1);
	s = sr_find(qp, qp->una_psn, &idx);
	if (s && s->read && !s->atomic)
		end = sr_rd_hole_end(qp, s, qp->una_psn);	/* the first hole */
	if (s && s->read && !s->atomic && psn_diff(acked, qp->una_psn) >= 0) {
		/* acknowledged beyond it: every response still missing was lost */
		end = psn_add(s->first_psn, s->npkts);
		sr_rd_sync(qp);
		if (psn_diff(end, sr->rd_done) > 0)
			sr->rd_done = end;
	}
	sr_rtx(m, qp, qp->una_psn, end);
}

/* The READ or atomic at the head completed: apply an ACK that went beyond it meanwhile. */
void ternm_sr_req_read_done(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_sr *sr = qp->sr;

	if (!sr->ack_hi_valid)
		return;
	if (psn_diff(sr->ack_hi, qp->una_psn) < 0) {
		sr->ack_hi_valid = false;
		return;
	}
	sr->ack_hi_valid = false;
	ternm_req_ack_upto(m, qp, sr->ack_hi);
}

#define TERNM_SR_PROBES	3	/* probes before the timeout's rest */
#define TERNM_SR_MIN_PTO_NS	8000	/* the probe time's floor */

/*
 * The round-trip time (Documentation/hw/rdma.rst, "Tail-loss probe"): one PSN at a time is
 * timed from when it first went out until una_psn passes it or a SACK lists it; a resend
 * of it or of a PSN before it voids the sample (Karn: its answer may be the resend's, or
 * wait for a hole). srtt and rttvar are smoothed as TCP's (RFC 6298): 1/8 and 1/4.
 */
static void sr_rtt_sample(struct ternm_sr *sr, uint64_t ns)
{
	uint64_t d;

	sr->rtt.on = false;
	if (!sr->srtt_ns) {
		sr->srtt_ns = ns ? ns : 1;
		sr->rttvar_ns = ns / 2;
		return;
	}
	d = sr->srtt_ns > ns ? sr->srtt_ns - ns : ns - sr->srtt_ns;
	sr->rttvar_ns = sr->rttvar_ns - sr->rttvar_ns / 4 + d / 4;
	sr->srtt_ns = sr->srtt_ns - sr->srtt_ns / 8 + ns / 8;
	if (!sr->srtt_ns)
		sr->srtt_ns = 1;
}

/* una_psn moved: the timed PSN acknowledged ends its sample. */
static void sr_rtt_acked(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_sr *sr = qp->sr;
	uint64_t ns;

	if (ternm_rtt_acked(&sr->rtt, qp->una_psn, ternm_now(m), &ns))
		sr_rtt_sample(sr, ns);
}

/* A SACK was taken (sack_base, sack_map): the timed PSN held by the responder ends it too. */
static void sr_rtt_sacked(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_sr *sr = qp->sr;

	sr_rtt_acked(m, qp);
	if (sr->rtt.on && sr_sacked(sr, sr->rtt.psn))
		sr_rtt_sample(sr, ternm_now(m) - sr->rtt.t0);
}

/*
 * The tail-loss probe time for a timeout of @rto_ns: with a measured round trip,
 * max(2 srtt, srtt + 4 rttvar); before the first sample an eighth of the timeout. At least
 * TERNM_SR_MIN_PTO_NS, at most an eighth of the timeout (three probes, the second and
 * third after twice and four times the probe time, then fit in it).
 */
static uint64_t sr_tlp_ns(const struct ternm_sr *sr, uint64_t rto_ns)
{
	uint64_t t = rto_ns / 8;

	if (sr && sr->srtt_ns) {
		uint64_t a = 2 * sr->srtt_ns, b = sr->srtt_ns + 4 * sr->rttvar_ns;
		uint64_t pto = a > b ? a : b;

		if (pto < t)
			t = pto;
	}
	return t < TERNM_SR_MIN_PTO_NS ? TERNM_SR_MIN_PTO_NS : t;
}

/* The wait before probe @k (0 first): the probe time, doubled for each probe before it. */
static uint64_t sr_probe_wait(const struct ternm_sr *sr, uint64_t rto_ns, unsigned int k)
{
	return sr_tlp_ns(sr, rto_ns) << k;
}

/*
 * The retransmit timer is being armed for @rto_ns (by progress, or as the first packet
 * goes out): with selective repeat it first runs for the tail-loss probe time; returns the
 * time to arm.
 */
uint64_t ternm_sr_arm_ns(struct tern_model *m, struct ternm_qp *qp, uint64_t rto_ns)
{
	uint64_t t;

	if (!qp->sr)
		return rto_ns;
	sr_rtt_acked(m, qp);
	qp->sr->no_thresh = false;
	t = sr_tlp_ns(qp->sr, rto_ns);
	if (((1ull << TERNM_SR_PROBES) - 1) * t >= rto_ns) {
		qp->sr->tlp_armed = false;
		return rto_ns;
	}
	qp->sr->tlp_armed = true;
	qp->sr->probes = 0;
	return t;
}

/*
 * The retransmit timer expired. If it was the probe's time and a packet went out since it
 * started, it starts again from that packet. Else resend the last packet sent
 * (with AckReq: its answer, an ACK or a SACK, shows what is missing), let every hole be
 * resent once more, re-arm for the rest of the timeout and return true.
 */
bool ternm_sr_req_probe(struct tern_model *m, struct ternm_qp *qp, uint64_t rto_ns)
{
	struct ternm_sr *sr = qp->sr;
	uint64_t wait, rest;
	uint32_t last;

	if (!sr || !sr->tlp_armed)
		return false;
	wait = sr_probe_wait(sr, rto_ns, sr->probes);
	if (sr->last_tx_ns + wait > ternm_now(m) && sr_outstanding(qp)) {
		/* still sending (paced, ACKs far apart): not a tail; the probe time restarts */
		qp->retx_deadline = sr->last_tx_ns + wait;
		ternm_qp_timer_sync(m, qp);
		return true;
	}
	if (!sr_outstanding(qp) || (qp->state != TERN_QPS_RTS && qp->state != TERN_QPS_SQD)) {
		sr->tlp_armed = false;
		return false;
	}
	/* up to TERNM_SR_PROBES probes, one probe time apart, then the rest of the timeout */
	sr->tlp_armed = ++sr->probes < TERNM_SR_PROBES;
	if (qp->sent_psn != qp->una_psn) {
		const struct ternm_swqe *s;
		uint16_t idx;

		m->rdma->stats.tail_loss_probes++;
		last = psn_add(qp->sent_psn, TERNM_PSN_MASK);
		/*
		 * A READ or atomic waiting for its responses at the head is what stalls: it is
		 * re-requested (its whole rest). Else a READ is probed from its start.
		 */
		s = sr_find(qp, qp->una_psn, &idx);
		if (s && s->read) {
			last = qp->una_psn;
		} else {
			s = sr_find(qp, last, &idx);
			if (s && s->read)
				last = s->first_psn;
		}
		sr->rd_rtx_valid = false;
		sr->retx_done = qp->una_psn;
		sr->rd_redo = true;	/* READ holes near una_psn may be re-asked once more */
		sr->no_thresh = true;	/* what is missing now is lost, not reordered */
		memset(sr->sack_map, 0, sizeof(sr->sack_map));
		sr_resend_forget(sr);
		sr->rtx_next = last;
		sr->rtx_end = psn_add(last, 1);
		s = sr_find(qp, last, &idx);
		/*
		 * A READ's first hole, or, when a response shows that the responder has the
		 * READ, its first missing response only: a probe is one packet (a host that
		 * stalled for a while answers the rest itself).
		 */
		if (s && s->read && !s->atomic)
			sr->rtx_end = sr_rd_seen(qp, s, last) ? psn_add(last, 1) :
				      sr_rd_hole_end(qp, s, last);
		sr->probing = true;
		ternm_qp_work(m, qp);
	}
	wait = ((1ull << TERNM_SR_PROBES) - 1) * sr_tlp_ns(sr, rto_ns);
	rest = wait < rto_ns ? rto_ns - wait : sr_tlp_ns(sr, rto_ns);
	qp->retx_deadline = ternm_now(m) + (sr->tlp_armed ? sr_probe_wait(sr, rto_ns, sr->probes) :
					    rest);
	ternm_qp_timer_sync(m, qp);
	return true;
}

/*
 * A request for PSNs [@psn, @psn + @n) went out (rdma_req.c, req_sent; before sent_psn
 * moves): a new one may start a round-trip sample, a resend voids the one it may answer.
 */
void ternm_sr_sent(struct tern_model *m, struct ternm_qp *qp, uint32_t psn, uint32_t n)
{
	struct ternm_sr *sr = qp->sr;
	uint32_t k;

	sr->last_tx_ns = ternm_now(m);
	if (psn_diff(psn, qp->sent_psn) < 0) {
		ternm_rtt_resent(&sr->rtt, psn);
		return;
	}
	/* new PSNs: no resend mark of theirs (one left from 2^24 PSNs ago) */
	for (k = 0; k < n && k < TERNM_SR_MAX_WIN; k++)
		sr->rs_mark[psn_add(psn, k) % TERNM_SR_MAX_WIN] = 0;
	if (!sr->rtt.on && n)
		ternm_rtt_start(&sr->rtt, psn_add(psn, n - 1), sr->last_tx_ns);
}

/* The full retransmit timeout: the requester goes back N; forget the selective state. */
void ternm_sr_req_timeout(struct ternm_qp *qp)
{
	struct ternm_sr *sr = qp->sr;

	if (!sr)
		return;
	sr->rtx_next = sr->rtx_end = qp->una_psn;
	sr->retx_done = qp->una_psn;
	sr->rd_done = qp->una_psn;
	sr->rd_redo = false;
	memset(sr->sack_map, 0, sizeof(sr->sack_map));
	sr_resend_forget(sr);
	sr->tlp_armed = false;
	sr->rtt.on = false;
}

/* ---- the recovery operations rdma_req.c calls for a selective-repeat QP ------------------ */

/* The retransmit timer expired: a tail-loss probe, or the timeout (which goes back N). */
static bool sr_timeout(struct tern_model *m, struct ternm_qp *qp, uint64_t rto_ns)
{
	if (ternm_sr_req_probe(m, qp, rto_ns))
		return true;
	ternm_sr_req_timeout(qp);
	return false;
}

/* An ACK passes READ @s at sq_ci: una_psn moves over its responses placed ahead. */
static bool sr_rd_acked_ahead(struct tern_model *m, struct ternm_qp *qp,
			      const struct ternm_swqe *s)
{
	if (s->atomic || psn_diff(qp->una_psn, s->first_psn) < 0 ||
	    !ternm_sr_rd_placed(qp, qp->una_psn))
		return false;
	ternm_req_sr_advance(m, qp);
	return true;
}

static void sr_rd_resp_done(struct tern_model *m, struct ternm_qp *qp, bool done)
{
	if (done)
		ternm_sr_req_read_done(m, qp);
	ternm_req_sr_advance(m, qp);
	if (qp->state != TERN_QPS_ERR)
		ternm_sr_rd_gap(m, qp);	/* those dropped beyond the window, now in it */
}

static void sr_atomic_done(struct tern_model *m, struct ternm_qp *qp)
{
	ternm_sr_req_read_done(m, qp);
	ternm_req_sr_advance(m, qp);
}

const struct ternm_recovery_ops ternm_sr_recovery = {
	.log_tag = ", selective repeat",
	.resend = ternm_sr_req_retx,
	.cap_full = ternm_sr_cap_full,
	.rd_lim = ternm_sr_rd_lim,
	.place = true,
	.sent = ternm_sr_sent,
	.arm_ns = ternm_sr_arm_ns,
	.timeout = sr_timeout,
	.implied_nak = ternm_sr_req_resend,
	.rd_acked_ahead = sr_rd_acked_ahead,
	.rd_resp_ahead = ternm_req_sr_read_ahead,
	.rd_resp_done = sr_rd_resp_done,
	.atomic_done = sr_atomic_done,
	.sack = ternm_sr_req_sack,
};
