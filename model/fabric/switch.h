/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern fabric: a shared-buffer Ethernet switch model (no QEMU, no sockets, no clock of its
 * own), used by the virtual-time simulator (model/fabric/sim*), by the tern-switch process
 * that joins QEMU guests (model/fabric/tern-switch.c) and, from C++, by the ns-3 switch
 * (model/ns3/tern-ns3.cc).
 *
 * Ports are numbered 0..nports-1; port p is cabled to exactly one NIC. Forwarding learns
 * source MACs (broadcast/multicast and unknown destinations flood to every other port).
 * Each egress port has one FIFO per priority 0..7; the egress scheduler serves strict
 * priorities (@strict_mask) first, highest first, then the other priorities round robin, at
 * @link_mbps (or the port's own @port_mbps), and a frame reaches the NIC @delay_ns after its
 * last bit left the port. A frame
 * of L bytes (no FCS; at least 60 counted) occupies the line (L + 24) * 8 / link_mbps
 * (preamble, FCS, inter-frame gap), as in the NIC's MAC. host->deliver is called when its
 * first bit leaves, with the time its last bit reaches the NIC.
 *
 * Classification: an 802.1Q tag's PCP, else (a whole IPv4/IPv6 header) dscp_prio[DSCP]
 * (trust DSCP), else 0; frames are parsed by the NIC model's frame_parse() (model/lib/frame.h).
 * ECN: on enqueue to an egress FIFO of a priority in @ecn_mask, an ECN-capable IP packet (ECT0,
 * ECT1) is CE-marked with probability 0 below @kmin_bytes of that FIFO, rising linearly to
 * @pmax_ppm at @kmax_bytes, and 1 above @kmax_bytes (RED as DCQCN's CP; the IPv4 header
 * checksum is updated; the RoCE ICRC does not cover the ECN bits). A non-ECT packet is never
 * marked. With @ecn_at_dequeue the decision is taken instead when the packet leaves the FIFO,
 * on the bytes still queued behind it (as the HPCC simulator's switch does): the mark then
 * reflects the queue of that moment, not the one the packet found on arrival.
 * PFC: bytes are accounted to the ingress (port, priority) they arrived on until they leave
 * the switch. For a priority in @pfc_mask the switch sends an 802.1Qbb XOFF (0xffff quanta)
 * to the ingress port's NIC when that account reaches @xoff_bytes, refreshes it while above
 * @xon_bytes, and sends XON (0 quanta) when it falls to @xon_bytes. PFC frames received from a
 * NIC pause the switch's egress FIFO for that priority on that port (quanta at its rate);
 * like the NIC, the switch honours pauses only for priorities in @pfc_mask (others are
 * counted in pfc_rx). Pending PFC frames of a port go out before its next data frame, several
 * priorities coalesced into one frame; the refresh period is half the XOFF time.
 * Buffer: all FIFOs share @buffer_bytes; a frame occupies it from tsw_rx() until its
 * transmission starts. A frame that does not fit is dropped and counted in the egress FIFO's
 * drops (for a lossless priority that is a headroom failure, also counted in the ingress
 * port's lossless_drops). MAC control frames (EtherType 0x8808) are consumed by the switch,
 * never forwarded.
 * Routes (tsw_route_add): a static entry for a unicast MAC lists 1..TSW_MAX_ECMP egress
 * ports; a frame to that MAC leaves on one of them chosen by a hash of its flow, seeded with
 * @ecmp_seed: for UDP over IPv4/IPv6 (RoCEv2) the 5-tuple (source and destination address,
 * protocol, UDP source and destination port), else the two MAC addresses. A flow keeps its
 * path, so its frames stay in order. Routes win over learned addresses. With @no_flood a
 * frame to a group address or to a unicast MAC with neither a route nor a learned port is
 * dropped at ingress and counted (no_route) instead of flooded: a fabric with loops
 * (leaf-spine) routes every station and never floods.
 * INT (HPCC's telemetry, include/linux/tern/tern_dcb.h): for a priority in @int_mask, a RoCE frame
 * to UDP port TERN_INT_UDP_DPORT whose shim is a REQUEST with fewer records than its max_hops
 * gets one more 16-byte record appended after the last one on enqueue, if its IP packet
 * stays within @int_mtu bytes (IPv4 without options only); the IP and UDP lengths, the IPv4
 * header checksum and the UDP checksum (IPv4: 0; IPv6: recomputed) follow, and the frame
 * counts in the buffer with its record. The record is filled when the frame starts to leave
 * the egress port: the switch's time (ns, mod 2^32), the port's line bytes sent so far
 * including this frame (preamble, FCS and gap included, mod 2^32), the bytes left in its
 * egress FIFO behind it and the port's rate. A REQUEST that cannot take a record (hop limit,
 * @int_mtu) is forwarded with TERN_INT_F_OVERFLOW set and counted (int_overflows); every
 * other frame, ECHO shims included, is not touched. Off by default (@int_mask 0).
 */
#ifndef TERN_FABRIC_SWITCH_H
#define TERN_FABRIC_SWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TSW_MAX_PORTS		64
#define TSW_NUM_PRIO		8
#define TSW_MAX_ROUTES		1024
#define TSW_MAX_ECMP		16

struct tsw_config {
	unsigned int nports;		/* 1..TSW_MAX_PORTS */
	uint32_t link_mbps;		/* every port's rate, Mb/s ... */
	uint32_t port_mbps[TSW_MAX_PORTS];	/* ... but these ports' where not 0 */
	uint64_t delay_ns;		/* propagation delay switch -> NIC on every link */
	uint32_t buffer_bytes;		/* shared packet buffer */
	uint8_t pfc_mask;		/* lossless priorities */
	uint8_t ecn_mask;		/* priorities with RED/ECN marking */
	uint8_t strict_mask;		/* priorities served before the others (e.g. CNPs on 6) */
	uint32_t xoff_bytes, xon_bytes;	/* per ingress (port, priority) */
	uint32_t kmin_bytes, kmax_bytes;	/* per egress FIFO */
	uint32_t pmax_ppm;		/* marking probability at kmax, parts per million */
	uint8_t dscp_prio[64];
	uint64_t seed;			/* RED's random generator */
	bool ecn_at_dequeue;		/* mark on dequeue instead of enqueue (default false) */
	bool no_flood;			/* drop what would flood (default false: flood) */
	uint32_t ecmp_seed;		/* this switch's ECMP hash seed (default 0) */
	uint8_t int_mask;		/* priorities with INT hop records (default 0: none) */
	uint32_t int_mtu;		/* largest IP packet INT may grow a frame to (9000) */
};

/* Fill @cfg with the documented defaults (Documentation/fabric.rst) for @nports ports. */
void tsw_config_default(struct tsw_config *cfg, unsigned int nports);

struct tsw_host {
	void *opaque;
	/* A frame leaves the switch on @port; it must reach that port's NIC at @arrive_ns. */
	void (*deliver)(void *opaque, unsigned int port, const void *frame, size_t len,
			uint64_t arrive_ns);
	uint64_t (*now_ns)(void *opaque);
	/* One-shot timer: call tsw_timer() once now >= @deadline_ns (UINT64_MAX: cancel). */
	void (*timer_arm)(void *opaque, uint64_t deadline_ns);
};

struct tsw;

struct tsw *tsw_create(const struct tsw_config *cfg, const struct tsw_host *host);
void tsw_destroy(struct tsw *sw);
/* A frame (destination MAC first, no FCS) arrived on @port (its last bit, now). */
void tsw_rx(struct tsw *sw, unsigned int port, const void *frame, size_t len);
/* The deadline given to timer_arm has passed: transmit, refresh pauses, re-arm. */
void tsw_timer(struct tsw *sw);
/* Frames to unicast @mac leave on one of @ports[0..@nports-1] (ECMP), replacing an earlier
 * route for @mac. False (nothing changed) for a group address, no port or more than
 * TSW_MAX_ECMP, a port out of range, or a full table (TSW_MAX_ROUTES). */
bool tsw_route_add(struct tsw *sw, const uint8_t mac[6], const unsigned int *ports,
		   unsigned int nports);

struct tsw_queue_stats {
	uint64_t enq_frames, enq_bytes;
	uint64_t deq_frames, deq_bytes;
	uint64_t drops;			/* buffer full */
	uint64_t ecn_marked;
	uint64_t max_bytes;		/* high-water mark of this egress FIFO */
	uint64_t paused_ns;		/* time this FIFO was paused by the NIC's PFC */
};

struct tsw_port_stats {
	struct tsw_queue_stats q[TSW_NUM_PRIO];	/* egress FIFOs */
	uint64_t rx_frames, rx_bytes;
	uint64_t pfc_xoff_sent[TSW_NUM_PRIO];	/* XOFF and refreshes sent to the NIC */
	uint64_t pfc_xon_sent[TSW_NUM_PRIO];
	uint64_t pfc_rx[TSW_NUM_PRIO];		/* PFC frames from the NIC pausing this priority */
	uint64_t lossless_drops;		/* lossless priority drops (headroom failure) */
	uint64_t no_route;			/* dropped at ingress: nowhere to go (no_flood) */
	uint64_t int_hops_added;		/* INT records this egress port filled in */
	uint64_t int_overflows;			/* INT requests it could not add a record to */
};

/* Current depth (bytes) of egress FIFO (@port, @prio), for sampling. */
uint64_t tsw_queue_bytes(const struct tsw *sw, unsigned int port, unsigned int prio);
void tsw_port_stats(const struct tsw *sw, unsigned int port, struct tsw_port_stats *out);
/* All ports' counters and the configuration as one JSON object. */
void tsw_dump_json(const struct tsw *sw, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* TERN_FABRIC_SWITCH_H */
