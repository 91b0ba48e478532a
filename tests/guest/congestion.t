#!/usr/bin/python3
"""Lossless RoCE on a congested fabric, in guests (issue 6): three guests with tern NICs
joined by tern-switch (the switch model in real time, scripts/harness/fabric.py), two
ib_write_bw senders (node1, node2) to one receiver (node0) at once, so that the receiver's
switch port is the bottleneck (2:1). Set up as an administrator would on every guest:
``dcb pfc set dev IF prio-pfc 3:on``, ``dcb app add dev IF dscp-prio 26:3 48:6`` and DCQCN
on priority 3 through the devlink params roce_rp_enable / roce_np_enable (8 = on, 0 = off),
with DCQCN's time constants scaled to this slow fabric through debugfs cc_params/ (read back
from the firmware; tests/rdma/congestiontest.py, DCQCN_PARAMS: with ConnectX's defaults, made for microsecond
round trips, DCQCN barely changes anything here). The switch trusts DSCP with the same map,
RED/ECN-marks priority 3 (Kmin 16 KiB, Kmax 96 KiB, Pmax 20 %), sends PFC for it per ingress
(XOFF 256 KiB, XON 128 KiB) and serves the CNPs' priority 6 strictly. Link rate: 100 Mb/s on every switch port and NIC (QEMU `speed`), low
enough that two TCG-emulated senders overload the receiver's port on a 2-core host (see
tests/rdma/congestiontest.py for the measurements behind that choice).

1. PFC on, DCQCN off: the switch pauses the senders (XOFF counted by the switch, and
   rx_prio3_pause by the senders' NICs), nothing is lost: no drop at the switch (lossless or
   other), no retransmission, no out-of-sequence packet, both ib_write_bw runs complete; no
   ECN marks and no CNPs (data is not ECN-capable without DCQCN).
2. PFC on, DCQCN on: the switch marks ECN, the receiver sends CNPs (np_cnp_sent) and both
   senders handle them (rp_cnp_handled), the two flows share the bottleneck fairly (Jain's
   index of the bytes each sender's NIC sent, tx_roce_bytes, >= 0.9, i.e. no worse than about
   65:35; not of perftest's -D reports, which can read 0.00 MB/s for a flow that moved as
   much as the other), the switch pauses the
   senders at most half as many times as in run 1 (measured: 10-18x fewer; judged only when
   run 1 is a congestion baseline, XOFF_BASELINE pauses or more: run 1 is measured again
   once when it falls short, and a second short run skips this one check), the bottleneck
   FIFO's median depth is at most half (measured: ~65 vs ~390 KiB), and still nothing is
   lost.
3. PFC on, HPCC on instead of DCQCN (roce_hpcc_enable 8 on every guest, tern-switch filling
   INT records for priority 3): the switch adds telemetry to the requests, node0 echoes it in
   its ACKs, both senders take it and update their windows, `rdma -dd res show qp` shows
   each sender's QP with HPCC's window, rate and utilisation (and no DCQCN fields), nothing
   is lost, no ECN and no CNP. HPCC's base RTT here is 10 ms (tests/rdma/congestiontest.py
   HPCC_PARAMS: a TCG guest's round trip is milliseconds).
4. PFC on, TIMELY on instead (roce_timely_enable 8 on every guest; its times scaled to the
   TCG fabric, tests/rdma/congestiontest.py TIMELY_PARAMS): both senders measure round trips
   (timely_rtt_samples) and change their rates, `rdma -dd res show qp` shows each sender's
   QP with TIMELY's rate and last RTT (and no DCQCN or HPCC fields), nothing is lost, no ECN,
   no CNP, no INT. Its figures (throughput, queue) are reported, not judged: TIMELY's
   parameters here are scaled, not tuned.

bench/congestion.py runs the same and prints the figures side by side. Stock kernel only (the
fabric's behaviour does not depend on the kernel flavour, and the debug kernel is too slow to
congest anything). TERN_CONGESTION_MBPS / TERN_CONGESTION_SECONDS override the link rate and
the run length.
"""

import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(TOP, "tests", "lib"), os.path.join(TOP, "scripts"),
                os.path.join(TOP, "tests", "rdma")]

from tap import Tap  # noqa: E402
from harness import HarnessError, paths  # noqa: E402
from ternlib import check_kernel_clean  # noqa: E402
import congestiontest as ct  # noqa: E402
import rdmatest as rt  # noqa: E402

LINK_MBPS = int(os.environ.get("TERN_CONGESTION_MBPS", ct.LINK_MBPS))
SECONDS = int(os.environ.get("TERN_CONGESTION_SECONDS", "12"))
JAIN_MIN = 0.9
# The DCQCN-off run is a congestion baseline when the switch paused the senders at least this
# often (an idle host: about 400 XOFF in 12-15 s). Fewer, and the loaded host's emulated
# senders did not drive the port into congestion: the run is measured again, and the
# comparison of pauses with DCQCN on is judged only against a baseline.
XOFF_BASELINE = 20

t = Tap()
if paths.flavour() == "debug":
    t.skip_all("the fabric runs on the stock kernel (see the docstring)")
c = ct.cluster(LINK_MBPS, pfc=True, name="congestion")
try:
    c.boot()
except HarnessError as e:
    t.abort("cluster did not boot: %s" % e)

fab = ct.Fabric(c)
try:
    why = fab.target.available(c[0])
    if why:
        t.skip_all(why)
    try:
        fab.setup()
    except (rt.RdmaError, ct.Setup, HarnessError) as e:
        t.abort("setup failed: %s" % e)
    t.ok(True, "3 guests through tern-switch (%d Mb/s): tern0 ACTIVE everywhere, "
         "dscp-prio 26:3 48:6 set" % LINK_MBPS)
    for n in c:
        r = n.run("dcb app show dev %s dscp-prio" % fab.target.netdev[n.index], timeout=30)
        t.ok(r.rc == 0 and "26:3" in r.stdout and "48:6" in r.stdout,
             "%s: dcb app shows dscp-prio 26:3 48:6" % n.name, r.stdout, r.stderr)

    runs = []
    for label, dcqcn, hpcc, timely in (("DCQCN off", False, False, False),
                                       ("DCQCN on", True, False, False),
                                       ("HPCC on", False, True, False),
                                       ("TIMELY on", False, False, True)):
        try:
            shown = fab.configure(pfc=True, dcqcn=dcqcn, hpcc=hpcc, timely=timely)
        except ct.Setup as e:
            t.abort("configuring %s failed: %s" % (label, e))
        want = {"roce_rp_enable": 8 if dcqcn else 0, "roce_np_enable": 8 if dcqcn else 0,
                "roce_hpcc_enable": 8 if hpcc else 0, "roce_timely_enable": 8 if timely else 0}
        good = all("3:on" in pfc and params == want for pfc, params in shown.values())
        t.ok(good, "%s: every guest shows prio-pfc 3:on and %s" % (
            label, ", ".join("%s %d" % kv for kv in want.items())), repr(shown))
        run = ct.incast(fab, label, SECONDS)
        if not dcqcn and not hpcc and not timely and run.ok and \
                run.xoff_sent() < XOFF_BASELINE:
            # Without congestion control two senders overload the port only when both are
            # sending at once at their NICs' rate; on a loaded host (the suite's debug half
            # beside it) the emulated senders can fall short for a whole run. Not the
            # behaviour under test: measure again, once; the checks below take that run.
            t.diag("%s: the bottleneck queue peaked at %.0f KiB (XOFF at %d KiB), %d XOFF "
                   "sent (a baseline has %d or more): the senders did not overload the port "
                   "(host load?); running it again" % (
                       label, run.bottleneck()["max_bytes"] / 1024.0,
                       ct.switch_config()["xoff_bytes"] >> 10, run.xoff_sent(), XOFF_BASELINE))
            run = ct.incast(fab, label, SECONDS)
        runs.append(run)
        t.ok(run.ok, "%s: both ib_write_bw flows (%d s, 64 KiB writes, DSCP 26) completed "
             "(%s MB/s)" % (label, SECONDS, " + ".join(
                 "%.2f" % v if v is not None else "-" for v in run.flows.values())),
             ct.diag(run))
    off, on, hp, tl = runs
    if fab.stale_acks:
        t.diag("iproute2 6.1's stale-ACK race hit %d 'dcb pfc set' (checked by show; "
               "tests/lib/ternlib.py DCB_STALE_ACK)" % fab.stale_acks)
    ct.save(runs, os.path.join(c.result_dir, "congestion.json"))
    t.diag("figures (PFC on in both runs; all of them in %s/congestion.json):\n%s" % (
        c.result_dir, ct.side_by_side(runs)))

    # --- PFC on, DCQCN off: pauses, nothing lost ------------------------------------------------
    t.ok(off.xoff_sent() > 0 and off.nic_pauses() > 0,
         "DCQCN off: the switch paused the senders on priority 3 (%d XOFF sent, %d received "
         "by the senders' NICs)" % (off.xoff_sent(), off.nic_pauses()))
    for run in (off, on, hp, tl):
        lost = run.lost()
        t.ok(run.lossless_drops() == 0 and run.switch_drops() == 0 and run.sock_drops == 0,
             "%s: no frame dropped at the switch (%d lossless, %d in all, %d at its sockets)" % (
                 run.label, run.lossless_drops(), run.switch_drops(), run.sock_drops))
        t.ok(not any(lost.values()), "%s: nothing lost: no retransmission, out-of-sequence "
             "packet or ACK timeout on any node" % run.label, repr(lost))
    t.ok(off.ecn_marked() == 0 and off.rdma(ct.RECEIVER, "np_cnp_sent") == 0,
         "DCQCN off: data not ECN-capable: no ECN marks (%d), no CNPs (%d)" % (
             off.ecn_marked(), off.rdma(ct.RECEIVER, "np_cnp_sent")))
    seen = [v for s in ct.SENDERS for v in off.qp_cc.get(s, [])]
    t.ok(seen and all(rate == 0 for rate, _ in seen),
         "DCQCN off: rdma -dd res show qp shows the senders' QPs never rate-limited "
         "(drv_dcqcn_rate_mbps 0 in %d samples)" % len(seen), repr(off.qp_cc))

    # --- DCQCN on: CNPs, fairness, fewer pauses ----------------------------------------------
    cnp_sent = on.rdma(ct.RECEIVER, "np_cnp_sent")
    handled = {s: on.rdma(s, "rp_cnp_handled") for s in ct.SENDERS}
    t.ok(on.ecn_marked() > 0 and on.rdma(ct.RECEIVER, "np_ecn_marked_roce_packets") > 0,
         "DCQCN on: the switch marked ECN (%d) and node0 counted CE packets (%d)" % (
             on.ecn_marked(), on.rdma(ct.RECEIVER, "np_ecn_marked_roce_packets")))
    t.ok(cnp_sent > 0, "DCQCN on: node0 sent CNPs (np_cnp_sent %d)" % cnp_sent)
    t.ok(all(v > 0 for v in handled.values()), "DCQCN on: both senders handled CNPs "
         "(rp_cnp_handled %s)" % " / ".join(str(v) for v in handled.values()))
    t.ok(on.sum_rdma("rp_rate_decrease_events", ct.SENDERS) > 0,
         "DCQCN on: the senders cut their rates (%d rate decrease events)" %
         on.sum_rdma("rp_rate_decrease_events", ct.SENDERS))
    limited = {s: [r for r, _ in on.qp_cc.get(s, []) if 0 < r < LINK_MBPS] for s in ct.SENDERS}
    t.ok(all(limited.values()), "DCQCN on: rdma -dd res show qp shows each sender's QP held "
         "below the %d Mb/s link by DCQCN (lowest drv_dcqcn_rate_mbps: %s)" % (
             LINK_MBPS, " / ".join(str(min(v)) if v else "never" for v in limited.values())),
         repr(on.qp_cc))
    t.ok(on.ok and on.jain >= JAIN_MIN, "DCQCN on: the two flows share the bottleneck fairly "
         "(Jain index %.3f >= %.2f, of the MB/s each sender's NIC put on the wire: %s)" % (
             on.jain, JAIN_MIN, " + ".join("%.2f" % v for v in on.wire_flows.values()) or "-"),
         "perftest reported %r" % on.flows)
    fewer = "DCQCN on: at most half the PFC pauses of DCQCN off"
    if off.xoff_sent() >= XOFF_BASELINE:
        t.ok(on.xoff_sent() * 2 <= off.xoff_sent(), "%s (XOFF sent by the switch: %d vs %d; "
             "senders' rx_prio3_pause: %d vs %d)" % (
                 fewer, on.xoff_sent(), off.xoff_sent(), on.nic_pauses(), off.nic_pauses()))
    else:
        t.skip(fewer, "no baseline: the DCQCN-off run, measured twice, sent %d XOFF (fewer "
               "than %d): the loaded host's senders did not congest the port" % (
                   off.xoff_sent(), XOFF_BASELINE))
    t.ok(on.bottleneck()["p50_bytes"] * 2 <= off.bottleneck()["p50_bytes"],
         "DCQCN on: the bottleneck FIFO's median depth is at most half (%d KiB vs %d KiB)" % (
             on.bottleneck()["p50_bytes"] // 1024, off.bottleneck()["p50_bytes"] // 1024))

    # --- HPCC on: telemetry inserted and echoed, windows follow it, nothing lost --------------
    echoes = hp.rdma(ct.RECEIVER, "hpcc_int_echoes_sent")
    acks = {s: hp.rdma(s, "hpcc_int_echo_acks") for s in ct.SENDERS}
    updates = {s: hp.rdma(s, "hpcc_window_updates") for s in ct.SENDERS}
    t.ok(off.int_hops() == 0 and on.int_hops() == 0 and hp.int_hops() > 0,
         "HPCC on: the switch filled INT records into the requests (%d; none in the DCQCN "
         "runs)" % hp.int_hops())
    t.ok(echoes > 0 and all(v > 0 for v in acks.values()),
         "HPCC on: node0 echoed the telemetry (%d ACKs) and both senders took it (%s)" % (
             echoes, " / ".join(str(v) for v in acks.values())))
    t.ok(all(v > 0 for v in updates.values()),
         "HPCC on: both senders' windows followed it (hpcc_window_updates %s)" %
         " / ".join(str(v) for v in updates.values()))
    hview = {s: hp.qp_hpcc.get(s, []) for s in ct.SENDERS}
    t.ok(all(hview.values()) and all(w > 0 and u > 0 for v in hview.values() for w, _, u in v)
         and not any(hp.qp_cc.get(s) for s in ct.SENDERS) and
         not any(on.qp_hpcc.get(s) for s in ct.SENDERS),
         "HPCC on: rdma -dd res show qp shows each sender's QP under HPCC (drv_hpcc_window, "
         "drv_hpcc_util measured; no DCQCN fields) and the DCQCN run's under DCQCN "
         "(window / rate Mb/s / U: %s)" % "; ".join(
             "%s %s" % (s, ", ".join("%d/%d/%d" % x for x in v[:4]) or "never")
             for s, v in hview.items()), repr(hview))
    t.ok(hp.sum_rdma("rx_int_discards") == 0 and hp.ecn_marked() == 0 and
         hp.rdma(ct.RECEIVER, "np_cnp_sent") == 0,
         "HPCC on: no INT frame discarded, no ECN mark and no CNP (DCQCN is off)",
         "rx_int_discards %d, ECN %d, CNP %d" % (hp.sum_rdma("rx_int_discards"),
                                                 hp.ecn_marked(),
                                                 hp.rdma(ct.RECEIVER, "np_cnp_sent")))

    # --- TIMELY on: round trips measured, rates set from them, shown per QP ------------------
    samples = {s: tl.rdma(s, "timely_rtt_samples") for s in ct.SENDERS}
    moves = {s: tl.rdma(s, "timely_rate_decreases") + tl.rdma(s, "timely_rate_increases")
             for s in ct.SENDERS}
    t.ok(all(v > 0 for v in samples.values()) and all(v > 0 for v in moves.values()) and
         all(r.rdma(s, "timely_rtt_samples") == 0 for r in (off, on, hp) for s in ct.SENDERS),
         "TIMELY on: both senders measured round trips (timely_rtt_samples %s) and moved their "
         "rates (%s cuts + increases); none in the other runs" % (
             " / ".join(str(v) for v in samples.values()),
             " / ".join(str(v) for v in moves.values())))
    tview = {s: tl.qp_timely.get(s, []) for s in ct.SENDERS}
    t.ok(all(tview.values()) and all(any(rtt > 0 for _, rtt, _ in v) for v in tview.values())
         and all(0 < rate <= LINK_MBPS for v in tview.values() for rate, _, _ in v) and
         not any(tl.qp_cc.get(s) or tl.qp_hpcc.get(s) for s in ct.SENDERS) and
         not any(r.qp_timely.get(s) for r in (off, on, hp) for s in ct.SENDERS),
         "TIMELY on: rdma -dd res show qp shows each sender's QP under TIMELY "
         "(drv_timely_rate_mbps, drv_timely_rtt_ns measured; no DCQCN or HPCC fields), and no "
         "other run's (rate Mb/s / RTT us: %s)" % "; ".join(
             "%s %s" % (s, ", ".join("%d/%d" % (x[0], x[1] // 1000) for x in v[:4]) or "never")
             for s, v in tview.items()), repr(tview))
    t.ok(tl.ecn_marked() == 0 and tl.rdma(ct.RECEIVER, "np_cnp_sent") == 0 and
         tl.int_hops() == 0,
         "TIMELY on: no ECN mark, CNP or INT record (DCQCN and HPCC are off)",
         "ECN %d, CNP %d, INT %d" % (tl.ecn_marked(), tl.rdma(ct.RECEIVER, "np_cnp_sent"),
                                     tl.int_hops()))

    check_kernel_clean(t, c)
finally:
    c.close()
t.exit()
