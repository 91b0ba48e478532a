#!/usr/bin/python3
"""Benchmark (not a test): N:1 incast without PFC, go-back-N against selective repeat.

    bench/nopfc.py [--n 2,4,8,16] [--buffers 262144,65536] [--flow-mib 8] [--seed 1]
                   [--out DIR] [--jobs 2] [--docs] [-- extra tern-sim options]

Runs model/build/fabric/tern-sim (built here if needed) with PFC off in the switch and the
NICs (--pfc-mask 0: a full shared buffer drops), DCQCN on with the defaults
(Documentation/fabric.rst), every sender one RC flow of --flow-mib MiB (64 KiB WRITEs, 8
posted) that starts at time 0, the QPs' ACK timeout 524 us (--ack-timeout 7), once in
go-back-N and once in selective repeat (--sr on), for every N and switch buffer. A run ends
when every flow has completed (or failed: retry_cnt exhausted), at most after 400 ms.

Prints, per run: goodput (the bytes of every WRITE completed OK over the time the last flow
ended), each
flow's completion time (fastest / median / slowest, and the ideal: all N flows back to back
at line rate), switch drops, request packets sent again (all of them, and of those the
tail-loss probes), retransmit timeouts, flows that failed, and whether every completed WRITE
left its data intact. Documentation/fabric.rst ("N:1 incast without PFC") defines them.

Writes to DIR (default $TERN_OUT/results/nopfc, $TERN_OUT defaulting to build/): nopfc.json
(bench/results.py; rows: every run's figures with buffer, n and mode; fct: each flow's
completion time in ms, sorted), nopfc.svg (the median and slowest completion time over the
ideal against N, per buffer) and one SVG per buffer (nopfc-<KiB>K.svg): completion times
against N, packets resent against N, and the completion time of each flow at the largest N.
--docs also prints the table as reStructuredText and copies the JSON and the SVGs to
Documentation/figures/nopfc/.
"""

import argparse
import math
import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from incast import SIM, TOP, Plot, build, run_json, write_svg  # noqa: E402
from hostload import Others  # noqa: E402
import results as bres  # noqa: E402

LINE_OVERHEAD = 82      # bytes per MTU-sized packet: headers, ICRC, FCS, preamble and IFG
MODES = (("GBN", "off"), ("SR", "on"))


def run(buf, n, sr, args):
    cmd = ["nice", SIM, "--n", str(n), "--flow-bytes", str(args.flow_mib << 20),
           "--pfc-mask", "0", "--buffer", str(buf), "--sr", sr, "--ack-timeout", "7",
           "--seed", str(args.seed), "--duration-us", "400000", "--quiet"] + args.extra
    return run_json(cmd)


def figures(r, n, flow_bytes):
    """The row's numbers from one run's JSON."""
    done = sorted(x / 1000 for x in r["fct_us"] if x >= 0)
    mtu = r["mtu"]
    ideal = n * flow_bytes * (mtu + LINE_OVERHEAD) / mtu * 8 / (r["link_mbps"] * 1e3)
    return {
        # WRITEs completed OK (all of msg_bytes: --flow-mib is a multiple of 64 KiB)
        "goodput": (r["writes_completed"] - r["write_errors"]) * r["msg_bytes"] * 8
        / (r["run_us"] * 1e3),
        "fct": done, "ideal_ms": ideal,
        "failed": n - len(done),
        "drops": r["switch_drops"], "resent": r["retrans_pkts"],
        "probes": r["tail_loss_probes"], "rto": r["ack_timeouts"],
        # every flow that completed a WRITE holds its data (-1: none completed, all failed)
        "data": all(d != 0 for d in r["flow_data"]),
    }


def fct_cells(f):
    if not f["fct"]:
        return "-", "-", "-"
    d = f["fct"]
    slow = "%.2f" % d[-1] + ("+" if f["failed"] else "")
    return "%.2f" % d[0], "%.2f" % d[len(d) // 2], slow


def rows(bufs, sizes, figs):
    out = []
    for buf in bufs:
        for n in sizes:
            for mode, _ in MODES:
                f = figs[(buf, n, mode)]
                a, m, z = fct_cells(f)
                out.append(["%d K" % (buf // 1024), str(n), mode, "%.2f" % f["goodput"],
                             "%.2f" % f["ideal_ms"], a, m, z, str(f["failed"]),
                             str(f["drops"]), str(f["resent"]), str(f["probes"]),
                             str(f["rto"]), "yes" if f["data"] else "NO"])
    return out


HDR = ["buffer", "N", "mode", "goodput Gb/s", "ideal ms", "FCT min ms", "median ms",
       "max ms", "failed", "drops", "resent", "probes", "RTO", "data"]


def print_text(table):
    w = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(HDR)]
    line = lambda c: "  ".join(x.rjust(w[i]) for i, x in enumerate(c))  # noqa: E731
    print(line(HDR))
    print(line(["-" * x for x in w]))
    for r in table:
        print(line(r))


def print_rst(table):
    hdr = [["buffer", "N", "mode", "goodput", "ideal", "FCT min", "median", "max", "failed",
            "drops", "resent", "probes", "RTO", "data"],
           ["", "", "", "Gb/s", "ms", "ms", "ms", "ms", "", "", "", "", "", ""]]
    w = [max(len(h[i]) for h in hdr + table) for i in range(len(HDR))]
    sep = "  ".join("=" * x for x in w)
    fmt = lambda c: "  ".join(x.ljust(w[i]) for i, x in enumerate(c)).rstrip()  # noqa: E731
    print(sep)
    for h in hdr:
        print(fmt(h))
    print(sep)
    for r in table:
        print(fmt(r))
    print(sep)


def plot(buf, sizes, figs, results, out, flow_bytes):
    top = 2 * max(figs[(buf, n, "GBN")]["ideal_ms"] for n in sizes)
    clip = any(f["fct"] and f["fct"][-1] > top for k, f in figs.items() if k[0] == buf)
    p1 = Plot("N:1 incast, no PFC, %d KiB buffer, DCQCN on: flow completion times "
              "(%d MiB each)%s" % (buf // 1024, flow_bytes >> 20,
                                   ", clipped at %.0f ms" % top if clip else ""),
              "senders N", "ms")
    if clip:
        p1.ymax = top
    p2 = Plot("Request packets sent again, and switch drops (log scale: 1 + count)",
              "senders N", "log10(1 + packets)")
    colors = {"GBN": "#d62728", "SR": "#1f77b4"}
    for mode, _ in MODES:
        c = colors[mode]
        ok = [n for n in sizes if figs[(buf, n, mode)]["fct"]]
        p1.line(ok, [figs[(buf, n, mode)]["fct"][-1] for n in ok], c, mode + " slowest", 2)
        p1.line(ok, [figs[(buf, n, mode)]["fct"][len(figs[(buf, n, mode)]["fct"]) // 2]
                     for n in ok], c, mode + " median", 1)
        p2.line(sizes, [math.log10(1 + figs[(buf, n, mode)]["resent"]) for n in sizes], c,
                mode + " resent", 2)
        p2.line(sizes, [math.log10(1 + figs[(buf, n, mode)]["drops"]) for n in sizes], c,
                mode + " drops", 1)
    p1.line(sizes, [figs[(buf, n, "GBN")]["ideal_ms"] for n in sizes], "#888", "ideal", 1)
    n = sizes[-1]
    p3 = Plot("N = %d: each flow's completion time, fastest to slowest (failed flows left out)"
              % n, "flow (by completion)", "ms")
    for mode, _ in MODES:
        d = figs[(buf, n, mode)]["fct"]
        if d:
            p3.line(list(range(1, len(d) + 1)), d, colors[mode], "%s (%d failed)"
                    % (mode, figs[(buf, n, mode)]["failed"]), 2)
    p3.hline(figs[(buf, n, "GBN")]["ideal_ms"], "ideal", "#888")
    path = os.path.join(out, "nopfc-%dK.svg" % (buf // 1024))
    write_svg(path, [p1, p2, p3])
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", default="2,4,8,16", help="sender counts (comma separated)")
    ap.add_argument("--buffers", default="262144,65536", help="switch buffers, bytes")
    ap.add_argument("--flow-mib", type=int, default=8, help="each flow's size, MiB")
    ap.add_argument("--seed", type=int, default=1, help="RED's seed")
    bres.add_out_arg(ap)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--docs", action="store_true",
                    help="print the RST table, copy the SVGs to Documentation/figures")
    ap.add_argument("extra", nargs="*", help="more tern-sim options (after --)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.n.split(",")]
    bufs = [int(x) for x in args.buffers.split(",")]
    if args.flow_mib < 1 or not sizes or not bufs:
        sys.exit("--flow-mib, --n and --buffers must not be empty or 0")
    flow_bytes = args.flow_mib << 20
    out = bres.out_dir("nopfc", args.out)
    build("fabric", "sim", "building tern-sim failed")
    load = Others()
    load.start()
    jobs = [(b, n, m) for b in bufs for n in sizes for m in MODES]
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {j: ex.submit(run, j[0], j[1], j[2][1], args) for j in jobs}
        results = {(b, n, m[0]): futs[(b, n, m)].result() for b, n, m in jobs}
    load.stop()
    figs = {k: figures(r, k[1], flow_bytes) for k, r in results.items()}
    r0 = next(iter(results.values()))
    print("N:1 incast without PFC (the switch drops), DCQCN on, %d Gb/s links, MTU %d, "
          "%d MiB per flow in %d KiB WRITEs, ACK timeout 524 us, seed %d\n"
          % (r0["link_mbps"] // 1000, r0["mtu"], args.flow_mib, r0["msg_bytes"] // 1024,
             args.seed))
    table = rows(bufs, sizes, figs)
    print_text(table)
    print("\ngoodput: bytes of WRITEs completed OK / the run's end; ideal: N flows back to "
          "back at line rate;\nFCT: each flow's completion time (+: some flow failed); "
          "resent: request packets sent again,\nprobes among them; RTO: retransmit timeouts; "
          "data: every completed WRITE intact.")
    print(load.line())
    paths = [plot(b, sizes, figs, results, out, flow_bytes) for b in bufs]
    data = [dict(figs[k], buffer=k[0], n=k[1], mode=k[2],
                 **{x: results[k][x] for x in ("writes_completed", "write_errors", "run_us",
                                               "msg_bytes", "mtu", "link_mbps",
                                               "tail_loss_probes", "ack_timeouts")})
            for k in results]
    doc = bres.document(
        "nopfc", data, load,
        [("GBN", "go-back-N (tern-sim --sr off)"), ("SR", "selective repeat (--sr on)")],
        {"n": sizes, "buffers": bufs, "flow_mib": args.flow_mib, "seed": args.seed,
         "pfc": "off (--pfc-mask 0)", "dcqcn": "on", "ack_timeout": "7 (524 us)",
         "extra": args.extra, "time": "virtual (the figures do not depend on the host's load)"})
    paths += bres.save(doc, out)
    if args.docs:
        print()
        print_rst(table)
        dst = os.path.join(TOP, "Documentation", "figures", "nopfc")
        os.makedirs(dst, exist_ok=True)
        for p in paths:
            shutil.copy(p, dst)
    print("\nwrote %s/{nopfc.json,nopfc-*.svg}%s" % (out, " and Documentation/figures/nopfc/"
                                                      if args.docs else ""))
    print("simulation wall time: %.1f s (sum over runs)"
          % sum(r["wall_s"] for r in results.values()))
    bad = [k for k, f in figs.items() if not f["data"]]
    if bad:
        sys.exit("data NOT intact in %s" % bad)


if __name__ == "__main__":
    main()
