"""The plots of every benchmark, drawn from its results object alone (bench/results.py), with
Debian's matplotlib (python3-matplotlib) into SVG files.

render(doc, out) draws the plots of doc["bench"] into the directory ``out`` and returns their
paths. The SVGs are deterministic (a fixed hash salt, text kept as text, no date in the
metadata): the same results give the same bytes, so a figure committed beside its data
changes only when the data does.
"""

import math
import os
import statistics

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

matplotlib.rcParams.update({
    "svg.hashsalt": "tern",
    "svg.fonttype": "none",
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 100,
})

PEER_STYLE = {"tern": "-", "rxe": "--", "tern-sr": ":", "virtio-net": "--", "tcp": "-."}
OP_COLOR = {"write": "C0", "read": "C1", "send": "C2", "memcpy": "C7"}
PEER_LABEL = {"tern": "tern", "rxe": "Soft-RoCE", "tern-sr": "tern, selective repeat",
              "tcp": "NVMe/TCP (virtio-net)", "virtio-net": "virtio-net"}


def size_str(n):
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return "%d MiB" % (n >> 20)
    if n >= 1024 and n % 1024 == 0:
        return "%d KiB" % (n >> 10)
    return "%d B" % n


def median(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def spread(v):
    """(median, median - min, max - median) of the values that exist, or None."""
    v = [x for x in v if x is not None]
    if not v:
        return None
    m = statistics.median(v)
    return m, m - min(v), max(v) - m


def caption(doc):
    h = doc["host"]
    return "%s, %s%s; host load %.2f / %.2f, other work %.2f cores%s" % (
        doc["date"][:10], (doc["tree"]["describe"] or "?"),
        "-dirty" if doc["tree"]["dirty"] else "", h["load_before"][0], h["load_after"][0],
        h["other_cores"], " (noisy)" if h["noisy"] else "")


def finish(fig, doc, out, name):
    fig.text(0.01, 0.005, caption(doc), fontsize=7, color="0.4", va="bottom")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path = os.path.join(out, name)
    fig.savefig(path, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return path


def size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([size_str(s) for s in sizes])
    ax.minorticks_off()


def bars(ax, groups, series, values, errs=None, colors=None):
    """Grouped bars: values[s][g] for each series s (None: no bar)."""
    w = 0.8 / max(1, len(series))
    for i, s in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * w for g in range(len(groups))]
        v = [values[s][g] if values[s][g] is not None else 0 for g in range(len(groups))]
        e = None
        if errs:
            e = [[errs[s][g][0] if errs[s][g] else 0 for g in range(len(groups))],
                 [errs[s][g][1] if errs[s][g] else 0 for g in range(len(groups))]]
        ax.bar(xs, v, w, yerr=e, capsize=2, label=PEER_LABEL.get(s, s),
               color=(colors or {}).get(s, "C%d" % i))
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)


# ---- bench/rdma.py: rows {kind: bw|lat, op, size, peer, runs: [{mbs, msgs, kernel, busy} |
#      {typical, p99} | {why}]}

def rdma(doc, out):
    rows = doc["rows"]
    bw = [r for r in rows if r["kind"] == "bw"]
    lat = [r for r in rows if r["kind"] == "lat"]
    paths = []
    if bw:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
        sizes = sorted({r["size"] for r in bw})
        for op in ("write", "read", "send"):
            for peer in ("tern", "rxe"):
                pts = [(r["size"], spread([x.get("mbs") for x in r["runs"]]),
                        spread([x.get("msgs") for x in r["runs"]]))
                       for r in bw if r["op"] == op and r["peer"] == peer]
                pts = sorted(p for p in pts if p[1])
                if not pts:
                    continue
                lab = "%s %s" % (op.upper(), PEER_LABEL[peer])
                for ax, k in ((a1, 1), (a2, 2)):
                    ax.errorbar([p[0] for p in pts], [p[k][0] for p in pts],
                                yerr=[[p[k][1] for p in pts], [p[k][2] for p in pts]],
                                color=OP_COLOR[op], ls=PEER_STYLE[peer], marker="o",
                                ms=3, capsize=2, label=lab)
        for ax, t, y in ((a1, "bandwidth", "MB/s"), (a2, "message rate", "messages/s")):
            size_axis(ax, sizes)
            ax.set_yscale("log")
            ax.set_title("perftest %s, two guests (median, min..max)" % t)
            ax.set_xlabel("message size")
            ax.set_ylabel(y)
        a1.legend(fontsize=7)
        paths.append(finish(fig, doc, out, "rdma-bandwidth.svg"))
    if lat:
        groups = sorted({(r["op"], r["size"]) for r in lat},
                        key=lambda g: (g[1], ("write", "read", "send").index(g[0])))
        fig, ax = plt.subplots(figsize=(10, 3.8))
        series = [(p, k) for p in ("tern", "rxe") for k in ("typical", "p99")]
        vals, errs = {}, {}
        for s in series:
            vals[s], errs[s] = [], []
            for op, size in groups:
                r = [r for r in lat if r["op"] == op and r["size"] == size and r["peer"] == s[0]]
                sp = spread([x.get(s[1]) for x in r[0]["runs"]]) if r else None
                vals[s].append(sp[0] if sp else None)
                errs[s].append(sp[1:] if sp else None)
        w = 0.8 / len(series)
        for i, s in enumerate(series):
            xs = [g + (i - 1.5) * w for g in range(len(groups))]
            ax.bar(xs, [v or 0 for v in vals[s]], w,
                   yerr=[[e[0] if e else 0 for e in errs[s]], [e[1] if e else 0 for e in errs[s]]],
                   capsize=2, color="C0" if s[0] == "tern" else "C3",
                   alpha=1.0 if s[1] == "typical" else 0.5,
                   label="%s, %s" % (PEER_LABEL[s[0]], "typical (median)" if s[1] == "typical"
                                     else "99th percentile"))
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(["%s %s" % (op.upper(), size_str(s)) for op, s in groups])
        ax.set_yscale("log")
        ax.set_ylabel("latency (us)")
        ax.set_title("perftest ib_*_lat, two guests: typical and 99th percentile "
                     "(median of the runs, min..max)")
        ax.legend(fontsize=7)
        paths.append(finish(fig, doc, out, "rdma-latency.svg"))
    return paths


# ---- bench/loss.py: rows {measure, loss_pct, peer: tern|tern-sr|rxe, bw (MB/s or None), ...}

def loss(doc, out):
    rows = doc["rows"]
    measures = []
    for r in rows:
        if r["measure"] not in measures:
            measures.append(r["measure"])
    fig, axs = plt.subplots(1, len(measures), figsize=(4.2 * len(measures), 3.8),
                            squeeze=False)
    for ax, m in zip(axs[0], measures):
        for peer in ("tern", "tern-sr", "rxe"):
            pts = sorted((r["loss_pct"], r["bw"]) for r in rows
                         if r["measure"] == m and r["peer"] == peer)
            base = dict(pts).get(0.0)
            if not pts or not base:
                continue
            ax.plot([p[0] for p in pts], [100.0 * p[1] / base if p[1] else 0 for p in pts],
                    marker="o", ms=3, ls=PEER_STYLE[peer],
                    color={"tern": "C0", "tern-sr": "C2", "rxe": "C3"}[peer],
                    label="%s (%.0f MB/s lossless)" % (PEER_LABEL[peer], base))
        ax.set_xscale("symlog", linthresh=0.01)
        ax.set_ylim(0, 110)
        ax.set_title(m)
        ax.set_xlabel("packets dropped (%, both directions)")
        ax.set_ylabel("bandwidth kept (% of lossless)")
        ax.legend(fontsize=7)
    return [finish(fig, doc, out, "loss.svg")]


# ---- bench/tcp.py: rows {nic, run, mbps, mbps_per_vcpu}

def tcp(doc, out):
    rows = doc["rows"]
    nics = []
    for r in rows:
        if r["nic"] not in nics:
            nics.append(r["nic"])
    fig, axs = plt.subplots(1, 2, figsize=(8, 3.5))
    for ax, key, t in ((axs[0], "mbps", "iperf3 throughput"),
                       (axs[1], "mbps_per_vcpu", "per core of the sender's vCPU thread")):
        sp = [spread([r[key] for r in rows if r["nic"] == n]) for n in nics]
        ax.bar(range(len(nics)), [s[0] for s in sp], 0.6,
               yerr=[[s[1] for s in sp], [s[2] for s in sp]], capsize=3,
               color=["C0" if n == "tern" else "C3" for n in nics])
        ax.set_xticks(range(len(nics)))
        ax.set_xticklabels(nics)
        ax.set_ylabel("Mb/s")
        ax.set_title("TCP, guest to guest: %s" % t)
    return [finish(fig, doc, out, "tcp.svg")]


# ---- bench/storage.py: rows {transport: tern|rxe|tcp, job, unit, run, iops, mbs,
#      cpu_us_per_io}

def storage(doc, out):
    rows = doc["rows"]
    jobs = []
    for r in rows:
        if r["job"] not in jobs:
            jobs.append(r["job"])
    trs = [t for t in ("tern", "rxe", "tcp") if any(r["transport"] == t for r in rows)]
    fig, axs = plt.subplots(1, len(jobs), figsize=(4.5 * len(jobs), 3.6), squeeze=False)
    for ax, job in zip(axs[0], jobs):
        jr = [r for r in rows if r["job"] == job]
        key = "iops" if jr[0]["unit"] == "IOPS" else "mbs"
        sp = [spread([r[key] for r in jr if r["transport"] == t]) for t in trs]
        ax.bar(range(len(trs)), [s[0] if s else 0 for s in sp], 0.6,
               yerr=[[s[1] if s else 0 for s in sp], [s[2] if s else 0 for s in sp]],
               capsize=3, color=["C0", "C3", "C1"][:len(trs)])
        ax.set_xticks(range(len(trs)))
        ax.set_xticklabels([PEER_LABEL[t] for t in trs], fontsize=7)
        ax.set_ylabel(jr[0]["unit"])
        ax.set_title("NVMe-oF, fio: %s" % job)
    return [finish(fig, doc, out, "storage.svg")]


# ---- bench/d2w.py: rows {kind: lat, mode, typical, p99} | {kind: bw, mode, prog, size, mbs,
#      msgs} | {kind: step, mode, step, label, median, p90, n}

def d2w(doc, out):
    rows = doc["rows"]
    modes = ["inline", "bottom half"]
    steps = [r for r in rows if r["kind"] == "step"]
    fig, axs = plt.subplots(1, 2 if steps else 1, figsize=(11 if steps else 5, 3.8),
                            squeeze=False)
    ax = axs[0][0]
    vals, errs = {}, {}
    for m in modes:
        vals[m], errs[m] = [], []
        for k in ("typical", "p99"):
            sp = spread([r[k] for r in rows if r["kind"] == "lat" and r["mode"] == m])
            vals[m].append(sp[0] if sp else None)
            errs[m].append(sp[1:] if sp else None)
    bars(ax, ["typical", "99th percentile"], modes, vals, errs, {"inline": "C0",
                                                                "bottom half": "C1"})
    ax.set_ylabel("us")
    ax.set_title("ib_write_lat -s 2: doorbell inline or in a bottom half")
    ax.legend(fontsize=7)
    if steps:
        ax = axs[0][1]
        labels = []
        for r in steps:
            if r["step"] not in [x[0] for x in labels]:
                labels.append((r["step"], r["label"]))
        for i, m in enumerate(modes):
            v = {r["step"]: r["median"] for r in steps if r["mode"] == m}
            ys = [j + (i - 0.5) * 0.4 for j in range(len(labels))]
            ax.barh(ys, [v.get(s, 0) for s, _ in labels], 0.4, label=m,
                    color="C0" if m == "inline" else "C1")
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels([lab for _, lab in labels], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("median us over every traced WRITE")
        ax.set_title("where a 2 B WRITE's time goes (traced)")
        ax.legend(fontsize=7)
    return [finish(fig, doc, out, "d2w.svg")]


# ---- bench/congestion.py: rows = congestiontest.Run.as_dict() of every run

def wire_flows(doc, row):
    """Per sender (as a string), the MB/s its NIC sent during the run: the row's
    ``wire_flows``, or ``tx_roce_bytes`` over the run's seconds for results written before
    the rows carried them; {} without counters."""
    if row.get("wire_flows"):
        return {str(k): v for k, v in row["wire_flows"].items()}
    secs = doc.get("settings", {}).get("seconds")
    got = {str(s): row.get("nodes", {}).get(str(s), {}).get("rdma", {}).get("tx_roce_bytes", 0)
           for s in row["flows"]}
    if not secs or not all(got.values()):
        return {}
    return {s: b / secs / 1e6 for s, b in got.items()}


def jain(values):
    """Jain's fairness index: 1 for equal shares, 1/n for one taker."""
    sq = sum(v * v for v in values)
    return sum(values) ** 2 / (len(values) * sq) if sq else 0.0


def congestion(doc, out):
    rows = doc["rows"]
    labels = [r["label"] for r in rows]
    fig, axs = plt.subplots(1, 2, figsize=(11, 3.8))
    ax = axs[0]
    senders = sorted({str(s) for r in rows for s in r["flows"]})
    bottom = [0.0] * len(rows)
    wires = [wire_flows(doc, r) for r in rows]
    on_wire = all(wires)
    if not on_wire:     # results without the NICs' counters: perftest's reports
        wires = [{str(k): v for k, v in r["flows"].items() if v is not None} for r in rows]
    for i, s in enumerate(senders):
        v = [w.get(s) or 0 for w in wires]
        ax.bar(range(len(rows)), v, 0.6, bottom=bottom, label="node%s -> node0" % s,
               color="C%d" % i)
        bottom = [a + b for a, b in zip(bottom, v)]
    for i, w in enumerate(wires):
        ax.text(i, bottom[i], "Jain %.3f" % jain(list(w.values())) if w else "no counters",
                ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=7, rotation=15)
    ax.set_ylabel("MB/s sent on the wire (tx_roce_bytes)" if on_wire else "MB/s (perftest)")
    ax.set_title("2:1 incast in guests through tern-switch: what each sender sent")
    ax.legend(fontsize=7)
    ax = axs[1]
    keys = ("switch XOFF to senders", "CNPs sent (node0)", "switch ECN marks")
    for i, k in enumerate(keys):
        v = []
        for r in rows:
            try:
                v.append(float(str(r["summary"].get(k, "0")).split()[0]))
            except ValueError:
                v.append(0.0)
        ax.bar([x + (i - (len(keys) - 1) / 2) * 0.25 for x in range(len(rows))],
               [1 + x for x in v], 0.25, label=k, color="C%d" % (i + 3))
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=7, rotation=15)
    ax.set_ylabel("1 + count")
    ax.set_title("pauses and congestion notifications")
    ax.legend(fontsize=7)
    return [finish(fig, doc, out, "congestion.svg")]


# ---- bench/model.py: rows {op, size, failed, why, gbps_core, mpps_core, gbps_wall:
#      [median, min, max], cpu_share}

def model(doc, out):
    rows = [r for r in doc["rows"] if not r.get("failed")]
    sizes = sorted({r["size"] for r in rows})
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.8))
    for op in ("write", "read", "send", "memcpy"):
        pts = sorted((r["size"], r["gbps_core"], r["mpps_core"]) for r in rows if r["op"] == op)
        if not pts:
            continue
        for ax, k in ((axs[0], 1), (axs[1], 2)):
            ax.errorbar([p[0] for p in pts], [p[k][0] for p in pts],
                        yerr=[[p[k][0] - p[k][1] for p in pts],
                              [p[k][2] - p[k][0] for p in pts]],
                        marker="o", ms=3, capsize=2, color=OP_COLOR[op],
                        ls="--" if op == "memcpy" else "-",
                        label="memcpy()" if op == "memcpy" else "RDMA " + op.upper())
    for ax, y in ((axs[0], "Gb/s per core (payload)"), (axs[1], "million messages/s per core")):
        size_axis(ax, sizes)
        ax.set_yscale("log")
        ax.set_xlabel("message size")
        ax.set_ylabel(y)
        ax.legend(fontsize=7)
    axs[0].set_title("device model pair on one host core, beside memcpy()")
    axs[1].set_title("message rate (median, min..max)")
    return [finish(fig, doc, out, "model.svg")]


# ---- bench/incast.py: rows = tern-sim's figures per (n, mode: dcqcn|pfc|hpcc), with
#      queue_cdf_kb: the steady-state queue at the percentiles CDF_PCTS

CDF_PCTS = list(range(0, 101))


INCAST_MODES = (("dcqcn", "DCQCN", "C0"), ("hpcc", "HPCC", "C1"), ("pfc", "PFC only", "C3"))


def incast_mode(r):
    return r.get("mode") or ("dcqcn" if r["dcqcn"] else "pfc")


def incast(doc, out):
    rows = doc["rows"]
    sizes = sorted({r["n"] for r in rows})
    fig, axs = plt.subplots(1, len(sizes), figsize=(3.2 * len(sizes), 3.4), squeeze=False,
                            sharey=True)
    for ax, n in zip(axs[0], sizes):
        for mode, lab, c in INCAST_MODES:
            for r in rows:
                if r["n"] == n and incast_mode(r) == mode:
                    ax.plot(r["queue_cdf_kb"], [p / 100 for p in CDF_PCTS], color=c,
                            drawstyle="steps-post", label=lab)
        ax.axvline(rows[0]["kmax_kb"], color="0.5", lw=0.8, ls=":")
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlim(0, 1.5 * max([rows[0]["kmax_kb"]] + [max(r["queue_cdf_kb"]) for r in rows
                                                         if r["n"] == n]))
        ax.set_title("%d:1 incast" % n)
        ax.set_xlabel("bottleneck queue (KB), Kmax dotted")
    axs[0][0].set_ylabel("fraction of samples (steady state)")
    axs[0][0].legend(fontsize=7)
    paths = [finish(fig, doc, out, "incast-queue-cdf.svg")]
    fig, axs = plt.subplots(1, 2, figsize=(9, 3.4))
    for mode, lab, c in INCAST_MODES:
        rs = sorted((r for r in rows if incast_mode(r) == mode), key=lambda r: r["n"])
        if not rs:
            continue
        axs[0].plot([r["n"] for r in rs], [r["queue_p99_kb"] for r in rs], marker="o",
                    color=c, label="p99, " + lab)
        axs[0].plot([r["n"] for r in rs], [r["queue_p50_kb"] for r in rs], marker="o",
                    color=c, ls="--", label="p50, " + lab)
        axs[1].plot([r["n"] for r in rs], [1 + r["switch_xoff"] for r in rs], marker="o",
                    color=c, label=lab)
    axs[0].set_ylabel("bottleneck queue (KB)")
    axs[0].set_yscale("symlog", linthresh=1)
    axs[1].set_ylabel("1 + PFC XOFF frames")
    axs[1].set_yscale("log")
    for ax in axs:
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([str(n) for n in sizes])
        ax.minorticks_off()
        ax.set_xlabel("senders N")
        ax.legend(fontsize=7)
    axs[0].set_title("steady-state queue")
    axs[1].set_title("pauses")
    paths.append(finish(fig, doc, out, "incast-summary.svg"))
    return paths


# ---- bench/fabric.py: rows = tern-ns3-fabric's figures per (workload, load, mode, seed),
#      with slowdown_cdf: the slowdown of every completed flow at the percentiles CDF_PCTS

FABRIC_MODES = (("pfc", "PFC only", "C3"), ("dcqcn", "DCQCN", "C0"), ("hpcc", "HPCC", "C1"))


def fabric(doc, out):
    rows = [r for r in doc["rows"] if r["workload_name"] != "pattern"]
    cells = []
    for r in rows:
        if (r["workload_name"], r["load"]) not in cells:
            cells.append((r["workload_name"], r["load"]))
    fig, axs = plt.subplots(1, len(cells), figsize=(4 * len(cells), 3.6), squeeze=False,
                            sharey=True)
    for ax, (w, load) in zip(axs[0], cells):
        for mode, lab, c in FABRIC_MODES:
            rs = [r for r in rows if r["workload_name"] == w and r["load"] == load and
                  r["mode"] == mode and r.get("slowdown_cdf")]
            if not rs:
                continue
            # pooled over the seeds: the median of each percentile
            xs = [median([r["slowdown_cdf"][i] for r in rs]) for i in range(len(CDF_PCTS))]
            ax.plot(xs, [p / 100 for p in CDF_PCTS], color=c, drawstyle="steps-post",
                    label="%s (%d seeds)" % (lab, len(rs)))
        ax.set_xscale("log")
        ax.set_title("%s, %d %% load" % (w, round(100 * load)))
        ax.set_xlabel("FCT slowdown")
    axs[0][0].set_ylabel("fraction of flows")
    axs[0][0].legend(fontsize=7)
    paths = [finish(fig, doc, out, "fabric-slowdown-cdf.svg")]
    fig, axs = plt.subplots(1, len(cells), figsize=(4 * len(cells), 3.6), squeeze=False)
    buckets = ["<10K", "10K-100K", "100K-1M", "1M-10M", ">10M"]
    for ax, (w, load) in zip(axs[0], cells):
        for mode, lab, c in FABRIC_MODES:
            rs = [r for r in rows if r["workload_name"] == w and r["load"] == load and
                  r["mode"] == mode]
            if not rs:
                continue
            xs = [i for i in range(len(buckets))
                  if any(r["buckets"][i]["completed"] for r in rs)]
            ax.plot(xs, [median([r["buckets"][i]["slowdown_p99"] for r in rs
                                 if r["buckets"][i]["completed"]]) for i in xs],
                    marker="o", color=c, label=lab + " p99")
            ax.plot(xs, [median([r["buckets"][i]["slowdown_p50"] for r in rs
                                 if r["buckets"][i]["completed"]]) for i in xs],
                    marker=".", color=c, ls="--", label=lab + " p50")
        ax.set_xticks(range(len(buckets)))
        ax.set_xticklabels(buckets, fontsize=7)
        ax.set_yscale("log")
        ax.set_title("%s, %d %% load" % (w, round(100 * load)))
        ax.set_xlabel("flow size")
    axs[0][0].set_ylabel("FCT slowdown (median over seeds)")
    axs[0][0].legend(fontsize=6)
    paths.append(finish(fig, doc, out, "fabric-slowdown-size.svg"))
    return paths


# ---- bench/nopfc.py: rows {buffer, n, mode: GBN|SR, goodput, ideal_ms, fct (ms, sorted),
#      failed, drops, resent, probes, rto, data}

def nopfc(doc, out):
    rows = doc["rows"]
    bufs = sorted({r["buffer"] for r in rows}, reverse=True)
    fig, axs = plt.subplots(1, len(bufs), figsize=(4.2 * len(bufs), 3.6), squeeze=False,
                            sharey=True)
    for ax, buf in zip(axs[0], bufs):
        for mode, c in (("GBN", "C3"), ("SR", "C0")):
            rs = sorted((r for r in rows if r["buffer"] == buf and r["mode"] == mode),
                        key=lambda r: r["n"])
            ok = [r for r in rs if r["fct"]]
            ax.plot([r["n"] for r in ok], [r["fct"][-1] / r["ideal_ms"] for r in ok],
                    marker="o", color=c, label="%s slowest" % mode)
            ax.plot([r["n"] for r in ok], [r["fct"][len(r["fct"]) // 2] / r["ideal_ms"]
                                           for r in ok], marker=".", ls="--", color=c,
                    label="%s median" % mode)
        sizes = sorted({r["n"] for r in rows})
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([str(n) for n in sizes])
        ax.minorticks_off()
        ax.set_yscale("log")
        ax.set_title("no PFC, %d KiB switch buffer" % (buf // 1024))
        ax.set_xlabel("senders N")
    axs[0][0].set_ylabel("flow completion time / ideal")
    axs[0][0].legend(fontsize=7)
    return [finish(fig, doc, out, "nopfc.svg")]


PLOTS = {"rdma": rdma, "loss": loss, "tcp": tcp, "storage": storage, "d2w": d2w,
         "congestion": congestion, "model": model, "incast": incast, "fabric": fabric,
         "nopfc": nopfc}


def render(doc, out):
    """Draw the plots of ``doc`` into ``out``; their paths."""
    return PLOTS[doc["bench"]](doc, out)


def pct_points(values):
    """``values`` (any order) at the percentiles CDF_PCTS, nearest rank; [] if empty."""
    v = sorted(values)
    if not v:
        return []
    return [v[min(len(v) - 1, max(0, math.ceil(p / 100 * len(v)) - 1))] for p in CDF_PCTS]
