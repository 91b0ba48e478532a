// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern DCB: PFC, ETS and the DSCP-to-priority map through dcbnl, the congestion-control
 * parameters' shadow (devlink params in devlink.c for what must match the fabric, debugfs
 * cc_params/ in debugfs.c for the algorithms' tuning), the PFC storm guard (ethtool
 * tunable), PFC statistics and PFC storm events.
 *
 * The driver keeps the whole configuration (struct tern_dcb in struct tern_dev): every
 * change builds a new struct tern_dcb_cfg (or tern_cc_params) from it, sends it whole with
 * SET_DCB (SET_CC_PARAMS) and keeps it only when the firmware accepted it. A device reset
 * (recovery, devlink reload) returns the firmware to its defaults; tern_dcb_apply() sends
 * the kept configuration again, and tern_dcb_netdev_registered() puts the DSCP entries
 * back into the new netdev's dcbnl APP table.
 *
 * dcbnl: host-managed IEEE DCBX only. ETS with strict and ETS classes, PFC on any of the 8
 * priorities, APP entries with the DSCP selector (each DSCP maps to one priority; a new
 * entry for a DSCP replaces the old one). While any DSCP entry exists the port trusts DSCP
 * (TERN_DCB_TRUST_DSCP), otherwise the VLAN PCP. dcbnl of Linux 6.1 has no extack: a
 * refused setting logs why with netdev_err() and fails with -EINVAL.
 */

#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/ratelimit.h>
#include <net/dcbnl.h>

#include "en.h"

/* ethtool's PFC_STORM_PREVENTION_AUTO means this many ms (as mlx5). */
#define TERN_DCB_STORM_AUTO_MS	100

static void tern_dcb_default_cfg(struct tern_dcb_cfg *cfg)
{
	int i;

	memset(cfg, 0, sizeof(*cfg));
	cfg->trust = TERN_DCB_TRUST_PCP;
	for (i = 0; i < TERN_NUM_TC; i++)
		cfg->tc_tsa[i] = TERN_DCB_TSA_ETS;
	cfg->tc_bw[0] = 100;
	memset(cfg->dscp_prio, TERN_DCB_DSCP_UNMAPPED, sizeof(cfg->dscp_prio));
	cfg->rx_buf_bytes = cpu_to_le32(TERN_DCB_DEF_RX_BUF);
	cfg->xoff_bytes = cpu_to_le32(TERN_DCB_DEF_XOFF);
	cfg->xon_bytes = cpu_to_le32(TERN_DCB_DEF_XON);
}

/* The driver's defaults: the firmware's, except DCQCN on every priority (as ConnectX). */
static void tern_dcb_default_cc(struct tern_cc_params *cc)
{
	memset(cc, 0, sizeof(*cc));
	cc->rp_en = 0xff;
	cc->np_en = 0xff;
	cc->cnp_dscp = TERN_CC_DEF_CNP_DSCP;
	cc->cnp_prio = TERN_CC_DEF_CNP_PRIO;
	cc->min_time_between_cnps = cpu_to_le32(TERN_CC_DEF_MIN_TIME_CNPS);
	cc->rpg_time_reset = cpu_to_le32(TERN_CC_DEF_TIME_RESET);
	cc->rpg_byte_reset = cpu_to_le32(TERN_CC_DEF_BYTE_RESET);
	cc->rpg_threshold = cpu_to_le32(TERN_CC_DEF_THRESHOLD);
	cc->rpg_max_rate = 0;
	cc->rpg_ai_rate = cpu_to_le32(TERN_CC_DEF_AI_RATE);
	cc->rpg_hai_rate = cpu_to_le32(TERN_CC_DEF_HAI_RATE);
	cc->rpg_gd = cpu_to_le32(TERN_CC_DEF_GD);
	cc->rpg_min_dec_fac = cpu_to_le32(TERN_CC_DEF_MIN_DEC_FAC);
	cc->rpg_min_rate = cpu_to_le32(TERN_CC_DEF_MIN_RATE);
	cc->rate_to_set_on_first_cnp = 0;
	cc->dce_tcp_g = cpu_to_le32(TERN_CC_DEF_TCP_G);
	cc->dce_tcp_rtt = cpu_to_le32(TERN_CC_DEF_TCP_RTT);
	cc->rate_reduce_monitor_period = cpu_to_le32(TERN_CC_DEF_MONITOR_PERIOD);
	cc->initial_alpha_value = cpu_to_le32(TERN_CC_DEF_INITIAL_ALPHA);
	cc->hpcc_en = 0;
	cc->hpcc_max_stage = TERN_CC_DEF_HPCC_MAX_STAGE;
	cc->hpcc_eta = cpu_to_le16(TERN_CC_DEF_HPCC_ETA);
	cc->hpcc_ai_rate = cpu_to_le32(TERN_CC_DEF_HPCC_AI_RATE);
	cc->hpcc_base_rtt = cpu_to_le32(TERN_CC_DEF_HPCC_BASE_RTT);
	cc->timely_en = 0;
	cc->timely_hai_thresh = TERN_CC_DEF_TIMELY_HAI_THRESH;
	cc->timely_alpha = cpu_to_le16(TERN_CC_DEF_TIMELY_ALPHA);
	cc->timely_beta = cpu_to_le16(TERN_CC_DEF_TIMELY_BETA);
	cc->timely_delta = cpu_to_le32(TERN_CC_DEF_TIMELY_DELTA);
	cc->timely_t_low = cpu_to_le32(TERN_CC_DEF_TIMELY_T_LOW);
	cc->timely_t_high = cpu_to_le32(TERN_CC_DEF_TIMELY_T_HIGH);
	cc->timely_min_rtt = cpu_to_le32(TERN_CC_DEF_TIMELY_MIN_RTT);
	cc->timely_seg = cpu_to_le32(TERN_CC_DEF_TIMELY_SEG);
	cc->timely_min_rate = cpu_to_le32(TERN_CC_DEF_TIMELY_MIN_RATE);
}

/**
 * tern_dcb_init() - set up the DCB shadow with the defaults
 * @tdev: the device, before anything may use it (probe)
 */
void tern_dcb_init(struct tern_dev *tdev)
{
	struct tern_dcb *dcb = &tdev->dcb;

	mutex_init(&dcb->lock);
	tern_dcb_default_cfg(&dcb->cfg);
	tern_dcb_default_cc(&dcb->cc);
	dcb->cc_ok = true;
	atomic64_set(&dcb->storm_detected, 0);
	atomic64_set(&dcb->storm_recovered, 0);
}

/**
 * tern_dcb_destroy() - counterpart of tern_dcb_init()
 * @tdev: the device
 */
void tern_dcb_destroy(struct tern_dev *tdev)
{
	mutex_destroy(&tdev->dcb.lock);
}

/**
 * tern_dcb_line_rate() - the port's line rate, the upper bound of the DCQCN rates
 * @tdev: the device
 *
 * Return: QUERY_DEVICE's link_speed_mbps; 0 when the device does not say.
 */
u32 tern_dcb_line_rate(struct tern_dev *tdev)
{
	return le32_to_cpu(tdev->caps.link_speed_mbps);
}

/* SET_DCB with @cfg; dcb.lock held. The shadow is only updated by the callers. */
static int tern_dcb_set_fw(struct tern_dev *tdev, const struct tern_dcb_cfg *cfg)
{
	int err;

	lockdep_assert_held(&tdev->dcb.lock);
	err = tern_cmd_exec(tdev, TERN_CMD_SET_DCB, cfg, sizeof(*cfg), NULL, 0, NULL);
	if (err)
		dev_err(&tdev->pdev->dev, "SET_DCB failed: %d\n", err);
	return err;
}

static int tern_dcb_set_cc_fw(struct tern_dev *tdev, const struct tern_cc_params *cc)
{
	int err;

	lockdep_assert_held(&tdev->dcb.lock);
	err = tern_cmd_exec(tdev, TERN_CMD_SET_CC_PARAMS, cc, sizeof(*cc), NULL, 0, NULL);
	if (err == -EOPNOTSUPP) {
		if (tdev->dcb.cc_ok)
			dev_warn(&tdev->pdev->dev,
				 "firmware does not implement SET_CC_PARAMS: DCQCN parameters are kept but not applied\n");
		tdev->dcb.cc_ok = false;
	} else if (err) {
		dev_err(&tdev->pdev->dev, "SET_CC_PARAMS failed: %d\n", err);
	} else {
		tdev->dcb.cc_ok = true;
	}
	return err;
}

/**
 * tern_dcb_apply() - send the kept DCB configuration and DCQCN parameters to the firmware
 * @tdev: the device, with its command queue working (probe, after a reset)
 *
 * Context: process context; tern_dev.state_lock held (or probe, before anything else runs).
 * Return: 0, or the first command's negative errno (both commands are tried). A device
 * without TERN_DEV_CAP_DCB gets nothing and returns 0.
 */
int tern_dcb_apply(struct tern_dev *tdev)
{
	struct tern_dcb *dcb = &tdev->dcb;
	int err, err2;

	if (!dcb->supported)
		return 0;
	mutex_lock(&dcb->lock);
	err = tern_dcb_set_fw(tdev, &dcb->cfg);
	err2 = tern_dcb_set_cc_fw(tdev, &dcb->cc);
	mutex_unlock(&dcb->lock);
	if (err2 == -EOPNOTSUPP)
		err2 = 0;
	return err ? err : err2;
}

/**
 * tern_dcb_get_cc() - copy the kept DCQCN, HPCC and TIMELY parameters
 * @tdev: the device
 * @cc: filled in
 */
void tern_dcb_get_cc(struct tern_dev *tdev, struct tern_cc_params *cc)
{
	mutex_lock(&tdev->dcb.lock);
	*cc = tdev->dcb.cc;
	mutex_unlock(&tdev->dcb.lock);
}

/**
 * tern_dcb_query_cc() - read the parameters the firmware runs (QUERY_CC_PARAMS)
 * @tdev: the device
 * @cc: filled in on success
 *
 * Return: 0 or the command's negative errno.
 */
int tern_dcb_query_cc(struct tern_dev *tdev, struct tern_cc_params *cc)
{
	return tern_cmd_exec(tdev, TERN_CMD_QUERY_CC_PARAMS, NULL, 0, cc, sizeof(*cc), NULL);
}

/**
 * tern_cc_field_get() - one value of a parameter set
 * @cc: the parameter set (little-endian fields)
 * @f: the value
 *
 * Return: the value in CPU order.
 */
u32 tern_cc_field_get(const struct tern_cc_params *cc, const struct tern_cc_field *f)
{
	const u8 *p = (const u8 *)cc + f->offset;

	if (f->size == 1)
		return *p;
	if (f->size == 2)
		return le16_to_cpu(*(const __le16 *)p);
	return le32_to_cpu(*(const __le32 *)p);
}

static void tern_cc_field_put(struct tern_cc_params *cc, const struct tern_cc_field *f, u32 v)
{
	u8 *p = (u8 *)cc + f->offset;

	if (f->size == 1)
		*p = v;
	else if (f->size == 2)
		*(__le16 *)p = cpu_to_le16(v);
	else
		*(__le32 *)p = cpu_to_le32(v);
}

/**
 * tern_cc_field_valid() - whether @v is in the range of @f
 * @tdev: the device (its line rate bounds the rates)
 * @f: the value
 * @v: the candidate
 *
 * Return: true when @v is within @f's range (a rate: at most the line rate, or any value
 * when the device does not state its line rate).
 */
bool tern_cc_field_valid(struct tern_dev *tdev, const struct tern_cc_field *f, u32 v)
{
	u32 max = f->max;

	if (f->line_rate) {
		max = tern_dcb_line_rate(tdev);
		if (!max)
			max = U32_MAX;
	}
	return v >= f->min && v <= max;
}

/**
 * tern_dcb_set_cc_field() - change one DCQCN, HPCC or TIMELY parameter
 * @tdev: the device
 * @f: the parameter
 * @v: its new value, already checked by tern_cc_field_valid()
 *
 * Sends the kept parameter set with @f changed (SET_CC_PARAMS) and keeps it only if the
 * firmware took it. The read-modify-write is under dcb.lock, so devlink and debugfs
 * writers of different parameters do not undo each other.
 *
 * Return: 0 or the command's negative errno (-EOPNOTSUPP: the firmware has no DCQCN,
 * -EINVAL: the firmware refused the value).
 */
int tern_dcb_set_cc_field(struct tern_dev *tdev, const struct tern_cc_field *f, u32 v)
{
	struct tern_cc_params cc;
	int err;

	mutex_lock(&tdev->dcb.lock);
	cc = tdev->dcb.cc;
	tern_cc_field_put(&cc, f, v);
	err = tern_dcb_set_cc_fw(tdev, &cc);
	if (!err)
		tdev->dcb.cc = cc;
	mutex_unlock(&tdev->dcb.lock);
	return err;
}

/**
 * tern_dcb_get_storm_ms() - the PFC storm guard's time
 * @tdev: the device
 *
 * Return: milliseconds, 0 when the guard is off.
 */
u32 tern_dcb_get_storm_ms(struct tern_dev *tdev)
{
	u32 ms;

	mutex_lock(&tdev->dcb.lock);
	ms = le32_to_cpu(tdev->dcb.cfg.pfc_storm_ms);
	mutex_unlock(&tdev->dcb.lock);
	return ms;
}

/**
 * tern_dcb_set_storm_ms() - set the PFC storm guard (SET_DCB pfc_storm_ms)
 * @tdev: the device
 * @ms: 0 (off) or TERN_DCB_STORM_MIN_MS..TERN_DCB_STORM_MAX_MS, or
 *	PFC_STORM_PREVENTION_AUTO for TERN_DCB_STORM_AUTO_MS
 *
 * Return: 0, -EINVAL for a time out of range, or the command's negative errno.
 */
int tern_dcb_set_storm_ms(struct tern_dev *tdev, u32 ms)
{
	struct tern_dcb_cfg cfg;
	int err;

	if (ms == PFC_STORM_PREVENTION_AUTO)
		ms = TERN_DCB_STORM_AUTO_MS;
	if (ms && (ms < TERN_DCB_STORM_MIN_MS || ms > TERN_DCB_STORM_MAX_MS))
		return -EINVAL;
	mutex_lock(&tdev->dcb.lock);
	cfg = tdev->dcb.cfg;
	cfg.pfc_storm_ms = cpu_to_le32(ms);
	err = tern_dcb_set_fw(tdev, &cfg);
	if (!err)
		tdev->dcb.cfg = cfg;
	mutex_unlock(&tdev->dcb.lock);
	return err;
}

/**
 * tern_dcb_query_pfc_stats() - read the per-priority MAC counters (QUERY_PFC_STATS)
 * @tdev: the device
 * @out: filled in (zeroed on failure)
 *
 * Return: 0 or the command's negative errno.
 */
int tern_dcb_query_pfc_stats(struct tern_dev *tdev, struct tern_cmd_pfc_stats_out *out)
{
	int err;

	err = tern_cmd_exec(tdev, TERN_CMD_QUERY_PFC_STATS, NULL, 0, out, sizeof(*out), NULL);
	if (err)
		memset(out, 0, sizeof(*out));
	return err;
}

/**
 * tern_dcb_storm_event() - a TERN_EQE_PFC_STORM event from the async EQ
 * @tdev: the device
 * @eqe: the event: subtype enum tern_pfc_storm, data[0] the priority, data[1] 1 when the
 *	storm was detected, 0 when it ended
 *
 * Counts it, logs it (rate limited) and hands it to the devlink health reporter "pfc"
 * (tern_devlink_pfc_storm()), which shows the storms in progress. From the async EQ's
 * hard interrupt handler. tdev->netdev is cleared before the netdev is unregistered, and
 * unregistering waits for an RCU grace period (synchronize_net()) that this handler, with
 * interrupts off, is inside of.
 */
void tern_dcb_storm_event(struct tern_dev *tdev, const struct tern_eqe *eqe)
{
	static DEFINE_RATELIMIT_STATE(rs, 5 * HZ, 10);
	struct net_device *netdev = READ_ONCE(tdev->netdev);
	u32 prio = le32_to_cpu(eqe->data[0]);
	bool detected = le32_to_cpu(eqe->data[1]);
	const char *what;

	if (detected)
		atomic64_inc(&tdev->dcb.storm_detected);
	else
		atomic64_inc(&tdev->dcb.storm_recovered);
	/* The device's word, bounded before it indexes anything. */
	if (prio < TERN_NUM_PRIO && (eqe->subtype == TERN_PFC_STORM_TX_PAUSE ||
				     eqe->subtype == TERN_PFC_STORM_RX_PAUSE)) {
		unsigned int bit = TERN_DCB_STORM_BIT(eqe->subtype, prio);

		if (detected) {
			set_bit(bit, &tdev->dcb.storm_active);
			set_bit(bit, &tdev->dcb.storm_new);
		} else {
			clear_bit(bit, &tdev->dcb.storm_active);
		}
		tern_devlink_pfc_storm(tdev);
	}
	switch (eqe->subtype) {
	case TERN_PFC_STORM_TX_PAUSE:
		what = detected ? "we paused the peer too long (host not receiving): dropping" :
		       "receive buffer drained: pausing the peer again";
		break;
	case TERN_PFC_STORM_RX_PAUSE:
		what = detected ? "the peer paused us too long: ignoring its pauses" :
		       "the peer stopped pausing: honouring its pauses again";
		break;
	default:
		what = "unknown kind";
		break;
	}
	if (!__ratelimit(&rs))
		return;
	if (detected) {
		if (netdev)
			netdev_warn(netdev, "PFC storm on priority %u: %s\n", prio, what);
		else
			dev_warn(&tdev->pdev->dev, "PFC storm on priority %u: %s\n", prio, what);
	} else {
		if (netdev)
			netdev_info(netdev, "PFC storm on priority %u over: %s\n", prio, what);
		else
			dev_info(&tdev->pdev->dev, "PFC storm on priority %u over: %s\n", prio,
				 what);
	}
}

#if IS_ENABLED(CONFIG_DCB)

static struct tern_dev *tern_dcb_tdev(struct net_device *netdev)
{
	struct tern_en_priv *priv = netdev_priv(netdev);

	return priv->tdev;
}

static u8 tern_dcb_getdcbx(struct net_device *netdev)
{
	return DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
}

static u8 tern_dcb_setdcbx(struct net_device *netdev, u8 mode)
{
	if (mode != (DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE)) {
		netdev_err(netdev, "DCBX mode %#x not supported: only host-managed IEEE (%#x)\n",
			   mode, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
		return 1;
	}
	return 0;
}

static int tern_dcb_ieee_getets(struct net_device *netdev, struct ieee_ets *ets)
{
	struct tern_dev *tdev = tern_dcb_tdev(netdev);
	struct tern_dcb_cfg *cfg = &tdev->dcb.cfg;
	int i;

	memset(ets, 0, sizeof(*ets));
	ets->ets_cap = TERN_NUM_TC;
	mutex_lock(&tdev->dcb.lock);
	for (i = 0; i < TERN_NUM_TC; i++) {
		ets->tc_tsa[i] = cfg->tc_tsa[i];
		ets->tc_tx_bw[i] = cfg->tc_bw[i];
		ets->tc_rx_bw[i] = cfg->tc_bw[i];
	}
	for (i = 0; i < TERN_NUM_PRIO; i++)
		ets->prio_tc[i] = cfg->prio_tc[i];
	mutex_unlock(&tdev->dcb.lock);
	return 0;
}

/**
 * tern_dcb_check_ets() - whether the device takes an ETS configuration
 * @netdev: the netdev (for the messages)
 * @ets: what dcbnl asks for
 *
 * Priorities map to TCs 0..7, each TC is strict (bandwidth 0) or ETS (at most 100 %), the
 * ETS TCs' bandwidths sum to 100 when there is any, no credit-based shaper.
 *
 * Return: 0, or -EINVAL after logging why.
 */
TERN_VISIBLE_IF_KUNIT int tern_dcb_check_ets(struct net_device *netdev,
					     const struct ieee_ets *ets)
{
	bool have_ets = false;
	u32 sum = 0;
	int i;

	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		if (ets->prio_tc[i] >= TERN_NUM_TC) {
			netdev_err(netdev, "ETS: priority %d mapped to TC %u: TCs are 0..%d\n",
				   i, ets->prio_tc[i], TERN_NUM_TC - 1);
			return -EINVAL;
		}
		switch (ets->tc_tsa[i]) {
		case IEEE_8021QAZ_TSA_ETS:
			have_ets = true;
			sum += ets->tc_tx_bw[i];
			break;
		case IEEE_8021QAZ_TSA_STRICT:
			if (ets->tc_tx_bw[i]) {
				netdev_err(netdev, "ETS: TC %d is strict priority: its bandwidth must be 0, not %u%%\n",
					   i, ets->tc_tx_bw[i]);
				return -EINVAL;
			}
			break;
		default:
			netdev_err(netdev, "ETS: TC %d: transmission selection %u not supported (strict or ets only)\n",
				   i, ets->tc_tsa[i]);
			return -EINVAL;
		}
		if (ets->tc_tx_bw[i] > 100) {
			netdev_err(netdev, "ETS: TC %d bandwidth %u%% above 100%%\n", i,
				   ets->tc_tx_bw[i]);
			return -EINVAL;
		}
	}
	if (have_ets && sum != 100) {
		netdev_err(netdev, "ETS: bandwidths of the ETS TCs sum to %u%%, not 100%%\n", sum);
		return -EINVAL;
	}
	if (ets->cbs) {
		netdev_err(netdev, "ETS: credit-based shaper not supported\n");
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_dcb_check_ets);

static int tern_dcb_ieee_setets(struct net_device *netdev, struct ieee_ets *ets)
{
	struct tern_dev *tdev = tern_dcb_tdev(netdev);
	struct tern_dcb_cfg cfg;
	int i, err;

	err = tern_dcb_check_ets(netdev, ets);
	if (err)
		return err;
	mutex_lock(&tdev->dcb.lock);
	cfg = tdev->dcb.cfg;
	for (i = 0; i < TERN_NUM_TC; i++) {
		cfg.tc_tsa[i] = ets->tc_tsa[i];
		cfg.tc_bw[i] = ets->tc_tx_bw[i];
	}
	for (i = 0; i < TERN_NUM_PRIO; i++)
		cfg.prio_tc[i] = ets->prio_tc[i];
	err = tern_dcb_set_fw(tdev, &cfg);
	if (!err)
		tdev->dcb.cfg = cfg;
	mutex_unlock(&tdev->dcb.lock);
	return err;
}

static int tern_dcb_ieee_getpfc(struct net_device *netdev, struct ieee_pfc *pfc)
{
	struct tern_dev *tdev = tern_dcb_tdev(netdev);
	struct tern_cmd_pfc_stats_out *st;
	int i;

	memset(pfc, 0, sizeof(*pfc));
	pfc->pfc_cap = TERN_NUM_PRIO;
	mutex_lock(&tdev->dcb.lock);
	pfc->pfc_en = tdev->dcb.cfg.pfc_en;
	mutex_unlock(&tdev->dcb.lock);

	/* requests: pause frames we sent; indications: pause frames we received. */
	st = kmalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	if (!tern_dcb_query_pfc_stats(tdev, st)) {
		for (i = 0; i < TERN_NUM_PRIO; i++) {
			pfc->requests[i] = le64_to_cpu(st->prio[i].tx_pause);
			pfc->indications[i] = le64_to_cpu(st->prio[i].rx_pause);
		}
	}
	kfree(st);
	return 0;
}

static int tern_dcb_ieee_setpfc(struct net_device *netdev, struct ieee_pfc *pfc)
{
	struct tern_dev *tdev = tern_dcb_tdev(netdev);
	struct tern_dcb_cfg cfg;
	int err;

	if (pfc->mbc) {
		netdev_err(netdev, "PFC: MACsec bypass capability not supported\n");
		return -EINVAL;
	}
	if (pfc->delay) {
		netdev_err(netdev, "PFC: delay allowance not supported (the receive buffer thresholds are fixed)\n");
		return -EINVAL;
	}
	mutex_lock(&tdev->dcb.lock);
	cfg = tdev->dcb.cfg;
	cfg.pfc_en = pfc->pfc_en;
	err = tern_dcb_set_fw(tdev, &cfg);
	if (!err)
		tdev->dcb.cfg = cfg;
	mutex_unlock(&tdev->dcb.lock);
	return err;
}

static bool tern_dcb_any_dscp(const struct tern_dcb_cfg *cfg)
{
	int i;

	for (i = 0; i < TERN_NUM_DSCP; i++)
		if (cfg->dscp_prio[i] != TERN_DCB_DSCP_UNMAPPED)
			return true;
	return false;
}

/**
 * tern_dcb_check_app() - whether the device takes an APP entry
 * @netdev: the netdev (for the messages)
 * @app: the entry: only the DSCP selector, DSCP 0..63, priority 0..7
 *
 * Return: 0, or -EINVAL after logging why.
 */
TERN_VISIBLE_IF_KUNIT int tern_dcb_check_app(struct net_device *netdev,
					     const struct dcb_app *app)
{
	if (app->selector != IEEE_8021QAZ_APP_SEL_DSCP) {
		netdev_err(netdev, "APP selector %u not supported: only DSCP (selector %u, dcb app dscp-prio) maps to priorities\n",
			   app->selector, IEEE_8021QAZ_APP_SEL_DSCP);
		return -EINVAL;
	}
	if (app->protocol >= TERN_NUM_DSCP) {
		netdev_err(netdev, "APP: DSCP %u out of range 0..%d\n", app->protocol,
			   TERN_NUM_DSCP - 1);
		return -EINVAL;
	}
	if (app->priority >= TERN_NUM_PRIO) {
		netdev_err(netdev, "APP: priority %u out of range 0..%d\n", app->priority,
			   TERN_NUM_PRIO - 1);
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_dcb_check_app);

/* RTNL held (dcbnl). The DSCP entry replaces an earlier one of the same DSCP. */
static int tern_dcb_ieee_setapp(struct net_device *netdev, struct dcb_app *app)
{
	struct tern_dev *tdev = tern_dcb_tdev(netdev);
	struct dcb_app old = *app;
	struct tern_dcb_cfg cfg;
	u8 prev;
	int err;

	err = tern_dcb_check_app(netdev, app);
	if (err)
		return err;

	mutex_lock(&tdev->dcb.lock);
	prev = tdev->dcb.cfg.dscp_prio[app->protocol];
	if (prev == app->priority)
		goto out_unlock;	/* already there, also in the APP table */
	err = dcb_ieee_setapp(netdev, app);
	if (err)
		goto out_unlock;
	cfg = tdev->dcb.cfg;
	cfg.dscp_prio[app->protocol] = app->priority;
	cfg.trust = TERN_DCB_TRUST_DSCP;
	err = tern_dcb_set_fw(tdev, &cfg);
	if (err) {
		dcb_ieee_delapp(netdev, app);
		goto out_unlock;
	}
	tdev->dcb.cfg = cfg;
	if (prev != TERN_DCB_DSCP_UNMAPPED) {
		old.priority = prev;
		dcb_ieee_delapp(netdev, &old);
	}
out_unlock:
	mutex_unlock(&tdev->dcb.lock);
	return err;
}

static int tern_dcb_ieee_delapp(struct net_device *netdev, struct dcb_app *app)
{
	struct tern_dev *tdev = tern_dcb_tdev(netdev);
	struct tern_dcb_cfg cfg;
	int err;

	if (app->selector != IEEE_8021QAZ_APP_SEL_DSCP || app->protocol >= TERN_NUM_DSCP)
		return dcb_ieee_delapp(netdev, app);

	mutex_lock(&tdev->dcb.lock);
	if (tdev->dcb.cfg.dscp_prio[app->protocol] != app->priority) {
		err = -ENOENT;
		goto out_unlock;
	}
	cfg = tdev->dcb.cfg;
	cfg.dscp_prio[app->protocol] = TERN_DCB_DSCP_UNMAPPED;
	cfg.trust = tern_dcb_any_dscp(&cfg) ? TERN_DCB_TRUST_DSCP : TERN_DCB_TRUST_PCP;
	err = tern_dcb_set_fw(tdev, &cfg);
	if (err)
		goto out_unlock;
	tdev->dcb.cfg = cfg;
	dcb_ieee_delapp(netdev, app);
out_unlock:
	mutex_unlock(&tdev->dcb.lock);
	return err;
}

static const struct dcbnl_rtnl_ops tern_dcbnl_ops = {
	.ieee_getets	= tern_dcb_ieee_getets,
	.ieee_setets	= tern_dcb_ieee_setets,
	.ieee_getpfc	= tern_dcb_ieee_getpfc,
	.ieee_setpfc	= tern_dcb_ieee_setpfc,
	.ieee_setapp	= tern_dcb_ieee_setapp,
	.ieee_delapp	= tern_dcb_ieee_delapp,
	.getdcbx	= tern_dcb_getdcbx,
	.setdcbx	= tern_dcb_setdcbx,
};

/**
 * tern_dcb_netdev_setup() - give a new netdev the dcbnl operations, before registering it
 * @tdev: the device
 * @netdev: the netdev (private data: struct tern_en_priv)
 */
void tern_dcb_netdev_setup(struct tern_dev *tdev, struct net_device *netdev)
{
	if (tdev->dcb.supported)
		netdev->dcbnl_ops = &tern_dcbnl_ops;
}

/**
 * tern_dcb_netdev_registered() - put the kept DSCP entries into the netdev's APP table
 * @tdev: the device
 * @netdev: the netdev, just registered (dcbnl drops a netdev's entries when it goes)
 */
void tern_dcb_netdev_registered(struct tern_dev *tdev, struct net_device *netdev)
{
	struct dcb_app app = { .selector = IEEE_8021QAZ_APP_SEL_DSCP };
	int i, err;

	if (!tdev->dcb.supported)
		return;
	mutex_lock(&tdev->dcb.lock);
	for (i = 0; i < TERN_NUM_DSCP; i++) {
		if (tdev->dcb.cfg.dscp_prio[i] == TERN_DCB_DSCP_UNMAPPED)
			continue;
		app.protocol = i;
		app.priority = tdev->dcb.cfg.dscp_prio[i];
		err = dcb_ieee_setapp(netdev, &app);
		if (err && err != -EEXIST)
			netdev_warn(netdev, "cannot restore APP entry dscp %d prio %u: %d\n", i,
				    app.priority, err);
	}
	mutex_unlock(&tdev->dcb.lock);
}

#else /* !CONFIG_DCB */

void tern_dcb_netdev_setup(struct tern_dev *tdev, struct net_device *netdev)
{
}

void tern_dcb_netdev_registered(struct tern_dev *tdev, struct net_device *netdev)
{
}

#endif /* CONFIG_DCB */
