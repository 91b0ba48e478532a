#!/usr/bin/python3
"""Each test file's wall time from the logs of scripts/test.sh's prove runs (prove --timer),
slowest first, the slowest single tests in them, and the whole run's time against the suite's
budget (Documentation/testing.rst, "Test files and what they cost"): at most 60 min on a fresh
2-core machine, 25 min with warm caches.

  scripts/lib/test-times.py TOTAL_SECONDS FLAVOUR=LOG[@HALF_SECONDS]...

HALF_SECONDS: the wall time of that flavour's half (its prove run; the debug half's includes
its kernel build). The halves run side by side, so their file times add up to more than the
whole run's.
"""

import re
import sys

BUDGET_FRESH, BUDGET_WARM = 60 * 60, 25 * 60
STEPS_SHOWN = 25
FAILURES_SHOWN = 12


def times(path):
    """[(file, seconds or None, verdict)] in the order prove ran them. prove --timer prints
    "[HH:MM:SS] file ..." when a file is done and, if it passed, "ok  N ms (...)"; a failed
    file's time is taken from the timestamps (its own minus the previous file's)."""
    out, cur, last_ts = [], None, None

    def close(verdict, seconds):
        out.append((cur[0], seconds, verdict))

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip()
            m = re.match(r"^\[(\d\d):(\d\d):(\d\d)\] (\S+\.t) \.+ ?(skipped: .*)?$", line)
            if m:
                if cur:
                    close("FAIL", cur[1])
                ts = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3))
                span = None if last_ts is None else (ts - last_ts) % 86400
                last_ts = ts
                cur = (m.group(4), span)
                if m.group(5):
                    close("skipped", 0.0)
                    cur = None
                continue
            m = re.match(r"^ok\s+(\d+) ms \(", line)
            if m and cur:
                close("ok", int(m.group(1)) / 1000.0)
                cur = None
    if cur:
        close("FAIL", cur[1])
    return out


def slow_steps(path):
    """[(seconds, file, test)] from the "# took N s" notes tests/lib/tap.py prints after a
    test that took a while (the time since the test before it)."""
    out, cur, last = [], None, None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip()
            m = re.match(r"^(?:\[\d\d:\d\d:\d\d\] )?(\S+\.t) \.\.", line)
            if m:
                cur, last = m.group(1), None
                continue
            m = re.match(r"^(?:not )?ok \d+(?: - (.*))?$", line)
            if m:
                last = m.group(1) or "?"
                continue
            m = re.match(r"^# took ([\d.]+) s$", line)
            if m and cur and last:
                out.append((float(m.group(1)), cur, last))
                last = None
    return out


def failures(path):
    """{file: [lines]}: each file's failed tests (a "not ok" that is not a TODO or SKIP) and
    prove's own complaints about it (a wrong plan, a non-zero exit, a timeout)."""
    out, cur = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip()
            m = re.match(r"^(?:\[\d\d:\d\d:\d\d\] )?(\S+\.t) \.\.", line)
            if m:
                cur = m.group(1)
                continue
            if not cur:
                continue
            if re.match(r"^not ok \d+", line) and not re.search(r"# (TODO|SKIP)", line):
                out.setdefault(cur, []).append(line)
            elif re.match(r"^(Dubious|Bad plan|No plan found|Failed \d+/\d+ subtests|"
                          r"Parse errors)", line):
                out.setdefault(cur, []).append(line)
    return out


def main():
    total = int(sys.argv[1])
    rows, halves, steps, failed = [], [], [], []
    for arg in sys.argv[2:]:
        flavour, _, path = arg.partition("=")
        path, _, secs = path.partition("@")
        if secs:
            halves.append("%s half %s s" % (flavour, secs))
        try:
            rows += [(flavour, f, s, v) for f, s, v in times(path)]
            steps += [(s, flavour, f, d) for s, f, d in slow_steps(path)]
            bad = failures(path)
            failed += [(flavour, f, bad.get(f, [])) for f, _, v in times(path) if v == "FAIL"]
        except OSError as e:
            print("test times: %s: %s" % (path, e))
    print("=== wall time per test file, slowest first ===")
    for flavour, f, s, v in sorted(rows, key=lambda r: -(r[2] or 0)):
        if v != "skipped":
            print("%8s  %-6s %-5s %s" % ("%.0f s" % s if s is not None else "?", flavour, v, f))
    if steps:
        print("=== the slowest tests (time since the test before, in its file) ===")
        for s, flavour, f, d in sorted(steps, key=lambda r: -r[0])[:STEPS_SHOWN]:
            print("%8s  %-6s %s: %s" % ("%.0f s" % s, flavour, f, d[:90]))
    tested = sum(r[2] or 0 for r in rows)
    print("test files %.0f s in all%s; total %d s (%.1f min) against a budget of "
          "%d min warm, %d min on a fresh machine%s" % (
              tested, " (%s, side by side)" % ", ".join(halves) if len(halves) > 1 else
              ", builds and set-up %.0f s" % max(total - tested, 0),
              total, total / 60.0, BUDGET_WARM // 60,
              BUDGET_FRESH // 60, "" if total <= BUDGET_WARM else
              ": over the warm budget" if total <= BUDGET_FRESH else
              ": over both budgets"))
    # last, so that a log cut to its end still names what failed
    for flavour, f, lines in failed:
        print("=== FAILED on the %s kernel: %s ===" % (flavour, f))
        for line in lines[:FAILURES_SHOWN] or ["(no failed test line: killed or timed out?)"]:
            print("  " + line[:200])


if __name__ == "__main__":
    main()
