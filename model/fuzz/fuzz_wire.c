/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for the model's wire receive path: what any peer on the segment can send.
 *
 * Two devices (model/hostdrv) joined by the tests' wire (model/tests/harness.c), with one RC
 * (or UC: the top bit of the first two bytes) and one UD QP each and a memory region; each
 * input connects the QPs anew (its first two bytes: path MTU, IPv4 or IPv6, retry counts,
 * message sizes, QP type), posts receive WQEs and WQEs of every opcode (UC: SEND and WRITE) on
 * both sides, partly sent, so that QPs hold outstanding work (segments in flight, READ responses
 * expected, atomics saved). The rest of the input is a script:
 *
 *   'F' dev k n (off xor)*n len16 big [fill] fl
 *                                       frame k of the wire log mutated at n places, grown
 *                                       or cut to len (+ 4096 with big's top bit: up to
 *                                       69631 bytes; 0 keeps the length; bytes beyond the
 *                                       frame are @fill, given only when it grows);
 *                                       fl bit 1 makes it a UD SEND_ONLY to @dev's UD QP
 *                                       (BTH opcode, destination QP, a DETH with its Q_Key),
 *                                       fl bit 0 fixes IP/UDP lengths, IPv4 checksum and
 *                                       ICRC (so the parsers behind the ICRC check are
 *                                       reached); delivered to @dev
 *   'T' ns16                            time passes (retransmit, RNR, ACK timers), wire pumped
 *   'S' dev state                       MODIFY_QP to SQD, SQD->SQD with a new MTU, RTS or ERR
 *   'P' dev op len16                    one more WQE posted and rung (also SEND_INV)
 *   'D' dev                             the MR deregistered and registered again
 *   'C' dev mode                        SET_CC_PARAMS: DCQCN (reaction and notification
 *                                       point) or HPCC (INT shims on the data frames) on
 *                                       every priority, TIMELY (mode % 3 == 0, not 0) on
 *                                       priorities mode >> 2 | 1, or none (0)
 *   'N' dev k                           frame k of the wire log made a CNP (BTH opcode 0x81,
 *                                       its lengths and ICRC fixed), delivered to @dev
 *   'U' dev len16 fl                    a UD SEND from @dev's UD QP to the peer's UD QP (fl
 *                                       bit 0: the peer's UD QP on its SRQ; bit 1: Q_Key
 *                                       wrong)
 *   'E' dev op len16                    as 'P', the frames of the pump after it marked ECN CE
 *                                       (IPv4 checksum fixed) as a congested switch would
 *   'L' dev op len16                    a local WQE on the RC QP: REG_MR of the fast
 *                                       registration key over the MR's pages, BIND_MW of a
 *                                       type 2 window over the MR, LOCAL_INV of either
 * 'F' with fl bit 2 makes the UD datagram for @dev's UD QP on its SRQ.
 *
 * Any sanitizer report, a hang or unbounded memory is a bug. The devices outlive inputs (they
 * are made anew only when reconnecting fails), so a finding may need the inputs before it:
 * libFuzzer's crash file plus -runs over the corpus reproduces it.
 * Build: `make -C model fuzz`; run: `model/build/fuzz-wire -max_len=70000 CORPUS_DIR`.
 * tests/host/fuzz.t runs a bounded slice over the committed seeds (model/fuzz/corpus/wire).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_script.h"

#define MR_LEN		(64 * 1024)
#define ALL_ACC		(TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE | \
			 TERN_ACCESS_REMOTE_READ | TERN_ACCESS_REMOTE_ATOMIC)
#define SRQ_LOG		6
#define MAX_FRAME	(65535 + 4096)
#define UD_QKEY		0x11223344u

struct fz {
	struct conn c;
	struct rqp ud[2];
	bool ud_ok[2];
	struct rmr mr[2];
	bool mr_ok[2];
	struct rsrq srq[2];
	struct rqp sud[2];		/* UD QP on the SRQ */
	bool sud_ok[2];
	uint32_t frkey[2], mwkey[2];	/* 0: none */
	uint8_t frame[MAX_FRAME];
};

static const uint8_t ops[] = {
	TERN_WQE_SEND, TERN_WQE_SEND_IMM, TERN_WQE_RDMA_WRITE, TERN_WQE_RDMA_WRITE_IMM,
	TERN_WQE_RDMA_READ, TERN_WQE_ATOMIC_CMP_SWP, TERN_WQE_ATOMIC_FETCH_ADD,
};

static void post_one(struct fz *f, unsigned int s, unsigned int op, uint32_t len)
{
	struct rmr *l = &f->mr[s], *r = &f->mr[!s];
	/*
	 * UC: SEND and WRITE only (READ or an atomic would put the QP in ERR). A 'P' may also
	 * post a SEND with invalidate of the peer's (regular) MR key: its IETH reaches the
	 * wire and the peer's responder refuses the key (invalid request).
	 */
	unsigned int k = op % (f->c.o.uc ? 4 : sizeof(ops) + 1);
	uint8_t opcode = k < sizeof(ops) ? ops[k] : TERN_WQE_SEND_INV;
	struct sge sg;

	if (opcode == TERN_WQE_ATOMIC_CMP_SWP || opcode == TERN_WQE_ATOMIC_FETCH_ADD) {
		/* the atomic segment between the header and the SGE (post_send has none) */
		sg = mr_sge(l, (len & 0x3f8), 8);
		post_atomic(f->c.d[s], &f->c.qp[s], opcode, op, &sg, r->iova + (len & 0xff8),
			    r->key, len, op);
	} else {
		len %= MR_LEN / 2;
		sg = mr_sge(l, 0, len);
		post_send(f->c.d[s], &f->c.qp[s], opcode, TERN_WQE_F_SIGNALED, op, &sg, 1,
			  r->iova + MR_LEN / 2, r->key, 0x12345678);
	}
	ring_sq(f->c.d[s], &f->c.qp[s]);
}

static void drain_cqs(struct fz *f)
{
	struct wc w;
	unsigned int s, n;

	for (s = 0; s < 2; s++)
		for (n = 0; n < 256 && cq_poll(f->c.d[s], &f->c.cq[s], &w); n++)
			;
}

/* Frame k of the wire log, mutated and resized as the input says, into f->frame. */
static size_t make_frame(struct fz *f, struct in *in)
{
	unsigned int k = take(in, 1), n = take(in, 1) % 16, i;
	size_t len = 0, want;
	struct wire *w = &f->c.w;

	if (w->nlog) {
		const struct wire_rec *rec = &w->log[k % w->nlog];

		len = rec->len < sizeof(f->frame) ? rec->len : sizeof(f->frame);
		memcpy(f->frame, rec->data, len);
	}
	for (i = 0; i < n; i++) {
		unsigned int off = take(in, 2), x = take(in, 1);

		if (len)
			f->frame[off % len] ^= (uint8_t)x;
	}
	want = take(in, 2);
	if (take(in, 1) & 0x80)
		want += 4096;
	if (want > sizeof(f->frame))
		want = sizeof(f->frame);
	if (len < want)
		memset(f->frame + len, take(in, 1), want - len);
	return want ? want : len;
}

/*
 * Make the RoCE frame in f->frame a UD SEND_ONLY for @dev's UD QP: BTH opcode and
 * destination QP rewritten, a DETH (Q_Key, source QP 2) put in after the BTH and the rest
 * moved behind it. Frames that are not IPv4/IPv6 UDP are left alone.
 */
static size_t to_ud(struct fz *f, size_t len, unsigned int dev, bool srq)
{
	uint8_t *fr = f->frame;
	size_t l3 = (len >= 18 && fr[12] == 0x81 && fr[13] == 0x00) ? 18 : 14, bth;
	uint16_t et = len >= l3 ? (uint16_t)(fr[l3 - 2] << 8 | fr[l3 - 1]) : 0;
	uint32_t qpn = !f->c.qp[dev].qpn ? 0 : srq && f->sud_ok[dev] ? f->sud[dev].qpn :
		       f->ud[dev].qpn;

	if (et == 0x0800)
		bth = l3 + 20 + 8;
	else if (et == 0x86dd)
		bth = l3 + 40 + 8;
	else
		return len;
	if (len < bth + 12 || len + 8 > sizeof(f->frame))
		return len;
	memmove(fr + bth + 20, fr + bth + 12, len - bth - 12);
	fr[bth] = 0x64;
	fr[bth + 1] &= 0xcf;			/* no pad */
	fr[bth + 5] = (uint8_t)(qpn >> 16);
	fr[bth + 6] = (uint8_t)(qpn >> 8);
	fr[bth + 7] = (uint8_t)qpn;
	fr[bth + 12] = (uint8_t)(UD_QKEY >> 24);
	fr[bth + 13] = (uint8_t)(UD_QKEY >> 16);
	fr[bth + 14] = (uint8_t)(UD_QKEY >> 8);
	fr[bth + 15] = (uint8_t)UD_QKEY;
	fr[bth + 16] = 0;
	fr[bth + 17] = 0;
	fr[bth + 18] = 0;
	fr[bth + 19] = 2;
	return len + 8;
}

/* IPv4/IPv6 and UDP lengths, IPv4 checksum and ICRC made consistent with @len. */
static void fix_frame(uint8_t *fr, size_t len)
{
	size_t l3 = (len >= 18 && fr[12] == 0x81 && fr[13] == 0x00) ? 18 : 14;
	uint16_t et = len >= l3 ? (uint16_t)(fr[l3 - 2] << 8 | fr[l3 - 1]) : 0;
	size_t l4, ipl;

	if (et == 0x0800 && len >= l3 + 28) {
		l4 = l3 + 20;
		ipl = len - l3 > 0xffff ? 0xffff : len - l3;
		fr[l3 + 2] = (uint8_t)(ipl >> 8);
		fr[l3 + 3] = (uint8_t)ipl;
	} else if (et == 0x86dd && len >= l3 + 48) {
		l4 = l3 + 40;
		ipl = len - l4 > 0xffff ? 0xffff : len - l4;
		fr[l3 + 4] = (uint8_t)(ipl >> 8);
		fr[l3 + 5] = (uint8_t)ipl;
	} else {
		return;
	}
	ipl = len - l4 > 0xffff ? 0xffff : len - l4;
	fr[l4 + 4] = (uint8_t)(ipl >> 8);
	fr[l4 + 5] = (uint8_t)ipl;
	if (et == 0x0800)
		pkt_fix_ipv4_csum(fr, len);
	pkt_fix_icrc(fr, len);
}

/* The MR deregistered and registered again over the same memory with a new key byte. */
static void reregister(struct fz *f, unsigned int s)
{
	if (!f->mr_ok[s])
		return;
	f->mr_ok[s] = mr_destroy(f->c.d[s], &f->mr[s]) == TERN_CMD_OK &&
		      mr_register_again(f->c.d[s], &f->mr[s], f->c.d[s]->pdn,
					(uint8_t)(f->mr[s].key + 1)) == TERN_CMD_OK;
}

static enum wire_action drop_some(struct wire *w, unsigned int dir, unsigned int idx,
				  uint8_t *frame, size_t *len)
{
	(void)w;
	(void)dir;
	(void)frame;
	(void)len;
	return idx % 3 == 2 ? W_DROP : W_DELIVER;
}

/* The SRQ of side @s topped up to full (its CI from QUERY_SRQ), rung. */
static void srq_fill(struct fz *f, unsigned int s)
{
	typedef struct tern_cmd_query_srq_out T;
	uint8_t in[4], out[sizeof(T)];
	uint16_t ci;
	struct sge sg;

	wr32(in, f->srq[s].srqn);
	if (rdev_cmd(f->c.d[s], TERN_CMD_QUERY_SRQ, in, 4, out, sizeof(out), NULL) != TERN_CMD_OK)
		return;
	ci = rd16(out + OFF(T, ci));
	while ((uint16_t)(f->srq[s].pi - ci) < (1u << SRQ_LOG)) {
		sg = mr_sge(&f->mr[s], (f->srq[s].pi % 8) * 4096, 4096 + 40);
		srq_post(f->c.d[s], &f->srq[s], 300 + f->srq[s].pi, &sg, 1);
	}
	srq_ring(f->c.d[s], &f->srq[s]);
}

/* 'C': congestion control of side @s: DCQCN, HPCC, TIMELY or none. */
static void cc_mode(struct fz *f, unsigned int s, unsigned int mode)
{
	uint8_t p[sizeof(struct tern_cc_params)];

	cc_defaults(p);
	if (mode % 3 == 1) {
		p[OFF(struct tern_cc_params, rp_en)] = (uint8_t)(mode >> 2 | 1);
		p[OFF(struct tern_cc_params, np_en)] = 0xff;
	} else if (mode % 3 == 2) {
		p[OFF(struct tern_cc_params, hpcc_en)] = 0xff;
	} else if (mode) {
		p[OFF(struct tern_cc_params, timely_en)] = (uint8_t)(mode >> 2 | 1);
	}
	cc_set(&f->c.d[s]->f, p, NULL);
}

/* 'N': frame k of the log as a CNP (opcode 0x81) to the QP it names. */
static size_t to_cnp(struct fz *f, size_t len)
{
	uint8_t *fr = f->frame;
	size_t l3 = (len >= 18 && fr[12] == 0x81 && fr[13] == 0x00) ? 18 : 14;
	uint16_t et = len >= l3 ? (uint16_t)(fr[l3 - 2] << 8 | fr[l3 - 1]) : 0;
	size_t bth = l3 + (et == 0x86dd ? 40 : 20) + 8;

	if ((et != 0x0800 && et != 0x86dd) || len < bth + 12)
		return len;
	fr[bth] = 0x81;
	/* a CNP is a BTH, 16 reserved bytes and the ICRC */
	if (len > bth + 32) {
		memset(fr + bth + 12, 0, 16);
		len = bth + 32;
	}
	return len;
}

/* 'U': a UD SEND from side @s to the peer's UD QP (or its SRQ one). */
static void ud_send(struct fz *f, unsigned int s, uint32_t len, unsigned int fl)
{
	struct sge sg = mr_sge(&f->mr[s], 0, len % 4200);
	uint32_t dst = (fl & 1) && f->sud_ok[!s] ? f->sud[!s].qpn : f->ud[!s].qpn;

	if (!f->mr_ok[s] || !f->ud_ok[s])
		return;
	post_ud_send(f->c.d[s], &f->ud[s], f->c.d[!s], &f->c.o, len, dst,
		     (fl & 2) ? ~UD_QKEY : UD_QKEY, &sg);
	ring_sq(f->c.d[s], &f->ud[s]);
}

/* 'L': REG_MR, BIND_MW or LOCAL_INV on side @s's RC/UC QP. */
static void local_wqe(struct fz *f, unsigned int s, unsigned int op, uint32_t len)
{
	struct rdev *d = f->c.d[s];
	struct rqp *qp = &f->c.qp[s];

	if (!f->mr_ok[s])
		return;
	switch (op % 4) {
	case 0:
		if (f->frkey[s])
			post_reg(d, qp, op, f->frkey[s], &f->mr[s], f->mr[s].iova + (len & 0xf000),
				 4096 + (len & 0xfff) * 8, 1 + (op >> 2) % 16,
				 (uint8_t)(ALL_ACC >> (op >> 6)));
		break;
	case 1:
		if (f->mwkey[s])
			post_bind(d, qp, op, f->mwkey[s], &f->mr[s], len & 0x7fff,
				  (len >> 4) + 1, (uint8_t)(ALL_ACC >> (op >> 6)));
		break;
	default:
		post_send(d, qp, TERN_WQE_LOCAL_INV, TERN_WQE_F_SIGNALED, op, NULL, 0, 0,
			  (op & 1) ? f->mwkey[s] : f->frkey[s], 0);
		break;
	}
	ring_sq(d, qp);
}

/* 'E': every frame on the wire marked CE (the ICRC does not cover the ECN bits). */
static enum wire_action mark_ce(struct wire *w, unsigned int dir, unsigned int idx,
				uint8_t *frame, size_t *len)
{
	size_t l3 = (*len >= 18 && frame[12] == 0x81 && frame[13] == 0x00) ? 18 : 14;

	(void)w;
	(void)dir;
	(void)idx;
	if (*len >= l3 + 40 && frame[l3 - 2] == 0x86 && frame[l3 - 1] == 0xdd) {
		frame[l3 + 1] |= 0x30;
	} else if (*len >= l3 + 20 && frame[l3 - 2] == 0x08 && frame[l3 - 1] == 0x00) {
		frame[l3 + 1] |= 0x03;
		pkt_fix_ipv4_csum(frame, *len);
	}
	return W_DELIVER;
}

static void teardown(struct fz *f)
{
	unsigned int s;

	for (s = 0; s < 2; s++) {
		mr_release(&f->mr[s]);
		f->mr_ok[s] = false;
		if (f->ud_ok[s]) {
			qmem_free(&f->ud[s].sq);
			qmem_free(&f->ud[s].rq);
		}
		f->ud_ok[s] = false;
		if (f->sud_ok[s]) {
			qmem_free(&f->sud[s].sq);
			qmem_free(&f->srq[s].mem);
		}
		f->sud_ok[s] = false;
		f->frkey[s] = f->mwkey[s] = 0;
	}
	conn_free(&f->c);
	memset(&f->c, 0, sizeof(f->c));
}

/*
 * The two devices live across inputs (creating one costs more than most inputs); each input
 * starts from both QPs taken to RESET and connected again with its own options, its MRs and
 * receive WQEs in place. When that fails (a device or CQ broken by the last input), both
 * devices are made anew.
 */
static bool start(struct fz *f, const struct connopt *o)
{
	struct qpattr a;
	unsigned int s, i;
	struct sge sg;

	if (f->c.d[0]) {
		memset(&a, 0, sizeof(a));
		a.state = TERN_QPS_RESET;
		for (s = 0; s < 2; s++) {
			if (qp_modify(f->c.d[s], f->c.qp[s].qpn, TERN_QP_ATTR_STATE, &a, NULL) ||
			    !f->mr_ok[s] || !f->ud_ok[s] ||
			    ud_modify(f->c.d[s], f->ud[s].qpn, TERN_QP_ATTR_STATE, TERN_QPS_RESET,
				      0, 0, NULL) || !ud_up(f->c.d[s], &f->ud[s], UD_QKEY, 0))
				goto anew;
			f->c.qp[s].sq_pi = f->c.qp[s].rq_pi = 0;
			f->ud[s].sq_pi = f->ud[s].rq_pi = 0;
			if (f->sud_ok[s] &&
			    (ud_modify(f->c.d[s], f->sud[s].qpn, TERN_QP_ATTR_STATE, TERN_QPS_RESET,
				       0, 0, NULL) || !ud_up(f->c.d[s], &f->sud[s], UD_QKEY, 0)))
				goto anew;
			f->sud[s].sq_pi = 0;
		}
		if (f->c.o.uc != o->uc)
			goto anew;	/* the other QP type */
		drain_cqs(f);
		wire_clear_log(&f->c.w);
		f->c.o = *o;
		for (s = 0; s < 2; s++)
			if (!qp_connect(f->c.d[s], &f->c.qp[s], f->c.d[!s], f->c.qp[!s].qpn, o, s))
				goto anew;
	} else {
anew:
		teardown(f);
		if (!conn_setup(&f->c, o))
			return false;
		for (s = 0; s < 2; s++) {
			f->mr_ok[s] = mr_create(f->c.d[s], &f->mr[s], f->c.d[s]->pdn, MR_LEN,
						ALL_ACC | TERN_ACCESS_MW_BIND, 0) == 0;
			if (!f->mr_ok[s])
				return false;
			f->ud_ok[s] = ud_create(f->c.d[s], &f->ud[s], TERN_QPT_UD, &f->c.cq[s], 7,
						NULL) == TERN_CMD_OK;
			if (!f->ud_ok[s] || !ud_up(f->c.d[s], &f->ud[s], UD_QKEY, 0))
				return false;
			/* a UD QP on an SRQ, a fast registration key and a type 2 window */
			f->sud_ok[s] = srq_create_ex(f->c.d[s], &f->srq[s], SRQ_LOG, 6, 0) ==
				       TERN_CMD_OK;
			if (f->sud_ok[s] &&
			    (srq_qp_create_type(f->c.d[s], &f->sud[s], &f->c.cq[s], f->srq[s].srqn,
						TERN_QPT_UD, NULL) != TERN_CMD_OK ||
			     !ud_up(f->c.d[s], &f->sud[s], UD_QKEY, 0))) {
				qmem_free(&f->sud[s].sq);
				qmem_free(&f->srq[s].mem);
				f->sud_ok[s] = false;
			}
			if (key_create(f->c.d[s], f->c.d[s]->pdn, TERN_MR_F_FAST_REG, 16,
				       &f->frkey[s]) != TERN_CMD_OK)
				f->frkey[s] = 0;
			if (key_create(f->c.d[s], f->c.d[s]->pdn, TERN_MR_F_MW_TYPE2, 0,
				       &f->mwkey[s]) != TERN_CMD_OK)
				f->mwkey[s] = 0;
		}
	}
	for (s = 0; s < 2; s++) {
		for (i = 0; i < 4; i++) {
			sg = mr_sge(&f->mr[s], MR_LEN / 2 + i * 4096, 4096);
			post_recv(f->c.d[s], &f->c.qp[s], 100 + i, &sg, 1);
			sg = mr_sge(&f->mr[s], i * 4096, 4096 + 40);
			post_recv(f->c.d[s], &f->ud[s], 200 + i, &sg, 1);
		}
		ring_rq(f->c.d[s], &f->c.qp[s]);
		ring_rq(f->c.d[s], &f->ud[s]);
		cc_mode(f, s, 0);	/* an earlier input's 'C' undone */
		/* the SRQ kept full: its consumer index from QUERY_SRQ */
		if (f->sud_ok[s])
			srq_fill(f, s);
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz *f;
	struct in in = { data, size };
	struct connopt o;
	unsigned int i, cfg, steps;

	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f)
			abort();
	}
	cfg = take(&in, 2);
	connopt_default(&o);
	o.mtu = (uint8_t)(1 + cfg % 5);
	o.ip_version = (cfg & 0x8) ? 6 : 4;
	o.timeout = 8;
	o.retry_cnt = (uint8_t)((cfg >> 4) & 7);
	o.rnr_retry = (uint8_t)((cfg >> 7) & 7);
	o.access = ALL_ACC;
	o.uc = (cfg >> 15) & 1;
	if (o.uc) {
		o.access = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE;
	}
	/* RC selective repeat on about half the RC runs (its window, SACKs and probes) */
	if (!o.uc && (cfg & 0x4))
		o.xport = TERN_QP_XPORT_SR;
	/* the adaptive retransmit timer on some RC runs, with either recovery */
	if (!o.uc && (cfg & 0x40))
		o.xport |= TERN_QP_XPORT_ADAPTIVE_RTO;
	if (!start(f, &o)) {
		teardown(f);
		return 0;
	}
	fuzz_wire_bound(&f->c.w);
	/* work of every opcode on both sides, a third of the frames lost */
	f->c.w.filter = drop_some;
	for (i = 0; i < sizeof(ops); i++)
		post_one(f, i & 1, i, ((cfg >> 10) & 0x1f) * 1500 + i * 700);
	wire_pump(&f->c.w);
	f->c.w.filter = NULL;

	for (steps = 0; in.n && steps < 64; steps++) {
		unsigned int cmd = take(&in, 1), dev = take(&in, 1) & 1;
		size_t len;

		switch (cmd) {
		case 'F': {
			unsigned int fl;

			len = make_frame(f, &in);
			fl = take(&in, 1);
			if (fl & 2)
				len = to_ud(f, len, dev, fl & 4);
			if (fl & 1)
				fix_frame(f->frame, len);
			tern_model_rx_frame(f->c.d[dev]->f.m, f->frame, len);
			wire_pump(&f->c.w);
			break;
		}
		case 'T':
			wire_advance(&f->c.w, (uint64_t)take(&in, 2) * 1000);
			break;
		case 'S':
			fuzz_modify_qp(f->c.d[dev], f->c.qp[dev].qpn, take(&in, 1), 5);
			wire_pump(&f->c.w);
			break;
		case 'P':
			post_one(f, dev, take(&in, 1), take(&in, 2));
			wire_pump(&f->c.w);
			break;
		case 'D':
			reregister(f, dev);
			break;
		case 'C':
			cc_mode(f, dev, take(&in, 1));
			break;
		case 'N': {
			const struct wire_rec *rec;

			if (!f->c.w.nlog)
				break;
			rec = &f->c.w.log[take(&in, 1) % f->c.w.nlog];
			len = rec->len < sizeof(f->frame) ? rec->len : sizeof(f->frame);
			memcpy(f->frame, rec->data, len);
			len = to_cnp(f, len);
			fix_frame(f->frame, len);
			tern_model_rx_frame(f->c.d[dev]->f.m, f->frame, len);
			wire_pump(&f->c.w);
			break;
		}
		case 'U': {
			uint32_t l = take(&in, 2);

			ud_send(f, dev, l, take(&in, 1));
			wire_pump(&f->c.w);
			break;
		}
		case 'E': {
			unsigned int op = take(&in, 1);

			f->c.w.filter = mark_ce;
			post_one(f, dev, op, take(&in, 2));
			wire_pump(&f->c.w);
			f->c.w.filter = NULL;
			break;
		}
		case 'L': {
			unsigned int op = take(&in, 1);

			local_wqe(f, dev, op, take(&in, 2));
			wire_pump(&f->c.w);
			break;
		}
		default:
			break;
		}
		drain_cqs(f);
	}
	wire_advance(&f->c.w, 300000);
	drain_cqs(f);
	return 0;
}
