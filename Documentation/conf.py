# SPDX-License-Identifier: GPL-2.0
# Sphinx configuration of tern's manual. Build it with scripts/build-docs.sh (Debian's
# python3-sphinx; warnings and broken references are errors).
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "sphinx"))

project = "tern"
copyright = "the tern authors"
author = "the tern authors"
root_doc = "index"
extensions = ["tern_kernel_doc", "tern_paths"]
exclude_patterns = ["sphinx"]
templates_path = []

# The C declarations of the driver's API pages name kernel types (u32, struct device, ...)
# that the manual does not define: not broken references.
nitpick_ignore_regex = [("c:.*", ".*")]
# Macros in front of some declarations, as the C domain should read them: attributes.
c_id_attributes = ["TERN_VISIBLE_IF_KUNIT", "__must_check", "__always_inline"]

# kernel-doc: scripts/build-docs.sh passes -D tern_kernel_doc=<linux-source>/scripts/kernel-doc
tern_top = ".."
# The kernel's own pages that ours name by path (linked to the kernel's published manual).
tern_kernel_pages = ["admin-guide/nfs/nfs-rdma"]

html_theme = "alabaster"
html_title = "tern manual"
html_show_sourcelink = False
html_copy_source = False
html_theme_options = {"description": "a RoCEv2 RDMA NIC for Linux", "page_width": "1100px",
                      "body_max_width": "none"}
