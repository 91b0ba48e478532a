"""Helpers shared by the host tests that run the fabric simulators (tern-sim, tern-ns3-*):
running one for its JSON figures, sanitized runs, negative controls."""

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

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


def ns3_triples(t, ns3_dir, runs, sizes):
    """Build tern-ns3-incast in ``ns3_dir`` and run, two at a time, ``runs(n)`` for each N
    in ``sizes``: a dict of three (label, thunk) pairs, each thunk giving a run's JSON (e.g.
    the algorithm on ns-3, ns-3's baseline, the algorithm on tern-sim). Returns
    {N: (the three results in ``runs``'s order)} for the N whose three runs all worked; a run
    that failed, or the build, is a failed TAP line."""
    build = subprocess.run(["nice", "make", "-s", "-j2", "-C", ns3_dir, "incast"],
                           stdout=sys.stderr, stderr=sys.stderr)
    if build.returncode:
        t.ok(False, "tern-ns3-incast builds (see stderr)")
        return {}
    jobs = {(n, label): thunk for n in sizes for label, thunk in runs(n)}
    res = {}
    with ThreadPoolExecutor(max_workers=2) as ex:
        futs = {job: ex.submit(thunk) for job, thunk in jobs.items()}
        for (n, label), f in futs.items():
            try:
                res[(n, label)] = f.result()
            except Exception as e:  # noqa: BLE001 - reported as a failed run
                t.ok(False, "run %s N=%d" % (label, n), str(e))
    out = {}
    for n in sizes:
        got = [res.get((n, label)) for label, _ in runs(n)]
        if all(got):
            out[n] = tuple(got)
    return out
