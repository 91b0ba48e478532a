#!/usr/bin/python3
"""Benchmark (not a test): the leaf-spine fabric on ns-3, PFC only against DCQCN.

    bench/fabric.py [--workloads websearch,fbhadoop] [--loads 0.3,0.5] [--duration-us 2000]
                    [--out DIR] [--jobs 2] [-- extra tern-ns3-fabric options, e.g. --seed 2]

Runs model/build/ns3/tern-ns3-fabric (built here; needs libns3-dev) on its default fabric
(4 leaves x 8 hosts, 4 spines, 2:1 oversubscribed, 40 Gb/s, 1 us links, tern's device model
in every host, the switch model with ECMP) for every workload (model/ns3/workloads/*.cdf:
the HPCC simulator's WebSearch and FB Hadoop flow sizes) and load, with DCQCN on (the DCQCN
paper's parameters) and off (PFC only), and prints a Markdown table: flows, FCT slowdown
(FCT / ideal) p50/p95/p99 over all flows and per flow-size bucket, PFC XOFFs, the p99 of the
deepest lossless queue, drops. Writes to DIR (default $TERN_OUT/bench/fabric, $TERN_OUT
defaulting to build/): fabric.json (every run's figures), fabric.md (the table), the series
(every switch port's lossless queue every 10 us and its PFC frames), and SVG plots:
slowdown-<workload>-<load>.svg (p50 and p99 slowdown per size bucket, on against off),
queue-<workload>-<load>.svg (the 8 deepest ports' queues over time, off above on) and
pauses-<workload>-<load>.svg (XOFFs each switch port sent, per port, off and on).
Documentation/fabric.rst ("tern on ns-3") defines every figure.
"""

import argparse
import json
import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "bench"))
from incast import (COLORS, Plot, build, print_wall, run_jobs, run_json,  # noqa: E402
                    write_svg)

FABRIC = os.path.join(TOP, "model", "build", "ns3", "tern-ns3-fabric")
WORKLOADS = os.path.join(TOP, "model", "ns3", "workloads")
BUCKETS = ["<10K", "10K-100K", "100K-1M", "1M-10M", ">10M"]


def run(workload, load, dcqcn, args, series):
    cmd = ["nice", FABRIC, "--workload", os.path.join(WORKLOADS, workload + ".cdf"),
           "--load", str(load), "--duration-us", str(args.duration_us),
           "--dcqcn", "on" if dcqcn else "off", "--series", series] + args.extra
    return run_json(cmd)


def md_table(jobs, results):
    hdr = ["workload", "load", "DCQCN", "flows", "slowdown p50/p95/p99"] + \
        ["%s p50/p99" % b for b in BUCKETS] + ["XOFF", "q p99 KB", "drops", "skipped"]
    out = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    for j in jobs:
        r = results[j]
        row = [j[0], "%d %%" % round(100 * j[1]), "on" if j[2] else "off", str(r["flows"]),
               "%.2f / %.2f / %.1f" % (r["slowdown_p50"], r["slowdown_p95"],
                                       r["slowdown_p99"])]
        for b in r["buckets"]:
            row.append("%.2f / %.1f" % (b["slowdown_p50"], b["slowdown_p99"])
                       if b["completed"] else "-")
        row += [str(r["switch_xoff"]), "%.0f" % r["queue_p99_kb"],
                str(r["lossless_drops"] + r["switch_drops"] + r["nic_rx_discards"]),
                str(r["flows_skipped"])]
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out)


def plots(workload, load, results, series, out):
    on, off = results[(workload, load, True)], results[(workload, load, False)]
    tag = "%s, %d %% load" % (workload, round(100 * load))
    # slowdown per bucket
    p50 = Plot("FCT slowdown p50 per flow size, " + tag, "flow size bucket (0: <10K .. 4: >10M)",
               "slowdown")
    p99 = Plot("FCT slowdown p99 per flow size, " + tag, "flow size bucket (0: <10K .. 4: >10M)",
               "slowdown")
    for r, color, label in ((off, COLORS[3], "PFC only"), (on, COLORS[0], "DCQCN")):
        xs = [i for i, b in enumerate(r["buckets"]) if b["completed"]]
        p50.line(xs, [r["buckets"][i]["slowdown_p50"] for i in xs], color, label, 2)
        p99.line(xs, [r["buckets"][i]["slowdown_p99"] for i in xs], color, label, 2)
    name = "%s-%d" % (workload, round(100 * load))
    write_svg(os.path.join(out, "slowdown-%s.svg" % name), [p50, p99])
    # the deepest ports' queues over time, off above on
    qplots = []
    for dcqcn in (False, True):
        s = series[(workload, load, dcqcn)]
        ports = sorted(s["ports"], key=lambda p: -p["max_kb"])[:8]
        q = Plot("lossless queue of the 8 deepest switch ports, %s, %s"
                 % (tag, "DCQCN" if dcqcn else "PFC only"), "time (us)", "KB")
        for i, p in enumerate(ports):
            xs = [k * s["sample_us"] for k in range(len(p["queue_kb"]))]
            q.line(xs, p["queue_kb"], COLORS[i % len(COLORS)],
                   "%s:%d->%s" % (p["switch"], p["port"], p["peer"]))
        qplots.append(q)
    write_svg(os.path.join(out, "queue-%s.svg" % name), qplots)
    # XOFFs per port
    pp = Plot("PFC XOFFs sent per switch port, " + tag, "switch port (leaves, then spines)",
              "XOFF frames")
    for dcqcn, color, label in ((False, COLORS[3], "PFC only"), (True, COLORS[0], "DCQCN")):
        s = series[(workload, load, dcqcn)]
        pp.line(list(range(len(s["ports"]))), [p["xoff_sent"] for p in s["ports"]], color,
                label, 1.5)
    write_svg(os.path.join(out, "pauses-%s.svg" % name), [pp])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workloads", default="websearch,fbhadoop")
    ap.add_argument("--loads", default="0.3,0.5")
    ap.add_argument("--duration-us", type=int, default=2000, help="flow arrivals for this long")
    ap.add_argument("--out", default=None, help="output directory")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("extra", nargs="*", help="more tern-ns3-fabric options (after --)")
    args = ap.parse_args()
    workloads = args.workloads.split(",")
    loads = [float(x) for x in args.loads.split(",")]
    out = args.out or os.path.join(os.environ.get("TERN_OUT", os.path.join(TOP, "build")),
                                   "bench", "fabric")
    os.makedirs(out, exist_ok=True)
    build("ns3", "fabric", "building tern-ns3-fabric failed (libns3-dev: "
          "scripts/setup-host.sh)")
    jobs = [(w, load, d) for w in workloads for load in loads for d in (False, True)]
    spath = {j: os.path.join(out, "series-%s-%d-%s.json" % (j[0], round(100 * j[1]),
                                                             "on" if j[2] else "off"))
             for j in jobs}
    results, series = run_jobs(run, jobs, args, spath)
    r0 = results[jobs[0]]
    md = ("Leaf-spine on ns-3: %d leaves x %d hosts, %d spines, %d Gb/s, %d ns per link; "
          "Poisson flows for %d us; slowdown = FCT / (frames at line rate + one RTT)\n\n"
          % (r0["leaves"], r0["hosts_per_leaf"], r0["spines"], r0["link_mbps"] // 1000,
             r0["delay_ns"], args.duration_us)) + md_table(jobs, results)
    print(md)
    with open(os.path.join(out, "fabric.md"), "w") as f:
        f.write(md + "\n")
    with open(os.path.join(out, "fabric.json"), "w") as f:
        json.dump([dict(results[j], workload_name=j[0]) for j in jobs], f, indent=1)
    for w in workloads:
        for load in loads:
            plots(w, load, results, series, out)
    print("\nwrote %s/{fabric.json,fabric.md,series-*.json,slowdown-*.svg,queue-*.svg,"
          "pauses-*.svg}" % out)
    print_wall(results)


if __name__ == "__main__":
    main()
