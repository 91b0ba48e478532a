/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern-speed: the device model's own speed, on the host, without a VM.
 *
 * Two tern model instances (model/lib) are cabled back to back in this one process and driven
 * through their real hardware interface (command queue, QPs, WQE rings, doorbells, CQs) by the
 * model's minimal host driver (model/hostdrv). Device 0 is the requester: it moves RDMA WRITE,
 * READ or SEND messages of one size to or from device 1 with a fixed number of WQEs kept
 * posted; device 1's driver keeps its receive queue full for SENDs. Everything (both devices,
 * both drivers and the wire) runs on one thread, so one host core carries both ends of the
 * link.
 *
 * The wire: a frame a device transmits is handed to the other device's tern_model_rx_frame()
 * at once, without a copy, when that device is not inside one of its entry points; otherwise
 * (or with --copy-wire) it is queued, with one copy, and delivered when the entry point has
 * returned: the model is never re-entered. Each run uses a new connected QP pair, so no
 * receive WQE of another run is left over. The model's clock is the host's CLOCK_MONOTONIC,
 * so its timers are real time;
 * the link is configured at --link-mbps (default 1 Tb/s) so that the modelled line rate is
 * never what limits the model (its pacing is not what is measured).
 *
 * Each (operation, size) is measured in steady state: --warmup-ms of traffic, then a window of
 * --ms during which completed messages, wall time and this thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID) are taken; then the posted messages are drained and checked: the
 * destination buffers must equal the source (which is refilled with a new pattern every run),
 * every completion must be successful and the two devices' counters must agree (packets sent
 * by one were received by the other, one request per message, no ICRC error, discard or
 * retransmission). A run that fails a check is reported as failed, never as a speed.
 * memcpy() of the same sizes over the same footprint is measured in the same way, in the same
 * process, between the tern runs (--no-memcpy: not).
 *
 *   tern-speed [--ops write,read,send] [--sizes 64,4096,65536,1048576] [--runs 5]
 *              [--warmup-ms 200] [--ms 1000] [--mtu 4096] [--link-mbps 1000000]
 *              [--copy-wire] [--no-memcpy] [--json] [--quick] [--spoil]   (--help)
 *
 * Prints a table (or with --json one JSON object) on stdout; exit status 0 when every run
 * passed its checks, 1 when one failed, 2 on a usage or setup error.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

#include "rdma_drv.h"

#define MAX_OPS		3
#define MAX_SIZES	8
#define MAX_RUNS	20	/* each run uses new rings: 20 x 8 sizes x 3 ops fit the arena */
#define FOOTPRINT	(8u << 20)	/* bytes of message slots per side, at most */
#define WIRE_MAX_FRAME	16384u		/* longer frames are dropped and counted (never sent) */

enum op { OP_WRITE, OP_READ, OP_SEND };
static const char *const op_name[MAX_OPS] = { "write", "read", "send" };

struct params {
	bool ops[MAX_OPS];
	uint32_t sizes[MAX_SIZES];
	unsigned int nsizes;
	unsigned int runs;
	unsigned int warmup_ms, ms;
	unsigned int mtu;		/* bytes: 256..4096 */
	uint32_t link_mbps;
	bool json;
	bool memcpy_ref;
	bool copy_wire;			/* queue every frame (one copy each) */
	bool spoil;			/* flip a destination byte before the check (its test) */
};

/* ---- the wire ---------------------------------------------------------------------------- */

/* Frames one device sent, not yet given to the other: [u32 length][frame, padded to 8]... */
struct wq {
	uint8_t *buf, *spare;
	size_t used, cap, spare_cap;
	unsigned long queued, direct, too_big;
};

struct bench;

/* Device @i's end of the wire (its fake host's tx_ctx). */
struct port {
	struct bench *b;
	unsigned int i;
};

struct bench {
	struct params p;
	struct rdev *d[2];
	struct port port[2];
	struct wq wq[2];		/* wq[i]: frames device i sent */
	bool busy[2];			/* device i is inside an entry point, delivering directly */
	struct rcq cq[2];
	struct rqp qp[2];
	struct rmr mr[2];		/* mr[0] on device 0, mr[1] on device 1 */
	struct connopt o;
	bool have_qp[2];
	unsigned long refused;		/* rx_frame said "not now" (never for RoCE) */
	uint64_t mono0;
};

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void wq_put(struct wq *q, const void *frame, size_t len)
{
	size_t need = 8 + pad8(len);

	if (q->used + need > q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 1u << 20;
		uint8_t *n;

		while (cap < q->used + need)
			cap *= 2;
		n = realloc(q->buf, cap);
		if (!n) {
			fprintf(stderr, "tern-speed: out of memory for the wire\n");
			exit(2);
		}
		q->buf = n;
		q->cap = cap;
	}
	memcpy(q->buf + q->used, &(uint32_t){ (uint32_t)len }, 4);
	memcpy(q->buf + q->used + 8, frame, len);
	q->used += need;
	q->queued++;
}

/*
 * Device @i sent a frame (it is inside one of its entry points). The other device takes it at
 * once, without a copy, unless it is inside an entry point itself: that can only be because
 * this frame answers one it is sending right now (its own direct delivery is on the stack),
 * and the model must not be re-entered; then the frame is queued (one copy) for pump().
 */
static void wire_tx(struct fake *f, const void *frame, size_t len)
{
	struct port *pt = f->tx_ctx;
	struct bench *b = pt->b;
	unsigned int i = pt->i;

	if (len == 0 || len > WIRE_MAX_FRAME) {
		b->wq[i].too_big++;
		return;
	}
	if (b->busy[!i] || b->p.copy_wire) {
		wq_put(&b->wq[i], frame, len);
		return;
	}
	b->busy[i] = true;
	b->wq[i].direct++;
	if (!tern_model_rx_frame(b->d[!i]->f.m, frame, len))
		b->refused++;
	b->busy[i] = false;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Give device @i's queued frames to the other one. */
static bool wire_deliver(struct bench *b, unsigned int i)
{
	struct wq *q = &b->wq[i];
	uint8_t *buf = q->buf;
	size_t used = q->used, cap = q->cap, off = 0;

	if (!used)
		return false;
	/* frames sent meanwhile go to the spare buffer: this one is not moved under us */
	q->buf = q->spare;
	q->cap = q->spare_cap;
	q->used = 0;
	while (off < used) {
		uint32_t len;

		memcpy(&len, buf + off, 4);
		if (!tern_model_rx_frame(b->d[!i]->f.m, buf + off + 8, len))
			b->refused++;
		off += 8 + pad8(len);
	}
	q->spare = buf;
	q->spare_cap = cap;
	return true;
}

/*
 * One round of the devices' side: the clock moves to now, due timers fire, kicked devices
 * run, and what they sent crosses the wire.
 */
static void pump(struct bench *b)
{
	uint64_t now = 1000000000ull + (mono_ns() - b->mono0);
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct fake *f = &b->d[i]->f;

		if (now > f->now)
			f->now = now;
		if (f->deadline <= f->now) {
			f->deadline = UINT64_MAX;
			tern_model_timer(f->m);
		}
		if (f->kicks) {
			f->kicks = 0;
			tern_model_run(f->m);
		}
	}
	for (i = 0; i < 2; i++)
		wire_deliver(b, i);
}

/* ---- setup ------------------------------------------------------------------------------- */

#define SQ_LOG		9
#define RQ_LOG		9
#define CQ_LOG		12

static unsigned int mtu_code(unsigned int mtu)
{
	unsigned int c = 1;

	while ((256u << (c - 1)) < mtu)
		c++;
	return c;
}

static bool bench_setup(struct bench *b)
{
	struct connopt o;
	unsigned int s;
	int st;

	b->mono0 = mono_ns();
	for (s = 0; s < 2; s++) {
		b->d[s] = rdev_new_cfg(s, b->p.link_mbps, FK_UNPACED);
		if (!b->d[s]) {
			fprintf(stderr, "tern-speed: device %u could not be set up\n", s);
			return false;
		}
		fk_clear_frames(&b->d[s]->f);
		b->port[s].b = b;
		b->port[s].i = s;
		b->d[s]->f.tx_hook = wire_tx;
		b->d[s]->f.tx_ctx = &b->port[s];
	}
	b->d[1]->f.now = b->d[0]->f.now;
	connopt_default(&o);
	o.mtu = (uint8_t)mtu_code(b->p.mtu);
	o.timeout = 20;			/* 4.3 s: a descheduled process is not a lost packet */
	o.sq_log = SQ_LOG;
	o.sq_stride = 6;		/* header and one SGE */
	o.rq_log = RQ_LOG;
	o.rq_stride = 5;
	o.cq_log = CQ_LOG;
	o.access = TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_REMOTE_READ | TERN_ACCESS_LOCAL_WRITE;
	b->o = o;
	for (s = 0; s < 2; s++) {
		st = cq_create(b->d[s], &b->cq[s], o.cq_log, false);
		if (st) {
			fprintf(stderr, "tern-speed: device %u: CREATE_CQ status %d\n", s, st);
			return false;
		}
	}
	for (s = 0; s < 2; s++) {
		st = mr_create(b->d[s], &b->mr[s], b->d[s]->pdn, FOOTPRINT,
			       TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
			       TERN_ACCESS_REMOTE_READ, 0);
		if (st) {
			fprintf(stderr, "tern-speed: device %u: CREATE_MR status %d\n", s, st);
			return false;
		}
	}
	return true;
}

/*
 * A new connected QP pair for a run (the previous one destroyed): every run starts from empty
 * rings, and no receive WQE of another run's size is left over.
 */
static bool qps_up(struct bench *b)
{
	const struct connopt *o = &b->o;
	unsigned int s;
	int st;

	for (s = 0; s < 2; s++) {
		st = qp_create(b->d[s], &b->qp[s], b->d[s]->pdn, &b->cq[s], &b->cq[s], o->sq_log,
			       o->sq_stride, o->rq_log, o->rq_stride, 0, false);
		if (st) {
			fprintf(stderr, "tern-speed: device %u: CREATE_QP status %d\n", s, st);
			return false;
		}
		b->have_qp[s] = true;
	}
	for (s = 0; s < 2; s++) {
		if (!qp_connect(b->d[s], &b->qp[s], b->d[!s], b->qp[!s].qpn, o, s)) {
			fprintf(stderr, "tern-speed: QPs could not be connected\n");
			return false;
		}
	}
	return true;
}

static void qps_down(struct bench *b)
{
	unsigned int s;

	for (s = 0; s < 2; s++) {
		if (b->have_qp[s] && qp_destroy(b->d[s], &b->qp[s]) != TERN_CMD_OK)
			fprintf(stderr, "tern-speed: device %u: DESTROY_QP failed\n", s);
		b->have_qp[s] = false;
	}
}

static void bench_free(struct bench *b)
{
	unsigned int s;

	for (s = 0; s < 2; s++) {
		if (!b->d[s])
			continue;
		mr_release(&b->mr[s]);
		if (b->have_qp[s]) {
			qmem_free(&b->qp[s].sq);
			qmem_free(&b->qp[s].rq);
		}
		qmem_free(&b->cq[s].mem);
		rdev_free(b->d[s]);
		free(b->wq[s].buf);
		free(b->wq[s].spare);
	}
}

/* ---- one run ----------------------------------------------------------------------------- */

struct result {
	bool ok;
	char why[160];
	uint64_t msgs;			/* completed in the timed window */
	uint64_t wall_ns, cpu_ns;
	uint64_t total_msgs;		/* posted and completed over the run */
};

/* Message slots (each @size bytes) of the run, and WQEs kept posted. */
static unsigned int slots_of(uint32_t size, unsigned int depth)
{
	unsigned int n = FOOTPRINT / size;

	return n < depth ? (n ? n : 1) : depth;
}

static unsigned int depth_of(uint32_t size)
{
	if (size <= 4096)
		return 256;
	return size >= (1u << 20) ? 8 : 64;
}

struct run {
	struct bench *b;
	enum op op;
	uint32_t size;
	unsigned int depth, sig, nslots;
	uint64_t posted, completed;	/* device 0's WQEs */
	uint64_t rq_posted, received;	/* device 1's receive WQEs (SEND) */
	bool failed;
	char why[160];
};

static void fail(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return;
	r->failed = true;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
}

static void post_more(struct run *r)
{
	struct bench *b = r->b;
	bool rang = false;

	while (!r->failed && r->posted - r->completed + r->sig <= r->depth) {
		unsigned int k;

		for (k = 0; k < r->sig; k++) {
			uint64_t i = r->posted;
			uint64_t off = (i % r->nslots) * r->size;
			uint8_t flags = k == r->sig - 1 ? TERN_WQE_F_SIGNALED : 0;
			uint8_t opc = r->op == OP_WRITE ? TERN_WQE_RDMA_WRITE :
				      r->op == OP_READ ? TERN_WQE_RDMA_READ : TERN_WQE_SEND;
			struct sge sg = mr_sge(&b->mr[0], off, r->size);

			/* READ: device 1's slot into device 0's; WRITE and SEND the other way */
			post_send(b->d[0], &b->qp[0], opc, flags, i, &sg, 1, b->mr[1].iova + off,
				  b->mr[1].key, 0);
			r->posted++;
		}
		rang = true;
	}
	if (rang)
		ring_sq(b->d[0], &b->qp[0]);
}

static void post_recvs(struct run *r)
{
	struct bench *b = r->b;
	unsigned int max = 1u << RQ_LOG;
	bool rang = false;

	while (r->rq_posted - r->received < max - 1) {
		uint64_t off = (r->rq_posted % r->nslots) * r->size;
		struct sge sg = mr_sge(&b->mr[1], off, r->size);

		post_recv(b->d[1], &b->qp[1], r->rq_posted, &sg, 1);
		r->rq_posted++;
		rang = true;
	}
	if (rang)
		ring_rq(b->d[1], &b->qp[1]);
}

static void poll_cqs(struct run *r)
{
	struct bench *b = r->b;
	struct wc wc;

	while (cq_poll(b->d[0], &b->cq[0], &wc)) {
		if (wc.status != TERN_CQE_OK)
			fail(r, "device 0: WQE %" PRIu64 " completed with status %u", wc.wr_id,
			     wc.status);
		else if (wc.wr_id < r->completed || wc.wr_id >= r->posted)
			fail(r, "device 0: completion for WQE %" PRIu64 " (%" PRIu64 " posted)",
			     wc.wr_id, r->posted);
		else
			r->completed = wc.wr_id + 1;
		if (r->op == OP_READ && wc.byte_len != r->size)
			fail(r, "READ completion of %u bytes, expected %u", wc.byte_len, r->size);
	}
	while (cq_poll(b->d[1], &b->cq[1], &wc)) {
		if (r->op != OP_SEND || wc.status != TERN_CQE_OK || wc.byte_len != r->size ||
		    wc.wr_id != r->received)
			fail(r, "device 1: unexpected completion (status %u, %u bytes)", wc.status,
			     wc.byte_len);
		r->received++;
	}
	if (r->op == OP_SEND)
		post_recvs(r);
}

/* Where byte @off of @mr is, and how many bytes follow it in the same page (at most @n). */
static uint8_t *span(struct rdev *d, const struct rmr *mr, uint64_t off, uint64_t n, size_t *len)
{
	uint64_t psz = 1ull << mr->page_shift;
	uint64_t room = psz - ((mr->iova + off) & (psz - 1));

	*len = (size_t)(n < room ? n : room);
	return mr_ptr(d, mr, off);
}

/* Source slots get a new pattern, destination slots are cleared. */
static void prepare_data(struct run *r, unsigned int seed)
{
	struct bench *b = r->b;
	const struct rmr *src = r->op == OP_READ ? &b->mr[1] : &b->mr[0];
	const struct rmr *dst = r->op == OP_READ ? &b->mr[0] : &b->mr[1];
	struct rdev *sd = r->op == OP_READ ? b->d[1] : b->d[0];
	struct rdev *dd = r->op == OP_READ ? b->d[0] : b->d[1];
	uint64_t len = (uint64_t)r->nslots * r->size, off, x = seed * 0x9e3779b97f4a7c15ull;
	size_t n, i;

	for (off = 0; off < len; off += n) {
		uint8_t *p = span(sd, src, off, len - off, &n);

		for (i = 0; i < n; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			p[i] = (uint8_t)(x >> 56);
		}
	}
	for (off = 0; off < len; off += n)
		memset(span(dd, dst, off, len - off, &n), 0, n);
}

/* The destination slots written hold the source's bytes. */
static bool check_data(struct run *r)
{
	struct bench *b = r->b;
	const struct rmr *src = r->op == OP_READ ? &b->mr[1] : &b->mr[0];
	const struct rmr *dst = r->op == OP_READ ? &b->mr[0] : &b->mr[1];
	struct rdev *sd = r->op == OP_READ ? b->d[1] : b->d[0];
	struct rdev *dd = r->op == OP_READ ? b->d[0] : b->d[1];
	uint64_t used = r->posted < r->nslots ? r->posted : r->nslots;
	uint64_t len = used * r->size, off;
	size_t n;

	for (off = 0; off < len; off += n) {
		const uint8_t *p = span(sd, src, off, len - off, &n);

		if (memcmp(p, mr_ptr(dd, dst, off), n)) {
			fail(r, "data differs in bytes %" PRIu64 "..%" PRIu64 " of %" PRIu64, off,
			     off + n, len);
			return false;
		}
	}
	return true;
}

struct stats {
	uint8_t b[sizeof(struct tern_cmd_rdma_stats_out)];
};

#define ST(s, f)	RSTAT((s).b, f)

/* Counter deltas of the run agree with what was posted and with each other. */
static void check_counters(struct run *r, const struct stats *s0, const struct stats *s1)
{
	uint64_t req;
	unsigned int i;

#define D(i, f)	(ST(s1[i], f) - ST(s0[i], f))
	for (i = 0; i < 2; i++) {
		if (D(i, tx_roce_packets) != D(!i, rx_roce_packets))
			fail(r, "device %u sent %" PRIu64 " packets, the other took %" PRIu64, i,
			     D(i, tx_roce_packets), D(!i, rx_roce_packets));
		if (D(i, rx_icrc_errors) || D(i, rx_roce_discards) || D(i, retrans_pkts) ||
		    D(i, out_of_buffer) || D(i, rx_pkey_mismatch))
			fail(r, "device %u: ICRC errors, discards, retransmissions or RNR (%" PRIu64
			     ")", i, D(i, rx_icrc_errors) + D(i, rx_roce_discards) +
			     D(i, retrans_pkts) + D(i, out_of_buffer) + D(i, rx_pkey_mismatch));
	}
	req = r->op == OP_WRITE ? D(1, rx_write_requests) :
	      r->op == OP_READ ? D(1, rx_read_requests) : D(1, rx_send_requests);
	if (req != r->posted)
		fail(r, "device 1 counted %" PRIu64 " requests for %" PRIu64 " messages", req,
		     r->posted);
#undef D
}

static bool now_past(uint64_t t)
{
	return mono_ns() >= t;
}

static void run_one(struct bench *b, enum op op, uint32_t size, unsigned int seed,
		    struct result *res)
{
	struct stats s0[2], s1[2];
	struct run r = { .b = b, .op = op, .size = size };
	uint64_t t_warm, t_end, w0 = 0, c0 = 0, m0 = 0, guard;
	bool timing = false;

	memset(res, 0, sizeof(*res));
	if (!qps_up(b)) {
		snprintf(res->why, sizeof(res->why), "QP setup failed");
		qps_down(b);
		return;
	}
	r.depth = depth_of(size);
	r.sig = r.depth >= 64 ? 16 : r.depth / 4;
	r.nslots = slots_of(size, r.depth);
	prepare_data(&r, seed);
	if (!rdev_stats(b->d[0], s0[0].b) || !rdev_stats(b->d[1], s0[1].b)) {
		snprintf(res->why, sizeof(res->why), "QUERY_RDMA_STATS failed");
		return;
	}
	if (op == OP_SEND)
		post_recvs(&r);
	t_warm = mono_ns() + (uint64_t)b->p.warmup_ms * 1000000ull;
	t_end = UINT64_MAX;
	for (;;) {
		poll_cqs(&r);
		if (r.failed)
			break;
		if (!timing && now_past(t_warm)) {
			/* the window starts now, however late the warm-up ended */
			timing = true;
			w0 = mono_ns();
			c0 = cpu_ns();
			m0 = r.completed;
			t_end = w0 + (uint64_t)b->p.ms * 1000000ull;
		}
		if (timing && now_past(t_end)) {
			res->msgs = r.completed - m0;
			res->cpu_ns = cpu_ns() - c0;
			res->wall_ns = mono_ns() - w0;
			break;
		}
		post_more(&r);
		pump(b);
	}
	/* drain: everything posted completes (10 s at most) */
	guard = mono_ns() + 10000000000ull;
	while (!r.failed &&
	       (r.completed != r.posted || (op == OP_SEND && r.received != r.posted))) {
		if (now_past(guard)) {
			fail(&r, "%" PRIu64 " of %" PRIu64 " messages completed after 10 s",
			     r.completed, r.posted);
			break;
		}
		pump(b);
		poll_cqs(&r);
	}
	if (!r.failed && (!rdev_stats(b->d[0], s1[0].b) || !rdev_stats(b->d[1], s1[1].b)))
		fail(&r, "QUERY_RDMA_STATS failed");
	if (!r.failed)
		check_counters(&r, s0, s1);
	if (!r.failed && b->p.spoil && r.posted) {
		const struct rmr *dst = op == OP_READ ? &b->mr[0] : &b->mr[1];

		*mr_ptr(op == OP_READ ? b->d[0] : b->d[1], dst, size / 2) ^= 0x20;
	}
	if (!r.failed)
		check_data(&r);
	qps_down(b);
	res->total_msgs = r.posted;
	res->ok = !r.failed;
	if (r.failed)
		snprintf(res->why, sizeof(res->why), "%s", r.why);
}

/* ---- memcpy over the same footprint -------------------------------------------------------- */

static void run_memcpy(const struct params *p, uint32_t size, uint8_t *src, uint8_t *dst,
		       struct result *res)
{
	unsigned int nslots = slots_of(size, depth_of(size)), k = 0;
	uint64_t t_warm, t_end, w0 = 0, c0 = 0, n = 0, n0 = 0;
	bool timing = false;
	size_t i;

	memset(res, 0, sizeof(*res));
	for (i = 0; i < (size_t)nslots * size; i++)
		src[i] = (uint8_t)(i * 131 + 7);
	t_warm = mono_ns() + (uint64_t)p->warmup_ms * 1000000ull;
	t_end = UINT64_MAX;
	for (;;) {
		unsigned int j;

		/* a batch between clock reads, as the model's loop reads it once per round */
		for (j = 0; j < 16; j++) {
			memcpy(dst + (size_t)k * size, src + (size_t)k * size, size);
			/* keep the copy: the compiler may not drop it */
			__asm__ volatile("" : : "r"(dst) : "memory");
			k = k + 1 == nslots ? 0 : k + 1;
			n++;
		}
		if (!timing && now_past(t_warm)) {
			timing = true;
			w0 = mono_ns();
			c0 = cpu_ns();
			n0 = n;
			t_end = w0 + (uint64_t)p->ms * 1000000ull;
		}
		if (timing && now_past(t_end)) {
			res->msgs = n - n0;
			res->cpu_ns = cpu_ns() - c0;
			res->wall_ns = mono_ns() - w0;
			break;
		}
	}
	res->ok = !memcmp(src, dst, (size_t)(nslots < n ? nslots : n) * size);
	if (!res->ok)
		snprintf(res->why, sizeof(res->why), "memcpy destination differs");
	res->total_msgs = n;
}

/* ---- statistics and output ----------------------------------------------------------------- */

struct series {
	double gbps_cpu[MAX_RUNS], mpps_cpu[MAX_RUNS], gbps_wall[MAX_RUNS], mpps_wall[MAX_RUNS];
	double cpu_share[MAX_RUNS];
	unsigned int n, failed;
	uint64_t msgs;
	char why[160];
};

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, unsigned int n)
{
	double s[MAX_RUNS];

	if (!n)
		return 0;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), dcmp);
	return n & 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double vmin(const double *v, unsigned int n)
{
	double x = n ? v[0] : 0;
	unsigned int i;

	for (i = 1; i < n; i++)
		x = v[i] < x ? v[i] : x;
	return x;
}

static double vmax(const double *v, unsigned int n)
{
	double x = n ? v[0] : 0;
	unsigned int i;

	for (i = 1; i < n; i++)
		x = v[i] > x ? v[i] : x;
	return x;
}

static void series_add(struct series *s, const struct result *r, uint32_t size)
{
	double cpu = r->cpu_ns ? (double)r->cpu_ns / 1e9 : 1e-9;
	double wall = r->wall_ns ? (double)r->wall_ns / 1e9 : 1e-9;

	s->msgs += r->total_msgs;
	if (!r->ok) {
		s->failed++;
		if (!s->why[0])
			snprintf(s->why, sizeof(s->why), "%s", r->why);
		return;
	}
	if (s->n >= MAX_RUNS)
		return;
	s->mpps_cpu[s->n] = (double)r->msgs / cpu / 1e6;
	s->gbps_cpu[s->n] = (double)r->msgs * size * 8 / cpu / 1e9;
	s->mpps_wall[s->n] = (double)r->msgs / wall / 1e6;
	s->gbps_wall[s->n] = (double)r->msgs * size * 8 / wall / 1e9;
	s->cpu_share[s->n] = cpu / wall;
	s->n++;
}

static void json_series(const char *name, const struct series *s, bool last)
{
	printf("\"%s\": {\"runs\": %u, \"failed\": %u, \"messages\": %" PRIu64 ", "
	       "\"gbps_core\": [%.4f, %.4f, %.4f], \"mpps_core\": [%.5f, %.5f, %.5f], "
	       "\"gbps_wall\": [%.4f, %.4f, %.4f], \"mpps_wall\": [%.5f, %.5f, %.5f], "
	       "\"cpu_share\": %.3f, \"why\": \"%s\"}%s",
	       name, s->n, s->failed, s->msgs,
	       median(s->gbps_cpu, s->n), vmin(s->gbps_cpu, s->n), vmax(s->gbps_cpu, s->n),
	       median(s->mpps_cpu, s->n), vmin(s->mpps_cpu, s->n), vmax(s->mpps_cpu, s->n),
	       median(s->gbps_wall, s->n), vmin(s->gbps_wall, s->n), vmax(s->gbps_wall, s->n),
	       median(s->mpps_wall, s->n), vmin(s->mpps_wall, s->n), vmax(s->mpps_wall, s->n),
	       median(s->cpu_share, s->n), s->why, last ? "" : ", ");
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: tern-speed [--ops write,read,send] [--sizes 64,4096,65536,1048576]\n"
		"                  [--runs N] [--warmup-ms MS] [--ms MS] [--mtu 4096]\n"
		"                  [--link-mbps 1000000] [--copy-wire] [--no-memcpy] [--json]\n"
		"                  [--quick] [--spoil]\n"
		"--copy-wire: every frame is queued (copied) on the wire, none handed over directly\n"
		"--spoil: flip a destination byte after each run, before the data check (every\n"
		"         run must then fail: a test of the check)\n"
		"--quick: 1 run of 20 ms after 10 ms of warm-up, for a check of the data path\n");
}

static bool parse_list(const char *s, uint32_t *out, unsigned int max, unsigned int *n)
{
	char *end;

	*n = 0;
	while (*s) {
		unsigned long v = strtoul(s, &end, 0);

		if (end == s || !v || v > (1u << 24) || *n >= max)
			return false;
		out[(*n)++] = (uint32_t)v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return false;
	}
	return *n > 0;
}

static bool parse_ops(const char *s, bool ops[MAX_OPS])
{
	char buf[64], *tok, *save = NULL;
	unsigned int i;

	memset(ops, 0, MAX_OPS * sizeof(bool));
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < MAX_OPS; i++)
			if (!strcmp(tok, op_name[i]))
				break;
		if (i == MAX_OPS)
			return false;
		ops[i] = true;
	}
	return ops[0] || ops[1] || ops[2];
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ops", required_argument, NULL, 'o' }, { "sizes", required_argument, NULL, 's' },
		{ "runs", required_argument, NULL, 'r' },
		{ "warmup-ms", required_argument, NULL, 'w' },
		{ "ms", required_argument, NULL, 't' }, { "mtu", required_argument, NULL, 'm' },
		{ "link-mbps", required_argument, NULL, 'l' }, { "json", no_argument, NULL, 'j' },
		{ "no-memcpy", no_argument, NULL, 'n' }, { "quick", no_argument, NULL, 'q' },
		{ "copy-wire", no_argument, NULL, 'c' },
		{ "spoil", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	static struct series tern[MAX_OPS][MAX_SIZES], mc[MAX_SIZES];
	struct bench b;
	struct result res;
	unsigned int i, k, run, nfail = 0;
	uint8_t *msrc = NULL, *mdst = NULL;
	int c;

	memset(&b, 0, sizeof(b));
	b.p.ops[OP_WRITE] = b.p.ops[OP_READ] = b.p.ops[OP_SEND] = true;
	b.p.sizes[0] = 64;
	b.p.sizes[1] = 4096;
	b.p.sizes[2] = 65536;
	b.p.sizes[3] = 1u << 20;
	b.p.nsizes = 4;
	b.p.runs = 5;
	b.p.warmup_ms = 200;
	b.p.ms = 1000;
	b.p.mtu = 4096;
	b.p.link_mbps = 1000000;
	b.p.memcpy_ref = true;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!parse_ops(optarg, b.p.ops))
				goto bad;
			break;
		case 's':
			if (!parse_list(optarg, b.p.sizes, MAX_SIZES, &b.p.nsizes))
				goto bad;
			break;
		case 'r':
			b.p.runs = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'w':
			b.p.warmup_ms = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 't':
			b.p.ms = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'm':
			b.p.mtu = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'l':
			b.p.link_mbps = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'j':
			b.p.json = true;
			break;
		case 'n':
			b.p.memcpy_ref = false;
			break;
		case 'c':
			b.p.copy_wire = true;
			break;
		case 'x':
			b.p.spoil = true;
			break;
		case 'q':
			b.p.runs = 1;
			b.p.warmup_ms = 10;
			b.p.ms = 20;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc || !b.p.runs || b.p.runs > MAX_RUNS || !b.p.ms ||
	    b.p.mtu < 256 || b.p.mtu > 4096 || (b.p.mtu & (b.p.mtu - 1)) || !b.p.link_mbps)
		goto bad;
	for (k = 0; k < b.p.nsizes; k++) {
		if (b.p.sizes[k] > FOOTPRINT)
			goto bad;
	}
	if (!bench_setup(&b)) {
		bench_free(&b);
		return 2;
	}
	if (b.p.memcpy_ref) {
		msrc = aligned_alloc(4096, FOOTPRINT);
		mdst = aligned_alloc(4096, FOOTPRINT);
		if (!msrc || !mdst) {
			fprintf(stderr, "tern-speed: out of memory\n");
			return 2;
		}
		memset(mdst, 0, FOOTPRINT);
	}
	/* runs interleaved: run 1 of everything, then run 2, ... (the host's load drifts) */
	for (run = 0; run < b.p.runs; run++) {
		for (k = 0; k < b.p.nsizes; k++) {
			for (i = 0; i < MAX_OPS; i++) {
				if (!b.p.ops[i])
					continue;
				run_one(&b, (enum op)i, b.p.sizes[k], run * 31 + k * 3 + i + 1,
					&res);
				series_add(&tern[i][k], &res, b.p.sizes[k]);
				if (!res.ok) {
					nfail++;
					fprintf(stderr, "tern-speed: %s %u B run %u failed: %s\n",
						op_name[i], b.p.sizes[k], run + 1, res.why);
				}
			}
			if (b.p.memcpy_ref) {
				run_memcpy(&b.p, b.p.sizes[k], msrc, mdst, &res);
				series_add(&mc[k], &res, b.p.sizes[k]);
			}
		}
	}
	if (b.p.json) {
		printf("{\"runs\": %u, \"warmup_ms\": %u, \"ms\": %u, \"mtu\": %u, "
		       "\"link_mbps\": %u, \"wire_direct\": %lu, \"wire_queued\": %lu, "
		       "\"wire_refused\": %lu, \"wire_too_big\": %lu, \"results\": [", b.p.runs,
		       b.p.warmup_ms, b.p.ms, b.p.mtu, b.p.link_mbps,
		       b.wq[0].direct + b.wq[1].direct, b.wq[0].queued + b.wq[1].queued, b.refused,
		       b.wq[0].too_big + b.wq[1].too_big);
		for (k = 0; k < b.p.nsizes; k++) {
			printf("%s{\"size\": %u, ", k ? ", " : "", b.p.sizes[k]);
			for (i = 0; i < MAX_OPS; i++) {
				if (b.p.ops[i])
					json_series(op_name[i], &tern[i][k], false);
			}
			json_series("memcpy", &mc[k], true);
			printf("}");
		}
		printf("]}\n");
	} else {
		printf("# tern-speed: %u run(s) of %u ms after %u ms warm-up, MTU %u; medians "
		       "(min..max), per core = over this thread's CPU time\n", b.p.runs, b.p.ms,
		       b.p.warmup_ms, b.p.mtu);
		printf("%-7s %8s %26s %26s %8s\n", "op", "size", "Gb/s per core", "Mmsg/s per core",
		       "cpu/wall");
		for (k = 0; k < b.p.nsizes; k++) {
			for (i = 0; i <= MAX_OPS; i++) {
				const struct series *s = i < MAX_OPS ? &tern[i][k] : &mc[k];

				if (i < MAX_OPS ? !b.p.ops[i] : !b.p.memcpy_ref)
					continue;
				if (!s->n) {
					printf("%-7s %8u %s\n", i < MAX_OPS ? op_name[i] : "memcpy",
					       b.p.sizes[k], s->why);
					continue;
				}
				printf("%-7s %8u %9.3f (%7.3f..%7.3f) %9.4f (%7.4f..%7.4f) %8.2f\n",
				       i < MAX_OPS ? op_name[i] : "memcpy", b.p.sizes[k],
				       median(s->gbps_cpu, s->n), vmin(s->gbps_cpu, s->n),
				       vmax(s->gbps_cpu, s->n), median(s->mpps_cpu, s->n),
				       vmin(s->mpps_cpu, s->n), vmax(s->mpps_cpu, s->n),
				       median(s->cpu_share, s->n));
			}
		}
		printf("# wire: %lu frames handed over directly, %lu queued (copied), %lu refused, "
		       "%lu too long\n", b.wq[0].direct + b.wq[1].direct,
		       b.wq[0].queued + b.wq[1].queued, b.refused,
		       b.wq[0].too_big + b.wq[1].too_big);
		printf("# checks after every run (destination = source, completions, counters): "
		       "%u run(s) failed\n", nfail);
	}
	free(msrc);
	free(mdst);
	bench_free(&b);
	return nfail ? 1 : 0;
bad:
	usage(stderr);
	return 2;
}
