#!/usr/bin/python3
"""Self-test of the harness: boot two guests on a virtio wire, exercise the agent, ping across
the wire, and check that close() leaves no QEMU behind."""

import hashlib
import os
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(TOP, "tests", "lib"), os.path.join(TOP, "scripts")]

from tap import Tap  # noqa: E402
from harness import AgentLost, BootError, Cluster, CommandTimeout, HarnessError, Wire  # noqa: E402
from harness import kernel_problems, paths  # noqa: E402

t = Tap()
sample = """[    1.0] virtio_net virtio0 eth0: renamed
[    2.0] WARNING: CPU: 0 PID: 9 at drivers/foo.c:12 foo+0x1/0x2 [tern_core]
[    2.1] Call Trace:
[    3.0] BUG: KASAN: slab-out-of-bounds in bar+0x5/0x9
[    4.0] INFO: task kworker/0:1:12 blocked for more than 120 seconds.
[    5.0] ACPI: some harmless warning text
"""
t.eq(len(kernel_problems(sample)), 4, "kernel_problems() finds warnings, traces, KASAN, hangs")
t.eq(kernel_problems(sample, ignore=["WARNING:", "Call Trace", "KASAN"]),
     ["[    4.0] INFO: task kworker/0:1:12 blocked for more than 120 seconds."],
     "kernel_problems(ignore=...) accepts what a test provokes")
# A user process's fault is the kernel reporting on the program, not a kernel problem; a
# general protection fault in the kernel is one.
from harness.klog import user_faults  # noqa: E402
faults = """[   95.6] traps: ib_send_bw[352] general protection fault ip:7ffff7e36472 sp:7fffffffe180 \
error:0 in librdmacm.so.1[7ffff7e30000+15000]
[   96.0] rping[40]: segfault at 0 ip 0000000000401000 sp 00007ffd error 4 in rping[401000+1000]
[   97.0] general protection fault, probably for non-canonical address 0xdead: 0000 [#1] SMP
"""
t.eq(kernel_problems(faults), [faults.splitlines()[2]],
     "kernel_problems(): a kernel general protection fault counts, a user process's does not")
t.eq(len(user_faults(faults)), 2, "user_faults() finds the user processes' GP fault and segfault")
# Leak suspects are dated from kmemleak's "age" against the uptime read with the report: those
# allocated before the harness's baseline (boot's) do not count, later ones do.
from ternlib import kmemleak_suspects  # noqa: E402
leaks = """120.50
unreferenced object 0xffff888100a4c000 (size 64):
  comm "swapper/0", pid 1, jiffies 4294892345 (age 110.000s)
  hex dump (first 32 bytes):
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
  backtrace:
    [<000000004d3ab6a0>] kmalloc_trace+0x26/0x60
unreferenced object 0xffff888104e1a200 (size 128):
  comm "modprobe", pid 99, jiffies 4294992345 (age 20.250s)
  backtrace:
    [<00000000a1b2c3d4>] tern_en_open+0x51/0x300 [tern_core]
"""
got = kmemleak_suspects(leaks, since=50.0)
t.ok(len(got) == 1 and "tern_en_open" in got[0] and "swapper" not in got[0],
     "kmemleak_suspects() counts a leak from after the baseline, not one from boot", repr(got))
t.eq(len(kmemleak_suspects(leaks, since=None)), 2, "... and every suspect without a baseline")
t.eq(kmemleak_suspects("", since=50.0), [], "... and none from a kernel without kmemleak")
try:
    t.diag("QEMU: " + paths.qemu_binary())
except HarnessError as e:
    t.abort(e)


def procs_mentioning(text):
    """PIDs of live processes whose command line contains ``text``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if text.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


c = Cluster(nodes=2, wires=[Wire("virtio", pcap=True)], name="harness-boot")
try:
    c.boot()
except Exception as e:
    t.ok(False, "two guests boot", str(e))
    t.exit()
t.ok(True, "two guests boot")
t.diag("boot: %.1f s (node0 %.1f s, node1 %.1f s); logs in %s" % (
    c.boot_seconds, c[0].boot_seconds, c[1].boot_seconds, c.result_dir))
a, b = c[0], c[1]
tmpdir, pids = c.tmpdir, [n.pid for n in c]

try:
    t.eq([n.run("hostname").stdout.strip() for n in c], ["node0", "node1"], "hostnames")

    # --- the agent -----------------------------------------------------------------------
    t.eq(a.run("exit 7").rc, 7, "exit code is propagated")
    r = a.run("echo out; echo err >&2; echo out2")
    t.ok(r.stdout == "out\nout2\n" and r.stderr == "err\n", "stderr is kept apart from stdout",
         repr(r.stdout), repr(r.stderr))
    r = a.run("kill -TERM $$")
    t.ok(r.signal == 15 and r.rc == 143, "death by signal is reported", repr(r))

    script = "set -e\nx='a \"quoted\" $HOME'\ncat <<'EOF'\n$x stays literal\nEOF\n" \
             "for i in 1 2 3; do printf '%s;' $i; done\n" + "# padding\n" * 5000
    t.eq(a.run(script).stdout, "$x stays literal\n1;2;3;", "long multi-line script")
    t.eq(a.run("tr a-z A-Z", input="hello\n").stdout, "HELLO\n", "stdin is fed")

    size = 1 << 20
    r = a.run("head -c %d /dev/urandom > /tmp/big && sha256sum /tmp/big" % size, timeout=60)
    want = r.stdout.split()[0] if r.ok else None
    t0 = time.monotonic()
    r = a.run("cat /tmp/big", timeout=60)
    dt = time.monotonic() - t0
    t.ok(len(r.stdout_bytes) == size and hashlib.sha256(r.stdout_bytes).hexdigest() == want,
         "1 MiB of output round-trips intact (%.2f s)" % dt,
         "got %d bytes" % len(r.stdout_bytes))
    blob = os.urandom(size)
    a.put("/tmp/up", blob)
    got = a.run("sha256sum /tmp/up").stdout.split()[0]
    t.eq(got, hashlib.sha256(blob).hexdigest(), "put() of 1 MiB arrives intact")
    t.ok(a.get("/tmp/up") == blob, "get() returns it")

    t0 = time.monotonic()
    try:
        a.run("echo started; sleep 60; echo never", timeout=2)
        t.ok(False, "a command past its timeout raises CommandTimeout")
    except CommandTimeout as e:
        dt = time.monotonic() - t0
        t.ok(e.result.timed_out and e.result.stdout == "started\n" and dt < 10,
             "a command past its timeout raises CommandTimeout (%.1f s)" % dt, repr(e.result))
    t.eq(a.run("echo alive", timeout=10).stdout, "alive\n", "the agent still answers after it")
    t.eq(a.run("pgrep -f 'sleep 60' || echo none").stdout.strip(), "none",
         "the timed-out command's processes are gone")

    job = b.spawn("echo server up; sleep 100; echo not reached")
    quick = [b.run("echo %d" % i).stdout.strip() for i in range(3)]
    t.ok(not job.done() and quick == ["0", "1", "2"], "commands run while a background one does")
    t.eq(job.stdout, "server up\n", "background output streams before it exits")
    job.kill()
    r = job.wait(timeout=20)
    t.ok(r.signal == 15, "a background command can be killed", repr(r))
    j1, j2 = b.spawn("sleep 2; echo one", timeout=30), b.spawn("sleep 2; echo two", timeout=30)
    t0 = time.monotonic()
    outs = [j1.wait().stdout, j2.wait().stdout]
    dt = time.monotonic() - t0
    t.ok(outs == ["one\n", "two\n"] and dt < 3.9, "commands run concurrently (%.1f s)" % dt)

    lat = sorted(a.ping() for _ in range(20))
    t0 = time.monotonic()
    for _ in range(10):
        a.run("true")
    run_lat = (time.monotonic() - t0) / 10
    t.diag("agent latency: PING median %.1f ms, run('true') mean %.1f ms" % (
        lat[10] * 1e3, run_lat * 1e3))

    # --- the wire ------------------------------------------------------------------------
    ifs = c.configure_ip(0)
    t.ok(sorted(ifs) == [0, 1], "interfaces found by MAC and configured", repr(ifs))
    r = a.run("ping -c 3 -W 5 %s" % b.ip(), timeout=30)
    t.ok(r.rc == 0, "node0 pings node1 over IPv4", r.stdout, r.stderr)
    r = b.run("ping -c 3 -W 5 %s" % a.ip(), timeout=30)
    t.ok(r.rc == 0, "node1 pings node0 over IPv4", r.stdout, r.stderr)
    r = b.run("ping -c 2 -W 5 %s%%%s" % (a.ip6_link_local(), b.iface()), timeout=30)
    t.ok(r.rc == 0, "node1 pings node0's IPv6 link-local address", r.stdout, r.stderr)
    t.ok(os.path.getsize(c.wires[0].pcap_path) > 24 * 2, "the wire's pcap has frames")

    # --- the I/O threads' scheduling (scripts/harness/hostsched.py) -----------------------
    pols = {}
    for n in c:
        for tid in os.listdir("/proc/%d/task" % n.pid):
            try:
                pols[(n.pid, int(tid))] = (os.sched_getscheduler(int(tid)) &
                                           ~os.SCHED_RESET_ON_FORK)
            except OSError:
                pass
    main_fifo = all(pols.get((n.pid, n.pid)) == os.SCHED_FIFO for n in c)
    others_normal = all(p == os.SCHED_OTHER for (pid, tid), p in pols.items() if tid != pid)
    if c.io_sched == ["fifo"] * len(c.nodes):
        t.ok(main_fifo and others_normal, "each QEMU's main loop runs SCHED_FIFO, its vCPU "
             "and other threads SCHED_OTHER", repr(pols))
    else:
        t.skip("each QEMU's main loop runs SCHED_FIFO",
               "no SCHED_FIFO for the main loops here (io_sched %r)" % c.io_sched)

    # --- kernel logs ---------------------------------------------------------------------
    t.ok("Linux version" in a.dmesg(), "dmesg() returns the kernel log")
    problems = c.kernel_problems()
    t.ok(not problems, "no kernel warnings on the consoles", repr(problems))

    b.run("echo 1 > /proc/sys/kernel/sysrq; echo l > /proc/sysrq-trigger")
    found = b.kernel_problems(source="dmesg")
    t.ok(any("Call Trace:" in line for line in found),
         "a real kernel backtrace is caught (sysrq-l)", repr(found[:5]))

    # --- a guest that dies ---------------------------------------------------------------
    os.kill(b.pid, 9)
    t0 = time.monotonic()
    try:
        b.run("true", timeout=10)
        t.ok(False, "a dead guest is reported as lost")
    except AgentLost as e:
        t.ok(time.monotonic() - t0 < 5, "a dead guest is reported as lost", str(e))
    except Exception as e:
        t.ok(False, "a dead guest is reported as lost", repr(e))
finally:
    c.close()

left = [p for p in pids if os.path.exists("/proc/%d" % p)] + procs_mentioning(tmpdir)
t.ok(not left, "close() leaves no QEMU process behind", repr(left))
t.ok(not os.path.exists(tmpdir), "close() removes the socket dir")
t.ok(all(os.path.getsize(n.console_path) > 0 for n in c), "console logs kept in the result dir")

# --- a guest whose kernel panics during boot --------------------------------------------
# No /init to run: the kernel panics, panic=-1 resets the guest and -no-reboot ends QEMU with
# status 0. The error's first line (all a CI summary shows) must say why.
d = Cluster(nodes=1, wires=[], name="harness-panic", append="rdinit=/no-such-init")
try:
    d.boot()
    t.ok(False, "a kernel panic during boot is a BootError")
    d.close()
except BootError as e:
    first = str(e).splitlines()[0]
    t.ok("status 0 during boot" in first and "Kernel panic - not syncing" in first,
         "a kernel panic during boot is a BootError whose first line quotes the panic", first)
t.exit()
