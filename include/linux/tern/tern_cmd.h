/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * tern firmware commands: opcodes, completion statuses and every command's input and output.
 *
 * Transport (ring entries, completions, doorbells) is in tern_hw.h; Documentation/hw/commands.rst
 * describes each command for people. Inputs of at most TERN_CMD_INLINE_MAX bytes travel inline
 * in the ring entry, larger ones through a DMA buffer; outputs always go to a DMA buffer. The
 * device checks in_len against the command's exact input size (BAD_LEN) and fails a command
 * whose out_len is too small for its output (BAD_LEN); reserved fields must be zero (BAD_PARAM).
 */
#ifndef TERN_CMD_H
#define TERN_CMD_H

#include <linux/types.h>
#include "tern_hw.h"

#define TERN_CMD_MAX_IN			4096
#define TERN_CMD_MAX_OUT		4096

enum tern_cmd_opcode {
	/* 0x0001..0x00ff: device, event queues, Ethernet. */
	TERN_CMD_NOP			= 0x0001,
	TERN_CMD_QUERY_DEVICE		= 0x0002,
	TERN_CMD_SET_PORT		= 0x0003,
	TERN_CMD_QUERY_PORT		= 0x0004,
	TERN_CMD_QUERY_ETH_STATS	= 0x0005,
	TERN_CMD_CREATE_EQ		= 0x0010,
	TERN_CMD_DESTROY_EQ		= 0x0011,
	TERN_CMD_CREATE_ETH_TXQ		= 0x0020,
	TERN_CMD_DESTROY_ETH_TXQ	= 0x0021,
	TERN_CMD_CREATE_ETH_RXQ		= 0x0022,
	TERN_CMD_DESTROY_ETH_RXQ	= 0x0023,
	TERN_CMD_MODIFY_ETH_TXQ		= 0x0024,	/* TERN_DEV_CAP_ETH_MODERATION */
	TERN_CMD_MODIFY_ETH_RXQ		= 0x0025,
	TERN_CMD_SET_RSS		= 0x0026,	/* TERN_DEV_CAP_ETH_RSS */
	/* 0x0100..0x01ff: RDMA objects (PD, MR, CQ, QP, SRQ, AH) and their contexts. */
	/* 0x0200..0x02ff: DCB (PFC, ETS, DSCP map) and congestion control (ECN, CNP, DCQCN). */
	TERN_CMD_SET_DCB		= 0x0200,	/* tern_dcb.h */
	TERN_CMD_QUERY_DCB		= 0x0201,
	TERN_CMD_QUERY_PFC_STATS	= 0x0202,
	TERN_CMD_SET_CC_PARAMS		= 0x0203,
	TERN_CMD_QUERY_CC_PARAMS	= 0x0204,
	/* 0x0300..0x03ff: counters and diagnostics. */
	TERN_CMD_SET_WIRE_FAULTS	= 0x0300,
	TERN_CMD_QUERY_WIRE_FAULTS	= 0x0301,
};

enum tern_cmd_status {
	TERN_CMD_OK			= 0x00,
	TERN_CMD_BAD_OPCODE		= 0x01,	/* unknown opcode */
	TERN_CMD_BAD_LEN		= 0x02,	/* in_len/out_len wrong; syndrome: length needed */
	TERN_CMD_BAD_PARAM		= 0x03,	/* syndrome: byte offset of the offending field */
	TERN_CMD_NO_RESOURCES		= 0x04,	/* no free object of that kind */
	TERN_CMD_BAD_RESOURCE		= 0x05,	/* object number does not exist */
	TERN_CMD_BAD_STATE		= 0x06,	/* object busy or in the wrong state */
	TERN_CMD_DMA_ERROR		= 0x07,	/* input, output or described memory unreachable */
	TERN_CMD_INTERNAL		= 0x08,	/* firmware error */
};

/* ---------------------------------------------------------------------------------------
 * NOP: no effect; echoes the bytes that follow its header into the output buffer. Used to
 * check the command path and, with the test hooks a device may have, its failure handling.
 */
#define TERN_NOP_F_DELAY		(1u << 0)	/* complete delay_us later (max 1 s) */
#define TERN_NOP_F_FAIL			(1u << 1)	/* test hook: complete with fail_status */
#define TERN_NOP_F_DROP			(1u << 2)	/* test hook: never complete */
#define TERN_NOP_F_FATAL		(1u << 3)	/* test hook: the firmware dies (FATAL) */
#define TERN_NOP_MAX_DELAY_US		1000000

struct tern_cmd_nop_in {
	__le32	flags;			/* TERN_NOP_F_* */
	__le32	delay_us;
	__u8	fail_status;		/* enum tern_cmd_status, with TERN_NOP_F_FAIL */
	__u8	rsvd[3];
	__le32	fail_syndrome;
	/* followed by up to TERN_CMD_MAX_IN - 16 bytes echoed to the output */
};

/* ---------------------------------------------------------------------------------------
 * QUERY_DEVICE: identity, versions and limits. No input.
 */
#define TERN_DEV_CAP_ETH		(1u << 0)
#define TERN_DEV_CAP_RDMA		(1u << 1)	/* RoCEv2 objects (0x01xx commands) */
#define TERN_DEV_CAP_DCB		(1u << 2)	/* PFC/ETS (0x02xx commands) */
#define TERN_DEV_CAP_ETH_OFFLOAD	(1u << 3)	/* TX gather, checksum, TSO; RX checksum */
#define TERN_DEV_CAP_ETH_MODERATION	(1u << 4)	/* Ethernet queue event moderation */
#define TERN_DEV_CAP_ETH_RSS		(1u << 5)	/* receive side scaling: SET_RSS */
#define TERN_DEV_CAP_ETH_LRO		(1u << 6)	/* receive coalescing: TERN_PORT_F_LRO */
#define TERN_DEV_CAP_CLOCK		(1u << 7)	/* device clock: TERN_REG_CLOCK_* */
#define TERN_DEV_CAP_ETH_TS		(1u << 8)	/* frame timestamps: TERN_ETH_TXD_TS, */
							/* TERN_PORT_F_RX_TS (tern_hw.h) */

struct tern_cmd_query_device_out {
	__le32	fw_version;		/* as TERN_REG_FW_VERSION */
	__le32	caps;			/* TERN_DEV_CAP_* */
	char	serial[32];		/* NUL-terminated */
	char	board_id[16];		/* NUL-terminated */
	__u8	mac[6];			/* permanent MAC address */
	__le16	max_mtu;
	__le16	min_mtu;
	__u8	max_eqs;		/* EQ numbers are 0..max_eqs-1 */
	__u8	max_eth_txqs;
	__u8	max_eth_rxqs;
	__u8	num_msix;
	__u8	max_eq_log;
	__u8	max_eth_log;
	__le16	num_db_pages;		/* doorbell pages in BAR2, including page 0 */
	__le32	link_speed_mbps;	/* line rate of the port */
	__le16	max_eth_moder_period;	/* largest Ethernet queue moder_period_us (0: none) */
	__le16	max_eth_moder_frames;	/* largest Ethernet queue moder_frames */
	__le32	rsvd[7];
};

/* ---------------------------------------------------------------------------------------
 * SET_PORT: receive filter and MTU. Until the first SET_PORT the port accepts frames for the
 * permanent MAC address with the MTU at 1500.
 */
#define TERN_PORT_F_PROMISC		(1u << 0)	/* accept every destination MAC */
#define TERN_PORT_F_ALLMULTI		(1u << 1)	/* accept every multicast MAC */
#define TERN_PORT_F_LRO			(1u << 2)	/* coalesce TCP (TERN_DEV_CAP_ETH_LRO) */
#define TERN_PORT_F_RX_TS		(1u << 3)	/* timestamp every frame received */
							/* (TERN_DEV_CAP_ETH_TS): no coalescing */

struct tern_cmd_set_port_in {
	__le32	flags;			/* TERN_PORT_F_* */
	__le16	mtu;			/* min_mtu..max_mtu */
	__u8	mac[6];			/* unicast address to accept */
};

/* QUERY_PORT: no input. */
struct tern_cmd_query_port_out {
	__le32	flags;			/* as set by SET_PORT */
	__le32	link_up;		/* 1 when the carrier is up */
	__le32	link_speed_mbps;
	__le16	mtu;
	__u8	mac[6];
	__le32	rsvd[4];
};

/* QUERY_ETH_STATS: the MAC's counters since the last device reset. No input. */
struct tern_cmd_eth_stats_out {
	__le64	tx_frames;		/* frames put on the wire */
	__le64	tx_bytes;
	__le64	rx_frames;		/* frames delivered to an RX buffer */
	__le64	rx_bytes;
	__le64	rx_multicast;		/* delivered frames with a multicast destination */
	__le64	rx_broadcast;
	__le64	rx_filtered;		/* dropped: destination MAC not accepted */
	__le64	rx_oversize;		/* dropped: longer than the MTU allows, or the buffer */
	__le64	rx_runt;		/* dropped: shorter than an Ethernet header */
	__le64	rx_no_queue;		/* dropped: no RX queue, or the link is down */
	__le64	rx_dma_errors;		/* dropped: RX buffer unreachable */
	__le64	tx_bad_len;		/* not sent: descriptor length out of range */
	__le64	tx_dma_errors;		/* not sent: frame unreachable */
	__le64	eq_overflows;		/* events lost because an EQ was full */
	__le64	rx_csum_bad;		/* delivered flagged TERN_ETH_RXD_CSUM_BAD */
	__le64	tx_tso_segments;	/* frames made by TCP segmentation (in tx_frames too) */
	__le64	rx_lro_frames;		/* frames delivered in coalesced segments (in rx_frames) */
	__le64	rx_lro_segments;	/* coalesced segments of two frames or more */
	__le64	self_dma_dropped;	/* BAR writes made by the device's own DMA or MSI-X */
	__le64	db_ignored;		/* Ethernet doorbells ignored: no such queue, bad value */
	__le64	tx_timestamps;		/* frames sent with a timestamp (TERN_ETH_TXD_TS) */
	__le64	rx_timestamps;		/* frames delivered with one (TERN_PORT_F_RX_TS) */
};

/* ---------------------------------------------------------------------------------------
 * Wire fault injection: the port's transmitter damages frames on purpose, so that tests and
 * admins can exercise loss recovery. Each frame the port puts on the wire (Ethernet and RoCE
 * alike, or only RoCEv2 frames with TERN_WIRE_FAULT_F_ROCE_ONLY; never frames the port loops
 * back to itself) is, with the given probabilities in parts per million, independently:
 *   dropped     not sent (nothing else applies);
 *   corrupted   one bit after the Ethernet header (and 802.1Q tag) flipped, as a switch that
 *               damages a frame and recomputes its FCS would deliver it;
 *   duplicated  sent twice in a row;
 *   reordered   held back and sent right after the next frame; a frame still held when the
 *               transmitter goes idle (the end of a burst) is sent then.
 * The decisions come from a pseudo-random generator restarted from @seed by every
 * SET_WIRE_FAULTS, so a given seed and frame sequence damage the same frames. All
 * probabilities zero (the reset state) turn injection off. A device reset clears the setting
 * and the counters.
 */
#define TERN_WIRE_FAULT_PPM_MAX		1000000u
#define TERN_WIRE_FAULT_F_ROCE_ONLY	(1u << 0)	/* damage only UDP/4791 frames */

struct tern_wire_faults {
	__le32	drop_ppm;		/* 0..TERN_WIRE_FAULT_PPM_MAX each */
	__le32	corrupt_ppm;
	__le32	duplicate_ppm;
	__le32	reorder_ppm;
	__le32	flags;			/* TERN_WIRE_FAULT_F_* */
	__le32	rsvd;
	__le64	seed;
};

/* SET_WIRE_FAULTS: input struct tern_wire_faults (BAD_PARAM for a ppm above the maximum). */

/* QUERY_WIRE_FAULTS: no input. Counters are frames since the last device reset. */
struct tern_cmd_query_wire_faults_out {
	struct tern_wire_faults cfg;	/* as last set */
	__le64	frames;			/* frames offered to the wire (before injection) */
	__le64	dropped;
	__le64	corrupted;
	__le64	duplicated;
	__le64	reordered;
	__le64	rsvd[3];
};

/* ---------------------------------------------------------------------------------------
 * Event queues.
 */
#define TERN_EQ_F_CMD			(1u << 0)	/* receives TERN_EQE_CMD_COMPLETION */
#define TERN_EQ_F_ASYNC			(1u << 1)	/* receives LINK_CHANGE and FATAL */

struct tern_cmd_create_eq_in {
	struct tern_mem_desc mem;	/* the ring: 16 << log_depth bytes */
	__u8	log_depth;		/* TERN_EQ_MIN_LOG..max_eq_log */
	__u8	msix_vector;		/* < num_msix */
	__le16	flags;			/* TERN_EQ_F_*; each at most on one EQ */
	__le32	rsvd;
};	/* result: EQ number */

struct tern_cmd_destroy_eq_in {
	__le32	eqn;			/* BAD_STATE while queues still report to it */
};

/* ---------------------------------------------------------------------------------------
 * Ethernet queues.
 *
 * Event moderation (TERN_DEV_CAP_ETH_MODERATION; Documentation/hw/interface.rst, "Event
 * moderation"): with @moder_period_us > 0, the frame that would post the queue's event to an
 * armed queue starts a moderation instead; every frame the queue finishes from then on
 * counts (an RX frame written to a buffer, a TX frame whose descriptors all completed, a TSO
 * frame once), and the one event is posted when @moder_frames frames have counted (0: no
 * count bound) or @moder_period_us microseconds of device time after that first frame,
 * whichever comes first. @moder_period_us 0 means no moderation (the event at once) and then
 * @moder_frames must be 0 or 1. Limits: QUERY_DEVICE's max_eth_moder_period and
 * max_eth_moder_frames. Out of range: BAD_PARAM, syndrome the field's offset.
 */
struct tern_cmd_create_eth_queue_in {
	struct tern_mem_desc mem;	/* the ring: 16 << log_depth bytes */
	__u8	log_depth;		/* TERN_ETH_MIN_LOG..max_eth_log */
	__u8	rsvd0;
	__le16	eqn;			/* EQ for this queue's completion events */
	__le16	moder_period_us;	/* 0 without TERN_DEV_CAP_ETH_MODERATION */
	__le16	moder_frames;		/* 0 without TERN_DEV_CAP_ETH_MODERATION */
};	/* result: queue number */

struct tern_cmd_destroy_eth_queue_in {
	__le32	qid;
};

/*
 * MODIFY_ETH_TXQ / MODIFY_ETH_RXQ: new moderation bounds for a live queue. A moderation under
 * way takes them at once, measured from its start (0/0 posts its event now). BAD_RESOURCE
 * for a queue that does not exist.
 */
struct tern_cmd_modify_eth_queue_in {
	__le32	qid;
	__le16	moder_period_us;	/* 0..max_eth_moder_period */
	__le16	moder_frames;		/* 0..max_eth_moder_frames; 0 or 1 when the period is 0 */
	__le32	rsvd;
};

/*
 * SET_RSS (TERN_DEV_CAP_ETH_RSS; Documentation/hw/interface.rst, "Receive side scaling"):
 * which RX queue receives each Ethernet frame. For a frame of a type set in @hash_fields the
 * device computes the Toeplitz hash with @key over, in this order as on the wire: source and
 * destination IPv4 or IPv6 address, then, for the TCP and UDP types, source and destination
 * port (an IPv4 fragment and an IPv6 packet with an extension header hash the addresses
 * only, when the type's 2-tuple field is set). The frame goes to RX queue
 * @indir[hash % TERN_RSS_INDIR_SIZE]. Frames without a hash (not IP, or a type not set) go to
 * the lowest-numbered working RX queue, as before any SET_RSS; so does a frame whose entry
 * names a queue destroyed since. The hash is written into the RX descriptor
 * (TERN_ETH_RXD_HASH, struct tern_eth_rxd). @hash_fields 0 turns RSS off. Every entry must
 * name an existing RX queue: BAD_PARAM, syndrome the entry's offset. Unknown bits in
 * @hash_fields or @flags: BAD_PARAM. A device reset turns RSS off.
 */
#define TERN_RSS_KEY_SIZE		40
#define TERN_RSS_INDIR_SIZE		128

#define TERN_RSS_HASH_IPV4		(1u << 0)	/* IPv4: addresses */
#define TERN_RSS_HASH_TCP_IPV4		(1u << 1)	/* TCP over IPv4: addresses and ports */
#define TERN_RSS_HASH_UDP_IPV4		(1u << 2)
#define TERN_RSS_HASH_IPV6		(1u << 3)
#define TERN_RSS_HASH_TCP_IPV6		(1u << 4)
#define TERN_RSS_HASH_UDP_IPV6		(1u << 5)
#define TERN_RSS_HASH_ALL		0x3fu

struct tern_cmd_set_rss_in {
	__le32	hash_fields;		/* TERN_RSS_HASH_* */
	__le32	flags;			/* 0 */
	__u8	key[TERN_RSS_KEY_SIZE];
	__u8	indir[TERN_RSS_INDIR_SIZE];	/* RX queue numbers */
};

TERN_HW_ASSERT_SIZE(struct tern_cmd_nop_in, 16);
TERN_HW_ASSERT_SIZE(struct tern_cmd_query_device_out, 112);
TERN_HW_ASSERT_SIZE(struct tern_cmd_set_port_in, 12);
TERN_HW_ASSERT_SIZE(struct tern_cmd_query_port_out, 36);
TERN_HW_ASSERT_SIZE(struct tern_cmd_eth_stats_out, 176);
TERN_HW_ASSERT_SIZE(struct tern_wire_faults, 32);
TERN_HW_ASSERT_SIZE(struct tern_cmd_query_wire_faults_out, 96);
TERN_HW_ASSERT_SIZE(struct tern_cmd_create_eq_in, 24);
TERN_HW_ASSERT_SIZE(struct tern_cmd_destroy_eq_in, 4);
TERN_HW_ASSERT_SIZE(struct tern_cmd_create_eth_queue_in, 24);
TERN_HW_ASSERT_SIZE(struct tern_cmd_destroy_eth_queue_in, 4);
TERN_HW_ASSERT_SIZE(struct tern_cmd_modify_eth_queue_in, 12);
TERN_HW_ASSERT_SIZE(struct tern_cmd_set_rss_in, 176);

#endif /* TERN_CMD_H */
