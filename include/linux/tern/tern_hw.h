/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * tern hardware interface: PCI identity, BARs, registers, doorbells, host memory
 * descriptors, event queues and Ethernet rings.
 *
 * This header is the one definition of the device's layout. The kernel driver, the rdma-core
 * provider and the device model all compile against it; Documentation/hw/ explains it for
 * people. All multi-byte fields are little-endian. Every structure has a fixed size that is
 * asserted at the end of the file.
 */
#ifndef TERN_HW_H
#define TERN_HW_H

#include <linux/types.h>

/* Interface version reported by TERN_REG_VERSION: a driver must match the major. */
#define TERN_IF_VERSION_MAJOR		2
#define TERN_IF_VERSION_MINOR		0
#define TERN_IF_VERSION			((TERN_IF_VERSION_MAJOR << 16) | TERN_IF_VERSION_MINOR)

/*
 * PCI identity. PROVISIONAL: vendor 0x1b36 is the vendor QEMU's emulated devices use; device
 * 0x7e70 is not allocated to tern and no in-tree driver claims it. Both change when tern gets
 * its own allocation.
 */
#define TERN_PCI_VENDOR_ID		0x1b36
#define TERN_PCI_DEVICE_ID		0x7e70
#define TERN_PCI_SUBSYS_VENDOR_ID	0x1b36
#define TERN_PCI_SUBSYS_ID		0x0001
#define TERN_PCI_REVISION		0x01
#define TERN_PCI_CLASS			0x020000	/* Ethernet controller */

/* BARs: all 64-bit memory BARs. */
#define TERN_BAR_REGS			0		/* control/status registers */
#define TERN_BAR_REGS_SIZE		0x4000
#define TERN_BAR_DB			2		/* doorbell pages */
#define TERN_BAR_DB_SIZE		0x100000	/* 256 pages of 4 KiB */
#define TERN_BAR_MSIX			4		/* MSI-X table and PBA */
#define TERN_MAX_MSIX			16

/* ---------------------------------------------------------------------------------------
 * BAR0 registers (32-bit accesses).
 */
#define TERN_REG_MAGIC			0x0000	/* RO: TERN_MAGIC */
#define TERN_REG_VERSION		0x0004	/* RO: TERN_IF_VERSION */
#define TERN_REG_FW_VERSION		0x0008	/* RO: major << 24 | minor << 16 | patch */
#define TERN_REG_CTRL			0x000c	/* RW: TERN_CTRL_* */
#define TERN_REG_STATUS			0x0010	/* RO: TERN_STATUS_* */
#define TERN_REG_SCRATCH		0x0014	/* RW: no effect; for MMIO sanity checks */
#define TERN_REG_CMD_TIMEOUT		0x0018	/* RO: longest command completion, ms (1.1) */
#define TERN_REG_RESET_TIMEOUT		0x001c	/* RO: longest reset, ms (1.1) */
#define TERN_REG_CMDQ_SQ_LO		0x0020	/* RW: command ring DMA address, low 32 */
#define TERN_REG_CMDQ_SQ_HI		0x0024	/* RW: command ring DMA address, high 32 */
#define TERN_REG_CMDQ_CQ_LO		0x0028	/* RW: completion ring DMA address, low 32 */
#define TERN_REG_CMDQ_CQ_HI		0x002c	/* RW: completion ring DMA address, high 32 */
#define TERN_REG_CMDQ_CFG		0x0030	/* RW: TERN_CMDQ_CFG_* */
#define TERN_REG_CMDQ_STATUS		0x0034	/* RO: TERN_CMDQ_STATUS_* */
/* Device clock adjustment (TERN_DEV_CAP_CLOCK); the clock itself is in TERN_CLOCK_PAGE. */
#define TERN_REG_CLOCK_FREQ		0x0040	/* RW: rate adjustment, signed ppb */
#define TERN_REG_CLOCK_ARG_LO		0x0044	/* RW: argument of CLOCK_CMD, low 32 */
#define TERN_REG_CLOCK_ARG_HI		0x0048	/* RW: argument of CLOCK_CMD, high 32 */
#define TERN_REG_CLOCK_CMD		0x004c	/* WO: TERN_CLOCK_CMD_*; reads 0 */

#define TERN_MAGIC			0x4e524554	/* "TERN" in little-endian bytes */

/* Writing 1 starts a device reset; the bit reads 1 until the reset is done. */
#define TERN_CTRL_RESET			(1u << 0)

#define TERN_STATUS_READY		(1u << 0)	/* reset done, cmdq may be set up */
#define TERN_STATUS_FATAL		(1u << 1)	/* device error; only a reset recovers */
#define TERN_STATUS_LINK_UP		(1u << 2)	/* carrier on the wire */
#define TERN_STATUS_SYNDROME_SHIFT	16		/* bits 31:16: enum tern_fatal_syndrome */
#define TERN_STATUS_SYNDROME_MASK	0xffff0000u

/* Why TERN_STATUS_FATAL was raised (also carried by a TERN_EQE_FATAL event). */
enum tern_fatal_syndrome {
	TERN_FATAL_NONE			= 0,
	TERN_FATAL_CMDQ_DMA		= 1,	/* command or completion ring unreachable */
	TERN_FATAL_EQ_DMA		= 2,	/* an event queue unreachable */
	TERN_FATAL_INTERNAL		= 3,
};

#define TERN_CMDQ_CFG_LOG_DEPTH_MASK	0x0000000fu	/* log2 entries, 1..TERN_CMDQ_MAX_LOG */
#define TERN_CMDQ_CFG_ENABLE		(1u << 31)
#define TERN_CMDQ_MAX_LOG		8

#define TERN_CMDQ_STATUS_ENABLED	(1u << 0)
#define TERN_CMDQ_STATUS_ERROR		(1u << 1)	/* ring DMA fault; see STATUS syndrome */

/*
 * Device clock (TERN_DEV_CAP_CLOCK; Documentation/hw/interface.rst, "Device clock"): a 64-bit
 * count of nanoseconds that runs from power-on, at the nominal TERN_CLOCK_KHZ adjusted by
 * TERN_REG_CLOCK_FREQ. The clock page holds nothing else, so a driver may map it read-only
 * into user space. A 64-bit read of TERN_REG_CLOCK_LO is atomic; with 32-bit reads, read HI,
 * LO, HI again, and read LO once more when the two HI differ (that LO goes with the second
 * HI). Resets (CTRL.RESET, FLR) leave the clock and its adjustment alone.
 */
#define TERN_CLOCK_PAGE			0x3000	/* 4 KiB page: RO, may be mapped by users */
#define TERN_CLOCK_PAGE_SIZE		0x1000
#define TERN_REG_CLOCK_LO		0x3000	/* RO: device time, ns, low 32 */
#define TERN_REG_CLOCK_HI		0x3004	/* RO: device time, ns, high 32 */
#define TERN_CLOCK_KHZ			1000000	/* nominal rate: 1 GHz, one tick a nanosecond */
/* TERN_REG_CLOCK_FREQ: -TERN_CLOCK_MAX_ADJ_PPB..TERN_CLOCK_MAX_ADJ_PPB; others are ignored. */
#define TERN_CLOCK_MAX_ADJ_PPB		100000000
/* TERN_REG_CLOCK_CMD values; others are ignored. */
#define TERN_CLOCK_CMD_SET		1	/* the clock becomes ARG */
#define TERN_CLOCK_CMD_ADJUST		2	/* the clock moves by ARG, a signed 64-bit ns */

/*
 * Timeouts (milliseconds). The device states its own worst cases in TERN_REG_CMD_TIMEOUT and
 * TERN_REG_RESET_TIMEOUT (interface 1.1; a 1.0 device reads 0 there): a driver waits that
 * long, taking a value outside TERN_TIMEOUT_MIN_MS..TERN_TIMEOUT_MAX_MS, or 0, as the
 * defaults below, the values of interface 1.0.
 */
#define TERN_CMD_TIMEOUT_DEFAULT_MS	5000
#define TERN_RESET_TIMEOUT_DEFAULT_MS	2000
#define TERN_TIMEOUT_MIN_MS		100
#define TERN_TIMEOUT_MAX_MS		60000

/* ---------------------------------------------------------------------------------------
 * BAR2: doorbells. 4 KiB pages; page 0 belongs to the kernel driver, pages 1..255 are user
 * access regions (UARs) that RDMA contexts map into user space. Page 0's doorbells are 32-bit
 * writes; UAR doorbells are 64-bit writes (tern_rdma.h); reads return 0.
 */
#define TERN_DB_PAGE_SIZE		0x1000
#define TERN_DB_NUM_PAGES		(TERN_BAR_DB_SIZE / TERN_DB_PAGE_SIZE)
#define TERN_DB_FIRST_UAR		1

/* Page 0. */
#define TERN_DB_CMDQ			0x000	/* value: SQ producer index (free-running u16) */
#define TERN_DB_EQ(eqn)			(0x100 + 4 * (eqn))	/* TERN_EQ_DB_* */
#define TERN_DB_ETH_TXQ(qid)		(0x200 + 4 * (qid))	/* TERN_ETH_DB_PI_MASK */
#define TERN_DB_ETH_RXQ(qid)		(0x400 + 4 * (qid))	/* TERN_ETH_DB_PI_MASK */
#define TERN_DB_ETH_TXQ_ARM(qid)	(0x600 + 4 * (qid))	/* TERN_ETH_ARM_CI_MASK */
#define TERN_DB_ETH_RXQ_ARM(qid)	(0x800 + 4 * (qid))	/* TERN_ETH_ARM_CI_MASK */
#define TERN_DB_ETH_MAX_QUEUES		128	/* each kind of Ethernet doorbell: 0x200 bytes */

/* EQ doorbell: the consumer index the driver has processed, and optionally re-arm. */
#define TERN_EQ_DB_CI_MASK		0x00ffffffu	/* free-running, modulo 2^24 */
#define TERN_EQ_DB_ARM			(1u << 31)

/*
 * Ethernet queue doorbell: the new producer index; bits 31:16 are reserved (0). Interface
 * 1.x also armed the queue with bit 31; 2.0 arms it with a doorbell of its own below, so
 * that the producer index and the arming are written by different contexts without a lock.
 */
#define TERN_ETH_DB_PI_MASK		0x0000ffffu	/* free-running, modulo 2^16 */

/*
 * Ethernet arm doorbell: the driver's consumer index (descriptors it has processed,
 * free-running modulo 2^16; bits 31:16 reserved, 0). Arms the queue's completion event; when
 * the device has already finished descriptors past that index, the event is raised at once
 * (subject to event moderation), so a descriptor finished between the driver's last look at
 * its ring and the arming is never missed.
 */
#define TERN_ETH_ARM_CI_MASK		0x0000ffffu

/* ---------------------------------------------------------------------------------------
 * Host memory as the device sees it: a contiguous region, or a list of equal-sized pages.
 */
enum tern_mem_mode {
	/* @addr is the memory itself: npages << page_shift contiguous bytes. */
	TERN_MEM_DIRECT			= 0,
	/* @addr points at a contiguous array of @npages __le64 page addresses. */
	TERN_MEM_PAGE_LIST		= 1,
};

#define TERN_MEM_MIN_PAGE_SHIFT		12
#define TERN_MEM_MAX_PAGE_SHIFT		30

struct tern_mem_desc {
	__le64	addr;
	__le32	npages;
	__u8	page_shift;		/* TERN_MEM_MIN_PAGE_SHIFT..TERN_MEM_MAX_PAGE_SHIFT */
	__u8	mode;			/* enum tern_mem_mode */
	__le16	rsvd;
};

/* ---------------------------------------------------------------------------------------
 * Command queue. The driver writes 64-byte entries into a ring of 2^n entries and rings
 * TERN_DB_CMDQ with the new producer index. The device writes one 16-byte completion per
 * command into the completion ring (same depth), matched to the command by @token; the
 * phase bit of a completion is 1 on the first pass through the ring, 0 on the second, and
 * so on. Command payloads and opcodes are in tern_cmd.h.
 */
#define TERN_CMD_INLINE_MAX		40

struct tern_cmd_sqe {
	__le16	opcode;			/* enum tern_cmd_opcode */
	__le16	token;			/* chosen by the driver, echoed in the completion */
	__le16	in_len;			/* bytes of input */
	__le16	out_len;		/* capacity of the output buffer at @out_addr */
	__le64	in_addr;		/* input DMA address when in_len > TERN_CMD_INLINE_MAX */
	__le64	out_addr;		/* output DMA address; 0 when out_len is 0 */
	__u8	inline_in[TERN_CMD_INLINE_MAX];	/* input when in_len <= TERN_CMD_INLINE_MAX */
};

#define TERN_CQE_PHASE			(1u << 0)

struct tern_cmd_cqe {
	__le16	token;
	__u8	status;			/* enum tern_cmd_status */
	__u8	flags;			/* TERN_CQE_PHASE */
	__le32	syndrome;		/* detail when status != OK (see tern_cmd.h) */
	__le32	result;			/* small result, e.g. the number of a created object */
	__le16	out_len;		/* bytes written at out_addr */
	__le16	sq_ci;			/* device's command ring consumer index after this one */
};

/* ---------------------------------------------------------------------------------------
 * Event queues. An EQ is a ring of 2^n 16-byte entries in host memory, bound to one MSI-X
 * vector. The device writes an entry (phase bit as for command completions) and, if the EQ
 * is armed, raises its vector once and disarms it. The driver consumes entries, then writes
 * its consumer index with TERN_EQ_DB_ARM to TERN_DB_EQ(eqn). The device never overwrites an
 * unconsumed entry: an event that finds its EQ full is dropped and counted.
 */
#define TERN_EQE_PHASE			(1u << 0)

enum tern_eqe_type {
	TERN_EQE_CMD_COMPLETION		= 0x01,	/* data[0]: completion ring producer index */
	TERN_EQE_LINK_CHANGE		= 0x02,	/* data[0]: 1 link up, 0 link down */
	TERN_EQE_FATAL			= 0x03,	/* data[0]: enum tern_fatal_syndrome */
	TERN_EQE_ETH_TXQ		= 0x04,	/* data[0]: TX queue number (descriptors done) */
	TERN_EQE_ETH_RXQ		= 0x05,	/* data[0]: RX queue number (frames received) */
	/* 0x10..0x1f: RDMA completion and affiliated events (CQ, QP, SRQ). */
	/* 0x20..0x2f: congestion control and PFC events. */
};

struct tern_eqe {
	__u8	type;			/* enum tern_eqe_type */
	__u8	subtype;
	__u8	rsvd;
	__u8	flags;			/* TERN_EQE_PHASE */
	__le32	data[3];
};

#define TERN_EQ_MIN_LOG			4
#define TERN_EQ_MAX_LOG			16

/**
 * tern_ring_phase() - phase bit of the entries on an index's pass through a ring
 * @idx: free-running index of an entry of a command completion ring or an EQ: the
 *	device's producer index as it writes the entry, software's consumer index as it
 *	looks for the next one
 * @log_depth: log2 of the ring's entries
 *
 * The device writes phase 1 on its first pass through the ring, 0 on the second, and so
 * on: an entry is new when its phase is the one its index gives. 2^32 is a multiple of
 * twice any ring depth, so @idx may wrap around. RDMA CQs follow the same rule in another
 * bit (tern_cqe_phase() in tern_rdma.h).
 *
 * Return: TERN_CQE_PHASE (== TERN_EQE_PHASE) or 0.
 */
static inline __u8 tern_ring_phase(__u32 idx, unsigned int log_depth)
{
	return (__u8)(((idx >> log_depth) & 1) ? 0 : TERN_CQE_PHASE);
}

/* ---------------------------------------------------------------------------------------
 * Ethernet rings. Each TX and RX queue is a ring of 2^n 16-byte descriptors with
 * write-back: the device sets TERN_ETH_DESC_DONE in @status once a descriptor is finished,
 * after everything else it writes. When a queue is armed (TERN_DB_ETH_TXQ_ARM/RXQ_ARM) and
 * finishes a frame (an RX frame, or every descriptor of a TX frame), the device posts one
 * TERN_EQE_ETH_TXQ/RXQ event to the queue's EQ and disarms the queue; with event moderation
 * (struct tern_cmd_create_eth_queue_in in tern_cmd.h) the event waits for a frame count or a
 * period.
 *
 * TX (Documentation/hw/interface.rst, "Ethernet"): a frame is an optional context descriptor
 * (TERN_ETH_TXD_CTX, struct tern_eth_txd_ctx: checksum and segmentation offload) followed by
 * one or more data descriptors, each but the last with TERN_ETH_TXD_MORE; at most
 * TERN_ETH_TX_MAX_DESCS descriptors in all. The device takes a frame only once all its
 * descriptors are posted, and completes every one of them (DONE, with ERR on all when the
 * frame was not sent). Offloads need TERN_DEV_CAP_ETH_OFFLOAD.
 *
 * Frame timestamps (TERN_DEV_CAP_ETH_TS; Documentation/hw/interface.rst, "Frame
 * timestamps"): TERN_ETH_TXD_TS on a frame's last data descriptor asks for the time, on the
 * device clock (TERN_REG_CLOCK_*, the PTP hardware clock), at which the MAC took the frame
 * (a TSO frame: its first segment) for the wire. The device writes it over that
 * descriptor's @addr (@ts) before its status, and sets TERN_ETH_DESC_TS there; a frame not
 * sent (ERR) gets none. TERN_ETH_TXD_TS on any other descriptor makes the frame bad (ERR).
 * With TERN_PORT_F_RX_TS (SET_PORT) every frame received gets the time it came from the
 * wire over its descriptor's @addr, with TERN_ETH_DESC_TS and without the RSS hash, and no
 * frames are coalesced.
 */
#define TERN_ETH_DESC_DONE		(1u << 0)	/* device has finished this descriptor */
#define TERN_ETH_DESC_ERR		(1u << 1)	/* DMA fault, bad frame: not sent/taken */
#define TERN_ETH_RXD_CSUM_OK		(1u << 2)	/* RX: IPv4 header and TCP/UDP sum good */
#define TERN_ETH_RXD_CSUM_BAD		(1u << 3)	/* RX: one of them bad (frame delivered) */
#define TERN_ETH_RXD_HASH		(1u << 4)	/* RX: RSS hash in the write-back */
#define TERN_ETH_RXD_HASH_L4		(1u << 5)	/* RX: ... over addresses and ports */
#define TERN_ETH_RXD_LRO		(1u << 6)	/* RX: a coalesced segment's first */
#define TERN_ETH_RXD_MORE		(1u << 7)	/* RX: it goes on in the next one */
#define TERN_ETH_DESC_TS		(1u << 8)	/* the device wrote @ts over @addr */

/* flags of TX descriptors (data and context alike) */
#define TERN_ETH_TXD_MORE		(1u << 0)	/* the frame goes on in the next one */
#define TERN_ETH_TXD_CTX		(1u << 1)	/* struct tern_eth_txd_ctx */
#define TERN_ETH_TXD_TS			(1u << 2)	/* last data descriptor: timestamp it */

struct tern_eth_txd {
	union {
		__le64	addr;		/* a piece of the frame (destination MAC first, no FCS) */
		__le64	ts;		/* device, with TERN_ETH_DESC_TS: device clock, ns */
	};
	__le16	len;			/* bytes at @addr: 1..TERN_ETH_MAX_FRAME */
	__le16	flags;			/* driver: TERN_ETH_TXD_MORE */
	__le16	rsvd;
	__le16	status;			/* device: TERN_ETH_DESC_* */
};

/*
 * Offload context of the frame whose data descriptors follow. TERN_ETH_CTX_CSUM: the
 * device adds up the frame in 16-bit one's complement from @csum_start to its end, adds the
 * 16 bits found at @csum_start + @csum_offset (the pseudo-header sum the stack left there),
 * and stores the complement there (0 becomes 0xffff), as skb_checksum_help() would.
 * TERN_ETH_CTX_TSO (with CSUM, on IPv4 or IPv6 TCP with @csum_start at the TCP header and
 * no IPv6 extension header): the payload after the TCP header is cut into segments of @mss
 * bytes, each sent with a copy of the headers: IPv4 total length, identification (+1 per
 * segment) and header checksum, or IPv6 payload length; TCP sequence number, FIN and PSH on
 * the last segment only, CWR on the first only; the TCP checksum computed whole.
 */
#define TERN_ETH_CTX_CSUM		(1u << 0)
#define TERN_ETH_CTX_TSO		(1u << 1)

struct tern_eth_txd_ctx {
	__le16	csum_start;		/* from the frame's first byte */
	__le16	csum_offset;		/* where the sum goes, from @csum_start */
	__le16	mss;			/* TSO: TCP payload bytes per segment, 1..MTU */
	__le16	ctx_flags;		/* TERN_ETH_CTX_* */
	__le16	rsvd0;			/* 0 (a data descriptor's len) */
	__le16	flags;			/* driver: TERN_ETH_TXD_CTX */
	__le16	rsvd1;
	__le16	status;			/* device: TERN_ETH_DESC_* */
};

/* Descriptors per TX frame, the context included; the whole frame's bytes, TSO or not. */
#define TERN_ETH_TX_MAX_DESCS		20
#define TERN_ETH_TSO_MAX_FRAME		65536

/*
 * RX descriptor. Write-back: with TERN_ETH_RXD_HASH in @status the device has written the
 * frame's RSS hash (SET_RSS in tern_cmd.h) over the low half of @addr (@rss_hash); the driver
 * keeps its own copy of the buffer's address.
 *
 * Receive coalescing (TERN_DEV_CAP_ETH_LRO, TERN_PORT_F_LRO; Documentation/hw/interface.rst,
 * "Receive coalescing"): a TCP segment the device made of several frames fills up to
 * TERN_ETH_LRO_MAX_BUFS buffers in ring order. The first descriptor has TERN_ETH_RXD_LRO,
 * the MSS in @lro_mss and the bytes of its buffer (headers and payload) in @pkt_len; each
 * descriptor but the last has TERN_ETH_RXD_MORE; the others' @pkt_len are payload bytes at
 * the start of their buffers. The first descriptor is written back last.
 */
struct tern_eth_rxd {
	union {
		__le64	addr;		/* driver: receive buffer */
		__le32	rss_hash;	/* device, with TERN_ETH_RXD_HASH: the RSS hash */
		__le64	ts;		/* device, with TERN_ETH_DESC_TS: device clock, ns */
	};
	__le16	buf_len;		/* driver: buffer size */
	__le16	pkt_len;		/* device: frame length written */
	__le16	lro_mss;		/* device, with TERN_ETH_RXD_LRO: payload bytes per frame */
	__le16	status;			/* device: TERN_ETH_DESC_*, TERN_ETH_RXD_* */
};

/* Receive coalescing: buffers per segment, and how long a segment stays open (device time). */
#define TERN_ETH_LRO_MAX_BUFS		17
#define TERN_ETH_LRO_TIMEOUT_US		16

#define TERN_ETH_MIN_FRAME		14
#define TERN_ETH_MIN_MTU		68
#define TERN_ETH_MAX_MTU		9600
#define TERN_ETH_MAX_FRAME		(TERN_ETH_MAX_MTU + 14 + 4)	/* + header + VLAN tag */
#define TERN_ETH_MIN_LOG		6
#define TERN_ETH_MAX_LOG		13

/* ---------------------------------------------------------------------------------------
 * Fixed sizes.
 */
#ifdef __cplusplus	/* the ns-3 programs (model/ns3) read the INT format */
#define TERN_HW_ASSERT_SIZE(type, size) \
	static_assert(sizeof(type) == (size), #type " must be " #size " bytes")
#else
#define TERN_HW_ASSERT_SIZE(type, size) \
	_Static_assert(sizeof(type) == (size), #type " must be " #size " bytes")
#endif

TERN_HW_ASSERT_SIZE(struct tern_mem_desc, 16);
TERN_HW_ASSERT_SIZE(struct tern_cmd_sqe, 64);
TERN_HW_ASSERT_SIZE(struct tern_cmd_cqe, 16);
TERN_HW_ASSERT_SIZE(struct tern_eqe, 16);
TERN_HW_ASSERT_SIZE(struct tern_eth_txd, 16);
TERN_HW_ASSERT_SIZE(struct tern_eth_txd_ctx, 16);
TERN_HW_ASSERT_SIZE(struct tern_eth_rxd, 16);

#endif /* TERN_HW_H */
