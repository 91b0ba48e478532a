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
 * itself. The NAPI poll reaps TX completions, receives up to its budget, refills the RX ring
 * and, once it completes, arms both queues with their consumer indices: the device raises
 * the event at once for a descriptor it finished past that index (one the poll did not see
 * before it completed), so the poll need not look at the rings again.
 *
 * Doorbells, and who writes each (each has a single writer, so none needs a lock of its own):
 *  - TX producer (TERN_DB_ETH_TXQ): ndo_start_xmit, under the TX queue's xmit lock; its
 *    producer index must never go backwards.
 *  - RX producer (TERN_DB_ETH_RXQ): the NAPI poll (refills).
 *  - TX and RX arm (TERN_DB_ETH_TXQ_ARM/RXQ_ARM): the NAPI poll, after napi_complete_done(),
 *    with the consumer index only it writes. NAPI runs on one CPU at a time, so the arm
 *    doorbells are never written concurrently, and the TX arm takes no TX lock.
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

/* Ring the RX producer doorbell if buffers were posted since the last one. NAPI context. */
static void tern_en_rx_db(struct tern_en_priv *priv, struct tern_en_rxq *rx)
{
	if (!rx->db_pending)
		return;
	tern_db(priv->tdev, TERN_DB_ETH_RXQ(rx->qid), tern_en_db_value(rx->pi));
	rx->db_pending = false;
}

/* Ask each queue for one event, at once for descriptors the device finished past the
 * consumer index the poll reached, else when it next finishes one. The EQ needs nothing: its
 * interrupt handler re-arms it after every interrupt. NAPI context, after
 * napi_complete_done(): an event raised now schedules the poll again.
 */
static void tern_en_arm(struct tern_en_channel *ch)
{
	struct tern_en_priv *priv = ch->priv;

	tern_db(priv->tdev, TERN_DB_ETH_RXQ_ARM(ch->rx.qid), tern_en_db_value(ch->rx.ci));
	tern_db(priv->tdev, TERN_DB_ETH_TXQ_ARM(ch->tx.qid), tern_en_db_value(ch->tx.ci));
}

/**
 * tern_en_poll() - a channel's NAPI poll
 * @napi: the channel's NAPI context
 * @budget: most RX descriptors to process; 0 from netpoll (TX completions only)
 *
 * Reaps TX completions, receives, refills the RX ring; once done, arms both queues with
 * their consumer indices (the device raises the event at once for work finished since).
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
	tern_en_rx_db(priv, rx);
	if (work == budget || (!refilled && rx->pi == rx->ci))
		return budget;

	/* The buffers are posted before the RX queue is armed, so an event finds them. */
	if (napi_complete_done(napi, work))
		tern_en_arm(ch);
	return work;
}
