#!/usr/bin/python3
"""Benchmark (not a test): RDMA bandwidth under packet loss, tern against Soft-RoCE (rdma_rxe
on QEMU's virtio-net) in the same run, the same guests, sizes and options.

    bench/loss.py [--quick] [--runs N] [--duration S] [--scale F] [--loss 0,0.1,1] [--sr]
                  [--ops write,read,send,send-srq] [--out DIR]

Loss is injected on the transmit side of both guests, so requests and responses (ACKs, READ
responses) are lost alike: on tern with the NIC's wire fault injection (debugfs
``wire_faults/drop_ppm``), on rxe with netem on the virtio-net interface
(``tc qdisc replace dev <if> root netem loss <p>%``). Both transports are go-back-N: a lost
packet costs a NAK (sequence error) and a resend of everything after it, or a retransmit
timeout when the tail of a burst is lost.

Printed per measure and loss rate: MB/s of tern and rxe, tern/rxe, the fraction of each one's
lossless bandwidth it keeps, the loss measured on the wire (frames dropped / frames sent, both
guests, from the fault injector's or netem's counters), and the RDMA counters' deltas of the
run: tern's retrans_pkts and local_ack_timeout_err, rxe's completer_retry_err.

With --sr tern is measured twice, standard go-back-N and selective repeat (devlink
``roce_selective_repeat`` on both guests, agreed per connection through ECE: those runs
connect through librdmacm, ``ib_write_bw -R``; Documentation/hw/rdma.rst "Selective
repeat"): the SR columns, and its counters selective_retrans_pkts and tail_loss_probes. The progress lines
also give tern's packets sent, out_of_sequence, out_of_order_accepted, duplicate_request,
rx_roce_discards, seq_err_naks_sent and duplicate_response (deltas, both guests).

--ops picks the operations (default write,read): send is ib_send_bw, send-srq ib_send_bw
--use-srq (the receiver's QP on a shared receive queue; with selective repeat the SENDs after a
gap take their SRQ WQEs ahead, Documentation/hw/rdma.rst "Out-of-order placement").

Each perftest run lasts a fixed time (perftest -D, --duration seconds, 15 by default), so
that the slow and the fast transport are measured over the same span. Runs: RDMA WRITE and READ
at 64 KiB and at 4 KiB, each at every loss rate, for tern and for rxe: about 7 minutes with the
defaults; --quick keeps 64 KiB only (about 4 minutes). The guests run under TCG on a shared
host: only ratios within one run mean something. The host's load and the CPU other work used
meanwhile are printed under the tables (bench/hostload.py).

Writes loss.json (bench/results.py; rows: {measure, op, size, loss_pct, peer: tern|tern-sr|rxe,
bw (MB/s, None when the run failed), why, wire_loss, and the counters' deltas}) and loss.svg
(bandwidth kept against the drop rate, one panel per measure) to --out (default
build/results/loss).
"""

import argparse
import os
import re
import statistics
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(TOP, "scripts"), os.path.join(TOP, "tests", "rdma")]

from harness import Cluster, Wire  # noqa: E402
import rdmatest as rt  # noqa: E402
from hostload import Others  # noqa: E402
import results as bres  # noqa: E402

# counters shown, summed over both guests: (target kind, counter, column heading)
COUNTERS = (("tern", "retrans_pkts", "retrans"), ("tern", "local_ack_timeout_err", "timeouts"),
            ("rxe", "completer_retry_err", "retries"))
SR_COUNTERS = (("tern-sr", "selective_retrans_pkts", "SR resent"),
               ("tern-sr", "tail_loss_probes", "SR probes"))
# only in the progress lines: where the time goes (Documentation/hw/rdma.rst, "Counters")
DIAG_COUNTERS = tuple(("tern", n, n) for n in (
    "tx_roce_packets", "out_of_sequence", "out_of_order_accepted", "duplicate_request",
    "rx_roce_discards", "seq_err_naks_sent", "duplicate_response"))


def set_sr(target, on):
    """devlink roce_selective_repeat on both guests' tern NICs (QPs connected from now on)."""
    for node in target.cluster:
        node.run("devlink dev param set pci/$(basename $(readlink -f /sys/class/net/%s/device))"
                 " name roce_selective_repeat value %s cmode runtime" % (
                     target.netdev[node.index], "true" if on else "false"),
                 timeout=30, check=True)


def pct_str(p):
    """A loss rate for netem: at most 4 decimals, no exponent."""
    return ("%.4f" % p).rstrip("0").rstrip(".")


def set_loss(target, pct):
    """Drop ``pct`` percent of the frames each guest sends on ``target``'s NIC. Returns None,
    or why it could not be set (tern's firmware may not have fault injection)."""
    for node in target.cluster:
        dev = target.netdev[node.index]
        if target.kind == "tern":
            # wire_faults/drop_ppm: parts per million, 4 decimals of a percent
            values = dict(drop_ppm=round(pct * 10000), seed=1 + node.index) if pct else {}
            r = rt.set_wire_faults(node, dev, **values)
            if r.rc != 0:
                return "%s: wire_faults %s: %s" % (node.name, rt.wire_faults_str(values),
                                                   (r.stderr or r.stdout).strip())
            continue
        # the guest's kernel does not load qdisc modules on demand
        cmd = "modprobe sch_netem && tc qdisc replace dev %s root netem loss %s%%" % (
            dev, pct_str(pct))
        r = node.run(cmd, timeout=30)
        if r.rc != 0:
            return "%s: %s: %s" % (node.name, cmd, (r.stderr or r.stdout).strip())
    return None


def clear_loss(target):
    for node in target.cluster:
        dev = target.netdev[node.index]
        if target.kind == "tern":
            rt.set_wire_faults(node, dev)
        else:
            node.run("tc qdisc del dev %s root" % dev, timeout=30)


def wire_counts(target):
    """(frames offered to the wire, frames dropped), summed over the guests."""
    sent = dropped = 0
    for node in target.cluster:
        dev = target.netdev[node.index]
        if target.kind == "tern":
            v = rt.read_wire_faults(node, dev)
            if "frames" not in v or "dropped" not in v:
                return None
            sent += v["frames"]
            dropped += v["dropped"]
        else:
            r = node.run("tc -s qdisc show dev %s" % dev, timeout=30)
            m = re.search(r"qdisc netem .*?Sent \d+ bytes (\d+) pkt \(dropped (\d+)", r.stdout,
                          re.S)
            if r.rc != 0 or not m:
                return None
            # netem counts a lost packet as dropped, never as sent
            sent += int(m.group(1)) + int(m.group(2))
            dropped += int(m.group(2))
    return sent, dropped


def hw_counters(target):
    """The port's hw_counters summed over the guests: {name: value}."""
    tot = {}
    for node in target.cluster:
        r = node.run("cd /sys/class/infiniband/%s/ports/1/hw_counters && grep . *"
                     % target.ibdev, timeout=30)
        for name, val in re.findall(r"^(\w+):(\d+)$", r.stdout, re.M):
            tot[name] = tot.get(name, 0) + int(val)
    return tot


def measure(target, prog, size, seconds, runs, cm=False, extra=""):
    """Median bandwidth over ``runs`` (MB/s, or None when a run failed: then ``why``), with
    the wire's drop rate and the counter deltas of the runs. ``cm``: perftest connects
    through librdmacm (-R), whose ECE exchange agrees on selective repeat; ``extra``: more
    perftest options."""
    bws, why = [], None
    w0, c0 = wire_counts(target), hw_counters(target)
    for _ in range(runs):
        res, got = rt.perftest(target, prog, "-s %d -D %d%s%s" % (
            size, seconds, " -R" if cm else "", " " + extra if extra else ""),
            timeout=seconds + 300)
        if not res.ok:
            why = res.diag().splitlines()[0] if res.diag() else "failed"
            break
        bws.append(got[-1]["bw_avg"])
    w1, c1 = wire_counts(target), hw_counters(target)
    out = {"bw": statistics.median(bws) if bws and not why else None, "why": why}
    if w0 and w1 and w1[0] > w0[0]:
        out["wire_loss"] = 100.0 * (w1[1] - w0[1]) / (w1[0] - w0[0])
    for kind, name, _ in COUNTERS + SR_COUNTERS + DIAG_COUNTERS:
        if kind.split("-")[0] == target.kind and name in c1:
            out[name] = c1[name] - c0.get(name, 0)
    return out


def fmt(v, spec):
    return spec % v if v is not None else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="64 KiB only (WRITE and READ: about 4 minutes)")
    ap.add_argument("--runs", type=int, default=1, help="runs per measurement (median)")
    ap.add_argument("--duration", type=int, default=15, help="seconds per perftest run")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the duration")
    ap.add_argument("--loss", default="0,0.1,1",
                    help="comma-separated loss rates in percent (default 0,0.1,1; 0 first)")
    ap.add_argument("--ops", default="write,read",
                    help="operations: write, read, send, send-srq (default write,read)")
    ap.add_argument("--sr", action="store_true",
                    help="tern with selective repeat too (devlink roce_selective_repeat)")
    bres.add_out_arg(ap)
    args = ap.parse_args()
    losses = [float(x) for x in args.loss.split(",")]
    if losses[0] != 0 or any(p < 0 or p > 100 for p in losses):
        ap.error("--loss: percentages 0..100, the first one 0 (the lossless reference)")
    seconds = max(2, int(round(args.duration * args.scale)))

    # (label, program, message size, more perftest options)
    ops = {"write": ("WRITE", "ib_write_bw", ""), "read": ("READ", "ib_read_bw", ""),
           "send": ("SEND", "ib_send_bw", ""), "send-srq": ("SEND SRQ", "ib_send_bw",
                                                            "--use-srq")}
    chosen = args.ops.split(",")
    if not chosen or any(o not in ops for o in chosen):
        ap.error("--ops: a comma-separated list of %s" % ", ".join(ops))
    plan = [("%s %s" % (ops[o][0], sz), ops[o][1], size, ops[o][2])
            for sz, size in [("64 KiB", 65536)] + ([] if args.quick else [("4 KiB", 4096)])
            for o in chosen]
    results = {}
    notes = []
    with Cluster(nodes=2, wires=[Wire("tern"), Wire("virtio")], name="bench-loss") as c:
        targets = [rt.Target(c, "tern", 0), rt.Target(c, "rxe", 1)]
        for tg in targets:
            tg.setup()
        if args.sr:
            # selective repeat is agreed per connection through ECE: perftest -R (librdmacm)
            for node in targets[0].cluster:
                r = rt.load_rdma_cm(node)
                if r.rc != 0:
                    raise SystemExit("rdma_cm on %s: %s" % (node.name, r.stderr))
        # (result key, target, selective repeat): the tern target twice with --sr
        passes = [("tern", targets[0], False)] + (
            [("tern-sr", targets[0], True)] if args.sr else []) + [("rxe", targets[1], None)]
        # warm-up, not measured: the first runs in fresh guests are slower (TCG translation,
        # page faults), which would bias the lossless reference
        for tg in targets:
            rt.perftest(tg, "ib_write_bw", "-s 65536 -D 3", timeout=300)
        load = Others(c)
        load.start()
        # each measure at every loss rate in a row, so that the lossless reference is taken
        # next to the lossy runs (the host's load drifts)
        for label, prog, size, extra in plan:
            for pct in losses:
                for key, tg, sr in passes:
                    if sr is not None:
                        set_sr(tg, sr)
                    why = set_loss(tg, pct)
                    # without fault injection a NIC drops nothing: 0% is measured anyway
                    ok = why is None or pct == 0
                    if why:
                        notes.append("%s at %s%%: loss not set: %s" % (tg.label, pct_str(pct),
                                                                       why))
                        print("# " + notes[-1], flush=True)
                    if not ok:
                        r = {"bw": None, "why": "loss not set"}
                    else:
                        r = measure(tg, prog, size, seconds, args.runs, cm=bool(sr),
                                    extra=extra)
                    results[(label, pct, key)] = r
                    if r["why"] and ok:
                        notes.append("%s %s at %s%%: %s" % (label, tg.label, pct_str(pct),
                                                            r["why"]))
                    print("%-13s loss %6s%% %-7s %s MB/s  wire loss %s%%  %s" % (
                        label, pct_str(pct), key, fmt(r["bw"], "%.2f"),
                        fmt(r.get("wire_loss"), "%.3f"),
                        " ".join("%s=%d" % (k, v) for k, v in sorted(r.items())
                                 if k not in ("bw", "why", "wire_loss"))), flush=True)
        load.stop()
        for tg in targets:
            clear_loss(tg)
        if args.sr:
            set_sr(targets[0], False)

    print("\nRDMA bandwidth under loss on both guests' transmit side; perftest between two "
          "guests, QEMU TCG, 1 vCPU each, %d run(s) of %d s per line (median); tern on the tern "
          "NIC (wire_faults/drop_ppm), rxe on virtio-net (netem loss)" % (args.runs, seconds))
    print("kept: bandwidth as a fraction of the same target's lossless bandwidth; wire: "
          "frames dropped / frames sent, both guests; counters: deltas summed over both guests")
    head = ("measure", "loss%", "tern MB/s", "rxe MB/s", "tern/rxe", "tern kept",
            "rxe kept", "tern wire%", "rxe wire%") + tuple(
                "%s %s" % (k, h) for k, _, h in COUNTERS)
    widths = (13, 6, 10, 9, 9, 10, 9, 11, 10, 13, 14, 12)
    print(" ".join("%*s" % (-w if i == 0 else w, h) for i, (w, h) in enumerate(zip(widths,
                                                                                  head))))
    for label, prog, size, _ in plan:
        base = {k: results[(label, 0.0, k)]["bw"] for k in ("tern", "rxe")}
        for pct in losses:
            t, x = results[(label, pct, "tern")], results[(label, pct, "rxe")]
            cells = [label, pct_str(pct), fmt(t["bw"], "%.2f"), fmt(x["bw"], "%.2f"),
                     fmt(t["bw"] / x["bw"] if t["bw"] and x["bw"] else None, "%.2f"),
                     fmt(t["bw"] / base["tern"] if t["bw"] and base["tern"] else None, "%.2f"),
                     fmt(x["bw"] / base["rxe"] if x["bw"] and base["rxe"] else None, "%.2f"),
                     fmt(t.get("wire_loss"), "%.3f"), fmt(x.get("wire_loss"), "%.3f")]
            for kind, name, _ in COUNTERS:
                cells.append(fmt((t if kind == "tern" else x).get(name), "%d"))
            print(" ".join("%*s" % (-w if i == 0 else w, v) for i, (w, v) in enumerate(zip(
                widths, cells))))
    if args.sr:
        print("\ntern with selective repeat (roce_selective_repeat on both guests) against "
              "go-back-N, same run")
        head = ("measure", "loss%", "GBN MB/s", "SR MB/s", "SR/GBN", "GBN kept", "SR kept",
                "SR wire%") + tuple(h for _, _, h in SR_COUNTERS)
        widths = (13, 6, 9, 9, 7, 9, 8, 9, 10, 10)
        print(" ".join("%*s" % (-w if i == 0 else w, h) for i, (w, h) in enumerate(zip(
            widths, head))))
        for label, prog, size, _ in plan:
            g0, s0 = results[(label, 0.0, "tern")]["bw"], results[(label, 0.0, "tern-sr")]["bw"]
            for pct in losses:
                g, r = results[(label, pct, "tern")], results[(label, pct, "tern-sr")]
                cells = [label, pct_str(pct), fmt(g["bw"], "%.2f"), fmt(r["bw"], "%.2f"),
                         fmt(r["bw"] / g["bw"] if r["bw"] and g["bw"] else None, "%.2f"),
                         fmt(g["bw"] / g0 if g["bw"] and g0 else None, "%.2f"),
                         fmt(r["bw"] / s0 if r["bw"] and s0 else None, "%.2f"),
                         fmt(r.get("wire_loss"), "%.3f")] + [
                             fmt(r.get(name), "%d") for _, name, _ in SR_COUNTERS]
                print(" ".join("%*s" % (-w if i == 0 else w, v) for i, (w, v) in enumerate(
                    zip(widths, cells))))
    print(load.line())
    if notes:
        print("\nnotes:")
        for line in notes:
            print("  " + line)
    rows = [dict(r, measure=label, op=prog[3:-3] + ("-srq" if extra else ""), size=size,
                 loss_pct=pct, peer=key)
            for label, prog, size, extra in plan for pct in losses
            for key in ("tern", "tern-sr", "rxe") if (label, pct, key) in results
            for r in [results[(label, pct, key)]]]
    peers = [("tern", "tern NIC, go-back-N; loss by its wire fault injection "
              "(debugfs wire_faults/drop_ppm) on both guests' transmit side")]
    if args.sr:
        peers.append(("tern-sr", "tern NIC with selective repeat (devlink "
                      "roce_selective_repeat, agreed through ECE: perftest -R), the same "
                      "loss"))
    peers.append(("rxe", "Soft-RoCE on QEMU's virtio-net, go-back-N; loss by netem on both "
                  "guests' transmit side"))
    doc = bres.document(
        "loss", rows, load, peers,
        {"runs": args.runs, "seconds": seconds, "loss_pct": losses, "quick": args.quick,
         "sr": args.sr, "guests": "2 x QEMU TCG, 1 vCPU"},
        kernel=bres.guest_kernel(), notes=notes)
    bres.save(doc, bres.out_dir("loss", args.out))


if __name__ == "__main__":
    main()
