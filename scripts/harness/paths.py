"""Where things are: the checkout, build outputs, QEMU, the guest kernel and initramfs."""

import os
import subprocess

from .errors import HarnessError

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.environ.get("TERN_OUT") or os.path.join(TOP, "build")


def qemu_binary():
    """QEMU to run: $TERN_QEMU, else the one scripts/build-qemu.sh builds in $TERN_OUT/qemu."""
    path = os.environ.get("TERN_QEMU") or os.path.join(OUT, "qemu", "qemu-system-x86_64")
    if not os.access(path, os.X_OK):
        raise HarnessError(
            "QEMU not found at %s: run scripts/build-qemu.sh, or set TERN_QEMU "
            "(e.g. TERN_QEMU=/usr/bin/qemu-system-x86_64 for Debian's, without tern)" % path)
    return path


FLAVOURS = ("stock", "debug")


def flavour(requested=None):
    """The kernel flavour to boot: ``requested``, else $TERN_KERNEL when it is ``stock`` or
    ``debug``, else ``stock``. (Any other $TERN_KERNEL value is a kernel image path.)"""
    value = requested or os.environ.get("TERN_KERNEL") or "stock"
    if value not in FLAVOURS:
        if requested:
            raise HarnessError("unknown kernel flavour %r (stock or debug)" % requested)
        return "stock"
    return value


def flavour_out(flav):
    """Build outputs of a flavour: $TERN_OUT for stock, $TERN_OUT/debug for debug."""
    return OUT if flav == "stock" else os.path.join(OUT, flav)


def _script(name, *args):
    try:
        out = subprocess.run([os.path.join(TOP, "scripts", name)] + list(args), check=True,
                             stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise HarnessError("scripts/%s failed: %s" % (name, e)) from None
    return out.strip().splitlines()[-1]


def guest_kernel(flav=None):
    """The guest kernel image: a path in $TERN_KERNEL, else the flavour's: Debian's
    (scripts/guest-kernel.sh) or the debug build (scripts/build-debug-kernel.sh)."""
    env = os.environ.get("TERN_KERNEL")
    if env and env not in FLAVOURS:
        return env
    if flavour(flav) == "debug":
        return os.path.join(_script("build-debug-kernel.sh"), "bzImage")
    root = _script("guest-kernel.sh")
    return os.path.join(root, "boot", "vmlinuz-" + os.path.basename(root))


def guest_initrd(flav=None, image=None):
    """The guest initramfs: $TERN_INITRD, else scripts/mkinitramfs.sh [--debug] (rebuilt if
    stale). ``image``: a named larger image instead (``mkinitramfs.sh --image NAME``: the
    default contents plus scripts/guest/NAME-files.txt), which $TERN_INITRD does not
    replace."""
    if os.environ.get("TERN_INITRD") and not image:
        return os.environ["TERN_INITRD"]
    args = ["--debug"] if flavour(flav) == "debug" else []
    if image:
        args += ["--image", image]
    return _script("mkinitramfs.sh", *args)
