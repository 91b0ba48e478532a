#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The benchmarks' results files and plots, on the host, without running a benchmark (a few
seconds). No benchmark figure is checked here: only that results are written and drawn.

1. Every benchmark (bench/*.py but the helpers) writes its results through bench/results.py
   (results.save, the --out option) and bench/plots.py can draw it; each has a fixture,
   tests/static/bench/<bench>.json, a small results file made up for this test.
2. results.document() fills what every results file must hold (the tree's commit and dirty
   flag, the date, the host's load before and after and the CPU other work used, the peers
   with their settings, the rows), results.save() writes it and draws its plots; a file
   without one of those fields is refused.
3. Every fixture carries the required fields, and its plots render: SVG that parses, with no
   date in it, the same bytes when drawn twice (so a committed figure changes only with its
   data).
4. The manual's figures: every Documentation/figures/<bench>/<bench>.json is a valid results
   file measured from a clean tree, its plots in the same directory are what bench/plot.py
   draws from it (byte for byte), and Documentation/performance.rst or fabric.rst shows them.
"""
import glob
import json
import os
import sys
import tempfile
from contextlib import redirect_stdout
import xml.etree.ElementTree as ET

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path[:0] = [os.path.join(TOP, "tests", "lib"), os.path.join(TOP, "bench")]
from tap import Tap  # noqa: E402
import hostload  # noqa: E402
import plots  # noqa: E402
import results  # noqa: E402

HELPERS = {"hostload", "results", "plots", "plot"}
FIXTURES = os.path.join(TOP, "tests", "static", "bench")
FIGURES = os.path.join(TOP, "Documentation", "figures")


def load(path):
    with open(path) as f:
        return json.load(f)


def render_twice(doc):
    """The SVGs of ``doc`` drawn twice: ({name: bytes}, {name: bytes})."""
    out = []
    for _ in range(2):
        with tempfile.TemporaryDirectory() as d:
            names = [os.path.basename(p) for p in plots.render(doc, d)]
            got = {}
            for n in names:
                with open(os.path.join(d, n), "rb") as f:
                    got[n] = f.read()
            out.append(got)
    return out


def svg_problems(name, data):
    bad = []
    try:
        root = ET.fromstring(data)
        if not root.tag.endswith("svg"):
            bad.append("%s: root element %s" % (name, root.tag))
    except ET.ParseError as e:
        bad.append("%s: not XML: %s" % (name, e))
    if b"<dc:date>" in data:
        bad.append("%s: a date in its metadata" % name)
    if len(data) < 2000:
        bad.append("%s: %d bytes, too small for a plot" % (name, len(data)))
    return bad


def main():
    t = Tap()
    benches = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(TOP, "bench",
                                                                                "*.py")))
    benches = [b for b in benches if b not in HELPERS]

    # 1
    bad = []
    for b in benches:
        with open(os.path.join(TOP, "bench", b + ".py")) as f:
            src = f.read()
        if ".save(" not in src or "add_out_arg(" not in src:
            bad.append("bench/%s.py does not write through results.save() with --out" % b)
        if b not in plots.PLOTS:
            bad.append("bench/plots.py draws nothing for %s" % b)
        if not os.path.exists(os.path.join(FIXTURES, b + ".json")):
            bad.append("no fixture tests/static/bench/%s.json" % b)
    t.ok(len(benches) >= 10 and not bad, "each of %d benchmarks (%s) writes results and "
         "plots, and has a fixture" % (len(benches), ", ".join(benches)), *bad)

    # 2
    ld = hostload.Others()
    ld.start()
    sum(range(10 ** 5))
    ld.stop()
    fix = load(os.path.join(FIXTURES, "model.json"))
    doc = results.document("model", fix["rows"], ld, [("a", "its settings"), ("b", "others")],
                           {"runs": 1})
    t.ok(not results.check(doc) and doc["tree"]["commit"] and
         len(doc["tree"]["commit"]) == 40 and isinstance(doc["tree"]["dirty"], bool) and
         len(doc["host"]["load_before"]) == 3 and doc["host"]["cores"] >= 1,
         "results.document() fills the commit, dirty flag, date, host load and peers",
         *results.check(doc), json.dumps({k: doc[k] for k in ("tree", "host", "date")}))
    with tempfile.TemporaryDirectory() as d:
        with redirect_stdout(sys.stderr):
            paths = results.save(doc, d)
        back = load(paths[0])
        t.ok(paths[0].endswith("/model.json") and back == json.loads(json.dumps(doc)) and
             len(paths) > 1 and all(os.path.getsize(p) for p in paths),
             "results.save() writes model.json and draws its plots beside it", *paths)
    missing = []
    for key in results.REQUIRED:
        d2 = dict(doc)
        del d2[key]
        if not results.check(d2):
            missing.append("accepted without %s" % key)
    for key in results.HOST_KEYS:
        d2 = dict(doc, host={k: v for k, v in doc["host"].items() if k != key})
        if not results.check(d2):
            missing.append("accepted without host.%s" % key)
    t.ok(not missing, "a results file without a required field is refused", *missing)

    # 3
    for b in benches:
        path = os.path.join(FIXTURES, b + ".json")
        if not os.path.exists(path):
            continue
        doc = load(path)
        bad = results.check(doc)
        if doc.get("bench") != b:
            bad.append("bench is %r" % doc.get("bench"))
        t.ok(not bad, "fixture %s.json carries the required fields" % b, *bad)
        try:
            a, z = render_twice(doc)
        except Exception as e:      # a plot that does not draw: the test's finding
            t.ok(False, "%s's plots render from its fixture" % b, repr(e))
            continue
        bad = [p for n, data in sorted(a.items()) for p in svg_problems(n, data)]
        t.ok(a and not bad, "%s's plots render from its fixture: %s" % (b, ", ".join(sorted(a))),
             *bad)
        t.ok(a == z, "%s's plots are the same bytes when drawn again" % b,
             *[n for n in a if a[n] != z.get(n)])

    # 4
    rst = ""
    for page in ("performance.rst", "fabric.rst"):
        with open(os.path.join(TOP, "Documentation", page)) as f:
            rst += f.read()
    figs = sorted(glob.glob(os.path.join(FIGURES, "*", "*.json")))
    figs = [p for p in figs if os.path.basename(p) == os.path.basename(os.path.dirname(p)) +
            ".json"]
    t.ok(figs, "the manual has results files (Documentation/figures/<bench>/<bench>.json)")
    for path in figs:
        rel = os.path.relpath(path, FIGURES)
        doc = load(path)
        bad = results.check(doc)
        if doc.get("tree", {}).get("dirty") is not False:
            bad.append("measured from a tree with uncommitted changes (or unknown)")
        t.ok(not bad, "figures/%s: a results file of a clean tree" % rel, *bad)
        a, _ = render_twice(doc)
        bad = []
        for name, data in sorted(a.items()):
            mine = os.path.join(os.path.dirname(path), name)
            if not os.path.exists(mine):
                bad.append("%s: missing" % name)
                continue
            with open(mine, "rb") as f:
                if f.read() != data:
                    bad.append("%s: not what bench/plot.py draws from the data" % name)
            if "figures/%s/%s" % (doc["bench"], name) not in rst:
                bad.append("%s: shown by neither performance.rst nor fabric.rst" % name)
        t.ok(a and not bad, "figures/%s: its plots (%s) are drawn from it and shown"
             % (os.path.dirname(rel), ", ".join(sorted(a))), *bad)
    t.exit()


main()
