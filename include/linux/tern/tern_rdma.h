/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * tern RDMA (RoCEv2) hardware interface: user doorbells, work queue entries, completion
 * entries, RDMA events, and the firmware commands that create and change RDMA objects.
 *
 * Part of the one definition of the device (with tern_hw.h and tern_cmd.h): the kernel
 * driver, the rdma-core provider and the device model compile against it, and
 * Documentation/hw/rdma.rst explains it for people. All multi-byte fields are little-endian
 * except those typed __be32, which hold bytes exactly as the verbs API and the wire carry
 * them (immediate data).
 *
 * Objects. Protection domains (PDN), memory regions (key), completion queues (CQN) and queue
 * pairs (QPN) are numbered by the firmware; numbers are below the limits QUERY_RDMA reports.
 * QPNs 0 and 1 are reserved (QP0/QP1) and never returned by CREATE_QP. An MR's lkey and rkey
 * are the same value: the MR index << 8 | the key byte the driver chose at CREATE_MR.
 *
 * Queues live in host memory described by struct tern_mem_desc (usually a page list pinned
 * from the user's address space). The device copies every page list it is given while it
 * runs the command; the driver may free the list as soon as the command completes.
 */
#ifndef TERN_RDMA_H
#define TERN_RDMA_H

#include <linux/types.h>
#include "tern_hw.h"

/* ---------------------------------------------------------------------------------------
 * User doorbells. Each RDMA user context owns one UAR page of BAR2 (pages
 * TERN_DB_FIRST_UAR..num_db_pages-1, chosen by the driver). A QP or CQ is bound to one UAR at
 * creation; the device ignores, and counts in db_misdirected, a
 * doorbell for an object that is not bound to the page it was written to. Doorbells are
 * single 64-bit writes; a 32-bit write to these offsets is ignored.
 */
#define TERN_UDB_SQ			0x000	/* TERN_UDB_QPN | PI << TERN_UDB_PI_SHIFT */
#define TERN_UDB_RQ			0x008	/* TERN_UDB_QPN | PI << TERN_UDB_PI_SHIFT */
#define TERN_UDB_CQ			0x010	/* CQN | CI << 32 | TERN_UDB_CQ_ARM_* */
#define TERN_UDB_SRQ			0x018	/* SRQN | PI << TERN_UDB_PI_SHIFT */

#define TERN_UDB_OBJ_MASK		0x00ffffffull	/* bits 23:0: QPN or CQN */
#define TERN_UDB_PI_SHIFT		32
/* SQ/RQ/SRQ: bits 47:32 are the queue's new producer index (WQEs posted, free-running u16). */
#define TERN_UDB_PI_MASK		0xffffull
/* CQ: bits 55:32 are the consumer index (CQEs consumed, modulo 2^24), then the arm type. */
#define TERN_UDB_CI_MASK		0xffffffull
#define TERN_UDB_CQ_ARM_SOLICITED	(1ull << 62)	/* event on the next solicited/error CQE */
#define TERN_UDB_CQ_ARM_NEXT		(1ull << 63)	/* event on the next CQE */

/*
 * Doorbell records (TERN_RDMA_CAP_DB_REC). An RQ created with TERN_QP_F_RQ_DB_REC, or an SRQ
 * created with TERN_SRQ_F_DB_REC, has a struct tern_wq_db_rec in host memory, right after its
 * ring in the same queue memory (rq_mem / mem covers both). Software posts receive WQEs by
 * writing them, then (after a write barrier) the queue's new producer index to the record;
 * it need not ring the queue's doorbell. The device keeps a cached producer index and reads
 * the record (then the WQEs, in that order) only when its cache says the queue is empty and
 * it needs a WQE: when a message arrives (before it would send an RNR NAK or drop a UD
 * packet), when an RQ doorbell or SRQ doorbell is written for the queue (the value written is
 * then ignored: the record is the producer index), when a QP in ERR flushes its RQ, before an
 * SRQ limit event, and for QUERY_SRQ. The record is guest memory: a producer index more than
 * the queue's depth ahead of the device's consumer index or behind the one it last took (a
 * producer index only moves forward), or a record that cannot be read, is a queue error,
 * counted in db_rec_errors: when a message needs the WQE the RQ's QP goes to ERR
 * (TERN_QP_EV_FATAL; the message is NAKed as for an unreadable RQ; an RQ doorbell that finds
 * such a record only counts it), and an SRQ stops (TERN_SRQ_EV_ERROR). The device never
 * writes the record.
 *
 * A QP in ERR flushes only WQEs it knows of: software that posts to an RQ in ERR (or that
 * may be, after an error completion) rings TERN_UDB_RQ after writing the record. SRQ WQEs
 * are never flushed, so an SRQ with a record needs no doorbell. The CQ's consumer index has
 * always been a record (struct tern_cq_ci_rec): polling writes no register, only arming does.
 */
struct tern_wq_db_rec {
	__le16	pi;			/* WQEs posted, free-running (as a doorbell's PI) */
	__le16	rsvd0;			/* ignored by the device */
	__le32	rsvd1;			/* ignored by the device */
};

/**
 * tern_udb_wq() - value of an SQ, RQ or SRQ doorbell
 * @num: the QPN (TERN_UDB_SQ, TERN_UDB_RQ) or SRQN (TERN_UDB_SRQ)
 * @pi: the queue's new producer index
 *
 * Return: the 64-bit value to write.
 */
static inline __u64 tern_udb_wq(__u32 num, __u16 pi)
{
	return (num & TERN_UDB_OBJ_MASK) | (__u64)pi << TERN_UDB_PI_SHIFT;
}

/**
 * tern_udb_cq() - value of a CQ doorbell
 * @cqn: the CQ
 * @ci: CQEs consumed, free-running (the doorbell carries it modulo 2^24)
 * @arm: TERN_UDB_CQ_ARM_NEXT, TERN_UDB_CQ_ARM_SOLICITED or 0
 *
 * Return: the 64-bit value to write.
 */
static inline __u64 tern_udb_cq(__u32 cqn, __u32 ci, __u64 arm)
{
	return (cqn & TERN_UDB_OBJ_MASK) | (__u64)(ci & TERN_UDB_CI_MASK) << TERN_UDB_PI_SHIFT |
	       arm;
}

/**
 * tern_udb_num() - the object a doorbell value names
 * @db: the value written
 *
 * Return: the QPN, CQN or SRQN.
 */
static inline __u32 tern_udb_num(__u64 db)
{
	return (__u32)(db & TERN_UDB_OBJ_MASK);
}

/**
 * tern_udb_pi() - the producer index an SQ, RQ or SRQ doorbell value carries
 * @db: the value written
 *
 * Return: the new producer index.
 */
static inline __u16 tern_udb_pi(__u64 db)
{
	return (__u16)((db >> TERN_UDB_PI_SHIFT) & TERN_UDB_PI_MASK);
}

/**
 * tern_udb_ci() - the consumer index a CQ doorbell value carries
 * @db: the value written
 *
 * Return: CQEs consumed, modulo 2^24.
 */
static inline __u32 tern_udb_ci(__u64 db)
{
	return (__u32)((db >> TERN_UDB_PI_SHIFT) & TERN_UDB_CI_MASK);
}

/* ---------------------------------------------------------------------------------------
 * Scatter/gather entry: a range of a local MR, named by its lkey.
 */
struct tern_sge {
	__le64	addr;			/* virtual address in the MR's iova space */
	__le32	length;			/* bytes; 0 is allowed and moves nothing */
	__le32	lkey;
};

/* ---------------------------------------------------------------------------------------
 * Send queue. A ring of 2^log_sq_depth slots of 2^log_sq_stride bytes. A WQE is a header
 * followed by num_sge struct tern_sge, or (TERN_WQE_F_INLINE) by inline_len bytes of data;
 * it must fit its slot. The producer index (doorbell) counts WQEs; the device reads WQEs
 * between its consumer index and the producer index, in order. It may read a WQE again
 * until the WQE completes (resends, READ responses): one whose opcode, INLINE flag, length
 * or num_sge changed after it started fails with LOC_QP_OP_ERR (TERN_SYND_WQE_CHANGED) and
 * the QP goes to ERR.
 */
enum tern_wqe_opcode {
	TERN_WQE_SEND			= 0x00,
	TERN_WQE_SEND_IMM		= 0x01,
	TERN_WQE_RDMA_WRITE		= 0x02,
	TERN_WQE_RDMA_WRITE_IMM		= 0x03,
	TERN_WQE_RDMA_READ		= 0x04,
	TERN_WQE_ATOMIC_CMP_SWP		= 0x05,	/* RC: 8-byte compare and swap */
	TERN_WQE_ATOMIC_FETCH_ADD	= 0x06,	/* RC: 8-byte fetch and add */
	TERN_WQE_SEND_INV		= 0x07,	/* RC: SEND, then the peer invalidates rkey */
	TERN_WQE_REG_MR			= 0x08,	/* RC/UC: fast registration (local) */
	TERN_WQE_LOCAL_INV		= 0x09,	/* RC/UC: invalidate a key (local) */
	TERN_WQE_BIND_MW		= 0x0a,	/* RC/UC: bind a memory window (local) */
	/* 0x0b..0x0f reserved */
};

#define TERN_WQE_F_SIGNALED		(1u << 0)	/* write a CQE when done (or SQ_SIG_ALL) */
#define TERN_WQE_F_SOLICITED		(1u << 1)	/* set the BTH solicited-event bit */
#define TERN_WQE_F_INLINE		(1u << 2)	/* data follows the header */
#define TERN_WQE_F_FENCE		(1u << 3)	/* wait for earlier READs to complete */

/* Whether a WQE of opcode @op may carry TERN_WQE_F_SOLICITED: the ones a receive completes. */
static inline int tern_wqe_op_solicits(__u8 op)
{
	return op == TERN_WQE_SEND || op == TERN_WQE_SEND_IMM || op == TERN_WQE_SEND_INV ||
	       op == TERN_WQE_RDMA_WRITE_IMM;
}

/* Whether @op is an atomic (one 8-byte SGE receives the original value, never inline). */
static inline int tern_wqe_op_atomic(__u8 op)
{
	return op == TERN_WQE_ATOMIC_CMP_SWP || op == TERN_WQE_ATOMIC_FETCH_ADD;
}

struct tern_sq_wqe {
	__u8	opcode;			/* enum tern_wqe_opcode */
	__u8	flags;			/* TERN_WQE_F_* */
	__u8	num_sge;		/* 0..max_send_sge; 0 with INLINE */
	__u8	rsvd0;
	__le32	inline_len;		/* bytes of inline data (INLINE only) */
	__be32	imm_data;		/* *_IMM: as the verbs and the wire carry it */
	__le32	rkey;			/* RDMA_*: remote MR; SEND_INV, REG_MR, LOCAL_INV: */
					/* the key (see "Memory keys" below) */
	__le64	remote_addr;		/* RDMA_*: remote virtual address */
	__le64	wr_id;			/* echoed in the CQE */
	/*
	 * followed by, in this order:
	 *   struct tern_ud_seg       UD and GSI QPs only (every WQE)
	 *   struct tern_atomic_seg   ATOMIC_* only
	 *   struct tern_reg_mr_seg   REG_MR only (and nothing after it)
	 *   struct tern_bind_mw_seg  BIND_MW only (and nothing after it)
	 *   struct tern_sge[num_sge] or inline data
	 */
};

/*
 * Memory keys. An MR created with TERN_MR_F_FAST_REG (CREATE_MR) has no translation and no
 * rights at first: it is free, and every access through it fails as through a key that
 * does not exist. Its translation, rights and key byte come from REG_MR work requests, and
 * LOCAL_INV or a peer's SEND with invalidate takes them away again. The rules:
 *
 * - REG_MR (num_sge 0, no INLINE) names the MR by the full new key in the header's rkey:
 *   the index must be a FAST_REG MR of the QP's PD, free (never registered, or
 *   invalidated since), and the key byte becomes the MR's. The segment gives iova, length,
 *   access and a page list of npages (1..the MR's max_pages) addresses of 2^page_shift-byte
 *   pages in one DMA-contiguous array at pbl_addr, which the device reads when it executes
 *   the WQE (software must not change it until the WQE completes). length must fit the
 *   pages: (iova & (2^page_shift - 1)) + length <= npages << page_shift. REMOTE_WRITE and
 *   REMOTE_ATOMIC need LOCAL_WRITE. Errors complete the WQE with LOC_PROT_ERR (key, PD,
 *   state: TERN_SYND_LKEY, TERN_SYND_PD, TERN_SYND_MR_STATE) or LOC_QP_OP_ERR (the segment:
 *   TERN_SYND_BAD_REG) and the QP goes to ERR, as for any failed WQE.
 * - LOCAL_INV (num_sge 0) names a key in the header's rkey: a FAST_REG MR of the QP's PD
 *   whose key byte matches. The MR becomes free (invalidating a free MR is allowed). It
 *   waits until every WQE posted before it has completed, so that nothing the QP still
 *   sends or retransmits uses the key after it is gone.
 * - SEND_INV is a SEND whose last packet carries the key in an IETH (BTH opcodes
 *   SEND_LAST_WITH_INVALIDATE 0x16, SEND_ONLY_WITH_INVALIDATE 0x17). The responder places
 *   the message, then invalidates the key as LOCAL_INV would in the responder QP's PD; the
 *   receive CQE has TERN_CQE_F_INV and the key in invalidated_rkey. A key it cannot
 *   invalidate (no FAST_REG MR, another PD, stale key byte) is an invalid request: the
 *   receive completes with REM_INV_REQ_ERR (TERN_SYND_INV_RKEY), the requester's SEND with
 *   REM_INV_REQ_ERR after the NAK, and both QPs go to ERR.
 * - REG_MR and LOCAL_INV take no PSNs and send nothing; they complete in SQ order like any
 *   WQE (their CQE comes after those of the WQEs before them), with opcode REG_MR or
 *   LOCAL_INV and byte_len 0.
 */
/*
 * Memory windows (TERN_RDMA_CAP_MW): CREATE_MR with TERN_MR_F_MW_TYPE1 or _TYPE2 makes an
 * unbound window in a PD; its key is an rkey like an MR's (index << 8 | key byte), usable
 * only by peers (never in a local SGE). BIND_MW (num_sge 0, no INLINE; the window's new full
 * key in the header's rkey, struct tern_bind_mw_seg after it) binds it to [addr, addr +
 * length) of a valid MR of the same PD registered with TERN_ACCESS_MW_BIND, with the
 * window's remote rights (REMOTE_READ, REMOTE_WRITE, REMOTE_ATOMIC; write and atomic need
 * the MR's LOCAL_WRITE). Addresses through a window are the MR's (not zero-based). A type 1
 * window may be bound again while bound (length 0 unbinds it) and is never invalidated; a
 * type 2 window must be unbound, is bound to the QP that binds it (only that QP's peer may
 * use its key) and is unbound by LOCAL_INV or a peer's SEND_INV of its key (same PD, key byte
 * matching). Errors complete the WQE with MW_BIND_ERR (TERN_SYND_LKEY, _PD, _MR_STATE: window
 * not unbound, _ACCESS: MR without MW_BIND or rights, _BOUNDS) and the QP goes to ERR. A
 * bound window holds its MR: DESTROY_MR, REG_MR and invalidation of that MR are refused
 * (BAD_STATE; TERN_SYND_MR_STATE) until its windows are unbound or destroyed. DESTROY_MR of a
 * window goes by its index alone (software's key byte may be ahead of the device's).
 */
struct tern_bind_mw_seg {
	__le64	addr;			/* first byte of the window, in the MR's addresses */
	__le64	length;			/* bytes; 0 (type 1 only): unbind */
	__le32	mr_key;			/* the MR's lkey */
	__u8	access;			/* TERN_ACCESS_REMOTE_* */
	__u8	rsvd[3];
	__le64	rsvd1;
};

struct tern_reg_mr_seg {
	__le64	iova;			/* address of the first byte in work requests */
	__le64	length;			/* bytes, 1..max_mr_size */
	__le64	pbl_addr;		/* DMA address of npages __le64 page addresses */
	__le32	npages;			/* 1..the MR's max_pages */
	__u8	page_shift;		/* a size in page_size_cap, 12..TERN_MEM_MAX_PAGE_SHIFT */
	__u8	access;			/* TERN_ACCESS_* */
	__u8	rsvd[2];
};

/*
 * Atomics (RC only). remote_addr must be 8-byte aligned (the responder NAKs anything else
 * as an invalid request) and rkey must grant REMOTE_ATOMIC. The WQE carries exactly one
 * SGE of 8 bytes (num_sge 1, no INLINE): the device writes the remote location's original
 * value there. Values are 64-bit integers in the byte order of the memory they live in
 * (little-endian for the hosts tern serves); the wire carries them big-endian as RoCEv2
 * specifies. CMP_SWP: if *remote == compare then *remote = swap_add. FETCH_ADD:
 * *remote += swap_add (compare is ignored). Each atomic executes exactly once at the
 * responder, also when its request is retransmitted: a duplicate is answered with the saved
 * original value (the responder keeps max_dest_rd_atomic such results, as for READs).
 * An atomic counts against max_rd_atomic like a READ, and a FENCE waits for it as well.
 */
struct tern_atomic_seg {
	__le64	swap_add;		/* CMP_SWP: swap value; FETCH_ADD: the addend */
	__le64	compare;		/* CMP_SWP only */
};

#define TERN_SQ_MIN_LOG_STRIDE		6	/* 64 bytes: header + 2 SGEs */
#define TERN_SQ_MAX_LOG_STRIDE		10	/* 1 KiB */
#define TERN_SQ_UD_MIN_LOG_STRIDE	7	/* UD/GSI: header + tern_ud_seg + 1 SGE */

/* ---------------------------------------------------------------------------------------
 * Receive queue: 2^log_rq_depth slots of 2^log_rq_stride bytes; a WQE is a header followed
 * by num_sge SGEs. A SEND is scattered over the SGEs in order. On a UD or GSI QP the first
 * 40 bytes placed are the packet's network header (the verbs' GRH area): for RoCEv2 over
 * IPv6 the IPv6 header; over IPv4, 20 zero bytes then the IPv4 header. The payload follows
 * at byte 40; the CQE's byte_len counts the 40 bytes.
 *
 * Shared receive queue (SRQ): the same ring and WQE format, created with CREATE_SRQ and
 * posted through TERN_UDB_SRQ. A QP created with TERN_QP_F_SRQ takes its receive WQEs from
 * the SRQ, in ring order, when a message starts; the device reads each SRQ WQE exactly once
 * and keeps what it needs, so software may reuse a slot once its WQE has completed (WQEs are
 * consumed in ring order, so n completions free the n oldest slots). The CQE names the QP
 * (qpn) and the SRQ slot (wqe_idx).
 */
struct tern_rq_wqe {
	__le64	wr_id;			/* echoed in the CQE */
	__u8	num_sge;		/* 0..max_recv_sge */
	__u8	rsvd[7];
	/* followed by struct tern_sge[num_sge] */
};

#define TERN_RQ_MIN_LOG_STRIDE		5	/* 32 bytes: header + 1 SGE */
#define TERN_RQ_MAX_LOG_STRIDE		9	/* 512 bytes */

/* ---------------------------------------------------------------------------------------
 * Completion queue: 2^log_depth 32-byte CQEs, then (in the same memory, right after the ring)
 * a struct tern_cq_ci_rec where software stores how many CQEs it has consumed. The device
 * never overwrites an unconsumed CQE: before it would, it re-reads the record; if the ring
 * is really full the CQ goes to error (TERN_EQE_CQ_ERROR) and its QPs to ERR.
 *
 * The device writes bytes 0..30 of a CQE, then byte 31 (flags, with the phase bit) last, so
 * software that sees the new phase sees the whole entry. The phase bit is 1 on the first
 * pass through the ring, 0 on the second, and so on (as for command completions).
 */
enum tern_cqe_opcode {
	/* requester completions carry the WQE's enum tern_wqe_opcode (0x00..0x7f) */
	TERN_CQE_RECV			= 0x80,	/* a SEND arrived */
	TERN_CQE_RECV_IMM		= 0x81,	/* a SEND with immediate arrived */
	TERN_CQE_RECV_RDMA_WRITE_IMM	= 0x82,	/* an RDMA WRITE with immediate arrived */
};

/* Completion statuses: numbered as the verbs' work-completion statuses (IB_WC_*). */
enum tern_cqe_status {
	TERN_CQE_OK			= 0,
	TERN_CQE_LOC_LEN_ERR		= 1,	/* receive buffer too small, or bad SGE length */
	TERN_CQE_LOC_QP_OP_ERR		= 2,	/* malformed WQE (opcode, num_sge, inline) */
	TERN_CQE_LOC_PROT_ERR		= 4,	/* lkey invalid, wrong PD, out of bounds, access */
	TERN_CQE_MW_BIND_ERR		= 6,	/* BIND_MW refused */
	TERN_CQE_WR_FLUSH_ERR		= 5,	/* QP in error: the WQE was not executed */
	TERN_CQE_BAD_RESP_ERR		= 7,	/* unexpected response opcode or length */
	TERN_CQE_LOC_ACCESS_ERR		= 8,	/* responder: local access error */
	TERN_CQE_REM_INV_REQ_ERR	= 9,	/* peer NAKed: invalid request */
	TERN_CQE_REM_ACCESS_ERR		= 10,	/* peer NAKed: remote access error */
	TERN_CQE_REM_OP_ERR		= 11,	/* peer NAKed: remote operational error */
	TERN_CQE_RETRY_EXC_ERR		= 12,	/* transport retries (retry_cnt) exhausted */
	TERN_CQE_RNR_RETRY_EXC_ERR	= 13,	/* RNR retries (rnr_retry) exhausted */
	TERN_CQE_GENERAL_ERR		= 21,
};

#define TERN_CQE_F_IMM			(1u << 0)	/* imm_data is valid */
#define TERN_CQE_F_SOLICITED		(1u << 1)	/* received with the solicited-event bit */
#define TERN_CQE_F_GRH			(1u << 2)	/* UD/GSI receive: GRH area filled */
#define TERN_CQE_F_IPV4			(1u << 3)	/* with F_GRH: the network header is IPv4 */
#define TERN_CQE_F_INV			(1u << 4)	/* receive: invalidated_rkey is valid */
#define TERN_CQE_F_PHASE		(1u << 7)

/**
 * tern_cqe_phase() - phase bit of the CQEs on an index's pass through a CQ
 * @idx: free-running index of a CQE: the device's producer index as it writes the CQE,
 *	software's consumer index as it looks for the next one
 * @log_depth: log2 of the CQ's entries
 *
 * tern_ring_phase()'s rule, in the CQE's flags bit.
 *
 * Return: TERN_CQE_F_PHASE or 0.
 */
static inline __u8 tern_cqe_phase(__u32 idx, unsigned int log_depth)
{
	return (__u8)(tern_ring_phase(idx, log_depth) ? TERN_CQE_F_PHASE : 0);
}

struct tern_cqe {
	__le64	wr_id;
	__le32	byte_len;		/* receive: bytes placed; READ: bytes read */
	union {
		__be32	imm_data;		/* with TERN_CQE_F_IMM */
		__le32	invalidated_rkey;	/* with TERN_CQE_F_INV */
	};
	__le32	qpn;			/* local QP */
	__le32	src_qpn;		/* UD/GSI receive: the sender's QPN (DETH); else 0 */
	__le16	wqe_idx;		/* slot of the WQE in its queue */
	__u8	opcode;			/* enum tern_wqe_opcode or enum tern_cqe_opcode */
	__u8	status;			/* enum tern_cqe_status */
	__u8	vendor_err;		/* enum tern_cqe_syndrome when status != OK */
	__u8	rsvd[2];
	__u8	flags;			/* TERN_CQE_F_*; written last */
};

/*
 * CQE of a CQ created with TERN_CQ_F_TIMESTAMP (TERN_RDMA_CAP_CQE_TS): 64 bytes, the
 * ordinary CQE and then the device clock (tern_hw.h, TERN_REG_CLOCK_LO) when the CQE was
 * written, in nanoseconds. The device writes bytes 0..30 and 32..63, then byte 31 last, as
 * for 32-byte CQEs. The CI record follows the ring (64 << log_depth bytes).
 */
struct tern_cqe_ts {
	struct tern_cqe cqe;
	__le64	timestamp;		/* device clock, ns */
	__u8	rsvd[24];
};

/* Why a CQE has an error status (vendor_err), for people debugging a failure. */
enum tern_cqe_syndrome {
	TERN_SYND_NONE			= 0,
	TERN_SYND_BAD_OPCODE		= 1,	/* WQE opcode unknown */
	TERN_SYND_BAD_SGE_COUNT		= 2,	/* num_sge above the QP's limit */
	TERN_SYND_BAD_INLINE		= 3,	/* inline data longer than the slot */
	TERN_SYND_LKEY			= 4,	/* no such MR, or key byte stale */
	TERN_SYND_PD			= 5,	/* MR of another PD */
	TERN_SYND_BOUNDS		= 6,	/* range outside the MR */
	TERN_SYND_ACCESS		= 7,	/* MR lacks the access right */
	TERN_SYND_DMA			= 8,	/* host memory unreachable */
	TERN_SYND_MSG_TOO_LONG		= 9,	/* above max_msg_size, or receive buffer */
	TERN_SYND_NAK_INV_REQ		= 10,	/* peer NAK: invalid request */
	TERN_SYND_NAK_ACCESS		= 11,	/* peer NAK: remote access error */
	TERN_SYND_NAK_OP		= 12,	/* peer NAK: remote operational error */
	TERN_SYND_RETRY			= 13,	/* ack timeout, retries exhausted */
	TERN_SYND_RNR_RETRY		= 14,	/* RNR NAKs, retries exhausted */
	TERN_SYND_FLUSH			= 15,	/* flushed: QP in error */
	TERN_SYND_BAD_RESP		= 16,	/* malformed or unexpected response */
	TERN_SYND_BAD_AV		= 17,	/* UD: bad tern_ud_seg (path, dest_qpn) */
	TERN_SYND_MR_STATE		= 18,	/* REG_MR of an MR that is not free */
	TERN_SYND_BAD_REG		= 19,	/* REG_MR: bad tern_reg_mr_seg */
	TERN_SYND_INV_RKEY		= 20,	/* SEND_INV from a peer: key not to invalidate */
	TERN_SYND_WQE_CHANGED		= 21,	/* WQE rewritten after it started */
};

struct tern_cq_ci_rec {
	__le32	ci;			/* CQEs consumed, free-running (modulo 2^32) */
	__le32	rsvd;
};

/* ---------------------------------------------------------------------------------------
 * RDMA events (struct tern_eqe types 0x10..0x1f). A CQ's completion events go to the EQ
 * named at CREATE_CQ, once per arming (TERN_UDB_CQ_ARM_*). Affiliated QP and CQ events go
 * to the EQ created with TERN_EQ_F_ASYNC.
 */
#define TERN_EQE_CQ_COMPLETION		0x10	/* data[0]: CQN */
#define TERN_EQE_QP_EVENT		0x11	/* subtype: enum tern_qp_event; data[0]: QPN */
#define TERN_EQE_CQ_ERROR		0x12	/* subtype: enum tern_cq_error; data[0]: CQN */
#define TERN_EQE_SRQ_EVENT		0x13	/* subtype: enum tern_srq_event; data[0]: SRQN */

enum tern_qp_event {
	TERN_QP_EV_FATAL		= 1,	/* QP went to ERR on a local error */
	TERN_QP_EV_REQ_ERR		= 2,	/* responder saw an invalid request (NAKed) */
	TERN_QP_EV_ACCESS_ERR		= 3,	/* responder saw a remote access error (NAKed) */
	TERN_QP_EV_SQ_DRAINED		= 4,	/* SQD reached: no WQE outstanding */
	TERN_QP_EV_COMM_EST		= 5,	/* first packet received in RTR */
	TERN_QP_EV_LAST_WQE_REACHED	= 6,	/* SRQ QP in ERR: no more SRQ WQE will be used */
};

enum tern_srq_event {
	TERN_SRQ_EV_LIMIT		= 1,	/* WQEs available fell below the armed limit */
	TERN_SRQ_EV_ERROR		= 2,	/* SRQ ring unreachable: SRQ unusable */
};

enum tern_cq_error {
	TERN_CQ_ERR_OVERFLOW		= 1,
	TERN_CQ_ERR_DMA			= 2,	/* ring or CI record unreachable */
};

/* ---------------------------------------------------------------------------------------
 * Firmware commands 0x0100..0x01ff (see tern_cmd.h for the transport and statuses).
 */
enum tern_rdma_cmd_opcode {
	TERN_CMD_QUERY_RDMA		= 0x0100,
	TERN_CMD_CREATE_PD		= 0x0101,
	TERN_CMD_DESTROY_PD		= 0x0102,
	TERN_CMD_CREATE_MR		= 0x0103,
	TERN_CMD_DESTROY_MR		= 0x0104,
	TERN_CMD_CREATE_CQ		= 0x0105,
	TERN_CMD_DESTROY_CQ		= 0x0106,
	TERN_CMD_CREATE_QP		= 0x0107,
	TERN_CMD_MODIFY_QP		= 0x0108,
	TERN_CMD_QUERY_QP		= 0x0109,
	TERN_CMD_DESTROY_QP		= 0x010a,
	TERN_CMD_QUERY_RDMA_STATS	= 0x010b,
	TERN_CMD_CREATE_SRQ		= 0x010c,
	TERN_CMD_MODIFY_SRQ		= 0x010d,
	TERN_CMD_QUERY_SRQ		= 0x010e,
	TERN_CMD_DESTROY_SRQ		= 0x010f,
	TERN_CMD_RESIZE_CQ		= 0x0110,
	TERN_CMD_MODIFY_CQ		= 0x0111,
	TERN_CMD_REREG_MR		= 0x0112,	/* TERN_RDMA_CAP_REREG_MR */
	TERN_CMD_ATTACH_MCAST		= 0x0113,	/* TERN_RDMA_CAP_MCAST */
	TERN_CMD_DETACH_MCAST		= 0x0114,	/* TERN_RDMA_CAP_MCAST */
	TERN_CMD_ALLOC_COUNTER		= 0x0115,	/* TERN_RDMA_CAP_QP_COUNTERS */
	TERN_CMD_FREE_COUNTER		= 0x0116,	/* TERN_RDMA_CAP_QP_COUNTERS */
	TERN_CMD_BIND_QP_COUNTER	= 0x0117,	/* TERN_RDMA_CAP_QP_COUNTERS */
	TERN_CMD_QUERY_COUNTER		= 0x0118,	/* TERN_RDMA_CAP_QP_COUNTERS */
};

/* QUERY_RDMA: limits the device enforces. No input. */
struct tern_cmd_query_rdma_out {
	__le32	max_qp;			/* QPNs 2..max_qp-1 */
	__le32	max_cq;			/* CQNs 0..max_cq-1 */
	__le32	max_mr;			/* MR indexes 0..max_mr-1 */
	__le32	max_pd;			/* PDNs 0..max_pd-1 */
	__le64	max_mr_size;		/* bytes in one MR */
	__le64	page_size_cap;		/* MR page sizes the device takes (bit n: 2^n bytes) */
	__le32	max_msg_size;		/* bytes in one message */
	__le32	max_mr_pages;		/* entries in one MR page list */
	__u8	max_sq_log_depth;
	__u8	max_rq_log_depth;
	__u8	max_cq_log_depth;
	__u8	max_send_sge;
	__u8	max_recv_sge;
	__u8	max_rd_atomic;		/* outstanding RDMA READs a QP may issue */
	__u8	max_dest_rd_atomic;	/* outstanding RDMA READs a QP may serve */
	__u8	local_ca_ack_delay;	/* IB encoding: 4.096 us * 2^n */
	__le16	max_inline;		/* bytes of inline data in one WQE */
	__le16	rsvd0;
	__le32	cap_flags;		/* TERN_RDMA_CAP_* */
	__le32	max_srq;		/* SRQNs 0..max_srq-1 */
	__u8	max_srq_log_depth;
	__u8	rsvd1[3];
	__le32	max_total_mr_pages;	/* entries in the page lists of all MRs together */
	__le32	max_total_sq_wqes;	/* SQ entries of all QPs together */
	__le16	max_cq_moder_count;	/* MODIFY_CQ: largest max_count */
	__le16	max_cq_moder_period;	/* MODIFY_CQ: largest period_us */
	__le32	max_fast_reg_pages;	/* TERN_RDMA_CAP_MEM_MGT: largest FAST_REG max_pages */
	__le16	max_mcast_grp;		/* TERN_RDMA_CAP_MCAST: groups in the table */
	__le16	max_mcast_qp_attach;	/* TERN_RDMA_CAP_MCAST: QPs attached to one group */
	__le16	max_counter_sets;	/* TERN_RDMA_CAP_QP_COUNTERS: sets 1..max_counter_sets */
	__le16	rsvd;
};

#define TERN_RDMA_CAP_ATOMIC		(1u << 0)	/* ATOMIC_* WQEs, atomic at the device */
#define TERN_RDMA_CAP_UD		(1u << 1)	/* UD QPs and the GSI QP (QP1) */
#define TERN_RDMA_CAP_SRQ		(1u << 2)	/* shared receive queues */
#define TERN_RDMA_CAP_UC		(1u << 3)	/* UC QPs */
#define TERN_RDMA_CAP_CQ_MODERATION	(1u << 4)	/* MODIFY_CQ: completion-event moderation */
#define TERN_RDMA_CAP_MEM_MGT		(1u << 5)	/* FAST_REG MRs and their WQEs */
#define TERN_RDMA_CAP_MW		(1u << 6)	/* memory windows type 1 and 2 */
#define TERN_RDMA_CAP_SR		(1u << 7)	/* RC selective repeat (TERN_QP_XPORT_SR) */
#define TERN_RDMA_CAP_DB_REC		(1u << 8)	/* RQ/SRQ doorbell records */
#define TERN_RDMA_CAP_REREG_MR		(1u << 9)	/* REREG_MR: an MR changed in place */
#define TERN_RDMA_CAP_MCAST		(1u << 10)	/* UD multicast: ATTACH/DETACH_MCAST */
#define TERN_RDMA_CAP_QP_COUNTERS	(1u << 11)	/* QP counter sets: *_COUNTER commands */
#define TERN_RDMA_CAP_CQE_TS		(1u << 12)	/* TERN_CQ_F_TIMESTAMP: 64-byte CQEs */
#define TERN_RDMA_CAP_ADAPTIVE_RTO	(1u << 13)	/* TERN_QP_XPORT_ADAPTIVE_RTO */

/*
 * QP counter sets (TERN_RDMA_CAP_QP_COUNTERS; Documentation/hw/rdma.rst, "QP counter sets").
 * The device has max_counter_sets sets, numbered 1..max_counter_sets, each a struct
 * tern_cmd_counter_set_out of counters. Every QP is bound to one set or to none (0, the
 * state after CREATE_QP): the packets and events of a bound QP count in its set and, as
 * always, in the port's counters (QUERY_RDMA_STATS counts every QP, bound or not).
 *
 * ALLOC_COUNTER (no input; result: the set) takes a free set, its counters zero;
 * NO_RESOURCES when every set is taken. FREE_COUNTER frees a set: BAD_RESOURCE (offset of
 * set) for a set not allocated, BAD_STATE (offset of set) while a QP is bound to it.
 * BIND_QP_COUNTER binds @qpn to @set, or unbinds it with @set 0; a QP bound elsewhere moves
 * (what it counted stays in its old set), binding it to its own set changes nothing.
 * BAD_RESOURCE (offset of qpn) for a QP that does not exist, BAD_RESOURCE (offset of set)
 * for a set not allocated, BAD_PARAM (offset of rsvd) for reserved bits. DESTROY_QP unbinds
 * the QP. QUERY_COUNTER (out_len at least the struct) reads a set: BAD_RESOURCE for a set
 * not allocated. Counters are not cleared by reading; a device reset frees every set.
 *
 * A set counts what the port counter of the same name counts, restricted to its QPs: the
 * packets a QP sends (requests, responses, ACKs and NAKs, CNPs) and receives (a UD packet
 * delivered to several attached QPs counts once in each of their sets), the transport's
 * recovery and the errors of each side. Port counters with no QP (discards, ICRC errors,
 * doorbells, CQ and SRQ events, gauges) have no per-set counterpart.
 */
struct tern_cmd_counter_in {
	__le32	set;			/* FREE_COUNTER, QUERY_COUNTER: 1..max_counter_sets */
};

struct tern_cmd_bind_qp_counter_in {
	__le32	qpn;
	__le32	set;			/* 1..max_counter_sets, or 0: unbind */
	__le32	rsvd;
};

struct tern_cmd_counter_set_out {
	__le64	tx_roce_packets;
	__le64	tx_roce_bytes;
	__le64	rx_roce_packets;
	__le64	rx_roce_bytes;
	__le64	out_of_sequence;
	__le64	duplicate_request;
	__le64	packet_seq_err;
	__le64	implied_nak_seq_err;
	__le64	local_ack_timeout_err;
	__le64	rnr_nak_retry_err;
	__le64	out_of_buffer;
	__le64	req_transport_retries_exceeded;
	__le64	req_rnr_retries_exceeded;
	__le64	req_remote_access_errors;
	__le64	req_remote_invalid_request;
	__le64	resp_remote_access_errors;
	__le64	resp_local_length_error;
	__le64	retrans_pkts;
	__le64	retrans_bytes;
	__le64	seq_err_naks_sent;
	__le64	rnr_naks_sent;
	__le64	np_ecn_marked_roce_packets;
	__le64	np_cnp_sent;
	__le64	rp_cnp_handled;
};

/*
 * UD multicast (TERN_RDMA_CAP_MCAST; Documentation/hw/rdma.rst, "UD multicast"). The device
 * keeps a table of up to max_mcast_grp groups, each a multicast GID (IPv6 ff00::/8, or
 * IPv4-mapped ::ffff:224.0.0.0/4) with up to max_mcast_qp_attach attached UD QPs.
 *
 * ATTACH_MCAST attaches @qpn to the group @gid, making the group if it is new; attaching a
 * QP already attached succeeds and changes nothing. DETACH_MCAST takes it off again; a group
 * whose last QP goes is freed. A QP in any state may be attached; a QP that is not in
 * RTR..SQE receives nothing. DESTROY_QP takes the QP off every group. Refusals:
 * BAD_RESOURCE (syndrome: offset of qpn) for a QP that does not exist, BAD_PARAM (offset of
 * qpn) for a QP that is not UD (the GSI QP included), BAD_PARAM (offset of gid) for a GID
 * that is not multicast, BAD_PARAM (offset of rsvd) for reserved bits, NO_RESOURCES (offset
 * of gid) when the table has no free group, NO_RESOURCES (offset of qpn) when the group has
 * max_mcast_qp_attach QPs already; DETACH_MCAST of a QP not attached to the group:
 * BAD_RESOURCE (offset of gid).
 *
 * A received UD packet (BTH opcode 0x64/0x65) whose DestQP is TERN_MCAST_QPN and whose IP
 * destination is multicast is delivered to every QP attached to the group of that address
 * (as a GID), each as a unicast UD packet would be: the QP's state and Q_Key are checked,
 * each takes its own receive WQE and writes its own CQE, a QP with no receive WQE drops its
 * copy (out_of_buffer); the port's packet and byte counters count the packet once. A packet
 * for no group (or none of whose members can receive it), or with DestQP TERN_MCAST_QPN and
 * a unicast destination, is discarded (rx_roce_discards).
 *
 * A UD WQE whose tern_ud_seg path has a multicast dgid is sent with the Ethernet destination
 * the IP multicast mapping gives (01:00:5e + the low 23 bits of an IPv4 group, 33:33 + the
 * low 32 bits of an IPv6 group; path.dmac is ignored) and DestQP TERN_MCAST_QPN (dest_qpn is
 * ignored). If this port has the group in its table the packet is also looped back to the
 * group's QPs (every one, the sender included when attached), as IB specifies; the port
 * puts the frame on the wire as well.
 */
#define TERN_MCAST_QPN			0xffffffu

struct tern_cmd_mcast_in {
	__u8	gid[16];		/* the group: a multicast GID, network byte order */
	__le32	qpn;			/* a UD QP */
	__le32	rsvd;
};

/* CREATE_PD: no input; result: PDN. DESTROY_PD: BAD_STATE while an MR, QP or SRQ uses it. */
struct tern_cmd_destroy_pd_in {
	__le32	pdn;
};

/* Access rights, of an MR (CREATE_MR) and of a QP's responder (MODIFY_QP). */
#define TERN_ACCESS_LOCAL_WRITE		(1u << 0)
#define TERN_ACCESS_REMOTE_WRITE	(1u << 1)
#define TERN_ACCESS_REMOTE_READ		(1u << 2)
#define TERN_ACCESS_REMOTE_ATOMIC	(1u << 3)
#define TERN_ACCESS_MW_BIND		(1u << 4)	/* MRs: windows may be bound to it */

/* The MR covers bus addresses, not a page list: iova is the DMA address (kernel DMA MR). */
#define TERN_MR_F_PHYSICAL		(1u << 0)
/*
 * Fast registration (TERN_RDMA_CAP_MEM_MGT): the MR starts free, REG_MR work requests give
 * it a translation (see struct tern_reg_mr_seg). npages is its max_pages (the page list
 * REG_MR may give, 1..max_fast_reg_pages); access, iova, length, page_shift and pbl are 0.
 */
#define TERN_MR_F_FAST_REG		(1u << 1)
/*
 * Memory windows (TERN_RDMA_CAP_MW, see struct tern_bind_mw_seg): pdn and key only, every
 * other field 0.
 */
#define TERN_MR_F_MW_TYPE1		(1u << 2)
#define TERN_MR_F_MW_TYPE2		(1u << 3)

/*
 * CREATE_MR. The MR maps [iova, iova + length) onto pages of 2^page_shift bytes: byte
 * iova + n lives at pages[k] + o, where (iova & (2^page_shift - 1)) + n = k << page_shift | o.
 * @pbl describes the array of npages __le64 page addresses (each aligned to the page size).
 * Result: the MR index (key = index << 8 | @key).
 */
struct tern_cmd_create_mr_in {
	__le32	pdn;
	__le32	access;			/* TERN_ACCESS_* */
	__le64	iova;
	__le64	length;			/* 1..max_mr_size (0 with PHYSICAL: all memory) */
	__u8	key;			/* low byte of the lkey/rkey */
	__u8	flags;			/* TERN_MR_F_* */
	__u8	page_shift;		/* a size in page_size_cap */
	__u8	rsvd0;
	__le32	npages;			/* 1..max_mr_pages; 0 with PHYSICAL */
	struct tern_mem_desc pbl;	/* the page address array; zero with PHYSICAL */
};

/*
 * REREG_MR (TERN_RDMA_CAP_REREG_MR): the plain MR (CREATE_MR without flags) named by @key
 * becomes the MR @mr describes (new translation, PD and/or rights), keeping its index and
 * key byte, so its keys keep working: @mr is checked as CREATE_MR checks it, its flags must
 * be 0 and its key the key byte of @key. Each packet that uses the key from then on is
 * checked against the new MR. On any error the MR is unchanged; BAD_STATE while windows
 * are bound to it. BAD_PARAM and BAD_RESOURCE syndromes are offsets in this structure.
 */
struct tern_cmd_rereg_mr_in {
	__le32	key;			/* the MR's full lkey/rkey */
	__le32	rsvd;
	struct tern_cmd_create_mr_in mr;
};

/*
 * DESTROY_MR: the full key; for a FAST_REG MR only its index counts (the key byte software
 * last chose may be ahead of the device's, if its REG_MR never ran).
 */
struct tern_cmd_destroy_mr_in {
	__le32	key;			/* the full lkey/rkey */
};

/*
 * CREATE_CQ. @mem covers the ring (32 << log_depth bytes, 64 << log_depth with
 * TERN_CQ_F_TIMESTAMP) and the CI record after it. Result: CQN.
 */
#define TERN_CQ_F_TIMESTAMP		(1u << 0)	/* TERN_RDMA_CAP_CQE_TS: tern_cqe_ts */
/* A CQ with 64-byte CQEs holds at most 2^(max_cq_log_depth - 1) of them (the same bytes). */

struct tern_cmd_create_cq_in {
	struct tern_mem_desc mem;
	__u8	log_depth;		/* 1..max_cq_log_depth */
	__u8	flags;			/* TERN_CQ_F_*; BAD_PARAM for others */
	__le16	eqn;			/* EQ for completion events */
	__le16	uar;			/* doorbell page of the CQ's doorbells */
	__le16	rsvd1;
};

/* DESTROY_CQ: BAD_STATE while a QP uses the CQ. */
struct tern_cmd_destroy_cq_in {
	__le32	cqn;
};

/*
 * RESIZE_CQ: move a CQ to a new ring. The device reads the consumer index from the old
 * ring's CI record, copies the CQEs software has not consumed (CI up to its producer index)
 * to entries 0.. of the new ring in order, with the new ring's phase (1: its first pass),
 * and goes on writing after them; the new ring's CI record must read 0. The old ring is not
 * accessed once the command completes; arming and the EQ stay. @mem covers the new ring
 * (the CQ keeps its CQE size: 32 or 64 << log_depth bytes) and its CI record. BAD_PARAM
 * (syndrome: offset of log_depth) when more CQEs are outstanding than the new ring holds;
 * BAD_STATE for a CQ in error or whose old CI record cannot be read.
 */
struct tern_cmd_resize_cq_in {
	struct tern_mem_desc mem;
	__le32	cqn;
	__u8	log_depth;		/* 1..max_cq_log_depth */
	__u8	rsvd[3];
};

/*
 * MODIFY_CQ (TERN_RDMA_CAP_CQ_MODERATION): moderate the CQ's completion events. The CQE that
 * fires an arming (see the CQ doorbell) starts a moderation instead of posting the event at
 * once: the event is posted when @max_count CQEs have been written counting that one, or
 * @period_us microseconds after it, whichever comes first (0: no such bound; both 0, as
 * CREATE_CQ leaves a CQ: at once). A moderation under way takes new bounds at once, measured
 * from its start. BAD_PARAM (syndrome: the field's offset) beyond QUERY_RDMA's
 * max_cq_moder_count / max_cq_moder_period or for reserved bits; BAD_STATE for a CQ in error.
 */
struct tern_cmd_modify_cq_in {
	__le32	cqn;
	__le16	max_count;
	__le16	period_us;
	__le32	rsvd;
};

/*
 * QP types. A UD QP sends and receives single-packet SEND/SEND_IMM messages (BTH + DETH),
 * addressed per WQE by struct tern_ud_seg; received packets are accepted when their DETH
 * Q_Key equals the QP's (else dropped and counted in rx_qkey_mismatch). The GSI QP is a UD
 * QP numbered 1: at most one exists; it receives every packet addressed to QPN 1.
 *
 * A UC QP (TERN_RDMA_CAP_UC) is connected like an RC QP but unacknowledged: SEND, SEND_IMM,
 * RDMA_WRITE and RDMA_WRITE_IMM only (BTH opcodes 0x20 | the RC opcode), no AckReq, no
 * retransmission; a send WQE completes once its last packet is on the wire. The responder
 * takes a message only whole and in PSN order and silently drops the rest (see
 * Documentation/hw/rdma.rst, "UC"). MODIFY_QP takes the attributes IB gives UC: INIT->RTR
 * needs PATH, PATH_MTU, DEST_QPN and RQ_PSN; RTR->RTS needs SQ_PSN; ACCESS is optional;
 * TIMEOUT, RETRY_CNT, RNR_RETRY, MIN_RNR_TIMER, MAX_(DEST_)RD_ATOMIC and QKEY are refused.
 */
enum tern_qp_type {
	TERN_QPT_RC			= 0,
	TERN_QPT_UD			= 1,
	TERN_QPT_GSI			= 2,	/* CREATE_QP result is 1; BAD_STATE if it exists */
	TERN_QPT_UC			= 3,
};

#define TERN_QP_F_SQ_SIG_ALL		(1u << 0)	/* every WQE is signaled */
#define TERN_QP_F_SRQ			(1u << 1)	/* receives from srqn; no RQ of its own */
/* TERN_RDMA_CAP_DB_REC: rq_mem covers the ring and a struct tern_wq_db_rec after it */
#define TERN_QP_F_RQ_DB_REC		(1u << 2)

/*
 * CREATE_QP: the QP starts in RESET. Result: QPN. With TERN_QP_F_SRQ, log_rq_depth,
 * log_rq_stride and rq_mem must be zero and srqn names an existing SRQ (of any PD: the
 * lkeys of its receive WQEs are checked against the receiving QP's PD). UD and GSI QPs need
 * log_sq_stride >= TERN_SQ_UD_MIN_LOG_STRIDE; RC and UC QPs TERN_SQ_MIN_LOG_STRIDE.
 */
struct tern_cmd_create_qp_in {
	__le32	pdn;
	__le32	send_cqn;
	__le32	recv_cqn;
	__u8	type;			/* enum tern_qp_type */
	__u8	flags;			/* TERN_QP_F_* */
	__le16	uar;			/* doorbell page of the QP's doorbells */
	__u8	log_sq_depth;		/* 1..max_sq_log_depth */
	__u8	log_sq_stride;		/* TERN_SQ_MIN_LOG_STRIDE..TERN_SQ_MAX_LOG_STRIDE */
	__u8	log_rq_depth;		/* 1..max_rq_log_depth */
	__u8	log_rq_stride;		/* TERN_RQ_MIN_LOG_STRIDE..TERN_RQ_MAX_LOG_STRIDE */
	__le32	srqn;			/* with TERN_QP_F_SRQ */
	struct tern_mem_desc sq_mem;	/* 1 << (log_sq_depth + log_sq_stride) bytes */
	struct tern_mem_desc rq_mem;	/* 1 << (log_rq_depth + log_rq_stride) bytes */
					/* (+ 8: the record, with TERN_QP_F_RQ_DB_REC) */
};

/* QP states, numbered as the verbs' (IB_QPS_*). */
enum tern_qp_state {
	TERN_QPS_RESET			= 0,
	TERN_QPS_INIT			= 1,
	TERN_QPS_RTR			= 2,
	TERN_QPS_RTS			= 3,
	TERN_QPS_SQD			= 4,
	TERN_QPS_SQE			= 5,
	TERN_QPS_ERR			= 6,
};

/* The RoCEv2 path of a QP: everything the device needs to build its packets' headers. */
struct tern_qp_path {
	__u8	dmac[6];
	__u8	smac[6];
	__le16	vlan_id;		/* 802.1Q VID, or TERN_VLAN_NONE */
	__u8	ip_version;		/* 4 or 6 */
	__u8	hop_limit;		/* IPv4 TTL / IPv6 hop limit */
	__u8	traffic_class;		/* IPv4 TOS / IPv6 traffic class (DSCP << 2 | ECN) */
	__u8	sl;			/* 802.1p priority when tagged */
	__le32	flow_label;		/* IPv6 only, 20 bits */
	__le16	udp_sport;		/* UDP source port (destination is 4791) */
	__le16	rsvd0;
	__u8	sgid[16];		/* source IPv6, or IPv4-mapped ::ffff:a.b.c.d */
	__u8	dgid[16];		/* destination, same encoding */
	__le32	rsvd1;
};

#define TERN_VLAN_NONE			0xffff
#define TERN_ROCE_UDP_DPORT		4791

/*
 * UD address vector: where one UD/GSI SEND goes. @path is built exactly as for an RC QP's
 * MODIFY_QP (the driver builds it once per address handle); path.udp_sport may be any
 * value (the device does not recompute it). If bit 31 of @qkey is set, the QP's own Q_Key
 * is used instead (as the verbs specify). A UD message is one packet: its length must not
 * exceed the port's RoCE MTU (the largest IB MTU that fits the Ethernet MTU), else the WQE
 * completes with LOC_LEN_ERR and the QP goes to ERR.
 */
struct tern_ud_seg {
	struct tern_qp_path path;
	__le32	dest_qpn;
	__le32	qkey;
	__le32	rsvd[2];
};

/* Which attributes of a MODIFY_QP apply (the rest must be zero). */
#define TERN_QP_ATTR_STATE		(1u << 0)
#define TERN_QP_ATTR_ACCESS		(1u << 1)
#define TERN_QP_ATTR_PATH		(1u << 2)
#define TERN_QP_ATTR_PATH_MTU		(1u << 3)
#define TERN_QP_ATTR_TIMEOUT		(1u << 4)
#define TERN_QP_ATTR_RETRY_CNT		(1u << 5)
#define TERN_QP_ATTR_RNR_RETRY		(1u << 6)
#define TERN_QP_ATTR_MIN_RNR_TIMER	(1u << 7)
#define TERN_QP_ATTR_MAX_RD_ATOMIC	(1u << 8)
#define TERN_QP_ATTR_MAX_DEST_RD_ATOMIC	(1u << 9)
#define TERN_QP_ATTR_DEST_QPN		(1u << 10)
#define TERN_QP_ATTR_RQ_PSN		(1u << 11)
#define TERN_QP_ATTR_SQ_PSN		(1u << 12)
#define TERN_QP_ATTR_SQD_NOTIFY		(1u << 13)	/* with RTS->SQD: event when drained */
#define TERN_QP_ATTR_QKEY		(1u << 14)	/* UD/GSI */
#define TERN_QP_ATTR_XPORT		(1u << 15)	/* RC: tern_cmd_modify_qp_in.xport */

/*
 * A QP's attributes, as MODIFY_QP sets them and QUERY_QP reports them. Transitions follow
 * the IB spec (any->RESET, any->ERR, RESET->INIT, INIT->INIT, INIT->RTR, RTR->RTS,
 * RTS->RTS, RTS->SQD, SQD->SQD, SQD->RTS, SQE->RTS); RTR needs PATH, PATH_MTU, DEST_QPN,
 * RQ_PSN, MAX_DEST_RD_ATOMIC and MIN_RNR_TIMER, RTS needs SQ_PSN, TIMEOUT, RETRY_CNT,
 * RNR_RETRY and MAX_RD_ATOMIC; anything else is BAD_STATE (transition) or BAD_PARAM (value).
 * UD and GSI QPs: RESET->INIT needs QKEY; INIT->RTR needs nothing; RTR->RTS needs SQ_PSN;
 * QKEY may also change in INIT, RTR, RTS and SQD; the RC-only attributes are BAD_PARAM.
 * RESET empties both queues (indices back to 0); ERR flushes every outstanding and every
 * later WQE with TERN_CQE_WR_FLUSH_ERR.
 */
struct tern_qp_attrs {
	__u8	state;			/* enum tern_qp_state */
	__u8	path_mtu;		/* 1..5: 256 << (n - 1) bytes, as IB_MTU_* */
	__u8	timeout;		/* ack timeout 4.096 us * 2^n; 0: wait forever */
	__u8	retry_cnt;		/* 0..7 */
	__u8	rnr_retry;		/* 0..6, 7: retry forever */
	__u8	min_rnr_timer;		/* IB encoding 0..31, sent in RNR NAKs */
	__u8	max_rd_atomic;		/* 0..max_rd_atomic of QUERY_RDMA */
	__u8	max_dest_rd_atomic;	/* 0..max_dest_rd_atomic of QUERY_RDMA */
	__le32	access;			/* TERN_ACCESS_REMOTE_* the responder allows */
	__le32	dest_qpn;
	__le32	rq_psn;			/* next PSN expected (24 bits; 31:24 zero) */
	__le32	sq_psn;			/* next PSN to send (24 bits) */
	__le32	qkey;			/* UD/GSI */
	struct tern_qp_path path;
};

/*
 * Transport options of an RC QP (TERN_RDMA_CAP_SR): the QP context's xport field, set by
 * MODIFY_QP with TERN_QP_ATTR_XPORT at INIT->RTR (and SQD->SQD on a drained QP) and
 * reported by QUERY_QP. 0, the value after RESET, is standard RoCEv2 go-back-N, the only
 * mode any other RoCE peer speaks. TERN_QP_XPORT_SR switches the QP to selective repeat
 * (Documentation/hw/rdma.rst, "Selective repeat"): both ends of the connection must have
 * it, and software agrees on it per connection (tern_ib: ECE, <rdma/tern-abi.h>). The
 * in-flight cap is 2^n PSNs for n in TERN_QP_XPORT_LOG_CAP (4..8); 0 takes
 * TERN_QP_XPORT_DEF_LOG_CAP. TERN_QP_XPORT_ADAPTIVE_RTO (TERN_RDMA_CAP_ADAPTIVE_RTO), with
 * or without SR, gives a go-back-N requester a retransmit timer from the measured round
 * trip (Documentation/hw/rdma.rst, "Adaptive retransmit timer"): it changes nothing on the
 * wire, so it needs no agreement with the peer. Other bits, a cap outside 4..8, a cap
 * without SR, or the field on a UC/UD/GSI QP are BAD_PARAM.
 */
#define TERN_QP_XPORT_SR		(1u << 0)
#define TERN_QP_XPORT_ADAPTIVE_RTO	(1u << 1)
#define TERN_QP_XPORT_LOG_CAP_SHIFT	4
#define TERN_QP_XPORT_LOG_CAP_MASK	(0xfu << TERN_QP_XPORT_LOG_CAP_SHIFT)
#define TERN_QP_XPORT_MASK		(TERN_QP_XPORT_SR | TERN_QP_XPORT_ADAPTIVE_RTO | \
					 TERN_QP_XPORT_LOG_CAP_MASK)
#define TERN_QP_XPORT_MIN_LOG_CAP	4
#define TERN_QP_XPORT_MAX_LOG_CAP	8
#define TERN_QP_XPORT_DEF_LOG_CAP	8	/* 256 PSNs: as many as go-back-N keeps in flight */

/*
 * Selective repeat's request opcodes (BTH opcode, manufacturer-specific range 0xc0..0xff):
 * the MIDDLE and LAST packets of a SEND or WRITE of an RC QP with TERN_QP_XPORT_SR, which
 * carry what the responder needs to place their payload before the packets ahead of them
 * arrived (Documentation/hw/rdma.rst, "Out-of-order placement"). FIRST and ONLY packets keep
 * the standard opcodes. The extension headers follow the BTH in this order:
 *   SR_WRITE_MIDDLE, SR_WRITE_LAST: RETH (virtual address of the packet's own first byte,
 *	R_Key, DMA length = the message's bytes from that byte to its end)
 *   SR_WRITE_LAST_IMM: RETH as above, ImmDt
 *   SR_SEND_MIDDLE, SR_SEND_LAST: struct tern_sr_sph
 *   SR_SEND_LAST_IMM: struct tern_sr_sph, ImmDt
 *   SR_SEND_LAST_INV: struct tern_sr_sph, IETH
 */
#define TERN_BTH_OPCODE_SR_WRITE_MIDDLE		0xc0
#define TERN_BTH_OPCODE_SR_WRITE_LAST		0xc1
#define TERN_BTH_OPCODE_SR_WRITE_LAST_IMM	0xc2
#define TERN_BTH_OPCODE_SR_SEND_MIDDLE		0xc3
#define TERN_BTH_OPCODE_SR_SEND_LAST		0xc4
#define TERN_BTH_OPCODE_SR_SEND_LAST_IMM	0xc5
#define TERN_BTH_OPCODE_SR_SEND_LAST_INV	0xc6

/*
 * SEND placement header (SPH), big-endian: which receive WQE the SEND's message lands in
 * and where. rord bits 23:0: the message's receive ordinal, the number of messages (SEND,
 * SEND_IMM, SEND_INV, WRITE_IMM: each takes a receive WQE) the QP's requester started
 * before it since the QP left RESET, modulo 2^24; bits 31:24 reserved, zero. off: the
 * message offset of the packet's first payload byte (a nonzero multiple of the path MTU).
 */
struct tern_sr_sph {
	__be32	rord;
	__be32	off;
};

#define TERN_SR_SPH_RORD_MASK		0xffffffu

/*
 * The input is sizeof() bytes, or TERN_MODIFY_QP_IN_V1_LEN (no xport: as before
 * TERN_QP_ATTR_XPORT), which the device reads as xport 0.
 */
struct tern_cmd_modify_qp_in {
	__le32	qpn;
	__le32	attr_mask;		/* TERN_QP_ATTR_* */
	struct tern_qp_attrs attrs;
	__le32	xport;			/* TERN_QP_ATTR_XPORT: TERN_QP_XPORT_* */
	__le32	rsvd;
};

#define TERN_MODIFY_QP_IN_V1_LEN	offsetof(struct tern_cmd_modify_qp_in, xport)

struct tern_cmd_query_qp_in {
	__le32	qpn;
};

#define TERN_QP_STATUS_SQ_DRAINING	(1u << 0)	/* SQD: WQEs still outstanding */
#define TERN_QP_STATUS_HPCC		(1u << 1)	/* the QP's priority runs HPCC */
#define TERN_QP_STATUS_TIMELY		(1u << 2)	/* the QP's priority runs TIMELY */

struct tern_cmd_query_qp_out {
	struct tern_qp_attrs attrs;	/* state: the current one (the device may have moved it) */
	__le32	status;			/* TERN_QP_STATUS_* */
	__le16	sq_ci;			/* WQEs the device has completed or flushed */
	__le16	rq_ci;
	__le32	cc_rate_mbps;		/* the rate DCQCN or HPCC holds it to; 0: not limited */
	__le32	cc_alpha;		/* DCQCN alpha, 1/1024 units; 0 when not limited */
	/* HPCC (status HPCC; else 0). A caller's out_len of TERN_QUERY_QP_OUT_V1_LEN gets none. */
	__le32	hpcc_window;		/* W, bytes (saturates at 2^32 - 1) */
	__le16	hpcc_util;		/* U, 1/1000 of the bottleneck (saturates at 65535) */
	__u8	hpcc_inc_stage;		/* additive steps since the last multiplicative one */
	__u8	rsvd;
	__le32	xport;			/* TERN_QP_XPORT_*, as MODIFY_QP set it */
	__le32	rsvd1;
	__le32	rsvd2;
	/*
	 * The requester's round trip (RFC 6298 smoothing; 0 before the first sample) and the
	 * retransmit timeout it arms now: with TERN_QP_XPORT_ADAPTIVE_RTO from the round trip
	 * (backed off, at most the configured one), else the configured one (0: none). ns.
	 */
	__le64	srtt_ns;
	__le64	rttvar_ns;
	__le64	rto_ns;
	/* TIMELY (status TIMELY; else 0). Not in a reply of TERN_QUERY_QP_OUT_V4_LEN. */
	__le32	timely_rate_mbps;	/* its rate (the line rate until it is cut) */
	__le32	timely_rtt_ns;		/* the last RTT sample; 0: none yet */
	__le32	timely_rtt_diff_ns;	/* the smoothed RTT difference, signed (two's complement) */
	__u8	timely_hai_count;	/* events in a row with gradient <= 0 (saturates) */
	__u8	rsvd3[3];
};

/*
 * The reply's length before the HPCC fields, before xport, before the round trip, and
 * before TIMELY's fields: the device still answers a buffer of any of these lengths with
 * that much.
 */
#define TERN_QUERY_QP_OUT_V1_LEN	offsetof(struct tern_cmd_query_qp_out, hpcc_window)
#define TERN_QUERY_QP_OUT_V2_LEN	offsetof(struct tern_cmd_query_qp_out, xport)
#define TERN_QUERY_QP_OUT_V3_LEN	offsetof(struct tern_cmd_query_qp_out, rsvd2)
#define TERN_QUERY_QP_OUT_V4_LEN	offsetof(struct tern_cmd_query_qp_out, timely_rate_mbps)

struct tern_cmd_destroy_qp_in {
	__le32	qpn;
};

/*
 * Shared receive queues. CREATE_SRQ: @mem covers 1 << (log_depth + log_stride) bytes of
 * ring; result: SRQN. The limit is armed with MODIFY_SRQ: when the WQEs posted and not yet
 * taken fall below @limit, the device sends TERN_SRQ_EV_LIMIT once and disarms (limit 0).
 * DESTROY_SRQ: BAD_STATE while a QP uses the SRQ.
 *
 * The input is TERN_CREATE_SRQ_IN_V1_LEN bytes (no flags: as before doorbell records) or
 * the whole struct; any other length is BAD_LEN.
 */
struct tern_cmd_create_srq_in {
	__le32	pdn;
	__le16	uar;			/* doorbell page of the SRQ's doorbell */
	__u8	log_depth;		/* 1..max_srq_log_depth */
	__u8	log_stride;		/* TERN_RQ_MIN_LOG_STRIDE..TERN_RQ_MAX_LOG_STRIDE */
	struct tern_mem_desc mem;
	__le32	flags;			/* TERN_SRQ_F_* */
	__le32	rsvd;
};

#define TERN_CREATE_SRQ_IN_V1_LEN	offsetof(struct tern_cmd_create_srq_in, flags)

/* TERN_RDMA_CAP_DB_REC: mem covers the ring and a struct tern_wq_db_rec after it */
#define TERN_SRQ_F_DB_REC		(1u << 0)

struct tern_cmd_modify_srq_in {
	__le32	srqn;
	__le32	limit;			/* 0 disarms; else arm at this many WQEs (< depth) */
};

struct tern_cmd_query_srq_in {
	__le32	srqn;
};

struct tern_cmd_query_srq_out {
	__le32	limit;			/* armed limit, 0 when not armed */
	__le16	pi;			/* producer index (last doorbell, or the record) */
	__le16	ci;			/* WQEs the device has taken */
	__le32	rsvd[2];
};

struct tern_cmd_destroy_srq_in {
	__le32	srqn;
};

/* QUERY_RDMA_STATS: the RoCE engine's counters since the last device reset. No input. */
struct tern_cmd_rdma_stats_out {
	__le64	tx_roce_packets;
	__le64	tx_roce_bytes;
	__le64	rx_roce_packets;	/* accepted by a QP */
	__le64	rx_roce_bytes;
	__le64	rx_roce_discards;	/* dropped: malformed, unknown QP, QP not ready */
	__le64	rx_icrc_errors;		/* dropped: ICRC mismatch */
	__le64	out_of_sequence;	/* responder: PSN ahead of the expected (NAK sent) */
	__le64	duplicate_request;	/* responder: PSN behind the expected */
	__le64	packet_seq_err;		/* requester: sequence-error NAKs received */
	__le64	implied_nak_seq_err;	/* requester: response PSN gap (go back) */
	__le64	local_ack_timeout_err;	/* requester: retransmit timer expired */
	__le64	rnr_nak_retry_err;	/* requester: RNR NAKs received */
	__le64	out_of_buffer;		/* responder: RNR NAKs sent (no receive WQE) */
	__le64	req_transport_retries_exceeded;
	__le64	req_rnr_retries_exceeded;
	__le64	req_remote_access_errors;	/* requester: remote access NAKs received */
	__le64	req_remote_invalid_request;	/* requester: invalid request NAKs received */
	__le64	resp_remote_access_errors;	/* responder: access NAKs sent */
	__le64	resp_local_length_error;	/* responder: SEND longer than the receive WQE */
	__le64	rx_write_requests;
	__le64	rx_read_requests;
	__le64	rx_send_requests;
	__le64	db_misdirected;		/* doorbells for an object not bound to that UAR */
	__le64	cq_overflows;
	/* the transport's recovery */
	__le64	retrans_pkts;		/* requester: request packets sent again (go-back-N) */
	__le64	retrans_bytes;		/* requester: frame bytes of those packets */
	__le64	seq_err_naks_sent;	/* responder: sequence-error NAKs sent */
	__le64	rnr_naks_sent;		/* responder: RNR NAKs sent */
	__le64	duplicate_response;	/* requester: ACKs/READ responses for PSNs already done */
	__le64	rx_pkey_mismatch;	/* dropped: BTH P_Key does not match the port's */
	__le64	rx_opcode_seq_err;	/* responder: opcode out of sequence (invalid request) */
	/* UD, atomics, SRQ */
	__le64	rx_atomic_requests;	/* responder: atomics executed (not replays) */
	__le64	atomic_replays;		/* responder: duplicates answered from the saved result */
	__le64	rx_qkey_mismatch;	/* dropped: UD/GSI packet with the wrong Q_Key */
	__le64	tx_ud_packets;		/* UD/GSI packets sent (also in tx_roce_packets) */
	__le64	rx_ud_packets;		/* UD/GSI packets accepted (also in rx_roce_packets) */
	__le64	srq_limit_events;
	/* congestion control (tern_dcb.h) */
	__le64	np_ecn_marked_roce_packets;	/* NP: RoCE packets received with ECN CE */
	__le64	np_cnp_sent;		/* NP: CNPs sent */
	__le64	rp_cnp_handled;		/* RP: CNPs received for a QP with DCQCN */
	__le64	rp_cnp_ignored;		/* RP: CNPs for a QP without DCQCN, or an unknown QP */
	__le64	rp_rate_decrease_events;	/* RP: rate cuts */
	__le64	rp_rate_increase_events;	/* RP: fast recovery, additive, hyper increases */
	__le64	rp_min_rate_events;	/* RP: cuts that ended at the minimum rate */
	__le64	rp_limited_qps;		/* RP: QPs now below their maximum rate (a gauge) */
	/* selective repeat (TERN_QP_XPORT_SR) */
	__le64	out_of_order_accepted;	/* request after a gap kept; READ response placed */
	__le64	selective_retrans_pkts;	/* requester: missing PSNs resent after a SACK */
	__le64	tail_loss_probes;	/* requester: last packet resent before the timeout */
	/* HPCC (tern_dcb.h) */
	__le64	hpcc_int_echo_acks;	/* data sender: echoes taken (ACK, RESP_ECHO) */
	__le64	hpcc_window_updates;	/* data sender: reference-window updates (once per RTT) */
	__le64	hpcc_int_echoes_sent;	/* data receiver: echoes sent (ACK, RESP_ECHO) */
	__le64	rx_int_discards;	/* dropped: malformed INT shim */
	/* doorbell records (TERN_RDMA_CAP_DB_REC) */
	__le64	db_rec_errors;		/* RQ/SRQ records unreadable, backwards, beyond depth */
	/* adaptive retransmit timer (TERN_QP_XPORT_ADAPTIVE_RTO) */
	__le64	adaptive_retrans;	/* requester: went back N at the measured-RTT timeout */
	/* TIMELY (tern_dcb.h) */
	__le64	timely_rtt_samples;	/* requester: segment RTTs measured (completion events) */
	__le64	timely_rate_decreases;	/* requester: events that cut the rate (gradient, T_high) */
	__le64	timely_rate_increases;	/* requester: events that raised it */
};

/*
 * The reply's length before db_rec_errors, before adaptive_retrans, and before TIMELY's
 * counters: the device still answers a buffer of any of these lengths with that much.
 */
#define TERN_RDMA_STATS_OUT_V1_LEN	offsetof(struct tern_cmd_rdma_stats_out, db_rec_errors)
#define TERN_RDMA_STATS_OUT_V2_LEN	offsetof(struct tern_cmd_rdma_stats_out, adaptive_retrans)
#define TERN_RDMA_STATS_OUT_V3_LEN	offsetof(struct tern_cmd_rdma_stats_out, timely_rtt_samples)

TERN_HW_ASSERT_SIZE(struct tern_sge, 16);
TERN_HW_ASSERT_SIZE(struct tern_sq_wqe, 32);
TERN_HW_ASSERT_SIZE(struct tern_atomic_seg, 16);
TERN_HW_ASSERT_SIZE(struct tern_reg_mr_seg, 32);
TERN_HW_ASSERT_SIZE(struct tern_bind_mw_seg, 32);
TERN_HW_ASSERT_SIZE(struct tern_ud_seg, 80);
TERN_HW_ASSERT_SIZE(struct tern_rq_wqe, 16);
TERN_HW_ASSERT_SIZE(struct tern_cqe, 32);
TERN_HW_ASSERT_SIZE(struct tern_cqe_ts, 64);
TERN_HW_ASSERT_SIZE(struct tern_cq_ci_rec, 8);
TERN_HW_ASSERT_SIZE(struct tern_cmd_query_rdma_out, 88);
TERN_HW_ASSERT_SIZE(struct tern_cmd_create_mr_in, 48);
TERN_HW_ASSERT_SIZE(struct tern_cmd_create_cq_in, 24);
TERN_HW_ASSERT_SIZE(struct tern_cmd_resize_cq_in, 24);
TERN_HW_ASSERT_SIZE(struct tern_cmd_modify_cq_in, 12);
TERN_HW_ASSERT_SIZE(struct tern_cmd_create_qp_in, 56);
TERN_HW_ASSERT_SIZE(struct tern_qp_path, 64);
TERN_HW_ASSERT_SIZE(struct tern_qp_attrs, 92);
TERN_HW_ASSERT_SIZE(struct tern_cmd_modify_qp_in, 108);
TERN_HW_ASSERT_SIZE(struct tern_cmd_query_qp_out, 168);
TERN_HW_ASSERT_SIZE(struct tern_cmd_rdma_stats_out, 456);
TERN_HW_ASSERT_SIZE(struct tern_cmd_create_srq_in, 32);
TERN_HW_ASSERT_SIZE(struct tern_wq_db_rec, 8);
TERN_HW_ASSERT_SIZE(struct tern_cmd_mcast_in, 24);
TERN_HW_ASSERT_SIZE(struct tern_cmd_query_srq_out, 16);
TERN_HW_ASSERT_SIZE(struct tern_cmd_bind_qp_counter_in, 12);
TERN_HW_ASSERT_SIZE(struct tern_cmd_counter_set_out, 192);

#endif /* TERN_RDMA_H */
