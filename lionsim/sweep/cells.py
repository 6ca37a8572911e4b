"""Cells and training units.

A cell is one bench run of one strategy@transport on one network (one value of every axis).
A training unit is a cell without its network: the network changes the modelled time, not the
training, so the cells of a unit share one training and are booked once per network. (Except
where the network's node size changes the training: a vote of node votes, hier-1bit, trains
once per node size: Unit.nodes.) The learning rate is an axis of both: each lr is a training of
its own, and the lr of a cell's id follows lionsim.sweep.grid.lr_tag.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lionsim.errors import LionsimError
from lionsim.network import NETWORKS, load_network
from lionsim.reports.columns import workload_text
from lionsim.runs import RunSpec
from lionsim.transports import TRANSPORTS
from lionsim.sweep.grid import Grid, lr_tag


def network_stem(network: str) -> str:
    """The network in a cell id: the preset name, or the profile file's stem."""
    stem = NETWORKS.canonical(network) if network in NETWORKS else Path(network).stem
    return re.sub(r"[^A-Za-z0-9._@-]", "_", stem)


def cell_id(workload: str, workers: int, network: str, seed: int, label: str, tag: str = "") -> str:
    """A cell's id (its folder under ROOT/cells) from its values, as a sweep.json records them;
    `tag`: its lr part (lionsim.sweep.grid.lr_tag; "" for the grid's first lr)."""
    return f"{workload_text(workload)}-w{workers}-{network_stem(network)}-s{seed}-{_tagged(tag)}{label}"


def _tagged(tag: str) -> str:
    return f"{tag}-" if tag else ""


def node_size(network: str, workers: int) -> int:
    """Workers per node that `workers` workers of `network` train with."""
    return min(load_network(network).workers_per_node, workers)


def grouped(run: RunSpec) -> bool:
    """Whether the run's training depends on how workers sit in nodes (a vote of node votes,
    hier-1bit, is not the flat vote): then only networks of one node size share its training."""
    return not TRANSPORTS.get(run.transport).exact


@dataclass(frozen=True, slots=True)
class Unit:
    """One training: a run of a workload on N workers from a seed."""

    workload: str
    workers: int
    seed: int
    run: RunSpec
    nodes: int = 0
    """For a run whose training depends on the node grouping (grouped): the workers per node it
    trains with, so that it serves only the networks of that node size; 0: every network."""
    lr: float | None = None
    """The lr it trains every run with (None: each strategy's own)."""
    tag: str = ""
    """The lr's part of its ids (lionsim.sweep.grid.lr_tag)."""

    def cell(self, network: str) -> Cell:
        return Cell(self.workload, self.workers, network, self.seed, self.run, self.lr, self.tag)

    def trains_on(self, network: str) -> bool:
        return self.nodes == 0 or node_size(network, self.workers) == self.nodes

    @property
    def cost(self) -> int:
        """A unit's relative work, to balance shards and order parallel workers: a step's compute
        grows with the workers one process holds."""
        return self.workers

    @property
    def key(self) -> str:
        """The unit's stable id: its cells' id without the network (progress, shards); a vote of
        node votes trains once per node size, which its id names."""
        return (f"{workload_text(self.workload)}-w{self.workers}-s{self.seed}-{_tagged(self.tag)}{self.run.label}"
                + (f"-g{self.nodes}" if self.nodes else ""))


@dataclass(frozen=True, slots=True)
class Cell:
    """One bench run on one network: a directory under ROOT/cells and a row of sweep_summary.csv."""

    workload: str
    workers: int
    network: str
    seed: int
    run: RunSpec
    lr: float | None = None
    """The lr every run of its group trains with (None: each strategy's own)."""
    tag: str = ""
    """The lr's part of its id (lionsim.sweep.grid.lr_tag)."""

    @property
    def id(self) -> str:
        return cell_id(self.workload, self.workers, self.network, self.seed, self.run.label, self.tag)

    @property
    def group(self) -> tuple[str, int, str, int, float | None]:
        """Cells of one group are summarized together, as one bench of all the grid's runs at
        one lr (`lionsim bench --lr X`)."""
        return self.workload, self.workers, self.network, self.seed, self.lr

    @property
    def unit(self) -> Unit:
        nodes = node_size(self.network, self.workers) if grouped(self.run) else 0
        return Unit(self.workload, self.workers, self.seed, self.run, nodes, self.lr, self.tag)


def grid_cells(grid: Grid) -> list[Cell]:
    """Every cell once, in the grid's order (which is the row order of the sweep CSVs)."""
    cells = [Cell(wl, n, net, seed, run, lr, lr_tag(lr, grid.lrs)) for wl in grid.workloads for n in grid.workers
             for net in grid.networks for seed in grid.seeds for lr in grid.lrs for run in grid.runs]
    seen: dict[str, Cell] = {}
    for cell in cells:
        if cell.id in seen and seen[cell.id].workload != cell.workload:  # two workload files with one stem
            raise LionsimError(f"--workload {seen[cell.id].workload} and {cell.workload} give the same cell id "
                               f"{cell.id}; rename one file or function")
        if cell.id in seen:  # two profile files with one stem
            raise LionsimError(f"--network {seen[cell.id].network} and {cell.network} give the same cell id "
                               f"{cell.id}; rename one profile file")
        seen[cell.id] = cell
    return cells


def grid_units(grid: Grid) -> list[Unit]:
    """Every training unit once, in training order: the groups' runs in the grid's run order."""
    units = []
    for wl in grid.workloads:
        for n in grid.workers:
            for seed in grid.seeds:
                for lr in grid.lrs:
                    for run in grid.runs:
                        sizes = dict.fromkeys(node_size(net, n) for net in grid.networks) if grouped(run) else [0]
                        units += [Unit(wl, n, seed, run, g, lr, lr_tag(lr, grid.lrs)) for g in sizes]
    return units
