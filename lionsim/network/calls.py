"""What a transport asks of the network: a list of collective calls with their sizes.

A transport describes one aggregation as `list[CollectiveCall]`; the network model prices
each call (alpha-beta formulas, lionsim.network) and a real backend runs the same calls.
Sizes follow the convention of nccl-tests (doc/PERFORMANCE.md):

    all_reduce, reduce_scatter, reduce, broadcast : n = the full vector, in bytes
    all_gather                                    : n = the total output (all ranks' parts)
    all_to_all                                    : n = one worker's whole send buffer
    ps_push                                       : n = bytes one worker pushes to the servers
    ps_pull                                       : n = bytes one worker pulls from the servers

A call's `scope` says who takes part (lionsim.network.topology): "world" (all N workers, the
default), "intra" (the g workers of each node, every node at once) or "inter" (the M nodes:
each of a node's g workers runs its own copy among its peers at the same place in the other
nodes, on its share of the data, so the g copies share the node's inter link). Hierarchical
transports (hier-exact, hier-1bit) issue intra and inter calls; sizes then follow the
convention among the call's own group.
"""

from __future__ import annotations

from dataclasses import dataclass

OPS = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "broadcast",
    "reduce",
    "ps_push",
    "ps_pull",
)

SCOPES = ("world", "intra", "inter")
"""Who takes part in a call (module doc)."""

# Ops whose payload is combined arithmetically on the way (they pay the gamma term).
REDUCING_OPS = frozenset({"all_reduce", "reduce_scatter", "reduce"})


@dataclass(frozen=True, slots=True)
class CollectiveCall:
    """One collective of one training step."""

    op: str
    """One of OPS."""
    nbytes: int
    """Message size in bytes, by the convention in the module docstring."""
    label: str = ""
    """What it carries (e.g. "votes", "voted", "scales"), for reports."""
    scope: str = "world"
    """One of SCOPES: all workers, the workers of each node, or the nodes (module doc)."""
    dtype: str = "float32"
    """The wire dtype (torch name): what a reduction combines, so its cost per byte
    (lionsim.network.traits); gathers and all-to-alls move bytes whatever it is."""

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise ValueError(f"unknown collective op {self.op!r}; choose from: {', '.join(OPS)}")
        if self.scope not in SCOPES:
            raise ValueError(f"unknown call scope {self.scope!r}; choose from: {', '.join(SCOPES)}")
        if self.nbytes < 0:
            raise ValueError(f"negative message size {self.nbytes}")
