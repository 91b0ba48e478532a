/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Network byte order, the Internet checksum word by word, and a RoCEv2 decoder with its own
 * ICRC: the host unit tests' and the fuzzers' own code, independent of the model's
 * (lib/frame.h), which they check it against.
 */
#ifndef TERN_HOSTDRV_ROCE_H
#define TERN_HOSTDRV_ROCE_H

#include <linux/tern/tern_dcb.h>
#include <linux/tern/tern_rdma.h>

#include "wire.h"

/* Network byte order, and the Internet checksum word by word (the model's frame.h: eight
 * bytes at a time). */
static inline uint16_t rd16be(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t rd32be(const uint8_t *p)
{
	return (uint32_t)rd16be(p) << 16 | rd16be(p + 2);
}

static inline void wr16be(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void wr32be(uint8_t *p, uint32_t v)
{
	wr16be(p, (uint16_t)(v >> 16));
	wr16be(p + 2, (uint16_t)v);
}

/* Adds @n bytes at @p to the one's complement sum @s (an odd last byte as a high half). */
static inline uint32_t ref_sum(uint32_t s, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2) {
		s += (uint32_t)p[i] << 8 | p[i + 1];
		if (s >> 24)
			s = (s & 0xffff) + (s >> 16);
	}
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static inline uint16_t ref_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* ---- RoCEv2 decoder -------------------------------------------------------------------------- */
struct pkt {
	bool ok;		/* parsed as RoCEv2 */
	const char *why;	/* when not ok */
	uint8_t dmac[6], smac[6];
	bool vlan;
	uint16_t vid;
	uint8_t pcp;
	uint16_t ethertype;
	uint8_t ipver;
	uint8_t tclass, ttl;
	uint32_t flow_label;
	uint8_t sip[16], dip[16];	/* IPv4 as IPv4-mapped IPv6 */
	bool ip_csum_ok;
	uint16_t ip_len;
	uint16_t sport, dport, udp_len;
	/* INT (UDP port TERN_INT_UDP_DPORT): the shim and its records, between UDP and BTH */
	bool has_int;
	uint8_t int_type, int_nhops, int_max_hops, int_flags;
	uint16_t int_next_dport;
	size_t int_len;		/* shim and records */
	struct {
		uint32_t ts, tx_bytes, qlen, rate_mbps;
	} int_hop[TERN_INT_MAX_HOPS];
	uint8_t opcode;
	bool se, ackreq;
	uint8_t padcnt, tver;
	uint16_t pkey;
	uint8_t bth4;		/* FECN/BECN/resv byte */
	uint32_t dqpn, psn;
	bool has_reth, has_aeth, has_imm;
	bool has_sph;		/* selective repeat's SEND placement header */
	uint32_t sph_rord, sph_off;
	uint64_t va;
	uint32_t rkey, dma_len;
	uint8_t syndrome;
	uint32_t msn;
	uint32_t imm;
	bool has_atomic_eth, has_atomic_ack;
	uint64_t swap_add, compare;	/* AtomicETH (va, rkey above) */
	uint64_t orig;		/* AtomicAckETH */
	bool has_ieth;		/* SEND_LAST/ONLY_WITH_INVALIDATE */
	uint32_t ieth;		/* the R_Key to invalidate */
	bool has_deth;		/* UD */
	uint32_t qkey, src_qp;	/* DETH */
	const uint8_t *payload;
	size_t payload_len;	/* without pad */
	uint32_t icrc_wire, icrc_calc;
};

/* BTH opcodes (RC) */
enum {
	OP_SEND_FIRST = 0x00, OP_SEND_MIDDLE, OP_SEND_LAST, OP_SEND_LAST_IMM, OP_SEND_ONLY,
	OP_SEND_ONLY_IMM, OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST, OP_WRITE_LAST_IMM,
	OP_WRITE_ONLY, OP_WRITE_ONLY_IMM, OP_READ_REQ, OP_READ_RESP_FIRST, OP_READ_RESP_MIDDLE,
	OP_READ_RESP_LAST, OP_READ_RESP_ONLY, OP_ACK, OP_ATOMIC_ACK, OP_CMP_SWAP, OP_FETCH_ADD,
	OP_SEND_LAST_INV = 0x16, OP_SEND_ONLY_INV = 0x17,
	OP_UD_SEND_ONLY = 0x64, OP_UD_SEND_ONLY_IMM = 0x65,
	OP_CNP = 0x81,		/* congestion notification: BTH, 16 reserved bytes */
	/* selective repeat (include/linux/tern/tern_rdma.h, TERN_BTH_OPCODE_SR_*) */
	OP_SR_WRITE_MIDDLE = 0xc0, OP_SR_WRITE_LAST, OP_SR_WRITE_LAST_IMM, OP_SR_SEND_MIDDLE,
	OP_SR_SEND_LAST, OP_SR_SEND_LAST_IMM, OP_SR_SEND_LAST_INV,
	OP_SR_STD = 0x100,	/* pkt_parse: an SR opcode whose headers are set */
};

uint32_t crc32_ieee(uint32_t crc, const void *buf, size_t len);
/* RoCEv2, with or without an INT shim (its ICRC: that of the packet without the shim). */
bool pkt_parse(const uint8_t *frame, size_t len, struct pkt *p);
/* Recompute the ICRC of a frame in place (after a test edited it). */
void pkt_fix_icrc(uint8_t *frame, size_t len);
void pkt_fix_ipv4_csum(uint8_t *frame, size_t len);
/* How many logged frames in @dir have BTH opcode @op (-1: any RoCE). */
unsigned int wire_count(const struct wire *w, unsigned int dir, int op);

#endif /* TERN_HOSTDRV_ROCE_H */
