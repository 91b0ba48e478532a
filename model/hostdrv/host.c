/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The fake host a model instance runs in: DMA arena, virtual clock, captured frames, MSI-X. */
#include <stdlib.h>
#include <sys/mman.h>

#include "hostdrv.h"

const uint8_t test_mac[6] = { 0x02, 0x54, 0x45, 0x52, 0x4e, 0x01 };

/* ---- fake host callbacks ------------------------------------------------------------- */

static bool fk_in(const struct fk_region *r, uint64_t addr, size_t len)
{
	return addr >= r->base && addr - r->base <= r->size && len <= r->size - (addr - r->base);
}

static struct fk_region *fk_find(struct fake *f, uint64_t addr, size_t len)
{
	int i;

	/* the region of the last hit first: DMA mostly stays in one (the data region) */
	if (f->last_region < f->nregions && fk_in(&f->regions[f->last_region], addr, len))
		return &f->regions[f->last_region];
	for (i = 0; i < f->nregions; i++) {
		if (fk_in(&f->regions[i], addr, len)) {
			f->last_region = i;
			return &f->regions[i];
		}
	}
	return NULL;
}

uint8_t *fk_ptr(struct fake *f, uint64_t addr, size_t len)
{
	struct fk_region *r = fk_find(f, addr, len);

	return r ? r->buf + (addr - r->base) : NULL;
}

static bool fk_faulty(const struct fake *f, uint64_t addr, size_t len)
{
	return f->fault_hi > f->fault_lo && addr < f->fault_hi && addr + len > f->fault_lo;
}

static void fk_reenter(struct fake *f)
{
	if (f->reenter)
		f->reenter(f);
}

/*
 * Which BAR of the device [addr, addr + len) falls in when its BARs are mapped (fk_map_self),
 * with the offset in *off; -1 when it is not all inside one.
 */
static int fk_self_bar(const struct fake *f, uint64_t addr, size_t len, uint64_t *off)
{
	static const struct { int bar; uint64_t base, size; } bars[] = {
		{ TERN_BAR_REGS, FK_SELF_BASE, TERN_BAR_REGS_SIZE },
		{ TERN_BAR_DB, FK_SELF_BASE + FK_SELF_DB, TERN_BAR_DB_SIZE },
	};
	unsigned int i;

	if (!f->self_mapped)
		return -1;
	for (i = 0; i < sizeof(bars) / sizeof(bars[0]); i++) {
		if (addr >= bars[i].base && addr - bars[i].base < bars[i].size &&
		    len <= bars[i].size - (addr - bars[i].base)) {
			*off = addr - bars[i].base;
			return bars[i].bar;
		}
	}
	return -1;
}

/* DMA that reaches the device's own BAR: whole aligned 32-bit words, as MMIO would. */
static void fk_self_access(struct fake *f, int bar, uint64_t off, uint8_t *buf, size_t len,
			   bool write)
{
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		if (write) {
			unsigned long kicks = f->total_kicks;

			f->self_writes++;
			tern_model_mmio_write(f->m, bar, off + i, rd32(buf + i), 4);
			/* as QEMU's adapter does (db_inline): a doorbell runs the model at once */
			if (bar == TERN_BAR_DB && f->total_kicks != kicks)
				tern_model_run(f->m);
		} else {
			f->self_reads++;
			wr32(buf + i, (uint32_t)tern_model_mmio_read(f->m, bar, off + i, 4));
		}
	}
	if (!write && i < len)
		memset(buf + i, 0, len - i);
}

static int fk_dma_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = opaque;
	uint8_t *p = fk_faulty(f, addr, len) ? NULL : fk_ptr(f, addr, len);
	uint64_t off;
	int bar;

	if (!p && (bar = fk_self_bar(f, addr, len, &off)) >= 0) {
		fk_self_access(f, bar, off, buf, len, false);
		fk_reenter(f);
		return 0;
	}
	if (!p) {
		f->dma_faults++;
		return -1;
	}
	memcpy(buf, p, len);
	fk_reenter(f);
	return 0;
}

static int fk_dma_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	struct fake *f = opaque;
	uint8_t *p = fk_faulty(f, addr, len) ? NULL : fk_ptr(f, addr, len);
	uint64_t off;
	int bar;

	if (!p && (bar = fk_self_bar(f, addr, len, &off)) >= 0) {
		uint8_t *tmp = malloc(len);

		if (!tmp)
			return -1;
		memcpy(tmp, buf, len);
		fk_self_access(f, bar, off, tmp, len, true);
		free(tmp);
		fk_reenter(f);
		return 0;
	}
	if (!p) {
		f->dma_faults++;
		return -1;
	}
	memcpy(p, buf, len);
	if (f->dma_watch)
		f->dma_watch(f, addr, len);
	fk_reenter(f);
	return 0;
}

static void fk_msix(void *opaque, unsigned int vector)
{
	struct fake *f = opaque;
	uint64_t off;
	int bar;

	if (vector < TERN_MAX_MSIX && vector < f->cfg.num_msix)
		f->msix[vector]++;
	else
		f->msix_bad++;
	/* the MSI-X message itself: a 32-bit write of its data to its address */
	if (vector < TERN_MAX_MSIX && f->msg_addr[vector] &&
	    (bar = fk_self_bar(f, f->msg_addr[vector], 4, &off)) >= 0) {
		uint8_t d[4];

		wr32(d, f->msg_data[vector]);
		fk_self_access(f, bar, off, d, 4, true);
	}
	fk_reenter(f);
}

static void fk_tx(void *opaque, const void *frame, size_t len)
{
	struct fake *f = opaque;
	struct fk_frame *fr;

	if (f->tx_hook) {
		f->tx_hook(f, frame, len);
		fk_reenter(f);
		return;
	}
	if (f->nframes >= f->frames_cap) {
		unsigned int cap = f->frames_cap ? f->frames_cap * 2 : 256;
		struct fk_frame *n;

		if (cap > FK_MAX_FRAMES)
			cap = FK_MAX_FRAMES;
		n = cap > f->frames_cap ? realloc(f->frames, cap * sizeof(*n)) : NULL;
		if (!n) {
			f->frames_lost++;
			return;
		}
		f->frames = n;
		f->frames_cap = cap;
	}
	fr = &f->frames[f->nframes++];
	fr->len = len;
	fr->t = f->now;
	fr->data = malloc(len + FK_FRAME_ROOM);
	if (fr->data)
		memcpy(fr->data, frame, len);
	fk_reenter(f);
}

static void fk_kick(void *opaque)
{
	struct fake *f = opaque;

	f->kicks++;
	f->total_kicks++;
	fk_reenter(f);
}

static void fk_rx_ready(void *opaque)
{
	struct fake *f = opaque;

	f->rx_ready_calls++;
	/* Like QEMU: flush the held-back frame right from the callback. */
	if (f->held_frame) {
		f->held_result = tern_model_rx_frame(f->m, f->held_frame, f->held_len);
		if (f->held_result)
			f->held_frame = NULL;
	}
}

static uint64_t fk_now(void *opaque)
{
	struct fake *f = opaque;

	return f->clock.now_ns ? f->clock.now_ns(f->clock.ctx) : f->now;
}

static void fk_timer_arm(void *opaque, uint64_t deadline)
{
	struct fake *f = opaque;

	f->deadline = deadline;
	f->timer_arms++;
	if (f->clock.timer_arm)
		f->clock.timer_arm(f->clock.ctx, deadline);
	fk_reenter(f);
}

static void fk_log(void *opaque, enum tern_model_log_level level, const char *msg)
{
	struct fake *f = opaque;

	f->logs++;
	snprintf(f->last_log, sizeof(f->last_log), "%s", msg);
	if (getenv("TERN_TEST_VERBOSE"))
		printf("# model log %d: %s\n", (int)level, msg);
	fk_reenter(f);
}

static void fk_add_region(struct fake *f, uint64_t base, size_t size)
{
	struct fk_region *r = &f->regions[f->nregions++];

	r->base = base;
	r->size = size;
	r->buf = calloc(1, size);
	if (!r->buf) {
		printf("# fatal, the test program stops: out of memory\n");
		exit(2);
	}
}

void fk_init(struct fake *f, bool test_hooks)
{
	fk_init_mac(f, test_hooks, test_mac);
}

void fk_init_mac(struct fake *f, bool test_hooks, const uint8_t mac[6])
{
	fk_init_cfg(f, test_hooks, mac, 0, FK_UNPACED);
}

void fk_init_cfg(struct fake *f, bool test_hooks, const uint8_t mac[6], uint32_t speed_mbps,
		 uint32_t tx_burst_bytes)
{
	fk_init_clock(f, test_hooks, mac, speed_mbps, tx_burst_bytes, NULL);
}

uint64_t fk_host_mem_max;

void fk_init_clock(struct fake *f, bool test_hooks, const uint8_t mac[6], uint32_t speed_mbps,
		   uint32_t tx_burst_bytes, const struct fk_clock *clock)
{
	memset(f, 0, sizeof(*f));
	if (clock)
		f->clock = *clock;
	fk_add_region(f, FK_LOW_BASE, FK_LOW_SIZE);
	fk_add_region(f, FK_HIGH_BASE, FK_HIGH_SIZE);
	f->low_next = FK_LOW_BASE + 0x1000;
	f->high_next = FK_HIGH_BASE;
	f->deadline = UINT64_MAX;
	f->now = 1000000000ull;

	f->host = (struct tern_model_host){
		.opaque = f,
		.dma_read = fk_dma_read,
		.dma_write = fk_dma_write,
		.msix_notify = fk_msix,
		.tx_frame = fk_tx,
		.kick = fk_kick,
		.rx_ready = fk_rx_ready,
		.now_ns = fk_now,
		.timer_arm = fk_timer_arm,
		.log = fk_log,
	};
	memcpy(f->cfg.mac, mac, 6);
	snprintf(f->cfg.serial, sizeof(f->cfg.serial), "SN-TEST-0001");
	f->cfg.test_hooks = test_hooks;
	f->cfg.num_msix = 8;
	f->cfg.link_speed_mbps = speed_mbps;
	f->cfg.tx_burst_bytes = tx_burst_bytes;
	f->cfg.host_mem_max = fk_host_mem_max;
	f->m = tern_model_create(&f->host, &f->cfg);
	if (!f->m) {
		printf("# fatal, the test program stops: tern_model_create failed\n");
		exit(2);
	}
	f->in_mb = fk_alloc(f, TERN_CMD_MAX_IN, 4096);
	f->out_mb = fk_alloc(f, TERN_CMD_MAX_OUT, 4096);
}

void fk_map_self(struct fake *f)
{
	f->self_mapped = true;
}

void fk_reset(struct fake *f)
{
	int i;

	tern_model_reset(f->m);
	for (i = 0; i < f->nregions; i++) {
		struct fk_region *r = &f->regions[i];
		uint64_t next = r->base == FK_LOW_BASE ? f->low_next :
				r->base == FK_HIGH_BASE ? f->high_next : f->data_next;

		if (r->base == FK_DATA_BASE)	/* zero pages again, none touched */
			madvise(r->buf, (size_t)(next - r->base + 4095) & ~(size_t)4095,
				MADV_DONTNEED);
		else
			memset(r->buf, 0, (size_t)(next - r->base));
	}
	f->low_next = FK_LOW_BASE + 0x1000;
	f->high_next = FK_HIGH_BASE;
	if (f->data_next)
		f->data_next = FK_DATA_BASE;
	fk_clear_frames(f);
	f->dma_faults = 0;
	f->deadline = UINT64_MAX;
	f->kicks = 0;
	memset(f->msix, 0, sizeof(f->msix));
	f->msix_bad = 0;
	f->held_frame = NULL;
	f->fault_lo = f->fault_hi = 0;
	f->self_mapped = false;
	memset(f->msg_addr, 0, sizeof(f->msg_addr));
	f->in_mb = fk_alloc(f, TERN_CMD_MAX_IN, 4096);
	f->out_mb = fk_alloc(f, TERN_CMD_MAX_OUT, 4096);
	f->token = 0;
	f->sq = f->cq = 0;
	f->sq_pi = f->cq_ci = 0;
}

void fk_clear_frames(struct fake *f)
{
	unsigned int i;

	for (i = 0; i < f->nframes; i++)
		free(f->frames[i].data);
	f->nframes = 0;
}

void fk_fini(struct fake *f)
{
	int i;

	tern_model_destroy(f->m);
	f->m = NULL;
	fk_clear_frames(f);
	free(f->frames);
	f->frames = NULL;
	f->frames_cap = 0;
	for (i = 0; i < f->nregions; i++) {
		if (f->regions[i].base == FK_DATA_BASE)
			munmap(f->regions[i].buf, f->regions[i].size);
		else
			free(f->regions[i].buf);
	}
	f->nregions = 0;
}

static uint64_t bump(uint64_t *next, uint64_t end, size_t size, size_t align)
{
	uint64_t a = (*next + align - 1) & ~(uint64_t)(align - 1);

	if (a + size > end) {
		printf("# fatal, the test program stops: test arena exhausted\n");
		exit(2);
	}
	*next = a + size;
	return a;
}

uint64_t fk_alloc(struct fake *f, size_t size, size_t align)
{
	return bump(&f->low_next, FK_LOW_BASE + FK_LOW_SIZE, size, align);
}

uint64_t fk_alloc_high(struct fake *f, size_t size, size_t align)
{
	return bump(&f->high_next, FK_HIGH_BASE + FK_HIGH_SIZE, size, align);
}

uint64_t fk_alloc_data(struct fake *f, size_t size, size_t align)
{
	if (!f->data_next) {
		/* mmap: zero pages on first touch, nothing to clear for the untouched bulk */
		void *p = mmap(NULL, FK_DATA_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		struct fk_region *r = &f->regions[f->nregions++];

		if (p == MAP_FAILED) {
			printf("# fatal, the test program stops: mmap of the data region failed\n");
			exit(2);
		}
		r->base = FK_DATA_BASE;
		r->size = FK_DATA_SIZE;
		r->buf = p;
		f->data_next = FK_DATA_BASE;
	}
	return bump(&f->data_next, FK_DATA_BASE + FK_DATA_SIZE, size, align);
}

void fk_run(struct fake *f)
{
	int i;

	for (i = 0; i < 100000 && f->kicks; i++) {
		f->kicks = 0;
		tern_model_run(f->m);
	}
	if (f->kicks)
		printf("# fk_run: model still kicking after 100000 runs\n");
}

void fk_advance(struct fake *f, uint64_t ns)
{
	uint64_t target = f->now + ns;
	int i;

	for (i = 0; i < 100000 && f->deadline <= target; i++) {
		if (f->deadline > f->now)
			f->now = f->deadline;
		f->deadline = UINT64_MAX;
		tern_model_timer(f->m);
		fk_run(f);
	}
	f->now = target;
	fk_run(f);
}

uint32_t rreg(struct fake *f, uint64_t off)
{
	return (uint32_t)tern_model_mmio_read(f->m, TERN_BAR_REGS, off, 4);
}

void wreg(struct fake *f, uint64_t off, uint32_t val)
{
	tern_model_mmio_write(f->m, TERN_BAR_REGS, off, val, 4);
}

void db(struct fake *f, uint64_t off, uint32_t val)
{
	tern_model_mmio_write(f->m, TERN_BAR_DB, off, val, 4);
}
