"""tests/guest/apps.t section: Open MPI 4.1 (Debian 12's) over UCX across the two guests,
one rank per guest (issue 41).

mpirun runs on node0 and starts the remote daemon (orted) on node1 the way it does over ssh:
Dropbear's SSH server runs on node1, its client dbclient is mpirun's plm_rsh_agent, with a key
made for the run; the launcher and Open MPI's out-of-band channel use the Ethernet side (the
virtio wire; the one wire when the guests have only one). The MPI traffic itself goes over
UCX on the RDMA device: ``--mca pml ucx`` (Open MPI 4.1 only prefers pml ucx by itself on
"mlx*" devices, its pml_ucx_devices default), and ``--mca btl self`` so that there is no TCP
(nor any other) byte transfer layer to fall back to. tern's port hw_counters must have
moved by at least the payload the programs exchanged.

The programs are the project's own (tests/apps/mpi-pingpong.c, mpi-allreduce.c, built with
Debian's mpicc): the ping-pong checks every byte in both directions, the allreduce every
element of int64 and double sums and int maxima.
"""

import re

KEY = "/root/.ssh/id_dropbear"
AGENT = "dbclient -y -y -i %s" % KEY


def launcher_wire(ctx):
    """The Ethernet side: the virtio wire when the RDMA device has its own, else the one."""
    return 0 if ctx.mixed else 1


def setup_launcher(ctx):
    """Dropbear on node1, a client key on node0 authorized there. Returns None or why not."""
    c = ctx.c
    w = launcher_wire(ctx)
    if w != ctx.target.wire:
        c.configure_ip(w)
    head, other = c[0], c[1]
    r = other.run("mkdir -p /etc/dropbear /root/.ssh && chmod 700 /root/.ssh && "
                  "dropbear -R -s -p 22 -P /run/dropbear.pid", timeout=120)
    if r.rc != 0:
        return "dropbear on %s: rc %s %s" % (other.name, r.rc, r.stderr)
    r = head.run("mkdir -p /root/.ssh && chmod 700 /root/.ssh && rm -f %s && "
                 "dropbearkey -t ed25519 -f %s >/dev/null && dropbearkey -y -f %s" %
                 (KEY, KEY, KEY), timeout=120)
    pub = [x for x in r.stdout.splitlines() if x.startswith("ssh-")]
    if r.rc != 0 or not pub:
        return "dropbearkey on %s: rc %s %s %s" % (head.name, r.rc, r.stdout, r.stderr)
    other.put("/root/.ssh/authorized_keys", (pub[0] + "\n").encode())
    other.run("chmod 600 /root/.ssh/authorized_keys", timeout=30)
    r = head.run("%s root@%s 'echo launched on $(hostname)'" % (AGENT, other.ip(w)),
                 timeout=120)
    if r.rc != 0 or ("launched on %s" % other.name) not in r.stdout:
        return "dbclient %s -> %s: rc %s %s %s" % (head.name, other.name, r.rc, r.stdout,
                                                   r.stderr)
    return None


COUNTERS = ("rx_roce_bytes", "tx_roce_bytes", "rx_roce_packets", "rx_ud_packets",
            "rx_send_requests", "rx_write_requests", "rx_read_requests")


def port_counters(ctx):
    """tern's port counters of COUNTERS per tern node: {index: {name: value}} (a node
    whose counters cannot be read maps to None; Soft-RoCE nodes are left out)."""
    out = {}
    for n in ctx.c:
        if ctx.target.kind_of(n) != "tern":
            continue
        d = "/sys/class/infiniband/%s/ports/1/hw_counters" % ctx.ibdev(n)
        r = n.run("cd %s && cat %s" % (d, " ".join(COUNTERS)), timeout=30)
        v = r.stdout.split()
        out[n.index] = (dict(zip(COUNTERS, (int(x) for x in v)))
                        if r.rc == 0 and len(v) == len(COUNTERS) else None)
    return out


def mpirun(ctx, prog, args, timeout):
    c = ctx.c
    w = launcher_wire(ctx)
    net = c[0].ip(w).rsplit(".", 1)[0] + ".0/24"
    # Soft-RoCE's provider reports wc.sl 0 for every UD receive, so UCX's ud_verbs reads
    # the destination GID of RoCEv2/IPv4 packets from the wrong bytes and drops them all
    # (Documentation/admin/ucx-mpi.rst; tern reports the header type as ConnectX does). -x
    # sets it for both ranks; on a tern receiver it only skips a check that passes.
    env = ("-x UCX_UD_VERBS_ETH_DGID_CHECK=n "
           if any(ctx.target.kind_of(n) == "rxe" for n in c) else "")
    cmd = ("mpirun --allow-run-as-root -np 2 --host %s:1,%s:1 --map-by node "
           "--mca plm_rsh_agent '%s' --mca oob_tcp_if_include %s "
           "--mca pml ucx --mca btl self --mca pml_base_verbose 10 %s%s %s" %
           (c[0].ip(w), c[1].ip(w), AGENT, net, env, prog, args))
    return c[0].run("timeout -s KILL %d %s" % (timeout, cmd), timeout=timeout + 30)


def run(ctx):
    t = ctx.t
    c = ctx.c
    why = setup_launcher(ctx)
    t.ok(why is None, "mpi: the launcher (Dropbear) reaches node1 over the Ethernet side",
         why or "")
    if why:
        t.skip("mpi: no launcher", why, count=6)
        return
    iters = 5 if ctx.debug else 20
    sizes = (1, 4096, 65536, 1 << 20)
    rounds = 2 if ctx.debug else 5
    progs = (
        ("mpi-pingpong", "%d %s" % (iters, " ".join(str(s) for s in sizes)),
         "pingpong: ok", iters * sum(sizes)),
        # int64 + double + int elements of the largest count, each round, each way
        ("mpi-allreduce", "%d 1 1000 65536" % rounds, "allreduce: ok on 2 ranks",
         rounds * 65536 * 20),
    )
    for prog, args, okline, payload in progs:
        before = port_counters(ctx)
        r = mpirun(ctx, prog, args, ctx.timeout)
        after = port_counters(ctx)
        out = r.stdout + r.stderr
        ranks = [line for line in r.stdout.splitlines() if line.startswith("rank ")]
        good = r.rc == 0 and okline in r.stdout
        t.ok(good, "mpi: %s, one rank per guest, results checked" % prog,
             "rc %s\n%s" % (r.rc, out[-4000:]))
        # pml_base_verbose: "[node0:PID] select: component ucx selected", one per rank
        sel = [n.name for n in c if re.search(r"\[%s:\d+\] select: component ucx selected"
                                              % n.name, out)]
        t.ok(len(sel) == 2, "mpi: %s: Open MPI selected pml ucx on both ranks" % prog,
             "selected on: %s\n%s" % (sel, "\n".join(
                 line for line in out.splitlines() if "select" in line)[-2000:]))
        for line in r.stdout.splitlines():
            if line.startswith(("pingpong size", "allreduce count")):
                t.diag("mpi: " + line)
        if ranks:
            t.diag("mpi: " + "; ".join(ranks))
        moved = {}
        for i in sorted(after):
            if before.get(i) and after[i]:
                moved[i] = {k: after[i][k] - before[i][k] for k in COUNTERS}
        if moved:
            t.diag("mpi: %s: tern's counters moved by %s" % (prog, "; ".join(
                "node%d %s" % (i, " ".join("%s %d" % kv for kv in m.items()))
                for i, m in moved.items())))
            t.ok(good and all(m["rx_roce_bytes"] >= payload and m["tx_roce_bytes"] >= payload
                              for m in moved.values()),
                 "mpi: %s: tern's RoCE byte counters moved (>= %d bytes each way)" %
                 (prog, payload))
        else:
            t.skip("mpi: %s: tern's counters" % prog, "no tern device in this run")
