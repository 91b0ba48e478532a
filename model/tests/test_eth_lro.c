/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Receive coalescing (LRO; Documentation/hw/interface.rst "Receive coalescing (LRO)"): what
 * coalesces, what closes a segment, the write-back (descriptors, rewritten headers, the TCP
 * checksum over the whole segment), the limits, backpressure, LRO off, hostile frames and a
 * DMA fault. The checks use their own checksum code (lsum/lfold below), not the model's, and
 * compare with a second device that has coalescing off wherever the spec says "as without".
 */
#include <stdlib.h>

#include "tests.h"

#define RXD(f) OFF(struct tern_eth_rxd, f)
#define US 1000ull

static const uint8_t peer[6] = { 0x02, 0x77, 0x66, 0x55, 0x44, 0x33 };

/* ---- the tests' own Internet checksum (ref_sum in tests.h: word by word) ------------------ */

/* The @proto sum of an IPv4/IPv6 packet at @ip (@l4 bytes of L4 header and payload at @p). */
static uint16_t l4_sum(const uint8_t *ip, bool v6, uint8_t proto, const uint8_t *p, size_t l4)
{
	uint32_t s = v6 ? ref_sum(0, ip + 8, 32) : ref_sum(0, ip + 12, 8);

	s += proto + (uint32_t)(l4 >> 16) + (uint32_t)(l4 & 0xffff);
	return ref_fold(ref_sum(s, p, l4));
}

#define tcp_sum(ip, v6, p, l4) l4_sum(ip, v6, 6, p, l4)

/* ---- frames -------------------------------------------------------------------------------- */

/* The payload byte at TCP sequence number @s of the test streams. */
static uint8_t pay_byte(uint32_t s)
{
	return (uint8_t)(s * 131u + (s >> 8) * 7u + (s >> 13));
}

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10

struct fspec {
	bool v6;
	bool vlan;		/* an 802.1Q tag */
	bool ipopt;		/* IPv4 with 4 bytes of options */
	bool udp;
	bool bad_sum;		/* the TCP checksum off by one */
	bool noopt;		/* a TCP header without options (20 bytes) */
	uint16_t sport;
	uint32_t seq;
	size_t pay;
	uint8_t flags;
	uint16_t win;
	uint16_t id;		/* IPv4 identification */
};

#define TCP_HLEN 32		/* with NOP NOP TS (12 bytes of options) */

static size_t hdr_len(const struct fspec *s)
{
	return 14 + (s->vlan ? 4 : 0) + (s->v6 ? 40 : 20 + (s->ipopt ? 4 : 0)) +
	       (s->udp ? 8 : s->noopt ? 20 : TCP_HLEN);
}

/* Builds the frame @s describes into @f (at least 60 bytes, zero padded): its length. */
static size_t mkframe(uint8_t *f, const struct fspec *s)
{
	size_t l3 = 14 + (s->vlan ? 4 : 0), ihl = s->v6 ? 40 : 20 + (s->ipopt ? 4 : 0);
	size_t l4 = l3 + ihl, th = s->udp ? 8 : s->noopt ? 20 : TCP_HLEN;
	size_t len = l4 + th + s->pay, i;
	uint8_t *ip = f + l3, *t = f + l4;

	memset(f, 0, len < 60 ? 60 : len);
	memcpy(f, test_mac, 6);
	memcpy(f + 6, peer, 6);
	if (s->vlan) {
		wr16be(f + 12, 0x8100);
		wr16be(f + 14, 5);
	}
	wr16be(f + l3 - 2, s->v6 ? 0x86dd : 0x0800);
	if (s->v6) {
		ip[0] = 0x60;
		wr16be(ip + 4, (uint16_t)(th + s->pay));
		ip[6] = s->udp ? 17 : 6;
		ip[7] = 64;
		for (i = 0; i < 32; i++)
			ip[8 + i] = (uint8_t)(0xfd + i * 5);
	} else {
		ip[0] = (uint8_t)(0x40 | ihl / 4);
		wr16be(ip + 2, (uint16_t)(ihl + th + s->pay));
		wr16be(ip + 4, s->id);
		ip[6] = 0x40;				/* DF */
		ip[8] = 64;
		ip[9] = s->udp ? 17 : 6;
		memcpy(ip + 12, "\x0a\x00\x00\x02\x0a\x00\x00\x01", 8);
		if (s->ipopt)
			memset(ip + 20, 1, 4);		/* NOPs */
		wr16be(ip + 10, (uint16_t)~ref_fold(ref_sum(0, ip, ihl)));
	}
	wr16be(t, s->sport);
	wr16be(t + 2, 5201);
	for (i = 0; i < s->pay; i++)
		t[th + i] = pay_byte(s->seq + (uint32_t)i);
	if (s->udp) {
		wr16be(t + 4, (uint16_t)(th + s->pay));
		wr16be(t + 6, (uint16_t)~l4_sum(ip, s->v6, 17, t, th + s->pay));
		return len < 60 ? 60 : len;
	}
	wr32be(t + 4, s->seq);
	wr32be(t + 8, 0x01020304);
	t[12] = (uint8_t)((th / 4) << 4);
	t[13] = s->flags;
	wr16be(t + 14, s->win);
	if (s->noopt)
		goto sum;
	t[20] = 1;
	t[21] = 1;
	t[22] = 8;
	t[23] = 10;
	wr32be(t + 24, 0xa1b2c3d4);
	wr32be(t + 28, 0x00c0ffee);
sum:
	wr16be(t + 16, (uint16_t)(~tcp_sum(ip, s->v6, t, th + s->pay) + (s->bad_sum ? 1 : 0)));
	return len < 60 ? 60 : len;
}

/* ---- a device with one RX queue ------------------------------------------------------------- */

#define FX_BUFS 4096

struct fx {
	struct fake f;
	struct drv_ring eq, rx;
	uint64_t buf[FX_BUFS];		/* descriptor i's buffer at i % FX_BUFS */
	unsigned int next;		/* the next descriptor to check */
};

static void fx_post(struct fx *x, unsigned int n, uint16_t blen)
{
	while (n--) {
		uint8_t *d = drv_ring_entry(&x->f, &x->rx, x->rx.pi);
		uint64_t a = fk_alloc_data(&x->f, blen ? blen : 1, 64);

		x->buf[x->rx.pi % FX_BUFS] = a;
		memset(d, 0, 16);
		wr64(d + RXD(addr), a);
		wr16(d + RXD(buf_len), blen);
		x->rx.pi++;
	}
	drv_ethq_arm(&x->f, &x->rx, true);
	db(&x->f, TERN_DB_ETH_RXQ(x->rx.num), x->rx.pi & TERN_ETH_DB_PI_MASK);
	fk_run(&x->f);
}

static bool fx_init(struct fx *x, uint32_t port_flags, uint16_t mtu, unsigned int log,
		    unsigned int nbufs, uint16_t blen)
{
	memset(x, 0, sizeof(*x));
	fk_init(&x->f, false);
	if (!drv_cmdq_enable(&x->f, 4) || drv_eq_create(&x->f, &x->eq, 12, 1, 0, false))
		return false;
	if (drv_set_port(&x->f, port_flags, mtu, test_mac) != TERN_CMD_OK)
		return false;
	if (drv_ethq_create(&x->f, &x->rx, true, log, x->eq.num, false) != TERN_CMD_OK)
		return false;
	drv_eq_arm(&x->f, &x->eq);
	fx_post(x, nbufs, blen);
	return true;
}

static uint8_t *rxd(struct fx *x, unsigned int i)
{
	return drv_ring_entry(&x->f, &x->rx, i);
}

static uint16_t rxd_status(struct fx *x, unsigned int i)
{
	return rd16(rxd(x, i) + RXD(status));
}

static uint16_t rxd_len(struct fx *x, unsigned int i)
{
	return rd16(rxd(x, i) + RXD(pkt_len));
}

static const uint8_t *rx_buf(struct fx *x, unsigned int i, size_t len)
{
	return fk_ptr(&x->f, x->buf[i % FX_BUFS], len ? len : 1);
}

static unsigned int rx_events(struct fx *x)
{
	unsigned int n = 0;
	uint8_t type;
	uint32_t d0;

	while (drv_eq_poll(&x->f, &x->eq, &type, &d0))
		if (type == TERN_EQE_ETH_RXQ && d0 == x->rx.num)
			n++;
	return n;
}

static size_t rx(struct fx *x, const uint8_t *fr, size_t len)
{
	return tern_model_rx_frame(x->f.m, fr, len);
}

/* Sends frame @s: its length (checked to be taken). */
static size_t send(struct fx *x, const struct fspec *s)
{
	uint8_t fr[9700];
	size_t len = mkframe(fr, s);

	CHECK_EQ(rx(x, fr, len), len);
	return len;
}

static uint64_t stat(struct fx *x, size_t off)
{
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)];

	if (!drv_eth_stats(&x->f, st))
		return ~0ull;
	return rd64(st + off);
}

#define XSTAT(x, field) stat(x, OFF(struct tern_cmd_eth_stats_out, field))

/*
 * Checks the coalesced segment at descriptor x->next of @nframes frames of @mss from sequence
 * number @s->seq (@total payload bytes), first IPv4 ID @s->id, PSH @psh, window @win: the
 * descriptors, the bytes, the rewritten headers and the TCP checksum. Moves x->next past it.
 */
static void check_seg(struct fx *x, const struct fspec *s, size_t total, uint16_t mss,
		      bool psh, uint16_t win)
{
	size_t hl = hdr_len(s), l3 = 14, l4 = l3 + (s->v6 ? 40 : 20), got = 0, n;
	unsigned int d = x->next, i = d;
	uint8_t *seg = malloc(hl + total + 1);
	const uint8_t *b;
	uint16_t st;

	REQUIRE(seg);
	st = rxd_status(x, d);
	CHECK_EQ(st & ~TERN_ETH_RXD_MORE, TERN_ETH_DESC_DONE | TERN_ETH_RXD_LRO |
		 TERN_ETH_RXD_CSUM_OK);
	CHECK_EQ(rd16(rxd(x, d) + RXD(lro_mss)), mss);
	n = rxd_len(x, d);
	if (n < hl || n - hl > total) {
		CHECK(!"first buffer length");
		free(seg);
		return;
	}
	b = rx_buf(x, d, n);
	REQUIRE(b);
	memcpy(seg, b, n);
	got = n - hl;
	/* RXD_MORE on the first when the segment takes more than its buffer */
	CHECK_EQ(!!(st & TERN_ETH_RXD_MORE), got < total);
	while ((st & TERN_ETH_RXD_MORE) && i - d < 64) {
		i++;
		st = rxd_status(x, i);
		n = rxd_len(x, i);
		if (got + n > total || !(st & TERN_ETH_DESC_DONE)) {
			CHECK(!"continuation buffers");
			free(seg);
			return;
		}
		CHECK_EQ(st & ~TERN_ETH_RXD_MORE, TERN_ETH_DESC_DONE);
		b = rx_buf(x, i, n);
		REQUIRE(b);
		memcpy(seg + hl + got, b, n);
		got += n;
	}
	CHECK_EQ(got, total);
	x->next = i + 1;
	for (n = 0; n < total; n++)
		if (seg[hl + n] != pay_byte(s->seq + (uint32_t)n))
			break;
	CHECK_EQ(n, total);
	CHECK(!memcmp(seg, test_mac, 6) && !memcmp(seg + 6, peer, 6));
	if (s->v6) {
		CHECK_EQ(rd16be(seg + l3 + 4), TCP_HLEN + total);
	} else {
		CHECK_EQ(rd16be(seg + l3 + 2), 20 + TCP_HLEN + total);
		CHECK_EQ(rd16be(seg + l3 + 4), s->id);
		CHECK_EQ(seg[l3 + 6], 0x40);
		CHECK_EQ(ref_fold(ref_sum(0, seg + l3, 20)), 0xffff);
	}
	CHECK_EQ(rd32be(seg + l4 + 4), s->seq);
	CHECK_EQ(seg[l4 + 13], TCP_ACK | (psh ? TCP_PSH : 0));
	CHECK_EQ(rd16be(seg + l4 + 14), win);
	CHECK_EQ(seg[l4 + 22], 8);				/* the options as sent */
	CHECK_EQ(rd32be(seg + l4 + 24), 0xa1b2c3d4);
	CHECK_EQ(tcp_sum(seg + l3, s->v6, seg + l4, TCP_HLEN + total), 0xffff);
	free(seg);
}

/* Checks that descriptor x->next holds frame @fr as a plain frame with @status; moves on. */
static void check_plain(struct fx *x, const uint8_t *fr, size_t len, uint16_t status)
{
	unsigned int d = x->next++;
	const uint8_t *b;

	CHECK_EQ(rxd_status(x, d), status);
	CHECK_EQ(rxd_len(x, d), len);
	b = rx_buf(x, d, len);
	CHECK(b && !memcmp(b, fr, len));
}

static const uint16_t OK = TERN_ETH_DESC_DONE | TERN_ETH_RXD_CSUM_OK;

/* ---- tests ---------------------------------------------------------------------------------- */

/* @n back-to-back frames of @mss, then the timer: one segment, counted, one event. */
static void basic_case(bool v6, uint16_t mss, unsigned int n)
{
	struct fx x;
	struct fspec s = { .v6 = v6, .sport = 40001, .seq = 0xfffff000u - 3000, .pay = mss,
			   .flags = TCP_ACK, .id = 0x4321 };
	struct fspec first;
	uint64_t bytes = 0;
	unsigned int i;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 8, 200, 2048));
	first = s;
	for (i = 0; i < n; i++) {
		s.win = (uint16_t)(1000 + i);
		bytes += send(&x, &s);
		s.seq += mss;
		s.id++;
	}
	/* nothing written back yet, no event */
	CHECK_EQ(rxd_status(&x, 0), 0);
	CHECK_EQ(rx_events(&x), 0);
	fk_advance(&x.f, (TERN_ETH_LRO_TIMEOUT_US + 1) * US);
	check_seg(&x, &first, (size_t)n * mss, mss, false, (uint16_t)(1000 + n - 1));
	CHECK_EQ(rxd_status(&x, x.next), 0);
	CHECK_EQ(rx_events(&x), 1);
	CHECK_EQ(XSTAT(&x, rx_lro_frames), n);
	CHECK_EQ(XSTAT(&x, rx_lro_segments), 1);
	CHECK_EQ(XSTAT(&x, rx_frames), n);
	CHECK_EQ(XSTAT(&x, rx_bytes), bytes);
	CHECK_EQ(XSTAT(&x, rx_csum_bad), 0);
	fk_fini(&x.f);
}

static void t_basic_v4(void)
{
	basic_case(false, 1448, 20);
	basic_case(false, 1001, 7);	/* an odd MSS: payload at odd offsets in the sum */
	basic_case(false, 1, 2);	/* MSS 1, frames padded to 60 bytes */
}

static void t_basic_v6(void)
{
	basic_case(true, 1428, 20);
	basic_case(true, 777, 9);
}

/* PSH or a short frame closes the segment at once; the stream goes on in a new one. */
static void t_close(void)
{
	struct fx x;
	struct fspec s = { .sport = 40002, .seq = 1000, .pay = 1448, .flags = TCP_ACK,
			   .win = 300, .id = 7 };
	struct fspec first = s;
	unsigned int i;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 8, 200, 2048));
	for (i = 0; i < 5; i++) {
		if (i == 4)
			s.flags |= TCP_PSH;
		send(&x, &s);
		s.seq += 1448;
		s.id++;
	}
	check_seg(&x, &first, 5 * 1448, 1448, true, 300);
	/* a short frame (no PSH) */
	s.flags = TCP_ACK;
	first = s;
	for (i = 0; i < 4; i++) {
		s.pay = i == 3 ? 700 : 1448;
		send(&x, &s);
		s.seq += (uint32_t)s.pay;
		s.id++;
	}
	check_seg(&x, &first, 3 * 1448 + 700, 1448, false, 300);
	CHECK_EQ(rxd_status(&x, x.next), 0);
	CHECK_EQ(XSTAT(&x, rx_lro_segments), 2);
	CHECK_EQ(XSTAT(&x, rx_lro_frames), 9);
	/* a frame with PSH never opens a segment: it is received at once */
	s.pay = 1448;
	s.flags = TCP_ACK | TCP_PSH;
	{
		uint8_t fr[2048];
		size_t len = mkframe(fr, &s);

		CHECK_EQ(rx(&x, fr, len), len);
		check_plain(&x, fr, len, OK);
	}
	fk_fini(&x.f);
}

#define NBREAK 17

/*
 * Frames that do not continue the open segment: it is written back first (3 frames), then
 * the frame as a device without coalescing receives it (compared with one).
 */
static void t_breakers(void)
{
	struct fx x, ref;
	unsigned int k;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 8, 200, 2048));
	REQUIRE(fx_init(&ref, 0, 1500, 8, 200, 2048));
	for (k = 0; k < NBREAK; k++) {
		struct fspec s = { .sport = 41000, .seq = 5000 + k * 100000, .pay = 1448,
				   .flags = TCP_ACK, .win = 77, .id = (uint16_t)(k * 10) };
		struct fspec first = s, b;
		uint8_t fr[2048];
		size_t len;
		unsigned int i;
		uint16_t want;

		for (i = 0; i < 3; i++) {
			send(&x, &s);
			s.seq += 1448;
			s.id++;
		}
		b = s;
		switch (k) {
		case 0:
			b.seq += 1;			/* a gap */
			break;
		case 1:
			b.sport++;			/* another flow */
			break;
		case 2:
			b.flags = TCP_SYN | TCP_ACK;
			break;
		case 3:
			b.flags = TCP_FIN | TCP_ACK;
			break;
		case 4:
			b.flags = TCP_RST | TCP_ACK;
			break;
		case 5:
			b.bad_sum = true;
			break;
		case 6:
			b.vlan = true;
			break;
		case 7:
			b.ipopt = true;
			break;
		case 8:
			b.udp = true;
			break;
		case 9:
			b.seq -= 1448;			/* a retransmission */
			break;
		case 10:
			b.flags = TCP_ACK | 0x20;	/* URG */
			break;
		case 11:
			b.pay = 1449;			/* more than the MSS */
			break;
		}
		len = mkframe(fr, &b);
		switch (k) {
		case 12:			/* a timestamp option that differs */
		case 13:			/* another acknowledgment number */
		case 14:			/* the IPv4 ECN field: CE */
		case 15:			/* IPv4 without DF */
		case 16:			/* another TTL */
			if (k == 12)
				fr[34 + 27]++;
			else if (k == 13)
				fr[34 + 11]++;
			else if (k == 14)
				fr[15] |= 3;
			else if (k == 15)
				fr[20] = 0;
			else
				fr[22]--;
			if (k >= 14) {
				fr[24] = fr[25] = 0;
				wr16be(fr + 24, (uint16_t)~ref_fold(ref_sum(0, fr + 14, 20)));
			}
			fr[34 + 16] = fr[34 + 17] = 0;
			wr16be(fr + 34 + 16,
			      (uint16_t)~tcp_sum(fr + 14, false, fr + 34, len - 34));
			break;
		}
		CHECK_EQ(rx(&x, fr, len), len);
		CHECK_EQ(rx(&ref, fr, len), len);
		/* the segment is complete now, before any timer */
		CHECK_EQ(rxd_status(&x, x.next) & TERN_ETH_RXD_LRO, TERN_ETH_RXD_LRO);
		fk_advance(&x.f, 20 * US);
		fk_advance(&ref.f, 20 * US);
		check_seg(&x, &first, 3 * 1448, 1448, false, 77);
		want = rxd_status(&ref, ref.next);
		if (k == 5)
			CHECK_EQ(want, TERN_ETH_DESC_DONE | TERN_ETH_RXD_CSUM_BAD);
		else if (k != 6)
			CHECK_EQ(want, OK);
		check_plain(&x, fr, len, want);
		check_plain(&ref, fr, len, want);
		if (t_failures) {
			printf("#   breaker %u\n", k);
			break;
		}
	}
	CHECK_EQ(XSTAT(&x, rx_lro_segments), NBREAK);
	CHECK_EQ(XSTAT(&x, rx_lro_frames), 3 * NBREAK);
	CHECK_EQ(XSTAT(&x, rx_csum_bad), 1);
	CHECK_EQ(XSTAT(&x, rx_frames), 4 * NBREAK);
	CHECK_EQ(XSTAT(&x, rx_bytes), XSTAT(&ref, rx_bytes) +
		 3 * NBREAK * (14 + 20 + TCP_HLEN + 1448));
	fk_fini(&x.f);
	fk_fini(&ref.f);
}

/*
 * A segment of one frame is written back as that frame, exactly as with coalescing off:
 * status, length, bytes (Ethernet padding included), counters.
 */
static void t_single(void)
{
	static const size_t pays[] = { 1448, 1, 5, 6, 200, 1, 2, 5, 6 };
	struct fx x, ref;
	unsigned int k;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 6, 32, 2048));
	REQUIRE(fx_init(&ref, 0, 1500, 6, 32, 2048));
	for (k = 0; k < sizeof(pays) / sizeof(pays[0]); k++) {
		/* the last four without TCP options: IPv4 frames padded to 60 bytes */
		struct fspec s = { .v6 = k < 5 && (k & 1), .noopt = k >= 5, .sport = 42000,
				   .seq = 9, .pay = pays[k], .flags = TCP_ACK, .win = 5, .id = 1 };
		uint8_t fr[2048];
		size_t len = mkframe(fr, &s);

		/* Ethernet padding that is not zero */
		if (len > hdr_len(&s) + s.pay)
			memset(fr + hdr_len(&s) + s.pay, 0xa5, len - hdr_len(&s) - s.pay);
		CHECK_EQ(rx(&x, fr, len), len);
		CHECK_EQ(rx(&ref, fr, len), len);
		CHECK_EQ(rxd_status(&x, x.next), 0);		/* held for the timer */
		fk_advance(&x.f, 20 * US);
		fk_advance(&ref.f, 20 * US);
		CHECK_EQ(rxd_status(&ref, ref.next), OK);
		check_plain(&ref, fr, len, OK);
		check_plain(&x, fr, len, OK);
		if (t_failures) {
			printf("#   payload %zu\n", pays[k]);
			break;
		}
	}
	CHECK_EQ(XSTAT(&x, rx_lro_frames), 0);
	CHECK_EQ(XSTAT(&x, rx_lro_segments), 0);
	CHECK_EQ(XSTAT(&x, rx_frames), XSTAT(&ref, rx_frames));
	CHECK_EQ(XSTAT(&x, rx_bytes), XSTAT(&ref, rx_bytes));
	fk_fini(&x.f);
	fk_fini(&ref.f);
}

/* TERN_ETH_LRO_MAX_BUFS buffers: the frame that would need one more opens the next segment. */
static void t_max_bufs(void)
{
	const uint16_t blen = 512, mss = 400;
	struct fx x;
	struct fspec s = { .sport = 43000, .seq = 1, .pay = mss, .flags = TCP_ACK, .win = 9 };
	struct fspec first = s, second;
	size_t cap = (size_t)TERN_ETH_LRO_MAX_BUFS * blen - (14 + 20 + TCP_HLEN);
	unsigned int fit = (unsigned int)(cap / mss), i;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 8, 100, blen));
	for (i = 0; i < fit; i++) {
		send(&x, &s);
		s.seq += mss;
		s.id++;
	}
	CHECK_EQ(rxd_status(&x, 0), 0);
	second = s;
	send(&x, &s);				/* needs an 18th buffer */
	check_seg(&x, &first, (size_t)fit * mss, mss, false, 9);
	CHECK_EQ(x.next, TERN_ETH_LRO_MAX_BUFS);
	s.seq += mss;
	s.id++;
	send(&x, &s);
	fk_advance(&x.f, 20 * US);
	check_seg(&x, &second, 2 * mss, mss, false, 9);
	CHECK_EQ(XSTAT(&x, rx_lro_frames), fit + 2);
	CHECK_EQ(XSTAT(&x, rx_lro_segments), 2);
	fk_fini(&x.f);
}

/* The IP packet stays within 65535 bytes: @want_fit frames of @mss, the next opens another. */
static void max_ip_case(bool v6, uint16_t mss, unsigned int want_fit)
{
	struct fx x;
	struct fspec s = { .v6 = v6, .sport = 44000, .seq = 100, .pay = mss, .flags = TCP_ACK,
			   .win = 1 };
	struct fspec first = s, second;
	size_t room = 65535 - TCP_HLEN - (v6 ? 0 : 20);
	unsigned int fit = (unsigned int)(room / mss), i;

	CHECK_EQ(fit, want_fit);
	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 9600, 8, 64, 9216));
	for (i = 0; i < fit; i++) {
		send(&x, &s);
		s.seq += mss;
		s.id++;
	}
	CHECK_EQ(rxd_status(&x, 0), 0);
	second = s;
	send(&x, &s);
	check_seg(&x, &first, (size_t)fit * mss, mss, false, 1);
	s.seq += mss;
	send(&x, &s);
	fk_advance(&x.f, 20 * US);
	check_seg(&x, &second, 2 * (size_t)mss, mss, false, 1);
	fk_fini(&x.f);
}

static void t_max_ip(void)
{
	max_ip_case(false, 8960, 7);
	max_ip_case(true, 8960, 7);
	max_ip_case(false, 5953, 11);	/* an IPv4 total length of 65535 exactly */
	max_ip_case(false, 5954, 10);	/* 11 would be 65546 */
	max_ip_case(true, 2113, 31);	/* an IPv6 payload length of 65535 exactly */
	max_ip_case(true, 2114, 30);
}

/*
 * The ring runs out of buffers: the segment closes, the frame waits (rx_frame 0) and opens
 * the next segment once buffers are posted.
 */
static void t_ring_empty(void)
{
	struct fx x;
	struct fspec s = { .sport = 45000, .seq = 77, .pay = 1448, .flags = TCP_ACK, .win = 3 };
	struct fspec first = s, second;
	uint8_t fr[2048];
	size_t len;
	unsigned int fit = (3 * 2048 - (14 + 20 + TCP_HLEN)) / 1448, i;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 6, 3, 2048));
	for (i = 0; i < fit; i++) {
		send(&x, &s);
		s.seq += 1448;
	}
	second = s;
	len = mkframe(fr, &s);
	CHECK_EQ(rx(&x, fr, len), 0);		/* backpressure */
	check_seg(&x, &first, (size_t)fit * 1448, 1448, false, 3);
	CHECK_EQ(x.next, 3);
	CHECK_EQ(rx(&x, fr, len), 0);		/* still nothing posted */
	fx_post(&x, 8, 2048);
	CHECK_EQ(rx(&x, fr, len), len);
	s.seq += 1448;
	send(&x, &s);
	fk_advance(&x.f, 20 * US);
	check_seg(&x, &second, 2 * 1448, 1448, false, 3);
	CHECK_EQ(XSTAT(&x, rx_frames), fit + 2);
	fk_fini(&x.f);
}

/* Off by default: nothing coalesces. SET_PORT turning it off writes the open segment back. */
static void t_off(void)
{
	struct fx x;
	struct fspec s = { .sport = 46000, .seq = 1, .pay = 1448, .flags = TCP_ACK, .win = 8 };
	struct fspec first;
	uint8_t fr[2048];
	size_t len;
	unsigned int i;

	REQUIRE(fx_init(&x, 0, 1500, 6, 32, 2048));
	for (i = 0; i < 5; i++) {
		len = mkframe(fr, &s);
		CHECK_EQ(rx(&x, fr, len), len);
		check_plain(&x, fr, len, OK);		/* at once */
		s.seq += 1448;
	}
	REQUIRE(drv_set_port(&x.f, TERN_PORT_F_LRO, 1500, test_mac) == TERN_CMD_OK);
	first = s;
	for (i = 0; i < 4; i++) {
		send(&x, &s);
		s.seq += 1448;
	}
	CHECK_EQ(rxd_status(&x, x.next), 0);
	REQUIRE(drv_set_port(&x.f, 0, 1500, test_mac) == TERN_CMD_OK);
	check_seg(&x, &first, 4 * 1448, 1448, false, 8);
	len = mkframe(fr, &s);
	CHECK_EQ(rx(&x, fr, len), len);
	check_plain(&x, fr, len, OK);
	CHECK_EQ(XSTAT(&x, rx_lro_frames), 4);
	CHECK_EQ(XSTAT(&x, rx_lro_segments), 1);
	CHECK_EQ(XSTAT(&x, rx_frames), 10);
	fk_fini(&x.f);
}

/* Compares what @x and @ref wrote from descriptor next on, up to @max descriptors. */
static void same_as_ref(struct fx *x, struct fx *ref, unsigned int max)
{
	unsigned int i;

	for (i = 0; i < max; i++) {
		uint16_t st = rxd_status(ref, ref->next);
		uint16_t n = rxd_len(ref, ref->next);
		const uint8_t *a, *b;

		CHECK_EQ(rxd_status(x, x->next), st);
		if (!st)
			return;
		CHECK_EQ(rxd_len(x, x->next), n);
		a = rx_buf(x, x->next, n);
		b = rx_buf(ref, ref->next, n);
		CHECK(a && b && !memcmp(a, b, n));
		x->next++;
		ref->next++;
	}
}

/*
 * Hostile frames (lengths that do not add up, data offsets past the end, ...) never coalesce
 * and are received as with coalescing off; then random corruptions of good frames.
 */
static void t_hostile(void)
{
	struct fx x, ref;
	unsigned int k, i;
	uint32_t r = 0x1234567;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 9, 500, 2048));
	REQUIRE(fx_init(&ref, 0, 1500, 9, 500, 2048));
	for (k = 0; k < 8; k++) {
		uint16_t mss = k & 1 ? 1428 : 1448;	/* MTU 1500 */
		struct fspec s = { .v6 = k & 1, .sport = 47000, .seq = k * 100000, .pay = mss,
				   .flags = TCP_ACK, .win = 2 };
		struct fspec first = s;
		uint8_t fr[2048];
		size_t len, l3 = 14, l4 = s.v6 ? 54 : 34;

		send(&x, &s);
		s.seq += mss;
		send(&x, &s);
		s.seq += mss;
		len = mkframe(fr, &s);
		switch (k) {
		case 0:
		case 1:		/* the IP length beyond the frame */
			len -= 100;
			break;
		case 2:		/* data offset past the end (checksum still right) */
		case 3:
			s.pay = 20;
			len = mkframe(fr, &s);
			fr[l4 + 12] = 0xf0;
			fr[l4 + 16] = fr[l4 + 17] = 0;
			wr16be(fr + l4 + 16, (uint16_t)~tcp_sum(fr + l3, s.v6, fr + l4,
							       TCP_HLEN + 20));
			break;
		case 4:		/* an IPv4 total length shorter than the headers */
			wr16be(fr + l3 + 2, 30);
			fr[l3 + 10] = fr[l3 + 11] = 0;
			wr16be(fr + l3 + 10, (uint16_t)~ref_fold(ref_sum(0, fr + l3, 20)));
			break;
		case 5:		/* the IPv6 payload length 0 */
			wr16be(fr + l3 + 4, 0);
			break;
		case 6:		/* cut in the TCP header */
			len = l4 + 10;
			break;
		case 7:		/* cut in the IPv6 header */
			len = l3 + 30;
			break;
		}
		CHECK_EQ(rx(&x, fr, len), len);
		CHECK_EQ(rx(&ref, fr, len), len);
		fk_advance(&x.f, 20 * US);
		fk_advance(&ref.f, 20 * US);
		check_seg(&x, &first, 2 * (size_t)mss, mss, false, 2);
		same_as_ref(&x, &ref, 4);
		if (t_failures) {
			printf("#   hostile %u\n", k);
			goto out;
		}
	}
	/* one or two random header bits of a good frame flipped, some cut short; then the timer */
	for (k = 0; k < 300; k++) {
		struct fspec s = { .v6 = k & 1, .sport = 48000, .seq = k * 7919,
				   .pay = 1 + k % 1428, .flags = TCP_ACK, .win = 2 };
		uint8_t fr[2048];
		size_t len = mkframe(fr, &s);

		for (i = 0; i < 1 + (k & 1); i++) {
			r = r * 1103515245u + 12345u;
			fr[12 + (r >> 8) % (hdr_len(&s) - 12)] ^= (uint8_t)(1u << ((r >> 4) & 7));
		}
		if (k % 3 == 2) {
			r = r * 1103515245u + 12345u;
			len = 14 + (r >> 8) % (len - 14 + 1);
		}
		CHECK_EQ(rx(&x, fr, len), len);
		CHECK_EQ(rx(&ref, fr, len), len);
		fk_advance(&x.f, 20 * US);
		fk_advance(&ref.f, 20 * US);
		same_as_ref(&x, &ref, 2);
		if (ref.rx.pi - ref.next < 8) {
			fx_post(&x, 400, 2048);
			fx_post(&ref, 400, 2048);
		}
		if (t_failures) {
			printf("#   corruption %u\n", k);
			break;
		}
	}
out:
	CHECK_EQ(XSTAT(&x, rx_frames) - XSTAT(&x, rx_lro_frames), XSTAT(&ref, rx_frames));
	CHECK_EQ(XSTAT(&x, rx_csum_bad), XSTAT(&ref, rx_csum_bad));
	fk_fini(&x.f);
	fk_fini(&ref.f);
}

/*
 * A continuation buffer the device cannot write: the segment's descriptors complete with ERR,
 * rx_dma_errors counts it, the next frames are received normally.
 */
static void t_dma_fault(void)
{
	struct fx x;
	struct fspec s = { .sport = 49000, .seq = 3, .pay = 1448, .flags = TCP_ACK, .win = 4 };
	struct fspec next;
	unsigned int i;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 6, 32, 2048));
	wr64(rxd(&x, 2) + RXD(addr), FK_BAD_ADDR);
	/* frames 0 and 1 fill buffers 0 and 1 to 2048 - 314; frame 2 reaches buffer 2 */
	for (i = 0; i < 3; i++) {
		send(&x, &s);
		s.seq += 1448;
	}
	for (i = 0; i < 3; i++) {
		CHECK_EQ(rxd_status(&x, i), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
		CHECK_EQ(rxd_len(&x, i), 0);
	}
	CHECK_EQ(rxd_status(&x, 3), 0);
	CHECK_EQ(XSTAT(&x, rx_dma_errors), 1);
	CHECK_EQ(XSTAT(&x, rx_lro_segments), 0);
	x.next = 3;
	next = s;
	for (i = 0; i < 4; i++) {
		send(&x, &s);
		s.seq += 1448;
	}
	fk_advance(&x.f, 20 * US);
	check_seg(&x, &next, 4 * 1448, 1448, false, 4);
	CHECK_EQ(XSTAT(&x, rx_lro_segments), 1);
	CHECK_EQ(XSTAT(&x, rx_lro_frames), 4);
	CHECK_EQ(XSTAT(&x, rx_dma_errors), 1);
	fk_fini(&x.f);
}

/*
 * The next packet the device completed at x->next (a coalesced segment or a plain frame),
 * gathered into @p (@cap bytes): its length, 0 if none is complete. *@lro tells which.
 */
static size_t take_packet(struct fx *x, uint8_t *p, size_t cap, bool *lro)
{
	unsigned int d = x->next, i = d;
	uint16_t st = rxd_status(x, d), n = rxd_len(x, d);
	size_t got;

	/* not posted: what is there is from the ring's last lap */
	if (d == x->rx.pi || !(st & TERN_ETH_DESC_DONE))
		return 0;
	*lro = st & TERN_ETH_RXD_LRO;
	if (n > cap || !rx_buf(x, d, n)) {
		CHECK(!"buffer");
		return 0;
	}
	memcpy(p, rx_buf(x, d, n), n);
	got = n;
	while (st & TERN_ETH_RXD_MORE) {
		CHECK(*lro);
		if (++i - d >= TERN_ETH_LRO_MAX_BUFS || i == x->rx.pi) {
			CHECK(!"more than TERN_ETH_LRO_MAX_BUFS or posted buffers");
			return 0;
		}
		st = rxd_status(x, i);
		n = rxd_len(x, i);
		CHECK_EQ(st & ~TERN_ETH_RXD_MORE, TERN_ETH_DESC_DONE);
		if (got + n > cap || !rx_buf(x, i, n)) {
			CHECK(!"continuation");
			return 0;
		}
		memcpy(p + got, rx_buf(x, i, n), n);
		got += n;
	}
	x->next = i + 1;
	return got;
}

struct stream {
	struct fx x;
	bool v6;
	uint16_t mss;
	uint32_t want;			/* the next sequence number the driver should see */
	uint64_t segs, lro_frames;	/* coalesced segments seen, frames in them (at least) */
	uint8_t *pk;
};

/* Takes every packet completed, checks it, and posts buffers back up to 32. */
static void stream_drain(struct stream *t)
{
	size_t hl = 14 + (t->v6 ? 40 : 20) + TCP_HLEN, l3 = 14, l4 = l3 + (t->v6 ? 40 : 20);
	size_t len, tl, pay, i;
	uint32_t posted;
	bool lro;

	while (!t_failures && (len = take_packet(&t->x, t->pk, 70000, &lro))) {
		if (t->v6) {
			tl = 40 + rd16be(t->pk + l3 + 4);
		} else {
			tl = rd16be(t->pk + l3 + 2);
			CHECK_EQ(ref_fold(ref_sum(0, t->pk + l3, 20)), 0xffff);
		}
		if (l3 + tl > len || l3 + tl < hl) {
			CHECK(!"IP length");
			return;
		}
		pay = l3 + tl - hl;
		CHECK_EQ(rd32be(t->pk + l4 + 4), t->want);
		CHECK_EQ(tcp_sum(t->pk + l3, t->v6, t->pk + l4, l3 + tl - l4), 0xffff);
		for (i = 0; i < pay; i++)
			if (t->pk[hl + i] != pay_byte(t->want + (uint32_t)i))
				break;
		CHECK_EQ(i, pay);
		t->want += (uint32_t)pay;
		if (lro) {
			t->segs++;
			t->lro_frames += (pay + t->mss - 1) / t->mss;
		}
	}
	posted = t->x.rx.pi - t->x.next;
	if (posted < 32)
		fx_post(&t->x, 32 - posted, 2048);
}

/*
 * A long stream over a small ring that wraps many times: short frames, PSH, the timer at
 * random points, backpressure when the ring runs dry. Every packet the driver gets is a
 * valid TCP packet (own checks), the bytes arrive whole and in order, the counters add up.
 */
static void stream_case(bool v6)
{
	static struct stream t;
	struct fspec s = { .v6 = v6, .sport = 50000, .seq = 0xffff0000u, .flags = TCP_ACK };
	uint32_t r = 99, seq0 = s.seq;
	uint64_t frames = 0;
	uint8_t fr[2048];
	unsigned int k, waits = 0, tries;
	size_t len;

	memset(&t, 0, sizeof(t));
	t.v6 = v6;
	t.mss = v6 ? 1428 : 1448;
	t.want = s.seq;
	REQUIRE(fx_init(&t.x, TERN_PORT_F_LRO, 1500, 6, 32, 2048));
	t.pk = malloc(70000);
	REQUIRE(t.pk);
	for (k = 0; k < 3000 && !t_failures; k++) {
		r = r * 1103515245u + 12345u;
		s.pay = (r >> 16) % 16 == 0 ? 1 + (r >> 8) % t.mss : t.mss;
		s.flags = TCP_ACK | ((r >> 20) % 23 == 0 ? TCP_PSH : 0);
		s.win = (uint16_t)k;
		s.id = (uint16_t)k;
		len = mkframe(fr, &s);
		for (tries = 0; rx(&t.x, fr, len) != len; tries++) {
			waits++;
			if (tries == 2) {
				CHECK(!"the frame is never taken");
				break;
			}
			stream_drain(&t);	/* backpressure: the driver takes and posts */
		}
		frames++;
		s.seq += (uint32_t)s.pay;
		if ((r >> 24) % 7 == 0)
			fk_advance(&t.x.f, ((r >> 12) % 20) * US);
		if ((r >> 27) % 32 == 0)
			stream_drain(&t);
	}
	fk_advance(&t.x.f, 20 * US);
	stream_drain(&t);
	CHECK_EQ(t.want, s.seq);
	CHECK(t.want - seq0 > 3000u * t.mss / 2);
	CHECK(waits > 0);
	CHECK(t.segs > 0);
	CHECK_EQ(XSTAT(&t.x, rx_frames), frames);
	CHECK_EQ(XSTAT(&t.x, rx_lro_segments), t.segs);
	CHECK(XSTAT(&t.x, rx_lro_frames) >= t.lro_frames);
	CHECK_EQ(XSTAT(&t.x, rx_dma_errors), 0);
	CHECK_EQ(XSTAT(&t.x, rx_oversize), 0);
	printf("# %s: %llu frames, %llu segments, %u waits\n", v6 ? "IPv6" : "IPv4",
	       (unsigned long long)frames, (unsigned long long)t.segs, waits);
	fk_fini(&t.x.f);
	free(t.pk);
}

static void t_stream(void)
{
	stream_case(false);
	stream_case(true);
}

/* The segment closes TERN_ETH_LRO_TIMEOUT_US after its first frame, not after its last. */
static void t_timeout(void)
{
	struct fx x;
	struct fspec s = { .sport = 51000, .seq = 1, .pay = 1448, .flags = TCP_ACK, .win = 6 };
	struct fspec first = s;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 6, 32, 2048));
	send(&x, &s);
	s.seq += 1448;
	fk_advance(&x.f, 10 * US);
	send(&x, &s);
	s.seq += 1448;
	fk_advance(&x.f, (TERN_ETH_LRO_TIMEOUT_US - 10) * US - 1);
	CHECK_EQ(rxd_status(&x, 0), 0);
	fk_advance(&x.f, 1);
	check_seg(&x, &first, 2 * 1448, 1448, false, 6);
	fk_fini(&x.f);
}

/*
 * DESTROY_ETH_RXQ with a segment open: nothing written back, nothing counted, and the
 * queue made next in its place starts clean.
 */
static void t_destroy(void)
{
	struct fx x;
	struct fspec s = { .sport = 52000, .seq = 1, .pay = 1448, .flags = TCP_ACK, .win = 6 };
	struct fspec first;
	uint8_t in[sizeof(struct tern_cmd_destroy_eth_queue_in)] = { 0 };
	uint32_t old;
	unsigned int i;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 6, 32, 2048));
	for (i = 0; i < 3; i++) {
		send(&x, &s);
		s.seq += 1448;
	}
	wr32(in + OFF(struct tern_cmd_destroy_eth_queue_in, qid), x.rx.num);
	REQUIRE(drv_cmd(&x.f, TERN_CMD_DESTROY_ETH_RXQ, in, sizeof(in), NULL, 0, NULL) ==
		TERN_CMD_OK);
	fk_advance(&x.f, 100 * US);
	for (i = 0; i < 4; i++)
		CHECK_EQ(rxd_status(&x, i), 0);
	CHECK_EQ(XSTAT(&x, rx_lro_segments), 0);
	old = x.rx.num;
	REQUIRE(drv_ethq_create(&x.f, &x.rx, true, 6, x.eq.num, false) == TERN_CMD_OK);
	CHECK_EQ(x.rx.num, old);
	x.next = 0;
	fx_post(&x, 32, 2048);
	first = s;
	for (i = 0; i < 2; i++) {
		send(&x, &s);
		s.seq += 1448;
	}
	fk_advance(&x.f, 20 * US);
	check_seg(&x, &first, 2 * 1448, 1448, false, 6);
	CHECK_EQ(XSTAT(&x, rx_lro_segments), 1);
	CHECK_EQ(XSTAT(&x, rx_lro_frames), 2);
	fk_fini(&x.f);
}

/*
 * The first buffer cannot be written when the headers are rewritten (at the write-back):
 * every descriptor of the segment DONE|ERR, counted once; then frames go as usual.
 */
static void t_hdr_fault(void)
{
	struct fx x;
	struct fspec s = { .sport = 53000, .seq = 1, .pay = 1448, .flags = TCP_ACK, .win = 6 };
	struct fspec next;
	unsigned int i;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 6, 32, 2048));
	for (i = 0; i < 4; i++) {
		send(&x, &s);
		s.seq += 1448;
	}
	x.f.fault_lo = x.buf[0];
	x.f.fault_hi = x.buf[0] + 1;
	fk_advance(&x.f, 20 * US);
	x.f.fault_lo = x.f.fault_hi = 0;
	for (i = 0; i < 3; i++)
		CHECK_EQ(rxd_status(&x, i), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	CHECK_EQ(rxd_status(&x, 3), 0);
	CHECK_EQ(XSTAT(&x, rx_dma_errors), 1);
	CHECK_EQ(XSTAT(&x, rx_lro_segments), 0);
	x.next = 3;
	next = s;
	for (i = 0; i < 2; i++) {
		send(&x, &s);
		s.seq += 1448;
	}
	fk_advance(&x.f, 20 * US);
	check_seg(&x, &next, 2 * 1448, 1448, false, 6);
	/* the first frame's buffer unreachable: the usual path reports it */
	wr64(rxd(&x, x.next) + RXD(addr), FK_BAD_ADDR);
	send(&x, &s);
	CHECK_EQ(rxd_status(&x, x.next), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	CHECK_EQ(XSTAT(&x, rx_dma_errors), 2);
	fk_fini(&x.f);
}

/* Continuation buffers of odd sizes (0, 1, 3 bytes): each filled to its buf_len in turn. */
static void t_odd_bufs(void)
{
	static const uint16_t sizes[] = { 2048, 0, 1, 0, 3, 100, 2048, 2048, 2048, 2048 };
	struct fx x;
	struct fspec s = { .sport = 54000, .seq = 11, .pay = 1448, .flags = TCP_ACK, .win = 6 };
	struct fspec first = s;
	unsigned int i;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 6, 0, 2048));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		fx_post(&x, 1, sizes[i]);
	for (i = 0; i < 5; i++) {
		send(&x, &s);
		s.seq += 1448;
	}
	fk_advance(&x.f, 20 * US);
	check_seg(&x, &first, 5 * 1448, 1448, false, 6);
	for (i = 1; i < 6; i++)
		CHECK_EQ(rxd_len(&x, i), sizes[i]);
	fk_fini(&x.f);
}

/* With RSS on, the segment's first descriptor carries the hash a frame of it gets alone. */
static void t_rss(void)
{
	struct fx x, ref;
	uint8_t in[sizeof(struct tern_cmd_set_rss_in)] = { 0 };
	struct fspec s = { .sport = 55000, .seq = 1, .pay = 1448, .flags = TCP_ACK, .win = 6 };
	struct fspec first = s;
	uint16_t st;
	unsigned int i;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 6, 32, 2048));
	REQUIRE(fx_init(&ref, 0, 1500, 6, 32, 2048));
	wr32(in + OFF(struct tern_cmd_set_rss_in, hash_fields), TERN_RSS_HASH_ALL);
	for (i = 0; i < TERN_RSS_KEY_SIZE; i++)
		in[OFF(struct tern_cmd_set_rss_in, key) + i] = (uint8_t)(i * 37 + 1);
	REQUIRE(drv_cmd(&x.f, TERN_CMD_SET_RSS, in, sizeof(in), NULL, 0, NULL) == TERN_CMD_OK);
	REQUIRE(drv_cmd(&ref.f, TERN_CMD_SET_RSS, in, sizeof(in), NULL, 0, NULL) == TERN_CMD_OK);
	send(&ref, &s);
	st = rxd_status(&ref, 0);
	CHECK_EQ(st & (TERN_ETH_RXD_HASH | TERN_ETH_RXD_HASH_L4),
		 TERN_ETH_RXD_HASH | TERN_ETH_RXD_HASH_L4);
	for (i = 0; i < 3; i++) {
		send(&x, &s);
		s.seq += 1448;
	}
	fk_advance(&x.f, 20 * US);
	CHECK_EQ(rxd_status(&x, 0), st | TERN_ETH_RXD_LRO | TERN_ETH_RXD_MORE);
	CHECK_EQ(rd32(rxd(&x, 0) + RXD(rss_hash)), rd32(rxd(&ref, 0) + RXD(rss_hash)));
	/* the rest of the segment as without RSS */
	wr16(rxd(&x, 0) + RXD(status), (uint16_t)(rxd_status(&x, 0) & ~(TERN_ETH_RXD_HASH |
						  TERN_ETH_RXD_HASH_L4)));
	check_seg(&x, &first, 3 * 1448, 1448, false, 6);
	fk_fini(&x.f);
	fk_fini(&ref.f);
}

/* ---- a random mix against a device without coalescing -------------------------------- */

/* One run of payload a driver got: a flow's bytes from @seq, or a frame it cannot parse. */
struct piece {
	uint16_t sport;		/* 0: not a valid TCP frame of the mix (compared by its sum) */
	uint32_t seq, len;
	uint32_t sum;		/* the bytes' sum, for frames outside the mix */
};

#define MIX_MAX 4096

/*
 * Everything @x's driver got, as runs: packets of one flow that follow each other in
 * sequence merge into one run (what coalescing may do); every coalesced packet must be a
 * valid TCP packet. The payload bytes are checked against the stream pattern.
 */
static unsigned int mix_pieces(struct fx *x, struct piece *pc, uint8_t *pk)
{
	unsigned int n = 0;
	size_t len;
	bool lro;

	while (!t_failures && n < MIX_MAX && (len = take_packet(x, pk, 70000, &lro))) {
		struct piece p = { 0 };
		size_t tl = len >= 18 ? rd16be(pk + 16) : 0, hl = 14 + 20 + TCP_HLEN, i;

		if (len >= hl && rd16be(pk + 12) == 0x0800 && pk[14] == 0x45 && pk[23] == 6 &&
		    pk[34 + 12] == (TCP_HLEN / 4) << 4 && rd16be(pk + 34 + 2) == 5201 &&
		    tl + 14 <= len && tl + 14 >= hl &&
		    tcp_sum(pk + 14, false, pk + 34, tl - 20) == 0xffff &&
		    ref_fold(ref_sum(0, pk + 14, 20)) == 0xffff) {
			p.sport = rd16be(pk + 34);
			p.seq = rd32be(pk + 34 + 4);
			p.len = (uint32_t)(tl + 14 - hl);
			for (i = 0; i < p.len; i++)
				if (pk[hl + i] != pay_byte(p.seq + (uint32_t)i))
					break;
			CHECK_EQ(i, p.len);
		} else {
			CHECK(!lro);
			p.len = (uint32_t)len;
			p.sum = ref_sum(0, pk, len);
		}
		if (n && p.sport && pc[n - 1].sport == p.sport &&
		    pc[n - 1].seq + pc[n - 1].len == p.seq && p.len)
			pc[n - 1].len += p.len;
		else
			pc[n++] = p;
	}
	return n;
}

/*
 * Three flows interleaved at random, with gaps, retransmissions, PSH, short frames, bad
 * checksums, FIN, a UDP frame, and the timer now and then: the driver of a device with
 * coalescing gets the same bytes in the same order as one without (every packet valid).
 */
static void t_mix(void)
{
	static struct fx x, ref;
	static struct piece a[MIX_MAX], b[MIX_MAX];
	struct fspec fl[3];
	uint8_t fr[2048], *pk = malloc(70000);
	uint32_t r = 4242;
	unsigned int k, i, na = 0, nb = 0;
	size_t len;

	REQUIRE(pk);
	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 12, 4000, 2048));
	REQUIRE(fx_init(&ref, 0, 1500, 12, 4000, 2048));
	for (i = 0; i < 3; i++) {
		memset(&fl[i], 0, sizeof(fl[i]));
		fl[i].sport = (uint16_t)(60000 + i);
		fl[i].seq = 0x10000000u * i + 5;
	}
	for (k = 0; k < 3000 && !t_failures; k++) {
		struct fspec s;
		unsigned int what;

		r = r * 1103515245u + 12345u;
		i = (r >> 16) % 3;
		if ((r >> 10) % 4)
			i = k / 40 % 3;		/* runs of one flow, mostly */
		s = fl[i];
		s.flags = TCP_ACK;
		s.pay = 1448;
		s.win = (uint16_t)k;
		s.id = (uint16_t)k;
		r = r * 1103515245u + 12345u;
		what = (r >> 16) % 64;
		switch (what) {
		case 0:
			s.seq += 1448;			/* a gap (the bytes never come) */
			break;
		case 1:
			s.seq -= 1448;			/* a retransmission */
			break;
		case 2:
		case 3:
			s.flags |= TCP_PSH;
			break;
		case 4:
		case 5:
			s.pay = 1 + (r >> 8) % 1447;
			break;
		case 6:
			s.bad_sum = true;
			break;
		case 7:
			s.flags |= TCP_FIN;
			break;
		case 8:
			s.udp = true;
			break;
		case 9:
			s.pay = 0;			/* a pure ACK */
			break;
		}
		len = mkframe(fr, &s);
		CHECK_EQ(rx(&x, fr, len), len);
		CHECK_EQ(rx(&ref, fr, len), len);
		if (!s.udp && !s.bad_sum)
			fl[i].seq = s.seq + (uint32_t)s.pay;
		if ((r >> 24) % 16 == 0) {
			fk_advance(&x.f, ((r >> 4) % 24) * US);
			fk_advance(&ref.f, ((r >> 4) % 24) * US);
		}
	}
	fk_advance(&x.f, 20 * US);
	fk_advance(&ref.f, 20 * US);
	na = mix_pieces(&x, a, pk);
	nb = mix_pieces(&ref, b, pk);
	CHECK_EQ(na, nb);
	for (i = 0; i < na && i < nb; i++) {
		if (a[i].sport != b[i].sport || a[i].seq != b[i].seq || a[i].len != b[i].len ||
		    a[i].sum != b[i].sum) {
			printf("#   run %u: port %u seq %u len %u / port %u seq %u len %u\n", i,
			       a[i].sport, a[i].seq, a[i].len, b[i].sport, b[i].seq, b[i].len);
			t_failures++;
			break;
		}
	}
	CHECK(XSTAT(&x, rx_lro_segments) > 50);
	CHECK_EQ(XSTAT(&x, rx_frames), XSTAT(&ref, rx_frames));
	CHECK_EQ(XSTAT(&x, rx_bytes), XSTAT(&ref, rx_bytes));
	CHECK_EQ(XSTAT(&x, rx_csum_bad), XSTAT(&ref, rx_csum_bad));
	printf("# %u runs, %llu segments of %llu frames\n", na,
	       (unsigned long long)XSTAT(&x, rx_lro_segments),
	       (unsigned long long)XSTAT(&x, rx_lro_frames));
	fk_fini(&x.f);
	fk_fini(&ref.f);
	free(pk);
}

/* A device reset with a segment open: nothing written back; after it LRO is off again. */
static void t_reset(void)
{
	struct fx x;
	struct fspec s = { .sport = 56000, .seq = 1, .pay = 1448, .flags = TCP_ACK, .win = 6 };
	struct fspec first;
	unsigned int i;
	uint8_t fr[2048];
	size_t len;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 6, 32, 2048));
	for (i = 0; i < 3; i++) {
		send(&x, &s);
		s.seq += 1448;
	}
	wreg(&x.f, TERN_REG_CTRL, TERN_CTRL_RESET);
	fk_advance(&x.f, 1000000);
	REQUIRE(rreg(&x.f, TERN_REG_STATUS) & TERN_STATUS_READY);
	for (i = 0; i < 4; i++)
		CHECK_EQ(rxd_status(&x, i), 0);
	REQUIRE(drv_cmdq_enable(&x.f, 4));
	REQUIRE(drv_eq_create(&x.f, &x.eq, 12, 1, 0, false) == TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&x.f, &x.rx, true, 6, x.eq.num, false) == TERN_CMD_OK);
	x.next = 0;
	fx_post(&x, 32, 2048);
	len = mkframe(fr, &s);
	CHECK_EQ(rx(&x, fr, len), len);
	check_plain(&x, fr, len, OK);			/* LRO is off after the reset */
	s.seq += 1448;
	REQUIRE(drv_set_port(&x.f, TERN_PORT_F_LRO, 1500, test_mac) == TERN_CMD_OK);
	first = s;
	for (i = 0; i < 2; i++) {
		send(&x, &s);
		s.seq += 1448;
	}
	fk_advance(&x.f, 20 * US);
	check_seg(&x, &first, 2 * 1448, 1448, false, 6);
	CHECK_EQ(XSTAT(&x, rx_lro_segments), 1);
	fk_fini(&x.f);
}

/* A segment counts once for the queue's event moderation (moder_frames 2: two segments). */
static void t_moder(void)
{
	typedef struct tern_cmd_create_eth_queue_in T;
	struct fx x;
	struct fspec s = { .sport = 57000, .seq = 1, .pay = 1448, .flags = TCP_ACK, .win = 6 };
	uint8_t in[sizeof(T)] = { 0 };
	struct cqe c;
	unsigned int i;

	memset(&x, 0, sizeof(x));
	fk_init(&x.f, false);
	REQUIRE(drv_cmdq_enable(&x.f, 4));
	REQUIRE(drv_eq_create(&x.f, &x.eq, 12, 1, 0, false) == TERN_CMD_OK);
	REQUIRE(drv_set_port(&x.f, TERN_PORT_F_LRO, 1500, test_mac) == TERN_CMD_OK);
	drv_ring_alloc(&x.f, &x.rx, 6, 16, false);
	drv_ring_desc(&x.rx, in + OFF(T, mem));
	in[OFF(T, log_depth)] = 6;
	wr16(in + OFF(T, eqn), (uint16_t)x.eq.num);
	wr16(in + OFF(T, moder_period_us), 1000);
	wr16(in + OFF(T, moder_frames), 2);
	REQUIRE(drv_cmd(&x.f, TERN_CMD_CREATE_ETH_RXQ, in, sizeof(in), NULL, 0, &c) ==
		TERN_CMD_OK);
	x.rx.num = c.result;
	drv_eq_arm(&x.f, &x.eq);
	fx_post(&x, 32, 2048);
	for (i = 0; i < 8; i++) {
		s.flags = TCP_ACK | (i % 4 == 3 ? TCP_PSH : 0);
		send(&x, &s);
		s.seq += 1448;
		CHECK_EQ(rx_events(&x), i == 7 ? 1u : 0u);
	}
	CHECK_EQ(XSTAT(&x, rx_lro_segments), 2);
	fk_fini(&x.f);
}

/*
 * A doorbell moving the producer index back over the descriptors an open segment holds is
 * refused: at the write-back the consumer index never passes the producer index, and the
 * descriptors never posted (stale ones of an earlier lap here, with buffers) stay untouched.
 */
static void t_db_back(void)
{
	const uint16_t blen = 512, mss = 400;
	struct fx x;
	struct fspec s = { .sport = 58000, .seq = 1, .pay = mss, .flags = TCP_ACK, .win = 5 };
	struct fspec first = s;
	uint8_t fr[2048];
	unsigned long logs;
	unsigned int i;
	size_t len;

	REQUIRE(fx_init(&x, TERN_PORT_F_LRO, 1500, 6, 8, blen));
	for (i = 8; i < 64; i++) {
		uint8_t *d = rxd(&x, i);

		wr64(d + RXD(addr), fk_alloc_data(&x.f, 2048, 64));
		wr16(d + RXD(buf_len), 2048);
		wr16(d + RXD(status), 0);
	}
	/* 66 + 4 * 400 bytes: the segment holds descriptors 0..3 */
	for (i = 0; i < 4; i++) {
		send(&x, &s);
		s.seq += mss;
	}
	CHECK_EQ(rxd_status(&x, 0), 0);
	logs = x.f.logs;
	db(&x.f, TERN_DB_ETH_RXQ(x.rx.num), 8);		/* the same PI: fine */
	fk_run(&x.f);
	CHECK_EQ(x.f.logs, logs);
	db(&x.f, TERN_DB_ETH_RXQ(x.rx.num), 6);		/* behind PI 8, past the segment */
	db(&x.f, TERN_DB_ETH_RXQ(x.rx.num), 2);		/* behind the segment */
	fk_run(&x.f);
	CHECK_EQ(x.f.logs, logs + 2);
	fk_advance(&x.f, 20 * US);
	check_seg(&x, &first, 4 * (size_t)mss, mss, false, 5);
	CHECK_EQ(x.next, 4);
	/* descriptors 4..7 are still posted, then the ring is empty: backpressure */
	s.flags = TCP_ACK | TCP_PSH;
	for (i = 4; i < 8; i++) {
		len = mkframe(fr, &s);
		CHECK_EQ(rx(&x, fr, len), len);
		check_plain(&x, fr, len, OK);
		s.seq += mss;
	}
	len = mkframe(fr, &s);
	CHECK_EQ(rx(&x, fr, len), 0);
	for (i = 8; i < 64; i++)
		CHECK_EQ(rxd_status(&x, i), 0);
	CHECK_EQ(XSTAT(&x, rx_frames), 8);
	/* posting goes on from PI 8 */
	fx_post(&x, 1, 2048);
	CHECK_EQ(rx(&x, fr, len), len);
	check_plain(&x, fr, len, OK);
	CHECK_EQ(rxd_status(&x, 9), 0);
	fk_fini(&x.f);
}

const struct test eth_lro_tests[] = {
	{ "eth lro: 20 IPv4 frames then the timer: one segment, headers, sum, counters, one "
	  "event (MSS 1448, 1001, 1)", t_basic_v4 },
	{ "eth lro: the same over IPv6", t_basic_v6 },
	{ "eth lro: PSH or a short frame closes the segment at once; PSH never opens one",
	  t_close },
	{ "eth lro: gap, other flow, SYN/FIN/RST/URG, bad sum, VLAN, IP options, UDP, "
	  "retransmission, > MSS, other option bytes/ACK/ECN/TTL, no DF close the segment, then arrive as "
	  "without LRO", t_breakers },
	{ "eth lro: a segment of one frame is written back as that frame", t_single },
	{ "eth lro: TERN_ETH_LRO_MAX_BUFS buffers, then the next segment", t_max_bufs },
	{ "eth lro: the IP packet stays within 65535 bytes (up to exactly 65535), jumbo frames",
	  t_max_ip },
	{ "eth lro: no buffer left: the segment closes, the frame waits, then opens the next",
	  t_ring_empty },
	{ "eth lro: off by default; SET_PORT turning it off writes the segment back", t_off },
	{ "eth lro: hostile and corrupted frames never coalesce, received as without LRO",
	  t_hostile },
	{ "eth lro: a continuation buffer's DMA fault: ERR on the segment, counted, then normal",
	  t_dma_fault },
	{ "eth lro: a 3000-frame stream over a 64-entry ring: every packet valid, the bytes in "
	  "order, backpressure, counters", t_stream },
	{ "eth lro: the segment closes 16 us after its first frame", t_timeout },
	{ "eth lro: DESTROY_ETH_RXQ drops an open segment unwritten; the next queue starts clean",
	  t_destroy },
	{ "eth lro: the first buffer unwritable at write-back: ERR on the segment, counted once",
	  t_hdr_fault },
	{ "eth lro: continuation buffers of 0, 1, 3 bytes filled in turn", t_odd_bufs },
	{ "eth lro: with RSS the first descriptor has the hash and hash flags", t_rss },
	{ "eth lro: 3000 frames of three flows with gaps, retransmissions, PSH, bad sums, FIN, "
	  "UDP: the same bytes in the same order as without coalescing", t_mix },
	{ "eth lro: a device reset drops an open segment unwritten; LRO off after it", t_reset },
	{ "eth lro: a segment counts once for event moderation", t_moder },
	{ "eth lro: a doorbell moving PI back over an open segment is refused; CI never passes "
	  "PI, unposted descriptors untouched", t_db_back },
	{ NULL, NULL },
};
