#!/usr/bin/python3
"""Storage over RDMA across implementations, the other way round from tests/interop/storage.t:
tests/guest/storage.t with a tern host and client (node0: tern0) against a Soft-RoCE target
and server (node1: rdma_rxe on a virtio-net NIC) on one segment (TERN_RDMA_TARGET=tern+rxe).

nvme-rdma on tern registers its buffers with fast registration (REG_MR, LOCAL_INV) and
Soft-RoCE's nvmet-rdma invalidates them remotely (SEND_WITH_INV from rxe to tern: tern's
responder checks and frees the key and reports it in the completion); the NFS client's
xprtrdma on tern likewise, against svcrdma on Soft-RoCE. Stock kernel only, like
tests/interop/rxe.t.
"""

import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ["TERN_RDMA_TARGET"] = "tern+rxe"
test = os.path.join(TOP, "tests", "guest", "storage.t")
os.execv(sys.executable, [sys.executable, test])
