#!/usr/bin/python3
"""The RDMA programs people run between servers, over tern (issue 41): middleware and
diagnostics written by others, each with its own data checks on, in one boot of two guests
with the apps image (scripts/guest/apps-files.txt). Each family is a section module under
tests/apps/ (``run(ctx)``), run in the order of SECTIONS:

- rsockets.py: librdmacm's rsockets (rstream, riostream) and qperf over rdma_cm;
- libfabric.py: libfabric's verbs provider (fi_info, fi_pingpong msg, dgram and rdm);
- ucx.py: UCX's verbs transports with UCX's defaults (ucx_info, ucx_perftest);
- mpi.py: Open MPI over UCX, one rank per guest.

TERN_RDMA_TARGET picks the devices as in tests/guest/storage.t: tern (default), rxe (Soft-RoCE
on both guests: the reference) or A+B (node0's kind + node1's kind on one segment:
tests/interop/apps.t runs rxe+tern). TERN_APPS=ucx,mpi runs only those sections.

On the debug kernel (KASAN, lockdep, kmemleak) only the mpi section runs unless TERN_APPS
says otherwise: it drives UCX's rc_verbs and ud_verbs through tern's provider and kernel
paths in a few seconds of traffic, where the other sections took 13 (rsockets, libfabric) and
16 minutes (ucx) of the suite's debug half for the same kernel paths.
"""

import importlib
import os
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(TOP, "tests", "lib"), os.path.join(TOP, "scripts"),
                os.path.join(TOP, "tests", "rdma"), os.path.join(TOP, "tests", "apps")]

from tap import Tap  # noqa: E402
from harness import Cluster, HarnessError, Wire  # noqa: E402
from ternlib import check_kernel_clean  # noqa: E402
import rdmatest as rt  # noqa: E402

SECTIONS = ("rsockets", "libfabric", "ucx", "mpi")
DEBUG_SECTIONS = ("mpi",)
KIND = os.environ.get("TERN_RDMA_TARGET", "tern")
KINDS = KIND.split("+") if "+" in KIND else [KIND, KIND]
NIC = {"tern": "tern", "rxe": "virtio"}
ONLY = [s for s in os.environ.get("TERN_APPS", "").split(",") if s]

t = Tap()
if len(KINDS) != 2 or any(k not in NIC for k in KINDS):
    t.abort("TERN_RDMA_TARGET must be tern, rxe or A+B of them, not %r" % KIND)
if any(s not in SECTIONS for s in ONLY):
    t.abort("TERN_APPS names sections of %s, not %r" % (",".join(SECTIONS), ONLY))
MIXED = KINDS[0] != KINDS[1]
c = Cluster(nodes=2, wires=[Wire([NIC[k] for k in KINDS])] if MIXED else [Wire("tern"),
                                                                              "virtio"],
            initrd_image="apps", name="apps" + ("" if KIND == "tern" else "-" + KIND))
try:
    c.boot()
except HarnessError as e:
    t.abort("cluster did not boot: %s" % e)


class Context:
    """What every section gets: the TAP stream, the cluster, the RDMA target, and the
    (server, client) pairs of both directions."""

    def __init__(self):
        self.t = t
        self.c = c
        self.debug = c.flavour == "debug"
        self.mixed = MIXED
        self.target = rt.Target(c, KINDS, 0 if MIXED or KIND == "tern" else 1)
        self.pairs = ((c[1], c[0]), (c[0], c[1]))      # (server, client)
        self.timeout = 600 if self.debug else 180      # one program pair

    def ibdev(self, node):
        return self.target.ibdev_of(node)

    def ip(self, node):
        return self.target.ip(node)

    @staticmethod
    def direction(server, client):
        return "%s -> %s" % (client.name, server.name)


ctx = Context()
if ctx.debug and not ONLY:
    ONLY = list(DEBUG_SECTIONS)
    t.diag("debug kernel: sections %s only (TERN_APPS=%s runs them all)" % (
        ",".join(ONLY), ",".join(SECTIONS)))
times = []
try:
    why = ctx.target.available(c[0]) or ctx.target.available(c[1])
    if why:
        t.skip_all(why)
    try:
        ctx.target.setup()
        for n in c:
            r = rt.load_rdma_cm(n)
            if r.rc != 0:
                raise rt.RdmaError("%s: loading rdma_cm: %s%s" % (n.name, r.stdout, r.stderr))
        ready = True
    except (rt.RdmaError, HarnessError) as e:
        ready = False
        t.ok(False, "the RDMA devices come up on both guests", str(e))
    if ready:
        for name in SECTIONS:
            if ONLY and name not in ONLY:
                continue
            t0 = time.monotonic()
            importlib.import_module(name).run(ctx)
            times.append((name, time.monotonic() - t0))
    check_kernel_clean(t, c)
except HarnessError as e:
    t.ok(False, "harness error", str(e))
finally:
    c.close()
    t.diag("sections: " + ", ".join("%s %.0f s" % x for x in times))
    t.diag("logs: %s" % c.result_dir)
t.exit()
