// SPDX-License-Identifier: GPL-2.0
/* Shared pieces of tern's RDMA test programs (see common.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

int checks_run, checks_failed;

void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(2);
}

int check(int cond, const char *fmt, ...)
{
	va_list ap;

	checks_run++;
	if (!cond)
		checks_failed++;
	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* --- out-of-band channel ---------------------------------------------------------------- */

static void sock_opts(int fd)
{
	struct timeval tv = { .tv_sec = 120 };	/* no exchange may hang forever */
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int oob_listen(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		die("socket: %m");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1))
		die("listen on TCP port %d: %m", port);
	return fd;
}

int oob_accept(int lfd, int timeout_s)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	int fd;

	if (poll(&p, 1, timeout_s * 1000) != 1)
		die("no client connected within %d s", timeout_s);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept: %m");
	sock_opts(fd);
	return fd;
}

int oob_connect(const char *host, int port, int timeout_s)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	char service[16];
	long end = now_ms() + timeout_s * 1000L;
	int fd, rc;

	snprintf(service, sizeof(service), "%d", port);
	rc = getaddrinfo(host, service, &hints, &ai);
	if (rc)
		die("%s: %s", host, gai_strerror(rc));
	for (;;) {	/* the server may not listen yet */
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			die("socket: %m");
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		close(fd);
		if (now_ms() > end)
			die("cannot connect to %s:%d within %d s: %m", host, port, timeout_s);
		usleep(100000);
	}
	freeaddrinfo(ai);
	sock_opts(fd);
	return fd;
}

void oob_send(int fd, const char *fmt, ...)
{
	char buf[MSG_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(buf) - 1)
		die("message too long");
	buf[n++] = '\n';
	if (write(fd, buf, n) != n)
		die("out-of-band send: %m");
}

int oob_recv(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, 1);

		if (r <= 0)
			return -1;
		if (buf[n] == '\n') {
			buf[n] = 0;
			return 0;
		}
		n++;
	}
	return -1;
}

void oob_expect(int fd, char *buf, size_t len, const char *expect)
{
	if (oob_recv(fd, buf, len))
		die("peer went away (or said nothing for 120 s) while waiting for '%s'", expect);
	if (strncmp(buf, expect, strlen(expect)))
		die("expected '%s' from the peer, got '%s'", expect, buf);
}

/* --- verbs ---------------------------------------------------------------------------- */

void dev_open(struct dev *d, const char *name, int port, int gid_index)
{
	struct ibv_device **list;
	int i, n;

	memset(d, 0, sizeof(*d));
	list = ibv_get_device_list(&n);
	if (!list || !n)
		die("no RDMA device (ibv_get_device_list: %m)");
	for (i = 0; i < n; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (i == n)
		die("RDMA device %s not found", name);
	d->ctx = ibv_open_device(list[i]);
	if (!d->ctx)
		die("ibv_open_device(%s): %m", ibv_get_device_name(list[i]));
	ibv_free_device_list(list);
	if (ibv_query_device(d->ctx, &d->attr))
		die("ibv_query_device: %m");
	d->port = port;
	if (ibv_query_port(d->ctx, port, &d->port_attr))
		die("ibv_query_port: %m");
	if (d->port_attr.state != IBV_PORT_ACTIVE)
		die("port %d is %s, not ACTIVE", port, ibv_port_state_str(d->port_attr.state));
	d->gid_index = gid_index;
	if (ibv_query_gid(d->ctx, port, gid_index, &d->gid))
		die("ibv_query_gid(%d): %m", gid_index);
}

struct ibv_qp *qp_create(struct dev *d, struct ibv_pd *pd, struct ibv_cq *cq,
			 const struct qp_opts *o)
{
	enum ibv_qp_type type = qp_type_uc ? IBV_QPT_UC : IBV_QPT_RC;
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = {
			.max_send_wr = o->max_send_wr, .max_recv_wr = o->max_recv_wr,
			.max_send_sge = o->max_send_sge, .max_recv_sge = o->max_recv_sge,
		},
	};
	struct ibv_qp_init_attr_ex ix = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type, .cap = ia.cap, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_READ,
	};
	struct ibv_qp *qp;

	if (qp_type_uc)
		ix.send_ops_flags &= ~(uint64_t)IBV_QP_EX_WITH_RDMA_READ;
	if (wr_mode) {
		if (d->attr.atomic_cap != IBV_ATOMIC_NONE && !qp_type_uc)
			ix.send_ops_flags |= IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
					     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
		qp = ibv_create_qp_ex(d->ctx, &ix);
		if (!qp)
			die("ibv_create_qp_ex with send_ops_flags %#" PRIx64 " (wr %d/%d, "
			    "sge %d/%d): %m", ix.send_ops_flags, o->max_send_wr, o->max_recv_wr,
			    o->max_send_sge, o->max_recv_sge);
		if (!ibv_qp_to_qp_ex(qp))
			die("ibv_create_qp_ex with send_ops_flags made a QP without ibv_qp_ex");
		return qp;
	}
	qp = ibv_create_qp(pd, &ia);
	if (!qp)
		die("ibv_create_qp %s (wr %d/%d, sge %d/%d): %m", qp_type_uc ? "UC" : "RC",
		    o->max_send_wr, o->max_recv_wr, o->max_send_sge, o->max_recv_sge);
	return qp;
}

int qp_type_uc;

int qp_connect(struct dev *d, struct ibv_qp *qp, const struct qp_opts *o,
	       const struct qp_dest *local, const struct qp_dest *remote)
{
	struct ibv_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = d->port;
	a.pkey_index = 0;
	a.qp_access_flags = o->access ? o->access : IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE | (qp_type_uc ? 0 : IBV_ACCESS_REMOTE_READ);
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			   IBV_QP_ACCESS_FLAGS);
	if (rc) {
		fprintf(stderr, "modify_qp to INIT: %s\n", strerror(rc));
		return rc;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = d->port_attr.active_mtu;
	a.dest_qp_num = remote->qpn;
	a.rq_psn = remote->psn;
	a.max_dest_rd_atomic = d->attr.max_qp_rd_atom < 16 ? d->attr.max_qp_rd_atom : 16;
	a.min_rnr_timer = o->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = remote->gid;
	a.ah_attr.grh.sgid_index = d->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = d->port;
	/* UC: no reads, no RNR NAKs, no ACKs: none of their attributes */
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			   IBV_QP_RQ_PSN | (qp_type_uc ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC |
					    IBV_QP_MIN_RNR_TIMER));
	if (rc) {
		fprintf(stderr, "modify_qp to RTR: %s\n", strerror(rc));
		return rc;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = local->psn;
	a.timeout = o->timeout;
	a.retry_cnt = 7;
	a.rnr_retry = o->rnr_retry;
	a.max_rd_atomic = d->attr.max_qp_init_rd_atom < 16 ? d->attr.max_qp_init_rd_atom : 16;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			   (qp_type_uc ? 0 : IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC));
	if (rc)
		fprintf(stderr, "modify_qp to RTS: %s\n", strerror(rc));
	return rc;
}

void dest_format(const struct qp_dest *q, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%u %u ", q->qpn, q->psn);

	for (int i = 0; i < 16 && n + 2 < (int)len; i++)
		n += snprintf(buf + n, len - n, "%02x", q->gid.raw[i]);
}

int dest_parse(const char *s, struct qp_dest *q)
{
	char hex[33];
	unsigned int b;

	if (sscanf(s, "%u %u %32s", &q->qpn, &q->psn, hex) != 3 || strlen(hex) != 32)
		return -1;
	for (int i = 0; i < 16; i++) {
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -1;
		q->gid.raw[i] = b;
	}
	return 0;
}

int ece_exchange = 1;

int qp_exchange_connect(struct dev *d, struct ibv_qp *qp, const struct qp_opts *o, int fd,
			int is_server)
{
	struct qp_dest local = { .qpn = qp->qp_num, .gid = d->gid }, remote;
	char line[MSG_MAX], mine[192];
	struct ibv_ece ece = {};
	const char *theirs;
	int have_ece = ece_exchange && !ibv_query_ece(qp, &ece);
	int rc;

	local.psn = (uint32_t)(rand() & 0xffffff);
	dest_format(&local, mine, sizeof(mine));
	if (have_ece)
		snprintf(mine + strlen(mine), sizeof(mine) - strlen(mine), " ece %x %x",
			 ece.vendor_id, ece.options);
	if (is_server) {
		oob_expect(fd, line, sizeof(line), "QP ");
		oob_send(fd, "QP %s", mine);
	} else {
		oob_send(fd, "QP %s", mine);
		oob_expect(fd, line, sizeof(line), "QP ");
	}
	if (dest_parse(line + 3, &remote))
		die("bad QP line from the peer: %s", line);
	/* both have ECE: the peer's offer, as librdmacm passes it from a connection request */
	theirs = strstr(line, " ece ");
	if (have_ece && theirs &&
	    sscanf(theirs, " ece %x %x", &ece.vendor_id, &ece.options) == 2) {
		ece.comp_mask = 0;
		rc = ibv_set_ece(qp, &ece);
		if (rc && rc != EOPNOTSUPP && rc != EINVAL) {
			fprintf(stderr, "ibv_set_ece: %s\n", strerror(rc));
			return rc;
		}
	}
	return qp_connect(d, qp, o, &local, &remote);
}

enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

const char *qp_state_str(int state)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	if (state >= 0 && state < (int)(sizeof(names) / sizeof(names[0])))
		return names[state];
	return "(ibv_query_qp failed)";
}

int wr_mode;

/* WRs first..end (exclusive) in one ibv_wr_start/ibv_wr_complete batch. */
static int wr_batch(struct ibv_qp_ex *qpx, struct ibv_send_wr *wr, struct ibv_send_wr *end)
{
	struct ibv_data_buf bufs[64];

	ibv_wr_start(qpx);
	for (; wr != end; wr = wr->next) {
		qpx->wr_id = wr->wr_id;
		qpx->wr_flags = wr->send_flags & ~IBV_SEND_INLINE;
		switch (wr->opcode) {
		case IBV_WR_SEND:
			ibv_wr_send(qpx);
			break;
		case IBV_WR_SEND_WITH_IMM:
			ibv_wr_send_imm(qpx, wr->imm_data);
			break;
		case IBV_WR_RDMA_WRITE:
			ibv_wr_rdma_write(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
			break;
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			ibv_wr_rdma_write_imm(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr,
					      wr->imm_data);
			break;
		case IBV_WR_RDMA_READ:
			ibv_wr_rdma_read(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
			ibv_wr_atomic_cmp_swp(qpx, wr->wr.atomic.rkey, wr->wr.atomic.remote_addr,
					      wr->wr.atomic.compare_add, wr->wr.atomic.swap);
			break;
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			ibv_wr_atomic_fetch_add(qpx, wr->wr.atomic.rkey, wr->wr.atomic.remote_addr,
						wr->wr.atomic.compare_add);
			break;
		default:
			die("post_wrs: opcode %d has no ibv_wr_* call here", wr->opcode);
		}
		if (qpx->qp_base.qp_type == IBV_QPT_UD)
			ibv_wr_set_ud_addr(qpx, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
					   wr->wr.ud.remote_qkey);
		if (wr->send_flags & IBV_SEND_INLINE) {
			if (wr->num_sge < 0 || wr->num_sge > 64)
				die("post_wrs: %d inline pieces", wr->num_sge);
			for (int i = 0; i < wr->num_sge; i++) {
				bufs[i].addr = (void *)(uintptr_t)wr->sg_list[i].addr;
				bufs[i].length = wr->sg_list[i].length;
			}
			ibv_wr_set_inline_data_list(qpx, wr->num_sge, bufs);
		} else {
			ibv_wr_set_sge_list(qpx, wr->num_sge < 0 ? 0 : (size_t)wr->num_sge,
					    wr->sg_list);
		}
	}
	return ibv_wr_complete(qpx);
}

int post_wrs(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct ibv_qp_ex *qpx = wr_mode ? ibv_qp_to_qp_ex(qp) : NULL;
	int ret;

	if (!qpx)
		return ibv_post_send(qp, wr, bad);
	ret = wr_batch(qpx, wr, NULL);
	if (!ret)
		return 0;
	/* refused, nothing posted: again one batch per WR, as ibv_post_send would post */
	for (; wr; wr = wr->next) {
		ret = wr_batch(qpx, wr, wr->next);
		if (ret) {
			*bad = wr;
			return ret;
		}
	}
	return 0;
}

int cq_ex_mode;

/*
 * Extended CQs and, in CQ_EX_BATCH mode, the completions start_poll/next_poll took but the
 * program has not asked for yet (one batch: up to EXQ_DEPTH, in order).
 */
#define EXQ_MAX		16
#define EXQ_DEPTH	16
static struct exq {
	struct ibv_cq_ex *cq;
	struct ibv_wc wc[EXQ_DEPTH];
	int head, n;
} exqs[EXQ_MAX];

static struct exq *exq_find(struct ibv_cq *cq)
{
	for (int i = 0; i < EXQ_MAX; i++)
		if (exqs[i].cq && ibv_cq_ex_to_cq(exqs[i].cq) == cq)
			return &exqs[i];
	return NULL;
}

struct ibv_cq *cq_create(struct ibv_context *ctx, int cqe)
{
	struct ibv_cq_init_attr_ex a = { .cqe = cqe, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_cq_ex *cx;
	struct exq *q;

	if (!cq_ex_mode)
		return ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	for (q = exqs; q < exqs + EXQ_MAX && q->cq; q++)
		;
	if (q == exqs + EXQ_MAX)
		die("more than %d extended CQs at once", EXQ_MAX);
	cx = ibv_create_cq_ex(ctx, &a);
	if (!cx)
		return NULL;
	q->cq = cx;
	q->head = q->n = 0;
	return ibv_cq_ex_to_cq(cx);
}

int cq_destroy(struct ibv_cq *cq)
{
	struct exq *q = exq_find(cq);
	int ret = ibv_destroy_cq(cq);

	if (q && !ret)
		q->cq = NULL;
	return ret;
}

static void exq_read(struct ibv_cq_ex *cx, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cx->wr_id;
	wc->status = cx->status;
	wc->opcode = ibv_wc_read_opcode(cx);
	wc->vendor_err = ibv_wc_read_vendor_err(cx);
	wc->wc_flags = ibv_wc_read_wc_flags(cx);
	wc->byte_len = ibv_wc_read_byte_len(cx);
	if (wc->wc_flags & IBV_WC_WITH_IMM)
		wc->imm_data = ibv_wc_read_imm_data(cx);
	wc->qp_num = ibv_wc_read_qp_num(cx);
	wc->src_qp = ibv_wc_read_src_qp(cx);
	wc->slid = ibv_wc_read_slid(cx);
	wc->sl = ibv_wc_read_sl(cx);
	wc->dlid_path_bits = ibv_wc_read_dlid_path_bits(cx);
}

int cq_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	struct exq *q = exq_find(cq);
	int ret, got = 0;

	if (!q)
		return ibv_poll_cq(cq, n, wc);
	if (n < 1)
		return 0;
	if (cq_ex_mode == CQ_EX_SINGLE) {
		ret = ibv_start_poll(q->cq, &pa);
		if (ret == ENOENT)
			return 0;
		if (ret)
			return -1;
		exq_read(q->cq, wc);
		ibv_end_poll(q->cq);
		return 1;
	}
	if (!q->n) {
		/* one batch: start_poll, next_poll until empty or EXQ_DEPTH, end_poll */
		ret = ibv_start_poll(q->cq, &pa);
		if (ret == ENOENT)
			return 0;
		if (ret)
			return -1;
		q->head = 0;
		do {
			exq_read(q->cq, &q->wc[q->n++]);
		} while (q->n < EXQ_DEPTH && !(ret = ibv_next_poll(q->cq)));
		ibv_end_poll(q->cq);
		if (ret && ret != ENOENT)
			return -1;
	}
	while (got < n && q->n) {
		wc[got++] = q->wc[q->head++];
		q->n--;
	}
	return got;
}

int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	long end = now_ms() + timeout_ms;
	int spins = 0;

	for (;;) {
		int n = cq_poll(cq, 1, wc);

		if (n)
			return n < 0 ? -1 : 1;
		if (now_ms() > end)
			return 0;
		if (++spins > 1000) {	/* 1 vCPU: let the peer side of the guest run */
			struct timespec ts = { 0, 50000 };

			nanosleep(&ts, NULL);
		}
	}
}

/* --- the byte pattern ------------------------------------------------------------------- */

void pattern_fill(uint8_t *p, size_t len, uint32_t seed, uint64_t stream_off)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern_byte(seed, stream_off + i);
}

long pattern_check(const uint8_t *p, size_t len, uint32_t seed, uint64_t stream_off)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern_byte(seed, stream_off + i))
			return (long)i;
	return -1;
}

long guard_check(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != GUARD_BYTE)
			return (long)i;
	return -1;
}

uint32_t rnd32(uint64_t *state)
{
	/* xorshift64*: deterministic per case, so both sides derive the same layouts */
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

const char *event_tag(enum ibv_event_type t)
{
	static char other[32];

	switch (t) {
#define E(x) case x: return #x
	E(IBV_EVENT_CQ_ERR);
	E(IBV_EVENT_QP_FATAL);
	E(IBV_EVENT_QP_REQ_ERR);
	E(IBV_EVENT_QP_ACCESS_ERR);
	E(IBV_EVENT_COMM_EST);
	E(IBV_EVENT_SQ_DRAINED);
	E(IBV_EVENT_PATH_MIG);
	E(IBV_EVENT_PATH_MIG_ERR);
	E(IBV_EVENT_DEVICE_FATAL);
	E(IBV_EVENT_PORT_ACTIVE);
	E(IBV_EVENT_PORT_ERR);
	E(IBV_EVENT_LID_CHANGE);
	E(IBV_EVENT_PKEY_CHANGE);
	E(IBV_EVENT_SM_CHANGE);
	E(IBV_EVENT_SRQ_ERR);
	E(IBV_EVENT_SRQ_LIMIT_REACHED);
	E(IBV_EVENT_QP_LAST_WQE_REACHED);
	E(IBV_EVENT_CLIENT_REREGISTER);
	E(IBV_EVENT_GID_CHANGE);
	E(IBV_EVENT_WQ_FATAL);
#undef E
	}
	snprintf(other, sizeof(other), "EVENT_%d", (int)t);
	return other;
}

struct qp_opts qp_opts_small(void)
{
	struct qp_opts o = {
		.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1,
		.rnr_retry = 7, .min_rnr_timer = 12, .timeout = 14,
	};

	return o;
}

int post_send_one(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t addr, uint32_t len,
		  uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

int post_recv_one(struct ibv_qp *qp, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

int wait_wc_for(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms, const char *what)
{
	int r = poll_one(cq, wc, timeout_ms);

	if (r != 1)
		check(0, "%s: no completion (%d)", what, r);
	return r == 1;
}
