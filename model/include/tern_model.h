/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: the NIC (registers, firmware, queues, MAC) as a plain C library.
 *
 * The model knows nothing about QEMU. Whoever embeds it (the QEMU PCI adapter in
 * model/qemu/, or a host unit test) provides a struct tern_model_host with callbacks for DMA,
 * interrupts, the wire, deferred work and time, and calls the tern_model_*() entry points
 * below. The hardware interface the model implements is specified in include/linux/tern/ and
 * Documentation/hw/.
 *
 * Threading: the model is not thread-safe. Every entry point must be called from one context
 * at a time (in QEMU: with the BQL held). The model calls host callbacks only from inside
 * its entry points; host->rx_ready is called once the model has left them, and may call
 * tern_model_rx_frame() directly (QEMU flushes its queued frames from there).
 *
 * Re-entry: an embedding should not call into the model from its other callbacks, but a
 * guest can make that happen (DMA or an MSI-X message aimed at the device's own BARs, an FLR
 * through configuration space), so the model guards itself: an entry point called while
 * another runs does not run there. A BAR write is dropped and counted (self_dma_dropped), a
 * BAR read is answered, a frame is refused (0, retried after rx_ready), and run, timer, link
 * changes and resets are done once the outer entry point has finished (lib/device.c).
 */
#ifndef TERN_MODEL_H
#define TERN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tern_model;

/* Severity for tern_model_host.log (same values as syslog's LOG_ERR..LOG_DEBUG). */
enum tern_model_log_level {
	TERN_MODEL_LOG_ERR = 3,
	TERN_MODEL_LOG_WARN = 4,
	TERN_MODEL_LOG_INFO = 6,
	TERN_MODEL_LOG_DEBUG = 7,
};

struct tern_model_host {
	void *opaque;
	/*
	 * Bus-master DMA. Return 0 on success, negative on a fault (address not backed, or
	 * bus mastering disabled). The model never crashes on a fault: it reports it through the
	 * hardware interface (an error status, a counter, or a device error).
	 */
	int (*dma_read)(void *opaque, uint64_t addr, void *buf, size_t len);
	int (*dma_write)(void *opaque, uint64_t addr, const void *buf, size_t len);
	/* Raise MSI-X vector @vector (the embedding handles masking and the PBA). */
	void (*msix_notify)(void *opaque, unsigned int vector);
	/* Send one Ethernet frame (destination MAC first, no FCS) to the wire. */
	void (*tx_frame)(void *opaque, const void *frame, size_t len);
	/*
	 * The model has work to do (a doorbell was rung, a timer expired): arrange for
	 * tern_model_run() to be called soon from the model's context, not from inside this
	 * callback (in QEMU: schedule a bottom half). A kick from inside
	 * tern_model_mmio_write() may instead be served by calling tern_model_run() right after
	 * that call returns (the QEMU adapter does this for doorbells, in the vCPU's MMIO write).
	 */
	void (*kick)(void *opaque);
	/* RX buffers became available after tern_model_rx_frame() returned 0: retry queued frames. */
	void (*rx_ready)(void *opaque);
	/* Monotonic clock in nanoseconds (virtual time in QEMU or in a test). */
	uint64_t (*now_ns)(void *opaque);
	/*
	 * One-shot timer: call tern_model_timer() once now_ns() >= @deadline_ns. A new call
	 * replaces the previous deadline; UINT64_MAX cancels it.
	 */
	void (*timer_arm)(void *opaque, uint64_t deadline_ns);
	/* Optional diagnostics (firmware log); may be NULL. @msg has no trailing newline. */
	void (*log)(void *opaque, enum tern_model_log_level level, const char *msg);
};

struct tern_model_config {
	uint8_t mac[6];			/* permanent MAC address reported by QUERY_DEVICE */
	char serial[32];		/* board serial number (NUL-terminated) */
	/*
	 * Honour the test-only flags of the NOP command (fail with a chosen status, never
	 * complete). Off on a production device: those flags are then rejected as BAD_PARAM.
	 */
	bool test_hooks;
	unsigned int num_msix;		/* MSI-X vectors the embedding exposes (<= TERN_MAX_MSIX) */
	/*
	 * Line rate of the port in Mb/s (0: 25000). The MAC serializes frames at this rate, PFC
	 * quanta are timed at it, and it is DCQCN's maximum rate unless configured lower.
	 */
	uint32_t link_speed_mbps;
	/*
	 * How far (in bytes at line rate) the transmitter may run ahead of the line before it
	 * makes senders wait. 0 is exact serialization (a virtual-time simulation); an embedding
	 * whose clock is coarse or whose host is slower than the line rate (QEMU) gives a burst
	 * allowance so that pacing never costs a timer per frame (the QEMU adapter: 64 KiB).
	 */
	uint32_t tx_burst_bytes;
	/*
	 * The longest a command takes to complete, in ms, as TERN_REG_CMD_TIMEOUT states it to
	 * the driver (0: TERN_CMD_TIMEOUT_DEFAULT_MS). The firmware completes every command well
	 * within it; only the NOP's test hooks (delay, drop) go beyond.
	 */
	uint32_t cmd_timeout_ms;
	/*
	 * Host memory the device may allocate for what guest commands size (rings' page
	 * arrays, MR page lists, QP and selective-repeat state), in bytes; 0:
	 * TERN_MODEL_HOST_MEM_MAX. Commands that would pass it fail with NO_RESOURCES
	 * (Documentation/hw/rdma.rst, "Host memory"). Tests set it lower.
	 */
	uint64_t host_mem_max;
};

/* The default bound of tern_model_config.host_mem_max: 256 MiB per device. */
#define TERN_MODEL_HOST_MEM_MAX		(256ull << 20)

/* Create a device in its power-on state (STATUS.READY set, nothing created). NULL on ENOMEM. */
struct tern_model *tern_model_create(const struct tern_model_host *host,
				     const struct tern_model_config *cfg);
void tern_model_destroy(struct tern_model *m);

/* PCI-level reset (function-level reset, or the machine's reset): forget all state. */
void tern_model_reset(struct tern_model *m);

/* BAR accesses: @bar is 0 (registers) or 2 (doorbells); @size is 1, 2, 4 or 8 bytes. */
uint64_t tern_model_mmio_read(struct tern_model *m, int bar, uint64_t offset, unsigned int size);
void tern_model_mmio_write(struct tern_model *m, int bar, uint64_t offset, uint64_t value,
			   unsigned int size);

/* Do the pending work (commands, transmit, deferred completions). Call after host->kick. */
void tern_model_run(struct tern_model *m);
/* The deadline given to host->timer_arm has passed. */
void tern_model_timer(struct tern_model *m);

/*
 * A frame arrived from the wire (destination MAC first, no FCS). Returns @len when the frame
 * was consumed (delivered, or dropped and counted), or 0 when the device cannot take it now
 * (no RX buffer posted): the embedding keeps it queued and retries after host->rx_ready.
 * A zero-length frame cannot be told apart from "retry later": embeddings never pass one.
 */
size_t tern_model_rx_frame(struct tern_model *m, const void *frame, size_t len);

/* The wire's carrier changed (cable plugged/unplugged, QEMU set_link). */
void tern_model_set_link(struct tern_model *m, bool up);

/*
 * Bytes of host memory the device holds now for objects the guest created (counted against
 * tern_model_config.host_mem_max); 0 when nothing is created.
 */
uint64_t tern_model_host_mem(const struct tern_model *m);

#ifdef __cplusplus
}
#endif

#endif /* TERN_MODEL_H */
