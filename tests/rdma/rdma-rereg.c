// SPDX-License-Identifier: GPL-2.0
/*
 * rdma-rereg: ibv_rereg_mr between two hosts over RC queue pairs on RoCEv2.
 *
 *   server:  rdma-rereg -d DEV -g GIDX [-p PORT] [-t SECONDS]
 *   client:  rdma-rereg -d DEV -g GIDX [-p PORT] [-t SECONDS] SERVER
 *
 * The server owns one MR and changes it with ibv_rereg_mr between the client's RDMA READs
 * and WRITEs; both sides check every byte and every completion status:
 *   1. registered on buffer A with LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ |
 *      RELAXED_ORDERING (a hint the device may ignore, accepted): the client READs A's
 *      pattern and WRITEs another one, which lands in A;
 *   2. IBV_REREG_MR_CHANGE_TRANSLATION to buffer B: the client READs B's pattern through the
 *      new rkey and WRITEs a new one, which lands in B and leaves A unchanged;
 *   3. IBV_REREG_MR_CHANGE_ACCESS to LOCAL_WRITE | REMOTE_READ: a READ still works, a WRITE
 *      completes with IBV_WC_REM_ACCESS_ERR on the client, whose QP goes to ERR; the server's
 *      QP goes to ERR too and B is unchanged;
 *   4. IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS to a second PD with REMOTE_WRITE
 *      again: the client WRITEs and READs back through a new QP pair in that PD, the bytes
 *      land in B, and the first PD can be freed once its QP is gone (the MR left it);
 *   5. a reregistration that must fail (a new translation onto read-only memory with
 *      LOCAL_WRITE): ibv_rereg_mr returns IBV_REREG_MR_ERR_CMD, the MR keeps its keys,
 *      address and length, and a WRITE through it still lands.
 * A device that does not implement rereg (ibv_rereg_mr fails with EOPNOTSUPP at step 2)
 * prints "skip - ..." and ends there.
 *
 * Both sides print one line per check ("ok - what" / "not ok - what: why") and exit 0 when
 * every check passed, 1 when one failed, 2 when the program could not run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

#define LEN		(64 * 1024)
#define BASE_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

static const char *opt_dev;
static int opt_port = 18750, opt_gid = -1, opt_ibport = 1, opt_timeout_s = 120;

static void *page_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap %zu: %m", len);
	return p;
}

/* --- server ------------------------------------------------------------------------------ */

static void send_mr(int fd, const char *tag, struct ibv_mr *mr)
{
	oob_send(fd, "%s %" PRIx64 " %x %zx", tag, (uint64_t)(uintptr_t)mr->addr, mr->rkey,
		 mr->length);
}

static void expect_pattern(const uint8_t *p, uint32_t seed, const char *what)
{
	long bad = pattern_check(p, LEN, seed, 0);

	check(bad < 0, "server: %s (first bad byte %ld)", what, bad);
}

static int run_server(void)
{
	struct ibv_pd *pd1, *pd2;
	struct ibv_qp *qp1, *qp2;
	struct qp_opts o = qp_opts_small();
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint32_t old_lkey, old_rkey;
	uint8_t *a, *b, *ro;
	char line[MSG_MAX];
	struct dev d;
	int lfd, fd, rc;

	dev_open(&d, opt_dev, opt_ibport, opt_gid);
	pd1 = ibv_alloc_pd(d.ctx);
	pd2 = ibv_alloc_pd(d.ctx);
	cq = cq_create(d.ctx, 16);
	if (!pd1 || !pd2 || !cq)
		die("server: PD/CQ: %m");
	a = page_alloc(LEN);
	b = page_alloc(LEN);
	pattern_fill(a, LEN, 1, 0);
	pattern_fill(b, LEN, 3, 0);
	mr = ibv_reg_mr(pd1, a, LEN, BASE_ACCESS | IBV_ACCESS_RELAXED_ORDERING);
	check(mr != NULL, "server: ibv_reg_mr with IBV_ACCESS_RELAXED_ORDERING: %s",
	      mr ? "registered" : strerror(errno));
	if (!mr)
		die("server: cannot go on without the MR");
	qp1 = qp_create(&d, pd1, cq, &o);
	if (!qp1)
		die("server: QP: %m");

	lfd = oob_listen(opt_port);
	fd = oob_accept(lfd, opt_timeout_s);
	if (qp_exchange_connect(&d, qp1, &o, fd, 1))
		die("server: connect failed");

	/* 1: the MR as registered */
	send_mr(fd, "MR1", mr);
	oob_expect(fd, line, sizeof(line), "DONE1");
	expect_pattern(a, 2, "step 1: the client's WRITE landed in A");

	/* 2: new translation */
	old_rkey = mr->rkey;
	errno = 0;
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b, LEN, 0);
	if (rc && (errno == EOPNOTSUPP || errno == ENOSYS)) {
		printf("skip - ibv_rereg_mr: not supported by this device (%s)\n",
		       strerror(errno));
		oob_send(fd, "SKIP");
		oob_expect(fd, line, sizeof(line), "BYE");
		return checks_failed ? 1 : 0;
	}
	check(!rc && mr->addr == b && mr->length == LEN,
	      "server: ibv_rereg_mr CHANGE_TRANSLATION to another buffer: rc %d (%s), rkey "
	      "%#x -> %#x", rc, rc ? strerror(errno) : "ok", old_rkey, mr->rkey);
	send_mr(fd, "MR2", mr);
	oob_expect(fd, line, sizeof(line), "DONE2");
	expect_pattern(b, 4, "step 2: the client's WRITE landed in B");
	expect_pattern(a, 2, "step 2: A is unchanged after the MR left it");

	/* 3: drop REMOTE_WRITE */
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	check(!rc, "server: ibv_rereg_mr CHANGE_ACCESS to LOCAL_WRITE | REMOTE_READ: rc %d (%s)",
	      rc, rc ? strerror(errno) : "ok");
	send_mr(fd, "MR3", mr);
	oob_expect(fd, line, sizeof(line), "DONE3");
	expect_pattern(b, 4, "step 3: the refused WRITE changed nothing in B");
	check(qp_state(qp1) == IBV_QPS_ERR, "server: step 3: the QP that got the refused WRITE "
	      "is in ERR (%s)", qp_state_str(qp_state(qp1)));

	/* 4: another PD, REMOTE_WRITE again; a new QP pair in that PD */
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS, pd2, NULL, 0,
			  BASE_ACCESS);
	check(!rc && mr->pd == pd2, "server: ibv_rereg_mr CHANGE_PD | CHANGE_ACCESS: rc %d (%s)",
	      rc, rc ? strerror(errno) : "ok");
	qp2 = qp_create(&d, pd2, cq, &o);
	if (!qp2)
		die("server: QP in the second PD: %m");
	if (qp_exchange_connect(&d, qp2, &o, fd, 1))
		die("server: connect of the second QP failed");
	send_mr(fd, "MR4", mr);
	oob_expect(fd, line, sizeof(line), "DONE4");
	expect_pattern(b, 6, "step 4: the WRITE through the QP of the new PD landed in B");
	if (ibv_destroy_qp(qp1))
		die("server: destroy QP: %m");
	rc = ibv_dealloc_pd(pd1);
	check(!rc, "server: step 4: the first PD is freed once its QP is gone (the MR left it): "
	      "%s", rc ? strerror(rc) : "ok");

	/* 5: a reregistration that fails leaves the MR as it was */
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED)
		die("mmap: %m");
	old_lkey = mr->lkey;
	old_rkey = mr->rkey;
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, ro, 4096, 0);
	check(rc == IBV_REREG_MR_ERR_CMD && mr->lkey == old_lkey && mr->rkey == old_rkey &&
	      mr->addr == b && mr->length == LEN, "server: step 5: ibv_rereg_mr onto read-only "
	      "memory with LOCAL_WRITE fails (rc %d, %s) and the MR keeps its keys and range",
	      rc, strerror(errno));
	send_mr(fd, "MR5", mr);
	oob_expect(fd, line, sizeof(line), "DONE5");
	expect_pattern(b, 7, "step 5: a WRITE through the MR after the failed rereg landed in B");

	oob_send(fd, "BYE");
	if (ibv_destroy_qp(qp2) || ibv_dereg_mr(mr) || ibv_dealloc_pd(pd2) || cq_destroy(cq))
		die("server: teardown: %m");
	return checks_failed ? 1 : 0;
}

/* --- client ------------------------------------------------------------------------------ */

struct rmr {
	uint64_t addr;
	uint32_t rkey;
	size_t len;
};

static void recv_mr(int fd, const char *tag, struct rmr *r)
{
	char line[MSG_MAX];

	oob_expect(fd, line, sizeof(line), tag);
	if (sscanf(line + strlen(tag), " %" SCNx64 " %x %zx", &r->addr, &r->rkey, &r->len) != 3)
		die("bad %s line: %s", tag, line);
}

/* One RDMA READ or WRITE of LEN bytes; returns the completion status, or -1 for none. */
static int rdma_op(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *lmr,
		   enum ibv_wr_opcode op, const struct rmr *r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)lmr->addr, .length = LEN, .lkey = lmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = r->addr, .rkey = r->rkey },
	}, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send: %m");
	if (poll_one(cq, &wc, opt_timeout_s * 1000) != 1)
		return -1;
	return wc.status;
}

static void read_check(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *lmr,
		       const struct rmr *r, uint32_t seed, const char *what)
{
	uint8_t *p = lmr->addr;
	long bad;
	int st;

	memset(p, GUARD_BYTE, LEN);
	st = rdma_op(qp, cq, lmr, IBV_WR_RDMA_READ, r);
	bad = st == IBV_WC_SUCCESS ? pattern_check(p, LEN, seed, 0) : 0;
	check(st == IBV_WC_SUCCESS && bad < 0, "client: %s: READ %s, first bad byte %ld", what,
	      st < 0 ? "no completion" : ibv_wc_status_str(st), bad);
}

static void write_check(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *lmr,
			const struct rmr *r, uint32_t seed, const char *what)
{
	int st;

	pattern_fill(lmr->addr, LEN, seed, 0);
	st = rdma_op(qp, cq, lmr, IBV_WR_RDMA_WRITE, r);
	check(st == IBV_WC_SUCCESS, "client: %s: WRITE %s", what,
	      st < 0 ? "no completion" : ibv_wc_status_str(st));
}

static int run_client(const char *host)
{
	struct qp_opts o = qp_opts_small();
	struct ibv_qp *qp1, *qp2;
	char line[MSG_MAX];
	struct ibv_mr *lmr;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct rmr r;
	struct dev d;
	int fd, st;

	dev_open(&d, opt_dev, opt_ibport, opt_gid);
	pd = ibv_alloc_pd(d.ctx);
	cq = cq_create(d.ctx, 16);
	if (!pd || !cq)
		die("client: PD/CQ: %m");
	lmr = ibv_reg_mr(pd, page_alloc(LEN), LEN, IBV_ACCESS_LOCAL_WRITE);
	qp1 = qp_create(&d, pd, cq, &o);
	if (!lmr || !qp1)
		die("client: MR/QP: %m");
	fd = oob_connect(host, opt_port, opt_timeout_s);
	if (qp_exchange_connect(&d, qp1, &o, fd, 0))
		die("client: connect failed");

	recv_mr(fd, "MR1", &r);
	read_check(qp1, cq, lmr, &r, 1, "step 1 (A, as registered)");
	write_check(qp1, cq, lmr, &r, 2, "step 1 (A, as registered)");
	oob_send(fd, "DONE1");

	if (oob_recv(fd, line, sizeof(line)))
		die("client: the server went away");
	if (!strcmp(line, "SKIP")) {
		printf("skip - the rest: the server's device does not support ibv_rereg_mr\n");
		oob_send(fd, "BYE");
		return checks_failed ? 1 : 0;
	}
	if (sscanf(line, "MR2 %" SCNx64 " %x %zx", &r.addr, &r.rkey, &r.len) != 3)
		die("bad MR2 line: %s", line);
	read_check(qp1, cq, lmr, &r, 3, "step 2 (new translation: B)");
	write_check(qp1, cq, lmr, &r, 4, "step 2 (new translation: B)");
	oob_send(fd, "DONE2");

	recv_mr(fd, "MR3", &r);
	read_check(qp1, cq, lmr, &r, 4, "step 3 (REMOTE_WRITE dropped)");
	pattern_fill(lmr->addr, LEN, 5, 0);
	st = rdma_op(qp1, cq, lmr, IBV_WR_RDMA_WRITE, &r);
	check(st == IBV_WC_REM_ACCESS_ERR, "client: step 3: a WRITE into the MR without "
	      "REMOTE_WRITE completes with IBV_WC_REM_ACCESS_ERR (%s)",
	      st < 0 ? "no completion" : ibv_wc_status_str(st));
	check(qp_state(qp1) == IBV_QPS_ERR, "client: step 3: the QP is in ERR (%s)",
	      qp_state_str(qp_state(qp1)));
	oob_send(fd, "DONE3");

	qp2 = qp_create(&d, pd, cq, &o);
	if (!qp2)
		die("client: second QP: %m");
	if (qp_exchange_connect(&d, qp2, &o, fd, 0))
		die("client: connect of the second QP failed");
	recv_mr(fd, "MR4", &r);
	write_check(qp2, cq, lmr, &r, 6, "step 4 (new PD, REMOTE_WRITE again)");
	read_check(qp2, cq, lmr, &r, 6, "step 4 (new PD, REMOTE_WRITE again)");
	oob_send(fd, "DONE4");

	recv_mr(fd, "MR5", &r);
	write_check(qp2, cq, lmr, &r, 7, "step 5 (after a failed rereg)");
	oob_send(fd, "DONE5");
	oob_expect(fd, line, sizeof(line), "BYE");

	ibv_destroy_qp(qp2);
	ibv_destroy_qp(qp1);
	ibv_dereg_mr(lmr);
	cq_destroy(cq);
	ibv_dealloc_pd(pd);
	return checks_failed ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: rdma-rereg [-d DEV] [-i IBPORT] -g GID_INDEX [-p TCP_PORT] "
		"[-t SECONDS] [SERVER]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:i:g:p:t:")) != -1) {
		switch (c) {
		case 'd': opt_dev = optarg; break;
		case 'i': opt_ibport = atoi(optarg); break;
		case 'g': opt_gid = atoi(optarg); break;
		case 'p': opt_port = atoi(optarg); break;
		case 't': opt_timeout_s = atoi(optarg); break;
		default: usage();
		}
	}
	if (opt_gid < 0 || argc - optind > 1)
		usage();
	srand(getpid() ^ (unsigned int)now_ms());
	return optind < argc ? run_client(argv[optind]) : run_server();
}
