"""The simulator's communicator: all W workers live in one [W, ...] tensor.

Collectives become tensor reshuffles. Integer reductions are checked against the container
dtype: a real collective would wrap around silently, the simulator refuses (a transport
that lets a container overflow is a bug, not a result). A sum in a float dtype narrower than
float32 (bf16) is the ring's, rounded at every hop (lionsim.backends.ring), as a real ring adds.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends.local import local_sum
from lionsim.backends.nodes import Nodes, SimGroupComm, Slot, SoloComm, node_layout
from lionsim.backends.ring import ring_sum


class SimComm:
    """W virtual workers, each a row of the leading dimension, `workers_per_node` to a node."""

    def __init__(self, world_size: int, workers_per_node: int = 1) -> None:
        if world_size < 1:
            raise ValueError(f"world_size must be >= 1, got {world_size}")
        self.world_size = world_size
        self.local_workers = world_size
        self.first_worker = 0
        self.ranks = 1
        self.workers_per_node = workers_per_node
        self._nodes = None

    def nodes(self):
        """The node groups (lionsim.backends.nodes): index groups of the rows, built once."""
        if self._nodes is None:
            self._nodes = sim_nodes(self.world_size, self.workers_per_node)
        return self._nodes

    def _check(self, x: Tensor) -> None:
        if x.shape[0] != self.world_size:
            raise ValueError(f"leading dimension {x.shape[0]} != world size {self.world_size}")

    def all_reduce(self, x: Tensor, op: str = "sum") -> Tensor:
        self._check(x)
        if op == "sum" and x.dtype.is_floating_point and x.dtype.itemsize < 4 and self.world_size > 1:
            return ring_sum(x).unsqueeze(0).expand_as(x)  # a ring rounds each partial sum (lionsim.backends.ring)
        return local_sum(x, op).unsqueeze(0).expand_as(x)

    def all_gather(self, x: Tensor) -> Tensor:
        self._check(x)
        return x.unsqueeze(0).expand(self.world_size, *x.shape)

    def all_to_all(self, x: Tensor) -> Tensor:
        self._check(x)
        return x.transpose(0, 1)

    def gather(self, x: Tensor, root: int = 0) -> Tensor:
        self._check(x)
        return x

    def broadcast(self, x: Tensor | None, root: int = 0, like: Tensor | None = None) -> Tensor:
        assert x is not None, "the simulator holds the root, so it always has the value"
        return x.unsqueeze(0).expand(self.world_size, *x.shape)

    def exchange_control(self, x: Tensor) -> Tensor:
        """x [W, k] -> [W, k]: every worker's row (the loop's losses and flags)."""
        self._check(x)
        return x

    def max_over_ranks(self, x: Tensor) -> Tensor:
        """One process: its own figures are the slowest."""
        return x

    def take_log(self) -> list:
        """Nothing runs for real here: no measured collectives."""
        return []


def sim_nodes(world_size: int, workers_per_node: int) -> Nodes:
    """The simulator's node groups over all W rows."""
    g, m = node_layout(world_size, workers_per_node)
    rows = torch.arange(world_size)
    return Nodes(size=g, count=m,
                 intra=SimGroupComm(m, g, across=False) if g > 1 else SoloComm(),
                 inter=SimGroupComm(m, g, across=True) if m > 1 else SoloComm(),
                 node=rows // g, slot=rows % g,
                 slots=tuple(Slot(rows=torch.arange(m) * g + j, comm=SimComm(m)) for j in range(g)))
