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

static void usage(void)
{
	fprintf(stderr, "usage: rdma-events [-d DEV] [-i IBPORT] -g GID_INDEX [-t SECONDS] "
		"port|srq-limit|cq-overrun\n");
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
	if (opt_gid < 0 || argc - optind != 1)
		usage();
	t_start = now_ms();
	dev_open(&d, opt_dev, opt_ibport, opt_gid);
	if (!strcmp(argv[optind], "port"))
		rc = run_port(&d);
	else if (!strcmp(argv[optind], "srq-limit"))
		rc = run_srq_limit(&d);
	else if (!strcmp(argv[optind], "cq-overrun"))
		rc = run_cq_overrun(&d);
	else
		usage();
	printf("%d checks, %d failed\n", checks_run, checks_failed);
	ibv_close_device(d.ctx);
	return rc;
}
