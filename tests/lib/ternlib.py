"""Helpers shared by tern's guest tests: loading the driver, reading counters, model facts."""

import json
import os
import re
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def model_fw_version():
    """The firmware version the device model reports, as "major.minor.patch", read from the
    model's source (so the test does not restate it)."""
    path = os.path.join(TOP, "model", "lib", "tern_model_int.h")
    with open(path) as f:
        text = f.read()
    parts = []
    for name in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(r"#define\s+TERNM_FW_%s\s+(\d+)" % name, text)
        if not m:
            raise RuntimeError("TERNM_FW_%s not found in %s" % (name, path))
        parts.append(m.group(1))
    return ".".join(parts)


def link_stats(node, dev):
    """``ip -s link`` counters of ``dev`` as a dict: {"rx": {...}, "tx": {...}}."""
    r = node.run("ip -j -s link show dev %s" % dev, check=True)
    return json.loads(r.stdout)[0]["stats64"]


def ethtool_stats(node, dev):
    """``ethtool -S dev`` as a dict of name -> int."""
    r = node.run("ethtool -S %s" % dev, check=True)
    stats = {}
    for line in r.stdout.splitlines()[1:]:
        name, _, value = line.strip().partition(":")
        if value.strip().lstrip("-").isdigit():
            stats[name.strip()] = int(value)
    return stats


def wait_for(fn, timeout=10.0, interval=0.2):
    """Call ``fn`` until it returns a true value or ``timeout`` passes; returns the last
    value."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


# iproute2 6.1 (Debian 12's) asks for an ACK with every dcb request (NLM_F_ACK) but stops
# reading at the GET's answer, so the GET's ACK is still queued when "dcb pfc set", "dcb ets
# set" or "dcb app replace" (read, then write) send their SET, and dcb takes that ACK for the
# SET's answer. Both requests carry time(NULL) as their sequence number: within one second the
# stale ACK matches and dcb exits 0 whatever the kernel answered the SET; across a second
# boundary it does not, and dcb fails with exactly this message after the kernel has already
# processed the SET. Measured in congestion.t: about 1 run in 20 hit it (a GET takes tens of
# milliseconds in an emulated guest). "dcb app add/del" send no GET and are not affected.
DCB_STALE_ACK = "Attribute write: Protocol error"


def dcb_write(node, cmd, timeout=30):
    """Run a ``dcb`` command that reads then writes (``pfc set``, ``ets set``, ``app
    replace``). The result's ``sent`` is true when dcb exited 0 or failed only with iproute2
    6.1's stale-ACK race (see :data:`DCB_STALE_ACK`; ``stale_ack`` tells which): the SET
    reached the kernel, and what it did there must be read back with ``dcb ... show`` (and
    the firmware's view), since dcb's own status says nothing about it. Any other failure
    (a refusal dcb reports, a parse error) is not ``sent``."""
    r = node.run(cmd, timeout=timeout)
    r.stale_ack = r.rc != 0 and r.stderr.strip() == DCB_STALE_ACK
    r.sent = r.rc == 0 or r.stale_ack
    return r


def carrier(node, dev):
    """1 when ``dev`` has carrier, 0 when not, None when it cannot be read (interface down)."""
    r = node.run("cat /sys/class/net/%s/carrier 2>/dev/null" % dev)
    return int(r.stdout.strip()) if r.rc == 0 and r.stdout.strip() else None


# Debug kernel: wait until what the test allocated last is older than kmemleak's minimum age
# (5 s), scan, then print the guest's uptime and the suspects. A scan of a debug guest takes
# 15-35 s under TCG, so a second one runs only to confirm suspects (_KMEMLEAK_RESCAN: a scan
# can miss a pointer that was being moved; the report then lists only what is still
# unreferenced).
_KMEMLEAK_SCAN = """k=/sys/kernel/debug/kmemleak
[ -w $k ] || exit 0
sleep 5 && echo scan > $k && cut -d' ' -f1 /proc/uptime && cat $k
"""
_KMEMLEAK_RESCAN = """k=/sys/kernel/debug/kmemleak
sleep 1 && echo scan > $k && cut -d' ' -f1 /proc/uptime && cat $k
"""
_KMEMLEAK_AGE = re.compile(r"jiffies \d+ \(age (\d+)\.(\d+)s\)")


def kmemleak_suspects(out, since):
    """The suspects in ``out`` (the uptime, then /sys/kernel/debug/kmemleak's report) that were
    allocated at or after uptime ``since`` (None: all of them), as a list of report blocks.
    kmemleak gives each object's age when the report is read; the uptime read just before
    dates it."""
    lines = out.splitlines()
    if not lines:
        return []
    now = float(lines[0])
    blocks = []
    for ln in lines[1:]:
        if ln.startswith("unreferenced object") or not blocks:
            blocks.append([ln])
        else:
            blocks[-1].append(ln)
    keep = []
    for b in blocks:
        m = _KMEMLEAK_AGE.search("\n".join(b[:3]))
        born = now - (int(m.group(1)) + int(m.group(2)) / 1000.0) if m else None
        if since is None or born is None or born >= since:
            keep.append("\n".join(b))
    return keep


# The kernel prints this when it starts the initramfs's /init. Before it no module can be
# loaded (ours are loaded from userspace): what the kernel reports before it is about the core
# kernel's early boot, not about tern.
_INIT_STARTED = "Run /init as init process"


def kernel_report(node, ignore=(), early=None, faults=None):
    """Everything wrong with ``node``'s kernel, as a list of report excerpts (empty: clean).

    Reads dmesg (warnings, BUG/Oops, KASAN, UBSAN, lockdep, sleeping in atomic context, hung
    tasks...) and, on a kernel with kmemleak (the debug flavour), triggers a leak scan and adds
    the suspects. Boot-time kmemleak suspects (allocated before the harness's baseline, see
    Cluster._kmemleak_baseline) do not count.
    Reports from before the kernel started /init (core-kernel early boot, before any module
    could load; seen: a KASAN report from an interrupt during identify_cpu under a loaded
    host) do not count either: they are appended to the list ``early`` when one is given.
    The kernel's reports of user processes' faults (a segfault in a program) are not kernel
    problems: they are appended to the list ``faults`` when one is given.
    """
    from harness import problem_reports
    from harness.klog import user_faults
    leaks = node.run(_KMEMLEAK_SCAN, timeout=300).stdout.strip()
    since = getattr(node, "kmemleak_since", None)
    if kmemleak_suspects(leaks, since):
        leaks = node.run(_KMEMLEAK_RESCAN, timeout=300).stdout.strip()
    text = node.dmesg()
    if faults is not None:
        faults.extend(user_faults(text))
    boot, mark, rest = text.partition(_INIT_STARTED)
    if mark:
        if early is not None:
            early.extend(problem_reports(boot, ignore))
        text = mark + rest
    # kmemleak's "N new suspected memory leaks" counts boot's too: the report read above is
    # what counts, dated against the harness's baseline.
    text = "\n".join(ln for ln in text.splitlines() if "suspected memory leak" not in ln)
    reports = problem_reports(text, ignore)
    suspects = kmemleak_suspects(leaks, since)
    if suspects:
        lines = "\n".join(suspects).splitlines()
        reports.append("kmemleak (%d suspects allocated after boot, %d lines):\n%s" % (
            len(suspects), len(lines), "\n".join(lines[:60])))
    return reports


def check_kernel_clean(t, cluster, ignore=()):
    """One TAP line per node: the kernel reported no problem during the test (see
    :func:`kernel_report`; on the debug kernel this includes a kmemleak scan). Call it at the
    end of a guest test, while the cluster is up. ``ignore``: regexes of lines to accept."""
    import threading
    reports, early, faults = {}, {}, {}

    def one(n):
        early[n.name] = []
        faults[n.name] = []
        try:
            reports[n.name] = kernel_report(n, ignore, early[n.name], faults[n.name])
        except Exception as e:  # reported as a failure below
            reports[n.name] = ["could not read the kernel log: %s" % e]
    threads = [threading.Thread(target=one, args=(n,)) for n in cluster]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    ok = True
    for n in cluster:
        for r in early.get(n.name, []):
            t.diag("%s: core-kernel report during early boot, before /init (not counted):\n%s"
                   % (n.name, r))
        for r in faults.get(n.name, []):
            t.diag("%s: a user process faulted (the test that ran it judges its exit status; "
                   "not a kernel problem): %s" % (n.name, r))
        ok &= t.ok(not reports[n.name], "%s: no kernel problems (%s kernel: warnings, oopses,"
                   " sanitizer/lockdep reports%s)" % (
                       n.name, cluster.flavour,
                       ", kmemleak" if cluster.flavour == "debug" else ""),
                   *reports[n.name])
    return ok
