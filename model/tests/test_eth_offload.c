/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ethernet offloads (include/linux/tern/tern_hw.h, Documentation/hw/interface.rst "Ethernet"):
 * TX gather over several descriptors, checksum offload, TCP segmentation (IPv4 and IPv6),
 * the layouts the device refuses, a frame posted in part, and the receive checksum check.
 * The checks use their own checksum code (ref_sum below), not the model's.
 */
#include <stdlib.h>

#include "tests.h"
#include "../lib/frame.h"

#define TXD(f) OFF(struct tern_eth_txd, f)
#define CTX(f) OFF(struct tern_eth_txd_ctx, f)
#define RXD(f) OFF(struct tern_eth_rxd, f)

static const uint8_t peer_mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };

/* ---- the tests' own Internet checksum (ref_sum in tests.h) ------------------------------ */

/* The pseudo-header sum of an IPv4 (l3 at 14) or IPv6 packet for @proto over @l4_len bytes. */
static uint32_t ref_pseudo(const uint8_t *f, bool v6, uint8_t proto, uint32_t l4_len)
{
	uint32_t s = v6 ? ref_sum(0, f + 14 + 8, 32) : ref_sum(0, f + 14 + 12, 8);

	return s + proto + (l4_len >> 16) + (l4_len & 0xffff);
}

/* Whole-packet checks of a frame on the wire: IPv4 header sum, the L4 sum over the pseudo-header. */
static bool ref_ip_ok(const uint8_t *f)
{
	return ref_fold(ref_sum(0, f + 14, (size_t)(f[14] & 0x0f) * 4)) == 0xffff;
}

static bool ref_l4_ok(const uint8_t *f, bool v6, uint8_t proto, size_t l4, size_t len)
{
	return ref_fold(ref_sum(ref_pseudo(f, v6, proto, (uint32_t)(len - l4)), f + l4,
				len - l4)) == 0xffff;
}

/* ---- frames ------------------------------------------------------------------------------ */

/*
 * An Ethernet + IPv4 (or IPv6) + TCP (or UDP) frame of @len bytes with a payload pattern; the
 * L4 checksum field holds the pseudo-header sum (what the stack leaves for the device, with
 * @len_in_pseudo false as for TSO) and the IPv4 header checksum is right. Returns the L4 offset.
 */
static size_t build(uint8_t *f, size_t len, bool v6, uint8_t proto, unsigned int seed,
		    bool len_in_pseudo)
{
	size_t l4 = 14 + (v6 ? 40 : 20), i;
	size_t hl = proto == 6 ? 20 : 8;
	uint16_t csum_at = proto == 6 ? 16 : 6;
	uint32_t s;

	memset(f, 0, len);
	memcpy(f, test_mac, 6);
	memcpy(f + 6, peer_mac, 6);
	if (v6) {
		f[12] = 0x86;
		f[13] = 0xdd;
		f[14] = 0x60;
		wr16be(f + 18, (uint16_t)(len - 14 - 40));
		f[20] = proto;
		f[21] = 64;
		for (i = 0; i < 32; i++)
			f[22 + i] = (uint8_t)(0xfd + i * 3);
	} else {
		f[12] = 0x08;
		f[13] = 0x00;
		f[14] = 0x45;
		wr16be(f + 16, (uint16_t)(len - 14));
		wr16be(f + 18, 0x1234);			/* identification */
		f[20] = 0x40;				/* DF */
		f[22] = 64;
		f[23] = proto;
		memcpy(f + 26, "\xc0\xa8\x65\x01\xc0\xa8\x65\x02", 8);
		wr16be(f + 24, (uint16_t)~ref_fold(ref_sum(0, f + 14, 20)));
	}
	wr16be(f + l4, 40000);
	wr16be(f + l4 + 2, 5201);
	if (proto == 6) {
		wr32be(f + l4 + 4, 0xfffff000u);	/* the sequence wraps during segmentation */
		wr32be(f + l4 + 8, 77);
		f[l4 + 12] = 5 << 4;
		f[l4 + 13] = 0x80 | 0x10 | 0x08 | 0x01;	/* CWR ACK PSH FIN */
		wr16be(f + l4 + 14, 512);
	} else {
		wr16be(f + l4 + 4, (uint16_t)(len - l4));
	}
	for (i = l4 + hl; i < len; i++)
		f[i] = (uint8_t)(seed + i * 13 + (i >> 8));
	s = ref_pseudo(f, v6, proto, len_in_pseudo ? (uint32_t)(len - l4) : 0);
	wr16be(f + l4 + csum_at, ref_fold(s));
	return l4;
}

static bool eth_setup(struct fake *f, struct drv_ring *eq, struct drv_ring *tx)
{
	static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 1 };

	if (!drv_cmdq_enable(f, 4) || drv_eq_create(f, eq, 12, 1, 0, false) != TERN_CMD_OK)
		return false;
	if (drv_set_port(f, 0, 9000, mac) != TERN_CMD_OK)
		return false;
	return drv_ethq_create(f, tx, false, 7, eq->num, false) == TERN_CMD_OK;
}

static void post_data(struct fake *f, struct drv_ring *q, uint64_t addr, uint16_t len, bool more)
{
	uint8_t *d = drv_ring_entry(f, q, q->pi++);

	memset(d, 0, 16);
	wr64(d + TXD(addr), addr);
	wr16(d + TXD(len), len);
	wr16(d + TXD(flags), more ? TERN_ETH_TXD_MORE : 0);
}

static void post_ctx(struct fake *f, struct drv_ring *q, uint16_t ctx_flags, uint16_t start,
		     uint16_t offset, uint16_t mss)
{
	uint8_t *d = drv_ring_entry(f, q, q->pi++);

	memset(d, 0, 16);
	wr16(d + CTX(csum_start), start);
	wr16(d + CTX(csum_offset), offset);
	wr16(d + CTX(mss), mss);
	wr16(d + CTX(ctx_flags), ctx_flags);
	wr16(d + CTX(flags), TERN_ETH_TXD_CTX);
}

/* Posts @len bytes at @buf in pieces of at most @piece bytes, the last without MORE. */
static void post_pieces(struct fake *f, struct drv_ring *q, uint64_t buf, size_t len, size_t piece)
{
	size_t off;

	for (off = 0; off < len; off += piece) {
		size_t n = len - off < piece ? len - off : piece;

		post_data(f, q, buf + off, (uint16_t)n, off + n < len);
	}
}

static void ring(struct fake *f, struct drv_ring *q)
{
	db(f, TERN_DB_ETH_TXQ(q->num), q->pi & TERN_ETH_DB_PI_MASK);
	fk_run(f);
}

static uint16_t txd_status(struct fake *f, struct drv_ring *q, uint32_t i)
{
	return rd16(drv_ring_entry(f, q, i) + TXD(status));
}

/* ---- TX ---------------------------------------------------------------------------------- */

/* A frame in five pieces leaves as one frame, byte for byte; every descriptor completes. */
static void t_gather(void)
{
	struct fake f;
	struct drv_ring eq, tx;
	uint8_t fr[3000];
	uint64_t buf;
	unsigned int i;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq, &tx));
	build(fr, sizeof(fr), false, 17, 1, true);
	buf = fk_alloc(&f, sizeof(fr), 64);
	memcpy(fk_ptr(&f, buf, sizeof(fr)), fr, sizeof(fr));
	post_pieces(&f, &tx, buf, sizeof(fr), 700);
	ring(&f, &tx);
	REQUIRE(f.nframes == 1);
	CHECK_EQ(f.frames[0].len, sizeof(fr));
	CHECK(!memcmp(f.frames[0].data, fr, sizeof(fr)));
	for (i = 0; i < 5; i++)
		CHECK_EQ(txd_status(&f, &tx, i), TERN_ETH_DESC_DONE);
	/* without offloads asked for, the checksum field is left as it was */
	CHECK_EQ(rd16be(f.frames[0].data + 34 + 6), rd16be(fr + 34 + 6));
	fk_fini(&f);
}

/* Checksum offload: UDP and TCP over IPv4 and IPv6, the frame in two pieces. */
static void t_csum(void)
{
	static const struct { bool v6; uint8_t proto; size_t len; } cases[] = {
		{ false, 17, 1000 }, { false, 6, 1514 }, { true, 17, 333 }, { true, 6, 2001 },
		{ false, 17, 42 },
	};
	struct fake f;
	struct drv_ring eq, tx;
	uint8_t fr[2048];
	uint64_t buf;
	unsigned int i;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq, &tx));
	buf = fk_alloc(&f, sizeof(fr), 64);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = cases[i].len;
		size_t l4 = build(fr, len, cases[i].v6, cases[i].proto, i, true);
		uint16_t at = cases[i].proto == 6 ? 16 : 6;
		const uint8_t *w;

		CHECK(!ref_l4_ok(fr, cases[i].v6, cases[i].proto, l4, len));	/* not yet */
		memcpy(fk_ptr(&f, buf, len), fr, len);
		post_ctx(&f, &tx, TERN_ETH_CTX_CSUM, (uint16_t)l4, at, 0);
		post_pieces(&f, &tx, buf, len, len / 2 + 1);
		ring(&f, &tx);
		REQUIRE(f.nframes == i + 1);
		w = f.frames[i].data;
		CHECK_EQ(f.frames[i].len, len);
		CHECK(ref_l4_ok(w, cases[i].v6, cases[i].proto, l4, len));
		/* nothing else changed */
		CHECK(!memcmp(w, fr, l4 + at) && !memcmp(w + l4 + at + 2, fr + l4 + at + 2,
							 len - l4 - at - 2));
	}
	fk_fini(&f);
}

/*
 * TSO: @payload bytes of TCP after IPv4/IPv6 headers, in pieces of @piece bytes, cut into
 * @mss segments: each a valid packet, the payload in order, sequence numbers, IDs, flags.
 */
static void tso_case(bool v6, size_t payload, uint16_t mss, size_t piece)
{
	struct fake f;
	struct drv_ring eq, tx;
	size_t hdr = 14 + (v6 ? 40 : 20) + 20, len = hdr + payload, l4 = hdr - 20, got = 0;
	size_t n = payload ? (payload + mss - 1) / mss : 1, i;
	uint8_t *fr = malloc(len);
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)];
	uint64_t buf;

	REQUIRE(fr);
	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq, &tx));
	build(fr, len, v6, 6, 7, false);
	buf = fk_alloc(&f, len, 64);
	memcpy(fk_ptr(&f, buf, len), fr, len);
	post_ctx(&f, &tx, TERN_ETH_CTX_CSUM | TERN_ETH_CTX_TSO, (uint16_t)l4, 16, mss);
	post_pieces(&f, &tx, buf, len, piece);
	ring(&f, &tx);
	CHECK_EQ(f.nframes, n);
	for (i = 0; i < f.nframes && i < n; i++) {
		const uint8_t *w = f.frames[i].data;
		size_t seg = f.frames[i].len - hdr;
		uint8_t flags = w[l4 + 13];

		CHECK(seg == (i + 1 < n ? mss : payload - got));
		CHECK(!memcmp(w, fr, 14));
		if (v6) {
			CHECK_EQ(rd16be(w + 18), 20 + seg);
		} else {
			CHECK_EQ(rd16be(w + 16), 20 + 20 + seg);
			CHECK_EQ(rd16be(w + 18), (uint16_t)(0x1234 + i));
			CHECK(ref_ip_ok(w));
		}
		CHECK_EQ(rd32be(w + l4 + 4), (uint32_t)(0xfffff000u + got));
		CHECK_EQ(flags & 0x80, i == 0 ? 0x80 : 0);		/* CWR */
		CHECK_EQ(flags & 0x09, i + 1 == n ? 0x09 : 0);		/* FIN, PSH */
		CHECK(flags & 0x10);					/* ACK */
		CHECK(ref_l4_ok(w, v6, 6, l4, f.frames[i].len));
		CHECK(!memcmp(w + hdr, fr + hdr + got, seg));
		got += seg;
	}
	CHECK_EQ(got, payload);
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, tx_tso_segments), n);
	CHECK_EQ(STAT(st, tx_frames), n);
	CHECK_EQ(STAT(st, tx_bytes), n * hdr + payload);
	for (i = 0; i < (len + piece - 1) / piece + 1; i++)
		CHECK_EQ(txd_status(&f, &tx, (uint32_t)i), TERN_ETH_DESC_DONE);
	fk_fini(&f);
	free(fr);
}

static void t_tso(void)
{
	tso_case(false, 10000, 1448, 4096);
	tso_case(true, 10000, 1428, 3000);
	tso_case(false, 65536 - 54, 8946, 65536 - 54);	/* the largest, MTU 9000 */
	tso_case(false, 1448 * 3, 1448, 400);		/* exact multiple, 12 pieces */
	tso_case(false, 0, 1448, 100);			/* headers only: one segment */
}

/* Layouts the device refuses: every descriptor of the frame ERR, counted, the next one sent. */
static void t_bad_layouts(void)
{
	struct fake f;
	struct drv_ring eq, tx;
	uint8_t fr[1514], st[sizeof(struct tern_cmd_eth_stats_out)];
	uint64_t buf;
	uint32_t first;
	unsigned int i, k, bad = 0;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq, &tx));
	build(fr, sizeof(fr), false, 6, 3, false);
	buf = fk_alloc(&f, sizeof(fr), 64);
	memcpy(fk_ptr(&f, buf, sizeof(fr)), fr, sizeof(fr));
	for (k = 0; k < 9; k++) {
		first = tx.pi;
		switch (k) {
		case 0:		/* a context that is not first */
			post_data(&f, &tx, buf, 100, true);
			post_ctx(&f, &tx, TERN_ETH_CTX_CSUM, 34, 16, 0);
			post_data(&f, &tx, buf + 100, 100, false);
			break;
		case 1:		/* a context with MORE */
			post_ctx(&f, &tx, TERN_ETH_CTX_CSUM, 34, 16, 0);
			wr16(drv_ring_entry(&f, &tx, tx.pi - 1) + CTX(flags),
			     TERN_ETH_TXD_CTX | TERN_ETH_TXD_MORE);
			post_data(&f, &tx, buf, 1514, false);
			break;
		case 2:		/* a flag the device does not know */
			post_ctx(&f, &tx, 0x80, 34, 16, 0);
			post_data(&f, &tx, buf, 1514, false);
			break;
		case 3:		/* the sum would land beyond the frame */
			post_ctx(&f, &tx, TERN_ETH_CTX_CSUM, 34, 1500, 0);
			post_data(&f, &tx, buf, 1514, false);
			break;
		case 4:		/* TSO without the checksum */
			post_ctx(&f, &tx, TERN_ETH_CTX_TSO, 34, 16, 1000);
			post_data(&f, &tx, buf, 1514, false);
			break;
		case 5:		/* TSO with segments beyond the MTU (9000) */
			post_ctx(&f, &tx, TERN_ETH_CTX_CSUM | TERN_ETH_CTX_TSO, 34, 16, 8961);
			post_data(&f, &tx, buf, 1514, false);
			break;
		case 6:		/* TSO with csum_start not at the TCP header */
			post_ctx(&f, &tx, TERN_ETH_CTX_CSUM | TERN_ETH_CTX_TSO, 38, 16, 1000);
			post_data(&f, &tx, buf, 1514, false);
			break;
		case 7:		/* a chain with no end within TERN_ETH_TX_MAX_DESCS */
			for (i = 0; i < TERN_ETH_TX_MAX_DESCS; i++)
				post_data(&f, &tx, buf, 60, true);
			break;
		case 8:		/* a piece of length 0 */
			post_data(&f, &tx, buf, 0, true);
			post_data(&f, &tx, buf, 1514, false);
			break;
		}
		bad++;
		post_data(&f, &tx, buf, 1514, false);		/* a good frame after it */
		ring(&f, &tx);
		for (i = first; i < tx.pi - 1; i++)
			CHECK_EQ(txd_status(&f, &tx, i), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
		CHECK_EQ(txd_status(&f, &tx, tx.pi - 1), TERN_ETH_DESC_DONE);
		CHECK_EQ(f.nframes, k + 1);
	}
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, tx_bad_len), bad);
	CHECK_EQ(STAT(st, tx_frames), 9);
	/* TSO on UDP */
	build(fr, sizeof(fr), false, 17, 3, false);
	memcpy(fk_ptr(&f, buf, sizeof(fr)), fr, sizeof(fr));
	post_ctx(&f, &tx, TERN_ETH_CTX_CSUM | TERN_ETH_CTX_TSO, 34, 6, 1000);
	post_data(&f, &tx, buf, 1514, false);
	ring(&f, &tx);
	CHECK_EQ(txd_status(&f, &tx, tx.pi - 1), TERN_ETH_DESC_DONE | TERN_ETH_DESC_ERR);
	CHECK_EQ(f.nframes, 9);
	fk_fini(&f);
}

/* A frame whose last descriptor is not posted yet waits for it; nothing completes early. */
static void t_partial(void)
{
	struct fake f;
	struct drv_ring eq, tx;
	uint8_t fr[1500];
	uint64_t buf;

	fk_init(&f, false);
	REQUIRE(eth_setup(&f, &eq, &tx));
	build(fr, sizeof(fr), true, 17, 5, true);
	buf = fk_alloc(&f, sizeof(fr), 64);
	memcpy(fk_ptr(&f, buf, sizeof(fr)), fr, sizeof(fr));
	post_data(&f, &tx, buf, 500, true);
	post_data(&f, &tx, buf + 500, 500, true);
	ring(&f, &tx);
	CHECK_EQ(f.nframes, 0);
	CHECK_EQ(txd_status(&f, &tx, 0), 0);
	post_data(&f, &tx, buf + 1000, 500, false);
	ring(&f, &tx);
	REQUIRE(f.nframes == 1);
	CHECK(!memcmp(f.frames[0].data, fr, sizeof(fr)));
	CHECK_EQ(txd_status(&f, &tx, 2), TERN_ETH_DESC_DONE);
	fk_fini(&f);
}

/* ---- RX ---------------------------------------------------------------------------------- */

static uint16_t rx_one(struct fake *f, struct drv_ring *rx, const uint8_t *fr, size_t len)
{
	uint64_t buf = fk_alloc(f, 2048, 64);
	uint8_t *d = drv_ring_entry(f, rx, rx->pi++);

	memset(d, 0, 16);
	wr64(d + RXD(addr), buf);
	wr16(d + RXD(buf_len), 2048);
	db(f, TERN_DB_ETH_RXQ(rx->num), rx->pi & TERN_ETH_DB_PI_MASK);
	fk_run(f);
	if (tern_model_rx_frame(f->m, fr, len) != len)
		return 0xffff;
	return rd16(d + RXD(status));
}

/* The receive check: good, bad (header, payload, pseudo-header), and what it cannot judge. */
static void t_rx_csum(void)
{
	const uint16_t ok = TERN_ETH_DESC_DONE | TERN_ETH_RXD_CSUM_OK;
	const uint16_t bad = TERN_ETH_DESC_DONE | TERN_ETH_RXD_CSUM_BAD;
	struct fake f;
	struct drv_ring eq, rx;
	uint8_t fr[1514], st[sizeof(struct tern_cmd_eth_stats_out)];
	size_t l4;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 4));
	REQUIRE(drv_eq_create(&f, &eq, 12, 1, 0, false) == TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == TERN_CMD_OK);

#define FIX_L4(v6, proto, at)							\
	do {									\
		wr16be(fr + l4 + (at), 0);					\
		wr16be(fr + l4 + (at), (uint16_t)~ref_fold(ref_sum(		\
			ref_pseudo(fr, v6, proto, (uint32_t)(sizeof(fr) - l4)),	\
			fr + l4, sizeof(fr) - l4)));				\
	} while (0)
	/* good TCP/IPv4, UDP/IPv6 */
	l4 = build(fr, sizeof(fr), false, 6, 1, true);
	FIX_L4(false, 6, 16);
	CHECK_EQ(rx_one(&f, &rx, fr, sizeof(fr)), ok);
	l4 = build(fr, sizeof(fr), true, 17, 2, true);
	FIX_L4(true, 17, 6);
	CHECK_EQ(rx_one(&f, &rx, fr, sizeof(fr)), ok);
	/* one payload bit flipped: bad, delivered, counted */
	fr[1000] ^= 0x10;
	CHECK_EQ(rx_one(&f, &rx, fr, sizeof(fr)), bad);
	/* IPv4 header checksum wrong (the TTL changed) */
	l4 = build(fr, sizeof(fr), false, 6, 3, true);
	FIX_L4(false, 6, 16);
	fr[22]--;
	CHECK_EQ(rx_one(&f, &rx, fr, sizeof(fr)), bad);
	/* a destination address changed: the pseudo-header no longer matches */
	l4 = build(fr, sizeof(fr), false, 17, 4, true);
	FIX_L4(false, 17, 6);
	fr[33] ^= 1;
	wr16be(fr + 24, 0);
	wr16be(fr + 24, (uint16_t)~ref_fold(ref_sum(0, fr + 14, 20)));
	CHECK_EQ(rx_one(&f, &rx, fr, sizeof(fr)), bad);
	/* what the device leaves to the stack: UDP/IPv4 without a sum, a fragment, a total
	 * length beyond the frame, a protocol it does not know, not IP at all */
	l4 = build(fr, sizeof(fr), false, 17, 5, true);
	wr16be(fr + l4 + 6, 0);
	CHECK_EQ(rx_one(&f, &rx, fr, sizeof(fr)), TERN_ETH_DESC_DONE);
	l4 = build(fr, sizeof(fr), false, 6, 6, true);
	FIX_L4(false, 6, 16);
	fr[20] = 0x20;					/* MF */
	wr16be(fr + 24, 0);
	wr16be(fr + 24, (uint16_t)~ref_fold(ref_sum(0, fr + 14, 20)));
	CHECK_EQ(rx_one(&f, &rx, fr, sizeof(fr)), TERN_ETH_DESC_DONE);
	l4 = build(fr, sizeof(fr), false, 6, 7, true);
	FIX_L4(false, 6, 16);
	CHECK_EQ(rx_one(&f, &rx, fr, 1000), TERN_ETH_DESC_DONE);	/* cut short */
	l4 = build(fr, sizeof(fr), false, 47, 8, true);
	CHECK_EQ(rx_one(&f, &rx, fr, sizeof(fr)), TERN_ETH_DESC_DONE);
	fr[12] = 0x88;
	fr[13] = 0xb5;
	CHECK_EQ(rx_one(&f, &rx, fr, sizeof(fr)), TERN_ETH_DESC_DONE);
#undef FIX_L4
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, rx_csum_bad), 3);
	CHECK_EQ(STAT(st, rx_frames), 10);
	fk_fini(&f);
}

/* The model's Internet checksum (frame_csum_add: 8 bytes at a time) against ref_sum. */
static void t_csum_blocks(void)
{
	static uint8_t buf[1600 + 8];
	uint32_t x = 12345;
	size_t len, off, i;

	for (i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	memset(buf + 100, 0xff, 200);		/* long runs of carries */
	for (len = 0; len <= 1600; len++)
		for (off = 0; off < 8; off++) {
			uint32_t s0 = (uint32_t)(len * 40503u + off) & 0x3ffff;

			CHECK_EQ(frame_csum_fold(frame_csum_add(s0, buf + off, len)),
				 ref_fold(ref_sum(s0, buf + off, len)));
		}
}

const struct test eth_offload_tests[] = {
	{ "eth offload: the checksum 8 bytes at a time equals word by word, 0..1600 bytes at any "
	  "alignment", t_csum_blocks },
	{ "eth offload: a frame in five pieces leaves whole, every descriptor done", t_gather },
	{ "eth offload: TX checksum, TCP/UDP over IPv4/IPv6", t_csum },
	{ "eth offload: TSO over IPv4/IPv6, 0..65482 bytes, headers, sums, sequence, flags",
	  t_tso },
	{ "eth offload: refused layouts complete with ERR, counted, the next frame goes",
	  t_bad_layouts },
	{ "eth offload: a frame posted in part waits for its last descriptor", t_partial },
	{ "eth offload: RX checksum good/bad/unknown, rx_csum_bad", t_rx_csum },
	{ NULL, NULL },
};
