/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One simulated tern host for the ns-3 device: the model and its minimal host driver
 * (interface and rules in tn_host.h). The host side does what tern-sim's does (sim.c:
 * sender_poll, nic_flush), per flow instead of per sender, with the same host driver code
 * (struct wstream, dcb_drv.h).
 */
#include <errno.h>
#include <stdlib.h>

#include <tern/tern_dcb.h>

#include "dcb_drv.h"
#include "rdma_drv.h"
#include "tn_host.h"

struct tn_flow {
	struct tn_host *src, *dst;
	struct tn_flow_params p;
	unsigned int seed;
	struct rcq cq;
	struct rqp qp;
	struct rmr mr;			/* the sender's buffer: slots x msg_bytes of pattern */
	struct rqp rx_qp;		/* at the receiver */
	struct rmr rx_mr;		/* at the receiver: the destination slots */
	struct wstream w;		/* the WRITEs and their counters */
	uint64_t start_ns, finish_ns;
	unsigned int first_error;
	bool started;
};

struct tn_host {
	struct rdev *d;
	struct tn_env env;
	bool dcb_ok, cc_ok;
	bool rx_cq_made;
	struct rcq rx_cq;		/* the receiving QPs' (WRITEs complete nothing there) */
	struct tn_flow *out[TN_MAX_FLOWS];	/* flows this host sends, owned */
	unsigned int nout;
	unsigned int nin;		/* flows this host receives */
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
		for (i = 0; i < h->nout; i++)
			if (h->out[i]->started)
				flow_poll(h->out[i]);
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
	in.rp_en = p->dcqcn && !p->hpcc ? p->rp_en : 0;
	in.np_en = p->dcqcn && !p->hpcc ? p->np_en : 0;
	in.hpcc_en = p->hpcc ? p->rp_en : 0;
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
	unsigned int i;

	if (!h)
		return;
	for (i = 0; i < h->nout; i++) {
		struct tn_flow *fl = h->out[i];

		/* host-side bookkeeping only: the devices' memory goes with rdev_free */
		qmem_free(&fl->qp.sq);
		qmem_free(&fl->qp.rq);
		qmem_free(&fl->cq.mem);
		qmem_free(&fl->rx_qp.sq);
		qmem_free(&fl->rx_qp.rq);
		mr_release(&fl->mr);
		mr_release(&fl->rx_mr);
		free(fl);
	}
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
	}
	settle(h);
}

/* ---- flows -------------------------------------------------------------------------------- */

/* The fake host's data region (rings, MRs) still has @bytes (with their page rounding). */
static bool room(const struct tn_host *h, uint64_t bytes)
{
	uint64_t next = h->d->f.data_next ? h->d->f.data_next : FK_DATA_BASE;

	return FK_DATA_BASE + FK_DATA_SIZE - next >= bytes;
}

struct tn_flow *tn_flow_create(struct tn_host *src, struct tn_host *dst,
			       const struct tn_flow_params *fp, unsigned int pattern_seed)
{
	uint64_t buf;
	struct connopt o;
	struct tn_flow *fl;
	int st;

	if (!src || !dst || src == dst || !fp || fp->mtu < 1 || fp->mtu > 5 || fp->dscp > 63 ||
	    !fp->msg_bytes || fp->msg_bytes > (1u << 20) || !fp->outstanding ||
	    fp->outstanding > 32 || !fp->slots || fp->slots > 32 ||
	    src->nout >= TN_MAX_FLOWS || dst->nin >= TN_MAX_FLOWS)
		return NULL;
	buf = (uint64_t)fp->slots * fp->msg_bytes;
	/* the buffer, its page list, the SQ, RQ and CQ rings (64 x 128, 4 x 64, 256 x 64 B) */
	if (buf > (8u << 20) || !room(src, buf + (256u << 10)) || !room(dst, buf + (256u << 10)))
		return NULL;
	fl = calloc(1, sizeof(*fl));
	if (!fl)
		return NULL;
	fl->src = src;
	fl->dst = dst;
	fl->p = *fp;
	fl->seed = pattern_seed;
	connopt_write_flow(&o, fp->mtu, fp->dscp);
	if (fp->sport)
		o.sport = fp->sport;
	st = 0;
	if (!dst->rx_cq_made) {
		st = cq_create(dst->d, &dst->rx_cq, o.cq_log, false);
		dst->rx_cq_made = !st;
	}
	if (!st)
		st = cq_create(src->d, &fl->cq, o.cq_log, false);
	if (!st)
		st = qp_create(src->d, &fl->qp, src->d->pdn, &fl->cq, &fl->cq, o.sq_log,
			       o.sq_stride, o.rq_log, o.rq_stride, 0, false);
	if (!st)
		st = qp_create(dst->d, &fl->rx_qp, dst->d->pdn, &dst->rx_cq, &dst->rx_cq, o.sq_log,
			       o.sq_stride, o.rq_log, o.rq_stride, 0, false);
	if (!st)
		st = mr_create(src->d, &fl->mr, src->d->pdn, buf, TERN_ACCESS_LOCAL_WRITE, 0);
	if (!st)
		st = mr_create(dst->d, &fl->rx_mr, dst->d->pdn, buf,
			       TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0);
	if (!st && (!qp_connect(src->d, &fl->qp, dst->d, fl->rx_qp.qpn, &o, 0) ||
		    !qp_connect(dst->d, &fl->rx_qp, src->d, fl->qp.qpn, &o, 1)))
		st = -1;
	/* whatever was created stays with the devices; the host-side arrays go with the flow */
	src->out[src->nout++] = fl;
	dst->nin++;
	settle(src);
	settle(dst);
	if (st)
		return NULL;
	mr_fill(src->d, &fl->mr, pattern_seed);
	fl->w = (struct wstream){
		.qp = &fl->qp, .cq = &fl->cq, .mr = &fl->mr, .raddr = fl->rx_mr.iova,
		.rkey = fl->rx_mr.key, .msg_bytes = fp->msg_bytes, .outstanding = fp->outstanding,
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
	return !fl->w.errors && wstream_data_ok(fl->dst->d, &fl->rx_mr, 0, &fl->w, fl->seed);
}

uint32_t tn_flow_cc_rate(struct tn_flow *fl)
{
	uint8_t out[sizeof(struct tern_cmd_query_qp_out)];
	uint32_t r = 0;

	if (qp_query(fl->src->d, fl->qp.qpn, out) == TERN_CMD_OK)
		r = rd32(out + OFF(struct tern_cmd_query_qp_out, cc_rate_mbps));
	settle(fl->src);
	return r;
}
