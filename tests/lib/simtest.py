"""Helpers shared by the host tests that run the fabric simulators (tern-sim, tern-ns3-*):
running one for its JSON figures, sanitized runs, negative controls."""

import json
import os
import subprocess

SAN_ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:halt_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")


def run_json(cmd, timeout, stderr_tail=None):
    """Run cmd; its JSON output. Raises RuntimeError (with the end of stderr) on failure."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode:
        err = p.stderr if stderr_tail is None else p.stderr[-stderr_tail:]
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, err))
    return json.loads(p.stdout)


def san_run(cmd, timeout):
    """Run a sanitized build (ASan with leak checks, UBSan, halting on the first error):
    (its JSON output, or None if it failed; the end of its stderr)."""
    p = subprocess.run(cmd, capture_output=True, text=True, env=SAN_ENV, timeout=timeout)
    return (json.loads(p.stdout) if p.returncode == 0 else None), p.stderr[-3000:]


def negative_control(t, caught, desc, failed, why="the checks cannot fail"):
    """A negative control: ok if it was caught (the checks in `failed` failed, as they
    must), listing them."""
    t.ok(caught, desc, why)
    for d in failed:
        t.diag("  as expected: " + d)
