/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Over the host driver's RDMA part (rdma_drv.h), for the host unit tests and the fuzzers: a
 * connected pair of devices on a wire, the wire fault injector, and the pieces of a driver
 * (SRQs, fast registration, memory windows, UD and atomic WQEs, congestion control).
 */
#ifndef TERN_HOSTDRV_RDMA_PAIR_H
#define TERN_HOSTDRV_RDMA_PAIR_H

#include <linux/tern/tern_dcb.h>

#include "rdma_drv.h"
#include "wire.h"

/* Two devices on a wire with one RC (or UC) QP each, connected to each other. */
struct conn {
	struct rdev *d[2];
	struct wire w;
	struct rcq cq[2];
	struct rqp qp[2];
	struct connopt o;
};

/* ---- a connected pair on a wire ---------------------------------------------------------- */
/* Two new devices, CQs, QPs connected RESET->INIT->RTR->RTS; false on failure (reported). */
bool conn_setup(struct conn *c, const struct connopt *o);
/* A wire filter: every frame side 0 sends is lost, side 1's are delivered. */
enum wire_action wire_drop_dir0(struct wire *w, unsigned int dir, unsigned int idx,
				 uint8_t *frame, size_t *len);
/* conn_setup over two devices already made (rdev_new, or rdev_reset for another round). */
bool conn_setup_on(struct conn *c, struct rdev *d0, struct rdev *d1, const struct connopt *o);
void conn_free(struct conn *c);
/* conn_free but the devices (left in c->d[] to reset and use again) */
void conn_free_keep(struct conn *c);
int faults_set(struct rdev *d, uint32_t drop, uint32_t corrupt, uint32_t dup,
	       uint32_t reorder, uint64_t seed);
/* Poll @n CQEs from side @s's CQ (send and receive share one CQ per side); pumps the wire and
 * advances virtual time by at most @max_ns while waiting. Returns how many were polled. */
unsigned int conn_poll(struct conn *c, unsigned int s, struct wc *wc, unsigned int n,
		       uint64_t max_ns);

/* ---- SRQs, fast registration, memory windows, congestion control (tests and fuzzers) ---- */
struct rsrq {
	struct qmem mem;
	uint32_t srqn;
	unsigned int log, stride;
	uint16_t pi, uar;
	bool rec;		/* TERN_SRQ_F_DB_REC */
};

/* CREATE_SRQ's input for an SRQ of 2^@log entries of 2^@stride bytes in @mem. */
void srq_in(struct rdev *d, uint8_t in[sizeof(struct tern_cmd_create_srq_in)],
	    const struct qmem *mem, unsigned int log, unsigned int stride);
/* CREATE_SRQ with @flags (TERN_SRQ_F_*): the command status, @s the SRQ. */
int srq_create_ex(struct rdev *d, struct rsrq *s, unsigned int log, unsigned int stride,
		  uint32_t flags);
/* An SRQ with a record: store its producer index there (after the WQEs). */
void srq_rec_write(struct rdev *d, struct rsrq *s, uint16_t pi);
/* Write a receive WQE into the SRQ's next slot (no doorbell); returns the slot. */
unsigned int srq_post(struct rdev *d, struct rsrq *s, uint64_t wr_id, const struct sge *sg,
		      unsigned int nsge);
void srq_ring(struct rdev *d, struct rsrq *s);
/* The CREATE_QP input of a QP of @type on SRQ @srqn (RQ fields zero). */
void srq_qp_in_type(struct rdev *d, uint8_t in[sizeof(struct tern_cmd_create_qp_in)],
		    struct rqp *qp, struct rcq *cq, uint32_t srqn, uint8_t type);
/* A QP of @type on SRQ @srqn (SQ 64 x 128 B): the command status. */
int srq_qp_create_type(struct rdev *d, struct rqp *qp, struct rcq *cq, uint32_t srqn,
		       uint8_t type, struct cqe *c);
/* CREATE_MR of a key without translation (@flags: FAST_REG or a window type): *idx. */
int key_create(struct rdev *d, uint32_t pdn, uint8_t flags, uint32_t npages, uint32_t *idx);
/*
 * A signaled local WQE (@opcode, @key in the header) in the next SQ slot, no doorbell;
 * returns where its segment goes (REG_MR, BIND_MW).
 */
uint8_t *post_local(struct rdev *d, struct rqp *qp, uint8_t opcode, uint64_t wr_id,
		    uint32_t key);
/* A REG_MR WQE in the next SQ slot (no doorbell) mapping @back's pages at @iova. */
void post_reg(struct rdev *d, struct rqp *qp, uint64_t wr_id, uint32_t key,
	      const struct rmr *back, uint64_t iova, uint64_t len, uint32_t npages,
	      uint8_t access);
/* A BIND_MW WQE in the next SQ slot (no doorbell): window key @key over @mr's [off, +len). */
void post_bind(struct rdev *d, struct rqp *qp, uint64_t wr_id, uint32_t key,
	       const struct rmr *mr, uint64_t off, uint64_t len, uint8_t access);
/* A UD SEND WQE of @sg in the next SQ slot (no doorbell) to @dest_qpn, Q_Key @qkey, of
 * device @peer over the path @o gives from @d. */
void post_ud_send(struct rdev *d, struct rqp *qp, const struct rdev *peer,
		  const struct connopt *o, uint64_t wr_id, uint32_t dest_qpn, uint32_t qkey,
		  const struct sge *sg);
/* The same with the destination GID @dgid instead of @peer's (a multicast group), or @peer's
 * when @dgid is NULL. */
void post_ud_send_gid(struct rdev *d, struct rqp *qp, const struct rdev *peer,
		      const struct connopt *o, uint64_t wr_id, uint32_t dest_qpn, uint32_t qkey,
		      const struct sge *sg, const uint8_t *dgid);
/*
 * Write an atomic WQE into the next SQ slot: header, struct tern_atomic_seg, then @nsge SGEs
 * (or, with TERN_WQE_F_INLINE in @flags, 8 bytes of inline data). No doorbell.
 */
unsigned int post_atomic_ex(struct rdev *d, struct rqp *qp, uint8_t opcode, uint8_t flags,
			    uint64_t wr_id, const struct sge *sg, unsigned int nsge,
			    uint64_t raddr, uint32_t rkey, uint64_t swap_add, uint64_t compare);
/* post_atomic_ex of one SGE, signaled */
unsigned int post_atomic(struct rdev *d, struct rqp *qp, uint8_t opcode, uint64_t wr_id,
			 const struct sge *sg, uint64_t raddr, uint32_t rkey, uint64_t swap_add,
			 uint64_t compare);
/* SET_CC_PARAMS' defaults (the tests start from them), and SET_CC_PARAMS itself. */
void cc_defaults(uint8_t p[sizeof(struct tern_cc_params)]);
int cc_set(struct fake *f, const uint8_t p[sizeof(struct tern_cc_params)], uint32_t *syndrome);

#endif /* TERN_HOSTDRV_RDMA_PAIR_H */
