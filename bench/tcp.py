#!/usr/bin/python3
"""Benchmark (not a test): TCP throughput between two guests over tern and over QEMU's
virtio-net in the same run, the same guests and the same iperf3 settings, with the ratio.

    bench/tcp.py [--seconds N] [--runs N] [--streams N] [--channels N] [--out DIR]

--streams runs N parallel TCP streams (iperf3 -P); --channels gives tern's netdev N queue
pairs with RSS (ethtool -L combined N) in both guests before the runs. The runs alternate
between the NICs (tern, virtio-net, tern, ...; the first of each pair alternating too), so a
change in the host's load falls on both; the CPU other work used meanwhile is printed under
the table (bench/hostload.py) and each run's figures go to stderr as they come.

Each run also reads the CPU time of both QEMUs' threads (main loop, and the rest: the vCPU's
TCG thread): the guests are bound by the CPU the host gives their vCPUs, and on a shared
2-core host that swings between runs, so the table adds Mb/s per core of the sender's vCPU
thread (throughput over that thread's share of a core during the run), which does not.

Both NICs are emulated: the numbers measure the device model and driver under QEMU's software
emulation (no KVM), where the guest CPU is the bottleneck. tern has checksum offload and TSO
(TERN_DEV_CAP_ETH_OFFLOAD); virtio-net on the harness's ``-netdev stream`` backend has neither
(the backend has no vnet header), so its guests checksum and segment in software.

Writes tcp.json (bench/results.py; rows: {nic, run, mbps, mbps_per_vcpu}) and tcp.svg to --out
(default build/results/tcp).
"""

import argparse
import json
import os
import statistics
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(TOP, "scripts"), os.path.dirname(os.path.abspath(__file__))]

from harness import Cluster, Wire  # noqa: E402
from hostload import Others  # noqa: E402
import results  # noqa: E402


def threads(node):
    """CPU seconds of ``node``'s QEMU so far: (main loop thread, every other thread: the
    vCPU's TCG thread and QEMU's helpers)."""
    main = rest = 0
    task = "/proc/%d/task" % node.proc.pid
    for tid in os.listdir(task):
        try:
            with open("%s/%s/stat" % (task, tid)) as f:
                v = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        t = (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")
        if int(tid) == node.proc.pid:
            main += t
        else:
            rest += t
    return main, rest


def iperf(client, server, addr, seconds, extra=""):
    """One iperf3 run client -> server; returns Mbit/s received."""
    job = server.spawn("exec iperf3 -s -1 -J", timeout=seconds + 60)
    client.run("sleep 0.5", timeout=10)
    r = client.run("iperf3 -c %s -t %d -J %s" % (addr, seconds, extra), timeout=seconds + 60,
                   check=True)
    job.wait(timeout=30)
    res = json.loads(r.stdout)
    return res["end"]["sum_received"]["bits_per_second"] / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--streams", type=int, default=1)
    ap.add_argument("--channels", type=int, default=0, help="tern queue pairs (0: default)")
    results.add_out_arg(ap)
    args = ap.parse_args()
    extra = "-P %d" % args.streams if args.streams > 1 else ""

    with Cluster(nodes=2, wires=[Wire("tern"), Wire("virtio")], name="bench-tcp") as c:
        for n in c:
            n.run("modprobe tern_core", check=True, timeout=60)
        c.configure_ip(0)
        c.configure_ip(1)
        for n in c:
            n.run("for i in $(seq 50); do [ $(cat /sys/class/net/%s/carrier) = 1 ] && break;"
                  " sleep 0.2; done" % n.iface(0), timeout=30)
        if args.channels:
            for n in c:
                n.run("ethtool -L %s combined %d" % (n.iface(0), args.channels), check=True)
                n.run("for i in $(seq 50); do [ $(cat /sys/class/net/%s/carrier) = 1 ] && "
                      "break; sleep 0.2; done" % n.iface(0), timeout=30)
        chans = c[0].run("ethtool -l %s | grep Combined | tail -1" % c[0].iface(0)).stdout
        rows = [("tern", []), ("virtio-net", [])]
        cpu = ([], [])
        eff = ([], [])      # Mb/s per core of the sender's vCPU thread, per run
        load = Others(c)
        load.start()
        for run in range(args.runs):
            for wire in ((0, 1) if run % 2 == 0 else (1, 0)):
                t0, a = time.monotonic(), [threads(n) for n in c]
                v = iperf(c[0], c[1], c[1].ip(wire), args.seconds, extra)
                dt, b = time.monotonic() - t0, [threads(n) for n in c]
                rows[wire][1].append(v)
                # share of one core each QEMU thread group used during the run
                use = ["%.0f/%.0f" % tuple(100 * (y - x) / dt for x, y in zip(p, q))
                       for p, q in zip(a, b)]
                cpu[wire].append(use)
                eff[wire].append(v / max((b[0][1] - a[0][1]) / dt, 1e-3))
                print("# run %d %s %.1f Mb/s; QEMU CPU %% main loop/vCPU: sender %s, "
                      "receiver %s" % (run + 1, rows[wire][0], v, use[0], use[1]),
                      file=sys.stderr, flush=True)
        load.stop()
        print("\nTCP throughput, guest to guest, %d x %d s iperf3, %d stream(s), tern with %s "
              "channel(s), QEMU TCG, 1 vCPU each" % (args.runs, args.seconds, args.streams,
                                                    chans.split()[-1] if chans else "?"))
        print("%-12s %12s %12s %12s %22s" % ("NIC", "median Mb/s", "min", "max",
                                              "Mb/s per sender vCPU"))
        for (label, vals), e in zip(rows, eff):
            print("%-12s %12.1f %12.1f %12.1f %22.1f" % (label, statistics.median(vals),
                                                         min(vals), max(vals),
                                                         statistics.median(e)))
        ratio = statistics.median(rows[0][1]) / max(statistics.median(rows[1][1]), 1e-9)
        print("tern / virtio-net: %.2f; per core of the sender's vCPU: %.2f" % (
            ratio, statistics.median(eff[0]) / max(statistics.median(eff[1]), 1e-9)))
        print(load.line())
    rows = [{"nic": label, "run": i + 1, "mbps": v, "mbps_per_vcpu": e[i]}
            for (label, vals), e in zip(rows, eff) for i, v in enumerate(vals)]
    nch = chans.split()[-1] if chans else "?"
    doc = results.document(
        "tcp", rows, load,
        [("tern", "tern NIC netdev, %s channel(s), checksum offload and TSO" % nch),
         ("virtio-net", "QEMU's virtio-net on -netdev stream (no checksum offload or TSO: "
          "no vnet header), the same guests")],
        {"seconds": args.seconds, "runs": args.runs, "streams": args.streams,
         "channels": nch, "guests": "2 x QEMU TCG, 1 vCPU", "tool": "iperf3"},
        kernel=results.guest_kernel())
    results.save(doc, results.out_dir("tcp", args.out))


if __name__ == "__main__":
    main()
