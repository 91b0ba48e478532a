/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: event queues.
 *
 * Indices are free-running modulo 2^24 (the width of the doorbell's CI field); the device's
 * producer index PI counts entries written. An EQ is created disarmed, with PI = CI = 0: the
 * driver arms it with a doorbell (CI | ARM). The device does not clear the ring; the driver
 * zeroes it so that the first pass (phase 1) is recognisable.
 */
#include "tern_model_int.h"

static inline uint32_t eq_depth(const struct ternm_eq *eq)
{
	return 1u << eq->log_depth;
}

static void eq_notify(struct tern_model *m, struct ternm_eq *eq)
{
	eq->armed = false;
	if (m->host.msix_notify)
		m->host.msix_notify(m->host.opaque, eq->vector);
}

void ternm_eq_post(struct tern_model *m, unsigned int eqn, uint8_t type, uint32_t d0)
{
	ternm_eq_post_sub(m, eqn, type, 0, d0);
}

static void eq_post(struct tern_model *m, unsigned int eqn, uint8_t type, uint8_t subtype,
		    uint32_t d0, uint32_t d1)
{
	struct ternm_eq *eq;
	uint8_t eqe[sizeof(struct tern_eqe)];
	uint32_t slot;
	uint64_t off;

	if (eqn >= TERNM_MAX_EQS || !m->eq[eqn].used)
		return;
	/* Once the device is in its fatal state, only the FATAL event itself goes out. */
	if (m->fatal && type != TERN_EQE_FATAL)
		return;
	eq = &m->eq[eqn];
	if (((eq->pi - eq->ci) & TERNM_EQ_IDX_MASK) >= eq_depth(eq)) {
		m->stats.eq_overflows++;
		return;
	}
	slot = eq->pi & (eq_depth(eq) - 1);
	off = (uint64_t)slot * sizeof(eqe);
	memset(eqe, 0, sizeof(eqe));
	eqe[offsetof(struct tern_eqe, type)] = type;
	eqe[offsetof(struct tern_eqe, subtype)] = subtype;
	eqe[offsetof(struct tern_eqe, flags)] = tern_ring_phase(eq->pi, eq->log_depth);
	put_le32(FLD(eqe, struct tern_eqe, data), d0);
	put_le32(FLD(eqe, struct tern_eqe, data) + 4, d1);
	/* The word holding the phase bit goes last. */
	if (ternm_mem_write(m, &eq->mem, off + 4, eqe + 4, sizeof(eqe) - 4) ||
	    ternm_mem_write(m, &eq->mem, off, eqe, 4)) {
		ternm_log(m, TERN_MODEL_LOG_ERR, "EQ %u ring unreachable", eqn);
		/* Never retry this EQ: the FATAL event must not come back here. */
		eq->used = false;
		ternm_fatal(m, TERN_FATAL_EQ_DMA);
		eq->used = true;
		return;
	}
	eq->pi = (eq->pi + 1) & TERNM_EQ_IDX_MASK;
	if (eq->armed)
		eq_notify(m, eq);
}

void ternm_eq_post_sub(struct tern_model *m, unsigned int eqn, uint8_t type, uint8_t subtype,
		       uint32_t d0)
{
	eq_post(m, eqn, type, subtype, d0, 0);
}

void ternm_eq_post_flag_data(struct tern_model *m, uint16_t flag, uint8_t type, uint8_t subtype,
			     uint32_t d0, uint32_t d1)
{
	unsigned int i;

	for (i = 0; i < TERNM_MAX_EQS; i++) {
		if (m->eq[i].used && (m->eq[i].flags & flag)) {
			eq_post(m, i, type, subtype, d0, d1);
			return;
		}
	}
}

void ternm_eq_post_flag_sub(struct tern_model *m, uint16_t flag, uint8_t type, uint8_t subtype,
			    uint32_t d0)
{
	ternm_eq_post_flag_data(m, flag, type, subtype, d0, 0);
}

void ternm_eq_post_flag(struct tern_model *m, uint16_t flag, uint8_t type, uint32_t d0)
{
	ternm_eq_post_flag_sub(m, flag, type, 0, d0);
}

void ternm_eq_doorbell(struct tern_model *m, unsigned int eqn, uint32_t val)
{
	struct ternm_eq *eq;
	uint32_t ci = val & TERN_EQ_DB_CI_MASK;

	if (eqn >= TERNM_MAX_EQS || !m->eq[eqn].used) {
		ternm_log(m, TERN_MODEL_LOG_WARN, "doorbell 0x%x for EQ %u that does not exist", val,
		       eqn);
		return;
	}
	eq = &m->eq[eqn];
	if (((ci - eq->ci) & TERNM_EQ_IDX_MASK) > ((eq->pi - eq->ci) & TERNM_EQ_IDX_MASK)) {
		ternm_log(m, TERN_MODEL_LOG_WARN,
		       "EQ %u doorbell CI %u past PI %u (CI was %u): ignored", eqn, ci, eq->pi,
		       eq->ci);
		return;
	}
	eq->ci = ci;
	if (val & TERN_EQ_DB_ARM) {
		eq->armed = true;
		/* Entries the driver has not consumed yet: tell it now. */
		if (eq->ci != eq->pi)
			eq_notify(m, eq);
	}
}

int ternm_eq_create(struct tern_model *m, const uint8_t *in, uint32_t *result, uint32_t *syndrome)
{
	typedef struct tern_cmd_create_eq_in T;
	uint8_t log = in[offsetof(T, log_depth)];
	uint8_t vector = in[offsetof(T, msix_vector)];
	uint16_t flags = get_le16(CFLD(in, T, flags));
	struct ternm_eq *eq = NULL;
	struct ternm_mem mem;
	uint32_t bad_off;
	unsigned int i;
	int rc;

	if (log < TERN_EQ_MIN_LOG || log > TERNM_MAX_EQ_LOG) {
		*syndrome = offsetof(T, log_depth);
		return TERN_CMD_BAD_PARAM;
	}
	if (vector >= m->cfg.num_msix) {
		*syndrome = offsetof(T, msix_vector);
		return TERN_CMD_BAD_PARAM;
	}
	if (flags & ~(uint16_t)(TERN_EQ_F_CMD | TERN_EQ_F_ASYNC)) {
		*syndrome = offsetof(T, flags);
		return TERN_CMD_BAD_PARAM;
	}
	if (get_le32(CFLD(in, T, rsvd))) {
		*syndrome = offsetof(T, rsvd);
		return TERN_CMD_BAD_PARAM;
	}
	for (i = 0; i < TERNM_MAX_EQS; i++) {
		if (m->eq[i].used && (m->eq[i].flags & flags)) {
			*syndrome = offsetof(T, flags);
			return TERN_CMD_BAD_STATE;
		}
	}
	for (i = 0; i < TERNM_MAX_EQS; i++) {
		if (!m->eq[i].used) {
			eq = &m->eq[i];
			break;
		}
	}
	if (!eq)
		return TERN_CMD_NO_RESOURCES;
	rc = ternm_mem_init(m, &mem, CFLD(in, T, mem), 16ull << log, &bad_off);
	if (rc != TERN_CMD_OK) {
		*syndrome = rc == TERN_CMD_BAD_PARAM ? offsetof(T, mem) + bad_off : 0;
		return rc;
	}
	memset(eq, 0, sizeof(*eq));
	eq->used = true;
	eq->log_depth = log;
	eq->vector = vector;
	eq->flags = flags;
	eq->mem = mem;
	*result = i;
	return TERN_CMD_OK;
}

int ternm_eq_destroy(struct tern_model *m, const uint8_t *in, uint32_t *syndrome)
{
	uint32_t eqn = get_le32(CFLD(in, struct tern_cmd_destroy_eq_in, eqn));
	unsigned int i;

	if (eqn >= TERNM_MAX_EQS || !m->eq[eqn].used) {
		*syndrome = offsetof(struct tern_cmd_destroy_eq_in, eqn);
		return TERN_CMD_BAD_RESOURCE;
	}
	for (i = 0; i < TERNM_MAX_ETH_TXQS; i++) {
		if (m->txq[i].used && m->txq[i].eqn == eqn)
			return TERN_CMD_BAD_STATE;
	}
	for (i = 0; i < TERNM_MAX_ETH_RXQS; i++) {
		if (m->rxq[i].used && m->rxq[i].eqn == eqn)
			return TERN_CMD_BAD_STATE;
	}
	if (ternm_rdma_eq_in_use(m, eqn))
		return TERN_CMD_BAD_STATE;
	ternm_mem_free(m, &m->eq[eqn].mem);
	memset(&m->eq[eqn], 0, sizeof(m->eq[eqn]));
	return TERN_CMD_OK;
}

void ternm_eq_clear(struct tern_model *m)
{
	unsigned int i;

	for (i = 0; i < TERNM_MAX_EQS; i++)
		ternm_mem_free(m, &m->eq[i].mem);
	memset(m->eq, 0, sizeof(m->eq));
}
