/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The minimal driver: command queue, EQs, Ethernet rings and port commands. */
#include "hostdrv.h"

/* ---- the driver ------------------------------------------------------------------------- */

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

	if ((e[OFF(struct tern_cmd_cqe, flags)] & TERN_CQE_PHASE) !=
	    tern_ring_phase(f->cq_ci, f->cmd_log))
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

	if ((e[OFF(struct tern_eqe, flags)] & TERN_EQE_PHASE) != tern_ring_phase(eq->ci, eq->log))
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

	if ((e[OFF(struct tern_eqe, flags)] & TERN_EQE_PHASE) != tern_ring_phase(eq->ci, eq->log))
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

void drv_ethq_arm(struct fake *f, struct drv_ring *q, bool rx)
{
	/* TX and RX descriptors keep their status in the same place. */
	_Static_assert(offsetof(struct tern_eth_txd, status) == offsetof(struct tern_eth_rxd, status),
		       "status offsets differ");

	while (q->ci != q->pi &&
	       (rd16(drv_ring_entry(f, q, q->ci) + OFF(struct tern_eth_txd, status)) &
		TERN_ETH_DESC_DONE))
		q->ci++;
	db(f, rx ? TERN_DB_ETH_RXQ_ARM(q->num) : TERN_DB_ETH_TXQ_ARM(q->num),
	   q->ci & TERN_ETH_ARM_CI_MASK);
}

bool drv_eth_stats(struct fake *f, uint8_t out[sizeof(struct tern_cmd_eth_stats_out)])
{
	return drv_cmd(f, TERN_CMD_QUERY_ETH_STATS, NULL, 0, out,
		       sizeof(struct tern_cmd_eth_stats_out), NULL) == TERN_CMD_OK;
}
