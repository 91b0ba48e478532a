// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern ethtool operations: driver and link information, ring sizes and statistics.
 *
 * Statistics (ethtool -S): the driver's software counters of all channels together under
 * their plain names, then every counter of QUERY_ETH_STATS under its name in struct
 * tern_cmd_eth_stats_out prefixed with "hw_", then (devices with TERN_DEV_CAP_DCB) the PFC
 * counters of QUERY_PFC_STATS for each priority and in total, and the driver's count of
 * PFC storm events, then each channel's rx<i>_packets, rx<i>_bytes, tx<i>_packets and
 * tx<i>_bytes.
 *
 * Channels (ethtool -l/-L): combined TX/RX queue pairs, 1..max_channels. RSS (ethtool -x/-X):
 * the device's TERN_RSS_INDIR_SIZE-entry indirection table of channels and its
 * TERN_RSS_KEY_SIZE-byte Toeplitz key; the hash function is Toeplitz only.
 *
 * Tunables: ETHTOOL_PFC_PREVENTION_TOUT, the PFC storm guard (dcb.c).
 *
 * Coalescing (ethtool -c/-C): rx/tx-usecs and rx/tx-frames are the queues' event moderation
 * bounds (moder_period_us, moder_frames), within the device's limits; a frame count above 1
 * needs a period, since nothing else would bound the wait.
 */
#include <linux/ethtool.h>
#include <linux/log2.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/stddef.h>

#include "en.h"

struct tern_stat_desc {
	char name[ETH_GSTRING_LEN];
	size_t offset;
};

#define TERN_SW_STAT(field) \
	{ #field, offsetof(struct tern_en_sw_stats, field) }
#define TERN_HW_STAT(field) \
	{ "hw_" #field, offsetof(struct tern_cmd_eth_stats_out, field) }

static const struct tern_stat_desc tern_sw_stats[] = {
	TERN_SW_STAT(tx_packets),
	TERN_SW_STAT(tx_bytes),
	TERN_SW_STAT(tx_errors),
	TERN_SW_STAT(tx_dropped),
	TERN_SW_STAT(tx_carrier_errors),
	TERN_SW_STAT(tx_busy),
	TERN_SW_STAT(tx_queue_stop),
	TERN_SW_STAT(tx_queue_wake),
	TERN_SW_STAT(tx_timeouts),
	TERN_SW_STAT(rx_packets),
	TERN_SW_STAT(rx_bytes),
	TERN_SW_STAT(rx_multicast),
	TERN_SW_STAT(rx_errors),
	TERN_SW_STAT(rx_length_errors),
	TERN_SW_STAT(rx_dropped),
	TERN_SW_STAT(rx_alloc_fail),
	TERN_SW_STAT(eq_events),
	TERN_SW_STAT(eq_unknown_events),
};

static const struct tern_stat_desc tern_hw_stats[] = {
	TERN_HW_STAT(tx_frames),
	TERN_HW_STAT(tx_bytes),
	TERN_HW_STAT(rx_frames),
	TERN_HW_STAT(rx_bytes),
	TERN_HW_STAT(rx_multicast),
	TERN_HW_STAT(rx_broadcast),
	TERN_HW_STAT(rx_filtered),
	TERN_HW_STAT(rx_oversize),
	TERN_HW_STAT(rx_runt),
	TERN_HW_STAT(rx_no_queue),
	TERN_HW_STAT(rx_dma_errors),
	TERN_HW_STAT(tx_bad_len),
	TERN_HW_STAT(tx_dma_errors),
	TERN_HW_STAT(eq_overflows),
	TERN_HW_STAT(rx_csum_bad),
	TERN_HW_STAT(tx_tso_segments),
	TERN_HW_STAT(rx_lro_frames),
	TERN_HW_STAT(rx_lro_segments),
	TERN_HW_STAT(self_dma_dropped),
	TERN_HW_STAT(db_ignored),
	TERN_HW_STAT(tx_timestamps),
	TERN_HW_STAT(rx_timestamps),
};

/* Per priority p: "<dir>_prio<p>_<name>", from struct tern_pfc_prio_stats. */
struct tern_pfc_stat_desc {
	const char *dir;
	const char *name;
	size_t offset;
};

#define TERN_PFC_STAT(dir, name, field) \
	{ dir, name, offsetof(struct tern_pfc_prio_stats, field) }

static const struct tern_pfc_stat_desc tern_pfc_prio_stats[] = {
	TERN_PFC_STAT("rx", "packets", rx_frames),
	TERN_PFC_STAT("rx", "bytes", rx_bytes),
	TERN_PFC_STAT("rx", "pause", rx_pause),
	TERN_PFC_STAT("rx", "pause_duration", rx_pause_duration_us),
	TERN_PFC_STAT("rx", "pause_transition", rx_pause_transition),
	TERN_PFC_STAT("rx", "discards", rx_discards),
	TERN_PFC_STAT("tx", "packets", tx_frames),
	TERN_PFC_STAT("tx", "bytes", tx_bytes),
	TERN_PFC_STAT("tx", "pause", tx_pause),
	TERN_PFC_STAT("tx", "pause_duration", tx_pause_duration_us),
};

#define TERN_PFC_PORT_STAT(field) \
	{ #field, offsetof(struct tern_cmd_pfc_stats_out, field) }

static const struct tern_stat_desc tern_pfc_port_stats[] = {
	TERN_PFC_PORT_STAT(rx_pfc_frames),
	TERN_PFC_PORT_STAT(tx_pfc_frames),
	TERN_PFC_PORT_STAT(tx_pause_storm_events),
	TERN_PFC_PORT_STAT(rx_pause_storm_events),
};

/* The driver's count of TERN_EQE_PFC_STORM events. */
static const char tern_storm_stats[][ETH_GSTRING_LEN] = {
	"pfc_storm_detected",
	"pfc_storm_recovered",
};

#define TERN_NUM_SW_STATS	ARRAY_SIZE(tern_sw_stats)
#define TERN_NUM_HW_STATS	ARRAY_SIZE(tern_hw_stats)
#define TERN_NUM_PFC_STATS	(ARRAY_SIZE(tern_pfc_prio_stats) * TERN_NUM_PRIO + \
				 ARRAY_SIZE(tern_pfc_port_stats) + ARRAY_SIZE(tern_storm_stats))

#define TERN_NUM_QUEUE_STATS	(sizeof(struct tern_en_queue_stats) / sizeof(u64))

static unsigned int tern_num_queues(struct net_device *netdev)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	return priv->num_channels;
}

static unsigned int tern_num_pfc_stats(struct net_device *netdev)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	return priv->tdev->dcb.supported ? TERN_NUM_PFC_STATS : 0;
}

static void tern_get_drvinfo(struct net_device *netdev, struct ethtool_drvinfo *info)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	struct tern_dev *tdev = priv->tdev;
	u32 fw = le32_to_cpu(tdev->caps.fw_version);

	strscpy(info->driver, TERN_DRV_NAME, sizeof(info->driver));
	tern_fw_version_format(info->fw_version, sizeof(info->fw_version), fw);
	strscpy(info->bus_info, pci_name(tdev->pdev), sizeof(info->bus_info));
}

/* Software timestamps (the stack's), the device clock's PHC and, on a device that stamps
 * frames on that clock, hardware timestamps: TX on or off, RX of every frame or none.
 */
static int tern_get_ts_info(struct net_device *netdev, struct ethtool_ts_info *info)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	int err;

	err = ethtool_op_get_ts_info(netdev, info);
	if (err)
		return err;
	info->phc_index = tern_ptp_index(priv->tdev);
	if (priv->ts_supported && info->phc_index >= 0) {
		info->so_timestamping |= SOF_TIMESTAMPING_TX_HARDWARE |
					 SOF_TIMESTAMPING_RX_HARDWARE |
					 SOF_TIMESTAMPING_RAW_HARDWARE;
		info->tx_types = BIT(HWTSTAMP_TX_OFF) | BIT(HWTSTAMP_TX_ON);
		info->rx_filters = BIT(HWTSTAMP_FILTER_NONE) | BIT(HWTSTAMP_FILTER_ALL);
	}
	return 0;
}

static int tern_get_link_ksettings(struct net_device *netdev,
				   struct ethtool_link_ksettings *ks)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_zero_link_mode(ks, advertising);
	ethtool_link_ksettings_zero_link_mode(ks, lp_advertising);
	/* A fixed-rate port: no autonegotiation, no media the driver can name. */
	ks->base.autoneg = AUTONEG_DISABLE;
	ks->base.port = PORT_OTHER;
	if (netif_carrier_ok(netdev)) {
		ks->base.speed = le32_to_cpu(priv->tdev->caps.link_speed_mbps);
		ks->base.duplex = DUPLEX_FULL;
	} else {
		ks->base.speed = SPEED_UNKNOWN;
		ks->base.duplex = DUPLEX_UNKNOWN;
	}
	return 0;
}

static void tern_get_ringparam(struct net_device *netdev, struct ethtool_ringparam *ring,
			       struct kernel_ethtool_ringparam *kring,
			       struct netlink_ext_ack *extack)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	ring->rx_max_pending = priv->max_ring_size;
	ring->tx_max_pending = priv->max_ring_size;
	ring->rx_pending = priv->rx_ring_size;
	ring->tx_pending = priv->tx_ring_size;
}

/* Sizes are rounded up to a power of two; RTNL held. */
static int tern_set_ringparam(struct net_device *netdev, struct ethtool_ringparam *ring,
			      struct kernel_ethtool_ringparam *kring,
			      struct netlink_ext_ack *extack)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	u32 tx, rx;

	if (ring->rx_mini_pending || ring->rx_jumbo_pending) {
		NL_SET_ERR_MSG_MOD(extack, "mini and jumbo rings are not supported");
		return -EINVAL;
	}
	if (ring->rx_pending < TERN_EN_MIN_RING_SIZE ||
	    ring->tx_pending < TERN_EN_MIN_RING_SIZE) {
		NL_SET_ERR_MSG_MOD(extack, "rings need at least 64 descriptors");
		return -EINVAL;
	}
	if (ring->rx_pending > priv->max_ring_size || ring->tx_pending > priv->max_ring_size) {
		NL_SET_ERR_MSG_MOD(extack, "ring size above the device's maximum");
		return -EINVAL;
	}
	tx = roundup_pow_of_two(ring->tx_pending);
	rx = roundup_pow_of_two(ring->rx_pending);
	return tern_en_set_ring_sizes(priv, tx, rx);
}

static int tern_get_coalesce(struct net_device *netdev, struct ethtool_coalesce *ec,
			     struct kernel_ethtool_coalesce *kec,
			     struct netlink_ext_ack *extack)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	if (!priv->coal_supported)
		return -EOPNOTSUPP;
	ec->rx_coalesce_usecs = priv->coal.rx_usecs;
	ec->rx_max_coalesced_frames = priv->coal.rx_frames;
	ec->tx_coalesce_usecs = priv->coal.tx_usecs;
	ec->tx_max_coalesced_frames = priv->coal.tx_frames;
	return 0;
}

/* One direction's bounds: within the device's limits, a count above 1 only with a period. */
static int tern_coal_check(const struct tern_en_priv *priv, u32 usecs, u32 frames,
			   struct netlink_ext_ack *extack)
{
	if (usecs > priv->max_coal_usecs) {
		NL_SET_ERR_MSG_MOD(extack, "usecs above the device's maximum");
		return -EINVAL;
	}
	if (frames > priv->max_coal_frames) {
		NL_SET_ERR_MSG_MOD(extack, "frames above the device's maximum");
		return -EINVAL;
	}
	if (!usecs && frames > 1) {
		NL_SET_ERR_MSG_MOD(extack, "frames above 1 need usecs to bound the wait");
		return -EINVAL;
	}
	return 0;
}

/* RTNL held. */
static int tern_set_coalesce(struct net_device *netdev, struct ethtool_coalesce *ec,
			     struct kernel_ethtool_coalesce *kec,
			     struct netlink_ext_ack *extack)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	struct tern_en_coal coal;
	int err;

	if (!priv->coal_supported)
		return -EOPNOTSUPP;
	err = tern_coal_check(priv, ec->rx_coalesce_usecs, ec->rx_max_coalesced_frames, extack);
	if (err)
		return err;
	err = tern_coal_check(priv, ec->tx_coalesce_usecs, ec->tx_max_coalesced_frames, extack);
	if (err)
		return err;
	coal.rx_usecs = ec->rx_coalesce_usecs;
	coal.rx_frames = ec->rx_max_coalesced_frames;
	coal.tx_usecs = ec->tx_coalesce_usecs;
	coal.tx_frames = ec->tx_max_coalesced_frames;
	return tern_en_set_coal(priv, &coal);
}

static void tern_get_channels(struct net_device *netdev, struct ethtool_channels *ch)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	ch->max_combined = priv->max_channels;
	ch->combined_count = priv->num_channels;
}

/* RTNL held; the core has checked the counts against the maxima and a configured table. */
static int tern_set_channels(struct net_device *netdev, struct ethtool_channels *ch)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	if (ch->rx_count || ch->tx_count || ch->other_count) {
		netdev_err(netdev, "only combined channels (TX/RX queue pairs) are supported\n");
		return -EINVAL;
	}
	if (!ch->combined_count || ch->combined_count > priv->max_channels) {
		netdev_err(netdev, "combined channels: 1..%u\n", priv->max_channels);
		return -EINVAL;
	}
	return tern_en_set_channels(priv, ch->combined_count);
}

static u32 tern_get_rxfh_indir_size(struct net_device *netdev)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	return priv->rss_supported ? TERN_RSS_INDIR_SIZE : 0;
}

static u32 tern_get_rxfh_key_size(struct net_device *netdev)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	return priv->rss_supported ? TERN_RSS_KEY_SIZE : 0;
}

static int tern_get_rxfh(struct net_device *netdev, u32 *indir, u8 *key, u8 *hfunc)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	if (!priv->rss_supported)
		return -EOPNOTSUPP;
	if (hfunc)
		*hfunc = ETH_RSS_HASH_TOP;
	if (indir)
		memcpy(indir, priv->rss_indir, sizeof(priv->rss_indir));
	if (key)
		memcpy(key, priv->rss_key, sizeof(priv->rss_key));
	return 0;
}

/* RTNL held; the core has checked each entry against the RX channel count. */
static int tern_set_rxfh(struct net_device *netdev, const u32 *indir, const u8 *key,
			 const u8 hfunc)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	unsigned int i;

	if (!priv->rss_supported)
		return -EOPNOTSUPP;
	if (hfunc != ETH_RSS_HASH_NO_CHANGE && hfunc != ETH_RSS_HASH_TOP) {
		netdev_err(netdev, "the only RSS hash function is Toeplitz\n");
		return -EOPNOTSUPP;
	}
	for (i = 0; indir && i < TERN_RSS_INDIR_SIZE; i++) {
		if (indir[i] >= priv->num_channels)
			return -EINVAL;
	}
	return tern_en_set_rss(priv, indir, key);
}

/* The flow types the device hashes, and over which fields (all of them, always). */
static u64 tern_rxfh_fields(u32 flow_type)
{
	switch (flow_type) {
	case TCP_V4_FLOW:
	case UDP_V4_FLOW:
	case TCP_V6_FLOW:
	case UDP_V6_FLOW:
		return RXH_IP_SRC | RXH_IP_DST | RXH_L4_B_0_1 | RXH_L4_B_2_3;
	case IPV4_FLOW:
	case IPV6_FLOW:
	case AH_ESP_V4_FLOW:
	case AH_ESP_V6_FLOW:
	case SCTP_V4_FLOW:
	case SCTP_V6_FLOW:
		return RXH_IP_SRC | RXH_IP_DST;
	default:
		return 0;
	}
}

static int tern_get_rxnfc(struct net_device *netdev, struct ethtool_rxnfc *nfc, u32 *rules)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	switch (nfc->cmd) {
	case ETHTOOL_GRXRINGS:
		nfc->data = priv->num_channels;
		return 0;
	case ETHTOOL_GRXFH:
		nfc->data = priv->rss_supported ? tern_rxfh_fields(nfc->flow_type) : 0;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int tern_get_sset_count(struct net_device *netdev, int sset)
{
	switch (sset) {
	case ETH_SS_STATS:
		return TERN_NUM_SW_STATS + TERN_NUM_HW_STATS + tern_num_pfc_stats(netdev) +
		       TERN_NUM_QUEUE_STATS * tern_num_queues(netdev);
	default:
		return -EOPNOTSUPP;
	}
}

static void tern_get_strings(struct net_device *netdev, u32 sset, u8 *data)
{
	unsigned int i, p;

	if (sset != ETH_SS_STATS)
		return;
	/* the per-channel counters go last: their number changes with ethtool -L */
	for (i = 0; i < tern_num_queues(netdev); i++) {
		u8 *q = data + (TERN_NUM_SW_STATS + TERN_NUM_HW_STATS + tern_num_pfc_stats(netdev) +
				TERN_NUM_QUEUE_STATS * i) * ETH_GSTRING_LEN;

		snprintf(q, ETH_GSTRING_LEN, "rx%u_packets", i);
		snprintf(q + ETH_GSTRING_LEN, ETH_GSTRING_LEN, "rx%u_bytes", i);
		snprintf(q + 2 * ETH_GSTRING_LEN, ETH_GSTRING_LEN, "tx%u_packets", i);
		snprintf(q + 3 * ETH_GSTRING_LEN, ETH_GSTRING_LEN, "tx%u_bytes", i);
	}
	for (i = 0; i < TERN_NUM_SW_STATS; i++, data += ETH_GSTRING_LEN)
		memcpy(data, tern_sw_stats[i].name, ETH_GSTRING_LEN);
	for (i = 0; i < TERN_NUM_HW_STATS; i++, data += ETH_GSTRING_LEN)
		memcpy(data, tern_hw_stats[i].name, ETH_GSTRING_LEN);
	if (!tern_num_pfc_stats(netdev))
		return;
	for (p = 0; p < TERN_NUM_PRIO; p++) {
		for (i = 0; i < ARRAY_SIZE(tern_pfc_prio_stats); i++, data += ETH_GSTRING_LEN)
			snprintf(data, ETH_GSTRING_LEN, "%s_prio%u_%s", tern_pfc_prio_stats[i].dir,
				 p, tern_pfc_prio_stats[i].name);
	}
	for (i = 0; i < ARRAY_SIZE(tern_pfc_port_stats); i++, data += ETH_GSTRING_LEN)
		memcpy(data, tern_pfc_port_stats[i].name, ETH_GSTRING_LEN);
	for (i = 0; i < ARRAY_SIZE(tern_storm_stats); i++, data += ETH_GSTRING_LEN)
		memcpy(data, tern_storm_stats[i], ETH_GSTRING_LEN);
}

static u64 tern_pfc_stat(const u8 *base, size_t offset)
{
	return base ? le64_to_cpu(*(const __le64 *)(base + offset)) : 0;
}

/* PFC counters, read from the device now (zeros when it fails); may sleep. */
static void tern_get_pfc_stats(struct tern_dev *tdev, u64 *data)
{
	struct tern_cmd_pfc_stats_out *st;
	const u8 *v;
	unsigned int i, p;

	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (st)
		tern_dcb_query_pfc_stats(tdev, st);
	for (p = 0; p < TERN_NUM_PRIO; p++) {
		v = st ? (const u8 *)&st->prio[p] : NULL;
		for (i = 0; i < ARRAY_SIZE(tern_pfc_prio_stats); i++)
			*data++ = tern_pfc_stat(v, tern_pfc_prio_stats[i].offset);
	}
	v = (const u8 *)st;
	for (i = 0; i < ARRAY_SIZE(tern_pfc_port_stats); i++)
		*data++ = tern_pfc_stat(v, tern_pfc_port_stats[i].offset);
	*data++ = atomic64_read(&tdev->dcb.storm_detected);
	*data++ = atomic64_read(&tdev->dcb.storm_recovered);
	kfree(st);
}

static int tern_get_tunable(struct net_device *netdev, const struct ethtool_tunable *tuna,
			    void *data)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	switch (tuna->id) {
	case ETHTOOL_PFC_PREVENTION_TOUT:
		if (!priv->tdev->dcb.supported)
			return -EOPNOTSUPP;
		*(u16 *)data = tern_dcb_get_storm_ms(priv->tdev);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/* RTNL held. */
static int tern_set_tunable(struct net_device *netdev, const struct ethtool_tunable *tuna,
			    const void *data)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	u16 ms;
	int err;

	switch (tuna->id) {
	case ETHTOOL_PFC_PREVENTION_TOUT:
		if (!priv->tdev->dcb.supported)
			return -EOPNOTSUPP;
		ms = *(const u16 *)data;
		err = tern_dcb_set_storm_ms(priv->tdev, ms);
		if (err == -EINVAL)
			netdev_err(netdev, "pfc-prevention-tout %u ms: 0 (off) or %u..%u ms\n", ms,
				   TERN_DCB_STORM_MIN_MS, TERN_DCB_STORM_MAX_MS);
		return err;
	default:
		return -EOPNOTSUPP;
	}
}

/* May sleep: the hardware counters are read from the device now. */
static void tern_get_ethtool_stats(struct net_device *netdev, struct ethtool_stats *stats,
				   u64 *data)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	struct tern_cmd_eth_stats_out hw;
	struct tern_en_sw_stats sw;
	unsigned int i;
	u64 *queues;

	queues = data + TERN_NUM_SW_STATS + TERN_NUM_HW_STATS + tern_num_pfc_stats(netdev);
	for (i = 0; i < tern_num_queues(netdev); i++) {
		struct tern_en_queue_stats q;

		tern_en_read_queue_stats(&priv->ch[i], &q);
		*queues++ = q.rx_packets;
		*queues++ = q.rx_bytes;
		*queues++ = q.tx_packets;
		*queues++ = q.tx_bytes;
	}
	tern_en_read_sw_stats(priv, &sw);
	for (i = 0; i < TERN_NUM_SW_STATS; i++)
		*data++ = *(u64 *)((u8 *)&sw + tern_sw_stats[i].offset);

	/* On failure the last values read are reported. */
	tern_en_update_hw_stats(priv);
	tern_en_read_hw_stats(priv, &hw);
	for (i = 0; i < TERN_NUM_HW_STATS; i++)
		*data++ = le64_to_cpu(*(__le64 *)((u8 *)&hw + tern_hw_stats[i].offset));

	if (tern_num_pfc_stats(netdev))
		tern_get_pfc_stats(priv->tdev, data);
}

/* The netdev's ethtool operations; en_main.c installs them. */
const struct ethtool_ops tern_ethtool_ops = {
	.supported_coalesce_params = ETHTOOL_COALESCE_USECS | ETHTOOL_COALESCE_MAX_FRAMES,
	.get_drvinfo		= tern_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_link_ksettings	= tern_get_link_ksettings,
	.get_ringparam		= tern_get_ringparam,
	.set_ringparam		= tern_set_ringparam,
	.get_coalesce		= tern_get_coalesce,
	.set_coalesce		= tern_set_coalesce,
	.get_channels		= tern_get_channels,
	.set_channels		= tern_set_channels,
	.get_rxfh_indir_size	= tern_get_rxfh_indir_size,
	.get_rxfh_key_size	= tern_get_rxfh_key_size,
	.get_rxfh		= tern_get_rxfh,
	.set_rxfh		= tern_set_rxfh,
	.get_rxnfc		= tern_get_rxnfc,
	.get_strings		= tern_get_strings,
	.get_sset_count		= tern_get_sset_count,
	.get_ethtool_stats	= tern_get_ethtool_stats,
	.get_ts_info		= tern_get_ts_info,
	.get_tunable		= tern_get_tunable,
	.set_tunable		= tern_set_tunable,
};
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_ethtool_ops);
