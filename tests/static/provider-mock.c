// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of tern's libibverbs provider without a device: this program stands in for
 * libibverbs (it defines the IBVERBS_PRIVATE_34 functions the provider imports, with the
 * same symbol versions) and for tern_ib.ko and the NIC (the "kernel" answers the uverbs
 * commands; the "device" reads WQEs and doorbells and writes CQEs in the provider's rings).
 * The doorbell page is a memfd, mmapped by the provider through the "cmd fd".
 *
 * The data-path part (post_send, post_recv, poll_cq, req_notify_cq) runs in a child under
 * a seccomp filter that allows only exit/exit_group: any system call there kills the run
 * with a SIGSYS report naming the syscall. That proves the paths exercised here make no
 * system call; it says nothing about paths not exercised.
 *
 * Built and run by tests/static/provider.t:
 *   provider-mock PROVIDER.so        prints TAP
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <rdma/tern-abi.h>
#include <kernel-abi/tern-abi.h>
#include <tern/tern_rdma.h>

DECLARE_DRV_CMD(mock_alloc_context, IB_USER_VERBS_CMD_GET_CONTEXT, empty,
		tern_alloc_ucontext_resp);
DECLARE_DRV_CMD(mock_create_cq, IB_USER_VERBS_CMD_CREATE_CQ, tern_create_cq_cmd,
		tern_create_cq_resp);
DECLARE_DRV_CMD(mock_create_qp, IB_USER_VERBS_CMD_CREATE_QP, tern_create_qp_cmd,
		tern_create_qp_resp);

#define MOCK_CQN	5
#define MOCK_MAX_INLINE	96

/* ---- results, in memory shared with the seccomp'ed child ---------------------------- */
struct result {
	int ok;
	char desc[120];
};
static struct shared {
	int n;
	int sigsys_nr;			/* syscall number trapped, or -1 */
	struct result r[256];
} *sh;

static void ok(int cond, const char *fmt, ...)
{
	va_list ap;
	struct result *r;

	if (sh->n >= 256)
		return;
	r = &sh->r[sh->n++];
	r->ok = !!cond;
	va_start(ap, fmt);
	vsnprintf(r->desc, sizeof(r->desc), fmt, ap);	/* no syscall: formats to memory */
	va_end(ap);
}

/* ---- mock libibverbs + kernel -------------------------------------------------------- */
static const struct verbs_device_ops *g_dev_ops;
static const struct verbs_context_ops *g_ops;
static struct tern_create_cq_cmd g_cq_cmd;
static struct tern_create_qp_cmd g_qp_cmd;
static uint32_t g_next_qpn = 7;
static int g_last_state = -1;

void verbs_register_driver_34(const struct verbs_device_ops *ops)
{
	g_dev_ops = ops;
}

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size, struct verbs_context *context_offset,
				    uint32_t driver_id)
{
	void *drv = calloc(1, alloc_size);
	struct verbs_context *vctx;

	if (!drv)
		return NULL;
	vctx = (struct verbs_context *)((char *)drv + (uintptr_t)context_offset);
	vctx->context.device = device;
	vctx->context.cmd_fd = cmd_fd;
	vctx->context.async_fd = -1;
	return drv;
}

void verbs_uninit_context(struct verbs_context *context) { }

void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops)
{
	g_ops = ops;
}

void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...) { }

int ibv_dontfork_range(void *base, size_t size) { return 0; }
int ibv_dofork_range(void *base, size_t size) { return 0; }

int ibv_cmd_get_context(struct verbs_context *context, struct ibv_get_context *cmd,
			size_t cmd_size, struct ib_uverbs_get_context_resp *resp,
			size_t resp_size)
{
	struct mock_alloc_context_resp *r = (void *)resp;

	if (resp_size < sizeof(*r))
		return EINVAL;
	r->uar = 3;
	r->db_mmap_key = 0;
	r->max_inline = MOCK_MAX_INLINE;
	r->sq_min_log_stride = TERN_SQ_MIN_LOG_STRIDE;
	r->sq_max_log_stride = TERN_SQ_MAX_LOG_STRIDE;
	r->rq_min_log_stride = TERN_RQ_MIN_LOG_STRIDE;
	r->rq_max_log_stride = TERN_RQ_MAX_LOG_STRIDE;
	r->max_sq_log_depth = 10;
	r->max_rq_log_depth = 10;
	r->max_cq_log_depth = 12;
	return 0;
}

int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp, size_t *resp_size)
{
	return EOPNOTSUPP;
}

int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr, struct ibv_query_port *cmd,
		       size_t cmd_size)
{
	return EOPNOTSUPP;
}

int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size)
{
	pd->context = context;
	pd->handle = 1;
	return 0;
}

int ibv_cmd_dealloc_pd(struct ibv_pd *pd) { return 0; }

int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
		   int access, struct verbs_mr *vmr, struct ibv_reg_mr *cmd,
		   size_t cmd_size, struct ib_uverbs_reg_mr_resp *resp, size_t resp_size)
{
	return EOPNOTSUPP;
}

int ibv_cmd_dereg_mr(struct verbs_mr *vmr) { return 0; }

int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah, struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size)
{
	return EOPNOTSUPP;
}

int ibv_cmd_destroy_ah(struct ibv_ah *ah) { return 0; }

int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector, struct ibv_cq *cq,
		      struct ibv_create_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_create_cq_resp *resp, size_t resp_size)
{
	struct mock_create_cq *c = (void *)cmd;
	struct mock_create_cq_resp *r = (void *)resp;

	if (cmd_size < sizeof(*c) || resp_size < sizeof(*r))
		return EINVAL;
	g_cq_cmd = c->drv_payload;
	r->cqn = MOCK_CQN;
	cq->context = context;
	cq->channel = channel;
	cq->cqe = cqe;
	return 0;
}

int ibv_cmd_destroy_cq(struct ibv_cq *cq) { return 0; }

int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp, struct ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size)
{
	struct mock_create_qp *c = (void *)cmd;
	struct mock_create_qp_resp *r = (void *)resp;

	if (cmd_size < sizeof(*c) || resp_size < sizeof(*r))
		return EINVAL;
	g_qp_cmd = c->drv_payload;
	qp->context = pd->context;
	qp->pd = pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->qp_type = attr->qp_type;
	qp->state = IBV_QPS_RESET;
	qp->qp_num = g_next_qpn;
	r->qpn = g_next_qpn++;
	return 0;
}

int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		      struct ibv_modify_qp *cmd, size_t cmd_size)
{
	if (attr_mask & IBV_QP_STATE)
		g_last_state = attr->qp_state;
	return 0;
}

int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr, int attr_mask,
		     struct ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd,
		     size_t cmd_size)
{
	memset(qp_attr, 0, sizeof(*qp_attr));
	memset(qp_init_attr, 0, sizeof(*qp_init_attr));
	qp_attr->qp_state = IBV_QPS_RTS;
	return 0;
}

int ibv_cmd_destroy_qp(struct ibv_qp *qp) { return 0; }

/* ---- the "device" ---------------------------------------------------------------------- */
static volatile uint64_t *g_uar;	/* our view of the doorbell page */
static struct tern_cqe *g_ring;
static struct tern_cq_ci_rec *g_cirec;
static uint32_t g_cq_depth;
static uint32_t g_cq_pi;		/* CQEs written, free-running */

static void dev_cqe(uint32_t qpn, uint8_t opcode, uint16_t wqe_idx, uint64_t wr_id,
		    uint8_t status, uint32_t byte_len, int imm, uint32_t imm_be)
{
	struct tern_cqe *c = &g_ring[g_cq_pi % g_cq_depth];
	uint8_t phase = (g_cq_pi / g_cq_depth) & 1 ? 0 : TERN_CQE_F_PHASE;

	memset(c, 0, offsetof(struct tern_cqe, flags));
	c->wr_id = htole64(wr_id);
	c->byte_len = htole32(byte_len);
	c->imm_data = imm_be;
	c->qpn = htole32(qpn);
	c->wqe_idx = htole16(wqe_idx);
	c->opcode = opcode;
	c->status = status;
	c->vendor_err = status ? TERN_SYND_NAK_ACCESS : 0;
	__atomic_store_n(&c->flags, (uint8_t)(phase | (imm ? TERN_CQE_F_IMM : 0)),
			 __ATOMIC_RELEASE);
	g_cq_pi++;
}

static void *sq_slot(uint32_t i)
{
	return (char *)(uintptr_t)g_qp_cmd.sq_va +
	       ((size_t)(i & ((1u << g_qp_cmd.log_sq_depth) - 1)) << g_qp_cmd.log_sq_stride);
}

static void *rq_slot(struct tern_create_qp_cmd *c, uint32_t i)
{
	return (char *)(uintptr_t)c->rq_va +
	       ((size_t)(i & ((1u << c->log_rq_depth) - 1)) << c->log_rq_stride);
}

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	sh->sigsys_nr = si->si_syscall;
	syscall(SYS_exit_group, 99);
}

static void no_more_syscalls(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };

	sigaction(SIGSYS, &sa, NULL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		_exit(98);
	}
}

/* ---- the data path, under seccomp ----------------------------------------------------- */
static void data_path(struct ibv_qp *qp, struct ibv_cq *cq)
{
	char buf[256], big[MOCK_MAX_INLINE + 8];
	struct ibv_sge sg[3] = {
		{ .addr = 0x1000, .length = 100, .lkey = 0x111 },
		{ .addr = 0x2000, .length = 200, .lkey = 0x222 },
		{ .addr = 0x3000, .length = 300, .lkey = 0x333 },
	};
	struct ibv_sge isg = { .addr = (uintptr_t)buf, .length = 10 };
	struct ibv_sge bsg = { .addr = (uintptr_t)big, .length = sizeof(big) };
	struct ibv_send_wr w[4], *bad;
	struct ibv_recv_wr rw[2], *rbad;
	struct ibv_wc wc[8];
	struct tern_sq_wqe *s;
	struct tern_rq_wqe *r;
	struct tern_sge *se;
	uint32_t qpn = qp->qp_num;
	int ret, i, n;

	memset(w, 0, sizeof(w));
	memcpy(buf, "inline-abc", 10);
	w[0] = (struct ibv_send_wr){ .wr_id = 100, .next = &w[1], .sg_list = sg, .num_sge = 2,
				     .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	w[1] = (struct ibv_send_wr){ .wr_id = 101, .next = &w[2], .sg_list = sg, .num_sge = 1,
				     .opcode = IBV_WR_RDMA_WRITE };
	w[1].wr.rdma.remote_addr = 0xabcdef0123ull;
	w[1].wr.rdma.rkey = 0x4567;
	w[2] = (struct ibv_send_wr){ .wr_id = 102, .next = &w[3], .sg_list = &isg, .num_sge = 1,
				     .opcode = IBV_WR_SEND_WITH_IMM,
				     .send_flags = IBV_SEND_INLINE | IBV_SEND_SOLICITED,
				     .imm_data = htobe32(0xdeadbeef) };
	w[3] = (struct ibv_send_wr){ .wr_id = 103, .sg_list = sg, .num_sge = 1,
				     .opcode = IBV_WR_RDMA_READ,
				     .send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE };
	w[3].wr.rdma.remote_addr = 0x10000;
	w[3].wr.rdma.rkey = 0x99;
	ret = g_ops->post_send(qp, w, &bad);
	ok(ret == 0, "post_send of 4 WRs succeeds (ret %d)", ret);
	ok(g_uar[TERN_UDB_SQ / 8] == (qpn | 4ull << 32),
	   "SQ doorbell = QPN | PI 4 << 32 (got %#llx)", (unsigned long long)g_uar[0]);
	s = sq_slot(0);
	se = (struct tern_sge *)(s + 1);
	ok(s->opcode == TERN_WQE_SEND && s->flags == TERN_WQE_F_SIGNALED && s->num_sge == 2 &&
	   le64toh(s->wr_id) == 100, "WQE 0: SEND, SIGNALED, 2 SGEs, wr_id");
	ok(le64toh(se[1].addr) == 0x2000 && le32toh(se[1].length) == 200 &&
	   le32toh(se[1].lkey) == 0x222, "WQE 0: second SGE as posted");
	s = sq_slot(1);
	ok(s->opcode == TERN_WQE_RDMA_WRITE && s->flags == 0 && le32toh(s->rkey) == 0x4567 &&
	   le64toh(s->remote_addr) == 0xabcdef0123ull, "WQE 1: unsignaled WRITE, rkey, raddr");
	s = sq_slot(2);
	ok(s->opcode == TERN_WQE_SEND_IMM &&
	   s->flags == (TERN_WQE_F_INLINE | TERN_WQE_F_SOLICITED) && s->num_sge == 0 &&
	   le32toh(s->inline_len) == 10 && !memcmp(s + 1, "inline-abc", 10) &&
	   s->imm_data == htobe32(0xdeadbeef), "WQE 2: SEND_IMM inline, data copied, imm as is");
	s = sq_slot(3);
	ok(s->opcode == TERN_WQE_RDMA_READ &&
	   s->flags == (TERN_WQE_F_SIGNALED | TERN_WQE_F_FENCE), "WQE 3: READ, SIGNALED|FENCE");

	/* errors: nothing posted, *bad_wr names the WR, no doorbell */
	w[0].next = NULL;
	w[0].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	bad = NULL;
	ret = g_ops->post_send(qp, w, &bad);
	ok(ret == EINVAL && bad == &w[0], "atomic opcode: EINVAL, bad_wr set (ret %d)", ret);
	w[0].opcode = IBV_WR_SEND;
	w[0].num_sge = 3;
	bad = NULL;
	ret = g_ops->post_send(qp, w, &bad);
	ok(ret == EINVAL && bad == &w[0], "3 SGEs on a 2-SGE QP: EINVAL (ret %d)", ret);
	w[0].num_sge = 1;
	w[0].sg_list = &bsg;
	w[0].send_flags = IBV_SEND_INLINE;
	bad = NULL;
	ret = g_ops->post_send(qp, w, &bad);
	ok(ret == EINVAL && bad == &w[0], "inline longer than max_inline: EINVAL (ret %d)", ret);
	ok(g_uar[0] == (qpn | 4ull << 32), "no doorbell for rejected WRs");

	/* fill the SQ (8 WQEs): 4 more go, the 5th is ENOMEM */
	w[0].sg_list = sg;
	w[0].send_flags = 0;
	for (i = 0; i < 4; i++) {
		w[0].wr_id = 200 + i;
		ret = g_ops->post_send(qp, w, &bad);
		if (ret)
			break;
	}
	ok(i == 4, "SQ takes 8 outstanding WQEs");
	bad = NULL;
	ret = g_ops->post_send(qp, w, &bad);
	ok(ret == ENOMEM && bad == &w[0], "9th outstanding WQE: ENOMEM (ret %d)", ret);

	/* receives */
	rw[0] = (struct ibv_recv_wr){ .wr_id = 300, .next = &rw[1], .sg_list = sg, .num_sge = 1 };
	rw[1] = (struct ibv_recv_wr){ .wr_id = 301, .sg_list = &sg[1], .num_sge = 1 };
	ret = g_ops->post_recv(qp, rw, &rbad);
	ok(ret == 0 && g_uar[TERN_UDB_RQ / 8] == (qpn | 2ull << 32),
	   "post_recv of 2: RQ doorbell = QPN | 2 << 32 (got %#llx)",
	   (unsigned long long)g_uar[1]);
	r = rq_slot(&g_qp_cmd, 1);
	se = (struct tern_sge *)(r + 1);
	ok(le64toh(r->wr_id) == 301 && r->num_sge == 1 && le64toh(se->addr) == 0x2000 &&
	   le32toh(se->lkey) == 0x222, "RQ WQE 1 as posted");
	rw[0].num_sge = 2;
	rw[0].next = NULL;
	ret = g_ops->post_recv(qp, rw, &rbad);
	ok(ret == EINVAL && rbad == &rw[0], "2 SGEs on a 1-SGE RQ: EINVAL (ret %d)", ret);

	/* completions */
	n = g_ops->poll_cq(cq, 8, wc);
	ok(n == 0, "empty CQ polls 0 (got %d)", n);
	dev_cqe(qpn, TERN_WQE_SEND, 0, 100, TERN_CQE_OK, 200, 0, 0);
	n = g_ops->poll_cq(cq, 8, wc);
	ok(n == 1 && wc[0].wr_id == 100 && wc[0].status == IBV_WC_SUCCESS &&
	   wc[0].opcode == IBV_WC_SEND && wc[0].qp_num == qpn && wc[0].wc_flags == 0,
	   "SEND completion: wr_id, status, opcode, qp_num");
	ok(le32toh(g_cirec->ci) == 1, "CI record is 1 after one CQE (got %u)",
	   le32toh(g_cirec->ci));
	/* one CQE for the last WQE (slot 7) reclaims the unsignaled ones before it */
	dev_cqe(qpn, TERN_WQE_RDMA_READ, 3, 103, TERN_CQE_OK, 300, 0, 0);
	dev_cqe(qpn, TERN_WQE_SEND, 7, 203, TERN_CQE_REM_ACCESS_ERR, 0, 0, 0);
	dev_cqe(qpn, TERN_CQE_RECV_IMM, 0, 300, TERN_CQE_OK, 123, 1, htobe32(0x12345678));
	dev_cqe(qpn, TERN_CQE_RECV_RDMA_WRITE_IMM, 1, 301, TERN_CQE_OK, 7, 1, htobe32(7));
	n = g_ops->poll_cq(cq, 8, wc);
	ok(n == 4, "4 CQEs polled at once (got %d)", n);
	ok(wc[0].opcode == IBV_WC_RDMA_READ && wc[0].byte_len == 300, "READ: opcode, byte_len");
	ok(wc[1].wr_id == 203 && wc[1].status == IBV_WC_REM_ACCESS_ERR &&
	   wc[1].vendor_err == TERN_SYND_NAK_ACCESS, "error CQE: status and vendor_err mapped");
	ok(wc[2].opcode == IBV_WC_RECV && wc[2].byte_len == 123 &&
	   (wc[2].wc_flags & IBV_WC_WITH_IMM) && wc[2].imm_data == htobe32(0x12345678),
	   "RECV with imm: opcode, byte_len, WITH_IMM, imm_data");
	ok(wc[3].opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc[3].wr_id == 301,
	   "WRITE_IMM arrival: IBV_WC_RECV_RDMA_WITH_IMM");
	w[0].sg_list = sg;
	w[0].num_sge = 1;
	w[0].send_flags = 0;
	w[0].next = NULL;
	for (i = 0; i < 8; i++)
		if (g_ops->post_send(qp, w, &bad))
			break;
	ok(i == 8, "SQ reclaimed: 8 more WQEs posted (got %d)", i);
	ok(g_uar[0] == (qpn | 16ull << 32), "SQ doorbell PI 16 (got %#llx)",
	   (unsigned long long)g_uar[0]);

	/* phase: go round the 16-entry ring; a stale phase is not a completion */
	for (i = 0; i < 8; i++)
		dev_cqe(qpn, TERN_WQE_SEND, (8 + i) & 7, 400 + i, TERN_CQE_OK, 0, 0, 0);
	n = g_ops->poll_cq(cq, 8, wc);
	for (i = 0; i < 3; i++)
		g_ops->post_send(qp, w, &bad);
	for (i = 0; i < 3; i++)
		dev_cqe(qpn, TERN_WQE_SEND, (16 + i) & 7, 408 + i, TERN_CQE_OK, 0, 0, 0);
	n += g_ops->poll_cq(cq, 8, wc);
	ok(n == 11 && wc[2].wr_id == 410, "11 more CQEs, up to the ring's end (got %d)", n);
	g_ring[g_cq_pi % g_cq_depth].flags = TERN_CQE_F_PHASE;	/* pass-0 phase in pass 1 */
	g_ring[g_cq_pi % g_cq_depth].qpn = htole32(qpn);
	n = g_ops->poll_cq(cq, 8, wc);
	ok(n == 0, "entry with the previous pass's phase is not polled (got %d)", n);
	dev_cqe(qpn, TERN_WQE_SEND, 0, 500, TERN_CQE_WR_FLUSH_ERR, 0, 0, 0);
	n = g_ops->poll_cq(cq, 1, wc);
	ok(n == 1 && wc[0].wr_id == 500 && wc[0].status == IBV_WC_WR_FLUSH_ERR,
	   "second-pass entry (phase 0) is polled, flush status");
	ok(le32toh(g_cirec->ci) == g_cq_pi, "CI record follows (%u)", le32toh(g_cirec->ci));

	/* arming */
	g_ops->req_notify_cq(cq, 0);
	ok(g_uar[TERN_UDB_CQ / 8] ==
	   (MOCK_CQN | (uint64_t)g_cq_pi << 32 | TERN_UDB_CQ_ARM_NEXT),
	   "req_notify_cq(0): CQN | CI << 32 | ARM_NEXT (got %#llx)",
	   (unsigned long long)g_uar[2]);
	g_ops->req_notify_cq(cq, 1);
	ok(g_uar[TERN_UDB_CQ / 8] ==
	   (MOCK_CQN | (uint64_t)g_cq_pi << 32 | TERN_UDB_CQ_ARM_SOLICITED),
	   "req_notify_cq(1): ARM_SOLICITED");
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr qa;
	struct ibv_qp_init_attr_ex qx;
	struct tern_create_qp_cmd qp1_cmd;
	struct verbs_device *vdev;
	struct verbs_context *vctx;
	struct ibv_context *ctx;
	struct ibv_cq *cq, *cq2;
	struct ibv_qp *qp, *qp2;
	struct ibv_qp_attr attr;
	struct ibv_send_wr sw = { .opcode = IBV_WR_SEND }, *bad;
	struct ibv_recv_wr rw = { .wr_id = 1 }, *rbad;
	struct ibv_wc wc[8];
	struct ibv_pd *pd;
	void *h;
	int memfd, status, i, n;
	pid_t pid;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PROVIDER.so\n", argv[0]);
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	sh->sigsys_nr = -1;

	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	ok(h != NULL, "provider loads against the mock libibverbs (%s)", h ? "" : dlerror());
	if (!h)
		goto out;
	ok(g_dev_ops && !strcmp(g_dev_ops->name, "tern"), "provider registered as \"tern\"");
	if (!g_dev_ops)
		goto out;

	memfd = memfd_create("tern-uar", 0);
	if (memfd < 0 || ftruncate(memfd, TERN_DB_PAGE_SIZE))
		return 2;
	g_uar = mmap(NULL, TERN_DB_PAGE_SIZE, PROT_READ, MAP_SHARED, memfd, 0);
	vdev = g_dev_ops->alloc_device(NULL);
	vctx = g_dev_ops->alloc_context(&vdev->device, memfd, NULL);
	ok(vctx && g_ops, "alloc_context succeeds and sets the ops");
	if (!vctx)
		goto out;
	ctx = &vctx->context;
	ok(g_ops->create_cq_ex == NULL, "create_cq_ex is not offered (libibverbs: EOPNOTSUPP)");

	pd = g_ops->alloc_pd(ctx);
	cq = g_ops->create_cq(ctx, 10, NULL, 0);
	ok(cq && g_cq_cmd.log_depth == 4 && cq->cqe == 16,
	   "create_cq(10): log_depth 4, cqe 16");
	if (!cq)
		goto out;
	ok(g_cq_cmd.buf_va % 4096 == 0 && g_cq_cmd.buf_len >= 16 * 32 + 8 &&
	   g_cq_cmd.buf_len % 4096 == 0, "CQ buffer page aligned, ring + CI record");
	g_ring = (struct tern_cqe *)(uintptr_t)g_cq_cmd.buf_va;
	g_cirec = (struct tern_cq_ci_rec *)(g_ring + 16);
	g_cq_depth = 16;
	for (i = 0, n = 0; i < 16; i++)
		n |= g_ring[i].flags;
	ok(n == 0, "CQ ring zeroed (phase 0: nothing valid before the first pass)");
	errno = 0;
	ok(!g_ops->create_cq(ctx, 1 << 13, NULL, 0) && errno == EINVAL,
	   "create_cq above max_cq_log_depth: EINVAL");

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap = (struct ibv_qp_cap){ .max_send_wr = 8, .max_recv_wr = 5, .max_send_sge = 2,
				      .max_recv_sge = 1, .max_inline_data = 64 };
	qp = g_ops->create_qp(pd, &qa);
	ok(qp != NULL, "create_qp RC");
	if (!qp)
		goto out;
	ok(g_qp_cmd.log_sq_depth == 3 && g_qp_cmd.log_sq_stride == 7 &&
	   g_qp_cmd.log_rq_depth == 3 && g_qp_cmd.log_rq_stride == 5,
	   "QP sizes: SQ 8 x 128 B, RQ 8 x 32 B (got %u/%u %u/%u)", g_qp_cmd.log_sq_depth,
	   g_qp_cmd.log_sq_stride, g_qp_cmd.log_rq_depth, g_qp_cmd.log_rq_stride);
	ok(qa.cap.max_send_wr == 8 && qa.cap.max_recv_wr == 8 && qa.cap.max_send_sge == 2 &&
	   qa.cap.max_inline_data == 96, "reported caps: 8/8 WRs, 2 SGEs, inline 96");
	ok(g_qp_cmd.sq_va % 4096 == 0 && g_qp_cmd.rq_va % 4096 == 0 &&
	   g_qp_cmd.sq_len >= 1024 && g_qp_cmd.rq_len >= 256, "QP rings page aligned");
	qp1_cmd = g_qp_cmd;

	qa.qp_type = IBV_QPT_UD;
	errno = 0;
	ok(!g_ops->create_qp(pd, &qa) && errno == EOPNOTSUPP, "UD QP: EOPNOTSUPP");
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_inline_data = MOCK_MAX_INLINE + 1;
	errno = 0;
	ok(!g_ops->create_qp(pd, &qa) && errno == EINVAL, "inline above the limit: EINVAL");
	qa.cap.max_inline_data = 0;
	qa.cap.max_send_wr = 1 << 11;
	errno = 0;
	ok(!g_ops->create_qp(pd, &qa) && errno == EINVAL, "SQ above max depth: EINVAL");
	qa.cap.max_send_wr = 8;
	qa.cap.max_send_sge = 100;
	errno = 0;
	ok(!g_ops->create_qp(pd, &qa) && errno == EINVAL, "100 SGEs (stride > 1 KiB): EINVAL");
	qa.cap.max_send_sge = 1;
	memset(&qx, 0, sizeof(qx));
	qx.send_cq = cq;
	qx.recv_cq = cq;
	qx.qp_type = IBV_QPT_RC;
	qx.cap = qa.cap;
	qx.pd = pd;
	qx.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qx.send_ops_flags = IBV_QP_EX_WITH_SEND;
	errno = 0;
	ok(!g_ops->create_qp_ex(ctx, &qx) && errno == EOPNOTSUPP,
	   "create_qp_ex with send_ops_flags: EOPNOTSUPP");

	ok(g_ops->post_send(qp, &sw, &bad) == EINVAL && bad == &sw,
	   "post_send in RESET: EINVAL, bad_wr set");
	ok(g_ops->post_recv(qp, &rw, &rbad) == EINVAL && rbad == &rw,
	   "post_recv in RESET: EINVAL");
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	ok(g_ops->modify_qp(qp, &attr, IBV_QP_STATE) == 0 && g_last_state == IBV_QPS_RTS,
	   "modify_qp to RTS goes to the kernel");

	/* the data path in a child that may make no system call */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		no_more_syscalls();
		data_path(qp, cq);
		syscall(SYS_exit_group, 0);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && sh->sigsys_nr < 0,
	   "data path (post_send, post_recv, poll_cq, req_notify_cq) made no system call%s",
	   sh->sigsys_nr >= 0 ? " -- it did: see the syscall number below" : "");
	if (sh->sigsys_nr >= 0)
		ok(0, "trapped syscall number %d", sh->sigsys_nr);

	/* destroy_qp removes that QP's CQEs (in the parent: the child's writes were its own) */
	g_cq_pi = 0;
	memset(&qa.cap, 0, sizeof(qa.cap));
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qp2 = g_ops->create_qp(pd, &qa);
	ok(qp2 && qp2->qp_num != qp->qp_num, "second QP %u", qp2 ? qp2->qp_num : 0);
	if (!qp2)
		goto out;
	g_ops->modify_qp(qp2, &attr, IBV_QP_STATE);
	dev_cqe(qp->qp_num, TERN_WQE_SEND, 0, 1, 0, 0, 0, 0);
	dev_cqe(qp2->qp_num, TERN_WQE_SEND, 0, 2, 0, 0, 0, 0);
	dev_cqe(qp->qp_num, TERN_WQE_SEND, 1, 3, 0, 0, 0, 0);
	dev_cqe(qp2->qp_num, TERN_CQE_RECV, 0, 4, 0, 9, 0, 0);
	dev_cqe(qp->qp_num, TERN_WQE_SEND, 2, 5, 0, 0, 0, 0);
	ok(g_ops->destroy_qp(qp) == 0, "destroy_qp");
	n = g_ops->poll_cq(cq, 8, wc);
	ok(n == 2 && wc[0].wr_id == 2 && wc[1].wr_id == 4 && wc[0].qp_num == qp2->qp_num &&
	   wc[1].opcode == IBV_WC_RECV, "after destroy_qp only the other QP's 2 CQEs remain");
	ok(le32toh(g_cirec->ci) == 5, "CI record covers the removed CQEs (got %u)",
	   le32toh(g_cirec->ci));

	/* modify_qp to RESET restarts the queues at index 0 and drops the QP's CQEs */
	sw.sg_list = NULL;
	sw.num_sge = 0;
	sw.next = NULL;
	g_ops->post_send(qp2, &sw, &bad);
	g_ops->post_send(qp2, &sw, &bad);
	dev_cqe(qp2->qp_num, TERN_WQE_SEND, 0, 6, 0, 0, 0, 0);
	attr.qp_state = IBV_QPS_RESET;
	g_ops->modify_qp(qp2, &attr, IBV_QP_STATE);
	n = g_ops->poll_cq(cq, 8, wc);
	ok(n == 0, "RESET drops the QP's CQEs (polled %d)", n);
	attr.qp_state = IBV_QPS_RTS;
	g_ops->modify_qp(qp2, &attr, IBV_QP_STATE);
	g_ops->post_send(qp2, &sw, &bad);
	ok(g_uar[0] == (qp2->qp_num | 1ull << 32), "after RESET the SQ PI restarts (got %#llx)",
	   (unsigned long long)g_uar[0]);
	ok(g_ops->destroy_qp(qp2) == 0 && g_ops->destroy_cq(cq) == 0, "destroy QP and CQ");
	cq2 = g_ops->create_cq(ctx, 1, NULL, 0);
	ok(cq2 && g_cq_cmd.log_depth == 1, "create_cq(1): 2 entries");
	if (cq2)
		g_ops->destroy_cq(cq2);
	(void)qp1_cmd;
	g_ops->dealloc_pd(pd);
	g_ops->free_context(ctx);
	g_dev_ops->uninit_device(vdev);
out:
	for (i = 0; i < sh->n; i++)
		printf("%s %d - %s\n", sh->r[i].ok ? "ok" : "not ok", i + 1, sh->r[i].desc);
	printf("1..%d\n", sh->n);
	for (i = 0, n = 0; i < sh->n; i++)
		n += !sh->r[i].ok;
	return n ? 1 : 0;
}
