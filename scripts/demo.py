#!/usr/bin/python3
"""The README's demo: two emulated servers joined by a wire, tern_core loaded in both, traffic
between them over their tern interfaces, and what an admin would look at afterwards; then
RDMA over the same wire: tern_ib's device tern0, perftest's ib_write_bw and ib_read_lat."""

import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(TOP, "scripts"), os.path.join(TOP, "tests", "rdma")]

from harness import Cluster, Wire  # noqa: E402
import rdmatest  # noqa: E402


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
        rdma(c, devs)
        print("\ndemo: done. A pcap of the wire is in %s" % c.result_dir)


def perftest(target, prog, opts):
    """Run perftest ``prog`` from node0 (client) to node1 (server) and print the client's
    report; fail the demo if either side fails."""
    print("\nnode0# %s %s %s %s   (node1 runs the server side)" % (
        prog, target.common(target.cluster[0]), opts, target.ip(target.cluster[1])),
        flush=True)
    res, rows = rdmatest.perftest(target, prog, opts, timeout=300)
    if not res.ok:
        raise SystemExit("demo: %s failed:\n%s" % (prog, res.diag()))
    out = res.client.stdout
    sys.stdout.write(out[out.find(" #bytes"):] if " #bytes" in out else out)


def rdma(c, devs):
    """RDMA over tern between the two guests: load tern_ib, show the device, move data."""
    target = rdmatest.Target(c, "tern", 0)
    target.netdev = dict(enumerate(devs))
    for n in c:
        show(n, "modprobe tern_ib && rdma link show")
    for n in c:
        target.wait_ready(n)
    show(c[0], "ibv_devices; ibv_devinfo -d tern0 | grep -E 'hca_id|fw_ver|state|mtu|link_layer'")
    perftest(target, "ib_write_bw", "-n 2000")
    perftest(target, "ib_read_lat", "-n 500")


if __name__ == "__main__":
    main()
