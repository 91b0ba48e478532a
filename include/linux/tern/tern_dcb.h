/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * tern lossless RoCE: DCB (PFC, ETS, DSCP to priority), the MAC's PFC behaviour, ECN/CNP and
 * DCQCN congestion control. Firmware commands 0x0200..0x02ff and events 0x20..0x2f.
 *
 * Documentation/hw/dcb.rst (DCB, PFC, the MAC) and Documentation/hw/congestion.rst (ECN, CNP,
 * DCQCN) describe the behaviour for firmware and driver engineers. Every structure here is
 * little-endian; the device checks in_len exactly and that reserved fields are zero.
 */
#ifndef TERN_DCB_H
#define TERN_DCB_H

#include <linux/types.h>
#include "tern_hw.h"

#define TERN_NUM_PRIO			8	/* 802.1p priorities */
#define TERN_NUM_TC			8	/* traffic classes */
#define TERN_NUM_DSCP			64

/* ---------------------------------------------------------------------------------------
 * Classification. Every frame the port sends or receives has a priority 0..7:
 *  - a frame with an 802.1Q tag: the tag's PCP;
 *  - an untagged IPv4/IPv6 frame when @trust is TERN_DCB_TRUST_DSCP: dscp_prio[DSCP] if that
 *    entry is not TERN_DCB_DSCP_UNMAPPED, else @default_prio;
 *  - anything else: @default_prio.
 * A RoCE QP's frames are classified the same way from the headers the QP's path produces
 * (VLAN PCP = path.sl when tagged; DSCP = path.traffic_class >> 2). CNPs use cc.cnp_dscp and,
 * when tagged, cc.cnp_prio as PCP.
 */
#define TERN_DCB_TRUST_PCP		0
#define TERN_DCB_TRUST_DSCP		1
#define TERN_DCB_DSCP_UNMAPPED		0xff

/* Transmission selection of a traffic class (values as IEEE 802.1Qaz / dcbnl). */
#define TERN_DCB_TSA_STRICT		0
#define TERN_DCB_TSA_ETS		2

/*
 * struct tern_dcb_cfg: the port's DCB configuration, set whole by SET_DCB and read back by
 * QUERY_DCB. The reset state: PFC off, trust PCP, default_prio 0, every priority in TC 0,
 * every TC ETS with TC 0 at 100 %, dscp_prio all UNMAPPED, storm guard off, buffer
 * thresholds at the defaults below.
 *
 * PFC: a priority with its bit in @pfc_en is lossless. Received 802.1Qbb frames pause the
 * transmission of frames of that priority (RoCE and Ethernet) for the quanta they carry; a
 * pause for a priority not in @pfc_en is counted but not honoured. The receive side keeps
 * frames of a lossless priority it cannot deliver at once (no Ethernet RX descriptor) in a
 * receive buffer of @rx_buf_bytes per priority instead of refusing them; when a priority's
 * occupancy reaches @xoff_bytes the port sends XOFF (pause time 0xffff quanta) for it,
 * refreshed every half pause time while above @xon_bytes, and XON (time 0) once it falls to
 * @xon_bytes. A frame that finds the buffer full is dropped and counted (rx_discards).
 * Needs xon_bytes < xoff_bytes <= rx_buf_bytes <= TERN_DCB_MAX_RX_BUF.
 *
 * Storm guard (@pfc_storm_ms, 0 = off, else 10..60000): if the port has been sending XOFF for
 * one priority continuously for that long (its host does not drain the buffer), it stops
 * pausing that priority, drops what it cannot deliver, and reports TERN_EQE_PFC_STORM
 * (TERN_PFC_STORM_TX_PAUSE); it pauses again normally once the buffer has drained to
 * xon_bytes (event with data[1] = 0). If the port has been paused by its peer for one
 * priority continuously for that long, it ignores received pauses for that priority until
 * no pause has arrived for @pfc_storm_ms (TERN_PFC_STORM_RX_PAUSE, detected then recovered).
 *
 * ETS: @prio_tc maps priorities to traffic classes; @tc_tsa and @tc_bw (percent, ETS classes
 * sum to 100, strict classes 0) describe the transmission selection. The device validates
 * and keeps them and reports them in QUERY_DCB.
 */
#define TERN_DCB_MAX_RX_BUF		(1u << 20)
#define TERN_DCB_DEF_RX_BUF		(256u << 10)
#define TERN_DCB_DEF_XOFF		(160u << 10)
#define TERN_DCB_DEF_XON		(64u << 10)
#define TERN_DCB_STORM_MIN_MS		10
#define TERN_DCB_STORM_MAX_MS		60000

struct tern_dcb_cfg {
	__u8	pfc_en;			/* bit p: priority p is lossless */
	__u8	trust;			/* TERN_DCB_TRUST_* */
	__u8	default_prio;		/* 0..7 */
	__u8	rsvd0;
	__u8	prio_tc[TERN_NUM_PRIO];	/* 0..TERN_NUM_TC-1 */
	__u8	tc_tsa[TERN_NUM_TC];	/* TERN_DCB_TSA_* */
	__u8	tc_bw[TERN_NUM_TC];	/* percent */
	__u8	dscp_prio[TERN_NUM_DSCP];	/* 0..7 or TERN_DCB_DSCP_UNMAPPED */
	__le32	pfc_storm_ms;
	__le32	rx_buf_bytes;
	__le32	xoff_bytes;
	__le32	xon_bytes;
	__le32	rsvd1[4];
};

/* SET_DCB: input struct tern_dcb_cfg; BAD_PARAM (syndrome: byte offset) for a bad field. */
/* QUERY_DCB: no input; output struct tern_dcb_cfg as last set. */

/*
 * QUERY_PFC_STATS: per-priority MAC counters since the last device reset. No input.
 * Pause durations are the time the priority was paused (rx: by the peer; tx: by us), in
 * microseconds, including a pause still in progress.
 */
struct tern_pfc_prio_stats {
	__le64	rx_frames;		/* frames of this priority received (incl. dropped) */
	__le64	rx_bytes;
	__le64	tx_frames;		/* frames of this priority sent */
	__le64	tx_bytes;
	__le64	rx_pause;		/* PFC frames received with a non-zero time for it */
	__le64	rx_pause_duration_us;
	__le64	rx_pause_transition;	/* paused -> not paused transitions */
	__le64	tx_pause;		/* PFC frames sent with a non-zero time for it (XOFF) */
	__le64	tx_pause_duration_us;
	__le64	rx_discards;		/* dropped: receive buffer full, or storm guard */
	__le64	rsvd[2];
};

struct tern_cmd_pfc_stats_out {
	struct tern_pfc_prio_stats prio[TERN_NUM_PRIO];
	__le64	rx_pfc_frames;		/* all 802.1Qbb frames received */
	__le64	tx_pfc_frames;		/* all 802.1Qbb frames sent (XOFF, refresh and XON) */
	__le64	tx_pause_storm_events;	/* storm guard stopped our pausing (TX_PAUSE) */
	__le64	rx_pause_storm_events;	/* storm guard stopped honouring a peer (RX_PAUSE) */
	__le64	rsvd[4];
};

/* ---------------------------------------------------------------------------------------
 * Congestion control: ECN, CNP (notification point) and DCQCN (reaction point).
 *
 * Reaction point (RP), for QPs whose priority has its bit in @rp_en: data packets are sent
 * ECN-capable (ECT(0)) and the QP has a DCQCN rate limiter. It starts at the maximum rate
 * (rpg_max_rate, or the line rate when 0): not limited. On a CNP for the QP (at most one cut
 * per rate_reduce_monitor_period; later CNPs in the period only update alpha) the target rate
 * takes the current one, Rt = Rc, and the current rate is cut by Rc * alpha_fx / 2^rpg_gd,
 * where alpha_fx is alpha in 1/1024 units (initial_alpha_value at the QP's first CNP: one
 * that finds it not limited, which allocates its rate limiter); the result is never below
 * Rc * rpg_min_dec_fac / 100 nor below rpg_min_rate, and rate_to_set_on_first_cnp (when not
 * 0) replaces the result of a first CNP's cut.
 * Alpha: every dce_tcp_rtt microseconds, alpha_fx = alpha_fx * dce_tcp_g / 1024 plus
 * (1024 - dce_tcp_g) when a CNP arrived in that period. Increase: an event every
 * rpg_time_reset microseconds (timer stage) and every rpg_byte_reset bytes sent (byte stage,
 * 0 = off; both stages count the event that is being handled and restart at each cut);
 * with both stages below rpg_threshold: fast recovery Rc = (Rt + Rc) / 2; with one
 * at or above: additive increase Rt += rpg_ai_rate first; with both at or above: hyper
 * increase Rt += rpg_hai_rate * (min stage - rpg_threshold + 1). Rates are capped at the
 * maximum rate; a QP back at the maximum rate is no longer limited.
 *
 * Notification point (NP), for priorities with their bit in @np_en: a RoCE packet received
 * with ECN CE (both ECN bits set) is counted and, if the receiving QP has not sent a CNP in
 * the last min_time_between_cnps microseconds, answered with a CNP to the sending QP: BTH
 * opcode 0x81, BECN set, destination QP = the remote QPN, PSN 0, 16 reserved zero bytes,
 * ICRC; IP DSCP @cnp_dscp, not ECN-capable; VLAN PCP @cnp_prio when the QP's path is tagged.
 * A CNP received for a QP whose priority has no RP is counted in rp_cnp_ignored.
 */
struct tern_cc_params {
	__u8	rp_en;			/* priorities with DCQCN and ECN-capable data */
	__u8	np_en;			/* priorities whose CE packets produce CNPs */
	__u8	cnp_dscp;		/* 0..63, default 48 */
	__u8	cnp_prio;		/* 0..7, default 6 */
	__le32	min_time_between_cnps;	/* us, 0..4095, default 4 */
	__le32	rpg_time_reset;		/* us, 1..131071, default 300 */
	__le32	rpg_byte_reset;		/* bytes, 0..(1 << 30), default 32767 (0: no byte stage) */
	__le32	rpg_threshold;		/* stages, 1..31, default 1 */
	__le32	rpg_max_rate;		/* Mb/s, 0 (line rate) or 1..line rate, default 0 */
	__le32	rpg_ai_rate;		/* Mb/s, 1..line rate, default 5 */
	__le32	rpg_hai_rate;		/* Mb/s, 1..line rate, default 50 */
	__le32	rpg_gd;			/* 1..15, default 11 */
	__le32	rpg_min_dec_fac;	/* percent, 1..100, default 50 */
	__le32	rpg_min_rate;		/* Mb/s, 1..line rate, default 1 */
	__le32	rate_to_set_on_first_cnp;	/* Mb/s, 0 (off) or 1..line rate, default 0 */
	__le32	dce_tcp_g;		/* 1/1024 units, 0..1023, default 1019 */
	__le32	dce_tcp_rtt;		/* us, 1..131071, default 1 */
	__le32	rate_reduce_monitor_period;	/* us, 0..131071, default 4 */
	__le32	initial_alpha_value;	/* 1/1024 units, 0..1023, default 1023 */
	/* HPCC (see below); 0 in hpcc_max_stage, hpcc_eta, hpcc_ai_rate, hpcc_base_rtt: default */
	__u8	hpcc_en;		/* priorities with HPCC and INT (none in rp_en) */
	__u8	hpcc_max_stage;		/* 1..31, default 5 */
	__le16	hpcc_eta;		/* target utilisation, 1/1000, 500..1000, default 950 */
	__le32	hpcc_ai_rate;		/* Mb/s, 1..line rate, default 100: W_AI = rate * T */
	__le32	hpcc_base_rtt;		/* ns, TERN_CC_HPCC_BASE_RTT_MIN..MAX, default 12000: T */
	/*
	 * TIMELY (see below), from offset 76 where rsvd was: an input of
	 * TERN_CC_PARAMS_V1_LEN bytes (before TIMELY) reads as zeros here. 0 in any
	 * timely_* parameter but timely_en selects its default.
	 */
	__u8	timely_en;		/* priorities with TIMELY (none in rp_en or hpcc_en) */
	__u8	timely_hai_thresh;	/* N, 1..31, default 5: hyperactive increase */
	__le16	timely_alpha;		/* EWMA weight of a new RTT difference, 1/1024, 1..1024 */
	__le16	timely_beta;		/* multiplicative decrease, 1/1024, 1..1024 */
	__le16	rsvd0;
	__le32	timely_delta;		/* Mb/s, 1..line rate: additive increase step */
	__le32	timely_t_low;		/* ns, TERN_CC_TIMELY_RTT_MIN..MAX: below, rate += delta */
	__le32	timely_t_high;		/* ns, above t_low, ..MAX: above, the cut of T_high */
	__le32	timely_min_rtt;		/* ns, TERN_CC_TIMELY_RTT_MIN..MAX: the gradient's unit */
	__le32	timely_seg;		/* bytes, TERN_CC_TIMELY_SEG_MIN..MAX: one sample each */
	__le32	timely_min_rate;	/* Mb/s, 1..line rate: the rate is never cut below this */
	__le32	rsvd;
};

/* The input's length before TIMELY (offset 76 on were rsvd): still taken, read as zeros. */
#define TERN_CC_PARAMS_V1_LEN		offsetof(struct tern_cc_params, timely_en)

/* Defaults (the reset state): RP and NP off on every priority, ConnectX-like values. */
#define TERN_CC_DEF_CNP_DSCP		48
#define TERN_CC_DEF_CNP_PRIO		6
#define TERN_CC_DEF_MIN_TIME_CNPS	4
#define TERN_CC_DEF_TIME_RESET		300
#define TERN_CC_DEF_BYTE_RESET		32767
#define TERN_CC_DEF_THRESHOLD		1
#define TERN_CC_DEF_AI_RATE		5
#define TERN_CC_DEF_HAI_RATE		50
#define TERN_CC_DEF_GD			11
#define TERN_CC_DEF_MIN_DEC_FAC		50
#define TERN_CC_DEF_MIN_RATE		1
#define TERN_CC_DEF_TCP_G		1019
#define TERN_CC_DEF_TCP_RTT		1
#define TERN_CC_DEF_MONITOR_PERIOD	4
#define TERN_CC_DEF_INITIAL_ALPHA	1023
#define TERN_CC_DEF_HPCC_MAX_STAGE	5
#define TERN_CC_DEF_HPCC_ETA		950
#define TERN_CC_DEF_HPCC_AI_RATE	100
#define TERN_CC_DEF_HPCC_BASE_RTT	12000
#define TERN_CC_DEF_TIMELY_HAI_THRESH	5
#define TERN_CC_DEF_TIMELY_ALPHA	896	/* 0.875 */
#define TERN_CC_DEF_TIMELY_BETA		819	/* 0.8 */
#define TERN_CC_DEF_TIMELY_DELTA	40
#define TERN_CC_DEF_TIMELY_T_LOW	25000
#define TERN_CC_DEF_TIMELY_T_HIGH	100000
#define TERN_CC_DEF_TIMELY_MIN_RTT	12000
#define TERN_CC_DEF_TIMELY_SEG		16384
#define TERN_CC_DEF_TIMELY_MIN_RATE	100

/*
 * hpcc_base_rtt's range: 1 us (a rack) to 100 ms (any path an emulated or wide-area
 * deployment has; the INT timestamps are 32-bit ns, so deltas stay exact up to 4.29 s).
 */
#define TERN_CC_HPCC_BASE_RTT_MIN	1000
#define TERN_CC_HPCC_BASE_RTT_MAX	100000000

/* TIMELY's times (t_low, t_high, min_rtt): 1 us to 100 ms, as hpcc_base_rtt; its segment. */
#define TERN_CC_TIMELY_RTT_MIN		1000
#define TERN_CC_TIMELY_RTT_MAX		100000000
#define TERN_CC_TIMELY_SEG_MIN		1024
#define TERN_CC_TIMELY_SEG_MAX		(1u << 20)
#define TERN_CC_TIMELY_HAI_MAX		31

/*
 * HPCC (Li et al., SIGCOMM 2019), for QPs whose priority has its bit in @hpcc_en (never also
 * in @rp_en: BAD_PARAM). Their request packets carry an INT shim (below) that switches fill
 * with per-hop telemetry; the responder echoes the telemetry in its ACKs (when its own
 * @hpcc_en has the priority) and the requester computes a window W from it: utilisation U
 * (an EWMA over base RTT T of max over hops of qlen / (B * T) + txRate / B), a reference
 * window Wc updated once per RTT and tentative updates on every other ACK; W = Wc / (U /
 * eta) + W_AI when U >= eta or after hpcc_max_stage additive steps, else Wc + W_AI; W is at
 * most the line-rate BDP B * T. The QP keeps at most W bytes of request PSNs in flight and
 * is paced at W / T. A READ responder's QP is the data sender of its responses: they carry
 * the INT shim too, the requester sends their telemetry back in a RESP_ECHO, and the same
 * W and pacer apply to them. Documentation/hw/congestion.rst ("HPCC").
 */

/*
 * TIMELY (Mittal et al., SIGCOMM 2015), for RC QPs whose priority has its bit in @timely_en
 * (never also in @rp_en or @hpcc_en: BAD_PARAM). The requester times one segment at a time
 * (the new request packets sent since the sample opened, up to timely_seg bytes; the last of
 * them asks for an ACK) from its last packet's departure to the ACK or response that covers
 * it, on the device's clock; a resend of a PSN up to it voids the sample (Karn). Each sample
 * is a completion event: rtt_diff = (1 - alpha) rtt_diff + alpha (rtt - prev_rtt); gradient =
 * rtt_diff / min_rtt; rtt < t_low: rate += delta; rtt > t_high: rate *= 1 - beta (1 - t_high /
 * rtt); gradient <= 0: rate += N delta (N = timely_hai_thresh once that many events in a row
 * had a non-positive gradient, else 1); else rate *= 1 - beta gradient. The rate stays
 * within timely_min_rate..the line rate and drives the QP's pacer (below the line rate).
 * Documentation/hw/congestion.rst ("TIMELY").
 */

/*
 * In-band network telemetry (INT) on the wire. A request packet of an HPCC QP goes to UDP
 * port TERN_INT_UDP_DPORT instead of 4791, with an INT shim and 0..max_hops hop records
 * between the UDP header and the BTH; an ACK that echoes telemetry the same way with type
 * ECHO. READ response packets of an HPCC QP carry a REQUEST shim as well; the requester
 * returns their records in an ACK-opcode packet with type RESP_ECHO (its PSN the response's),
 * which is telemetry only: never an ACK of anything, and never sent to 4791. Switches append
 * a record to a REQUEST shim (types ECHO and RESP_ECHO are never touched). The ICRC
 * is that of the packet without the shim: computed as if the UDP destination port were
 * 4791 and the IP and UDP lengths did not count the shim and its records. A RoCE NIC that
 * does not know INT sees UDP to another port, never a malformed BTH. All fields big-endian.
 */
#define TERN_INT_UDP_DPORT		4792	/* a tern convention, not an IANA assignment */
#define TERN_INT_TYPE_REQUEST		1
#define TERN_INT_TYPE_ECHO		2
#define TERN_INT_TYPE_RESP_ECHO		3	/* requester -> READ responder: its responses' */
#define TERN_INT_F_OVERFLOW		0x01	/* a hop could not append (hop limit, MTU) */
#define TERN_INT_MAX_HOPS		5	/* max_hops the NIC asks for, and accepts */

struct tern_int_shim {
	__u8	type;			/* TERN_INT_TYPE_* */
	__u8	nhops;			/* records that follow, 0..max_hops */
	__u8	max_hops;		/* 1..TERN_INT_MAX_HOPS */
	__u8	flags;			/* TERN_INT_F_* */
	__be16	next_dport;		/* 4791: the RoCEv2 port the packet has without INT */
	__be16	rsvd;
};

struct tern_int_hop {
	__be32	ts_ns;			/* switch time the packet started to leave, mod 2^32 */
	__be32	tx_bytes;		/* egress port's line bytes sent so far, mod 2^32 */
	__be32	qlen;			/* bytes left in the packet's egress FIFO */
	__be32	rate_mbps;		/* egress link rate */
};

/* SET_CC_PARAMS: input struct tern_cc_params; BAD_PARAM (syndrome: byte offset). */
/* QUERY_CC_PARAMS: no input; output struct tern_cc_params as last set. */

#define TERN_BTH_OPCODE_CNP		0x81
#define TERN_BTH_BECN			0x40	/* in BTH byte 4 */

/* ---------------------------------------------------------------------------------------
 * Events (on the ASYNC EQ).
 */
/* subtype: enum tern_pfc_storm; data[0]: priority, data[1]: 1 detected, 0 recovered */
#define TERN_EQE_PFC_STORM		0x20
enum tern_pfc_storm {
	TERN_PFC_STORM_TX_PAUSE		= 1,	/* we paused the peer for too long */
	TERN_PFC_STORM_RX_PAUSE		= 2,	/* the peer paused us for too long */
};

/* 802.1Qbb frame (after the 14-byte Ethernet header, EtherType 0x8808). */
#define TERN_PFC_ETHERTYPE		0x8808
#define TERN_PFC_OPCODE			0x0101
#define TERN_PFC_DMAC			{ 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 }
#define TERN_PFC_QUANTUM_BITS		512	/* one pause quantum, in bit times */

TERN_HW_ASSERT_SIZE(struct tern_dcb_cfg, 124);
TERN_HW_ASSERT_SIZE(struct tern_pfc_prio_stats, 96);
TERN_HW_ASSERT_SIZE(struct tern_cmd_pfc_stats_out, 832);
TERN_HW_ASSERT_SIZE(struct tern_cc_params, 112);
TERN_HW_ASSERT_SIZE(struct tern_int_shim, 8);
TERN_HW_ASSERT_SIZE(struct tern_int_hop, 16);

#endif /* TERN_DCB_H */
