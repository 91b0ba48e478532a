#!/usr/bin/python3
"""Benchmark (not a test): where a small RDMA WRITE's time goes between the requester's
doorbell and the peer, in QEMU, with the doorbell run inline (in the vCPU's MMIO write) and
through the main loop's bottom half, in the same guests.

    bench/d2w.py [--runs N] [--iters N] [--no-trace] [--bw SECONDS] [--out DIR]

Two guests joined by two tern wires: wire 0's NICs run the model in the doorbell's MMIO write
(doorbell-inline=on, the default), wire 1's through a bottom half (doorbell-inline=off, the
path before). Each run does ib_write_lat -s 2 -n --iters on each wire, the order alternating,
and the table gives perftest's typical latency (median of the runs, range). --bw S adds
ib_write_bw and ib_send_bw at 64 B (message rate) and ib_write_bw at 64 KiB (bandwidth) for
S seconds each (perftest -D), both paths, the same alternation: what running the model in the
vCPU's thread costs or gains where the guest and the device used to work in parallel.

With tracing (the default) the QEMU processes log the adapter's trace events
(model/qemu/trace-events: tern_db_write, tern_run, tern_tx_frame, tern_rx_frame, tern_msix)
with gettimeofday() stamps (-msg timestamp=on), both guests on the host's one clock, and
each WRITE of the ping-pong is followed from event to event: the requester's SQ doorbell, the
model's run, the request frame handed to the netdev, its arrival in the peer's QEMU, the
peer's ACK out and back, and the peer's own doorbell (its guest saw the data and posted the
next WRITE). Each step's median over every WRITE is printed in microseconds. Every event is
one write() to the log file, so tracing adds its own cost (the "trace cost" row: two events
back to back with nothing between them); the untraced latencies are in the first table, run
with --no-trace for figures without that cost.

Writes d2w.json (bench/results.py; rows: {kind: lat, mode, run, typical, p99}, {kind: bw,
mode, prog, size, run, mbs, msgs} and {kind: step, mode, step, label, median, p90, n}) and
d2w.svg to --out (default build/results/d2w).
"""

import argparse
import bisect
import os
import re
import statistics
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(TOP, "scripts"), os.path.join(TOP, "tests", "rdma"),
                os.path.dirname(os.path.abspath(__file__))]

from harness import Cluster, Wire  # noqa: E402
import rdmatest as rt  # noqa: E402
from hostload import Others  # noqa: E402
import results  # noqa: E402

EVENTS = ("tern_db_write", "tern_run", "tern_tx_frame", "tern_rx_frame", "tern_msix")
LINE = re.compile(r"^(\d+)@(\d+)\.(\d{6}):(tern_\w+) ?(.*)$")
DB_PAGE = 0x1000        # TERN_DB_PAGE_SIZE: UAR pages start here
UDB_SQ = 0x000          # TERN_UDB_SQ within a UAR page
MODES = ("inline", "bottom half")
BW = (("ib_write_bw", 64), ("ib_send_bw", 64), ("ib_write_bw", 65536))


class TernOnWire(rt.Target):
    """The tern RDMA device of a given wire, when a guest has two (tern0, tern1)."""

    def __init__(self, cluster, wire):
        super().__init__(cluster, "tern", wire)
        self.names = {}

    def ibdev_of(self, node):
        if node.index not in self.names:
            r = node.run("ls /sys/class/net/%s/device/infiniband/" % node.iface(self.wire),
                         timeout=30)
            if r.rc != 0 or not r.stdout.split():
                return "none"       # not created yet: wait_ready looks again
            self.names[node.index] = r.stdout.split()[0]
        return self.names[node.index]


def read_events(path, t0, t1):
    """[(time_s, tid, name, args)] of the trace lines in [t0, t1], in time order."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m or m.group(4) not in EVENTS:
                continue
            t = int(m.group(2)) + int(m.group(3)) / 1e6
            if t0 <= t <= t1:
                out.append((t, int(m.group(1)), m.group(4), m.group(5)))
    out.sort(key=lambda e: e[0])
    return out


def arg(e, key):
    m = re.search(r"\b%s (0x[0-9a-f]+|\d+)" % key, e[3])
    return int(m.group(1), 0) if m else None


class Stream:
    """One guest's events of one kind, searchable by time."""

    def __init__(self, events, pred):
        self.ev = [e for e in events if pred(e)]
        self.t = [e[0] for e in self.ev]

    def after(self, t):
        i = bisect.bisect_left(self.t, t)
        return self.ev[i] if i < len(self.ev) else None


def is_sq_db(e):
    if e[2] != "tern_db_write":
        return False
    off = arg(e, "offset")
    return off is not None and off >= DB_PAGE and off % DB_PAGE == UDB_SQ


def breakdown(ev_a, ev_b):
    """Steps of every WRITE A -> B (and B -> A: the ping-pong's other half) in us."""
    steps = {k: [] for k in ("db_run", "run_tx", "tx_rx", "rx_peerdb", "total", "rx_ack",
                              "ack_back", "db_ack", "inline")}
    guests = (ev_a, ev_b)
    for me, peer in ((0, 1), (1, 0)):
        mine, theirs = guests[me], guests[peer]
        dbs = [e for e in mine if is_sq_db(e)]
        runs = Stream(mine, lambda e: e[2] == "tern_run")
        txs = Stream(mine, lambda e: e[2] == "tern_tx_frame")
        rx_mine = Stream(mine, lambda e: e[2] == "tern_rx_frame")
        # the request's length: the frame the first doorbells' runs send
        lens = []
        for e0 in dbs[:50]:
            e1 = runs.after(e0[0])
            e2 = txs.after(e1[0]) if e1 else None
            if e2:
                lens.append(arg(e2, "len"))
        if not lens:
            continue
        req_len = statistics.mode(lens)
        prx_req = Stream(theirs, lambda e: e[2] == "tern_rx_frame" and arg(e, "len") == req_len)
        ptx_ack = Stream(theirs, lambda e: e[2] == "tern_tx_frame" and arg(e, "len") != req_len)
        pdbs = Stream(theirs, is_sq_db)
        for e0 in dbs:
            e1 = runs.after(e0[0])
            e2 = txs.after(e1[0]) if e1 else None
            e3 = prx_req.after(e2[0]) if e2 else None
            e6 = pdbs.after(e3[0]) if e3 else None
            e4 = ptx_ack.after(e3[0]) if e3 else None
            e5 = rx_mine.after(e4[0]) if e4 else None
            if not (e1 and e2 and e3 and e6) or e6[0] - e0[0] > 0.05:
                continue
            us = lambda a, b: (b[0] - a[0]) * 1e6  # noqa: E731
            steps["db_run"].append(us(e0, e1))
            steps["run_tx"].append(us(e1, e2))
            steps["tx_rx"].append(us(e2, e3))
            steps["rx_peerdb"].append(us(e3, e6))
            steps["total"].append(us(e0, e6))
            steps["inline"].append(1.0 if e1[1] == e0[1] else 0.0)
            if e4 and e5 and e5[0] - e0[0] < 0.05:
                steps["rx_ack"].append(us(e3, e4))
                steps["ack_back"].append(us(e4, e5))
                steps["db_ack"].append(us(e0, e5))
    return steps


def trace_cost(events):
    """Median gap between a doorbell and the inline run right after it on the same thread:
    the trace's own cost plus the doorbell's bookkeeping."""
    gaps = []
    for a, b in zip(events, events[1:]):
        if is_sq_db(a) and b[2] == "tern_run" and b[1] == a[1] and b[3].strip() == "inline 1":
            gaps.append((b[0] - a[0]) * 1e6)
    return statistics.median(gaps) if gaps else None


ROWS = (("db_run", "requester: doorbell (vCPU) -> model run starts"),
        ("run_tx", "requester: run -> request frame to the netdev"),
        ("tx_rx", "netdev -> stream socket -> peer QEMU's receive"),
        ("rx_peerdb", "peer: frame placed -> guest polls, posts, rings"),
        ("total", "one way: doorbell -> peer's doorbell"),
        ("rx_ack", "peer: request in -> ACK frame out"),
        ("ack_back", "ACK: peer's netdev -> requester's receive (CQE)"),
        ("db_ack", "requester: doorbell -> ACK in, CQE written"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iters", type=int, default=1000)
    ap.add_argument("--no-trace", action="store_true")
    ap.add_argument("--bw", type=int, default=0, metavar="SECONDS",
                    help="also message rate and bandwidth runs of this length")
    results.add_out_arg(ap)
    args = ap.parse_args()

    qargs = [] if args.no_trace else \
        ["-msg", "timestamp=on"] + [x for ev in EVENTS for x in ("-trace", ev)]
    wires = [Wire("tern"), Wire("tern", props={"doorbell-inline": "off"})]
    lat = {m: [] for m in MODES}
    p99 = {m: [] for m in MODES}
    bw = {(m, b): [] for m in MODES for b in BW}
    steps = {m: {} for m in MODES}
    cost = []
    with Cluster(nodes=2, wires=wires, name="bench-d2w", qemu_args=qargs) as c:
        targets = [TernOnWire(c, 0), TernOnWire(c, 1)]
        for tg in targets:
            tg.setup()
        load = Others(c)
        load.start()
        for run in range(args.runs):
            order = [0, 1] if run % 2 == 0 else [1, 0]
            for k in order:
                win = {}
                res, rows = rt.perftest(targets[k], "ib_write_lat", "-s 2 -n %d" % args.iters,
                                        timeout=600,
                                        before=lambda: win.__setitem__("a", time.time()),
                                        after=lambda: win.__setitem__("b", time.time()))
                if not res.ok or not rows:
                    print("# run %d %s failed: %s" % (run + 1, MODES[k], res.diag()),
                          file=sys.stderr)
                    continue
                lat[MODES[k]].append(rows[-1]["t_typical"])
                p99[MODES[k]].append(rows[-1]["p99"])
                print("# run %d %-11s typical %.2f us" % (run + 1, MODES[k],
                                                           rows[-1]["t_typical"]),
                      file=sys.stderr, flush=True)
                if args.no_trace or "a" not in win or "b" not in win:
                    continue
                ev = [read_events(n.qemu_log_path, win["a"], win["b"]) for n in c]
                for key, vals in breakdown(ev[0], ev[1]).items():
                    steps[MODES[k]].setdefault(key, []).extend(vals)
                tc = trace_cost(ev[0])
                if tc is not None and k == 0:
                    cost.append(tc)
            for b in (BW if args.bw else ()):
                for k in order:
                    res, rows = rt.perftest(targets[k], b[0], "-s %d -D %d" % (b[1], args.bw),
                                            timeout=args.bw + 300)
                    if not res.ok or not rows:
                        print("# run %d %s %s failed: %s" % (run + 1, MODES[k], b[0],
                                                             res.diag()), file=sys.stderr)
                        continue
                    bw[(MODES[k], b)].append((rows[-1]["bw_avg"], rows[-1]["msg_rate"] * 1e6))
                    print("# run %d %-11s %s -s %d: %.2f MB/s, %.0f msg/s"
                          % ((run + 1, MODES[k]) + b + bw[(MODES[k], b)][-1]),
                          file=sys.stderr, flush=True)
        load.stop()

    print("\nib_write_lat -s 2 -n %d, two guests (QEMU TCG, 1 vCPU each), %d runs%s"
          % (args.iters, args.runs, "" if args.no_trace else ", traced"))
    print("| doorbell | typical us, median (range) | p99 us, median (range) |")
    print("|---|---|---|")
    for m in MODES:
        print("| %s |" % m, " | ".join("%.2f (%.2f..%.2f)" % (statistics.median(v), min(v),
                                                               max(v)) if v else "failed"
                                        for v in (lat[m], p99[m])), "|")
    if args.bw:
        print("\nperftest -D %d, median (range) of %d runs" % (args.bw, args.runs))
        print("| program, size | inline MB/s | msg/s | bottom half MB/s | msg/s |")
        print("|---|---|---|---|---|")
        for b in BW:
            cells = []
            for m in MODES:
                v = bw[(m, b)]
                for i, fmt in ((0, "%.2f"), (1, "%.0f")):
                    x = [r[i] for r in v]
                    cells.append(("%s (%s..%s)" % (fmt, fmt, fmt)) % (
                        statistics.median(x), min(x), max(x)) if x else "failed")
            print("| %s %d B | %s |" % (b[0], b[1], " | ".join(cells)))
    if not args.no_trace:
        print("\nsteps of each 2 B WRITE, median us (p90) over every WRITE of every run "
              "(trace stamps, 1 us resolution)")
        print("| step | inline | bottom half |")
        print("|---|---|---|")
        for key, label in ROWS:
            cells = []
            for m in MODES:
                v = sorted(steps[m].get(key, []))
                cells.append("%.1f (%.1f)" % (statistics.median(v), v[int(len(v) * 0.9)])
                             if v else "-")
            print("| %s | %s |" % (label, " | ".join(cells)))
        for m in MODES:
            v = steps[m].get("inline", [])
            print("# %s: %d WRITEs matched, %.0f %% run in the doorbell's thread"
                  % (m, len(v), 100.0 * sum(v) / len(v) if v else 0))
        if cost:
            print("# trace cost (doorbell event -> inline run event, same thread): %.1f us"
                  % statistics.median(cost))
    print(load.line())
    rows = [{"kind": "lat", "mode": m, "run": i + 1, "typical": t, "p99": p}
            for m in MODES for i, (t, p) in enumerate(zip(lat[m], p99[m]))]
    rows += [{"kind": "bw", "mode": m, "prog": b[0], "size": b[1], "run": i + 1, "mbs": v[0],
              "msgs": v[1]} for (m, b), vals in bw.items() for i, v in enumerate(vals)]
    for m in MODES:
        for key, label in ROWS:
            v = sorted(steps[m].get(key, []))
            if v:
                rows.append({"kind": "step", "mode": m, "step": key, "label": label,
                             "median": statistics.median(v), "p90": v[int(len(v) * 0.9)],
                             "n": len(v)})
    doc = results.document(
        "d2w", rows, load,
        [("inline", "tern wire 0: the model runs in the doorbell's MMIO write"),
         ("bottom half", "tern wire 1, doorbell-inline=off: the model runs in a bottom half "
          "of QEMU's main loop")],
        {"runs": args.runs, "iters": args.iters, "traced": not args.no_trace,
         "bw_seconds": args.bw, "guests": "2 x QEMU TCG, 1 vCPU"},
        kernel=results.guest_kernel(),
        notes=["trace cost %.1f us (doorbell event -> inline run event)"
               % statistics.median(cost)] if cost else [])
    results.save(doc, results.out_dir("d2w", args.out))


if __name__ == "__main__":
    main()
