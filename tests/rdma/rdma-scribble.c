// SPDX-License-Identifier: GPL-2.0
/*
 * rdma-scribble: a hostile user of tern's kernel-bypass queues. The send, receive and
 * completion rings, the doorbell records and the doorbell (UAR) page that the provider
 * maps into a process are that process's memory: whatever it writes there reaches the
 * device (the model, host code inside QEMU) as input. This program posts valid work and,
 * at the same time, scribbles on all of it, for a bounded time; the guest test
 * (tests/guest/verbs.t) runs it as an unprivileged user beside another process that moves
 * data, and checks that the other's data arrive intact, QEMU lives and the kernel stays
 * clean.
 *
 *   rdma-scribble -d DEV -g GIDX [-i IBPORT] [-T SECONDS] [-I ITERS] [-s SEED]
 *
 * It runs rounds until SECONDS pass (default 20) or SIGTERM/SIGINT arrives. Each round
 * creates two CQs (a "good" one and a hostile one), an SRQ, an RC QP pair A <-> B connected
 * through the device's loopback (B receives from the SRQ), an RC QP R connected to a QPN
 * that nobody has (its SENDs are retransmitted until the retry count runs out) and a UD QP
 * U sending to itself through an address handle; it finds their rings, then runs ITERS
 * iterations (default 300) of randomly chosen actions, polling both CQs each time:
 *   - valid traffic: A SENDs and RDMA WRITEs to B, the SRQ refilled;
 *   - A's send WQE rewritten right after posting (opcode, flags, inline length, num_sge,
 *     the SGE's address/length/lkey, remote address and rkey, the whole slot), the SQ
 *     doorbell rung again with the real or a random producer index;
 *   - R's SEND rewritten after the device has read and sent it (1-8 ms later, while it is
 *     being retransmitted): its length, SGE, inline flag and length, opcode; R reset and
 *     reconnected when it reaches ERR;
 *   - U's UD WQE rewritten (the address vector, the destination QPN and Q_Key, the rest);
 *   - receive WQEs written into A's RQ and the SRQ, and their doorbell records set to
 *     random producer indexes (near the real one and far beyond the depth);
 *   - random CQEs written into both CQ rings, their consumer-index records set to random
 *     values, and CQ doorbells (arming) rung with random consumer indexes;
 *   - the UAR doorbells rung with its own QPNs and CQs (arming) and random indexes, with
 *     QPNs near its own and any QPN, CQN and SRQN the device may have handed out (other
 *     processes' objects: the verbs tell no CQN or SRQN), with random 64-bit values at
 *     the four doorbell offsets and at random offsets of the page, and with 32-bit writes;
 *   - SENDs and receives whose SGE points outside the MR, at unmapped memory, or carries the
 *     lkey of a deregistered MR or a random one (and at the doorbell page, should the kernel
 *     let ibv_reg_mr register it: it must refuse, and the program says which it did).
 * Its own QPs and CQs go to error and its completions are garbage: it counts what it sees
 * and goes on; every round destroys its objects and starts again.
 *
 * Finding the rings. The provider's structures (providers/tern/tern.h) need rdma-core's
 * internal headers, which Debian's libibverbs-dev does not ship, so the rings are found by
 * fingerprint instead: a fresh queue's first WQE lands at the start of its page-aligned
 * anonymous mapping (providers/tern: tern_buf_alloc), so a WQE posted with a random wr_id
 * is found by scanning the process's private anonymous mappings (/proc/self/maps; only
 * mapped, readable ones) for a page that starts with that wr_id at the WQE layout's offset
 * (include/linux/tern/tern_rdma.h); the second WQE gives the stride, the depth is what
 * ibv_create_* reported, and a doorbell record or CQ consumer-index record is used only
 * once the value found right after the ring is the one the provider must have written. The
 * UAR page is the 4 KiB mapping of /dev/infiniband/uverbs*. Nothing outside those is
 * written, so the program cannot fault.
 *
 * Prints "# scribbling" once the first round's rings are found, then at the end what it
 * did ("# ..." lines and one "scribble: key=value ..." line) and exits 0;
 * 2 when it cannot set up (no device, no UAR mapping, the first round's objects).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/tern/tern_rdma.h>

#include "common.h"

#define DEPTH		16		/* every queue's depth (a power of two) */
#define BUF_LEN		(256 * 1024)	/* the MR */
#define QKEY		0x11111111u

static const char *opt_dev;
static int opt_gid = -1, opt_ibport = 1;
static int opt_seconds = 20, opt_iters = 300;
static uint64_t rng, opt_seed;

static volatile sig_atomic_t stop;

static struct dev d;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;
static uint32_t stale_lkey;
static uintptr_t hole;			/* a page-aligned range that is not mapped */
static volatile uint8_t *uar;
static struct ibv_mr *uar_mr;		/* the doorbell page registered, if the kernel let it */

static struct {
	unsigned long rounds, setup_failures;
	unsigned long found[5], not_found, recs;	/* sq, rq, srq, cq, uar */
	unsigned long sq_rewrites, retx_rewrites, ud_rewrites, rq_rewrites, srq_rewrites;
	unsigned long cqe_scribbles, rec_scribbles;
	unsigned long db_own, db_foreign, db_junk, db_32bit, cq_arms;
	unsigned long bad_sge, posts, post_errors, r_resets, destroy_errors;
	unsigned long wc[32], wc_total, async[32], async_total;
} st;

enum { R_SQ, R_RQ, R_SRQ, R_CQ };

/* One ring of the provider's: slot 0, the stride and depth, the record after it or NULL. */
struct ring {
	uint8_t *base;
	uint32_t stride, depth;
	uint8_t *rec;
};

struct round {
	struct ibv_cq *cq, *hcq;
	struct ibv_srq *srq;
	struct ibv_qp *a, *b, *r, *u;
	struct ibv_ah *ah;
	struct ring asq, arq, srqr, rsq, usq, cqr, hcqr;
	uint32_t dead_qpn;
	uint16_t a_pi, r_pi, u_pi;	/* WQEs posted since creation (reset for R) */
	unsigned int polled, hpolled;
};

static uint32_t rnd(void)
{
	return rnd32(&rng);
}

static uint64_t rnd64(void)
{
	return (uint64_t)rnd() << 32 | rnd();
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* ---- finding the provider's memory ------------------------------------------------------ */

struct area {
	uintptr_t lo, hi;
};

#define MAX_AREAS 512

/*
 * Private anonymous read-write mappings (the provider's rings are among them), or with
 * @uverbs the 4 KiB shared mappings of /dev/infiniband/uverbs* (the doorbell page).
 */
static int read_maps(struct area *a, int max, int uverbs)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		die("/proc/self/maps: %m");
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, inode;
		char perms[8];
		int pos = 0;
		char *path;

		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %n", &lo, &hi, perms, &inode, &pos) < 4)
			continue;
		path = line + pos;
		path[strcspn(path, "\n")] = 0;
		if (uverbs) {
			if (!strncmp(path, "/dev/infiniband/uverbs", 22) && hi - lo == 4096 &&
			    perms[1] == 'w')
				a[n++] = (struct area){ lo, hi };
			continue;
		}
		if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p' || inode || *path)
			continue;
		a[n++] = (struct area){ lo, hi };
	}
	fclose(f);
	return n;
}

static uint64_t ld64(const volatile uint8_t *p)
{
	uint64_t v;

	memcpy(&v, (const void *)p, 8);
	return v;
}

static uint32_t ld32(const volatile uint8_t *p)
{
	uint32_t v;

	memcpy(&v, (const void *)p, 4);
	return v;
}

/*
 * The one page-aligned address A in a private anonymous mapping with the 64-bit @fp at
 * A + @off (and, with @chk_off >= 0, the 32-bit @chk at A + @chk_off); *@end: the end of
 * its mapping. NULL when there is none or more than one.
 */
static uint8_t *find_page(uint64_t fp, size_t off, int chk_off, uint32_t chk, uintptr_t *end)
{
	static struct area a[MAX_AREAS];
	int n = read_maps(a, MAX_AREAS, 0);
	uint8_t *hit = NULL;
	int hits = 0;

	for (int i = 0; i < n; i++) {
		if (a[i].hi - a[i].lo > (64ul << 20))
			continue;
		for (uintptr_t p = a[i].lo; p + 4096 <= a[i].hi; p += 4096) {
			if (ld64((uint8_t *)p + off) != fp)
				continue;
			if (chk_off >= 0 && ld32((uint8_t *)p + chk_off) != chk)
				continue;
			hit = (uint8_t *)p;
			*end = a[i].hi;
			hits++;
		}
	}
	return hits == 1 ? hit : NULL;
}

/*
 * A work queue whose slots 0 and 1 hold WQEs with @fp0 and @fp1 at @off: base, stride, and
 * with @rec_val >= 0 the doorbell record after DEPTH slots if it holds @rec_val.
 */
static void find_wq(struct ring *q, int kind, uint64_t fp0, uint64_t fp1, size_t off,
		    int rec_val)
{
	uintptr_t end = 0;
	uint8_t *base = find_page(fp0, off, -1, 0, &end);

	memset(q, 0, sizeof(*q));
	if (!base) {
		st.not_found++;
		return;
	}
	for (uint32_t s = 32; s <= 4096 && (uintptr_t)base + s + off + 8 <= end; s <<= 1) {
		if (ld64(base + s + off) == fp1) {
			q->stride = s;
			break;
		}
	}
	if (!q->stride || (uintptr_t)base + (size_t)DEPTH * q->stride > end) {
		st.not_found++;
		return;
	}
	q->base = base;
	q->depth = DEPTH;
	st.found[kind]++;
	if (rec_val >= 0 && (uintptr_t)base + (size_t)DEPTH * q->stride + 8 <= end &&
	    (ld32(base + (size_t)DEPTH * q->stride) & 0xffff) == (uint32_t)rec_val) {
		q->rec = base + (size_t)DEPTH * q->stride;
		st.recs++;
	}
}

/*
 * A CQ of @depth entries whose first CQE (slot 0) is @wc, after @consumed CQEs were
 * polled (the provider's consumer-index record then holds that).
 */
static void find_cq(struct ring *q, const struct ibv_wc *wc, uint32_t depth, uint32_t consumed)
{
	uintptr_t end = 0;
	uint8_t *base = find_page(wc->wr_id, offsetof(struct tern_cqe, wr_id),
				  offsetof(struct tern_cqe, qpn), wc->qp_num, &end);

	memset(q, 0, sizeof(*q));
	if (!base || (uintptr_t)base + (size_t)depth * sizeof(struct tern_cqe) > end) {
		st.not_found++;
		return;
	}
	q->base = base;
	q->stride = sizeof(struct tern_cqe);
	q->depth = depth;
	st.found[R_CQ]++;
	if ((uintptr_t)base + (size_t)depth * q->stride + 8 <= end &&
	    ld32(base + (size_t)depth * q->stride) == consumed) {
		q->rec = base + (size_t)depth * q->stride;
		st.recs++;
	}
}

static uint8_t *slot(const struct ring *q, uint32_t idx)
{
	return q->base + (size_t)(idx & (q->depth - 1)) * q->stride;
}

/* ---- the doorbell page ---------------------------------------------------------------- */

static void ring64(unsigned int off, uint64_t v)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*(volatile uint64_t *)(uar + (off & 0xff8)) = v;
}

/* ---- completions and events ----------------------------------------------------------- */

static void count_wc(const struct ibv_wc *wc, int n)
{
	for (int i = 0; i < n; i++) {
		st.wc[wc[i].status < 31 ? wc[i].status : 31]++;
		st.wc_total++;
	}
}

static int poll_all(struct round *rd)
{
	struct ibv_wc wc[16];
	int n, got = 0;

	if (rd->cq && (n = ibv_poll_cq(rd->cq, 16, wc)) > 0) {
		count_wc(wc, n);
		rd->polled += n;
		got += n;
	}
	if (rd->hcq && (n = ibv_poll_cq(rd->hcq, 16, wc)) > 0) {
		count_wc(wc, n);
		rd->hpolled += n;
		got += n;
	}
	return got;
}

static void drain_events(void)
{
	struct ibv_async_event ev;

	while (!ibv_get_async_event(d.ctx, &ev)) {
		st.async[ev.event_type < 31 ? ev.event_type : 31]++;
		st.async_total++;
		ibv_ack_async_event(&ev);
	}
}

/* Wait up to @ms for @n completions on @cq (counted); the first one in *@first. */
static int wait_wc(struct ibv_cq *cq, int n, int ms, struct ibv_wc *first, unsigned int *polled)
{
	long end = now_ms() + ms;
	int got = 0;

	while (got < n && now_ms() < end) {
		struct ibv_wc wc;

		if (ibv_poll_cq(cq, 1, &wc) != 1) {
			usleep(200);
			continue;
		}
		count_wc(&wc, 1);
		if (!got && first)
			*first = wc;
		got++;
		(*polled)++;
	}
	return got;
}

/* ---- valid work --------------------------------------------------------------------- */

static int post_send(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id, uint64_t addr,
		     uint32_t len, uint32_t lkey, int flags, struct ibv_ah *ah, uint32_t rqpn)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED | flags,
	}, *bad;
	int rc;

	if (op == IBV_WR_RDMA_WRITE) {
		wr.wr.rdma.remote_addr = (uintptr_t)buf + BUF_LEN / 2;
		wr.wr.rdma.rkey = mr->rkey;
	}
	if (ah) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = rqpn;
		wr.wr.ud.remote_qkey = QKEY;
	}
	rc = ibv_post_send(qp, &wr, &bad);
	st.posts++;
	if (rc)
		st.post_errors++;
	return rc;
}

static int post_recv(struct ibv_qp *qp, struct ibv_srq *srq, uint64_t wr_id, uint64_t addr,
		     uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;
	int rc = srq ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad);

	st.posts++;
	if (rc)
		st.post_errors++;
	return rc;
}

/* ---- a round's objects --------------------------------------------------------------- */

static struct ibv_qp *make_qp(struct ibv_cq *cq, struct ibv_srq *srq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = type,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = srq ? 0 : DEPTH,
			 .max_send_sge = 2, .max_recv_sge = 2, .max_inline_data = 64 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (qp && (ia.cap.max_send_wr != DEPTH || (!srq && ia.cap.max_recv_wr != DEPTH))) {
		/* depth is what find_wq assumes */
		fprintf(stderr, "create_qp: depth %u/%u, not %d\n", ia.cap.max_send_wr,
			ia.cap.max_recv_wr, DEPTH);
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

static const struct qp_opts good_opts = {
	.max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 2, .max_recv_sge = 2,
	.rnr_retry = 1, .min_rnr_timer = 1, .timeout = 10,
};

/* R: RESET -> RTS towards a QPN that does not exist (its SENDs are retransmitted). */
static int connect_r(struct round *rd)
{
	struct qp_dest me = { .qpn = rd->r->qp_num, .psn = rnd() & 0xffffff, .gid = d.gid };
	struct qp_dest dead = { .qpn = rd->dead_qpn, .psn = 1, .gid = d.gid };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(rd->r, &a, IBV_QP_STATE))
		return -1;
	rd->r_pi = 0;
	return qp_connect(&d, rd->r, &good_opts, &me, &dead);
}

static int connect_ud(struct round *rd)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = d.port, .qkey = QKEY };

	if (ibv_modify_qp(rd->u, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_QKEY))
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ibv_modify_qp(rd->u, &a, IBV_QP_STATE))
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 1 };
	return ibv_modify_qp(rd->u, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static void teardown(struct round *rd)
{
	struct ibv_qp **qps[] = { &rd->a, &rd->b, &rd->r, &rd->u };

	for (size_t i = 0; i < sizeof(qps) / sizeof(qps[0]); i++)
		if (*qps[i] && ibv_destroy_qp(*qps[i]))
			st.destroy_errors++;
	if (rd->ah && ibv_destroy_ah(rd->ah))
		st.destroy_errors++;
	if (rd->srq && ibv_destroy_srq(rd->srq))
		st.destroy_errors++;
	if (rd->cq && ibv_destroy_cq(rd->cq))
		st.destroy_errors++;
	if (rd->hcq && ibv_destroy_cq(rd->hcq))
		st.destroy_errors++;
	memset(rd, 0, sizeof(*rd));
}

static uint64_t fingerprint(void)
{
	return 0x5c1bb1e000000000ull ^ rnd64() >> 8;
}

/* Creates the round's objects and finds their rings; -1 when the objects cannot be made. */
static int setup(struct round *rd)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = DEPTH, .max_sge = 1 } };
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = d.port,
		.grh = { .dgid = d.gid, .sgid_index = d.gid_index, .hop_limit = 64 },
	};
	struct qp_dest da, db;
	uint64_t fp[2];
	struct ibv_wc first;
	uintptr_t mb = (uintptr_t)buf;

	memset(rd, 0, sizeof(*rd));
	rd->cq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
	rd->hcq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
	rd->srq = ibv_create_srq(pd, &sa);
	if (!rd->cq || !rd->hcq || !rd->srq)
		return -1;
	rd->a = make_qp(rd->cq, NULL, IBV_QPT_RC);
	rd->b = make_qp(rd->cq, rd->srq, IBV_QPT_RC);
	rd->r = make_qp(rd->hcq, NULL, IBV_QPT_RC);
	rd->u = make_qp(rd->hcq, NULL, IBV_QPT_UD);
	rd->ah = ibv_create_ah(pd, &aa);
	if (!rd->a || !rd->b || !rd->r || !rd->u || !rd->ah)
		return -1;
	da = (struct qp_dest){ .qpn = rd->a->qp_num, .psn = rnd() & 0xffffff, .gid = d.gid };
	db = (struct qp_dest){ .qpn = rd->b->qp_num, .psn = rnd() & 0xffffff, .gid = d.gid };
	if (qp_connect(&d, rd->a, &good_opts, &da, &db) ||
	    qp_connect(&d, rd->b, &good_opts, &db, &da))
		return -1;
	/* beyond every QPN the device hands out, below 0xffffff (multicast) */
	rd->dead_qpn = ((uint32_t)d.attr.max_qp + 0x1000 + (rnd() & 0xfff)) & 0x7fffff;
	if (connect_r(rd) || connect_ud(rd))
		return -1;

	/* A's RQ: two receives; the record then holds 2 */
	fp[0] = fingerprint();
	fp[1] = fingerprint();
	post_recv(rd->a, NULL, fp[0], mb, 64, mr->lkey);
	post_recv(rd->a, NULL, fp[1], mb + 64, 64, mr->lkey);
	find_wq(&rd->arq, R_RQ, fp[0], fp[1], offsetof(struct tern_rq_wqe, wr_id), 2);
	/* the SRQ, the same way; these receives take A's first SENDs */
	fp[0] = fingerprint();
	fp[1] = fingerprint();
	post_recv(NULL, rd->srq, fp[0], mb + 4096, 4096, mr->lkey);
	post_recv(NULL, rd->srq, fp[1], mb + 8192, 4096, mr->lkey);
	find_wq(&rd->srqr, R_SRQ, fp[0], fp[1], offsetof(struct tern_rq_wqe, wr_id), 2);
	/* R's SQ: two SENDs that nobody will answer */
	fp[0] = fingerprint();
	fp[1] = fingerprint();
	post_send(rd->r, IBV_WR_SEND, fp[0], mb + 16384, 1024, mr->lkey, 0, NULL, 0);
	post_send(rd->r, IBV_WR_SEND, fp[1], mb + 16384, 1024, mr->lkey, 0, NULL, 0);
	rd->r_pi = 2;
	find_wq(&rd->rsq, R_SQ, fp[0], fp[1], offsetof(struct tern_sq_wqe, wr_id), -1);
	/* A's SQ: two SENDs to B; the good CQ's first CQE is one of the four completions */
	fp[0] = fingerprint();
	fp[1] = fingerprint();
	post_send(rd->a, IBV_WR_SEND, fp[0], mb + 20480, 2048, mr->lkey, 0, NULL, 0);
	post_send(rd->a, IBV_WR_SEND, fp[1], mb + 20480, 2048, mr->lkey, 0, NULL, 0);
	rd->a_pi = 2;
	find_wq(&rd->asq, R_SQ, fp[0], fp[1], offsetof(struct tern_sq_wqe, wr_id), -1);
	if (wait_wc(rd->cq, 4, 5000, &first, &rd->polled) > 0)
		find_cq(&rd->cqr, &first, rd->cq->cqe, rd->polled);
	else
		st.not_found++;
	/* U's SQ: two UD SENDs to itself; the hostile CQ's first CQE is U's or R's */
	fp[0] = fingerprint();
	fp[1] = fingerprint();
	post_send(rd->u, IBV_WR_SEND, fp[0], mb + 32768, 256, mr->lkey, 0, rd->ah,
		  rd->u->qp_num);
	post_send(rd->u, IBV_WR_SEND, fp[1], mb + 32768, 256, mr->lkey, 0, rd->ah,
		  rd->u->qp_num);
	rd->u_pi = 2;
	find_wq(&rd->usq, R_SQ, fp[0], fp[1], offsetof(struct tern_sq_wqe, wr_id), -1);
	if (wait_wc(rd->hcq, 1, 5000, &first, &rd->hpolled) > 0)
		find_cq(&rd->hcqr, &first, rd->hcq->cqe, rd->hpolled);
	else
		st.not_found++;
	return 0;
}

/* ---- scribbling ---------------------------------------------------------------------- */

/* A hostile SGE: outside the MR, unmapped, a stale or random lkey, a huge length. */
static struct tern_sge bad_sge(void)
{
	struct tern_sge s = { .addr = (uintptr_t)buf + (rnd() % BUF_LEN), .length = rnd() % 8192,
			      .lkey = mr->lkey };

	switch (rnd() % (uar_mr ? 7 : 6)) {
	case 6: s.addr = (uintptr_t)uar + (rnd() & 0xff8); s.lkey = uar_mr->lkey; break;
	case 0: s.addr = hole + (rnd() & 0xfff); break;
	case 1: s.addr = (uintptr_t)buf + BUF_LEN - (rnd() & 0xff); break;
	case 2: s.lkey = stale_lkey; break;
	case 3: s.lkey = rnd(); break;
	case 4: s.length = rnd() | 0x80000000u; break;
	default: s.addr = rnd64(); break;
	}
	return s;
}

/* Rewrites the send WQE at @p (a slot of @stride bytes; @ud: after a struct tern_ud_seg). */
static void mutate_sq(uint8_t *p, uint32_t stride, int ud)
{
	struct tern_sq_wqe *w = (struct tern_sq_wqe *)p;
	size_t seg = sizeof(*w) + (ud ? sizeof(struct tern_ud_seg) : 0);
	struct tern_sge s;

	switch (rnd() % (ud ? 10 : 8)) {
	case 0:		/* opcode: every value, reserved ones too */
		w->opcode = rnd() & ((rnd() & 1) ? 0x0f : 0xff);
		break;
	case 1:		/* inline: flag flipped, length anything up to far beyond the slot */
		w->flags ^= TERN_WQE_F_INLINE;
		w->inline_len = (rnd() & 1) ? rnd() % (4 * stride) : rnd();
		break;
	case 2:
		w->num_sge = rnd();
		break;
	case 3:		/* the SGE */
		if (seg + sizeof(s) <= stride) {
			s = bad_sge();
			memcpy(p + seg, &s, sizeof(s));
		}
		break;
	case 4:		/* the length alone, as a retransmission would reread it */
		if (seg + sizeof(s) <= stride) {
			uint32_t len = (rnd() & 1) ? rnd() : rnd() % (16 << 20);

			memcpy(p + seg + offsetof(struct tern_sge, length), &len, 4);
		}
		break;
	case 5:		/* RDMA or atomic towards anywhere */
		w->opcode = TERN_WQE_RDMA_WRITE + rnd() % 5;
		w->remote_addr = rnd64();
		w->rkey = rnd();
		break;
	case 6:		/* flags */
		w->flags = rnd();
		break;
	case 7:		/* the whole slot */
		for (uint32_t i = 0; i < stride; i += 4) {
			uint32_t v = rnd();

			memcpy(p + i, &v, 4);
		}
		break;
	case 8:		/* UD: the address vector the device builds the frame from */
		for (size_t i = 0; i < sizeof(struct tern_qp_path); i += 4) {
			uint32_t v = rnd();

			memcpy(p + sizeof(*w) + i, &v, 4);
		}
		break;
	default: {	/* UD: destination QPN and Q_Key */
		struct tern_ud_seg *u = (struct tern_ud_seg *)(p + sizeof(*w));

		u->dest_qpn = (rnd() & 1) ? rnd() : rnd() & 0xffffff;
		u->qkey = rnd();
		break;
	}
	}
}

/* Writes a receive WQE of random content into a slot of @q (stride bytes). */
static void scribble_rq_slot(struct ring *q)
{
	uint8_t *p = slot(q, rnd());
	struct tern_rq_wqe *w = (struct tern_rq_wqe *)p;
	struct tern_sge s;

	w->wr_id = rnd64();
	w->num_sge = (rnd() & 3) ? rnd() % 4 : rnd();
	for (size_t off = sizeof(*w); off + sizeof(s) <= q->stride; off += sizeof(s)) {
		s = bad_sge();
		memcpy(p + off, &s, sizeof(s));
	}
}

static uint16_t wild_pi(uint16_t real)
{
	switch (rnd() % 4) {
	case 0: return real;
	case 1: return real + 1 + rnd() % DEPTH;
	case 2: return real + DEPTH + 1 + rnd() % 1000;
	default: return rnd();
	}
}

static uint32_t near(uint32_t num)
{
	return (num + (rnd() % 129) - 64) & 0xffffff;
}

/* Any number below @max (a QPN, CQN or SRQN the device may have given someone). */
static uint32_t other_num(int max)
{
	return rnd() % (max > 0 && max < 0x1000000 ? (uint32_t)max : 0x1000000u);
}

static void act_valid(struct round *rd)
{
	uintptr_t mb = (uintptr_t)buf;

	post_recv(NULL, rd->srq, rnd(), mb + 4096, 8192, mr->lkey);
	if (!post_send(rd->a, (rnd() & 1) ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, rnd(),
		       mb + 20480, 1 + rnd() % 4096, mr->lkey, 0, NULL, 0))
		rd->a_pi++;
}

static void act_sq_rewrite(struct round *rd)
{
	uint16_t pi;

	if (!rd->asq.base || post_send(rd->a, IBV_WR_SEND, rnd(), (uintptr_t)buf + 20480,
				       1 + rnd() % 4096, mr->lkey, 0, NULL, 0))
		return;
	pi = ++rd->a_pi;
	mutate_sq(slot(&rd->asq, pi - 1), rd->asq.stride, 0);
	st.sq_rewrites++;
	ring64(TERN_UDB_SQ, tern_udb_wq(rd->a->qp_num, wild_pi(pi)));
	st.db_own++;
}

/* R's SEND rewritten after the device sent it, while it is retransmitted. */
static void act_retx_rewrite(struct round *rd)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	int inl = rnd() & 1;

	if (!rd->rsq.base)
		return;
	if (ibv_query_qp(rd->r, &qa, IBV_QP_STATE, &qia) || qa.qp_state != IBV_QPS_RTS ||
	    (uint16_t)(rd->r_pi + 1) > DEPTH) {
		if (connect_r(rd))
			return;
		st.r_resets++;
	}
	if (post_send(rd->r, IBV_WR_SEND, rnd(), (uintptr_t)buf + 16384, inl ? 32 : 4096,
		      mr->lkey, inl ? IBV_SEND_INLINE : 0, NULL, 0))
		return;
	rd->r_pi++;
	usleep(1000 + rnd() % 7000);
	mutate_sq(slot(&rd->rsq, rd->r_pi - 1), rd->rsq.stride, 0);
	st.retx_rewrites++;
	if (rnd() & 1) {
		ring64(TERN_UDB_SQ, tern_udb_wq(rd->r->qp_num, wild_pi(rd->r_pi)));
		st.db_own++;
	}
}

static void act_ud_rewrite(struct round *rd)
{
	if (!rd->usq.base || post_send(rd->u, IBV_WR_SEND, rnd(), (uintptr_t)buf + 32768,
				       1 + rnd() % 512, mr->lkey, 0, rd->ah,
				       (rnd() & 1) ? rd->u->qp_num : near(rd->u->qp_num)))
		return;
	rd->u_pi++;
	mutate_sq(slot(&rd->usq, rd->u_pi - 1), rd->usq.stride, 1);
	st.ud_rewrites++;
	ring64(TERN_UDB_SQ, tern_udb_wq(rd->u->qp_num, wild_pi(rd->u_pi)));
	st.db_own++;
}

static void act_rq(struct round *rd)
{
	struct ring *q = (rnd() & 1) ? &rd->arq : &rd->srqr;

	if (!q->base)
		return;
	scribble_rq_slot(q);
	if (q == &rd->arq)
		st.rq_rewrites++;
	else
		st.srq_rewrites++;
	if (q->rec && (rnd() & 1)) {
		uint16_t pi = wild_pi(ld32(q->rec) & 0xffff);

		memcpy(q->rec, &pi, 2);
		st.rec_scribbles++;
	}
	if (rnd() & 1) {
		if (q == &rd->arq) {
			ring64(TERN_UDB_RQ, tern_udb_wq(rd->a->qp_num, rnd()));
			st.db_own++;
		} else {	/* the verbs do not tell an SRQ's number: guess */
			ring64(TERN_UDB_SRQ, tern_udb_wq((rnd() & 1) ? rnd() % 16 :
							 other_num(d.attr.max_srq), rnd()));
			st.db_junk++;
		}
	}
}

static void act_cq(struct round *rd)
{
	struct ring *q = (rnd() % 4) ? &rd->hcqr : &rd->cqr;
	struct ibv_cq *cq = q == &rd->hcqr ? rd->hcq : rd->cq;
	uint32_t cqn_guess;

	if (!q->base)
		return;
	{
		uint8_t *p = slot(q, rnd());
		struct tern_cqe e;

		for (size_t i = 0; i < sizeof(e); i += 4) {
			uint32_t v = rnd();

			memcpy((uint8_t *)&e + i, &v, 4);
		}
		if (rnd() & 1)		/* one of our QPs, so the provider takes it */
			e.qpn = (rnd() & 1) ? rd->a->qp_num : rd->r->qp_num;
		memcpy(p, &e, sizeof(e));
		st.cqe_scribbles++;
	}
	if (q->rec && (rnd() & 1)) {
		uint32_t ci = (rnd() & 1) ? ld32(q->rec) + rnd() % 200 : rnd();

		memcpy(q->rec, &ci, 4);
		st.rec_scribbles++;
	}
	/* arm ours, or ring any CQ's doorbell (the verbs do not tell a CQN: guess) */
	if (rnd() & 1) {
		if (!ibv_req_notify_cq(cq, rnd() & 1))
			st.cq_arms++;
	} else {
		cqn_guess = (rnd() & 1) ? rnd() % 64 : other_num(d.attr.max_cq);
		ring64(TERN_UDB_CQ, tern_udb_cq(cqn_guess, rnd(), (uint64_t)(rnd() & 3) << 62));
		st.db_junk++;
	}
}

static void act_uar(struct round *rd)
{
	uint32_t own[] = { rd->a->qp_num, rd->b->qp_num, rd->r->qp_num, rd->u->qp_num };
	uint32_t qpn = own[rnd() % 4];
	unsigned int off = (rnd() % 4) * 8;

	switch (rnd() % 5) {
	case 0:		/* ours, any index */
		ring64(off, tern_udb_wq(qpn, rnd()) | ((uint64_t)(rnd() & 3) << 62));
		st.db_own++;
		break;
	case 1:		/* someone else's: QPNs near ours, or any the device hands out */
		ring64(off, tern_udb_wq((rnd() & 1) ? near(qpn) : other_num(d.attr.max_qp),
					rnd()));
		st.db_foreign++;
		break;
	case 2:		/* any 64-bit value at a doorbell */
		ring64(off, rnd64());
		st.db_junk++;
		break;
	case 3:		/* any 64-bit value anywhere in the page */
		ring64(rnd() & 0xff8, rnd64());
		st.db_junk++;
		break;
	default:	/* 32-bit writes (the device ignores them) */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		*(volatile uint32_t *)(uar + (rnd() & 0xffc)) = rnd();
		st.db_32bit++;
		break;
	}
}

/* SENDs and receives through the verbs with SGEs the provider cannot check. */
static void act_bad_sge(struct round *rd)
{
	struct tern_sge s = bad_sge();

	if (rnd() & 1) {
		if (!post_send(rd->a, IBV_WR_SEND, rnd(), s.addr, s.length, s.lkey, 0, NULL, 0))
			rd->a_pi++;
	} else {
		post_recv(rd->a, NULL, rnd(), s.addr, s.length, s.lkey);
		/* and B SENDs into it */
		post_send(rd->b, IBV_WR_SEND, rnd(), (uintptr_t)buf, 1 + rnd() % 8192, mr->lkey, 0,
			  NULL, 0);
	}
	st.bad_sge++;
}

static void run_round(struct round *rd, long deadline)
{
	for (int i = 0; i < opt_iters && !stop && now_ms() < deadline; i++) {
		switch (rnd() % 10) {
		case 0: case 1: act_valid(rd); break;
		case 2: act_sq_rewrite(rd); break;
		case 3: act_retx_rewrite(rd); break;
		case 4: act_ud_rewrite(rd); break;
		case 5: act_rq(rd); break;
		case 6: act_cq(rd); break;
		case 7: case 8: act_uar(rd); break;
		default: act_bad_sge(rd); break;
		}
		poll_all(rd);
		drain_events();
	}
	/* what is still coming */
	for (long end = now_ms() + 50; now_ms() < end;)
		if (!poll_all(rd))
			usleep(1000);
	drain_events();
}

/* ---- main ------------------------------------------------------------------------------ */

static void usage(void)
{
	fprintf(stderr, "usage: rdma-scribble -d DEV -g GID_INDEX [-i IBPORT] [-T SECONDS] "
		"[-I ITERS] [-s SEED]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct area a[8];
	struct round rd;
	long t0, deadline;
	int c, flags;

	opt_seed = (uint64_t)time(NULL);
	while ((c = getopt(argc, argv, "d:g:i:T:I:s:")) != -1) {
		switch (c) {
		case 'd': opt_dev = optarg; break;
		case 'g': opt_gid = atoi(optarg); break;
		case 'i': opt_ibport = atoi(optarg); break;
		case 'T': opt_seconds = atoi(optarg); break;
		case 'I': opt_iters = atoi(optarg); break;
		case 's': opt_seed = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (opt_gid < 0 || optind != argc || opt_seconds <= 0 || opt_iters <= 0)
		usage();
	rng = opt_seed * 0x9e3779b97f4a7c15ull | 1;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# rdma-scribble: uid %u euid %u, %d s, %d iterations a round, -s %" PRIu64 "\n",
	       getuid(), geteuid(), opt_seconds, opt_iters, opt_seed);

	dev_open(&d, opt_dev, opt_ibport, opt_gid);
	flags = fcntl(d.ctx->async_fd, F_GETFL);
	if (fcntl(d.ctx->async_fd, F_SETFL, flags | O_NONBLOCK))
		die("async fd O_NONBLOCK: %m");
	if (read_maps(a, 8, 1) != 1)
		die("not exactly one 4 KiB mapping of /dev/infiniband/uverbs* (the doorbell page)");
	uar = (volatile uint8_t *)a[0].lo;
	st.found[4]++;

	pd = ibv_alloc_pd(d.ctx);
	buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!pd || buf == MAP_FAILED)
		die("ibv_alloc_pd/mmap: %m");
	memset(buf, 0x5a, BUF_LEN);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ);
	if (!mr)
		die("ibv_reg_mr: %m");
	{
		struct ibv_mr *gone = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
		void *h = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (!gone || h == MAP_FAILED)
			die("ibv_reg_mr/mmap: %m");
		stale_lkey = gone->lkey;
		ibv_dereg_mr(gone);
		munmap(h, 1 << 20);
		hole = (uintptr_t)h;
	}

	/*
	 * The device's own registers as a DMA target: the kernel must refuse to pin the
	 * doorbell page (an I/O mapping); should it not, SGEs point at it too.
	 */
	uar_mr = ibv_reg_mr(pd, (void *)uar, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (uar_mr)
		printf("# ibv_reg_mr of the doorbell page: registered (lkey %#x): SGEs point at it"
		       "\n", uar_mr->lkey);
	else
		printf("# ibv_reg_mr of the doorbell page: refused (%m)\n");

	t0 = now_ms();
	deadline = t0 + opt_seconds * 1000L;
	while (!stop && now_ms() < deadline) {
		if (setup(&rd)) {
			st.setup_failures++;
			fprintf(stderr, "round %lu: setup failed: %m\n", st.rounds);
			if (!st.rounds)
				die("the first round's objects could not be made");
			teardown(&rd);
			usleep(100000);
			continue;
		}
		if (!st.rounds)
			printf("# scribbling: first round's rings found: SQ %lu, RQ %lu, SRQ %lu, "
			       "CQ %lu, records %lu (not found %lu)\n", st.found[R_SQ],
			       st.found[R_RQ], st.found[R_SRQ], st.found[R_CQ], st.recs,
			       st.not_found);
		run_round(&rd, deadline);
		teardown(&rd);
		st.rounds++;
	}

	printf("# %lu rounds in %.1f s (%lu setups failed, %lu destroys failed)\n", st.rounds,
	       (now_ms() - t0) / 1000.0, st.setup_failures, st.destroy_errors);
	printf("# rings found: SQ %lu, RQ %lu, SRQ %lu, CQ %lu, doorbell page %lu; records %lu; "
	       "not found %lu\n", st.found[R_SQ], st.found[R_RQ], st.found[R_SRQ], st.found[R_CQ],
	       st.found[4], st.recs, st.not_found);
	printf("# rewrites: SQ %lu, SQ after transmission %lu (R reset %lu times), UD %lu, "
	       "RQ %lu, SRQ %lu; CQEs %lu, records %lu\n", st.sq_rewrites, st.retx_rewrites,
	       st.r_resets, st.ud_rewrites, st.rq_rewrites, st.srq_rewrites, st.cqe_scribbles,
	       st.rec_scribbles);
	printf("# doorbells: own %lu, others' %lu, junk %lu, 32-bit %lu, CQ arms %lu\n",
	       st.db_own, st.db_foreign, st.db_junk, st.db_32bit, st.cq_arms);
	printf("# posts %lu (refused %lu), with a bad SGE %lu\n", st.posts, st.post_errors,
	       st.bad_sge);
	printf("# completions %lu:", st.wc_total);
	for (int i = 0; i < 32; i++)
		if (st.wc[i])
			printf(" %s %lu", i < 31 ? ibv_wc_status_str(i) : "other", st.wc[i]);
	printf("\n# async events %lu:", st.async_total);
	for (int i = 0; i < 32; i++)
		if (st.async[i])
			printf(" %s %lu", i < 31 ? event_tag(i) : "other", st.async[i]);
	printf("\n");
	printf("scribble: rounds=%lu sq_rewrites=%lu retx_rewrites=%lu ud_rewrites=%lu "
	       "rq_rewrites=%lu srq_rewrites=%lu cqe_scribbles=%lu rec_scribbles=%lu db_own=%lu "
	       "db_foreign=%lu db_junk=%lu db_32bit=%lu bad_sge=%lu completions=%lu "
	       "wc_errors=%lu async=%lu\n", st.rounds, st.sq_rewrites, st.retx_rewrites,
	       st.ud_rewrites, st.rq_rewrites, st.srq_rewrites, st.cqe_scribbles,
	       st.rec_scribbles, st.db_own, st.db_foreign, st.db_junk, st.db_32bit, st.bad_sge,
	       st.wc_total, st.wc_total - st.wc[IBV_WC_SUCCESS], st.async_total);
	if (uar_mr)
		ibv_dereg_mr(uar_mr);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(d.ctx);
	return 0;
}
