// SPDX-License-Identifier: GPL-2.0
/*
 * rdma-events: asynchronous events of an RDMA device, as applications see them through
 * ibv_get_async_event().
 *
 *   rdma-events -d DEV -g GIDX [-t SECONDS] port
 *	Prints "ready" once it listens for events, then waits (at most SECONDS, default 120)
 *	for the link to be taken down and brought back by someone else (the test harness):
 *	IBV_EVENT_PORT_ERR for the port with the port no longer ACTIVE, then
 *	IBV_EVENT_PORT_ACTIVE with the port ACTIVE again.
 *
 *   rdma-events -d DEV -g GIDX [-t SECONDS] srq-limit
 *	An RC QP of this process on a shared receive queue, fed by another QP over the
 *	device's loopback. 16 receives posted, the limit armed at 8 (ibv_modify_srq): no
 *	IBV_EVENT_SRQ_LIMIT_REACHED while 10 remain, one once fewer than 8 remain, the limit
 *	then reads 0 (disarmed) and no further event comes; every SEND landed through the SRQ.
 *
 *   rdma-events -d DEV -g GIDX [-t SECONDS] cq-overrun
 *	Two RC QPs of this process connected to each other (through the device's loopback).
 *	QP A's send CQ is created with 1 entry; A posts more signaled RDMA WRITEs than the CQ
 *	holds and nobody polls it. The verbs specify a CQ overrun as an error of the CQ
 *	(IBV_EVENT_CQ_ERR) that also puts the QPs completing to it into the error state
 *	(IBV_EVENT_QP_FATAL, QP in ERR); tern's interface does exactly that
 *	(TERN_EQE_CQ_ERROR/OVERFLOW, then TERN_QP_EV_FATAL).
 *
 *   rdma-events -d DEV -g GIDX [-t SECONDS] cq-moderation
 *	Completion-event moderation (ibv_modify_cq, IBV_CQ_ATTR_MODERATE). Two RC QPs of this
 *	process through the device's loopback; B's receive CQ has a completion channel.
 *	ibv_query_device_ex reports cq_mod_caps; values beyond them and an empty or unknown
 *	attr_mask are EINVAL. Count 4: B's CQ armed, 3 SENDs land (their send completions
 *	are in) and no event comes for 1 s; the 4th gives one. Period 4000 us alone: one SEND
 *	gives an event, not before 2 ms (a margin for the guest's clock). Count 8, then
 *	lowered to 2 while 2 completions wait: the event at once. 0/0: an event per arming
 *	again. All 9 receive completions in order, data intact.
 *
 *   rdma-events -d DEV -g GIDX [-t SECONDS] fatal
 *	A user of the device when it dies. Two RC QPs of this process through the device's
 *	loopback move a 4 KiB SEND (the context works), then "ready" is printed and someone
 *	else (the test harness) makes the device fail. Checks: IBV_EVENT_DEVICE_FATAL arrives;
 *	the objects of the dead context can still be destroyed and the context closed; the
 *	device comes back under the same name with its port ACTIVE and the GID; a new context
 *	on it moves a 4 KiB SEND intact.
 *
 *   rdma-events -d DEV -g GIDX contexts MAX EXPECT
 *	Opens DEV again and again (each ibv_open_device is a user context with its own
 *	doorbell page) until one is refused or MAX are open, counting the first. Checks: it
 *	was refused with EXPECT (an errno name: ENOSPC when the device's doorbell pages are
 *	gone, EAGAIN when an rdma cgroup's hca_handle limit is reached); after one context is
 *	closed another opens and works (ibv_alloc_pd). Prints "# contexts N".
 *
 * One line per check ("ok - what" / "not ok - what: why"), one "# event ..." line per
 * event received. Exit 0: every check passed, 1: one failed, 2: the program could not run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static const char *opt_dev;
static int opt_gid = -1, opt_ibport = 1, opt_timeout_s = 120;
static long t_start;

/* Waits up to timeout_ms for one async event; 1: got it (acknowledge it!), 0: none. */
static int next_event(struct ibv_context *ctx, struct ibv_async_event *ev, long timeout_ms)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };

	for (;;) {
		if (!ibv_get_async_event(ctx, ev))
			return 1;
		if (errno != EAGAIN)
			die("ibv_get_async_event: %m");
		if (timeout_ms <= 0)
			return 0;
		if (poll(&p, 1, timeout_ms) == 0)
			return 0;
		timeout_ms = 1;		/* woken: read it (or try once more) */
	}
}

static void nonblocking(struct ibv_context *ctx)
{
	int fl = fcntl(ctx->async_fd, F_GETFL);

	if (fl < 0 || fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK))
		die("fcntl(async_fd): %m");
}

static enum ibv_port_state port_state(struct dev *d)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(d->ctx, d->port, &pa))
		die("ibv_query_port: %m");
	return pa.state;
}

static int run_port(struct dev *d)
{
	struct ibv_async_event ev;
	long end = now_ms() + opt_timeout_s * 1000L;
	int err = 0, active = 0, others = 0;
	enum ibv_port_state st_err = IBV_PORT_NOP, st_active = IBV_PORT_NOP;

	nonblocking(d->ctx);
	printf("ready\n");
	fflush(stdout);
	while (!active && now_ms() < end) {
		if (!next_event(d->ctx, &ev, end - now_ms()))
			break;
		printf("# event %s port %d at %.1f s, port state now %s\n",
		       event_tag(ev.event_type), ev.element.port_num,
		       (now_ms() - t_start) / 1000.0, ibv_port_state_str(port_state(d)));
		if (ev.event_type == IBV_EVENT_PORT_ERR && ev.element.port_num == d->port &&
		    !err) {
			err = 1;
			st_err = port_state(d);
		} else if (ev.event_type == IBV_EVENT_PORT_ACTIVE &&
			   ev.element.port_num == d->port && err) {
			active = 1;
			st_active = port_state(d);
		} else if (ev.event_type != IBV_EVENT_GID_CHANGE) {
			others++;
		}
		ibv_ack_async_event(&ev);
	}
	check(err, "IBV_EVENT_PORT_ERR for port %d when the link went down", d->port);
	if (err)
		check(st_err != IBV_PORT_ACTIVE, "after IBV_EVENT_PORT_ERR the port is not ACTIVE "
		      "(%s)", ibv_port_state_str(st_err));
	check(active, "IBV_EVENT_PORT_ACTIVE for port %d after the link came back", d->port);
	if (active)
		check(st_active == IBV_PORT_ACTIVE, "after IBV_EVENT_PORT_ACTIVE the port is ACTIVE "
		      "(%s)", ibv_port_state_str(st_active));
	if (others)
		printf("# %d other events (listed above)\n", others);
	return checks_failed ? 1 : 0;
}

static int run_cq_overrun(struct dev *d)
{
	struct qp_opts o = {
		.max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1,
		.rnr_retry = 7, .min_rnr_timer = 12, .timeout = 14,
	};
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC };
	struct ibv_pd *pd;
	struct ibv_cq *small, *big;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	struct qp_dest da, db;
	struct ibv_async_event ev;
	uint8_t *buf;
	int cap, nposts, cq_err = 0, qp_fatal = 0, cq_other = 0;
	long end;
	enum ibv_qp_state st;

	nonblocking(d->ctx);
	pd = ibv_alloc_pd(d->ctx);
	small = ibv_create_cq(d->ctx, 1, NULL, NULL, 0);
	big = ibv_create_cq(d->ctx, 256, NULL, NULL, 0);
	buf = calloc(1, 4096);
	if (!pd || !small || !big || !buf)
		die("ibv_alloc_pd/ibv_create_cq: %m");
	cap = small->cqe;
	/* enough to overrun the CQ even if the device rounded its ring up to twice that */
	nposts = 2 * cap + 4;
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		die("ibv_reg_mr: %m");
	o.max_send_wr = nposts + 4;
	ia.send_cq = small;
	ia.recv_cq = big;
	ia.cap.max_send_wr = o.max_send_wr;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	a = ibv_create_qp(pd, &ia);
	if (!a)
		die("ibv_create_qp (%d send WRs): %m", o.max_send_wr);
	b = qp_create(d, pd, big, &o);
	da = (struct qp_dest){ .qpn = a->qp_num, .psn = 100, .gid = d->gid };
	db = (struct qp_dest){ .qpn = b->qp_num, .psn = 200, .gid = d->gid };
	if (qp_connect(d, a, &o, &da, &db) || qp_connect(d, b, &o, &db, &da))
		die("cannot connect the two QPs");

	for (int i = 0; i < nposts; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
		}, *bad;
		int rc;

		wr.wr.rdma.remote_addr = (uintptr_t)buf + 64 + 8 * i;
		wr.wr.rdma.rkey = mr->rkey;
		rc = ibv_post_send(a, &wr, &bad);
		if (rc)
			die("ibv_post_send %d of %d: %s", i, nposts, strerror(rc));
	}
	printf("# posted %d signaled WRITEs on QP %u; its send CQ holds %d\n", nposts,
	       a->qp_num, cap);
	end = now_ms() + opt_timeout_s * 1000L;
	while (!(cq_err && qp_fatal) && now_ms() < end) {
		/* once the CQ error is in, the QP event must follow promptly */
		long wait = cq_err ? 10000 : end - now_ms();

		if (!next_event(d->ctx, &ev, wait))
			break;
		printf("# event %s at %.1f s\n", event_tag(ev.event_type),
		       (now_ms() - t_start) / 1000.0);
		if (ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == small)
			cq_err = 1;
		else if (ev.event_type == IBV_EVENT_CQ_ERR)
			cq_other = 1;
		else if (ev.event_type == IBV_EVENT_QP_FATAL && ev.element.qp == a)
			qp_fatal = 1;
		ibv_ack_async_event(&ev);
	}
	check(cq_err, "IBV_EVENT_CQ_ERR on the overrun CQ (%d entries, %d completions due)",
	      cap, nposts);
	check(!cq_other, "no IBV_EVENT_CQ_ERR on the CQ that was not overrun");
	check(qp_fatal, "IBV_EVENT_QP_FATAL on the QP whose completions overran its CQ");
	st = qp_state(a);
	check(st == IBV_QPS_ERR, "that QP is in ERR (%s)", qp_state_str(st));
	st = qp_state(b);
	printf("# the peer QP is in %s\n", qp_state_str(st));

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(small);
	ibv_destroy_cq(big);
	ibv_dealloc_pd(pd);
	free(buf);
	return checks_failed ? 1 : 0;
}

static int post_send(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len, int id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* Sends n SENDs of 32 bytes from a to the SRQ QP; waits for both sides' completions. */
static int srq_sends(struct ibv_qp *a, struct ibv_cq *cq, struct ibv_mr *mr, uint8_t *buf,
		     int first, int n, uint32_t srq_qpn, int *recvs_ok)
{
	struct ibv_wc wc;
	int sends = 0, recvs = 0;

	for (int i = 0; i < n; i++) {
		memset(buf + 2048 + 32 * (first + i), first + i + 1, 32);
		if (post_send(a, mr, buf + 2048 + 32 * (first + i), 32, first + i))
			die("ibv_post_send: %m");
	}
	while (sends < n || recvs < n) {
		if (poll_one(cq, &wc, opt_timeout_s * 1000) != 1)
			return -1;
		if (wc.status != IBV_WC_SUCCESS) {
			printf("# completion %s (opcode %d)\n", ibv_wc_status_str(wc.status),
			       wc.opcode);
			return -1;
		}
		if (wc.opcode == IBV_WC_SEND) {
			sends++;
		} else {
			uint8_t *p = buf + 64 * wc.wr_id;

			recvs++;
			if (wc.opcode != IBV_WC_RECV || wc.qp_num != srq_qpn || wc.byte_len != 32 ||
			    p[0] != p[31] || !p[0])
				*recvs_ok = 0;
		}
	}
	return 0;
}

static int run_srq_limit(struct dev *d)
{
	struct qp_opts o = {
		.max_send_wr = 32, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1,
		.rnr_retry = 7, .min_rnr_timer = 12, .timeout = 14,
	};
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC };
	struct ibv_srq_attr sa;
	struct ibv_async_event ev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	struct qp_dest da, db;
	uint8_t *buf;
	int events = 0, late = 0, recvs_ok = 1, limit_after = -1;

	nonblocking(d->ctx);
	pd = ibv_alloc_pd(d->ctx);
	cq = ibv_create_cq(d->ctx, 128, NULL, NULL, 0);
	buf = calloc(1, 4096);
	if (!pd || !cq || !buf)
		die("ibv_alloc_pd/ibv_create_cq: %m");
	srq = ibv_create_srq(pd, &sia);
	if (!srq)
		die("ibv_create_srq (16 WRs): %m");
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr: %m");
	a = qp_create(d, pd, cq, &o);
	ia.send_cq = ia.recv_cq = cq;
	ia.srq = srq;
	ia.cap.max_send_wr = 4;
	ia.cap.max_send_sge = 1;
	b = ibv_create_qp(pd, &ia);
	if (!b)
		die("ibv_create_qp on the SRQ: %m");
	da = (struct qp_dest){ .qpn = a->qp_num, .psn = 300, .gid = d->gid };
	db = (struct qp_dest){ .qpn = b->qp_num, .psn = 400, .gid = d->gid };
	if (qp_connect(d, a, &o, &da, &db) || qp_connect(d, b, &o, &db, &da))
		die("cannot connect the two QPs");
	for (int i = 0; i < 16; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf + 64 * i, .length = 64,
				       .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad))
			die("ibv_post_srq_recv %d: %m", i);
	}
	memset(&sa, 0, sizeof(sa));
	sa.srq_limit = 8;
	if (ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT))
		die("ibv_modify_srq(limit 8): %m");
	memset(&sa, 0, sizeof(sa));
	limit_after = ibv_query_srq(srq, &sa) ? -1 : (int)sa.srq_limit;
	check(limit_after == 8, "ibv_query_srq: limit %d after arming it at 8 (max_wr %u)",
	      limit_after, sa.max_wr);
	limit_after = -1;

	if (srq_sends(a, cq, mr, buf, 0, 6, b->qp_num, &recvs_ok))
		die("the first 6 SENDs did not complete");
	while (next_event(d->ctx, &ev, 1000)) {
		printf("# event %s\n", event_tag(ev.event_type));
		events += ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED;
		ibv_ack_async_event(&ev);
	}
	check(!events, "no IBV_EVENT_SRQ_LIMIT_REACHED while 10 of 16 receives remain (limit 8)");

	if (srq_sends(a, cq, mr, buf, 6, 4, b->qp_num, &recvs_ok))
		die("SENDs 7..10 did not complete");
	while (next_event(d->ctx, &ev, events ? 1000 : 10000)) {
		printf("# event %s\n", event_tag(ev.event_type));
		if (ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq)
			events++;
		ibv_ack_async_event(&ev);
	}
	check(events == 1, "IBV_EVENT_SRQ_LIMIT_REACHED once when fewer than 8 remain (%d "
	      "events)", events);
	memset(&sa, 0, sizeof(sa));
	if (!ibv_query_srq(srq, &sa))
		limit_after = sa.srq_limit;
	check(limit_after == 0, "the limit is disarmed after the event (ibv_query_srq: %d)",
	      limit_after);

	if (srq_sends(a, cq, mr, buf, 10, 2, b->qp_num, &recvs_ok))
		die("SENDs 11..12 did not complete");
	while (next_event(d->ctx, &ev, 1000)) {
		printf("# event %s\n", event_tag(ev.event_type));
		late += ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED;
		ibv_ack_async_event(&ev);
	}
	check(!late, "no further limit event once disarmed (%d)", late);
	check(recvs_ok, "the 12 SENDs landed through the SRQ: receive completions name the QP "
	      "on the SRQ, 32 bytes each, data intact");

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_srq(srq);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	free(buf);
	return checks_failed ? 1 : 0;
}

/*
 * Waits up to timeout_ms for a completion event of @want on the (non-blocking) channel;
 * 1: got it (acknowledged), 0: none. Events of other CQs are counted in *other.
 */
static int cq_event_wait(struct ibv_comp_channel *ch, struct ibv_cq *want, long timeout_ms,
			 int *other)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	long end = now_ms() + timeout_ms;
	struct ibv_cq *cq;
	void *cq_ctx;

	for (;;) {
		long left;

		if (!ibv_get_cq_event(ch, &cq, &cq_ctx)) {
			ibv_ack_cq_events(cq, 1);
			if (cq == want)
				return 1;
			(*other)++;
			continue;
		}
		if (errno != EAGAIN)
			die("ibv_get_cq_event: %m");
		left = end - now_ms();
		if (left <= 0 || poll(&p, 1, left) == 0)
			return 0;
	}
}

static int moderate(struct ibv_cq *cq, uint32_t mask, uint16_t count, uint16_t period)
{
	struct ibv_modify_cq_attr a = {
		.attr_mask = mask, .moderate = { .cq_count = count, .cq_period = period },
	};

	return ibv_modify_cq(cq, &a);
}

/* @n SENDs of 32 bytes (ids from @first) from @a; waits for their send completions. */
static void mod_sends(struct ibv_qp *a, struct ibv_cq *scq, struct ibv_mr *mr, uint8_t *buf,
		      int first, int n)
{
	struct ibv_wc wc;

	for (int i = first; i < first + n; i++) {
		memset(buf + 2048 + 32 * i, i + 1, 32);
		if (post_send(a, mr, buf + 2048 + 32 * i, 32, i))
			die("ibv_post_send: %m");
	}
	for (int i = 0; i < n; i++) {
		if (poll_one(scq, &wc, opt_timeout_s * 1000) != 1)
			die("SEND %d of %d: no completion", first + i, first + n);
		if (wc.status != IBV_WC_SUCCESS)
			die("SEND %d: %s", first + i, ibv_wc_status_str(wc.status));
	}
}

/* Polls every receive completion on @mcq: SENDs @first.. in order, 32 bytes, intact. */
static int mod_recvs(struct ibv_cq *mcq, uint8_t *buf, int first, int *ok)
{
	struct ibv_wc wc;
	int n = 0;

	while (ibv_poll_cq(mcq, 1, &wc) == 1) {
		uint8_t *p = buf + 64 * wc.wr_id;

		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
		    wc.wr_id != (uint64_t)(first + n) || wc.byte_len != 32 ||
		    p[0] != first + n + 1 || p[31] != first + n + 1)
			*ok = 0;
		n++;
	}
	return n;
}

static int run_cq_moderation(struct dev *d)
{
	struct qp_opts o = {
		.max_send_wr = 32, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1,
		.rnr_retry = 7, .min_rnr_timer = 12, .timeout = 14,
	};
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC };
	struct ibv_device_attr_ex dx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *mcq;
	struct ibv_pd *pd;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	struct qp_dest da, db;
	uint8_t *buf;
	int rc, got, n, fl, other = 0, ok = 1, next = 0;
	uint32_t maxc, maxp;
	long t0, dt;

	memset(&dx, 0, sizeof(dx));
	if (ibv_query_device_ex(d->ctx, NULL, &dx))
		die("ibv_query_device_ex: %m");
	maxc = dx.cq_mod_caps.max_cq_count;
	maxp = dx.cq_mod_caps.max_cq_period;
	check(maxc >= 8 && maxp >= 4000, "ibv_query_device_ex: cq_mod_caps: up to %u CQEs, "
	      "%u us", maxc, maxp);
	if (maxc < 8 || maxp < 4000)
		return 1;
	pd = ibv_alloc_pd(d->ctx);
	ch = ibv_create_comp_channel(d->ctx);
	if (!pd || !ch)
		die("ibv_alloc_pd/ibv_create_comp_channel: %m");
	fl = fcntl(ch->fd, F_GETFL);
	if (fl < 0 || fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK))
		die("fcntl(channel): %m");
	scq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	mcq = ibv_create_cq(d->ctx, 64, NULL, ch, 0);
	buf = calloc(1, 4096);
	if (!scq || !mcq || !buf)
		die("ibv_create_cq: %m");
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr: %m");
	a = qp_create(d, pd, scq, &o);
	ia.send_cq = scq;
	ia.recv_cq = mcq;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 32;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	b = ibv_create_qp(pd, &ia);
	if (!b)
		die("ibv_create_qp: %m");
	da = (struct qp_dest){ .qpn = a->qp_num, .psn = 500, .gid = d->gid };
	db = (struct qp_dest){ .qpn = b->qp_num, .psn = 600, .gid = d->gid };
	if (qp_connect(d, a, &o, &da, &db) || qp_connect(d, b, &o, &db, &da))
		die("cannot connect the two QPs");
	for (int i = 0; i < 24; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf + 64 * i, .length = 64,
				       .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_recv(b, &wr, &bad))
			die("ibv_post_recv %d: %m", i);
	}

	rc = moderate(mcq, IBV_CQ_ATTR_MODERATE, maxc + 1, 0);
	check(rc == EINVAL, "ibv_modify_cq: a count of %u (beyond %u) is EINVAL (%s)", maxc + 1,
	      maxc, strerror(rc));
	rc = moderate(mcq, IBV_CQ_ATTR_MODERATE, 0, maxp + 1);
	check(rc == EINVAL, "ibv_modify_cq: a period of %u us (beyond %u) is EINVAL (%s)",
	      maxp + 1, maxp, strerror(rc));
	rc = moderate(mcq, 0, 4, 0);
	check(rc == EINVAL, "ibv_modify_cq: an empty attr_mask is EINVAL (%s)", strerror(rc));
	rc = moderate(mcq, IBV_CQ_ATTR_RESERVED, 4, 0);
	check(rc == EINVAL, "ibv_modify_cq: an unknown attr_mask bit is EINVAL (%s)",
	      strerror(rc));

	/* by count */
	rc = moderate(mcq, IBV_CQ_ATTR_MODERATE, 4, 0);
	check(rc == 0, "ibv_modify_cq: count 4, no period (%s)", strerror(rc));
	if (ibv_req_notify_cq(mcq, 0))
		die("ibv_req_notify_cq: %m");
	mod_sends(a, scq, mr, buf, next, 3);
	got = cq_event_wait(ch, mcq, 1000, &other);
	check(!got, "count 4: no completion event in 1 s after 3 receives landed");
	mod_sends(a, scq, mr, buf, next + 3, 1);
	if (!got)
		got = cq_event_wait(ch, mcq, opt_timeout_s * 1000L, &other);
	check(got, "count 4: one event once the 4th landed");
	n = mod_recvs(mcq, buf, next, &ok);
	check(n == 4, "count 4: the CQ holds the 4 receive completions (%d)", n);
	next += n;

	/* by time */
	rc = moderate(mcq, IBV_CQ_ATTR_MODERATE, 0, 4000);
	check(rc == 0, "ibv_modify_cq: period 4000 us, no count (%s)", strerror(rc));
	if (ibv_req_notify_cq(mcq, 0))
		die("ibv_req_notify_cq: %m");
	t0 = now_ms();
	mod_sends(a, scq, mr, buf, next, 1);
	got = cq_event_wait(ch, mcq, opt_timeout_s * 1000L, &other);
	dt = now_ms() - t0;
	check(got && dt >= 2, "period 4000 us: one completion event for one receive, %ld ms "
	      "after the SEND was posted (not before 2 ms)", dt);
	n = mod_recvs(mcq, buf, next, &ok);
	check(n == 1, "period 4000 us: the CQ holds the receive completion (%d)", n);
	next += n;

	/* new bounds reach an event already waiting */
	rc = moderate(mcq, IBV_CQ_ATTR_MODERATE, 8, 0);
	check(rc == 0, "ibv_modify_cq: count 8 (%s)", strerror(rc));
	if (ibv_req_notify_cq(mcq, 0))
		die("ibv_req_notify_cq: %m");
	mod_sends(a, scq, mr, buf, next, 2);
	got = cq_event_wait(ch, mcq, 1000, &other);
	check(!got, "count 8: no event in 1 s for 2 receives");
	rc = moderate(mcq, IBV_CQ_ATTR_MODERATE, 2, 0);
	if (!got)
		got = cq_event_wait(ch, mcq, opt_timeout_s * 1000L, &other);
	check(rc == 0 && got, "count lowered to 2 while 2 wait: the event comes (%s)",
	      strerror(rc));
	n = mod_recvs(mcq, buf, next, &ok);
	check(n == 2, "the CQ holds the 2 receive completions (%d)", n);
	next += n;

	/* moderation off again */
	rc = moderate(mcq, IBV_CQ_ATTR_MODERATE, 0, 0);
	check(rc == 0, "ibv_modify_cq: 0/0, no moderation (%s)", strerror(rc));
	for (int k = 0; k < 2; k++) {
		if (ibv_req_notify_cq(mcq, 0))
			die("ibv_req_notify_cq: %m");
		mod_sends(a, scq, mr, buf, next, 1);
		got = cq_event_wait(ch, mcq, opt_timeout_s * 1000L, &other);
		check(got, "0/0: an event for receive %d after arming", next);
		n = mod_recvs(mcq, buf, next, &ok);
		next += n;
	}
	check(next == 9 && ok, "9 receive completions in order, 32 bytes each, data intact "
	      "(%d)", next);
	check(!other, "no completion event for another CQ (%d)", other);

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(mcq);
	ibv_destroy_comp_channel(ch);
	ibv_dealloc_pd(pd);
	free(buf);
	return checks_failed ? 1 : 0;
}

/*
 * Two RC QPs of one context through the device's loopback; one SEND of 4 KiB with a pattern
 * that depends on @seed, received and compared. Returns 0 when the bytes arrived intact
 * with both completions successful; the objects are destroyed either way.
 */
static int loopback_send(struct dev *d, int seed)
{
	struct qp_opts o = {
		.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1,
		.rnr_retry = 7, .min_rnr_timer = 12, .timeout = 14,
	};
	struct ibv_pd *pd = ibv_alloc_pd(d->ctx);
	struct ibv_cq *cq = ibv_create_cq(d->ctx, 16, NULL, NULL, 0);
	uint8_t *buf = calloc(1, 8192);
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	struct qp_dest da, db;
	struct ibv_wc wc;
	int sent = 0, recvd = 0, bad = 0;

	if (!pd || !cq || !buf)
		die("ibv_alloc_pd/ibv_create_cq: %m");
	mr = ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr: %m");
	a = qp_create(d, pd, cq, &o);
	b = qp_create(d, pd, cq, &o);
	da = (struct qp_dest){ .qpn = a->qp_num, .psn = 700, .gid = d->gid };
	db = (struct qp_dest){ .qpn = b->qp_num, .psn = 800, .gid = d->gid };
	if (qp_connect(d, a, &o, &da, &db) || qp_connect(d, b, &o, &db, &da))
		die("cannot connect the two QPs");
	for (int i = 0; i < 4096; i++)
		buf[i] = (uint8_t)(i * 13 + seed);
	{
		struct ibv_sge sge = { .addr = (uintptr_t)buf + 4096, .length = 4096,
				       .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *badwr;

		if (ibv_post_recv(b, &wr, &badwr))
			die("ibv_post_recv: %m");
	}
	if (post_send(a, mr, buf, 4096, 2))
		die("ibv_post_send: %m");
	while (sent + recvd < 2) {
		if (poll_one(cq, &wc, 10000) != 1) {
			printf("# no completion within 10 s\n");
			bad = 1;
			break;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			printf("# completion %s (wr_id %llu)\n", ibv_wc_status_str(wc.status),
			       (unsigned long long)wc.wr_id);
			bad = 1;
		}
		if (wc.wr_id == 2)
			sent = 1;
		else
			recvd = 1;
	}
	if (!bad && memcmp(buf, buf + 4096, 4096)) {
		printf("# the received bytes differ from the sent ones\n");
		bad = 1;
	}
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	free(buf);
	return bad ? -1 : 0;
}

/* Is @name listed with its port ACTIVE and a non-zero GID at opt_gid? */
static int device_back(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr pa;
	union ibv_gid gid, zero = {};
	int n, back = 0;

	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		return 0;
	back = !ibv_query_port(ctx, opt_ibport, &pa) && pa.state == IBV_PORT_ACTIVE &&
	       !ibv_query_gid(ctx, opt_ibport, opt_gid, &gid) && memcmp(&gid, &zero, sizeof(gid));
	ibv_close_device(ctx);
	return back;
}

static int run_fatal(struct dev *d)
{
	char name[IBV_SYSFS_NAME_MAX];
	struct ibv_async_event ev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct dev nd;
	long end = now_ms() + opt_timeout_s * 1000L, t_fatal = -1, t_back = -1;
	int fatal = 0, others = 0, back = 0, rc;
	void *buf = calloc(1, 4096);

	snprintf(name, sizeof(name), "%s", ibv_get_device_name(d->ctx->device));
	nonblocking(d->ctx);
	check(loopback_send(d, 1) == 0, "before the failure: a 4 KiB SEND through %s's loopback "
	      "arrives intact", name);
	/* objects the user still holds when the device dies */
	pd = ibv_alloc_pd(d->ctx);
	cq = ibv_create_cq(d->ctx, 16, NULL, NULL, 0);
	if (!pd || !cq || !buf)
		die("ibv_alloc_pd/ibv_create_cq: %m");
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr: %m");
	printf("ready\n");
	fflush(stdout);
	while (!fatal && now_ms() < end) {
		if (!next_event(d->ctx, &ev, end - now_ms()))
			break;
		printf("# event %s at %.1f s\n", event_tag(ev.event_type),
		       (now_ms() - t_start) / 1000.0);
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL) {
			fatal = 1;
			t_fatal = now_ms();
		} else {
			others++;
		}
		ibv_ack_async_event(&ev);
	}
	check(fatal, "IBV_EVENT_DEVICE_FATAL when the device failed");
	if (!fatal)
		return 1;
	/* the kernel may have released them already: destroying what is left must still work */
	rc = ibv_dereg_mr(mr);
	rc = rc ? rc : ibv_destroy_cq(cq);
	rc = rc ? rc : ibv_dealloc_pd(pd);
	check(rc == 0, "after the failure the dead context's MR, CQ and PD are destroyed (%s)",
	      strerror(rc));
	free(buf);
	rc = ibv_close_device(d->ctx);
	d->ctx = NULL;
	check(rc == 0, "the dead context is closed (rc %d)", rc);
	while (!(back = device_back(name)) && now_ms() < end)
		usleep(200 * 1000);
	if (back)
		t_back = now_ms();
	check(back, "%s comes back with port %d ACTIVE and GID %d set (%.1f s after the event)",
	      name, opt_ibport, opt_gid, back ? (t_back - t_fatal) / 1000.0 : -1.0);
	if (!back)
		return 1;
	dev_open(&nd, name, opt_ibport, opt_gid);
	check(loopback_send(&nd, 2) == 0, "after the recovery a new user's 4 KiB SEND through "
	      "the loopback arrives intact");
	ibv_close_device(nd.ctx);
	if (others)
		printf("# %d other events (listed above)\n", others);
	return checks_failed ? 1 : 0;
}

static int run_contexts(struct dev *d, int max, const char *expect)
{
	struct ibv_context **ctx = calloc(max, sizeof(*ctx));
	struct ibv_device **list;
	struct ibv_device *dev = d->ctx->device;
	struct ibv_pd *pd;
	int n = 1, err = 0, n_dev;

	list = ibv_get_device_list(&n_dev);
	if (!ctx || !list)
		die("calloc/ibv_get_device_list: %m");
	for (int i = 0; i < n_dev; i++)
		if (!strcmp(ibv_get_device_name(list[i]), ibv_get_device_name(dev)))
			dev = list[i];
	while (n < max) {
		ctx[n] = ibv_open_device(dev);
		if (!ctx[n]) {
			err = errno;
			break;
		}
		n++;
	}
	printf("# contexts %d, then %s\n", n, err ? strerrorname_np(err) : "none refused");
	check(err && !strcmp(strerrorname_np(err), expect), "opening %s again and again: "
	      "refused with %s after %d contexts (%s expected)", ibv_get_device_name(dev),
	      err ? strerrorname_np(err) : "nothing", n, expect);
	if (n > 1) {
		ibv_close_device(ctx[n - 1]);
		ctx[n - 1] = ibv_open_device(dev);
		pd = ctx[n - 1] ? ibv_alloc_pd(ctx[n - 1]) : NULL;
		check(pd != NULL, "with one of them closed, another opens and allocates a PD (%s)",
		      pd ? "ok" : strerror(errno));
		if (pd)
			ibv_dealloc_pd(pd);
	}
	for (int i = 1; i < n; i++)
		if (ctx[i])
			ibv_close_device(ctx[i]);
	ibv_free_device_list(list);
	free(ctx);
	return checks_failed ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: rdma-events [-d DEV] [-i IBPORT] -g GID_INDEX [-t SECONDS] "
		"port|srq-limit|cq-overrun|cq-moderation|fatal|contexts MAX ERRNO\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct dev d;
	int c, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:i:g:t:")) != -1) {
		switch (c) {
		case 'd': opt_dev = optarg; break;
		case 'i': opt_ibport = atoi(optarg); break;
		case 'g': opt_gid = atoi(optarg); break;
		case 't': opt_timeout_s = atoi(optarg); break;
		default: usage();
		}
	}
	if (opt_gid < 0 || argc - optind < 1 ||
	    argc - optind != (strcmp(argv[optind], "contexts") ? 1 : 3))
		usage();
	t_start = now_ms();
	dev_open(&d, opt_dev, opt_ibport, opt_gid);
	if (!strcmp(argv[optind], "port"))
		rc = run_port(&d);
	else if (!strcmp(argv[optind], "srq-limit"))
		rc = run_srq_limit(&d);
	else if (!strcmp(argv[optind], "cq-overrun"))
		rc = run_cq_overrun(&d);
	else if (!strcmp(argv[optind], "cq-moderation"))
		rc = run_cq_moderation(&d);
	else if (!strcmp(argv[optind], "fatal"))
		rc = run_fatal(&d);
	else if (!strcmp(argv[optind], "contexts"))
		rc = run_contexts(&d, atoi(argv[optind + 1]), argv[optind + 2]);
	else
		usage();
	printf("%d checks, %d failed\n", checks_run, checks_failed);
	if (d.ctx)
		ibv_close_device(d.ctx);
	return rc;
}
