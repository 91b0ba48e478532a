/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The minimal host driver's DCB and congestion-control setup (dcb_drv.h). */
#include <string.h>

#include "dcb_drv.h"

void cc_params_paper(struct tern_cc_params *c)
{
	memset(c, 0, sizeof(*c));
	c->cnp_dscp = 48;
	c->cnp_prio = 6;
	c->min_time_between_cnps = 50;		/* N = 50 us */
	c->rpg_time_reset = 55;			/* T = 55 us */
	c->rpg_byte_reset = 10u << 20;		/* B = 10 MB */
	c->rpg_threshold = 5;			/* F = 5 */
	c->rpg_max_rate = 0;			/* line rate */
	c->rpg_ai_rate = 40;			/* R_AI = 40 Mb/s */
	c->rpg_hai_rate = 200;			/* R_HAI = 200 Mb/s */
	c->rpg_gd = 11;				/* cut = Rc * alpha / 2 */
	c->rpg_min_dec_fac = 50;		/* a cut at most halves the rate */
	c->rpg_min_rate = 10;
	c->rate_to_set_on_first_cnp = 0;
	c->dce_tcp_g = 1020;			/* g = 1/256 */
	c->dce_tcp_rtt = 55;			/* K = 55 us */
	c->rate_reduce_monitor_period = 50;	/* at most one cut per CNP interval */
	c->initial_alpha_value = 1023;		/* alpha = 1 */
}

int cc_params_set(struct rdev *d, const struct tern_cc_params *c)
{
	uint8_t in[sizeof(struct tern_cc_params)];
	typedef struct tern_cc_params T;

	memset(in, 0, sizeof(in));
	in[OFF(T, rp_en)] = c->rp_en;
	in[OFF(T, np_en)] = c->np_en;
	in[OFF(T, cnp_dscp)] = c->cnp_dscp;
	in[OFF(T, cnp_prio)] = c->cnp_prio;
	in[OFF(T, hpcc_en)] = c->hpcc_en;
	in[OFF(T, hpcc_max_stage)] = c->hpcc_max_stage;
	wr16(in + OFF(T, hpcc_eta), c->hpcc_eta);
	wr32(in + OFF(T, hpcc_ai_rate), c->hpcc_ai_rate);
	wr32(in + OFF(T, hpcc_base_rtt), c->hpcc_base_rtt);
	in[OFF(T, timely_en)] = c->timely_en;
	in[OFF(T, timely_hai_thresh)] = c->timely_hai_thresh;
	wr16(in + OFF(T, timely_alpha), c->timely_alpha);
	wr16(in + OFF(T, timely_beta), c->timely_beta);
#define W(f) wr32(in + OFF(T, f), c->f);
	TERN_CC_U32_FIELDS(W)
	TERN_CC_TIMELY_U32_FIELDS(W)
#undef W
	return rdev_cmd(d, TERN_CMD_SET_CC_PARAMS, in, sizeof(in), NULL, 0, NULL);
}

int dcb_trust_dscp(struct rdev *d, uint8_t pfc_mask, const char **failed)
{
	uint8_t cfg[sizeof(struct tern_dcb_cfg)];
	typedef struct tern_dcb_cfg T;
	unsigned int i;
	int st;

	st = rdev_cmd(d, TERN_CMD_QUERY_DCB, NULL, 0, cfg, sizeof(cfg), NULL);
	if (st != TERN_CMD_OK) {
		if (failed)
			*failed = "QUERY_DCB";
		return st;
	}
	cfg[OFF(T, pfc_en)] = pfc_mask;
	cfg[OFF(T, trust)] = TERN_DCB_TRUST_DSCP;
	for (i = 0; i < TERN_NUM_DSCP; i++)
		cfg[OFF(T, dscp_prio) + i] = TERN_DCB_DSCP_UNMAPPED;
	cfg[OFF(T, dscp_prio) + 26] = 3;
	cfg[OFF(T, dscp_prio) + 48] = 6;
	st = rdev_cmd(d, TERN_CMD_SET_DCB, cfg, sizeof(cfg), NULL, 0, NULL);
	if (st != TERN_CMD_OK && failed)
		*failed = "SET_DCB";
	return st;
}
