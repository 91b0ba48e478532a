#!/usr/bin/python3
"""TIMELY (issue 42; Documentation/hw/congestion.rst "TIMELY") at the N:1 incast, in virtual time
on the host (model/fabric/sim.c, --cc timely). For N = 2, 8, 16 at path MTU 4096 and 1024,
the same deterministic incast runs with TIMELY (timely_en on priority 3, its default
parameters) and with no congestion control (PFC only). Every run must lose nothing (switch
and NICs), retransmit nothing and complete every WRITE with the data intact. The TIMELY run
must also show:

  - TIMELY working: RTT samples taken, the rate cut and raised (its counters at the
    senders); no ECN mark and no CNP (TIMELY needs neither);
  - the bottleneck queue kept down: its p99 at most 1/4 of the run without CC (which sits
    at PFC's XOFF level, 0.5-4 MB), and below T_high's worth of queue at the line rate
    (100 us x 40 Gb/s, 500 KB), which is where TIMELY cuts whatever the gradient says.

Finite flows (N = 4, 8 MiB each, TIMELY): every flow completes, its data intact. A negative
control (N = 8, MTU 4096, t_low 10 ms and t_high 20 ms: every sample reads as an empty
fabric, so TIMELY only ever adds delta) must fail the queue assertions. A short run of the
ASan/UBSan build with TIMELY checks for memory errors and leaks.

On ns-3 (tern-ns3-incast, when libns3-dev is installed), N = 4 and 8 for 20 ms: the TIMELY
run loses nothing, keeps the data intact and its queue p99 below 1/4 of ns-3's run without
CC, and agrees with tern-sim's TIMELY run of the same seed (the bottleneck's throughput
within 2 %, the queue p99 within one 4 KB frame)."""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

TOP = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
from simtest import negative_control, ns3_triples, run_json, san_run  # noqa: E402
from tap import Tap  # noqa: E402

SIM = os.path.join(TOP, "model", "build", "fabric", "tern-sim")
SIM_SAN = os.path.join(TOP, "model", "build", "fabric", "san", "tern-sim")
NS3 = os.path.join(TOP, "model", "build", "ns3", "tern-ns3-incast")
NS3_SIZES = (4, 8)
SIZES = [int(x) for x in os.environ.get("TERN_TIMELY_N", "2 8 16").split()]
MTUS = (5, 3)                   # path MTU codes: 4096, 1024
DURATION_US = 20000
QUEUE_RATIO = 4                 # p99(no CC) >= QUEUE_RATIO * p99(TIMELY)
T_HIGH_KB = 100e-6 * 40e9 / 8 / 1024    # T_high (100 us) of queue at 40 Gb/s, in KiB
NEG = ["--cc", "timely_t_low=10000000", "--cc", "timely_t_high=20000000"]


def run(n, mtu, cc, *extra):
    """cc: "timely" or "none" (PFC only)."""
    cmd = ["nice", SIM, "--n", str(n), "--mtu", str(mtu), "--duration-us", str(DURATION_US),
           "--quiet", "--cc", cc] + list(extra)
    return run_json(cmd, 600)


def common_checks(r, tag):
    return [
        (r["dcb_ok"] and r["cc_ok"] and r["pfc_stats_ok"],
         "%s: SET_DCB, SET_CC_PARAMS, QUERY_PFC_STATS accepted" % tag),
        (r["lossless_drops"] == 0 and r["switch_drops"] == 0 and r["nic_rx_discards"] == 0,
         "%s: nothing dropped (switch lossless %d, switch %d, NIC %d)"
         % (tag, r["lossless_drops"], r["switch_drops"], r["nic_rx_discards"])),
        (r["retrans_pkts"] == 0 and r["ack_timeouts"] == 0,
         "%s: no retransmission (%d) or ACK timeout (%d)"
         % (tag, r["retrans_pkts"], r["ack_timeouts"])),
        (r["write_errors"] == 0 and r["writes_completed"] > 0 and r["data_ok"],
         "%s: %d WRITEs completed OK, data intact" % (tag, r["writes_completed"])),
    ]


def timely_checks(t, none, tag):
    """TIMELY run t against the run without CC."""
    return [
        (t["timely"] and t["timely_rtt_samples"] > 0 and t["timely_rate_decreases"] > 0 and
         t["timely_rate_increases"] > 0,
         "%s: TIMELY samples %d, rate cuts %d, increases %d"
         % (tag, t["timely_rtt_samples"], t["timely_rate_decreases"],
            t["timely_rate_increases"])),
        (t["ecn_marked"] == 0 and t["cnp_sent"] == 0,
         "%s: no ECN mark (%d) or CNP (%d)" % (tag, t["ecn_marked"], t["cnp_sent"])),
        (t["queue_p99_kb"] * QUEUE_RATIO <= none["queue_p99_kb"],
         "%s: queue p99 %.1f KB, at most 1/%d of no CC's %.1f KB"
         % (tag, t["queue_p99_kb"], QUEUE_RATIO, none["queue_p99_kb"])),
        (t["queue_p99_kb"] < T_HIGH_KB,
         "%s: queue p99 %.1f KB, below T_high's %.0f KB" % (tag, t["queue_p99_kb"], T_HIGH_KB)),
    ]


def run20(prog, n, cc):
    """The ns-3 comparison's runs (20 ms, RED seed 1, MTU 4096)."""
    cmd = ["nice", prog, "--n", str(n), "--duration-us", "20000", "--seed", "1", "--quiet"] + \
        (["--timely", "on"] if cc == "timely" else ["--dcqcn", "off"])
    return run_json(cmd, 300, 2000)


def ns3_part(t):
    """TIMELY on ns-3 against ns-3 without CC and against tern-sim's TIMELY."""
    if not os.path.exists("/usr/include/ns3/core-module.h"):
        t.diag("libns3-dev is not installed: no ns-3 runs")
        return
    got = ns3_triples(t, os.path.join(TOP, "model", "ns3"), lambda n: (
        ("tern-ns3-incast timely", lambda: run20(NS3, n, "timely")),
        ("tern-ns3-incast none", lambda: run20(NS3, n, "none")),
        ("tern-sim timely", lambda: run20(SIM, n, "timely"))), NS3_SIZES)
    for n, (h, d, s) in sorted(got.items()):
        tag = "ns-3 N=%d" % n
        t.diag("%s TIMELY: total %.2f Gb/s, Jain %.4f, queue p99 %.1f KB; tern-sim %.2f, "
               "%.4f, %.1f" % (tag, h["total_gbps"], h["jain"], h["queue_p99_kb"],
                               s["total_gbps"], s["jain"], s["queue_p99_kb"]))
        checks = common_checks(h, tag + " TIMELY") + [
            (h["refused_frames"] == 0 and h["timely_rtt_samples"] > 0,
             "%s TIMELY: no frame refused (%d), RTT samples %d"
             % (tag, h["refused_frames"], h["timely_rtt_samples"])),
            (h["queue_p99_kb"] * QUEUE_RATIO <= d["queue_p99_kb"],
             "%s: TIMELY queue p99 %.1f KB, at most 1/%d of no CC's %.1f KB"
             % (tag, h["queue_p99_kb"], QUEUE_RATIO, d["queue_p99_kb"])),
            (abs(h["total_gbps"] - s["total_gbps"]) <= 0.02 * s["total_gbps"],
             "%s: TIMELY bottleneck %.2f Gb/s, tern-sim %.2f (within 2 %%)"
             % (tag, h["total_gbps"], s["total_gbps"])),
            (abs(h["queue_p99_kb"] - s["queue_p99_kb"]) <= 4.1,
             "%s: TIMELY queue p99 %.1f KB, tern-sim %.1f (within a 4 KB frame)"
             % (tag, h["queue_p99_kb"], s["queue_p99_kb"])),
        ]
        for cond, desc in checks:
            t.ok(cond, desc)


def main():
    t = Tap()
    build = subprocess.run(["nice", "make", "-s", "-C", os.path.join(TOP, "model", "fabric"),
                            "sim", "sim-san"], stdout=sys.stderr, stderr=sys.stderr)
    if build.returncode:
        t.abort("the fabric simulator builds (see stderr)")
    jobs = [(n, mtu, cc) for mtu in MTUS for n in SIZES for cc in ("timely", "none")]
    res = {}
    with ThreadPoolExecutor(max_workers=2) as ex:
        futs = {job: ex.submit(run, *job) for job in jobs}
        fin = ex.submit(run, 4, 5, "timely", "--flow-bytes", str(8 << 20),
                        "--duration-us", "200000")
        neg = ex.submit(run, 8, 5, "timely", *NEG)
        for job, f in futs.items():
            try:
                res[job] = f.result()
            except Exception as e:  # noqa: BLE001
                t.ok(False, "run N=%d MTU %d %s" % (job[0], 128 << job[1], job[2]), str(e))
    for mtu in MTUS:
        for n in SIZES:
            tl, none = res.get((n, mtu, "timely")), res.get((n, mtu, "none"))
            if not tl or not none:
                continue
            tag = "N=%d MTU %d" % (n, 128 << mtu)
            for name, r in (("TIMELY", tl), ("no CC", none)):
                t.diag("%s %s: total %.2f Gb/s, Jain %.4f, queue p50 %.1f p99 %.1f KB, XOFF %d"
                       % (tag, name, r["total_gbps"], r["jain"], r["queue_p50_kb"],
                          r["queue_p99_kb"], r["switch_xoff"]))
            for cond, desc in common_checks(tl, tag + " TIMELY") + \
                    common_checks(none, tag + " no CC") + timely_checks(tl, none, tag):
                t.ok(cond, desc)
    # finite flows: each one ends, its data intact
    try:
        r = fin.result()
        t.diag("4 flows of 8 MiB with TIMELY: completion times %s us, run %.0f us"
               % (", ".join("%.0f" % x for x in r["fct_us"]), r["run_us"]))
        for cond, desc in common_checks(r, "4 x 8 MiB TIMELY"):
            t.ok(cond, desc)
        t.ok(len(r["fct_us"]) == 4 and all(x > 0 for x in r["fct_us"]) and
             r["flow_data"] == [1] * 4,
             "4 x 8 MiB TIMELY: every flow completed (%s), data intact (%s)"
             % (r["fct_us"], r["flow_data"]))
    except Exception as e:  # noqa: BLE001
        t.ok(False, "finite flows", str(e))
    # the negative control: thresholds that read every sample as an empty fabric
    try:
        bad = neg.result()
        none8 = res.get((8, 5, "none")) or run(8, 5, "none")
        failed = [desc for c, desc in timely_checks(bad, none8, "N=8 MTU 4096 T_low 10 ms")
                  if not c]
        negative_control(t, sum("queue p99" in f for f in failed) == 2,
                         "negative control (N=8, t_low 10 ms, t_high 20 ms) fails %d "
                         "assertion(s)" % len(failed), failed)
    except Exception as e:  # noqa: BLE001
        t.ok(False, "negative control", str(e))
    ns3_part(t)
    r, err = san_run(["nice", SIM_SAN, "--n", "3", "--cc", "timely", "--duration-us", "3000",
                      "--quiet"], 600)
    t.ok(r is not None and r["data_ok"] and r["write_errors"] == 0 and
         r["writes_completed"] > 0 and r["timely_rtt_samples"] > 0,
         "sanitized run (N=3, TIMELY, 3 ms) clean", err)
    return t.exit()


if __name__ == "__main__":
    sys.exit(main())
