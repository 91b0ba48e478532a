/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Wire fault injection (SET_WIRE_FAULTS / QUERY_WIRE_FAULTS): each fault alone, the
 * probabilities over many frames, determinism of the seed, ROCE_ONLY, reordering and its
 * flush, the single corrupted bit, counters, bad parameters, reset. Frames are sent from an
 * Ethernet TX queue; each carries its number at bytes 50..53 and a pattern derived from it.
 */
#include <stdlib.h>

#include "test_rdma.h"	/* pat() */

#define TXD(f)		OFF(struct tern_eth_txd, f)
#define WF(f)		OFF(struct tern_wire_faults, f)
#define WQ(f)		OFF(struct tern_cmd_query_wire_faults_out, f)

#define W_TX_LOG	12
#define W_BATCH		256	/* frames per doorbell (and buffers) */
#define W_BUF		256	/* bytes per buffer */
#define W_NUM_OFF	50	/* where a frame's number is (after any header we build) */

static const uint8_t peer_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x77 };

struct wtx {
	struct fake f;
	struct drv_ring eq, tx;
	uint64_t buf[W_BATCH];
	uint32_t next;		/* number of the next frame */
};

/* Kind of frame number @n: plain, 802.1Q-tagged, or RoCEv2 (IPv4/UDP/4791, maybe tagged). */
enum { K_PLAIN, K_VLAN, K_ROCE, K_ROCE_VLAN };

static size_t frame_len(uint32_t n)
{
	return 64 + (n * 37) % 150;
}

/* Build frame number @n of kind @k into @p; returns its length. */
static size_t frame_build(uint8_t *p, uint32_t n, unsigned int k)
{
	size_t len = frame_len(n), i, o = 12;

	memcpy(p, peer_mac, 6);
	memcpy(p + 6, test_mac, 6);
	for (i = 12; i < len; i++)
		p[i] = pat(n, i);
	if (k == K_VLAN || k == K_ROCE_VLAN) {
		p[o] = 0x81;
		p[o + 1] = 0x00;
		p[o + 2] = 0x00;
		p[o + 3] = 0x05;
		o += 4;
	}
	if (k == K_ROCE || k == K_ROCE_VLAN) {
		p[o] = 0x08;			/* IPv4 */
		p[o + 1] = 0x00;
		p[o + 2] = 0x45;
		p[o + 2 + 9] = 17;		/* UDP */
		p[o + 2 + 20 + 2] = (uint8_t)(TERN_ROCE_UDP_DPORT >> 8);
		p[o + 2 + 20 + 3] = (uint8_t)TERN_ROCE_UDP_DPORT;
	} else {
		p[o] = 0x88;			/* local experimental ethertype */
		p[o + 1] = 0xb5;
	}
	/* the number last: the headers above end before byte 42 */
	wr32(p + W_NUM_OFF, n);
	return len;
}

static uint32_t frame_num(const uint8_t *p)
{
	return rd32(p + W_NUM_OFF);
}

static unsigned int kind_plain(uint32_t n)
{
	(void)n;
	return K_PLAIN;
}

/* The four kinds in turn. */
static unsigned int kind_mix(uint32_t n)
{
	return n % 4;
}

static unsigned int kind_roce_half(uint32_t n)
{
	return n % 2 ? K_ROCE : K_PLAIN;
}

static bool wtx_init(struct wtx *t)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	fk_init(&t->f, false);
	if (!drv_cmdq_enable(&t->f, 4) ||
	    drv_eq_create(&t->f, &t->eq, 12, 1, 0, false) != TERN_CMD_OK ||
	    drv_ethq_create(&t->f, &t->tx, false, W_TX_LOG, t->eq.num, false) != TERN_CMD_OK)
		return false;
	for (i = 0; i < W_BATCH; i++)
		t->buf[i] = fk_alloc(&t->f, W_BUF, 64);
	return true;
}

/* Send @n frames numbered from t->next, of the kinds @kind gives, W_BATCH per run. */
static void wtx_send(struct wtx *t, uint32_t n, unsigned int (*kind)(uint32_t))
{
	while (n) {
		uint32_t b = n < W_BATCH ? n : W_BATCH, i;

		for (i = 0; i < b; i++) {
			uint8_t *p = fk_ptr(&t->f, t->buf[i], W_BUF);
			uint8_t *d = drv_ring_entry(&t->f, &t->tx, t->tx.pi);
			uint32_t num = t->next++;

			memset(d, 0, 16);
			wr64(d + TXD(addr), t->buf[i]);
			wr16(d + TXD(len), (uint16_t)frame_build(p, num, kind(num)));
			t->tx.pi++;
		}
		db(&t->f, TERN_DB_ETH_TXQ(t->tx.num), t->tx.pi & TERN_ETH_DB_PI_MASK);
		fk_run(&t->f);
		n -= b;
	}
}

static int wf_set(struct fake *f, uint32_t drop, uint32_t corrupt, uint32_t dup, uint32_t reorder,
		  uint32_t flags, uint64_t seed, struct cqe *c)
{
	uint8_t in[sizeof(struct tern_wire_faults)] = { 0 };

	wr32(in + WF(drop_ppm), drop);
	wr32(in + WF(corrupt_ppm), corrupt);
	wr32(in + WF(duplicate_ppm), dup);
	wr32(in + WF(reorder_ppm), reorder);
	wr32(in + WF(flags), flags);
	wr64(in + WF(seed), seed);
	return drv_cmd(f, TERN_CMD_SET_WIRE_FAULTS, in, sizeof(in), NULL, 0, c);
}

static bool wf_query(struct fake *f, uint8_t out[sizeof(struct tern_cmd_query_wire_faults_out)])
{
	memset(out, 0xee, sizeof(struct tern_cmd_query_wire_faults_out));
	return drv_cmd(f, TERN_CMD_QUERY_WIRE_FAULTS, NULL, 0, out,
		       sizeof(struct tern_cmd_query_wire_faults_out), NULL) == TERN_CMD_OK;
}

#define WQSTAT(o, field) rd64((o) + WQ(field))

/* Captured frame @i is frame number @n of kind @k, unchanged. */
static bool frame_is(struct fake *f, unsigned int i, uint32_t n, unsigned int k)
{
	uint8_t want[W_BUF];
	size_t len = frame_build(want, n, k);

	return i < f->nframes && f->frames[i].len == len && !memcmp(f->frames[i].data, want, len);
}

/* Bits differing between two buffers; *first: lowest differing bit. */
static unsigned int bit_diff(const uint8_t *a, const uint8_t *b, size_t len, size_t *first)
{
	unsigned int n = 0;
	size_t i;
	int k;

	*first = SIZE_MAX;
	for (i = 0; i < len; i++) {
		uint8_t x = a[i] ^ b[i];

		for (k = 0; k < 8; k++) {
			if (x & (1u << k)) {
				if (*first == SIZE_MAX)
					*first = i * 8 + (size_t)k;
				n++;
			}
		}
	}
	return n;
}

/* ---- tests ----------------------------------------------------------------------------------- */

/* Off (the reset state) and every probability at 0: frames go out untouched. */
static void t_off_and_zero(void)
{
	struct wtx t;
	uint8_t q[sizeof(struct tern_cmd_query_wire_faults_out)];
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)];
	unsigned int i;

	REQUIRE(wtx_init(&t));
	REQUIRE(wf_query(&t.f, q));
	for (i = 0; i < sizeof(q); i++)
		CHECK_EQ(q[i], 0);
	wtx_send(&t, 300, kind_mix);
	CHECK_EQ(wf_set(&t.f, 0, 0, 0, 0, TERN_WIRE_FAULT_F_ROCE_ONLY, 12345, NULL), TERN_CMD_OK);
	wtx_send(&t, 300, kind_mix);
	CHECK_EQ(t.f.nframes, 600);
	for (i = 0; i < 600; i++)
		CHECK(frame_is(&t.f, i, i, kind_mix(i)));
	REQUIRE(wf_query(&t.f, q));
	CHECK_EQ(WQSTAT(q, frames), 600);
	CHECK_EQ(WQSTAT(q, dropped) + WQSTAT(q, corrupted) + WQSTAT(q, duplicated) +
		 WQSTAT(q, reordered), 0);
	CHECK_EQ(rd32(q + WQ(cfg) + WF(flags)), TERN_WIRE_FAULT_F_ROCE_ONLY);
	CHECK_EQ(rd64(q + WQ(cfg) + WF(seed)), 12345);
	REQUIRE(drv_eth_stats(&t.f, st));
	CHECK_EQ(STAT(st, tx_frames), 600);
	fk_fini(&t.f);
}

static void t_drop_all(void)
{
	struct wtx t;
	uint8_t q[sizeof(struct tern_cmd_query_wire_faults_out)];
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)];

	REQUIRE(wtx_init(&t));
	CHECK_EQ(wf_set(&t.f, TERN_WIRE_FAULT_PPM_MAX, 0, 0, 0, 0, 1, NULL), TERN_CMD_OK);
	wtx_send(&t, 500, kind_mix);
	CHECK_EQ(t.f.nframes, 0);
	REQUIRE(wf_query(&t.f, q));
	CHECK_EQ(WQSTAT(q, frames), 500);
	CHECK_EQ(WQSTAT(q, dropped), 500);
	CHECK_EQ(WQSTAT(q, corrupted) + WQSTAT(q, duplicated) + WQSTAT(q, reordered), 0);
	CHECK_EQ(rd32(q + WQ(cfg) + WF(drop_ppm)), TERN_WIRE_FAULT_PPM_MAX);
	/* the port transmitted them: its counters count frames before the injector */
	REQUIRE(drv_eth_stats(&t.f, st));
	CHECK_EQ(STAT(st, tx_frames), 500);
	/* a drop beats everything else */
	CHECK_EQ(wf_set(&t.f, TERN_WIRE_FAULT_PPM_MAX, TERN_WIRE_FAULT_PPM_MAX,
			TERN_WIRE_FAULT_PPM_MAX, TERN_WIRE_FAULT_PPM_MAX, 0, 1, NULL), TERN_CMD_OK);
	wtx_send(&t, 100, kind_mix);
	CHECK_EQ(t.f.nframes, 0);
	REQUIRE(wf_query(&t.f, q));
	CHECK_EQ(WQSTAT(q, dropped), 600);
	CHECK_EQ(WQSTAT(q, corrupted) + WQSTAT(q, duplicated) + WQSTAT(q, reordered), 0);
	fk_fini(&t.f);
}

/* Exactly one bit flips, never in the Ethernet header or the VLAN tag; positions spread. */
static void t_corrupt_all(void)
{
	struct wtx t;
	uint8_t q[sizeof(struct tern_cmd_query_wire_faults_out)];
	uint8_t want[W_BUF];
	unsigned int i, bad = 0, low = 0, high = 0, bytes_hit[W_BUF] = { 0 };
	const unsigned int n = 2000;

	REQUIRE(wtx_init(&t));
	CHECK_EQ(wf_set(&t.f, 0, TERN_WIRE_FAULT_PPM_MAX, 0, 0, 0, 99, NULL), TERN_CMD_OK);
	wtx_send(&t, n, kind_mix);
	REQUIRE(t.f.nframes == n);
	for (i = 0; i < n; i++) {
		size_t len = frame_build(want, i, kind_mix(i)), first;
		unsigned int k = kind_mix(i);
		size_t l2 = (k == K_VLAN || k == K_ROCE_VLAN) ? 18 : 14;

		if (t.f.frames[i].len != len ||
		    bit_diff(t.f.frames[i].data, want, len, &first) != 1 || first < l2 * 8) {
			bad++;
			continue;
		}
		bytes_hit[first / 8]++;
		if (first / 8 == l2)
			low++;
		if (first / 8 >= len - 8)
			high++;
	}
	CHECK_EQ(bad, 0);
	/* the first byte after L2 and the last bytes get hit too: the whole range is covered */
	CHECK(low > 0);
	CHECK(high > 0);
	CHECK_EQ(bytes_hit[0] + bytes_hit[5] + bytes_hit[13], 0);
	REQUIRE(wf_query(&t.f, q));
	CHECK_EQ(WQSTAT(q, corrupted), n);
	CHECK_EQ(WQSTAT(q, frames), n);
	fk_fini(&t.f);
}

static void t_duplicate_all(void)
{
	struct wtx t;
	uint8_t q[sizeof(struct tern_cmd_query_wire_faults_out)];
	unsigned int i;

	REQUIRE(wtx_init(&t));
	CHECK_EQ(wf_set(&t.f, 0, 0, TERN_WIRE_FAULT_PPM_MAX, 0, 0, 7, NULL), TERN_CMD_OK);
	wtx_send(&t, 400, kind_mix);
	REQUIRE(t.f.nframes == 800);
	for (i = 0; i < 400; i++) {
		CHECK(frame_is(&t.f, 2 * i, i, kind_mix(i)));
		CHECK(frame_is(&t.f, 2 * i + 1, i, kind_mix(i)));
	}
	REQUIRE(wf_query(&t.f, q));
	CHECK_EQ(WQSTAT(q, duplicated), 400);
	CHECK_EQ(WQSTAT(q, frames), 400);
	fk_fini(&t.f);
}

/*
 * Reorder at 100%: frame 0 is held, frame 1 cannot be held too and goes out followed by 0,
 * frame 2 is held, and so on; the last one held goes out when the run ends (idle).
 */
static void t_reorder_all(void)
{
	struct wtx t;
	uint8_t q[sizeof(struct tern_cmd_query_wire_faults_out)];
	unsigned int i;

	REQUIRE(wtx_init(&t));
	CHECK_EQ(wf_set(&t.f, 0, 0, 0, TERN_WIRE_FAULT_PPM_MAX, 0, 3, NULL), TERN_CMD_OK);
	wtx_send(&t, 3, kind_plain);
	REQUIRE(t.f.nframes == 3);
	CHECK(frame_is(&t.f, 0, 1, K_PLAIN));
	CHECK(frame_is(&t.f, 1, 0, K_PLAIN));
	CHECK(frame_is(&t.f, 2, 2, K_PLAIN));	/* held at the end of the run, flushed */
	REQUIRE(wf_query(&t.f, q));
	CHECK_EQ(WQSTAT(q, reordered), 2);
	fk_clear_frames(&t.f);
	/* a longer burst: pairs swap */
	wtx_send(&t, 200, kind_plain);
	REQUIRE(t.f.nframes == 200);
	for (i = 0; i < 200; i += 2) {
		CHECK(frame_is(&t.f, i, 3 + i + 1, K_PLAIN));
		CHECK(frame_is(&t.f, i + 1, 3 + i, K_PLAIN));
	}
	REQUIRE(wf_query(&t.f, q));
	CHECK_EQ(WQSTAT(q, reordered), 102);
	/* duplicated and reordered: both copies come after the next frame */
	fk_clear_frames(&t.f);
	CHECK_EQ(wf_set(&t.f, 0, 0, TERN_WIRE_FAULT_PPM_MAX, TERN_WIRE_FAULT_PPM_MAX, 0, 3, NULL),
		 TERN_CMD_OK);
	wtx_send(&t, 2, kind_plain);
	REQUIRE(t.f.nframes == 4);
	CHECK(frame_is(&t.f, 0, 204, K_PLAIN));
	CHECK(frame_is(&t.f, 1, 204, K_PLAIN));
	CHECK(frame_is(&t.f, 2, 203, K_PLAIN));
	CHECK(frame_is(&t.f, 3, 203, K_PLAIN));
	fk_fini(&t.f);
}

/*
 * All four at once over 100000 frames: each counter near its expectation (within about
 * six standard deviations), and what reached the wire agrees with the counters.
 */
static void t_probabilities(void)
{
	struct wtx t;
	uint8_t q[sizeof(struct tern_cmd_query_wire_faults_out)];
	const uint32_t n = 100000;
	unsigned long out = 0, missing = 0, late = 0;
	uint8_t *seen = calloc(n, 1);
	uint32_t maxn = 0;
	double e;
	unsigned int i;

	REQUIRE(seen);
	if (!wtx_init(&t)) {
		free(seen);
		REQUIRE(0);
	}
	/* drop 10%, corrupt 5%, duplicate 2%, reorder 3% */
	CHECK_EQ(wf_set(&t.f, 100000, 50000, 20000, 30000, 0, 0x1234567890ull, NULL), TERN_CMD_OK);
	while (t.next < n) {
		wtx_send(&t, W_BATCH * 4 < n - t.next ? W_BATCH * 4 : n - t.next, kind_plain);
		for (i = 0; i < t.f.nframes; i++) {
			uint32_t num = frame_num(t.f.frames[i].data);

			out++;
			if (num < n)
				seen[num] = 1;
			if (num < maxn)
				late++;
			else
				maxn = num;
		}
		fk_clear_frames(&t.f);
	}
	for (i = 0; i < n; i++)
		missing += !seen[i];
	REQUIRE(wf_query(&t.f, q));
	CHECK_EQ(WQSTAT(q, frames), n);
	e = n * 0.10;
	CHECK(WQSTAT(q, dropped) > e - 600 && WQSTAT(q, dropped) < e + 600);
	e = n * 0.90 * 0.05;
	CHECK(WQSTAT(q, corrupted) > e - 400 && WQSTAT(q, corrupted) < e + 400);
	e = n * 0.90 * 0.02;
	CHECK(WQSTAT(q, duplicated) > e - 260 && WQSTAT(q, duplicated) < e + 260);
	/* a frame cannot be held while another is: slightly fewer than 0.9 * 3% */
	e = n * 0.90 * 0.03;
	CHECK(WQSTAT(q, reordered) > e * 0.9 - 300 && WQSTAT(q, reordered) < e + 300);
	/* frames on the wire: the sent ones, plus the second copies */
	CHECK_EQ(out, n - WQSTAT(q, dropped) + WQSTAT(q, duplicated));
	/* a frame whose number was hit by the corruption is counted as another one */
	CHECK(missing >= WQSTAT(q, dropped));
	CHECK(missing <= WQSTAT(q, dropped) + WQSTAT(q, corrupted));
	CHECK(late > 0);
	printf("#   dropped %llu corrupted %llu duplicated %llu reordered %llu (of %u)\n",
	       (unsigned long long)WQSTAT(q, dropped), (unsigned long long)WQSTAT(q, corrupted),
	       (unsigned long long)WQSTAT(q, duplicated), (unsigned long long)WQSTAT(q, reordered),
	       n);
	free(seen);
	fk_fini(&t.f);
}

/* Collect what @n frames from number 0 become under the current setting. */
static uint8_t *capture(struct wtx *t, uint32_t n, size_t *total)
{
	size_t cap = (size_t)n * 2 * (W_BUF + 4), o = 0;
	uint8_t *b = malloc(cap);
	unsigned int i;

	t->next = 0;
	wtx_send(t, n, kind_mix);
	for (i = 0; b && i < t->f.nframes && o + 4 + t->f.frames[i].len <= cap; i++) {
		wr32(b + o, (uint32_t)t->f.frames[i].len);
		memcpy(b + o + 4, t->f.frames[i].data, t->f.frames[i].len);
		o += 4 + t->f.frames[i].len;
	}
	fk_clear_frames(&t->f);
	*total = o;
	return b;
}

/* A seed decides which frames are damaged and how; SET restarts the generator. */
static void t_seed(void)
{
	struct wtx t;
	uint8_t *a = NULL, *b = NULL, *c = NULL, *d = NULL;
	size_t la, lb, lc, ld;
	const uint32_t pp = 200000;

	REQUIRE(wtx_init(&t));
	CHECK_EQ(wf_set(&t.f, pp, pp, pp, pp, 0, 42, NULL), TERN_CMD_OK);
	a = capture(&t, 1000, &la);
	CHECK_EQ(wf_set(&t.f, pp, pp, pp, pp, 0, 42, NULL), TERN_CMD_OK);
	b = capture(&t, 1000, &lb);
	CHECK_EQ(wf_set(&t.f, pp, pp, pp, pp, 0, 43, NULL), TERN_CMD_OK);
	c = capture(&t, 1000, &lc);
	/* without a new SET the generator continues: a different outcome */
	d = capture(&t, 1000, &ld);
	RQ(a && b && c && d);
	CHECK_EQ(la, lb);
	CHECK(!memcmp(a, b, la < lb ? la : lb));
	CHECK(la != lc || memcmp(a, c, la));
	CHECK(lc != ld || memcmp(c, d, lc));
out:
	free(a);
	free(b);
	free(c);
	free(d);
	fk_fini(&t.f);
}

/* ROCE_ONLY: every other frame is RoCEv2; only those are damaged. */
static void t_roce_only(void)
{
	struct wtx t;
	uint8_t q[sizeof(struct tern_cmd_query_wire_faults_out)];
	unsigned int i;

	REQUIRE(wtx_init(&t));
	CHECK_EQ(wf_set(&t.f, TERN_WIRE_FAULT_PPM_MAX, 0, 0, 0, TERN_WIRE_FAULT_F_ROCE_ONLY, 5,
			NULL), TERN_CMD_OK);
	wtx_send(&t, 400, kind_roce_half);
	REQUIRE(t.f.nframes == 200);
	for (i = 0; i < 200; i++)
		CHECK(frame_is(&t.f, i, 2 * i, K_PLAIN));
	REQUIRE(wf_query(&t.f, q));
	CHECK_EQ(WQSTAT(q, frames), 400);
	CHECK_EQ(WQSTAT(q, dropped), 200);
	fk_clear_frames(&t.f);
	/* tagged RoCE too; plain frames pass through untouched under duplicate+corrupt */
	CHECK_EQ(wf_set(&t.f, 0, TERN_WIRE_FAULT_PPM_MAX, TERN_WIRE_FAULT_PPM_MAX, 0,
			TERN_WIRE_FAULT_F_ROCE_ONLY, 5, NULL), TERN_CMD_OK);
	t.next = 0;
	wtx_send(&t, 400, kind_mix);
	REQUIRE(t.f.nframes == 600);
	for (i = 0; i < 400; i++) {
		unsigned int k = kind_mix(i), j = i / 4 * 6 + (i % 4 == 3 ? 4 : i % 4);

		if (k == K_ROCE || k == K_ROCE_VLAN) {
			CHECK(!frame_is(&t.f, j, i, k));
			CHECK(!frame_is(&t.f, j + 1, i, k));
			CHECK(t.f.frames[j].len == t.f.frames[j + 1].len &&
			      !memcmp(t.f.frames[j].data, t.f.frames[j + 1].data, t.f.frames[j].len));
		} else {
			CHECK(frame_is(&t.f, j, i, k));
		}
	}
	/* without the flag, every kind is damaged */
	fk_clear_frames(&t.f);
	CHECK_EQ(wf_set(&t.f, TERN_WIRE_FAULT_PPM_MAX, 0, 0, 0, 0, 5, NULL), TERN_CMD_OK);
	wtx_send(&t, 40, kind_mix);
	CHECK_EQ(t.f.nframes, 0);
	fk_fini(&t.f);
}

static void t_bad_params(void)
{
	struct wtx t;
	uint8_t in[sizeof(struct tern_wire_faults)] = { 0 };
	uint8_t q[sizeof(struct tern_cmd_query_wire_faults_out)];
	static const size_t ppm[] = { WF(drop_ppm), WF(corrupt_ppm), WF(duplicate_ppm),
				      WF(reorder_ppm) };
	struct cqe c;
	unsigned int i;

	REQUIRE(wtx_init(&t));
	CHECK_EQ(wf_set(&t.f, 1, 2, 3, 4, 0, 77, NULL), TERN_CMD_OK);
	for (i = 0; i < 4; i++) {
		memset(in, 0, sizeof(in));
		wr32(in + ppm[i], TERN_WIRE_FAULT_PPM_MAX + 1);
		CHECK_EQ(drv_cmd(&t.f, TERN_CMD_SET_WIRE_FAULTS, in, sizeof(in), NULL, 0, &c),
			 TERN_CMD_BAD_PARAM);
		CHECK_EQ(c.syndrome, ppm[i]);
		/* the maximum itself is fine */
		wr32(in + ppm[i], TERN_WIRE_FAULT_PPM_MAX);
		wr32(in + WF(rsvd), 1);
		CHECK_EQ(drv_cmd(&t.f, TERN_CMD_SET_WIRE_FAULTS, in, sizeof(in), NULL, 0, &c),
			 TERN_CMD_BAD_PARAM);
		CHECK_EQ(c.syndrome, WF(rsvd));
	}
	memset(in, 0, sizeof(in));
	wr32(in + WF(flags), 2);
	CHECK_EQ(drv_cmd(&t.f, TERN_CMD_SET_WIRE_FAULTS, in, sizeof(in), NULL, 0, &c),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, WF(flags));
	CHECK_EQ(drv_cmd(&t.f, TERN_CMD_SET_WIRE_FAULTS, in, sizeof(in) - 4, NULL, 0, &c),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, sizeof(in));
	CHECK_EQ(drv_cmd(&t.f, TERN_CMD_QUERY_WIRE_FAULTS, in, 4, q, sizeof(q), &c),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, 0);
	CHECK_EQ(drv_cmd(&t.f, TERN_CMD_QUERY_WIRE_FAULTS, NULL, 0, q, sizeof(q) - 8, &c),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, sizeof(q));
	/* nothing changed */
	REQUIRE(wf_query(&t.f, q));
	CHECK_EQ(rd32(q + WQ(cfg) + WF(drop_ppm)), 1);
	CHECK_EQ(rd32(q + WQ(cfg) + WF(corrupt_ppm)), 2);
	CHECK_EQ(rd32(q + WQ(cfg) + WF(duplicate_ppm)), 3);
	CHECK_EQ(rd32(q + WQ(cfg) + WF(reorder_ppm)), 4);
	CHECK_EQ(rd64(q + WQ(cfg) + WF(seed)), 77);
	fk_fini(&t.f);
}

/* A device reset (PCI or CTRL.RESET) clears the setting and the counters. */
static void t_reset_clears(void)
{
	struct wtx t;
	uint8_t q[sizeof(struct tern_cmd_query_wire_faults_out)];
	unsigned int i, pass;

	REQUIRE(wtx_init(&t));
	for (pass = 0; pass < 2; pass++) {
		CHECK_EQ(wf_set(&t.f, 500000, 0, 0, 0, TERN_WIRE_FAULT_F_ROCE_ONLY, 9, NULL),
			 TERN_CMD_OK);
		wtx_send(&t, 100, kind_plain);
		REQUIRE(wf_query(&t.f, q));
		CHECK_EQ(WQSTAT(q, frames), 100 + 50 * pass);
		if (pass == 0) {
			tern_model_reset(t.f.m);
		} else {
			wreg(&t.f, TERN_REG_CTRL, TERN_CTRL_RESET);
			fk_advance(&t.f, 2000000);
		}
		fk_clear_frames(&t.f);
		REQUIRE(drv_cmdq_enable(&t.f, 4));
		REQUIRE(wf_query(&t.f, q));
		for (i = 0; i < sizeof(q); i++)
			CHECK_EQ(q[i], 0);
		REQUIRE(drv_eq_create(&t.f, &t.eq, 12, 1, 0, false) == TERN_CMD_OK);
		memset(&t.tx, 0, sizeof(t.tx));
		REQUIRE(drv_ethq_create(&t.f, &t.tx, false, W_TX_LOG, t.eq.num, false) ==
			TERN_CMD_OK);
		t.next = 0;
		wtx_send(&t, 50, kind_roce_half);
		CHECK_EQ(t.f.nframes, 50);
		fk_clear_frames(&t.f);
	}
	fk_fini(&t.f);
}

const struct test wire_tests[] = {
	{ "wire: off and all-zero settings send frames untouched", t_off_and_zero },
	{ "wire: drop 100%: nothing reaches the wire, the port still counts them", t_drop_all },
	{ "wire: corrupt 100%: exactly one bit after L2 (and 802.1Q) flipped", t_corrupt_all },
	{ "wire: duplicate 100%: every frame twice in a row", t_duplicate_all },
	{ "wire: reorder 100%: pairs swap, the last held frame goes out at idle", t_reorder_all },
	{ "wire: probabilities over 100000 frames, wire agrees with counters", t_probabilities },
	{ "wire: same seed same damage, other seed other damage", t_seed },
	{ "wire: ROCE_ONLY damages only UDP/4791 frames", t_roce_only },
	{ "wire: bad parameters rejected with the field offset, nothing changes", t_bad_params },
	{ "wire: device reset clears setting and counters", t_reset_clears },
	{ NULL, NULL },
};
