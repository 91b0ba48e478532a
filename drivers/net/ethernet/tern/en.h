/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern Ethernet function: private definitions shared by its files: en_main.c (netdev setup
 * and operations, channel open/close, probe and remove), en_tx.c (transmit), en_rx.c
 * (receive), en_txrx.c (events and NAPI; its header describes the data path) and ethtool.c.
 *
 * The netdev has 1..TERN_EN_MAX_CHANNELS channels (ethtool -l/-L), each a TX queue, an RX
 * queue and an event queue on an MSI-X vector of its own (channel 0: TERN_EN_EQ_VECTOR)
 * whose handler schedules the channel's NAPI context. Channel i is netdev TX and RX queue
 * i; the device spreads received flows over the RX queues by RSS (ethtool -x/-X). Queues
 * and EQs exist on the device only while the channels are open (between ndo_open and
 * ndo_stop, or around an internal reconfiguration).
 */
#ifndef TERN_EN_H
#define TERN_EN_H

#include <linux/bits.h>
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/mutex.h>
#include <linux/net_tstamp.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>

#include "tern_core.h"

struct page_pool;

#define TERN_EN_EQ_VECTOR	1	/* MSI-X vector of the channel's EQ */
#define TERN_EN_EQ_LOG		6	/* at most one event per armed queue is outstanding */
#define TERN_EN_DEF_RING_LOG	8	/* 256 descriptors per ring by default */
#define TERN_EN_MAX_CHANNELS	(1 + TERN_ETH_EXTRA_VECTORS)	/* 8 */

/* Room for a VLAN-tagged frame of the current MTU, as the device may deliver it. */
#define TERN_EN_RX_FRAME_LEN(mtu)	((mtu) + ETH_HLEN + VLAN_HLEN)
/* Receive buffers: headroom for the stack, then the frame. */
#define TERN_EN_RX_HEADROOM	(NET_SKB_PAD + NET_IP_ALIGN)

/* A frame takes up to TERN_ETH_TX_MAX_DESCS descriptors (an offload context, the linear
 * part, the fragments): stop once the largest might not fit.
 */
#define TERN_EN_TX_STOP_THRESH	TERN_ETH_TX_MAX_DESCS

/**
 * tern_en_ring_room() - free descriptors of a ring with free-running indices
 * @size: descriptors in the ring
 * @pi: producer index (free-running u32)
 * @ci: consumer index, at most @size behind @pi (modulo 2^32)
 *
 * Return: descriptors that can be posted before the ring is full.
 */
static inline u32 tern_en_ring_room(u32 size, u32 pi, u32 ci)
{
	return size - (pi - ci);
}

/**
 * tern_en_tx_should_stop() - whether ndo_start_xmit stops the queue after a frame
 * @room: free TX descriptors left (tern_en_ring_room())
 *
 * Return: true when the next frame might not fit.
 */
static inline bool tern_en_tx_should_stop(u32 room)
{
	return room < TERN_EN_TX_STOP_THRESH;
}

/**
 * tern_en_tx_can_wake() - whether a stopped TX queue has room enough to restart
 * @size: descriptors in the ring
 * @room: free TX descriptors (tern_en_ring_room())
 *
 * A quarter of the ring must be free, so that a stopped queue is not woken for one frame,
 * and never less than the largest frame takes.
 *
 * Return: true when the queue may be woken.
 */
static inline bool tern_en_tx_can_wake(u32 size, u32 room)
{
	return room >= max_t(u32, size / 4, TERN_EN_TX_STOP_THRESH);
}

static_assert(TERN_ETH_DB_PI_MASK == TERN_ETH_ARM_CI_MASK);

/**
 * tern_en_db_value() - value of an Ethernet queue doorbell
 * @idx: free-running index: the producer index for TERN_DB_ETH_TXQ/RXQ(qid), the consumer
 *	index for TERN_DB_ETH_TXQ_ARM/RXQ_ARM(qid); both doorbells carry it modulo 2^16
 *
 * Return: the 32-bit value to write (the reserved bits 31:16 clear).
 */
static inline u32 tern_en_db_value(u32 idx)
{
	return idx & TERN_ETH_DB_PI_MASK;
}

/**
 * tern_en_rx_buf_order() - page order of a receive buffer
 * @buf_len: bytes the device may write (TERN_EN_RX_FRAME_LEN() of the MTU)
 *
 * The buffer becomes the skb's head: it holds TERN_EN_RX_HEADROOM, the frame, and
 * skb_shared_info behind it.
 *
 * Return: the smallest page order that holds it.
 */
static inline u32 tern_en_rx_buf_order(u32 buf_len)
{
	unsigned int need = SKB_DATA_ALIGN(TERN_EN_RX_HEADROOM + buf_len) +
			    SKB_DATA_ALIGN(sizeof(struct skb_shared_info));

	return get_order(need);
}

/**
 * tern_en_mtu_range() - MTU range the netdev offers for the device's limits
 * @dev_min: smallest MTU the device takes (QUERY_DEVICE min_mtu)
 * @dev_max: largest MTU the device takes (QUERY_DEVICE max_mtu)
 * @min: set to the smallest MTU offered: at least ETH_MIN_MTU
 * @max: set to the largest MTU offered: at most TERN_ETH_MAX_MTU
 *
 * Return: true; false when the device's range leaves nothing, and ETH_MIN_MTU..ETH_DATA_LEN
 * is used instead.
 */
static inline bool tern_en_mtu_range(unsigned int dev_min, unsigned int dev_max,
				     unsigned int *min, unsigned int *max)
{
	*min = max_t(unsigned int, dev_min, ETH_MIN_MTU);
	*max = min_t(unsigned int, dev_max, TERN_ETH_MAX_MTU);
	if (*max < *min) {
		*min = ETH_MIN_MTU;
		*max = ETH_DATA_LEN;
		return false;
	}
	return true;
}

/**
 * struct tern_en_tx_buf - software state of one TX descriptor
 * @skb: the frame, on its last descriptor only; NULL elsewhere and when free
 * @dma: streaming DMA mapping of the piece this descriptor gives the device
 * @len: bytes mapped; 0 for an offload context (nothing mapped)
 * @page: @dma is a fragment's page mapping (dma_unmap_page), not the linear part's
 * @segs: on the last descriptor: frames the device puts on the wire (TSO segments, or 1)
 * @wire_bytes: on the last descriptor: their bytes, the headers of every segment included
 */
struct tern_en_tx_buf {
	struct sk_buff *skb;
	dma_addr_t dma;
	u32 len;
	bool page;
	u16 segs;
	u32 wire_bytes;
};

/**
 * struct tern_en_rx_buf - software state of one RX descriptor
 * @page: page_pool page holding the receive buffer; NULL when not posted
 */
struct tern_en_rx_buf {
	struct page *page;
};

/**
 * struct tern_en_tx_stats - TX counters updated by the completion path (NAPI)
 * @syncp: sequence for 64-bit reads; the writer is the channel's NAPI poll, or the channel
 *	close once NAPI is disabled
 * @packets: frames the device reported as sent
 * @bytes: bytes of those frames (as given to the device, padding included)
 * @errors: descriptors completed with TERN_ETH_DESC_ERR
 * @wakes: times the completion path restarted a stopped queue
 */
struct tern_en_tx_stats {
	struct u64_stats_sync syncp;
	u64_stats_t packets;
	u64_stats_t bytes;
	u64_stats_t errors;
	u64_stats_t wakes;
};

/**
 * struct tern_en_xmit_stats - TX counters updated by ndo_start_xmit
 * @syncp: sequence for 64-bit reads; writers hold the queue's xmit lock, or close the
 *	channel after the queue was disabled
 * @dropped: frames dropped before reaching the ring (padding, mapping or length failure),
 *	or still unsent on the ring when the channel closed
 * @busy: frames returned with NETDEV_TX_BUSY (ring full despite flow control)
 * @stops: times the queue was stopped because the ring was (nearly) full
 * @carrier: frames dropped because the carrier was down
 */
struct tern_en_xmit_stats {
	struct u64_stats_sync syncp;
	u64_stats_t dropped;
	u64_stats_t busy;
	u64_stats_t stops;
	u64_stats_t carrier;
};

/**
 * struct tern_en_rx_stats - RX counters
 * @syncp: sequence for 64-bit reads; the writer is the channel's NAPI poll, or the channel
 *	open/close while NAPI is disabled
 * @packets: frames handed to the stack
 * @bytes: bytes of those frames (Ethernet header included, no FCS)
 * @multicast: multicast or broadcast frames among @packets
 * @errors: descriptors completed with TERN_ETH_DESC_ERR
 * @length_errors: descriptors with an impossible frame length
 * @dropped: good frames dropped because no skb could be built, or because the channel
 *	closed before they were processed
 * @alloc_fail: failures to allocate a receive buffer
 */
struct tern_en_rx_stats {
	struct u64_stats_sync syncp;
	u64_stats_t packets;
	u64_stats_t bytes;
	u64_stats_t multicast;
	u64_stats_t errors;
	u64_stats_t length_errors;
	u64_stats_t dropped;
	u64_stats_t alloc_fail;
};

/**
 * struct tern_en_eq_stats - event counters of the channel's EQ handler
 * @syncp: sequence for 64-bit reads; the EQ's interrupt handler is the only writer
 * @events: TX/RX completion events for this channel's queues
 * @unknown: events of an unexpected type or for a queue this channel does not own
 */
struct tern_en_eq_stats {
	struct u64_stats_sync syncp;
	u64_stats_t events;
	u64_stats_t unknown;
};

/**
 * struct tern_en_txq - the channel's TX queue
 * @ring: descriptors (coherent DMA), @size entries
 * @ring_dma: DMA address of @ring
 * @ring_bytes: bytes allocated for @ring
 * @bufs: software state, one per descriptor
 * @size: number of descriptors (power of two)
 * @pi: producer index (free-running); written, and rung on TERN_DB_ETH_TXQ, by
 *	ndo_start_xmit only, under the queue's xmit lock (the device's PI never goes back);
 *	read locklessly (smp_load_acquire) by the completion path to bound its walk
 * @ci: consumer index (free-running); written by the NAPI poll only, which also rings it
 *	on TERN_DB_ETH_TXQ_ARM without any lock (no other context writes that doorbell);
 *	read locklessly by ndo_start_xmit to compute free space (see the stop/wake barriers in
 *	en_tx.c)
 * @qid: queue number assigned by the device
 * @nq: the netdev queue
 * @stats: completion counters
 * @xstats: transmit-path counters
 */
struct tern_en_txq {
	struct tern_eth_txd *ring;
	dma_addr_t ring_dma;
	size_t ring_bytes;
	struct tern_en_tx_buf *bufs;
	u32 size;
	u32 pi;
	u32 ci;
	u32 qid;
	struct netdev_queue *nq;
	struct tern_en_tx_stats stats;
	struct tern_en_xmit_stats xstats;
};

/**
 * struct tern_en_rxq - the channel's RX queue
 * @ring: descriptors (coherent DMA), @size entries
 * @ring_dma: DMA address of @ring
 * @ring_bytes: bytes allocated for @ring
 * @bufs: software state, one per descriptor
 * @pool: page pool the receive buffers come from (DMA mapping, recycling)
 * @size: number of descriptors (power of two)
 * @pi: producer index (free-running): buffers posted
 * @ci: consumer index (free-running): descriptors processed
 * @buf_len: bytes the device may write into one buffer (frame of the current MTU)
 * @truesize: memory behind one buffer (page_pool page of order @order)
 * @order: page order of the buffers
 * @db_pending: buffers were posted since the last doorbell
 * @qid: queue number assigned by the device
 * @stats: counters
 *
 * Everything but @stats readers is touched only by the NAPI poll while the channel is open,
 * and under RTNL while it is opened or closed.
 */
struct tern_en_rxq {
	struct tern_eth_rxd *ring;
	dma_addr_t ring_dma;
	size_t ring_bytes;
	struct tern_en_rx_buf *bufs;
	struct page_pool *pool;
	u32 size;
	u32 pi;
	u32 ci;
	u32 buf_len;
	u32 truesize;
	u32 order;
	bool db_pending;
	u32 qid;
	struct tern_en_rx_stats stats;
};

struct tern_en_priv;

/**
 * struct tern_en_channel - one EQ with its TX and RX queue, serviced by one NAPI context
 * @napi: NAPI context; scheduled by the EQ handler
 * @priv: the Ethernet function
 * @idx: channel number: the netdev TX and RX queue index
 * @eq: the channel's event queue
 * @tx: TX queue
 * @rx: RX queue
 * @eq_stats: event counters
 * @irq_name: name of the EQ's interrupt
 *
 * A channel's counters live as long as the netdev, whether or not the channel is in use, so
 * that the netdev's totals never go backwards when channels are removed.
 */
struct tern_en_channel {
	struct napi_struct napi;
	struct tern_en_priv *priv;
	u32 idx;
	struct tern_eq eq;
	struct tern_en_txq tx;
	struct tern_en_rxq rx;
	struct tern_en_eq_stats eq_stats;
	char irq_name[32];
};

/**
 * struct tern_en_port - port configuration last accepted by the device (SET_PORT)
 * @flags: TERN_PORT_F_*
 * @mtu: MTU
 * @mac: unicast address
 */
struct tern_en_port {
	u32 flags;
	u16 mtu;
	u8 mac[ETH_ALEN];
};

/* Event moderation defaults (ethtool -c after probe), as mlx5's: see tern_core.rst. */
#define TERN_EN_DEF_RX_USECS	8
#define TERN_EN_DEF_RX_FRAMES	32
#define TERN_EN_DEF_TX_USECS	16
#define TERN_EN_DEF_TX_FRAMES	32

/**
 * struct tern_en_coal - event moderation of the channel's queues (ethtool -c/-C)
 * @rx_usecs: RX queue's moder_period_us (0: an event per armed completion)
 * @rx_frames: RX queue's moder_frames (0: no count bound; at most 1 when @rx_usecs is 0)
 * @tx_usecs: TX queue's moder_period_us
 * @tx_frames: TX queue's moder_frames
 *
 * Given to the device at queue creation and by MODIFY_ETH_RXQ/TXQ on live queues.
 */
struct tern_en_coal {
	u16 rx_usecs;
	u16 rx_frames;
	u16 tx_usecs;
	u16 tx_frames;
};

/**
 * struct tern_en_sw_stats - flat snapshot of the software counters (ethtool, get_stats64)
 * @tx_packets: &tern_en_tx_stats.packets
 * @tx_bytes: &tern_en_tx_stats.bytes
 * @tx_errors: &tern_en_tx_stats.errors
 * @tx_dropped: &tern_en_xmit_stats.dropped
 * @tx_carrier_errors: &tern_en_xmit_stats.carrier
 * @tx_busy: &tern_en_xmit_stats.busy
 * @tx_queue_stop: &tern_en_xmit_stats.stops
 * @tx_queue_wake: &tern_en_tx_stats.wakes
 * @tx_timeouts: &tern_en_priv.tx_timeouts
 * @rx_packets: &tern_en_rx_stats.packets
 * @rx_bytes: &tern_en_rx_stats.bytes
 * @rx_multicast: &tern_en_rx_stats.multicast
 * @rx_errors: &tern_en_rx_stats.errors
 * @rx_length_errors: &tern_en_rx_stats.length_errors
 * @rx_dropped: &tern_en_rx_stats.dropped
 * @rx_alloc_fail: &tern_en_rx_stats.alloc_fail
 * @eq_events: &tern_en_eq_stats.events
 * @eq_unknown_events: &tern_en_eq_stats.unknown
 *
 * ethtool -S shows these under the member names, in this order.
 */
struct tern_en_sw_stats {
	u64 tx_packets;
	u64 tx_bytes;
	u64 tx_errors;
	u64 tx_dropped;
	u64 tx_carrier_errors;
	u64 tx_busy;
	u64 tx_queue_stop;
	u64 tx_queue_wake;
	u64 tx_timeouts;
	u64 rx_packets;
	u64 rx_bytes;
	u64 rx_multicast;
	u64 rx_errors;
	u64 rx_length_errors;
	u64 rx_dropped;
	u64 rx_alloc_fail;
	u64 eq_events;
	u64 eq_unknown_events;
};

/**
 * struct tern_en_queue_stats - one channel's main counters (ethtool -S rx<i>_*, tx<i>_*)
 * @rx_packets: &tern_en_rx_stats.packets
 * @rx_bytes: &tern_en_rx_stats.bytes
 * @tx_packets: &tern_en_tx_stats.packets
 * @tx_bytes: &tern_en_tx_stats.bytes
 */
struct tern_en_queue_stats {
	u64 rx_packets;
	u64 rx_bytes;
	u64 tx_packets;
	u64 tx_bytes;
};

/**
 * struct tern_en_priv - netdev private data of the Ethernet function
 * @tdev: the PCI function
 * @netdev: the netdev
 * @ch: the channels; the first @num_channels are in use
 * @num_channels: channels in use (netdev real_num_tx/rx_queues); RTNL
 * @max_channels: channels the device and the MSI-X vectors allow; set at probe
 * @rss_supported: the device has TERN_DEV_CAP_ETH_RSS; set at probe
 * @rss_key: Toeplitz key given to the device; random at probe, ethtool -X; RTNL
 * @rss_indir: indirection table: channel numbers below @num_channels; RTNL. Spread evenly
 *	(ethtool_rxfh_indir_default()) unless set by ethtool -X (netif_is_rxfh_configured())
 * @ch_open: queues and EQs exist on the device; written under RTNL, read under @link_lock
 * @tx_ring_size: TX descriptors used at the next open; RTNL
 * @rx_ring_size: RX descriptors used at the next open; RTNL
 * @max_ring_size: largest ring the device takes
 * @coal: event moderation of the queues, kept while the netdev exists (down/up, devlink
 *	reload, device reset) as are the channels and RSS settings; RTNL
 * @coal_supported: the device has TERN_DEV_CAP_ETH_MODERATION; set at probe
 * @max_coal_usecs: QUERY_DEVICE max_eth_moder_period
 * @max_coal_frames: QUERY_DEVICE max_eth_moder_frames
 * @link_lock: serialises carrier updates (link changes, open/close, probe); protects
 *	@link_up
 * @link_up: the port's link state, from link events and the STATUS register
 * @port_lock: serialises SET_PORT and protects @port
 * @port: configuration last accepted by the device
 * @rx_mode_flags: TERN_PORT_F_* wanted by ndo_set_rx_mode; written under the netdev's
 *	address lock, read by @rx_mode_work under @port_lock
 * @rx_mode_work: pushes @rx_mode_flags to the device (ndo_set_rx_mode cannot sleep)
 * @lro: receive coalescing wanted (NETIF_F_GRO_HW); written by ndo_set_features under RTNL
 *	before the SET_PORT that applies it, read with @rx_mode_flags
 * @lro_supported: the device coalesces (TERN_DEV_CAP_ETH_LRO)
 * @ts_supported: the device stamps frames on its clock (TERN_DEV_CAP_ETH_TS, with the PHC's
 *	TERN_DEV_CAP_CLOCK); set at probe
 * @tstamp: hardware timestamping as SIOCSHWTSTAMP last set it; RTNL
 * @tx_ts: stamp the frames the stack asks for (SKBTX_HW_TSTAMP); written under RTNL, read
 *	by ndo_start_xmit
 * @rx_ts: stamp every frame received (TERN_PORT_F_RX_TS); written under RTNL before the
 *	SET_PORT that applies it, read with @rx_mode_flags
 * @reset_work: recreates the channel after a TX timeout; takes RTNL
 * @tx_timeouts: TX watchdog expiries; written by ndo_tx_timeout (netif_tx_lock held)
 * @hw_stats_mutex: serialises QUERY_ETH_STATS so that @hw_stats never goes backwards
 * @hw_stats_lock: protects @hw_stats and @hw_stats_stamp (taken from atomic context)
 * @hw_stats: last hardware counters read from the device, plus @hw_stats_base
 * @hw_stats_base: what the device had counted before its last reset (recovery and reload
 *	keep the netdev, and its counters must not go backwards); under @hw_stats_mutex
 * @hw_stats_frozen: between tern_en_suspend() and tern_en_resume(): @hw_stats is not
 *	refreshed, since the device is about to be reset or is being reset; under
 *	@hw_stats_mutex
 * @hw_stats_stamp: jiffies of the last refresh of @hw_stats
 * @stats_work: refreshes @hw_stats, periodically while @stats_periodic
 * @stats_periodic: @stats_work re-arms itself; set while the channel is open (RTNL)
 */
struct tern_en_priv {
	struct tern_dev *tdev;
	struct net_device *netdev;
	struct tern_en_channel ch[TERN_EN_MAX_CHANNELS];
	u32 num_channels;
	u32 max_channels;
	bool rss_supported;
	u8 rss_key[TERN_RSS_KEY_SIZE];
	u32 rss_indir[TERN_RSS_INDIR_SIZE];
	bool ch_open;
	u32 tx_ring_size;
	u32 rx_ring_size;
	u32 max_ring_size;
	struct tern_en_coal coal;
	bool coal_supported;
	u16 max_coal_usecs;
	u16 max_coal_frames;

	spinlock_t link_lock;		/* see above */
	bool link_up;

	struct mutex port_lock;		/* see above */
	struct tern_en_port port;
	u32 rx_mode_flags;
	struct work_struct rx_mode_work;
	bool lro;
	bool lro_supported;
	bool ts_supported;
	struct hwtstamp_config tstamp;
	bool tx_ts;
	bool rx_ts;

	struct work_struct reset_work;
	unsigned long tx_timeouts;

	struct mutex hw_stats_mutex;	/* see above */
	spinlock_t hw_stats_lock;	/* see above */
	struct tern_cmd_eth_stats_out hw_stats;
	struct tern_cmd_eth_stats_out hw_stats_base;
	bool hw_stats_frozen;
	unsigned long hw_stats_stamp;
	struct delayed_work stats_work;
	bool stats_periodic;
};

#define TERN_EN_MIN_RING_SIZE	BIT(TERN_ETH_MIN_LOG)
/* The qid of a queue the device does not have. */
#define TERN_EN_QID_NONE	U32_MAX

/**
 * tern_en_dma_dev() - the device that the rings and buffers are mapped for
 * @priv: the Ethernet function
 *
 * Return: the PCI function's struct device.
 */
static inline struct device *tern_en_dma_dev(const struct tern_en_priv *priv)
{
	return &priv->tdev->pdev->dev;
}

/* en_main.c */
int tern_en_update_hw_stats(struct tern_en_priv *priv);
void tern_en_read_hw_stats(struct tern_en_priv *priv, struct tern_cmd_eth_stats_out *out);
void tern_en_read_sw_stats(struct tern_en_priv *priv, struct tern_en_sw_stats *s);
void tern_en_read_queue_stats(struct tern_en_channel *ch, struct tern_en_queue_stats *s);
int tern_en_set_channels(struct tern_en_priv *priv, u32 count);
int tern_en_set_rss(struct tern_en_priv *priv, const u32 *indir, const u8 *key);
int tern_en_set_ring_sizes(struct tern_en_priv *priv, u32 tx_size, u32 rx_size);
int tern_en_set_coal(struct tern_en_priv *priv, const struct tern_en_coal *coal);

/* en_tx.c */
int tern_en_txq_alloc(struct tern_en_priv *priv, struct tern_en_channel *ch);
void tern_en_txq_free(struct tern_en_priv *priv, struct tern_en_channel *ch, bool hw_done);
void tern_en_tx_db(struct tern_en_priv *priv, struct tern_en_txq *tx);
netdev_tx_t tern_en_start_xmit(struct sk_buff *skb, struct net_device *netdev);
netdev_features_t tern_en_features_check(struct sk_buff *skb, struct net_device *netdev,
					 netdev_features_t features);
void tern_en_tx_clean(struct tern_en_channel *ch, int budget);

/* en_rx.c */
int tern_en_rxq_alloc(struct tern_en_priv *priv, struct tern_en_channel *ch);
void tern_en_rxq_free(struct tern_en_priv *priv, struct tern_en_channel *ch, bool hw_done);
bool tern_en_rx_refill(struct tern_en_rxq *rx, gfp_t gfp);
int tern_en_rx_poll(struct tern_en_channel *ch, int budget);

/* en_txrx.c */
void tern_en_eq_event(struct tern_eq *eq, const struct tern_eqe *eqe, void *ctx);
int tern_en_poll(struct napi_struct *napi, int budget);

#endif /* TERN_EN_H */
