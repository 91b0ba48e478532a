/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern-ns3-fabric: a leaf-spine fabric on ns-3 with tern's device model in every host.
 * L leaves with H hosts each and S spines, every leaf cabled once to every spine, every link
 * at the same delay and rate (H:S oversubscription at the leaves: 8 hosts and 4 spines is
 * 2:1), or the leaf-spine links at --uplink-mbps. The switches are model/fabric/switch.c
 * (TernSwitch) with static routes: a leaf reaches its own hosts directly and every other
 * host over all its uplinks (ECMP by the RoCEv2 5-tuple, a seed per switch), a spine
 * reaches a host through its leaf; nothing floods (no_flood).
 *
 * Traffic, all RDMA WRITE flows on their own RC QP (UDP source port per flow), either
 *   permutation  host i sends --flow-bytes to host (i + H) mod (L x H) (every flow crosses
 *                the spines), and --incast K hosts of the other leaves send to host 0 as
 *                well, all started at seeded random times in the first --spread-us; or
 *   --workload F every host starts flows to uniformly chosen other hosts at Poisson times
 *                for --duration-us, at --load of its line rate, their sizes drawn from the
 *                cumulative distribution in F (model/ns3/workloads: websearch.cdf,
 *                fbhadoop.cdf).
 * The run ends when every flow has completed (or at --max-us). One JSON line on stdout:
 * flow completion times and slowdowns (FCT / ideal: the flow's frames back to back at line
 * rate plus one round trip of propagation), PFC pauses, drops, the deepest lossless egress
 * queue in the fabric sampled every --sample-ns, CC counters. Documentation/fabric.rst.
 *
 * With --hpcc on the NICs run HPCC instead of DCQCN on priority 3 and every switch adds an
 * INT hop record to its requests (int_mask; at most --int-mtu bytes of IP packet). The
 * leaves' egress ports towards the hosts parse every INT frame they deliver and count it by
 * whether its records are one per switch on its path (1 within a leaf, 3 across the
 * spines): the requests the responders get and the echoes the requesters get back.
 *
 *   tern-ns3-fabric [--leaves 4 --hosts 8 --spines 4] [--dcqcn on|off] [--hpcc on|off] ...
 */
#include "scenario.h"
#include "simutil.h"
#include "tern-ns3.h"

#include <ns3/simulator.h>

#include <linux/tern/tern_dcb.h>

#include <algorithm>
#include <array>
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

const char* const scenario::kProgram = "tern-ns3-fabric";

namespace
{

constexpr unsigned int kPrio = 3;

struct Params
{
    unsigned int leaves = 4, hosts = 8, spines = 4, incast = 8;
    uint64_t delay_ns = 1000;
    uint32_t uplink_mbps = 0; /* leaf-spine links (0: as the hosts') */
    uint64_t flow_bytes = 1u << 20;
    uint64_t spread_ns = 20000;
    uint64_t max_ns = 50000000;
    uint64_t sample_ns = 1000;
    uint64_t seed = 1;
    const char* workload = nullptr;
    const char* series = nullptr;
    const char* flow_log = nullptr;
    uint64_t series_ns = 10000;
    double load = 0.3;
    uint64_t duration_ns = 2000000;
    tn_nic_params nic;
    tn_flow_params flow;
    tsw_config sw;
};

struct Flow
{
    unsigned int src, dst;
    uint64_t start_ns;
    uint64_t bytes;
    uint16_t sport = 0;          /* its RoCEv2 UDP source port */
    bool started = false;
    struct tn_flow* f = nullptr; /* once started; nullptr: skipped */
};

/* INT frames the leaves delivered to hosts, by the records they carried against the
 * switches on their path; the largest IP packet with an INT shim any switch sent. */
struct Telemetry
{
    uint64_t req = 0, req_full = 0, req_short = 0, req_bad = 0;
    uint64_t echo = 0, echo_full = 0, echo_short = 0, echo_bad = 0;
    uint64_t overflow_flag = 0, ip_max = 0;
};

constexpr size_t kMaxCdf = 64;
constexpr uint64_t kMaxFlowBytes = 1ull << 34;

struct Fabric
{
    Params p;
    std::vector<Ptr<TernNetDevice>> hosts;
    std::vector<Ptr<TernSwitch>> leaves, spines;
    std::vector<Flow> flows;
    std::vector<double> cdf_size, cdf_pct; /* the workload's points */
    uint64_t skipped = 0;                  /* flows the hosts had no room for */
    std::vector<std::array<uint8_t, 6>> macs; /* per host */
    Telemetry tel;
    std::vector<std::vector<uint32_t>> pseries; /* per switch port: lossless queue bytes */
    std::vector<uint64_t> qsamples; /* deepest lossless egress FIFO, every sample */
    uint64_t rng = 0;
    uint64_t done_at = 0;
    size_t not_done = 0; /* flows before it are done (AllDone) */
    tn_qp_stats qp{};    /* QP pair ends, summed over the hosts at the end */
    uint64_t max_flows_sent = 0; /* by one host */
    unsigned int max_ends = 0;   /* QPs one host made for flows, one side */
    bool all_done = false, dcb_ok = true, cc_ok = true;
};

Fabric g;

uint64_t
Rand()
{
    return sim_splitmix64(&g.rng);
}

double
Uniform01()
{
    return static_cast<double>(Rand() >> 11) * (1.0 / 9007199254740992.0);
}

/* "<bytes> <percent>" lines ('#' comments), both nondecreasing, ending at 100 percent. */
bool
LoadCdf(const char* path)
{
    FILE* f = fopen(path, "r");
    char line[256];

    if (!f)
    {
        fprintf(stderr, "tern-ns3-fabric: %s: %s\n", path, strerror(errno));
        return false;
    }
    while (fgets(line, sizeof(line), f))
    {
        double sz, pc;
        char extra;

        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0)
            continue;
        if (sscanf(line, "%lf %lf %c", &sz, &pc, &extra) != 2 || !(sz >= 0) ||
            sz > static_cast<double>(kMaxFlowBytes) || !(pc >= 0) || pc > 100 ||
            g.cdf_size.size() >= kMaxCdf ||
            (!g.cdf_size.empty() && (sz < g.cdf_size.back() || pc < g.cdf_pct.back())))
        {
            fprintf(stderr, "tern-ns3-fabric: %s: bad line: %s", path, line);
            fclose(f);
            return false;
        }
        g.cdf_size.push_back(sz);
        g.cdf_pct.push_back(pc);
    }
    fclose(f);
    if (g.cdf_size.size() < 2 || g.cdf_pct.back() != 100)
    {
        fprintf(stderr, "tern-ns3-fabric: %s: not a distribution ending at 100 %%\n", path);
        return false;
    }
    return true;
}

/* A size from the piecewise-linear distribution. */
uint64_t
DrawSize()
{
    double u = Uniform01() * 100;

    for (size_t i = 1; i < g.cdf_size.size(); i++)
    {
        if (u < g.cdf_pct[i] && g.cdf_pct[i] > g.cdf_pct[i - 1])
        {
            double x = g.cdf_size[i - 1] + (g.cdf_size[i] - g.cdf_size[i - 1]) *
                                               (u - g.cdf_pct[i - 1]) /
                                               (g.cdf_pct[i] - g.cdf_pct[i - 1]);
            return std::max<uint64_t>(1, static_cast<uint64_t>(x + 0.5));
        }
    }
    return std::max<uint64_t>(1, static_cast<uint64_t>(g.cdf_size.back()));
}

double
MeanSize()
{
    double m = 0;

    for (size_t i = 1; i < g.cdf_size.size(); i++)
        m += (g.cdf_size[i - 1] + g.cdf_size[i]) / 2 * (g.cdf_pct[i] - g.cdf_pct[i - 1]) / 100;
    return std::max(m, 1.0);
}

void
MakeTraffic()
{
    const Params& p = g.p;
    unsigned int n = p.leaves * p.hosts, h;

    if (!p.workload)
    {
        for (h = 0; h < n; h++)
            g.flows.push_back({h, (h + p.hosts) % n, 0, p.flow_bytes});
        for (h = 0; h < p.incast; h++)
            g.flows.push_back({p.hosts + h % (n - p.hosts), 0, 0, p.flow_bytes});
        for (auto& f : g.flows)
            f.start_ns = p.spread_ns ? Rand() % p.spread_ns : 0;
        return;
    }
    /* mean gap between a host's flows: its share of the line at the load */
    double gap_ns = MeanSize() * 8000.0 / (p.load * p.nic.link_mbps);
    for (h = 0; h < n; h++)
    {
        double t = 0;
        for (;;)
        {
            t += -log(1 - Uniform01()) * gap_ns;
            if (t >= static_cast<double>(p.duration_ns))
                break;
            unsigned int d = static_cast<unsigned int>(Rand() % (n - 1));
            g.flows.push_back({h, d >= h ? d + 1 : d, static_cast<uint64_t>(t), DrawSize()});
        }
    }
    std::stable_sort(g.flows.begin(), g.flows.end(),
                     [](const Flow& a, const Flow& b) { return a.start_ns < b.start_ns; });
}

/* Host index of @mac, or -1. */
int
HostOf(const uint8_t* mac)
{
    for (size_t i = 0; i < g.macs.size(); i++)
        if (!memcmp(g.macs[i].data(), mac, 6))
            return static_cast<int>(i);
    return -1;
}

/* Every INT frame a switch sends (IPv4 without options, as the NICs send them; every length
 * checked against the frame's): the IP length for int_mtu; at a leaf's host port also the
 * shim's records against the switches between its source and its destination. */
void
IntEgress(bool leaf, unsigned int port, const uint8_t* f, size_t len)
{
    Telemetry& t = g.tel;
    size_t l3 = 14, ihl, iplen, udp, s;

    if (len < 18)
        return;
    if (f[12] == 0x81 && f[13] == 0x00)
        l3 += 4;
    if (len < l3 + 20 || f[l3 - 2] != 0x08 || f[l3 - 1] != 0x00 || (f[l3] >> 4) != 4)
        return;
    ihl = static_cast<size_t>(f[l3] & 0xf) * 4;
    iplen = static_cast<size_t>(f[l3 + 2]) << 8 | f[l3 + 3];
    udp = l3 + ihl;
    s = udp + 8;
    if (ihl < 20 || f[l3 + 9] != 17 || iplen < ihl + 8 + sizeof(tern_int_shim) ||
        l3 + iplen > len || (static_cast<unsigned int>(f[udp + 2]) << 8 | f[udp + 3]) !=
                                TERN_INT_UDP_DPORT)
        return;
    t.ip_max = std::max<uint64_t>(t.ip_max, iplen);
    if (!leaf || port >= g.p.hosts)
        return;

    int src = HostOf(f + 6), dst = HostOf(f);
    uint8_t type = f[s], nhops = f[s + 1], max_hops = f[s + 2];
    bool bad = src < 0 || dst < 0 || !max_hops || max_hops > TERN_INT_MAX_HOPS ||
               nhops > max_hops ||
               s + sizeof(tern_int_shim) + static_cast<size_t>(nhops) * sizeof(tern_int_hop) >
                   l3 + iplen;
    /* switches on the path: the leaf, or the leaf, a spine and the other leaf */
    unsigned int path = !bad && static_cast<unsigned int>(src) / g.p.hosts ==
                                    static_cast<unsigned int>(dst) / g.p.hosts
                            ? 1
                            : 3;

    if (f[s + 3] & TERN_INT_F_OVERFLOW)
        t.overflow_flag++;
    if (type == TERN_INT_TYPE_REQUEST)
    {
        t.req++;
        if (bad || nhops > path)
            t.req_bad++;
        else if (nhops == path)
            t.req_full++;
        else
            t.req_short++;
    }
    else if (type == TERN_INT_TYPE_ECHO)
    {
        t.echo++;
        if (bad || nhops > path)
            t.echo_bad++;
        else if (nhops == path)
            t.echo_full++;
        else
            t.echo_short++;
    }
    else
    {
        t.req_bad++;
    }
}

bool
Build()
{
    Params& p = g.p;
    unsigned int n = p.leaves * p.hosts, l, s, h;
    std::vector<unsigned int> up;

    for (s = 0; s < p.spines; s++)
        up.push_back(p.hosts + s);
    for (l = 0; l < p.leaves; l++)
    {
        Ptr<TernSwitch> sw = CreateObject<TernSwitch>();
        tsw_config c = p.sw;

        c.nports = p.hosts + p.spines;
        c.link_mbps = p.nic.link_mbps;
        for (s = 0; s < p.spines; s++)
            c.port_mbps[p.hosts + s] = p.uplink_mbps;
        c.no_flood = true;
        c.ecmp_seed = 1 + l;
        c.seed = p.sw.seed + l;
        if (!sw->Setup(CreateObject<Node>(), c))
            return false;
        if (p.nic.hpcc)
            sw->SetEgressHook([](unsigned int port, const uint8_t* f, size_t len)
                              { IntEgress(true, port, f, len); });
        g.leaves.push_back(sw);
    }
    for (s = 0; s < p.spines; s++)
    {
        Ptr<TernSwitch> sw = CreateObject<TernSwitch>();
        tsw_config c = p.sw;

        c.nports = p.leaves;
        c.link_mbps = p.uplink_mbps ? p.uplink_mbps : p.nic.link_mbps;
        c.no_flood = true;
        c.ecmp_seed = 1000 + s;
        c.seed = p.sw.seed + 1000 + s;
        if (!sw->Setup(CreateObject<Node>(), c))
            return false;
        if (p.nic.hpcc)
            sw->SetEgressHook([](unsigned int port, const uint8_t* f, size_t len)
                              { IntEgress(false, port, f, len); });
        g.spines.push_back(sw);
        for (l = 0; l < p.leaves; l++)
            if (!TernConnect(g.leaves[l]->GetPort(p.hosts + s), sw->GetPort(l),
                             NanoSeconds(p.delay_ns)))
                return false;
    }
    for (h = 0; h < n; h++)
    {
        Ptr<TernNetDevice> d = NewHost(h, p.nic, g.dcb_ok, g.cc_ok);
        unsigned int leaf = h / p.hosts, port = h % p.hosts;
        uint8_t mac[6];

        if (!d)
        {
            fprintf(stderr, "tern-ns3-fabric: host %u setup failed\n", h);
            return false;
        }
        if (!TernConnect(d, g.leaves[leaf]->GetPort(port), NanoSeconds(p.delay_ns)))
            return false;
        g.hosts.push_back(d);
        tn_host_mac(d->Host(), mac);
        g.macs.push_back({mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]});
        for (l = 0; l < p.leaves; l++)
        {
            bool ok = l == leaf ? tsw_route_add(g.leaves[l]->ModelMut(), mac, &port, 1)
                                : tsw_route_add(g.leaves[l]->ModelMut(), mac, up.data(),
                                                p.spines);
            if (!ok)
                return false;
        }
        for (s = 0; s < p.spines; s++)
            if (!tsw_route_add(g.spines[s]->ModelMut(), mac, &leaf, 1))
                return false;
    }
    MakeTraffic();
    for (auto& f : g.flows)
        f.sport = static_cast<uint16_t>(0xc000 | (Rand() & 0x3fff));
    return true;
}

/* A flow's QP pair is taken (reused or made) when it starts, and given back once it is over
 * (tn_host.h), so a run may last as long as wanted: only TN_MAX_FLOWS at a time each way. */
void
StartFlow(size_t i)
{
    const Params& p = g.p;
    Flow& f = g.flows[i];
    tn_flow_params fp = p.flow;

    /* small flows take small buffers: one slot per WRITE, up to 4 of 64 KiB */
    fp.total_bytes = f.bytes;
    fp.msg_bytes = static_cast<uint32_t>(std::min<uint64_t>(p.flow.msg_bytes, f.bytes));
    fp.slots = static_cast<unsigned int>(
        std::min<uint64_t>(p.flow.slots, (f.bytes + fp.msg_bytes - 1) / fp.msg_bytes));
    fp.sport = f.sport;
    f.started = true;
    f.f = tn_flow_create(g.hosts[f.src]->Host(), g.hosts[f.dst]->Host(), &fp,
                         static_cast<unsigned int>(2000 + i));
    if (!f.f)
    {
        g.skipped++; /* no free QP pair end or host memory: reported */
        if (!p.workload)
            fprintf(stderr, "tern-ns3-fabric: flow %zu (%u -> %u) failed\n", i, f.src, f.dst);
        return;
    }
    tn_flow_start(f.f);
}

uint64_t
DeepestQueue()
{
    uint64_t m = 0;

    for (auto* set : {&g.leaves, &g.spines})
        for (auto& sw : *set)
            for (unsigned int port = 0; port < sw->GetNPorts(); port++)
                m = std::max(m, tsw_queue_bytes(sw->Model(), port, kPrio));
    return m;
}

bool
AllDone()
{
    /* flows are in start order and stay done: resume at the first one not done */
    for (; g.not_done < g.flows.size(); g.not_done++)
    {
        const Flow& f = g.flows[g.not_done];
        struct tn_flow_stats st;

        if (!f.started)
            return false;
        if (!f.f)
            continue; /* skipped */
        tn_flow_stats(f.f, &st);
        if (!st.finish_ns && !st.errors)
            return false;
    }
    return true;
}

void
Sample()
{
    g.qsamples.push_back(DeepestQueue());
    if (g.p.series && NowNs() % g.p.series_ns == 0)
    {
        size_t i = 0;

        g.pseries.resize(g.leaves.size() * g.leaves[0]->GetNPorts() +
                         g.spines.size() * g.spines[0]->GetNPorts());
        for (auto* set : {&g.leaves, &g.spines})
            for (auto& sw : *set)
                for (unsigned int port = 0; port < sw->GetNPorts(); port++)
                    g.pseries[i++].push_back(
                        static_cast<uint32_t>(tsw_queue_bytes(sw->Model(), port, kPrio)));
    }
    if (NowNs() % 10000 == 0 && NowNs() >= g.p.spread_ns && AllDone())
    {
        g.all_done = true;
        g.done_at = NowNs();
        Simulator::Stop();
        return;
    }
    Simulator::Schedule(NanoSeconds(g.p.sample_ns), &Sample);
}

double
Pct(std::vector<double> v, double q)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return sim_pct_double(v.data(), v.size(), q);
}

/* The flow's frames back to back at line rate (MTU payloads, 58 bytes of headers each,
 * 24 of line overhead) plus one round trip over the path's links (2 or 4 each way). */
double
IdealNs(const Flow& f)
{
    const Params& p = g.p;
    uint64_t mtu = 128u << p.flow.mtu, pkts = (f.bytes + mtu - 1) / mtu;
    unsigned int links = f.src / p.hosts == f.dst / p.hosts ? 2 : 4;
    double wire = static_cast<double>(f.bytes + pkts * (58 + 24)) * 8000.0 / p.nic.link_mbps;

    return wire + 2.0 * links * static_cast<double>(p.delay_ns);
}

/* Flow size buckets of the report: [edges[b], edges[b + 1]). */
const uint64_t kEdges[] = {0, 10000, 100000, 1000000, 10000000, UINT64_MAX};
constexpr size_t kBuckets = sizeof(kEdges) / sizeof(kEdges[0]) - 1;

/* The flows' figures: completion times and slowdowns, per bucket and below 100 KB. */
struct FlowFigures
{
    std::vector<double> fct, slow, bslow[kBuckets], small; /* small: flows < 100 KB */
    size_t bflows[kBuckets] = {0};
    uint64_t completed = 0, errors = 0, bytes = 0, first_ns = UINT64_MAX, last_ns = 0;
    bool data_ok = true;
    size_t nflows = 0;
};

void
CollectFlows(FlowFigures& ff)
{
    for (auto& f : g.flows)
    {
        struct tn_flow_stats st = {};

        if (f.started && !f.f)
            continue; /* skipped */
        ff.nflows++;
        if (f.f)
            tn_flow_stats(f.f, &st); /* else never started: the run ended first */
        ff.errors += st.errors;
        size_t b = 0;
        while (b + 1 < kBuckets && f.bytes >= kEdges[b + 1])
            b++;
        ff.bflows[b]++;
        if (st.finish_ns && !st.errors)
        {
            double t = static_cast<double>(st.finish_ns - st.start_ns);
            ff.completed++;
            ff.bytes += f.bytes;
            ff.first_ns = std::min(ff.first_ns, st.start_ns);
            ff.last_ns = std::max(ff.last_ns, st.finish_ns);
            ff.fct.push_back(t / 1000.0);
            ff.slow.push_back(t / IdealNs(f));
            ff.bslow[b].push_back(t / IdealNs(f));
            if (f.bytes < 100000)
                ff.small.push_back(t / IdealNs(f));
        }
        if (!f.f || !tn_flow_data_ok(f.f) || !st.finish_ns)
            ff.data_ok = false;
    }
}

/* The report's first part: the topology, the mode and the traffic. */
void
ReportSetup(size_t nflows)
{
    const Params& p = g.p;

    printf("{\"engine\":\"ns-3\",\"leaves\":%u,\"hosts_per_leaf\":%u,\"spines\":%u,"
           "\"hosts\":%u,\"link_mbps\":%u,\"uplink_mbps\":%u,\"delay_ns\":%" PRIu64
           ",\"mode\":\"%s\",\"dcqcn\":%s,\"hpcc\":%s,\"timely\":%s,\"flows\":%zu,"
           "\"flows_skipped\":%" PRIu64
           ",\"workload\":\"%s\",\"load\":%.3f,"
           "\"incast\":%u,\"flow_bytes\":%" PRIu64 ",",
           p.leaves, p.hosts, p.spines, p.leaves * p.hosts, p.nic.link_mbps,
           p.uplink_mbps ? p.uplink_mbps : p.nic.link_mbps, p.delay_ns,
           p.nic.hpcc ? "hpcc" : p.nic.timely ? "timely" : p.nic.dcqcn ? "dcqcn" : "pfc",
           p.nic.dcqcn && !p.nic.hpcc && !p.nic.timely ? "true" : "false",
           p.nic.hpcc ? "true" : "false", p.nic.timely && !p.nic.hpcc ? "true" : "false",
           nflows, g.skipped,
           p.workload ? "cdf" : "permutation+incast", p.workload ? p.load : 0.0,
           p.workload ? 0 : p.incast, p.workload ? 0 : p.flow_bytes);
}

/* Completion times and slowdowns: per size bucket, overall, small flows; the QP pairs. */
void
ReportFlows(const FlowFigures& ff)
{
    printf("\"buckets\":[");
    for (size_t b = 0; b < kBuckets; b++)
        printf("%s{\"from_bytes\":%" PRIu64 ",\"to_bytes\":%" PRIu64 ",\"flows\":%zu,"
               "\"completed\":%zu,\"slowdown_p50\":%.2f,\"slowdown_p95\":%.2f,"
               "\"slowdown_p99\":%.2f}",
               b ? "," : "", kEdges[b], kEdges[b + 1] == UINT64_MAX ? 0 : kEdges[b + 1],
               ff.bflows[b], ff.bslow[b].size(), Pct(ff.bslow[b], 0.5),
               Pct(ff.bslow[b], 0.95), Pct(ff.bslow[b], 0.99));
    printf("],");
    printf("\"completed\":%" PRIu64 ",\"write_errors\":%" PRIu64 ",\"data_ok\":%s,"
           "\"all_done_us\":%.1f,\"fct_us_p50\":%.1f,\"fct_us_p99\":%.1f,\"fct_us_max\":%.1f,"
           "\"slowdown_p50\":%.2f,\"slowdown_p95\":%.2f,\"slowdown_p99\":%.2f,",
           ff.completed, ff.errors, ff.data_ok ? "true" : "false",
           g.all_done ? static_cast<double>(g.done_at) / 1000.0 : -1.0, Pct(ff.fct, 0.5),
           Pct(ff.fct, 0.99), Pct(ff.fct, 1.0), Pct(ff.slow, 0.5), Pct(ff.slow, 0.95),
           Pct(ff.slow, 0.99));
    printf("\"small_flows\":%zu,\"small_slowdown_p50\":%.2f,\"small_slowdown_p99\":%.2f,",
           ff.small.size(), Pct(ff.small, 0.5), Pct(ff.small, 0.99));
    printf("\"qp_ends\":%u,\"qp_ends_max\":%u,\"qp_busy_end\":%u,\"qp_not_reset_end\":%u,"
           "\"qp_binds\":%" PRIu64 ",\"qp_resets\":%" PRIu64 ",\"qp_reset_fails\":%" PRIu64
           ",\"flows_per_host_max\":%" PRIu64 ",",
           g.qp.tx_ends + g.qp.rx_ends, g.max_ends, g.qp.busy, g.qp.not_reset, g.qp.binds,
           g.qp.resets, g.qp.reset_fails, g.max_flows_sent);
}

/* INT: the hop records the switches added, what the leaves saw delivered, HPCC's use. */
void
ReportInt(const SwitchTotals& sw, const NicTotals& nic)
{
    printf("\"int_mtu\":%u,\"int_hops\":%" PRIu64 ",\"int_overflows\":%" PRIu64
           ",\"int_req_rx\":%" PRIu64 ",\"int_req_full\":%" PRIu64 ",\"int_req_short\":%" PRIu64
           ",\"int_req_bad\":%" PRIu64 ",\"int_echo_rx\":%" PRIu64 ",\"int_echo_full\":%" PRIu64
           ",\"int_echo_short\":%" PRIu64 ",\"int_echo_bad\":%" PRIu64
           ",\"int_overflow_flagged\":%" PRIu64 ",\"int_ip_max\":%" PRIu64
           ",\"int_echoes_sent\":%" PRIu64 ",\"int_echo_acks\":%" PRIu64
           ",\"hpcc_window_updates\":%" PRIu64 ",\"timely_rtt_samples\":%" PRIu64
           ",\"timely_rate_decreases\":%" PRIu64 ",\"timely_rate_increases\":%" PRIu64 ",",
           g.p.sw.int_mtu, sw.int_hops, sw.int_overflows, g.tel.req, g.tel.req_full,
           g.tel.req_short, g.tel.req_bad, g.tel.echo, g.tel.echo_full, g.tel.echo_short,
           g.tel.echo_bad, g.tel.overflow_flag, g.tel.ip_max, nic.int_echoes_sent,
           nic.int_echo_acks, nic.hpcc_updates, nic.timely_samples, nic.timely_decreases,
           nic.timely_increases);
}

/* The queues, PFC, drops, retransmissions, ECN/CNPs and the run's own figures. */
void
ReportFabric(const SwitchTotals& sw, const NicTotals& nic, const std::vector<double>& q,
             double wall)
{
    double sim_s = static_cast<double>(NowNs()) / 1e9;

    printf("\"queue_p99_kb\":%.1f,\"queue_max_kb\":%.1f,\"switch_xoff\":%" PRIu64
           ",\"switch_xon\":%" PRIu64 ",\"nic_rx_pause\":%" PRIu64 ",\"lossless_drops\":%" PRIu64
           ",\"switch_drops\":%" PRIu64 ",\"no_route\":%" PRIu64 ",\"nic_rx_discards\":%" PRIu64
           ",\"refused_frames\":%" PRIu64 ",\"retrans_pkts\":%" PRIu64 ",\"ack_timeouts\":%" PRIu64
           ",",
           Pct(q, 0.99) / 1024.0, Pct(q, 1.0) / 1024.0, sw.xoff, sw.xon, nic.rx_pause,
           sw.lossless, sw.drops, sw.no_route, nic.discards, nic.refused, nic.retrans,
           nic.timeouts);
    printf("\"ecn_marked\":%" PRIu64 ",\"cnp_sent\":%" PRIu64 ",\"cnp_handled\":%" PRIu64
           ",\"dcb_ok\":%s,\"cc_ok\":%s,\"sim_us\":%.1f,\"events\":%" PRIu64
           ",\"wall_s\":%.2f,\"sim_s_per_wall_s\":%.5f,\"events_per_s\":%.0f}\n",
           sw.marked, nic.cnp_sent, nic.cnp_handled, g.dcb_ok ? "true" : "false",
           g.cc_ok ? "true" : "false",
           sim_s * 1e6, Simulator::GetEventCount(), wall, wall > 0 ? sim_s / wall : 0.0,
           wall > 0 ? static_cast<double>(Simulator::GetEventCount()) / wall : 0.0);
}

void
Report(double wall)
{
    FlowFigures ff;
    SwitchTotals sw;
    NicTotals nic;

    CollectFlows(ff);
    for (auto* set : {&g.leaves, &g.spines})
        for (auto& s : *set)
            for (unsigned int port = 0; port < s->GetNPorts(); port++)
                sw.Add(s->Model(), port, kPrio);
    for (auto& d : g.hosts)
        nic.Add(d, kPrio);
    std::vector<double> q(g.qsamples.begin(), g.qsamples.end());

    ReportSetup(ff.nflows);
    ReportFlows(ff);
    printf("\"goodput_gbps\":%.3f,\"queue_p50_kb\":%.1f,",
           ff.last_ns > ff.first_ns && ff.first_ns != UINT64_MAX
               ? static_cast<double>(ff.bytes) * 8 / static_cast<double>(ff.last_ns - ff.first_ns)
               : 0.0,
           Pct(q, 0.5) / 1024.0);
    ReportInt(sw, nic);
    ReportFabric(sw, nic, q, wall);
    fflush(stdout);
}

/* One line per flow: source, destination, bytes, start, FCT (0: not completed), ideal. */
void
WriteFlowLog()
{
    FILE* f = fopen(g.p.flow_log, "w");

    if (!f)
    {
        fprintf(stderr, "tern-ns3-fabric: %s: %s\n", g.p.flow_log, strerror(errno));
        return;
    }
    fprintf(f, "# src dst bytes start_ns fct_ns ideal_ns\n");
    for (auto& fl : g.flows)
    {
        struct tn_flow_stats st = {};

        if (fl.f)
            tn_flow_stats(fl.f, &st);
        fprintf(f, "%u %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %.0f\n", fl.src, fl.dst, fl.bytes,
                fl.start_ns, st.finish_ns && !st.errors ? st.finish_ns - st.start_ns : 0,
                IdealNs(fl));
    }
    fclose(f);
}

/* Per switch port: what it is cabled to, its lossless queue over time, PFC it sent/got. */
void
WriteSeries()
{
    const Params& p = g.p;
    FILE* f = fopen(p.series, "w");
    size_t i = 0;
    bool first = true;

    if (!f)
    {
        fprintf(stderr, "tern-ns3-fabric: %s: %s\n", p.series, strerror(errno));
        return;
    }
    fprintf(f, "{\"sample_us\":%.3f,\"dcqcn\":%s,\"hpcc\":%s,\"ports\":[",
            p.series_ns / 1000.0, p.nic.dcqcn && !p.nic.hpcc ? "true" : "false",
            p.nic.hpcc ? "true" : "false");
    for (int spine = 0; spine < 2; spine++)
    {
        auto& set = spine ? g.spines : g.leaves;
        for (size_t k = 0; k < set.size(); k++)
        {
            for (unsigned int port = 0; port < set[k]->GetNPorts(); port++, i++)
            {
                struct tsw_port_stats st;
                char peer[32];

                if (spine)
                    snprintf(peer, sizeof(peer), "leaf%u", port);
                else if (port < p.hosts)
                    snprintf(peer, sizeof(peer), "host%zu", k * p.hosts + port);
                else
                    snprintf(peer, sizeof(peer), "spine%u", port - p.hosts);
                tsw_port_stats(set[k]->Model(), port, &st);
                fprintf(f,
                        "%s{\"switch\":\"%s%zu\",\"port\":%u,\"peer\":\"%s\","
                        "\"xoff_sent\":%" PRIu64 ",\"pfc_rx\":%" PRIu64
                        ",\"max_kb\":%.1f,\"queue_kb\":[",
                        first ? "" : ",", spine ? "spine" : "leaf", k, port, peer,
                        st.pfc_xoff_sent[kPrio], st.pfc_rx[kPrio],
                        st.q[kPrio].max_bytes / 1024.0);
                first = false;
                if (i < g.pseries.size())
                    for (size_t j = 0; j < g.pseries[i].size(); j++)
                        fprintf(f, "%s%.1f", j ? "," : "", g.pseries[i][j] / 1024.0);
                fprintf(f, "]}");
            }
        }
    }
    fprintf(f, "]}\n");
    fclose(f);
}

void
Usage(FILE* f)
{
    fprintf(f,
            "usage: tern-ns3-fabric [options]\n"
            "  --leaves L --hosts H --spines S   topology (4, 8, 4; L x H <= %u)\n"
            "  --dcqcn on|off        RP+NP on priority 3 (on), or PFC only\n"
            "  --hpcc on|off         HPCC with INT on priority 3 instead of DCQCN (off)\n"
            "  --timely on|off       TIMELY on priority 3 instead of DCQCN (off)\n"
            "  --int-mtu B           largest IP packet INT records may grow to (9000)\n"
            "  --incast K            hosts of other leaves that also send to host 0 (8)\n"
            "  --flow-bytes B        every flow (1048576)\n"
            "  --spread-us T         flows start at random times in [0, T) (20)\n"
            "  --workload FILE       Poisson flows with sizes from FILE (a .cdf) instead of\n"
            "                        the permutation and the incast\n"
            "  --load F --duration-us T   ... at this share of each host's line,\n"
            "                        for this long (0.3, 2000)\n"
            "  --max-us T            give up after this much virtual time (50000)\n"
            "  --link-mbps R --delay-ns D   every link (40000, 1000)\n"
            "  --uplink-mbps R       the leaf-spine links instead (e.g. 100000)\n"
            "  --kmin B --kmax B --pmax-ppm P --xoff B --xon B --buffer B   every switch\n"
            "  --cc NAME=V           a DCQCN parameter    --seed S   traffic and RED\n"
            "  --sample-ns S         queue sampling (1000)\n"
            "  --series FILE         every switch port's lossless queue over time and PFC\n"
            "                        frames (JSON), sampled every --series-us (10)\n"
            "  --flow-log FILE       one line per flow: src dst bytes start_ns fct_ns ideal_ns\n",
            TN_MAX_HOSTS);
}

/* The command line into g.p: -1 to run, or the exit status (--help, a bad option). */
int
ParseArgs(int argc, char** argv)
{
    enum
    {
        O_L = 256, O_H, O_S, O_DCQCN, O_INC, O_FB, O_SPREAD, O_MAX, O_SEED, O_SAMPLE, O_HELP,
        O_WL, O_LOAD, O_DUR, O_SERIES, O_SERIES_US, O_UP, O_HPCC, O_INTMTU, O_FLOWLOG, O_TIMELY
    };
    static const std::vector<struct option> opts = Options({
        {"leaves", 1, nullptr, O_L}, {"hosts", 1, nullptr, O_H}, {"spines", 1, nullptr, O_S},
        {"dcqcn", 1, nullptr, O_DCQCN}, {"incast", 1, nullptr, O_INC},
        {"flow-bytes", 1, nullptr, O_FB}, {"spread-us", 1, nullptr, O_SPREAD},
        {"max-us", 1, nullptr, O_MAX}, {"seed", 1, nullptr, O_SEED},
        {"sample-ns", 1, nullptr, O_SAMPLE}, {"help", 0, nullptr, O_HELP},
        {"workload", 1, nullptr, O_WL}, {"load", 1, nullptr, O_LOAD},
        {"duration-us", 1, nullptr, O_DUR}, {"series", 1, nullptr, O_SERIES},
        {"series-us", 1, nullptr, O_SERIES_US}, {"uplink-mbps", 1, nullptr, O_UP},
        {"hpcc", 1, nullptr, O_HPCC}, {"int-mtu", 1, nullptr, O_INTMTU},
        {"timely", 1, nullptr, O_TIMELY},
        {"flow-log", 1, nullptr, O_FLOWLOG},
    });
    Params& p = g.p;
    const Common common = {p.nic, p.flow, p.sw, p.delay_ns};
    int c;

    Defaults(common, 2);
    while ((c = NextOption(argc, argv, opts, common)) != -1)
    {
        switch (c)
        {
        case O_L: p.leaves = static_cast<unsigned int>(Num(optarg, "--leaves")); break;
        case O_H: p.hosts = static_cast<unsigned int>(Num(optarg, "--hosts")); break;
        case O_S: p.spines = static_cast<unsigned int>(Num(optarg, "--spines")); break;
        case O_DCQCN:
        case O_HPCC:
        case O_TIMELY:
            if (strcmp(optarg, "on") && strcmp(optarg, "off"))
            {
                Usage(stderr);
                return 2;
            }
            (c == O_HPCC ? p.nic.hpcc : c == O_TIMELY ? p.nic.timely : p.nic.dcqcn) =
                !strcmp(optarg, "on");
            break;
        case O_INTMTU: p.sw.int_mtu = static_cast<uint32_t>(Num(optarg, "--int-mtu")); break;
        case O_INC: p.incast = static_cast<unsigned int>(Num(optarg, "--incast")); break;
        case O_FB: p.flow_bytes = Num(optarg, "--flow-bytes"); break;
        case O_SPREAD: p.spread_ns = Num(optarg, "--spread-us") * 1000; break;
        case O_MAX: p.max_ns = Num(optarg, "--max-us") * 1000; break;
        case O_SEED: p.seed = Num(optarg, "--seed"); break;
        case O_SAMPLE: p.sample_ns = Num(optarg, "--sample-ns"); break;
        case O_WL: p.workload = optarg; break;
        case O_LOAD: p.load = atof(optarg); break;
        case O_DUR: p.duration_ns = Num(optarg, "--duration-us") * 1000; break;
        case O_SERIES: p.series = optarg; break;
        case O_FLOWLOG: p.flow_log = optarg; break;
        case O_UP: p.uplink_mbps = static_cast<uint32_t>(Num(optarg, "--uplink-mbps")); break;
        case O_SERIES_US: p.series_ns = Num(optarg, "--series-us") * 1000; break;
        case O_HELP: Usage(stdout); return 0;
        default: Usage(stderr); return 2;
        }
    }
    return -1;
}

/* Out of the ranges the topology, the traffic and the sampling rely on (--help). */
bool
ParamsBad(const Params& p)
{
    return p.leaves < 2 || p.leaves > TSW_MAX_PORTS || !p.hosts || !p.spines ||
           p.spines > TSW_MAX_ECMP || p.hosts + p.spines > TSW_MAX_PORTS ||
           p.leaves * p.hosts > TN_MAX_HOSTS ||
           (!p.workload && p.incast > p.hosts * (p.leaves - 1)) ||
           p.incast >= TN_MAX_FLOWS || !p.flow_bytes || p.flow_bytes > (1ull << 34) ||
           !p.nic.link_mbps || p.delay_ns > 1000000000ull || !p.max_ns ||
           p.max_ns > 10000000000ull || !p.sample_ns || p.sample_ns % 1000 ||
           p.max_ns / p.sample_ns > 100000000ull || p.spread_ns > p.max_ns ||
           !(p.load > 0 && p.load <= 1) || !p.duration_ns || p.duration_ns > p.max_ns ||
           !p.series_ns || p.series_ns % p.sample_ns || p.max_ns / p.series_ns > 1000000ull ||
           p.sw.int_mtu < 576 || p.sw.int_mtu > 65535;
}

/* Every QP pair of a flow that is over back to its hosts, then count them into g.qp. */
void
SumQpStats()
{
    for (auto& d : g.hosts)
        tn_host_reclaim(d->Host());
    for (auto& d : g.hosts)
    {
        tn_qp_stats st;

        tn_host_qp_stats(d->Host(), &st);
        g.qp.tx_ends += st.tx_ends;
        g.qp.rx_ends += st.rx_ends;
        g.qp.busy += st.busy;
        g.qp.not_reset += st.not_reset;
        g.qp.binds += st.binds;
        g.qp.resets += st.resets;
        g.qp.reset_fails += st.reset_fails;
        g.max_flows_sent = std::max(g.max_flows_sent, st.flows_sent);
        g.max_ends = std::max({g.max_ends, st.tx_ends, st.rx_ends});
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
    if (optind != argc || ParamsBad(p))
    {
        Usage(stderr);
        return 2;
    }
    p.sw.seed = p.seed;
    p.sw.int_mask = p.nic.hpcc ? p.nic.rp_en : 0;
    g.rng = p.seed ^ 0x5deece66dull;
    if (p.workload && !LoadCdf(p.workload))
        return 2;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (!Build())
    {
        fprintf(stderr, "tern-ns3-fabric: building the fabric failed\n");
        Simulator::Destroy();
        return 1;
    }
    for (size_t i = 0; i < g.flows.size(); i++)
        Simulator::Schedule(NanoSeconds(g.flows[i].start_ns), &StartFlow, i);
    Simulator::Schedule(NanoSeconds(0), &Sample);
    Simulator::Stop(NanoSeconds(p.max_ns));
    Simulator::Run();
    clock_gettime(CLOCK_MONOTONIC, &b);
    SumQpStats();
    Report(WallSeconds(a, b));
    if (p.series)
        WriteSeries();
    if (p.flow_log)
        WriteFlowLog();
    g.flows.clear();
    g.hosts.clear();
    g.leaves.clear();
    g.spines.clear();
    Simulator::Destroy();
    return 0;
}
