/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RDMA tests' own pieces over the host driver's RDMA part (model/hostdrv/rdma_drv.h): a
 * connected pair of devices on a wire, checks, and an independent RoCEv2 packet decoder with
 * its own ICRC.
 */
#ifndef TERN_TEST_RDMA_H
#define TERN_TEST_RDMA_H

#include <tern/tern_dcb.h>

#include "rdma_drv.h"
#include "tests.h"

/* Two devices on a wire with one RC (or UC) QP each, connected to each other. */
struct conn {
	struct rdev *d[2];
	struct wire w;
	struct rcq cq[2];
	struct rqp qp[2];
	struct connopt o;
};

/* Stop the test but run its cleanup (at label "out"): objects are freed, LSan stays quiet. */
#define RQ(cond)                                                                             \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			t_failures++;                                                        \
			printf("#   %s:%d: required: %s\n", __FILE__, __LINE__, #cond);         \
			goto out;                                                            \
		}                                                                            \
	} while (0)

/* Check a WC against expected values; prints the location on mismatch. */
#define CHECK_WC(w, op, st, id)                                                             \
	do {                                                                                \
		CHECK_EQ((w)->opcode, (op));                                                \
		CHECK_EQ((w)->status, (st));                                                \
		CHECK_EQ((w)->wr_id, (id));                                                 \
	} while (0)

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

/* ---- RoCEv2 decoder -------------------------------------------------------------------------- */
struct pkt {
	bool ok;		/* parsed as RoCEv2 */
	const char *why;	/* when not ok */
	uint8_t dmac[6], smac[6];
	bool vlan;
	uint16_t vid;
	uint8_t pcp;
	uint16_t ethertype;
	uint8_t ipver;
	uint8_t tclass, ttl;
	uint32_t flow_label;
	uint8_t sip[16], dip[16];	/* IPv4 as IPv4-mapped IPv6 */
	bool ip_csum_ok;
	uint16_t ip_len;
	uint16_t sport, dport, udp_len;
	/* INT (UDP port TERN_INT_UDP_DPORT): the shim and its records, between UDP and BTH */
	bool has_int;
	uint8_t int_type, int_nhops, int_max_hops, int_flags;
	uint16_t int_next_dport;
	size_t int_len;		/* shim and records */
	struct {
		uint32_t ts, tx_bytes, qlen, rate_mbps;
	} int_hop[TERN_INT_MAX_HOPS];
	uint8_t opcode;
	bool se, ackreq;
	uint8_t padcnt, tver;
	uint16_t pkey;
	uint8_t bth4;		/* FECN/BECN/resv byte */
	uint32_t dqpn, psn;
	bool has_reth, has_aeth, has_imm;
	bool has_sph;		/* selective repeat's SEND placement header */
	uint32_t sph_rord, sph_off;
	uint64_t va;
	uint32_t rkey, dma_len;
	uint8_t syndrome;
	uint32_t msn;
	uint32_t imm;
	bool has_atomic_eth, has_atomic_ack;
	uint64_t swap_add, compare;	/* AtomicETH (va, rkey above) */
	uint64_t orig;		/* AtomicAckETH */
	bool has_ieth;		/* SEND_LAST/ONLY_WITH_INVALIDATE */
	uint32_t ieth;		/* the R_Key to invalidate */
	bool has_deth;		/* UD */
	uint32_t qkey, src_qp;	/* DETH */
	const uint8_t *payload;
	size_t payload_len;	/* without pad */
	uint32_t icrc_wire, icrc_calc;
};

/* BTH opcodes (RC) */
enum {
	OP_SEND_FIRST = 0x00, OP_SEND_MIDDLE, OP_SEND_LAST, OP_SEND_LAST_IMM, OP_SEND_ONLY,
	OP_SEND_ONLY_IMM, OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST, OP_WRITE_LAST_IMM,
	OP_WRITE_ONLY, OP_WRITE_ONLY_IMM, OP_READ_REQ, OP_READ_RESP_FIRST, OP_READ_RESP_MIDDLE,
	OP_READ_RESP_LAST, OP_READ_RESP_ONLY, OP_ACK, OP_ATOMIC_ACK, OP_CMP_SWAP, OP_FETCH_ADD,
	OP_SEND_LAST_INV = 0x16, OP_SEND_ONLY_INV = 0x17,
	OP_UD_SEND_ONLY = 0x64, OP_UD_SEND_ONLY_IMM = 0x65,
	OP_CNP = 0x81,		/* congestion notification: BTH, 16 reserved bytes */
	/* selective repeat (include/tern/tern_rdma.h, TERN_BTH_OPCODE_SR_*) */
	OP_SR_WRITE_MIDDLE = 0xc0, OP_SR_WRITE_LAST, OP_SR_WRITE_LAST_IMM, OP_SR_SEND_MIDDLE,
	OP_SR_SEND_LAST, OP_SR_SEND_LAST_IMM, OP_SR_SEND_LAST_INV,
	OP_SR_STD = 0x100,	/* pkt_parse: an SR opcode whose headers are set */
};

uint32_t crc32_ieee(uint32_t crc, const void *buf, size_t len);
/* RoCEv2, with or without an INT shim (its ICRC: that of the packet without the shim). */
bool pkt_parse(const uint8_t *frame, size_t len, struct pkt *p);
/* Recompute the ICRC of a frame in place (after a test edited it). */
void pkt_fix_icrc(uint8_t *frame, size_t len);
void pkt_fix_ipv4_csum(uint8_t *frame, size_t len);
/* How many logged frames in @dir have BTH opcode @op (-1: any RoCE). */
unsigned int wire_count(const struct wire *w, unsigned int dir, int op);

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

#endif
