"""Node groups on a real process group: node-local and cross-node subgroups.

Ranks fill nodes in order, as a launcher places them, w workers a rank and g a node: either a
node holds g / w consecutive ranks (w divides g), or a rank holds w / g whole nodes (g divides
w); a rank's workers never straddle a node boundary. On one machine this groups ranks as if
they sat on nodes. Each rank holds a block of the [M nodes, g slots] grid of workers:
[1 node, w slots] or [w / g nodes, g slots].

    intra   a node's workers. Several ranks per node: ProcessGroupComm on the node's subgroup
            (the rank's rows are combined first, as on the whole group); else the rank's own
            rows, index groups as on the simulator, and no real collective
    inter   the workers at one slot of every node: CrossComm on the subgroup of the ranks that
            hold the same slots (the ranks at the same place in every node, or all ranks): the
            rank's own nodes are combined first, then one real collective among those ranks

    slots   each slot's inter group as a whole communicator (nodes.Slot): a ProcessGroupComm on
            the same cross-node subgroup holding the rank's rows at that slot, or, where every
            node is in this rank, the simulator's communicator on those rows

On the world every rank creates every subgroup; on a subgroup of the world each rank creates
only its own (use_local_synchronization; _subgroup says what that asks of the caller). Calls are
timed and logged in the parent communicator's log with their scope, so booking prices each on
its own group.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import Tensor

from lionsim.backends.local import local_sum
from lionsim.backends.timed import OPS, TimedGroup
from lionsim.backends.nodes import Nodes, SimGroupComm, Slot, SoloComm, node_layout
from lionsim.errors import LionsimError


class CrossComm(TimedGroup):
    """The inter groups of a rank holding `nodes` nodes x `slots` slots of the worker grid."""

    def __init__(self, group: dist.ProcessGroup, nodes: int, slots: int, parent: TimedGroup) -> None:
        super().__init__(group, nodes * slots, align=parent.align, scope="inter", parent=parent)
        self.nodes, self.slots = nodes, slots
        self.world_size = self.ranks * nodes  # M

    def _grid(self, x: Tensor) -> Tensor:
        return x.reshape(self.nodes, self.slots, *x.shape[1:])  # [a nodes, s slots, *sh]

    def all_reduce(self, x: Tensor, op: str = "sum") -> Tensor:
        """x [w, *s] -> [w, *s]: each slot's rows combined over every node."""
        grid = self._grid(x)
        out = local_sum(grid, op).contiguous()  # [s, *sh]: this rank's nodes first
        if out.numel():
            self._timed("all_reduce", out, out.numel() * out.element_size(),
                        lambda: dist.all_reduce(out, op=OPS[op], group=self.group))
        return out.unsqueeze(0).expand_as(grid).reshape(x.shape)

    def all_gather(self, x: Tensor) -> Tensor:
        """x [w, *s] -> [w, M, *s]: the rows at each row's slot, in node order."""
        grid = self._grid(x).contiguous()
        parts = [torch.empty_like(grid) for _ in range(self.ranks)]
        if grid.numel():
            self._timed("all_gather", grid, self.ranks * grid.numel() * grid.element_size(),
                        lambda: dist.all_gather(parts, grid, group=self.group))
        every = torch.cat(parts).transpose(0, 1)  # [s, M, *sh]
        return every.unsqueeze(0).expand(self.nodes, *every.shape).reshape(x.shape[0], self.world_size, *x.shape[1:])

    def all_to_all(self, x: Tensor) -> Tensor:
        """x [w, M, *s] -> [w, M, *s]: out[(k, j)][q] = x[(q, j)][k] over nodes k, q and slot j."""
        a, shape = self.nodes, x.shape[2:]
        grid = x.reshape(a, self.slots, self.ranks, a, *shape)  # [a src, s, R dst rank, a dst, *sh]
        send = grid.permute(2, 3, 1, 0, *range(4, grid.dim())).contiguous()  # [R dst, a dst, s, a src, *sh]
        recv = torch.empty_like(send)  # [R src, a mine, s, a src, *sh]
        if send.numel():
            self._timed("all_to_all", send, send.numel() * send.element_size(),
                        lambda: dist.all_to_all_single(recv, send, group=self.group))
        out = recv.permute(1, 2, 0, 3, *range(4, recv.dim()))  # [a mine, s, R src, a src, *sh]
        return out.reshape(x.shape[0], self.world_size, *shape)


def _subgroup(comm: TimedGroup, blocks: list[range]) -> dist.ProcessGroup:
    """The subgroup of this rank's block of comm's group ranks (blocks partition them).

    On the whole world every rank creates every block's group, in the same order, as
    torch.distributed expects. On a subgroup of the world only its members can take part, so each
    rank creates its own block's group alone (use_local_synchronization); torch names such groups
    from the count of groups a rank already knows, so the members must have created the same
    groups before (a rank outside an earlier group knows one fewer and would wait forever)."""
    mine = next(block for block in blocks if comm.rank in block)
    if comm.group is None or dist.get_world_size(comm.group) == dist.get_world_size():
        members = dist.get_process_group_ranks(comm.group) if comm.group is not None else list(range(comm.ranks))
        groups = [dist.new_group([members[r] for r in block]) for block in blocks]
        return groups[blocks.index(mine)]
    members = dist.get_process_group_ranks(comm.group)
    return dist.new_group([members[r] for r in mine], use_local_synchronization=True)


def process_group_nodes(comm) -> Nodes:
    """The node groups of a real process group (module doc)."""
    g, m = node_layout(comm.world_size, comm.workers_per_node)
    w = comm.local_workers
    if g % w and w % g:
        raise LionsimError(f"hierarchical transports need each rank's workers inside one node, or whole nodes in "
                           f"one rank: {w} workers per rank and {g} workers per node (use --ranks so that W / R "
                           f"divides {g} or is a multiple of it)")
    if w <= g:  # a node of g / w ranks; this rank holds w of its slots
        per_node = g // w
        node, place = divmod(comm.rank, per_node)
        nodes, slots = 1, w
        if per_node == 1:
            intra = SimGroupComm(1, w, across=False) if w > 1 else SoloComm()
        else:
            group = _subgroup(comm, [range(n * per_node, (n + 1) * per_node) for n in range(m)])
            intra = type(comm)(group, w, align=comm.align, scope="intra", parent=comm)  # a ProcessGroupComm
        cross, per_cross = range(place, comm.ranks, per_node), per_node
        node_of, slot_of = torch.full((w,), node, dtype=torch.int64), place * w + torch.arange(w)
    else:  # this rank holds w / g whole nodes
        nodes, slots = w // g, g
        intra = SimGroupComm(nodes, g, across=False) if g > 1 else SoloComm()
        cross, per_cross = range(comm.ranks), 1
        node_of, slot_of = comm.rank * nodes + torch.arange(w) // g, torch.arange(w) % g
    if m == 1:
        inter = SoloComm()
    elif len(cross) == 1:  # every node in this rank: index groups, no real collective
        inter = SimGroupComm(nodes, slots, across=True)
    else:
        inter = CrossComm(_subgroup(comm, [range(p, comm.ranks, per_cross) for p in range(per_cross)]),
                          nodes, slots, comm)
    if isinstance(inter, CrossComm):  # the rank's nodes at one slot, among the ranks holding that slot
        slot_comm = type(comm)(inter.group, nodes, align=comm.align, scope="inter", parent=comm)
    else:
        from lionsim.backends.sim import SimComm

        slot_comm = SimComm(m)  # every node in this rank (or one node): no real collective
    return Nodes(size=g, count=m, intra=intra, inter=inter, node=node_of, slot=slot_of,
                 slots=tuple(Slot(rows=torch.arange(nodes) * slots + j, comm=slot_comm) for j in range(slots)))
