#!/usr/bin/python3
"""The kernel's storage stack over RDMA between two guests: NVMe over Fabrics (nvmet and
nvmet-rdma on node1, nvme-rdma with Debian's nvme-cli on node0), NFS over RDMA (nfsd
listening on RDMA port 20049 on node1, an NFSv4 mount with -o rdma,port=20049 on node0),
iSER (LIO's iSCSI target with ib_isert on node1, open-iscsi with ib_iser on node0) and SMB
Direct (ksmbd on node1, the cifs client's mount -o rdma on node0).
These are kernel ULPs: their QPs, CQs and MRs are the driver's kernel verbs, and both hosts
(nvme-rdma, xprtrdma) register memory with fast registration (IB_WR_REG_MR, LOCAL_INV,
SEND_WITH_INV).

- NVMe-oF: a subsystem with two namespaces (null_blk, and brd's /dev/ram0 whose bytes are
  read back on the target) behind an RDMA port on node1's address, trsvcid 4420, set up
  through configfs; nvme discover and nvme connect on node0; fio with crc32c verification
  (4 KiB random and 128 KiB sequential writes, every block read back and checked, direct
  I/O); a pattern written through NVMe-oF is found byte for byte in /dev/ram0 on the target
  and one written there is read back through NVMe-oF; nvme disconnect leaves no QP and no
  rdma_cm ID behind on either side. Then the RDMA device goes away and comes back under live
  controllers, on each side in turn: on the target (the host reconnects by itself once the
  port listens again) and on the host (nvme-rdma deletes its controller; nvme connect
  again); the data written before is still there and fio verifies again.
- tern on both sides: fio again while tern's wire fault injector drops and reorders 1 % of
  the frames each way; the data verifies and the injectors did drop and reorder.
- NFS over RDMA: nfsd exports a tmpfs directory; "rdma 20049" is added to
  /proc/fs/nfsd/portlist; node0 mounts it over RDMA (proto=rdma in /proc/mounts, "xprt:
  rdma" in mountstats, an RC QP while mounted), writes files (buffered and O_DIRECT) whose
  SHA-256 must match on the server, reads them back after dropping its caches, reads a file
  the server wrote, unmounts; nothing is left behind once the server stops.
- iSER: LIO on node1 configured through configfs (no targetcli): a memory-backed null_blk
  (made through null_blk's configfs) as an iblock backstore, LUN 0 of an iSCSI target whose
  portal on node1's address has iSER enabled (ib_isert), an ACL for node0's initiator name.
  open-iscsi on node0 (iscsid, iscsiadm on its built-in "iser" interface, ib_iser): login
  (iscsiadm -m session shows transport iser, an RC QP to port 3260); 64 MiB of random bytes
  written to the SCSI disk with O_DIRECT, whose SHA-256 must match read back on node0 and on
  node1's backing device, while the RDMA devices' counters move at least that much (tern:
  tx/rx_roce_bytes; Soft-RoCE: packets); fio with crc32c verification; a logout while a
  reader of the disk runs (the reader ends, nothing hangs, no QP or rdma_cm ID is left but
  the listeners), a login again, the 64 MiB read back intact, fio again, a final logout.
  The debug kernel (scripts/kernel/debug.config) has no LIO target (TARGET_CORE): the part
  skips there with that reason.
- SMB Direct: Debian's kernel builds cifs.ko and ksmbd.ko without it; the storage image has
  them rebuilt with it (scripts/build-smbdirect.sh, under /lib/modules/$KVER/updates).
  ksmbd on node1 shares a tmpfs with a user (ksmbd.addshare, ksmbd.adduser, ksmbd.mountd)
  and listens for SMB Direct on port 445; node0 mounts it with mount -t cifs -o
  rdma,vers=3.1.1 (rdma in /proc/mounts, the SMBDirect section in /proc/fs/cifs/DebugData,
  an RC QP); a file written with cp + sync has the same SHA-256 on the server, it and a
  file the server wrote read back intact after dropping caches; the RDMA devices' counters
  moved at least as many bytes as the write and the reads (not a silent fallback to TCP);
  after umount no QP and no rdma_cm ID is left but ksmbd's listener. Without the rebuilt
  modules (or on the debug kernel, which has neither CIFS nor SMB_SERVER) the part skips
  with the reason.
- Selective repeat is offered on every tern NIC (devlink roce_selective_repeat) from the
  start: kernel ULPs exchange no ECE, so each RC QP of the NVMe-oF connection (on tern's
  side of an interop pair too) must show drv_transport go-back-n in rdma res show qp -dd.
- The kernel log stays clean (check_kernel_clean: KASAN, lockdep, kmemleak on the debug
  kernel; hung tasks).

TERN_STORAGE_PARTS=nvme,nfs,iser,smb selects the parts to run (all four by default), e.g.
TERN_STORAGE_PARTS=iser scripts/test.sh tests/guest/storage.t; the others skip as "not
selected".

Each part's wall time is printed (t.diag), and the sizes are small (far smaller on the debug
kernel): the suite's budget is tight.

TERN_RDMA_TARGET=tern|rxe as in cm.t: tern (tern_ib's tern0 on the tern NIC) or Soft-RoCE
(rdma_rxe's rxe0 on the virtio-net NIC of the same guests, the reference). HOST+TARGET mixes
them on one segment (node0's kind first, as rdmatest.Target labels it): rxe+tern is a
Soft-RoCE NVMe host and NFS client against a tern target and server (tests/interop/storage.t).

Fast registration: nvme-rdma and xprtrdma (the host and the client) register memory with
it, and nvmet-rdma answers a host that asked for remote invalidation with SEND_WITH_INV:
both are memory management extensions (IB_DEVICE_MEM_MGT_EXTENSIONS, "MEM_MGT_EXTENSIONS" in
ibv_devinfo -v). svcrdma does without them (plain SENDs). So NVMe-oF needs them on both
sides and NFS on the client's; a part whose devices do not advertise them skips with that
reason. tern and Soft-RoCE advertise them, so everything runs over both and across them;
advertised, any failure of the RDMA path fails. TERN_STORAGE_FORCE=1 runs every part anyway (to see what
fails while fast registration is being written). Missing tools or modules in the guest image
(scripts/guest/storage-files.txt) skip the part that needs them.
"""

import json
import os
import re
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(TOP, "tests", "lib"), os.path.join(TOP, "scripts"),
                os.path.join(TOP, "tests", "rdma")]

from tap import Tap  # noqa: E402
from harness import Cluster, HarnessError, Wire  # noqa: E402
from ternlib import check_kernel_clean, wait_for  # noqa: E402
import rdmatest as rt  # noqa: E402

KIND = os.environ.get("TERN_RDMA_TARGET", "tern")
KINDS = KIND.split("+") if "+" in KIND else [KIND, KIND]   # node0 (host), node1 (target)
NIC = {"tern": "tern", "rxe": "virtio"}
ALL_PARTS = ("nvme", "nfs", "iser", "smb")
DEFAULT_PARTS = ALL_PARTS
PARTS = [p for p in os.environ.get("TERN_STORAGE_PARTS", ",".join(DEFAULT_PARTS)).split(",")
         if p]
NOT_SELECTED = "not selected (TERN_STORAGE_PARTS=%s)" % ",".join(PARTS)

t = Tap()
if any(p not in ALL_PARTS for p in PARTS):
    t.abort("TERN_STORAGE_PARTS: a comma-separated list of %s, not %r" % (
        ", ".join(ALL_PARTS), ",".join(PARTS)))
if len(KINDS) != 2 or any(k not in NIC for k in KINDS):
    t.abort("TERN_RDMA_TARGET must be tern, rxe or HOST+TARGET of them, not %r" % KIND)
MIXED = KINDS[0] != KINDS[1]
T0 = time.monotonic()
# one kind: tern's NIC on wire 0 and virtio-net (for rxe) on wire 1, as in cm.t; mixed: one
# segment with each guest's NIC for its kind, as in tests/interop/rxe.t
c = Cluster(nodes=2, wires=[Wire([NIC[k] for k in KINDS])] if MIXED else [Wire("tern"),
                                                                              "virtio"],
            initrd_image="storage", name="storage" + ("" if KIND == "tern" else "-" + KIND))
try:
    c.boot()
except HarnessError as e:
    t.abort("cluster did not boot: %s" % e)

DEBUG = c.flavour == "debug"
MIB = 1 << 20
# --- how much moves: the debug kernel runs guest code 3-5x slower, and Soft-RoCE moves a few
# MB/s under TCG (a fraction of that on the debug kernel, where its transport runs in KASAN'd
# softirqs: with 8 MiB of 128 KiB writes 4 deep on a loaded host, one such run starved the
# target's RCU kthread for 23 s and the kernel gate failed on the stall). The debug kernel is
# there for KASAN, lockdep and kmemleak on the ULPs' paths, which a few MiB at depth 2 cover.
# brd's /dev/ram0, namespace 2: regions for fio's sequential and random jobs and the patterns
RAM_MIB = 16 if DEBUG else 64
SEQ_MIB = 4 if DEBUG else 32          # 128 KiB sequential writes, then verified
RAND_MIB = 1 if DEBUG else 8          # 4 KiB random writes, then verified
AGAIN_KIB = 256 if DEBUG else 2048    # 4 KiB random again after each device reload
DEPTH = 2 if DEBUG else 8             # fio's iodepth (the sequential job: half of it)
FAULT_KIB = 256 if DEBUG else 2048    # 4 KiB random through wire faults (tern only)
PAT_MIB = 1 if DEBUG else 2           # host -> target pattern (and target -> host: 1 MiB)
SEQ_OFF, RAND_OFF = 0, SEQ_MIB
AGAIN_OFF = RAND_OFF + RAND_MIB
FAULT_OFF = AGAIN_OFF + (AGAIN_KIB + 1023) // 1024
FAULTS = dict(drop_ppm=10000, reorder_ppm=10000)   # 1 % of frames each way (wire.t)
PAT_OFF = RAM_MIB - PAT_MIB - 1       # MiB; the target's pattern in the last MiB
BACK_OFF = RAM_MIB - 1
NFS_MIB = 1 if DEBUG else 8           # per file
TIMEOUT = 900 if DEBUG else 300       # bound of one I/O step (fio, a copy)
# bounds of the other steps: a loaded host (the other half's guests beside the debug half)
# makes a debug guest take seconds for a sysfs read and minutes for a modprobe
QUICK = 120 if DEBUG else 60          # a look (sysfs, rdma res, dmesg)
STEP = 400 if DEBUG else 120          # a setup step, nvme connect, a mount
WAIT = 90 if DEBUG else 30            # for the kernel to get somewhere (listening, torn down)

NQN = "nqn.2026-12.io.tern:storage-test"
NVME_PORT = 4420
NFS_PORT = 20049
CFS = "/sys/kernel/config/nvmet"

host, tgt = c[0], c[1]                # NVMe host / NFS client; NVMe target / NFS server
target = rt.Target(c, KINDS, 0 if MIXED or KIND == "tern" else 1)
dev = target.ibdev or "/".join(target.ibdev_of(n) for n in c)
times = []                            # (part, seconds) for the summary


class Part:
    """Times a part of the test and prints its wall time."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.t0 = time.monotonic()
        return self

    def __exit__(self, *exc):
        secs = time.monotonic() - self.t0
        times.append((self.name, secs))
        t.diag("time: %s: %.1f s (%s kernel, %s)" % (self.name, secs, c.flavour, KIND))


def sh(node, script, timeout=STEP):
    """Run a shell script (``set -e``) on ``node``; returns the Result."""
    return node.run("set -e\n" + script, timeout=timeout)


def out(r):
    """A Result's output for diagnostics."""
    return "rc %s, %.1f s: %s\n%s%s" % (r.rc, r.duration, r.cmd[-400:], r.stdout[-3000:],
                                       ("\nstderr: " + r.stderr[-2000:]) if r.stderr.strip()
                                       else "")


def missing(node, commands, modules):
    """What of ``commands`` and ``modules`` the guest image lacks (a list of names)."""
    script = "".join("command -v %s >/dev/null || echo %s\n" % (x, x) for x in commands)
    # modules.dep and modules.builtin (names with "_" for "-"), not modinfo: busybox's
    # exits 0 for a module it does not know
    script += "d=/lib/modules/$(uname -r)\n"
    script += "".join("sed 's/-/_/g' $d/modules.dep $d/modules.builtin 2>/dev/null | "
                      "grep -q '/%s\\.ko' || echo %s.ko\n" % (m.replace("-", "_"), m)
                      for m in modules)
    return node.run(script, timeout=QUICK).stdout.split()


def has_frwr(node):
    """Whether ``node``'s RDMA device advertises fast registration (memory management
    extensions: IB_DEVICE_MEM_MGT_EXTENSIONS, which nvme-rdma and xprtrdma require)."""
    r = node.run("ibv_devinfo -v -d %s" % target.ibdev_of(node), timeout=QUICK)
    return r.rc == 0 and re.search(r"^\s+MEM_MGT_EXTENSIONS\s*$", r.stdout, re.M), r


# --- RDMA resources: what the ULPs leave behind ------------------------------------------

def rc_qps(node):
    """The RC QPs on ``node`` (lines of ``rdma res show qp``): kernel ULPs' connections."""
    r = node.run("rdma res show qp", timeout=QUICK)
    return [ln.strip() for ln in r.stdout.splitlines() if re.search(r"\btype RC\b", ln)]


def cm_ids(node, comm=None):
    """rdma_cm IDs on ``node`` (lines of ``rdma res show cm_id``), of ``comm`` if given."""
    r = node.run("rdma res show cm_id", timeout=QUICK)
    return [ln.strip() for ln in r.stdout.splitlines() if ln.strip() and
            (comm is None or "comm [%s]" % comm in ln)]


def nothing_left(node, what, allowed=()):
    """One TAP line: no RC QP and no rdma_cm ID other than the ``allowed`` regexes (the
    listeners still wanted) on ``node`` within 30 s (a target tears down asynchronously)."""
    def left():
        ids = [ln for ln in cm_ids(node) if not any(re.search(a, ln) for a in allowed)]
        return rc_qps(node) + ids
    gone = wait_for(lambda: not left(), timeout=WAIT, interval=1)
    return t.ok(gone, "%s: %s: no RC QP and no rdma_cm ID left (rdma res show qp, cm_id)" %
                (node.name, what), *left())


# the target's listeners, which stay: nvmet-rdma's port, svcrdma's while nfsd runs
LISTENERS = [r"LISTEN.*comm \[nvmet_rdma\]", r"LISTEN.*comm \[rpcrdma\]"]


def listening(node, comm, port):
    return [ln for ln in cm_ids(node, comm) if "state LISTEN" in ln and
            re.search(r"src-addr \S*:%d\b" % port, ln)]


# --- NVMe-oF ---------------------------------------------------------------------------------

def target_setup():
    """nvmet on node1: a null_blk and a brd namespace, an RDMA port on its address."""
    s = "%s/subsystems/%s" % (CFS, NQN)
    return sh(tgt, """
modprobe nvmet_rdma
modprobe null_blk nr_devices=1 gb=1
modprobe brd rd_nr=1 rd_size=%(kib)d max_part=0
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs configfs /sys/kernel/config
mkdir %(s)s
echo 1 > %(s)s/attr_allow_any_host
mkdir %(s)s/namespaces/1
echo -n /dev/nullb0 > %(s)s/namespaces/1/device_path
echo 1 > %(s)s/namespaces/1/enable
mkdir %(s)s/namespaces/2
echo -n /dev/ram0 > %(s)s/namespaces/2/device_path
echo 1 > %(s)s/namespaces/2/enable
mkdir %(cfs)s/ports/1
echo rdma > %(cfs)s/ports/1/addr_trtype
echo ipv4 > %(cfs)s/ports/1/addr_adrfam
echo %(addr)s > %(cfs)s/ports/1/addr_traddr
echo %(port)d > %(cfs)s/ports/1/addr_trsvcid
ln -s %(s)s %(cfs)s/ports/1/subsystems/%(nqn)s
""" % dict(kib=RAM_MIB * 1024, s=s, cfs=CFS, addr=target.ip(tgt), port=NVME_PORT, nqn=NQN))


def port_reenable():
    """Disable and enable nvmet's port 1 (the subsystem's link in it): what an admin does
    to make nvmet-rdma listen again."""
    return sh(tgt, "rm %(cfs)s/ports/1/subsystems/%(nqn)s\n"
              "ln -s %(cfs)s/subsystems/%(nqn)s %(cfs)s/ports/1/subsystems/%(nqn)s" %
              dict(cfs=CFS, nqn=NQN))


# Debug kernel: nvme_core without native multipath. With it, Linux 6.1.192's nvme_core makes
# lockdep report a possible deadlock when nvme-cli closes a namespace head whose controller was
# just deleted (nvme disconnect): blkdev_put holds the disk's open_mutex while
# nvme_free_ns_head -> nvme_mpath_remove_disk flushes partition_scan_work, which takes that
# mutex (seen on the first run over Soft-RoCE). Not RDMA's, and lockdep turns itself off after
# its first report, which would blind it to the rest of the test. The stock kernel keeps
# Debian's default (multipath on).
NVME_CORE = "modprobe nvme_core multipath=N\n" if DEBUG else ""
CONNECT = "nvme connect -t rdma -n %s -a %%s -s %d --reconnect-delay=2" % (NQN, NVME_PORT)


def controllers():
    """node0's NVMe controllers of our subsystem: {name: {"transport", "state", "address"}}."""
    r = host.run("for c in /sys/class/nvme/nvme*; do [ -e $c/subsysnqn ] || continue; "
                 "echo \"${c##*/}|$(cat $c/subsysnqn)|$(cat $c/transport)|$(cat $c/state)|"
                 "$(cat $c/address)\"; done", timeout=QUICK)
    ctrls = {}
    for ln in r.stdout.splitlines():
        f = ln.split("|")
        if len(f) == 5 and f[1] == NQN:
            ctrls[f[0]] = {"transport": f[2], "state": f[3], "address": f[4]}
    return ctrls


def namespaces():
    """node0's block devices of our subsystem: {nsid: (name, bytes)}."""
    # not the per-path disks multipath hides (nvme0c0n2: no /dev node), only what users open
    r = host.run("for d in /sys/block/nvme*; do [ -e $d/device/subsysnqn ] || continue; "
                 "[ \"$(cat $d/hidden 2>/dev/null)\" = 1 ] && continue; "
                 "echo \"${d##*/}|$(cat $d/nsid)|$(cat $d/size)|$(cat $d/device/subsysnqn)\"; "
                 "done", timeout=QUICK)
    ns = {}
    for ln in r.stdout.splitlines():
        f = ln.split("|")
        if len(f) == 4 and f[3] == NQN and f[1].isdigit() and f[2].isdigit():
            ns[int(f[1])] = (f[0], int(f[2]) * 512)
    return ns


def connect(what):
    """nvme connect, then wait for both namespaces; TAP line. Returns the /dev path of
    namespace 2 (brd) or None."""
    r = host.run(CONNECT % target.ip(tgt), timeout=STEP)
    ns = {}
    if r.rc == 0:
        ns = wait_for(lambda: (lambda n: len(n) >= 2 and n)(namespaces()), timeout=2 * WAIT,
                      interval=1) or namespaces()
    ctrls = controllers()
    good = r.rc == 0 and len(ctrls) == 1 and ns and 1 in ns and 2 in ns and \
        ns[2][1] == RAM_MIB * MIB and all(v["transport"] == "rdma" for v in ctrls.values())
    t.ok(good, "node0: %s: nvme connect -t rdma -a %s -s %d: %s, namespaces %s (%.1f s)" % (
        what, target.ip(tgt), NVME_PORT,
        ", ".join("%s %s %s" % (k, v["transport"], v["state"]) for k, v in ctrls.items()) or
        "no controller",
        ", ".join("%d: %s %d MiB" % (k, v[0], v[1] // MIB) for k, v in sorted(ns.items()))
        if ns else "none", r.duration), out(r), "dmesg:\n" + dmesg_tail(host))
    return "/dev/%s" % ns[2][0] if good else None


def dmesg_tail(node, n=15):
    return node.run("dmesg | tail -n %d" % n, timeout=QUICK).stdout


def fio(devpath, name, rw, bs, off_mib, kib, iodepth):
    """fio with crc32c verification of every block it wrote; one TAP line."""
    cmd = ("fio --name=%s --filename=%s --direct=1 --ioengine=libaio --iodepth=%d --rw=%s "
           "--bs=%s --offset=%dM --size=%dk --verify=crc32c --do_verify=1 --verify_fatal=1 "
           "--output-format=json" % (name, devpath, iodepth, rw, bs, off_mib, kib))
    r = host.run(cmd, timeout=TIMEOUT + 60)
    job, err = None, ""
    try:
        job = json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]
    except (ValueError, KeyError, IndexError) as e:
        err = "fio's JSON: %s" % e
    want = kib * 1024
    wrote = job["write"]["io_bytes"] if job else 0
    read = job["read"]["io_bytes"] if job else 0
    good = r.rc == 0 and job is not None and job["error"] == 0 and wrote == want and \
        read == want
    t.ok(good, "fio %s (%s, bs %s, iodepth %d, direct) %d KiB at %d MiB on %s, crc32c verify: "
         "%d KiB written, %d KiB read back and verified, error %s (%.1f s, %.2f MB/s)" % (
             name, rw, bs, iodepth, kib, off_mib, devpath, wrote // 1024, read // 1024,
             job["error"] if job else "?", r.duration, 2 * want / 1e6 / max(r.duration, 0.1)),
         out(r), err)
    return good


def under_faults(ram):
    """tern on both sides: the wire drops and reorders 1 % of the frames each way (tern's
    fault injector, as in wire.t) while fio writes and verifies: the RC transport's
    retransmissions keep NVMe-oF's data intact; the injectors dropped frames."""
    nd = target.netdev
    for n in c:
        faults = dict(FAULTS, seed=n.index + 31)
        r = rt.set_wire_faults(n, nd[n.index], **faults)
        t.ok(r.rc == 0, "%s: wire_faults %s" % (n.name, rt.wire_faults_str(faults)), out(r))
    try:
        fio(ram, "faults4k", "randwrite", "4k", FAULT_OFF, FAULT_KIB, DEPTH)
        inj = {n.index: rt.read_wire_faults(n, nd[n.index]) for n in c}
    finally:
        for n in c:
            rt.set_wire_faults(n, nd[n.index])
    t.ok(all(inj[i].get("dropped", 0) > 0 and inj[i].get("reordered", 0) > 0 for i in inj),
         "the injectors dropped and reordered frames on both guests during that fio (%s)" %
         ", ".join("%s: %d dropped, %d reordered of %d" % (
             c[i].name, inj[i].get("dropped", 0), inj[i].get("reordered", 0),
             inj[i].get("frames", 0)) for i in sorted(inj)))


def make_pattern(node, path, mib):
    """Random bytes in a file on ``node``; returns their SHA-256."""
    r = sh(node, "dd if=/dev/urandom of=%s bs=1M count=%d 2>/dev/null\nsha256sum %s" % (
        path, mib, path), timeout=STEP)
    return r.stdout.split()[0] if r.rc == 0 and r.stdout.strip() else None


def sha_of(node, devpath, off_mib, mib):
    """SHA-256 of ``mib`` MiB at ``off_mib`` of a block device, read with O_DIRECT (no page
    cache: what the device holds now)."""
    r = sh(node, "dd if=%s bs=1M skip=%d count=%d iflag=direct 2>/dev/null | sha256sum" % (
        devpath, off_mib, mib), timeout=TIMEOUT)
    return (r.stdout.split()[0] if r.rc == 0 and r.stdout.strip() else None), r


def check_pattern(devpath, sha, what):
    """The host's pattern at PAT_OFF, read through NVMe-oF; TAP line."""
    got, r = sha_of(host, devpath, PAT_OFF, PAT_MIB)
    t.ok(got == sha, "node0: %s: the %d MiB pattern reads back intact through NVMe-oF "
         "(sha256 %s)" % (what, PAT_MIB, (got or "?")[:16]), out(r), "want %s" % sha)


def disconnect(what):
    r = host.run("nvme disconnect -n %s" % NQN, timeout=STEP)
    gone = wait_for(lambda: not controllers(), timeout=WAIT, interval=1)
    return t.ok(r.rc == 0 and "disconnected 1 controller" in r.stdout and gone,
                "node0: %s: nvme disconnect -n %s: %s (%.1f s)" % (
                    what, NQN, r.stdout.strip() or r.stderr.strip(), r.duration), out(r),
                "controllers left: %r" % controllers())


def sr_offer():
    """devlink roce_selective_repeat on each tern NIC: the QPs user space creates offer
    selective repeat through ECE. Kernel ULPs exchange none, so theirs stay go-back-N."""
    for n in c:
        if target.kind_of(n) == "tern":
            r = n.run("devlink dev param set pci/$(basename $(readlink -f /sys/class/net/%s/"
                      "device)) name roce_selective_repeat value true cmode runtime" %
                      target.netdev[n.index], timeout=QUICK)
            t.ok(r.rc == 0, "%s: devlink roce_selective_repeat on (tern offers selective "
                 "repeat)" % n.name, out(r))


def kernel_qps_gbn(what):
    """Every RC QP on the tern nodes (the kernel ULPs') runs go-back-N (rdma res -dd)."""
    for n in c:
        if target.kind_of(n) != "tern":
            continue
        try:
            qps = [q for q in rt.rdma_res(n, "qp", driver=True) if q.get("type") == "RC"]
        except rt.RdmaError as e:
            t.ok(False, "%s: rdma -dd res show qp" % n.name, str(e))
            continue
        t.ok(qps and all(q.get("drv_transport") == "go-back-n" for q in qps),
             "%s: %s: its %d RC QPs run go-back-N though tern offers selective repeat (no "
             "ECE from the kernel): %s" % (n.name, what, len(qps), ", ".join(
                 str(q.get("drv_transport")) for q in qps)))


def nvme_part():
    sr_offer()
    with Part("NVMe-oF: target set up, discover, connect"):
        r = target_setup()
        t.ok(r.rc == 0, "node1: nvmet through configfs: subsystem %s, namespace 1 null_blk, "
             "namespace 2 brd /dev/ram0 (%d MiB), port 1 rdma %s:%d" % (
                 NQN, RAM_MIB, target.ip(tgt), NVME_PORT), out(r))
        if r.rc != 0:
            return
        lst = wait_for(lambda: listening(tgt, "nvmet_rdma", NVME_PORT), timeout=WAIT)
        t.ok(lst, "node1: nvmet-rdma listens on %s:%d (rdma res show cm_id)" % (
            target.ip(tgt), NVME_PORT), "\n".join(cm_ids(tgt)))
        r = sh(host, NVME_CORE + "modprobe nvme_rdma\nmkdir -p /etc/nvme\n"
               "echo nqn.2014-08.org.nvmexpress:uuid:$(cat /proc/sys/kernel/random/uuid) "
               "> /etc/nvme/hostnqn\ncat /proc/sys/kernel/random/uuid > /etc/nvme/hostid")
        t.ok(r.rc == 0, "node0: nvme-rdma loaded, host NQN and ID in /etc/nvme", out(r))
        r = host.run("nvme discover -t rdma -a %s -s %d" % (target.ip(tgt), NVME_PORT),
                     timeout=STEP)
        entries = [e for e in r.stdout.split("=====Discovery Log Entry")
                   if re.search(r"^subnqn:\s+%s\s*$" % re.escape(NQN), e, re.M)]
        t.ok(r.rc == 0 and entries and re.search(r"^trtype:\s+rdma\s*$", entries[0], re.M) and
             re.search(r"^traddr:\s+%s\s*$" % re.escape(target.ip(tgt)), entries[0], re.M),
             "node0: nvme discover -t rdma -a %s -s %d lists %s over rdma (%.1f s)" % (
                 target.ip(tgt), NVME_PORT, NQN, r.duration), out(r))
        ram = connect("first connect")
    if not ram:
        return
    t.diag("host QPs while connected:", *rc_qps(host))
    kernel_qps_gbn("NVMe-oF connected")
    nullns = "/dev/%s" % namespaces()[1][0]

    with Part("NVMe-oF: fio with verification"):
        fio(ram, "seq128k", "write", "128k", SEQ_OFF, SEQ_MIB * 1024, max(DEPTH // 2, 1))
        fio(ram, "rand4k", "randwrite", "4k", RAND_OFF, RAND_MIB * 1024, DEPTH)

    if KINDS == ["tern", "tern"]:
        with Part("NVMe-oF: fio through wire faults"):
            under_faults(ram)

    with Part("NVMe-oF: bytes on the target"):
        sha = make_pattern(host, "/tmp/pattern", PAT_MIB)
        r = sh(host, "dd if=/tmp/pattern of=%s bs=1M seek=%d oflag=direct conv=fsync "
               "2>/dev/null" % (ram, PAT_OFF), timeout=TIMEOUT)
        got, r2 = sha_of(tgt, "/dev/ram0", PAT_OFF, PAT_MIB)
        t.ok(r.rc == 0 and sha and got == sha, "%d MiB of random bytes written by node0 "
             "through NVMe-oF (O_DIRECT) are in node1's /dev/ram0 at %d MiB (sha256 %s)" % (
                 PAT_MIB, PAT_OFF, (got or "?")[:16]), out(r), out(r2), "want %s" % sha)
        back = make_pattern(tgt, "/tmp/pattern", 1)
        r = sh(tgt, "dd if=/tmp/pattern of=/dev/ram0 bs=1M seek=%d oflag=direct conv=fsync "
               "2>/dev/null" % BACK_OFF)
        got2, r2 = sha_of(host, ram, BACK_OFF, 1)
        t.ok(r.rc == 0 and back and got2 == back, "1 MiB written on node1 into /dev/ram0 at "
             "%d MiB reads back on node0 through NVMe-oF (O_DIRECT, sha256 %s)" % (
                 BACK_OFF, (got2 or "?")[:16]), out(r), out(r2), "want %s" % back)
        r = host.run("dd if=%s of=/dev/null bs=1M count=4 iflag=direct" % nullns, timeout=TIMEOUT)
        t.ok(r.rc == 0 and "4+0 records in" in r.stderr, "node0: 4 MiB read from namespace 1 "
             "(null_blk, %s) with O_DIRECT" % nullns, out(r))

    with Part("NVMe-oF: disconnect, nothing left"):
        disconnect("after the I/O")
        nothing_left(host, "after nvme disconnect")
        nothing_left(tgt, "after nvme disconnect", allowed=LISTENERS)

    with Part("NVMe-oF: the target's RDMA device reloaded under a live controller"):
        ram = connect("connect before the target's reload")
        if ram:
            reload_target(ram, sha)
    with Part("NVMe-oF: the host's RDMA device reloaded under a live controller"):
        ram = ram or connect("connect before the host's reload")
        if ram:
            reload_host(sha)


def unload(node):
    """Remove the RDMA device (rxe: rdma link delete, rmmod; tern: rmmod tern_ib); TAP."""
    r = target.unload(node, timeout=STEP)
    t.ok(r.rc == 0, "%s: %s removed under live ULP connections (%s, %.1f s)" % (
        node.name, target.ibdev_of(node), "rdma link delete, rmmod rdma_rxe"
        if target.kind_of(node) == "rxe" else "rmmod tern_ib", r.duration), out(r),
        dmesg_tail(node, 30))
    return r.rc == 0


def reload(node):
    """Load the device again and wait for its GID; TAP."""
    r = target.load(node, timeout=STEP)
    why = None
    try:
        target.wait_ready(node, STEP)
    except rt.RdmaError as e:
        why = str(e)
    return t.ok(r.rc == 0 and not why, "%s: %s back, port ACTIVE with its GID" % (
        node.name, target.ibdev_of(node)), out(r), why or "")


def reload_target(ram, sha):
    if not unload(tgt):
        return
    # the host notices: its controller leaves the live state (it reconnects every 2 s)
    down = wait_for(lambda: any(v["state"] != "live" for v in controllers().values()),
                    timeout=2 * WAIT, interval=1)
    t.ok(down, "node0: the controller noticed the target's device going away (%s)" %
         ", ".join("%s %s" % (k, v["state"]) for k, v in controllers().items()),
         dmesg_tail(host))
    if not reload(tgt):
        return
    if not listening(tgt, "nvmet_rdma", NVME_PORT):
        # nvmet-rdma (Linux 6.1) drops a port's listener when its device goes away (in the
        # removal itself) and does not listen again by itself when a device comes back: the
        # admin re-enables the port
        t.diag("node1: nvmet-rdma's listener went with the device; re-enabling port 1")
        r = port_reenable()
        t.ok(r.rc == 0, "node1: port 1 re-enabled (its subsystem link removed and made "
             "again)", out(r))
    lst = wait_for(lambda: listening(tgt, "nvmet_rdma", NVME_PORT), timeout=WAIT)
    t.ok(lst, "node1: nvmet-rdma listens again on %s:%d" % (target.ip(tgt), NVME_PORT),
         "\n".join(cm_ids(tgt)))
    t0 = time.monotonic()
    live = wait_for(lambda: controllers() and all(v["state"] == "live"
                                                  for v in controllers().values()),
                    timeout=4 * WAIT, interval=1)
    t.ok(live, "node0: the controller reconnected by itself (live %.0f s after the target "
         "listened again)" % (time.monotonic() - t0), repr(controllers()), dmesg_tail(host))
    if live:
        check_pattern(ram, sha, "after the target's reload")
        fio(ram, "again4k", "randwrite", "4k", AGAIN_OFF, AGAIN_KIB, DEPTH)


def reload_host(sha):
    if not unload(host):
        return
    gone = wait_for(lambda: not controllers(), timeout=2 * WAIT, interval=1)
    t.ok(gone, "node0: nvme-rdma deleted the controller of the device that went away",
         repr(controllers()), dmesg_tail(host))
    nothing_left(tgt, "after the host's device went away", allowed=LISTENERS)
    if not reload(host):
        return
    ram = connect("connect after the host's reload")
    if ram:
        check_pattern(ram, sha, "after the host's reload")
        fio(ram, "again4k", "randwrite", "4k", AGAIN_OFF, AGAIN_KIB, DEPTH)
        disconnect("after the reloads")
    nothing_left(host, "at the end of NVMe-oF")


# --- NFS over RDMA ---------------------------------------------------------------------------

def nfs_server():
    """nfsd on node1 exporting a tmpfs at /export, then listening on RDMA port 20049. Its
    grace period (10 s, the least nfsd takes) runs while NVMe-oF is tested."""
    r = sh(tgt, """
modprobe nfsd
modprobe rpcrdma
grep -q ' /proc/fs/nfsd ' /proc/mounts || mount -t nfsd nfsd /proc/fs/nfsd
mkdir -p /export /var/lib/nfs/v4recovery
mount -t tmpfs -o size=%(mib)dm tmpfs /export
: > /var/lib/nfs/etab
: > /var/lib/nfs/rmtab
echo '/export *(rw,fsid=1,no_subtree_check,no_root_squash,insecure)' > /etc/exports
exportfs -ra
rpc.mountd -N 2 -N 3
rpc.nfsd -N 3 -G 10 4
echo rdma %(port)d > /proc/fs/nfsd/portlist
cat /proc/fs/nfsd/portlist
""" % dict(mib=4 * NFS_MIB + 8, port=NFS_PORT))
    ok = t.ok(r.rc == 0 and re.search(r"^rdma %d$" % NFS_PORT, r.stdout, re.M),
              "node1: nfsd serves /export (tmpfs) and listens on rdma %d (portlist: %s)" % (
                  NFS_PORT, " / ".join(r.stdout.split("\n")).strip(" /")), out(r))
    if ok:
        lst = wait_for(lambda: listening(tgt, "rpcrdma", NFS_PORT), timeout=WAIT)
        ok = t.ok(lst, "node1: svcrdma listens on port %d (rdma res show cm_id)" % NFS_PORT,
                  "\n".join(cm_ids(tgt)))
    return ok


def nfs_client():
    addr = target.ip(tgt)
    r = sh(host, "modprobe nfsv4\nmodprobe rpcrdma\nmkdir -p /mnt/nfs", timeout=STEP)
    if not t.ok(r.rc == 0, "node0: nfsv4 and rpcrdma loaded (%.1f s)" % r.duration, out(r)):
        return
    r = sh(host, "mount -t nfs4 -o rdma,port=%d %s:/export /mnt/nfs\n"
           "grep ' /mnt/nfs ' /proc/mounts" % (NFS_PORT, addr), timeout=STEP)
    opts = r.stdout.split()[3] if len(r.stdout.split()) > 3 else ""
    mounted = t.ok(r.rc == 0 and "proto=rdma" in opts.split(",") and
                   "port=%d" % NFS_PORT in opts.split(","),
                   "node0: mount -t nfs4 -o rdma,port=%d %s:/export /mnt/nfs: %s (%.1f s)" % (
                       NFS_PORT, addr, ",".join(o for o in opts.split(",")
                                                if o.startswith(("vers=", "proto="))),
                       r.duration), out(r), dmesg_tail(host))
    if not mounted:
        return
    r = host.run("grep -A1 ' mounted on /mnt/nfs with fstype nfs4' /proc/self/mountstats; "
                 "grep -E '^\\s+xprt:' /proc/self/mountstats", timeout=QUICK)
    t.ok(re.search(r"^\s+xprt:\s+rdma\s", r.stdout, re.M),
         "node0: /proc/self/mountstats: the mount's transport is rdma", out(r))
    qps = rc_qps(host)
    ids = [ln for ln in cm_ids(host) if re.search(r"dst-addr %s:%d\b" % (re.escape(addr),
                                                                       NFS_PORT), ln)]
    t.ok(qps and ids, "node0: while mounted, an RC QP and an rdma_cm ID to %s:%d" % (
        addr, NFS_PORT), *(qps + cm_ids(host)))

    sha = make_pattern(host, "/tmp/nfs-data", NFS_MIB)
    r = sh(host, "cp /tmp/nfs-data /mnt/nfs/buffered\nsync /mnt/nfs/buffered\n"
           "dd if=/tmp/nfs-data of=/mnt/nfs/direct bs=64k oflag=direct 2>/dev/null",
           timeout=TIMEOUT)
    t.ok(r.rc == 0, "node0: %d MiB written to /mnt/nfs twice: cp + sync (buffered), dd with "
         "O_DIRECT in 64 KiB writes (%.1f s)" % (NFS_MIB, r.duration), out(r))
    r = tgt.run("sha256sum /export/buffered /export/direct", timeout=TIMEOUT)
    got = [ln.split()[0] for ln in r.stdout.splitlines()]
    t.ok(r.rc == 0 and sha and got == [sha, sha], "node1: both files in /export have the "
         "written bytes (sha256 %s)" % (sha or "?")[:16], out(r), "want %s" % sha)
    back = make_pattern(tgt, "/export/from-server", NFS_MIB)
    r = sh(host, "echo 3 > /proc/sys/vm/drop_caches\n"
           "sha256sum /mnt/nfs/buffered /mnt/nfs/direct /mnt/nfs/from-server", timeout=TIMEOUT)
    got = [ln.split()[0] for ln in r.stdout.splitlines()]
    t.ok(r.rc == 0 and sha and back and got == [sha, sha, back], "node0: read back over NFS "
         "after dropping its caches: both files, and %d MiB node1 wrote (%.1f s)" % (
             NFS_MIB, r.duration), out(r), "want %s %s %s" % (sha, sha, back))
    r = host.run("grep -E '^\\s+(READ|WRITE):' /proc/self/mountstats", timeout=QUICK)
    ops = {m.group(1): int(m.group(2))
           for m in re.finditer(r"^\s+(READ|WRITE):\s+(\d+)", r.stdout, re.M)}
    t.ok(ops.get("READ", 0) > 0 and ops.get("WRITE", 0) > 0, "node0: mountstats counts the "
         "NFS READs and WRITEs (%s)" % ", ".join("%s %d" % kv for kv in sorted(ops.items())),
         out(r))
    r = host.run("umount /mnt/nfs", timeout=STEP)
    t.ok(r.rc == 0, "node0: umount /mnt/nfs (%.1f s)" % r.duration, out(r))
    nothing_left(host, "after umount")


def nfs_server_stop():
    r = sh(tgt, "rpc.nfsd 0\nexportfs -ua\nkillall rpc.mountd")
    t.ok(r.rc == 0, "node1: nfsd stopped (rpc.nfsd 0), exports removed", out(r))
    nothing_left(tgt, "after nfsd stopped", allowed=LISTENERS[:1])


# --- iSER ------------------------------------------------------------------------------------

ISCSI_PORT = 3260
ISER_TGT = "iqn.2026-12.io.tern:storage-iser"
ISER_INI = "iqn.2026-12.io.tern:node0"
ISER_MIB = 16 if DEBUG else 64        # the LUN (a memory-backed null_blk), all written
# 4 KiB random writes, verified (Soft-RoCE moves about 1 MB/s of them)
ISER_FIO_MIB = 2 if DEBUG or "rxe" in KINDS else 8
LIO = "/sys/kernel/config/target"
NODE = "-T %s -p %%s:%d -I iser" % (ISER_TGT, ISCSI_PORT)


def iser_target():
    """LIO on node1 through configfs: a memory-backed null_blk of ISER_MIB (made through
    null_blk's configfs, so it does not depend on the NVMe part's devices) as an iblock
    backstore, LUN 0 of an iSCSI target whose portal on node1's address has iSER enabled,
    an ACL for node0's initiator name. Returns the backing device's path or None."""
    tpg = "%s/iscsi/%s/tpgt_1" % (LIO, ISER_TGT)
    np = "%s/np/%s:%d" % (tpg, target.ip(tgt), ISCSI_PORT)
    r = sh(tgt, """
modprobe configfs
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs configfs /sys/kernel/config
# nr_devices=0 if it is not loaded yet (the NVMe part loads it with its own nullb0)
modprobe null_blk nr_devices=0
modprobe target_core_iblock
modprobe iscsi_target_mod
modprobe ib_isert
# the login code allocates crc32c (header and data digests) even when none is negotiated;
# the guests' modprobe does not resolve the kernel's "crypto-crc32c" request
modprobe crc32c_generic
N=/sys/kernel/config/nullb/nullb_iser
mkdir $N
echo %(mib)d > $N/size
echo 1 > $N/memory_backed
echo 1 > $N/power
# the disk is named after the configfs directory (Linux 6.1's null_blk)
dev=/dev/nullb_iser
for i in $(seq 50); do [ -b $dev ] && break; sleep 0.2; done
[ -b $dev ]
mkdir -p %(lio)s/core/iblock_0/iser
echo udev_path=$dev > %(lio)s/core/iblock_0/iser/control
echo 1 > %(lio)s/core/iblock_0/iser/enable
mkdir -p %(tpg)s/lun/lun_0
ln -s %(lio)s/core/iblock_0/iser %(tpg)s/lun/lun_0/iser
mkdir %(np)s
echo 1 > %(np)s/iser
mkdir -p %(tpg)s/acls/%(ini)s/lun_0
ln -s %(tpg)s/lun/lun_0 %(tpg)s/acls/%(ini)s/lun_0/lun_0
echo 0 > %(tpg)s/attrib/authentication
echo 1 > %(tpg)s/enable
cat %(np)s/iser
echo $dev
""" % dict(mib=ISER_MIB, lio=LIO, tpg=tpg, np=np, ini=ISER_INI))
    lines = r.stdout.split()
    ok = t.ok(r.rc == 0 and lines[-2:-1] == ["1"] and lines[-1].startswith("/dev/nullb"),
              "node1: LIO through configfs: null_blk %s (%d MiB, memory-backed) as "
              "iblock_0/iser, LUN 0 of %s, portal %s:%d with iser 1, ACL for %s" % (
                  lines[-1] if lines else "?", ISER_MIB, ISER_TGT, target.ip(tgt),
                  ISCSI_PORT, ISER_INI), out(r), dmesg_tail(tgt))
    if not ok:
        return None
    lst = wait_for(lambda: [ln for ln in cm_ids(tgt) if "state LISTEN" in ln and
                            re.search(r"src-addr %s:%d\b" % (re.escape(target.ip(tgt)),
                                                             ISCSI_PORT), ln)], timeout=WAIT)
    t.ok(lst, "node1: ib_isert listens on %s:%d (rdma res show cm_id)" % (
        target.ip(tgt), ISCSI_PORT), "\n".join(cm_ids(tgt)), dmesg_tail(tgt))
    return lines[-1] if lst else None


def iser_initiator():
    """open-iscsi on node0: ib_iser, iscsid, a node record of the target on the "iser"
    interface (transport iser)."""
    r = sh(host, """
modprobe ib_iser
modprobe sd_mod
mkdir -p /etc/iscsi /run/lock/iscsi
echo InitiatorName=%(ini)s > /etc/iscsi/initiatorname.iscsi
iscsid
iscsiadm -m iface -I iser | grep -E '^iface.transport_name'
iscsiadm -m node -o new %(node)s
""" % dict(ini=ISER_INI, node=NODE % target.ip(tgt)))
    return t.ok(r.rc == 0 and "iface.transport_name = iser" in r.stdout,
                "node0: ib_iser loaded, iscsid started, node record of %s at %s:%d on iface "
                "iser (transport iser)" % (ISER_TGT, target.ip(tgt), ISCSI_PORT), out(r))


def iser_sessions():
    """node0's iSCSI sessions (iscsiadm -m session): [(sid, transport, target, portal)]."""
    r = host.run("iscsiadm -m session", timeout=QUICK)
    return [(int(m.group(2)), m.group(1), m.group(4), m.group(3))
            for m in re.finditer(r"^(\w+): \[(\d+)\] (\S+),\d+ (\S+)", r.stdout, re.M)]


def iser_disk():
    """The SCSI disk of the session (/dev/sdX) or None."""
    r = host.run("ls /sys/class/iscsi_session/session*/device/target*/*:*:*:*/block/ "
                 "2>/dev/null", timeout=QUICK)
    names = [w for w in r.stdout.split() if re.match(r"^sd[a-z]+$", w)]
    return "/dev/%s" % names[0] if len(names) == 1 else None


def iser_login(what):
    """iscsiadm --login on the iser iface; TAP lines. Returns /dev/sdX or None."""
    addr = target.ip(tgt)
    r = host.run("iscsiadm -m node %s --login" % (NODE % addr), timeout=STEP)
    disk = wait_for(iser_disk, timeout=WAIT, interval=1) if r.rc == 0 else None
    sess = iser_sessions()
    ok = t.ok(r.rc == 0 and disk and len(sess) == 1 and sess[0][1] == "iser" and
              sess[0][2] == ISER_TGT,
              "node0: %s: iscsiadm --login to %s on iface iser: session %s, disk %s (%.1f s)" %
              (what, ISER_TGT, ", ".join("%d %s %s" % (s[0], s[1], s[3]) for s in sess) or
               "none", disk or "none", r.duration), out(r), dmesg_tail(host, 30))
    if not ok:
        return None
    r = host.run("iscsiadm -m session -P 1 | grep -E 'Iface (Transport|Initiatorname)|"
                 "Current Portal|iSCSI Session State|Internal iscsid Session State'; "
                 "blockdev --getsize64 %s" % disk, timeout=QUICK)
    size = r.stdout.split()[-1] if r.stdout.split() else ""
    t.ok(re.search(r"Iface Transport: iser$", r.stdout, re.M) and
         re.search(r"iSCSI Session State: LOGGED_IN$", r.stdout, re.M) and
         size == str(ISER_MIB * MIB),
         "node0: iscsiadm -m session -P 1: Iface Transport iser, LOGGED_IN; %s has %s bytes"
         % (disk, size), out(r))
    qps = [q for q in rc_qps(host)]
    ids = [ln for ln in cm_ids(host) if re.search(r"dst-addr %s:%d\b" % (re.escape(addr),
                                                                       ISCSI_PORT), ln)]
    t.ok(qps and ids, "node0: an RC QP and an rdma_cm ID to %s:%d on %s while logged in" % (
        addr, ISCSI_PORT, target.ibdev_of(host)), *(rc_qps(host) + cm_ids(host)))
    return disk


def iser_logout(what):
    r = host.run("iscsiadm -m node %s --logout" % (NODE % target.ip(tgt)), timeout=STEP)
    gone = wait_for(lambda: not iser_sessions() and not iser_disk(), timeout=WAIT, interval=1)
    return t.ok(r.rc == 0 and gone, "node0: %s: iscsiadm --logout: no session, no disk left "
                "(%.1f s)" % (what, r.duration), out(r), repr(iser_sessions()))


def rdma_counters():
    return {n.index: rt.hw_counters(n, target.ibdev_of(n)) for n in c}


def traffic(before, after, mib):
    """The RDMA devices' packet counters between two readings, as text; and whether each
    side sent or received at least ``mib`` MiB of RoCE payload (tern's tx/rx_roce_bytes;
    Soft-RoCE counts packets, at most 4 KiB each)."""
    parts, moved = [], True
    for i in sorted(after):
        d = rt.counter_delta(after[i], before[i])
        if "tx_roce_bytes" in d:
            parts.append("%s: tx %.1f MiB, rx %.1f MiB RoCE (%d / %d packets)" % (
                c[i].name, d["tx_roce_bytes"] / MIB, d["rx_roce_bytes"] / MIB,
                d.get("tx_roce_packets", 0), d.get("rx_roce_packets", 0)))
            moved = moved and max(d["tx_roce_bytes"], d["rx_roce_bytes"]) >= mib * MIB
        elif "sent_pkts" in d:
            parts.append("%s: %d packets sent, %d received" % (
                c[i].name, d["sent_pkts"], d.get("rcvd_pkts", 0)))
            moved = moved and max(d["sent_pkts"], d.get("rcvd_pkts", 0)) >= mib * MIB // 4096
        else:
            parts.append("%s: no counters" % c[i].name)
            moved = False
    return "; ".join(parts), moved


def iser_part():
    with Part("iSER: LIO target, open-iscsi initiator, login"):
        backing = iser_target()
        if not backing or not iser_initiator():
            return
        disk = iser_login("first login")
    if not disk:
        return
    t.diag("node0 QPs while logged in:", *rc_qps(host))

    with Part("iSER: %d MiB written and read back" % ISER_MIB):
        sha = make_pattern(host, "/tmp/iser-data", ISER_MIB)
        before = rdma_counters()
        r = sh(host, "dd if=/tmp/iser-data of=%s bs=1M oflag=direct conv=fsync 2>/dev/null" %
               disk, timeout=TIMEOUT)
        after = rdma_counters()
        t.ok(r.rc == 0 and sha, "node0: %d MiB of random bytes written to %s with O_DIRECT "
             "(dd bs=1M, %.1f s, %.2f MB/s)" % (ISER_MIB, disk, r.duration,
                                                ISER_MIB * MIB / 1e6 / max(r.duration, 0.1)),
             out(r))
        text, moved = traffic(before, after, ISER_MIB)
        t.ok(moved, "the write went over RDMA: %s" % text)
        got, r = sha_of(host, disk, 0, ISER_MIB)
        t.ok(got == sha, "node0: read back through iSER with O_DIRECT: sha256 %s (%.1f s)" % (
            (got or "?")[:16], r.duration), out(r), "want %s" % sha)
        got, r = sha_of(tgt, backing, 0, ISER_MIB)
        t.ok(got == sha, "node1: the backing device %s holds the same bytes (sha256 %s)" % (
            backing, (got or "?")[:16]), out(r), "want %s" % sha)
        fio(disk, "iser4k", "randwrite", "4k", 0, ISER_FIO_MIB * 1024, DEPTH)
        # the pattern again where fio wrote, for the checks after logout/login
        r = sh(host, "dd if=/tmp/iser-data of=%s bs=1M count=%d oflag=direct conv=fsync "
               "2>/dev/null" % (disk, ISER_FIO_MIB), timeout=TIMEOUT)
        t.ok(r.rc == 0, "node0: the pattern's first %d MiB written again over fio's" %
             ISER_FIO_MIB, out(r))

    with Part("iSER: logout under a reader, login again"):
        # a reader of the whole disk in a loop while the session is logged out: in-flight
        # SCSI commands fail or complete, the connection's QP is torn down with work on it,
        # and nothing hangs
        reader = host.spawn("while dd if=%s of=/dev/null bs=256k iflag=direct 2>/dev/null; "
                            "do :; done" % disk, timeout=STEP)
        time.sleep(2)
        busy = reader.poll() is None
        iser_logout("logout while a reader runs (%s)" % ("reading" if busy else
                                                          "the reader had stopped"))
        done = wait_for(lambda: reader.poll() is not None, timeout=WAIT, interval=1)
        t.ok(done, "node0: the reader ended once the disk went away (not stuck in I/O)",
             dmesg_tail(host, 30))
        if not done:
            reader.kill()
        nothing_left(host, "after iscsiadm --logout")
        nothing_left(tgt, "after the initiator logged out",
                     allowed=[r"LISTEN.*:%d\b" % ISCSI_PORT] + LISTENERS)
        disk = iser_login("login again")
        if not disk:
            return
        got, r = sha_of(host, disk, 0, ISER_MIB)
        t.ok(got == sha, "node0: after logout and login the %d MiB read back intact "
             "(sha256 %s, %.1f s)" % (ISER_MIB, (got or "?")[:16], r.duration), out(r),
             "want %s" % sha)
        fio(disk, "iser4k-again", "randwrite", "4k", ISER_FIO_MIB, ISER_FIO_MIB * 1024,
            DEPTH)
        iser_logout("at the end")
        nothing_left(host, "at the end of iSER")


# --- SMB Direct ------------------------------------------------------------------------------

SMB_MIB = 4 if DEBUG else 16          # per file
SMB_SHARE = "tern"
SMB_USER, SMB_PASS = "tern", "tern-smb-direct"
SMB_PORT = 445                        # ksmbd's SMB Direct port on RoCE and InfiniBand
# the crypto SMB3 asks for (signing, encryption, NTLMSSP) that Debian's kernel has as
# modules: loaded up front, as the guests' modprobe does not resolve the crypto API's
# on-demand requests ("crypto-cmac(aes)")
SMB_CRYPTO = "ecb ccm gcm cmac ctr ghash_generic sha512_generic md4 des_generic nls_utf8"


# Soft-RoCE as the SMB Direct client (TERN_RDMA_TARGET=rxe, rxe+tern): the mount, the data
# and the counters check out, but at umount the cifs client's teardown (smbd_destroy) gets
# "WARNING: ... at drivers/infiniband/core/verbs.c:2824 __ib_drain_rq" from Linux 6.1's
# rdma_rxe (the drain's receive WR is not accepted once the QP is in the error state), and
# its QP and rdma_cm ID can stay behind. Soft-RoCE's, not the server's: tern as the client
# tears down cleanly. A kernel warning fails the file, so that pairing is skipped.
SMB_RXE_CLIENT = {"rxe": "Soft-RoCE as the SMB Direct client: Linux 6.1's rdma_rxe fails "
                         "the cifs client's ib_drain_rq() at umount (a WARNING in "
                         "__ib_drain_rq, see Documentation/admin/storage.rst)"}

# The cifs client of Linux 6.1 could oops a second after umount (smbd_disconnect_rdma_work ->
# rdma_disconnect on a freed rdma_cm ID), on tern and against a Soft-RoCE server alike: its
# teardown's wait for DISCONNECTED is cut short by umount's SIGKILL, and the disconnect work
# that the drain's flushed receives queue can run after rdma_destroy_id(). tern's cifs.ko
# waits for that work (scripts/smbdirect/cifs-smbd-destroy-disconnect-work.patch;
# Documentation/admin/storage.rst).


def smb_direct_modules():
    """Why cifs.ko and ksmbd.ko in the guest image have no SMB Direct, or None: Debian's
    are built without it; scripts/build-smbdirect.sh's, under updates/, have it."""
    r = tgt.run("modinfo -F filename cifs ksmbd; grep -E '^updates/(cifs|ksmbd)\\.ko:' "
                "/lib/modules/$(uname -r)/modules.dep", timeout=QUICK)
    have = sorted(set(re.findall(r"^updates/(cifs|ksmbd)\.ko:", r.stdout, re.M)))
    if have == ["cifs", "ksmbd"]:
        return None
    return ("the guest image has Debian's cifs.ko and ksmbd.ko, built without SMB Direct "
            "(CONFIG_CIFS_SMB_DIRECT, CONFIG_SMB_SERVER_SMBDIRECT are not set): "
            "scripts/build-smbdirect.sh builds them with it")


def smb_server():
    """ksmbd on node1 sharing a tmpfs at /srv/smb as "tern", with a user; returns whether
    it listens for SMB Direct on port 445."""
    r = sh(tgt, """
for m in %(crypto)s; do modprobe $m; done
modprobe ksmbd
mkdir -p /srv/smb /etc/ksmbd
mount -t tmpfs -o size=%(mib)dm tmpfs /srv/smb
grep -q '^root:' /etc/passwd 2>/dev/null || echo 'root:x:0:0:root:/root:/bin/sh' >> /etc/passwd
grep -q '^root:' /etc/group 2>/dev/null || echo 'root:x:0:' >> /etc/group
grep -q '^%(user)s:' /etc/passwd || echo '%(user)s:x:1000:1000::/tmp:/bin/sh' >> /etc/passwd
grep -q '^%(user)s:' /etc/group || echo '%(user)s:x:1000:' >> /etc/group
printf '[global]\\n\\tnetbios name = node1\\n' > /etc/ksmbd/ksmbd.conf
ksmbd.addshare -a %(share)s -o 'path = /srv/smb
read only = no
force user = root
force group = root'
ksmbd.adduser -a %(user)s -p %(pw)s
ksmbd.mountd
cat /etc/ksmbd/ksmbd.conf
""" % dict(crypto=SMB_CRYPTO, mib=3 * SMB_MIB + 8, user=SMB_USER, pw=SMB_PASS,
           share=SMB_SHARE))
    if not t.ok(r.rc == 0, "node1: ksmbd (SMB Direct build) shares /srv/smb (tmpfs) as %s, "
                "user %s, ksmbd.mountd running (%.1f s)" % (SMB_SHARE, SMB_USER, r.duration),
                out(r), dmesg_tail(tgt)):
        return False
    lst = wait_for(lambda: [ln for ln in cm_ids(tgt) if "state LISTEN" in ln and
                            re.search(r"src-addr \S*:%d\b" % SMB_PORT, ln)], timeout=WAIT)
    return t.ok(lst, "node1: ksmbd listens for SMB Direct on port %d (rdma res show cm_id)" %
                SMB_PORT, "\n".join(cm_ids(tgt)), dmesg_tail(tgt))


def smb_client():
    addr = target.ip(tgt)
    r = sh(host, "for m in %s; do modprobe $m; done\nmodprobe cifs\nmkdir -p /mnt/smb" %
           SMB_CRYPTO, timeout=STEP)
    if not t.ok(r.rc == 0, "node0: cifs (SMB Direct build) loaded (%.1f s)" % r.duration,
                out(r)):
        return
    opts = "rdma,vers=3.1.1,username=%s,password=%s" % (SMB_USER, SMB_PASS)
    r = sh(host, "mount -t cifs //%s/%s /mnt/smb -o %s\ngrep ' /mnt/smb ' /proc/mounts" % (
        addr, SMB_SHARE, opts), timeout=STEP)
    mopts = r.stdout.split()[3].split(",") if len(r.stdout.split()) > 3 else []
    if not t.ok(r.rc == 0 and "rdma" in mopts, "node0: mount -t cifs //%s/%s /mnt/smb -o "
                "rdma,vers=3.1.1: %s (%.1f s)" % (
                    addr, SMB_SHARE, ",".join(o for o in mopts if o.startswith("vers=") or
                                              o == "rdma") or "not mounted", r.duration),
                out(r), dmesg_tail(host, 30), "node1:\n" + dmesg_tail(tgt, 20)):
        return
    r = host.run("cat /proc/fs/cifs/DebugData", timeout=QUICK)
    # printed for a connection whose transport is SMB Direct (server->rdma and connected)
    t.ok(re.search(r"SMBDirect \(in hex\) protocol version", r.stdout),
         "node0: /proc/fs/cifs/DebugData: the connection runs over SMB Direct", out(r))
    qps = rc_qps(host)
    t.ok(qps, "node0: an RC QP while mounted (rdma res show qp)", *(qps + cm_ids(host)))

    sha = make_pattern(host, "/tmp/smb-data", SMB_MIB)
    before = rdma_counters()
    r = sh(host, "cp /tmp/smb-data /mnt/smb/file\nsync /mnt/smb/file", timeout=TIMEOUT)
    after = rdma_counters()
    t.ok(r.rc == 0 and sha, "node0: %d MiB written to /mnt/smb (cp + sync, %.1f s, %.2f MB/s)"
         % (SMB_MIB, r.duration, SMB_MIB * MIB / 1e6 / max(r.duration, 0.1)), out(r))
    text, moved = traffic(before, after, SMB_MIB)
    t.ok(moved, "the write went over RDMA, not TCP: %s" % text)
    r = tgt.run("sha256sum /srv/smb/file", timeout=TIMEOUT)
    got = r.stdout.split()[0] if r.rc == 0 and r.stdout.strip() else None
    t.ok(sha and got == sha, "node1: /srv/smb/file has the written bytes (sha256 %s)" %
         (got or "?")[:16], out(r), "want %s" % sha)
    back = make_pattern(tgt, "/srv/smb/from-server", SMB_MIB)
    before = rdma_counters()
    r = sh(host, "echo 3 > /proc/sys/vm/drop_caches\n"
           "sha256sum /mnt/smb/file /mnt/smb/from-server", timeout=TIMEOUT)
    after = rdma_counters()
    got = [ln.split()[0] for ln in r.stdout.splitlines()]
    t.ok(r.rc == 0 and sha and back and got == [sha, back], "node0: read back over SMB Direct "
         "after dropping its caches: the file, and %d MiB node1 wrote (%.1f s)" % (
             SMB_MIB, r.duration), out(r), "want %s %s" % (sha, back))
    text, moved = traffic(before, after, 2 * SMB_MIB)
    t.ok(moved, "the reads went over RDMA: %s" % text)
    r = host.run("umount /mnt/smb", timeout=STEP)
    t.ok(r.rc == 0, "node0: umount /mnt/smb (%.1f s)" % r.duration, out(r))
    nothing_left(host, "after umount of the SMB share")
    nothing_left(tgt, "after the SMB client went", allowed=[r"LISTEN.*:%d\b" % SMB_PORT,
                                                            r"LISTEN.*:%d\b" % ISCSI_PORT] +
                 LISTENERS)


# --- the test --------------------------------------------------------------------------------

try:
    t.diag("time: boot: %.1f s (%s kernel)" % (c.boot_seconds or 0, c.flavour))
    why = target.available(host)
    if why:
        t.skip_all(why)
    nvme_missing = sorted(set(missing(host, ["nvme", "fio"], ["nvme_rdma"]) +
                              missing(tgt, [], ["nvmet_rdma", "null_blk", "brd"])))
    nfs_missing = sorted(set(missing(host, ["mount.nfs4"], ["nfsv4", "rpcrdma"]) +
                             missing(tgt, ["exportfs", "rpc.mountd", "rpc.nfsd"],
                                     ["nfsd", "rpcrdma"])))
    iser_missing = sorted(set(missing(host, ["iscsiadm", "iscsid", "fio"],
                                      ["ib_iser", "sd_mod"]) +
                              missing(tgt, [], ["target_core_iblock", "iscsi_target_mod",
                                                "ib_isert", "null_blk"])))
    smb_missing = sorted(set(missing(host, ["mount.cifs"], ["cifs"]) +
                             missing(tgt, ["ksmbd.mountd", "ksmbd.adduser", "ksmbd.addshare"],
                                     ["ksmbd"])))
    if all(lack or name not in PARTS for name, lack in (
            ("nvme", nvme_missing), ("nfs", nfs_missing), ("iser", iser_missing),
            ("smb", smb_missing))):
        t.skip_all("not in the guest image (scripts/guest/storage-files.txt, %s kernel) or "
                   "not selected (TERN_STORAGE_PARTS=%s): %s" % (
                       c.flavour, ",".join(PARTS),
                       " ".join(sorted(set(nvme_missing + nfs_missing + iser_missing +
                                           smb_missing)))))
    ready = False
    with Part("RDMA devices up"):
        try:
            target.setup(timeout=STEP)
            ready = True
        except (rt.RdmaError, HarnessError) as e:
            t.ok(False, "%s comes up on both guests" % dev, str(e))
    if ready:
        if MIXED:
            # as tests/interop/rxe.t: rdma_cm's RoCE mode set to v2 on the Soft-RoCE side
            for n in c:
                if target.kind_of(n) == "rxe":
                    rt.load_rdma_cm(n)
                    mode, _ = rt.cm_roce_mode(n, target.ibdev_of(n), "RoCE v2")
                    t.diag("%s: rdma_cm default RoCE mode for %s: %s" % (
                        n.name, target.ibdev_of(n), mode))
        frwr = {}
        for n in c:
            frwr[n.index], r = has_frwr(n)
            t.diag("%s: %s %s fast registration (MEM_MGT_EXTENSIONS in ibv_devinfo -v)%s" % (
                n.name, target.ibdev_of(n), "advertises" if frwr[n.index] else
                "does not advertise", "" if r.rc == 0 else ": ibv_devinfo rc %s" % r.rc))

        def no_frwr(nodes, who):
            lack = ["%s on %s" % (target.ibdev_of(n), n.name) for n in nodes
                    if not frwr[n.index]]
            if lack and os.environ.get("TERN_STORAGE_FORCE") == "1":
                t.diag("TERN_STORAGE_FORCE=1: running anyway without fast registration on %s"
                       % ", ".join(lack))
                return None
            return ("%s: no fast registration (MEM_MGT_EXTENSIONS), which %s" % (
                ", ".join(lack), who)) if lack else None
        nvme_skip = (NOT_SELECTED if "nvme" not in PARTS else
                     "not in the guest image: %s" % " ".join(nvme_missing)
                     if nvme_missing else
                     no_frwr([host, tgt], "nvme-rdma registers memory with and nvmet-rdma "
                             "answers with (SEND_WITH_INV)"))
        nfs_skip = (NOT_SELECTED if "nfs" not in PARTS else
                    "not in the guest image: %s" % " ".join(nfs_missing) if nfs_missing else
                    no_frwr([host], "xprtrdma registers memory with"))
        # iSER: ib_iser registers memory with fast registration; ib_isert needs none
        iser_skip = (NOT_SELECTED if "iser" not in PARTS else
                     "not in the guest image: %s" % " ".join(iser_missing)
                     if iser_missing else
                     no_frwr([host], "ib_iser registers memory with"))
        # SMB Direct: the cifs client registers memory with fast registration, and ksmbd
        # only listens on devices that offer it
        smb_skip = (NOT_SELECTED if "smb" not in PARTS else
                    "not in the guest image: %s" % " ".join(smb_missing)
                    if smb_missing else smb_direct_modules() or SMB_RXE_CLIENT.get(
                        target.kind_of(host)) or
                    no_frwr([host, tgt], "the cifs client and ksmbd require"))
        if nvme_skip and nfs_skip and iser_skip and smb_skip:
            t.skip_all("NVMe-oF: %s; NFS over RDMA: %s; iSER: %s; SMB Direct: %s" % (
                nvme_skip, nfs_skip, iser_skip, smb_skip))
        nfs_up = False
        if nfs_skip:
            t.skip("NFS over RDMA", nfs_skip)
        else:
            with Part("NFS: server start"):
                nfs_up = nfs_server()
        if nvme_skip:
            t.skip("NVMe over Fabrics", nvme_skip)
        else:
            nvme_part()
        if nfs_up:
            with Part("NFS: mount over RDMA, files both ways, umount"):
                nfs_client()
            with Part("NFS: server stop"):
                nfs_server_stop()
        if iser_skip:
            t.skip("iSER", iser_skip)
        else:
            iser_part()
        if smb_skip:
            t.skip("SMB Direct", smb_skip)
        else:
            smb_up = False
            with Part("SMB Direct: ksmbd start"):
                smb_up = smb_server()
            if smb_up:
                with Part("SMB Direct: mount -o rdma, files both ways, umount"):
                    smb_client()
    with Part("kernel log check"):
        check_kernel_clean(t, c)
except HarnessError as e:
    t.ok(False, "harness error", str(e))
finally:
    c.close()
    t.diag("time: the whole file: %.1f s (%s kernel, %s): %s" % (
        time.monotonic() - T0, c.flavour, KIND,
        ", ".join("%s %.0f s" % (n, s) for n, s in times)))
    t.diag("logs: %s" % c.result_dir)
t.exit()
