# SPDX-License-Identifier: GPL-2.0
"""Links from the pages' plain ``Documentation/<page>.rst`` paths, checked.

The pages name each other by path, as the kernel's documentation does (so that they read the
same in a source tree, on a terminal and built). This transform turns every such path, in
running text or as an inline literal, into a link to the page; a path to a page that is not
in the manual is a warning (an error in scripts/build-docs.sh's build), unless it is one of
the kernel's own pages listed in ``tern_kernel_pages``, which link to the kernel's published
documentation instead.
"""
import os
import re

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

PATH_RE = re.compile(r"\bDocumentation/((?:[\w-]+/)*[\w.-]+?)\.rst\b")
KERNEL_DOCS = "https://docs.kernel.org/"
SKIP = (nodes.literal_block, nodes.reference, nodes.title, addnodes.pending_xref,
        nodes.raw, nodes.comment, nodes.target)


class DocPaths(SphinxTransform):
    default_priority = 700

    def link(self, page, child, where):
        """A node that links to Documentation/<page>.rst, showing ``child``."""
        if page in self.config.tern_kernel_pages:
            ref = nodes.reference("", "", internal=False,
                                  refuri=KERNEL_DOCS + page + ".html")
            ref += child
            return ref
        if page not in self.env.found_docs:
            logger.warning("Documentation/%s.rst: no such page in the manual", page,
                           location=where)
            return child
        xref = addnodes.pending_xref("", refdomain="std", reftype="doc",
                                     reftarget="/" + page, refexplicit=True, refwarn=True,
                                     refdoc=self.env.docname)
        xref += child
        return xref

    def apply(self):
        for lit in list(self.document.findall(nodes.literal)):
            if isinstance(lit.parent, SKIP):
                continue
            m = PATH_RE.fullmatch(lit.astext())
            if m:
                new = nodes.literal(lit.rawsource, lit.astext())
                lit.parent.replace(lit, self.link(m.group(1), new, lit))
        for text in list(self.document.findall(nodes.Text)):
            parent = text.parent
            if parent is None or isinstance(parent, SKIP + (nodes.literal,)):
                continue
            s = str(text)
            pieces, last = [], 0
            for m in PATH_RE.finditer(s):
                if m.start() > last:
                    pieces.append(nodes.Text(s[last:m.start()]))
                shown = nodes.inline(m.group(0), m.group(0))
                pieces.append(self.link(m.group(1), shown, parent))
                last = m.end()
            if pieces:
                if last < len(s):
                    pieces.append(nodes.Text(s[last:]))
                parent.replace(text, pieces)


def setup(app):
    app.add_config_value("tern_kernel_pages", [], "env")
    app.add_transform(DocPaths)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
