/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unit tests of the switch model (model/fabric/switch.c) through switch.h only: a fake host
 * with a virtual clock and the switch's one timer records every frame the switch delivers.
 * Prints TAP; exits non-zero if a test failed. An argument selects tests by name.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../switch.h"

static int failures;

#define CHECK(cond)                                                                         \
	do {                                                                                \
		if (!(cond)) {                                                              \
			failures++;                                                         \
			printf("#   %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
		}                                                                           \
	} while (0)

#define CHECK_EQ(a, b)                                                                      \
	do {                                                                                \
		unsigned long long _a = (unsigned long long)(a);                           \
		unsigned long long _b = (unsigned long long)(b);                           \
		if (_a != _b) {                                                             \
			failures++;                                                         \
			printf("#   %s:%d: %s == %s failed: %llu != %llu\n", __FILE__,       \
			       __LINE__, #a, #b, _a, _b);                                   \
		}                                                                           \
	} while (0)

/* ---- fake host --------------------------------------------------------------------------- */

struct out {
	unsigned int port;
	uint64_t sent;		/* now_ns when the switch handed it over */
	uint64_t arrive;
	size_t len;
	uint8_t data[2048];
};

struct host {
	struct tsw *sw;
	uint64_t now;
	uint64_t deadline;
	unsigned int nout;
	struct out out[4096];
};

static void h_deliver(void *opaque, unsigned int port, const void *frame, size_t len,
		      uint64_t arrive_ns)
{
	struct host *h = opaque;
	struct out *o;

	if (h->nout >= sizeof(h->out) / sizeof(h->out[0])) {
		failures++;
		printf("#   too many frames\n");
		return;
	}
	o = &h->out[h->nout++];
	o->port = port;
	o->sent = h->now;
	o->arrive = arrive_ns;
	o->len = len < sizeof(o->data) ? len : sizeof(o->data);
	memcpy(o->data, frame, o->len);
}

static uint64_t h_now(void *opaque)
{
	return ((struct host *)opaque)->now;
}

static void h_arm(void *opaque, uint64_t dl)
{
	((struct host *)opaque)->deadline = dl;
}

static struct host *h_new(const struct tsw_config *cfg)
{
	struct host *h = calloc(1, sizeof(*h));
	struct tsw_host th = { .deliver = h_deliver, .now_ns = h_now, .timer_arm = h_arm };

	if (!h)
		exit(2);
	h->now = 1000;
	h->deadline = UINT64_MAX;
	th.opaque = h;
	h->sw = tsw_create(cfg, &th);
	if (!h->sw) {
		printf("# fatal, the test program stops: tsw_create failed\n");
		exit(2);
	}
	return h;
}

static void h_free(struct host *h)
{
	tsw_destroy(h->sw);
	free(h);
}

/* Move the clock to @t, firing the switch's timer on the way. */
static void h_run_to(struct host *h, uint64_t t)
{
	int guard = 0;

	while (h->deadline <= t && guard++ < 1000000) {
		if (h->deadline > h->now)
			h->now = h->deadline;
		h->deadline = UINT64_MAX;
		tsw_timer(h->sw);
	}
	if (t > h->now)
		h->now = t;
}

static void h_run(struct host *h, uint64_t ns)
{
	h_run_to(h, h->now + ns);
}

/* ---- frames ------------------------------------------------------------------------------ */

static const uint8_t MAC_A[6] = { 0x02, 0, 0, 0, 0, 0xa };
static const uint8_t MAC_B[6] = { 0x02, 0, 0, 0, 0, 0xb };
static const uint8_t MAC_C[6] = { 0x02, 0, 0, 0, 0, 0xc };
static const uint8_t BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint16_t ip_sum(const uint8_t *h, size_t n)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i < n; i += 2)
		s += be16(h + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* An IPv4/UDP frame of @len bytes; @pcp >= 0 adds an 802.1Q tag. Returns the IP offset. */
static size_t mk_ipv4(uint8_t *f, size_t len, const uint8_t *dst, const uint8_t *src,
		      unsigned int dscp, unsigned int ecn, int pcp, uint16_t id)
{
	size_t off = 14;
	uint8_t *ip;
	uint16_t s;

	memset(f, 0, len);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	if (pcp >= 0) {
		f[12] = 0x81;
		f[13] = 0x00;
		f[14] = (uint8_t)(pcp << 5);
		f[15] = 5;
		off = 18;
	}
	f[off - 2] = 0x08;
	f[off - 1] = 0x00;
	ip = f + off;
	ip[0] = 0x45;
	ip[1] = (uint8_t)(dscp << 2 | ecn);
	ip[2] = (uint8_t)((len - off) >> 8);
	ip[3] = (uint8_t)(len - off);
	ip[4] = (uint8_t)(id >> 8);
	ip[5] = (uint8_t)id;
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 10;
	ip[15] = 1;
	ip[16] = 10;
	ip[19] = 2;
	ip[22] = 0x12;		/* UDP 4791 */
	ip[23] = 0xb7;
	s = ip_sum(ip, 20);
	ip[10] = (uint8_t)(s >> 8);
	ip[11] = (uint8_t)s;
	return off;
}

static size_t mk_ipv6(uint8_t *f, size_t len, const uint8_t *dst, const uint8_t *src,
		      unsigned int dscp, unsigned int ecn)
{
	unsigned int tc = dscp << 2 | ecn;
	uint8_t *ip = f + 14;

	memset(f, 0, len);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip[0] = (uint8_t)(0x60 | tc >> 4);
	ip[1] = (uint8_t)((tc & 0xf) << 4 | 0x3);	/* flow label bits kept */
	ip[6] = 17;
	ip[7] = 64;
	return 14;
}

/* A PFC frame from a NIC: @vec priorities with @quanta each. */
static void mk_pfc(uint8_t *f, const uint8_t *src, uint8_t vec, uint16_t quanta)
{
	static const uint8_t d[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };
	unsigned int p;

	memset(f, 0, 60);
	memcpy(f, d, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x88;
	f[13] = 0x08;
	f[14] = 0x01;
	f[15] = 0x01;
	f[17] = vec;
	for (p = 0; p < 8; p++)
		if (vec & (1u << p)) {
			f[18 + 2 * p] = (uint8_t)(quanta >> 8);
			f[19 + 2 * p] = (uint8_t)quanta;
		}
}

static bool is_pfc(const struct out *o)
{
	return o->len >= 14 && be16(o->data + 12) == 0x8808;
}

static unsigned int count_port(const struct host *h, unsigned int port, bool pfc)
{
	unsigned int i, n = 0;

	for (i = 0; i < h->nout; i++)
		if (h->out[i].port == port && is_pfc(&h->out[i]) == pfc)
			n++;
	return n;
}

static void cfg_small(struct tsw_config *c, unsigned int nports)
{
	tsw_config_default(c, nports);
	c->link_mbps = 10000;
	c->delay_ns = 500;
}

/* Teach the switch where MAC_A/B/C live (ports 0, 1, 2) with broadcasts, then forget them. */
static void teach(struct host *h, unsigned int nports)
{
	uint8_t f[64];

	mk_ipv4(f, 64, BCAST, MAC_A, 0, 0, -1, 0);
	tsw_rx(h->sw, 0, f, 64);
	mk_ipv4(f, 64, BCAST, MAC_B, 0, 0, -1, 0);
	tsw_rx(h->sw, 1, f, 64);
	if (nports > 2) {
		mk_ipv4(f, 64, BCAST, MAC_C, 0, 0, -1, 0);
		tsw_rx(h->sw, 2, f, 64);
	}
	h_run(h, 100000);
	h->nout = 0;
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_defaults(void)
{
	struct tsw_config c;

	tsw_config_default(&c, 5);
	CHECK_EQ(c.nports, 5);
	CHECK_EQ(c.link_mbps, 40000);
	CHECK_EQ(c.kmin_bytes, 5 * 1024);
	CHECK_EQ(c.kmax_bytes, 200 * 1024);
	CHECK_EQ(c.pmax_ppm, 10000);
	CHECK_EQ(c.pfc_mask, 0x08);
	CHECK_EQ(c.ecn_mask, 0x08);
	CHECK_EQ(c.strict_mask, 0x40);
	CHECK_EQ(c.dscp_prio[26], 3);
	CHECK_EQ(c.dscp_prio[48], 6);
	CHECK(c.xon_bytes < c.xoff_bytes && c.kmax_bytes < c.xoff_bytes);
	/* invalid configurations are refused */
	{
		struct tsw_host th = { .deliver = h_deliver, .now_ns = h_now, .timer_arm = h_arm };
		struct tsw_config bad = c;

		bad.nports = 0;
		CHECK(!tsw_create(&bad, &th));
		bad = c;
		bad.nports = TSW_MAX_PORTS + 1;
		CHECK(!tsw_create(&bad, &th));
		bad = c;
		bad.xon_bytes = bad.xoff_bytes;
		CHECK(!tsw_create(&bad, &th));
		bad = c;
		bad.link_mbps = 0;
		CHECK(!tsw_create(&bad, &th));
	}
}

static void test_forwarding(void)
{
	struct tsw_config c;
	struct host *h;
	uint8_t f[100];
	unsigned int i;

	cfg_small(&c, 3);
	h = h_new(&c);
	/* unknown destination: flooded to every other port, unchanged */
	mk_ipv4(f, 100, MAC_B, MAC_A, 0, 0, -1, 1);
	tsw_rx(h->sw, 0, f, 100);
	h_run(h, 10000);
	CHECK_EQ(h->nout, 2);
	CHECK_EQ(count_port(h, 0, false), 0);
	CHECK_EQ(count_port(h, 1, false), 1);
	CHECK_EQ(count_port(h, 2, false), 1);
	for (i = 0; i < h->nout; i++)
		CHECK(h->out[i].len == 100 && !memcmp(h->out[i].data, f, 100));
	/* B answers: A was learned on port 0, so only port 0 gets it */
	h->nout = 0;
	mk_ipv4(f, 100, MAC_A, MAC_B, 0, 0, -1, 2);
	tsw_rx(h->sw, 1, f, 100);
	h_run(h, 10000);
	CHECK_EQ(h->nout, 1);
	CHECK_EQ(h->out[0].port, 0);
	/* now B is known too */
	h->nout = 0;
	mk_ipv4(f, 100, MAC_B, MAC_A, 0, 0, -1, 3);
	tsw_rx(h->sw, 0, f, 100);
	h_run(h, 10000);
	CHECK_EQ(h->nout, 1);
	CHECK_EQ(h->out[0].port, 1);
	/* broadcast floods even when everything is known */
	h->nout = 0;
	mk_ipv4(f, 100, BCAST, MAC_B, 0, 0, -1, 4);
	tsw_rx(h->sw, 1, f, 100);
	h_run(h, 10000);
	CHECK_EQ(h->nout, 2);
	CHECK_EQ(count_port(h, 1, false), 0);
	/* a station that moved is re-learned */
	h->nout = 0;
	mk_ipv4(f, 100, BCAST, MAC_B, 0, 0, -1, 5);
	tsw_rx(h->sw, 2, f, 100);
	h_run(h, 10000);
	h->nout = 0;
	mk_ipv4(f, 100, MAC_B, MAC_A, 0, 0, -1, 6);
	tsw_rx(h->sw, 0, f, 100);
	h_run(h, 10000);
	CHECK_EQ(h->nout, 1);
	CHECK_EQ(h->out[0].port, 2);
	/* destination on the ingress port: filtered */
	h->nout = 0;
	mk_ipv4(f, 100, MAC_A, MAC_C, 0, 0, -1, 7);
	tsw_rx(h->sw, 0, f, 100);
	h_run(h, 10000);
	CHECK_EQ(h->nout, 0);
	/* MAC control frames are consumed, never forwarded */
	mk_pfc(f, MAC_A, 0x08, 0);
	tsw_rx(h->sw, 0, f, 60);
	h_run(h, 10000);
	CHECK_EQ(h->nout, 0);
	/* runt: ignored */
	tsw_rx(h->sw, 0, f, 10);
	h_run(h, 10000);
	CHECK_EQ(h->nout, 0);
	h_free(h);
}

static void test_timing(void)
{
	struct tsw_config c;
	struct host *h;
	uint8_t f[1000];
	uint64_t t0, ser = (1000 + 24) * 8000 / 10000;	/* 819 ns at 10 Gb/s */
	unsigned int i;

	cfg_small(&c, 2);
	h = h_new(&c);
	teach(h, 2);
	t0 = h->now;
	for (i = 0; i < 3; i++) {
		mk_ipv4(f, sizeof(f), MAC_B, MAC_A, 0, 0, -1, (uint16_t)i);
		tsw_rx(h->sw, 0, f, sizeof(f));
	}
	h_run(h, 100000);
	CHECK_EQ(h->nout, 3);
	for (i = 0; i < h->nout && i < 3; i++) {
		CHECK_EQ(h->out[i].port, 1);
		/* back to back: starts at t0 + i*ser, last bit at the NIC delay_ns after its end */
		CHECK_EQ(h->out[i].sent, t0 + i * ser);
		CHECK_EQ(h->out[i].arrive, t0 + (i + 1) * ser + 500);
		CHECK_EQ(be16(h->out[i].data + 14 + 4), i);	/* FIFO order */
	}
	/* a short frame takes the minimum frame's time: (60 + 24) bytes */
	h->nout = 0;
	t0 = h->now;
	mk_ipv4(f, 42, MAC_B, MAC_A, 0, 0, -1, 9);
	tsw_rx(h->sw, 0, f, 42);
	mk_ipv4(f, 42, MAC_B, MAC_A, 0, 0, -1, 10);
	tsw_rx(h->sw, 0, f, 42);
	h_run(h, 100000);
	CHECK_EQ(h->nout, 2);
	CHECK_EQ(h->out[1].sent, t0 + 84 * 8000 / 10000);
	/* statistics */
	{
		struct tsw_port_stats st;

		tsw_port_stats(h->sw, 1, &st);
		CHECK_EQ(st.q[0].deq_frames, 1 + 5);	/* the teaching broadcast and 5 */
		CHECK_EQ(st.q[0].enq_bytes, 64 + 3000 + 84);
		tsw_port_stats(h->sw, 0, &st);
		CHECK_EQ(st.rx_frames, 1 + 5);	/* the teaching broadcast and 5 */
	}
	h_free(h);
}

static void test_strict_priority(void)
{
	struct tsw_config c;
	struct host *h;
	uint8_t f[1000];
	unsigned int i;

	cfg_small(&c, 2);
	h = h_new(&c);
	teach(h, 2);
	/* first frame takes the line at once; then 3 on prio 0, 3 on prio 3, 1 on prio 6 */
	mk_ipv4(f, 1000, MAC_B, MAC_A, 0, 0, -1, 100);
	tsw_rx(h->sw, 0, f, 1000);
	for (i = 0; i < 3; i++) {
		mk_ipv4(f, 1000, MAC_B, MAC_A, 0, 0, -1, (uint16_t)i);	/* DSCP 0 -> 0 */
		tsw_rx(h->sw, 0, f, 1000);
		mk_ipv4(f, 1000, MAC_B, MAC_A, 26, 0, -1, (uint16_t)(10 + i));	/* -> 3 */
		tsw_rx(h->sw, 0, f, 1000);
	}
	mk_ipv4(f, 1000, MAC_B, MAC_A, 48, 0, -1, 99);	/* DSCP 48 -> 6, strict */
	tsw_rx(h->sw, 0, f, 1000);
	CHECK_EQ(tsw_queue_bytes(h->sw, 1, 0), 3000);
	CHECK_EQ(tsw_queue_bytes(h->sw, 1, 3), 3000);
	CHECK_EQ(tsw_queue_bytes(h->sw, 1, 6), 1000);
	h_run(h, 100000);
	CHECK_EQ(h->nout, 8);
	if (h->nout == 8) {
		static const uint16_t order[8] = { 100, 99, 10, 0, 11, 1, 12, 2 };

		for (i = 0; i < 8; i++)
			CHECK_EQ(be16(h->out[i].data + 14 + 4), order[i]);
	}
	/* the 802.1Q PCP beats the DSCP */
	h->nout = 0;
	mk_ipv4(f, 1000, MAC_B, MAC_A, 0, 0, -1, 200);
	tsw_rx(h->sw, 0, f, 1000);
	mk_ipv4(f, 1000, MAC_B, MAC_A, 0, 0, 2, 201);	/* PCP 2 (DSCP 0) */
	tsw_rx(h->sw, 0, f, 1000);
	mk_ipv4(f, 1000, MAC_B, MAC_A, 0, 0, 6, 202);	/* PCP 6: strict */
	tsw_rx(h->sw, 0, f, 1000);
	CHECK_EQ(tsw_queue_bytes(h->sw, 1, 2), 1000);
	h_run(h, 100000);
	CHECK_EQ(h->nout, 3);
	if (h->nout == 3)
		CHECK_EQ(be16(h->out[1].data + 18 + 4), 202);
	h_free(h);
}

/* XOFF/XON frames the switch sends on @port, decoded. */
static bool pfc_decode(const struct out *o, unsigned int *vec, uint16_t t[8])
{
	unsigned int p;

	if (!is_pfc(o) || be16(o->data + 14) != 0x0101)
		return false;
	*vec = be16(o->data + 16);
	for (p = 0; p < 8; p++)
		t[p] = be16(o->data + 18 + 2 * p);
	return true;
}

static void test_ecn_red(void)
{
	struct tsw_config c;
	struct host *h;
	uint8_t f[1000], pf[60];
	unsigned int fill, i, marked_below = 0, marked_above = 0, nonect_marked = 0;
	unsigned int mid_n = 0, mid_marked = 0, bad_csum = 0, ce_kept = 0;
	double mid_expect = 0, mid_var = 0;
	size_t off;

	cfg_small(&c, 2);
	c.kmin_bytes = 20000;
	c.kmax_bytes = 120000;
	c.pmax_ppm = 200000;			/* 20 % at Kmax */
	c.xoff_bytes = 4u << 20;		/* no PFC in this test */
	c.xon_bytes = 2u << 20;
	c.buffer_bytes = 8u << 20;
	c.seed = 42;
	h = h_new(&c);
	teach(h, 2);
	for (fill = 0; fill < 40; fill++) {
		/* the NIC on port 1 pauses priority 3: the FIFO only grows */
		mk_pfc(pf, MAC_B, 0x08, 0xffff);
		tsw_rx(h->sw, 1, pf, 60);
		for (i = 0; i < 150; i++) {
			uint64_t depth = tsw_queue_bytes(h->sw, 1, 3);
			/* every 10th frame is not ECN-capable, every 7th already CE */
			unsigned int ecn = i % 10 == 0 ? 0 : i % 7 == 0 ? 3 : 2;

			mk_ipv4(f, 1000, MAC_B, MAC_A, 26, ecn, -1, (uint16_t)i);
			tsw_rx(h->sw, 0, f, 1000);
			if (ecn != 2)
				continue;
			if (depth > c.kmin_bytes && depth <= c.kmax_bytes) {
				double p = 0.2 * (double)(depth - c.kmin_bytes) /
					   (c.kmax_bytes - c.kmin_bytes);

				mid_expect += p;
				mid_var += p * (1 - p);
			}
		}
		h->nout = 0;
		mk_pfc(pf, MAC_B, 0x08, 0);	/* XON: drain */
		tsw_rx(h->sw, 1, pf, 60);
		h_run(h, 10000000);
		CHECK_EQ(h->nout, 150);
		for (i = 0; i < h->nout; i++) {
			const uint8_t *ip = h->out[i].data + 14;
			unsigned int id = be16(ip + 4), e0 = id % 10 == 0 ? 0 : id % 7 == 0 ? 3 : 2;
			uint64_t depth = (uint64_t)id * 1000;	/* depth it found at enqueue */
			bool ce = (ip[1] & 3) == 3;

			if (ip_sum(ip, 20) != 0)
				bad_csum++;
			CHECK_EQ(ip[1] >> 2, 26);
			if (e0 == 0) {
				nonect_marked += (ip[1] & 3) != 0;
				continue;
			}
			if (e0 == 3) {
				ce_kept += ce;
				continue;
			}
			if (depth <= c.kmin_bytes)
				marked_below += ce;
			else if (depth > c.kmax_bytes)
				marked_above += !ce;	/* counts the unmarked */
			else {
				mid_n++;
				mid_marked += ce;
			}
		}
	}
	CHECK_EQ(bad_csum, 0);
	CHECK_EQ(nonect_marked, 0);
	CHECK_EQ(marked_below, 0);
	CHECK_EQ(marked_above, 0);
	CHECK(ce_kept > 0);
	/* in between: binomial, within 4 standard deviations of the RED probability */
	printf("# RED: %u of %u ECT packets between Kmin and Kmax marked, %.1f expected"
	       " (sd %.1f)\n", mid_marked, mid_n, mid_expect, sqrt(mid_var));
	CHECK(mid_n > 2000);
	CHECK(fabs(mid_marked - mid_expect) <= 4 * sqrt(mid_var));
	{
		struct tsw_port_stats st;

		tsw_port_stats(h->sw, 1, &st);
		CHECK(st.q[3].ecn_marked >= mid_marked);
		CHECK_EQ(st.q[3].paused_ns, 0);	/* paused and released at the same instant */
	}
	h_free(h);

	/* IPv6: ECN bits in the traffic class, flow label untouched; priority 0 is not marked */
	cfg_small(&c, 2);
	c.kmin_bytes = 0;
	c.kmax_bytes = 0;			/* mark every ECT packet that finds a queue */
	h = h_new(&c);
	teach(h, 2);
	mk_pfc(pf, MAC_B, 0x08, 0xffff);	/* hold priority 3 */
	tsw_rx(h->sw, 1, pf, 60);
	for (i = 0; i < 3; i++) {
		off = mk_ipv6(f, 200, MAC_B, MAC_A, 26, 2);
		f[off + 40] = (uint8_t)i;
		tsw_rx(h->sw, 0, f, 200);
		off = mk_ipv6(f, 200, MAC_B, MAC_A, 0, 2);	/* priority 0: no ECN there */
		f[off + 40] = (uint8_t)(10 + i);
		tsw_rx(h->sw, 0, f, 200);
	}
	mk_pfc(pf, MAC_B, 0x08, 0);
	tsw_rx(h->sw, 1, pf, 60);
	h_run(h, 1000000);
	CHECK_EQ(h->nout, 6);
	for (i = 0; i < h->nout; i++) {
		const uint8_t *ip = h->out[i].data + off;
		unsigned int tc = (unsigned int)((ip[0] & 0xf) << 4 | ip[1] >> 4);

		CHECK_EQ(ip[1] & 0xf, 3);		/* flow label untouched */
		if (tc >> 2 == 26)
			CHECK_EQ(tc & 3, ip[40] == 0 ? 2 : 3);	/* the first found it empty */
		else
			CHECK_EQ(tc & 3, 2);
	}
	h_free(h);
}

/* Where RED looks at the queue: the depth a packet finds (enqueue) or leaves behind (dequeue). */
static void test_ecn_dequeue(void)
{
	struct tsw_config c;
	struct host *h;
	uint8_t f[1000], pf[60];
	unsigned int i, deq;

	for (deq = 0; deq < 2; deq++) {
		cfg_small(&c, 2);
		c.kmin_bytes = 0;
		c.kmax_bytes = 0;		/* every ECT packet with a queue is marked */
		c.ecn_at_dequeue = deq;
		h = h_new(&c);
		teach(h, 2);
		mk_pfc(pf, MAC_B, 0x08, 0xffff);
		tsw_rx(h->sw, 1, pf, 60);
		for (i = 0; i < 5; i++) {
			mk_ipv4(f, 1000, MAC_B, MAC_A, 26, 2, -1, (uint16_t)i);
			tsw_rx(h->sw, 0, f, 1000);
		}
		mk_pfc(pf, MAC_B, 0x08, 0);
		tsw_rx(h->sw, 1, pf, 60);
		h_run(h, 100000);
		CHECK_EQ(h->nout, 5);
		for (i = 0; i < h->nout; i++) {
			const uint8_t *ip = h->out[i].data + 14;
			unsigned int id = be16(ip + 4);
			bool marked = deq ? id < 4 : id > 0;

			CHECK_EQ(ip[1] & 3, marked ? 3 : 2);
			CHECK_EQ(ip_sum(ip, 20), 0);
		}
		h_free(h);
	}
}

static void test_pfc_generation(void)
{
	struct tsw_config c;
	struct host *h;
	uint8_t f[1000], pf[60];
	unsigned int i, vec, n;
	uint16_t t[8];
	struct tsw_port_stats st;
	uint64_t refresh;

	cfg_small(&c, 3);
	c.xoff_bytes = 10000;
	c.xon_bytes = 5000;
	c.kmax_bytes = 8000;
	c.kmin_bytes = 4000;
	h = h_new(&c);
	teach(h, 3);
	/* the NIC on port 1 pauses priority 3 for good; port 0 sends prio 3 to it */
	mk_pfc(pf, MAC_B, 0x08, 0xffff);
	tsw_rx(h->sw, 1, pf, 60);
	for (i = 0; i < 9; i++) {
		mk_ipv4(f, 1000, MAC_B, MAC_A, 26, 0, -1, (uint16_t)i);
		tsw_rx(h->sw, 0, f, 1000);
	}
	h_run(h, 1000);
	CHECK_EQ(count_port(h, 0, true), 0);	/* 9000 < 10000 */
	mk_ipv4(f, 1000, MAC_B, MAC_A, 26, 0, -1, 9);
	tsw_rx(h->sw, 0, f, 1000);
	h_run(h, 1000);
	CHECK_EQ(count_port(h, 0, true), 1);
	CHECK_EQ(count_port(h, 2, true), 0);
	for (i = 0; i < h->nout; i++) {
		static const uint8_t want[60] = {
			0x01, 0x80, 0xc2, 0x00, 0x00, 0x01,	/* 01:80:C2:00:00:01 */
			0x02, 't', 's', 'w', 0x00, 0x00,	/* port 0's address */
			0x88, 0x08, 0x01, 0x01,			/* MAC control, PFC */
			0x00, 0x08,				/* class-enable: prio 3 */
			0, 0, 0, 0, 0, 0, 0xff, 0xff,		/* time[3] = 0xffff */
			0, 0, 0, 0, 0, 0, 0, 0,
		};

		if (!is_pfc(&h->out[i]))
			continue;
		CHECK_EQ(h->out[i].len, 60);
		CHECK(!memcmp(h->out[i].data, want, 60));
		/* on the line for (60 + 24) bytes, then the link delay */
		CHECK_EQ(h->out[i].arrive - h->out[i].sent, 84 * 8000 / 10000 + 500);
	}
	/* the refresh: every half pause time (0xffff quanta at 10 Gb/s / 2) while above XON */
	refresh = 0xffffull * 512 * 1000 / 10000 / 2;
	h->nout = 0;
	for (i = 0; i < 3; i++) {
		tsw_rx(h->sw, 1, pf, 60);	/* the NIC keeps its own pause up */
		h_run(h, refresh);
	}
	h_run(h, 1000);
	CHECK_EQ(count_port(h, 0, true), 3);
	tsw_port_stats(h->sw, 0, &st);
	CHECK_EQ(st.pfc_xoff_sent[3], 4);
	CHECK_EQ(st.pfc_xon_sent[3], 0);
	/* drain: XON once the ingress account is down to 5000 bytes, i.e. after 5 frames left */
	h->nout = 0;
	mk_pfc(pf, MAC_B, 0x08, 0);
	tsw_rx(h->sw, 1, pf, 60);
	h_run(h, 100000);
	n = 0;
	for (i = 0; i < h->nout; i++) {
		if (h->out[i].port == 0 && pfc_decode(&h->out[i], &vec, t)) {
			CHECK_EQ(vec, 0x08);
			CHECK_EQ(t[3], 0);
			n++;
		}
		if (h->out[i].port == 1 && n == 0)
			CHECK(be16(h->out[i].data + 18) < 5);	/* frames before the XON */
	}
	CHECK_EQ(n, 1);
	tsw_port_stats(h->sw, 0, &st);
	CHECK_EQ(st.pfc_xon_sent[3], 1);
	CHECK_EQ(st.lossless_drops, 0);
	/* no more refreshes after XON */
	h->nout = 0;
	h_run(h, 3 * refresh);
	CHECK_EQ(h->nout, 0);
	/* a priority without PFC never pauses: 20 frames on prio 0 into a port paused on 0 */
	mk_pfc(pf, MAC_B, 0x01, 0xffff);		/* not honoured: prio 0 is not lossless */
	tsw_rx(h->sw, 1, pf, 60);
	for (i = 0; i < 20; i++) {
		mk_ipv4(f, 1000, MAC_B, MAC_A, 0, 0, -1, (uint16_t)i);
		tsw_rx(h->sw, 0, f, 1000);
	}
	h_run(h, 100000);
	CHECK_EQ(count_port(h, 0, true), 0);
	CHECK_EQ(count_port(h, 1, false), 20);
	tsw_port_stats(h->sw, 1, &st);
	CHECK_EQ(st.pfc_rx[0], 1);		/* counted */
	CHECK_EQ(st.pfc_rx[3], 4);		/* an XON (time 0) is not a pause */
	CHECK_EQ(st.q[0].paused_ns, 0);
	h_free(h);
}

static void test_pfc_honour(void)
{
	struct tsw_config c;
	struct host *h;
	uint8_t f[1000], pf[60];
	uint64_t t0, pause;
	struct tsw_port_stats st;
	unsigned int i;

	cfg_small(&c, 2);
	h = h_new(&c);
	teach(h, 2);
	/* 100 quanta at 10 Gb/s = 5120 ns */
	t0 = h->now;
	mk_pfc(pf, MAC_B, 0x08, 100);
	tsw_rx(h->sw, 1, pf, 60);
	mk_ipv4(f, 1000, MAC_B, MAC_A, 26, 0, -1, 1);	/* prio 3: waits */
	tsw_rx(h->sw, 0, f, 1000);
	mk_ipv4(f, 1000, MAC_B, MAC_A, 0, 0, -1, 2);	/* prio 0: goes */
	tsw_rx(h->sw, 0, f, 1000);
	h_run(h, 100000);
	CHECK_EQ(h->nout, 2);
	pause = 100 * 512 * 1000 / 10000;
	if (h->nout == 2) {
		CHECK_EQ(be16(h->out[0].data + 18), 2);
		CHECK_EQ(h->out[0].sent, t0);
		CHECK_EQ(be16(h->out[1].data + 18), 1);
		CHECK_EQ(h->out[1].sent, t0 + pause);
	}
	tsw_port_stats(h->sw, 1, &st);
	CHECK_EQ(st.q[3].paused_ns, pause);
	CHECK_EQ(st.pfc_rx[3], 1);
	/* XON (time 0) ends a long pause at once; a new pause replaces the old one */
	h->nout = 0;
	mk_pfc(pf, MAC_B, 0x08, 0xffff);
	tsw_rx(h->sw, 1, pf, 60);
	for (i = 0; i < 3; i++) {
		mk_ipv4(f, 1000, MAC_B, MAC_A, 26, 0, -1, (uint16_t)(10 + i));
		tsw_rx(h->sw, 0, f, 1000);
	}
	h_run(h, 20000);
	CHECK_EQ(h->nout, 0);
	t0 = h->now;
	mk_pfc(pf, MAC_B, 0x08, 0);
	tsw_rx(h->sw, 1, pf, 60);
	CHECK_EQ(h->nout, 1);
	if (h->nout)
		CHECK_EQ(h->out[0].sent, t0);
	h_run(h, 100000);
	CHECK_EQ(h->nout, 3);
	tsw_port_stats(h->sw, 1, &st);
	CHECK_EQ(st.q[3].paused_ns, pause + 20000);
	/* a pause in progress counts in the statistics */
	mk_pfc(pf, MAC_B, 0x08, 0xffff);
	tsw_rx(h->sw, 1, pf, 60);
	h_run(h, 1000);
	tsw_port_stats(h->sw, 1, &st);
	CHECK_EQ(st.q[3].paused_ns, pause + 20000 + 1000);
	h_free(h);
}

static void test_buffer_drops(void)
{
	struct tsw_config c;
	struct host *h;
	uint8_t f[1000], pf[60];
	struct tsw_port_stats st0, st1;
	unsigned int i;

	cfg_small(&c, 2);
	c.buffer_bytes = 5000;
	c.xoff_bytes = 100000;
	c.xon_bytes = 50000;
	h = h_new(&c);
	teach(h, 2);
	/* port 1 paused on 3 */
	mk_pfc(pf, MAC_B, 0x08, 0xffff);
	tsw_rx(h->sw, 1, pf, 60);
	for (i = 0; i < 7; i++) {
		mk_ipv4(f, 1000, MAC_B, MAC_A, 26, 0, -1, (uint16_t)i);
		tsw_rx(h->sw, 0, f, 1000);
	}
	CHECK_EQ(tsw_queue_bytes(h->sw, 1, 3), 5000);
	tsw_port_stats(h->sw, 1, &st1);
	tsw_port_stats(h->sw, 0, &st0);
	CHECK_EQ(st1.q[3].drops, 2);
	CHECK_EQ(st0.lossless_drops, 2);	/* counted on the ingress port */
	CHECK_EQ(st1.lossless_drops, 0);
	CHECK_EQ(st1.q[3].max_bytes, 5000);
	/* a lossy priority's drop is not a lossless drop */
	mk_ipv4(f, 1000, MAC_B, MAC_A, 0, 0, -1, 50);
	tsw_rx(h->sw, 0, f, 1000);		/* buffer full: dropped */
	tsw_port_stats(h->sw, 1, &st1);
	tsw_port_stats(h->sw, 0, &st0);
	CHECK_EQ(st1.q[0].drops, 1);
	CHECK_EQ(st0.lossless_drops, 2);
	/* after draining, the buffer takes frames again */
	mk_pfc(pf, MAC_B, 0x08, 0);
	tsw_rx(h->sw, 1, pf, 60);
	h_run(h, 100000);
	mk_ipv4(f, 1000, MAC_B, MAC_A, 26, 0, -1, 60);
	tsw_rx(h->sw, 0, f, 1000);
	h_run(h, 100000);
	tsw_port_stats(h->sw, 1, &st1);
	CHECK_EQ(st1.q[3].drops, 2);
	CHECK_EQ(st1.q[3].deq_frames, 6);
	h_free(h);
}

static void test_json(void)
{
	struct tsw_config c;
	struct host *h;
	uint8_t f[300];
	char *buf = NULL;
	size_t sz = 0, i;
	int depth = 0, mind = 0;
	bool instr = false;
	FILE *m;

	cfg_small(&c, 3);
	h = h_new(&c);
	teach(h, 3);
	mk_ipv4(f, 300, MAC_B, MAC_A, 26, 2, -1, 1);
	tsw_rx(h->sw, 0, f, 300);
	h_run(h, 10000);
	m = open_memstream(&buf, &sz);
	if (!m) {
		failures++;
		return;
	}
	tsw_dump_json(h->sw, m);
	fclose(m);
	for (i = 0; i < sz; i++) {
		char ch = buf[i];

		if (ch == '"')
			instr = !instr;
		if (instr)
			continue;
		if (ch == '{' || ch == '[')
			depth++;
		if (ch == '}' || ch == ']')
			depth--;
		if (depth < mind)
			mind = depth;
	}
	CHECK_EQ(depth, 0);
	CHECK_EQ(mind, 0);
	CHECK(!instr);
	CHECK(strstr(buf, "\"link_mbps\":10000"));
	CHECK(strstr(buf, "\"kmax_bytes\":204800"));
	CHECK(strstr(buf, "\"lossless_drops\":0"));
	CHECK(strstr(buf, "\"pfc_xoff_sent\":[0,0,0,0,0,0,0,0]"));
	CHECK(strstr(buf, "\"ecn_marked\""));
	CHECK(strstr(buf, "\"deq_bytes\":300"));
	CHECK(strstr(buf, "\"no_route\":0"));
	CHECK(strstr(buf, "\"no_flood\":false"));
	CHECK(buf[sz - 1] == '\n');
	free(buf);
	h_free(h);
}

/* A port with its own rate serializes, and times PFC quanta, at it. */
static void test_port_rates(void)
{
	struct tsw_config c;
	struct host *h;
	uint8_t f[1000];
	uint64_t t0;
	unsigned int i;

	cfg_small(&c, 3);
	c.port_mbps[2] = 40000;		/* port 2 (MAC_C) at 40 Gb/s, the others at 10 */
	h = h_new(&c);
	teach(h, 3);
	t0 = h->now;
	for (i = 0; i < 2; i++) {
		mk_ipv4(f, sizeof(f), MAC_C, MAC_A, 0, 0, -1, (uint16_t)i);
		tsw_rx(h->sw, 0, f, sizeof(f));
	}
	mk_ipv4(f, sizeof(f), MAC_B, MAC_A, 0, 0, -1, 2);
	tsw_rx(h->sw, 0, f, sizeof(f));
	h_run(h, 100000);
	CHECK_EQ(h->nout, 3);
	for (i = 0; i < h->nout; i++) {
		const struct out *o = &h->out[i];

		if (o->port == 2)	/* (1000 + 24) * 8000 / 40000 = 204 ns each */
			CHECK_EQ(o->arrive, o->sent + 204 + 500);
		else
			CHECK_EQ(o->arrive, o->sent + 819 + 500);
		CHECK_EQ(o->sent, t0 + (o->port == 2 && be16(o->data + 14 + 4) == 1 ? 204 : 0));
	}
	/* a pause of 1000 quanta from port 2's NIC lasts 1000 * 512 / 40000 us = 12.8 us
	 * (priority 3, lossless) */
	mk_pfc(f, MAC_C, 0x08, 1000);
	tsw_rx(h->sw, 2, f, 60);
	t0 = h->now;
	h->nout = 0;
	mk_ipv4(f, sizeof(f), MAC_C, MAC_A, 26, 0, -1, 3);
	tsw_rx(h->sw, 0, f, sizeof(f));
	h_run(h, 100000);
	CHECK_EQ(h->nout, 1);
	CHECK_EQ(h->out[0].sent, t0 + 12800);
	h_free(h);
}

/* A RoCEv2 frame A -> B with UDP source port @sport, from port 0; the port it left on or -1. */
static int route_one(struct host *h, const uint8_t *dst, uint16_t sport)
{
	uint8_t f[100];
	size_t ip;

	ip = mk_ipv4(f, 100, dst, MAC_A, 26, 0, -1, sport);
	f[ip + 20] = (uint8_t)(sport >> 8);
	f[ip + 21] = (uint8_t)sport;
	h->nout = 0;
	tsw_rx(h->sw, 0, f, 100);
	h_run(h, 10000);
	if (h->nout != 1)
		return -1;
	return (int)h->out[0].port;
}

static void test_routes_ecmp(void)
{
	static const unsigned int up[4] = { 2, 3, 4, 5 }, bad[1] = { 6 }, one[1] = { 1 };
	unsigned int hits[6] = { 0 }, i, differ = 0, sport;
	int first[64];
	struct tsw_config c;
	struct tsw_port_stats st;
	struct host *h, *h2;
	uint8_t f[100];

	cfg_small(&c, 6);
	c.no_flood = true;
	c.ecmp_seed = 7;
	h = h_new(&c);
	/* invalid routes are refused */
	CHECK(!tsw_route_add(h->sw, BCAST, up, 4));
	CHECK(!tsw_route_add(h->sw, MAC_B, up, 0));
	CHECK(!tsw_route_add(h->sw, MAC_B, up, TSW_MAX_ECMP + 1));
	CHECK(!tsw_route_add(h->sw, MAC_B, bad, 1));
	CHECK(tsw_route_add(h->sw, MAC_B, up, 4));
	/* each flow takes one of the group's ports, always the same; together they use all */
	for (sport = 0; sport < 64; sport++) {
		int p = route_one(h, MAC_B, (uint16_t)(0xc000 + sport));

		first[sport] = p;
		CHECK(p >= 2 && p <= 5);
		if (p >= 2 && p <= 5)
			hits[p]++;
		CHECK_EQ(route_one(h, MAC_B, (uint16_t)(0xc000 + sport)), p);
	}
	for (i = 2; i <= 5; i++)
		CHECK(hits[i] >= 4);
	/* another switch (seed) spreads the same flows differently */
	c.ecmp_seed = 8;
	h2 = h_new(&c);
	CHECK(tsw_route_add(h2->sw, MAC_B, up, 4));
	for (sport = 0; sport < 64; sport++)
		differ += route_one(h2, MAC_B, (uint16_t)(0xc000 + sport)) != first[sport];
	CHECK(differ >= 16);
	h_free(h2);
	/* no_flood: unknown unicast and group frames are dropped and counted, not flooded */
	CHECK_EQ(route_one(h, MAC_C, 1), -1);
	mk_ipv4(f, 100, BCAST, MAC_B, 0, 0, -1, 2);
	h->nout = 0;
	tsw_rx(h->sw, 1, f, 100);	/* B is now learned on port 1 ... */
	h_run(h, 10000);
	CHECK_EQ(h->nout, 0);
	tsw_port_stats(h->sw, 0, &st);
	CHECK_EQ(st.no_route, 1);
	tsw_port_stats(h->sw, 1, &st);
	CHECK_EQ(st.no_route, 1);
	/* ... but the route wins */
	CHECK_EQ(route_one(h, MAC_B, 0xc000), first[0]);
	/* a learned station without a route is still reached */
	mk_ipv4(f, 100, BCAST, MAC_C, 0, 0, -1, 3);
	tsw_rx(h->sw, 4, f, 100);
	h_run(h, 10000);
	CHECK_EQ(route_one(h, MAC_C, 1), 4);
	/* a route is replaced */
	CHECK(tsw_route_add(h->sw, MAC_B, one, 1));
	for (sport = 0; sport < 8; sport++)
		CHECK_EQ(route_one(h, MAC_B, (uint16_t)sport), 1);
	/* a frame routed back to its ingress port is filtered */
	mk_ipv4(f, 100, MAC_B, MAC_A, 26, 0, -1, 9);
	h->nout = 0;
	tsw_rx(h->sw, 1, f, 100);
	h_run(h, 10000);
	CHECK_EQ(h->nout, 0);
	h_free(h);
}

/* ---- INT --------------------------------------------------------------------------------- */

/* The switch delivered exactly @n frames so far, else the test stops here. */
#define REQUIRE_OUT(h, n)                                                                   \
	do {                                                                                \
		if ((h)->nout != (n)) {                                                     \
			failures++;                                                         \
			printf("#   %s:%d: %u frames out, not %u\n", __FILE__, __LINE__,      \
			       (h)->nout, (unsigned int)(n));                               \
			return;                                                             \
		}                                                                           \
	} while (0)

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)be16(p) << 16 | be16(p + 2);
}

/*
 * A RoCEv2 frame with an INT shim (UDP port 4792) from MAC_A to MAC_B, IPv4 (or IPv6 when
 * @v6) with DSCP @dscp: shim @type, @nhops records of 0x5a, @max_hops, then 12 BTH bytes,
 * @pay payload bytes counting up, 4 ICRC bytes. Returns its length.
 */
static size_t mk_int(uint8_t *f, bool v6, unsigned int dscp, uint8_t type, uint8_t nhops,
		     uint8_t max_hops, size_t pay)
{
	size_t ip = 14, iph = v6 ? 40 : 20, udp = ip + iph, s = udp + 8;
	size_t ulen = 8 + 8 + 16 * (size_t)nhops + 12 + pay + 4, len = udp + ulen, i;
	uint16_t cs;

	if (v6) {
		mk_ipv6(f, len, MAC_B, MAC_A, dscp, 0);
		f[ip + 4] = (uint8_t)(ulen >> 8);
		f[ip + 5] = (uint8_t)ulen;
		f[ip + 8 + 15] = 1;
		f[ip + 24 + 15] = 2;
	} else {
		mk_ipv4(f, len, MAC_B, MAC_A, dscp, 0, -1, 7);
	}
	f[udp] = 0xc0;
	f[udp + 1] = 0x01;
	f[udp + 2] = 0x12;		/* 4792 */
	f[udp + 3] = 0xb8;
	f[udp + 4] = (uint8_t)(ulen >> 8);
	f[udp + 5] = (uint8_t)ulen;
	f[udp + 6] = f[udp + 7] = 0;
	f[s] = type;
	f[s + 1] = nhops;
	f[s + 2] = max_hops;
	f[s + 3] = 0;
	f[s + 4] = 0x12;		/* next: 4791 */
	f[s + 5] = 0xb7;
	memset(f + s + 8, 0x5a, 16 * (size_t)nhops);
	for (i = s + 8 + 16 * (size_t)nhops; i < len; i++)
		f[i] = (uint8_t)i;
	if (!v6) {
		f[ip + 10] = f[ip + 11] = 0;
		cs = ip_sum(f + ip, 20);
		f[ip + 10] = (uint8_t)(cs >> 8);
		f[ip + 11] = (uint8_t)cs;
	}
	return len;
}

/* The ones'-complement sum over the IPv6 pseudo header and UDP datagram (0xffff: checks). */
static uint16_t udp6_sum(const uint8_t *f)
{
	size_t ulen = be16(f + 14 + 40 + 4), i;
	uint32_t s = 17 + (uint32_t)ulen;

	for (i = 0; i < 32; i += 2)
		s += be16(f + 14 + 8 + i);
	for (i = 0; i + 1 < ulen; i += 2)
		s += be16(f + 54 + i);
	if (ulen & 1)
		s += (uint32_t)f[54 + ulen - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Records appended hop by hop, filled at dequeue; the limits; what is never touched. */
static void test_int(void)
{
	struct tsw_config c;
	struct host *h, *h2;
	uint8_t f[600], g[600];
	size_t len, s = 14 + 20 + 8;
	const struct out *o;
	struct tsw_port_stats st;
	unsigned int i;

	cfg_small(&c, 3);
	/* off by default: a REQUEST goes through byte for byte */
	CHECK_EQ(c.int_mask, 0);
	CHECK_EQ(c.int_mtu, 9000);
	h = h_new(&c);
	teach(h, 3);
	len = mk_int(f, false, 26, 1, 0, 5, 100);
	tsw_rx(h->sw, 0, f, len);
	h_run(h, 100000);
	REQUIRE_OUT(h, 1);
	CHECK(h->out[0].len == len && !memcmp(h->out[0].data, f, len));
	h_free(h);

	c.int_mask = 1u << 3;
	h = h_new(&c);
	teach(h, 3);
	/* three requests at once: each gets one record, filled as it leaves */
	len = mk_int(f, false, 26, 1, 0, 5, 100);
	for (i = 0; i < 3; i++)
		tsw_rx(h->sw, 0, f, len);
	h_run(h, 100000);
	REQUIRE_OUT(h, 3);
	for (i = 0; i < 3; i++) {
		o = &h->out[i];
		CHECK_EQ(o->port, 1);
		CHECK_EQ(o->len, len + 16);
		CHECK_EQ(o->data[s + 1], 1);				/* nhops */
		CHECK_EQ(o->data[s + 3], 0);				/* no overflow */
		CHECK_EQ(be16(o->data + 14 + 2), len + 16 - 14);	/* IP length */
		CHECK_EQ(be16(o->data + s - 8 + 4), len + 16 - 34);	/* UDP length */
		CHECK_EQ(ip_sum(o->data + 14, 20), 0);			/* header checksum */
		CHECK_EQ(be16(o->data + s - 8 + 6), 0);			/* no UDP checksum */
		CHECK_EQ(be32(o->data + s + 8), (uint32_t)o->sent);	/* ts */
		CHECK_EQ(be32(o->data + s + 20), 10000);		/* rate */
		/* queued behind it (the first left at once): the third behind the second */
		CHECK_EQ(be32(o->data + s + 16), i == 1 ? len + 16 : 0);
		/* BTH, payload, ICRC as sent */
		CHECK(!memcmp(o->data + s + 8 + 16, f + s + 8, len - s - 8));
	}
	/* line bytes between two records: the second frame's, preamble/FCS/gap included */
	CHECK_EQ(be32(h->out[1].data + s + 12) - be32(h->out[0].data + s + 12), len + 16 + 24);
	CHECK_EQ(be32(h->out[2].data + s + 12) - be32(h->out[1].data + s + 12), len + 16 + 24);
	tsw_port_stats(h->sw, 1, &st);
	CHECK_EQ(st.int_hops_added, 3);
	CHECK_EQ(st.int_overflows, 0);

	/* a second switch appends after the first hop's record */
	h2 = h_new(&c);
	teach(h2, 3);
	memcpy(g, h->out[0].data, h->out[0].len);
	tsw_rx(h2->sw, 0, g, len + 16);
	h_run(h2, 100000);
	REQUIRE_OUT(h2, 1);
	o = &h2->out[0];
	CHECK_EQ(o->len, len + 32);
	CHECK_EQ(o->data[s + 1], 2);
	CHECK(!memcmp(o->data + s + 8, g + s + 8, 16));		/* hop 1 kept */
	CHECK_EQ(be32(o->data + s + 24), (uint32_t)o->sent);		/* hop 2 */
	CHECK(!memcmp(o->data + s + 8 + 32, f + s + 8, len - s - 8));
	h_free(h2);

	/* hop limit reached, and the MTU: forwarded as they are but flagged */
	h->nout = 0;
	len = mk_int(f, false, 26, 1, 2, 2, 100);
	tsw_rx(h->sw, 0, f, len);
	h_run(h, 100000);
	REQUIRE_OUT(h, 1);
	CHECK_EQ(h->out[0].len, len);
	CHECK_EQ(h->out[0].data[s + 3], 1);
	CHECK_EQ(ip_sum(h->out[0].data + 14, 20), 0);
	h_free(h);
	c.int_mtu = (uint32_t)(mk_int(f, false, 26, 1, 0, 5, 100) - 14 + 15);
	h = h_new(&c);
	teach(h, 3);
	len = mk_int(f, false, 26, 1, 0, 5, 100);
	tsw_rx(h->sw, 0, f, len);
	h_run(h, 100000);
	REQUIRE_OUT(h, 1);
	CHECK_EQ(h->out[0].len, len);
	CHECK_EQ(h->out[0].data[s + 1], 0);
	CHECK_EQ(h->out[0].data[s + 3], 1);
	tsw_port_stats(h->sw, 1, &st);
	CHECK_EQ(st.int_hops_added, 0);
	CHECK_EQ(st.int_overflows, 1);
	h_free(h);

	/* never touched: ECHO shims, priorities without INT */
	c.int_mtu = 9000;
	h = h_new(&c);
	teach(h, 3);
	len = mk_int(f, false, 26, 2, 1, 5, 100);
	tsw_rx(h->sw, 0, f, len);
	len = mk_int(g, false, 0, 1, 0, 5, 100);
	tsw_rx(h->sw, 0, g, len);
	h_run(h, 100000);
	REQUIRE_OUT(h, 2);
	CHECK(h->out[0].len == mk_int(f, false, 26, 2, 1, 5, 100) &&
	      !memcmp(h->out[0].data, f, h->out[0].len));
	CHECK(h->out[1].len == len && !memcmp(h->out[1].data, g, len));

	/* IPv6: lengths and the UDP checksum follow */
	h->nout = 0;
	len = mk_int(f, true, 26, 1, 0, 5, 101);
	tsw_rx(h->sw, 0, f, len);
	h_run(h, 100000);
	REQUIRE_OUT(h, 1);
	o = &h->out[0];
	CHECK_EQ(o->len, len + 16);
	CHECK_EQ(be16(o->data + 14 + 4), len + 16 - 54);
	CHECK_EQ(o->data[14 + 40 + 8 + 1], 1);
	CHECK(be16(o->data + 54 + 6) != 0);
	CHECK_EQ(udp6_sum(o->data), 0xffff);
	h_free(h);
}

struct test {
	const char *name;
	void (*fn)(void);
};

static const struct test tests[] = {
	{ "switch_defaults", test_defaults },
	{ "switch_forwarding_learning_flooding", test_forwarding },
	{ "switch_serialization_delay", test_timing },
	{ "switch_strict_priority_rr", test_strict_priority },
	{ "switch_red_ecn_marking", test_ecn_red },
	{ "switch_ecn_enqueue_or_dequeue", test_ecn_dequeue },
	{ "switch_pfc_xoff_xon_generation", test_pfc_generation },
	{ "switch_pfc_honoured", test_pfc_honour },
	{ "switch_shared_buffer_drops", test_buffer_drops },
	{ "switch_json_dump", test_json },
	{ "switch_routes_ecmp_no_flood", test_routes_ecmp },
	{ "switch_per_port_rates", test_port_rates },
	{ "switch_int_hop_records", test_int },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	unsigned int n = 0, failed = 0;
	const struct test *t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (t = tests; t->name; t++)
		if (!only || strstr(t->name, only))
			n++;
	printf("1..%u\n", n);
	n = 0;
	for (t = tests; t->name; t++) {
		if (only && !strstr(t->name, only))
			continue;
		failures = 0;
		t->fn();
		n++;
		if (failures)
			failed++;
		printf("%sok %u - %s\n", failures ? "not " : "", n, t->name);
	}
	printf("# %u passed, %u failed\n", n - failed, failed);
	return failed ? 1 : 0;
}
