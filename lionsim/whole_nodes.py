"""The whole-nodes rule: W workers on nodes of g each either lie within one node (W <= g) or fill
whole nodes (g divides W); a cluster of 12 on nodes of 8 has a half-empty node that no collective
algorithm lionsim prices (or a hierarchical transport runs) has a form for. The one place the rule
is written: Network.nodes refuses a network's count by it, estimate's --gpus-per-node check, its
--sweep workers= rounding and its crossover search read it, and the simulator's node layout keeps
it. No imports but lionsim.errors and lionsim.ranges' wording (the standard library's alone): the checks that run
before torch loads use it."""

from __future__ import annotations

from lionsim.errors import LionsimError
from lionsim.ranges import refusal


def fills_nodes(workers: int, per_node: int) -> bool:
    """`workers` lie within one node of `per_node` or fill whole ones."""
    return workers <= per_node or workers % per_node == 0


def check_workers(workers: int, per_node: int, network: str) -> None:
    """--workers that `network` (nodes of `per_node`) takes, else the documented refusal naming the
    option typed, as --gpus-per-node's is (bench and estimate alike: "bad --workers 12: 12 workers do
    not fill whole nodes of h100x8-10gbe (8 a node); accepted: ...")."""
    if fills_nodes(workers, per_node):
        return
    raise LionsimError(refusal("--workers", workers, f"at most {per_node:,} (one node) or a multiple of {per_node:,}",
                               f"{workers:,} workers do not fill whole nodes of {network} ({per_node:,} a node)"))


def neighbour_count(workers: int, per_node: int, up: bool) -> int:
    """The valid count next to `workers` (itself valid) upwards or downwards: one worker more or
    less within a node, a whole node more or less beyond one (the crossover search's losing side)."""
    if up:
        return workers + 1 if workers < per_node else workers + per_node
    return workers - 1 if workers <= per_node else workers - per_node


def one_node_line(workers: int, per_node: int, network: str) -> str:
    """Where `workers` (more than one) all sit on one node of `network` (nodes of `per_node`), the
    line saying only the node's own link is priced: a network of 8 GPUs a node and 8 workers prices
    NVLink alone, whatever its Ethernet. bench's table and estimate's caption say it in these words;
    "" where the workers cross nodes (or are one)."""
    if per_node < 2 or not 1 < workers <= per_node:
        return ""
    return (f"All {workers} workers sit on one node of {network} ({per_node} a node): only its intra-node link is "
            f"priced; --workers {2 * per_node} or more crosses the link between nodes.")


def node_count(workers: int, per_node: int) -> int:
    """The nodes `workers` occupy (one within a node), for a count that fills_nodes."""
    return max(1, workers // per_node)
