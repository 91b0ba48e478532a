/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: UD and GSI QPs. A UD message is one packet, BTH (SEND_ONLY 0x64 or
 * SEND_ONLY_WITH_IMMEDIATE 0x65) + DETH (Q_Key, source QPN) [+ ImmDt] + payload + pad + ICRC,
 * addressed per WQE by its struct tern_ud_seg. There is no acknowledgement, retransmission
 * or RNR: a send completes as soon as its packet is out; a packet that finds no receive WQE
 * is dropped (out_of_buffer). The GSI QP is a UD QP numbered 1.
 *
 * Send: the WQE at sq_ci is read (header, tern_ud_seg, SGEs or inline data), its path
 * turned into the QP's header template (the builder RC uses), and the packet goes out with
 * PSN sq_psn (then incremented), P_Key 0xffff, the seg's Q_Key (the QP's if bit 31 of the
 * seg's is set) and the QP's number as source QPN. A message longer than the port's RoCE MTU
 * (the largest IB MTU that fits the Ethernet MTU with the RoCE headers, as the driver reports
 * it) completes with LOC_LEN_ERR and the QP goes to ERR; malformed WQEs and bad lkeys fail as
 * on an RC QP. The requester's indices stay equal (req_idx = req_max = sq_ci), so RESET, ERR
 * flushing and SQD work as for RC.
 *
 * Receive: packets for a UD/GSI QP in RTR..SQE whose DETH Q_Key equals the QP's take the
 * next receive WQE, which gets the 40-byte GRH area (the IPv6 header as received; for IPv4,
 * 20 zero bytes then the IPv4 header) followed by the payload. The CQE has byte_len 40 +
 * payload, src_qpn from the DETH and TERN_CQE_F_GRH (+ F_IPV4, F_IMM, F_SOLICITED). A WQE too
 * small for it completes with LOC_LEN_ERR and the QP goes to ERR.
 *
 * Multicast (rdma_mcast.c): a WQE whose path has a multicast dgid goes to the group's
 * Ethernet address with DestQP 0xffffff, and to this port's members of the group too; a
 * packet with DestQP 0xffffff and a multicast IP destination is received by each QP attached
 * to that group, each as if it alone had been addressed; the port counts the packet once.
 */
#include "rdma.h"

/* What the driver subtracts from the Ethernet MTU for RoCE (Linux iboe_get_mtu()). */
#define ROCE_MTU_OVERHEAD	88

/* The GRH area at the start of every UD receive: the IPv6 header, or 20 zeros + IPv4's. */
#define GRH_AREA_LEN		40

static inline uint32_t sq_mask(const struct ternm_qp *qp)
{
	return (1u << qp->log_sq_depth) - 1;
}

/* The port's RoCE MTU in bytes: the largest IB MTU (256..4096) that fits the Ethernet MTU. */
uint32_t ternm_ud_mtu(const struct tern_model *m)
{
	uint32_t mtu;

	for (mtu = 4096; mtu > 256; mtu >>= 1)
		if (mtu + ROCE_MTU_OVERHEAD <= m->mtu)
			break;
	return mtu;
}

/* ---- MODIFY_QP --------------------------------------------------------------------------- */

/*
 * Attributes a UD/GSI QP's transition @cur -> @next may carry besides STATE; *need gets
 * those it must carry. (The RC-only attributes are never allowed.)
 */
uint32_t ternm_ud_attrs(uint8_t cur, uint8_t next, uint32_t *need)
{
	*need = 0;
	if (next == TERN_QPS_RESET || next == TERN_QPS_ERR)
		return 0;
	if (cur == TERN_QPS_RESET && next == TERN_QPS_INIT) {
		*need = TERN_QP_ATTR_QKEY;
		return TERN_QP_ATTR_QKEY;
	}
	if (cur == TERN_QPS_RTR && next == TERN_QPS_RTS) {
		*need = TERN_QP_ATTR_SQ_PSN;
		return TERN_QP_ATTR_SQ_PSN | TERN_QP_ATTR_QKEY;
	}
	if (cur == TERN_QPS_RTS && next == TERN_QPS_SQD)
		return TERN_QP_ATTR_SQD_NOTIFY;
	/* INIT->INIT, INIT->RTR, RTS->RTS, SQD->SQD, SQD->RTS, SQE->RTS */
	return TERN_QP_ATTR_QKEY;
}

/* ---- send ---------------------------------------------------------------------------------- */

/* A UD WQE as read from the SQ (SGEs and inline data in qp->wc). */
struct ud_wqe {
	uint8_t path[sizeof(struct tern_qp_path)];
	uint32_t dest_qpn;
	uint32_t qkey;
	bool mcast;		/* dgid is a multicast group */
};

/*
 * Read and check the WQE at sq_ci into qp->wc and @u. Returns 0, or a CQE status with the
 * syndrome in *synd (TERN_SYND_DMA: the ring could not be read).
 */
static int ud_wqe_load(struct tern_model *m, struct ternm_qp *qp, struct ud_wqe *u, uint8_t *synd)
{
	typedef struct tern_sq_wqe W;
	typedef struct tern_ud_seg U;
	struct ternm_wqe_cache *wc = &qp->wc;
	const uint32_t hl = sizeof(W) + sizeof(U);
	uint32_t slot = 1u << qp->log_sq_stride;
	uint64_t off = (uint64_t)(qp->sq_ci & sq_mask(qp)) << qp->log_sq_stride;
	uint8_t h[sizeof(W) + sizeof(U)];
	uint64_t total = 0;

	wc->valid = false;
	*synd = TERN_SYND_DMA;
	if (ternm_mem_read(m, &qp->sq_mem, off, h, sizeof(h)))
		return TERN_CQE_LOC_QP_OP_ERR;
	wc->idx = qp->sq_ci;
	wc->opcode = h[offsetof(W, opcode)];
	wc->flags = h[offsetof(W, flags)];
	wc->num_sge = h[offsetof(W, num_sge)];
	memcpy(wc->imm, CFLD(h, W, imm_data), 4);
	wc->wr_id = get_le64(CFLD(h, W, wr_id));
	wc->len = 0;
	memcpy(u->path, h + sizeof(W) + offsetof(U, path), sizeof(u->path));
	u->dest_qpn = get_le32(h + sizeof(W) + offsetof(U, dest_qpn));
	u->qkey = get_le32(h + sizeof(W) + offsetof(U, qkey));
	*synd = TERN_SYND_BAD_OPCODE;
	if (wc->opcode != TERN_WQE_SEND && wc->opcode != TERN_WQE_SEND_IMM)
		return TERN_CQE_LOC_QP_OP_ERR;
	*synd = TERN_SYND_BAD_AV;
	/* multicast: the MAC and DestQP are the group's, whatever the segment says */
	u->mcast = ternm_gid_is_mcast(u->path + offsetof(struct tern_qp_path, dgid));
	if (u->mcast) {
		memset(u->path + offsetof(struct tern_qp_path, dmac), 0, 6);
		u->dest_qpn = TERN_MCAST_QPN;
	}
	if (ternm_path_check(u->path) >= 0 || u->dest_qpn > TERNM_PSN_MASK)
		return TERN_CQE_LOC_QP_OP_ERR;
	if (u->mcast)
		ternm_mcast_mac(u->path + offsetof(struct tern_qp_path, dgid),
				u->path + offsetof(struct tern_qp_path, dmac));
	if (wc->flags & TERN_WQE_F_INLINE) {
		uint32_t il = get_le32(CFLD(h, W, inline_len));

		*synd = TERN_SYND_BAD_INLINE;
		if (wc->num_sge || il > TERNM_MAX_INLINE || il > slot - hl)
			return TERN_CQE_LOC_QP_OP_ERR;
		*synd = TERN_SYND_DMA;
		if (ternm_mem_read(m, &qp->sq_mem, off + hl, wc->inl, il))
			return TERN_CQE_LOC_QP_OP_ERR;
		total = il;
	} else {
		int st = ternm_wqe_read_sges(m, qp, wc, off, hl, 0, &total, synd);

		if (st)
			return st;
	}
	*synd = TERN_SYND_MSG_TOO_LONG;
	if (total > ternm_ud_mtu(m))
		return TERN_CQE_LOC_LEN_ERR;
	wc->len = (uint32_t)total;
	*synd = 0;
	wc->valid = true;
	return 0;
}

/* Complete the WQE at sq_ci (described by qp->wc) with @status. */
static void ud_complete(struct tern_model *m, struct ternm_qp *qp, uint8_t status, uint8_t synd)
{
	const struct ternm_wqe_cache *wc = &qp->wc;
	struct ternm_cqe_info ci;

	if (status != TERN_CQE_OK || (wc->flags & TERN_WQE_F_SIGNALED) ||
	    (qp->flags & TERN_QP_F_SQ_SIG_ALL)) {
		memset(&ci, 0, sizeof(ci));
		ci.wr_id = wc->wr_id;
		ci.wqe_idx = (uint16_t)(qp->sq_ci & sq_mask(qp));
		ci.opcode = wc->opcode;
		ci.status = status;
		ci.vendor_err = status != TERN_CQE_OK ? synd : 0;
		ternm_cq_write(m, qp, qp->scqn, &ci);
	}
	qp->wc.valid = false;
	qp->sq_ci++;
	qp->req_idx = qp->req_max = qp->sq_ci;
}

/* Copy the WQE's @n message bytes (SGEs or inline) to @buf. */
static int ud_gather(struct tern_model *m, const struct ternm_wqe_cache *wc, uint8_t *buf,
		     uint32_t n)
{
	unsigned int i;

	if (wc->flags & TERN_WQE_F_INLINE) {
		memcpy(buf, wc->inl, n);
		return 0;
	}
	for (i = 0; i < wc->num_sge; i++) {
		const struct ternm_sge *g = &wc->sge[i];

		if (g->len && ternm_mr_copy(m, g->key, g->addr, buf, g->len, false, false))
			return -1;
		buf += g->len;
	}
	return 0;
}

/* Send the SQ's WQEs, one packet each; returns the packets sent. */
unsigned int ternm_ud_send(struct tern_model *m, struct ternm_qp *qp, unsigned int budget)
{
	struct ternm_wqe_cache *wc = &qp->wc;
	unsigned int sent = 0;

	while (sent < budget && qp->state == TERN_QPS_RTS && qp->sq_ci != qp->sq_pi) {
		struct ud_wqe u;
		uint8_t synd, *x, *bth;
		uint32_t qkey;
		bool imm;
		int st;

		st = ud_wqe_load(m, qp, &u, &synd);
		if (st && synd == TERN_SYND_DMA) {
			ternm_log(m, TERN_MODEL_LOG_WARN, "QP %u: SQ ring unreachable", qp->qpn);
			ternm_qp_to_err(m, qp);
			ternm_qp_event(m, qp, TERN_QP_EV_FATAL);
			break;
		}
		if (st) {
			ud_complete(m, qp, (uint8_t)st, synd);
			ternm_qp_to_err(m, qp);
			break;
		}
		if (!ternm_tx_gate(m, qp, u.path))
			break;		/* the MAC cannot send its priority now: retried later */
		imm = wc->opcode == TERN_WQE_SEND_IMM;
		qkey = (u.qkey & 0x80000000u) ? qp->qkey : u.qkey;
		ternm_hdr_build(qp, u.path);
		x = ternm_pkt_start(m, qp, imm ? IBOP_UD_SEND_ONLY_IMM : IBOP_UD_SEND_ONLY,
				    wc->flags & TERN_WQE_F_SOLICITED, false, qp->next_psn);
		bth = x - BTH_LEN;
		put_be24(bth + 5, u.dest_qpn);
		put_be32(x, qkey);
		x[4] = 0;
		put_be24(x + 5, qp->qpn);
		x += DETH_LEN;
		if (imm) {
			memcpy(x, wc->imm, IMM_LEN);
			x += IMM_LEN;
		}
		if (ud_gather(m, wc, x, wc->len)) {
			ud_complete(m, qp, TERN_CQE_LOC_PROT_ERR, TERN_SYND_DMA);
			ternm_qp_to_err(m, qp);
			break;
		}
		qp->next_psn = psn_add(qp->next_psn, 1);
		/* a group this port has members of: they get the packet too (frame_send()) */
		m->rdma->mcast_loop = u.mcast &&
			ternm_mcast_find(m, u.path + offsetof(struct tern_qp_path, dgid));
		if (ternm_pkt_send(m, qp, x + wc->len))
			m->rdma->stats.tx_ud_packets++;
		m->rdma->mcast_loop = false;
		sent++;
		/* the packet may have looped back into this QP and moved it to ERR: still sent */
		ud_complete(m, qp, TERN_CQE_OK, 0);
	}
	return sent;
}

/* ---- receive ------------------------------------------------------------------------------- */

/* The QP could not use its receive WQE (@st, *synd): CQE if it can be named, QP to ERR. */
static void ud_rx_fail(struct tern_model *m, struct ternm_qp *qp, uint8_t st, uint8_t synd,
		       bool fatal)
{
	if (qp->rqe_valid)
		ternm_ud_recv_cqe(m, qp, TERN_CQE_RECV, st, synd, 0, NULL, false, 0, 0);
	ternm_qp_to_err(m, qp);
	if (fatal)
		ternm_qp_event(m, qp, TERN_QP_EV_FATAL);
}

/*
 * Whether @qp takes a UD packet whose DETH is @deth: 0 if so, 1 if the packet is to be
 * discarded (no such UD/GSI QP, or not able to receive), 2 for a Q_Key mismatch (counted).
 */
static int ud_check(struct tern_model *m, const struct ternm_qp *qp, const uint8_t *deth)
{
	if (!qp || (qp->type != TERN_QPT_UD && qp->type != TERN_QPT_GSI))
		return 1;
	if (qp->state < TERN_QPS_RTR || qp->state > TERN_QPS_SQE)
		return 1;
	if (get_be32(deth) != qp->qkey) {
		m->rdma->stats.rx_qkey_mismatch++;
		return 2;
	}
	return 0;
}

/* A UD packet taken by at least one QP: counted once, however many QPs it goes to. */
static void ud_count(struct tern_model *m, const uint8_t *f, size_t len, size_t l3, bool v6)
{
	struct ternm_rdma *r = m->rdma;

	r->stats.rx_roce_packets++;
	r->stats.rx_roce_bytes += len;
	r->stats.rx_ud_packets++;
	ternm_cc_np_rx(m, NULL, f, len, l3, v6);	/* CE counted; no CNP for UD */
}

/* ... and once in the counter set of each QP that takes it (rdma_ctr.c). */
static void ud_count_qp(struct tern_model *m, const struct ternm_qp *qp, size_t len)
{
	struct ternm_ctr_set *c = &m->rdma->ctr[qp->ctr_set];

	if (!qp->ctr_set)
		return;
	c->s.rx_roce_packets++;
	c->s.rx_roce_bytes += len;
}

/*
 * Deliver a UD packet to @qp, which ud_check() accepted for it (named by the packet, or
 * attached to the group it is for): a receive WQE, the GRH area and the payload, the CQE.
 * @f the frame, @l3 the IP header's offset, @bth the BTH, @payload/@paylen the message.
 */
static void ud_deliver(struct tern_model *m, struct ternm_qp *qp, const uint8_t *f, size_t l3,
		       bool v6, const uint8_t *bth, const uint8_t *payload, uint32_t paylen)
{
	struct ternm_rdma *r = m->rdma;
	uint8_t op = bth[0], synd, flags = TERN_CQE_F_GRH;
	uint8_t buf[GRH_AREA_LEN + TERN_ETH_MAX_FRAME];
	const uint8_t *deth = bth + BTH_LEN;
	int st;

	st = ternm_rqe_fetch(m, qp);
	if (st > 0) {
		TERNM_QSTAT(m, qp, out_of_buffer, 1);	/* no RNR on UD: the packet is gone */
		return;
	}
	if (st < 0) {
		ud_rx_fail(m, qp, TERN_CQE_LOC_QP_OP_ERR,
			   st == -2 ? TERN_SYND_DMA : TERN_SYND_BAD_SGE_COUNT, true);
		return;
	}
	/* the GRH area: the network header as received */
	if (v6) {
		memcpy(buf, f + l3, GRH_AREA_LEN);
	} else {
		memset(buf, 0, GRH_AREA_LEN - 20);
		memcpy(buf + GRH_AREA_LEN - 20, f + l3, 20);
		flags |= TERN_CQE_F_IPV4;
	}
	if (paylen > sizeof(buf) - GRH_AREA_LEN)	/* bounded above; never past @buf */
		goto discard;
	memcpy(buf + GRH_AREA_LEN, payload, paylen);
	st = ternm_ud_rqe_place(m, qp, buf, GRH_AREA_LEN + paylen, &synd);
	if (st) {
		if (st == TERN_CQE_LOC_LEN_ERR)
			TERNM_QSTAT(m, qp, resp_local_length_error, 1);
		ud_rx_fail(m, qp, (uint8_t)st, synd, st != TERN_CQE_LOC_LEN_ERR);
		return;
	}
	ternm_ud_recv_cqe(m, qp, op == IBOP_UD_SEND_ONLY_IMM ? TERN_CQE_RECV_IMM : TERN_CQE_RECV,
			  TERN_CQE_OK, 0, GRH_AREA_LEN + paylen,
			  op == IBOP_UD_SEND_ONLY_IMM ? deth + DETH_LEN : NULL, bth[1] & 0x80,
			  flags, get_be24(deth + 5));
	return;
discard:
	r->stats.rx_roce_discards++;
}

/* The destination IP address of a received frame as a GID (IPv4: IPv4-mapped). */
static void ud_dest_gid(const uint8_t *f, size_t l3, bool v6, uint8_t *gid)
{
	if (v6) {
		memcpy(gid, f + l3 + 24, 16);
	} else {
		memset(gid, 0, 10);
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, f + l3 + 16, 4);
	}
}

/*
 * A UD packet (BTH opcode 0x64/0x65), ICRC already checked: @f/@len the frame, @l3 the IP
 * header's offset, @bth the BTH, @end the ICRC.
 */
void ternm_ud_rx(struct tern_model *m, const uint8_t *f, size_t len, size_t l3, bool v6,
		 const uint8_t *bth, const uint8_t *end)
{
	struct ternm_rdma *r = m->rdma;
	uint8_t op = bth[0];
	unsigned int pad = (bth[1] >> 4) & 3;
	size_t hl = BTH_LEN + DETH_LEN + (op == IBOP_UD_SEND_ONLY_IMM ? IMM_LEN : 0);
	uint32_t qpns[TERNM_MAX_MCAST_QP], dqpn, paylen;
	const uint8_t *deth = bth + BTH_LEN, *payload;
	const struct ternm_mcast_grp *g;
	struct ternm_qp *qp;
	unsigned int i, n, taken;
	bool mismatch;
	uint8_t gid[16];
	int st;

	if (bth[1] & 0x0f)
		goto discard;
	if ((((uint32_t)bth[2] << 8 | bth[3]) & 0x7fff) != 0x7fff) {
		r->stats.rx_pkey_mismatch++;
		return;
	}
	if ((size_t)(end - bth) < hl + pad)
		goto discard;
	payload = bth + hl;
	paylen = (uint32_t)(end - payload) - pad;
	/* A UD message is one packet of at most the port's RoCE MTU: longer is malformed. */
	if (paylen > ternm_ud_mtu(m))
		goto discard;
	dqpn = get_be24(bth + 5);
	if (dqpn != TERN_MCAST_QPN) {
		qp = ternm_qp_get(m, dqpn);
		st = ud_check(m, qp, deth);
		if (st == 1)
			goto discard;
		if (st == 0) {
			ud_count(m, f, len, l3, v6);
			ud_count_qp(m, qp, len);
			ud_deliver(m, qp, f, l3, v6, bth, payload, paylen);
		}
		return;
	}
	ud_dest_gid(f, l3, v6, gid);
	g = ternm_gid_is_mcast(gid) ? ternm_mcast_find(m, gid) : NULL;
	if (!g)
		goto discard;
	/* a copy: a delivery never changes the table, but the list is bounded here all the same */
	n = g->nqp < TERNM_MAX_MCAST_QP ? g->nqp : TERNM_MAX_MCAST_QP;
	memcpy(qpns, g->qpn, n * sizeof(qpns[0]));
	for (i = 0, taken = 0, mismatch = false; i < n; i++) {
		qp = ternm_qp_get(m, qpns[i]);
		st = ud_check(m, qp, deth);
		mismatch |= st == 2;
		if (st)
			continue;
		if (!taken++)
			ud_count(m, f, len, l3, v6);
		ud_count_qp(m, qp, len);
		ud_deliver(m, qp, f, l3, v6, bth, payload, paylen);
	}
	if (!taken && !mismatch)
		goto discard;
	return;
discard:
	r->stats.rx_roce_discards++;
}
