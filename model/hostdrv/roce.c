/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The independent RoCEv2 decoder (roce.h). */
#include <stdlib.h>

#include "roce.h"

/* ---- RoCEv2 decoder -------------------------------------------------------------------------- */

uint32_t crc32_ieee(uint32_t crc, const void *buf, size_t len)
{
	static uint32_t table[256];
	const uint8_t *p = buf;
	size_t i;

	if (!table[1]) {
		uint32_t k, r;
		int b;

		for (k = 0; k < 256; k++) {
			r = k;
			for (b = 0; b < 8; b++)
				r = (r & 1) ? (r >> 1) ^ 0xedb88320u : r >> 1;
			table[k] = r;
		}
	}
	crc = ~crc;
	for (i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static uint16_t ip_csum(const uint8_t *h, size_t n)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += rd16be(h + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* ICRC over the masked IP/UDP/BTH headers and the rest of the UDP payload before the ICRC. */
static uint32_t icrc_calc(const uint8_t *ip, unsigned int ipver, const uint8_t *icrc_at)
{
	static const uint8_t ff[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	size_t iph = ipver == 4 ? 20 : 40;
	uint8_t hdr[40 + 8 + 12];
	uint32_t crc;

	memcpy(hdr, ip, iph + 8 + 12);
	if (ipver == 4) {
		hdr[1] = 0xff;		/* TOS */
		hdr[8] = 0xff;		/* TTL */
		hdr[10] = 0xff;		/* header checksum */
		hdr[11] = 0xff;
	} else {
		hdr[0] |= 0x0f;		/* traffic class and flow label */
		hdr[1] = 0xff;
		hdr[2] = 0xff;
		hdr[3] = 0xff;
		hdr[7] = 0xff;		/* hop limit */
	}
	hdr[iph + 6] = 0xff;		/* UDP checksum */
	hdr[iph + 7] = 0xff;
	hdr[iph + 8 + 4] = 0xff;	/* BTH FECN/BECN/resv8a */
	crc = crc32_ieee(0, ff, 8);
	crc = crc32_ieee(crc, hdr, iph + 8 + 12);
	return crc32_ieee(crc, ip + iph + 8 + 12, (size_t)(icrc_at - (ip + iph + 8 + 12)));
}

/* The INT shim at @s (before the ICRC at @end): type, counts, records. */
static bool int_parse(struct pkt *p, const uint8_t *s, const uint8_t *end)
{
	unsigned int i;

	p->why = "INT shim";
	if (end - s < 8 + 12)
		return false;
	p->has_int = true;
	p->int_type = s[0];
	p->int_nhops = s[1];
	p->int_max_hops = s[2];
	p->int_flags = s[3];
	p->int_next_dport = rd16be(s + 4);
	if (p->int_nhops > p->int_max_hops || p->int_max_hops > TERN_INT_MAX_HOPS ||
	    rd16be(s + 6))
		return false;
	p->int_len = 8 + 16 * (size_t)p->int_nhops;
	if ((size_t)(end - s) < p->int_len + 12)
		return false;
	for (i = 0; i < p->int_nhops; i++) {
		p->int_hop[i].ts = rd32be(s + 8 + 16 * i);
		p->int_hop[i].tx_bytes = rd32be(s + 12 + 16 * i);
		p->int_hop[i].qlen = rd32be(s + 16 + 16 * i);
		p->int_hop[i].rate_mbps = rd32be(s + 20 + 16 * i);
	}
	return true;
}

/* The ICRC of the packet at @ip as it is without its INT shim (port 4791, lengths less it). */
static uint32_t icrc_without_int(const uint8_t *ip, const struct pkt *p, const uint8_t *end)
{
	size_t iph = p->ipver == 4 ? 20 : 40, rest = (size_t)(end - ip) - iph - 8 - p->int_len;
	uint8_t *c = malloc(iph + 8 + rest);
	uint16_t ulen = (uint16_t)(p->udp_len - p->int_len);
	uint32_t crc;

	if (!c)
		return 0;
	memcpy(c, ip, iph + 8);
	memcpy(c + iph + 8, ip + iph + 8 + p->int_len, rest);
	c[iph + 2] = TERN_ROCE_UDP_DPORT >> 8;
	c[iph + 3] = TERN_ROCE_UDP_DPORT & 0xff;
	c[iph + 4] = (uint8_t)(ulen >> 8);
	c[iph + 5] = (uint8_t)ulen;
	if (p->ipver == 4) {
		c[2] = (uint8_t)((ulen + 20) >> 8);
		c[3] = (uint8_t)(ulen + 20);
	} else {
		c[4] = (uint8_t)(ulen >> 8);
		c[5] = (uint8_t)ulen;
	}
	crc = icrc_calc(c, p->ipver, c + iph + 8 + rest);
	free(c);
	return crc;
}

/* Ethernet and an optional 802.1Q tag; *@off: where the IP header starts. */
static bool l2_parse(const uint8_t *fr, size_t len, struct pkt *p, size_t *off)
{
	p->why = "short";
	if (len < 14)
		return false;
	memcpy(p->dmac, fr, 6);
	memcpy(p->smac, fr + 6, 6);
	p->ethertype = rd16be(fr + 12);
	*off = 14;
	if (p->ethertype == 0x8100) {
		if (len < 18)
			return false;
		p->vlan = true;
		p->pcp = fr[14] >> 5;
		p->vid = rd16be(fr + 14) & 0xfff;
		p->ethertype = rd16be(fr + 16);
		*off = 18;
	}
	return true;
}

/* @room: the bytes of the frame from @ip on. */
static bool ipv4_parse(const uint8_t *ip, size_t room, struct pkt *p)
{
	p->ipver = 4;
	if (room < 20 || ip[0] != 0x45) {
		p->why = "IPv4 header";
		return false;
	}
	p->tclass = ip[1];
	p->ip_len = rd16be(ip + 2);
	p->ttl = ip[8];
	p->ip_csum_ok = ip_csum(ip, 20) == 0;
	if (ip[9] != 17) {
		p->why = "not UDP";
		return false;
	}
	memset(p->sip, 0, 16);
	p->sip[10] = p->sip[11] = 0xff;
	memcpy(p->sip + 12, ip + 12, 4);
	memset(p->dip, 0, 16);
	p->dip[10] = p->dip[11] = 0xff;
	memcpy(p->dip + 12, ip + 16, 4);
	if (p->ip_len > room) {
		p->why = "IPv4 length";
		return false;
	}
	return true;
}

static bool ipv6_parse(const uint8_t *ip, size_t room, struct pkt *p)
{
	p->ipver = 6;
	if (room < 40 || ip[0] >> 4 != 6) {
		p->why = "IPv6 header";
		return false;
	}
	p->tclass = (uint8_t)((ip[0] & 0xf) << 4 | ip[1] >> 4);
	p->flow_label = (uint32_t)(ip[1] & 0xf) << 16 | rd16be(ip + 2);
	p->ip_len = (uint16_t)(rd16be(ip + 4) + 40);
	p->ttl = ip[7];
	p->ip_csum_ok = true;
	if (ip[6] != 17) {
		p->why = "not UDP";
		return false;
	}
	memcpy(p->sip, ip + 8, 16);
	memcpy(p->dip, ip + 24, 16);
	if (p->ip_len > room) {
		p->why = "IPv6 length";
		return false;
	}
	return true;
}

/* UDP to the RoCEv2 or the INT port, long enough for a BTH and an ICRC. */
static bool udp_parse(const uint8_t *udp, size_t iph, struct pkt *p)
{
	p->sport = rd16be(udp);
	p->dport = rd16be(udp + 2);
	p->udp_len = rd16be(udp + 4);
	if (p->dport != TERN_ROCE_UDP_DPORT && p->dport != TERN_INT_UDP_DPORT) {
		p->why = "UDP port";
		return false;
	}
	if (p->udp_len != p->ip_len - iph || p->udp_len < 8 + 12 + 4) {
		p->why = "UDP length";
		return false;
	}
	return true;
}

static void bth_parse(const uint8_t *bth, struct pkt *p)
{
	p->opcode = bth[0];
	p->se = bth[1] & 0x80;
	p->padcnt = (bth[1] >> 4) & 3;
	p->tver = bth[1] & 0xf;
	p->pkey = rd16be(bth + 2);
	p->bth4 = bth[4];
	p->dqpn = rd32be(bth + 4) & 0xffffff;
	p->ackreq = bth[8] & 0x80;
	p->psn = rd32be(bth + 8) & 0xffffff;
}

/* Which extension headers follow the BTH of p->opcode (the has_* flags); false: unknown. */
static bool ext_select(struct pkt *p)
{
	unsigned int op;

	/* UC: 0x20 | the RC opcode of a SEND or WRITE, with the same headers */
	op = (p->opcode & 0xe0) == 0x20 && (p->opcode & 0x1f) <= OP_WRITE_ONLY_IMM ?
	     p->opcode & 0x1f : p->opcode;
	/* selective repeat's MIDDLE/LAST: RETH or SPH, then ImmDt or IETH (rdma.rst) */
	if (op >= OP_SR_WRITE_MIDDLE && op <= OP_SR_SEND_LAST_INV) {
		p->has_reth = op <= OP_SR_WRITE_LAST_IMM;
		p->has_sph = !p->has_reth;
		p->has_imm = op == OP_SR_WRITE_LAST_IMM || op == OP_SR_SEND_LAST_IMM;
		p->has_ieth = op == OP_SR_SEND_LAST_INV;
		op = OP_SR_STD;		/* none of the cases below */
	}
	switch (op) {
	case OP_WRITE_FIRST:
	case OP_WRITE_ONLY:
	case OP_WRITE_ONLY_IMM:
	case OP_READ_REQ:
		p->has_reth = true;
		break;
	case OP_READ_RESP_FIRST:
	case OP_READ_RESP_LAST:
	case OP_READ_RESP_ONLY:
	case OP_ACK:
		p->has_aeth = true;
		break;
	case OP_ATOMIC_ACK:
		p->has_aeth = true;
		p->has_atomic_ack = true;
		break;
	case OP_CMP_SWAP:
	case OP_FETCH_ADD:
		p->has_atomic_eth = true;
		break;
	default:
		break;
	}
	if (op == OP_SEND_LAST_IMM || op == OP_SEND_ONLY_IMM || op == OP_WRITE_LAST_IMM ||
	    op == OP_WRITE_ONLY_IMM)
		p->has_imm = true;
	if (p->opcode == OP_UD_SEND_ONLY || p->opcode == OP_UD_SEND_ONLY_IMM) {
		p->has_deth = true;
		p->has_imm = p->opcode == OP_UD_SEND_ONLY_IMM;
	}
	if (op == OP_SEND_LAST_INV || op == OP_SEND_ONLY_INV)
		p->has_ieth = true;
	if (op > OP_FETCH_ADD && op != OP_SR_STD && op != OP_CNP && !p->has_deth &&
	    !p->has_ieth) {
		p->why = "opcode";
		return false;
	}
	return true;
}

/* The next @n bytes at *@x (advanced past them), or NULL and p->why = @why if they pass @end. */
static const uint8_t *ext_take(struct pkt *p, const uint8_t **x, const uint8_t *end, size_t n,
			       const char *why)
{
	const uint8_t *h = *x;

	if (h + n > end) {
		p->why = why;
		return NULL;
	}
	*x = h + n;
	return h;
}

static uint64_t rd64be(const uint8_t *b)
{
	return (uint64_t)rd32be(b) << 32 | rd32be(b + 4);
}

/* The extension headers ext_select() chose, in wire order; *@x: then the payload. */
static bool ext_parse(struct pkt *p, const uint8_t **x, const uint8_t *end)
{
	const uint8_t *h;

	if (p->has_deth) {
		h = ext_take(p, x, end, 8, "DETH");
		if (!h)
			return false;
		p->qkey = rd32be(h);
		p->src_qp = rd32be(h + 4) & 0xffffff;
	}
	if (p->has_reth) {
		h = ext_take(p, x, end, 16, "RETH");
		if (!h)
			return false;
		p->va = rd64be(h);
		p->rkey = rd32be(h + 8);
		p->dma_len = rd32be(h + 12);
	}
	if (p->has_sph) {
		h = ext_take(p, x, end, 8, "SPH");
		if (!h)
			return false;
		p->sph_rord = rd32be(h);
		p->sph_off = rd32be(h + 4);
	}
	if (p->has_aeth) {
		h = ext_take(p, x, end, 4, "AETH");
		if (!h)
			return false;
		p->syndrome = h[0];
		p->msn = rd32be(h) & 0xffffff;
	}
	if (p->has_imm) {
		h = ext_take(p, x, end, 4, "ImmDt");
		if (!h)
			return false;
		p->imm = rd32be(h);
	}
	if (p->has_ieth) {
		h = ext_take(p, x, end, 4, "IETH");
		if (!h)
			return false;
		p->ieth = rd32be(h);
	}
	if (p->has_atomic_eth) {
		h = ext_take(p, x, end, 28, "AtomicETH");
		if (!h)
			return false;
		p->va = rd64be(h);
		p->rkey = rd32be(h + 8);
		p->swap_add = rd64be(h + 12);
		p->compare = rd64be(h + 20);
	}
	if (p->has_atomic_ack) {
		h = ext_take(p, x, end, 8, "AtomicAckETH");
		if (!h)
			return false;
		p->orig = rd64be(h);
	}
	return true;
}

bool pkt_parse(const uint8_t *fr, size_t len, struct pkt *p)
{
	const uint8_t *ip, *udp, *bth, *x, *end;
	size_t off, iph;

	memset(p, 0, sizeof(*p));
	if (!l2_parse(fr, len, p, &off))
		return false;
	ip = fr + off;
	if (p->ethertype == 0x0800) {
		if (!ipv4_parse(ip, len - off, p))
			return false;
	} else if (p->ethertype == 0x86dd) {
		if (!ipv6_parse(ip, len - off, p))
			return false;
	} else {
		p->why = "ethertype";
		return false;
	}
	iph = p->ipver == 4 ? 20 : 40;
	udp = ip + iph;
	if (!udp_parse(udp, iph, p))
		return false;
	end = udp + p->udp_len - 4;	/* ICRC */
	bth = udp + 8;
	if (p->dport == TERN_INT_UDP_DPORT && !int_parse(p, bth, end))
		return false;
	bth += p->int_len;
	bth_parse(bth, p);
	x = bth + 12;
	if (!ext_select(p) || !ext_parse(p, &x, end))
		return false;
	if ((size_t)(end - x) < p->padcnt) {
		p->why = "pad";
		return false;
	}
	p->payload = x;
	p->payload_len = (size_t)(end - x) - p->padcnt;
	p->icrc_wire = rd32(end);
	p->icrc_calc = p->has_int ? icrc_without_int(ip, p, end) : icrc_calc(ip, p->ipver, end);
	p->ok = true;
	p->why = NULL;
	return true;
}

void pkt_fix_icrc(uint8_t *fr, size_t len)
{
	struct pkt p;
	size_t off;
	uint8_t *ip;

	if (!pkt_parse(fr, len, &p))
		return;
	off = p.vlan ? 18 : 14;
	ip = fr + off;
	wr32(ip + (p.ipver == 4 ? 20 : 40) + p.udp_len - 4, p.icrc_calc);
}

void pkt_fix_ipv4_csum(uint8_t *fr, size_t len)
{
	size_t off = rd16be(fr + 12) == 0x8100 ? 18 : 14;
	uint8_t *ip = fr + off;
	uint16_t s;

	if (len < off + 20)
		return;
	ip[10] = ip[11] = 0;
	s = ip_csum(ip, 20);
	ip[10] = (uint8_t)(s >> 8);
	ip[11] = (uint8_t)s;
}

unsigned int wire_count(const struct wire *w, unsigned int dir, int op)
{
	unsigned int i, n = 0;
	struct pkt p;

	for (i = 0; i < w->nlog; i++) {
		if (w->log[i].dir != dir || !pkt_parse(w->log[i].data, w->log[i].len, &p))
			continue;
		if (op < 0 || p.opcode == op)
			n++;
	}
	return n;
}
