#!/usr/bin/python3
"""The README's demo: two emulated servers joined by a wire, tern_core loaded in both, traffic
between them over their tern interfaces, and what an admin would look at afterwards."""

import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "scripts"))

from harness import Cluster, Wire  # noqa: E402


def show(node, cmd, timeout=120):
    """Run ``cmd`` on ``node``, echo it and its output; fail the demo if it fails."""
    print("\n%s# %s" % (node.name, cmd), flush=True)
    r = node.run(cmd, timeout=timeout)
    sys.stdout.write(r.stdout)
    if r.rc != 0:
        sys.stdout.write(r.stderr)
        raise SystemExit("demo: '%s' failed on %s (exit %d)" % (cmd, node.name, r.rc))
    return r


def main():
    with Cluster(nodes=2, wires=[Wire("tern", pcap=True)], name="demo") as c:
        print("booted %d guests in %.1f s; logs in %s" % (len(c), c.boot_seconds,
                                                          c.result_dir))
        for n in c:
            show(n, "modprobe tern_core && dmesg | grep -i tern")
        devs = [n.configure_ip(0) for n in c]
        n0, n1 = c[0], c[1]
        show(n0, "ip -br addr show dev %s; ethtool %s | grep -E 'Speed|Link detected'" % (
            devs[0], devs[0]))
        show(n0, "for i in $(seq 50); do [ $(cat /sys/class/net/%s/carrier) = 1 ] && break; "
             "sleep 0.2; done; ping -c 3 %s" % (devs[0], n1.ip(0)))
        n1.spawn("exec iperf3 -s -1")
        show(n0, "sleep 1; iperf3 -c %s -t 5 -f m | tail -4" % n1.ip(0), timeout=180)
        show(n0, "ip -s link show dev %s" % devs[0])
        show(n0, "ethtool -S %s | grep -E 'hw_(tx|rx)_(frames|bytes)'" % devs[0])
        show(n0, "devlink dev info")
        show(n0, "devlink health show")
        print("\ndemo: done. A pcap of the wire is in %s" % c.result_dir)
        print("demo: RDMA (perftest over tern) arrives with the RDMA driver and provider.")


if __name__ == "__main__":
    main()
