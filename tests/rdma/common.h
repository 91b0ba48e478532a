/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared pieces of tern's RDMA test programs: the out-of-band TCP channel, RC queue pair
 * set-up over RoCEv2, bounded completion polling and the byte pattern every check uses.
 */
#ifndef TERN_RDMA_TEST_COMMON_H
#define TERN_RDMA_TEST_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#define MSG_MAX		512

/* Failures of the program itself (not of the device): print and exit 2. */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* One check's verdict, as a TAP-like line on stdout ("ok - ..." / "not ok - ..."). */
int check(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
extern int checks_run, checks_failed;

/* --- out-of-band channel: text lines over TCP, every read bounded ------------------------ */
int oob_listen(int port);
int oob_accept(int lfd, int timeout_s);
int oob_connect(const char *host, int port, int timeout_s);
void oob_send(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reads one line (without '\n') into buf; returns 0, or -1 on EOF/timeout. */
int oob_recv(int fd, char *buf, size_t len);
/* oob_recv() that dies on EOF or timeout, and on a line not starting with expect. */
void oob_expect(int fd, char *buf, size_t len, const char *expect);

/* --- verbs ---------------------------------------------------------------------------- */
struct dev {
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_port_attr port_attr;
	union ibv_gid gid;
	int port;
	int gid_index;
};

void dev_open(struct dev *d, const char *name, int port, int gid_index);

/* What a peer needs to reach one of our QPs. */
struct qp_dest {
	uint32_t qpn;
	uint32_t psn;
	union ibv_gid gid;
};

struct qp_opts {
	int max_send_wr, max_recv_wr, max_send_sge, max_recv_sge;
	int rnr_retry;		/* 0..7 (7: forever) */
	int min_rnr_timer;	/* IB encoding */
	int timeout;		/* local ACK timeout, IB encoding */
	int access;		/* qp_access_flags; 0: local write, remote write and read */
};

/*
 * An RC QP (a UC one with qp_type_uc set: SEND and WRITE only, no READ, no atomics); with
 * wr_mode set, made by ibv_create_qp_ex with the send_ops_flags of the opcodes below (the
 * atomics when the device has them), for post_wrs. qp_connect gives each type the
 * attributes the verbs allow it.
 */
extern int qp_type_uc;
struct ibv_qp *qp_create(struct dev *d, struct ibv_pd *pd, struct ibv_cq *cq,
			 const struct qp_opts *o);
/*
 * ibv_post_send, or with wr_mode set the same WRs through ibv_wr_start, ibv_wr_<opcode>,
 * ibv_wr_set_sge_list or ibv_wr_set_inline_data_list, ibv_wr_complete: the whole chain in
 * one batch; if wr_complete refuses it (nothing posted), one batch per WR, so that the WRs
 * before the bad one are posted and *bad names it, as ibv_post_send does. SEND, WRITE,
 * READ (with immediate where they have one) and the two atomics; on a UD QP the address
 * through ibv_wr_set_ud_addr.
 */
extern int wr_mode;
int post_wrs(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
/* RESET -> INIT -> RTR -> RTS towards dest. Returns 0 or an errno (printed). */
int qp_connect(struct dev *d, struct ibv_qp *qp, const struct qp_opts *o,
	       const struct qp_dest *local, const struct qp_dest *remote);
void dest_format(const struct qp_dest *q, char *buf, size_t len);
int dest_parse(const char *s, struct qp_dest *q);
/*
 * Exchanges dests over fd (the server receives first) and connects. With ece_exchange set
 * (the default) and ECE on both sides (ibv_query_ece), each side's offer goes with its dest
 * and the peer's is given to ibv_set_ece() before the QP connects, as an application that
 * connects its QPs itself agrees on transport options; another vendor's options (EINVAL)
 * leave the QP standard.
 */
extern int ece_exchange;
int qp_exchange_connect(struct dev *d, struct ibv_qp *qp, const struct qp_opts *o, int fd,
			int is_server);
enum ibv_qp_state qp_state(struct ibv_qp *qp);
/* The small RC QP most pair programs use: 8 WRs and 1 SGE each way, RNR retries forever. */
struct qp_opts qp_opts_small(void);
/* One signalled WR of @op (SEND, WRITE, READ) of one SGE; ibv_post_send's return. */
int post_send_one(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t addr, uint32_t len,
		  uint32_t lkey, uint64_t raddr, uint32_t rkey);
/* One receive WR of one SGE (wr_id 1); ibv_post_recv's return. */
int post_recv_one(struct ibv_qp *qp, uint64_t addr, uint32_t len, uint32_t lkey);
/* poll_one() within timeout_ms; a failed check "WHAT: no completion" when none. 1: got one. */
int wait_wc_for(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms, const char *what);
const char *qp_state_str(int state);

/*
 * CQs the programs make: with cq_ex_mode set, through ibv_create_cq_ex (the standard
 * wc_flags) and polled with ibv_start_poll, ibv_wc_read_* and ibv_end_poll, the completions
 * converted to struct ibv_wc so that every check holds the extended path to the same facts;
 * else ibv_create_cq and ibv_poll_cq. NULL with errno set on failure.
 *   CQ_EX_SINGLE  one completion per start_poll/end_poll
 *   CQ_EX_BATCH   start_poll, then ibv_next_poll until ENOENT (or 16 completions), then
 *                 end_poll; the ones not asked for yet are handed out by later polls.
 *                 Soft-RoCE's provider in rdma-core 44 consumes one CQE too many when
 *                 end_poll follows a next_poll that returned ENOENT (a phantom completion
 *                 appears), so runs against it use CQ_EX_SINGLE.
 */
enum { CQ_EX_OFF, CQ_EX_SINGLE, CQ_EX_BATCH };
extern int cq_ex_mode;
struct ibv_cq *cq_create(struct ibv_context *ctx, int cqe);
int cq_destroy(struct ibv_cq *cq);

/* Polls cq for one completion within timeout_ms; 1: got one, 0: none, -1: poll error. */
int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms);
/* One non-blocking poll of up to n completions (ibv_poll_cq's contract). */
int cq_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc);

/* --- the byte pattern ------------------------------------------------------------------- */
#define GUARD_BYTE	0xa5
static inline uint8_t pattern_byte(uint32_t seed, uint64_t i)
{
	uint32_t w = (uint32_t)((i >> 2) + 1) * 0x9e3779b1u ^ seed;

	return (uint8_t)(w >> ((i & 3) * 8));
}
void pattern_fill(uint8_t *p, size_t len, uint32_t seed, uint64_t stream_off);
/* Index of the first byte that differs from the pattern, or -1. */
long pattern_check(const uint8_t *p, size_t len, uint32_t seed, uint64_t stream_off);
/* Index of the first byte that is not GUARD_BYTE, or -1. */
long guard_check(const uint8_t *p, size_t len);

uint32_t rnd32(uint64_t *state);
long now_ms(void);
/* The enum name of an async event type, e.g. "IBV_EVENT_QP_ACCESS_ERR". */
const char *event_tag(enum ibv_event_type t);

#endif
