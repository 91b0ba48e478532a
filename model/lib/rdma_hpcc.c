/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: HPCC with in-band network telemetry (include/linux/tern/tern_dcb.h,
 * Documentation/hw/congestion.rst "HPCC").
 *
 * On the wire (frame_send() in rdma_wire.c calls ternm_int_tx() once the ICRC is written):
 * the request packets of a QP whose priority has HPCC get an empty REQUEST shim between the
 * UDP header and the BTH and go to TERN_INT_UDP_DPORT; switches append hop records; the
 * responder keeps the records of the last request and its next ACK carries them back in an
 * ECHO shim. A received INT frame (ternm_int_rx()) is checked, copied without its shim into
 * int_rx with the lengths and the port it had without INT (the ICRC is that frame's) and
 * handled as any RoCE frame; the records wait in int_hops for ternm_hpcc_rx().
 *
 * The requester (ternm_hpcc_rx() on an ACK with an echo) follows the paper's algorithm:
 * utilisation U from the records of this echo and the previous one, a reference window Wc
 * updated once per RTT (the first ACK at or past the PSN sent when Wc last changed) and a
 * tentative window W on every other ACK. W bounds the request bytes in flight
 * (ternm_hpcc_gate()) and sets the pacer to W / T (ternm_cc_pace(), rdma_cc.c).
 *
 * READ responses: the responder's QP is their data sender. Its response packets carry a
 * REQUEST shim; the requester sends the records of each back at once in a RESP_ECHO (an
 * ACK-opcode packet with the response's PSN, telemetry only: ternm_hpcc_rx() takes it before
 * the ACK path could see it). The echoes feed the same U, W and pacer; the update once per
 * RTT counts in response PSNs (rsp_update_psn), and W bounds the new responses in flight
 * (those sent after the highest PSN echoed, ternm_hpcc_rsp_gate()). Resent responses
 * (a READ asked for again, a hole) are paced but not windowed: recovery never waits for an
 * echo.
 */
#include "frame.h"
#include "rdma.h"

#define HOP_LEN		sizeof(struct tern_int_hop)
#define SHIM_LEN	sizeof(struct tern_int_shim)
#define U_ONE		65536u		/* utilisation 1.0 */
#define U_MAX		(256u * U_ONE)	/* one hop's utilisation is clamped here */

static bool is_req_op(uint8_t op)
{
	if (op >= IBOP_SR_WRITE_MIDDLE && op <= IBOP_SR_SEND_LAST_INV)
		return true;		/* selective repeat's SEND/WRITE packets */
	op &= 0x1f;			/* UC: the RC opcode */
	return op <= IBOP_READ_REQ || op == IBOP_CMP_SWAP || op == IBOP_FETCH_ADD ||
	       op == IBOP_SEND_LAST_INV || op == IBOP_SEND_ONLY_INV;
}

static bool is_read_resp(uint8_t op)
{
	return op >= IBOP_READ_RESP_FIRST && op <= IBOP_READ_RESP_ONLY;
}

/* Does @qp (RC or UC) run HPCC: its priority has the bit in hpcc_en? */
bool ternm_hpcc_qp(const struct tern_model *m, const struct ternm_qp *qp)
{
	if (!m->cc->hpcc_en || !ternm_qp_connected(qp))
		return false;
	return m->cc->hpcc_en & (1u << ternm_path_prio(m, qp->path));
}

void ternm_hpcc_qp_reset(struct ternm_qp *qp)
{
	memset(&qp->hpcc, 0, sizeof(qp->hpcc));
}

/* The line-rate BDP B * T: the initial and largest window. */
static uint64_t winit(const struct tern_model *m)
{
	return (uint64_t)ternm_link_speed_mbps(m) * m->cc->hpcc_base_rtt / 8000;
}

/* W_AI = hpcc_ai_rate * T, at least one byte. */
static uint64_t wai(const struct tern_model *m)
{
	uint64_t w = (uint64_t)m->cc->hpcc_ai_rate * m->cc->hpcc_base_rtt / 8000;

	return w ? w : 1;
}

static void hpcc_init(struct tern_model *m, struct ternm_qp *qp)
{
	struct ternm_qp_hpcc *h = &qp->hpcc;

	h->init = true;
	h->w = h->wc = winit(m);
	h->u = 0;
	h->inc_stage = 0;
	h->nprev = 0;
	h->last_update_psn = qp->sent_psn;
}

/*
 * QUERY_QP: does @qp run HPCC, and if so its window (the line-rate BDP until its first
 * request), its utilisation estimate and its stage, saturated to the reply's fields.
 */
bool ternm_hpcc_query(const struct tern_model *m, const struct ternm_qp *qp,
		      struct ternm_hpcc_view *v)
{
	const struct ternm_qp_hpcc *h = &qp->hpcc;
	uint64_t w, u;

	memset(v, 0, sizeof(*v));
	if (!ternm_hpcc_qp(m, qp))
		return false;
	w = h->init ? h->w : winit(m);
	u = h->u * 1000 / U_ONE;
	v->window = w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
	v->util = u > UINT16_MAX ? UINT16_MAX : (uint16_t)u;
	v->inc_stage = h->inc_stage > UINT8_MAX ? UINT8_MAX : (uint8_t)h->inc_stage;
	return true;
}

/*
 * May @qp send a request now? Only while its request bytes in flight are below W (a QP
 * with nothing in flight always may); the ACK that frees the window wakes it.
 */
bool ternm_hpcc_gate(struct tern_model *m, struct ternm_qp *qp)
{
	int32_t n;

	if (!ternm_hpcc_qp(m, qp))
		return true;
	if (!qp->hpcc.init)
		hpcc_init(m, qp);
	n = psn_diff(qp->req_psn, qp->una_psn);
	return n <= 0 || (uint64_t)n * qp->mtu < qp->hpcc.w;
}

/* Do @qp's frames carry INT: HPCC on its priority, and not to this port (loopback)? */
static bool int_path(const struct tern_model *m, const struct ternm_qp *qp)
{
	return ternm_hpcc_qp(m, qp) && memcmp(qp->hdr, m->mac, 6);
}

/* New READ responses of @qp in flight: sent after the highest PSN echoed (at most the ring). */
static unsigned int rsp_in_flight(const struct ternm_qp_hpcc *h)
{
	unsigned int i, n = 0;

	for (i = h->rsp_n; i > 0; i--) {
		uint32_t psn = h->rsp_psn[(h->rsp_head + i - 1) % TERNM_HPCC_RSP_RING];

		if (psn_diff(psn, h->rsp_echo_psn) <= 0)
			break;
		n++;
	}
	return n;
}

/*
 * May @qp send its READ response packet @psn now? A new one only while its new responses in
 * flight are below W (and below the TERNM_HPCC_RSP_RING it counts them in; with none in
 * flight it always may); a resent one always (recovery). A RESP_ECHO wakes a QP this holds.
 */
bool ternm_hpcc_rsp_gate(struct tern_model *m, struct ternm_qp *qp, uint32_t psn)
{
	struct ternm_qp_hpcc *h = &qp->hpcc;
	unsigned int n;

	if (!int_path(m, qp))
		return true;
	if (!h->init)
		hpcc_init(m, qp);
	if (!h->rsp_init || psn_diff(psn, h->rsp_hi) < 0)
		return true;
	n = rsp_in_flight(h);
	return !n || (n < TERNM_HPCC_RSP_RING && (uint64_t)n * qp->mtu < h->w);
}

/* @qp sent READ response packet @psn (with INT when int_path()): count it in flight. */
void ternm_hpcc_rsp_sent(struct tern_model *m, struct ternm_qp *qp, uint32_t psn)
{
	struct ternm_qp_hpcc *h = &qp->hpcc;

	if (!int_path(m, qp))
		return;
	if (!h->rsp_init) {
		h->rsp_init = true;
		h->rsp_n = h->rsp_head = 0;
		h->rsp_hi = psn;
		h->rsp_echo_psn = psn_add(psn, TERNM_PSN_MASK);	/* psn - 1 */
		h->rsp_update_psn = psn;
	}
	if (psn_diff(psn, h->rsp_hi) < 0)
		return;			/* resent: not new in flight */
	if (h->rsp_n == TERNM_HPCC_RSP_RING) {
		h->rsp_head = (uint16_t)((h->rsp_head + 1) % TERNM_HPCC_RSP_RING);
		h->rsp_n--;
	}
	h->rsp_psn[(h->rsp_head + h->rsp_n) % TERNM_HPCC_RSP_RING] = psn;
	h->rsp_n++;
	h->rsp_hi = psn_add(psn, 1);
}

/* ---- the requester's window ------------------------------------------------------------- */

/* Utilisation of the path from this echo's @n records and the previous ones (paper: U). */
static void measure(struct tern_model *m, struct ternm_qp_hpcc *h, const uint8_t *rec,
		    unsigned int n)
{
	uint64_t t = m->cc->hpcc_base_rtt, tau = t, u = 0;
	bool measured = false;
	unsigned int i;

	for (i = 0; i < n; i++, rec += HOP_LEN) {
		uint32_t ts = get_be32(rec), tx = get_be32(rec + 4), q = get_be32(rec + 8);
		uint32_t rate = get_be32(rec + 12);
		uint32_t dt = ts - h->prev_ts[i], qmin = q < h->prev_q[i] ? q : h->prev_q[i];
		uint64_t ui;

		if (!dt || !rate)
			continue;
		/* qlen / (B * T) + txRate / B, with B in bytes/ns = rate / 8000 */
		ui = (uint64_t)qmin * 8000 * U_ONE / ((uint64_t)rate * t) +
		     (uint64_t)(uint32_t)(tx - h->prev_tx[i]) * 8000 * U_ONE /
		     ((uint64_t)dt * rate);
		if (ui > U_MAX)
			ui = U_MAX;
		if (!measured || ui > u) {
			measured = true;
			u = ui;
			tau = dt;
		}
	}
	if (!measured)
		return;		/* no time passed at any hop: nothing learnt */
	if (tau > t)
		tau = t;
	h->u = (h->u * (t - tau) + u * tau) / t;
}

/* The paper's ComputeWind: W from U, and Wc with it when @update. */
static void compute_wind(struct tern_model *m, struct ternm_qp_hpcc *h, bool update)
{
	const struct ternm_cc *p = m->cc;
	uint64_t eta = (uint64_t)p->hpcc_eta * U_ONE / 1000, max = winit(m), ai = wai(m);
	uint64_t w;

	if (h->u >= eta || h->inc_stage >= p->hpcc_max_stage) {
		w = h->u ? h->wc * eta / h->u + ai : max;
		if (w > max)
			w = max;
		if (update) {
			h->inc_stage = 0;
			h->wc = w;
		}
	} else {
		w = h->wc + ai;
		if (w > max)
			w = max;
		if (update) {
			h->inc_stage++;
			h->wc = w;
		}
	}
	if (w < ai)
		w = ai;
	h->w = w;
}

/*
 * An echo for HPCC data sender @qp with @n records at @rec (n may be 0: no switch): an ACK of
 * its requests up to @psn, or (@rsp) a RESP_ECHO of its READ response @psn.
 */
static void hpcc_echo(struct tern_model *m, struct ternm_qp *qp, uint32_t psn,
		      const uint8_t *rec, unsigned int n, bool rsp)
{
	struct ternm_qp_hpcc *h = &qp->hpcc;
	uint64_t t = m->cc->hpcc_base_rtt;
	bool update;
	unsigned int i;

	m->rdma->stats.hpcc_int_echo_acks++;
	if (!h->init)
		hpcc_init(m, qp);
	if (rsp) {
		/* only an echo of a response sent: anything else teaches nothing */
		if (!h->rsp_init || psn_diff(psn, h->rsp_hi) >= 0)
			return;
		if (psn_diff(psn, h->rsp_echo_psn) > 0)
			h->rsp_echo_psn = psn;
	}
	if (n && h->nprev == n) {
		measure(m, h, rec, n);
		update = psn_diff(psn, rsp ? h->rsp_update_psn : h->last_update_psn) >= 0;
		compute_wind(m, h, update);
		if (update) {
			if (rsp)
				h->rsp_update_psn = h->rsp_hi;
			else
				h->last_update_psn = qp->sent_psn;
			m->rdma->stats.hpcc_window_updates++;
		}
		/* the pacer: W / T bytes per ns, in kb/s */
		ternm_cc_pace(m, qp, h->w * 8000000 / t);
	}
	for (i = 0; i < n; i++) {
		h->prev_ts[i] = get_be32(rec + i * HOP_LEN);
		h->prev_tx[i] = get_be32(rec + i * HOP_LEN + 4);
		h->prev_q[i] = get_be32(rec + i * HOP_LEN + 8);
	}
	h->nprev = (uint8_t)n;
	if (rsp ? qp->fifo_count != 0 : ternm_req_has_work(qp))
		ternm_qp_work(m, qp);
}

/*
 * The requester of @qp took READ response @psn with INT records (r->int_hops): send them
 * back to the responder at once in a RESP_ECHO, an ACK-opcode packet (AETH ACK, MSN 0) with
 * the response's PSN, whether or not HPCC runs on the QP's priority here (the responder's
 * window counts on the echoes; INT is on, or the response would not have been taken). Never
 * without its shim: ternm_int_tx() always inserts it into this one (not to this port, room
 * in the transmit buffer), and a RESP_ECHO is never an ACK.
 */
static void rsp_echo_send(struct tern_model *m, struct ternm_qp *qp, uint32_t psn)
{
	struct ternm_rdma *r = m->rdma;
	uint8_t *x;

	if (qp->type != TERN_QPT_RC || !ternm_qp_connected(qp) || !m->cc->hpcc_en ||
	    !memcmp(qp->hdr, m->mac, 6))
		return;
	x = ternm_pkt_start(m, qp, IBOP_ACK, false, false, psn);
	x[0] = AETH_ACK;
	x[1] = x[2] = x[3] = 0;
	r->int_rsp_echo = true;
	ternm_pkt_send(m, qp, x + AETH_LEN);
	r->int_rsp_echo = false;
}

/*
 * A packet @p for @qp that arrived with an INT shim (m->rdma->int_type, int_hops): a request
 * keeps its records for the next ACK when the QP runs HPCC here; an ACK's echo feeds the
 * requester's window; a READ response's records go back at once in a RESP_ECHO, and a
 * RESP_ECHO feeds the responder's. True when the packet was a RESP_ECHO: it is taken here
 * (or dropped), never handled as an ACK.
 */
bool ternm_hpcc_rx(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p)
{
	struct ternm_rdma *r = m->rdma;
	uint8_t type = r->int_type;

	r->int_type = 0;	/* for this packet only (not a loopback it causes) */
	if (type == TERN_INT_TYPE_RESP_ECHO) {
		if (p->opcode == IBOP_ACK && ternm_hpcc_qp(m, qp))
			hpcc_echo(m, qp, p->psn, r->int_hops, r->int_n, true);
		return true;
	}
	if (type == TERN_INT_TYPE_REQUEST && is_read_resp(p->opcode)) {
		rsp_echo_send(m, qp, p->psn);
		return false;
	}
	if (!type || !ternm_hpcc_qp(m, qp))
		return false;
	if (type == TERN_INT_TYPE_REQUEST && is_req_op(p->opcode)) {
		memcpy(qp->hpcc.echo, r->int_hops, (size_t)r->int_n * HOP_LEN);
		qp->hpcc.echo_n = r->int_n;
		qp->hpcc.echo_valid = true;
	} else if (type == TERN_INT_TYPE_ECHO &&
		   (p->opcode == IBOP_ACK || p->opcode == IBOP_ATOMIC_ACK)) {
		hpcc_echo(m, qp, p->psn, r->int_hops, r->int_n, false);
	}
	return false;
}

/* ---- the shim on the wire ------------------------------------------------------------------ */

/* Add @d (may be negative) to the IP and UDP lengths of the frame at @l3/@udp. */
static void lengths_add(uint8_t *l3, bool v6, uint8_t *udp, int d)
{
	put_be16(udp + 4, (uint16_t)(get_be16(udp + 4) + d));
	if (v6) {
		put_be16(l3 + 4, (uint16_t)(get_be16(l3 + 4) + d));
	} else {
		put_be16(l3 + 2, (uint16_t)(get_be16(l3 + 2) + d));
		frame_ipv4_csum_set(l3, FRAME_IPV4_HLEN);
	}
}

/*
 * frame_send(): the packet of @len bytes at @f (BTH at @bth, ICRC written, @room bytes of
 * buffer from @f) gets a REQUEST shim (a request of an HPCC QP) or an ECHO shim (an ACK
 * while the responder holds telemetry to echo). Returns the bytes inserted (0: none). Not
 * for frames to this port (loopback: no switch to fill it in). The IPv6 UDP checksum is the
 * caller's, after this.
 */
size_t ternm_int_tx(struct tern_model *m, struct ternm_qp *qp, uint8_t *f, uint8_t *bth,
		    size_t len, size_t room)
{
	struct ternm_qp_hpcc *h = &qp->hpcc;
	struct ternm_rdma *r = m->rdma;
	uint8_t *udp = bth - FRAME_UDP_HLEN, type, n = 0;
	const uint8_t *rec = h->echo;
	size_t g;

	if (!memcmp(f, m->mac, 6))
		return 0;
	if (r->int_rsp_echo) {
		type = TERN_INT_TYPE_RESP_ECHO;	/* rsp_echo_send(): the response's records */
		n = r->int_n;
		rec = r->int_hops;
	} else if (!ternm_hpcc_qp(m, qp)) {
		return 0;
	} else if (is_req_op(bth[0]) || is_read_resp(bth[0])) {
		type = TERN_INT_TYPE_REQUEST;
	} else if ((bth[0] == IBOP_ACK || bth[0] == IBOP_ATOMIC_ACK) && h->echo_valid) {
		type = TERN_INT_TYPE_ECHO;
		n = h->echo_n;
	} else {
		return 0;
	}
	g = SHIM_LEN + (size_t)n * HOP_LEN;
	if (len + g > room)
		return 0;
	memmove(bth + g, bth, len - (size_t)(bth - f));
	bth[0] = type;
	bth[1] = n;
	bth[2] = TERN_INT_MAX_HOPS;
	bth[3] = 0;
	put_be16(bth + 4, TERN_ROCE_UDP_DPORT);
	put_be16(bth + 6, 0);
	if (type != TERN_INT_TYPE_REQUEST) {
		memcpy(bth + SHIM_LEN, rec, (size_t)n * HOP_LEN);
		if (type == TERN_INT_TYPE_ECHO)
			h->echo_valid = false;
		m->rdma->stats.hpcc_int_echoes_sent++;
	}
	put_be16(udp + 2, TERN_INT_UDP_DPORT);
	lengths_add(f + qp->l3_off, qp->ipv6, udp, (int)g);
	return g;
}

/*
 * A frame to TERN_INT_UDP_DPORT (@l3, @udp from frame_parse()): check the shim, keep its
 * records, and hand the frame without it to ternm_rdma_rx(). Malformed: rx_int_discards.
 * The copy buffer is one: an INT frame that arrives while another is being handled (only
 * through a loopback, which never carries INT) is dropped.
 */
void ternm_int_rx(struct tern_model *m, const uint8_t *f, size_t len, size_t l3, bool v6,
		  size_t udp)
{
	struct ternm_rdma *r = m->rdma;
	const uint8_t *s = f + udp + FRAME_UDP_HLEN;
	size_t g, ulen = get_be16(f + udp + 4);
	uint8_t *c = r->int_rx;

	if (r->int_busy || len > sizeof(r->int_rx) || ulen < FRAME_UDP_HLEN + SHIM_LEN ||
	    udp + ulen > len)
		goto bad;
	if ((s[0] != TERN_INT_TYPE_REQUEST && s[0] != TERN_INT_TYPE_ECHO &&
	     s[0] != TERN_INT_TYPE_RESP_ECHO) ||
	    !s[2] || s[2] > TERN_INT_MAX_HOPS || s[1] > s[2] || (s[3] & ~TERN_INT_F_OVERFLOW) ||
	    get_be16(s + 4) != TERN_ROCE_UDP_DPORT || get_be16(s + 6))
		goto bad;
	g = SHIM_LEN + (size_t)s[1] * HOP_LEN;
	if (ulen < FRAME_UDP_HLEN + g + BTH_LEN + ICRC_LEN)
		goto bad;
	/* the IP header as the RoCE path checks it, before its lengths change: no options */
	if (v6 ? get_be16(f + l3 + 4) < ulen :
	    udp != l3 + FRAME_IPV4_HLEN || get_be16(f + l3 + 2) < FRAME_IPV4_HLEN + ulen ||
	    !frame_ipv4_csum_ok(f + l3, FRAME_IPV4_HLEN))
		goto bad;
	memcpy(c, f, udp + FRAME_UDP_HLEN);
	memcpy(c + udp + FRAME_UDP_HLEN, s + g, len - udp - FRAME_UDP_HLEN - g);
	put_be16(c + udp + 2, TERN_ROCE_UDP_DPORT);
	lengths_add(c + l3, v6, c + udp, -(int)g);
	r->int_type = s[0];
	r->int_n = s[1];
	memcpy(r->int_hops, s + SHIM_LEN, (size_t)s[1] * HOP_LEN);
	r->int_busy = true;
	ternm_rdma_rx(m, c, len - g);
	r->int_busy = false;
	r->int_type = 0;
	return;
bad:
	r->stats.rx_int_discards++;
}
