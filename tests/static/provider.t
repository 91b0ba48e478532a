#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Static checks of tern's libibverbs provider (providers/tern), on the host, no device.

1. scripts/build-provider.sh builds it (incremental) and writes the .driver file;
   scripts/build.sh's initramfs list (from the ibverbs-provider-tern package by default)
   places both where libibverbs looks.
2. It can load into Debian 12's libibverbs 44: every symbol version it imports is one
   Debian's libibverbs.so.1 defines (private ones only IBVERBS_PRIVATE_34), every private
   function it imports is exported there, it has no RPATH/RUNPATH to rdma-core's build
   tree, and dlopen(RTLD_NOW) succeeds in a program linked against Debian's libibverbs.
3. It talks to the kernel only through libibverbs (imports no write/ioctl/syscall), and
   tests/static/provider-mock.c drives it against a mock libibverbs/kernel/device: WQE and
   CQE layouts, doorbell values, error codes, CQ cleaning; its data-path part runs under a
   seccomp filter that traps any system call. That proves the exercised paths of
   post_send/post_recv/poll_cq/req_notify_cq make no system call, not every path.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from tap import Tap  # noqa: E402

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.environ.get("TERN_OUT", os.path.join(TOP, "build"))
SO = os.path.join(OUT, "provider", "libtern-rdmav34.so")
DEBIAN_LIB = "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"
GUEST_SO = "/usr/lib/x86_64-linux-gnu/libibverbs/libtern-rdmav34.so"
GUEST_DRIVER = "/etc/libibverbs.d/tern.driver"

DLOPEN_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <infiniband/verbs.h>
int main(int argc, char **argv)
{
	/* a reference, so that the program really needs Debian's libibverbs */
	int (*fork_init)(void) = ibv_fork_init;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	printf("loaded%s\n", fork_init ? "" : "?");
	/* where Debian's libibverbs keeps verbs_qp.comp_mask: right after the union */
	printf("qp_ex_size %zu\n", sizeof(struct ibv_qp_ex));
	return 0;
}
"""

MOCK_MAP = """IBVERBS_1.1 { global: ibv_dontfork_range; ibv_dofork_range; };
IBVERBS_PRIVATE_34 { global: verbs_register_driver_34; _verbs_init_and_alloc_context;
	verbs_uninit_context; verbs_set_ops; __verbs_log; ibv_cmd_*; };
"""


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, **kw)


def dynsyms(path):
    """(undefined [(name, version)], defined {name: version}, versions) of a shared object."""
    out = run(["objdump", "-T", path]).stdout
    undef, defined = [], {}
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ .{7} (\S+)\s+[0-9a-f]+\s+(?:\(?([\w.@]+)\)?\s+)?(\S+)$",
                     line)
        if not m:
            continue
        sect, ver, name = m.groups()
        if sect == "*UND*":
            undef.append((name, ver or ""))
        else:
            defined[name] = ver or ""
    return undef, defined


def main():
    t = Tap()
    r = run(["bash", os.path.join(TOP, "scripts", "build-provider.sh")])
    if not t.ok(r.returncode == 0 and os.path.isfile(SO), "scripts/build-provider.sh builds",
                r.stdout[-3000:]):
        t.exit()

    with open(os.path.join(OUT, "provider", "tern.driver")) as f:
        t.eq(f.read().strip(), "driver tern", "tern.driver says 'driver tern'")
    # the guest image's list is written by scripts/build.sh (from the provider package, or
    # from build-provider.sh's output), which scripts/test.sh runs before any test
    plist = os.path.join(OUT, "initramfs.d", "tern-provider.list")
    desc = "initramfs list places the provider and its .driver where libibverbs looks"
    if not os.path.isfile(plist):
        t.skip(desc, "no guest image built yet (scripts/build.sh writes %s)" % plist)
    else:
        with open(plist) as f:
            lines = [ln.split() for ln in f if ln.strip() and not ln.startswith("#")]
        t.eq(sorted((ln[0], ln[2]) for ln in lines if len(ln) == 3),
             sorted([("file", GUEST_SO), ("file", GUEST_DRIVER)]), desc)

    undef, _ = dynsyms(SO)
    deb_undef, deb_def = dynsyms(DEBIAN_LIB)
    deb_versions = set(deb_def.values())
    ib = [(n, v) for n, v in undef if v.startswith("IBVERBS")]
    t.ok(ib, "provider imports from libibverbs (%d symbols)" % len(ib))
    bad_ver = sorted({v for _, v in ib if v not in deb_versions})
    t.ok(not bad_ver, "every IBVERBS version it imports is defined by Debian's libibverbs",
         "missing in %s: %s" % (DEBIAN_LIB, bad_ver))
    private = {v for _, v in ib if "PRIVATE" in v}
    t.ok(private <= {"IBVERBS_PRIVATE_34"}, "private ABI: IBVERBS_PRIVATE_34 only",
         "got %s" % sorted(private))
    missing = sorted(n for n, v in ib if deb_def.get(n) != v)
    t.ok(not missing, "every libibverbs function it imports is exported by Debian's (44)",
         "not in %s: %s" % (DEBIAN_LIB, missing))
    forbidden = {"ibv_cmd_reg_dmabuf_mr", "ibv_cmd_create_cq_ex2", "ibv_cmd_query_device"}
    t.ok(not forbidden & {n for n, _ in ib}, "no interface whose ABI differs in 44",
         sorted(forbidden & {n for n, _ in ib}))
    sysc = sorted({n for n, v in undef if n in ("write", "ioctl", "syscall", "read", "writev",
                                                 "sendmsg", "__write_chk")})
    t.ok(not sysc, "provider makes no write/ioctl/syscall itself (kernel calls go through "
         "libibverbs' ibv_cmd_*)", "imports %s" % sysc)
    dyn = run(["readelf", "-d", SO]).stdout
    t.ok("RPATH" not in dyn and "RUNPATH" not in dyn, "no RPATH/RUNPATH into rdma-core's tree",
         dyn)

    qp_ex_size = None
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "dl.c")
        exe = os.path.join(tmp, "dl")
        with open(src, "w") as f:
            f.write(DLOPEN_C)
        r = run(["gcc", "-o", exe, src, "-Wl,--no-as-needed", "-libverbs", "-ldl"])
        if t.ok(r.returncode == 0, "dlopen test program builds against libibverbs-dev",
                r.stdout):
            ldd = run(["ldd", exe]).stdout
            t.ok(re.search(r"libibverbs\.so\.1 => (/usr)?/lib/x86_64-linux-gnu/libibverbs",
                           ldd), "test program uses Debian's libibverbs.so.1", ldd)
            r = run([exe, SO])
            t.ok(r.returncode == 0 and "loaded" in r.stdout,
                 "dlopen(RTLD_NOW) into Debian's libibverbs succeeds", r.stdout)
            m = re.search(r"qp_ex_size (\d+)", r.stdout)
            if m:
                qp_ex_size = int(m.group(1))

        with open(os.path.join(OUT, "provider", "rdma-core-tree")) as f:
            tree = f.read().strip()
        mapf = os.path.join(tmp, "mock.map")
        with open(mapf, "w") as f:
            f.write(MOCK_MAP)
        mock = os.path.join(tmp, "provider-mock")
        if not t.ok(qp_ex_size, "sizeof(struct ibv_qp_ex) in Debian's <infiniband/verbs.h> "
                    "(where libibverbs 44 keeps verbs_qp.comp_mask): %s" % qp_ex_size):
            t.exit()
        r = run(["gcc", "-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter",
                 "-Wno-sign-compare", "-Werror", "-O1", "-g",
                 "-DDEBIAN_QP_EX_SIZE=%d" % qp_ex_size,
                 "-I" + os.path.join(tree, "build", "include"), "-I" + os.path.join(TOP, "include"),
                 "-o", mock, os.path.join(TOP, "tests", "static", "provider-mock.c"),
                 "-rdynamic", "-Wl,--version-script=" + mapf, "-ldl"])
        if not t.ok(r.returncode == 0, "provider-mock.c builds", r.stdout):
            t.exit()
        r = run([mock, SO], timeout=60)
        n = 0
        for line in r.stdout.splitlines():
            m = re.match(r"^(ok|not ok) \d+ - (.*)$", line)
            if m:
                n += 1
                t.ok(m.group(1) == "ok", "mock: " + m.group(2))
        t.ok(n >= 50 and r.returncode == 0, "mock run completed (%d checks, exit %d)"
             % (n, r.returncode), r.stdout[-2000:])
    t.exit()


main()
