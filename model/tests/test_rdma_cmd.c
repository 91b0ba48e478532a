/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* RDMA commands: limits, PD/MR/CQ/QP creation rules, QP state machine, exhaustion, reset. */
#include <stdlib.h>

#include "test_rdma.h"

typedef struct tern_cmd_create_mr_in MRI;
typedef struct tern_cmd_create_cq_in CQI;
typedef struct tern_cmd_create_qp_in QPI;
typedef struct tern_cmd_modify_qp_in MQI;
typedef struct tern_cmd_query_qp_out QQO;

static void t_query_rdma(void)
{
	typedef struct tern_cmd_query_rdma_out T;
	uint8_t out[sizeof(T)], big[sizeof(T) + 8];
	struct rdev *d = rdev_new(0);
	struct rcaps *c;
	struct cqe cq;

	REQUIRE(d);
	c = &d->caps;
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA, NULL, 0, out, sizeof(out), &cq), TERN_CMD_OK);
	CHECK_EQ(cq.out_len, sizeof(T));
	/* a larger buffer still gets exactly the structure */
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA, NULL, 0, big, sizeof(big), &cq), TERN_CMD_OK);
	CHECK_EQ(cq.out_len, sizeof(T));
	CHECK(c->max_qp > 2 && c->max_qp <= (1u << 24));
	CHECK(c->max_cq >= 1 && c->max_cq <= (1u << 24));
	CHECK(c->max_mr >= 1 && c->max_mr <= (1u << 24));	/* index << 8 fits 32 bits */
	CHECK(c->max_pd >= 1);
	CHECK(c->max_mr_size >= (8u << 20));
	CHECK(c->page_size_cap & (1ull << 12));
	CHECK_EQ(c->page_size_cap & 0xfff, 0);			/* no page below 4 KiB */
	CHECK(c->max_msg_size >= (8u << 20));
	CHECK(c->max_mr_pages >= 1);
	CHECK(c->max_total_mr_pages >= c->max_mr_pages);
	CHECK(c->max_total_sq_wqes >= (1u << c->max_sq_log));
	CHECK(c->max_sq_log >= 6 && c->max_sq_log <= 16);
	CHECK(c->max_rq_log >= 6 && c->max_rq_log <= 16);
	CHECK(c->max_cq_log >= 8 && c->max_cq_log <= 24);
	CHECK(c->max_send_sge >= 2 && c->max_send_sge <= (1024 - 32) / 16);
	CHECK(c->max_recv_sge >= 1 && c->max_recv_sge <= (512 - 16) / 16);
	CHECK(c->max_rd_atomic >= 1);
	CHECK(c->max_dest_rd_atomic >= 1);
	CHECK(c->ack_delay <= 31);
	CHECK(c->max_inline >= 1 && c->max_inline <= 1024 - 32);
	CHECK_EQ(rd16(out + OFF(T, rsvd0)), 0);
	CHECK_EQ(rd16(out + OFF(T, max_counter_sets)), 64);
	CHECK_EQ(rd16(out + OFF(T, rsvd)), 0);
	/* UD multicast: the table's bounds (rdma_mcast.c) */
	CHECK(rd32(out + OFF(T, cap_flags)) & TERN_RDMA_CAP_MCAST);
	CHECK(rd16(out + OFF(T, max_mcast_grp)) >= 1);
	CHECK(rd16(out + OFF(T, max_mcast_qp_attach)) >= 1);
	/* fast registration: page lists as long as the kernel's ULPs map (NVMe: 256) */
	CHECK(rd32(out + OFF(T, cap_flags)) & TERN_RDMA_CAP_MEM_MGT);
	CHECK(rd32(out + OFF(T, max_fast_reg_pages)) >= 256);
	/* moderation, with room above what DIM asks (32 CQEs, 32 us) and verbs.t uses (1 ms) */
	CHECK(rd32(out + OFF(T, cap_flags)) & TERN_RDMA_CAP_CQ_MODERATION);
	CHECK(rd16(out + OFF(T, max_cq_moder_count)) >= 256);
	CHECK(rd16(out + OFF(T, max_cq_moder_period)) >= 1000);
	/* no input allowed; output must fit */
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA, out, 4, out, sizeof(out), &cq), TERN_CMD_BAD_LEN);
	CHECK_EQ(cq.syndrome, 0);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA, NULL, 0, out, sizeof(T) - 1, &cq),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(cq.syndrome, sizeof(T));
	CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_RDMA_STATS, NULL, 0, NULL, 319, &cq), TERN_CMD_BAD_LEN);
	CHECK_EQ(cq.syndrome, sizeof(struct tern_cmd_rdma_stats_out));
	/* device says it has RDMA */
	{
		uint8_t dev[sizeof(struct tern_cmd_query_device_out)];

		CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_DEVICE, NULL, 0, dev, sizeof(dev), NULL),
			 TERN_CMD_OK);
		CHECK(rd32(dev + OFF(struct tern_cmd_query_device_out, caps)) & TERN_DEV_CAP_RDMA);
	}
	rdev_free(d);
}

static void t_pd_cmds(void)
{
	struct rdev *d = rdev_new(0);
	uint32_t p[4];
	uint8_t in[8] = { 0 };
	struct cqe c;
	unsigned int i, j;

	REQUIRE(d);
	for (i = 0; i < 4; i++) {
		CHECK_EQ(pd_create(d, &p[i]), TERN_CMD_OK);
		CHECK(p[i] < d->caps.max_pd);
		CHECK(p[i] != d->pdn);
		for (j = 0; j < i; j++)
			CHECK(p[i] != p[j]);
	}
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_PD, in, 4, NULL, 0, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_PD, in, 8, NULL, 0, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, 4);
	CHECK_EQ(pd_destroy(d, p[1]), TERN_CMD_OK);
	CHECK_EQ(pd_destroy(d, p[1]), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(pd_destroy(d, d->caps.max_pd), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(pd_destroy(d, 0xffffffff), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(pd_destroy(d, p[0]), TERN_CMD_OK);
	CHECK_EQ(pd_destroy(d, p[2]), TERN_CMD_OK);
	CHECK_EQ(pd_destroy(d, p[3]), TERN_CMD_OK);
	rdev_free(d);
}

/* A valid CREATE_MR input (4 pages of 4 KiB at a page list) for the rule checks. */
static void mr_in_valid(struct rdev *d, uint8_t in[sizeof(MRI)], uint64_t *pbl)
{
	uint8_t *list;
	unsigned int i;

	if (!*pbl) {
		*pbl = fk_alloc_data(&d->f, 4096, 4096);
		list = fk_ptr(&d->f, *pbl, 32);
		for (i = 0; i < 4; i++)
			wr64(list + 8 * i, fk_alloc_data(&d->f, 4096, 4096));
	}
	memset(in, 0, sizeof(MRI));
	wr32(in + OFF(MRI, pdn), d->pdn);
	wr32(in + OFF(MRI, access), TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_READ);
	wr64(in + OFF(MRI, iova), 0x12345000ull + 0x10);
	wr64(in + OFF(MRI, length), 4 * 4096 - 0x10);
	in[OFF(MRI, key)] = 0x77;
	in[OFF(MRI, page_shift)] = 12;
	wr32(in + OFF(MRI, npages), 4);
	wr64(in + OFF(MRI, pbl) + OFF(struct tern_mem_desc, addr), *pbl);
	wr32(in + OFF(MRI, pbl) + OFF(struct tern_mem_desc, npages), 1);
	in[OFF(MRI, pbl) + OFF(struct tern_mem_desc, page_shift)] = 12;
	in[OFF(MRI, pbl) + OFF(struct tern_mem_desc, mode)] = TERN_MEM_DIRECT;
}

static int mr_raw(struct rdev *d, const uint8_t *in, uint16_t len, struct cqe *c)
{
	return rdev_cmd(d, TERN_CMD_CREATE_MR, in, len, NULL, 0, c);
}

static void t_mr_cmds(void)
{
	struct rdev *d = rdev_new(0);
	uint8_t in[sizeof(MRI) + 4], k4[4];
	uint64_t pbl = 0;
	uint32_t key, key2, pd2;
	struct cqe c;
	unsigned int ps;

	REQUIRE(d);
	mr_in_valid(d, in, &pbl);
	REQUIRE(mr_raw(d, in, sizeof(MRI), &c) == TERN_CMD_OK);
	CHECK(c.result < d->caps.max_mr);
	key = c.result << 8 | 0x77;
	REQUIRE(mr_raw(d, in, sizeof(MRI), &c) == TERN_CMD_OK);
	key2 = c.result << 8 | 0x77;
	CHECK(key2 != key);
	/* length of the input */
	CHECK_EQ(mr_raw(d, in, sizeof(MRI) - 1, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, sizeof(MRI));
	CHECK_EQ(mr_raw(d, in, sizeof(MRI) + 4, &c), TERN_CMD_BAD_LEN);
	/* reserved, unknown flags and access bits */
	in[OFF(MRI, rsvd0)] = 1;
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MRI, rsvd0));
	mr_in_valid(d, in, &pbl);
	in[OFF(MRI, flags)] = 0x80;
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MRI, flags));
	mr_in_valid(d, in, &pbl);
	wr32(in + OFF(MRI, access), 1u << 7);
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MRI, access));
	mr_in_valid(d, in, &pbl);
	in[OFF(MRI, pbl) + OFF(struct tern_mem_desc, rsvd)] = 1;
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_BAD_PARAM);
	/* bad values */
	mr_in_valid(d, in, &pbl);
	wr64(in + OFF(MRI, length), 0);
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MRI, length));
	mr_in_valid(d, in, &pbl);
	wr64(in + OFF(MRI, length), d->caps.max_mr_size + 1);
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_BAD_PARAM);
	mr_in_valid(d, in, &pbl);
	wr32(in + OFF(MRI, npages), 0);
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_BAD_PARAM);
	mr_in_valid(d, in, &pbl);
	wr32(in + OFF(MRI, npages), d->caps.max_mr_pages + 1);
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_BAD_PARAM);
	/* 4 pages cannot hold 0x10 + 4 pages of bytes */
	mr_in_valid(d, in, &pbl);
	wr64(in + OFF(MRI, length), 4 * 4096 - 0x10 + 1);
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_BAD_PARAM);
	for (ps = 0; ps < 64; ps++) {
		if (d->caps.page_size_cap & (1ull << ps))
			continue;
		mr_in_valid(d, in, &pbl);
		in[OFF(MRI, page_shift)] = (uint8_t)ps;
		CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_BAD_PARAM);
		if (ps > 13)
			break;
	}
	/* PHYSICAL with a page list, or without but with npages: inconsistent */
	mr_in_valid(d, in, &pbl);
	in[OFF(MRI, flags)] = TERN_MR_F_PHYSICAL;
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_BAD_PARAM);
	/* unknown PD, unreachable page list */
	mr_in_valid(d, in, &pbl);
	wr32(in + OFF(MRI, pdn), d->caps.max_pd - 1 == d->pdn ? 0 : d->caps.max_pd - 1);
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_BAD_RESOURCE);
	wr32(in + OFF(MRI, pdn), 0xffffffff);
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_BAD_RESOURCE);
	mr_in_valid(d, in, &pbl);
	wr64(in + OFF(MRI, pbl) + OFF(struct tern_mem_desc, addr), FK_BAD_ADDR);
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_DMA_ERROR);
	/* a kernel DMA MR: bus addresses, no page list */
	memset(in, 0, sizeof(MRI));
	wr32(in + OFF(MRI, pdn), d->pdn);
	wr32(in + OFF(MRI, access), TERN_ACCESS_LOCAL_WRITE);
	in[OFF(MRI, flags)] = TERN_MR_F_PHYSICAL;
	in[OFF(MRI, key)] = 3;
	in[OFF(MRI, page_shift)] = 12;
	CHECK_EQ(mr_raw(d, in, sizeof(MRI), &c), TERN_CMD_OK);
	wr32(k4, c.result << 8 | 3);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_MR, k4, 4, NULL, 0, &c), TERN_CMD_OK);
	/* DESTROY_MR: the whole key must match */
	wr32(k4, key ^ 0x01);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_MR, k4, 4, NULL, 0, &c), TERN_CMD_BAD_RESOURCE);
	wr32(k4, key);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_MR, k4, 3, NULL, 0, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_MR, k4, 4, NULL, 0, &c), TERN_CMD_OK);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_MR, k4, 4, NULL, 0, &c), TERN_CMD_BAD_RESOURCE);
	/* a PD with an MR cannot go; without it, it can */
	REQUIRE(pd_create(d, &pd2) == TERN_CMD_OK);
	mr_in_valid(d, in, &pbl);
	wr32(in + OFF(MRI, pdn), pd2);
	REQUIRE(mr_raw(d, in, sizeof(MRI), &c) == TERN_CMD_OK);
	CHECK_EQ(pd_destroy(d, pd2), TERN_CMD_BAD_STATE);
	wr32(k4, c.result << 8 | 0x77);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_MR, k4, 4, NULL, 0, &c), TERN_CMD_OK);
	CHECK_EQ(pd_destroy(d, pd2), TERN_CMD_OK);
	wr32(k4, key2);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_MR, k4, 4, NULL, 0, &c), TERN_CMD_OK);
	rdev_free(d);
}

static void cq_in_valid(struct rdev *d, uint8_t in[sizeof(CQI)], struct qmem *m, unsigned int log)
{
	memset(in, 0, sizeof(CQI));
	qmem_desc(m, in + OFF(CQI, mem));
	in[OFF(CQI, log_depth)] = (uint8_t)log;
	wr16(in + OFF(CQI, eqn), (uint16_t)d->comp_eq.num);
	wr16(in + OFF(CQI, uar), d->uar);
}

static void t_cq_cmds(void)
{
	struct rdev *d = rdev_new(0);
	uint8_t in[sizeof(CQI)], k4[4];
	struct qmem m;
	struct rcq cq, cq2;
	struct cqe c;
	uint32_t cqn;

	REQUIRE(d);
	qmem_alloc(d, &m, (32u << 6) + 8, false);
	cq_in_valid(d, in, &m, 6);
	REQUIRE(rdev_cmd(d, TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &c) == TERN_CMD_OK);
	cqn = c.result;
	CHECK(cqn < d->caps.max_cq);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_CQ, in, sizeof(in) - 2, NULL, 0, &c), TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, sizeof(CQI));
	in[OFF(CQI, flags)] = 0x80;	/* not a TERN_CQ_F_* */
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(CQI, flags));
	cq_in_valid(d, in, &m, 6);
	wr16(in + OFF(CQI, rsvd1), 1);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(CQI, rsvd1));
	cq_in_valid(d, in, &m, 0);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(CQI, log_depth));
	cq_in_valid(d, in, &m, d->caps.max_cq_log + 1u);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	/* memory too small for ring + CI record (64 entries + 8 bytes need 2 pages) */
	cq_in_valid(d, in, &m, 7);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	/* doorbell page: 0 is the kernel's, 256 does not exist */
	cq_in_valid(d, in, &m, 6);
	wr16(in + OFF(CQI, uar), 0);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(CQI, uar));
	wr16(in + OFF(CQI, uar), TERN_DB_NUM_PAGES);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	/* EQ that does not exist */
	cq_in_valid(d, in, &m, 6);
	wr16(in + OFF(CQI, eqn), 9);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &c),
		 TERN_CMD_BAD_RESOURCE);
	/* memory descriptor: bad mode, page list unreachable */
	cq_in_valid(d, in, &m, 6);
	in[OFF(CQI, mem) + OFF(struct tern_mem_desc, mode)] = 7;
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_BAD_PARAM);
	cq_in_valid(d, in, &m, 6);
	wr64(in + OFF(CQI, mem) + OFF(struct tern_mem_desc, addr), FK_BAD_ADDR);
	in[OFF(CQI, mem) + OFF(struct tern_mem_desc, mode)] = TERN_MEM_PAGE_LIST;
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_DMA_ERROR);
	/* an EQ with a CQ reporting to it cannot be destroyed */
	wr32(k4, d->comp_eq.num);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_EQ, k4, 4, NULL, 0, &c), TERN_CMD_BAD_STATE);
	/* destroy */
	wr32(k4, cqn);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_CQ, k4, 4, NULL, 0, &c), TERN_CMD_OK);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_CQ, k4, 4, NULL, 0, &c), TERN_CMD_BAD_RESOURCE);
	wr32(k4, d->caps.max_cq);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_CQ, k4, 4, NULL, 0, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_CQ, k4, 2, NULL, 0, &c), TERN_CMD_BAD_LEN);
	/* page-list CQ and the deepest allowed */
	CHECK_EQ(cq_create(d, &cq, 9, true), TERN_CMD_OK);
	CHECK_EQ(cq_create(d, &cq2, d->caps.max_cq_log > 14 ? 14 : d->caps.max_cq_log, false),
		 TERN_CMD_OK);
	CHECK_EQ(cq_destroy(d, &cq), TERN_CMD_OK);
	CHECK_EQ(cq_destroy(d, &cq2), TERN_CMD_OK);
	wr32(k4, d->comp_eq.num);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_EQ, k4, 4, NULL, 0, &c), TERN_CMD_OK);
	rdev_free(d);
}

static void qp_in_valid(struct rdev *d, uint8_t in[sizeof(QPI)], const struct rcq *cq,
			struct qmem *sq, struct qmem *rq)
{
	memset(in, 0, sizeof(QPI));
	wr32(in + OFF(QPI, pdn), d->pdn);
	wr32(in + OFF(QPI, send_cqn), cq->cqn);
	wr32(in + OFF(QPI, recv_cqn), cq->cqn);
	in[OFF(QPI, type)] = TERN_QPT_RC;
	wr16(in + OFF(QPI, uar), d->uar);
	in[OFF(QPI, log_sq_depth)] = 4;
	in[OFF(QPI, log_sq_stride)] = 6;
	in[OFF(QPI, log_rq_depth)] = 4;
	in[OFF(QPI, log_rq_stride)] = 5;
	qmem_desc(sq, in + OFF(QPI, sq_mem));
	qmem_desc(rq, in + OFF(QPI, rq_mem));
}

static int qp_raw(struct rdev *d, const uint8_t *in, struct cqe *c)
{
	return rdev_cmd(d, TERN_CMD_CREATE_QP, in, sizeof(QPI), NULL, 0, c);
}

static void t_qp_create_cmds(void)
{
	struct rdev *d = rdev_new(0);
	uint8_t in[sizeof(QPI)], k4[4];
	struct qmem sq, rq;
	struct rcq cq;
	struct cqe c;
	uint32_t qpn, qpn2;

	REQUIRE(d);
	REQUIRE(cq_create(d, &cq, 6, false) == TERN_CMD_OK);
	qmem_alloc(d, &sq, 16 * 1024, false);
	qmem_alloc(d, &rq, 16 * 1024, true);
	qp_in_valid(d, in, &cq, &sq, &rq);
	REQUIRE(qp_raw(d, in, &c) == TERN_CMD_OK);
	qpn = c.result;
	CHECK(qpn >= 2 && qpn < d->caps.max_qp);
	CHECK_EQ(qp_state(d, qpn), TERN_QPS_RESET);
	REQUIRE(qp_raw(d, in, &c) == TERN_CMD_OK);
	qpn2 = c.result;
	CHECK(qpn2 >= 2 && qpn2 < d->caps.max_qp && qpn2 != qpn);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_CREATE_QP, in, sizeof(QPI) - 1, NULL, 0, &c),
		 TERN_CMD_BAD_LEN);
	CHECK_EQ(c.syndrome, sizeof(QPI));
	/* reserved and unknown values */
	wr32(in + OFF(QPI, srqn), 1);
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(QPI, srqn));
	qp_in_valid(d, in, &cq, &sq, &rq);
	in[OFF(QPI, type)] = TERN_QPT_UC + 1;	/* unknown type */
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(QPI, type));
	qp_in_valid(d, in, &cq, &sq, &rq);
	in[OFF(QPI, flags)] = 0x08;	/* above TERN_QP_F_RQ_DB_REC */
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(QPI, flags));
	qp_in_valid(d, in, &cq, &sq, &rq);
	in[OFF(QPI, flags)] = TERN_QP_F_RQ_DB_REC | TERN_QP_F_SRQ;	/* no RQ, no record */
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(QPI, flags));
	qp_in_valid(d, in, &cq, &sq, &rq);
	in[OFF(QPI, log_sq_stride)] = TERN_SQ_MIN_LOG_STRIDE - 1;
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(QPI, log_sq_stride));
	in[OFF(QPI, log_sq_stride)] = TERN_SQ_MAX_LOG_STRIDE + 1;
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	qp_in_valid(d, in, &cq, &sq, &rq);
	in[OFF(QPI, log_rq_stride)] = TERN_RQ_MIN_LOG_STRIDE - 1;
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(QPI, log_rq_stride));
	in[OFF(QPI, log_rq_stride)] = TERN_RQ_MAX_LOG_STRIDE + 1;
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	qp_in_valid(d, in, &cq, &sq, &rq);
	in[OFF(QPI, log_sq_depth)] = 0;
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(QPI, log_sq_depth));
	in[OFF(QPI, log_sq_depth)] = (uint8_t)(d->caps.max_sq_log + 1);
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	qp_in_valid(d, in, &cq, &sq, &rq);
	in[OFF(QPI, log_rq_depth)] = 0;
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	in[OFF(QPI, log_rq_depth)] = (uint8_t)(d->caps.max_rq_log + 1);
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	/* SQ memory smaller than depth << stride (16 KiB given, 32 KiB needed) */
	qp_in_valid(d, in, &cq, &sq, &rq);
	in[OFF(QPI, log_sq_depth)] = 5;
	in[OFF(QPI, log_sq_stride)] = 10;
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	qp_in_valid(d, in, &cq, &sq, &rq);
	wr16(in + OFF(QPI, uar), 0);
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(QPI, uar));
	/* objects that do not exist */
	qp_in_valid(d, in, &cq, &sq, &rq);
	wr32(in + OFF(QPI, pdn), d->pdn + 1);
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_RESOURCE);
	qp_in_valid(d, in, &cq, &sq, &rq);
	wr32(in + OFF(QPI, send_cqn), cq.cqn + 1);
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_RESOURCE);
	qp_in_valid(d, in, &cq, &sq, &rq);
	wr32(in + OFF(QPI, recv_cqn), 0xffffff);
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_BAD_RESOURCE);
	qp_in_valid(d, in, &cq, &sq, &rq);
	wr64(in + OFF(QPI, rq_mem) + OFF(struct tern_mem_desc, addr), FK_BAD_ADDR);
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_DMA_ERROR);
	/* QP0/QP1 and unknown numbers */
	wr32(k4, 0);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_QP, k4, 4, NULL, 0, &c), TERN_CMD_BAD_RESOURCE);
	wr32(k4, 1);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_QP, k4, 4, NULL, 0, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(qp_state(d, 1), -1);
	CHECK_EQ(qp_state(d, d->caps.max_qp), -1);
	CHECK_EQ(qp_to_err(d, &(struct rqp){ .qpn = 0 }), TERN_CMD_BAD_RESOURCE);
	wr32(k4, qpn);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_QP, k4, 4, NULL, 0, &c), TERN_CMD_OK);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_QP, k4, 4, NULL, 0, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(qp_state(d, qpn), -1);
	CHECK_EQ(qp_state(d, qpn2), TERN_QPS_RESET);
	/* QUERY_QP: in_len and out_len */
	{
		uint8_t out[sizeof(QQO)];

		wr32(k4, qpn2);
		CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_QP, k4, 4, out, TERN_QUERY_QP_OUT_V1_LEN - 1,
				  &c), TERN_CMD_BAD_LEN);
		CHECK_EQ(c.syndrome, sizeof(QQO));
		/* a reply buffer between two versions: the older one (V2 before xport) */
		CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_QP, k4, 4, out, TERN_QUERY_QP_OUT_V2_LEN - 1,
				  &c), TERN_CMD_OK);
		CHECK_EQ(c.out_len, TERN_QUERY_QP_OUT_V1_LEN);
		CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_QP, k4, 4, out, TERN_QUERY_QP_OUT_V3_LEN - 1,
				  &c), TERN_CMD_OK);
		CHECK_EQ(c.out_len, TERN_QUERY_QP_OUT_V2_LEN);
		/* V3 before the round trip, V4 before TIMELY's fields */
		CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_QP, k4, 4, out, TERN_QUERY_QP_OUT_V4_LEN - 1,
				  &c), TERN_CMD_OK);
		CHECK_EQ(c.out_len, TERN_QUERY_QP_OUT_V3_LEN);
		CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_QP, k4, 4, out, sizeof(QQO) - 1, &c),
			 TERN_CMD_OK);
		CHECK_EQ(c.out_len, TERN_QUERY_QP_OUT_V4_LEN);
		CHECK_EQ(rdev_cmd(d, TERN_CMD_QUERY_QP, k4, 2, out, sizeof(QQO), &c),
			 TERN_CMD_BAD_LEN);
	}
	wr32(k4, qpn2);
	CHECK_EQ(rdev_cmd(d, TERN_CMD_DESTROY_QP, k4, 4, NULL, 0, &c), TERN_CMD_OK);
	qmem_free(&sq);
	qmem_free(&rq);
	CHECK_EQ(cq_destroy(d, &cq), TERN_CMD_OK);
	rdev_free(d);
}

/* Two QPs on one device, connected to each other's numbers (nothing is sent). */
static const uint32_t RTR_MASK = TERN_QP_ATTR_STATE | TERN_QP_ATTR_PATH | TERN_QP_ATTR_PATH_MTU |
				 TERN_QP_ATTR_DEST_QPN | TERN_QP_ATTR_RQ_PSN |
				 TERN_QP_ATTR_MAX_DEST_RD_ATOMIC | TERN_QP_ATTR_MIN_RNR_TIMER;
static const uint32_t RTS_MASK = TERN_QP_ATTR_STATE | TERN_QP_ATTR_SQ_PSN | TERN_QP_ATTR_TIMEOUT |
				 TERN_QP_ATTR_RETRY_CNT | TERN_QP_ATTR_RNR_RETRY |
				 TERN_QP_ATTR_MAX_RD_ATOMIC;

static void attrs_for(struct qpattr *a, struct rdev *d, uint8_t state)
{
	struct connopt o;
	static struct rdev peer;	/* only its MAC and IP are used */

	connopt_default(&o);
	memset(a, 0, sizeof(*a));
	memcpy(peer.mac, d->mac, 6);
	peer.mac[5] ^= 0x40;
	memcpy(peer.ip, d->ip, 4);
	peer.ip[3] = 77;
	path_fill(a, d, &peer, &o);
	a->state = state;
	a->access = TERN_ACCESS_REMOTE_WRITE;
	a->path_mtu = 4;
	a->timeout = 17;
	a->retry_cnt = 5;
	a->rnr_retry = 6;
	a->min_rnr_timer = 12;
	a->max_rd_atomic = 1;
	a->max_dest_rd_atomic = 1;
	a->dest_qpn = 0x00abcd;
	a->rq_psn = 0x765432;
	a->sq_psn = 0x0fedcb;
}

static int mod(struct rdev *d, uint32_t qpn, uint32_t mask, uint8_t state)
{
	struct qpattr a;

	attrs_for(&a, d, state);
	return qp_modify(d, qpn, mask, &a, NULL);
}

/* MODIFY_QP with the attrs of a valid INIT->RTR, one byte changed */
static int rtr_with(struct rdev *d, uint32_t qpn, size_t attr_off, unsigned int width,
		    uint32_t val, uint32_t extra_mask, struct cqe *c)
{
	uint8_t in[sizeof(MQI)];
	struct qpattr a;

	attrs_for(&a, d, TERN_QPS_RTR);
	a.access = 0;
	a.timeout = a.retry_cnt = a.rnr_retry = a.max_rd_atomic = 0;
	a.sq_psn = 0;
	memset(in, 0, sizeof(in));
	wr32(in + OFF(MQI, qpn), qpn);
	wr32(in + OFF(MQI, attr_mask), RTR_MASK | extra_mask);
	qpattr_encode(&a, in + OFF(MQI, attrs));
	if (width == 1)
		in[OFF(MQI, attrs) + attr_off] = (uint8_t)val;
	else if (width == 2)
		wr16(in + OFF(MQI, attrs) + attr_off, (uint16_t)val);
	else if (width == 4)
		wr32(in + OFF(MQI, attrs) + attr_off, val);
	return qp_modify_raw(d, in, c);
}

static void t_qp_state_machine(void)
{
	struct rdev *d = rdev_new(0);
	uint8_t q[sizeof(QQO)], expect[sizeof(struct tern_qp_attrs)];
	struct rcq cq;
	struct rqp qp;
	struct qpattr a;
	struct cqe c;
	unsigned int i;
	int st;

	REQUIRE(d);
	REQUIRE(cq_create(d, &cq, 6, false) == TERN_CMD_OK);
	REQUIRE(qp_create(d, &qp, d->pdn, &cq, &cq, 4, 6, 4, 5, 0, false) == TERN_CMD_OK);
	/* illegal from RESET */
	CHECK_EQ(mod(d, qp.qpn, RTR_MASK, TERN_QPS_RTR), TERN_CMD_BAD_STATE);
	CHECK_EQ(mod(d, qp.qpn, RTS_MASK, TERN_QPS_RTS), TERN_CMD_BAD_STATE);
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE, TERN_QPS_SQD), TERN_CMD_BAD_STATE);
	CHECK_EQ(qp_state(d, qp.qpn), TERN_QPS_RESET);
	/* state out of range, unknown attribute bits */
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE, 7), TERN_CMD_BAD_PARAM);
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE | (1u << 20), TERN_QPS_INIT), TERN_CMD_BAD_PARAM);
	CHECK_EQ(qp_state(d, qp.qpn), TERN_QPS_RESET);
	/* RESET->INIT, INIT->INIT */
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_ACCESS, TERN_QPS_INIT), TERN_CMD_OK);
	CHECK_EQ(qp_state(d, qp.qpn), TERN_QPS_INIT);
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_ACCESS, TERN_QPS_INIT), TERN_CMD_OK);
	/* INIT->RTS skips RTR */
	CHECK_EQ(mod(d, qp.qpn, RTS_MASK, TERN_QPS_RTS), TERN_CMD_BAD_STATE);
	/* INIT->RTR without each required attribute fails and leaves the QP in INIT */
	for (i = 1; i < 32; i++) {
		uint32_t bit = 1u << i;

		if (!(RTR_MASK & bit))
			continue;
		st = mod(d, qp.qpn, RTR_MASK & ~bit, TERN_QPS_RTR);
		if (st != TERN_CMD_BAD_PARAM && st != TERN_CMD_BAD_STATE) {
			t_failures++;
			printf("#   INIT->RTR without attr 0x%x: status %d\n", bit, st);
		}
		CHECK_EQ(qp_state(d, qp.qpn), TERN_QPS_INIT);
	}
	/* bad values at INIT->RTR: BAD_PARAM with the field's offset */
	CHECK_EQ(rtr_with(d, qp.qpn, QPA(path_mtu), 1, 0, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MQI, attrs) + QPA(path_mtu));
	CHECK_EQ(rtr_with(d, qp.qpn, QPA(path_mtu), 1, 6, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(rtr_with(d, qp.qpn, QPA(min_rnr_timer), 1, 32, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(rtr_with(d, qp.qpn, QPA(max_dest_rd_atomic), 1, d->caps.max_dest_rd_atomic + 1u,
			  0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(rtr_with(d, qp.qpn, QPA(dest_qpn), 4, 1u << 24, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(rtr_with(d, qp.qpn, QPA(rq_psn), 4, 1u << 24, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(rtr_with(d, qp.qpn, PATH(ip_version), 1, 5, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MQI, attrs) + PATH(ip_version));
	CHECK_EQ(rtr_with(d, qp.qpn, PATH(vlan_id), 2, 4096, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(rtr_with(d, qp.qpn, PATH(sl), 1, 8, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(rtr_with(d, qp.qpn, PATH(rsvd0), 2, 1, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MQI, attrs) + PATH(rsvd0));
	CHECK_EQ(rtr_with(d, qp.qpn, PATH(rsvd1), 4, 1, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(rtr_with(d, qp.qpn, QPA(qkey), 4, 1, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MQI, attrs) + QPA(qkey));
	/* an attribute outside the mask must be zero */
	CHECK_EQ(rtr_with(d, qp.qpn, QPA(retry_cnt), 1, 3, 0, &c), TERN_CMD_BAD_PARAM);
	CHECK_EQ(c.syndrome, OFF(MQI, attrs) + QPA(retry_cnt));
	CHECK_EQ(qp_state(d, qp.qpn), TERN_QPS_INIT);
	/* INIT->RTR for real */
	CHECK_EQ(mod(d, qp.qpn, RTR_MASK, TERN_QPS_RTR), TERN_CMD_OK);
	CHECK_EQ(qp_state(d, qp.qpn), TERN_QPS_RTR);
	CHECK_EQ(mod(d, qp.qpn, RTR_MASK, TERN_QPS_RTR), TERN_CMD_BAD_STATE);	/* RTR->RTR */
	/* RTR->RTS: missing attributes, bad values */
	st = mod(d, qp.qpn, RTS_MASK & ~TERN_QP_ATTR_SQ_PSN, TERN_QPS_RTS);
	CHECK(st == TERN_CMD_BAD_PARAM || st == TERN_CMD_BAD_STATE);
	attrs_for(&a, d, TERN_QPS_RTS);
	a.retry_cnt = 8;
	CHECK_EQ(qp_modify(d, qp.qpn, RTS_MASK, &a, NULL), TERN_CMD_BAD_PARAM);
	attrs_for(&a, d, TERN_QPS_RTS);
	a.rnr_retry = 8;
	CHECK_EQ(qp_modify(d, qp.qpn, RTS_MASK, &a, NULL), TERN_CMD_BAD_PARAM);
	attrs_for(&a, d, TERN_QPS_RTS);
	a.timeout = 32;
	CHECK_EQ(qp_modify(d, qp.qpn, RTS_MASK, &a, NULL), TERN_CMD_BAD_PARAM);
	attrs_for(&a, d, TERN_QPS_RTS);
	a.max_rd_atomic = (uint8_t)(d->caps.max_rd_atomic + 1);
	CHECK_EQ(qp_modify(d, qp.qpn, RTS_MASK, &a, NULL), TERN_CMD_BAD_PARAM);
	CHECK_EQ(qp_state(d, qp.qpn), TERN_QPS_RTR);
	CHECK_EQ(mod(d, qp.qpn, RTS_MASK, TERN_QPS_RTS), TERN_CMD_OK);
	/* QUERY_QP reports everything that was set */
	REQUIRE(qp_query(d, qp.qpn, q) == TERN_CMD_OK);
	attrs_for(&a, d, TERN_QPS_RTS);
	qpattr_encode(&a, expect);
	for (i = 0; i < sizeof(expect); i++) {
		if (q[OFF(QQO, attrs) + i] != expect[i]) {
			t_failures++;
			printf("#   QUERY_QP attrs byte %u: 0x%02x, expected 0x%02x\n", i,
			       q[OFF(QQO, attrs) + i], expect[i]);
		}
	}
	CHECK_EQ(rd32(q + OFF(QQO, status)), 0);
	CHECK_EQ(rd16(q + OFF(QQO, sq_ci)), 0);
	CHECK_EQ(rd16(q + OFF(QQO, rq_ci)), 0);
	CHECK_EQ(rd32(q + OFF(QQO, cc_rate_mbps)), 0);	/* not rate limited */
	/* RTS->RTS changes what IB allows there (access, min_rnr_timer); RTS->RTR and
	 * RTS->INIT are illegal */
	attrs_for(&a, d, TERN_QPS_RTS);
	a.min_rnr_timer = 3;
	a.access = TERN_ACCESS_REMOTE_READ;
	CHECK_EQ(qp_modify(d, qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_MIN_RNR_TIMER |
				  TERN_QP_ATTR_ACCESS, &a, NULL), TERN_CMD_OK);
	REQUIRE(qp_query(d, qp.qpn, q) == TERN_CMD_OK);
	CHECK_EQ(q[OFF(QQO, attrs) + QPA(min_rnr_timer)], 3);
	CHECK_EQ(rd32(q + OFF(QQO, attrs) + QPA(access)), TERN_ACCESS_REMOTE_READ);
	CHECK_EQ(q[OFF(QQO, attrs) + QPA(retry_cnt)], 5);
	CHECK_EQ(q[OFF(QQO, attrs) + QPA(timeout)], 17);
	CHECK_EQ(mod(d, qp.qpn, RTR_MASK, TERN_QPS_RTR), TERN_CMD_BAD_STATE);
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE, TERN_QPS_INIT), TERN_CMD_BAD_STATE);
	/* RTS->SQD (nothing outstanding) ->RTS */
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE, TERN_QPS_SQD), TERN_CMD_OK);
	CHECK_EQ(qp_state(d, qp.qpn), TERN_QPS_SQD);
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE, TERN_QPS_RTS), TERN_CMD_OK);
	CHECK_EQ(qp_state(d, qp.qpn), TERN_QPS_RTS);
	/* any->ERR; ERR->RTS illegal; ERR->RESET->INIT fine */
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE, TERN_QPS_ERR), TERN_CMD_OK);
	CHECK_EQ(qp_state(d, qp.qpn), TERN_QPS_ERR);
	CHECK_EQ(mod(d, qp.qpn, RTS_MASK, TERN_QPS_RTS), TERN_CMD_BAD_STATE);
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_ACCESS, TERN_QPS_INIT),
		 TERN_CMD_BAD_STATE);
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE, TERN_QPS_RESET), TERN_CMD_OK);
	CHECK_EQ(qp_state(d, qp.qpn), TERN_QPS_RESET);
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_ACCESS, TERN_QPS_INIT), TERN_CMD_OK);
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE, TERN_QPS_RESET), TERN_CMD_OK);
	/* modify without the STATE bit in RESET: TIMEOUT is not an attribute of RESET->RESET
	 * (the header leaves BAD_STATE vs BAD_PARAM open) */
	st = mod(d, qp.qpn, TERN_QP_ATTR_TIMEOUT, 0);
	CHECK(st == TERN_CMD_BAD_STATE || st == TERN_CMD_BAD_PARAM);
	CHECK_EQ(qp_state(d, qp.qpn), TERN_QPS_RESET);
	/* in_len */
	{
		uint8_t in[sizeof(MQI)] = { 0 };

		CHECK_EQ(rdev_cmd(d, TERN_CMD_MODIFY_QP, in, sizeof(in) - 4, NULL, 0, &c),
			 TERN_CMD_BAD_LEN);
		CHECK_EQ(c.syndrome, sizeof(MQI));
	}
	CHECK_EQ(qp_destroy(d, &qp), TERN_CMD_OK);
	CHECK_EQ(cq_destroy(d, &cq), TERN_CMD_OK);
	rdev_free(d);
}

static void t_destroy_in_use(void)
{
	struct rdev *d = rdev_new(0);
	struct rcq scq, rcq;
	struct rqp qp;
	struct rmr mr;
	uint32_t pd;

	REQUIRE(d);
	REQUIRE(pd_create(d, &pd) == TERN_CMD_OK);
	REQUIRE(cq_create(d, &scq, 6, false) == TERN_CMD_OK);
	REQUIRE(cq_create(d, &rcq, 6, true) == TERN_CMD_OK);
	REQUIRE(qp_create(d, &qp, pd, &scq, &rcq, 4, 6, 4, 5, 0, true) == TERN_CMD_OK);
	REQUIRE(mr_create(d, &mr, pd, 10000, TERN_ACCESS_LOCAL_WRITE, 5) == TERN_CMD_OK);
	CHECK_EQ(pd_destroy(d, pd), TERN_CMD_BAD_STATE);
	CHECK_EQ(cq_destroy(d, &scq), TERN_CMD_BAD_STATE);
	CHECK_EQ(cq_destroy(d, &rcq), TERN_CMD_BAD_STATE);
	CHECK_EQ(mod(d, qp.qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_ACCESS, TERN_QPS_INIT), TERN_CMD_OK);
	CHECK_EQ(qp_destroy(d, &qp), TERN_CMD_OK);	/* any state */
	CHECK_EQ(cq_destroy(d, &scq), TERN_CMD_OK);
	CHECK_EQ(cq_destroy(d, &rcq), TERN_CMD_OK);
	CHECK_EQ(pd_destroy(d, pd), TERN_CMD_BAD_STATE);	/* the MR */
	CHECK_EQ(mr_destroy(d, &mr), TERN_CMD_OK);
	mr_release(&mr);
	CHECK_EQ(pd_destroy(d, pd), TERN_CMD_OK);
	rdev_free(d);
}

/* PDs until NO_RESOURCES: exactly max_pd of them, numbers 0..max_pd-1, one freed is reused. */
static void t_exhaustion(void)
{
	struct rdev *d = rdev_new(0);
	uint8_t *seen;
	uint32_t n = 1, pdn = 0, limit;
	int st = TERN_CMD_OK;

	REQUIRE(d);
	limit = d->caps.max_pd;
	REQUIRE(limit <= (1u << 18));	/* keep the test fast */
	seen = calloc(limit, 1);
	REQUIRE(seen);
	seen[d->pdn] = 1;
	while (n <= limit) {
		st = pd_create(d, &pdn);
		if (st != TERN_CMD_OK)
			break;
		if (pdn >= limit || seen[pdn]) {
			t_failures++;
			printf("#   PDN %u repeated or out of range\n", pdn);
			break;
		}
		seen[pdn] = 1;
		n++;
	}
	CHECK_EQ(st, TERN_CMD_NO_RESOURCES);
	CHECK_EQ(n, limit);
	CHECK_EQ(pd_destroy(d, limit / 2), TERN_CMD_OK);
	CHECK_EQ(pd_create(d, &pdn), TERN_CMD_OK);
	CHECK_EQ(pdn, limit / 2);
	CHECK_EQ(pd_create(d, &pdn), TERN_CMD_NO_RESOURCES);
	free(seen);
	rdev_free(d);	/* with every PD alive */
}

static int qp_destroy_n(struct rdev *d, uint32_t qpn)
{
	uint8_t k4[4];

	wr32(k4, qpn);
	return rdev_cmd(d, TERN_CMD_DESTROY_QP, k4, 4, NULL, 0, NULL);
}

/*
 * The send state the device keeps per SQ entry is its own memory (host memory in the model)
 * that a guest asks for: all QPs together hold at most max_total_sq_wqes entries, then
 * CREATE_QP is NO_RESOURCES (syndrome 0) until a QP is destroyed. All QPs may share one queue
 * buffer here: the device does not care, and the test stays small.
 */
static void t_sq_budget(void)
{
	struct rdev *d = rdev_new(0);
	uint8_t in[sizeof(QPI)];
	uint32_t *qpn, n = 0, full, i;
	struct qmem sq, rq;
	struct rcq cq;
	struct cqe c;
	int st = TERN_CMD_OK;

	REQUIRE(d);
	full = d->caps.max_total_sq_wqes >> d->caps.max_sq_log;
	REQUIRE(full >= 4 && full < d->caps.max_qp - 2);	/* the budget runs out, not the QPNs */
	qpn = calloc(full + 1, sizeof(*qpn));
	REQUIRE(qpn);
	REQUIRE(cq_create(d, &cq, 6, false) == TERN_CMD_OK);
	qmem_alloc(d, &sq, (size_t)64 << d->caps.max_sq_log, false);
	qmem_alloc(d, &rq, 16 * 1024, true);
	qp_in_valid(d, in, &cq, &sq, &rq);
	in[OFF(QPI, log_sq_depth)] = d->caps.max_sq_log;
	while (n <= full) {
		st = qp_raw(d, in, &c);
		if (st != TERN_CMD_OK)
			break;
		qpn[n++] = c.result;
	}
	CHECK_EQ(n, full);
	CHECK_EQ(st, TERN_CMD_NO_RESOURCES);
	CHECK_EQ(c.syndrome, 0);
	in[OFF(QPI, log_sq_depth)] = 1;		/* not even the smallest SQ */
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_NO_RESOURCES);
	/* one full-depth QP destroyed: room for two of half its depth, then nothing */
	CHECK_EQ(qp_destroy_n(d, qpn[full / 2]), TERN_CMD_OK);
	in[OFF(QPI, log_sq_depth)] = d->caps.max_sq_log - 1;
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_OK);
	qpn[full / 2] = c.result;
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_OK);
	qpn[full] = c.result;
	in[OFF(QPI, log_sq_depth)] = 1;
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_NO_RESOURCES);
	for (i = 0; i < full / 4; i++)
		CHECK_EQ(qp_destroy_n(d, qpn[i]), TERN_CMD_OK);
	in[OFF(QPI, log_sq_depth)] = d->caps.max_sq_log;
	for (i = 0; i < full / 4; i++)
		CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_OK);
	CHECK_EQ(qp_raw(d, in, &c), TERN_CMD_NO_RESOURCES);
	free(qpn);
	qmem_free(&sq);
	qmem_free(&rq);
	rdev_free(d);	/* with every QP alive */
}

/* Device reset and destroy with live, busy objects: nothing leaks (LSan), all is forgotten. */
static void t_reset_with_objects(void)
{
	struct connopt o;
	struct conn c;
	struct rmr mr[2];
	struct sge sg;
	unsigned int i;
	uint8_t *keep;
	size_t keep_len;

	connopt_default(&o);
	REQUIRE(conn_setup(&c, &o));
	REQUIRE(mr_create(c.d[0], &mr[0], c.d[0]->pdn, 1 << 20, TERN_ACCESS_LOCAL_WRITE, 0) == 0);
	REQUIRE(mr_create(c.d[1], &mr[1], c.d[1]->pdn, 1 << 20,
			  TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE, 0) == 0);
	/* traffic in flight: WRITEs half delivered, a SEND waiting for a receive (RNR) */
	for (i = 0; i < 4; i++) {
		sg = mr_sge(&mr[0], 0, 1 << 18);
		post_send(c.d[0], &c.qp[0], TERN_WQE_RDMA_WRITE, TERN_WQE_F_SIGNALED, i, &sg, 1,
			  mr[1].iova, mr[1].key, 0);
	}
	sg = mr_sge(&mr[0], 0, 100);
	post_send(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 9, &sg, 1, 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	fk_run(&c.d[0]->f);
	/* deliver only some frames; keep one to replay after the reset */
	REQUIRE(c.d[0]->f.nframes > 1);
	keep_len = c.d[0]->f.frames[0].len;
	keep = malloc(keep_len);
	REQUIRE(keep);
	memcpy(keep, c.d[0]->f.frames[0].data, keep_len);
	for (i = 0; i < c.d[0]->f.nframes && i < 20; i++)
		tern_model_rx_frame(c.d[1]->f.m, c.d[0]->f.frames[i].data,
				    c.d[0]->f.frames[i].len);
	fk_clear_frames(&c.d[0]->f);
	fk_run(&c.d[1]->f);
	/* device 1: reset; device 0: destroyed later with everything alive */
	tern_model_reset(c.d[1]->f.m);
	c.d[1]->f.now += 10 * 1000 * 1000;
	if (c.d[1]->f.deadline != UINT64_MAX) {
		c.d[1]->f.deadline = UINT64_MAX;
		tern_model_timer(c.d[1]->f.m);
	}
	fk_run(&c.d[1]->f);
	CHECK(rreg(&c.d[1]->f, TERN_REG_STATUS) & TERN_STATUS_READY);
	REQUIRE(drv_cmdq_enable(&c.d[1]->f, 4));
	/* everything forgotten: objects, counters */
	CHECK_EQ(qp_state(c.d[1], c.qp[1].qpn), -1);
	CHECK_EQ(pd_destroy(c.d[1], c.d[1]->pdn), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(mr_destroy(c.d[1], &mr[1]), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_packets), 0);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_write_requests), 0);
	/* a frame for the old QP is now dropped and counted */
	memset(mr_ptr(c.d[1], &mr[1], 0), 0, 64);
	CHECK_EQ(tern_model_rx_frame(c.d[1]->f.m, keep, keep_len), keep_len);
	fk_run(&c.d[1]->f);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_discards), 1);
	CHECK_EQ(RDEV_STAT(c.d[1], rx_roce_packets), 0);
	CHECK_EQ(c.d[1]->f.nframes, 0);		/* no ACK/NAK for it */
	for (i = 0; i < 64; i++)
		CHECK_EQ(*mr_ptr(c.d[1], &mr[1], i), 0);
	free(keep);
	mr_release(&mr[0]);
	mr_release(&mr[1]);
	conn_free(&c);
}

const struct test rdma_cmd_tests[] = {
	{ "rdma: QUERY_RDMA limits sane, lengths checked, CAP_RDMA", t_query_rdma },
	{ "rdma: CREATE_PD/DESTROY_PD numbering and errors", t_pd_cmds },
	{ "rdma: CREATE_MR/DESTROY_MR rules (len, rsvd, values, PD, key)", t_mr_cmds },
	{ "rdma: CREATE_CQ/DESTROY_CQ rules (depth, memory, EQ, UAR)", t_cq_cmds },
	{ "rdma: CREATE_QP/DESTROY_QP/QUERY_QP rules, QPN 0/1 reserved", t_qp_create_cmds },
	{ "rdma: MODIFY_QP transitions, required attrs, values, QUERY_QP", t_qp_state_machine },
	{ "rdma: PD/CQ/EQ in use cannot be destroyed", t_destroy_in_use },
	{ "rdma: PD exhaustion gives NO_RESOURCES, numbers reused", t_exhaustion },
	{ "rdma: SQ entries of all QPs together are bounded (host memory)", t_sq_budget },
	{ "rdma: reset and destroy with busy objects forget all, leak nothing", t_reset_with_objects },
	{ NULL, NULL },
};
