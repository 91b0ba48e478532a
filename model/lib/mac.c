/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: the MAC between the engines and the wire (Documentation/hw/dcb.rst).
 *
 *  - DCB configuration (SET_DCB / QUERY_DCB) and classification of frames to priorities.
 *  - Line-rate serialization: a frame of L bytes keeps the transmitter busy for
 *    (L + 24) * 8 bit times (preamble and SFD 8, FCS 4, inter-frame gap 12 bytes). The line
 *    clock keeps the fraction of a nanosecond, so spacing is exact at any speed.
 *    ternm_mac_may_send() refuses while the line is busy more than tx_burst_bytes ahead of
 *    now, or while the priority is paused by the peer; the refused sender is kicked by the
 *    MAC's timer when it may go again (never a busy loop).
 *  - Received 802.1Qbb frames: counted for every priority, honoured for pfc_en priorities.
 *  - The lossless receive buffer: frames of a pfc_en priority that the Ethernet RX ring cannot
 *    take now wait here (one FIFO, so arrival order is kept across priorities) and drain into
 *    the ring as descriptors appear. XOFF at xoff_bytes, refreshed every half pause time,
 *    XON at xon_bytes. The PFC frames we send go through ternm_mac_tx() like any other.
 *  - The storm guard, in both directions (TERN_EQE_PFC_STORM).
 *
 * Pause state of a priority "as the peer asked" (rx_paused) is kept for every priority (it
 * feeds the counters); only pfc_en priorities outside an RX storm are actually held back.
 */
#include <stdlib.h>

#include "frame.h"
#include "mac.h"

/* A frame kept in the lossless receive buffer. */
struct mac_rxbuf {
	struct mac_rxbuf *next;
	uint8_t prio;
	size_t len;
	uint8_t data[];
};

struct mac_prio {
	/* Pauses received: the peer asked us to stop this priority until rx_pause_until. */
	bool rx_paused;
	uint64_t rx_pause_start, rx_pause_until;
	/* RX storm: received pauses ignored until none arrived for pfc_storm_ms after quiet. */
	bool rx_storm;
	uint64_t rx_storm_quiet;
	/* The lossless receive buffer and the pauses we send. */
	uint32_t buf_bytes;
	bool xoff;			/* we are pausing the peer */
	uint64_t xoff_since, next_refresh;
	bool tx_storm;			/* we stopped pausing: frames we cannot deliver are dropped */
	/* counters; durations in ns */
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t rx_pause, rx_pause_ns, rx_pause_transition;
	uint64_t tx_pause, tx_pause_ns, rx_discards;
};

struct ternm_mac {
	/* DCB configuration as last set (host order) */
	uint8_t pfc_en, trust, default_prio;
	uint8_t prio_tc[TERN_NUM_PRIO], tc_tsa[TERN_NUM_TC], tc_bw[TERN_NUM_TC];
	uint8_t dscp_prio[TERN_NUM_DSCP];
	uint32_t storm_ms, rx_buf_bytes, xoff_bytes, xon_bytes;

	uint32_t speed;			/* Mb/s */
	uint64_t burst_ns;		/* tx_burst_bytes at line rate (both fixed at creation) */
	/* The transmitter is busy until line_ns + line_frac / speed ns. */
	uint64_t line_ns;
	uint32_t line_frac;
	/* A sender was refused: kick the device at this time (UINT64_MAX: nobody waits). */
	uint64_t kick_at;
	/*
	 * Priorities that may have time-driven state (rx_paused, rx_storm or xoff): a bit is set
	 * when one of them is, and the timer clears the bits of those that have none left.
	 * ternm_mac_next_deadline() looks at these only (at none, on a link without pauses).
	 */
	uint8_t timed;

	struct mac_prio prio[TERN_NUM_PRIO];
	struct mac_rxbuf *rxq_head, **rxq_tail;
	uint64_t rx_pfc_frames, tx_pfc_frames, tx_storm_events, rx_storm_events;
	uint64_t rx_mac_ctrl;		/* other MAC control frames (802.3x PAUSE, ...) */
};

static const uint8_t pfc_dmac[6] = TERN_PFC_DMAC;

uint32_t ternm_link_speed_mbps(const struct tern_model *m)
{
	return m->cfg.link_speed_mbps ? m->cfg.link_speed_mbps : TERNM_LINK_SPEED_MBPS;
}

/* ---- time ------------------------------------------------------------------------------ */

/* @bits bit times at line rate, in ns, rounded up. */
static uint64_t bits_ns(const struct ternm_mac *mac, uint64_t bits)
{
	return (bits * 1000 + mac->speed - 1) / mac->speed;
}

static uint64_t quanta_ns(const struct ternm_mac *mac, uint32_t quanta)
{
	return bits_ns(mac, (uint64_t)quanta * TERN_PFC_QUANTUM_BITS);
}

static uint64_t storm_ns(const struct ternm_mac *mac)
{
	return (uint64_t)mac->storm_ms * 1000000ull;
}

static uint64_t burst_ns(const struct tern_model *m, uint32_t speed)
{
	return (uint64_t)m->cfg.tx_burst_bytes * 8000ull / speed;
}

/* First whole ns at which the line is free. */
static uint64_t line_free_ns(const struct ternm_mac *mac)
{
	return mac->line_ns + (mac->line_frac ? 1 : 0);
}

static bool pfc_on(const struct ternm_mac *mac, unsigned int prio)
{
	return (mac->pfc_en >> prio) & 1;
}

/* ---- reset state ------------------------------------------------------------------------- */

static void dcb_defaults(struct ternm_mac *mac)
{
	unsigned int i;

	mac->pfc_en = 0;
	mac->trust = TERN_DCB_TRUST_PCP;
	mac->default_prio = 0;
	memset(mac->prio_tc, 0, sizeof(mac->prio_tc));
	for (i = 0; i < TERN_NUM_TC; i++)
		mac->tc_tsa[i] = TERN_DCB_TSA_ETS;
	memset(mac->tc_bw, 0, sizeof(mac->tc_bw));
	mac->tc_bw[0] = 100;
	memset(mac->dscp_prio, TERN_DCB_DSCP_UNMAPPED, sizeof(mac->dscp_prio));
	mac->storm_ms = 0;
	mac->rx_buf_bytes = TERN_DCB_DEF_RX_BUF;
	mac->xoff_bytes = TERN_DCB_DEF_XOFF;
	mac->xon_bytes = TERN_DCB_DEF_XON;
}

static void rxbuf_free(struct ternm_mac *mac)
{
	struct mac_rxbuf *b, *n;

	for (b = mac->rxq_head; b; b = n) {
		n = b->next;
		free(b);
	}
	mac->rxq_head = NULL;
	mac->rxq_tail = &mac->rxq_head;
}

static void send_pfc(struct tern_model *m, unsigned int prio, uint16_t quanta);

int ternm_mac_init(struct tern_model *m)
{
	struct ternm_mac *mac = calloc(1, sizeof(*mac));

	if (!mac)
		return -1;
	mac->speed = ternm_link_speed_mbps(m);
	mac->burst_ns = burst_ns(m, mac->speed);
	mac->rxq_tail = &mac->rxq_head;
	mac->kick_at = UINT64_MAX;
	dcb_defaults(mac);
	m->port = mac;
	return 0;
}

void ternm_mac_fini(struct tern_model *m)
{
	if (!m->port)
		return;
	rxbuf_free(m->port);
	free(m->port);
	m->port = NULL;
}

/*
 * Device reset: the buffer is emptied, so a peer we are pausing is released with XON first;
 * then configuration, pause state, line clock and counters go back to the reset state.
 */
void ternm_mac_clear(struct tern_model *m)
{
	struct ternm_mac *mac = m->port;
	uint32_t speed = mac->speed;
	unsigned int p;

	for (p = 0; p < TERN_NUM_PRIO; p++) {
		if (mac->prio[p].xoff)
			send_pfc(m, p, 0);
	}
	rxbuf_free(mac);
	memset(mac, 0, sizeof(*mac));
	mac->speed = speed;
	mac->burst_ns = burst_ns(m, speed);
	mac->rxq_tail = &mac->rxq_head;
	mac->kick_at = UINT64_MAX;
	dcb_defaults(mac);
}

/* ---- classification ---------------------------------------------------------------------- */

unsigned int ternm_mac_prio(const struct tern_model *m, int dscp, int pcp)
{
	const struct ternm_mac *mac = m->port;

	if (pcp >= 0)
		return (unsigned int)pcp & 7;
	if (dscp >= 0 && dscp < TERN_NUM_DSCP && mac->trust == TERN_DCB_TRUST_DSCP &&
	    mac->dscp_prio[dscp] != TERN_DCB_DSCP_UNMAPPED)
		return mac->dscp_prio[dscp];
	return mac->default_prio;
}

unsigned int ternm_mac_frame_prio(const struct tern_model *m, const uint8_t *frame, size_t len)
{
	struct frame_info fi;

	frame_parse(frame, len, &fi);
	if (fi.vlan)
		return ternm_mac_prio(m, -1, fi.pcp);
	return ternm_mac_prio(m, fi.ipver ? fi.tclass >> 2 : -1, -1);
}

/* ---- events ------------------------------------------------------------------------------ */

static void storm_event(struct tern_model *m, enum tern_pfc_storm kind, unsigned int prio,
			bool detected)
{
	ternm_log(m, detected ? TERN_MODEL_LOG_WARN : TERN_MODEL_LOG_INFO,
		  "PFC storm (%s) on priority %u %s", kind == TERN_PFC_STORM_TX_PAUSE ?
		  "we paused the peer" : "the peer paused us", prio,
		  detected ? "detected" : "recovered");
	ternm_eq_post_flag_data(m, TERN_EQ_F_ASYNC, TERN_EQE_PFC_STORM, (uint8_t)kind, prio,
				detected ? 1 : 0);
}

/* ---- transmit ---------------------------------------------------------------------------- */

void ternm_mac_tx(struct tern_model *m, const uint8_t *frame, size_t len)
{
	struct ternm_mac *mac = m->port;
	uint64_t now = ternm_now(m);
	uint64_t q = ((uint64_t)len + FRAME_LINE_OVERHEAD) * 8 * 1000;

	/*
	 * The frame starts when the line is free, or now if it has been idle for a whole ns (a
	 * sender woken at the first whole ns after the line became free starts exactly then).
	 */
	if (line_free_ns(mac) < now) {
		mac->line_ns = now;
		mac->line_frac = 0;
	}
	mac->line_ns += q / mac->speed;
	mac->line_frac += (uint32_t)(q % mac->speed);
	if (mac->line_frac >= mac->speed) {
		mac->line_frac -= mac->speed;
		mac->line_ns++;
	}
	if (len < FRAME_ETH_HLEN || get_be16(frame + 12) != TERN_PFC_ETHERTYPE) {
		struct mac_prio *p = &mac->prio[ternm_mac_frame_prio(m, frame, len)];

		p->tx_frames++;
		p->tx_bytes += len;
	}
	ternm_wire_tx(m, frame, len);
}

/* One 802.1Qbb frame for one priority: @quanta 0 is XON. */
static void send_pfc(struct tern_model *m, unsigned int prio, uint16_t quanta)
{
	struct ternm_mac *mac = m->port;
	uint8_t f[FRAME_ETH_ZLEN];

	if (!m->link_up)
		return;
	memset(f, 0, sizeof(f));
	memcpy(f, pfc_dmac, 6);
	memcpy(f + 6, m->mac, 6);
	put_be16(f + 12, TERN_PFC_ETHERTYPE);
	put_be16(f + 14, TERN_PFC_OPCODE);
	put_be16(f + 16, (uint16_t)(1u << prio));
	put_be16(f + 18 + 2 * prio, quanta);
	mac->tx_pfc_frames++;
	if (quanta)
		mac->prio[prio].tx_pause++;
	ternm_mac_tx(m, f, sizeof(f));
}

static void xoff_start(struct tern_model *m, unsigned int prio, uint64_t now)
{
	struct mac_prio *p = &m->port->prio[prio];

	p->xoff = true;
	m->port->timed |= (uint8_t)(1u << prio);
	p->xoff_since = now;
	p->next_refresh = now + quanta_ns(m->port, FRAME_PFC_XOFF_QUANTA) / 2;
	send_pfc(m, prio, FRAME_PFC_XOFF_QUANTA);
}

static void xoff_end(struct tern_model *m, unsigned int prio, uint64_t now)
{
	struct mac_prio *p = &m->port->prio[prio];

	p->xoff = false;
	p->tx_pause_ns += now - p->xoff_since;
	send_pfc(m, prio, 0);
}

/* The buffer of @prio changed (or the configuration did): XOFF, XON, storm recovery. */
static void rxbuf_check(struct tern_model *m, unsigned int prio, uint64_t now)
{
	struct ternm_mac *mac = m->port;
	struct mac_prio *p = &mac->prio[prio];

	if (p->xoff && (p->buf_bytes <= mac->xon_bytes || !pfc_on(mac, prio)))
		xoff_end(m, prio, now);
	if (p->tx_storm && (p->buf_bytes <= mac->xon_bytes || !mac->storm_ms ||
			    !pfc_on(mac, prio))) {
		p->tx_storm = false;
		storm_event(m, TERN_PFC_STORM_TX_PAUSE, prio, false);
	}
	if (!p->xoff && !p->tx_storm && pfc_on(mac, prio) && p->buf_bytes >= mac->xoff_bytes)
		xoff_start(m, prio, now);
}

/* The peer's pause of @p ends at @t. */
static void rx_pause_end(struct mac_prio *p, uint64_t t)
{
	p->rx_paused = false;
	p->rx_pause_ns += t - p->rx_pause_start;
	p->rx_pause_transition++;
}

/* Bring the time-driven state of @prio up to @now: expiry, refresh, storm guard. */
static void prio_update(struct tern_model *m, unsigned int prio, uint64_t now)
{
	struct ternm_mac *mac = m->port;
	struct mac_prio *p = &mac->prio[prio];

	if (p->rx_paused && p->rx_pause_until <= now)
		rx_pause_end(p, p->rx_pause_until);
	if (mac->storm_ms && pfc_on(mac, prio) && p->rx_paused && !p->rx_storm &&
	    now >= p->rx_pause_start + storm_ns(mac)) {
		/* Paused for too long: the pause in force is dropped, later ones are ignored. */
		rx_pause_end(p, now);
		p->rx_storm = true;
		mac->timed |= (uint8_t)(1u << prio);
		p->rx_storm_quiet = now;
		mac->rx_storm_events++;
		storm_event(m, TERN_PFC_STORM_RX_PAUSE, prio, true);
		ternm_kick(m);
	}
	if (p->rx_storm && (!mac->storm_ms || !pfc_on(mac, prio) ||
			    now >= p->rx_storm_quiet + storm_ns(mac))) {
		p->rx_storm = false;
		storm_event(m, TERN_PFC_STORM_RX_PAUSE, prio, false);
	}
	if (mac->storm_ms && p->xoff && now >= p->xoff_since + storm_ns(mac)) {
		/* The host does not drain: stop pausing, drop what cannot be delivered. */
		xoff_end(m, prio, now);
		p->tx_storm = true;
		mac->tx_storm_events++;
		storm_event(m, TERN_PFC_STORM_TX_PAUSE, prio, true);
	}
	if (p->xoff && now >= p->next_refresh) {
		send_pfc(m, prio, FRAME_PFC_XOFF_QUANTA);
		p->next_refresh = now + quanta_ns(mac, FRAME_PFC_XOFF_QUANTA) / 2;
	}
}

/* Is @prio held back by a pause from the peer now (after prio_update)? */
static bool rx_pause_honoured(const struct ternm_mac *mac, unsigned int prio)
{
	const struct mac_prio *p = &mac->prio[prio];

	return pfc_on(mac, prio) && !p->rx_storm && p->rx_paused;
}

bool ternm_mac_may_send(struct tern_model *m, unsigned int prio, uint64_t *retry_ns)
{
	struct ternm_mac *mac = m->port;
	uint64_t now = ternm_now(m);
	uint64_t wait = 0, line = line_free_ns(mac), burst;

	prio &= 7;
	if (mac->timed & (1u << prio))		/* else it has no time-driven state */
		prio_update(m, prio, now);
	if (rx_pause_honoured(mac, prio)) {
		const struct mac_prio *p = &mac->prio[prio];

		wait = p->rx_pause_until;
		if (mac->storm_ms && p->rx_pause_start + storm_ns(mac) < wait)
			wait = p->rx_pause_start + storm_ns(mac);
	}
	/* the burst allowance matters only while the line is busy */
	if (line > now) {
		burst = mac->burst_ns;
		if (line > now + burst && line - burst > wait)
			wait = line - burst;
	}
	if (retry_ns)
		*retry_ns = wait > now ? wait : now;
	if (wait <= now)
		return true;
	if (wait < mac->kick_at)
		mac->kick_at = wait;
	return false;
}

/* ---- receive ----------------------------------------------------------------------------- */

/* A MAC control frame (EtherType 0x8808): never reaches a ring. */
static void rx_mac_ctrl(struct tern_model *m, const uint8_t *frame, size_t len, uint64_t now)
{
	struct ternm_mac *mac = m->port;
	uint16_t vec;
	unsigned int prio;

	if (len < FRAME_PFC_LEN || get_be16(frame + 14) != TERN_PFC_OPCODE ||
	    memcmp(frame, pfc_dmac, 6)) {
		mac->rx_mac_ctrl++;
		return;
	}
	mac->rx_pfc_frames++;
	vec = get_be16(frame + 16);
	for (prio = 0; prio < TERN_NUM_PRIO; prio++) {
		struct mac_prio *p = &mac->prio[prio];
		uint16_t quanta = get_be16(frame + 18 + 2 * prio);

		if (!(vec & (1u << prio)))
			continue;
		prio_update(m, prio, now);
		if (quanta)
			p->rx_pause++;
		if (p->rx_storm) {
			if (quanta)
				p->rx_storm_quiet = now;
			continue;
		}
		if (quanta) {
			uint64_t until = now + quanta_ns(mac, quanta);

			if (!p->rx_paused) {
				p->rx_paused = true;
				mac->timed |= (uint8_t)(1u << prio);
				p->rx_pause_start = now;
			} else if (until < p->rx_pause_until && pfc_on(mac, prio)) {
				ternm_kick(m);	/* shortened: waiting senders ask again */
			}
			p->rx_pause_until = until;
		} else if (p->rx_paused) {
			rx_pause_end(p, now);
			if (pfc_on(mac, prio))
				ternm_kick(m);
		}
	}
}

bool ternm_mac_rx_pending(const struct tern_model *m)
{
	return m->port->rxq_head != NULL;
}

void ternm_mac_rx_drain(struct tern_model *m)
{
	struct ternm_mac *mac = m->port;
	struct mac_rxbuf *b;
	uint64_t now;

	if (!mac->rxq_head)
		return;
	now = ternm_now(m);
	while ((b = mac->rxq_head) && !ternm_eth_rx_would_block(m, b->data, b->len)) {
		if (!ternm_eth_rx_frame(m, b->data, b->len))
			break;
		mac->rxq_head = b->next;
		if (!mac->rxq_head)
			mac->rxq_tail = &mac->rxq_head;
		mac->prio[b->prio].buf_bytes -= (uint32_t)b->len;
		rxbuf_check(m, b->prio, now);
		free(b);
	}
}

size_t ternm_mac_rx_frame(struct tern_model *m, const uint8_t *frame, size_t len)
{
	struct ternm_mac *mac = m->port;
	uint64_t now = ternm_now(m);
	struct mac_prio *p;
	struct mac_rxbuf *b;
	unsigned int prio;
	size_t r;

	if (len >= FRAME_ETH_HLEN && get_be16(frame + 12) == TERN_PFC_ETHERTYPE) {
		rx_mac_ctrl(m, frame, len, now);
		return len;
	}
	if (len < FRAME_ETH_HLEN)
		return ternm_eth_rx_frame(m, frame, len);
	/* Frames already waiting go first. */
	ternm_mac_rx_drain(m);
	prio = ternm_mac_frame_prio(m, frame, len);
	p = &mac->prio[prio];
	if (!pfc_on(mac, prio) || !ternm_eth_rx_wants(m, frame, len) ||
	    (!mac->rxq_head && !ternm_eth_rx_would_block(m, frame, len))) {
		r = ternm_eth_rx_frame(m, frame, len);
		if (r) {
			p->rx_frames++;
			p->rx_bytes += len;
		}
		return r;
	}
	/* Lossless and no descriptor now: keep it. */
	p->rx_frames++;
	p->rx_bytes += len;
	if (p->tx_storm || len > mac->rx_buf_bytes - p->buf_bytes) {
		p->rx_discards++;
		return len;
	}
	b = malloc(sizeof(*b) + len);
	if (!b) {
		p->rx_discards++;
		return len;
	}
	b->next = NULL;
	b->prio = (uint8_t)prio;
	b->len = len;
	memcpy(b->data, frame, len);
	*mac->rxq_tail = b;
	mac->rxq_tail = &b->next;
	p->buf_bytes += (uint32_t)len;
	rxbuf_check(m, prio, now);
	return len;
}

/* ---- timer ------------------------------------------------------------------------------- */

uint64_t ternm_mac_next_deadline(const struct tern_model *m)
{
	const struct ternm_mac *mac = m->port;
	uint64_t next = mac->kick_at, t;
	unsigned int prio;

	for (prio = 0; prio < TERN_NUM_PRIO; prio++) {
		const struct mac_prio *p = &mac->prio[prio];

		if (!(mac->timed & (1u << prio)))
			continue;

		if (mac->storm_ms && pfc_on(mac, prio) && p->rx_paused && !p->rx_storm) {
			t = p->rx_pause_start + storm_ns(mac);
			if (t < p->rx_pause_until && t < next)
				next = t;
		}
		if (p->rx_storm && p->rx_storm_quiet + storm_ns(mac) < next)
			next = p->rx_storm_quiet + storm_ns(mac);
		if (p->xoff) {
			if (p->next_refresh < next)
				next = p->next_refresh;
			if (mac->storm_ms && p->xoff_since + storm_ns(mac) < next)
				next = p->xoff_since + storm_ns(mac);
		}
	}
	return next;
}

void ternm_mac_timer(struct tern_model *m, uint64_t now)
{
	struct ternm_mac *mac = m->port;
	unsigned int prio;

	for (prio = 0; prio < TERN_NUM_PRIO; prio++) {
		const struct mac_prio *p = &mac->prio[prio];

		prio_update(m, prio, now);
		if (!p->rx_paused && !p->rx_storm && !p->xoff)
			mac->timed &= (uint8_t)~(1u << prio);
	}
	if (mac->kick_at <= now) {
		mac->kick_at = UINT64_MAX;
		ternm_kick(m);
	}
}

/* ---- commands ---------------------------------------------------------------------------- */

static int dcb_check(const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_dcb_cfg T;
	uint32_t storm = get_le32(CFLD(in, T, pfc_storm_ms));
	uint32_t buf = get_le32(CFLD(in, T, rx_buf_bytes));
	uint32_t xoff = get_le32(CFLD(in, T, xoff_bytes));
	uint32_t xon = get_le32(CFLD(in, T, xon_bytes));
	unsigned int i, sum = 0;
	bool ets = false;

	if (in[offsetof(T, trust)] > TERN_DCB_TRUST_DSCP)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, trust));
	if (in[offsetof(T, default_prio)] >= TERN_NUM_PRIO)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, default_prio));
	if (in[offsetof(T, rsvd0)])
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, rsvd0));
	for (i = 0; i < TERN_NUM_PRIO; i++) {
		if (in[offsetof(T, prio_tc) + i] >= TERN_NUM_TC)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, prio_tc) + i);
	}
	for (i = 0; i < TERN_NUM_TC; i++) {
		uint8_t tsa = in[offsetof(T, tc_tsa) + i];

		if (tsa != TERN_DCB_TSA_STRICT && tsa != TERN_DCB_TSA_ETS)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, tc_tsa) + i);
	}
	for (i = 0; i < TERN_NUM_TC; i++) {
		uint8_t bw = in[offsetof(T, tc_bw) + i];

		if (in[offsetof(T, tc_tsa) + i] == TERN_DCB_TSA_STRICT ? bw != 0 : bw > 100)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, tc_bw) + i);
		if (in[offsetof(T, tc_tsa) + i] == TERN_DCB_TSA_ETS)
			ets = true;
		sum += bw;
	}
	/* The ETS classes share 100 %; with no ETS class at all every bandwidth is 0. */
	if (ets && sum != 100)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, tc_bw));
	for (i = 0; i < TERN_NUM_DSCP; i++) {
		uint8_t prio = in[offsetof(T, dscp_prio) + i];

		if (prio >= TERN_NUM_PRIO && prio != TERN_DCB_DSCP_UNMAPPED)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, dscp_prio) + i);
	}
	if (storm && (storm < TERN_DCB_STORM_MIN_MS || storm > TERN_DCB_STORM_MAX_MS))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, pfc_storm_ms));
	if (buf > TERN_DCB_MAX_RX_BUF)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, rx_buf_bytes));
	if (xoff > buf)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, xoff_bytes));
	if (xon >= xoff)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, xon_bytes));
	for (i = 0; i < 4; i++) {
		if (get_le32(CFLD(in, T, rsvd1) + 4 * i))
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, rsvd1) + 4 * i);
	}
	return TERN_CMD_OK;
}

static void dcb_set(struct tern_model *m, const uint8_t *in)
{
	typedef struct tern_dcb_cfg T;
	struct ternm_mac *mac = m->port;
	uint64_t now = ternm_now(m);
	unsigned int prio;

	/* Pause state up to now under the old configuration. */
	for (prio = 0; prio < TERN_NUM_PRIO; prio++)
		prio_update(m, prio, now);
	mac->pfc_en = in[offsetof(T, pfc_en)];
	mac->trust = in[offsetof(T, trust)];
	mac->default_prio = in[offsetof(T, default_prio)];
	memcpy(mac->prio_tc, CFLD(in, T, prio_tc), sizeof(mac->prio_tc));
	memcpy(mac->tc_tsa, CFLD(in, T, tc_tsa), sizeof(mac->tc_tsa));
	memcpy(mac->tc_bw, CFLD(in, T, tc_bw), sizeof(mac->tc_bw));
	memcpy(mac->dscp_prio, CFLD(in, T, dscp_prio), sizeof(mac->dscp_prio));
	mac->storm_ms = get_le32(CFLD(in, T, pfc_storm_ms));
	mac->rx_buf_bytes = get_le32(CFLD(in, T, rx_buf_bytes));
	mac->xoff_bytes = get_le32(CFLD(in, T, xoff_bytes));
	mac->xon_bytes = get_le32(CFLD(in, T, xon_bytes));
	/* Apply: XON for priorities no longer lossless, new thresholds, storm guard off. */
	for (prio = 0; prio < TERN_NUM_PRIO; prio++) {
		prio_update(m, prio, now);
		rxbuf_check(m, prio, now);
	}
	/* Senders held back by a pause that no longer applies go again. */
	ternm_kick(m);
}

static void dcb_query(const struct ternm_mac *mac, uint8_t *o)
{
	typedef struct tern_dcb_cfg T;

	memset(o, 0, sizeof(T));
	o[offsetof(T, pfc_en)] = mac->pfc_en;
	o[offsetof(T, trust)] = mac->trust;
	o[offsetof(T, default_prio)] = mac->default_prio;
	memcpy(FLD(o, T, prio_tc), mac->prio_tc, sizeof(mac->prio_tc));
	memcpy(FLD(o, T, tc_tsa), mac->tc_tsa, sizeof(mac->tc_tsa));
	memcpy(FLD(o, T, tc_bw), mac->tc_bw, sizeof(mac->tc_bw));
	memcpy(FLD(o, T, dscp_prio), mac->dscp_prio, sizeof(mac->dscp_prio));
	put_le32(FLD(o, T, pfc_storm_ms), mac->storm_ms);
	put_le32(FLD(o, T, rx_buf_bytes), mac->rx_buf_bytes);
	put_le32(FLD(o, T, xoff_bytes), mac->xoff_bytes);
	put_le32(FLD(o, T, xon_bytes), mac->xon_bytes);
}

static void pfc_stats(struct tern_model *m, uint8_t *o)
{
	typedef struct tern_cmd_pfc_stats_out T;
	typedef struct tern_pfc_prio_stats S;
	struct ternm_mac *mac = m->port;
	uint64_t now = ternm_now(m);
	unsigned int prio;

	memset(o, 0, sizeof(T));
	for (prio = 0; prio < TERN_NUM_PRIO; prio++) {
		const struct mac_prio *p = &mac->prio[prio];
		uint8_t *s = FLD(o, T, prio) + prio * sizeof(S);
		uint64_t rx_ns, tx_ns;

		prio_update(m, prio, now);
		rx_ns = p->rx_pause_ns;
		tx_ns = p->tx_pause_ns;
		if (p->rx_paused)
			rx_ns += now - p->rx_pause_start;
		if (p->xoff)
			tx_ns += now - p->xoff_since;
		put_le64(FLD(s, S, rx_frames), p->rx_frames);
		put_le64(FLD(s, S, rx_bytes), p->rx_bytes);
		put_le64(FLD(s, S, tx_frames), p->tx_frames);
		put_le64(FLD(s, S, tx_bytes), p->tx_bytes);
		put_le64(FLD(s, S, rx_pause), p->rx_pause);
		put_le64(FLD(s, S, rx_pause_duration_us), rx_ns / TERNM_NS_PER_US);
		put_le64(FLD(s, S, rx_pause_transition), p->rx_pause_transition);
		put_le64(FLD(s, S, tx_pause), p->tx_pause);
		put_le64(FLD(s, S, tx_pause_duration_us), tx_ns / TERNM_NS_PER_US);
		put_le64(FLD(s, S, rx_discards), p->rx_discards);
	}
	put_le64(FLD(o, T, rx_pfc_frames), mac->rx_pfc_frames);
	put_le64(FLD(o, T, tx_pfc_frames), mac->tx_pfc_frames);
	put_le64(FLD(o, T, tx_pause_storm_events), mac->tx_storm_events);
	put_le64(FLD(o, T, rx_pause_storm_events), mac->rx_storm_events);
}

static bool dcb_need_out(uint16_t out_len, size_t size, struct ternm_cmd_result *r)
{
	if (out_len < size) {
		r->status = TERN_CMD_BAD_LEN;
		r->syndrome = (uint32_t)size;
		return false;
	}
	r->out_size = size;
	return true;
}

void ternm_dcb_cmd(struct tern_model *m, uint16_t opcode, const uint8_t *in, uint16_t out_len,
		   struct ternm_cmd_result *r)
{
	r->status = TERN_CMD_OK;
	switch (opcode) {
	case TERN_CMD_SET_DCB:
		r->status = (uint8_t)dcb_check(in, r);
		if (r->status == TERN_CMD_OK)
			dcb_set(m, in);
		break;
	case TERN_CMD_QUERY_DCB:
		if (dcb_need_out(out_len, sizeof(struct tern_dcb_cfg), r))
			dcb_query(m->port, m->cmd_out);
		break;
	case TERN_CMD_QUERY_PFC_STATS:
		if (dcb_need_out(out_len, sizeof(struct tern_cmd_pfc_stats_out), r))
			pfc_stats(m, m->cmd_out);
		break;
	default:
		r->status = TERN_CMD_BAD_OPCODE;
		break;
	}
}
