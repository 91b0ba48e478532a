/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for the tern model: the input is a script of operations (command ring
 * entries, arena writes, register/doorbell writes, time, frames, link, resets) run against
 * one device with a small DMA arena. Anything the sanitizers flag, a hang or unbounded
 * memory is a bug. tests/host/fuzz.t runs a bounded slice over model/fuzz/corpus/cmd; longer
 * by hand: `make -C model fuzz`, `model/build/fuzz-cmd NEW_DIR model/fuzz/corpus/cmd`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/tern/tern_hw.h>
#include <linux/tern/tern_cmd.h>

#include "tern_model.h"

#define ARENA_BASE	0x100000ull
#define ARENA_SIZE	0x40000u
#define SQ_ADDR		ARENA_BASE
#define CQ_ADDR		(ARENA_BASE + 0x400)
#define CMD_LOG		4

struct fz {
	struct tern_model *m;
	uint8_t arena[ARENA_SIZE];
	uint64_t now, deadline;
	int kicks;
	uint16_t sq_pi;
	uint8_t sink;
};

static uint8_t *fz_ptr(struct fz *f, uint64_t addr, size_t len)
{
	if (addr < ARENA_BASE || addr - ARENA_BASE > ARENA_SIZE || len > ARENA_SIZE - (addr - ARENA_BASE))
		return NULL;
	return f->arena + (addr - ARENA_BASE);
}

static int fz_read(void *o, uint64_t addr, void *buf, size_t len)
{
	uint8_t *p = fz_ptr(o, addr, len);

	if (!p)
		return -1;
	memcpy(buf, p, len);
	return 0;
}

static int fz_write(void *o, uint64_t addr, const void *buf, size_t len)
{
	uint8_t *p = fz_ptr(o, addr, len);

	if (!p)
		return -1;
	memcpy(p, buf, len);
	return 0;
}

static void fz_msix(void *o, unsigned int v)
{
	if (v >= TERN_MAX_MSIX)
		abort();
	(void)o;
}

static void fz_tx(void *o, const void *frame, size_t len)
{
	struct fz *f = o;

	if (len < TERN_ETH_MIN_FRAME || len > TERN_ETH_MAX_FRAME)
		abort();
	/* touch the whole frame so ASan checks it */
	f->sink ^= ((const uint8_t *)frame)[0] ^ ((const uint8_t *)frame)[len - 1];
}

static void fz_kick(void *o)
{
	((struct fz *)o)->kicks++;
}

static void fz_rx_ready(void *o)
{
	(void)o;
}

static uint64_t fz_now(void *o)
{
	return ((struct fz *)o)->now;
}

static void fz_timer(void *o, uint64_t d)
{
	((struct fz *)o)->deadline = d;
}

static void fz_run(struct fz *f)
{
	int i;

	for (i = 0; i < 64 && f->kicks; i++) {
		f->kicks = 0;
		tern_model_run(f->m);
	}
}

static size_t take(const uint8_t **d, size_t *n, void *out, size_t want)
{
	size_t k = want < *n ? want : *n;

	memset(out, 0, want);
	memcpy(out, *d, k);
	*d += k;
	*n -= k;
	return k;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f;
	struct tern_model_host host = {
		.opaque = &f, .dma_read = fz_read, .dma_write = fz_write, .msix_notify = fz_msix,
		.tx_frame = fz_tx, .kick = fz_kick, .rx_ready = fz_rx_ready, .now_ns = fz_now,
		.timer_arm = fz_timer, .log = NULL,
	};
	struct tern_model_config cfg = {
		.mac = { 0x02, 0, 0, 0, 0, 1 }, .serial = "FUZZ", .test_hooks = true, .num_msix = 4,
	};
	int ops = 0;

	memset(&f, 0, sizeof(f));
	f.deadline = UINT64_MAX;
	f.m = tern_model_create(&host, &cfg);
	if (!f.m)
		return 0;
	tern_model_mmio_write(f.m, 0, TERN_REG_CMDQ_SQ_LO, (uint32_t)SQ_ADDR, 4);
	tern_model_mmio_write(f.m, 0, TERN_REG_CMDQ_CQ_LO, (uint32_t)CQ_ADDR, 4);
	tern_model_mmio_write(f.m, 0, TERN_REG_CMDQ_CFG, TERN_CMDQ_CFG_ENABLE | CMD_LOG, 4);

	while (size && ops++ < 512) {
		uint8_t op = *data++, b[64];
		uint8_t *p;

		size--;
		switch (op % 8) {
		case 0:		/* a command ring entry, doorbell, run */
			p = f.arena + (SQ_ADDR - ARENA_BASE) + 64 * (f.sq_pi & ((1u << CMD_LOG) - 1));
			take(&data, &size, p, 64);
			f.sq_pi++;
			tern_model_mmio_write(f.m, 2, TERN_DB_CMDQ, f.sq_pi, 4);
			fz_run(&f);
			break;
		case 1:		/* 16 bytes of arena (payloads, mem descs, page lists, rings) */
			take(&data, &size, b, 18);
			p = f.arena + ((b[0] | b[1] << 8) * 16u) % (ARENA_SIZE - 16);
			memcpy(p, b + 2, 16);
			break;
		case 2:		/* register or doorbell write */
			take(&data, &size, b, 7);
			tern_model_mmio_write(f.m, b[0] & 1 ? 2 : 0, (b[0] >> 1 & 1 ? 0x1000 : 0) |
					      ((b[1] | b[2] << 8) & 0x7fc), le32(b + 3), 4);
			fz_run(&f);
			break;
		case 3:		/* time passes */
			take(&data, &size, b, 4);
			f.now += le32(b) * 64ull;
			if (f.deadline <= f.now) {
				f.deadline = UINT64_MAX;
				tern_model_timer(f.m);
			}
			fz_run(&f);
			break;
		case 4: {	/* a frame from the wire */
			static uint8_t frame[TERN_ETH_MAX_FRAME + 64];
			size_t len;

			take(&data, &size, b, 2);
			len = (b[0] | b[1] << 8) % sizeof(frame);
			memset(frame, 0xff, len < 6 ? len : 6);
			/* headers from the input (RoCEv2 needs ~58 bytes), the rest stays as is */
			take(&data, &size, frame + (len >= 6 ? 6 : len), len >= 72 ? 66 : len >= 14 ? 8 : 0);
			tern_model_rx_frame(f.m, frame, len);
			break;
		}
		case 5:
			tern_model_set_link(f.m, op & 0x80);
			break;
		case 6:
			if ((op & 0xf0) == 0x60) {
				tern_model_reset(f.m);
			} else {
				/* a 64-bit user doorbell (SQ/RQ/CQ) on a UAR page */
				take(&data, &size, b, 10);
				tern_model_mmio_write(f.m, 2, (uint64_t)(1 + b[0] % 4) * 0x1000 +
						      8 * (b[1] % 3), le32(b + 2) |
						      (uint64_t)le32(b + 6) << 32, 8);
				fz_run(&f);
			}
			break;
		case 7:		/* odd-sized MMIO */
			take(&data, &size, b, 3);
			tern_model_mmio_read(f.m, b[0] & 3 ? 0 : 2, (b[1] | b[2] << 8), 1u << (b[0] >> 2 & 3));
			tern_model_mmio_write(f.m, b[0] & 3 ? 0 : 2, (b[1] | b[2] << 8), 0,
					      1u << (b[0] >> 4 & 3));
			break;
		}
	}
	tern_model_destroy(f.m);
	return 0;
}
