#!/usr/bin/python3
"""Benchmark (not a test): perftest between two guests over tern and over Soft-RoCE (rdma_rxe
on QEMU's virtio-net) in the same run, the same guests, the same sizes and options, with the
ratio tern / rxe.

    bench/rdma.py [--runs N] [--scale F]

Measured: bandwidth (RDMA WRITE, READ and SEND at 64 KiB and 4 KiB), message rate (RDMA WRITE
of 64 B), latency (WRITE, READ, SEND of 2 B: perftest's typical and minimum), and the guests'
CPU time per byte moved in the bandwidth runs, from /proc/stat of both guests around each
client run: "kernel" is system + irq + softirq time (the RDMA stack: rxe's packet processing
and copies, tern's doorbells and interrupts), "busy" adds user time (perftest polls its
completion queue, so it fills whatever the stack leaves).

The guests run under QEMU's software emulation (TCG, no KVM) on a shared host: absolute numbers
mean little, only ratios within one run do. tern's data movement happens in the device model
(host code), Soft-RoCE's in the guest kernel.
"""

import argparse
import os
import statistics
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(TOP, "scripts"), os.path.join(TOP, "tests", "rdma")]

from harness import Cluster, Wire  # noqa: E402
import rdmatest as rt  # noqa: E402

KERNEL = ("system", "irq", "softirq")
BUSY = ("user", "nice", "system", "irq", "softirq")


def measure(target, prog, size, iters, runs):
    """Median over ``runs`` of one perftest configuration: a dict with the client's result
    row and, for bandwidth tests, CPU jiffies of both guests per MB moved."""
    c = target.cluster
    rows, kern, busy = [], [], []
    for _ in range(runs):
        snap = {}

        def before():
            snap["a"] = [rt.cpu_jiffies(n) for n in c]

        def after():
            snap["b"] = [rt.cpu_jiffies(n) for n in c]
        res, got = rt.perftest(target, prog, "-s %d -n %d" % (size, iters), timeout=900,
                               before=before, after=after)
        if not res.ok:
            raise SystemExit("bench: %s over %s failed:\n%s" % (prog, target.label,
                                                                res.diag()))
        rows.append(got[-1])
        if prog.endswith("_bw") and "a" in snap and "b" in snap:
            mb = size * iters / 1e6
            k = sum(b[f] - a[f] for a, b in zip(snap["a"], snap["b"]) for f in KERNEL)
            u = sum(b[f] - a[f] for a, b in zip(snap["a"], snap["b"]) for f in BUSY)
            kern.append(k * 10.0 / mb)     # jiffies are 10 ms (USER_HZ 100): ms per MB
            busy.append(u * 10.0 / mb)
    out = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    if kern:
        out["kernel_ms_per_mb"] = statistics.median(kern)
        out["busy_ms_per_mb"] = statistics.median(busy)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1, help="runs per measurement (median)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply every iteration count (default 1: about 10 minutes)")
    args = ap.parse_args()

    def n(x):
        return max(5, int(x * args.scale))

    # (label, program, message size, iterations, result field, unit, factor)
    plan = [
        ("WRITE bandwidth 64 KiB", "ib_write_bw", 65536, n(600), "bw_avg", "MB/s", 1),
        ("READ bandwidth 64 KiB", "ib_read_bw", 65536, n(600), "bw_avg", "MB/s", 1),
        ("SEND bandwidth 64 KiB", "ib_send_bw", 65536, n(600), "bw_avg", "MB/s", 1),
        ("WRITE bandwidth 4 KiB", "ib_write_bw", 4096, n(3000), "bw_avg", "MB/s", 1),
        ("READ bandwidth 4 KiB", "ib_read_bw", 4096, n(3000), "bw_avg", "MB/s", 1),
        ("SEND bandwidth 4 KiB", "ib_send_bw", 4096, n(3000), "bw_avg", "MB/s", 1),
        ("WRITE message rate 64 B", "ib_write_bw", 64, n(5000), "msg_rate", "k msg/s", 1e3),
        ("WRITE latency 2 B typical", "ib_write_lat", 2, n(500), "t_typical", "us", 1),
        ("READ latency 2 B typical", "ib_read_lat", 2, n(500), "t_typical", "us", 1),
        ("SEND latency 2 B typical", "ib_send_lat", 2, n(500), "t_typical", "us", 1),
    ]
    with Cluster(nodes=2, wires=[Wire("tern"), Wire("virtio")], name="bench-rdma") as c:
        targets = [rt.Target(c, "tern", 0), rt.Target(c, "rxe", 1)]
        for tg in targets:
            tg.setup()
        results = {}
        for label, prog, size, iters, field, unit, factor in plan:
            for tg in targets:
                r = measure(tg, prog, size, iters, args.runs)
                results[(label, tg.kind)] = r
                print("%-28s %-5s %10.2f %s" % (label, tg.label, r[field] * factor, unit),
                      flush=True)
            if prog.endswith("_lat"):
                for tg in targets:
                    results[(label.replace("typical", "min"), tg.kind)] = \
                        results[(label, tg.kind)]

        print("\nperftest between two guests, QEMU TCG, 1 vCPU each, %d run(s) per line "
              "(median); tern on the tern NIC, rxe on virtio-net, same guests" % args.runs)
        print("%-34s %12s %12s %10s" % ("measure", "tern", "rxe", "tern/rxe"))

        def line(name, unit, tern, rxe):
            ratio = tern / rxe if rxe else float("nan")
            print("%-34s %12.2f %12.2f %10.2f" % ("%s (%s)" % (name, unit), tern, rxe, ratio))

        for label, prog, size, iters, field, unit, factor in plan:
            tr, rr = results[(label, "tern")], results[(label, "rxe")]
            line(label, unit, tr[field] * factor, rr[field] * factor)
            if prog.endswith("_lat"):
                line(label.replace("typical", "min"), unit, tr["t_min"], rr["t_min"])
        print("\nguest CPU per MB moved (both guests, ms of CPU time per MB; lower is better)")
        print("%-34s %12s %12s %10s" % ("measure", "tern", "rxe", "tern/rxe"))
        for label, prog, size, iters, field, unit, factor in plan:
            if not prog.endswith("_bw") or size < 4096:
                continue
            tr, rr = results[(label, "tern")], results[(label, "rxe")]
            what = label.replace(" bandwidth", "")
            line(what + ": kernel", "ms/MB", tr["kernel_ms_per_mb"], rr["kernel_ms_per_mb"])
            line(what + ": busy", "ms/MB", tr["busy_ms_per_mb"], rr["busy_ms_per_mb"])


if __name__ == "__main__":
    main()
