/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The RDMA part of the model's minimal host driver. */
#include <stdlib.h>

#include "rdma_drv.h"

#define SQE(f)	OFF(struct tern_sq_wqe, f)
#define RQE(f)	OFF(struct tern_rq_wqe, f)
#define SGE(f)	OFF(struct tern_sge, f)
#define CQEF(f)	OFF(struct tern_cqe, f)

/* ---- devices --------------------------------------------------------------------------------- */

int rdev_cmd(struct rdev *d, uint16_t op, const void *in, uint16_t in_len, void *out,
	     uint16_t out_len, struct cqe *c)
{
	return drv_cmd(&d->f, op, in, in_len, out, out_len, c);
}

static void rcaps_parse(struct rcaps *c, const uint8_t *o)
{
	typedef struct tern_cmd_query_rdma_out T;

	c->max_qp = rd32(o + OFF(T, max_qp));
	c->max_cq = rd32(o + OFF(T, max_cq));
	c->max_mr = rd32(o + OFF(T, max_mr));
	c->max_pd = rd32(o + OFF(T, max_pd));
	c->max_mr_size = rd64(o + OFF(T, max_mr_size));
	c->page_size_cap = rd64(o + OFF(T, page_size_cap));
	c->max_msg_size = rd32(o + OFF(T, max_msg_size));
	c->max_mr_pages = rd32(o + OFF(T, max_mr_pages));
	c->max_total_mr_pages = rd32(o + OFF(T, max_total_mr_pages));
	c->max_total_sq_wqes = rd32(o + OFF(T, max_total_sq_wqes));
	c->max_sq_log = o[OFF(T, max_sq_log_depth)];
	c->max_rq_log = o[OFF(T, max_rq_log_depth)];
	c->max_cq_log = o[OFF(T, max_cq_log_depth)];
	c->max_send_sge = o[OFF(T, max_send_sge)];
	c->max_recv_sge = o[OFF(T, max_recv_sge)];
	c->max_rd_atomic = o[OFF(T, max_rd_atomic)];
	c->max_dest_rd_atomic = o[OFF(T, max_dest_rd_atomic)];
	c->ack_delay = o[OFF(T, local_ca_ack_delay)];
	c->max_inline = rd16(o + OFF(T, max_inline));
}

struct rdev *rdev_new(unsigned int idx)
{
	return rdev_new_cfg(idx, 0, FK_UNPACED);
}

struct rdev *rdev_new_cfg(unsigned int idx, uint32_t speed_mbps, uint32_t burst)
{
	return rdev_new_clock(idx, speed_mbps, burst, NULL);
}

static bool rdev_start(struct rdev *d, unsigned int idx);

struct rdev *rdev_new_clock(unsigned int idx, uint32_t speed_mbps, uint32_t burst,
			    const struct fk_clock *clock)
{
	struct rdev *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	memcpy(d->mac, test_mac, 6);
	d->mac[5] = (uint8_t)(0x10 + idx);
	d->ip[0] = 192;
	d->ip[1] = 168;
	d->ip[2] = 100;
	d->ip[3] = (uint8_t)(1 + idx);
	d->uar = (uint16_t)(3 + idx);
	fk_init_clock(&d->f, false, d->mac, speed_mbps, burst, clock);
	if (rdev_start(d, idx))
		return d;
	rdev_free(d);
	return NULL;
}

/* The driver's part of rdev_new: command queue, EQs, port, caps, PD. */
static bool rdev_start(struct rdev *d, unsigned int idx)
{
	uint8_t out[sizeof(struct tern_cmd_query_rdma_out)];
	int st;

	d->mr_seq = 0;
	if (!d->f.m || !drv_cmdq_enable(&d->f, 6)) {
		printf("#   rdev %u: cmdq\n", idx);
		goto fail;
	}
	if (drv_eq_create(&d->f, &d->async_eq, 6, 0, TERN_EQ_F_ASYNC, false) != TERN_CMD_OK ||
	    drv_eq_create(&d->f, &d->comp_eq, 10, 1, 0, false) != TERN_CMD_OK) {
		printf("#   rdev %u: EQs\n", idx);
		goto fail;
	}
	if (drv_set_port(&d->f, 0, 9000, d->mac) != TERN_CMD_OK) {
		printf("#   rdev %u: SET_PORT\n", idx);
		goto fail;
	}
	st = rdev_cmd(d, TERN_CMD_QUERY_RDMA, NULL, 0, out, sizeof(out), NULL);
	if (st != TERN_CMD_OK) {
		printf("#   rdev %u: QUERY_RDMA status %d\n", idx, st);
		goto fail;
	}
	rcaps_parse(&d->caps, out);
	st = pd_create(d, &d->pdn);
	if (st != TERN_CMD_OK) {
		printf("#   rdev %u: CREATE_PD status %d\n", idx, st);
		goto fail;
	}
	return true;
fail:
	return false;
}

bool rdev_reset(struct rdev *d)
{
	fk_reset(&d->f);
	return rdev_start(d, d->mac[5] - 0x10u);
}

void rdev_free(struct rdev *d)
{
	if (!d)
		return;
	fk_fini(&d->f);
	free(d);
}

bool rdev_stats(struct rdev *d, uint8_t out[sizeof(struct tern_cmd_rdma_stats_out)])
{
	memset(out, 0, sizeof(struct tern_cmd_rdma_stats_out));
	return rdev_cmd(d, TERN_CMD_QUERY_RDMA_STATS, NULL, 0, out,
			sizeof(struct tern_cmd_rdma_stats_out), NULL) == TERN_CMD_OK;
}

uint64_t rdev_stat(struct rdev *d, size_t off)
{
	uint8_t out[sizeof(struct tern_cmd_rdma_stats_out)];

	if (!rdev_stats(d, out))
		return ~0ull;
	return rd64(out + off);
}

void db64(struct rdev *d, uint16_t uar, uint32_t off, uint64_t val)
{
	tern_model_mmio_write(d->f.m, TERN_BAR_DB, (uint64_t)uar * TERN_DB_PAGE_SIZE + off, val, 8);
}

int pd_create(struct rdev *d, uint32_t *pdn)
{
	struct cqe c;
	int st = rdev_cmd(d, TERN_CMD_CREATE_PD, NULL, 0, NULL, 0, &c);

	if (st == TERN_CMD_OK)
		*pdn = c.result;
	return st;
}

int pd_destroy(struct rdev *d, uint32_t pdn)
{
	uint8_t in[4];

	wr32(in, pdn);
	return rdev_cmd(d, TERN_CMD_DESTROY_PD, in, 4, NULL, 0, NULL);
}

/* ---- memory ---------------------------------------------------------------------------------- */

uint8_t pat(unsigned int seed, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)seed * 0xc2b2ae3d27d4eb4full;

	x ^= x >> 29;
	return (uint8_t)(x ^ (x >> 13) ^ (x >> 40));
}

void qmem_alloc(struct rdev *d, struct qmem *q, size_t size, bool page_list)
{
	unsigned int i;

	memset(q, 0, sizeof(*q));
	q->page_list = page_list;
	q->size = size;
	q->npages = (unsigned int)((size + 4095) / 4096);
	if (!page_list) {
		q->base = fk_alloc_data(&d->f, (size_t)q->npages * 4096, 4096);
		return;
	}
	{
		uint64_t block = fk_alloc_data(&d->f, (size_t)q->npages * 2 * 4096, 4096);
		uint8_t *list;

		q->pages = calloc(q->npages, sizeof(uint64_t));
		q->list = fk_alloc_data(&d->f, (size_t)q->npages * 8, 4096);
		list = fk_ptr(&d->f, q->list, (size_t)q->npages * 8);
		for (i = 0; i < q->npages; i++) {
			q->pages[i] = block + (uint64_t)(2 * (q->npages - 1 - i) + 1) * 4096;
			wr64(list + 8 * i, q->pages[i]);
		}
	}
}

void qmem_free(struct qmem *q)
{
	free(q->pages);
	q->pages = NULL;
}

void qmem_desc(const struct qmem *q, uint8_t desc[16])
{
	memset(desc, 0, 16);
	wr64(desc + OFF(struct tern_mem_desc, addr), q->page_list ? q->list : q->base);
	wr32(desc + OFF(struct tern_mem_desc, npages), q->npages);
	desc[OFF(struct tern_mem_desc, page_shift)] = 12;
	desc[OFF(struct tern_mem_desc, mode)] = q->page_list ? TERN_MEM_PAGE_LIST : TERN_MEM_DIRECT;
}

uint8_t *qmem_ptr(struct rdev *d, const struct qmem *q, size_t off, size_t len)
{
	if (!q->page_list)
		return fk_ptr(&d->f, q->base + off, len);
	if ((off & 4095) + len > 4096)
		return NULL;	/* entries never straddle pages */
	return fk_ptr(&d->f, q->pages[off >> 12] + (off & 4095), len);
}

int mr_create_ex(struct rdev *d, struct rmr *mr, uint32_t pdn, uint64_t len, uint32_t access,
		 unsigned int offset, unsigned int page_shift, uint8_t key)
{
	typedef struct tern_cmd_create_mr_in T;
	uint8_t in[sizeof(T)] = { 0 };
	uint64_t psz = 1ull << page_shift, block;
	size_t list_bytes;
	unsigned int k;
	struct cqe c;
	uint8_t *list;
	int st;

	memset(mr, 0, sizeof(*mr));
	mr->pdn = pdn;
	mr->access = access;
	mr->len = len;
	mr->page_shift = page_shift;
	mr->iova = 0x7f0000000000ull + ((uint64_t)++d->mr_seq << 32) + offset;
	mr->npages = (unsigned int)((offset + len + psz - 1) / psz);
	if (!mr->npages)
		mr->npages = 1;
	block = fk_alloc_data(&d->f, mr->npages * psz, psz);
	mr->pages = calloc(mr->npages, sizeof(uint64_t));
	list_bytes = ((size_t)mr->npages * 8 + 4095) & ~(size_t)4095;
	mr->pbl = fk_alloc_data(&d->f, list_bytes, 4096);
	list = fk_ptr(&d->f, mr->pbl, list_bytes);
	for (k = 0; k < mr->npages; k++) {
		/* reverse order: consecutive iova pages are never adjacent in bus space */
		mr->pages[k] = block + (uint64_t)(mr->npages - 1 - k) * psz;
		wr64(list + 8 * k, mr->pages[k]);
	}
	wr32(in + OFF(T, pdn), pdn);
	wr32(in + OFF(T, access), access);
	wr64(in + OFF(T, iova), mr->iova);
	wr64(in + OFF(T, length), len);
	in[OFF(T, key)] = key;
	in[OFF(T, page_shift)] = (uint8_t)page_shift;
	wr32(in + OFF(T, npages), mr->npages);
	wr64(in + OFF(T, pbl) + OFF(struct tern_mem_desc, addr), mr->pbl);
	wr32(in + OFF(T, pbl) + OFF(struct tern_mem_desc, npages), (uint32_t)(list_bytes / 4096));
	in[OFF(T, pbl) + OFF(struct tern_mem_desc, page_shift)] = 12;
	in[OFF(T, pbl) + OFF(struct tern_mem_desc, mode)] = TERN_MEM_DIRECT;
	st = rdev_cmd(d, TERN_CMD_CREATE_MR, in, sizeof(in), NULL, 0, &c);
	if (st == TERN_CMD_OK)
		mr->key = c.result << 8 | key;
	return st;
}

int mr_create(struct rdev *d, struct rmr *mr, uint32_t pdn, uint64_t len, uint32_t access,
	      unsigned int offset)
{
	return mr_create_ex(d, mr, pdn, len, access, offset, 12, (uint8_t)(0x5a + d->mr_seq));
}

/*
 * A CREATE_MR input (zeroed first) for @mr's pages, iova and length in @pdn with @access and
 * key byte @key: mr_register_again() and mr_rereg() describe the MR the same way.
 */
static void mr_in_fill(uint8_t *in, const struct rmr *mr, uint32_t pdn, uint32_t access,
		       uint8_t key)
{
	typedef struct tern_cmd_create_mr_in T;
	typedef struct tern_mem_desc M;

	memset(in, 0, sizeof(T));
	wr32(in + OFF(T, pdn), pdn);
	wr32(in + OFF(T, access), access);
	wr64(in + OFF(T, iova), mr->iova);
	wr64(in + OFF(T, length), mr->len);
	in[OFF(T, key)] = key;
	in[OFF(T, page_shift)] = (uint8_t)mr->page_shift;
	wr32(in + OFF(T, npages), mr->npages);
	wr64(in + OFF(T, pbl) + OFF(M, addr), mr->pbl);
	wr32(in + OFF(T, pbl) + OFF(M, npages), (mr->npages * 8 + 4095) / 4096);
	in[OFF(T, pbl) + OFF(M, page_shift)] = 12;
	in[OFF(T, pbl) + OFF(M, mode)] = TERN_MEM_DIRECT;
}

int mr_register_again(struct rdev *d, struct rmr *mr, uint32_t pdn, uint8_t key)
{
	uint8_t in[sizeof(struct tern_cmd_create_mr_in)];
	struct cqe c;
	int st;

	mr_in_fill(in, mr, pdn, mr->access, key);
	st = rdev_cmd(d, TERN_CMD_CREATE_MR, in, sizeof(in), NULL, 0, &c);
	if (st == TERN_CMD_OK) {
		mr->key = c.result << 8 | key;
		mr->pdn = pdn;
	}
	return st;
}

int mr_rereg(struct rdev *d, struct rmr *mr, uint32_t pdn, uint32_t access, uint8_t key,
	     uint32_t *syndrome)
{
	typedef struct tern_cmd_rereg_mr_in R;
	uint8_t in[sizeof(R)] = { 0 };
	struct cqe c = { 0 };
	int st;

	wr32(in + OFF(R, key), mr->key);
	mr_in_fill(in + OFF(R, mr), mr, pdn, access, key);
	st = rdev_cmd(d, TERN_CMD_REREG_MR, in, sizeof(in), NULL, 0, &c);
	if (syndrome)
		*syndrome = c.syndrome;
	if (st == TERN_CMD_OK) {
		mr->pdn = pdn;
		mr->access = access;
	}
	return st;
}

int mr_destroy(struct rdev *d, struct rmr *mr)
{
	uint8_t in[4];

	wr32(in, mr->key);
	return rdev_cmd(d, TERN_CMD_DESTROY_MR, in, 4, NULL, 0, NULL);
}

void mr_release(struct rmr *mr)
{
	free(mr->pages);
	mr->pages = NULL;
}

uint8_t *mr_ptr(struct rdev *d, const struct rmr *mr, uint64_t off)
{
	uint64_t psz = 1ull << mr->page_shift;
	uint64_t n = (mr->iova & (psz - 1)) + off;

	if (n / psz >= mr->npages)
		return NULL;
	return fk_ptr(&d->f, mr->pages[n / psz] + (n & (psz - 1)), 1);
}

/* Bytes of the MR from @off to the end of its page (at most @n), and where they live. */
static uint8_t *mr_chunk(struct rdev *d, const struct rmr *mr, uint64_t off, size_t n,
			 size_t *len)
{
	uint64_t psz = 1ull << mr->page_shift;
	uint64_t a = (mr->iova & (psz - 1)) + off;
	size_t room = (size_t)(psz - (a & (psz - 1)));

	*len = n < room ? n : room;
	if (a / psz >= mr->npages)
		return NULL;
	return fk_ptr(&d->f, mr->pages[a / psz] + (a & (psz - 1)), *len);
}

void mr_write(struct rdev *d, const struct rmr *mr, uint64_t off, const void *src, size_t n)
{
	const uint8_t *s = src;
	size_t l;

	while (n) {
		uint8_t *p = mr_chunk(d, mr, off, n, &l);

		memcpy(p, s, l);
		s += l;
		off += l;
		n -= l;
	}
}

void mr_read(struct rdev *d, const struct rmr *mr, uint64_t off, void *dst, size_t n)
{
	uint8_t *o = dst;
	size_t l;

	while (n) {
		const uint8_t *p = mr_chunk(d, mr, off, n, &l);

		memcpy(o, p, l);
		o += l;
		off += l;
		n -= l;
	}
}

void mr_fill(struct rdev *d, const struct rmr *mr, unsigned int seed)
{
	uint64_t off = 0, i;
	size_t l;

	while (off < mr->len) {
		uint8_t *p = mr_chunk(d, mr, off, (size_t)(mr->len - off), &l);

		for (i = 0; i < l; i++)
			p[i] = pat(seed, off + i);
		off += l;
	}
}

long mr_diff_pattern(struct rdev *d, const struct rmr *mr, uint64_t off, size_t n,
		     unsigned int seed, uint64_t pat_off)
{
	size_t done = 0, l, i;

	while (done < n) {
		const uint8_t *p = mr_chunk(d, mr, off + done, n - done, &l);

		for (i = 0; i < l; i++)
			if (p[i] != pat(seed, pat_off + done + i))
				return (long)(done + i);
		done += l;
	}
	return -1;
}

/* ---- CQs --------------------------------------------------------------------------------------- */

static int cq_create_any(struct rdev *d, struct rcq *cq, unsigned int log, bool page_list,
			 uint16_t eqn, uint16_t uar, uint8_t flags)
{
	typedef struct tern_cmd_create_cq_in T;
	uint8_t in[sizeof(T)] = { 0 };
	struct cqe c;
	int st;

	memset(cq, 0, sizeof(*cq));
	cq->log = log;
	cq->uar = uar;
	cq->cqe_size = (flags & TERN_CQ_F_TIMESTAMP) ? 64 : 32;
	qmem_alloc(d, &cq->mem, ((uint64_t)cq->cqe_size << log) + sizeof(struct tern_cq_ci_rec),
		   page_list);
	qmem_desc(&cq->mem, in + OFF(T, mem));
	in[OFF(T, log_depth)] = (uint8_t)log;
	in[OFF(T, flags)] = flags;
	wr16(in + OFF(T, eqn), eqn);
	wr16(in + OFF(T, uar), uar);
	st = rdev_cmd(d, TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &c);
	if (st == TERN_CMD_OK)
		cq->cqn = c.result;
	return st;
}

int cq_create_ex(struct rdev *d, struct rcq *cq, unsigned int log, bool page_list, uint16_t eqn,
		 uint16_t uar)
{
	return cq_create_any(d, cq, log, page_list, eqn, uar, 0);
}

int cq_create_flags(struct rdev *d, struct rcq *cq, unsigned int log, bool page_list,
		    uint8_t flags)
{
	return cq_create_any(d, cq, log, page_list, (uint16_t)d->comp_eq.num, d->uar, flags);
}

int cq_create(struct rdev *d, struct rcq *cq, unsigned int log, bool page_list)
{
	return cq_create_ex(d, cq, log, page_list, (uint16_t)d->comp_eq.num, d->uar);
}

int cq_resize(struct rdev *d, struct rcq *cq, unsigned int log, bool page_list)
{
	typedef struct tern_cmd_resize_cq_in T;
	uint8_t in[sizeof(T)] = { 0 };
	struct qmem mem;
	int st;

	/* the consumed CQEs are published first, as a driver does */
	wr32(qmem_ptr(d, &cq->mem, (uint64_t)cq->cqe_size << cq->log, 8) +
	     OFF(struct tern_cq_ci_rec, ci), cq->ci);
	qmem_alloc(d, &mem, ((uint64_t)cq->cqe_size << log) + sizeof(struct tern_cq_ci_rec),
		   page_list);
	qmem_desc(&mem, in + OFF(T, mem));
	wr32(in + OFF(T, cqn), cq->cqn);
	in[OFF(T, log_depth)] = (uint8_t)log;
	st = rdev_cmd(d, TERN_CMD_RESIZE_CQ, in, sizeof(in), NULL, 0, NULL);
	if (st != TERN_CMD_OK) {
		qmem_free(&mem);
		return st;
	}
	qmem_free(&cq->mem);
	cq->mem = mem;
	cq->log = log;
	cq->ci = 0;
	return st;
}

int cq_destroy(struct rdev *d, struct rcq *cq)
{
	uint8_t in[4];
	int st;

	wr32(in, cq->cqn);
	st = rdev_cmd(d, TERN_CMD_DESTROY_CQ, in, 4, NULL, 0, NULL);
	if (st == TERN_CMD_OK)
		qmem_free(&cq->mem);
	return st;
}

static void wc_parse(struct wc *w, const uint8_t *e, unsigned int cqe_size)
{
	memcpy(w->raw, e, 32);
	w->ts = cqe_size > 32 ? rd64(e + OFF(struct tern_cqe_ts, timestamp)) : 0;
	w->wr_id = rd64(e + CQEF(wr_id));
	w->byte_len = rd32(e + CQEF(byte_len));
	w->imm = (uint32_t)e[CQEF(imm_data)] << 24 | (uint32_t)e[CQEF(imm_data) + 1] << 16 |
		 (uint32_t)e[CQEF(imm_data) + 2] << 8 | e[CQEF(imm_data) + 3];
	w->qpn = rd32(e + CQEF(qpn));
	w->src_qpn = rd32(e + CQEF(src_qpn));
	w->wqe_idx = rd16(e + CQEF(wqe_idx));
	w->opcode = e[CQEF(opcode)];
	w->status = e[CQEF(status)];
	w->vendor_err = e[CQEF(vendor_err)];
	w->flags = e[CQEF(flags)];
}

static uint8_t *cq_entry(struct rdev *d, struct rcq *cq, uint32_t idx)
{
	return qmem_ptr(d, &cq->mem, (size_t)(idx & ((1u << cq->log) - 1)) * cq->cqe_size,
			cq->cqe_size);
}

bool cq_peek(struct rdev *d, struct rcq *cq)
{
	uint8_t *e = cq_entry(d, cq, cq->ci);

	return (e[CQEF(flags)] & TERN_CQE_F_PHASE) == tern_cqe_phase(cq->ci, cq->log);
}

bool cq_poll(struct rdev *d, struct rcq *cq, struct wc *wc)
{
	uint8_t *rec;

	if (!cq_peek(d, cq))
		return false;
	wc_parse(wc, cq_entry(d, cq, cq->ci), cq->cqe_size);
	cq->ci++;
	rec = qmem_ptr(d, &cq->mem, (uint64_t)cq->cqe_size << cq->log, 8);
	wr32(rec + OFF(struct tern_cq_ci_rec, ci), cq->ci);
	return true;
}

void cq_arm(struct rdev *d, struct rcq *cq, uint64_t arm)
{
	db64(d, cq->uar, TERN_UDB_CQ, tern_udb_cq(cq->cqn, cq->ci, arm));
}

/* ---- QPs --------------------------------------------------------------------------------------- */

int qp_create(struct rdev *d, struct rqp *qp, uint32_t pdn, struct rcq *scq, struct rcq *rcq,
	      unsigned int sq_log, unsigned int sq_stride, unsigned int rq_log,
	      unsigned int rq_stride, uint8_t flags, bool page_list)
{
	return qp_create_type(d, qp, TERN_QPT_RC, pdn, scq, rcq, sq_log, sq_stride, rq_log,
			      rq_stride, flags, page_list);
}

int qp_create_type(struct rdev *d, struct rqp *qp, uint8_t type, uint32_t pdn, struct rcq *scq,
		   struct rcq *rcq, unsigned int sq_log, unsigned int sq_stride,
		   unsigned int rq_log, unsigned int rq_stride, uint8_t flags, bool page_list)
{
	typedef struct tern_cmd_create_qp_in T;
	uint8_t in[sizeof(T)] = { 0 };
	struct cqe c;
	int st;

	memset(qp, 0, sizeof(*qp));
	qp->pdn = pdn;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->sq_log = sq_log;
	qp->sq_stride = sq_stride;
	qp->rq_log = rq_log;
	qp->rq_stride = rq_stride;
	qp->uar = d->uar;
	qp->flags = flags;
	qmem_alloc(d, &qp->sq, 1ull << (sq_log + sq_stride), page_list);
	qmem_alloc(d, &qp->rq, (1ull << (rq_log + rq_stride)) +
		   ((flags & TERN_QP_F_RQ_DB_REC) ? sizeof(struct tern_wq_db_rec) : 0), page_list);
	wr32(in + OFF(T, pdn), pdn);
	wr32(in + OFF(T, send_cqn), scq ? scq->cqn : 0xffffff);
	wr32(in + OFF(T, recv_cqn), rcq ? rcq->cqn : 0xffffff);
	in[OFF(T, type)] = type;
	in[OFF(T, flags)] = flags;
	wr16(in + OFF(T, uar), d->uar);
	in[OFF(T, log_sq_depth)] = (uint8_t)sq_log;
	in[OFF(T, log_sq_stride)] = (uint8_t)sq_stride;
	in[OFF(T, log_rq_depth)] = (uint8_t)rq_log;
	in[OFF(T, log_rq_stride)] = (uint8_t)rq_stride;
	qmem_desc(&qp->sq, in + OFF(T, sq_mem));
	qmem_desc(&qp->rq, in + OFF(T, rq_mem));
	st = rdev_cmd(d, TERN_CMD_CREATE_QP, in, sizeof(in), NULL, 0, &c);
	if (st == TERN_CMD_OK)
		qp->qpn = c.result;
	return st;
}

int qp_destroy(struct rdev *d, struct rqp *qp)
{
	uint8_t in[4];
	int st;

	wr32(in, qp->qpn);
	st = rdev_cmd(d, TERN_CMD_DESTROY_QP, in, 4, NULL, 0, NULL);
	if (st == TERN_CMD_OK) {
		qmem_free(&qp->sq);
		qmem_free(&qp->rq);
	}
	return st;
}

void qpattr_encode(const struct qpattr *a, uint8_t out[sizeof(struct tern_qp_attrs)])
{
	memset(out, 0, sizeof(struct tern_qp_attrs));
	out[QPA(state)] = a->state;
	out[QPA(path_mtu)] = a->path_mtu;
	out[QPA(timeout)] = a->timeout;
	out[QPA(retry_cnt)] = a->retry_cnt;
	out[QPA(rnr_retry)] = a->rnr_retry;
	out[QPA(min_rnr_timer)] = a->min_rnr_timer;
	out[QPA(max_rd_atomic)] = a->max_rd_atomic;
	out[QPA(max_dest_rd_atomic)] = a->max_dest_rd_atomic;
	wr32(out + QPA(access), a->access);
	wr32(out + QPA(dest_qpn), a->dest_qpn);
	wr32(out + QPA(rq_psn), a->rq_psn);
	wr32(out + QPA(sq_psn), a->sq_psn);
	memcpy(out + PATH(dmac), a->dmac, 6);
	memcpy(out + PATH(smac), a->smac, 6);
	wr16(out + PATH(vlan_id), a->vlan_id);
	out[PATH(ip_version)] = a->ip_version;
	out[PATH(hop_limit)] = a->hop_limit;
	out[PATH(traffic_class)] = a->traffic_class;
	out[PATH(sl)] = a->sl;
	wr32(out + PATH(flow_label), a->flow_label);
	wr16(out + PATH(udp_sport), a->udp_sport);
	memcpy(out + PATH(sgid), a->sgid, 16);
	memcpy(out + PATH(dgid), a->dgid, 16);
}

int qp_modify_raw(struct rdev *d, const uint8_t in[sizeof(struct tern_cmd_modify_qp_in)],
		  struct cqe *c)
{
	return rdev_cmd(d, TERN_CMD_MODIFY_QP, in, sizeof(struct tern_cmd_modify_qp_in), NULL, 0,
			c);
}

int qp_modify(struct rdev *d, uint32_t qpn, uint32_t mask, const struct qpattr *a, struct cqe *c)
{
	typedef struct tern_cmd_modify_qp_in T;
	uint8_t in[sizeof(T)];
	struct qpattr z;

	/* only the attributes in the mask are given; the rest are zero, as the header asks */
	memset(&z, 0, sizeof(z));
	if (mask & TERN_QP_ATTR_STATE)
		z.state = a->state;
	if (mask & TERN_QP_ATTR_ACCESS)
		z.access = a->access;
	if (mask & TERN_QP_ATTR_PATH) {
		memcpy(z.dmac, a->dmac, 6);
		memcpy(z.smac, a->smac, 6);
		z.vlan_id = a->vlan_id;
		z.ip_version = a->ip_version;
		z.hop_limit = a->hop_limit;
		z.traffic_class = a->traffic_class;
		z.sl = a->sl;
		z.flow_label = a->flow_label;
		z.udp_sport = a->udp_sport;
		memcpy(z.sgid, a->sgid, 16);
		memcpy(z.dgid, a->dgid, 16);
	}
	if (mask & TERN_QP_ATTR_PATH_MTU)
		z.path_mtu = a->path_mtu;
	if (mask & TERN_QP_ATTR_TIMEOUT)
		z.timeout = a->timeout;
	if (mask & TERN_QP_ATTR_RETRY_CNT)
		z.retry_cnt = a->retry_cnt;
	if (mask & TERN_QP_ATTR_RNR_RETRY)
		z.rnr_retry = a->rnr_retry;
	if (mask & TERN_QP_ATTR_MIN_RNR_TIMER)
		z.min_rnr_timer = a->min_rnr_timer;
	if (mask & TERN_QP_ATTR_MAX_RD_ATOMIC)
		z.max_rd_atomic = a->max_rd_atomic;
	if (mask & TERN_QP_ATTR_MAX_DEST_RD_ATOMIC)
		z.max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & TERN_QP_ATTR_DEST_QPN)
		z.dest_qpn = a->dest_qpn;
	if (mask & TERN_QP_ATTR_RQ_PSN)
		z.rq_psn = a->rq_psn;
	if (mask & TERN_QP_ATTR_SQ_PSN)
		z.sq_psn = a->sq_psn;
	memset(in, 0, sizeof(in));
	wr32(in + OFF(T, qpn), qpn);
	wr32(in + OFF(T, attr_mask), mask);
	qpattr_encode(&z, in + OFF(T, attrs));
	if (mask & TERN_QP_ATTR_XPORT)
		wr32(in + OFF(T, xport), a->xport);
	return qp_modify_raw(d, in, c);
}

int qp_query(struct rdev *d, uint32_t qpn, uint8_t out[sizeof(struct tern_cmd_query_qp_out)])
{
	uint8_t in[4];

	wr32(in, qpn);
	memset(out, 0, sizeof(struct tern_cmd_query_qp_out));
	return rdev_cmd(d, TERN_CMD_QUERY_QP, in, 4, out, sizeof(struct tern_cmd_query_qp_out),
			NULL);
}

int qp_state(struct rdev *d, uint32_t qpn)
{
	uint8_t out[sizeof(struct tern_cmd_query_qp_out)];

	if (qp_query(d, qpn, out) != TERN_CMD_OK)
		return -1;
	return out[OFF(struct tern_cmd_query_qp_out, attrs) + QPA(state)];
}

int qp_to_err(struct rdev *d, struct rqp *qp)
{
	struct qpattr a;

	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_ERR;
	return qp_modify(d, qp->qpn, TERN_QP_ATTR_STATE, &a, NULL);
}

static void gid_of(uint8_t gid[16], const struct rdev *d, uint8_t ipver)
{
	memset(gid, 0, 16);
	if (ipver == 6) {
		gid[0] = 0x20;
		gid[1] = 0x01;
		gid[2] = 0x0d;
		gid[3] = 0xb8;
		gid[15] = d->ip[3];
		return;
	}
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, d->ip, 4);
}

void path_fill(struct qpattr *a, const struct rdev *self, const struct rdev *peer,
	       const struct connopt *o)
{
	memcpy(a->dmac, peer->mac, 6);
	memcpy(a->smac, self->mac, 6);
	a->vlan_id = o->vlan_id;
	a->ip_version = o->ip_version;
	a->hop_limit = o->hop_limit;
	a->traffic_class = o->tclass;
	a->sl = o->sl;
	a->flow_label = o->ip_version == 6 ? o->flow_label : 0;
	a->udp_sport = o->sport;
	gid_of(a->sgid, self, o->ip_version);
	gid_of(a->dgid, peer, o->ip_version);
}

/* ---- work requests ------------------------------------------------------------------------- */

struct sge mr_sge(const struct rmr *mr, uint64_t off, uint32_t len)
{
	struct sge s = { .addr = mr->iova + off, .len = len, .lkey = mr->key };

	return s;
}

static uint8_t *sq_slot(struct rdev *d, struct rqp *qp, unsigned int slot)
{
	size_t sz = 1u << qp->sq_stride;

	return qmem_ptr(d, &qp->sq, (size_t)slot * sz, sz);
}

static void sq_hdr(uint8_t *w, uint8_t opcode, uint8_t flags, uint64_t wr_id, uint64_t raddr,
		   uint32_t rkey, uint32_t imm)
{
	w[SQE(opcode)] = opcode;
	w[SQE(flags)] = flags;
	w[SQE(imm_data)] = (uint8_t)(imm >> 24);
	w[SQE(imm_data) + 1] = (uint8_t)(imm >> 16);
	w[SQE(imm_data) + 2] = (uint8_t)(imm >> 8);
	w[SQE(imm_data) + 3] = (uint8_t)imm;
	wr32(w + SQE(rkey), rkey);
	wr64(w + SQE(remote_addr), raddr);
	wr64(w + SQE(wr_id), wr_id);
}

unsigned int post_send(struct rdev *d, struct rqp *qp, uint8_t opcode, uint8_t flags,
		       uint64_t wr_id, const struct sge *sg, unsigned int nsge, uint64_t raddr,
		       uint32_t rkey, uint32_t imm)
{
	unsigned int slot = qp->sq_pi & ((1u << qp->sq_log) - 1), i;
	size_t sz = 1u << qp->sq_stride;
	uint8_t *w = sq_slot(d, qp, slot);

	memset(w, 0, sz);
	sq_hdr(w, opcode, flags, wr_id, raddr, rkey, imm);
	w[SQE(num_sge)] = (uint8_t)nsge;
	for (i = 0; i < nsge && 32 + 16 * (i + 1) <= sz; i++) {
		uint8_t *s = w + 32 + 16 * i;

		wr64(s + SGE(addr), sg[i].addr);
		wr32(s + SGE(length), sg[i].len);
		wr32(s + SGE(lkey), sg[i].lkey);
	}
	qp->sq_pi++;
	return slot;
}

unsigned int post_send_inline(struct rdev *d, struct rqp *qp, uint8_t opcode, uint8_t flags,
			      uint64_t wr_id, const void *data, uint32_t len, uint64_t raddr,
			      uint32_t rkey, uint32_t imm)
{
	unsigned int slot = qp->sq_pi & ((1u << qp->sq_log) - 1);
	size_t sz = 1u << qp->sq_stride;
	uint8_t *w = sq_slot(d, qp, slot);

	memset(w, 0, sz);
	sq_hdr(w, opcode, flags | TERN_WQE_F_INLINE, wr_id, raddr, rkey, imm);
	wr32(w + SQE(inline_len), len);
	memcpy(w + 32, data, len <= sz - 32 ? len : sz - 32);
	qp->sq_pi++;
	return slot;
}

void write_rqe(struct rdev *d, const struct qmem *ring, unsigned int slot, unsigned int stride,
	       uint64_t wr_id, const struct sge *sg, unsigned int nsge)
{
	size_t sz = 1u << stride;
	uint8_t *w = qmem_ptr(d, ring, (size_t)slot * sz, sz);
	unsigned int i;

	memset(w, 0, sz);
	wr64(w + RQE(wr_id), wr_id);
	w[RQE(num_sge)] = (uint8_t)nsge;
	for (i = 0; i < nsge && 16 + 16 * (i + 1) <= sz; i++) {
		uint8_t *s = w + 16 + 16 * i;

		wr64(s + SGE(addr), sg[i].addr);
		wr32(s + SGE(length), sg[i].len);
		wr32(s + SGE(lkey), sg[i].lkey);
	}
}

unsigned int post_recv(struct rdev *d, struct rqp *qp, uint64_t wr_id, const struct sge *sg,
		       unsigned int nsge)
{
	unsigned int slot = qp->rq_pi & ((1u << qp->rq_log) - 1);

	write_rqe(d, &qp->rq, slot, qp->rq_stride, wr_id, sg, nsge);
	qp->rq_pi++;
	return slot;
}

void ring_sq(struct rdev *d, struct rqp *qp)
{
	db64(d, qp->uar, TERN_UDB_SQ, tern_udb_wq(qp->qpn, qp->sq_pi));
}

void ring_rq(struct rdev *d, struct rqp *qp)
{
	db64(d, qp->uar, TERN_UDB_RQ, tern_udb_wq(qp->qpn, qp->rq_pi));
}

void rq_rec_write(struct rdev *d, struct rqp *qp, uint16_t pi)
{
	uint8_t *rec = qmem_ptr(d, &qp->rq, 1ull << (qp->rq_log + qp->rq_stride),
				sizeof(struct tern_wq_db_rec));

	__atomic_thread_fence(__ATOMIC_RELEASE);	/* the WQEs before the record */
	wr16(rec + OFF(struct tern_wq_db_rec, pi), pi);
}

/* ---- connecting QPs -------------------------------------------------------------------------- */

/* ---- WRITE streams ------------------------------------------------------------------------- */

void wstream_post(struct rdev *d, struct wstream *w)
{
	bool rang = false;

	while (w->posted - w->completed < w->outstanding &&
	       (!w->total_bytes || w->posted * w->msg_bytes < w->total_bytes)) {
		unsigned int slot = (unsigned int)(w->posted % w->slots);
		uint32_t len = w->msg_bytes;
		struct sge sg;

		if (w->total_bytes && w->total_bytes - w->posted * w->msg_bytes < len)
			len = (uint32_t)(w->total_bytes - w->posted * w->msg_bytes);
		sg = mr_sge(w->mr, (uint64_t)slot * w->msg_bytes, len);
		post_send(d, w->qp, w->read ? TERN_WQE_RDMA_READ : TERN_WQE_RDMA_WRITE,
			  TERN_WQE_F_SIGNALED, w->posted, &sg, 1,
			  w->raddr + (uint64_t)slot * w->msg_bytes, w->rkey, 0);
		w->posted++;
		rang = true;
	}
	if (rang)
		ring_sq(d, w->qp);
}

bool wstream_poll(struct rdev *d, struct wstream *w, struct wc *wc)
{
	if (!cq_poll(d, w->cq, wc))
		return false;
	w->completed++;
	if (wc->status != TERN_CQE_OK) {
		w->errors++;
		return true;
	}
	if (w->total_bytes && w->total_bytes - w->done_bytes < w->msg_bytes)
		w->done_bytes = w->total_bytes;
	else
		w->done_bytes += w->msg_bytes;
	w->slot_done |= 1u << (wc->wr_id % w->slots);
	return true;
}

bool wstream_data_ok(struct rdev *dst, const struct rmr *rx_mr, uint64_t rx_off,
		     const struct wstream *w, unsigned int seed)
{
	unsigned int sl;

	if (!w->slot_done)
		return false;
	for (sl = 0; sl < w->slots; sl++) {
		uint64_t off = (uint64_t)sl * w->msg_bytes;
		size_t n = w->msg_bytes;

		if (!(w->slot_done & (1u << sl)))
			continue;
		/* a last, short WRITE of a sized stream fills only the start of its slot */
		if (w->total_bytes && w->total_bytes < off + n && w->posted <= w->slots)
			n = (size_t)(w->total_bytes - off);
		if (mr_diff_pattern(dst, rx_mr, rx_off + off, n, seed, off) >= 0)
			return false;
	}
	return true;
}

void connopt_default(struct connopt *o)
{
	memset(o, 0, sizeof(*o));
	o->mtu = 3;			/* 1024 */
	o->timeout = 14;		/* 67 ms: never fires in a test that does not want it */
	o->retry_cnt = 7;
	o->rnr_retry = 7;
	o->min_rnr_timer[0] = 1;	/* 10 us */
	o->min_rnr_timer[1] = 1;
	o->psn[0] = 0x123456;
	o->psn[1] = 0xabcdef;
	o->access = TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_REMOTE_READ;
	o->sq_log = 6;
	o->sq_stride = 7;
	o->rq_log = 6;
	o->rq_stride = 6;
	o->cq_log = 8;
	o->vlan_id = TERN_VLAN_NONE;
	o->ip_version = 4;
	o->hop_limit = 64;
	o->sport = 0xc123;
}

void connopt_write_flow(struct connopt *o, uint8_t mtu, uint8_t dscp)
{
	connopt_default(o);
	o->mtu = mtu;
	o->tclass = (uint8_t)(dscp << 2);	/* the model sets ECT itself when RP is on */
	o->access = TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_LOCAL_WRITE;
	o->sq_log = 6;
	o->sq_stride = 7;
	o->rq_log = 2;
	o->rq_stride = 6;
	o->cq_log = 8;
	o->rd_atomic = 1;		/* no READs; the simulators' devices do not query caps */
}

bool qp_connect(struct rdev *d, struct rqp *qp, const struct rdev *peer, uint32_t peer_qpn,
		const struct connopt *o, unsigned int s)
{
	struct qpattr a;
	struct cqe cq;
	int st;

	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_INIT;
	a.access = o->access;
	st = qp_modify(d, qp->qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_ACCESS, &a, &cq);
	if (st) {
		printf("#   conn: ->INIT status %d syndrome %u\n", st, cq.syndrome);
		return false;
	}
	a.state = TERN_QPS_RTR;
	path_fill(&a, d, peer, o);
	a.path_mtu = o->mtu;
	a.dest_qpn = peer_qpn;
	a.rq_psn = o->psn[!s];
	a.xport = o->xport;
	a.max_dest_rd_atomic = o->rd_atomic ? o->rd_atomic : d->caps.max_dest_rd_atomic;
	a.min_rnr_timer = o->min_rnr_timer[s];
	/* UC takes only the path, MTU, peer and PSN */
	st = qp_modify(d, qp->qpn,
		       TERN_QP_ATTR_STATE | TERN_QP_ATTR_PATH | TERN_QP_ATTR_PATH_MTU |
			       TERN_QP_ATTR_DEST_QPN | TERN_QP_ATTR_RQ_PSN |
			       (o->uc ? 0 : TERN_QP_ATTR_MAX_DEST_RD_ATOMIC |
				TERN_QP_ATTR_MIN_RNR_TIMER) |
			       (o->xport ? TERN_QP_ATTR_XPORT : 0),
		       &a, &cq);
	if (st) {
		printf("#   conn: ->RTR status %d syndrome %u\n", st, cq.syndrome);
		return false;
	}
	if (o->rtr_only & (1u << s))
		return true;
	a.state = TERN_QPS_RTS;
	a.sq_psn = o->psn[s];
	a.timeout = o->timeout;
	a.retry_cnt = o->retry_cnt;
	a.rnr_retry = o->rnr_retry;
	a.max_rd_atomic = o->rd_atomic ? o->rd_atomic : d->caps.max_rd_atomic;
	st = qp_modify(d, qp->qpn,
		       TERN_QP_ATTR_STATE | TERN_QP_ATTR_SQ_PSN |
			       (o->uc ? 0 : TERN_QP_ATTR_TIMEOUT | TERN_QP_ATTR_RETRY_CNT |
				TERN_QP_ATTR_RNR_RETRY | TERN_QP_ATTR_MAX_RD_ATOMIC),
		       &a, &cq);
	if (st) {
		printf("#   conn: ->RTS status %d syndrome %u\n", st, cq.syndrome);
		return false;
	}
	return true;
}

/* ---- UD and GSI QPs -------------------------------------------------------------------- */

/* CREATE_QP of @type (RQ 16 x 64 B, SQ 16 x 2^sq_stride); frees the rings on failure. */
int ud_create(struct rdev *d, struct rqp *qp, uint8_t type, struct rcq *cq,
	      unsigned int sq_stride, struct cqe *c)
{
	typedef struct tern_cmd_create_qp_in QPI;
	uint8_t in[sizeof(QPI)];
	struct cqe lc;
	int st;

	if (!c)
		c = &lc;
	memset(qp, 0, sizeof(*qp));
	qp->pdn = d->pdn;
	qp->scq = qp->rcq = cq;
	qp->sq_log = 4;
	qp->sq_stride = sq_stride;
	qp->rq_log = 4;
	qp->rq_stride = 6;
	qp->uar = d->uar;
	qmem_alloc(d, &qp->sq, 1ull << (4 + sq_stride), false);
	qmem_alloc(d, &qp->rq, 1ull << (4 + 6), false);
	memset(in, 0, sizeof(in));
	wr32(in + OFF(QPI, pdn), d->pdn);
	wr32(in + OFF(QPI, send_cqn), cq->cqn);
	wr32(in + OFF(QPI, recv_cqn), cq->cqn);
	in[OFF(QPI, type)] = type;
	wr16(in + OFF(QPI, uar), d->uar);
	in[OFF(QPI, log_sq_depth)] = 4;
	in[OFF(QPI, log_sq_stride)] = (uint8_t)sq_stride;
	in[OFF(QPI, log_rq_depth)] = 4;
	in[OFF(QPI, log_rq_stride)] = 6;
	qmem_desc(&qp->sq, in + OFF(QPI, sq_mem));
	qmem_desc(&qp->rq, in + OFF(QPI, rq_mem));
	st = rdev_cmd(d, TERN_CMD_CREATE_QP, in, sizeof(in), NULL, 0, c);
	if (st == TERN_CMD_OK) {
		qp->qpn = c->result;
	} else {
		qmem_free(&qp->sq);
		qmem_free(&qp->rq);
	}
	return st;
}

/* MODIFY_QP with the UD attributes (only those in @mask are written). */
int ud_modify(struct rdev *d, uint32_t qpn, uint32_t mask, uint8_t state, uint32_t qkey,
	      uint32_t sq_psn, struct cqe *c)
{
	typedef struct tern_cmd_modify_qp_in MQI;
	uint8_t in[sizeof(MQI)], *a = in + OFF(MQI, attrs);

	memset(in, 0, sizeof(in));
	wr32(in + OFF(MQI, qpn), qpn);
	wr32(in + OFF(MQI, attr_mask), mask);
	if (mask & TERN_QP_ATTR_STATE)
		a[QPA(state)] = state;
	if (mask & TERN_QP_ATTR_QKEY)
		wr32(a + QPA(qkey), qkey);
	if (mask & TERN_QP_ATTR_SQ_PSN)
		wr32(a + QPA(sq_psn), sq_psn);
	return qp_modify_raw(d, in, c);
}

bool ud_up(struct rdev *d, const struct rqp *qp, uint32_t qkey, uint32_t psn)
{
	return ud_modify(d, qp->qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_QKEY, TERN_QPS_INIT, qkey,
			 0, NULL) == TERN_CMD_OK &&
	       ud_modify(d, qp->qpn, TERN_QP_ATTR_STATE, TERN_QPS_RTR, 0, 0, NULL) == TERN_CMD_OK &&
	       ud_modify(d, qp->qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_SQ_PSN, TERN_QPS_RTS, 0, psn,
			 NULL) == TERN_CMD_OK;
}
