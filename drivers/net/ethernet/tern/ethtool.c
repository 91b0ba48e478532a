// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern ethtool operations: driver and link information, ring sizes and statistics.
 *
 * Statistics (ethtool -S): the driver's software counters of the channel under their plain
 * names, then every counter of QUERY_ETH_STATS under its name in struct
 * tern_cmd_eth_stats_out prefixed with "hw_".
 */
#include <linux/ethtool.h>
#include <linux/log2.h>
#include <linux/netdevice.h>
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
};

#define TERN_NUM_SW_STATS	ARRAY_SIZE(tern_sw_stats)
#define TERN_NUM_HW_STATS	ARRAY_SIZE(tern_hw_stats)

static void tern_get_drvinfo(struct net_device *netdev, struct ethtool_drvinfo *info)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	struct tern_dev *tdev = priv->tdev;
	u32 fw = le32_to_cpu(tdev->caps.fw_version);

	strscpy(info->driver, TERN_DRV_NAME, sizeof(info->driver));
	tern_fw_version_format(info->fw_version, sizeof(info->fw_version), fw);
	strscpy(info->bus_info, pci_name(tdev->pdev), sizeof(info->bus_info));
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

static void tern_get_channels(struct net_device *netdev, struct ethtool_channels *ch)
{
	ch->max_combined = 1;
	ch->combined_count = 1;
}

static int tern_get_sset_count(struct net_device *netdev, int sset)
{
	switch (sset) {
	case ETH_SS_STATS:
		return TERN_NUM_SW_STATS + TERN_NUM_HW_STATS;
	default:
		return -EOPNOTSUPP;
	}
}

static void tern_get_strings(struct net_device *netdev, u32 sset, u8 *data)
{
	unsigned int i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < TERN_NUM_SW_STATS; i++, data += ETH_GSTRING_LEN)
		memcpy(data, tern_sw_stats[i].name, ETH_GSTRING_LEN);
	for (i = 0; i < TERN_NUM_HW_STATS; i++, data += ETH_GSTRING_LEN)
		memcpy(data, tern_hw_stats[i].name, ETH_GSTRING_LEN);
}

/* May sleep: the hardware counters are read from the device now. */
static void tern_get_ethtool_stats(struct net_device *netdev, struct ethtool_stats *stats,
				   u64 *data)
{
	struct tern_en_priv *priv = netdev_priv(netdev);
	struct tern_cmd_eth_stats_out hw;
	struct tern_en_sw_stats sw;
	unsigned int i;

	tern_en_read_sw_stats(priv, &sw);
	for (i = 0; i < TERN_NUM_SW_STATS; i++)
		*data++ = *(u64 *)((u8 *)&sw + tern_sw_stats[i].offset);

	/* On failure the last values read are reported. */
	tern_en_update_hw_stats(priv);
	tern_en_read_hw_stats(priv, &hw);
	for (i = 0; i < TERN_NUM_HW_STATS; i++)
		*data++ = le64_to_cpu(*(__le64 *)((u8 *)&hw + tern_hw_stats[i].offset));
}

/* The netdev's ethtool operations; en_main.c installs them. */
const struct ethtool_ops tern_ethtool_ops = {
	.get_drvinfo		= tern_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_link_ksettings	= tern_get_link_ksettings,
	.get_ringparam		= tern_get_ringparam,
	.set_ringparam		= tern_set_ringparam,
	.get_channels		= tern_get_channels,
	.get_strings		= tern_get_strings,
	.get_sset_count		= tern_get_sset_count,
	.get_ethtool_stats	= tern_get_ethtool_stats,
	.get_ts_info		= ethtool_op_get_ts_info,
};
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_ethtool_ops);
