#!/usr/bin/python3
"""Benchmark (not a test): the leaf-spine fabric on ns-3, PFC only against DCQCN against HPCC.

    bench/fabric.py [--workloads websearch,fbhadoop] [--loads 0.3,0.5] [--duration-us 20000]
                    [--seeds 1,2,3,4,5] [--pattern-seeds 1,2,3,4,5] [--modes pfc,dcqcn,hpcc]
                    [--out DIR] [--jobs 2] [-- extra tern-ns3-fabric options]

Runs model/build/ns3/tern-ns3-fabric (built here; needs libns3-dev) on its default fabric
(4 leaves x 8 hosts, 4 spines, 2:1 oversubscribed, 40 Gb/s, 1 us links, tern's device model
in every host, the switch model with ECMP) for every workload (model/ns3/workloads/*.cdf:
the HPCC simulator's WebSearch and FB Hadoop flow sizes), load and seed, in three modes:
PFC only (--dcqcn off), DCQCN (the DCQCN paper's parameters) and HPCC (--hpcc on: INT on
every switch, HPCC's default parameters in the NICs). The seed draws the flows (arrival
times, sizes, destinations, UDP ports) and the switches' RED and ECMP: the three modes of a
seed run the same flows. Prints two Markdown tables: per workload, load and mode, the
median over the seeds of each run's figures (flows and skipped flows summed; slowdown =
FCT / ideal, p50/p99 over all flows and per flow-size bucket; p99 of flows under 100 KB with
its range over the seeds; PFC XOFFs summed; the deepest lossless queue's p50/p99; goodput;
drops summed), and per seed the p99 slowdown of flows under 100 KB, HPCC against DCQCN
(issue 21's goal: at most 1/3 at 50 % WebSearch). Also the pattern traffic (a permutation
of 1 MiB flows across the spines plus an 8:1 incast, started in the first 20 us) in the same
modes for every --pattern-seeds seed (empty: none): the median over the seeds of the time
the last flow ended, FCT p50, slowdown p50/p99, XOFFs, the deepest queue's p99. Every run's
checks are summed up at the end (flows completed with intact data, nothing dropped or
resent, no flow skipped, every QP pair given back and in RESET). Writes to DIR (default
$TERN_OUT/results/fabric, $TERN_OUT defaulting to build/): fabric.json (bench/results.py;
rows: every run's figures with workload_name, seed and slowdown_cdf, the slowdown of its
completed flows at the percentiles 0..100, from the run's --flow-log), its plots
fabric-slowdown-cdf.svg (the FCT-slowdown CDF per workload and load, one line per mode) and
fabric-slowdown-size.svg (p50 and p99 slowdown per flow-size bucket, the median over the
seeds), fabric.md (the tables), every run's flow log (series-*.flows), the series of the
first seed (every switch port's lossless queue
every 10 us and its PFC frames), and SVG plots of the first seed: slowdown-<workload>-<load>.svg
(p50 and p99 slowdown per size bucket, one line per mode), queue-<workload>-<load>.svg (the
8 deepest ports' queues over time, one panel per mode) and pauses-<workload>-<load>.svg
(XOFFs each switch port sent, per mode). Documentation/fabric.rst ("tern on ns-3",
"Leaf-spine") defines every figure.
"""

import argparse
import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "bench"))
from incast import (COLORS, Plot, build, print_wall, run_jobs, run_json,  # noqa: E402
                    write_svg)
from hostload import Others  # noqa: E402
import plots as mplots  # noqa: E402
import results as bres  # noqa: E402

FABRIC = os.path.join(TOP, "model", "build", "ns3", "tern-ns3-fabric")
WORKLOADS = os.path.join(TOP, "model", "ns3", "workloads")
BUCKETS = ["<10K", "10K-100K", "100K-1M", "1M-10M", ">10M"]
MODES = {"pfc": ("PFC only", ["--dcqcn", "off"]), "dcqcn": ("DCQCN", ["--dcqcn", "on"]),
         "hpcc": ("HPCC", ["--hpcc", "on"])}
MODE_COLOR = {"pfc": COLORS[3], "dcqcn": COLORS[0], "hpcc": COLORS[1]}


def run(workload, load, mode, seed, args, series):
    if workload == "pattern":
        traffic = []    # tern-ns3-fabric's default: permutation + 8:1 incast of 1 MiB
    else:
        traffic = ["--workload", os.path.join(WORKLOADS, workload + ".cdf"), "--load",
                   str(load), "--duration-us", str(args.duration_us),
                   # room for the tail: the last flows end after the arrivals
                   "--max-us", str(max(50000, args.duration_us + 40000))]
    flog = series[:-len(".json")] + ".flows"
    cmd = ["nice", FABRIC] + traffic + ["--seed", str(seed), "--series", series,
                                        "--flow-log", flog] + MODES[mode][1] + args.extra
    r = run_json(cmd)
    r["slowdown_cdf"] = mplots.pct_points(flow_slowdowns(flog))
    return r


def flow_slowdowns(path):
    """Every completed flow's slowdown (FCT / ideal) from a --flow-log file."""
    out = []
    with open(path) as f:
        for line in f:
            v = line.split()
            if v and not line.startswith("#") and int(v[4]) > 0 and float(v[5]) > 0:
                out.append(int(v[4]) / float(v[5]))
    return out


def run_ok(r):
    """What every run must show: its failures as text (empty: none)."""
    bad = []
    if not (r["completed"] == r["flows"] and r["write_errors"] == 0 and r["data_ok"]):
        bad.append("%d of %d flows completed intact" % (r["completed"], r["flows"]))
    drops = r["lossless_drops"] + r["switch_drops"] + r["nic_rx_discards"] + r["no_route"]
    if drops or r["retrans_pkts"] or r["ack_timeouts"]:
        bad.append("%d drops, %d resent" % (drops, r["retrans_pkts"]))
    if r["flows_skipped"]:
        bad.append("%d flows skipped" % r["flows_skipped"])
    if r["qp_busy_end"] or r["qp_not_reset_end"] or r["qp_reset_fails"] or \
            r["qp_resets"] != r["qp_binds"]:
        bad.append("QP pairs not all given back")
    return bad


def checks(results):
    """One line per failed run, or one line saying that every run passed."""
    out = []
    for j, r in sorted(results.items(), key=lambda x: str(x[0])):
        bad = run_ok(r)
        if bad:
            out.append("FAILED %s %s %s seed %d: %s" % (j[0], j[1], j[2], j[3], "; ".join(bad)))
    if out:
        return "\n".join(out)
    rs = list(results.values())
    return ("every run (%d): every flow completed with its data intact (%d flows), nothing "
            "dropped or resent, none skipped; at most %d flows sent by one host, on at most %d "
            "QPs per host and side (%d QP bindings, each given back by MODIFY_QP to RESET; "
            "none left bound or outside RESET)"
            % (len(rs), sum(r["flows"] for r in rs), max(r["flows_per_host_max"] for r in rs),
               max(r["qp_ends_max"] for r in rs), sum(r["qp_binds"] for r in rs)))


def med(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def md_table(cells, results, seeds):
    hdr = ["workload", "load", "mode", "flows", "skipped", "slowdown p50/p99"] + \
        ["%s p50/p99" % b for b in BUCKETS] + \
        ["<100K p99 (min..max)", "XOFF", "q p50/p99 KB", "Gb/s", "drops"]
    out = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    for (w, load, mode) in cells:
        rs = [results[(w, load, mode, s)] for s in seeds]
        row = [w, "%d %%" % round(100 * load), MODES[mode][0],
               str(sum(r["flows"] for r in rs)), str(sum(r["flows_skipped"] for r in rs)),
               "%.2f / %.1f" % (med([r["slowdown_p50"] for r in rs]),
                                med([r["slowdown_p99"] for r in rs]))]
        for i in range(len(BUCKETS)):
            bs = [r["buckets"][i] for r in rs if r["buckets"][i]["completed"]]
            row.append("%.2f / %.1f" % (med([b["slowdown_p50"] for b in bs]),
                                        med([b["slowdown_p99"] for b in bs])) if bs else "-")
        sp = [r["small_slowdown_p99"] for r in rs]
        row += ["%.1f (%.1f..%.1f)" % (med(sp), min(sp), max(sp)),
                str(sum(r["switch_xoff"] for r in rs)),
                "%.0f / %.0f" % (med([r["queue_p50_kb"] for r in rs]),
                                 med([r["queue_p99_kb"] for r in rs])),
                "%.1f" % med([r["goodput_gbps"] for r in rs]),
                str(sum(r["lossless_drops"] + r["switch_drops"] + r["nic_rx_discards"]
                        for r in rs))]
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out)


def goal_table(workloads, loads, results, seeds):
    """Per seed: p99 slowdown of flows under 100 KB, HPCC over DCQCN (issue 21)."""
    out = ["| workload | load | seed | flows < 100 KB | DCQCN <100K p99 | HPCC <100K p99 | "
           "HPCC / DCQCN |", "|---|---|---|---|---|---|---|"]
    for w in workloads:
        for load in loads:
            for s in seeds:
                d = results[(w, load, "dcqcn", s)]["small_slowdown_p99"]
                h = results[(w, load, "hpcc", s)]["small_slowdown_p99"]
                out.append("| %s | %d %% | %d | %d | %.2f | %.2f | %.2f |"
                           % (w, round(100 * load), s,
                              results[(w, load, "hpcc", s)]["small_flows"], d, h,
                              h / d if d else float("nan")))
    return "\n".join(out)


def pattern_table(modes, results, seeds):
    """The pattern traffic per mode: the median over the seeds (XOFFs and drops summed)."""
    hdr = ["mode", "flows", "all done us (min..max)", "FCT p50 us", "slowdown p50",
           "slowdown p99", "XOFF", "q p99 KB", "drops"]
    out = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    for mode in modes:
        rs = [results[("pattern", 0.0, mode, s)] for s in seeds]
        done = [r["all_done_us"] for r in rs]
        out.append("| " + " | ".join([
            MODES[mode][0], str(sum(r["flows"] for r in rs)),
            "%.0f (%.0f..%.0f)" % (med(done), min(done), max(done)),
            "%.0f" % med([r["fct_us_p50"] for r in rs]),
            "%.2f" % med([r["slowdown_p50"] for r in rs]),
            "%.2f" % med([r["slowdown_p99"] for r in rs]),
            str(sum(r["switch_xoff"] for r in rs)),
            "%.0f" % med([r["queue_p99_kb"] for r in rs]),
            str(sum(r["lossless_drops"] + r["switch_drops"] + r["nic_rx_discards"]
                    for r in rs))]) + " |")
    return "\n".join(out)


def plots(workload, load, modes, seed, results, series, out):
    tag = "%s, %d %% load, seed %d" % (workload, round(100 * load), seed)
    # slowdown per bucket
    p50 = Plot("FCT slowdown p50 per flow size, " + tag, "flow size bucket (0: <10K .. 4: >10M)",
               "slowdown")
    p99 = Plot("FCT slowdown p99 per flow size, " + tag, "flow size bucket (0: <10K .. 4: >10M)",
               "slowdown")
    for mode in modes:
        r = results[(workload, load, mode, seed)]
        xs = [i for i, b in enumerate(r["buckets"]) if b["completed"]]
        p50.line(xs, [r["buckets"][i]["slowdown_p50"] for i in xs], MODE_COLOR[mode],
                 MODES[mode][0], 2)
        p99.line(xs, [r["buckets"][i]["slowdown_p99"] for i in xs], MODE_COLOR[mode],
                 MODES[mode][0], 2)
    name = "%s-%d" % (workload, round(100 * load))
    write_svg(os.path.join(out, "slowdown-%s.svg" % name), [p50, p99])
    # the deepest ports' queues over time, one panel per mode
    qplots = []
    for mode in modes:
        s = series[(workload, load, mode, seed)]
        ports = sorted(s["ports"], key=lambda p: -p["max_kb"])[:8]
        q = Plot("lossless queue of the 8 deepest switch ports, %s, %s"
                 % (tag, MODES[mode][0]), "time (us)", "KB")
        for i, p in enumerate(ports):
            xs = [k * s["sample_us"] for k in range(len(p["queue_kb"]))]
            q.line(xs, p["queue_kb"], COLORS[i % len(COLORS)],
                   "%s:%d->%s" % (p["switch"], p["port"], p["peer"]))
        qplots.append(q)
    write_svg(os.path.join(out, "queue-%s.svg" % name), qplots)
    # XOFFs per port
    pp = Plot("PFC XOFFs sent per switch port, " + tag, "switch port (leaves, then spines)",
              "XOFF frames")
    for mode in modes:
        s = series[(workload, load, mode, seed)]
        pp.line(list(range(len(s["ports"]))), [p["xoff_sent"] for p in s["ports"]],
                MODE_COLOR[mode], MODES[mode][0], 1.5)
    write_svg(os.path.join(out, "pauses-%s.svg" % name), [pp])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workloads", default="websearch,fbhadoop")
    ap.add_argument("--loads", default="0.3,0.5")
    ap.add_argument("--duration-us", type=int, default=20000, help="flow arrivals for this long")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--pattern-seeds", default="1,2,3,4,5", help="the pattern traffic's seeds "
                    "(empty: no pattern runs)")
    ap.add_argument("--modes", default="pfc,dcqcn,hpcc")
    bres.add_out_arg(ap)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("extra", nargs="*", help="more tern-ns3-fabric options (after --)")
    args = ap.parse_args()
    workloads = args.workloads.split(",")
    loads = [float(x) for x in args.loads.split(",")]
    seeds = [int(x) for x in args.seeds.split(",")]
    pseeds = [int(x) for x in args.pattern_seeds.split(",") if x]
    modes = args.modes.split(",")
    if any(m not in MODES for m in modes) or not seeds:
        sys.exit("--modes: some of %s; --seeds: at least one" % ",".join(MODES))
    out = bres.out_dir("fabric", args.out)
    build("ns3", "fabric", "building tern-ns3-fabric failed (libns3-dev: "
          "scripts/setup-host.sh)")
    cells = [(w, load, m) for w in workloads for load in loads for m in modes]
    jobs = [c + (s,) for c in cells for s in seeds]
    pjobs = [("pattern", 0.0, m, s) for m in modes for s in pseeds]
    jobs += pjobs
    spath = {j: os.path.join(out, "series-%s-%d-%s-%d.json" % (j[0], round(100 * j[1]), j[2],
                                                                j[3]))
             for j in jobs}
    load = Others()
    load.start()
    results, series = run_jobs(run, jobs, args, spath)
    load.stop()
    r0 = results[jobs[0]]
    md = ("Leaf-spine on ns-3: %d leaves x %d hosts, %d spines, %d Gb/s, %d ns per link; "
          "Poisson flows for %d us, seeds %s (the median over the seeds); slowdown = FCT / "
          "(frames at line rate + one RTT)\n\n"
          % (r0["leaves"], r0["hosts_per_leaf"], r0["spines"], r0["link_mbps"] // 1000,
             r0["delay_ns"], args.duration_us, ",".join(map(str, seeds)))) + \
        md_table(cells, results, seeds)
    if "dcqcn" in modes and "hpcc" in modes:
        md += "\n\n" + goal_table(workloads, loads, results, seeds)
    if pjobs:
        md += ("\n\nThe pattern traffic (%d flows of 1 MiB: a permutation across the spines "
               "and an 8:1 incast), seeds %s:\n\n"
               % (results[pjobs[0]]["flows"], ",".join(map(str, pseeds)))) + \
            pattern_table(modes, results, pseeds)
    md += "\n\n" + checks(results)
    print(md)
    with open(os.path.join(out, "fabric.md"), "w") as f:
        f.write(md + "\n")
    print(load.line())
    doc = bres.document(
        "fabric", [dict(results[j], workload_name=j[0], seed=j[3]) for j in jobs], load,
        [(MODES[m][0], " ".join(MODES[m][1]) + " (tern-ns3-fabric options)") for m in modes],
        {"workloads": workloads, "loads": loads, "duration_us": args.duration_us,
         "seeds": seeds, "pattern_seeds": pseeds, "extra": args.extra,
         "leaves": r0["leaves"], "hosts_per_leaf": r0["hosts_per_leaf"],
         "spines": r0["spines"], "link_mbps": r0["link_mbps"], "delay_ns": r0["delay_ns"],
         "time": "virtual, ns-3 (the figures do not depend on the host's load)"},
        notes=[x for x in checks(results).splitlines() if x.startswith("FAILED")])
    bres.save(doc, out)
    first = {j: series[j] for j in jobs if j[3] == seeds[0] and j[0] != "pattern"}
    for w in workloads:
        for load in loads:
            plots(w, load, modes, seeds[0], results, first, out)
    print("\nwrote %s/{fabric.json,fabric.md,series-*.json,slowdown-*.svg,queue-*.svg,"
          "pauses-*.svg}" % out)
    print_wall(results)


if __name__ == "__main__":
    main()
