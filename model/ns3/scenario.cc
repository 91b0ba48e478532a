/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the ns-3 scenario programs share (scenario.h).
 */
#include "scenario.h"

#include <ns3/simulator.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

using namespace ns3;

namespace scenario
{

namespace
{

enum
{
    O_LINK = 1000, O_DELAY, O_KMIN, O_KMAX, O_PMAX, O_XOFF, O_XON, O_BUF, O_CC
};

const struct option kCommon[] = {
    {"link-mbps", 1, nullptr, O_LINK}, {"delay-ns", 1, nullptr, O_DELAY},
    {"kmin", 1, nullptr, O_KMIN}, {"kmax", 1, nullptr, O_KMAX},
    {"pmax-ppm", 1, nullptr, O_PMAX}, {"xoff", 1, nullptr, O_XOFF},
    {"xon", 1, nullptr, O_XON}, {"buffer", 1, nullptr, O_BUF}, {"cc", 1, nullptr, O_CC},
};

/* Parses getopt_long's @c when it is a common option: true if it was one. */
bool
CommonOption(int c, const char* arg, const Common& to)
{
    switch (c)
    {
    case O_LINK: to.nic.link_mbps = static_cast<uint32_t>(Num(arg, "--link-mbps")); break;
    case O_DELAY: to.delay_ns = Num(arg, "--delay-ns"); break;
    case O_KMIN: to.sw.kmin_bytes = static_cast<uint32_t>(Num(arg, "--kmin")); break;
    case O_KMAX: to.sw.kmax_bytes = static_cast<uint32_t>(Num(arg, "--kmax")); break;
    case O_PMAX: to.sw.pmax_ppm = static_cast<uint32_t>(Num(arg, "--pmax-ppm")); break;
    case O_XOFF: to.sw.xoff_bytes = static_cast<uint32_t>(Num(arg, "--xoff")); break;
    case O_XON: to.sw.xon_bytes = static_cast<uint32_t>(Num(arg, "--xon")); break;
    case O_BUF: to.sw.buffer_bytes = static_cast<uint32_t>(Num(arg, "--buffer")); break;
    case O_CC:
        if (!tn_cc_set(&to.nic.cc, arg))
        {
            fprintf(stderr, "%s: bad --cc %s\n", kProgram, arg);
            exit(2);
        }
        break;
    default: return false;
    }
    return true;
}

} // namespace

uint64_t
NowNs()
{
    return static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
}

uint64_t
Num(const char* s, const char* what)
{
    char* e;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &e, 0);
    if (errno || e == s || *e)
    {
        fprintf(stderr, "%s: bad %s: %s\n", kProgram, what, s);
        exit(2);
    }
    return v;
}

double
WallSeconds(const struct timespec& a, const struct timespec& b)
{
    return static_cast<double>(b.tv_sec - a.tv_sec) +
           static_cast<double>(b.tv_nsec - a.tv_nsec) / 1e9;
}

std::vector<struct option>
Options(std::initializer_list<struct option> own)
{
    std::vector<struct option> v(own);

    v.insert(v.end(), std::begin(kCommon), std::end(kCommon));
    v.push_back({nullptr, 0, nullptr, 0});
    return v;
}

void
Defaults(const Common& to, unsigned int nports)
{
    tn_nic_params_default(&to.nic);
    tn_flow_params_default(&to.flow);
    tsw_config_default(&to.sw, nports);
}

int
NextOption(int argc, char** argv, const std::vector<struct option>& opts, const Common& to)
{
    int c;

    while ((c = getopt_long(argc, argv, "", opts.data(), nullptr)) != -1)
        if (!CommonOption(c, optarg, to))
            break;
    return c;
}

Ptr<TernNetDevice>
NewHost(unsigned int idx, const tn_nic_params& nic, bool& dcb_ok, bool& cc_ok)
{
    Ptr<Node> node = CreateObject<Node>();
    Ptr<TernNetDevice> d = CreateObject<TernNetDevice>();

    node->AddDevice(d);
    if (!d->Setup(idx, nic))
        return nullptr;
    dcb_ok &= tn_host_dcb_ok(d->Host());
    cc_ok &= tn_host_cc_ok(d->Host());
    return d;
}

void
SwitchTotals::Add(const struct tsw* sw, unsigned int port, unsigned int prio)
{
    struct tsw_port_stats st;

    tsw_port_stats(sw, port, &st);
    xoff += st.pfc_xoff_sent[prio];
    xon += st.pfc_xon_sent[prio];
    lossless += st.lossless_drops;
    no_route += st.no_route;
    int_hops += st.int_hops_added;
    int_overflows += st.int_overflows;
    for (unsigned int q = 0; q < TSW_NUM_PRIO; q++)
    {
        drops += st.q[q].drops;
        marked += st.q[q].ecn_marked;
    }
}

void
NicTotals::Add(const Ptr<TernNetDevice>& d, unsigned int prio)
{
    tn_nic_stats ns;

    tn_host_stats(d->Host(), prio, &ns);
    pfc_ok = pfc_ok && ns.pfc_ok;
    rx_pause += ns.rx_pause;
    tx_pause += ns.tx_pause;
    discards += ns.rx_discards;
    retrans += ns.retrans;
    timeouts += ns.ack_timeouts;
    cnp_sent += ns.cnp_sent;
    ecn_rx += ns.np_ecn_rx;
    cnp_handled += ns.cnp_handled;
    cnp_ignored += ns.cnp_ignored;
    cuts += ns.rate_cuts;
    incs += ns.rate_increases;
    int_echo_acks += ns.int_echo_acks;
    hpcc_updates += ns.hpcc_updates;
    int_echoes_sent += ns.int_echoes_sent;
    timely_samples += ns.timely_samples;
    timely_decreases += ns.timely_decreases;
    timely_increases += ns.timely_increases;
    refused += d->RefusedFrames();
}

} // namespace scenario
