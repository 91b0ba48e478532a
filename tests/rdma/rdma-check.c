// SPDX-License-Identifier: GPL-2.0
/*
 * rdma-check: end-to-end checks of an RDMA device between two hosts, over an RC queue pair on
 * RoCEv2, with a TCP connection beside it for the out-of-band exchange.
 *
 *   server:  rdma-check -d DEV -g GIDX [-p PORT] MODE
 *   client:  rdma-check -d DEV -g GIDX [-p PORT] MODE SERVER-ADDRESS
 *
 * MODE data: RDMA WRITE (with and without immediate), RDMA READ and SEND (with and without
 * immediate) of patterned data, 1 byte to -s BYTES, at unaligned offsets on both sides, with
 * 1 to the device's maximum number of SGEs on the gather and on the scatter side. Every byte
 * of every message is checked on the side that received it, and so are guard bytes around
 * every piece (nothing written outside).
 *
 * MODE errors: remote access errors (an rkey of another PD, an address past the MR's end,
 * a WRITE to a read-only MR, a READ past the end), receiver-not-ready retries exhausted, and
 * invalid verbs arguments. For each, what the requester's completion, both QPs' states, the
 * responder's flushed receive and its asynchronous events must be.
 *
 * MODE selftest (no device, no peer): the byte checks above detect a corrupted byte.
 *
 * -x: every CQ is an extended one (ibv_create_cq_ex, polled with ibv_start_poll,
 * ibv_wc_read_* and ibv_end_poll), so the same checks hold that path to the same completions;
 * errors mode also checks that completion timestamps are refused with EOPNOTSUPP by a device
 * that reports none (completion_timestamp_mask 0). -X: the same, polling in batches with
 * ibv_next_poll until it returns ENOENT (see common.h for why -x exists beside it).
 *
 * MODE ud: UD SENDs (with and without immediate) of patterned data, 1 byte to the port's
 * active MTU, 1 to the device's maximum number of SGEs on the gather side, to a UD QP of the
 * server through an address handle. The server checks each receive: status, opcode, the
 * immediate, src_qp, IBV_WC_GRH, byte_len (the message plus the 40-byte GRH area) and every
 * byte of the message after the GRH area, guard bytes after it. A SEND with another Q_Key
 * is dropped: the receive it would have taken goes to the next SEND. With -W the client's
 * SENDs go through ibv_wr_send(_imm), ibv_wr_set_ud_addr and ibv_wr_set_sge_list.
 *
 * -c UC (data mode): the QPs are UC: SEND and WRITE with and without immediate, no READ (a
 * skip line says so). A UC WRITE completes at the requester once it is on the wire, not
 * when it landed, so the server waits (up to -t) for a WRITE's bytes to be all there.
 *
 * -W: every QP is made by ibv_create_qp_ex with send_ops_flags and every send goes through
 * ibv_wr_start, ibv_wr_<opcode>, ibv_wr_set_sge_list or ibv_wr_set_inline_data_list and
 * ibv_wr_complete (common.h: post_wrs). The two checks of ibv_post_send itself (an unknown
 * opcode, atomics on a device without them) still call ibv_post_send, on that QP.
 *
 * The client prints one line per check: "ok - what", "not ok - what: why" or
 * "skip - what: why", then a summary; it exits 0 only if every check passed. Errors of the
 * program itself (cannot connect, peer went away) exit 2 with a message on stderr.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define GUARD		64	/* guard bytes checked before and after every region */
#define MAX_PIECES	64
#define SLACK		(64 * 1024)	/* room for gaps between SGEs */

static const char *opt_dev;
static int opt_port = 18600, opt_gid = -1, opt_ibport = 1;
static size_t opt_max = (4u << 20) + 64;
static int opt_timeout_ms = 60000;
static int opt_quick;

/* What post_wrs() calls, for the check lines. */
static const char *post_name(void)
{
	return wr_mode ? "ibv_wr_start/ibv_wr_*/ibv_wr_complete" : "ibv_post_send";
}

/*
 * ibv_post_send refuses too many SGEs with EINVAL; for ibv_wr_complete the verbs leave the
 * errno to the provider (tern: EINVAL, Soft-RoCE: ENOSPC, mlx5: ENOMEM).
 */
static int too_many_sges_err(int rc)
{
	return rc == EINVAL || (wr_mode && (rc == ENOSPC || rc == ENOMEM));
}

static const char *too_many_sges_errs(void)
{
	return wr_mode ? "EINVAL, ENOSPC or ENOMEM" : "EINVAL";
}

/* ---------------------------------------------------------------------------------------
 * A message split into pieces (SGEs) placed at unaligned offsets with gaps between them.
 * Both sides derive the same layout from (len, nsge, seed).
 */
struct layout {
	int n;
	size_t off[MAX_PIECES], len[MAX_PIECES];
	size_t end;		/* bytes used from the buffer start, trailing guard included */
};

static void layout_make(struct layout *l, size_t len, int nsge, uint32_t seed)
{
	uint64_t st = (uint64_t)seed * 0x9e3779b97f4a7c15ull | 1;
	uint32_t w[MAX_PIECES], sum = 0;
	size_t pos, left;
	int i;

	if (nsge > MAX_PIECES)
		nsge = MAX_PIECES;
	if ((size_t)nsge > len)
		nsge = len ? (int)len : 1;
	l->n = nsge;
	for (i = 0; i < nsge; i++) {
		w[i] = 1 + rnd32(&st) % 100;
		sum += w[i];
	}
	left = len;
	for (i = 0; i < nsge; i++) {
		size_t s = i == nsge - 1 ? left : 1 + (len - nsge) * w[i] / sum;

		if (s > left - (nsge - 1 - i))
			s = left - (nsge - 1 - i);
		l->len[i] = s;
		left -= s;
	}
	pos = GUARD + rnd32(&st) % 64;
	for (i = 0; i < nsge; i++) {
		l->off[i] = pos;
		pos += l->len[i] + 1 + rnd32(&st) % 15;
	}
	l->end = pos + GUARD;
}

static void layout_fill(const struct layout *l, uint8_t *buf, uint32_t seed)
{
	uint64_t s = 0;

	memset(buf, GUARD_BYTE, l->end);
	for (int i = 0; i < l->n; i++) {
		pattern_fill(buf + l->off[i], l->len[i], seed, s);
		s += l->len[i];
	}
}

/* Checks the pieces hold the message and everything else up to l->end is guard. */
static int layout_verify(const struct layout *l, const uint8_t *buf, uint32_t seed,
			 char *why, size_t whylen)
{
	uint64_t s = 0;
	size_t prev = 0;
	long bad;

	for (int i = 0; i < l->n; i++) {
		bad = guard_check(buf + prev, l->off[i] - prev);
		if (bad >= 0) {
			snprintf(why, whylen, "byte at buffer offset %zu (before SGE %d) was written: "
				 "0x%02x", prev + bad, i, buf[prev + bad]);
			return 0;
		}
		bad = pattern_check(buf + l->off[i], l->len[i], seed, s);
		if (bad >= 0) {
			snprintf(why, whylen, "message byte %" PRIu64 " (SGE %d of %d, +%ld) is 0x%02x,"
				 " expected 0x%02x", s + bad, i, l->n, bad, buf[l->off[i] + bad],
				 pattern_byte(seed, s + bad));
			return 0;
		}
		s += l->len[i];
		prev = l->off[i] + l->len[i];
	}
	bad = guard_check(buf + prev, l->end - prev);
	if (bad >= 0) {
		snprintf(why, whylen, "byte at buffer offset %zu (after the last SGE) was written: "
			 "0x%02x", prev + bad, buf[prev + bad]);
		return 0;
	}
	return 1;
}

static int layout_sges(const struct layout *l, uint8_t *buf, uint32_t lkey,
		       struct ibv_sge *sg)
{
	for (int i = 0; i < l->n; i++) {
		sg[i].addr = (uintptr_t)(buf + l->off[i]);
		sg[i].length = l->len[i];
		sg[i].lkey = lkey;
	}
	return l->n;
}

/* A contiguous remote region [off, off + len) with GUARD bytes of guard on both sides. */
static int region_verify(const uint8_t *buf, size_t off, size_t len, uint32_t seed,
			 char *why, size_t whylen)
{
	long bad = guard_check(buf + off - GUARD, GUARD);

	if (bad >= 0) {
		snprintf(why, whylen, "guard byte %ld before the target was written", GUARD - bad);
		return 0;
	}
	bad = pattern_check(buf + off, len, seed, 0);
	if (bad >= 0) {
		snprintf(why, whylen, "message byte %ld is 0x%02x, expected 0x%02x", bad,
			 buf[off + bad], pattern_byte(seed, bad));
		return 0;
	}
	bad = guard_check(buf + off + len, GUARD);
	if (bad >= 0) {
		snprintf(why, whylen, "guard byte %ld after the target was written", bad);
		return 0;
	}
	return 1;
}

static void *alloc_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap %zu bytes: %m", len);
	memset(p, GUARD_BYTE, len);
	return p;
}

static struct ibv_mr *reg(struct ibv_pd *pd, void *p, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, p, len, access);

	if (!mr)
		die("ibv_reg_mr(%zu bytes, access 0x%x): %m", len, access);
	return mr;
}

static const int RW = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

static struct qp_opts default_opts(const struct dev *d)
{
	struct qp_opts o = {
		.max_send_wr = 16, .max_recv_wr = 16,
		.max_send_sge = d->attr.max_sge, .max_recv_sge = d->attr.max_sge,
		.rnr_retry = 7, .min_rnr_timer = 12, .timeout = 18,
	};

	if (o.max_send_sge > MAX_PIECES)
		o.max_send_sge = o.max_recv_sge = MAX_PIECES;
	return o;
}

/* =======================================================================================
 * data mode
 */
enum op { OP_WRITE, OP_WRITE_IMM, OP_READ, OP_SEND, OP_SEND_IMM, OP_N };
static const char *const op_name[OP_N] = {
	"RDMA WRITE", "RDMA WRITE with immediate", "RDMA READ", "SEND", "SEND with immediate",
};

static void data_server(struct dev *d, int fd)
{
	size_t size = opt_max + SLACK;
	uint8_t *buf = alloc_buf(size);
	struct ibv_pd *pd = ibv_alloc_pd(d->ctx);
	struct ibv_cq *cq = cq_create(d->ctx, 64);
	struct qp_opts o = default_opts(d);
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct layout rl = { 0 };
	char line[MSG_MAX], why[256];

	if (!pd || !cq)
		die("alloc_pd/create_cq: %m");
	mr = reg(pd, buf, size, RW);
	qp = qp_create(d, pd, cq, &o);
	oob_expect(fd, line, sizeof(line), "HELLO");
	oob_send(fd, "HELLO %" PRIu64 " %u %zu %d", (uint64_t)(uintptr_t)buf, mr->rkey, size,
		 o.max_recv_sge);
	if (qp_exchange_connect(d, qp, &o, fd, 1))
		die("cannot connect the QP");

	while (!oob_recv(fd, line, sizeof(line))) {
		size_t off, len;
		unsigned int seed, imm, n;
		int flags;

		if (sscanf(line, "PREP %zu %zu", &off, &len) == 2) {
			memset(buf + off - GUARD, GUARD_BYTE, len + 2 * GUARD);
			oob_send(fd, "OK");
		} else if (sscanf(line, "CHKW %zu %zu %u", &off, &len, &seed) == 3) {
			long end = now_ms() + opt_timeout_ms;
			int good;

			/* UC: the requester's completion does not mean the bytes are here */
			while (!(good = region_verify(buf, off, len, seed, why, sizeof(why))) &&
			       qp_type_uc && now_ms() < end)
				usleep(1000);
			if (good)
				oob_send(fd, "OK");
			else
				oob_send(fd, "BAD %s", why);
			memset(buf + off - GUARD, GUARD_BYTE, len + 2 * GUARD);
		} else if (sscanf(line, "FILL %zu %zu %u", &off, &len, &seed) == 3) {
			memset(buf + off - GUARD, GUARD_BYTE, len + 2 * GUARD);
			pattern_fill(buf + off, len, seed, 0);
			oob_send(fd, "OK");
		} else if (sscanf(line, "RECV %zu %u %u", &len, &n, &seed) == 3) {
			struct ibv_sge sg[MAX_PIECES];
			struct ibv_recv_wr wr = { .wr_id = seed, .sg_list = sg }, *bad;
			int rc;

			if (len) {
				layout_make(&rl, len, n, seed);
				memset(buf, GUARD_BYTE, rl.end);
				wr.num_sge = layout_sges(&rl, buf, mr->lkey, sg);
			} else {
				rl.n = 0;	/* no buffer: for RDMA WRITE with immediate */
			}
			rc = ibv_post_recv(qp, &wr, &bad);
			if (rc)
				oob_send(fd, "BAD ibv_post_recv: %s", strerror(rc));
			else
				oob_send(fd, "OK");
		} else if (sscanf(line, "CHKR %zu %u %u %d", &len, &seed, &imm, &flags) == 4) {
			struct ibv_wc wc;
			int got = poll_one(cq, &wc, opt_timeout_ms);
			enum ibv_wc_opcode want = flags & 2 ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;

			if (got != 1)
				oob_send(fd, "BAD no receive completion within %d ms",
					 opt_timeout_ms);
			else if (wc.status != IBV_WC_SUCCESS)
				oob_send(fd, "BAD receive completed with %s (%d)",
					 ibv_wc_status_str(wc.status), wc.status);
			else if (wc.opcode != want)
				oob_send(fd, "BAD receive completion opcode %d, expected %d",
					 wc.opcode, want);
			else if (wc.wr_id != seed)
				oob_send(fd, "BAD receive completion wr_id %" PRIu64 ", expected %u",
					 wc.wr_id, seed);
			else if (wc.byte_len != len)
				oob_send(fd, "BAD receive byte_len %u, expected %zu", wc.byte_len, len);
			else if (!!(wc.wc_flags & IBV_WC_WITH_IMM) != !!(flags & 1))
				oob_send(fd, "BAD IBV_WC_WITH_IMM is %s", flags & 1 ? "clear" : "set");
			else if ((flags & 1) && ntohl(wc.imm_data) != imm)
				oob_send(fd, "BAD immediate 0x%x, expected 0x%x", ntohl(wc.imm_data),
					 imm);
			else if (!(flags & 2) && !layout_verify(&rl, buf, seed, why, sizeof(why)))
				oob_send(fd, "BAD %s", why);
			else if ((flags & 2) && !region_verify(buf, GUARD + (seed % 4000), len, seed,
							       why, sizeof(why)))
				oob_send(fd, "BAD %s", why);
			else
				oob_send(fd, "OK");
			if (flags & 2)
				memset(buf, GUARD_BYTE, GUARD + (seed % 4000) + len + GUARD);
		} else if (!strcmp(line, "BYE")) {
			break;
		} else {
			die("unknown request: %s", line);
		}
	}
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	cq_destroy(cq);
	ibv_dealloc_pd(pd);
}

struct data_client {
	struct dev *d;
	int fd;
	uint8_t *buf;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint64_t raddr;
	uint32_t rkey;
	size_t rsize;
	int max_send_sge, max_recv_sge, max_read_sge;
	int broken;		/* the QP went to error: later cases cannot run */
};

static int post_and_wait(struct data_client *c, struct ibv_send_wr *wr, enum ibv_wc_opcode want,
			 char *why, size_t whylen)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int rc = post_wrs(c->qp, wr, &bad), got;

	if (rc) {
		snprintf(why, whylen, "%s: %s", post_name(), strerror(rc));
		return 0;
	}
	got = poll_one(c->cq, &wc, opt_timeout_ms);
	if (got != 1) {
		snprintf(why, whylen, "no completion within %d ms", opt_timeout_ms);
		c->broken = 1;
		return 0;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		snprintf(why, whylen, "completion status %s (%d), vendor_err 0x%x",
			 ibv_wc_status_str(wc.status), wc.status, wc.vendor_err);
		c->broken = 1;
		return 0;
	}
	if (wc.opcode != want || wc.wr_id != wr->wr_id) {
		snprintf(why, whylen, "completion opcode %d wr_id %" PRIu64 ", expected %d %" PRIu64,
			 wc.opcode, wc.wr_id, want, wr->wr_id);
		return 0;
	}
	return 1;
}

static int ask(struct data_client *c, char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int ask(struct data_client *c, char *why, size_t whylen, const char *fmt, ...)
{
	char msg[MSG_MAX], line[MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	oob_send(c->fd, "%s", msg);
	if (oob_recv(c->fd, line, sizeof(line)))
		die("server went away after '%s'", msg);
	if (!strcmp(line, "OK"))
		return 1;
	snprintf(why, whylen, "server: %.400s", !strncmp(line, "BAD ", 4) ? line + 4 : line);
	return 0;
}

/* One transfer; returns 1 when every byte arrived where it should and nothing else changed. */
static int data_case(struct data_client *c, enum op op, size_t len, int nsge, int rsge,
		     uint32_t seed, char *why, size_t whylen)
{
	struct ibv_sge sg[MAX_PIECES];
	struct ibv_send_wr wr = { .wr_id = seed, .sg_list = sg, .send_flags = IBV_SEND_SIGNALED };
	size_t roff = GUARD + seed % 4000;	/* unaligned remote offset */
	uint32_t imm = seed * 2654435761u;
	struct layout l;

	layout_make(&l, len, nsge, seed);
	if (l.end > c->rsize || roff + len + GUARD > c->rsize)
		die("message of %zu bytes does not fit the buffers", len);
	wr.num_sge = layout_sges(&l, c->buf, c->mr->lkey, sg);
	wr.wr.rdma.remote_addr = c->raddr + roff;
	wr.wr.rdma.rkey = c->rkey;

	switch (op) {
	case OP_WRITE:
	case OP_WRITE_IMM:
		layout_fill(&l, c->buf, seed);
		if (op == OP_WRITE_IMM) {
			/* the server's check for this case looks at GUARD + seed % 4000 */
			if (!ask(c, why, whylen, "PREP %zu %zu", roff, len) ||
			    !ask(c, why, whylen, "RECV 0 0 %u", seed))
				return 0;
			wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
			wr.imm_data = htonl(imm);
		} else {
			if (!ask(c, why, whylen, "PREP %zu %zu", roff, len))
				return 0;
			wr.opcode = IBV_WR_RDMA_WRITE;
		}
		if (!post_and_wait(c, &wr, IBV_WC_RDMA_WRITE, why, whylen))
			return 0;
		if (op == OP_WRITE_IMM)
			return ask(c, why, whylen, "CHKR %zu %u %u 3", len, seed, imm);
		return ask(c, why, whylen, "CHKW %zu %zu %u", roff, len, seed);
	case OP_READ:
		if (!ask(c, why, whylen, "FILL %zu %zu %u", roff, len, seed))
			return 0;
		memset(c->buf, GUARD_BYTE, l.end);
		wr.opcode = IBV_WR_RDMA_READ;
		if (!post_and_wait(c, &wr, IBV_WC_RDMA_READ, why, whylen))
			return 0;
		if (!layout_verify(&l, c->buf, seed, why, whylen))
			return 0;
		return 1;
	case OP_SEND:
	case OP_SEND_IMM:
		if (!ask(c, why, whylen, "RECV %zu %d %u", len, rsge, seed))
			return 0;
		layout_fill(&l, c->buf, seed);
		wr.opcode = op == OP_SEND ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl(imm);
		if (!post_and_wait(c, &wr, IBV_WC_SEND, why, whylen))
			return 0;
		return ask(c, why, whylen, "CHKR %zu %u %u %d", len, seed, imm,
			   op == OP_SEND_IMM);
	default:
		return 0;
	}
}

static void data_client(struct dev *d, int fd)
{
	static const size_t sizes[] = {
		1, 2, 3, 7, 8, 63, 64, 65, 255, 1000, 1023, 1024, 1025, 2049, 4095, 4096, 4097,
		8191, 12345, 65536, 65541, 262141, 1 << 20, (1 << 20) + 7, (3 << 20) + 5,
		(4 << 20) + 3, (6 << 20) + 1, 8 << 20,
	};
	static const size_t quick_sizes[] = {
		1, 3, 64, 65, 1025, 4096, 4097, 65541, (1 << 20) + 7, (4 << 20) + 3,
	};
	const size_t *sz = opt_quick ? quick_sizes : sizes;
	size_t nsz = opt_quick ? sizeof(quick_sizes) / sizeof(sizes[0]) :
				 sizeof(sizes) / sizeof(sizes[0]);
	struct data_client c = { .d = d, .fd = fd };
	struct qp_opts o = default_opts(d);
	struct ibv_pd *pd = ibv_alloc_pd(d->ctx);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	size_t size = opt_max + SLACK, maxlen = opt_max;
	int runs[OP_N] = { 0 }, fails[OP_N] = { 0 }, notrun[OP_N] = { 0 };
	int maxsge[OP_N];
	size_t biggest[OP_N] = { 0 };
	char line[MSG_MAX], why[512];
	unsigned int caseno = 0;

	c.cq = cq_create(d->ctx, 64);
	if (!pd || !c.cq)
		die("alloc_pd/create_cq: %m");
	c.buf = alloc_buf(size);
	c.mr = reg(pd, c.buf, size, RW);
	c.qp = qp_create(d, pd, c.cq, &o);
	if (ibv_query_qp(c.qp, &qa, IBV_QP_CAP, &qia))
		die("ibv_query_qp: %m");
	c.max_send_sge = qia.cap.max_send_sge;
	c.max_read_sge = d->attr.max_sge_rd ? d->attr.max_sge_rd : 1;
	if (c.max_read_sge > c.max_send_sge)
		c.max_read_sge = c.max_send_sge;
	oob_send(fd, "HELLO");
	oob_expect(fd, line, sizeof(line), "HELLO ");
	if (sscanf(line, "HELLO %" SCNu64 " %u %zu %d", &c.raddr, &c.rkey, &c.rsize,
		   &c.max_recv_sge) != 4)
		die("bad HELLO from the server: %s", line);
	if (c.rsize < size)
		die("the server's buffer (%zu) is smaller than ours (%zu): same -s on both sides",
		    c.rsize, size);
	if (qp_exchange_connect(d, c.qp, &o, fd, 0))
		die("cannot connect the QP");
	if (maxlen > d->port_attr.max_msg_sz)
		maxlen = d->port_attr.max_msg_sz;
	printf("# device %s: max_sge %d (QP: send %d, server recv %d), max_sge_rd %d, "
	       "max_msg_sz %u, active MTU %d; messages up to %zu bytes\n",
	       ibv_get_device_name(d->ctx->device), d->attr.max_sge, c.max_send_sge,
	       c.max_recv_sge, d->attr.max_sge_rd, d->port_attr.max_msg_sz,
	       128 << d->port_attr.active_mtu, maxlen);

	for (int op = 0; op < OP_N; op++)
		maxsge[op] = op == OP_READ ? c.max_read_sge : c.max_send_sge;
	if (qp_type_uc)
		printf("skip - RDMA READ: UC has no READ\n");
	for (size_t si = 0; si < nsz; si++) {
		size_t len = sz[si];

		if (len > maxlen)
			continue;
		for (int op = 0; op < OP_N; op++) {
			int variants[3] = { 1, maxsge[op], 2 + (int)(len % 7) }, nv = 3;

			if (qp_type_uc && op == OP_READ)
				continue;
			if (op == OP_WRITE_IMM || op == OP_SEND_IMM)
				nv = 1;	/* the immediate's path: one layout per size */
			for (int v = 0; v < nv; v++) {
				int nsge = variants[v], rsge;
				uint32_t seed = 0x7e40000u + caseno++ * 7919u;

				if (nsge > maxsge[op] || (v == 2 && nsge >= maxsge[op]))
					continue;
				if (v && (size_t)nsge > len)
					continue;
				/* the scatter side uses another count than the gather side */
				rsge = v == 0 ? c.max_recv_sge : v == 1 ? 1 : 1 + (int)(len % 5);
				if (rsge > c.max_recv_sge)
					rsge = c.max_recv_sge;
				if (c.broken) {
					notrun[op]++;
					continue;
				}
				runs[op]++;
				if (!data_case(&c, op, len, nsge, rsge, seed, why, sizeof(why))) {
					fails[op]++;
					if (fails[op] <= 8)
						check(0, "%s of %zu bytes, %d SGEs%s%.0d: %s",
						      op_name[op], len, nsge,
						      op >= OP_SEND ? ", receive SGEs " : "",
						      op >= OP_SEND ? rsge : 0, why);
				} else if (len > biggest[op]) {
					biggest[op] = len;
				}
			}
		}
	}
	for (int op = 0; op < OP_N; op++) {
		if (qp_type_uc && op == OP_READ)
			continue;
		check(!fails[op] && !notrun[op] && runs[op],
		      "%s: %d transfers from 1 B to %zu B, 1 to %d SGEs, unaligned, every byte "
		      "and the guard bytes around checked%s%.0d%s%.0d", op_name[op], runs[op],
		      biggest[op], maxsge[op], fails[op] ? "; failed: " : "", fails[op],
		      notrun[op] ? "; not run after the QP failed: " : "", notrun[op]);
	}
	oob_send(fd, "BYE");
	ibv_destroy_qp(c.qp);
	ibv_dereg_mr(c.mr);
	cq_destroy(c.cq);
	ibv_dealloc_pd(pd);
}

/* =======================================================================================
 * ud mode
 */
#define UD_QKEY		0x11113333u
#define UD_GRH		40

/* A UD QP (with wr_mode set: ibv_create_qp_ex with the two sends) in RTS with UD_QKEY. */
static struct ibv_qp *ud_qp(struct dev *d, struct ibv_pd *pd, struct ibv_cq *cq, int sges)
{
	struct ibv_qp_init_attr_ex ix = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD, .pd = pd,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = sges,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = d->port,
				 .qkey = UD_QKEY };
	struct ibv_qp *qp;

	if (wr_mode) {
		ix.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ix.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	}
	qp = ibv_create_qp_ex(d->ctx, &ix);
	if (!qp)
		die("ibv_create_qp_ex (UD, %d SGEs%s): %m", sges,
		    wr_mode ? ", send_ops_flags" : "");
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("UD QP to INIT: %m");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("UD QP to RTR: %m");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = (uint32_t)rand() & 0xffffff;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD QP to RTS: %m");
	return qp;
}

static void ud_server(struct dev *d, int fd)
{
	size_t size = 2 * 65536;
	uint8_t *buf = alloc_buf(size);
	struct ibv_pd *pd = ibv_alloc_pd(d->ctx);
	struct ibv_cq *cq = cq_create(d->ctx, 64);
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct qp_dest me;
	char line[MSG_MAX], mine[128];
	uint32_t peer_qpn = 0;

	if (!pd || !cq)
		die("alloc_pd/create_cq: %m");
	mr = reg(pd, buf, size, IBV_ACCESS_LOCAL_WRITE);
	qp = ud_qp(d, pd, cq, 1);
	me = (struct qp_dest){ .qpn = qp->qp_num, .gid = d->gid };
	dest_format(&me, mine, sizeof(mine));
	oob_expect(fd, line, sizeof(line), "UD ");
	if (sscanf(line, "UD %u", &peer_qpn) != 1)
		die("bad UD line: %s", line);
	oob_send(fd, "UD %s", mine);

	while (!oob_recv(fd, line, sizeof(line))) {
		size_t len;
		unsigned int seed, imm;
		int flags;

		if (sscanf(line, "URECV %zu %u", &len, &seed) == 2) {
			struct ibv_sge sg = { .addr = (uintptr_t)buf + GUARD, .length = len + UD_GRH,
					      .lkey = mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = seed, .sg_list = &sg, .num_sge = 1 },
					   *bad;
			int rc;

			if (len + UD_GRH + 2 * GUARD > size)
				die("UD receive of %zu bytes does not fit", len);
			memset(buf, GUARD_BYTE, len + UD_GRH + 2 * GUARD);
			rc = ibv_post_recv(qp, &wr, &bad);
			if (rc)
				oob_send(fd, "BAD ibv_post_recv: %s", strerror(rc));
			else
				oob_send(fd, "OK");
		} else if (sscanf(line, "UCHK %zu %u %u %d", &len, &seed, &imm, &flags) == 4) {
			struct ibv_wc wc;
			int got = poll_one(cq, &wc, opt_timeout_ms);
			long bad;

			if (got != 1)
				oob_send(fd, "BAD no receive completion within %d ms",
					 opt_timeout_ms);
			else if (wc.status != IBV_WC_SUCCESS)
				oob_send(fd, "BAD receive completed with %s (%d)",
					 ibv_wc_status_str(wc.status), wc.status);
			else if (wc.opcode != IBV_WC_RECV || wc.wr_id != seed)
				oob_send(fd, "BAD receive opcode %d wr_id %" PRIu64 ", expected %d %u",
					 wc.opcode, wc.wr_id, IBV_WC_RECV, seed);
			else if (wc.byte_len != len + UD_GRH)
				oob_send(fd, "BAD byte_len %u, expected %zu (the message and the "
					 "40-byte GRH area)", wc.byte_len, len + UD_GRH);
			else if (!(wc.wc_flags & IBV_WC_GRH))
				oob_send(fd, "BAD IBV_WC_GRH is clear");
			else if (wc.src_qp != peer_qpn)
				oob_send(fd, "BAD src_qp %u, expected %u", wc.src_qp, peer_qpn);
			else if (!!(wc.wc_flags & IBV_WC_WITH_IMM) != !!flags)
				oob_send(fd, "BAD IBV_WC_WITH_IMM is %s", flags ? "clear" : "set");
			else if (flags && ntohl(wc.imm_data) != imm)
				oob_send(fd, "BAD immediate 0x%x, expected 0x%x", ntohl(wc.imm_data),
					 imm);
			else if ((bad = guard_check(buf, GUARD)) >= 0)
				oob_send(fd, "BAD guard byte %ld before the buffer was written", bad);
			else if ((bad = pattern_check(buf + GUARD + UD_GRH, len, seed, 0)) >= 0)
				oob_send(fd, "BAD message byte %ld is 0x%02x, expected 0x%02x", bad,
					 buf[GUARD + UD_GRH + bad], pattern_byte(seed, bad));
			else if ((bad = guard_check(buf + GUARD + UD_GRH + len, GUARD)) >= 0)
				oob_send(fd, "BAD guard byte %ld after the message was written", bad);
			else
				oob_send(fd, "OK");
		} else if (!strcmp(line, "BYE")) {
			break;
		} else {
			die("unknown request: %s", line);
		}
	}
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	cq_destroy(cq);
	ibv_dealloc_pd(pd);
}

struct ud_client {
	struct data_client c;
	struct ibv_ah *ah;
	uint32_t rqpn;
};

/* One UD SEND of @len bytes in @nsge pieces with Q_Key @qkey; 1: it landed intact. */
static int ud_case(struct ud_client *u, int imm_op, size_t len, int nsge, uint32_t seed,
		   uint32_t qkey, char *why, size_t whylen)
{
	struct data_client *c = &u->c;
	struct ibv_sge sg[MAX_PIECES];
	struct ibv_send_wr wr = { .wr_id = seed, .sg_list = sg, .send_flags = IBV_SEND_SIGNALED };
	uint32_t imm = seed * 2654435761u;
	struct layout l;

	layout_make(&l, len, nsge, seed);
	wr.num_sge = layout_sges(&l, c->buf, c->mr->lkey, sg);
	layout_fill(&l, c->buf, seed);
	wr.opcode = imm_op ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	wr.imm_data = htonl(imm);
	wr.wr.ud.ah = u->ah;
	wr.wr.ud.remote_qpn = u->rqpn;
	wr.wr.ud.remote_qkey = qkey;
	if (qkey == UD_QKEY && !ask(c, why, whylen, "URECV %zu %u", len, seed))
		return 0;
	if (!post_and_wait(c, &wr, IBV_WC_SEND, why, whylen))
		return 0;
	if (qkey != UD_QKEY)
		return 1;
	return ask(c, why, whylen, "UCHK %zu %u %u %d", len, seed, imm, imm_op);
}

static void ud_client(struct dev *d, int fd)
{
	static const size_t sizes[] = {
		1, 2, 3, 7, 8, 63, 64, 65, 255, 256, 511, 512, 1000, 1023, 1024, 2047, 2048,
		4095, 4096,
	};
	struct ud_client u = { .c = { .d = d, .fd = fd } };
	struct data_client *c = &u.c;
	struct ibv_pd *pd = ibv_alloc_pd(d->ctx);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = d->port };
	struct qp_dest srv;
	size_t mtu = 128u << d->port_attr.active_mtu, biggest = 0;
	int maxsge = d->attr.max_sge < MAX_PIECES ? d->attr.max_sge : MAX_PIECES;
	int runs[2] = { 0 }, fails[2] = { 0 };
	char line[MSG_MAX], why[512];
	unsigned int caseno = 0;
	uint32_t seed;
	int ok;

	c->cq = cq_create(d->ctx, 64);
	if (!pd || !c->cq)
		die("alloc_pd/create_cq: %m");
	c->buf = alloc_buf(65536 + SLACK);
	c->mr = reg(pd, c->buf, 65536 + SLACK, IBV_ACCESS_LOCAL_WRITE);
	c->qp = ud_qp(d, pd, c->cq, maxsge);
	oob_send(fd, "UD %u", c->qp->qp_num);
	oob_expect(fd, line, sizeof(line), "UD ");
	if (dest_parse(line + 3, &srv))
		die("bad UD line from the server: %s", line);
	u.rqpn = srv.qpn;
	aa.grh.dgid = srv.gid;
	aa.grh.sgid_index = d->gid_index;
	aa.grh.hop_limit = 64;
	u.ah = ibv_create_ah(pd, &aa);
	if (!u.ah)
		die("ibv_create_ah: %m");
	printf("# UD QP %u -> %u, active MTU %zu, up to %d SGEs, sends through %s\n",
	       c->qp->qp_num, u.rqpn, mtu, maxsge, post_name());

	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t len = sizes[si];

		if (len > mtu)
			continue;
		for (int op = 0; op < 2; op++) {
			int variants[3] = { 1, maxsge, 2 + (int)(len % 7) };

			for (int v = 0; v < (op ? 1 : 3); v++) {
				int nsge = variants[v];

				if ((v && (size_t)nsge > len) || (v == 2 && nsge >= maxsge))
					continue;
				seed = 0x0d0000u + caseno++ * 7919u;
				if (c->broken)
					break;
				runs[op]++;
				if (!ud_case(&u, op, len, nsge, seed, UD_QKEY, why, sizeof(why))) {
					if (++fails[op] <= 8)
						check(0, "UD %s of %zu bytes, %d SGEs: %s",
						      op ? "SEND with immediate" : "SEND", len, nsge,
						      why);
				} else if (len > biggest) {
					biggest = len;
				}
			}
		}
	}
	for (int op = 0; op < 2; op++)
		check(runs[op] && !fails[op], "UD %s: %d messages from 1 B to %zu B (the active MTU "
		      "%zu), 1 to %d SGEs, through an AH: src_qp, IBV_WC_GRH, byte_len with the GRH "
		      "area, every byte and the guard bytes after it checked%s%.0d",
		      op ? "SEND with immediate" : "SEND", runs[op], biggest, mtu,
		      op ? 1 : maxsge, fails[op] ? "; failed: " : "", fails[op]);

	/* another Q_Key: dropped, the posted receive takes the next SEND with the right one */
	seed = 0x0d0000u + caseno++ * 7919u;
	ok = !c->broken && ask(c, why, sizeof(why), "URECV %d %u", 100, seed) &&
	     ud_case(&u, 0, 100, 1, seed + 1, UD_QKEY ^ 0x10, why, sizeof(why));
	if (ok) {
		/* same receive (wr_id seed), a SEND of seed's pattern with the right Q_Key */
		struct ibv_sge sg[MAX_PIECES];
		struct ibv_send_wr wr = { .wr_id = seed, .sg_list = sg, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED };
		struct layout l;

		layout_make(&l, 100, 1, seed);
		wr.num_sge = layout_sges(&l, c->buf, c->mr->lkey, sg);
		layout_fill(&l, c->buf, seed);
		wr.wr.ud.ah = u.ah;
		wr.wr.ud.remote_qpn = u.rqpn;
		wr.wr.ud.remote_qkey = UD_QKEY;
		ok = post_and_wait(c, &wr, IBV_WC_SEND, why, sizeof(why)) &&
		     ask(c, why, sizeof(why), "UCHK %d %u 0 0", 100, seed);
	}
	check(ok, "a UD SEND with another Q_Key is dropped by the receiver: its receive WQE "
	      "takes the next SEND, with the QP's Q_Key%s%s", ok ? "" : ": ", ok ? "" : why);

	oob_send(fd, "BYE");
	ibv_destroy_ah(u.ah);
	ibv_destroy_qp(c->qp);
	ibv_dereg_mr(c->mr);
	cq_destroy(c->cq);
	ibv_dealloc_pd(pd);
}

/* =======================================================================================
 * errors mode
 */
#define EBUF	65536

struct err_server {
	struct dev *d;
	struct ibv_pd *pd, *pd2;
	uint8_t *a, *b, *cbuf, *rbuf;
	struct ibv_mr *mra, *mrb, *mrc, *mrr;
};

static void errors_server(struct dev *d, int fd)
{
	struct err_server s = { .d = d };
	char line[MSG_MAX];
	int fl = fcntl(d->ctx->async_fd, F_GETFL);

	if (fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK))
		die("async_fd O_NONBLOCK: %m");
	s.pd = ibv_alloc_pd(d->ctx);
	s.pd2 = ibv_alloc_pd(d->ctx);
	if (!s.pd || !s.pd2)
		die("ibv_alloc_pd: %m");
	s.a = alloc_buf(EBUF);
	s.b = alloc_buf(EBUF);
	s.cbuf = alloc_buf(EBUF);
	s.rbuf = alloc_buf(EBUF);
	s.mra = reg(s.pd, s.a, EBUF, RW);
	s.mrb = reg(s.pd, s.b, EBUF, IBV_ACCESS_REMOTE_READ);
	s.mrc = reg(s.pd2, s.cbuf, EBUF, RW);
	s.mrr = reg(s.pd, s.rbuf, EBUF, IBV_ACCESS_LOCAL_WRITE);
	oob_expect(fd, line, sizeof(line), "HELLO");
	oob_send(fd, "MRS %" PRIu64 " %u %" PRIu64 " %u %" PRIu64 " %u %d",
		 (uint64_t)(uintptr_t)s.a, s.mra->rkey, (uint64_t)(uintptr_t)s.b, s.mrb->rkey,
		 (uint64_t)(uintptr_t)s.cbuf, s.mrc->rkey, EBUF);

	while (!oob_recv(fd, line, sizeof(line))) {
		struct qp_opts o = default_opts(d);
		struct ibv_cq *cq;
		struct ibv_qp *qp;
		int post_recv, settle_ms;
		char evs[256] = "";
		struct ibv_wc wc;
		int got_cqe = 0, access_ev = 0, cqe_status = -1, intact;
		long end;

		if (!strcmp(line, "BYE"))
			break;
		if (sscanf(line, "CASE %d %d %d", &o.min_rnr_timer, &post_recv, &settle_ms) != 3)
			die("unknown request: %s", line);
		o.max_send_sge = o.max_recv_sge = 1;
		cq = cq_create(d->ctx, 16);
		if (!cq)
			die("ibv_create_cq: %m");
		qp = qp_create(d, s.pd, cq, &o);
		if (qp_exchange_connect(d, qp, &o, fd, 1))
			die("cannot connect the QP");
		if (post_recv) {
			struct ibv_sge sg = { (uintptr_t)s.rbuf, 64, s.mrr->lkey };
			struct ibv_recv_wr wr = { .wr_id = 42, .sg_list = &sg, .num_sge = 1 }, *bad;

			if (ibv_post_recv(qp, &wr, &bad))
				die("ibv_post_recv: %m");
		}
		oob_send(fd, "READY");
		oob_expect(fd, line, sizeof(line), "RESULT");

		/* Collect what the responder saw: its posted receive's fate and async events. */
		end = now_ms() + settle_ms;
		for (;;) {
			struct ibv_async_event ev;
			struct pollfd p = { .fd = d->ctx->async_fd, .events = POLLIN };

			if (!got_cqe && cq_poll(cq, 1, &wc) == 1) {
				got_cqe = 1;
				cqe_status = wc.status;
			}
			while (!ibv_get_async_event(d->ctx, &ev)) {
				int mine = ev.element.qp == qp;

				snprintf(evs + strlen(evs), sizeof(evs) - strlen(evs), "%s%s%s",
					 *evs ? "," : "", mine ? "" : "other:",
					 event_tag(ev.event_type));
				if (mine && ev.event_type == IBV_EVENT_QP_ACCESS_ERR)
					access_ev = 1;
				ibv_ack_async_event(&ev);
			}
			/* an access error case is complete once both arrived */
			if (now_ms() > end || (post_recv && got_cqe && access_ev))
				break;
			poll(&p, 1, 10);
		}
		intact = guard_check(s.a, EBUF) < 0 && guard_check(s.b, EBUF) < 0 &&
			 guard_check(s.cbuf, EBUF) < 0;
		oob_send(fd, "R %d %d %d %s %d", qp_state(qp), got_cqe, cqe_status,
			 *evs ? evs : "none", intact);
		ibv_destroy_qp(qp);
		cq_destroy(cq);
		memset(s.a, GUARD_BYTE, EBUF);
		memset(s.cbuf, GUARD_BYTE, EBUF);
	}
	ibv_dereg_mr(s.mra);
	ibv_dereg_mr(s.mrb);
	ibv_dereg_mr(s.mrc);
	ibv_dereg_mr(s.mrr);
	ibv_dealloc_pd(s.pd);
	ibv_dealloc_pd(s.pd2);
}

struct remote_mrs {
	uint64_t a, b, c;
	uint32_t ka, kb, kc;
	int len;
};

struct err_client {
	struct dev *d;
	int fd;
	struct ibv_pd *pd;
	uint8_t *buf;
	struct ibv_mr *mr;
	struct remote_mrs r;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

/* Both sides create a fresh QP pair and connect it. */
static void err_newqp(struct err_client *c, const struct qp_opts *o, int server_rnr_timer,
		      int post_recv, int settle_ms)
{
	char line[MSG_MAX];

	c->cq = cq_create(c->d->ctx, 16);
	if (!c->cq)
		die("ibv_create_cq: %m");
	c->qp = qp_create(c->d, c->pd, c->cq, o);
	oob_send(c->fd, "CASE %d %d %d", server_rnr_timer, post_recv, settle_ms);
	if (qp_exchange_connect(c->d, c->qp, o, c->fd, 0))
		die("cannot connect the QP");
	oob_expect(c->fd, line, sizeof(line), "READY");
}

struct responder {
	int state, got_cqe, cqe_status, intact;
	char events[256];
};

static void err_result(struct err_client *c, struct responder *r)
{
	char line[MSG_MAX];

	oob_send(c->fd, "RESULT");
	oob_expect(c->fd, line, sizeof(line), "R ");
	if (sscanf(line, "R %d %d %d %255s %d", &r->state, &r->got_cqe, &r->cqe_status,
		   r->events, &r->intact) != 5)
		die("bad result line: %s", line);
	ibv_destroy_qp(c->qp);
	cq_destroy(c->cq);
}

static int has_event(const char *list, const char *name)
{
	const char *p = list;
	size_t n = strlen(name);

	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return 1;
		p += n;
	}
	return 0;
}

static void access_case(struct err_client *c, const char *name, enum ibv_wr_opcode opcode,
			uint64_t raddr, uint32_t rkey)
{
	struct qp_opts o = default_opts(c->d);
	struct ibv_sge sg = { (uintptr_t)c->buf, 64, c->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sg, .num_sge = 1, .opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct responder r;
	struct ibv_wc wc;
	int rc, got, st;

	o.max_send_sge = o.max_recv_sge = 1;
	err_newqp(c, &o, 12, 1, 5000);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	rc = post_wrs(c->qp, &wr, &bad);
	if (rc)
		die("%s: %s: %s", name, post_name(), strerror(rc));
	got = poll_one(c->cq, &wc, opt_timeout_ms);
	check(got == 1 && wc.status == IBV_WC_REM_ACCESS_ERR && wc.wr_id == 7,
	      "%s: the requester's completion is IBV_WC_REM_ACCESS_ERR%s%s%s", name,
	      got == 1 ? " (got: " : got ? ": poll error" : ": no completion",
	      got == 1 ? ibv_wc_status_str(wc.status) : "", got == 1 ? ")" : "");
	st = qp_state(c->qp);
	check(st == IBV_QPS_ERR, "%s: the requester's QP is in ERR (ibv_query_qp: %s)", name,
	      qp_state_str(st));
	err_result(c, &r);
	check(r.state == IBV_QPS_ERR, "%s: the responder's QP is in ERR (ibv_query_qp: %s)", name,
	      qp_state_str(r.state));
	check(r.got_cqe && r.cqe_status == IBV_WC_WR_FLUSH_ERR,
	      "%s: the responder's posted receive is flushed with IBV_WC_WR_FLUSH_ERR (%s%s)",
	      name, r.got_cqe ? "got: " : "no completion",
	      r.got_cqe ? ibv_wc_status_str(r.cqe_status) : "");
	check(has_event(r.events, "IBV_EVENT_QP_ACCESS_ERR"),
	      "%s: the responder got IBV_EVENT_QP_ACCESS_ERR on its QP (events: %s)", name,
	      r.events);
	check(r.intact, "%s: the responder's memory is unchanged", name);
}

static void rnr_case(struct err_client *c)
{
	struct qp_opts o = default_opts(c->d);
	struct ibv_sge sg = { (uintptr_t)c->buf, 64, c->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct responder r;
	struct ibv_wc wc;
	int rc, got, st;

	o.max_send_sge = o.max_recv_sge = 1;
	o.rnr_retry = 1;
	/* the responder asks for a 0.01 ms RNR delay; no receive is posted */
	err_newqp(c, &o, 1, 0, 1000);
	rc = post_wrs(c->qp, &wr, &bad);
	if (rc)
		die("rnr: %s: %s", post_name(), strerror(rc));
	got = poll_one(c->cq, &wc, opt_timeout_ms);
	check(got == 1 && wc.status == IBV_WC_RNR_RETRY_EXC_ERR,
	      "SEND with no receive posted, rnr_retry 1: IBV_WC_RNR_RETRY_EXC_ERR%s%s%s",
	      got == 1 ? " (got: " : got ? ": poll error" : ": no completion",
	      got == 1 ? ibv_wc_status_str(wc.status) : "", got == 1 ? ")" : "");
	st = qp_state(c->qp);
	check(st == IBV_QPS_ERR, "SEND with no receive posted: the requester's QP is in ERR "
	      "(ibv_query_qp: %s)", qp_state_str(st));
	err_result(c, &r);
	check(r.state == IBV_QPS_RTS, "SEND with no receive posted: the responder's QP is still "
	      "RTS (ibv_query_qp: %s)", qp_state_str(r.state));
	check(!r.got_cqe && !strcmp(r.events, "none"),
	      "SEND with no receive posted: the responder saw no completion and no async event "
	      "(completion: %s, events: %s)", r.got_cqe ? ibv_wc_status_str(r.cqe_status) : "none",
	      r.events);
}

static const char *errname(int e)
{
	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case ENOMEM: return "ENOMEM";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case -EINVAL: return "-EINVAL";
	case -ENOMEM: return "-ENOMEM";
	default: return strerror(e < 0 ? -e : e);
	}
}

static void args_case(struct err_client *c)
{
	struct dev *d = c->d;
	struct qp_opts o = default_opts(d);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_sge sg[MAX_PIECES + 1];
	struct ibv_send_wr w1, w2, *bad;
	struct ibv_recv_wr rw, *rbad;
	char line[MSG_MAX];
	struct ibv_wc wc;
	int rc, maxs, maxr, e;
	void *p;

	for (int i = 0; i <= MAX_PIECES; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)c->buf + 64 * i, 8, c->mr->lkey };
	err_newqp(c, &o, 12, 0, 0);
	if (ibv_query_qp(c->qp, &qa, IBV_QP_CAP, &qia))
		die("ibv_query_qp: %m");
	maxs = qia.cap.max_send_sge;
	maxr = qia.cap.max_recv_sge;

	/* too many SGEs: the WR is refused, bad_wr points at it */
	memset(&w1, 0, sizeof(w1));
	w1.wr_id = 1;
	w1.sg_list = sg;
	w1.num_sge = maxs + 1;
	w1.opcode = IBV_WR_RDMA_WRITE;
	w1.send_flags = IBV_SEND_SIGNALED;
	w1.wr.rdma.remote_addr = c->r.a;
	w1.wr.rdma.rkey = c->r.ka;
	bad = NULL;
	rc = post_wrs(c->qp, &w1, &bad);
	check(too_many_sges_err(rc) && bad == &w1, "%s with %d SGEs (QP max_send_sge %d) "
	      "returns %s and sets bad_wr (got %s, bad_wr %s)", post_name(), maxs + 1, maxs,
	      too_many_sges_errs(), errname(rc), bad == &w1 ? "set" : bad ? "wrong" : "NULL");

	/* a chain whose second WR is bad: the first is posted and completes, bad_wr = second */
	memset(&w1, 0, sizeof(w1));
	w1.wr_id = 11;
	w1.sg_list = sg;
	w1.num_sge = 1;
	w1.opcode = IBV_WR_RDMA_WRITE;
	w1.send_flags = IBV_SEND_SIGNALED;
	w1.wr.rdma.remote_addr = c->r.a;
	w1.wr.rdma.rkey = c->r.ka;
	w2 = w1;
	w2.wr_id = 12;
	w2.num_sge = maxs + 1;
	w1.next = &w2;
	bad = NULL;
	rc = post_wrs(c->qp, &w1, &bad);
	check(too_many_sges_err(rc) && bad == &w2, "%s of a chain of a good WR and one with "
	      "too many SGEs: %s, bad_wr at the second (got %s, bad_wr %s)", post_name(),
	      too_many_sges_errs(), errname(rc),
	      bad == &w2 ? "second" : bad == &w1 ? "first" : bad ? "wrong" : "NULL");
	rc = poll_one(c->cq, &wc, opt_timeout_ms);
	check(rc == 1 && wc.wr_id == 11 && wc.status == IBV_WC_SUCCESS,
	      "... and the good first WR of that chain completes successfully (%s)",
	      rc == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	rc = poll_one(c->cq, &wc, 200);
	if (rc == 1)
		snprintf(line, sizeof(line), " (one appeared: wr_id %" PRIu64 ", %s)", wc.wr_id,
			 ibv_wc_status_str(wc.status));
	check(rc == 0, "... and the refused second WR leaves no completion%s",
	      rc == 1 ? line : "");

	/*
	 * ibv_resize_cq while completions are on their way and unpolled: none is lost or
	 * repeated; then down to a size that holds nothing outstanding; then past the limit.
	 */
	{
		struct ibv_send_wr ws[6];
		int ncq, got = 0, order = 1, cqe_big, cqe_small;

		for (int i = 0; i < 6; i++) {
			ws[i] = (struct ibv_send_wr){ .wr_id = 500 + i, .sg_list = sg, .num_sge = 1,
						      .opcode = IBV_WR_RDMA_WRITE,
						      .send_flags = IBV_SEND_SIGNALED,
						      .next = i < 5 ? &ws[i + 1] : NULL };
			ws[i].wr.rdma.remote_addr = c->r.a;
			ws[i].wr.rdma.rkey = c->r.ka;
		}
		rc = post_wrs(c->qp, ws, &bad);
		if (rc)
			die("resize: %s: %s", post_name(), strerror(rc));
		/* poll the first; give the rest 100 ms to land in the old ring (or not) */
		rc = poll_one(c->cq, &wc, opt_timeout_ms);
		got += rc == 1 && wc.status == IBV_WC_SUCCESS;
		order &= rc == 1 && wc.wr_id == 500;
		usleep(100000);
		rc = ibv_resize_cq(c->cq, 64);
		cqe_big = c->cq->cqe;
		check(rc == 0 && cqe_big >= 64, "ibv_resize_cq from 16 to 64 entries with "
		      "completions outstanding succeeds (got %s, cqe %d)", errname(rc), cqe_big);
		while (got < 6 && (ncq = poll_one(c->cq, &wc, opt_timeout_ms)) == 1) {
			order &= wc.wr_id == (uint64_t)(500 + got);
			got += wc.status == IBV_WC_SUCCESS;
		}
		rc = poll_one(c->cq, &wc, 200);
		check(got == 6 && order && rc == 0, "... all 6 WRITE completions arrive once, in "
		      "order, across the resize (got %d%s%s)", got, order ? "" : ", out of order",
		      rc ? ", and one more" : "");
		rc = ibv_resize_cq(c->cq, 8);
		cqe_small = c->cq->cqe;
		check(rc == 0 && cqe_small >= 8, "ibv_resize_cq down to 8 entries with none "
		      "outstanding succeeds (got %s, cqe %d)", errname(rc), cqe_small);
		ws[0].next = NULL;
		ws[0].wr_id = 510;
		rc = post_wrs(c->qp, ws, &bad);
		rc = rc ? rc : poll_one(c->cq, &wc, opt_timeout_ms) != 1 || wc.wr_id != 510 ||
			       wc.status != IBV_WC_SUCCESS;
		check(rc == 0, "... and a WRITE completes on the resized CQ");
		rc = ibv_resize_cq(c->cq, d->attr.max_cqe + 1);
		check(rc == EINVAL && c->cq->cqe == cqe_small, "ibv_resize_cq to %d entries "
		      "(device max_cqe %d) fails with EINVAL and leaves the CQ as it was (got %s)",
		      d->attr.max_cqe + 1, d->attr.max_cqe, errname(rc));
	}

	/* atomics, on a device that has none */
	if (d->attr.atomic_cap == IBV_ATOMIC_NONE) {
		memset(&w1, 0, sizeof(w1));
		w1.wr_id = 41;
		w1.sg_list = sg;
		w1.num_sge = 1;
		w1.send_flags = IBV_SEND_SIGNALED;
		w1.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		w1.wr.atomic.remote_addr = c->r.a;
		w1.wr.atomic.rkey = c->r.ka;
		w1.wr.atomic.compare_add = 1;
		bad = NULL;
		rc = ibv_post_send(c->qp, &w1, &bad);
		check(rc == EINVAL || rc == EOPNOTSUPP, "ibv_post_send of an atomic on a device "
		      "without atomics (atomic_cap NONE) returns EINVAL or EOPNOTSUPP (got %s)",
		      errname(rc));
	} else {
		printf("skip - ibv_post_send of an atomic is refused: the device supports atomics "
		       "(atomic_cap %d)\n", d->attr.atomic_cap);
	}

	/* an opcode no device knows (last: a provider that takes it breaks the QP) */
	memset(&w1, 0, sizeof(w1));
	w1.wr_id = 31;
	w1.sg_list = sg;
	w1.num_sge = 1;
	w1.send_flags = IBV_SEND_SIGNALED;
	w1.opcode = (enum ibv_wr_opcode)0x7f;
	bad = NULL;
	rc = ibv_post_send(c->qp, &w1, &bad);
	check(rc == EINVAL && bad == &w1, "ibv_post_send with opcode 0x7f returns EINVAL and "
	      "sets bad_wr (got %s, bad_wr %s)", errname(rc),
	      bad == &w1 ? "set" : bad ? "wrong" : "NULL");

	/* too many receive SGEs */
	memset(&rw, 0, sizeof(rw));
	rw.wr_id = 21;
	rw.sg_list = sg;
	rw.num_sge = maxr + 1;
	rbad = NULL;
	rc = ibv_post_recv(c->qp, &rw, &rbad);
	check(rc == EINVAL && rbad == &rw, "ibv_post_recv with %d SGEs (QP max_recv_sge %d) "
	      "returns EINVAL and sets bad_wr (got %s)", maxr + 1, maxr, errname(rc));
	{
		struct responder r;

		err_result(c, &r);
	}

	/* QP and CQ sizes above the device's limits */
	{
		struct ibv_cq *cq = cq_create(d->ctx, 16);
		struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq,
					       .qp_type = IBV_QPT_RC };
		struct ibv_qp *qp;
		struct ibv_cq *cq2;

		if (!cq)
			die("ibv_create_cq: %m");
		ia.cap.max_send_wr = d->attr.max_qp_wr + 1;
		ia.cap.max_recv_wr = 1;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		errno = 0;
		qp = ibv_create_qp(c->pd, &ia);
		e = errno;
		check(!qp && e == EINVAL, "ibv_create_qp with max_send_wr %d (device max_qp_wr %d) "
		      "fails with EINVAL (got %s)", d->attr.max_qp_wr + 1, d->attr.max_qp_wr,
		      qp ? "a QP" : errname(e));
		if (qp)
			ibv_destroy_qp(qp);

		ia.cap.max_send_wr = 1;
		ia.cap.max_send_sge = d->attr.max_sge + 1;
		errno = 0;
		qp = ibv_create_qp(c->pd, &ia);
		e = errno;
		check(!qp && e == EINVAL, "ibv_create_qp with max_send_sge %d (device max_sge %d) "
		      "fails with EINVAL (got %s)", d->attr.max_sge + 1, d->attr.max_sge,
		      qp ? "a QP" : errname(e));
		if (qp)
			ibv_destroy_qp(qp);

		errno = 0;
		cq2 = ibv_create_cq(d->ctx, d->attr.max_cqe + 1, NULL, NULL, 0);
		e = errno;
		check(!cq2 && e == EINVAL, "ibv_create_cq with %d entries (device max_cqe %d) "
		      "fails with EINVAL (got %s)", d->attr.max_cqe + 1, d->attr.max_cqe,
		      cq2 ? "a CQ" : errname(e));
		if (cq2)
			cq_destroy(cq2);
		if (cq_ex_mode) {
			struct ibv_cq_init_attr_ex ca = {
				.cqe = 16,
				.wc_flags = IBV_WC_STANDARD_FLAGS |
					    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
			};
			struct ibv_device_attr_ex dx;
			struct ibv_cq_ex *cx;

			if (ibv_query_device_ex(d->ctx, NULL, &dx))
				die("ibv_query_device_ex: %m");
			errno = 0;
			cx = ibv_create_cq_ex(d->ctx, &ca);
			e = errno;
			if (dx.completion_timestamp_mask)
				check(cx != NULL, "ibv_create_cq_ex with completion timestamps on a "
				      "device that keeps them (mask %#" PRIx64 ") (got %s)",
				      dx.completion_timestamp_mask, cx ? "a CQ" : errname(e));
			else
				check(!cx && e == EOPNOTSUPP, "ibv_create_cq_ex with completion "
				      "timestamps on a device without them fails with EOPNOTSUPP "
				      "(got %s)", cx ? "a CQ" : errname(e));
			if (cx)
				ibv_destroy_cq(ibv_cq_ex_to_cq(cx));
		}

		/* a QP in RESET cannot jump to RTS */
		ia.cap.max_send_sge = 1;
		qp = ibv_create_qp(c->pd, &ia);
		if (!qp)
			die("ibv_create_qp: %m");
		memset(&qa, 0, sizeof(qa));
		qa.qp_state = IBV_QPS_RTS;
		qa.sq_psn = 1;
		rc = ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN);
		check(rc == EINVAL, "ibv_modify_qp from RESET straight to RTS fails with EINVAL "
		      "(got %s)", errname(rc));
		ibv_destroy_qp(qp);
		cq_destroy(cq);
	}

	/* memory registration without memory behind it, and with inconsistent access flags */
	p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap: %m");
	munmap(p, 1 << 20);
	{
		struct ibv_mr *mr;

		errno = 0;
		mr = ibv_reg_mr(c->pd, p, 1 << 20, IBV_ACCESS_LOCAL_WRITE);
		e = errno;
		check(!mr && e == EFAULT, "ibv_reg_mr of 1 MiB of unmapped address space fails "
		      "with EFAULT (got %s)", mr ? "an MR" : errname(e));
		if (mr)
			ibv_dereg_mr(mr);
		errno = 0;
		mr = ibv_reg_mr(c->pd, c->buf, 4096, IBV_ACCESS_REMOTE_WRITE);
		e = errno;
		check(!mr && e == EINVAL, "ibv_reg_mr with REMOTE_WRITE but not LOCAL_WRITE fails "
		      "with EINVAL (got %s)", mr ? "an MR" : errname(e));
		if (mr)
			ibv_dereg_mr(mr);
	}
}

static void errors_client(struct dev *d, int fd)
{
	struct err_client c = { .d = d, .fd = fd };
	char line[MSG_MAX];

	c.pd = ibv_alloc_pd(d->ctx);
	if (!c.pd)
		die("ibv_alloc_pd: %m");
	c.buf = alloc_buf(EBUF);
	c.mr = reg(c.pd, c.buf, EBUF, RW);
	oob_send(fd, "HELLO");
	oob_expect(fd, line, sizeof(line), "MRS ");
	if (sscanf(line, "MRS %" SCNu64 " %u %" SCNu64 " %u %" SCNu64 " %u %d", &c.r.a, &c.r.ka,
		   &c.r.b, &c.r.kb, &c.r.c, &c.r.kc, &c.r.len) != 7)
		die("bad MRS line: %s", line);

	access_case(&c, "RDMA WRITE with the rkey of an MR in another PD", IBV_WR_RDMA_WRITE,
		    c.r.c, c.r.kc);
	access_case(&c, "RDMA WRITE across the end of the remote MR", IBV_WR_RDMA_WRITE,
		    c.r.a + c.r.len - 16, c.r.ka);
	access_case(&c, "RDMA WRITE to a read-only MR", IBV_WR_RDMA_WRITE, c.r.b, c.r.kb);
	access_case(&c, "RDMA READ across the end of the remote MR", IBV_WR_RDMA_READ,
		    c.r.a + c.r.len - 16, c.r.ka);
	rnr_case(&c);
	args_case(&c);
	oob_send(fd, "BYE");
	ibv_dereg_mr(c.mr);
	ibv_dealloc_pd(c.pd);
}

/* =======================================================================================
 * selftest mode (no device): the checks above can fail. Corrupts one byte at a time in a
 * piece, in a gap between pieces, before the first and after the last, and in and around a
 * remote region, and expects every corruption to be reported.
 */
static void selftest(void)
{
	static const size_t lens[] = { 1, 5, 4097, 65541 };
	size_t size = 2 * 65541 + SLACK;
	uint8_t *buf = alloc_buf(size);
	char why[256];
	int missed = 0, tried = 0;

	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		for (int nsge = 1; nsge <= 16; nsge += 5) {
			struct layout l;
			uint32_t seed = 0x5e1f + li * 131 + nsge;
			size_t spots[6];
			int ns = 0;

			layout_make(&l, lens[li], nsge, seed);
			spots[ns++] = 0;				/* buffer start (guard) */
			spots[ns++] = l.off[0] - 1;			/* just before SGE 0 */
			spots[ns++] = l.off[0];				/* first message byte */
			spots[ns++] = l.off[l.n - 1] + l.len[l.n - 1] - 1;	/* last message byte */
			spots[ns++] = l.off[l.n - 1] + l.len[l.n - 1];	/* just after it */
			spots[ns++] = l.n > 1 ? l.off[1] - 1 : l.end - 1;	/* a gap, or the end */
			layout_fill(&l, buf, seed);
			if (!layout_verify(&l, buf, seed, why, sizeof(why)))
				die("selftest: a clean layout fails: %s", why);
			for (int i = 0; i < ns; i++) {
				buf[spots[i]] ^= 0x40;
				tried++;
				if (layout_verify(&l, buf, seed, why, sizeof(why)))
					missed++;
				buf[spots[i]] ^= 0x40;
			}
			/* the same message at another seed (a stale or misplaced message) */
			tried++;
			if (layout_verify(&l, buf, seed + 1, why, sizeof(why)))
				missed++;
		}
		/* a remote region: a byte inside, and the guard bytes on either side */
		memset(buf, GUARD_BYTE, lens[li] + 3 * GUARD);
		pattern_fill(buf + 2 * GUARD, lens[li], 7, 0);
		if (!region_verify(buf, 2 * GUARD, lens[li], 7, why, sizeof(why)))
			die("selftest: a clean region fails: %s", why);
		for (long d = -1; d <= (long)lens[li]; d += lens[li] + 1 > 2 ? (long)lens[li] / 2 + 1 : 1) {
			buf[2 * GUARD + d] ^= 0x01;
			tried++;
			if (region_verify(buf, 2 * GUARD, lens[li], 7, why, sizeof(why)))
				missed++;
			buf[2 * GUARD + d] ^= 0x01;
		}
	}
	check(!missed, "selftest: %d of %d single-byte corruptions (in messages, gaps, guards) "
	      "were reported", tried - missed, tried);
}

/* ======================================================================================= */

static void usage(void)
{
	fprintf(stderr, "usage: rdma-check [-d DEV] [-i IBPORT] -g GID_INDEX [-p TCP_PORT] "
		"[-s MAX_BYTES] [-t TIMEOUT_S] [-q] [-x|-X] [-W] [-c RC|UC] data|errors|ud "
		"[SERVER]\n"
		"       rdma-check selftest\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode, *host;
	struct dev d;
	int c, fd, lfd;

	while ((c = getopt(argc, argv, "d:i:g:p:s:t:qxXWc:")) != -1) {
		switch (c) {
		case 'd': opt_dev = optarg; break;
		case 'i': opt_ibport = atoi(optarg); break;
		case 'g': opt_gid = atoi(optarg); break;
		case 'p': opt_port = atoi(optarg); break;
		case 's': opt_max = strtoul(optarg, NULL, 0); break;
		case 't': opt_timeout_ms = atoi(optarg) * 1000; break;
		case 'q': opt_quick = 1; break;
		case 'x': cq_ex_mode = CQ_EX_SINGLE; break;
		case 'X': cq_ex_mode = CQ_EX_BATCH; break;
		case 'W': wr_mode = 1; break;
		case 'c':
			if (strcmp(optarg, "RC") && strcmp(optarg, "UC"))
				usage();
			qp_type_uc = !strcmp(optarg, "UC");
			break;
		default: usage();
		}
	}
	if (optind < argc && !strcmp(argv[optind], "selftest")) {
		selftest();
		return checks_failed ? 1 : 0;
	}
	if (optind >= argc || opt_gid < 0 || opt_max < 1)
		usage();
	mode = argv[optind];
	host = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (strcmp(mode, "data") && strcmp(mode, "errors") && strcmp(mode, "ud"))
		usage();
	if (qp_type_uc && strcmp(mode, "data"))
		usage();	/* the errors mode's cases are RC's (READs, RNR, NAKs) */
	srand(getpid() ^ time(NULL));
	setvbuf(stdout, NULL, _IOLBF, 0);
	dev_open(&d, opt_dev, opt_ibport, opt_gid);

	if (!host) {
		lfd = oob_listen(opt_port);
		fprintf(stderr, "rdma-check: %s server listening on TCP port %d\n", mode, opt_port);
		fd = oob_accept(lfd, 300);
		close(lfd);
		if (!strcmp(mode, "data"))
			data_server(&d, fd);
		else if (!strcmp(mode, "ud"))
			ud_server(&d, fd);
		else
			errors_server(&d, fd);
		close(fd);
		ibv_close_device(d.ctx);
		return 0;
	}
	fd = oob_connect(host, opt_port, 60);
	if (!strcmp(mode, "data"))
		data_client(&d, fd);
	else if (!strcmp(mode, "ud"))
		ud_client(&d, fd);
	else
		errors_client(&d, fd);
	close(fd);
	ibv_close_device(d.ctx);
	printf("# %d checks, %d failed\n", checks_run, checks_failed);
	return checks_failed ? 1 : 0;
}
