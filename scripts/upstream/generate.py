#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Generate tern's upstream submissions from this tree, with nothing copied by hand.

  generate.py linux --tree LINUX_SRC --out DIR
      a kernel patch series for a Linux source tree (Debian's linux-source-6.1):
        DIR/0000-cover-letter.txt
        DIR/0001-net-tern-add-the-tern_core-driver.patch  (include/linux/tern, tern_core,
            the drivers/net/ethernet/ hooks, MAINTAINERS, Documentation/networking/)
        DIR/0002-RDMA-tern-add-the-tern_ib-driver.patch   (the uverbs ABI header, tern_ib,
            the drivers/infiniband/ hooks, MAINTAINERS)
  generate.py rdma-core --tree RDMA_CORE_SRC --out DIR
      one rdma-core patch (providers/tern with the device headers it needs,
      kernel-headers/rdma/tern-abi.h and the CMake lists that name them):
        DIR/0001-providers-tern-add-the-tern-provider.patch
        DIR/files/  every file the patch adds or changes, as the patched tree has it
            (scripts/build-provider.sh builds the provider from exactly these)

The trees are read, never written: the files the patches change are read from them, so
the patches apply to exactly those trees. The only transformations of this tree's files:
  - the out-of-tree glue of the two Kbuild files (the -I to this repository's include/
    directories) is dropped, and the files are named Makefile, as in-tree drivers have it;
  - in rdma-core the device headers live beside the provider (as efa's efa_io_defs.h), so
    <linux/tern/X.h> becomes "X.h" there.
Identity (MAINTAINERS, From:, Signed-off-by:): $TERN_UPSTREAM_IDENT ("Name <email>"), else
the Maintainer of packaging/debian/control. A tree that is a git repository is read at its
HEAD (scripts/build-provider.sh keeps rdma-core's pristine source there).
"""
import argparse
import difflib
import os
import re
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# Marks the out-of-tree lines of drivers/*/tern/Kbuild, up to the ccflags line.
GLUE_START = "# Out-of-tree glue only"
GLUE_END = re.compile(r"^ccflags-y \+= -I\$\(src\)/(\.\./)+include\b")
# The device headers the provider needs (tern_rdma.h and what it includes).
PROVIDER_HEADERS = ["tern_rdma.h", "tern_hw.h"]


def die(msg):
    sys.stderr.write("generate.py: %s\n" % msg)
    sys.exit(1)


def read(path):
    with open(path) as f:
        return f.read()


def git(*args):
    env = dict(os.environ)
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    return subprocess.run(["git"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          universal_newlines=True, env=env)


def ident():
    """Name <email> for MAINTAINERS, From: and Signed-off-by:."""
    who = os.environ.get("TERN_UPSTREAM_IDENT", "")
    for control in ("packaging/debian/control", "debian/control"):
        path = os.path.join(TOP, control)
        if not who and os.path.isfile(path):
            m = re.search(r"^Maintainer:\s*(.+)$", read(path), re.M)
            who = m.group(1).strip() if m else ""
    if not re.match(r"^[^<>]+ <[^<>@\s]+@[^<>\s]+>$", who):
        die("no identity: set TERN_UPSTREAM_IDENT to 'Name <email>'")
    return who


def date():
    r = git("-C", TOP, "log", "-1", "--format=%aD")
    return r.stdout.strip() or "Thu, 1 Jan 1970 00:00:00 +0000"


def tracked(prefix):
    """Files under prefix that git knows about (or would add), sorted; else all files."""
    files = []
    if os.path.exists(os.path.join(TOP, ".git")):
        r = git("-C", TOP, "ls-files", "--cached", "--others", "--exclude-standard", "--",
                prefix)
        files = [f for f in r.stdout.splitlines() if os.path.isfile(os.path.join(TOP, f))]
    if not files:
        files = []
        for d, _, names in os.walk(os.path.join(TOP, prefix)):
            files += [os.path.relpath(os.path.join(d, n), TOP) for n in names]
    return sorted(f for f in files if not re.search(r"\.(o|ko|cmd|mod|mod\.c|order|symvers)$|"
                                                    r"/\.|~$", f))


def drop_glue(text, path):
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(GLUE_START):
            for j in range(i, len(lines)):
                if GLUE_END.match(lines[j]):
                    rest = lines[j + 1:]
                    while rest and rest[0].strip() == "":
                        rest = rest[1:]
                    return "".join(lines[:i] + ["\n"] + rest)
            break
    die("%s: no out-of-tree glue block ('%s' ... ccflags-y += -I...)" % (path, GLUE_START))


def insert_sorted(text, line, is_entry, key, path, sort=True):
    """Insert line into text among the lines is_entry() selects: before the first whose
    key() sorts after it (sort=True), else after the last of them."""
    lines = text.splitlines(keepends=True)
    idx = [i for i, s in enumerate(lines) if is_entry(s)]
    if not idx:
        die("%s: nothing to anchor %r on" % (path, line.strip()))
    if any(lines[i].rstrip("\n") == line.rstrip("\n") for i in idx):
        die("%s: already has %r" % (path, line.strip()))
    at = idx[-1] + 1
    if sort:
        for i in idx:
            if key(lines[i]) > key(line):
                at = i
                break
    lines.insert(at, line)
    return "".join(lines)


def maintainers_add(text, section, path, marker="Maintainers List"):
    """Insert a MAINTAINERS section (its header line first) in alphabetical order, among the
    sections after the line that starts with marker."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, s in enumerate(lines) if s.startswith(marker)), None)
    if start is None:
        die("%s: no %r" % (path, marker))
    name = section.splitlines()[0]
    for i in range(start + 1, len(lines) - 1):
        if (lines[i - 1].strip() == "" and re.match(r"^[A-Z0-9]", lines[i]) and
                re.match(r"^[A-Z]:\t", lines[i + 1])):
            if lines[i].strip().upper() > name.upper():
                return "".join(lines[:i]) + section + "\n" + "".join(lines[i:])
    die("%s: no section sorts after %r" % (path, name))


def maintainers_section(header, who, lists, status, files):
    s = header + "\n" + "M:\t%s\n" % who
    s += "".join("L:\t%s\n" % li for li in lists)
    s += "S:\t%s\n" % status
    s += "".join("F:\t%s\n" % f for f in sorted(files))
    return s


def file_diff(path, old, new):
    """A git-style diff of one file; old None: a new file."""
    if old == new:
        return ""
    a = [] if old is None else old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    for name, text in (("old", old), ("new", new)):
        if text and not text.endswith("\n"):
            die("%s: the %s text does not end in a newline" % (path, name))
    head = "diff --git a/%s b/%s\n" % (path, path)
    if old is None:
        head += "new file mode 100644\n"
    body = list(difflib.unified_diff(a, b, "/dev/null" if old is None else "a/" + path,
                                     "b/" + path, n=3))
    # difflib writes "@@ -0,0 +1,N @@" for a new file, and "--- a/x\t" never: good for git
    return head + "".join(body)


def diffstat(changes):
    rows, tins, tdel = [], 0, 0
    width = max(len(p) for p, _, _ in changes)
    for path, old, new in changes:
        a = [] if old is None else old.splitlines()
        sm = difflib.SequenceMatcher(None, a, new.splitlines(), autojunk=False)
        ins = dels = 0
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag in ("replace", "delete"):
                dels += i2 - i1
            if tag in ("replace", "insert"):
                ins += j2 - j1
        tins += ins
        tdel += dels
        rows.append((path, ins, dels))
    most = max(i + d for _, i, d in rows) or 1
    scale = min(1.0, (78 - width - 8) / most)
    out = []
    for path, ins, dels in rows:
        plus = int(round(ins * scale)) or (1 if ins else 0)
        minus = int(round(dels * scale)) or (1 if dels else 0)
        out.append(" %-*s | %4d %s%s\n" % (width, path, ins + dels, "+" * plus, "-" * minus))
    out.append(" %d files changed, %d insertions(+), %d deletions(-)\n" %
               (len(rows), tins, tdel))
    return "".join(out)


def patch_text(who, when, subject, body, changes):
    """An mbox patch as git format-patch writes it; changes: [(path, old or None, new)]."""
    changes = [c for c in changes if c[1] != c[2]]
    msg = "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
    msg += "From: %s\nDate: %s\nSubject: %s\n\n" % (who, when, subject)
    msg += body.strip("\n") + "\n\nSigned-off-by: %s\n---\n" % who
    msg += diffstat(changes) + "\n"
    msg += "".join(file_diff(p, o, n) for p, o, n in changes)
    return msg + "-- \ntern scripts/upstream/generate.py\n\n"


class Tree:
    """A source tree read through its files, with the changes the patches make so far."""

    def __init__(self, root):
        self.root = root
        self.cur = {}

    def get(self, path):
        """The file as the tree has it: at its git HEAD when it is a git tree (the
        pristine source, whatever the work tree holds), else on disk."""
        if path in self.cur:
            return self.cur[path]
        if os.path.isdir(os.path.join(self.root, ".git")):
            r = git("-C", self.root, "show", "HEAD:" + path)
            return r.stdout if r.returncode == 0 else None
        full = os.path.join(self.root, path)
        if not os.path.isfile(full):
            return None
        return read(full)

    def change(self, path, new):
        old = self.get(path)
        self.cur[path] = new
        return (path, old, new)


def copy_dir(tree, src_prefix, dst_prefix, transform=None):
    changes = []
    for f in tracked(src_prefix):
        rel = os.path.relpath(f, src_prefix)
        dst = os.path.join(dst_prefix, rel)
        text = read(os.path.join(TOP, f))
        if os.path.basename(f) == "Kbuild" and dst_prefix.startswith("drivers/"):
            text = drop_glue(text, f)
            dst = os.path.join(os.path.dirname(dst), "Makefile")
        if transform:
            text = transform(dst, text)
        changes.append(tree.change(dst, text))
    if not changes:
        die("nothing under %s" % src_prefix)
    return changes


def source_line(s):
    m = re.match(r'^source "([^"]+)"', s)
    return m.group(1) if m else ""


def obj_dir(s):
    m = re.match(r"^obj-\$\(CONFIG_\w+\)\s*\+=\s*(\S+)", s)
    return m.group(1) if m else ""


def linux(args):
    t = Tree(args.tree)
    who = ident()
    when = date()
    for need in ("MAINTAINERS", "drivers/net/ethernet/Kconfig",
                 "drivers/infiniband/hw/Makefile"):
        if t.get(need) is None:
            die("%s is not a Linux source tree (no %s)" % (args.tree, need))
    os.makedirs(args.out, exist_ok=True)
    for f in os.listdir(args.out):
        if f.endswith(".patch") or f.endswith(".txt"):
            os.unlink(os.path.join(args.out, f))

    # 1: the headers, tern_core, its hooks and documentation.
    ch = copy_dir(t, "include/linux/tern", "include/linux/tern")
    ch += copy_dir(t, "drivers/net/ethernet/tern", "drivers/net/ethernet/tern")
    p = "drivers/net/ethernet/Kconfig"
    ch.append(t.change(p, insert_sorted(
        t.get(p), 'source "drivers/net/ethernet/tern/Kconfig"\n',
        lambda s: source_line(s).startswith("drivers/net/ethernet/"), source_line, p)))
    p = "drivers/net/ethernet/Makefile"
    ch.append(t.change(p, insert_sorted(
        t.get(p), "obj-$(CONFIG_NET_VENDOR_TERN) += tern/\n",
        lambda s: obj_dir(s) != "", obj_dir, p)))
    docs = "Documentation/networking/device_drivers/ethernet/tern"
    ch += copy_dir(t, docs, docs)
    p = "Documentation/networking/device_drivers/ethernet/index.rst"
    ch.append(t.change(p, insert_sorted(
        t.get(p), "   tern/tern_core\n",
        lambda s: re.match(r"^   [a-z0-9_-]+/\S+$", s) is not None, str.strip, p)))
    p = "Documentation/networking/devlink/tern.rst"
    ch.append(t.change(p, read(os.path.join(TOP, p))))
    p = "Documentation/networking/devlink/index.rst"
    text = t.get(p)
    last_driver = [s for s in text.splitlines() if re.match(r"^   [a-z0-9_-]+$", s)][-1:]
    if not last_driver:
        die("%s: no driver list" % p)
    ch.append(t.change(p, insert_sorted(
        text, "   tern\n", lambda s: s.rstrip("\n") == last_driver[0], str.strip, p,
        sort=False)))
    net_files = ["Documentation/networking/device_drivers/ethernet/tern/",
                 "Documentation/networking/devlink/tern.rst",
                 "drivers/net/ethernet/tern/", "include/linux/tern/"]
    p = "MAINTAINERS"
    ch.append(t.change(p, maintainers_add(t.get(p), maintainers_section(
        "TERN ETHERNET DRIVER", who, ["netdev@vger.kernel.org"], "Maintained", net_files), p)))
    body = """
tern is a RoCEv2 network adapter. tern_core drives its PCI function:
the firmware command queue, event queues, the Ethernet netdev with
checksum, TSO and RSS offloads, devlink (info, parameters, health
reporters, reload) and DCB (PFC, ETS, APP). It creates an auxiliary
device that the RDMA driver, tern_ib, binds to.

The hardware interface (registers, rings, firmware commands, RDMA work
queue entries) is in include/linux/tern/, shared by both drivers; the
interface between them is include/linux/tern/tern_aux.h.
"""
    series = [("net: tern: add the tern_core driver", body, ch)]

    # 2: the uverbs ABI, tern_ib and its hooks.
    ch = [t.change("include/uapi/rdma/tern-abi.h",
                   read(os.path.join(TOP, "include/uapi/rdma/tern-abi.h")))]
    ch += copy_dir(t, "drivers/infiniband/hw/tern", "drivers/infiniband/hw/tern")
    p = "drivers/infiniband/Kconfig"
    ch.append(t.change(p, insert_sorted(
        t.get(p), 'source "drivers/infiniband/hw/tern/Kconfig"\n',
        lambda s: source_line(s).startswith("drivers/infiniband/hw/"), source_line, p)))
    p = "drivers/infiniband/hw/Makefile"
    ch.append(t.change(p, insert_sorted(
        t.get(p), "obj-$(CONFIG_INFINIBAND_TERN)\t\t+= tern/\n",
        lambda s: obj_dir(s) != "", obj_dir, p, sort=False)))
    p = "MAINTAINERS"
    ch.append(t.change(p, maintainers_add(t.get(p), maintainers_section(
        "TERN RDMA DRIVER", who, ["linux-rdma@vger.kernel.org"], "Maintained",
        ["drivers/infiniband/hw/tern/", "include/uapi/rdma/tern-abi.h"]), p)))
    body = """
tern_ib is the RDMA (RoCEv2) driver of the tern network adapter. It
binds to the auxiliary device tern_core creates and registers an
ib_device with RC, UC and UD queue pairs, shared receive queues, memory
regions and windows, and user space verbs: the rdma-core provider
(providers/tern) writes work queue entries and polls completions in
rings it allocates, and rings the doorbells of the page it maps.

include/uapi/rdma/tern-abi.h is the udata the provider and the driver
exchange. The driver reports RDMA_DRIVER_UNKNOWN for now: an
RDMA_DRIVER_TERN id is to be allocated at the end of enum
rdma_driver_id of the tree this is applied to (after RDMA_DRIVER_ERDMA
in 6.1; later kernels have assigned more ids since), and then
TERN_RDMA_DRIVER_ID set to it; the provider matches the PCI function
meanwhile.
"""
    series.append(("RDMA/tern: add the tern_ib driver", body, ch))

    n = len(series)
    names = []
    for i, (subject, body, changes) in enumerate(series, 1):
        slug = re.sub(r"[^A-Za-z0-9_]+", "-", subject).strip("-")
        name = "%04d-%s.patch" % (i, slug)
        with open(os.path.join(args.out, name), "w") as f:
            f.write(patch_text(who, when, "[PATCH %d/%d] %s" % (i, n, subject), body,
                               changes))
        names.append(name)
    with open(os.path.join(args.out, "0000-cover-letter.txt"), "w") as f:
        f.write("Subject: [PATCH 0/%d] tern: a RoCEv2 network adapter\n\n" % n)
        f.write("Generated by scripts/upstream/generate.py from the tern tree for\n%s.\n\n"
                % os.path.abspath(args.tree))
        for i, (subject, _, _) in enumerate(series, 1):
            f.write("  %d/%d %s\n" % (i, n, subject))
        f.write("\nThe rdma-core provider is a separate patch for rdma-core "
                "(generate.py rdma-core).\n")
    for name in names:
        print(os.path.join(args.out, name))


def rdma_core(args):
    t = Tree(args.tree)
    who = ident()
    when = date()
    for need in ("CMakeLists.txt", "kernel-headers/CMakeLists.txt", "MAINTAINERS"):
        if t.get(need) is None:
            die("%s is not an rdma-core source tree (no %s)" % (args.tree, need))
    os.makedirs(args.out, exist_ok=True)
    for f in os.listdir(args.out):
        if f.endswith(".patch"):
            os.unlink(os.path.join(args.out, f))

    def local_headers(dst, text):
        if dst.endswith((".c", ".h")):
            text = re.sub(r"#include <linux/tern/([\w.]+)>", r'#include "\1"', text)
        return text

    ch = copy_dir(t, "providers/tern", "providers/tern", local_headers)
    for h in PROVIDER_HEADERS:
        ch.append(t.change("providers/tern/" + h,
                           local_headers(h, read(os.path.join(TOP, "include/linux/tern", h)))))
    for c in ch:
        if re.search(r"#include <linux/tern/|TERN_INCLUDE_DIR", c[2]):
            die("%s still reaches outside rdma-core's tree" % c[0])
    ch.append(t.change("kernel-headers/rdma/tern-abi.h",
                       read(os.path.join(TOP, "include/uapi/rdma/tern-abi.h"))))
    p = "kernel-headers/CMakeLists.txt"
    text = t.get(p)
    # Both lists name every provider ABI header: the published ones and the
    # rdma_kernel_provider_abi() that makes <kernel-abi/tern-abi.h>.
    blocks = re.split(r"(\n\s*\))", text)
    out = []
    done = 0
    for b in blocks:
        if re.search(r"^  rdma/efa-abi\.h$", b, re.M):
            b = insert_sorted(b + "\n", "  rdma/tern-abi.h\n",
                              lambda s: re.match(r"^  rdma/[\w-]+-abi\.h$", s) is not None,
                              str.strip, p)[:-1]
            done += 1
        out.append(b)
    if done != 2:
        die("%s: expected 2 lists of provider ABI headers, found %d" % (p, done))
    ch.append(t.change(p, "".join(out)))
    p = "CMakeLists.txt"
    text = t.get(p)
    # The providers that need coherent DMA (the first list; rxe and siw follow apart).
    m = re.search(r"^add_subdirectory\(providers/bnxt_re\)\n(?:add_subdirectory\(providers/"
                  r"[^)]*\).*\n)+", text, re.M)
    if not m:
        die("%s: no list of providers starting at bnxt_re" % p)
    block = insert_sorted(m.group(0), "add_subdirectory(providers/tern)\n",
                          lambda s: s.startswith("add_subdirectory(providers/"),
                          lambda s: re.sub(r"\).*", "", s), p)
    ch.append(t.change(p, text[:m.start()] + block + text[m.end():]))
    p = "MAINTAINERS"
    ch.append(t.change(p, maintainers_add(t.get(p), maintainers_section(
        "TERN USERSPACE PROVIDER (for tern_ib.ko)", who, [], "Supported",
        ["providers/tern/"]), p, "Descriptions of section entries")))
    body = """
The userspace provider of tern_ib.ko, the RDMA driver of the tern RoCEv2
network adapter: post_send, post_recv, post_srq_recv, poll_cq and
req_notify_cq bypass the kernel (the provider owns the rings, the kernel
pins them); the extended QP and CQ interfaces; RC, UC and UD.

tern_rdma.h and tern_hw.h are the device's interface as the kernel has
it in include/linux/tern/. kernel-headers/rdma/tern-abi.h is the
kernel's include/uapi/rdma/tern-abi.h. tern has no RDMA_DRIVER_ id yet
(the kernel reports RDMA_DRIVER_UNKNOWN): the provider matches the PCI
function; VERBS_DRIVER_ID(RDMA_DRIVER_TERN) joins its match table once
the kernel has allocated the id.
"""
    name = "0001-providers-tern-add-the-tern-provider.patch"
    with open(os.path.join(args.out, name), "w") as f:
        f.write(patch_text(who, when, "[PATCH] providers/tern: add the tern provider", body,
                           ch))
    files = os.path.join(args.out, "files")
    want = set()
    for path, _, new in ch:
        want.add(path)
        dst = os.path.join(files, path)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.isfile(dst) or read(dst) != new:
            with open(dst + ".tmp", "w") as f:
                f.write(new)
            os.replace(dst + ".tmp", dst)
    for d, _, names in os.walk(files):
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), files)
            if rel not in want:
                os.unlink(os.path.join(d, n))
    print(os.path.join(args.out, name))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["linux", "rdma-core"])
    ap.add_argument("--tree", required=True, help="the source tree the patch is for")
    ap.add_argument("--out", required=True, help="output directory")
    args = ap.parse_args()
    (linux if args.what == "linux" else rdma_core)(args)


if __name__ == "__main__":
    main()
