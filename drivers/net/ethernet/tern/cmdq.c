// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern firmware command queue.
 *
 * The command ring and the completion ring have the same depth, and there is one slot per
 * ring entry. A caller takes a free slot from slots_sem, so at most depth commands are ever
 * outstanding and neither ring can overflow. A slot owns two preallocated coherent
 * mailboxes (input and output), so executing a command never allocates memory.
 *
 * A command's token is its slot index in the low byte and a generation counter in the high
 * byte: a completion whose token matches no waiting command (a stale or duplicate
 * completion, or a device writing garbage) is counted and dropped.
 *
 * Until the command EQ exists, callers poll the completion ring themselves; afterwards the
 * EQ's interrupt handler walks it (tern_cmdq_handle_completions()) and wakes the waiters.
 * Waiters also look at the ring and at the device status every TERN_CMD_WAIT_SLICE_MS, so
 * a lost interrupt costs latency, not a command, and a dead device is noticed quickly.
 *
 * A command that does not complete within the device's command timeout (TERN_REG_CMD_TIMEOUT,
 * cmdq->timeout_ms) returns -ETIMEDOUT. Its slot
 * stays reserved ("abandoned") until the late completion arrives or the device is reset,
 * because the device may still write the slot's output mailbox.
 */

#include <linux/dma-mapping.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/sched.h>
#include <linux/string.h>

#include <linux/tern/tern_rdma.h>

#include "tern_core.h"

#define TERN_CMDQ_LOG_DEPTH		5	/* 32 commands in flight */
#define TERN_CMDQ_ENABLE_TIMEOUT_MS	1000
#define TERN_CMD_WAIT_SLICE_MS		100	/* device checks and ring polls while waiting */
#define TERN_CMD_POLL_MIN_US		10
#define TERN_CMD_POLL_MAX_US		1000

/* Slot state given to waiters when the queue is stopped under them (not a device status). */
#define TERN_CMD_ABORTED		0xff

static_assert(TERN_CMDQ_LOG_DEPTH >= 1 && TERN_CMDQ_LOG_DEPTH <= TERN_CMDQ_MAX_LOG);

/**
 * tern_cmd_opcode_name() - printable name of a command opcode
 * @opcode: enum tern_cmd_opcode
 *
 * Long only because it is one case per command of enum tern_cmd_opcode.
 *
 * Return: a static string, "UNKNOWN" for an opcode this driver does not know.
 */
const char *tern_cmd_opcode_name(u16 opcode)
{
	switch (opcode) {
	case TERN_CMD_NOP:
		return "NOP";
	case TERN_CMD_QUERY_DEVICE:
		return "QUERY_DEVICE";
	case TERN_CMD_SET_PORT:
		return "SET_PORT";
	case TERN_CMD_QUERY_PORT:
		return "QUERY_PORT";
	case TERN_CMD_QUERY_ETH_STATS:
		return "QUERY_ETH_STATS";
	case TERN_CMD_CREATE_EQ:
		return "CREATE_EQ";
	case TERN_CMD_DESTROY_EQ:
		return "DESTROY_EQ";
	case TERN_CMD_CREATE_ETH_TXQ:
		return "CREATE_ETH_TXQ";
	case TERN_CMD_DESTROY_ETH_TXQ:
		return "DESTROY_ETH_TXQ";
	case TERN_CMD_CREATE_ETH_RXQ:
		return "CREATE_ETH_RXQ";
	case TERN_CMD_DESTROY_ETH_RXQ:
		return "DESTROY_ETH_RXQ";
	case TERN_CMD_MODIFY_ETH_TXQ:
		return "MODIFY_ETH_TXQ";
	case TERN_CMD_MODIFY_ETH_RXQ:
		return "MODIFY_ETH_RXQ";
	case TERN_CMD_SET_RSS:
		return "SET_RSS";
	case TERN_CMD_QUERY_RDMA:
		return "QUERY_RDMA";
	case TERN_CMD_CREATE_PD:
		return "CREATE_PD";
	case TERN_CMD_DESTROY_PD:
		return "DESTROY_PD";
	case TERN_CMD_CREATE_MR:
		return "CREATE_MR";
	case TERN_CMD_DESTROY_MR:
		return "DESTROY_MR";
	case TERN_CMD_CREATE_CQ:
		return "CREATE_CQ";
	case TERN_CMD_DESTROY_CQ:
		return "DESTROY_CQ";
	case TERN_CMD_CREATE_QP:
		return "CREATE_QP";
	case TERN_CMD_MODIFY_QP:
		return "MODIFY_QP";
	case TERN_CMD_QUERY_QP:
		return "QUERY_QP";
	case TERN_CMD_DESTROY_QP:
		return "DESTROY_QP";
	case TERN_CMD_QUERY_RDMA_STATS:
		return "QUERY_RDMA_STATS";
	case TERN_CMD_CREATE_SRQ:
		return "CREATE_SRQ";
	case TERN_CMD_MODIFY_SRQ:
		return "MODIFY_SRQ";
	case TERN_CMD_QUERY_SRQ:
		return "QUERY_SRQ";
	case TERN_CMD_DESTROY_SRQ:
		return "DESTROY_SRQ";
	case TERN_CMD_RESIZE_CQ:
		return "RESIZE_CQ";
	case TERN_CMD_MODIFY_CQ:
		return "MODIFY_CQ";
	case TERN_CMD_REREG_MR:
		return "REREG_MR";
	case TERN_CMD_ATTACH_MCAST:
		return "ATTACH_MCAST";
	case TERN_CMD_DETACH_MCAST:
		return "DETACH_MCAST";
	case TERN_CMD_SET_DCB:
		return "SET_DCB";
	case TERN_CMD_QUERY_DCB:
		return "QUERY_DCB";
	case TERN_CMD_QUERY_PFC_STATS:
		return "QUERY_PFC_STATS";
	case TERN_CMD_SET_CC_PARAMS:
		return "SET_CC_PARAMS";
	case TERN_CMD_QUERY_CC_PARAMS:
		return "QUERY_CC_PARAMS";
	case TERN_CMD_SET_WIRE_FAULTS:
		return "SET_WIRE_FAULTS";
	case TERN_CMD_QUERY_WIRE_FAULTS:
		return "QUERY_WIRE_FAULTS";
	default:
		return "UNKNOWN";
	}
}
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_cmd_opcode_name);

/**
 * tern_cmd_status_name() - printable name of a command completion status
 * @status: enum tern_cmd_status
 *
 * Return: a static string, "UNKNOWN" for a status this driver does not know.
 */
TERN_VISIBLE_IF_KUNIT const char *tern_cmd_status_name(u8 status)
{
	switch (status) {
	case TERN_CMD_OK:
		return "OK";
	case TERN_CMD_BAD_OPCODE:
		return "BAD_OPCODE";
	case TERN_CMD_BAD_LEN:
		return "BAD_LEN";
	case TERN_CMD_BAD_PARAM:
		return "BAD_PARAM";
	case TERN_CMD_NO_RESOURCES:
		return "NO_RESOURCES";
	case TERN_CMD_BAD_RESOURCE:
		return "BAD_RESOURCE";
	case TERN_CMD_BAD_STATE:
		return "BAD_STATE";
	case TERN_CMD_DMA_ERROR:
		return "DMA_ERROR";
	case TERN_CMD_INTERNAL:
		return "INTERNAL";
	default:
		return "UNKNOWN";
	}
}
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_cmd_status_name);

/**
 * tern_cmd_status_to_errno() - errno for a command completion status
 * @status: enum tern_cmd_status
 *
 * Return: 0 for TERN_CMD_OK, a negative errno otherwise (-EIO for unknown statuses).
 */
int tern_cmd_status_to_errno(u8 status)
{
	switch (status) {
	case TERN_CMD_OK:
		return 0;
	case TERN_CMD_BAD_OPCODE:
		return -EOPNOTSUPP;
	case TERN_CMD_BAD_LEN:
	case TERN_CMD_BAD_PARAM:
		return -EINVAL;
	case TERN_CMD_NO_RESOURCES:
		return -ENOSPC;
	case TERN_CMD_BAD_RESOURCE:
		return -ENOENT;
	case TERN_CMD_BAD_STATE:
		return -EBUSY;
	case TERN_CMD_DMA_ERROR:
		return -EFAULT;
	case TERN_CMD_INTERNAL:
	default:
		return -EIO;
	}
}
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_cmd_status_to_errno);

/* A command the device refused because of what it was asked (a bad parameter, a busy or
 * unknown object, no room left) is the caller's error, returned to it as an errno: users and
 * peers can cause those at will, so they go to the debug log only. A malformed command
 * (unknown opcode, wrong length), a DMA failure or an internal error is a driver or device
 * bug and is logged as one. Either way the command queue's error count moves.
 */
static void tern_cmd_log_status(struct tern_dev *tdev, u8 opcode,
				const struct tern_cmd_slot *slot)
{
	switch (slot->status) {
	case TERN_CMD_BAD_PARAM:
	case TERN_CMD_NO_RESOURCES:
	case TERN_CMD_BAD_RESOURCE:
	case TERN_CMD_BAD_STATE:
		dev_dbg(&tdev->pdev->dev, "command %s (%#x) refused: status %s (%#x), syndrome %#x\n",
			tern_cmd_opcode_name(opcode), opcode,
			tern_cmd_status_name(slot->status), slot->status, slot->syndrome);
		break;
	default:
		dev_err_ratelimited(&tdev->pdev->dev,
				    "command %s (%#x) failed: status %s (%#x), syndrome %#x\n",
				    tern_cmd_opcode_name(opcode), opcode,
				    tern_cmd_status_name(slot->status), slot->status,
				    slot->syndrome);
	}
}

/**
 * tern_cmd_fill_sqe() - encode a command ring entry
 * @sqe: the entry; every byte is written
 * @opcode: enum tern_cmd_opcode
 * @token: the command's token (tern_cmd_token())
 * @in: input; copied inline when @in_len is at most TERN_CMD_INLINE_MAX (may be NULL when
 *	@in_len is 0, and is not read otherwise: larger inputs are already in the mailbox)
 * @in_len: input size
 * @out_len: output buffer size
 * @in_dma: input mailbox, used when @in_len is above TERN_CMD_INLINE_MAX
 * @out_dma: output mailbox, used when @out_len is not 0
 */
void tern_cmd_fill_sqe(struct tern_cmd_sqe *sqe, u16 opcode, u16 token, const void *in,
		       size_t in_len, size_t out_len, dma_addr_t in_dma, dma_addr_t out_dma)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = cpu_to_le16(opcode);
	sqe->token = cpu_to_le16(token);
	sqe->in_len = cpu_to_le16(in_len);
	sqe->out_len = cpu_to_le16(out_len);
	if (in_len > TERN_CMD_INLINE_MAX)
		sqe->in_addr = cpu_to_le64(in_dma);
	else if (in_len)
		memcpy(sqe->inline_in, in, in_len);
	if (out_len)
		sqe->out_addr = cpu_to_le64(out_dma);
}
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_cmd_fill_sqe);

/* Program the rings into the device and wait for it to accept them. */
static int tern_cmdq_hw_enable(struct tern_dev *tdev)
{
	struct tern_cmdq *cmdq = &tdev->cmdq;
	unsigned long deadline;
	u32 val;

	tern_wr(tdev, TERN_REG_CMDQ_SQ_LO, lower_32_bits(cmdq->sq_dma));
	tern_wr(tdev, TERN_REG_CMDQ_SQ_HI, upper_32_bits(cmdq->sq_dma));
	tern_wr(tdev, TERN_REG_CMDQ_CQ_LO, lower_32_bits(cmdq->cq_dma));
	tern_wr(tdev, TERN_REG_CMDQ_CQ_HI, upper_32_bits(cmdq->cq_dma));
	tern_wr(tdev, TERN_REG_CMDQ_CFG, cmdq->log_depth | TERN_CMDQ_CFG_ENABLE);

	deadline = jiffies + msecs_to_jiffies(TERN_CMDQ_ENABLE_TIMEOUT_MS);
	for (;;) {
		val = tern_rd(tdev, TERN_REG_CMDQ_STATUS);
		if (val == ~0u) {
			dev_err(&tdev->pdev->dev, "device not responding while enabling the command queue\n");
			return -ENODEV;
		}
		if (val & TERN_CMDQ_STATUS_ERROR) {
			dev_err(&tdev->pdev->dev, "device refused the command queue (status %#x)\n",
				tern_rd(tdev, TERN_REG_STATUS));
			return -EIO;
		}
		if (val & TERN_CMDQ_STATUS_ENABLED)
			return 0;
		if (time_after(jiffies, deadline))
			break;
		usleep_range(100, 200);
	}
	dev_err(&tdev->pdev->dev, "command queue not enabled after %u ms\n",
		TERN_CMDQ_ENABLE_TIMEOUT_MS);
	return -ETIMEDOUT;
}

/* Return the rings and slots to their initial state. Nobody may use the queue. */
static void tern_cmdq_reset_state(struct tern_cmdq *cmdq)
{
	u32 i;

	memset(cmdq->sq, 0, sizeof(*cmdq->sq) * cmdq->depth);
	memset(cmdq->cq, 0, sizeof(*cmdq->cq) * cmdq->depth);
	cmdq->sq_pi = 0;
	cmdq->cq_ci = 0;
	for (i = 0; i < cmdq->depth; i++) {
		struct tern_cmd_slot *slot = &cmdq->slots[i];

		slot->busy = false;
		slot->completed = false;
		slot->abandoned = false;
	}
	sema_init(&cmdq->slots_sem, cmdq->depth);
}

static void tern_cmdq_free_mem(struct tern_dev *tdev)
{
	struct tern_cmdq *cmdq = &tdev->cmdq;
	struct device *dev = &tdev->pdev->dev;
	u32 i;

	if (cmdq->slots) {
		for (i = 0; i < cmdq->depth; i++) {
			struct tern_cmd_slot *slot = &cmdq->slots[i];

			if (slot->in_buf)
				dma_free_coherent(dev, TERN_CMD_MAX_IN, slot->in_buf, slot->in_dma);
			if (slot->out_buf)
				dma_free_coherent(dev, TERN_CMD_MAX_OUT, slot->out_buf,
						  slot->out_dma);
		}
		kfree(cmdq->slots);
		cmdq->slots = NULL;
	}
	if (cmdq->cq) {
		dma_free_coherent(dev, sizeof(*cmdq->cq) * cmdq->depth, cmdq->cq, cmdq->cq_dma);
		cmdq->cq = NULL;
	}
	if (cmdq->sq) {
		dma_free_coherent(dev, sizeof(*cmdq->sq) * cmdq->depth, cmdq->sq, cmdq->sq_dma);
		cmdq->sq = NULL;
	}
}

/**
 * tern_cmdq_init() - allocate the command queue and enable it in polled mode
 * @tdev: the device, freshly reset (STATUS.READY)
 *
 * Return: 0 or a negative errno; on error nothing is left allocated.
 */
int tern_cmdq_init(struct tern_dev *tdev)
{
	struct tern_cmdq *cmdq = &tdev->cmdq;
	struct device *dev = &tdev->pdev->dev;
	u32 i;
	int err;

	spin_lock_init(&cmdq->lock);
	init_waitqueue_head(&cmdq->drain_wq);
	cmdq->log_depth = TERN_CMDQ_LOG_DEPTH;
	cmdq->depth = 1u << cmdq->log_depth;
	cmdq->event_mode = false;
	cmdq->stopped = true;
	cmdq->users = 0;
	cmdq->generation = 0;
	atomic_set(&cmdq->timeouts, 0);
	atomic_set(&cmdq->errors, 0);
	atomic_set(&cmdq->stale, 0);
	atomic_set(&cmdq->late, 0);

	/* Coherent allocations are at least page aligned: the 64-byte rule holds. */
	cmdq->sq = dma_alloc_coherent(dev, sizeof(*cmdq->sq) * cmdq->depth, &cmdq->sq_dma,
				      GFP_KERNEL);
	cmdq->cq = dma_alloc_coherent(dev, sizeof(*cmdq->cq) * cmdq->depth, &cmdq->cq_dma,
				      GFP_KERNEL);
	cmdq->slots = kcalloc(cmdq->depth, sizeof(*cmdq->slots), GFP_KERNEL);
	if (!cmdq->sq || !cmdq->cq || !cmdq->slots) {
		err = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < cmdq->depth; i++) {
		struct tern_cmd_slot *slot = &cmdq->slots[i];

		init_completion(&slot->done);
		slot->in_buf = dma_alloc_coherent(dev, TERN_CMD_MAX_IN, &slot->in_dma,
						  GFP_KERNEL);
		slot->out_buf = dma_alloc_coherent(dev, TERN_CMD_MAX_OUT, &slot->out_dma,
						   GFP_KERNEL);
		if (!slot->in_buf || !slot->out_buf) {
			err = -ENOMEM;
			goto err_free;
		}
	}
	tern_cmdq_reset_state(cmdq);

	err = tern_cmdq_hw_enable(tdev);
	if (err)
		goto err_free;

	spin_lock_irq(&cmdq->lock);
	cmdq->stopped = false;
	spin_unlock_irq(&cmdq->lock);
	return 0;

err_free:
	tern_wr(tdev, TERN_REG_CMDQ_CFG, 0);
	tern_cmdq_free_mem(tdev);
	return err;
}

/**
 * tern_cmdq_cleanup() - stop the command queue and free it
 * @tdev: the device
 *
 * The caller has reset the device, or has made sure it no longer touches the rings and
 * mailboxes (bus mastering off). No EQ may deliver completions any more.
 */
void tern_cmdq_cleanup(struct tern_dev *tdev)
{
	tern_cmdq_stop(tdev);
	if (!test_bit(TERN_FLAG_DEAD, &tdev->flags))
		tern_wr(tdev, TERN_REG_CMDQ_CFG, 0);
	tern_cmdq_free_mem(tdev);
}

/* Called with cmdq->lock held: wake every caller still waiting for a completion. */
static void tern_cmdq_abort_locked(struct tern_cmdq *cmdq)
{
	u32 i;

	cmdq->stopped = true;
	for (i = 0; i < cmdq->depth; i++) {
		struct tern_cmd_slot *slot = &cmdq->slots[i];

		if (!slot->busy || slot->completed || slot->abandoned)
			continue;
		slot->status = TERN_CMD_ABORTED;
		slot->completed = true;
		complete(&slot->done);
	}
}

/**
 * tern_cmdq_abort() - refuse new commands and fail those being waited for with -EIO
 * @tdev: the device
 *
 * Used when the device is found dead. Does not sleep: callable from any context.
 */
void tern_cmdq_abort(struct tern_dev *tdev)
{
	struct tern_cmdq *cmdq = &tdev->cmdq;
	unsigned long flags;

	if (!cmdq->slots)
		return;
	spin_lock_irqsave(&cmdq->lock, flags);
	tern_cmdq_abort_locked(cmdq);
	spin_unlock_irqrestore(&cmdq->lock, flags);
}

static bool tern_cmdq_idle(struct tern_cmdq *cmdq)
{
	bool idle;

	spin_lock_irq(&cmdq->lock);
	idle = !cmdq->users;
	spin_unlock_irq(&cmdq->lock);
	return idle;
}

/**
 * tern_cmdq_stop() - refuse new commands and wait until no caller is inside tern_cmd_exec()
 * @tdev: the device
 *
 * Commands being waited for fail with -EIO. Abandoned slots stay reserved until
 * tern_cmdq_restart() or tern_cmdq_cleanup(). Sleeps.
 */
void tern_cmdq_stop(struct tern_dev *tdev)
{
	struct tern_cmdq *cmdq = &tdev->cmdq;

	if (!cmdq->slots)
		return;
	tern_cmdq_abort(tdev);
	wait_event(cmdq->drain_wq, tern_cmdq_idle(cmdq));
}

/**
 * tern_cmdq_restart() - bring a stopped command queue back after a device reset
 * @tdev: the device, freshly reset (STATUS.READY)
 *
 * Frees every slot (including abandoned ones: the reset discarded their commands), clears
 * the rings and enables the queue in polled mode.
 *
 * Return: 0 or a negative errno (the queue then stays stopped).
 */
int tern_cmdq_restart(struct tern_dev *tdev)
{
	struct tern_cmdq *cmdq = &tdev->cmdq;
	int err;

	tern_cmdq_stop(tdev);
	cmdq->event_mode = false;
	tern_cmdq_reset_state(cmdq);

	err = tern_cmdq_hw_enable(tdev);
	if (err)
		return err;

	spin_lock_irq(&cmdq->lock);
	cmdq->stopped = false;
	spin_unlock_irq(&cmdq->lock);
	return 0;
}

/**
 * tern_cmdq_healthy() - whether the queue still has most of its slots usable
 * @tdev: the device
 *
 * Return: false when the queue is stopped or half of its slots or more are held by
 * commands that timed out and never completed.
 */
bool tern_cmdq_healthy(struct tern_dev *tdev)
{
	struct tern_cmdq *cmdq = &tdev->cmdq;
	u32 i, abandoned = 0;
	bool ok;

	if (!cmdq->slots)
		return false;
	spin_lock_irq(&cmdq->lock);
	for (i = 0; i < cmdq->depth; i++)
		abandoned += cmdq->slots[i].abandoned;
	ok = !cmdq->stopped && abandoned < cmdq->depth / 2;
	spin_unlock_irq(&cmdq->lock);
	return ok;
}

/**
 * tern_cmdq_set_event_mode() - choose how command completions are noticed
 * @tdev: the device
 * @on: true once the EQ with TERN_EQ_F_CMD is armed; false before it is destroyed
 *
 * Waiters re-check the mode at least every TERN_CMD_WAIT_SLICE_MS, so switching while
 * commands are in flight is safe.
 */
void tern_cmdq_set_event_mode(struct tern_dev *tdev, bool on)
{
	struct tern_cmdq *cmdq = &tdev->cmdq;

	spin_lock_irq(&cmdq->lock);
	WRITE_ONCE(cmdq->event_mode, on);
	spin_unlock_irq(&cmdq->lock);
}

/**
 * tern_cmdq_handle_completions() - consume new entries of the completion ring
 * @tdev: the device
 *
 * Completes the slot each entry names. Entries whose token matches no command being waited
 * for are counted and dropped; a late completion of an abandoned command frees its slot.
 * Callable from any context (the command EQ's interrupt handler, or a polling waiter).
 */
void tern_cmdq_handle_completions(struct tern_dev *tdev)
{
	struct tern_cmdq *cmdq = &tdev->cmdq;
	unsigned long flags;
	u32 budget;

	if (!cmdq->slots)
		return;

	spin_lock_irqsave(&cmdq->lock, flags);
	/* At most depth commands are outstanding: more entries mean a confused device. */
	for (budget = cmdq->depth; budget; budget--) {
		struct tern_cmd_cqe *cqe = &cmdq->cq[cmdq->cq_ci & (cmdq->depth - 1)];
		u8 phase = tern_ring_phase(cmdq->cq_ci, cmdq->log_depth);
		struct tern_cmd_slot *slot;
		u16 token, idx;

		if ((READ_ONCE(cqe->flags) & TERN_CQE_PHASE) != phase)
			break;
		/* Read the rest of the entry only after seeing its phase bit. */
		dma_rmb();
		cmdq->cq_ci++;

		token = le16_to_cpu(cqe->token);
		idx = tern_cmd_token_slot(token);
		slot = idx < cmdq->depth ? &cmdq->slots[idx] : NULL;
		if (!slot || !slot->busy || slot->completed || slot->token != token) {
			atomic_inc(&cmdq->stale);
			dev_warn_ratelimited(&tdev->pdev->dev,
					     "completion with unexpected token %#x dropped\n",
					     token);
			continue;
		}
		if (slot->abandoned) {
			/* The caller is gone; the device is done with the mailboxes now. */
			slot->abandoned = false;
			slot->busy = false;
			atomic_inc(&cmdq->late);
			up(&cmdq->slots_sem);
			continue;
		}
		slot->status = cqe->status;
		slot->syndrome = le32_to_cpu(cqe->syndrome);
		slot->result = le32_to_cpu(cqe->result);
		slot->out_len = le16_to_cpu(cqe->out_len);
		slot->completed = true;
		complete(&slot->done);
	}
	spin_unlock_irqrestore(&cmdq->lock, flags);
}
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_cmdq_handle_completions);

/* Register as a caller unless the queue is stopped. */
static bool tern_cmdq_enter(struct tern_cmdq *cmdq)
{
	bool ok;

	spin_lock_irq(&cmdq->lock);
	ok = !cmdq->stopped;
	if (ok)
		cmdq->users++;
	spin_unlock_irq(&cmdq->lock);
	return ok;
}

static void tern_cmdq_exit(struct tern_cmdq *cmdq)
{
	bool wake;

	spin_lock_irq(&cmdq->lock);
	wake = !--cmdq->users;
	spin_unlock_irq(&cmdq->lock);
	if (wake)
		wake_up_all(&cmdq->drain_wq);
}

/* Take a slot from the semaphore, giving up when the queue stops or after the timeout. */
static struct tern_cmd_slot *tern_cmd_get_slot(struct tern_dev *tdev, u16 opcode)
{
	struct tern_cmdq *cmdq = &tdev->cmdq;
	struct tern_cmd_slot *slot = NULL;
	unsigned long deadline;
	u32 i;

	deadline = jiffies + msecs_to_jiffies(cmdq->timeout_ms);
	while (down_timeout(&cmdq->slots_sem, msecs_to_jiffies(TERN_CMD_WAIT_SLICE_MS))) {
		if (READ_ONCE(cmdq->stopped))
			return ERR_PTR(-EIO);
		if (time_after(jiffies, deadline)) {
			atomic_inc(&cmdq->timeouts);
			dev_err_ratelimited(&tdev->pdev->dev,
					    "command %s (%#x): no free command slot after %u ms\n",
					    tern_cmd_opcode_name(opcode), opcode,
					    cmdq->timeout_ms);
			tern_devlink_report_fw_error(tdev, "command queue full", opcode);
			return ERR_PTR(-ETIMEDOUT);
		}
	}

	spin_lock_irq(&cmdq->lock);
	for (i = 0; i < cmdq->depth; i++) {
		if (!cmdq->slots[i].busy) {
			slot = &cmdq->slots[i];
			break;
		}
	}
	if (slot) {
		slot->busy = true;
		slot->completed = false;
		slot->abandoned = false;
		slot->token = tern_cmd_token(i, cmdq->generation++);
		reinit_completion(&slot->done);
	}
	spin_unlock_irq(&cmdq->lock);

	/* The semaphore counts free slots, so this is a driver bug. */
	if (WARN_ON_ONCE(!slot)) {
		up(&cmdq->slots_sem);
		return ERR_PTR(-EIO);
	}
	return slot;
}

static void tern_cmd_put_slot(struct tern_cmdq *cmdq, struct tern_cmd_slot *slot)
{
	spin_lock_irq(&cmdq->lock);
	slot->busy = false;
	slot->completed = false;
	spin_unlock_irq(&cmdq->lock);
	up(&cmdq->slots_sem);
}

/* Write the command into the ring and ring the doorbell. */
static int tern_cmd_post(struct tern_dev *tdev, struct tern_cmd_slot *slot, u16 opcode,
			 const void *in, size_t in_len, size_t out_len)
{
	struct tern_cmdq *cmdq = &tdev->cmdq;
	struct tern_cmd_sqe *sqe;

	spin_lock_irq(&cmdq->lock);
	if (cmdq->stopped) {
		spin_unlock_irq(&cmdq->lock);
		return -EIO;
	}
	sqe = &cmdq->sq[cmdq->sq_pi & (cmdq->depth - 1)];
	tern_cmd_fill_sqe(sqe, opcode, slot->token, in, in_len, out_len, slot->in_dma,
			  slot->out_dma);
	cmdq->sq_pi++;
	/* The entry and the input mailbox must be visible to the device before it sees the new
	 * producer index. iowrite32() orders prior writes to coherent memory already; the
	 * barrier documents the dependency. Doorbells are written under the lock so that the
	 * device never sees the producer index go backwards.
	 */
	dma_wmb();
	tern_db(tdev, TERN_DB_CMDQ, cmdq->sq_pi & 0xffff);
	spin_unlock_irq(&cmdq->lock);
	return 0;
}

/* Wait for @slot to complete. Returns 0 once it has completed (with any status), or
 * -ETIMEDOUT. A dead device completes the slot with TERN_CMD_ABORTED through
 * tern_dev_alive() -> tern_dev_mark_dead() -> tern_cmdq_abort().
 */
static int tern_cmd_wait(struct tern_dev *tdev, struct tern_cmd_slot *slot)
{
	struct tern_cmdq *cmdq = &tdev->cmdq;
	unsigned long deadline, next_check, slice;
	unsigned int poll_us = TERN_CMD_POLL_MIN_US;

	deadline = jiffies + msecs_to_jiffies(cmdq->timeout_ms);
	slice = msecs_to_jiffies(TERN_CMD_WAIT_SLICE_MS);
	next_check = jiffies + slice;
	for (;;) {
		if (READ_ONCE(cmdq->event_mode)) {
			long left = (long)(deadline - jiffies);

			if (left <= 0)
				break;
			if (wait_for_completion_timeout(&slot->done, min_t(long, left, slice)))
				return 0;
			/* Cover a lost interrupt: look at the ring ourselves. */
			tern_cmdq_handle_completions(tdev);
		} else {
			tern_cmdq_handle_completions(tdev);
			if (try_wait_for_completion(&slot->done))
				return 0;
			if (time_after(jiffies, deadline))
				break;
			usleep_range(poll_us, 2 * poll_us);
			poll_us = min(2 * poll_us, TERN_CMD_POLL_MAX_US);
		}
		if (try_wait_for_completion(&slot->done))
			return 0;
		if (time_after(jiffies, next_check)) {
			next_check = jiffies + slice;
			tern_dev_alive(tdev);
		}
	}

	/* Last look before giving up. */
	tern_cmdq_handle_completions(tdev);
	if (try_wait_for_completion(&slot->done))
		return 0;
	return -ETIMEDOUT;
}

/* The command timed out: leave the slot to its late completion, unless it just came. */
static bool tern_cmd_abandon(struct tern_cmdq *cmdq, struct tern_cmd_slot *slot)
{
	bool abandoned;

	spin_lock_irq(&cmdq->lock);
	abandoned = !slot->completed;
	if (abandoned)
		slot->abandoned = true;
	spin_unlock_irq(&cmdq->lock);
	return abandoned;
}

/**
 * tern_cmd_exec() - execute a firmware command and wait for its completion
 * @tdev: the device
 * @opcode: enum tern_cmd_opcode
 * @in: input (@in_len bytes; may be NULL when @in_len is 0)
 * @in_len: input size, at most TERN_CMD_MAX_IN
 * @out: output buffer (may be NULL when @out_len is 0); bytes the device did not write are
 *	zeroed
 * @out_len: output buffer size, at most TERN_CMD_MAX_OUT
 * @result: where to store the completion's result, or NULL
 *
 * Sleeps; safe for any number of concurrent callers (they queue for one of the depth
 * slots). Returns within about twice the device's command timeout whatever it does.
 *
 * Return: 0; the errno of a non-OK status (see tern_cmd_status_to_errno()); -ETIMEDOUT if
 * the device did not answer in time; -EIO if the device is dead, gone or being reset;
 * -EINVAL for bad arguments.
 */
int tern_cmd_exec(struct tern_dev *tdev, u16 opcode, const void *in, size_t in_len,
		  void *out, size_t out_len, u32 *result)
{
	int recoveries = atomic_read(&tdev->recoveries);
	struct tern_cmdq *cmdq = &tdev->cmdq;
	struct tern_cmd_slot *slot;
	size_t n;
	int err;

	might_sleep();
	if (in_len > TERN_CMD_MAX_IN || out_len > TERN_CMD_MAX_OUT ||
	    (in_len && !in) || (out_len && !out))
		return -EINVAL;
	if (!cmdq->slots || !tern_cmdq_enter(cmdq))
		return -EIO;
	/* Fail fast on a device that raised FATAL or fell off the bus. */
	if (!tern_dev_alive(tdev)) {
		err = -EIO;
		goto out_exit;
	}

	slot = tern_cmd_get_slot(tdev, opcode);
	if (IS_ERR(slot)) {
		err = PTR_ERR(slot);
		goto out_exit;
	}
	if (in_len > TERN_CMD_INLINE_MAX)
		memcpy(slot->in_buf, in, in_len);

	err = tern_cmd_post(tdev, slot, opcode, in, in_len, out_len);
	if (err)
		goto out_put;

	err = tern_cmd_wait(tdev, slot);
	if (err && tern_cmd_abandon(cmdq, slot)) {
		atomic_inc(&cmdq->timeouts);
		dev_err_ratelimited(&tdev->pdev->dev,
				    "command %s (%#x) timed out after %u ms (token %#x)\n",
				    tern_cmd_opcode_name(opcode), opcode, cmdq->timeout_ms,
				    slot->token);
		/* Timeouts from before the last recovery belong to the incident it handled. */
		if (atomic_read(&tdev->recoveries) == recoveries)
			tern_devlink_report_fw_error(tdev, "command timeout", opcode);
		goto out_exit;
	}

	/* Completed (possibly while we were giving up). */
	if (slot->status == TERN_CMD_ABORTED) {
		err = -EIO;
		goto out_put;
	}
	if (slot->status != TERN_CMD_OK) {
		atomic_inc(&cmdq->errors);
		tern_cmd_log_status(tdev, opcode, slot);
		err = tern_cmd_status_to_errno(slot->status);
		goto out_put;
	}

	if (out_len) {
		n = slot->out_len;
		if (n > out_len) {
			dev_warn_ratelimited(&tdev->pdev->dev,
					     "command %s (%#x): device wrote %zu bytes into a %zu-byte buffer\n",
					     tern_cmd_opcode_name(opcode), opcode, n, out_len);
			n = out_len;
		}
		memcpy(out, slot->out_buf, n);
		memset(out + n, 0, out_len - n);
	}
	if (result)
		*result = slot->result;
	err = 0;

out_put:
	tern_cmd_put_slot(cmdq, slot);
out_exit:
	tern_cmdq_exit(cmdq);
	return err;
}

/**
 * tern_cmdq_get_stats() - snapshot the command queue's counters and state
 * @tdev: the device
 * @st: filled in (all zero if the queue does not exist)
 */
void tern_cmdq_get_stats(struct tern_dev *tdev, struct tern_cmdq_stats *st)
{
	struct tern_cmdq *cmdq = &tdev->cmdq;
	u32 i;

	memset(st, 0, sizeof(*st));
	if (!cmdq->slots)
		return;
	spin_lock_irq(&cmdq->lock);
	st->depth = cmdq->depth;
	st->timeout_ms = cmdq->timeout_ms;
	for (i = 0; i < cmdq->depth; i++) {
		const struct tern_cmd_slot *slot = &cmdq->slots[i];

		if (slot->abandoned)
			st->abandoned++;
		else if (slot->busy && !slot->completed)
			st->in_flight++;
	}
	st->event_mode = cmdq->event_mode;
	st->stopped = cmdq->stopped;
	spin_unlock_irq(&cmdq->lock);
	st->timeouts = atomic_read(&cmdq->timeouts);
	st->errors = atomic_read(&cmdq->errors);
	st->stale = atomic_read(&cmdq->stale);
	st->late = atomic_read(&cmdq->late);
}
