/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * tern uverbs ABI: the driver-specific data exchanged between the rdma-core provider
 * (providers/tern) and tern_ib.ko through the udata of the uverbs commands. The layouts of
 * the queues and doorbells the provider drives are in include/tern/tern_rdma.h.
 *
 * Extending: add fields at the end and a comp_mask bit; never change or reuse a field.
 */
#ifndef TERN_ABI_USER_H
#define TERN_ABI_USER_H

#include <linux/types.h>

#define TERN_UVERBS_ABI_VERSION		1

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
};

/*
 * create_cq: the provider allocates the ring and its consumer-index record in one
 * page-aligned buffer (32 << log_depth bytes of CQEs, then struct tern_cq_ci_rec).
 */
struct tern_create_cq_cmd {
	__aligned_u64 buf_va;
	__aligned_u64 buf_len;
	__u8	log_depth;
	__u8	rsvd0[7];
};

struct tern_create_cq_resp {
	__u32	cqn;
	__u32	rsvd;
};

/*
 * create_qp: the provider allocates the send and receive rings (page aligned) and chooses
 * their depths and strides within the limits of tern_alloc_ucontext_resp.
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
};

struct tern_create_qp_resp {
	__u32	qpn;
	__u32	rsvd;
};

#endif /* TERN_ABI_USER_H */
