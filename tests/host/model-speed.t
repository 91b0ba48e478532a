#!/usr/bin/python3
"""model/bench/tern-speed, the benchmark of the device model's own speed (bench/model.py runs
it for figures), in its short mode: two model instances back to back in one process, RDMA
WRITE, READ and SEND of 64 B, 4 KiB, 64 KiB and 1 MiB through the host driver. Checks only
that the data arrived intact and the counters agree (the program checks both after every run
and reports a failed run as failed, never as a speed): under ASan/UBSan, at -O2, with every
frame copied through the wire's queue, and that a spoiled destination byte is caught. Never
timings.
"""

import json
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(TOP, "tests", "lib")]

from tap import Tap  # noqa: E402

MODEL = os.path.join(TOP, "model")
OPT = os.path.join(MODEL, "build", "bench", "tern-speed")
SAN = os.path.join(MODEL, "build", "bench", "san", "tern-speed")
OPS = ("write", "read", "send")
SIZES = (64, 4096, 65536, 1 << 20)

t = Tap()
mk = subprocess.run(["make", "-s", "-C", MODEL, "bench"], stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, text=True)
if mk.returncode != 0:
    t.abort("make -C model bench failed:\n" + mk.stdout)
os.environ["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:halt_on_error=1"
os.environ["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"


def run(binary, *args):
    p = subprocess.run([binary, "--quick", "--json"] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        out = None
    return p, out


def check(label, binary, *args):
    p, out = run(binary, *args)
    if not t.ok(p.returncode == 0 and out is not None, "%s: runs and passes its checks" % label,
                "exit status %d" % p.returncode, "stderr: " + p.stderr[-2000:],
                "stdout: " + p.stdout[-500:]):
        return
    got = {(r["size"], op): r[op] for r in out["results"] for op in OPS if op in r}
    t.eq(sorted(got), sorted((s, op) for s in SIZES for op in OPS),
         "%s: every size and operation measured" % label)
    bad = ["%s %d: %s" % (op, s, r["why"] or "%d failed" % r["failed"])
           for (s, op), r in sorted(got.items()) if r["failed"] or r["runs"] != 1]
    t.ok(not bad, "%s: data intact and counters consistent in every run" % label, *bad)
    none = ["%s %d" % (op, s) for (s, op), r in sorted(got.items()) if r["messages"] <= 0]
    t.ok(not none, "%s: every run moved messages" % label, *none)
    mc = [r["size"] for r in out["results"] if r["memcpy"]["failed"] or r["memcpy"]["runs"] != 1]
    t.ok(not mc, "%s: memcpy reference ran and copied correctly" % label, *map(str, mc))
    t.ok(out["wire_refused"] == 0 and out["wire_too_big"] == 0,
         "%s: the wire refused nothing and dropped nothing" % label,
         "refused %d, too long %d" % (out["wire_refused"], out["wire_too_big"]))
    return out


check("ASan/UBSan build", SAN)
out = check("-O2 build", OPT)
if out:
    t.ok(out["wire_direct"] > 0, "-O2 build: frames handed over directly",
         "direct %d, queued %d" % (out["wire_direct"], out["wire_queued"]))
out = check("-O2 build, every frame queued", OPT, "--copy-wire")
if out:
    t.ok(out["wire_direct"] == 0 and out["wire_queued"] > 0,
         "--copy-wire: every frame went through the queue",
         "direct %d, queued %d" % (out["wire_direct"], out["wire_queued"]))

p, out = run(SAN, "--spoil", "--no-memcpy")
failed = sum(r[op]["failed"] for r in out["results"] for op in OPS) if out else None
t.ok(p.returncode == 1 and failed == len(SIZES) * len(OPS) and "data differs" in p.stderr,
     "--spoil: a changed destination byte fails every run",
     "exit status %d, failed runs %r" % (p.returncode, failed), "stderr: " + p.stderr[-1000:])

p = subprocess.run([OPT, "--sizes", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   text=True, timeout=30)
t.eq(p.returncode, 2, "a bad option is refused (exit status 2)")
t.exit()
