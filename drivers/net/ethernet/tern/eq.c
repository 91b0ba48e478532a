// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern event queues.
 *
 * Each EQ is a ring of 16-byte events in coherent memory bound to one MSI-X vector (not
 * shared). The device raises the vector once when it writes an event into an armed EQ and
 * disarms it. The hard interrupt handler consumes the events by phase bit and hands each one
 * to the EQ's handler, at most TERN_EQ_BUDGET per interrupt, then writes the new consumer
 * index with ARM. Arming an EQ that still holds unconsumed events interrupts at once, so
 * nothing is lost between the last read and the re-arm, and when the budget ran out the
 * rest comes with the next interrupt (as mlx5's completion EQs do): one interrupt never
 * holds its CPU for more than TERN_EQ_BUDGET events.
 *
 * Why in hard interrupt context, with no tasklet behind it: every handler only hands the
 * event on, and none sleeps. The Ethernet channels' handler calls napi_schedule(); the RDMA
 * completion EQs' calls the CQ's ib comp_handler, which the RDMA core allows in hard
 * interrupt context (mlx5 calls it there; the core's own handlers raise irq_poll or queue
 * work); the async EQ's completes firmware commands (complete(), under the command queue's
 * IRQ-safe lock), marks the device dead and hands devlink health, link changes and PFC
 * storms to work items, and reports RDMA affiliated events, which ran with interrupts
 * disabled (under tern_dev.async_lock) before too; ib_dispatch_event() queues its own work.
 * Anything that sleeps must go to a work item: the handlers' kernel-doc says so.
 * A deferral to a tasklet only added a softirq pass between the interrupt and NAPI.
 */

#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/string.h>

#include "tern_core.h"

/* Events handled per interrupt; the re-arm raises another interrupt for the rest. */
#define TERN_EQ_BUDGET		64

/* EQ doorbells sit between TERN_DB_EQ(0) and the first Ethernet doorbell. */
#define TERN_DB_EQ_MAX		((TERN_DB_ETH_TXQ(0) - TERN_DB_EQ(0)) / 4)

static size_t tern_eq_alloc_size(u8 log_depth)
{
	size_t bytes = sizeof(struct tern_eqe) << log_depth;

	/* The device addresses memory in pages of at least 4 KiB. */
	return max_t(size_t, bytes, 1u << TERN_MEM_MIN_PAGE_SHIFT);
}

/**
 * tern_eq_arm() - write the EQ's consumer index and ask for the next interrupt
 * @eq: the event queue
 */
void tern_eq_arm(struct tern_eq *eq)
{
	tern_db(eq->tdev, TERN_DB_EQ(eq->eqn), tern_eq_db_value(READ_ONCE(eq->ci), true));
}

static irqreturn_t tern_eq_irq(int irq, void *data)
{
	struct tern_eq *eq = data;
	u32 depth = 1u << eq->log_depth;
	u32 ci = eq->ci;
	u32 done;

	for (done = 0; done < TERN_EQ_BUDGET; done++) {
		const struct tern_eqe *eqe = &eq->ring[ci & (depth - 1)];
		u8 phase = tern_ring_phase(ci, eq->log_depth);
		struct tern_eqe ev;

		if ((READ_ONCE(eqe->flags) & TERN_EQE_PHASE) != phase)
			break;
		/* Read the rest of the entry only after seeing its phase bit. */
		dma_rmb();
		ev = *eqe;
		ci++;
		eq->handler(eq, &ev, eq->ctx);
	}
	WRITE_ONCE(eq->ci, ci);
	/* The device disarmed the EQ when it raised the vector. Re-arming gives the consumed
	 * entries back and, if the budget left some unconsumed, interrupts again at once.
	 */
	tern_eq_arm(eq);
	/* The vector is ours alone: an interrupt is always this EQ's. */
	return IRQ_HANDLED;
}

static int tern_eq_destroy_hw(struct tern_dev *tdev, struct tern_eq *eq)
{
	struct tern_cmd_destroy_eq_in in = {
		.eqn = cpu_to_le32(eq->eqn),
	};

	return tern_cmd_exec(tdev, TERN_CMD_DESTROY_EQ, &in, sizeof(in), NULL, 0, NULL);
}

/* Free the ring unless the device may still write it: after a failed DESTROY_EQ on a device
 * that is alive, leaking a few pages is better than letting it write into freed memory.
 */
static void tern_eq_free_ring(struct tern_dev *tdev, struct tern_eq *eq, bool destroyed)
{
	if (!destroyed && tern_dev_alive(tdev)) {
		dev_err(&tdev->pdev->dev,
			"EQ %u not destroyed by the device: leaking its ring rather than freeing it under DMA\n",
			eq->eqn);
	} else {
		dma_free_coherent(&tdev->pdev->dev, tern_eq_alloc_size(eq->log_depth), eq->ring,
				  eq->ring_dma);
	}
	eq->ring = NULL;
}

/**
 * tern_eq_create() - create an event queue, hook its interrupt and arm it
 * @tdev: the device
 * @eq: the queue to set up (caller's storage; overwritten)
 * @vector: MSI-X vector index, below tdev->num_vectors
 * @log_depth: log2 of the number of entries, TERN_EQ_MIN_LOG..caps.max_eq_log
 * @flags: TERN_EQ_F_* (events other than the queues' own this EQ receives)
 * @handler: called for each event from the EQ's hard interrupt handler (must not sleep)
 * @ctx: passed to @handler
 * @name: interrupt name (copied; truncated to fit tern_eq.name)
 *
 * Return: 0 or a negative errno; on error nothing is left on the device or allocated.
 */
int tern_eq_create(struct tern_dev *tdev, struct tern_eq *eq, u16 vector, u8 log_depth,
		   u16 flags, tern_eq_handler_t handler, void *ctx, const char *name)
{
	struct pci_dev *pdev = tdev->pdev;
	struct tern_cmd_create_eq_in in = {};
	u8 max_log = TERN_EQ_MAX_LOG;
	u32 max_eqs = TERN_DB_EQ_MAX;
	size_t alloc;
	u32 eqn;
	int err;

	if (tdev->caps.max_eq_log)
		max_log = min_t(u8, max_log, tdev->caps.max_eq_log);
	if (tdev->caps.max_eqs)
		max_eqs = min_t(u32, max_eqs, tdev->caps.max_eqs);
	if (!handler || vector >= tdev->num_vectors ||
	    (tdev->caps.num_msix && vector >= tdev->caps.num_msix) ||
	    log_depth < TERN_EQ_MIN_LOG || log_depth > max_log)
		return -EINVAL;

	memset(eq, 0, sizeof(*eq));
	eq->tdev = tdev;
	eq->log_depth = log_depth;
	eq->vector = vector;
	eq->handler = handler;
	eq->ctx = ctx;
	strscpy(eq->name, name ? name : TERN_DRV_NAME, sizeof(eq->name));

	eq->irq = pci_irq_vector(pdev, vector);
	if (eq->irq < 0)
		return eq->irq;

	alloc = tern_eq_alloc_size(log_depth);
	eq->ring = dma_alloc_coherent(&pdev->dev, alloc, &eq->ring_dma, GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;

	in.mem.addr = cpu_to_le64(eq->ring_dma);
	in.mem.npages = cpu_to_le32(alloc >> TERN_MEM_MIN_PAGE_SHIFT);
	in.mem.page_shift = TERN_MEM_MIN_PAGE_SHIFT;
	in.mem.mode = TERN_MEM_DIRECT;
	in.log_depth = log_depth;
	in.msix_vector = vector;
	in.flags = cpu_to_le16(flags);
	err = tern_cmd_exec(tdev, TERN_CMD_CREATE_EQ, &in, sizeof(in), NULL, 0, &eqn);
	if (err) {
		dev_err(&pdev->dev, "CREATE_EQ (%s) failed: %d\n", eq->name, err);
		goto err_free;
	}
	eq->eqn = eqn;
	if (eqn >= max_eqs) {
		dev_err(&pdev->dev, "device returned EQ number %u (limit %u)\n", eqn, max_eqs);
		err = -EIO;
		goto err_destroy;
	}

	err = request_irq(eq->irq, tern_eq_irq, 0, eq->name, eq);
	if (err) {
		dev_err(&pdev->dev, "cannot request IRQ %d for %s: %d\n", eq->irq, eq->name,
			err);
		goto err_destroy;
	}
	tern_eq_arm(eq);
	return 0;

err_destroy:
	tern_eq_free_ring(tdev, eq, !tern_eq_destroy_hw(tdev, eq));
	return err;
err_free:
	dma_free_coherent(&pdev->dev, alloc, eq->ring, eq->ring_dma);
	eq->ring = NULL;
	return err;
}

/**
 * tern_eq_destroy() - destroy an event queue created by tern_eq_create()
 * @tdev: the device
 * @eq: the queue; nothing happens if it does not exist
 *
 * Queues reporting to @eq must have been destroyed first. Sleeps.
 */
void tern_eq_destroy(struct tern_dev *tdev, struct tern_eq *eq)
{
	int err;

	if (!eq->ring)
		return;
	err = tern_eq_destroy_hw(tdev, eq);
	if (err && !test_bit(TERN_FLAG_DEAD, &tdev->flags))
		dev_err(&tdev->pdev->dev, "DESTROY_EQ %u failed: %d\n", eq->eqn, err);
	/* free_irq() waits for an interrupt handler still running on another CPU, the only
	 * reader of the ring, before the ring goes (the device writes no more events after
	 * DESTROY_EQ, or is dead).
	 */
	free_irq(eq->irq, eq);
	tern_eq_free_ring(tdev, eq, !err);
}
