"""The whole-nodes rule: W workers on nodes of g each either lie within one node (W <= g) or fill
whole nodes (g divides W); a cluster of 12 on nodes of 8 has a half-empty node that no collective
algorithm lionsim prices (or a hierarchical transport runs) has a form for. The one place the rule
is written: Network.nodes refuses a network's count by it, estimate's --gpus-per-node check, its
--sweep workers= rounding and its crossover search read it, and the simulator's node layout keeps
it. No imports: the checks that run before torch loads use it."""

from __future__ import annotations


def fills_nodes(workers: int, per_node: int) -> bool:
    """`workers` lie within one node of `per_node` or fill whole ones."""
    return workers <= per_node or workers % per_node == 0


def neighbour_count(workers: int, per_node: int, up: bool) -> int:
    """The valid count next to `workers` (itself valid) upwards or downwards: one worker more or
    less within a node, a whole node more or less beyond one (the crossover search's losing side)."""
    if up:
        return workers + 1 if workers < per_node else workers + per_node
    return workers - 1 if workers <= per_node else workers - per_node


def node_count(workers: int, per_node: int) -> int:
    """The nodes `workers` occupy (one within a node), for a count that fills_nodes."""
    return max(1, workers // per_node)
