// SPDX-License-Identifier: GPL-2.0
/*
 * rdma-atomic: RDMA atomics between hosts over RC queue pairs on RoCEv2, checked for
 * integrity and for the semantics the verbs specify.
 *
 *   server:  rdma-atomic -d DEV -g GIDX [-p PORT] [-n N] [-c CLIENTS] [-t SECONDS]
 *   client:  rdma-atomic -d DEV -g GIDX [-p PORT] [-n N] [-w WINDOW] [-t SECONDS] [-L] SERVER
 *
 * The server owns one 8-byte counter (0 at the start). Each of CLIENTS clients (default 2,
 * separate processes, running at the same time) does N fetch-and-adds of 1 on it, up to
 * WINDOW outstanding at once. The server then checks that the counter is exactly
 * CLIENTS * N and that the original values returned to all clients together are
 * 0 .. CLIENTS * N - 1, each exactly once (no atomic executed twice or lost, also when
 * requests were retransmitted); each client checks that the values it got are strictly
 * increasing.
 *
 * Then each client, on its own 8-byte words of the server's memory: compare-and-swap with
 * a wrong compare value (returns the current value, memory unchanged, checked with an RDMA
 * READ), with the right one (returns the old value, memory swapped), fetch-and-add across
 * bit 32 and wrapping at 2^64; an atomic at an address that is not 8-byte aligned (must
 * complete with IBV_WC_REM_INV_REQ_ERR, memory unchanged) and one on an MR registered
 * without IBV_ACCESS_REMOTE_ATOMIC (IBV_WC_REM_ACCESS_ERR, memory unchanged), each on a QP
 * of its own. Both sides check that the device reports atomic_cap other than
 * IBV_ATOMIC_NONE.
 *
 * -L: the wire loses frames (fault injection). The responder NAKs a misaligned or
 * unpermitted atomic and moves its QP to ERR; if that NAK is lost, the responder's QP in ERR
 * answers no retry and the requester completes with IBV_WC_RETRY_EXC_ERR instead, as the
 * spec allows. So under -L either status passes for those two, while the rest holds as
 * without it: the requester's QP ends in ERR and the memory is unchanged.
 *
 * Both sides print one line per check ("ok - what" / "not ok - what: why") and exit 0 when
 * every check passed, 1 when one failed, 2 when the program could not run (message on
 * stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"

#define MAX_CLIENTS	8
#define MAX_WINDOW	64
#define NQP		3	/* per client: fetch-and-adds and semantics, misaligned, no access */
#define QP_MAIN		0
#define QP_MISALIGNED	1
#define QP_NOACCESS	2

/* The server's memory (one page, MR with REMOTE_ATOMIC), offsets in bytes. */
#define OFF_COUNTER	0
#define OFF_SLOTS	512		/* + 64 * client: the client's compare-and-swap words */
#define OFF_MISALIGNED	1024		/* + 64 * client: an 8-byte word hit at offset +4 */
#define PAGE		4096
#define SLOT_INIT(i)	(0x0123456789abcdefull ^ ((uint64_t)(i) << 56))
#define CARRY_INIT	0x00000000ffffffffull
#define UNTOUCHED(i)	(0x5a5a5a5a00000000ull | (uint64_t)(i))

static const char *opt_dev;
static int opt_port = 18700, opt_gid = -1, opt_ibport = 1;
static int opt_n = 1000, opt_clients = 2, opt_window = 16, opt_timeout_s = 300;
static bool opt_lossy;

/* The remote error @want, or under -L also a retry exhaustion (see the top comment). */
static bool remote_error(enum ibv_wc_status st, enum ibv_wc_status want)
{
	return st == want || (opt_lossy && st == IBV_WC_RETRY_EXC_ERR);
}

static struct qp_opts atomic_opts(const struct dev *d, int depth)
{
	struct qp_opts o = {
		.max_send_wr = depth, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1,
		.rnr_retry = 7, .min_rnr_timer = 12, .timeout = 14,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};

	(void)d;
	return o;
}

static void long_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = opt_timeout_s };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void check_atomic_cap(const struct dev *d, const char *who)
{
	const char *cap = d->attr.atomic_cap == IBV_ATOMIC_HCA ? "IBV_ATOMIC_HCA" :
			  d->attr.atomic_cap == IBV_ATOMIC_GLOB ? "IBV_ATOMIC_GLOB" :
			  "IBV_ATOMIC_NONE";

	check(d->attr.atomic_cap != IBV_ATOMIC_NONE && d->attr.max_qp_rd_atom > 0 &&
	      d->attr.max_qp_init_rd_atom > 0,
	      "%s: %s reports atomic_cap %s, max_qp_rd_atom %d, max_qp_init_rd_atom %d", who,
	      ibv_get_device_name(d->ctx->device), cap, d->attr.max_qp_rd_atom,
	      d->attr.max_qp_init_rd_atom);
}

/* ----------------------------------------------------------------------------------------
 * Server
 */
struct client {
	int fd;
	struct ibv_qp *qp[NQP];
	uint64_t *vals;
	int nvals;
	int vals_ok;		/* strictly increasing */
	uint64_t slot_final;	/* what the client says its slot must hold at the end */
	uint64_t carry_final;
};

static int read_values(struct client *c, int idx)
{
	char line[MSG_MAX];
	int want, got = 0;

	oob_expect(c->fd, line, sizeof(line), "VALUES ");
	want = atoi(line + 7);
	if (want < 0 || want > opt_n)
		die("client %d announces %d values (N is %d)", idx, want, opt_n);
	c->vals = calloc(want ? want : 1, sizeof(*c->vals));
	if (!c->vals)
		die("out of memory");
	while (got < want) {
		char *p, *end;

		oob_expect(c->fd, line, sizeof(line), "V ");
		p = line + 2;
		for (;;) {
			unsigned long long v = strtoull(p, &end, 16);

			if (end == p)
				break;
			if (got == want)
				die("client %d sent more than %d values", idx, want);
			c->vals[got++] = v;
			p = end;
		}
	}
	c->nvals = got;
	c->vals_ok = 1;
	for (int i = 1; i < got; i++)
		if (c->vals[i] <= c->vals[i - 1])
			c->vals_ok = 0;
	return got;
}

static int run_server(void)
{
	struct client cl[MAX_CLIENTS] = { 0 };
	struct dev d;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr, *nmr;
	uint8_t *mem, *nmem;
	volatile uint64_t *counter;
	char line[MSG_MAX];
	uint64_t total = (uint64_t)opt_clients * opt_n;
	uint8_t *seen;
	int lfd, dup = 0, missing = 0, out_of_range = 0;

	dev_open(&d, opt_dev, opt_ibport, opt_gid);
	check_atomic_cap(&d, "server");
	pd = ibv_alloc_pd(d.ctx);
	cq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
	if (!pd || !cq)
		die("ibv_alloc_pd/ibv_create_cq: %m");
	if (posix_memalign((void **)&mem, PAGE, PAGE) || posix_memalign((void **)&nmem, PAGE, PAGE))
		die("out of memory");
	memset(mem, 0, PAGE);
	for (int i = 0; i < MAX_CLIENTS; i++) {
		((uint64_t *)(mem + OFF_SLOTS + 64 * i))[0] = SLOT_INIT(i);
		((uint64_t *)(mem + OFF_SLOTS + 64 * i))[1] = CARRY_INIT;
		((uint64_t *)(mem + OFF_MISALIGNED + 64 * i))[0] = UNTOUCHED(i);
		((uint64_t *)(mem + OFF_MISALIGNED + 64 * i))[1] = UNTOUCHED(i + 100);
		((uint64_t *)(nmem + 64 * i))[0] = UNTOUCHED(i + 200);
	}
	counter = (volatile uint64_t *)(mem + OFF_COUNTER);
	mr = ibv_reg_mr(pd, mem, PAGE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	/* REMOTE_READ and WRITE, but no REMOTE_ATOMIC */
	nmr = ibv_reg_mr(pd, nmem, PAGE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ);
	if (!mr || !nmr)
		die("ibv_reg_mr: %m");

	lfd = oob_listen(opt_port);
	for (int i = 0; i < opt_clients; i++) {
		struct qp_opts o = atomic_opts(&d, 16);
		struct client *c = &cl[i];

		c->fd = oob_accept(lfd, opt_timeout_s);
		long_timeouts(c->fd);
		oob_send(c->fd, "HELLO %d %d", i, opt_n);
		for (int q = 0; q < NQP; q++) {
			c->qp[q] = qp_create(&d, pd, cq, &o);
			if (qp_exchange_connect(&d, c->qp[q], &o, c->fd, 1))
				die("cannot connect QP %d of client %d", q, i);
		}
		oob_send(c->fd, "MR %" PRIx64 " %x %" PRIx64 " %x", (uint64_t)(uintptr_t)mem,
			 mr->rkey, (uint64_t)(uintptr_t)nmem, nmr->rkey);
	}
	/* every client is connected: let them start together */
	for (int i = 0; i < opt_clients; i++)
		oob_send(cl[i].fd, "GO");

	for (int i = 0; i < opt_clients; i++) {
		unsigned long long a, b;

		read_values(&cl[i], i);
		oob_expect(cl[i].fd, line, sizeof(line), "FINAL ");
		if (sscanf(line + 6, "%llx %llx", &a, &b) != 2)
			die("bad FINAL line from client %d: %s", i, line);
		cl[i].slot_final = a;
		cl[i].carry_final = b;
		oob_expect(cl[i].fd, line, sizeof(line), "END");
	}

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	check(*counter == total, "server: the counter is %" PRIu64 " after %d clients did %d "
	      "fetch-and-adds of 1 each (expected %" PRIu64 ")", (uint64_t)*counter, opt_clients,
	      opt_n, total);
	seen = calloc(total ? total : 1, 1);
	if (!seen)
		die("out of memory");
	for (int i = 0; i < opt_clients; i++)
		for (int k = 0; k < cl[i].nvals; k++) {
			uint64_t v = cl[i].vals[k];

			if (v >= total)
				out_of_range++;
			else if (seen[v]++)
				dup++;
		}
	for (uint64_t v = 0; v < total; v++)
		missing += !seen[v];
	check(!dup && !missing && !out_of_range, "server: the original values returned to the "
	      "clients are 0..%" PRIu64 ", each exactly once (%d duplicated, %d missing, %d out "
	      "of range)", total - 1, dup, missing, out_of_range);
	for (int i = 0; i < opt_clients; i++) {
		uint64_t *slot = (uint64_t *)(mem + OFF_SLOTS + 64 * i);
		uint64_t *mis = (uint64_t *)(mem + OFF_MISALIGNED + 64 * i);
		uint64_t *nw = (uint64_t *)(nmem + 64 * i);

		check(cl[i].nvals == opt_n && cl[i].vals_ok, "server: client %d's %d values are "
		      "strictly increasing", i, cl[i].nvals);
		check(slot[0] == cl[i].slot_final && slot[1] == cl[i].carry_final,
		      "server: client %d's compare-and-swap and carry words hold %" PRIx64 " and %"
		      PRIx64 " (the client expects %" PRIx64 " and %" PRIx64 ")", i, slot[0], slot[1],
		      cl[i].slot_final, cl[i].carry_final);
		check(mis[0] == UNTOUCHED(i) && mis[1] == UNTOUCHED(i + 100), "server: the words "
		      "around client %d's misaligned atomic are unchanged (%" PRIx64 " %" PRIx64 ")",
		      i, mis[0], mis[1]);
		check(*nw == UNTOUCHED(i + 200), "server: client %d's word in the MR without "
		      "REMOTE_ATOMIC is unchanged (%" PRIx64 ")", i, *nw);
	}
	for (int i = 0; i < opt_clients; i++) {
		oob_send(cl[i].fd, "BYE");
		for (int q = 0; q < NQP; q++)
			ibv_destroy_qp(cl[i].qp[q]);
		close(cl[i].fd);
		free(cl[i].vals);
	}
	close(lfd);
	free(seen);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(nmr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(d.ctx);
	printf("%d checks, %d failed\n", checks_run, checks_failed);
	return checks_failed ? 1 : 0;
}

/* ----------------------------------------------------------------------------------------
 * Client
 */
struct remote {
	uint64_t addr, naddr;
	uint32_t rkey, nrkey;
};

static int post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		       struct ibv_mr *lmr, uint64_t *result, uint64_t raddr, uint32_t rkey,
		       uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)result, .length = 8, .lkey = lmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(qp, &wr, &bad);
}

static int post_read(struct ibv_qp *qp, struct ibv_mr *lmr, uint64_t *to, uint64_t raddr,
		     uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)to, .length = 8, .lkey = lmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x4ead, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/* Why the last one_op() returned -1. */
static char op_err[128];

/* One operation, waited for: the completion status, or -1 (see op_err) when it could not be
 * posted or no completion came.
 */
static int one_op(struct ibv_cq *cq, int rc, struct ibv_wc *wc, const char *what)
{
	if (rc) {
		snprintf(op_err, sizeof(op_err), "%s: ibv_post_send failed: %s", what,
			 strerror(rc));
		return -1;
	}
	if (poll_one(cq, wc, opt_timeout_s * 1000) != 1) {
		snprintf(op_err, sizeof(op_err), "%s: no completion within %d s", what,
			 opt_timeout_s);
		return -1;
	}
	return wc->status;
}

static const char *op_status(int st)
{
	return st >= 0 ? ibv_wc_status_str(st) : op_err;
}

static uint64_t remote_read(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *lmr,
			    uint64_t *buf, uint64_t raddr, uint32_t rkey, const char *what)
{
	struct ibv_wc wc;
	int st;

	*buf = 0xdeaddeaddeaddeadull;
	st = one_op(cq, post_read(qp, lmr, buf, raddr, rkey), &wc, what);
	if (st != IBV_WC_SUCCESS && st >= 0)
		check(0, "%s: RDMA READ completed with %s", what, ibv_wc_status_str(st));
	return *buf;
}

static void send_values(int fd, const uint64_t *v, int n)
{
	char line[MSG_MAX];
	int len = 0;

	oob_send(fd, "VALUES %d", n);
	for (int i = 0; i < n; i++) {
		len += snprintf(line + len, sizeof(line) - len, "%s%" PRIx64, len ? " " : "", v[i]);
		if (len > 400 || i == n - 1) {
			oob_send(fd, "V %s", line);
			len = 0;
		}
	}
}

static int run_client(const char *host)
{
	struct dev d;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *lmr;
	struct ibv_qp *qp[NQP];
	struct remote r;
	struct ibv_wc wc;
	char line[MSG_MAX];
	uint64_t *res, *vals, slot, carry, v, slot_now, carry_now;
	int fd, idx, n, window = opt_window, posted = 0, done = 0, increasing = 1, bad = 0;
	int st, first_bad = -1;
	long t0;
	unsigned long long a, b;
	unsigned int rk, nrk;

	dev_open(&d, opt_dev, opt_ibport, opt_gid);
	pd = ibv_alloc_pd(d.ctx);
	cq = ibv_create_cq(d.ctx, 2 * MAX_WINDOW + 16, NULL, NULL, 0);
	res = calloc(MAX_WINDOW + 8, sizeof(*res));
	if (!pd || !cq || !res)
		die("ibv_alloc_pd/ibv_create_cq: %m");
	lmr = ibv_reg_mr(pd, res, (MAX_WINDOW + 8) * sizeof(*res), IBV_ACCESS_LOCAL_WRITE);
	if (!lmr)
		die("ibv_reg_mr: %m");
	fd = oob_connect(host, opt_port, 120);
	long_timeouts(fd);
	oob_expect(fd, line, sizeof(line), "HELLO ");
	if (sscanf(line + 6, "%d %d", &idx, &n) != 2 || idx < 0 || idx >= MAX_CLIENTS)
		die("bad HELLO from the server: %s", line);
	if (n != opt_n)
		die("the server runs -n %d, this client -n %d", n, opt_n);
	check_atomic_cap(&d, "client");
	for (int q = 0; q < NQP; q++) {
		struct qp_opts o = atomic_opts(&d, MAX_WINDOW + 8);

		qp[q] = qp_create(&d, pd, cq, &o);
		if (qp_exchange_connect(&d, qp[q], &o, fd, 0))
			die("cannot connect QP %d", q);
	}
	oob_expect(fd, line, sizeof(line), "MR ");
	if (sscanf(line + 3, "%llx %x %llx %x", &a, &rk, &b, &nrk) != 4)
		die("bad MR line from the server: %s", line);
	r.addr = a;
	r.rkey = rk;
	r.naddr = b;
	r.nrkey = nrk;
	oob_expect(fd, line, sizeof(line), "GO");

	/* --- N fetch-and-adds of 1, up to window outstanding ---------------------------- */
	vals = calloc(opt_n ? opt_n : 1, sizeof(*vals));
	if (!vals)
		die("out of memory");
	if (window < 1)
		window = 1;
	if (window > MAX_WINDOW)
		window = MAX_WINDOW;
	t0 = now_ms();
	while (done < opt_n) {
		while (posted < opt_n && posted - done < window) {
			int rc = post_atomic(qp[QP_MAIN], IBV_WR_ATOMIC_FETCH_AND_ADD, posted, lmr,
					     &res[posted % window], r.addr + OFF_COUNTER, r.rkey,
					     1, 0);
			if (rc)
				die("ibv_post_send (fetch-and-add %d): %s", posted, strerror(rc));
			posted++;
		}
		if (poll_one(cq, &wc, opt_timeout_s * 1000) != 1)
			die("fetch-and-add %d: no completion within %d s (%d of %d done)", done,
			    opt_timeout_s, done, opt_n);
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_FETCH_ADD ||
		    wc.wr_id != (uint64_t)done) {
			check(0, "client %d: fetch-and-add %d completed with %s, opcode %d, wr_id "
			      "%" PRIu64, idx, done, ibv_wc_status_str(wc.status), wc.opcode,
			      wc.wr_id);
			bad = 1;
			break;
		}
		vals[done] = res[done % window];
		if (done && vals[done] <= vals[done - 1] && increasing) {
			increasing = 0;
			first_bad = done;
		}
		done++;
	}
	if (!bad)
		check(1, "client %d: %d fetch-and-adds of 1 completed successfully, up to %d "
		      "outstanding (%.1f s)", idx, opt_n, window, (now_ms() - t0) / 1000.0);
	check(!bad && increasing, "client %d: the original values returned are strictly "
	      "increasing (%" PRIu64 " .. %" PRIu64 ")", idx, vals[0], vals[done ? done - 1 : 0]);
	if (!increasing)
		printf("# client %d: value %d is %" PRIu64 ", value %d was %" PRIu64 "\n", idx,
		       first_bad, vals[first_bad], first_bad - 1, vals[first_bad - 1]);
	send_values(fd, vals, done);
	if (bad)
		die("the fetch-and-add phase failed: QP %u is in %s", qp[QP_MAIN]->qp_num,
		    qp_state_str(qp_state(qp[QP_MAIN])));

	/* --- compare-and-swap and fetch-and-add semantics on this client's words --------- */
	slot = r.addr + OFF_SLOTS + 64 * idx;
	carry = slot + 8;
	v = SLOT_INIT(idx);
	slot_now = v;
	st = one_op(cq, post_atomic(qp[QP_MAIN], IBV_WR_ATOMIC_CMP_AND_SWP, 1, lmr, &res[0], slot,
				    r.rkey, v ^ 1, 0x1111), &wc, "compare-and-swap, wrong compare");
	check(st == IBV_WC_SUCCESS && wc.opcode == IBV_WC_COMP_SWAP && res[0] == v,
	      "client %d: compare-and-swap with a wrong compare value completes and returns the "
	      "current value %" PRIx64 " (got %s, %" PRIx64 ")", idx, v,
	      op_status(st), res[0]);
	res[1] = remote_read(qp[QP_MAIN], cq, lmr, &res[1], slot, r.rkey, "READ after CAS");
	check(res[1] == v, "client %d: ... and leaves memory unchanged (READ: %" PRIx64 ")", idx,
	      res[1]);
	st = one_op(cq, post_atomic(qp[QP_MAIN], IBV_WR_ATOMIC_CMP_AND_SWP, 2, lmr, &res[0], slot,
				    r.rkey, v, 0xfedcba9876543210ull), &wc,
		    "compare-and-swap, right compare");
	check(st == IBV_WC_SUCCESS && res[0] == v, "client %d: compare-and-swap with the right "
	      "compare value returns the old value %" PRIx64 " (got %" PRIx64 ")", idx, v, res[0]);
	res[1] = remote_read(qp[QP_MAIN], cq, lmr, &res[1], slot, r.rkey, "READ after CAS");
	check(res[1] == 0xfedcba9876543210ull, "client %d: ... and swaps memory to "
	      "fedcba9876543210 (READ: %" PRIx64 ")", idx, res[1]);
	slot_now = res[1] == 0xfedcba9876543210ull ? res[1] : slot_now;
	/* a second swap with the old compare value must now fail */
	st = one_op(cq, post_atomic(qp[QP_MAIN], IBV_WR_ATOMIC_CMP_AND_SWP, 3, lmr, &res[0], slot,
				    r.rkey, v, 0), &wc, "compare-and-swap, stale compare");
	check(st == IBV_WC_SUCCESS && res[0] == 0xfedcba9876543210ull, "client %d: repeating it "
	      "with the now stale compare value returns fedcba9876543210 (got %" PRIx64 ")", idx,
	      res[0]);
	st = one_op(cq, post_atomic(qp[QP_MAIN], IBV_WR_ATOMIC_FETCH_AND_ADD, 4, lmr, &res[0],
				    carry, r.rkey, 1, 0), &wc, "fetch-and-add across bit 32");
	res[1] = remote_read(qp[QP_MAIN], cq, lmr, &res[1], carry, r.rkey, "READ after add");
	check(st == IBV_WC_SUCCESS && res[0] == CARRY_INIT && res[1] == 0x100000000ull,
	      "client %d: fetch-and-add of 1 to ffffffff returns ffffffff and leaves 100000000 "
	      "(a 64-bit add; got %" PRIx64 ", memory %" PRIx64 ")", idx, res[0], res[1]);
	st = one_op(cq, post_atomic(qp[QP_MAIN], IBV_WR_ATOMIC_FETCH_AND_ADD, 5, lmr, &res[0],
				    carry, r.rkey, ~0ull, 0), &wc, "fetch-and-add wrapping");
	res[1] = remote_read(qp[QP_MAIN], cq, lmr, &res[1], carry, r.rkey, "READ after add");
	check(st == IBV_WC_SUCCESS && res[0] == 0x100000000ull && res[1] == CARRY_INIT,
	      "client %d: fetch-and-add of 2^64-1 wraps: returns 100000000, leaves ffffffff (got "
	      "%" PRIx64 ", memory %" PRIx64 ")", idx, res[0], res[1]);
	carry_now = res[1];

	/* --- errors, each on a QP of its own ----------------------------------------------- */
	st = one_op(cq, post_atomic(qp[QP_MISALIGNED], IBV_WR_ATOMIC_FETCH_AND_ADD, 6, lmr,
				    &res[0], r.addr + OFF_MISALIGNED + 64 * idx + 4, r.rkey, 1, 0),
		    &wc, "misaligned fetch-and-add");
	check(remote_error(st, IBV_WC_REM_INV_REQ_ERR), "client %d: a fetch-and-add at an "
	      "address 4 bytes off 8-byte alignment completes with IBV_WC_REM_INV_REQ_ERR%s "
	      "(got %s)", idx, opt_lossy ? " (or RETRY_EXC_ERR: lossy wire)" : "", op_status(st));
	check(qp_state(qp[QP_MISALIGNED]) == IBV_QPS_ERR, "client %d: ... and the misaligned "
	      "atomic's QP is in ERR (%s)", idx, qp_state_str(qp_state(qp[QP_MISALIGNED])));
	st = one_op(cq, post_atomic(qp[QP_NOACCESS], IBV_WR_ATOMIC_CMP_AND_SWP, 7, lmr, &res[0],
				    r.naddr + 64 * idx, r.nrkey, UNTOUCHED(idx + 200), 7), &wc,
		    "atomic without REMOTE_ATOMIC");
	check(remote_error(st, IBV_WC_REM_ACCESS_ERR), "client %d: a compare-and-swap on an MR "
	      "registered without IBV_ACCESS_REMOTE_ATOMIC completes with IBV_WC_REM_ACCESS_ERR%s "
	      "(got %s)", idx, opt_lossy ? " (or RETRY_EXC_ERR: lossy wire)" : "", op_status(st));
	check(qp_state(qp[QP_NOACCESS]) == IBV_QPS_ERR, "client %d: ... and its QP is in ERR "
	      "(%s)", idx, qp_state_str(qp_state(qp[QP_NOACCESS])));

	oob_send(fd, "FINAL %" PRIx64 " %" PRIx64, slot_now, carry_now);
	oob_send(fd, "END");
	oob_expect(fd, line, sizeof(line), "BYE");
	for (int q = 0; q < NQP; q++)
		ibv_destroy_qp(qp[q]);
	ibv_dereg_mr(lmr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(d.ctx);
	close(fd);
	free(vals);
	free(res);
	printf("%d checks, %d failed\n", checks_run, checks_failed);
	return checks_failed ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: rdma-atomic [-d DEV] [-i IBPORT] -g GID_INDEX [-p TCP_PORT] "
		"[-n N] [-c CLIENTS] [-w WINDOW] [-t SECONDS] [-L] [SERVER]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:i:g:p:n:c:w:t:L")) != -1) {
		switch (c) {
		case 'd': opt_dev = optarg; break;
		case 'i': opt_ibport = atoi(optarg); break;
		case 'g': opt_gid = atoi(optarg); break;
		case 'p': opt_port = atoi(optarg); break;
		case 'n': opt_n = atoi(optarg); break;
		case 'c': opt_clients = atoi(optarg); break;
		case 'w': opt_window = atoi(optarg); break;
		case 't': opt_timeout_s = atoi(optarg); break;
		case 'L': opt_lossy = true; break;
		default: usage();
		}
	}
	if (opt_gid < 0 || opt_n < 1 || opt_clients < 1 || opt_clients > MAX_CLIENTS ||
	    argc - optind > 1)
		usage();
	srand(getpid() ^ (unsigned int)now_ms());
	return optind < argc ? run_client(argv[optind]) : run_server();
}
