/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The RDMA tests' connected pair on a wire and their independent RoCEv2 decoder. */
#include <stdlib.h>

#include "test_rdma.h"

/* ---- a connected pair on a wire ---------------------------------------------------------- */

enum wire_action wire_drop_dir0(struct wire *w, unsigned int dir, unsigned int idx,
				 uint8_t *frame, size_t *len)
{
	(void)w;
	(void)idx;
	(void)frame;
	(void)len;
	return dir == 0 ? W_DROP : W_DELIVER;
}

bool conn_setup(struct conn *c, const struct connopt *o)
{
	struct rdev *d0 = rdev_new(0), *d1 = d0 ? rdev_new(1) : NULL;

	if (!d1) {
		rdev_free(d0);
		memset(c, 0, sizeof(*c));
		return false;
	}
	return conn_setup_on(c, d0, d1, o);
}

bool conn_setup_on(struct conn *c, struct rdev *d0, struct rdev *d1, const struct connopt *o)
{
	unsigned int s;
	int st;

	memset(c, 0, sizeof(*c));
	c->o = *o;
	c->d[0] = d0;
	c->d[1] = d1;
	wire_init(&c->w, &c->d[0]->f, &c->d[1]->f);
	for (s = 0; s < 2; s++) {
		struct rdev *d = c->d[s];

		st = cq_create(d, &c->cq[s], o->cq_log, o->page_list);
		if (st) {
			printf("#   conn: CREATE_CQ status %d\n", st);
			return false;
		}
		st = qp_create_type(d, &c->qp[s], o->uc ? TERN_QPT_UC : TERN_QPT_RC, d->pdn,
				    &c->cq[s], &c->cq[s], o->sq_log, o->sq_stride, o->rq_log,
				    o->rq_stride, o->qp_flags, o->page_list);
		if (st) {
			printf("#   conn: CREATE_QP status %d\n", st);
			return false;
		}
	}
	for (s = 0; s < 2; s++) {
		if (!qp_connect(c->d[s], &c->qp[s], c->d[!s], c->qp[!s].qpn, o, s))
			return false;
	}
	return true;
}

void conn_free_keep(struct conn *c)
{
	unsigned int s;

	if (c->d[0] && c->d[1])
		wire_fini(&c->w);
	for (s = 0; s < 2; s++) {
		qmem_free(&c->qp[s].sq);
		qmem_free(&c->qp[s].rq);
		qmem_free(&c->cq[s].mem);
	}
}

void conn_free(struct conn *c)
{
	unsigned int s;

	conn_free_keep(c);
	for (s = 0; s < 2; s++) {
		rdev_free(c->d[s]);
		c->d[s] = NULL;
	}
}

#define POLL_STEP_NS	20000ull

unsigned int conn_poll(struct conn *c, unsigned int s, struct wc *wc, unsigned int n,
		       uint64_t max_ns)
{
	unsigned int got = 0;
	uint64_t waited = 0;

	wire_pump(&c->w);
	for (;;) {
		while (got < n && cq_poll(c->d[s], &c->cq[s], &wc[got]))
			got++;
		if (got == n || waited >= max_ns)
			break;
		wire_advance(&c->w, POLL_STEP_NS);
		waited += POLL_STEP_NS;
	}
	if (got < n)
		printf("#   conn_poll side %u: %u of %u CQEs\n", s, got, n);
	return got;
}

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

bool pkt_parse(const uint8_t *fr, size_t len, struct pkt *p)
{
	const uint8_t *ip, *udp, *bth, *x, *end;
	size_t off = 14, iph;
	unsigned int op;

	memset(p, 0, sizeof(*p));
	p->why = "short";
	if (len < 14)
		return false;
	memcpy(p->dmac, fr, 6);
	memcpy(p->smac, fr + 6, 6);
	p->ethertype = rd16be(fr + 12);
	if (p->ethertype == 0x8100) {
		if (len < 18)
			return false;
		p->vlan = true;
		p->pcp = fr[14] >> 5;
		p->vid = rd16be(fr + 14) & 0xfff;
		p->ethertype = rd16be(fr + 16);
		off = 18;
	}
	ip = fr + off;
	if (p->ethertype == 0x0800) {
		p->ipver = 4;
		iph = 20;
		if (len < off + iph || ip[0] != 0x45) {
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
		if (off + p->ip_len > len) {
			p->why = "IPv4 length";
			return false;
		}
	} else if (p->ethertype == 0x86dd) {
		p->ipver = 6;
		iph = 40;
		if (len < off + iph || ip[0] >> 4 != 6) {
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
		if (off + p->ip_len > len) {
			p->why = "IPv6 length";
			return false;
		}
	} else {
		p->why = "ethertype";
		return false;
	}
	udp = ip + iph;
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
	end = udp + p->udp_len - 4;	/* ICRC */
	bth = udp + 8;
	if (p->dport == TERN_INT_UDP_DPORT && !int_parse(p, bth, end))
		return false;
	bth += p->int_len;
	p->opcode = bth[0];
	p->se = bth[1] & 0x80;
	p->padcnt = (bth[1] >> 4) & 3;
	p->tver = bth[1] & 0xf;
	p->pkey = rd16be(bth + 2);
	p->bth4 = bth[4];
	p->dqpn = rd32be(bth + 4) & 0xffffff;
	p->ackreq = bth[8] & 0x80;
	p->psn = rd32be(bth + 8) & 0xffffff;
	x = bth + 12;
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
	if (p->has_deth) {
		if (x + 8 > end) {
			p->why = "DETH";
			return false;
		}
		p->qkey = rd32be(x);
		p->src_qp = rd32be(x + 4) & 0xffffff;
		x += 8;
	}
	if (p->has_reth) {
		if (x + 16 > end) {
			p->why = "RETH";
			return false;
		}
		p->va = (uint64_t)rd32be(x) << 32 | rd32be(x + 4);
		p->rkey = rd32be(x + 8);
		p->dma_len = rd32be(x + 12);
		x += 16;
	}
	if (p->has_sph) {
		if (x + 8 > end) {
			p->why = "SPH";
			return false;
		}
		p->sph_rord = rd32be(x);
		p->sph_off = rd32be(x + 4);
		x += 8;
	}
	if (p->has_aeth) {
		if (x + 4 > end) {
			p->why = "AETH";
			return false;
		}
		p->syndrome = x[0];
		p->msn = rd32be(x) & 0xffffff;
		x += 4;
	}
	if (p->has_imm) {
		if (x + 4 > end) {
			p->why = "ImmDt";
			return false;
		}
		p->imm = rd32be(x);
		x += 4;
	}
	if (p->has_ieth) {
		if (x + 4 > end) {
			p->why = "IETH";
			return false;
		}
		p->ieth = rd32be(x);
		x += 4;
	}
	if (p->has_atomic_eth) {
		if (x + 28 > end) {
			p->why = "AtomicETH";
			return false;
		}
		p->va = (uint64_t)rd32be(x) << 32 | rd32be(x + 4);
		p->rkey = rd32be(x + 8);
		p->swap_add = (uint64_t)rd32be(x + 12) << 32 | rd32be(x + 16);
		p->compare = (uint64_t)rd32be(x + 20) << 32 | rd32be(x + 24);
		x += 28;
	}
	if (p->has_atomic_ack) {
		if (x + 8 > end) {
			p->why = "AtomicAckETH";
			return false;
		}
		p->orig = (uint64_t)rd32be(x) << 32 | rd32be(x + 4);
		x += 8;
	}
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

/*
 * The wire fault injector of @d (TERN_CMD_SET_WIRE_FAULTS) on RoCE frames only: rates in
 * parts per million, @seed for its generator. Returns the command's status.
 */
int faults_set(struct rdev *d, uint32_t drop, uint32_t corrupt, uint32_t dup,
	       uint32_t reorder, uint64_t seed)
{
	uint8_t in[sizeof(struct tern_wire_faults)] = { 0 };

	wr32(in + OFF(struct tern_wire_faults, drop_ppm), drop);
	wr32(in + OFF(struct tern_wire_faults, corrupt_ppm), corrupt);
	wr32(in + OFF(struct tern_wire_faults, duplicate_ppm), dup);
	wr32(in + OFF(struct tern_wire_faults, reorder_ppm), reorder);
	wr32(in + OFF(struct tern_wire_faults, flags), TERN_WIRE_FAULT_F_ROCE_ONLY);
	wr64(in + OFF(struct tern_wire_faults, seed), seed);
	return rdev_cmd(d, TERN_CMD_SET_WIRE_FAULTS, in, sizeof(in), NULL, 0, NULL);
}

/* ---- the drivers' pieces the tests and the fuzzers share ------------------------------------ */
#define SRQI(f)	OFF(struct tern_cmd_create_srq_in, f)
#define QPI(f)	OFF(struct tern_cmd_create_qp_in, f)
#define RMS(f)	OFF(struct tern_reg_mr_seg, f)
#define SQE(f)	OFF(struct tern_sq_wqe, f)
#define CCP(f)	OFF(struct tern_cc_params, f)


void srq_in(struct rdev *d, uint8_t in[sizeof(struct tern_cmd_create_srq_in)],
	    const struct qmem *mem, unsigned int log, unsigned int stride)
{
	memset(in, 0, sizeof(struct tern_cmd_create_srq_in));
	wr32(in + SRQI(pdn), d->pdn);
	wr16(in + SRQI(uar), d->uar);
	in[SRQI(log_depth)] = (uint8_t)log;
	in[SRQI(log_stride)] = (uint8_t)stride;
	qmem_desc(mem, in + SRQI(mem));
}

int srq_create_ex(struct rdev *d, struct rsrq *s, unsigned int log, unsigned int stride,
		  uint32_t flags)
{
	uint8_t in[sizeof(struct tern_cmd_create_srq_in)];
	struct cqe c;
	int st;

	memset(s, 0, sizeof(*s));
	s->log = log;
	s->stride = stride;
	s->uar = d->uar;
	s->rec = flags & TERN_SRQ_F_DB_REC;
	qmem_alloc(d, &s->mem, (1ull << (log + stride)) +
	    (s->rec ? sizeof(struct tern_wq_db_rec) : 0), false);
	srq_in(d, in, &s->mem, log, stride);
	wr32(in + SRQI(flags), flags);
	st = rdev_cmd(d, TERN_CMD_CREATE_SRQ, in, sizeof(in), NULL, 0, &c);
	if (st == TERN_CMD_OK)
		s->srqn = c.result;
	return st;
}

/* An SRQ with a record: store its producer index there (after the WQEs). */
void srq_rec_write(struct rdev *d, struct rsrq *s, uint16_t pi)
{
	uint8_t *rec = fk_ptr(&d->f, s->mem.base + (1ull << (s->log + s->stride)),
			      sizeof(struct tern_wq_db_rec));

	__atomic_thread_fence(__ATOMIC_RELEASE);
	wr16(rec + OFF(struct tern_wq_db_rec, pi), pi);
}

/* Write a receive WQE into the SRQ's next slot (no doorbell); returns the slot. */
unsigned int srq_post(struct rdev *d, struct rsrq *s, uint64_t wr_id, const struct sge *sg,
		      unsigned int nsge)
{
	unsigned int slot = s->pi & ((1u << s->log) - 1);

	write_rqe(d, &s->mem, slot, s->stride, wr_id, sg, nsge);
	s->pi++;
	return slot;
}

void srq_ring(struct rdev *d, struct rsrq *s)
{
	db64(d, s->uar, TERN_UDB_SRQ, s->srqn | (uint64_t)s->pi << TERN_UDB_PI_SHIFT);
}

/* The CREATE_QP input of a QP of @type on SRQ @srqn (RQ fields zero). */
void srq_qp_in_type(struct rdev *d, uint8_t in[sizeof(struct tern_cmd_create_qp_in)],
		    struct rqp *qp, struct rcq *cq, uint32_t srqn, uint8_t type)
{
	memset(in, 0, sizeof(struct tern_cmd_create_qp_in));
	wr32(in + QPI(pdn), d->pdn);
	wr32(in + QPI(send_cqn), cq->cqn);
	wr32(in + QPI(recv_cqn), cq->cqn);
	in[QPI(type)] = type;
	in[QPI(flags)] = TERN_QP_F_SRQ;
	wr16(in + QPI(uar), d->uar);
	in[QPI(log_sq_depth)] = (uint8_t)qp->sq_log;
	in[QPI(log_sq_stride)] = (uint8_t)qp->sq_stride;
	wr32(in + QPI(srqn), srqn);
	qmem_desc(&qp->sq, in + QPI(sq_mem));
}

int srq_qp_create_type(struct rdev *d, struct rqp *qp, struct rcq *cq, uint32_t srqn,
		       uint8_t type, struct cqe *c)
{
	uint8_t in[sizeof(struct tern_cmd_create_qp_in)];
	struct cqe cc;
	int st;

	memset(qp, 0, sizeof(*qp));
	qp->pdn = d->pdn;
	qp->scq = qp->rcq = cq;
	qp->sq_log = 6;
	qp->sq_stride = 7;
	qp->uar = d->uar;
	qp->flags = TERN_QP_F_SRQ;
	qmem_alloc(d, &qp->sq, 1ull << (6 + 7), false);
	srq_qp_in_type(d, in, qp, cq, srqn, type);
	st = rdev_cmd(d, TERN_CMD_CREATE_QP, in, sizeof(in), NULL, 0, c ? c : &cc);
	if (st == TERN_CMD_OK)
		qp->qpn = (c ? c : &cc)->result;
	return st;
}

/* CREATE_MR of a key without translation (@flags: FAST_REG or a window type): *idx. */
int key_create(struct rdev *d, uint32_t pdn, uint8_t flags, uint32_t npages,
	       uint32_t *idx)
{
	typedef struct tern_cmd_create_mr_in T;
	uint8_t in[sizeof(T)] = { 0 };
	struct cqe c;
	int st;

	wr32(in + OFF(T, pdn), pdn);
	in[OFF(T, flags)] = flags;
	in[OFF(T, key)] = 0x33;
	wr32(in + OFF(T, npages), npages);
	st = rdev_cmd(d, TERN_CMD_CREATE_MR, in, sizeof(in), NULL, 0, &c);
	if (st == TERN_CMD_OK)
		*idx = c.result;
	return st;
}

/*
 * A signaled local WQE (@opcode, @key in the header) in the next SQ slot, no doorbell;
 * returns where its segment goes (REG_MR, BIND_MW).
 */
uint8_t *post_local(struct rdev *d, struct rqp *qp, uint8_t opcode, uint64_t wr_id,
		    uint32_t key)
{
	unsigned int slot = qp->sq_pi & ((1u << qp->sq_log) - 1);
	size_t sz = 1u << qp->sq_stride;
	uint8_t *w = qmem_ptr(d, &qp->sq, (size_t)slot * sz, sz);

	memset(w, 0, sz);
	w[SQE(opcode)] = opcode;
	w[SQE(flags)] = TERN_WQE_F_SIGNALED;
	wr32(w + SQE(rkey), key);
	wr64(w + SQE(wr_id), wr_id);
	qp->sq_pi++;
	return w + sizeof(struct tern_sq_wqe);
}

/* A REG_MR WQE in the next SQ slot (no doorbell) mapping @back's pages at @iova. */
void post_reg(struct rdev *d, struct rqp *qp, uint64_t wr_id, uint32_t key,
	      const struct rmr *back, uint64_t iova, uint64_t len, uint32_t npages,
		     uint8_t access)
{
	uint8_t *g = post_local(d, qp, TERN_WQE_REG_MR, wr_id, key);

	wr64(g + RMS(iova), iova);
	wr64(g + RMS(length), len);
	wr64(g + RMS(pbl_addr), back->pbl);
	wr32(g + RMS(npages), npages);
	g[RMS(page_shift)] = 12;
	g[RMS(access)] = access;
}

/* A BIND_MW WQE in the next SQ slot (no doorbell): window key @key over @mr's [off, +len). */
void post_bind(struct rdev *d, struct rqp *qp, uint64_t wr_id, uint32_t key,
	       const struct rmr *mr, uint64_t off, uint64_t len, uint8_t access)
{
	typedef struct tern_bind_mw_seg B;
	uint8_t *g = post_local(d, qp, TERN_WQE_BIND_MW, wr_id, key);

	wr64(g + OFF(B, addr), mr->iova + off);
	wr64(g + OFF(B, length), len);
	wr32(g + OFF(B, mr_key), mr->key);
	g[OFF(B, access)] = access;
}

/* ---- helpers ----------------------------------------------------------------------------- */

void cc_defaults(uint8_t p[sizeof(struct tern_cc_params)])
{
	memset(p, 0, sizeof(struct tern_cc_params));
	p[CCP(cnp_dscp)] = 48;
	p[CCP(cnp_prio)] = 6;
	wr32(p + CCP(min_time_between_cnps), 4);
	wr32(p + CCP(rpg_time_reset), 300);
	wr32(p + CCP(rpg_byte_reset), 32767);
	wr32(p + CCP(rpg_threshold), 1);
	wr32(p + CCP(rpg_max_rate), 0);
	wr32(p + CCP(rpg_ai_rate), 5);
	wr32(p + CCP(rpg_hai_rate), 50);
	wr32(p + CCP(rpg_gd), 11);
	wr32(p + CCP(rpg_min_dec_fac), 50);
	wr32(p + CCP(rpg_min_rate), 1);
	wr32(p + CCP(rate_to_set_on_first_cnp), 0);
	wr32(p + CCP(dce_tcp_g), 1019);
	wr32(p + CCP(dce_tcp_rtt), 1);
	wr32(p + CCP(rate_reduce_monitor_period), 4);
	wr32(p + CCP(initial_alpha_value), 1023);
	p[CCP(hpcc_max_stage)] = 5;
	p[CCP(hpcc_eta)] = 950 & 0xff;
	p[CCP(hpcc_eta) + 1] = 950 >> 8;
	wr32(p + CCP(hpcc_ai_rate), 100);
	wr32(p + CCP(hpcc_base_rtt), 12000);
}

int cc_set(struct fake *f, const uint8_t p[sizeof(struct tern_cc_params)], uint32_t *syndrome)
{
	struct cqe c;
	int st = drv_cmd(f, TERN_CMD_SET_CC_PARAMS, p, sizeof(struct tern_cc_params), NULL, 0, &c);

	if (syndrome)
		*syndrome = c.syndrome;
	return st;
}

void post_ud_send(struct rdev *d, struct rqp *qp, const struct rdev *peer,
		  const struct connopt *o, uint64_t wr_id, uint32_t dest_qpn, uint32_t qkey,
		  const struct sge *sg)
{
	size_t sz = 1u << qp->sq_stride;
	uint8_t *w = qmem_ptr(d, &qp->sq, (size_t)(qp->sq_pi & ((1u << qp->sq_log) - 1)) * sz, sz);
	uint8_t attrs[sizeof(struct tern_qp_attrs)];
	uint8_t *ud = w + sizeof(struct tern_sq_wqe);
	uint8_t *sge = ud + sizeof(struct tern_ud_seg);
	struct qpattr a;

	memset(w, 0, sz);
	w[SQE(opcode)] = TERN_WQE_SEND;
	w[SQE(flags)] = TERN_WQE_F_SIGNALED;
	w[SQE(num_sge)] = 1;
	wr64(w + SQE(wr_id), wr_id);
	memset(&a, 0, sizeof(a));
	path_fill(&a, d, peer, o);
	qpattr_encode(&a, attrs);
	memcpy(ud + OFF(struct tern_ud_seg, path), attrs + QPA(path), sizeof(struct tern_qp_path));
	wr32(ud + OFF(struct tern_ud_seg, dest_qpn), dest_qpn);
	wr32(ud + OFF(struct tern_ud_seg, qkey), qkey);
	wr64(sge + OFF(struct tern_sge, addr), sg->addr);
	wr32(sge + OFF(struct tern_sge, length), sg->len);
	wr32(sge + OFF(struct tern_sge, lkey), sg->lkey);
	qp->sq_pi++;
}

/*
 * Write an atomic WQE into the next SQ slot: header, struct tern_atomic_seg, then @nsge SGEs
 * (or, with TERN_WQE_F_INLINE in @flags, 8 bytes of inline data). No doorbell.
 */
unsigned int post_atomic_ex(struct rdev *d, struct rqp *qp, uint8_t opcode, uint8_t flags,
			    uint64_t wr_id, const struct sge *sg, unsigned int nsge,
			    uint64_t raddr, uint32_t rkey, uint64_t swap_add,
			    uint64_t compare)
{
	typedef struct tern_sq_wqe W;
	typedef struct tern_atomic_seg A;
	unsigned int slot = qp->sq_pi & ((1u << qp->sq_log) - 1), i;
	size_t sz = 1u << qp->sq_stride;
	uint8_t *w = qmem_ptr(d, &qp->sq, (size_t)slot * sz, sz);
	uint8_t *a = w + sizeof(W);

	memset(w, 0, sz);
	w[OFF(W, opcode)] = opcode;
	w[OFF(W, flags)] = flags;
	w[OFF(W, num_sge)] = (uint8_t)nsge;
	wr32(w + OFF(W, rkey), rkey);
	wr64(w + OFF(W, remote_addr), raddr);
	wr64(w + OFF(W, wr_id), wr_id);
	wr64(a + OFF(A, swap_add), swap_add);
	wr64(a + OFF(A, compare), compare);
	if (flags & TERN_WQE_F_INLINE) {
		wr32(w + OFF(W, inline_len), 8);
		wr64(a + sizeof(A), 0);
	}
	for (i = 0; i < nsge && sizeof(W) + sizeof(A) + 16 * (i + 1) <= sz; i++) {
		uint8_t *s = a + sizeof(A) + 16 * i;

		wr64(s + OFF(struct tern_sge, addr), sg[i].addr);
		wr32(s + OFF(struct tern_sge, length), sg[i].len);
		wr32(s + OFF(struct tern_sge, lkey), sg[i].lkey);
	}
	qp->sq_pi++;
	return slot;
}

unsigned int post_atomic(struct rdev *d, struct rqp *qp, uint8_t opcode, uint64_t wr_id,
			 const struct sge *sg, uint64_t raddr, uint32_t rkey,
			 uint64_t swap_add, uint64_t compare)
{
	return post_atomic_ex(d, qp, opcode, TERN_WQE_F_SIGNALED, wr_id, sg, 1, raddr, rkey,
			      swap_add, compare);
}
