/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RDMA part of the model's minimal host driver: PD, MR over scattered host pages, CQ
 * (ring and CI record), QPs of every type and their WQE rings, UAR doorbells, QP connection.
 * Built only on include/linux/tern/ headers and tern_model.h, like a driver.
 */
#ifndef TERN_HOSTDRV_RDMA_DRV_H
#define TERN_HOSTDRV_RDMA_DRV_H

#include <linux/tern/tern_rdma.h>

#include "hostdrv.h"

#define QPA(f)	OFF(struct tern_qp_attrs, f)
#define PATH(f)	(OFF(struct tern_qp_attrs, path) + OFF(struct tern_qp_path, f))

struct rcaps {
	uint32_t max_qp, max_cq, max_mr, max_pd;
	uint64_t max_mr_size, page_size_cap;
	uint32_t max_msg_size, max_mr_pages, max_total_mr_pages, max_total_sq_wqes;
	uint8_t max_sq_log, max_rq_log, max_cq_log, max_send_sge, max_recv_sge;
	uint8_t max_rd_atomic, max_dest_rd_atomic, ack_delay;
	uint16_t max_inline;
};

/* One device with its driver state. */
struct rdev {
	struct fake f;
	struct drv_ring async_eq;	/* TERN_EQ_F_ASYNC, vector 0 */
	struct drv_ring comp_eq;	/* CQ events, vector 1 */
	struct rcaps caps;
	uint8_t mac[6];
	uint8_t ip[4];
	uint32_t pdn;
	uint16_t uar;
	uint32_t mr_seq;	/* gives each MR its own iova range */
};

/* Host memory of a queue: DIRECT or a scattered page list (4 KiB pages). */
struct qmem {
	bool page_list;
	size_t size;
	unsigned int npages;
	uint64_t base;		/* DIRECT */
	uint64_t *pages;	/* PAGE_LIST */
	uint64_t list;
};

struct rmr {
	uint32_t key;
	uint32_t pdn;
	uint32_t access;
	uint64_t iova;
	uint64_t len;
	unsigned int page_shift;
	unsigned int npages;
	uint64_t *pages;
	uint64_t pbl;
};

struct rcq {
	struct qmem mem;
	unsigned int log;
	uint32_t cqn;
	uint32_t ci;
	uint16_t uar;
	unsigned int cqe_size;	/* 32, or 64 with TERN_CQ_F_TIMESTAMP */
};

struct rqp {
	uint32_t qpn;
	uint32_t pdn;
	struct rcq *scq, *rcq;
	struct qmem sq, rq;
	unsigned int sq_log, sq_stride, rq_log, rq_stride;
	uint16_t sq_pi, rq_pi;
	uint16_t uar;
	uint8_t flags;
};

/* A parsed work completion. */
struct wc {
	uint64_t wr_id;
	uint32_t byte_len;
	uint32_t imm;		/* as on the wire: big-endian bytes read as a number */
	uint32_t qpn, src_qpn;
	uint16_t wqe_idx;
	uint8_t opcode, status, vendor_err, flags;
	uint8_t raw[32];
	uint64_t ts;		/* 64-byte CQEs: the completion timestamp */
};

/* QP attributes as a test writes them (encoded by qp_modify). */
struct qpattr {
	uint8_t state, path_mtu, timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic, max_dest_rd_atomic;
	uint32_t access, dest_qpn, rq_psn, sq_psn;
	uint8_t dmac[6], smac[6];
	uint16_t vlan_id;
	uint8_t ip_version, hop_limit, traffic_class, sl;
	uint32_t flow_label;
	uint16_t udp_sport;
	uint8_t sgid[16], dgid[16];
	uint32_t xport;		/* TERN_QP_ATTR_XPORT: tern_cmd_modify_qp_in.xport */
};

/* Connection options for qp_connect() (and the tests' conn_setup()). */
struct connopt {
	uint8_t mtu;			/* IB encoding 1..5 */
	uint8_t timeout, retry_cnt, rnr_retry;
	uint8_t min_rnr_timer[2];	/* per side (sent in that side's RNR NAKs) */
	uint32_t psn[2];		/* first PSN each side sends */
	uint32_t access;		/* responder access of both QPs */
	unsigned int sq_log, sq_stride, rq_log, rq_stride, cq_log;
	uint8_t qp_flags;
	uint16_t vlan_id;
	uint8_t sl;
	uint8_t ip_version;
	uint8_t tclass;
	uint8_t hop_limit;
	uint32_t flow_label;
	uint16_t sport;
	bool page_list;
	uint8_t rd_atomic;		/* max_rd_atomic and max_dest_rd_atomic; 0: the caps */
	uint8_t rtr_only;		/* bit s: leave side s in RTR */
	bool uc;			/* UC QPs (UC attributes only) instead of RC */
	uint32_t xport;			/* TERN_QP_XPORT_* of both QPs (0: not given at RTR) */
	uint8_t cq_flags;		/* TERN_CQ_F_* of both CQs */
};

/* rdma stats field by name */
#define RSTAT(buf, field) rd64((buf) + OFF(struct tern_cmd_rdma_stats_out, field))

/* ---- devices and commands ----------------------------------------------------------------- */
/* Device @idx (0 or 1; own MAC and IP), cmdq, async EQ, completion EQ, port MTU 9000, caps,
 * one PD. Allocated on the heap (the fake host is large). NULL if anything failed. */
struct rdev *rdev_new(unsigned int idx);
/* rdev_new() with a line rate (0: the default) and a transmit burst allowance (0: exact
 * serialization; FK_UNPACED: the unpaced MAC rdev_new() gives). */
struct rdev *rdev_new_cfg(unsigned int idx, uint32_t speed_mbps, uint32_t burst);
/* rdev_new_cfg() on the embedding's clock and timer (fk_init_clock; NULL: the fake's own). */
struct rdev *rdev_new_clock(unsigned int idx, uint32_t speed_mbps, uint32_t burst,
			    const struct fk_clock *clock);
void rdev_free(struct rdev *d);
/* The device reset and brought up again as rdev_new left it (fk_reset): false on failure. */
bool rdev_reset(struct rdev *d);
int rdev_cmd(struct rdev *d, uint16_t op, const void *in, uint16_t in_len, void *out,
	     uint16_t out_len, struct cqe *c);
bool rdev_stats(struct rdev *d, uint8_t out[sizeof(struct tern_cmd_rdma_stats_out)]);
uint64_t rdev_stat(struct rdev *d, size_t off);
#define RDEV_STAT(d, field) rdev_stat(d, OFF(struct tern_cmd_rdma_stats_out, field))
void db64(struct rdev *d, uint16_t uar, uint32_t off, uint64_t val);

int pd_create(struct rdev *d, uint32_t *pdn);
int pd_destroy(struct rdev *d, uint32_t pdn);

/* MR of @len bytes at an iova with @offset into its first page, pages scattered. */
int mr_create(struct rdev *d, struct rmr *mr, uint32_t pdn, uint64_t len, uint32_t access,
	      unsigned int offset);
int mr_create_ex(struct rdev *d, struct rmr *mr, uint32_t pdn, uint64_t len, uint32_t access,
		 unsigned int offset, unsigned int page_shift, uint8_t key);
int mr_destroy(struct rdev *d, struct rmr *mr);
/* CREATE_MR again over @mr's pages, iova and length (after DESTROY_MR, as a driver reusing
 * its memory would), in @pdn with key byte @key: @mr takes the new key and PD. */
int mr_register_again(struct rdev *d, struct rmr *mr, uint32_t pdn, uint8_t key);
/*
 * REREG_MR of @mr over its pages, iova and length, in @pdn with @access, the CREATE_MR input's
 * key byte @key (the MR's own for it to work): @mr takes the PD and rights when it works;
 * *@syndrome (may be NULL) the command's syndrome.
 */
int mr_rereg(struct rdev *d, struct rmr *mr, uint32_t pdn, uint32_t access, uint8_t key,
	     uint32_t *syndrome);
void mr_release(struct rmr *mr);	/* host side only */
uint8_t *mr_ptr(struct rdev *d, const struct rmr *mr, uint64_t off);	/* byte iova+off */
void mr_write(struct rdev *d, const struct rmr *mr, uint64_t off, const void *src, size_t n);
void mr_read(struct rdev *d, const struct rmr *mr, uint64_t off, void *dst, size_t n);
void mr_fill(struct rdev *d, const struct rmr *mr, unsigned int seed);
/* First offset in [off, off+n) whose byte differs from pattern @seed at @pat_off + i, or -1. */
long mr_diff_pattern(struct rdev *d, const struct rmr *mr, uint64_t off, size_t n,
		     unsigned int seed, uint64_t pat_off);
uint8_t pat(unsigned int seed, uint64_t i);

void qmem_alloc(struct rdev *d, struct qmem *q, size_t size, bool page_list);
void qmem_free(struct qmem *q);
void qmem_desc(const struct qmem *q, uint8_t desc[16]);
uint8_t *qmem_ptr(struct rdev *d, const struct qmem *q, size_t off, size_t len);

int cq_create(struct rdev *d, struct rcq *cq, unsigned int log, bool page_list);
/* TERN_CQ_F_* in @flags (TERN_CQ_F_TIMESTAMP: 64-byte CQEs, struct wc.ts) */
int cq_create_flags(struct rdev *d, struct rcq *cq, unsigned int log, bool page_list,
		    uint8_t flags);
int cq_create_ex(struct rdev *d, struct rcq *cq, unsigned int log, bool page_list, uint16_t eqn,
		 uint16_t uar);
int cq_destroy(struct rdev *d, struct rcq *cq);
/* RESIZE_CQ to 2^log entries (after publishing cq->ci); on success the new ring replaces
 * the old one and cq->ci restarts at 0. */
int cq_resize(struct rdev *d, struct rcq *cq, unsigned int log, bool page_list);
/* Any CQE left? (does not consume) */
bool cq_peek(struct rdev *d, struct rcq *cq);
/* Next CQE by phase; stores the CI record (and advances ci). */
bool cq_poll(struct rdev *d, struct rcq *cq, struct wc *wc);
void cq_arm(struct rdev *d, struct rcq *cq, uint64_t arm);

int qp_create(struct rdev *d, struct rqp *qp, uint32_t pdn, struct rcq *scq, struct rcq *rcq,
	      unsigned int sq_log, unsigned int sq_stride, unsigned int rq_log,
	      unsigned int rq_stride, uint8_t flags, bool page_list);
int qp_create_type(struct rdev *d, struct rqp *qp, uint8_t type, uint32_t pdn, struct rcq *scq,
		   struct rcq *rcq, unsigned int sq_log, unsigned int sq_stride,
		   unsigned int rq_log, unsigned int rq_stride, uint8_t flags, bool page_list);
int qp_destroy(struct rdev *d, struct rqp *qp);
int qp_modify(struct rdev *d, uint32_t qpn, uint32_t mask, const struct qpattr *a,
	      struct cqe *c);
int qp_modify_raw(struct rdev *d, const uint8_t in[sizeof(struct tern_cmd_modify_qp_in)],
		  struct cqe *c);
void qpattr_encode(const struct qpattr *a, uint8_t out[sizeof(struct tern_qp_attrs)]);
int qp_query(struct rdev *d, uint32_t qpn, uint8_t out[sizeof(struct tern_cmd_query_qp_out)]);
int qp_state(struct rdev *d, uint32_t qpn);	/* -1 when QUERY_QP fails */
int qp_to_err(struct rdev *d, struct rqp *qp);
/* A path from device @self to @peer. */
void path_fill(struct qpattr *a, const struct rdev *self, const struct rdev *peer,
	       const struct connopt *o);

/* ---- work requests ------------------------------------------------------------------------ */
struct sge {
	uint64_t addr;
	uint32_t len;
	uint32_t lkey;
};

/* SGE over [off, off+len) of @mr */
struct sge mr_sge(const struct rmr *mr, uint64_t off, uint32_t len);

/* Write a send WQE into the next SQ slot (no doorbell); returns the slot. */
unsigned int post_send(struct rdev *d, struct rqp *qp, uint8_t opcode, uint8_t flags,
		       uint64_t wr_id, const struct sge *sg, unsigned int nsge, uint64_t raddr,
		       uint32_t rkey, uint32_t imm);
unsigned int post_send_inline(struct rdev *d, struct rqp *qp, uint8_t opcode, uint8_t flags,
			      uint64_t wr_id, const void *data, uint32_t len, uint64_t raddr,
			      uint32_t rkey, uint32_t imm);
/* One receive WQE (struct tern_rqe and its SGEs) into slot @slot of a ring of 2^@stride-byte
 * entries: a QP's receive queue or an SRQ. No doorbell. */
void write_rqe(struct rdev *d, const struct qmem *ring, unsigned int slot, unsigned int stride,
	       uint64_t wr_id, const struct sge *sg, unsigned int nsge);
unsigned int post_recv(struct rdev *d, struct rqp *qp, uint64_t wr_id, const struct sge *sg,
		       unsigned int nsge);
void ring_sq(struct rdev *d, struct rqp *qp);
void ring_rq(struct rdev *d, struct rqp *qp);
/* A QP with TERN_QP_F_RQ_DB_REC: write @pi (usually qp->rq_pi) into its RQ doorbell record. */
void rq_rec_write(struct rdev *d, struct rqp *qp, uint16_t pi);

/* ---- WRITE streams ------------------------------------------------------------------------- */
/*
 * The fabric simulators' flows (tern-sim, model/ns3/tn_host.c): signaled RDMA WRITEs of
 * @msg_bytes from slot i of @mr (i * msg_bytes) to slot i at @raddr, the slots used in turn,
 * up to @outstanding in flight, until @total_bytes (0: no end; the last WRITE may be
 * shorter). With @read, RDMA READs instead: slot i at @raddr into slot i of @mr. The
 * counters are the host side's.
 */
struct wstream {
	struct rqp *qp;
	struct rcq *cq;
	const struct rmr *mr;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t msg_bytes;
	unsigned int outstanding, slots;	/* slots <= 32 */
	uint64_t total_bytes;
	uint64_t posted, completed, errors;	/* WRITEs */
	uint64_t done_bytes;			/* completed successfully */
	uint32_t slot_done;			/* slots completed at least once */
	bool read;				/* READs (of the remote slots) instead */
};
/* Post WRITEs until @outstanding are in flight (or all of total_bytes is posted). */
void wstream_post(struct rdev *d, struct wstream *w);
/* Reap one completion into @wc and count it: false when there is none. */
bool wstream_poll(struct rdev *d, struct wstream *w, struct wc *wc);
/* At least one slot completed, and every slot that did holds the sender's pattern @seed in
 * @rx_mr (of @dst) from @rx_off on. */
bool wstream_data_ok(struct rdev *dst, const struct rmr *rx_mr, uint64_t rx_off,
		     const struct wstream *w, unsigned int seed);

/* ---- connecting QPs ------------------------------------------------------------------------- */
void connopt_default(struct connopt *o);
/* connopt_default for the fabric simulators' WRITE flows: path MTU code @mtu, traffic class
 * DSCP @dscp, remote and local write, SQ 64 x 128 B, RQ 4 x 64 B, CQ 256 entries, no READs. */
void connopt_write_flow(struct connopt *o, uint8_t mtu, uint8_t dscp);
/* RESET->INIT->RTR(->RTS) of side @s's QP towards @peer's @peer_qpn (@o->rtr_only bit s:
 * stop in RTR). */
bool qp_connect(struct rdev *d, struct rqp *qp, const struct rdev *peer, uint32_t peer_qpn,
		const struct connopt *o, unsigned int s);
/* CREATE_QP of UD/GSI @type (RQ 16 x 64 B, SQ 16 x 2^sq_stride); frees the rings on failure. */
int ud_create(struct rdev *d, struct rqp *qp, uint8_t type, struct rcq *cq,
	      unsigned int sq_stride, struct cqe *c);
/* MODIFY_QP with the UD attributes (only those in @mask are written). */
int ud_modify(struct rdev *d, uint32_t qpn, uint32_t mask, uint8_t state, uint32_t qkey,
	      uint32_t sq_psn, struct cqe *c);
/* RESET->INIT (Q_Key @qkey)->RTR->RTS (SQ PSN @psn). */
bool ud_up(struct rdev *d, const struct rqp *qp, uint32_t qkey, uint32_t psn);

#endif /* TERN_HOSTDRV_RDMA_DRV_H */
