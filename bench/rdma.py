#!/usr/bin/python3
"""Benchmark (not a test): perftest between two guests over tern and over Soft-RoCE (rdma_rxe
on QEMU's virtio-net), interleaved in the same guests and run, steady state, with tern / rxe.

    bench/rdma.py [--runs N] [--seconds S] [--quick] [--out DIR]

Bandwidth and message rate: ib_write_bw, ib_read_bw and ib_send_bw for a fixed time (perftest
-D, --seconds each, 5 by default) at 2 B, 64 B, 4 KiB, 64 KiB and 1 MiB, so that start-up does
not count and the slow transport runs as long as the fast one. Latency: ib_*_lat at 2 B,
64 B, 4 KiB and 64 KiB, perftest's typical (median) and 99th percentile. Guest CPU per MB in
the bandwidth runs, from /proc/stat of both guests around each client run: "kernel" is system
+ irq + softirq time (the RDMA stack: rxe's packet processing and copies; tern's doorbells and
interrupts), "busy" adds user time (perftest polls its CQ and fills whatever the stack leaves).

Every measurement runs --runs times (3), tern and rxe one after the other each time (the
order alternating by run), and the table shows medians with the range. The host's load and the
CPU other work used meanwhile are printed under the table; a run where other work took more
than half a core is flagged NOISY. --quick: bandwidth at 64 B and 64 KiB, latency at 2 B only
(the sizes tern's speed goals name; about 10 minutes with 3 runs, the full plan about 35).

The guests run under QEMU's software emulation (TCG, no KVM) on a shared host: absolute
numbers mean little, the ratios within one run do. tern's data movement happens in the device
model (host code), Soft-RoCE's on the guest's emulated CPU.

Writes rdma.json (bench/results.py; rows: {kind: bw|lat, op, size, peer: tern|rxe, runs: every
run's figures}) and the plots rdma-bandwidth.svg (MB/s and messages/s against message size)
and rdma-latency.svg (typical and 99th percentile) to --out (default build/results/rdma).
"""

import argparse
import json
import os
import statistics
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(TOP, "scripts"), os.path.join(TOP, "tests", "rdma"),
                os.path.dirname(os.path.abspath(__file__))]

from harness import Cluster, Wire  # noqa: E402
import rdmatest as rt  # noqa: E402
from hostload import Others  # noqa: E402
import results  # noqa: E402

KERNEL = ("system", "irq", "softirq")
BUSY = ("user", "nice", "system", "irq", "softirq")
OPS = ("write", "read", "send")
BW_SIZES = (2, 64, 4096, 65536, 1 << 20)
LAT_SIZES = (2, 64, 4096, 65536)
QUICK_BW, QUICK_LAT = (64, 65536), (2,)
LAT_ITERS = {2: 200, 64: 200, 4096: 100, 65536: 50}


def size_str(n):
    return "%d MiB" % (n >> 20) if n >= 1 << 20 else "%d KiB" % (n >> 10) if n >= 1024 \
        else "%d B" % n


def one(target, kind, op, size, seconds):
    """One perftest run: a dict of figures, or {"why": ...} when it failed."""
    c = target.cluster
    snap = {}

    def before():
        snap["a"] = [rt.cpu_jiffies(n) for n in c]

    def after():
        snap["b"] = [rt.cpu_jiffies(n) for n in c]

    if kind == "bw":
        opts = "-s %d -D %d" % (size, seconds)
        timeout = seconds + 300
    else:
        opts = "-s %d -n %d" % (size, LAT_ITERS[size])
        timeout = 600
    res, rows = rt.perftest(target, "ib_%s_%s" % (op, kind), opts, timeout=timeout,
                            before=before, after=after)
    if not res.ok:
        return {"why": (res.diag() or "failed").splitlines()[0]}
    r = rows[-1]
    if kind == "lat":
        return {"typical": r["t_typical"], "p99": r["p99"]}
    out = {"mbs": r["bw_avg"], "msgs": r["msg_rate"] * 1e6}
    mb = r["bw_avg"] * seconds
    if "a" in snap and "b" in snap and mb > 0:
        d = [{f: b[f] - a[f] for f in b} for a, b in zip(snap["a"], snap["b"])]
        # jiffies are 10 ms (USER_HZ 100): ms of CPU per MB moved
        out["kernel"] = sum(x[f] for x in d for f in KERNEL) * 10.0 / mb
        out["busy"] = sum(x[f] for x in d for f in BUSY) * 10.0 / mb
    return out


def med(runs, key):
    """(median, min, max) of ``key`` over the runs that have it; None if none has."""
    v = [r[key] for r in runs if key in r]
    return (statistics.median(v), min(v), max(v)) if v else None


def cell(m, fmt):
    if m is None:
        return "failed"
    return ("%s (%s..%s)" % (fmt, fmt, fmt)) % m


def ratio(a, b):
    return a[0] / b[0] if a and b and b[0] else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per measurement (median, range)")
    ap.add_argument("--seconds", type=int, default=5, help="seconds per bandwidth run (-D)")
    ap.add_argument("--quick", action="store_true",
                    help="bandwidth at 64 B and 64 KiB, latency at 2 B only")
    results.add_out_arg(ap)
    args = ap.parse_args()
    bw_sizes, lat_sizes = (QUICK_BW, QUICK_LAT) if args.quick else (BW_SIZES, LAT_SIZES)
    plan = [("bw", op, s) for s in bw_sizes for op in OPS] + \
           [("lat", op, s) for s in lat_sizes for op in OPS]
    res = {(k, op, s, t): [] for k, op, s in plan for t in ("tern", "rxe")}

    with Cluster(nodes=2, wires=[Wire("tern"), Wire("virtio")], name="bench-rdma") as c:
        targets = [rt.Target(c, "tern", 0), rt.Target(c, "rxe", 1)]
        for tg in targets:
            tg.setup()
        load = Others(c)
        load.start()
        for run in range(args.runs):
            for kind, op, size in plan:
                for tg in (targets if run % 2 == 0 else targets[::-1]):
                    r = one(tg, kind, op, size, args.seconds)
                    res[(kind, op, size, tg.kind)].append(r)
                    print("# run %d %-5s %s %-7s %s" % (run + 1, tg.kind, kind, op,
                                                        size_str(size)),
                          json.dumps(r), file=sys.stderr, flush=True)
        load.stop()

    print("perftest between two guests (QEMU TCG, 1 vCPU each): tern on the tern NIC, rxe "
          "on virtio-net, same guests, interleaved; medians of %d runs (min..max); "
          "bandwidth runs of %d s (-D)" % (args.runs, args.seconds))
    print()
    print("| op, size | tern MB/s | rxe MB/s | tern / rxe | tern msg/s | rxe msg/s | "
          "tern / rxe | CPU ms/MB tern, kernel / busy | rxe, kernel / busy |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind, op, size in plan:
        if kind != "bw":
            continue
        t, x = res[("bw", op, size, "tern")], res[("bw", op, size, "rxe")]
        mt, mx = med(t, "mbs"), med(x, "mbs")
        rt_, rx_ = med(t, "msgs"), med(x, "msgs")
        cpu = []
        for runs in (t, x):
            k, b = med(runs, "kernel"), med(runs, "busy")
            cpu.append("%.2f / %.2f" % (k[0], b[0]) if k and b else "-")
        print("| %s %s | %s | %s | %.2f | %s | %s | %.2f | %s | %s |" % (
            op.upper(), size_str(size), cell(mt, "%.2f"), cell(mx, "%.2f"), ratio(mt, mx),
            cell(rt_, "%.0f"), cell(rx_, "%.0f"), ratio(rt_, rx_), cpu[0], cpu[1]))
    print()
    print("| op, size | tern typical us | tern p99 us | rxe typical us | rxe p99 us | "
          "tern / rxe typical |")
    print("|---|---|---|---|---|---|")
    for kind, op, size in plan:
        if kind != "lat":
            continue
        t, x = res[("lat", op, size, "tern")], res[("lat", op, size, "rxe")]
        print("| %s %s | %s | %s | %s | %s | %.2f |" % (
            op.upper(), size_str(size), cell(med(t, "typical"), "%.0f"),
            cell(med(t, "p99"), "%.0f"), cell(med(x, "typical"), "%.0f"),
            cell(med(x, "p99"), "%.0f"), ratio(med(t, "typical"), med(x, "typical"))))
    failed = ["%s %s %s %s: %s" % (k, op, size_str(s), tk, r["why"])
              for (k, op, s, tk), runs in res.items() for r in runs if "why" in r]
    print()
    print(load.line())
    for f in failed:
        print("failed run: %s" % f)

    def goal(name, vals, want, at_most=False):
        ok = all(v == v and (v <= want if at_most else v >= want) for v in vals)
        return "%s: %s (goal %s %g): %s" % (name, " / ".join("%.2f" % v for v in vals),
                                          "<=" if at_most else ">=", want,
                                          "met" if ok else "NOT met")

    def r(kind, op, size, key):
        return ratio(med(res[(kind, op, size, "tern")], key),
                     med(res[(kind, op, size, "rxe")], key))
    print("tern's speed goals, tern / rxe, WRITE / READ / SEND:")
    print("  " + goal("bandwidth at 64 KiB", [r("bw", op, 65536, "mbs") for op in OPS], 10))
    print("  " + goal("message rate at 64 B", [r("bw", op, 64, "msgs") for op in OPS], 5))
    if 2 in lat_sizes:
        print("  " + goal("latency at 2 B", [r("lat", op, 2, "typical") for op in OPS], 0.5,
                          at_most=True))
    rows = [{"kind": k, "op": op, "size": s, "peer": tk, "runs": runs}
            for (k, op, s, tk), runs in res.items()]
    doc = results.document(
        "rdma", rows, load,
        [("tern", "tern NIC (device model in QEMU), guest kernel driver and provider"),
         ("rxe", "Soft-RoCE (rdma_rxe) on QEMU's virtio-net, the same guests")],
        {"runs": args.runs, "seconds": args.seconds, "quick": args.quick,
         "bw_sizes": list(bw_sizes), "lat_sizes": list(lat_sizes),
         "lat_iters": LAT_ITERS, "guests": "2 x QEMU TCG, 1 vCPU"},
        kernel=results.guest_kernel(), notes=["failed run: " + f for f in failed])
    results.save(doc, results.out_dir("rdma", args.out))


if __name__ == "__main__":
    main()
