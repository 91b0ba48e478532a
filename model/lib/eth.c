/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: the Ethernet MAC (TX and RX rings, receive filter, counters).
 *
 * Decisions (see Documentation/hw/):
 *  - Queues are created disarmed with PI = CI = 0. A doorbell PI more than depth ahead of
 *    the device's CI (or behind it) is ignored and logged.
 *  - TX: frames of TERN_ETH_MIN_FRAME..mtu+18 bytes are sent; others complete DONE|ERR and
 *    count tx_bad_len. descriptor flags and rsvd are ignored for now. While the link is down
 *    descriptors complete DONE without sending (not counted as sent). Frames go to the wire
 *    through the MAC (mac.c) and the fault injector (wire.c); tx_frames/tx_bytes count what
 *    the port sent, before injection (a frame the injector drops still counts, a duplicate
 *    counts once).
 *  - RX filter: the port's unicast MAC, broadcast, every multicast (there is no multicast
 *    filter table, so ALLMULTI changes nothing), everything with PROMISC. Frames go to the
 *    lowest-numbered RX queue. Broadcast frames count in rx_broadcast only, other group
 *    addresses in rx_multicast.
 *  - TX goes through the MAC (mac.c): a descriptor whose frame may not be sent now (its
 *    priority is paused by the peer, or the line is busy) stays at the head of its queue and
 *    the queue waits, without spinning, until the MAC's timer kicks the device. RX of a
 *    lossless priority may wait in the MAC's receive buffer and drain here later.
 *  - A ring (descriptor) DMA fault stops that queue for good (until destroyed or reset) and
 *    counts tx_dma_errors / rx_dma_errors; frame buffer faults complete DONE|ERR.
 */
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
	if (get_le32(CFLD(in, T, rsvd1))) {
		*syndrome = offsetof(T, rsvd1);
		return TERN_CMD_BAD_PARAM;
	}
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
	ternm_mem_free(&q->mem);
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
		ternm_mem_free(&m->txq[i].mem);
	for (i = 0; i < TERNM_MAX_ETH_RXQS; i++)
		ternm_mem_free(&m->rxq[i].mem);
	memset(m->txq, 0, sizeof(m->txq));
	memset(m->rxq, 0, sizeof(m->rxq));
}

void ternm_eth_doorbell(struct tern_model *m, bool rx, unsigned int qid, uint32_t val)
{
	struct ternm_ethq *q = ethq_get(m, rx, qid);
	uint16_t pi = (uint16_t)(val & TERN_ETH_DB_PI_MASK);

	if (!q) {
		ternm_log(m, TERN_MODEL_LOG_WARN, "doorbell 0x%x for %s queue %u that does not exist",
		       val, rx ? "RX" : "TX", qid);
		return;
	}
	if (q->broken)
		return;
	if ((uint16_t)(pi - q->ci) > ethq_depth(q)) {
		ternm_log(m, TERN_MODEL_LOG_WARN,
		       "%s queue %u doorbell PI %u ignored: CI %u, depth %u", rx ? "RX" : "TX", qid,
		       pi, q->ci, ethq_depth(q));
		return;
	}
	q->pi = pi;
	if (val & TERN_ETH_DB_ARM)
		q->armed = true;
	if (rx ? m->rx_blocked || ternm_mac_rx_pending(m) : q->pi != q->ci)
		ternm_kick(m);
}

/* A descriptor of @q is finished: report it if the queue is armed. */
static void ethq_done(struct tern_model *m, struct ternm_ethq *q, bool rx, unsigned int qid)
{
	q->ci++;
	if (q->armed) {
		q->armed = false;
		ternm_eq_post(m, q->eqn, rx ? TERN_EQE_ETH_RXQ : TERN_EQE_ETH_TXQ, qid);
	}
}

static void ethq_break(struct tern_model *m, struct ternm_ethq *q, bool rx, unsigned int qid)
{
	q->broken = true;
	if (rx)
		m->stats.rx_dma_errors++;
	else
		m->stats.tx_dma_errors++;
	ternm_log(m, TERN_MODEL_LOG_ERR, "%s queue %u ring unreachable: queue stopped",
	       rx ? "RX" : "TX", qid);
}

/* ---- transmit ------------------------------------------------------------------------------ */

enum tx_result {
	TX_DONE,	/* descriptor finished */
	TX_STOP,	/* ring unreachable: the queue is broken */
	TX_WAIT,	/* the MAC may not send the frame now: try again when kicked */
};

static enum tx_result tx_one(struct tern_model *m, struct ternm_ethq *q, unsigned int qid)
{
	typedef struct tern_eth_txd T;
	uint8_t d[sizeof(T)], st[2];
	uint64_t off = (uint64_t)(q->ci & (ethq_depth(q) - 1)) * sizeof(T);
	uint64_t addr;
	uint16_t len, status = TERN_ETH_DESC_DONE;

	if (ternm_mem_read(m, &q->mem, off, d, sizeof(d))) {
		ethq_break(m, q, false, qid);
		return TX_STOP;
	}
	addr = get_le64(CFLD(d, T, addr));
	len = get_le16(CFLD(d, T, len));
	if (len < TERN_ETH_MIN_FRAME || len > (unsigned int)m->mtu + TERNM_ETH_HDR_OVERHEAD) {
		status |= TERN_ETH_DESC_ERR;
		m->stats.tx_bad_len++;
	} else if (ternm_dma_read(m, addr, m->frame, len)) {
		status |= TERN_ETH_DESC_ERR;
		m->stats.tx_dma_errors++;
	} else if (m->link_up) {
		if (!ternm_mac_may_send(m, ternm_mac_frame_prio(m, m->frame, len), NULL))
			return TX_WAIT;
		ternm_mac_tx(m, m->frame, len);
		m->stats.tx_frames++;
		m->stats.tx_bytes += len;
	}
	put_le16(st, status);
	if (ternm_mem_write(m, &q->mem, off + offsetof(T, status), st, sizeof(st))) {
		ethq_break(m, q, false, qid);
		return TX_STOP;
	}
	ethq_done(m, q, false, qid);
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
		/* A queue waiting for the MAC is kicked by the MAC's timer, not from here. */
		if (q->used && !q->broken && q->ci != q->pi && r != TX_WAIT)
			more = true;
	}
	if (more && !m->fatal)
		ternm_kick(m);
}

/* ---- receive ------------------------------------------------------------------------------- */

/* The RX queue that receives: the lowest-numbered working one; -1 if none. */
static int rx_target(const struct tern_model *m)
{
	int i;

	for (i = 0; i < TERNM_MAX_ETH_RXQS; i++) {
		if (m->rxq[i].used && !m->rxq[i].broken)
			return i;
	}
	return -1;
}

bool ternm_eth_rx_would_block(const struct tern_model *m)
{
	int qid;

	if (!m->ready || m->fatal || !m->link_up)
		return false;
	qid = rx_target(m);
	return qid >= 0 && m->rxq[qid].ci == m->rxq[qid].pi;
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
	return rx_target(m) >= 0;
}

size_t ternm_eth_rx_frame(struct tern_model *m, const uint8_t *frame, size_t len)
{
	typedef struct tern_eth_rxd T;
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t d[sizeof(T)], w[2];
	struct ternm_ethq *q;
	int qid;
	uint64_t off, addr;
	uint16_t status = TERN_ETH_DESC_DONE;
	bool is_bcast, is_mcast;

	if (!m->ready || m->fatal) {
		m->stats.rx_no_queue++;
		return len;
	}
	if (len < TERN_ETH_MIN_FRAME) {
		m->stats.rx_runt++;
		return len;
	}
	is_bcast = !memcmp(frame, bcast, 6);
	is_mcast = !is_bcast && (frame[0] & 1);
	if (!is_bcast && !is_mcast && !(m->port_flags & TERN_PORT_F_PROMISC) &&
	    memcmp(frame, m->mac, 6)) {
		m->stats.rx_filtered++;
		return len;
	}
	/* RoCEv2 goes to the RDMA engine, which never holds a frame back. */
	if (ternm_rdma_is_roce(m, frame, len)) {
		ternm_rdma_rx(m, frame, len);
		return len;
	}
	if (len > (size_t)m->mtu + TERNM_ETH_HDR_OVERHEAD) {
		m->stats.rx_oversize++;
		return len;
	}
	qid = m->link_up ? rx_target(m) : -1;
	if (qid < 0) {
		m->stats.rx_no_queue++;
		return len;
	}
	q = &m->rxq[qid];
	if (q->ci == q->pi) {
		/* No buffer: the embedding holds the frame until host->rx_ready. */
		m->rx_blocked = true;
		return 0;
	}
	off = (uint64_t)(q->ci & (ethq_depth(q) - 1)) * sizeof(T);
	if (ternm_mem_read(m, &q->mem, off, d, sizeof(d))) {
		ethq_break(m, q, true, qid);
		return len;
	}
	addr = get_le64(CFLD(d, T, addr));
	if (get_le16(CFLD(d, T, buf_len)) < len) {
		/* Too big for the buffer: dropped, the descriptor stays for the next frame. */
		m->stats.rx_oversize++;
		return len;
	}
	if (ternm_dma_write(m, addr, frame, len)) {
		status |= TERN_ETH_DESC_ERR;
		m->stats.rx_dma_errors++;
		put_le16(w, 0);
	} else {
		put_le16(w, (uint16_t)len);
	}
	if (ternm_mem_write(m, &q->mem, off + offsetof(T, pkt_len), w, sizeof(w))) {
		ethq_break(m, q, true, qid);
		return len;
	}
	put_le16(w, status);
	if (ternm_mem_write(m, &q->mem, off + offsetof(T, status), w, sizeof(w))) {
		ethq_break(m, q, true, qid);
		return len;
	}
	if (!(status & TERN_ETH_DESC_ERR)) {
		m->stats.rx_frames++;
		m->stats.rx_bytes += len;
		if (is_bcast)
			m->stats.rx_broadcast++;
		else if (is_mcast)
			m->stats.rx_multicast++;
	}
	ethq_done(m, q, true, qid);
	return len;
}
