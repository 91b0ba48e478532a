"""The results of a benchmark as data and plots: every bench/*.py hands its rows to save(), which
writes <name>.json into the results directory (build/results/<name>/ unless --out says
otherwise) and renders that file's plots (bench/plots.py) beside it as SVG.

<name>.json holds one object (SCHEMA is its version):

    bench      the benchmark's name (bench/<name>.py)
    date       when the run ended, UTC, ISO 8601
    command    the command line
    tree       {"commit": full hash of HEAD when the bench started, "describe": git describe,
                "dirty": whether tracked files other than the manual's (Documentation/,
                *.md) differed from it}
    kernel     the guests' kernel flavour ("stock" or "debug"); null for a host-only bench
    host       {"cpu", "cores", "load_before" and "load_after" (1, 5, 15 min load averages),
                "other_cores" (CPU other work used during the runs, in cores: bench/hostload.py),
                "noisy" (other_cores above half a core)}
    peers      what was measured against what in the same run: [{"name", "settings"}]
    settings   the run's parameters (sizes, durations, runs, ...)
    rows       the figures, one object per measurement; each bench documents its own
    notes      free text: failed runs, caveats

bench/plot.py renders the plots again from saved files, without running anything.
"""

import datetime
import json
import os
import shlex
import subprocess
import sys

SCHEMA = 1
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REQUIRED = ("bench", "schema", "date", "command", "tree", "kernel", "host", "peers",
            "settings", "rows", "notes")
HOST_KEYS = ("cpu", "cores", "load_before", "load_after", "other_cores", "noisy")


def add_out_arg(ap):
    """The --out option every bench takes."""
    ap.add_argument("--out", default=None, metavar="DIR",
                    help="results directory (default: $TERN_OUT/results/<bench>, "
                    "$TERN_OUT defaulting to build/)")


def out_dir(name, out=None):
    d = out or os.path.join(os.environ.get("TERN_OUT", os.path.join(TOP, "build")),
                            "results", name)
    os.makedirs(d, exist_ok=True)
    return d


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def tree():
    """The commit the bench runs from, and whether tracked files differ from it."""
    def git(*a):
        p = subprocess.run(["git", "-C", TOP] + list(a), stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        return p.stdout.strip() if p.returncode == 0 else None
    # the manual's text does not change what is measured: editing it while a bench runs
    # does not make the run's tree dirty
    status = git("status", "--porcelain", "--untracked-files=no", "--", ".",
                 ":(exclude)Documentation", ":(exclude)*.md")
    return {"commit": git("rev-parse", "HEAD"), "describe": git("describe", "--always"),
            "dirty": bool(status) if status is not None else None}


# taken when the bench starts: what it built and ran, whatever happens to the tree meanwhile
TREE = tree()


def host(load):
    """The host block from a bench/hostload.py Others that has run start() and stop()."""
    (b, a) = load.load
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "load_before": list(b),
            "load_after": list(a), "other_cores": round(load.cores, 3),
            "noisy": load.cores > load.NOISY}


def document(name, rows, load, peers, settings, kernel=None, notes=()):
    """The object save() writes (see the module's documentation)."""
    return {
        "bench": name, "schema": SCHEMA,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": shlex.join(["bench/%s.py" % name] + sys.argv[1:]),
        "tree": TREE, "kernel": kernel, "host": host(load),
        "peers": [{"name": n, "settings": s} for n, s in peers],
        "settings": settings, "rows": rows, "notes": list(notes),
    }


def guest_kernel():
    """The guests' kernel flavour, as scripts/test.sh and the harness choose it."""
    return os.environ.get("TERN_KERNEL") or "stock"


def check(doc):
    """What is missing from a results object: a list of complaints (empty: none)."""
    bad = ["no %s" % k for k in REQUIRED if k not in doc]
    if bad:
        return bad
    bad += ["host: no %s" % k for k in HOST_KEYS if k not in doc["host"]]
    for k in ("commit", "dirty"):
        if k not in doc["tree"]:
            bad.append("tree: no %s" % k)
    if not doc["peers"] or any(set(p) != {"name", "settings"} for p in doc["peers"]):
        bad.append("peers: a list of {name, settings}")
    if not isinstance(doc["rows"], list) or not doc["rows"]:
        bad.append("rows: an empty list")
    try:
        datetime.datetime.strptime(doc["date"], "%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError):
        bad.append("date: not YYYY-MM-DDTHH:MM:SSZ")
    return bad


def save(doc, out):
    """Write <bench>.json into ``out`` and render its plots beside it; the paths written."""
    import plots
    bad = check(doc)
    if bad:
        raise ValueError("results of %s: %s" % (doc.get("bench"), "; ".join(bad)))
    path = os.path.join(out, "%s.json" % doc["bench"])
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    written = [path] + plots.render(doc, out)
    print("\nresults: %s" % ", ".join(written))
    return written


def summary(doc):
    """One line: date, tree, host load and peers (what the manual prints under a figure)."""
    h = doc["host"]
    return ("%s, tree %s%s, %s; load %.2f before, %.2f after, other work %.2f cores%s; "
            "peers: %s" % (
                doc["date"][:10], (doc["tree"]["describe"] or "?"),
                "-dirty" if doc["tree"]["dirty"] else "",
                "kernel %s" % doc["kernel"] if doc["kernel"] else "host only",
                h["load_before"][0], h["load_after"][0], h["other_cores"],
                " (noisy)" if h["noisy"] else "",
                "; ".join("%s (%s)" % (p["name"], p["settings"]) for p in doc["peers"])))
