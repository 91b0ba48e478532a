/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern fabric: the shared-buffer switch model (API and behaviour in switch.h, parameters and
 * their defaults in Documentation/fabric.rst).
 *
 * Time is the host's (now_ns): the switch keeps no clock and runs only inside tsw_rx() and
 * tsw_timer(). Each port has a transmitter that is busy until @busy_until; a frame is handed
 * to host->deliver when its first bit goes out, with the time its last bit reaches the NIC.
 * Frames are stored whole (store and forward) from tsw_rx() until their transmission starts;
 * their bytes count against the shared buffer, the egress FIFO and the ingress
 * (port, priority) account until then.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"		/* model/lib: the frame parser and constants the NIC model uses */
#include "switch.h"
#define LEARN_SIZE		256

struct tsw_pkt {
	struct tsw_pkt *next;
	unsigned int in_port;
	unsigned int prio;
	size_t int_at;		/* INT: the record to fill at dequeue (0: none) */
	size_t int_udp6;	/* INT: an IPv6 UDP header whose checksum to redo (0: none) */
	size_t len;
	uint8_t data[];
};

struct tsw_fifo {
	struct tsw_pkt *head, *tail;
	uint64_t bytes;
	uint64_t paused_until;	/* PFC from the NIC: no transmission before this */
	uint64_t pause_mark;	/* paused time accounted up to here */
	struct tsw_queue_stats st;
};

struct tsw_port {
	struct tsw_fifo q[TSW_NUM_PRIO];
	uint64_t busy_until;		/* the transmitter is sending until then */
	uint64_t tx_bytes;		/* line bytes sent (INT) */
	uint32_t mbps;			/* its line rate */
	uint64_t refresh_ns;		/* XOFF refresh period: half the pause time at it */
	unsigned int rr;		/* next non-strict priority to look at */
	/* ingress accounting and PFC generation towards this port's NIC */
	uint64_t in_bytes[TSW_NUM_PRIO];
	bool xoff[TSW_NUM_PRIO];	/* we have the NIC paused */
	uint64_t refresh_at[TSW_NUM_PRIO];	/* when to repeat the XOFF */
	uint8_t pfc_pending;		/* priorities with a PFC frame to send */
	uint8_t pfc_pending_xoff;	/* of those, the ones that are XOFF (else XON) */
	struct tsw_port_stats st;
};

struct tsw_route {
	uint8_t mac[6];
	uint8_t nports;
	uint8_t ports[TSW_MAX_ECMP];
};

struct tsw_learn {
	uint8_t mac[6];
	bool used;
	unsigned int port;
};

struct tsw {
	struct tsw_config cfg;
	struct tsw_host host;
	struct tsw_port *ports;
	uint64_t buffer_used;
	uint64_t buffer_max;
	uint64_t rng;
	uint64_t armed;			/* deadline last given to timer_arm */
	struct tsw_learn learn[LEARN_SIZE];
	unsigned int learn_next;	/* replacement cursor when the table is full */
	struct tsw_route *routes;	/* TSW_MAX_ROUTES, allocated by the first route */
	unsigned int nroutes;
};

void tsw_config_default(struct tsw_config *cfg, unsigned int nports)
{
	unsigned int d;

	memset(cfg, 0, sizeof(*cfg));
	cfg->nports = nports;
	cfg->link_mbps = 40000;
	cfg->delay_ns = 1000;
	cfg->buffer_bytes = 12u << 20;
	cfg->pfc_mask = 1u << 3;
	cfg->ecn_mask = 1u << 3;
	cfg->strict_mask = 1u << 6;
	cfg->xoff_bytes = 256u << 10;
	cfg->xon_bytes = 128u << 10;
	cfg->kmin_bytes = 5u << 10;
	cfg->kmax_bytes = 200u << 10;
	cfg->pmax_ppm = 10000;
	for (d = 0; d < 64; d++)
		cfg->dscp_prio[d] = (uint8_t)(d >> 3);
	cfg->seed = 1;
	cfg->int_mtu = 9000;
}

static uint64_t tsw_now(const struct tsw *sw)
{
	return sw->host.now_ns(sw->host.opaque);
}

/* Bytes a frame of @len bytes (no FCS) occupies on the line. */
static uint64_t line_bytes(size_t len)
{
	return (uint64_t)(len < FRAME_ETH_ZLEN ? FRAME_ETH_ZLEN : len) + FRAME_LINE_OVERHEAD;
}

/* Nanoseconds a frame of @len bytes (no FCS) occupies @pt's line. */
static uint64_t ser_ns(const struct tsw_port *pt, size_t len)
{
	return line_bytes(len) * 8000 / pt->mbps;
}

static uint64_t quanta_ns(const struct tsw_port *pt, unsigned int quanta)
{
	return (uint64_t)quanta * TERN_PFC_QUANTUM_BITS * 1000 / pt->mbps;
}

/* splitmix64 */
static uint64_t rng_next(struct tsw *sw)
{
	uint64_t z = (sw->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct tsw *tsw_create(const struct tsw_config *cfg, const struct tsw_host *host)
{
	struct tsw *sw;
	unsigned int p;

	if (!cfg || !host || !host->deliver || !host->now_ns || !host->timer_arm ||
	    !cfg->nports || cfg->nports > TSW_MAX_PORTS || !cfg->link_mbps ||
	    cfg->xon_bytes >= cfg->xoff_bytes || cfg->kmin_bytes > cfg->kmax_bytes ||
	    cfg->pmax_ppm > 1000000)
		return NULL;
	sw = calloc(1, sizeof(*sw));
	if (!sw)
		return NULL;
	sw->ports = calloc(cfg->nports, sizeof(*sw->ports));
	if (!sw->ports) {
		free(sw);
		return NULL;
	}
	sw->cfg = *cfg;
	sw->host = *host;
	sw->rng = cfg->seed;
	sw->armed = UINT64_MAX;
	for (p = 0; p < cfg->nports; p++) {
		struct tsw_port *pt = &sw->ports[p];

		pt->mbps = cfg->port_mbps[p] ? cfg->port_mbps[p] : cfg->link_mbps;
		pt->refresh_ns = quanta_ns(pt, FRAME_PFC_XOFF_QUANTA) / 2;
	}
	return sw;
}

void tsw_destroy(struct tsw *sw)
{
	unsigned int p, q;

	if (!sw)
		return;
	for (p = 0; p < sw->cfg.nports; p++) {
		for (q = 0; q < TSW_NUM_PRIO; q++) {
			struct tsw_pkt *k = sw->ports[p].q[q].head, *n;

			for (; k; k = n) {
				n = k->next;
				free(k);
			}
		}
	}
	free(sw->ports);
	free(sw->routes);
	free(sw);
}

/* ---- classification, ECN ----------------------------------------------------------------- */

static unsigned int classify(const struct tsw *sw, const uint8_t *f, size_t len)
{
	struct frame_info fi;

	frame_parse(f, len, &fi);
	if (fi.vlan)
		return fi.pcp;
	if (fi.ip_whole)
		return sw->cfg.dscp_prio[fi.tclass >> 2] & 7;
	return 0;
}

/* RED on an ECN-capable IP packet that finds @depth bytes in its FIFO (see ecn_at_dequeue). */
static void ecn_mark(struct tsw *sw, struct tsw_fifo *q, uint8_t *f, size_t len, uint64_t depth)
{
	struct frame_info fi;
	unsigned int tc;
	size_t ip;
	uint64_t p;

	frame_parse(f, len, &fi);
	if (!fi.ip_whole)
		return;
	ip = fi.l3;
	tc = fi.tclass;
	if ((tc & 3) == 0 || (tc & 3) == 3)	/* not ECT, or already CE */
		return;
	if (depth <= sw->cfg.kmin_bytes)
		return;
	if (depth > sw->cfg.kmax_bytes)
		p = 1000000;
	else
		p = (uint64_t)sw->cfg.pmax_ppm * (depth - sw->cfg.kmin_bytes) /
		    (sw->cfg.kmax_bytes - sw->cfg.kmin_bytes);
	if (((rng_next(sw) >> 32) * 1000000 >> 32) >= p)
		return;
	if (fi.ipver == 4) {
		f[ip + 1] |= 3;
		frame_ipv4_csum_set(f + ip, (size_t)(f[ip] & 0xf) * 4);
	} else {
		f[ip + 1] |= 3 << 4;
	}
	q->st.ecn_marked++;
}

/* ---- INT --------------------------------------------------------------------------------- */

#define INT_SHIM	sizeof(struct tern_int_shim)
#define INT_HOP		sizeof(struct tern_int_hop)

static void put_be16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, v >> 16);
	put_be16(p + 2, v);
}

/*
 * Where the INT REQUEST shim of @f is, 0 if it has none that this switch may touch (see
 * switch.h). *@grow: it can take one more record (else it gets the overflow flag).
 */
static size_t int_shim(const struct tsw *sw, const uint8_t *f, size_t len, bool *grow)
{
	struct frame_info fi;
	size_t s, iplen;
	uint16_t ulen;

	frame_parse(f, len, &fi);
	if (!fi.intp || !fi.ip_whole)
		return 0;
	if (fi.ipver == 4 && fi.udp != fi.l3 + FRAME_IPV4_HLEN)
		return 0;
	iplen = fi.ipver == 4 ? frame_be16(f + fi.l3 + 2) :
		(size_t)frame_be16(f + fi.l3 + 4) + FRAME_IPV6_HLEN;
	ulen = frame_be16(f + fi.udp + 4);
	s = fi.udp + FRAME_UDP_HLEN;
	if (fi.l3 + iplen > len || fi.udp + ulen > fi.l3 + iplen ||
	    ulen < FRAME_UDP_HLEN + INT_SHIM)
		return 0;
	if (f[s] != TERN_INT_TYPE_REQUEST || !f[s + 2] || f[s + 2] > TERN_INT_MAX_HOPS ||
	    f[s + 1] > f[s + 2] || ulen < FRAME_UDP_HLEN + INT_SHIM + (size_t)f[s + 1] * INT_HOP)
		return 0;
	*grow = f[s + 1] < f[s + 2] && iplen + INT_HOP <= sw->cfg.int_mtu;
	return s;
}

static void add_be16(uint8_t *p, unsigned int d)
{
	put_be16(p, frame_be16(p) + d);
}

/*
 * @k (copied with INT_HOP free bytes at the end when @grow) has its REQUEST shim at @s: make
 * room for a record after the last one, or set the overflow flag.
 */
static void int_edit(struct tsw_pkt *k, size_t s, bool grow)
{
	uint8_t *f = k->data;
	struct frame_info fi;
	size_t at = s + INT_SHIM + (size_t)f[s + 1] * INT_HOP;

	frame_parse(f, k->len, &fi);
	if (grow) {
		memmove(f + at + INT_HOP, f + at, k->len - at);
		memset(f + at, 0, INT_HOP);
		k->len += INT_HOP;
		k->int_at = at;
		f[s + 1]++;
		add_be16(f + fi.udp + 4, INT_HOP);
		add_be16(f + fi.l3 + (fi.ipver == 4 ? 2 : 4), INT_HOP);
	} else {
		f[s + 3] |= TERN_INT_F_OVERFLOW;
	}
	if (fi.ipver == 4) {
		frame_ipv4_csum_set(f + fi.l3, (size_t)(f[fi.l3] & 0xf) * 4);
		put_be16(f + fi.udp + 6, 0);	/* IPv4: no UDP checksum */
	} else {
		k->int_udp6 = fi.udp;
	}
}

/* The UDP checksum of the IPv6 frame @f with its UDP header at @u. */
static void udp6_csum(uint8_t *f, size_t u)
{
	size_t ulen = frame_be16(f + u + 4);
	uint32_t s = FRAME_IPPROTO_UDP + (uint32_t)ulen;
	uint16_t c;

	s = frame_csum_add(s, f + u - 32, 32);	/* source and destination address */
	put_be16(f + u + 6, 0);
	c = (uint16_t)~frame_csum_fold(frame_csum_add(s, f + u, ulen));
	put_be16(f + u + 6, c ? c : 0xffff);
}

/* @k starts to leave @pt: fill in its INT record. */
static void int_fill(struct tsw_port *pt, const struct tsw_fifo *q, struct tsw_pkt *k,
		     uint64_t now)
{
	if (k->int_at) {
		put_be32(k->data + k->int_at, (uint32_t)now);
		put_be32(k->data + k->int_at + 4, (uint32_t)pt->tx_bytes);
		put_be32(k->data + k->int_at + 8, (uint32_t)q->bytes);
		put_be32(k->data + k->int_at + 12, pt->mbps);
		pt->st.int_hops_added++;
	}
	if (k->int_udp6)
		udp6_csum(k->data, k->int_udp6);
}

/* ---- PFC --------------------------------------------------------------------------------- */

static void pfc_request(struct tsw_port *pt, unsigned int prio, bool xoff)
{
	pt->pfc_pending |= (uint8_t)(1u << prio);
	if (xoff)
		pt->pfc_pending_xoff |= (uint8_t)(1u << prio);
	else
		pt->pfc_pending_xoff &= (uint8_t)~(1u << prio);
}

/* Ingress (@port, @prio) holds @in_bytes: start, or stop, pausing the NIC. */
static void pfc_check(struct tsw *sw, unsigned int port, unsigned int prio)
{
	struct tsw_port *pt = &sw->ports[port];

	if (!(sw->cfg.pfc_mask & (1u << prio)))
		return;
	if (!pt->xoff[prio] && pt->in_bytes[prio] >= sw->cfg.xoff_bytes) {
		pt->xoff[prio] = true;
		pfc_request(pt, prio, true);
	} else if (pt->xoff[prio] && pt->in_bytes[prio] <= sw->cfg.xon_bytes) {
		pt->xoff[prio] = false;
		pfc_request(pt, prio, false);
	}
}

static void pfc_build(uint8_t *fr, unsigned int port, uint8_t prios, uint8_t xoff)
{
	static const uint8_t dmac[6] = TERN_PFC_DMAC;
	unsigned int p;

	memset(fr, 0, FRAME_ETH_ZLEN);
	memcpy(fr, dmac, 6);
	fr[6] = 0x02;			/* locally administered: 02:74:73:77:00:<port> */
	fr[7] = 't';
	fr[8] = 's';
	fr[9] = 'w';
	fr[10] = 0;
	fr[11] = (uint8_t)port;
	fr[12] = TERN_PFC_ETHERTYPE >> 8;
	fr[13] = TERN_PFC_ETHERTYPE & 0xff;
	fr[14] = TERN_PFC_OPCODE >> 8;
	fr[15] = TERN_PFC_OPCODE & 0xff;
	fr[16] = 0;
	fr[17] = prios;
	for (p = 0; p < TSW_NUM_PRIO; p++) {
		if ((xoff >> p) & 1) {
			fr[18 + 2 * p] = FRAME_PFC_XOFF_QUANTA >> 8;
			fr[19 + 2 * p] = FRAME_PFC_XOFF_QUANTA & 0xff;
		}
	}
}

static void pause_account(struct tsw_fifo *q, uint64_t now)
{
	if (q->paused_until > q->pause_mark) {
		uint64_t end = q->paused_until < now ? q->paused_until : now;

		if (end > q->pause_mark)
			q->st.paused_ns += end - q->pause_mark;
	}
	q->pause_mark = now;
}

/* A MAC control frame from the NIC on @port. */
static void pfc_rx(struct tsw *sw, unsigned int port, const uint8_t *f, size_t len)
{
	struct tsw_port *pt = &sw->ports[port];
	uint64_t now = tsw_now(sw);
	unsigned int p, vec, t;

	if (len < FRAME_PFC_LEN || frame_be16(f + 14) != TERN_PFC_OPCODE)
		return;		/* 802.3x PAUSE and other MAC control: consumed, not honoured */
	vec = frame_be16(f + 16);
	for (p = 0; p < TSW_NUM_PRIO; p++) {
		struct tsw_fifo *q = &pt->q[p];

		if (!(vec & (1u << p)))
			continue;
		t = frame_be16(f + 18 + 2 * p);
		if (t)
			pt->st.pfc_rx[p]++;
		if (!(sw->cfg.pfc_mask & (1u << p)))
			continue;
		pause_account(q, now);
		q->paused_until = now + quanta_ns(pt, t);
	}
}

/* ---- egress ------------------------------------------------------------------------------ */

static bool fifo_ready(const struct tsw_fifo *q, uint64_t now)
{
	return q->head && q->paused_until <= now;
}

/* The FIFO to serve next on an idle port, or -1. */
static int pick(struct tsw *sw, struct tsw_port *pt, uint64_t now)
{
	unsigned int i, p;

	for (i = TSW_NUM_PRIO; i-- > 0;)
		if ((sw->cfg.strict_mask & (1u << i)) && fifo_ready(&pt->q[i], now))
			return (int)i;
	for (i = 0; i < TSW_NUM_PRIO; i++) {
		p = (pt->rr + i) % TSW_NUM_PRIO;
		if (!(sw->cfg.strict_mask & (1u << p)) && fifo_ready(&pt->q[p], now)) {
			pt->rr = (p + 1) % TSW_NUM_PRIO;
			return (int)p;
		}
	}
	return -1;
}

/* Send on @port what may be sent now (one frame: the port is then busy); true if it did. */
static bool port_kick(struct tsw *sw, unsigned int port, uint64_t now)
{
	struct tsw_port *pt = &sw->ports[port];
	struct tsw_fifo *q;
	struct tsw_pkt *k;
	int prio;

	if (pt->busy_until > now)
		return false;
	if (pt->pfc_pending) {
		uint8_t fr[FRAME_ETH_ZLEN];
		unsigned int p;

		pfc_build(fr, port, pt->pfc_pending, pt->pfc_pending_xoff);
		for (p = 0; p < TSW_NUM_PRIO; p++) {
			if (!(pt->pfc_pending & (1u << p)))
				continue;
			if (pt->pfc_pending_xoff & (1u << p)) {
				pt->st.pfc_xoff_sent[p]++;
				pt->refresh_at[p] = now + pt->refresh_ns;
			} else {
				pt->st.pfc_xon_sent[p]++;
			}
		}
		pt->pfc_pending = 0;
		pt->pfc_pending_xoff = 0;
		pt->tx_bytes += line_bytes(sizeof(fr));
		pt->busy_until = now + ser_ns(pt, sizeof(fr));
		sw->host.deliver(sw->host.opaque, port, fr, sizeof(fr),
				 pt->busy_until + sw->cfg.delay_ns);
		return true;
	}
	prio = pick(sw, pt, now);
	if (prio < 0)
		return false;
	q = &pt->q[prio];
	k = q->head;
	q->head = k->next;
	if (!q->head)
		q->tail = NULL;
	q->bytes -= k->len;
	if (sw->cfg.ecn_at_dequeue && (sw->cfg.ecn_mask & (1u << prio)))
		ecn_mark(sw, q, k->data, k->len, q->bytes);
	q->st.deq_frames++;
	q->st.deq_bytes += k->len;
	sw->buffer_used -= k->len;
	sw->ports[k->in_port].in_bytes[k->prio] -= k->len;
	pfc_check(sw, k->in_port, k->prio);
	pt->tx_bytes += line_bytes(k->len);
	if (k->int_at || k->int_udp6)
		int_fill(pt, q, k, now);
	pt->busy_until = now + ser_ns(pt, k->len);
	sw->host.deliver(sw->host.opaque, port, k->data, k->len, pt->busy_until + sw->cfg.delay_ns);
	free(k);
	return true;
}

/* The next time something changes on its own: a transmitter frees, a pause ends, a refresh. */
static uint64_t next_deadline(const struct tsw *sw, uint64_t now)
{
	uint64_t dl = UINT64_MAX;
	unsigned int p, q;

	for (p = 0; p < sw->cfg.nports; p++) {
		const struct tsw_port *pt = &sw->ports[p];
		bool busy = pt->busy_until > now;

		for (q = 0; q < TSW_NUM_PRIO; q++) {
			if (pt->xoff[q] && pt->refresh_at[q] < dl)
				dl = pt->refresh_at[q];
			if (!pt->q[q].head)
				continue;
			if (busy) {
				if (pt->busy_until < dl)
					dl = pt->busy_until;
			} else if (pt->q[q].paused_until > now && pt->q[q].paused_until < dl) {
				dl = pt->q[q].paused_until;
			}
		}
		if (busy && pt->pfc_pending && pt->busy_until < dl)
			dl = pt->busy_until;
	}
	return dl;
}

static void rearm(struct tsw *sw, uint64_t now)
{
	uint64_t dl = next_deadline(sw, now);

	if (dl != sw->armed) {
		sw->armed = dl;
		sw->host.timer_arm(sw->host.opaque, dl);
	}
}

/*
 * Transmit, refresh pauses: everything due at @now. A dequeue may ask for an XON on another
 * port (its ingress), so go round until nothing more can start.
 */
static void service(struct tsw *sw, uint64_t now)
{
	unsigned int p, q;
	bool sent;

	for (p = 0; p < sw->cfg.nports; p++) {
		struct tsw_port *pt = &sw->ports[p];

		for (q = 0; q < TSW_NUM_PRIO; q++)
			if (pt->xoff[q] && pt->refresh_at[q] <= now) {
				pfc_request(pt, q, true);
				pt->refresh_at[q] = UINT64_MAX;	/* set again when sent */
			}
	}
	do {
		sent = false;
		for (p = 0; p < sw->cfg.nports; p++)
			sent |= port_kick(sw, p, now);
	} while (sent);
}

void tsw_timer(struct tsw *sw)
{
	uint64_t now = tsw_now(sw);

	sw->armed = UINT64_MAX;
	service(sw, now);
	rearm(sw, now);
}

/* ---- ingress ----------------------------------------------------------------------------- */

static int learn_find(const struct tsw *sw, const uint8_t *mac)
{
	unsigned int i;

	for (i = 0; i < LEARN_SIZE; i++)
		if (sw->learn[i].used && !memcmp(sw->learn[i].mac, mac, 6))
			return (int)i;
	return -1;
}

static void learn(struct tsw *sw, const uint8_t *mac, unsigned int port)
{
	int i = learn_find(sw, mac);
	unsigned int k;

	if (mac[0] & 1)
		return;		/* never learn a group address */
	if (i >= 0) {
		sw->learn[i].port = port;
		return;
	}
	for (k = 0; k < LEARN_SIZE; k++)
		if (!sw->learn[k].used)
			break;
	if (k == LEARN_SIZE) {
		k = sw->learn_next;
		sw->learn_next = (sw->learn_next + 1) % LEARN_SIZE;
	}
	memcpy(sw->learn[k].mac, mac, 6);
	sw->learn[k].used = true;
	sw->learn[k].port = port;
}

static void enqueue(struct tsw *sw, unsigned int in, unsigned int out, unsigned int prio,
		    const uint8_t *f, size_t len)
{
	struct tsw_port *po = &sw->ports[out], *pi = &sw->ports[in];
	struct tsw_fifo *q = &po->q[prio];
	struct tsw_pkt *k;
	bool grow = false;
	size_t s = sw->cfg.int_mask & (1u << prio) ? int_shim(sw, f, len, &grow) : 0;
	size_t room = len + (grow ? INT_HOP : 0);

	if (sw->buffer_used + room > sw->cfg.buffer_bytes ||
	    !(k = malloc(sizeof(*k) + room))) {
		q->st.drops++;
		if (sw->cfg.pfc_mask & (1u << prio))
			pi->st.lossless_drops++;
		return;
	}
	k->next = NULL;
	k->in_port = in;
	k->prio = prio;
	k->len = len;
	k->int_at = k->int_udp6 = 0;
	memcpy(k->data, f, len);
	if (s) {
		int_edit(k, s, grow);
		if (!grow)
			po->st.int_overflows++;
		len = k->len;
	}
	if (!sw->cfg.ecn_at_dequeue && (sw->cfg.ecn_mask & (1u << prio)))
		ecn_mark(sw, q, k->data, len, q->bytes);
	if (q->tail)
		q->tail->next = k;
	else
		q->head = k;
	q->tail = k;
	q->bytes += len;
	if (q->bytes > q->st.max_bytes)
		q->st.max_bytes = q->bytes;
	q->st.enq_frames++;
	q->st.enq_bytes += len;
	sw->buffer_used += len;
	if (sw->buffer_used > sw->buffer_max)
		sw->buffer_max = sw->buffer_used;
	pi->in_bytes[prio] += len;
	pfc_check(sw, in, prio);
}

/* ---- routes, ECMP ------------------------------------------------------------------------ */

static struct tsw_route *route_find(const struct tsw *sw, const uint8_t *mac)
{
	unsigned int i;

	for (i = 0; i < sw->nroutes; i++)
		if (!memcmp(sw->routes[i].mac, mac, 6))
			return &sw->routes[i];
	return NULL;
}

bool tsw_route_add(struct tsw *sw, const uint8_t mac[6], const unsigned int *ports,
		   unsigned int nports)
{
	struct tsw_route *r;
	unsigned int i;

	if (!sw || !mac || (mac[0] & 1) || !ports || !nports || nports > TSW_MAX_ECMP)
		return false;
	for (i = 0; i < nports; i++)
		if (ports[i] >= sw->cfg.nports)
			return false;
	r = sw->routes ? route_find(sw, mac) : NULL;
	if (!r) {
		if (sw->nroutes >= TSW_MAX_ROUTES)
			return false;
		if (!sw->routes) {
			sw->routes = calloc(TSW_MAX_ROUTES, sizeof(*sw->routes));
			if (!sw->routes)
				return false;
		}
		r = &sw->routes[sw->nroutes++];
		memcpy(r->mac, mac, 6);
	}
	r->nports = (uint8_t)nports;
	for (i = 0; i < nports; i++)
		r->ports[i] = (uint8_t)ports[i];
	return true;
}

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* The flow's hash: the UDP 5-tuple when there is one, else the MAC addresses. */
static uint64_t flow_hash(const struct tsw *sw, const uint8_t *f, size_t len)
{
	uint64_t h = fnv(0xcbf29ce484222325ull, (const uint8_t *)&sw->cfg.ecmp_seed,
			 sizeof(sw->cfg.ecmp_seed));
	struct frame_info fi;
	static const uint8_t udp = 17;

	frame_parse(f, len, &fi);
	if (fi.udp && fi.ipver == 4) {
		h = fnv(h, f + fi.l3 + 12, 8);		/* source, destination */
	} else if (fi.udp && fi.ipver == 6) {
		h = fnv(h, f + fi.l3 + 8, 32);
	} else {
		return fnv(h, f, 12);
	}
	h = fnv(h, &udp, 1);
	h = fnv(h, f + fi.udp, 4);			/* source, destination port */
	/* spread the low bits (the modulo below) */
	h ^= h >> 31;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 29);
}

void tsw_rx(struct tsw *sw, unsigned int port, const void *frame, size_t len)
{
	const uint8_t *f = frame;
	uint64_t now = tsw_now(sw);
	unsigned int prio, p;
	int out = -1, i;

	if (port >= sw->cfg.nports || len < FRAME_ETH_HLEN)
		return;
	sw->ports[port].st.rx_frames++;
	sw->ports[port].st.rx_bytes += len;
	if (frame_be16(f + 12) == TERN_PFC_ETHERTYPE) {
		pfc_rx(sw, port, f, len);
	} else {
		learn(sw, f + 6, port);
		prio = classify(sw, f, len);
		if (!(f[0] & 1)) {
			const struct tsw_route *r = sw->routes ? route_find(sw, f) : NULL;

			if (r) {
				out = r->ports[flow_hash(sw, f, len) % r->nports];
			} else {
				i = learn_find(sw, f);
				if (i >= 0)
					out = (int)sw->learn[i].port;
			}
		}
		if (out >= 0) {
			if ((unsigned int)out != port)
				enqueue(sw, port, (unsigned int)out, prio, f, len);
		} else if (sw->cfg.no_flood) {
			sw->ports[port].st.no_route++;
		} else {
			for (p = 0; p < sw->cfg.nports; p++)
				if (p != port)
					enqueue(sw, port, p, prio, f, len);
		}
	}
	service(sw, now);
	rearm(sw, now);
}

/* ---- statistics -------------------------------------------------------------------------- */

uint64_t tsw_queue_bytes(const struct tsw *sw, unsigned int port, unsigned int prio)
{
	if (port >= sw->cfg.nports || prio >= TSW_NUM_PRIO)
		return 0;
	return sw->ports[port].q[prio].bytes;
}

void tsw_port_stats(const struct tsw *sw, unsigned int port, struct tsw_port_stats *out)
{
	uint64_t now = tsw_now(sw);
	unsigned int q;

	memset(out, 0, sizeof(*out));
	if (port >= sw->cfg.nports)
		return;
	*out = sw->ports[port].st;
	for (q = 0; q < TSW_NUM_PRIO; q++) {
		const struct tsw_fifo *f = &sw->ports[port].q[q];

		out->q[q] = f->st;
		/* include a pause still in progress */
		if (f->paused_until > f->pause_mark) {
			uint64_t end = f->paused_until < now ? f->paused_until : now;

			if (end > f->pause_mark)
				out->q[q].paused_ns += end - f->pause_mark;
		}
	}
}

static void json_u64s(FILE *f, const char *name, const uint64_t *v, unsigned int n)
{
	unsigned int i;

	fprintf(f, "\"%s\":[", name);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", v[i]);
	fprintf(f, "]");
}

void tsw_dump_json(const struct tsw *sw, FILE *f)
{
	const struct tsw_config *c = &sw->cfg;
	struct tsw_port_stats st;
	unsigned int p, q;

	fprintf(f, "{\"config\":{\"nports\":%u,\"link_mbps\":%u,\"delay_ns\":%" PRIu64
		",\"buffer_bytes\":%u,\"pfc_mask\":%u,\"ecn_mask\":%u,\"strict_mask\":%u"
		",\"xoff_bytes\":%u,\"xon_bytes\":%u,\"kmin_bytes\":%u,\"kmax_bytes\":%u"
		",\"pmax_ppm\":%u,\"ecn_at_dequeue\":%s,\"seed\":%" PRIu64 ",\"no_flood\":%s"
		",\"ecmp_seed\":%u,\"routes\":%u,\"int_mask\":%u,\"int_mtu\":%u,\"dscp_prio\":[",
		c->nports, c->link_mbps, c->delay_ns, c->buffer_bytes, c->pfc_mask, c->ecn_mask,
		c->strict_mask, c->xoff_bytes, c->xon_bytes, c->kmin_bytes, c->kmax_bytes,
		c->pmax_ppm, c->ecn_at_dequeue ? "true" : "false", c->seed,
		c->no_flood ? "true" : "false", c->ecmp_seed, sw->nroutes, c->int_mask, c->int_mtu);
	for (q = 0; q < 64; q++)
		fprintf(f, "%s%u", q ? "," : "", c->dscp_prio[q]);
	fprintf(f, "]},\"buffer_used\":%" PRIu64 ",\"buffer_max\":%" PRIu64 ",\"ports\":[",
		sw->buffer_used, sw->buffer_max);
	for (p = 0; p < c->nports; p++) {
		tsw_port_stats(sw, p, &st);
		fprintf(f, "%s{\"port\":%u,\"mbps\":%u,\"rx_frames\":%" PRIu64 ",\"rx_bytes\":%" PRIu64
			",\"lossless_drops\":%" PRIu64 ",\"no_route\":%" PRIu64
			",\"int_hops_added\":%" PRIu64 ",\"int_overflows\":%" PRIu64 ",",
			p ? "," : "", p, sw->ports[p].mbps, st.rx_frames, st.rx_bytes,
			st.lossless_drops, st.no_route, st.int_hops_added, st.int_overflows);
		json_u64s(f, "pfc_xoff_sent", st.pfc_xoff_sent, TSW_NUM_PRIO);
		fprintf(f, ",");
		json_u64s(f, "pfc_xon_sent", st.pfc_xon_sent, TSW_NUM_PRIO);
		fprintf(f, ",");
		json_u64s(f, "pfc_rx", st.pfc_rx, TSW_NUM_PRIO);
		fprintf(f, ",\"queues\":[");
		for (q = 0; q < TSW_NUM_PRIO; q++) {
			const struct tsw_queue_stats *s = &st.q[q];

			fprintf(f, "%s{\"prio\":%u,\"bytes\":%" PRIu64 ",\"enq_frames\":%" PRIu64
				",\"enq_bytes\":%" PRIu64 ",\"deq_frames\":%" PRIu64
				",\"deq_bytes\":%" PRIu64 ",\"drops\":%" PRIu64
				",\"ecn_marked\":%" PRIu64 ",\"max_bytes\":%" PRIu64
				",\"paused_ns\":%" PRIu64 "}",
				q ? "," : "", q, sw->ports[p].q[q].bytes, s->enq_frames,
				s->enq_bytes, s->deq_frames, s->deq_bytes, s->drops, s->ecn_marked,
				s->max_bytes, s->paused_ns);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]}\n");
}
