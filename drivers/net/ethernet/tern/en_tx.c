// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern Ethernet function: transmit. The TX ring's memory and software state, ndo_start_xmit
 * and ndo_features_check, and the completion path that the channel's NAPI poll runs
 * (en_txrx.c) to reap what the device sent and restart a stopped queue.
 *
 * The TX doorbell is written by ndo_start_xmit only, under the TX queue's xmit lock: its
 * producer index must never go backwards. The NAPI poll arms the queue through a doorbell of
 * its own (TERN_DB_ETH_TXQ_ARM, en_txrx.c) and takes no TX lock. The stop/wake
 * protocol between ndo_start_xmit and the completion path is described at its barriers
 * below.
 */
#include <linux/dma-mapping.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>

#include "en.h"

/* ---------------------------------------------------------------------------------------
 * Ring
 */

/* Free TX descriptors. Exact under the xmit lock; a lower bound in the NAPI poll. */
static u32 tern_en_tx_free(const struct tern_en_txq *tx)
{
	/* Acquire: the completion path is done with a slot before it moves ci past it. */
	return tern_en_ring_room(tx->size, READ_ONCE(tx->pi), smp_load_acquire(&tx->ci));
}

/**
 * tern_en_txq_alloc() - allocate a channel's TX ring for the next open
 * @priv: the Ethernet function
 * @ch: the channel; its TX queue takes priv->tx_ring_size descriptors
 *
 * The ring is empty and not yet known to the device (its qid is TERN_EN_QID_NONE).
 *
 * Context: process context, RTNL held.
 * Return: 0 or -ENOMEM (nothing is left allocated).
 */
int tern_en_txq_alloc(struct tern_en_priv *priv, struct tern_en_channel *ch)
{
	struct tern_en_txq *tx = &ch->tx;

	tx->size = priv->tx_ring_size;
	tx->pi = 0;
	tx->ci = 0;
	tx->qid = TERN_EN_QID_NONE;
	tx->nq = netdev_get_tx_queue(priv->netdev, ch->idx);
	tx->bufs = kvcalloc(tx->size, sizeof(*tx->bufs), GFP_KERNEL);
	if (!tx->bufs)
		return -ENOMEM;
	tx->ring_bytes = tx->size * sizeof(*tx->ring);
	tx->ring = dma_alloc_coherent(tern_en_dma_dev(priv), tx->ring_bytes, &tx->ring_dma,
				      GFP_KERNEL);
	if (!tx->ring) {
		kvfree(tx->bufs);
		tx->bufs = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Unmaps what one TX descriptor gave the device (nothing for an offload context). */
static void tern_en_tx_unmap(struct device *dev, struct tern_en_tx_buf *buf)
{
	if (!buf->len)
		return;
	if (buf->page)
		dma_unmap_page(dev, buf->dma, buf->len, DMA_TO_DEVICE);
	else
		dma_unmap_single(dev, buf->dma, buf->len, DMA_TO_DEVICE);
	buf->len = 0;
}

/**
 * tern_en_txq_free() - account for the frames still on a TX ring and free it
 * @priv: the Ethernet function
 * @ch: the channel whose TX ring goes
 * @hw_done: the device no longer reads the ring (otherwise it is leaked rather than reused
 *	under DMA)
 *
 * Frames the device finished count as if the NAPI poll had reaped them; the others are
 * dropped.
 *
 * Context: process context, RTNL held; the data path is stopped: nothing else writes the
 * counters.
 */
void tern_en_txq_free(struct tern_en_priv *priv, struct tern_en_channel *ch, bool hw_done)
{
	struct tern_en_txq *tx = &ch->tx;
	struct device *dev = tern_en_dma_dev(priv);
	unsigned int sent = 0, sent_bytes = 0, errors = 0, dropped = 0;

	for (; tx->ci != tx->pi; tx->ci++) {
		u32 idx = tx->ci & (tx->size - 1);
		struct tern_en_tx_buf *buf = &tx->bufs[idx];
		u16 status = le16_to_cpu(READ_ONCE(tx->ring[idx].status));

		tern_en_tx_unmap(dev, buf);
		if (!buf->skb)
			continue;
		if (hw_done && (status & TERN_ETH_DESC_DONE)) {
			if (status & TERN_ETH_DESC_ERR) {
				errors++;
			} else {
				sent += buf->segs;
				sent_bytes += buf->wire_bytes;
			}
			dev_consume_skb_any(buf->skb);
		} else {
			dropped++;
			dev_kfree_skb_any(buf->skb);
		}
		buf->skb = NULL;
	}
	u64_stats_update_begin(&tx->stats.syncp);
	u64_stats_add(&tx->stats.packets, sent);
	u64_stats_add(&tx->stats.bytes, sent_bytes);
	u64_stats_add(&tx->stats.errors, errors);
	u64_stats_update_end(&tx->stats.syncp);
	u64_stats_update_begin(&tx->xstats.syncp);
	u64_stats_add(&tx->xstats.dropped, dropped);
	u64_stats_update_end(&tx->xstats.syncp);

	netdev_tx_reset_queue(tx->nq);
	if (hw_done)
		dma_free_coherent(dev, tx->ring_bytes, tx->ring, tx->ring_dma);
	else
		netdev_err(priv->netdev, "leaking the TX ring the device may still read\n");
	tx->ring = NULL;
	kvfree(tx->bufs);
	tx->bufs = NULL;
}

/* ---------------------------------------------------------------------------------------
 * Transmit
 */

/**
 * tern_en_tx_db() - ring a TX queue's doorbell with its producer index
 * @priv: the Ethernet function
 * @tx: the queue
 *
 * Context: ndo_start_xmit, the queue's xmit lock held, so that the producer index the device
 * sees never goes backwards.
 */
void tern_en_tx_db(struct tern_en_priv *priv, struct tern_en_txq *tx)
{
	tern_db(priv->tdev, TERN_DB_ETH_TXQ(tx->qid), tern_en_db_value(tx->pi));
}

static void tern_en_xmit_drop(struct tern_en_txq *tx)
{
	u64_stats_update_begin(&tx->xstats.syncp);
	u64_stats_inc(&tx->xstats.dropped);
	u64_stats_update_end(&tx->xstats.syncp);
}

/* The offload context of @skb, or false if it needs none. CHECKSUM_PARTIAL: the device
 * sums from csum_start and stores at csum_offset; GSO (TCP over IPv4/IPv6, as
 * tern_en_features_check() lets through): it also cuts the frame into gso_size segments.
 */
static bool tern_en_tx_ctx(struct sk_buff *skb, struct tern_eth_txd_ctx *ctx)
{
	u16 flags = TERN_ETH_CTX_CSUM;

	if (skb->ip_summed != CHECKSUM_PARTIAL)
		return false;
	if (skb_is_gso(skb)) {
		flags |= TERN_ETH_CTX_TSO;
		ctx->mss = cpu_to_le16(skb_shinfo(skb)->gso_size);
	} else {
		ctx->mss = 0;
	}
	ctx->csum_start = cpu_to_le16(skb_checksum_start_offset(skb));
	ctx->csum_offset = cpu_to_le16(skb->csum_offset);
	ctx->ctx_flags = cpu_to_le16(flags);
	ctx->rsvd0 = 0;
	ctx->flags = cpu_to_le16(TERN_ETH_TXD_CTX);
	ctx->rsvd1 = 0;
	ctx->status = 0;
	return true;
}

/* Makes @skb fit the ring and the device: few enough fragments for the descriptors, at
 * least ETH_ZLEN bytes, no longer than a frame unless the device segments it. On false,
 * @skb has been freed.
 */
static bool tern_en_xmit_fit(struct sk_buff *skb)
{
	/* More fragments than descriptors for them: one piece instead (never with TSO, whose
	 * skbs the stack keeps within MAX_SKB_FRAGS).
	 */
	if (unlikely(skb_shinfo(skb)->nr_frags > TERN_ETH_TX_MAX_DESCS - 2) &&
	    skb_linearize(skb))
		goto drop;
	/* On failure skb_put_padto() has freed the skb. */
	if (unlikely(skb_put_padto(skb, ETH_ZLEN)))
		return false;
	if (unlikely(!skb_is_gso(skb) && skb->len > TERN_ETH_MAX_FRAME))
		goto drop;
	return true;

drop:
	dev_kfree_skb_any(skb);
	return false;
}

/* No room for the frame: stop the queue, ring what is posted, and have the stack retry. */
static netdev_tx_t tern_en_xmit_busy(struct tern_en_priv *priv, struct tern_en_txq *tx)
{
	/* Flow control (tern_en_tx_maybe_stop()) should have prevented this. */
	netif_tx_stop_queue(tx->nq);
	u64_stats_update_begin(&tx->xstats.syncp);
	u64_stats_inc(&tx->xstats.busy);
	u64_stats_update_end(&tx->xstats.syncp);
	tern_en_tx_db(priv, tx);
	return NETDEV_TX_BUSY;
}

/* Fills descriptor @slot with one mapped piece of a frame; @more: pieces follow it. */
static void tern_en_tx_post(struct tern_en_txq *tx, u32 slot, dma_addr_t dma, u32 len,
			    bool page, bool more)
{
	struct tern_eth_txd *txd = &tx->ring[slot];

	tx->bufs[slot] = (struct tern_en_tx_buf){ .dma = dma, .len = len, .page = page };
	txd->addr = cpu_to_le64(dma);
	txd->len = cpu_to_le16(len);
	txd->flags = cpu_to_le16(more ? TERN_ETH_TXD_MORE : 0);
	txd->rsvd = 0;
	txd->status = 0;
}

/* Maps the linear part of @skb, then each fragment, onto the descriptors after the *@used
 * ones from tx->pi on (an offload context): one descriptor each, TERN_ETH_TXD_MORE on all
 * but the last; *@used counts them too. On a mapping failure every descriptor from tx->pi on
 * is unmapped and -ENOMEM returned.
 */
static int tern_en_tx_map(struct device *dev, struct tern_en_txq *tx, struct sk_buff *skb,
			  u32 *used)
{
	unsigned int nfrags = skb_shinfo(skb)->nr_frags, i;
	u32 mask = tx->size - 1, pi = tx->pi, n = *used;

	for (i = 0; i <= nfrags; i++) {
		u32 piece;
		dma_addr_t dma;
		bool page = i > 0;

		if (!page) {
			piece = skb_headlen(skb);
			if (!piece)
				continue;
			dma = dma_map_single(dev, skb->data, piece, DMA_TO_DEVICE);
		} else {
			const skb_frag_t *frag = &skb_shinfo(skb)->frags[i - 1];

			piece = skb_frag_size(frag);
			dma = skb_frag_dma_map(dev, frag, 0, piece, DMA_TO_DEVICE);
		}
		if (unlikely(dma_mapping_error(dev, dma)))
			goto unmap;
		tern_en_tx_post(tx, (pi + n) & mask, dma, piece, page, i < nfrags);
		n++;
	}
	*used = n;
	return 0;

unmap:
	while (n--)
		tern_en_tx_unmap(dev, &tx->bufs[(pi + n) & mask]);
	return -ENOMEM;
}

/* Hands the frame's @n descriptors from tx->pi on to the completion path. The last one owns
 * @skb and what the completion path counts: the frames the device puts on the wire and
 * their bytes (@len, plus the headers repeated in every TSO segment after the first).
 */
static void tern_en_tx_commit(struct tern_en_txq *tx, struct sk_buff *skb, u32 n, u32 len)
{
	u32 segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
	struct tern_en_tx_buf *buf = &tx->bufs[(tx->pi + n - 1) & (tx->size - 1)];

	buf->skb = skb;
	buf->segs = segs;
	buf->wire_bytes = len;
	if (segs > 1)
		buf->wire_bytes += (segs - 1) * (skb_transport_offset(skb) + tcp_hdrlen(skb));
	skb_tx_timestamp(skb);
	/* Release: the completion path reads the slots only after it sees the new pi. */
	smp_store_release(&tx->pi, tx->pi + n);
}

/* Stops the queue once the next frame might not fit, unless the completion path has made
 * room meanwhile.
 */
static void tern_en_tx_maybe_stop(struct tern_en_txq *tx)
{
	if (likely(!tern_en_tx_should_stop(tern_en_tx_free(tx))))
		return;
	netif_tx_stop_queue(tx->nq);
	u64_stats_update_begin(&tx->xstats.syncp);
	u64_stats_inc(&tx->xstats.stops);
	u64_stats_update_end(&tx->xstats.syncp);
	/* Pairs with smp_mb() in tern_en_tx_clean(): either it sees the stopped queue, or we
	 * see the room it made.
	 */
	smp_mb();
	if (tern_en_tx_can_wake(tx->size, tern_en_tx_free(tx)))
		netif_tx_start_queue(tx->nq);
}

/**
 * tern_en_start_xmit() - ndo_start_xmit: post a frame on its channel's TX ring
 * @skb: the frame; consumed unless NETDEV_TX_BUSY is returned
 * @netdev: the netdev
 *
 * Context: the queue's xmit lock held, BHs (or, from netpoll, IRQs) off.
 * Return: NETDEV_TX_OK, or NETDEV_TX_BUSY when the ring is full despite flow control.
 */
netdev_tx_t tern_en_start_xmit(struct sk_buff *skb, struct net_device *netdev)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	struct tern_en_txq *tx = &priv->ch[skb_get_queue_mapping(skb)].tx;
	u32 mask = tx->size - 1, len, need, n = 0;
	struct tern_eth_txd_ctx ctx;
	bool has_ctx;

	/* Without carrier the device would complete the frame without sending it; until
	 * linkwatch stops the qdisc, drop here so that the counters tell the truth.
	 */
	if (unlikely(!netif_carrier_ok(netdev))) {
		dev_kfree_skb_any(skb);
		u64_stats_update_begin(&tx->xstats.syncp);
		u64_stats_inc(&tx->xstats.carrier);
		u64_stats_update_end(&tx->xstats.syncp);
		goto ring;
	}
	if (unlikely(!tern_en_xmit_fit(skb)))
		goto dropped;
	len = skb->len;

	has_ctx = tern_en_tx_ctx(skb, &ctx);
	need = has_ctx + !!skb_headlen(skb) + skb_shinfo(skb)->nr_frags;
	if (unlikely(tern_en_tx_free(tx) < need))
		return tern_en_xmit_busy(priv, tx);
	if (has_ctx) {
		memcpy(&tx->ring[tx->pi & mask], &ctx, sizeof(ctx));
		tx->bufs[tx->pi & mask] = (struct tern_en_tx_buf){};
		n++;
	}
	if (unlikely(tern_en_tx_map(tern_en_dma_dev(priv), tx, skb, &n))) {
		dev_kfree_skb_any(skb);
		goto dropped;
	}
	/* the device stamps the frame on its clock, in the write-back of its last descriptor */
	if (unlikely(skb_shinfo(skb)->tx_flags & SKBTX_HW_TSTAMP) && READ_ONCE(priv->tx_ts)) {
		tx->ring[(tx->pi + n - 1) & mask].flags |= cpu_to_le16(TERN_ETH_TXD_TS);
		skb_shinfo(skb)->tx_flags |= SKBTX_IN_PROGRESS;
	}
	tern_en_tx_commit(tx, skb, n, len);
	tern_en_tx_maybe_stop(tx);

	/* Rings the doorbell unless more frames follow and the queue is still running. */
	if (__netdev_tx_sent_queue(tx->nq, len, netdev_xmit_more()))
		tern_en_tx_db(priv, tx);
	return NETDEV_TX_OK;

dropped:
	tern_en_xmit_drop(tx);
ring:
	/* Frames queued earlier in this batch still need their doorbell. */
	if (!netdev_xmit_more())
		tern_en_tx_db(priv, tx);
	return NETDEV_TX_OK;
}

/**
 * tern_en_features_check() - ndo_features_check: offloads the device can do for a frame
 * @skb: the frame
 * @netdev: the netdev
 * @features: the features the stack would use
 *
 * Frames the device cannot offload as they are: TSO over IPv6 with an extension header, or
 * offsets beyond a context's 16 bits, are segmented or summed by the stack instead.
 *
 * Context: any (the transmit path).
 * Return: @features without what the device cannot do for @skb.
 */
netdev_features_t tern_en_features_check(struct sk_buff *skb, struct net_device *netdev,
					 netdev_features_t features)
{
	/* what the core checks when a driver has no ndo_features_check: stacked VLAN tags */
	features = vlan_features_check(skb, features);
	if (skb->ip_summed != CHECKSUM_PARTIAL)
		return features;
	if (skb_checksum_start_offset(skb) > U16_MAX || skb->csum_offset > U16_MAX)
		return features & ~(NETIF_F_CSUM_MASK | NETIF_F_GSO_MASK);
	if (skb_is_gso(skb) && (skb_shinfo(skb)->gso_type & SKB_GSO_TCPV6) &&
	    (vlan_get_protocol(skb) != htons(ETH_P_IPV6) ||
	     ipv6_hdr(skb)->nexthdr != IPPROTO_TCP))
		return features & ~NETIF_F_GSO_MASK;
	return features;
}

/* ---------------------------------------------------------------------------------------
 * Completion
 */

/* The time the device wrote over @txd's address (before its status) goes to @skb's socket. */
static void tern_en_tx_hwtstamp(struct sk_buff *skb, const struct tern_eth_txd *txd)
{
	struct skb_shared_hwtstamps hwts = {};

	dma_rmb();
	hwts.hwtstamp = ns_to_ktime(le64_to_cpu(READ_ONCE(txd->ts)));
	skb_tstamp_tx(skb, &hwts);
}

/**
 * tern_en_tx_clean() - reap the TX descriptors the device has finished
 * @ch: the channel
 * @budget: the NAPI budget (0 from netpoll), for napi_consume_skb()
 *
 * Frees the sent frames, counts them and wakes the queue if it was stopped and has room
 * again.
 *
 * Context: the channel's NAPI poll.
 */
void tern_en_tx_clean(struct tern_en_channel *ch, int budget)
{
	struct device *dev = tern_en_dma_dev(ch->priv);
	struct tern_en_txq *tx = &ch->tx;
	unsigned int pkts = 0, bytes = 0, sent = 0, sent_bytes = 0, errors = 0;
	u32 mask = tx->size - 1;
	u32 ci = tx->ci;
	u32 pi;

	/* Acquire: descriptors and buffers up to pi are written. */
	pi = smp_load_acquire(&tx->pi);
	while (ci != pi) {
		struct tern_eth_txd *txd = &tx->ring[ci & mask];
		struct tern_en_tx_buf *buf = &tx->bufs[ci & mask];
		u16 status = le16_to_cpu(READ_ONCE(txd->status));

		if (!(status & TERN_ETH_DESC_DONE))
			break;
		tern_en_tx_unmap(dev, buf);
		ci++;
		if (!buf->skb)
			continue;
		/* the frame's last descriptor: ERR is set on all of a frame's or none */
		if (unlikely(status & TERN_ETH_DESC_ERR)) {
			errors++;
		} else {
			sent += buf->segs;
			sent_bytes += buf->wire_bytes;
		}
		if (unlikely(status & TERN_ETH_DESC_TS))
			tern_en_tx_hwtstamp(buf->skb, txd);
		pkts++;
		bytes += buf->skb->len;
		napi_consume_skb(buf->skb, budget);
		buf->skb = NULL;
	}
	if (ci == tx->ci)
		return;

	/* Release: the slots are free for ndo_start_xmit once it sees the new ci. */
	smp_store_release(&tx->ci, ci);
	netdev_tx_completed_queue(tx->nq, pkts, bytes);

	u64_stats_update_begin(&tx->stats.syncp);
	u64_stats_add(&tx->stats.packets, sent);
	u64_stats_add(&tx->stats.bytes, sent_bytes);
	u64_stats_add(&tx->stats.errors, errors);
	u64_stats_update_end(&tx->stats.syncp);

	/* Pairs with smp_mb() in tern_en_tx_maybe_stop() after stopping the queue. */
	smp_mb();
	if (unlikely(netif_tx_queue_stopped(tx->nq)) &&
	    tern_en_tx_can_wake(tx->size, tern_en_tx_free(tx))) {
		netif_tx_wake_queue(tx->nq);
		u64_stats_update_begin(&tx->stats.syncp);
		u64_stats_inc(&tx->stats.wakes);
		u64_stats_update_end(&tx->stats.syncp);
	}
}
