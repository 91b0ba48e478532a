// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern Ethernet function: receive. The RX ring's memory and its page_pool buffers, and the
 * receive path that the channel's NAPI poll runs (en_txrx.c): frames, coalesced (LRO)
 * segments, checksum and RSS hash to the stack, then the ring topped up again.
 *
 * Everything of an RX queue is touched only by the NAPI poll while the channel is open, and
 * under RTNL while it is opened or closed (struct tern_en_rxq). Its doorbell is written by
 * the NAPI poll only.
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <net/page_pool.h>

#include "en.h"

/* Frames up to this size are copied into a small skb and the buffer is reused at once. */
#define TERN_EN_RX_COPYBREAK	256

/* ---------------------------------------------------------------------------------------
 * Ring
 */

/**
 * tern_en_rx_refill() - post receive buffers until the ring is full or allocation fails
 * @rx: the RX queue
 * @gfp: allocation flags for the page_pool
 *
 * The new buffers are not rung: @rx->db_pending tells the caller a doorbell is due.
 *
 * Context: the channel's NAPI poll, or process context before NAPI is enabled.
 * Return: false on an allocation failure, true otherwise.
 */
bool tern_en_rx_refill(struct tern_en_rxq *rx, gfp_t gfp)
{
	u32 mask = rx->size - 1;
	bool ok = true;

	while (tern_en_ring_room(rx->size, rx->pi, rx->ci)) {
		struct tern_eth_rxd *rxd = &rx->ring[rx->pi & mask];
		struct page *page;

		page = page_pool_alloc_pages(rx->pool, gfp);
		if (unlikely(!page)) {
			u64_stats_update_begin(&rx->stats.syncp);
			u64_stats_inc(&rx->stats.alloc_fail);
			u64_stats_update_end(&rx->stats.syncp);
			ok = false;
			break;
		}
		rx->bufs[rx->pi & mask].page = page;
		rxd->addr = cpu_to_le64(page_pool_get_dma_addr(page) + TERN_EN_RX_HEADROOM);
		rxd->buf_len = cpu_to_le16(rx->buf_len);
		rxd->pkt_len = 0;
		rxd->lro_mss = 0;
		rxd->status = 0;
		rx->pi++;
		rx->db_pending = true;
	}
	return ok;
}

/**
 * tern_en_rxq_alloc() - allocate a channel's RX ring and post its buffers for the next open
 * @priv: the Ethernet function
 * @ch: the channel; its RX queue takes priv->rx_ring_size buffers sized for the MTU
 *
 * The ring is not yet known to the device (its qid is TERN_EN_QID_NONE), nor rung.
 *
 * Context: process context, RTNL held.
 * Return: 0 or a negative errno (nothing is left allocated).
 */
int tern_en_rxq_alloc(struct tern_en_priv *priv, struct tern_en_channel *ch)
{
	struct tern_en_rxq *rx = &ch->rx;
	struct device *dev = tern_en_dma_dev(priv);
	struct page_pool_params pp = {};
	int err;

	rx->size = priv->rx_ring_size;
	rx->pi = 0;
	rx->ci = 0;
	rx->db_pending = false;
	rx->qid = TERN_EN_QID_NONE;
	rx->buf_len = TERN_EN_RX_FRAME_LEN(priv->netdev->mtu);
	rx->order = tern_en_rx_buf_order(rx->buf_len);
	rx->truesize = PAGE_SIZE << rx->order;
	/* A frame takes what the MTU allows; a coalesced segment fills the page. */
	rx->buf_len = min_t(u32, rx->truesize - TERN_EN_RX_HEADROOM -
			    SKB_DATA_ALIGN(sizeof(struct skb_shared_info)), U16_MAX);

	pp.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV;
	pp.order = rx->order;
	pp.pool_size = rx->size;
	pp.nid = dev_to_node(dev);
	pp.dev = dev;
	pp.dma_dir = DMA_FROM_DEVICE;
	pp.offset = TERN_EN_RX_HEADROOM;
	pp.max_len = rx->buf_len;
	rx->pool = page_pool_create(&pp);
	if (IS_ERR(rx->pool)) {
		err = PTR_ERR(rx->pool);
		rx->pool = NULL;
		return err;
	}

	err = -ENOMEM;
	rx->bufs = kvcalloc(rx->size, sizeof(*rx->bufs), GFP_KERNEL);
	if (!rx->bufs)
		goto err_pool;
	rx->ring_bytes = rx->size * sizeof(*rx->ring);
	rx->ring = dma_alloc_coherent(dev, rx->ring_bytes, &rx->ring_dma, GFP_KERNEL);
	if (!rx->ring)
		goto err_bufs;

	/* A partly filled ring works; the NAPI poll tops it up. */
	tern_en_rx_refill(rx, GFP_KERNEL);
	if (!rx->pi)
		goto err_ring;
	return 0;

err_ring:
	dma_free_coherent(dev, rx->ring_bytes, rx->ring, rx->ring_dma);
	rx->ring = NULL;
err_bufs:
	kvfree(rx->bufs);
	rx->bufs = NULL;
err_pool:
	page_pool_destroy(rx->pool);
	rx->pool = NULL;
	return err;
}

/**
 * tern_en_rxq_free() - return a channel's posted receive buffers and free its RX ring
 * @priv: the Ethernet function
 * @ch: the channel whose RX ring goes
 * @hw_done: the device no longer writes the buffers. Otherwise the ring and the buffers are
 *	leaked (the buffers leave the pool unmapped) so that nothing the device may still write
 *	is ever reused.
 *
 * Frames received but not yet processed are counted as dropped (or as errors).
 *
 * Context: process context, RTNL held; the channel's NAPI is disabled.
 */
void tern_en_rxq_free(struct tern_en_priv *priv, struct tern_en_channel *ch, bool hw_done)
{
	struct tern_en_rxq *rx = &ch->rx;
	unsigned int errors = 0, dropped = 0;

	if (!hw_done)
		netdev_err(priv->netdev,
			   "leaking the RX ring and %u buffers the device may still write\n",
			   rx->pi - rx->ci);
	for (; rx->ci != rx->pi; rx->ci++) {
		u32 idx = rx->ci & (rx->size - 1);
		struct tern_en_rx_buf *buf = &rx->bufs[idx];
		u16 status = le16_to_cpu(READ_ONCE(rx->ring[idx].status));

		/* Frames received but not processed before the close are dropped. */
		if (status & TERN_ETH_DESC_DONE) {
			if (status & TERN_ETH_DESC_ERR)
				errors++;
			else
				dropped++;
		}
		if (hw_done)
			page_pool_put_full_page(rx->pool, buf->page, false);
		else
			page_pool_release_page(rx->pool, buf->page);
		buf->page = NULL;
	}
	/* The NAPI poll is disabled: nothing else writes the counters. */
	u64_stats_update_begin(&rx->stats.syncp);
	u64_stats_add(&rx->stats.errors, errors);
	u64_stats_add(&rx->stats.dropped, dropped);
	u64_stats_update_end(&rx->stats.syncp);
	if (hw_done)
		dma_free_coherent(tern_en_dma_dev(priv), rx->ring_bytes, rx->ring, rx->ring_dma);
	rx->ring = NULL;
	kvfree(rx->bufs);
	rx->bufs = NULL;
	/* Pages still held by the stack are released to the page allocator later. */
	page_pool_destroy(rx->pool);
	rx->pool = NULL;
}

/* ---------------------------------------------------------------------------------------
 * Receive
 */

/* Turn one received buffer into an skb, or recycle it. Returns the skb or NULL. */
static struct sk_buff *tern_en_rx_skb(struct tern_en_channel *ch, struct page *page, u32 len)
{
	struct tern_en_priv *priv = ch->priv;
	struct tern_en_rxq *rx = &ch->rx;
	void *va = page_address(page);
	struct sk_buff *skb;

	dma_sync_single_range_for_cpu(tern_en_dma_dev(priv), page_pool_get_dma_addr(page),
				      TERN_EN_RX_HEADROOM, len, DMA_FROM_DEVICE);
	net_prefetch(va + TERN_EN_RX_HEADROOM);

	if (len <= TERN_EN_RX_COPYBREAK) {
		skb = napi_alloc_skb(&ch->napi, len);
		if (likely(skb))
			skb_put_data(skb, va + TERN_EN_RX_HEADROOM, len);
		/* Only @len bytes can be dirty in the cache: sync just those back. */
		page_pool_put_page(rx->pool, page, len, true);
		return skb;
	}

	skb = napi_build_skb(va, rx->truesize);
	if (unlikely(!skb)) {
		page_pool_recycle_direct(rx->pool, page);
		return NULL;
	}
	skb_mark_for_recycle(skb);
	skb_reserve(skb, TERN_EN_RX_HEADROOM);
	__skb_put(skb, len);
	return skb;
}

/* Buffers of the coalesced segment whose first descriptor is at rx->ci (TERN_ETH_RXD_LRO):
 * the first one and those after it up to the one without TERN_ETH_RXD_MORE. The device
 * writes the first descriptor last, so the others are done; 0 if one is not (yet), or the
 * chain is longer than the device's limit or than what is posted. *@bad: a buffer's length
 * is out of range (the segment is then dropped whole).
 */
static u32 tern_en_rx_lro_bufs(const struct tern_en_rxq *rx, u16 status, bool *bad)
{
	u32 mask = rx->size - 1, n = 1, len;

	*bad = false;
	while (status & TERN_ETH_RXD_MORE) {
		const struct tern_eth_rxd *rxd = &rx->ring[(rx->ci + n) & mask];

		if (n >= TERN_ETH_LRO_MAX_BUFS || rx->ci + n == rx->pi)
			return 0;
		status = le16_to_cpu(READ_ONCE(rxd->status));
		if (!(status & TERN_ETH_DESC_DONE) || (status & TERN_ETH_RXD_LRO))
			return 0;
		dma_rmb();
		len = le16_to_cpu(rxd->pkt_len);
		if (!len || len > rx->buf_len || (status & TERN_ETH_DESC_ERR))
			*bad = true;
		n++;
	}
	return n;
}

/* Gives @n buffers from rx->ci on back to the pool, unread. */
static void tern_en_rx_drop(struct tern_en_rxq *rx, u32 n)
{
	u32 mask = rx->size - 1;

	for (; n; n--, rx->ci++) {
		struct tern_en_rx_buf *buf = &rx->bufs[rx->ci & mask];

		page_pool_recycle_direct(rx->pool, buf->page);
		buf->page = NULL;
	}
}

/* The skb of a coalesced segment: the first buffer (@len bytes: headers and the payload's
 * start) as its head, the @n - 1 buffers after it (lengths checked by tern_en_rx_lro_bufs())
 * as page fragments. Consumes the @n descriptors; NULL when the skb could not be made (the
 * buffers are recycled).
 */
static struct sk_buff *tern_en_rx_lro_skb(struct tern_en_channel *ch, u32 n, u32 len)
{
	struct tern_en_rxq *rx = &ch->rx;
	struct device *dev = tern_en_dma_dev(ch->priv);
	u32 mask = rx->size - 1, i;
	struct tern_en_rx_buf *buf = &rx->bufs[rx->ci & mask];
	struct page *page = buf->page;
	struct sk_buff *skb;

	dma_sync_single_range_for_cpu(dev, page_pool_get_dma_addr(page), TERN_EN_RX_HEADROOM,
				      len, DMA_FROM_DEVICE);
	skb = napi_build_skb(page_address(page), rx->truesize);
	if (unlikely(!skb)) {
		tern_en_rx_drop(rx, n);
		return NULL;
	}
	buf->page = NULL;
	skb_mark_for_recycle(skb);
	skb_reserve(skb, TERN_EN_RX_HEADROOM);
	__skb_put(skb, len);
	for (i = 1; i < n; i++) {
		u32 blen = le16_to_cpu(rx->ring[(rx->ci + i) & mask].pkt_len);

		buf = &rx->bufs[(rx->ci + i) & mask];
		page = buf->page;
		buf->page = NULL;
		dma_sync_single_range_for_cpu(dev, page_pool_get_dma_addr(page),
					      TERN_EN_RX_HEADROOM, blen, DMA_FROM_DEVICE);
		skb_add_rx_frag(skb, i - 1, page, TERN_EN_RX_HEADROOM, blen, rx->truesize);
	}
	rx->ci += n;
	return skb;
}

/* Marks a coalesced segment's skb (after eth_type_trans) as the TCP segments it was made of,
 * as GRO would have: gso_size the device's MSS, and the type and count of segments, so that
 * the stack can cut it back when it forwards it. False when its headers are not those of a
 * segment the device coalesces (IPv4 without options or IPv6, then TCP, payload after them).
 */
static bool tern_en_rx_lro_gso(struct sk_buff *skb, u16 mss)
{
	unsigned int nh, th, hlen;
	const struct tcphdr *tcp;

	/* skb->data is the network header here (the stack sets the offsets later); the device
	 * put every header in the first buffer, the skb's head.
	 */
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = (const struct iphdr *)skb->data;

		nh = sizeof(*iph);
		if (skb_headlen(skb) < nh + sizeof(*tcp) || iph->ihl != 5 ||
		    iph->protocol != IPPROTO_TCP)
			return false;
		skb_shinfo(skb)->gso_type = SKB_GSO_TCPV4;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h = (const struct ipv6hdr *)skb->data;

		nh = sizeof(*ip6h);
		if (skb_headlen(skb) < nh + sizeof(*tcp) || ip6h->nexthdr != IPPROTO_TCP)
			return false;
		skb_shinfo(skb)->gso_type = SKB_GSO_TCPV6;
	} else {
		return false;
	}
	tcp = (const struct tcphdr *)(skb->data + nh);
	th = tcp->doff * 4;
	hlen = nh + th;
	if (!mss || th < sizeof(*tcp) || skb_headlen(skb) < hlen || skb->len <= hlen)
		return false;
	skb_shinfo(skb)->gso_size = mss;
	skb_shinfo(skb)->gso_segs = DIV_ROUND_UP(skb->len - hlen, mss);
	return true;
}

/* What one NAPI poll counted; added to the queue's &tern_en_rx_stats at its end. */
struct tern_en_rx_counts {
	unsigned int packets;
	unsigned int bytes;
	unsigned int mcast;
	unsigned int errors;
	unsigned int len_errors;
	unsigned int dropped;
};

/* Gives a received frame's @skb to the stack with what the device found out about it
 * (@status, the RSS hash or timestamp of descriptor @rxd), and counts it. A coalesced
 * segment (@lro_mss: the device's MSS) whose headers are not those the device coalesces is
 * dropped instead.
 */
static void tern_en_rx_deliver(struct tern_en_channel *ch, struct sk_buff *skb,
			       const struct tern_eth_rxd *rxd, u16 status, u16 lro_mss,
			       int budget, struct tern_en_rx_counts *c)
{
	struct net_device *netdev = ch->priv->netdev;

	skb->protocol = eth_type_trans(skb, netdev);
	if (status & TERN_ETH_RXD_LRO) {
		if (unlikely(!(netdev->features & NETIF_F_RXCSUM) ||
			     !tern_en_rx_lro_gso(skb, lro_mss))) {
			c->len_errors++;
			napi_consume_skb(skb, budget);
			return;
		}
	}
	/* a bad sum is left to the stack to find, count and drop */
	if ((status & TERN_ETH_RXD_CSUM_OK) && (netdev->features & NETIF_F_RXCSUM))
		skb->ip_summed = CHECKSUM_UNNECESSARY;
	/* the write-back put the RSS hash over the buffer address's low half */
	if ((status & TERN_ETH_RXD_HASH) && (netdev->features & NETIF_F_RXHASH))
		skb_set_hash(skb, le32_to_cpu(rxd->rss_hash),
			     (status & TERN_ETH_RXD_HASH_L4) ? PKT_HASH_TYPE_L4 :
							      PKT_HASH_TYPE_L3);
	/* or the time the frame came from the wire, over the whole address (no hash then) */
	if (status & TERN_ETH_DESC_TS)
		skb_hwtstamps(skb)->hwtstamp = ns_to_ktime(le64_to_cpu(rxd->ts));
	skb_record_rx_queue(skb, ch->idx);
	if (skb->pkt_type == PACKET_MULTICAST)
		c->mcast++;
	/* a coalesced segment counts the frames it was made of, as the device does */
	c->packets += skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
	c->bytes += skb->len + ETH_HLEN;
	napi_gro_receive(&ch->napi, skb);
}

/* Processes the descriptor at rx->ci, with the other buffers of a coalesced segment: the
 * frame goes to the stack, or is counted as an error or a drop. False when the device has
 * not finished the descriptor (or every buffer of the segment) yet: nothing is consumed.
 */
static bool tern_en_rx_one(struct tern_en_channel *ch, int budget,
			   struct tern_en_rx_counts *c)
{
	struct tern_en_rxq *rx = &ch->rx;
	u32 mask = rx->size - 1, nbufs = 1;
	struct tern_eth_rxd *rxd = &rx->ring[rx->ci & mask];
	struct tern_en_rx_buf *buf = &rx->bufs[rx->ci & mask];
	struct page *page = buf->page;
	u16 status, len, lro_mss = 0;
	struct sk_buff *skb;
	bool bad = false;

	status = le16_to_cpu(READ_ONCE(rxd->status));
	if (!(status & TERN_ETH_DESC_DONE))
		return false;
	/* The rest of the descriptor is valid once DONE is seen. */
	dma_rmb();
	len = le16_to_cpu(rxd->pkt_len);
	if (status & TERN_ETH_RXD_LRO) {
		/* a coalesced segment: its other buffers come with it */
		nbufs = tern_en_rx_lro_bufs(rx, status, &bad);
		if (unlikely(!nbufs))
			return false;
		lro_mss = le16_to_cpu(rxd->lro_mss);
	}

	if (unlikely(status & TERN_ETH_DESC_ERR)) {
		c->errors++;
		tern_en_rx_drop(rx, nbufs);
		return true;
	}
	if (unlikely(len < ETH_HLEN || len > rx->buf_len || bad)) {
		c->len_errors++;
		tern_en_rx_drop(rx, nbufs);
		return true;
	}
	if (status & TERN_ETH_RXD_LRO) {
		skb = tern_en_rx_lro_skb(ch, nbufs, len);
	} else {
		buf->page = NULL;
		rx->ci++;
		skb = tern_en_rx_skb(ch, page, len);
	}
	if (unlikely(!skb)) {
		c->dropped++;
		return true;
	}
	tern_en_rx_deliver(ch, skb, rxd, status, lro_mss, budget, c);
	return true;
}

/**
 * tern_en_rx_poll() - give the stack what the device has received
 * @ch: the channel
 * @budget: most descriptors to process (a coalesced segment's buffers count as one)
 *
 * Consumed buffers are not replaced here: tern_en_rx_refill() does that.
 *
 * Context: the channel's NAPI poll.
 * Return: descriptors processed, at most @budget.
 */
int tern_en_rx_poll(struct tern_en_channel *ch, int budget)
{
	struct tern_en_rxq *rx = &ch->rx;
	struct tern_en_rx_counts c = {};
	int done = 0;

	while (done < budget && rx->ci != rx->pi && tern_en_rx_one(ch, budget, &c))
		done++;

	if (done) {
		u64_stats_update_begin(&rx->stats.syncp);
		u64_stats_add(&rx->stats.packets, c.packets);
		u64_stats_add(&rx->stats.bytes, c.bytes);
		u64_stats_add(&rx->stats.multicast, c.mcast);
		u64_stats_add(&rx->stats.errors, c.errors);
		u64_stats_add(&rx->stats.length_errors, c.len_errors);
		u64_stats_add(&rx->stats.dropped, c.dropped);
		u64_stats_update_end(&rx->stats.syncp);
	}
	return done;
}
