// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern PTP hardware clock: the device clock (TERN_DEV_CAP_CLOCK) as a PHC.
 *
 * The device clock counts nanoseconds in 64 bits (Documentation/hw/interface.rst, "Device
 * clock"); the PHC reads it with one 64-bit read, which the device answers from a single
 * sample, and moves it with the device's own rate adjustment and step commands, so the time
 * that RDMA completion timestamps carry and the PHC's time are the same clock.
 *
 * The PHC exists while the device works: it is registered after a bring-up (probe, the end
 * of a recovery, a reload or PCI error recovery) and unregistered before the device is
 * taken down, so that no clock operation reads a device that is being reset or has gone.
 * The device keeps its clock and adjustment across resets; the PHC's index may change.
 */

#include <linux/ptp_clock_kernel.h>

#include "tern_core.h"

static struct tern_dev *tern_ptp_dev(struct ptp_clock_info *info)
{
	return container_of(info, struct tern_dev, ptp_info);
}

static int tern_ptp_gettimex64(struct ptp_clock_info *info, struct timespec64 *ts,
			       struct ptp_system_timestamp *sts)
{
	struct tern_dev *tdev = tern_ptp_dev(info);
	u64 ns;

	ptp_read_system_prets(sts);
	ns = readq(tdev->regs + TERN_REG_CLOCK_LO);
	ptp_read_system_postts(sts);
	if (ns == U64_MAX)		/* the device has gone away */
		return -EIO;
	*ts = ns_to_timespec64(ns);
	return 0;
}

/* ARG then CMD: three writes that another adjustment must not interleave with. */
static void tern_ptp_cmd(struct tern_dev *tdev, u32 cmd, u64 arg)
{
	unsigned long flags;

	spin_lock_irqsave(&tdev->ptp_lock, flags);
	writel(lower_32_bits(arg), tdev->regs + TERN_REG_CLOCK_ARG_LO);
	writel(upper_32_bits(arg), tdev->regs + TERN_REG_CLOCK_ARG_HI);
	writel(cmd, tdev->regs + TERN_REG_CLOCK_CMD);
	spin_unlock_irqrestore(&tdev->ptp_lock, flags);
}

static int tern_ptp_settime64(struct ptp_clock_info *info, const struct timespec64 *ts)
{
	tern_ptp_cmd(tern_ptp_dev(info), TERN_CLOCK_CMD_SET, timespec64_to_ns(ts));
	return 0;
}

static int tern_ptp_adjtime(struct ptp_clock_info *info, s64 delta)
{
	tern_ptp_cmd(tern_ptp_dev(info), TERN_CLOCK_CMD_ADJUST, (u64)delta);
	return 0;
}

static int tern_ptp_adjfine(struct ptp_clock_info *info, long scaled_ppm)
{
	struct tern_dev *tdev = tern_ptp_dev(info);
	long ppb = scaled_ppm_to_ppb(scaled_ppm);
	unsigned long flags;

	if (ppb > TERN_CLOCK_MAX_ADJ_PPB || ppb < -TERN_CLOCK_MAX_ADJ_PPB)
		return -ERANGE;
	spin_lock_irqsave(&tdev->ptp_lock, flags);
	writel((u32)(s32)ppb, tdev->regs + TERN_REG_CLOCK_FREQ);
	spin_unlock_irqrestore(&tdev->ptp_lock, flags);
	return 0;
}

static int tern_ptp_enable(struct ptp_clock_info *info, struct ptp_clock_request *rq, int on)
{
	return -EOPNOTSUPP;
}

static const struct ptp_clock_info tern_ptp_info = {
	.owner		= THIS_MODULE,
	.name		= "tern device clock",
	.max_adj	= TERN_CLOCK_MAX_ADJ_PPB,
	.adjfine	= tern_ptp_adjfine,
	.adjtime	= tern_ptp_adjtime,
	.gettimex64	= tern_ptp_gettimex64,
	.settime64	= tern_ptp_settime64,
	.enable		= tern_ptp_enable,
};

/**
 * tern_ptp_add() - register the device clock as a PTP hardware clock
 * @tdev: the device, brought up
 *
 * A device without TERN_DEV_CAP_CLOCK, or a kernel without PTP clock support, gets no
 * PHC; a failure is logged and the function works on without one.
 *
 * Context: state_lock held.
 */
void tern_ptp_add(struct tern_dev *tdev)
{
	struct ptp_clock *ptp;

	lockdep_assert_held(&tdev->state_lock);
	if (tdev->ptp || !(le32_to_cpu(tdev->caps.caps) & TERN_DEV_CAP_CLOCK))
		return;
	tdev->ptp_info = tern_ptp_info;
	ptp = ptp_clock_register(&tdev->ptp_info, &tdev->pdev->dev);
	if (IS_ERR_OR_NULL(ptp)) {
		if (IS_ERR(ptp))
			dev_warn(&tdev->pdev->dev, "no PTP hardware clock: %ld\n", PTR_ERR(ptp));
		return;
	}
	tdev->ptp = ptp;
	WRITE_ONCE(tdev->ptp_index, ptp_clock_index(ptp));
}

/**
 * tern_ptp_del() - unregister the PTP hardware clock, if there is one
 * @tdev: the device
 *
 * Operations under way finish before this returns; none starts after it.
 *
 * Context: state_lock held.
 */
void tern_ptp_del(struct tern_dev *tdev)
{
	lockdep_assert_held(&tdev->state_lock);
	if (!tdev->ptp)
		return;
	WRITE_ONCE(tdev->ptp_index, -1);
	ptp_clock_unregister(tdev->ptp);
	tdev->ptp = NULL;
}

/**
 * tern_ptp_index() - index of the PHC (/dev/ptpN) for ethtool's get_ts_info
 * @tdev: the device
 *
 * Return: the index, or -1 while there is no PHC.
 */
int tern_ptp_index(struct tern_dev *tdev)
{
	return READ_ONCE(tdev->ptp_index);
}
