"""Boot a cluster of emulated servers (QEMU guests) joined by wires, and tear it down.

Each guest boots Debian's stock kernel with the initramfs from scripts/mkinitramfs.sh and
runs the control agent (scripts/guest/agent.c) on a virtio-serial port that QEMU exposes as a
unix socket. Each wire is one L2 segment: for two guests QEMU's ``-netdev stream`` over a unix
socket (the lower-numbered guest listens); for more, a switch process (the fabric simulator)
that listens on one socket per port while every guest connects to it.
"""

import atexit
import glob
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

from . import hostsched, paths
from .agent import Agent
from .errors import BootError, HarnessError
from .klog import kernel_problems

# Nodes on wire k get 192.168.(100+k).(node+1)/24.
IP_PREFIX = "192.168.%d.%d"
PUT_CHUNK = 4 * 1024 * 1024
# Guest RAM (MiB) per kernel flavour: KASAN's shadow takes 1/8, kmemleak and lockdep more.
# A debug guest has about 950 MiB free after boot at 1280 (the tests use tens of MiB); every
# MiB costs boot time (struct pages, KASAN's shadow) and kmemleak scan time under TCG: at 1280
# against 2048, a boot took 38 s against 43 and a scan 16 s against 22 (2026-12-05, idle).
MEMORY = {"stock": 1024, "debug": 1280}
# Seconds until every guest's agent answers: a bound, not a measurement. Alone on the 2-core
# host the stock kernel boots in about 10 s and the debug kernel in about 36 s; with the
# suite's two halves side by side and something else running, a debug boot was seen past
# 100 s (dmesg at 101 s when the old 120 s bound ran out).
BOOT_TIMEOUT = {"stock": 120, "debug": 300}
KMEMLEAK = "/sys/kernel/debug/kmemleak"
# Written to the kernel log once a debug guest is up: kmemleak suspects allocated before it
# are boot's, not the test's.
KMEMLEAK_BASELINE = "tern-harness: kmemleak baseline"

_live = set()
_live_lock = threading.Lock()


class Wire:
    """One L2 segment between guests.

    ``nic``: ``"tern"`` (our device, behind its own PCIe root port) or ``"virtio"``
    (virtio-net-pci), or a list with one of them per guest on the wire, in increasing guest order
    (``["tern", "virtio"]``: the first guest has a tern NIC, the second a virtio-net NIC on
    the same segment, e.g. for Soft-RoCE interoperability). ``nodes``: indices of the guests on it (default: all). ``pcap``: dump
    its frames (both directions, as seen by the first guest on it) to ``wire<k>.pcap`` in the
    result dir; ``pcap=N`` (an int) keeps only each frame's first N bytes (headers: 128 holds
    Ethernet, IPv6, UDP, BTH, RETH and AETH). ``test_hooks``: set the tern device's ``test-hooks=on``. ``props``: extra
    ``-device`` properties (dict). ``switched``: connect every guest to a switch process
    (default: when more than two guests share the wire); needs ``Cluster(switch=...)``.
    """

    def __init__(self, nic="virtio", nodes=None, pcap=False, test_hooks=False, props=None,
                 switched=None):
        for n in ([nic] if isinstance(nic, str) else nic):
            if n not in ("tern", "virtio"):
                raise HarnessError("unknown NIC type %r (tern or virtio)" % (n,))
        self.nic = nic if isinstance(nic, str) else list(nic)
        self.nodes = list(nodes) if nodes is not None else None
        self.pcap = pcap
        self.test_hooks = test_hooks
        self.props = dict(props or {})
        self.switched = switched
        self.index = None       # set by the cluster
        self.sockets = {}       # node index -> unix socket path of its netdev
        self.listener = None    # node index that listens (point-to-point wires)
        self.pcap_path = None

    def __repr__(self):
        return "<Wire %s %s nodes=%s>" % (self.index, self.nic, self.nodes)

    def nic_of(self, node):
        """The NIC type of guest ``node`` (its index) on this wire."""
        if isinstance(self.nic, str):
            return self.nic
        return self.nic[self.nodes.index(node)]


def mac_address(wire, node):
    """The deterministic MAC of ``node``'s NIC on wire ``wire``: 02:74:65:WW:00:NN."""
    return "02:74:65:%02x:00:%02x" % (wire, node + 1)


def ipv6_link_local(mac):
    """The EUI-64 IPv6 link-local address the kernel derives from ``mac``."""
    b = [int(x, 16) for x in mac.split(":")]
    b[0] ^= 2
    eui = b[:3] + [0xff, 0xfe] + b[3:]
    return "fe80::" + ":".join("%x" % (eui[i] << 8 | eui[i + 1]) for i in range(0, 8, 2))


class Node:
    """One guest. Created by :class:`Cluster`; use ``cluster[i]`` or ``cluster.nodes``."""

    def __init__(self, cluster, index):
        self.cluster = cluster
        self.index = index
        self.name = "node%d" % index
        self.proc = None
        self.agent = None
        self.argv = None
        self.boot_seconds = None
        self._ifaces = {}
        d, r = cluster.tmpdir, cluster.result_dir
        self.ctl_path = os.path.join(d, self.name + ".ctl")
        self.qmp_path = os.path.join(d, self.name + ".qmp")
        self.pid_path = os.path.join(d, self.name + ".pid")
        self.console_path = os.path.join(r, self.name + ".console.log")
        self.qemu_log_path = os.path.join(r, self.name + ".qemu.log")
        self.agent_log_path = os.path.join(r, self.name + ".agent.log")

    def __repr__(self):
        return "<Node %s pid=%s>" % (self.name, self.pid)

    @property
    def pid(self):
        """QEMU's process id (None before boot)."""
        return self.proc.pid if self.proc else None

    @property
    def alive(self):
        """True while QEMU runs and the agent connection is up."""
        return bool(self.proc and self.proc.poll() is None and self.agent and self.agent.alive)

    # --- commands -------------------------------------------------------------------------

    def run(self, cmd, timeout=60, input=None, check=False):
        """Run shell script ``cmd`` in the guest and wait for it; returns a ``Result``.

        The guest kills the command (its whole process group) after ``timeout`` seconds and
        this raises ``CommandTimeout`` (its ``result`` has the partial output). ``input``
        (str/bytes) is fed to stdin. ``check=True`` raises ``CommandFailed`` on non-zero exit.
        Background processes the script starts lose stdout/stderr when it exits: redirect
        them, or use :meth:`spawn`.
        """
        return self.agent.start(cmd, timeout, input).wait(check=check)

    def spawn(self, cmd, timeout=None, input=None):
        """Start ``cmd`` in the background; returns a ``Job`` (``wait()``, ``kill()``,
        ``poll()``, ``stdout`` so far). ``timeout`` (seconds, None: none) is guest-side."""
        return self.agent.start(cmd, timeout, input)

    def put(self, path, data, mode=None, timeout=120):
        """Write ``data`` (bytes or str) to file ``path`` in the guest."""
        if isinstance(data, str):
            data = data.encode()
        q = shlex.quote(path)
        for off in range(0, max(len(data), 1), PUT_CHUNK):
            redir = ">" if off == 0 else ">>"
            self.run("cat %s %s" % (redir, q), timeout=timeout,
                     input=data[off:off + PUT_CHUNK], check=True)
        if mode is not None:
            self.run("chmod %o %s" % (mode, q), check=True)

    def get(self, path, timeout=120):
        """Return the contents (bytes) of file ``path`` in the guest."""
        return self.run("cat %s" % shlex.quote(path), timeout=timeout, check=True).stdout_bytes

    def ping(self, timeout=10):
        """Agent round-trip without running anything; returns seconds."""
        return self.agent.ping(timeout)

    # --- kernel logs ----------------------------------------------------------------------

    def dmesg(self, timeout=30):
        """The guest's kernel ring buffer (via the agent), as text."""
        return self.run("dmesg", timeout=timeout, check=True).stdout

    def console(self):
        """What the guest printed on its serial console so far (kernel log and /init)."""
        try:
            with open(self.console_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def kernel_problems(self, ignore=(), source="console"):
        """Lines where the kernel complained (see ``klog.kernel_problems``).

        ``source``: ``"console"`` (the serial log on the host: works even after a crash) or
        ``"dmesg"`` (asks the agent; includes messages below the console log level).
        """
        text = self.console() if source == "console" else self.dmesg()
        return kernel_problems(text, ignore)

    # --- network --------------------------------------------------------------------------

    def _wire(self, wire):
        w = self.cluster.wires[wire if isinstance(wire, int) else wire.index]
        if self.index not in w.nodes:
            raise HarnessError("%s is not on wire %d" % (self.name, w.index))
        return w

    def mac(self, wire=0):
        """The MAC address of this node's NIC on ``wire``."""
        return mac_address(self._wire(wire).index, self.index)

    def ip(self, wire=0):
        """The IPv4 address :meth:`Cluster.configure_ip` gives this node on ``wire``."""
        return IP_PREFIX % (100 + self._wire(wire).index, self.index + 1)

    def ip6_link_local(self, wire=0):
        """The IPv6 link-local address of this node's interface on ``wire``."""
        return ipv6_link_local(self.mac(wire))

    def iface(self, wire=0, timeout=20):
        """The guest's network interface name on ``wire`` (found by MAC; waits for it to
        appear, e.g. while a driver loads)."""
        w = self._wire(wire)
        if w.index not in self._ifaces:
            script = _FIND_IFACE % {"mac": self.mac(w.index), "tries": int(timeout * 10)}
            res = self.run(script, timeout=timeout + 10, check=True)
            self._ifaces[w.index] = res.stdout.strip()
        return self._ifaces[w.index]

    def forget_ifaces(self):
        """Forget the interface names :meth:`iface` found: call it after a driver reload,
        which may give the interfaces new names."""
        self._ifaces.clear()

    def configure_ip(self, wire=0, timeout=20):
        """Bring this node's interface on ``wire`` up with its IPv4 address (/24); IPv6
        link-local comes up by itself. Returns the interface name."""
        w = self._wire(wire)
        dev = self.iface(w.index, timeout)
        self.run("ip -4 addr flush dev %s && ip link set %s up && ip addr add %s/24 dev %s" % (
            dev, dev, self.ip(w.index), dev), check=True)
        return dev

    def set_link(self, wire, up):
        """Set the QEMU-side link of this node's NIC on ``wire`` up or down (carrier)."""
        w = self._wire(wire)
        return self.qmp("set_link", name="nic%d" % w.index, up=bool(up))

    def qmp(self, command, **arguments):
        """Execute one QMP command on this node's QEMU and return its ``return`` value."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        try:
            s.connect(self.qmp_path)
            f = s.makefile("rwb")
            json.loads(f.readline())  # greeting
            for cmd in ({"execute": "qmp_capabilities"},
                        {"execute": command, "arguments": arguments}):
                f.write(json.dumps(cmd).encode() + b"\n")
                f.flush()
                while True:
                    reply = json.loads(f.readline())
                    if "event" not in reply:
                        break
                if "error" in reply:
                    raise HarnessError("%s: QMP %s: %s" % (self.name, cmd["execute"],
                                                          reply["error"].get("desc")))
            return reply.get("return")
        except (OSError, ValueError) as e:
            raise HarnessError("%s: QMP %s failed: %s" % (self.name, command, e)) from None
        finally:
            s.close()


_FIND_IFACE = r"""
i=0
while [ $i -lt %(tries)d ]; do
	for d in /sys/class/net/*; do
		[ -e "$d/device" ] && [ "$(cat "$d/address")" = "%(mac)s" ] && { echo "${d##*/}"; exit 0; }
	done
	sleep 0.1
	i=$((i + 1))
done
echo "no network interface with MAC %(mac)s (is its driver loaded?)" >&2
ip -br link >&2
exit 1
"""


class Cluster:
    """N guests joined by wires. Use as a context manager, or call boot() and close().

    ``nodes``: number of guests. ``wires``: list of :class:`Wire` or NIC type strings
    (``"tern"``/``"virtio"``), wire k being ``wires[k]``. ``name``: names the result dir
    ``$TERN_OUT/runs/<name>-<timestamp>-<pid>`` (default: the running script's name).
    ``memory`` (MiB), ``append`` (extra kernel command line), ``qemu_args`` (extra QEMU
    arguments for every guest; $TERN_QEMU_ARGS adds more), ``qemu``/``kernel``/``initrd``
    override the defaults from :mod:`harness.paths`; ``initrd_image``: a named larger
    initramfs (:func:`harness.paths.guest_initrd`, e.g. ``"storage"`` with fio). ``switch``: a factory for switched wires,
    called as ``switch(wire, ports, result_dir)`` with ``ports`` mapping node index to the
    unix socket path it must listen on for that guest (every QEMU connects as a client); it
    returns an object with ``close()``, and the cluster waits for the sockets to exist.
    ``kernel_flavour``: ``"stock"`` (Debian's kernel) or ``"debug"`` (KASAN, lockdep,
    kmemleak, fault injection: scripts/build-debug-kernel.sh); default $TERN_KERNEL, else
    stock. ``memory`` defaults to the flavour's (:data:`MEMORY`), ``boot_timeout`` (seconds
    until every agent answers) to the flavour's (:data:`BOOT_TIMEOUT`).
    """

    def __init__(self, nodes=2, wires=("virtio",), name=None, memory=None, append="",
                 qemu=None, kernel=None, initrd=None, qemu_args=(), boot_timeout=None,
                 switch=None, kernel_flavour=None, initrd_image=None):
        self.name = name or _default_name()
        self.n = nodes
        self.flavour = paths.flavour(kernel_flavour)
        self.memory = memory or MEMORY[self.flavour]
        self.append = append
        self.qemu = qemu
        self.kernel = kernel
        self.initrd = initrd
        self.initrd_image = initrd_image
        self.qemu_args = list(qemu_args) + shlex.split(os.environ.get("TERN_QEMU_ARGS", ""))
        self.boot_timeout = boot_timeout or BOOT_TIMEOUT[self.flavour]
        self.switch_factory = switch
        self.switches = []
        self.wires = []
        for k, w in enumerate(wires):
            w = Wire(w) if isinstance(w, str) else w
            w.index = k
            w.nodes = sorted(w.nodes if w.nodes is not None else range(nodes))
            if not w.nodes or any(i < 0 or i >= nodes for i in w.nodes):
                raise HarnessError("wire %d: bad node list %s" % (k, w.nodes))
            if not isinstance(w.nic, str) and len(w.nic) != len(w.nodes):
                raise HarnessError("wire %d: %d NIC types for %d guests" % (
                    k, len(w.nic), len(w.nodes)))
            if w.switched is None:
                w.switched = len(w.nodes) > 2
            self.wires.append(w)
        self.nodes = []
        self.tmpdir = None
        self.result_dir = None
        self.boot_seconds = None
        self.io_sched = []
        self._closed = False
        self._started = False
        self._close_lock = threading.Lock()

    def __enter__(self):
        return self.boot()

    def __exit__(self, *exc):
        self.close()

    def __getitem__(self, i):
        return self.nodes[i]

    def __len__(self):
        return len(self.nodes)

    def __iter__(self):
        return iter(self.nodes)

    # --- boot ----------------------------------------------------------------------------

    def boot(self):
        """Start every guest and wait until all agents answer; returns self.

        Raises ``BootError`` (after tearing everything down) when QEMU fails or an agent
        does not answer within ``boot_timeout`` seconds.
        """
        if self._started:
            raise HarnessError("cluster already booted")
        self._started = True
        qemu = self.qemu or paths.qemu_binary()
        kernel = self.kernel or paths.guest_kernel(self.flavour)
        initrd = self.initrd or paths.guest_initrd(self.flavour, self.initrd_image)
        t0 = time.monotonic()
        deadline = t0 + self.boot_timeout
        runs = os.environ.get("TERN_RUNS") or os.path.join(paths.OUT, "runs")
        os.makedirs(runs, exist_ok=True)
        self.result_dir = tempfile.mkdtemp(
            prefix="%s-%s-%d-" % (self.name, time.strftime("%Y%m%d-%H%M%S"), os.getpid()),
            dir=runs)
        # Unix socket paths are limited to 107 bytes: keep them short, in /tmp.
        _remove_stale_tmpdirs()
        self.tmpdir = tempfile.mkdtemp(prefix="tern-cluster-")
        with open(os.path.join(self.tmpdir, "owner"), "w") as f:
            f.write("%d\n" % os.getpid())
        with _live_lock:
            _live.add(self)
        _install_signal_handlers()
        try:
            self.nodes = [Node(self, i) for i in range(self.n)]
            self._plan_wires()
            self._start_switches(deadline)
            for node in self.nodes:
                self._start_node(node, qemu, kernel, initrd, deadline)
            for node in self.nodes:
                node.agent = Agent(node.name, node.ctl_path, node.agent_log_path)
                try:
                    node.agent.connect(deadline, lambda n=node: n.proc.poll() is None)
                except HarnessError:
                    self._check_exited(node)
                    raise
            for node in self.nodes:
                while not node.agent.wait_ready(0.2):
                    self._check_exited(node)
                    if time.monotonic() > deadline:
                        raise BootError("%s: agent did not answer within %d s\n%s" % (
                            node.name, self.boot_timeout, self._tails(node)))
                node.boot_seconds = time.monotonic() - t0
            # The I/O threads wake for every frame: see hostsched.py.
            self.io_sched = [hostsched.io_thread(p.pid) for p in
                             [n.proc for n in self.nodes] +
                             [sw.proc for sw in self.switches if getattr(sw, "proc", None)]]
            self._kmemleak_baseline()
            self.boot_seconds = time.monotonic() - t0
            self._write_summary()
        except BaseException:
            self.close()
            raise
        return self

    def _kmemleak_baseline(self):
        """Debug kernel: note each guest's uptime once it is up (``node.kmemleak_since``) and
        mark the log, so that later leak checks count only objects allocated after it (see
        ternlib.kernel_report). Objects leaked during boot stay on kmemleak's list; no scan is
        needed here (a scan of a debug guest under TCG takes 15-35 s of CPU).

        kmemleak's own thread would scan 60 s after boot and every 10 min: those scans find
        nothing the explicit scan at the end of a test (ternlib.check_kernel_clean) does not
        (an unreferenced object stays on the list), but they cost each guest 15-35 s of CPU
        in the middle of the test, so they are turned off (``scan=off``; it waits for a scan already
        under way, which a boot slower than 60 s under load can meet: hence the long bound)."""
        if self.flavour != "debug":
            return
        script = ("[ -w {k} ] && {{ echo scan=off > {k}; echo '{m}' > /dev/kmsg; }}; "
                  "cut -d' ' -f1 /proc/uptime").format(k=KMEMLEAK, m=KMEMLEAK_BASELINE)
        for node, job in [(n, n.spawn(script, timeout=300)) for n in self.nodes]:
            node.kmemleak_since = float(job.wait(check=True).stdout.split()[0])

    def _check_exited(self, node):
        if node.proc.poll() is not None:
            raise BootError("%s: QEMU exited with status %s during boot (%s)\n%s" % (
                node.name, node.proc.returncode, self._exit_reason(node), self._tails(node)))

    def _exit_reason(self, node):
        """One line on why a guest went away during boot, for the first line of the error
        (CI summaries show only that line): the kernel's panic or first sanitizer/oops line,
        else QEMU's own last words, else the last console line."""
        def read(path):
            try:
                with open(path, "rb") as f:
                    return f.read().decode("utf-8", "replace").splitlines()
            except FileNotFoundError:
                return []
        console = read(node.console_path)
        for pattern in (r"Kernel panic - not syncing.*", r"BUG: .*", r"general protection.*",
                        r"Oops: .*"):
            for line in console:
                m = re.search(pattern, line)
                if m:
                    return "console: " + m.group(0).strip()
        # the model's own log lines (tern_model_log, "tern nic0: ...") are not QEMU's words
        qemu = [l for l in read(node.qemu_log_path) if l and not l.startswith("$ ") and
                "tern_model_log" not in l and not l.startswith("tern ")]
        if qemu:
            return "qemu: " + qemu[-1].strip()
        if node.proc.returncode == 0:
            last = console[-1].strip() if console else "nothing"
            return ("no panic on the console, whose last line is %r: a guest reset or "
                    "power-off (-no-reboot)" % last[:160])
        return "no message from the kernel or QEMU"

    def _plan_wires(self):
        for w in self.wires:
            if w.switched:
                if not self.switch_factory:
                    raise HarnessError(
                        "wire %d joins %d guests: it needs a switch process (the fabric "
                        "simulator); pass Cluster(switch=factory)" % (w.index, len(w.nodes)))
                w.sockets = {i: os.path.join(self.tmpdir, "w%d-p%d.sock" % (w.index, i))
                             for i in w.nodes}
            else:
                path = os.path.join(self.tmpdir, "w%d.sock" % w.index)
                w.sockets = {i: path for i in w.nodes}
                w.listener = w.nodes[0]
            if w.pcap:
                w.pcap_path = os.path.join(self.result_dir, "wire%d.pcap" % w.index)

    def _start_switches(self, deadline):
        for w in self.wires:
            if not w.switched:
                continue
            self.switches.append(self.switch_factory(w, dict(w.sockets), self.result_dir))
            for path in w.sockets.values():
                _wait_for_path(path, deadline, "switch socket for wire %d" % w.index)

    def _qemu_argv(self, node, qemu, kernel, initrd):
        i = node.index
        # norandmaps: without ASLR, TCG reuses its translations of shared libraries across
        # processes, which makes each dynamically linked command 3-4x cheaper to start.
        # no5lvl: "-cpu max" offers LA57, and Linux 6.1.y (since the arch_cpu_finalize_init
        # backport) re-runs identify_cpu() with interrupts on: it zeroes the CPU feature
        # words, so an interrupt in that window sees 4-level paging on a 5-level kernel.
        # With KASAN that is "BUG: KASAN: wild-memory-access in rcu_is_watching" at 0.006 s,
        # or a fault that resets the guest (QEMU exits 0 under -no-reboot); seen in about 1
        # debug boot in 30. 4-level paging has no such window.
        # pty.legacy_count=0 (debug): the debug kernel has legacy BSD ptys (tinyconfig's
        # default); making their 512 devices took 16 s of each debug boot (pty_init, seen
        # with initcall_debug), and nothing uses them.
        cmdline = "console=ttyS0 panic=-1 tsc=reliable norandmaps no5lvl tern.node=%d %s %s" % (
            i, "pty.legacy_count=0" if self.flavour == "debug" else "", self.append)
        cmdline = " ".join(cmdline.split())
        # maxcpus=2 (one vCPU present): TCG emits host memory barriers for the guest's
        # barriers and locked instructions only when a guest may have more than one vCPU.
        # With "-smp 1" the guest's smp_mb() is no fence on the host, and virtio's
        # event-index handshake with QEMU's main loop (guest: store avail idx, fence, load
        # avail_event; QEMU: the reverse) can miss a kick: a virtio-net transmitter then
        # froze for good (Documentation/testing.rst, "Interoperability with Soft-RoCE").
        argv = [
            qemu, "-name", node.name,
            "-machine", "q35", "-accel", "tcg", "-cpu", "max", "-smp", "1,maxcpus=2",
            "-m", str(self.memory), "-display", "none", "-nodefaults", "-no-reboot",
            "-kernel", kernel, "-initrd", initrd, "-append", cmdline.strip(),
            "-serial", "file:" + node.console_path,
            "-chardev", "socket,id=ctl,path=%s,server=on,wait=off" % node.ctl_path,
            "-device", "virtio-serial-pci,id=vser0",
            "-device", "virtserialport,bus=vser0.0,chardev=ctl,name=tern.ctl",
            "-qmp", "unix:%s,server=on,wait=off" % node.qmp_path,
            "-pidfile", node.pid_path,
        ]
        if not qemu.startswith("/usr/bin/") and os.path.isdir("/usr/share/qemu"):
            argv += ["-L", "/usr/share/qemu"]  # firmware for a QEMU built without its blobs
        for w in self.wires:
            if i not in w.nodes:
                continue
            k = w.index
            server = "on" if (not w.switched and w.listener == i) else "off"
            argv += ["-netdev", "stream,id=w%d,server=%s,addr.type=unix,addr.path=%s" % (
                k, server, w.sockets[i])]
            dev = {"id": "nic%d" % k, "netdev": "w%d" % k, "mac": mac_address(k, i)}
            if w.nic_of(i) == "tern":
                argv += ["-device", "pcie-root-port,id=rp%d,chassis=%d,slot=%d" % (k, k + 1, k + 1)]
                dev["bus"] = "rp%d" % k
                if w.test_hooks:
                    dev["test-hooks"] = "on"
                driver = "tern"
            else:
                dev["romfile"] = ""
                driver = "virtio-net-pci"
            dev.update(w.props)
            argv += ["-device", ",".join([driver] + ["%s=%s" % kv for kv in dev.items()])]
            if w.pcap_path and i == w.nodes[0]:
                argv += ["-object", "filter-dump,id=dump%d,netdev=w%d,file=%s%s" % (
                    k, k, w.pcap_path, ",maxlen=%d" % w.pcap
                    if not isinstance(w.pcap, bool) and w.pcap > 0 else "")]
        if any(i in w.nodes and w.nic_of(i) == "tern" for w in self.wires):
            # The model's own account of what it refused and why (an invalid request's
            # reason, resets, link changes; rare) goes to node<k>.qemu.log. Warnings
            # (guest errors) reach it through LOG_GUEST_ERROR.
            argv += ["-trace", "tern_model_log", "-d", "guest_errors"]
        return argv + self.qemu_args

    def _start_node(self, node, qemu, kernel, initrd, deadline):
        # A guest that connects to a point-to-point wire needs its listener's socket first.
        for w in self.wires:
            if node.index in w.nodes and not w.switched and w.listener != node.index:
                listener = self.nodes[w.listener]
                try:
                    _wait_for_path(w.sockets[node.index], deadline,
                                   "%s's socket for wire %d" % (listener.name, w.index),
                                   lambda: listener.proc.poll() is None)
                except BootError:
                    self._check_exited(listener)
                    raise
        node.argv = self._qemu_argv(node, qemu, kernel, initrd)
        prefix = []
        if shutil.which("setpriv"):
            # QEMU dies with us even if we are SIGKILLed (the death signal is per thread:
            # boot from a thread that outlives the cluster).
            prefix = ["setpriv", "--pdeathsig", "KILL", "--"]
        with open(node.qemu_log_path, "ab") as log:
            log.write(("$ " + " ".join(shlex.quote(a) for a in node.argv) + "\n").encode())
            log.flush()
            node.proc = subprocess.Popen(prefix + node.argv, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)

    def _tails(self, node, lines=25):
        out = []
        for label, path in (("console", node.console_path), ("qemu", node.qemu_log_path)):
            try:
                with open(path, "rb") as f:
                    text = f.read().decode("utf-8", "replace").splitlines()[-lines:]
            except FileNotFoundError:
                text = []
            out.append("--- %s %s (last %d lines):\n%s" % (node.name, label, lines,
                                                          "\n".join(text)))
        return "\n".join(out)

    # --- using it ------------------------------------------------------------------------

    def run(self, cmd, timeout=60, check=False, nodes=None):
        """Run ``cmd`` on every node (or the given node indices) concurrently; returns the
        list of Results in node order."""
        targets = [self.nodes[i] for i in nodes] if nodes is not None else self.nodes
        jobs = [n.spawn(cmd, timeout) for n in targets]
        return [j.wait(check=check) for j in jobs]

    def configure_ip(self, wire=0, timeout=20):
        """Give every node on ``wire`` its IPv4 address and bring the interface up.

        Returns {node index: interface name}. The interface is found by MAC, so the driver
        must be loaded (virtio is at boot; load tern's module first for a tern wire).
        """
        w = self.wires[wire if isinstance(wire, int) else wire.index]
        results = {}
        errors = []

        def one(node):
            try:
                results[node.index] = node.configure_ip(w.index, timeout)
            except Exception as e:  # reported below
                errors.append(e)
        threads = [threading.Thread(target=one, args=(self.nodes[i],)) for i in w.nodes]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return results

    def kernel_problems(self, ignore=()):
        """{node name: offending console lines} for every node whose kernel complained."""
        found = {}
        for n in self.nodes:
            lines = n.kernel_problems(ignore)
            if lines:
                found[n.name] = lines
        return found

    # --- teardown ------------------------------------------------------------------------

    def close(self):
        """Stop every guest (SIGTERM, then SIGKILL by PID) and the switches, keep the logs
        in ``result_dir``, remove the sockets. Safe to call more than once."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        for node in self.nodes:
            if node.agent:
                node.agent.close()
        procs = [n.proc for n in self.nodes if n.proc]
        for p in procs:
            if p.poll() is None:
                p.terminate()
        deadline = time.monotonic() + 5
        for p in procs:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for sw in self.switches:
            try:
                sw.close()
            except Exception as e:  # teardown goes on
                print("# harness: closing a switch failed: %s" % e)
        if self.result_dir:
            self._write_summary()
            _link_latest(self.result_dir, self.name)
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
        with _live_lock:
            _live.discard(self)

    def _write_summary(self):
        info = {
            "name": self.name,
            "kernel_flavour": self.flavour,
            "boot_seconds": self.boot_seconds,
            "io_sched": self.io_sched,
            "closed": self._closed,
            "nodes": [{"name": n.name, "pid": n.pid, "argv": n.argv,
                       "boot_seconds": n.boot_seconds,
                       "hello": n.agent.hello if n.agent else None,
                       "exit_status": n.proc.returncode if n.proc else None}
                      for n in self.nodes],
            "wires": [{"index": w.index, "nic": w.nic, "nodes": w.nodes,
                       "switched": w.switched, "pcap": w.pcap_path} for w in self.wires],
        }
        with open(os.path.join(self.result_dir, "cluster.json"), "w") as f:
            json.dump(info, f, indent=1)


def _wait_for_path(path, deadline, what, alive=lambda: True):
    while not os.path.exists(path):
        if not alive():
            raise BootError("%s never appeared: its process exited" % what)
        if time.monotonic() > deadline:
            raise BootError("%s never appeared (%s)" % (what, path))
        time.sleep(0.02)


def _remove_stale_tmpdirs():
    """Remove socket dirs left by harness processes that were SIGKILLed (their QEMUs died
    with them)."""
    for owner in glob.glob(os.path.join(tempfile.gettempdir(), "tern-cluster-*", "owner")):
        try:
            with open(owner) as f:
                pid = int(f.read())
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(os.path.dirname(owner), ignore_errors=True)
        except (OSError, ValueError):
            pass


def _link_latest(result_dir, name):
    link = os.path.join(os.path.dirname(result_dir), name + "-latest")
    tmp = "%s.%d" % (link, os.getpid())
    try:
        os.symlink(os.path.basename(result_dir), tmp)
        os.replace(tmp, link)
    except OSError:
        pass


def _default_name():
    import __main__
    path = getattr(__main__, "__file__", None) or "cluster"
    base = os.path.basename(path)
    for ext in (".t", ".py"):
        if base.endswith(ext):
            base = base[:-len(ext)]
    return base or "cluster"


def close_all():
    """Close every cluster still running (registered with atexit)."""
    with _live_lock:
        clusters = list(_live)
    for c in clusters:
        c.close()


atexit.register(close_all)
_handlers_installed = False


def _install_signal_handlers():
    # SIGTERM/SIGHUP (e.g. a CI timeout) become SystemExit so that with-blocks and atexit run.
    global _handlers_installed
    if _handlers_installed or threading.current_thread() is not threading.main_thread():
        return
    _handlers_installed = True
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _raise_exit)


def _raise_exit(signum, frame):
    raise SystemExit(128 + signum)
