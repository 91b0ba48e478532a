/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Receive side scaling (SET_RSS in include/linux/tern/tern_cmd.h; Documentation/hw/interface.rst,
 * "Receive side scaling"): the Toeplitz hash against the published verification values of
 * Microsoft's RSS specification, written back into the RX descriptor; frames spread over
 * the queues the indirection table names; non-IP frames to the lowest queue; a frame
 * waiting for its own queue's buffer; bad commands refused with the field's offset.
 */
#include <stdlib.h>

#include "tests.h"

#define RXD(f) OFF(struct tern_eth_rxd, f)
#define RSS(f) OFF(struct tern_cmd_set_rss_in, f)

static const uint8_t peer_mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };

/* The key of the verification suite ("Verifying the RSS Hash Calculation"). */
static const uint8_t ms_key[TERN_RSS_KEY_SIZE] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* ---- frames ------------------------------------------------------------------------------ */

static void put16be(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/*
 * An Ethernet frame of @len bytes to test_mac: IPv4 (@alen 4) or IPv6 (16) from @src to
 * @dst carrying @proto (6 TCP, 17 UDP, else other) from port @sport to @dport, a payload
 * pattern after the headers. Checksums are not filled in: RSS does not look at them.
 */
static size_t ip_frame(uint8_t *f, size_t len, unsigned int alen, const uint8_t *src,
		       const uint8_t *dst, uint8_t proto, uint16_t sport, uint16_t dport)
{
	size_t l4 = 14 + (alen == 4 ? 20 : 40), i;

	memset(f, 0, len);
	memcpy(f, test_mac, 6);
	memcpy(f + 6, peer_mac, 6);
	if (alen == 4) {
		put16be(f + 12, 0x0800);
		f[14] = 0x45;
		put16be(f + 16, (uint16_t)(len - 14));
		f[22] = 64;
		f[23] = proto;
		memcpy(f + 26, src, 4);
		memcpy(f + 30, dst, 4);
	} else {
		put16be(f + 12, 0x86dd);
		f[14] = 0x60;
		put16be(f + 18, (uint16_t)(len - l4));
		f[20] = proto;
		f[21] = 64;
		memcpy(f + 22, src, 16);
		memcpy(f + 38, dst, 16);
	}
	put16be(f + l4, sport);
	put16be(f + l4 + 2, dport);
	if (proto == 6)
		f[l4 + 12] = 5 << 4;
	for (i = l4 + 20; i < len; i++)
		f[i] = (uint8_t)(i * 7 + sport);
	return l4;
}

/* ---- device -------------------------------------------------------------------------------- */

struct rss_dev {
	struct fake f;
	struct drv_ring eq;
	struct drv_ring rx[4];
	unsigned int nrx;
};

static void rss_dev_init(struct rss_dev *d, unsigned int nrx)
{
	unsigned int i;

	fk_init(&d->f, false);
	REQUIRE(drv_cmdq_enable(&d->f, 4));
	REQUIRE(drv_eq_create(&d->f, &d->eq, 12, 1, 0, false) == TERN_CMD_OK);
	for (i = 0; i < nrx; i++) {
		REQUIRE(drv_ethq_create(&d->f, &d->rx[i], true, 8, d->eq.num, false) == 0);
		REQUIRE(d->rx[i].num == i);
	}
	d->nrx = nrx;
}

/* Posts one buffer on @q (not rung); returns its address. */
static uint64_t rx_post(struct fake *f, struct drv_ring *q)
{
	uint64_t buf = fk_alloc(f, 2048, 64);
	uint8_t *d = drv_ring_entry(f, q, q->pi++);

	memset(d, 0, 16);
	wr64(d + RXD(addr), buf);
	wr16(d + RXD(buf_len), 2048);
	return buf;
}

static void rx_ring(struct fake *f, struct drv_ring *q)
{
	db(f, TERN_DB_ETH_RXQ(q->num), q->pi & TERN_ETH_DB_PI_MASK);
	fk_run(f);
}

static int set_rss(struct fake *f, uint32_t fields, uint32_t flags, const uint8_t *key,
		   const uint8_t *indir, uint32_t *syndrome)
{
	uint8_t in[sizeof(struct tern_cmd_set_rss_in)];
	struct cqe c;
	int rc;

	memset(in, 0, sizeof(in));
	wr32(in + RSS(hash_fields), fields);
	wr32(in + RSS(flags), flags);
	memcpy(in + RSS(key), key, TERN_RSS_KEY_SIZE);
	memcpy(in + RSS(indir), indir, TERN_RSS_INDIR_SIZE);
	rc = drv_cmd(f, TERN_CMD_SET_RSS, in, sizeof(in), NULL, 0, &c);
	if (syndrome)
		*syndrome = c.syndrome;
	return rc;
}

/*
 * One frame into a device whose every queue has a buffer posted: the queue that took it
 * (-1: none), its descriptor status and the write-back's first 32 bits.
 */
static int rx_where(struct rss_dev *d, const uint8_t *fr, size_t len, uint16_t *status,
		    uint32_t *hash)
{
	unsigned int i;

	for (i = 0; i < d->nrx; i++) {
		if (d->rx[i].pi == d->rx[i].ci) {
			rx_post(&d->f, &d->rx[i]);
			rx_ring(&d->f, &d->rx[i]);
		}
	}
	if (tern_model_rx_frame(d->f.m, fr, len) != len)
		return -1;
	for (i = 0; i < d->nrx; i++) {
		uint8_t *e = drv_ring_entry(&d->f, &d->rx[i], d->rx[i].ci);

		if (rd16(e + RXD(status)) & TERN_ETH_DESC_DONE) {
			*status = rd16(e + RXD(status));
			*hash = rd32(e + RXD(rss_hash));
			d->rx[i].ci++;
			return (int)i;
		}
	}
	return -1;
}

/* ---- the verification values ----------------------------------------------------------- */

struct ms_vector {
	const char *src, *dst;	/* addresses, as bytes below */
	uint8_t s[16], d[16];
	uint16_t sport, dport;
	uint32_t l3, l4;	/* hash of the addresses; of addresses and TCP ports */
};

/* IPv4: destination, source, ports and both hashes as the specification lists them. */
static const struct ms_vector v4[] = {
	{ "66.9.149.187", "161.142.100.80", { 66, 9, 149, 187 }, { 161, 142, 100, 80 },
	  2794, 1766, 0x323e8fc2, 0x51ccc178 },
	{ "199.92.111.2", "65.69.140.83", { 199, 92, 111, 2 }, { 65, 69, 140, 83 },
	  14230, 4739, 0xd718262a, 0xc626b0ea },
	{ "24.19.198.95", "12.22.207.184", { 24, 19, 198, 95 }, { 12, 22, 207, 184 },
	  12898, 38024, 0xd2d0a5de, 0x5c2b394a },
	{ "38.27.205.30", "209.142.163.6", { 38, 27, 205, 30 }, { 209, 142, 163, 6 },
	  48228, 2217, 0x82989176, 0xafc7327f },
	{ "153.39.163.191", "202.188.127.2", { 153, 39, 163, 191 }, { 202, 188, 127, 2 },
	  44251, 1303, 0x5d1809c5, 0x10e828a2 },
};

static const struct ms_vector v6[] = {
	{ "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1",
	  { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 7 },
	  { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 1 },
	  2794, 1766, 0x2cc18cd5, 0x40207d3d },
	{ "3ffe:501:8::260:97ff:fe40:efab", "ff02::1",
	  { 0x3f, 0xfe, 0x05, 0x01, 0x00, 0x08, 0, 0, 0x02, 0x60, 0x97, 0xff, 0xfe, 0x40,
	    0xef, 0xab },
	  { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 },
	  14230, 4739, 0x0f0c461c, 0xdde51bbf },
	{ "3ffe:1900:4545:3:200:f8ff:fe21:67cf", "fe80::200:f8ff:fe21:67cf",
	  { 0x3f, 0xfe, 0x19, 0x00, 0x45, 0x45, 0x00, 0x03, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21,
	    0x67, 0xcf },
	  { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf },
	  44251, 38024, 0x4b61e985, 0x02d1feef },
};

static void check_vectors(struct rss_dev *d, const struct ms_vector *v, size_t n,
			  unsigned int alen, uint32_t l3_field, uint32_t l4_field)
{
	uint8_t indir[TERN_RSS_INDIR_SIZE] = { 0 }, fr[128];
	uint16_t st;
	uint32_t h;
	size_t i;
	int round;

	for (round = 0; round < 2; round++) {
		/* round 0: addresses only (TCP not enabled); round 1: the TCP 4-tuple */
		REQUIRE(set_rss(&d->f, round ? l3_field | l4_field : l3_field, 0, ms_key, indir,
				NULL) == TERN_CMD_OK);
		for (i = 0; i < n; i++) {
			uint32_t want = round ? v[i].l4 : v[i].l3;

			ip_frame(fr, sizeof(fr), alen, v[i].s, v[i].d, 6, v[i].sport, v[i].dport);
			CHECK_EQ(rx_where(d, fr, sizeof(fr), &st, &h), 0);
			CHECK(st & TERN_ETH_RXD_HASH);
			CHECK_EQ(!!(st & TERN_ETH_RXD_HASH_L4), round);
			if (h != want) {
				t_failures++;
				printf("#   %s -> %s %s: hash %#x, the specification's %#x\n",
				       v[i].src, v[i].dst, round ? "TCP" : "IP", h, want);
			}
		}
	}
}

static void t_toeplitz_vectors(void)
{
	struct rss_dev d;

	rss_dev_init(&d, 1);
	check_vectors(&d, v4, sizeof(v4) / sizeof(v4[0]), 4, TERN_RSS_HASH_IPV4,
		      TERN_RSS_HASH_TCP_IPV4);
	check_vectors(&d, v6, sizeof(v6) / sizeof(v6[0]), 16, TERN_RSS_HASH_IPV6,
		      TERN_RSS_HASH_TCP_IPV6);
	fk_fini(&d.f);
}

/*
 * Flows spread over four queues as the table says, bytes intact; the same flow always on
 * the same queue; non-IP frames on the lowest queue without a hash, UDP (not enabled) by
 * its addresses; every frame counted once.
 */
static void t_spread(void)
{
	static const uint8_t a[4] = { 10, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 };
	uint8_t indir[TERN_RSS_INDIR_SIZE], fr[300], st_out[sizeof(struct tern_cmd_eth_stats_out)];
	unsigned int per_q[4] = { 0 }, i, total = 0;
	struct rss_dev d;
	uint16_t st;
	uint32_t h, h2;
	int q, q2;

	rss_dev_init(&d, 4);
	for (i = 0; i < TERN_RSS_INDIR_SIZE; i++)
		indir[i] = (uint8_t)(i % 4);
	REQUIRE(set_rss(&d.f, TERN_RSS_HASH_IPV4 | TERN_RSS_HASH_TCP_IPV4, 0, ms_key, indir,
			NULL) == TERN_CMD_OK);
	for (i = 0; i < 64; i++) {
		uint8_t *e;

		ip_frame(fr, sizeof(fr), 4, a, b, 6, (uint16_t)(40000 + i), 5201);
		q = rx_where(&d, fr, sizeof(fr), &st, &h);
		REQUIRE(q >= 0);
		CHECK_EQ(q, indir[h % TERN_RSS_INDIR_SIZE]);
		CHECK_EQ(st & (TERN_ETH_RXD_HASH | TERN_ETH_RXD_HASH_L4),
			 TERN_ETH_RXD_HASH | TERN_ETH_RXD_HASH_L4);
		/* the frame itself is intact in the buffer the driver posted */
		e = drv_ring_entry(&d.f, &d.rx[q], d.rx[q].ci - 1);
		CHECK_EQ(rd16(e + RXD(pkt_len)), sizeof(fr));
		per_q[q]++;
		total++;
		/* the same flow again: the same queue and hash */
		q2 = rx_where(&d, fr, sizeof(fr), &st, &h2);
		CHECK_EQ(q2, q);
		CHECK_EQ(h2, h);
		per_q[q]++;
		total++;
	}
	for (i = 0; i < 4; i++) {
		if (!per_q[i]) {
			t_failures++;
			printf("#   queue %u received nothing of 64 flows\n", i);
		}
	}
	/* UDP is not enabled: the addresses' hash; ARP: no hash, queue 0 */
	ip_frame(fr, sizeof(fr), 4, a, b, 17, 1, 2);
	q = rx_where(&d, fr, sizeof(fr), &st, &h);
	CHECK_EQ(st & (TERN_ETH_RXD_HASH | TERN_ETH_RXD_HASH_L4), TERN_ETH_RXD_HASH);
	CHECK_EQ(q, indir[h % TERN_RSS_INDIR_SIZE]);
	per_q[q]++;
	memset(fr, 0, 60);
	memcpy(fr, test_mac, 6);
	memcpy(fr + 6, peer_mac, 6);
	put16be(fr + 12, 0x0806);
	CHECK_EQ(rx_where(&d, fr, 60, &st, &h), 0);
	CHECK_EQ(st & TERN_ETH_RXD_HASH, 0);
	per_q[0]++;
	total += 2;
	REQUIRE(drv_eth_stats(&d.f, st_out));
	CHECK_EQ(STAT(st_out, rx_frames), total);
	/* RSS off: everything to queue 0 again, no hash */
	REQUIRE(set_rss(&d.f, 0, 0, ms_key, indir, NULL) == TERN_CMD_OK);
	ip_frame(fr, sizeof(fr), 4, a, b, 6, 40001, 5201);
	CHECK_EQ(rx_where(&d, fr, sizeof(fr), &st, &h), 0);
	CHECK_EQ(st & TERN_ETH_RXD_HASH, 0);
	fk_fini(&d.f);
}

/*
 * A frame whose queue has no buffer waits for that queue (not another); destroying a queue
 * the table names sends its flows to the lowest queue; a reset turns RSS off.
 */
static void t_wait_destroy_reset(void)
{
	static const uint8_t a[4] = { 10, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 };
	uint8_t indir[TERN_RSS_INDIR_SIZE], fr[100], d4[4];
	struct rss_dev d;
	uint8_t *e;
	uint16_t st;
	uint32_t h;

	rss_dev_init(&d, 2);
	memset(indir, 1, sizeof(indir));	/* everything to queue 1 */
	REQUIRE(set_rss(&d.f, TERN_RSS_HASH_ALL, 0, ms_key, indir, NULL) == TERN_CMD_OK);
	ip_frame(fr, sizeof(fr), 4, a, b, 6, 1000, 2000);
	rx_post(&d.f, &d.rx[0]);
	rx_ring(&d.f, &d.rx[0]);
	/* queue 1 has no buffer: refused although queue 0 has one */
	CHECK_EQ(tern_model_rx_frame(d.f.m, fr, sizeof(fr)), 0);
	CHECK_EQ(d.f.rx_ready_calls, 0);
	rx_post(&d.f, &d.rx[1]);
	rx_ring(&d.f, &d.rx[1]);
	CHECK_EQ(d.f.rx_ready_calls, 1);
	CHECK_EQ(tern_model_rx_frame(d.f.m, fr, sizeof(fr)), sizeof(fr));
	e = drv_ring_entry(&d.f, &d.rx[1], 0);
	CHECK(rd16(e + RXD(status)) & TERN_ETH_RXD_HASH);
	CHECK_EQ(rd16(drv_ring_entry(&d.f, &d.rx[0], 0) + RXD(status)), 0);
	d.rx[1].ci++;
	/* queue 1 destroyed: its flows go to queue 0, still hashed */
	wr32(d4, 1);
	REQUIRE(drv_cmd(&d.f, TERN_CMD_DESTROY_ETH_RXQ, d4, 4, NULL, 0, NULL) == TERN_CMD_OK);
	d.nrx = 1;
	CHECK_EQ(rx_where(&d, fr, sizeof(fr), &st, &h), 0);
	CHECK(st & TERN_ETH_RXD_HASH);
	/* a table naming it is refused now */
	CHECK_EQ(set_rss(&d.f, TERN_RSS_HASH_ALL, 0, ms_key, indir, NULL), TERN_CMD_BAD_PARAM);
	/* reset: RSS off */
	memset(indir, 0, sizeof(indir));
	REQUIRE(set_rss(&d.f, TERN_RSS_HASH_ALL, 0, ms_key, indir, NULL) == TERN_CMD_OK);
	fk_fini(&d.f);

	rss_dev_init(&d, 1);
	REQUIRE(set_rss(&d.f, TERN_RSS_HASH_ALL, 0, ms_key, indir, NULL) == TERN_CMD_OK);
	wreg(&d.f, TERN_REG_CTRL, TERN_CTRL_RESET);
	fk_advance(&d.f, 10ull * 1000 * 1000);
	REQUIRE(drv_cmdq_enable(&d.f, 4));
	REQUIRE(drv_eq_create(&d.f, &d.eq, 12, 1, 0, false) == TERN_CMD_OK);
	REQUIRE(drv_ethq_create(&d.f, &d.rx[0], true, 8, d.eq.num, false) == 0);
	CHECK_EQ(rx_where(&d, fr, sizeof(fr), &st, &h), 0);
	CHECK_EQ(st & TERN_ETH_RXD_HASH, 0);
	fk_fini(&d.f);
}

/* Bad SET_RSS: unknown fields and flags, entries naming no queue, wrong length. */
static void t_bad_commands(void)
{
	uint8_t indir[TERN_RSS_INDIR_SIZE] = { 0 }, in[8];
	struct rss_dev d;
	uint32_t syn = 0;
	struct cqe c;
	unsigned int i;

	rss_dev_init(&d, 2);
	CHECK_EQ(set_rss(&d.f, 1u << 6, 0, ms_key, indir, &syn), TERN_CMD_BAD_PARAM);
	CHECK_EQ(syn, RSS(hash_fields));
	CHECK_EQ(set_rss(&d.f, TERN_RSS_HASH_ALL, 1, ms_key, indir, &syn), TERN_CMD_BAD_PARAM);
	CHECK_EQ(syn, RSS(flags));
	/* every hostile value of one entry: only 0 and 1 exist */
	for (i = 2; i < 256; i++) {
		indir[77] = (uint8_t)i;
		if (set_rss(&d.f, TERN_RSS_HASH_ALL, 0, ms_key, indir, &syn) != TERN_CMD_BAD_PARAM ||
		    syn != RSS(indir) + 77) {
			t_failures++;
			printf("#   entry %u accepted or wrong syndrome %u\n", i, syn);
			break;
		}
	}
	/* with RSS off the table is not judged */
	CHECK_EQ(set_rss(&d.f, 0, 0, ms_key, indir, NULL), TERN_CMD_OK);
	indir[77] = 1;
	CHECK_EQ(set_rss(&d.f, TERN_RSS_HASH_ALL, 0, ms_key, indir, NULL), TERN_CMD_OK);
	memset(in, 0, sizeof(in));
	CHECK_EQ(drv_cmd(&d.f, TERN_CMD_SET_RSS, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, sizeof(struct tern_cmd_set_rss_in));
	CHECK_EQ(rreg(&d.f, TERN_REG_STATUS) & TERN_STATUS_FATAL, 0);
	fk_fini(&d.f);
}

const struct test eth_rss_tests[] = {
	{ "RSS: Toeplitz hash = Microsoft's verification values, IPv4/IPv6, 2- and 4-tuple",
	  t_toeplitz_vectors },
	{ "RSS: flows spread over 4 queues by the table, non-IP to queue 0",
	  t_spread },
	{ "RSS: a frame waits for its own queue; destroyed queue -> lowest; reset -> off",
	  t_wait_destroy_reset },
	{ "RSS: bad SET_RSS refused with the field's offset", t_bad_commands },
	{ NULL, NULL },
};
