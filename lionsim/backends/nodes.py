"""Workers grouped into nodes: communicators within a node and across nodes.

W workers fill M nodes of g workers each (g = min(workers_per_node, W); worker i sits in node
i // g at slot i % g, as ranks fill nodes in order under a launcher). A hierarchical transport
talks in two kinds of group:

    intra   the g workers of one node (every node's group at once)
    inter   the M workers at one slot, one per node (every slot's group at once)

Both offer the three collectives the hierarchical transports use, with the Comm shapes
(lionsim.backends.comm) read within the group: `all_reduce` x [w, *s] -> [w, *s],
`all_gather` x [w, *s] -> [w, group, *s], `all_to_all` x [w, group, *s] -> [w, group, *s]
(out[i][j] = x[j][i] over the members i, j of each group). `world_size` is the group's size;
`Nodes.node` and `Nodes.slot` give each of this process's rows its place.

`Nodes.slots` offers each inter group as a whole communicator (lionsim.backends.Comm, world
size M): the rows this process holds at one slot, one per node, so that any transport can run
among the nodes unchanged (hier:TRANSPORT runs its inner transport once per slot).

On the simulator the groups are index groups of the [W, ...] rows (SimGroupComm); on a real
backend they are process subgroups (lionsim.backends.dist_nodes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from torch import Tensor

from lionsim.backends.local import local_sum
from lionsim.errors import LionsimError
from lionsim.whole_nodes import check_workers, node_count


class GroupComm(Protocol):
    world_size: int
    """Members of each group."""

    def all_reduce(self, x: Tensor, op: str = "sum") -> Tensor: ...

    def all_gather(self, x: Tensor) -> Tensor: ...

    def all_to_all(self, x: Tensor) -> Tensor: ...


@dataclass(frozen=True, slots=True)
class Slot:
    """The workers at one slot of every node, as a communicator of their own."""

    rows: Tensor
    """int64: this process's rows at this slot, in node order."""
    comm: object
    """A lionsim.backends.Comm among the M workers at this slot (world size M, local workers
    len(rows), first worker the first of these rows' nodes)."""


@dataclass(frozen=True, slots=True)
class Nodes:
    """How a communicator's workers sit in nodes, and its communicators within and across them."""

    size: int
    """g: workers in each node."""
    count: int
    """M: nodes."""
    intra: GroupComm
    """Among the g workers of each node."""
    inter: GroupComm
    """Among the M workers at each slot, one per node."""
    node: Tensor
    """int64 [w]: the node of each of this process's rows."""
    slot: Tensor
    """int64 [w]: each row's place within its node."""
    slots: tuple[Slot, ...] = ()
    """The inter groups this process takes part in, each as a Comm (module doc)."""


def node_layout(world_size: int, workers_per_node: int) -> tuple[int, int]:
    """(g, M): workers per node and nodes; W must fill whole nodes (or lie within one)."""
    if workers_per_node < 1:
        raise LionsimError(f"workers_per_node = {workers_per_node} must be >= 1")
    check_workers(world_size, workers_per_node)
    return min(workers_per_node, world_size), node_count(world_size, workers_per_node)


class SimGroupComm:
    """The simulator's groups: all W rows at once, viewed as [M nodes, g slots, ...]; `across`
    picks the inter groups (one per slot), else the intra groups (one per node)."""

    def __init__(self, nodes: int, size: int, *, across: bool) -> None:
        self.nodes, self.size, self.across = nodes, size, across
        self.world_size = nodes if across else size

    def _grid(self, x: Tensor) -> Tensor:
        if x.shape[0] != self.nodes * self.size:
            raise ValueError(f"leading dimension {x.shape[0]} != {self.nodes} nodes x {self.size} workers")
        return x.reshape(self.nodes, self.size, *x.shape[1:])  # [M, g, *s]

    def all_reduce(self, x: Tensor, op: str = "sum") -> Tensor:
        grid = self._grid(x)
        if self.across:  # over the nodes, slot by slot
            out = local_sum(grid, op).unsqueeze(0).expand_as(grid)
        else:  # over a node's slots
            out = local_sum(grid.transpose(0, 1), op).unsqueeze(1).expand_as(grid)
        return out.reshape(x.shape)

    def all_gather(self, x: Tensor) -> Tensor:
        grid, m, g = self._grid(x), self.nodes, self.size
        if self.across:  # row (k, j) gets [x(0, j), ..., x(M-1, j)]
            out = grid.transpose(0, 1).unsqueeze(0).expand(m, g, m, *x.shape[1:])
        else:  # row (k, j) gets [x(k, 0), ..., x(k, g-1)]
            out = grid.unsqueeze(1).expand(m, g, g, *x.shape[1:])
        return out.reshape(m * g, self.world_size, *x.shape[1:])

    def all_to_all(self, x: Tensor) -> Tensor:
        grid, m, g = self._grid(x), self.nodes, self.size  # [M, g, group, *s]
        if self.across:  # out(k, j)[q] = x(q, j)[k]
            out = grid.permute(2, 1, 0, *range(3, grid.dim()))
        else:  # out(k, j)[q] = x(k, q)[j]
            out = grid.transpose(1, 2)
        return out.reshape(m * g, self.world_size, *x.shape[2:])


class SoloComm:
    """A group of one (a node of one worker, or one node in all): every collective is the
    identity, with the group dimension of size 1 where the shape has one."""

    world_size = 1

    def all_reduce(self, x: Tensor, op: str = "sum") -> Tensor:
        return x

    def all_gather(self, x: Tensor) -> Tensor:
        return x.unsqueeze(1)

    def all_to_all(self, x: Tensor) -> Tensor:
        return x
