/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: QP counter sets (TERN_RDMA_CAP_QP_COUNTERS; tern_rdma.h, "QP counter
 * sets"). TERNM_MAX_CTR_SET sets, numbered 1..TERNM_MAX_CTR_SET; a QP names its set in
 * ctr_set (0: none) and TERNM_QSTAT() counts there as well as in the port's counters. The
 * set keeps how many QPs are bound to it, so that FREE_COUNTER can refuse while any is.
 */
#include "rdma.h"

/* The allocated set @set, or NULL (0, out of range, free). */
static struct ternm_ctr_set *ctr_get(struct tern_model *m, uint32_t set)
{
	if (!set || set > TERNM_MAX_CTR_SET || !m->rdma->ctr[set].used)
		return NULL;
	return &m->rdma->ctr[set];
}

/* @qp leaves its set, if any. */
static void ctr_unbind(struct tern_model *m, struct ternm_qp *qp)
{
	if (!qp->ctr_set)
		return;
	m->rdma->ctr[qp->ctr_set].nqp--;
	qp->ctr_set = 0;
}

static int ctr_alloc(struct tern_model *m, struct ternm_cmd_result *r)
{
	unsigned int i;

	for (i = 1; i <= TERNM_MAX_CTR_SET; i++) {
		if (!m->rdma->ctr[i].used) {
			memset(&m->rdma->ctr[i], 0, sizeof(m->rdma->ctr[i]));
			m->rdma->ctr[i].used = true;
			r->result = i;
			return TERN_CMD_OK;
		}
	}
	return TERN_CMD_NO_RESOURCES;
}

static int ctr_free(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_counter_in T;
	struct ternm_ctr_set *c = ctr_get(m, get_le32(CFLD(in, T, set)));

	if (!c)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, set));
	if (c->nqp)
		return ternm_refuse(r, TERN_CMD_BAD_STATE, offsetof(T, set));
	memset(c, 0, sizeof(*c));
	return TERN_CMD_OK;
}

static int ctr_bind(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_bind_qp_counter_in T;
	uint32_t set = get_le32(CFLD(in, T, set));
	struct ternm_ctr_set *c = NULL;
	struct ternm_qp *qp;

	if (get_le32(CFLD(in, T, rsvd)))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, rsvd));
	qp = ternm_qp_get(m, get_le32(CFLD(in, T, qpn)));
	if (!qp)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, qpn));
	if (set) {
		c = ctr_get(m, set);
		if (!c)
			return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, set));
	}
	if (qp->ctr_set == set)
		return TERN_CMD_OK;
	ctr_unbind(m, qp);
	if (c) {
		c->nqp++;
		qp->ctr_set = (uint8_t)set;
	}
	return TERN_CMD_OK;
}

static int ctr_query(struct tern_model *m, const uint8_t *in, uint16_t out_len,
		     struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_counter_set_out O;
	const struct ternm_ctr_set *c = ctr_get(m, get_le32(CFLD(in, struct tern_cmd_counter_in,
								 set)));
	uint8_t *o = m->cmd_out;

	if (out_len < sizeof(O)) {
		r->syndrome = sizeof(O);
		return TERN_CMD_BAD_LEN;
	}
	if (!c)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE,
				    offsetof(struct tern_cmd_counter_in, set));
	memset(o, 0, sizeof(O));
#define X(n) put_le64(FLD(o, O, n), c->s.n);
	TERNM_QP_STATS(X)
#undef X
	r->out_size = sizeof(O);
	return TERN_CMD_OK;
}

/* ALLOC/FREE_COUNTER, BIND_QP_COUNTER, QUERY_COUNTER: the command's status. */
int ternm_ctr_cmd(struct tern_model *m, uint16_t opcode, const uint8_t *in, uint16_t out_len,
		  struct ternm_cmd_result *r)
{
	switch (opcode) {
	case TERN_CMD_ALLOC_COUNTER:
		return ctr_alloc(m, r);
	case TERN_CMD_FREE_COUNTER:
		return ctr_free(m, in, r);
	case TERN_CMD_BIND_QP_COUNTER:
		return ctr_bind(m, in, r);
	case TERN_CMD_QUERY_COUNTER:
		return ctr_query(m, in, out_len, r);
	default:
		return TERN_CMD_BAD_OPCODE;
	}
}

/* DESTROY_QP (and a device reset): @qp leaves its set. */
void ternm_ctr_qp_gone(struct tern_model *m, struct ternm_qp *qp)
{
	ctr_unbind(m, qp);
}
