#!/usr/bin/python3
"""Benchmark (not a test): N:1 incast in virtual time on the host, DCQCN on and off.

    bench/incast.py [--n 2,4,8,16] [--duration-us 40000] [--out DIR] [--jobs 2]
                    [--engine tern-sim|ns3] [--seeds 1,2,3,4,5] [--sweep] [--hpcc]
                    [-- extra tern-sim options, e.g. --ecn-enqueue or --cc rpg_ai_rate=80]

Runs model/build/fabric/tern-sim (built here if needed) for every N with DCQCN on (RP and NP
on priority 3, the DCQCN paper's parameters) and off (PFC only), 40 Gb/s links, and prints:
per-flow throughput over the steady state (min / mean / max, Gb/s), the aggregate, Jain's
index, the bottleneck queue (p50 / p99 in KB, and the share of samples below Kmax), the
convergence times (all flows within +-20 % of the fair share, and the Jain index of 1 ms
windows >= 0.99, each held for 5 ms), PFC pauses (XOFF frames the switch sent; the NICs
count the same frames as received pauses), CNPs sent and handled, lossless drops and
retransmissions. Documentation/fabric.rst defines every figure.

Writes to DIR (default $TERN_OUT/results/incast, $TERN_OUT defaulting to build/): incast.json
(bench/results.py; rows: tern-sim's figures of every run with n, dcqcn and queue_cdf_kb, the
steady-state queue at the percentiles 0..100), its plots incast-queue-cdf.svg (the queue's CDF
per N, DCQCN on and off) and incast-summary.svg (queue p50/p99 and XOFF against N),
incast-series-N<n>-<on|off>.json (time series), and SVG plots of the series: for every N the
bottleneck queue over time and the per-flow rates over time (measured, and DCQCN's current
rate from QUERY_QP), DCQCN on above off, plus a summary of pauses and queue percentiles
against N.
The whole matrix takes well under a minute on one core.

--hpcc also runs every N with HPCC instead of DCQCN (--hpcc on: INT in the switch, HPCC in
the NICs, PFC on): its figures go into incast.json and its queue into incast-queue-cdf.svg
and incast-summary.svg beside DCQCN's.

--seeds also runs DCQCN on with each of these RED seeds and prints the range of every figure
over them per N. --sweep also runs DCQCN on with RED at enqueue and at dequeue, Pmax 1, 5, 10
and 20 %, and prints the queue's p50 / p99 per N (Documentation/fabric.rst, "Why the queue
was above Kmax").

--engine ns3 runs the same scenario on ns-3 instead (model/build/ns3/tern-ns3-incast: the same
device model as ns-3 NetDevices and the same switch model driven by ns-3's simulator; same
options, same figures; needs libns3-dev); its files go to $TERN_OUT/results/incast-ns3
unless --out says otherwise.
"""

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostload import Others  # noqa: E402
import plots as mplots  # noqa: E402
import results as bres  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIM = os.path.join(TOP, "model", "build", "fabric", "tern-sim")
NS3 = os.path.join(TOP, "model", "build", "ns3", "tern-ns3-incast")

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39",
          "#7b4173", "#3182bd"]


def run(n, dcqcn, args, series):
    cmd = ["nice", NS3 if args.engine == "ns3" else SIM, "--n", str(n), "--dcqcn", "on" if dcqcn else "off",
           "--duration-us", str(args.duration_us), "--series", series, "--quiet"] + args.extra
    return run_json(cmd)


def run_hpcc(n, args, series):
    """HPCC instead of DCQCN, with a series file: its figures."""
    return run_json(["nice", NS3 if args.engine == "ns3" else SIM, "--n", str(n), "--hpcc",
                     "on", "--duration-us", str(args.duration_us), "--series", series,
                     "--quiet"] + args.extra)


def run_on(n, args, *opts):
    """DCQCN on without a series file, with more options: its figures."""
    return run_json(["nice", NS3 if args.engine == "ns3" else SIM, "--n", str(n), "--dcqcn",
                     "on", "--duration-us", str(args.duration_us), "--quiet"] + args.extra +
                    list(opts))


def seeds_table(sizes, args):
    """--seeds: the range over RED seeds of each figure, DCQCN on."""
    seeds = [int(x) for x in args.seeds.split(",")]
    jobs = [(n, s) for n in sizes for s in seeds]
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        res = dict(zip(jobs, ex.map(lambda j: run_on(j[0], args, "--seed", str(j[1])), jobs)))
    print("\nDCQCN on, RED seeds %s: min .. max over the seeds" % args.seeds)
    cols = (("q p99 KB", "queue_p99_kb", "%.1f"), ("q p50 KB", "queue_p50_kb", "%.1f"),
            ("total Gb/s", "total_gbps", "%.2f"), ("Jain", "jain", "%.4f"),
            ("XOFF", "switch_xoff", "%d"), ("<Kmax", "queue_below_kmax", "%.3f"))
    print(("%3s  " % "N" + "  ".join("%-16s" % c[0] for c in cols)).rstrip())
    for n in sizes:
        cells = []
        for _, key, fmt in cols:
            v = [res[(n, s)][key] for s in seeds]
            lo, hi = fmt % min(v), fmt % max(v)
            cells.append("%-16s" % (lo if lo == hi else lo + " .. " + hi))
        print(("%3d  " % n + "  ".join(cells)).rstrip())


def sweep_table(sizes, args):
    """--sweep: RED at enqueue and dequeue, Pmax 1..20 %: queue p50 / p99 per N."""
    pmaxes = (10000, 50000, 100000, 200000)
    jobs = [(w, pm, n) for w in ("enqueue", "dequeue") for pm in pmaxes for n in sizes]
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        res = dict(zip(jobs, ex.map(lambda j: run_on(j[2], args, "--ecn-" + j[0],
                                                     "--pmax-ppm", str(j[1])), jobs)))
    print("\nDCQCN on, queue p50 / p99 in KB by RED's place and Pmax; XOFF at N = %d"
          % sizes[-1])
    print("%-8s  %5s  " % ("RED", "Pmax") + "  ".join("%-14s" % ("N = %d" % n)
                                                     for n in sizes) + "  XOFF")
    for w in ("enqueue", "dequeue"):
        for pm in pmaxes:
            print("%-8s  %3d %%  " % (w, pm // 10000) + "  ".join(
                "%-14s" % ("%.1f / %.1f" % (res[(w, pm, n)]["queue_p50_kb"],
                                           res[(w, pm, n)]["queue_p99_kb"])) for n in sizes) +
                  "  %d" % res[(w, pm, sizes[-1])]["switch_xoff"])


def run_json(cmd):
    """Run one simulation; its JSON figures (exits on failure)."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr))
    return json.loads(p.stdout)


def build(subdir, target, failed):
    """make -C model/<subdir> <target>; exits with `failed` if that fails."""
    if subprocess.run(["nice", "make", "-s", "-C", os.path.join(TOP, "model", subdir),
                       target]).returncode:
        sys.exit(failed)


def run_jobs(run, jobs, args, spath):
    """run(*job, args, spath[job]) for every job, args.jobs at a time; the figures and the
    time series of every job."""
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {j: ex.submit(run, *j, args, spath[j]) for j in jobs}
        results = {j: futs[j].result() for j in jobs}
    series = {}
    for j in jobs:
        with open(spath[j]) as f:
            series[j] = json.load(f)
    return results, series


def print_wall(results):
    print("simulation wall time: %.1f s (sum over runs)"
          % sum(r["wall_s"] for r in results.values()))


# ---- SVG -------------------------------------------------------------------------------------

def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def nice_ticks(lo, hi, n=5):
    """About n round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 1
    while mag > raw:
        mag /= 10
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    t, out = (int(lo / step)) * step, []
    while t <= hi + step * 1e-9:
        if t >= lo - step * 1e-9:
            out.append(round(t, 10))
        t += step
    return out


class Plot:
    """One x/y chart of polylines (and optional horizontal reference lines)."""

    def __init__(self, title, xlabel, ylabel, w=900, h=360):
        self.title, self.xlabel, self.ylabel, self.w, self.h = title, xlabel, ylabel, w, h
        self.lines, self.hlines = [], []
        self.ymax = None        # clip the y axis here (None: fit the data)

    def line(self, xs, ys, color, label=None, width=1.2):
        self.lines.append((xs, ys, color, label, width))

    def hline(self, y, label, color="#888"):
        self.hlines.append((y, label, color))

    def svg(self, ox=0, oy=0, ymax=None):
        ml, mr, mt, mb = 70, 150, 30, 45
        pw, ph = self.w - ml - mr, self.h - mt - mb
        xs_all = [x for l in self.lines for x in l[0]] or [0, 1]
        ys_all = [y for l in self.lines for y in l[1]] + [y for y, _, _ in self.hlines]
        x0, x1 = min(xs_all), max(xs_all)
        y1 = ymax if ymax is not None else (max(ys_all) * 1.05 if ys_all else 1) or 1
        sx = lambda x: ox + ml + (x - x0) / ((x1 - x0) or 1) * pw  # noqa: E731
        sy = lambda y: oy + mt + ph - min(y, y1) / y1 * ph  # noqa: E731
        o = ['<g font-family="sans-serif" font-size="11">',
             '<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>'
             % (ox + ml, oy + 18, esc(self.title)),
             '<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#000"/>'
             % (ox + ml, oy + mt, pw, ph)]
        for t in nice_ticks(x0, x1):
            o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>'
                     % (sx(t), oy + mt, sx(t), oy + mt + ph))
            o.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>'
                     % (sx(t), oy + mt + ph + 14, t))
        for t in nice_ticks(0, y1):
            o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>'
                     % (ox + ml, sy(t), ox + ml + pw, sy(t)))
            o.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>'
                     % (ox + ml - 4, sy(t) + 4, t))
        o.append('<text x="%d" y="%d" text-anchor="middle">%s</text>'
                 % (ox + ml + pw / 2, oy + self.h - 8, esc(self.xlabel)))
        o.append('<text transform="translate(%d,%d) rotate(-90)" text-anchor="middle">%s</text>'
                 % (ox + 16, oy + mt + ph / 2, esc(self.ylabel)))
        for y, label, color in self.hlines:
            o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" '
                     'stroke-dasharray="6,4"/>' % (ox + ml, sy(y), ox + ml + pw, sy(y), color))
            o.append('<text x="%d" y="%.1f" fill="%s">%s</text>'
                     % (ox + ml + pw + 4, sy(y) + 4, color, esc(label)))
        ly = oy + mt + 10
        for xs, ys, color, label, width in self.lines:
            pts = " ".join("%.1f,%.1f" % (sx(x), sy(y)) for x, y in zip(xs, ys))
            o.append('<polyline fill="none" stroke="%s" stroke-width="%.1f" points="%s"/>'
                     % (color, width, pts))
            if label and ly < oy + mt + ph:
                o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>'
                         % (ox + ml + pw + 40, ly + 30, ox + ml + pw + 58, ly + 30, color))
                o.append('<text x="%d" y="%d">%s</text>' % (ox + ml + pw + 62, ly + 34,
                                                           esc(label)))
                ly += 14
        o.append("</g>")
        return "\n".join(o)


def write_svg(path, plots, ymax=None):
    """Plots stacked vertically in one file; a shared y range when ymax is given."""
    w = max(p.w for p in plots)
    h = sum(p.h for p in plots)
    body, y = [], 0
    for p in plots:
        body.append(p.svg(0, y, p.ymax if p.ymax is not None else ymax))
        y += p.h
    with open(path, "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
                'viewBox="0 0 %d %d">\n<rect width="100%%" height="100%%" fill="#fff"/>\n'
                '%s\n</svg>\n' % (w, h, w, h, "\n".join(body)))


def downsample(xs, ys, k):
    """Keep the maximum of every k samples (queue spikes stay visible)."""
    ox, oy = [], []
    for i in range(0, len(ys), k):
        ox.append(xs[i])
        oy.append(max(ys[i:i + k]))
    return ox, oy


def smooth(ys, k):
    """Moving average over the k samples ending at each point."""
    out, acc = [], 0.0
    for i, y in enumerate(ys):
        acc += y
        if i >= k:
            acc -= ys[i - k]
        out.append(acc / min(i + 1, k))
    return out


def plots_for(n, series, results, out):
    """queue-N<n>.svg and rates-N<n>.svg, DCQCN on above off."""
    qplots, rplots = [], []
    for dcqcn in (True, False):
        s, r = series[(n, dcqcn)], results[(n, dcqcn)]
        tag = "DCQCN %s" % ("on" if dcqcn else "off (PFC only)")
        q = s["queue_kb"]
        xs = [i * s["sample_us"] / 1000 for i in range(len(q))]
        xs, q = downsample(xs, q, max(1, len(q) // 3000))
        p = Plot("%d:1 incast, %s: bottleneck queue (p50 %.0f KB, p99 %.0f KB, %d PFC XOFF)"
                 % (n, tag, r["queue_p50_kb"], r["queue_p99_kb"], r["switch_xoff"]),
                 "time (ms)", "queue (KB)")
        p.line(xs, q, "#1f77b4", "queue")
        p.hline(s["kmax_kb"], "Kmax %.0f KB" % s["kmax_kb"], "#d62728")
        p.hline(s["kmin_kb"], "Kmin %.0f KB" % s["kmin_kb"], "#2ca02c")
        qplots.append(p)
        if dcqcn:
            # the same, y clipped at twice Kmax: the steady state under the start-up spike
            z = Plot("%d:1 incast, %s: bottleneck queue, y axis clipped at 2 x Kmax" % (n, tag),
                     "time (ms)", "queue (KB)")
            z.line(xs, q, "#1f77b4", "queue")
            z.hline(s["kmax_kb"], "Kmax %.0f KB" % s["kmax_kb"], "#d62728")
            z.hline(s["kmin_kb"], "Kmin %.0f KB" % s["kmin_kb"], "#2ca02c")
            z.ymax = 2 * s["kmax_kb"]
            qplots.append(z)
        k = max(1, int(round(1000 / s["bin_us"])))
        p = Plot("%d:1 incast, %s: per-flow throughput at the bottleneck, 1 ms moving average "
                 "(Jain %.4f)" % (n, tag, r["jain"]), "time (ms)", "Gb/s")
        for i, f in enumerate(s["flow_gbps"]):
            bx = [(b + 1) * s["bin_us"] / 1000 for b in range(len(f))]
            p.line(bx, smooth(f, k), COLORS[i % len(COLORS)], "flow %d" % (i + 1), 0.8)
        fair = r["total_gbps"] / n
        p.hline(fair, "fair %.2f" % fair, "#000")
        rplots.append(p)
        if dcqcn:
            p = Plot("%d:1 incast, DCQCN on: each QP's DCQCN rate Rc (QUERY_QP)" % n,
                     "time (ms)", "Gb/s")
            for i, f in enumerate(s["cc_rate_gbps"]):
                bx = [(b + 1) * s["bin_us"] / 1000 for b in range(len(f))]
                p.line(bx, f, COLORS[i % len(COLORS)], "QP %d" % (i + 1), 0.8)
            p.hline(fair, "fair %.2f" % fair, "#000")
            rplots.append(p)
    write_svg(os.path.join(out, "queue-N%d.svg" % n), qplots)
    write_svg(os.path.join(out, "rates-N%d.svg" % n), rplots)


def summary_plot(sizes, results, out):
    p1 = Plot("PFC XOFF frames sent by the switch (log scale: 1 + count)", "senders N",
              "log10(1 + XOFF)", 700, 300)
    p2 = Plot("Bottleneck queue in the steady state", "senders N", "KB", 700, 300)
    import math
    for dcqcn, color in ((True, "#1f77b4"), (False, "#d62728")):
        tag = "on" if dcqcn else "off"
        p1.line(sizes, [math.log10(1 + results[(n, dcqcn)]["switch_xoff"]) for n in sizes],
                color, "DCQCN " + tag, 2)
        p2.line(sizes, [results[(n, dcqcn)]["queue_p99_kb"] for n in sizes], color,
                "p99 " + tag, 2)
        p2.line(sizes, [results[(n, dcqcn)]["queue_p50_kb"] for n in sizes], color,
                "p50 " + tag, 1)
    kmax = results[(sizes[0], True)]["kmax_kb"]
    p2.hline(kmax, "Kmax", "#888")
    write_svg(os.path.join(out, "summary.svg"), [p1, p2])


# ---- table -------------------------------------------------------------------------------------

def fmt_conv(us):
    return "never" if us < 0 else "%.1f" % (us / 1000)


def table(sizes, results):
    hdr = ("N", "DCQCN", "flow Gb/s min/mean/max", "total", "Jain", "q p50", "q p99",
           "<Kmax", "conv±20%", "convJ", "XOFF", "NIC pause", "CNP sent/hdl", "drops",
           "retx")
    rows = []
    for n in sizes:
        for dcqcn in (True, False):
            r = results[(n, dcqcn)]
            f = r["flow_gbps"]
            rows.append((str(n), "on" if dcqcn else "off",
                         "%.2f/%.2f/%.2f" % (min(f), sum(f) / len(f), max(f)),
                         "%.2f" % r["total_gbps"], "%.4f" % r["jain"],
                         "%.1f" % r["queue_p50_kb"], "%.1f" % r["queue_p99_kb"],
                         "%.0f%%" % (100 * r["queue_below_kmax"]),
                         fmt_conv(r["convergence_us"]) if dcqcn else "-",
                         fmt_conv(r["jain_convergence_us"]) if dcqcn else "-",
                         str(r["switch_xoff"]), str(r["nic_rx_pause"]),
                         "%d/%d" % (r["cnp_sent"], r["cnp_handled"]),
                         str(r["lossless_drops"] + r["switch_drops"] + r["nic_rx_discards"]),
                         str(r["retrans_pkts"])))
    w = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(hdr)]
    line = lambda c: "  ".join(x.rjust(w[i]) for i, x in enumerate(c))  # noqa: E731
    print(line(hdr))
    print(line(["-" * x for x in w]))
    for row in rows:
        print(line(row))
    print("q: bottleneck queue in KB, steady state (second half), sampled every 1 us; <Kmax: "
          "share of samples below Kmax;\nconv±20%: ms until every flow stays within 20 % of "
          "the fair share (1 ms averages, held 5 ms); convJ: ms until the\nJain index of 1 ms "
          "averages stays >= 0.99 (held 5 ms); XOFF: PFC frames from the switch (incl. "
          "refreshes);\nNIC pause: pauses the NICs received; drops: switch + NIC; retx: "
          "retransmitted packets.")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", default="2,4,8,16", help="sender counts (comma separated)")
    ap.add_argument("--duration-us", type=int, default=40000)
    bres.add_out_arg(ap)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--engine", choices=("tern-sim", "ns3"), default="tern-sim",
                    help="the simulator: tern-sim's own event loop or ns-3")
    ap.add_argument("--seeds", default=None,
                    help="also DCQCN on with these RED seeds (comma separated): ranges")
    ap.add_argument("--sweep", action="store_true",
                    help="also RED at enqueue/dequeue with Pmax 1, 5, 10, 20 %%")
    ap.add_argument("--hpcc", action="store_true", help="also HPCC instead of DCQCN")
    ap.add_argument("extra", nargs="*", help="more tern-sim options (after --)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.n.split(",")]
    out = bres.out_dir("incast-ns3" if args.engine == "ns3" else "incast", args.out)
    if args.engine == "ns3":
        build("ns3", "incast", "building tern-ns3-incast failed (libns3-dev: "
              "scripts/setup-host.sh)")
    else:
        build("fabric", "sim", "building tern-sim failed")
    jobs = [(n, d) for n in sizes for d in (True, False)]
    spath = {j: os.path.join(out, "incast-series-N%d-%s.json" % (j[0], "on" if j[1] else "off"))
             for j in jobs}
    load = Others()
    load.start()
    results, series = run_jobs(run, jobs, args, spath)
    hjobs = [(n,) for n in sizes] if args.hpcc else []
    hres, hser = run_jobs(run_hpcc, hjobs, args, {
        j: os.path.join(out, "incast-series-N%d-hpcc.json" % j[0]) for j in hjobs})
    load.stop()
    r0 = results[jobs[0]]
    print("%sN:1 incast, %d Gb/s links, %d ns per link, MTU %d, %d KiB WRITEs, %.0f ms virtual "
          "(steady state from %.0f ms); RED Kmin %.0f KB Kmax %.0f KB Pmax %.0f %%%s\n"
          % ("ns-3: " if args.engine == "ns3" else "", r0["link_mbps"] / 1000, r0["delay_ns"], r0["mtu"], r0["msg_bytes"] // 1024,
             r0["duration_us"] / 1000, r0["steady_from_us"] / 1000, r0["kmin_kb"],
             r0["kmax_kb"], 100 * r0["pmax"],
             ", marking at dequeue" if r0["ecn_at_dequeue"] else ""))
    table(sizes, results)
    print(load.line())
    rows = []
    for j, r, s in [(j, results[j], series[j]) for j in jobs] + \
            [((j[0], False), hres[j], hser[j]) for j in hjobs]:
        steady = int(r["steady_from_us"] / s["sample_us"])
        rows.append(dict(r, n=j[0], dcqcn=j[1], mode="dcqcn" if j[1] else
                         "hpcc" if r.get("hpcc") else "pfc",
                         queue_cdf_kb=mplots.pct_points(s["queue_kb"][steady:])))
    doc = bres.document(
        "incast", rows, load,
        [("DCQCN on", "RP and NP on priority 3, the DCQCN paper's parameters, PFC on"),
         ("DCQCN off", "PFC only")] +
        ([("HPCC", "HPCC in the NICs, INT in the switch, its default parameters, PFC on")]
         if args.hpcc else []),
        {"engine": args.engine, "n": sizes, "duration_us": args.duration_us,
         "link_mbps": r0["link_mbps"], "delay_ns": r0["delay_ns"], "mtu": r0["mtu"],
         "msg_bytes": r0["msg_bytes"], "kmin_kb": r0["kmin_kb"], "kmax_kb": r0["kmax_kb"],
         "pmax": r0["pmax"], "ecn_at_dequeue": r0["ecn_at_dequeue"], "extra": args.extra,
         "time": "virtual (the figures do not depend on the host's load)"})
    if args.engine == "ns3":
        doc["bench"] = "incast"
    bres.save(doc, out)
    for n in sizes:
        plots_for(n, series, results, out)
    summary_plot(sizes, results, out)
    if args.seeds:
        seeds_table(sizes, args)
    if args.sweep:
        sweep_table(sizes, args)
    print("\nwrote %s/{incast.json,incast-series-*.json,queue-N*.svg,rates-N*.svg,summary.svg}"
          % out)
    print_wall(results)


if __name__ == "__main__":
    main()
