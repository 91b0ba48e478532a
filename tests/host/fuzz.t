#!/usr/bin/python3
"""The device model's fuzzers, a bounded slice each (issue 14): the model is host code inside
QEMU, and every word a guest driver writes and every frame a peer sends is hostile input.

- fuzz-cmd (model/fuzz/fuzz_cmd.c): scripts of command-queue entries, register and doorbell
  writes, DMA arena contents, time, frames, link changes and resets against one device.
- fuzz-wire (model/fuzz/fuzz_wire.c): frames from the wire (up to 69631 bytes, mutated from
  real RoCEv2 frames, lengths and ICRC fixed up so the parsers behind the ICRC check are
  reached, or turned into UD datagrams) sent at two devices whose RC and UD QPs hold work of
  every opcode, mixed with time passing, QP state and path MTU changes, more work and MRs
  registered again.
- fuzz-switch (model/fuzz/fuzz_switch.c): frames up to 69631 bytes into the switch model's
  ports (its parser of Ethernet, VLAN, PFC, IPv4/IPv6 DSCP and ECN: tern-switch relays guests'
  frames into it), with its timers, under any configuration.
- fuzz-guest (model/fuzz/fuzz_guest.c): what a guest does to two devices with RC/UC, UD and
  SRQ QPs, fast registration, a window, congestion control and Ethernet queues: WQEs of any
  opcode, doorbells and registers of any value, rings, CQs, EQs and doorbell records rewritten
  after the device read them, DMA addresses and MSI-X messages pointed at the device's own
  BARs, frames lost, duplicated and reordered on the wire.
- fuzz-eth (the same source, -DFUZZ_ETH): Ethernet TX descriptors (checksum, TSO) and RX
  frames (TCP/UDP over IPv4/IPv6, VLAN) with coalescing, RSS and the checksum offloads on.

They run two at a time (the next starts when one ends) for TERN_FUZZ_SECONDS each (default
15; the replays of fuzz-wire's and fuzz-guest's corpora take longer; the five take about the
wall time three took at once at 45 s) from the committed seed
corpus (model/fuzz/corpus/), with ASan and UBSan; new inputs go to a temporary directory, not
into the tree. A finding (sanitizer report, crash, a 10 s hang, 2.5 GiB of memory) fails the
test, leaves the input in build/fuzz/ and prints how to reproduce it. Longer runs by hand:
``make -C model fuzz && model/build/fuzz-wire -detect_leaks=0 -max_len=70000 DIR
model/fuzz/corpus/wire`` (Documentation/testing.rst).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(TOP, "tests", "lib")]

from tap import Tap  # noqa: E402

SECONDS = int(os.environ.get("TERN_FUZZ_SECONDS", "15"))
PARALLEL = 2    # the machine is shared: two fuzzers at a time
MODEL = os.path.join(TOP, "model")
OUT = os.path.join(os.environ.get("TERN_OUT", os.path.join(TOP, "build")), "fuzz")
TARGETS = [
    ("cmd", "commands, queues, registers and doorbells", []),
    # the wire target keeps its two devices across inputs: every input would look like a
    # leak (see fuzz_wire.c); the host tests check leaks under ASan
    ("wire", "frames from the wire at QPs with outstanding work",
     ["-detect_leaks=0", "-max_len=70000", "-len_control=0"]),
    ("switch", "frames into the switch model's ports", ["-max_len=70000"]),
    # the devices live across inputs (reset for each): no LeakSanitizer, as for wire
    ("guest", "a guest's WQEs, doorbells, ring rewrites and DMA into the BARs",
     ["-detect_leaks=0"]),
    ("eth", "Ethernet TX descriptors and RX frames with the offloads", ["-detect_leaks=0"]),
]

t = Tap()
build = subprocess.run(["make", "-s", "-C", MODEL, "fuzz"], stdout=sys.stderr, stderr=sys.stderr)
if build.returncode:
    t.abort("the fuzzers build with clang's libFuzzer (make -C model fuzz; see stderr)")
os.makedirs(OUT, exist_ok=True)
pending = []
for name, what, opts in TARGETS:
    work = tempfile.mkdtemp(prefix="tern-fuzz-%s-" % name)
    cmd = [os.path.join(MODEL, "build", "fuzz-" + name), "-max_total_time=%d" % SECONDS,
           "-timeout=10", "-rss_limit_mb=2560", "-print_final_stats=1",
           "-artifact_prefix=%s/%s-" % (OUT, name)] + opts + [
           work, os.path.join(MODEL, "fuzz", "corpus", name)]
    pending.append((name, what, cmd, work))


def finish(name, what, cmd, work, p, log_path):
    try:
        p.wait(timeout=SECONDS + 300)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    shutil.rmtree(work, ignore_errors=True)
    with open(log_path, errors="replace") as f:
        log = f.read()
    execs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", log)
    cov = re.findall(r"\bcov: (\d+)", log)
    crash = re.findall(r"Test unit written to (\S+)", log)
    t.ok(p.returncode == 0 and execs and not crash,
         "fuzz-%s (%s): %s executions in %d s, no finding (%s coverage edges)" % (
             name, what, execs[-1] if execs else "?", SECONDS, cov[-1] if cov else "?"),
         "exit %s; the input: %s" % (p.returncode, " ".join(crash) or "none written"),
         "reproduce: %s %s" % (cmd[0], crash[0] if crash else ""),
         log[-6000:])


# a pool of PARALLEL: the next fuzzer starts when one ends (their corpus replays differ)
running = []
while pending or running:
    while pending and len(running) < PARALLEL:
        name, what, cmd, work = pending.pop(0)
        log_path = os.path.join(OUT, name + ".log")
        with open(log_path, "w") as log:
            p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        running.append((name, what, cmd, work, p, log_path))
    done = [r for r in running if r[4].poll() is not None]
    if not done:
        time.sleep(0.2)
        continue
    for r in done:
        running.remove(r)
        finish(*r)
t.exit()
