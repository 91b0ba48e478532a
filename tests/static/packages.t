#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tern's Debian packages, installed on the host as an admin installs them.

1. scripts/build-packages.sh builds tern-dkms_<ver>_all.deb and
   ibverbs-provider-tern_<ver>_<arch>.deb with dpkg-buildpackage (cached when nothing
   changed); their contents (dpkg-deb -c) and control data are what they must be, the
   provider at the paths where Debian's own ibverbs-providers keeps its providers.
2. `apt-get install ./...deb` installs both: dh_dkms's postinst runs dkms, which builds and
   installs tern_core.ko and tern_ib.ko for the guests' Debian kernel (the host may run
   another kernel; DKMS builds for every kernel under /lib/modules with headers, and for the
   running one when it has headers): `dkms status`, the modules under updates/dkms with that
   kernel's vermagic, depmod's view of them.
3. Debian's libibverbs finds the provider with nothing copied by hand: `ibv_devices` in a
   private mount namespace, shown a fake tern RDMA device (a sysfs tree through SYSFS_PATH
   and a /dev/infiniband/uverbs0 on a private /dev), lists it: libibverbs read
   /etc/libibverbs.d/tern.driver, loaded libtern-rdmav34.so from its provider directory and
   the provider matched the device's PCI ID. After removal the same run lists nothing.
4. `apt-get purge` removes both and leaves no trace: no dkms entry, no module, no file
   (depmod's index files that the install created under /lib/modules/<kernel>/, where the
   host had only that kernel's headers, are deleted too; DKMS's own signing key
   /var/lib/dkms/mok.key, made by the first dkms build on a host, stays, as it would).
The host's package database is global: the test holds a lock, and purges leftovers of an
interrupted run first.
"""
import fcntl
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from tap import Tap  # noqa: E402

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.environ.get("TERN_OUT", os.path.join(TOP, "build"))
PKGS = ("tern-dkms", "ibverbs-provider-tern")
APT = ["apt-get", "-y", "-q", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=300"]
ENV = dict(os.environ, DEBIAN_FRONTEND="noninteractive")


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=kw.pop("env", ENV), **kw)


def installed(pkg):
    r = run(["dpkg-query", "-W", "-f", "${db:Status-Status}", pkg])
    return r.returncode == 0 and r.stdout.strip() not in ("", "not-installed", "config-files")


def deb_files(deb):
    """The paths a .deb ships (no directories), without the leading '.'."""
    out = run(["dpkg-deb", "-c", deb]).stdout
    return sorted(line.split()[-1][1:] for line in out.splitlines()
                  if line and not line.startswith("d"))


def guest_kver():
    r = run(["bash", "-c", ". scripts/lib/common.sh && tern_kver"], cwd=TOP)
    return r.stdout.strip()


def fake_ibv_devices(tmp, **env):
    """ibv_devices shown one tern device: returns (rc, output)."""
    with open(os.path.join(TOP, "include", "uapi", "rdma", "tern-abi.h")) as f:
        abi = re.search(r"#define TERN_UVERBS_ABI_VERSION\s+(\d+)", f.read()).group(1)
    with open(os.path.join(TOP, "include", "linux", "tern", "tern_hw.h")) as f:
        hw = f.read()
    ven = int(re.search(r"#define TERN_PCI_VENDOR_ID\s+(0x[0-9a-fA-F]+)", hw).group(1), 16)
    dev = int(re.search(r"#define TERN_PCI_DEVICE_ID\s+(0x[0-9a-fA-F]+)", hw).group(1), 16)
    sysfs = os.path.join(tmp, "sys")
    files = {
        # the kernel's uverbs ABI (IB_USER_VERBS_ABI_VERSION), read first by libibverbs
        "class/infiniband_verbs/abi_version": "6",
        "class/infiniband_verbs/uverbs0/ibdev": "tern0",
        "class/infiniband_verbs/uverbs0/dev": "231:192",
        "class/infiniband_verbs/uverbs0/abi_version": abi,
        "class/infiniband/tern0/node_type": "1: CA",
        "class/infiniband/tern0/node_guid": "5254:00ff:fe12:3456",
        "class/infiniband/tern0/device/modalias":
            "pci:v%08Xd%08Xsv00001AF4sd00001100bc02sc00i00" % (ven, dev),
    }
    for path, value in files.items():
        p = os.path.join(sysfs, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(value + "\n")
    # A private /dev in a private mount namespace: the host's /dev is not touched.
    script = ("set -e; mount -t tmpfs tern-fake-dev /dev; mkdir /dev/infiniband; "
              "mknod /dev/infiniband/uverbs0 c 231 192; mknod /dev/null c 1 3; "
              "exec ibv_devices")
    r = run(["unshare", "--mount", "--propagation", "private", "bash", "-c", script],
            env=dict(ENV, SYSFS_PATH=sysfs, IBV_SHOW_WARNINGS="1", **env), timeout=60)
    return r.returncode, r.stdout


def purge(t=None):
    present = [p for p in PKGS if installed(p)]
    if not present:
        return True
    r = run(APT + ["purge"] + present, timeout=300)
    if t is not None:
        t.ok(r.returncode == 0, "apt-get purge %s" % " ".join(present), r.stdout[-3000:])
    return r.returncode == 0


def main():
    t = Tap()
    os.makedirs(OUT, exist_ok=True)
    # One run at a time on this host (dpkg and dkms state are global), whatever the checkout.
    lock = open("/run/lock/tern-packages-test.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)

    if any(installed(p) for p in PKGS):
        t.diag("tern packages were installed before this test (an interrupted run?): purging")
        if not t.ok(purge(), "leftover tern packages purged"):
            t.exit()

    r = run(["bash", os.path.join(TOP, "scripts", "build-packages.sh")], timeout=900)
    debs = r.stdout.split()
    if not t.ok(r.returncode == 0, "scripts/build-packages.sh builds the packages",
                r.stdout[-3000:]):
        t.exit()
    with open(os.path.join(TOP, "dkms.conf")) as f:
        ver = re.search(r'^PACKAGE_VERSION="(.*)"$', f.read(), re.M).group(1)
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    multiarch = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).stdout.strip()
    pk = os.path.join(OUT, "packages")
    dkms_deb = os.path.join(pk, "tern-dkms_%s_all.deb" % ver)
    prov_deb = os.path.join(pk, "ibverbs-provider-tern_%s_%s.deb" % (ver, arch))
    t.ok(dkms_deb in debs and prov_deb in debs,
         "it made %s and %s" % (os.path.basename(dkms_deb), os.path.basename(prov_deb)), debs)

    # --- contents -----------------------------------------------------------------------
    src = "/usr/src/tern-%s" % ver
    got = set(deb_files(dkms_deb))
    r = run(["git", "ls-files", "--", "drivers/*.c", "drivers/*.h", "drivers/*Kbuild",
             "drivers/*Kconfig", "include/*.h"], cwd=TOP)
    want = {"%s/%s" % (src, f) for f in r.stdout.split()}
    want |= {"%s/%s" % (src, f) for f in ("dkms.conf", "Makefile", "Kbuild",
                                            "scripts/lib/kver.sh")}
    t.ok(want and want <= got, "tern-dkms ships dkms.conf, Makefile, Kbuild and every driver "
         "source, header and Kconfig under %s (%d files)" % (src, len(want)),
         "missing: %s" % sorted(want - got))
    stray = sorted(f for f in got - want if not f.startswith("/usr/share/doc/tern-dkms/"))
    t.ok(not stray, "tern-dkms ships nothing else (no build output)", stray)
    info = run(["dpkg-deb", "-f", dkms_deb, "Depends", "Version", "Architecture"]).stdout
    t.ok(re.search(r"^Depends:.*\bdkms\b", info, re.M) and
         re.search(r"^Version: %s$" % re.escape(ver), info, re.M) and
         "Architecture: all" in info, "tern-dkms: Version %s, Architecture all, depends on "
         "dkms" % ver, info)
    with tempfile.TemporaryDirectory() as tmp:
        run(["dpkg-deb", "-e", dkms_deb, tmp])
        scripts = ""
        for s in ("postinst", "prerm"):
            if os.path.exists(os.path.join(tmp, s)):
                with open(os.path.join(tmp, s)) as f:
                    scripts += f.read()
        t.ok("/usr/lib/dkms/common.postinst" in scripts and
             "dkms remove -m $DKMS_NAME" in scripts and 'DKMS_VERSION=%s' % ver in scripts,
             "tern-dkms's postinst runs dkms' common.postinst, its prerm dkms remove "
             "(dh_dkms)", scripts[-2000:])
        run(["dpkg-deb", "-x", dkms_deb, tmp])
        with open(os.path.join(tmp, src.lstrip("/"), "dkms.conf")) as f:
            conf = f.read()
        t.ok('PACKAGE_NAME="tern"' in conf and 'PACKAGE_VERSION="%s"' % ver in conf and
             'BUILT_MODULE_NAME[0]="tern_core"' in conf and
             'BUILT_MODULE_NAME[1]="tern_ib"' in conf, "its dkms.conf builds tern %s: "
             "tern_core and tern_ib" % ver, conf)

    # Where Debian's ibverbs-providers keeps providers and their .driver files.
    deb_provider_files = run(["dpkg", "-L", "ibverbs-providers"]).stdout.split()
    libdirs = {os.path.dirname(f) for f in deb_provider_files if f.endswith("-rdmav34.so")}
    confdirs = {os.path.dirname(f) for f in deb_provider_files if f.endswith(".driver")}
    t.eq((sorted(libdirs), sorted(confdirs)),
         (["/usr/lib/%s/libibverbs" % multiarch], ["/etc/libibverbs.d"]),
         "Debian's ibverbs-providers keeps providers in /usr/lib/%s/libibverbs" % multiarch)
    so = "/usr/lib/%s/libibverbs/libtern-rdmav34.so" % multiarch
    got = [f for f in deb_files(prov_deb) if not f.startswith("/usr/share/doc/")]
    t.eq(got, sorted(["/etc/libibverbs.d/tern.driver", so]),
         "ibverbs-provider-tern ships the provider and tern.driver where "
         "ibverbs-providers keeps its own")
    info = run(["dpkg-deb", "-f", prov_deb, "Depends", "Multi-Arch"]).stdout
    t.ok(re.search(r"^Depends:.*\blibibverbs1\b", info, re.M) and "Multi-Arch: same" in info,
         "ibverbs-provider-tern depends on libibverbs1 (dh_shlibdeps), Multi-Arch: same",
         info)
    with tempfile.TemporaryDirectory() as tmp:
        run(["dpkg-deb", "-e", prov_deb, tmp])
        with open(os.path.join(tmp, "conffiles")) as f:
            t.eq(f.read().split(), ["/etc/libibverbs.d/tern.driver"],
                 "tern.driver is a conffile")

    kver = guest_kver()
    t.ok(kver, "the guest kernel's version resolves (%s)" % kver)
    with tempfile.TemporaryDirectory() as tmp:
        rc, out = fake_ibv_devices(tmp)
        t.ok(rc == 0 and not re.search(r"^\s*tern0\s", out, re.M) and
             "no userspace device-specific driver found for tern0" in out,
             "before installing, ibv_devices sees the fake tern0 but has no provider for it",
             out)

    # depmod's index files that dkms creates in /lib/modules/<kernel>/ where only headers
    # were (a host without that kernel installed): removed again at the end
    depmod_before = set(glob.glob("/lib/modules/*/modules.*"))

    # --- install ------------------------------------------------------------------------
    try:
        r = run(APT + ["install", dkms_deb, prov_deb], timeout=600)
        if not t.ok(r.returncode == 0, "apt-get install ./%s ./%s"
                    % (os.path.basename(dkms_deb), os.path.basename(prov_deb)),
                    r.stdout[-4000:]):
            return t
        t.ok(all(installed(p) for p in PKGS), "both are installed (dpkg-query)")

        st = run(["dkms", "status", "-m", "tern"]).stdout
        mach = os.uname().machine
        t.ok(re.search(r"^tern/%s, %s, %s: installed" % (re.escape(ver), re.escape(kver),
                                                          mach), st, re.M),
             "dkms status: tern/%s installed for %s" % (ver, kver), st)
        running = os.uname().release
        if os.path.isdir("/lib/modules/%s/build" % running):
            t.ok(re.search(r"^tern/%s, %s, .*: installed" % (re.escape(ver), re.escape(running)),
                           st, re.M), "dkms status: installed for the running kernel %s"
                 % running, st)
        else:
            t.diag("the host runs %s, which has no headers: DKMS built for %s only"
                   % (running, kver))
        mods = "/lib/modules/%s/updates/dkms" % kver
        for m in ("tern_core", "tern_ib"):
            ko = "%s/%s.ko" % (mods, m)
            vm = run(["modinfo", "-F", "vermagic", ko]).stdout.strip()
            t.ok(vm.split(" ")[:1] == [kver], "%s: vermagic %s" % (ko, vm))
        dep = run(["modinfo", "-F", "depends", "%s/tern_ib.ko" % mods]).stdout
        t.ok("tern_core" in dep.split(",") and "ib_core" in dep.strip().split(","),
             "tern_ib.ko depends on tern_core and ib_core", dep)
        with open("/lib/modules/%s/modules.dep" % kver) as f:
            depfile = f.read()
        t.ok(re.search(r"^updates/dkms/tern_ib\.ko:.*updates/dkms/tern_core\.ko", depfile,
                       re.M), "depmod ran: modules.dep has tern_ib -> tern_core")

        t.ok(os.path.isfile(so) and os.path.isfile("/etc/libibverbs.d/tern.driver"),
             "%s and /etc/libibverbs.d/tern.driver installed" % so)
        with tempfile.TemporaryDirectory() as tmp:
            if os.path.isdir("/sys/class/infiniband"):
                # libibverbs lists devices over RDMA netlink when the host kernel has
                # ib_core, and never reads the fake sysfs tree.
                t.skip("ibv_devices lists tern0 through the installed provider",
                       "the host kernel has ib_core: libibverbs would not read a fake sysfs")
            else:
                rc, out = fake_ibv_devices(tmp, LD_DEBUG="files")
                t.ok(rc == 0 and re.search(r"^\s*tern0\s+525400fffe123456\s*$", out, re.M)
                     and "Warning" not in out,
                     "ibv_devices (Debian's libibverbs) loads the provider from tern.driver "
                     "and lists tern0", out[-3000:])
                # libibverbs falls back to the library path when the provider is not in its
                # provider directory: it must come from there (the package's path)
                t.ok(re.search(r"file=%s \[0\];\s+dynamically loaded by \S*libibverbs\.so\.1"
                               % re.escape(so), out),
                     "libibverbs dlopen()ed it from %s" % so,
                     "\n".join(ln for ln in out.splitlines() if "tern" in ln))
    finally:
        purge(t)

    # --- removed ------------------------------------------------------------------------
    t.ok(not any(installed(p) for p in PKGS), "both are gone (dpkg-query)")
    st = run(["dkms", "status", "-m", "tern"]).stdout
    t.eq(st.strip(), "", "dkms status lists no tern")
    left = [p for p in [src, "/var/lib/dkms/tern", so, "/etc/libibverbs.d/tern.driver"] +
            glob.glob("/lib/modules/*/updates/dkms/tern_*.ko") if os.path.exists(p)]
    t.eq(left, [], "no file left behind (sources, dkms tree, modules, provider, .driver)")
    with open("/lib/modules/%s/modules.dep" % kver) as f:
        t.ok("tern_" not in f.read(), "modules.dep no longer names tern's modules")
    for f in set(glob.glob("/lib/modules/*/modules.*")) - depmod_before:
        os.unlink(f)
    with tempfile.TemporaryDirectory() as tmp:
        rc, out = fake_ibv_devices(tmp)
        t.ok(rc == 0 and not re.search(r"^\s*tern0\s", out, re.M) and
             "no userspace device-specific driver found for tern0" in out,
             "after removal, ibv_devices has no provider for tern0 again", out)
    return t


main().exit()
