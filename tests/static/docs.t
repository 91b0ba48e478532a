#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The manual and the README, on the host (a few seconds; about 30 s the first time on a
machine, when scripts/build-docs.sh takes kernel-doc out of Debian's linux-source tarball).

1. scripts/build-docs.sh builds Documentation/ from scratch (-E, into a temporary directory)
   with no warning: a broken cross-reference (-n), a path Documentation/<page>.rst to no
   page, a page in no toctree, bad markup or a kernel-doc complaint about a driver comment
   each fail it. Every warning is printed.
2. The driver interface page holds the kernel-doc text of the sources (not an empty page).
3. README.md: every relative link names a file of the tree, and its #anchor, when it has one,
   a heading of that file (Markdown or reStructuredText); every path in backquotes that
   starts with one of the tree's top folders exists.
4. README.md stays short: at most 200 lines, and without the traces of a lab notebook (issue
   numbers, run letters, commit hashes, UTC times).
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from tap import Tap  # noqa: E402

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
README = os.path.join(TOP, "README.md")
TOP_DIRS = ("Documentation", "bench", "drivers", "include", "model", "packaging",
            "providers", "scripts", "tests")

LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_RE = re.compile(r"`([^`\s]+)`")
SPHINX_WARN_RE = re.compile(r"\b(WARNING|ERROR|CRITICAL)\b")


def slug_md(title):
    """The anchor GitHub gives a Markdown heading."""
    s = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return s.replace(" ", "-")


def slug_rst(title):
    """The id docutils gives a section title."""
    return re.sub(r"[^a-z0-9]+", "-", title.strip().lower()).strip("-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if path.endswith(".md"):
        out, fence = set(), False
        for line in lines:
            if line.startswith("```"):
                fence = not fence
            elif not fence and re.match(r"#{1,6} ", line):
                out.add(slug_md(line.lstrip("#")))
        return out
    out = set()
    for prev, line in zip(lines, lines[1:]):
        if prev.strip() and re.fullmatch(r"([=\-~^\"'`#*+])\1{2,}", line.strip()) \
                and not re.fullmatch(r"([=\-~^])\1+", prev.strip()):
            out.add(slug_rst(prev))
    return out


def main():
    t = Tap()

    # 1, 2: the manual
    with tempfile.TemporaryDirectory(prefix="tern-docs-") as out:
        env = dict(os.environ, TERN_OUT=out)
        res = subprocess.run(["bash", os.path.join(TOP, "scripts", "build-docs.sh"), "-E"],
                             cwd=TOP, env=env, capture_output=True, text=True)
        log = (res.stdout + res.stderr).splitlines()
        warns = [line for line in log if SPHINX_WARN_RE.search(line)]
        t.ok(res.returncode == 0 and not warns,
             "scripts/build-docs.sh builds the manual with no warning",
             "exit status %d" % res.returncode, *(warns or log[-30:]))
        page = os.path.join(out, "docs", "html", "dev", "driver-api.html")
        text = ""
        if os.path.exists(page):
            with open(page, encoding="utf-8") as f:
                text = f.read()
        want = ["tern_core_cmd", "tern_cmd_exec", "tern_ib_obj_get", "tern_udb_wq",
                "tern_aux_dev"]
        missing = [w for w in want if w not in text]
        t.ok(not missing, "the driver interface page holds the sources' kernel-doc",
             "missing: %s" % " ".join(missing))

    # 3: the README's links and paths
    with open(README, encoding="utf-8") as f:
        readme = f.read()
    bad = []
    for target in LINK_RE.findall(readme):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(TOP, path)) if path else README
        if not os.path.exists(full):
            bad.append("%s: no such file" % target)
        elif anchor and os.path.isfile(full) and full.endswith((".md", ".rst")) \
                and anchor not in anchors(full):
            bad.append("%s: no heading with that anchor in %s" % (target, path or "README.md"))
    t.ok(not bad, "README.md's relative links name files (and headings) that exist", *bad)

    bad = []
    in_fence = False
    for line in readme.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        for code in CODE_RE.findall(line):
            if not code.startswith(tuple(d + "/" for d in TOP_DIRS)):
                continue
            path = code.rstrip("/").rstrip(".,:;")
            if not glob.glob(os.path.join(TOP, path)):
                bad.append("`%s`: no such path" % code)
    t.ok(not bad, "README.md's paths in backquotes exist", *bad)

    # 4: the README stays a README
    lines = readme.splitlines()
    t.ok(len(lines) <= 200, "README.md has at most 200 lines (%d)" % len(lines))
    trace = re.compile(r"\b(issues? \d+|run [A-Z]{1,2}\d?|[0-9a-f]{7,40}|\d\d:\d\d UTC)\b")
    hits = ["line %d: %s" % (i + 1, m.group(0)) for i, line in enumerate(lines)
            for m in trace.finditer(line) if re.search(r"[a-z]", m.group(0))
            or "UTC" in m.group(0) or m.group(0).startswith(("issue", "run"))]
    t.ok(not hits, "README.md names no issue, run, commit or time of day", *hits)
    t.exit()


main()
