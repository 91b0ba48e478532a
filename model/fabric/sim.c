/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern-sim: N:1 incast in virtual time. N sender NICs and one receiver NIC (the real device
 * model, model/lib, driven through tern_model.h by the model's minimal host driver,
 * model/hostdrv) are cabled to one switch (switch.c); everything runs in one discrete-event
 * loop with a single virtual clock. Documentation/fabric.rst describes the scenario, the
 * parameters, and how every reported figure is measured.
 *
 *   tern-sim --n 16 --dcqcn on [--duration-us 40000] [--series FILE] [...]   (--help)
 *
 * Prints one JSON object (one line) with the run's figures on stdout; --series writes the
 * time series (per-flow rates, queue depth) as one JSON object to FILE; --switch-json dumps
 * the switch's counters. Exit status 0 when the run could be set up and completed. With
 * --flow-bytes every sender's flow is finite and the run ends when the last one has ended
 * (each flow's completion time is in the JSON).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include <linux/tern/tern_dcb.h>

#include "dcb_drv.h"
#include "rdma_drv.h"
#include "simutil.h"
#include "switch.h"

#define MAX_SENDERS	(TSW_MAX_PORTS - 1)
#define ETH_OVERHEAD	24

/* ---- parameters -------------------------------------------------------------------------- */

struct params {
	unsigned int n;			/* senders */
	bool dcqcn;
	bool hpcc;			/* HPCC + INT on rp_en's priorities instead of DCQCN */
	bool timely;			/* TIMELY on rp_en's priorities instead of DCQCN */
	uint8_t rp_en, np_en;		/* CC priority masks when dcqcn (default: 1 << 3) */
	uint32_t link_mbps;
	uint64_t delay_ns;		/* propagation delay of every link */
	uint64_t jitter_ns;		/* NIC -> switch: up to this much more, uniformly */
	uint64_t duration_ns;
	double steady_from;		/* fraction of the run where the steady state starts */
	uint64_t sample_ns;		/* queue sampling period */
	uint64_t bin_ns;		/* rate time series bin */
	uint64_t conv_window_ns;	/* convergence: rates averaged over this window */
	uint64_t conv_hold_ns;		/* convergence: ... held this long */
	double conv_tol;		/* convergence: within this fraction of the fair share */
	uint8_t mtu;			/* IB path MTU code: 3 = 1024, 5 = 4096 */
	uint32_t msg_bytes;		/* each RDMA WRITE */
	unsigned int outstanding;	/* WRITEs kept posted per sender */
	unsigned int slots;		/* destination slots per flow (data check) */
	struct tsw_config sw;
	struct tern_cc_params cc;	/* when dcqcn (rp_en/np_en set from above) */
	const char *series;
	const char *switch_json;
	bool quiet;
	uint32_t loss_ppm;		/* every NIC's line: frames lost at random (0) */
	bool sr;			/* RC selective repeat (TERN_QP_XPORT_SR) */
	uint8_t sr_log_cap;		/* its in-flight cap 2^n PSNs (0: the default) */
	uint64_t flow_bytes;		/* each flow's size (0: no end); the run ends with them */
	uint8_t ack_timeout;		/* QP timeout code: 4.096 us * 2^n (14) */
	bool read;			/* --op read: the receiver READs from the senders */
	const char *op;
};

static void params_default(struct params *p)
{
	memset(p, 0, sizeof(*p));
	p->n = 2;
	p->dcqcn = true;
	p->rp_en = p->np_en = 1u << 3;
	p->link_mbps = 40000;
	p->delay_ns = 1000;
	p->duration_ns = 40000000;
	p->ack_timeout = 14;		/* connopt_default's */
	p->steady_from = 0.5;
	p->sample_ns = 1000;
	p->bin_ns = 100000;
	p->conv_window_ns = 1000000;
	p->conv_hold_ns = 5000000;
	p->conv_tol = 0.2;
	p->mtu = 5;
	p->msg_bytes = 65536;
	p->outstanding = 8;
	p->slots = 4;
	sim_incast_switch_default(&p->sw, 3);
	cc_params_paper(&p->cc);
}

/* ---- the simulation ---------------------------------------------------------------------- */

enum ev_kind { EV_TO_SWITCH, EV_TO_NIC };

struct ev {
	uint64_t t, seq;
	enum ev_kind kind;
	unsigned int node;		/* the NIC, i.e. the switch port */
	size_t len;
	uint8_t *data;
};

struct node {
	struct rdev *d;
	uint64_t line_free;		/* NIC -> switch line busy until */
	uint64_t last_arrival;		/* at the switch: the link keeps frames in order */
	/* sender */
	struct rcq cq;
	struct rqp qp;
	struct rmr mr;
	struct wstream w;		/* the WRITEs to the receiver (--op read: its READs) */
	struct rcq rd_cq;		/* --op read: at the receiver, this flow's CQ ... */
	struct rmr rd_mr;		/* ... and the slots its READs fill */
	uint64_t done_bytes_steady;
	bool ended;			/* --flow-bytes: every WRITE completed (or failed) */
	uint64_t fct_ns;		/* ... when, from the start (0: some WRITE failed) */
	/* at the receiver: bytes from this sender delivered by the switch */
	uint64_t rx_bytes, rx_bytes_steady;
	uint64_t *bins;			/* rx bytes per bin */
	uint32_t *cc_mbps;		/* DCQCN current rate at the end of each bin (QUERY_QP) */
};

struct sim {
	struct params p;
	uint64_t t0, now, end, steady_at;
	struct node nodes[TSW_MAX_PORTS];	/* 0: receiver, 1..n: senders */
	unsigned int nnodes;
	struct rcq rx_cq;
	struct rqp rx_qp[MAX_SENDERS + 1];
	struct rmr rx_mr;
	struct tsw *sw;
	uint64_t sw_deadline;
	struct ev *heap;
	size_t nheap, capheap;
	uint64_t seq;
	uint64_t next_sample;
	uint64_t *qsamples;		/* bottleneck queue bytes, steady state */
	size_t nq, capq;
	uint64_t *qseries;		/* every sample_ns * qseries_every over the whole run */
	size_t nqs, capqs;
	unsigned int nbins;
	uint64_t refused;		/* frames a NIC could not take */
	uint64_t rng;			/* the jitter's generator */
	uint64_t loss_rng;		/* --loss-ppm's generator */
	uint64_t lost;			/* frames --loss-ppm dropped */
	uint64_t events;
	unsigned int flows_ended;	/* --flow-bytes */
	bool dcb_ok, cc_ok;
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);

	if (!q) {
		fprintf(stderr, "tern-sim: out of memory\n");
		exit(2);
	}
	return q;
}

static bool ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void ev_push(struct sim *s, struct ev e)
{
	size_t i;

	if (s->nheap == s->capheap) {
		s->capheap = s->capheap ? 2 * s->capheap : 1024;
		s->heap = xrealloc(s->heap, s->capheap * sizeof(*s->heap));
	}
	e.seq = s->seq++;
	i = s->nheap++;
	while (i && ev_less(&e, &s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = e;
}

static struct ev ev_pop(struct sim *s)
{
	struct ev top = s->heap[0], last = s->heap[--s->nheap];
	size_t i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && ev_less(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!ev_less(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

static void set_now(struct sim *s, uint64_t t)
{
	unsigned int i;

	s->now = t;
	for (i = 0; i < s->nnodes; i++)
		s->nodes[i].d->f.now = t;
}

static uint64_t ser_ns(const struct sim *s, size_t len)
{
	if (len < 60)
		len = 60;
	return ((uint64_t)len + ETH_OVERHEAD) * 8000 / s->p.link_mbps;
}

/* --loss-ppm: is the next frame lost? (its own generator, the jitter's stays as it was) */
static bool sim_loss(struct sim *s)
{
	return sim_splitmix64(&s->loss_rng) % 1000000 < s->p.loss_ppm;
}

/* Run NIC @k's pending work and put what it transmitted on its line to the switch. */
static void nic_flush(struct sim *s, unsigned int k)
{
	struct node *nd = &s->nodes[k];
	struct fake *f = &nd->d->f;
	unsigned int i, n;

	fk_run(f);
	n = f->nframes;
	for (i = 0; i < n; i++) {
		struct fk_frame *fr = &f->frames[i];
		uint64_t start = nd->line_free > s->now ? nd->line_free : s->now;
		struct ev e = { .kind = EV_TO_SWITCH, .node = k, .len = fr->len, .data = fr->data };

		nd->line_free = start + ser_ns(s, fr->len);
		e.t = nd->line_free + s->p.delay_ns;
		if (s->p.jitter_ns)
			e.t += sim_splitmix64(&s->rng) % (s->p.jitter_ns + 1);
		if (e.t < nd->last_arrival)
			e.t = nd->last_arrival;
		nd->last_arrival = e.t;
		if (!e.data)
			continue;
		if (s->p.loss_ppm && sim_loss(s)) {
			free(e.data);		/* sent, and lost on the line */
			s->lost++;
			continue;
		}
		ev_push(s, e);
	}
	f->nframes = 0;
}

/* The host side of sender @k: reap completions, keep the SQ full. */
static void sender_poll(struct sim *s, unsigned int k)
{
	struct node *nd = &s->nodes[k];
	struct rdev *d = s->p.read ? s->nodes[0].d : nd->d;	/* where the stream posts */
	unsigned int at = s->p.read ? 0 : k;
	struct wc wc;
	bool any = false;

	while (wstream_poll(d, &nd->w, &wc)) {
		any = true;
		if (wc.status != TERN_CQE_OK) {
			if (nd->w.errors == 1 && !s->p.quiet)
				fprintf(stderr, "tern-sim: sender %u: WRITE %" PRIu64
					" completed with status %u\n", k, wc.wr_id, wc.status);
			continue;
		}
		if (s->now >= s->steady_at)
			nd->done_bytes_steady += s->p.msg_bytes;
	}
	if (any && !nd->w.errors && s->now < s->end)
		wstream_post(d, &nd->w);
	if (any)
		nic_flush(s, at);
	/* a finite flow ends when its last WRITE completes, or every posted one after an error */
	if (any && s->p.flow_bytes && !nd->ended && nd->w.completed == nd->w.posted &&
	    (nd->w.errors || nd->w.done_bytes >= s->p.flow_bytes)) {
		nd->ended = true;
		nd->fct_ns = nd->w.errors ? 0 : s->now - s->t0;
		s->flows_ended++;
	}
}

static void after_nic(struct sim *s, unsigned int k)
{
	unsigned int j;

	nic_flush(s, k);
	if (k && !s->p.read)
		sender_poll(s, k);
	else if (!k && s->p.read)
		for (j = 1; j < s->nnodes; j++)
			sender_poll(s, j);	/* every flow's READs complete at the receiver */
}

/* ---- switch host ------------------------------------------------------------------------- */

static void sw_deliver(void *opaque, unsigned int port, const void *frame, size_t len,
		       uint64_t arrive_ns)
{
	struct sim *s = opaque;
	struct ev e = { .t = arrive_ns, .kind = EV_TO_NIC, .node = port, .len = len };

	e.data = malloc(len);
	if (!e.data) {
		fprintf(stderr, "tern-sim: out of memory\n");
		exit(2);
	}
	memcpy(e.data, frame, len);
	if (port == 0 && len >= 12) {
		/* at the bottleneck: count per sender by source MAC */
		unsigned int k;

		for (k = 1; k < s->nnodes; k++) {
			if (!memcmp((const uint8_t *)frame + 6, s->nodes[k].d->mac, 6)) {
				struct node *nd = &s->nodes[k];
				uint64_t b = (s->now - s->t0) / s->p.bin_ns;

				nd->rx_bytes += len;
				if (s->now >= s->steady_at)
					nd->rx_bytes_steady += len;
				if (b < s->nbins)
					nd->bins[b] += len;
				break;
			}
		}
	}
	ev_push(s, e);
}

static uint64_t sw_now(void *opaque)
{
	return ((struct sim *)opaque)->now;
}

static void sw_arm(void *opaque, uint64_t dl)
{
	((struct sim *)opaque)->sw_deadline = dl;
}

/* ---- setup ------------------------------------------------------------------------------- */

static bool dcb_setup(struct sim *s, struct rdev *d)
{
	const char *failed;
	int st = dcb_trust_dscp(d, s->p.sw.pfc_mask, &failed);

	if (st != TERN_CMD_OK) {
		if (!s->p.quiet)
			fprintf(stderr, "tern-sim: %s status %d\n", failed, st);
		return false;
	}
	return true;
}

static bool cc_setup(struct sim *s, struct rdev *d)
{
	struct tern_cc_params c = s->p.cc;
	int st;

	c.rp_en = s->p.dcqcn && !s->p.hpcc && !s->p.timely ? s->p.rp_en : 0;
	c.np_en = s->p.dcqcn && !s->p.hpcc && !s->p.timely ? s->p.np_en : 0;
	c.hpcc_en = s->p.hpcc ? s->p.rp_en : 0;
	c.timely_en = s->p.timely && !s->p.hpcc ? s->p.rp_en : 0;
	st = cc_params_set(d, &c);
	if (st != TERN_CMD_OK) {
		if (!s->p.quiet)
			fprintf(stderr, "tern-sim: SET_CC_PARAMS status %d\n", st);
		return false;
	}
	return true;
}

/* The receiver's CQ and the MR that holds every flow's slots. */
static bool sim_build_receiver(struct sim *s, const struct connopt *o)
{
	struct rdev *rx = s->nodes[0].d;
	uint64_t rx_len = (uint64_t)s->p.n * s->p.slots * s->p.msg_bytes;
	int st;

	st = cq_create(rx, &s->rx_cq, o->cq_log, false);
	if (!st)
		st = mr_create(rx, &s->rx_mr, rx->pdn, rx_len,
			       TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0);
	if (st) {
		fprintf(stderr, "tern-sim: receiver setup status %d\n", st);
		return false;
	}
	return true;
}

/*
 * Sender @k: its CQ, QP, MR and WRITE stream, the receiver's QP for it, both connected; with
 * --op read the stream is the receiver's READs, with a CQ and slots of its own there.
 */
static bool sim_build_flow(struct sim *s, unsigned int k, const struct connopt *o)
{
	const struct params *p = &s->p;
	struct node *nd = &s->nodes[k];
	struct rdev *rx = s->nodes[0].d;
	uint64_t len = (uint64_t)p->slots * p->msg_bytes;
	struct rcq *rcq = &s->rx_cq;
	int st;

	st = cq_create(nd->d, &nd->cq, o->cq_log, false);
	if (!st && p->read) {
		/* the READs' CQ and slots at the receiver, the flow's own */
		st = cq_create(rx, &nd->rd_cq, o->cq_log, false);
		if (!st)
			st = mr_create(rx, &nd->rd_mr, rx->pdn, len, TERN_ACCESS_LOCAL_WRITE, 0);
		rcq = &nd->rd_cq;
	}
	if (!st)
		st = qp_create(nd->d, &nd->qp, nd->d->pdn, &nd->cq, &nd->cq, o->sq_log,
			       o->sq_stride, o->rq_log, o->rq_stride, 0, false);
	if (!st)
		st = qp_create(rx, &s->rx_qp[k], rx->pdn, rcq, rcq, o->sq_log,
			       o->sq_stride, o->rq_log, o->rq_stride, 0, false);
	if (!st)
		st = mr_create(nd->d, &nd->mr, nd->d->pdn, len,
			       TERN_ACCESS_LOCAL_WRITE | (p->read ? TERN_ACCESS_REMOTE_READ : 0),
			       0);
	if (st) {
		fprintf(stderr, "tern-sim: sender %u setup status %d\n", k, st);
		return false;
	}
	mr_fill(nd->d, &nd->mr, 1000 + k);
	if (p->read)		/* the receiver READs the sender's slots into its own */
		nd->w = (struct wstream){
			.qp = &s->rx_qp[k], .cq = &nd->rd_cq, .mr = &nd->rd_mr,
			.raddr = nd->mr.iova, .rkey = nd->mr.key, .msg_bytes = p->msg_bytes,
			.outstanding = p->outstanding, .slots = p->slots,
			.total_bytes = p->flow_bytes, .read = true,
		};
	else
		nd->w = (struct wstream){
			.qp = &nd->qp, .cq = &nd->cq, .mr = &nd->mr,
			.raddr = s->rx_mr.iova + (uint64_t)(k - 1) * len,
			.rkey = s->rx_mr.key, .msg_bytes = p->msg_bytes,
			.outstanding = p->outstanding, .slots = p->slots,
			.total_bytes = p->flow_bytes,
		};
	if (!qp_connect(nd->d, &nd->qp, rx, s->rx_qp[k].qpn, o, 0) ||
	    !qp_connect(rx, &s->rx_qp[k], nd->d, nd->qp.qpn, o, 1)) {
		fprintf(stderr, "tern-sim: connecting flow %u failed\n", k);
		return false;
	}
	nd->bins = calloc(s->nbins, sizeof(uint64_t));
	nd->cc_mbps = calloc(s->nbins, sizeof(uint32_t));
	return nd->bins && nd->cc_mbps;
}

static bool sim_build(struct sim *s)
{
	struct params *p = &s->p;
	struct tsw_host th = { .opaque = s, .deliver = sw_deliver, .now_ns = sw_now,
			       .timer_arm = sw_arm };
	struct connopt o;
	unsigned int k;

	s->nnodes = p->n + 1;
	s->dcb_ok = s->cc_ok = true;
	for (k = 0; k < s->nnodes; k++) {
		s->nodes[k].d = rdev_new_cfg(k, p->link_mbps, 0);	/* exact serialization */
		if (!s->nodes[k].d) {
			fprintf(stderr, "tern-sim: device %u setup failed\n", k);
			return false;
		}
	}
	s->t0 = s->nodes[0].d->f.now;
	set_now(s, s->t0);
	for (k = 0; k < s->nnodes; k++) {
		s->dcb_ok &= dcb_setup(s, s->nodes[k].d);
		s->cc_ok &= cc_setup(s, s->nodes[k].d);
	}
	connopt_write_flow(&o, s->p.mtu, 26);
	if (s->p.read) {
		o.access |= TERN_ACCESS_REMOTE_READ;
		o.rd_atomic = 16;	/* the READs a flow keeps posted (--outstanding <= 16) */
	}
	o.timeout = s->p.ack_timeout;
	o.xport = s->p.sr ? TERN_QP_XPORT_SR |
		  (uint32_t)s->p.sr_log_cap << TERN_QP_XPORT_LOG_CAP_SHIFT : 0;
	if (!sim_build_receiver(s, &o))
		return false;
	for (k = 1; k < s->nnodes; k++)
		if (!sim_build_flow(s, k, &o))
			return false;
	p->sw.nports = s->nnodes;
	p->sw.link_mbps = p->link_mbps;
	p->sw.delay_ns = p->delay_ns;
	p->sw.int_mask = p->hpcc ? p->rp_en : 0;
	s->sw_deadline = UINT64_MAX;
	s->sw = tsw_create(&p->sw, &th);
	if (!s->sw) {
		fprintf(stderr, "tern-sim: bad switch configuration\n");
		return false;
	}
	return true;
}

/* ---- the run ----------------------------------------------------------------------------- */

/* At the end of bin @b: every sender QP's DCQCN rate (QUERY_QP; 0 = not limited). */
static void sample_rates(struct sim *s, uint64_t b)
{
	uint8_t out[sizeof(struct tern_cmd_query_qp_out)];
	unsigned int k;

	for (k = 1; k < s->nnodes; k++) {
		struct node *nd = &s->nodes[k];
		uint32_t r = 0;

		if (qp_query(nd->d, nd->qp.qpn, out) == TERN_CMD_OK)
			r = rd32(out + OFF(struct tern_cmd_query_qp_out, cc_rate_mbps));
		nd->cc_mbps[b] = r ? r : s->p.link_mbps;
		after_nic(s, k);
	}
}

static void sample_queue(struct sim *s)
{
	uint64_t q = tsw_queue_bytes(s->sw, 0, 3);
	uint64_t t = s->now - s->t0;

	if (t && t % s->p.bin_ns == 0 && t / s->p.bin_ns <= s->nbins)
		sample_rates(s, t / s->p.bin_ns - 1);

	if (s->now >= s->steady_at) {
		if (s->nq == s->capq) {
			s->capq = s->capq ? 2 * s->capq : 4096;
			s->qsamples = xrealloc(s->qsamples, s->capq * sizeof(uint64_t));
		}
		s->qsamples[s->nq++] = q;
	}
	if (s->nqs == s->capqs) {
		s->capqs = s->capqs ? 2 * s->capqs : 4096;
		s->qseries = xrealloc(s->qseries, s->capqs * sizeof(uint64_t));
	}
	s->qseries[s->nqs++] = q;
}

/*
 * Every station announces itself with one broadcast (as a gratuitous ARP would) so that the
 * switch knows where each MAC lives before the flows start; the NICs drop these frames.
 */
static void announce(struct sim *s)
{
	unsigned int k;

	for (k = 0; k < s->nnodes; k++) {
		uint8_t f[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

		memcpy(f + 6, s->nodes[k].d->mac, 6);
		f[12] = 0x88;		/* IEEE local experimental EtherType */
		f[13] = 0xb5;
		tsw_rx(s->sw, k, f, sizeof(f));
	}
}

static void sim_run(struct sim *s)
{
	unsigned int k;

	s->end = s->t0 + s->p.duration_ns;
	s->steady_at = s->t0 + (uint64_t)(s->p.duration_ns * s->p.steady_from);
	if (s->p.flow_bytes)
		s->steady_at = s->t0;	/* finite flows: the figures cover the whole run */
	s->next_sample = s->t0;
	announce(s);
	for (k = 1; k < s->nnodes; k++) {
		wstream_post(s->nodes[s->p.read ? 0 : k].d, &s->nodes[k].w);
		nic_flush(s, s->p.read ? 0 : k);
	}
	for (;;) {
		uint64_t t = s->next_sample;
		int which = -1;		/* -2: heap, -3: switch, >= 0: NIC timer, -1: sample */

		if (s->nheap && s->heap[0].t < t) {
			t = s->heap[0].t;
			which = -2;
		}
		if (s->sw_deadline < t) {
			t = s->sw_deadline;
			which = -3;
		}
		for (k = 0; k < s->nnodes; k++) {
			if (s->nodes[k].d->f.deadline < t) {
				t = s->nodes[k].d->f.deadline;
				which = (int)k;
			}
		}
		if (t < s->now)
			t = s->now;
		if (t >= s->end)
			break;
		if (s->p.flow_bytes && s->flows_ended == s->p.n) {
			/* every flow ended: the run ends here, the last bin with it */
			s->end = s->now;
			s->nbins = (unsigned int)((s->end - s->t0 + s->p.bin_ns - 1) / s->p.bin_ns);
			break;
		}
		if (t != s->now)
			set_now(s, t);
		s->events++;
		if (which == -1) {
			sample_queue(s);
			s->next_sample += s->p.sample_ns;
		} else if (which == -2) {
			struct ev e = ev_pop(s);

			if (e.kind == EV_TO_SWITCH) {
				tsw_rx(s->sw, e.node, e.data, e.len);
			} else {
				struct fake *f = &s->nodes[e.node].d->f;

				if (!tern_model_rx_frame(f->m, e.data, e.len))
					s->refused++;
				after_nic(s, e.node);
			}
			free(e.data);
		} else if (which == -3) {
			s->sw_deadline = UINT64_MAX;
			tsw_timer(s->sw);
		} else {
			struct fake *f = &s->nodes[which].d->f;

			f->deadline = UINT64_MAX;
			tern_model_timer(f->m);
			after_nic(s, (unsigned int)which);
		}
	}
	set_now(s, s->end);
	if (s->nbins)
		sample_rates(s, s->nbins - 1);	/* the last bin ends with the run */
}

/* ---- figures ----------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The senders' bins and the convergence parameters, for simutil.h. */
static struct sim_bins senders_bins(const struct sim *s, const uint64_t **bins)
{
	struct sim_bins sb = { .bins = bins, .nflows = s->nnodes - 1, .nbins = s->nbins,
			       .bin_ns = s->p.bin_ns, .window_ns = s->p.conv_window_ns,
			       .hold_ns = s->p.conv_hold_ns };
	unsigned int k;

	for (k = 1; k < s->nnodes; k++)
		bins[k - 1] = s->nodes[k].bins;
	return sb;
}

static uint64_t pfc_stat(struct rdev *d, unsigned int prio, size_t field, bool *ok)
{
	uint8_t out[sizeof(struct tern_cmd_pfc_stats_out)];

	if (rdev_cmd(d, TERN_CMD_QUERY_PFC_STATS, NULL, 0, out, sizeof(out), NULL) != TERN_CMD_OK) {
		*ok = false;
		return 0;
	}
	return rd64(out + OFF(struct tern_cmd_pfc_stats_out, prio) +
		    prio * sizeof(struct tern_pfc_prio_stats) + field);
}

#define PFC_FIELD(f) OFF(struct tern_pfc_prio_stats, f)

/* The switch's PFC frames (priority 3), drops, ECN marks and INT records, every port. */
static void report_switch(struct sim *s, struct sim_incast_figures *fig)
{
	struct tsw_port_stats st;
	unsigned int k, q;

	for (k = 0; k <= s->p.n; k++) {
		tsw_port_stats(s->sw, k, &st);
		fig->xoff += st.pfc_xoff_sent[3];
		fig->xon += st.pfc_xon_sent[3];
		fig->lossless += st.lossless_drops;
		fig->int_hops += st.int_hops_added;
		for (q = 0; q < TSW_NUM_PRIO; q++) {
			fig->drops += st.q[q].drops;
			fig->marked += st.q[q].ecn_marked;
		}
	}
}

/* Every NIC's PFC counters (priority 3) and RDMA counters; each sender's retransmissions. */
static void report_nics(struct sim *s, struct sim_incast_figures *fig, uint64_t *flow_retrans)
{
	unsigned int k;

	for (k = 0; k <= s->p.n; k++) {
		struct rdev *d = s->nodes[k].d;
		uint8_t rs[sizeof(struct tern_cmd_rdma_stats_out)];

		fig->rx_pause += pfc_stat(d, 3, PFC_FIELD(rx_pause), &fig->pfc_ok);
		fig->tx_pause += pfc_stat(d, 3, PFC_FIELD(tx_pause), &fig->pfc_ok);
		fig->discards += pfc_stat(d, 3, PFC_FIELD(rx_discards), &fig->pfc_ok);
		if (!rdev_stats(d, rs))
			continue;
		fig->retrans += RSTAT(rs, retrans_pkts);
		if (k)
			flow_retrans[k - 1] = RSTAT(rs, retrans_pkts);
		fig->timeouts += RSTAT(rs, local_ack_timeout_err);
		fig->sel_retrans += RSTAT(rs, selective_retrans_pkts);
		fig->probes += RSTAT(rs, tail_loss_probes);
		fig->cnp_sent += RSTAT(rs, np_cnp_sent);
		fig->int_echo_acks += RSTAT(rs, hpcc_int_echo_acks);
		fig->hpcc_updates += RSTAT(rs, hpcc_window_updates);
		fig->timely_samples += RSTAT(rs, timely_rtt_samples);
		fig->timely_decreases += RSTAT(rs, timely_rate_decreases);
		fig->timely_increases += RSTAT(rs, timely_rate_increases);
		fig->ecn_rx += RSTAT(rs, np_ecn_marked_roce_packets);
		fig->cnp_handled += RSTAT(rs, rp_cnp_handled);
		fig->cnp_ignored += RSTAT(rs, rp_cnp_ignored);
		fig->cuts += RSTAT(rs, rp_rate_decrease_events);
		fig->incs += RSTAT(rs, rp_rate_increase_events);
	}
}

/* Each sender's WRITEs, completion time and whether its slots hold its data. */
static void report_flows(struct sim *s, struct sim_incast_figures *fig, double *fct_us,
			 int *flow_data)
{
	const struct params *p = &s->p;
	unsigned int k;

	for (k = 1; k <= p->n; k++) {
		struct node *nd = &s->nodes[k];

		fig->completed += nd->w.completed;
		fig->errors += nd->w.errors;
		/* -1: the flow failed or did not end within --duration-us */
		fct_us[k - 1] = nd->ended && nd->fct_ns ? (double)nd->fct_ns / 1000 : -1;
		flow_data[k - 1] = -1;		/* no WRITE completed: nothing to check */
		if (p->read ? wstream_data_ok(s->nodes[0].d, &nd->rd_mr, 0, &nd->w, 1000 + k) :
		    wstream_data_ok(s->nodes[0].d, &s->rx_mr,
				    (uint64_t)(k - 1) * p->slots * p->msg_bytes, &nd->w, 1000 + k))
			flow_data[k - 1] = 1;
		else if (nd->w.slot_done)
			flow_data[k - 1] = 0;
		if (flow_data[k - 1] != 1)
			fig->data_ok = false;
	}
}

static void report(struct sim *s, double wall)
{
	struct params *p = &s->p;
	unsigned int n = p->n, k;
	double rates[MAX_SENDERS], done[MAX_SENDERS], total = 0, fair, steady_s;
	const uint64_t *bins[MAX_SENDERS];
	struct sim_bins sb = senders_bins(s, bins);
	double jr[MAX_SENDERS], fct_us[MAX_SENDERS];
	uint64_t flow_retrans[MAX_SENDERS] = { 0 };
	int flow_data[MAX_SENDERS];
	struct sim_incast_figures fig = { .pfc_ok = true, .data_ok = true };

	steady_s = (double)(s->end - s->steady_at) / 1e9;
	for (k = 1; k <= n; k++) {
		rates[k - 1] = (double)s->nodes[k].rx_bytes_steady * 8 / steady_s / 1e9;
		done[k - 1] = (double)s->nodes[k].done_bytes_steady * 8 / steady_s / 1e9;
		total += rates[k - 1];
	}
	fair = total / n;
	report_switch(s, &fig);
	report_nics(s, &fig, flow_retrans);
	report_flows(s, &fig, fct_us, flow_data);
	qsort(s->qsamples, s->nq, sizeof(uint64_t), cmp_u64);
	fig.n = n;
	fig.dcqcn = p->dcqcn && !p->hpcc && !p->timely;
	fig.rp_en = p->rp_en;
	fig.np_en = p->np_en;
	fig.link_mbps = p->link_mbps;
	fig.delay_ns = p->delay_ns;
	fig.mtu_bytes = 128u << p->mtu;
	fig.msg_bytes = p->msg_bytes;
	fig.duration_ns = p->duration_ns;
	fig.steady_from_ns = s->steady_at - s->t0;
	fig.rates = rates;
	fig.goodput = done;
	fig.total = total;
	fig.fair = fair;
	fig.q_sorted = s->qsamples;
	fig.nq = s->nq;
	fig.sw = &p->sw;
	fig.convergence_us = sim_convergence_us(&sb, fair, p->conv_tol);
	fig.jain_convergence_us = sim_jain_convergence_us(&sb, 0.99, false, jr);
	fig.refused = s->refused;
	fig.sr = p->sr;
	fig.loss_ppm = p->loss_ppm;
	fig.lost = s->lost;
	fig.hpcc = p->hpcc;
	fig.timely = p->timely && !p->hpcc;
	fig.dcb_ok = s->dcb_ok;
	fig.cc_ok = s->cc_ok;
	fig.events = s->events;
	fig.wall_s = wall;
	fig.flow_bytes = p->flow_bytes;
	fig.fct_us = fct_us;
	fig.flow_retrans = flow_retrans;
	fig.flow_data = flow_data;
	fig.run_us = (double)(s->end - s->t0) / 1000;
	sim_print_incast(stdout, NULL, &fig);
	fflush(stdout);
}

static void write_series(const struct sim *s)
{
	FILE *f = fopen(s->p.series, "w");
	unsigned int k, b;
	size_t i;

	if (!f) {
		fprintf(stderr, "tern-sim: %s: %s\n", s->p.series, strerror(errno));
		return;
	}
	fprintf(f, "{\"n\":%u,\"dcqcn\":%s,\"bin_us\":%.3f,\"sample_us\":%.3f,"
		"\"kmin_kb\":%.1f,\"kmax_kb\":%.1f,\"flow_gbps\":[",
		s->p.n, s->p.dcqcn ? "true" : "false", s->p.bin_ns / 1000.0,
		s->p.sample_ns / 1000.0, s->p.sw.kmin_bytes / 1024.0, s->p.sw.kmax_bytes / 1024.0);
	for (k = 1; k < s->nnodes; k++) {
		fprintf(f, "%s[", k > 1 ? "," : "");
		for (b = 0; b < s->nbins; b++)
			fprintf(f, "%s%.3f", b ? "," : "",
				(double)s->nodes[k].bins[b] * 8 / (double)s->p.bin_ns);
		fprintf(f, "]");
	}
	fprintf(f, "],\"cc_rate_gbps\":[");
	for (k = 1; k < s->nnodes; k++) {
		fprintf(f, "%s[", k > 1 ? "," : "");
		for (b = 0; b < s->nbins; b++)
			fprintf(f, "%s%.3f", b ? "," : "", s->nodes[k].cc_mbps[b] / 1000.0);
		fprintf(f, "]");
	}
	fprintf(f, "],\"queue_kb\":[");
	for (i = 0; i < s->nqs; i++)
		fprintf(f, "%s%.1f", i ? "," : "", s->qseries[i] / 1024.0);
	fprintf(f, "]}\n");
	fclose(f);
}

static void sim_free(struct sim *s)
{
	unsigned int k;

	while (s->nheap) {
		struct ev e = ev_pop(s);

		free(e.data);
	}
	free(s->heap);
	free(s->qsamples);
	free(s->qseries);
	tsw_destroy(s->sw);
	for (k = 1; k < s->nnodes; k++) {
		struct node *nd = &s->nodes[k];

		qmem_free(&nd->qp.sq);
		qmem_free(&nd->qp.rq);
		qmem_free(&nd->cq.mem);
		qmem_free(&s->rx_qp[k].sq);
		qmem_free(&s->rx_qp[k].rq);
		mr_release(&nd->mr);
		if (s->p.read) {
			qmem_free(&nd->rd_cq.mem);
			mr_release(&nd->rd_mr);
		}
		free(nd->bins);
		free(nd->cc_mbps);
	}
	qmem_free(&s->rx_cq.mem);
	mr_release(&s->rx_mr);
	for (k = 0; k < s->nnodes; k++)
		rdev_free(s->nodes[k].d);
}

/* ---- command line ------------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tern-sim [options]\n"
		SIM_INCAST_USAGE_TOP
		"  --cc NAME=V           a tern_cc_params field (e.g. rpg_ai_rate=40)\n"
		"  --hpcc on|off         HPCC with INT on the --rp-en priorities instead of DCQCN\n"
		"  --timely on|off       TIMELY on the --rp-en priorities instead of DCQCN\n"
		"  --cc dcqcn|hpcc|timely|none  the algorithm (--cc NAME=V sets a parameter,\n"
		"                        timely_* and hpcc_* included)\n"
		"  --loss-ppm P          every line loses frames at random, P per million (0)\n"
		"  --sr on|off           RC selective repeat instead of go-back-N (off)\n"
		"  --sr-log-cap N        its in-flight cap 2^N PSNs, 4..8 (0: the device's default)\n"
		"  --ack-timeout CODE    QP timeout 4.096 us * 2^CODE (14)\n"
		"  --pfc-mask M          lossless priorities, switch and NICs (8; 0: the switch drops)\n"
		"  --flow-bytes B        each flow ends after B bytes, the run when all have (0: never)\n"
		"  --op write|read       the flows WRITE to the receiver, or it READs from them (write)\n"
		SIM_INCAST_USAGE_BOTTOM, MAX_SENDERS);
}

static uint64_t num(const char *s, const char *what)
{
	char *e;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &e, 0);
	if (errno || e == s || *e) {
		fprintf(stderr, "tern-sim: bad %s: %s\n", what, s);
		exit(2);
	}
	return v;
}

static bool onoff(const char *s)
{
	if (!strcmp(s, "on") || !strcmp(s, "1"))
		return true;
	if (!strcmp(s, "off") || !strcmp(s, "0"))
		return false;
	fprintf(stderr, "tern-sim: expected on or off: %s\n", s);
	exit(2);
}

static void cc_set(struct tern_cc_params *c, const char *arg)
{
	static const struct {
		const char *name;
		size_t off;
	} f[] = {
#define F(x) { #x, offsetof(struct tern_cc_params, x) },
		TERN_CC_U32_FIELDS(F)
		TERN_CC_TIMELY_U32_FIELDS(F)
#undef F
	};
	const char *eq = strchr(arg, '=');
	unsigned int i;

	if (eq) {
		size_t len = (size_t)(eq - arg);

		if (len == 8 && !strncmp(arg, "cnp_dscp", 8)) {
			c->cnp_dscp = (uint8_t)num(eq + 1, arg);
			return;
		}
		if (len == 8 && !strncmp(arg, "cnp_prio", 8)) {
			c->cnp_prio = (uint8_t)num(eq + 1, arg);
			return;
		}
		if (len == 14 && !strncmp(arg, "hpcc_max_stage", 14)) {
			c->hpcc_max_stage = (uint8_t)num(eq + 1, arg);
			return;
		}
		if (len == 8 && !strncmp(arg, "hpcc_eta", 8)) {
			c->hpcc_eta = (uint16_t)num(eq + 1, arg);
			return;
		}
		if (len == 12 && !strncmp(arg, "hpcc_ai_rate", 12)) {
			c->hpcc_ai_rate = (uint32_t)num(eq + 1, arg);
			return;
		}
		if (len == 13 && !strncmp(arg, "hpcc_base_rtt", 13)) {
			c->hpcc_base_rtt = (uint32_t)num(eq + 1, arg);
			return;
		}
		if (len == 17 && !strncmp(arg, "timely_hai_thresh", 17)) {
			c->timely_hai_thresh = (uint8_t)num(eq + 1, arg);
			return;
		}
		if (len == 12 && !strncmp(arg, "timely_alpha", 12)) {
			c->timely_alpha = (uint16_t)num(eq + 1, arg);
			return;
		}
		if (len == 11 && !strncmp(arg, "timely_beta", 11)) {
			c->timely_beta = (uint16_t)num(eq + 1, arg);
			return;
		}
		for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			if (strlen(f[i].name) == len && !strncmp(arg, f[i].name, len)) {
				uint32_t v = (uint32_t)num(eq + 1, arg);

				memcpy((uint8_t *)c + f[i].off, &v, 4);
				return;
			}
		}
	}
	fprintf(stderr, "tern-sim: unknown --cc %s\n", arg);
	exit(2);
}

/* --cc NAME without '=': the algorithm on the --rp-en priorities; false if @arg is none. */
static bool cc_select(struct params *p, const char *arg)
{
	static const char *const names[] = { "none", "dcqcn", "hpcc", "timely" };
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(arg, names[i]))
			break;
	if (i == sizeof(names) / sizeof(names[0]))
		return false;
	p->dcqcn = i == 1;
	p->hpcc = i == 2;
	p->timely = i == 3;
	return true;
}

/* How an option sets struct params. */
enum opt_kind {
	K_NUM,		/* num(), times scale, into an integer field of its size */
	K_ONOFF,	/* onoff() into a bool */
	K_DOUBLE,	/* atof() */
	K_STR,		/* the argument itself */
	K_TRUE,		/* no argument: the bool set */
	K_FALSE,	/* no argument: the bool cleared */
	K_CC,		/* cc_set() */
	K_SRCAP,	/* as K_NUM, then 0 or TERN_QP_XPORT_{MIN,MAX}_LOG_CAP */
	K_HELP,
};

#define PF(f)	offsetof(struct params, f), sizeof(((struct params *)0)->f)

/* The command line; getopt_long()'s options are built from it, in this order. */
static const struct sim_opt {
	const char *name;
	enum opt_kind kind;
	size_t off, size;
	uint64_t scale;
} sim_opts[] = {
	{ "n", K_NUM, PF(n), 1 },
	{ "dcqcn", K_ONOFF, PF(dcqcn), 0 },
	{ "rp-en", K_NUM, PF(rp_en), 1 },
	{ "np-en", K_NUM, PF(np_en), 1 },
	{ "duration-us", K_NUM, PF(duration_ns), 1000 },
	{ "steady-from", K_DOUBLE, PF(steady_from), 0 },
	{ "link-mbps", K_NUM, PF(link_mbps), 1 },
	{ "delay-ns", K_NUM, PF(delay_ns), 1 },
	{ "mtu", K_NUM, PF(mtu), 1 },
	{ "msg-bytes", K_NUM, PF(msg_bytes), 1 },
	{ "outstanding", K_NUM, PF(outstanding), 1 },
	{ "kmin", K_NUM, PF(sw.kmin_bytes), 1 },
	{ "kmax", K_NUM, PF(sw.kmax_bytes), 1 },
	{ "pmax-ppm", K_NUM, PF(sw.pmax_ppm), 1 },
	{ "xoff", K_NUM, PF(sw.xoff_bytes), 1 },
	{ "xon", K_NUM, PF(sw.xon_bytes), 1 },
	{ "buffer", K_NUM, PF(sw.buffer_bytes), 1 },
	{ "cc", K_CC, PF(cc), 0 },
	{ "seed", K_NUM, PF(sw.seed), 1 },
	{ "sample-ns", K_NUM, PF(sample_ns), 1 },
	{ "bin-us", K_NUM, PF(bin_ns), 1000 },
	{ "conv-window-us", K_NUM, PF(conv_window_ns), 1000 },
	{ "conv-tol", K_DOUBLE, PF(conv_tol), 0 },
	{ "conv-hold-us", K_NUM, PF(conv_hold_ns), 1000 },
	{ "ecn-dequeue", K_TRUE, PF(sw.ecn_at_dequeue), 0 },
	{ "ecn-enqueue", K_FALSE, PF(sw.ecn_at_dequeue), 0 },
	{ "jitter-ns", K_NUM, PF(jitter_ns), 1 },
	{ "series", K_STR, PF(series), 0 },
	{ "loss-ppm", K_NUM, PF(loss_ppm), 1 },
	{ "sr", K_ONOFF, PF(sr), 0 },
	{ "sr-log-cap", K_SRCAP, PF(sr_log_cap), 1 },
	{ "ack-timeout", K_NUM, PF(ack_timeout), 1 },
	{ "pfc-mask", K_NUM, PF(sw.pfc_mask), 1 },
	{ "flow-bytes", K_NUM, PF(flow_bytes), 1 },
	{ "hpcc", K_ONOFF, PF(hpcc), 0 },
	{ "timely", K_ONOFF, PF(timely), 0 },
	{ "op", K_STR, PF(op), 0 },
	{ "switch-json", K_STR, PF(switch_json), 0 },
	{ "quiet", K_TRUE, PF(quiet), 0 },
	{ "help", K_HELP, 0, 0, 0 },
};

#define NOPTS	(sizeof(sim_opts) / sizeof(sim_opts[0]))

/* @v, cut to the integer field's size (uint8_t, uint32_t/unsigned int or uint64_t). */
static void store_num(void *field, size_t size, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;
	uint8_t v8 = (uint8_t)v;

	if (size == sizeof(uint64_t))
		memcpy(field, &v, sizeof(v));
	else if (size == sizeof(uint32_t))
		memcpy(field, &v32, sizeof(v32));
	else
		memcpy(field, &v8, sizeof(v8));
}

/* One option with its argument @arg into @p (exits 2 on a bad value). */
static void sim_opt_apply(struct params *p, const struct sim_opt *o, const char *arg)
{
	void *field = (uint8_t *)p + o->off;
	char what[32];
	bool b;

	snprintf(what, sizeof(what), "--%s", o->name);
	switch (o->kind) {
	case K_NUM:
	case K_SRCAP:
		store_num(field, o->size, num(arg, what) * o->scale);
		if (o->kind == K_SRCAP && p->sr_log_cap &&
		    (p->sr_log_cap < TERN_QP_XPORT_MIN_LOG_CAP ||
		     p->sr_log_cap > TERN_QP_XPORT_MAX_LOG_CAP)) {
			fprintf(stderr, "tern-sim: --sr-log-cap: 0 or %d..%d\n",
				TERN_QP_XPORT_MIN_LOG_CAP, TERN_QP_XPORT_MAX_LOG_CAP);
			exit(2);
		}
		break;
	case K_ONOFF:
	case K_TRUE:
	case K_FALSE:
		b = o->kind == K_ONOFF ? onoff(arg) : o->kind != K_FALSE;
		memcpy(field, &b, sizeof(b));
		break;
	case K_DOUBLE:
		*(double *)field = atof(arg);
		break;
	case K_STR:
		*(const char **)field = arg;
		break;
	case K_CC:
		if (!cc_select(p, arg))
			cc_set(field, arg);
		break;
	case K_HELP:
		break;
	}
}

/* The command line into @p: -1 to run, or the exit status (--help, an unknown option). */
static int parse_args(struct params *p, int argc, char **argv)
{
	static struct option opts[NOPTS + 1];
	unsigned int i;
	int c;

	for (i = 0; i < NOPTS; i++) {
		bool has_arg = sim_opts[i].kind != K_TRUE && sim_opts[i].kind != K_FALSE &&
			       sim_opts[i].kind != K_HELP;

		opts[i] = (struct option){ sim_opts[i].name, has_arg, NULL, 256 + (int)i };
	}
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c < 256 || c >= 256 + (int)NOPTS) {
			usage(stderr);
			return 2;
		}
		if (sim_opts[c - 256].kind == K_HELP) {
			usage(stdout);
			return 0;
		}
		sim_opt_apply(p, &sim_opts[c - 256], optarg);
	}
	return -1;
}

/* Out of the ranges the run relies on (a NaN --steady-from passes, as it always has). */
static bool params_bad(const struct params *p)
{
	return !p->n || p->n > MAX_SENDERS || p->mtu < 1 || p->mtu > 5 || !p->msg_bytes ||
	       !p->outstanding || p->outstanding > 32 || !p->slots || p->slots > 32 ||
	       !p->sample_ns || !p->bin_ns || !p->duration_ns || p->steady_from < 0 ||
	       p->steady_from >= 1 || p->loss_ppm > 1000000 || p->ack_timeout > 31 ||
	       p->flow_bytes > (1ull << 40) ||
	       (uint64_t)p->n * p->slots * p->msg_bytes > (32u << 20);
}

/* --series and --switch-json, after the figures. */
static void write_outputs(struct sim *s)
{
	if (s->p.series)
		write_series(s);
	if (s->p.switch_json) {
		FILE *f = fopen(s->p.switch_json, "w");

		if (f) {
			tsw_dump_json(s->sw, f);
			fclose(f);
		}
	}
}

int main(int argc, char **argv)
{
	static struct sim sim;
	struct sim *s = &sim;
	struct params *p = &s->p;
	struct timespec a, b;
	int ret;

	params_default(p);
	ret = parse_args(p, argc, argv);
	if (ret >= 0)
		return ret;
	if (p->op && strcmp(p->op, "write") && strcmp(p->op, "read")) {
		fprintf(stderr, "tern-sim: --op write or read: %s\n", p->op);
		return 2;
	}
	p->read = p->op && !strcmp(p->op, "read");
	if (optind != argc || params_bad(p) || (p->read && p->outstanding > 16)) {
		usage(stderr);
		return 2;
	}
	s->nbins = (unsigned int)((p->duration_ns + p->bin_ns - 1) / p->bin_ns);
	s->rng = p->sw.seed ^ 0x5deece66dull;
	s->loss_rng = p->sw.seed ^ 0x10551055ull;
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (!sim_build(s)) {
		sim_free(s);
		return 1;
	}
	sim_run(s);
	clock_gettime(CLOCK_MONOTONIC, &b);
	report(s, (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	write_outputs(s);
	sim_free(s);
	return 0;
}
