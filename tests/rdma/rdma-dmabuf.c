// SPDX-License-Identifier: GPL-2.0
/*
 * rdma-dmabuf: a dma-buf memory region (ibv_reg_dmabuf_mr) between two hosts over an RC
 * queue pair on RoCEv2.
 *
 *   server:  rdma-dmabuf -d DEV -g GIDX [-p PORT] [-t SECONDS] [-x udmabuf|vgem]
 *   client:  rdma-dmabuf -d DEV -g GIDX [-p PORT] [-t SECONDS] SERVER
 *
 * The server makes a dma-buf of ordinary memory and maps it for the CPU: with /dev/udmabuf
 * (CONFIG_UDMABUF) from a sealed memfd, mapped through the memfd; otherwise from a dumb buffer
 * of the vgem DRM driver (shmem pages; PRIME export), mapped through the dma-buf. -x picks
 * one; by default udmabuf when /dev/udmabuf exists, else vgem. Every check of the bytes is
 * made through that CPU mapping, never through the RDMA device.
 *
 * The server first checks what ibv_reg_dmabuf_mr refuses, with the errno the RDMA core gives
 * every device: a range beyond the dma-buf, a zero length, an iova whose place in its page
 * differs from the offset's, REMOTE_WRITE without LOCAL_WRITE, IBV_ACCESS_ON_DEMAND, a file
 * that is not a dma-buf (EINVAL each) and a closed descriptor (EBADF). It then registers
 * LEN bytes at a sub-page offset of the dma-buf at an unrelated iova, and:
 *   1. the client READs the MR (pattern 1, written by the server's CPU), WRITEs pattern 2
 *      into its first half and SENDs pattern 3 into a receive the server posted on its second
 *      half; the server checks both halves and that the bytes around the MR are untouched;
 *   2. the server SENDs the first half (pattern 4, written by its CPU) out of the MR through
 *      its lkey; the client checks what it received;
 *   3. the server deregisters the MR; the client's WRITE through the old rkey completes with
 *      IBV_WC_REM_ACCESS_ERR, both QPs go to ERR and the dma-buf is unchanged; the same range
 *      registers again (the deregistration released the attachment).
 *
 * Both sides print one line per check ("ok - what" / "not ok - what: why") and exit 0 when
 * every check passed, 1 when one failed, 2 when the program could not run (among others:
 * no dma-buf exporter on this kernel).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/udmabuf.h>

#include "common.h"

#define BUF_SIZE	(256 * 1024)		/* the dma-buf */
#define MR_OFF		(3 * 4096 + 256)	/* where the MR starts in it */
#define LEN		(128 * 1024)		/* the MR */
#define HALF		(LEN / 2)
#define MR_IOVA		(0x5a0000000000ull + (MR_OFF & 4095))
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

static const char *opt_dev, *opt_exporter;
static int opt_port = 18850, opt_gid = -1, opt_ibport = 1, opt_timeout_s = 60;

/*
 * The DRM uAPI the vgem path needs (include/uapi/drm/drm.h and drm_mode.h; the host has no
 * libdrm headers).
 */
struct t_drm_version {
	int major, minor, patchlevel;
	size_t name_len;
	char *name;
	size_t date_len;
	char *date;
	size_t desc_len;
	char *desc;
};

struct t_drm_create_dumb {
	uint32_t height, width, bpp, flags, handle, pitch;
	uint64_t size;
};

struct t_drm_prime_handle {
	uint32_t handle, flags;
	int32_t fd;
};

#define T_DRM_IOCTL_VERSION		_IOWR('d', 0x00, struct t_drm_version)
#define T_DRM_IOCTL_PRIME_HANDLE_TO_FD	_IOWR('d', 0x2d, struct t_drm_prime_handle)
#define T_DRM_IOCTL_MODE_CREATE_DUMB	_IOWR('d', 0xb2, struct t_drm_create_dumb)

struct dmabuf {
	int fd;			/* the dma-buf */
	uint8_t *map;		/* BUF_SIZE bytes of it for the CPU */
	int sync_fd;		/* the dma-buf, when CPU access is bracketed with DMA_BUF_IOCTL_SYNC */
	const char *how;
};

static int udmabuf_make(struct dmabuf *b)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = BUF_SIZE };
	int dev, memfd;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -1;
	memfd = memfd_create("rdma-dmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, BUF_SIZE) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		die("memfd for udmabuf: %m");
	c.memfd = memfd;
	b->fd = ioctl(dev, UDMABUF_CREATE, &c);
	if (b->fd < 0)
		die("UDMABUF_CREATE: %m");
	b->map = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (b->map == MAP_FAILED)
		die("mmap memfd: %m");
	b->sync_fd = -1;
	b->how = "udmabuf of a sealed memfd, checked through the memfd's mapping";
	close(dev);
	return 0;
}

static int vgem_open(void)
{
	char path[32], name[16];
	int i;

	for (i = 0; i < 16; i++) {
		struct t_drm_version v = { .name_len = sizeof(name) - 1, .name = name };
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		if (!ioctl(fd, T_DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -1;
}

static int vgem_make(struct dmabuf *b)
{
	struct t_drm_create_dumb cd = { .height = BUF_SIZE / 4096, .width = 4096, .bpp = 8 };
	struct t_drm_prime_handle ph = { .flags = O_CLOEXEC | O_RDWR };
	int card = vgem_open();

	if (card < 0)
		return -1;
	if (ioctl(card, T_DRM_IOCTL_MODE_CREATE_DUMB, &cd) || cd.size < BUF_SIZE)
		die("vgem: DRM_IOCTL_MODE_CREATE_DUMB: %m (size %" PRIu64 ")", cd.size);
	ph.handle = cd.handle;
	if (ioctl(card, T_DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph))
		die("vgem: DRM_IOCTL_PRIME_HANDLE_TO_FD: %m");
	b->fd = ph.fd;
	b->map = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (b->map == MAP_FAILED)
		die("mmap of the vgem dma-buf: %m");
	b->sync_fd = b->fd;
	b->how = "vgem dumb buffer exported with PRIME, checked through the dma-buf's mapping";
	/* the dma-buf holds the buffer; the card stays open for the program's life */
	return 0;
}

static void dmabuf_make(struct dmabuf *b)
{
	int udm = !opt_exporter || !strcmp(opt_exporter, "udmabuf");
	int vgem = !opt_exporter || !strcmp(opt_exporter, "vgem");

	if (!udm && !vgem)
		die("-x: udmabuf or vgem");
	if (udm && !udmabuf_make(b))
		return;
	if (vgem && !vgem_make(b))
		return;
	die("no dma-buf exporter: no /dev/udmabuf (CONFIG_UDMABUF) and no vgem DRM device "
	    "(modprobe vgem)");
}

/* Bracket CPU access to the dma-buf as the dma-buf API asks (a no-op for udmabuf's memfd). */
static void cpu_access(const struct dmabuf *b, int end, int write)
{
	struct dma_buf_sync s = {
		.flags = (end ? DMA_BUF_SYNC_END : DMA_BUF_SYNC_START) |
			 (write ? DMA_BUF_SYNC_RW : DMA_BUF_SYNC_READ),
	};

	if (b->sync_fd >= 0 && ioctl(b->sync_fd, DMA_BUF_IOCTL_SYNC, &s))
		die("DMA_BUF_IOCTL_SYNC: %m");
}

/* --- server ------------------------------------------------------------------------------ */

static void expect_refused(struct ibv_pd *pd, uint64_t off, size_t len, uint64_t iova, int fd,
			   int access, int want, const char *what)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, off, len, iova, fd, access);
	check(!mr && errno == want, "server: ibv_reg_dmabuf_mr with %s fails with %s (%s)", what,
	      strerror(want), mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

static void expect_bytes(struct dmabuf *b, uint32_t seed0, uint32_t seed1, const char *what)
{
	long bad0, bad1, pre, post;

	cpu_access(b, 0, 0);
	pre = guard_check(b->map, MR_OFF);
	bad0 = pattern_check(b->map + MR_OFF, HALF, seed0, 0);
	bad1 = pattern_check(b->map + MR_OFF + HALF, HALF, seed1, 0);
	post = guard_check(b->map + MR_OFF + LEN, BUF_SIZE - MR_OFF - LEN);
	cpu_access(b, 1, 0);
	check(bad0 < 0 && bad1 < 0 && pre < 0 && post < 0, "server: %s (first bad byte: first "
	      "half %ld, second half %ld, before the MR %ld, after it %ld)", what, bad0, bad1,
	      pre, post);
}

static int run_server(void)
{
	struct qp_opts o = qp_opts_small();
	struct ibv_mr *mr, *again;
	char line[MSG_MAX];
	struct dmabuf b;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	struct dev d;
	int lfd, fd, other, closed, rc;
	uint32_t rkey;

	dmabuf_make(&b);
	printf("# dma-buf: %s\n", b.how);
	cpu_access(&b, 0, 1);
	memset(b.map, GUARD_BYTE, BUF_SIZE);
	pattern_fill(b.map + MR_OFF, LEN, 1, 0);
	cpu_access(&b, 1, 1);

	dev_open(&d, opt_dev, opt_ibport, opt_gid);
	pd = ibv_alloc_pd(d.ctx);
	cq = cq_create(d.ctx, 16);
	if (!pd || !cq)
		die("server: PD/CQ: %m");

	/* what the RDMA core refuses before the driver sees it, and what the driver refuses */
	expect_refused(pd, BUF_SIZE - 4096, 8192, BUF_SIZE - 4096, b.fd, ACCESS, EINVAL,
		       "a range beyond the end of the dma-buf");
	expect_refused(pd, MR_OFF, 0, MR_IOVA, b.fd, ACCESS, EINVAL, "length 0");
	expect_refused(pd, MR_OFF, LEN, MR_IOVA + 8, b.fd, ACCESS, EINVAL,
		       "an iova at another place in its page than the offset");
	expect_refused(pd, MR_OFF, LEN, MR_IOVA, b.fd, IBV_ACCESS_REMOTE_WRITE, EINVAL,
		       "REMOTE_WRITE without LOCAL_WRITE");
	expect_refused(pd, MR_OFF, LEN, MR_IOVA, b.fd, ACCESS | IBV_ACCESS_ON_DEMAND, EINVAL,
		       "IBV_ACCESS_ON_DEMAND");
	other = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (other < 0)
		die("/dev/null: %m");
	expect_refused(pd, MR_OFF, LEN, MR_IOVA, other, ACCESS, EINVAL,
		       "a file that is not a dma-buf");
	closed = dup(other);
	close(closed);
	close(other);
	expect_refused(pd, MR_OFF, LEN, MR_IOVA, closed, ACCESS, EBADF, "a closed descriptor");

	mr = ibv_reg_dmabuf_mr(pd, MR_OFF, LEN, MR_IOVA, b.fd, ACCESS);
	check(mr && mr->length == LEN && (uintptr_t)mr->addr == MR_OFF,
	      "server: ibv_reg_dmabuf_mr of %d bytes at offset %d, iova %#llx: %s", LEN, MR_OFF,
	      MR_IOVA, mr ? "registered" : strerror(errno));
	if (!mr)
		die("server: cannot go on without the MR");
	qp = qp_create(&d, pd, cq, &o);
	if (!qp)
		die("server: QP: %m");

	lfd = oob_listen(opt_port);
	fd = oob_accept(lfd, opt_timeout_s);
	if (qp_exchange_connect(&d, qp, &o, fd, 1))
		die("server: connect failed");
	if (post_recv_one(qp, MR_IOVA + HALF, HALF, mr->lkey))
		die("server: post_recv: %m");

	/* 1: READ, WRITE and SEND into the MR by the peer */
	oob_send(fd, "MR %llx %x", MR_IOVA, mr->rkey);
	oob_expect(fd, line, sizeof(line), "DONE1");
	if (wait_wc_for(cq, &wc, opt_timeout_s * 1000, "server: step 1: the client's SEND into the MR"))
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      wc.byte_len == HALF, "server: step 1: the SEND into the MR completed its "
		      "receive (%s, %u bytes)", ibv_wc_status_str(wc.status), wc.byte_len);
	expect_bytes(&b, 2, 3, "step 1: the client's WRITE landed in the first half, its SEND "
		     "in the second, nothing around the MR changed");

	/* 2: SEND out of the MR */
	cpu_access(&b, 0, 1);
	pattern_fill(b.map + MR_OFF, HALF, 4, 0);
	cpu_access(&b, 1, 1);
	if (post_send_one(qp, IBV_WR_SEND, MR_IOVA, HALF, mr->lkey, 0, 0))
		die("server: post_send: %m");
	if (wait_wc_for(cq, &wc, opt_timeout_s * 1000, "server: step 2: SEND out of the MR"))
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND,
		      "server: step 2: SEND of %d bytes out of the MR through its lkey: %s", HALF,
		      ibv_wc_status_str(wc.status));
	oob_expect(fd, line, sizeof(line), "DONE2");

	/* 3: the rkey after deregistration */
	rkey = mr->rkey;
	rc = ibv_dereg_mr(mr);
	check(!rc, "server: step 3: ibv_dereg_mr of the dma-buf MR: %s", rc ? strerror(rc) : "ok");
	oob_send(fd, "DEREG %llx %x", MR_IOVA, rkey);
	oob_expect(fd, line, sizeof(line), "DONE3");
	check(qp_state(qp) == IBV_QPS_ERR, "server: step 3: the QP that got the WRITE through the "
	      "deregistered rkey is in ERR (%s)", qp_state_str(qp_state(qp)));
	expect_bytes(&b, 4, 3, "step 3: the refused WRITE changed nothing in the dma-buf");
	again = ibv_reg_dmabuf_mr(pd, MR_OFF, LEN, MR_IOVA, b.fd, ACCESS);
	check(again != NULL, "server: step 3: the same range of the dma-buf registers again: %s",
	      again ? "registered" : strerror(errno));
	oob_send(fd, "BYE");

	if (ibv_destroy_qp(qp) || (again && ibv_dereg_mr(again)) || ibv_dealloc_pd(pd) ||
	    cq_destroy(cq))
		die("server: teardown: %m");
	munmap(b.map, BUF_SIZE);
	close(b.fd);
	return checks_failed ? 1 : 0;
}

/* --- client ------------------------------------------------------------------------------ */

static int run_client(const char *host)
{
	struct qp_opts o = qp_opts_small();
	unsigned long long raddr;
	char line[MSG_MAX];
	struct ibv_mr *lmr;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	struct dev d;
	uint8_t *p;
	uint32_t rkey;
	long bad;
	int fd;

	dev_open(&d, opt_dev, opt_ibport, opt_gid);
	pd = ibv_alloc_pd(d.ctx);
	cq = cq_create(d.ctx, 16);
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!pd || !cq || p == MAP_FAILED)
		die("client: PD/CQ/buffer: %m");
	lmr = ibv_reg_mr(pd, p, LEN, IBV_ACCESS_LOCAL_WRITE);
	qp = qp_create(&d, pd, cq, &o);
	if (!lmr || !qp)
		die("client: MR/QP: %m");
	fd = oob_connect(host, opt_port, opt_timeout_s);
	if (qp_exchange_connect(&d, qp, &o, fd, 0))
		die("client: connect failed");

	oob_expect(fd, line, sizeof(line), "MR");
	if (sscanf(line, "MR %llx %x", &raddr, &rkey) != 2)
		die("bad MR line: %s", line);

	/* 1: READ the whole MR, WRITE its first half, SEND into its second */
	memset(p, GUARD_BYTE, LEN);
	if (post_send_one(qp, IBV_WR_RDMA_READ, (uintptr_t)p, LEN, lmr->lkey, raddr, rkey))
		die("client: post READ: %m");
	if (wait_wc_for(cq, &wc, opt_timeout_s * 1000, "client: step 1: READ of the dma-buf MR")) {
		bad = wc.status == IBV_WC_SUCCESS ? pattern_check(p, LEN, 1, 0) : 0;
		check(wc.status == IBV_WC_SUCCESS && bad < 0, "client: step 1: READ of %d bytes "
		      "of the dma-buf MR: %s, first bad byte %ld", LEN,
		      ibv_wc_status_str(wc.status), bad);
	}
	pattern_fill(p, HALF, 2, 0);
	if (post_send_one(qp, IBV_WR_RDMA_WRITE, (uintptr_t)p, HALF, lmr->lkey, raddr, rkey))
		die("client: post WRITE: %m");
	if (wait_wc_for(cq, &wc, opt_timeout_s * 1000, "client: step 1: WRITE into the dma-buf MR"))
		check(wc.status == IBV_WC_SUCCESS, "client: step 1: WRITE of %d bytes into the "
		      "dma-buf MR: %s", HALF, ibv_wc_status_str(wc.status));
	pattern_fill(p + HALF, HALF, 3, 0);
	if (post_send_one(qp, IBV_WR_SEND, (uintptr_t)p + HALF, HALF, lmr->lkey, 0, 0))
		die("client: post SEND: %m");
	if (wait_wc_for(cq, &wc, opt_timeout_s * 1000, "client: step 1: SEND into the dma-buf MR"))
		check(wc.status == IBV_WC_SUCCESS, "client: step 1: SEND of %d bytes into the "
		      "dma-buf MR: %s", HALF, ibv_wc_status_str(wc.status));
	memset(p, GUARD_BYTE, LEN);
	if (post_recv_one(qp, (uintptr_t)p, LEN, lmr->lkey))
		die("client: post_recv: %m");
	oob_send(fd, "DONE1");

	/* 2: the server SENDs out of its MR */
	if (wait_wc_for(cq, &wc, opt_timeout_s * 1000, "client: step 2: receive of the SEND out of the dma-buf MR")) {
		bad = wc.status == IBV_WC_SUCCESS ? pattern_check(p, HALF, 4, 0) : 0;
		check(wc.status == IBV_WC_SUCCESS && wc.byte_len == HALF && bad < 0,
		      "client: step 2: received the SEND out of the dma-buf MR: %s, %u bytes, "
		      "first bad byte %ld", ibv_wc_status_str(wc.status), wc.byte_len, bad);
	}
	oob_send(fd, "DONE2");

	/* 3: the rkey of the deregistered MR */
	oob_expect(fd, line, sizeof(line), "DEREG");
	if (sscanf(line, "DEREG %llx %x", &raddr, &rkey) != 2)
		die("bad DEREG line: %s", line);
	pattern_fill(p, HALF, 5, 0);
	if (post_send_one(qp, IBV_WR_RDMA_WRITE, (uintptr_t)p, HALF, lmr->lkey, raddr, rkey))
		die("client: post WRITE: %m");
	if (wait_wc_for(cq, &wc, opt_timeout_s * 1000, "client: step 3: WRITE through the deregistered rkey"))
		check(wc.status == IBV_WC_REM_ACCESS_ERR, "client: step 3: a WRITE through the rkey "
		      "of the deregistered dma-buf MR completes with IBV_WC_REM_ACCESS_ERR (%s)",
		      ibv_wc_status_str(wc.status));
	check(qp_state(qp) == IBV_QPS_ERR, "client: step 3: the QP is in ERR (%s)",
	      qp_state_str(qp_state(qp)));
	oob_send(fd, "DONE3");
	oob_expect(fd, line, sizeof(line), "BYE");

	ibv_destroy_qp(qp);
	ibv_dereg_mr(lmr);
	cq_destroy(cq);
	ibv_dealloc_pd(pd);
	return checks_failed ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: rdma-dmabuf [-d DEV] [-i IBPORT] -g GID_INDEX [-p TCP_PORT] "
		"[-t SECONDS] [-x udmabuf|vgem] [SERVER]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:i:g:p:t:x:")) != -1) {
		switch (c) {
		case 'd': opt_dev = optarg; break;
		case 'i': opt_ibport = atoi(optarg); break;
		case 'g': opt_gid = atoi(optarg); break;
		case 'p': opt_port = atoi(optarg); break;
		case 't': opt_timeout_s = atoi(optarg); break;
		case 'x': opt_exporter = optarg; break;
		default: usage();
		}
	}
	if (opt_gid < 0 || argc - optind > 1)
		usage();
	return optind < argc ? run_client(argv[optind]) : run_server();
}
