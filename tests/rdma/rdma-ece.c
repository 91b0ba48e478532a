// SPDX-License-Identifier: GPL-2.0
/*
 * rdma-ece: the transport two RC queue pairs agree on through Enhanced Connection
 * Establishment (ECE), between two hosts over RoCEv2.
 *
 *   server:  rdma-ece [-m self|cm] [-d DEV -g GIDX] [-p PORT] [-e sr|gbn|any] [-t SECONDS]
 *   client:  rdma-ece [-m self|cm] [-d DEV -g GIDX] [-p PORT] [-e sr|gbn|any] [-t S] SERVER
 *
 * -m self (the default): the program connects its QP itself, as applications that exchange
 * their QP numbers over a socket do. Each side reads its QP's offer with ibv_query_ece(),
 * sends it to the peer over TCP, gives the peer's offer to ibv_set_ece() and then moves the
 * QP through INIT, RTR and RTS. Before that the client checks what ibv_set_ece() refuses
 * (EINVAL): a comp_mask, another vendor's options, an unknown option bit, an in-flight cap
 * outside 4..8.
 *
 * -m cm: librdmacm connects (rdma_create_qp, rdma_connect, rdma_accept), which reads the
 * offer itself and carries it in the CM REQ and the answer in the REP. -d and -g are then
 * unused (the address picks the device) and SERVER is the server's IP address; the RDMA CM
 * port is PORT + 1.
 *
 * Either way, the TCP connection to PORT carries the buffers' addresses. The client then
 * WRITEs 1 MiB into the server's buffer and SENDs 64 KiB into a receive it posted; the
 * server checks both, WRITEs 1 MiB back and the client checks it. Each side prints what
 * ibv_query_ece() says (or that the device has no ECE, as Soft-RoCE has none), then the
 * transport the device runs the QP with, from the RDMA core's netlink (`rdma -dd res show
 * qp lqpn N`: the driver's "transport" attribute, go-back-n or selective-repeat), and
 * checks it against -e: sr, gbn, or any (no check: a device without the attribute).
 *
 * Both sides print one line per check ("ok - what" / "not ok - what: why") and exit 0 when
 * every check passed, 1 when one failed, 2 when the program could not run.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "common.h"

#define LEN		(1024 * 1024)	/* each side's buffer, and each WRITE */
#define SEND_LEN	(64 * 1024)

static const char *opt_dev, *opt_expect = "any", *opt_mode = "self";
static int opt_port = 18870, opt_gid = -1, opt_ibport = 1, opt_timeout_s = 60;

struct conn {
	const char *who;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen_id, *id;
	struct dev d;
};

/* PD, CQ and the registered buffer on @c->ctx. */
static void conn_resources(struct conn *c)
{
	c->pd = ibv_alloc_pd(c->ctx);
	c->cq = cq_create(c->ctx, 16);
	c->buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!c->pd || !c->cq || c->buf == MAP_FAILED)
		die("%s: PD/CQ/buffer: %m", c->who);
	c->mr = ibv_reg_mr(c->pd, c->buf, LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!c->mr)
		die("%s: ibv_reg_mr: %m", c->who);
}

/* "ece VENDOR OPTIONS" of @qp's ibv_query_ece(), or "ece none" when the device has none. */
static void ece_line(struct ibv_qp *qp, char *buf, size_t len)
{
	struct ibv_ece ece = {};
	int rc = ibv_query_ece(qp, &ece);

	if (rc)
		snprintf(buf, len, "ece none");
	else
		snprintf(buf, len, "ece %#x %#x", ece.vendor_id, ece.options);
}

/* The client's checks of what ibv_set_ece() refuses, on a QP of its own. */
static void ece_refusals(struct conn *c)
{
	struct qp_opts o = qp_opts_small();
	struct ibv_qp *qp = qp_create(&c->d, c->pd, c->cq, &o);
	struct ibv_ece mine = {}, e;
	static const struct {
		const char *what;
		uint32_t vendor_delta, options, comp_mask;
	} bad[] = {
		{ "a comp_mask", 0, 0, 1 },
		{ "another vendor's options", 1, 0, 0 },
		{ "an unknown option bit", 0, 1u << 16, 0 },
		{ "an in-flight cap of 2^9", 0, 1u | 9u << 4, 0 },
		{ "an in-flight cap of 2^3", 0, 1u | 3u << 4, 0 },
		{ "a cap without selective repeat", 0, 6u << 4, 0 },
	};
	unsigned int i;
	int rc;

	if (!qp)
		die("%s: QP for the refusals: %m", c->who);
	rc = ibv_query_ece(qp, &mine);
	if (rc == EOPNOTSUPP) {
		printf("# %s: the device has no ECE: ibv_set_ece's refusals not checked\n", c->who);
		ibv_destroy_qp(qp);
		return;
	}
	check(!rc && mine.vendor_id && !mine.comp_mask, "%s: ibv_query_ece on a new QP: vendor "
	      "%#x, options %#x (%s)", c->who, mine.vendor_id, mine.options, strerror(rc));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.vendor_id = mine.vendor_id + bad[i].vendor_delta;
		e.options = bad[i].options;
		e.comp_mask = bad[i].comp_mask;
		rc = ibv_set_ece(qp, &e);
		check(rc == EINVAL, "%s: ibv_set_ece with %s: EINVAL (%s)", c->who, bad[i].what,
		      rc ? strerror(rc) : "taken");
	}
	e = mine;
	rc = ibv_query_ece(qp, &e);
	check(!rc && e.options == mine.options, "%s: the refused calls left the QP's offer as it "
	      "was (%#x)", c->who, e.options);
	e.options = 0;
	rc = ibv_set_ece(qp, &e);
	check(!rc, "%s: ibv_set_ece with a peer that offers nothing: taken (%s)", c->who,
	      strerror(rc));
	rc = ibv_query_ece(qp, &e);
	check(!rc && e.options == 0, "%s: ibv_query_ece then agrees on nothing (options %#x)",
	      c->who, e.options);
	if (ibv_destroy_qp(qp))
		die("%s: ibv_destroy_qp: %m", c->who);
}

/* -m self: offers over @fd, ibv_set_ece with the peer's, then RESET -> RTS. */
static void connect_self(struct conn *c, int fd, int is_server)
{
	struct qp_opts o = qp_opts_small();
	char line[MSG_MAX], mine[64];
	struct ibv_ece ece = {};
	unsigned int vendor, options;
	int rc;

	dev_open(&c->d, opt_dev, opt_ibport, opt_gid);
	c->ctx = c->d.ctx;
	conn_resources(c);
	if (!is_server)
		ece_refusals(c);
	c->qp = qp_create(&c->d, c->pd, c->cq, &o);
	if (!c->qp)
		die("%s: qp_create: %m", c->who);
	ece_line(c->qp, mine, sizeof(mine));
	printf("# %s: offers %s\n", c->who, mine);
	if (is_server) {
		oob_expect(fd, line, sizeof(line), "ece");
		oob_send(fd, "%s", mine);
	} else {
		oob_send(fd, "%s", mine);
		oob_expect(fd, line, sizeof(line), "ece");
	}
	if (sscanf(line, "ece %x %x", &vendor, &options) == 2 && strcmp(mine, "ece none")) {
		ece.vendor_id = vendor;
		ece.options = options;
		rc = ibv_set_ece(c->qp, &ece);
		check(!rc, "%s: ibv_set_ece with the peer's offer (%#x): %s", c->who, options,
		      strerror(rc));
	} else {
		printf("# %s: no ECE on %s side: ibv_set_ece not called\n", c->who,
		       strcmp(mine, "ece none") ? "the peer's" : "this");
	}
	ece_exchange = 0;	/* done above, step by step */
	if (qp_exchange_connect(&c->d, c->qp, &o, fd, is_server))
		die("%s: connect failed", c->who);
}

/* The next CM event on @c->ec within the timeout, which must be @want; acked. */
static struct rdma_cm_id *cm_wait(struct conn *c, enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = c->ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	if (poll(&pfd, 1, opt_timeout_s * 1000) != 1)
		die("%s: no %s within %d s", c->who, rdma_event_str(want), opt_timeout_s);
	if (rdma_get_cm_event(c->ec, &ev))
		die("%s: rdma_get_cm_event: %m", c->who);
	if (ev->event != want)
		die("%s: %s (status %d) where %s was due", c->who, rdma_event_str(ev->event),
		    ev->status, rdma_event_str(want));
	id = ev->id;
	rdma_ack_cm_event(ev);
	return id;
}

static void cm_qp(struct conn *c)
{
	struct ibv_qp_init_attr a = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	char mine[64];

	c->ctx = c->id->verbs;
	conn_resources(c);
	a.send_cq = a.recv_cq = c->cq;
	if (rdma_create_qp(c->id, c->pd, &a))
		die("%s: rdma_create_qp: %m", c->who);
	c->qp = c->id->qp;
	ece_line(c->qp, mine, sizeof(mine));
	printf("# %s: %s, after rdma_create_qp\n", c->who, mine);
}

/* -m cm: librdmacm connects, exchanging ECE in the REQ and REP. */
static void connect_cm(struct conn *c, const char *host, int is_server)
{
	struct rdma_conn_param p = {
		.responder_resources = 1, .initiator_depth = 1, .retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(opt_port + 1) };

	c->ec = rdma_create_event_channel();
	if (!c->ec)
		die("%s: rdma_create_event_channel: %m", c->who);
	if (is_server) {
		if (rdma_create_id(c->ec, &c->listen_id, NULL, RDMA_PS_TCP) ||
		    rdma_bind_addr(c->listen_id, (struct sockaddr *)&sin) ||
		    rdma_listen(c->listen_id, 1))
			die("%s: listen on RDMA CM port %d: %m", c->who, opt_port + 1);
		return;
	}
	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
		die("%s: -m cm needs the server's IPv4 address, not %s", c->who, host);
	if (rdma_create_id(c->ec, &c->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&sin, 5000))
		die("%s: rdma_resolve_addr: %m", c->who);
	cm_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(c->id, 5000))
		die("%s: rdma_resolve_route: %m", c->who);
	cm_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED);
	cm_qp(c);
	if (rdma_connect(c->id, &p))
		die("%s: rdma_connect: %m", c->who);
	cm_wait(c, RDMA_CM_EVENT_ESTABLISHED);
}

static void accept_cm(struct conn *c)
{
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
				     .rnr_retry_count = 7 };

	c->id = cm_wait(c, RDMA_CM_EVENT_CONNECT_REQUEST);
	cm_qp(c);
	if (rdma_accept(c->id, &p))
		die("%s: rdma_accept: %m", c->who);
	cm_wait(c, RDMA_CM_EVENT_ESTABLISHED);
}

/*
 * The QP's transport as the device runs it, from the driver's attributes in `rdma -dd res
 * show qp lqpn N`; checked against -e.
 */
static void check_transport(struct conn *c)
{
	char cmd[128], line[1024], ece[64], *t, got[32] = "";
	unsigned int vendor, options;
	const char *want;
	FILE *f;

	ece_line(c->qp, ece, sizeof(ece));
	printf("# %s: QP %u connected: %s\n", c->who, c->qp->qp_num, ece);
	snprintf(cmd, sizeof(cmd), "rdma -dd res show qp lqpn %u 2>&1", c->qp->qp_num);
	f = popen(cmd, "r");
	if (!f)
		die("%s: %s: %m", c->who, cmd);
	while (fgets(line, sizeof(line), f)) {
		printf("# %s: rdma: %s", c->who, line);
		t = strstr(line, "transport ");
		if (t)
			sscanf(t, "transport %31s", got);
	}
	pclose(f);
	if (!strcmp(opt_expect, "any"))
		return;
	want = !strcmp(opt_expect, "sr") ? "selective-repeat" : "go-back-n";
	check(!strcmp(got, want), "%s: rdma res show qp: the device runs QP %u with %s (%s)",
	      c->who, c->qp->qp_num, want, got[0] ? got : "no transport attribute");
	if (sscanf(ece, "ece %x %x", &vendor, &options) == 2) {
		struct ibv_ece late = { .vendor_id = vendor };
		int rc;

		check(!!(options & 1) == !strcmp(opt_expect, "sr"), "%s: ibv_query_ece after "
		      "the connection: %s agreed (options %#x)", c->who,
		      !strcmp(opt_expect, "sr") ? "selective repeat" : "no selective repeat",
		      options);
		rc = ibv_set_ece(c->qp, &late);
		check(rc == EINVAL, "%s: ibv_set_ece on the connected QP: EINVAL, the transport "
		      "is fixed (%s)", c->who, rc ? strerror(rc) : "taken");
	}
}

/* The data both ways; @fd carries the buffer addresses and the steps. */
static void exchange(struct conn *c, int fd, int is_server)
{
	unsigned long long raddr;
	char line[MSG_MAX];
	struct ibv_wc wc;
	uint32_t rkey;
	long bad;

	memset(c->buf, GUARD_BYTE, LEN);
	if (is_server && post_recv_one(c->qp, (uintptr_t)c->buf + LEN - SEND_LEN, SEND_LEN,
				   c->mr->lkey))
		die("%s: post_recv: %m", c->who);
	oob_send(fd, "MR %llx %x", (unsigned long long)(uintptr_t)c->buf, c->mr->rkey);
	oob_expect(fd, line, sizeof(line), "MR");
	if (sscanf(line, "MR %llx %x", &raddr, &rkey) != 2)
		die("bad MR line: %s", line);

	if (!is_server) {
		pattern_fill(c->buf, LEN - SEND_LEN, 1, 0);
		pattern_fill(c->buf + LEN - SEND_LEN, SEND_LEN, 2, 0);
		if (post_send_one(c->qp, IBV_WR_RDMA_WRITE, (uintptr_t)c->buf, LEN - SEND_LEN,
			     c->mr->lkey, raddr, rkey))
			die("%s: post WRITE: %m", c->who);
		if (wait_wc_for(c->cq, &wc, opt_timeout_s * 1000, "client: WRITE"))
			check(wc.status == IBV_WC_SUCCESS, "client: WRITE of %d bytes: %s",
			      LEN - SEND_LEN, ibv_wc_status_str(wc.status));
		if (post_send_one(c->qp, IBV_WR_SEND, (uintptr_t)c->buf + LEN - SEND_LEN, SEND_LEN,
			     c->mr->lkey, 0, 0))
			die("%s: post SEND: %m", c->who);
		if (wait_wc_for(c->cq, &wc, opt_timeout_s * 1000, "client: SEND"))
			check(wc.status == IBV_WC_SUCCESS, "client: SEND of %d bytes: %s", SEND_LEN,
			      ibv_wc_status_str(wc.status));
		memset(c->buf, GUARD_BYTE, LEN);
		oob_send(fd, "SENT");
		oob_expect(fd, line, sizeof(line), "WROTE");
		bad = pattern_check(c->buf, LEN, 3, 0);
		check(bad < 0, "client: the server's WRITE of %d bytes arrived intact (first bad "
		      "byte %ld)", LEN, bad);
		return;
	}
	oob_expect(fd, line, sizeof(line), "SENT");
	if (wait_wc_for(c->cq, &wc, opt_timeout_s * 1000, "server: receive of the SEND"))
		check(wc.status == IBV_WC_SUCCESS && wc.byte_len == SEND_LEN,
		      "server: the SEND completed a receive: %s, %u bytes",
		      ibv_wc_status_str(wc.status), wc.byte_len);
	bad = pattern_check(c->buf, LEN - SEND_LEN, 1, 0);
	check(bad < 0, "server: the client's WRITE of %d bytes arrived intact (first bad byte "
	      "%ld)", LEN - SEND_LEN, bad);
	bad = pattern_check(c->buf + LEN - SEND_LEN, SEND_LEN, 2, 0);
	check(bad < 0, "server: the client's SEND of %d bytes arrived intact (first bad byte "
	      "%ld)", SEND_LEN, bad);
	pattern_fill(c->buf, LEN, 3, 0);
	if (post_send_one(c->qp, IBV_WR_RDMA_WRITE, (uintptr_t)c->buf, LEN, c->mr->lkey, raddr, rkey))
		die("%s: post WRITE: %m", c->who);
	if (wait_wc_for(c->cq, &wc, opt_timeout_s * 1000, "server: WRITE"))
		check(wc.status == IBV_WC_SUCCESS, "server: WRITE of %d bytes: %s", LEN,
		      ibv_wc_status_str(wc.status));
	oob_send(fd, "WROTE");
}

static int run(const char *host)
{
	struct conn c = { .who = host ? "client" : "server" };
	int is_server = !host, cm = !strcmp(opt_mode, "cm");
	char line[MSG_MAX];
	int lfd, fd;

	if (is_server) {
		/* listening on the RDMA CM port before the TCP one: the client connects after */
		if (cm)
			connect_cm(&c, NULL, 1);
		lfd = oob_listen(opt_port);
		fd = oob_accept(lfd, opt_timeout_s);
		close(lfd);
		if (cm)
			accept_cm(&c);
		else
			connect_self(&c, fd, 1);
	} else {
		fd = oob_connect(host, opt_port, opt_timeout_s);
		if (cm)
			connect_cm(&c, host, 0);
		else
			connect_self(&c, fd, 0);
	}
	exchange(&c, fd, is_server);
	check_transport(&c);
	/* both sides looked before either tears down */
	oob_send(fd, "DONE");
	oob_expect(fd, line, sizeof(line), "DONE");
	if (cm) {
		rdma_disconnect(c.id);
		rdma_destroy_qp(c.id);
	} else if (ibv_destroy_qp(c.qp)) {
		die("%s: ibv_destroy_qp: %m", c.who);
	}
	if (ibv_dereg_mr(c.mr) || cq_destroy(c.cq) || ibv_dealloc_pd(c.pd))
		die("%s: teardown: %m", c.who);
	if (cm) {
		rdma_destroy_id(c.id);
		if (c.listen_id)
			rdma_destroy_id(c.listen_id);
		rdma_destroy_event_channel(c.ec);
	}
	close(fd);
	return checks_failed ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: rdma-ece [-m self|cm] [-d DEV] [-i IBPORT] [-g GID_INDEX] "
		"[-p TCP_PORT] [-e sr|gbn|any] [-t SECONDS] [SERVER]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:i:g:p:t:e:m:")) != -1) {
		switch (c) {
		case 'd': opt_dev = optarg; break;
		case 'i': opt_ibport = atoi(optarg); break;
		case 'g': opt_gid = atoi(optarg); break;
		case 'p': opt_port = atoi(optarg); break;
		case 't': opt_timeout_s = atoi(optarg); break;
		case 'e': opt_expect = optarg; break;
		case 'm': opt_mode = optarg; break;
		default: usage();
		}
	}
	if (strcmp(opt_mode, "self") && strcmp(opt_mode, "cm"))
		usage();
	if (strcmp(opt_expect, "sr") && strcmp(opt_expect, "gbn") && strcmp(opt_expect, "any"))
		usage();
	if ((!strcmp(opt_mode, "self") && opt_gid < 0) || argc - optind > 1)
		usage();
	return run(optind < argc ? argv[optind] : NULL);
}
