"""The collectives a transport may call, with the shapes they take and give.

`w` is the number of workers this process holds (W in the simulator, W/R on each of R real
ranks), `W` the world size. Reductions are element-wise over all W workers.
"""

from __future__ import annotations

from typing import Protocol

from torch import Tensor


class Comm(Protocol):
    world_size: int
    """W: workers taking part in every collective."""
    local_workers: int
    """w: leading dimension of every tensor passed in (W on the simulator, W/R on a rank)."""
    first_worker: int
    """Global index of this process's first worker (its workers are consecutive)."""
    ranks: int
    """R: processes taking part (1 on the simulator)."""
    workers_per_node: int
    """Workers in one node (the network's), for hierarchical transports; 1: flat."""

    def all_reduce(self, x: Tensor, op: str = "sum") -> Tensor:
        """x [w, *s] -> [w, *s]: the sum (or "max") over all workers, in x's dtype."""
        ...

    def all_gather(self, x: Tensor) -> Tensor:
        """x [w, *s] -> [w, W, *s]: every worker's x, in rank order."""
        ...

    def all_to_all(self, x: Tensor) -> Tensor:
        """x [w, W, *s] -> [w, W, *s]: out[i][j] = x[j][i] (chunk i of worker j goes to worker i)."""
        ...

    def gather(self, x: Tensor, root: int = 0) -> Tensor | None:
        """x [w, *s] -> [W, *s] on the root (every worker's x), None elsewhere."""
        ...

    def broadcast(self, x: Tensor | None, root: int = 0, like: Tensor | None = None) -> Tensor:
        """Root's x [*s] -> [w, *s] on every worker; non-roots pass `like` for shape and dtype."""
        ...

    def exchange_control(self, x: Tensor) -> Tensor:
        """x [w, k] -> [W, k]: every worker's row, outside any timing (the loop's bookkeeping)."""
        ...

    def max_over_ranks(self, x: Tensor) -> Tensor:
        """Element-wise maximum over processes, outside any timing."""
        ...

    def nodes(self):
        """The workers grouped into nodes, with communicators within and across them
        (lionsim.backends.nodes.Nodes)."""
        ...

    def take_log(self) -> list:
        """The real collectives timed since the last call (MeasuredCall); [] on the simulator."""
        ...
