#!/usr/bin/python3
"""The RDMA programs of tests/guest/apps.t between Soft-RoCE and tern: node0 runs rdma_rxe
on a virtio-net NIC, node1 tern, on one segment (TERN_RDMA_TARGET=rxe+tern); every section
runs each program pair in both directions. Stock kernel only, like tests/interop/rxe.t.
"""

import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ["TERN_RDMA_TARGET"] = "rxe+tern"
test = os.path.join(TOP, "tests", "guest", "apps.t")
os.execv(sys.executable, [sys.executable, test])
