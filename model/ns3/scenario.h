/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the ns-3 scenario programs (tern-ns3-incast, tern-ns3-fabric) share: the command line
 * options they take alike (the links, the switches, DCQCN's parameters), bringing up a host,
 * and adding up the switches' and the NICs' counters for the report. The figures themselves
 * (percentiles, Jain's index, convergence) are model/fabric/simutil.h, shared with tern-sim.
 */
#ifndef TERN_NS3_SCENARIO_H
#define TERN_NS3_SCENARIO_H

#include "tern-ns3.h"

#include <getopt.h>

#include <cstdint>
#include <ctime>
#include <initializer_list>
#include <vector>

namespace scenario
{

/* The program's name, for messages (each program defines it). */
extern const char* const kProgram;

/* The simulator's time, ns. */
uint64_t NowNs();

/* A number option (strtoull, base 0); exits with status 2 on a bad one. */
uint64_t Num(const char* s, const char* what);

/* Seconds from @a to @b (CLOCK_MONOTONIC). */
double WallSeconds(const struct timespec& a, const struct timespec& b);

/* The options both programs take alike, and where they go. */
struct Common
{
    tn_nic_params& nic;
    tn_flow_params& flow;
    tsw_config& sw;
    uint64_t& delay_ns;
};

/* The program's own options followed by the common ones and the terminator. */
std::vector<struct option> Options(std::initializer_list<struct option> own);

/* The NIC's, the flows' and the switches' defaults (@nports: tsw_config_default's). */
void Defaults(const Common& to, unsigned int nports);

/* getopt_long over @opts, the common options parsed into @to: the next option of the
 * program's own (or '?'), -1 at the end. A bad --cc exits with status 2. */
int NextOption(int argc, char** argv, const std::vector<struct option>& opts, const Common& to);

/* A host: a node with a TernNetDevice set up as host @idx (nullptr if that failed); its
 * DCB and CC setup results are and-ed into @dcb_ok and @cc_ok. */
ns3::Ptr<ns3::TernNetDevice> NewHost(unsigned int idx, const tn_nic_params& nic, bool& dcb_ok,
                                     bool& cc_ok);

/* Counters of switch ports, added up (the lossless priority's PFC frames). */
struct SwitchTotals
{
    uint64_t xoff = 0, xon = 0, lossless = 0, drops = 0, marked = 0, no_route = 0;
    uint64_t int_hops = 0, int_overflows = 0;

    void Add(const struct tsw* sw, unsigned int port, unsigned int prio);
};

/* Counters of NICs, added up (PFC on priority @prio), and the frames they refused. */
struct NicTotals
{
    uint64_t rx_pause = 0, tx_pause = 0, discards = 0, retrans = 0, timeouts = 0;
    uint64_t cnp_sent = 0, ecn_rx = 0, cnp_handled = 0, cnp_ignored = 0, cuts = 0, incs = 0;
    uint64_t int_echo_acks = 0, hpcc_updates = 0, int_echoes_sent = 0;
    uint64_t timely_samples = 0, timely_decreases = 0, timely_increases = 0;
    uint64_t refused = 0;
    bool pfc_ok = true;

    void Add(const ns3::Ptr<ns3::TernNetDevice>& d, unsigned int prio);
};

} // namespace scenario

#endif /* TERN_NS3_SCENARIO_H */
