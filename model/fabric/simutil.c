/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the fabric simulators share (simutil.h): the incast's report. */
#include <inttypes.h>

#include "simutil.h"
#include "switch.h"

static const char *tf(bool b)
{
	return b ? "true" : "false";
}

void sim_incast_switch_default(struct tsw_config *sw, unsigned int nports)
{
	tsw_config_default(sw, nports);
	sw->ecn_at_dequeue = true;
	sw->pmax_ppm = SIM_INCAST_PMAX_PPM;
}

void sim_print_incast(FILE *o, const char *engine, const struct sim_incast_figures *f)
{
	const struct tsw_config *sw = f->sw;
	uint64_t below = 0;
	unsigned int k;
	size_t i;

	for (i = 0; i < f->nq; i++)
		below += f->q_sorted[i] < sw->kmax_bytes;
	if (engine)
		fprintf(o, "{\"engine\":\"%s\",", engine);
	else
		fprintf(o, "{");
	fprintf(o, "\"n\":%u,\"dcqcn\":%s,\"rp_en\":%u,\"np_en\":%u,\"link_mbps\":%u,"
		"\"delay_ns\":%" PRIu64 ",\"mtu\":%u,\"msg_bytes\":%u,\"duration_us\":%.0f,"
		"\"steady_from_us\":%.0f,",
		f->n, tf(f->dcqcn), f->dcqcn ? f->rp_en : 0, f->dcqcn ? f->np_en : 0,
		f->link_mbps, f->delay_ns, f->mtu_bytes, f->msg_bytes,
		(double)f->duration_ns / 1000, (double)f->steady_from_ns / 1000);
	fprintf(o, "\"flow_gbps\":[");
	for (k = 0; k < f->n; k++)
		fprintf(o, "%s%.3f", k ? "," : "", f->rates[k]);
	fprintf(o, "],\"flow_goodput_gbps\":[");
	for (k = 0; k < f->n; k++)
		fprintf(o, "%s%.3f", k ? "," : "", f->goodput[k]);
	fprintf(o, "],\"total_gbps\":%.3f,\"fair_gbps\":%.3f,\"jain\":%.4f,\"max_dev\":%.4f,",
		f->total, f->fair, sim_jain(f->rates, f->n), sim_max_dev(f->rates, f->n, f->fair));
	fprintf(o, "\"queue_p50_kb\":%.1f,\"queue_p99_kb\":%.1f,\"queue_max_kb\":%.1f,"
		"\"queue_below_kmax\":%.4f,\"kmin_kb\":%.1f,\"kmax_kb\":%.1f,\"pmax\":%.4f,"
		"\"ecn_at_dequeue\":%s,",
		sim_pct_u64(f->q_sorted, f->nq, 0.5) / 1024.0,
		sim_pct_u64(f->q_sorted, f->nq, 0.99) / 1024.0,
		f->nq ? f->q_sorted[f->nq - 1] / 1024.0 : 0.0,
		f->nq ? (double)below / (double)f->nq : 0.0, sw->kmin_bytes / 1024.0,
		sw->kmax_bytes / 1024.0, sw->pmax_ppm / 1e6, tf(sw->ecn_at_dequeue));
	fprintf(o, "\"convergence_us\":%.0f,\"jain_convergence_us\":%.0f,"
		"\"switch_xoff\":%" PRIu64 ",\"switch_xon\":%" PRIu64
		",\"nic_rx_pause\":%" PRIu64 ",\"nic_tx_pause\":%" PRIu64 ",\"pfc_stats_ok\":%s,",
		f->convergence_us, f->jain_convergence_us, f->xoff, f->xon, f->rx_pause,
		f->tx_pause, tf(f->pfc_ok));
	fprintf(o, "\"lossless_drops\":%" PRIu64 ",\"switch_drops\":%" PRIu64
		",\"nic_rx_discards\":%" PRIu64 ",\"refused_frames\":%" PRIu64
		",\"retrans_pkts\":%" PRIu64 ",\"ack_timeouts\":%" PRIu64 ",",
		f->lossless, f->drops, f->discards, f->refused, f->retrans, f->timeouts);
	fprintf(o, "\"sr\":%s,\"loss_ppm\":%u,\"lost_frames\":%" PRIu64
		",\"selective_retrans_pkts\":%" PRIu64 ",\"tail_loss_probes\":%" PRIu64 ",",
		tf(f->sr), f->loss_ppm, f->lost, f->sel_retrans, f->probes);
	fprintf(o, "\"ecn_marked\":%" PRIu64 ",\"np_ecn_rx\":%" PRIu64 ",\"cnp_sent\":%" PRIu64
		",\"cnp_handled\":%" PRIu64 ",\"cnp_ignored\":%" PRIu64 ",\"rate_cuts\":%" PRIu64
		",\"rate_increases\":%" PRIu64 ",",
		f->marked, f->ecn_rx, f->cnp_sent, f->cnp_handled, f->cnp_ignored, f->cuts,
		f->incs);
	fprintf(o, "\"hpcc\":%s,\"int_hops\":%" PRIu64 ",\"int_echo_acks\":%" PRIu64
		",\"hpcc_window_updates\":%" PRIu64 ",",
		tf(f->hpcc), f->int_hops, f->int_echo_acks, f->hpcc_updates);
	fprintf(o, "\"timely\":%s,\"timely_rtt_samples\":%" PRIu64
		",\"timely_rate_decreases\":%" PRIu64 ",\"timely_rate_increases\":%" PRIu64 ",",
		tf(f->timely), f->timely_samples, f->timely_decreases, f->timely_increases);
	if (f->flow_bytes) {
		fprintf(o, "\"flow_bytes\":%" PRIu64 ",\"run_us\":%.1f,\"fct_us\":[",
			f->flow_bytes, f->run_us);
		for (k = 0; k < f->n; k++)
			fprintf(o, "%s%.1f", k ? "," : "", f->fct_us[k]);
		fprintf(o, "],\"flow_retrans\":[");
		for (k = 0; k < f->n; k++)
			fprintf(o, "%s%" PRIu64, k ? "," : "", f->flow_retrans[k]);
		fprintf(o, "],\"flow_data\":[");
		for (k = 0; k < f->n; k++)
			fprintf(o, "%s%d", k ? "," : "", f->flow_data[k]);
		fprintf(o, "],");
	}
	fprintf(o, "\"writes_completed\":%" PRIu64 ",\"write_errors\":%" PRIu64
		",\"data_ok\":%s,\"dcb_ok\":%s,\"cc_ok\":%s,\"events\":%" PRIu64
		",\"wall_s\":%.2f}\n",
		f->completed, f->errors, tf(f->data_ok), tf(f->dcb_ok), tf(f->cc_ok), f->events,
		f->wall_s);
}
