/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for what a guest (kernel driver or user process) can do to the model: two
 * devices brought up by the host driver (model/hostdrv) on the tests' wire
 * (model/tests/harness.c), each with an RC or UC QP connected to the other (selective repeat
 * on some RC runs), a UD QP, an SRQ with a UD QP on it, an MR, a fast-registration key, a type
 * 2 memory window, congestion control (DCQCN, or HPCC with the wire as one INT switch
 * hop), and Ethernet TX and RX
 * queues with receive coalescing, RSS over two RX queues and the checksum offloads. Each
 * input starts from both devices reset (tern_model_reset, the fake host's memory zeroed:
 * rdev_reset) and set up anew, its first two bytes choosing the options; the rest is a
 * script of guest actions, time and wire behaviour:
 *
 *   'p' dev q op flags len16     a send WQE of any opcode byte and flags on the RC/UC (q 0),
 *                                UD (1) or SRQ-UD (2) QP, rung (flags bit 7: not rung;
 *                                UD with bit 6: to a multicast group;
 *                                atomics with their segment unless flags bit 6)
 *   'r' dev q                    a receive WQE on the RQ (0), UD RQ (1) or SRQ (2), rung
 *   'w' dev mem off16 byte       byte off of a ring rewritten at any time (also after the
 *                                device read it): SQ, RQ, UD SQ/RQ, SRQ (with its doorbell
 *                                record), CQ (with its record), async/completion EQ,
 *                                Ethernet TX/RX ring, the MR's page list, command SQ/CQ
 *   'a' dev mem off16 kind off16 an 8-byte DMA address written there: into the device's own
 *                                BARs (fk_map_self: FK_SELF_BASE), host memory,
 *                                or nowhere
 *   'd' dev kind off16 val64     a doorbell or register written with any value
 *   'm' dev vec off16            MSI-X vector vec's message pointed into the BAR window
 *   't' ns16                     time passes (retransmission, RNR, ACK timers, LRO timeout)
 *   'f' pattern                  the wire drops, duplicates, holds back or delivers the next
 *                                256 frames
 *   's' dev how                  MODIFY_QP: states, path MTU, SQ PSN; UD/SRQ-UD QP to ERR
 *   'c' dev how arg16            MODIFY_CQ, RESIZE_CQ, CQ arm, MODIFY_SRQ, doorbell records,
 *                                EQ arm, SET_RSS, SET_PORT, QUERY_QP, stats, DESTROY_* of
 *                                objects in use, SET_DCB with PFC (and the storm guard over
 *                                a small buffer), the SQ's, CQ's or an Ethernet ring's
 *                                memory faulting, REREG_MR of the MR in use,
 *                                ATTACH_MCAST/DETACH_MCAST of the UD QPs
 *   'e' dev n (ctx desc)*        Ethernet TX: a context and data descriptors of any fields
 *                                over a TCP/UDP frame in host memory, the doorbell rung
 *   'x' dev spec len16 nflip (off8 xor)*  an Ethernet frame (TCP/UDP over IPv4/IPv6, VLAN,
 *                                checksums right or not, in sequence per flow so LRO
 *                                coalesces; or PAUSE/PFC) received from the wire, mutated
 *
 * Built as fuzz-eth (-DFUZZ_ETH) it makes one device with its Ethernet queues only, and its
 * script's actions are 'e', 'x', 'w', 'a', 'd', 'm', 't' and 'c' on that device.
 * Anything the sanitizers flag, a hang or unbounded memory is a bug.
 * Build: `make -C model fuzz`; run: `model/build/fuzz-guest -detect_leaks=0 CORPUS_DIR
 * model/fuzz/corpus/guest`. tests/host/fuzz.t runs a bounded slice over the committed seeds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dcb_drv.h"
#include "fuzz_script.h"

#define MR_LEN		(64 * 1024)
#define ALL_ACC		(TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE | \
			 TERN_ACCESS_REMOTE_READ | TERN_ACCESS_REMOTE_ATOMIC)
#define UD_QKEY		0x11223344u
#define NRXQ		2
#define RX_BUF		2048u
#define FRAME_BYTES	9600u

/* One side's objects beside the connection's QP and CQ. */
struct side {
	struct rqp ud, sud;		/* UD QP; UD QP on the SRQ */
	bool ud_ok, sud_ok;
	struct rsrq srq;
	bool srq_ok;
	struct rmr mr;
	bool mr_ok;
	uint32_t frkey, mwkey;		/* fast registration key, type 2 window (0: none) */
	struct drv_ring txq, rxq[NRXQ];
	bool eth_ok;
	uint64_t frame;			/* TX frame bytes in host memory */
	uint32_t seq[4];		/* per flow: the next TCP sequence number received */
};

struct fz {
	struct rdev *d[2];		/* kept across inputs, reset for each (rdev_reset) */
	struct conn c;
	struct side s[2];
	unsigned int ndev;
	uint8_t pattern;		/* 'f': the wire's behaviour, 2 bits per frame */
	unsigned int filtered;		/* frames it applied to since the last 'f' */
	uint64_t int_bytes[2];		/* bytes the wire carried per direction (INT records) */
	uint8_t frame[FRAME_BYTES + 64];
};

static struct fz *F;

#ifndef FUZZ_ETH
/*
 * The wire is one switch hop for HPCC: an IPv4 request with an INT REQUEST shim (UDP port
 * TERN_INT_UDP_DPORT) gets a hop record as tern-switch appends it, with the wire's time, the
 * bytes it carried in that direction and a queue that grows and drains with the frame count.
 */
static void int_hop(struct wire *w, unsigned int dir, unsigned int idx, uint8_t *f, size_t *len)
{
	typedef struct tern_int_hop H;
	const size_t l3 = 14, udp = l3 + 20, shim = udp + 8;
	size_t at;

	F->int_bytes[dir] += *len;
	if (*len < shim + sizeof(struct tern_int_shim) || rd16be(f + 12) != 0x0800 ||
	    f[l3] != 0x45 || f[l3 + 9] != 17 || rd16be(f + udp + 2) != TERN_INT_UDP_DPORT ||
	    f[shim] != TERN_INT_TYPE_REQUEST || f[shim + 1] >= f[shim + 2] ||
	    f[shim + 2] > TERN_INT_MAX_HOPS)
		return;
	at = shim + sizeof(struct tern_int_shim) + (size_t)f[shim + 1] * sizeof(H);
	if (at > *len)
		return;
	memmove(f + at + sizeof(H), f + at, *len - at);
	wr32be(f + at + offsetof(H, ts_ns), (uint32_t)wire_now(w));
	wr32be(f + at + offsetof(H, tx_bytes), (uint32_t)F->int_bytes[dir]);
	wr32be(f + at + offsetof(H, qlen), (idx % 16) * 3000);
	wr32be(f + at + offsetof(H, rate_mbps), 25000);
	*len += sizeof(H);
	f[shim + 1]++;
	wr16be(f + udp + 4, (uint16_t)(rd16be(f + udp + 4) + sizeof(H)));
	wr16be(f + l3 + 2, (uint16_t)(rd16be(f + l3 + 2) + sizeof(H)));
	wr16be(f + l3 + 10, 0);
	wr16be(f + l3 + 10, (uint16_t)~ref_fold(ref_sum(0, f + l3, 20)));
	wr16be(f + udp + 6, 0);
}

static enum wire_action filter(struct wire *w, unsigned int dir, unsigned int idx,
			       uint8_t *frame, size_t *len)
{
	int_hop(w, dir, idx, frame, len);
	/*
	 * For the next 256 frames only: a pattern that reorders or duplicates every frame keeps
	 * go-back-N retransmitting forever, and the wire's pump lets no virtual time pass
	 */
	if (F->filtered >= 256)
		return W_DELIVER;
	F->filtered++;
	return (enum wire_action)((F->pattern >> (2 * (idx % 4))) & 3);
}
#endif

/* ---- Ethernet -------------------------------------------------------------------------------- */

static void rx_refill(struct rdev *d, struct drv_ring *q, unsigned int n)
{
	while (n--) {
		uint8_t *e = drv_ring_entry(&d->f, q, q->pi);

		memset(e, 0, 16);
		wr64(e + OFF(struct tern_eth_rxd, addr), fk_alloc_data(&d->f, RX_BUF, 64));
		wr16(e + OFF(struct tern_eth_rxd, buf_len), RX_BUF);
		q->pi++;
	}
	drv_ethq_arm(&d->f, q, true);
	db(&d->f, TERN_DB_ETH_RXQ(q->num), q->pi & TERN_ETH_DB_PI_MASK);
}

static int set_rss(struct rdev *d, struct side *s, uint32_t fields, unsigned int seed)
{
	uint8_t in[sizeof(struct tern_cmd_set_rss_in)];
	unsigned int i;

	memset(in, 0, sizeof(in));
	wr32(in, fields);
	for (i = 0; i < TERN_RSS_KEY_SIZE; i++)
		in[8 + i] = (uint8_t)(i * 37 + seed);
	for (i = 0; i < TERN_RSS_INDIR_SIZE; i++)
		in[8 + TERN_RSS_KEY_SIZE + i] = (uint8_t)s->rxq[(i + seed) % NRXQ].num;
	return drv_cmd(&d->f, TERN_CMD_SET_RSS, in, sizeof(in), NULL, 0, NULL);
}

static bool eth_up(struct rdev *d, struct side *s, unsigned int cfg)
{
	unsigned int q;

	if (drv_set_port(&d->f, TERN_PORT_F_LRO | ((cfg & 1) ? TERN_PORT_F_PROMISC : 0) |
			 ((cfg & 16) ? TERN_PORT_F_RX_TS : 0),
			 (cfg & 2) ? 9000 : 1500, d->mac) != TERN_CMD_OK ||
	    drv_ethq_create(&d->f, &s->txq, false, 6, d->comp_eq.num, cfg & 4) != TERN_CMD_OK)
		return false;
	for (q = 0; q < NRXQ; q++) {
		if (drv_ethq_create(&d->f, &s->rxq[q], true, 6, d->comp_eq.num, cfg & 8) !=
		    TERN_CMD_OK)
			return false;
		rx_refill(d, &s->rxq[q], 48);
	}
	s->frame = fk_alloc_data(&d->f, 0x10000, 4096);
	s->eth_ok = set_rss(d, s, TERN_RSS_HASH_ALL, 0) == TERN_CMD_OK;
	return s->eth_ok;
}

/*
 * A TCP or UDP frame to @d's MAC (or broadcast) from the peer's: @spec bit 0 IPv6, 1 VLAN,
 * 2 UDP, 3 bad L4 checksum, 4 broadcast, 5 IPv4 options, 7:6 flow; @pay bytes of payload.
 * TCP sequence numbers follow on per flow (so receive coalescing has something to merge).
 */
static size_t make_frame(uint8_t *f, struct rdev *d, struct side *s, unsigned int spec,
			 size_t pay)
{
	bool v6 = spec & 1, vlan = spec & 2, udp = spec & 4, opt = !v6 && (spec & 32);
	size_t l3 = vlan ? 18 : 14, ihl = v6 ? 40 : (opt ? 24 : 20), l4 = l3 + ihl;
	size_t th = udp ? 8 : 20, len, i;
	unsigned int flow = (spec >> 6) & 3;
	uint8_t *ip = f + l3, *t = f + l4;
	uint32_t sum;

	if (l4 + th + pay > FRAME_BYTES)
		pay = FRAME_BYTES - l4 - th;
	len = l4 + th + pay;
	memset(f, 0, len < 60 ? 60 : len);
	if (spec & 16)
		memset(f, 0xff, 6);
	else
		memcpy(f, d->mac, 6);
	memcpy(f + 6, "\x02\x99\x88\x77\x66\x55", 6);
	if (vlan) {
		wr16be(f + 12, 0x8100);
		wr16be(f + 14, (uint16_t)(0x2000 | (flow + 1)));
	}
	wr16be(f + l3 - 2, v6 ? 0x86dd : 0x0800);
	if (v6) {
		ip[0] = 0x60;
		wr16be(ip + 4, (uint16_t)(th + pay));
		ip[6] = udp ? 17 : 6;
		ip[7] = 64;
		ip[23] = (uint8_t)(1 + flow);
		ip[39] = 2;
		ip[8] = ip[24] = 0xfe;
		ip[9] = ip[25] = 0x80;
	} else {
		ip[0] = (uint8_t)(0x40 | ihl / 4);
		wr16be(ip + 2, (uint16_t)(ihl + th + pay));
		ip[6] = 0x40;
		ip[8] = 64;
		ip[9] = udp ? 17 : 6;
		wr32be(ip + 12, 0x0a000001 + flow);
		wr32be(ip + 16, 0x0a000002);
		if (opt)
			memset(ip + 20, 1, 4);	/* NOP NOP NOP NOP */
		wr16be(ip + 10, (uint16_t)~ref_fold(ref_sum(0, ip, ihl)));
	}
	wr16be(t, (uint16_t)(40000 + flow));
	wr16be(t + 2, 5201);
	if (udp) {
		wr16be(t + 4, (uint16_t)(8 + pay));
	} else {
		wr32be(t + 4, s->seq[flow]);
		s->seq[flow] += (uint32_t)pay;
		t[12] = 5 << 4;
		t[13] = 0x10;		/* ACK */
		wr16be(t + 14, 65535);
	}
	for (i = 0; i < pay; i++)
		t[th + i] = (uint8_t)(i * 131 + flow);
	sum = v6 ? ref_sum(0, ip + 8, 32) : ref_sum(0, ip + 12, 8);
	sum += (udp ? 17u : 6u) + (uint32_t)(th + pay);
	wr16be(t + (udp ? 6 : 16),
	       (uint16_t)(~ref_fold(ref_sum(sum, t, th + pay)) + ((spec & 8) ? 1 : 0)));
	return len < 60 ? 60 : len;
}

/* 'e': a context descriptor and up to 4 data descriptors of any fields, rung. */
static void eth_tx(struct rdev *d, struct side *s, struct in *in)
{
	unsigned int n = take(in, 1), i, k = n & 7, spec = take(in, 1);
	size_t len = make_frame(F->frame, d, s, spec, take(in, 2) % 8192);
	uint8_t *e = fk_ptr(&d->f, s->frame, 0x10000);

	if (e)
		memcpy(e, F->frame, len);
	if (n & 0x80) {		/* the offload context */
		e = drv_ring_entry(&d->f, &s->txq, s->txq.pi++);
		wr16(e + OFF(struct tern_eth_txd_ctx, csum_start), (uint16_t)take(in, 1));
		wr16(e + OFF(struct tern_eth_txd_ctx, csum_offset), (uint16_t)take(in, 1));
		wr16(e + OFF(struct tern_eth_txd_ctx, mss), (uint16_t)take(in, 2));
		wr16(e + OFF(struct tern_eth_txd_ctx, ctx_flags), (uint16_t)take(in, 1));
		wr16(e + OFF(struct tern_eth_txd_ctx, rsvd0), 0);
		wr16(e + OFF(struct tern_eth_txd_ctx, flags), TERN_ETH_TXD_CTX);
		wr16(e + OFF(struct tern_eth_txd_ctx, rsvd1), 0);
		wr16(e + OFF(struct tern_eth_txd_ctx, status), 0);
	}
	for (i = 0; i <= k; i++) {
		unsigned int off = take(in, 2), l = take(in, 2), fl = take(in, 1);

		e = drv_ring_entry(&d->f, &s->txq, s->txq.pi++);
		memset(e, 0, 16);
		/* 0 asks for the frame in (at most 8) equal pieces */
		if (!l) {
			off = (unsigned int)(i * (len / (k + 1)));
			l = (unsigned int)(i == k ? len - off : len / (k + 1));
			fl = i < k ? TERN_ETH_TXD_MORE : 0;
		}
		wr64(e + OFF(struct tern_eth_txd, addr), s->frame + (off & 0xffff));
		wr16(e + OFF(struct tern_eth_txd, len), (uint16_t)l);
		wr16(e + OFF(struct tern_eth_txd, flags), (uint16_t)fl);
	}
	if (!(n & 0x40))
		drv_ethq_arm(&d->f, &s->txq, false);
	db(&d->f, TERN_DB_ETH_TXQ(s->txq.num), s->txq.pi & TERN_ETH_DB_PI_MASK);
}

/* 'x': a frame from the wire, mutated at up to 15 places. */
static void eth_rx(struct rdev *d, struct side *s, struct in *in)
{
	unsigned int spec = take(in, 1), n, i;
	size_t len = make_frame(F->frame, d, s, spec, take(in, 2) % 9000);

	if ((spec & 0x21) == 0x21) {	/* a MAC control frame: PAUSE or PFC */
		static const uint8_t pause_da[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };

		len = 60;
		memcpy(F->frame, pause_da, 6);
		wr16be(F->frame + 12, 0x8808);
		wr16be(F->frame + 14, (spec & 4) ? 0x0101 : 0x0001);
		wr16be(F->frame + 16, (spec & 8) ? 0x00ff : 0xffff);	/* PFC: the enable vector */
		for (i = 18; i < 34; i += 2)
			wr16be(F->frame + i, (uint16_t)((spec & 0x10) ? 0 : 0xffff));
	}

	n = take(in, 1) & 15;
	for (i = 0; i < n; i++) {
		unsigned int off = take(in, 1), x = take(in, 1);

		F->frame[off % len] ^= (uint8_t)x;
	}
	tern_model_rx_frame(d->f.m, F->frame, len);
}

/* ---- memory the guest owns ------------------------------------------------------------------ */

/* Host memory of target @mem of side @dev: *len bytes at the pointer (NULL: none). */
static uint8_t *guest_mem(unsigned int dev, unsigned int mem, size_t *len)
{
	struct rdev *d = F->c.d[dev];
	struct side *s = &F->s[dev];
	const struct qmem *q = NULL;
	const struct drv_ring *r = NULL;

	if (!d)
		return NULL;
	switch (mem % 14) {
	case 0:
		q = &F->c.qp[dev].sq;
		break;
	case 1:
		q = &F->c.qp[dev].rq;
		break;
	case 2:
		q = s->ud_ok ? &s->ud.sq : NULL;
		break;
	case 3:
		q = s->ud_ok ? &s->ud.rq : NULL;
		break;
	case 4:
		q = s->srq_ok ? &s->srq.mem : NULL;
		break;
	case 5:
		q = &F->c.cq[dev].mem;
		break;
	case 6:
		r = &d->async_eq;
		break;
	case 7:
		r = &d->comp_eq;
		break;
	case 8:
		r = s->eth_ok ? &s->txq : NULL;
		break;
	case 9:
		r = s->eth_ok ? &s->rxq[0] : NULL;
		break;
	case 10:
		if (!s->mr_ok || !s->mr.npages)
			return NULL;
		*len = s->mr.npages * 8;
		return fk_ptr(&d->f, s->mr.pbl, *len);
	case 11:
		q = s->sud_ok ? &s->sud.sq : NULL;
		break;
	case 12:
		*len = 64u << d->f.cmd_log;	/* the command queue */
		return fk_ptr(&d->f, d->f.sq, *len);
	default:
		*len = 16u << d->f.cmd_log;
		return fk_ptr(&d->f, d->f.cq, *len);
	}
	if (q && q->size) {
		/* page lists: the first page only */
		*len = q->page_list ? 4096 : q->size;
		return fk_ptr(&d->f, q->page_list ? q->pages[0] : q->base, *len);
	}
	if (r && r->log) {
		*len = r->page_list ? 4096 : (size_t)r->entry << r->log;
		return drv_ring_entry(&d->f, r, 0);
	}
	return NULL;
}

static uint64_t any_addr(struct rdev *d, unsigned int kind, unsigned int off)
{
	switch (kind % 4) {
	case 0:		/* registers */
		return FK_SELF_BASE + (off & 0x3ff8);
	case 1:		/* doorbells: page 0 and the first UARs */
		return FK_SELF_BASE + FK_SELF_DB + (off & 0x3ff8);
	case 2:
		return FK_LOW_BASE + off;
	default:
		(void)d;
		return FK_BAD_ADDR + off;
	}
}

/* ---- RDMA ------------------------------------------------------------------------------------ */

static struct rqp *qp_of(unsigned int dev, unsigned int q)
{
	struct side *s = &F->s[dev];

	switch (q % 3) {
	case 1:
		return s->ud_ok ? &s->ud : NULL;
	case 2:
		return s->sud_ok ? &s->sud : NULL;
	default:
		return &F->c.qp[dev];
	}
}

/* Multicast group @k (0..7): 239.1.0.k as an IPv4-mapped GID, or ff0e::1:k over IPv6. */
static void group_gid(unsigned int k, uint8_t *gid)
{
	memset(gid, 0, 16);
	if (F->c.o.ip_version == 6) {
		gid[0] = 0xff;
		gid[1] = 0x0e;
		gid[13] = 1;
	} else {
		gid[10] = 0xff;
		gid[11] = 0xff;
		gid[12] = 239;
		gid[13] = 1;
	}
	gid[15] = (uint8_t)(k & 7);
}

static void post(unsigned int dev, struct in *in)
{
	unsigned int q = take(in, 1), op = take(in, 1), fl = take(in, 1), len = take(in, 2);
	struct rdev *d = F->c.d[dev];
	struct side *s = &F->s[dev], *p = &F->s[!dev];
	struct rqp *qp = qp_of(dev, q);
	struct sge sg;

	if (!qp || !s->mr_ok || !p->mr_ok)
		return;
	sg = mr_sge(&s->mr, (len >> 4) & 0xff8, len % (MR_LEN / 2));
	if (q % 3 && (fl & 0x40)) {
		/* UD to multicast group fl >> 3 & 7 (DestQP 0xffffff, or any with bit 2) */
		uint8_t gid[16];

		group_gid(fl >> 3, gid);
		post_ud_send_gid(d, qp, F->c.d[!dev], &F->c.o, op,
				 (fl & 4) ? (uint32_t)len << 8 | op : 0xffffff,
				 (op & 2) ? UD_QKEY : op, &sg, gid);
	} else if (q % 3) {
		/* UD: to the peer's UD QP or its SRQ one, a length of any size */
		post_ud_send(d, qp, F->c.d[!dev], &F->c.o, op, (op & 1) ? p->sud.qpn : p->ud.qpn,
			     (op & 2) ? UD_QKEY : op, &sg);
	} else if ((op & 0x7f) == TERN_WQE_REG_MR && s->frkey) {
		post_reg(d, qp, op, s->frkey, &s->mr, s->mr.iova + (len & 0xf000), len << 4,
			 (uint32_t)(fl & 31), (uint8_t)fl);
	} else if ((op & 0x7f) == TERN_WQE_BIND_MW && s->mwkey) {
		post_bind(d, qp, op, s->mwkey, &s->mr, len & 0x7fff, (len >> 2) + (fl << 8),
			  (uint8_t)fl);
	} else if (((op & 0x7f) == TERN_WQE_ATOMIC_CMP_SWP ||
		    (op & 0x7f) == TERN_WQE_ATOMIC_FETCH_ADD) && !(fl & 0x40)) {
		/* an atomic as a driver writes it: its segment, one 8-byte SGE */
		sg.len = 8;
		post_atomic_ex(d, qp, (uint8_t)(op & 0x7f), (uint8_t)(fl & 0x3f), op, &sg, 1,
			       p->mr.iova + ((len * 8) % MR_LEN), p->mr.key, len, op);
	} else {
		uint32_t rkey = (op & 0x40) ? p->mwkey : (op & 0x20) ? p->frkey : p->mr.key;

		post_send(d, qp, (uint8_t)(op & 0x9f), (uint8_t)(fl & 0x7f), op, &sg,
			  (fl & 0x40) ? 0 : 1, p->mr.iova + ((len * 8) % MR_LEN), rkey, len);
	}
	if (!(fl & 0x80))
		ring_sq(d, qp);
}

static void post_rq(unsigned int dev, unsigned int q)
{
	struct rdev *d = F->c.d[dev];
	struct side *s = &F->s[dev];
	struct sge sg;

	if (!s->mr_ok)
		return;
	sg = mr_sge(&s->mr, (q >> 2) * 1024 % MR_LEN, 4096 + 40);
	if (q % 3 == 2 && s->srq_ok) {
		srq_post(d, &s->srq, q, &sg, 1);
		srq_ring(d, &s->srq);
		if (s->srq.rec)
			srq_rec_write(d, &s->srq, s->srq.pi);
	} else if (q % 3 == 1 && s->ud_ok) {
		post_recv(d, &s->ud, q, &sg, 1);
		ring_rq(d, &s->ud);
	} else if (q % 3 == 0) {
		post_recv(d, &F->c.qp[dev], q, &sg, 1);
		ring_rq(d, &F->c.qp[dev]);
		if (F->c.qp[dev].flags & TERN_QP_F_RQ_DB_REC)
			rq_rec_write(d, &F->c.qp[dev], F->c.qp[dev].rq_pi);
	}
}

static void modify(unsigned int dev, unsigned int how)
{
	struct side *s = &F->s[dev];

	if (how % 7 < 5)
		fuzz_modify_qp(F->c.d[dev], F->c.qp[dev].qpn, how, 6);
	else if (how % 7 == 5 && s->ud_ok)
		ud_modify(F->c.d[dev], s->ud.qpn, TERN_QP_ATTR_STATE, (uint8_t)(how >> 4), 0, 0,
			  NULL);
	else if (how % 7 == 6 && s->sud_ok)
		ud_modify(F->c.d[dev], s->sud.qpn, TERN_QP_ATTR_STATE, (uint8_t)(how >> 4), 0, 0,
			  NULL);
}

/* A DESTROY_* command of object @num (refused while in use, or taking it away mid-script). */
static void destroy(struct rdev *d, uint16_t op, uint32_t num)
{
	uint8_t in[4];

	wr32(in, num);
	rdev_cmd(d, op, in, 4, NULL, 0, NULL);
}

/* The storm guard at @ms over a 32 KiB buffer: XOFF at 16 KiB, XON at 8 KiB. */
static void dcb_storm(struct rdev *d, unsigned int ms)
{
	typedef struct tern_dcb_cfg T;
	uint8_t cfg[sizeof(T)];

	if (rdev_cmd(d, TERN_CMD_QUERY_DCB, NULL, 0, cfg, sizeof(cfg), NULL) != TERN_CMD_OK)
		return;
	wr32(cfg + offsetof(T, pfc_storm_ms), ms);
	wr32(cfg + offsetof(T, rx_buf_bytes), 32u << 10);
	wr32(cfg + offsetof(T, xoff_bytes), 16u << 10);
	wr32(cfg + offsetof(T, xon_bytes), 8u << 10);
	rdev_cmd(d, TERN_CMD_SET_DCB, cfg, sizeof(cfg), NULL, 0, NULL);
}

/* Where the device's DMA faults (the fake host's one range): @how % 8 is none, the RC/UC
 * SQ, the CQ, the Ethernet TX ring or RX ring 0 (the first page of a paged one); 5-7: the SQ. */
static void dma_fault(unsigned int dev, unsigned int how)
{
	struct rdev *d = F->c.d[dev];
	struct side *s = &F->s[dev];
	const struct drv_ring *r = NULL;
	const struct qmem *q = NULL;
	uint64_t a = 0;
	size_t n = 0;

	switch (how % 8) {
	case 0:
		break;
	case 2:
		q = F->c.cq[dev].mem.size ? &F->c.cq[dev].mem : NULL;
		break;
	case 3:
		r = s->eth_ok ? &s->txq : NULL;
		break;
	case 4:
		r = s->eth_ok ? &s->rxq[0] : NULL;
		break;
	default:
		q = F->c.qp[dev].sq.size ? &F->c.qp[dev].sq : NULL;
		break;
	}
	if (q && q->page_list && q->npages) {
		a = q->pages[0];
		n = 4096;
	} else if (q) {
		a = q->base;
		n = q->size;
	} else if (r && r->page_list && r->npages) {
		a = r->pages[0];
		n = 4096;
	} else if (r) {
		a = r->addr;
		n = (size_t)r->entry << r->log;
	}
	d->f.fault_lo = a;
	d->f.fault_hi = a + n;
}

/* 'c': the other commands and doorbells a driver uses while running. */
static void control(unsigned int dev, unsigned int how, unsigned int arg)
{
	struct rdev *d = F->c.d[dev];
	struct side *s = &F->s[dev];
	uint8_t in[16], out[512];

	if ((how % 23 <= 2 || (how % 23 >= 10 && how % 23 <= 16) || how % 23 >= 21) &&
	    !F->c.cq[dev].mem.size)
		return;		/* fuzz-eth: no RDMA objects */
	memset(in, 0, sizeof(in));
	switch (how % 23) {
	case 0:
		wr32(in, F->c.cq[dev].cqn);
		wr16(in + 4, (uint16_t)(arg & 0xff));
		wr16(in + 6, (uint16_t)(arg >> 8));
		rdev_cmd(d, TERN_CMD_MODIFY_CQ, in, sizeof(struct tern_cmd_modify_cq_in), NULL, 0,
			 NULL);
		break;
	case 1:
		cq_resize(d, &F->c.cq[dev], 4 + arg % 8, arg & 0x100);
		break;
	case 2:		/* armed for the next CQE or the next solicited one, or any bits */
		cq_arm(d, &F->c.cq[dev], (arg & 2) ? (uint64_t)arg << 48 :
			(arg & 1) ? TERN_UDB_CQ_ARM_NEXT : TERN_UDB_CQ_ARM_SOLICITED);
		break;
	case 3:
		if (s->srq_ok) {
			wr32(in, s->srq.srqn);
			wr32(in + 4, arg);
			rdev_cmd(d, TERN_CMD_MODIFY_SRQ, in,
				 sizeof(struct tern_cmd_modify_srq_in), NULL, 0, NULL);
		}
		break;
	case 4:
		if (s->srq_ok && s->srq.rec)
			srq_rec_write(d, &s->srq, (uint16_t)arg);
		break;
	case 5:
		if (F->c.qp[dev].flags & TERN_QP_F_RQ_DB_REC)
			rq_rec_write(d, &F->c.qp[dev], (uint16_t)arg);
		break;
	case 6:
		drv_eq_arm(&d->f, (arg & 1) ? &d->comp_eq : &d->async_eq);
		break;
	case 7:
		if (s->eth_ok)
			set_rss(d, s, arg & 0x3f, arg >> 6);
		break;
	case 8:
		drv_set_port(&d->f, arg & 7, (uint16_t)(arg & 0x3fff), d->mac);
		break;
	case 9:
		if (s->eth_ok)
			rx_refill(d, &s->rxq[arg & 1], 1 + (arg >> 8) % 32);
		break;
	case 10:	/* QUERY_QP: the state, DCQCN's rate and HPCC's window too */
		qp_query(d, (arg & 1) && s->ud_ok ? s->ud.qpn : F->c.qp[dev].qpn, out);
		break;
	case 11:
		rdev_stats(d, out);
		break;
	case 12:
		if (s->ud_ok)
			destroy(d, TERN_CMD_DESTROY_QP, (arg & 1) && s->sud_ok ? s->sud.qpn : s->ud.qpn);
		break;
	case 13:
		if (s->srq_ok)
			destroy(d, TERN_CMD_DESTROY_SRQ, s->srq.srqn);
		break;
	case 14:
		destroy(d, TERN_CMD_DESTROY_CQ, F->c.cq[dev].cqn);
		break;
	case 15:
		destroy(d, TERN_CMD_DESTROY_PD, d->pdn);
		break;
	case 16:	/* the connected QP itself (a window may be bound through it) */
		destroy(d, TERN_CMD_DESTROY_QP, F->c.qp[dev].qpn);
		break;
	case 17:
		if (s->eth_ok)
			destroy(d, (arg & 2) ? TERN_CMD_DESTROY_ETH_TXQ : TERN_CMD_DESTROY_ETH_RXQ,
				(arg & 2) ? s->txq.num : s->rxq[arg & 1].num);
		break;
	case 18:
		destroy(d, TERN_CMD_DESTROY_EQ, (arg & 1) ? d->comp_eq.num : d->async_eq.num);
		break;
	case 19:	/* PFC on the priorities of @arg's low byte, DSCP trusted; a high byte
			 * turns the storm guard on (10 ms times it) over a small buffer */
		if (dcb_trust_dscp(d, (uint8_t)arg, NULL) == TERN_CMD_OK && arg >> 8)
			dcb_storm(d, 10 * (arg >> 8));
		break;
	case 21:	/* REREG_MR of the MR in use: any rights, this PD or none, its own key
			 * byte or another (the peer's WRITEs and READs through it go on) */
		if (s->mr_ok)
			mr_rereg(d, &s->mr, (arg & 0x8000) ? d->pdn + 1 : d->pdn, arg & 0x7f,
				 (arg & 0x4000) ? (uint8_t)(arg >> 7) : (uint8_t)s->mr.key, NULL);
		break;
	case 22:	/* ATTACH_MCAST (@arg bit 0 clear) or DETACH_MCAST of the UD QP (bit 1:
			 * the SRQ one) to group arg >> 2 & 7; bit 15: a GID and QPN of any bits */
		if (s->ud_ok) {
			uint8_t m[sizeof(struct tern_cmd_mcast_in)];

			memset(m, 0, sizeof(m));
			group_gid(arg >> 2, m + offsetof(struct tern_cmd_mcast_in, gid));
			wr32(m + offsetof(struct tern_cmd_mcast_in, qpn),
			     (arg & 2) && s->sud_ok ? s->sud.qpn : s->ud.qpn);
			if (arg & 0x8000) {
				m[offsetof(struct tern_cmd_mcast_in, gid) + (arg >> 5 & 15)] ^=
					(uint8_t)(arg >> 9);
				wr32(m + offsetof(struct tern_cmd_mcast_in, qpn),
				     (arg & 0x10) ? arg : 0x00ffffff);
			}
			rdev_cmd(d, (arg & 1) ? TERN_CMD_DETACH_MCAST : TERN_CMD_ATTACH_MCAST, m,
				 sizeof(m), NULL, 0, NULL);
		}
		break;
	default:	/* memory that faults for the device's DMA from now on */
		dma_fault(dev, arg);
		break;
	}
}

/* 'd': any doorbell or register, any value. */
static void doorbell(unsigned int dev, unsigned int kind, unsigned int off, uint64_t val)
{
	struct rdev *d = F->c.d[dev];

	switch (kind % 4) {
	case 0:		/* a UAR doorbell (64-bit) */
		db64(d, d->uar, off & 0xff8, val);
		break;
	case 1:		/* page 0 (32-bit) */
		db(&d->f, off & 0xffc, (uint32_t)val);
		break;
	case 2:		/* a register */
		wreg(&d->f, off & 0x3ffc, (uint32_t)val);
		break;
	default:	/* any doorbell page, any size */
		tern_model_mmio_write(d->f.m, TERN_BAR_DB, ((uint64_t)kind << 12 | off) & 0xfffff,
				      val, 1u << ((kind >> 2) & 3));
		break;
	}
}

static void drain(void)
{
	unsigned int s, n;
	struct wc w;
	uint8_t t;
	uint32_t d0;

	for (s = 0; s < F->ndev; s++) {
		struct rdev *d = F->c.d[s];

		for (n = 0; n < 256 && F->c.cq[s].mem.size && cq_poll(d, &F->c.cq[s], &w); n++)
			;
		for (n = 0; n < 256 && drv_eq_poll(&d->f, &d->comp_eq, &t, &d0); n++)
			;
		for (n = 0; n < 256 && drv_eq_poll(&d->f, &d->async_eq, &t, &d0); n++)
			;
	}
}

/* The objects' host memory freed; the devices stay (@drop: freed too, made anew next time). */
static void teardown(bool drop)
{
	unsigned int s;

	for (s = 0; s < 2; s++) {
		struct side *x = &F->s[s];

		mr_release(&x->mr);
		if (x->ud_ok) {
			qmem_free(&x->ud.sq);
			qmem_free(&x->ud.rq);
		}
		if (x->sud_ok)
			qmem_free(&x->sud.sq);
		if (x->srq_ok)
			qmem_free(&x->srq.mem);
	}
	if (F->c.d[1])
		conn_free_keep(&F->c);
	memset(&F->c, 0, sizeof(F->c));
	memset(F->s, 0, sizeof(F->s));
	for (s = 0; drop && s < 2; s++) {
		rdev_free(F->d[s]);
		F->d[s] = NULL;
	}
}

/* Device @i as rdev_new makes it: the one of the last input reset, or a new one. */
static struct rdev *device(unsigned int i)
{
	if (F->d[i] && !rdev_reset(F->d[i])) {
		rdev_free(F->d[i]);
		F->d[i] = NULL;
	}
	if (!F->d[i])
		F->d[i] = rdev_new(i);
	return F->d[i];
}

#ifndef FUZZ_ETH
static bool side_up(unsigned int dev, unsigned int cfg)
{
	struct rdev *d = F->c.d[dev];
	struct side *s = &F->s[dev];
	uint8_t cc[sizeof(struct tern_cc_params)];
	unsigned int i;
	struct sge sg;

	s->mr_ok = mr_create(d, &s->mr, d->pdn, MR_LEN, ALL_ACC | TERN_ACCESS_MW_BIND, 0) == 0;
	if (!s->mr_ok)
		return false;
	s->ud_ok = ud_create(d, &s->ud, TERN_QPT_UD, &F->c.cq[dev], 7, NULL) == TERN_CMD_OK &&
		   ud_up(d, &s->ud, UD_QKEY, 0);
	s->srq_ok = srq_create_ex(d, &s->srq, 6, 6, (cfg & 0x100) ? TERN_SRQ_F_DB_REC : 0) ==
		    TERN_CMD_OK;
	if (s->srq_ok)
		s->sud_ok = srq_qp_create_type(d, &s->sud, &F->c.cq[dev], s->srq.srqn,
					       TERN_QPT_UD, NULL) == TERN_CMD_OK &&
			    ud_up(d, &s->sud, UD_QKEY, 0);
	if (key_create(d, d->pdn, TERN_MR_F_FAST_REG, 16, &s->frkey) != TERN_CMD_OK)
		s->frkey = 0;
	if (key_create(d, d->pdn, TERN_MR_F_MW_TYPE2, 0, &s->mwkey) != TERN_CMD_OK)
		s->mwkey = 0;
	cc_defaults(cc);
	/* DCQCN (reaction and notification point) or HPCC with INT on every priority */
	if (cfg & 0x200) {
		cc[OFF(struct tern_cc_params, hpcc_en)] = 0xff;
	} else {
		cc[OFF(struct tern_cc_params, rp_en)] = 0xff;
		cc[OFF(struct tern_cc_params, np_en)] = 0xff;
	}
	cc_set(&d->f, cc, NULL);
	for (i = 0; i < 4; i++) {
		sg = mr_sge(&s->mr, MR_LEN / 2 + i * 4096, 4096);
		post_recv(d, &F->c.qp[dev], 100 + i, &sg, 1);
		sg = mr_sge(&s->mr, i * 4096, 4096 + 40);
		if (s->ud_ok)
			post_recv(d, &s->ud, 200 + i, &sg, 1);
		if (s->srq_ok)
			srq_post(d, &s->srq, 300 + i, &sg, 1);
	}
	ring_rq(d, &F->c.qp[dev]);
	if (F->c.qp[dev].flags & TERN_QP_F_RQ_DB_REC)
		rq_rec_write(d, &F->c.qp[dev], F->c.qp[dev].rq_pi);
	if (s->ud_ok)
		ring_rq(d, &s->ud);
	if (s->srq_ok) {
		srq_ring(d, &s->srq);
		if (s->srq.rec)
			srq_rec_write(d, &s->srq, s->srq.pi);
	}
	return eth_up(d, s, cfg >> 10);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	unsigned int cfg = take(&in, 2), steps, dev;
	struct connopt o;

	if (!F) {
		F = calloc(1, sizeof(*F));
		if (!F)
			abort();
	}
	connopt_default(&o);
	o.mtu = (uint8_t)(1 + cfg % 5);
	o.ip_version = (cfg & 0x8) ? 6 : 4;
	o.timeout = 8;
	o.retry_cnt = (uint8_t)((cfg >> 4) & 7);
	o.rnr_retry = (uint8_t)((cfg >> 4) & 7);
	o.access = ALL_ACC;
	o.uc = (cfg >> 15) & 1;
	o.page_list = (cfg >> 14) & 1;
	if (o.uc)
		o.access = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE;
	else if (cfg & 0x4)
		o.xport = TERN_QP_XPORT_SR;
	/* the adaptive retransmit timer on some RC runs, with either recovery */
	if (!o.uc && (cfg & 0x40))
		o.xport |= TERN_QP_XPORT_ADAPTIVE_RTO;
	if (cfg & 0x80)
		o.qp_flags |= TERN_QP_F_RQ_DB_REC;
#ifdef FUZZ_ETH
	F->ndev = 1;
	F->c.d[0] = device(0);
	if (!F->c.d[0] || !eth_up(F->c.d[0], &F->s[0], cfg)) {
		teardown(true);
		return 0;
	}
#else
	F->ndev = 2;
	if (!device(0) || !device(1) || !conn_setup_on(&F->c, F->d[0], F->d[1], &o) ||
	    !side_up(0, cfg) || !side_up(1, cfg)) {
		teardown(true);
		return 0;
	}
	F->c.w.filter = filter;
	fuzz_wire_bound(&F->c.w);
#endif
	for (dev = 0; dev < F->ndev; dev++) {
		fk_map_self(&F->c.d[dev]->f);	/* its own BARs in its DMA space */
		fk_run(&F->c.d[dev]->f);
	}
	F->pattern = 0;

	for (steps = 0; in.n && steps < 128; steps++) {
		unsigned int cmd = take(&in, 1), a, b;
		uint8_t *p;
		size_t len = 0;

		dev = take(&in, 1) % F->ndev;
#ifdef FUZZ_ETH
		if (!strchr("exwadmtc", cmd))
			continue;
#endif
		switch (cmd) {
		case 'p':
			post(dev, &in);
			break;
		case 'r':
			post_rq(dev, take(&in, 1));
			break;
		case 'w':
			a = take(&in, 1);
			b = take(&in, 2);
			p = guest_mem(dev, a, &len);
			if (p && len)
				p[b % len] ^= (uint8_t)take(&in, 1);
			break;
		case 'a':
			a = take(&in, 1);
			b = take(&in, 2);
			p = guest_mem(dev, a, &len);
			if (p && len >= 8) {
				unsigned int kind = take(&in, 1);

				wr64(p + (b % (len - 7) & ~7u), any_addr(F->c.d[dev], kind,
									take(&in, 2)));
			}
			break;
		case 'd':
			a = take(&in, 1);
			b = take(&in, 2);
			doorbell(dev, a, b, take64(&in));
			break;
		case 'm':
			a = take(&in, 1) % TERN_MAX_MSIX;
			F->c.d[dev]->f.msg_addr[a] = any_addr(F->c.d[dev], take(&in, 1),
							      take(&in, 2));
			F->c.d[dev]->f.msg_data[a] = take(&in, 4);
			break;
		case 't':
			a = take(&in, 2);
			if (F->ndev == 2)
				wire_advance(&F->c.w, (uint64_t)a * 256);
			else
				fk_advance(&F->c.d[0]->f, (uint64_t)a * 256);
			break;
		case 'f':
			F->pattern = (uint8_t)take(&in, 1);
			F->filtered = 0;
			break;
		case 's':
			modify(dev, take(&in, 1));
			break;
		case 'c':
			a = take(&in, 1);
			control(dev, a, take(&in, 2));
			break;
		case 'e':
			if (F->s[dev].eth_ok)
				eth_tx(F->c.d[dev], &F->s[dev], &in);
			break;
		case 'x':
			if (F->s[dev].eth_ok)
				eth_rx(F->c.d[dev], &F->s[dev], &in);
			break;
		default:
			break;
		}
		if (F->ndev == 2)
			wire_pump(&F->c.w);
		else
			fk_run(&F->c.d[0]->f);
		drain();
	}
	if (F->ndev == 2) {
		F->pattern = 0;
		wire_advance(&F->c.w, 2000000);
	} else {
		fk_advance(&F->c.d[0]->f, 2000000);
		fk_clear_frames(&F->c.d[0]->f);
	}
	drain();
	teardown(false);
	return 0;
}
