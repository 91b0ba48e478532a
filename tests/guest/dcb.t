#!/usr/bin/python3
"""tern's admin interface for lossless RoCE, between two guests: ``dcb pfc``, ``dcb ets`` and
``dcb app`` (DSCP) show exactly what was set and the firmware runs it (debugfs ``dcb`` reads it
back from the device); invalid settings are refused with a clear message; the 34 congestion-control parameters
(DCQCN, HPCC, TIMELY) have their defaults: ``devlink dev param`` lists exactly the six that
must match the fabric (which priorities run DCQCN's reaction and notification points, HPCC or
TIMELY, the CNPs' DSCP and PCP) and debugfs ``cc_params/`` has the 28 tuning constants, a file
each; both take valid values (into the firmware, read back from it), keep DCQCN's reaction
point, HPCC and TIMELY off each other's priorities, and refuse out-of-range ones (devlink: ERANGE with an extack message,
debugfs: EINVAL), leaving the value as it was; everything survives ``devlink dev reload``
and a device recovery (``devlink health test``), which keep the netdev as it was (name,
ifindex, MTU, address, route, qdisc; the counters go on); ``ethtool -S`` has the PFC counters and
``ethtool --set-tunable pfc-prevention-tout`` the storm guard; a peer that floods PFC frames
for priority 3 is reported as a PFC storm and counted, and the storm's end too; the devlink
health reporter ``pfc`` is in error while the storm lasts (its diagnosis names the priority)
and healthy after it."""

import json
import os
import re
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(TOP, "tests", "lib"), os.path.join(TOP, "scripts")]

from tap import Tap  # noqa: E402
from harness import Cluster, HarnessError, Wire  # noqa: E402
from ternlib import (carrier, check_kernel_clean, dcb_write, ethtool_stats,  # noqa: E402
                     wait_for)

# The driver's congestion-control defaults (Documentation/admin/tern_core.rst): DCQCN on
# every priority, HPCC and TIMELY on none, the rest as include/linux/tern/tern_dcb.h's
# TERN_CC_DEF_*. devlink params: what must match the fabric.
DL_DEFAULTS = {"roce_rp_enable": 255, "roce_np_enable": 255, "roce_hpcc_enable": 0,
               "roce_timely_enable": 0, "cnp_dscp": 48, "cnp_802p_prio": 6}
# debugfs cc_params/ files (mlx5_ib's names where the meaning is the same): the tuning.
CCP_DEFAULTS = {
    "rp_time_reset": 300, "rp_byte_reset": 32767, "rp_threshold": 1, "rp_max_rate": 0,
    "rp_ai_rate": 5, "rp_hai_rate": 50, "rp_gd": 11, "rp_min_dec_fac": 50, "rp_min_rate": 1,
    "rp_rate_to_set_on_first_cnp": 0, "rp_dce_tcp_g": 1019, "rp_dce_tcp_rtt": 1,
    "rp_rate_reduce_monitor_period": 4, "rp_initial_alpha_value": 1023,
    "np_min_time_between_cnps": 4,
    # HPCC (Documentation/hw/congestion.rst): TERN_CC_DEF_HPCC_*
    "hpcc_max_stage": 5, "hpcc_eta": 950, "hpcc_ai_rate": 100, "hpcc_base_rtt": 12000,
    # TIMELY (Documentation/hw/congestion.rst): TERN_CC_DEF_TIMELY_*
    "timely_hai_thresh": 5, "timely_alpha": 896, "timely_beta": 819, "timely_delta": 40,
    "timely_t_low": 25000, "timely_t_high": 100000, "timely_min_rtt": 12000,
    "timely_seg": 16384, "timely_min_rate": 100,
}
CC_DEFAULTS = dict(DL_DEFAULTS, **CCP_DEFAULTS)
CC_SET = {"rp_ai_rate": 10, "roce_np_enable": 8, "cnp_dscp": 46, "rp_time_reset": 1000}

PFC_SET = "prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off"
ETS_SET = {
    "tc-tsa": "0:ets 1:ets 2:strict 3:ets 4:ets 5:ets 6:strict 7:ets",
    "tc-bw": "0:40 1:0 2:0 3:60 4:0 5:0 6:0 7:0",
    "prio-tc": "0:0 1:0 2:0 3:3 4:0 5:0 6:6 7:0",
}
APP_SET = "26:3 48:6"
PFC_PRIO_STATS = ["rx_prio%d_" + s for s in ("packets", "bytes", "pause", "pause_duration",
                                            "pause_transition", "discards")] + \
                 ["tx_prio%d_" + s for s in ("packets", "bytes", "pause", "pause_duration")]
PFC_PORT_STATS = ["rx_pfc_frames", "tx_pfc_frames", "tx_pause_storm_events",
                  "rx_pause_storm_events", "pfc_storm_detected", "pfc_storm_recovered"]
STORM_MS = 100
# Counters a reset must not take back to zero: the port's (hardware) and the netdev's.
KEPT_COUNTERS = ("hw_tx_frames", "hw_tx_bytes", "hw_rx_frames", "hw_rx_bytes", "tx_packets",
                 "rx_packets")

t = Tap()
# 1 Gb/s: a pause quantum is 512 ns, 65535 of them 33.5 ms, so a PFC frame per millisecond
# keeps a priority paused without a gap even when the sending guest is descheduled.
SPEED = 1000
c = Cluster(nodes=2, wires=[Wire("tern", test_hooks=True, props={"speed": SPEED})], name="dcb")
try:
    c.boot()
except HarnessError as e:
    t.abort("cluster did not boot: %s" % e)

n0, n1 = c[0], c[1]


def pairs(text, label):
    """The ``k:v`` tokens of the line of ``dcb ... show`` output that starts with ``label``."""
    for line in text.splitlines():
        words = line.split()
        if words and words[0] == label:
            return " ".join(words[1:])
    return None


def dcb_show(node, dev, obj, label):
    r = node.run("dcb -N %s show dev %s %s" % (obj, dev, label))
    return pairs(r.stdout, label) if r.rc == 0 else "error: %s" % r.stderr.strip()


def fw(node, bdf):
    """The debugfs dcb file (what the firmware runs) as a dict key -> value string."""
    r = node.run("cat /sys/kernel/debug/tern/%s/dcb" % bdf)
    out = {}
    for line in r.stdout.splitlines():
        k, _, v = line.partition(":")
        out[k.strip()] = v.strip()
    return out


def params(node, dl):
    """``devlink dev param show`` (the params of device ``dl``) as name -> runtime value."""
    r = node.run("devlink -j dev param show")
    if r.rc != 0:
        return {"error": r.stderr.strip()}
    out = {}
    for p in json.loads(r.stdout)["param"].get(dl, []):
        for v in p.get("values", []):
            if v.get("cmode") == "runtime":
                out[p["name"]] = v["value"]
    return out


def cc_params(node, bdf):
    """The debugfs cc_params/ files (each read queries the firmware) as name -> int."""
    r = node.run("cd /sys/kernel/debug/tern/%s/cc_params && grep -H . *" % bdf)
    if r.rc != 0:
        return {"error": r.stderr.strip()}
    out = {}
    for line in r.stdout.splitlines():
        k, _, v = line.partition(":")
        out[k] = int(v) if v.strip().isdigit() else v
    return out


def set_cc(node, dl, bdf, name, value):
    """Set one congestion-control parameter where it lives: devlink or debugfs."""
    if name in DL_DEFAULTS:
        return node.run("devlink dev param set %s name %s value %d cmode runtime"
                        % (dl, name, value))
    return node.run("echo %s > /sys/kernel/debug/tern/%s/cc_params/%s" % (value, bdf, name))


def health(node, dl, reporter):
    """``devlink health show`` of one reporter, on one line."""
    r = node.run("devlink health show %s reporter %s" % (dl, reporter))
    return " ".join(r.stdout.split()) if r.rc == 0 else "error: " + r.stderr


def kernel_log_since(node, mark):
    return node.dmesg()[mark:]


def iface_state(node, dev):
    """What an admin set up on the interface and expects a reset to keep."""
    q = "/sys/class/net/%s/" % dev
    r = node.run("cat %sifindex %saddress %smtu; echo ---; ip -4 -o addr show dev %s | "
                 "awk '{print $4}'; echo ---; ip -4 route show dev %s; echo ---; "
                 "tc qdisc show dev %s" % (q, q, q, dev, dev, dev))
    return r.stdout.strip() if r.rc == 0 else "error: " + r.stderr


def check_all(node, dev, bdf, dl, when, cc):
    """Everything set so far is still shown by dcb and devlink and run by the firmware."""
    t.eq(dcb_show(node, dev, "pfc", "prio-pfc"), PFC_SET.split(" ", 1)[1],
         "%s: dcb pfc show: prio 3 lossless" % when)
    for label, want in ETS_SET.items():
        t.eq(dcb_show(node, dev, "ets", label), want, "%s: dcb ets show %s" % (when, label))
    t.eq(dcb_show(node, dev, "app", "dscp-prio"), APP_SET,
         "%s: dcb app show dscp-prio" % when)
    f = fw(node, bdf)
    t.ok(f.get("pfc_en") == "0x08" and f.get("prio_tc") == "0 0 0 3 0 0 6 0" and
         f.get("tc_tsa") == "ets ets strict ets ets ets strict ets" and
         f.get("tc_bw") == "40 0 0 60 0 0 0 0" and f.get("dscp_prio") == "26:3 48:6" and
         f.get("trust") == "dscp",
         "%s: the firmware runs the same PFC, ETS and DSCP map (trust dscp)" % when,
         json.dumps(f))
    got = params(node, dl)
    t.eq({k: v for k, v in got.items() if k in DL_DEFAULTS},
         {k: v for k, v in cc.items() if k in DL_DEFAULTS},
         "%s: devlink dev param show: the 6 congestion-control params with their values" % when)
    t.eq(cc_params(node, bdf), {k: v for k, v in cc.items() if k in CCP_DEFAULTS},
         "%s: debugfs cc_params/: the 28 tuning parameters with their values" % when)
    t.ok(all(f.get(k) == str(v) for k, v in cc.items()),
         "%s: the firmware runs the same DCQCN, HPCC and TIMELY parameters" % when,
         {k: f.get(k) for k in cc})


try:
    for n in c:
        r = n.run("modprobe tern_core", timeout=60)
        t.ok(r.rc == 0, "%s: modprobe tern_core" % n.name, r.stderr)
    devs = [n.configure_ip(0) for n in c]
    for n, d in zip(c, devs):
        t.ok(wait_for(lambda: carrier(n, d) == 1, timeout=15), "%s: %s has carrier" % (n.name, d))
    dev = devs[0]
    bdf = n0.run("basename $(readlink -f /sys/class/net/%s/device)" % dev,
                 check=True).stdout.strip()
    dl = "pci/" + bdf
    dbg = "/sys/kernel/debug/tern/%s" % bdf

    # --- defaults ----------------------------------------------------------------------------
    r = n0.run("dcb dcbx show dev %s" % dev)
    t.ok(r.rc == 0 and "host" in r.stdout and "ieee" in r.stdout,
         "dcb dcbx show: host-managed IEEE", r.stdout, r.stderr)
    got = params(n0, dl)
    t.eq({k: v for k, v in got.items() if k in DL_DEFAULTS}, DL_DEFAULTS,
         "devlink dev param show: the 6 congestion-control params that must match the "
         "fabric (RP, NP, HPCC and TIMELY priorities, the CNPs' DSCP and PCP), defaults")
    t.eq(cc_params(n0, bdf), CCP_DEFAULTS,
         "debugfs cc_params/: the 28 DCQCN, HPCC and TIMELY tuning parameters, a file each, "
         "defaults")
    # the only other runtime params: RC loss recovery (Documentation/hw/rdma.rst, "Selective
    # repeat" and "Adaptive retransmit timer"), go-back-N on the configured timeout by
    # default; no tuning constant is a devlink param any more
    t.eq({k: v for k, v in got.items() if k not in DL_DEFAULTS},
         {"roce_selective_repeat": False, "roce_sr_log_cap": 0, "roce_adaptive_rto": False},
         "devlink dev param show: roce_selective_repeat, off by default (go-back-N), its "
         "in-flight cap roce_sr_log_cap 0 (the device's default), and roce_adaptive_rto off")
    # the cap: 0 or 4..8 (2^n PSNs); others refused, the value kept
    bad = [n0.run("devlink dev param set %s name roce_sr_log_cap value %d cmode runtime"
                  % (dl, v)).rc for v in (3, 9, 255)]
    r = n0.run("devlink dev param set %s name roce_sr_log_cap value 4 cmode runtime" % dl)
    got4 = params(n0, dl).get("roce_sr_log_cap")
    r0 = n0.run("devlink dev param set %s name roce_sr_log_cap value 0 cmode runtime" % dl)
    t.ok(all(rc != 0 for rc in bad) and r.rc == 0 and got4 == 4 and r0.rc == 0 and
         params(n0, dl).get("roce_sr_log_cap") == 0,
         "roce_sr_log_cap: 3, 9, 255 refused; 4 taken and shown; back to 0",
         "refused rc %s, set 4 rc %d (%s), shown %r" % (bad, r.rc, r.stderr.strip(), got4))
    f = fw(n0, bdf)
    t.ok(all(f.get(k) == str(v) for k, v in CC_DEFAULTS.items()),
         "the firmware got the driver's DCQCN and HPCC defaults at probe (RP/NP on every priority, HPCC on none)",
         json.dumps(f))
    t.ok(f.get("pfc_en") == "0x00" and f.get("trust") == "pcp" and f.get("dscp_prio") == "none",
         "the firmware starts with PFC off, trust pcp, no DSCP map", json.dumps(f))

    # --- dcb pfc / ets / app -------------------------------------------------------------------
    # iproute2 6.1's read-then-write commands cannot report the SET's outcome (ternlib's
    # DCB_STALE_ACK): they must reach the kernel, and what was set is checked by "show" and
    # the firmware's view (check_all).
    stale = 0
    r = dcb_write(n0, "dcb pfc set dev %s prio-pfc 3:on" % dev)
    stale += r.stale_ack
    t.ok(r.sent, "dcb pfc set prio-pfc 3:on", r.stderr)
    r = dcb_write(n0, "dcb ets set dev %s %s" % (
        dev, " ".join("%s %s" % kv for kv in ETS_SET.items())))
    stale += r.stale_ack
    t.ok(r.sent, "dcb ets set tc-tsa/tc-bw/prio-tc", r.stderr)
    r = n0.run("dcb app add dev %s dscp-prio %s" % (dev, APP_SET))
    t.ok(r.rc == 0, "dcb app add dscp-prio %s" % APP_SET, r.stderr)
    check_all(n0, dev, bdf, dl, "after set", CC_DEFAULTS)

    # a DSCP entry replaced, then deleted: the firmware follows each step
    r = dcb_write(n0, "dcb app replace dev %s dscp-prio 10:2" % dev)
    stale += r.stale_ack
    t.ok(r.sent and fw(n0, bdf).get("dscp_prio") == "10:2 26:3 48:6" and
         sorted((dcb_show(n0, dev, "app", "dscp-prio") or "").split()) ==
         ["10:2", "26:3", "48:6"],
         "dcb app replace of another DSCP: shown and in the firmware's map", r.stderr)
    r = n0.run("dcb app del dev %s dscp-prio 10:2" % dev)
    t.ok(r.rc == 0 and fw(n0, bdf).get("dscp_prio") == "26:3 48:6",
         "dcb app del of it: the firmware's map follows", r.stderr)
    if stale:
        t.diag("iproute2 6.1's stale-ACK race hit %d of 3 dcb writes (checked by show)" % stale)

    # --- invalid settings ------------------------------------------------------------------------
    mark = len(n0.dmesg())
    bad = [
        ("dcb ets set dev %s tc-bw 0:40 1:0 2:0 3:50 4:0 5:0 6:0 7:0" % dev,
         r"bandwidths of the ETS TCs sum to 90%, not 100%", "ETS bandwidths summing to 90"),
        ("dcb ets set dev %s tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0" % dev,
         r"TC 2 is strict priority: its bandwidth must be 0", "bandwidth on a strict TC"),
        ("dcb ets set dev %s tc-tsa 1:cbs" % dev,
         r"transmission selection 1 not supported", "TSA cbs"),
        ("dcb app add dev %s ethtype-prio 0x8915:3" % dev,
         r"APP selector 1 not supported: only DSCP", "an ethtype APP entry"),
        ("dcb app add dev %s stream-port-prio 4791:3" % dev,
         r"APP selector 2 not supported: only DSCP", "a TCP port APP entry"),
    ]
    # dcb checks the sum of tc-bw itself; the kernel's messages are in its log (dcbnl has no
    # extack), and "dcb ets set" exits 0 even when the kernel refused (see above): what
    # counts is the log and that nothing changed (check_all below).
    r = n0.run(bad[0][0])
    t.ok(r.rc != 0 and "sum to 90%" in r.stderr, "refused by dcb: %s (%s)" % (
        bad[0][2], r.stderr.strip()), r.stdout)
    for cmd, msg, what in bad[1:]:
        r = n0.run(cmd)
        t.ok(r.rc != 0 or cmd.startswith("dcb ets"), "refused: %s (%s)" % (
            what, r.stderr.strip() or "exit 0"), r.stdout)
    log = kernel_log_since(n0, mark)
    for cmd, msg, what in bad[1:]:
        t.ok(re.search(msg, log), "the kernel log says why: %s" % msg.replace("\\", ""), log)
    check_all(n0, dev, bdf, dl, "after the refusals", CC_DEFAULTS)

    # --- congestion control: devlink params and debugfs cc_params/ ----------------------------
    cc = dict(CC_DEFAULTS)
    for name, value in CC_SET.items():
        r = set_cc(n0, dl, bdf, name, value)
        t.ok(r.rc == 0, "%s set to %d (%s)" % (
            name, value, "devlink" if name in DL_DEFAULTS else "cc_params"), r.stderr)
        cc[name] = value
    # a cc_params/ read queries the firmware: what was written is what the device runs
    t.eq({k: fw(n0, bdf).get(k) for k in ("rp_ai_rate", "rp_time_reset")},
         {"rp_ai_rate": "10", "rp_time_reset": "1000"},
         "the firmware runs the cc_params/ values written (QUERY_CC_PARAMS)")
    line = n0.run("cat /sys/class/net/%s/speed" % dev).stdout.strip()
    t.eq(line, str(SPEED), "the port runs at %d Mb/s (QEMU speed=%d)" % (SPEED, SPEED))
    line = SPEED
    for name, value, msg in (
            ("cnp_dscp", 64, "cnp_dscp must be a DSCP, 0..63"),
            ("cnp_802p_prio", 8, "cnp_802p_prio must be a priority, 0..7"),
            # DCQCN's reaction point is on every priority by default: HPCC needs room
            ("roce_hpcc_enable", 8,
             "roce_rp_enable, roce_hpcc_enable and roce_timely_enable must not share a "
             "priority"),
            ("roce_timely_enable", 8,
             "roce_rp_enable, roce_hpcc_enable and roce_timely_enable must not share a "
             "priority")):
        r = set_cc(n0, dl, bdf, name, value)
        t.ok(r.rc != 0 and msg in r.stderr,
             "devlink dev param set %s %d refused: %s" % (name, value, r.stderr.strip()),
             r.stdout)
    # debugfs has no extack: EINVAL, and Documentation/admin/tern_core.rst gives the ranges
    for name, value in (("rp_gd", 16), ("rp_gd", 0), ("rp_threshold", 0), ("rp_threshold", 32),
                        ("rp_ai_rate", line + 1), ("rp_hai_rate", 0), ("rp_max_rate", line + 1),
                        ("rp_min_rate", 0), ("rp_rate_to_set_on_first_cnp", line + 1),
                        ("rp_dce_tcp_g", 1024), ("rp_dce_tcp_rtt", 0),
                        ("rp_dce_tcp_rtt", 131072), ("rp_time_reset", 0),
                        ("rp_byte_reset", (1 << 30) + 1), ("rp_min_dec_fac", 101),
                        ("rp_rate_reduce_monitor_period", 131072),
                        ("rp_initial_alpha_value", 1024), ("np_min_time_between_cnps", 4096),
                        ("hpcc_max_stage", 0), ("hpcc_eta", 1001), ("hpcc_eta", 499),
                        ("hpcc_ai_rate", line + 1), ("hpcc_base_rtt", 999),
                        ("hpcc_base_rtt", 100000001), ("timely_hai_thresh", 0),
                        ("timely_hai_thresh", 32), ("timely_alpha", 1025), ("timely_beta", 0),
                        ("timely_delta", line + 1), ("timely_t_low", 999),
                        ("timely_t_high", 100000001),
                        ("timely_min_rtt", 999), ("timely_seg", 1023),
                        ("timely_seg", (1 << 20) + 1), ("timely_min_rate", 0),
                        ("rp_ai_rate", 1 << 32),
                        ("rp_ai_rate", "-1"), ("rp_ai_rate", "fast")):
        r = set_cc(n0, dl, bdf, name, value)
        t.ok(r.rc != 0 and "Invalid argument" in r.stderr,
             "cc_params/%s = %s refused with EINVAL" % (name, value), r.stderr)
    t.eq(cc_params(n0, bdf), {k: v for k, v in cc.items() if k in CCP_DEFAULTS},
         "the refused writes changed nothing")
    # the line rate itself is a valid rate
    r = set_cc(n0, dl, bdf, "rp_hai_rate", SPEED)
    t.ok(r.rc == 0, "rp_hai_rate = the line rate (%d Mb/s) is taken" % SPEED, r.stderr)
    cc["rp_hai_rate"] = SPEED
    # HPCC on priority 3 once DCQCN's reaction point leaves it; then RP may not come back
    for name, value in (("roce_rp_enable", 0xf7), ("roce_hpcc_enable", 8), ("hpcc_eta", 900)):
        r = set_cc(n0, dl, bdf, name, value)
        t.ok(r.rc == 0, "%s set to %d" % (name, value), r.stderr)
        cc[name] = value
    r = n0.run("devlink dev param set %s name roce_rp_enable value 255 cmode runtime" % dl)
    t.ok(r.rc != 0 and "must not share a priority" in r.stderr,
         "roce_rp_enable 255 refused while HPCC runs on priority 3: %s" % r.stderr.strip())
    # TIMELY on priority 4 once the reaction point leaves it; not on HPCC's priority 3
    for name, value in (("roce_rp_enable", 0xe7), ("roce_timely_enable", 0x10),
                        ("timely_delta", 100)):
        r = set_cc(n0, dl, bdf, name, value)
        t.ok(r.rc == 0, "%s set to %d" % (name, value), r.stderr)
        cc[name] = value
    for name, value in (("roce_timely_enable", 0x18), ("roce_hpcc_enable", 0x18),
                        ("roce_rp_enable", 0xf7)):
        r = set_cc(n0, dl, bdf, name, value)
        t.ok(r.rc != 0 and "must not share a priority" in r.stderr,
             "%s 0x%02x refused (TIMELY on 4, HPCC on 3): %s" % (name, value, r.stderr.strip()))
    check_all(n0, dev, bdf, dl, "after the params", cc)

    # --- ethtool: PFC counters and the storm guard ---------------------------------------------
    st = ethtool_stats(n0, dev)
    names = [s % p for p in range(8) for s in PFC_PRIO_STATS] + PFC_PORT_STATS
    missing = [s for s in names if s not in st]
    t.ok(not missing, "ethtool -S has the %d PFC counters" % len(names), "missing: %s" % missing)
    r = n0.run("ethtool --set-tunable %s pfc-prevention-tout 5" % dev)
    t.ok(r.rc != 0, "pfc-prevention-tout 5 ms refused (10..60000)", r.stdout)
    # PFC_STORM_PREVENTION_AUTO (ethtool's parser takes the number)
    r = n0.run("ethtool --set-tunable %s pfc-prevention-tout 65535 && "
               "ethtool --get-tunable %s pfc-prevention-tout" % (dev, dev))
    t.ok(r.rc == 0 and re.search(r"pfc-prevention-tout: 100\b", r.stdout),
         "pfc-prevention-tout 65535 (auto) is 100 ms", r.stdout, r.stderr)
    r = n0.run("ethtool --set-tunable %s pfc-prevention-tout 0 && "
               "ethtool --get-tunable %s pfc-prevention-tout" % (dev, dev))
    t.ok(r.rc == 0 and re.search(r"pfc-prevention-tout: 0\b", r.stdout) and
         fw(n0, bdf).get("pfc_storm_ms") == "0", "pfc-prevention-tout 0: storm guard off",
         r.stdout, r.stderr)
    r = n0.run("ethtool --set-tunable %s pfc-prevention-tout %d && "
               "ethtool --get-tunable %s pfc-prevention-tout" % (dev, STORM_MS, dev))
    t.ok(r.rc == 0 and re.search(r"pfc-prevention-tout: %d\b" % STORM_MS, r.stdout) and
         fw(n0, bdf).get("pfc_storm_ms") == str(STORM_MS),
         "pfc-prevention-tout %d ms reaches the firmware" % STORM_MS, r.stdout, r.stderr)

    # --- the RDMA driver: the congestion-control counters ------------------------------------
    CC_COUNTERS = ("np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled",
                   "rp_cnp_ignored", "rp_rate_decrease_events", "rp_rate_increase_events",
                   "rp_min_rate_events", "rp_limited_qps")
    r = n0.run("modprobe tern_ib && for i in $(seq 50); do rdma link show | grep -q tern &&"
               " break; sleep 0.2; done; rdma statistic show", timeout=60)
    t.ok(r.rc == 0 and all(re.search(r"\b%s \d+" % k, r.stdout) for k in CC_COUNTERS),
         "rdma statistic show has the 8 congestion-control counters", r.stdout, r.stderr)

    # --- what an admin set up on the interface: reload and recovery keep the netdev --------
    # A non-default MTU (1400: RoCE's path MTU stays 1024), a route, a qdisc with a limit.
    r = n0.run("ip link set %s mtu 1400 && ip route add 198.51.100.0/24 via %s dev %s && "
               "tc qdisc replace dev %s root bfifo limit 250000" % (dev, n1.ip(0), dev, dev))
    t.ok(r.rc == 0, "MTU 1400, a route and a bfifo qdisc on %s" % dev, r.stderr)
    kept = iface_state(n0, dev)
    t.ok("bfifo" in kept and "198.51.100.0/24" in kept and n0.ip(0) in kept,
         "the interface shows them", kept)
    hw0 = ethtool_stats(n0, dev)

    # --- devlink dev reload ------------------------------------------------------------------
    r = n0.run("devlink dev reload %s" % dl, timeout=120)
    t.ok(r.rc == 0, "devlink dev reload", r.stdout, r.stderr)
    t.ok(wait_for(lambda: carrier(n0, dev) == 1, timeout=15), "carrier after the reload")
    t.eq(iface_state(n0, dev), kept, "after devlink reload: %s keeps its ifindex, MAC, MTU, "
         "address, route and qdisc" % dev)
    hw1 = ethtool_stats(n0, dev)
    t.ok(all(hw1.get(k, -1) >= hw0.get(k, 0) > 0 for k in KEPT_COUNTERS),
         "after devlink reload: the port's and the netdev's counters went on from where "
         "they were", {k: (hw0.get(k), hw1.get(k)) for k in KEPT_COUNTERS})
    t.ok("reloaded" in n0.dmesg(), "the kernel log shows the reload")
    t.ok(wait_for(lambda: "tern" in n0.run("rdma link show").stdout, timeout=15),
         "the RDMA device is back after the reload", n0.run("rdma link show").stdout)
    check_all(n0, dev, bdf, dl, "after devlink reload", cc)
    t.eq(fw(n0, bdf).get("pfc_storm_ms"), str(STORM_MS), "after devlink reload: storm guard")

    # --- a device recovery (reset) -------------------------------------------------------------
    before = n0.dmesg().count("recovering: resetting the device")
    r = n0.run("devlink health test %s reporter fw" % dl)
    t.ok(r.rc == 0, "devlink health test reporter fw", r.stderr)
    t.ok(wait_for(lambda: n0.dmesg().count("recovering: resetting the device") > before and
                  re.search(r"tern_core \S+: recovered", n0.dmesg()), timeout=60),
         "the test error made tern_core reset and recover the device")
    t.ok(wait_for(lambda: carrier(n0, dev) == 1, timeout=15), "carrier after the recovery")
    t.eq(iface_state(n0, dev), kept, "after recovery: %s keeps its ifindex, MAC, MTU, "
         "address, route and qdisc" % dev)
    r = n0.run("ip route get 198.51.100.7")
    t.ok(r.rc == 0 and "via %s dev %s" % (n1.ip(0), dev) in r.stdout,
         "after recovery: the route still takes traffic to the peer", r.stdout, r.stderr)
    check_all(n0, dev, bdf, dl, "after recovery", cc)
    t.eq(fw(n0, bdf).get("pfc_storm_ms"), str(STORM_MS), "after recovery: storm guard")
    r = n0.run("ping -c 2 -W 5 %s" % n1.ip(0), timeout=30)
    t.ok(r.rc == 0, "traffic flows after reload and recovery", r.stdout, r.stderr)
    hw2 = ethtool_stats(n0, dev)
    t.ok(all(hw2.get(k, -1) > hw1.get(k, 0) > 0 for k in KEPT_COUNTERS),
         "after recovery and a ping: the port's and the netdev's counters went on from "
         "where they were", {k: (hw1.get(k), hw2.get(k)) for k in KEPT_COUNTERS})
    r = n0.run("ip route del 198.51.100.0/24 && tc qdisc del dev %s root && "
               "ip link set %s mtu 1500" % (dev, dev))
    t.ok(r.rc == 0, "the route, qdisc and MTU go back to how they were", r.stderr)

    # --- a PFC storm from the peer ---------------------------------------------------------------
    t.ok(re.search(r"state healthy error 0\b", health(n0, dl, "pfc")),
         "devlink health show: reporter pfc, healthy, no error yet", health(n0, dl, "pfc"))
    s0 = ethtool_stats(n0, dev)
    mark = len(n0.dmesg())
    # 12 s: long enough for a few looks from a slow (debug-kernel) guest while it lasts.
    n1.run("rm -f /tmp/pfc-send.out; pfc-send %s 3 12 > /tmp/pfc-send.out 2>&1 &" % devs[1],
           check=True)
    # While it lasts, the reporter is in error and its diagnosis names the priority. (A
    # sending guest descheduled for longer than the guard ends the storm early and the next
    # frames start another: each look waits for a moment inside one.)
    t.ok(wait_for(lambda: re.search(r"state error error [1-9]", health(n0, dl, "pfc")),
                  timeout=10, interval=0.1),
         "during the storm: reporter pfc in error", health(n0, dl, "pfc"))

    def diagnosis():
        r = n0.run("devlink health diagnose %s reporter pfc" % dl)
        return r.stdout if re.search(r"peer_pausing_too_long: 3\b", r.stdout) else None
    d = wait_for(diagnosis, timeout=10, interval=0.1)
    t.ok(d and re.search(r"storm_guard_ms: %d\b" % STORM_MS, d),
         "during the storm: devlink health diagnose names priority 3 and the %d ms guard"
         % STORM_MS, n0.run("devlink health diagnose %s reporter pfc" % dl).stdout)
    wait_for(lambda: n1.run("cat /tmp/pfc-send.out").stdout.strip(), timeout=40)
    out = n1.run("cat /tmp/pfc-send.out").stdout.strip()
    sent = int(out) if out.isdigit() else 0
    t.ok(sent > 100, "node1 sent %d PFC frames (XOFF, priority 3) in 12 s" % sent, out)
    t.ok(wait_for(lambda: "PFC storm on priority 3 over" in kernel_log_since(n0, mark),
                  timeout=10), "node0 reported the storm's end")
    s1 = ethtool_stats(n0, dev)
    log = kernel_log_since(n0, mark)
    t.ok(re.search(r"PFC storm on priority 3: the peer paused us too long", log),
         "node0 warned about the PFC storm on priority 3", log)
    delta = {k: s1.get(k, 0) - s0.get(k, 0) for k in
             ("rx_prio3_pause", "rx_pfc_frames", "rx_pause_storm_events",
              "pfc_storm_detected", "pfc_storm_recovered")}
    t.ok(delta["rx_prio3_pause"] > 100 and delta["rx_pfc_frames"] >= delta["rx_prio3_pause"],
         "rx_prio3_pause and rx_pfc_frames counted the pauses", delta)
    t.ok(delta["rx_pause_storm_events"] >= 1 and delta["pfc_storm_detected"] >= 1 and
         delta["pfc_storm_recovered"] >= 1,
         "rx_pause_storm_events and the driver's storm counters moved", delta)
    r = n0.run("dcb pfc show dev %s indications" % dev)
    m = re.search(r"\b3:(\d+)", pairs(r.stdout, "indications") or "")
    t.ok(m and int(m.group(1)) >= delta["rx_prio3_pause"],
         "dcb pfc show indications counts the pauses of priority 3", r.stdout, r.stderr)
    t.ok(wait_for(lambda: re.search(r"state healthy error [1-9]", health(n0, dl, "pfc")),
                  timeout=10),
         "after the storm: reporter pfc healthy again, the storm counted as an error",
         health(n0, dl, "pfc"))
    r = n0.run("devlink health diagnose %s reporter pfc" % dl)
    d = dict(re.findall(r"(\w+): (\w+)", r.stdout))
    t.ok(d.get("peer_pausing_too_long") == "none" and
         int(d.get("storms_detected", 0)) >= 1 and int(d.get("storms_over", 0)) >= 1 and
         int(d.get("fw_rx_pause_storm_events", 0)) >= 1,
         "after the storm: the diagnosis shows none in progress and the counts", r.stdout,
         r.stderr)
    r = n0.run("ping -c 2 -W 5 %s" % n1.ip(0), timeout=30)
    t.ok(r.rc == 0, "traffic flows after the storm", r.stdout, r.stderr)

    # --- unload: the debugfs files go with the device, a new probe starts from the defaults
    r = n0.run("rmmod tern_ib tern_core && ! test -e %s" % dbg, timeout=120)
    t.ok(r.rc == 0, "rmmod tern_ib tern_core removes %s (cc_params/ included)" % dbg,
         r.stderr)
    r = n0.run("modprobe tern_core && for i in $(seq 50); do test -e %s/cc_params/rp_gd && "
               "break; sleep 0.2; done" % dbg, timeout=60)
    t.ok(r.rc == 0, "modprobe tern_core: cc_params/ is back", r.stderr)
    t.eq(cc_params(n0, bdf), CCP_DEFAULTS, "after the driver was unloaded: cc_params/ has "
         "the defaults again")
    t.eq({k: v for k, v in params(n0, dl).items() if k in DL_DEFAULTS}, DL_DEFAULTS,
         "after the driver was unloaded: the devlink params have the defaults again")

    check_kernel_clean(t, c)
except HarnessError as e:
    t.ok(False, "harness error", str(e))
finally:
    c.close()
    t.diag("logs: %s" % c.result_dir)
t.exit()
