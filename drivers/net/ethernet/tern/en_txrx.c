// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern Ethernet function: events and NAPI. The channel's EQ handler, and the NAPI poll that
 * reaps TX completions (en_tx.c), receives (en_rx.c) and re-arms the queues.
 *
 * Data path
 * ---------
 * Channels (1..max_channels, ethtool -L): each a TX queue, an RX queue and an EQ on an MSI-X
 * vector of its own (tern_en_vector()), with a NAPI context; netdev queue i is channel i's.
 * The device picks the RX queue of a received frame by RSS (SET_RSS: the Toeplitz hash, an
 * indirection table of RX queues, ethtool -x/-X) and writes the hash back into the RX
 * descriptor, which becomes the skb's hash. The device writes back a descriptor's status
 * (DONE last) when it is finished with it and, if the queue is armed, posts one event to
 * the queue's EQ and disarms the queue. The EQ's hard interrupt handler (eq.c) calls
 * tern_en_eq_event(), which schedules the channel's NAPI straight away, and re-arms the EQ
 * itself. The NAPI poll reaps TX completions, receives up to its budget, refills the RX
 * ring and, once it completes, re-arms both queues and looks at the rings once more: a
 * descriptor finished before its queue was armed raises no event, so it would otherwise be
 * missed until the next one.
 *
 * Doorbells carry a producer index that must never go backwards. The RX doorbell is only
 * written by the NAPI poll. The TX doorbell is written by ndo_start_xmit and by the NAPI poll
 * (to arm the queue), both under the TX queue's xmit lock.
 *
 * tern_db() is iowrite32(), which orders earlier writes to coherent (descriptor) memory
 * before the MMIO write; that is the only ordering a ring needs, as the device reads
 * descriptors only up to the producer index of a doorbell.
 */
#include <linux/netdevice.h>

#include "en.h"

/**
 * tern_en_eq_event() - a channel's EQ handler (tern_eq_handler_t)
 * @eq: the channel's event queue
 * @eqe: the event
 * @ctx: the channel
 *
 * Schedules the channel's NAPI for a completion event of one of its queues; counts the
 * event, or counts and ignores it when it is not the channel's.
 *
 * Context: hard interrupt (the EQ's handler, eq.c): napi_schedule() only raises the NAPI
 * softirq; the counters are the channel's alone (one EQ, one vector).
 */
void tern_en_eq_event(struct tern_eq *eq, const struct tern_eqe *eqe, void *ctx)
{
	struct tern_en_channel *ch = ctx;
	struct tern_en_priv *priv = ch->priv;
	u32 qid = le32_to_cpu(eqe->data[0]);
	bool ours;

	switch (eqe->type) {
	case TERN_EQE_ETH_TXQ:
		ours = qid == READ_ONCE(ch->tx.qid);
		break;
	case TERN_EQE_ETH_RXQ:
		ours = qid == READ_ONCE(ch->rx.qid);
		break;
	default:
		ours = false;
		break;
	}

	u64_stats_update_begin(&ch->eq_stats.syncp);
	u64_stats_inc(ours ? &ch->eq_stats.events : &ch->eq_stats.unknown);
	u64_stats_update_end(&ch->eq_stats.syncp);

	if (likely(ours))
		napi_schedule(&ch->napi);
	else if (net_ratelimit())
		netdev_dbg(priv->netdev, "ignoring event type %#x for queue %u on EQ %u\n",
			   eqe->type, qid, eq->eqn);
}

/* Ask each queue for one event when it next finishes a descriptor. The EQ needs nothing:
 * its interrupt handler re-arms it after every interrupt. NAPI context.
 */
static void tern_en_arm(struct tern_en_channel *ch)
{
	struct tern_en_priv *priv = ch->priv;
	struct tern_en_rxq *rx = &ch->rx;

	tern_db(priv->tdev, TERN_DB_ETH_RXQ(rx->qid), tern_en_db_value(rx->pi, TERN_ETH_DB_ARM));
	rx->db_pending = false;

	/* ndo_start_xmit writes this doorbell too: its PI must not go backwards. */
	__netif_tx_lock(ch->tx.nq, smp_processor_id());
	tern_en_tx_db(priv, &ch->tx, TERN_ETH_DB_ARM);
	__netif_tx_unlock(ch->tx.nq);
}

/* Has the device finished a descriptor the poll has not seen yet? */
static bool tern_en_work_pending(struct tern_en_channel *ch)
{
	struct tern_en_txq *tx = &ch->tx;
	struct tern_en_rxq *rx = &ch->rx;
	u32 pi;

	if (rx->ci != rx->pi &&
	    (le16_to_cpu(READ_ONCE(rx->ring[rx->ci & (rx->size - 1)].status)) &
	     TERN_ETH_DESC_DONE))
		return true;

	/* Acquire: a slot below pi has its status cleared by ndo_start_xmit. */
	pi = smp_load_acquire(&tx->pi);
	return tx->ci != pi &&
	       (le16_to_cpu(READ_ONCE(tx->ring[tx->ci & (tx->size - 1)].status)) &
		TERN_ETH_DESC_DONE);
}

/**
 * tern_en_poll() - a channel's NAPI poll
 * @napi: the channel's NAPI context
 * @budget: most RX descriptors to process; 0 from netpoll (TX completions only)
 *
 * Reaps TX completions, receives, refills the RX ring; once done, re-arms both queues and
 * reschedules itself if the device finished a descriptor before they were armed.
 *
 * Context: softirq (NAPI).
 * Return: RX descriptors processed; @budget to be polled again.
 */
int tern_en_poll(struct napi_struct *napi, int budget)
{
	struct tern_en_channel *ch = container_of(napi, struct tern_en_channel, napi);
	struct tern_en_priv *priv = ch->priv;
	struct tern_en_rxq *rx = &ch->rx;
	bool refilled;
	int work;

	tern_en_tx_clean(ch, budget);
	/* netpoll: TX only, and the poll must not complete. */
	if (unlikely(!budget))
		return 0;

	work = tern_en_rx_poll(ch, budget);
	refilled = tern_en_rx_refill(rx, GFP_ATOMIC | __GFP_NOWARN);

	/* Keep polling while there is more to receive, and while the ring is empty because
	 * buffers could not be allocated: without buffers the device raises no RX event.
	 */
	if (work == budget || (!refilled && rx->pi == rx->ci)) {
		if (rx->db_pending) {
			tern_db(priv->tdev, TERN_DB_ETH_RXQ(rx->qid), tern_en_db_value(rx->pi, 0));
			rx->db_pending = false;
		}
		return budget;
	}

	if (napi_complete_done(napi, work)) {
		tern_en_arm(ch);
		/* The doorbells reach the device before the rings are looked at again. */
		mb();
		if (tern_en_work_pending(ch))
			napi_schedule(napi);
	} else if (rx->db_pending) {
		tern_db(priv->tdev, TERN_DB_ETH_RXQ(rx->qid), tern_en_db_value(rx->pi, 0));
		rx->db_pending = false;
	}
	return work;
}
