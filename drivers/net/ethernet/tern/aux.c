// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern auxiliary devices and the API of <linux/tern/tern_aux.h>.
 *
 * When QUERY_DEVICE reports TERN_DEV_CAP_RDMA, tern_core adds the auxiliary device
 * "tern_core.rdma.<n>" once the Ethernet function is up, and deletes it before anything of
 * the function goes down (removal, recovery with a reset). A driver bound to it (tern_ib.ko)
 * therefore always runs its probe and remove while the command queue, the async EQ and the
 * netdev exist. Everything here is exported in the TERN namespace.
 *
 * Completion EQs: MSI-X vectors from TERN_FIRST_COMP_VECTOR on carry completion EQs that the
 * bound driver creates and destroys (tern_core_comp_eq_create()); tern_core owns none of
 * them. The async EQ (vector 0) forwards its RDMA and congestion events (types 0x10..0x2f,
 * except TERN_EQE_PFC_STORM, which tern_core handles itself) to the one handler registered
 * with tern_core_set_async_handler().
 */

#include <linux/idr.h>
#include <linux/slab.h>

#include "tern_core.h"

/* Numbers <n> of "tern_core.rdma.<n>", unique across the tern functions of the system. */
static DEFINE_IDA(tern_aux_ida);

/**
 * struct tern_comp_eq - a completion EQ created for the auxiliary driver
 * @eq: the event queue
 * @handler: the auxiliary driver's handler
 * @ctx: argument of @handler
 */
struct tern_comp_eq {
	struct tern_eq eq;
	tern_event_handler_t handler;
	void *ctx;
};

static void tern_aux_release(struct device *dev)
{
	struct tern_aux_dev *tadev = to_tern_aux_dev(to_auxiliary_dev(dev));

	ida_free(&tern_aux_ida, tadev->adev.id);
	kfree(tadev);
}

/**
 * tern_aux_add() - add the RDMA auxiliary device if the device has RDMA
 * @tdev: the device; state_lock held, the Ethernet function up
 *
 * A failure is logged and leaves the Ethernet function working without RDMA.
 *
 * Return: 0, also when the device has no RDMA; a negative errno when the auxiliary device
 * could not be added.
 */
int tern_aux_add(struct tern_dev *tdev)
{
	struct device *dev = &tdev->pdev->dev;
	struct tern_aux_dev *tadev;
	int id, err;

	lockdep_assert_held(&tdev->state_lock);
	if (tdev->rdma_adev || !(le32_to_cpu(tdev->caps.caps) & TERN_DEV_CAP_RDMA))
		return 0;

	tadev = kzalloc(sizeof(*tadev), GFP_KERNEL);
	if (!tadev)
		return -ENOMEM;
	id = ida_alloc(&tern_aux_ida, GFP_KERNEL);
	if (id < 0) {
		kfree(tadev);
		return id;
	}
	tadev->tdev = tdev;
	tadev->adev.name = TERN_AUX_RDMA_NAME;
	tadev->adev.id = id;
	tadev->adev.dev.parent = dev;
	tadev->adev.dev.release = tern_aux_release;

	err = auxiliary_device_init(&tadev->adev);
	if (err) {
		ida_free(&tern_aux_ida, id);
		kfree(tadev);
		goto out_err;
	}
	/* From here on, put_device() frees tadev and its id through tern_aux_release(). */
	err = auxiliary_device_add(&tadev->adev);
	if (err) {
		auxiliary_device_uninit(&tadev->adev);
		goto out_err;
	}
	tdev->rdma_adev = tadev;
	return 0;

out_err:
	dev_err(dev, "cannot add the RDMA auxiliary device: %d (RDMA unavailable)\n", err);
	return err;
}

/**
 * tern_aux_del() - delete the RDMA auxiliary device, if it exists
 * @tdev: the device; state_lock held
 *
 * The bound driver's remove() runs (and finishes) inside this call, while commands and the
 * async EQ still work.
 */
void tern_aux_del(struct tern_dev *tdev)
{
	struct tern_aux_dev *tadev = tdev->rdma_adev;

	lockdep_assert_held(&tdev->state_lock);
	if (!tadev)
		return;
	tdev->rdma_adev = NULL;
	auxiliary_device_delete(&tadev->adev);
	auxiliary_device_uninit(&tadev->adev);
}

/**
 * tern_aux_async_event() - hand an RDMA or congestion event of the async EQ to its handler
 * @tdev: the device
 * @eqe: the event (type 0x10..0x2f, not TERN_EQE_PFC_STORM)
 *
 * The async EQ's hard interrupt handler. Events that arrive while no handler is
 * registered are dropped. The handler runs with interrupts disabled, as for FATAL
 * (tern_aux_device_fatal()), which may be called from any context.
 */
void tern_aux_async_event(struct tern_dev *tdev, const struct tern_eqe *eqe)
{
	unsigned long flags;

	spin_lock_irqsave(&tdev->async_lock, flags);
	if (tdev->async_handler)
		tdev->async_handler(tdev->async_ctx, eqe);
	spin_unlock_irqrestore(&tdev->async_lock, flags);
}

/**
 * tern_aux_device_fatal() - tell the async handler that the device died
 * @tdev: the device
 * @syndrome: enum tern_fatal_syndrome, or ~0 when the device does not respond
 *
 * Called once per death (tern_dev_mark_dead()), from any context: the handler receives an
 * event of type TERN_EQE_FATAL with @syndrome in data[0], with interrupts disabled.
 */
void tern_aux_device_fatal(struct tern_dev *tdev, u32 syndrome)
{
	struct tern_eqe eqe = {};
	unsigned long flags;

	eqe.type = TERN_EQE_FATAL;
	eqe.data[0] = cpu_to_le32(syndrome);
	spin_lock_irqsave(&tdev->async_lock, flags);
	if (tdev->async_handler)
		tdev->async_handler(tdev->async_ctx, &eqe);
	spin_unlock_irqrestore(&tdev->async_lock, flags);
}

/**
 * tern_aux_ida_destroy() - release the auxiliary device numbers at module exit
 */
void tern_aux_ida_destroy(void)
{
	ida_destroy(&tern_aux_ida);
}

/**
 * tern_core_cmd() - execute a firmware command
 * @tdev: the device
 * @opcode: enum tern_cmd_opcode or enum tern_rdma_cmd_opcode
 * @in: input (@in_len bytes, up to TERN_CMD_MAX_IN), or NULL when @in_len is 0
 * @in_len: bytes of input
 * @out: output buffer (@out_len bytes, up to TERN_CMD_MAX_OUT), or NULL
 * @out_len: size of @out
 * @result: the completion's result (e.g. a created object's number), or NULL
 *
 * Sleeps until the command completes or times out. Fails at once with -EIO when the device
 * is dead.
 *
 * Return: 0, or a negative errno: the command's status translated (-EOPNOTSUPP unknown
 * opcode, -EINVAL bad length or parameter, -ENOSPC no resources, -ENOENT no such object,
 * -EBUSY wrong state, -EFAULT DMA error, -EIO firmware error or dead device), -ETIMEDOUT.
 */
int tern_core_cmd(struct tern_dev *tdev, u16 opcode, const void *in, size_t in_len,
		  void *out, size_t out_len, u32 *result)
{
	return tern_cmd_exec(tdev, opcode, in, in_len, out, out_len, result);
}
EXPORT_SYMBOL_NS_GPL(tern_core_cmd, TERN);

/**
 * tern_core_alive() - check that the device still works
 * @tdev: the device
 *
 * Return: false once the device raised a fatal error or stopped responding. A destroy
 * command that failed on a device that is still alive may leave the object in use by the
 * device: its memory must not be freed.
 */
bool tern_core_alive(struct tern_dev *tdev)
{
	return tern_dev_alive(tdev);
}
EXPORT_SYMBOL_NS_GPL(tern_core_alive, TERN);

/**
 * tern_core_roce_sr() - whether the port's RC QPs offer selective repeat
 * @tdev: the device
 *
 * Return: true when devlink's roce_selective_repeat is on: user RC QPs created from now on
 * offer selective repeat through ECE (Documentation/hw/rdma.rst), if the device has
 * TERN_RDMA_CAP_SR; a connection runs it only when both ends agreed.
 */
bool tern_core_roce_sr(struct tern_dev *tdev)
{
	return READ_ONCE(tdev->roce_sr);
}
EXPORT_SYMBOL_NS_GPL(tern_core_roce_sr, TERN);

/**
 * tern_core_roce_sr_log_cap() - the in-flight cap the port's RC QPs offer with selective repeat
 * @tdev: the device
 *
 * Return: devlink's roce_sr_log_cap: 0 for the device's default (TERN_QP_XPORT_DEF_LOG_CAP),
 * else n for 2^n PSNs, n in TERN_QP_XPORT_MIN_LOG_CAP..TERN_QP_XPORT_MAX_LOG_CAP.
 */
u8 tern_core_roce_sr_log_cap(struct tern_dev *tdev)
{
	return READ_ONCE(tdev->roce_sr_log_cap);
}
EXPORT_SYMBOL_NS_GPL(tern_core_roce_sr_log_cap, TERN);

/**
 * tern_core_roce_adaptive_rto() - whether the port's RC QPs run the adaptive retransmit timer
 * @tdev: the device
 *
 * Return: true when devlink's roce_adaptive_rto is on: every RC QP (kernel and user) that
 * goes to RTR from now on gets TERN_QP_XPORT_ADAPTIVE_RTO, if the device has
 * TERN_RDMA_CAP_ADAPTIVE_RTO. It changes nothing on the wire, so no peer has to agree.
 */
bool tern_core_roce_adaptive_rto(struct tern_dev *tdev)
{
	return READ_ONCE(tdev->roce_adaptive_rto);
}
EXPORT_SYMBOL_NS_GPL(tern_core_roce_adaptive_rto, TERN);

/**
 * tern_core_dma_dev() - the device to map DMA memory for
 * @tdev: the device
 *
 * Return: the PCI function's struct device.
 */
struct device *tern_core_dma_dev(struct tern_dev *tdev)
{
	return &tdev->pdev->dev;
}
EXPORT_SYMBOL_NS_GPL(tern_core_dma_dev, TERN);

/**
 * tern_core_netdev() - the Ethernet function's netdev
 * @tdev: the device
 *
 * Valid as long as the auxiliary device exists.
 *
 * Return: the netdev.
 */
struct net_device *tern_core_netdev(struct tern_dev *tdev)
{
	return tdev->netdev;
}
EXPORT_SYMBOL_NS_GPL(tern_core_netdev, TERN);

/**
 * tern_core_caps() - the device's QUERY_DEVICE answer
 * @tdev: the device
 *
 * Return: the capabilities; constant while the auxiliary device exists.
 */
const struct tern_cmd_query_device_out *tern_core_caps(struct tern_dev *tdev)
{
	return &tdev->caps;
}
EXPORT_SYMBOL_NS_GPL(tern_core_caps, TERN);

/**
 * tern_core_db_page_addr() - bus address of a doorbell page of BAR2
 * @tdev: the device
 * @page: page index, TERN_DB_FIRST_UAR..num_db_pages-1 for user access regions
 *
 * Return: the page's physical address (for mapping it into user space), or 0 when @page is
 * not a user page of this device.
 */
resource_size_t tern_core_db_page_addr(struct tern_dev *tdev, unsigned int page)
{
	unsigned int pages = le16_to_cpu(tdev->caps.num_db_pages);

	if (!pages || pages > TERN_DB_NUM_PAGES)
		pages = TERN_DB_NUM_PAGES;
	if (page < TERN_DB_FIRST_UAR || page >= pages)
		return 0;
	return tdev->db_bar_start + (resource_size_t)page * TERN_DB_PAGE_SIZE;
}
EXPORT_SYMBOL_NS_GPL(tern_core_db_page_addr, TERN);

/**
 * tern_core_clock_page_addr() - bus address of BAR0's device clock page
 * @tdev: the device
 *
 * The page holds the device clock and nothing else (TERN_CLOCK_PAGE in tern_hw.h), so it
 * may be mapped read-only into user space.
 *
 * Return: the page's physical address, or 0 when the device has no clock or the page is not
 * a page of the CPU (PAGE_SIZE other than 4 KiB).
 */
resource_size_t tern_core_clock_page_addr(struct tern_dev *tdev)
{
	struct pci_dev *pdev = tdev->pdev;

	/* user mappings are of whole pages: the clock page must be one */
	if (offset_in_page(TERN_CLOCK_PAGE) || TERN_CLOCK_PAGE_SIZE != PAGE_SIZE)
		return 0;
	if (!(le32_to_cpu(tdev->caps.caps) & TERN_DEV_CAP_CLOCK) ||
	    pci_resource_len(pdev, TERN_BAR_REGS) < TERN_CLOCK_PAGE + TERN_CLOCK_PAGE_SIZE)
		return 0;
	return pci_resource_start(pdev, TERN_BAR_REGS) + TERN_CLOCK_PAGE;
}
EXPORT_SYMBOL_NS_GPL(tern_core_clock_page_addr, TERN);

/**
 * tern_core_set_async_handler() - receive the async EQ's RDMA and congestion events
 * @tdev: the device
 * @handler: called with interrupts disabled (from the async EQ's interrupt handler, or for FATAL
 *	from any context) for each event of type 0x10..0x2f but
 *	TERN_EQE_PFC_STORM
 * @ctx: argument of @handler
 *
 * Return: 0, or -EBUSY when a handler is already registered.
 */
int tern_core_set_async_handler(struct tern_dev *tdev, tern_event_handler_t handler, void *ctx)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&tdev->async_lock, flags);
	if (tdev->async_handler) {
		err = -EBUSY;
	} else {
		tdev->async_ctx = ctx;
		tdev->async_handler = handler;
	}
	spin_unlock_irqrestore(&tdev->async_lock, flags);
	return err;
}
EXPORT_SYMBOL_NS_GPL(tern_core_set_async_handler, TERN);

/**
 * tern_core_clear_async_handler() - stop receiving async events
 * @tdev: the device
 *
 * When this returns the handler is not running on any CPU and will not be called again.
 */
void tern_core_clear_async_handler(struct tern_dev *tdev)
{
	unsigned long flags;

	spin_lock_irqsave(&tdev->async_lock, flags);
	tdev->async_handler = NULL;
	tdev->async_ctx = NULL;
	spin_unlock_irqrestore(&tdev->async_lock, flags);
}
EXPORT_SYMBOL_NS_GPL(tern_core_clear_async_handler, TERN);

/**
 * tern_core_num_comp_vectors() - MSI-X vectors available for completion EQs
 * @tdev: the device
 *
 * Return: the number of vectors after the async and the first Ethernet one that are not the
 * Ethernet function's (may be 0).
 */
int tern_core_num_comp_vectors(struct tern_dev *tdev)
{
	int n = TERN_FIRST_COMP_VECTOR + tdev->num_comp_vectors;

	if (tdev->caps.num_msix)
		n = min_t(int, n, tdev->caps.num_msix);
	return max(n - TERN_FIRST_COMP_VECTOR, 0);
}
EXPORT_SYMBOL_NS_GPL(tern_core_num_comp_vectors, TERN);

static void tern_comp_eq_event(struct tern_eq *eq, const struct tern_eqe *eqe, void *ctx)
{
	struct tern_comp_eq *ceq = ctx;

	ceq->handler(ceq->ctx, eqe);
}

/**
 * tern_core_comp_eq_create() - create a completion EQ on its own MSI-X vector
 * @tdev: the device
 * @index: 0..tern_core_num_comp_vectors()-1
 * @log_depth: log2 of the EQ's entries, TERN_EQ_MIN_LOG..caps.max_eq_log (the device drops
 *	events that find the EQ full: size it for one pending event per CQ)
 * @handler: called for each event of the EQ from its hard interrupt handler (must not sleep)
 * @ctx: argument of @handler
 *
 * Sleeps. At most one EQ per @index may exist at a time.
 *
 * Return: the EQ, or an ERR_PTR() (-EINVAL for a bad @index or @log_depth).
 */
struct tern_eq *tern_core_comp_eq_create(struct tern_dev *tdev, unsigned int index,
					 u8 log_depth, tern_event_handler_t handler, void *ctx)
{
	struct tern_comp_eq *ceq;
	char name[32];
	int err;

	if (!handler || index >= tern_core_num_comp_vectors(tdev))
		return ERR_PTR(-EINVAL);

	ceq = kzalloc(sizeof(*ceq), GFP_KERNEL);
	if (!ceq)
		return ERR_PTR(-ENOMEM);
	ceq->handler = handler;
	ceq->ctx = ctx;
	snprintf(name, sizeof(name), "tern-comp%u@%s", index, pci_name(tdev->pdev));
	err = tern_eq_create(tdev, &ceq->eq, TERN_FIRST_COMP_VECTOR + index, log_depth, 0,
			     tern_comp_eq_event, ceq, name);
	if (err) {
		kfree(ceq);
		return ERR_PTR(err);
	}
	return &ceq->eq;
}
EXPORT_SYMBOL_NS_GPL(tern_core_comp_eq_create, TERN);

/**
 * tern_core_comp_eq_destroy() - destroy a completion EQ
 * @tdev: the device
 * @eq: from tern_core_comp_eq_create(); the CQs reporting to it are destroyed
 *
 * Sleeps; waits for the EQ's interrupt handler to finish.
 */
void tern_core_comp_eq_destroy(struct tern_dev *tdev, struct tern_eq *eq)
{
	struct tern_comp_eq *ceq = container_of(eq, struct tern_comp_eq, eq);

	tern_eq_destroy(tdev, eq);
	kfree(ceq);
}
EXPORT_SYMBOL_NS_GPL(tern_core_comp_eq_destroy, TERN);

/**
 * tern_core_eqn() - the device's number of an EQ (for CREATE_CQ)
 * @eq: the EQ
 *
 * Return: the EQ number.
 */
u32 tern_core_eqn(const struct tern_eq *eq)
{
	return eq->eqn;
}
EXPORT_SYMBOL_NS_GPL(tern_core_eqn, TERN);

/**
 * tern_core_comp_eq_irq() - the Linux interrupt of an EQ (for affinity hints)
 * @eq: the EQ
 *
 * Return: the IRQ number.
 */
int tern_core_comp_eq_irq(const struct tern_eq *eq)
{
	return eq->irq;
}
EXPORT_SYMBOL_NS_GPL(tern_core_comp_eq_irq, TERN);
