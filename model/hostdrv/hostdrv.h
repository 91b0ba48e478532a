/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The model's minimal host driver: a host to embed a model instance in (a sparse DMA arena,
 * a virtual clock, captured TX frames and MSI-X; host.c) and a driver that works it through
 * its registers, command queue, EQs and Ethernet rings (drv.c), the way tern_core does. It
 * drives the model only through tern_model.h and include/linux/tern/. The RDMA part of the driver
 * is rdma_drv.h. Users: the model's unit tests (model/tests), its fuzz targets (model/fuzz)
 * and the incast simulator (model/fabric/sim.c).
 */
#ifndef TERN_HOSTDRV_H
#define TERN_HOSTDRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/tern/tern_hw.h>
#include <linux/tern/tern_cmd.h>

#include "tern_model.h"

/* ---- LE helpers (the driver builds hardware structures as bytes, like the model) ------ */
static inline uint16_t rd16(const void *p)
{
	const uint8_t *b = p;
	return (uint16_t)(b[0] | b[1] << 8);
}
static inline uint32_t rd32(const void *p)
{
	const uint8_t *b = p;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}
static inline uint64_t rd64(const void *p)
{
	return rd32(p) | (uint64_t)rd32((const uint8_t *)p + 4) << 32;
}
static inline void wr16(void *p, uint16_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}
static inline void wr32(void *p, uint32_t v)
{
	wr16(p, (uint16_t)v);
	wr16((uint8_t *)p + 2, (uint16_t)(v >> 16));
}
static inline void wr64(void *p, uint64_t v)
{
	wr32(p, (uint32_t)v);
	wr32((uint8_t *)p + 4, (uint32_t)(v >> 32));
}

#define OFF(type, field) offsetof(type, field)

/* ---- fake host ----------------------------------------------------------------------- */
#define FK_MAX_REGIONS	8
#define FK_MAX_FRAMES	(1u << 20)	/* captured TX frames kept before fk_clear_frames */

/* Bus addresses of the arena regions; anything else faults. */
#define FK_LOW_BASE	0x10000000ull		/* 4 MiB, below 4 GiB */
#define FK_LOW_SIZE	(4u << 20)
#define FK_HIGH_BASE	0x7f00000000ull		/* 1 MiB, above 4 GiB */
#define FK_HIGH_SIZE	(1u << 20)
#define FK_BAD_ADDR	0xdead000000ull		/* never mapped, nicely aligned */
#define FK_DATA_BASE	0x100000000000ull	/* 64 MiB for big buffers, mapped on first use */
#define FK_DATA_SIZE	(64u << 20)
/*
 * The device's own BARs as its DMA sees them, when a test maps them (fk_map_self): BAR0 at
 * FK_SELF_BASE, BAR2 at FK_SELF_BASE + FK_SELF_DB. A PCI device's DMA can reach any BAR on
 * the bus, its own included; tests aim queues and MSI-X messages there.
 */
#define FK_SELF_BASE	0xfe000000ull
#define FK_SELF_DB	0x100000ull

struct fk_region {
	uint64_t base;
	size_t size;
	uint8_t *buf;
};

/*
 * Optional: the embedding's clock and timer instead of the fake's own (f->now, f->deadline,
 * advanced by whoever runs the fake). The ns-3 device (model/ns3) runs each model on ns-3's
 * simulator clock and turns its timer into ns-3 events. With a clock, f->deadline still
 * records the last deadline armed, f->now is unused.
 */
struct fk_clock {
	void *ctx;
	uint64_t (*now_ns)(void *ctx);
	void (*timer_arm)(void *ctx, uint64_t deadline_ns);
};

struct fk_frame {
	uint64_t t;		/* virtual time it was sent */
	size_t len;
	uint8_t *data;		/* len bytes, and FK_FRAME_ROOM more a wire may grow it by */
};
#define FK_FRAME_ROOM	64

struct fake {
	struct tern_model *m;
	struct tern_model_host host;
	struct tern_model_config cfg;

	struct fk_region regions[FK_MAX_REGIONS];
	int nregions;
	int last_region;		/* fk_find's last hit */
	uint64_t low_next, high_next;	/* bump allocators */
	uint64_t data_next;		/* 0 until the data region is mapped */
	unsigned long dma_faults;

	uint64_t now;
	uint64_t deadline;		/* UINT64_MAX: not armed */
	struct fk_clock clock;		/* both NULL: the fake's own clock (now, deadline) */
	unsigned long timer_arms;
	unsigned long kicks;		/* pending kicks (cleared by fk_run) */
	unsigned long total_kicks;
	unsigned long msix[TERN_MAX_MSIX];
	unsigned long msix_bad;		/* vector out of range */

	struct fk_frame *frames;	/* grows as needed, up to FK_MAX_FRAMES */
	unsigned int frames_cap;
	unsigned int nframes;
	unsigned long frames_lost;

	unsigned long rx_ready_calls;
	/* rx_ready re-enters the model (as QEMU's qemu_flush_queued_packets does) */
	const uint8_t *held_frame;
	size_t held_len;
	size_t held_result;

	unsigned long logs;
	char last_log[256];

	/* DMA touching [fault_lo, fault_hi) fails, as if unmapped (both 0: off) */
	uint64_t fault_lo, fault_hi;

	/* optional: sees every successful DMA write (address, length), in order */
	void (*dma_watch)(struct fake *f, uint64_t addr, size_t len);
	void *watch_ctx;
	/*
	 * optional: takes every frame the device sends instead of the capture (frames[]), which
	 * then stays empty; the frame is valid only during the call (model/bench's wire)
	 */
	void (*tx_hook)(struct fake *f, const void *frame, size_t len);
	void *tx_ctx;

	/*
	 * fk_map_self: DMA at the device's own BARs reaches them, 32 bits at a time, and an
	 * MSI-X vector whose msg_addr is set writes msg_data there instead of counting only.
	 */
	bool self_mapped;
	uint64_t msg_addr[TERN_MAX_MSIX];
	uint32_t msg_data[TERN_MAX_MSIX];
	unsigned long self_writes, self_reads;

	/*
	 * optional: called from every host callback the model makes (DMA, MSI-X, frame sent,
	 * kick, timer, log), after the callback's own work: a test's way into the model from
	 * inside it, as an embedding or a guest's DMA could come back
	 */
	void (*reenter)(struct fake *f);
	void *reenter_ctx;

	/* mini driver state */
	uint64_t in_mb, out_mb;		/* command mailboxes, TERN_CMD_MAX_IN/OUT bytes */
	uint16_t token;
	unsigned int cmd_log;
	uint64_t sq, cq;
	uint16_t sq_pi;
	uint16_t cq_ci;
};

void fk_init(struct fake *f, bool test_hooks);
/* As fk_init, with another permanent MAC address (two devices on one wire). */
void fk_init_mac(struct fake *f, bool test_hooks, const uint8_t mac[6]);
/*
 * The tests written before the MAC paced transmission run unpaced: fk_init/fk_init_mac give
 * the transmitter a burst allowance of FK_UNPACED bytes (about 1.4 s of line time at 25G), so
 * no sender waits unless it runs that far ahead of the virtual clock. fk_init_cfg sets the
 * link speed (0: the model's default) and the burst allowance (0: exact serialization).
 */
#define FK_UNPACED	UINT32_MAX
void fk_init_cfg(struct fake *f, bool test_hooks, const uint8_t mac[6], uint32_t speed_mbps,
		 uint32_t tx_burst_bytes);
/*
 * tern_model_config.host_mem_max of the devices fk_init*() creates from now on (0: the
 * model's default); a test that sets it puts 0 back.
 */
extern uint64_t fk_host_mem_max;
/* fk_init_cfg on the embedding's clock and timer (@clock NULL: the fake's own). */
void fk_init_clock(struct fake *f, bool test_hooks, const uint8_t mac[6], uint32_t speed_mbps,
		   uint32_t tx_burst_bytes, const struct fk_clock *clock);
void fk_fini(struct fake *f);
/*
 * The device reset (tern_model_reset) and the host made as fk_init left it, the clock kept:
 * the arena's used memory zeroed, its allocators back at their start, the frames, counters
 * and options (faults, fk_map_self, msg_addr) cleared. Cheaper than fk_fini and fk_init
 * (the fuzzers use a device again for each input).
 */
void fk_reset(struct fake *f);
void fk_map_self(struct fake *f);	/* the device's BARs in its DMA space (FK_SELF_BASE) */
uint64_t fk_alloc(struct fake *f, size_t size, size_t align);
uint64_t fk_alloc_high(struct fake *f, size_t size, size_t align);
/* From the 64 MiB data region (FK_DATA_BASE), mapped on first use. */
uint64_t fk_alloc_data(struct fake *f, size_t size, size_t align);
uint8_t *fk_ptr(struct fake *f, uint64_t addr, size_t len);	/* NULL if not mapped */
void fk_run(struct fake *f);					/* run while kicked */
void fk_advance(struct fake *f, uint64_t ns);			/* move the clock, fire timer */
void fk_clear_frames(struct fake *f);

uint32_t rreg(struct fake *f, uint64_t off);
void wreg(struct fake *f, uint64_t off, uint32_t val);
void db(struct fake *f, uint64_t off, uint32_t val);

/* ---- the driver ----------------------------------------------------------------------- */
struct cqe {
	uint16_t token;
	uint8_t status;
	uint8_t flags;
	uint32_t syndrome;
	uint32_t result;
	uint16_t out_len;
	uint16_t sq_ci;
};

/* Enable the command queue with 2^log entries at fresh SQ/CQ addresses; true on success. */
bool drv_cmdq_enable(struct fake *f, unsigned int log);
/* Write an SQE (no doorbell). in: inline copy if in_len <= 40 else in_addr used. */
void drv_cmd_post(struct fake *f, uint16_t opcode, uint16_t token, const void *in,
		  uint16_t in_len, uint64_t in_addr, uint16_t out_len, uint64_t out_addr);
void drv_cmd_ring(struct fake *f);
/* The next completion, if the device has written it (phase check). */
bool drv_cmd_poll(struct fake *f, struct cqe *c);
/* Post one command (mailbox for long input), run, and wait for its completion. */
int drv_cmd(struct fake *f, uint16_t opcode, const void *in, uint16_t in_len, void *out,
	    uint16_t out_len, struct cqe *c);

struct drv_ring {
	uint64_t addr;		/* DIRECT base, or 0 for page lists */
	uint64_t pages[64];	/* page addresses (PAGE_LIST) */
	uint64_t list;		/* page list address */
	unsigned int npages;
	unsigned int log;
	unsigned int entry;	/* entry size */
	bool page_list;
	uint32_t num;		/* object number */
	uint32_t pi, ci;	/* driver indices */
};

/* Allocate a ring; page_list scatters 4 KiB pages in reverse order over the high region. */
void drv_ring_alloc(struct fake *f, struct drv_ring *r, unsigned int log, unsigned int entry,
		    bool page_list);
void drv_ring_desc(const struct drv_ring *r, uint8_t desc[16]);
uint8_t *drv_ring_entry(struct fake *f, const struct drv_ring *r, uint32_t idx);

/* EQs */
int drv_eq_create(struct fake *f, struct drv_ring *eq, unsigned int log, unsigned int vector,
		  uint16_t flags, bool page_list);
/* Next EQE if valid by phase; fills type/data0 and advances the driver CI. */
bool drv_eq_poll(struct fake *f, struct drv_ring *eq, uint8_t *type, uint32_t *data0);
/* Next EQE if valid by phase: the raw 16 bytes; advances the driver CI. */
bool drv_eq_poll_eqe(struct fake *f, struct drv_ring *eq, uint8_t eqe[16]);
void drv_eq_arm(struct fake *f, struct drv_ring *eq);

/* Ethernet */
int drv_ethq_create(struct fake *f, struct drv_ring *q, bool rx, unsigned int log, uint32_t eqn,
		    bool page_list);
/*
 * Move q->ci over the descriptors the device finished (DONE), as a driver's poll does, then
 * arm the queue's event with that CI (TERN_DB_ETH_TXQ_ARM/RXQ_ARM).
 */
void drv_ethq_arm(struct fake *f, struct drv_ring *q, bool rx);
int drv_set_port(struct fake *f, uint32_t flags, uint16_t mtu, const uint8_t mac[6]);
bool drv_eth_stats(struct fake *f, uint8_t out[sizeof(struct tern_cmd_eth_stats_out)]);
#define STAT(buf, field) rd64((buf) + OFF(struct tern_cmd_eth_stats_out, field))

/* The permanent MAC address fk_init() gives a device. */
extern const uint8_t test_mac[6];

#endif /* TERN_HOSTDRV_H */
