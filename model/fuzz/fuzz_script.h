/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the fuzz targets over the host driver share: reading their input script, QP changes. */
#ifndef TERN_FUZZ_SCRIPT_H
#define TERN_FUZZ_SCRIPT_H

#include "rdma_pair.h"
#include "roce.h"

/*
 * Frames the wire carries for one input; the rest are lost (struct wire's limit). A QP with
 * rnr_retry 7 resends its message every RNR timer without end, as the spec has it: without a
 * bound, one input of a few hundred bytes ran for minutes and kept gigabytes of frames.
 */
#define FUZZ_WIRE_FRAMES 20000

static inline void fuzz_wire_bound(struct wire *w)
{
	w->limit = FUZZ_WIRE_FRAMES;
	w->carried = 0;
}

struct in {
	const uint8_t *p;
	size_t n;
};

/* The next @bytes bytes of the script, big-endian (0 past its end). */
static inline unsigned int take(struct in *in, unsigned int bytes)
{
	unsigned int v = 0;

	while (bytes--) {
		v <<= 8;
		if (in->n) {
			v |= *in->p++;
			in->n--;
		}
	}
	return v;
}

static inline uint64_t take64(struct in *in)
{
	uint64_t hi = take(in, 4);

	return hi << 32 | take(in, 4);
}

/*
 * MODIFY_QP of @qpn as @how says (how % 5): to SQD; SQD with path MTU 1 + (how >> 3) % @mtus
 * (over 5: one the device refuses); RTS; ERR; SQD with a new SQ PSN.
 */
static inline void fuzz_modify_qp(struct rdev *d, uint32_t qpn, unsigned int how,
				  unsigned int mtus)
{
	struct qpattr a;
	uint32_t mask = TERN_QP_ATTR_STATE;

	memset(&a, 0, sizeof(a));
	switch (how % 5) {
	case 0:
		a.state = TERN_QPS_SQD;
		break;
	case 1:
		a.state = TERN_QPS_SQD;
		a.path_mtu = (uint8_t)(1 + (how >> 3) % mtus);
		mask |= TERN_QP_ATTR_PATH_MTU;
		break;
	case 2:
		a.state = TERN_QPS_RTS;
		break;
	case 3:
		a.state = TERN_QPS_ERR;
		break;
	default:
		a.state = TERN_QPS_SQD;
		a.sq_psn = (how << 8) & 0xffffff;
		mask |= TERN_QP_ATTR_SQ_PSN;
		/*
		 * and selective repeat on or off mid-connection, any cap (3, 9, 10 refused),
		 * the adaptive retransmit timer on or off with it
		 */
		if (how & 0x80) {
			a.xport = how & 0x40 ? TERN_QP_XPORT_SR |
				  (((how >> 3) & 7) + 3) << TERN_QP_XPORT_LOG_CAP_SHIFT : 0;
			if (how & 0x4)
				a.xport |= TERN_QP_XPORT_ADAPTIVE_RTO;
			mask |= TERN_QP_ATTR_XPORT;
		}
		break;
	}
	qp_modify(d, qpn, mask, &a, NULL);
}

#endif
