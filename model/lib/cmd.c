/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: the firmware command processor.
 *
 * Commands are taken off the ring only in tern_model_run() (never inside the doorbell write),
 * at most TERNM_CMD_BUDGET per call. Each command is checked in this order, the first failure
 * deciding the completion:
 *   1. opcode known                                  else BAD_OPCODE
 *   2. in_len exact (NOP: 16..TERN_CMD_MAX_IN;       else BAD_LEN, syndrome = length needed
 *      or an older version's length of cmd_in_old_len(): the rest then reads as zero)
 *   3. input fetched (inline, or DMA from in_addr)   else DMA_ERROR
 *   4. every field valid, reserved fields zero       else BAD_PARAM, syndrome = byte offset
 *      (then object checks: BAD_RESOURCE, BAD_STATE, NO_RESOURCES, DMA_ERROR for memory)
 *   5. out_len large enough for the output           else BAD_LEN, syndrome = length needed
 *   6. executed; output DMA to out_addr              else DMA_ERROR (out_len 0)
 * Commands with side effects have no output, so a failed output write never leaves a change
 * half-reported. Completions are written in the order commands finish (a delayed NOP finishes
 * later), each followed by a TERN_EQE_CMD_COMPLETION on the EQ with TERN_EQ_F_CMD, if any,
 * whose data[0] is the completion ring producer index after the completion (free-running,
 * modulo 2^16).
 *
 * Flow control: a doorbell is ignored when it would make the ring hold more than depth
 * entries not yet consumed, or when those plus the delayed commands still in flight would
 * exceed depth (so the device never owes more than depth completions).
 */
#include <stdlib.h>

#include <linux/tern/tern_rdma.h>

#include "tern_model_int.h"

struct cmd_ctx {
	uint16_t opcode;
	uint16_t token;
	uint16_t in_len;
	uint16_t out_len;
	uint64_t in_addr;
	uint64_t out_addr;
	/* results */
	uint8_t status;
	uint32_t syndrome;
	uint32_t result;
	size_t out_size;	/* bytes of m->cmd_out to write at out_addr */
	bool drop;		/* consumed, never completed */
	uint64_t delay_ns;	/* complete this much later */
};

static inline unsigned int cmdq_depth(const struct tern_model *m)
{
	return 1u << m->cmdq.log_depth;
}

static void free_pending(struct tern_model *m)
{
	struct ternm_pending_cmd *p = m->cmdq.pending;

	while (p) {
		struct ternm_pending_cmd *next = p->next;

		free(p);
		p = next;
	}
	m->cmdq.pending = NULL;
	m->cmdq.npending = 0;
}

void ternm_cmdq_clear(struct tern_model *m)
{
	free_pending(m);
	memset(&m->cmdq, 0, sizeof(m->cmdq));
}

uint64_t ternm_cmdq_next_deadline(const struct tern_model *m)
{
	if (!m->ready || m->fatal || !m->cmdq.pending)
		return UINT64_MAX;
	return m->cmdq.pending->deadline_ns;
}

/* ---- ring configuration and doorbell ----------------------------------------------------- */

void ternm_cmdq_cfg_write(struct tern_model *m, uint32_t val)
{
	uint64_t sq = ((uint64_t)m->cmdq_sq_hi << 32) | m->cmdq_sq_lo;
	uint64_t cq = ((uint64_t)m->cmdq_cq_hi << 32) | m->cmdq_cq_lo;
	unsigned int log = val & TERN_CMDQ_CFG_LOG_DEPTH_MASK;

	m->cmdq_cfg = val;
	/* Enabling or disabling both start from scratch: delayed commands are forgotten. */
	ternm_cmdq_clear(m);
	ternm_timer_update(m);
	if (!(val & TERN_CMDQ_CFG_ENABLE))
		return;
	if (m->fatal || log < 1 || log > TERN_CMDQ_MAX_LOG || sq == 0 || cq == 0 ||
	    (sq & 63) || (cq & 63)) {
		m->cmdq_error = true;
		ternm_log(m, TERN_MODEL_LOG_WARN,
		       "command queue not enabled: log depth %u, SQ 0x%llx, CQ 0x%llx%s", log,
		       (unsigned long long)sq, (unsigned long long)cq,
		       m->fatal ? " (device in fatal state)" : "");
		return;
	}
	m->cmdq_error = false;
	m->cmdq.enabled = true;
	m->cmdq.log_depth = (uint8_t)log;
	m->cmdq.sq_addr = sq;
	m->cmdq.cq_addr = cq;
}

void ternm_cmdq_doorbell(struct tern_model *m, uint32_t val)
{
	struct ternm_cmdq *q = &m->cmdq;
	uint16_t pi = (uint16_t)val;
	unsigned int queued = (uint16_t)(pi - q->sq_ci);

	if (!q->enabled) {
		ternm_log(m, TERN_MODEL_LOG_WARN, "command doorbell 0x%x with the queue disabled",
		       val);
		return;
	}
	if (queued > cmdq_depth(m) || queued + q->npending > cmdq_depth(m)) {
		ternm_log(m, TERN_MODEL_LOG_WARN,
		       "command doorbell PI %u ignored: CI %u, %u delayed, depth %u", pi,
		       q->sq_ci, q->npending, cmdq_depth(m));
		return;
	}
	q->sq_pi = pi;
	if (queued)
		ternm_kick(m);
}

/* ---- completions --------------------------------------------------------------------------- */

static void cmd_complete(struct tern_model *m, uint16_t token, uint8_t status, uint32_t syndrome,
			 uint32_t result, uint16_t out_len)
{
	struct ternm_cmdq *q = &m->cmdq;
	uint8_t cqe[sizeof(struct tern_cmd_cqe)];
	unsigned int slot = q->cq_pi & (cmdq_depth(m) - 1);
	uint64_t addr = q->cq_addr + (uint64_t)slot * sizeof(cqe);
	uint8_t phase = tern_ring_phase(q->cq_pi, q->log_depth);

	memset(cqe, 0, sizeof(cqe));
	put_le16(FLD(cqe, struct tern_cmd_cqe, token), token);
	cqe[offsetof(struct tern_cmd_cqe, status)] = status;
	cqe[offsetof(struct tern_cmd_cqe, flags)] = phase;
	put_le32(FLD(cqe, struct tern_cmd_cqe, syndrome), syndrome);
	put_le32(FLD(cqe, struct tern_cmd_cqe, result), result);
	put_le16(FLD(cqe, struct tern_cmd_cqe, out_len), out_len);
	put_le16(FLD(cqe, struct tern_cmd_cqe, sq_ci), q->sq_ci);

	/* The word holding the phase bit goes last. */
	if (ternm_dma_write(m, addr + 4, cqe + 4, sizeof(cqe) - 4) ||
	    ternm_dma_write(m, addr, cqe, 4)) {
		ternm_fatal(m, TERN_FATAL_CMDQ_DMA);
		return;
	}
	q->cq_pi++;
	ternm_eq_post_flag(m, TERN_EQ_F_CMD, TERN_EQE_CMD_COMPLETION, q->cq_pi);
}

/* Write the output (if any) and the completion of a command that has finished. */
static void cmd_finish(struct tern_model *m, uint16_t token, uint8_t status, uint32_t syndrome,
		       uint32_t result, uint64_t out_addr, const uint8_t *out, size_t out_size)
{
	if (status == TERN_CMD_OK && out_size) {
		if (ternm_dma_write(m, out_addr, out, out_size)) {
			ternm_log(m, TERN_MODEL_LOG_WARN, "command token %u: output at 0x%llx unreachable",
			       token, (unsigned long long)out_addr);
			status = TERN_CMD_DMA_ERROR;
			syndrome = 0;
			result = 0;
			out_size = 0;
		}
	} else if (status != TERN_CMD_OK) {
		out_size = 0;
	}
	cmd_complete(m, token, status, syndrome, result, (uint16_t)out_size);
}

/* ---- delayed commands ---------------------------------------------------------------------- */

static void cmd_defer(struct tern_model *m, const struct cmd_ctx *c)
{
	struct ternm_cmdq *q = &m->cmdq;
	struct ternm_pending_cmd *p, **pp;

	p = malloc(sizeof(*p) + c->out_size);
	if (!p) {
		cmd_finish(m, c->token, TERN_CMD_INTERNAL, 0, 0, 0, NULL, 0);
		return;
	}
	p->deadline_ns = ternm_now(m) + c->delay_ns;
	p->seq = q->seq++;
	p->token = c->token;
	p->status = c->status;
	p->syndrome = c->syndrome;
	p->result = c->result;
	p->out_addr = c->out_addr;
	p->out_len = (uint16_t)c->out_size;
	memcpy(p->data, m->cmd_out, c->out_size);
	/* Sorted by deadline; equal deadlines keep submission order. */
	for (pp = &q->pending; *pp && (*pp)->deadline_ns <= p->deadline_ns; pp = &(*pp)->next)
		;
	p->next = *pp;
	*pp = p;
	q->npending++;
	ternm_timer_update(m);
}

void ternm_cmdq_timer(struct tern_model *m, uint64_t now)
{
	struct ternm_cmdq *q = &m->cmdq;

	while (q->pending && q->pending->deadline_ns <= now && !m->fatal) {
		struct ternm_pending_cmd *p = q->pending;

		q->pending = p->next;
		q->npending--;
		cmd_finish(m, p->token, p->status, p->syndrome, p->result, p->out_addr, p->data,
			   p->out_len);
		free(p);
	}
}

/* ---- commands ------------------------------------------------------------------------------ */

static bool need_out(struct cmd_ctx *c, size_t len)
{
	if (c->out_len < len) {
		c->status = TERN_CMD_BAD_LEN;
		c->syndrome = (uint32_t)len;
		return false;
	}
	c->out_size = len;
	return true;
}

static void bad_param(struct cmd_ctx *c, uint32_t off)
{
	c->status = TERN_CMD_BAD_PARAM;
	c->syndrome = off;
}

static void cmd_nop(struct tern_model *m, struct cmd_ctx *c, const uint8_t *in)
{
	uint32_t flags = get_le32(CFLD(in, struct tern_cmd_nop_in, flags));
	uint32_t delay_us = get_le32(CFLD(in, struct tern_cmd_nop_in, delay_us));
	const uint8_t *rsvd = CFLD(in, struct tern_cmd_nop_in, rsvd);
	const uint32_t known = TERN_NOP_F_DELAY | TERN_NOP_F_FAIL | TERN_NOP_F_DROP |
			       TERN_NOP_F_FATAL;
	const uint32_t hooks = TERN_NOP_F_FAIL | TERN_NOP_F_DROP | TERN_NOP_F_FATAL;
	size_t echo = c->in_len - sizeof(struct tern_cmd_nop_in);

	if ((flags & ~known) ||
	    (!m->cfg.test_hooks && (flags & hooks)))
		return bad_param(c, offsetof(struct tern_cmd_nop_in, flags));
	if ((flags & TERN_NOP_F_DELAY) && delay_us > TERN_NOP_MAX_DELAY_US)
		return bad_param(c, offsetof(struct tern_cmd_nop_in, delay_us));
	if (rsvd[0] || rsvd[1] || rsvd[2])
		return bad_param(c, offsetof(struct tern_cmd_nop_in, rsvd));
	if (flags & TERN_NOP_F_FATAL) {
		/* a firmware crash in the middle of a command: it never completes */
		ternm_fatal(m, TERN_FATAL_INTERNAL);
		c->drop = true;
		return;
	}
	if (flags & TERN_NOP_F_DROP) {
		c->drop = true;
		return;
	}
	if (flags & TERN_NOP_F_FAIL) {
		c->status = in[offsetof(struct tern_cmd_nop_in, fail_status)];
		c->syndrome = get_le32(CFLD(in, struct tern_cmd_nop_in, fail_syndrome));
	} else {
		if (!need_out(c, echo))
			return;
		memcpy(m->cmd_out, in + sizeof(struct tern_cmd_nop_in), echo);
	}
	if (flags & TERN_NOP_F_DELAY)
		c->delay_ns = (uint64_t)delay_us * TERNM_NS_PER_US;
}

static void put_str(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memset(dst, 0, size);
	memcpy(dst, src, n);
}

static void cmd_query_device(struct tern_model *m, struct cmd_ctx *c)
{
	uint8_t *o = m->cmd_out;
	typedef struct tern_cmd_query_device_out T;

	if (!need_out(c, sizeof(T)))
		return;
	memset(o, 0, sizeof(T));
	put_le32(FLD(o, T, fw_version), TERNM_FW_VERSION);
	put_le32(FLD(o, T, caps), TERN_DEV_CAP_ETH | TERN_DEV_CAP_RDMA | TERN_DEV_CAP_DCB |
		 TERN_DEV_CAP_ETH_OFFLOAD | TERN_DEV_CAP_ETH_MODERATION |
		 TERN_DEV_CAP_ETH_RSS | TERN_DEV_CAP_ETH_LRO | TERN_DEV_CAP_CLOCK |
		 TERN_DEV_CAP_ETH_TS);
	put_str((char *)FLD(o, T, serial), sizeof(((T *)0)->serial), m->cfg.serial);
	put_str((char *)FLD(o, T, board_id), sizeof(((T *)0)->board_id), TERNM_BOARD_ID);
	memcpy(FLD(o, T, mac), m->cfg.mac, 6);
	put_le16(FLD(o, T, max_mtu), TERN_ETH_MAX_MTU);
	put_le16(FLD(o, T, min_mtu), TERN_ETH_MIN_MTU);
	o[offsetof(T, max_eqs)] = TERNM_MAX_EQS;
	o[offsetof(T, max_eth_txqs)] = TERNM_MAX_ETH_TXQS;
	o[offsetof(T, max_eth_rxqs)] = TERNM_MAX_ETH_RXQS;
	o[offsetof(T, num_msix)] = (uint8_t)m->cfg.num_msix;
	o[offsetof(T, max_eq_log)] = TERNM_MAX_EQ_LOG;
	o[offsetof(T, max_eth_log)] = TERNM_MAX_ETH_LOG;
	put_le16(FLD(o, T, num_db_pages), TERN_DB_NUM_PAGES);
	put_le32(FLD(o, T, link_speed_mbps), ternm_link_speed_mbps(m));
	put_le16(FLD(o, T, max_eth_moder_period), TERNM_MAX_ETH_MODER_PERIOD);
	put_le16(FLD(o, T, max_eth_moder_frames), TERNM_MAX_ETH_MODER_FRAMES);
}

static void cmd_set_port(struct tern_model *m, struct cmd_ctx *c, const uint8_t *in)
{
	typedef struct tern_cmd_set_port_in T;
	uint32_t flags = get_le32(CFLD(in, T, flags));
	uint16_t mtu = get_le16(CFLD(in, T, mtu));
	const uint8_t *mac = CFLD(in, T, mac);

	if (flags & ~(uint32_t)(TERN_PORT_F_PROMISC | TERN_PORT_F_ALLMULTI | TERN_PORT_F_LRO |
				TERN_PORT_F_RX_TS))
		return bad_param(c, offsetof(T, flags));
	if (mtu < TERN_ETH_MIN_MTU || mtu > TERN_ETH_MAX_MTU)
		return bad_param(c, offsetof(T, mtu));
	/* The unicast address must be a unicast address, and not all zeros. */
	if ((mac[0] & 1) || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		return bad_param(c, offsetof(T, mac));
	m->port_flags = flags;
	m->mtu = mtu;
	memcpy(m->mac, mac, 6);
	/* segments under way are written back when coalescing stops or the filter changes */
	ternm_eth_lro_flush_all(m);
}

static void cmd_query_port(struct tern_model *m, struct cmd_ctx *c)
{
	typedef struct tern_cmd_query_port_out T;
	uint8_t *o = m->cmd_out;

	if (!need_out(c, sizeof(T)))
		return;
	memset(o, 0, sizeof(T));
	put_le32(FLD(o, T, flags), m->port_flags);
	put_le32(FLD(o, T, link_up), m->link_up ? 1 : 0);
	put_le32(FLD(o, T, link_speed_mbps), m->link_up ? ternm_link_speed_mbps(m) : 0);
	put_le16(FLD(o, T, mtu), m->mtu);
	memcpy(FLD(o, T, mac), m->mac, 6);
}

static void cmd_query_eth_stats(struct tern_model *m, struct cmd_ctx *c)
{
	typedef struct tern_cmd_eth_stats_out T;
	const struct ternm_eth_stats *s = &m->stats;
	uint8_t *o = m->cmd_out;

	if (!need_out(c, sizeof(T)))
		return;
	memset(o, 0, sizeof(T));
	put_le64(FLD(o, T, tx_frames), s->tx_frames);
	put_le64(FLD(o, T, tx_bytes), s->tx_bytes);
	put_le64(FLD(o, T, rx_frames), s->rx_frames);
	put_le64(FLD(o, T, rx_bytes), s->rx_bytes);
	put_le64(FLD(o, T, rx_multicast), s->rx_multicast);
	put_le64(FLD(o, T, rx_broadcast), s->rx_broadcast);
	put_le64(FLD(o, T, rx_filtered), s->rx_filtered);
	put_le64(FLD(o, T, rx_oversize), s->rx_oversize);
	put_le64(FLD(o, T, rx_runt), s->rx_runt);
	put_le64(FLD(o, T, rx_no_queue), s->rx_no_queue);
	put_le64(FLD(o, T, rx_dma_errors), s->rx_dma_errors);
	put_le64(FLD(o, T, tx_bad_len), s->tx_bad_len);
	put_le64(FLD(o, T, tx_dma_errors), s->tx_dma_errors);
	put_le64(FLD(o, T, eq_overflows), s->eq_overflows);
	put_le64(FLD(o, T, rx_csum_bad), s->rx_csum_bad);
	put_le64(FLD(o, T, tx_tso_segments), s->tx_tso_segments);
	put_le64(FLD(o, T, rx_lro_frames), s->rx_lro_frames);
	put_le64(FLD(o, T, rx_lro_segments), s->rx_lro_segments);
	put_le64(FLD(o, T, self_dma_dropped), s->self_dma_dropped);
	put_le64(FLD(o, T, db_ignored), s->db_ignored);
	put_le64(FLD(o, T, tx_timestamps), s->tx_timestamps);
	put_le64(FLD(o, T, rx_timestamps), s->rx_timestamps);
}

/* Input size of each command; -1: variable (checked by the command). */
static int cmd_in_len(uint16_t opcode)
{
	switch (opcode) {
	case TERN_CMD_NOP:
		return -1;
	case TERN_CMD_QUERY_DEVICE:
	case TERN_CMD_QUERY_PORT:
	case TERN_CMD_QUERY_ETH_STATS:
	case TERN_CMD_QUERY_WIRE_FAULTS:
		return 0;
	case TERN_CMD_SET_WIRE_FAULTS:
		return sizeof(struct tern_wire_faults);
	case TERN_CMD_SET_PORT:
		return sizeof(struct tern_cmd_set_port_in);
	case TERN_CMD_CREATE_EQ:
		return sizeof(struct tern_cmd_create_eq_in);
	case TERN_CMD_DESTROY_EQ:
		return sizeof(struct tern_cmd_destroy_eq_in);
	case TERN_CMD_CREATE_ETH_TXQ:
	case TERN_CMD_CREATE_ETH_RXQ:
		return sizeof(struct tern_cmd_create_eth_queue_in);
	case TERN_CMD_DESTROY_ETH_TXQ:
	case TERN_CMD_DESTROY_ETH_RXQ:
		return sizeof(struct tern_cmd_destroy_eth_queue_in);
	case TERN_CMD_MODIFY_ETH_TXQ:
	case TERN_CMD_MODIFY_ETH_RXQ:
		return sizeof(struct tern_cmd_modify_eth_queue_in);
	case TERN_CMD_SET_RSS:
		return sizeof(struct tern_cmd_set_rss_in);
	case TERN_CMD_SET_DCB:
		return sizeof(struct tern_dcb_cfg);
	case TERN_CMD_QUERY_DCB:
	case TERN_CMD_QUERY_PFC_STATS:
	case TERN_CMD_QUERY_CC_PARAMS:
		return 0;
	case TERN_CMD_SET_CC_PARAMS:
		return sizeof(struct tern_cc_params);
	default:
		return ternm_rdma_cmd_in_len(opcode);
	}
}

/*
 * The input length of an older, shorter version of the command's input that the device
 * still takes (the fields added since read as zero), or -1 if there is none.
 */
static int cmd_in_old_len(uint16_t opcode)
{
	switch (opcode) {
	case TERN_CMD_CREATE_SRQ:
		return TERN_CREATE_SRQ_IN_V1_LEN;
	case TERN_CMD_MODIFY_QP:
		return TERN_MODIFY_QP_IN_V1_LEN;
	case TERN_CMD_SET_CC_PARAMS:
		return TERN_CC_PARAMS_V1_LEN;
	default:
		return -1;
	}
}

/*
 * Command @c's input: its length for its opcode, read once into m->cmd_in when it is not
 * inline, an older, shorter version zero-extended. Returns false with c->status set if it
 * cannot be had.
 */
static bool cmd_input(struct tern_model *m, struct cmd_ctx *c)
{
	int expect = cmd_in_len(c->opcode);

	if (expect == -2) {
		c->status = TERN_CMD_BAD_OPCODE;
		return false;
	}
	if (expect == -1) {
		/* NOP: header plus up to TERN_CMD_MAX_IN - 16 bytes to echo. */
		if (c->in_len < sizeof(struct tern_cmd_nop_in)) {
			c->status = TERN_CMD_BAD_LEN;
			c->syndrome = sizeof(struct tern_cmd_nop_in);
			return false;
		}
		if (c->in_len > TERN_CMD_MAX_IN) {
			c->status = TERN_CMD_BAD_LEN;
			c->syndrome = TERN_CMD_MAX_IN;
			return false;
		}
	} else if (c->in_len != expect && c->in_len != cmd_in_old_len(c->opcode)) {
		c->status = TERN_CMD_BAD_LEN;
		c->syndrome = (uint32_t)expect;
		return false;
	}
	if (c->in_len > TERN_CMD_INLINE_MAX && ternm_dma_read(m, c->in_addr, m->cmd_in, c->in_len)) {
		ternm_log(m, TERN_MODEL_LOG_WARN, "command token %u: input at 0x%llx unreachable",
		       c->token, (unsigned long long)c->in_addr);
		c->status = TERN_CMD_DMA_ERROR;
		return false;
	}
	if (expect > 0 && c->in_len < expect)	/* an older, shorter version of the input */
		memset(m->cmd_in + c->in_len, 0, (size_t)expect - c->in_len);
	return true;
}

/* The RDMA, DCB and congestion control commands: their modules' command processors. */
static void cmd_other(struct tern_model *m, struct cmd_ctx *c, const uint8_t *in)
{
	struct ternm_cmd_result r;

	memset(&r, 0, sizeof(r));
	if (c->opcode >= TERN_CMD_SET_DCB && c->opcode <= TERN_CMD_QUERY_PFC_STATS)
		ternm_dcb_cmd(m, c->opcode, in, c->out_len, &r);
	else if (c->opcode == TERN_CMD_SET_CC_PARAMS ||
		 c->opcode == TERN_CMD_QUERY_CC_PARAMS)
		ternm_cc_cmd(m, c->opcode, in, c->out_len, &r);
	else
		ternm_rdma_cmd(m, c->opcode, in, c->out_len, &r);
	c->status = r.status;
	c->syndrome = r.syndrome;
	c->result = r.result;
	c->out_size = r.out_size;
}

static void cmd_execute(struct tern_model *m, struct cmd_ctx *c)
{
	const uint8_t *in = m->cmd_in;

	if (!cmd_input(m, c))
		return;
	switch (c->opcode) {
	case TERN_CMD_NOP:
		cmd_nop(m, c, in);
		break;
	case TERN_CMD_QUERY_DEVICE:
		cmd_query_device(m, c);
		break;
	case TERN_CMD_SET_PORT:
		cmd_set_port(m, c, in);
		break;
	case TERN_CMD_QUERY_PORT:
		cmd_query_port(m, c);
		break;
	case TERN_CMD_QUERY_ETH_STATS:
		cmd_query_eth_stats(m, c);
		break;
	case TERN_CMD_SET_WIRE_FAULTS:
		c->status = (uint8_t)ternm_wire_set(m, in, &c->syndrome);
		break;
	case TERN_CMD_QUERY_WIRE_FAULTS:
		if (need_out(c, sizeof(struct tern_cmd_query_wire_faults_out)))
			ternm_wire_query(m, m->cmd_out);
		break;
	case TERN_CMD_CREATE_EQ:
		c->status = (uint8_t)ternm_eq_create(m, in, &c->result, &c->syndrome);
		break;
	case TERN_CMD_DESTROY_EQ:
		c->status = (uint8_t)ternm_eq_destroy(m, in, &c->syndrome);
		break;
	case TERN_CMD_CREATE_ETH_TXQ:
	case TERN_CMD_CREATE_ETH_RXQ:
		c->status = (uint8_t)ternm_ethq_create(m, c->opcode == TERN_CMD_CREATE_ETH_RXQ, in,
						    &c->result, &c->syndrome);
		break;
	case TERN_CMD_DESTROY_ETH_TXQ:
	case TERN_CMD_DESTROY_ETH_RXQ:
		c->status = (uint8_t)ternm_ethq_destroy(m, c->opcode == TERN_CMD_DESTROY_ETH_RXQ, in,
						     &c->syndrome);
		break;
	case TERN_CMD_MODIFY_ETH_TXQ:
	case TERN_CMD_MODIFY_ETH_RXQ:
		c->status = (uint8_t)ternm_ethq_modify(m, c->opcode == TERN_CMD_MODIFY_ETH_RXQ, in,
						       &c->syndrome);
		break;
	case TERN_CMD_SET_RSS:
		c->status = (uint8_t)ternm_eth_set_rss(m, in, &c->syndrome);
		break;
	default:
		cmd_other(m, c, in);
		break;
	}
}

/* Process one ring entry (already consumed: sq_ci points past it). */
static void cmd_process(struct tern_model *m, const uint8_t *sqe)
{
	struct cmd_ctx c;

	memset(&c, 0, sizeof(c));
	c.opcode = get_le16(CFLD(sqe, struct tern_cmd_sqe, opcode));
	c.token = get_le16(CFLD(sqe, struct tern_cmd_sqe, token));
	c.in_len = get_le16(CFLD(sqe, struct tern_cmd_sqe, in_len));
	c.out_len = get_le16(CFLD(sqe, struct tern_cmd_sqe, out_len));
	c.in_addr = get_le64(CFLD(sqe, struct tern_cmd_sqe, in_addr));
	c.out_addr = get_le64(CFLD(sqe, struct tern_cmd_sqe, out_addr));
	c.status = TERN_CMD_OK;
	if (c.in_len <= TERN_CMD_INLINE_MAX)
		memcpy(m->cmd_in, CFLD(sqe, struct tern_cmd_sqe, inline_in), c.in_len);

	cmd_execute(m, &c);

	if (c.status != TERN_CMD_OK) {
		/* A delay survives only with the NOP test hook FAIL (a late failure). */
		c.out_size = 0;
		c.result = 0;
		ternm_log(m, TERN_MODEL_LOG_DEBUG, "command 0x%04x token %u: status %u syndrome %u",
		       c.opcode, c.token, c.status, c.syndrome);
	}
	if (c.drop)
		return;
	if (c.delay_ns) {
		cmd_defer(m, &c);
		return;
	}
	cmd_finish(m, c.token, c.status, c.syndrome, c.result, c.out_addr, m->cmd_out,
		   c.out_size);
}

void ternm_cmdq_run(struct tern_model *m)
{
	struct ternm_cmdq *q = &m->cmdq;
	uint8_t sqe[sizeof(struct tern_cmd_sqe)];
	unsigned int budget = TERNM_CMD_BUDGET;

	while (q->enabled && !m->fatal && q->sq_ci != q->sq_pi && budget) {
		unsigned int slot = q->sq_ci & (cmdq_depth(m) - 1);

		if (ternm_dma_read(m, q->sq_addr + (uint64_t)slot * sizeof(sqe), sqe, sizeof(sqe))) {
			ternm_fatal(m, TERN_FATAL_CMDQ_DMA);
			return;
		}
		q->sq_ci++;
		budget--;
		cmd_process(m, sqe);
	}
	if (q->enabled && !m->fatal && q->sq_ci != q->sq_pi)
		ternm_kick(m);
}
