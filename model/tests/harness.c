/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Fake host and mini driver for the model's host unit tests. */
#include <stdlib.h>
#include <sys/mman.h>

#include "harness.h"

int t_failures;

const uint8_t test_mac[6] = { 0x02, 0x54, 0x45, 0x52, 0x4e, 0x01 };

/* ---- fake host callbacks ------------------------------------------------------------- */

static struct fk_region *fk_find(struct fake *f, uint64_t addr, size_t len)
{
	int i;

	for (i = 0; i < f->nregions; i++) {
		struct fk_region *r = &f->regions[i];

		if (addr >= r->base && addr - r->base <= r->size && len <= r->size - (addr - r->base))
			return r;
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

static int fk_dma_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = opaque;
	uint8_t *p = fk_faulty(f, addr, len) ? NULL : fk_ptr(f, addr, len);

	if (!p) {
		f->dma_faults++;
		return -1;
	}
	memcpy(buf, p, len);
	return 0;
}

static int fk_dma_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	struct fake *f = opaque;
	uint8_t *p = fk_faulty(f, addr, len) ? NULL : fk_ptr(f, addr, len);

	if (!p) {
		f->dma_faults++;
		return -1;
	}
	memcpy(p, buf, len);
	if (f->dma_watch)
		f->dma_watch(f, addr, len);
	return 0;
}

static void fk_msix(void *opaque, unsigned int vector)
{
	struct fake *f = opaque;

	if (vector < TERN_MAX_MSIX && vector < f->cfg.num_msix)
		f->msix[vector]++;
	else
		f->msix_bad++;
}

static void fk_tx(void *opaque, const void *frame, size_t len)
{
	struct fake *f = opaque;
	struct fk_frame *fr;

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
	fr->data = malloc(len ? len : 1);
	if (fr->data)
		memcpy(fr->data, frame, len);
}

static void fk_kick(void *opaque)
{
	struct fake *f = opaque;

	f->kicks++;
	f->total_kicks++;
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
	return ((struct fake *)opaque)->now;
}

static void fk_timer_arm(void *opaque, uint64_t deadline)
{
	struct fake *f = opaque;

	f->deadline = deadline;
	f->timer_arms++;
}

static void fk_log(void *opaque, enum tern_model_log_level level, const char *msg)
{
	struct fake *f = opaque;

	f->logs++;
	snprintf(f->last_log, sizeof(f->last_log), "%s", msg);
	if (getenv("TERN_TEST_VERBOSE"))
		printf("# model log %d: %s\n", (int)level, msg);
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
	memset(f, 0, sizeof(*f));
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
	f->m = tern_model_create(&f->host, &f->cfg);
	if (!f->m) {
		printf("# fatal, the test program stops: tern_model_create failed\n");
		exit(2);
	}
	f->in_mb = fk_alloc(f, TERN_CMD_MAX_IN, 4096);
	f->out_mb = fk_alloc(f, TERN_CMD_MAX_OUT, 4096);
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

/* ---- mini driver ------------------------------------------------------------------------ */

bool drv_cmdq_enable(struct fake *f, unsigned int log)
{
	f->cmd_log = log;
	f->sq = fk_alloc(f, 64u << log, 64);
	f->cq = fk_alloc(f, 16u << log, 64);
	f->sq_pi = 0;
	f->cq_ci = 0;
	wreg(f, TERN_REG_CMDQ_SQ_LO, (uint32_t)f->sq);
	wreg(f, TERN_REG_CMDQ_SQ_HI, (uint32_t)(f->sq >> 32));
	wreg(f, TERN_REG_CMDQ_CQ_LO, (uint32_t)f->cq);
	wreg(f, TERN_REG_CMDQ_CQ_HI, (uint32_t)(f->cq >> 32));
	wreg(f, TERN_REG_CMDQ_CFG, TERN_CMDQ_CFG_ENABLE | log);
	return (rreg(f, TERN_REG_CMDQ_STATUS) & TERN_CMDQ_STATUS_ENABLED) != 0;
}

void drv_cmd_post(struct fake *f, uint16_t opcode, uint16_t token, const void *in,
		  uint16_t in_len, uint64_t in_addr, uint16_t out_len, uint64_t out_addr)
{
	unsigned int slot = f->sq_pi & ((1u << f->cmd_log) - 1);
	uint8_t *e = fk_ptr(f, f->sq + 64ull * slot, 64);

	memset(e, 0, 64);
	wr16(e + OFF(struct tern_cmd_sqe, opcode), opcode);
	wr16(e + OFF(struct tern_cmd_sqe, token), token);
	wr16(e + OFF(struct tern_cmd_sqe, in_len), in_len);
	wr16(e + OFF(struct tern_cmd_sqe, out_len), out_len);
	wr64(e + OFF(struct tern_cmd_sqe, in_addr), in_addr);
	wr64(e + OFF(struct tern_cmd_sqe, out_addr), out_addr);
	if (in && in_len <= TERN_CMD_INLINE_MAX)
		memcpy(e + OFF(struct tern_cmd_sqe, inline_in), in, in_len);
	f->sq_pi++;
}

void drv_cmd_ring(struct fake *f)
{
	db(f, TERN_DB_CMDQ, f->sq_pi);
}

bool drv_cmd_poll(struct fake *f, struct cqe *c)
{
	unsigned int slot = f->cq_ci & ((1u << f->cmd_log) - 1);
	uint8_t *e = fk_ptr(f, f->cq + 16ull * slot, 16);
	uint8_t phase = ((f->cq_ci >> f->cmd_log) & 1) ? 0 : 1;

	if ((e[OFF(struct tern_cmd_cqe, flags)] & TERN_CQE_PHASE) != phase)
		return false;
	c->token = rd16(e + OFF(struct tern_cmd_cqe, token));
	c->status = e[OFF(struct tern_cmd_cqe, status)];
	c->flags = e[OFF(struct tern_cmd_cqe, flags)];
	c->syndrome = rd32(e + OFF(struct tern_cmd_cqe, syndrome));
	c->result = rd32(e + OFF(struct tern_cmd_cqe, result));
	c->out_len = rd16(e + OFF(struct tern_cmd_cqe, out_len));
	c->sq_ci = rd16(e + OFF(struct tern_cmd_cqe, sq_ci));
	f->cq_ci++;
	return true;
}

int drv_cmd(struct fake *f, uint16_t opcode, const void *in, uint16_t in_len, void *out,
	    uint16_t out_len, struct cqe *c)
{
	struct cqe local;
	uint16_t token = ++f->token;
	uint64_t in_addr = 0;

	if (!c)
		c = &local;
	if (in_len > TERN_CMD_INLINE_MAX && in_len <= TERN_CMD_MAX_IN) {
		memcpy(fk_ptr(f, f->in_mb, in_len), in, in_len);
		in_addr = f->in_mb;
	}
	memset(fk_ptr(f, f->out_mb, TERN_CMD_MAX_OUT), 0xaa, TERN_CMD_MAX_OUT);
	drv_cmd_post(f, opcode, token, in, in_len, in_addr, out_len, out_len ? f->out_mb : 0);
	drv_cmd_ring(f);
	fk_run(f);
	if (!drv_cmd_poll(f, c)) {
		printf("#   command 0x%04x: no completion\n", opcode);
		return -1;
	}
	if (c->token != token) {
		printf("#   command 0x%04x: token %u, expected %u\n", opcode, c->token, token);
		return -1;
	}
	if (out && c->out_len && c->out_len <= out_len)
		memcpy(out, fk_ptr(f, f->out_mb, c->out_len), c->out_len);
	return c->status;
}

void drv_ring_alloc(struct fake *f, struct drv_ring *r, unsigned int log, unsigned int entry,
		    bool page_list)
{
	size_t bytes = (size_t)entry << log;
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->log = log;
	r->entry = entry;
	r->page_list = page_list;
	r->npages = (unsigned int)((bytes + 4095) / 4096);
	if (!page_list) {
		r->addr = fk_alloc(f, bytes, 4096);
		return;
	}
	/* Every other page of a block, in reverse order: nothing contiguous. */
	{
		uint64_t block = fk_alloc_high(f, (size_t)r->npages * 2 * 4096, 4096);
		uint8_t *list;

		r->list = fk_alloc(f, (size_t)r->npages * 8, 8);
		list = fk_ptr(f, r->list, (size_t)r->npages * 8);
		for (i = 0; i < r->npages; i++) {
			r->pages[i] = block + (uint64_t)(2 * (r->npages - 1 - i) + 1) * 4096;
			wr64(list + 8 * i, r->pages[i]);
		}
	}
}

void drv_ring_desc(const struct drv_ring *r, uint8_t desc[16])
{
	memset(desc, 0, 16);
	wr64(desc + OFF(struct tern_mem_desc, addr), r->page_list ? r->list : r->addr);
	wr32(desc + OFF(struct tern_mem_desc, npages), r->npages);
	desc[OFF(struct tern_mem_desc, page_shift)] = 12;
	desc[OFF(struct tern_mem_desc, mode)] = r->page_list ? TERN_MEM_PAGE_LIST : TERN_MEM_DIRECT;
}

uint8_t *drv_ring_entry(struct fake *f, const struct drv_ring *r, uint32_t idx)
{
	uint64_t off = (uint64_t)(idx & ((1u << r->log) - 1)) * r->entry;

	if (!r->page_list)
		return fk_ptr(f, r->addr + off, r->entry);
	return fk_ptr(f, r->pages[off >> 12] + (off & 4095), r->entry);
}

int drv_eq_create(struct fake *f, struct drv_ring *eq, unsigned int log, unsigned int vector,
		  uint16_t flags, bool page_list)
{
	uint8_t in[sizeof(struct tern_cmd_create_eq_in)] = { 0 };
	struct cqe c;
	int st;

	drv_ring_alloc(f, eq, log, 16, page_list);
	drv_ring_desc(eq, in + OFF(struct tern_cmd_create_eq_in, mem));
	in[OFF(struct tern_cmd_create_eq_in, log_depth)] = (uint8_t)log;
	in[OFF(struct tern_cmd_create_eq_in, msix_vector)] = (uint8_t)vector;
	wr16(in + OFF(struct tern_cmd_create_eq_in, flags), flags);
	st = drv_cmd(f, TERN_CMD_CREATE_EQ, in, sizeof(in), NULL, 0, &c);
	if (st == TERN_CMD_OK)
		eq->num = c.result;
	return st;
}

bool drv_eq_poll(struct fake *f, struct drv_ring *eq, uint8_t *type, uint32_t *data0)
{
	uint8_t *e = drv_ring_entry(f, eq, eq->ci);
	uint8_t phase = ((eq->ci >> eq->log) & 1) ? 0 : 1;

	if ((e[OFF(struct tern_eqe, flags)] & TERN_EQE_PHASE) != phase)
		return false;
	if (type)
		*type = e[OFF(struct tern_eqe, type)];
	if (data0)
		*data0 = rd32(e + OFF(struct tern_eqe, data));
	eq->ci++;
	return true;
}

bool drv_eq_poll_eqe(struct fake *f, struct drv_ring *eq, uint8_t eqe[16])
{
	uint8_t *e = drv_ring_entry(f, eq, eq->ci);
	uint8_t phase = ((eq->ci >> eq->log) & 1) ? 0 : 1;

	if ((e[OFF(struct tern_eqe, flags)] & TERN_EQE_PHASE) != phase)
		return false;
	memcpy(eqe, e, 16);
	eq->ci++;
	return true;
}

void drv_eq_arm(struct fake *f, struct drv_ring *eq)
{
	db(f, TERN_DB_EQ(eq->num), (eq->ci & TERN_EQ_DB_CI_MASK) | TERN_EQ_DB_ARM);
}

int drv_ethq_create(struct fake *f, struct drv_ring *q, bool rx, unsigned int log, uint32_t eqn,
		    bool page_list)
{
	typedef struct tern_cmd_create_eth_queue_in T;
	uint8_t in[sizeof(T)] = { 0 };
	struct cqe c;
	int st;

	drv_ring_alloc(f, q, log, 16, page_list);
	drv_ring_desc(q, in + OFF(T, mem));
	in[OFF(T, log_depth)] = (uint8_t)log;
	wr16(in + OFF(T, eqn), (uint16_t)eqn);
	st = drv_cmd(f, rx ? TERN_CMD_CREATE_ETH_RXQ : TERN_CMD_CREATE_ETH_TXQ, in, sizeof(in), NULL,
		     0, &c);
	if (st == TERN_CMD_OK)
		q->num = c.result;
	return st;
}

int drv_set_port(struct fake *f, uint32_t flags, uint16_t mtu, const uint8_t mac[6])
{
	uint8_t in[sizeof(struct tern_cmd_set_port_in)] = { 0 };

	wr32(in + OFF(struct tern_cmd_set_port_in, flags), flags);
	wr16(in + OFF(struct tern_cmd_set_port_in, mtu), mtu);
	memcpy(in + OFF(struct tern_cmd_set_port_in, mac), mac, 6);
	return drv_cmd(f, TERN_CMD_SET_PORT, in, sizeof(in), NULL, 0, NULL);
}

bool drv_eth_stats(struct fake *f, uint8_t out[sizeof(struct tern_cmd_eth_stats_out)])
{
	return drv_cmd(f, TERN_CMD_QUERY_ETH_STATS, NULL, 0, out,
		       sizeof(struct tern_cmd_eth_stats_out), NULL) == TERN_CMD_OK;
}

/* ---- wire ---------------------------------------------------------------------------------- */

void wire_init(struct wire *w, struct fake *a, struct fake *b)
{
	memset(w, 0, sizeof(*w));
	w->end[0] = a;
	w->end[1] = b;
	b->now = a->now;
}

void wire_clear_log(struct wire *w)
{
	unsigned int i;

	for (i = 0; i < w->nlog; i++)
		free(w->log[i].data);
	w->nlog = 0;
}

void wire_fini(struct wire *w)
{
	unsigned int d;

	wire_clear_log(w);
	free(w->log);
	w->log = NULL;
	w->log_cap = 0;
	for (d = 0; d < 2; d++) {
		free(w->held[d]);
		w->held[d] = NULL;
	}
}

uint64_t wire_now(const struct wire *w)
{
	return w->end[0]->now;
}

static void wire_log(struct wire *w, unsigned int dir, unsigned int idx, enum wire_action a,
		     const uint8_t *data, size_t len)
{
	struct wire_rec *r;

	if (w->nlog == w->log_cap) {
		unsigned int cap = w->log_cap ? 2 * w->log_cap : 1024;
		struct wire_rec *n = realloc(w->log, cap * sizeof(*n));

		if (!n) {
			printf("# fatal, the test program stops: out of memory\n");
			exit(2);
		}
		w->log = n;
		w->log_cap = cap;
	}
	r = &w->log[w->nlog++];
	r->dir = (uint8_t)dir;
	r->action = (uint8_t)a;
	r->idx = idx;
	r->t = wire_now(w);
	r->len = len;
	r->data = malloc(len ? len : 1);
	if (!r->data) {
		printf("# fatal, the test program stops: out of memory\n");
		exit(2);
	}
	memcpy(r->data, data, len);
}

static void wire_deliver(struct wire *w, unsigned int dir, const uint8_t *data, size_t len)
{
	if (!len)
		return;
	if (!tern_model_rx_frame(w->end[!dir]->m, data, len))
		w->refused++;
}

/* Hand one frame sent in @dir to the filter and on to the other end; takes @data. */
static void wire_one(struct wire *w, unsigned int dir, uint8_t *data, size_t len)
{
	unsigned int idx = w->sent[dir]++;
	enum wire_action a = W_DELIVER;

	if (w->filter)
		a = w->filter(w, dir, idx, data, &len);
	wire_log(w, dir, idx, a, data, len);
	switch (a) {
	case W_DROP:
		break;
	case W_DUP:
		wire_deliver(w, dir, data, len);
		wire_deliver(w, dir, data, len);
		break;
	case W_HOLD:
		if (!w->held[dir]) {
			w->held[dir] = data;
			w->held_len[dir] = len;
			return;
		}
		/* fall through: only one frame is held back at a time */
	case W_DELIVER:
	default:
		wire_deliver(w, dir, data, len);
		break;
	}
	if (w->held[dir] && a != W_HOLD) {
		uint8_t *h = w->held[dir];

		w->held[dir] = NULL;
		wire_deliver(w, dir, h, w->held_len[dir]);
		free(h);
	}
	free(data);
}

void wire_pump(struct wire *w)
{
	unsigned int i, d, n;
	bool moved;
	int iter;

	for (iter = 0; iter < 1000000; iter++) {
		moved = false;
		for (d = 0; d < 2; d++) {
			if (w->end[d]->kicks) {
				fk_run(w->end[d]);
				moved = true;
			}
		}
		for (d = 0; d < 2; d++) {
			struct fake *src = w->end[d];
			struct fk_frame *fr;

			n = src->nframes;
			if (!n)
				continue;
			/* take the batch: delivering may make the other end transmit */
			fr = src->frames;
			src->frames = NULL;
			src->frames_cap = 0;
			src->nframes = 0;
			for (i = 0; i < n; i++)
				wire_one(w, d, fr[i].data, fr[i].len);
			free(fr);
			moved = true;
		}
		if (moved)
			continue;
		/* quiet: a frame held back for reordering arrives late after all */
		for (d = 0; d < 2; d++) {
			if (w->held[d]) {
				uint8_t *h = w->held[d];

				w->held[d] = NULL;
				wire_deliver(w, d, h, w->held_len[d]);
				free(h);
				moved = true;
			}
		}
		if (!moved)
			return;
	}
	printf("# wire_pump: still busy after 1000000 rounds\n");
}

void wire_advance(struct wire *w, uint64_t ns)
{
	uint64_t target = wire_now(w) + ns;
	unsigned int d;
	int iter;

	wire_pump(w);
	for (iter = 0; iter < 1000000; iter++) {
		uint64_t dl = w->end[0]->deadline < w->end[1]->deadline ? w->end[0]->deadline
									: w->end[1]->deadline;

		if (dl > target)
			break;
		if (dl > wire_now(w))
			w->end[0]->now = w->end[1]->now = dl;
		for (d = 0; d < 2; d++) {
			if (w->end[d]->deadline <= wire_now(w)) {
				w->end[d]->deadline = UINT64_MAX;
				tern_model_timer(w->end[d]->m);
			}
		}
		wire_pump(w);
	}
	w->end[0]->now = w->end[1]->now = target;
	wire_pump(w);
}
