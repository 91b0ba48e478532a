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


def _script(name):
    try:
        out = subprocess.run([os.path.join(TOP, "scripts", name)], check=True,
                             stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise HarnessError("scripts/%s failed: %s" % (name, e)) from None
    return out.strip().splitlines()[-1]


def guest_kernel():
    """The guest kernel image: $TERN_KERNEL, else Debian's (scripts/guest-kernel.sh)."""
    if os.environ.get("TERN_KERNEL"):
        return os.environ["TERN_KERNEL"]
    root = _script("guest-kernel.sh")
    return os.path.join(root, "boot", "vmlinuz-" + os.path.basename(root))


def guest_initrd():
    """The guest initramfs: $TERN_INITRD, else scripts/mkinitramfs.sh (rebuilt if stale)."""
    if os.environ.get("TERN_INITRD"):
        return os.environ["TERN_INITRD"]
    return _script("mkinitramfs.sh")
