"""RDMA between two guests, the same code for tern and for Soft-RoCE (rxe).

Used by tests/guest/rdma.t, bench/rdma.py and scripts/demo.py. A :class:`Target` is one RDMA
device per guest: ``Target(cluster, "tern", wire=0)`` is tern_ib's ``tern0`` on the tern
NIC, ``Target(cluster, "rxe", wire=1)`` is Soft-RoCE's ``rxe0`` over the virtio-net NIC of the
same guests. The kind can also differ per node: ``Target(cluster, ["tern", "rxe"], wire=0)``
is tern0 on node 0's tern NIC and Soft-RoCE's rxe0 on node 1's virtio-net NIC of the same
(mixed) segment, for interoperability. Everything else (perftest, ibv_rc_pingpong,
rdma-check) only sees the device name, the GID index and the IP address the target reports
for each node.
"""

import json
import re
import time

from harness import CommandTimeout

# perftest's out-of-band TCP ports: one per run, so that a killed run's socket cannot
# collide with the next one.
_next_port = [18600]


def next_port():
    _next_port[0] += 1
    if _next_port[0] > 19500:
        _next_port[0] = 18601
    return _next_port[0]


class RdmaError(Exception):
    """The target could not be set up (message says what was missing or failed)."""


class Target:
    """The RDMA device ``kind`` ("tern" or "rxe") on every node of ``cluster``, over
    ``wire``; ``kind`` may be a list with one kind per node (in node order) for a mixed
    pair."""

    IBDEV = {"tern": "tern0", "rxe": "rxe0"}
    MODULE = {"tern": "tern_ib", "rxe": "rdma_rxe"}

    def __init__(self, cluster, kind, wire):
        kinds = [kind] * len(cluster.nodes) if isinstance(kind, str) else list(kind)
        if len(kinds) != len(cluster.nodes):
            raise ValueError("%d RDMA target kinds for %d nodes" % (len(kinds),
                                                                     len(cluster.nodes)))
        for k in kinds:
            if k not in ("tern", "rxe"):
                raise ValueError("unknown RDMA target %r" % (k,))
        self.cluster = cluster
        self.kinds = kinds          # node index -> kind
        self.kind = kind if isinstance(kind, str) else "+".join(kinds)
        self.wire = wire
        # the device and module names of a single-kind target (the same on every node)
        self.ibdev = self.IBDEV[kinds[0]] if len(set(kinds)) == 1 else None
        self.module = self.MODULE[kinds[0]] if len(set(kinds)) == 1 else None
        self.netdev = {}        # node index -> interface name
        self.gid_index = {}     # node index -> index of the RoCEv2 IPv4 GID

    def __repr__(self):
        return "<Target %s on wire %d>" % (
            " ".join("%s:%s" % (i, self.IBDEV[k]) for i, k in enumerate(self.kinds)),
            self.wire)

    @property
    def label(self):
        return self.kind

    def kind_of(self, node):
        """The kind ("tern" or "rxe") of the device on ``node``."""
        return self.kinds[node.index]

    def ibdev_of(self, node):
        """The RDMA device name on ``node`` (tern0 or rxe0)."""
        return self.IBDEV[self.kind_of(node)]

    def module_of(self, node):
        return self.MODULE[self.kind_of(node)]

    def ip(self, node):
        return node.ip(self.wire)

    # --- bring-up ---------------------------------------------------------------------------

    def available(self, node):
        """None if the target's module exists in ``node``'s initramfs, else why not."""
        module = self.module_of(node)
        r = node.run("modinfo -F filename %s" % module, timeout=30)
        if r.rc != 0:
            return "%s.ko is not in the guest image (%s)" % (module, r.stderr.strip())
        if self.kind_of(node) == "tern":
            r = node.run("ls /etc/libibverbs.d/ | grep -qx tern.driver", timeout=30)
            if r.rc != 0:
                return ("the tern provider is not in the guest image "
                        "(no /etc/libibverbs.d/tern.driver; run scripts/build-provider.sh)")
        return None

    def load(self, node, timeout=120):
        """Load the driver on ``node`` and create the device; returns the Result of the
        last command (rc 0 on success)."""
        if self.kind_of(node) == "tern":
            return node.run("modprobe tern_core && modprobe tern_ib", timeout=timeout)
        dev = self.netdev[node.index]
        ibdev = self.ibdev_of(node)
        return node.run("modprobe -q crc32_generic; modprobe rdma_rxe && "
                        "{ rdma link show %s/1 >/dev/null 2>&1 || "
                        "rdma link add %s type rxe netdev %s; }" % (ibdev, ibdev, dev),
                        timeout=timeout)

    def unload(self, node, timeout=120):
        """Remove the RDMA device and its module (the netdev stays)."""
        if self.kind_of(node) == "tern":
            return node.run("rmmod tern_ib", timeout=timeout)
        return node.run("rdma link delete %s && rmmod rdma_rxe" % self.ibdev_of(node),
                        timeout=timeout)

    def setup(self, timeout=60):
        """On every node: the netdev up with its address, the RDMA device created, its port
        ACTIVE and its IPv4 RoCEv2 GID found. Raises RdmaError when something is missing."""
        c = self.cluster
        for n in c:
            if self.kind_of(n) == "tern":
                r = n.run("modprobe tern_core", timeout=timeout)
                if r.rc != 0:
                    raise RdmaError("%s: modprobe tern_core: %s" % (n.name, r.stderr))
        for n in c:
            self.netdev[n.index] = n.configure_ip(self.wire)
        for n in c:
            r = self.load(n)
            if r.rc != 0:
                raise RdmaError("%s: loading %s: %s%s" % (n.name, self.module_of(n), r.stdout,
                                                          r.stderr))
        for n in c:
            self.wait_ready(n, timeout)

    def wait_ready(self, node, timeout=60):
        """Wait until ``node``'s device is ACTIVE with an IPv4 RoCEv2 GID; records the GID
        index. A look that times out in the guest (a debug kernel on a loaded host can take
        more than its 30 s) counts as not ready yet."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            try:
                idx, last = self.find_gid(node)
            except CommandTimeout as e:
                idx, last = None, "looking timed out: %s" % e
            if idx is not None:
                self.gid_index[node.index] = idx
                return idx
            time.sleep(0.5)
        raise RdmaError("%s: %s has no ACTIVE port with an IPv4 RoCEv2 GID within %d s:\n%s" % (
            node.name, self.ibdev_of(node), timeout, last))

    def find_gid(self, node):
        """(index of the RoCE v2 GID holding ``node``'s IPv4 address, or None; the state and
        GID table as text). One grep reads the state and the first 16 GIDs and types."""
        octets = [int(x) for x in self.ip(node).split(".")]
        want = "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(octets)
        d = "/sys/class/infiniband/%s/ports/1" % self.ibdev_of(node)
        r = node.run("cd %s && cat state && grep -H . gids/[0-9] gids/1[0-5] "
                     "gid_attrs/types/[0-9] gid_attrs/types/1[0-5] 2>/dev/null" % d, timeout=30)
        text = r.stdout
        first = text.splitlines()[0] if text else ""
        if "ACTIVE" not in first:
            return None, text
        gids, types = {}, {}
        for line in text.splitlines()[1:]:
            path, _, value = line.partition(":")
            kind, _, i = path.rpartition("/")
            if i.isdigit():
                (gids if kind == "gids" else types)[int(i)] = value.strip()
        for i in sorted(gids):
            if gids[i] == want and types.get(i) == "RoCE v2":
                return i, text
        return None, text

    def gid(self, node):
        return self.gid_index[node.index]

    def common(self, node):
        """Options every perftest run on ``node`` takes: device, port, GID, no CPU frequency
        check (emulated CPU)."""
        return "-d %s -i 1 -x %d -F" % (self.ibdev_of(node), self.gid(node))


# --- running a client/server pair ------------------------------------------------------------

def tcp_listening(node, port):
    """True when something on ``node`` listens on TCP ``port`` (any address)."""
    r = node.run("grep -qi ':%04X 00000000:0000 0A' /proc/net/tcp" % port, timeout=20)
    return r.rc == 0


class PairResult:
    """The outcome of a client/server pair: ``ok`` (both exited 0), ``server`` and
    ``client`` (harness Results, or None), ``attempts``, ``seconds`` (the client's run),
    ``why`` (a one-line reason when not ok)."""

    def __init__(self):
        self.ok = False
        self.server = None
        self.client = None
        self.attempts = 0
        self.seconds = 0.0
        self.why = ""

    def diag(self):
        out = [self.why] if self.why else []
        for label, r in (("client", self.client), ("server", self.server)):
            if r is not None:
                out.append("--- %s (rc %s, %.1f s): %s" % (label, r.rc, r.duration, r.cmd))
                out.append(r.stdout[-3000:])
                if r.stderr.strip():
                    out.append("stderr: " + r.stderr[-2000:])
        return "\n".join(out)


# Client messages that mean the server was not ready yet: retry both sides together. (An
# rdma_cm reject with reason 8, invalid service ID, means no listener for the port yet.)
STARTUP_RACE = re.compile(r"Couldn't connect|Unable to (init|open) the socket|"
                          r"Failed to exchange data between server and clients|"
                          r"Connection refused|Couldn't read remote address|"
                          r"RDMA_CM_EVENT_REJECTED; error: 8\b", re.I)


def cm_listening(node, port):
    """True when an rdma_cm ID on ``node`` listens on ``port`` (``rdma res show cm_id``).
    A wildcard listener shows there before rdma_cm has attached it to every device (a
    connection request in between is rejected as for an unknown service): once it shows,
    this waits one more second."""
    r = node.run("rdma res show cm_id", timeout=20)
    if r.rc == 0 and re.search(r"state LISTEN\b.*\bsrc-addr \S*:%d(\s|$)" % port,
                               r.stdout, re.M):
        time.sleep(1)
        return True
    return False


def load_rdma_cm(node, timeout=60):
    """Load the kernel's rdma_cm with its user-space interface (rdma_ucm: librdmacm opens
    /dev/infiniband/rdma_cm) and make sure configfs is mounted (rdma_cm's per-device settings
    live in /sys/kernel/config/rdma_cm). Returns the Result (rc 0 on success)."""
    return node.run("modprobe rdma_ucm && { grep -q ' /sys/kernel/config configfs' "
                    "/proc/mounts || mount -t configfs configfs /sys/kernel/config; } && "
                    "[ -c /dev/infiniband/rdma_cm ]", timeout=timeout)


def cm_roce_mode(node, ibdev, mode=None, timeout=30):
    """rdma_cm's default RoCE mode (the GID type its connections use) for port 1 of
    ``ibdev``, through configfs as an administrator sets it: with ``mode`` (e.g. "RoCE v2")
    set it first. Returns (the mode read back, or None; the Result)."""
    d = "/sys/kernel/config/rdma_cm/%s" % ibdev
    cmd = "mkdir -p %s && " % d
    if mode:
        cmd += "echo '%s' > %s/ports/1/default_roce_mode && " % (mode, d)
    cmd += "cat %s/ports/1/default_roce_mode" % d
    r = node.run(cmd, timeout=timeout)
    return (r.stdout.strip() or None) if r.rc == 0 else None, r


def run_pair(server, client, server_cmd, client_cmd, port, timeout, retries=3, before=None,
             after=None, listening=None):
    """Start ``server_cmd`` on ``server`` (it must listen on TCP ``port``), wait until it
    listens, run ``client_cmd`` on ``client``; both bounded by ``timeout`` seconds (guest
    side ``timeout -s KILL`` as well as the harness's). A client that could not reach the
    server restarts both sides, up to ``retries`` times. ``before()`` and ``after()``, when
    given, are called right before the client starts and right after it exits.
    ``listening(node, port)`` tells when the server is ready (default :func:`tcp_listening`;
    :func:`cm_listening` for programs that listen through rdma_cm)."""
    listening = listening or tcp_listening
    res = PairResult()
    for attempt in range(1, retries + 1):
        res.attempts = attempt
        job = server.spawn("exec timeout -s KILL %d %s" % (timeout + 20, server_cmd),
                           timeout=timeout + 40)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not job.done():
            if listening(server, port):
                break
            time.sleep(0.2)
        if job.done() or time.monotonic() >= deadline:
            job.kill(9)
            res.server = job.wait(timeout=60, raise_timeout=False)
            res.why = "the server did not start listening on port %d" % port
            if job.done() and attempt < retries:
                time.sleep(1)
                continue
            return res
        if before:
            before()
        t0 = time.monotonic()
        res.client = client.run("timeout -s KILL %d %s" % (timeout, client_cmd),
                                timeout=timeout + 30)
        res.seconds = time.monotonic() - t0
        if after:
            after()
        try:
            res.server = job.wait(timeout=60 if res.client.rc == 0 else 10,
                                  raise_timeout=False)
        except Exception:  # noqa: BLE001 - the harness's CommandTimeout: stop the server
            job.kill(9)
            res.server = job.wait(timeout=60, raise_timeout=False)
        if res.client.rc == 0 and res.server.rc == 0:
            res.ok = True
            res.why = ""
            return res
        if not job.done():
            job.kill(9)
            res.server = job.wait(timeout=60, raise_timeout=False)
        res.why = "client rc %s, server rc %s%s" % (
            res.client.rc, res.server.rc,
            " (killed at the %d s limit)" % timeout if res.client.rc in (124, 137) else "")
        if attempt < retries and STARTUP_RACE.search(res.client.stdout + res.client.stderr):
            time.sleep(1)
            continue
        return res
    return res


# --- UD multicast through rdma_cm (rdmacm-utils' mckey) ----------------------------------

class McKeyResult:
    """What :func:`mckey` saw: ``joined`` (every receiver showed the group on its netdev
    before the sender started), ``sender`` and ``receivers`` (node index -> Result, or None),
    ``ok`` (the sender and every receiver ended with ``return status 0``, the receivers after
    ``data transfers complete``)."""

    def __init__(self):
        self.joined = False
        self.sender = None
        self.receivers = {}
        self.ok = False

    def received(self, node):
        r = self.receivers.get(node.index)
        return (self.sender is not None and self.sender.rc == 0 and
                "return status 0" in self.sender.stdout and r is not None and r.rc == 0 and
                "data transfers complete" in r.stdout and "return status 0" in r.stdout)

    def diag(self):
        out = ["sender: %s" % ("rc %s\n%s%s" % (self.sender.rc, self.sender.stdout,
                                                self.sender.stderr)
                               if self.sender is not None else "not started")]
        for i, r in sorted(self.receivers.items()):
            out.append("receiver node%d: rc %s\n%s%s" % (i, r.rc, r.stdout, r.stderr)
                       if r is not None else "receiver node%d: no result" % i)
        return out


def mcast_joined(target, node, group):
    """True when ``group`` (an IPv4 address) is joined on ``node``'s RDMA netdev: rdma_cm's
    rdma_join_multicast joins the IP group there, which puts the group's MAC address
    (01:00:5e and its low 23 bits) in the netdev's multicast list (``ip maddr``). The MAC is
    what shows on every kernel: the debug kernel is built without CONFIG_IP_MULTICAST, so it
    lists no IPv4 groups (and sends no IGMP reports)."""
    b = [int(x) for x in group.split(".")]
    mac = "01:00:5e:%02x:%02x:%02x" % (b[1] & 0x7f, b[2], b[3])
    r = node.run("ip maddr show dev %s" % target.netdev[node.index], timeout=20)
    return re.search(r"link\s+%s\b" % re.escape(mac), r.stdout) is not None


def mckey(target, sender, receivers, group, count, size, timeout):
    """rdmacm-utils' mckey: a receiver (``mckey -m group -b <its address> -C count -S
    size``) on each node of ``receivers``, started first; once each shows the group on its
    netdev the sender (the same with ``-s``) sends ``count`` messages of ``size`` bytes. A
    mckey receiver polls its CQ until it has ``count`` completions, so it ends only when every
    message arrived; one that has not ended 60 s after the sender is stopped. Returns a
    :class:`McKeyResult`."""
    res = McKeyResult()
    mc = "mckey -m %s -C %d -S %d" % (group, count, size)
    jobs = {}
    for n in receivers:
        jobs[n.index] = n.spawn("exec timeout -s KILL %d %s -b %s" % (
            timeout, mc, target.ip(n)), timeout=timeout + 20)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(j.done() for j in jobs.values()):
            break
        if all(mcast_joined(target, n, group) for n in receivers):
            res.joined = True
            break
        time.sleep(0.5)
    if res.joined:
        res.sender = sender.run("timeout -s KILL %d %s -b %s -s" % (timeout, mc,
                                                                     target.ip(sender)),
                                timeout=timeout + 30)
    for n in receivers:
        job = jobs[n.index]
        sent = res.sender is not None and res.sender.rc == 0
        try:
            res.receivers[n.index] = job.wait(timeout=60 if sent else 5)
        except CommandTimeout:
            job.kill(9)
            res.receivers[n.index] = job.wait(timeout=60, raise_timeout=False)
    res.ok = res.joined and all(res.received(n) for n in receivers)
    return res


# --- perftest -------------------------------------------------------------------------------

BW_COLS = ("bytes", "iterations", "bw_peak", "bw_avg", "msg_rate")
LAT_COLS = ("bytes", "iterations", "t_min", "t_max", "t_typical", "t_avg", "t_stdev",
            "p99", "p999")


def parse_perftest(text, kind):
    """The result rows of perftest output: a list of dicts (``BW_COLS`` in MB/s and Mpps for
    ``kind`` "bw", ``LAT_COLS`` in microseconds for "lat")."""
    cols = BW_COLS if kind == "bw" else LAT_COLS
    rows = []
    header = False
    for line in text.splitlines():
        if "#bytes" in line:
            header = True
            continue
        if not header:
            continue
        f = line.split()
        if len(f) >= len(cols) - 1 and f[0].isdigit() and f[1].isdigit():
            try:
                vals = [int(f[0]), int(f[1])] + [float(x) for x in f[2:len(cols)]]
            except ValueError:
                continue
            rows.append(dict(zip(cols, vals)))
    return rows


def perftest(target, prog, opts="", server=None, client=None, timeout=300, retries=3,
             before=None, after=None):
    """Run perftest ``prog`` (e.g. "ib_write_bw") with ``opts`` between ``server`` (default
    node 1) and ``client`` (node 0) of ``target``'s cluster. Returns (PairResult, rows parsed
    from the client's output). With ``-R`` in ``opts`` perftest connects through rdma_cm
    (its port is then an rdma_cm port, not a TCP one)."""
    c = target.cluster
    server = server or c[1]
    client = client or c[0]
    port = next_port()
    scmd = "%s %s -p %d %s" % (prog, target.common(server), port, opts)
    ccmd = "%s %s -p %d %s %s" % (prog, target.common(client), port, opts, target.ip(server))
    res = run_pair(server, client, scmd, ccmd, port, timeout, retries, before, after,
                   listening=cm_listening if "-R" in opts.split() else tcp_listening)
    rows = []
    if res.client is not None:
        rows = parse_perftest(res.client.stdout, "bw" if prog.endswith("_bw") else "lat")
    if res.ok and not rows:
        res.ok = False
        res.why = "no result line in the client's output"
    return res, rows


def spawn_write_bw(target, server, client, seconds=600, timeout=900):
    """Start ``ib_write_bw -D seconds`` from ``client`` to ``server`` and return their jobs
    (server, client) without waiting for them: for tests that disturb a running transfer."""
    port = next_port()
    srv = server.spawn("exec ib_write_bw %s -p %d -D %d" % (target.common(server), port,
                                                            seconds), timeout=timeout)
    deadline = time.monotonic() + 60
    while not tcp_listening(server, port) and time.monotonic() < deadline:
        time.sleep(0.5)
    cli = client.spawn("exec ib_write_bw %s -p %d -D %d %s" % (
        target.common(client), port, seconds, target.ip(server)), timeout=timeout)
    return srv, cli


def back_and_short_bw(target, node, timeout):
    """After a disruption on ``node``: wait (60 s) until its device is ACTIVE with its GID
    again, then run a short ``ib_write_bw -n 100``. Returns (why it did not come back or
    None, PairResult, rows)."""
    try:
        target.wait_ready(node, 60)
        why = None
    except RdmaError as e:
        why = str(e)
    res, rows = perftest(target, "ib_write_bw", "-n 100", timeout=timeout)
    return why, res, rows


def rdma_res(node, kind, driver=False):
    """``rdma -j res show <kind>`` as a list of dicts (kind: qp, cq, mr, pd); ``driver``:
    with the driver's own attributes (``-dd``: ``drv_*`` keys)."""
    r = node.run("rdma %s-j res show %s" % ("-dd " if driver else "", kind), timeout=30)
    if r.rc != 0:
        raise RdmaError("%s: rdma res show %s: %s" % (node.name, kind, r.stderr))
    try:
        data = json.loads(r.stdout or "[]")
    except ValueError:
        raise RdmaError("%s: rdma res show %s: not JSON: %r" % (node.name, kind, r.stdout))
    return data


def cpu_jiffies(node):
    """The first line of ``node``'s /proc/stat as a dict of jiffies (user, nice, system,
    idle, iowait, irq, softirq, steal)."""
    r = node.run("head -1 /proc/stat", timeout=30, check=True)
    f = r.stdout.split()
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    return dict(zip(names, (int(x) for x in f[1:1 + len(names)])))


def hw_counters(node, ibdev):
    """The port counters of ``ibdev`` (``/sys/class/infiniband/<ibdev>/ports/1/hw_counters``,
    the names ``rdma statistic`` shows) as a dict of name -> int."""
    r = node.run("cd /sys/class/infiniband/%s/ports/1/hw_counters 2>/dev/null && grep -H . *"
                 % ibdev, timeout=30)
    out = {}
    for line in r.stdout.splitlines():
        name, _, value = line.partition(":")
        if value.strip().isdigit():
            out[name] = int(value)
    return out


def counter_delta(after, before):
    return {k: after[k] - before.get(k, 0) for k in after}


def wire_faults_path(node, netdev):
    """tern_core's debugfs directory of the wire fault injector of ``netdev``'s NIC (a file
    per value: Documentation/admin/tern_core.rst, "Wire fault injection")."""
    r = node.run("basename $(readlink -f /sys/class/net/%s/device)" % netdev, timeout=30)
    return "/sys/kernel/debug/tern/%s/wire_faults" % r.stdout.strip()


def read_wire_faults_dir(node, path):
    """The injector's values in the directory ``path`` ({file: int}: ``drop_ppm``, ...,
    ``roce_only``, ``seed`` and the counters ``frames``, ``dropped``, ...)."""
    r = node.run("cd %s && grep -s . *" % path, timeout=30)
    out = {}
    for line in r.stdout.splitlines():
        k, _, v = line.partition(":")
        try:
            out[k.strip()] = int(v, 0)
        except ValueError:
            pass
    return out


def read_wire_faults(node, netdev):
    """The injector's settings and counts of ``netdev``'s NIC (read_wire_faults_dir)."""
    return read_wire_faults_dir(node, wire_faults_path(node, netdev))


def set_wire_faults_dir(node, path, **values):
    """Sets the injector in the directory ``path`` to ``values`` ({file: int}, e.g.
    drop_ppm=10000, roce_only=1, seed=5), everything else 0; no values: off. Each write
    restarts the device's generator from the seed then set: the seed and roce_only go in
    first, the probabilities last, so the damage starts with all of them in place."""
    order = sorted(values, key=lambda k: ("seed", "roce_only").index(k)
                   if k in ("seed", "roce_only") else 2)
    cmds = ["echo 1 > %s/off" % path]
    cmds += ["echo %d > %s/%s" % (values[k], path, k) for k in order]
    return node.run(" && ".join(cmds), timeout=30)


def wire_faults_str(values):
    """``values`` of set_wire_faults() as "file=value ..." for test messages."""
    return " ".join("%s=%d" % kv for kv in values.items()) or "off"


def set_wire_faults(node, netdev, **values):
    """set_wire_faults_dir() on ``netdev``'s NIC."""
    return set_wire_faults_dir(node, wire_faults_path(node, netdev), **values)
