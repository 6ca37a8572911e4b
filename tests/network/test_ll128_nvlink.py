"""NCCL enables LL128 by default only where a node's GPUs share NVLink (src/graph/tuning.cc:
`pEnable &= (graphs[a]->typeIntra <= PATH_NVB)`, "Other cases are not tested and may cause silent
data corruption"): on PCIe nodes no call is priced over LL128, on the same nodes over NVLink it can
be, and with one GPU a node (no intra path) it stays as the fabric allows."""

from __future__ import annotations

import pytest

from lionsim.network import nccl
from lionsim.network.fabrics import FABRICS
from lionsim.network.link import Link

INTER = Link(alpha_s=5e-6, bandwidth_Bps=24e9)  # 2 x 100 GbE a node, as a RoCE fabric
SIZES = [2.0 ** k for k in range(10, 31, 2)]  # 1 kB to 1 GB


def protocols(intra: Link | None, ranks: int, nodes: int) -> set[str]:
    fabric = FABRICS.get("ib")
    return {c.protocol for size in SIZES for c in nccl.choices("all_reduce", size, ranks, nodes, intra, INTER, fabric)}


@pytest.mark.parametrize("nodes", [1, 16])
def test_pcie_nodes_never_price_ll128_and_nvlink_nodes_may(nodes):
    pcie = Link(alpha_s=2e-6, bandwidth_Bps=25e9, hardware="pcie")
    nvlink = Link(alpha_s=1e-6, bandwidth_Bps=25e9, hardware="nvlink")  # the same rate, stated NVLink
    assert "ll128" not in protocols(pcie, 8 * nodes, nodes)
    assert "ll128" in protocols(nvlink, 8 * nodes, nodes)
    picked = {nccl.pick("all_reduce", s, 8 * nodes, nodes, pcie, INTER, fabric=FABRICS.get("ib")).protocol
              for s in SIZES}
    assert picked <= {"ll", "simple"}


def test_one_gpu_a_node_keeps_ll128():
    assert "ll128" in protocols(None, 16, 16)
