/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: congestion control of the RoCE engine (include/linux/tern/tern_dcb.h,
 * Documentation/hw/congestion.rst): SET/QUERY_CC_PARAMS, ECN marking of data packets, the
 * notification point (CE -> CNP) and DCQCN's reaction point (CNP -> rate cut, timer and
 * byte counter driven recovery) with the per-QP rate limiter.
 *
 * Rates are kept in kb/s (the parameters are Mb/s; cc_rate_mbps reports kb/s / 1000, rounded
 * down). Everything periodic is evaluated lazily from elapsed virtual time when the QP is
 * looked at (a CNP, a packet, a query, its timer): alpha periods of dce_tcp_rtt and increase
 * events of rpg_time_reset cost nothing while nothing happens. The only timers are a limited
 * QP's next timer-stage increase event and its pacing deadline (both on the QP timer list).
 *
 * A QP's rate limiter is allocated by a CNP that finds it not limited (its "first" CNP: alpha
 * starts at initial_alpha_value, rate_to_set_on_first_cnp applies) and released when
 * recovery brings it back to the maximum rate.
 */
#include <stdlib.h>

#include "rdma.h"

#define STAGE_MAX	(1u << 20)	/* stages saturate here (far beyond rpg_threshold) */
#define TIME_MAX_US	131071u

/* ---- parameters --------------------------------------------------------------------------- */

static void cc_defaults(struct ternm_cc *c)
{
	memset(c, 0, sizeof(*c));
	c->cnp_dscp = TERN_CC_DEF_CNP_DSCP;
	c->cnp_prio = TERN_CC_DEF_CNP_PRIO;
	c->min_time_between_cnps = TERN_CC_DEF_MIN_TIME_CNPS;
	c->rpg_time_reset = TERN_CC_DEF_TIME_RESET;
	c->rpg_byte_reset = TERN_CC_DEF_BYTE_RESET;
	c->rpg_threshold = TERN_CC_DEF_THRESHOLD;
	c->rpg_max_rate = 0;
	c->rpg_ai_rate = TERN_CC_DEF_AI_RATE;
	c->rpg_hai_rate = TERN_CC_DEF_HAI_RATE;
	c->rpg_gd = TERN_CC_DEF_GD;
	c->rpg_min_dec_fac = TERN_CC_DEF_MIN_DEC_FAC;
	c->rpg_min_rate = TERN_CC_DEF_MIN_RATE;
	c->rate_to_set_on_first_cnp = 0;
	c->dce_tcp_g = TERN_CC_DEF_TCP_G;
	c->dce_tcp_rtt = TERN_CC_DEF_TCP_RTT;
	c->rate_reduce_monitor_period = TERN_CC_DEF_MONITOR_PERIOD;
	c->initial_alpha_value = TERN_CC_DEF_INITIAL_ALPHA;
	c->hpcc_max_stage = TERN_CC_DEF_HPCC_MAX_STAGE;
	c->hpcc_eta = TERN_CC_DEF_HPCC_ETA;
	c->hpcc_ai_rate = TERN_CC_DEF_HPCC_AI_RATE;
	c->hpcc_base_rtt = TERN_CC_DEF_HPCC_BASE_RTT;
	c->timely_hai_thresh = TERN_CC_DEF_TIMELY_HAI_THRESH;
	c->timely_alpha = TERN_CC_DEF_TIMELY_ALPHA;
	c->timely_beta = TERN_CC_DEF_TIMELY_BETA;
	c->timely_delta = TERN_CC_DEF_TIMELY_DELTA;
	c->timely_t_low = TERN_CC_DEF_TIMELY_T_LOW;
	c->timely_t_high = TERN_CC_DEF_TIMELY_T_HIGH;
	c->timely_min_rtt = TERN_CC_DEF_TIMELY_MIN_RTT;
	c->timely_seg = TERN_CC_DEF_TIMELY_SEG;
	c->timely_min_rate = TERN_CC_DEF_TIMELY_MIN_RATE;
}

int ternm_cc_init(struct tern_model *m)
{
	m->cc = calloc(1, sizeof(*m->cc));
	if (!m->cc)
		return -1;
	cc_defaults(m->cc);
	return 0;
}

void ternm_cc_fini(struct tern_model *m)
{
	free(m->cc);
	m->cc = NULL;
}

/* Device reset (the QPs are gone already). */
void ternm_cc_clear(struct tern_model *m)
{
	if (m->cc)
		cc_defaults(m->cc);
}

/* The maximum rate of a QP in kb/s: rpg_max_rate, or the line rate. */
static uint64_t max_kbps(const struct tern_model *m)
{
	uint32_t r = m->cc->rpg_max_rate ? m->cc->rpg_max_rate : ternm_link_speed_mbps(m);

	return (uint64_t)r * 1000;
}

/* ---- priorities and ECN ----------------------------------------------------------------- */

/* Priority of the frames built from a struct tern_qp_path (as the MAC classifies them). */
unsigned int ternm_path_prio(const struct tern_model *m, const uint8_t *path)
{
	typedef struct tern_qp_path P;
	bool tagged = get_le16(CFLD(path, P, vlan_id)) != TERN_VLAN_NONE;

	return ternm_mac_prio(m, path[offsetof(P, traffic_class)] >> 2,
			      tagged ? path[offsetof(P, sl)] & 7 : -1) & 7;
}

/* Is @qp a reaction point: an RC or UC QP whose priority has RP enabled? */
bool ternm_cc_rp(const struct tern_model *m, const struct ternm_qp *qp)
{
	if (!ternm_qp_connected(qp) || !m->cc->rp_en)
		return false;
	return m->cc->rp_en & (1u << ternm_path_prio(m, qp->path));
}

static bool is_data_op(uint8_t op)
{
	return op <= IBOP_READ_RESP_ONLY || op == IBOP_CMP_SWAP || op == IBOP_FETCH_ADD ||
	       (op >= IBOP_SR_WRITE_MIDDLE && op <= IBOP_SR_SEND_LAST_INV);
}

/* The ECN field of a packet @qp sends with BTH @opcode: ECT(0) for RC and UC data with RP. */
unsigned int ternm_cc_ecn(const struct tern_model *m, const struct ternm_qp *qp, uint8_t opcode)
{
	return is_data_op(opcode) && ternm_cc_rp(m, qp) ? ECN_ECT0 : ECN_NOT_ECT;
}

/* ---- the reaction point -------------------------------------------------------------------- */

static void cc_unlimit(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_qp_cc *c = &qp->cc;

	if (!c->limited)
		return;
	c->limited = false;
	c->inc_deadline = TERNM_NO_DEADLINE;
	c->next_send = 0;
	if (c->pace_deadline != TERNM_NO_DEADLINE) {
		c->pace_deadline = TERNM_NO_DEADLINE;
		ternm_qp_work(m, qp);
	}
	m->rdma->stats.rp_limited_qps--;
}

/*
 * How far a limited QP may run ahead of its schedule: the embedding's transmit burst
 * allowance (tern_model_config.tx_burst_bytes; 0 in a virtual-time simulation) at its rate.
 */
static uint64_t pace_burst_ns(const struct tern_model *m, const struct ternm_qp_cc *c)
{
	return (uint64_t)m->cfg.tx_burst_bytes * 8000000ull / c->rc;
}

/*
 * HPCC (rdma_hpcc.c) and TIMELY (rdma_timely.c): pace @qp at @kbps, or not at all from the
 * line rate up. The limiter is DCQCN's (they never share a priority) without its increase
 * timer.
 */
void ternm_cc_pace(struct tern_model *m, struct ternm_qp *qp, uint64_t kbps)
{
	struct ternm_qp_cc *c = &qp->cc;

	if (kbps >= (uint64_t)ternm_link_speed_mbps(m) * 1000) {
		cc_unlimit(m, qp);
		return;
	}
	if (!kbps)
		kbps = 1;
	if (!c->limited) {
		c->limited = true;
		c->next_send = ternm_now(m);
		c->last_gap = 0;
		m->rdma->stats.rp_limited_qps++;
	} else if (c->last_gap && kbps != c->rc) {
		/* the gap after the last packet at the new rate, not the old one */
		uint64_t gap = (uint64_t)c->last_len * 8000000ull / kbps;

		c->next_send = c->next_send - c->last_gap + gap;
		c->last_gap = gap;
		c->rc = kbps;
		if (c->pace_deadline != TERNM_NO_DEADLINE) {
			c->pace_deadline = c->next_send - pace_burst_ns(m, c) / 2;
			ternm_qp_timer_sync(m, qp);
		}
	}
	c->inc_deadline = TERNM_NO_DEADLINE;	/* no DCQCN increase timer (left from RP) */
	c->rc = c->rt = kbps;
}

/* Rates are capped at the maximum; a QP back at the maximum is no longer limited. */
static void cc_cap(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_qp_cc *c = &qp->cc;
	uint64_t max = max_kbps(m);

	if (c->rt > max)
		c->rt = max;
	if (c->rc >= max) {
		c->rc = max;
		cc_unlimit(m, qp);
	}
}

/* One increase event (the stage that caused it already counted). */
static void cc_increase(struct tern_model *m, struct ternm_qp *qp)
{
	const struct ternm_cc *p = m->cc;
	struct ternm_qp_cc *c = &qp->cc;
	uint32_t f = p->rpg_threshold;

	if (c->t_stage >= f && c->b_stage >= f) {
		uint32_t i = (c->t_stage < c->b_stage ? c->t_stage : c->b_stage) - f + 1;

		c->rt += (uint64_t)p->rpg_hai_rate * 1000 * i;	/* hyper increase */
	} else if (c->t_stage >= f || c->b_stage >= f) {
		c->rt += (uint64_t)p->rpg_ai_rate * 1000;	/* additive increase */
	}
	if (c->rt > max_kbps(m))
		c->rt = max_kbps(m);
	c->rc = (c->rt + c->rc + 1) / 2;		/* (fast) recovery towards Rt, rounded up */
	m->rdma->stats.rp_rate_increase_events++;
	cc_cap(m, qp);
}

/* Apply the timer-stage events due by @now. */
static void cc_advance(struct tern_model *m, struct ternm_qp *qp, uint64_t now)
{
	struct ternm_qp_cc *c = &qp->cc;
	uint64_t period = (uint64_t)m->cc->rpg_time_reset * TERNM_NS_PER_US;

	while (c->limited && c->inc_deadline <= now) {
		c->inc_deadline += period;
		if (c->t_stage < STAGE_MAX)
			c->t_stage++;
		cc_increase(m, qp);
	}
}

/* Alpha periods of dce_tcp_rtt that ended by @now (only while limited). */
static void cc_alpha(struct tern_model *m, struct ternm_qp *qp, uint64_t now)
{
	const struct ternm_cc *p = m->cc;
	struct ternm_qp_cc *c = &qp->cc;
	uint64_t k = (uint64_t)p->dce_tcp_rtt * TERNM_NS_PER_US;
	uint64_t n;

	if (!c->limited || now < c->alpha_t + k)
		return;
	n = (now - c->alpha_t) / k;
	c->alpha_t += n * k;
	/* the first period that ended may have had a CNP; the rest had none */
	c->alpha = (uint32_t)((uint64_t)c->alpha * p->dce_tcp_g / 1024);
	if (c->cnp_in_period)
		c->alpha += 1024 - p->dce_tcp_g;
	c->cnp_in_period = false;
	/* alpha * g / 1024 < alpha: at most 1024 more steps before it is 0 */
	while (--n && c->alpha)
		c->alpha = (uint32_t)((uint64_t)c->alpha * p->dce_tcp_g / 1024);
	if (c->alpha > 1023)
		c->alpha = 1023;
}

/* A CNP for reaction point @qp at @now. */
static void cc_cnp(struct tern_model *m, struct ternm_qp *qp, uint64_t now)
{
	const struct ternm_cc *p = m->cc;
	struct ternm_qp_cc *c = &qp->cc;
	struct ternm_rdma_stats *s = &m->rdma->stats;
	uint64_t max = max_kbps(m), min = (uint64_t)p->rpg_min_rate * 1000;
	uint64_t dec, floor, rc;
	bool first;

	cc_advance(m, qp, now);
	cc_alpha(m, qp, now);
	first = !c->limited;
	if (first) {
		/* allocate the rate limiter */
		c->rc = c->rt = max;
		c->alpha = p->initial_alpha_value;
		c->alpha_t = now;
		c->next_send = now;
	} else if (now - c->last_cut_ns <
		   (uint64_t)p->rate_reduce_monitor_period * TERNM_NS_PER_US) {
		c->cnp_in_period = true;	/* one cut per monitor period: alpha only */
		return;
	}
	c->cnp_in_period = true;
	rc = c->rc;
	c->rt = rc;
	dec = rc * c->alpha >> p->rpg_gd;
	rc = dec < rc ? rc - dec : 0;
	floor = c->rc * p->rpg_min_dec_fac / 100;
	if (rc < floor)
		rc = floor;
	if (rc < min)
		rc = min;
	if (first && p->rate_to_set_on_first_cnp)
		rc = (uint64_t)p->rate_to_set_on_first_cnp * 1000;
	c->rc = rc;
	c->last_cut_ns = now;
	c->t_stage = c->b_stage = 0;
	c->bytes = 0;
	c->inc_deadline = now + (uint64_t)p->rpg_time_reset * TERNM_NS_PER_US;
	s->rp_rate_decrease_events++;
	if (rc <= min)
		s->rp_min_rate_events++;
	if (first) {
		c->limited = true;
		s->rp_limited_qps++;
	}
	cc_cap(m, qp);
	ternm_qp_timer_sync(m, qp);
}

/* Forget the QP's congestion state (RESET, ERR, destroy). */
void ternm_cc_qp_reset(struct tern_model *m, struct ternm_qp *qp)
{
	if (qp->cc.limited)
		m->rdma->stats.rp_limited_qps--;
	memset(&qp->cc, 0, sizeof(qp->cc));
	ternm_hpcc_qp_reset(qp);
	memset(&qp->timely, 0, sizeof(qp->timely));
	qp->cc.inc_deadline = qp->cc.pace_deadline = TERNM_NO_DEADLINE;
}

uint64_t ternm_cc_deadline(const struct ternm_qp *qp)
{
	const struct ternm_qp_cc *c = &qp->cc;
	uint64_t d = c->pace_deadline;

	if (c->limited && c->inc_deadline < d)
		d = c->inc_deadline;
	return d;
}

void ternm_cc_timer(struct tern_model *m, struct ternm_qp *qp, uint64_t now)
{
	struct ternm_qp_cc *c = &qp->cc;

	cc_advance(m, qp, now);
	if (c->pace_deadline <= now) {
		c->pace_deadline = TERNM_NO_DEADLINE;
		ternm_qp_work(m, qp);
	}
	ternm_qp_timer_sync(m, qp);
}

void ternm_cc_query_qp(struct tern_model *m, struct ternm_qp *qp, uint32_t *rate_mbps,
		       uint32_t *alpha)
{
	uint64_t now = ternm_now(m);

	*rate_mbps = *alpha = 0;
	if (!qp->cc.limited)
		return;
	cc_advance(m, qp, now);
	cc_alpha(m, qp, now);
	if (!qp->cc.limited)
		return;
	*rate_mbps = (uint32_t)(qp->cc.rc / 1000);
	*alpha = qp->cc.alpha;
}

/*
 * May @qp send a data packet (request, READ response) with headers from @path now? False
 * when its rate limiter's next allowed time is further in the future than the burst
 * allowance (the QP then waits on the timer list) or the MAC cannot send its priority now;
 * qp->tx_block says which.
 */
bool ternm_tx_gate(struct tern_model *m, struct ternm_qp *qp, const uint8_t *path)
{
	struct ternm_qp_cc *c = &qp->cc;

	if (c->limited) {
		uint64_t now = ternm_now(m);

		if (!ternm_cc_rp(m, qp) && !ternm_hpcc_qp(m, qp) && !ternm_timely_qp(m, qp)) {
			cc_unlimit(m, qp);	/* RP turned off, or the path changed priority */
		} else {
			cc_advance(m, qp, now);
			if (c->limited && c->next_send > now + pace_burst_ns(m, c)) {
				/* held: woken when half the burst allowance is free again */
				c->pace_deadline = c->next_send - pace_burst_ns(m, c) / 2;
				qp->tx_block = TX_PACE;
				ternm_qp_timer_sync(m, qp);
				return false;
			}
		}
	}
	if (!ternm_mac_may_send(m, ternm_path_prio(m, path), NULL)) {
		qp->tx_block = TX_MAC;
		return false;
	}
	return true;
}

/* @qp sent a data packet of @len frame bytes: the pacer and the byte stage advance. */
void ternm_cc_sent(struct tern_model *m, struct ternm_qp *qp, size_t len)
{
	const struct ternm_cc *p = m->cc;
	struct ternm_qp_cc *c = &qp->cc;
	uint64_t now;

	if (!c->limited || !len)
		return;
	/* the schedule: L * 8 / Rc per frame, from now if the QP fell behind it (idle) */
	now = ternm_now(m);
	if (c->next_send < now)
		c->next_send = now;
	c->last_len = (uint32_t)len;
	c->last_gap = (uint64_t)len * 8000000ull / c->rc;
	c->next_send += c->last_gap;
	if (!p->rpg_byte_reset || !ternm_cc_rp(m, qp))
		return;			/* no byte stage (or HPCC's pacing only) */
	c->bytes += len;
	while (c->limited && c->bytes >= p->rpg_byte_reset) {
		c->bytes -= p->rpg_byte_reset;
		if (c->b_stage < STAGE_MAX)
			c->b_stage++;
		cc_increase(m, qp);
	}
}

/* ---- notification point and CNP receive ------------------------------------------------ */

/*
 * A RoCE packet for @qp (NULL: UD/GSI, counted only) passed the checks: if it carries CE on
 * a priority with NP enabled, count it and answer with a CNP (rate limited per QP).
 */
void ternm_cc_np_rx(struct tern_model *m, struct ternm_qp *qp, const uint8_t *f, size_t len,
		    size_t l3, bool v6)
{
	const struct ternm_cc *p = m->cc;
	uint64_t now;

	if (!p->np_en || ternm_frame_ecn(f, l3, v6) != ECN_CE)
		return;
	if (!(p->np_en & (1u << (ternm_mac_frame_prio(m, f, len) & 7))))
		return;
	TERNM_QSTAT(m, qp, np_ecn_marked_roce_packets, 1);
	if (!qp || !ternm_qp_connected(qp))
		return;
	now = ternm_now(m);
	if (qp->cc.np_sent &&
	    now - qp->cc.np_last_ns < (uint64_t)p->min_time_between_cnps * TERNM_NS_PER_US)
		return;
	if (!ternm_cnp_send(m, qp))
		return;
	qp->cc.np_sent = true;
	qp->cc.np_last_ns = now;
	TERNM_QSTAT(m, qp, np_cnp_sent, 1);
}

/*
 * A CNP (ICRC already checked): @len the frame's length, @bth its BTH, @end its ICRC. Handled by an
 * RC or UC QP in RTR..SQE whose priority has RP; anything else is counted in rp_cnp_ignored.
 */
void ternm_cc_cnp_rx(struct tern_model *m, size_t len, const uint8_t *bth,
		     const uint8_t *end)
{
	struct ternm_rdma *r = m->rdma;
	struct ternm_qp *qp;

	if ((bth[1] & 0x0f) || (size_t)(end - bth) < BTH_LEN + CNP_RSVD_LEN) {
		r->stats.rx_roce_discards++;
		return;
	}
	if ((get_be16(bth + 2) & 0x7fff) != 0x7fff) {
		r->stats.rx_pkey_mismatch++;
		return;
	}
	qp = ternm_qp_get(m, get_be24(bth + 5));
	if (!qp || !ternm_qp_connected(qp) || qp->state < TERN_QPS_RTR ||
	    qp->state > TERN_QPS_SQE || !ternm_cc_rp(m, qp)) {
		r->stats.rp_cnp_ignored++;
		return;
	}
	TERNM_QSTAT(m, qp, rx_roce_packets, 1);
	TERNM_QSTAT(m, qp, rx_roce_bytes, len);
	TERNM_QSTAT(m, qp, rp_cnp_handled, 1);
	cc_cnp(m, qp, ternm_now(m));
}

/* ---- commands ---------------------------------------------------------------------------- */

#define CC_LINE		0	/* cc_dcqcn_ranges[].hi: the line rate */

/* DCQCN's 32-bit parameters, in the order SET_CC_PARAMS checks them, and their ranges. */
static const struct cc_range {
	size_t in_off, c_off;	/* in struct tern_cc_params, in struct ternm_cc */
	uint32_t lo, hi;
} cc_dcqcn_ranges[] = {
#define R(f, lo, hi)	{ offsetof(struct tern_cc_params, f), offsetof(struct ternm_cc, f), lo, hi }
	R(min_time_between_cnps, 0, 4095),
	R(rpg_time_reset, 1, TIME_MAX_US),
	R(rpg_byte_reset, 0, 1u << 30),
	R(rpg_threshold, 1, 31),
	R(rpg_max_rate, 0, CC_LINE),
	R(rpg_ai_rate, 1, CC_LINE),
	R(rpg_hai_rate, 1, CC_LINE),
	R(rpg_gd, 1, 15),
	R(rpg_min_dec_fac, 1, 100),
	R(rpg_min_rate, 1, CC_LINE),
	R(rate_to_set_on_first_cnp, 0, CC_LINE),
	R(dce_tcp_g, 0, 1023),
	R(dce_tcp_rtt, 1, TIME_MAX_US),
	R(rate_reduce_monitor_period, 0, TIME_MAX_US),
	R(initial_alpha_value, 0, 1023),
#undef R
};

/* The priorities, the CNP's DSCP and priority, and DCQCN's parameters from @in into @c. */
static int cc_parse_dcqcn(struct ternm_cc *c, const uint8_t *in, uint32_t line,
			  struct ternm_cmd_result *r)
{
	typedef struct tern_cc_params T;
	unsigned int i;

	c->rp_en = in[offsetof(T, rp_en)];
	c->np_en = in[offsetof(T, np_en)];
	c->cnp_dscp = in[offsetof(T, cnp_dscp)];
	c->cnp_prio = in[offsetof(T, cnp_prio)];
	if (c->cnp_dscp >= TERN_NUM_DSCP)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, cnp_dscp));
	if (c->cnp_prio >= TERN_NUM_PRIO)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, cnp_prio));
	for (i = 0; i < sizeof(cc_dcqcn_ranges) / sizeof(cc_dcqcn_ranges[0]); i++) {
		const struct cc_range *rg = &cc_dcqcn_ranges[i];
		uint32_t v = get_le32(in + rg->in_off);
		uint32_t hi = rg->hi == CC_LINE ? line : rg->hi;

		if (v < rg->lo || v > hi)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, rg->in_off);
		memcpy((uint8_t *)c + rg->c_off, &v, sizeof(v));
	}
	return TERN_CMD_OK;
}

/* HPCC's parameters from @in into @c; 0 selects the default (a driver that predates HPCC
 * sends zeros). */
static int cc_parse_hpcc(struct ternm_cc *c, const uint8_t *in, uint32_t line,
			 struct ternm_cmd_result *r)
{
	typedef struct tern_cc_params T;

	c->hpcc_en = in[offsetof(T, hpcc_en)];
	c->hpcc_max_stage = in[offsetof(T, hpcc_max_stage)];
	c->hpcc_eta = get_le16(CFLD(in, T, hpcc_eta));
	c->hpcc_ai_rate = get_le32(CFLD(in, T, hpcc_ai_rate));
	c->hpcc_base_rtt = get_le32(CFLD(in, T, hpcc_base_rtt));
	if (c->hpcc_en & c->rp_en)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, hpcc_en));
	if (!c->hpcc_max_stage)
		c->hpcc_max_stage = TERN_CC_DEF_HPCC_MAX_STAGE;
	if (c->hpcc_max_stage > 31)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, hpcc_max_stage));
	if (!c->hpcc_eta)
		c->hpcc_eta = TERN_CC_DEF_HPCC_ETA;
	if (c->hpcc_eta < 500 || c->hpcc_eta > 1000)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, hpcc_eta));
	if (!c->hpcc_ai_rate)
		c->hpcc_ai_rate = TERN_CC_DEF_HPCC_AI_RATE;
	if (c->hpcc_ai_rate > line)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, hpcc_ai_rate));
	if (!c->hpcc_base_rtt)
		c->hpcc_base_rtt = TERN_CC_DEF_HPCC_BASE_RTT;
	if (c->hpcc_base_rtt < TERN_CC_HPCC_BASE_RTT_MIN ||
	    c->hpcc_base_rtt > TERN_CC_HPCC_BASE_RTT_MAX)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, hpcc_base_rtt));
	return TERN_CMD_OK;
}

static int set_params(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	uint32_t line = ternm_link_speed_mbps(m);
	struct ternm_cc c;
	unsigned int i;
	int st;

	memset(&c, 0, sizeof(c));
	st = cc_parse_dcqcn(&c, in, line, r);
	if (st == TERN_CMD_OK)
		st = cc_parse_hpcc(&c, in, line, r);
	if (st == TERN_CMD_OK)
		st = ternm_timely_parse(&c, in, line, r);
	if (st != TERN_CMD_OK)
		return st;
	if (get_le32(CFLD(in, struct tern_cc_params, rsvd)))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(struct tern_cc_params, rsvd));
	*m->cc = c;
	/* limited QPs follow at once: RP off releases them, a lower maximum caps them */
	for (i = 0; i < TERNM_MAX_QP; i++) {
		struct ternm_qp *qp = m->rdma->qp[i];

		if (!qp || !qp->cc.limited)
			continue;
		if (!ternm_cc_rp(m, qp) && !ternm_hpcc_qp(m, qp) && !ternm_timely_qp(m, qp))
			cc_unlimit(m, qp);
		else if (ternm_cc_rp(m, qp))
			cc_cap(m, qp);
		else
			qp->cc.inc_deadline = TERNM_NO_DEADLINE;	/* now HPCC's or TIMELY's */
		ternm_qp_timer_sync(m, qp);
	}
	return TERN_CMD_OK;
}

static void query_params(struct tern_model *m, uint16_t out_len, struct ternm_cmd_result *r)
{
	typedef struct tern_cc_params T;
	const struct ternm_cc *c = m->cc;
	uint8_t *o = m->cmd_out;

	if (out_len < TERN_CC_PARAMS_V1_LEN) {
		r->status = TERN_CMD_BAD_LEN;
		r->syndrome = sizeof(T);
		return;
	}
	memset(o, 0, sizeof(T));
	o[offsetof(T, rp_en)] = c->rp_en;
	o[offsetof(T, np_en)] = c->np_en;
	o[offsetof(T, cnp_dscp)] = c->cnp_dscp;
	o[offsetof(T, cnp_prio)] = c->cnp_prio;
#define P(f)	put_le32(FLD(o, T, f), c->f)
	P(min_time_between_cnps);
	P(rpg_time_reset);
	P(rpg_byte_reset);
	P(rpg_threshold);
	P(rpg_max_rate);
	P(rpg_ai_rate);
	P(rpg_hai_rate);
	P(rpg_gd);
	P(rpg_min_dec_fac);
	P(rpg_min_rate);
	P(rate_to_set_on_first_cnp);
	P(dce_tcp_g);
	P(dce_tcp_rtt);
	P(rate_reduce_monitor_period);
	P(initial_alpha_value);
	o[offsetof(T, hpcc_en)] = c->hpcc_en;
	o[offsetof(T, hpcc_max_stage)] = c->hpcc_max_stage;
	put_le16(FLD(o, T, hpcc_eta), c->hpcc_eta);
	P(hpcc_ai_rate);
	P(hpcc_base_rtt);
#undef P
	ternm_timely_put(c, o);
	/* a driver from before TIMELY gets the fields it knows */
	r->out_size = out_len < sizeof(T) ? TERN_CC_PARAMS_V1_LEN : sizeof(T);
	r->status = TERN_CMD_OK;
}

void ternm_cc_cmd(struct tern_model *m, uint16_t opcode, const uint8_t *in, uint16_t out_len,
		  struct ternm_cmd_result *r)
{
	if (!m->cc || !m->rdma) {
		r->status = TERN_CMD_BAD_OPCODE;
		return;
	}
	if (opcode == TERN_CMD_SET_CC_PARAMS)
		r->status = (uint8_t)set_params(m, in, r);
	else if (opcode == TERN_CMD_QUERY_CC_PARAMS)
		query_params(m, out_len, r);
	else
		r->status = TERN_CMD_BAD_OPCODE;
}
