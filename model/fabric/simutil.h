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

#endif /* TERN_FABRIC_SIMUTIL_H */
