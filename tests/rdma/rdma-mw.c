// SPDX-License-Identifier: GPL-2.0
/*
 * rdma-mw: memory windows and invalidation between two hosts over an RC queue pair on
 * RoCEv2, what an application does to hand a peer access to part of a buffer for a while.
 *
 *   server:  rdma-mw -d DEV -g GIDX [-p PORT] [-t SECONDS]
 *   client:  rdma-mw -d DEV -g GIDX [-p PORT] [-t SECONDS] SERVER-ADDRESS
 *
 * The server registers 64 KiB (patterned, seed 1) with IBV_ACCESS_MW_BIND and allocates a
 * type 2 and a type 1 window.
 *   1. Type 2: bound with IBV_WR_BIND_MW over [4 KiB, 12 KiB), remote write and read, a new
 *      key byte. The client WRITEs 8 KiB of seed 2 through the window's rkey and READs the
 *      last 100 bytes back; the server finds exactly those 8 KiB changed.
 *   2. The client SENDs with invalidate of that rkey: the server's receive completes with
 *      IBV_WC_WITH_INV and the key in invalidated_rkey. Binding it again then works
 *      (IBV_WR_BIND_MW with the next key byte), and the server invalidates it itself with
 *      IBV_WR_LOCAL_INV (IBV_WC_LOCAL_INV).
 *   3. Type 1: ibv_bind_mw over [32 KiB, 36 KiB), remote read only; the client READs it
 *      (the server's bytes). ibv_dereg_mr of the MR is refused (EBUSY) while the window is
 *      bound; ibv_bind_mw with length 0 unbinds it, and the old rkey stops working.
 *   4. The client WRITEs through the invalidated type 2 rkey: IBV_WC_REM_ACCESS_ERR, its QP
 *      goes to error, the server's memory is unchanged.
 *
 * The client prints one line per check ("ok - what" / "not ok - what: why"), the server too;
 * each exits 0 when every check passed, 1 when one failed, 2 when it could not run.
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
#define W2_OFF		4096
#define W2_LEN		8192
#define W1_OFF		32768
#define W1_LEN		4096

static const char *opt_dev;
static int opt_port = 18800, opt_gid = -1, opt_ibport = 1, opt_timeout_s = 60;

static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	int r = poll_one(cq, wc, opt_timeout_s * 1000);

	if (r != 1)
		check(0, "%s: no completion (%d)", what, r);
	return r == 1;
}

static int wc_is(const struct ibv_wc *wc, enum ibv_wc_opcode op, enum ibv_wc_status st)
{
	return wc->status == st && (st != IBV_WC_SUCCESS || wc->opcode == op);
}

static int post_one(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, wr, &bad);
}

static int bind2(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mw *mw, struct ibv_mr *mr,
		 uint8_t *buf, uint32_t *rkey, const char *what)
{
	struct ibv_send_wr wr = {};
	struct ibv_wc wc;
	int ret;

	wr.wr_id = 20;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(*rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)buf + W2_OFF;
	wr.bind_mw.bind_info.length = W2_LEN;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ret = post_one(qp, &wr);
	if (!check(!ret, "%s: IBV_WR_BIND_MW posted (%s)", what, strerror(ret)))
		return 0;
	if (!wait_wc(cq, &wc, what))
		return 0;
	if (!check(wc_is(&wc, IBV_WC_BIND_MW, IBV_WC_SUCCESS), "%s: IBV_WC_BIND_MW success "
		   "(status %s, opcode %d)", what, ibv_wc_status_str(wc.status), wc.opcode))
		return 0;
	*rkey = wr.bind_mw.rkey;
	return 1;
}

static int run_server(void)
{
	struct qp_opts o = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			     .max_recv_sge = 1 };
	struct ibv_mw *mw1, *mw2;
	struct ibv_mw_bind mb = {};
	struct ibv_send_wr wr = {};
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_sge sg;
	struct ibv_mr *mr, *rmr;
	struct ibv_wc wc;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct dev d;
	char line[MSG_MAX];
	uint8_t *buf, rbuf[64];
	uint32_t rkey2, old1;
	int lfd, fd, ret;
	long bad;

	dev_open(&d, opt_dev, opt_ibport, opt_gid);
	check(!!(d.attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW), "server: device reports "
	      "IBV_DEVICE_MEM_WINDOW");
	check(!!(d.attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B),
	      "server: device reports IBV_DEVICE_MEM_WINDOW_TYPE_2B");
	pd = ibv_alloc_pd(d.ctx);
	cq = cq_create(d.ctx, 64);
	if (!pd || !cq)
		die("server: PD/CQ: %s", strerror(errno));
	qp = qp_create(&d, pd, cq, &o);
	buf = aligned_alloc(4096, BUF);
	if (!qp || !buf)
		die("server: QP/buffer: %s", strerror(errno));
	pattern_fill(buf, BUF, 1, 0);
	mr = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	rmr = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !rmr)
		die("server: ibv_reg_mr: %s", strerror(errno));
	mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (!check(mw1 && mw2, "server: ibv_alloc_mw type 1 and type 2%s%s",
		   mw1 && mw2 ? "" : ": ", mw1 && mw2 ? "" : strerror(errno)))
		return 1;
	lfd = oob_listen(opt_port);
	fd = oob_accept(lfd, opt_timeout_s);
	if (qp_exchange_connect(&d, qp, &o, fd, 1))
		die("server: connect");

	/* 1. type 2 window, bound through the send queue */
	rkey2 = mw2->rkey;
	if (!bind2(qp, cq, mw2, mr, buf, &rkey2, "type 2 bind"))
		return 1;
	check((rkey2 >> 8) == (mw2->rkey >> 8) && rkey2 != mw2->rkey,
	      "type 2 bind: the new rkey 0x%08x keeps the window's index, a new key byte", rkey2);
	/* a receive for the client's SEND with invalidate */
	sg.addr = (uintptr_t)rbuf;
	sg.length = sizeof(rbuf);
	sg.lkey = rmr->lkey;
	rwr.wr_id = 30;
	rwr.sg_list = &sg;
	rwr.num_sge = 1;
	if (ibv_post_recv(qp, &rwr, &rbad))
		die("server: post_recv");
	oob_send(fd, "W2 %" PRIu64 " %u %u", (uint64_t)(uintptr_t)buf + W2_OFF, W2_LEN,
		 rkey2);
	oob_expect(fd, line, sizeof(line), "WRITTEN");
	bad = pattern_check(buf + W2_OFF, W2_LEN, 2, 0);
	check(bad < 0, "type 2: the client's 8 KiB WRITE through the window arrived (first "
	      "bad byte %ld)", bad);
	check(pattern_check(buf, W2_OFF, 1, 0) < 0 &&
	      pattern_check(buf + W2_OFF + W2_LEN, BUF - W2_OFF - W2_LEN, 1,
			    W2_OFF + W2_LEN) < 0, "type 2: nothing outside the window changed");

	/* 2. the client's SEND with invalidate */
	if (wait_wc(cq, &wc, "SEND with invalidate")) {
		check(wc_is(&wc, IBV_WC_RECV, IBV_WC_SUCCESS) && wc.byte_len == 16,
		      "SEND with invalidate received (status %s, %u bytes)",
		      ibv_wc_status_str(wc.status), wc.byte_len);
		check((wc.wc_flags & IBV_WC_WITH_INV) && !(wc.wc_flags & IBV_WC_WITH_IMM) &&
		      wc.invalidated_rkey == rkey2, "receive completion: IBV_WC_WITH_INV, "
		      "invalidated_rkey 0x%08x (want 0x%08x)", wc.invalidated_rkey, rkey2);
	}
	/* bound again (the window is free), then invalidated locally */
	if (bind2(qp, cq, mw2, mr, buf, &rkey2, "type 2 bound again after invalidation")) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 40;
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.invalidate_rkey = rkey2;
		ret = post_one(qp, &wr);
		check(!ret, "IBV_WR_LOCAL_INV posted (%s)", strerror(ret));
		if (!ret && wait_wc(cq, &wc, "LOCAL_INV"))
			check(wc_is(&wc, IBV_WC_LOCAL_INV, IBV_WC_SUCCESS) && wc.wr_id == 40,
			      "IBV_WC_LOCAL_INV success (status %s)", ibv_wc_status_str(wc.status));
	}

	/* 3. type 1 window, ibv_bind_mw */
	old1 = mw1->rkey;
	mb.wr_id = 50;
	mb.send_flags = IBV_SEND_SIGNALED;
	mb.bind_info.mr = mr;
	mb.bind_info.addr = (uintptr_t)buf + W1_OFF;
	mb.bind_info.length = W1_LEN;
	mb.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	ret = ibv_bind_mw(qp, mw1, &mb);
	check(!ret && mw1->rkey != old1, "type 1: ibv_bind_mw (%s), rkey 0x%08x -> 0x%08x",
	      strerror(ret), old1, mw1->rkey);
	if (!ret && wait_wc(cq, &wc, "type 1 bind"))
		check(wc_is(&wc, IBV_WC_BIND_MW, IBV_WC_SUCCESS) && wc.wr_id == 50,
		      "type 1: IBV_WC_BIND_MW success (status %s)", ibv_wc_status_str(wc.status));
	oob_send(fd, "W1 %" PRIu64 " %u %u", (uint64_t)(uintptr_t)buf + W1_OFF, W1_LEN,
		 mw1->rkey);
	oob_expect(fd, line, sizeof(line), "READ1");
	ret = ibv_dereg_mr(mr);
	check(ret == EBUSY, "ibv_dereg_mr of an MR with a window bound: EBUSY (%s)",
	      strerror(ret));
	if (!ret)
		mr = NULL;
	memset(&mb.bind_info, 0, sizeof(mb.bind_info));
	mb.wr_id = 51;
	ret = ibv_bind_mw(qp, mw1, &mb);
	check(!ret, "type 1: ibv_bind_mw with length 0 (unbind) (%s)", strerror(ret));
	if (!ret && wait_wc(cq, &wc, "type 1 unbind"))
		check(wc_is(&wc, IBV_WC_BIND_MW, IBV_WC_SUCCESS) && wc.wr_id == 51,
		      "type 1 unbind: IBV_WC_BIND_MW success (status %s)",
		      ibv_wc_status_str(wc.status));

	/* 4. the client's WRITE through the invalidated key */
	oob_send(fd, "STALE %u", rkey2);
	oob_expect(fd, line, sizeof(line), "DONE");
	check(pattern_check(buf + W2_OFF, W2_LEN, 2, 0) < 0,
	      "the WRITE through the invalidated key changed nothing");
	check(qp_state(qp) == IBV_QPS_ERR, "server QP in ERR after the remote access error "
	      "(%s)", qp_state_str(qp_state(qp)));

	check(ibv_dealloc_mw(mw1) == 0 && ibv_dealloc_mw(mw2) == 0, "ibv_dealloc_mw both");
	check(!mr || ibv_dereg_mr(mr) == 0, "ibv_dereg_mr once no window is bound");
	ibv_destroy_qp(qp);
	ibv_dereg_mr(rmr);
	cq_destroy(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(d.ctx);
	free(buf);
	close(fd);
	close(lfd);
	printf("# server: %d checks, %d failed\n", checks_run, checks_failed);
	return checks_failed ? 1 : 0;
}

static int rdma_op(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
		   struct ibv_sge *sg, uint64_t raddr, uint32_t rkey, struct ibv_wc *wc)
{
	struct ibv_send_wr wr = {};
	int ret;

	wr.wr_id = op;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = sg;
	wr.num_sge = 1;
	if (op == IBV_WR_SEND_WITH_INV) {
		wr.invalidate_rkey = rkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	ret = post_one(qp, &wr);
	if (ret) {
		check(0, "post opcode %d: %s", op, strerror(ret));
		return 0;
	}
	return wait_wc(cq, wc, "client operation");
}

static int run_client(const char *host)
{
	struct qp_opts o = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			     .max_recv_sge = 1 };
	struct ibv_sge sg;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct dev d;
	char line[MSG_MAX];
	uint64_t addr;
	uint32_t len, rkey;
	uint8_t *buf;
	int fd;

	dev_open(&d, opt_dev, opt_ibport, opt_gid);
	pd = ibv_alloc_pd(d.ctx);
	cq = cq_create(d.ctx, 64);
	if (!pd || !cq)
		die("client: PD/CQ: %s", strerror(errno));
	qp = qp_create(&d, pd, cq, &o);
	buf = aligned_alloc(4096, BUF);
	if (!qp || !buf)
		die("client: QP/buffer: %s", strerror(errno));
	pattern_fill(buf, BUF, 2, 0);
	mr = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("client: ibv_reg_mr: %s", strerror(errno));
	fd = oob_connect(host, opt_port, opt_timeout_s);
	if (qp_exchange_connect(&d, qp, &o, fd, 0))
		die("client: connect");

	oob_expect(fd, line, sizeof(line), "W2");
	if (sscanf(line, "W2 %" SCNu64 " %u %u", &addr, &len, &rkey) != 3)
		die("client: bad line '%s'", line);
	sg.addr = (uintptr_t)buf;
	sg.length = len;
	sg.lkey = mr->lkey;
	if (rdma_op(qp, cq, IBV_WR_RDMA_WRITE, &sg, addr, rkey, &wc))
		check(wc_is(&wc, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS), "type 2: 8 KiB WRITE through "
		      "the window (%s)", ibv_wc_status_str(wc.status));
	sg.addr = (uintptr_t)buf + 16384;
	sg.length = 100;
	if (rdma_op(qp, cq, IBV_WR_RDMA_READ, &sg, addr + len - 100, rkey, &wc))
		check(wc_is(&wc, IBV_WC_RDMA_READ, IBV_WC_SUCCESS) &&
		      pattern_check(buf + 16384, 100, 2, len - 100) < 0,
		      "type 2: READ of the window's last 100 bytes (%s)",
		      ibv_wc_status_str(wc.status));
	oob_send(fd, "WRITTEN");
	sg.addr = (uintptr_t)buf;
	sg.length = 16;
	if (rdma_op(qp, cq, IBV_WR_SEND_WITH_INV, &sg, 0, rkey, &wc))
		check(wc_is(&wc, IBV_WC_SEND, IBV_WC_SUCCESS), "SEND with invalidate of the "
		      "window's rkey (%s)", ibv_wc_status_str(wc.status));

	oob_expect(fd, line, sizeof(line), "W1");
	if (sscanf(line, "W1 %" SCNu64 " %u %u", &addr, &len, &rkey) != 3)
		die("client: bad line '%s'", line);
	sg.addr = (uintptr_t)buf + 32768;
	sg.length = len;
	if (rdma_op(qp, cq, IBV_WR_RDMA_READ, &sg, addr, rkey, &wc))
		check(wc_is(&wc, IBV_WC_RDMA_READ, IBV_WC_SUCCESS) &&
		      pattern_check(buf + 32768, len, 1, W1_OFF) < 0,
		      "type 1: 4 KiB READ through the window, the server's bytes (%s)",
		      ibv_wc_status_str(wc.status));
	oob_send(fd, "READ1");

	oob_expect(fd, line, sizeof(line), "STALE");
	if (sscanf(line, "STALE %u", &rkey) != 1)
		die("client: bad line '%s'", line);
	sg.addr = (uintptr_t)buf;
	sg.length = 64;
	pattern_fill(buf, 64, 3, 0);
	if (rdma_op(qp, cq, IBV_WR_RDMA_WRITE, &sg, addr - W1_OFF + W2_OFF, rkey, &wc))
		check(wc.status == IBV_WC_REM_ACCESS_ERR, "WRITE through the invalidated rkey: "
		      "IBV_WC_REM_ACCESS_ERR (%s)", ibv_wc_status_str(wc.status));
	check(qp_state(qp) == IBV_QPS_ERR, "client QP in ERR (%s)", qp_state_str(qp_state(qp)));
	oob_send(fd, "DONE");

	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	cq_destroy(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(d.ctx);
	free(buf);
	close(fd);
	printf("# client: %d checks, %d failed\n", checks_run, checks_failed);
	return checks_failed ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: rdma-mw -d DEV -g GIDX [-i IBPORT] [-p PORT] [-t SECONDS] "
		"[SERVER]\n");
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
	return optind < argc ? run_client(argv[optind]) : run_server();
}
