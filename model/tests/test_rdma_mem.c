/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The device's host memory bound (tern_model_config.host_mem_max, Documentation/hw/rdma.rst
 * "Host memory"): the advertised maxima fit under the default bound in realistic use (every
 * QP with selective repeat, every CQ at 2^16 entries, MRs at their largest until the MR page
 * budget refuses one), the deepest CQs (2^22 entries, 128 MiB rings) are made and resized
 * to, a lower bound refuses the object that would pass it with NO_RESOURCES, and
 * destroying everything gives every byte back. The objects' rings and page lists all name
 * the same few host pages: nothing is posted, the device only keeps their addresses.
 */
#include "test_rdma.h"

#define MR_MAX_PAGES	(1u << 20)	/* QUERY_RDMA max_mr_pages */
#define CQ_MAX_LOG	22		/* QUERY_RDMA max_cq_log_depth */
#define CQ_LOG		16		/* the CQs of t_maxima and t_bound */

/* Pages of a CQ ring of 2^@log entries with its CI record. */
#define CQ_PAGES(log)	(((32u << (log)) + 8 + 4095) / 4096)

struct mfix {
	struct rdev *d;
	uint64_t page;			/* one 4 KiB page every page list names */
	uint64_t ring;			/* 4 KiB for the QPs' rings (DIRECT) */
	uint64_t cq_pbl, mr_pbl;	/* page lists of the largest CQ and MR */
	uint32_t cqn[2048];
	unsigned int ncq;
	uint32_t qpn[1024];
	unsigned int nqp;
	uint32_t mrkey[64];
	unsigned int nmr;
};

static uint64_t host_mem(struct mfix *x)
{
	return tern_model_host_mem(x->d->f.m);
}

/* A page list of @n entries, all the one page. */
static uint64_t mfix_pbl(struct mfix *x, unsigned int n)
{
	uint64_t a = fk_alloc_data(&x->d->f, (size_t)n * 8, 4096);
	uint8_t *p = fk_ptr(&x->d->f, a, (size_t)n * 8);
	unsigned int i;

	for (i = 0; i < n; i++)
		wr64(p + 8 * i, x->page);
	return a;
}

static bool mfix_init(struct mfix *x, uint64_t bound)
{
	memset(x, 0, sizeof(*x));
	fk_host_mem_max = bound;
	x->d = rdev_new(0);
	fk_host_mem_max = 0;
	if (!x->d)
		return false;
	x->page = fk_alloc_data(&x->d->f, 4096, 4096);
	x->ring = fk_alloc_data(&x->d->f, 4096, 4096);
	x->cq_pbl = mfix_pbl(x, CQ_PAGES(CQ_MAX_LOG));
	x->mr_pbl = mfix_pbl(x, MR_MAX_PAGES);
	return true;
}

/* CREATE_CQ of 2^@log entries (a page list): its status. */
static int mk_cq_log(struct mfix *x, unsigned int log)
{
	typedef struct tern_cmd_create_cq_in T;
	uint8_t in[sizeof(T)] = { 0 };
	struct cqe c;
	int st;

	wr64(in + OFF(T, mem) + OFF(struct tern_mem_desc, addr), x->cq_pbl);
	wr32(in + OFF(T, mem) + OFF(struct tern_mem_desc, npages), CQ_PAGES(log));
	in[OFF(T, mem) + OFF(struct tern_mem_desc, page_shift)] = 12;
	in[OFF(T, mem) + OFF(struct tern_mem_desc, mode)] = TERN_MEM_PAGE_LIST;
	in[OFF(T, log_depth)] = (uint8_t)log;
	wr16(in + OFF(T, eqn), (uint16_t)x->d->comp_eq.num);
	wr16(in + OFF(T, uar), x->d->uar);
	st = rdev_cmd(x->d, TERN_CMD_CREATE_CQ, in, sizeof(in), NULL, 0, &c);
	if (st == TERN_CMD_OK)
		x->cqn[x->ncq++] = c.result;
	return st;
}

static int mk_cq(struct mfix *x)
{
	return mk_cq_log(x, CQ_LOG);
}

/* CREATE_MR of MR_MAX_PAGES pages of 4 KiB: its status. */
static int mk_mr(struct mfix *x)
{
	typedef struct tern_cmd_create_mr_in T;
	uint8_t in[sizeof(T)] = { 0 };
	struct cqe c;
	int st;

	wr32(in + OFF(T, pdn), x->d->pdn);
	wr32(in + OFF(T, access), TERN_ACCESS_LOCAL_WRITE);
	wr64(in + OFF(T, iova), (uint64_t)(x->nmr + 1) << 40);
	wr64(in + OFF(T, length), (uint64_t)MR_MAX_PAGES << 12);
	in[OFF(T, key)] = 0x5a;
	in[OFF(T, page_shift)] = 12;
	wr32(in + OFF(T, npages), MR_MAX_PAGES);
	wr64(in + OFF(T, pbl) + OFF(struct tern_mem_desc, addr), x->mr_pbl);
	wr32(in + OFF(T, pbl) + OFF(struct tern_mem_desc, npages), MR_MAX_PAGES * 8 / 4096);
	in[OFF(T, pbl) + OFF(struct tern_mem_desc, page_shift)] = 12;
	in[OFF(T, pbl) + OFF(struct tern_mem_desc, mode)] = TERN_MEM_DIRECT;
	st = rdev_cmd(x->d, TERN_CMD_CREATE_MR, in, sizeof(in), NULL, 0, &c);
	if (st == TERN_CMD_OK && x->nmr < 64)
		x->mrkey[x->nmr++] = c.result << 8 | 0x5a;
	return st;
}

/*
 * An RC QP on CQ @cqn (SQ and RQ of 64 entries in the shared ring), then INIT and RTR with
 * selective repeat: the status of the first command that fails, or OK.
 */
static int mk_qp(struct mfix *x, uint32_t cqn)
{
	typedef struct tern_cmd_create_qp_in T;
	uint8_t in[sizeof(T)] = { 0 };
	struct connopt o;
	struct qpattr a;
	struct cqe c;
	uint32_t qpn;
	int st;

	wr32(in + OFF(T, pdn), x->d->pdn);
	wr32(in + OFF(T, send_cqn), cqn);
	wr32(in + OFF(T, recv_cqn), cqn);
	in[OFF(T, type)] = TERN_QPT_RC;
	wr16(in + OFF(T, uar), x->d->uar);
	in[OFF(T, log_sq_depth)] = 6;
	in[OFF(T, log_sq_stride)] = 6;
	in[OFF(T, log_rq_depth)] = 6;
	in[OFF(T, log_rq_stride)] = 5;
	wr64(in + OFF(T, sq_mem) + OFF(struct tern_mem_desc, addr), x->ring);
	wr32(in + OFF(T, sq_mem) + OFF(struct tern_mem_desc, npages), 1);
	in[OFF(T, sq_mem) + OFF(struct tern_mem_desc, page_shift)] = 12;
	in[OFF(T, sq_mem) + OFF(struct tern_mem_desc, mode)] = TERN_MEM_DIRECT;
	memcpy(in + OFF(T, rq_mem), in + OFF(T, sq_mem), sizeof(struct tern_mem_desc));
	st = rdev_cmd(x->d, TERN_CMD_CREATE_QP, in, sizeof(in), NULL, 0, &c);
	if (st != TERN_CMD_OK)
		return st;
	qpn = c.result;
	x->qpn[x->nqp++] = qpn;
	connopt_default(&o);
	memset(&a, 0, sizeof(a));
	a.state = TERN_QPS_INIT;
	st = qp_modify(x->d, qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_ACCESS, &a, &c);
	if (st != TERN_CMD_OK)
		return st;
	a.state = TERN_QPS_RTR;
	path_fill(&a, x->d, x->d, &o);
	a.path_mtu = o.mtu;
	a.dest_qpn = qpn;
	a.xport = TERN_QP_XPORT_SR;
	a.max_dest_rd_atomic = 1;
	return qp_modify(x->d, qpn, TERN_QP_ATTR_STATE | TERN_QP_ATTR_PATH |
			 TERN_QP_ATTR_PATH_MTU | TERN_QP_ATTR_DEST_QPN | TERN_QP_ATTR_RQ_PSN |
			 TERN_QP_ATTR_MAX_DEST_RD_ATOMIC | TERN_QP_ATTR_MIN_RNR_TIMER |
			 TERN_QP_ATTR_XPORT, &a, &c);
}

/* Destroys everything mk_*() made; the device holds then what it held at @idle. */
static void mfix_fini(struct mfix *x, uint64_t idle)
{
	uint8_t in[4];
	unsigned int i;

	for (i = 0; i < x->nqp; i++) {
		wr32(in, x->qpn[i]);
		CHECK_EQ(rdev_cmd(x->d, TERN_CMD_DESTROY_QP, in, 4, NULL, 0, NULL), TERN_CMD_OK);
	}
	for (i = 0; i < x->ncq; i++) {
		wr32(in, x->cqn[i]);
		CHECK_EQ(rdev_cmd(x->d, TERN_CMD_DESTROY_CQ, in, 4, NULL, 0, NULL), TERN_CMD_OK);
	}
	for (i = 0; i < x->nmr; i++) {
		wr32(in, x->mrkey[i]);
		CHECK_EQ(rdev_cmd(x->d, TERN_CMD_DESTROY_MR, in, 4, NULL, 0, NULL), TERN_CMD_OK);
	}
	CHECK_EQ(host_mem(x), idle);
	rdev_free(x->d);
}

/*
 * The default bound: every QP the device has (QPN 2..1023) with selective repeat, every CQ
 * at 2^16 entries (realistic use: 2048 CQs at 2^22 would hold 512 MiB of page arrays), MRs of 2^20 pages until the MR page budget (2^24 entries) refuses one.
 */
static void t_maxima(void)
{
	struct mfix x;
	uint64_t idle, peak;
	unsigned int i;
	int st;

	REQUIRE(mfix_init(&x, 0));
	REQUIRE(x.d->caps.max_qp <= 1024 && x.d->caps.max_cq <= 2048);
	REQUIRE(x.d->caps.max_mr_pages == MR_MAX_PAGES && x.d->caps.max_cq_log == CQ_MAX_LOG);
	REQUIRE(CQ_LOG <= CQ_MAX_LOG);
	idle = host_mem(&x);
	REQUIRE(mk_cq(&x) == TERN_CMD_OK);
	for (i = 0; i < x.d->caps.max_qp - 2; i++) {
		st = mk_qp(&x, x.cqn[0]);
		if (st != TERN_CMD_OK) {
			CHECK_EQ(st, TERN_CMD_OK);
			break;
		}
	}
	CHECK_EQ(x.nqp, x.d->caps.max_qp - 2);
	CHECK_EQ(mk_qp(&x, x.cqn[0]), TERN_CMD_NO_RESOURCES);	/* no QPN left */
	while (x.ncq < x.d->caps.max_cq && mk_cq(&x) == TERN_CMD_OK)
		;
	CHECK_EQ(x.ncq, x.d->caps.max_cq);
	while ((st = mk_mr(&x)) == TERN_CMD_OK)
		CHECK(host_mem(&x) <= TERN_MODEL_HOST_MEM_MAX);
	CHECK_EQ(st, TERN_CMD_NO_RESOURCES);
	CHECK_EQ(x.nmr, x.d->caps.max_total_mr_pages / MR_MAX_PAGES);
	peak = host_mem(&x);
	CHECK(peak <= TERN_MODEL_HOST_MEM_MAX);
	/* at least the MR page lists, the QPs with their send and selective-repeat state */
	CHECK(peak - idle >= (128ull << 20) + (uint64_t)x.nqp * 8192);
	printf("#   host memory: %llu bytes idle, %llu with %u QPs (selective repeat), %u CQs "
	       "of 2^16, %u MRs of 2^20 pages; bound %llu\n", (unsigned long long)idle,
	       (unsigned long long)peak, x.nqp, x.ncq, x.nmr,
	       (unsigned long long)TERN_MODEL_HOST_MEM_MAX);
	mfix_fini(&x, idle);
}

/*
 * A bound of 3 MiB: QPs with selective repeat until one is refused, then an MR page list and
 * a CQ that would pass it: NO_RESOURCES, never beyond the bound; every byte back at the end.
 */
static void t_bound(void)
{
	const uint64_t bound = 3u << 20;
	struct mfix x;
	uint64_t idle;
	unsigned int i;
	int st = TERN_CMD_OK;

	REQUIRE(mfix_init(&x, bound));
	idle = host_mem(&x);
	REQUIRE(mk_cq(&x) == TERN_CMD_OK);
	for (i = 0; i < x.d->caps.max_qp - 2 && st == TERN_CMD_OK; i++) {
		st = mk_qp(&x, x.cqn[0]);
		CHECK(host_mem(&x) <= bound);
	}
	CHECK_EQ(st, TERN_CMD_NO_RESOURCES);
	CHECK(x.nqp > 50 && x.nqp < x.d->caps.max_qp - 2);
	/* 8 MiB of page list: over the bound, well within the MR page budget */
	CHECK_EQ(mk_mr(&x), TERN_CMD_NO_RESOURCES);
	while ((st = mk_cq(&x)) == TERN_CMD_OK)
		CHECK(host_mem(&x) <= bound);
	CHECK_EQ(st, TERN_CMD_NO_RESOURCES);
	CHECK(x.ncq < 20);
	CHECK(host_mem(&x) <= bound);
	mfix_fini(&x, idle);
}

/*
 * The deepest CQ the device reports (2^22 CQEs, a 128 MiB ring in 32769 pages with its CI
 * record: libfabric's ofi_rxm asks for 2^18, ConnectX-5/6 take 2^22 - 1): two of them are
 * made under the default bound, each holding its page array (8 bytes a page) and nothing
 * more; a CQ is resized to that depth and back; one deeper is BAD_PARAM at log_depth; every
 * byte back at the end.
 */
static void t_deepest_cq(void)
{
	typedef struct tern_cmd_resize_cq_in R;
	const uint64_t pages = CQ_PAGES(CQ_MAX_LOG);
	uint8_t in[sizeof(R)];
	struct mfix x;
	uint64_t idle, one;
	struct cqe c;

	REQUIRE(mfix_init(&x, 0));
	REQUIRE(x.d->caps.max_cq_log == CQ_MAX_LOG);
	idle = host_mem(&x);
	CHECK_EQ(mk_cq_log(&x, CQ_MAX_LOG), TERN_CMD_OK);
	one = host_mem(&x) - idle;
	CHECK_EQ(one, pages * 8);
	CHECK_EQ(mk_cq_log(&x, CQ_MAX_LOG), TERN_CMD_OK);
	CHECK_EQ(host_mem(&x) - idle, 2 * one);
	CHECK_EQ(mk_cq_log(&x, CQ_MAX_LOG + 1), TERN_CMD_BAD_PARAM);
	CHECK_EQ(x.ncq, 2u);

	/* a CQ of 2^6 entries to the deepest ring and back: nothing outstanding to move */
	REQUIRE(mk_cq_log(&x, 6) == TERN_CMD_OK);
	memset(in, 0, sizeof(in));
	wr64(in + OFF(R, mem) + OFF(struct tern_mem_desc, addr), x.cq_pbl);
	wr32(in + OFF(R, mem) + OFF(struct tern_mem_desc, npages), pages);
	in[OFF(R, mem) + OFF(struct tern_mem_desc, page_shift)] = 12;
	in[OFF(R, mem) + OFF(struct tern_mem_desc, mode)] = TERN_MEM_PAGE_LIST;
	wr32(in + OFF(R, cqn), x.cqn[2]);
	in[OFF(R, log_depth)] = CQ_MAX_LOG;
	CHECK_EQ(rdev_cmd(x.d, TERN_CMD_RESIZE_CQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_OK);
	CHECK_EQ(host_mem(&x) - idle, 3 * one);
	wr32(in + OFF(R, mem) + OFF(struct tern_mem_desc, npages), CQ_PAGES(6));
	in[OFF(R, log_depth)] = 6;
	CHECK_EQ(rdev_cmd(x.d, TERN_CMD_RESIZE_CQ, in, sizeof(in), NULL, 0, &c), TERN_CMD_OK);
	CHECK_EQ(host_mem(&x) - idle, 2 * one + CQ_PAGES(6) * 8);
	mfix_fini(&x, idle);
}

const struct test rdma_mem_tests[] = {
	{ "rdma mem: every QP with selective repeat, every CQ at 2^16 and every MR at its "
	  "largest fit the default host memory bound; all of it back after", t_maxima },
	{ "rdma mem: the deepest CQs (2^22 entries) are made, resized to and counted; one "
	  "deeper is refused", t_deepest_cq },
	{ "rdma mem: the QP, MR or CQ that would pass the bound is refused NO_RESOURCES",
	  t_bound },
	{ NULL, NULL },
};
