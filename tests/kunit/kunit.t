#!/usr/bin/python3
"""KUnit suites of tern_core (drivers/net/ethernet/tern/tern_core_test.c) in the debug guest
kernel: load tern_core_test.ko (the suites run while it loads), read every
/sys/kernel/debug/kunit/<suite>/results (KTAP) and report one TAP line per test case
(``suite.case``, with KUnit's diagnostics when it fails) and one per suite. Then the kernel
log must be free of KASAN, lockdep and other reports, and kmemleak must find nothing.

Debug kernel only (TERN_KERNEL=debug): Debian's kernel has no CONFIG_KUNIT, so the test
module is only built against the debug tree (scripts/build.sh --debug)."""

import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(TOP, "tests", "lib"), os.path.join(TOP, "scripts")]

from tap import Tap  # noqa: E402
from harness import Cluster, HarnessError, paths  # noqa: E402

try:
    from ternlib import check_kernel_clean  # noqa: E402
except ImportError:  # older ternlib: the harness's dmesg scan only
    check_kernel_clean = None

MODULE = "tern_core_test"
# Every suite tern_core_test.ko defines; each must have run.
SUITES = ("tern_hw_layout", "tern_cmdq", "tern_eq", "tern_en", "tern_ethtool", "tern_debugfs",
          "tern_dcb")
KUNIT_DIR = "/sys/kernel/debug/kunit"
# tern_cmdq's stale-completion case makes the driver warn on purpose.
IGNORE = (r"completion with unexpected token",)

RESULT = re.compile(r"^(?P<indent>\s*)(?P<ok>ok|not ok) (?P<num>\d+) (?:- )?(?P<name>\S+)"
                    r"(?:\s+#\s*(?P<directive>\w+)\s*(?P<reason>.*))?$")
PLAN = re.compile(r"^ {4}1\.\.(\d+)$")
# A case's debugfs log holds 512 bytes: when it fills up, the rest of the case's lines
# (its result line too) are dropped and the next case's log follows without a newline.
GLUED = re.compile(r"(?<=\S)( {4}(?:not ok|ok) \d+ )")


def parse_ktap(text):
    """One suite's KTAP (its debugfs results, or its block of the kernel log). Returns
    (plan, {case number: result}, suite result or None); a result is a dict: name, ok (bool),
    skip (reason or None), diag (the lines printed for it before its result line)."""
    plan, cases, suite, pending = None, {}, None, []
    for line in GLUED.sub(r"\n\1", text).splitlines():
        m = RESULT.match(line)
        if not m:
            p = PLAN.match(line)
            s = line.strip()
            if p:
                plan = int(p.group(1))
            elif s and not s.startswith("KTAP version") and not s.startswith("# Subtest:") \
                    and not re.match(r"^1\.\.\d+$", s):
                pending.append(s)
            continue
        directive = (m.group("directive") or "").upper()
        res = {"name": m.group("name"), "ok": m.group("ok") == "ok",
               "skip": (m.group("reason") or "no reason given") if directive == "SKIP"
               else None, "diag": pending}
        pending = []
        depth = len(m.group("indent").expandtabs())
        if depth == 0:
            suite = res
        elif depth == 4:
            cases[int(m.group("num"))] = res
        # Deeper levels are the parameters of a parameterised case: its own line sums them.
    return plan, cases, suite


def log_block(log, suite):
    """The suite's KTAP in the kernel log (printk is not truncated like debugfs), or ''."""
    lines = [re.sub(r"^\[\s*\d+\.\d+\] ", "", ln) for ln in log.splitlines()]
    start = None
    for i, ln in enumerate(lines):
        if ln == "    # Subtest: %s" % suite:
            start = i
        elif start is not None and re.match(r"^(?:not ok|ok) \d+ %s$" % re.escape(suite), ln):
            return "\n".join(lines[start:i + 1])
    return ""


def dump_results(node):
    """{suite: KTAP text} for every suite in debugfs."""
    r = node.run("cd %s && for s in *; do [ -f $s/results ] || continue; echo \"=== $s\"; "
                 "cat $s/results; done" % KUNIT_DIR, timeout=120)
    if r.rc != 0:
        raise HarnessError("cannot read %s: %s" % (KUNIT_DIR, r.stderr.strip()))
    out, name = {}, None
    for line in r.stdout.splitlines():
        if line.startswith("=== "):
            name = line[4:].strip()
            out[name] = []
        elif name is not None:
            out[name].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def report_suite(t, node, name, text, klog):
    """TAP lines for one suite: a line per case, then the suite's. ``klog``: a function
    returning the kernel log (called only when debugfs lost something). Returns the number
    of cases reported."""
    plan, cases, suite = parse_ktap(text)
    nums = set(cases) | set(range(1, (plan or 0) + 1))
    failed_or_lost = [k for k in nums if k not in cases or not cases[k]["ok"]]
    full = {}
    if failed_or_lost:
        # Complete results and diagnostics from the kernel log.
        _, full, _ = parse_ktap(log_block(klog(), name))
    passed = 0
    for k in sorted(nums):
        case = cases.get(k) or full.get(k)
        if case is None:
            t.ok(False, "%s.#%d (no result line in debugfs or the kernel log)" % (name, k),
                 "console log: %s" % node.console_path)
            continue
        if k in full and full[k]["name"] == case["name"]:
            case = dict(case, diag=full[k]["diag"] or case["diag"])
        desc = "%s.%s" % (name, case["name"])
        if case["skip"] is not None:
            t.skip(desc, case["skip"])
        else:
            t.ok(case["ok"], desc, *case["diag"])
        passed += case["ok"]
    if suite is None:
        t.ok(False, "suite %s: no result line (did it finish?)" % name, text)
    else:
        t.ok(suite["ok"] and nums, "suite %s: %d/%d cases passed" % (
            name, passed, len(nums)), *suite["diag"])
    return len(nums)


t = Tap()
if paths.flavour() != "debug":
    t.skip_all("KUnit needs the debug kernel: run with TERN_KERNEL=debug "
               "(Debian's kernel has no CONFIG_KUNIT)")
mods = os.path.join(paths.flavour_out("debug"), "modules")
if not os.path.exists(os.path.join(mods, "tern_core.ko")):
    t.skip_all("tern's modules are not built for the debug kernel (%s): run "
               "scripts/build.sh --debug" % mods)
# The debug kernel has KUnit: a missing test module next to tern_core.ko is a build bug.
if not t.ok(os.path.exists(os.path.join(mods, MODULE + ".ko")),
            "%s.ko is built for the debug kernel" % MODULE,
            "not in %s: does the debug kernel have CONFIG_KUNIT? (drivers/net/ethernet/tern/"
            "Kbuild builds it only then)" % mods):
    t.exit()

c = Cluster(nodes=1, name="kunit", kernel_flavour="debug")
try:
    c.boot()
except HarnessError as e:
    t.abort("guest did not boot: %s" % e)
n = c[0]

try:
    r = n.run("modprobe %s" % MODULE, timeout=600)
    t.ok(r.rc == 0, "modprobe %s (the suites run while it loads)" % MODULE, r.stdout, r.stderr)

    results = {}
    with t.step("read %s/*/results" % KUNIT_DIR):
        results = dump_results(n)

    ran = 0
    dmesg = []

    def klog():
        if not dmesg:
            dmesg.append(n.dmesg())
        return dmesg[0]
    for name in sorted(results):
        ran += report_suite(t, n, name, results[name], klog)
    t.ok(ran > 0, "at least one KUnit test case ran", "suites: %s" % sorted(results))
    missing = [s for s in SUITES if s not in results]
    t.ok(not missing, "every suite of %s ran" % MODULE, "missing: %s" % missing)

    r = n.run("rmmod %s" % MODULE, timeout=120)
    t.ok(r.rc == 0, "rmmod %s" % MODULE, r.stderr)

    if check_kernel_clean is not None:
        check_kernel_clean(t, c, ignore=IGNORE)
    else:
        problems = n.kernel_problems(ignore=IGNORE, source="dmesg")
        t.ok(not problems, "no kernel problems (KASAN, lockdep, warnings)", *problems)
except HarnessError as e:
    t.ok(False, "guest commands", str(e))
finally:
    c.close()
t.exit()
