"""tern's test harness: boot emulated servers (QEMU guests) and run commands on them.

    from harness import Cluster, Wire
    with Cluster(nodes=2, wires=["virtio", Wire("tern", pcap=True)]) as c:
        c.configure_ip(0)
        r = c[0].run("ping -c1 %s" % c[1].ip(0), timeout=30)
        assert r.rc == 0, r.stderr

See cluster.py (Cluster, Node, Wire), agent.py (Result, Job and the wire protocol) and
klog.py (kernel_problems). Standard library only; runs with Debian's /usr/bin/python3.
"""

from .agent import Job, Result
from .cluster import Cluster, Node, Wire, close_all, ipv6_link_local, mac_address
from .errors import AgentLost, BootError, CommandFailed, CommandTimeout, HarnessError
from .klog import kernel_problems, problem_reports

__all__ = [
    "Cluster", "Node", "Wire", "Job", "Result", "close_all", "mac_address", "ipv6_link_local",
    "kernel_problems", "problem_reports", "HarnessError", "BootError", "AgentLost", "CommandTimeout",
    "CommandFailed",
]
