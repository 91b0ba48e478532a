/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RC over the port's own fault injector (SET_WIRE_FAULTS on both devices): bulk and small
 * transfers complete intact, retries run out under total loss; the recovery counters; the
 * IPv6 path (header and UDP checksum, checked independently); P_Key filtering; the IPv4
 * identification.
 */
#include <stdlib.h>

#include "test_rdma.h"

#define WQ(f)	OFF(struct tern_cmd_query_wire_faults_out, f)

static uint64_t faults_stat(struct rdev *d, size_t off)
{
	uint8_t out[sizeof(struct tern_cmd_query_wire_faults_out)];

	if (rdev_cmd(d, TERN_CMD_QUERY_WIRE_FAULTS, NULL, 0, out, sizeof(out), NULL))
		return ~0ull;
	return rd64(out + off);
}

#define FSTAT(d, f)	faults_stat(d, WQ(f))

static const uint32_t acc_all = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
				TERN_ACCESS_REMOTE_READ;

/* Post one signaled WQE on side @s and wait for its CQE; false (reported) on a bad one. */
static bool one_op(struct conn *c, unsigned int s, uint8_t op, uint64_t id, const struct sge *sg,
		   uint64_t raddr, uint32_t rkey)
{
	struct wc w;

	post_send(c->d[s], &c->qp[s], op, TERN_WQE_F_SIGNALED, id, sg, 1, raddr, rkey, 0);
	ring_sq(c->d[s], &c->qp[s]);
	if (conn_poll(c, s, &w, 1, 2000000000ull) != 1)
		return false;
	if (w.status != TERN_CQE_OK || w.wr_id != id || w.opcode != op) {
		t_failures++;
		printf("#   op %u id %llu: status %u vendor_err %u wr_id %llu\n", op,
		       (unsigned long long)id, w.status, w.vendor_err, (unsigned long long)w.wr_id);
		return false;
	}
	return true;
}

/*
 * Drop 1%, reorder 1%, duplicate 0.5%, corrupt 0.1% on both devices: WRITE, READ and SEND
 * of several MB and hundreds of small messages of all three kinds complete successfully
 * with every byte right; the recovery counters moved; no QP went to ERR.
 */
static void t_lossy_bulk(void)
{
	struct connopt o;
	struct conn c;
	struct rmr src[2], dst[2];
	bool mrs = false;
	const uint64_t big = 3u << 20, mrlen = (4u << 20) + 8192;
	unsigned int s, round, i;
	uint64_t retrans = 0, rbytes = 0, bad = 0, dupreq = 0, naks = 0;
	struct sge sg;
	struct wc w;

	connopt_default(&o);
	o.timeout = 8;			/* 1 ms: the tail of a message lost waits that long */
	o.retry_cnt = 7;
	RQ(conn_setup(&c, &o));
	for (s = 0; s < 2; s++) {
		RQ(mr_create(c.d[s], &src[s], c.d[s]->pdn, mrlen, acc_all, 0x30) == 0);
		RQ(mr_create(c.d[s], &dst[s], c.d[s]->pdn, mrlen, acc_all, 0x50) == 0);
		mr_fill(c.d[s], &src[s], 40 + s);
		RQ(faults_set(c.d[s], 10000, 1000, 5000, 10000, 1000 + s) == TERN_CMD_OK);
	}
	mrs = true;

	/* WRITE 3 MB + 123 from 0 to 1 */
	sg = mr_sge(&src[0], 0, (uint32_t)big + 123);
	RQ(one_op(&c, 0, TERN_WQE_RDMA_WRITE, 1, &sg, dst[1].iova, dst[1].key));
	CHECK_EQ(mr_diff_pattern(c.d[1], &dst[1], 0, big + 123, 40, 0), -1);
	wire_clear_log(&c.w);

	/* READ 3 MB + 77 by 0 from 1's source */
	sg = mr_sge(&dst[0], 5, (uint32_t)big + 77);
	RQ(one_op(&c, 0, TERN_WQE_RDMA_READ, 2, &sg, src[1].iova + 1000, src[1].key));
	CHECK_EQ(mr_diff_pattern(c.d[0], &dst[0], 5, big + 77, 41, 1000), -1);
	wire_clear_log(&c.w);

	/* SEND 2 MB + 5 from 1 to 0 */
	sg = mr_sge(&dst[0], 100, (2u << 20) + 64);
	post_recv(c.d[0], &c.qp[0], 77, &sg, 1);
	ring_rq(c.d[0], &c.qp[0]);
	sg = mr_sge(&src[1], 3, (2u << 20) + 5);
	RQ(one_op(&c, 1, TERN_WQE_SEND, 3, &sg, 0, 0));
	RQ(conn_poll(&c, 0, &w, 1, 100000000ull) == 1);
	CHECK_WC(&w, TERN_CQE_RECV, TERN_CQE_OK, 77);
	CHECK_EQ(w.byte_len, (2u << 20) + 5);
	CHECK_EQ(mr_diff_pattern(c.d[0], &dst[0], 100, (2u << 20) + 5, 41, 3), -1);
	wire_clear_log(&c.w);

	/*
	 * Many small ones, in rounds of 30 WQEs posted at once: SENDs of 1..4000 bytes (a
	 * receive posted for each), WRITEs and READs, each to its own 8 KiB slot, from one
	 * byte into the source slot (so what the bulk transfers left there never matches).
	 */
	for (round = 0; round < 12 && !t_failures; round++) {
		struct wc wcs[64];
		unsigned int got, recvs = 0;

		for (i = 0; i < 30; i++) {
			unsigned int k = round * 30 + i, slot = k % 500;
			uint32_t len = 1 + (k * 2654435761u) % 4000;
			uint8_t op = i % 3 == 0 ? TERN_WQE_SEND :
				     i % 3 == 1 ? TERN_WQE_RDMA_WRITE : TERN_WQE_RDMA_READ;

			if (op == TERN_WQE_RDMA_READ) {
				sg = mr_sge(&dst[0], (uint64_t)slot * 8192, len);
				post_send(c.d[0], &c.qp[0], op, TERN_WQE_F_SIGNALED, k, &sg, 1,
					  src[1].iova + (uint64_t)slot * 8192 + 1, src[1].key, 0);
			} else {
				if (op == TERN_WQE_SEND) {
					struct sge r = mr_sge(&dst[1], (uint64_t)slot * 8192, 4096);

					post_recv(c.d[1], &c.qp[1], k, &r, 1);
					recvs++;
				}
				sg = mr_sge(&src[0], (uint64_t)slot * 8192 + 1, len);
				post_send(c.d[0], &c.qp[0], op, TERN_WQE_F_SIGNALED, k, &sg, 1,
					  dst[1].iova + (uint64_t)slot * 8192, dst[1].key, 0);
			}
		}
		ring_rq(c.d[1], &c.qp[1]);
		ring_sq(c.d[0], &c.qp[0]);
		got = conn_poll(&c, 0, wcs, 30, 2000000000ull);
		CHECK_EQ(got, 30);
		for (i = 0; i < got; i++) {
			unsigned int k = round * 30 + i, slot = k % 500;
			uint32_t len = 1 + (k * 2654435761u) % 4000;

			CHECK_EQ(wcs[i].status, TERN_CQE_OK);
			CHECK_EQ(wcs[i].wr_id, k);
			if (i % 3 == 2)
				CHECK_EQ(mr_diff_pattern(c.d[0], &dst[0], (uint64_t)slot * 8192, len,
							 41, (uint64_t)slot * 8192 + 1), -1);
			else
				CHECK_EQ(mr_diff_pattern(c.d[1], &dst[1], (uint64_t)slot * 8192, len,
							 40, (uint64_t)slot * 8192 + 1), -1);
		}
		got = conn_poll(&c, 1, wcs, recvs, 100000000ull);
		CHECK_EQ(got, recvs);
		for (i = 0; i < got; i++) {
			CHECK_EQ(wcs[i].status, TERN_CQE_OK);
			CHECK_EQ(wcs[i].wr_id, round * 30 + 3 * i);
		}
		wire_clear_log(&c.w);
	}

	for (s = 0; s < 2; s++) {
		retrans += RDEV_STAT(c.d[s], retrans_pkts);
		rbytes += RDEV_STAT(c.d[s], retrans_bytes);
		bad += RDEV_STAT(c.d[s], rx_icrc_errors) + RDEV_STAT(c.d[s], rx_roce_discards);
		dupreq += RDEV_STAT(c.d[s], duplicate_request);
		naks += RDEV_STAT(c.d[s], seq_err_naks_sent);
		CHECK(FSTAT(c.d[s], dropped) > 0);
		CHECK(FSTAT(c.d[s], corrupted) > 0);
		CHECK(FSTAT(c.d[s], duplicated) > 0);
		CHECK(FSTAT(c.d[s], reordered) > 0);
		CHECK_EQ(qp_state(c.d[s], c.qp[s].qpn), TERN_QPS_RTS);
		CHECK(!cq_peek(c.d[s], &c.cq[s]));
	}
	CHECK(retrans > 0);
	CHECK(rbytes > retrans * 60);
	CHECK(bad > 0);
	CHECK(dupreq > 0);
	CHECK(naks > 0);
	CHECK(RDEV_STAT(c.d[0], duplicate_response) + RDEV_STAT(c.d[1], duplicate_response) > 0);
	printf("#   frames %llu+%llu: dropped %llu+%llu, retrans %llu pkts %llu bytes, "
	       "icrc/discards %llu, dup requests %llu, seq NAKs %llu\n",
	       (unsigned long long)FSTAT(c.d[0], frames), (unsigned long long)FSTAT(c.d[1], frames),
	       (unsigned long long)FSTAT(c.d[0], dropped),
	       (unsigned long long)FSTAT(c.d[1], dropped), (unsigned long long)retrans,
	       (unsigned long long)rbytes, (unsigned long long)bad, (unsigned long long)dupreq,
	       (unsigned long long)naks);
out:
	if (mrs) {
		for (s = 0; s < 2; s++) {
			mr_release(&src[s]);
			mr_release(&dst[s]);
		}
	}
	conn_free(&c);
}

/*
 * Everything the requester sends is lost: retry_cnt retransmissions, one timeout apart on
 * the virtual clock, then RETRY_EXC_ERR and ERR.
 */
static void t_total_loss(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	bool mrs = false;
	struct sge sg;
	struct wc w;
	uint64_t t0, dt, tmo = 4096ull << 8;

	connopt_default(&o);
	o.timeout = 8;
	o.retry_cnt = 3;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 8192, acc_all, 0) == 0);
	if (mr_create(c.d[1], &m[1], c.d[1]->pdn, 8192, acc_all, 0) != 0) {
		mr_release(&m[0]);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &m[0], 5);
	RQ(faults_set(c.d[0], TERN_WIRE_FAULT_PPM_MAX, 0, 0, 0, 1) == TERN_CMD_OK);
	t0 = wire_now(&c.w);
	sg = mr_sge(&m[0], 0, 3000);		/* 3 packets at MTU 1024 */
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 9, &sg, 1,
		  m[1].iova, m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 10 * tmo) == 1);
	dt = wire_now(&c.w) - t0;
	CHECK_WC(&w, TERN_WQE_RDMA_WRITE, TERN_CQE_RETRY_EXC_ERR, 9);
	CHECK_EQ(w.vendor_err, TERN_SYND_RETRY);
	/* the first send, then a timeout for it and each of the 3 retries */
	CHECK(dt >= 4 * tmo);
	CHECK(dt < 4 * tmo + 100000);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_RTS);
	CHECK_EQ(RDEV_STAT(c.d[0], retrans_pkts), 3 * 3);
	CHECK_EQ(RDEV_STAT(c.d[0], local_ack_timeout_err), 4);
	CHECK_EQ(RDEV_STAT(c.d[0], req_transport_retries_exceeded), 1);
	CHECK_EQ(FSTAT(c.d[0], frames), 4 * 3);
	CHECK_EQ(FSTAT(c.d[0], dropped), 4 * 3);
	CHECK_EQ(c.w.sent[0], 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_packets), 0);
	if (dt < 4 * tmo || dt >= 4 * tmo + 100000)
		printf("#   gave up after %llu ns, timeout %llu ns\n", (unsigned long long)dt,
		       (unsigned long long)tmo);
out:
	if (mrs) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* ---- counters, one cause at a time ----------------------------------------------------------- */

struct edit {
	unsigned int dir;
	int op;			/* BTH opcode to act on */
	unsigned int nth;	/* which of those (from 0) */
	unsigned int seen, hits;
	enum wire_action act;
	int pkey;		/* >= 0: rewrite the P_Key to this */
	int new_op;		/* >= 0: rewrite the opcode to this */
};

static enum wire_action edit_filter(struct wire *w, unsigned int dir, unsigned int idx,
				    uint8_t *frame, size_t *len)
{
	struct edit *e = w->ctx;
	struct pkt p;
	uint8_t *bth;

	(void)idx;
	if (dir != e->dir || !pkt_parse(frame, *len, &p) || p.opcode != e->op ||
	    e->seen++ != e->nth)
		return W_DELIVER;
	e->hits++;
	bth = frame + (p.vlan ? 18 : 14) + (p.ipver == 4 ? 20 : 40) + 8;
	if (e->pkey >= 0) {
		bth[2] = (uint8_t)(e->pkey >> 8);
		bth[3] = (uint8_t)e->pkey;
	}
	if (e->new_op >= 0)
		bth[0] = (uint8_t)e->new_op;
	pkt_fix_icrc(frame, *len);
	return e->act;
}

static void edit_set(struct conn *c, struct edit *e, unsigned int dir, int op, unsigned int nth,
		     enum wire_action act)
{
	memset(e, 0, sizeof(*e));
	e->dir = dir;
	e->op = op;
	e->nth = nth;
	e->act = act;
	e->pkey = -1;
	e->new_op = -1;
	c->w.filter = edit_filter;
	c->w.ctx = e;
}

/*
 * retrans_pkts/bytes and seq_err_naks_sent (a lost middle packet), rnr_naks_sent (a SEND
 * with no receive posted), duplicate_response (a duplicated ACK and READ response).
 */
static void t_recovery_counters(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	bool mrs = false;
	struct edit e;
	struct sge sg;
	struct wc w;
	uint64_t bytes = 0;
	unsigned int i;
	struct pkt p;

	connopt_default(&o);
	o.timeout = 8;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 65536, acc_all, 0) == 0);
	if (mr_create(c.d[1], &m[1], c.d[1]->pdn, 65536, acc_all, 0) != 0) {
		mr_release(&m[0]);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &m[0], 7);
	mr_fill(c.d[1], &m[1], 8);

	/* a 4-packet WRITE loses its second packet: one seq NAK, packets 1..3 again */
	edit_set(&c, &e, 0, OP_WRITE_MIDDLE, 0, W_DROP);
	sg = mr_sge(&m[0], 0, 4000);
	RQ(one_op(&c, 0, TERN_WQE_RDMA_WRITE, 1, &sg, m[1].iova, m[1].key));
	CHECK_EQ(e.hits, 1);
	CHECK_EQ(RDEV_STAT(c.d[1], seq_err_naks_sent), 1);
	CHECK_EQ(RDEV_STAT(c.d[1], out_of_sequence), 2);
	CHECK_EQ(RDEV_STAT(c.d[0], packet_seq_err), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], retrans_pkts), 3);
	/* frames of a PSN seen before in direction 0 (the lost one was logged too) */
	for (i = 0; i < c.w.nlog; i++) {
		unsigned int j;

		if (c.w.log[i].dir != 0 || !pkt_parse(c.w.log[i].data, c.w.log[i].len, &p))
			continue;
		for (j = 0; j < i; j++) {
			struct pkt q;

			if (c.w.log[j].dir == 0 && pkt_parse(c.w.log[j].data, c.w.log[j].len, &q) &&
			    q.psn == p.psn) {
				bytes += c.w.log[i].len;
				break;
			}
		}
	}
	CHECK(bytes > 3 * 1024);
	CHECK_EQ(RDEV_STAT(c.d[0], retrans_bytes), bytes);
	CHECK_EQ(RDEV_STAT(c.d[0], duplicate_response), 0);
	CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 0, 4000, 7, 0), -1);
	wire_clear_log(&c.w);

	/* an ACK arriving twice: the second is a duplicate response */
	edit_set(&c, &e, 1, OP_ACK, 0, W_DUP);
	sg = mr_sge(&m[0], 8192, 100);
	RQ(one_op(&c, 0, TERN_WQE_RDMA_WRITE, 2, &sg, m[1].iova + 8192, m[1].key));
	CHECK_EQ(e.hits, 1);
	wire_pump(&c.w);
	CHECK_EQ(RDEV_STAT(c.d[0], duplicate_response), 1);

	/* a READ response arriving twice */
	edit_set(&c, &e, 1, OP_READ_RESP_MIDDLE, 0, W_DUP);
	sg = mr_sge(&m[0], 16384, 3000);
	RQ(one_op(&c, 0, TERN_WQE_RDMA_READ, 3, &sg, m[1].iova + 16384, m[1].key));
	CHECK_EQ(e.hits, 1);
	CHECK_EQ(RDEV_STAT(c.d[0], duplicate_response), 2);
	CHECK_EQ(mr_diff_pattern(c.d[0], &m[0], 16384, 3000, 8, 16384), -1);

	/* SEND without a receive: RNR NAK on the wire; the retry after the RNR wait counts */
	c.w.filter = NULL;
	i = (unsigned int)RDEV_STAT(c.d[0], retrans_pkts);
	sg = mr_sge(&m[0], 32768, 200);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 4, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	wire_pump(&c.w);
	CHECK_EQ(RDEV_STAT(c.d[1], rnr_naks_sent), 1);
	CHECK_EQ(RDEV_STAT(c.d[1], out_of_buffer), 1);
	sg = mr_sge(&m[1], 32768, 256);
	post_recv(c.d[1], &c.qp[1], 40, &sg, 1);
	ring_rq(c.d[1], &c.qp[1]);
	RQ(conn_poll(&c, 0, &w, 1, 10000000) == 1);
	CHECK_WC(&w, TERN_WQE_SEND, TERN_CQE_OK, 4);
	CHECK_EQ(RDEV_STAT(c.d[0], retrans_pkts), i + 1);
	RQ(conn_poll(&c, 1, &w, 1, 1000000) == 1);
	CHECK_WC(&w, TERN_CQE_RECV, TERN_CQE_OK, 40);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_opcode_seq_err), 0);
out:
	if (mrs) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* A request out of opcode sequence counts rx_opcode_seq_err (and the invalid request NAK). */
static void t_opcode_seq_counter(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	bool mrs = false;
	struct edit e;
	struct sge sg;
	struct wc w;

	connopt_default(&o);
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 8192, acc_all, 0) == 0);
	if (mr_create(c.d[1], &m[1], c.d[1]->pdn, 8192, acc_all, 0) != 0) {
		mr_release(&m[0]);
		RQ(0);
	}
	mrs = true;
	/* the WRITE_FIRST of a 2-packet WRITE arrives as a SEND_MIDDLE */
	edit_set(&c, &e, 0, OP_WRITE_FIRST, 0, W_DELIVER);
	e.new_op = OP_SEND_MIDDLE;
	sg = mr_sge(&m[0], 0, 1500);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 1, &sg, 1,
		  m[1].iova, m[1].key, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 10000000) == 1);
	CHECK_EQ(w.status, TERN_CQE_REM_INV_REQ_ERR);
	CHECK_EQ(e.hits, 1);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_opcode_seq_err), 1);
	CHECK_EQ(RDEV_STAT(c.d[0], req_remote_invalid_request), 1);
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), TERN_QPS_ERR);
out:
	if (mrs) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/*
 * P_Key: the low 15 bits must be 0x7fff. 0x7fff (limited member) is accepted; 0x1234 and
 * 0xfffe are dropped and counted in rx_pkey_mismatch only; the requester's timeout resends.
 */
static void t_pkey(void)
{
	static const struct {
		uint16_t pkey;
		bool ok;
	} tab[] = { { 0x7fff, true }, { 0x1234, false }, { 0xfffe, false }, { 0x8000, false } };
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	bool mrs = false;
	struct edit e;
	struct sge sg;
	unsigned int k, bad = 0;

	connopt_default(&o);
	o.timeout = 8;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 8192, acc_all, 0) == 0);
	if (mr_create(c.d[1], &m[1], c.d[1]->pdn, 8192, acc_all, 0) != 0) {
		mr_release(&m[0]);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &m[0], 3);
	for (k = 0; k < sizeof(tab) / sizeof(tab[0]); k++) {
		uint64_t disc = RDEV_STAT(c.d[1], rx_roce_discards);
		uint64_t icrc = RDEV_STAT(c.d[1], rx_icrc_errors);
		uint64_t retx = RDEV_STAT(c.d[0], retrans_pkts);

		edit_set(&c, &e, 0, OP_WRITE_ONLY, 0, W_DELIVER);
		e.pkey = tab[k].pkey;
		sg = mr_sge(&m[0], k * 1000, 500);
		RQ(one_op(&c, 0, TERN_WQE_RDMA_WRITE, k, &sg, m[1].iova + k * 1000, m[1].key));
		CHECK_EQ(e.hits, 1);
		if (!tab[k].ok)
			bad++;
		CHECK_EQ(RDEV_STAT(c.d[1], rx_pkey_mismatch), bad);
		CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_discards), disc);
		CHECK_EQ(RDEV_STAT(c.d[1], rx_icrc_errors), icrc);
		CHECK_EQ(RDEV_STAT(c.d[0], retrans_pkts), retx + (tab[k].ok ? 0 : 1));
		CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], k * 1000, 500, 3, k * 1000), -1);
	}
out:
	if (mrs) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* ---- IP headers ------------------------------------------------------------------------------ */

static uint16_t be16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* One's complement sum of 16-bit words, folded. */
static uint32_t sum16(uint32_t s, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += be16_at(p + i);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/*
 * IPv6 path: every frame has version 6, the path's traffic class, flow label and hop limit,
 * payload length = UDP length, next header UDP, the GIDs as addresses, and a UDP checksum
 * that verifies (computed here over the pseudo-header); data moves both ways.
 */
static void t_ipv6_path(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	bool mrs = false;
	struct sge sg;
	struct wc w;
	unsigned int i, n = 0, dirs[2] = { 0, 0 };

	connopt_default(&o);
	o.ip_version = 6;
	o.tclass = 0x68;
	o.flow_label = 0xabcde;
	o.hop_limit = 17;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 65536, acc_all, 0) == 0);
	if (mr_create(c.d[1], &m[1], c.d[1]->pdn, 65536, acc_all, 0) != 0) {
		mr_release(&m[0]);
		RQ(0);
	}
	mrs = true;
	mr_fill(c.d[0], &m[0], 11);
	mr_fill(c.d[1], &m[1], 12);
	sg = mr_sge(&m[0], 0, 5000);
	RQ(one_op(&c, 0, TERN_WQE_RDMA_WRITE, 1, &sg, m[1].iova + 20000, m[1].key));
	sg = mr_sge(&m[0], 30000, 4099);
	RQ(one_op(&c, 0, TERN_WQE_RDMA_READ, 2, &sg, m[1].iova + 100, m[1].key));
	sg = mr_sge(&m[0], 40000, 2000);
	post_recv(c.d[0], &c.qp[0], 5, &sg, 1);
	ring_rq(c.d[0], &c.qp[0]);
	sg = mr_sge(&m[1], 50000, 1999);
	RQ(one_op(&c, 1, TERN_WQE_SEND, 3, &sg, 0, 0));
	RQ(conn_poll(&c, 0, &w, 1, 1000000) == 1);
	CHECK_WC(&w, TERN_CQE_RECV, TERN_CQE_OK, 5);
	CHECK_EQ(mr_diff_pattern(c.d[1], &m[1], 20000, 5000, 11, 0), -1);
	CHECK_EQ(mr_diff_pattern(c.d[0], &m[0], 30000, 4099, 12, 100), -1);
	CHECK_EQ(mr_diff_pattern(c.d[0], &m[0], 40000, 1999, 12, 50000), -1);
	for (i = 0; i < c.w.nlog; i++) {
		const struct wire_rec *r = &c.w.log[i];
		const uint8_t *ip = r->data + 14, *udp = ip + 40;
		const struct rdev *src = c.d[r->dir], *dst = c.d[!r->dir];
		uint16_t ulen;
		uint32_t s;
		struct pkt p;

		if (!pkt_parse(r->data, r->len, &p)) {
			CHECK(0);
			continue;
		}
		n++;
		dirs[r->dir]++;
		CHECK_EQ(be16_at(r->data + 12), 0x86dd);
		CHECK_EQ(ip[0] >> 4, 6);
		CHECK_EQ((ip[0] & 0xf) << 4 | ip[1] >> 4, o.tclass);
		CHECK_EQ((uint32_t)(ip[1] & 0xf) << 16 | be16_at(ip + 2), o.flow_label);
		ulen = be16_at(udp + 4);
		CHECK_EQ(be16_at(ip + 4), ulen);
		CHECK_EQ(r->len, 14u + 40 + ulen);
		CHECK_EQ(ip[6], 17);
		CHECK_EQ(ip[7], o.hop_limit);
		CHECK(ip[8] == 0x20 && ip[9] == 0x01 && ip[23] == src->ip[3]);
		CHECK(ip[24] == 0x20 && ip[25] == 0x01 && ip[39] == dst->ip[3]);
		CHECK_EQ(be16_at(udp + 2), TERN_ROCE_UDP_DPORT);
		CHECK_EQ(be16_at(udp), o.sport);
		/* UDP over IPv6: the checksum is mandatory and covers the pseudo-header */
		CHECK(be16_at(udp + 6) != 0);
		s = sum16(0, ip + 8, 32);
		s += ulen;
		s += 17;
		s = sum16(s, udp, ulen);
		CHECK_EQ(s, 0xffff);
		CHECK_EQ(p.icrc_wire, p.icrc_calc);
	}
	CHECK(dirs[0] > 5 && dirs[1] > 5);
	printf("#   %u IPv6 frames checked\n", n);
out:
	if (mrs) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

/* IPv4: DF, the identification counts up per frame of each port, header checksum right. */
static void t_ipv4_id(void)
{
	struct connopt o;
	struct conn c;
	struct rmr m[2];
	bool mrs = false;
	struct sge sg;
	unsigned int i, k, n[2] = { 0, 0 };
	uint16_t next[2] = { 0, 0 };
	struct pkt p;

	connopt_default(&o);
	o.vlan_id = 12;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &m[0], c.d[0]->pdn, 65536, acc_all, 0) == 0);
	if (mr_create(c.d[1], &m[1], c.d[1]->pdn, 65536, acc_all, 0) != 0) {
		mr_release(&m[0]);
		RQ(0);
	}
	mrs = true;
	for (k = 0; k < 4; k++) {
		sg = mr_sge(&m[0], 0, 5000);
		RQ(one_op(&c, 0, TERN_WQE_RDMA_WRITE, k, &sg, m[1].iova, m[1].key));
		sg = mr_sge(&m[0], 10000, 3000);
		RQ(one_op(&c, 0, TERN_WQE_RDMA_READ, k, &sg, m[1].iova, m[1].key));
	}
	for (i = 0; i < c.w.nlog; i++) {
		const struct wire_rec *r = &c.w.log[i];
		const uint8_t *ip = r->data + 18;

		RQ(pkt_parse(r->data, r->len, &p));
		CHECK(p.ip_csum_ok);
		CHECK_EQ(sum16(0, ip, 20), 0xffff);
		CHECK_EQ(be16_at(ip + 6), 0x4000);	/* DF, no fragment offset */
		CHECK_EQ(be16_at(ip + 4), next[r->dir]);
		next[r->dir] = (uint16_t)(be16_at(ip + 4) + 1);
		n[r->dir]++;
	}
	CHECK(n[0] >= 4 * 6);
	CHECK(n[1] >= 4 * 4);
	/* from 0 after the reset (device creation), one per frame */
	CHECK_EQ(n[0], next[0]);
	CHECK_EQ(n[1], next[1]);
out:
	if (mrs) {
		mr_release(&m[0]);
		mr_release(&m[1]);
	}
	conn_free(&c);
}

const struct test rdma_loss_tests[] = {
	{ "rdma loss: drop/reorder/dup/corrupt on both ports: MBs of WRITE/READ/SEND intact",
	  t_lossy_bulk },
	{ "rdma loss: 100% drop: RETRY_EXC_ERR after retry_cnt timeouts, QP in ERR", t_total_loss },
	{ "rdma loss: retrans, seq/RNR NAKs sent, duplicate responses counted", t_recovery_counters },
	{ "rdma loss: opcode out of sequence counted in rx_opcode_seq_err", t_opcode_seq_counter },
	{ "rdma loss: P_Key other than 0x7fff dropped and counted, resent", t_pkey },
	{ "rdma loss: IPv6 path: header, UDP checksum, data both ways", t_ipv6_path },
	{ "rdma loss: IPv4 ID counts per frame, DF, header checksum", t_ipv4_id },
	{ NULL, NULL },
};
