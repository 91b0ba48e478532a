/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fast registration and invalidation (TERN_RDMA_CAP_MEM_MGT): FAST_REG MRs start free;
 * REG_MR gives one a translation, rights and a new key byte in send-queue order; remote
 * WRITE/READ and local SGEs through it move the right bytes; LOCAL_INV and a peer's SEND
 * with invalidate (IETH on the wire, F_INV and the key in the receive CQE) take it away, and
 * every later access through the key fails with the right status on both sides; stale key
 * bytes, a busy MR, another PD, a bad segment; CQEs in order behind outstanding WQEs; a
 * flushed REG_MR leaves the MR free.
 */
#include "test_rdma.h"

#define RMS(f)	OFF(struct tern_reg_mr_seg, f)
#define SQE(f)	OFF(struct tern_sq_wqe, f)

static const uint32_t acc_rw = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
			       TERN_ACCESS_REMOTE_READ;

/* A FAST_REG MR with room for @max_pages: the command status, *idx its index. */
static int fr_create(struct rdev *d, uint32_t pdn, uint32_t max_pages, uint32_t *idx)
{
	return key_create(d, pdn, TERN_MR_F_FAST_REG, max_pages, idx);
}

static int fr_destroy(struct rdev *d, uint32_t key)
{
	uint8_t in[4];

	wr32(in, key);
	return rdev_cmd(d, TERN_CMD_DESTROY_MR, in, 4, NULL, 0, NULL);
}

static void post_linv(struct rdev *d, struct rqp *qp, uint64_t wr_id, uint32_t key)
{
	post_send(d, qp, TERN_WQE_LOCAL_INV, TERN_WQE_F_SIGNALED, wr_id, NULL, 0, 0, key, 0);
}

/* Let @ns of virtual time pass and discard side @s's CQEs (flushes nobody checks). */
static void drain(struct conn *c, unsigned int s, uint64_t ns)
{
	struct wc w;

	wire_advance(&c->w, ns);
	while (cq_poll(c->d[s], &c->cq[s], &w))
		;
}

/* Post one WQE already written, ring, and take the one CQE of side @s. */
static bool one(struct conn *c, unsigned int s, struct wc *w)
{
	ring_sq(c->d[s], &c->qp[s]);
	return conn_poll(c, s, w, 1, 1000000000ull) == 1;
}

/*
 * The whole life of a remotely used fast-registered MR: free at first (a WRITE through it
 * would fail), REG_MR, WRITE and READ from the peer land in the pages the page list named,
 * SEND with invalidate from the peer (IETH on the wire, F_INV and the key in the receive
 * CQE), then the next WRITE through the key is a remote access error.
 */
static void t_frwr_remote(void)
{
	const uint64_t iova = 0x10000100ull, len = 16384;
	struct rmr back, lm;
	bool mrs = false;
	struct connopt o;
	struct conn c;
	struct pkt p;
	struct sge sg;
	struct wc w[2];
	uint8_t q[sizeof(struct tern_cmd_query_rdma_out)];
	uint32_t idx = 0, key, i, n;
	unsigned int from;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(rdev_cmd(c.d[1], TERN_CMD_QUERY_RDMA, NULL, 0, q, sizeof(q), NULL) == 0);
	CHECK(rd32(q + OFF(struct tern_cmd_query_rdma_out, cap_flags)) & TERN_RDMA_CAP_MEM_MGT);
	CHECK_EQ(rd32(q + OFF(struct tern_cmd_query_rdma_out, max_fast_reg_pages)), 512);
	RQ(mr_create(c.d[1], &back, c.d[1]->pdn, len, TERN_ACCESS_LOCAL_WRITE, 0x100) == 0);
	if (mr_create(c.d[0], &lm, c.d[0]->pdn, len, TERN_ACCESS_LOCAL_WRITE, 0) != 0) {
		mr_release(&back);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[1], &back, 1);
	mr_fill(c.d[0], &lm, 2);
	RQ(fr_create(c.d[1], c.d[1]->pdn, 8, &idx) == TERN_CMD_OK);
	key = idx << 8 | 0x34;

	/* REG_MR on the responder side: its own CQE, in order, opcode REG_MR, no bytes */
	post_reg(c.d[1], &c.qp[1], 10, key, &back, iova, len, back.npages, (uint8_t)acc_rw);
	RQ(one(&c, 1, w));
	CHECK_WC(&w[0], TERN_WQE_REG_MR, TERN_CQE_OK, 10);
	CHECK_EQ(w[0].byte_len, 0);

	/* WRITE 8 KiB at iova + 1000: lands at byte 1000 of the pages (offset 0x100 in page 0) */
	sg = mr_sge(&lm, 0, 8192);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 11, &sg, 1,
		  iova + 1000, key, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 11);
	CHECK_EQ(mr_diff_pattern(c.d[1], &back, 1000, 8192, 2, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &back, 0, 1000, 1, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &back, 9192, len - 9192, 1, 9192), -1);

	/* READ the last 4 KiB back into lm at 8192 */
	sg = mr_sge(&lm, 8192, 4096);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 12, &sg, 1,
		  iova + len - 4096, key, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_OK, 12);
	CHECK_EQ(w[0].byte_len, 4096);
	CHECK_EQ(mr_diff_pattern(c.d[0], &lm, 8192, 4096, 1, len - 4096), -1);

	/* beyond the registered length: a remote access error would end the QP; checked below */

	/* SEND with invalidate of the key: IETH on the wire, the key in the receive CQE */
	sg = mr_sge(&back, 0, 64);
	post_recv(c.d[1], &c.qp[1], 20, &sg, 1);
	ring_rq(c.d[1], &c.qp[1]);
	from = c.w.nlog;
	sg = mr_sge(&lm, 0, 40);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND_INV, TERN_WQE_F_SIGNALED, 13, &sg, 1, 0, key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 1, w, 1, 1000000000ull) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 20);
	CHECK_EQ(w[0].byte_len, 40);
	CHECK(w[0].flags & TERN_CQE_F_INV);
	CHECK(!(w[0].flags & TERN_CQE_F_IMM));
	CHECK_EQ(rd32(w[0].raw + OFF(struct tern_cqe, invalidated_rkey)), key);
	RQ(conn_poll(&c, 0, w, 1, 1000000000ull) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND_INV, TERN_CQE_OK, 13);
	for (i = from, n = 0; i < c.w.nlog; i++) {
		if (c.w.log[i].dir != 0 || !pkt_parse(c.w.log[i].data, c.w.log[i].len, &p))
			continue;
		if (p.opcode == OP_SEND_ONLY_INV) {
			n++;
			CHECK(p.has_ieth);
			CHECK_EQ(p.ieth, key);
			CHECK_EQ(p.payload_len, 40);
			CHECK_EQ(p.icrc_wire, p.icrc_calc);
		}
	}
	CHECK_EQ(n, 1);

	/* the key is gone: a WRITE through it is NAKed, both QPs end in error */
	sg = mr_sge(&lm, 0, 16);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 14, &sg, 1, iova,
		  key, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_REM_ACCESS_ERR, 14);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
	CHECK_EQ(mr_diff_pattern(c.d[1], &back, 0, 40, 2, 0), -1);	/* the SEND's bytes */
	/* the FAST_REG MR is destroyed by index, whatever its key byte now */
	CHECK_EQ(fr_destroy(c.d[1], idx << 8 | 0x99), TERN_CMD_OK);
	CHECK_EQ(fr_destroy(c.d[1], idx << 8 | 0x34), TERN_CMD_BAD_RESOURCE);
out:
	if (mrs) {
		mr_release(&back);
		mr_release(&lm);
	}
	conn_free(&c);
}

/*
 * Local use and key ownership on one side: a SEND gathers from a fast-registered MR; after
 * LOCAL_INV the stale key fails locally (LOC_PROT_ERR, TERN_SYND_LKEY); REG_MR again with a
 * new key byte works, REG_MR of a valid MR is refused (MR_STATE).
 */
static void t_frwr_local(void)
{
	const uint64_t iova = 0x20000100ull, len = 8192;
	struct rmr back, rm;
	bool mrs = false;
	struct connopt o;
	struct conn c;
	struct sge sg;
	struct wc w[2];
	uint32_t idx = 0, k1, k2;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &back, c.d[0]->pdn, len, TERN_ACCESS_LOCAL_WRITE, 0x100) == 0);
	if (mr_create(c.d[1], &rm, c.d[1]->pdn, len, TERN_ACCESS_LOCAL_WRITE, 0) != 0) {
		mr_release(&back);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &back, 3);
	mr_fill(c.d[1], &rm, 4);
	RQ(fr_create(c.d[0], c.d[0]->pdn, 4, &idx) == TERN_CMD_OK);
	k1 = idx << 8 | 0x01;
	k2 = idx << 8 | 0x02;

	/* REG_MR and a SEND through the new lkey, posted together: the SEND sees the MR */
	post_reg(c.d[0], &c.qp[0], 1, k1, &back, iova, len, back.npages, TERN_ACCESS_LOCAL_WRITE);
	sg = mr_sge(&rm, 0, len);
	post_recv(c.d[1], &c.qp[1], 50, &sg, 1);
	ring_rq(c.d[1], &c.qp[1]);
	sg.addr = iova + 100;
	sg.len = 3000;
	sg.lkey = k1;
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 2, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 2, 1000000000ull) == 2);
	CHECK_WC(&w[0], TERN_WQE_REG_MR, TERN_CQE_OK, 1);
	CHECK_WC(&w[1], TERN_WQE_SEND, TERN_CQE_OK, 2);
	RQ(conn_poll(&c, 1, w, 1, 1000000000ull) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 50);
	CHECK_EQ(w[0].byte_len, 3000);
	CHECK(!(w[0].flags & TERN_CQE_F_INV));
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0, 3000, 3, 100), -1);

	/* REG_MR of a registered MR: refused, the QP ends in error */
	post_reg(c.d[0], &c.qp[0], 3, k2, &back, iova, len, back.npages, TERN_ACCESS_LOCAL_WRITE);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_REG_MR, TERN_CQE_LOC_PROT_ERR, 3);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_MR_STATE);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
	drain(&c, 1, 100000000ull);	/* the peer's receive, flushed or not */
	conn_free(&c);

	/* a new connection: the MR is still registered with k1 (the refused REG_MR changed
	 * nothing); LOCAL_INV with a stale key byte fails, with k1 it works */
	mr_release(&back);
	mr_release(&rm);
	mrs = false;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &back, c.d[0]->pdn, len, TERN_ACCESS_LOCAL_WRITE, 0x100) == 0);
	if (mr_create(c.d[1], &rm, c.d[1]->pdn, len, TERN_ACCESS_LOCAL_WRITE, 0) != 0) {
		mr_release(&back);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &back, 5);
	RQ(fr_create(c.d[0], c.d[0]->pdn, 4, &idx) == TERN_CMD_OK);
	k1 = idx << 8 | 0x01;
	k2 = idx << 8 | 0x02;
	post_reg(c.d[0], &c.qp[0], 1, k1, &back, iova, len, back.npages, TERN_ACCESS_LOCAL_WRITE);
	post_linv(c.d[0], &c.qp[0], 2, k1);
	post_reg(c.d[0], &c.qp[0], 3, k2, &back, iova, len, back.npages, TERN_ACCESS_LOCAL_WRITE);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 2, 1000000000ull) == 2);
	CHECK_WC(&w[0], TERN_WQE_REG_MR, TERN_CQE_OK, 1);
	CHECK_WC(&w[1], TERN_WQE_LOCAL_INV, TERN_CQE_OK, 2);
	RQ(conn_poll(&c, 0, w, 1, 1000000000ull) == 1);
	CHECK_WC(&w[0], TERN_WQE_REG_MR, TERN_CQE_OK, 3);
	/* the old key byte is stale now: a SEND gathering through it fails locally */
	sg.addr = iova;
	sg.len = 64;
	sg.lkey = k1;
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 4, &sg, 1, 0, 0, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_SEND, TERN_CQE_LOC_PROT_ERR, 4);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_LKEY);
	CHECK_EQ(c.d[1] ? RDEV_STAT(c.d[1], rx_send_requests) : 0, 0);
	/* the QP is in error: a REG_MR posted now is flushed and leaves the MR free, so that
	 * DESTROY_MR and a later registration find it so */
	post_reg(c.d[0], &c.qp[0], 5, idx << 8 | 0x03, &back, iova, len, back.npages,
		 TERN_ACCESS_LOCAL_WRITE);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_REG_MR, TERN_CQE_WR_FLUSH_ERR, 5);
	CHECK_EQ(fr_destroy(c.d[0], k2), TERN_CMD_OK);
out:
	if (mrs) {
		mr_release(&back);
		mr_release(&rm);
	}
	conn_free(&c);
}

/* Side 0's QP failed locally (it sent nothing): flush it, then RESET and connect it again. */
static bool reconnect0(struct conn *c, const struct connopt *o)
{
	struct qpattr a = { .state = TERN_QPS_RESET };

	drain(c, 0, 10000000ull);
	if (qp_modify(c->d[0], c->qp[0].qpn, TERN_QP_ATTR_STATE, &a, NULL) != 0)
		return false;
	c->qp[0].sq_pi = c->qp[0].rq_pi = 0;
	return qp_connect(c->d[0], &c->qp[0], c->d[1], c->qp[1].qpn, o, 0);
}

/*
 * What REG_MR, LOCAL_INV and SEND_INV refuse: a bad segment (more pages than the MR holds,
 * a length the pages do not cover, REMOTE_WRITE without LOCAL_WRITE) is LOC_QP_OP_ERR
 * (BAD_REG); another PD's MR, a regular MR or a stale byte is LOC_PROT_ERR; CREATE_MR
 * with FAST_REG checks its fields; a SEND with invalidate of a regular MR's key completes
 * with REM_INV_REQ_ERR on both sides (INV_RKEY at the responder) and the regular MR stays.
 */
static void t_frwr_errors(void)
{
	typedef struct tern_cmd_create_mr_in T;
	const uint64_t iova = 0x30000000ull;
	struct rmr back, lm, rm;
	unsigned int nmr = 0;
	struct connopt o;
	struct conn c;
	struct sge sg;
	struct wc w[2];
	uint8_t in[sizeof(T)];
	uint32_t idx = 0, pd2 = 0, idx2 = 0;
	struct cqe cq;
	struct {
		uint32_t npages;
		uint64_t len;
		uint8_t access;
		uint8_t st, synd;
	} bad[] = {
		{ 5, 4096, TERN_ACCESS_LOCAL_WRITE, TERN_CQE_LOC_QP_OP_ERR, TERN_SYND_BAD_REG },
		{ 1, 4097, TERN_ACCESS_LOCAL_WRITE, TERN_CQE_LOC_QP_OP_ERR, TERN_SYND_BAD_REG },
		{ 1, 4096, TERN_ACCESS_REMOTE_WRITE, TERN_CQE_LOC_QP_OP_ERR, TERN_SYND_BAD_REG },
		{ 1, 0, TERN_ACCESS_LOCAL_WRITE, TERN_CQE_LOC_QP_OP_ERR, TERN_SYND_BAD_REG },
	};
	unsigned int i;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &back, c.d[0]->pdn, 16384, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	nmr = 1;
	RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, 4096, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	nmr = 2;
	RQ(mr_create(c.d[1], &rm, c.d[1]->pdn, 4096, acc_rw, 0) == 0);
	nmr = 3;
	mr_fill(c.d[1], &rm, 6);

	/* CREATE_MR FAST_REG: no translation fields, 1..512 pages, not with PHYSICAL */
	RQ(fr_create(c.d[0], c.d[0]->pdn, 4, &idx) == TERN_CMD_OK);
	CHECK_EQ(fr_create(c.d[0], c.d[0]->pdn, 0, &idx2), TERN_CMD_BAD_PARAM);
	CHECK_EQ(fr_create(c.d[0], c.d[0]->pdn, 513, &idx2), TERN_CMD_BAD_PARAM);
	memset(in, 0, sizeof(in));
	wr32(in + OFF(T, pdn), c.d[0]->pdn);
	in[OFF(T, flags)] = TERN_MR_F_FAST_REG;
	wr32(in + OFF(T, npages), 4);
	wr32(in + OFF(T, access), TERN_ACCESS_LOCAL_WRITE);
	CHECK_EQ(rdev_cmd(c.d[0], TERN_CMD_CREATE_MR, in, sizeof(in), NULL, 0, &cq),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(cq.result, 0);
	wr32(in + OFF(T, access), 0);
	in[OFF(T, flags)] = TERN_MR_F_FAST_REG | TERN_MR_F_PHYSICAL;
	CHECK_EQ(rdev_cmd(c.d[0], TERN_CMD_CREATE_MR, in, sizeof(in), NULL, 0, NULL),
		 TERN_CMD_BAD_PARAM);

	/* a bad segment each time: the WQE fails, the QP ends in error; a new pair each */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		post_reg(c.d[0], &c.qp[0], 100 + i, idx << 8 | 7, &back, iova, bad[i].len,
			 bad[i].npages, bad[i].access);
		RQ(one(&c, 0, w));
		CHECK_WC(&w[0], TERN_WQE_REG_MR, bad[i].st, 100 + i);
		CHECK_EQ(w[0].vendor_err, bad[i].synd);
		CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
		RQ(reconnect0(&c, &o));
	}

	/* another PD's FAST_REG MR */
	RQ(pd_create(c.d[0], &pd2) == 0);
	RQ(fr_create(c.d[0], pd2, 4, &idx2) == TERN_CMD_OK);
	post_reg(c.d[0], &c.qp[0], 200, idx2 << 8 | 1, &back, iova, 4096, 1,
		 TERN_ACCESS_LOCAL_WRITE);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_REG_MR, TERN_CQE_LOC_PROT_ERR, 200);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_PD);
	RQ(reconnect0(&c, &o));

	/* LOCAL_INV of a regular MR's key: LOC_PROT_ERR, the MR stays usable */
	post_linv(c.d[0], &c.qp[0], 201, lm.key);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_LOCAL_INV, TERN_CQE_LOC_PROT_ERR, 201);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_LKEY);
	RQ(reconnect0(&c, &o));

	/* SEND with invalidate of the peer's regular MR: an invalid request on both sides */
	sg = mr_sge(&rm, 0, 64);
	post_recv(c.d[1], &c.qp[1], 300, &sg, 1);
	ring_rq(c.d[1], &c.qp[1]);
	sg = mr_sge(&lm, 0, 32);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND_INV, TERN_WQE_F_SIGNALED, 301, &sg, 1, 0,
		  rm.key, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_SEND_INV, TERN_CQE_REM_INV_REQ_ERR, 301);
	RQ(conn_poll(&c, 1, w, 1, 1000000000ull) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_REM_INV_REQ_ERR, 300);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_INV_RKEY);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
	/* the regular MR was not invalidated: DESTROY_MR finds it by its key */
	CHECK_EQ(mr_destroy(c.d[1], &rm), TERN_CMD_OK);
	CHECK_EQ(fr_destroy(c.d[0], idx2 << 8), TERN_CMD_OK);
	CHECK_EQ(pd_destroy(c.d[0], pd2), TERN_CMD_OK);
out:
	if (nmr > 0)
		mr_release(&back);
	if (nmr > 1)
		mr_release(&lm);
	if (nmr > 2)
		mr_release(&rm);
	conn_free(&c);
}

/* Drop the first *ctx ACK frames from side 1 (decremented as they go). */
static enum wire_action drop_acks(struct wire *w, unsigned int dir, unsigned int idx,
				  uint8_t *frame, size_t *len)
{
	unsigned int *left = w->ctx;
	struct pkt p;

	(void)idx;
	if (dir != 1 || !*left || !pkt_parse(frame, *len, &p) || p.opcode != OP_ACK)
		return W_DELIVER;
	(*left)--;
	return W_DROP;
}

/*
 * Ordering: a REG_MR and a LOCAL_INV posted behind WRITEs whose ACKs are lost complete only
 * after those WRITEs, in order; the LOCAL_INV waits for them (the retransmitted WRITE still
 * finds its local key valid) and the data arrives whole.
 */
static void t_frwr_order(void)
{
	const uint64_t iova = 0x40000000ull, len = 65536;
	struct rmr back, rm;
	bool mrs = false;
	struct connopt o;
	struct conn c;
	struct sge sg;
	struct wc w[4];
	uint32_t idx = 0, k;
	unsigned int drops = 0;

	connopt_default(&o);
	o.timeout = 10;		/* 4 ms */
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &back, c.d[0]->pdn, len, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	if (mr_create(c.d[1], &rm, c.d[1]->pdn, len, acc_rw, 0) != 0) {
		mr_release(&back);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &back, 7);
	RQ(fr_create(c.d[0], c.d[0]->pdn, 16, &idx) == TERN_CMD_OK);
	k = idx << 8 | 0x42;
	post_reg(c.d[0], &c.qp[0], 1, k, &back, iova, len, back.npages, TERN_ACCESS_LOCAL_WRITE);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_REG_MR, TERN_CQE_OK, 1);

	/* the peer drops its first ACKs: the WRITE is retransmitted after LOCAL_INV was posted */
	drops = 2;
	c.w.ctx = &drops;
	c.w.filter = drop_acks;
	sg.addr = iova;
	sg.len = (uint32_t)len;
	sg.lkey = k;
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 2, &sg, 1, rm.iova,
		  rm.key, 0);
	post_linv(c.d[0], &c.qp[0], 3, k);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 4, &sg, 1, rm.iova,
		  rm.key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, w, 3, 2000000000ull) == 3);
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 2);
	CHECK_WC(&w[1], TERN_WQE_LOCAL_INV, TERN_CQE_OK, 3);
	/* the second WRITE names the invalidated key: it fails locally, after the others */
	CHECK_WC(&w[2], TERN_WQE_RDMA_WRITE, TERN_CQE_LOC_PROT_ERR, 4);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0, len, 7, 0), -1);
	CHECK_EQ(drops, 0);
	CHECK(RDEV_STAT(c.d[0], retrans_pkts) > 0);
out:
	c.w.filter = NULL;
	if (mrs) {
		mr_release(&back);
		mr_release(&rm);
	}
	conn_free(&c);
}

/* A window of @type (TERN_MR_F_MW_TYPE1/2): the command status, *idx its index. */
static int mw_create(struct rdev *d, uint32_t pdn, uint8_t type, uint32_t *idx)
{
	return key_create(d, pdn, type, 0, idx);
}

/* Both QPs (in error or not): flushed, RESET, connected again from their first PSNs. */
static bool reconnect_both(struct conn *c, const struct connopt *o)
{
	struct qpattr a = { .state = TERN_QPS_RESET };
	unsigned int s;

	for (s = 0; s < 2; s++) {
		drain(c, s, 10000000ull);
		if (qp_modify(c->d[s], c->qp[s].qpn, TERN_QP_ATTR_STATE, &a, NULL) != 0)
			return false;
		c->qp[s].sq_pi = c->qp[s].rq_pi = 0;
	}
	return qp_connect(c->d[0], &c->qp[0], c->d[1], c->qp[1].qpn, o, 0) &&
	       qp_connect(c->d[1], &c->qp[1], c->d[0], c->qp[0].qpn, o, 1);
}

/*
 * A connected pair for the window tests: @lm on side 0 (local write), @rm (MW_BIND) and
 * @plain (no MW_BIND) on side 1, 16/16/4 KiB; *@nmr counts the MRs made (for the cleanup);
 * a type 2 (*@w2) and a type 1 (*@w1) window on side 1. False (reported) on failure.
 */
static bool mw_pair(struct conn *c, const struct connopt *o, struct rmr *lm, struct rmr *rm,
		    struct rmr *plain, unsigned int *nmr, uint32_t *w2, uint32_t *w1)
{
	*nmr = 0;
	RQ(conn_setup(c, o));
	RQ(mr_create(c->d[0], lm, c->d[0]->pdn, 16384, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	*nmr = 1;
	RQ(mr_create(c->d[1], rm, c->d[1]->pdn, 16384, acc_rw | TERN_ACCESS_MW_BIND, 0) == 0);
	*nmr = 2;
	RQ(mr_create(c->d[1], plain, c->d[1]->pdn, 4096, acc_rw, 0) == 0);
	*nmr = 3;
	RQ(mw_create(c->d[1], c->d[1]->pdn, TERN_MR_F_MW_TYPE2, w2) == TERN_CMD_OK);
	RQ(mw_create(c->d[1], c->d[1]->pdn, TERN_MR_F_MW_TYPE1, w1) == TERN_CMD_OK);
	return true;
out:
	return false;
}

/*
 * Memory windows: a type 2 window bound over 4 KiB in the middle of an MR (MW_BIND) takes
 * remote WRITE and READ inside it only; it holds the MR (DESTROY_MR BAD_STATE); a local SGE
 * through it fails; a second bind is refused until the peer's SEND_INV unbinds it (F_INV in
 * the CQE); the stale window key then fails remotely. A type 1 window binds, binds again
 * elsewhere (the old range refused), and unbinds with length 0.
 */
static void t_mw(void)
{
	const uint8_t racc = TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_REMOTE_READ;
	struct rmr lm, rm, plain;
	unsigned int nmr = 0;
	struct connopt o;
	struct conn c;
	struct sge sg;
	struct wc w[2];
	uint32_t w2 = 0, w1 = 0, k2, k1;
	uint8_t buf[64];

	connopt_default(&o);
	RQ(mw_pair(&c, &o, &lm, &rm, &plain, &nmr, &w2, &w1));
	mr_fill(c.d[0], &lm, 8);
	mr_fill(c.d[1], &rm, 9);
	k2 = w2 << 8 | 0x21;
	k1 = w1 << 8 | 0x11;

	/* unbound: a window key is no key at all; an MR without MW_BIND cannot take one */
	post_bind(c.d[1], &c.qp[1], 1, k2, &plain, 0, 4096, racc);
	RQ(one(&c, 1, w));
	CHECK_WC(&w[0], TERN_WQE_BIND_MW, TERN_CQE_MW_BIND_ERR, 1);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_ACCESS);
	RQ(reconnect_both(&c, &o));

	/* type 2 over [4096, 8192) of rm, remote write and read */
	post_bind(c.d[1], &c.qp[1], 2, k2, &rm, 4096, 4096, racc);
	RQ(one(&c, 1, w));
	CHECK_WC(&w[0], TERN_WQE_BIND_MW, TERN_CQE_OK, 2);
	CHECK_EQ(mr_destroy(c.d[1], &rm), TERN_CMD_BAD_STATE);	/* held by the window */
	sg = mr_sge(&lm, 0, 4096);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 3, &sg, 1,
		  rm.iova + 4096, k2, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 3);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 4096, 4096, 8, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0, 4096, 9, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 8192, 8192, 9, 8192), -1);
	sg = mr_sge(&lm, 8192, 100);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 4, &sg, 1,
		  rm.iova + 8192 - 100, k2, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_OK, 4);
	CHECK_EQ(mr_diff_pattern(c.d[0], &lm, 8192, 100, 8, 4096 - 100), -1);
	/* bound already: a type 2 window is not bound twice */
	post_bind(c.d[1], &c.qp[1], 5, w2 << 8 | 0x22, &rm, 0, 4096, racc);
	RQ(one(&c, 1, w));
	CHECK_WC(&w[0], TERN_WQE_BIND_MW, TERN_CQE_MW_BIND_ERR, 5);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_MR_STATE);
	RQ(reconnect_both(&c, &o));
	/* a local SGE through a window: no such lkey */
	sg.addr = rm.iova + 4096;
	sg.len = 16;
	sg.lkey = k2;
	post_send(c.d[1], &c.qp[1], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 6, &sg, 1,
		  lm.iova, lm.key, 0);
	RQ(one(&c, 1, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_LOC_PROT_ERR, 6);
	CHECK_EQ(w[0].vendor_err, TERN_SYND_LKEY);
	RQ(reconnect_both(&c, &o));
	/* one byte before the window, through its key: a remote access error */
	sg = mr_sge(&lm, 0, 16);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 7, &sg, 1,
		  rm.iova + 4095, k2, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_REM_ACCESS_ERR, 7);
	conn_free(&c);
	mr_release(&lm);
	mr_release(&rm);
	mr_release(&plain);
	nmr = 0;

	/* a new pair: SEND_INV unbinds a type 2 window; type 1 binds, rebinds, unbinds */
	RQ(mw_pair(&c, &o, &lm, &rm, &plain, &nmr, &w2, &w1));
	mr_fill(c.d[0], &lm, 10);
	k2 = w2 << 8 | 0x31;
	k1 = w1 << 8 | 0x41;
	post_bind(c.d[1], &c.qp[1], 10, k2, &rm, 0, 4096, racc);
	post_bind(c.d[1], &c.qp[1], 11, k1, &rm, 8192, 4096, TERN_ACCESS_REMOTE_READ);
	post_bind(c.d[1], &c.qp[1], 12, w1 << 8 | 0x42, &rm, 12288, 4096,
		  TERN_ACCESS_REMOTE_READ);
	ring_sq(c.d[1], &c.qp[1]);
	RQ(conn_poll(&c, 1, w, 2, 1000000000ull) == 2);
	CHECK_WC(&w[0], TERN_WQE_BIND_MW, TERN_CQE_OK, 10);
	CHECK_WC(&w[1], TERN_WQE_BIND_MW, TERN_CQE_OK, 11);
	RQ(conn_poll(&c, 1, w, 1, 1000000000ull) == 1);
	CHECK_WC(&w[0], TERN_WQE_BIND_MW, TERN_CQE_OK, 12);
	k1 = w1 << 8 | 0x42;
	/* the type 1 window's new range and key work for READ */
	sg = mr_sge(&lm, 0, 64);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 13, &sg, 1,
		  rm.iova + 12288, k1, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_READ, TERN_CQE_OK, 13);
	/* SEND with invalidate of the type 2 window's key */
	sg = mr_sge(&plain, 0, 64);
	post_recv(c.d[1], &c.qp[1], 14, &sg, 1);
	ring_rq(c.d[1], &c.qp[1]);
	sg = mr_sge(&lm, 1024, 16);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND_INV, TERN_WQE_F_SIGNALED, 15, &sg, 1, 0, k2, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 1, w, 1, 1000000000ull) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 14);
	CHECK(w[0].flags & TERN_CQE_F_INV);
	CHECK_EQ(rd32(w[0].raw + OFF(struct tern_cqe, invalidated_rkey)), k2);
	RQ(conn_poll(&c, 0, w, 1, 1000000000ull) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND_INV, TERN_CQE_OK, 15);
	/* unbind type 1 with length 0: the MR is free of windows and may go */
	post_bind(c.d[1], &c.qp[1], 16, w1 << 8 | 0x43, &rm, 0, 0, 0);
	RQ(one(&c, 1, w));
	CHECK_WC(&w[0], TERN_WQE_BIND_MW, TERN_CQE_OK, 16);
	/* the invalidated type 2 key now fails at the responder */
	sg = mr_sge(&lm, 0, 16);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 17, &sg, 1, rm.iova,
		  k2, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_REM_ACCESS_ERR, 17);
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(mr_destroy(c.d[1], &rm), TERN_CMD_OK);
	CHECK_EQ(fr_destroy(c.d[1], w2 << 8), TERN_CMD_OK);
	CHECK_EQ(fr_destroy(c.d[1], w1 << 8), TERN_CMD_OK);
	(void)buf;
out:
	if (nmr > 0)
		mr_release(&lm);
	if (nmr > 1)
		mr_release(&rm);
	if (nmr > 2)
		mr_release(&plain);
	conn_free(&c);
}

/*
 * Destroying a QP unbinds the type 2 windows bound through it: the MR they held may go
 * (BAD_STATE before), the windows may be destroyed.
 */
static void t_mw_qp_destroy(void)
{
	const uint8_t racc = TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_REMOTE_READ;
	struct rmr lm, rm, plain;
	unsigned int nmr = 0;
	struct connopt o;
	struct conn c;
	struct wc w[2];
	uint32_t w2 = 0, w1 = 0;

	connopt_default(&o);
	RQ(mw_pair(&c, &o, &lm, &rm, &plain, &nmr, &w2, &w1));
	post_bind(c.d[1], &c.qp[1], 1, w2 << 8 | 0x51, &rm, 0, 4096, racc);
	RQ(one(&c, 1, w));
	CHECK_WC(&w[0], TERN_WQE_BIND_MW, TERN_CQE_OK, 1);
	CHECK_EQ(mr_destroy(c.d[1], &rm), TERN_CMD_BAD_STATE);	/* held by the window */
	CHECK_EQ(qp_destroy(c.d[1], &c.qp[1]), TERN_CMD_OK);
	CHECK_EQ(mr_destroy(c.d[1], &rm), TERN_CMD_OK);		/* the window let go */
	CHECK_EQ(fr_destroy(c.d[1], w2 << 8), TERN_CMD_OK);
	CHECK_EQ(fr_destroy(c.d[1], w1 << 8), TERN_CMD_OK);
out:
	if (nmr > 0)
		mr_release(&lm);
	if (nmr > 1)
		mr_release(&rm);
	if (nmr > 2)
		mr_release(&plain);
	conn_free(&c);
}

/*
 * REREG_MR (issue 40: ibv_rereg_mr's new rights never reached the peer's key): an MR with
 * local write only refuses a peer's WRITE; REREG_MR adds REMOTE_WRITE and the same key then
 * takes the WRITE, the bytes intact; taking the right away again refuses it again. A wrong
 * key byte, an unknown key, a window's key and a window bound to the MR are refused and
 * leave the MR working; a new PD (with the key kept) is the QP's no more.
 */
static void t_mr_rereg(void)
{
	const uint8_t racc = TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_REMOTE_READ;
	struct rmr lm, rm, plain;
	unsigned int nmr = 0;
	struct connopt o;
	struct conn c;
	struct sge sg;
	struct wc w[1];
	uint32_t w2 = 0, w1 = 0, key, syn = 0, pdn2;

	connopt_default(&o);
	RQ(mw_pair(&c, &o, &lm, &rm, &plain, &nmr, &w2, &w1));
	mr_fill(c.d[0], &lm, 3);
	mr_fill(c.d[1], &rm, 4);
	key = rm.key;
	/* down to local write only (and MW_BIND): the peer's WRITE is refused */
	CHECK_EQ(mr_rereg(c.d[1], &rm, rm.pdn, TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_MW_BIND,
			  (uint8_t)key, &syn), TERN_CMD_OK);
	CHECK_EQ(rm.key, key);
	sg = mr_sge(&lm, 0, 4096);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  rm.iova + 4096, key, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_REM_ACCESS_ERR, 1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0, 16384, 4, 0), -1);
	RQ(reconnect_both(&c, &o));
	/* REMOTE_WRITE added in place: the same key takes the WRITE */
	CHECK_EQ(mr_rereg(c.d[1], &rm, rm.pdn, acc_rw | TERN_ACCESS_MW_BIND, (uint8_t)key, &syn),
		 TERN_CMD_OK);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 2, &sg, 1,
		  rm.iova + 4096, key, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 2);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 4096, 4096, 3, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0, 4096, 4, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 8192, 8192, 4, 8192), -1);
	/* refused, the MR unchanged: another key byte, unknown key, a window's key */
	CHECK_EQ(mr_rereg(c.d[1], &rm, rm.pdn, TERN_ACCESS_LOCAL_WRITE, (uint8_t)(key + 1), &syn),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(syn, OFF(struct tern_cmd_rereg_mr_in, mr) + OFF(struct tern_cmd_create_mr_in, key));
	rm.key = key + 1;
	CHECK_EQ(mr_rereg(c.d[1], &rm, rm.pdn, TERN_ACCESS_LOCAL_WRITE, (uint8_t)(key + 1), &syn),
		 TERN_CMD_BAD_RESOURCE);
	rm.key = w2 << 8;
	CHECK_EQ(mr_rereg(c.d[1], &rm, rm.pdn, TERN_ACCESS_LOCAL_WRITE, 0, &syn),
		 TERN_CMD_BAD_RESOURCE);
	rm.key = key;
	/* a bad page list in the new description: BAD_PARAM at its offset in REREG_MR */
	rm.page_shift = 13;
	CHECK_EQ(mr_rereg(c.d[1], &rm, rm.pdn, TERN_ACCESS_LOCAL_WRITE, (uint8_t)key, &syn),
		 TERN_CMD_BAD_PARAM);
	CHECK(syn >= OFF(struct tern_cmd_rereg_mr_in, mr));
	rm.page_shift = 12;
	/* a window bound to it: BAD_STATE until it is unbound */
	post_bind(c.d[1], &c.qp[1], 3, w1 << 8 | 0x61, &rm, 0, 4096, racc);
	RQ(one(&c, 1, w));
	CHECK_WC(&w[0], TERN_WQE_BIND_MW, TERN_CQE_OK, 3);
	CHECK_EQ(mr_rereg(c.d[1], &rm, rm.pdn, TERN_ACCESS_LOCAL_WRITE, (uint8_t)key, &syn),
		 TERN_CMD_BAD_STATE);
	post_bind(c.d[1], &c.qp[1], 4, w1 << 8 | 0x62, &rm, 0, 0, 0);
	RQ(one(&c, 1, w));
	CHECK_WC(&w[0], TERN_WQE_BIND_MW, TERN_CQE_OK, 4);
	/* still as it was: the WRITE works */
	sg = mr_sge(&lm, 8192, 512);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 5, &sg, 1,
		  rm.iova, key, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 5);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rm, 0, 512, 3, 8192), -1);
	/* REMOTE_WRITE taken away again: refused again */
	CHECK_EQ(mr_rereg(c.d[1], &rm, rm.pdn, TERN_ACCESS_LOCAL_WRITE, (uint8_t)key, &syn),
		 TERN_CMD_OK);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 6, &sg, 1,
		  rm.iova, key, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_REM_ACCESS_ERR, 6);
	RQ(reconnect_both(&c, &o));
	/* a new PD: the key is kept but the QP's PD no longer matches; the old PD may go */
	RQ(pd_create(c.d[1], &pdn2) == TERN_CMD_OK);
	CHECK_EQ(mr_rereg(c.d[1], &rm, pdn2, acc_rw, (uint8_t)key, &syn), TERN_CMD_OK);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 7, &sg, 1,
		  rm.iova, key, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_REM_ACCESS_ERR, 7);
	CHECK_EQ(pd_destroy(c.d[1], pdn2), TERN_CMD_BAD_STATE);	/* the MR is in it now */
	CHECK_EQ(mr_destroy(c.d[1], &rm), TERN_CMD_OK);
	CHECK_EQ(pd_destroy(c.d[1], pdn2), TERN_CMD_OK);
out:
	if (nmr > 0)
		mr_release(&lm);
	if (nmr > 1)
		mr_release(&rm);
	if (nmr > 2)
		mr_release(&plain);
	conn_free(&c);
}

/* The first frame from 0 to 1 is lost (its resend passes). */
static enum wire_action first_lost(struct wire *w, unsigned int dir, unsigned int idx,
				   uint8_t *frame, size_t *len)
{
	(void)w;
	(void)frame;
	(void)len;
	return dir == 0 && idx == 0 ? W_DROP : W_DELIVER;
}

/*
 * Selective repeat: a 4-packet SEND with invalidate whose FIRST packet is lost. Its MIDDLE
 * packets and its LAST (SR_SEND_LAST_INV: SEND placement header, then the IETH) come after
 * the gap and are placed at once; the key is invalidated and the receive completes (F_INV,
 * the key) only when the FIRST is resent and the message is whole, the bytes intact.
 */
static void t_frwr_sr_send_inv(void)
{
	const uint64_t iova = 0x30000100ull, len = 16384;
	struct rmr back, lm, rbuf;
	int nmr = 0;
	struct connopt o;
	struct conn c;
	struct pkt p;
	struct sge sg;
	struct wc w[2];
	uint32_t idx = 0, key, i, n = 0;

	connopt_default(&o);
	o.timeout = 8;
	o.retry_cnt = 7;
	o.xport = TERN_QP_XPORT_SR;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[1], &back, c.d[1]->pdn, len, TERN_ACCESS_LOCAL_WRITE, 0x100) == 0);
	nmr++;
	RQ(mr_create(c.d[0], &lm, c.d[0]->pdn, len, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	nmr++;
	RQ(mr_create(c.d[1], &rbuf, c.d[1]->pdn, len, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	nmr++;
	mr_fill(c.d[0], &lm, 6);
	mr_fill(c.d[1], &rbuf, 7);
	RQ(fr_create(c.d[1], c.d[1]->pdn, 8, &idx) == TERN_CMD_OK);
	key = idx << 8 | 0x56;
	post_reg(c.d[1], &c.qp[1], 10, key, &back, iova, len, back.npages, (uint8_t)acc_rw);
	RQ(one(&c, 1, w));
	CHECK_WC(&w[0], TERN_WQE_REG_MR, TERN_CQE_OK, 10);

	sg = mr_sge(&rbuf, 100, 4000);
	post_recv(c.d[1], &c.qp[1], 20, &sg, 1);
	ring_rq(c.d[1], &c.qp[1]);
	c.w.filter = first_lost;
	sg = mr_sge(&lm, 0, 3500);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND_INV, TERN_WQE_F_SIGNALED, 13, &sg, 1, 0, key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 1, w, 1, 100ull * 4096 << 8) == 1);
	CHECK_WC(&w[0], TERN_CQE_RECV, TERN_CQE_OK, 20);
	CHECK_EQ(w[0].byte_len, 3500);
	CHECK(w[0].flags & TERN_CQE_F_INV);
	CHECK_EQ(rd32(w[0].raw + OFF(struct tern_cqe, invalidated_rkey)), key);
	RQ(conn_poll(&c, 0, w, 1, 100ull * 4096 << 8) == 1);
	CHECK_WC(&w[0], TERN_WQE_SEND_INV, TERN_CQE_OK, 13);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rbuf, 100, 3500, 6, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rbuf, 0, 100, 7, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[1], &rbuf, 3600, len - 3600, 7, 3600), -1);
	CHECK(RDEV_STAT(c.d[1], out_of_order_accepted) >= 3);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_discards), 0);
	for (i = 0; i < c.w.nlog; i++) {
		if (c.w.log[i].dir != 0 || !pkt_parse(c.w.log[i].data, c.w.log[i].len, &p) ||
		    p.opcode != OP_SR_SEND_LAST_INV)
			continue;
		n++;
		CHECK(p.has_sph && p.has_ieth);
		CHECK_EQ(p.ieth, key);
		CHECK_EQ(p.sph_off, 3072);
		CHECK_EQ(p.payload_len, 3500 - 3072);
	}
	CHECK(n >= 1);
	/* the key is gone: a WRITE through it is NAKed */
	sg = mr_sge(&lm, 0, 16);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 14, &sg, 1, iova,
		  key, 0);
	RQ(one(&c, 0, w));
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_REM_ACCESS_ERR, 14);
out:
	if (nmr > 0)
		mr_release(&back);
	if (nmr > 1)
		mr_release(&lm);
	if (nmr > 2)
		mr_release(&rbuf);
	conn_free(&c);
}

const struct test rdma_frwr_tests[] = {
	{ "rdma frwr: REG_MR, remote WRITE/READ through it, SEND_INV (IETH, F_INV), key gone",
	  t_frwr_remote },
	{ "rdma frwr: local SGEs through a registered MR, LOCAL_INV, stale key, busy MR, flush",
	  t_frwr_local },
	{ "rdma frwr: bad segments, other PD, regular MRs refused; SEND_INV of a regular key",
	  t_frwr_errors },
	{ "rdma frwr: REG_MR/LOCAL_INV complete in order behind lost ACKs; LOCAL_INV waits",
	  t_frwr_order },
	{ "rdma mw: type 2 window: range, rights, holds its MR, SEND_INV; type 1 rebind/unbind",
	  t_mw },
	{ "rdma mw: DESTROY_QP unbinds its type 2 windows (their MR may go)", t_mw_qp_destroy },
	{ "rdma mr: REREG_MR changes rights and PD in place, the key kept; refusals change nothing",
	  t_mr_rereg },
	{ "rdma frwr: selective repeat: SEND_INV after a gap placed, key invalidated when whole",
	  t_frwr_sr_send_inv },
	{ NULL, NULL },
};
