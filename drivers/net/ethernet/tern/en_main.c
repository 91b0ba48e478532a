// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern Ethernet function: netdev setup and operations, link, port configuration (receive
 * mode, MTU, MAC), statistics, channel open/close and reconfiguration, probe, remove,
 * suspend and resume. The data path is in en_tx.c (transmit), en_rx.c (receive) and
 * en_txrx.c (events and NAPI; its header describes the data path as a whole).
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>

#include "en.h"

#define TERN_EN_TX_TIMEOUT	(5 * HZ)
#define TERN_EN_STATS_PERIOD	HZ
/* ndo_get_stats64 asks for a refresh of the hardware counters when they are older. */
#define TERN_EN_STATS_MAX_AGE	(HZ / 10)

/* ---------------------------------------------------------------------------------------
 * Link
 */

static bool tern_en_hw_link_up(struct tern_en_priv *priv)
{
	u32 status = tern_rd(priv->tdev, TERN_REG_STATUS);

	/* All ones: the function no longer answers (surprise removal, dead PCIe link). */
	if (status == U32_MAX)
		return false;
	return status & TERN_STATUS_LINK_UP;
}

/* Carrier is on while the port's link is up and the channel can carry traffic: with the
 * queues gone (interface down, or a failed reconfiguration) the TX watchdog must stay
 * quiet. Called with priv->link_lock held.
 */
static void tern_en_update_carrier(struct tern_en_priv *priv)
{
	struct net_device *netdev = priv->netdev;
	bool on = priv->link_up && READ_ONCE(priv->ch_open);

	lockdep_assert_held(&priv->link_lock);

	if (on == netif_carrier_ok(netdev))
		return;
	if (on)
		netif_carrier_on(netdev);
	else
		netif_carrier_off(netdev);
}

/* The port's link is @up. Called with priv->link_lock held. */
static void tern_en_set_link(struct tern_en_priv *priv, bool up)
{
	lockdep_assert_held(&priv->link_lock);

	if (up != priv->link_up) {
		priv->link_up = up;
		if (up)
			netdev_info(priv->netdev, "Link up, %u Mbps, full duplex\n",
				    le32_to_cpu(priv->tdev->caps.link_speed_mbps));
		else
			netdev_info(priv->netdev, "Link down\n");
	}
	tern_en_update_carrier(priv);
}

/* Take the link state from the STATUS register and update the carrier. */
static void tern_en_sync_link(struct tern_en_priv *priv)
{
	unsigned long flags;

	spin_lock_irqsave(&priv->link_lock, flags);
	tern_en_set_link(priv, tern_en_hw_link_up(priv));
	spin_unlock_irqrestore(&priv->link_lock, flags);
}

/* The channel opened or closed: update the carrier. */
static void tern_en_refresh_carrier(struct tern_en_priv *priv)
{
	unsigned long flags;

	spin_lock_irqsave(&priv->link_lock, flags);
	tern_en_update_carrier(priv);
	spin_unlock_irqrestore(&priv->link_lock, flags);
}

/**
 * tern_en_link_change() - the port's carrier changed
 * @tdev: the device
 * @up: new state, from the latest TERN_EQE_LINK_CHANGE event
 *
 * Context: any; the core calls it from a work item between tern_en_probe() and
 * tern_en_remove().
 */
void tern_en_link_change(struct tern_dev *tdev, bool up)
{
	struct net_device *netdev = tdev->netdev;
	struct tern_en_priv *priv;
	unsigned long flags;

	if (!netdev)
		return;
	priv = netdev_priv(netdev);
	spin_lock_irqsave(&priv->link_lock, flags);
	tern_en_set_link(priv, up);
	spin_unlock_irqrestore(&priv->link_lock, flags);
}

/* ---------------------------------------------------------------------------------------
 * Port configuration (SET_PORT)
 */

static int tern_en_port_apply(struct tern_en_priv *priv, u32 flags, unsigned int mtu,
			      const u8 *mac)
{
	struct tern_cmd_set_port_in in = {};
	int err;

	lockdep_assert_held(&priv->port_lock);

	in.flags = cpu_to_le32(flags);
	in.mtu = cpu_to_le16(mtu);
	memcpy(in.mac, mac, ETH_ALEN);
	err = tern_cmd_exec(priv->tdev, TERN_CMD_SET_PORT, &in, sizeof(in), NULL, 0, NULL);
	if (err) {
		netdev_err(priv->netdev, "SET_PORT (flags %#x, MTU %u, %pM) failed: %d\n",
			   flags, mtu, mac, err);
		return err;
	}
	priv->port.flags = flags;
	priv->port.mtu = mtu;
	ether_addr_copy(priv->port.mac, mac);
	return 0;
}

/* SET_PORT flags the netdev wants: the receive filter's, coalescing (rx-gro-hw) and
 * receive timestamps (SIOCSHWTSTAMP).
 */
static u32 tern_en_port_flags(const struct tern_en_priv *priv)
{
	return READ_ONCE(priv->rx_mode_flags) | (READ_ONCE(priv->lro) ? TERN_PORT_F_LRO : 0) |
	       (READ_ONCE(priv->rx_ts) ? TERN_PORT_F_RX_TS : 0);
}

/* Push the netdev's whole configuration to the device (RTNL held). */
static int tern_en_port_sync(struct tern_en_priv *priv)
{
	struct net_device *netdev = priv->netdev;
	int err;

	mutex_lock(&priv->port_lock);
	err = tern_en_port_apply(priv, tern_en_port_flags(priv), netdev->mtu,
				 netdev->dev_addr);
	mutex_unlock(&priv->port_lock);
	return err;
}

static void tern_en_rx_mode_work(struct work_struct *work)
{
	struct tern_en_priv *priv = container_of(work, struct tern_en_priv, rx_mode_work);
	u32 flags;

	/* During a reset: tern_en_resume() pushes the whole configuration, then runs this. */
	if (!netif_device_present(priv->netdev))
		return;
	mutex_lock(&priv->port_lock);
	flags = tern_en_port_flags(priv);
	if (flags != priv->port.flags)
		tern_en_port_apply(priv, flags, priv->port.mtu, priv->port.mac);
	mutex_unlock(&priv->port_lock);
}

/* Called under the netdev's address lock: atomic. */
static void tern_en_set_rx_mode(struct net_device *netdev)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	u32 flags = 0;

	/* Without IFF_UNICAST_FLT the core turns on IFF_PROMISC itself when secondary unicast
	 * addresses are added. The device accepts every multicast frame anyway; ALLMULTI is
	 * passed on so that the port reports what the user asked for.
	 */
	if (netdev->flags & IFF_PROMISC)
		flags |= TERN_PORT_F_PROMISC;
	if (netdev->flags & IFF_ALLMULTI)
		flags |= TERN_PORT_F_ALLMULTI;
	WRITE_ONCE(priv->rx_mode_flags, flags);
	schedule_work(&priv->rx_mode_work);
}

/* ---------------------------------------------------------------------------------------
 * Statistics
 */

/* Every field of the counters block is a little-endian 64-bit counter (rsvd included). */
static_assert(sizeof(struct tern_cmd_eth_stats_out) % sizeof(__le64) == 0);

static void tern_en_hw_stats_add(struct tern_cmd_eth_stats_out *sum,
				 const struct tern_cmd_eth_stats_out *base)
{
	__le64 *s = (__le64 *)sum;
	const __le64 *b = (const __le64 *)base;
	size_t i;

	for (i = 0; i < sizeof(*sum) / sizeof(__le64); i++)
		s[i] = cpu_to_le64(le64_to_cpu(s[i]) + le64_to_cpu(b[i]));
}

/* QUERY_ETH_STATS into the cache, on top of the counts before the last reset. */
static int tern_en_query_hw_stats(struct tern_en_priv *priv)
{
	struct tern_cmd_eth_stats_out out;
	unsigned long flags;
	int err;

	lockdep_assert_held(&priv->hw_stats_mutex);
	if (priv->hw_stats_frozen)
		return -EAGAIN;
	err = tern_cmd_exec(priv->tdev, TERN_CMD_QUERY_ETH_STATS, NULL, 0, &out, sizeof(out),
			    NULL);
	if (err)
		return err;
	tern_en_hw_stats_add(&out, &priv->hw_stats_base);
	spin_lock_irqsave(&priv->hw_stats_lock, flags);
	priv->hw_stats = out;
	priv->hw_stats_stamp = jiffies;
	spin_unlock_irqrestore(&priv->hw_stats_lock, flags);
	return 0;
}

/**
 * tern_en_update_hw_stats() - read the MAC's counters from the device into the cache
 * @priv: the Ethernet function
 *
 * Context: process context; sleeps (QUERY_ETH_STATS).
 * Return: 0, or the command's negative errno, or -EAGAIN while the device is being reset
 * (tern_en_suspend() to tern_en_resume()); the cache is then left as it was.
 */
int tern_en_update_hw_stats(struct tern_en_priv *priv)
{
	int err;

	mutex_lock(&priv->hw_stats_mutex);
	err = tern_en_query_hw_stats(priv);
	mutex_unlock(&priv->hw_stats_mutex);
	return err;
}

/**
 * tern_en_read_hw_stats() - copy the cached hardware counters
 * @priv: the Ethernet function
 * @out: where to copy them (little-endian, as the device reports them)
 *
 * Context: any.
 */
void tern_en_read_hw_stats(struct tern_en_priv *priv, struct tern_cmd_eth_stats_out *out)
{
	unsigned long flags;

	spin_lock_irqsave(&priv->hw_stats_lock, flags);
	*out = priv->hw_stats;
	spin_unlock_irqrestore(&priv->hw_stats_lock, flags);
}

static void tern_en_stats_work(struct work_struct *work)
{
	struct tern_en_priv *priv = container_of(to_delayed_work(work), struct tern_en_priv,
						 stats_work);

	tern_en_update_hw_stats(priv);
	if (READ_ONCE(priv->stats_periodic))
		queue_delayed_work(system_wq, &priv->stats_work, TERN_EN_STATS_PERIOD);
}

/**
 * tern_en_read_sw_stats() - snapshot of the software counters
 * @priv: the Ethernet function
 * @s: filled with the counters since the netdev was created
 *
 * Context: any.
 */
void tern_en_read_sw_stats(struct tern_en_priv *priv, struct tern_en_sw_stats *s)
{
	unsigned int start, i;

	memset(s, 0, sizeof(*s));
	/* Every channel, used or not: a channel removed keeps what it counted. */
	for (i = 0; i < TERN_EN_MAX_CHANNELS; i++) {
		const struct tern_en_txq *tx = &priv->ch[i].tx;
		const struct tern_en_rxq *rx = &priv->ch[i].rx;
		const struct tern_en_eq_stats *eqs = &priv->ch[i].eq_stats;
		struct tern_en_sw_stats c;

		do {
			start = u64_stats_fetch_begin(&tx->stats.syncp);
			c.tx_packets = u64_stats_read(&tx->stats.packets);
			c.tx_bytes = u64_stats_read(&tx->stats.bytes);
			c.tx_errors = u64_stats_read(&tx->stats.errors);
			c.tx_queue_wake = u64_stats_read(&tx->stats.wakes);
		} while (u64_stats_fetch_retry(&tx->stats.syncp, start));

		do {
			start = u64_stats_fetch_begin(&tx->xstats.syncp);
			c.tx_dropped = u64_stats_read(&tx->xstats.dropped);
			c.tx_busy = u64_stats_read(&tx->xstats.busy);
			c.tx_queue_stop = u64_stats_read(&tx->xstats.stops);
			c.tx_carrier_errors = u64_stats_read(&tx->xstats.carrier);
		} while (u64_stats_fetch_retry(&tx->xstats.syncp, start));

		do {
			start = u64_stats_fetch_begin(&rx->stats.syncp);
			c.rx_packets = u64_stats_read(&rx->stats.packets);
			c.rx_bytes = u64_stats_read(&rx->stats.bytes);
			c.rx_multicast = u64_stats_read(&rx->stats.multicast);
			c.rx_errors = u64_stats_read(&rx->stats.errors);
			c.rx_length_errors = u64_stats_read(&rx->stats.length_errors);
			c.rx_dropped = u64_stats_read(&rx->stats.dropped);
			c.rx_alloc_fail = u64_stats_read(&rx->stats.alloc_fail);
		} while (u64_stats_fetch_retry(&rx->stats.syncp, start));

		do {
			start = u64_stats_fetch_begin(&eqs->syncp);
			c.eq_events = u64_stats_read(&eqs->events);
			c.eq_unknown_events = u64_stats_read(&eqs->unknown);
		} while (u64_stats_fetch_retry(&eqs->syncp, start));

		s->tx_packets += c.tx_packets;
		s->tx_bytes += c.tx_bytes;
		s->tx_errors += c.tx_errors;
		s->tx_queue_wake += c.tx_queue_wake;
		s->tx_dropped += c.tx_dropped;
		s->tx_busy += c.tx_busy;
		s->tx_queue_stop += c.tx_queue_stop;
		s->tx_carrier_errors += c.tx_carrier_errors;
		s->rx_packets += c.rx_packets;
		s->rx_bytes += c.rx_bytes;
		s->rx_multicast += c.rx_multicast;
		s->rx_errors += c.rx_errors;
		s->rx_length_errors += c.rx_length_errors;
		s->rx_dropped += c.rx_dropped;
		s->rx_alloc_fail += c.rx_alloc_fail;
		s->eq_events += c.eq_events;
		s->eq_unknown_events += c.eq_unknown_events;
	}
	s->tx_timeouts = READ_ONCE(priv->tx_timeouts);
}

/**
 * tern_en_read_queue_stats() - snapshot of one channel's packet and byte counters
 * @ch: the channel
 * @s: filled with its counters since the netdev was created
 *
 * Context: any.
 */
void tern_en_read_queue_stats(struct tern_en_channel *ch, struct tern_en_queue_stats *s)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&ch->rx.stats.syncp);
		s->rx_packets = u64_stats_read(&ch->rx.stats.packets);
		s->rx_bytes = u64_stats_read(&ch->rx.stats.bytes);
	} while (u64_stats_fetch_retry(&ch->rx.stats.syncp, start));
	do {
		start = u64_stats_fetch_begin(&ch->tx.stats.syncp);
		s->tx_packets = u64_stats_read(&ch->tx.stats.packets);
		s->tx_bytes = u64_stats_read(&ch->tx.stats.bytes);
	} while (u64_stats_fetch_retry(&ch->tx.stats.syncp, start));
}

/* Atomic context: hardware counters come from the cache, refreshed by stats_work. */
static void tern_en_get_stats64(struct net_device *netdev, struct rtnl_link_stats64 *st)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	struct tern_cmd_eth_stats_out hw;
	struct tern_en_sw_stats sw;
	u64 hw_len_errors;

	tern_en_read_sw_stats(priv, &sw);
	tern_en_read_hw_stats(priv, &hw);
	if (time_after(jiffies, READ_ONCE(priv->hw_stats_stamp) + TERN_EN_STATS_MAX_AGE))
		mod_delayed_work(system_wq, &priv->stats_work, 0);

	st->tx_packets = sw.tx_packets;
	st->tx_bytes = sw.tx_bytes;
	st->tx_carrier_errors = sw.tx_carrier_errors;
	st->tx_errors = sw.tx_errors + sw.tx_carrier_errors;
	st->tx_dropped = sw.tx_dropped;

	/* Frames the device completed with an error are counted by the driver (the hardware's
	 * rx_dma_errors/tx_dma_errors/tx_bad_len count the same events); frames the device
	 * dropped before they reached a descriptor come from the hardware counters.
	 */
	hw_len_errors = le64_to_cpu(hw.rx_oversize) + le64_to_cpu(hw.rx_runt);
	st->rx_packets = sw.rx_packets;
	st->rx_bytes = sw.rx_bytes;
	st->multicast = sw.rx_multicast;
	st->rx_length_errors = sw.rx_length_errors + hw_len_errors;
	st->rx_errors = sw.rx_errors + st->rx_length_errors;
	st->rx_dropped = sw.rx_dropped;
	st->rx_missed_errors = le64_to_cpu(hw.rx_no_queue);
}

/* ---------------------------------------------------------------------------------------
 * The channels' queues on the device (their rings: en_tx.c, en_rx.c)
 */

static void tern_en_fill_mem(struct tern_mem_desc *mem, dma_addr_t dma, size_t bytes)
{
	mem->addr = cpu_to_le64(dma);
	mem->npages = cpu_to_le32(DIV_ROUND_UP(bytes, 1u << TERN_MEM_MIN_PAGE_SHIFT));
	mem->page_shift = TERN_MEM_MIN_PAGE_SHIFT;
	mem->mode = TERN_MEM_DIRECT;
	mem->rsvd = 0;
}

/* Moderation bounds of the RX or TX queue; 0/0 on a device without moderation. */
static void tern_en_queue_coal(const struct tern_en_priv *priv, bool rx, __le16 *usecs,
			       __le16 *frames)
{
	const struct tern_en_coal *c = &priv->coal;

	*usecs = cpu_to_le16(priv->coal_supported ? (rx ? c->rx_usecs : c->tx_usecs) : 0);
	*frames = cpu_to_le16(priv->coal_supported ? (rx ? c->rx_frames : c->tx_frames) : 0);
}

static int tern_en_create_queue(struct tern_en_priv *priv, struct tern_en_channel *ch,
				u16 opcode, dma_addr_t ring_dma, size_t ring_bytes, u32 size,
				u32 *qid)
{
	struct tern_cmd_create_eth_queue_in in = {};

	tern_en_fill_mem(&in.mem, ring_dma, ring_bytes);
	in.log_depth = ilog2(size);
	in.eqn = cpu_to_le16(ch->eq.eqn);
	tern_en_queue_coal(priv, opcode == TERN_CMD_CREATE_ETH_RXQ, &in.moder_period_us,
			   &in.moder_frames);
	return tern_cmd_exec(priv->tdev, opcode, &in, sizeof(in), NULL, 0, qid);
}

/* MODIFY_ETH_RXQ/TXQ of an open channel's queue with priv->coal. RTNL held. */
static int tern_en_modify_queue(struct tern_en_priv *priv, struct tern_en_channel *ch, bool rx)
{
	struct tern_cmd_modify_eth_queue_in in = {};

	in.qid = cpu_to_le32(rx ? ch->rx.qid : ch->tx.qid);
	tern_en_queue_coal(priv, rx, &in.moder_period_us, &in.moder_frames);
	return tern_cmd_exec(priv->tdev, rx ? TERN_CMD_MODIFY_ETH_RXQ : TERN_CMD_MODIFY_ETH_TXQ,
			     &in, sizeof(in), NULL, 0, NULL);
}

/**
 * tern_en_set_coal() - change the event moderation of the channels' queues
 * @priv: the Ethernet function
 * @coal: new bounds, within the device's limits (ethtool.c checks them)
 *
 * Kept for every later open; applied at once to live queues. If the device refuses, the
 * previous bounds are put back (on the device too, for the queues already changed).
 *
 * Context: process context, RTNL held.
 * Return: 0 or a negative errno.
 */
int tern_en_set_coal(struct tern_en_priv *priv, const struct tern_en_coal *coal)
{
	struct tern_en_coal old = priv->coal;
	unsigned int i, done;
	int err = 0;

	ASSERT_RTNL();

	priv->coal = *coal;
	if (!priv->ch_open)
		return 0;
	/* 2 * i: channel i's RX queue, 2 * i + 1: its TX queue */
	for (done = 0; done < 2 * priv->num_channels; done++) {
		err = tern_en_modify_queue(priv, &priv->ch[done / 2], !(done & 1));
		if (err)
			break;
	}
	if (!err)
		return 0;
	priv->coal = old;
	for (i = 0; i < done; i++) {
		if (tern_en_modify_queue(priv, &priv->ch[i / 2], !(i & 1)))
			netdev_warn(priv->netdev, "channel %u's %s queue keeps the new moderation\n",
				    i / 2, (i & 1) ? "TX" : "RX");
	}
	return err;
}

/* Destroy a queue on the device. Returns true when the device no longer uses the queue's
 * memory: it destroyed the queue, or it is dead (a dead device has stopped DMA).
 */
static bool tern_en_destroy_queue(struct tern_en_priv *priv, u16 opcode, u32 qid)
{
	struct tern_cmd_destroy_eth_queue_in in = { .qid = cpu_to_le32(qid) };
	int err;

	err = tern_cmd_exec(priv->tdev, opcode, &in, sizeof(in), NULL, 0, NULL);
	if (!err || !tern_dev_alive(priv->tdev))
		return true;
	netdev_err(priv->netdev, "%s of queue %u failed: %d\n", tern_cmd_opcode_name(opcode),
		   qid, err);
	return false;
}

/* ---------------------------------------------------------------------------------------
 * Channel open/close
 */

/* MSI-X vector of channel @idx's EQ: TERN_EN_EQ_VECTOR, then the Ethernet ones at the end. */
static u16 tern_en_vector(const struct tern_en_priv *priv, u32 idx)
{
	const struct tern_dev *tdev = priv->tdev;

	if (!idx)
		return TERN_EN_EQ_VECTOR;
	return tdev->num_vectors - tdev->num_eth_extra_vectors + idx - 1;
}

/* Allocate a channel's rings, create its EQ and queues on the device. RTNL held. On
 * failure everything is undone.
 */
static int tern_en_open_channel(struct tern_en_priv *priv, struct tern_en_channel *ch)
{
	struct tern_dev *tdev = priv->tdev;
	bool tx_done = true, rx_done = true;
	u8 eq_log;
	u32 qid;
	int err;

	err = tern_en_txq_alloc(priv, ch);
	if (err)
		return err;
	err = tern_en_rxq_alloc(priv, ch);
	if (err)
		goto err_free_tx;

	eq_log = clamp_t(u8, tdev->caps.max_eq_log, TERN_EQ_MIN_LOG, TERN_EN_EQ_LOG);
	snprintf(ch->irq_name, sizeof(ch->irq_name), "%s-txrx-%u", priv->netdev->name, ch->idx);
	err = tern_eq_create(tdev, &ch->eq, tern_en_vector(priv, ch->idx), eq_log, 0,
			     tern_en_eq_event, ch, ch->irq_name);
	if (err) {
		netdev_err(priv->netdev, "cannot create channel %u's EQ: %d\n", ch->idx, err);
		goto err_free_rx;
	}

	err = tern_en_create_queue(priv, ch, TERN_CMD_CREATE_ETH_RXQ, ch->rx.ring_dma,
				   ch->rx.ring_bytes, ch->rx.size, &qid);
	if (err) {
		netdev_err(priv->netdev, "cannot create RX queue %u: %d\n", ch->idx, err);
		goto err_destroy_eq;
	}
	WRITE_ONCE(ch->rx.qid, qid);

	err = tern_en_create_queue(priv, ch, TERN_CMD_CREATE_ETH_TXQ, ch->tx.ring_dma,
				   ch->tx.ring_bytes, ch->tx.size, &qid);
	if (err) {
		netdev_err(priv->netdev, "cannot create TX queue %u: %d\n", ch->idx, err);
		goto err_destroy_rxq;
	}
	WRITE_ONCE(ch->tx.qid, qid);
	return 0;

err_destroy_rxq:
	rx_done = tern_en_destroy_queue(priv, TERN_CMD_DESTROY_ETH_RXQ, ch->rx.qid);
	WRITE_ONCE(ch->rx.qid, TERN_EN_QID_NONE);
err_destroy_eq:
	tern_eq_destroy(tdev, &ch->eq);
err_free_rx:
	tern_en_rxq_free(priv, ch, rx_done);
err_free_tx:
	tern_en_txq_free(priv, ch, tx_done);
	return err;
}

/* Destroy a channel's queues and EQ and free its rings; its NAPI is disabled. RTNL held. */
static void tern_en_free_channel(struct tern_en_priv *priv, struct tern_en_channel *ch)
{
	bool tx_done, rx_done;

	/* Once destroyed, the queues no longer touch the rings or post events. */
	tx_done = tern_en_destroy_queue(priv, TERN_CMD_DESTROY_ETH_TXQ, ch->tx.qid);
	WRITE_ONCE(ch->tx.qid, TERN_EN_QID_NONE);
	rx_done = tern_en_destroy_queue(priv, TERN_CMD_DESTROY_ETH_RXQ, ch->rx.qid);
	WRITE_ONCE(ch->rx.qid, TERN_EN_QID_NONE);
	tern_eq_destroy(priv->tdev, &ch->eq);

	tern_en_rxq_free(priv, ch, rx_done);
	tern_en_txq_free(priv, ch, tx_done);
}

/* SET_RSS with priv's key and table, naming the open channels' RX queues. RTNL held. */
static int tern_en_rss_apply(struct tern_en_priv *priv)
{
	struct tern_cmd_set_rss_in *in;
	unsigned int i;
	int err;

	if (!priv->rss_supported)
		return 0;
	in = kzalloc(sizeof(*in), GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	in->hash_fields = cpu_to_le32(TERN_RSS_HASH_ALL);
	memcpy(in->key, priv->rss_key, sizeof(in->key));
	for (i = 0; i < TERN_RSS_INDIR_SIZE; i++) {
		u32 c = priv->rss_indir[i];

		in->indir[i] = priv->ch[c < priv->num_channels ? c : 0].rx.qid;
	}
	err = tern_cmd_exec(priv->tdev, TERN_CMD_SET_RSS, in, sizeof(*in), NULL, 0, NULL);
	kfree(in);
	if (err)
		netdev_err(priv->netdev, "cannot set RSS: %d\n", err);
	return err;
}

/* Open priv->num_channels channels, give RSS their RX queues and start the data path.
 * RTNL held. On failure everything is undone.
 */
static int tern_en_open_channels(struct tern_en_priv *priv)
{
	u32 i, n = priv->num_channels;
	int err;

	ASSERT_RTNL();

	for (i = 0; i < n; i++) {
		err = tern_en_open_channel(priv, &priv->ch[i]);
		if (err)
			goto err_close;
	}
	err = tern_en_rss_apply(priv);
	if (err)
		goto err_close;
	err = tern_en_port_sync(priv);
	if (err)
		goto err_close;

	for (i = 0; i < n; i++) {
		netdev_tx_reset_queue(priv->ch[i].tx.nq);
		napi_enable(&priv->ch[i].napi);
	}
	/* The queues are created disarmed and the posted RX buffers are not rung yet: a first
	 * poll does both, so that every doorbell is written from NAPI.
	 */
	local_bh_disable();
	for (i = 0; i < n; i++)
		napi_schedule(&priv->ch[i].napi);
	local_bh_enable();

	WRITE_ONCE(priv->ch_open, true);
	WRITE_ONCE(priv->stats_periodic, true);
	mod_delayed_work(system_wq, &priv->stats_work, 0);
	netif_tx_wake_all_queues(priv->netdev);
	return 0;

err_close:
	while (i--)
		tern_en_free_channel(priv, &priv->ch[i]);
	return err;
}

/* Stop the data path and leave the device without queues or EQs of ours. RTNL held. */
static void tern_en_close_channels(struct tern_en_priv *priv)
{
	u32 i;

	ASSERT_RTNL();

	if (!priv->ch_open)
		return;
	/* The carrier stays as it is: a reconfiguration reopens the channels at once. */
	WRITE_ONCE(priv->ch_open, false);
	WRITE_ONCE(priv->stats_periodic, false);

	for (i = 0; i < priv->num_channels; i++)
		napi_disable(&priv->ch[i].napi);
	netif_tx_disable(priv->netdev);
	/* napi_disable() returns once the poll has called napi_complete_done(), but the poll
	 * still rings the arming doorbells after that: wait for it to leave its softirq.
	 */
	synchronize_net();

	for (i = 0; i < priv->num_channels; i++)
		tern_en_free_channel(priv, &priv->ch[i]);
}

/**
 * struct tern_en_cfg - settings that need the channels recreated to change
 * @mtu: netdev MTU (sizes the receive buffers)
 * @tx_ring_size: TX descriptors
 * @rx_ring_size: RX descriptors
 * @num_channels: channels
 */
struct tern_en_cfg {
	unsigned int mtu;
	u32 tx_ring_size;
	u32 rx_ring_size;
	u32 num_channels;
};

static void tern_en_cfg_get(struct tern_en_priv *priv, struct tern_en_cfg *cfg)
{
	cfg->mtu = priv->netdev->mtu;
	cfg->tx_ring_size = priv->tx_ring_size;
	cfg->rx_ring_size = priv->rx_ring_size;
	cfg->num_channels = priv->num_channels;
}

/* The netdev's queues follow the channels; RSS spreads over them unless set by the admin. */
static int tern_en_set_num_queues(struct tern_en_priv *priv, u32 n)
{
	u32 i;
	int err;

	err = netif_set_real_num_queues(priv->netdev, n, n);
	if (err)
		return err;
	priv->num_channels = n;
	if (!netif_is_rxfh_configured(priv->netdev)) {
		for (i = 0; i < TERN_RSS_INDIR_SIZE; i++)
			priv->rss_indir[i] = ethtool_rxfh_indir_default(i, n);
	}
	return 0;
}

static int tern_en_cfg_set(struct tern_en_priv *priv, const struct tern_en_cfg *cfg)
{
	if (cfg->num_channels != priv->num_channels) {
		int err = tern_en_set_num_queues(priv, cfg->num_channels);

		if (err)
			return err;
	}
	WRITE_ONCE(priv->netdev->mtu, cfg->mtu);
	priv->tx_ring_size = cfg->tx_ring_size;
	priv->rx_ring_size = cfg->rx_ring_size;
	return 0;
}

/* Apply @cfg to a running interface by recreating the channels. On failure the previous
 * settings are restored and the channels reopened with them. RTNL held.
 */
static int tern_en_reconfigure(struct tern_en_priv *priv, const struct tern_en_cfg *cfg)
{
	struct tern_en_cfg old;
	int err;

	tern_en_cfg_get(priv, &old);
	tern_en_close_channels(priv);
	err = tern_en_cfg_set(priv, cfg);
	if (!err)
		err = tern_en_open_channels(priv);
	if (!err)
		return 0;

	if (tern_en_cfg_set(priv, &old) || tern_en_open_channels(priv)) {
		netdev_err(priv->netdev,
			   "queues are down; set the interface down and up to retry\n");
		tern_en_refresh_carrier(priv);
	}
	return err;
}

/**
 * tern_en_set_ring_sizes() - change the number of TX and RX descriptors
 * @priv: the Ethernet function
 * @tx_size: TX descriptors, a power of two in TERN_EN_MIN_RING_SIZE..max_ring_size
 * @rx_size: RX descriptors, likewise
 *
 * Context: process context, RTNL held.
 * Return: 0, or a negative errno with the previous sizes still in use.
 */
int tern_en_set_ring_sizes(struct tern_en_priv *priv, u32 tx_size, u32 rx_size)
{
	struct tern_en_cfg cfg;

	ASSERT_RTNL();

	tern_en_cfg_get(priv, &cfg);
	if (tx_size == cfg.tx_ring_size && rx_size == cfg.rx_ring_size)
		return 0;
	cfg.tx_ring_size = tx_size;
	cfg.rx_ring_size = rx_size;
	if (!netif_running(priv->netdev))
		return tern_en_cfg_set(priv, &cfg);
	return tern_en_reconfigure(priv, &cfg);
}

/**
 * tern_en_set_channels() - change the number of channels (TX/RX queue pairs)
 * @priv: the Ethernet function
 * @count: channels, 1..max_channels (ethtool.c checks it, and that an indirection table
 *	set by the admin names none of the channels that go away)
 *
 * Kept across down/up, devlink reload and device resets. An indirection table that the
 * admin has not set is spread evenly over the new channels.
 *
 * Context: process context, RTNL held.
 * Return: 0, or a negative errno with the previous channels still in use.
 */
int tern_en_set_channels(struct tern_en_priv *priv, u32 count)
{
	struct tern_en_cfg cfg;

	ASSERT_RTNL();

	tern_en_cfg_get(priv, &cfg);
	if (count == cfg.num_channels)
		return 0;
	cfg.num_channels = count;
	if (!netif_running(priv->netdev))
		return tern_en_cfg_set(priv, &cfg);
	return tern_en_reconfigure(priv, &cfg);
}

/**
 * tern_en_set_rss() - change the RSS indirection table and/or key
 * @priv: the Ethernet function
 * @indir: TERN_RSS_INDIR_SIZE channel numbers below num_channels, or NULL to keep the table
 * @key: TERN_RSS_KEY_SIZE bytes, or NULL to keep the key
 *
 * Kept for every later open; given to the device at once when the channels are open. If
 * the device refuses, the previous settings are put back.
 *
 * Context: process context, RTNL held.
 * Return: 0 or a negative errno.
 */
int tern_en_set_rss(struct tern_en_priv *priv, const u32 *indir, const u8 *key)
{
	u32 old_indir[TERN_RSS_INDIR_SIZE];
	u8 old_key[TERN_RSS_KEY_SIZE];
	int err;

	ASSERT_RTNL();

	memcpy(old_indir, priv->rss_indir, sizeof(old_indir));
	memcpy(old_key, priv->rss_key, sizeof(old_key));
	if (indir)
		memcpy(priv->rss_indir, indir, sizeof(priv->rss_indir));
	if (key)
		memcpy(priv->rss_key, key, sizeof(priv->rss_key));
	if (!priv->ch_open)
		return 0;
	err = tern_en_rss_apply(priv);
	if (err) {
		memcpy(priv->rss_indir, old_indir, sizeof(old_indir));
		memcpy(priv->rss_key, old_key, sizeof(old_key));
	}
	return err;
}

static void tern_en_reset_work(struct work_struct *work)
{
	struct tern_en_priv *priv = container_of(work, struct tern_en_priv, reset_work);
	int err;

	rtnl_lock();
	if (netif_running(priv->netdev) && priv->ch_open) {
		netdev_info(priv->netdev, "recreating the queues\n");
		tern_en_close_channels(priv);
		err = tern_en_open_channels(priv);
		if (err) {
			netdev_err(priv->netdev,
				   "cannot recreate the queues (%d); set the interface down and up to retry\n",
				   err);
			tern_en_refresh_carrier(priv);
		}
	}
	rtnl_unlock();
}

/* ---------------------------------------------------------------------------------------
 * netdev operations
 */

static void tern_en_tx_timeout(struct net_device *netdev, unsigned int txqueue)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	struct tern_en_txq *tx = &priv->ch[min_t(u32, txqueue, TERN_EN_MAX_CHANNELS - 1)].tx;

	/* The watchdog holds every xmit lock: pi and ci are stable. */
	WRITE_ONCE(priv->tx_timeouts, priv->tx_timeouts + 1);
	netdev_err(netdev, "TX timeout on queue %u (qid %u): pi %u ci %u, device status %#x\n",
		   txqueue, tx->qid, tx->pi, tx->ci, tern_rd(priv->tdev, TERN_REG_STATUS));
	schedule_work(&priv->reset_work);
}

static int tern_en_open(struct net_device *netdev)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	int err;

	err = tern_en_open_channels(priv);
	if (err)
		return err;
	tern_en_sync_link(priv);
	return 0;
}

static int tern_en_stop(struct net_device *netdev)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	tern_en_close_channels(priv);
	tern_en_refresh_carrier(priv);
	return 0;
}

static int tern_en_set_mac_address(struct net_device *netdev, void *p)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	struct sockaddr *sa = p;
	int err;

	err = eth_prepare_mac_addr_change(netdev, p);
	if (err)
		return err;

	mutex_lock(&priv->port_lock);
	err = tern_en_port_apply(priv, priv->port.flags, priv->port.mtu, sa->sa_data);
	mutex_unlock(&priv->port_lock);
	if (err)
		return err;

	eth_commit_mac_addr_change(netdev, p);
	return 0;
}

static int tern_en_change_mtu(struct net_device *netdev, int new_mtu)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	struct tern_en_cfg cfg;
	int err;

	if (!netif_running(netdev)) {
		mutex_lock(&priv->port_lock);
		err = tern_en_port_apply(priv, priv->port.flags, new_mtu, priv->port.mac);
		mutex_unlock(&priv->port_lock);
		if (!err)
			WRITE_ONCE(netdev->mtu, new_mtu);
		return err;
	}

	/* The receive buffers are sized for the MTU: rebuild the channels. */
	tern_en_cfg_get(priv, &cfg);
	cfg.mtu = new_mtu;
	return tern_en_reconfigure(priv, &cfg);
}

/* rx-gro-hw needs the device's receive checksum: it coalesces only frames it checked. */
static netdev_features_t tern_en_fix_features(struct net_device *netdev,
					      netdev_features_t features)
{
	if (!(features & NETIF_F_RXCSUM))
		features &= ~NETIF_F_GRO_HW;
	return features;
}

/* RTNL held. rx-gro-hw is the port's TERN_PORT_F_LRO; the rest is the driver's own. */
static int tern_en_set_features(struct net_device *netdev, netdev_features_t features)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	bool lro = features & NETIF_F_GRO_HW;
	int err;

	if (lro == priv->lro)
		return 0;
	WRITE_ONCE(priv->lro, lro);
	if (!netif_device_present(netdev))
		return 0;		/* tern_en_resume() pushes it */
	err = tern_en_port_sync(priv);
	if (err)
		WRITE_ONCE(priv->lro, !lro);
	return err;
}

/* SIOCSHWTSTAMP (RTNL held): the device stamps every frame received or none, so any receive
 * filter is served as HWTSTAMP_FILTER_ALL; the core has checked the values' ranges.
 */
static int tern_en_hwtstamp_set(struct tern_en_priv *priv, struct ifreq *ifr)
{
	struct hwtstamp_config cfg;
	bool rx, old_rx = priv->rx_ts;
	int err;

	if (copy_from_user(&cfg, ifr->ifr_data, sizeof(cfg)))
		return -EFAULT;
	if (cfg.flags)
		return -EINVAL;
	if (cfg.tx_type != HWTSTAMP_TX_OFF && cfg.tx_type != HWTSTAMP_TX_ON)
		return -ERANGE;
	rx = cfg.rx_filter != HWTSTAMP_FILTER_NONE;
	if (rx)
		cfg.rx_filter = HWTSTAMP_FILTER_ALL;
	if (rx != old_rx) {
		WRITE_ONCE(priv->rx_ts, rx);
		if (netif_device_present(priv->netdev)) {	/* else tern_en_resume() */
			err = tern_en_port_sync(priv);
			if (err) {
				WRITE_ONCE(priv->rx_ts, old_rx);
				return err;
			}
		}
	}
	WRITE_ONCE(priv->tx_ts, cfg.tx_type == HWTSTAMP_TX_ON);
	priv->tstamp = cfg;
	return copy_to_user(ifr->ifr_data, &cfg, sizeof(cfg)) ? -EFAULT : 0;
}

/* ndo_eth_ioctl (RTNL held): hardware timestamping, SIOCSHWTSTAMP and SIOCGHWTSTAMP. */
static int tern_en_eth_ioctl(struct net_device *netdev, struct ifreq *ifr, int cmd)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	if (!priv->ts_supported)
		return -EOPNOTSUPP;
	switch (cmd) {
	case SIOCSHWTSTAMP:
		return tern_en_hwtstamp_set(priv, ifr);
	case SIOCGHWTSTAMP:
		return copy_to_user(ifr->ifr_data, &priv->tstamp, sizeof(priv->tstamp)) ?
		       -EFAULT : 0;
	default:
		return -EOPNOTSUPP;
	}
}

static const struct net_device_ops tern_en_netdev_ops = {
	.ndo_open		= tern_en_open,
	.ndo_stop		= tern_en_stop,
	.ndo_start_xmit		= tern_en_start_xmit,
	.ndo_features_check	= tern_en_features_check,
	.ndo_fix_features	= tern_en_fix_features,
	.ndo_set_features	= tern_en_set_features,
	.ndo_get_stats64	= tern_en_get_stats64,
	.ndo_set_rx_mode	= tern_en_set_rx_mode,
	.ndo_set_mac_address	= tern_en_set_mac_address,
	.ndo_validate_addr	= eth_validate_addr,
	.ndo_change_mtu		= tern_en_change_mtu,
	.ndo_tx_timeout		= tern_en_tx_timeout,
	.ndo_eth_ioctl		= tern_en_eth_ioctl,
};

/* ---------------------------------------------------------------------------------------
 * Probe and remove
 */

static void tern_en_init_mtu(struct tern_en_priv *priv)
{
	const struct tern_cmd_query_device_out *caps = &priv->tdev->caps;
	struct net_device *netdev = priv->netdev;
	unsigned int min_mtu, max_mtu;

	if (!tern_en_mtu_range(le16_to_cpu(caps->min_mtu), le16_to_cpu(caps->max_mtu),
			       &min_mtu, &max_mtu))
		netdev_warn(netdev, "device reports MTU range %u..%u; using %u..%u\n",
			    le16_to_cpu(caps->min_mtu), le16_to_cpu(caps->max_mtu),
			    min_mtu, max_mtu);
	netdev->min_mtu = min_mtu;
	netdev->max_mtu = max_mtu;
	netdev->mtu = clamp_t(unsigned int, ETH_DATA_LEN, min_mtu, max_mtu);
}

/* Channels the device allows: its TX and RX queues, the MSI-X vectors set aside for
 * Ethernet (below the device's num_msix), and EQs beyond the async and RDMA ones.
 */
static u32 tern_en_max_channels(const struct tern_dev *tdev)
{
	const struct tern_cmd_query_device_out *caps = &tdev->caps;
	int vecs = 1 + tdev->num_eth_extra_vectors;
	int eqs = caps->max_eqs - 1 - tdev->num_comp_vectors;
	int n;

	if (caps->num_msix)
		vecs -= max(tdev->num_vectors - caps->num_msix, 0);
	n = min3(vecs, eqs, TERN_EN_MAX_CHANNELS);
	n = min3(n, (int)caps->max_eth_txqs, (int)caps->max_eth_rxqs);
	return max(n, 1);
}

/* The device's Ethernet queues and vector are usable. */
static int tern_en_check_caps(struct tern_dev *tdev)
{
	const struct tern_cmd_query_device_out *caps = &tdev->caps;
	struct device *dev = &tdev->pdev->dev;

	if (!caps->max_eth_txqs || !caps->max_eth_rxqs || caps->max_eth_log < TERN_ETH_MIN_LOG) {
		dev_err(dev, "device reports no usable Ethernet queues\n");
		return -ENODEV;
	}
	if (tdev->num_vectors <= TERN_EN_EQ_VECTOR) {
		dev_err(dev, "Ethernet needs MSI-X vector %d, %d vectors allocated\n",
			TERN_EN_EQ_VECTOR, tdev->num_vectors);
		return -ENOSPC;
	}
	return 0;
}

/* Locks, work items and channels of a new netdev's private data. */
static void tern_en_init_priv(struct tern_en_priv *priv, struct tern_dev *tdev,
			      struct net_device *netdev)
{
	u32 i;

	priv->tdev = tdev;
	priv->netdev = netdev;
	spin_lock_init(&priv->link_lock);
	mutex_init(&priv->port_lock);
	mutex_init(&priv->hw_stats_mutex);
	spin_lock_init(&priv->hw_stats_lock);
	INIT_WORK(&priv->rx_mode_work, tern_en_rx_mode_work);
	INIT_WORK(&priv->reset_work, tern_en_reset_work);
	INIT_DELAYED_WORK(&priv->stats_work, tern_en_stats_work);
	/* Nothing cached yet: the first ndo_get_stats64 asks for a refresh. */
	priv->hw_stats_stamp = jiffies - TERN_EN_STATS_MAX_AGE - 1;
	for (i = 0; i < TERN_EN_MAX_CHANNELS; i++) {
		struct tern_en_channel *ch = &priv->ch[i];

		ch->priv = priv;
		ch->idx = i;
		u64_stats_init(&ch->tx.stats.syncp);
		u64_stats_init(&ch->tx.xstats.syncp);
		u64_stats_init(&ch->rx.stats.syncp);
		u64_stats_init(&ch->eq_stats.syncp);
		ch->tx.qid = TERN_EN_QID_NONE;
		ch->rx.qid = TERN_EN_QID_NONE;
	}
}

/* Event moderation: the defaults, within the device's limits. */
static void tern_en_init_coal(struct tern_en_priv *priv)
{
	const struct tern_cmd_query_device_out *caps = &priv->tdev->caps;

	priv->coal_supported = true;
	priv->max_coal_usecs = le16_to_cpu(caps->max_eth_moder_period);
	priv->max_coal_frames = le16_to_cpu(caps->max_eth_moder_frames);
	priv->coal.rx_usecs = min_t(u16, TERN_EN_DEF_RX_USECS, priv->max_coal_usecs);
	priv->coal.tx_usecs = min_t(u16, TERN_EN_DEF_TX_USECS, priv->max_coal_usecs);
	priv->coal.rx_frames = min_t(u16, TERN_EN_DEF_RX_FRAMES, priv->max_coal_frames);
	priv->coal.tx_frames = min_t(u16, TERN_EN_DEF_TX_FRAMES, priv->max_coal_frames);
	if (!priv->coal.rx_usecs)
		priv->coal.rx_frames = min_t(u16, priv->coal.rx_frames, 1);
	if (!priv->coal.tx_usecs)
		priv->coal.tx_frames = min_t(u16, priv->coal.tx_frames, 1);
}

/* Channels, RSS, ring sizes and event moderation, from the device's limits. */
static int tern_en_init_queues(struct tern_en_priv *priv)
{
	const struct tern_cmd_query_device_out *caps = &priv->tdev->caps;
	u8 max_log;
	int err;

	priv->max_channels = tern_en_max_channels(priv->tdev);
	priv->rss_supported = le32_to_cpu(caps->caps) & TERN_DEV_CAP_ETH_RSS;
	netdev_rss_key_fill(priv->rss_key, sizeof(priv->rss_key));
	err = tern_en_set_num_queues(priv, min_t(u32, priv->max_channels,
						 netif_get_num_default_rss_queues()));
	if (err)
		return err;

	max_log = min_t(u8, caps->max_eth_log, TERN_ETH_MAX_LOG);
	priv->max_ring_size = 1u << max_log;
	priv->tx_ring_size = min_t(u32, 1u << TERN_EN_DEF_RING_LOG, priv->max_ring_size);
	priv->rx_ring_size = priv->tx_ring_size;
	if (le32_to_cpu(caps->caps) & TERN_DEV_CAP_ETH_MODERATION)
		tern_en_init_coal(priv);
	return 0;
}

/* The netdev's operations and offloads. */
static void tern_en_init_features(struct tern_en_priv *priv)
{
	u32 dev_caps = le32_to_cpu(priv->tdev->caps.caps);
	struct net_device *netdev = priv->netdev;

	netdev->netdev_ops = &tern_en_netdev_ops;
	netdev->ethtool_ops = &tern_ethtool_ops;
	netdev->watchdog_timeo = TERN_EN_TX_TIMEOUT;
	netdev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	if (dev_caps & TERN_DEV_CAP_ETH_OFFLOAD) {
		/* all on by default, each can be turned off (ethtool -K) */
		netdev->hw_features = NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_TSO |
				      NETIF_F_TSO6 | NETIF_F_RXCSUM;
		netdev->features |= netdev->hw_features;
		/* VLAN devices on top: the device finds the IP header behind the tag */
		netdev->vlan_features |= NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_TSO |
					 NETIF_F_TSO6;
		netif_set_tso_max_size(netdev, TERN_ETH_TSO_MAX_FRAME);
	}
	if (priv->rss_supported) {
		netdev->hw_features |= NETIF_F_RXHASH;
		netdev->features |= NETIF_F_RXHASH;
	}
	/* frames stamped on the device clock, which the PHC offers (ptp.c) */
	priv->ts_supported = (dev_caps & TERN_DEV_CAP_ETH_TS) && (dev_caps & TERN_DEV_CAP_CLOCK);
	/* Receive coalescing on by default, as bnxt has it; needs the device's checksums. */
	priv->lro_supported = (dev_caps & TERN_DEV_CAP_ETH_LRO) &&
			      (netdev->hw_features & NETIF_F_RXCSUM);
	if (priv->lro_supported) {
		netdev->hw_features |= NETIF_F_GRO_HW;
		netdev->features |= NETIF_F_GRO_HW;
	}
	priv->lro = netdev->features & NETIF_F_GRO_HW;
}

/* The netdev's address: the device's permanent one, or a random one if that is invalid. */
static void tern_en_init_mac(struct tern_en_priv *priv)
{
	const struct tern_cmd_query_device_out *caps = &priv->tdev->caps;
	struct device *dev = &priv->tdev->pdev->dev;
	struct net_device *netdev = priv->netdev;

	/* Until the first SET_PORT the device accepts its permanent address, MTU 1500. */
	priv->port.flags = 0;
	priv->port.mtu = ETH_DATA_LEN;
	memcpy(priv->port.mac, caps->mac, ETH_ALEN);
	if (is_valid_ether_addr(caps->mac)) {
		eth_hw_addr_set(netdev, caps->mac);
		memcpy(netdev->perm_addr, caps->mac, ETH_ALEN);
	} else {
		eth_hw_addr_random(netdev);
		dev_warn(dev, "invalid permanent MAC address %pM, using random %pM\n",
			 caps->mac, netdev->dev_addr);
	}
}

/* Probe, first stage: the netdev, set up from the device's capabilities, with its NAPI
 * contexts, not yet registered. Undone by tern_en_destroy_netdev(); on failure nothing is
 * left.
 */
static struct net_device *tern_en_create_netdev(struct tern_dev *tdev)
{
	struct tern_en_priv *priv;
	struct net_device *netdev;
	u32 i;
	int err;

	netdev = alloc_etherdev_mq(sizeof(*priv), tern_en_max_channels(tdev));
	if (!netdev)
		return ERR_PTR(-ENOMEM);
	SET_NETDEV_DEV(netdev, &tdev->pdev->dev);

	priv = netdev_priv(netdev);
	tern_en_init_priv(priv, tdev, netdev);
	err = tern_en_init_queues(priv);
	if (err) {
		free_netdev(netdev);
		return ERR_PTR(err);
	}
	tern_en_init_features(priv);
	tern_en_init_mtu(priv);
	tern_en_init_mac(priv);

	for (i = 0; i < priv->max_channels; i++)
		netif_napi_add(netdev, &priv->ch[i].napi, tern_en_poll);
	return netdev;
}

/* Undoes tern_en_create_netdev() once the netdev is unregistered, or was never registered:
 * shared by the probe's error path and tern_en_remove().
 */
static void tern_en_destroy_netdev(struct tern_en_priv *priv)
{
	u32 i;

	cancel_work_sync(&priv->rx_mode_work);
	cancel_work_sync(&priv->reset_work);
	cancel_delayed_work_sync(&priv->stats_work);
	for (i = 0; i < priv->max_channels; i++)
		netif_napi_del(&priv->ch[i].napi);
	free_netdev(priv->netdev);
}

/* Probe, second stage: register the netdev and let the device's link changes reach it. */
static int tern_en_register(struct tern_en_priv *priv)
{
	struct net_device *netdev = priv->netdev;
	struct tern_dev *tdev = priv->tdev;
	unsigned long flags;
	int err;

	netif_carrier_off(netdev);
	tern_dcb_netdev_setup(tdev, netdev);

	err = register_netdev(netdev);
	if (err) {
		dev_err(&tdev->pdev->dev, "cannot register the netdev: %d\n", err);
		return err;
	}
	/* The DCB settings outlive the netdev: show the kept DSCP map in its APP table. */
	tern_dcb_netdev_registered(tdev, netdev);

	/* From here link changes reach the netdev; start from the current state. */
	spin_lock_irqsave(&priv->link_lock, flags);
	WRITE_ONCE(tdev->netdev, netdev);
	tern_en_set_link(priv, tern_en_hw_link_up(priv));
	spin_unlock_irqrestore(&priv->link_lock, flags);
	return 0;
}

/**
 * tern_en_probe() - create and register the Ethernet netdev
 * @tdev: the device; command queue, async EQ and MSI-X vectors are up
 *
 * Context: process context (PCI probe).
 * Return: 0 (also when the device has no Ethernet function), or a negative errno.
 */
int tern_en_probe(struct tern_dev *tdev)
{
	struct net_device *netdev;
	int err;

	if (!(le32_to_cpu(tdev->caps.caps) & TERN_DEV_CAP_ETH)) {
		dev_info(&tdev->pdev->dev, "no Ethernet function\n");
		return 0;
	}
	err = tern_en_check_caps(tdev);
	if (err)
		return err;

	netdev = tern_en_create_netdev(tdev);
	if (IS_ERR(netdev))
		return PTR_ERR(netdev);
	err = tern_en_register(netdev_priv(netdev));
	if (err)
		tern_en_destroy_netdev(netdev_priv(netdev));
	return err;
}

/**
 * tern_en_remove() - unregister and free the Ethernet netdev
 * @tdev: the device; the command queue must still work
 *
 * Context: process context (PCI remove), RTNL not held.
 */
void tern_en_remove(struct tern_dev *tdev)
{
	struct net_device *netdev = tdev->netdev;

	if (!netdev)
		return;
	/* The async EQ's handler reads it locklessly; unregistering waits for it (RCU). */
	WRITE_ONCE(tdev->netdev, NULL);

	unregister_netdev(netdev);
	tern_en_destroy_netdev(netdev_priv(netdev));
}

/**
 * tern_en_suspend() - quiesce the Ethernet function for a device reset, keeping the netdev
 * @tdev: the device; the command queue may already fail every command (a dead device)
 *
 * Recovery and devlink reload reset the device under a netdev that stays registered, so
 * that its name, ifindex, addresses, routes, qdiscs, MTU, MAC and ring sizes survive. The
 * netdev is detached: transmit stops, and the core refuses ndo_open, MTU and MAC changes
 * and ethtool while the device is not present. The channel's queues and EQ are destroyed
 * and the carrier drops. The hardware counters read last become the base that the reset
 * device's counters are added to, so that none goes backwards. Idempotent.
 *
 * Context: process context, RTNL not held; state_lock held (tern_dev_down()).
 */
void tern_en_suspend(struct tern_dev *tdev)
{
	struct net_device *netdev = tdev->netdev;
	struct tern_en_priv *priv;

	if (!netdev)
		return;
	priv = netdev_priv(netdev);

	rtnl_lock();
	netif_device_detach(netdev);
	tern_en_close_channels(priv);
	tern_en_refresh_carrier(priv);

	/* Lock order: RTNL, then hw_stats_mutex (as ethtool's get_ethtool_stats takes them). */
	mutex_lock(&priv->hw_stats_mutex);
	if (!priv->hw_stats_frozen) {
		/* The last counts of this device's life; a dead device keeps the cached ones. */
		if (tern_dev_alive(tdev))
			tern_en_query_hw_stats(priv);
		priv->hw_stats_base = priv->hw_stats;
		priv->hw_stats_frozen = true;
	}
	mutex_unlock(&priv->hw_stats_mutex);
	rtnl_unlock();

	/* Their next runs see the device absent, the channel closed, the counters frozen. */
	cancel_work_sync(&priv->rx_mode_work);
	cancel_work_sync(&priv->reset_work);
	cancel_delayed_work_sync(&priv->stats_work);
}

/**
 * tern_en_resume() - bring a suspended Ethernet function back on the reset device
 * @tdev: the device, reset, with its command queue and async EQ working again
 *
 * Pushes the netdev's configuration (MAC, MTU, receive mode) to the port, recreates the
 * channel if the interface is up, attaches the netdev and takes the link state from the
 * device. On failure the netdev stays registered: the port or the queues are not set up,
 * and setting the interface down and up (or another recovery) retries.
 *
 * Context: process context, RTNL not held; state_lock held (tern_dev_up()).
 * Return: 0, or the negative errno of the step that failed.
 */
int tern_en_resume(struct tern_dev *tdev)
{
	struct net_device *netdev = tdev->netdev;
	struct tern_en_priv *priv;
	int err;

	if (!netdev)
		return 0;
	priv = netdev_priv(netdev);

	rtnl_lock();
	mutex_lock(&priv->hw_stats_mutex);
	priv->hw_stats_frozen = false;
	mutex_unlock(&priv->hw_stats_mutex);

	/* open_channel pushes the port configuration itself. */
	if (netif_running(netdev))
		err = tern_en_open_channels(priv);
	else
		err = tern_en_port_sync(priv);
	if (err)
		netdev_err(netdev, "cannot set the port up after the reset (%d)%s\n", err,
			   netif_running(netdev) ? "; set the interface down and up to retry" : "");
	netif_device_attach(netdev);
	tern_en_sync_link(priv);
	rtnl_unlock();

	/* A receive-mode change made while the device was away. */
	schedule_work(&priv->rx_mode_work);
	return err;
}
