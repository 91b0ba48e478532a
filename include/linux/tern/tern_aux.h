/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern_core's interface to the drivers bound to its auxiliary devices (today tern_ib.ko on
 * "tern_core.rdma.<n>"). The auxiliary device exists while the PCI function is up: tern_core
 * deletes it before it resets or removes the function, so a bound driver's remove() always
 * runs while commands still work, and never has to race a reset.
 *
 * The functions are exported in the TERN symbol namespace (MODULE_IMPORT_NS(TERN)) and
 * documented where aux.c defines them. All of them may be called from the bound driver's
 * probe() until the end of its remove(); tern_core_cmd(), tern_core_comp_eq_create() and
 * tern_core_comp_eq_destroy() sleep. Event handlers run in hard interrupt context (the EQ's
 * interrupt handler, at most 64 events per interrupt; eq.c says why); the async
 * handler runs under a spinlock that tern_core_clear_async_handler() takes, so after that
 * call it is neither running nor called again. Besides the async EQ's events (types
 * 0x10..0x2f but TERN_EQE_PFC_STORM), the async handler receives one TERN_EQE_FATAL
 * (data[0]: the syndrome, ~0 when the device stopped responding) when tern_core finds the
 * device dead, from any context with interrupts disabled; the auxiliary device is deleted
 * afterwards, by the recovery.
 */
#ifndef TERN_AUX_H
#define TERN_AUX_H

#include <linux/auxiliary_bus.h>
#include <linux/netdevice.h>

#include <linux/tern/tern_hw.h>
#include <linux/tern/tern_cmd.h>

struct tern_dev;
struct tern_eq;

#define TERN_AUX_RDMA_NAME	"rdma"	/* auxiliary device "tern_core.rdma.<n>" */

/**
 * struct tern_aux_dev - an auxiliary device tern_core creates for one PCI function
 * @adev: the auxiliary device (its parent is the PCI device)
 * @tdev: the core device: the argument of every tern_core_*() call
 */
struct tern_aux_dev {
	struct auxiliary_device adev;
	struct tern_dev *tdev;
};

static inline struct tern_aux_dev *to_tern_aux_dev(struct auxiliary_device *adev)
{
	return container_of(adev, struct tern_aux_dev, adev);
}

/**
 * typedef tern_event_handler_t - receives the RDMA events of an EQ
 * @ctx: the context given at registration
 * @eqe: the event (valid during the call only)
 *
 * Called from the EQ's hard interrupt handler (the async handler also, for FATAL, from any
 * context with interrupts disabled): must not sleep; work that sleeps goes to a work item.
 */
typedef void (*tern_event_handler_t)(void *ctx, const struct tern_eqe *eqe);

int tern_core_cmd(struct tern_dev *tdev, u16 opcode, const void *in, size_t in_len,
		  void *out, size_t out_len, u32 *result);
bool tern_core_alive(struct tern_dev *tdev);
bool tern_core_roce_sr(struct tern_dev *tdev);
u8 tern_core_roce_sr_log_cap(struct tern_dev *tdev);
bool tern_core_roce_adaptive_rto(struct tern_dev *tdev);
struct device *tern_core_dma_dev(struct tern_dev *tdev);
struct net_device *tern_core_netdev(struct tern_dev *tdev);
const struct tern_cmd_query_device_out *tern_core_caps(struct tern_dev *tdev);
resource_size_t tern_core_db_page_addr(struct tern_dev *tdev, unsigned int page);
resource_size_t tern_core_clock_page_addr(struct tern_dev *tdev);
int tern_core_set_async_handler(struct tern_dev *tdev, tern_event_handler_t handler, void *ctx);
void tern_core_clear_async_handler(struct tern_dev *tdev);
int tern_core_num_comp_vectors(struct tern_dev *tdev);
struct tern_eq *tern_core_comp_eq_create(struct tern_dev *tdev, unsigned int index,
					 u8 log_depth, tern_event_handler_t handler, void *ctx);
void tern_core_comp_eq_destroy(struct tern_dev *tdev, struct tern_eq *eq);
u32 tern_core_eqn(const struct tern_eq *eq);
int tern_core_comp_eq_irq(const struct tern_eq *eq);

#endif /* TERN_AUX_H */
