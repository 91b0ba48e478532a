/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern-switch: the switch model (switch.h) in real time, joining QEMU guests.
 *
 * One unix stream socket per switch port; each guest's QEMU connects to its port as a client
 * (-netdev stream,server=off,addr.type=unix,addr.path=...). On the socket every frame is a
 * 4-byte big-endian length followed by the frame (destination MAC first, no FCS), QEMU's
 * stream netdev framing. The model's clock is CLOCK_MONOTONIC; its one-shot timer and the
 * frames waiting for their arrival time (propagation delay) share one timerfd; the event loop
 * is epoll. The model's "now" is the time an event should have happened: a late timer
 * wake-up runs each overdue deadline at its own time (the model then sends back to back what
 * an exact timer would have sent, and those frames go out at once), a frame read from a
 * guest arrives at the time it is read; the clock never goes backwards. Nothing blocks on a
 * guest: a port's frames wait in its output queue and are
 * written when the socket is writable; a guest that does not read for a long time makes its
 * queue grow up to --sock-queue bytes, beyond which frames are dropped and counted (that is
 * loss the switch model never saw: the "process" part of the statistics reports it).
 *
 * Statistics (--stats FILE): {"switch": tsw_dump_json(), "process": {...}}, written on
 * SIGUSR1 and when the switch exits (SIGTERM, SIGINT), atomically (FILE.tmp, then rename).
 * The process part also has a measurement window: every egress FIFO's depth sampled every
 * --sample-us microseconds (p50, p99, mean) and its high-water mark (checked after every
 * frame received), since the start or the last SIGUSR2; SIGUSR2 writes the statistics like
 * SIGUSR1 and then starts a new window. The switch model's own counters are cumulative.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "switch.h"

#define MAX_FRAME	(65536 + 4096)	/* QEMU's largest stream netdev packet */
#define READ_CHUNK	(64 * 1024)	/* per port per loop iteration (fairness) */
#define TIMER_LOOPS	100000		/* tsw_timer calls per wake-up, at most */
#define HIST_BIN	1024		/* queue depth histogram: bytes per bin */
#define HIST_BINS	4096		/* the last bin takes everything deeper */

/* One egress FIFO's depth in the current window. */
struct qwin {
	uint64_t max_bytes, samples, sum_bytes;
	uint32_t hist[HIST_BINS];
};

struct pending {
	struct pending *next;
	uint64_t arrive_ns;
	size_t len;
	uint8_t data[];
};

struct port {
	unsigned int idx;
	const char *path;
	int lfd;			/* listening socket */
	int fd;				/* the guest's connection, -1 when none */
	/* input: bytes read, not yet a whole frame */
	uint8_t *in;
	size_t in_len;
	/* frames delivered by the model, waiting for their arrival time (FIFO) */
	struct pending *head, *tail;
	/* output: framed bytes to write */
	uint8_t *out;
	size_t out_head, out_len, out_cap;
	bool want_out;			/* EPOLLOUT registered */
	/* process-level counters */
	uint64_t connects, rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t drop_unconnected, drop_queue_full, drop_bad_len;
	uint64_t max_out_bytes;
};

static struct tsw *sw;
static struct tsw_config cfg;
static struct port ports[TSW_MAX_PORTS];
static unsigned int nports;
static int epfd, tfd, sfd;
static uint64_t sw_deadline = UINT64_MAX;
static uint64_t armed = UINT64_MAX;
static size_t sock_queue_max = 64u << 20;
static const char *stats_path;
static uint64_t start_ns, late_max_ns, timer_calls;
static uint64_t model_now;		/* the model's clock (see the top of the file) */
static int verbose;
static struct qwin (*qwin)[TSW_NUM_PRIO];	/* [port][prio] */
static uint64_t window_start, sample_ns = 100000, next_sample = UINT64_MAX;

/* epoll data: tag in the top bits, port in the low ones */
enum { EV_LISTEN = 1, EV_CONN = 2, EV_TIMER = 3, EV_SIGNAL = 4 };
#define EV(tag, p)	(((uint64_t)(tag) << 32) | (p))

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void logmsg(const char *fmt, ...)
{
	va_list ap;
	uint64_t t = mono_ns() - start_ns;

	fprintf(stderr, "[%7" PRIu64 ".%03" PRIu64 "] ", t / UINT64_C(1000000000),
		(t / UINT64_C(1000000)) % 1000);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("tern-switch: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		die("out of memory");
	return p;
}

static void ep_ctl(int op, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	if (epoll_ctl(epfd, op, fd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
}

/* ---- the model's host callbacks ------------------------------------------------------- */

static uint64_t host_now(void *opaque)
{
	(void)opaque;
	return model_now;
}

/* The model's clock moves to @t (never backwards). */
static void set_model_now(uint64_t t)
{
	if (t > model_now)
		model_now = t;
}

static void host_timer_arm(void *opaque, uint64_t deadline_ns)
{
	(void)opaque;
	sw_deadline = deadline_ns;
}

static void out_append(struct port *p, const void *frame, size_t len)
{
	size_t need = 4 + len;
	uint8_t *o;

	if (p->fd < 0) {
		p->drop_unconnected++;
		return;
	}
	if (p->out_len + need > sock_queue_max) {
		p->drop_queue_full++;
		return;
	}
	if (p->out_head && p->out_head + p->out_len + need > p->out_cap) {
		memmove(p->out, p->out + p->out_head, p->out_len);
		p->out_head = 0;
	}
	if (p->out_len + need > p->out_cap) {
		size_t cap = p->out_cap ? p->out_cap : 256 * 1024;

		while (cap < p->out_len + need)
			cap *= 2;
		p->out = realloc(p->out, cap);
		if (!p->out)
			die("out of memory");
		p->out_cap = cap;
	}
	o = p->out + p->out_head + p->out_len;
	o[0] = (uint8_t)(len >> 24);
	o[1] = (uint8_t)(len >> 16);
	o[2] = (uint8_t)(len >> 8);
	o[3] = (uint8_t)len;
	memcpy(o + 4, frame, len);
	p->out_len += need;
	p->tx_frames++;
	p->tx_bytes += len;
	if (p->out_len > p->max_out_bytes)
		p->max_out_bytes = p->out_len;
}

static void host_deliver(void *opaque, unsigned int port, const void *frame, size_t len,
			 uint64_t arrive_ns)
{
	struct port *p;
	struct pending *f;

	(void)opaque;
	if (port >= nports)
		return;
	p = &ports[port];
	if (p->fd < 0) {
		p->drop_unconnected++;
		return;
	}
	f = xmalloc(sizeof(*f) + len);
	f->next = NULL;
	f->arrive_ns = arrive_ns;
	f->len = len;
	memcpy(f->data, frame, len);
	if (p->tail)
		p->tail->next = f;
	else
		p->head = f;
	p->tail = f;
}

/* ---- the measurement window ----------------------------------------------------------- */

static void window_reset(void)
{
	memset(qwin, 0, sizeof(*qwin) * nports);
	window_start = mono_ns();
	next_sample = sample_ns ? window_start + sample_ns : UINT64_MAX;
}

/* High-water marks: queues only grow in tsw_rx(). */
static void window_max(void)
{
	unsigned int p, q;

	for (p = 0; p < nports; p++)
		for (q = 0; q < TSW_NUM_PRIO; q++) {
			uint64_t b = tsw_queue_bytes(sw, p, q);

			if (b > qwin[p][q].max_bytes)
				qwin[p][q].max_bytes = b;
		}
}

static void window_sample(uint64_t now)
{
	unsigned int p, q;

	if (now < next_sample)
		return;
	for (p = 0; p < nports; p++)
		for (q = 0; q < TSW_NUM_PRIO; q++) {
			struct qwin *w = &qwin[p][q];
			uint64_t b = tsw_queue_bytes(sw, p, q), bin = b / HIST_BIN;

			w->samples++;
			w->sum_bytes += b;
			w->hist[bin < HIST_BINS ? bin : HIST_BINS - 1]++;
		}
	/* one sample per period, however late: a stalled switch does not stuff the histogram */
	next_sample += sample_ns * ((now - next_sample) / sample_ns + 1);
}

/* The depth (bytes, rounded down to HIST_BIN) at or below which @pct percent of the samples
 * lie. */
static uint64_t window_pct(const struct qwin *w, unsigned int pct)
{
	uint64_t need = (w->samples * pct + 99) / 100, seen = 0;
	unsigned int i;

	if (!w->samples)
		return 0;
	for (i = 0; i < HIST_BINS; i++) {
		seen += w->hist[i];
		if (seen >= need)
			break;
	}
	if (i >= HIST_BINS)
		i = HIST_BINS - 1;
	return (uint64_t)i * HIST_BIN;
}

static void write_window(FILE *f)
{
	unsigned int p, q;
	bool first = true;

	fprintf(f, ", \"window\": {\"since_ns\": %" PRIu64 ", \"sample_ns\": %" PRIu64
		", \"hist_bin_bytes\": %d, \"queues\": [", mono_ns() - window_start, sample_ns,
		HIST_BIN);
	for (p = 0; p < nports; p++)
		for (q = 0; q < TSW_NUM_PRIO; q++) {
			const struct qwin *w = &qwin[p][q];

			if (!w->max_bytes)
				continue;	/* never held a frame in this window */
			fprintf(f, "%s\n {\"port\": %u, \"prio\": %u, \"max_bytes\": %" PRIu64
				", \"samples\": %" PRIu64 ", \"mean_bytes\": %" PRIu64
				", \"p50_bytes\": %" PRIu64 ", \"p99_bytes\": %" PRIu64 "}",
				first ? "" : ",", p, q, w->max_bytes, w->samples,
				w->samples ? w->sum_bytes / w->samples : 0, window_pct(w, 50),
				window_pct(w, 99));
			first = false;
		}
	fprintf(f, "]}");
}

/* ---- sockets -------------------------------------------------------------------------- */

static void port_listen(struct port *p)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(p->path) >= sizeof(sa.sun_path))
		die("socket path too long: %s", p->path);
	strcpy(sa.sun_path, p->path);
	unlink(p->path);
	p->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->lfd < 0)
		die("socket: %s", strerror(errno));
	if (bind(p->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind %s: %s", p->path, strerror(errno));
	if (listen(p->lfd, 4) < 0)
		die("listen %s: %s", p->path, strerror(errno));
	ep_ctl(EPOLL_CTL_ADD, p->lfd, EPOLLIN, EV(EV_LISTEN, p->idx));
}

static void port_drop_pending(struct port *p)
{
	while (p->head) {
		struct pending *f = p->head;

		p->head = f->next;
		p->drop_unconnected++;
		free(f);
	}
	p->tail = NULL;
}

static void port_disconnect(struct port *p, const char *why)
{
	if (p->fd < 0)
		return;
	logmsg("port %u: guest disconnected (%s)", p->idx, why);
	epoll_ctl(epfd, EPOLL_CTL_DEL, p->fd, NULL);
	close(p->fd);
	p->fd = -1;
	p->in_len = 0;
	p->out_head = p->out_len = 0;
	p->want_out = false;
	port_drop_pending(p);
}

static void port_accept(struct port *p)
{
	int fd = accept4(p->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR)
			logmsg("port %u: accept: %s", p->idx, strerror(errno));
		return;
	}
	if (p->fd >= 0)
		port_disconnect(p, "replaced by a new connection");
	p->fd = fd;
	p->connects++;
	ep_ctl(EPOLL_CTL_ADD, fd, EPOLLIN, EV(EV_CONN, p->idx));
	logmsg("port %u: guest connected (%s)", p->idx, p->path);
}

static void port_update_events(struct port *p)
{
	bool want = p->out_len > 0;

	if (p->fd < 0 || want == p->want_out)
		return;
	ep_ctl(EPOLL_CTL_MOD, p->fd, EPOLLIN | (want ? EPOLLOUT : 0), EV(EV_CONN, p->idx));
	p->want_out = want;
}

static void port_write(struct port *p)
{
	while (p->fd >= 0 && p->out_len) {
		ssize_t n = write(p->fd, p->out + p->out_head, p->out_len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				port_disconnect(p, strerror(errno));
			break;
		}
		p->out_head += (size_t)n;
		p->out_len -= (size_t)n;
	}
	if (!p->out_len)
		p->out_head = 0;
	port_update_events(p);
}

static void port_read(struct port *p)
{
	size_t got = 0;

	if (!p->in)
		p->in = xmalloc(MAX_FRAME + 4 + READ_CHUNK);
	while (p->fd >= 0 && got < READ_CHUNK) {
		size_t off = 0;
		ssize_t n = read(p->fd, p->in + p->in_len, READ_CHUNK);

		if (n == 0) {
			port_disconnect(p, "end of file");
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				port_disconnect(p, strerror(errno));
			return;
		}
		got += (size_t)n;
		p->in_len += (size_t)n;
		while (p->in_len - off >= 4) {
			const uint8_t *h = p->in + off;
			uint32_t len = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 |
				       (uint32_t)h[2] << 8 | h[3];

			if (len > MAX_FRAME) {
				p->drop_bad_len++;
				port_disconnect(p, "bad frame length");
				return;
			}
			if (p->in_len - off < 4 + len)
				break;
			p->rx_frames++;
			p->rx_bytes += len;
			if (len >= 14) {
				set_model_now(mono_ns());
				tsw_rx(sw, p->idx, h + 4, len);
				window_max();
			}
			else
				p->drop_bad_len++;
			off += 4 + len;
		}
		memmove(p->in, p->in + off, p->in_len - off);
		p->in_len -= off;
	}
}

/* ---- time ----------------------------------------------------------------------------- */

/* Frames whose arrival time has come go to their output queues. */
static uint64_t release_pending(uint64_t now)
{
	uint64_t next = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < nports; i++) {
		struct port *p = &ports[i];
		bool moved = false;

		while (p->head && p->head->arrive_ns <= now) {
			struct pending *f = p->head;

			p->head = f->next;
			if (!p->head)
				p->tail = NULL;
			out_append(p, f->data, f->len);
			free(f);
			moved = true;
		}
		if (moved)
			port_write(p);
		if (p->head && p->head->arrive_ns < next)
			next = p->head->arrive_ns;
	}
	return next;
}

/* Every overdue deadline, each at its own time (see the top of the file). */
static void run_timers(void)
{
	unsigned int loops = 0;
	uint64_t now = mono_ns();

	while (sw_deadline <= now && loops++ < TIMER_LOOPS) {
		if (now - sw_deadline > late_max_ns)
			late_max_ns = now - sw_deadline;
		set_model_now(sw_deadline);
		sw_deadline = UINT64_MAX;
		timer_calls++;
		tsw_timer(sw);
	}
	set_model_now(now);
}

static void arm(uint64_t when)
{
	struct itimerspec its = { 0 };

	if (when == armed)
		return;
	armed = when;
	if (when != UINT64_MAX) {
		its.it_value.tv_sec = (time_t)(when / 1000000000ull);
		its.it_value.tv_nsec = (long)(when % 1000000000ull);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		die("timerfd_settime: %s", strerror(errno));
}

/* ---- statistics ----------------------------------------------------------------------- */

static void write_stats(const char *why)
{
	char tmp[4096];
	FILE *f;
	unsigned int i;

	if (!stats_path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", stats_path);
	f = fopen(tmp, "w");
	if (!f) {
		logmsg("cannot write %s: %s", tmp, strerror(errno));
		return;
	}
	fprintf(f, "{\"switch\": ");
	tsw_dump_json(sw, f);
	fprintf(f, ",\n\"process\": {\"why\": \"%s\", \"uptime_ns\": %" PRIu64
		", \"timer_calls\": %" PRIu64 ", \"timer_late_max_ns\": %" PRIu64
		", \"sock_queue_max\": %zu, \"ports\": [", why, mono_ns() - start_ns, timer_calls,
		late_max_ns, sock_queue_max);
	for (i = 0; i < nports; i++) {
		struct port *p = &ports[i];

		fprintf(f, "%s\n {\"port\": %u, \"connected\": %s, \"connects\": %" PRIu64
			", \"rx_frames\": %" PRIu64 ", \"rx_bytes\": %" PRIu64
			", \"tx_frames\": %" PRIu64 ", \"tx_bytes\": %" PRIu64
			", \"drop_unconnected\": %" PRIu64 ", \"drop_queue_full\": %" PRIu64
			", \"drop_bad_len\": %" PRIu64 ", \"max_out_bytes\": %" PRIu64 "}",
			i ? "," : "", i, p->fd >= 0 ? "true" : "false", p->connects, p->rx_frames,
			p->rx_bytes, p->tx_frames, p->tx_bytes, p->drop_unconnected,
			p->drop_queue_full, p->drop_bad_len, p->max_out_bytes);
	}
	fprintf(f, "]");
	write_window(f);
	fprintf(f, "}}\n");
	if (fclose(f) != 0 || rename(tmp, stats_path) < 0)
		logmsg("cannot write %s: %s", stats_path, strerror(errno));
}

/* ---- options -------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: tern-switch [options] --port PATH --port PATH ...\n"
"  The switch model (model/fabric/switch.h) in real time; port k (in --port order) listens\n"
"  on unix socket PATH for one QEMU -netdev stream client. Defaults: tsw_config_default().\n"
"  --port PATH            a port's socket (1..%d of them)\n"
"  --link-mbps N          every port's rate, Mb/s\n"
"  --delay-ns N           propagation delay switch -> NIC\n"
"  --buffer BYTES         shared packet buffer\n"
"  --pfc-mask M           lossless priorities (bit mask, e.g. 0x08)\n"
"  --ecn-mask M           priorities with RED/ECN marking\n"
"  --strict-mask M        strict priorities (e.g. 0x40 for CNPs on 6)\n"
"  --xoff BYTES --xon BYTES          per ingress (port, priority) PFC thresholds\n"
"  --kmin BYTES --kmax BYTES --pmax-ppm N   RED marking per egress FIFO\n"
"  --dscp-prio D:P[,D:P...]  DSCP to priority (others keep the default map)\n"
"  --seed N               RED's random seed\n"
"  --int-mask M           priorities whose INT requests get hop records (HPCC; default 0)\n"
"  --int-mtu BYTES        largest IP packet INT may grow a frame to (default 9000)\n"
"  --stats FILE           statistics JSON, written on SIGUSR1 and at exit\n"
"  --sock-queue BYTES     output queue per guest socket before dropping (default %zu)\n"
"  --sample-us N          queue depth sampling period of the window, 0: off (default 100)\n"
"  --verbose              log the configuration\n"
"  Signals: SIGUSR1 writes the statistics, SIGUSR2 writes them and starts a new window,\n"
"  SIGTERM/SIGINT write them and exit.\n", TSW_MAX_PORTS, sock_queue_max);
}

static uint64_t num(const char *opt, const char *s, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v > max)
		die("--%s: bad value '%s' (0..%" PRIu64 ")", opt, s, max);
	return v;
}

static void parse_dscp_prio(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;

	if (!copy)
		die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');

		if (!colon)
			die("--dscp-prio: expected DSCP:PRIO, got '%s'", tok);
		*colon = 0;
		cfg.dscp_prio[num("dscp-prio", tok, 63)] = (uint8_t)num("dscp-prio", colon + 1, 7);
	}
	free(copy);
}

enum {
	O_PORT = 256, O_LINK, O_DELAY, O_BUFFER, O_PFC, O_ECN, O_STRICT, O_XOFF, O_XON, O_KMIN,
	O_KMAX, O_PMAX, O_DSCP, O_SEED, O_INT, O_INTMTU, O_STATS, O_SOCKQ, O_SAMPLE, O_VERBOSE,
	O_HELP,
};

static const struct option options[] = {
	{ "port", required_argument, NULL, O_PORT },
	{ "link-mbps", required_argument, NULL, O_LINK },
	{ "delay-ns", required_argument, NULL, O_DELAY },
	{ "buffer", required_argument, NULL, O_BUFFER },
	{ "pfc-mask", required_argument, NULL, O_PFC },
	{ "ecn-mask", required_argument, NULL, O_ECN },
	{ "strict-mask", required_argument, NULL, O_STRICT },
	{ "xoff", required_argument, NULL, O_XOFF },
	{ "xon", required_argument, NULL, O_XON },
	{ "kmin", required_argument, NULL, O_KMIN },
	{ "kmax", required_argument, NULL, O_KMAX },
	{ "pmax-ppm", required_argument, NULL, O_PMAX },
	{ "dscp-prio", required_argument, NULL, O_DSCP },
	{ "seed", required_argument, NULL, O_SEED },
	{ "int-mask", required_argument, NULL, O_INT },
	{ "int-mtu", required_argument, NULL, O_INTMTU },
	{ "stats", required_argument, NULL, O_STATS },
	{ "sock-queue", required_argument, NULL, O_SOCKQ },
	{ "sample-us", required_argument, NULL, O_SAMPLE },
	{ "verbose", no_argument, NULL, O_VERBOSE },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

#define CFG_FIELD(f)	offsetof(struct tsw_config, f), sizeof(((struct tsw_config *)0)->f)

/* The options that set one number of the switch model's configuration: name, range, field. */
static const struct cfg_opt {
	int opt;
	const char *name;
	uint64_t max;
	size_t off, size;
} cfg_opts[] = {
	{ O_LINK, "link-mbps", 1000000, CFG_FIELD(link_mbps) },
	{ O_DELAY, "delay-ns", 10000000000ull, CFG_FIELD(delay_ns) },
	{ O_BUFFER, "buffer", UINT32_MAX, CFG_FIELD(buffer_bytes) },
	{ O_PFC, "pfc-mask", 0xff, CFG_FIELD(pfc_mask) },
	{ O_ECN, "ecn-mask", 0xff, CFG_FIELD(ecn_mask) },
	{ O_STRICT, "strict-mask", 0xff, CFG_FIELD(strict_mask) },
	{ O_XOFF, "xoff", UINT32_MAX, CFG_FIELD(xoff_bytes) },
	{ O_XON, "xon", UINT32_MAX, CFG_FIELD(xon_bytes) },
	{ O_KMIN, "kmin", UINT32_MAX, CFG_FIELD(kmin_bytes) },
	{ O_KMAX, "kmax", UINT32_MAX, CFG_FIELD(kmax_bytes) },
	{ O_PMAX, "pmax-ppm", 1000000, CFG_FIELD(pmax_ppm) },
	{ O_SEED, "seed", UINT64_MAX, CFG_FIELD(seed) },
	{ O_INT, "int-mask", 0xff, CFG_FIELD(int_mask) },
	{ O_INTMTU, "int-mtu", UINT32_MAX, CFG_FIELD(int_mtu) },
};

/* Store @v (already within the option's range) in the configuration field of @o. */
static void cfg_store(const struct cfg_opt *o, uint64_t v)
{
	uint8_t *field = (uint8_t *)&cfg + o->off;
	uint32_t v32 = (uint32_t)v;
	uint8_t v8 = (uint8_t)v;

	if (o->size == sizeof(uint64_t))
		memcpy(field, &v, sizeof(v));
	else if (o->size == sizeof(uint32_t))
		memcpy(field, &v32, sizeof(v32));
	else
		memcpy(field, &v8, sizeof(v8));
}

/* One configuration option, in command line order after tsw_config_default(). */
static void cfg_apply(int opt, const char *a)
{
	unsigned int i;

	if (opt == O_DSCP) {
		parse_dscp_prio(a);
		return;
	}
	for (i = 0; i < sizeof(cfg_opts) / sizeof(cfg_opts[0]); i++) {
		if (cfg_opts[i].opt != opt)
			continue;
		cfg_store(&cfg_opts[i], num(cfg_opts[i].name, a, cfg_opts[i].max));
		if (opt == O_LINK && !cfg.link_mbps)
			die("--link-mbps must be > 0");
		return;
	}
}

/* options apply after tsw_config_default(nports), which needs the port count */
struct opt_set {
	int opt;
	const char *arg;
};

/* The command line: the process's own options at once, the configuration's into @set. */
static unsigned int collect_args(int argc, char **argv, const char **paths, struct opt_set *set,
				 unsigned int set_max)
{
	unsigned int nset = 0;
	int c;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case O_PORT:
			if (nports >= TSW_MAX_PORTS)
				die("at most %d ports", TSW_MAX_PORTS);
			paths[nports++] = optarg;
			break;
		case O_STATS:
			stats_path = optarg;
			break;
		case O_SOCKQ:
			sock_queue_max = (size_t)num("sock-queue", optarg, 1ull << 32);
			break;
		case O_SAMPLE:
			sample_ns = num("sample-us", optarg, 1000000) * 1000;
			break;
		case O_VERBOSE:
			verbose = 1;
			break;
		case 'h':
		case O_HELP:
			usage(stdout);
			exit(0);
		case '?':
			usage(stderr);
			exit(2);
		default:
			if (nset >= set_max)
				die("too many options");
			set[nset].opt = c;
			set[nset++].arg = optarg;
			break;
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (see --help)", argv[optind]);
	if (!nports)
		die("no --port given (see --help)");
	return nset;
}

static void parse_args(int argc, char **argv)
{
	const char *paths[TSW_MAX_PORTS];
	struct opt_set set[64];
	unsigned int nset, i;

	nset = collect_args(argc, argv, paths, set, sizeof(set) / sizeof(set[0]));
	tsw_config_default(&cfg, nports);
	cfg.nports = nports;
	for (i = 0; i < nset; i++)
		cfg_apply(set[i].opt, set[i].arg);
	if (cfg.xon_bytes > cfg.xoff_bytes)
		die("--xon (%u) must not exceed --xoff (%u)", cfg.xon_bytes, cfg.xoff_bytes);
	if (cfg.kmin_bytes > cfg.kmax_bytes)
		die("--kmin (%u) must not exceed --kmax (%u)", cfg.kmin_bytes, cfg.kmax_bytes);
	for (i = 0; i < nports; i++) {
		ports[i].idx = i;
		ports[i].path = paths[i];
		ports[i].fd = -1;
		ports[i].lfd = -1;
	}
}

/* ---- main loop ------------------------------------------------------------------------ */

/* epoll, the timerfd, the signals as a signalfd, the listening sockets, the window. */
static void setup_events(void)
{
	sigset_t sigs;
	unsigned int i;

	epfd = epoll_create1(EPOLL_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGUSR2);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) < 0)
		die("sigprocmask: %s", strerror(errno));
	sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (epfd < 0 || tfd < 0 || sfd < 0)
		die("epoll/timerfd/signalfd: %s", strerror(errno));
	ep_ctl(EPOLL_CTL_ADD, tfd, EPOLLIN, EV(EV_TIMER, 0));
	ep_ctl(EPOLL_CTL_ADD, sfd, EPOLLIN, EV(EV_SIGNAL, 0));
	for (i = 0; i < nports; i++)
		port_listen(&ports[i]);
	qwin = calloc(nports, sizeof(*qwin));
	if (!qwin)
		die("out of memory");
	window_reset();
}

static void log_config(void)
{
	unsigned int i;

	logmsg("%u ports, link %u Mb/s, delay %" PRIu64 " ns, buffer %u B, pfc 0x%02x ecn 0x%02x "
	       "strict 0x%02x, xoff %u xon %u, kmin %u kmax %u pmax %u ppm, seed %" PRIu64
	       ", int 0x%02x mtu %u",
	       nports, cfg.link_mbps, cfg.delay_ns, cfg.buffer_bytes, cfg.pfc_mask, cfg.ecn_mask,
	       cfg.strict_mask, cfg.xoff_bytes, cfg.xon_bytes, cfg.kmin_bytes, cfg.kmax_bytes,
	       cfg.pmax_ppm, cfg.seed, cfg.int_mask, cfg.int_mtu);
	if (verbose) {
		char map[64 * 6 + 1] = "", *w = map;

		for (i = 0; i < 64; i++)
			if (cfg.dscp_prio[i])
				w += sprintf(w, " %u:%u", i, cfg.dscp_prio[i]);
		logmsg("dscp-prio (non-zero):%s", map);
	}
	for (i = 0; i < nports; i++)
		logmsg("port %u: listening on %s", i, ports[i].path);
}

/* The signalfd is readable; false when a signal asks the switch to exit. */
static bool handle_signals(void)
{
	struct signalfd_siginfo si;
	bool run = true;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
			write_stats("SIGUSR1");
		} else if (si.ssi_signo == SIGUSR2) {
			write_stats("SIGUSR2");
			window_reset();
		} else {
			logmsg("signal %u: exiting", si.ssi_signo);
			run = false;
		}
	}
	return run;
}

/* One epoll event; false when the switch is to exit. */
static bool handle_event(const struct epoll_event *ev)
{
	unsigned int tag = (unsigned int)(ev->data.u64 >> 32);
	struct port *p = &ports[(uint32_t)ev->data.u64 % TSW_MAX_PORTS];
	uint64_t ticks;

	switch (tag) {
	case EV_LISTEN:
		port_accept(p);
		break;
	case EV_CONN:
		if (ev->events & EPOLLOUT)
			port_write(p);
		if (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
			run_timers();
			port_read(p);
		}
		break;
	case EV_TIMER:
		if (read(tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
			die("timerfd read: %s", strerror(errno));
		armed = UINT64_MAX;
		break;
	case EV_SIGNAL:
		return handle_signals();
	}
	return true;
}

/* Until a signal to exit: the model's due timers, the window, pending frames, then epoll. */
static void event_loop(void)
{
	struct epoll_event evs[TSW_MAX_PORTS * 2 + 2];
	bool done = false;

	while (!done) {
		uint64_t next;
		int n, k;

		run_timers();
		window_sample(mono_ns());
		next = release_pending(mono_ns());
		if (sw_deadline < next)
			next = sw_deadline;
		if (next_sample < next)
			next = next_sample;
		arm(next);
		n = epoll_wait(epfd, evs, (int)(sizeof(evs) / sizeof(evs[0])), -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait: %s", strerror(errno));
		}
		for (k = 0; k < n; k++)
			if (!handle_event(&evs[k]))
				done = true;
	}
}

/* Each port's counters logged, its sockets closed and its socket file removed. */
static void close_ports(void)
{
	unsigned int i;

	for (i = 0; i < nports; i++) {
		struct port *p = &ports[i];

		logmsg("port %u: rx %" PRIu64 " frames %" PRIu64 " B, tx %" PRIu64 " frames %"
		       PRIu64 " B, drops: unconnected %" PRIu64 " queue-full %" PRIu64
		       " bad-length %" PRIu64 ", max socket queue %" PRIu64 " B", i,
		       p->rx_frames, p->rx_bytes, p->tx_frames, p->tx_bytes, p->drop_unconnected,
		       p->drop_queue_full, p->drop_bad_len, p->max_out_bytes);
		port_disconnect(p, "switch exiting");
		if (p->lfd >= 0)
			close(p->lfd);
		unlink(p->path);
		free(p->in);
		free(p->out);
	}
}

int main(int argc, char **argv)
{
	struct tsw_host host = {
		.deliver = host_deliver, .now_ns = host_now, .timer_arm = host_timer_arm,
	};

	start_ns = mono_ns();
	model_now = start_ns;
	signal(SIGPIPE, SIG_IGN);
	parse_args(argc, argv);
	sw = tsw_create(&cfg, &host);
	if (!sw)
		die("tsw_create failed (bad configuration?)");
	setup_events();
	log_config();
	event_loop();
	write_stats("exit");
	close_ports();
	tsw_destroy(sw);
	free(qwin);
	return 0;
}
