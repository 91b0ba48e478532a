/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for the switch model (model/fabric/switch.c): what a NIC or a guest on any
 * of its ports can send. tern-switch relays guests' frames into it, so its frame parser
 * (Ethernet, VLAN, PFC, IPv4/IPv6 with DSCP and ECN) sees hostile input too.
 *
 * Input: a configuration (ports, lossless/ECN/strict priorities, ECN at enqueue or dequeue,
 * no_flood and the ECMP seed, thresholds, INT priorities with a small or jumbo int_mtu),
 * then a script:
 *   'R' port len16 bytes     a frame of len bytes (up to 65535 + 4096) received on port
 *   'T' us16                 time passes; the switch's timer runs whenever it is due
 *   'E' mac6 n ports[n]      a route (ECMP group); n and the ports may be out of range
 * Frames the switch delivers are checked against the longest it was given plus one INT
 * record (or a PFC frame's minimum size) and touched at both ends.
 * Build: `make -C model fuzz`; run: `model/build/fuzz-switch -max_len=70000 NEW_DIR
 * model/fuzz/corpus/switch`. tests/host/fuzz.t runs a bounded slice.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/tern/tern_dcb.h>

#include "switch.h"

#define MAX_FRAME	(65535 + 4096)

struct fz {
	uint64_t now, deadline;
	size_t max_len;
	uint8_t sink;
	uint8_t frame[MAX_FRAME];
};

static struct fz fz;

static void deliver(void *o, unsigned int port, const void *frame, size_t len, uint64_t at)
{
	struct fz *f = o;

	(void)at;
	/* a relayed frame (one INT record longer at most), or a PFC frame (minimum size) */
	if (port >= TSW_MAX_PORTS || len == 0 ||
	    (len > f->max_len + sizeof(struct tern_int_hop) && len > 64))
		abort();
	f->sink ^= ((const uint8_t *)frame)[0] ^ ((const uint8_t *)frame)[len - 1];
}

static uint64_t now_ns(void *o)
{
	return ((struct fz *)o)->now;
}

static void timer_arm(void *o, uint64_t deadline)
{
	((struct fz *)o)->deadline = deadline;
}

static unsigned int take(const uint8_t **p, size_t *n, unsigned int bytes)
{
	unsigned int v = 0;

	while (bytes--) {
		v <<= 8;
		if (*n) {
			v |= **p;
			(*p)++;
			(*n)--;
		}
	}
	return v;
}

static void run_timers(struct tsw *sw, struct fz *f, uint64_t until)
{
	unsigned int i;

	for (i = 0; i < 100000 && f->deadline <= until; i++) {
		if (f->deadline > f->now)
			f->now = f->deadline;
		f->deadline = UINT64_MAX;
		tsw_timer(sw);
	}
	if (f->now < until)
		f->now = until;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tsw_host host = { &fz, deliver, now_ns, timer_arm };
	struct tsw_config cfg;
	struct tsw *sw;
	unsigned int steps, i, nports;
	size_t len;

	fz.now = 1000;
	fz.deadline = UINT64_MAX;
	fz.max_len = 0;
	nports = 2 + take(&data, &size, 1) % 7;
	tsw_config_default(&cfg, nports);
	cfg.pfc_mask = (uint8_t)take(&data, &size, 1);
	cfg.ecn_mask = (uint8_t)take(&data, &size, 1);
	cfg.strict_mask = (uint8_t)take(&data, &size, 1);
	i = take(&data, &size, 1);
	cfg.ecn_at_dequeue = i & 1;
	cfg.link_mbps = 100u << (i >> 1 & 7);
	cfg.no_flood = i >> 4 & 1;
	cfg.ecmp_seed = i >> 5;
	cfg.buffer_bytes = 4096u << (take(&data, &size, 1) % 12);
	cfg.xoff_bytes = cfg.buffer_bytes / 4;
	cfg.xon_bytes = cfg.buffer_bytes / 8;
	cfg.kmin_bytes = 1500;
	cfg.kmax_bytes = cfg.buffer_bytes / 2;
	cfg.pmax_ppm = 200000;
	i = take(&data, &size, 1);
	cfg.int_mask = (uint8_t)i;
	cfg.int_mtu = i & 1 ? 9000 : 1500;
	for (i = 0; i < 64; i++)
		cfg.dscp_prio[i] = (uint8_t)(i >> 3);
	sw = tsw_create(&cfg, &host);
	if (!sw)
		return 0;
	for (steps = 0; size && steps < 256; steps++) {
		switch (take(&data, &size, 1)) {
		case 'R':
			i = take(&data, &size, 1) % nports;
			len = take(&data, &size, 2);
			if (take(&data, &size, 1) & 0x80)
				len += 4096;
			if (len > size)
				len = size;
			memcpy(fz.frame, data, len);
			data += len;
			size -= len;
			if (len > fz.max_len)
				fz.max_len = len;
			tsw_rx(sw, i, fz.frame, len);
			break;
		case 'T':
			run_timers(sw, &fz, fz.now + (uint64_t)take(&data, &size, 2) * 1000);
			break;
		case 'E': {	/* a route (ECMP group), possibly invalid */
			unsigned int ports[TSW_MAX_ECMP + 1], np, k;
			uint8_t mac[6] = { 0 };

			len = size < 6 ? size : 6;
			memcpy(mac, data, len);
			data += len;
			size -= len;
			np = take(&data, &size, 1) % (TSW_MAX_ECMP + 2);
			for (k = 0; k < np; k++)
				ports[k] = take(&data, &size, 1) % (nports + 1);
			tsw_route_add(sw, mac, ports, np);
			break;
		}
		default:
			break;
		}
	}
	run_timers(sw, &fz, fz.now + 100000000);
	tsw_destroy(sw);
	return 0;
}
