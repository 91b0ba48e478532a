"""How busy the host is while a benchmark runs: the benchmarks' guests share a small host with
whatever else runs on it, so each prints the CPU other work took beside its table."""

import os
import resource
import time


def host_busy():
    """Busy CPU seconds of the whole host so far (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def own_busy():
    """CPU seconds this process and its waited-for children have used so far."""
    t = 0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        t += r.ru_utime + r.ru_stime
    return t


def qemu_busy(cluster):
    """CPU seconds the cluster's QEMU processes (all their threads) have used so far; with no
    cluster (a host-only bench), this process's and its children's."""
    if cluster is None:
        return own_busy()
    t = 0
    for n in cluster:
        with open("/proc/%d/stat" % n.proc.pid) as f:
            v = f.read().rsplit(")", 1)[1].split()
        t += int(v[11]) + int(v[12])       # utime, stime
    return t / os.sysconf("SC_CLK_TCK")


class Others:
    """The CPU that work other than ``cluster`` (None: this process and its children) used
    between start() and stop(), in cores, and the load averages around it."""

    NOISY = 0.5     # cores: above this the run is flagged

    def __init__(self, cluster=None):
        self.cluster = cluster
        self.cores = None
        self.load = None

    def start(self):
        self.t0, self.h0, self.q0 = time.monotonic(), host_busy(), qemu_busy(self.cluster)
        self.load0 = os.getloadavg()

    def stop(self):
        dt = time.monotonic() - self.t0
        self.cores = (host_busy() - self.h0 - (qemu_busy(self.cluster) - self.q0)) / dt
        self.load = (self.load0, os.getloadavg())

    def line(self):
        """One line for the benchmark's output."""
        (a, _, _), (b, _, _) = self.load
        return ("host: %d cores, load average %.2f before and %.2f after; CPU used by other "
                "work during the runs: %.2f cores%s" % (
                    os.cpu_count(), a, b, self.cores,
                    " (NOISY: more than half a core)" if self.cores > self.NOISY else ""))
