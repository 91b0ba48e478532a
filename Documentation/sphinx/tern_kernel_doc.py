# SPDX-License-Identifier: GPL-2.0
"""The ``tern-kernel-doc`` directive: a source file's kernel-doc comments in the manual.

    .. tern-kernel-doc:: drivers/net/ethernet/tern/aux.c
       :exported:                 the functions the file exports (EXPORT_SYMBOL*, namespaced too)
       :functions: a b c          these functions, structs, enums or typedefs only
       :doc: title                a DOC: section of the file

With no option, every kernel-doc comment of the file. The path is relative to the tree's top.
The comments are turned into reStructuredText by the kernel's own ``scripts/kernel-doc``
(Perl), run from an unpacked Debian ``linux-source`` tree, never copied into this one: the
configuration value ``tern_kernel_doc`` names the script (``scripts/build-docs.sh`` finds it
and passes it with ``-D``). Without it the directive fails with a warning, and the build with
it (``-W``). kernel-doc's own warnings (a parameter not described, ...) become Sphinx
warnings at the comment's line.
"""
import os
import re
import subprocess

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import ViewList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

logger = logging.getLogger(__name__)

EXPORT_RE = re.compile(r"^\s*EXPORT_SYMBOL(?:_NS)?(?:_GPL)?\s*\(\s*(\w+)", re.M)
LINENO_RE = re.compile(r"^\.\. LINENO (\d+)$")
WARN_RE = re.compile(r"^(\S+?):(\d+): (warning|error): (.*)$")


class TernKernelDoc(SphinxDirective):
    required_arguments = 1
    option_spec = {
        "exported": directives.flag,
        "functions": directives.unchanged_required,
        "doc": directives.unchanged_required,
    }

    def run(self):
        cfg = self.env.config
        top = os.path.abspath(os.path.join(self.env.srcdir, cfg.tern_top))
        rel = self.arguments[0]
        path = os.path.join(top, rel)
        where = self.get_location()
        script = cfg.tern_kernel_doc
        if not script or not os.path.isfile(script):
            logger.warning("tern-kernel-doc: no kernel-doc script (%r); build the manual with "
                           "scripts/build-docs.sh, which finds it in Debian's linux-source",
                           script, location=where)
            return []
        if not os.path.isfile(path):
            logger.warning("tern-kernel-doc: no such file %s", rel, location=where)
            return []
        self.env.note_dependency(path)

        cmd = ["perl", script, "-rst", "-enable-lineno",
               "-sphinx-version", cfg.tern_sphinx_version]
        if "functions" in self.options:
            for name in self.options["functions"].split():
                cmd += ["-function", name]
        elif "exported" in self.options:
            with open(path, encoding="utf-8") as f:
                names = EXPORT_RE.findall(f.read())
            if not names:
                logger.warning("tern-kernel-doc: %s exports nothing", rel, location=where)
                return []
            for name in names:
                cmd += ["-function", name]
        elif "doc" in self.options:
            cmd += ["-function", self.options["doc"]]
        cmd.append(rel)

        res = subprocess.run(cmd, cwd=top, capture_output=True, text=True)
        for line in res.stderr.splitlines():
            m = WARN_RE.match(line)
            if m:
                logger.warning("kernel-doc: %s", m.group(4),
                               location="%s:%s" % (os.path.join(top, m.group(1)), m.group(2)))
            elif line.strip():
                logger.warning("kernel-doc: %s", line, location=where)
        if res.returncode != 0:
            logger.warning("tern-kernel-doc: kernel-doc failed on %s (exit %d)", rel,
                           res.returncode, location=where)
            return []

        # Each output line keeps the source line it came from, so that a markup error in a
        # comment is reported at the comment.
        text = ViewList()
        lineno = 0
        for line in res.stdout.splitlines():
            m = LINENO_RE.match(line)
            if m:
                lineno = int(m.group(1)) - 1
                continue
            text.append(line, path, lineno)
        node = nodes.section()
        nested_parse_with_titles(self.state, text, node)
        return node.children


def setup(app):
    app.add_config_value("tern_kernel_doc", "", "env")
    app.add_config_value("tern_top", "..", "env")
    app.add_config_value("tern_sphinx_version", "5.3.0", "env")
    app.add_directive("tern-kernel-doc", TernKernelDoc)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
