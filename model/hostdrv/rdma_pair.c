/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A connected pair on a wire and the drivers' shared pieces (rdma_pair.h). */
#include <stdlib.h>

#include "rdma_pair.h"

/* ---- a connected pair on a wire ---------------------------------------------------------- */

enum wire_action wire_drop_dir0(struct wire *w, unsigned int dir, unsigned int idx,
				 uint8_t *frame, size_t *len)
{
	(void)w;
	(void)idx;
	(void)frame;
	(void)len;
	return dir == 0 ? W_DROP : W_DELIVER;
}

bool conn_setup(struct conn *c, const struct connopt *o)
{
	struct rdev *d0 = rdev_new(0), *d1 = d0 ? rdev_new(1) : NULL;

	if (!d1) {
		rdev_free(d0);
		memset(c, 0, sizeof(*c));
		return false;
	}
	return conn_setup_on(c, d0, d1, o);
}

bool conn_setup_on(struct conn *c, struct rdev *d0, struct rdev *d1, const struct connopt *o)
{
	unsigned int s;
	int st;

	memset(c, 0, sizeof(*c));
	c->o = *o;
	c->d[0] = d0;
	c->d[1] = d1;
	wire_init(&c->w, &c->d[0]->f, &c->d[1]->f);
	for (s = 0; s < 2; s++) {
		struct rdev *d = c->d[s];

		st = cq_create_flags(d, &c->cq[s], o->cq_log, o->page_list, o->cq_flags);
		if (st) {
			printf("#   conn: CREATE_CQ status %d\n", st);
			return false;
		}
		st = qp_create_type(d, &c->qp[s], o->uc ? TERN_QPT_UC : TERN_QPT_RC, d->pdn,
				    &c->cq[s], &c->cq[s], o->sq_log, o->sq_stride, o->rq_log,
				    o->rq_stride, o->qp_flags, o->page_list);
		if (st) {
			printf("#   conn: CREATE_QP status %d\n", st);
			return false;
		}
	}
	for (s = 0; s < 2; s++) {
		if (!qp_connect(c->d[s], &c->qp[s], c->d[!s], c->qp[!s].qpn, o, s))
			return false;
	}
	return true;
}

void conn_free_keep(struct conn *c)
{
	unsigned int s;

	if (c->d[0] && c->d[1])
		wire_fini(&c->w);
	for (s = 0; s < 2; s++) {
		qmem_free(&c->qp[s].sq);
		qmem_free(&c->qp[s].rq);
		qmem_free(&c->cq[s].mem);
	}
}

void conn_free(struct conn *c)
{
	unsigned int s;

	conn_free_keep(c);
	for (s = 0; s < 2; s++) {
		rdev_free(c->d[s]);
		c->d[s] = NULL;
	}
}

#define POLL_STEP_NS	20000ull

unsigned int conn_poll(struct conn *c, unsigned int s, struct wc *wc, unsigned int n,
		       uint64_t max_ns)
{
	unsigned int got = 0;
	uint64_t waited = 0;

	wire_pump(&c->w);
	for (;;) {
		while (got < n && cq_poll(c->d[s], &c->cq[s], &wc[got]))
			got++;
		if (got == n || waited >= max_ns)
			break;
		wire_advance(&c->w, POLL_STEP_NS);
		waited += POLL_STEP_NS;
	}
	if (got < n)
		printf("#   conn_poll side %u: %u of %u CQEs\n", s, got, n);
	return got;
}

/*
 * The wire fault injector of @d (TERN_CMD_SET_WIRE_FAULTS) on RoCE frames only: rates in
 * parts per million, @seed for its generator. Returns the command's status.
 */
int faults_set(struct rdev *d, uint32_t drop, uint32_t corrupt, uint32_t dup,
	       uint32_t reorder, uint64_t seed)
{
	uint8_t in[sizeof(struct tern_wire_faults)] = { 0 };

	wr32(in + OFF(struct tern_wire_faults, drop_ppm), drop);
	wr32(in + OFF(struct tern_wire_faults, corrupt_ppm), corrupt);
	wr32(in + OFF(struct tern_wire_faults, duplicate_ppm), dup);
	wr32(in + OFF(struct tern_wire_faults, reorder_ppm), reorder);
	wr32(in + OFF(struct tern_wire_faults, flags), TERN_WIRE_FAULT_F_ROCE_ONLY);
	wr64(in + OFF(struct tern_wire_faults, seed), seed);
	return rdev_cmd(d, TERN_CMD_SET_WIRE_FAULTS, in, sizeof(in), NULL, 0, NULL);
}

/* ---- the drivers' pieces the tests and the fuzzers share ------------------------------------ */
#define SRQI(f)	OFF(struct tern_cmd_create_srq_in, f)
#define QPI(f)	OFF(struct tern_cmd_create_qp_in, f)
#define RMS(f)	OFF(struct tern_reg_mr_seg, f)
#define SQE(f)	OFF(struct tern_sq_wqe, f)
#define CCP(f)	OFF(struct tern_cc_params, f)


void srq_in(struct rdev *d, uint8_t in[sizeof(struct tern_cmd_create_srq_in)],
	    const struct qmem *mem, unsigned int log, unsigned int stride)
{
	memset(in, 0, sizeof(struct tern_cmd_create_srq_in));
	wr32(in + SRQI(pdn), d->pdn);
	wr16(in + SRQI(uar), d->uar);
	in[SRQI(log_depth)] = (uint8_t)log;
	in[SRQI(log_stride)] = (uint8_t)stride;
	qmem_desc(mem, in + SRQI(mem));
}

int srq_create_ex(struct rdev *d, struct rsrq *s, unsigned int log, unsigned int stride,
		  uint32_t flags)
{
	uint8_t in[sizeof(struct tern_cmd_create_srq_in)];
	struct cqe c;
	int st;

	memset(s, 0, sizeof(*s));
	s->log = log;
	s->stride = stride;
	s->uar = d->uar;
	s->rec = flags & TERN_SRQ_F_DB_REC;
	qmem_alloc(d, &s->mem, (1ull << (log + stride)) +
	    (s->rec ? sizeof(struct tern_wq_db_rec) : 0), false);
	srq_in(d, in, &s->mem, log, stride);
	wr32(in + SRQI(flags), flags);
	st = rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c);
	if (st == TERN_CMD_OK)
		s->srqn = c.result;
	return st;
}

/* An SRQ with a record: store its producer index there (after the WQEs). */
void srq_rec_write(struct rdev *d, struct rsrq *s, uint16_t pi)
{
	uint8_t *rec = fk_ptr(&d->f, s->mem.base + (1ull << (s->log + s->stride)),
			      sizeof(struct tern_wq_db_rec));

	__atomic_thread_fence(__ATOMIC_RELEASE);
	wr16(rec + OFF(struct tern_wq_db_rec, pi), pi);
}

/* Write a receive WQE into the SRQ's next slot (no doorbell); returns the slot. */
unsigned int srq_post(struct rdev *d, struct rsrq *s, uint64_t wr_id, const struct sge *sg,
		      unsigned int nsge)
{
	unsigned int slot = s->pi & ((1u << s->log) - 1);

	write_rqe(d, &s->mem, slot, s->stride, wr_id, sg, nsge);
	s->pi++;
	return slot;
}

void srq_ring(struct rdev *d, struct rsrq *s)
{
	db64(d, s->uar, TERN_UDB_SRQ, s->srqn | (uint64_t)s->pi << TERN_UDB_PI_SHIFT);
}

/* The CREATE_QP input of a QP of @type on SRQ @srqn (RQ fields zero). */
void srq_qp_in_type(struct rdev *d, uint8_t in[sizeof(struct tern_cmd_create_qp_in)],
		    struct rqp *qp, struct rcq *cq, uint32_t srqn, uint8_t type)
{
	memset(in, 0, sizeof(struct tern_cmd_create_qp_in));
	wr32(in + QPI(pdn), d->pdn);
	wr32(in + QPI(send_cqn), cq->cqn);
	wr32(in + QPI(recv_cqn), cq->cqn);
	in[QPI(type)] = type;
	in[QPI(flags)] = TERN_QP_F_SRQ;
	wr16(in + QPI(uar), d->uar);
	in[QPI(log_sq_depth)] = (uint8_t)qp->sq_log;
	in[QPI(log_sq_stride)] = (uint8_t)qp->sq_stride;
	wr32(in + QPI(srqn), srqn);
	qmem_desc(&qp->sq, in + QPI(sq_mem));
}

int srq_qp_create_type(struct rdev *d, struct rqp *qp, struct rcq *cq, uint32_t srqn,
		       uint8_t type, struct cqe *c)
{
	uint8_t in[sizeof(struct tern_cmd_create_qp_in)];
	struct cqe cc;
	int st;

	memset(qp, 0, sizeof(*qp));
	qp->pdn = d->pdn;
	qp->scq = qp->rcq = cq;
	qp->sq_log = 6;
	qp->sq_stride = 7;
	qp->uar = d->uar;
	qp->flags = TERN_QP_F_SRQ;
	qmem_alloc(d, &qp->sq, 1ull << (6 + 7), false);
	srq_qp_in_type(d, in, qp, cq, srqn, type);
	st = rdev_cmd(d, TERN_CMD_CREATE_QP, in, sizeof(in), NULL, 0, c ? c : &cc);
	if (st == TERN_CMD_OK)
		qp->qpn = (c ? c : &cc)->result;
	return st;
}

/* CREATE_MR of a key without translation (@flags: FAST_REG or a window type): *idx. */
int key_create(struct rdev *d, uint32_t pdn, uint8_t flags, uint32_t npages,
	       uint32_t *idx)
{
	typedef struct tern_cmd_create_mr_in T;
	uint8_t in[sizeof(T)] = { 0 };
	struct cqe c;
	int st;

	wr32(in + OFF(T, pdn), pdn);
	in[OFF(T, flags)] = flags;
	in[OFF(T, key)] = 0x33;
	wr32(in + OFF(T, npages), npages);
	st = rdev_cmd(d, TERN_CMD_CREATE_MR, in, sizeof(in), NULL, 0, &c);
	if (st == TERN_CMD_OK)
		*idx = c.result;
	return st;
}

/*
 * A signaled local WQE (@opcode, @key in the header) in the next SQ slot, no doorbell;
 * returns where its segment goes (REG_MR, BIND_MW).
 */
uint8_t *post_local(struct rdev *d, struct rqp *qp, uint8_t opcode, uint64_t wr_id,
		    uint32_t key)
{
	unsigned int slot = qp->sq_pi & ((1u << qp->sq_log) - 1);
	size_t sz = 1u << qp->sq_stride;
	uint8_t *w = qmem_ptr(d, &qp->sq, (size_t)slot * sz, sz);

	memset(w, 0, sz);
	w[SQE(opcode)] = opcode;
	w[SQE(flags)] = TERN_WQE_F_SIGNALED;
	wr32(w + SQE(rkey), key);
	wr64(w + SQE(wr_id), wr_id);
	qp->sq_pi++;
	return w + sizeof(struct tern_sq_wqe);
}

/* A REG_MR WQE in the next SQ slot (no doorbell) mapping @back's pages at @iova. */
void post_reg(struct rdev *d, struct rqp *qp, uint64_t wr_id, uint32_t key,
	      const struct rmr *back, uint64_t iova, uint64_t len, uint32_t npages,
		     uint8_t access)
{
	uint8_t *g = post_local(d, qp, TERN_WQE_REG_MR, wr_id, key);

	wr64(g + RMS(iova), iova);
	wr64(g + RMS(length), len);
	wr64(g + RMS(pbl_addr), back->pbl);
	wr32(g + RMS(npages), npages);
	g[RMS(page_shift)] = 12;
	g[RMS(access)] = access;
}

/* A BIND_MW WQE in the next SQ slot (no doorbell): window key @key over @mr's [off, +len). */
void post_bind(struct rdev *d, struct rqp *qp, uint64_t wr_id, uint32_t key,
	       const struct rmr *mr, uint64_t off, uint64_t len, uint8_t access)
{
	typedef struct tern_bind_mw_seg B;
	uint8_t *g = post_local(d, qp, TERN_WQE_BIND_MW, wr_id, key);

	wr64(g + OFF(B, addr), mr->iova + off);
	wr64(g + OFF(B, length), len);
	wr32(g + OFF(B, mr_key), mr->key);
	g[OFF(B, access)] = access;
}

/* ---- helpers ----------------------------------------------------------------------------- */

void cc_defaults(uint8_t p[sizeof(struct tern_cc_params)])
{
	memset(p, 0, sizeof(struct tern_cc_params));
	p[CCP(cnp_dscp)] = 48;
	p[CCP(cnp_prio)] = 6;
	wr32(p + CCP(min_time_between_cnps), 4);
	wr32(p + CCP(rpg_time_reset), 300);
	wr32(p + CCP(rpg_byte_reset), 32767);
	wr32(p + CCP(rpg_threshold), 1);
	wr32(p + CCP(rpg_max_rate), 0);
	wr32(p + CCP(rpg_ai_rate), 5);
	wr32(p + CCP(rpg_hai_rate), 50);
	wr32(p + CCP(rpg_gd), 11);
	wr32(p + CCP(rpg_min_dec_fac), 50);
	wr32(p + CCP(rpg_min_rate), 1);
	wr32(p + CCP(rate_to_set_on_first_cnp), 0);
	wr32(p + CCP(dce_tcp_g), 1019);
	wr32(p + CCP(dce_tcp_rtt), 1);
	wr32(p + CCP(rate_reduce_monitor_period), 4);
	wr32(p + CCP(initial_alpha_value), 1023);
	p[CCP(hpcc_max_stage)] = 5;
	p[CCP(hpcc_eta)] = 950 & 0xff;
	p[CCP(hpcc_eta) + 1] = 950 >> 8;
	wr32(p + CCP(hpcc_ai_rate), 100);
	wr32(p + CCP(hpcc_base_rtt), 12000);
	p[CCP(timely_hai_thresh)] = 5;
	wr16(p + CCP(timely_alpha), 896);
	wr16(p + CCP(timely_beta), 819);
	wr32(p + CCP(timely_delta), 40);
	wr32(p + CCP(timely_t_low), 25000);
	wr32(p + CCP(timely_t_high), 100000);
	wr32(p + CCP(timely_min_rtt), 12000);
	wr32(p + CCP(timely_seg), 16384);
	wr32(p + CCP(timely_min_rate), 100);
}

int cc_set(struct fake *f, const uint8_t p[sizeof(struct tern_cc_params)], uint32_t *syndrome)
{
	struct cqe c;
	int st = drv_cmd(f, TERN_CMD_SET_CC_PARAMS, p, sizeof(struct tern_cc_params), NULL, 0, &c);

	if (syndrome)
		*syndrome = c.syndrome;
	return st;
}

void post_ud_send(struct rdev *d, struct rqp *qp, const struct rdev *peer,
		  const struct connopt *o, uint64_t wr_id, uint32_t dest_qpn, uint32_t qkey,
		  const struct sge *sg)
{
	post_ud_send_gid(d, qp, peer, o, wr_id, dest_qpn, qkey, sg, NULL);
}

void post_ud_send_gid(struct rdev *d, struct rqp *qp, const struct rdev *peer,
		      const struct connopt *o, uint64_t wr_id, uint32_t dest_qpn, uint32_t qkey,
		      const struct sge *sg, const uint8_t *dgid)
{
	size_t sz = 1u << qp->sq_stride;
	uint8_t *w = qmem_ptr(d, &qp->sq, (size_t)(qp->sq_pi & ((1u << qp->sq_log) - 1)) * sz, sz);
	uint8_t attrs[sizeof(struct tern_qp_attrs)];
	uint8_t *ud = w + sizeof(struct tern_sq_wqe);
	uint8_t *sge = ud + sizeof(struct tern_ud_seg);
	struct qpattr a;

	memset(w, 0, sz);
	w[SQE(opcode)] = TERN_WQE_SEND;
	w[SQE(flags)] = TERN_WQE_F_SIGNALED;
	w[SQE(num_sge)] = 1;
	wr64(w + SQE(wr_id), wr_id);
	memset(&a, 0, sizeof(a));
	path_fill(&a, d, peer, o);
	if (dgid) {
		memcpy(a.dgid, dgid, 16);
		memset(a.dmac, 0, 6);	/* a group's MAC: the device maps its address itself */
	}
	qpattr_encode(&a, attrs);
	memcpy(ud + OFF(struct tern_ud_seg, path), attrs + QPA(path), sizeof(struct tern_qp_path));
	wr32(ud + OFF(struct tern_ud_seg, dest_qpn), dest_qpn);
	wr32(ud + OFF(struct tern_ud_seg, qkey), qkey);
	wr64(sge + OFF(struct tern_sge, addr), sg->addr);
	wr32(sge + OFF(struct tern_sge, length), sg->len);
	wr32(sge + OFF(struct tern_sge, lkey), sg->lkey);
	qp->sq_pi++;
}

/*
 * Write an atomic WQE into the next SQ slot: header, struct tern_atomic_seg, then @nsge SGEs
 * (or, with TERN_WQE_F_INLINE in @flags, 8 bytes of inline data). No doorbell.
 */
unsigned int post_atomic_ex(struct rdev *d, struct rqp *qp, uint8_t opcode, uint8_t flags,
			    uint64_t wr_id, const struct sge *sg, unsigned int nsge,
			    uint64_t raddr, uint32_t rkey, uint64_t swap_add,
			    uint64_t compare)
{
	typedef struct tern_sq_wqe W;
	typedef struct tern_atomic_seg A;
	unsigned int slot = qp->sq_pi & ((1u << qp->sq_log) - 1), i;
	size_t sz = 1u << qp->sq_stride;
	uint8_t *w = qmem_ptr(d, &qp->sq, (size_t)slot * sz, sz);
	uint8_t *a = w + sizeof(W);

	memset(w, 0, sz);
	w[OFF(W, opcode)] = opcode;
	w[OFF(W, flags)] = flags;
	w[OFF(W, num_sge)] = (uint8_t)nsge;
	wr32(w + OFF(W, rkey), rkey);
	wr64(w + OFF(W, remote_addr), raddr);
	wr64(w + OFF(W, wr_id), wr_id);
	wr64(a + OFF(A, swap_add), swap_add);
	wr64(a + OFF(A, compare), compare);
	if (flags & TERN_WQE_F_INLINE) {
		wr32(w + OFF(W, inline_len), 8);
		wr64(a + sizeof(A), 0);
	}
	for (i = 0; i < nsge && sizeof(W) + sizeof(A) + 16 * (i + 1) <= sz; i++) {
		uint8_t *s = a + sizeof(A) + 16 * i;

		wr64(s + OFF(struct tern_sge, addr), sg[i].addr);
		wr32(s + OFF(struct tern_sge, length), sg[i].len);
		wr32(s + OFF(struct tern_sge, lkey), sg[i].lkey);
	}
	qp->sq_pi++;
	return slot;
}

unsigned int post_atomic(struct rdev *d, struct rqp *qp, uint8_t opcode, uint64_t wr_id,
			 const struct sge *sg, uint64_t raddr, uint32_t rkey,
			 uint64_t swap_add, uint64_t compare)
{
	return post_atomic_ex(d, qp, opcode, TERN_WQE_F_SIGNALED, wr_id, sg, 1, raddr, rkey,
			      swap_add, compare);
}
