/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern_ib: RDMA (RoCEv2) verbs for tern NICs, an auxiliary driver bound to the
 * "tern_core.rdma.<n>" devices of tern_core.ko.
 *
 * Layout of the module:
 *   main.c      auxiliary driver, ib_device registration, device and port attributes,
 *               port events from the netdev, RDMA event dispatch, completion EQs, the
 *               kernel doorbell page
 *   verbs.c     user contexts (doorbell page, mmap), protection domains, address handles
 *               (the UD path they carry)
 *   mr.c        memory regions and the page lists given to the device
 *   cq.c        completion queues: user CQs, and kernel CQs with poll_cq/req_notify_cq
 *   qp.c        queue pairs (RC, UC, UD, GSI): create, modify (RoCEv2 path), query, destroy
 *   srq.c       shared receive queues: user SRQs and kernel SRQs
 *   datapath.c  the kernel data path: post_send, post_recv and post_srq_recv write the WQEs
 *               of kernel QPs and SRQs and ring their doorbells
 *   counters.c  port hardware counters and per-QP counters (rdma statistic)
 *
 * Two kinds of consumers. User space (the provider, rdma-core providers/tern) owns the rings
 * of its CQs and QPs and its doorbell page, and drives the data path itself; this driver
 * only creates the objects through firmware commands. Kernel consumers (the MAD layer on the
 * GSI QP, the IB CM, rdma_cm and kernel ULPs) get CQs and QPs whose rings live in coherent
 * DMA memory (TERN_MEM_DIRECT) and whose doorbells go through the driver's own UAR page
 * (tern_ib_dev.kuar, mapped at probe); poll_cq, req_notify_cq, post_send, post_recv and
 * post_srq_recv serve them.
 *
 * Locking and lifetime:
 *  - Verbs on one object are serialised by the RDMA core against its destruction; modify_qp
 *    and query_qp of one QP are serialised by tern_ib_qp.lock.
 *  - Kernel data path (any context, IRQs may be off): a kernel QP's send and receive queues
 *    each have a spinlock (tern_ib_kq.lock, irqsave) taken by post_send resp. post_recv; it
 *    protects the queue's producer index and ring slots. A kernel CQ's spinlock
 *    (tern_ib_cq.lock, irqsave) is taken by poll_cq and req_notify_cq and protects the
 *    CQ's consumer index and CI record; poll_cq advances the consumer index of the queue
 *    a CQE completes (tern_ib_kq.ci, smp_store_release; post_* read it with
 *    smp_load_acquire), so a queue's ci has one writer: the CQ lock of its CQ. poll_cq
 *    finds the QP of a CQE in qp_xa (xa_load) under the CQ lock; destroying a kernel QP
 *    erases it from qp_xa and then takes the lock of each of its CQs to invalidate the
 *    CQEs still queued for it, so poll_cq never returns a QP that is gone. Lock order: a
 *    CQ lock is never held while taking a queue lock, nor the reverse.
 *  - Kernel SRQs: post_srq_recv takes the SRQ's spinlock (tern_ib_srq.klock, irqsave),
 *    which protects its producer index and ring slots. Slots come back through the receive
 *    CQEs of the QPs on the SRQ, which may sit on different CQs: poll_cq, under the lock of
 *    whichever CQ, counts them in tern_ib_srq.done (an atomic with several writers). A
 *    kernel QP on an SRQ that is being destroyed is put on its receive CQ's dying list
 *    (under that CQ's lock) before it leaves qp_xa, so a receive CQE poll_cq drops in that
 *    window still gives its slot back; tern_ib_cq_clean() counts those it invalidates.
 *    No lock of an SRQ is taken under a CQ lock, nor the reverse.
 *  - Events arrive from tern_core's EQ interrupt handlers, in hard interrupt context (async
 *    EQ: QP, SRQ and CQ events; completion EQs: CQ completions). The handler
 *    looks the object (its struct tern_ib_obj) up in tern_ib_dev.qp_xa / cq_xa / srq_xa
 *    under the xarray's lock (IRQ-safe) and takes a reference (refcount_inc_not_zero)
 *    before it drops the lock: tern_ib_obj_get(). Destroy
 *    erases the object from its xarray, drops the initial reference and waits for the
 *    completion the last reference signals (tern_ib_obj_unpublish()), so no event handler
 *    uses an object after its destroy verb returns.
 *  - Port state is derived from the netdev at each query; the netdevice notifier (RTNL
 *    held) keeps tern_ib_dev.port_active to report each change once.
 *  - Destroy verbs always release what the kernel holds and return 0: a failed destroy
 *    command on a dead device is expected. On a device that is alive, pinned user pages the
 *    device may still access go to tern_ib_dev.zombies instead (zombie_lock), released
 *    when the device is removed.
 */
#ifndef TERN_IB_H
#define TERN_IB_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include <linux/tern/tern_hw.h>
#include <linux/tern/tern_cmd.h>
#include <linux/tern/tern_rdma.h>
#include <linux/tern/tern_aux.h>
#include <rdma/tern-abi.h>

#define TERN_IB_PORT		1
#define TERN_IB_GID_TBL_LEN	128	/* RoCEv2 GIDs: one per IP address of the netdev */
#define TERN_IB_MAX_AH		4096	/* address handles are software objects */
#define TERN_IB_MAX_COMP_EQS	16
/* QP counter sets the driver tracks (the device numbers them 1..max_counter_sets) */
#define TERN_IB_MAX_CTR_SETS	256
#define TERN_IB_NUM_QP_STATS	(sizeof(struct tern_cmd_counter_set_out) / sizeof(__le64))

/**
 * struct tern_ib_dma_buf - a coherent DMA buffer
 * @va: kernel address, NULL when not allocated
 * @dma: bus address
 * @size: bytes
 */
struct tern_ib_dma_buf {
	void *va;
	dma_addr_t dma;
	size_t size;
};

/**
 * struct tern_ib_pbl - a page address list for a command (CREATE_MR)
 * @desc: how the device finds it: DIRECT (one contiguous buffer of entries) or PAGE_LIST
 *	(a contiguous list of the addresses of 4 KiB chunk pages holding the entries)
 * @list: the entries (DIRECT) or the chunk addresses (PAGE_LIST)
 * @chunks: PAGE_LIST only: the chunk pages, @nchunks of them
 * @nchunks: number of @chunks
 *
 * The device copies a page list while it runs the command: the list is freed right after.
 */
struct tern_ib_pbl {
	struct tern_mem_desc desc;
	struct tern_ib_dma_buf list;
	struct tern_ib_dma_buf *chunks;
	u32 nchunks;
};

/**
 * struct tern_ib_queue_mem - user memory of a ring, pinned and described to the device
 * @umem: the pinned pages
 * @desc: the memory as CREATE_CQ/CREATE_QP take it (4 KiB pages)
 * @pbl: page address list when @desc is a PAGE_LIST (freed once the create command ran)
 */
struct tern_ib_queue_mem {
	struct ib_umem *umem;
	struct tern_mem_desc desc;
	struct tern_ib_dma_buf pbl;
};

/**
 * struct tern_ib_zombie - pinned memory a device that is alive may still use after a
 *	failed destroy command
 * @node: in tern_ib_dev.zombies
 * @umem: the pinned user pages
 */
struct tern_ib_zombie {
	struct list_head node;
	struct ib_umem *umem;
};

/**
 * struct tern_ib_ceq - a completion EQ
 * @dev: owning device
 * @eq: tern_core's EQ
 * @eqn: its number for CREATE_CQ
 */
struct tern_ib_ceq {
	struct tern_ib_dev *dev;
	struct tern_eq *eq;
	u32 eqn;
};

/**
 * struct tern_ib_dev - one tern RDMA device
 * @ibdev: the RDMA core's device (first: ib_alloc_device() requires it)
 * @tadev: the auxiliary device
 * @tdev: tern_core's device, for tern_core_*()
 * @netdev: the Ethernet function of port 1 (lives as long as the auxiliary device)
 * @caps: QUERY_RDMA answer, constant after probe
 * @num_uars: doorbell pages: UARs are TERN_DB_FIRST_UAR..@num_uars-1
 * @uar_ida: allocated UARs (one per user context, and @kuar)
 * @kuar: the UAR of kernel CQs and QPs
 * @kdb: @kuar mapped (uncached); doorbells are single 64-bit writes (writeq)
 * @mr_key: rotates the key byte of new MRs (atomic)
 * @num_ah: address handles in existence (atomic), at most TERN_IB_MAX_AH
 * @qp_xa: QPN -> tern_ib_qp.obj, for events; IRQ-safe lock
 * @cq_xa: CQN -> tern_ib_cq.obj, for events; IRQ-safe lock
 * @srq_xa: SRQN -> tern_ib_srq.obj, for events; IRQ-safe lock
 * @ceqs: completion EQs, @num_ceqs of them (= ibdev.num_comp_vectors)
 * @num_ceqs: number of @ceqs
 * @nb: netdevice notifier (port events)
 * @port_active: last port state reported through an event; RTNL protects it
 * @zombie_lock: protects @zombies
 * @zombies: memory held back after failed destroys, freed at removal
 * @ctr_lock: protects @ctr_live, @ctr_gone and @ctr_buf (counters.c); taken around the
 *	commands that allocate or free a counter set and by get_hw_stats, never while
 *	calling into the RDMA core
 * @ctr_live: the counter sets allocated (bit = set number)
 * @ctr_gone: per-QP counters of the sets freed since probe, summed
 * @ctr_buf: QUERY_COUNTER's answer
 */
struct tern_ib_dev {
	struct ib_device ibdev;
	struct tern_aux_dev *tadev;
	struct tern_dev *tdev;
	struct net_device *netdev;
	struct tern_cmd_query_rdma_out caps;
	u32 num_uars;
	struct ida uar_ida;
	u32 kuar;
	void __iomem *kdb;
	atomic_t mr_key;
	atomic_t num_ah;
	struct xarray qp_xa;
	struct xarray cq_xa;
	struct xarray srq_xa;
	struct tern_ib_ceq ceqs[TERN_IB_MAX_COMP_EQS];
	int num_ceqs;
	struct notifier_block nb;
	bool port_active;
	spinlock_t zombie_lock;		/* see above */
	struct list_head zombies;
	struct mutex ctr_lock;		/* see above */
	DECLARE_BITMAP(ctr_live, TERN_IB_MAX_CTR_SETS + 1);
	u64 ctr_gone[TERN_IB_NUM_QP_STATS];
	struct tern_cmd_counter_set_out ctr_buf;
};

/**
 * struct tern_ib_mmap_entry - a page of the device a user context maps, as mmap() finds it
 * @rdma: the RDMA core's entry
 * @dev: owning device
 * @address: bus address of the page
 * @uar: the doorbell page's UAR index, freed when the last mapping is gone
 *	(tern_ib_mmap_free()); 0 for the device clock page (mapped read-only)
 */
struct tern_ib_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	struct tern_ib_dev *dev;
	u64 address;
	u32 uar;
};

/**
 * struct tern_ib_ucontext - a user context
 * @ibuc: the RDMA core's context
 * @uar: doorbell page of the context's QPs and CQs
 * @db_entry: mmap entry of that page
 * @clock_entry: mmap entry of the device clock page, NULL when there is none
 */
struct tern_ib_ucontext {
	struct ib_ucontext ibuc;
	u32 uar;
	struct tern_ib_mmap_entry *db_entry;
	struct tern_ib_mmap_entry *clock_entry;
};

/**
 * struct tern_ib_pd - a protection domain
 * @ibpd: the RDMA core's PD
 * @pdn: the device's number
 */
struct tern_ib_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

/**
 * struct tern_ib_ah - an address handle (a software object)
 * @ibah: the RDMA core's AH
 * @attr: the attributes it was created with, for query_ah
 * @path: the RoCEv2 path built from @attr, copied into the tern_ud_seg of each kernel UD
 *	WQE sent with this AH (user AHs hand it to the provider in tern_create_ah_resp)
 */
struct tern_ib_ah {
	struct ib_ah ibah;
	struct rdma_ah_attr attr;
	struct tern_qp_path path;
};

/**
 * struct tern_ib_mr - a memory region
 * @ibmr: the RDMA core's MR
 * @umem: pinned user pages or a pinned dma-buf attachment (umem->is_dmabuf), NULL for a
 *	DMA MR or a fast-registration MR
 * @page_shift: log2 of the blocks the device translates with (0 for a DMA MR)
 * @npages: blocks in the page list the device was given (0 for a DMA MR)
 * @pbl_mode: TERN_MEM_DIRECT or TERN_MEM_PAGE_LIST: how that list was handed over
 * (the last three immutable after registration; shown by rdma res show mr -dd)
 * @access: user MRs: the IB_ACCESS_* flags registered, for a rereg_mr that keeps them
 * @fr_list: fast registration (ib_alloc_mr): the page list REG_MR work requests hand to
 * the device, DMA-contiguous as struct tern_reg_mr_seg requires; unused otherwise
 * @fr_max: entries @fr_list holds (the MR's max_pages at CREATE_MR)
 * @fr_n: entries .map_mr_sg filled; written by the ULP's map call and read by its post of
 * the REG_MR that follows, which the ULP orders (the RDMA core takes no lock)
 */
struct tern_ib_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	u8 page_shift;
	u32 npages;
	u8 pbl_mode;
	int access;
	struct tern_ib_dma_buf fr_list;
	u32 fr_max;
	u32 fr_n;
};

/**
 * struct tern_ib_mw - a memory window: all its state is the device's and the RDMA core's
 * @ibmw: the RDMA core's window (rkey: index << 8 | the key byte of its creation; the
 *	  provider tracks the key of each bind)
 */
struct tern_ib_mw {
	struct ib_mw ibmw;
};

/**
 * struct tern_ib_obj - a CQ, QP or SRQ as its events find it (main.c: tern_ib_obj_*())
 * @refcount: 1 while in its xarray (tern_ib_dev.cq_xa, qp_xa or srq_xa) plus one per
 *	event handler using the object
 * @free: completed when @refcount drops to zero
 */
struct tern_ib_obj {
	refcount_t refcount;
	struct completion free;
};

/**
 * struct tern_ib_cq - a completion queue
 * @ibcq: the RDMA core's CQ
 * @cqn: the device's number
 * @mem: user CQs: the ring and consumer-index record in user memory
 * @kbuf: kernel CQs: the ring, then the consumer-index record, in coherent DMA memory
 * @log_depth: kernel CQs: 2^@log_depth CQEs
 * @lock: kernel CQs: protects @ci, the CI record and @dying (see the locking notes above)
 * @ci: kernel CQs: CQEs consumed, free-running
 * @dying: kernel CQs: kernel QPs on an SRQ that receive into this CQ and are being
 *	destroyed (tern_ib_qp.dying)
 * @obj: what tern_ib_dev.cq_xa holds, for events
 * @resize_lock: user CQs: serialises resize_cq, which replaces @mem, and modify_cq
 * @vector: the completion vector (index into tern_ib_dev.ceqs) its events go to
 * @moder_count: the event moderation the device last accepted (modify_cq): CQEs...
 * @moder_period: ...and microseconds; 0/0: none. Written by modify_cq (serialised: the
 *	RDMA core's DIM work for a kernel CQ, @resize_lock for a user CQ), read locklessly
 *	by fill_res_cq_entry.
 * @flags: user CQs: TERN_CREATE_CQ_F_* it was created with (64-byte CQEs)
 */
struct tern_ib_cq {
	struct ib_cq ibcq;
	u32 cqn;
	u32 vector;
	struct tern_ib_queue_mem mem;
	struct tern_ib_dma_buf kbuf;
	u32 log_depth;
	spinlock_t lock;	/* see above */
	u32 ci;
	struct list_head dying;
	struct tern_ib_obj obj;
	struct mutex resize_lock;	/* see above */
	u16 moder_count;
	u16 moder_period;
	u8 flags;
};

/**
 * struct tern_ib_kq - a work queue of a kernel QP, in coherent DMA memory
 * @buf: the ring: 2^@log_depth slots of 2^@log_stride bytes
 * @log_depth: see @buf
 * @log_stride: see @buf
 * @max_sge: SGEs a WQE may carry
 * @lock: protects @pi and the ring slots (post_send or post_recv; irqsave)
 * @pi: WQEs posted, free-running (the doorbell value)
 * @ci: WQEs completed, free-running; written by poll_cq under the CQ's lock (release),
 *	read by the poster (acquire)
 */
struct tern_ib_kq {
	struct tern_ib_dma_buf buf;
	u8 log_depth;
	u8 log_stride;
	u32 max_sge;
	spinlock_t lock;	/* see above */
	u16 pi;
	u16 ci;
};

/**
 * struct tern_ib_qp - a queue pair (RC, UC, UD or GSI)
 * @ibqp: the RDMA core's QP
 * @qpn: the device's number
 * @type: TERN_QPT_*
 * @kernel: a kernel QP (rings in @ksq/@krq) rather than a user QP (rings in @sq/@rq)
 * @sq: user QPs: send ring in user memory
 * @rq: user QPs: receive ring in user memory
 * @ksq: kernel QPs: send queue
 * @krq: kernel QPs: receive queue
 * @cap: the capabilities the QP really has
 * @sig_all: every send WQE is signalled
 * @lock: serialises modify_qp and query_qp; protects the fields below
 * @state: last state set by modify_qp or reported by the device (WRITE_ONCE from events)
 * @dest_qpn: destination QP number from the last modify_qp that set it
 * @qkey: UD/GSI: the Q_Key from the last modify_qp that set it
 * @sgid_index: GID index of the path, for query_qp
 * @ece_offer: user RC QPs: the TERN_ECE_* options offered at creation (<rdma/tern-abi.h>),
 *	the most that modify_qp may agree on; fixed after creation
 * @obj: what tern_ib_dev.qp_xa holds, for events and poll_cq
 * @dying: kernel QPs on an SRQ: in tern_ib_cq.dying of the receive CQ from the moment
 *	destroy_qp erases the QP from @qp_xa until its CQEs are cleaned, so that poll_cq
 *	still credits the SRQ for the receive CQEs it drops meanwhile (the CQ's lock)
 */
struct tern_ib_qp {
	struct ib_qp ibqp;
	u32 qpn;
	u8 type;
	bool kernel;
	struct tern_ib_queue_mem sq;
	struct tern_ib_queue_mem rq;
	struct tern_ib_kq ksq;
	struct tern_ib_kq krq;
	struct ib_qp_cap cap;
	bool sig_all;
	struct mutex lock;	/* see above */
	enum ib_qp_state state;
	u32 dest_qpn;
	u32 qkey;
	u8 sgid_index;
	u32 ece_offer;
	struct tern_ib_obj obj;
	struct list_head dying;
};

/**
 * struct tern_ib_srq - a shared receive queue
 * @ibsrq: the RDMA core's SRQ
 * @srqn: the device's number
 * @kernel: a kernel SRQ (ring in @kbuf) rather than a user SRQ (ring in @mem)
 * @mem: user SRQs: the ring in user memory
 * @kbuf: kernel SRQs: the ring in coherent DMA memory, 2^@log_depth slots of
 *	2^@log_stride bytes
 * @log_depth: kernel SRQs: see @kbuf
 * @log_stride: kernel SRQs: see @kbuf
 * @max_wr: WQEs it holds (its depth, at most 0xffff: the producer index is a u16)
 * @max_sge: SGEs a WQE may carry
 * @lock: serialises modify_srq and query_srq
 * @klock: kernel SRQs: protects @pi and the ring slots (post_srq_recv; irqsave)
 * @pi: kernel SRQs: WQEs posted, free-running (the doorbell value)
 * @done: kernel SRQs: receive completions of the QPs on the SRQ, free-running. The device
 *	takes WQEs in ring order and keeps what it needs of each, so n completions free the
 *	n oldest slots whichever QPs and CQs they came from; there are several writers (the
 *	CQ lock of each receive CQ of those QPs: atomic_inc_return_release()), and the poster
 *	reads it with atomic_read_acquire() under @klock
 * @obj: what tern_ib_dev.srq_xa holds, for events
 */
struct tern_ib_srq {
	struct ib_srq ibsrq;
	u32 srqn;
	bool kernel;
	struct tern_ib_queue_mem mem;
	struct tern_ib_dma_buf kbuf;
	u8 log_depth;
	u8 log_stride;
	u32 max_wr;
	u32 max_sge;
	struct mutex lock;	/* see above */
	spinlock_t klock;	/* see above */
	u16 pi;
	atomic_t done;
	struct tern_ib_obj obj;
};

/*
 * to_t*(): the tern_ib_* object around an ib_* one. "tdev" is tern_core's struct tern_dev
 * (tern_ib_dev.tdev), hence to_tibdev.
 */
static inline struct tern_ib_dev *to_tibdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct tern_ib_dev, ibdev);
}

static inline struct tern_ib_ucontext *to_tuc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct tern_ib_ucontext, ibuc);
}

static inline struct tern_ib_pd *to_tpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct tern_ib_pd, ibpd);
}

static inline struct tern_ib_ah *to_tah(struct ib_ah *ibah)
{
	return container_of(ibah, struct tern_ib_ah, ibah);
}

static inline struct tern_ib_mr *to_tmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct tern_ib_mr, ibmr);
}

static inline struct tern_ib_cq *to_tcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct tern_ib_cq, ibcq);
}

static inline struct tern_ib_qp *to_tqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct tern_ib_qp, ibqp);
}

/* UD and GSI QPs address each send WQE; RC and UC QPs are connected by modify_qp. */
static inline bool tern_ib_qpt_ud(u8 type)
{
	return type == TERN_QPT_UD || type == TERN_QPT_GSI;
}

static inline struct tern_ib_srq *to_tsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct tern_ib_srq, ibsrq);
}

static inline struct device *tern_ib_dma_dev(struct tern_ib_dev *dev)
{
	return tern_core_dma_dev(dev->tdev);
}

static inline bool tern_ib_has_cap(const struct tern_ib_dev *dev, u32 cap)
{
	return le32_to_cpu(dev->caps.cap_flags) & cap;
}

/* User CQs may carry completion timestamps: 64-byte CQEs with the device clock. */
static inline bool tern_ib_has_cqe_ts(struct tern_ib_dev *dev)
{
	return tern_ib_has_cap(dev, TERN_RDMA_CAP_CQE_TS) &&
	       (le32_to_cpu(tern_core_caps(dev->tdev)->caps) & TERN_DEV_CAP_CLOCK);
}

/* main.c */
int tern_ib_cmd(struct tern_ib_dev *dev, u16 opcode, const void *in, size_t in_len,
		void *out, size_t out_len, u32 *result);
void tern_ib_zombie_add(struct tern_ib_dev *dev, struct ib_umem *umem);
bool tern_ib_destroy_failed(struct tern_ib_dev *dev, const char *what, u32 num, int err);
int tern_ib_udata_cmd(struct ib_udata *udata, void *cmd, size_t len, size_t min_len,
		      size_t resp_len);
void tern_ib_obj_init(struct tern_ib_obj *obj);
int tern_ib_obj_publish(struct tern_ib_dev *dev, struct xarray *xa, struct tern_ib_obj *obj,
			u32 num, u32 limit, const char *what);
void tern_ib_obj_unpublish(struct xarray *xa, u32 num, struct tern_ib_obj *obj);
struct tern_ib_obj *tern_ib_obj_get(struct xarray *xa, u32 num);
void tern_ib_obj_put(struct tern_ib_obj *obj);
void tern_ib_obj_event(struct tern_ib_dev *dev, struct tern_ib_obj *obj, struct ib_event *ev,
		       void (*handler)(struct ib_event *ev, void *ctx), void *ctx);

/* verbs.c */
int tern_ib_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void tern_ib_dealloc_ucontext(struct ib_ucontext *ibuc);
int tern_ib_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void tern_ib_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
void tern_ib_disassociate_ucontext(struct ib_ucontext *ibuc);
int tern_ib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int tern_ib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int tern_ib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		      struct ib_udata *udata);
int tern_ib_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *ah_attr);
int tern_ib_destroy_ah(struct ib_ah *ibah, u32 flags);

/* mr.c */
int tern_ib_queue_mem_get(struct tern_ib_dev *dev, struct tern_ib_queue_mem *qm, u64 va,
			  u64 len, size_t need);
void tern_ib_queue_mem_done(struct tern_ib_dev *dev, struct tern_ib_queue_mem *qm);
void tern_ib_queue_mem_put(struct tern_ib_dev *dev, struct tern_ib_queue_mem *qm,
			   bool hold);
int tern_ib_dma_buf_alloc(struct tern_ib_dev *dev, struct tern_ib_dma_buf *buf, size_t size);
void tern_ib_dma_buf_free(struct tern_ib_dev *dev, struct tern_ib_dma_buf *buf);
void tern_ib_dma_buf_desc(const struct tern_ib_dma_buf *buf, struct tern_mem_desc *desc);
struct ib_mr *tern_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length, u64 iova,
				  int access, struct ib_udata *udata);
struct ib_mr *tern_ib_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset, u64 length,
					 u64 iova, int fd, int access,
					 struct ib_udata *udata);
struct ib_mr *tern_ib_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *tern_ib_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type, u32 max_num_sg);
int tern_ib_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int tern_ib_dealloc_mw(struct ib_mw *ibmw);
int tern_ib_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		      unsigned int *sg_offset);
int tern_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *tern_ib_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start, u64 length,
				    u64 iova, int access, struct ib_pd *ibpd,
				    struct ib_udata *udata);

/* cq.c */
int tern_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata);
int tern_ib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int tern_ib_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
void tern_ib_cq_event(struct tern_ib_dev *dev, const struct tern_eqe *eqe);
void tern_ib_comp_event(void *ctx, const struct tern_eqe *eqe);
int tern_ib_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int tern_ib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void tern_ib_cq_clean(struct tern_ib_cq *cq, u32 qpn, struct tern_ib_srq *srq);
void tern_ib_cq_dying(struct tern_ib_cq *cq, struct tern_ib_qp *qp, bool add);

/* qp.c */
int tern_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		      struct ib_udata *udata);
int tern_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int attr_mask,
		      struct ib_udata *udata);
int tern_ib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int attr_mask,
		     struct ib_qp_init_attr *init_attr);
int tern_ib_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int tern_ib_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int tern_ib_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period);
int tern_ib_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);
int tern_ib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int tern_ib_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int tern_ib_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void tern_ib_qp_event(struct tern_ib_dev *dev, const struct tern_eqe *eqe);
u32 tern_ib_access_to_hw(int ib_access);
int tern_ib_build_path(struct tern_ib_dev *dev, const struct rdma_ah_attr *ah, u16 udp_sport,
		       struct tern_qp_path *path);

/* srq.c */
int tern_ib_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init_attr,
		       struct ib_udata *udata);
int tern_ib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask attr_mask, struct ib_udata *udata);
int tern_ib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int tern_ib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
void tern_ib_srq_event(struct tern_ib_dev *dev, const struct tern_eqe *eqe);

/* datapath.c */
int tern_ib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr);
int tern_ib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);
int tern_ib_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr);
void tern_ib_srq_complete(struct tern_ib_srq *srq);

/* counters.c */
struct rdma_hw_stats *tern_ib_alloc_hw_port_stats(struct ib_device *ibdev, u32 port_num);
int tern_ib_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats, u32 port,
			 int index);
extern const struct ib_device_ops tern_ib_counter_ops;

#endif /* TERN_IB_H */
