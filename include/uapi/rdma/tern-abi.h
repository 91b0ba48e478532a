/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * tern uverbs ABI: the driver-specific data exchanged between the rdma-core provider
 * (providers/tern) and tern_ib.ko through the udata of the uverbs commands. The layouts of
 * the queues and doorbells the provider drives are the device's (<linux/tern/tern_rdma.h>
 * in the kernel, providers/tern/tern_rdma.h in rdma-core).
 *
 * Extending: add fields at the end and a comp_mask bit; never change or reuse a field.
 */
#ifndef TERN_ABI_USER_H
#define TERN_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_verbs.h>

#define TERN_UVERBS_ABI_VERSION		1

/*
 * The driver id (enum rdma_driver_id) tern_ib reports in ib_device_ops.driver_id, which
 * libibverbs reads over netlink, and the provider puts in its ioctls (the kernel does not
 * check it there). An in-tree tern adds RDMA_DRIVER_TERN at the end of that enum and sets
 * this to it, and the provider adds VERBS_DRIVER_ID(RDMA_DRIVER_TERN) to its match table.
 * Out of tree no value is ours to take: the ones after 6.1's last (RDMA_DRIVER_ERDMA, 19)
 * went upstream to MANA (20, in rdma-core 56's kernel-headers) and IONIC (21), with more
 * posted since, and libibverbs binds a device to the first provider whose table lists its
 * id, so a borrowed value would hand tern devices to another vendor's provider (libmana's
 * table lists 20). RDMA_DRIVER_UNKNOWN is never matched by id; the provider matches the
 * device's PCI function instead.
 */
#define TERN_RDMA_DRIVER_ID		RDMA_DRIVER_UNKNOWN

/* alloc_ucontext response: the context's doorbell page and the limits verbs do not carry. */
struct tern_alloc_ucontext_resp {
	__u32	comp_mask;
	__u32	uar;			/* BAR2 page index of this context's doorbells */
	__aligned_u64 db_mmap_key;	/* mmap offset of the doorbell page (4 KiB, uncached) */
	__u32	max_inline;		/* bytes of inline data a send WQE may carry */
	__u8	sq_min_log_stride;
	__u8	sq_max_log_stride;
	__u8	rq_min_log_stride;
	__u8	rq_max_log_stride;
	__u8	max_sq_log_depth;
	__u8	max_rq_log_depth;
	__u8	max_cq_log_depth;
	__u8	rsvd0;
	__u32	rsvd1;
	/* with TERN_UCTX_RESP_CAPS in comp_mask (a kernel before it sends neither) */
	__u32	caps;			/* TERN_UCTX_CAP_* */
	__u32	rsvd2;
	/* with TERN_UCTX_RESP_CLOCK in comp_mask */
	__aligned_u64 clock_mmap_key;	/* mmap offset of the device clock page (read-only) */
};

#define TERN_UCTX_RESP_CAPS		(1u << 0)	/* comp_mask: caps is valid */
/*
 * comp_mask: clock_mmap_key is valid. Mapping it (4 KiB, PROT_READ only) gives the device
 * clock page of BAR0 (tern_hw.h, TERN_CLOCK_PAGE): TERN_REG_CLOCK_LO - TERN_CLOCK_PAGE is
 * the clock's offset in it, to be read with one 64-bit load.
 */
#define TERN_UCTX_RESP_CLOCK		(1u << 1)
/*
 * The device has doorbell records (TERN_RDMA_CAP_DB_REC) and the kernel takes
 * TERN_CREATE_QP_F_RQ_DB_REC and TERN_CREATE_SRQ_F_DB_REC. A provider must not ask for
 * records without it (an older kernel refuses the command with EINVAL).
 */
#define TERN_UCTX_CAP_DB_REC		(1u << 0)
/*
 * The kernel takes TERN_CREATE_CQ_F_TIMESTAMP: CQs with 64-byte CQEs carrying the device
 * clock (struct tern_cqe_ts in tern_rdma.h). A kernel before it refuses the flag (EINVAL).
 */
#define TERN_UCTX_CAP_CQE_TS		(1u << 1)

/*
 * create_cq: the provider allocates the ring and its consumer-index record in one
 * page-aligned buffer (32 << log_depth bytes of CQEs, 64 << log_depth with
 * TERN_CREATE_CQ_F_TIMESTAMP, then struct tern_cq_ci_rec).
 * resize_cq takes the same struct for the new ring (zeroed; its CQEs start at entry 0) after
 * writing its consumer index to the old ring's record; no driver response.
 */
struct tern_create_cq_cmd {
	__aligned_u64 buf_va;
	__aligned_u64 buf_len;
	__u8	log_depth;
	__u8	flags;			/* TERN_CREATE_CQ_F_* (0 from an older provider) */
	__u8	rsvd0[6];
};

/*
 * TERN_UCTX_CAP_CQE_TS: 64-byte CQEs (64 << log_depth bytes of them, log_depth at most
 * max_cq_log_depth - 1). resize_cq passes the CQ's own flags.
 */
#define TERN_CREATE_CQ_F_TIMESTAMP	(1u << 0)

struct tern_create_cq_resp {
	__u32	cqn;
	__u32	rsvd;
};

/*
 * create_qp: the provider allocates the send and receive rings (page aligned) and chooses
 * their depths and strides within the limits of tern_alloc_ucontext_resp. A QP on an SRQ
 * has no receive ring: rq_va, rq_len, log_rq_depth and log_rq_stride are zero. UD QPs need
 * log_sq_stride >= TERN_SQ_UD_MIN_LOG_STRIDE (tern_rdma.h).
 */
struct tern_create_qp_cmd {
	__aligned_u64 sq_va;
	__aligned_u64 sq_len;
	__aligned_u64 rq_va;
	__aligned_u64 rq_len;
	__u8	log_sq_depth;
	__u8	log_sq_stride;
	__u8	log_rq_depth;
	__u8	log_rq_stride;
	__u32	rsvd;
	__u32	flags;			/* TERN_CREATE_QP_F_* (0 from an older provider) */
	__u32	rsvd1;
};

/*
 * TERN_UCTX_CAP_DB_REC: the receive ring's buffer (rq_va, rq_len) also holds the RQ's
 * doorbell record, a struct tern_wq_db_rec right after the ring (tern_rdma.h, "Doorbell
 * records"): the provider posts receives by writing it, and rings TERN_UDB_RQ only when the
 * QP is or may be in ERR. Not on a QP with an SRQ.
 */
#define TERN_CREATE_QP_F_RQ_DB_REC	(1u << 0)

struct tern_create_qp_resp {
	__u32	qpn;
	__u32	ece_options;		/* TERN_ECE_*: what this QP offers (0 from older kernels) */
};

/*
 * Enhanced Connection Establishment (ECE): the transport options beyond standard RoCEv2
 * that the two ends of a connection agree on, QP by QP. ibv_query_ece() gives vendor_id
 * TERN_ECE_VENDOR_ID and the options a QP offers (before ibv_set_ece()) or the options
 * agreed (after); librdmacm carries them in the CM REQ and REP. A QP created while the
 * port's devlink parameter roce_selective_repeat is on offers TERN_ECE_SR with the in-flight
 * cap of roce_sr_log_cap (the device's default when that is 0); other QPs offer nothing.
 * ibv_set_ece() takes what the peer offered or answered: the provider keeps the options
 * both sides have (selective repeat only if both offer it, the smaller cap) and passes them
 * in tern_modify_qp_cmd at INIT->RTR; from RTR on the choice is fixed (ibv_set_ece():
 * EINVAL until RESET). A QP that never had ibv_set_ece() (a peer without ECE, such as
 * Soft-RoCE, or a kernel user) is standard go-back-N RoCEv2.
 */
#define TERN_ECE_VENDOR_ID		0x1b36	/* the PCI vendor ID of tern's functions */
#define TERN_ECE_SR			(1u << 0)	/* selective repeat (tern_rdma.h) */
#define TERN_ECE_SR_LOG_CAP_SHIFT	4		/* in-flight cap 2^n PSNs, n = 4..8 */
#define TERN_ECE_SR_LOG_CAP_MASK	(0xfu << TERN_ECE_SR_LOG_CAP_SHIFT)
#define TERN_ECE_OPTIONS		(TERN_ECE_SR | TERN_ECE_SR_LOG_CAP_MASK)

/*
 * modify_qp (the extended command): @ece_options, the options agreed by ibv_set_ece() (0:
 * none, go-back-N), applied at INIT->RTR and ignored at other transitions. Options the QP
 * did not offer, unknown bits, a cap outside 4..8, a cap without TERN_ECE_SR or a nonzero
 * @rsvd: -EINVAL.
 */
struct tern_modify_qp_cmd {
	__u32	ece_options;
	__u32	rsvd;
};

/*
 * create_srq: the provider allocates the ring (page aligned, 1 << (log_depth + log_stride)
 * bytes; log_stride within the rq_*_log_stride limits of tern_alloc_ucontext_resp).
 */
struct tern_create_srq_cmd {
	__aligned_u64 buf_va;
	__aligned_u64 buf_len;
	__u8	log_depth;
	__u8	log_stride;
	__u8	rsvd0[6];
	__u32	flags;			/* TERN_CREATE_SRQ_F_* (0 from an older provider) */
	__u32	rsvd1;
};

/*
 * TERN_UCTX_CAP_DB_REC: the buffer also holds the SRQ's doorbell record right after the ring;
 * the provider posts by writing it and never rings TERN_UDB_SRQ.
 */
#define TERN_CREATE_SRQ_F_DB_REC	(1u << 0)

struct tern_create_srq_resp {
	__u32	srqn;
	__u32	rsvd;
};

/*
 * The path of an address handle: where and how the packets of a UD SEND to it go, resolved
 * by the kernel (destination MAC, source MAC and VLAN of the GID's netdev). Host byte order.
 * The provider builds the device's address (struct tern_qp_path in <linux/tern/tern_rdma.h>)
 * of each UD WQE sent with the AH from it.
 */
struct tern_ah_path {
	__u8	dmac[6];
	__u8	smac[6];
	__u16	vlan_id;		/* 802.1Q VID, or 0xffff: untagged */
	__u8	ip_version;		/* 4 or 6 */
	__u8	hop_limit;		/* IPv4 TTL / IPv6 hop limit */
	__u8	traffic_class;		/* IPv4 TOS / IPv6 traffic class (DSCP << 2 | ECN) */
	__u8	sl;			/* 802.1p priority when tagged */
	__u16	rsvd0;
	__u32	flow_label;		/* IPv6 only, 20 bits */
	__u16	udp_sport;		/* UDP source port (the destination is 4791) */
	__u16	rsvd1;
	__u8	sgid[16];		/* source IPv6, or IPv4-mapped ::ffff:a.b.c.d */
	__u8	dgid[16];		/* destination, same encoding */
	__u32	rsvd2;
};

/* create_ah: the kernel answers with the AH's path. */
struct tern_create_ah_resp {
	__u32	comp_mask;
	__u32	rsvd;
	struct tern_ah_path path;
};

#endif /* TERN_ABI_USER_H */
