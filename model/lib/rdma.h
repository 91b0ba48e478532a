/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: the RDMA engine (RoCEv2 RC transport) and its objects.
 *
 * Files: rdma_obj.c (objects, firmware commands, doorbells),
 * rdma_sched.c (the transport scheduler: the work, MAC-wait and timer lists),
 * rdma_mr.c (memory keys: MRs, fast registration, invalidation),
 * rdma_wire.c (RoCEv2 headers, ICRC, parsing), rdma_req.c (requester and completer),
 * rdma_resp.c (responder), rdma_sr.c (RC selective repeat, TERN_QP_XPORT_SR: reorder window,
 * SACKs, selective resends, tail-loss probes), rdma_atomic.c (atomics), rdma_srq.c (shared
 * receive queues),
 * rdma_ud.c (UD and GSI QPs), rdma_cq.c (CQEs and completion events).
 * Documentation/hw/rdma.rst describes the behaviour for firmware and driver engineers.
 *
 * Work model: doorbells and received frames only update state and put the QP on the work
 * list (m->rdma->work_*); tern_model_run() sends at most TERNM_RDMA_BUDGET packets per call,
 * TERNM_QP_BURST per QP turn, and kicks again while work remains. Received frames are
 * handled at once (data placed, CQEs written); the ACKs and READ responses they call for are
 * queued on the QP and go out at the next run, so ACKs are coalesced per burst. QPs with a
 * deadline (retransmit, RNR wait) are on the timer list, the only list ternm_timer_update
 * walks.
 *
 * Congestion control (rdma_cc.c, Documentation/hw/congestion.rst): RC data packets (requests,
 * READ responses) of a QP whose priority has DCQCN's reaction point enabled are sent ECT(0);
 * a CE-marked packet on a priority with the notification point enabled makes the receiving QP
 * send a CNP (at most one per min_time_between_cnps); a CNP cuts the sending QP's rate. Before
 * each data packet the sender asks ternm_tx_gate(): a rate-limited QP whose next allowed time
 * is in the future leaves the work list for the timer list (pace_deadline); a priority the MAC
 * cannot send now (PFC pause, line busy) puts the QP on the MAC wait list, which
 * tern_model_run() retries in order, ahead of the QPs woken since, without kicking (the MAC
 * kicks when it may send again); a QP that sent in its turn goes behind the others, and
 * waking a waiting QP keeps its place.
 * ACKs, NAKs and CNPs are never held back.
 */
#ifndef TERN_MODEL_RDMA_H
#define TERN_MODEL_RDMA_H

#include <linux/tern/tern_rdma.h>

#include "tern_model_int.h"

/* ---- limits reported by QUERY_RDMA (and enforced) ---------------------------------------- */
#define TERNM_MAX_QP		1024u
#define TERNM_MAX_CQ		2048u
#define TERNM_MAX_MR		8192u
#define TERNM_MAX_PD		1024u
#define TERNM_MAX_SRQ		256u
#define TERNM_MAX_MR_SIZE	(4ull << 30)
#define TERNM_PAGE_SIZE_CAP	(((1ull << (TERN_MEM_MAX_PAGE_SHIFT + 1)) - 1) & \
				 ~((1ull << TERN_MEM_MIN_PAGE_SHIFT) - 1))
#define TERNM_MAX_MSG		(1u << 31)
#define TERNM_MAX_MR_PAGES	(1u << 20)
#define TERNM_MAX_MCAST_GRP	64u	/* UD multicast groups (rdma_mcast.c) */
#define TERNM_MAX_MCAST_QP	8u	/* QPs attached to one group */
#define TERNM_MAX_CTR_SET	64u	/* QP counter sets, numbered 1..64 (rdma_ctr.c) */
#define TERNM_MAX_FAST_REG_PAGES 512u	/* a FAST_REG MR's page list (2 MiB in 4 KiB pages) */
#define TERNM_TOTAL_MR_PAGES	(1u << 24)	/* page entries of all MRs together (128 MiB) */
#define TERNM_MAX_SQ_LOG	14
#define TERNM_TOTAL_SQ_WQES	(1u << 20)	/* SQ entries of all QPs (32 MiB of send state) */
#define TERNM_MAX_RQ_LOG	14
#define TERNM_MAX_SRQ_LOG	14
/*
 * 4M CQEs, as ConnectX-5/6 (max_cqe 2^22 - 1): libfabric's ofi_rxm sizes its CQ at 256 entries
 * for each peer of its universe (1024 by default), 2^18 CQEs.
 */
#define TERNM_MAX_CQ_LOG	22
#define TERNM_MAX_CQ_MODER_COUNT	4095	/* 12-bit fields of the CQ context */
#define TERNM_MAX_CQ_MODER_PERIOD	4095	/* us */
#define TERNM_MAX_SEND_SGE	16
#define TERNM_WQE_LINE		64	/* bytes of a send WQE read at once (its first line) */
#define TERNM_MAX_RECV_SGE	16
#define TERNM_MAX_RD_ATOMIC	16
#define TERNM_MAX_DEST_RD	16
#define TERNM_ACK_DELAY		10	/* 4.096 us * 2^10 = 4.2 ms */
#define TERNM_MAX_INLINE	((1u << TERN_SQ_MAX_LOG_STRIDE) - sizeof(struct tern_sq_wqe))

/* ---- transport tuning ----------------------------------------------------------------------- */
#define TERNM_RDMA_BUDGET	256	/* packets sent per tern_model_run() */
#define TERNM_QP_BURST		32	/* packets per QP turn */
#define TERNM_MAX_UNACKED	256	/* PSNs in flight per QP */
#define TERNM_ACK_EVERY		32	/* AckReq on every 32nd packet (and each message's last) */
#define TERNM_RESP_FIFO		64	/* queued responder outputs (ACK/NAK/READ) per QP */
#define TERNM_HPCC_RSP_RING	256	/* HPCC: READ responses a window counts in flight */

#define TERNM_PSN_MASK		0xffffffu
#define TERNM_MAX_MSG_PKTS	(1u << 22)	/* packets in one message (2^31 B at MTU 512) */
#define TERNM_NO_DEADLINE	UINT64_MAX

/* Signed distance a - b of two 24-bit PSNs. */
static inline int32_t psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static inline uint32_t psn_add(uint32_t a, uint32_t n)
{
	return (a + n) & TERNM_PSN_MASK;
}

/*
 * One round-trip sample at a time, on the device's clock (TIMELY's segments in
 * rdma_timely.c; the requester's smoothed round trip is struct ternm_rtt): @psn went out new
 * at @t0; the sample ends when the oldest unacknowledged PSN passes it, and is void once a
 * PSN up to it is resent (Karn: its answer may be the resend's).
 */
struct ternm_rtt_probe {
	bool on;
	uint32_t psn;
	uint64_t t0;
};

static inline void ternm_probe_start(struct ternm_rtt_probe *p, uint32_t psn, uint64_t t0)
{
	p->on = true;
	p->psn = psn;
	p->t0 = t0;
}

/* PSN @psn is being resent: a sample up to it is void. */
static inline void ternm_probe_resent(struct ternm_rtt_probe *p, uint32_t psn)
{
	if (p->on && psn_diff(psn, p->psn) <= 0)
		p->on = false;
}

/* Every PSN before @una is acknowledged at @now: the sample's round trip in *@ns, if it ended. */
static inline bool ternm_probe_acked(struct ternm_rtt_probe *p, uint32_t una, uint64_t now,
				     uint64_t *ns)
{
	if (!p->on || psn_diff(una, p->psn) <= 0)
		return false;
	p->on = false;
	*ns = now - p->t0;
	return true;
}

/* ---- RoCEv2 ---------------------------------------------------------------------------------- */
enum {
	IBOP_SEND_FIRST = 0x00, IBOP_SEND_MIDDLE = 0x01, IBOP_SEND_LAST = 0x02,
	IBOP_SEND_LAST_IMM = 0x03, IBOP_SEND_ONLY = 0x04, IBOP_SEND_ONLY_IMM = 0x05,
	IBOP_WRITE_FIRST = 0x06, IBOP_WRITE_MIDDLE = 0x07, IBOP_WRITE_LAST = 0x08,
	IBOP_WRITE_LAST_IMM = 0x09, IBOP_WRITE_ONLY = 0x0a, IBOP_WRITE_ONLY_IMM = 0x0b,
	IBOP_READ_REQ = 0x0c, IBOP_READ_RESP_FIRST = 0x0d, IBOP_READ_RESP_MIDDLE = 0x0e,
	IBOP_READ_RESP_LAST = 0x0f, IBOP_READ_RESP_ONLY = 0x10, IBOP_ACK = 0x11,
	IBOP_ATOMIC_ACK = 0x12, IBOP_CMP_SWAP = 0x13, IBOP_FETCH_ADD = 0x14,
	IBOP_SEND_LAST_INV = 0x16, IBOP_SEND_ONLY_INV = 0x17,
	IBOP_UC = 0x20,		/* UC: 0x20 | the RC opcode (SEND and WRITE only) */
	IBOP_UD_SEND_ONLY = 0x64, IBOP_UD_SEND_ONLY_IMM = 0x65,
	IBOP_CNP = TERN_BTH_OPCODE_CNP,
	/* selective repeat's MIDDLE/LAST packets, parsed as the standard ones (p->place) */
	IBOP_SR_WRITE_MIDDLE = TERN_BTH_OPCODE_SR_WRITE_MIDDLE,
	IBOP_SR_WRITE_LAST = TERN_BTH_OPCODE_SR_WRITE_LAST,
	IBOP_SR_WRITE_LAST_IMM = TERN_BTH_OPCODE_SR_WRITE_LAST_IMM,
	IBOP_SR_SEND_MIDDLE = TERN_BTH_OPCODE_SR_SEND_MIDDLE,
	IBOP_SR_SEND_LAST = TERN_BTH_OPCODE_SR_SEND_LAST,
	IBOP_SR_SEND_LAST_IMM = TERN_BTH_OPCODE_SR_SEND_LAST_IMM,
	IBOP_SR_SEND_LAST_INV = TERN_BTH_OPCODE_SR_SEND_LAST_INV,
};

#define BTH_LEN		12
#define RETH_LEN	16
#define AETH_LEN	4
#define IMM_LEN		4
#define IETH_LEN	4	/* the R_Key a SEND with invalidate names */
#define SPH_LEN		sizeof(struct tern_sr_sph)	/* selective repeat's SEND placement header */
#define ICRC_LEN	4
#define DETH_LEN	8	/* UD: Q_Key, source QPN */
#define ATOMIC_ETH_LEN	28	/* VA, R_Key, Swap (or Add) Data, Compare Data */
#define ATOMIC_ACK_LEN	8	/* AtomicAckETH: the original value */
#define CNP_RSVD_LEN	16	/* the reserved bytes after a CNP's BTH */

#define AETH_ACK		0x1f	/* ACK, credits not used */
#define AETH_RNR_NAK		0x20	/* | timer code */
#define AETH_NAK_SEQ		0x60
#define AETH_NAK_INV_REQ	0x61
#define AETH_NAK_ACCESS		0x62
#define AETH_NAK_OP		0x63
#define AETH_NAK_SACK		0x70	/* selective repeat only: a SACKETH follows (rdma_sr.c) */

/* Maximum Ethernet + VLAN + IPv6 + UDP header. */
#define TERNM_MAX_L2L4		(14 + 4 + 40 + 8)

/* A parsed received RoCEv2 packet. */
struct ternm_pkt {
	const uint8_t *bth;	/* BTH; extension headers follow */
	const uint8_t *payload;
	uint32_t paylen;	/* payload bytes, pad excluded */
	uint32_t qpn;
	uint32_t psn;
	uint8_t opcode;
	bool se, ackreq;
	/* extension headers, as present for the opcode */
	uint64_t va;
	uint32_t rkey, dmalen;
	uint8_t imm[4];
	bool inv;		/* SEND_LAST/ONLY_WITH_INVALIDATE, parsed as SEND_LAST/ONLY */
	uint32_t ieth;		/* with inv: the key to invalidate */
	uint8_t syndrome;	/* AETH */
	uint32_t msn;
	uint64_t swap_add, compare;	/* AtomicETH (va, rkey above) */
	uint64_t orig;		/* AtomicAckETH */
	/*
	 * Selective repeat's opcodes (IBOP_SR_*): place is PKT_PLACE_RETH (va, rkey, dmalen:
	 * this packet's own first byte, the message's bytes from there) or PKT_PLACE_SPH (rord,
	 * moff); 0 for the standard ones. placed: the responder wrote the payload after a gap
	 * (rdma_sr.c) and replays the packet in order; only a LAST packet's final byte, tail,
	 * is still to be written.
	 */
	uint8_t place;
	bool placed;
	uint8_t tail;
	uint32_t rord, moff;
};

enum { PKT_PLACE_RETH = 1, PKT_PLACE_SPH };

/* ---- objects ------------------------------------------------------------------------------- */
struct ternm_pd {
	bool used;
	uint32_t refs;		/* MRs and QPs */
};

struct ternm_mr {
	bool used;		/* the index is taken */
	bool valid;		/* the key works; FAST_REG: registered, not invalidated */
	uint8_t key;
	uint8_t flags;		/* TERN_MR_F_* */
	uint8_t page_shift;
	uint32_t pdn;
	uint32_t access;
	uint64_t iova;
	uint64_t length;	/* 0 with PHYSICAL: all memory */
	uint32_t npages;	/* pages[] entries in use */
	uint32_t max_pages;	/* pages[] entries allocated (counted in mr_pages) */
	uint64_t *pages;	/* owned */
	uint32_t binds;		/* windows bound to this MR */
	/* a window (TERN_MR_F_MW_TYPE*), while bound (valid): iova/length/access are the
	 * window's, and its MR is named by parent_key; type 2: bound through QP qpn */
	uint32_t parent_key;
	uint32_t qpn;
};

struct ternm_cq {
	bool used;
	bool err;		/* overflow or DMA fault: CQEs no longer written */
	uint8_t log_depth;
	uint8_t cqe_size;	/* 32, or 64 (TERN_CQ_F_TIMESTAMP: struct tern_cqe_ts) */
	uint8_t arm;		/* 0, or TERN_UDB_CQ_ARM_* >> 62 */
	uint16_t eqn;
	uint16_t uar;
	uint32_t pi;		/* CQEs written, free-running */
	uint32_t ci;		/* consumed, as last read from the CI record */
	uint32_t db_ci;		/* consumed, as last rung (24 bits) */
	uint32_t refs;		/* QPs */
	/* completion-event moderation (MODIFY_CQ); 0/0: off */
	uint16_t moder_count;
	uint16_t moder_period_us;
	uint32_t moder_n;	/* CQEs since the moderation started; 0: none under way */
	uint64_t moder_start;	/* when it started (ns) */
	bool on_timer;		/* on ternm_rdma.cq_timer_head, due at moder_start + period */
	struct ternm_cq *timer_next;
	struct ternm_mem mem;
};

/*
 * The requester's round-trip time (rdma_req.c, ternm_rtt_*): one PSN at a time is timed
 * from when it first went out (psn, t0; on) until una_psn passes it (or a SACK lists it);
 * a resend of it or of a PSN before it voids the sample (Karn). srtt_ns and rttvar_ns are
 * smoothed as TCP's (RFC 6298); srtt_ns 0: no sample yet. Selective repeat's probes and
 * go-back-N's adaptive timer (TERN_QP_XPORT_ADAPTIVE_RTO) both run from it.
 */
struct ternm_rtt {
	bool on;
	uint32_t psn;
	uint64_t t0;
	uint64_t srtt_ns, rttvar_ns;
};

/* Device-side state of one SQ slot, set when its WQE is first started. */
struct ternm_swqe {
	uint64_t wr_id;
	uint32_t first_psn;
	uint32_t npkts;
	uint32_t len;
	uint8_t opcode;
	uint8_t flags;
	bool read;		/* READ or atomic: answered by responses, counts in rd_inflight */
	bool atomic;
	bool local;		/* REG_MR, LOCAL_INV, BIND_MW: executed when started, no PSN */
	uint8_t num_sge;	/* as first read: a WQE read again must match (wqe_load) */
	uint32_t rord;		/* takes a receive WQE: its receive ordinal (SR's SPH) */
};

struct ternm_sge {
	uint64_t addr;
	uint32_t len;
	uint32_t key;
};

/*
 * An SRQ WQE a selective-repeat QP took ahead of its turn for a later receive ordinal
 * (rdma_srq.c, ternm_srq_reserve()): read once, as the QP's own rqe_* fields are.
 */
struct ternm_rqe_res {
	uint64_t wr_id;
	uint16_t idx;		/* its SRQ slot */
	int8_t st;		/* 0, or what ternm_rqe_read() said (-1, -2): reported in turn */
	uint8_t nsge;
	struct ternm_sge sge[TERNM_MAX_RECV_SGE];
};

/* The SQ WQE the requester is sending (or re-sending), parsed and checked. */
struct ternm_wqe_cache {
	bool valid;
	uint16_t idx;
	uint8_t opcode, flags, num_sge;
	uint8_t imm[4];
	uint32_t rkey;
	uint64_t raddr;
	uint64_t wr_id;
	uint32_t len;		/* message bytes */
	uint64_t swap_add, compare;	/* ATOMIC_* */
	uint8_t reg[sizeof(struct tern_reg_mr_seg)];	/* REG_MR, BIND_MW: the segment */
	struct ternm_sge sge[TERNM_MAX_SEND_SGE];
	uint8_t inl[TERNM_MAX_INLINE];
};

/*
 * A responder READ resource: a request being served, kept afterwards for duplicates. An
 * atomic takes one too (atomic set): it keeps the original value its execution returned.
 */
#define TERNM_RD_HOLES	8	/* selective repeat: holes a READ being sent queues */

struct ternm_rd_res {
	bool valid;
	bool busy;		/* queued in the output FIFO */
	bool atomic;
	uint64_t orig;		/* atomic: the value before it executed */
	uint32_t first_psn;
	uint32_t npkts;		/* at @mtu */
	uint32_t mtu;		/* the path MTU the READ was first answered with (replays too) */
	uint32_t next;		/* next packet index to send */
	uint32_t stop;		/* ... up to this one (npkts; a selective re-request: its end) */
	uint32_t resume_next;	/* selective repeat: where sending goes on after the holes ... */
	uint32_t resume_stop;	/* ... served first, and up to where; 0: no hole first */
	uint8_t nholes;		/* holes [from, to) asked for behind, served in turn */
	struct { uint32_t from, to; } hole[TERNM_RD_HOLES];
	uint32_t rkey;
	uint64_t va;
	uint32_t len;
	uint32_t msn;		/* MSN including this READ */
};

enum { RESP_ACK = 1, RESP_NAK, RESP_READ, RESP_SACK };

struct ternm_resp_item {
	uint8_t type;
	uint8_t syndrome;	/* AETH, for ACK/NAK */
	uint8_t res;		/* READ resource index */
	uint32_t psn;
	uint32_t msn;		/* MSN when queued: the AETH carries it */
};

/* RQ_MSG_DROP (UC only): the message in progress is dropped up to the next FIRST or ONLY */
enum { RQ_MSG_NONE = 0, RQ_MSG_SEND, RQ_MSG_WRITE, RQ_MSG_DROP };

/* Why a QP stopped sending data packets in this turn (ternm_tx_gate()). */
enum { TX_GO = 0, TX_PACE, TX_MAC };

/*
 * DCQCN state of one RC QP (rdma_cc.c). Rates in kb/s. While not limited, the QP sends at the
 * maximum rate and nothing but the NP fields is meaningful.
 */
struct ternm_qp_cc {
	bool limited;		/* a rate limiter is allocated: rc below the maximum rate */
	bool cnp_in_period;	/* a CNP arrived in the current alpha period */
	bool np_sent;		/* NP: np_last_ns is valid */
	uint32_t alpha;		/* 1/1024 units */
	uint32_t t_stage, b_stage;	/* increase events since the last cut, per stage */
	uint64_t rc, rt;	/* current and target rate */
	uint64_t alpha_t;	/* start of the current alpha period (ns) */
	uint64_t last_cut_ns;
	uint64_t bytes;		/* frame bytes sent since the last byte-stage event */
	uint64_t inc_deadline;	/* next timer-stage event (TERNM_NO_DEADLINE: none) */
	uint64_t next_send;	/* pacer: earliest time of the next data packet */
	uint64_t pace_deadline;	/* waiting for next_send on the timer list */
	uint64_t np_last_ns;	/* NP: when this QP last sent a CNP */
	uint64_t last_gap;	/* pacer: the gap next_send added after the last packet (ns) */
	uint32_t last_len;	/* pacer: that packet's frame bytes */
};

/*
 * HPCC state of one RC/UC QP (rdma_hpcc.c): the requester's window and the telemetry of the
 * last echo, the responder's telemetry to echo in its next ACK. Windows in bytes,
 * utilisation in 1/65536.
 */
struct ternm_qp_hpcc {
	bool init;		/* w, wc and last_update_psn are set */
	bool echo_valid;	/* responder: echo[] goes out with the next ACK */
	uint8_t nprev;		/* hops in prev_*; 0: no earlier echo to compare with */
	uint8_t echo_n;
	uint32_t inc_stage;
	uint32_t last_update_psn;	/* an ACK at or past it updates the reference window */
	uint64_t w, wc, u;
	uint32_t prev_ts[TERN_INT_MAX_HOPS], prev_tx[TERN_INT_MAX_HOPS];
	uint32_t prev_q[TERN_INT_MAX_HOPS];
	uint8_t echo[TERN_INT_MAX_HOPS * sizeof(struct tern_int_hop)];
	/* the READ responses this QP sends as their data sender (the requester echoes them) */
	bool rsp_init;		/* a response went out with INT: the rsp_* below are set */
	uint16_t rsp_n, rsp_head;	/* rsp_psn[]: entries, the oldest one */
	uint32_t rsp_hi;	/* one past the highest response PSN sent */
	uint32_t rsp_echo_psn;	/* the highest response PSN echoed */
	uint32_t rsp_update_psn;	/* an echo at or past it updates the reference window */
	uint32_t rsp_psn[TERNM_HPCC_RSP_RING];	/* PSNs of the last new responses sent */
};

/*
 * TIMELY state of one RC QP (rdma_timely.c). Rates in kb/s; rtt_diff in 1/1024 ns. The
 * segment being timed: @probe's PSN is its last packet so far, sent at probe.t0; it takes
 * more new packets while @seg_open (seg_bytes below timely_seg).
 */
struct ternm_qp_timely {
	bool init;		/* rate, prev_rtt are set (the first sample) */
	bool seg_open;
	uint32_t seg_bytes;
	uint32_t hai_count;	/* completion events in a row with gradient <= 0 */
	struct ternm_rtt_probe probe;
	uint64_t rate;
	uint64_t rtt, prev_rtt;	/* ns: the last sample, the one before it */
	int64_t rtt_diff;
};

/* A shared receive queue (rdma_srq.c). */
struct ternm_srq {
	bool used;
	bool err;		/* ring unreachable: TERN_SRQ_EV_ERROR sent, nothing more taken */
	uint8_t log_depth, log_stride;
	uint16_t uar;
	bool db_rec;		/* TERN_SRQ_F_DB_REC: pi is read from the record */
	uint16_t pi;		/* doorbell, or the record as last read */
	uint16_t ci;		/* WQEs taken by QPs */
	uint32_t limit;		/* armed limit, 0 when not armed */
	uint32_t pdn;
	uint32_t refs;		/* QPs */
	struct ternm_mem mem;
};

struct ternm_qp {
	uint32_t qpn;
	uint8_t state;		/* enum tern_qp_state */
	uint8_t type;		/* enum tern_qp_type */
	uint32_t qkey;		/* UD/GSI */
	/* UD/GSI receive: extra CQE fields, set only while rdma_ud.c writes a receive CQE */
	uint8_t ud_cqe_flags;
	uint32_t ud_src_qpn;
	uint8_t flags;		/* TERN_QP_F_* */
	uint16_t uar;
	uint32_t pdn, scqn, rcqn;
	uint32_t srqn;		/* with TERN_QP_F_SRQ */
	uint8_t log_sq_depth, log_sq_stride, log_rq_depth, log_rq_stride;
	struct ternm_mem sq_mem, rq_mem;

	/* attributes (MODIFY_QP) */
	uint8_t path_mtu, timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic, max_dest_rd_atomic;
	uint32_t access;
	uint32_t dest_qpn;
	uint8_t path[sizeof(struct tern_qp_path)];	/* as given */
	uint32_t mtu;		/* bytes */
	bool sqd_notify;

	/* packet header template: Ethernet [+ VLAN] + IP + UDP */
	uint8_t hdr[TERNM_MAX_L2L4];
	uint8_t hdr_len, l3_off;
	bool ipv6;
	uint32_t ip_csum;	/* IPv4: the template header's sum, TOS and lengths 0 */

	/* requester */
	uint16_t sq_pi;		/* doorbell */
	uint16_t sq_ci;		/* WQEs completed or flushed */
	uint16_t req_idx;	/* WQE being sent */
	uint16_t req_max;	/* WQEs started at least once */
	uint32_t req_pkt;	/* next packet of req_idx's WQE */
	uint32_t req_psn;	/* PSN of that packet */
	uint32_t next_psn;	/* PSN the next new WQE starts at */
	uint32_t una_psn;	/* oldest PSN not acknowledged */
	uint32_t sent_psn;	/* one past the highest PSN sent: below it, a packet is resent */
	uint32_t pkts_since_ack;
	uint32_t sq_rord;	/* messages started that take a receive WQE (mod 2^24) */
	unsigned int rd_inflight;	/* READs started and not completed */
	uint8_t retry_left, rnr_left;
	bool rnr_wait;		/* RNR NAK: sending paused until rnr_deadline */
	bool gbn_wait;		/* went back for a lost READ response: ignore later ones */
	uint64_t retx_deadline, rnr_deadline;
	struct ternm_rtt rtt;	/* the measured round trip */
	/*
	 * Adaptive retransmit timer (go-back-N with TERN_QP_XPORT_ADAPTIVE_RTO): the configured
	 * timeout's end (rto_full_deadline: retry_cnt counts only its expiries), the measured
	 * timeout's doublings since una_psn last moved (rto_una)
	 */
	uint64_t rto_full_deadline;
	uint32_t rto_una;
	uint8_t rto_backoff;
	struct ternm_swqe *swq;	/* 1 << log_sq_depth */
	struct ternm_wqe_cache wc;	/* the WQE being sent */
	struct ternm_wqe_cache rwc;	/* the READ whose responses are arriving */

	/* responder */
	uint16_t rq_pi, rq_ci;	/* rq_pi: doorbell, or (TERN_QP_F_RQ_DB_REC) the record */
	uint32_t epsn;		/* next PSN expected */
	uint32_t msn;
	bool nak_sent;		/* sequence NAK sent, no repeat until epsn arrives */
	bool comm_est;
	uint8_t msg;		/* RQ_MSG_*: message in progress */
	uint32_t msg_off;	/* bytes placed */
	uint32_t rq_rord;	/* messages that took a receive WQE (mod 2^24): SR's SPH */
	/* SEND in progress: its receive WQE */
	bool rqe_valid;
	uint16_t rqe_idx;	/* its slot (in the RQ, or in the SRQ) */
	bool srq_last_wqe;	/* TERN_QP_EV_LAST_WQE_REACHED sent (SRQ QP in ERR) */
	uint64_t rqe_wr_id;
	bool rqe_inv;		/* its CQE reports rqe_inv_key invalidated (SEND_INV) */
	uint32_t rqe_inv_key;
	uint8_t rqe_nsge;
	struct ternm_sge rqe_sge[TERNM_MAX_RECV_SGE];
	/*
	 * SRQ QP in selective repeat: SRQ WQEs reserved for the receive ordinals after the
	 * one in progress (from rq_rord + 1 with rqe_valid, else from rq_rord), in SRQ order;
	 * srq_res_n of them from srq_res_head in a ring of srq_res_cap (rdma_srq.c)
	 */
	struct ternm_rqe_res *srq_res;
	uint16_t srq_res_cap, srq_res_head, srq_res_n;
	/* WRITE in progress */
	uint32_t wr_rkey;
	uint64_t wr_va;
	uint32_t wr_len;
	struct ternm_rd_res rd[TERNM_MAX_DEST_RD];
	uint8_t rd_next;	/* slot for the next READ */
	struct ternm_resp_item fifo[TERNM_RESP_FIFO];
	uint8_t fifo_head, fifo_count;

	/* selective repeat (rdma_sr.c): sr is NULL in standard go-back-N */
	uint8_t xport;		/* TERN_QP_XPORT_*, as MODIFY_QP set it (all in the low byte) */
	uint16_t max_unacked;	/* PSNs in flight: TERNM_MAX_UNACKED, or the SR cap */
	struct ternm_sr *sr;

	/* congestion control */
	struct ternm_qp_cc cc;
	struct ternm_qp_hpcc hpcc;
	struct ternm_qp_timely timely;
	uint8_t tx_block;	/* TX_*: why the current turn stopped */

	/* the QP counter set its packets and events also count in (rdma_ctr.c); 0: none */
	uint8_t ctr_set;

	/* lists */
	bool on_work, on_timer, on_macwait;
	struct ternm_qp *work_next, *work_prev;	/* work list, or the MAC wait list */
	struct ternm_qp *timer_next, *timer_prev;
};

/* RC and UC: connected to one remote QP by MODIFY_QP (path, dest_qpn, PSNs). */
static inline bool ternm_qp_connected(const struct ternm_qp *qp)
{
	return qp->type == TERN_QPT_RC || qp->type == TERN_QPT_UC;
}

#define TERNM_RDMA_STATS(X) \
	X(tx_roce_packets) X(tx_roce_bytes) X(rx_roce_packets) X(rx_roce_bytes) \
	X(rx_roce_discards) X(rx_icrc_errors) X(out_of_sequence) X(duplicate_request) \
	X(packet_seq_err) X(implied_nak_seq_err) X(local_ack_timeout_err) X(rnr_nak_retry_err) \
	X(out_of_buffer) X(req_transport_retries_exceeded) X(req_rnr_retries_exceeded) \
	X(req_remote_access_errors) X(req_remote_invalid_request) X(resp_remote_access_errors) \
	X(resp_local_length_error) X(rx_write_requests) X(rx_read_requests) X(rx_send_requests) \
	X(db_misdirected) X(cq_overflows) X(retrans_pkts) X(retrans_bytes) X(seq_err_naks_sent) \
	X(rnr_naks_sent) X(duplicate_response) X(rx_pkey_mismatch) X(rx_opcode_seq_err) \
	X(rx_atomic_requests) X(atomic_replays) \
	X(rx_qkey_mismatch) X(tx_ud_packets) X(rx_ud_packets) \
	X(srq_limit_events) \
	X(np_ecn_marked_roce_packets) X(np_cnp_sent) X(rp_cnp_handled) X(rp_cnp_ignored) \
	X(rp_rate_decrease_events) X(rp_rate_increase_events) X(rp_min_rate_events) \
	X(rp_limited_qps) \
	X(out_of_order_accepted) X(selective_retrans_pkts) X(tail_loss_probes) \
	X(hpcc_int_echo_acks) X(hpcc_window_updates) X(hpcc_int_echoes_sent) X(rx_int_discards) \
	X(db_rec_errors) X(adaptive_retrans) \
	X(timely_rtt_samples) X(timely_rate_decreases) X(timely_rate_increases)

struct ternm_rdma_stats {
#define X(n) uint64_t n;
	TERNM_RDMA_STATS(X)
#undef X
};

/* The counters of a QP counter set (struct tern_cmd_counter_set_out), as the port's. */
#define TERNM_QP_STATS(X) \
	X(tx_roce_packets) X(tx_roce_bytes) X(rx_roce_packets) X(rx_roce_bytes) \
	X(out_of_sequence) X(duplicate_request) X(packet_seq_err) X(implied_nak_seq_err) \
	X(local_ack_timeout_err) X(rnr_nak_retry_err) X(out_of_buffer) \
	X(req_transport_retries_exceeded) X(req_rnr_retries_exceeded) \
	X(req_remote_access_errors) X(req_remote_invalid_request) X(resp_remote_access_errors) \
	X(resp_local_length_error) X(retrans_pkts) X(retrans_bytes) X(seq_err_naks_sent) \
	X(rnr_naks_sent) X(np_ecn_marked_roce_packets) X(np_cnp_sent) X(rp_cnp_handled)

struct ternm_qp_stats {
#define X(n) uint64_t n;
	TERNM_QP_STATS(X)
#undef X
};

/* A QP counter set: free unless used; nqp QPs are bound to it. */
struct ternm_ctr_set {
	bool used;
	uint32_t nqp;
	struct ternm_qp_stats s;
};

/*
 * Count @n in the port counter @f and, if @qp (may be NULL) is bound to a counter set, in the
 * set's counter of the same name (TERNM_QP_STATS only).
 */
#define TERNM_QSTAT(m, qp, f, n) do {						\
	struct ternm_rdma *r_ = (m)->rdma;					\
	const struct ternm_qp *q_ = (qp);					\
	uint64_t n_ = (n);							\
										\
	r_->stats.f += n_;							\
	if (q_ && q_->ctr_set)							\
		r_->ctr[q_->ctr_set].s.f += n_;					\
} while (0)

/* A UD multicast group: free while nqp is 0. */
struct ternm_mcast_grp {
	uint8_t gid[16];
	uint32_t nqp;
	uint32_t qpn[TERNM_MAX_MCAST_QP];
};

struct ternm_rdma {
	struct ternm_mcast_grp mcast[TERNM_MAX_MCAST_GRP];
	struct ternm_pd pd[TERNM_MAX_PD];
	struct ternm_mr mr[TERNM_MAX_MR];
	struct ternm_cq cq[TERNM_MAX_CQ];
	struct ternm_srq srq[TERNM_MAX_SRQ];
	struct ternm_qp *qp[TERNM_MAX_QP];
	uint32_t next_qpn;	/* allocation cursor: QPNs are not reused at once */
	bool mcast_loop;	/* the UD packet being sent goes to this port's group too */
	uint32_t next_mr;
	uint32_t mr_pages;	/* page entries held by all MRs */
	uint32_t sq_wqes;	/* SQ entries held by all QPs (the model's send state) */
	uint64_t sr_buf_bytes;	/* selective-repeat reorder buffers allocated (rdma_sr.c) */
	uint64_t sr_slot_bytes;	/* ... and their header slots */
	struct ternm_qp *work_head, *work_tail;
	struct ternm_qp *macwait_head, *macwait_tail;	/* held back by the MAC */
	struct ternm_qp *timer_head;
	struct ternm_cq *cq_timer_head;	/* CQs whose moderation ends by time */
	struct ternm_rdma_stats stats;
	struct ternm_ctr_set ctr[TERNM_MAX_CTR_SET + 1];	/* [0] unused: "no set" */
	uint8_t tx[TERN_ETH_MAX_FRAME];
	/* CNPs: built in their own buffer, they are sent while a received frame is handled */
	uint8_t cnp_tx[TERNM_MAX_L2L4 + BTH_LEN + CNP_RSVD_LEN + ICRC_LEN];
	/* a received INT frame without its shim (rdma_hpcc.c), and the telemetry it carried */
	bool int_busy;
	bool int_rsp_echo;	/* rdma_hpcc.c is sending a RESP_ECHO of int_hops */
	uint8_t int_type, int_n;
	uint8_t int_hops[TERN_INT_MAX_HOPS * sizeof(struct tern_int_hop)];
	uint8_t int_rx[TERN_ETH_MAX_FRAME];
};

/* ECN field values (IPv4 TOS / IPv6 traffic class, low 2 bits). */
#define ECN_NOT_ECT	0
#define ECN_ECT0	2
#define ECN_CE		3

/*
 * Congestion control parameters (struct tern_cc_params, host order; rdma_cc.c). Reset state:
 * RP and NP off, the TERN_CC_DEF_* values.
 */
struct ternm_cc {
	uint8_t rp_en, np_en, cnp_dscp, cnp_prio;
	uint32_t min_time_between_cnps;
	uint32_t rpg_time_reset;
	uint32_t rpg_byte_reset;
	uint32_t rpg_threshold;
	uint32_t rpg_max_rate;
	uint32_t rpg_ai_rate;
	uint32_t rpg_hai_rate;
	uint32_t rpg_gd;
	uint32_t rpg_min_dec_fac;
	uint32_t rpg_min_rate;
	uint32_t rate_to_set_on_first_cnp;
	uint32_t dce_tcp_g;
	uint32_t dce_tcp_rtt;
	uint32_t rate_reduce_monitor_period;
	uint32_t initial_alpha_value;
	uint8_t hpcc_en, hpcc_max_stage;
	uint16_t hpcc_eta;
	uint32_t hpcc_ai_rate, hpcc_base_rtt;
	uint8_t timely_en, timely_hai_thresh;
	uint16_t timely_alpha, timely_beta;
	uint32_t timely_delta, timely_t_low, timely_t_high, timely_min_rtt, timely_seg;
	uint32_t timely_min_rate;
};

/* rdma_sched.c */
void ternm_qp_macwait(struct tern_model *m, struct ternm_qp *qp);
void ternm_qp_work(struct tern_model *m, struct ternm_qp *qp);
void ternm_qp_timer_sync(struct tern_model *m, struct ternm_qp *qp);
void ternm_qp_unschedule(struct tern_model *m, struct ternm_qp *qp);

/* rdma_obj.c */
struct ternm_qp *ternm_qp_get(struct tern_model *m, uint32_t qpn);
void ternm_qp_to_err(struct tern_model *m, struct ternm_qp *qp);
void ternm_qp_event(struct tern_model *m, struct ternm_qp *qp, uint8_t ev);
int ternm_path_check(const uint8_t *path);

/* rdma_mr.c */
int ternm_mr_check(struct tern_model *m, uint32_t key, const struct ternm_qp *qp,
		   uint32_t access, uint64_t va, uint64_t len);
int ternm_mr_copy(struct tern_model *m, uint32_t key, uint64_t va, void *buf, uint32_t len,
		  bool write, bool last_byte_last);
int ternm_mr_create(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r);
int ternm_mr_destroy(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r);
int ternm_mr_rereg(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r);
void ternm_mr_clear(struct tern_model *m);
int ternm_mr_fast_reg(struct tern_model *m, const struct ternm_qp *qp, uint32_t key,
		      const uint8_t *seg, uint8_t *synd);
int ternm_mr_invalidate(struct tern_model *m, uint32_t pdn, uint32_t key);
void ternm_mr_flush_key(struct tern_model *m, uint32_t pdn, uint32_t key);
void ternm_mw_qp_gone(struct tern_model *m, uint32_t qpn);
int ternm_mw_bind(struct tern_model *m, const struct ternm_qp *qp, uint32_t key,
		  const uint8_t *seg, uint8_t *synd);

/* rdma_wire.c */
void ternm_qp_build_hdr(struct ternm_qp *qp);
void ternm_hdr_build(struct ternm_qp *qp, const uint8_t *path);
uint8_t *ternm_pkt_start(struct tern_model *m, struct ternm_qp *qp, uint8_t opcode, bool se,
			 bool ackreq, uint32_t psn);
size_t ternm_pkt_send(struct tern_model *m, struct ternm_qp *qp, uint8_t *end);
size_t ternm_cnp_send(struct tern_model *m, struct ternm_qp *qp);
unsigned int ternm_frame_ecn(const uint8_t *f, size_t l3, bool v6);

/* rdma_cc.c */
int ternm_cc_init(struct tern_model *m);
void ternm_cc_fini(struct tern_model *m);
void ternm_cc_clear(struct tern_model *m);
unsigned int ternm_path_prio(const struct tern_model *m, const uint8_t *path);
bool ternm_cc_rp(const struct tern_model *m, const struct ternm_qp *qp);
unsigned int ternm_cc_ecn(const struct tern_model *m, const struct ternm_qp *qp, uint8_t opcode);
bool ternm_tx_gate(struct tern_model *m, struct ternm_qp *qp, const uint8_t *path);
void ternm_cc_sent(struct tern_model *m, struct ternm_qp *qp, size_t len);
void ternm_cc_np_rx(struct tern_model *m, struct ternm_qp *qp, const uint8_t *f, size_t len,
		    size_t l3, bool v6);
void ternm_cc_cnp_rx(struct tern_model *m, size_t len, const uint8_t *bth,
		     const uint8_t *end);
uint64_t ternm_cc_deadline(const struct ternm_qp *qp);
void ternm_cc_timer(struct tern_model *m, struct ternm_qp *qp, uint64_t now);
void ternm_cc_qp_reset(struct tern_model *m, struct ternm_qp *qp);
void ternm_cc_pace(struct tern_model *m, struct ternm_qp *qp, uint64_t kbps);

/* rdma_hpcc.c */
struct ternm_hpcc_view {	/* QUERY_QP's HPCC fields */
	uint32_t window;	/* bytes */
	uint16_t util;		/* 1/1000 */
	uint8_t inc_stage;
};

bool ternm_hpcc_qp(const struct tern_model *m, const struct ternm_qp *qp);
bool ternm_hpcc_query(const struct tern_model *m, const struct ternm_qp *qp,
		      struct ternm_hpcc_view *v);
bool ternm_hpcc_gate(struct tern_model *m, struct ternm_qp *qp);
bool ternm_hpcc_rsp_gate(struct tern_model *m, struct ternm_qp *qp, uint32_t psn);
void ternm_hpcc_rsp_sent(struct tern_model *m, struct ternm_qp *qp, uint32_t psn);
bool ternm_hpcc_rx(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p);
void ternm_hpcc_qp_reset(struct ternm_qp *qp);
size_t ternm_int_tx(struct tern_model *m, struct ternm_qp *qp, uint8_t *f, uint8_t *bth,
		    size_t len, size_t room);
void ternm_int_rx(struct tern_model *m, const uint8_t *f, size_t len, size_t l3, bool v6,
		  size_t udp);
void ternm_cc_query_qp(struct tern_model *m, struct ternm_qp *qp, uint32_t *rate_mbps,
		       uint32_t *alpha);

/* rdma_timely.c */
struct ternm_timely_view {	/* QUERY_QP's TIMELY fields */
	uint32_t rate_mbps, rtt_ns;
	int32_t rtt_diff_ns;
	uint8_t hai_count;
};

bool ternm_timely_qp(const struct tern_model *m, const struct ternm_qp *qp);
bool ternm_timely_query(const struct tern_model *m, const struct ternm_qp *qp,
			struct ternm_timely_view *v);
bool ternm_timely_ackreq(const struct tern_model *m, const struct ternm_qp *qp);
void ternm_timely_sent(struct tern_model *m, struct ternm_qp *qp, uint32_t psn, uint32_t n,
		       size_t len);
void ternm_timely_acked(struct tern_model *m, struct ternm_qp *qp);
int ternm_timely_parse(struct ternm_cc *c, const uint8_t *in, uint32_t line,
		       struct ternm_cmd_result *r);
void ternm_timely_put(const struct ternm_cc *c, uint8_t *o);

/* rdma_req.c */
int ternm_wqe_read_sges(struct tern_model *m, struct ternm_qp *qp, struct ternm_wqe_cache *wc,
			uint64_t off, uint32_t hl, uint32_t access, uint64_t *total,
			uint8_t *synd);
unsigned int ternm_req_send(struct tern_model *m, struct ternm_qp *qp, unsigned int budget);
bool ternm_req_has_work(const struct ternm_qp *qp);
void ternm_req_rx(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p);
void ternm_req_timer(struct tern_model *m, struct ternm_qp *qp, uint64_t now);
unsigned int ternm_qp_flush(struct tern_model *m, struct ternm_qp *qp, unsigned int budget);
void ternm_req_reset(struct ternm_qp *qp);
void ternm_req_check_drained(struct tern_model *m, struct ternm_qp *qp);

/* rdma_resp.c */
void ternm_resp_rx(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p);
unsigned int ternm_resp_send(struct tern_model *m, struct ternm_qp *qp, unsigned int budget);
void ternm_resp_flush_acks(struct tern_model *m, struct ternm_qp *qp);
void ternm_resp_reset(struct ternm_qp *qp);
int ternm_ud_rqe_place(struct tern_model *m, struct ternm_qp *qp, const uint8_t *buf, uint32_t n,
		       uint8_t *synd);
void ternm_ud_recv_cqe(struct tern_model *m, struct ternm_qp *qp, uint8_t opcode, uint8_t status,
		       uint8_t synd, uint32_t len, const uint8_t *imm, bool se, uint8_t flags,
		       uint32_t src_qpn);

/* rdma_mcast.c */
bool ternm_gid_is_mcast(const uint8_t *gid);
void ternm_mcast_mac(const uint8_t *gid, uint8_t *mac);
struct ternm_mcast_grp *ternm_mcast_find(struct tern_model *m, const uint8_t *gid);
int ternm_mcast_cmd(struct tern_model *m, bool attach, const uint8_t *in,
		    struct ternm_cmd_result *r);
void ternm_mcast_qp_gone(struct tern_model *m, uint32_t qpn);

/* rdma_ctr.c */
int ternm_ctr_cmd(struct tern_model *m, uint16_t opcode, const uint8_t *in, uint16_t out_len,
		  struct ternm_cmd_result *r);
void ternm_ctr_qp_gone(struct tern_model *m, struct ternm_qp *qp);

/* rdma_ud.c */
uint32_t ternm_ud_mtu(const struct tern_model *m);
uint32_t ternm_ud_attrs(uint8_t cur, uint8_t next, uint32_t *need);
unsigned int ternm_ud_send(struct tern_model *m, struct ternm_qp *qp, unsigned int budget);
void ternm_ud_rx(struct tern_model *m, const uint8_t *f, size_t len, size_t l3, bool v6,
		 const uint8_t *bth, const uint8_t *end);
int ternm_rqe_read(struct tern_model *m, struct ternm_qp *qp, const struct ternm_mem *mem,
		   uint64_t off, uint32_t slot);
int ternm_rqe_fetch(struct tern_model *m, struct ternm_qp *qp);
int ternm_rqe_parse(struct tern_model *m, const struct ternm_mem *mem, uint64_t off,
		    uint32_t slot, bool *hdr, uint64_t *wr_id, struct ternm_sge *sge,
		    uint8_t *nsge);
bool ternm_resp_place(struct tern_model *m, struct ternm_qp *qp, struct ternm_pkt *p);
int ternm_wq_db_rec_read(struct tern_model *m, const struct ternm_mem *mem, unsigned int log_depth,
			 unsigned int log_stride, uint16_t ci, uint16_t *pi);

/*
 * May a work queue 2^@log_depth deep, with producer index @cur and consumer index @ci, take
 * @pi as its new producer index (doorbell or doorbell record)? Only forward, and never more
 * than the depth ahead of @ci: WQEs once posted may already be in use (started SQ WQEs up to
 * req_max, the receive WQE at rq_ci, those selective repeat placed into beyond it), and a
 * producer index moved back over them would let the consumer index pass it.
 */
static inline bool ternm_wq_pi_ok(uint16_t pi, uint16_t cur, uint16_t ci, unsigned int log_depth)
{
	return (uint16_t)(pi - cur) <= (uint16_t)((1u << log_depth) - (uint16_t)(cur - ci));
}
int ternm_rq_db_rec(struct tern_model *m, struct ternm_qp *qp, bool quiet);

/*
 * The requester's loss recovery: rdma_req.c calls these at fixed points, the same for every
 * RC QP; ternm_recovery() picks go-back-N (ternm_gbn_recovery, rdma_req.c: go back to
 * una_psn, nothing else) or selective repeat (ternm_sr_recovery, rdma_sr.c).
 */
struct ternm_recovery_ops {
	const char *log_tag;	/* appended to the requester's log messages */
	/* before anything new: resend what is known lost; returns the packets sent */
	unsigned int (*resend)(struct tern_model *m, struct ternm_qp *qp, unsigned int budget);
	/* whether the request packet at @psn has to wait for acknowledgements */
	bool (*cap_full)(const struct ternm_qp *qp, uint32_t psn);
	/* a READ request being resent asks for at most this many responses (0: its rest) */
	uint32_t (*rd_lim)(const struct ternm_qp *qp);
	/* SEND/WRITE packets after the first carry their placement (SPH or RETH) */
	bool place;
	/* a request for PSNs [@psn, @psn + @n) went out (before sent_psn moves) */
	void (*sent)(struct tern_model *m, struct ternm_qp *qp, uint32_t psn, uint32_t n);
	/* the retransmit timer is being armed for @rto_ns: returns the time to arm */
	uint64_t (*arm_ns)(struct tern_model *m, struct ternm_qp *qp, uint64_t rto_ns);
	/* the retransmit timer expired: true if that was a probe's time, not the timeout */
	bool (*timeout)(struct tern_model *m, struct ternm_qp *qp, uint64_t rto_ns);
	/* the READ or atomic at una_psn lost responses (a gap, or an ACK up to @acked) */
	void (*implied_nak)(struct tern_model *m, struct ternm_qp *qp, uint32_t acked);
	/*
	 * READ @s at sq_ci, which an ACK passes: true if una_psn moved over responses of it
	 * placed ahead (the ACK is then tried again)
	 */
	bool (*rd_acked_ahead)(struct tern_model *m, struct ternm_qp *qp,
			       const struct ternm_swqe *s);
	/* a READ response after una_psn: true if it was taken care of (else it is a gap) */
	bool (*rd_resp_ahead)(struct tern_model *m, struct ternm_qp *qp,
			      const struct ternm_pkt *p);
	/* the READ response at una_psn was placed (@done: the READ completed) */
	void (*rd_resp_done)(struct tern_model *m, struct ternm_qp *qp, bool done);
	/* the atomic at sq_ci completed */
	void (*atomic_done)(struct tern_model *m, struct ternm_qp *qp);
	/* a NAK with the SACK code */
	void (*sack)(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p);
};

extern const struct ternm_recovery_ops ternm_gbn_recovery;
extern const struct ternm_recovery_ops ternm_sr_recovery;

/* The QP's loss recovery: selective repeat once MODIFY_QP switched it on (qp->sr). */
static inline const struct ternm_recovery_ops *ternm_recovery(const struct ternm_qp *qp)
{
	return qp->sr ? &ternm_sr_recovery : &ternm_gbn_recovery;
}

/* rdma_req.c: the round-trip sampler (struct ternm_rtt), for both recoveries */
#define TERNM_MIN_RTO_NS	8000	/* the measured timeouts' floor (8 us) */
void ternm_rtt_sent(struct ternm_qp *qp, uint32_t psn, uint32_t n, uint64_t now);
void ternm_rtt_acked(struct ternm_qp *qp, uint64_t now);
void ternm_rtt_sample(struct ternm_rtt *r, uint64_t ns);
uint64_t ternm_rto_ns(const struct ternm_qp *qp);

/* rdma_req.c, for rdma_sr.c */
void ternm_req_ack_upto(struct tern_model *m, struct ternm_qp *qp, uint32_t psn);
bool ternm_req_sr_advance(struct tern_model *m, struct ternm_qp *qp);
bool ternm_req_sr_read_ahead(struct tern_model *m, struct ternm_qp *qp,
			     const struct ternm_pkt *p);

/* rdma_resp.c, for rdma_sr.c */
bool ternm_resp_push(struct tern_model *m, struct ternm_qp *qp, uint8_t type, uint8_t syn,
		     uint32_t psn);
void ternm_resp_send_aeth(struct tern_model *m, struct ternm_qp *qp, uint8_t syn, uint32_t psn,
			  uint32_t msn);

/* rdma_sr.c: selective repeat (Documentation/hw/rdma.rst, "Selective repeat") */
#define TERNM_SR_MAX_WIN	1024	/* reorder window (PSN span) at most = SACK bits */
#define TERNM_SR_WIN_CAPS	4	/* the window: this many times the in-flight cap */
#define TERNM_SR_SLOT_BYTES	4096	/* payload of one slot: the largest path MTU */
#define TERNM_SR_MAX_BUF_BYTES	(64u << 20)	/* reorder buffers of all QPs together */
#define TERNM_SR_MAX_SLOT_BYTES	(32u << 20)	/* their header slots (ternm_sr_slot) */
#define TERNM_SR_DUPTHRESH	3	/* a hole is lost once a PSN this far beyond it came */
int ternm_sr_check(const struct ternm_qp *qp, uint32_t xport);
int ternm_sr_config(struct tern_model *m, struct ternm_qp *qp, uint32_t xport);
void ternm_sr_free(struct tern_model *m, struct ternm_qp *qp);
uint32_t ternm_sr_win(const struct ternm_qp *qp);
void ternm_sr_sq_start(struct ternm_qp *qp);
bool ternm_sr_resp_rx(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p);
void ternm_sr_send_sack(struct tern_model *m, struct ternm_qp *qp);
void ternm_sr_req_sack(struct tern_model *m, struct ternm_qp *qp, const struct ternm_pkt *p);
unsigned int ternm_sr_req_retx(struct tern_model *m, struct ternm_qp *qp, unsigned int budget);
void ternm_sr_req_resend(struct tern_model *m, struct ternm_qp *qp, uint32_t acked);
void ternm_sr_req_read_done(struct tern_model *m, struct ternm_qp *qp);
uint64_t ternm_sr_arm_ns(struct tern_model *m, struct ternm_qp *qp, uint64_t rto_ns);
bool ternm_sr_req_probe(struct tern_model *m, struct ternm_qp *qp, uint64_t rto_ns);
void ternm_sr_req_timeout(struct ternm_qp *qp);
void ternm_sr_sent(struct tern_model *m, struct ternm_qp *qp, uint32_t psn, uint32_t n);
bool ternm_sr_cap_full(const struct ternm_qp *qp, uint32_t psn);
#define TERNM_SR_RD_WIN		1024	/* requester: READ responses placed ahead of una_psn */
bool ternm_sr_rd_placed(struct ternm_qp *qp, uint32_t psn);
void ternm_sr_rd_mark(struct ternm_qp *qp, uint32_t psn);
uint32_t ternm_sr_rd_lim(const struct ternm_qp *qp);
int ternm_sr_atomic_keep(struct ternm_qp *qp, uint32_t psn, uint64_t orig);
bool ternm_sr_atomic_kept(const struct ternm_qp *qp, uint32_t psn, uint64_t *orig);
void ternm_sr_rd_gap(struct tern_model *m, struct ternm_qp *qp);

/* rdma_atomic.c */
uint8_t *ternm_atomic_put_eth(uint8_t *x, const struct ternm_wqe_cache *wc);
int ternm_atomic_exec(struct tern_model *m, const struct ternm_pkt *p, uint64_t *orig);

/* rdma_srq.c */
int ternm_srq_cmd_in_len(uint16_t opcode);
int ternm_srq_cmd(struct tern_model *m, uint16_t opcode, const uint8_t *in, uint16_t out_len,
		  struct ternm_cmd_result *r);
void ternm_srq_doorbell(struct tern_model *m, uint16_t page, uint64_t val);
struct ternm_srq *ternm_srq_get(struct tern_model *m, uint32_t srqn);
int ternm_srq_qp_check(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r);
void ternm_srq_qp_ref(struct tern_model *m, struct ternm_qp *qp, bool get);
int ternm_srq_fetch(struct tern_model *m, struct ternm_qp *qp);
unsigned int ternm_srq_qp_flush(struct tern_model *m, struct ternm_qp *qp);
int ternm_srq_reserve(struct tern_model *m, struct ternm_qp *qp, uint32_t ahead, uint32_t bound,
		      const struct ternm_sge **sge, uint8_t *nsge);
void ternm_srq_qp_release(struct tern_model *m, struct ternm_qp *qp, bool flush);
void ternm_srq_clear(struct tern_model *m);

/* rdma_cq.c */
struct ternm_cqe_info {
	uint64_t wr_id;
	uint32_t byte_len;
	uint8_t imm[4];
	uint16_t wqe_idx;
	uint8_t opcode, status, vendor_err, flags;
	uint32_t src_qpn;	/* UD/GSI receive */
};
void ternm_cq_write(struct tern_model *m, struct ternm_qp *qp, uint32_t cqn,
		    const struct ternm_cqe_info *ci);
void ternm_cq_doorbell(struct ternm_cq *cq, uint64_t val);
int ternm_cq_modify(struct tern_model *m, struct ternm_cq *cq, const uint8_t *in,
		    uint32_t *syndrome);
void ternm_cq_cancel(struct tern_model *m, struct ternm_cq *cq);
uint64_t ternm_cq_next_deadline(const struct tern_model *m);
void ternm_cq_timer(struct tern_model *m, uint64_t now);

#endif /* TERN_MODEL_RDMA_H */
