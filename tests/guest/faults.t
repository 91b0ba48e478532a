#!/usr/bin/python3
"""Fault injection on the debug kernel: make the N-th fault-injectable allocation (slab or page,
any GFP) of one operation fail, for (a) probe (binding the PCI function), (b) ip link set up
(ndo_open) and (c) an MTU change while up. Each operation first runs once without injection
to count its M fault-injectable calls; then N runs over a stratified sample of 1..M: every N
when M <= TERN_FAULTS_POINTS (default 40), else one N drawn from each of that many equal slices
of 1..M, so every part of the operation (its first and last allocations included) has a
failure injected in every run, and successive runs (a new seed each, printed; TERN_FAULTS_SEED
repeats one) reach different points. TERN_FAULTS_POINTS=0 tries every N. After each attempt:
the operation failed cleanly or tolerated the failure, and the kernel reported nothing (no WARN,
KASAN, lockdep...); once the sample is done the operation completes again without injection.
At the end: no leaks (kmemleak), the module unloads and reloads, and the device passes traffic.

Debug kernel only (TERN_KERNEL=debug). TERN_FAULTS_BUDGET (seconds per operation, default
300) stops a loop that runs long (reported as a skip, not a pass).

Probe is injected through the driver's sysfs bind file rather than modprobe: finit_module
first copies the module image page by page, which would use up hundreds of injection points
before the driver's own code runs."""

import os
import random
import re
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(TOP, "tests", "lib"), os.path.join(TOP, "scripts")]

from tap import Tap  # noqa: E402
from harness import Cluster, HarnessError, Wire, paths, problem_reports  # noqa: E402
from ternlib import carrier, check_kernel_clean, wait_for  # noqa: E402

POINTS = int(os.environ.get("TERN_FAULTS_POINTS", "40"))
BUDGET = float(os.environ.get("TERN_FAULTS_BUDGET", "300"))
SEED = int(os.environ.get("TERN_FAULTS_SEED") or random.SystemRandom().randrange(1 << 31))
# N for the counting run: beyond any operation's last fault-injectable call.
COUNT_N = 1 << 30
DRV = "/sys/bus/pci/drivers/tern_core"
# Make every allocation count (by default GFP_KERNEL and order-0 pages are exempt) and keep
# the injections quiet (verbose=2 dumps a stack per injection).
SETUP = """set -e
for a in failslab fail_page_alloc; do
	echo N > /sys/kernel/debug/$a/ignore-gfp-wait
	echo 0 > /sys/kernel/debug/$a/verbose
done
echo N > /sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem
echo 0 > /sys/kernel/debug/fail_page_alloc/min-order
"""
# A failed allocation may legitimately print a "page allocation failure" with a stack dump.
# Core kernel, not the driver: register_irq_proc() ignores a failed proc_create() of
# /proc/irq/N/{affinity_hint,smp_affinity_list,...}, and freeing the IRQ later WARNs in
# remove_proc_entry() about the missing entry.
IGNORE = (r"Call Trace:", r"page allocation failure", r"vmalloc error",
          r"WARNING: CPU: \d+ PID: \d+ at fs/proc/generic.c:\d+ remove_proc_entry")

t = Tap()
if paths.flavour() != "debug":
    t.skip_all("fault injection needs the debug kernel (TERN_KERNEL=debug)")

c = Cluster(nodes=2, wires=[Wire("tern")], name="faults", kernel_flavour="debug")
try:
    c.boot()
except HarnessError as e:
    t.abort("cluster did not boot: %s" % e)
n0, n1 = c[0], c[1]


def inject(n, op, after="", reset=None):
    """One attempt in one command (each command costs seconds on the debug guest):
    tern-failnth N OP..., then ``after`` (a state probe), then, when the operation succeeded,
    ``reset`` (shell that undoes it), then the kernel log since the previous attempt (dmesg
    -c), so whatever the reset logs counts against this N. Returns (injected, rc, state,
    problems, calls): calls is the number of fault-injectable calls the operation made when
    nothing was injected, else None."""
    undo = ""
    if reset:
        undo = ('case "$res" in *" rc=0"*) { %s; } || echo "--reset-failed $?";; esac; ' %
                reset)
    r = n0.run("res=$(tern-failnth %d %s); echo \"$res\"; echo '--state'; %s; %s"
               "echo '--dmesg'; dmesg -c" % (n, op, after, undo), timeout=120)
    out, _, log = r.stdout.partition("--dmesg\n")
    res, _, state = out.partition("--state\n")
    if "--reset-failed" in state:
        raise HarnessError("tern-failnth %d %s: undoing it (%s) failed: %s %s" % (
            n, op, reset, r.stdout, r.stderr))
    m = re.search(r"injected=(\d) rc=(-?\d+)(?: calls=(\d+))?", res)
    if not m:
        raise HarnessError("tern-failnth %d %s: %s %s" % (n, op, r.stdout, r.stderr))
    calls = int(m.group(3)) if m.group(3) else None
    return (m.group(1) == "1", int(m.group(2)), state.strip(), problem_reports(log, IGNORE),
            calls)


def sample(m, rng):
    """The N to inject for an operation with ``m`` fault-injectable calls: all of 1..m when
    there are at most POINTS (or POINTS is 0), else one from each of POINTS equal slices."""
    if POINTS <= 0 or m <= POINTS:
        return list(range(1, m + 1))
    cuts = [1 + (m * i) // POINTS for i in range(POINTS + 1)]
    return [rng.randrange(lo, hi) for lo, hi in zip(cuts, cuts[1:])]


def loop(name, op, after, check, reset):
    """Count the fault-injectable calls of ``op`` (one run without injection), then run it
    with each sampled N injected, then once more without. ``check(injected, rc, state)``
    returns an error string or None; ``reset`` (shell, or None) undoes a successful
    operation. Returns the number of injection points exercised."""
    t0 = time.monotonic()
    rng = random.Random("%d %s" % (SEED, name))
    bad = []

    def attempt(n):
        injected, rc, state, problems, calls = inject(n, op, after, reset)
        err = check(injected, rc, state)
        if err:
            bad.append("N=%d (injected=%d rc=%d): %s; state: %s" % (n, injected, rc, err, state))
        if problems:
            bad.append("N=%d (injected=%d rc=%d): kernel problems:\n%s" % (
                n, injected, rc, "\n".join(problems)))
        return injected, rc, calls

    injected, rc, m = attempt(COUNT_N)
    t.ok(bool(not injected and rc == 0 and m), "%s: completes without injection (%s "
         "fault-injectable calls)" % (name, m), "rc=%d injected=%d" % (rc, injected))
    if injected or rc or not m:
        return 0
    points = sample(m, rng)
    done = missed = 0
    for n in points:
        injected, rc, _ = attempt(n)
        done += 1
        # The count can differ a little between runs (caches warmed by the first run).
        missed += not injected
        if bad or time.monotonic() - t0 > BUDGET:
            break
    complete = done == len(points)
    secs = time.monotonic() - t0
    t.diag("%s: %d of %d injection points exercised in %.0f s (%s, seed %d)%s%s" % (
        name, done - missed, m, secs, "all" if len(points) == m else "%d slices" % POINTS,
        SEED, ", %d beyond the calls made" % missed if missed else "",
        "" if complete or bad else " (stopped by the budget of %.0f s)" % BUDGET))
    t.ok(not bad, "%s: every injected allocation failure is handled cleanly" % name, *bad[:3])
    if not complete and not bad:
        t.skip("%s: completes once no injection is left" % name, "budget exhausted")
    elif not bad:
        injected, rc, _ = attempt(COUNT_N)
        t.ok(not injected and rc == 0 and not bad,
             "%s: completes once no injection is left" % name, "rc=%d" % rc, *bad[:3])
    return done - missed


try:
    for n in c:
        n.run(SETUP, timeout=30, check=True)
        r = n.run("modprobe tern_core", timeout=120)
        t.ok(r.rc == 0, "%s: modprobe tern_core" % n.name, r.stderr)
    r = n0.run("ls %s | grep '^0000:'" % DRV, check=True)
    bdf = r.stdout.split()[0]
    dev = n0.iface(0)
    n1.configure_ip(0)
    n0.run("dmesg -c >/dev/null")

    # --- (a) probe ---------------------------------------------------------------------
    n0.run("echo %s > %s/unbind" % (bdf, DRV), timeout=120, check=True)

    def probe_ok(injected, rc, state):
        if rc == 0 and state != "bound" and not injected:
            return "bind succeeded without injection but the device is not bound"
        if rc != 0 and state == "bound":
            return "bind failed but the device is bound"
        return None
    total = loop("probe", "write %s/bind %s" % (DRV, bdf),
                 "[ -e %s/%s ] && echo bound || echo unbound" % (DRV, bdf), probe_ok,
                 "echo %s > %s/unbind" % (bdf, DRV))
    n0.run("echo %s > %s/bind" % (bdf, DRV), timeout=120, check=True)
    n0.forget_ifaces()
    dev = n0.configure_ip(0)
    n0.run("ip link set %s down" % dev, timeout=60, check=True)

    # --- (b) ip link set up --------------------------------------------------------------
    link = "ip -o link show dev %s | grep -o 'state [A-Z]*\\|mtu [0-9]*' | tr '\\n' ' '" % dev

    def up_ok(injected, rc, state):
        # the administrative flags, e.g. <BROADCAST,MULTICAST,UP,LOWER_UP>
        if rc != 0 and re.search(r"[<,]UP[,>]", state):
            return "ip link set up failed but the interface is up"
        return None
    total += loop("ndo_open", "up %s" % dev,
                  "%s; ip -o link show dev %s | grep -o '<[^>]*>'" % (link, dev), up_ok,
                  "ip link set %s down" % dev)

    # --- (c) MTU change while up -----------------------------------------------------------
    n0.run("ip link set %s up" % dev, timeout=60, check=True)

    def mtu_ok(injected, rc, state):
        if rc != 0 and "mtu 1500" not in state:
            return "MTU change failed but the MTU changed"
        if rc == 0 and "mtu 9000" not in state:
            return "MTU change succeeded but the MTU is not 9000"
        return None
    total += loop("change_mtu", "mtu %s 9000" % dev, link, mtu_ok,
                  "ip link set %s mtu 1500" % dev)
    t.diag("%d injection points exercised in total" % total)

    # --- afterwards: traffic, no leaks, unload and reload ------------------------------------
    wait_for(lambda: carrier(n0, dev) == 1, timeout=15)
    r = n0.run("ping -c 3 -W 5 %s" % n1.ip(0), timeout=60)
    t.ok(r.rc == 0, "the device passes traffic after the injections", r.stdout, r.stderr)
    check_kernel_clean(t, c, ignore=IGNORE)
    r = n0.run("rmmod tern_core && modprobe tern_core", timeout=120)
    t.ok(r.rc == 0, "tern_core unloads and reloads", r.stderr)
    n0.forget_ifaces()
    n0.configure_ip(0)
    wait_for(lambda: carrier(n0, n0.iface(0)) == 1, timeout=15)
    r = n0.run("ping -c 3 -W 5 %s" % n1.ip(0), timeout=60)
    t.ok(r.rc == 0, "ping works after the reload", r.stdout, r.stderr)
    check_kernel_clean(t, c, ignore=IGNORE)
except HarnessError as e:
    t.ok(False, "harness error", str(e))
finally:
    c.close()
    t.diag("logs: %s" % c.result_dir)
t.exit()
