"""Lossless RoCE through the fabric, in guests: two ib_write_bw senders to one receiver across
tern-switch, with PFC and DCQCN set up as an administrator would. Used by
tests/guest/congestion.t and bench/congestion.py.

The setup (the reference's "typical" one, Documentation/admin): on every guest
``dcb pfc set dev IF prio-pfc 3:on``, ``dcb app add dev IF dscp-prio 26:3 48:6`` (RoCE data on
DSCP 26 -> priority 3, lossless; CNPs on DSCP 48 -> priority 6), DCQCN through the devlink
params ``roce_rp_enable`` / ``roce_np_enable`` (priority masks: 0x08 on, 0 off), its time
constants through debugfs ``cc_params/``. The switch
trusts DSCP with the same map, marks ECN (RED) and generates PFC on priority 3 and serves
priority 6 strictly. Node 0 receives, nodes 1 and 2 send (perftest ``--tclass=104``: DSCP 26).

The guests run under TCG on a shared host: the link rate is chosen low enough (a few hundred
Mb/s) that two emulated senders can overload the receiver's port, and the NICs run at the
same rate (QEMU property ``speed``).
"""

import json
import os
import re
import time

from harness import Cluster, HarnessError, Wire
from harness.fabric import fabric
import rdmatest as rt
from ternlib import dcb_write

RECEIVER, SENDERS = 0, (1, 2)
PRIO, CNP_PRIO = 3, 6
DSCP, CNP_DSCP = 26, 48
TCLASS = DSCP << 2          # perftest --tclass: the IP TOS byte (the NIC adds ECT)

# The switch for the guest scenario, at LINK_MBPS (the switch model's defaults are for
# 40 Gb/s). Kmin/Kmax well below XOFF: marking starts long before a pause (the reference's
# advice). XOFF per ingress (port, priority): two senders overload one egress; without DCQCN
# each sender's ingress account climbs to XOFF and the switch pauses it.
# The link rate: measured on a 2-core host (3 TCG guests, tern-switch, other load), one
# ib_write_bw flow reaches ~60-70 % of a 200 Mb/s line and two flows fill ~90 % of it (the
# bottleneck is congested only part of the time); at 100 Mb/s each sender keeps its NIC's
# line busy and two of them hold the receiver's port at 2:1 overload (its FIFO p50 ~170 KiB
# without DCQCN).
LINK_MBPS = 100


# DCQCN's time constants for this fabric. The driver's defaults are ConnectX's, made for
# 25-100 Gb/s links and microsecond round trips; here a 1 KiB packet takes 85 us on the
# line and the round trip through three emulated hosts is a millisecond or more. With the
# defaults alpha (updated every microsecond) has decayed to almost nothing by the next CNP,
# so each cut is tiny and the bottleneck stays above Kmax (measured: pauses only 4-30 %
# fewer than without DCQCN). Scaled to the fabric, as an administrator would (measured with
# these: 10-17x fewer pauses, the flows within 2-15 % of their DCQCN-off throughput), through
# the debugfs files /sys/kernel/debug/tern/<bdf>/cc_params/<name>:
DCQCN_PARAMS = {
    "rp_dce_tcp_rtt": 500,                  # us between alpha updates (default 1)
    "rp_rate_reduce_monitor_period": 1000,  # us: at most one cut per round trip (default 4)
    "np_min_time_between_cnps": 500,        # us per QP at the NP (default 4)
    "rp_time_reset": 10000,                 # us per timer-stage increase (default 300)
    "rp_byte_reset": 131072,                # bytes per byte-stage increase (default 32767)
    "rp_ai_rate": 2,                        # Mb/s additive increase (default 5)
    "rp_hai_rate": 10,                      # Mb/s hyper increase (default 50)
}


# HPCC on this fabric (Documentation/admin/tern_core.rst): a base round trip T of 10 ms (B x T
# = 125 KB at 100 Mb/s). Between TCG guests a request's round trip through tern-switch is
# milliseconds and comes in bursts, so with T = 1 ms the queue term qlen / (B x T) alone
# looked like a full link and the two flows got 4.6 MB/s of 11; 4 ms gave 6.3, 10 ms 8.0
# (p99 queue 132 KiB against DCQCN's 452), 25 ms 7.8 with a 300 KiB p99 (fabric.rst, "HPCC").
# W_AI = 2 Mb/s * T = 2.5 KB, about 5 % of a fair share's window for two flows, as the
# paper's W_AI = (1 - eta) * W / N. TERN_CONGESTION_HPCC_RTT_NS sets another T. (cc_params/
# files, as DCQCN_PARAMS.)
HPCC_PARAMS = {"hpcc_base_rtt": int(os.environ.get("TERN_CONGESTION_HPCC_RTT_NS", "10000000")),
               "hpcc_ai_rate": 2}

# TIMELY on this fabric (Documentation/hw/congestion.rst, "TIMELY"), its times scaled as
# HPCC's T to a TCG guest's millisecond round trips: minRTT 5 ms, T_low 10 ms, T_high 100 ms;
# delta 2 Mb/s as HPCC's additive step, the rate never below 5 Mb/s. Not tuned for a goal:
# the test checks that TIMELY runs and shows itself, not its figures. (cc_params/ files;
# t_high is written before t_low, in name order, so each write keeps t_low < t_high.)
TIMELY_PARAMS = {"timely_min_rtt": 5000000, "timely_t_high": 100000000,
                 "timely_t_low": 10000000, "timely_delta": 2, "timely_min_rate": 5}


def switch_config(link_mbps=LINK_MBPS, pfc=True):
    """The switch as the tests run it; INT records for priority 3's HPCC requests (only
    frames to the INT port take them, so DCQCN's runs are untouched)."""
    return dict(link_mbps=link_mbps, delay_ns=2000, buffer_bytes=4 << 20, int_mask=1 << PRIO,
                pfc_mask=(1 << PRIO) if pfc else 0, ecn_mask=1 << PRIO,
                strict_mask=1 << CNP_PRIO, xoff_bytes=256 << 10, xon_bytes=128 << 10,
                kmin_bytes=16 << 10, kmax_bytes=96 << 10, pmax_ppm=200000,
                dscp_prio={DSCP: PRIO, CNP_DSCP: CNP_PRIO}, seed=1, sample_us=100)


def cluster(link_mbps=LINK_MBPS, pfc=True, name=None, **switch):
    """Three guests with tern NICs at ``link_mbps`` on one switched wire (not booted);
    ``switch``: switch settings that replace :func:`switch_config`'s."""
    cfg = dict(switch_config(link_mbps, pfc), **switch)
    return Cluster(nodes=3, wires=[Wire("tern", switched=True, props={"speed": link_mbps})],
                   switch=fabric(**cfg), name=name)


class Setup(Exception):
    """An administrative step failed (message has the command and its output)."""


def _run(node, cmd, timeout=60):
    r = node.run(cmd, timeout=timeout)
    if r.rc != 0:
        raise Setup("%s: %s: rc %d\n%s%s" % (node.name, cmd, r.rc, r.stdout, r.stderr))
    return r


def devlink_dev(node, netdev):
    """The devlink handle (pci/<address>) of ``netdev``'s NIC."""
    r = _run(node, "basename $(readlink -f /sys/class/net/%s/device)" % netdev)
    return "pci/" + r.stdout.strip()


def cc_params_dir(devlink):
    """The debugfs directory of the DCQCN and HPCC tuning parameters of NIC ``devlink``."""
    return "/sys/kernel/debug/tern/%s/cc_params" % devlink.split("/", 1)[1]


def read_cc_params(node, devlink):
    """Every cc_params/ file of ``devlink``'s NIC, read back from the firmware: {name: int}."""
    r = node.run("cd %s && grep -H . *" % cc_params_dir(devlink), timeout=30)
    out = {}
    for line in r.stdout.splitlines() if r.rc == 0 else []:
        k, _, v = line.partition(":")
        if v.strip().isdigit():
            out[k] = int(v)
    return out


class Fabric:
    """The three guests' RDMA target plus what the admin steps need."""

    def __init__(self, c):
        self.c = c
        self.target = rt.Target(c, "tern", 0)
        self.devlink = {}
        self.switch = None
        self.config = None
        self.stale_acks = 0	# dcb writes that hit iproute2 6.1's stale ACK (ternlib)

    def setup(self):
        """Driver loaded, addresses, RDMA devices ACTIVE; the DSCP map on every guest."""
        self.target.setup()
        self.switch = self.c.switches[0]
        for n in self.c:
            dev = self.target.netdev[n.index]
            self.devlink[n.index] = devlink_dev(n, dev)
            _run(n, "dcb app add dev %s dscp-prio %d:%d %d:%d" % (dev, DSCP, PRIO, CNP_DSCP,
                                                                    CNP_PRIO))

    def configure(self, pfc, dcqcn, params=None, hpcc=False, timely=False):
        """PFC on priority 3 (or no PFC) and DCQCN on priority 3 (RP and NP) or off, on
        every guest, as ``dcb`` / ``devlink`` show it back; ``params``: debugfs cc_params/
        values (name -> value) to set first and read back from the firmware (default
        :data:`DCQCN_PARAMS`, :data:`HPCC_PARAMS` and :data:`TIMELY_PARAMS`). ``hpcc``: HPCC on
        priority 3 instead (roce_hpcc_enable, once DCQCN is off there: the driver refuses both
        on one priority); ``timely``: TIMELY instead (roce_timely_enable), the same way."""
        mask = (1 << PRIO) if dcqcn else 0
        params = dict(DCQCN_PARAMS, **HPCC_PARAMS, **TIMELY_PARAMS) if params is None else params
        self.hpcc = hpcc
        for n in self.c:
            dev = self.target.netdev[n.index]
            path = cc_params_dir(self.devlink[n.index])
            for name, value in sorted(params.items()):
                _run(n, "echo %d > %s/%s" % (value, path, name))
            got = read_cc_params(n, self.devlink[n.index])
            if any(got.get(k) != v for k, v in params.items()):
                raise Setup("%s: the firmware runs %s, not the cc_params/ values %s" % (
                    n.name, {k: got.get(k) for k in params}, params))
            want = " ".join("%d:%s" % (p, "on" if pfc and p == PRIO else "off")
                            for p in range(8))
            r = dcb_write(n, "dcb pfc set dev %s prio-pfc %s" % (dev, want))
            self.stale_acks += r.stale_ack
            shown = n.run("dcb pfc show dev %s prio-pfc" % dev, timeout=30).stdout.split()
            if not r.sent or shown[1:] != want.split():
                raise Setup("%s: dcb pfc set dev %s prio-pfc %s: rc %d, %s; shown: %s" % (
                    n.name, dev, want, r.rc, r.stderr.strip(), " ".join(shown)))
            for name, value in (("roce_hpcc_enable", 0), ("roce_timely_enable", 0),
                                ("roce_rp_enable", mask), ("roce_np_enable", mask),
                                ("roce_hpcc_enable", (1 << PRIO) if hpcc else 0),
                                ("roce_timely_enable", (1 << PRIO) if timely else 0)):
                _run(n, "devlink dev param set %s name %s value %d cmode runtime" % (
                    self.devlink[n.index], name, value))
        self.config = {"pfc": pfc, "dcqcn": dcqcn, "hpcc": hpcc, "timely": timely,
                       "params": self.params(self.c[SENDERS[0]])}
        return self.show()

    def params(self, node):
        """Every devlink param and cc_params/ file of ``node``'s NIC: {name: value}."""
        # (this iproute2 wants a name after a device: list every device's and pick ours)
        r = node.run("devlink -j dev param show", timeout=30)
        out = {}
        try:
            data = json.loads(r.stdout)
        except ValueError:
            return out
        for handle, dev in data.get("param", {}).items():
            if handle != self.devlink[node.index]:
                continue
            for p in dev:
                for v in p.get("values", []):
                    if v.get("cmode") == "runtime":
                        out[p.get("name")] = v.get("value")
        out.update(read_cc_params(node, self.devlink[node.index]))
        return out

    def show(self):
        """{node: (dcb pfc show text, {param: value})} for the record."""
        out = {}
        for n in self.c:
            dev = self.target.netdev[n.index]
            pfc = n.run("dcb pfc show dev %s prio-pfc" % dev, timeout=30).stdout.strip()
            params = {}
            for name in ("roce_rp_enable", "roce_np_enable", "roce_hpcc_enable",
                         "roce_timely_enable"):
                r = n.run("devlink -j dev param show %s name %s" % (self.devlink[n.index], name),
                          timeout=30)
                params[name] = _param_value(r.stdout)
            out[n.index] = (pfc, params)
        return out

    # --- counters -----------------------------------------------------------------------------

    def counters(self):
        """{node: {"rdma": {...}, "eth": {...}}}: rdma statistic and ethtool -S."""
        out = {}
        for n in self.c:
            out[n.index] = {"rdma": rdma_statistic(n, self.target.ibdev_of(n)),
                            "eth": ethtool_stats(n, self.target.netdev[n.index])}
        return out


def _param_value(text):
    """The runtime value from ``devlink -j dev param show ... name X``."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    for dev in data.get("param", {}).values():
        for p in dev:
            for v in p.get("values", []):
                if v.get("cmode") == "runtime":
                    return v.get("value")
    return None


def rdma_statistic(node, ibdev):
    """``rdma -j statistic show link <ibdev>/1`` as a dict of counter -> int."""
    r = node.run("rdma -j statistic show link %s/1" % ibdev, timeout=30)
    out = {}
    try:
        data = json.loads(r.stdout or "[]")
    except ValueError:
        data = []
    for entry in data if isinstance(data, list) else [data]:
        items = dict(entry)
        items.update(entry.get("counters", {}) if isinstance(entry.get("counters"), dict)
                     else {})
        for k, v in items.items():
            if isinstance(v, int) and k not in ("ifindex", "port"):
                out[k] = v
    if not out:     # older iproute2: the sysfs files it reads
        out = rt.hw_counters(node, ibdev)
    return out


def ethtool_stats(node, dev):
    r = node.run("ethtool -S %s" % dev, timeout=30)
    out = {}
    for line in r.stdout.splitlines()[1:]:
        k, _, v = line.strip().partition(":")
        if v.strip().lstrip("-").isdigit():
            out[k.strip()] = int(v)
    return out


def delta(after, before):
    return {k: v - before.get(k, 0) for k, v in after.items() if isinstance(v, int)}


def jain(xs):
    """Jain's fairness index of the values ``xs``: 1 for equal shares, 1/n for one taker."""
    xs = list(xs)
    sq = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * sq) if sq else 0.0


# --- one incast run ---------------------------------------------------------------------------

PERF_OPTS = "-s 65536 -D %d --tclass=%d -u 20"


class Run:
    """The outcome of one incast run: ``flows`` (per sender: MB/s as perftest reported it, or
    None), ``wire_flows`` (per sender: MB/s its NIC sent, from ``tx_roce_bytes``), ``ok``, ``why``,
    ``nodes`` (counter deltas per node), ``switch`` (switch model counter deltas per port and
    the measurement window), ``attempts``, ``results`` (client/server harness Results)."""

    def __init__(self, label):
        self.label = label
        self.ok = False
        self.why = ""
        self.flows = {}
        self.duration = 0
        self.nodes = {}
        self.switch = {}
        self.window = []
        self.attempts = 0
        self.results = []
        self.config = None
        # per sender: (DCQCN rate Mb/s, alpha) of its ib_write_bw QP, as ``rdma res show qp
        # -dd`` showed them while the flows ran (rate 0: not limited)
        self.qp_cc = {}
        # per sender, the same for an HPCC priority: (window bytes, rate Mb/s, U in 1/1000)
        self.qp_hpcc = {}
        # ... and for a TIMELY priority: (rate Mb/s, last RTT ns, RTT difference ns)
        self.qp_timely = {}

    # the figures the test and the benchmark use
    def rdma(self, node, name):
        return self.nodes.get(node, {}).get("rdma", {}).get(name, 0)

    def eth(self, node, name):
        return self.nodes.get(node, {}).get("eth", {}).get(name, 0)

    def sw_port(self, node):
        return self.switch.get(node, {})

    def sum_rdma(self, name, nodes=None):
        return sum(self.rdma(n, name) for n in (nodes if nodes is not None else self.nodes))

    @property
    def wire_flows(self):
        """Per sender, the RoCE bytes its NIC sent during the run (``tx_roce_bytes``: headers
        included) over the flows' duration, MB/s; {} without counters. perftest's own figure
        in ``-D`` mode can be 0.00 MB/s for a flow that moved as much as the other (a perftest
        report, Documentation/performance.rst), so fairness is judged on these."""
        if not self.duration or not all(self.rdma(s, "tx_roce_bytes") for s in SENDERS):
            return {}
        return {s: self.rdma(s, "tx_roce_bytes") / self.duration / 1e6 for s in SENDERS}

    @property
    def jain(self):
        """Jain's index of the senders' shares: of the bytes their NICs sent, or, without
        counters, of perftest's reports."""
        vals = list(self.wire_flows.values()) or [v for v in self.flows.values()
                                                  if v is not None]
        return jain(vals) if len(vals) == len(SENDERS) else 0.0

    @property
    def total(self):
        return sum(v for v in self.flows.values() if v is not None)

    def xoff_sent(self):
        """XOFF (and refreshes) the switch sent to the senders on priority 3."""
        return sum(self.sw_port(s).get("pfc_xoff_sent", [0] * 8)[PRIO] for s in SENDERS)

    def nic_pauses(self):
        """Pause frames for priority 3 the senders' NICs received (ethtool rx_prio3_pause)."""
        return sum(self.eth(s, "rx_prio%d_pause" % PRIO) for s in SENDERS)

    def ecn_marked(self):
        return sum(q.get("ecn_marked", 0) for p in self.switch.values()
                   for q in p.get("queues", []))

    def int_hops(self):
        """INT records the switch filled in (every port)."""
        return sum(p.get("int_hops_added", 0) for p in self.switch.values())

    def lossless_drops(self):
        return sum(p.get("lossless_drops", 0) for p in self.switch.values())

    def switch_drops(self):
        return sum(q.get("drops", 0) for p in self.switch.values() for q in p.get("queues", []))

    def bottleneck(self):
        """The measurement window's entry of the receiver's egress FIFO of priority 3."""
        for w in self.window:
            if w["port"] == self.port_of[RECEIVER] and w["prio"] == PRIO:
                return w
        return {"max_bytes": 0, "p50_bytes": 0, "p99_bytes": 0, "mean_bytes": 0}

    def lost(self):
        """Signs of loss at the RoCE transport (all nodes). (Not rx_roce_discards: when the
        runs end, the receiver's perftest destroys its QPs while the bottleneck FIFO still
        holds the last few hundred KB of writes, which then arrive for a QP that is gone.)"""
        return {k: self.sum_rdma(k) for k in ("retrans_pkts", "out_of_sequence",
                                              "local_ack_timeout_err", "packet_seq_err",
                                              "implied_nak_seq_err", "duplicate_request")}

    def as_dict(self):
        return {"label": self.label, "ok": self.ok, "why": self.why, "flows": self.flows,
                "wire_flows": self.wire_flows, "jain": self.jain, "summary": dict(summary(self)), "nodes": self.nodes,
                "switch": self.switch, "window": self.window, "config": self.config,
                "qp_cc": self.qp_cc, "qp_hpcc": self.qp_hpcc, "qp_timely": self.qp_timely}


def _switch_delta(after, before):
    out = {}
    for pa, pb in zip(after["switch"]["ports"], before["switch"]["ports"]):
        d = {}
        for k, v in pa.items():
            if isinstance(v, int):
                d[k] = v - pb.get(k, 0)
            elif isinstance(v, list) and v and isinstance(v[0], int):
                d[k] = [x - y for x, y in zip(v, pb.get(k, [0] * len(v)))]
        qs = []
        for qa, qb in zip(pa.get("queues", []), pb.get("queues", [])):
            qd = {k: (v - qb.get(k, 0) if k not in ("max_bytes", "bytes", "prio") else v)
                  for k, v in qa.items() if isinstance(v, int)}
            qs.append(qd)
        d["queues"] = qs
        out[pa.get("port", len(out))] = d
    return out


def incast(fab, label, duration, timeout=None, retries=2):
    """Both senders write to the receiver for ``duration`` seconds at once; counters and the
    switch's statistics around it. A run that failed with a known perftest start race (the
    client came before its server listened) is repeated once (``retries``)."""
    c = fab.c
    tg = fab.target
    timeout = timeout or duration + 120
    run = Run(label)
    run.duration = duration
    run.port_of = dict(fab.switch.port_of)
    run.config = fab.config
    opts = PERF_OPTS % (duration, TCLASS)
    recv = c[RECEIVER]
    for attempt in range(1, retries + 1):
        run.attempts = attempt
        ports = {s: rt.next_port() for s in SENDERS}
        before = fab.counters()
        sw_before = fab.switch.stats(new_window=True)
        servers = {s: recv.spawn("exec timeout -s KILL %d ib_write_bw %s -p %d %s" % (
            timeout + 20, tg.common(recv), ports[s], opts), timeout=timeout + 40)
            for s in SENDERS}
        deadline = time.monotonic() + 60
        waiting = set(SENDERS)
        while waiting and time.monotonic() < deadline:
            waiting = {s for s in waiting if not servers[s].done()
                       and not rt.tcp_listening(recv, ports[s])}
            if waiting:
                time.sleep(0.2)
        if waiting:
            for j in servers.values():
                j.kill(9)
            run.why = "server(s) for %s did not listen" % sorted(waiting)
            continue
        clients = {s: c[s].spawn("timeout -s KILL %d ib_write_bw %s -p %d %s %s" % (
            timeout, tg.common(c[s]), ports[s], opts, tg.ip(recv)), timeout=timeout + 30)
            for s in SENDERS}
        run.qp_cc = {s: [] for s in SENDERS}
        run.qp_hpcc = {s: [] for s in SENDERS}
        run.qp_timely = {s: [] for s in SENDERS}
        while not all(clients[s].done() for s in SENDERS):
            for s in SENDERS:
                cc, hp, tl = qp_cc_views(c[s])
                run.qp_cc[s] += cc
                run.qp_hpcc[s] += hp
                run.qp_timely[s] += tl
            time.sleep(2)
        cres = {s: clients[s].wait(timeout=timeout + 60, raise_timeout=False) for s in SENDERS}
        sres = {}
        for s in SENDERS:
            sres[s] = servers[s].wait(timeout=60 if cres[s].rc == 0 else 10,
                                      raise_timeout=False)
            if not servers[s].done():
                servers[s].kill(9)
                sres[s] = servers[s].wait(timeout=30, raise_timeout=False)
        sw_after = fab.switch.stats(new_window=True)
        after = fab.counters()
        run.results = [(s, cres[s], sres[s]) for s in SENDERS]
        run.nodes = {n: {kind: delta(after[n][kind], before[n][kind]) for kind in after[n]}
                     for n in after}
        run.switch = _switch_delta(sw_after, sw_before)
        run.window = sw_after["process"].get("window", {}).get("queues", [])
        run.sock_drops = sum(p["drop_queue_full"] + p["drop_unconnected"] -
                             q["drop_queue_full"] - q["drop_unconnected"]
                             for p, q in zip(sw_after["process"]["ports"],
                                             sw_before["process"]["ports"]))
        run.flows = {}
        bad = []
        for s in SENDERS:
            rows = rt.parse_perftest(cres[s].stdout, "bw")
            run.flows[s] = rows[-1]["bw_avg"] if rows else None
            if cres[s].rc != 0 or sres[s].rc != 0 or not rows:
                bad.append("node%d: client rc %s, server rc %s%s" % (
                    s, cres[s].rc, sres[s].rc, "" if rows else ", no result line"))
        if not bad:
            run.ok = True
            run.why = ""
            return run
        run.why = "; ".join(bad)
        raced = any(rt.STARTUP_RACE.search(cres[s].stdout + cres[s].stderr) for s in SENDERS)
        if not raced:
            return run
        time.sleep(1)
    return run


def qp_cc_views(node):
    """The congestion control of each RC QP of ib_write_bw on ``node`` as the admin sees it
    (``rdma -dd res show qp``): [(drv_dcqcn_rate_mbps, drv_dcqcn_alpha)] of QPs on a DCQCN
    (or no) priority, [(drv_hpcc_window, drv_hpcc_rate_mbps, drv_hpcc_util)] of QPs on an
    HPCC priority, [(drv_timely_rate_mbps, drv_timely_rtt_ns, drv_timely_rtt_diff_ns)] of
    QPs on a TIMELY priority; ([], [], []) if it cannot tell (the QP not created yet or
    already gone)."""
    try:
        qps = rt.rdma_res(node, "qp", driver=True)
    except (rt.RdmaError, HarnessError):
        return [], [], []
    qps = [q for q in qps if q.get("comm") == "ib_write_bw" and q.get("type") == "RC"]
    return ([(q["drv_dcqcn_rate_mbps"], q.get("drv_dcqcn_alpha", 0)) for q in qps
             if "drv_dcqcn_rate_mbps" in q],
            [(q["drv_hpcc_window"], q.get("drv_hpcc_rate_mbps", 0), q.get("drv_hpcc_util", 0))
             for q in qps if "drv_hpcc_window" in q],
            [(q["drv_timely_rate_mbps"], q.get("drv_timely_rtt_ns", 0),
              q.get("drv_timely_rtt_diff_ns", 0))
             for q in qps if "drv_timely_rate_mbps" in q])


def save(runs, path):
    """Every figure of ``runs`` as JSON in ``path``."""
    with open(path, "w") as f:
        json.dump([r.as_dict() for r in runs], f, indent=1)


def diag(run):
    """The outputs of a run's perftest processes (for a failed check)."""
    out = [run.why] if run.why else []
    for s, cr, sr in run.results:
        for label, r in (("client node%d" % s, cr), ("server for node%d" % s, sr)):
            if r is not None:
                out.append("--- %s (rc %s, %.1f s)\n%s%s" % (label, r.rc, r.duration,
                                                              r.stdout[-1500:],
                                                              r.stderr[-800:]))
    return "\n".join(out)


def summary(run):
    """The figures of a run as an ordered list of (name, value text)."""
    b = run.bottleneck()
    lost = run.lost()
    f = ["%.2f" % run.flows[s] if run.flows.get(s) is not None else "-" for s in SENDERS]
    w = run.wire_flows
    w = ["%.2f" % w[s] if s in w else "-" for s in SENDERS]
    return [
        ("flow node1 -> node0 (MB/s)", f[0]),
        ("flow node2 -> node0 (MB/s)", f[1]),
        ("total (MB/s)", "%.2f" % run.total),
        ("node1 sent on the wire (MB/s)", w[0]),
        ("node2 sent on the wire (MB/s)", w[1]),
        ("Jain index", "%.3f" % run.jain),
        ("ECN CE received (node0)", str(run.rdma(RECEIVER, "np_ecn_marked_roce_packets"))),
        ("CNPs sent (node0)", str(run.rdma(RECEIVER, "np_cnp_sent"))),
        ("CNPs handled (node1+2)", str(run.sum_rdma("rp_cnp_handled", SENDERS))),
        ("rate cuts (node1+2)", str(run.sum_rdma("rp_rate_decrease_events", SENDERS))),
        ("switch ECN marks", str(run.ecn_marked())),
        ("switch INT records", str(run.int_hops())),
        ("INT echoes sent (node0)", str(run.rdma(RECEIVER, "hpcc_int_echoes_sent"))),
        ("HPCC window updates (node1+2)", str(run.sum_rdma("hpcc_window_updates", SENDERS))),
        ("TIMELY RTT samples (node1+2)", str(run.sum_rdma("timely_rtt_samples", SENDERS))),
        ("TIMELY rate cuts / increases (node1+2)", "%d / %d" % (
            run.sum_rdma("timely_rate_decreases", SENDERS),
            run.sum_rdma("timely_rate_increases", SENDERS))),
        ("switch XOFF to senders", str(run.xoff_sent())),
        ("sender NIC rx_prio3_pause", str(run.nic_pauses())),
        ("bottleneck queue p50/p99/max (KiB)", "%d/%d/%d" % (
            b["p50_bytes"] // 1024, b["p99_bytes"] // 1024, b["max_bytes"] // 1024)),
        ("switch drops (lossless)", "%d (%d)" % (run.switch_drops(), run.lossless_drops())),
        ("retrans_pkts / out_of_sequence", "%d / %d" % (lost["retrans_pkts"],
                                                        lost["out_of_sequence"])),
    ]


def side_by_side(runs):
    """A text table: one column per run."""
    rows = [summary(r) for r in runs]
    names = [n for n, _ in rows[0]]
    w0 = max(len(n) for n in names) + 2
    ws = [max(len(r.label), max(len(v) for _, v in s)) + 2 for r, s in zip(runs, rows)]
    lines = ["".ljust(w0) + "".join(r.label.rjust(w) for r, w in zip(runs, ws))]
    for i, name in enumerate(names):
        lines.append(name.ljust(w0) + "".join(s[i][1].rjust(w) for s, w in zip(rows, ws)))
    return "\n".join(lines)


def nonzero(d, pattern):
    """The entries of ``d`` whose names match ``pattern`` with a non-zero value."""
    return {k: v for k, v in d.items() if re.search(pattern, k) and v}
