"""tests/guest/apps.t section: rsockets and qperf (issue 41).

rsockets is librdmacm's socket API over RDMA (an RC QP per stream, connected through
rdma_cm; data moved by SENDs and RDMA WRITEs into the peer's receive buffers):

- ``rstream -T v``: a stream of messages from the client to the server and back, every
  byte checked against the running pattern the sender wrote (rdmacm-utils' verify_buf: one
  lost, duplicated or reordered byte fails the run, which then exits non-zero);
- ``riostream -T v``: the same over riomap()/riowrite(), rsockets' direct RDMA WRITEs into a
  buffer the peer mapped, checked the same way;
- ``rcopy``: a file of random data copied over rsockets, its SHA-256 compared on the far side;

each in both directions (node0 client -> node1 server, then node1 -> node0).

qperf 0.4.11 with ``-cm1`` (its QPs connected through rdma_cm): ``rc_bw``, ``rc_lat``,
``rc_rdma_read_bw``, ``rc_rdma_write_lat``, both directions; each must complete and report
its number (the numbers go to the TAP diagnostics and Documentation/admin/libfabric-rsockets.rst,
they are not judged here). qperf 0.4.11 connects only its RC tests through rdma_cm: for UD
and UC it ignores ``-cm1`` (rd_params in src/rdma.c: "warning: -cm1 set but not used in
test ud_lat") and takes its own LID-only path below, so its UD and UC tests cannot run on
RoCE at all.

Without rdma_cm qperf cannot run on any RoCE device, ConnectX included: its own connection
setup (src/rdma.c, ib_open/ib_prep) exchanges only LIDs, QPNs, PSNs and keys over its TCP
socket and builds every address vector from the peer's LID (``is_global`` 0, no GID), which
is 0 on RoCE. The kernel refuses a RoCE address without a GRH (EINVAL from
``ibv_modify_qp`` to RTR: "failed to modify QP to RTR"; for UD from ``ibv_create_ah``:
"failed to create address handle"), as it does for Soft-RoCE and mlx5. One check below runs
``qperf rc_bw`` without ``-cm1`` and expects exactly that refusal, so that a device which
took an address without a GRH (and then sent to nowhere) would show.
"""

import re
import time

import rdmatest as rt

# rstream / riostream: -S bytes a transfer, -C transfers each way per iteration, -I iterations
RSTREAM = ("-S 65536 -C 16 -I 16",    # 16 MiB each way
           "-S 100 -C 1 -I 500")      # small messages: 500 round trips
RIOSTREAM = ("-S 65536 -C 16 -I 16",)
RSTREAM_DEBUG = ("-S 65536 -C 4 -I 2", "-S 100 -C 1 -I 50")
RIOSTREAM_DEBUG = ("-S 65536 -C 4 -I 2",)
FILE_MB = 16                          # rcopy's file of random data
QPERF_TESTS = ("rc_bw", "rc_lat", "rc_rdma_read_bw", "rc_rdma_write_lat")
QPERF_TIME = 2                        # seconds each qperf test runs (-t)
QPERF_PORT = 19765                    # qperf's control port (its default)
RCOPY_PORT = 7471                     # rcopy's default rsockets port


def attempts(res):
    return " after %d start attempts" % res.attempts if res.attempts > 1 else ""


def failed_verify(res):
    return any(r is not None and "data verification failed" in r.stdout + r.stderr
               for r in (res.client, res.server))


def rsock_pair(ctx, prog, server, client, opts):
    """``prog`` (rstream or riostream) with ``opts`` and -T v: the server bound to its RDMA
    address, the client connecting to it."""
    port = rt.next_port()
    sip = ctx.ip(server)
    return rt.run_pair(server, client, "%s -b %s -p %d -T v %s" % (prog, sip, port, opts),
                       "%s -s %s -p %d -T v %s" % (prog, sip, port, opts), port,
                       ctx.timeout, retries=2, listening=rt.cm_listening)


def rcopy_check(ctx, server, client):
    """A file of FILE_MB MiB of random data from ``client`` to ``server`` through rcopy; the
    SHA-256 on both sides. Returns (ok, description, diagnostics)."""
    src, dst = "/tmp/rcopy-src.bin", "/tmp/rcopy-dst-%s.bin" % client.name
    r = client.run("head -c %d /dev/urandom > %s && sha256sum %s" % (FILE_MB << 20, src, src),
                   timeout=60)
    want = r.stdout.split()[0] if r.rc == 0 and r.stdout else None
    server.run("rm -f %s" % dst, timeout=30)
    job = server.spawn("exec timeout -s KILL %d rcopy -p %d" % (ctx.timeout + 20, RCOPY_PORT),
                       timeout=ctx.timeout + 40)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not job.done():
        if rt.cm_listening(server, RCOPY_PORT):
            break
        time.sleep(0.2)
    t0 = time.monotonic()
    cr = client.run("timeout -s KILL %d rcopy %s %s:%s -p %d" % (
        ctx.timeout, src, ctx.ip(server), dst, RCOPY_PORT), timeout=ctx.timeout + 30)
    secs = time.monotonic() - t0
    got = server.run("sha256sum %s" % dst, timeout=60)
    job.kill(9)
    sr = job.wait(timeout=60, raise_timeout=False)
    have = got.stdout.split()[0] if got.rc == 0 and got.stdout else None
    ok = want is not None and cr.rc == 0 and have == want
    diag = "client (rc %s): %s%s\nserver: %s%s\nsha256 sent %s, received %s" % (
        cr.rc, cr.stdout[-1500:], cr.stderr[-1500:], sr.stdout[-1500:], sr.stderr[-1500:],
        want, have)
    return ok, "rcopy %s: %d MiB of random data, SHA-256 equal on the far side (%.0f s)" % (
        ctx.direction(server, client), FILE_MB, secs), diag


QPERF_NUM = re.compile(r"^\s*(bw|latency|msg_rate)\s*=\s*([\d.]+)\s*(\S+)", re.M)
# qperf's rdma_cm server sends its port to the client before rdma_listen() (cm_open_server in
# src/rdma.c): a client quicker than that is rejected as for an unknown service. A start-up
# race of qperf's, not of the device: such a run is tried again.
QPERF_RACE = "unexpected event from RDMA CM: Event rejected"


def tcp_any_listening(node, port):
    """True when something on ``node`` listens on TCP ``port``, IPv4 or IPv6 (qperf's server
    listens on an IPv6 socket, which takes IPv4 connections too)."""
    r = node.run("grep -qi ':%04X 0\\{8,32\\}:0000 0A' /proc/net/tcp /proc/net/tcp6" % port,
                 timeout=20)
    return r.rc == 0


def qperf_server(ctx, server):
    """A qperf server on ``server`` listening on its control port: the Job."""
    job = server.spawn("exec timeout -s KILL %d qperf -lp %d" % (4 * ctx.timeout, QPERF_PORT),
                       timeout=4 * ctx.timeout + 40)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not job.done():
        if tcp_any_listening(server, QPERF_PORT):
            break
        time.sleep(0.2)
    return job


def qperf_client(ctx, server, client, test, cm=True, retries=3):
    """One qperf test from ``client`` against the qperf server on ``server``: (Result,
    [(quantity, value, unit)] parsed from its output, attempts)."""
    for attempt in range(1, retries + 1):
        r = client.run("timeout -s KILL %d qperf %s -lp %d -t %d %s %s" % (
            ctx.timeout, "-cm1" if cm else "", QPERF_PORT, QPERF_TIME, ctx.ip(server), test),
            timeout=ctx.timeout + 30)
        if r.rc == 0 or QPERF_RACE not in r.stdout + r.stderr:
            break
        time.sleep(1)
    nums = [(m.group(1), float(m.group(2)), m.group(3)) for m in QPERF_NUM.finditer(r.stdout)]
    return r, nums, attempt


def run(ctx):
    t = ctx.t
    runs = [("rstream", o) for o in (RSTREAM_DEBUG if ctx.debug else RSTREAM)]
    runs += [("riostream", o) for o in (RIOSTREAM_DEBUG if ctx.debug else RIOSTREAM)]
    for prog, opts in runs:
        for server, client in ctx.pairs:
            res = rsock_pair(ctx, prog, server, client, opts)
            perf = res.client.stdout.strip().splitlines()[-1:] if res.client else []
            t.ok(res.ok and not failed_verify(res),
                 "%s %s (%s, -T v): every byte verified both ways (%.0f s)%s" % (
                     prog, ctx.direction(server, client), opts, res.seconds, attempts(res)),
                 res.diag())
            if res.ok and perf:
                t.diag("%s %s: %s" % (prog, ctx.direction(server, client), perf[0]))

    for server, client in ctx.pairs:
        ok, desc, diag = rcopy_check(ctx, server, client)
        t.ok(ok, desc, diag)

    # --- qperf over rdma_cm -------------------------------------------------------------------
    for server, client in ctx.pairs:
        job = qperf_server(ctx, server)
        for name in QPERF_TESTS:
            r, nums, tries = qperf_client(ctx, server, client, name)
            t.ok(r.rc == 0 and nums and all(v > 0 for _, v, _ in nums),
                 "qperf -cm1 %s %s: completes and reports %s%s" % (
                     name, ctx.direction(server, client),
                     ", ".join("%s %g %s" % x for x in nums) or "nothing",
                     " (attempt %d)" % tries if tries > 1 else ""),
                 "rc %s\n%s\n%s" % (r.rc, r.stdout[-2000:], r.stderr[-2000:]))
        refused = None
        if server is ctx.pairs[0][0]:
            # --- refused on any RoCE device: see the module's docstring ------------------
            refused = qperf_client(ctx, server, client, "rc_bw", cm=False)
        job.kill(9)
        sres = job.wait(timeout=60, raise_timeout=False)
        if refused:
            # Both ends move their QP to RTR; whichever refuses first says so, and when it
            # is the server the client prints only "server: " (qperf loses the text).
            r, nums, _ = refused
            out = r.stdout + r.stderr
            sout = (sres.stdout + sres.stderr) if sres else ""
            t.ok(r.rc != 0 and not nums and "failed to modify QP to RTR" in out + sout,
                 "qperf rc_bw without rdma_cm %s: refused at RTR (its address is a LID, no "
                 "GRH: RoCE cannot route it)" % ctx.direction(server, client),
                 "client rc %s\n%s\nserver:\n%s" % (r.rc, out[-2000:], sout[-2000:]))
