/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ethernet frames as the NIC model (mac.c, rdma_wire.c, wire.c) and the fabric's switch model
 * (model/fabric/switch.c) see them: the header constants and the one parser that classifies a
 * frame (802.1Q tag, IPv4/IPv6, traffic class, UDP, RoCEv2).
 *
 * Every frame is hostile input: frame_parse() reads no byte at or beyond @len and reports only
 * what the bytes present hold; each offset it gives comes with the guarantee written beside it.
 * It judges no more than classification needs: the IPv4 checksum, fragments, lengths beyond
 * the headers and the BTH are the RoCE receive path's to check (rdma_wire.c).
 *
 * The PFC frame's constants (EtherType, opcode, address, quantum) are the NIC's interface, in
 * include/linux/tern/tern_dcb.h; the RoCEv2 UDP port is in include/linux/tern/tern_rdma.h.
 */
#ifndef TERN_MODEL_FRAME_H
#define TERN_MODEL_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/tern/tern_dcb.h>
#include <linux/tern/tern_rdma.h>

#define FRAME_ETH_HLEN		14	/* destination, source, EtherType */
#define FRAME_VLAN_HLEN		4	/* an 802.1Q tag: TPID, PCP/DEI/VID */
#define FRAME_ETH_ZLEN		60	/* the shortest frame, without its FCS */
#define FRAME_LINE_OVERHEAD	24	/* preamble and SFD 8, FCS 4, inter-frame gap 12 */
#define FRAME_ETH_P_IP		0x0800
#define FRAME_ETH_P_8021Q	0x8100
#define FRAME_ETH_P_IPV6	0x86dd
#define FRAME_IPPROTO_TCP	6
#define FRAME_IPPROTO_UDP	17
#define FRAME_IPV4_HLEN		20	/* without options */
#define FRAME_IPV6_HLEN		40
#define FRAME_UDP_HLEN		8
/* an 802.1Qbb frame: header, opcode, priority-enable vector, a pause time per priority */
#define FRAME_PFC_LEN		(FRAME_ETH_HLEN + 2 + 2 + 2 * TERN_NUM_PRIO)
#define FRAME_PFC_XOFF_QUANTA	0xffff	/* the longest pause a PFC frame can ask for */

struct frame_info {
	uint16_t ethertype;	/* after a whole 802.1Q tag; 0 if shorter than FRAME_ETH_HLEN */
	bool vlan;		/* a whole 802.1Q tag (the frame holds its 4 bytes) */
	uint8_t pcp;		/* its priority code point (vlan) */
	size_t l3;		/* where the network header starts: FRAME_ETH_HLEN, + 4 if vlan */
	/*
	 * 4 or 6 when the EtherType is IPv4/IPv6, the version field agrees and the frame holds
	 * the first two bytes of the IP header (those of the traffic class); else 0.
	 */
	uint8_t ipver;
	uint8_t tclass;		/* IPv4 DS field, IPv6 traffic class: DSCP << 2 | ECN */
	/*
	 * The whole IP header is in the frame: IPv4 with IHL >= 5 and IHL * 4 bytes from l3,
	 * or the 40 bytes of IPv6 (ipver is then set).
	 */
	bool ip_whole;
	/*
	 * When ip_whole: where the IP payload starts (l3 + IHL * 4, IPv6: l3 + 40; the frame
	 * may end there) and its protocol (IPv6: the next header, an extension header included).
	 * Else both 0.
	 */
	size_t l4;
	uint8_t proto;
	/*
	 * Offset of the UDP header, 0 if none: IP protocol (IPv6 next header) UDP, the fixed IP
	 * header in the frame, and the 8 bytes of a UDP header after IHL * 4 (IPv6: 40) bytes.
	 * IHL is not judged here (the RoCE receive path drops IHL < 5).
	 */
	size_t udp;
	bool roce;		/* udp, to destination port TERN_ROCE_UDP_DPORT (RoCEv2) */
	bool intp;		/* udp, to TERN_INT_UDP_DPORT: RoCEv2 with an INT shim */
};

static inline uint16_t frame_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The Internet checksum (RFC 1071): one's complement sums of big-endian 16-bit words. */
static inline uint16_t frame_csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/*
 * Adds @n bytes at @p to the running sum @s; an odd last byte counts as its word's high half.
 * Whole 8-byte blocks are summed as native 64-bit words with the carries added back in
 * (RFC 1071: the one's complement sum does not depend on byte order, so the folded native
 * sum, byte-swapped on a little-endian host, is the big-endian one), eight times fewer steps
 * than word by word; the tail goes word by word. Fold the result with frame_csum_fold().
 */
static inline uint32_t frame_csum_add(uint32_t s, const uint8_t *p, size_t n)
{
	if (n >= 16) {
		uint64_t acc = 0, v;
		uint32_t f;

		while (n >= 8) {
			memcpy(&v, p, 8);
			acc += v;
			acc += acc < v;		/* the end-around carry */
			p += 8;
			n -= 8;
		}
		acc = (acc & 0xffffffffu) + (acc >> 32);
		acc = (acc & 0xffffffffu) + (acc >> 32);
		f = frame_csum_fold((uint32_t)(acc & 0xffff) + (uint32_t)(acc >> 16));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		f = ((f & 0xff) << 8) | (f >> 8);
#endif
		s = frame_csum_fold(s) + f;
	}
	while (n >= 2) {
		s += frame_be16(p);
		p += 2;
		n -= 2;
		if (s & 0x80000000u)
			s = (s & 0xffff) + (s >> 16);
	}
	if (n)
		s += (uint32_t)p[0] << 8;
	return s;
}

static inline bool frame_ipv4_csum_ok(const uint8_t *ip, size_t ihl)
{
	return frame_csum_fold(frame_csum_add(0, ip, ihl)) == 0xffff;
}

/* (Re)writes the checksum of the IPv4 header at @ip, @ihl bytes long. */
static inline void frame_ipv4_csum_set(uint8_t *ip, size_t ihl)
{
	uint16_t c;

	ip[10] = ip[11] = 0;
	c = (uint16_t)~frame_csum_fold(frame_csum_add(0, ip, ihl));
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
}

static inline void frame_parse(const uint8_t *f, size_t len, struct frame_info *p)
{
	size_t o = FRAME_ETH_HLEN, u;

	*p = (struct frame_info){ .l3 = FRAME_ETH_HLEN };
	if (len < FRAME_ETH_HLEN)
		return;
	p->ethertype = frame_be16(f + 12);
	if (p->ethertype == FRAME_ETH_P_8021Q && len >= FRAME_ETH_HLEN + FRAME_VLAN_HLEN) {
		p->vlan = true;
		p->pcp = f[14] >> 5;
		p->ethertype = frame_be16(f + 16);
		o += FRAME_VLAN_HLEN;
		p->l3 = o;
	}
	if (len < o + 2)
		return;
	if (p->ethertype == FRAME_ETH_P_IP && f[o] >> 4 == 4) {
		p->ipver = 4;
		p->tclass = f[o + 1];
		if (len < o + FRAME_IPV4_HLEN)
			return;
		u = o + (size_t)(f[o] & 0x0f) * 4;
		p->ip_whole = u >= o + FRAME_IPV4_HLEN && len >= u;
		if (p->ip_whole) {
			p->l4 = u;
			p->proto = f[o + 9];
		}
		if (f[o + 9] != FRAME_IPPROTO_UDP)
			return;
	} else if (p->ethertype == FRAME_ETH_P_IPV6 && f[o] >> 4 == 6) {
		p->ipver = 6;
		p->tclass = (uint8_t)((f[o] & 0x0f) << 4 | f[o + 1] >> 4);
		if (len < o + FRAME_IPV6_HLEN)
			return;
		p->ip_whole = true;
		u = o + FRAME_IPV6_HLEN;
		p->l4 = u;
		p->proto = f[o + 6];
		if (f[o + 6] != FRAME_IPPROTO_UDP)
			return;
	} else {
		return;
	}
	if (len < u + FRAME_UDP_HLEN)
		return;
	p->udp = u;
	p->roce = frame_be16(f + u + 2) == TERN_ROCE_UDP_DPORT;
	p->intp = frame_be16(f + u + 2) == TERN_INT_UDP_DPORT;
}

#endif /* TERN_MODEL_FRAME_H */
