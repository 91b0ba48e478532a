/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: the Ethernet MAC (TX and RX rings, receive filter, counters).
 *
 * Decisions (see Documentation/hw/):
 *  - Queues are created disarmed with PI = CI = 0. A doorbell PI that moves backwards (behind
 *    the last accepted PI) or more than depth ahead of the device's CI is ignored, counted
 *    (db_ignored) and logged; the same PI again is accepted. Each queue has a second
 *    doorbell that arms its event with the driver's CI (ternm_eth_arm()); either doorbell
 *    with reserved bits set, or for a queue that does not exist, is ignored and counted too.
 *  - TX: a frame is an optional offload context and up to TERN_ETH_TX_MAX_DESCS data
 *    descriptors chained with TERN_ETH_TXD_MORE, gathered into m->tx_gather; checksum and
 *    TCP segmentation offload as Documentation/hw/interface.rst specifies them. Frames of
 *    TERN_ETH_MIN_FRAME..mtu+18 bytes (65536 with TSO) are sent; a frame the device refuses
 *    completes DONE|ERR on every descriptor and counts tx_bad_len. While the link is down
 *    descriptors complete DONE without sending (not counted as sent). Frames go to the wire
 *    through the MAC (mac.c) and the fault injector (wire.c); tx_frames/tx_bytes count what
 *    the port sent, before injection (a frame the injector drops still counts, a duplicate
 *    counts once).
 *  - RX checksum: TCP/UDP over IPv4/IPv6 is checked and flagged (rx_csum()), never dropped.
 *  - RX filter: the port's unicast MAC, broadcast, every multicast (there is no multicast
 *    filter table, so ALLMULTI changes nothing), everything with PROMISC. Frames go to the
 *    RX queue RSS picks (SET_RSS: the Toeplitz hash over addresses and ports, then the
 *    indirection table), else to the lowest-numbered working RX queue. A frame waiting for a
 *    buffer (rx_blocked) waits for its own queue's. Broadcast frames count in rx_broadcast only, other group
 *    addresses in rx_multicast.
 *  - TX goes through the MAC (mac.c): a descriptor whose frame may not be sent now (its
 *    priority is paused by the peer, or the line is busy) stays at the head of its queue and
 *    the queue waits, without spinning, until the MAC's timer kicks the device. RX of a
 *    lossless priority may wait in the MAC's receive buffer and drain here later.
 *  - A ring (descriptor) DMA fault stops that queue for good (until destroyed or reset) and
 *    counts tx_dma_errors / rx_dma_errors; frame buffer faults complete DONE|ERR.
 *  - Event moderation (struct tern_cmd_create_eth_queue_in): a queue's event is raised per
 *    frame (after the last descriptor of a TX frame), not per descriptor. With a period set,
 *    the frame that finds the queue armed starts a moderation (moder_n = 1, moder_start =
 *    now) and disarms the queue; later frames count; the event goes out at moder_frames or
 *    at moder_start + moder_period_us, whichever is first. At most 32 queues can wait, so
 *    the timer scans them all rather than keeping a list.
 */
#include "frame.h"
#include "mac.h"

static inline unsigned int ethq_depth(const struct ternm_ethq *q)
{
	return 1u << q->log_depth;
}

static struct ternm_ethq *ethq_get(struct tern_model *m, bool rx, uint32_t qid)
{
	struct ternm_ethq *qs = rx ? m->rxq : m->txq;
	uint32_t n = rx ? TERNM_MAX_ETH_RXQS : TERNM_MAX_ETH_TXQS;

	if (qid >= n || !qs[qid].used)
		return NULL;
	return &qs[qid];
}

/*
 * Moderation bounds at @p: __le16 period_us then __le16 frames, at byte @off of the command's
 * input (for the syndrome).
 */
static int ethq_moder_check_param(const uint8_t *p, uint32_t off, uint32_t *syndrome)
{
	uint16_t period = get_le16(p), frames = get_le16(p + 2);

	if (period > TERNM_MAX_ETH_MODER_PERIOD) {
		*syndrome = off;
		return TERN_CMD_BAD_PARAM;
	}
	/* Without a period nothing would bound the wait for the count: refused. */
	if (frames > TERNM_MAX_ETH_MODER_FRAMES || (!period && frames > 1)) {
		*syndrome = off + 2;
		return TERN_CMD_BAD_PARAM;
	}
	return TERN_CMD_OK;
}

int ternm_ethq_create(struct tern_model *m, bool rx, const uint8_t *in, uint32_t *result,
		   uint32_t *syndrome)
{
	typedef struct tern_cmd_create_eth_queue_in T;
	uint8_t log = in[offsetof(T, log_depth)];
	uint16_t eqn = get_le16(CFLD(in, T, eqn));
	struct ternm_ethq *qs = rx ? m->rxq : m->txq;
	unsigned int n = rx ? TERNM_MAX_ETH_RXQS : TERNM_MAX_ETH_TXQS;
	struct ternm_ethq *q = NULL;
	struct ternm_mem mem;
	uint32_t bad_off;
	unsigned int i;
	int rc;

	if (log < TERN_ETH_MIN_LOG || log > TERNM_MAX_ETH_LOG) {
		*syndrome = offsetof(T, log_depth);
		return TERN_CMD_BAD_PARAM;
	}
	if (in[offsetof(T, rsvd0)]) {
		*syndrome = offsetof(T, rsvd0);
		return TERN_CMD_BAD_PARAM;
	}
	rc = ethq_moder_check_param(in + offsetof(T, moder_period_us), offsetof(T, moder_period_us),
				    syndrome);
	if (rc != TERN_CMD_OK)
		return rc;
	if (eqn >= TERNM_MAX_EQS || !m->eq[eqn].used) {
		*syndrome = offsetof(T, eqn);
		return TERN_CMD_BAD_RESOURCE;
	}
	for (i = 0; i < n; i++) {
		if (!qs[i].used) {
			q = &qs[i];
			break;
		}
	}
	if (!q)
		return TERN_CMD_NO_RESOURCES;
	rc = ternm_mem_init(m, &mem, CFLD(in, T, mem), 16ull << log, &bad_off);
	if (rc != TERN_CMD_OK) {
		*syndrome = rc == TERN_CMD_BAD_PARAM ? offsetof(T, mem) + bad_off : 0;
		return rc;
	}
	memset(q, 0, sizeof(*q));
	q->used = true;
	q->log_depth = log;
	q->eqn = eqn;
	q->mem = mem;
	q->moder_period_us = get_le16(CFLD(in, T, moder_period_us));
	q->moder_frames = get_le16(CFLD(in, T, moder_frames));
	*result = i;
	return TERN_CMD_OK;
}

int ternm_ethq_destroy(struct tern_model *m, bool rx, const uint8_t *in, uint32_t *syndrome)
{
	uint32_t qid = get_le32(CFLD(in, struct tern_cmd_destroy_eth_queue_in, qid));
	struct ternm_ethq *q = ethq_get(m, rx, qid);

	if (!q) {
		*syndrome = offsetof(struct tern_cmd_destroy_eth_queue_in, qid);
		return TERN_CMD_BAD_RESOURCE;
	}
	ternm_mem_free(m, &q->mem);
	memset(q, 0, sizeof(*q));
	/* The frame held back for this queue may now go elsewhere (or be dropped). */
	if (rx && (m->rx_blocked || ternm_mac_rx_pending(m)))
		ternm_kick(m);
	return TERN_CMD_OK;
}

void ternm_eth_clear(struct tern_model *m)
{
	unsigned int i;

	for (i = 0; i < TERNM_MAX_ETH_TXQS; i++)
		ternm_mem_free(m, &m->txq[i].mem);
	for (i = 0; i < TERNM_MAX_ETH_RXQS; i++)
		ternm_mem_free(m, &m->rxq[i].mem);
	memset(m->txq, 0, sizeof(m->txq));
	memset(m->rxq, 0, sizeof(m->rxq));
	m->tx_gather_q = NULL;
	memset(&m->rss, 0, sizeof(m->rss));
}

void ternm_eth_doorbell(struct tern_model *m, bool rx, unsigned int qid, uint32_t val)
{
	struct ternm_ethq *q = ethq_get(m, rx, qid);
	uint16_t pi = (uint16_t)(val & TERN_ETH_DB_PI_MASK);

	if (!q || (val & ~TERN_ETH_DB_PI_MASK)) {
		m->stats.db_ignored++;
		ternm_log(m, TERN_MODEL_LOG_WARN, "doorbell 0x%x for %s queue %u ignored: %s",
			  val, rx ? "RX" : "TX", qid,
			  q ? "reserved bits set" : "the queue does not exist");
		return;
	}
	if (q->broken)
		return;
	/*
	 * Only forward, and never more than depth ahead of CI: a PI moved back would take away
	 * descriptors the device may already hold (an RX segment under way keeps those from ci
	 * to ci + lro.nbufs, a TX frame those it gathered), and CI would then pass PI.
	 */
	if ((uint16_t)(pi - q->pi) > (uint16_t)(ethq_depth(q) - (uint16_t)(q->pi - q->ci))) {
		m->stats.db_ignored++;
		ternm_log(m, TERN_MODEL_LOG_WARN,
		       "%s queue %u doorbell PI %u ignored: PI %u, CI %u, depth %u",
		       rx ? "RX" : "TX", qid, pi, q->pi, q->ci, ethq_depth(q));
		return;
	}
	q->pi = pi;
	if (rx ? m->rx_blocked || ternm_mac_rx_pending(m) : q->pi != q->ci)
		ternm_kick(m);
}

static uint64_t ethq_moder_deadline(const struct ternm_ethq *q)
{
	return q->moder_start + (uint64_t)q->moder_period_us * TERNM_NS_PER_US;
}

static void ethq_event(struct tern_model *m, struct ternm_ethq *q, bool rx)
{
	struct ternm_ethq *qs = rx ? m->rxq : m->txq;

	q->moder_n = 0;
	ternm_eq_post(m, q->eqn, rx ? TERN_EQE_ETH_RXQ : TERN_EQE_ETH_TXQ,
		      (uint32_t)(q - qs));
}

/* A moderation under way met a bound (the event goes out), or waits for the timer. */
static void ethq_moder_check(struct tern_model *m, struct ternm_ethq *q, bool rx)
{
	if (!q->moder_period_us || (q->moder_frames && q->moder_n >= q->moder_frames) ||
	    ethq_moder_deadline(q) <= ternm_now(m)) {
		ethq_event(m, q, rx);
		return;
	}
	if (ethq_moder_deadline(q) < m->timer_armed_ns)
		ternm_timer_update(m);
}

/* A frame of @q is finished (all its descriptors): report it as armed and moderated. */
static void ethq_frame_done(struct tern_model *m, struct ternm_ethq *q, bool rx)
{
	if (q->moder_n) {
		if (q->moder_n < UINT32_MAX)
			q->moder_n++;
		ethq_moder_check(m, q, rx);
	} else if (q->armed) {
		q->armed = false;
		q->moder_n = 1;
		q->moder_start = ternm_now(m);
		ethq_moder_check(m, q, rx);
	}
}

/*
 * The arm doorbell (TERN_DB_ETH_TXQ_ARM/RXQ_ARM): the driver has processed the queue's
 * descriptors up to @val, its consumer index, and asks for an event. The index is the
 * driver's word: it may not be past the device's CI (descriptors not finished yet) nor more
 * than a ring behind it, and the reserved bits must be 0; otherwise the doorbell is ignored,
 * counted and logged. Descriptors the device finished past the driver's index are reported
 * as a frame finishing now, so the event goes out at once (or starts a moderation): the
 * driver armed after its last look at the ring, and nothing finished in between is missed.
 * An arming while a moderation is under way asks for the event already pending.
 */
void ternm_eth_arm(struct tern_model *m, bool rx, unsigned int qid, uint32_t val)
{
	struct ternm_ethq *q = ethq_get(m, rx, qid);
	uint16_t ci = (uint16_t)(val & TERN_ETH_ARM_CI_MASK);

	if (!q || (val & ~TERN_ETH_ARM_CI_MASK) || (uint16_t)(q->ci - ci) > ethq_depth(q)) {
		m->stats.db_ignored++;
		ternm_log(m, TERN_MODEL_LOG_WARN,
			  "arm doorbell 0x%x for %s queue %u ignored: %s (CI %u)", val,
			  rx ? "RX" : "TX", qid, !q ? "the queue does not exist" :
			  (val & ~TERN_ETH_ARM_CI_MASK) ? "reserved bits set" :
			  "index out of range", q ? q->ci : 0);
		return;
	}
	if (q->broken || q->moder_n)
		return;
	q->armed = true;
	if (ci != q->ci)
		ethq_frame_done(m, q, rx);
}

/* When the segment RX queue @q is coalescing is due (receive coalescing, below). */
static uint64_t lro_deadline(const struct ternm_ethq *q)
{
	return q->lro.start + TERN_ETH_LRO_TIMEOUT_US * TERNM_NS_PER_US;
}

static void lro_flush(struct tern_model *m, struct ternm_ethq *q, unsigned int qid);

/* A descriptor of @q is finished. */
static void ethq_done(struct ternm_ethq *q)
{
	q->ci++;
}

uint64_t ternm_eth_next_deadline(const struct tern_model *m)
{
	uint64_t next = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < TERNM_MAX_ETH_TXQS + TERNM_MAX_ETH_RXQS; i++) {
		const struct ternm_ethq *q = i < TERNM_MAX_ETH_TXQS ? &m->txq[i] :
					     &m->rxq[i - TERNM_MAX_ETH_TXQS];

		if (q->used && q->moder_n && q->moder_period_us && ethq_moder_deadline(q) < next)
			next = ethq_moder_deadline(q);
		if (q->lro.nbufs && lro_deadline(q) < next)
			next = lro_deadline(q);
	}
	return next;
}

void ternm_eth_timer(struct tern_model *m, uint64_t now)
{
	unsigned int i;

	for (i = 0; i < TERNM_MAX_ETH_TXQS + TERNM_MAX_ETH_RXQS; i++) {
		bool rx = i >= TERNM_MAX_ETH_TXQS;
		struct ternm_ethq *q = rx ? &m->rxq[i - TERNM_MAX_ETH_TXQS] : &m->txq[i];

		/* a segment's write-back first: it may count for the moderation */
		if (q->lro.nbufs && lro_deadline(q) <= now)
			lro_flush(m, q, i - TERNM_MAX_ETH_TXQS);
		if (q->used && q->moder_n && q->moder_period_us && ethq_moder_deadline(q) <= now)
			ethq_event(m, q, rx);
	}
}

/* MODIFY_ETH_TXQ/RXQ: see struct tern_cmd_modify_eth_queue_in. */
int ternm_ethq_modify(struct tern_model *m, bool rx, const uint8_t *in, uint32_t *syndrome)
{
	typedef struct tern_cmd_modify_eth_queue_in T;
	struct ternm_ethq *q = ethq_get(m, rx, get_le32(CFLD(in, T, qid)));
	int rc;

	if (!q) {
		*syndrome = offsetof(T, qid);
		return TERN_CMD_BAD_RESOURCE;
	}
	rc = ethq_moder_check_param(in + offsetof(T, moder_period_us), offsetof(T, moder_period_us),
				    syndrome);
	if (rc != TERN_CMD_OK)
		return rc;
	if (get_le32(CFLD(in, T, rsvd))) {
		*syndrome = offsetof(T, rsvd);
		return TERN_CMD_BAD_PARAM;
	}
	q->moder_period_us = get_le16(CFLD(in, T, moder_period_us));
	q->moder_frames = get_le16(CFLD(in, T, moder_frames));
	if (q->moder_n)
		ethq_moder_check(m, q, rx);
	return TERN_CMD_OK;
}

static void ethq_break(struct tern_model *m, struct ternm_ethq *q, bool rx, unsigned int qid)
{
	q->broken = true;
	q->lro.nbufs = 0;		/* a segment under way is lost with the ring */
	if (rx)
		m->stats.rx_dma_errors++;
	else
		m->stats.tx_dma_errors++;
	ternm_log(m, TERN_MODEL_LOG_ERR, "%s queue %u ring unreachable: queue stopped",
	       rx ? "RX" : "TX", qid);
}

/* ---- transmit ------------------------------------------------------------------------------ */

enum tx_result {
	TX_DONE,	/* frame finished (sent or not) */
	TX_STOP,	/* ring unreachable: the queue is broken */
	TX_WAIT,	/* the MAC may not send the frame now: try again when kicked */
	TX_PARTIAL,	/* the frame's last descriptor is not posted yet: wait for the doorbell */
};

static int tx_desc(struct tern_model *m, struct ternm_ethq *q, unsigned int i, uint8_t *d)
{
	uint64_t off = (uint64_t)((uint16_t)(q->ci + i) & (ethq_depth(q) - 1)) *
		       sizeof(struct tern_eth_txd);

	return ternm_mem_read(m, &q->mem, off, d, sizeof(struct tern_eth_txd));
}

/*
 * Reads the descriptors of the frame at the head of @q and its bytes into m->tx_gather.
 * A frame the device will not send (bad layout or length, a piece it cannot read) still has
 * its descriptors counted so that they all complete with ERR; a chain longer than
 * TERN_ETH_TX_MAX_DESCS ends there.
 */
static enum tx_result tx_gather(struct tern_model *m, struct ternm_ethq *q, unsigned int qid,
				struct ternm_tx_frame *f)
{
	typedef struct tern_eth_txd T;
	typedef struct tern_eth_txd_ctx C;
	unsigned int posted = (uint16_t)(q->pi - q->ci), i;
	uint32_t limit = m->mtu + TERNM_ETH_HDR_OVERHEAD;
	bool bad = false, dma = false;
	uint8_t d[sizeof(T)];

	*f = (struct ternm_tx_frame){ .status = TERN_ETH_DESC_DONE };
	m->tx_gather_q = q;
	for (i = 0; i < TERN_ETH_TX_MAX_DESCS; i++) {
		uint16_t flags, len;

		if (i == posted)
			return TX_PARTIAL;
		if (tx_desc(m, q, i, d)) {
			ethq_break(m, q, false, qid);
			return TX_STOP;
		}
		f->ndesc = i + 1;
		flags = get_le16(CFLD(d, T, flags));
		if (flags & TERN_ETH_TXD_CTX) {
			/* only first, only with offloads, and nothing the device does not know */
			f->ctx_flags = get_le16(CFLD(d, C, ctx_flags));
			if (i || (flags & (TERN_ETH_TXD_MORE | TERN_ETH_TXD_TS)) ||
			    (f->ctx_flags & ~(TERN_ETH_CTX_CSUM | TERN_ETH_CTX_TSO)))
				bad = true;
			f->csum_start = get_le16(CFLD(d, C, csum_start));
			f->csum_offset = get_le16(CFLD(d, C, csum_offset));
			f->mss = get_le16(CFLD(d, C, mss));
			if (f->ctx_flags & TERN_ETH_CTX_TSO)
				limit = TERN_ETH_TSO_MAX_FRAME;
			continue;
		}
		len = get_le16(CFLD(d, T, len));
		if (!len || len > limit - f->len) {
			bad = true;
		} else if (!bad && !dma) {
			if (ternm_dma_read(m, get_le64(CFLD(d, T, addr)), m->tx_gather + f->len, len))
				dma = true;
			else
				f->len += len;
		}
		if (!(flags & TERN_ETH_TXD_MORE)) {
			f->ts_req = flags & TERN_ETH_TXD_TS;
			break;
		}
		if (flags & TERN_ETH_TXD_TS)	/* a timestamp only on the last descriptor */
			bad = true;
	}
	if (i == TERN_ETH_TX_MAX_DESCS)		/* no end within the limit */
		bad = true;
	if (dma) {
		f->status |= TERN_ETH_DESC_ERR;
		m->stats.tx_dma_errors++;
	} else if (bad || f->len < TERN_ETH_MIN_FRAME) {
		f->status |= TERN_ETH_DESC_ERR;
		m->stats.tx_bad_len++;
	}
	return TX_DONE;
}

/* TERN_ETH_CTX_CSUM on the whole frame: false if the offsets do not fit it. */
static bool tx_csum(uint8_t *b, uint32_t len, uint16_t start, uint16_t offset)
{
	uint32_t at = (uint32_t)start + offset;
	uint16_t c;

	if (start < FRAME_ETH_HLEN || start >= len || at + 2 > len)
		return false;
	c = (uint16_t)~frame_csum_fold(frame_csum_add(0, b + start, len - start));
	/* the sum covered the pseudo-header sum already at @at: fold it in, then store */
	put_be16(b + at, c ? c : 0xffff);
	return true;
}

/*
 * The sum of the TCP/UDP pseudo-header of the IP packet at @l3 (IPv4 or IPv6: addresses,
 * protocol, the L4 length), the part of the Internet checksum that is not in the packet.
 */
static uint32_t pseudo_sum(const uint8_t *f, unsigned int ipver, size_t l3, uint8_t proto,
			   uint32_t l4_len)
{
	uint32_t s = ipver == 4 ? frame_csum_add(0, f + l3 + 12, 8) :
				  frame_csum_add(0, f + l3 + 8, 32);

	return s + proto + (l4_len >> 16) + (l4_len & 0xffff);
}

/* The TCP checksum of a segment built in @b: L3 header at @l3, TCP at @l4, @len bytes. */
static void tcp_csum(uint8_t *b, unsigned int ipver, size_t l3, size_t l4, size_t len)
{
	uint32_t tcp_len = (uint32_t)(len - l4);

	put_be16(b + l4 + 16, 0);
	put_be16(b + l4 + 16, (uint16_t)~frame_csum_fold(frame_csum_add(
		pseudo_sum(b, ipver, l3, FRAME_IPPROTO_TCP, tcp_len), b + l4, tcp_len)));
}

/*
 * TERN_ETH_CTX_TSO: where the TCP header is and how long the headers are, or false if the
 * frame cannot be segmented as the context asks (not IPv4/IPv6 TCP at @csum_start, IPv4
 * options are fine, no IPv6 extension header; headers plus @mss beyond the MTU).
 */
static bool tso_layout(const struct tern_model *m, const uint8_t *b, const struct ternm_tx_frame *f,
		       struct frame_info *p, size_t *hdr)
{
	size_t l4;

	frame_parse(b, f->len, p);
	if (!p->ip_whole || p->proto != FRAME_IPPROTO_TCP || !f->mss ||
	    !(f->ctx_flags & TERN_ETH_CTX_CSUM))
		return false;
	l4 = p->l4;
	if (f->csum_start != l4 || f->csum_offset != 16 || l4 + 20 > f->len)
		return false;
	*hdr = l4 + (size_t)(b[l4 + 12] >> 4) * 4;
	if (*hdr < l4 + 20 || *hdr > f->len)
		return false;
	return *hdr - p->l3 + f->mss <= m->mtu;
}

/*
 * The frame (its first segment) goes to the MAC now: its time, if it asked for one. Once:
 * a TSO frame held back by the MAC and gathered again goes on from a later segment, which
 * then gives the time.
 */
static void tx_stamp(struct tern_model *m, struct ternm_tx_frame *f)
{
	if (f->ts_req && !f->ts_valid) {
		f->ts = ternm_clock_now(m);
		f->ts_valid = true;
	}
}

/*
 * Sends the gathered frame, cut into segments as TERN_ETH_CTX_TSO asks (one segment
 * otherwise), from segment q->tso_sent on. TX_WAIT when the MAC holds it back (q->tso_sent
 * says how far it got; the frame is gathered again when the queue is kicked).
 */
static enum tx_result tx_send(struct tern_model *m, struct ternm_ethq *q, struct ternm_tx_frame *f)
{
	uint8_t *b = m->tx_gather, *seg = m->frame;
	struct frame_info p;
	size_t hdr, payload, n, i, off, l4;
	uint32_t seq;
	uint16_t id = 0;
	uint8_t tcp_flags;

	if (!(f->ctx_flags & TERN_ETH_CTX_TSO)) {
		if (f->len > (uint32_t)m->mtu + TERNM_ETH_HDR_OVERHEAD ||
		    ((f->ctx_flags & TERN_ETH_CTX_CSUM) &&
		     !tx_csum(b, f->len, f->csum_start, f->csum_offset))) {
			f->status |= TERN_ETH_DESC_ERR;
			m->stats.tx_bad_len++;
			return TX_DONE;
		}
		if (!ternm_mac_may_send(m, ternm_mac_frame_prio(m, b, f->len), NULL))
			return TX_WAIT;
		tx_stamp(m, f);
		ternm_mac_tx(m, b, f->len);
		m->stats.tx_frames++;
		m->stats.tx_bytes += f->len;
		return TX_DONE;
	}
	if (!tso_layout(m, b, f, &p, &hdr)) {
		f->status |= TERN_ETH_DESC_ERR;
		m->stats.tx_bad_len++;
		return TX_DONE;
	}
	l4 = f->csum_start;
	payload = f->len - hdr;
	n = payload ? (payload + f->mss - 1) / f->mss : 1;
	seq = get_be32(b + l4 + 4);
	tcp_flags = b[l4 + 13];
	if (p.ipver == 4)
		id = get_be16(b + p.l3 + 4);
	for (i = q->tso_sent; i < n; i++) {
		size_t chunk = payload ? f->mss : 0, len;

		off = i * f->mss;
		if (payload && off + chunk > payload)
			chunk = payload - off;
		len = hdr + chunk;
		memcpy(seg, b, hdr);
		memcpy(seg + hdr, b + hdr + off, chunk);
		if (p.ipver == 4) {
			put_be16(seg + p.l3 + 2, (uint16_t)(len - p.l3));
			put_be16(seg + p.l3 + 4, (uint16_t)(id + i));
			frame_ipv4_csum_set(seg + p.l3, p.l4 - p.l3);
		} else {
			put_be16(seg + p.l3 + 4, (uint16_t)(len - p.l3 - FRAME_IPV6_HLEN));
		}
		put_be32(seg + l4 + 4, seq + (uint32_t)off);
		seg[l4 + 13] = tcp_flags;
		if (i + 1 < n)
			seg[l4 + 13] &= (uint8_t)~0x09;		/* FIN, PSH: the last segment's */
		if (i)
			seg[l4 + 13] &= (uint8_t)~0x80;		/* CWR: the first segment's */
		tcp_csum(seg, p.ipver, p.l3, l4, len);
		if (!ternm_mac_may_send(m, ternm_mac_frame_prio(m, seg, len), NULL)) {
			q->tso_sent = (uint16_t)i;
			return TX_WAIT;
		}
		tx_stamp(m, f);		/* the first segment sent (once) */
		ternm_mac_tx(m, seg, len);
		m->stats.tx_frames++;
		m->stats.tx_bytes += len;
		m->stats.tx_tso_segments++;
	}
	q->tso_sent = 0;
	return TX_DONE;
}

static enum tx_result tx_one(struct tern_model *m, struct ternm_ethq *q, unsigned int qid)
{
	struct ternm_tx_frame f;
	enum tx_result r;
	unsigned int i;
	uint8_t st[2];

	if (q->held.ndesc && m->tx_gather_q == q) {
		f = q->held;
	} else {
		/* held, read again: tso_sent only bounds the loop over the new frame's segments */
		r = tx_gather(m, q, qid, &f);
		if (r != TX_DONE)
			return r;
	}
	if (!(f.status & TERN_ETH_DESC_ERR) && m->link_up) {
		r = tx_send(m, q, &f);
		if (r == TX_WAIT)
			q->held = f;
		if (r != TX_DONE)
			return r;
	}
	q->held.ndesc = 0;
	q->tso_sent = 0;
	for (i = 0; i < f.ndesc; i++) {
		uint64_t off = (uint64_t)(q->ci & (ethq_depth(q) - 1)) * sizeof(struct tern_eth_txd);
		uint16_t status = f.status;

		if (i + 1 == f.ndesc && f.ts_valid && !(status & TERN_ETH_DESC_ERR)) {
			uint8_t ts[8];

			put_le64(ts, f.ts);
			if (ternm_mem_write(m, &q->mem, off + offsetof(struct tern_eth_txd, ts),
					    ts, sizeof(ts))) {
				ethq_break(m, q, false, qid);
				return TX_STOP;
			}
			status |= TERN_ETH_DESC_TS;
			m->stats.tx_timestamps++;
		}
		put_le16(st, status);
		if (ternm_mem_write(m, &q->mem, off + offsetof(struct tern_eth_txd, status), st,
				    sizeof(st))) {
			ethq_break(m, q, false, qid);
			return TX_STOP;
		}
		ethq_done(q);
	}
	ethq_frame_done(m, q, false);
	return TX_DONE;
}

void ternm_eth_run(struct tern_model *m)
{
	bool more = false;
	unsigned int qid;

	for (qid = 0; qid < TERNM_MAX_ETH_TXQS; qid++) {
		struct ternm_ethq *q = &m->txq[qid];
		unsigned int budget = TERNM_ETH_BUDGET;
		enum tx_result r = TX_DONE;

		while (q->used && !q->broken && q->ci != q->pi && budget && !m->fatal) {
			r = tx_one(m, q, qid);
			if (r != TX_DONE)
				break;
			budget--;
		}
		/*
		 * A queue waiting for the MAC is kicked by the MAC's timer, one waiting for the
		 * rest of a frame by its doorbell, not from here.
		 */
		if (q->used && !q->broken && q->ci != q->pi && r != TX_WAIT && r != TX_PARTIAL)
			more = true;
	}
	if (more && !m->fatal)
		ternm_kick(m);
}

/* ---- receive ------------------------------------------------------------------------------- */

/*
 * The Toeplitz hash of @len bytes at @in (at most TERN_RSS_KEY_SIZE - 4) with @key: for each
 * input bit, most significant first, that is set, the 32 key bits starting at that bit's
 * position are XORed into the result.
 */
uint32_t ternm_toeplitz(const uint8_t key[TERN_RSS_KEY_SIZE], const uint8_t *in, size_t len)
{
	uint32_t r = 0, window = get_be32(key);
	size_t i;
	int b;

	if (len > TERN_RSS_KEY_SIZE - 4)
		len = TERN_RSS_KEY_SIZE - 4;
	for (i = 0; i < len; i++) {
		for (b = 7; b >= 0; b--) {
			if (in[i] & (1u << b))
				r ^= window;
			/* the next key bit enters the window: bit 32 + i * 8 + (7 - b) */
			window = (window << 1) | ((key[i + 4] >> b) & 1);
		}
	}
	return r;
}

/*
 * The RSS hash of a frame as SET_RSS asks for it: false when the frame gets none (RSS off,
 * not IP, a type not enabled). *@l4: the ports were hashed too.
 */
static bool rss_hash(const struct tern_model *m, const uint8_t *f, size_t len, uint32_t *hash,
		     bool *l4)
{
	uint32_t fields = m->rss.hash_fields, want_l4, want_l3;
	uint8_t in[36];
	struct frame_info p;
	size_t l3, l4off, alen, n, i;
	uint8_t proto;
	bool whole_l4;

	if (!fields)
		return false;
	frame_parse(f, len, &p);
	if (!p.ip_whole)
		return false;
	l3 = p.l3;
	l4off = p.l4;
	proto = p.proto;
	if (p.ipver == 4) {
		alen = 4;
		/* a fragment carries no ports (or not the first fragment's) */
		whole_l4 = !(get_be16(f + l3 + 6) & 0x3fff);
		want_l3 = TERN_RSS_HASH_IPV4;
		want_l4 = proto == FRAME_IPPROTO_TCP ? TERN_RSS_HASH_TCP_IPV4 :
			  proto == FRAME_IPPROTO_UDP ? TERN_RSS_HASH_UDP_IPV4 : 0;
	} else {
		alen = 16;
		whole_l4 = true;		/* an extension header (p.proto) hides the ports */
		want_l3 = TERN_RSS_HASH_IPV6;
		want_l4 = proto == FRAME_IPPROTO_TCP ? TERN_RSS_HASH_TCP_IPV6 :
			  proto == FRAME_IPPROTO_UDP ? TERN_RSS_HASH_UDP_IPV6 : 0;
	}
	/* source then destination address: adjacent in both headers */
	memcpy(in, f + l3 + (p.ipver == 4 ? 12 : 8), 2 * alen);
	n = 2 * alen;
	*l4 = false;
	if (want_l4 && (fields & want_l4) && whole_l4 && l4off + 4 <= len) {
		memcpy(in + n, f + l4off, 4);
		n += 4;
		*l4 = true;
	} else if (!(fields & want_l3)) {
		return false;
	}
	*hash = 0;
	for (i = 0; i < n; i++)
		*hash ^= m->rss.tbl[i][in[i]];
	return true;
}

/* The per-byte tables of @rss's key (struct ternm_rss). */
static void rss_tables(struct ternm_rss *rss)
{
	uint8_t in[TERN_RSS_KEY_SIZE - 4] = { 0 };
	unsigned int i, b, v;

	/* each byte position's eight single-bit inputs, then every value as their XOR */
	for (i = 0; i < TERN_RSS_KEY_SIZE - 4; i++) {
		uint32_t bit[8];

		for (b = 0; b < 8; b++) {
			in[i] = (uint8_t)(0x80 >> b);
			bit[b] = ternm_toeplitz(rss->key, in, i + 1);
		}
		in[i] = 0;
		for (v = 0; v < 256; v++) {
			uint32_t h = 0;

			for (b = 0; b < 8; b++)
				if (v & (0x80u >> b))
					h ^= bit[b];
			rss->tbl[i][v] = h;
		}
	}
}

static bool rxq_works(const struct tern_model *m, unsigned int qid)
{
	return qid < TERNM_MAX_ETH_RXQS && m->rxq[qid].used && !m->rxq[qid].broken;
}

/*
 * The RX queue that receives a frame (@f NULL: a frame without a hash): the one RSS picks,
 * else the lowest-numbered working one; -1 if none. *@hash and *@hflags: the descriptor's
 * write-back (TERN_ETH_RXD_HASH...), if @hash is not NULL.
 */
static int rx_target(const struct tern_model *m, const uint8_t *f, size_t len, uint32_t *hash,
		     uint16_t *hflags)
{
	uint32_t h;
	bool l4;
	int i;

	if (hflags)
		*hflags = 0;
	if (f && rss_hash(m, f, len, &h, &l4)) {
		unsigned int qid = m->rss.indir[h % TERN_RSS_INDIR_SIZE];

		if (hash) {
			*hash = h;
			*hflags = TERN_ETH_RXD_HASH | (l4 ? TERN_ETH_RXD_HASH_L4 : 0);
		}
		if (rxq_works(m, qid))
			return (int)qid;
	}
	for (i = 0; i < TERNM_MAX_ETH_RXQS; i++) {
		if (rxq_works(m, (unsigned int)i))
			return i;
	}
	return -1;
}

/* SET_RSS: see struct tern_cmd_set_rss_in. */
int ternm_eth_set_rss(struct tern_model *m, const uint8_t *in, uint32_t *syndrome)
{
	typedef struct tern_cmd_set_rss_in T;
	uint32_t fields = get_le32(CFLD(in, T, hash_fields));
	const uint8_t *indir = CFLD(in, T, indir);
	unsigned int i;

	if (fields & ~TERN_RSS_HASH_ALL) {
		*syndrome = offsetof(T, hash_fields);
		return TERN_CMD_BAD_PARAM;
	}
	if (get_le32(CFLD(in, T, flags))) {
		*syndrome = offsetof(T, flags);
		return TERN_CMD_BAD_PARAM;
	}
	for (i = 0; fields && i < TERN_RSS_INDIR_SIZE; i++) {
		if (indir[i] >= TERNM_MAX_ETH_RXQS || !m->rxq[indir[i]].used) {
			*syndrome = (uint32_t)(offsetof(T, indir) + i);
			return TERN_CMD_BAD_PARAM;
		}
	}
	/* a flow may move to another queue: what its old one holds goes first */
	ternm_eth_lro_flush_all(m);
	m->rss.hash_fields = fields;
	if (memcmp(m->rss.key, CFLD(in, T, key), TERN_RSS_KEY_SIZE) || !m->rss.tbl[0][0x80]) {
		memcpy(m->rss.key, CFLD(in, T, key), TERN_RSS_KEY_SIZE);
		rss_tables(&m->rss);
	}
	memcpy(m->rss.indir, indir, TERN_RSS_INDIR_SIZE);
	/* A frame held back waits for another queue now, perhaps one with buffers. */
	if (m->rx_blocked || ternm_mac_rx_pending(m))
		ternm_kick(m);
	return TERN_CMD_OK;
}

/*
 * Would @frame (NULL: the frame last refused, m->rx_blocked_q) find no buffer in its RX
 * queue?
 */
bool ternm_eth_rx_would_block(const struct tern_model *m, const uint8_t *frame, size_t len)
{
	int qid;

	if (!m->ready || m->fatal || !m->link_up)
		return false;
	if (!frame && rxq_works(m, m->rx_blocked_q))
		qid = (int)m->rx_blocked_q;
	else
		qid = rx_target(m, frame, len, NULL, NULL);
	/* the descriptors a segment under way holds are not free */
	return qid >= 0 && (uint16_t)(m->rxq[qid].pi - m->rxq[qid].ci) <= m->rxq[qid].lro.nbufs;
}

/* The checks of ternm_eth_rx_frame() before it needs a descriptor: would it take @frame? */
bool ternm_eth_rx_wants(const struct tern_model *m, const uint8_t *frame, size_t len)
{
	if (!m->ready || m->fatal || !m->link_up || len < TERN_ETH_MIN_FRAME)
		return false;
	/* Group addresses (broadcast included) always pass the filter. */
	if (!(frame[0] & 1) && !(m->port_flags & TERN_PORT_F_PROMISC) && memcmp(frame, m->mac, 6))
		return false;
	if (ternm_rdma_is_roce(m, frame, len) || len > (size_t)m->mtu + TERNM_ETH_HDR_OVERHEAD)
		return false;
	return rx_target(m, NULL, 0, NULL, NULL) >= 0;
}

/*
 * The receive checksum check: TERN_ETH_RXD_CSUM_OK when the frame is IPv4 or IPv6 (no
 * extension header) carrying TCP or UDP, not an IPv4 fragment, its lengths consistent, and
 * the IPv4 header checksum and the TCP/UDP checksum both good; TERN_ETH_RXD_CSUM_BAD when
 * one of them is wrong; 0 when the device cannot tell (other protocols, fragments, an IPv4
 * UDP datagram without a checksum, lengths that do not add up: the stack decides).
 * *@l4sum: with OK or BAD, the folded one's complement sum of the TCP/UDP header and payload.
 */
static uint16_t rx_csum(const uint8_t *f, size_t len, uint16_t *l4sum)
{
	struct frame_info p;
	size_t l3, l4, l4_len, ihl;
	uint32_t s;
	uint8_t proto;

	frame_parse(f, len, &p);
	if (!p.ip_whole)
		return 0;
	l3 = p.l3;
	l4 = p.l4;
	proto = p.proto;
	if (p.ipver == 4) {
		ihl = l4 - l3;
		if (!frame_ipv4_csum_ok(f + l3, ihl))
			return TERN_ETH_RXD_CSUM_BAD;
		if (get_be16(f + l3 + 6) & 0x3fff)	/* MF or a fragment offset */
			return 0;
		if (get_be16(f + l3 + 2) < ihl || l3 + get_be16(f + l3 + 2) > len)
			return 0;
		l4_len = get_be16(f + l3 + 2) - ihl;
	} else {
		l4_len = get_be16(f + l3 + 4);
		if (l4 + l4_len > len)
			return 0;
	}
	if (proto == FRAME_IPPROTO_TCP) {
		if (l4_len < 20)
			return 0;
	} else if (proto == FRAME_IPPROTO_UDP) {
		if (l4_len < FRAME_UDP_HLEN || get_be16(f + l4 + 4) != l4_len)
			return 0;
		if (p.ipver == 4 && !get_be16(f + l4 + 6))
			return 0;			/* sent without a checksum */
	} else {
		return 0;
	}
	*l4sum = frame_csum_fold(frame_csum_add(0, f + l4, l4_len));
	s = pseudo_sum(f, p.ipver, l3, proto, (uint32_t)l4_len) + *l4sum;
	return frame_csum_fold(s) == 0xffff ? TERN_ETH_RXD_CSUM_OK : TERN_ETH_RXD_CSUM_BAD;
}


/* ---- receive coalescing (LRO) ------------------------------------------------------------- */

/* A TCP frame's layout, as far as coalescing needs it (lro_frame()). */
struct lro_frame {
	uint8_t ipver;
	uint16_t l3, l4, hlen;	/* IP and TCP headers' offsets, all headers' length */
	uint16_t payload;	/* TCP payload bytes (Ethernet padding excluded) */
	uint32_t seq;
	bool psh;
};

#define TCP_F_FIN	0x01
#define TCP_F_PSH	0x08
#define TCP_F_ACK	0x10

/*
 * Could @f be part of a coalesced segment: IPv4 without options, DF, not a fragment, or IPv6
 * without extension headers; TCP with ACK (and maybe PSH) only; a payload; lengths that add
 * up; no 802.1Q tag; a unicast destination; headers that fit TERNM_LRO_MAX_HDR. The
 * checksums are checked apart (rx_csum()). Reads no byte at or beyond @len.
 */
static bool lro_frame(const uint8_t *f, size_t len, struct lro_frame *t)
{
	struct frame_info p;
	size_t l3, l4, end, th;

	frame_parse(f, len, &p);
	if (!p.ip_whole || p.vlan || (f[0] & 1))
		return false;
	l3 = p.l3;
	if (p.ipver == 4) {
		if ((f[l3] & 0x0f) != 5 || f[l3 + 9] != FRAME_IPPROTO_TCP ||
		    (get_be16(f + l3 + 6) & 0xbfff) != 0 || !(f[l3 + 6] & 0x40))
			return false;		/* options, not TCP, a fragment, no DF, reserved bit */
		l4 = l3 + FRAME_IPV4_HLEN;
		end = l3 + get_be16(f + l3 + 2);
	} else {
		if (f[l3 + 6] != FRAME_IPPROTO_TCP)
			return false;
		l4 = l3 + FRAME_IPV6_HLEN;
		end = l4 + get_be16(f + l3 + 4);
	}
	if (end > len || l4 + 20 > end)
		return false;
	th = (size_t)(f[l4 + 12] >> 4) * 4;
	/* data offset >= 5, no NS bit, ACK and perhaps PSH: nothing else */
	if (th < 20 || (f[l4 + 12] & 0x0f) || (f[l4 + 13] & ~TCP_F_PSH) != TCP_F_ACK ||
	    l4 + th >= end || l4 + th > TERNM_LRO_MAX_HDR)
		return false;
	t->ipver = p.ipver;
	t->l3 = (uint16_t)l3;
	t->l4 = (uint16_t)l4;
	t->hlen = (uint16_t)(l4 + th);
	t->payload = (uint16_t)(end - l4 - th);
	t->seq = get_be32(f + l4 + 4);
	t->psh = f[l4 + 13] & TCP_F_PSH;
	return true;
}

/*
 * Does @t (frame @f) continue @g: the same headers but for the fields each frame has its own
 * of (IP length, identification and header checksum; TCP sequence number, PSH, window and
 * checksum), the next sequence number, and no more payload than the first frame's.
 */
static bool lro_continues(const struct ternm_lro *g, const uint8_t *f, const struct lro_frame *t)
{
	const uint8_t *h = g->hdr;
	size_t l3 = t->l3, l4 = t->l4;

	if (t->ipver != g->ipver || t->hlen != g->hlen || t->seq != g->next_seq ||
	    t->payload > g->mss || memcmp(f, h, l3))
		return false;
	if (t->ipver == 4) {
		if (memcmp(f + l3, h + l3, 2) || memcmp(f + l3 + 6, h + l3 + 6, 4) ||
		    memcmp(f + l3 + 12, h + l3 + 12, 8))
			return false;
	} else if (memcmp(f + l3, h + l3, 4) || memcmp(f + l3 + 6, h + l3 + 6, 34)) {
		return false;
	}
	/* ports; acknowledgment, data offset, flags (PSH aside); urgent pointer and options */
	return !memcmp(f + l4, h + l4, 4) && !memcmp(f + l4 + 8, h + l4 + 8, 5) &&
	       ((f[l4 + 13] ^ h[l4 + 13]) & ~TCP_F_PSH) == 0 &&
	       !memcmp(f + l4 + 18, h + l4 + 18, t->hlen - l4 - 18);
}

/* Descriptor @i of RX queue @q's ring (its number from the ring's start, wrapped). */
static uint64_t rxd_off(const struct ternm_ethq *q, uint16_t i)
{
	return (uint64_t)(i & (ethq_depth(q) - 1)) * sizeof(struct tern_eth_rxd);
}

/*
 * Completes descriptor ci + @i of a segment with DONE|ERR (its buffer could not be written):
 * false when the ring itself is unreachable (the queue is then stopped).
 */
static bool lro_desc_err(struct tern_model *m, struct ternm_ethq *q, unsigned int qid,
			 unsigned int i)
{
	typedef struct tern_eth_rxd T;
	uint8_t w[2];

	put_le16(w, 0);
	if (ternm_mem_write(m, &q->mem, rxd_off(q, (uint16_t)(q->ci + i)) + offsetof(T, pkt_len),
			    w, 2))
		goto broken;
	put_le16(w, TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	if (ternm_mem_write(m, &q->mem, rxd_off(q, (uint16_t)(q->ci + i)) + offsetof(T, status),
			    w, 2))
		goto broken;
	return true;
broken:
	ethq_break(m, q, true, qid);
	return false;
}

/*
 * Ends @q's segment with DONE|ERR on every descriptor it took (a buffer could not be
 * written: its frames are lost, as a frame is whose buffer is unreachable).
 */
static void lro_abort(struct tern_model *m, struct ternm_ethq *q, unsigned int qid)
{
	unsigned int i, n = q->lro.nbufs;

	q->lro.nbufs = 0;
	for (i = 0; i < n; i++)
		if (!lro_desc_err(m, q, qid, i))
			return;
	q->ci = (uint16_t)(q->ci + n);
	ethq_frame_done(m, q, true);
}

/*
 * The one's complement sum of frame @f's TCP payload (@t) as it counts in a segment whose
 * payload so far is @at bytes: the TCP sum rx_csum() found (@l4sum) less the header's.
 */
static uint32_t lro_sum(const uint8_t *f, const struct lro_frame *t, uint16_t l4sum,
			uint32_t at)
{
	uint16_t h = frame_csum_fold(frame_csum_add(0, f + t->l4, t->hlen - t->l4));
	uint16_t s = frame_csum_fold((uint32_t)l4sum + (uint16_t)~h);

	/* an odd offset puts every byte in the other half of its word */
	return at & 1 ? (uint32_t)(uint16_t)(s << 8 | s >> 8) : s;
}

/* The segment's headers as one TCP segment carrying all of its payload. */
static void lro_headers(const struct ternm_lro *g, uint8_t *h)
{
	size_t l3 = g->l3, l4 = g->l4, tcp = g->hlen - g->l4;
	uint32_t l4len = (uint32_t)(tcp + g->payload), s;

	memcpy(h, g->hdr, g->hlen);
	if (g->ipver == 4) {
		put_be16(h + l3 + 2, (uint16_t)(FRAME_IPV4_HLEN + l4len));
		frame_ipv4_csum_set(h + l3, FRAME_IPV4_HLEN);
	} else {
		put_be16(h + l3 + 4, (uint16_t)l4len);
	}
	if (g->psh)
		h[l4 + 13] |= TCP_F_PSH;
	memcpy(h + l4 + 14, g->window, 2);
	h[l4 + 16] = h[l4 + 17] = 0;
	s = frame_csum_add(pseudo_sum(h, g->ipver, l3, FRAME_IPPROTO_TCP, l4len), h + l4, tcp);
	s = frame_csum_fold(frame_csum_fold(s) + g->psum);
	put_be16(h + l4 + 16, (uint16_t)~s);
}

/*
 * Writes back RX queue @q's segment and ends it: as the one frame it holds, or as a coalesced
 * segment (the first descriptor last); or completes its descriptors with ERR when a buffer
 * cannot be written. Counts it, once, for the queue's events.
 */
static void lro_flush(struct tern_model *m, struct ternm_ethq *q, unsigned int qid)
{
	typedef struct tern_eth_rxd T;
	struct ternm_lro *g = &q->lro;
	uint8_t h[TERNM_LRO_MAX_HDR], w[4];
	uint16_t status = TERN_ETH_DESC_DONE | g->status;
	unsigned int i, n = g->nbufs;

	if (!n)
		return;
	if (g->segs > 1) {
		lro_headers(g, h);
		if (ternm_dma_write(m, g->addr[0], h, g->hlen)) {
			m->stats.rx_dma_errors++;
			lro_abort(m, q, qid);
			return;
		}
		for (i = 1; i < n; i++) {
			put_le16(w, g->used[i]);
			if (ternm_mem_write(m, &q->mem, rxd_off(q, (uint16_t)(q->ci + i)) +
					    offsetof(T, pkt_len), w, 2))
				goto broken;
			put_le16(w, TERN_ETH_DESC_DONE | (i + 1 < n ? TERN_ETH_RXD_MORE : 0));
			if (ternm_mem_write(m, &q->mem, rxd_off(q, (uint16_t)(q->ci + i)) +
					    offsetof(T, status), w, 2))
				goto broken;
		}
		put_le16(w, g->mss);
		if (ternm_mem_write(m, &q->mem, rxd_off(q, q->ci) + offsetof(T, lro_mss), w, 2))
			goto broken;
		status |= TERN_ETH_RXD_LRO | (n > 1 ? TERN_ETH_RXD_MORE : 0);
		m->stats.rx_lro_frames += g->segs;
		m->stats.rx_lro_segments++;
	}
	if (status & TERN_ETH_RXD_HASH) {
		put_le32(w, g->hash);
		if (ternm_mem_write(m, &q->mem, rxd_off(q, q->ci) + offsetof(T, rss_hash), w, 4))
			goto broken;
	}
	put_le16(w, g->segs > 1 ? g->used[0] : g->len0);
	if (ternm_mem_write(m, &q->mem, rxd_off(q, q->ci) + offsetof(T, pkt_len), w, 2))
		goto broken;
	put_le16(w, status);
	if (ternm_mem_write(m, &q->mem, rxd_off(q, q->ci) + offsetof(T, status), w, 2))
		goto broken;
	g->nbufs = 0;
	q->ci = (uint16_t)(q->ci + n);
	ethq_frame_done(m, q, true);
	return;
broken:
	ethq_break(m, q, true, qid);
}

void ternm_eth_lro_flush_all(struct tern_model *m)
{
	unsigned int i;

	for (i = 0; i < TERNM_MAX_ETH_RXQS; i++)
		if (m->rxq[i].used && !m->rxq[i].broken)
			lro_flush(m, &m->rxq[i], i);
}

/*
 * Appends @n payload bytes at @p to @q's segment, taking more buffers from the ring as the
 * last one fills: false, with nothing changed, when the ring or TERN_ETH_LRO_MAX_BUFS does
 * not have the room; -1 when a buffer or the ring could not be read or written (the segment
 * is then broken off: the caller ends it).
 */
static int lro_append(struct tern_model *m, struct ternm_ethq *q, unsigned int qid,
		      const uint8_t *p, size_t n)
{
	typedef struct tern_eth_rxd T;
	struct ternm_lro *g = &q->lro;
	uint64_t addr[TERN_ETH_LRO_MAX_BUFS];
	uint16_t blen[TERN_ETH_LRO_MAX_BUFS];
	unsigned int k = g->nbufs, last = k - 1, i;
	size_t room = g->buf_len[last] - g->used[last], put;
	uint8_t d[sizeof(T)];

	/* find the room first: the buffers after the segment's, while the ring has them */
	while (room < n) {
		if (k >= TERN_ETH_LRO_MAX_BUFS || (uint16_t)(q->pi - q->ci) <= k)
			return 0;
		if (ternm_mem_read(m, &q->mem, rxd_off(q, (uint16_t)(q->ci + k)), d, sizeof(d))) {
			ethq_break(m, q, true, qid);
			return -1;
		}
		addr[k] = get_le64(CFLD(d, T, addr));
		blen[k] = get_le16(CFLD(d, T, buf_len));
		room += blen[k];
		k++;
	}
	for (i = g->nbufs; i < k; i++) {
		g->addr[i] = addr[i];
		g->buf_len[i] = blen[i];
		g->used[i] = 0;
	}
	g->nbufs = (uint8_t)k;
	for (i = last; n; i++) {
		put = g->buf_len[i] - g->used[i];
		if (put > n)
			put = n;
		if (put && ternm_dma_write(m, g->addr[i] + g->used[i], p, put)) {
			m->stats.rx_dma_errors++;
			return -1;
		}
		g->used[i] = (uint16_t)(g->used[i] + put);
		p += put;
		n -= put;
	}
	return 1;
}

/*
 * Receive coalescing for @f, a frame for RX queue @q with rx_csum() @csum (and @l4sum) and
 * RSS @hash/@hflags: true when the segment took it (counted then), false when the caller receives it
 * as usual. Ends the queue's segment when @f does not continue it.
 */
static bool lro_rx(struct tern_model *m, struct ternm_ethq *q, unsigned int qid,
		   const uint8_t *f, size_t len, uint16_t csum, uint16_t l4sum, uint32_t hash,
		   uint16_t hflags)
{
	typedef struct tern_eth_rxd T;
	struct ternm_lro *g = &q->lro;
	struct lro_frame t;
	uint8_t d[sizeof(T)];
	bool tcp;
	int rc;

	tcp = (m->port_flags & TERN_PORT_F_LRO) && csum == TERN_ETH_RXD_CSUM_OK &&
	      lro_frame(f, len, &t);
	if (g->nbufs) {
		/* the IPv4 total length or IPv6 payload length stays within 16 bits */
		if (tcp && lro_continues(g, f, &t) &&
		    g->hlen - (g->ipver == 4 ? g->l3 : g->l4) + g->payload + t.payload <= 65535) {
			rc = lro_append(m, q, qid, f + t.hlen, t.payload);
			if (rc > 0) {
				g->psum = frame_csum_fold(g->psum + lro_sum(f, &t, l4sum,
									   g->payload));
				g->payload += t.payload;
				g->next_seq += t.payload;
				g->segs++;
				g->psh |= t.psh;
				memcpy(g->window, f + t.l4 + 14, 2);
				m->stats.rx_frames++;
				m->stats.rx_bytes += len;
				if (t.psh || t.payload < g->mss)
					lro_flush(m, q, qid);
				return true;
			}
			if (rc < 0) {
				/* the frame is lost with the segment (a buffer or the ring failed) */
				if (q->broken)
					g->nbufs = 0;
				else
					lro_abort(m, q, qid);
				return true;
			}
		}
		lro_flush(m, q, qid);
		if (q->broken)
			return true;
	}
	/* open a segment: a full frame without PSH, into a buffer it fits */
	if (!tcp || t.psh || q->ci == q->pi)
		return false;
	if (ternm_mem_read(m, &q->mem, rxd_off(q, q->ci), d, sizeof(d))) {
		ethq_break(m, q, true, qid);
		return true;
	}
	if (get_le16(CFLD(d, T, buf_len)) < len)
		return false;			/* the usual path drops it and counts it */
	g->addr[0] = get_le64(CFLD(d, T, addr));
	g->buf_len[0] = get_le16(CFLD(d, T, buf_len));
	/* the whole frame, padding too: a segment of one frame is written back as that frame */
	if (ternm_dma_write(m, g->addr[0], f, len))
		return false;			/* the usual path writes it and reports the error */
	g->used[0] = (uint16_t)(t.hlen + t.payload);	/* where the next payload goes */
	g->len0 = (uint16_t)len;
	g->nbufs = 1;
	g->ipver = t.ipver;
	g->l3 = t.l3;
	g->l4 = t.l4;
	g->hlen = t.hlen;
	g->mss = t.payload;
	g->segs = 1;
	g->psh = 0;
	g->status = TERN_ETH_RXD_CSUM_OK | hflags;
	g->hash = hash;
	g->next_seq = t.seq + t.payload;
	g->payload = t.payload;
	g->psum = lro_sum(f, &t, l4sum, 0);
	g->start = ternm_now(m);
	memcpy(g->window, f + t.l4 + 14, 2);
	memcpy(g->hdr, f, t.hlen);
	m->stats.rx_frames++;
	m->stats.rx_bytes += len;
	if (lro_deadline(q) < m->timer_armed_ns)
		ternm_timer_update(m);
	return true;
}

/*
 * A frame from the wire before the Ethernet queues: the device up, the frame long enough,
 * for this port's address (or a group one, or promiscuous), not RoCEv2 (the RDMA engine's,
 * handed over here), within the MTU. Returns false if it goes no further (counted).
 */
static bool rx_filter(struct tern_model *m, const uint8_t *frame, size_t len, bool *is_bcast,
		      bool *is_mcast)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	if (!m->ready || m->fatal) {
		m->stats.rx_no_queue++;
		return false;
	}
	if (len < TERN_ETH_MIN_FRAME) {
		m->stats.rx_runt++;
		return false;
	}
	*is_bcast = !memcmp(frame, bcast, 6);
	*is_mcast = !*is_bcast && (frame[0] & 1);
	if (!*is_bcast && !*is_mcast && !(m->port_flags & TERN_PORT_F_PROMISC) &&
	    memcmp(frame, m->mac, 6)) {
		m->stats.rx_filtered++;
		return false;
	}
	/* RoCEv2 goes to the RDMA engine, which never holds a frame back. */
	if (ternm_rdma_is_roce(m, frame, len)) {
		ternm_rdma_rx(m, frame, len);
		return false;
	}
	if (len > (size_t)m->mtu + TERNM_ETH_HDR_OVERHEAD) {
		m->stats.rx_oversize++;
		return false;
	}
	return true;
}

/*
 * Write @frame into the buffer of receive descriptor @d (at @off of queue @q, number @qid)
 * and complete the descriptor: its length, the RSS hash (@hash, @hflags), the checksum
 * result @csum. Returns the descriptor's status, or -1 if the ring could not be written
 * (the queue broke).
 */
static int rx_deliver(struct tern_model *m, struct ternm_ethq *q, int qid, uint64_t off,
		      const uint8_t *d, const uint8_t *frame, size_t len, uint16_t csum,
		      uint32_t hash, uint16_t hflags)
{
	typedef struct tern_eth_rxd T;
	uint16_t status = TERN_ETH_DESC_DONE;
	uint8_t w[2];

	if (ternm_dma_write(m, get_le64(CFLD(d, T, addr)), frame, len)) {
		status |= TERN_ETH_DESC_ERR;
		m->stats.rx_dma_errors++;
		put_le16(w, 0);
	} else {
		put_le16(w, (uint16_t)len);
		status |= csum;
		if (status & TERN_ETH_RXD_CSUM_BAD)
			m->stats.rx_csum_bad++;
		if (m->port_flags & TERN_PORT_F_RX_TS) {
			/* the time over the address, so no hash */
			uint8_t ts[8];

			put_le64(ts, ternm_clock_now(m));
			if (ternm_mem_write(m, &q->mem, off + offsetof(T, ts), ts, sizeof(ts)))
				goto broken;
			status |= TERN_ETH_DESC_TS;
			m->stats.rx_timestamps++;
		} else if (hflags) {
			uint8_t hb[4];

			put_le32(hb, hash);
			if (ternm_mem_write(m, &q->mem, off + offsetof(T, rss_hash), hb, sizeof(hb)))
				goto broken;
			status |= hflags;
		}
	}
	if (ternm_mem_write(m, &q->mem, off + offsetof(T, pkt_len), w, sizeof(w)))
		goto broken;
	put_le16(w, status);
	if (ternm_mem_write(m, &q->mem, off + offsetof(T, status), w, sizeof(w)))
		goto broken;
	return status;
broken:
	ethq_break(m, q, true, qid);
	return -1;
}

size_t ternm_eth_rx_frame(struct tern_model *m, const uint8_t *frame, size_t len)
{
	typedef struct tern_eth_rxd T;
	uint8_t d[sizeof(T)];
	struct ternm_ethq *q;
	int qid, status;
	uint64_t off;
	uint16_t hflags, csum, l4sum = 0;
	uint32_t hash = 0;
	bool is_bcast, is_mcast;

	if (!rx_filter(m, frame, len, &is_bcast, &is_mcast))
		return len;
	qid = m->link_up ? rx_target(m, frame, len, &hash, &hflags) : -1;
	if (qid < 0) {
		m->stats.rx_no_queue++;
		return len;
	}
	q = &m->rxq[qid];
	csum = rx_csum(frame, len, &l4sum);
	if (!(m->port_flags & TERN_PORT_F_RX_TS) &&
	    (q->lro.nbufs || (m->port_flags & TERN_PORT_F_LRO)) &&
	    lro_rx(m, q, (unsigned int)qid, frame, len, csum, l4sum, hash, hflags))
		return len;
	if (q->ci == q->pi) {
		/* No buffer: the embedding holds the frame until host->rx_ready. */
		m->rx_blocked = true;
		m->rx_blocked_q = (unsigned int)qid;
		return 0;
	}
	off = (uint64_t)(q->ci & (ethq_depth(q) - 1)) * sizeof(T);
	if (ternm_mem_read(m, &q->mem, off, d, sizeof(d))) {
		ethq_break(m, q, true, qid);
		return len;
	}
	if (get_le16(CFLD(d, T, buf_len)) < len) {
		/* Too big for the buffer: dropped, the descriptor stays for the next frame. */
		m->stats.rx_oversize++;
		return len;
	}
	status = rx_deliver(m, q, qid, off, d, frame, len, csum, hash, hflags);
	if (status < 0)
		return len;
	if (!(status & TERN_ETH_DESC_ERR)) {
		m->stats.rx_frames++;
		m->stats.rx_bytes += len;
		if (is_bcast)
			m->stats.rx_broadcast++;
		else if (is_mcast)
			m->stats.rx_multicast++;
	}
	ethq_done(q);
	ethq_frame_done(m, q, true);
	return len;
}
