"""The whole-nodes rule: W workers on nodes of g each either lie within one node (W <= g) or fill
whole nodes (g divides W); a cluster of 12 on nodes of 8 has a half-empty node that no collective
algorithm lionsim prices (or a hierarchical transport runs) has a form for. The one place the rule
and its refusal (check_workers) are written: Network.nodes and the backends' node layout refuse a
count by it, estimate's --gpus-per-node check, its --sweep workers= rounding and its crossover
search read it. No imports but lionsim.errors and lionsim.ranges' wording (the standard library's
alone): the checks that run before torch loads use it."""

from __future__ import annotations

from lionsim.errors import LionsimError
from lionsim.ranges import refusal


def fills_nodes(workers: int, per_node: int) -> bool:
    """`workers` lie within one node of `per_node` or fill whole ones."""
    return workers <= per_node or workers % per_node == 0


def check_workers(workers: int, per_node: int, network: str = "", option: str = "--workers",
                  value: object = None) -> None:
    """Workers that fill nodes of `per_node` (of `network`), else the one refusal of the rule, naming the
    option typed as --gpus-per-node's does: "bad --workers 12: 12 workers do not fill whole nodes of
    h100x8-10gbe (8 a node); accepted: at most 8 (one node) or a multiple of 8" (bench, estimate,
    comm, Network.nodes and the backends' node layout alike). `value`: what was typed where the count
    came from another option (--sweep workers=8,12), else the count."""
    if fills_nodes(workers, per_node):
        return
    nodes = f"{network} ({per_node:,} a node)" if network else f"{per_node:,}"
    raise LionsimError(refusal(option, workers if value is None else value,
                               f"at most {per_node:,} (one node) or a multiple of {per_node:,}",
                               f"{workers:,} workers do not fill whole nodes of {nodes}"))


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
