#!/usr/bin/python3
"""Benchmark (not a test): NVMe over Fabrics between two guests over tern, over Soft-RoCE
(rdma_rxe on QEMU's virtio-net) and over NVMe/TCP on the same virtio-net NIC, in the same run,
the same guests, the same namespace and the same fio jobs, with the ratios.

    bench/storage.py [--runs N] [--seconds S] [--out DIR]

The target (node1) exports a RAM disk (brd, 256 MiB) through nvmet with one port per
transport; the host (node0) connects to each in turn and runs fio (libaio, O_DIRECT):
4 KiB random reads at queue depth 32 (IOPS) and 128 KiB sequential reads at queue depth 16
(MB/s), each for --seconds, the transports interleaved run by run (tern, rxe, tcp, then
again), medians over --runs. Guest CPU per I/O is the busy time (user + system + irq +
softirq, /proc/stat) of both guests during the fio run divided by the I/Os done.

The guests run under QEMU's software emulation (TCG, no KVM) on a shared host: absolute
numbers mean little, only ratios within one run do. The host CPU that anything other than
this run's two QEMU processes used while the transports ran is printed (in cores); a run
where other work took more than half a core is flagged as noisy.

Writes storage.json (bench/results.py; rows: {transport: tern|rxe|tcp, job, unit, run, iops,
mbs, cpu_us_per_io}) and storage.svg to --out (default build/results/storage).
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

NQN = "nqn.2026-12.io.tern:bench"
BUSY = ("user", "nice", "system", "irq", "softirq")
JOBS = (
    ("4 KiB random read, QD 32", "randread", "4k", 32, "iops", "IOPS"),
    ("128 KiB sequential read, QD 16", "read", "128k", 16, "bw", "MB/s"),
)


def sh(node, cmd, timeout=300):
    r = node.run(cmd, timeout=timeout)
    if r.rc != 0:
        raise SystemExit("bench: %s: %s failed (rc %d):\n%s%s" % (node.name, cmd, r.rc,
                                                                   r.stdout, r.stderr))
    return r.stdout


def target_setup(n1, ports):
    """A RAM-disk namespace behind one nvmet port per (id, trtype, address)."""
    sh(n1, "modprobe brd rd_nr=1 rd_size=262144 && modprobe nvmet && modprobe nvmet_rdma && "
       "modprobe nvmet_tcp && { mountpoint -q /sys/kernel/config || "
       "mount -t configfs none /sys/kernel/config; }")
    s = "/sys/kernel/config/nvmet/subsystems/" + NQN
    sh(n1, "mkdir -p %s/namespaces/1 && echo 1 > %s/attr_allow_any_host && "
       "echo -n /dev/ram0 > %s/namespaces/1/device_path && "
       "echo 1 > %s/namespaces/1/enable" % (s, s, s, s))
    for pid, trtype, addr in ports:
        p = "/sys/kernel/config/nvmet/ports/%d" % pid
        sh(n1, "mkdir -p %s && echo %s > %s/addr_trtype && echo ipv4 > %s/addr_adrfam && "
           "echo %s > %s/addr_traddr && echo 4420 > %s/addr_trsvcid && ln -s %s "
           "%s/subsystems/%s" % (p, trtype, p, p, addr, p, p, s, p, NQN))
    # fill the disk once, so that reads return data rather than zero pages
    sh(n1, "dd if=/dev/urandom of=/dev/ram0 bs=1M count=256 status=none", 600)


def connect(n0, trtype, addr):
    sh(n0, "modprobe nvme_%s && nvme connect -t %s -n %s -a %s -s 4420" % (
        trtype, trtype, NQN, addr), 120)
    # the namespace's visible disk (with multipath, Debian's default, not the hidden path)
    dev = sh(n0, "for d in /sys/block/nvme*; do [ \"$(cat $d/hidden 2>/dev/null)\" = 1 ] && "
             "continue; grep -qx %s $d/device/subsysnqn 2>/dev/null && echo $d; done" %
             NQN).strip().splitlines()
    if not dev:
        raise SystemExit("bench: no namespace after nvme connect -t %s" % trtype)
    return "/dev/" + os.path.basename(dev[0])


def fio(c, n0, dev, rw, bs, qd, seconds):
    """One fio run: (IOPS, MB/s, guest busy microseconds per I/O)."""
    a = [rt.cpu_jiffies(n) for n in c]
    out = sh(n0, "fio --name=b --filename=%s --direct=1 --ioengine=libaio --rw=%s --bs=%s "
             "--iodepth=%d --time_based --runtime=%d --ramp_time=2 --size=256M "
             "--output-format=json" % (dev, rw, bs, qd, seconds), seconds + 120)
    b = [rt.cpu_jiffies(n) for n in c]
    job = json.loads(out[out.index("{"):])["jobs"][0]["read"]
    ios = job["total_ios"] or 1
    busy = sum(y[f] - x[f] for x, y in zip(a, b) for f in BUSY) * 10000.0   # jiffies -> us
    return job["iops"], job["bw_bytes"] / 1e6, busy / ios


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per transport (median)")
    ap.add_argument("--seconds", type=int, default=15, help="seconds per fio job")
    results.add_out_arg(ap)
    args = ap.parse_args()

    c = Cluster(nodes=2, wires=[Wire("tern"), "virtio"], name="bench-storage",
                memory=1536, initrd_image="storage")
    c.boot()
    try:
        n0, n1 = c[0], c[1]
        tern = rt.Target(c, "tern", 0)
        rxe = rt.Target(c, "rxe", 1)
        tern.setup()
        rxe.setup()
        transports = (("tern", "rdma", tern.ip(n1)), ("rxe", "rdma", rxe.ip(n1)),
                      ("tcp", "tcp", rxe.ip(n1)))
        target_setup(n1, [(1, "rdma", tern.ip(n1)), (2, "rdma", rxe.ip(n1)),
                          (3, "tcp", rxe.ip(n1))])
        res = {(t, j[0]): [] for t, _, _ in transports for j in JOBS}
        load = Others(c)
        load.start()
        for run in range(args.runs):
            for name, trtype, addr in transports:
                dev = connect(n0, trtype, addr)
                for label, rw, bs, qd, _, _ in JOBS:
                    res[(name, label)].append(fio(c, n0, dev, rw, bs, qd, args.seconds))
                sh(n0, "nvme disconnect -n %s" % NQN, 120)
                print("# run %d: %s done" % (run + 1, name), file=sys.stderr)
        load.stop()
    finally:
        c.close()

    print("NVMe-oF, fio on a 256 MiB RAM disk, medians of %d runs of %d s (guests under TCG)"
          % (args.runs, args.seconds))
    print()
    print("| job | tern | Soft-RoCE | NVMe/TCP (virtio-net) | tern/rxe | tern/tcp |")
    print("|---|---|---|---|---|---|")
    for label, _, _, _, field, unit in JOBS:
        med = {}
        for name, _, _ in transports:
            rows = res[(name, label)]
            k = 0 if field == "iops" else 1
            med[name] = (statistics.median(r[k] for r in rows),
                         statistics.median(r[2] for r in rows),
                         (min(r[k] for r in rows), max(r[k] for r in rows)))
        cells = ["%.0f %s (%.0f..%.0f), %.0f us CPU/IO" % (
            med[n][0], unit, med[n][2][0], med[n][2][1], med[n][1])
            for n in ("tern", "rxe", "tcp")]
        print("| %s | %s | %.2fx | %.2fx |" % (
            label, " | ".join(cells),
            med["tern"][0] / med["rxe"][0] if med["rxe"][0] else 0,
            med["tern"][0] / med["tcp"][0] if med["tcp"][0] else 0))
    print()
    print(load.line())
    rows = [{"transport": name, "job": label, "unit": unit, "run": i + 1, "iops": r[0],
             "mbs": r[1], "cpu_us_per_io": r[2]}
            for name, _, _ in transports for label, _, _, _, _, unit in JOBS
            for i, r in enumerate(res[(name, label)])]
    doc = results.document(
        "storage", rows, load,
        [("tern", "NVMe/RDMA over the tern NIC"),
         ("rxe", "NVMe/RDMA over Soft-RoCE on QEMU's virtio-net"),
         ("tcp", "NVMe/TCP over the same virtio-net NIC")],
        {"runs": args.runs, "seconds": args.seconds, "disk": "brd RAM disk, 256 MiB",
         "jobs": [j[0] for j in JOBS], "fio": "libaio, O_DIRECT",
         "guests": "2 x QEMU TCG, 1 vCPU"},
        kernel=results.guest_kernel())
    results.save(doc, results.out_dir("storage", args.out))


if __name__ == "__main__":
    main()
