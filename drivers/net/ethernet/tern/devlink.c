// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern devlink instance: device information, reload (driver_reinit), the per-device
 * settings an admin chooses (congestion control and RC loss recovery) and the health
 * reporters "fw" (firmware errors, command timeouts; recovery resets the device) and "pfc"
 * (PFC storms the firmware's storm guard detected; in error while one lasts).
 *
 * Congestion-control params: which priorities run DCQCN's reaction and notification points,
 * HPCC or TIMELY, and the CNPs' DSCP and PCP, registered when the device has TERN_DEV_CAP_DCB:
 * what must match the switches' configuration. Their values live in struct tern_dcb
 * (dcb.c); a set sends the whole struct tern_cc_params (SET_CC_PARAMS) and keeps the new
 * value only if the firmware took it. Out-of-range values are refused by the validate
 * callback with an extack message that states the range.
 *
 * Errors are reported from any context (the EQ's interrupt handler reports FATAL events),
 * but devlink_health_report() sleeps and may run recovery, so reports are queued and handed
 * to devlink by a work item. Reports are only taken while the reporter exists, devlink is
 * registered, and no recovery is running (recovery itself provokes timeouts and resets).
 */

#include <linux/slab.h>
#include <linux/workqueue.h>

#include <linux/tern/tern_rdma.h>

#include "tern_core.h"

/* Minimum time between two automatic recoveries, against recovery loops. */
#define TERN_FW_REPORTER_GRACE_MS	2000

static int tern_devlink_info_get(struct devlink *devlink, struct devlink_info_req *req,
				 struct netlink_ext_ack *extack)
{
	struct tern_dev *tdev = devlink_priv(devlink);
	u32 fw = le32_to_cpu(tdev->caps.fw_version);
	char buf[32];
	int err;

	err = devlink_info_driver_name_put(req, TERN_DRV_NAME);
	if (err)
		return err;
	err = devlink_info_serial_number_put(req, tdev->caps.serial);
	if (err)
		return err;
	err = devlink_info_version_fixed_put(req, DEVLINK_INFO_VERSION_GENERIC_BOARD_ID,
					     tdev->caps.board_id);
	if (err)
		return err;
	tern_fw_version_format(buf, sizeof(buf), fw);
	return devlink_info_version_running_put(req, DEVLINK_INFO_VERSION_GENERIC_FW, buf);
}

static int tern_devlink_reload_down(struct devlink *devlink, bool netns_change,
				    enum devlink_reload_action action,
				    enum devlink_reload_limit limit,
				    struct netlink_ext_ack *extack)
{
	struct tern_dev *tdev = devlink_priv(devlink);
	int err;

	if (netns_change) {
		NL_SET_ERR_MSG_MOD(extack, "moving to another network namespace is not supported");
		return -EOPNOTSUPP;
	}
	err = tern_dev_reload_down(tdev);
	if (err)
		NL_SET_ERR_MSG_MOD(extack, "the device is being removed");
	return err;
}

static int tern_devlink_reload_up(struct devlink *devlink, enum devlink_reload_action action,
				  enum devlink_reload_limit limit, u32 *actions_performed,
				  struct netlink_ext_ack *extack)
{
	struct tern_dev *tdev = devlink_priv(devlink);
	int err;

	err = tern_dev_reload_up(tdev);
	if (err) {
		NL_SET_ERR_MSG_MOD(extack, "the device did not come back; see the kernel log");
		return err;
	}
	*actions_performed = BIT(DEVLINK_RELOAD_ACTION_DRIVER_REINIT);
	return 0;
}

static const struct devlink_ops tern_devlink_ops = {
	.info_get = tern_devlink_info_get,
	.reload_actions = BIT(DEVLINK_RELOAD_ACTION_DRIVER_REINIT),
	.reload_down = tern_devlink_reload_down,
	.reload_up = tern_devlink_reload_up,
};

/* ---------------------------------------------------------------------------------------
 * Congestion control: what must match the fabric. The algorithms' tuning constants are
 * debugfs files (cc_params/, debugfs.c); Documentation/admin/tern_core.rst says why.
 */

enum tern_devlink_param_id {
	TERN_DL_PARAM_BASE = DEVLINK_PARAM_GENERIC_ID_MAX,
	TERN_DL_PARAM_RP_ENABLE,
	TERN_DL_PARAM_NP_ENABLE,
	TERN_DL_PARAM_HPCC_ENABLE,
	TERN_DL_PARAM_TIMELY_ENABLE,
	TERN_DL_PARAM_CNP_DSCP,
	TERN_DL_PARAM_CNP_PRIO,
	TERN_DL_PARAM_CC_END,
	TERN_DL_PARAM_ROCE_SR = TERN_DL_PARAM_CC_END,
	TERN_DL_PARAM_ROCE_SR_LOG_CAP,
	TERN_DL_PARAM_ROCE_ADAPTIVE_RTO,
};

#define TERN_CC_IDX(id)	((id) - TERN_DL_PARAM_BASE - 1)

static const struct tern_cc_field tern_cc_fabric[] = {
	[TERN_CC_IDX(TERN_DL_PARAM_RP_ENABLE)] = TERN_CC_U8("roce_rp_enable", rp_en, 0, 0xff),
	[TERN_CC_IDX(TERN_DL_PARAM_NP_ENABLE)] = TERN_CC_U8("roce_np_enable", np_en, 0, 0xff),
	[TERN_CC_IDX(TERN_DL_PARAM_HPCC_ENABLE)] =
		TERN_CC_U8("roce_hpcc_enable", hpcc_en, 0, 0xff),
	[TERN_CC_IDX(TERN_DL_PARAM_TIMELY_ENABLE)] =
		TERN_CC_U8("roce_timely_enable", timely_en, 0, 0xff),
	[TERN_CC_IDX(TERN_DL_PARAM_CNP_DSCP)] = TERN_CC_U8("cnp_dscp", cnp_dscp, 0, 63),
	[TERN_CC_IDX(TERN_DL_PARAM_CNP_PRIO)] = TERN_CC_U8("cnp_802p_prio", cnp_prio, 0, 7),
};

static_assert(ARRAY_SIZE(tern_cc_fabric) == TERN_CC_IDX(TERN_DL_PARAM_CC_END));

static const struct tern_cc_field *tern_cc_fabric_field(u32 id)
{
	if (id <= TERN_DL_PARAM_BASE || id >= TERN_DL_PARAM_CC_END)
		return NULL;
	return &tern_cc_fabric[TERN_CC_IDX(id)];
}

static int tern_cc_param_get(struct devlink *devlink, u32 id, struct devlink_param_gset_ctx *ctx)
{
	const struct tern_cc_field *f = tern_cc_fabric_field(id);
	struct tern_dev *tdev = devlink_priv(devlink);
	struct tern_cc_params cc;

	if (!f)
		return -EOPNOTSUPP;
	tern_dcb_get_cc(tdev, &cc);
	ctx->val.vu8 = tern_cc_field_get(&cc, f);
	return 0;
}

static int tern_cc_param_set(struct devlink *devlink, u32 id, struct devlink_param_gset_ctx *ctx)
{
	const struct tern_cc_field *f = tern_cc_fabric_field(id);

	if (!f)
		return -EOPNOTSUPP;
	return tern_dcb_set_cc_field(devlink_priv(devlink), f, ctx->val.vu8);
}

static int tern_cc_param_validate(struct devlink *devlink, u32 id, union devlink_param_value val,
				  struct netlink_ext_ack *extack)
{
	const struct tern_cc_field *f = tern_cc_fabric_field(id);
	struct tern_dev *tdev = devlink_priv(devlink);
	struct tern_cc_params cc;
	u8 others;

	if (!f)
		return -EOPNOTSUPP;
	if (!tern_cc_field_valid(tdev, f, val.vu8)) {
		if (id == TERN_DL_PARAM_CNP_DSCP)
			NL_SET_ERR_MSG_MOD(extack, "cnp_dscp must be a DSCP, 0..63");
		else
			NL_SET_ERR_MSG_MOD(extack, "cnp_802p_prio must be a priority, 0..7");
		return -ERANGE;
	}
	/* a priority runs one of DCQCN's reaction point, HPCC and TIMELY (the firmware's
	 * rule): a new bitmap must not share a priority with the other two
	 */
	tern_dcb_get_cc(tdev, &cc);
	if (id == TERN_DL_PARAM_RP_ENABLE)
		others = cc.hpcc_en | cc.timely_en;
	else if (id == TERN_DL_PARAM_HPCC_ENABLE)
		others = cc.rp_en | cc.timely_en;
	else if (id == TERN_DL_PARAM_TIMELY_ENABLE)
		others = cc.rp_en | cc.hpcc_en;
	else
		return 0;
	if (val.vu8 & others) {
		NL_SET_ERR_MSG_MOD(extack,
				   "roce_rp_enable, roce_hpcc_enable and roce_timely_enable must not share a priority");
		return -EINVAL;
	}
	return 0;
}

#define TERN_CC_PARAM(id, name) \
	DEVLINK_PARAM_DRIVER(id, name, DEVLINK_PARAM_TYPE_U8, BIT(DEVLINK_PARAM_CMODE_RUNTIME), \
			     tern_cc_param_get, tern_cc_param_set, tern_cc_param_validate)

/* The names as tern_cc_fabric[] has them. */
static const struct devlink_param tern_cc_params[] = {
	TERN_CC_PARAM(TERN_DL_PARAM_RP_ENABLE, "roce_rp_enable"),
	TERN_CC_PARAM(TERN_DL_PARAM_NP_ENABLE, "roce_np_enable"),
	TERN_CC_PARAM(TERN_DL_PARAM_HPCC_ENABLE, "roce_hpcc_enable"),
	TERN_CC_PARAM(TERN_DL_PARAM_TIMELY_ENABLE, "roce_timely_enable"),
	TERN_CC_PARAM(TERN_DL_PARAM_CNP_DSCP, "cnp_dscp"),
	TERN_CC_PARAM(TERN_DL_PARAM_CNP_PRIO, "cnp_802p_prio"),
};

static_assert(ARRAY_SIZE(tern_cc_params) == ARRAY_SIZE(tern_cc_fabric));

/* ---------------------------------------------------------------------------------------
 * RoCE transport: the port's default for the RC QPs tern_ib connects from now on
 */

static int tern_sr_param_get(struct devlink *devlink, u32 id, struct devlink_param_gset_ctx *ctx)
{
	struct tern_dev *tdev = devlink_priv(devlink);

	if (id == TERN_DL_PARAM_ROCE_SR_LOG_CAP)
		ctx->val.vu8 = READ_ONCE(tdev->roce_sr_log_cap);
	else if (id == TERN_DL_PARAM_ROCE_ADAPTIVE_RTO)
		ctx->val.vbool = READ_ONCE(tdev->roce_adaptive_rto);
	else
		ctx->val.vbool = READ_ONCE(tdev->roce_sr);
	return 0;
}

static int tern_sr_param_set(struct devlink *devlink, u32 id, struct devlink_param_gset_ctx *ctx)
{
	struct tern_dev *tdev = devlink_priv(devlink);

	if (id == TERN_DL_PARAM_ROCE_SR_LOG_CAP)
		WRITE_ONCE(tdev->roce_sr_log_cap, ctx->val.vu8);
	else if (id == TERN_DL_PARAM_ROCE_ADAPTIVE_RTO)
		WRITE_ONCE(tdev->roce_adaptive_rto, ctx->val.vbool);
	else
		WRITE_ONCE(tdev->roce_sr, ctx->val.vbool);
	return 0;
}

/* roce_sr_log_cap: 0 (the device's default) or TERN_QP_XPORT_MIN..MAX_LOG_CAP */
static int tern_sr_cap_validate(struct devlink *devlink, u32 id, union devlink_param_value val,
				struct netlink_ext_ack *extack)
{
	if (val.vu8 && (val.vu8 < TERN_QP_XPORT_MIN_LOG_CAP ||
			val.vu8 > TERN_QP_XPORT_MAX_LOG_CAP)) {
		NL_SET_ERR_MSG_MOD(extack, "roce_sr_log_cap: 0 (default) or 4..8");
		return -ERANGE;
	}
	return 0;
}

static const struct devlink_param tern_xport_params[] = {
	DEVLINK_PARAM_DRIVER(TERN_DL_PARAM_ROCE_SR, "roce_selective_repeat",
			     DEVLINK_PARAM_TYPE_BOOL, BIT(DEVLINK_PARAM_CMODE_RUNTIME),
			     tern_sr_param_get, tern_sr_param_set, NULL),
	DEVLINK_PARAM_DRIVER(TERN_DL_PARAM_ROCE_SR_LOG_CAP, "roce_sr_log_cap",
			     DEVLINK_PARAM_TYPE_U8, BIT(DEVLINK_PARAM_CMODE_RUNTIME),
			     tern_sr_param_get, tern_sr_param_set, tern_sr_cap_validate),
	/* no wire change: every RC QP connected from now on, whoever the peer */
	DEVLINK_PARAM_DRIVER(TERN_DL_PARAM_ROCE_ADAPTIVE_RTO, "roce_adaptive_rto",
			     DEVLINK_PARAM_TYPE_BOOL, BIT(DEVLINK_PARAM_CMODE_RUNTIME),
			     tern_sr_param_get, tern_sr_param_set, NULL),
};

static int tern_fw_reporter_diagnose(struct devlink_health_reporter *reporter,
				     struct devlink_fmsg *fmsg, struct netlink_ext_ack *extack)
{
	struct tern_dev *tdev = devlink_health_reporter_priv(reporter);
	struct tern_cmdq_stats st;
	u32 status;
	int err;

	status = tern_rd(tdev, TERN_REG_STATUS);
	tern_cmdq_get_stats(tdev, &st);

	err = devlink_fmsg_u32_pair_put(fmsg, "status", status);
	if (err)
		return err;
	err = devlink_fmsg_bool_pair_put(fmsg, "responding", status != ~0u);
	if (err)
		return err;
	err = devlink_fmsg_bool_pair_put(fmsg, "fatal", status != ~0u &&
					 (status & TERN_STATUS_FATAL));
	if (err)
		return err;
	err = devlink_fmsg_u32_pair_put(fmsg, "syndrome",
					(status & TERN_STATUS_SYNDROME_MASK) >>
					TERN_STATUS_SYNDROME_SHIFT);
	if (err)
		return err;
	err = devlink_fmsg_bool_pair_put(fmsg, "dead", test_bit(TERN_FLAG_DEAD, &tdev->flags));
	if (err)
		return err;
	err = devlink_fmsg_u32_pair_put(fmsg, "command_timeout_ms", st.timeout_ms);
	if (err)
		return err;
	err = devlink_fmsg_u32_pair_put(fmsg, "command_timeouts", st.timeouts);
	if (err)
		return err;
	err = devlink_fmsg_u32_pair_put(fmsg, "command_errors", st.errors);
	if (err)
		return err;
	err = devlink_fmsg_u32_pair_put(fmsg, "commands_outstanding", st.in_flight);
	if (err)
		return err;
	err = devlink_fmsg_u32_pair_put(fmsg, "commands_abandoned", st.abandoned);
	if (err)
		return err;
	err = devlink_fmsg_u32_pair_put(fmsg, "stale_completions", st.stale);
	if (err)
		return err;
	return devlink_fmsg_bool_pair_put(fmsg, "event_mode", st.event_mode);
}

static int tern_fw_reporter_recover(struct devlink_health_reporter *reporter, void *priv_ctx,
				    struct netlink_ext_ack *extack)
{
	struct tern_dev *tdev = devlink_health_reporter_priv(reporter);
	int err;

	err = tern_dev_recover(tdev);
	if (err)
		NL_SET_ERR_MSG_MOD(extack, "device recovery failed; see the kernel log");
	return err;
}

/* "devlink health test": report a simulated firmware error whose recovery resets the device
 * (and re-applies the DCB settings), as a real error would. The report goes through the
 * health work item (this runs under the devlink instance lock, which reports take); within
 * the reporter's grace period it only marks the reporter in error, and "devlink health
 * recover" then resets.
 */
static int tern_fw_reporter_test(struct devlink_health_reporter *reporter,
				 struct netlink_ext_ack *extack)
{
	struct tern_dev *tdev = devlink_health_reporter_priv(reporter);

	set_bit(TERN_FLAG_TEST_RESET, &tdev->flags);
	tern_devlink_report_fw_error(tdev, "test: simulated firmware error", 0);
	return 0;
}

static const struct devlink_health_reporter_ops tern_fw_reporter_ops = {
	.name = "fw",
	.diagnose = tern_fw_reporter_diagnose,
	.recover = tern_fw_reporter_recover,
	.test = tern_fw_reporter_test,
};

/* Priorities whose bit of @kind is set in @storms, as "3 5", or "none". */
static void tern_pfc_storm_prios(char *buf, size_t len, unsigned long storms, u8 kind)
{
	size_t n = 0;
	u32 prio;

	buf[0] = '\0';
	for (prio = 0; prio < TERN_NUM_PRIO; prio++)
		if (test_bit(TERN_DCB_STORM_BIT(kind, prio), &storms))
			n += scnprintf(buf + n, len - n, "%s%u", n ? " " : "", prio);
	if (!n)
		strscpy(buf, "none", len);
}

/* "devlink health diagnose ... reporter pfc": the storms in progress, the storm guard and
 * the counts, the firmware's included.
 */
static int tern_pfc_reporter_diagnose(struct devlink_health_reporter *reporter,
				      struct devlink_fmsg *fmsg, struct netlink_ext_ack *extack)
{
	struct tern_dev *tdev = devlink_health_reporter_priv(reporter);
	unsigned long storms = READ_ONCE(tdev->dcb.storm_active);
	struct tern_cmd_pfc_stats_out *st;
	char prios[2 * TERN_NUM_PRIO + 1];
	int err;

	tern_pfc_storm_prios(prios, sizeof(prios), storms, TERN_PFC_STORM_RX_PAUSE);
	err = devlink_fmsg_string_pair_put(fmsg, "peer_pausing_too_long", prios);
	if (err)
		return err;
	tern_pfc_storm_prios(prios, sizeof(prios), storms, TERN_PFC_STORM_TX_PAUSE);
	err = devlink_fmsg_string_pair_put(fmsg, "pausing_peer_too_long", prios);
	if (err)
		return err;
	err = devlink_fmsg_u32_pair_put(fmsg, "storm_guard_ms", tern_dcb_get_storm_ms(tdev));
	if (err)
		return err;
	err = devlink_fmsg_u64_pair_put(fmsg, "storms_detected",
					atomic64_read(&tdev->dcb.storm_detected));
	if (err)
		return err;
	err = devlink_fmsg_u64_pair_put(fmsg, "storms_over",
					atomic64_read(&tdev->dcb.storm_recovered));
	if (err)
		return err;
	/* The firmware's counts since its last reset; absent when it does not answer. The
	 * answer is 832 bytes: on the heap, as the other readers of it keep it.
	 */
	st = kmalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	if (tern_dcb_query_pfc_stats(tdev, st))
		goto out;
	err = devlink_fmsg_u64_pair_put(fmsg, "fw_rx_pause_storm_events",
					le64_to_cpu(st->rx_pause_storm_events));
	if (!err)
		err = devlink_fmsg_u64_pair_put(fmsg, "fw_tx_pause_storm_events",
						le64_to_cpu(st->tx_pause_storm_events));
out:
	kfree(st);
	return err;
}

/* No recover callback: the storm guard in the firmware acts by itself (it stops honouring,
 * or sending, the pauses of the priority) and undoes it when the storm is over; the
 * reporter is in the error state while a storm lasts and healthy again after it.
 */
static const struct devlink_health_reporter_ops tern_pfc_reporter_ops = {
	.name = "pfc",
	.diagnose = tern_pfc_reporter_diagnose,
};

static void tern_devlink_pfc_work(struct work_struct *work)
{
	struct tern_dev *tdev = container_of(work, struct tern_dev, pfc_work);
	unsigned long storms = xchg(&tdev->dcb.storm_new, 0);
	char msg[80];
	u32 bit;

	for_each_set_bit(bit, &storms, TERN_DCB_STORM_BITS) {
		bool rx = bit >= TERN_DCB_STORM_BIT(TERN_PFC_STORM_RX_PAUSE, 0);

		snprintf(msg, sizeof(msg), "PFC storm on priority %u: %s", bit % TERN_NUM_PRIO,
			 rx ? "the peer paused us too long" : "we paused the peer too long");
		devlink_health_report(tdev->pfc_reporter, msg, NULL);
	}
	if (!READ_ONCE(tdev->dcb.storm_active))
		devlink_health_reporter_state_update(tdev->pfc_reporter,
						     DEVLINK_HEALTH_REPORTER_STATE_HEALTHY);
}

/**
 * tern_devlink_pfc_storm() - a PFC storm began or ended: update the "pfc" reporter
 * @tdev: the device; struct tern_dcb @storm_new and @storm_active already updated
 *
 * Callable from any context (the async EQ's interrupt handler). Does nothing on a device
 * without the reporter or before devlink is registered.
 */
void tern_devlink_pfc_storm(struct tern_dev *tdev)
{
	unsigned long flags;

	spin_lock_irqsave(&tdev->health_lock, flags);
	if (tdev->health_enabled && tdev->pfc_reporter)
		queue_work(system_long_wq, &tdev->pfc_work);
	spin_unlock_irqrestore(&tdev->health_lock, flags);
}

static void tern_devlink_health_work(struct work_struct *work)
{
	struct tern_dev *tdev = container_of(work, struct tern_dev, health_work);
	const char *what;
	char msg[64];
	u32 detail;

	spin_lock_irq(&tdev->health_lock);
	what = tdev->health_enabled ? tdev->health_what : NULL;
	detail = tdev->health_detail;
	tdev->health_what = NULL;
	spin_unlock_irq(&tdev->health_lock);
	if (!what)
		return;

	snprintf(msg, sizeof(msg), "%s (%#x)", what, detail);
	devlink_health_report(tdev->fw_reporter, msg, NULL);
}

/**
 * tern_devlink_report_fw_error() - report a firmware error to devlink health
 * @tdev: the device
 * @what: static description ("command timeout", "fatal error")
 * @detail: opcode of the command, or fatal syndrome
 *
 * Callable from any context. Reports arriving before the previous one was handed to
 * devlink replace it (recovery looks at the device, not at the message).
 */
void tern_devlink_report_fw_error(struct tern_dev *tdev, const char *what, u32 detail)
{
	unsigned long flags;
	bool queue = false;

	spin_lock_irqsave(&tdev->health_lock, flags);
	if (tdev->health_enabled && !test_bit(TERN_FLAG_RECOVERING, &tdev->flags)) {
		tdev->health_what = what;
		tdev->health_detail = detail;
		queue = true;
	}
	spin_unlock_irqrestore(&tdev->health_lock, flags);
	if (queue)
		queue_work(system_long_wq, &tdev->health_work);
}

/**
 * tern_devlink_clear_reports() - drop a report not yet handed to devlink
 * @tdev: the device
 *
 * Recovery calls it when done: reports queued before it started describe the incident it
 * has just dealt with, and would otherwise hit the reporter's grace period and leave it in
 * the error state.
 */
void tern_devlink_clear_reports(struct tern_dev *tdev)
{
	spin_lock_irq(&tdev->health_lock);
	tdev->health_what = NULL;
	spin_unlock_irq(&tdev->health_lock);
}

/**
 * tern_devlink_alloc() - allocate the devlink instance that holds struct tern_dev
 * @dev: the PCI device's struct device
 *
 * Return: the zeroed struct tern_dev (devlink private data), or NULL.
 */
struct tern_dev *tern_devlink_alloc(struct device *dev)
{
	struct devlink *devlink;
	struct tern_dev *tdev;

	devlink = devlink_alloc(&tern_devlink_ops, sizeof(*tdev), dev);
	if (!devlink)
		return NULL;
	tdev = devlink_priv(devlink);
	spin_lock_init(&tdev->health_lock);
	INIT_WORK(&tdev->health_work, tern_devlink_health_work);
	INIT_WORK(&tdev->pfc_work, tern_devlink_pfc_work);
	return tdev;
}

/**
 * tern_devlink_free() - free the devlink instance and with it @tdev
 * @tdev: the device; must not be registered
 */
void tern_devlink_free(struct tern_dev *tdev)
{
	devlink_free(tern_to_devlink(tdev));
}

/**
 * tern_devlink_register() - create the health reporter and register the devlink instance
 * @tdev: the device, with tdev->caps filled in
 *
 * Return: 0 or a negative errno.
 */
int tern_devlink_register(struct tern_dev *tdev)
{
	struct devlink *devlink = tern_to_devlink(tdev);
	struct devlink_health_reporter *reporter;
	int err;

	reporter = devlink_health_reporter_create(devlink, &tern_fw_reporter_ops,
						  TERN_FW_REPORTER_GRACE_MS, tdev);
	if (IS_ERR(reporter))
		return PTR_ERR(reporter);
	tdev->fw_reporter = reporter;

	if (tdev->dcb.supported) {
		reporter = devlink_health_reporter_create(devlink, &tern_pfc_reporter_ops, 0,
							  tdev);
		if (IS_ERR(reporter)) {
			err = PTR_ERR(reporter);
			goto err_fw_reporter;
		}
		tdev->pfc_reporter = reporter;
		err = devlink_params_register(devlink, tern_cc_params, ARRAY_SIZE(tern_cc_params));
		if (err)
			goto err_pfc_reporter;
	}
	err = devlink_params_register(devlink, tern_xport_params, ARRAY_SIZE(tern_xport_params));
	if (err)
		goto err_cc_params;
	devlink_set_features(devlink, DEVLINK_F_RELOAD);
	devlink_register(devlink);

	spin_lock_irq(&tdev->health_lock);
	tdev->health_enabled = true;
	spin_unlock_irq(&tdev->health_lock);
	return 0;

err_cc_params:
	if (tdev->dcb.supported)
		devlink_params_unregister(devlink, tern_cc_params, ARRAY_SIZE(tern_cc_params));
err_pfc_reporter:
	if (tdev->pfc_reporter)
		devlink_health_reporter_destroy(tdev->pfc_reporter);
	tdev->pfc_reporter = NULL;
err_fw_reporter:
	devlink_health_reporter_destroy(tdev->fw_reporter);
	tdev->fw_reporter = NULL;
	return err;
}

/**
 * tern_devlink_unregister() - stop reports, unregister devlink and destroy the reporter
 * @tdev: the device
 *
 * Waits for a report (and the recovery it may run) in progress. Must not be called with
 * tdev->state_lock held.
 */
void tern_devlink_unregister(struct tern_dev *tdev)
{
	spin_lock_irq(&tdev->health_lock);
	tdev->health_enabled = false;
	tdev->health_what = NULL;
	spin_unlock_irq(&tdev->health_lock);
	cancel_work_sync(&tdev->health_work);
	cancel_work_sync(&tdev->pfc_work);

	devlink_unregister(tern_to_devlink(tdev));
	devlink_params_unregister(tern_to_devlink(tdev), tern_xport_params,
				  ARRAY_SIZE(tern_xport_params));
	if (tdev->dcb.supported)
		devlink_params_unregister(tern_to_devlink(tdev), tern_cc_params,
					  ARRAY_SIZE(tern_cc_params));
	if (tdev->pfc_reporter)
		devlink_health_reporter_destroy(tdev->pfc_reporter);
	tdev->pfc_reporter = NULL;
	devlink_health_reporter_destroy(tdev->fw_reporter);
	tdev->fw_reporter = NULL;
}
