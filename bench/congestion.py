#!/usr/bin/python3
"""Benchmark (not a test): lossless RoCE on a congested fabric in guests, the configurations
side by side. Three guests with tern NICs through tern-switch, two ib_write_bw senders
(node1, node2) to one receiver (node0) at once (2:1 on the receiver's switch port), set up
like tests/guest/congestion.t (tests/rdma/congestiontest.py: dcb pfc/app, devlink DCQCN
params, debugfs cc_params/, the switch's ECN and PFC on priority 3, CNPs on priority 6):

    PFC on,  DCQCN off      pauses instead of loss
    PFC on,  DCQCN default  DCQCN with the driver's (ConnectX) defaults, made for
                            microsecond round trips: little effect on this slow fabric
    PFC on,  DCQCN on       DCQCN with its time constants scaled to the fabric
                            (congestiontest.DCQCN_PARAMS): fewer pauses, fair shares
    PFC off, DCQCN on       (--lossy: a second cluster whose switch has no PFC and a
                            512 KiB buffer, twice the lossless runs' XOFF) what DCQCN alone
                            does: drops and retransmissions when it reacts too late

    bench/congestion.py [--mbps N] [--seconds S] [--runs N] [--lossy] [--out DIR]

Printed per configuration: per-flow throughput (MB/s, perftest's), Jain's fairness index,
ECN marks (switch) and CE packets seen by the receiver, CNPs sent (receiver) and handled
(senders), DCQCN rate cuts, XOFF the switch sent to the senders and pauses their NICs
received, the bottleneck FIFO's depth (p50/p99 of 100 us samples, and its high-water mark),
drops at the switch (lossless ones in parentheses) and the transport's retransmissions.
With --runs N each configuration is run N times in turn and each run is printed.

The guests run under QEMU's software emulation (TCG) on a shared host, in real time: rates
are low (a few hundred Mb/s) and the figures are noisy; only comparisons within one run mean
something. The virtual-time simulator (bench/incast.py) is the deterministic counterpart.

Writes congestion.json (bench/results.py; rows: every run's figures, tests/rdma/
congestiontest.py's Run.as_dict()) and congestion.svg (per-flow throughput, pauses and CNPs
per configuration) to --out (default build/results/congestion).
"""

import argparse
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(TOP, "scripts"), os.path.join(TOP, "tests", "rdma"),
                os.path.join(TOP, "tests", "lib")]

from harness import HarnessError  # noqa: E402
import congestiontest as ct  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostload import Others  # noqa: E402
import results  # noqa: E402


def dcqcn_defaults():
    """The defaults (include/linux/tern/tern_dcb.h, which the driver uses) of the cc_params/ files
    congestiontest.DCQCN_PARAMS changes."""
    macro = {"rp_dce_tcp_rtt": "TCP_RTT", "rp_rate_reduce_monitor_period": "MONITOR_PERIOD",
             "np_min_time_between_cnps": "MIN_TIME_CNPS", "rp_time_reset": "TIME_RESET",
             "rp_byte_reset": "BYTE_RESET", "rp_ai_rate": "AI_RATE",
             "rp_hai_rate": "HAI_RATE"}
    with open(os.path.join(TOP, "include", "linux", "tern", "tern_dcb.h")) as f:
        text = f.read()
    out = {}
    for name in ct.DCQCN_PARAMS:
        m = re.search(r"#define\s+TERN_CC_DEF_%s\s+(\d+)" % macro[name], text)
        if not m:
            raise SystemExit("bench: no default for %s in tern_dcb.h" % name)
        out[name] = int(m.group(1))
    return out


def run_cluster(args, pfc, configs, loads, **switch):
    """Boot one cluster (switch PFC on or off) and run ``configs``: [(label, NIC PFC, DCQCN,
    cc_params/ values or None for congestiontest.DCQCN_PARAMS)]."""
    c = ct.cluster(args.mbps, pfc=pfc, name="bench-congestion", **switch)
    try:
        c.boot()
    except HarnessError as e:
        raise SystemExit("bench: cluster did not boot: %s" % e)
    out = []
    try:
        fab = ct.Fabric(c)
        why = fab.target.available(c[0])
        if why:
            raise SystemExit("bench: %s" % why)
        fab.setup()
        load = Others(c)
        loads.append(load)
        load.start()
        for i in range(args.runs):
            for label, nic_pfc, dcqcn, params in configs:
                fab.configure(pfc=nic_pfc, dcqcn=dcqcn, params=params)
                name = label if args.runs == 1 else "%s #%d" % (label, i + 1)
                run = ct.incast(fab, name, args.seconds)
                if not run.ok:
                    print("# %s: %s" % (name, ct.diag(run)), file=sys.stderr)
                out.append(run)
                print("# %s: perftest %s MB/s, on the wire %s MB/s, Jain %.3f" % (
                    name, " + ".join("%.2f" % v if v is not None else "-"
                                     for v in run.flows.values()),
                    " + ".join("%.2f" % v for v in run.wire_flows.values()) or "-",
                    run.jain), file=sys.stderr, flush=True)
        load.stop()
        print("# logs: %s" % c.result_dir, file=sys.stderr)
    finally:
        c.close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mbps", type=int, default=ct.LINK_MBPS,
                    help="link rate of the switch ports and NICs (default %(default)s)")
    ap.add_argument("--seconds", type=int, default=15, help="length of each run")
    ap.add_argument("--runs", type=int, default=1, help="repetitions of each configuration")
    ap.add_argument("--lossy", action="store_true",
                    help="also PFC off + DCQCN on (boots a second cluster)")
    results.add_out_arg(ap)
    args = ap.parse_args()

    loads = []
    runs = run_cluster(args, True, [("PFC on, DCQCN off", True, False, None),
                                    ("PFC on, DCQCN default", True, True, dcqcn_defaults()),
                                    ("PFC on, DCQCN on", True, True, None)], loads)
    if args.lossy:
        runs += run_cluster(args, False, [("PFC off, DCQCN on", False, True, None)], loads,
                            buffer_bytes=512 << 10)
    print("lossless RoCE in guests: 2 senders -> 1 receiver through tern-switch, "
          "%d Mb/s links, %d s runs" % (args.mbps, args.seconds))
    print(ct.side_by_side(runs))
    for ld in loads:
        print(ld.line())
    peers = [("PFC on, DCQCN off", "switch PFC on priority 3, NICs' DCQCN off"),
             ("PFC on, DCQCN default", "the driver's (ConnectX) DCQCN defaults"),
             ("PFC on, DCQCN on", "DCQCN time constants scaled to the fabric "
              "(congestiontest.DCQCN_PARAMS)")]
    if args.lossy:
        peers.append(("PFC off, DCQCN on", "a second cluster: no PFC, 512 KiB switch buffer"))
    doc = results.document(
        "congestion", [r.as_dict() for r in runs], loads[0], peers,
        {"mbps": args.mbps, "seconds": args.seconds, "runs": args.runs, "lossy": args.lossy,
         "guests": "3 x QEMU TCG through tern-switch, 2:1 incast, ib_write_bw 64 KiB"},
        kernel=results.guest_kernel(),
        notes=["%s: %s" % (r.label, r.why) for r in runs if not r.ok] +
        ["second cluster: " + ld.line() for ld in loads[1:]])
    results.save(doc, results.out_dir("congestion", args.out))
    return 0 if all(r.ok for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
