/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One simulated tern host for the ns-3 device: the model and its minimal host driver
 * (interface and rules in tn_host.h). The host side does what tern-sim's does (sim.c:
 * sender_poll, nic_flush), per flow instead of per sender, with the same host driver code
 * (struct wstream, dcb_drv.h).
 */
#include <errno.h>
#include <stdlib.h>

#include <linux/tern/tern_dcb.h>

#include "dcb_drv.h"
#include "rdma_drv.h"
#include "tn_host.h"

/*
 * A QP pair is two ends, each kept by its host for reuse: a flow takes a sending end at its
 * source and a receiving end at its destination, connects them through MODIFY_QP
 * (RESET -> INIT -> RTR -> RTS) and, once it has completed, gives them back: the host's next
 * tn_flow_create (or tn_host_reclaim) checks the data the flow left at the receiving end and
 * modifies both QPs to RESET, as a driver recycling its QPs would. Nothing frees the fake
 * host's data region, so the ends keep their rings and buffers (a power of two bytes, the
 * largest a flow bound to the end may use).
 */
struct tn_txe {
	struct rqp qp;
	struct rcq cq;
	struct rmr mr;			/* slots x msg_bytes of the flow's pattern, at most */
	struct tn_flow *fl;		/* bound to this flow; NULL: free (QP in RESET) */
	unsigned int uses;		/* flows bound so far */
};

struct tn_rxe {
	struct rqp qp;
	struct rmr mr;			/* the destination slots */
	struct tn_flow *fl;
	unsigned int uses;
};

struct tn_flow {
	struct tn_host *src, *dst;
	struct tn_flow_params p;
	unsigned int seed;
	struct tn_txe *tx;		/* NULL once given back */
	struct tn_rxe *rx;		/* NULL once given back */
	struct wstream w;		/* the WRITEs and their counters */
	uint64_t start_ns, finish_ns;
	unsigned int first_error;
	bool started;
	bool data_ok;			/* the check made when the receiving end was given back */
};

struct tn_host {
	struct rdev *d;
	struct tn_env env;
	bool dcb_ok, cc_ok;
	bool rx_cq_made;
	struct rcq rx_cq;		/* the receiving QPs' (WRITEs complete nothing there) */
	struct tn_txe *tx[TN_MAX_FLOWS];	/* sending ends, in the order made */
	unsigned int ntx;
	struct tn_rxe *rx[TN_MAX_FLOWS];	/* receiving ends */
	unsigned int nrx;
	struct tn_flow **flows;		/* every flow this host sent, owned */
	size_t nflows, flows_cap;
	uint64_t resets;		/* MODIFY_QP to RESET that succeeded */
	uint64_t reset_fails;
	uint64_t nin;			/* flows this host received */
};

/* ---- parameters ------------------------------------------------------------------------- */

void tn_nic_params_default(struct tn_nic_params *p)
{
	struct tn_cc *c = &p->cc;
	struct tern_cc_params paper;

	memset(p, 0, sizeof(*p));
	p->link_mbps = 40000;
	p->pfc_mask = 1u << 3;
	p->dcqcn = true;
	p->rp_en = p->np_en = 1u << 3;
	/* The DCQCN paper's parameters, as tern-sim's */
	cc_params_paper(&paper);
	c->cnp_dscp = paper.cnp_dscp;
	c->cnp_prio = paper.cnp_prio;
#define CP(f) c->f = paper.f;
	TERN_CC_U32_FIELDS(CP)
#undef CP
}

bool tn_cc_set(struct tn_cc *c, const char *arg)
{
	static const struct {
		const char *name;
		size_t off;
	} f[] = {
#define F(x) { #x, offsetof(struct tn_cc, x) },
		TERN_CC_U32_FIELDS(F)
#undef F
	};
	const char *eq = arg ? strchr(arg, '=') : NULL;
	unsigned long long v;
	size_t len, i;
	char *end;

	if (!eq || !eq[1])
		return false;
	len = (size_t)(eq - arg);
	errno = 0;
	v = strtoull(eq + 1, &end, 0);
	if (errno || *end || v > UINT32_MAX)
		return false;
	if (len == 8 && !strncmp(arg, "cnp_dscp", 8) && v < 64) {
		c->cnp_dscp = (uint8_t)v;
		return true;
	}
	if (len == 8 && !strncmp(arg, "cnp_prio", 8) && v < 8) {
		c->cnp_prio = (uint8_t)v;
		return true;
	}
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (strlen(f[i].name) == len && !strncmp(arg, f[i].name, len)) {
			uint32_t u = (uint32_t)v;

			memcpy((uint8_t *)c + f[i].off, &u, sizeof(u));
			return true;
		}
	}
	return false;
}

void tn_flow_params_default(struct tn_flow_params *fp)
{
	memset(fp, 0, sizeof(*fp));
	fp->mtu = 5;
	fp->dscp = 26;
	fp->msg_bytes = 65536;
	fp->outstanding = 8;
	fp->slots = 4;
	fp->stop_ns = UINT64_MAX;
}

/* ---- the host side ------------------------------------------------------------------------ */

static uint64_t now(const struct tn_host *h)
{
	return h->env.now_ns(h->env.ctx);
}

static void flow_post(struct tn_flow *fl)
{
	if (now(fl->src) < fl->p.stop_ns)
		wstream_post(fl->src->d, &fl->w);
}

static void flow_poll(struct tn_flow *fl)
{
	const struct tn_flow_params *p = &fl->p;
	struct wc wc;
	bool any = false;

	while (wstream_poll(fl->src->d, &fl->w, &wc)) {
		any = true;
		if (wc.status != TERN_CQE_OK) {
			if (fl->w.errors == 1)
				fl->first_error = wc.status;
			continue;
		}
		if (p->total_bytes && fl->w.done_bytes >= p->total_bytes && !fl->finish_ns)
			fl->finish_ns = now(fl->src);
	}
	if (any && !fl->w.errors && fl->started)
		flow_post(fl);
}

/* After any entry into the model: run it, let the host side work, hand out the frames. */
static void settle(struct tn_host *h)
{
	struct fake *f = &h->d->f;
	unsigned int i, k;

	for (k = 0; k < 4; k++) {
		fk_run(f);
		for (i = 0; i < h->ntx; i++)
			if (h->tx[i]->fl && h->tx[i]->fl->started)
				flow_poll(h->tx[i]->fl);
		if (!f->kicks)
			break;
	}
	fk_run(f);
	for (i = 0; i < f->nframes; i++)
		if (f->frames[i].data)
			h->env.tx(h->env.ctx, f->frames[i].data, f->frames[i].len);
	fk_clear_frames(f);
}

/* ---- devices ------------------------------------------------------------------------------ */

static bool dcb_setup(struct tn_host *h, const struct tn_nic_params *p)
{
	const char *failed;

	return dcb_trust_dscp(h->d, p->pfc_mask, &failed) == TERN_CMD_OK;
}

static bool cc_setup(struct tn_host *h, const struct tn_nic_params *p)
{
	const struct tn_cc *c = &p->cc;
	struct tern_cc_params in;

	memset(&in, 0, sizeof(in));
	in.rp_en = p->dcqcn && !p->hpcc && !p->timely ? p->rp_en : 0;
	in.np_en = p->dcqcn && !p->hpcc && !p->timely ? p->np_en : 0;
	in.hpcc_en = p->hpcc ? p->rp_en : 0;
	in.timely_en = p->timely && !p->hpcc ? p->rp_en : 0;
	in.cnp_dscp = c->cnp_dscp;
	in.cnp_prio = c->cnp_prio;
#define CP(f) in.f = c->f;
	TERN_CC_U32_FIELDS(CP)
#undef CP
	return cc_params_set(h->d, &in) == TERN_CMD_OK;
}

struct tn_host *tn_host_create(unsigned int idx, const struct tn_nic_params *p,
			       const struct tn_env *env)
{
	struct fk_clock clk;
	struct tn_host *h;

	if (idx >= TN_MAX_HOSTS || !p || !p->link_mbps || !env || !env->now_ns ||
	    !env->timer_arm || !env->tx)
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->env = *env;
	clk.ctx = env->ctx;
	clk.now_ns = env->now_ns;
	clk.timer_arm = env->timer_arm;
	h->d = rdev_new_clock(idx, p->link_mbps, 0, &clk);	/* exact serialization */
	if (!h->d) {
		free(h);
		return NULL;
	}
	h->dcb_ok = dcb_setup(h, p);
	h->cc_ok = cc_setup(h, p);
	settle(h);
	return h;
}

void tn_host_destroy(struct tn_host *h)
{
	size_t i;

	if (!h)
		return;
	/* host-side bookkeeping only: the devices' memory goes with rdev_free */
	for (i = 0; i < h->ntx; i++) {
		qmem_free(&h->tx[i]->qp.sq);
		qmem_free(&h->tx[i]->qp.rq);
		qmem_free(&h->tx[i]->cq.mem);
		mr_release(&h->tx[i]->mr);
		free(h->tx[i]);
	}
	for (i = 0; i < h->nrx; i++) {
		qmem_free(&h->rx[i]->qp.sq);
		qmem_free(&h->rx[i]->qp.rq);
		mr_release(&h->rx[i]->mr);
		free(h->rx[i]);
	}
	for (i = 0; i < h->nflows; i++)
		free(h->flows[i]);
	free(h->flows);
	if (h->rx_cq_made)
		qmem_free(&h->rx_cq.mem);
	rdev_free(h->d);
	free(h);
}

void tn_host_mac(const struct tn_host *h, uint8_t mac[6])
{
	memcpy(mac, h->d->mac, 6);
}

bool tn_host_dcb_ok(const struct tn_host *h)
{
	return h->dcb_ok;
}

bool tn_host_cc_ok(const struct tn_host *h)
{
	return h->cc_ok;
}

bool tn_host_rx(struct tn_host *h, const void *frame, size_t len)
{
	bool ok;

	if (!len)
		return false;	/* a zero length means "retry later" to the model */
	ok = tern_model_rx_frame(h->d->f.m, frame, len) != 0;
	settle(h);
	return ok;
}

void tn_host_timer(struct tn_host *h)
{
	h->d->f.deadline = UINT64_MAX;
	tern_model_timer(h->d->f.m);
	settle(h);
}

static uint64_t pfc_field(const uint8_t *out, unsigned int prio, size_t field)
{
	return rd64(out + OFF(struct tern_cmd_pfc_stats_out, prio) +
		    prio * sizeof(struct tern_pfc_prio_stats) + field);
}

void tn_host_stats(struct tn_host *h, unsigned int prio, struct tn_nic_stats *st)
{
	uint8_t out[sizeof(struct tern_cmd_pfc_stats_out)];
	uint8_t rs[sizeof(struct tern_cmd_rdma_stats_out)];

	memset(st, 0, sizeof(*st));
	if (prio < 8 && rdev_cmd(h->d, TERN_CMD_QUERY_PFC_STATS, NULL, 0, out, sizeof(out),
				 NULL) == TERN_CMD_OK) {
		st->pfc_ok = true;
		st->rx_pause = pfc_field(out, prio, OFF(struct tern_pfc_prio_stats, rx_pause));
		st->tx_pause = pfc_field(out, prio, OFF(struct tern_pfc_prio_stats, tx_pause));
		st->rx_discards = pfc_field(out, prio,
					    OFF(struct tern_pfc_prio_stats, rx_discards));
	}
	if (rdev_stats(h->d, rs)) {
		st->rdma_ok = true;
		st->retrans = RSTAT(rs, retrans_pkts);
		st->ack_timeouts = RSTAT(rs, local_ack_timeout_err);
		st->cnp_sent = RSTAT(rs, np_cnp_sent);
		st->np_ecn_rx = RSTAT(rs, np_ecn_marked_roce_packets);
		st->cnp_handled = RSTAT(rs, rp_cnp_handled);
		st->cnp_ignored = RSTAT(rs, rp_cnp_ignored);
		st->rate_cuts = RSTAT(rs, rp_rate_decrease_events);
		st->rate_increases = RSTAT(rs, rp_rate_increase_events);
		st->int_echo_acks = RSTAT(rs, hpcc_int_echo_acks);
		st->hpcc_updates = RSTAT(rs, hpcc_window_updates);
		st->int_echoes_sent = RSTAT(rs, hpcc_int_echoes_sent);
		st->timely_samples = RSTAT(rs, timely_rtt_samples);
		st->timely_decreases = RSTAT(rs, timely_rate_decreases);
		st->timely_increases = RSTAT(rs, timely_rate_increases);
	}
	settle(h);
}

/* ---- flows -------------------------------------------------------------------------------- */

/*
 * A flow is done with its QP pair: it completed all its bytes or failed, and every WRITE it
 * posted has completed. The receiving end reads the sender's host-side counters: what an
 * application would learn from its peer by a message.
 */
static bool flow_over(const struct tn_flow *fl)
{
	return fl->started && fl->w.completed == fl->w.posted && (fl->finish_ns || fl->w.errors);
}

static bool end_reset(struct tn_host *h, struct rqp *qp)
{
	struct qpattr a;

	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_RESET;
	if (qp_modify(h->d, qp->qpn, TERN_QP_ATTR_STATE, &a, NULL) != TERN_CMD_OK) {
		h->reset_fails++;
		return false;
	}
	qp->sq_pi = 0;		/* RESET empties both queues */
	qp->rq_pi = 0;
	h->resets++;
	return true;
}

void tn_host_reclaim(struct tn_host *h)
{
	unsigned int i;

	for (i = 0; i < h->ntx; i++) {
		struct tn_txe *e = h->tx[i];

		if (e->fl && flow_over(e->fl) && end_reset(h, &e->qp)) {
			e->fl->tx = NULL;
			e->fl = NULL;
		}
	}
	for (i = 0; i < h->nrx; i++) {
		struct tn_rxe *e = h->rx[i];
		struct tn_flow *fl = e->fl;

		if (!fl || !flow_over(fl))
			continue;
		/* the slots are about to serve another flow: check them now */
		fl->data_ok = !fl->w.errors && wstream_data_ok(h->d, &e->mr, 0, &fl->w, fl->seed);
		if (end_reset(h, &e->qp)) {
			fl->rx = NULL;
			e->fl = NULL;
		}
	}
	settle(h);
}

void tn_host_qp_stats(struct tn_host *h, struct tn_qp_stats *st)
{
	unsigned int i;

	memset(st, 0, sizeof(*st));
	st->tx_ends = h->ntx;
	st->rx_ends = h->nrx;
	st->flows_sent = h->nflows;
	st->flows_received = h->nin;
	st->resets = h->resets;
	st->reset_fails = h->reset_fails;
	for (i = 0; i < h->ntx; i++) {
		st->binds += h->tx[i]->uses;
		if (h->tx[i]->fl)
			st->busy++;
		else if (qp_state(h->d, h->tx[i]->qp.qpn) != TERN_QPS_RESET)
			st->not_reset++;
	}
	for (i = 0; i < h->nrx; i++) {
		st->binds += h->rx[i]->uses;
		if (h->rx[i]->fl)
			st->busy++;
		else if (qp_state(h->d, h->rx[i]->qp.qpn) != TERN_QPS_RESET)
			st->not_reset++;
	}
	settle(h);
}

/* The fake host's data region (rings, MRs) still has @bytes (with their page rounding). */
static bool room(const struct tn_host *h, uint64_t bytes)
{
	uint64_t next = h->d->f.data_next ? h->d->f.data_next : FK_DATA_BASE;

	return FK_DATA_BASE + FK_DATA_SIZE - next >= bytes;
}

/* An end's buffer: the smallest power of two from 4 KiB that holds @buf. */
static uint64_t end_bytes(uint64_t buf)
{
	uint64_t b = 4096;

	while (b < buf)
		b <<= 1;
	return b;
}

/* @n bytes of @mr from 0: the pattern of @seed, or zeros. */
static void mr_pattern(struct rdev *d, const struct rmr *mr, uint64_t n, unsigned int seed,
		       bool zero)
{
	uint8_t b[4096];
	uint64_t off;
	size_t k, l;

	for (off = 0; off < n; off += l) {
		l = n - off < sizeof(b) ? (size_t)(n - off) : sizeof(b);
		for (k = 0; k < l; k++)
			b[k] = zero ? 0 : pat(seed, off + k);
		mr_write(d, mr, off, b, l);
	}
}

/* A free sending end whose buffer holds @buf bytes (the smallest), or a new one. */
static struct tn_txe *txe_get(struct tn_host *h, uint64_t buf, const struct connopt *o)
{
	struct tn_txe *e = NULL;
	unsigned int i;
	uint64_t len = end_bytes(buf);

	for (i = 0; i < h->ntx; i++)
		if (!h->tx[i]->fl && h->tx[i]->qp.qpn && h->tx[i]->mr.len >= buf &&
		    (!e || h->tx[i]->mr.len < e->mr.len))
			e = h->tx[i];
	if (e)
		return e;
	/* the buffer, its page list, the SQ, RQ and CQ rings (64 x 128, 4 x 64, 256 x 64 B) */
	if (h->ntx >= TN_MAX_FLOWS || !room(h, len + (256u << 10)))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	h->tx[h->ntx++] = e;	/* kept even if a command fails: qpn 0 marks it unusable */
	if (cq_create(h->d, &e->cq, o->cq_log, false) ||
	    qp_create(h->d, &e->qp, h->d->pdn, &e->cq, &e->cq, o->sq_log, o->sq_stride,
		      o->rq_log, o->rq_stride, 0, false) ||
	    mr_create(h->d, &e->mr, h->d->pdn, len, TERN_ACCESS_LOCAL_WRITE, 0)) {
		e->qp.qpn = 0;
		return NULL;
	}
	return e;
}

static struct tn_rxe *rxe_get(struct tn_host *h, uint64_t buf, const struct connopt *o)
{
	struct tn_rxe *e = NULL;
	unsigned int i;
	uint64_t len = end_bytes(buf);

	for (i = 0; i < h->nrx; i++)
		if (!h->rx[i]->fl && h->rx[i]->qp.qpn && h->rx[i]->mr.len >= buf &&
		    (!e || h->rx[i]->mr.len < e->mr.len))
			e = h->rx[i];
	if (e)
		return e;
	if (h->nrx >= TN_MAX_FLOWS || !room(h, len + (256u << 10)))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	h->rx[h->nrx++] = e;
	if (!h->rx_cq_made) {
		if (cq_create(h->d, &h->rx_cq, o->cq_log, false)) {
			e->qp.qpn = 0;
			return NULL;
		}
		h->rx_cq_made = true;
	}
	if (qp_create(h->d, &e->qp, h->d->pdn, &h->rx_cq, &h->rx_cq, o->sq_log, o->sq_stride,
		      o->rq_log, o->rq_stride, 0, false) ||
	    mr_create(h->d, &e->mr, h->d->pdn, len,
		      TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0)) {
		e->qp.qpn = 0;
		return NULL;
	}
	return e;
}

struct tn_flow *tn_flow_create(struct tn_host *src, struct tn_host *dst,
			       const struct tn_flow_params *fp, unsigned int pattern_seed)
{
	struct tn_flow **fls;
	struct tn_txe *tx;
	struct tn_rxe *rx;
	struct connopt o;
	struct tn_flow *fl;
	uint64_t buf;
	bool ok;

	if (!src || !dst || src == dst || !fp || fp->mtu < 1 || fp->mtu > 5 || fp->dscp > 63 ||
	    !fp->msg_bytes || fp->msg_bytes > (1u << 20) || !fp->outstanding ||
	    fp->outstanding > 32 || !fp->slots || fp->slots > 32)
		return NULL;
	buf = (uint64_t)fp->slots * fp->msg_bytes;
	if (buf > (8u << 20))
		return NULL;
	if (src->nflows == src->flows_cap) {
		size_t cap = src->flows_cap ? 2 * src->flows_cap : 64;

		fls = realloc(src->flows, cap * sizeof(*fls));
		if (!fls)
			return NULL;
		src->flows = fls;
		src->flows_cap = cap;
	}
	/* give back the QP pairs of flows that are over, then take one end at each host */
	tn_host_reclaim(src);
	tn_host_reclaim(dst);
	connopt_write_flow(&o, fp->mtu, fp->dscp);
	if (fp->sport)
		o.sport = fp->sport;
	tx = txe_get(src, buf, &o);
	rx = tx ? rxe_get(dst, buf, &o) : NULL;
	fl = tx && rx ? calloc(1, sizeof(*fl)) : NULL;
	ok = fl != NULL;
	if (ok) {
		/* a connection of a reused QP starts at other PSNs than the one before */
		o.psn[0] = (o.psn[0] + tx->uses * 0x9e3779u) & 0xffffff;
		o.psn[1] = (o.psn[1] + rx->uses * 0x7f4a7cu) & 0xffffff;
		ok = qp_connect(src->d, &tx->qp, dst->d, rx->qp.qpn, &o, 0) &&
		     qp_connect(dst->d, &rx->qp, src->d, tx->qp.qpn, &o, 1);
		if (!ok) {
			/* back to RESET, free for the next flow */
			end_reset(src, &tx->qp);
			end_reset(dst, &rx->qp);
			free(fl);
		}
	}
	settle(src);
	settle(dst);
	if (!ok)
		return NULL;
	fl->src = src;
	fl->dst = dst;
	fl->p = *fp;
	fl->seed = pattern_seed;
	fl->tx = tx;
	fl->rx = rx;
	tx->fl = fl;
	rx->fl = fl;
	if (rx->uses)
		mr_pattern(dst->d, &rx->mr, buf, 0, true);	/* no byte of the last flow */
	tx->uses++;
	rx->uses++;
	src->flows[src->nflows++] = fl;
	dst->nin++;
	mr_pattern(src->d, &tx->mr, buf, pattern_seed, false);
	fl->w = (struct wstream){
		.qp = &tx->qp, .cq = &tx->cq, .mr = &tx->mr, .raddr = rx->mr.iova,
		.rkey = rx->mr.key, .msg_bytes = fp->msg_bytes, .outstanding = fp->outstanding,
		.slots = fp->slots, .total_bytes = fp->total_bytes,
	};
	return fl;
}

void tn_flow_start(struct tn_flow *fl)
{
	if (fl->started)
		return;
	fl->started = true;
	fl->start_ns = now(fl->src);
	flow_post(fl);
	settle(fl->src);
}

void tn_flow_stats(const struct tn_flow *fl, struct tn_flow_stats *st)
{
	st->posted = fl->w.posted;
	st->completed = fl->w.completed;
	st->errors = fl->w.errors;
	st->done_bytes = fl->w.done_bytes;
	st->start_ns = fl->start_ns;
	st->finish_ns = fl->finish_ns;
	st->first_error_status = fl->first_error;
}

bool tn_flow_data_ok(struct tn_flow *fl)
{
	if (fl->w.errors)
		return false;
	if (!fl->rx)
		return fl->data_ok;
	return wstream_data_ok(fl->dst->d, &fl->rx->mr, 0, &fl->w, fl->seed);
}

uint32_t tn_flow_cc_rate(struct tn_flow *fl)
{
	uint8_t out[sizeof(struct tern_cmd_query_qp_out)];
	uint32_t r = 0;

	if (fl->tx && qp_query(fl->src->d, fl->tx->qp.qpn, out) == TERN_CMD_OK)
		r = rd32(out + OFF(struct tern_cmd_query_qp_out, cc_rate_mbps));
	settle(fl->src);
	return r;
}
