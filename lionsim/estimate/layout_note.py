"""The caption's line where `--replica-gpus G` meets a network of several workers a node.

A network's nodes hold `workers_per_node` workers; with --replica-gpus G each worker is G
devices, so a node holds workers_per_node x G of them. That is right where a node is a site (a
DiLoCo worker a datacenter), and wrong where the profile describes servers of 8 GPUs: 16
workers of 8 then sit on 2 "nodes" of 64 GPUs, and everything a server's NIC would carry is
priced inside the node. lionsim cannot tell which the profile meant, so it prices what it was
given and says what it assumed, with the option that gives a server's layout.
"""

from __future__ import annotations


def replica_layout_note(network, replica_gpus: int, device: str) -> str:
    """One line where a node holds several workers that are each several devices, however many
    nodes the workers fill (on one node too, its link is priced as one node's); "" otherwise (one
    device a worker, or one worker a node)."""
    per_node = network.workers_per_node
    if replica_gpus < 2 or per_node < 2:
        return ""
    held = per_node * replica_gpus
    fills = (f"--gpus-per-node {per_node // replica_gpus} (replicas a node)" if per_node % replica_gpus == 0
             and per_node > replica_gpus else "--gpus-per-node 1 (one replica a node)")
    return (f"Each node of {network.name} holds {per_node} workers of {replica_gpus} {device} each ({held} devices "
            f"a node): where its nodes are servers of {per_node} GPUs, give {fills}.")
