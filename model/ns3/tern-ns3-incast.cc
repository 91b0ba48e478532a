/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern-ns3-incast: tern-sim's N:1 incast (model/fabric/sim.c) on ns-3. N sender hosts and
 * one receiver (TernNetDevice: the real device model and its host driver) are cabled to one
 * TernSwitch (model/fabric/switch.c) with TernChannels; ns-3's simulator runs everything.
 * Each sender keeps 8 RDMA WRITEs of 64 KiB posted to the receiver on its own RC QP.
 *
 *   tern-ns3-incast --n 16 --dcqcn on [--duration-us 40000] [--series FILE] [...] (--help)
 *
 * Same options, same measurements and the same one-line JSON object on
 * stdout as tern-sim, plus "engine":"ns-3"; Documentation/fabric.rst defines every figure.
 * Exit status 0 when the run could be set up and completed.
 */
#include "scenario.h"
#include "simutil.h"
#include "tern-ns3.h"

#include <ns3/simulator.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <getopt.h>
#include <vector>

using namespace ns3;
using namespace scenario;

const char* const scenario::kProgram = "tern-ns3-incast";

namespace
{

constexpr unsigned int kMaxSenders = TSW_MAX_PORTS - 1;
constexpr unsigned int kPrio = 3; /* the RDMA traffic's priority (DSCP 26) */

struct Params
{
    unsigned int n = 2;
    uint64_t delay_ns = 1000;
    uint64_t jitter_ns = 0;
    uint64_t duration_ns = 40000000;
    double steady_from = 0.5;
    uint64_t sample_ns = 1000;
    uint64_t bin_ns = 100000;
    uint64_t conv_window_ns = 1000000;
    uint64_t conv_hold_ns = 5000000;
    double conv_tol = 0.2;
    tn_nic_params nic;
    tn_flow_params flow;
    tsw_config sw;
    const char* series = nullptr;
    const char* switch_json = nullptr;
    bool quiet = false;
};

struct Sender
{
    Ptr<TernNetDevice> dev;
    struct tn_flow* flow = nullptr;
    uint8_t mac[6];
    uint64_t rx_bytes = 0, rx_bytes_steady = 0;	/* leaving the switch to the receiver */
    uint64_t done_steady = 0, done_at_steady = 0;
    std::vector<uint64_t> bins;
    std::vector<uint32_t> cc_mbps;
};

struct Run
{
    Params p;
    Ptr<TernNetDevice> rx;
    std::vector<Sender> s;
    Ptr<TernSwitch> sw;
    uint64_t end = 0, steady_at = 0; /* ns-3 ns */
    unsigned int nbins = 0;
    std::vector<uint64_t> qsamples, qseries;
    bool dcb_ok = true, cc_ok = true;
};

Run g;

/* At the bottleneck (switch port 0, towards the receiver): count per sender by source MAC. */
void
Egress(unsigned int port, const uint8_t* f, size_t len)
{
    if (port != 0 || len < 12)
        return;
    for (auto& s : g.s)
    {
        if (!memcmp(f + 6, s.mac, 6))
        {
            uint64_t b = NowNs() / g.p.bin_ns;

            s.rx_bytes += len;
            if (NowNs() >= g.steady_at)
                s.rx_bytes_steady += len;
            if (b < g.nbins)
                s.bins[b] += len;
            return;
        }
    }
}

void
SampleRates(uint64_t b)
{
    for (auto& s : g.s)
    {
        uint32_t r = tn_flow_cc_rate(s.flow);
        s.cc_mbps[b] = r ? r : g.p.nic.link_mbps;
    }
}

void
SteadyStart()
{
    for (auto& s : g.s)
    {
        struct tn_flow_stats st;
        tn_flow_stats(s.flow, &st);
        s.done_at_steady = st.done_bytes;
    }
}

void
Sample()
{
    uint64_t t = NowNs(), q = tsw_queue_bytes(g.sw->Model(), 0, kPrio);

    if (t && t % g.p.bin_ns == 0 && t / g.p.bin_ns <= g.nbins)
        SampleRates(t / g.p.bin_ns - 1);
    if (t >= g.steady_at)
        g.qsamples.push_back(q);
    g.qseries.push_back(q);
    if (t + g.p.sample_ns < g.end)
        Simulator::Schedule(NanoSeconds(g.p.sample_ns), &Sample);
}

bool
Build()
{
    Params& p = g.p;
    Ptr<Node> swnode = CreateObject<Node>();
    unsigned int k;

    g.sw = CreateObject<TernSwitch>();
    p.sw.nports = p.n + 1;
    p.sw.link_mbps = p.nic.link_mbps;
    if (!g.sw->Setup(swnode, p.sw))
    {
        fprintf(stderr, "tern-ns3-incast: bad switch configuration\n");
        return false;
    }
    g.sw->SetEgressHook(&Egress);
    g.s.resize(p.n);
    for (k = 0; k <= p.n; k++)
    {
        Ptr<TernNetDevice> d = NewHost(k, p.nic, g.dcb_ok, g.cc_ok);

        if (!d)
        {
            fprintf(stderr, "tern-ns3-incast: device %u setup failed\n", k);
            return false;
        }
        Ptr<TernChannel> ch = TernConnect(d, g.sw->GetPort(k), NanoSeconds(p.delay_ns));
        if (!ch)
            return false;
        /* NIC -> switch only, as tern-sim's --jitter-ns */
        ch->SetJitter(d, NanoSeconds(p.jitter_ns),
                      p.sw.seed ^ 0x5deece66dull ^ (static_cast<uint64_t>(k) << 32));
        if (k == 0)
            g.rx = d;
        else
            g.s[k - 1].dev = d;
    }
    p.flow.stop_ns = kTernEpochNs + p.duration_ns;
    for (k = 1; k <= p.n; k++)
    {
        Sender& s = g.s[k - 1];

        tn_host_mac(s.dev->Host(), s.mac);
        s.flow = tn_flow_create(s.dev->Host(), g.rx->Host(), &p.flow, 1000 + k);
        if (!s.flow)
        {
            fprintf(stderr, "tern-ns3-incast: connecting flow %u failed\n", k);
            return false;
        }
        s.bins.assign(g.nbins, 0);
        s.cc_mbps.assign(g.nbins, 0);
    }
    return true;
}

void
Start()
{
    g.rx->Announce();
    for (auto& s : g.s)
        s.dev->Announce();
    for (auto& s : g.s)
        tn_flow_start(s.flow);
}

/* ---- figures (as tern-sim's) ---------------------------------------------------------- */

/* The senders' bins and the convergence parameters, for simutil.h. */
struct sim_bins
SendersBins(std::vector<const uint64_t*>& bins)
{
    for (const auto& s : g.s)
        bins.push_back(s.bins.data());
    return {bins.data(), static_cast<unsigned int>(g.s.size()), g.nbins, g.p.bin_ns,
            g.p.conv_window_ns, g.p.conv_hold_ns};
}

/* The scenario's parameters into @f. */
void
ReportSetup(struct sim_incast_figures& f)
{
    const Params& p = g.p;

    f.n = p.n;
    f.dcqcn = p.nic.dcqcn && !p.nic.hpcc && !p.nic.timely;
    f.rp_en = p.nic.rp_en;
    f.np_en = p.nic.np_en;
    f.link_mbps = p.nic.link_mbps;
    f.delay_ns = p.delay_ns;
    f.mtu_bytes = 128u << p.flow.mtu;
    f.msg_bytes = p.flow.msg_bytes;
    f.duration_ns = p.duration_ns;
    f.steady_from_ns = g.steady_at;
}

/* The switch's and the NICs' counters, added up, into @f. */
void
ReportCounters(struct sim_incast_figures& f, const SwitchTotals& sw, const NicTotals& nic)
{
    f.xoff = sw.xoff;
    f.xon = sw.xon;
    f.rx_pause = nic.rx_pause;
    f.tx_pause = nic.tx_pause;
    f.pfc_ok = nic.pfc_ok;
    f.lossless = sw.lossless;
    f.drops = sw.drops;
    f.discards = nic.discards;
    f.refused = nic.refused;
    f.retrans = nic.retrans;
    f.timeouts = nic.timeouts;
    f.marked = sw.marked;
    f.ecn_rx = nic.ecn_rx;
    f.cnp_sent = nic.cnp_sent;
    f.cnp_handled = nic.cnp_handled;
    f.cnp_ignored = nic.cnp_ignored;
    f.cuts = nic.cuts;
    f.incs = nic.incs;
    f.int_hops = sw.int_hops;
    f.int_echo_acks = nic.int_echo_acks;
    f.hpcc_updates = nic.hpcc_updates;
    f.timely_samples = nic.timely_samples;
    f.timely_decreases = nic.timely_decreases;
    f.timely_increases = nic.timely_increases;
}

void
Report(double wall)
{
    const Params& p = g.p;
    unsigned int n = p.n, k;
    double rates[kMaxSenders], done[kMaxSenders], total = 0, fair;
    double steady_s = static_cast<double>(g.end - g.steady_at) / 1e9;
    uint64_t completed = 0, errors = 0;
    bool data_ok = true;
    SwitchTotals sw;
    NicTotals nic;
    std::vector<Ptr<TernNetDevice>> devs = {g.rx};
    std::vector<const uint64_t*> bins;
    struct sim_bins sb = SendersBins(bins);
    double jr[kMaxSenders];

    for (k = 0; k < n; k++)
    {
        struct tn_flow_stats fs;

        tn_flow_stats(g.s[k].flow, &fs);
        rates[k] = static_cast<double>(g.s[k].rx_bytes_steady) * 8 / steady_s / 1e9;
        done[k] = static_cast<double>(fs.done_bytes - g.s[k].done_at_steady) * 8 / steady_s /
                  1e9;
        total += rates[k];
        completed += fs.completed;
        errors += fs.errors;
        if (!tn_flow_data_ok(g.s[k].flow))
            data_ok = false;
        devs.push_back(g.s[k].dev);
    }
    fair = total / n;
    for (k = 0; k <= n; k++)
        sw.Add(g.sw->Model(), k, kPrio);
    for (auto& d : devs)
        nic.Add(d, kPrio);
    std::vector<uint64_t> qs = g.qsamples;
    std::sort(qs.begin(), qs.end());

    struct sim_incast_figures f = {};

    ReportSetup(f);
    f.rates = rates;
    f.goodput = done;
    f.total = total;
    f.fair = fair;
    f.q_sorted = qs.data();
    f.nq = qs.size();
    f.sw = &p.sw;
    f.convergence_us = sim_convergence_us(&sb, fair, p.conv_tol);
    f.jain_convergence_us = sim_jain_convergence_us(&sb, 0.99, true, jr);
    ReportCounters(f, sw, nic);
    f.hpcc = p.nic.hpcc;
    f.timely = p.nic.timely && !p.nic.hpcc;
    f.completed = completed;
    f.errors = errors;
    f.data_ok = data_ok;
    f.dcb_ok = g.dcb_ok;
    f.cc_ok = g.cc_ok;
    f.events = Simulator::GetEventCount();
    f.wall_s = wall;
    sim_print_incast(stdout, "ns-3", &f);
    fflush(stdout);
}

void
WriteSeries()
{
    FILE* f = fopen(g.p.series, "w");

    if (!f)
    {
        fprintf(stderr, "tern-ns3-incast: %s: %s\n", g.p.series, strerror(errno));
        return;
    }
    fprintf(f,
            "{\"n\":%u,\"dcqcn\":%s,\"bin_us\":%.3f,\"sample_us\":%.3f,"
            "\"kmin_kb\":%.1f,\"kmax_kb\":%.1f,\"flow_gbps\":[",
            g.p.n, g.p.nic.dcqcn ? "true" : "false", g.p.bin_ns / 1000.0, g.p.sample_ns / 1000.0,
            g.p.sw.kmin_bytes / 1024.0, g.p.sw.kmax_bytes / 1024.0);
    for (size_t k = 0; k < g.s.size(); k++)
    {
        fprintf(f, "%s[", k ? "," : "");
        for (unsigned int b = 0; b < g.nbins; b++)
            fprintf(f, "%s%.3f", b ? "," : "",
                    static_cast<double>(g.s[k].bins[b]) * 8 / static_cast<double>(g.p.bin_ns));
        fprintf(f, "]");
    }
    fprintf(f, "],\"cc_rate_gbps\":[");
    for (size_t k = 0; k < g.s.size(); k++)
    {
        fprintf(f, "%s[", k ? "," : "");
        for (unsigned int b = 0; b < g.nbins; b++)
            fprintf(f, "%s%.3f", b ? "," : "", g.s[k].cc_mbps[b] / 1000.0);
        fprintf(f, "]");
    }
    fprintf(f, "],\"queue_kb\":[");
    for (size_t i = 0; i < g.qseries.size(); i++)
        fprintf(f, "%s%.1f", i ? "," : "", g.qseries[i] / 1024.0);
    fprintf(f, "]}\n");
    fclose(f);
}

/* ---- command line ------------------------------------------------------------------------ */

void
Usage(FILE* f)
{
    fprintf(f,
            "usage: tern-ns3-incast [options]   (tern-sim's, on ns-3)\n"
            SIM_INCAST_USAGE_TOP
            "  --pfc-mask M          lossless priorities, switch and NICs (8)\n"
            "  --cc NAME=V           a DCQCN parameter (e.g. rpg_ai_rate=40)\n"
            "  --hpcc on|off         HPCC with INT on the --rp-en priorities instead of DCQCN\n"
            "  --timely on|off       TIMELY on the --rp-en priorities instead of DCQCN\n"
            SIM_INCAST_USAGE_BOTTOM,
            kMaxSenders);
}

bool
OnOff(const char* s)
{
    if (!strcmp(s, "on") || !strcmp(s, "1"))
        return true;
    if (!strcmp(s, "off") || !strcmp(s, "0"))
        return false;
    fprintf(stderr, "tern-ns3-incast: expected on or off: %s\n", s);
    exit(2);
}

/* The command line into g.p: -1 to run, or the exit status (--help, a bad option). */
int
ParseArgs(int argc, char** argv)
{
    enum
    {
        O_N = 256, O_DCQCN, O_RP, O_NP, O_DUR, O_STEADY, O_MTU, O_MSG, O_OUT, O_SEED,
        O_SAMPLE, O_BIN, O_CW, O_CH, O_CT, O_SERIES, O_SWJSON, O_QUIET, O_HELP, O_ECNDEQ,
        O_PFC, O_JIT, O_ECNENQ, O_HPCC, O_TIMELY
    };
    static const std::vector<struct option> opts = Options({
        {"n", 1, nullptr, O_N}, {"dcqcn", 1, nullptr, O_DCQCN}, {"rp-en", 1, nullptr, O_RP},
        {"np-en", 1, nullptr, O_NP}, {"duration-us", 1, nullptr, O_DUR},
        {"steady-from", 1, nullptr, O_STEADY}, {"mtu", 1, nullptr, O_MTU},
        {"msg-bytes", 1, nullptr, O_MSG}, {"outstanding", 1, nullptr, O_OUT},
        {"seed", 1, nullptr, O_SEED}, {"sample-ns", 1, nullptr, O_SAMPLE},
        {"bin-us", 1, nullptr, O_BIN}, {"conv-window-us", 1, nullptr, O_CW},
        {"conv-tol", 1, nullptr, O_CT}, {"conv-hold-us", 1, nullptr, O_CH},
        {"ecn-dequeue", 0, nullptr, O_ECNDEQ}, {"ecn-enqueue", 0, nullptr, O_ECNENQ},
        {"pfc-mask", 1, nullptr, O_PFC},
        {"jitter-ns", 1, nullptr, O_JIT}, {"hpcc", 1, nullptr, O_HPCC},
        {"timely", 1, nullptr, O_TIMELY},
        {"series", 1, nullptr, O_SERIES}, {"switch-json", 1, nullptr, O_SWJSON},
        {"quiet", 0, nullptr, O_QUIET}, {"help", 0, nullptr, O_HELP},
    });
    Params& p = g.p;
    const Common common = {p.nic, p.flow, p.sw, p.delay_ns};
    int c;

    Defaults(common, 3);
    sim_incast_switch_default(&p.sw, 3);    /* RED at dequeue, Pmax 20 %, as tern-sim */
    while ((c = NextOption(argc, argv, opts, common)) != -1)
    {
        switch (c)
        {
        case O_N: p.n = static_cast<unsigned int>(Num(optarg, "--n")); break;
        case O_DCQCN: p.nic.dcqcn = OnOff(optarg); break;
        case O_HPCC: p.nic.hpcc = OnOff(optarg); break;
        case O_TIMELY: p.nic.timely = OnOff(optarg); break;
        case O_RP: p.nic.rp_en = static_cast<uint8_t>(Num(optarg, "--rp-en")); break;
        case O_NP: p.nic.np_en = static_cast<uint8_t>(Num(optarg, "--np-en")); break;
        case O_DUR: p.duration_ns = Num(optarg, "--duration-us") * 1000; break;
        case O_STEADY: p.steady_from = atof(optarg); break;
        case O_JIT: p.jitter_ns = Num(optarg, "--jitter-ns"); break;
        case O_MTU: p.flow.mtu = static_cast<uint8_t>(Num(optarg, "--mtu")); break;
        case O_MSG: p.flow.msg_bytes = static_cast<uint32_t>(Num(optarg, "--msg-bytes")); break;
        case O_OUT: p.flow.outstanding = static_cast<unsigned>(Num(optarg, "--outstanding")); break;
        case O_PFC: p.sw.pfc_mask = static_cast<uint8_t>(Num(optarg, "--pfc-mask")); break;
        case O_SEED: p.sw.seed = Num(optarg, "--seed"); break;
        case O_SAMPLE: p.sample_ns = Num(optarg, "--sample-ns"); break;
        case O_BIN: p.bin_ns = Num(optarg, "--bin-us") * 1000; break;
        case O_CW: p.conv_window_ns = Num(optarg, "--conv-window-us") * 1000; break;
        case O_CT: p.conv_tol = atof(optarg); break;
        case O_CH: p.conv_hold_ns = Num(optarg, "--conv-hold-us") * 1000; break;
        case O_ECNDEQ: p.sw.ecn_at_dequeue = true; break;
        case O_ECNENQ: p.sw.ecn_at_dequeue = false; break;
        case O_SERIES: p.series = optarg; break;
        case O_SWJSON: p.switch_json = optarg; break;
        case O_QUIET: p.quiet = true; break;
        case O_HELP: Usage(stdout); return 0;
        default: Usage(stderr); return 2;
        }
    }
    return -1;
}

/* Out of the ranges the run relies on (--help). */
bool
ParamsBad(const Params& p)
{
    return !p.n || p.n > kMaxSenders || p.flow.mtu < 1 || p.flow.mtu > 5 ||
           !p.flow.msg_bytes || p.flow.msg_bytes > (1u << 20) || !p.flow.outstanding ||
           p.flow.outstanding > 32 || !p.sample_ns || !p.bin_ns || !p.duration_ns ||
           p.duration_ns > 10000000000ull || !p.nic.link_mbps || p.delay_ns > 1000000000ull ||
           p.jitter_ns > 1000000000ull ||
           !(p.steady_from >= 0 && p.steady_from < 1) ||
           p.duration_ns / p.sample_ns > 100000000ull || p.duration_ns / p.bin_ns > 10000000ull;
}

/* --switch-json: the switch's counters. */
void
WriteSwitchJson()
{
    FILE* f = fopen(g.p.switch_json, "w");
    if (f)
    {
        tsw_dump_json(g.sw->Model(), f);
        fclose(f);
    }
}

} // namespace

int
main(int argc, char** argv)
{
    Params& p = g.p;
    struct timespec a, b;
    int ret;

    ret = ParseArgs(argc, argv);
    if (ret >= 0)
        return ret;
    p.nic.pfc_mask = p.sw.pfc_mask;
    p.sw.int_mask = p.nic.hpcc ? p.nic.rp_en : 0;
    if (optind != argc || ParamsBad(p))
    {
        Usage(stderr);
        return 2;
    }
    g.nbins = static_cast<unsigned int>((p.duration_ns + p.bin_ns - 1) / p.bin_ns);
    g.end = p.duration_ns;
    g.steady_at = static_cast<uint64_t>(p.duration_ns * p.steady_from);
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (!Build())
    {
        Simulator::Destroy();
        return 1;
    }
    Simulator::Schedule(NanoSeconds(0), &Start);
    Simulator::Schedule(NanoSeconds(0), &Sample);
    Simulator::Schedule(NanoSeconds(g.steady_at), &SteadyStart);
    Simulator::Stop(NanoSeconds(g.end));
    Simulator::Run();
    if (g.nbins)
        SampleRates(g.nbins - 1); /* the last bin ends with the run */
    clock_gettime(CLOCK_MONOTONIC, &b);
    Report(WallSeconds(a, b));
    if (p.series)
        WriteSeries();
    if (p.switch_json)
        WriteSwitchJson();
    g.s.clear();
    g.rx = nullptr;
    g.sw = nullptr;
    Simulator::Destroy();
    return 0;
}
