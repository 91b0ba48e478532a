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
#include <endian.h>
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
#include <linux/tern/tern_rdma.h>

DECLARE_DRV_CMD(mock_alloc_context, IB_USER_VERBS_CMD_GET_CONTEXT, empty,
		tern_alloc_ucontext_resp);
DECLARE_DRV_CMD(mock_create_cq, IB_USER_VERBS_CMD_CREATE_CQ, tern_create_cq_cmd,
		tern_create_cq_resp);
DECLARE_DRV_CMD(mock_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ, tern_create_cq_cmd, empty);
DECLARE_DRV_CMD(mock_create_cq_ex, IB_USER_VERBS_EX_CMD_CREATE_CQ, tern_create_cq_cmd,
		tern_create_cq_resp);
DECLARE_DRV_CMD(mock_create_qp, IB_USER_VERBS_CMD_CREATE_QP, tern_create_qp_cmd,
		tern_create_qp_resp);
DECLARE_DRV_CMD(mock_modify_qp, IB_USER_VERBS_EX_CMD_MODIFY_QP, tern_modify_qp_cmd, empty);
DECLARE_DRV_CMD(mock_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ, tern_create_srq_cmd,
		tern_create_srq_resp);
DECLARE_DRV_CMD(mock_create_ah, IB_USER_VERBS_CMD_CREATE_AH, empty, tern_create_ah_resp);

#define MOCK_CQN	5
#define MOCK_SRQN	9
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
static uint32_t g_qp_ece_offer;		/* what create_qp's response offers */
static int g_modify_ex_calls;
static uint32_t g_modify_ece;		/* ece_options of the last extended modify_qp */
static struct tern_create_srq_cmd g_srq_cmd;
static int g_srq_mask = -1;
static uint32_t g_srq_limit;
static int g_ah_no_path;
static uint32_t g_uctx_caps;	/* what the "kernel" offers in alloc_context (TERN_UCTX_CAP_*) */
static struct tern_qp_path g_ah_path;	/* what the "kernel" answers to create_ah */

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

/*
 * As Debian 12's libibverbs has it: the extended QP of a QP the provider made one, found
 * through verbs_qp.comp_mask right after the union of ibv_qp and ibv_qp_ex, whose size in
 * Debian's <infiniband/verbs.h> provider.t passes as DEBIAN_QP_EX_SIZE (this file is
 * compiled with the rdma-core tree's headers, where that struct is larger).
 */
struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	uint32_t comp_mask;

	memcpy(&comp_mask, (char *)qp + DEBIAN_QP_EX_SIZE, sizeof(comp_mask));
	return comp_mask & VERBS_QP_EX ? (struct ibv_qp_ex *)qp : NULL;
}

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
	if (g_uctx_caps) {
		r->comp_mask = TERN_UCTX_RESP_CAPS;
		r->caps = g_uctx_caps;
	}
	/* with completion timestamps, the device clock page: the memfd's second page */
	if (g_uctx_caps & TERN_UCTX_CAP_CQE_TS) {
		r->comp_mask |= TERN_UCTX_RESP_CLOCK;
		r->clock_mmap_key = TERN_DB_PAGE_SIZE;
	}
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

/* What tern_ib.ko answers for a path: struct tern_ah_path, host byte order. */
static void mock_ah_path_to_user(const struct tern_qp_path *p, struct tern_ah_path *u)
{
	memcpy(u->dmac, p->dmac, sizeof(u->dmac));
	memcpy(u->smac, p->smac, sizeof(u->smac));
	u->vlan_id = le16toh(p->vlan_id);
	u->ip_version = p->ip_version;
	u->hop_limit = p->hop_limit;
	u->traffic_class = p->traffic_class;
	u->sl = p->sl;
	u->flow_label = le32toh(p->flow_label);
	u->udp_sport = le16toh(p->udp_sport);
	memcpy(u->sgid, p->sgid, sizeof(u->sgid));
	memcpy(u->dgid, p->dgid, sizeof(u->dgid));
}

int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah, struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size)
{
	struct mock_create_ah_resp *r = (void *)resp;

	if (resp_size < sizeof(*r))
		return EINVAL;
	if (!g_ah_no_path)
		mock_ah_path_to_user(&g_ah_path, &r->path);
	ah->context = pd->context;
	ah->pd = pd;
	ah->handle = 3;
	return 0;
}

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq, struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp, size_t resp_size)
{
	struct mock_create_srq *c = (void *)cmd;
	struct mock_create_srq_resp *r = (void *)resp;

	if (cmd_size < sizeof(*c) || resp_size < sizeof(*r))
		return EINVAL;
	g_srq_cmd = c->drv_payload;
	r->srqn = MOCK_SRQN;
	srq->context = pd->context;
	srq->pd = pd;
	/* as tern_ib.ko: the SRQ holds its whole ring */
	attr->attr.max_wr = 1u << g_srq_cmd.log_depth;
	return 0;
}

int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask,
		       struct ibv_modify_srq *cmd, size_t cmd_size)
{
	g_srq_mask = srq_attr_mask;
	if (srq_attr_mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;
	if (srq_attr_mask & IBV_SRQ_LIMIT)
		g_srq_limit = srq_attr->srq_limit;
	return 0;
}

int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size)
{
	memset(srq_attr, 0, sizeof(*srq_attr));
	srq_attr->srq_limit = g_srq_limit;
	return 0;
}

int ibv_cmd_destroy_srq(struct ibv_srq *srq) { return 0; }

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

int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr, struct verbs_cq *cq,
			 struct ibv_create_cq_ex *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp, size_t resp_size,
			 uint32_t cmd_flags)
{
	struct mock_create_cq_ex *c = (void *)cmd;
	struct mock_create_cq_ex_resp *r = (void *)resp;

	if (cmd_size < sizeof(*c) || resp_size < sizeof(*r) || cmd_flags)
		return EINVAL;
	g_cq_cmd = c->drv_payload;
	r->drv_payload.cqn = MOCK_CQN;
	cq->cq.context = context;
	cq->cq.channel = cq_attr->channel;
	cq->cq.cqe = cq_attr->cqe;
	return 0;
}

static int mock_resize_cq(struct tern_create_cq_cmd *c, int cqe);

int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size)
{
	struct mock_resize_cq *c = (void *)cmd;
	int ret;

	if (cmd_size < sizeof(*c) || resp_size < sizeof(*resp))
		return EINVAL;
	ret = mock_resize_cq(&c->drv_payload, cqe);
	if (!ret)
		cq->cqe = resp->cqe = cqe;
	return ret;
}

int ibv_cmd_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr, struct ibv_modify_cq *cmd,
		      size_t cmd_size)
{
	return attr->attr_mask & ~IBV_CQ_ATTR_MODERATE ? EINVAL : 0;
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
	qp->srq = attr->srq;
	qp->qp_type = attr->qp_type;
	qp->state = IBV_QPS_RESET;
	qp->qp_num = g_next_qpn;
	r->qpn = g_next_qpn++;
	r->ece_options = g_qp_ece_offer;
	return 0;
}

int ibv_cmd_modify_qp_ex(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			 struct ibv_modify_qp_ex *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_modify_qp_resp *resp, size_t resp_size)
{
	struct mock_modify_qp *c = (void *)cmd;

	if (cmd_size < sizeof(*c))
		return EINVAL;
	g_modify_ex_calls++;
	g_modify_ece = c->drv_payload.ece_options;
	if (attr_mask & IBV_QP_STATE)
		g_last_state = attr->qp_state;
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

int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid) { return 0; }

int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid) { return 0; }

/* ---- the "device" ---------------------------------------------------------------------- */
static volatile uint64_t *g_uar;	/* our view of the doorbell page */
static struct tern_cqe *g_ring;
static struct tern_cq_ci_rec *g_cirec;
static uint32_t g_cq_depth;
static uint32_t g_cq_pi;		/* CQEs written, free-running */
static int g_resize_calls;

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

static void dev_cqe_x(uint32_t qpn, uint8_t opcode, uint16_t wqe_idx, uint64_t wr_id,
		      uint32_t byte_len, uint32_t src_qpn, uint8_t flags, uint32_t imm_be)
{
	struct tern_cqe *c = &g_ring[g_cq_pi % g_cq_depth];
	uint8_t phase = (g_cq_pi / g_cq_depth) & 1 ? 0 : TERN_CQE_F_PHASE;

	memset(c, 0, offsetof(struct tern_cqe, flags));
	c->wr_id = htole64(wr_id);
	c->byte_len = htole32(byte_len);
	c->imm_data = imm_be;
	c->qpn = htole32(qpn);
	c->src_qpn = htole32(src_qpn);
	c->wqe_idx = htole16(wqe_idx);
	c->opcode = opcode;
	__atomic_store_n(&c->flags, (uint8_t)(phase | flags), __ATOMIC_RELEASE);
	g_cq_pi++;
}

/*
 * The device's RESIZE_CQ (include/linux/tern/tern_rdma.h), on the mock's one CQ ring: the CQEs
 * from the old ring's CI record up to the producer move to entries 0.. of the new ring with
 * its first-pass phase; EINVAL when they do not fit.
 */
static int mock_resize_cq(struct tern_create_cq_cmd *c, int cqe)
{
	struct tern_cqe *nr = (struct tern_cqe *)(uintptr_t)c->buf_va;
	uint32_t ci = le32toh(g_cirec->ci), n = g_cq_pi - ci, ndepth = 1u << c->log_depth, k;

	if (!c->log_depth || cqe > (int)ndepth || c->buf_len < 32ull * ndepth + 8 || n > ndepth)
		return EINVAL;
	for (k = 0; k < n; k++) {
		nr[k] = g_ring[(ci + k) % g_cq_depth];
		nr[k].flags |= TERN_CQE_F_PHASE;
	}
	g_ring = nr;
	g_cirec = (struct tern_cq_ci_rec *)(nr + ndepth);
	g_cq_depth = ndepth;
	g_cq_pi = n;
	g_resize_calls++;
	return 0;
}

/* Little-endian stores at byte offsets: the contract's layout, spelled out independently. */
static void put_le(uint8_t *p, unsigned int off, uint64_t v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		p[off + i] = (uint8_t)(v >> (8 * i));
}

static void *ring_slot(uint64_t va, unsigned int log_depth, unsigned int log_stride,
		       uint32_t i)
{
	return (char *)(uintptr_t)va + ((size_t)(i & ((1u << log_depth) - 1)) << log_stride);
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
	ok(ret == EINVAL && bad == &w[0], "atomic with 2 SGEs: EINVAL, bad_wr set (ret %d)", ret);
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


/* ---- extended CQ polling, under seccomp ------------------------------------------------ */
static void data_path_cq_ex(struct ibv_qp *qp, struct ibv_cq_ex *cx)
{
	struct ibv_poll_cq_attr pa = {};
	struct ibv_send_wr w = { .wr_id = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint32_t qpn = qp->qp_num;
	int ret;

	ret = ibv_start_poll(cx, &pa);
	ok(ret == ENOENT, "cq_ex: start_poll on an empty CQ: ENOENT (got %d)", ret);
	pa.comp_mask = 1;
	ret = ibv_start_poll(cx, &pa);
	ok(ret == EINVAL, "cq_ex: start_poll with an unknown comp_mask: EINVAL (got %d)", ret);
	pa.comp_mask = 0;

	g_ops->post_send(qp, &w, &bad);
	g_ops->post_send(qp, &w, &bad);
	dev_cqe(qpn, TERN_WQE_RDMA_READ, 0, 700, TERN_CQE_OK, 4097, 0, 0);
	dev_cqe_x(qpn, TERN_CQE_RECV_IMM, 0, 701, 33, 0, TERN_CQE_F_IMM, htobe32(0xfeedf00d));
	dev_cqe(qpn, TERN_WQE_SEND, 1, 702, TERN_CQE_REM_ACCESS_ERR, 0, 0, 0);
	ret = ibv_start_poll(cx, &pa);
	ok(ret == 0 && cx->wr_id == 700 && cx->status == IBV_WC_SUCCESS &&
	   ibv_wc_read_opcode(cx) == IBV_WC_RDMA_READ && ibv_wc_read_byte_len(cx) == 4097 &&
	   ibv_wc_read_qp_num(cx) == qpn && ibv_wc_read_wc_flags(cx) == 0,
	   "cq_ex: start_poll: wr_id, status, READ, byte_len, qp_num, no flags");
	ret = ibv_next_poll(cx);
	ok(ret == 0 && cx->wr_id == 701 && ibv_wc_read_opcode(cx) == IBV_WC_RECV &&
	   ibv_wc_read_byte_len(cx) == 33 && (ibv_wc_read_wc_flags(cx) & IBV_WC_WITH_IMM) &&
	   ibv_wc_read_imm_data(cx) == htobe32(0xfeedf00d) && ibv_wc_read_src_qp(cx) == 0 &&
	   ibv_wc_read_slid(cx) == 0 && ibv_wc_read_sl(cx) == 0 &&
	   ibv_wc_read_dlid_path_bits(cx) == 0,
	   "cq_ex: next_poll: RECV with imm, byte_len, imm_data; src_qp, slid, sl 0");
	ret = ibv_next_poll(cx);
	ok(ret == 0 && cx->wr_id == 702 && cx->status == IBV_WC_REM_ACCESS_ERR &&
	   ibv_wc_read_vendor_err(cx) == TERN_SYND_NAK_ACCESS,
	   "cq_ex: next_poll: error status and vendor_err");
	ok(le32toh(g_cirec->ci) == 0, "cq_ex: CI record not written before end_poll (got %u)",
	   le32toh(g_cirec->ci));
	ret = ibv_next_poll(cx);
	ok(ret == ENOENT, "cq_ex: next_poll past the last CQE: ENOENT (got %d)", ret);
	ibv_end_poll(cx);
	ok(le32toh(g_cirec->ci) == 3, "cq_ex: end_poll publishes CI 3 (got %u)",
	   le32toh(g_cirec->ci));
	ret = ibv_start_poll(cx, &pa);
	ok(ret == ENOENT, "cq_ex: start_poll after the batch: ENOENT, lock released (got %d)",
	   ret);
	dev_cqe(qpn, TERN_CQE_RECV, 1, 703, TERN_CQE_OK, 0, 0, 0);
	ok(g_ops->poll_cq(ibv_cq_ex_to_cq(cx), 1, &(struct ibv_wc){}) == 1 &&
	   le32toh(g_cirec->ci) == 4, "cq_ex: ibv_poll_cq works on the same CQ");
	/* UD receives: the network header type in sl, as ConnectX reports it (UCX needs it) */
	dev_cqe_x(qpn, TERN_CQE_RECV, 2, 704, 48, 0x55, TERN_CQE_F_GRH | TERN_CQE_F_IPV4, 0);
	dev_cqe_x(qpn, TERN_CQE_RECV, 3, 705, 48, 0x56, TERN_CQE_F_GRH, 0);
	ret = ibv_start_poll(cx, &pa);
	ok(ret == 0 && cx->wr_id == 704 && (ibv_wc_read_wc_flags(cx) & IBV_WC_GRH) &&
	   ibv_wc_read_sl(cx) == 2 && ibv_wc_read_src_qp(cx) == 0x55,
	   "cq_ex: UD receive of RoCEv2/IPv4: IBV_WC_GRH, sl 2 (IPv4), src_qp");
	ret = ibv_next_poll(cx);
	ok(ret == 0 && cx->wr_id == 705 && (ibv_wc_read_wc_flags(cx) & IBV_WC_GRH) &&
	   ibv_wc_read_sl(cx) == 1, "cq_ex: UD receive of RoCEv2/IPv6: IBV_WC_GRH, sl 1 (IPv6)");
	ibv_end_poll(cx);
}

/* ---- the ibv_wr_* interface, under seccomp --------------------------------------------- */
static void data_path_wr(struct ibv_qp *qp, struct tern_create_qp_cmd *c)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	struct ibv_sge sg[3] = {
		{ .addr = 0x1000, .length = 100, .lkey = 0x111 },
		{ .addr = 0x2000, .length = 200, .lkey = 0x222 },
		{ .addr = 0x3000, .length = 300, .lkey = 0x333 },
	};
	struct ibv_data_buf ib[2] = { { "abc", 3 }, { "defgh", 5 } };
	uint32_t qpn = qp->qp_num;
	uint64_t db0 = g_uar[TERN_UDB_SQ / 8], pi0 = db0 >> 32;
	struct tern_sq_wqe *s;
	struct tern_sge *se;
	struct tern_atomic_seg *at;
	int ret;

	ok(qpx != NULL, "wr: ibv_qp_to_qp_ex gives the extended QP");
	if (!qpx)
		return;
	/* three WRs in one batch: one doorbell, WQEs as post_send builds them */
	ibv_wr_start(qpx);
	qpx->wr_id = 900;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, 0x4567, 0xabcdef0123ull);
	ibv_wr_set_sge_list(qpx, 2, sg);
	ok(g_uar[TERN_UDB_SQ / 8] == db0, "wr: no doorbell before wr_complete");
	qpx->wr_id = 901;
	qpx->wr_flags = IBV_SEND_SOLICITED;
	ibv_wr_send_imm(qpx, htobe32(0xcafe));
	ibv_wr_set_inline_data_list(qpx, 2, ib);
	qpx->wr_id = 902;
	qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	ibv_wr_atomic_cmp_swp(qpx, 0x99, 0x10008, 5, 6);
	ibv_wr_set_sge(qpx, 0x111, 0x1000, 8);
	ret = ibv_wr_complete(qpx);
	ok(ret == 0 && g_uar[TERN_UDB_SQ / 8] == (qpn | (pi0 + 3) << 32),
	   "wr: wr_complete of 3 WRs: 0, one doorbell PI +3 (ret %d, db %#llx)", ret,
	   (unsigned long long)g_uar[TERN_UDB_SQ / 8]);
	s = ring_slot(c->sq_va, c->log_sq_depth, c->log_sq_stride, pi0);
	se = (struct tern_sge *)(s + 1);
	ok(s->opcode == TERN_WQE_RDMA_WRITE && s->flags == TERN_WQE_F_SIGNALED &&
	   s->num_sge == 2 && le64toh(s->wr_id) == 900 && le32toh(s->rkey) == 0x4567 &&
	   le64toh(s->remote_addr) == 0xabcdef0123ull && le32toh(se[1].lkey) == 0x222 &&
	   le64toh(se[1].addr) == 0x2000 && le32toh(se[1].length) == 200,
	   "wr: WRITE WQE: opcode, SIGNALED, rkey, raddr, wr_id, both SGEs");
	s = ring_slot(c->sq_va, c->log_sq_depth, c->log_sq_stride, pi0 + 1);
	ok(s->opcode == TERN_WQE_SEND_IMM &&
	   s->flags == (TERN_WQE_F_INLINE | TERN_WQE_F_SOLICITED) && s->num_sge == 0 &&
	   le32toh(s->inline_len) == 8 && !memcmp(s + 1, "abcdefgh", 8) &&
	   s->imm_data == htobe32(0xcafe) && le64toh(s->wr_id) == 901,
	   "wr: SEND_IMM with an inline data list: both buffers copied, imm, SOLICITED");
	s = ring_slot(c->sq_va, c->log_sq_depth, c->log_sq_stride, pi0 + 2);
	at = (struct tern_atomic_seg *)(s + 1);
	se = (struct tern_sge *)(at + 1);
	ok(s->opcode == TERN_WQE_ATOMIC_CMP_SWP &&
	   s->flags == (TERN_WQE_F_SIGNALED | TERN_WQE_F_FENCE) && s->num_sge == 1 &&
	   le64toh(s->remote_addr) == 0x10008 && le32toh(s->rkey) == 0x99 &&
	   le64toh(at->compare) == 5 && le64toh(at->swap_add) == 6 &&
	   le32toh(se->length) == 8, "wr: CMP_SWP: compare 5, swap 6, 8-byte SGE, FENCE");

	/* an error anywhere in a batch: wr_complete returns it and posts none of it */
	ibv_wr_start(qpx);
	qpx->wr_id = 910;
	qpx->wr_flags = 0;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 0x111, 0x1000, 10);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 3, sg);
	ret = ibv_wr_complete(qpx);
	ok(ret == EINVAL && g_uar[TERN_UDB_SQ / 8] == (qpn | (pi0 + 3) << 32),
	   "wr: a batch with 3 SGEs on a 2-SGE QP: EINVAL, nothing posted (ret %d)", ret);
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ret = ibv_wr_complete(qpx);
	ok(ret == EINVAL, "wr: a WR without its data call: EINVAL (ret %d)", ret);
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 0x111, 0x1000, 10);
	ibv_wr_abort(qpx);
	ok(g_uar[TERN_UDB_SQ / 8] == (qpn | (pi0 + 3) << 32), "wr: wr_abort posts nothing");
	ibv_wr_start(qpx);
	qpx->wr_id = 920;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, "xyz", 3);
	ret = ibv_wr_complete(qpx);
	s = ring_slot(c->sq_va, c->log_sq_depth, c->log_sq_stride, pi0 + 3);
	ok(ret == 0 && g_uar[TERN_UDB_SQ / 8] == (qpn | (pi0 + 4) << 32) &&
	   le64toh(s->wr_id) == 920 && s->opcode == TERN_WQE_SEND &&
	   (s->flags & TERN_WQE_F_INLINE) && !memcmp(s + 1, "xyz", 3),
	   "wr: after the failed and aborted batches the next WR takes the next slot");
	/* fill the 8-deep SQ: the WR past it makes wr_complete fail with ENOMEM */
	ibv_wr_start(qpx);
	for (int i = 0; i < 5; i++) {
		qpx->wr_id = 930 + i;
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, 0x111, 0x1000, 1);
	}
	ret = ibv_wr_complete(qpx);
	ok(ret == ENOMEM && g_uar[TERN_UDB_SQ / 8] == (qpn | (pi0 + 4) << 32),
	   "wr: a batch past the SQ's depth: ENOMEM, nothing posted (ret %d)", ret);
}

/* ---- UD, SRQ and atomics: the data path, under seccomp ------------------------------ */
struct ext_objs {
	struct ibv_qp *ud, *rc, *sq;	/* UD QP, RC QP (atomics), RC QP on the SRQ */
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_ah *ah;
	struct tern_create_qp_cmd ud_cmd, rc_cmd;
	struct tern_create_srq_cmd srq_cmd;
};

static void data_path_ext(struct ext_objs *o)
{
	struct ibv_sge sg[2] = {
		{ .addr = 0x5000, .length = 1000, .lkey = 0x515 },
		{ .addr = 0x6000, .length = 8, .lkey = 0x616 },
	};
	uint8_t want[128];
	struct ibv_send_wr w, *bad;
	struct ibv_recv_wr rw[5], *rbad;
	struct ibv_wc wc[8];
	struct tern_rq_wqe *r;
	struct tern_sge *se;
	uint8_t *p;
	int ret, i, n;

	/* UD SEND_WITH_IMM: header, struct tern_ud_seg from the AH and the WR, then the SGE */
	memset(&w, 0, sizeof(w));
	w.wr_id = 0x1122334455667788ull;
	w.sg_list = sg;
	w.num_sge = 1;
	w.opcode = IBV_WR_SEND_WITH_IMM;
	w.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	w.imm_data = htobe32(0xa1b2c3d4);
	w.wr.ud.ah = o->ah;
	w.wr.ud.remote_qpn = 0xabcdef;
	w.wr.ud.remote_qkey = 0x11111111;
	ret = g_ops->post_send(o->ud, &w, &bad);
	ok(ret == 0 && g_uar[TERN_UDB_SQ / 8] == (o->ud->qp_num | 1ull << 32),
	   "UD post_send: SQ doorbell = QPN | 1 << 32 (ret %d, got %#llx)", ret,
	   (unsigned long long)g_uar[TERN_UDB_SQ / 8]);
	memset(want, 0, sizeof(want));
	want[0] = TERN_WQE_SEND_IMM;
	want[1] = TERN_WQE_F_SIGNALED | TERN_WQE_F_SOLICITED;
	want[2] = 1;
	memcpy(want + 8, &w.imm_data, 4);		/* as the verbs carry it */
	put_le(want, 24, w.wr_id, 8);
	memcpy(want + 32, &g_ah_path, 64);		/* the path tern_ib.ko built */
	put_le(want, 96, 0xabcdef, 4);
	put_le(want, 100, 0x11111111, 4);
	put_le(want, 112, 0x5000, 8);
	put_le(want, 120, 1000, 4);
	put_le(want, 124, 0x515, 4);
	p = ring_slot(o->ud_cmd.sq_va, o->ud_cmd.log_sq_depth, o->ud_cmd.log_sq_stride, 0);
	ok(!memcmp(p, want, 128),
	   "UD WQE bytes: 32-byte header, tern_ud_seg (path, dest QPN, Q_Key) at 32, SGE at 112");
	n = -1;
	for (i = 0; i < 128; i++)
		if (p[i] != want[i] && n < 0)
			n = i;
	if (n >= 0)
		ok(0, "UD WQE: first differing byte %d (got %#x, want %#x)", n, p[n], want[n]);

	/* UD errors: no AH, too many SGEs, a non-SEND opcode; nothing posted */
	w.wr.ud.ah = NULL;
	bad = NULL;
	ret = g_ops->post_send(o->ud, &w, &bad);
	ok(ret == EINVAL && bad == &w, "UD post without an AH: EINVAL (ret %d)", ret);
	w.wr.ud.ah = o->ah;
	w.num_sge = 2;
	bad = NULL;
	ret = g_ops->post_send(o->ud, &w, &bad);
	ok(ret == EINVAL && bad == &w, "UD post with 2 SGEs on a 1-SGE QP: EINVAL (ret %d)", ret);
	w.num_sge = 1;
	w.opcode = IBV_WR_RDMA_WRITE;
	bad = NULL;
	ret = g_ops->post_send(o->ud, &w, &bad);
	ok(ret == EINVAL && bad == &w, "UD RDMA WRITE: EINVAL (ret %d)", ret);
	ok(g_uar[TERN_UDB_SQ / 8] == (o->ud->qp_num | 1ull << 32),
	   "no doorbell for the rejected UD WRs");
	/* fill the 4-deep UD SQ: ENOMEM */
	w.opcode = IBV_WR_SEND;
	for (i = 0; i < 3; i++)
		if (g_ops->post_send(o->ud, &w, &bad))
			break;
	bad = NULL;
	ret = g_ops->post_send(o->ud, &w, &bad);
	ok(i == 3 && ret == ENOMEM && bad == &w, "UD SQ full after 4: ENOMEM (ret %d)", ret);

	/* atomics on the RC QP */
	memset(&w, 0, sizeof(w));
	w.wr_id = 0x77;
	w.sg_list = &sg[1];
	w.num_sge = 1;
	w.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	w.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	w.wr.atomic.remote_addr = 0x7000000008ull;
	w.wr.atomic.rkey = 0x4242;
	w.wr.atomic.compare_add = 0x0102030405060708ull;
	w.wr.atomic.swap = 0x1112131415161718ull;
	ret = g_ops->post_send(o->rc, &w, &bad);
	memset(want, 0, sizeof(want));
	want[0] = TERN_WQE_ATOMIC_CMP_SWP;
	want[1] = TERN_WQE_F_SIGNALED | TERN_WQE_F_FENCE;
	want[2] = 1;
	put_le(want, 12, 0x4242, 4);
	put_le(want, 16, 0x7000000008ull, 8);
	put_le(want, 24, 0x77, 8);
	put_le(want, 32, 0x1112131415161718ull, 8);	/* swap_add: the swap value */
	put_le(want, 40, 0x0102030405060708ull, 8);	/* compare */
	put_le(want, 48, 0x6000, 8);
	put_le(want, 56, 8, 4);
	put_le(want, 60, 0x616, 4);
	p = ring_slot(o->rc_cmd.sq_va, o->rc_cmd.log_sq_depth, o->rc_cmd.log_sq_stride, 0);
	ok(ret == 0 && !memcmp(p, want, 64),
	   "CMP_AND_SWP WQE bytes: header (rkey, VA), tern_atomic_seg (swap, compare), 8-byte SGE");
	w.wr_id = 0x78;
	w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	w.send_flags = 0;
	w.wr.atomic.compare_add = 5;
	w.wr.atomic.swap = 0xffff;	/* ignored by FETCH_AND_ADD */
	ret = g_ops->post_send(o->rc, &w, &bad);
	memset(want, 0, sizeof(want));
	want[0] = TERN_WQE_ATOMIC_FETCH_ADD;
	want[2] = 1;
	put_le(want, 12, 0x4242, 4);
	put_le(want, 16, 0x7000000008ull, 8);
	put_le(want, 24, 0x78, 8);
	put_le(want, 32, 5, 8);				/* swap_add: the addend */
	put_le(want, 48, 0x6000, 8);
	put_le(want, 56, 8, 4);
	put_le(want, 60, 0x616, 4);
	p = ring_slot(o->rc_cmd.sq_va, o->rc_cmd.log_sq_depth, o->rc_cmd.log_sq_stride, 1);
	ok(ret == 0 && !memcmp(p, want, 64) &&
	   g_uar[TERN_UDB_SQ / 8] == (o->rc->qp_num | 2ull << 32),
	   "FETCH_AND_ADD WQE bytes (addend in swap_add, compare 0); doorbell PI 2");
	sg[1].length = 4;
	bad = NULL;
	ret = g_ops->post_send(o->rc, &w, &bad);
	ok(ret == EINVAL && bad == &w, "atomic with a 4-byte SGE: EINVAL (ret %d)", ret);
	sg[1].length = 8;
	w.send_flags = IBV_SEND_INLINE;
	bad = NULL;
	ret = g_ops->post_send(o->rc, &w, &bad);
	ok(ret == EINVAL && bad == &w, "inline atomic: EINVAL (ret %d)", ret);

	/* SRQ: WQEs in the SRQ ring, TERN_UDB_SRQ doorbell, full at max_wr (4) */
	for (i = 0; i < 5; i++)
		rw[i] = (struct ibv_recv_wr){ .wr_id = 900 + i, .next = i < 4 ? &rw[i + 1] : NULL,
					      .sg_list = sg, .num_sge = 2 };
	rw[2].next = NULL;
	ret = g_ops->post_srq_recv(o->srq, rw, &rbad);
	ok(ret == 0 && g_uar[TERN_UDB_SRQ / 8] == (MOCK_SRQN | 3ull << 32),
	   "post_srq_recv of 3: SRQ doorbell (0x18) = SRQN | 3 << 32 (ret %d, got %#llx)", ret,
	   (unsigned long long)g_uar[TERN_UDB_SRQ / 8]);
	r = ring_slot(o->srq_cmd.buf_va, o->srq_cmd.log_depth, o->srq_cmd.log_stride, 2);
	se = (struct tern_sge *)(r + 1);
	ok(le64toh(r->wr_id) == 902 && r->num_sge == 2 && le64toh(se[0].addr) == 0x5000 &&
	   le32toh(se[0].length) == 1000 && le32toh(se[1].lkey) == 0x616,
	   "SRQ WQE 2: wr_id, 2 SGEs as posted");
	rw[2].next = &rw[3];
	bad = NULL;
	rbad = NULL;
	ret = g_ops->post_srq_recv(o->srq, &rw[3], &rbad);
	ok(ret == ENOMEM && rbad == &rw[4] &&
	   g_uar[TERN_UDB_SRQ / 8] == (MOCK_SRQN | 4ull << 32),
	   "SRQ takes 4, the 5th is ENOMEM; doorbell PI 4 (ret %d)", ret);
	rw[0].num_sge = 3;
	rw[0].next = NULL;
	rbad = NULL;
	ret = g_ops->post_srq_recv(o->srq, rw, &rbad);
	ok(ret == ENOMEM && rbad == &rw[0], "full SRQ: ENOMEM before the SGE check (ret %d)", ret);
	rw[0].num_sge = 1;
	rbad = NULL;
	ret = g_ops->post_recv(o->sq, rw, &rbad);
	ok(ret == EINVAL && rbad == &rw[0], "post_recv on a QP with an SRQ: EINVAL (ret %d)", ret);

	/* completions: UD receive, atomics, SRQ receives (which free SRQ slots) */
	dev_cqe_x(o->ud->qp_num, TERN_CQE_RECV_IMM, 0, 0xd0, 40 + 100, 0x00fedcba,
		  TERN_CQE_F_GRH | TERN_CQE_F_IPV4 | TERN_CQE_F_IMM, htobe32(0x55));
	dev_cqe_x(o->rc->qp_num, TERN_WQE_ATOMIC_CMP_SWP, 0, 0x77, 8, 0, 0, 0);
	dev_cqe_x(o->rc->qp_num, TERN_WQE_ATOMIC_FETCH_ADD, 1, 0x78, 8, 0, 0, 0);
	dev_cqe_x(o->sq->qp_num, TERN_CQE_RECV, 0, 900, 64, 0, 0, 0);
	dev_cqe_x(o->sq->qp_num, TERN_CQE_RECV, 1, 901, 65, 0, 0, 0);
	n = g_ops->poll_cq(o->cq, 8, wc);
	ok(n == 5, "5 CQEs polled (got %d)", n);
	ok(wc[0].opcode == IBV_WC_RECV && wc[0].qp_num == o->ud->qp_num &&
	   wc[0].src_qp == 0x00fedcba && wc[0].byte_len == 140 &&
	   wc[0].wc_flags == (IBV_WC_GRH | IBV_WC_WITH_IMM) && wc[0].imm_data == htobe32(0x55) &&
	   wc[0].pkey_index == 0 && wc[0].sl == 2 && wc[0].slid == 0 &&
	   wc[0].dlid_path_bits == 0 && wc[0].wr_id == 0xd0,
	   "UD receive: src_qp, byte_len with the GRH, GRH|WITH_IMM, pkey 0, sl 2 (IPv4), slid 0");
	ok(wc[1].opcode == IBV_WC_COMP_SWAP && wc[1].wr_id == 0x77 && wc[1].byte_len == 8 &&
	   wc[1].status == IBV_WC_SUCCESS, "CMP_SWP completion: IBV_WC_COMP_SWAP, byte_len 8");
	ok(wc[2].opcode == IBV_WC_FETCH_ADD && wc[2].wr_id == 0x78,
	   "FETCH_ADD completion: IBV_WC_FETCH_ADD");
	ok(wc[3].opcode == IBV_WC_RECV && wc[3].wr_id == 900 && wc[3].qp_num == o->sq->qp_num &&
	   wc[4].wr_id == 901 && wc[4].byte_len == 65 && wc[4].wc_flags == 0,
	   "SRQ receives: wr_id from the CQE, qp_num of the QP");
	rw[0].next = &rw[1];
	rw[1].next = &rw[2];
	rw[2].next = NULL;
	rw[0].num_sge = 1;
	rbad = NULL;
	ret = g_ops->post_srq_recv(o->srq, rw, &rbad);
	ok(ret == ENOMEM && rbad == &rw[2] &&
	   g_uar[TERN_UDB_SRQ / 8] == (MOCK_SRQN | 6ull << 32),
	   "2 SRQ completions free 2 slots: 2 posted, the 3rd ENOMEM, doorbell PI 6 (ret %d)",
	   ret);
	r = ring_slot(o->srq_cmd.buf_va, o->srq_cmd.log_depth, o->srq_cmd.log_stride, 4);
	ok(le64toh(r->wr_id) == 900 && r->num_sge == 1, "SRQ slot 0 reused by WQE 4");
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
	struct ibv_qp *qp, *qp2, *ucqp;
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
	if (memfd < 0 || ftruncate(memfd, TERN_DB_PAGE_SIZE + TERN_CLOCK_PAGE_SIZE))
		return 2;
	g_uar = mmap(NULL, TERN_DB_PAGE_SIZE, PROT_READ, MAP_SHARED, memfd, 0);
	vdev = g_dev_ops->alloc_device(NULL);
	vctx = g_dev_ops->alloc_context(&vdev->device, memfd, NULL);
	ok(vctx && g_ops, "alloc_context succeeds and sets the ops");
	if (!vctx)
		goto out;
	ctx = &vctx->context;

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

	/* UC: RC's ring layout; SEND and WRITE post, READ and atomics are refused */
	qa.qp_type = IBV_QPT_UC;
	ucqp = g_ops->create_qp(pd, &qa);
	ok(ucqp && g_qp_cmd.log_sq_stride == 7 && g_qp_cmd.log_rq_stride == 5,
	   "create_qp UC: RC's WQE layout (SQ 8 x 128 B, RQ 8 x 32 B)");
	if (ucqp) {
		struct ibv_send_wr uw, *ubad = NULL;
		struct ibv_sge usg = { .addr = 0x6000, .length = 8, .lkey = 0x616 };
		static const enum ibv_wr_opcode refused[] = {
			IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		};
		unsigned int k, nref = 0;

		memset(&attr, 0, sizeof(attr));
		attr.qp_state = IBV_QPS_RTS;
		g_ops->modify_qp(ucqp, &attr, IBV_QP_STATE);
		memset(&uw, 0, sizeof(uw));
		uw.sg_list = &usg;
		uw.num_sge = 1;
		for (k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
			uw.opcode = refused[k];
			nref += g_ops->post_send(ucqp, &uw, &ubad) == EINVAL && ubad == &uw;
		}
		uw.opcode = IBV_WR_RDMA_WRITE;
		ok(nref == 3 && g_ops->post_send(ucqp, &uw, &ubad) == 0,
		   "UC QP: READ, CMP_AND_SWP, FETCH_AND_ADD EINVAL; RDMA_WRITE posts");
		g_ops->destroy_qp(ucqp);
	}
	g_qp_cmd = qp1_cmd;	/* the data path below looks at the RC QP's rings */
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
	qx.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO;
	errno = 0;
	ok(!g_ops->create_qp_ex(ctx, &qx) && errno == EOPNOTSUPP,
	   "create_qp_ex with TSO among send_ops_flags: EOPNOTSUPP");
	qx.qp_type = IBV_QPT_UD;
	qx.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE;
	errno = 0;
	ok(!g_ops->create_qp_ex(ctx, &qx) && errno == EOPNOTSUPP,
	   "create_qp_ex UD with RDMA WRITE among send_ops_flags: EOPNOTSUPP");
	qx.qp_type = IBV_QPT_UC;
	qx.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ;
	errno = 0;
	ok(!g_ops->create_qp_ex(ctx, &qx) && errno == EOPNOTSUPP,
	   "create_qp_ex UC with RDMA READ among send_ops_flags: EOPNOTSUPP");
	qx.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	errno = 0;
	ok(!g_ops->create_qp_ex(ctx, &qx) && errno == EOPNOTSUPP,
	   "create_qp_ex UC with FETCH_AND_ADD among send_ops_flags: EOPNOTSUPP");
	qx.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	ucqp = g_ops->create_qp_ex(ctx, &qx);
	ok(ucqp && ibv_qp_to_qp_ex(ucqp)->wr_rdma_write && ibv_qp_to_qp_ex(ucqp)->wr_send_imm,
	   "create_qp_ex UC with SEND and WRITE (with and without immediate): wr_* set");
	if (ucqp)
		g_ops->destroy_qp(ucqp);
	g_qp_cmd = qp1_cmd;
	qx.qp_type = IBV_QPT_RC;
	qx.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	errno = 0;
	ok(!g_ops->create_qp_ex(ctx, &qx) && errno == EOPNOTSUPP,
	   "create_qp_ex with create flags: EOPNOTSUPP");

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

	/* UD QPs, address handles, SRQs, atomics */
	{
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 3, .max_sge = 2 } };
		struct ibv_srq_attr sattr;
		struct ext_objs o = {};
		struct ibv_ah_attr aha = { .is_global = 1, .port_num = 1 };

		g_cq_pi = 0;
		o.cq = g_ops->create_cq(ctx, 16, NULL, 0);
		ok(o.cq != NULL, "CQ for UD/SRQ/atomics");
		if (!o.cq)
			goto out;
		g_ring = (struct tern_cqe *)(uintptr_t)g_cq_cmd.buf_va;
		g_cirec = (struct tern_cq_ci_rec *)(g_ring + 16);
		g_cq_depth = 16;

		for (i = 0; i < 64; i++)
			((uint8_t *)&g_ah_path)[i] = (uint8_t)(0xc0 + i);
		g_ah_path.ip_version = 4;
		/* the kernel's path has its reserved fields and padding zero */
		g_ah_path.rsvd0 = 0;
		g_ah_path.rsvd1 = 0;
		memset((uint8_t *)&g_ah_path + offsetof(struct tern_qp_path, sl) + 1, 0,
		       offsetof(struct tern_qp_path, flow_label) -
		       offsetof(struct tern_qp_path, sl) - 1);
		o.ah = g_ops->create_ah(pd, &aha);
		ok(o.ah != NULL, "create_ah (its path is checked in the UD WQE below)");
		g_ah_no_path = 1;
		errno = 0;
		ok(!g_ops->create_ah(pd, &aha) && errno == EOPNOTSUPP,
		   "create_ah without a path from the kernel: EOPNOTSUPP");
		g_ah_no_path = 0;

		memset(&qa, 0, sizeof(qa));
		qa.send_cq = o.cq;
		qa.recv_cq = o.cq;
		qa.qp_type = IBV_QPT_UD;
		qa.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4,
					      .max_send_sge = 1, .max_recv_sge = 1 };
		o.ud = g_ops->create_qp(pd, &qa);
		o.ud_cmd = g_qp_cmd;
		ok(o.ud && g_qp_cmd.log_sq_stride == TERN_SQ_UD_MIN_LOG_STRIDE &&
		   g_qp_cmd.log_sq_depth == 2 && qa.cap.max_send_sge == 1 &&
		   qa.cap.max_inline_data == 128 - 32 - 80,
		   "UD QP: 128-byte send slots (header + tern_ud_seg + 1 SGE), inline %u",
		   qa.cap.max_inline_data);
		qa.cap.max_send_sge = 2;
		qp2 = g_ops->create_qp(pd, &qa);
		ok(qp2 && g_qp_cmd.log_sq_stride == 8, "UD QP with 2 SGEs: 256-byte slots (got %u)",
		   g_qp_cmd.log_sq_stride);
		if (qp2)
			g_ops->destroy_qp(qp2);

		o.srq = g_ops->create_srq(pd, &sa);
		o.srq_cmd = g_srq_cmd;
		ok(o.srq && g_srq_cmd.log_depth == 2 && g_srq_cmd.log_stride == 6 &&
		   g_srq_cmd.buf_va % 4096 == 0 && g_srq_cmd.buf_len >= 256 &&
		   sa.attr.max_wr == 4 && sa.attr.max_sge == 2,
		   "create_srq(3 wr, 2 sge): 4 x 64 B ring, page aligned; reports 4 wr, 2 sge");
		if (!o.srq || !o.ud)
			goto out;
		sattr.srq_limit = 2;
		ok(g_ops->modify_srq(o.srq, &sattr, IBV_SRQ_LIMIT) == 0 && g_srq_limit == 2 &&
		   g_srq_mask == IBV_SRQ_LIMIT, "modify_srq arms the limit through the kernel");
		sattr.max_wr = 8;
		ok(g_ops->modify_srq(o.srq, &sattr, IBV_SRQ_MAX_WR) == EOPNOTSUPP,
		   "modify_srq resize: EOPNOTSUPP");
		memset(&sattr, 0xff, sizeof(sattr));
		ok(g_ops->query_srq(o.srq, &sattr) == 0 && sattr.max_wr == 4 && sattr.max_sge == 2 &&
		   sattr.srq_limit == 2, "query_srq: 4 wr, 2 sge, limit 2");

		qa.qp_type = IBV_QPT_RC;
		qa.srq = o.srq;
		qa.cap = (struct ibv_qp_cap){ .max_send_wr = 2, .max_recv_wr = 4, .max_send_sge = 1,
					      .max_recv_sge = 1 };
		o.sq = g_ops->create_qp(pd, &qa);
		ok(o.sq && !g_qp_cmd.rq_va && !g_qp_cmd.rq_len && !g_qp_cmd.log_rq_depth &&
		   !g_qp_cmd.log_rq_stride && qa.cap.max_recv_wr == 0,
		   "QP on an SRQ: no RQ ring (zero RQ fields), max_recv_wr 0");
		qa.srq = NULL;
		qa.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 2, .max_send_sge = 1,
					      .max_recv_sge = 1 };
		o.rc = g_ops->create_qp(pd, &qa);
		o.rc_cmd = g_qp_cmd;
		if (!o.sq || !o.rc)
			goto out;
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = IBV_QPS_RTS;
		g_ops->modify_qp(o.ud, &attr, IBV_QP_STATE);
		g_ops->modify_qp(o.rc, &attr, IBV_QP_STATE);
		g_ops->modify_qp(o.sq, &attr, IBV_QP_STATE);

		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			no_more_syscalls();
			data_path_ext(&o);
			syscall(SYS_exit_group, 0);
		}
		waitpid(pid, &status, 0);
		ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && sh->sigsys_nr < 0,
		   "UD/SRQ/atomic data path (post_send, post_srq_recv, post_recv, poll_cq) made no "
		   "system call%s", sh->sigsys_nr >= 0 ? " -- it did: see below" : "");
		if (sh->sigsys_nr >= 0)
			ok(0, "trapped syscall number %d", sh->sigsys_nr);

		/* destroying the SRQ's QP drops its CQEs and still frees their SRQ slots */
		for (i = 0; i < 4; i++) {
			struct ibv_recv_wr r1 = { .wr_id = 50 + i }, *rb;

			if (g_ops->post_srq_recv(o.srq, &r1, &rb))
				break;
		}
		ok(i == 4, "parent: SRQ takes 4 (got %d)", i);
		dev_cqe_x(o.sq->qp_num, TERN_CQE_RECV, 0, 50, 1, 0, 0, 0);
		dev_cqe_x(o.sq->qp_num, TERN_CQE_RECV, 1, 51, 1, 0, 0, 0);
		ok(g_ops->destroy_qp(o.sq) == 0 && g_ops->poll_cq(o.cq, 8, wc) == 0,
		   "destroy_qp of the SRQ's QP drops its 2 receive CQEs");
		for (i = 0; i < 3; i++) {
			struct ibv_recv_wr r1 = { .wr_id = 60 + i }, *rb;

			if (g_ops->post_srq_recv(o.srq, &r1, &rb))
				break;
		}
		ok(i == 2, "the 2 dropped receive CQEs freed 2 SRQ slots (posted %d)", i);
		ok(g_ops->destroy_qp(o.ud) == 0 && g_ops->destroy_qp(o.rc) == 0 &&
		   g_ops->destroy_srq(o.srq) == 0 && g_ops->destroy_ah(o.ah) == 0 &&
		   g_ops->destroy_cq(o.cq) == 0, "destroy UD QP, RC QP, SRQ, AH, CQ");
	}
	/* extended CQs */
	{
		struct ibv_cq_init_attr_ex ca = { .cqe = 5, .wc_flags = IBV_WC_STANDARD_FLAGS,
						  .comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
						  .flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED };
		struct ibv_cq_ex *cx;

		ok(g_ops->create_cq_ex != NULL, "create_cq_ex is offered");
		if (!g_ops->create_cq_ex)
			goto out;
		ca.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
		errno = 0;
		ok(!g_ops->create_cq_ex(ctx, &ca) && errno == EOPNOTSUPP,
		   "create_cq_ex with completion timestamps: EOPNOTSUPP");
		ca.wc_flags = IBV_WC_STANDARD_FLAGS;
		ca.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
		errno = 0;
		ok(!g_ops->create_cq_ex(ctx, &ca) && errno == EOPNOTSUPP,
		   "create_cq_ex ignoring overruns: EOPNOTSUPP");
		ca.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
		ca.comp_mask |= IBV_CQ_INIT_ATTR_MASK_PD;
		errno = 0;
		ok(!g_ops->create_cq_ex(ctx, &ca) && errno == EOPNOTSUPP,
		   "create_cq_ex with a parent domain: EOPNOTSUPP");
		ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
		g_cq_pi = 0;
		cx = g_ops->create_cq_ex(ctx, &ca);
		ok(cx && g_cq_cmd.log_depth == 3 && ibv_cq_ex_to_cq(cx)->cqe == 8 &&
		   cx->read_byte_len && cx->read_imm_data && cx->read_qp_num && cx->read_src_qp &&
		   cx->read_sl && cx->read_slid && cx->read_dlid_path_bits,
		   "create_cq_ex(5, standard flags): 8 entries, every standard reader set");
		if (!cx)
			goto out;
		g_ring = (struct tern_cqe *)(uintptr_t)g_cq_cmd.buf_va;
		g_cirec = (struct tern_cq_ci_rec *)(g_ring + 8);
		g_cq_depth = 8;
		memset(&qx, 0, sizeof(qx));
		qx.send_cq = ibv_cq_ex_to_cq(cx);
		qx.recv_cq = ibv_cq_ex_to_cq(cx);
		qx.qp_type = IBV_QPT_RC;
		qx.cap = (struct ibv_qp_cap){ .max_send_wr = 8, .max_recv_wr = 4,
					      .max_send_sge = 2, .max_recv_sge = 1,
					      .max_inline_data = 16 };
		qx.pd = pd;
		qx.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qx.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				    IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
		qp2 = g_ops->create_qp_ex(ctx, &qx);
		qp1_cmd = g_qp_cmd;
		ok(qp2 && ibv_qp_to_qp_ex(qp2) && ibv_qp_to_qp_ex(qp2)->wr_start &&
		   ibv_qp_to_qp_ex(qp2)->wr_atomic_fetch_add && ibv_qp_to_qp_ex(qp2)->wr_send_imm &&
		   !ibv_qp_to_qp_ex(qp2)->wr_send_inv && !ibv_qp_to_qp_ex(qp2)->wr_set_ud_addr,
		   "RC QP with every send op the device has (create_qp_ex) on the extended CQ: "
		   "the ibv_wr_* calls set, none it lacks");
		if (!qp2)
			goto out;
		attr.qp_state = IBV_QPS_RTS;
		g_ops->modify_qp(qp2, &attr, IBV_QP_STATE);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			no_more_syscalls();
			data_path_cq_ex(qp2, cx);
			data_path_wr(qp2, &qp1_cmd);
			syscall(SYS_exit_group, 0);
		}
		waitpid(pid, &status, 0);
		ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && sh->sigsys_nr < 0,
		   "extended CQ polling (start_poll, next_poll, read_*, end_poll) and the ibv_wr_* "
		   "calls made no system call%s", sh->sigsys_nr >= 0 ? " -- it did: see below" : "");
		if (sh->sigsys_nr >= 0)
			ok(0, "trapped syscall number %d", sh->sigsys_nr);
		/* resize_cq: unpolled CQEs survive in order; too small or too large: EINVAL */
		{
			struct ibv_cq *rcq = ibv_cq_ex_to_cq(cx);
			struct ibv_wc rw[8];
			int n;

			g_cq_pi = le32toh(g_cirec->ci);	/* what the child polled is consumed */
			dev_cqe(qp2->qp_num, TERN_CQE_RECV, 0, 801, TERN_CQE_OK, 1, 0, 0);
			dev_cqe(qp2->qp_num, TERN_CQE_RECV, 1, 802, TERN_CQE_OK, 2, 0, 0);
			dev_cqe(qp2->qp_num, TERN_CQE_RECV, 2, 803, TERN_CQE_OK, 3, 0, 0);
			n = g_ops->poll_cq(rcq, 1, rw);
			ok(n == 1 && rw[0].wr_id == 801, "resize: one of 3 CQEs polled before");
			ok(g_ops->resize_cq(rcq, 20) == 0 && g_resize_calls == 1 && rcq->cqe == 32 &&
			   g_cq_depth == 32, "resize_cq(20): a 32-entry ring, through the kernel");
			n = g_ops->poll_cq(rcq, 8, rw);
			ok(n == 2 && rw[0].wr_id == 802 && rw[1].wr_id == 803 && rw[1].byte_len == 3,
			   "resize: the 2 unpolled CQEs come out of the new ring, in order (%d)", n);
			dev_cqe(qp2->qp_num, TERN_CQE_RECV, 3, 804, TERN_CQE_OK, 4, 0, 0);
			n = g_ops->poll_cq(rcq, 8, rw);
			ok(n == 1 && rw[0].wr_id == 804 && le32toh(g_cirec->ci) == 3,
			   "resize: the next CQE follows them; CI record of the new ring is 3");
			dev_cqe(qp2->qp_num, TERN_CQE_RECV, 4, 805, TERN_CQE_OK, 5, 0, 0);
			dev_cqe(qp2->qp_num, TERN_CQE_RECV, 5, 806, TERN_CQE_OK, 6, 0, 0);
			dev_cqe(qp2->qp_num, TERN_CQE_RECV, 6, 807, TERN_CQE_OK, 7, 0, 0);
			ok(g_ops->resize_cq(rcq, 2) == EINVAL && rcq->cqe == 32 && g_cq_depth == 32,
			   "resize_cq(2) with 3 CQEs outstanding: EINVAL, the CQ unchanged");
			errno = 0;
			ok(g_ops->resize_cq(rcq, 1 << 13) == EINVAL && rcq->cqe == 32,
			   "resize_cq above max_cq_log_depth: EINVAL");
			n = g_ops->poll_cq(rcq, 8, rw);
			ok(n == 3 && rw[0].wr_id == 805 && rw[2].wr_id == 807,
			   "after the refused resizes the 3 CQEs poll as before");
		}
		/* a UD QP through ibv_wr_*: the AH's path, QPN and Q_Key in the WQE */
		{
			struct ibv_ah_attr aha = { .is_global = 1, .port_num = 1 };
			struct ibv_ah *ah = g_ops->create_ah(pd, &aha);
			struct ibv_qp *ud;
			struct ibv_qp_ex *ux;
			struct tern_sq_wqe *w;
			struct tern_ud_seg *us;
			struct tern_sge *se;

			qx.qp_type = IBV_QPT_UD;
			qx.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4,
						      .max_send_sge = 1, .max_recv_sge = 1 };
			qx.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
			ud = g_ops->create_qp_ex(ctx, &qx);
			ux = ud ? ibv_qp_to_qp_ex(ud) : NULL;
			ok(ah && ux && ux->wr_set_ud_addr && !ux->wr_rdma_write,
			   "UD QP with send_ops_flags: wr_set_ud_addr set, no RDMA calls");
			if (!ah || !ux)
				goto out;
			g_ops->modify_qp(ud, &attr, IBV_QP_STATE);
			ibv_wr_start(ux);
			ux->wr_id = 77;
			ux->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_send_imm(ux, htobe32(0x1234));
			ibv_wr_set_ud_addr(ux, ah, 0xabcde, 0x11111111);
			ibv_wr_set_sge(ux, 0x55, 0x7000, 99);
			ok(ibv_wr_complete(ux) == 0 &&
			   g_uar[TERN_UDB_SQ / 8] == (ud->qp_num | 1ull << 32),
			   "UD wr_complete: 0, doorbell PI 1");
			w = ring_slot(g_qp_cmd.sq_va, g_qp_cmd.log_sq_depth, g_qp_cmd.log_sq_stride, 0);
			us = (struct tern_ud_seg *)(w + 1);
			se = (struct tern_sge *)(us + 1);
			ok(w->opcode == TERN_WQE_SEND_IMM && le64toh(w->wr_id) == 77 &&
			   w->imm_data == htobe32(0x1234) && le32toh(us->dest_qpn) == 0xabcde &&
			   le32toh(us->qkey) == 0x11111111 &&
			   !memcmp(&us->path, &g_ah_path, sizeof(us->path)) &&
			   le32toh(se->length) == 99 && le32toh(se->lkey) == 0x55,
			   "UD WQE from ibv_wr_*: SEND_IMM, the AH's path, dest QPN, Q_Key, SGE");
			ibv_wr_start(ux);
			ibv_wr_send(ux);
			ibv_wr_set_sge(ux, 0x55, 0x7000, 99);
			ok(ibv_wr_complete(ux) == EINVAL &&
			   g_uar[TERN_UDB_SQ / 8] == (ud->qp_num | 1ull << 32),
			   "UD send without ibv_wr_set_ud_addr: EINVAL, nothing posted");
			g_ops->destroy_qp(ud);
			g_ops->destroy_ah(ah);
		}
		ok(g_ops->destroy_qp(qp2) == 0 && g_ops->destroy_cq(ibv_cq_ex_to_cq(cx)) == 0,
		   "destroy the QP and the extended CQ");
	}
	cq2 = g_ops->create_cq(ctx, 1, NULL, 0);
	ok(cq2 && g_cq_cmd.log_depth == 1, "create_cq(1): 2 entries");
	if (cq2)
		g_ops->destroy_cq(cq2);
	g_ops->dealloc_pd(pd);
	g_ops->free_context(ctx);

	/* a kernel that offers doorbell records: receives are posted through them */
	{
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
		struct ibv_recv_wr r2[2] = {
			{ .wr_id = 1, .next = &r2[1] }, { .wr_id = 2 },
		};
		struct tern_wq_db_rec *rec, *srec;
		struct ibv_srq *srq;
		uint64_t rqdb;

		g_uctx_caps = TERN_UCTX_CAP_DB_REC;
		vctx = g_dev_ops->alloc_context(&vdev->device, memfd, NULL);
		ok(vctx != NULL, "records: alloc_context");
		if (!vctx)
			goto out;
		ctx = &vctx->context;
		pd = g_ops->alloc_pd(ctx);
		g_cq_pi = 0;
		cq = g_ops->create_cq(ctx, 16, NULL, 0);
		if (!cq)
			goto out;
		g_ring = (struct tern_cqe *)(uintptr_t)g_cq_cmd.buf_va;
		g_cirec = (struct tern_cq_ci_rec *)(g_ring + 16);
		g_cq_depth = 16;
		memset(&qa, 0, sizeof(qa));
		qa.send_cq = cq;
		qa.recv_cq = cq;
		qa.qp_type = IBV_QPT_RC;
		qa.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4,
					      .max_send_sge = 1, .max_recv_sge = 1 };
		qp = g_ops->create_qp(pd, &qa);
		ok(qp && g_qp_cmd.flags == TERN_CREATE_QP_F_RQ_DB_REC &&
		   g_qp_cmd.rq_len >= (1u << (g_qp_cmd.log_rq_depth + g_qp_cmd.log_rq_stride)) +
				      sizeof(struct tern_wq_db_rec),
		   "records: create_qp asks for the RQ record, the buffer holds it after the ring");
		if (!qp)
			goto out;
		rec = (struct tern_wq_db_rec *)(uintptr_t)(g_qp_cmd.rq_va +
			(1u << (g_qp_cmd.log_rq_depth + g_qp_cmd.log_rq_stride)));
		attr.qp_state = IBV_QPS_RTS;
		g_ops->modify_qp(qp, &attr, IBV_QP_STATE);
		rqdb = g_uar[TERN_UDB_RQ / 8];
		ok(g_ops->post_recv(qp, r2, &rbad) == 0 && le16toh(rec->pi) == 2 &&
		   g_uar[TERN_UDB_RQ / 8] == rqdb,
		   "records: post_recv of 2 writes record PI 2 and no RQ doorbell");
		/* an error completion: the QP is in ERR, from now on receives ring as well */
		dev_cqe(qp->qp_num, TERN_WQE_SEND, 0, 9, TERN_CQE_REM_ACCESS_ERR, 0, 0, 0);
		n = g_ops->poll_cq(cq, 8, wc);
		ok(n == 1 && wc[0].status == IBV_WC_REM_ACCESS_ERR &&
		   g_uar[TERN_UDB_RQ / 8] == qp->qp_num,
		   "records: an error completion rings the RQ doorbell once (got %#llx)",
		   (unsigned long long)g_uar[TERN_UDB_RQ / 8]);
		r2[1].next = NULL;
		ok(g_ops->post_recv(qp, &r2[1], &rbad) == 0 && le16toh(rec->pi) == 3 &&
		   g_uar[TERN_UDB_RQ / 8] == (qp->qp_num | 3ull << 32),
		   "records: after it post_recv writes the record and rings (PI 3)");
		attr.qp_state = IBV_QPS_RESET;
		g_ops->modify_qp(qp, &attr, IBV_QP_STATE);
		attr.qp_state = IBV_QPS_RTS;
		g_ops->modify_qp(qp, &attr, IBV_QP_STATE);
		rqdb = g_uar[TERN_UDB_RQ / 8];
		ok(le16toh(rec->pi) == 0 && g_ops->post_recv(qp, &r2[1], &rbad) == 0 &&
		   le16toh(rec->pi) == 1 && g_uar[TERN_UDB_RQ / 8] == rqdb,
		   "records: RESET zeroes the record and posting stops ringing");
		srq = g_ops->create_srq(pd, &sa);
		ok(srq && g_srq_cmd.flags == TERN_CREATE_SRQ_F_DB_REC &&
		   g_srq_cmd.buf_len >= (1u << (g_srq_cmd.log_depth + g_srq_cmd.log_stride)) +
					sizeof(struct tern_wq_db_rec),
		   "records: create_srq asks for the record, the buffer holds it after the ring");
		if (srq) {
			uint64_t srqdb = g_uar[TERN_UDB_SRQ / 8];

			srec = (struct tern_wq_db_rec *)(uintptr_t)(g_srq_cmd.buf_va +
				(1u << (g_srq_cmd.log_depth + g_srq_cmd.log_stride)));
			r2[1].next = NULL;
			ok(g_ops->post_srq_recv(srq, r2, &rbad) == 0 && le16toh(srec->pi) == 2 &&
			   g_uar[TERN_UDB_SRQ / 8] == srqdb,
			   "records: post_srq_recv writes record PI 2 and no SRQ doorbell");
			g_ops->destroy_srq(srq);
		}
		g_ops->destroy_qp(qp);
		g_ops->destroy_cq(cq);
		g_ops->dealloc_pd(pd);
		g_ops->free_context(ctx);
		g_uctx_caps = 0;
	}
	/* completion timestamps (TERN_UCTX_CAP_CQE_TS) and the device clock page */
	{
		struct ibv_cq_init_attr_ex ca = { .cqe = 4, .wc_flags = IBV_WC_STANDARD_FLAGS |
						  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP };
		struct ibv_recv_wr r2[2] = {
			{ .wr_id = 1, .next = &r2[1] }, { .wr_id = 2 },
		};
		struct ibv_poll_cq_attr pa = {};
		struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
		struct tern_cqe_ts *ring;
		uint64_t ts[2] = { 0, 0 }, *clk;
		struct ibv_cq_ex *cx;
		unsigned int k;

		g_uctx_caps = TERN_UCTX_CAP_CQE_TS;
		vctx = g_dev_ops->alloc_context(&vdev->device, memfd, NULL);
		ok(vctx != NULL, "timestamps: alloc_context");
		if (!vctx)
			goto out;
		ctx = &vctx->context;
		clk = mmap(NULL, TERN_CLOCK_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd,
			   TERN_DB_PAGE_SIZE);
		if (clk == MAP_FAILED)
			goto out;
		clk[(TERN_REG_CLOCK_LO - TERN_CLOCK_PAGE) / 8] = htole64(12345678901234ull);
		ok(g_ops->query_rt_values && !g_ops->query_rt_values(ctx, &v) &&
		   v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK && v.raw_clock.tv_sec == 12345 &&
		   v.raw_clock.tv_nsec == 678901234,
		   "timestamps: query_rt_values reads the clock page: 12345.678901234 s");
		pd = g_ops->alloc_pd(ctx);
		ca.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
		errno = 0;
		ok(!g_ops->create_cq_ex(ctx, &ca) && errno == EOPNOTSUPP,
		   "timestamps: create_cq_ex with WALLCLOCK: EOPNOTSUPP");
		ca.wc_flags &= ~(uint64_t)IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
		cx = g_ops->create_cq_ex(ctx, &ca);
		ok(cx && cx->read_completion_ts && g_cq_cmd.flags == TERN_CREATE_CQ_F_TIMESTAMP &&
		   g_cq_cmd.log_depth == 2 && g_cq_cmd.buf_len >= 4 * 64 + 8,
		   "timestamps: create_cq_ex asks for 64-byte CQEs, the buffer holds 4 and the "
		   "record");
		if (!cx || !pd)
			goto out;
		ring = (struct tern_cqe_ts *)(uintptr_t)g_cq_cmd.buf_va;
		memset(&qa, 0, sizeof(qa));
		qa.send_cq = ibv_cq_ex_to_cq(cx);
		qa.recv_cq = ibv_cq_ex_to_cq(cx);
		qa.qp_type = IBV_QPT_RC;
		qa.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4,
					      .max_send_sge = 1, .max_recv_sge = 1 };
		qp = g_ops->create_qp(pd, &qa);
		if (!qp)
			goto out;
		attr.qp_state = IBV_QPS_RTS;
		g_ops->modify_qp(qp, &attr, IBV_QP_STATE);
		g_ops->post_recv(qp, r2, &rbad);
		/* the device's two receive completions, 64 bytes each, stamped */
		for (k = 0; k < 2; k++) {
			memset(&ring[k], 0, sizeof(ring[k]));
			ring[k].cqe.wr_id = htole64(k + 1);
			ring[k].cqe.qpn = htole32(qp->qp_num);
			ring[k].cqe.wqe_idx = htole16(k);
			ring[k].cqe.opcode = TERN_CQE_RECV;
			ring[k].timestamp = htole64(1000000000ull + 777 * k);
			__atomic_store_n(&ring[k].cqe.flags, (uint8_t)TERN_CQE_F_PHASE,
					 __ATOMIC_RELEASE);
		}
		k = 0;
		if (!ibv_start_poll(cx, &pa)) {
			do {
				if (k < 2 && cx->wr_id == k + 1)
					ts[k] = ibv_wc_read_completion_ts(cx);
				k++;
			} while (!ibv_next_poll(cx));
			ibv_end_poll(cx);
		}
		ok(k == 2 && ts[0] == 1000000000ull && ts[1] == 1000000777ull,
		   "timestamps: two 64-byte CQEs polled, ibv_wc_read_completion_ts gives their "
		   "stamps (got %u: %llu, %llu)", k, (unsigned long long)ts[0],
		   (unsigned long long)ts[1]);
		g_ops->destroy_qp(qp);
		g_ops->destroy_cq(ibv_cq_ex_to_cq(cx));
		g_ops->dealloc_pd(pd);
		g_ops->free_context(ctx);
		munmap(clk, TERN_CLOCK_PAGE_SIZE);
		g_uctx_caps = 0;
	}
	/* ECE: the offer from create_qp, what set_ece refuses and agrees, what modify_qp passes */
	{
		struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { .max_send_wr = 4,
			.max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
		struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT };
		struct ibv_ece e = {}, q = {};
		struct verbs_context *vctx;
		struct ibv_context *ctx;
		struct ibv_qp *qp, *qp0;
		struct ibv_pd *pd;
		struct ibv_cq *cq;
		int calls, rc, bad = 0;

		vctx = g_dev_ops->alloc_context(&vdev->device, memfd, NULL);
		ok(vctx != NULL, "ece: alloc_context");
		if (!vctx)
			goto out;
		ctx = &vctx->context;
		pd = g_ops->alloc_pd(ctx);
		g_cq_pi = 0;
		cq = g_ops->create_cq(ctx, 16, NULL, 0);
		if (!pd || !cq)
			goto out;
		qa.send_cq = qa.recv_cq = cq;
		g_qp_ece_offer = TERN_ECE_SR | 8u << TERN_ECE_SR_LOG_CAP_SHIFT;
		qp = g_ops->create_qp(pd, &qa);
		g_qp_ece_offer = 0;
		qp0 = g_ops->create_qp(pd, &qa);
		if (!qp || !qp0)
			goto out;
		rc = g_ops->query_ece(qp, &q);
		ok(!rc && q.vendor_id == TERN_ECE_VENDOR_ID &&
		   q.options == 0x81 && !q.comp_mask,
		   "ece: query_ece gives the offer of create_qp's response (%#x %#x)", q.vendor_id,
		   q.options);
		e = (struct ibv_ece){ .vendor_id = TERN_ECE_VENDOR_ID, .options = 1, .comp_mask = 1 };
		bad += g_ops->set_ece(qp, &e) == EINVAL;
		e = (struct ibv_ece){ .vendor_id = 0x15b3, .options = 1 };
		bad += g_ops->set_ece(qp, &e) == EINVAL;
		e = (struct ibv_ece){ .vendor_id = TERN_ECE_VENDOR_ID, .options = 1u << 16 };
		bad += g_ops->set_ece(qp, &e) == EINVAL;
		e.options = TERN_ECE_SR | 9u << TERN_ECE_SR_LOG_CAP_SHIFT;
		bad += g_ops->set_ece(qp, &e) == EINVAL;
		e.options = TERN_ECE_SR | 3u << TERN_ECE_SR_LOG_CAP_SHIFT;
		bad += g_ops->set_ece(qp, &e) == EINVAL;
		e.options = 6u << TERN_ECE_SR_LOG_CAP_SHIFT;
		bad += g_ops->set_ece(qp, &e) == EINVAL;
		rc = g_ops->query_ece(qp, &q);
		ok(bad == 6 && !rc && q.options == 0x81,
		   "ece: set_ece refuses a comp_mask, another vendor, an unknown bit, caps 9 and 3 "
		   "and a cap without SR (EINVAL: %d of 6), the offer unchanged", bad);
		calls = g_modify_ex_calls;
		g_ops->modify_qp(qp, &attr, IBV_QP_STATE);
		ok(g_modify_ex_calls == calls, "ece: modify_qp before set_ece: the plain command");
		e.options = TERN_ECE_SR | 4u << TERN_ECE_SR_LOG_CAP_SHIFT;
		rc = g_ops->set_ece(qp, &e) || g_ops->query_ece(qp, &q);
		ok(!rc && q.options == 0x41,
		   "ece: the peer offers SR with cap 2^4: agreed SR, the smaller cap (%#x)",
		   q.options);
		e.options = TERN_ECE_SR;
		rc = g_ops->set_ece(qp, &e) || g_ops->query_ece(qp, &q);
		ok(!rc && q.options == 0x81,
		   "ece: a peer's SR without a cap takes this side's (%#x)", q.options);
		e.options = 0;
		rc = g_ops->set_ece(qp, &e) || g_ops->query_ece(qp, &q);
		ok(!rc && q.options == 0,
		   "ece: a peer that offers nothing: nothing agreed (%#x)", q.options);
		e.options = TERN_ECE_SR | 4u << TERN_ECE_SR_LOG_CAP_SHIFT;
		g_ops->set_ece(qp, &e);
		attr.qp_state = IBV_QPS_RTR;
		g_ops->modify_qp(qp, &attr, IBV_QP_STATE);
		ok(g_modify_ex_calls == calls + 1 && g_modify_ece == 0x41,
		   "ece: modify_qp then passes the agreed options in the extended command (%#x)",
		   g_modify_ece);
		e.options = TERN_ECE_SR;
		ok(g_ops->set_ece(qp, &e) == EINVAL, "ece: set_ece on a QP past INIT: EINVAL (the "
		   "transport is fixed at RTR)");
		attr.qp_state = IBV_QPS_RESET;
		g_ops->modify_qp(qp, &attr, IBV_QP_STATE);
		rc = g_ops->query_ece(qp, &q);
		ok(!rc && q.options == 0x81, "ece: after RESET the QP offers again (%#x)", q.options);
		attr.qp_state = IBV_QPS_INIT;
		g_ops->modify_qp(qp, &attr, IBV_QP_STATE);
		attr.qp_state = IBV_QPS_RTR;
		g_ops->modify_qp(qp, &attr, IBV_QP_STATE);
		rc = g_ops->query_ece(qp, &q);
		ok(!rc && q.options == 0, "ece: a QP that reached RTR without set_ece agreed on "
		   "nothing (%#x)", q.options);
		e.options = TERN_ECE_SR | 8u << TERN_ECE_SR_LOG_CAP_SHIFT;
		ok(!g_ops->query_ece(qp0, &q) && q.options == 0 && !g_ops->set_ece(qp0, &e) &&
		   !g_ops->query_ece(qp0, &q) && q.options == 0,
		   "ece: a QP that offers nothing agrees on nothing whatever the peer offers");
		g_ops->destroy_qp(qp);
		g_ops->destroy_qp(qp0);
		g_ops->destroy_cq(cq);
		g_ops->dealloc_pd(pd);
		g_ops->free_context(ctx);
	}
	g_dev_ops->uninit_device(vdev);
out:
	for (i = 0; i < sh->n; i++)
		printf("%s %d - %s\n", sh->r[i].ok ? "ok" : "not ok", i + 1, sh->r[i].desc);
	printf("1..%d\n", sh->n);
	for (i = 0, n = 0; i < sh->n; i++)
		n += !sh->r[i].ok;
	return n ? 1 : 0;
}
