/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The minimal host driver's DCB and congestion-control setup (SET_DCB, SET_CC_PARAMS), as
 * the fabric simulators (model/fabric/sim.c, model/ns3/tn_host.c) bring up their NICs.
 */
#ifndef TERN_HOSTDRV_DCB_DRV_H
#define TERN_HOSTDRV_DCB_DRV_H

#include <linux/tern/tern_dcb.h>

#include "rdma_drv.h"

/* The 32-bit fields of struct tern_cc_params, in order, for X-macros. */
#define TERN_CC_U32_FIELDS(X)							\
	X(min_time_between_cnps) X(rpg_time_reset) X(rpg_byte_reset) X(rpg_threshold)	\
	X(rpg_max_rate) X(rpg_ai_rate) X(rpg_hai_rate) X(rpg_gd) X(rpg_min_dec_fac)	\
	X(rpg_min_rate) X(rate_to_set_on_first_cnp) X(dce_tcp_g) X(dce_tcp_rtt)		\
	X(rate_reduce_monitor_period) X(initial_alpha_value)

/* TIMELY's 32-bit fields of struct tern_cc_params, in order, for X-macros. */
#define TERN_CC_TIMELY_U32_FIELDS(X)						\
	X(timely_delta) X(timely_t_low) X(timely_t_high) X(timely_min_rtt) X(timely_seg)	\
	X(timely_min_rate)

/* The DCQCN paper's parameters (Zhu et al., SIGCOMM 2015) in host order, RP and NP off. */
void cc_params_paper(struct tern_cc_params *c);

/* SET_CC_PARAMS from @c in host order; the command's status. */
int cc_params_set(struct rdev *d, const struct tern_cc_params *c);

/* QUERY_DCB, then SET_DCB with PFC on @pfc_mask, trust DSCP, DSCP 26 -> priority 3 and
 * 48 -> 6, every other DSCP unmapped. TERN_CMD_OK, or the status of the command that failed
 * (named in *@failed unless @failed is NULL). */
int dcb_trust_dscp(struct rdev *d, uint8_t pfc_mask, const char **failed);

#endif /* TERN_HOSTDRV_DCB_DRV_H */
