/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the
 * Datacenter", SIGCOMM 2015; include/linux/tern/tern_dcb.h, Documentation/hw/congestion.rst
 * "TIMELY"), rate-based, per RC QP, from round trips the device times on its own clock.
 *
 * The sample point is the requester's (rdma_req.c): req_sent() hands every request packet
 * to ternm_timely_sent(), which opens a segment on a new PSN when none is being timed and
 * lets it take the new packets after it up to timely_seg bytes; the probe (struct
 * ternm_rtt_probe, rdma.h) holds the segment's last PSN and when that packet
 * left. retx_arm() (every acknowledgement that may move una_psn) calls ternm_timely_acked(),
 * which ends the sample once the segment is acknowledged; a resend of a PSN up to it voids
 * it (Karn). The segment's last packet asks for an ACK (ternm_timely_ackreq()).
 *
 * Fixed point: rates in kb/s, times in ns, alpha and beta in 1/1024, rtt_diff in 1/1024 ns,
 * the normalised gradient and the decrease factors in 1/65536. The rate drives the pacer
 * DCQCN and HPCC use (ternm_cc_pace(), rdma_cc.c): not limited from the line rate up.
 */
#include "rdma.h"

#define G_ONE		65536		/* gradient / factor 1.0 */
#define RTT_CAP		0xffffffffull	/* a sample is clamped to 2^32 - 1 ns (4.29 s) */

/* Does @qp (RC) run TIMELY: its priority has the bit in timely_en? */
bool ternm_timely_qp(const struct tern_model *m, const struct ternm_qp *qp)
{
	if (!m->cc->timely_en || qp->type != TERN_QPT_RC)
		return false;
	return m->cc->timely_en & (1u << ternm_path_prio(m, qp->path));
}

static uint64_t line_kbps(const struct tern_model *m)
{
	return (uint64_t)ternm_link_speed_mbps(m) * 1000;
}

/*
 * QUERY_QP: does @qp run TIMELY, and if so its rate (the line rate before its first cut),
 * its last sample, its smoothed difference and its run of non-positive gradients.
 */
bool ternm_timely_query(const struct tern_model *m, const struct ternm_qp *qp,
			struct ternm_timely_view *v)
{
	const struct ternm_qp_timely *t = &qp->timely;
	int64_t d;

	memset(v, 0, sizeof(*v));
	if (!ternm_timely_qp(m, qp))
		return false;
	v->rate_mbps = (uint32_t)((t->init ? t->rate : line_kbps(m)) / 1000);
	v->rtt_ns = (uint32_t)t->rtt;
	d = t->rtt_diff / 1024;
	v->rtt_diff_ns = d > INT32_MAX ? INT32_MAX : d < INT32_MIN ? INT32_MIN : (int32_t)d;
	v->hai_count = t->hai_count > UINT8_MAX ? UINT8_MAX : (uint8_t)t->hai_count;
	return true;
}

/* Does the request packet about to go out close the segment being timed (ask for an ACK)? */
bool ternm_timely_ackreq(const struct tern_model *m, const struct ternm_qp *qp)
{
	const struct ternm_qp_timely *t = &qp->timely;
	uint32_t have;

	if (!ternm_timely_qp(m, qp))
		return false;
	if (t->probe.on && !t->seg_open)
		return false;		/* a closed segment waits for its ACK */
	have = t->probe.on ? t->seg_bytes : 0;
	return (uint64_t)have + qp->mtu >= m->cc->timely_seg;
}

/*
 * A request for PSNs [@psn, @psn + @n) went out (@len frame bytes, not 0; before sent_psn
 * moves). A segment counts PSNs x MTU, as ternm_timely_ackreq() does.
 */
void ternm_timely_sent(struct tern_model *m, struct ternm_qp *qp, uint32_t psn, uint32_t n,
		       size_t len)
{
	struct ternm_qp_timely *t = &qp->timely;
	uint32_t last = psn_add(psn, n ? n - 1 : 0);

	(void)len;
	if (!ternm_timely_qp(m, qp) || !n)
		return;
	if (psn_diff(psn, qp->sent_psn) < 0) {
		ternm_probe_resent(&t->probe, psn);
		if (!t->probe.on)
			t->seg_open = false;
		return;
	}
	if (!t->probe.on) {
		t->seg_bytes = 0;
		t->seg_open = true;
	} else if (!t->seg_open) {
		return;
	}
	/* the segment's last packet so far, and when it left; its size in PSNs x MTU */
	ternm_probe_start(&t->probe, last, ternm_now(m));
	t->seg_bytes += (uint64_t)n * qp->mtu > m->cc->timely_seg ? m->cc->timely_seg :
			n * qp->mtu;
	if (t->seg_bytes >= m->cc->timely_seg)
		t->seg_open = false;
}

/* rate * (1 - @factor / G_ONE), at least @min. */
static uint64_t cut(uint64_t rate, uint64_t factor, uint64_t min)
{
	uint64_t r = factor >= G_ONE ? 0 : rate * (G_ONE - factor) / G_ONE;

	return r < min ? min : r;
}

/* One completion event: the paper's Algorithm 1 with a sample of @rtt ns. */
static void timely_event(struct tern_model *m, struct ternm_qp *qp, uint64_t rtt)
{
	const struct ternm_cc *p = m->cc;
	struct ternm_qp_timely *t = &qp->timely;
	struct ternm_rdma_stats *s = &m->rdma->stats;
	uint64_t line = line_kbps(m), min = (uint64_t)p->timely_min_rate * 1000;
	uint64_t delta = (uint64_t)p->timely_delta * 1000, old;
	int64_t g;

	if (rtt > RTT_CAP)
		rtt = RTT_CAP;
	if (!t->init) {
		t->init = true;
		t->rate = line;
		t->prev_rtt = rtt;	/* no difference yet */
		t->rtt_diff = 0;
		t->hai_count = 0;
	}
	s->timely_rtt_samples++;
	/* rtt_diff = (1 - alpha) rtt_diff + alpha (rtt - prev_rtt), in 1/1024 ns */
	t->rtt_diff += ((int64_t)rtt - (int64_t)t->prev_rtt) * p->timely_alpha -
		       t->rtt_diff * p->timely_alpha / 1024;
	t->prev_rtt = rtt;
	t->rtt = rtt;
	/* normalised gradient rtt_diff / min_rtt in 1/65536 */
	g = t->rtt_diff * (G_ONE / 1024) / (int64_t)p->timely_min_rtt;
	if (g <= 0) {
		if (t->hai_count < UINT32_MAX)
			t->hai_count++;
	} else {
		t->hai_count = 0;
	}
	old = t->rate;
	if (rtt < p->timely_t_low) {
		t->rate += delta;
	} else if (rtt > p->timely_t_high) {
		/* rate * (1 - beta (1 - t_high / rtt)) */
		t->rate = cut(t->rate, (uint64_t)p->timely_beta * (G_ONE / 1024) *
				       (rtt - p->timely_t_high) / rtt, min);
	} else if (g <= 0) {
		uint32_t n = t->hai_count >= p->timely_hai_thresh ? p->timely_hai_thresh : 1;

		t->rate += n * delta;
	} else {
		t->rate = cut(t->rate, (uint64_t)p->timely_beta * (uint64_t)g / 1024, min);
	}
	if (t->rate > line)
		t->rate = line;
	if (t->rate < min)
		t->rate = min;
	if (t->rate < old)
		s->timely_rate_decreases++;
	else if (t->rate > old)
		s->timely_rate_increases++;
	ternm_cc_pace(m, qp, t->rate);
}

/* An acknowledgement may have moved una_psn: the segment acknowledged ends its sample. */
void ternm_timely_acked(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_qp_timely *t = &qp->timely;
	uint64_t ns;

	if (!t->probe.on || !ternm_probe_acked(&t->probe, qp->una_psn, ternm_now(m), &ns))
		return;
	t->seg_open = false;
	if (ternm_timely_qp(m, qp))
		timely_event(m, qp, ns);
}

/* ---- parameters ----------------------------------------------------------------------------- */

/*
 * TIMELY's parameters from @in into @c (after DCQCN's and HPCC's); 0 in any but timely_en
 * selects the default (an input from before TIMELY reads as zeros here).
 */
int ternm_timely_parse(struct ternm_cc *c, const uint8_t *in, uint32_t line,
		       struct ternm_cmd_result *r)
{
	typedef struct tern_cc_params T;
	static const struct {
		size_t off;
		uint32_t def, lo, hi;	/* hi 0: the line rate */
	} u32[] = {
		{ offsetof(T, timely_delta), TERN_CC_DEF_TIMELY_DELTA, 1, 0 },
		{ offsetof(T, timely_t_low), TERN_CC_DEF_TIMELY_T_LOW, TERN_CC_TIMELY_RTT_MIN,
		  TERN_CC_TIMELY_RTT_MAX },
		{ offsetof(T, timely_t_high), TERN_CC_DEF_TIMELY_T_HIGH, TERN_CC_TIMELY_RTT_MIN,
		  TERN_CC_TIMELY_RTT_MAX },
		{ offsetof(T, timely_min_rtt), TERN_CC_DEF_TIMELY_MIN_RTT, TERN_CC_TIMELY_RTT_MIN,
		  TERN_CC_TIMELY_RTT_MAX },
		{ offsetof(T, timely_seg), TERN_CC_DEF_TIMELY_SEG, TERN_CC_TIMELY_SEG_MIN,
		  TERN_CC_TIMELY_SEG_MAX },
		{ offsetof(T, timely_min_rate), TERN_CC_DEF_TIMELY_MIN_RATE, 1, 0 },
	};
	uint32_t v[sizeof(u32) / sizeof(u32[0])];
	unsigned int i;

	c->timely_en = in[offsetof(T, timely_en)];
	c->timely_hai_thresh = in[offsetof(T, timely_hai_thresh)];
	c->timely_alpha = get_le16(CFLD(in, T, timely_alpha));
	c->timely_beta = get_le16(CFLD(in, T, timely_beta));
	if (c->timely_en & (c->rp_en | c->hpcc_en))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, timely_en));
	if (!c->timely_hai_thresh)
		c->timely_hai_thresh = TERN_CC_DEF_TIMELY_HAI_THRESH;
	if (c->timely_hai_thresh > TERN_CC_TIMELY_HAI_MAX)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, timely_hai_thresh));
	if (!c->timely_alpha)
		c->timely_alpha = TERN_CC_DEF_TIMELY_ALPHA;
	if (c->timely_alpha > 1024)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, timely_alpha));
	if (!c->timely_beta)
		c->timely_beta = TERN_CC_DEF_TIMELY_BETA;
	if (c->timely_beta > 1024)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, timely_beta));
	if (get_le16(CFLD(in, T, rsvd0)))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, rsvd0));
	for (i = 0; i < sizeof(u32) / sizeof(u32[0]); i++) {
		uint32_t hi = u32[i].hi ? u32[i].hi : line;

		v[i] = get_le32(in + u32[i].off);
		if (!v[i])
			v[i] = u32[i].def;
		if (v[i] < u32[i].lo || v[i] > hi ||
		    (u32[i].off == offsetof(T, timely_t_high) && v[i] <= v[1]))
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, u32[i].off);
	}
	c->timely_delta = v[0];
	c->timely_t_low = v[1];
	c->timely_t_high = v[2];
	c->timely_min_rtt = v[3];
	c->timely_seg = v[4];
	c->timely_min_rate = v[5];
	return TERN_CMD_OK;
}

/* QUERY_CC_PARAMS: TIMELY's fields of @c into the reply @o. */
void ternm_timely_put(const struct ternm_cc *c, uint8_t *o)
{
	typedef struct tern_cc_params T;

	o[offsetof(T, timely_en)] = c->timely_en;
	o[offsetof(T, timely_hai_thresh)] = c->timely_hai_thresh;
	put_le16(FLD(o, T, timely_alpha), c->timely_alpha);
	put_le16(FLD(o, T, timely_beta), c->timely_beta);
	put_le32(FLD(o, T, timely_delta), c->timely_delta);
	put_le32(FLD(o, T, timely_t_low), c->timely_t_low);
	put_le32(FLD(o, T, timely_t_high), c->timely_t_high);
	put_le32(FLD(o, T, timely_min_rtt), c->timely_min_rtt);
	put_le32(FLD(o, T, timely_seg), c->timely_seg);
	put_le32(FLD(o, T, timely_min_rate), c->timely_min_rate);
}
