// SPDX-License-Identifier: GPL-2.0
/*
 * rdma-paths: every call path the verbs offer for memory windows and ibv_rereg_mr, called
 * the way applications written for other devices call them (rdma-core's pyverbs tests among
 * them), and QP creation across the limits the device reports (issue 40).
 *
 *   server:  rdma-paths -d DEV -g GIDX [-p PORT] [-t SECONDS]
 *   client:  rdma-paths -d DEV -g GIDX [-p PORT] [-t SECONDS] SERVER-ADDRESS
 *   caps:    rdma-paths -d DEV -g GIDX -q [-e] [-n TRIES] [-s SEED]
 *
 * The server owns the memory and says what the client does through each of two RC QP pairs
 * (A: made by ibv_create_qp, posted with ibv_post_send; B: made by ibv_create_qp_ex with
 * send_ops_flags, posted with ibv_wr_*); the client does it and reports the completion; the
 * server checks the bytes. The MR behind the windows has LOCAL_WRITE | MW_BIND only, as
 * pyverbs registers it: the window alone gives remote rights. Binds pass
 * IBV_ACCESS_LOCAL_WRITE among the window's rights, as pyverbs does.
 *   1. type 1: ibv_bind_mw over [0, 8 KiB): the rkey keeps the window's index with a new
 *      key byte; the client WRITEs 8 KiB through it and READs back its last 100 bytes.
 *   2. type 2: IBV_WR_BIND_MW through ibv_post_send over [8, 16 KiB), rkey
 *      ibv_inc_rkey(mw->rkey); WRITE through it; the client's IBV_WR_SEND_WITH_INV of that
 *      rkey unbinds it (IBV_WC_WITH_INV, invalidated_rkey); a WRITE through it then is
 *      IBV_WC_REM_ACCESS_ERR with nothing written (both QPs reconnected).
 *   3. type 2: ibv_wr_bind_mw on QP B over [16, 24 KiB) with an rkey whose upper 24 bits are
 *      not the window's (pyverbs passes mr.rkey + 12): the window's index with that key
 *      byte works; IBV_WR_LOCAL_INV through ibv_wr_local_inv unbinds it (the stale key then
 *      IBV_WC_REM_ACCESS_ERR).
 *   4. type 1 invalidation as pyverbs does it: ibv_bind_mw with the MR named, its address
 *      and length 0; the old key then fails. The type 2 window of step 2 bound again and
 *      ibv_dealloc_mw'd while bound: its key fails.
 *   5. ibv_rereg_mr: an MR registered LOCAL_WRITE, its rkey handed to the client first;
 *      its WRITE is refused; IBV_REREG_MR_CHANGE_ACCESS to LOCAL_WRITE | REMOTE_WRITE, and
 *      the WRITE through the rkey the client already had lands intact (the keys stay);
 *      back to LOCAL_WRITE: refused again.
 * -q: RC, UC and UD QPs with capacities chosen at random up to the limits ibv_query_device
 * reports (max_qp_wr WRs, max_sge SGEs each way), through ibv_create_qp and
 * ibv_create_qp_ex, are created and report at least what was asked; exactly the limits
 * too; one beyond max_qp_wr or max_sge is EINVAL; a CQ of max_cqe and an SRQ of
 * max_srq_wr x max_srq_sge are created, one beyond is EINVAL. With -e only an eighth of the
 * limits at random and nothing at them (for a device whose limits are more than a guest's
 * memory holds at full size, as Soft-RoCE's 2^20 WRs).
 *
 * Each side prints one line per check ("ok - what" / "not ok - what: why") and exits 0 when
 * every check passed, 1 when one failed, 2 when it could not run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define BUF		(64 * 1024)
#define RBUF		(16 * 1024)
#define T1_OFF		0
#define T1_LEN		8192
#define T2_OFF		8192
#define T2_LEN		8192
#define T3_OFF		16384
#define T3_LEN		8192
#define MW_ACC		(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE)

static const char *opt_dev;
static int opt_port = 18900, opt_gid = -1, opt_ibport = 1, opt_timeout_s = 60, opt_caps;
static int opt_eighth;
static int opt_tries = 20;
static uint64_t opt_seed;

static struct qp_opts qo = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			     .max_recv_sge = 1 };

/* The two QPs of a side: A through ibv_post_send, B an extended QP through ibv_wr_*. */
static struct ibv_qp *qp_a, *qp_b;

static struct ibv_qp *qp_ex_create(struct dev *d, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex ix = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_SEND_WITH_INV |
				  IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(d->ctx, &ix);

	if (!qp || !ibv_qp_to_qp_ex(qp))
		die("ibv_create_qp_ex with BIND_MW and LOCAL_INV: %m");
	return qp;
}

/* QP @q (0: A, 1: B) of this side. */
static struct ibv_qp *qp_of(int q)
{
	return q ? qp_b : qp_a;
}

/* Both sides: QP @q back to RESET and connected again (after a remote error). */
static void reconnect(struct dev *d, int q, int fd, int is_server)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(qp_of(q), &a, IBV_QP_STATE))
		die("modify_qp to RESET: %m");
	if (qp_exchange_connect(d, qp_of(q), &qo, fd, is_server))
		die("reconnect QP %c", 'A' + q);
}

static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	int r = poll_one(cq, wc, opt_timeout_s * 1000);

	if (r != 1)
		check(0, "%s: no completion (%d)", what, r);
	return r == 1;
}

/* --- server ------------------------------------------------------------------------------ */

struct srv {
	struct dev d;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	int fd;
	char line[MSG_MAX];
};

/*
 * Have the client run "OP q addr len rkey seed" (OP W: a WRITE of pattern @seed, R: a READ
 * whose bytes must be pattern @seed at @off... see run_client) and tell the completion
 * status it got; true when that is @want. After a failure both sides reconnect QP @q.
 */
static int remote_op(struct srv *s, char op, int q, uint64_t addr, uint32_t len,
		     uint32_t rkey, uint32_t seed, uint64_t pat_off, enum ibv_wc_status want,
		     const char *what)
{
	int st = -1;

	oob_send(s->fd, "%c %d %" PRIu64 " %u %u %u %" PRIu64, op, q, addr, len, rkey, seed,
		 pat_off);
	oob_expect(s->fd, s->line, sizeof(s->line), "DONE");
	if (sscanf(s->line, "DONE %d", &st) != 1)
		die("server: bad line '%s'", s->line);
	check(st == (int)want, "%s: the client's %s through rkey %#x on QP %c completes with %s "
	      "(got %s)", what, op == 'W' ? "WRITE" : op == 'R' ? "READ" : "SEND_WITH_INV",
	      rkey, 'A' + q, ibv_wc_status_str(want),
	      st < 0 ? "no completion" : ibv_wc_status_str((enum ibv_wc_status)st));
	if (st != IBV_WC_SUCCESS) {
		check(qp_state(qp_of(q)) == IBV_QPS_ERR, "%s: the server's QP %c is in ERR after "
		      "the remote error (%s)", what, 'A' + q, qp_state_str(qp_state(qp_of(q))));
		oob_send(s->fd, "X %d", q);
		reconnect(&s->d, q, s->fd, 1);
	}
	return st == (int)want;
}

/* The server's buffer is pattern @seed over [off, off + len) and the rest is as before. */
static void expect_bytes(struct srv *s, const uint8_t *before, size_t off, size_t len,
			 uint32_t seed, const char *what)
{
	long bad = pattern_check(s->buf + off, len, seed, 0);
	int rest = !memcmp(s->buf, before, off) &&
		   !memcmp(s->buf + off + len, before + off + len, BUF - off - len);

	check(bad < 0 && rest, "%s: the bytes landed in [%zu, %zu) and nowhere else (first bad "
	      "byte %ld%s)", what, off, off + len, bad, rest ? "" : ", bytes outside changed");
}

static int bind_post(struct srv *s, struct ibv_mw *mw, uint32_t rkey, size_t off, size_t len,
		     uint64_t wr_id, const char *what)
{
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_wc wc;
	int ret;

	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = s->mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)s->buf + off;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = MW_ACC;
	ret = ibv_post_send(qp_a, &wr, &bad);
	if (!check(!ret, "%s: ibv_post_send(IBV_WR_BIND_MW) of a type 2 window with "
		   "REMOTE_WRITE | REMOTE_READ | LOCAL_WRITE: %s", what, strerror(ret)))
		return 0;
	return wait_wc(s->cq, &wc, what) &&
	       check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW &&
		     wc.wr_id == wr_id, "%s: IBV_WC_BIND_MW success (status %s, opcode %d)",
		     what, ibv_wc_status_str(wc.status), wc.opcode);
}

static int bind1(struct srv *s, struct ibv_mw *mw, uint64_t addr, uint64_t len,
		 unsigned int acc, uint64_t wr_id, const char *what)
{
	struct ibv_mw_bind mb = {};
	struct ibv_wc wc;
	uint32_t old = mw->rkey;
	int ret;

	mb.wr_id = wr_id;
	mb.send_flags = IBV_SEND_SIGNALED;
	mb.bind_info.mr = s->mr;
	mb.bind_info.addr = addr;
	mb.bind_info.length = len;
	mb.bind_info.mw_access_flags = acc;
	ret = ibv_bind_mw(qp_a, mw, &mb);
	if (!check(!ret && mw->rkey != old && (mw->rkey >> 8) == (old >> 8),
		   "%s: ibv_bind_mw (%s), rkey %#x -> %#x: same index, new key byte", what,
		   strerror(ret), old, mw->rkey))
		return 0;
	return wait_wc(s->cq, &wc, what) &&
	       check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW &&
		     wc.wr_id == wr_id, "%s: IBV_WC_BIND_MW success (status %s)", what,
		     ibv_wc_status_str(wc.status));
}

static void server_windows(struct srv *s)
{
	uint8_t *before = malloc(BUF);
	struct ibv_mw *mw1, *mw2, *mw3;
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(qp_b);
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_mw_bind_info bi = {};
	struct ibv_sge sg;
	struct ibv_wc wc;
	uint8_t rbuf[64];
	struct ibv_mr *rmr;
	uint32_t k1, k2, k3;
	uint64_t base = (uintptr_t)s->buf;
	int ret;

	if (!before)
		die("malloc");
	rmr = ibv_reg_mr(s->pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	mw1 = ibv_alloc_mw(s->pd, IBV_MW_TYPE_1);
	mw2 = ibv_alloc_mw(s->pd, IBV_MW_TYPE_2);
	mw3 = ibv_alloc_mw(s->pd, IBV_MW_TYPE_2);
	if (!rmr || !check(mw1 && mw2 && mw3, "ibv_alloc_mw: two of type 2, one of type 1 (%s)",
			   mw1 && mw2 && mw3 ? "ok" : strerror(errno)))
		die("server: cannot go on without the windows");

	/* 1. type 1 through ibv_bind_mw */
	memcpy(before, s->buf, BUF);
	if (bind1(s, mw1, base + T1_OFF, T1_LEN, MW_ACC, 1, "type 1")) {
		k1 = mw1->rkey;
		remote_op(s, 'W', 0, base + T1_OFF, T1_LEN, k1, 11, 0, IBV_WC_SUCCESS,
			  "type 1");
		expect_bytes(s, before, T1_OFF, T1_LEN, 11, "type 1 WRITE");
		remote_op(s, 'R', 0, base + T1_OFF + T1_LEN - 100, 100, k1, 11, T1_LEN - 100,
			  IBV_WC_SUCCESS, "type 1 READ of the window's last 100 bytes");
		remote_op(s, 'W', 0, base + T1_OFF + T1_LEN - 8, 16, k1, 12, 0,
			  IBV_WC_REM_ACCESS_ERR, "type 1, 8 bytes past the window");
	}

	/* 2. type 2 through ibv_post_send, SEND_WITH_INV */
	memcpy(before, s->buf, BUF);
	k2 = ibv_inc_rkey(mw2->rkey);
	if (bind_post(s, mw2, k2, T2_OFF, T2_LEN, 2, "type 2 (post_send)")) {
		remote_op(s, 'W', 0, base + T2_OFF, T2_LEN, k2, 21, 0, IBV_WC_SUCCESS,
			  "type 2 (post_send)");
		expect_bytes(s, before, T2_OFF, T2_LEN, 21, "type 2 WRITE");
		sg.addr = (uintptr_t)rbuf;
		sg.length = sizeof(rbuf);
		sg.lkey = rmr->lkey;
		rwr.wr_id = 3;
		rwr.sg_list = &sg;
		rwr.num_sge = 1;
		if (ibv_post_recv(qp_a, &rwr, &rbad))
			die("server: post_recv");
		remote_op(s, 'I', 0, 0, 16, k2, 22, 0, IBV_WC_SUCCESS, "type 2 remote invalidation");
		if (wait_wc(s->cq, &wc, "SEND_WITH_INV receive"))
			check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			      (wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == k2,
			      "type 2: the receive of SEND_WITH_INV has IBV_WC_WITH_INV and "
			      "invalidated_rkey %#x (status %s, flags %#x, key %#x)", k2,
			      ibv_wc_status_str(wc.status), wc.wc_flags, wc.invalidated_rkey);
		memcpy(before, s->buf, BUF);
		remote_op(s, 'W', 0, base + T2_OFF, 64, k2, 23, 0, IBV_WC_REM_ACCESS_ERR,
			  "type 2 after SEND_WITH_INV");
		check(!memcmp(before, s->buf, BUF), "type 2 after SEND_WITH_INV: nothing written");
	}

	/* 3. type 2 through ibv_wr_bind_mw, an rkey of another index; ibv_wr_local_inv */
	memcpy(before, s->buf, BUF);
	k3 = s->mr->rkey + 12;
	bi.mr = s->mr;
	bi.addr = base + T3_OFF;
	bi.length = T3_LEN;
	bi.mw_access_flags = MW_ACC;
	ibv_wr_start(qx);
	qx->wr_id = 4;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qx, mw3, k3, &bi);
	ret = ibv_wr_complete(qx);
	k3 = (mw3->rkey & ~0xffu) | (k3 & 0xffu);
	if (check(!ret, "type 2 (ibv_wr_bind_mw, rkey of another index): ibv_wr_complete: %s",
		  strerror(ret)) && wait_wc(s->cq, &wc, "ibv_wr_bind_mw") &&
	    check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 4,
		  "type 2 (ibv_wr_bind_mw): IBV_WC_BIND_MW success (%s)",
		  ibv_wc_status_str(wc.status))) {
		remote_op(s, 'W', 1, base + T3_OFF, T3_LEN, k3, 31, 0, IBV_WC_SUCCESS,
			  "type 2 (ibv_wr_bind_mw): the window's index with the key byte given");
		expect_bytes(s, before, T3_OFF, T3_LEN, 31, "type 2 (ibv_wr_bind_mw) WRITE");
		remote_op(s, 'R', 1, base + T3_OFF, 256, k3, 31, 0, IBV_WC_SUCCESS,
			  "type 2 (ibv_wr_bind_mw) READ");
		ibv_wr_start(qx);
		qx->wr_id = 5;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_local_inv(qx, k3);
		ret = ibv_wr_complete(qx);
		if (check(!ret, "ibv_wr_local_inv: ibv_wr_complete: %s", strerror(ret)) &&
		    wait_wc(s->cq, &wc, "ibv_wr_local_inv"))
			check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV &&
			      wc.wr_id == 5, "ibv_wr_local_inv: IBV_WC_LOCAL_INV success (%s)",
			      ibv_wc_status_str(wc.status));
		memcpy(before, s->buf, BUF);
		remote_op(s, 'W', 1, base + T3_OFF, 64, k3, 32, 0, IBV_WC_REM_ACCESS_ERR,
			  "type 2 after LOCAL_INV");
		check(!memcmp(before, s->buf, BUF), "type 2 after LOCAL_INV: nothing written");
	}

	/* 4. type 1 unbound as pyverbs does it (MR named, length 0); type 2 deallocated bound */
	k1 = mw1->rkey;
	if (bind1(s, mw1, base, 0, 0, 6, "type 1 invalidation (length 0, MR named)")) {
		memcpy(before, s->buf, BUF);
		remote_op(s, 'W', 0, base + T1_OFF, 64, k1, 41, 0, IBV_WC_REM_ACCESS_ERR,
			  "type 1 after its invalidation, the old key");
		remote_op(s, 'W', 0, base + T1_OFF, 64, mw1->rkey, 41, 0, IBV_WC_REM_ACCESS_ERR,
			  "type 1 after its invalidation, the new key");
		check(!memcmp(before, s->buf, BUF), "type 1 invalidated: nothing written");
	}
	k2 = ibv_inc_rkey(k2);
	if (bind_post(s, mw2, k2, T2_OFF, T2_LEN, 7, "type 2 bound again after SEND_WITH_INV")) {
		remote_op(s, 'W', 0, base + T2_OFF, 128, k2, 42, 0, IBV_WC_SUCCESS,
			  "type 2 bound again");
		check(ibv_dealloc_mw(mw2) == 0, "ibv_dealloc_mw of a bound type 2 window");
		mw2 = NULL;
		memcpy(before, s->buf, BUF);
		remote_op(s, 'W', 0, base + T2_OFF, 64, k2, 43, 0, IBV_WC_REM_ACCESS_ERR,
			  "type 2 after ibv_dealloc_mw");
		check(!memcmp(before, s->buf, BUF), "type 2 deallocated: nothing written");
	}
	check(ibv_dealloc_mw(mw1) == 0 && ibv_dealloc_mw(mw3) == 0 &&
	      (!mw2 || ibv_dealloc_mw(mw2) == 0), "ibv_dealloc_mw of the other windows");
	ibv_dereg_mr(rmr);
	free(before);
}

static void server_rereg(struct srv *s)
{
	uint8_t *rb = aligned_alloc(4096, RBUF), *before = malloc(RBUF);
	struct ibv_mr *mr;
	uint32_t lkey, rkey;
	int rc;

	if (!rb || !before)
		die("malloc");
	pattern_fill(rb, RBUF, 50, 0);
	mr = ibv_reg_mr(s->pd, rb, RBUF, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("server: ibv_reg_mr: %m");
	lkey = mr->lkey;
	rkey = mr->rkey;
	/* the peer has the rkey before the rereg, as an application hands it out */
	memcpy(before, rb, RBUF);
	remote_op(s, 'W', 0, (uintptr_t)rb, 4096, rkey, 51, 0, IBV_WC_REM_ACCESS_ERR,
		  "rereg: the MR without REMOTE_WRITE");
	check(!memcmp(before, rb, RBUF), "rereg: the refused WRITE wrote nothing");
	errno = 0;
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (rc && (errno == EOPNOTSUPP || errno == ENOSYS)) {
		printf("skip - rereg: ibv_rereg_mr not supported by this device (%s)\n",
		       strerror(errno));
		ibv_dereg_mr(mr);
		free(rb);
		free(before);
		return;
	}
	check(!rc, "rereg: ibv_rereg_mr CHANGE_ACCESS to LOCAL_WRITE | REMOTE_WRITE: rc %d (%s)",
	      rc, rc ? strerror(errno) : "ok");
	check(mr->lkey == lkey && mr->rkey == rkey, "rereg: the MR keeps its keys (lkey %#x -> "
	      "%#x, rkey %#x -> %#x)", lkey, mr->lkey, rkey, mr->rkey);
	remote_op(s, 'W', 0, (uintptr_t)rb + 4096, 8192, rkey, 52, 0, IBV_WC_SUCCESS,
		  "rereg: the rkey handed out before CHANGE_ACCESS");
	check(pattern_check(rb + 4096, 8192, 52, 0) < 0 && !memcmp(rb, before, 4096) &&
	      !memcmp(rb + 12288, before + 12288, RBUF - 12288),
	      "rereg: the WRITE after CHANGE_ACCESS landed intact, nothing else changed");
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE);
	check(!rc, "rereg: CHANGE_ACCESS back to LOCAL_WRITE: rc %d", rc);
	memcpy(before, rb, RBUF);
	remote_op(s, 'W', 0, (uintptr_t)rb, 64, mr->rkey, 53, 0, IBV_WC_REM_ACCESS_ERR,
		  "rereg: REMOTE_WRITE taken away again");
	check(!memcmp(before, rb, RBUF), "rereg: nothing written once REMOTE_WRITE is gone");
	check(ibv_dereg_mr(mr) == 0, "rereg: ibv_dereg_mr");
	free(rb);
	free(before);
}

static int run_server(void)
{
	struct srv s = {};
	int lfd;

	dev_open(&s.d, opt_dev, opt_ibport, opt_gid);
	s.pd = ibv_alloc_pd(s.d.ctx);
	s.cq = cq_create(s.d.ctx, 64);
	if (!s.pd || !s.cq)
		die("server: PD/CQ: %m");
	qp_a = qp_create(&s.d, s.pd, s.cq, &qo);
	qp_b = qp_ex_create(&s.d, s.pd, s.cq);
	s.buf = aligned_alloc(4096, BUF);
	if (!qp_a || !s.buf)
		die("server: QP/buffer: %m");
	pattern_fill(s.buf, BUF, 1, 0);
	/* as pyverbs' MW tests register it: no remote rights of its own */
	s.mr = ibv_reg_mr(s.pd, s.buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	if (!s.mr)
		die("server: ibv_reg_mr: %m");
	lfd = oob_listen(opt_port);
	s.fd = oob_accept(lfd, opt_timeout_s);
	if (qp_exchange_connect(&s.d, qp_a, &qo, s.fd, 1) ||
	    qp_exchange_connect(&s.d, qp_b, &qo, s.fd, 1))
		die("server: connect");

	server_windows(&s);
	server_rereg(&s);

	oob_send(s.fd, "BYE");
	ibv_destroy_qp(qp_a);
	ibv_destroy_qp(qp_b);
	check(ibv_dereg_mr(s.mr) == 0, "ibv_dereg_mr of the MR the windows were bound to");
	cq_destroy(s.cq);
	ibv_dealloc_pd(s.pd);
	ibv_close_device(s.d.ctx);
	free(s.buf);
	close(s.fd);
	close(lfd);
	printf("# server: %d checks, %d failed\n", checks_run, checks_failed);
	return checks_failed ? 1 : 0;
}

/* --- client ------------------------------------------------------------------------------ */

static int run_client(const char *host)
{
	struct ibv_send_wr wr = {}, *bad;
	char line[MSG_MAX], op;
	struct ibv_sge sg;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct dev d;
	uint64_t addr, pat_off;
	uint32_t len, rkey, seed;
	uint8_t *buf;
	int fd, q, ret, st;

	dev_open(&d, opt_dev, opt_ibport, opt_gid);
	pd = ibv_alloc_pd(d.ctx);
	cq = cq_create(d.ctx, 64);
	if (!pd || !cq)
		die("client: PD/CQ: %m");
	qp_a = qp_create(&d, pd, cq, &qo);
	qp_b = qp_ex_create(&d, pd, cq);
	buf = aligned_alloc(4096, BUF);
	if (!qp_a || !buf)
		die("client: QP/buffer: %m");
	mr = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("client: ibv_reg_mr: %m");
	fd = oob_connect(host, opt_port, opt_timeout_s);
	if (qp_exchange_connect(&d, qp_a, &qo, fd, 0) || qp_exchange_connect(&d, qp_b, &qo, fd, 0))
		die("client: connect");

	for (;;) {
		if (oob_recv(fd, line, sizeof(line)))
			die("client: the server went away");
		if (!strcmp(line, "BYE"))
			break;
		if (sscanf(line, "X %d", &q) == 1) {
			reconnect(&d, q, fd, 0);
			continue;
		}
		if (sscanf(line, "%c %d %" SCNu64 " %u %u %u %" SCNu64, &op, &q, &addr, &len, &rkey,
			   &seed, &pat_off) != 7 || len > BUF || (q != 0 && q != 1))
			die("client: bad line '%s'", line);
		pattern_fill(buf, len, seed, 0);
		memset(buf + BUF / 2, 0, len < BUF / 2 ? len : BUF / 2);
		sg.addr = (uintptr_t)buf + (op == 'R' ? BUF / 2 : 0);
		sg.length = len;
		sg.lkey = mr->lkey;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 100;
		wr.sg_list = &sg;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		if (op == 'I') {
			wr.opcode = IBV_WR_SEND_WITH_INV;
			wr.invalidate_rkey = rkey;
		} else {
			wr.opcode = op == 'W' ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
			wr.wr.rdma.remote_addr = addr;
			wr.wr.rdma.rkey = rkey;
		}
		if (q) {
			struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(qp_b);

			ibv_wr_start(qx);
			qx->wr_id = wr.wr_id;
			qx->wr_flags = IBV_SEND_SIGNALED;
			if (op == 'I')
				ibv_wr_send_inv(qx, rkey);
			else if (op == 'W')
				ibv_wr_rdma_write(qx, rkey, addr);
			else
				ibv_wr_rdma_read(qx, rkey, addr);
			ibv_wr_set_sge(qx, sg.lkey, sg.addr, sg.length);
			ret = ibv_wr_complete(qx);
		} else {
			ret = ibv_post_send(qp_a, &wr, &bad);
		}
		st = -1;
		if (!check(!ret, "client: post %c on QP %c: %s", op, 'A' + q, strerror(ret))) {
			oob_send(fd, "DONE -1");
			continue;
		}
		if (poll_one(cq, &wc, opt_timeout_s * 1000) == 1)
			st = wc.status;
		if (op == 'R' && st == IBV_WC_SUCCESS)
			check(pattern_check(buf + BUF / 2, len, seed, pat_off) < 0,
			      "client: the READ through rkey %#x brought the server's bytes", rkey);
		if (st != IBV_WC_SUCCESS && st >= 0)
			check(qp_state(qp_of(q)) == IBV_QPS_ERR, "client: QP %c in ERR after %s",
			      'A' + q, ibv_wc_status_str((enum ibv_wc_status)st));
		oob_send(fd, "DONE %d", st);
	}

	ibv_destroy_qp(qp_a);
	ibv_destroy_qp(qp_b);
	ibv_dereg_mr(mr);
	cq_destroy(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(d.ctx);
	free(buf);
	close(fd);
	printf("# client: %d checks, %d failed\n", checks_run, checks_failed);
	return checks_failed ? 1 : 0;
}

/* --- QP creation across the reported limits ---------------------------------------------- */

static uint32_t pick(uint64_t *rs, uint32_t max)
{
	return max ? 1 + rnd32(rs) % max : 0;
}

/* Create and destroy one QP; 0 or the errno. The capacities it reports come back in @cap. */
static int try_qp(struct dev *d, struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type type,
		  int ex, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = type,
				       .cap = *cap };
	struct ibv_qp_init_attr_ex ix = { .send_cq = cq, .recv_cq = cq, .qp_type = type,
					  .cap = *cap, .pd = pd,
					  .comp_mask = IBV_QP_INIT_ATTR_PD };
	struct ibv_qp *qp;

	errno = 0;
	if (ex) {
		if (ex > 1) {
			ix.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
			ix.send_ops_flags = IBV_QP_EX_WITH_SEND;
		}
		qp = ibv_create_qp_ex(d->ctx, &ix);
		*cap = ix.cap;
	} else {
		qp = ibv_create_qp(pd, &ia);
		*cap = ia.cap;
	}
	if (!qp)
		return errno ? errno : -1;
	if (ibv_destroy_qp(qp))
		die("ibv_destroy_qp: %m");
	return 0;
}

static const char *type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : "UD";
}

static int run_caps(void)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	struct ibv_srq_init_attr sa = {};
	struct ibv_qp_cap cap, want;
	struct ibv_srq *srq;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct dev d;
	uint64_t rs;
	uint32_t maxwr, maxsge;
	int i, ti, ex, err, refused, fewer;
	char first[200];

	dev_open(&d, opt_dev, opt_ibport, opt_gid);
	maxwr = d.attr.max_qp_wr;
	maxsge = d.attr.max_sge;
	rs = opt_seed ? opt_seed : (uint64_t)now_ms();
	printf("# device %s: max_qp_wr %d, max_sge %d, max_cqe %d, max_srq_wr %d, "
	       "max_srq_sge %d; seed %" PRIu64 "\n", ibv_get_device_name(d.ctx->device),
	       d.attr.max_qp_wr, d.attr.max_sge, d.attr.max_cqe, d.attr.max_srq_wr,
	       d.attr.max_srq_sge, rs);
	pd = ibv_alloc_pd(d.ctx);
	cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
	if (!pd || !cq)
		die("PD/CQ: %m");
	check(maxwr > 0 && maxsge > 0 && d.attr.max_sge_rd <= d.attr.max_sge,
	      "the limits make sense (max_qp_wr %u, max_sge %u, max_sge_rd %d)", maxwr, maxsge,
	      d.attr.max_sge_rd);

	for (ti = 0; ti < 3; ti++) {
		for (ex = 0; ex < 3; ex++) {
			const char *how = ex == 0 ? "ibv_create_qp" : ex == 1 ?
					  "ibv_create_qp_ex" :
					  "ibv_create_qp_ex with send_ops_flags";

			/* at random: an eighth of the limits (as rdma-core's tests), then all */
			refused = fewer = 0;
			first[0] = 0;
			for (i = 0; i < opt_tries; i++) {
				uint32_t div = opt_eighth || i < opt_tries / 2 ? 8 : 1;

				want.max_send_wr = pick(&rs, maxwr / div);
				want.max_recv_wr = pick(&rs, maxwr / div);
				want.max_send_sge = pick(&rs, div == 8 ? maxsge / 2 : maxsge);
				want.max_recv_sge = pick(&rs, div == 8 ? maxsge / 2 : maxsge);
				want.max_inline_data = 0;
				cap = want;
				err = try_qp(&d, pd, cq, types[ti], ex, &cap);
				if (err) {
					if (!refused++)
						snprintf(first, sizeof(first), "%u/%u WRs, %u/%u "
							 "SGEs: %s", want.max_send_wr,
							 want.max_recv_wr, want.max_send_sge,
							 want.max_recv_sge, strerror(err));
				} else if (cap.max_send_wr < want.max_send_wr ||
					   cap.max_recv_wr < want.max_recv_wr ||
					   cap.max_send_sge < want.max_send_sge ||
					   cap.max_recv_sge < want.max_recv_sge) {
					if (!fewer++)
						snprintf(first, sizeof(first), "asked %u/%u/%u/%u, "
							 "got %u/%u/%u/%u", want.max_send_wr,
							 want.max_recv_wr, want.max_send_sge,
							 want.max_recv_sge, cap.max_send_wr,
							 cap.max_recv_wr, cap.max_send_sge,
							 cap.max_recv_sge);
				}
			}
			check(!refused && !fewer, "%s %s: %d QPs with random capacities within "
			      "the limits created, each with at least what it asked (%d refused, "
			      "%d short%s%s)", type_name(types[ti]), how, opt_tries, refused, fewer,
			      first[0] ? "; first: " : "", first);

			if (opt_eighth)
				continue;
			/* exactly the limits */
			want.max_send_wr = want.max_recv_wr = maxwr;
			want.max_send_sge = want.max_recv_sge = maxsge;
			want.max_inline_data = 0;
			cap = want;
			err = try_qp(&d, pd, cq, types[ti], ex, &cap);
			check(!err && cap.max_send_wr >= maxwr && cap.max_recv_wr >= maxwr &&
			      cap.max_send_sge >= maxsge && cap.max_recv_sge >= maxsge,
			      "%s %s: max_qp_wr %u WRs and max_sge %u SGEs each way: %s",
			      type_name(types[ti]), how, maxwr, maxsge,
			      err ? strerror(err) : "created");

			/* one beyond: EINVAL */
			want.max_send_sge = want.max_recv_sge = 1;
			want.max_send_wr = maxwr + 1;
			cap = want;
			err = try_qp(&d, pd, cq, types[ti], ex, &cap);
			check(err == EINVAL, "%s %s: max_send_wr max_qp_wr + 1: EINVAL (%s)",
			      type_name(types[ti]), how, err ? strerror(err) : "created");
			want.max_send_wr = 1;
			want.max_recv_wr = maxwr + 1;
			cap = want;
			err = try_qp(&d, pd, cq, types[ti], ex, &cap);
			check(err == EINVAL, "%s %s: max_recv_wr max_qp_wr + 1: EINVAL (%s)",
			      type_name(types[ti]), how, err ? strerror(err) : "created");
			want.max_recv_wr = 1;
			want.max_send_sge = maxsge + 1;
			cap = want;
			err = try_qp(&d, pd, cq, types[ti], ex, &cap);
			check(err == EINVAL, "%s %s: max_send_sge max_sge + 1: EINVAL (%s)",
			      type_name(types[ti]), how, err ? strerror(err) : "created");
			want.max_send_sge = 1;
			want.max_recv_sge = maxsge + 1;
			cap = want;
			err = try_qp(&d, pd, cq, types[ti], ex, &cap);
			check(err == EINVAL, "%s %s: max_recv_sge max_sge + 1: EINVAL (%s)",
			      type_name(types[ti]), how, err ? strerror(err) : "created");
		}
	}
	ibv_destroy_cq(cq);
	if (opt_eighth)
		goto out;

	/* CQs and SRQs at their limits */
	errno = 0;
	cq = ibv_create_cq(d.ctx, d.attr.max_cqe, NULL, NULL, 0);
	check(cq && cq->cqe >= d.attr.max_cqe, "a CQ of max_cqe %d entries (%s, %d)",
	      d.attr.max_cqe, cq ? "created" : strerror(errno), cq ? cq->cqe : 0);
	if (cq)
		ibv_destroy_cq(cq);
	errno = 0;
	cq = ibv_create_cq(d.ctx, d.attr.max_cqe + 1, NULL, NULL, 0);
	check(!cq && errno == EINVAL, "a CQ of max_cqe + 1 entries: EINVAL (%s)",
	      cq ? "created" : strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);
	if (d.attr.max_srq) {
		sa.attr.max_wr = d.attr.max_srq_wr;
		sa.attr.max_sge = d.attr.max_srq_sge;
		errno = 0;
		srq = ibv_create_srq(pd, &sa);
		check(srq && sa.attr.max_wr >= (uint32_t)d.attr.max_srq_wr &&
		      sa.attr.max_sge >= (uint32_t)d.attr.max_srq_sge,
		      "an SRQ of max_srq_wr %d x max_srq_sge %d (%s)", d.attr.max_srq_wr,
		      d.attr.max_srq_sge, srq ? "created" : strerror(errno));
		if (srq)
			ibv_destroy_srq(srq);
		for (i = 0; i < 2; i++) {
			sa.attr.max_wr = i ? 16 : d.attr.max_srq_wr + 1;
			sa.attr.max_sge = i ? d.attr.max_srq_sge + 1 : 1;
			errno = 0;
			srq = ibv_create_srq(pd, &sa);
			check(!srq && errno == EINVAL, "an SRQ of %s + 1: EINVAL (%s)",
			      i ? "max_srq_sge" : "max_srq_wr", srq ? "created" : strerror(errno));
			if (srq)
				ibv_destroy_srq(srq);
		}
	}
out:
	ibv_dealloc_pd(pd);
	ibv_close_device(d.ctx);
	printf("# caps: %d checks, %d failed\n", checks_run, checks_failed);
	return checks_failed ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: rdma-paths -d DEV -g GIDX [-i IBPORT] [-p PORT] [-t SECONDS] "
		"[SERVER]\n       rdma-paths -d DEV -g GIDX -q [-e] [-n TRIES] [-s SEED]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:i:g:p:t:qen:s:")) != -1) {
		switch (c) {
		case 'd': opt_dev = optarg; break;
		case 'i': opt_ibport = atoi(optarg); break;
		case 'g': opt_gid = atoi(optarg); break;
		case 'p': opt_port = atoi(optarg); break;
		case 't': opt_timeout_s = atoi(optarg); break;
		case 'q': opt_caps = 1; break;
		case 'e': opt_eighth = 1; break;
		case 'n': opt_tries = atoi(optarg); break;
		case 's': opt_seed = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (opt_gid < 0 || argc - optind > 1 || opt_tries < 2)
		usage();
	if (opt_caps)
		return run_caps();
	return optind < argc ? run_client(argv[optind]) : run_server();
}
