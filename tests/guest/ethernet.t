#!/usr/bin/python3
"""tern's Ethernet function between two guests: the driver binds, the link comes up, the
guests ping and move 64 MiB (16 MiB on the debug kernel) over TCP intact, counters agree with
what was sent, the offloads (scatter-gather, checksums, TSO, receive coalescing) are on and do
their job on the wire (every TCP frame in the pcap has right checksums and at most the MSS of
payload, the sender's device made TSO segments, the receiver's coalesced them; each can be
turned off and the data still arrives), a frame damaged on the wire is flagged by the receiving
device, counted and dropped by the stack while TCP delivers intact, devlink reports the
firmware, interrupt coalescing (ethtool -c/-C: the defaults, values read back, refusals,
kept across down/up, devlink reload and a device reset, fewer interrupts under a TCP
transfer with the longest period than without moderation, data intact each time), several
queue pairs with RSS (ethtool -l/-L/-x/-X: TCP flows spread over the RX queues as the
per-queue counters show, -X equal 1 keeps everything on queue 0, -L 1 and back, refusals,
kept across down/up and devlink reload, data intact each time), failing and lost firmware
commands surface as errors, the carrier follows the wire, the device clock is a PTP hardware
clock (ethtool -T lists it; linuxptp's phc_ctl reads it advancing, steps, sets and slews it;
it comes back after devlink reload and module reload and goes away with the module), the
device stamps frames on that clock (ethtool -T: hardware transmit and receive; linuxptp's
ptp4l with hardware timestamps over L2 between the guests, node1 master and node0 slave-only:
the slave locks, its offsets settle, both devices' timestamp counters move), and the
module unloads and reloads cleanly."""

import array
import collections
import os
import re
import struct
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(TOP, "tests", "lib"), os.path.join(TOP, "scripts")]

from tap import Tap  # noqa: E402
from harness import Cluster, HarnessError, Wire, paths  # noqa: E402
from ternlib import (carrier, check_kernel_clean, ethtool_stats, link_stats,  # noqa: E402
                     model_fw_version, wait_for)
import roce_pcap as rp  # noqa: E402

# The TCP transfer: 64 MiB wraps every ring many times over; the debug kernel (KASAN, lockdep,
# 8x slower here) takes 88 s for that much, and 16 MiB goes through the same driver paths
# (11,000 frames through 256-entry rings).
DATA_MIB = 16 if paths.flavour() == "debug" else 64

# The offloads ethtool -k must show on (the device reports TERN_DEV_CAP_ETH_OFFLOAD).
OFFLOADS = ("scatter-gather", "tx-checksumming", "tcp-segmentation-offload",
            "rx-checksumming", "generic-receive-offload", "rx-gro-hw")
# ethtool -c after probe (the driver's defaults, tern_core.rst) and what the test sets.
COAL_KEYS = ("rx-usecs", "rx-frames", "tx-usecs", "tx-frames")
COAL_DEFAULT = {"rx-usecs": 8, "rx-frames": 32, "tx-usecs": 16, "tx-frames": 32}
COAL_SET = {"rx-usecs": 50, "rx-frames": 16, "tx-usecs": 30, "tx-frames": 8}
# The damaged transfer: one frame in 50 gets a bit flipped on the wire (debugfs wire_faults).
CORRUPT_MIB = 4 if paths.flavour() == "debug" else 8


def ones_sum(b):
    """The one's complement sum of big-endian 16-bit words (RFC 1071), folded."""
    if len(b) & 1:
        b += b"\0"
    a = array.array("H", b)
    if sys.byteorder == "little":
        a.byteswap()
    s = sum(a)
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def tcp_frames(path, src_ip):
    """(frame length, TCP payload length, IPv4 header sum good, TCP sum good) of every IPv4
    TCP frame from ``src_ip`` in the pcap, checked with our own code."""
    out = []
    src = bytes(int(x) for x in src_ip.split("."))
    for _, f in rp.read_pcap(path):
        if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6 or f[26:30] != src:
            continue
        ihl = (f[14] & 15) * 4
        tot = struct.unpack(">H", f[16:18])[0]
        l4 = 14 + ihl
        if 14 + tot > len(f) or tot < ihl + 20:
            out.append((len(f), -1, False, False))
            continue
        seg = f[l4:14 + tot]
        doff = (seg[12] >> 4) * 4
        pseudo = f[26:34] + struct.pack(">BBH", 0, 6, len(seg))
        out.append((len(f), len(seg) - doff, ones_sum(f[14:l4]) == 0xffff,
                    ones_sum(pseudo + seg) == 0xffff))
    return out


def snmp(node, proto, field):
    """A counter of /proc/net/snmp (e.g. Tcp InCsumErrors)."""
    lines = [l.split() for l in node.run("cat /proc/net/snmp").stdout.splitlines()
             if l.startswith(proto + ":")]
    return int(dict(zip(lines[0][1:], lines[1][1:]))[field])


def coalesce(node, dev):
    """rx/tx-usecs and rx/tx-frames as ``ethtool -c`` shows them."""
    out = node.run("ethtool -c %s" % dev).stdout
    got = dict(re.findall(r"^([\w-]+):\s+(\S+)", out, re.M))
    return {k: int(got[k]) if got.get(k, "").isdigit() else got.get(k) for k in COAL_KEYS}


def coal_args(vals):
    return " ".join("%s %d" % kv for kv in sorted(vals.items()))


def device_irqs(node, dev):
    """Interrupts taken on the tern device's MSI-X vectors, all CPUs, from /proc/interrupts."""
    irqs = set(node.run("ls /sys/class/net/%s/device/msi_irqs" % dev).stdout.split())
    total = 0
    for line in node.run("cat /proc/interrupts").stdout.splitlines():
        f = line.split()
        if f and f[0].rstrip(":") in irqs:
            for x in f[1:]:
                if not x.isdigit():
                    break
                total += int(x)
    return total


def channels(node, dev):
    """(maximum, current) combined channels as ``ethtool -l`` shows them."""
    got = re.findall(r"^Combined:\s+(\d+)", node.run("ethtool -l %s" % dev).stdout, re.M)
    return tuple(int(x) for x in got) if len(got) == 2 else None


def indir_table(node, dev):
    """The RSS indirection table as ``ethtool -x`` shows it (a list of queue numbers)."""
    out = node.run("ethtool -x %s" % dev).stdout
    table = []
    for m in re.finditer(r"^\s*(\d+):((?:\s+\d+)+)\s*$", out, re.M):
        table += [int(x) for x in m.group(2).split()]
    return table


def queue_packets(node, dev, d):
    """{queue: packets} of the per-queue counters ``<d>N_packets`` of ``ethtool -S``."""
    st = ethtool_stats(node, dev)
    return {int(k[len(d):-len("_packets")]): v for k, v in st.items()
            if re.match(r"^%s\d+_packets$" % d, k)}


def moved(a, b):
    """The queues whose counter grew from snapshot ``a`` to ``b``."""
    return sorted(q for q in b if b[q] > a.get(q, 0))


def phc_index(node, dev):
    """The PTP hardware clock index ``ethtool -T`` gives for ``dev``, or None."""
    out = node.run("ethtool -T %s" % dev).stdout
    m = re.search(r"^(?:PTP Hardware Clock|Hardware timestamp provider index):\s*(\d+)",
                  out, re.M)
    return int(m.group(1)) if m else None


def phc_ctl(node, ptp, cmds):
    """Run linuxptp's phc_ctl on ``ptp`` (/dev/ptpN); returns (result, the times ``get``
    printed, the offsets ``cmp`` printed in ns)."""
    r = node.run("phc_ctl -q %s -- %s" % (ptp, cmds), timeout=30)
    got = [float(x) for x in re.findall(r"clock time is (\d+\.\d+)", r.stdout)]
    cmp = [int(x) for x in re.findall(r"offset from CLOCK_REALTIME is (-?\d+)ns", r.stdout)]
    return r, got, cmp


def check_phc(t, node, dev, what):
    """ethtool -T names a PHC that is tern's and runs; returns its /dev path or None."""
    idx = phc_index(node, dev)
    name = node.run("cat /sys/class/ptp/ptp%s/clock_name" % idx).stdout.strip()
    t.ok(idx is not None and name == "tern device clock",
         "%s: ethtool -T %s shows PTP hardware clock %s (%s)%s" % (node.name, dev, idx, name,
                                                                 what),
         node.run("ethtool -T %s; ls /sys/class/ptp" % dev).stdout)
    if idx is None:
        return None
    ptp = "/dev/ptp%d" % idx
    r, got, _ = phc_ctl(node, ptp, "get wait 0.2 get")
    t.ok(r.rc == 0 and len(got) == 2 and 0.2 <= got[1] - got[0] < 10,
         "%s: %s read twice 0.2 s apart advanced %.3f s%s" % (
             node.name, ptp, got[1] - got[0] if len(got) == 2 else -1, what),
         r.stdout, r.stderr)
    return ptp


# ptp4l between the guests: how long the slave runs, how long ptp4l waits for a transmit
# timestamp (its default 1 ms is for silicon: under TCG a frame's completion takes longer),
# and the bound on the locked slave's offsets (the median of its last samples). Each guest's
# device clock follows its own QEMU's virtual clock; the path between the two is a socket
# between two QEMU processes, whose delay and asymmetry are the host's scheduling.
PTP_SECONDS = 45 if paths.flavour() == "debug" else 25
PTP_TX_TIMEOUT_MS = 1000 if paths.flavour() == "debug" else 200
PTP_OFFSET_NS = 3000000 if paths.flavour() == "debug" else 1000000
PTP_SAMPLE = re.compile(r"master offset\s+(-?\d+)\s+s(\d)\s+freq\s+[+-]?\d+\s+"
                        r"path delay\s+(-?\d+)")


def ptp_sync(devs):
    """ethtool -T offers hardware timestamps; ptp4l -2 -H: node1 master, node0 slave-only.
    The slave must lock (state s2) with the median of its last 8 offsets within
    PTP_OFFSET_NS, and both devices must have stamped frames both ways (hw_tx_timestamps,
    hw_rx_timestamps)."""
    for n, d in zip(c, devs):
        r = n.run("ethtool -T %s" % d)
        t.ok(all(k in r.stdout for k in ("hardware-transmit", "hardware-receive",
                                          "hardware-raw-clock")) and
             re.search(r"^\s*all\b", r.stdout, re.M),
             "%s: ethtool -T %s: hardware transmit and receive timestamps, receive filter "
             "all" % (n.name, d), r.stdout, r.stderr)
    before = [ethtool_stats(n, d) for n, d in zip(c, devs)]
    # four Syncs a second, each sample printed (a summary interval equal to the Sync
    # interval: "master offset ... s2 ... path delay ...")
    opts = "-2 -H -m --tx_timestamp_timeout=%d --logSyncInterval=-2 --summary_interval=-2" % (
        PTP_TX_TIMEOUT_MS)
    master = n1.spawn("exec timeout -s INT %d ptp4l -i %s %s" % (PTP_SECONDS + 15, devs[1],
                                                                opts),
                      timeout=PTP_SECONDS + 60)
    time.sleep(1)
    slave = n0.run("timeout -s INT %d ptp4l -i %s -s %s" % (PTP_SECONDS, devs[0], opts),
                   timeout=PTP_SECONDS + 60)
    master.kill(2)
    mres = master.wait(timeout=60, raise_timeout=False)
    after = [ethtool_stats(n, d) for n, d in zip(c, devs)]
    samples = [(int(o), int(s), int(p)) for o, s, p in PTP_SAMPLE.findall(slave.stdout)]
    locked = [x for x in samples if x[1] == 2]
    last = sorted(abs(x[0]) for x in locked[-8:])
    median = last[len(last) // 2] if last else -1
    t.ok(len(locked) >= 8 and 0 <= median <= PTP_OFFSET_NS,
         "ptp4l -2 -H, node0 slave of node1 for %d s: %d samples, %d locked (s2), median "
         "|offset| of the last 8 %d ns (at most %d), path delay %s ns" % (
             PTP_SECONDS, len(samples), len(locked), median, PTP_OFFSET_NS,
             locked[-1][2] if locked else "-"),
         slave.stdout[-3000:], slave.stderr[-1500:], mres.stdout[-1500:] if mres else "")
    moved = [(hw(a, "tx_timestamps") - hw(b, "tx_timestamps"),
              hw(a, "rx_timestamps") - hw(b, "rx_timestamps")) for a, b in zip(after, before)]
    t.ok(all(tx > 0 and rx > 0 for tx, rx in moved),
         "the devices stamped PTP frames both ways: hw_tx_timestamps/hw_rx_timestamps "
         "node0 +%d/+%d, node1 +%d/+%d" % (moved[0] + moved[1]))
    # ptp4l leaves timestamping on (and with it, receive coalescing off); off again for the
    # rest of the test
    for n, d in zip(c, devs):
        r = n.run("hwstamp_ctl -i %s -t 0 -r 0" % d)
        t.ok(r.rc == 0, "%s: hwstamp_ctl -t 0 -r 0: hardware timestamps off again" % n.name,
             r.stdout, r.stderr)


# RSS: flows fetched in parallel, each its own TCP connection (source port).
RSS_FLOWS = 8
RSS_KIB = 256 if paths.flavour() == "debug" else 512
RSS_QUEUES = 4


# Every frame the wire offers a port ends in exactly one of these device counters.
RX_FATES = ("rx_frames", "rx_filtered", "rx_oversize", "rx_runt", "rx_no_queue",
            "rx_dma_errors")

t = Tap()
# the device states a command timeout of 1 s (TERN_REG_CMD_TIMEOUT; 5 s by default): the lost
# command below shows that the driver waits what the device says
CMD_TIMEOUT_MS = 1000
c = Cluster(nodes=2, wires=[Wire("tern", pcap=True, test_hooks=True,
                                 props={"cmd-timeout": CMD_TIMEOUT_MS})], name="ethernet")
try:
    c.boot()
except HarnessError as e:
    t.abort("cluster did not boot: %s" % e)

n0, n1 = c[0], c[1]


def hw(stats, name):
    """A device counter from ``ethtool -S`` (exported with the ``hw_`` prefix)."""
    return stats["hw_" + name]


try:
    # --- the driver binds -----------------------------------------------------------------
    for n in c:
        r = n.run("modprobe tern_core", timeout=60)
        t.ok(r.rc == 0, "%s: modprobe tern_core" % n.name, r.stderr)
    for n in c:
        r = n.run("ls /sys/bus/pci/drivers/tern_core/ | grep -c '^0000:'")
        t.eq(r.stdout.strip(), "1", "%s: tern_core is bound to one PCI function" % n.name)
    devs = [n.configure_ip(0) for n in c]
    for n, dev in zip(c, devs):
        up = wait_for(lambda: carrier(n, dev) == 1, timeout=15)
        t.ok(up, "%s: %s has carrier after ip link set up" % (n.name, dev),
             n.run("ip -d link show dev %s" % dev).stdout)

    # --- ping both ways -------------------------------------------------------------------
    for a, b in ((n0, n1), (n1, n0)):
        r = a.run("ping -c 3 -W 5 %s" % b.ip(0), timeout=40)
        t.ok(r.rc == 0, "%s pings %s over tern" % (a.name, b.name), r.stdout, r.stderr)

    # --- the device clock as a PTP hardware clock (linuxptp's phc_ctl) ----------------------
    ptps = [check_phc(t, n, d, "") for n, d in zip(c, devs)]
    if ptps[0]:
        ptp = ptps[0]
        # a step forward and back (clock_adjtime ADJ_SETOFFSET): moved by what was asked
        r, got, _ = phc_ctl(n0, ptp, "get adj 100 get adj -100 get")
        steps = [b - a for a, b in zip(got, got[1:])]
        t.ok(r.rc == 0 and len(steps) == 2 and 100 <= steps[0] < 105 and
             -100 <= steps[1] < -95,
             "phc_ctl adj 100, adj -100: the PHC moved by %s s" %
             ", ".join("%.6f" % x for x in steps), r.stdout, r.stderr)
        # set (clock_settime): the PHC runs on from the time set
        r, got, _ = phc_ctl(n0, ptp, "set 1000000 get")
        t.ok(r.rc == 0 and len(got) == 1 and 1000000 <= got[0] < 1000005,
             "phc_ctl set 1000000: the PHC reads %.6f" % (got[0] if got else -1),
             r.stdout, r.stderr)
        # frequency (adjfine): +5 % gains ~50 ms a second on CLOCK_REALTIME over what the
        # unadjusted clock gains (cmp prints CLOCK_REALTIME - PHC); out of range (+20 %)
        # refused
        # "wait 1" lasts at least a second, longer on a loaded host: the gain is bounded
        # above by 5 % of the whole phc_ctl run as the guest's clock timed it
        r0, _, cmp0 = phc_ctl(n0, ptp, "freq 0 cmp wait 1 cmp")
        t0 = time.monotonic()
        r1, _, cmp1 = phc_ctl(n0, ptp, "freq 50000000 cmp wait 1 cmp freq 0")
        most = 0.05 * (time.monotonic() - t0) * 1e3 * 1.25 + 10
        gain = ((cmp0[1] - cmp0[0]) - (cmp1[1] - cmp1[0])) / 1e6 \
            if len(cmp0) == 2 and len(cmp1) == 2 else -1
        t.ok(r0.rc == 0 and r1.rc == 0 and 40 <= gain <= most,
             "phc_ctl freq 50000000 (+5 %%): the PHC gained %.1f ms more over a wait of a "
             "second (at most %.0f ms: 5 %% of the run's %.1f s)" % (
                 gain, most, (most - 10) / 1.25 / 50), r0.stdout, r1.stdout, r1.stderr)
        r, _, _ = phc_ctl(n0, ptp, "freq 200000000")
        t.ok(r.rc != 0 or "failed" in r.stdout + r.stderr,
             "phc_ctl freq 200000000 (+20 %, beyond max_adj) refused", r.stdout, r.stderr)
    if all(ptps):
        ptp_sync(devs)

    # --- the offloads are on --------------------------------------------------------------
    for n, d in zip(c, devs):
        r = n.run("ethtool -k %s" % d)
        on = {k: v for k, v in re.findall(r"^([\w-]+): (on|off)", r.stdout, re.M)}
        t.ok(all(on.get(k) == "on" for k in OFFLOADS),
             "%s: ethtool -k: %s on" % (n.name, ", ".join(OFFLOADS)), r.stdout, r.stderr)

    # --- 64 MiB over TCP with matching checksums ------------------------------------------
    es0 = [ethtool_stats(n, d) for n, d in zip(c, devs)]
    before = [link_stats(n, d) for n, d in zip(c, devs)]
    r = n1.run("mkdir -p /srv && dd if=/dev/urandom of=/srv/data bs=1M count=%d 2>/dev/null"
               " && sha256sum /srv/data" % DATA_MIB, timeout=180)
    sent_sum = r.stdout.split()[0] if r.rc == 0 else None
    t.ok(sent_sum, "node1: %d MiB of random data generated" % DATA_MIB, r.stderr)
    server = n1.spawn("exec httpd -f -p 8080 -h /srv")
    time.sleep(0.5)
    t0 = time.monotonic()
    r = n0.run("wget -q -O - http://%s:8080/data | sha256sum" % n1.ip(0), timeout=600)
    secs = time.monotonic() - t0
    got_sum = r.stdout.split()[0] if r.rc == 0 and r.stdout else None
    t.eq(got_sum, sent_sum, "node0 received %d MiB over TCP intact (%.1f s, %.1f MB/s)" % (
        DATA_MIB, secs, DATA_MIB * 1.048576 / max(secs, 1e-6)))
    server.kill()
    after = [link_stats(n, d) for n, d in zip(c, devs)]
    t.ok(after[1]["tx"]["bytes"] - before[1]["tx"]["bytes"] > DATA_MIB << 20,
         "node1's tx_bytes grew by more than %d MiB" % DATA_MIB,
         "before %r" % before[1]["tx"], "after %r" % after[1]["tx"])
    t.ok(after[0]["rx"]["bytes"] - before[0]["rx"]["bytes"] > DATA_MIB << 20,
         "node0's rx_bytes grew by more than %d MiB" % DATA_MIB)

    # --- TSO and checksum offload on the wire ---------------------------------------------
    es1 = [ethtool_stats(n, d) for n, d in zip(c, devs)]
    tso = hw(es1[1], "tx_tso_segments") - hw(es0[1], "tx_tso_segments")
    sent = hw(es1[1], "tx_frames") - hw(es0[1], "tx_frames")
    t.ok(tso > sent // 2, "node1's device cut the stream into TSO segments (%d of the %d frames"
         " it sent)" % (tso, sent))
    frames = tcp_frames(c.wires[0].pcap_path, n1.ip(0))
    data = [f for f in frames if f[1] > 0]
    sizes = collections.Counter(f[1] for f in data)
    mss = max(sizes) if sizes else 0
    t.ok(data and all(f[0] <= 1514 for f in frames) and mss <= 1460 and
         sizes.most_common(1)[0][0] == mss,
         "node1's TCP frames on the wire: %d with data, none beyond the MTU, the commonest "
         "payload the largest (%d bytes, the MSS)" % (len(data), mss),
         "payload sizes: %r" % sizes.most_common(5))
    t.ok(frames and all(f[2] and f[3] for f in frames),
         "every one of node1's %d TCP frames has right IPv4 and TCP checksums (our own sums)" %
         len(frames), "bad: %r" % [f for f in frames if not (f[2] and f[3])][:5])
    # receive coalescing (rx-gro-hw): node0's device handed the stream up in large segments.
    # How much of it depends on the host: the device merges frames that arrive within its
    # coalescing window, and an emulated sender on a loaded host spaces its frames out (on an
    # idle host over 90 % are merged, under the suite's load 29 % was seen). So: at least a
    # tenth of the frames were merged (with rx-gro-hw off, none are: checked below).
    segs = hw(es1[0], "rx_lro_segments") - hw(es0[0], "rx_lro_segments")
    merged = hw(es1[0], "rx_lro_frames") - hw(es0[0], "rx_lro_frames")
    t.ok(segs > 0 and merged >= len(data) // 10,
         "node0's device coalesced the stream (rx-gro-hw): %d of the %d data frames (%.0f %%) "
         "into %d segments" % (merged, len(data), 100.0 * merged / max(len(data), 1), segs))

    # --- counters agree: driver (ip -s) vs device (ethtool -S), and across the wire -------
    # Retry a few times: a frame can be in flight while the four snapshots are taken.
    for attempt in range(5):
        time.sleep(1)
        ip = [link_stats(n, d) for n, d in zip(c, devs)]
        es = [ethtool_stats(n, d) for n, d in zip(c, devs)]
        ip2 = [link_stats(n, d) for n, d in zip(c, devs)]
        if ip == ip2:
            break
    for i, n in enumerate(c):
        t.eq(ip[i]["tx"]["packets"], hw(es[i], "tx_frames"),
             "%s: ip -s TX packets equal the device's tx_frames" % n.name)
        t.eq(ip[i]["rx"]["packets"], hw(es[i], "rx_frames"),
             "%s: ip -s RX packets equal the device's rx_frames" % n.name)
    for a, b in ((0, 1), (1, 0)):
        offered = sum(hw(es[b], k) for k in RX_FATES)
        t.ok(offered == hw(es[a], "tx_frames"),
             "every frame node%d sent is accounted for at node%d" % (a, b),
             "node%d hw_tx_frames: %d" % (a, hw(es[a], "tx_frames")),
             "node%d fates: %s" % (b, {k: hw(es[b], k) for k in RX_FATES}))

    # --- a frame damaged on the wire: flagged, counted, dropped; TCP delivers intact ------
    fpath = "/sys/kernel/debug/tern/%s/wire_faults" % n1.run(
        "basename $(readlink -f /sys/class/net/%s/device)" % devs[1]).stdout.strip()
    r = n1.run("dd if=/dev/urandom of=/srv/small bs=1M count=%d 2>/dev/null && sha256sum "
               "/srv/small && cd %s && echo 1 > off && echo 7 > seed && echo 20000 > corrupt_ppm"
               % (CORRUPT_MIB, fpath), timeout=60)
    small_sum = r.stdout.split()[0] if r.rc == 0 else None
    bad0, csum0 = hw(ethtool_stats(n0, devs[0]), "rx_csum_bad"), snmp(n0, "Tcp", "InCsumErrors")
    server = n1.spawn("exec httpd -f -p 8081 -h /srv")
    time.sleep(0.5)
    r = n0.run("wget -q -O - http://%s:8081/small | sha256sum" % n1.ip(0), timeout=300)
    server.kill()
    corrupted = n1.run("echo 1 > %s/off; cat %s/corrupted" % (fpath, fpath)).stdout
    bad = hw(ethtool_stats(n0, devs[0]), "rx_csum_bad") - bad0
    csum = snmp(n0, "Tcp", "InCsumErrors") - csum0
    t.eq(r.stdout.split()[0] if r.rc == 0 and r.stdout else None, small_sum,
         "%d MiB over TCP intact with one frame in 50 damaged on the wire" % CORRUPT_MIB)
    t.ok(bad > 0 and csum > 0,
         "node0's device flagged %d damaged frames (hw_rx_csum_bad) and TCP dropped %d "
         "(InCsumErrors)" % (bad, csum), corrupted)

    # --- an offload turned off stays off -----------------------------------------------------
    def fetch_small(port):
        """node0 fetches node1's /srv/small over TCP (an HTTP server on @port): sha256sum."""
        server = n1.spawn("exec httpd -f -p %d -h /srv" % port)
        time.sleep(0.5)
        r = n0.run("wget -q -O - http://%s:%d/small | sha256sum" % (n1.ip(0), port),
                   timeout=300)
        server.kill()
        return r

    r = n1.run("ethtool -K %s tso off && ethtool -k %s | grep '^tcp-segmentation-offload:'" % (
        devs[1], devs[1]))
    t.ok(r.rc == 0 and ": off" in r.stdout, "ethtool -K tso off", r.stdout, r.stderr)
    tso0 = hw(ethtool_stats(n1, devs[1]), "tx_tso_segments")
    r = fetch_small(8082)
    t.ok(r.rc == 0 and r.stdout.split()[0] == small_sum and
         hw(ethtool_stats(n1, devs[1]), "tx_tso_segments") == tso0,
         "without TSO the data arrives intact and the device segments nothing", r.stderr)
    r = n1.run("ethtool -K %s tso on && ethtool -k %s | grep '^tcp-segmentation-offload:'" % (
        devs[1], devs[1]))
    t.ok(r.rc == 0 and ": on" in r.stdout, "ethtool -K tso on", r.stdout, r.stderr)
    r = n0.run("ethtool -K %s rx-gro-hw off && ethtool -k %s | grep '^rx-gro-hw:'" % (
        devs[0], devs[0]))
    t.ok(r.rc == 0 and ": off" in r.stdout, "ethtool -K rx-gro-hw off", r.stdout, r.stderr)
    lro0 = hw(ethtool_stats(n0, devs[0]), "rx_lro_frames")
    r = fetch_small(8083)
    t.ok(r.rc == 0 and r.stdout.split()[0] == small_sum and
         hw(ethtool_stats(n0, devs[0]), "rx_lro_frames") == lro0,
         "without rx-gro-hw the data arrives intact and the device coalesces nothing",
         r.stderr)
    r = n0.run("ethtool -K %s rx-gro-hw on && ethtool -k %s | grep '^rx-gro-hw:'" % (
        devs[0], devs[0]))
    t.ok(r.rc == 0 and ": on" in r.stdout, "ethtool -K rx-gro-hw on", r.stdout, r.stderr)

    # --- interrupt coalescing: ethtool -c/-C, kept, refused, fewer interrupts --------------
    for n, d in zip(c, devs):
        t.eq(coalesce(n, d), COAL_DEFAULT, "%s: ethtool -c shows the defaults" % n.name)
    r = n0.run("ethtool -C %s %s" % (devs[0], coal_args(COAL_SET)))
    t.ok(r.rc == 0 and coalesce(n0, devs[0]) == COAL_SET,
         "ethtool -C %s: read back by ethtool -c" % coal_args(COAL_SET), r.stderr)
    for bad in ("rx-usecs 4096", "tx-frames 4096", "rx-usecs 0 rx-frames 64",
                "adaptive-rx on"):
        r = n0.run("ethtool -C %s %s" % (devs[0], bad))
        t.ok(r.rc != 0 and coalesce(n0, devs[0]) == COAL_SET,
             "ethtool -C %s refused, nothing changed" % bad, r.stdout, r.stderr)
    bdf = n0.run("basename $(readlink -f /sys/class/net/%s/device)" % devs[0]).stdout.strip()
    r = n0.run("ip link set %s down && ip link set %s up" % (devs[0], devs[0]))
    wait_for(lambda: carrier(n0, devs[0]) == 1, timeout=15)
    t.eq(coalesce(n0, devs[0]), COAL_SET, "ethtool -C kept across ip link down/up")
    r = n0.run("devlink dev reload pci/%s" % bdf, timeout=120)
    wait_for(lambda: carrier(n0, devs[0]) == 1, timeout=15)
    t.ok(r.rc == 0 and coalesce(n0, devs[0]) == COAL_SET, "ethtool -C kept across devlink "
         "dev reload", r.stderr)
    check_phc(t, n0, devs[0], " after devlink dev reload")
    before = n0.dmesg().count("recovering: resetting the device")
    r = n0.run("devlink health test pci/%s reporter fw" % bdf)
    t.ok(r.rc == 0 and wait_for(
        lambda: n0.dmesg().count("recovering: resetting the device") > before and
        carrier(n0, devs[0]) == 1, timeout=60) and coalesce(n0, devs[0]) == COAL_SET,
        "ethtool -C kept across a device reset (devlink health test reporter fw)", r.stderr)
    # The same TCP transfer without moderation, with 200 us / 64 frames and with the longest
    # period the device takes, counting the interrupts of both devices' vectors. The guests'
    # NAPI already takes a few dozen frames per interrupt here (a TCG vCPU is slow to drain a
    # burst), so only a period near the gaps between TCP's bursts (milliseconds) takes the
    # count down: that is what is asserted (stock kernel); the 200 us count is printed.
    irqs = {}
    for mode in ({"rx-usecs": 0, "rx-frames": 1, "tx-usecs": 0, "tx-frames": 1},
                 {"rx-usecs": 200, "rx-frames": 64, "tx-usecs": 200, "tx-frames": 64},
                 {"rx-usecs": 4095, "rx-frames": 4095, "tx-usecs": 4095, "tx-frames": 4095}):
        for n, d in zip(c, devs):
            r = n.run("ethtool -C %s %s" % (d, coal_args(mode)))
            t.ok(r.rc == 0 and coalesce(n, d) == mode, "%s: ethtool -C %s" % (
                n.name, coal_args(mode)), r.stderr)
        i0 = [device_irqs(n, d) for n, d in zip(c, devs)]
        server = n1.spawn("exec httpd -f -p 8083 -h /srv")
        time.sleep(0.5)
        r = n0.run("wget -q -O - http://%s:8083/small | sha256sum" % n1.ip(0), timeout=300)
        server.kill()
        i1 = [device_irqs(n, d) for n, d in zip(c, devs)]
        irqs[mode["rx-usecs"]] = sum(i1) - sum(i0)
        t.eq(r.stdout.split()[0] if r.rc == 0 and r.stdout else None, small_sum,
             "%d MiB over TCP intact with rx/tx-usecs %d, rx/tx-frames %d: %d interrupts on the"
             " two devices (node0 %d, node1 %d)" % (
                 CORRUPT_MIB, mode["rx-usecs"], mode["rx-frames"], irqs[mode["rx-usecs"]],
                 i1[0] - i0[0], i1[1] - i0[1]))
    counts = "with 4095 us / 4095 frames %d, without moderation %d, with 200 us / 64 frames " \
        "%d" % (irqs[4095], irqs[0], irqs[200])
    if paths.flavour() == "debug":
        # The debug kernel's guests are slower still and move a quarter of the data: the
        # counts are closer (327 against 395, 233 against 301 in two runs) and only printed.
        t.diag("interrupts (debug kernel, not asserted): " + counts)
    else:
        t.ok(0 < irqs[4095] < irqs[0], "fewer interrupts with the longest period: " + counts)
    for n, d in zip(c, devs):
        r = n.run("ethtool -C %s %s" % (d, coal_args(COAL_DEFAULT)))
        t.ok(r.rc == 0 and coalesce(n, d) == COAL_DEFAULT, "%s: defaults set back" % n.name,
             r.stderr)

    # --- several queue pairs with RSS: ethtool -l/-L/-x/-X ---------------------------------
    for n, d in zip(c, devs):
        ch = channels(n, d)
        t.ok(ch and ch[0] >= RSS_QUEUES and ch[1] == 1, "%s: ethtool -l: up to %s combined "
             "channels, 1 in use (one vCPU)" % (n.name, ch and ch[0]),
             n.run("ethtool -l %s" % d).stdout)
    tbl = indir_table(n0, devs[0])
    t.ok(len(tbl) == 128 and set(tbl) == {0}, "ethtool -x: 128 entries, all queue 0",
         n0.run("ethtool -x %s" % devs[0]).stdout)
    for bad in ("combined %d" % (channels(n0, devs[0])[0] + 1), "combined 0", "rx 2"):
        r = n0.run("ethtool -L %s %s" % (devs[0], bad))
        t.ok(r.rc != 0 and channels(n0, devs[0])[1] == 1,
             "ethtool -L %s refused, nothing changed" % bad, r.stdout, r.stderr)
    for n, d in zip(c, devs):
        r = n.run("ethtool -L %s combined %d" % (d, RSS_QUEUES))
        t.ok(r.rc == 0 and channels(n, d)[1] == RSS_QUEUES,
             "%s: ethtool -L combined %d" % (n.name, RSS_QUEUES), r.stderr)
        wait_for(lambda: carrier(n, d) == 1, timeout=15)
    t.eq(indir_table(n0, devs[0]), [i % RSS_QUEUES for i in range(128)],
         "ethtool -x: the table spread evenly over the %d queues" % RSS_QUEUES)
    r = n1.run("dd if=/dev/urandom of=/srv/rss bs=1K count=%d 2>/dev/null && sha256sum /srv/rss"
               % RSS_KIB, timeout=60)
    rss_sum = r.stdout.split()[0] if r.rc == 0 else None
    server = n1.spawn("exec httpd -f -p 8084 -h /srv")
    time.sleep(0.5)

    def flows(what):
        """RSS_FLOWS parallel downloads to node0, each checked; the RX queues of node0 and
        the TX queues of node1 whose packet counters moved."""
        rx0, tx0 = queue_packets(n0, devs[0], "rx"), queue_packets(n1, devs[1], "tx")
        r = n0.run("for i in $(seq %d); do (wget -q -O - http://%s:8084/rss | sha256sum) & "
                   "done; wait" % (RSS_FLOWS, n1.ip(0)), timeout=300)
        sums = [l.split()[0] for l in r.stdout.splitlines() if l.strip()]
        t.ok(r.rc == 0 and len(sums) == RSS_FLOWS and set(sums) == {rss_sum},
             "%s: %d TCP flows of %d KiB in parallel, each intact" % (what, RSS_FLOWS,
                                                                     RSS_KIB), r.stdout)
        return (moved(rx0, queue_packets(n0, devs[0], "rx")),
                moved(tx0, queue_packets(n1, devs[1], "tx")))

    rxq, txq = flows("%d queue pairs" % RSS_QUEUES)
    t.ok(len(rxq) > 1, "node0's device spread the flows over RX queues %s (rx<N>_packets)" %
         rxq, ethtool_stats(n0, devs[0]))
    t.ok(len(txq) > 1, "node1 sent them from TX queues %s (tx<N>_packets)" % txq)
    r = n0.run("ethtool -X %s equal 1" % devs[0])
    t.ok(r.rc == 0 and set(indir_table(n0, devs[0])) == {0}, "ethtool -X equal 1", r.stderr)
    rxq, _ = flows("-X equal 1")
    t.eq(rxq, [0], "with -X equal 1 only RX queue 0 received")
    r = n0.run("ethtool -X %s equal %d && ethtool -L %s combined 2" % (
        devs[0], RSS_QUEUES, devs[0]))
    t.ok(r.rc != 0 and channels(n0, devs[0])[1] == RSS_QUEUES,
         "ethtool -L combined 2 refused while the table set by -X names queues 2 and 3",
         r.stdout, r.stderr)
    r = n0.run("ethtool -X %s default && ethtool -L %s combined 1" % (devs[0], devs[0]))
    t.ok(r.rc == 0 and channels(n0, devs[0])[1] == 1 and set(indir_table(n0, devs[0])) == {0},
         "ethtool -X default, then -L combined 1", r.stderr)
    wait_for(lambda: carrier(n0, devs[0]) == 1, timeout=15)
    rxq, _ = flows("-L 1")
    t.eq(rxq, [0], "with one queue pair RX queue 0 received everything")
    r = n0.run("ethtool -L %s combined %d" % (devs[0], RSS_QUEUES))
    wait_for(lambda: carrier(n0, devs[0]) == 1, timeout=15)
    r = n0.run("ip link set %s down && ip link set %s up" % (devs[0], devs[0]))
    wait_for(lambda: carrier(n0, devs[0]) == 1, timeout=15)
    t.ok(channels(n0, devs[0])[1] == RSS_QUEUES and
         indir_table(n0, devs[0]) == [i % RSS_QUEUES for i in range(128)],
         "-L combined %d again, kept across ip link down/up with its table" % RSS_QUEUES)
    key = re.search(r"RSS hash key:\s*(\S+)", n0.run("ethtool -x %s" % devs[0]).stdout)
    r = n0.run("devlink dev reload pci/%s" % bdf, timeout=120)
    wait_for(lambda: carrier(n0, devs[0]) == 1, timeout=15)
    key2 = re.search(r"RSS hash key:\s*(\S+)", n0.run("ethtool -x %s" % devs[0]).stdout)
    t.ok(r.rc == 0 and channels(n0, devs[0])[1] == RSS_QUEUES and key and key2 and
         key.group(1) == key2.group(1), "channels and RSS key kept across devlink dev reload",
         r.stderr)
    rxq, _ = flows("after devlink reload")
    t.ok(len(rxq) > 1, "the flows spread again, over RX queues %s" % rxq)
    server.kill()

    # --- jumbo frames ---------------------------------------------------------------------
    for n, d in zip(c, devs):
        r = n.run("ip link set dev %s mtu 9000" % d)
        t.ok(r.rc == 0, "%s: MTU 9000 accepted" % n.name, r.stderr)
    r = n0.run("ip link set dev %s mtu 9601" % devs[0])
    t.ok(r.rc != 0, "MTU above the device's maximum (9600) is refused", r.stdout)
    r = n0.run("ping -c 3 -W 5 -M do -s 8972 %s" % n1.ip(0), timeout=40)
    t.ok(r.rc == 0, "9000-byte frames cross unfragmented", r.stdout, r.stderr)

    # --- devlink ---------------------------------------------------------------------------
    r = n0.run("devlink dev info", check=False)
    fw = model_fw_version()
    t.ok(r.rc == 0 and re.search(r"\bdriver tern_core\b", r.stdout),
         "devlink dev info names the driver", r.stdout, r.stderr)
    t.ok(re.search(r"\bfw %s\b" % re.escape(fw), r.stdout),
         "devlink dev info shows the model's firmware version %s" % fw, r.stdout)
    t.ok(re.search(r"serial_number \S+", r.stdout), "devlink dev info shows a serial number",
         r.stdout)

    # --- carrier follows the wire ----------------------------------------------------------
    n1.set_link(0, False)
    t.ok(wait_for(lambda: carrier(n1, devs[1]) == 0, timeout=10),
         "node1 loses carrier when its cable is pulled")
    n1.set_link(0, True)
    t.ok(wait_for(lambda: carrier(n1, devs[1]) == 1, timeout=10),
         "node1 regains carrier when the cable is back")
    r = n1.run("ping -c 2 -W 5 %s" % n0.ip(0), timeout=30)
    t.ok(r.rc == 0, "traffic flows again after the link comes back", r.stdout)

    # --- firmware commands that fail or never complete -------------------------------------
    r = n0.run("ls -d /sys/kernel/debug/tern/*/cmd_test")
    t.ok(r.rc == 0, "debugfs has the command test files", r.stderr)
    CMD_TEST = r.stdout.strip()
    r = n0.run("echo 1 > %s/nop" % CMD_TEST)
    t.ok(r.rc == 0, "a NOP command succeeds", r.stderr)
    r = n0.run("echo 3 > %s/fail_status && echo 1 > %s/fail" % (CMD_TEST, CMD_TEST))
    t.ok(r.rc != 0 and "Invalid argument" in r.stderr,
         "a command the firmware rejects (BAD_PARAM) returns EINVAL", r.stderr)
    t0 = time.monotonic()
    r = n0.run("echo 1 > %s/drop" % CMD_TEST, timeout=60)
    secs = time.monotonic() - t0
    t.ok(r.rc != 0 and "timed out" in r.stderr.lower(),
         "a command that never completes returns ETIMEDOUT (after %.1f s)" % secs, r.stderr)
    dm = n0.dmesg()
    t.ok(re.search(r"tern_core .*(timed out|timeout)", dm, re.I),
         "the timeout is reported in the kernel log")
    t.ok(re.search(r"tern_core .*NOP.* timed out after %d ms" % CMD_TIMEOUT_MS, dm),
         "the driver waited the %d ms the device states (TERN_REG_CMD_TIMEOUT)" %
         CMD_TIMEOUT_MS, "\n".join(dm.splitlines()[-10:]))
    r = n0.run("devlink health show")
    t.ok(re.search(r"reporter fw\b", r.stdout) and
         re.search(r"error (\d+)", r.stdout) and
         int(re.search(r"error (\d+)", r.stdout).group(1)) >= 1,
         "devlink health reporter 'fw' counted the timeout", r.stdout, r.stderr)
    r = n0.run("devlink health diagnose $(devlink dev | head -1) reporter fw")
    t.ok(re.search(r"command_timeout_ms:? %d\b" % CMD_TIMEOUT_MS, r.stdout),
         "devlink health diagnose ... reporter fw: command_timeout_ms %d" % CMD_TIMEOUT_MS,
         r.stdout, r.stderr)
    r = n0.run("echo 1 > %s/nop && ping -c 2 -W 5 %s" % (CMD_TEST, n1.ip(0)), timeout=30)
    t.ok(r.rc == 0, "the device still works after the lost command", r.stdout, r.stderr)

    # --- unload and reload -------------------------------------------------------------------
    for n in c:
        r = n.run("rmmod tern_core", timeout=60)
        t.ok(r.rc == 0, "%s: rmmod tern_core" % n.name, r.stderr)
    r = n0.run("[ ! -e /sys/bus/pci/drivers/tern_core ] && [ ! -e /sys/kernel/debug/tern ] &&"
               " ! grep -q tern /proc/interrupts && [ -z \"$(devlink dev)\" ]")
    t.ok(r.rc == 0, "after rmmod: no driver, no debugfs, no IRQs, no devlink instance",
         n0.run("ls /sys/bus/pci/drivers/; ls /sys/kernel/debug; cat /proc/interrupts;"
                " devlink dev").stdout)
    r = n0.run("cat /sys/class/ptp/*/clock_name 2>/dev/null | grep -c tern")
    t.eq(r.stdout.strip(), "0", "after rmmod: no tern PTP clock left")
    for n in c:
        n.forget_ifaces()
        r = n.run("modprobe tern_core", timeout=60)
        t.ok(r.rc == 0, "%s: second modprobe tern_core" % n.name, r.stderr)
    devs = [n.configure_ip(0) for n in c]
    for n, dev in zip(c, devs):
        wait_for(lambda: carrier(n, dev) == 1, timeout=15)
    r = n0.run("ping -c 3 -W 5 %s" % n1.ip(0), timeout=40)
    t.ok(r.rc == 0, "ping works after reload", r.stdout, r.stderr)
    check_phc(t, n0, devs[0], " after module reload")

    # --- the kernel never complained --------------------------------------------------------
    check_kernel_clean(t, c)
except HarnessError as e:
    t.ok(False, "harness error", str(e))
finally:
    c.close()
    t.diag("logs and pcap: %s" % c.result_dir)
t.exit()
