#!/usr/bin/python3
"""Storage over RDMA across implementations: tests/guest/storage.t with a Soft-RoCE host and
client (node0: rdma_rxe on a virtio-net NIC) against a tern target and server (node1: tern0)
on one segment (TERN_RDMA_TARGET=rxe+tern). nvmet-rdma and nfsd's svcrdma run on tern's
kernel verbs: kernel QPs and CQs, RDMA READ and WRITE from the local DMA key, SENDs.

nvme-rdma on Soft-RoCE registers its buffers with fast registration and asks tern's
nvmet-rdma to invalidate them (SEND_WITH_INV from tern to rxe); the NFS client's xprtrdma
likewise. Stock kernel only, like tests/interop/rxe.t.
"""

import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ["TERN_RDMA_TARGET"] = "rxe+tern"
test = os.path.join(TOP, "tests", "guest", "storage.t")
os.execv(sys.executable, [sys.executable, test])
