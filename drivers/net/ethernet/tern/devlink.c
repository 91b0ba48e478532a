// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern devlink instance: device information and the "fw" health reporter.
 *
 * Errors are reported from any context (the EQ's interrupt handler reports FATAL events),
 * but devlink_health_report() sleeps and may run recovery, so reports are queued and handed
 * to devlink by a work item. Reports are only taken while the reporter exists, devlink is
 * registered, and no recovery is running (recovery itself provokes timeouts and resets).
 */

#include <linux/workqueue.h>

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

static const struct devlink_ops tern_devlink_ops = {
	.info_get = tern_devlink_info_get,
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

static const struct devlink_health_reporter_ops tern_fw_reporter_ops = {
	.name = "fw",
	.diagnose = tern_fw_reporter_diagnose,
	.recover = tern_fw_reporter_recover,
};

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

	reporter = devlink_health_reporter_create(devlink, &tern_fw_reporter_ops,
						  TERN_FW_REPORTER_GRACE_MS, tdev);
	if (IS_ERR(reporter))
		return PTR_ERR(reporter);
	tdev->fw_reporter = reporter;

	devlink_register(devlink);

	spin_lock_irq(&tdev->health_lock);
	tdev->health_enabled = true;
	spin_unlock_irq(&tdev->health_lock);
	return 0;
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

	devlink_unregister(tern_to_devlink(tdev));
	devlink_health_reporter_destroy(tdev->fw_reporter);
	tdev->fw_reporter = NULL;
}
