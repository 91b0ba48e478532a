"""tests/guest/apps.t section: UCX 1.13 (Debian 12's) over the RDMA device, with UCX's
defaults (no UCX_* setting a user would not know about; issue 41).

- ``ucx_info -d`` lists the device (tern0:1 or rxe0:1) with the rc_verbs and ud_verbs
  transports;
- ``ucx_perftest`` between the guests in both directions: UCP tag_bw, tag_lat, ucp_put_bw,
  ucp_get and ucp_am_lat over each of rc_verbs (UCX_TLS=rc_v: rc_verbs with ud_verbs for the
  connection set-up, UCX's own alias) and ud_verbs (UCX_TLS=ud_v), tag_bw and tag_lat once more
  with UCX's defaults (no UCX_TLS at all), and UCT's am_lat on each transport. UCX_TLS only
  chooses among the transports UCX offers, as a user picks one; everything else is UCX's
  default. Each run must complete its iterations and report results; on tern, the port's
  hw_counters must show the traffic went over the transport asked for (UD packets for
  ud_verbs, RC requests for rc_verbs, RDMA WRITE / READ requests for put / get over RC).
  On the debug kernel, where each run takes ten times longer: tag_bw and tag_lat only, fewer
  iterations, no UCT test.

Before tern's provider reported the RoCE network header type in a UD receive's wc.sl (as
ConnectX does), ud_verbs dropped every packet on its destination GID check and UCP endpoints
died with "UD endpoint ...: unhandled timeout error" (Documentation/admin/ucx-mpi.rst).
Soft-RoCE's provider still reports sl 0: on an rxe receiver ud_verbs' check is turned off
(UCX_UD_VERBS_ETH_DGID_CHECK=n, only for the Soft-RoCE side, see the manual).
"""

import rdmatest as rt

PORT = 13337

# (test, size): UCP tests over each transport, by what a user measures
UCP_TESTS = (("tag_bw", 65536), ("tag_lat", 8), ("ucp_put_bw", 65536), ("ucp_get", 65536),
             ("ucp_am_lat", 8))
# the debug kernel (KASAN, lockdep) takes ten times longer per run: tag matching only there
UCP_TESTS_DEBUG = (("tag_bw", 65536), ("tag_lat", 8))
DEFAULT_TESTS = (("tag_bw", 65536), ("tag_lat", 8))
TRANSPORTS = (("rc_verbs", "rc_v"), ("ud_verbs", "ud_v"))


def counters(ctx, node):
    """tern's port hw_counters on ``node`` (a dict), or None on Soft-RoCE."""
    if ctx.target.kind_of(node) != "tern":
        return None
    return rt.hw_counters(node, ctx.ibdev(node))


def env_for(ctx, node, tls):
    env = "env UCX_TLS=%s " % tls if tls else "env "
    if ctx.target.kind_of(node) == "rxe":
        # Soft-RoCE's provider leaves wc.sl 0 on UD receives of RoCEv2/IPv4, so UCX reads the
        # destination GID from the wrong bytes of the GRH area and drops every packet.
        env += "UCX_UD_VERBS_ETH_DGID_CHECK=n "
    return env


def parse_final(text):
    """ucx_perftest's "Final:" row: iterations, latency (typical, average, overall, usec),
    bandwidth (average, overall, MB/s), message rate (average, overall)."""
    for line in text.splitlines():
        if line.startswith("Final:"):
            f = line.split()[1:]
            try:
                v = [float(x) for x in f[:8]]
            except ValueError:
                return None
            if len(v) == 8:
                return {"iters": v[0], "lat_typ": v[1], "lat_avg": v[2], "lat_all": v[3],
                        "bw_avg": v[4], "bw_all": v[5], "rate_avg": v[6], "rate_all": v[7]}
    return None


def perftest(ctx, server, client, test, size, iters, tls, uct_dev=None):
    """One ucx_perftest pair; returns (PairResult, Final row or None)."""
    extra = ""
    if uct_dev:
        extra = " -d %s -x %s" % (uct_dev[client.index], tls)
    srv = "%sucx_perftest -p %d" % (env_for(ctx, server, None if uct_dev else tls), PORT)
    cli = "%sucx_perftest %s -p %d -t %s -s %d -n %d -w %d%s" % (
        env_for(ctx, client, None if uct_dev else tls), ctx.ip(server), PORT, test, size,
        iters, max(1, iters // 10), extra)
    res = rt.run_pair(server, client, srv, cli, PORT, ctx.timeout)
    return res, parse_final(res.client.stdout if res.client else "")


def check_transport(t, ctx, name, tls, test, iters, cnt):
    """On tern: the receiver's counters say the traffic went over ``tls``."""
    if cnt is None:
        return
    rc_pkts = cnt["rx_roce_packets"] - cnt["rx_ud_packets"]
    if tls is None:
        ok = cnt["rx_roce_packets"] >= iters
        what = "RoCE packets (a verbs transport, not TCP)"
    elif tls == "ud_verbs":
        ok = cnt["rx_ud_packets"] >= iters and rc_pkts == 0
        what = "UD packets"
    elif test == "ucp_put_bw":
        ok = cnt["rx_write_requests"] >= iters
        what = "RDMA WRITE requests"
    elif test == "ucp_get":
        ok = cnt["rx_read_requests"] >= iters
        what = "RDMA READ requests"
    else:
        ok = rc_pkts >= iters
        what = "RC packets"
    t.ok(ok, "%s: tern's counters show %s" % (name, what),
         "receiver's counter deltas: %s" % " ".join(
             "%s=%d" % (k, v) for k, v in sorted(cnt.items()) if v))


def run_one(ctx, server, client, test, size, iters, tls, alias, label, uct_dev=None):
    t = ctx.t
    name = "ucx: %s %s %dB over %s, %s" % ("UCT" if uct_dev else "UCP", test, size, label,
                                          ctx.direction(server, client))
    # one-sided tests are measured at the target: its counters see the requests
    before = [counters(ctx, server), counters(ctx, client)]
    res, fin = perftest(ctx, server, client, test, size, iters, alias, uct_dev)
    after = [counters(ctx, server), counters(ctx, client)]
    # a latency test's bandwidth rounds to 0.00 MB/s: each test reports its own measure
    good = res.ok and fin is not None and fin["iters"] >= iters and \
        fin["lat_all"] > 0 and (test.endswith("_lat") or fin["bw_all"] > 0)
    t.ok(good, name + ": completes and reports results",
         res.diag() if not good else "")
    if not good:
        return None
    t.diag("%s: %s" % (name, "%.1f us" % fin["lat_all"] if test.endswith("_lat") else
                           "%.2f MB/s" % fin["bw_all"]))
    # the receiver whose counters tell: the server for bandwidth tests and one-sided ones
    # (put and get target its memory), the client for latency tests (it gets the answers)
    side = 1 if test.endswith("_lat") else 0
    if before[side] is not None and after[side] is not None:
        check_transport(t, ctx, name, tls, test, iters, rt.counter_delta(after[side], before[side]))
    return fin


def run(ctx):
    t = ctx.t
    lat_n, bw_n = (50, 20) if ctx.debug else (300, 100)
    # ucx_info: the device with both verbs transports, with UCX's defaults
    for n in ctx.c:
        dev = ctx.ibdev(n)
        r = n.run("ucx_info -d", timeout=120)
        tls = set()
        cur = None
        for line in r.stdout.splitlines():
            line = line.lstrip("#").strip()
            if line.startswith("Transport:"):
                cur = line.split(":", 1)[1].strip()
            elif line.startswith("Device:") and cur:
                if line.split(":", 1)[1].strip() == "%s:1" % dev:
                    tls.add(cur)
        t.ok(r.rc == 0 and {"rc_verbs", "ud_verbs"} <= tls,
             "ucx: %s: ucx_info -d lists %s:1 with rc_verbs and ud_verbs" % (n.name, dev),
             "transports on %s:1: %s\nrc %s\n%s" % (dev, sorted(tls), r.rc, r.stderr[-2000:]))
    uct_dev = {n.index: "%s:1" % ctx.ibdev(n) for n in ctx.c}
    for server, client in ctx.pairs:
        for tls, alias in TRANSPORTS:
            for test, size in UCP_TESTS_DEBUG if ctx.debug else UCP_TESTS:
                iters = lat_n if test.endswith("_lat") else bw_n
                run_one(ctx, server, client, test, size, iters, tls, alias, tls)
            if ctx.debug:
                continue        # UCT's am_lat: on the stock kernel only
            if ctx.mixed:
                # the server opens the device the client names (ucx_perftest sends its
                # parameters over): tern0 on one side, rxe0 on the other cannot be named
                t.skip("ucx: UCT am_lat over %s, %s" % (tls, ctx.direction(server, client)),
                       "UCT tests name one device for both sides; the guests' differ")
                continue
            run_one(ctx, server, client, "am_lat", 8, lat_n, tls, tls, tls, uct_dev=uct_dev)
        for test, size in DEFAULT_TESTS:
            iters = lat_n if test.endswith("_lat") else bw_n
            run_one(ctx, server, client, test, size, iters, None, None, "UCX's defaults")
