// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern PCI core driver: probe, bring-up order, asynchronous events, recovery and removal.
 *
 * Bring-up: PCI and BARs, reset handshake, MSI-X, command queue (polled), QUERY_DEVICE,
 * asynchronous EQ 0 on vector 0 (command completions, link changes, fatal errors) and the
 * command queue in event mode, devlink, debugfs, the Ethernet function, then (with
 * TERN_DEV_CAP_RDMA) the auxiliary device "tern_core.rdma.<n>" (aux.c) and (with
 * TERN_DEV_CAP_CLOCK) the PTP hardware clock (ptp.c). Removal runs
 * the same steps backwards; a dead device (FATAL, or reading all-ones) makes every command
 * fail at once, so a removal never waits for command timeouts.
 *
 * Recovery (devlink health "fw" recover, automatic after a report): when the device is
 * alive and a NOP goes through, an isolated command timeout needs nothing more. Otherwise
 * DMA is stopped and commands fail at once, the RDMA auxiliary device is deleted, the
 * Ethernet function is suspended (its netdev stays registered, detached, without queues:
 * en_main.c) and the asynchronous EQ torn down, the device is reset, and the command
 * queue, the EQ, the DCB settings (dcb.c), the Ethernet function and the auxiliary device
 * are brought up again. devlink reload (driver_reinit) does the same, gracefully.
 *
 * PCI errors (AER, pci_error_handlers): error_detected takes everything down as a forced
 * recovery does, RDMA users first told (IB_EVENT_DEVICE_FATAL), and asks for a reset;
 * slot_reset enables the function again and restores its config space; resume brings the
 * device up as a recovery does, the netdev kept. While that runs, devlink recovery and
 * reload are refused (-EBUSY); after a permanent failure they stay refused until removal.
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/pci.h>

#include "tern_core.h"

#define TERN_ASYNC_EQ_VECTOR	0
#define TERN_ASYNC_EQ_LOG	7	/* command completions (32) and async events */
#define TERN_MIN_VECTORS	2	/* async EQ + at least one for the Ethernet function */
/* Beyond those, one completion-EQ vector per CPU for the RDMA driver (aux.c), then up to
 * TERN_ETH_EXTRA_VECTORS for more Ethernet channels (en_main.c); the RDMA driver's come
 * first when the device has too few for both.
 */

static const struct pci_device_id tern_pci_ids[] = {
	{ PCI_DEVICE(TERN_PCI_VENDOR_ID, TERN_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, tern_pci_ids);

/**
 * tern_dev_mark_dead() - note that the device stopped working and fail commands fast
 * @tdev: the device
 * @syndrome: enum tern_fatal_syndrome, or ~0 when the device does not respond
 *
 * Commands being waited for fail with -EIO, new ones are refused until a reset, and the
 * error goes to devlink health. Does not sleep: callable from the EQ's interrupt handler.
 */
void tern_dev_mark_dead(struct tern_dev *tdev, u32 syndrome)
{
	if (test_and_set_bit(TERN_FLAG_DEAD, &tdev->flags))
		return;
	if (syndrome == ~0u)
		dev_err(&tdev->pdev->dev, "device not responding (status %#x); commands fail until a reset\n",
			tern_rd(tdev, TERN_REG_STATUS));
	else
		dev_err(&tdev->pdev->dev,
			"device fatal error, syndrome %#x; commands fail until a reset\n",
			syndrome);
	tern_cmdq_abort(tdev);
	tern_devlink_report_fw_error(tdev, "fatal error", syndrome);
	tern_aux_device_fatal(tdev, syndrome);
}

/**
 * tern_dev_alive() - check that the device still responds and has not raised FATAL
 * @tdev: the device
 *
 * Reads STATUS (one MMIO read) unless the device is already known dead, and marks it dead
 * when it reads all-ones, shows FATAL or not READY, or the PCI channel is offline.
 *
 * Return: true while the device is usable.
 */
bool tern_dev_alive(struct tern_dev *tdev)
{
	u32 status;

	if (test_bit(TERN_FLAG_DEAD, &tdev->flags))
		return false;
	if (pci_channel_offline(tdev->pdev)) {
		tern_dev_mark_dead(tdev, ~0u);
		return false;
	}
	/* All-ones: gone from the bus. READY clear: the device reset itself or does not decode
	 * its BARs any more (it is only clear during a reset, and commands do not run then).
	 */
	status = tern_rd(tdev, TERN_REG_STATUS);
	if (status == ~0u || !(status & TERN_STATUS_READY)) {
		tern_dev_mark_dead(tdev, ~0u);
		return false;
	}
	if (status & TERN_STATUS_FATAL) {
		tern_dev_mark_dead(tdev, (status & TERN_STATUS_SYNDROME_MASK) >>
				   TERN_STATUS_SYNDROME_SHIFT);
		return false;
	}
	return true;
}

/* Reset handshake: CTRL.RESET, then wait (sleeping) for READY with RESET cleared. */
static int tern_reset(struct tern_dev *tdev)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(tdev->reset_timeout_ms);
	struct device *dev = &tdev->pdev->dev;
	u32 ctrl, status;

	tern_wr(tdev, TERN_REG_CTRL, TERN_CTRL_RESET);
	for (;;) {
		usleep_range(1000, 2000);
		ctrl = tern_rd(tdev, TERN_REG_CTRL);
		status = tern_rd(tdev, TERN_REG_STATUS);
		if (ctrl == ~0u || status == ~0u) {
			dev_err(dev, "device not responding during reset\n");
			return -ENODEV;
		}
		if (!(ctrl & TERN_CTRL_RESET) && (status & TERN_STATUS_READY))
			break;
		if (time_after(jiffies, deadline)) {
			dev_err(dev, "reset not done after %u ms (ctrl %#x, status %#x)\n",
				tdev->reset_timeout_ms, ctrl, status);
			return -ETIMEDOUT;
		}
	}
	if (status & TERN_STATUS_FATAL) {
		dev_err(dev, "device still in fatal state after reset (status %#x)\n", status);
		return -EIO;
	}
	return 0;
}

static int tern_query_device(struct tern_dev *tdev, struct tern_cmd_query_device_out *caps)
{
	int err;

	err = tern_cmd_exec(tdev, TERN_CMD_QUERY_DEVICE, NULL, 0, caps, sizeof(*caps), NULL);
	if (err) {
		dev_err(&tdev->pdev->dev, "QUERY_DEVICE failed: %d\n", err);
		return err;
	}
	/* Strings are NUL-terminated by contract; do not trust it further than that. */
	caps->serial[sizeof(caps->serial) - 1] = '\0';
	caps->board_id[sizeof(caps->board_id) - 1] = '\0';
	return 0;
}

static void tern_link_work(struct work_struct *work)
{
	struct tern_dev *tdev = container_of(work, struct tern_dev, link_work);

	mutex_lock(&tdev->state_lock);
	if (tdev->en_ready)
		tern_en_link_change(tdev, READ_ONCE(tdev->link_up));
	mutex_unlock(&tdev->state_lock);
}

/* Events of the asynchronous EQ; from its hard interrupt handler (what sleeps goes to work). */
static void tern_async_event(struct tern_eq *eq, const struct tern_eqe *eqe, void *ctx)
{
	struct tern_dev *tdev = ctx;

	switch (eqe->type) {
	case TERN_EQE_CMD_COMPLETION:
		tern_cmdq_handle_completions(tdev);
		break;
	case TERN_EQE_LINK_CHANGE:
		WRITE_ONCE(tdev->link_up, !!le32_to_cpu(eqe->data[0]));
		schedule_work(&tdev->link_work);
		break;
	case TERN_EQE_FATAL:
		tern_dev_mark_dead(tdev, le32_to_cpu(eqe->data[0]));
		break;
	case TERN_EQE_PFC_STORM:
		tern_dcb_storm_event(tdev, eqe);
		break;
	case 0x10 ... TERN_EQE_PFC_STORM - 1:
	case TERN_EQE_PFC_STORM + 1 ... 0x2f:
		/* RDMA and congestion events: the auxiliary driver's, if one is bound. */
		tern_aux_async_event(tdev, eqe);
		break;
	default:
		dev_warn_ratelimited(&tdev->pdev->dev,
				     "unexpected event type %#x on the async EQ\n", eqe->type);
		break;
	}
}

static int tern_async_eq_start(struct tern_dev *tdev)
{
	char name[sizeof(tdev->async_eq.name)];
	u8 log = TERN_ASYNC_EQ_LOG;
	int err;

	if (tdev->caps.max_eq_log)
		log = clamp_t(u8, tdev->caps.max_eq_log, TERN_EQ_MIN_LOG, log);
	snprintf(name, sizeof(name), "tern-async@%s", pci_name(tdev->pdev));
	err = tern_eq_create(tdev, &tdev->async_eq, TERN_ASYNC_EQ_VECTOR, log,
			     TERN_EQ_F_CMD | TERN_EQ_F_ASYNC, tern_async_event, tdev, name);
	if (err)
		return err;
	tdev->eq_ready = true;
	tern_cmdq_set_event_mode(tdev, true);
	return 0;
}

static void tern_async_eq_stop(struct tern_dev *tdev)
{
	if (!tdev->eq_ready)
		return;
	/* DESTROY_EQ's own completion cannot be signalled by the EQ it destroys. */
	tern_cmdq_set_event_mode(tdev, false);
	tern_eq_destroy(tdev, &tdev->async_eq);
	tdev->eq_ready = false;
}

/* A dead device must not DMA into memory that teardown is about to free. */
static void tern_quiesce_if_dead(struct tern_dev *tdev)
{
	if (!tern_dev_alive(tdev))
		pci_clear_master(tdev->pdev);
}

/* Tear the Ethernet function down; state_lock held. */
static void tern_en_stop(struct tern_dev *tdev)
{
	lockdep_assert_held(&tdev->state_lock);
	if (!tdev->en_ready)
		return;
	tdev->en_ready = false;
	tern_en_remove(tdev);
}

/* A NOP through the command queue: is the command path still working? */
static int tern_cmd_nop(struct tern_dev *tdev)
{
	struct tern_cmd_nop_in in = {};

	return tern_cmd_exec(tdev, TERN_CMD_NOP, &in, sizeof(in), NULL, 0, NULL);
}

/* Take down everything above the command queue and stop it; state_lock held. With @force
 * (the device misbehaves) DMA is stopped and commands fail at once first, as for a dead
 * device, rather than wait for a timeout per object while the RDMA driver and the Ethernet
 * function tear down: the reset that follows discards every object anyway, and memory is
 * freed, not leaked, since the device cannot reach it any more. Idempotent.
 */
static void tern_dev_down(struct tern_dev *tdev, bool force)
{
	lockdep_assert_held(&tdev->state_lock);
	tern_ptp_del(tdev);
	if (force) {
		pci_clear_master(tdev->pdev);
		set_bit(TERN_FLAG_DEAD, &tdev->flags);
		tern_cmdq_abort(tdev);
	}
	tern_aux_del(tdev);
	/* The netdev stays registered, detached; removal unregisters it (tern_en_stop()). */
	if (tdev->en_ready)
		tern_en_suspend(tdev);
	tern_async_eq_stop(tdev);
	tern_cmdq_stop(tdev);
}

/* Reset the device and bring the command queue, the async EQ, the DCB settings, the
 * Ethernet function and the RDMA auxiliary device back; state_lock held, tern_dev_down()
 * done.
 */
static int tern_dev_up(struct tern_dev *tdev)
{
	struct tern_cmd_query_device_out caps;
	struct pci_dev *pdev = tdev->pdev;
	int err;

	lockdep_assert_held(&tdev->state_lock);
	err = tern_reset(tdev);
	if (err)
		return err;
	pci_set_master(pdev);
	clear_bit(TERN_FLAG_DEAD, &tdev->flags);

	err = tern_cmdq_restart(tdev);
	if (err)
		return err;
	err = tern_query_device(tdev, &caps);
	if (err)
		return err;
	if (caps.fw_version != tdev->caps.fw_version)
		dev_warn(&pdev->dev, "firmware version changed across reset (%#x -> %#x)\n",
			 le32_to_cpu(tdev->caps.fw_version), le32_to_cpu(caps.fw_version));
	err = tern_async_eq_start(tdev);
	if (err)
		return err;
	/* The reset ended every PFC storm the firmware's guard was handling. */
	WRITE_ONCE(tdev->dcb.storm_active, 0);
	tern_devlink_pfc_storm(tdev);
	/* The reset brought the firmware's defaults back; a failure is logged, not fatal. */
	tern_dcb_apply(tdev);
	if (tdev->en_ready) {
		err = tern_en_resume(tdev);
	} else {
		/* The first bring-up of the Ethernet function failed: try again. */
		err = tern_en_probe(tdev);
		tdev->en_ready = !err;
	}
	if (err) {
		dev_err(&pdev->dev, "Ethernet function failed to come back: %d\n", err);
		return err;
	}
	/* A fatal error while reports were not taken must not look like a success. */
	if (!tern_dev_alive(tdev))
		return -EIO;
	/* Without RDMA the function still works: tern_aux_add() logs its own failure. */
	tern_aux_add(tdev);
	tern_ptp_add(tdev);
	return 0;
}

/* The start of a recovery or reload, state_lock held: a device being removed (-ENODEV) or
 * behind a PCI error that AER has not resolved yet (-EBUSY) is left alone; otherwise it is
 * marked RECOVERING until tern_dev_up_done().
 */
static int tern_dev_begin_reset(struct tern_dev *tdev)
{
	if (!tdev->started)
		return -ENODEV;
	if (test_bit(TERN_FLAG_PCI_ERROR, &tdev->flags))
		return -EBUSY;
	set_bit(TERN_FLAG_RECOVERING, &tdev->flags);
	return 0;
}

/* The end of a recovery or reload, successful or not; state_lock held. */
static void tern_dev_up_done(struct tern_dev *tdev)
{
	atomic_inc(&tdev->recoveries);
	tern_devlink_clear_reports(tdev);
	clear_bit(TERN_FLAG_RECOVERING, &tdev->flags);
}

/**
 * tern_dev_recover() - bring the device back after a firmware error or command timeouts
 * @tdev: the device
 *
 * Called by the devlink health reporter. If the device is alive, the command queue has
 * most of its slots and a NOP completes, there is nothing to do (unless the reporter's
 * test asked for a reset: TERN_FLAG_TEST_RESET). Otherwise: remove the RDMA
 * auxiliary device and the Ethernet function, destroy the asynchronous EQ, stop the
 * command queue, reset the device and bring everything up again, the DCB settings and
 * DCQCN parameters included. The netdev is kept (tern_en_suspend(), tern_en_resume()):
 * its name, addresses, routes, qdiscs, MTU and MAC survive, as the DCB settings do.
 *
 * Return: 0 when the device is working again, a negative errno otherwise (what could be
 * brought down stays down; another recovery, or removal, can follow).
 */
int tern_dev_recover(struct tern_dev *tdev)
{
	struct pci_dev *pdev = tdev->pdev;
	int err;

	mutex_lock(&tdev->state_lock);
	err = tern_dev_begin_reset(tdev);
	if (err)
		goto out_unlock;

	/* "devlink health test" asks for a reset whatever the device's state. */
	if (!test_and_clear_bit(TERN_FLAG_TEST_RESET, &tdev->flags) &&
	    tern_dev_alive(tdev) && tdev->eq_ready && tdev->en_ready &&
	    tern_cmdq_healthy(tdev) && !tern_cmd_nop(tdev)) {
		dev_info(&pdev->dev, "command path healthy: no reset needed\n");
		err = 0;
		goto out_done;
	}

	dev_warn(&pdev->dev, "recovering: resetting the device\n");
	tern_dev_down(tdev, true);
	err = tern_dev_up(tdev);
	if (err)
		dev_err(&pdev->dev, "recovery failed: %d\n", err);
	else
		dev_info(&pdev->dev, "recovered\n");
out_done:
	tern_dev_up_done(tdev);
out_unlock:
	mutex_unlock(&tdev->state_lock);
	return err;
}

/**
 * tern_dev_reload_down() - first half of devlink reload (driver_reinit)
 * @tdev: the device
 *
 * Removes the RDMA auxiliary device and the Ethernet function and stops the async EQ and
 * the command queue, gracefully when the device works. Health reports are not taken until
 * tern_dev_reload_up() has run.
 *
 * Context: devlink instance lock held; takes state_lock.
 * Return: 0, or -ENODEV when the device is being removed.
 */
int tern_dev_reload_down(struct tern_dev *tdev)
{
	int err;

	mutex_lock(&tdev->state_lock);
	err = tern_dev_begin_reset(tdev);
	if (err)
		goto out_unlock;
	tern_dev_down(tdev, !tern_dev_alive(tdev));
out_unlock:
	mutex_unlock(&tdev->state_lock);
	return err;
}

/**
 * tern_dev_reload_up() - second half of devlink reload: reset and bring everything back
 * @tdev: the device
 *
 * The kept DCB settings and DCQCN parameters are applied again. Whatever ran in between
 * (a recovery) is taken down again first.
 *
 * Context: devlink instance lock held; takes state_lock.
 * Return: 0 or a negative errno.
 */
int tern_dev_reload_up(struct tern_dev *tdev)
{
	struct pci_dev *pdev = tdev->pdev;
	int err;

	mutex_lock(&tdev->state_lock);
	err = tern_dev_begin_reset(tdev);
	if (err)
		goto out_unlock;
	tern_dev_down(tdev, !tern_dev_alive(tdev));
	err = tern_dev_up(tdev);
	if (err)
		dev_err(&pdev->dev, "reload failed: %d\n", err);
	else
		dev_info(&pdev->dev, "reloaded\n");
	tern_dev_up_done(tdev);
out_unlock:
	mutex_unlock(&tdev->state_lock);
	return err;
}

static int tern_map_bars(struct tern_dev *tdev)
{
	struct pci_dev *pdev = tdev->pdev;

	if (!(pci_resource_flags(pdev, TERN_BAR_REGS) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, TERN_BAR_REGS) < TERN_BAR_REGS_SIZE ||
	    !(pci_resource_flags(pdev, TERN_BAR_DB) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, TERN_BAR_DB) < TERN_BAR_DB_SIZE) {
		dev_err(&pdev->dev, "unexpected BAR layout\n");
		return -ENODEV;
	}

	tdev->regs = pci_iomap(pdev, TERN_BAR_REGS, TERN_BAR_REGS_SIZE);
	if (!tdev->regs)
		return -ENOMEM;
	/* Only the kernel's doorbell page; user pages are mapped from db_bar_start. */
	tdev->db = pci_iomap_range(pdev, TERN_BAR_DB, 0, TERN_DB_PAGE_SIZE);
	if (!tdev->db) {
		pci_iounmap(pdev, tdev->regs);
		tdev->regs = NULL;
		return -ENOMEM;
	}
	tdev->db_bar_start = pci_resource_start(pdev, TERN_BAR_DB);
	return 0;
}

static void tern_unmap_bars(struct tern_dev *tdev)
{
	pci_iounmap(tdev->pdev, tdev->db);
	pci_iounmap(tdev->pdev, tdev->regs);
	tdev->db = NULL;
	tdev->regs = NULL;
}

/* A timeout the device states (ms): the register's value, or @dflt when it is 0 (an
 * interface 1.0 device) or outside TERN_TIMEOUT_MIN_MS..TERN_TIMEOUT_MAX_MS.
 */
static u32 tern_timeout_reg(struct tern_dev *tdev, u32 reg, u32 dflt)
{
	u32 v = tern_rd(tdev, reg);

	if (v < TERN_TIMEOUT_MIN_MS || v > TERN_TIMEOUT_MAX_MS) {
		if (v)
			dev_warn(&tdev->pdev->dev,
				 "device states a timeout of %u ms (register %#x): using %u ms\n",
				 v, reg, dflt);
		return dflt;
	}
	return v;
}

static int tern_check_identity(struct tern_dev *tdev)
{
	struct device *dev = &tdev->pdev->dev;
	u32 magic, version;

	magic = tern_rd(tdev, TERN_REG_MAGIC);
	if (magic == ~0u) {
		dev_err(dev, "device not responding (registers read all-ones)\n");
		return -ENODEV;
	}
	if (magic != TERN_MAGIC) {
		dev_err(dev, "bad magic %#x (expected %#x): not a tern device\n", magic,
			TERN_MAGIC);
		return -ENODEV;
	}
	version = tern_rd(tdev, TERN_REG_VERSION);
	if ((version >> 16) != TERN_IF_VERSION_MAJOR) {
		dev_err(dev, "interface version %u.%u not supported (driver speaks %u.x)\n",
			version >> 16, version & 0xffff, TERN_IF_VERSION_MAJOR);
		return -ENODEV;
	}
	tdev->cmdq.timeout_ms = tern_timeout_reg(tdev, TERN_REG_CMD_TIMEOUT,
						 TERN_CMD_TIMEOUT_DEFAULT_MS);
	tdev->reset_timeout_ms = tern_timeout_reg(tdev, TERN_REG_RESET_TIMEOUT,
						  TERN_RESET_TIMEOUT_DEFAULT_MS);
	return 0;
}

static int tern_alloc_vectors(struct tern_dev *tdev)
{
	struct pci_dev *pdev = tdev->pdev;
	int nvec;

	nvec = pci_msix_vec_count(pdev);
	if (nvec < TERN_MIN_VECTORS) {
		dev_err(&pdev->dev, "device has %d MSI-X vectors, %d needed\n", nvec,
			TERN_MIN_VECTORS);
		return nvec < 0 ? nvec : -ENODEV;
	}
	nvec = min3(nvec, TERN_MAX_MSIX,
		    (int)num_online_cpus() + TERN_FIRST_COMP_VECTOR + TERN_ETH_EXTRA_VECTORS);
	nvec = max(nvec, TERN_MIN_VECTORS);
	nvec = pci_alloc_irq_vectors(pdev, TERN_MIN_VECTORS, nvec, PCI_IRQ_MSIX);
	if (nvec < 0) {
		dev_err(&pdev->dev, "cannot allocate MSI-X vectors: %d\n", nvec);
		return nvec;
	}
	tdev->num_vectors = nvec;
	tdev->num_eth_extra_vectors = clamp_t(int, nvec - TERN_FIRST_COMP_VECTOR -
					      (int)num_online_cpus(), 0, TERN_ETH_EXTRA_VECTORS);
	tdev->num_comp_vectors = nvec - TERN_FIRST_COMP_VECTOR - tdev->num_eth_extra_vectors;
	return 0;
}

/* What probe has brought up, in order. tern_teardown() undoes a stage and every one before
 * it: probe's error path and removal are the same code.
 */
enum tern_stage {
	TERN_STAGE_ALLOC,	/* tern_dev allocated (with devlink), locks and work set up */
	TERN_STAGE_PCI,		/* device enabled, bus master, DMA mask */
	TERN_STAGE_BARS,	/* BARs requested and mapped */
	TERN_STAGE_VECTORS,	/* identity checked, device reset, MSI-X vectors allocated */
	TERN_STAGE_CMDQ,	/* command queue up, capabilities queried */
	TERN_STAGE_EQ,		/* async EQ up, DCB settings applied */
	TERN_STAGE_DEVLINK,	/* devlink registered, debugfs */
	TERN_STAGE_RUNNING,	/* Ethernet function and RDMA auxiliary device */
};

static void tern_teardown(struct tern_dev *tdev, enum tern_stage stage)
{
	struct pci_dev *pdev = tdev->pdev;

	switch (stage) {
	case TERN_STAGE_RUNNING:
		mutex_lock(&tdev->state_lock);
		tdev->started = false;		/* no recovery from now on */
		tern_quiesce_if_dead(tdev);
		tern_ptp_del(tdev);
		tern_aux_del(tdev);
		tern_en_stop(tdev);
		mutex_unlock(&tdev->state_lock);
		fallthrough;
	case TERN_STAGE_DEVLINK:
		tern_debugfs_cleanup(tdev);
		tern_devlink_unregister(tdev);
		fallthrough;
	case TERN_STAGE_EQ:
		tern_quiesce_if_dead(tdev);
		tern_async_eq_stop(tdev);
		cancel_work_sync(&tdev->link_work);
		fallthrough;
	case TERN_STAGE_CMDQ:
		/* Stop all DMA before the rings and mailboxes go: reset a live device once. */
		tern_cmdq_stop(tdev);
		if (tern_dev_alive(tdev))
			tern_reset(tdev);
		tern_cmdq_cleanup(tdev);
		fallthrough;
	case TERN_STAGE_VECTORS:
		pci_free_irq_vectors(pdev);
		fallthrough;
	case TERN_STAGE_BARS:
		tern_unmap_bars(tdev);
		pci_release_selected_regions(pdev, BIT(TERN_BAR_REGS) | BIT(TERN_BAR_DB));
		fallthrough;
	case TERN_STAGE_PCI:
		/* error recovery may have disabled it already */
		if (!test_and_set_bit(TERN_FLAG_PCI_DISABLED, &tdev->flags))
			pci_disable_device(pdev);
		fallthrough;
	case TERN_STAGE_ALLOC:
		pci_set_drvdata(pdev, NULL);
		tern_dcb_destroy(tdev);
		mutex_destroy(&tdev->state_lock);
		tern_devlink_free(tdev);
	}
}

/* Stages PCI and BARS: the function enabled, its registers and doorbells mapped. */
static int tern_probe_pci(struct tern_dev *tdev, enum tern_stage *done)
{
	struct pci_dev *pdev = tdev->pdev;
	struct device *dev = &pdev->dev;
	int err;

	err = pci_enable_device_mem(pdev);
	if (err) {
		dev_err(dev, "cannot enable device: %d\n", err);
		return err;
	}
	pci_set_master(pdev);
	*done = TERN_STAGE_PCI;

	err = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (err)
		err = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(32));
	if (err) {
		dev_err(dev, "no usable DMA mask\n");
		return err;
	}
	err = pci_request_selected_regions(pdev, BIT(TERN_BAR_REGS) | BIT(TERN_BAR_DB),
					   TERN_DRV_NAME);
	if (err) {
		dev_err(dev, "cannot request BARs: %d\n", err);
		return err;
	}
	err = tern_map_bars(tdev);
	if (err) {
		pci_release_selected_regions(pdev, BIT(TERN_BAR_REGS) | BIT(TERN_BAR_DB));
		return err;
	}
	*done = TERN_STAGE_BARS;
	return 0;
}

/* Stages VECTORS, CMDQ and EQ: the device reset and talking to the driver. */
static int tern_probe_hw(struct tern_dev *tdev, enum tern_stage *done)
{
	struct device *dev = &tdev->pdev->dev;
	int err;

	err = tern_check_identity(tdev);
	if (err)
		return err;
	err = tern_reset(tdev);
	if (err)
		return err;
	err = tern_alloc_vectors(tdev);
	if (err)
		return err;
	*done = TERN_STAGE_VECTORS;

	err = tern_cmdq_init(tdev);
	if (err) {
		dev_err(dev, "command queue init failed: %d\n", err);
		return err;
	}
	*done = TERN_STAGE_CMDQ;
	err = tern_query_device(tdev, &tdev->caps);
	if (err)
		return err;
	tdev->dcb.supported = le32_to_cpu(tdev->caps.caps) & TERN_DEV_CAP_DCB;
	if (!tdev->dcb.supported)
		dev_info(dev, "firmware without DCB (PFC, ETS, DCQCN): no dcb, DCQCN devlink params or PFC counters\n");
	err = tern_async_eq_start(tdev);
	if (err) {
		dev_err(dev, "cannot create the async EQ: %d\n", err);
		return err;
	}
	*done = TERN_STAGE_EQ;
	/* The driver's defaults differ from the firmware's (DCQCN on every priority). */
	tern_dcb_apply(tdev);
	return 0;
}

/* Stages DEVLINK and RUNNING: what users see. */
static int tern_probe_functions(struct tern_dev *tdev, enum tern_stage *done)
{
	struct pci_dev *pdev = tdev->pdev;
	struct device *dev = &pdev->dev;
	int err;

	err = tern_devlink_register(tdev);
	if (err) {
		dev_err(dev, "devlink registration failed: %d\n", err);
		return err;
	}
	tern_debugfs_init(tdev);
	*done = TERN_STAGE_DEVLINK;

	mutex_lock(&tdev->state_lock);
	err = tern_en_probe(tdev);
	if (!err) {
		tdev->en_ready = true;
		tdev->started = true;
		tern_aux_add(tdev);
		tern_ptp_add(tdev);
	}
	mutex_unlock(&tdev->state_lock);
	if (err) {
		dev_err(dev, "Ethernet function probe failed: %d\n", err);
		return err;
	}
	/* The PCI core enabled AER reporting at enumeration (pci_aer_init(), where AER is
	 * native); reports reach tern_pci_err_handlers. slot_reset restores this state.
	 */
	pci_save_state(pdev);
	*done = TERN_STAGE_RUNNING;
	return 0;
}

static int tern_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	enum tern_stage done;
	struct tern_dev *tdev;
	u32 fw;
	int err;

	tdev = tern_devlink_alloc(dev);
	if (!tdev)
		return -ENOMEM;
	tdev->pdev = pdev;
	mutex_init(&tdev->state_lock);
	spin_lock_init(&tdev->async_lock);
	spin_lock_init(&tdev->ptp_lock);
	tdev->ptp_index = -1;
	tern_dcb_init(tdev);
	INIT_WORK(&tdev->link_work, tern_link_work);
	pci_set_drvdata(pdev, tdev);
	done = TERN_STAGE_ALLOC;

	err = tern_probe_pci(tdev, &done);
	if (!err)
		err = tern_probe_hw(tdev, &done);
	if (!err)
		err = tern_probe_functions(tdev, &done);
	if (err) {
		tern_teardown(tdev, done);
		return err;
	}

	fw = le32_to_cpu(tdev->caps.fw_version);
	dev_info(dev, "tern NIC, firmware %u.%u.%u, serial %s, %d MSI-X vectors\n",
		 fw >> 24, (fw >> 16) & 0xff, fw & 0xffff, tdev->caps.serial,
		 tdev->num_vectors);
	return 0;
}

static void tern_remove(struct pci_dev *pdev)
{
	struct tern_dev *tdev = pci_get_drvdata(pdev);

	if (tdev)
		tern_teardown(tdev, TERN_STAGE_RUNNING);
}

/* Reboot or kexec: leave the device reset and off the bus, as removal does. */
static void tern_shutdown(struct pci_dev *pdev)
{
	tern_remove(pdev);
}

/* PCI error recovery (AER). Called by the PCI core's recovery thread, in order:
 * error_detected, then (unless it gave up) slot_reset and resume.
 */
static pci_ers_result_t tern_pci_error_detected(struct pci_dev *pdev,
						pci_channel_state_t state)
{
	struct tern_dev *tdev = pci_get_drvdata(pdev);
	bool lost = state == pci_channel_io_perm_failure;

	dev_err(&pdev->dev, "PCI error, channel %s: taking the device down\n",
		lost ? "lost" : state == pci_channel_io_frozen ? "frozen" : "working");
	if (!tdev)
		return PCI_ERS_RESULT_DISCONNECT;
	mutex_lock(&tdev->state_lock);
	if (!tdev->started) {
		mutex_unlock(&tdev->state_lock);
		return PCI_ERS_RESULT_DISCONNECT;
	}
	set_bit(TERN_FLAG_RECOVERING, &tdev->flags);
	set_bit(TERN_FLAG_PCI_ERROR, &tdev->flags);
	/* RDMA users learn first that their resources are gone */
	if (!test_and_set_bit(TERN_FLAG_DEAD, &tdev->flags)) {
		tern_cmdq_abort(tdev);
		tern_aux_device_fatal(tdev, ~0u);
	}
	tern_dev_down(tdev, true);
	mutex_unlock(&tdev->state_lock);
	if (!test_and_set_bit(TERN_FLAG_PCI_DISABLED, &tdev->flags))
		pci_disable_device(pdev);
	return lost ? PCI_ERS_RESULT_DISCONNECT : PCI_ERS_RESULT_NEED_RESET;
}

static pci_ers_result_t tern_pci_slot_reset(struct pci_dev *pdev)
{
	struct tern_dev *tdev = pci_get_drvdata(pdev);
	u32 magic;

	if (!tdev)
		return PCI_ERS_RESULT_DISCONNECT;
	if (pci_enable_device_mem(pdev)) {
		dev_err(&pdev->dev, "cannot enable the device after the PCI error\n");
		return PCI_ERS_RESULT_DISCONNECT;
	}
	clear_bit(TERN_FLAG_PCI_DISABLED, &tdev->flags);
	pci_set_master(pdev);
	pci_restore_state(pdev);
	pci_save_state(pdev);
	magic = tern_rd(tdev, TERN_REG_MAGIC);
	if (magic != TERN_MAGIC) {
		dev_err(&pdev->dev, "device not back after the PCI error (magic %#x)\n", magic);
		return PCI_ERS_RESULT_DISCONNECT;
	}
	return PCI_ERS_RESULT_RECOVERED;
}

static void tern_pci_resume(struct pci_dev *pdev)
{
	struct tern_dev *tdev = pci_get_drvdata(pdev);
	int err;

	if (!tdev)
		return;
	mutex_lock(&tdev->state_lock);
	if (tdev->started) {
		err = tern_dev_up(tdev);
		if (err)
			dev_err(&pdev->dev, "device did not come back after the PCI error: %d\n",
				err);
		else
			dev_info(&pdev->dev, "recovered from the PCI error\n");
		clear_bit(TERN_FLAG_PCI_ERROR, &tdev->flags);
		tern_dev_up_done(tdev);
	}
	mutex_unlock(&tdev->state_lock);
}

static const struct pci_error_handlers tern_pci_err_handlers = {
	.error_detected = tern_pci_error_detected,
	.slot_reset = tern_pci_slot_reset,
	.resume = tern_pci_resume,
};

static struct pci_driver tern_pci_driver = {
	.name = TERN_DRV_NAME,
	.id_table = tern_pci_ids,
	.probe = tern_probe,
	.remove = tern_remove,
	.shutdown = tern_shutdown,
	.err_handler = &tern_pci_err_handlers,
};

static int __init tern_init(void)
{
	int err;

	tern_debugfs_register();
	err = pci_register_driver(&tern_pci_driver);
	if (err)
		tern_debugfs_unregister();
	return err;
}

static void __exit tern_exit(void)
{
	pci_unregister_driver(&tern_pci_driver);
	tern_debugfs_unregister();
	tern_aux_ida_destroy();
}

module_init(tern_init);
module_exit(tern_exit);

MODULE_DESCRIPTION("tern RoCEv2 NIC core driver");
MODULE_LICENSE("Dual BSD/GPL");
