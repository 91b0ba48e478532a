/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: the RDMA transport scheduler.
 *
 * Which QP sends next and when. A QP with something to send is on the work list;
 * tern_model_run() (ternm_rdma_run()) takes QPs from its head, up to TERNM_QP_BURST packets
 * each and TERNM_RDMA_BUDGET in all, and puts a QP that has more at the tail. A QP whose
 * priority the MAC cannot send now waits on the MAC-wait list, retried in order at the next
 * run ahead of the QPs woken since (one that sent in its turn goes behind the QPs that did
 * not get one). A QP with a deadline (retransmission, RNR wait, DCQCN pacing and rate
 * increase) is on the timer list, which ternm_rdma_timer() walks. rdma.h describes the work
 * model.
 */
#include "rdma.h"

/* ---- work and timer lists --------------------------------------------------------------- */

/*
 * The work list and the MAC-wait list share a QP's work_next/work_prev links (a QP is on at
 * most one of them): append to and unlink from the list given by its head and tail.
 */
static void qlist_append(struct ternm_qp **head, struct ternm_qp **tail, struct ternm_qp *qp)
{
	qp->work_next = NULL;
	qp->work_prev = *tail;
	if (*tail)
		(*tail)->work_next = qp;
	else
		*head = qp;
	*tail = qp;
}

static void qlist_unlink(struct ternm_qp **head, struct ternm_qp **tail, struct ternm_qp *qp)
{
	if (qp->work_prev)
		qp->work_prev->work_next = qp->work_next;
	else
		*head = qp->work_next;
	if (qp->work_next)
		qp->work_next->work_prev = qp->work_prev;
	else
		*tail = qp->work_prev;
	qp->work_next = qp->work_prev = NULL;
}

static void macwait_remove(struct ternm_rdma *r, struct ternm_qp *qp)
{
	if (!qp->on_macwait)
		return;
	qlist_unlink(&r->macwait_head, &r->macwait_tail, qp);
	qp->on_macwait = false;
}

/*
 * Put @qp on the work list (if not there) and make sure tern_model_run() comes. A QP parked
 * on the MAC-wait list stays there, in its place: the next run retries the whole list in
 * order, and a QP woken by an ACK must not pass the QPs that waited for the line before it
 * (with the line the bottleneck, ACK-clocked QPs would otherwise take every turn).
 */
void ternm_qp_work(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_rdma *r = m->rdma;

	if (qp->on_macwait) {
		ternm_kick(m);
		return;
	}
	if (!qp->on_work) {
		qp->on_work = true;
		qlist_append(&r->work_head, &r->work_tail, qp);
	}
	ternm_kick(m);
}

static void work_remove(struct ternm_rdma *r, struct ternm_qp *qp)
{
	if (!qp->on_work)
		return;
	qlist_unlink(&r->work_head, &r->work_tail, qp);
	qp->on_work = false;
}

/*
 * The MAC cannot send @qp's priority now: park it (off the work list, no kick) until the next
 * tern_model_run(), which the MAC's timer brings about when it may send again.
 */
void ternm_qp_macwait(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_rdma *r = m->rdma;

	if (qp->on_work || qp->on_macwait)
		return;
	qp->on_macwait = true;
	qlist_append(&r->macwait_head, &r->macwait_tail, qp);
}

/*
 * Every parked QP goes back on the work list (without a kick), in its order and ahead of the
 * QPs woken since (a doorbell, an ACK, the pacer's timer): those waited for the line less.
 */
static void macwait_retry(struct ternm_rdma *r)
{
	struct ternm_qp *qp;

	if (!r->macwait_head)
		return;
	for (qp = r->macwait_head; qp; qp = qp->work_next) {
		qp->on_macwait = false;
		qp->on_work = true;
	}
	r->macwait_tail->work_next = r->work_head;
	if (r->work_head)
		r->work_head->work_prev = r->macwait_tail;
	else
		r->work_tail = r->macwait_tail;
	r->work_head = r->macwait_head;
	r->macwait_head = NULL;
	r->macwait_tail = NULL;
}

static uint64_t qp_deadline(const struct ternm_qp *qp)
{
	uint64_t d = qp->retx_deadline < qp->rnr_deadline ? qp->retx_deadline : qp->rnr_deadline;
	uint64_t c = ternm_cc_deadline(qp);

	return c < d ? c : d;
}

static void timer_remove(struct ternm_rdma *r, struct ternm_qp *qp)
{
	if (!qp->on_timer)
		return;
	if (qp->timer_prev)
		qp->timer_prev->timer_next = qp->timer_next;
	else
		r->timer_head = qp->timer_next;
	if (qp->timer_next)
		qp->timer_next->timer_prev = qp->timer_prev;
	qp->on_timer = false;
	qp->timer_next = qp->timer_prev = NULL;
}

/*
 * The QP's deadlines changed: keep it on the timer list while it has one. The host timer is
 * re-armed only when this deadline is earlier than the armed one; a later or cancelled
 * deadline leaves the timer as it is (it fires, finds nothing due, and re-arms).
 */
void ternm_qp_timer_sync(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_rdma *r = m->rdma;
	uint64_t d = qp_deadline(qp);

	if (d == TERNM_NO_DEADLINE) {
		timer_remove(r, qp);
		return;
	}
	if (!qp->on_timer) {
		qp->on_timer = true;
		qp->timer_prev = NULL;
		qp->timer_next = r->timer_head;
		if (r->timer_head)
			r->timer_head->timer_prev = qp;
		r->timer_head = qp;
	}
	if (d < m->timer_armed_ns)
		ternm_timer_update(m);
}

uint64_t ternm_rdma_next_deadline(const struct tern_model *m)
{
	const struct ternm_qp *qp;
	uint64_t next = TERNM_NO_DEADLINE;

	if (!m->rdma || !m->ready || m->fatal)
		return next;
	next = ternm_cq_next_deadline(m);
	for (qp = m->rdma->timer_head; qp; qp = qp->timer_next) {
		uint64_t d = qp_deadline(qp);

		if (d < next)
			next = d;
	}
	return next;
}

void ternm_rdma_timer(struct tern_model *m, uint64_t now)
{
	struct ternm_qp *qp = m->rdma->timer_head, *next;

	ternm_cq_timer(m, now);

	/*
	 * One pass over the list. Handling a QP may take others off it (a loopback ACK, an
	 * error): when the QP after it went, the pass goes on from the head, where the QPs
	 * already handled are no longer due (each handled deadline moves or is dropped).
	 */
	while (qp) {
		if (qp_deadline(qp) > now) {
			qp = qp->timer_next;
			continue;
		}
		next = qp->timer_next;
		if (qp->retx_deadline <= now || qp->rnr_deadline <= now)
			ternm_req_timer(m, qp, now);
		if (ternm_cc_deadline(qp) <= now)
			ternm_cc_timer(m, qp, now);
		if (qp_deadline(qp) <= now) {
			/* never loop on a deadline that did not move */
			qp->retx_deadline = qp->rnr_deadline = TERNM_NO_DEADLINE;
			qp->cc.pace_deadline = TERNM_NO_DEADLINE;
			qp->cc.inc_deadline = TERNM_NO_DEADLINE;
			timer_remove(m->rdma, qp);
		}
		qp = next && next->on_timer ? next : m->rdma->timer_head;
	}
}

/* Take @qp off every list: the work list, the MAC-wait list and the timer list. */
void ternm_qp_unschedule(struct tern_model *m, struct ternm_qp *qp)
{
	work_remove(m->rdma, qp);
	macwait_remove(m->rdma, qp);
	timer_remove(m->rdma, qp);
}

/* ---- the engine ------------------------------------------------------------------------ */

void ternm_rdma_run(struct tern_model *m)
{
	struct ternm_rdma *r = m->rdma;
	unsigned int budget = TERNM_RDMA_BUDGET;

	macwait_retry(r);
	while (budget && r->work_head && m->ready && !m->fatal) {
		struct ternm_qp *qp = r->work_head;
		unsigned int allow = budget < TERNM_QP_BURST ? budget : TERNM_QP_BURST;
		unsigned int sent, req = 0;
		bool more;

		work_remove(r, qp);
		qp->tx_block = TX_GO;
		sent = ternm_resp_send(m, qp, allow);
		if (qp->state == TERN_QPS_ERR) {
			sent += ternm_qp_flush(m, qp, sent < allow ? allow - sent : 1);
			more = qp->fifo_count || qp->sq_ci != qp->sq_pi || qp->rq_ci != qp->rq_pi;
		} else {
			if (sent < allow && qp->tx_block == TX_GO)
				req = ternm_qp_connected(qp) ? ternm_req_send(m, qp, allow - sent) :
				      ternm_ud_send(m, qp, allow - sent);
			sent += req;
			more = qp->fifo_count || (sent >= allow && ternm_req_has_work(qp));
		}
		/*
		 * Held back: by the pacer, the timer puts it back (pace_deadline); by the MAC,
		 * the next run retries it. Neither may keep the engine kicking. A QP the MAC
		 * stopped after it sent has had its turn: it goes behind the QPs still on the
		 * work list (looked at again after them, then parked after them), else the
		 * MAC-wait list would keep the order of this run and, with the line the
		 * bottleneck, the QP at its head would send on every run and starve the rest.
		 */
		if (qp->tx_block == TX_MAC && qp->state != TERN_QPS_ERR && sent && !qp->on_work &&
		    !qp->on_macwait) {
			qp->on_work = true;
			qlist_append(&r->work_head, &r->work_tail, qp);
		} else if (qp->tx_block == TX_MAC && qp->state != TERN_QPS_ERR) {
			ternm_qp_macwait(m, qp);
		} else if (more && qp->tx_block == TX_GO) {
			ternm_qp_work(m, qp);
		}
		if (!sent && qp->tx_block != TX_GO)
			continue;	/* costs no budget: every held QP is looked at once */
		budget = sent >= budget ? 0 : budget - (sent ? sent : 1);
	}
	if (r->work_head)
		ternm_kick(m);
}
