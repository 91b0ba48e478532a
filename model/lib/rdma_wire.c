/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: RoCEv2 on the wire. Builds Ethernet [802.1Q] / IPv4 or IPv6 / UDP /
 * BTH / extension headers / payload / pad / ICRC frames from a QP's header template, and
 * parses and checks received ones before handing them to the requester or responder.
 *
 * Sent frames: IPv4 with DF, TTL = hop_limit, TOS = traffic_class with the ECN bits replaced
 * (ECT(0) on RC data packets of a QP whose priority has DCQCN's RP enabled, else 00; CNPs
 * have their own DSCP, see ternm_cnp_send()), an identification from a per-port counter (0
 * after a reset, +1 for each IPv4 RoCE frame the port builds, loopback included, wrapping at
 * 2^16) and the header checksum over the final header, UDP checksum 0; IPv6 with traffic
 * class (ECN bits as for IPv4), flow label and hop limit from the path and the UDP checksum.
 * BTH with MigReq set, P_Key 0xffff, TVer 0, as Soft-RoCE sends. The ICRC is CRC-32 over
 * eight 0xff bytes, then IP header, UDP header and BTH with the variant fields set to ones
 * (IPv4 TOS, TTL, checksum; IPv6 traffic class, flow label, hop limit; UDP checksum; BTH byte
 * 4), then the rest of the packet; it goes on the wire least significant byte first. So a
 * switch may mark CE (and set FECN/BECN) without breaking the ICRC. HPCC's INT shim
 * (rdma_hpcc.c) is inserted after the ICRC is computed and removed before it is checked: the
 * ICRC never covers it.
 *
 * Received frames are dropped and counted (rx_roce_discards) when malformed (lengths, IPv4
 * header checksum or fragments, TVer, unknown opcode or one the QP's type does not take
 * (UD opcodes 0x64/0x65 go to rdma_ud.c and CNPs (0x81) to rdma_cc.c after the ICRC check;
 * RC takes SEND_LAST/ONLY_WITH_INVALIDATE 0x16/0x17 with their IETH, UC does not; an RC
 * QP in selective repeat takes the SR opcodes 0xc0..0xc6 with their RETH or SEND
 * placement header, parsed as the standard MIDDLE/LAST with p.place set, no other QP does),
 * headers longer than the packet, a payload after a READ request, ACK, atomic request or
 * atomic ACK), for an unknown QP, or for a QP whose state does not accept them; a bad ICRC
 * counts rx_icrc_errors, a BTH P_Key whose low 15 bits are not the default partition's
 * (0x7fff) counts rx_pkey_mismatch (the membership bit is not checked). A packet a QP takes
 * with ECN CE goes to the notification point first (rdma_cc.c: maybe a CNP back). Frames
 * addressed to the port's own MAC are looped back without reaching the wire (nor the fault
 * injector); everything else goes out through the MAC (ternm_mac_tx(), mac.c) to
 * ternm_wire_tx() (wire.c), which may drop, corrupt, duplicate or reorder it when
 * SET_WIRE_FAULTS asks for it. tx_roce_packets/tx_roce_bytes count frames as the port sent
 * them (CNPs included), before the injector.
 */
#include "frame.h"
#include "rdma.h"

/* ---- ICRC ------------------------------------------------------------------------------------ */

/*
 * ICRC of a RoCEv2 packet: @l3 is the IP header, @bth the BTH, @end the ICRC position.
 *
 * The CRC-32 (crc.c) runs over eight 0xff bytes, the headers up to and including the BTH with
 * their variant fields masked, and the rest of the packet. Those bytes are in the frame
 * itself, from 8 before the IP header (inside the Ethernet header) up to the ICRC, once the
 * eight bytes in front and the variant fields are set to ones: with an IP header of the usual
 * length (IPv4 without options, IPv6), the CRC runs over the frame in place, ORs these masks
 * into its first 48 (64) bytes and folds the last partial block as it is
 * (ternm_crc32_reg_masked()): nothing is copied, and no byte just written is read back
 * through a copy.
 *
 * With IPv4 options: a register starting at ~0 is the same as one starting at 0 with the
 * first four bytes inverted, and from 0 leading zero bytes change nothing: so a masked copy of
 * the headers is built as zeros, 00 00 00 00 ff ff ff ff, the headers and the first
 * (rest % 16) bytes after the BTH, with as many zeros in front as make it a multiple of 16
 * bytes, and the rest of the packet is a multiple of 16 too. Both are then folded 16 bytes at
 * a time, with no byte-wise tail, and reduced to 32 bits once.
 */
static const uint8_t icrc_mask4[48] = {
	[0 ... 7] = 0xff,
	[8 + 1] = 0xff,				/* TOS */
	[8 + 8] = 0xff,				/* TTL */
	[8 + 10] = 0xff, [8 + 11] = 0xff,	/* header checksum */
	[8 + 20 + 6] = 0xff, [8 + 20 + 7] = 0xff,	/* UDP checksum */
	[8 + 28 + 4] = 0xff,			/* BTH FECN, BECN, reserved */
};
static const uint8_t icrc_mask6[64] = {
	[0 ... 7] = 0xff,
	[8 + 0] = 0x0f, [8 + 1 ... 8 + 3] = 0xff,	/* traffic class, flow label */
	[8 + 7] = 0xff,				/* hop limit */
	[8 + 40 + 6] = 0xff, [8 + 40 + 7] = 0xff,	/* UDP checksum */
	[8 + 48 + 4] = 0xff,			/* BTH FECN, BECN, reserved */
};

static uint32_t icrc(const uint8_t *l3, bool v6, const uint8_t *bth, const uint8_t *end)
{
	uint8_t b[16 + 8 + 60 + 8 + BTH_LEN + 16];
	size_t hl = (size_t)(bth + BTH_LEN - l3);
	size_t rest = (size_t)(end - bth - BTH_LEN);
	size_t k = rest % 16, z, udp;
	uint8_t *h;

	/* l3 is 14 or 18 bytes into the frame: the 8 bytes before it are there */
	if (hl == (v6 ? 40u : 20u) + 8 + BTH_LEN)
		return ~ternm_crc32_reg_masked(~0u, l3 - 8, (size_t)(end - l3) + 8,
					       v6 ? icrc_mask6 : icrc_mask4, v6 ? 64 : 48);
	if (hl > 60 + 8 + BTH_LEN)	/* cannot be: the IP header is at most 60 bytes */
		return 0;
	z = (16 - (8 + hl + k) % 16) % 16;
	memset(b, 0, z + 4);
	memset(b + z + 4, 0xff, 4);
	h = b + z + 8;
	memcpy(h, l3, hl);
	if (v6) {
		h[0] |= 0x0f;
		h[1] = h[2] = h[3] = 0xff;	/* traffic class, flow label */
		h[7] = 0xff;			/* hop limit */
		udp = 40;
	} else {
		udp = (size_t)(h[0] & 0x0f) * 4;
		h[1] = 0xff;			/* TOS */
		h[8] = 0xff;			/* TTL */
		h[10] = h[11] = 0xff;		/* header checksum */
	}
	h[udp + 6] = h[udp + 7] = 0xff;		/* UDP checksum */
	h[udp + 8 + 4] = 0xff;			/* BTH FECN, BECN, reserved */
	memcpy(h + hl, bth + BTH_LEN, k);
	return ~ternm_crc32_reg2(0, b, z + 8 + hl + k, bth + BTH_LEN + k, rest - k);
}

/* ---- transmit ------------------------------------------------------------------------------ */

/* Build the QP's Ethernet/IP/UDP header template from its path. */
void ternm_qp_build_hdr(struct ternm_qp *qp)
{
	ternm_hdr_build(qp, qp->path);
}

/* Build the QP's header template from @p, a struct tern_qp_path (a UD WQE's, per packet). */
void ternm_hdr_build(struct ternm_qp *qp, const uint8_t *p)
{
	typedef struct tern_qp_path P;
	uint16_t vlan = get_le16(CFLD(p, P, vlan_id));
	uint8_t *h = qp->hdr;
	size_t o = 12;

	memcpy(h, CFLD(p, P, dmac), 6);
	memcpy(h + 6, CFLD(p, P, smac), 6);
	if (vlan != TERN_VLAN_NONE) {
		put_be16(h + o, FRAME_ETH_P_8021Q);
		put_be16(h + o + 2, (uint16_t)((p[offsetof(P, sl)] & 7) << 13 | (vlan & 0xfff)));
		o += 4;
	}
	qp->ipv6 = p[offsetof(P, ip_version)] == 6;
	put_be16(h + o, qp->ipv6 ? FRAME_ETH_P_IPV6 : FRAME_ETH_P_IP);
	o += 2;
	qp->l3_off = (uint8_t)o;
	if (qp->ipv6) {
		uint8_t tc = p[offsetof(P, traffic_class)];
		uint32_t fl = get_le32(CFLD(p, P, flow_label)) & 0xfffff;

		put_be32(h + o, 6u << 28 | (uint32_t)tc << 20 | fl);
		put_be16(h + o + 4, 0);			/* payload length: per packet */
		h[o + 6] = FRAME_IPPROTO_UDP;
		h[o + 7] = p[offsetof(P, hop_limit)];
		memcpy(h + o + 8, CFLD(p, P, sgid), 16);
		memcpy(h + o + 24, CFLD(p, P, dgid), 16);
		o += 40;
	} else {
		h[o] = 0x45;
		h[o + 1] = p[offsetof(P, traffic_class)];
		put_be16(h + o + 2, 0);			/* total length: per packet */
		put_be16(h + o + 4, 0);			/* ID */
		put_be16(h + o + 6, 0x4000);		/* DF */
		h[o + 8] = p[offsetof(P, hop_limit)];
		h[o + 9] = FRAME_IPPROTO_UDP;
		put_be16(h + o + 10, 0);
		memcpy(h + o + 12, CFLD(p, P, sgid) + 12, 4);
		memcpy(h + o + 16, CFLD(p, P, dgid) + 12, 4);
		/* frame_send() adds the TOS, total length and ID of each packet to this */
		h[o + 1] = 0;
		qp->ip_csum = frame_csum_add(0, h + o, 20);
		h[o + 1] = p[offsetof(P, traffic_class)];
		o += 20;
	}
	put_be16(h + o, get_le16(CFLD(p, P, udp_sport)));
	put_be16(h + o + 2, TERN_ROCE_UDP_DPORT);
	put_be16(h + o + 4, 0);
	put_be16(h + o + 6, 0);
	o += 8;
	qp->hdr_len = (uint8_t)o;
}

/* Set the ECN field (the low 2 bits of the IPv4 TOS / IPv6 traffic class) at @l3. */
static void set_ecn(uint8_t *l3, bool v6, unsigned int ecn)
{
	if (v6)
		l3[1] = (uint8_t)((l3[1] & ~0x30) | (ecn & 3) << 4);
	else
		l3[1] = (uint8_t)((l3[1] & ~3) | (ecn & 3));
}

/* The ECN field of a received frame whose IP header is at @l3. */
unsigned int ternm_frame_ecn(const uint8_t *f, size_t l3, bool v6)
{
	return v6 ? (f[l3 + 1] >> 4) & 3 : f[l3 + 1] & 3;
}

/*
 * Start a packet for @qp in the device's transmit buffer: headers from the template and the
 * BTH. Returns where the extension headers go; finish with ternm_pkt_send().
 */
uint8_t *ternm_pkt_start(struct tern_model *m, struct ternm_qp *qp, uint8_t opcode, bool se,
			 bool ackreq, uint32_t psn)
{
	uint8_t *f = m->rdma->tx;
	uint8_t *bth = f + qp->hdr_len;

	/* the whole template, a constant size: the bytes past hdr_len are overwritten below */
	memcpy(f, qp->hdr, sizeof(qp->hdr));
	set_ecn(f + qp->l3_off, qp->ipv6, ternm_cc_ecn(m, qp, opcode));
	bth[0] = qp->type == TERN_QPT_UC ? opcode | IBOP_UC : opcode;
	bth[1] = (uint8_t)((se ? 0x80 : 0) | 0x40);	/* SE, MigReq; pad set at send */
	bth[2] = bth[3] = 0xff;				/* P_Key */
	bth[4] = 0;
	put_be24(bth + 5, qp->dest_qpn);
	bth[8] = ackreq ? 0x80 : 0;
	put_be24(bth + 9, psn);
	return bth + BTH_LEN;
}

/*
 * Pad, fill in lengths, the IPv4 ID, checksums and the ICRC, and send the packet ending at
 * @end. Returns the frame's length, 0 if it was not sent (link down).
 */
static size_t frame_send(struct tern_model *m, struct ternm_qp *qp, uint8_t *f, uint8_t *end)
{
	struct ternm_rdma *r = m->rdma;
	uint8_t *l3 = f + qp->l3_off;
	uint8_t *bth = f + qp->hdr_len;
	uint8_t *udp = bth - 8;
	unsigned int pad = (unsigned int)(-(end - bth)) & 3;
	size_t len, udp_len;

	memset(end, 0, pad);
	end += pad;
	bth[1] |= (uint8_t)(pad << 4);
	udp_len = (size_t)(end - udp) + ICRC_LEN;
	put_be16(udp + 4, (uint16_t)udp_len);
	if (qp->ipv6) {
		put_be16(l3 + 4, (uint16_t)udp_len);
	} else {
		uint16_t id = m->ip_id++;

		/*
		 * From the template's sum, not by reading back the header just written (its
		 * bytes were stored one field at a time: wider loads would wait for them)
		 */
		put_be16(l3 + 2, (uint16_t)(20 + udp_len));
		put_be16(l3 + 4, id);
		put_be16(l3 + 10, (uint16_t)~frame_csum_fold(qp->ip_csum + l3[1] + 20 +
							    (uint32_t)udp_len + id));
	}
	put_le32(end, icrc(l3, qp->ipv6, bth, end));
	end += ICRC_LEN;
	if (m->cc->hpcc_en) {
		/* INT: after the ICRC, which covers the packet without the shim */
		size_t g = ternm_int_tx(m, qp, f, bth, (size_t)(end - f),
					 f == r->tx ? sizeof(r->tx) : 0);

		end += g;
		udp_len += g;
	}
	if (qp->ipv6) {
		uint32_t s = frame_csum_add(0, l3 + 8, 32);
		uint16_t c;

		s += (uint32_t)udp_len + 17;
		s = frame_csum_add(s, udp, udp_len);
		c = (uint16_t)~frame_csum_fold(s);
		put_be16(udp + 6, c ? c : 0xffff);
	}
	len = (size_t)(end - f);
	if (!m->link_up)
		return 0;
	TERNM_QSTAT(m, qp, tx_roce_packets, 1);
	TERNM_QSTAT(m, qp, tx_roce_bytes, len);
	if (!memcmp(f, m->mac, 6)) {
		ternm_rdma_rx(m, f, len);	/* loopback: to this port */
		return len;
	}
	if (r->mcast_loop && f == r->tx)
		ternm_rdma_rx(m, f, len);	/* UD multicast: this port's members, then the wire */
	ternm_mac_tx(m, f, len);
	return len;
}

size_t ternm_pkt_send(struct tern_model *m, struct ternm_qp *qp, uint8_t *end)
{
	return frame_send(m, qp, m->rdma->tx, end);
}

/*
 * Send a CNP from @qp to its peer QP (the notification point): the QP's addresses and UDP
 * ports, DSCP cnp_dscp and not ECN-capable, PCP cnp_prio when the path is tagged; BTH opcode
 * 0x81, P_Key 0xffff, BECN, destination QP = the QP's remote QPN, PSN 0; 16 reserved zero
 * bytes; ICRC. Built in its own buffer: it is sent while a received frame (possibly in the
 * transmit buffer, looped back) is being handled. Returns the frame's length, 0 if not sent.
 */
size_t ternm_cnp_send(struct tern_model *m, struct ternm_qp *qp)
{
	uint8_t *f = m->rdma->cnp_tx;
	uint8_t *l3 = f + qp->l3_off;
	uint8_t *bth = f + qp->hdr_len;
	uint8_t tos = (uint8_t)(m->cc->cnp_dscp << 2);	/* ECN 00 */

	memcpy(f, qp->hdr, sizeof(qp->hdr));	/* as ternm_pkt_start() does */
	if (qp->l3_off == 18)			/* 802.1Q: PCP cnp_prio, the VID kept */
		f[14] = (uint8_t)((f[14] & 0x1f) | m->cc->cnp_prio << 5);
	if (qp->ipv6) {
		l3[0] = (uint8_t)((l3[0] & 0xf0) | tos >> 4);
		l3[1] = (uint8_t)((l3[1] & 0x0f) | (tos & 0x0f) << 4);
	} else {
		l3[1] = tos;
	}
	bth[0] = IBOP_CNP;
	bth[1] = 0;				/* SE, MigReq, pad, TVer */
	bth[2] = bth[3] = 0xff;
	bth[4] = TERN_BTH_BECN;
	put_be24(bth + 5, qp->dest_qpn);
	bth[8] = 0;
	put_be24(bth + 9, 0);
	memset(bth + BTH_LEN, 0, CNP_RSVD_LEN);
	return frame_send(m, qp, f, bth + BTH_LEN + CNP_RSVD_LEN);
}

/* ---- receive ------------------------------------------------------------------------------- */

/*
 * Where a frame's UDP header is if it is RoCEv2 (IP, UDP, port 4791, or TERN_INT_UDP_DPORT
 * with an INT shim: *intp); 0 if it is not.
 */
static size_t roce_udp(const uint8_t *f, size_t len, size_t *l3, bool *v6, bool *intp)
{
	struct frame_info fi;

	frame_parse(f, len, &fi);
	*l3 = fi.l3;
	*v6 = fi.ipver == 6;
	*intp = fi.intp;
	return fi.roce || fi.intp ? fi.udp : 0;
}

/* RoCEv2 for this port: to 4791, or to the INT port while HPCC is on for some priority. */
bool ternm_rdma_is_roce(const struct tern_model *m, const uint8_t *frame, size_t len)
{
	struct frame_info fi;

	frame_parse(frame, len, &fi);
	return fi.roce || (fi.intp && m->cc && m->cc->hpcc_en);
}

static bool has_atomic_eth(uint8_t op)
{
	return op == IBOP_CMP_SWAP || op == IBOP_FETCH_ADD;
}

static bool has_reth(uint8_t op)
{
	return op == IBOP_WRITE_FIRST || op == IBOP_WRITE_ONLY || op == IBOP_WRITE_ONLY_IMM ||
	       op == IBOP_READ_REQ;
}

static bool has_imm(uint8_t op)
{
	return op == IBOP_SEND_LAST_IMM || op == IBOP_SEND_ONLY_IMM ||
	       op == IBOP_WRITE_LAST_IMM || op == IBOP_WRITE_ONLY_IMM;
}

static bool has_aeth(uint8_t op)
{
	return op == IBOP_READ_RESP_FIRST || op == IBOP_READ_RESP_LAST ||
	       op == IBOP_READ_RESP_ONLY || op == IBOP_ACK || op == IBOP_ATOMIC_ACK;
}

/* Requests go to the responder, everything else (ACKs and responses) to the requester. */
static bool is_request(uint8_t op)
{
	return op <= IBOP_READ_REQ || has_atomic_eth(op);
}

/*
 * The IP and UDP lengths of the RoCEv2 frame @f (@len bytes, IP header at @l3, UDP at @u):
 * whether they hold within the frame; *@bth and *@end (the ICRC) are where they say.
 */
static bool rx_lengths(const uint8_t *f, size_t len, size_t l3, bool v6, size_t u,
		       const uint8_t **bth, const uint8_t **end)
{
	size_t ip_end, ulen;

	if (v6) {
		ip_end = l3 + 40 + get_be16(f + l3 + 4);
	} else {
		size_t ihl = (size_t)(f[l3] & 0x0f) * 4;

		if (ihl < 20 || (get_be16(f + l3 + 6) & 0x3fff) ||
		    !frame_ipv4_csum_ok(f + l3, ihl))
			return false;
		ip_end = l3 + get_be16(f + l3 + 2);
		if (ip_end < u + 8)
			return false;
	}
	if (ip_end > len)
		return false;
	ulen = get_be16(f + u + 4);
	if (ulen < 8 + BTH_LEN + ICRC_LEN || u + ulen > ip_end)
		return false;
	*bth = f + u + 8;
	*end = f + u + ulen - ICRC_LEN;
	return true;
}

/*
 * The BTH of an RC or UC packet into @p (*@uc: a UC one, *@pad: its pad count); the
 * opcodes of UC, selective repeat and SEND with invalidate become the standard ones, with
 * p->place and p->inv saying what follows. Returns false for an opcode or reserved bits the
 * model does not take.
 */
static bool rx_bth(struct ternm_pkt *p, const uint8_t *bth, bool *uc, unsigned int *pad)
{
	/*
	 * The extension headers' fields start at zero; the ones before va are all set below.
	 * (Less than the whole struct: compilers zero up to 64 bytes with vector stores, more
	 * with a REP STOS whose start-up cost showed in the receive path.)
	 */
	memset(&p->va, 0, sizeof(*p) - offsetof(struct ternm_pkt, va));
	p->opcode = bth[0];
	p->se = bth[1] & 0x80;
	*pad = (bth[1] >> 4) & 3;
	/* UC carries the RC opcodes of SEND and WRITE with 0x20 set: parsed as those */
	*uc = (p->opcode & 0xe0) == IBOP_UC;
	if (*uc)
		p->opcode &= 0x1f;
	/* selective repeat's MIDDLE/LAST packets: the standard opcode, with RETH or SPH */
	if (p->opcode >= IBOP_SR_WRITE_MIDDLE && p->opcode <= IBOP_SR_SEND_LAST_INV) {
		static const uint8_t std[] = {
			IBOP_WRITE_MIDDLE, IBOP_WRITE_LAST, IBOP_WRITE_LAST_IMM,
			IBOP_SEND_MIDDLE, IBOP_SEND_LAST, IBOP_SEND_LAST_IMM, IBOP_SEND_LAST_INV,
		};

		p->place = p->opcode <= IBOP_SR_WRITE_LAST_IMM ? PKT_PLACE_RETH : PKT_PLACE_SPH;
		p->opcode = std[p->opcode - IBOP_SR_WRITE_MIDDLE];
	}
	if ((bth[1] & 0x0f) || (p->opcode > (*uc ? IBOP_WRITE_ONLY_IMM : IBOP_FETCH_ADD) &&
				(*uc || (p->opcode != IBOP_SEND_LAST_INV &&
					 p->opcode != IBOP_SEND_ONLY_INV))))
		return false;
	/* SEND with invalidate: a SEND_LAST/ONLY whose IETH names a key (rdma_resp.c) */
	if (p->opcode == IBOP_SEND_LAST_INV || p->opcode == IBOP_SEND_ONLY_INV) {
		p->inv = true;
		p->opcode = p->opcode == IBOP_SEND_LAST_INV ? IBOP_SEND_LAST : IBOP_SEND_ONLY;
	}
	return true;
}

/* The length of the extension headers that follow the BTH of @p. */
static size_t rx_ext_len(const struct ternm_pkt *p)
{
	return (has_reth(p->opcode) ? RETH_LEN : 0) + (has_imm(p->opcode) ? IMM_LEN : 0) +
	       (has_aeth(p->opcode) ? AETH_LEN : 0) +
	       (has_atomic_eth(p->opcode) ? ATOMIC_ETH_LEN : 0) +
	       (p->opcode == IBOP_ATOMIC_ACK ? ATOMIC_ACK_LEN : 0) + (p->inv ? IETH_LEN : 0) +
	       (p->place == PKT_PLACE_RETH ? RETH_LEN : p->place == PKT_PLACE_SPH ? SPH_LEN : 0);
}

static const uint8_t *rx_reth(struct ternm_pkt *p, const uint8_t *x)
{
	p->va = (uint64_t)get_be32(x) << 32 | get_be32(x + 4);
	p->rkey = get_be32(x + 8);
	p->dmalen = get_be32(x + 12);
	return x + RETH_LEN;
}

/*
 * The extension headers of @p at @x, rx_ext_len() bytes, checked to be there. Returns where
 * the payload starts, or NULL for reserved bits set.
 */
static const uint8_t *rx_ext(struct ternm_pkt *p, const uint8_t *x)
{
	if (has_aeth(p->opcode)) {
		p->syndrome = x[0];
		p->msn = get_be24(x + 1);
		x += AETH_LEN;
	}
	if (has_reth(p->opcode))
		x = rx_reth(p, x);
	if (p->place == PKT_PLACE_RETH) {
		x = rx_reth(p, x);
	} else if (p->place == PKT_PLACE_SPH) {
		p->rord = get_be32(x + offsetof(struct tern_sr_sph, rord));
		p->moff = get_be32(x + offsetof(struct tern_sr_sph, off));
		x += SPH_LEN;
		if (p->rord & ~TERN_SR_SPH_RORD_MASK)
			return NULL;		/* reserved bits */
	}
	if (has_imm(p->opcode)) {
		memcpy(p->imm, x, 4);
		x += IMM_LEN;
	}
	if (p->inv) {
		p->ieth = get_be32(x);
		x += IETH_LEN;
	}
	if (has_atomic_eth(p->opcode)) {
		p->va = get_be64(x);
		p->rkey = get_be32(x + 8);
		p->swap_add = get_be64(x + 12);
		p->compare = get_be64(x + 20);
		x += ATOMIC_ETH_LEN;
	}
	if (p->opcode == IBOP_ATOMIC_ACK) {
		p->orig = get_be64(x);
		x += ATOMIC_ACK_LEN;
	}
	return x;
}

/* Whether a packet of @p's opcode may carry its payload (@pad: the pad count). */
static bool rx_payload_ok(const struct ternm_pkt *p, unsigned int pad)
{
	/* an ACK carries a payload only as a selective-repeat SACK (its SACKETH, rdma_sr.c) */
	if ((p->opcode == IBOP_READ_REQ ||
	     (p->opcode == IBOP_ACK && p->syndrome != AETH_NAK_SACK) ||
	     p->opcode == IBOP_ATOMIC_ACK || has_atomic_eth(p->opcode)) && (p->paylen || pad))
		return false;
	return !(p->opcode == IBOP_ACK && pad);		/* a SACKETH is whole words */
}

/*
 * The headers after the BTH of @p, up to the ICRC at @end, and its payload: whether they
 * are all there and may be what they are.
 */
static bool rx_headers(struct ternm_pkt *p, const uint8_t *bth, const uint8_t *end,
		       unsigned int pad)
{
	const uint8_t *x;

	if ((size_t)(end - bth) < BTH_LEN + rx_ext_len(p) + pad)
		return false;
	x = rx_ext(p, bth + BTH_LEN);
	if (!x)
		return false;
	p->bth = bth;
	p->payload = x;
	p->paylen = (uint32_t)(end - x) - pad;
	return rx_payload_ok(p, pad);
}

/* The QP packet @p is for, if it takes it in its type, transport and state; else NULL. */
static struct ternm_qp *rx_qp(struct tern_model *m, const struct ternm_pkt *p, bool uc)
{
	struct ternm_qp *qp = ternm_qp_get(m, p->qpn);

	if (!qp || qp->type != (uc ? TERN_QPT_UC : TERN_QPT_RC))
		return NULL;
	if (p->place && !qp->sr)
		return NULL;		/* selective repeat's opcodes: only a QP in the mode */
	if (is_request(p->opcode)) {
		/* a request: the responder works from RTR on */
		if (qp->state < TERN_QPS_RTR || qp->state > TERN_QPS_SQE)
			return NULL;
	} else if (qp->state < TERN_QPS_RTS || qp->state > TERN_QPS_SQE) {
		return NULL;
	}
	return qp;
}

void ternm_rdma_rx(struct tern_model *m, const uint8_t *f, size_t len)
{
	struct ternm_rdma *r = m->rdma;
	struct ternm_pkt p;
	struct ternm_qp *qp;
	const uint8_t *bth, *end;
	unsigned int pad;
	bool v6, uc, intp;
	size_t l3, u;

	u = roce_udp(f, len, &l3, &v6, &intp);
	if (!u || !m->ready || m->fatal)
		goto discard;
	if (intp) {
		if (!m->cc->hpcc_en)
			goto discard;			/* INT off: not RoCE here */
		ternm_int_rx(m, f, len, l3, v6, u);	/* without the shim, back here */
		return;
	}
	if (!rx_lengths(f, len, l3, v6, u, &bth, &end))
		goto discard;
	if (get_le32(end) != icrc(f + l3, v6, bth, end)) {
		r->stats.rx_icrc_errors++;
		return;
	}
	if (bth[0] == IBOP_UD_SEND_ONLY || bth[0] == IBOP_UD_SEND_ONLY_IMM) {
		ternm_ud_rx(m, f, len, l3, v6, bth, end);	/* rdma_ud.c */
		return;
	}
	if (bth[0] == IBOP_CNP) {
		ternm_cc_cnp_rx(m, len, bth, end);	/* rdma_cc.c */
		return;
	}
	if (!rx_bth(&p, bth, &uc, &pad))
		goto discard;
	if ((get_be16(bth + 2) & 0x7fff) != 0x7fff) {
		r->stats.rx_pkey_mismatch++;
		return;
	}
	p.qpn = get_be24(bth + 5);
	p.ackreq = bth[8] & 0x80;
	p.psn = get_be24(bth + 9);
	if (!rx_headers(&p, bth, end, pad))
		goto discard;
	qp = rx_qp(m, &p, uc);
	if (!qp)
		goto discard;
	TERNM_QSTAT(m, qp, rx_roce_packets, 1);
	TERNM_QSTAT(m, qp, rx_roce_bytes, len);
	if (ternm_hpcc_rx(m, qp, &p))		/* INT telemetry (rdma_hpcc.c) */
		return;				/* a RESP_ECHO: telemetry only */
	ternm_cc_np_rx(m, qp, f, len, l3, v6);	/* CE: a CNP back (rdma_cc.c) */
	if (is_request(p.opcode))
		ternm_resp_rx(m, qp, &p);
	else
		ternm_req_rx(m, qp, &p);
	return;
discard:
	r->stats.rx_roce_discards++;
}
