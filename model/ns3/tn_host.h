/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One simulated tern host for the ns-3 device (model/ns3): a model instance (model/lib: the
 * firmware, RoCEv2 transport, MAC with PFC, DCQCN) and the model's minimal host driver
 * (model/hostdrv) that works it through its command queue, EQs and RDMA queues, the way
 * tern-sim (model/fabric/sim.c) does. A plain C interface so that the C++ side includes no
 * driver or hardware header.
 *
 * Time and timers are the embedding's (struct tn_env): the model reads env->now_ns and arms
 * its one-shot timer with env->timer_arm; the embedding calls tn_host_timer() once that
 * deadline has passed. Every tn_host_*() / tn_flow_*() call that touches the model runs its
 * pending work, lets the host side reap completions and post more work, and then hands the
 * frames the NIC transmitted, in order, to env->tx (the embedding puts them on the wire).
 * None of the env callbacks may call back into this interface.
 *
 * A flow is one RC QP pair, sender -> receiver, over which the sender keeps @outstanding RDMA
 * WRITEs of @msg_bytes posted (into @slots destination slots of a receiver MR that cycle),
 * until it has completed @total_bytes (0: until its stop time). The sender's buffer and the
 * receiver's slots are filled from a per-flow pattern so that the data that landed can be
 * checked (tn_flow_data_ok).
 *
 * QP pairs are reused: each host keeps up to TN_MAX_FLOWS sending and TN_MAX_FLOWS receiving
 * ends (a QP with its CQ and buffer, or a QP with its destination slots). A flow takes a free
 * end at each host and connects the two (MODIFY_QP RESET -> INIT -> RTR -> RTS, fresh PSNs).
 * Once it has completed (or failed) and every WRITE it posted has completed, the next
 * tn_flow_create at either host, or tn_host_reclaim, gives its ends back: the data at the
 * receiving end is checked (tn_flow_data_ok keeps that result) and both QPs go to RESET.
 * So a host may send and receive any number of flows, TN_MAX_FLOWS at a time each way.
 */
#ifndef TERN_NS3_TN_HOST_H
#define TERN_NS3_TN_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TN_MAX_HOSTS		200	/* MAC ..:10+i, IP 192.168.100.(1+i) */
#define TN_MAX_FLOWS		128	/* QP pair ends per host, each way */

struct tn_env {
	void *ctx;
	uint64_t (*now_ns)(void *ctx);				/* the model's clock */
	void (*timer_arm)(void *ctx, uint64_t deadline_ns);	/* UINT64_MAX: cancel */
	void (*tx)(void *ctx, const void *frame, size_t len);	/* one frame to the wire */
};

/* DCQCN's parameters (struct tern_cc_params in include/linux/tern/tern_dcb.h, host order). */
struct tn_cc {
	uint8_t cnp_dscp, cnp_prio;
	uint32_t min_time_between_cnps, rpg_time_reset, rpg_byte_reset, rpg_threshold;
	uint32_t rpg_max_rate, rpg_ai_rate, rpg_hai_rate, rpg_gd, rpg_min_dec_fac, rpg_min_rate;
	uint32_t rate_to_set_on_first_cnp, dce_tcp_g, dce_tcp_rtt, rate_reduce_monitor_period;
	uint32_t initial_alpha_value;
};

struct tn_nic_params {
	uint32_t link_mbps;	/* the MAC's line rate (exact serialization) */
	uint8_t pfc_mask;	/* lossless priorities (SET_DCB pfc_en) */
	bool dcqcn;
	bool hpcc;		/* HPCC + INT on rp_en's priorities instead of DCQCN */
	bool timely;		/* TIMELY on rp_en's priorities instead of DCQCN (not with hpcc) */
	uint8_t rp_en, np_en;	/* CC priority masks when dcqcn */
	struct tn_cc cc;
};

/* tern-sim's defaults: 40 Gb/s, PFC and DCQCN on priority 3, the DCQCN paper's parameters. */
void tn_nic_params_default(struct tn_nic_params *p);
/* "name=value" for a struct tn_cc field (tern-sim's --cc); false if unknown or bad. */
bool tn_cc_set(struct tn_cc *c, const char *arg);

struct tn_host;

/* Host @idx (< TN_MAX_HOSTS) with its DCB (trust DSCP: 26 -> 3, 48 -> 6) and CC set up.
 * NULL if the device could not be brought up; dcb_ok/cc_ok report the two commands. */
struct tn_host *tn_host_create(unsigned int idx, const struct tn_nic_params *p,
			       const struct tn_env *env);
void tn_host_destroy(struct tn_host *h);
void tn_host_mac(const struct tn_host *h, uint8_t mac[6]);
bool tn_host_dcb_ok(const struct tn_host *h);
bool tn_host_cc_ok(const struct tn_host *h);
/* A frame from the wire (its last bit, now). False if the NIC could not take it. */
bool tn_host_rx(struct tn_host *h, const void *frame, size_t len);
/* The deadline given to env->timer_arm has passed. */
void tn_host_timer(struct tn_host *h);

struct tn_nic_stats {
	uint64_t rx_pause, tx_pause, rx_discards;	/* PFC, on the priority asked */
	uint64_t retrans, ack_timeouts, cnp_sent, np_ecn_rx, cnp_handled, cnp_ignored;
	uint64_t rate_cuts, rate_increases;
	uint64_t int_echo_acks, hpcc_updates;	/* HPCC: ACKs with an INT echo, Wc updates */
	uint64_t int_echoes_sent;	/* HPCC responder: ACKs that carried an echo */
	uint64_t timely_samples, timely_decreases, timely_increases;	/* TIMELY requester */
	bool pfc_ok, rdma_ok;		/* QUERY_PFC_STATS, QUERY_RDMA_STATS accepted */
};
void tn_host_stats(struct tn_host *h, unsigned int prio, struct tn_nic_stats *st);

struct tn_flow_params {
	uint8_t mtu;		/* IB path MTU code, 1..5 */
	uint8_t dscp;		/* traffic class DSCP (26: priority 3) */
	uint16_t sport;		/* RoCEv2 UDP source port (0: the driver's default) */
	uint32_t msg_bytes;	/* each WRITE, 1..1 MiB */
	unsigned int outstanding;	/* 1..32 */
	unsigned int slots;	/* 1..32 destination slots */
	uint64_t total_bytes;	/* stop after completing this many (0: no limit) */
	uint64_t stop_ns;	/* post nothing at or after this model time (UINT64_MAX: never) */
};
void tn_flow_params_default(struct tn_flow_params *fp);

struct tn_flow;

/* A connected QP pair @src -> @dst, its ends reused or made; nothing is posted before
 * tn_flow_start. NULL when a parameter is out of range or either host has all its ends of
 * that side bound to flows not over (TN_MAX_FLOWS), or no free end large enough and no host
 * memory for another (the fake host's 64 MiB data region: slots x msg_bytes rounded up to a
 * power of two on each side, and the rings). The flow belongs to @src (tn_host_destroy). */
struct tn_flow *tn_flow_create(struct tn_host *src, struct tn_host *dst,
			       const struct tn_flow_params *fp, unsigned int pattern_seed);
void tn_flow_start(struct tn_flow *fl);

struct tn_flow_stats {
	uint64_t posted, completed, errors;	/* WRITEs */
	uint64_t done_bytes;			/* completed successfully */
	uint64_t start_ns, finish_ns;		/* model time; finish 0 until total_bytes done */
	unsigned int first_error_status;
};
void tn_flow_stats(const struct tn_flow *fl, struct tn_flow_stats *st);
/* Completed and not failed: every slot completed at least once holds the sender's pattern,
 * and at least one did. */
bool tn_flow_data_ok(struct tn_flow *fl);
/* Give back the QP pair ends of this host's flows that are over (see above): both QPs to
 * RESET, the receiving end's data checked first. */
void tn_host_reclaim(struct tn_host *h);

struct tn_qp_stats {
	unsigned int tx_ends, rx_ends;	/* QPs created for flows: sending, receiving */
	unsigned int busy;		/* ends bound to a flow */
	unsigned int not_reset;		/* free ends whose QP QUERY_QP does not show in RESET */
	uint64_t flows_sent, flows_received;
	uint64_t binds;			/* flows bound to an end, both sides */
	uint64_t resets, reset_fails;	/* MODIFY_QP to RESET */
};
/* The ends' accounting; queries every free end's QP state. */
void tn_host_qp_stats(struct tn_host *h, struct tn_qp_stats *st);

/* DCQCN's current rate of the sending QP, Mb/s (QUERY_QP; 0: not limited, or unknown). */
uint32_t tn_flow_cc_rate(struct tn_flow *fl);

#ifdef __cplusplus
}
#endif

#endif /* TERN_NS3_TN_HOST_H */
