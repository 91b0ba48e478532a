#!/usr/bin/python3
"""Draw a benchmark's plots again from its saved results, without running it.

    bench/plot.py FILE.json... [--out DIR]

Each FILE is a results file a bench wrote (bench/results.py: build/results/<bench>/<bench>.json,
or Documentation/figures/<bench>.json); its SVG plots are drawn into DIR, by default the
file's own directory. A file that lacks a field the results format requires is refused.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plots  # noqa: E402
import results  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", metavar="FILE.json")
    ap.add_argument("--out", default=None, metavar="DIR")
    args = ap.parse_args()
    rc = 0
    for path in args.files:
        with open(path) as f:
            doc = json.load(f)
        bad = results.check(doc)
        if bad:
            print("%s: %s" % (path, "; ".join(bad)), file=sys.stderr)
            rc = 1
            continue
        out = args.out or os.path.dirname(os.path.abspath(path))
        os.makedirs(out, exist_ok=True)
        for p in plots.render(doc, out):
            print(p)
    return rc


if __name__ == "__main__":
    sys.exit(main())
