/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers the fabric simulators share (tern-sim, model/fabric/sim.c, and the ns-3 scenario
 * programs, model/ns3): the pseudo-random generator, percentiles, Jain's fairness index and
 * the convergence times of Documentation/fabric.rst. Header-only, plain C (C++ includes it).
 */
#ifndef TERN_FABRIC_SIMUTIL_H
#define TERN_FABRIC_SIMUTIL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* splitmix64: the next value of the generator whose state is *@state. */
static inline uint64_t sim_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The @q quantile (0 < q <= 1) of @n sorted values: the ceil(q * n)-th; 0 when n is 0. */
static inline size_t sim_pct_index(size_t n, double q)
{
	size_t i = (size_t)ceil(q * (double)n) - 1;

	return i < n ? i : n - 1;
}

static inline uint64_t sim_pct_u64(const uint64_t *sorted, size_t n, double q)
{
	return n ? sorted[sim_pct_index(n, q)] : 0;
}

static inline double sim_pct_double(const double *sorted, size_t n, double q)
{
	return n ? sorted[sim_pct_index(n, q)] : 0;
}

/* Jain's fairness index of @n values (0 when they are all 0). */
static inline double sim_jain(const double *x, unsigned int n)
{
	double s = 0, s2 = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		s += x[i];
		s2 += x[i] * x[i];
	}
	return s2 > 0 ? s * s / (n * s2) : 0;
}

/* Per-flow byte counts in bins of bin_ns, and the convergence parameters. */
struct sim_bins {
	const uint64_t *const *bins;	/* [flow][bin] */
	unsigned int nflows, nbins;
	uint64_t bin_ns, window_ns, hold_ns;
};

/* The bins a window spans (at least one). */
static inline unsigned int sim_window_bins(const struct sim_bins *sb)
{
	unsigned int w = (unsigned int)(sb->window_ns / sb->bin_ns);

	return w ? w : 1;
}

/* Flow @k's bytes in the @w bins before boundary @b. */
static inline uint64_t sim_window_bytes(const struct sim_bins *sb, unsigned int k,
					unsigned int b, unsigned int w)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = b - w; i < b; i++)
		sum += sb->bins[k][i];
	return sum;
}

static inline double sim_window_gbps(const struct sim_bins *sb, unsigned int k, unsigned int b,
				     unsigned int w)
{
	return (double)sim_window_bytes(sb, k, b, w) * 8 / (double)(w * sb->bin_ns);
}

/*
 * Convergence time: each flow's rate is averaged over the window before every bin boundary.
 * The flows have converged at the first boundary t from which, at every boundary up to
 * t + hold_ns, every flow is within @tol of @fair_gbps (the steady state's aggregate / N).
 * Reported as t in us from the start of the flows; -1 when that never happens.
 */
static inline double sim_convergence_us(const struct sim_bins *sb, double fair_gbps, double tol)
{
	unsigned int w = sim_window_bins(sb);
	unsigned int hold = (unsigned int)(sb->hold_ns / sb->bin_ns), b, k, run = 0;

	if (fair_gbps <= 0)
		return -1;
	for (b = w; b <= sb->nbins; b++) {
		bool ok = true;

		for (k = 0; k < sb->nflows && ok; k++)
			ok = fabs(sim_window_gbps(sb, k, b, w) - fair_gbps) <= tol * fair_gbps;
		run = ok ? run + 1 : 0;
		if (run > hold)
			return (double)((uint64_t)(b - hold) * sb->bin_ns) / 1000.0;
	}
	return -1;
}

/*
 * Fairness convergence: the first bin boundary t from which, at every boundary up to
 * t + hold_ns, the Jain index of the flows' rates averaged over the preceding window is at
 *  least @threshold (of their bytes, or of their Gb/s when @gbps: the same index, computed
 * as tern-sim and the ns-3 incast always have). -1 when that never happens. At most
 * @r has room for the flows' values.
 */
static inline double sim_jain_convergence_us(const struct sim_bins *sb, double threshold,
					     bool gbps, double *r)
{
	unsigned int w = sim_window_bins(sb);
	unsigned int hold = (unsigned int)(sb->hold_ns / sb->bin_ns), b, k, run = 0;

	for (b = w; b <= sb->nbins; b++) {
		for (k = 0; k < sb->nflows; k++)
			r[k] = gbps ? sim_window_gbps(sb, k, b, w) :
				      (double)sim_window_bytes(sb, k, b, w);
		run = sim_jain(r, sb->nflows) >= threshold ? run + 1 : 0;
		if (run > hold)
			return (double)((uint64_t)(b - hold) * sb->bin_ns) / 1000.0;
	}
	return -1;
}

/* The largest relative deviation of @n rates from @fair (0 when fair is not positive). */
static inline double sim_max_dev(const double *x, unsigned int n, double fair)
{
	double m = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (fair > 0 && fabs(x[i] - fair) / fair > m)
			m = fabs(x[i] - fair) / fair;
	return m;
}

/* The incast programs' --help (tern-sim's, tern-ns3-incast's): the options they share, the
 * first with one %u (the most senders). */
#define SIM_INCAST_USAGE_TOP								\
	"  --n N                 senders (1..%u, default 2)\n"	\
	"  --dcqcn on|off        RP+NP on priority 3 (default on), or CC off (PFC only)\n"	\
	"  --rp-en M --np-en M   CC priority masks used when --dcqcn on (default 8 and 8)\n"	\
	"  --duration-us T       virtual run time (default 40000)\n"	\
	"  --steady-from F       steady state from this fraction of the run (0.5)\n"	\
	"  --link-mbps R         every link (40000)   --delay-ns D   every link (1000)\n"	\
	"  --jitter-ns J         NIC -> switch delay up to J ns longer, uniformly (0)\n"	\
	"  --mtu CODE            IB path MTU code, 3 = 1024 .. 5 = 4096 (5)\n"	\
	"  --msg-bytes B         RDMA WRITE size (65536)\n"	\
	"  --outstanding K       WRITEs kept posted per sender (8)\n"	\
	"  --kmin B --kmax B --pmax-ppm P   RED/ECN (5120, 204800, 200000)\n"	\
	"  --xoff B --xon B      switch PFC thresholds per ingress (port, prio)\n"	\
	"  --buffer B            switch shared buffer (bytes)\n"
#define SIM_INCAST_USAGE_BOTTOM							\
	"  --seed S              RED's generator\n"	\
	"  --ecn-enqueue         RED decides at enqueue (default: at dequeue; --ecn-dequeue)\n"	\
	"  --sample-ns S --bin-us B --conv-window-us W --conv-hold-us H --conv-tol F\n"	\
	"  --series FILE         write the time series (JSON)\n"	\
	"  --switch-json FILE    dump the switch's counters (JSON)\n"	\
	"  --quiet\n"

struct tsw_config;

/*
 * The incast's switch (tern-sim, tern-ns3-incast): tsw_config_default() for @nports, but RED
 * decides when a packet leaves its FIFO, with Pmax 20 % (the HPCC simulator's DCQCN setup,
 * Documentation/fabric.rst, "Results"). The switch model's own defaults stay the DCQCN
 * paper's (at enqueue, 1 %).
 */
#define SIM_INCAST_PMAX_PPM	200000
void sim_incast_switch_default(struct tsw_config *sw, unsigned int nports);

/* The N:1 incast's figures (tern-sim and tern-ns3-incast; Documentation/fabric.rst). */
struct sim_incast_figures {
	unsigned int n;				/* senders */
	bool dcqcn;
	uint8_t rp_en, np_en;			/* when dcqcn */
	uint32_t link_mbps;
	uint64_t delay_ns;
	unsigned int mtu_bytes;
	uint32_t msg_bytes;
	uint64_t duration_ns, steady_from_ns;
	const double *rates, *goodput;		/* per sender, steady state, Gb/s */
	double total, fair;			/* Gb/s */
	const uint64_t *q_sorted;		/* bottleneck queue samples, steady state, sorted */
	size_t nq;
	const struct tsw_config *sw;		/* RED/ECN */
	double convergence_us, jain_convergence_us;
	uint64_t xoff, xon, rx_pause, tx_pause;	/* the switch's and the NICs' PFC frames */
	bool pfc_ok;				/* QUERY_PFC_STATS accepted */
	uint64_t lossless, drops, discards, refused, retrans, timeouts;
	bool sr;				/* RC selective repeat (tern-sim --sr) */
	uint32_t loss_ppm;			/* random line loss (tern-sim --loss-ppm) */
	uint64_t lost, sel_retrans, probes;	/* frames lost; selective resends, tail probes */
	uint64_t marked, ecn_rx, cnp_sent, cnp_handled, cnp_ignored, cuts, incs;
	bool hpcc;				/* HPCC with INT instead of DCQCN (--hpcc) */
	uint64_t int_hops, int_echo_acks, hpcc_updates;	/* records added, echoes, Wc updates */
	bool timely;				/* TIMELY instead of DCQCN (--timely) */
	uint64_t timely_samples, timely_decreases, timely_increases;	/* the senders' counters */
	uint64_t completed, errors;		/* WRITEs */
	bool data_ok, dcb_ok, cc_ok;
	uint64_t events;
	double wall_s;
	/* finite flows (tern-sim --flow-bytes; 0: none, the rest unused) */
	uint64_t flow_bytes;
	const double *fct_us;			/* per sender, from the start; -1: failed/unfinished */
	const uint64_t *flow_retrans;		/* per sender: request packets resent */
	const int *flow_data;			/* 1 intact, 0 not, -1 no WRITE completed */
	double run_us;				/* the run's length (it ends with the last flow) */
};

/* The figures as one JSON object on one line, "engine":@engine first unless NULL. */
void sim_print_incast(FILE *o, const char *engine, const struct sim_incast_figures *f);

#ifdef __cplusplus
}
#endif

#endif /* TERN_FABRIC_SIMUTIL_H */
