"""The NCCL version a network runs, as a profile's `[nccl]` table states it (`version = "2.4.7"`).

NCCL's choice of algorithm changed with its version in two ways lionsim models: the two-node tree
rule (lionsim.network.nccl, "Two nodes") and which NVLink SHARP algorithms exist ("NVLS" below).
From the git history of NVIDIA/nccl:

- v2.4.2-1 is the first release with trees (double binary trees across nodes). Until v2.4.8-1
  there is no src/graph/tuning.cc: NCCL chose a tree for an all-reduce up to a byte threshold
  computed once (src/init.cc, ncclTreeThreshold) from a fixed model that took a tree at 3/4 of a
  ring's bandwidth and twice that on two nodes, but only where the GPUs have NVLink
  (ncclNvlinkGpu); on PCIe GPUs it took a tree at 2/3 of a ring's bandwidth on any number of
  nodes, so a large call ran a ring on two nodes too.
- v2.5.6-1 brought tuning.cc, and with it the rule as it stands today: `comm->nNodes <= 2 ?
  graphs[a]->speedIntra : graphs[a]->speedInter`, whatever the intra link.

So a network that states a version before 2.5.6 has the two-node rule only on NVLink nodes
(nccl.two_node_rule); no other constant of those releases is carried (nccl.py's module doc says
why). A network that states none runs today's NCCL.

NVLS: v2.17.1-1 is the first release whose tuning.cc prices NVLS (NVLink SHARP all-reduce, one node:
NVLS across nodes needs CollNet), v2.18.1-1 the first with NVLS Tree (NVLS inside each node, a tree
across nodes). So a network that states an older version gets neither (nccl.nvls_algorithms). The
constants lionsim carries for them are today's (v2.28.3-1 on: nvlsEfficiency, perChMaxNVLSTreeBws,
the NET hop of 20.9 us); v2.18.1 to v2.27 ranked them with others (a channel's bandwidth
min(bwIntra, bwInter, halved beyond two nodes) x 5/6, the NET hop 14 us from v2.19), which are not
carried, as no other constant of older releases is.
"""

from __future__ import annotations

import re

from lionsim.errors import LionsimError

Release = tuple[int, int, int]
"""(major, minor, patch)."""

TREES_SINCE: Release = (2, 4, 0)
"""NCCL 2.4 brought trees (v2.4.2-1 is its first tag): the oldest version a profile may state."""
TWO_NODE_RULE_SINCE: Release = (2, 5, 6)
"""The first release whose src/graph/tuning.cc ranks a tree over two nodes by the intra link
(v2.5.6-1, the first tag with tuning.cc; module doc)."""

NVLS_SINCE: Release = (2, 17, 1)
"""The first release whose tuning.cc prices NVLS (v2.17.1-1; module doc)."""
NVLS_TREE_SINCE: Release = (2, 18, 1)
"""The first release whose tuning.cc prices NVLS Tree (v2.18.1-1; module doc)."""

_FORMAT = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def parse(value: object) -> Release:
    """A version string "MAJOR.MINOR.PATCH", NCCL 2.4 or later, as a Release; else one LionsimError."""
    match = _FORMAT.fullmatch(value) if isinstance(value, str) else None
    release = tuple(int(part) for part in match.groups()) if match else None
    if release is None or release < TREES_SINCE:
        raise LionsimError(f"nccl.version = {value!r} is not accepted; a version string \"MAJOR.MINOR.PATCH\" "
                           f"from 2.4.0 on (NCCL 2.4 brought trees), e.g. \"2.4.7\"; leave it out for today's NCCL")
    return release
