"""Which networks are GPU clusters, and the library they run: NCCL (DEVICE_LIBRARY). `lionsim
estimate` always models GPUs; `lionsim comm` models a network as GPUs where gpu_nodes says so, and
then prices it by the same rules as estimate (network_for's `library`, gpu_nodes_library), so the
two commands' figures for one profile agree."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lionsim.estimate.plain import DEVICE_LIBRARY

if TYPE_CHECKING:
    from lionsim.network import Network


def gpu_nodes(network: Network, gpus_per_node: int | None = None) -> bool:
    """Whether `network` is a GPU cluster: it states a `device` (every device lionsim knows is a GPU;
    the caller checks the name first, chosen_device), or --gpus-per-node `gpus_per_node` was given
    (the option counts GPUs: one a node or several), or, where it was not, its nodes hold several
    workers joined by NVLink (Link.nvlink: stated, or at least 100 GB/s). A node of several workers
    on a slower link may be CPU processes, so it stays the run's library."""
    if network.device or gpus_per_node is not None:
        return True
    return network.workers_per_node > 1 and network.intra is not None and network.intra.nvlink


def gpu_nodes_library(network: Network, spec: str, gpus_per_node: int, chosen: bool) -> Network:
    """A flat preset given nodes of several GPUs (--gpus-per-node G > 1) is a GPU cluster, which runs
    NCCL: priced by NCCL's traits (DEVICE_LIBRARY) unless --traits named a library (`--traits ideal`
    keeps the formulas). Alone a flat preset stays the ideal library (lionsim.network.presets)."""
    from lionsim.network import NETWORKS, TRAITS

    ideal = network.traits.ideal and network.traits.backend == "any"
    if chosen or gpus_per_node <= 1 or not ideal or str(spec) not in NETWORKS:
        return network
    return network.with_traits(TRAITS.get(DEVICE_LIBRARY))
