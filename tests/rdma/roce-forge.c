// SPDX-License-Identifier: GPL-2.0
/*
 * roce-forge: a hostile peer on the wire (tests/guest/rdma.t). One guest holds RC QPs that
 * another guest's raw socket attacks with forged RoCEv2 frames (valid ICRC unless the case
 * breaks it); the target then checks that nothing outside what the spec allows happened.
 *
 *   roce-forge -d DEV -g GIDX [-t SECONDS] target PEER_IPV4 DONE_FILE
 *	Target. Two PDs: MR A (4 KiB, remote write/read/atomic, with 4 KiB of guard bytes on
 *	each side that no MR covers) and MR B (4 KiB, another PD). NQPS RC QPs in A's PD,
 *	each connected to a QP number that does not exist on PEER_IPV4 (the attacker's
 *	address), path MTU as the port's, one receive posted on each. QPs 7 and 8 post an
 *	RDMA WRITE to their phantom peer, which only a forged ACK can complete (QP 8 with a
 *	local ACK timeout of a minute, so that nothing else ends it first). Prints one line
 *	"target qp=QPN:RQ_PSN,... ack=QPN:SQ_PSN ghost=QPN:SQ_PSN va=VA rkey=RKEY len=4096
 *	va_b=VA rkey_b=RKEY",
 *	then waits (at most SECONDS, default 120) for DONE_FILE to exist and checks, one
 *	"ok - ..." / "not ok - ..." line each: QP 0 took exactly the valid frames (two WRITEs,
 *	one SEND), in RTS; QPs 1-6 in ERR with their receive flushed; QP 7's WRITE completed
 *	once, successfully, and QP 7 is in RTS; QP 8's WRITE has not completed and QP 8 is in
 *	RTS; MR A holds exactly what the valid WRITEs put
 *	there and every other byte (guards included) is as it was; MR B is untouched.
 *
 *   roce-forge attack IFACE DST_MAC SRC_IPV4 DST_IPV4 TARGET_LINE
 *	Attacker (needs CAP_NET_RAW). Sends, through an AF_PACKET socket on IFACE, 100 ms
 *	apart, the cases below (QP i of the target line), printing one "# sent ..." line each:
 *	  QP 0: a valid WRITE (PSN P, 64 B at VA); then frames that must be dropped without
 *	        consuming PSN P+1: a bad ICRC, headers cut inside the RETH, a UDP length past
 *	        the IP payload, an IPv4 total length past the frame, a SEND whose pad count
 *	        exceeds its payload, a reserved opcode, selective repeat's SR_WRITE_LAST
 *	        (0xc1, with its RETH: the target's QPs run go-back-N, which takes none of
 *	        those opcodes), a wrong P_Key, and a WRITE to a QP that does not exist; a WRITE from the future (PSN P+100: a sequence NAK, nothing
 *	        written); then a valid WRITE at P+1 (64 B at VA+64) and a valid SEND at P+2.
 *	  QP 1: a WRITE ONLY larger than the path MTU: invalid request.
 *	  QP 2: a WRITE running 32 bytes past the end of MR A: access error.
 *	  QP 3: a WRITE with MR B's rkey (another PD): access error.
 *	  QP 4: a READ past the end of MR A: access error.
 *	  QP 5: a FETCH_ADD at VA+1028 (not 8-byte aligned): invalid request.
 *	  QP 6: a CMP_SWAP with MR B's rkey: access error.
 *	  QP 7: a NAK (remote access error) for a PSN never sent and one older than anything
 *	        outstanding (both ignored), then the ACK of its WRITE (completes it).
 *	  QP 8: an ACK for a PSN never sent (ignored: its WRITE stays outstanding).
 *
 * Exit 0: every check passed, 1: one failed, 2: the program could not run.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

#define NQPS		9
#define QP_ACK		7
#define QP_GHOST	8
#define MR_LEN		4096
#define GUARD_LEN	4096
#define FAKE_QPN	0x000ab0	/* + QP index: the phantom peers' QP numbers */
#define UNKNOWN_QPN	0xfffff0
#define ROCE_PORT	4791

/* BTH opcodes (RC) */
enum {
	OP_SEND_ONLY = 0x04, OP_WRITE_ONLY = 0x0a, OP_READ_REQ = 0x0c, OP_ACK = 0x11,
	OP_CMP_SWAP = 0x13, OP_FETCH_ADD = 0x14, OP_RESERVED = 0x1f,
	OP_SR_WRITE_LAST = 0xc1,	/* tern's selective repeat (Documentation/hw/rdma.rst) */
};

static const char *opt_dev;
static int opt_gid = -1, opt_timeout_s = 120;

/* ---- target ---------------------------------------------------------------------------- */

static int ipv4_gid(const char *ip, union ibv_gid *gid)
{
	struct in_addr a;

	if (inet_pton(AF_INET, ip, &a) != 1)
		return -1;
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = gid->raw[11] = 0xff;
	memcpy(gid->raw + 12, &a, 4);
	return 0;
}

static int run_target(const char *peer_ip, const char *done)
{
	struct qp_opts o = {
		.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1,
		.rnr_retry = 7, .min_rnr_timer = 12, .timeout = 20,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct dev d;
	struct ibv_pd *pd_a, *pd_b;
	struct ibv_cq *cq;
	struct ibv_mr *mr_a, *mr_b, *mr_rx;
	struct ibv_qp *qp[NQPS];
	struct qp_dest local, remote;
	struct ibv_wc wc;
	uint8_t *big, *a, *b, *rx, *want;
	uint32_t rq_psn[NQPS], sq_psn[NQPS];
	int recv0 = 0, recv0_ok = 0, flushed[NQPS] = { 0 }, ack_done = 0, ack_ok = 0, other = 0;
	int ghost_done = 0;
	long end, bad;
	struct stat st;
	char line[1024];
	int n;

	dev_open(&d, opt_dev, 1, opt_gid);
	pd_a = ibv_alloc_pd(d.ctx);
	pd_b = ibv_alloc_pd(d.ctx);
	cq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
	big = aligned_alloc(4096, GUARD_LEN + MR_LEN + GUARD_LEN);
	b = aligned_alloc(4096, MR_LEN);
	rx = aligned_alloc(4096, NQPS * 256);
	want = malloc(GUARD_LEN + MR_LEN + GUARD_LEN);
	if (!pd_a || !pd_b || !cq || !big || !b || !rx || !want)
		die("ibv_alloc_pd/ibv_create_cq/malloc: %m");
	memset(big, GUARD_BYTE, GUARD_LEN + MR_LEN + GUARD_LEN);
	a = big + GUARD_LEN;
	memset(a, 0, MR_LEN);
	memset(b, 0x3c, MR_LEN);
	memset(rx, 0, NQPS * 256);
	mr_a = ibv_reg_mr(pd_a, a, MR_LEN, o.access);
	mr_b = ibv_reg_mr(pd_b, b, MR_LEN, o.access);
	mr_rx = ibv_reg_mr(pd_a, rx, NQPS * 256, IBV_ACCESS_LOCAL_WRITE);
	if (!mr_a || !mr_b || !mr_rx)
		die("ibv_reg_mr: %m");
	memset(&remote, 0, sizeof(remote));
	if (ipv4_gid(peer_ip, &remote.gid))
		die("bad peer address %s", peer_ip);
	for (int i = 0; i < NQPS; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)rx + 256 * i, .length = 256,
				       .lkey = mr_rx->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 100 + i, .sg_list = &sge, .num_sge = 1 }, *bw;

		o.timeout = i == QP_GHOST ? 24 : 20;	/* 69 s or 4.3 s, 7 retries */
		qp[i] = qp_create(&d, pd_a, cq, &o);
		rq_psn[i] = 0x1000 * (i + 1);
		sq_psn[i] = 0x80000 + 0x100 * i;
		local = (struct qp_dest){ .qpn = qp[i]->qp_num, .psn = sq_psn[i], .gid = d.gid };
		remote.qpn = FAKE_QPN + i;
		remote.psn = rq_psn[i];
		if (qp_connect(&d, qp[i], &o, &local, &remote))
			die("cannot connect QP %d", i);
		if (ibv_post_recv(qp[i], &rwr, &bw))
			die("ibv_post_recv: %m");
	}
	for (int i = QP_ACK; i <= QP_GHOST; i++) {
		/* QPs 7 and 8: a WRITE to the phantom peer, outstanding until someone ACKs it */
		struct ibv_sge sge = { .addr = (uintptr_t)rx + 256 * i + 128, .length = 16,
				       .lkey = mr_rx->lkey };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		}, *bw;

		wr.wr.rdma.remote_addr = 0x10000;
		wr.wr.rdma.rkey = 0x1234;
		if (ibv_post_send(qp[i], &wr, &bw))
			die("ibv_post_send: %m");
	}
	memcpy(want, big, GUARD_LEN + MR_LEN + GUARD_LEN);

	n = snprintf(line, sizeof(line), "target qp=");
	for (int i = 0; i < NQPS; i++)
		n += snprintf(line + n, sizeof(line) - n, "%s%u:%u", i ? "," : "", qp[i]->qp_num,
			      rq_psn[i]);
	snprintf(line + n, sizeof(line) - n,
		 " ack=%u:%u ghost=%u:%u va=%llx rkey=%x len=%d va_b=%llx rkey_b=%x",
		 qp[QP_ACK]->qp_num, sq_psn[QP_ACK], qp[QP_GHOST]->qp_num, sq_psn[QP_GHOST],
		 (unsigned long long)(uintptr_t)a, mr_a->rkey, MR_LEN,
		 (unsigned long long)(uintptr_t)b, mr_b->rkey);
	printf("%s\n", line);
	fflush(stdout);

	end = now_ms() + opt_timeout_s * 1000L;
	while (stat(done, &st) && now_ms() < end)
		usleep(100 * 1000);
	check(!stat(done, &st), "the attacker finished within %d s", opt_timeout_s);
	usleep(500 * 1000);	/* the last frames' effects */

	while (cq_poll(cq, 1, &wc) == 1) {
		int i = -1;

		for (int k = 0; k < NQPS; k++)
			if (qp[k]->qp_num == wc.qp_num)
				i = k;
		if (i == 0 && wc.opcode == IBV_WC_RECV && wc.status == IBV_WC_SUCCESS) {
			recv0++;
			recv0_ok = wc.byte_len == 32 && pattern_check(rx, 32, 9, 0) < 0;
		} else if (i > 0 && i < QP_ACK && wc.status == IBV_WC_WR_FLUSH_ERR &&
			   wc.wr_id == 100u + i) {
			flushed[i]++;
		} else if (i == QP_ACK && wc.wr_id == QP_ACK) {
			ack_done++;
			ack_ok = wc.status == IBV_WC_SUCCESS;
		} else if (i == QP_GHOST) {
			ghost_done++;
			printf("# QP 8: completion wr_id %llu %s\n", (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status));
		} else {
			other++;
			printf("# unexpected completion: QP %d wr_id %llu %s opcode %d\n", i,
			       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
			       wc.opcode);
		}
	}
	check(qp_state(qp[0]) == IBV_QPS_RTS, "QP 0 is still in RTS after the malformed and "
	      "misdirected frames (%s)", qp_state_str(qp_state(qp[0])));
	check(recv0 == 1 && recv0_ok, "QP 0 received exactly one SEND, the valid one, intact "
	      "(%d receive completions)", recv0);
	pattern_fill(want + GUARD_LEN, 64, 1, 0);
	pattern_fill(want + GUARD_LEN + 64, 64, 2, 0);
	bad = -1;
	for (long i = 0; i < GUARD_LEN + MR_LEN + GUARD_LEN && bad < 0; i++)
		if (big[i] != want[i])
			bad = i;
	check(bad < 0, "MR A holds the two valid WRITEs and nothing else; the guard bytes around "
	      "it are untouched (first difference at MR offset %ld)", bad < 0 ? -1 : bad - GUARD_LEN);
	bad = -1;
	for (long i = 0; i < MR_LEN && bad < 0; i++)
		if (b[i] != 0x3c)
			bad = i;
	check(bad < 0, "MR B (another PD) is untouched (first difference at offset %ld)", bad);
	for (int i = 1; i < QP_ACK; i++) {
		check(qp_state(qp[i]) == IBV_QPS_ERR && flushed[i] == 1,
		      "QP %d: the bad request moved it to ERR and flushed its receive (%s, %d "
		      "flushed)", i, qp_state_str(qp_state(qp[i])), flushed[i]);
	}
	check(ack_done == 1 && ack_ok && qp_state(qp[QP_ACK]) == IBV_QPS_RTS,
	      "QP 7: the NAKs for a PSN never sent and for an old one changed nothing; the ACK of "
	      "its WRITE completed it once, successfully (%d completions, %s)", ack_done,
	      qp_state_str(qp_state(qp[QP_ACK])));
	check(ghost_done == 0 && qp_state(qp[QP_GHOST]) == IBV_QPS_RTS,
	      "QP 8: the ACK for a PSN never sent completed nothing (%d completions, %s)",
	      ghost_done, qp_state_str(qp_state(qp[QP_GHOST])));
	check(!other, "no other completions (%d)", other);

	for (int i = 0; i < NQPS; i++)
		ibv_destroy_qp(qp[i]);
	ibv_dereg_mr(mr_a);
	ibv_dereg_mr(mr_b);
	ibv_dereg_mr(mr_rx);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd_a);
	ibv_dealloc_pd(pd_b);
	ibv_close_device(d.ctx);
	return checks_failed ? 1 : 0;
}

/* ---- attacker --------------------------------------------------------------------------- */

struct target {
	uint32_t qpn[NQPS], psn[NQPS];
	uint32_t ack_qpn, ack_psn, ghost_qpn, ghost_psn;
	uint64_t va, va_b;
	uint32_t rkey, rkey_b, len;
};

struct forge {
	int fd;
	struct sockaddr_ll sll;
	uint8_t dmac[6], smac[6];
	struct in_addr sip, dip;
	uint16_t ip_id;
};

static uint32_t crc32_le(uint32_t c, const uint8_t *p, size_t n)
{
	c = ~c;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

/* The RoCEv2 ICRC of an IPv4 packet: @ip .. @end (the ICRC's place), variant fields masked. */
static uint32_t icrc(const uint8_t *ip, const uint8_t *end)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t h[20 + 8 + 12];
	uint32_t c;

	memcpy(h, ip, sizeof(h));
	h[1] = 0xff;				/* TOS */
	h[8] = 0xff;				/* TTL */
	h[10] = h[11] = 0xff;			/* header checksum */
	h[20 + 6] = h[20 + 7] = 0xff;		/* UDP checksum */
	h[28 + 4] = 0xff;			/* BTH: FECN, BECN, reserved */
	c = crc32_le(crc32_le(0, ones, 8), h, sizeof(h));
	return crc32_le(c, ip + sizeof(h), (size_t)(end - ip - sizeof(h)));
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = v >> 16;
	p[1] = v >> 8;
	p[2] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, (uint32_t)v);
}

static uint16_t ip_csum(const uint8_t *p)
{
	uint32_t s = 0;

	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* What a case changes in an otherwise valid frame. */
enum {
	F_BAD_ICRC = 1, F_CUT_RETH = 2, F_UDP_LONG = 4, F_IP_LONG = 8, F_PKEY = 16,
	F_PAD_SHORT = 32,	/* one byte fewer after the payload than the pad count says */
};

/*
 * Builds and sends one RC frame: BTH (@op, @pad, @qpn, @psn, AckReq), then @ext (extended
 * headers, @ext_len bytes), @pay (@pay_len bytes), @pad zero bytes and the ICRC; @flags
 * breaks it as asked.
 */
static void send_frame(struct forge *f, const char *what, uint8_t op, unsigned int pad,
		       uint32_t qpn, uint32_t psn, const uint8_t *ext, size_t ext_len,
		       const uint8_t *pay, size_t pay_len, int flags)
{
	static uint8_t fr[9000];
	uint8_t *ip = fr + 14, *udp = ip + 20, *bth = udp + 8, *x = bth + 12, *end;
	size_t ulen, len;
	ssize_t rc;

	if (14 + 20 + 8 + 12 + ext_len + pay_len + pad + 4 > sizeof(fr))
		die("frame too long");
	memset(fr, 0, sizeof(fr));
	memcpy(fr, f->dmac, 6);
	memcpy(fr + 6, f->smac, 6);
	put16(fr + 12, ETH_P_IP);
	bth[0] = op;
	bth[1] = (uint8_t)(pad << 4);
	put16(bth + 2, flags & F_PKEY ? 0x1234 : 0xffff);
	put24(bth + 5, qpn);
	bth[8] = 0x80;
	put24(bth + 9, psn);
	memcpy(x, ext, ext_len);
	memcpy(x + ext_len, pay, pay_len);
	end = x + ext_len + pay_len + pad - (flags & F_PAD_SHORT ? 1 : 0);
	ulen = (size_t)(end + 4 - udp);
	ip[0] = 0x45;
	put16(ip + 2, 20 + ulen);
	put16(ip + 4, f->ip_id++);
	put16(ip + 6, 0x4000);			/* DF */
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, &f->sip, 4);
	memcpy(ip + 16, &f->dip, 4);
	put16(udp, 0xc000 | (qpn & 0x3fff));
	put16(udp + 2, ROCE_PORT);
	put16(udp + 4, ulen);
	put16(ip + 10, ip_csum(ip));
	{
		uint32_t c = icrc(ip, end);

		if (flags & F_BAD_ICRC)
			c ^= 0x00010000;
		end[0] = c;
		end[1] = c >> 8;
		end[2] = c >> 16;
		end[3] = c >> 24;
	}
	len = (size_t)(end + 4 - fr);
	if (flags & F_CUT_RETH) {
		/* the packet ends 8 bytes into the RETH: lengths and ICRC made consistent */
		size_t cut = (size_t)(x + 8 - fr);
		uint32_t c;

		ulen = cut + 4 - (size_t)(udp - fr);
		put16(ip + 2, 20 + ulen);
		put16(ip + 10, 0);
		put16(ip + 10, ip_csum(ip));
		put16(udp + 4, ulen);
		c = icrc(ip, fr + cut);
		fr[cut] = c;
		fr[cut + 1] = c >> 8;
		fr[cut + 2] = c >> 16;
		fr[cut + 3] = c >> 24;
		len = cut + 4;
	}
	if (flags & F_UDP_LONG)
		put16(udp + 4, ulen + 64);	/* past the IP payload */
	if (flags & F_IP_LONG) {
		put16(ip + 2, 20 + ulen + 200);	/* past the frame */
		put16(ip + 10, 0);
		put16(ip + 10, ip_csum(ip));
	}
	if (len < 60)
		len = 60;
	rc = sendto(f->fd, fr, len, 0, (struct sockaddr *)&f->sll, sizeof(f->sll));
	if (rc != (ssize_t)len)
		die("sendto (%s, %zu bytes): %m", what, len);
	printf("# sent %s: opcode 0x%02x QPN 0x%06x PSN %u, %zu bytes\n", what, op, qpn, psn, len);
	fflush(stdout);
	usleep(100 * 1000);
}

static size_t reth(uint8_t *p, uint64_t va, uint32_t rkey, uint32_t len)
{
	put64(p, va);
	put32(p + 8, rkey);
	put32(p + 12, len);
	return 16;
}

static size_t atomic_eth(uint8_t *p, uint64_t va, uint32_t rkey, uint64_t swap_add,
			 uint64_t compare)
{
	put64(p, va);
	put32(p + 8, rkey);
	put64(p + 12, swap_add);
	put64(p + 20, compare);
	return 28;
}

static int parse_target(const char *s, struct target *t)
{
	const char *q = strstr(s, "qp=");
	unsigned long long va, va_b;
	int n;

	memset(t, 0, sizeof(*t));
	if (!q)
		return -1;
	q += 3;
	for (int i = 0; i < NQPS; i++) {
		if (sscanf(q, "%u:%u%n", &t->qpn[i], &t->psn[i], &n) != 2)
			return -1;
		q += n + (i < NQPS - 1 ? 1 : 0);
	}
	if (sscanf(q, " ack=%u:%u ghost=%u:%u va=%llx rkey=%x len=%u va_b=%llx rkey_b=%x",
		   &t->ack_qpn, &t->ack_psn, &t->ghost_qpn, &t->ghost_psn, &va, &t->rkey, &t->len,
		   &va_b, &t->rkey_b) != 9)
		return -1;
	t->va = va;
	t->va_b = va_b;
	return 0;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3],
		      &mac[4], &mac[5]) == 6 ? 0 : -1;
}

static int run_attack(const char *ifname, const char *dmac, const char *sip, const char *dip,
		      const char *line)
{
	struct forge f = { .ip_id = 1 };
	struct target t;
	struct ifreq ifr;
	uint8_t ext[32], pay[2048];
	size_t el;
	uint32_t p;

	if (parse_target(line, &t))
		die("cannot parse the target line '%s'", line);
	if (parse_mac(dmac, f.dmac) || inet_pton(AF_INET, sip, &f.sip) != 1 ||
	    inet_pton(AF_INET, dip, &f.dip) != 1)
		die("bad MAC or address");
	f.fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (f.fd < 0)
		die("socket(AF_PACKET): %m");
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(f.fd, SIOCGIFINDEX, &ifr))
		die("SIOCGIFINDEX %s: %m", ifname);
	memset(&f.sll, 0, sizeof(f.sll));
	f.sll.sll_family = AF_PACKET;
	f.sll.sll_ifindex = ifr.ifr_ifindex;
	f.sll.sll_halen = 6;
	memcpy(f.sll.sll_addr, f.dmac, 6);
	if (ioctl(f.fd, SIOCGIFHWADDR, &ifr))
		die("SIOCGIFHWADDR %s: %m", ifname);
	memcpy(f.smac, ifr.ifr_hwaddr.sa_data, 6);

	/* QP 0: valid, then malformed and misdirected, then valid again */
	p = t.psn[0];
	pattern_fill(pay, 64, 1, 0);
	el = reth(ext, t.va, t.rkey, 64);
	send_frame(&f, "QP 0 valid WRITE", OP_WRITE_ONLY, 0, t.qpn[0], p, ext, el, pay, 64, 0);
	/* what the frames that must be dropped carry: never seen in the MR afterwards */
	pattern_fill(pay, 64, 3, 0);
	el = reth(ext, t.va + 64, t.rkey, 64);
	send_frame(&f, "QP 0 WRITE with a bad ICRC", OP_WRITE_ONLY, 0, t.qpn[0], p + 1, ext, el,
		   pay, 64, F_BAD_ICRC);
	send_frame(&f, "QP 0 WRITE cut inside its RETH", OP_WRITE_ONLY, 0, t.qpn[0], p + 1, ext,
		   el, pay, 64, F_CUT_RETH);
	send_frame(&f, "QP 0 WRITE whose UDP length runs past the IP payload", OP_WRITE_ONLY, 0,
		   t.qpn[0], p + 1, ext, el, pay, 64, F_UDP_LONG);
	send_frame(&f, "QP 0 WRITE whose IPv4 total length runs past the frame", OP_WRITE_ONLY,
		   0, t.qpn[0], p + 1, ext, el, pay, 64, F_IP_LONG);
	send_frame(&f, "QP 0 SEND with pad count 3 and 2 bytes", OP_SEND_ONLY, 3, t.qpn[0],
		   p + 1, NULL, 0, NULL, 0, F_PAD_SHORT);
	send_frame(&f, "QP 0 reserved opcode 0x1f", OP_RESERVED, 0, t.qpn[0], p + 1, ext, el,
		   pay, 64, 0);
	send_frame(&f, "QP 0 selective repeat's SR_WRITE_LAST 0xc1 (QP in go-back-N)",
		   OP_SR_WRITE_LAST, 0, t.qpn[0], p + 1, ext, el, pay, 64, 0);
	send_frame(&f, "QP 0 WRITE with P_Key 0x1234", OP_WRITE_ONLY, 0, t.qpn[0], p + 1, ext,
		   el, pay, 64, F_PKEY);
	send_frame(&f, "WRITE to a QP that does not exist", OP_WRITE_ONLY, 0, UNKNOWN_QPN,
		   p + 1, ext, el, pay, 64, 0);
	el = reth(ext, t.va + 192, t.rkey, 64);
	send_frame(&f, "QP 0 WRITE from the future (PSN + 100)", OP_WRITE_ONLY, 0, t.qpn[0],
		   p + 100, ext, el, pay, 64, 0);
	pattern_fill(pay, 64, 2, 0);
	el = reth(ext, t.va + 64, t.rkey, 64);
	send_frame(&f, "QP 0 valid WRITE", OP_WRITE_ONLY, 0, t.qpn[0], p + 1, ext, el, pay, 64, 0);
	pattern_fill(pay, 32, 9, 0);
	send_frame(&f, "QP 0 valid SEND", OP_SEND_ONLY, 0, t.qpn[0], p + 2, NULL, 0, pay, 32, 0);

	/* QPs 1-6: requests the responder must refuse */
	memset(pay, 0x77, sizeof(pay));
	el = reth(ext, t.va + 512, t.rkey, 1400);
	send_frame(&f, "QP 1 WRITE ONLY of 1400 bytes (beyond the path MTU)", OP_WRITE_ONLY, 0,
		   t.qpn[1], t.psn[1], ext, el, pay, 1400, 0);
	el = reth(ext, t.va + t.len - 32, t.rkey, 64);
	send_frame(&f, "QP 2 WRITE running 32 bytes past the MR", OP_WRITE_ONLY, 0, t.qpn[2],
		   t.psn[2], ext, el, pay, 64, 0);
	el = reth(ext, t.va_b, t.rkey_b, 64);
	send_frame(&f, "QP 3 WRITE with the rkey of another PD's MR", OP_WRITE_ONLY, 0,
		   t.qpn[3], t.psn[3], ext, el, pay, 64, 0);
	el = reth(ext, t.va + t.len - 16, t.rkey, 64);
	send_frame(&f, "QP 4 READ past the MR", OP_READ_REQ, 0, t.qpn[4], t.psn[4], ext, el,
		   NULL, 0, 0);
	el = atomic_eth(ext, t.va + 1028, t.rkey, 5, 0);
	send_frame(&f, "QP 5 FETCH_ADD at a misaligned address", OP_FETCH_ADD, 0, t.qpn[5],
		   t.psn[5], ext, el, NULL, 0, 0);
	el = atomic_eth(ext, t.va_b, t.rkey_b, 5, 0x3c3c3c3c3c3c3c3cull);
	send_frame(&f, "QP 6 CMP_SWAP with the rkey of another PD's MR", OP_CMP_SWAP, 0,
		   t.qpn[6], t.psn[6], ext, el, NULL, 0, 0);

	/* QPs 7 and 8: forged acknowledgements for their WRITE (one packet at *_psn) */
	ext[0] = 0x62;				/* AETH: NAK, remote access error; MSN */
	put24(ext + 1, 1);
	send_frame(&f, "QP 7 NAK for a PSN never sent", OP_ACK, 0, t.ack_qpn, t.ack_psn + 50,
		   ext, 4, NULL, 0, 0);
	send_frame(&f, "QP 7 NAK older than anything outstanding", OP_ACK, 0, t.ack_qpn,
		   t.ack_psn - 10, ext, 4, NULL, 0, 0);
	ext[0] = 0x00;				/* ACK */
	send_frame(&f, "QP 7 ACK of its WRITE", OP_ACK, 0, t.ack_qpn, t.ack_psn, ext, 4, NULL, 0,
		   0);
	send_frame(&f, "QP 8 ACK for a PSN never sent", OP_ACK, 0, t.ghost_qpn, t.ghost_psn + 50,
		   ext, 4, NULL, 0, 0);
	close(f.fd);
	printf("attack done\n");
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: roce-forge -d DEV -g GIDX [-t SECONDS] target PEER_IPV4 DONE_FILE\n"
		"       roce-forge attack IFACE DST_MAC SRC_IPV4 DST_IPV4 TARGET_LINE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:g:t:")) != -1) {
		switch (c) {
		case 'd': opt_dev = optarg; break;
		case 'g': opt_gid = atoi(optarg); break;
		case 't': opt_timeout_s = atoi(optarg); break;
		default: usage();
		}
	}
	if (argc - optind == 3 && !strcmp(argv[optind], "target") && opt_gid >= 0)
		rc = run_target(argv[optind + 1], argv[optind + 2]);
	else if (argc - optind == 6 && !strcmp(argv[optind], "attack"))
		rc = run_attack(argv[optind + 1], argv[optind + 2], argv[optind + 3],
				argv[optind + 4], argv[optind + 5]);
	else
		usage();
	if (!strcmp(argv[optind], "target"))
		printf("%d checks, %d failed\n", checks_run, checks_failed);
	return rc;
}
