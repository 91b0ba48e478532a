"""The fabric for switched wires: tern-switch (model/fabric/tern-switch.c, the switch model of
model/fabric/switch.h in real time) as a ``Cluster(switch=...)`` factory.

    from harness import Cluster, Wire
    from harness.fabric import fabric
    sw = fabric(link_mbps=400, pfc_mask=0x08, ecn_mask=0x08, strict_mask=0x40,
                dscp_prio={26: 3, 48: 6})
    with Cluster(nodes=3, wires=[Wire("tern", switched=True, props={"speed": 400})],
                 switch=sw) as c:
        ...
        st = c.switches[0].stats()          # SIGUSR1, then the JSON it wrote
        st["switch"]["ports"][c.switches[0].port_of[2]]

Switch port k is the k-th guest of the wire in increasing node order (``port_of`` maps node
index to port). The switch's log (``switch-w<k>.log``) and its last statistics
(``switch-w<k>.stats.json``) stay in the run's result dir. ``stats()`` returns
``{"switch": <tsw_dump_json>, "process": {...}}``; the process part counts per socket the
frames read and written and the frames tern-switch itself dropped (guest not connected, or
its socket queue full), and has the measurement window (``stats(new_window=True)``).
"""

import json
import os
import signal
import subprocess
import time

from . import paths
from .errors import HarnessError

# tern-switch option -> tsw_config field, for the keyword arguments of :func:`fabric`.
OPTIONS = {
    "link_mbps": "--link-mbps", "delay_ns": "--delay-ns", "buffer_bytes": "--buffer",
    "pfc_mask": "--pfc-mask", "ecn_mask": "--ecn-mask", "strict_mask": "--strict-mask",
    "xoff_bytes": "--xoff", "xon_bytes": "--xon", "kmin_bytes": "--kmin",
    "kmax_bytes": "--kmax", "pmax_ppm": "--pmax-ppm", "seed": "--seed",
    "sock_queue": "--sock-queue", "sample_us": "--sample-us", "int_mask": "--int-mask",
    "int_mtu": "--int-mtu",
}


def switch_binary():
    """tern-switch to run: $TERN_SWITCH, else the one scripts/build.sh puts in $TERN_OUT."""
    path = os.environ.get("TERN_SWITCH") or os.path.join(paths.OUT, "tern-switch")
    if not os.access(path, os.X_OK):
        raise HarnessError("tern-switch not found at %s: run scripts/build.sh (or set "
                           "TERN_SWITCH)" % path)
    return path


def switch_argv(config):
    """tern-switch's options for ``config`` (a dict of :data:`OPTIONS` keys, plus
    ``dscp_prio``: {dscp: priority}); None values are left at the switch's defaults."""
    argv = []
    for key, value in sorted(config.items()):
        if value is None:
            continue
        if key == "dscp_prio":
            if value:
                argv += ["--dscp-prio", ",".join("%d:%d" % kv for kv in sorted(value.items()))]
        elif key in OPTIONS:
            argv += [OPTIONS[key], str(int(value))]
        else:
            raise HarnessError("unknown switch option %r (one of %s, dscp_prio)" % (
                key, ", ".join(sorted(OPTIONS))))
    return argv


class Switch:
    """One running tern-switch for one wire (made by the factory :func:`fabric` returns)."""

    def __init__(self, wire, ports, result_dir, config, binary=None, start_timeout=30):
        self.wire = wire
        self.nodes = sorted(ports)
        self.port_of = {n: k for k, n in enumerate(self.nodes)}
        self.config = dict(config)
        k = wire.index if wire is not None and wire.index is not None else 0
        self.log_path = os.path.join(result_dir, "switch-w%d.log" % k)
        self.stats_path = os.path.join(result_dir, "switch-w%d.stats.json" % k)
        self.final_stats = None
        argv = [binary or switch_binary(), "--verbose", "--stats", self.stats_path]
        argv += switch_argv(self.config)
        for n in self.nodes:
            argv += ["--port", ports[n]]
        self.argv = argv
        prefix = ["setpriv", "--pdeathsig", "KILL", "--"] if os.path.exists(
            "/usr/bin/setpriv") else []
        with open(self.log_path, "ab") as log:
            log.write(("$ " + " ".join(argv) + "\n").encode())
            log.flush()
            self.proc = subprocess.Popen(prefix + argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + start_timeout
        for n in self.nodes:
            while not os.path.exists(ports[n]):
                if self.proc.poll() is not None:
                    raise HarnessError("tern-switch exited with status %s at start:\n%s" % (
                        self.proc.returncode, self.log()))
                if time.monotonic() > deadline:
                    self.close()
                    raise HarnessError("tern-switch did not create %s within %d s" % (
                        ports[n], start_timeout))
                time.sleep(0.02)

    def __repr__(self):
        return "<Switch pid=%s ports=%s>" % (self.proc.pid, self.port_of)

    @property
    def alive(self):
        return self.proc.poll() is None

    def log(self):
        """The switch's log so far."""
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def _read_stats(self):
        try:
            with open(self.stats_path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def _stamp(self):
        try:
            st = os.stat(self.stats_path)
            return (st.st_ino, st.st_mtime_ns)
        except FileNotFoundError:
            return None

    def stats(self, new_window=False, timeout=10):
        """Ask the running switch for its counters (SIGUSR1) and return them; after close()
        the last ones it wrote. ``new_window``: start a new measurement window right after
        (SIGUSR2): ``["process"]["window"]`` (queue depth percentiles and high-water marks
        per egress FIFO) covers the time since the previous new window (or the start)."""
        if not self.alive:
            return self.final_stats or self._read_stats()
        before = self._stamp()
        self.proc.send_signal(signal.SIGUSR2 if new_window else signal.SIGUSR1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._stamp() != before:
                data = self._read_stats()
                if data is not None:
                    return data
            if not self.alive:
                break
            time.sleep(0.02)
        raise HarnessError("tern-switch wrote no statistics within %d s (alive: %s)\n%s" % (
            timeout, self.alive, self.log()[-3000:]))

    def port_stats(self, node, data=None):
        """The switch's counters of ``node``'s port (from ``data`` or a fresh stats())."""
        data = data or self.stats()
        return data["switch"]["ports"][self.port_of[node]]

    def close(self, timeout=10):
        """SIGTERM (the switch writes its final statistics), then SIGKILL if needed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.final_stats is None:
            self.final_stats = self._read_stats()
        return self.final_stats


def fabric(binary=None, **config):
    """A ``Cluster(switch=...)`` factory: every switched wire gets its own tern-switch with
    ``config`` (keys of :data:`OPTIONS` and ``dscp_prio``; see ``tern-switch --help``). The
    switches are in ``cluster.switches`` in wire order."""
    switch_argv(config)  # reject unknown options before anything boots

    def factory(wire, ports, result_dir):
        return Switch(wire, ports, result_dir, config, binary)
    return factory
