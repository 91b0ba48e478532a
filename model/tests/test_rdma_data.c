/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* RDMA data path: every operation, sizes, MTUs, SGEs, inline, queues wrapping, signaling. */
#include <stdlib.h>

#include "test_rdma.h"

#define MAX_PIECES 64

struct piece {
	uint64_t off;
	uint32_t len;
};

/* @n pieces holding @total bytes from @start, uneven, @gap bytes apart; returns the end. */
static uint64_t layout(struct piece *p, unsigned int n, uint64_t start, uint64_t total,
		       unsigned int gap)
{
	uint64_t w = (uint64_t)n * (n + 1) / 2, used = 0, off = start;
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint64_t len = i + 1 == n ? total - used : total * (i + 1) / w;

		p[i].off = off;
		p[i].len = (uint32_t)len;
		used += len;
		off += len + gap;
	}
	return off;
}

static unsigned int to_sges(struct sge *sg, const struct rmr *mr, const struct piece *p,
			    unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		sg[i] = mr_sge(mr, p[i].off, p[i].len);
	return n;
}

/* What a message of @size bytes gathered from @src pieces (pattern @seed) is. */
static uint8_t *gather(const struct piece *p, unsigned int n, unsigned int seed, uint64_t size)
{
	uint8_t *m = malloc(size ? size : 1);
	uint64_t k = 0, j;
	unsigned int i;

	for (i = 0; i < n && k < size; i++)
		for (j = 0; j < p[i].len && k < size; j++)
			m[k++] = pat(seed, p[i].off + j);
	return m;
}

/* The MR must hold pattern @seed everywhere except @msg scattered over the pieces. */
static bool check_scatter(struct rdev *d, const struct rmr *mr, unsigned int seed,
			  const struct piece *p, unsigned int n, const uint8_t *msg, uint64_t size)
{
	uint8_t *expect = malloc(mr->len), *got = malloc(mr->len);
	uint64_t k = 0, j, i;
	bool ok = true;

	for (i = 0; i < mr->len; i++)
		expect[i] = pat(seed, i);
	for (i = 0; i < n && k < size; i++)
		for (j = 0; j < p[i].len && k < size; j++)
			expect[p[i].off + j] = msg[k++];
	mr_read(d, mr, 0, got, mr->len);
	for (i = 0; i < mr->len; i++) {
		if (got[i] != expect[i]) {
			printf("#   MR byte %llu of %llu: 0x%02x, expected 0x%02x\n",
			       (unsigned long long)i, (unsigned long long)mr->len, got[i],
			       expect[i]);
			ok = false;
			break;
		}
	}
	free(expect);
	free(got);
	return ok;
}

static unsigned int mr_shift_for(struct rdev *d, uint64_t len)
{
	unsigned int s;

	for (s = 12; s < 30; s++)
		if ((d->caps.page_size_cap & (1ull << s)) &&
		    (len + (1ull << s) - 1) / (1ull << s) + 1 <= d->caps.max_mr_pages)
			return s;
	return 12;
}

struct msg {
	uint8_t op;		/* TERN_WQE_* */
	uint64_t size;
	unsigned int src_off, dst_off;	/* page offsets of the MRs and of the data in them */
	unsigned int nsrc, ndst;	/* SGEs at the requester (source or READ sink), responder */
	uint32_t imm;
	uint8_t flags;		/* extra WQE flags */
	bool inl;
	unsigned int page_shift;	/* of both MRs; 0: smallest that fits */
};

/*
 * One message from side 0 to side 1 (READ: from side 1's memory into side 0's), checked
 * byte for byte, with both CQEs checked field by field. wr_ids are unique per call.
 */
static bool one_msg(struct conn *c, const struct msg *m)
{
	static uint64_t wr_seq = 0x1000;
	struct rdev *rq_dev = c->d[0], *rs_dev = c->d[1];
	struct piece ps[MAX_PIECES], pd[MAX_PIECES];
	struct sge sg[MAX_PIECES];
	struct rmr smr, dmr;	/* data source, data sink */
	struct rdev *sd, *dd;
	bool is_read = m->op == TERN_WQE_RDMA_READ;
	bool is_write = m->op == TERN_WQE_RDMA_WRITE || m->op == TERN_WQE_RDMA_WRITE_IMM;
	bool has_imm = m->op == TERN_WQE_SEND_IMM || m->op == TERN_WQE_RDMA_WRITE_IMM;
	bool wants_recv = !is_read && m->op != TERN_WQE_RDMA_WRITE;
	uint64_t send_id = ++wr_seq, recv_id = ++wr_seq, send_end, dst_end;
	unsigned int nsrc = m->nsrc ? m->nsrc : 1, ndst = m->ndst ? m->ndst : 1;
	unsigned int sseed = (unsigned int)send_id, dseed = (unsigned int)recv_id;
	unsigned int sslot, rslot = 0, fails = (unsigned int)t_failures;
	uint8_t *msg = NULL;
	struct wc w;

	sd = is_read ? rs_dev : rq_dev;
	dd = is_read ? rq_dev : rs_dev;
	if (is_write || is_read)
		ndst = is_read ? nsrc : 1;
	/* source pieces (for READ: one remote range) */
	send_end = layout(ps, is_read ? 1 : nsrc, m->src_off, m->size, is_read ? 0 : 5);
	dst_end = layout(pd, is_read || is_write ? (is_read ? nsrc : 1) : ndst, m->dst_off,
			 m->size + (is_read || is_write ? 0 : 13), is_read || is_write ? 0 : 3);
	if (is_read) {
		/* a READ scatters into the requester's local SGEs: ps/pd swap roles */
		dst_end = layout(pd, nsrc, m->dst_off, m->size, 3);
	}
	if (mr_create_ex(sd, &smr, sd->pdn, send_end + 11,
			 TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_READ, m->src_off % 4096,
			 m->page_shift ? m->page_shift : mr_shift_for(sd, send_end + 11),
			 (uint8_t)sseed) != TERN_CMD_OK ||
	    mr_create_ex(dd, &dmr, dd->pdn, dst_end + 17,
			 TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, m->dst_off % 4096,
			 m->page_shift ? m->page_shift : mr_shift_for(dd, dst_end + 17),
			 (uint8_t)dseed) != TERN_CMD_OK) {
		t_failures++;
		printf("#   CREATE_MR failed\n");
		return false;
	}
	mr_fill(sd, &smr, sseed);
	mr_fill(dd, &dmr, dseed);
	msg = gather(ps, is_read ? 1 : nsrc, sseed, m->size);
	if (wants_recv) {
		unsigned int n = m->op == TERN_WQE_RDMA_WRITE_IMM ? 0 : ndst;

		rslot = post_recv(rs_dev, &c->qp[1], recv_id, sg, to_sges(sg, &dmr, pd, n));
		ring_rq(rs_dev, &c->qp[1]);
	}
	if (m->inl) {
		sslot = post_send_inline(rq_dev, &c->qp[0], m->op, TERN_WQE_F_SIGNALED | m->flags,
					 send_id, msg, (uint32_t)m->size, dmr.iova + pd[0].off,
					 dmr.key, m->imm);
	} else if (is_read) {
		sslot = post_send(rq_dev, &c->qp[0], m->op, TERN_WQE_F_SIGNALED | m->flags, send_id,
				  sg, to_sges(sg, &dmr, pd, nsrc), smr.iova + ps[0].off, smr.key,
				  0);
	} else {
		sslot = post_send(rq_dev, &c->qp[0], m->op, TERN_WQE_F_SIGNALED | m->flags, send_id,
				  sg, m->size || !is_write ? to_sges(sg, &smr, ps, nsrc) : 0,
				  is_write ? dmr.iova + pd[0].off : 0, is_write ? dmr.key : 0,
				  m->imm);
	}
	ring_sq(rq_dev, &c->qp[0]);
	/* requester completion */
	if (conn_poll(c, 0, &w, 1, 20000000ull) == 1) {
		CHECK_WC(&w, m->op, TERN_CQE_OK, send_id);
		CHECK_EQ(w.qpn, c->qp[0].qpn);
		CHECK_EQ(w.wqe_idx, sslot);
		CHECK_EQ(w.vendor_err, 0);
		if (is_read)
			CHECK_EQ(w.byte_len, m->size);
		CHECK_EQ(w.flags & TERN_CQE_F_IMM, 0);
	} else {
		t_failures++;
	}
	CHECK(!cq_peek(rq_dev, &c->cq[0]));
	/* responder completion */
	if (wants_recv) {
		if (conn_poll(c, 1, &w, 1, 1000000ull) == 1) {
			CHECK_EQ(w.opcode, m->op == TERN_WQE_SEND ? TERN_CQE_RECV :
					   m->op == TERN_WQE_SEND_IMM ? TERN_CQE_RECV_IMM :
									TERN_CQE_RECV_RDMA_WRITE_IMM);
			CHECK_EQ(w.status, TERN_CQE_OK);
			CHECK_EQ(w.wr_id, recv_id);
			CHECK_EQ(w.byte_len, m->size);
			CHECK_EQ(w.qpn, c->qp[1].qpn);
			CHECK_EQ(w.src_qpn, 0);
			CHECK_EQ(w.wqe_idx, rslot);
			CHECK_EQ(w.flags & TERN_CQE_F_IMM, has_imm ? TERN_CQE_F_IMM : 0);
			if (has_imm)
				CHECK_EQ(w.imm, m->imm);
			CHECK_EQ(!!(w.flags & TERN_CQE_F_SOLICITED),
				 !!(m->flags & TERN_WQE_F_SOLICITED));
		} else {
			t_failures++;
		}
	}
	CHECK(!cq_peek(rs_dev, &c->cq[1]));
	/* memory: the sink holds the message where it belongs and nothing else changed */
	if (!check_scatter(dd, &dmr, dseed, pd, is_read ? nsrc : is_write ? 1 : ndst, msg,
			   m->size))
		t_failures++;
	/* the source is untouched */
	CHECK_EQ(mr_diff_pattern(sd, &smr, 0, smr.len, sseed, 0), -1);
	CHECK_EQ(mr_destroy(sd, &smr), TERN_CMD_OK);
	CHECK_EQ(mr_destroy(dd, &dmr), TERN_CMD_OK);
	mr_release(&smr);
	mr_release(&dmr);
	free(msg);
	if ((unsigned int)t_failures != fails) {
		printf("#   ^ op %u size %llu src_off %u dst_off %u nsrc %u ndst %u inline %d\n",
		       m->op, (unsigned long long)m->size, m->src_off, m->dst_off, nsrc, ndst,
		       m->inl);
		return false;
	}
	return true;
}

static uint64_t dev_clock(struct rdev *d)
{
	return tern_model_mmio_read(d->f.m, TERN_BAR_REGS, TERN_REG_CLOCK_LO, 8);
}

/* One SEND without data from side 0 to side 1; both completions, their timestamps in @ts. */
static bool ts_send(struct conn *c, uint64_t id, uint64_t ts[2])
{
	struct wc w;
	bool ok = true;

	post_recv(c->d[1], &c->qp[1], id + 1, NULL, 0);
	ring_rq(c->d[1], &c->qp[1]);
	post_send(c->d[0], &c->qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, id, NULL, 0, 0, 0, 0);
	ring_sq(c->d[0], &c->qp[0]);
	if (conn_poll(c, 0, &w, 1, 20000000ull) != 1)
		return false;
	CHECK_WC(&w, TERN_WQE_SEND, TERN_CQE_OK, id);
	ts[0] = w.ts;
	if (conn_poll(c, 1, &w, 1, 1000000ull) != 1)
		return false;
	CHECK_WC(&w, TERN_CQE_RECV, TERN_CQE_OK, id + 1);
	ts[1] = w.ts;
	return ok;
}

/*
 * CQs created with TERN_CQ_F_TIMESTAMP: 64-byte CQEs with the device clock when each was
 * written (between the clock read before the post and after the poll, never going back, on
 * both sides), around a small ring several times, after a step of the clock (the adjusted
 * clock is the one stamped), and kept through RESIZE_CQ; bad flags and a ring too deep for
 * 64-byte CQEs refused.
 */
static void t_cqe_timestamps(void)
{
	struct connopt o;
	struct conn c;
	uint64_t ts[2], prev[2] = { 0, 0 }, before, after;
	uint8_t in[sizeof(struct tern_cmd_create_cq_in)];
	struct wc w[2];
	struct rcq cq;
	struct cqe cc;
	unsigned int i;

	connopt_default(&o);
	o.cq_flags = TERN_CQ_F_TIMESTAMP;
	o.cq_log = 2;			/* 4 CQEs: wraps many times */
	RQ(conn_setup(&c, &o));
	for (i = 0; i < 24; i++) {
		/* time goes on between messages (the pair delivers at once otherwise) */
		wire_advance(&c.w, 1000 + 37 * i);
		before = dev_clock(c.d[0]);
		RQ(ts_send(&c, 0x100 + 2 * i, ts));
		after = dev_clock(c.d[0]);
		CHECK(ts[0] >= before && ts[0] <= after);
		CHECK(ts[0] > prev[0] && ts[1] > prev[1]);
		prev[0] = ts[0];
		prev[1] = ts[1];
	}
	/* the clock stepped: the CQEs carry the adjusted time */
	wreg(&c.d[0]->f, TERN_REG_CLOCK_ARG_LO, 0);
	wreg(&c.d[0]->f, TERN_REG_CLOCK_ARG_HI, 0x10000);	/* 2^48 ns */
	wreg(&c.d[0]->f, TERN_REG_CLOCK_CMD, TERN_CLOCK_CMD_SET);
	RQ(ts_send(&c, 0x200, ts));
	CHECK(ts[0] >= (1ull << 48) && ts[0] < (1ull << 48) + 1000000000ull);
	CHECK(ts[1] < (1ull << 48));		/* the other device's clock did not move */
	/* two CQEs left in the ring, then RESIZE_CQ: they move with their timestamps */
	wire_advance(&c.w, 5000);
	before = dev_clock(c.d[0]);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 0x300, NULL, 0, 0,
		  0, 0);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 0x301, NULL, 0, 0,
		  0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	cq = c.cq[0];
	cq.ci++;			/* the second one's slot */
	wire_pump(&c.w);
	for (i = 0; i < 1000 && !cq_peek(c.d[0], &cq); i++)
		wire_advance(&c.w, 20000);
	RQ(cq_peek(c.d[0], &cq));
	RQ(cq_resize(c.d[0], &c.cq[0], 4, false) == TERN_CMD_OK);
	RQ(cq_poll(c.d[0], &c.cq[0], &w[0]) && cq_poll(c.d[0], &c.cq[0], &w[1]));
	CHECK_WC(&w[0], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 0x300);
	CHECK_WC(&w[1], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 0x301);
	after = dev_clock(c.d[0]);
	CHECK(w[0].ts >= before && w[0].ts <= w[1].ts && w[1].ts <= after);
	CHECK(w[0].ts >= (1ull << 48) + 5000);
	wire_advance(&c.w, 5000);
	RQ(ts_send(&c, 0x400, ts));
	CHECK(ts[0] > w[1].ts);
	/* refused: an unknown flag; a 64-byte ring as deep as the deepest 32-byte one */
	CHECK_EQ(cq_create_flags(c.d[0], &cq, 4, false, 0x02), TERN_CMD_BAD_PARAM);
	qmem_free(&cq.mem);
	memset(in, 0, sizeof(in));
	in[offsetof(struct tern_cmd_create_cq_in, log_depth)] = c.d[0]->caps.max_cq_log;
	in[offsetof(struct tern_cmd_create_cq_in, flags)] = TERN_CQ_F_TIMESTAMP;
	CHECK_EQ(rdev_cmd(c.d[0], TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &cc),
		 TERN_CMD_BAD_PARAM);
	CHECK_EQ(cc.syndrome, offsetof(struct tern_cmd_create_cq_in, log_depth));
out:
	conn_free(&c);
}

static const uint8_t all_ops[] = {
	TERN_WQE_SEND, TERN_WQE_SEND_IMM, TERN_WQE_RDMA_WRITE, TERN_WQE_RDMA_WRITE_IMM,
	TERN_WQE_RDMA_READ,
};

/* Each operation, each MTU, sizes around the MTU, unaligned offsets; one SGE each side. */
static void t_ops_sizes_mtus(void)
{
	struct connopt o;
	struct conn c;
	unsigned int mtu, op, k, n = 0;

	for (mtu = 1; mtu <= 5; mtu++) {
		uint64_t pm = 128u << mtu;
		uint64_t sizes[] = { 0, 1, 3, pm - 1, pm, pm + 1, 3 * pm + 5, 16 * pm + 2 };

		connopt_default(&o);
		o.mtu = (uint8_t)mtu;
		o.psn[0] = 0xfffffa + mtu;	/* PSNs wrap 2^24 within the run */
		if (!conn_setup(&c, &o)) {
			t_failures++;
			conn_free(&c);
			return;
		}
		for (op = 0; op < sizeof(all_ops); op++) {
			for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++, n++) {
				struct msg m = {
					.op = all_ops[op],
					.size = sizes[k],
					.src_off = (n * 13) % 4096,
					.dst_off = (n * 29 + 3) % 4096,
					.imm = 0x11223300u + n,
				};

				if (!one_msg(&c, &m)) {
					conn_free(&c);
					return;
				}
			}
		}
		conn_free(&c);
	}
}

static unsigned int log2_up(unsigned int v)
{
	unsigned int l = 0;

	while ((1u << l) < v)
		l++;
	return l;
}

/* 1..max SGEs on both sides, including zero-length SGEs. */
static void t_sges(void)
{
	struct connopt o;
	struct conn c;
	struct rdev *probe = rdev_new(0);
	unsigned int ms, mr_, i, j, op, n = 0;
	uint64_t sizes[] = { 1, 40, 5000 };

	REQUIRE(probe);
	ms = probe->caps.max_send_sge;
	mr_ = probe->caps.max_recv_sge;
	rdev_free(probe);
	if (ms > MAX_PIECES)
		ms = MAX_PIECES;
	if (mr_ > MAX_PIECES)
		mr_ = MAX_PIECES;
	connopt_default(&o);
	o.sq_stride = log2_up(32 + 16 * ms);
	o.rq_stride = log2_up(16 + 16 * mr_);
	if (o.sq_stride < TERN_SQ_MIN_LOG_STRIDE)
		o.sq_stride = TERN_SQ_MIN_LOG_STRIDE;
	if (o.rq_stride < TERN_RQ_MIN_LOG_STRIDE)
		o.rq_stride = TERN_RQ_MIN_LOG_STRIDE;
	o.sq_log = 4;
	o.rq_log = 4;
	REQUIRE(conn_setup(&c, &o));
	{
		unsigned int ns[] = { 1, 2, ms / 2 ? ms / 2 : 1, ms };
		unsigned int nr[] = { 1, 2, mr_ };

		for (i = 0; i < 4; i++) {
			for (j = 0; j < 3; j++) {
				for (op = 0; op < sizeof(all_ops); op++) {
					unsigned int k;

					for (k = 0; k < 3; k++, n++) {
						struct msg m = {
							.op = all_ops[op],
							.size = sizes[k],
							.src_off = (n * 7) % 4096,
							.dst_off = (n * 11 + 1) % 4096,
							.nsrc = ns[i],
							.ndst = nr[j],
							.imm = n,
						};

						if (j && all_ops[op] != TERN_WQE_SEND &&
						    all_ops[op] != TERN_WQE_SEND_IMM)
							continue;
						if (!one_msg(&c, &m))
							goto out;
					}
				}
			}
		}
	}
out:
	conn_free(&c);
}

/* Several MiB in one message, at the smallest and largest MTU. */
static void t_large(void)
{
	struct connopt o;
	struct conn c;
	unsigned int op;
	static const uint8_t mtus[] = { 5, 3 };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		uint64_t size = i == 0 ? (6u << 20) + 123 : (1u << 20) + 7;

		connopt_default(&o);
		o.mtu = mtus[i];
		REQUIRE(conn_setup(&c, &o));
		for (op = 0; op < sizeof(all_ops); op++) {
			struct msg m = {
				.op = all_ops[op],
				.size = size,
				.src_off = 100 + op,
				.dst_off = 4000 - op,
				.nsrc = 3,
				.ndst = 2,
				.imm = 0xdeadbeef,
			};

			if (!one_msg(&c, &m))
				break;
		}
		conn_free(&c);
	}
}

/* Inline data: SEND, SEND_IMM, WRITE, WRITE_IMM up to max_inline bytes. */
static void t_inline(void)
{
	struct connopt o;
	struct conn c;
	unsigned int op, k, n = 0, max;
	static const uint8_t ops[] = { TERN_WQE_SEND, TERN_WQE_SEND_IMM, TERN_WQE_RDMA_WRITE,
				       TERN_WQE_RDMA_WRITE_IMM };

	connopt_default(&o);
	o.sq_stride = TERN_SQ_MAX_LOG_STRIDE;
	o.mtu = 1;	/* inline data longer than one packet */
	REQUIRE(conn_setup(&c, &o));
	max = c.d[0]->caps.max_inline;
	if (max > (1u << TERN_SQ_MAX_LOG_STRIDE) - 32)
		max = (1u << TERN_SQ_MAX_LOG_STRIDE) - 32;
	for (op = 0; op < sizeof(ops); op++) {
		uint64_t sizes[] = { 0, 1, 7, 64, max / 2 + 1, max };

		for (k = 0; k < 6; k++, n++) {
			struct msg m = {
				.op = ops[op],
				.size = sizes[k],
				.dst_off = (n * 131) % 4096,
				.imm = 0xa5a50000u | n,
				.inl = true,
			};

			if (!one_msg(&c, &m))
				goto out;
		}
	}
out:
	conn_free(&c);
}

/* SE bit: the receive CQE carries SOLICITED. */
static void t_solicited_flag(void)
{
	struct connopt o;
	struct conn c;
	struct msg m = { .op = TERN_WQE_SEND, .size = 10, .flags = TERN_WQE_F_SOLICITED };
	struct msg m2 = { .op = TERN_WQE_RDMA_WRITE_IMM, .size = 3000, .imm = 5,
			  .flags = TERN_WQE_F_SOLICITED };
	struct pkt p;
	unsigned int i, se = 0, last_se = 0;

	connopt_default(&o);
	REQUIRE(conn_setup(&c, &o));
	one_msg(&c, &m);
	one_msg(&c, &m2);
	/* on the wire: SE only on the last packet of each message */
	for (i = 0; i < c.w.nlog; i++) {
		if (c.w.log[i].dir || !pkt_parse(c.w.log[i].data, c.w.log[i].len, &p))
			continue;
		if (p.se)
			se++;
		if (p.se && (p.opcode == OP_SEND_ONLY || p.opcode == OP_WRITE_LAST_IMM))
			last_se++;
	}
	CHECK_EQ(se, 2);
	CHECK_EQ(last_se, 2);
	conn_free(&c);
}

/*
 * Many messages in flight through small rings (SQ/RQ 16, CQ 32 on page lists): the rings wrap
 * many times, CQEs come in order with the right slots, every message lands where it should.
 */
static void t_many_inflight_wrap(void)
{
	struct connopt o;
	struct conn c;
	struct rmr smr, dmr;
	struct sge sg;
	struct wc w;
	unsigned int total = 700, posted = 0, done_s = 0, done_r = 0, i, rposted = 0;
	const unsigned int slot_bytes = 3000;
	bool mr_ok = false;

	connopt_default(&o);
	o.sq_log = 4;
	o.rq_log = 4;
	o.cq_log = 5;
	o.page_list = true;
	o.mtu = 1;
	RQ(conn_setup(&c, &o));
	RQ(mr_create(c.d[0], &smr, c.d[0]->pdn, 16 * slot_bytes, TERN_ACCESS_LOCAL_WRITE, 3) == 0);
	RQ(mr_create(c.d[1], &dmr, c.d[1]->pdn, 16 * slot_bytes, TERN_ACCESS_LOCAL_WRITE, 9) == 0);
	mr_ok = true;
	while (done_r < total || done_s < total) {
		/* keep both rings as full as the driver may (CQ room: 32 > 16 outstanding) */
		while (rposted < total && rposted - done_r < 16) {
			sg = mr_sge(&dmr, (rposted % 16) * slot_bytes, slot_bytes);
			post_recv(c.d[1], &c.qp[1], 0x100000 + rposted, &sg, 1);
			rposted++;
		}
		ring_rq(c.d[1], &c.qp[1]);
		while (posted < total && posted - done_s < 16 && posted < rposted) {
			uint32_t len = (posted * 37) % slot_bytes;
			uint8_t *buf = malloc(len + 1);

			for (i = 0; i < len; i++)
				buf[i] = pat(posted, i);
			mr_write(c.d[0], &smr, (posted % 16) * slot_bytes, buf, len);
			free(buf);
			sg = mr_sge(&smr, (posted % 16) * slot_bytes, len);
			post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, posted, &sg, 1,
				  0, 0, 0);
			posted++;
		}
		ring_sq(c.d[0], &c.qp[0]);
		wire_pump(&c.w);
		if (!cq_peek(c.d[0], &c.cq[0]) && !cq_peek(c.d[1], &c.cq[1]))
			wire_advance(&c.w, 100000);
		while (cq_poll(c.d[1], &c.cq[1], &w)) {
			uint32_t len = (done_r * 37) % slot_bytes;

			CHECK_EQ(w.opcode, TERN_CQE_RECV);
			CHECK_EQ(w.status, TERN_CQE_OK);
			CHECK_EQ(w.wr_id, 0x100000 + done_r);
			CHECK_EQ(w.wqe_idx, done_r % 16);
			CHECK_EQ(w.byte_len, len);
			if (mr_diff_pattern(c.d[1], &dmr, (done_r % 16) * slot_bytes, len, done_r, 0) !=
			    -1) {
				t_failures++;
				printf("#   message %u corrupted\n", done_r);
			}
			done_r++;
			if (t_failures > 5)
				goto out;
		}
		while (cq_poll(c.d[0], &c.cq[0], &w)) {
			CHECK_WC(&w, TERN_WQE_SEND, TERN_CQE_OK, done_s);
			CHECK_EQ(w.wqe_idx, done_s % 16);
			done_s++;
			if (t_failures > 5)
				goto out;
		}
		if (wire_now(&c.w) > 2000000000ull + 1000000000ull) {
			t_failures++;
			printf("#   stuck: %u/%u sent, %u/%u received\n", done_s, total, done_r,
			       total);
			break;
		}
	}
	CHECK_EQ(done_s, total);
	CHECK_EQ(done_r, total);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_send_requests), total);
	CHECK_EQ(RDEV_STAT(c.d[1], out_of_buffer), 0);
	{
		uint8_t q[sizeof(struct tern_cmd_query_qp_out)];

		RQ(qp_query(c.d[0], c.qp[0].qpn, q) == TERN_CMD_OK);
		CHECK_EQ(rd16(q + OFF(struct tern_cmd_query_qp_out, sq_ci)), total & 0xffff);
		RQ(qp_query(c.d[1], c.qp[1].qpn, q) == TERN_CMD_OK);
		CHECK_EQ(rd16(q + OFF(struct tern_cmd_query_qp_out, rq_ci)), total & 0xffff);
	}
out:
	if (mr_ok) {
		mr_release(&smr);
		mr_release(&dmr);
	}
	conn_free(&c);
}

/* Unsignaled WQEs give no CQE; a later signaled one does; SQ_SIG_ALL signals all. */
static void t_signaling(void)
{
	struct connopt o;
	struct conn c;
	struct rmr smr, dmr;
	struct sge sg;
	struct wc w[8];
	unsigned int i, pass;
	bool mr_ok = false;

	for (pass = 0; pass < 2; pass++) {
		connopt_default(&o);
		o.qp_flags = pass ? TERN_QP_F_SQ_SIG_ALL : 0;
		o.sq_log = 3;
		RQ(conn_setup(&c, &o));
		RQ(mr_create(c.d[0], &smr, c.d[0]->pdn, 8192, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
		RQ(mr_create(c.d[1], &dmr, c.d[1]->pdn, 8192,
			     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0) == 0);
		mr_ok = true;
		mr_fill(c.d[0], &smr, 77);
		/* 3 rounds of 5 WQEs through a ring of 8: 2nd and 5th signaled */
		for (i = 0; i < 15; i++) {
			sg = mr_sge(&smr, i * 100, 100);
			post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE,
				  (i % 5 == 1 || i % 5 == 4) ? TERN_WQE_F_SIGNALED : 0, 500 + i,
				  &sg, 1, dmr.iova + i * 100, dmr.key, 0);
			if (i % 5 == 4) {
				unsigned int want = pass ? 5 : 2, got, k;

				ring_sq(c.d[0], &c.qp[0]);
				got = conn_poll(&c, 0, w, want, 5000000);
				CHECK_EQ(got, want);
				for (k = 0; k < got; k++) {
					unsigned int idx = pass ? i - 4 + k : (k ? i : i - 3);

					CHECK_WC(&w[k], TERN_WQE_RDMA_WRITE, TERN_CQE_OK, 500 + idx);
					CHECK_EQ(w[k].wqe_idx, idx % 8);
				}
				wire_advance(&c.w, 1000000);
				CHECK(!cq_peek(c.d[0], &c.cq[0]));
			}
		}
		CHECK_EQ(mr_diff_pattern(c.d[1], &dmr, 0, 1500, 77, 0), -1);
		{
			uint8_t q[sizeof(struct tern_cmd_query_qp_out)];

			RQ(qp_query(c.d[0], c.qp[0].qpn, q) == TERN_CMD_OK);
			CHECK_EQ(rd16(q + OFF(struct tern_cmd_query_qp_out, sq_ci)), 15);
		}
		mr_release(&smr);
		mr_release(&dmr);
		mr_ok = false;
		conn_free(&c);
	}
	return;
out:
	if (mr_ok) {
		mr_release(&smr);
		mr_release(&dmr);
	}
	conn_free(&c);
}

/* Traffic both ways at once on one connection: each side is requester and responder. */
static void t_bidirectional(void)
{
	struct connopt o;
	struct conn c;
	struct rmr mr[2];
	struct sge sg;
	struct wc w[64];
	unsigned int s, i, got[2] = { 0, 0 }, sends[2] = { 0, 0 }, recvs[2] = { 0, 0 };
	bool mr_ok = false;

	connopt_default(&o);
	o.mtu = 2;
	RQ(conn_setup(&c, &o));
	for (s = 0; s < 2; s++)
		RQ(mr_create(c.d[s], &mr[s], c.d[s]->pdn, 1 << 20,
			     TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
				     TERN_ACCESS_REMOTE_READ, 0) == 0);
	mr_ok = true;
	for (s = 0; s < 2; s++) {
		mr_fill(c.d[s], &mr[s], 10 + s);
		for (i = 0; i < 8; i++) {
			sg = mr_sge(&mr[s], 0x80000 + i * 4096, 4096);
			post_recv(c.d[s], &c.qp[s], 900 + i, &sg, 1);
		}
		ring_rq(c.d[s], &c.qp[s]);
	}
	for (s = 0; s < 2; s++) {
		for (i = 0; i < 8; i++) {
			sg = mr_sge(&mr[s], i * 4096, 4000);
			post_send(c.d[s], &c.qp[s], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, i, &sg, 1, 0, 0,
				  0);
			sg = mr_sge(&mr[s], 0x40000 + i * 8192, 8192);
			post_send(c.d[s], &c.qp[s], i & 1 ? TERN_WQE_RDMA_READ : TERN_WQE_RDMA_WRITE,
				  TERN_WQE_F_SIGNALED, 100 + i, &sg, 1,
				  mr[!s].iova + 0xc0000 + i * 8192, mr[!s].key, 0);
		}
		ring_sq(c.d[s], &c.qp[s]);
	}
	for (s = 0; s < 2; s++) {
		got[s] = conn_poll(&c, s, w, 24, 20000000);
		for (i = 0; i < got[s]; i++) {
			CHECK_EQ(w[i].status, TERN_CQE_OK);
			if (w[i].opcode == TERN_CQE_RECV)
				recvs[s]++;
			else
				sends[s]++;
		}
	}
	for (s = 0; s < 2; s++) {
		CHECK_EQ(got[s], 24);
		CHECK_EQ(sends[s], 16);
		CHECK_EQ(recvs[s], 8);
		for (i = 0; i < 8; i++) {
			/* SENDs from the peer */
			CHECK_EQ(mr_diff_pattern(c.d[s], &mr[s], 0x80000 + i * 4096, 4000, 10 + !s,
						 i * 4096), -1);
			if (i & 1) /* READ: my buffer got the peer's bytes */
				CHECK_EQ(mr_diff_pattern(c.d[s], &mr[s], 0x40000 + i * 8192, 8192,
							 10 + !s, 0xc0000 + i * 8192), -1);
			else /* peer WRITE landed in my memory */
				CHECK_EQ(mr_diff_pattern(c.d[!s], &mr[!s], 0xc0000 + i * 8192, 8192,
							 10 + s, 0x40000 + i * 8192), -1);
		}
	}
out:
	if (mr_ok) {
		mr_release(&mr[0]);
		mr_release(&mr[1]);
	}
	conn_free(&c);
}

/* MRs of 8 KiB, 64 KiB and 2 MiB pages, offsets inside the first page, messages crossing
 * page boundaries. */
static void t_mr_page_sizes(void)
{
	static const unsigned int shifts[] = { 13, 16, 21 };
	struct connopt o;
	struct conn c;
	unsigned int i, op, n = 0;

	connopt_default(&o);
	o.mtu = 4;
	REQUIRE(conn_setup(&c, &o));
	for (i = 0; i < 3; i++) {
		if (!(c.d[0]->caps.page_size_cap & (1ull << shifts[i])))
			continue;
		for (op = 0; op < sizeof(all_ops); op++, n++) {
			struct msg m = {
				.op = all_ops[op],
				.size = (1u << shifts[i]) + 3000 + n,
				.src_off = (1u << shifts[i]) - 1000 + n,
				.dst_off = (1u << shifts[i]) / 2 + 7 * n,
				.nsrc = 2,
				.ndst = 2,
				.page_shift = shifts[i],
			};

			if (!one_msg(&c, &m))
				goto out;
		}
	}
out:
	conn_free(&c);
}

/* Kernel DMA MRs (PHYSICAL): SGEs and remote addresses are bus addresses. */
static void t_physical_mr(void)
{
	typedef struct tern_cmd_create_mr_in T;
	struct connopt o;
	struct conn c;
	uint8_t in[sizeof(T)];
	uint32_t key[2];
	uint64_t buf[2];
	struct cqe cq;
	struct wc w;
	unsigned int s, i;
	uint8_t *p0, *p1;

	connopt_default(&o);
	REQUIRE(conn_setup(&c, &o));
	for (s = 0; s < 2; s++) {
		memset(in, 0, sizeof(in));
		wr32(in + OFF(T, pdn), c.d[s]->pdn);
		wr32(in + OFF(T, access), TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
						  TERN_ACCESS_REMOTE_READ);
		in[OFF(T, flags)] = TERN_MR_F_PHYSICAL;
		in[OFF(T, key)] = 0x42;
		in[OFF(T, page_shift)] = 12;
		if (rdev_cmd(c.d[s], TERN_CMD_CREATE_MR, in, sizeof(in), NULL, 0, &cq) != 0) {
			t_failures++;
			printf("#   PHYSICAL CREATE_MR status %u\n", cq.status);
			goto out;
		}
		key[s] = cq.result << 8 | 0x42;
		buf[s] = fk_alloc_data(&c.d[s]->f, 20000, 1) + 1;
		for (i = 0; i < 20000 - 1; i++)
			fk_ptr(&c.d[s]->f, buf[s] + i, 1)[0] = pat(s + 40, i);
	}
	/* SEND 5000 bytes, WRITE 3000, READ 7000 */
	post_recv(c.d[1], &c.qp[1], 1, &(struct sge){ buf[1], 6000, key[1] }, 1);
	ring_rq(c.d[1], &c.qp[1]);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 1,
		  &(struct sge){ buf[0], 5000, key[0] }, 1, 0, 0, 0);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, 2,
		  &(struct sge){ buf[0] + 5000, 3000, key[0] }, 1, buf[1] + 6000, key[1], 0);
	post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_READ, TERN_WQE_F_SIGNALED, 3,
		  &(struct sge){ buf[0] + 10000, 7000, key[0] }, 1, buf[1] + 10000, key[1], 0);
	ring_sq(c.d[0], &c.qp[0]);
	for (i = 0; i < 3; i++) {
		if (conn_poll(&c, 0, &w, 1, 5000000) != 1) {
			t_failures++;
			goto out;
		}
		CHECK_EQ(w.status, TERN_CQE_OK);
		CHECK_EQ(w.wr_id, i + 1);
	}
	if (conn_poll(&c, 1, &w, 1, 1000000) == 1)
		CHECK_WC(&w, TERN_CQE_RECV, TERN_CQE_OK, 1);
	else
		t_failures++;
	p0 = fk_ptr(&c.d[0]->f, buf[0], 19999);
	p1 = fk_ptr(&c.d[1]->f, buf[1], 19999);
	for (i = 0; i < 5000; i++)
		if (p1[i] != pat(40, i))
			break;
	CHECK_EQ(i, 5000);
	for (i = 5000; i < 6000; i++)	/* rest of the receive buffer untouched */
		if (p1[i] != pat(41, i))
			break;
	CHECK_EQ(i, 6000);
	for (i = 0; i < 3000; i++)
		if (p1[6000 + i] != pat(40, 5000 + i))
			break;
	CHECK_EQ(i, 3000);
	for (i = 0; i < 7000; i++)
		if (p0[10000 + i] != pat(41, 10000 + i))
			break;
	CHECK_EQ(i, 7000);
out:
	conn_free(&c);
}

const struct test rdma_data_tests[] = {
	{ "rdma data: 5 ops x MTU 256..4096 x sizes 0..16 MTU, unaligned", t_ops_sizes_mtus },
	{ "rdma data: 1..max SGEs on both sides", t_sges },
	{ "rdma data: several MiB in one message (MTU 4096 and 1024)", t_large },
	{ "rdma data: inline SEND/WRITE up to max_inline", t_inline },
	{ "rdma data: MRs with 8 KiB, 64 KiB, 2 MiB pages", t_mr_page_sizes },
	{ "rdma data: PHYSICAL (kernel DMA) MRs for SEND, WRITE, READ", t_physical_mr },
	{ "rdma data: solicited bit on the wire and in the receive CQE", t_solicited_flag },
	{ "rdma data: 700 SENDs through SQ/RQ 16, CQ 32 page lists (wrap)", t_many_inflight_wrap },
	{ "rdma data: unsignaled WQEs, SQ_SIG_ALL", t_signaling },
	{ "rdma data: both directions at once (SEND, WRITE, READ)", t_bidirectional },
	{ "rdma data: 64-byte CQEs with the device clock (TERN_CQ_F_TIMESTAMP), resize",
	  t_cqe_timestamps },
	{ NULL, NULL },
};
