"""What every collective algorithm shares: its inputs (Group), its output (Terms), the registry.

An algorithm prices one op among `p` ranks over one link as three named terms of the
Hockney alpha-beta model plus a gamma (reduction) term (Thakur, Rabenseifner & Gropp 2005,
"Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1)):

    time = latency_term (alpha) + bandwidth_term (beta) + reduce_term (gamma)

and reports the bytes the busiest rank sends. Message sizes follow lionsim.network.calls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, ClassVar

from lionsim.network.calls import OPS
from lionsim.network.link import Link
from lionsim.registry import Registry


@dataclass(frozen=True, kw_only=True, slots=True)
class Group:
    """The ranks of one collective phase and the link each of them sees."""

    ranks: int
    """p: ranks taking part (>= 1)."""
    link: Link
    """The link one rank sees, already divided among concurrent sharers."""
    servers: int = 1
    """Parameter servers (param_server only)."""
    ranks_per_link: int = 1
    """Ranks pushing through one shared link at once (param_server only: a node's workers)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Terms:
    """The cost of one collective phase, by term."""

    latency_s: float
    """alpha term: message latencies on the critical path, seconds."""
    bandwidth_s: float
    """beta term: bytes on the critical path / bandwidth, seconds."""
    reduce_s: float = 0.0
    """gamma term: bytes combined on the critical path, seconds."""
    sent_bytes: float
    """Bytes the busiest rank sends."""

    @property
    def time_s(self) -> float:
        return self.latency_s + self.bandwidth_s + self.reduce_s


ZERO = Terms(latency_s=0.0, bandwidth_s=0.0, reduce_s=0.0, sent_bytes=0.0)


class CollectiveAlgorithm:
    """An algorithm implements some ops as methods named after them: `all_reduce(n, group)`."""

    name: ClassVar[str]
    summary: ClassVar[str]
    """One line for listings: the algorithm and its source."""
    folds: ClassVar[bool] = False
    """Whether it folds the extra ranks in first where p is not a power of two (`fold`, MPICH's
    way): a whole-vector step there and one back, so its cost jumps between powers of two."""

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(op for op in OPS if callable(getattr(self, op, None)))

    def cost(self, op: str, nbytes: float, group: Group) -> Terms:
        """Price `op` on `nbytes` (calls.py convention) among group.ranks ranks; one rank costs 0."""
        method: Callable[[float, Group], Terms] | None = getattr(self, op, None)
        if method is None:
            raise ValueError(f"algorithm {self.name!r} does not implement {op!r}")
        if group.ranks == 1:
            return ZERO
        return method(float(nbytes), group)


COLLECTIVE_ALGORITHMS: Registry[CollectiveAlgorithm] = Registry("collective algorithm")


def register(cls: type[CollectiveAlgorithm]) -> type[CollectiveAlgorithm]:
    """Class decorator: register one instance under `cls.name`."""
    COLLECTIVE_ALGORITHMS.add(cls.name, cls())
    return cls


def ceil_log2(p: int) -> int:
    """Rounds of a binomial tree / Bruck algorithm on p ranks."""
    return (p - 1).bit_length()


def fold(p: int) -> tuple[int, int]:
    """(p', r): the largest power of two p' <= p and the r = p - p' extra ranks MPICH folds in."""
    p2 = 1 << (p.bit_length() - 1)
    return p2, p - p2


def best_chunks(stages: int, step_latency_s: float, transfer_s: float, nbytes: float) -> int:
    """Chunk count k minimising a pipeline's (stages + k - 1) * (step_latency + transfer / k).

    The real optimum is k* = sqrt((stages - 1) * transfer / step_latency); the function is
    convex in k, so the best integer is floor(k*) or ceil(k*), clamped to [1, nbytes]
    (a chunk holds at least one byte).
    """
    k_max = max(1, math.floor(nbytes))
    if stages <= 1 or transfer_s == 0.0:
        return 1
    if step_latency_s == 0.0:
        return k_max  # latency-free pipeline: the finer the better
    k_star = math.sqrt((stages - 1) * transfer_s / step_latency_s)
    if math.isnan(k_star):  # both times inf: nothing to balance
        return 1
    if k_star >= k_max:  # inf (transfer_s inf) included, which math.floor would refuse
        return k_max
    candidates = {min(k_max, max(1, k)) for k in (math.floor(k_star), math.ceil(k_star))}
    return min(candidates, key=lambda k: (stages + k - 1) * (step_latency_s + transfer_s / k))
