"""Host scheduling of the cluster's I/O threads: QEMU's main loop and tern-switch run first.

Each guest is a QEMU process with a vCPU thread (TCG) and a main-loop thread that reads the
wire's socket, runs device timers and bottom halves, and injects interrupts. A guest that
busy-polls (perftest's latency tests, a CQ poller) keeps its vCPU thread runnable all the
time, and on a host with fewer cores than runnable threads the main loop that a frame wakes
must wait for a core. How long depends on the host's scheduler: on this project's 2-core host
(Linux 6.18, EEVDF, preemption "none", HZ 250) a woken main loop waited up to the next tick or
the end of the running thread's slice, 1 to 4 ms, in one wake-up in ten, and `ib_write_lat
-s 2` between two tern guests had a typical latency of 2000 us in half the runs instead of
28 us (every ping-pong waited for the receiving main loop). Soft-RoCE on virtio-net waits the
same way. A NIC's interrupt and receive path does not wait for a time slice; these threads
should not either.

So once the guests run, the harness puts each QEMU main loop (the process's main thread; the
vCPU threads keep the normal policy) and each tern-switch process in SCHED_FIFO at priority
1 (threads they create later get the normal policy back): a woken one runs at once. They sleep between frames, and the kernel's RT throttling
(sched_rt_runtime_us, 95 %) bounds them if one ever spins. Measured: `ib_write_lat -s 2`
typical 36 to 40 us in six runs out of six, p99 63 to 157 us (it was 1.2 to 4.4 ms).
Without the privilege for SCHED_FIFO they get a 100 us EEVDF slice instead (Linux 6.12 and
later: sched_setattr's sched_runtime), which lets a waking thread preempt at once when the
kernel preempts on wake-up; here it fixed the 2 ms runs only part of the time.

``TERN_IO_SCHED``: ``fifo`` (the default, falling back to ``slice``), ``slice``, or ``off``
(leave them alone, for measuring the difference).
"""

import ctypes
import os
import struct

_SYS_SCHED_SETATTR = 314        # x86_64
_SCHED_ATTR = "=IIQiIQQQII"     # struct sched_attr, SCHED_ATTR_SIZE_VER1 (56 bytes)
_SCHED_OTHER = 0
SLICE_US = 100

_libc = None


def io_thread(tid):
    """Give thread ``tid`` the I/O threads' scheduling (see above). Returns what it got:
    "fifo", "slice" or None."""
    mode = os.environ.get("TERN_IO_SCHED", "fifo")
    if mode == "fifo":
        try:
            # threads it creates later start with the normal policy
            os.sched_setscheduler(int(tid), os.SCHED_FIFO | os.SCHED_RESET_ON_FORK,
                                  os.sched_param(1))
            return "fifo"
        except OSError:
            mode = "slice"
    if mode == "slice" and set_slice(tid, SLICE_US):
        return "slice"
    return None


def set_slice(tid, us):
    """Ask for a ``us`` microsecond EEVDF slice for thread ``tid`` (SCHED_OTHER, nice 0).
    Returns True when the kernel took the request."""
    global _libc
    if os.uname().machine != "x86_64":
        return False
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(
        struct.pack(_SCHED_ATTR, struct.calcsize(_SCHED_ATTR), _SCHED_OTHER, 0, 0, 0,
                    us * 1000, 0, 0, 0, 0))
    return _libc.syscall(_SYS_SCHED_SETATTR, int(tid), attr, 0) == 0
