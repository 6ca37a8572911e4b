"""DistributedLion: a torch.optim.Optimizer for real data-parallel training with
torch.distributed (Liu et al. 2024, Algorithm 1).

Each rank keeps its own momentum and sends only the sign of its local Lion update through a
lionsim transport; every rank applies the same vote (or mean), so replicas stay identical
without ever all-reducing gradients. With no process group (or world size 1) it is exactly
Lion. The same transports run in the simulator, which is the reference for this class.

Missing gradients (a branch that one rank's batch skips) are treated alike on every rank, as
DDP's find_unused_parameters does: each step one small all-reduce (MAX) of a per-parameter
"has a gradient" flag tells every rank which parameters someone used.
- Used on no rank: skipped on every rank, as Lion and torch.optim skip p.grad None (no
  decay, no momentum change, no update).
- Used on some ranks: a rank without a gradient steps it with a zero gradient, the share of
  DDP's averaged gradient that rank contributes. Its momentum decays (m <- b2 m) and it
  votes the sign of b1 m, which is 0 (an abstention) while m is still exactly 0.
Coordinates whose c is exactly zero on every rank (an embedding row no batch used) get no vote
and move by weight decay only, as in Lion, for every transport (lionsim.transports.abstain).

Ties (MaVo): `tie="zero"` (sign(0) = 0, the default), "alternate" (+1 on odd steps, -1 on even)
or "random" (a coin per coordinate from (tie_seed, step, index)); every rank counts the same
steps, so all agree, and so does the simulator given the same seed. A coordinate's index is
its place in the flat concatenation of every group's parameters (the order the simulator
flattens a model), so groups draw independent coins, not the same ones from 0 each.
Without the flag, ranks would send payloads of different sizes (gloo aborts: "Received data
size doesn't match expected size") or, if the sizes happened to match, vote on different
parameters and drift apart.

Hierarchical transports (hier-exact, hier-1bit) count votes inside each node first:
`workers_per_node` ranks per node, consecutive ranks sharing a node as a launcher places them;
by default torchrun's LOCAL_WORLD_SIZE, else 1 (every rank its own node). Their node-local and
cross-node subgroups are created on the first step, on every rank together.
"""

from __future__ import annotations

import hashlib
import math
import os
from itertools import accumulate

import torch
import torch.distributed as dist
from torch import Tensor
from torch.optim import Optimizer

from lionsim.aggregators import VOTE_RULES, MajorityVote, TieBreak, check_tie
from lionsim.aggregators.votes import coordinates
from lionsim.backends import ProcessGroupComm
from lionsim.errors import LionsimError
from lionsim.optim.functional import (
    apply_update_,
    decay_momentum_,
    lion_interpolation,
    lion_update_,
    sign_votes,
)
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec


class PlacedVote(MajorityVote):
    """MajorityVote whose tie coins are drawn at each entry's place in the whole model, not at
    its position in the group's payload (which skips other groups and unused parameters)."""

    def __init__(self, tie: TieBreak, place: Tensor) -> None:
        super().__init__(tie)
        self.place = place  # [n]: flat model index of each payload entry

    def result(self, vote_sum: Tensor, workers: int, voted: Tensor | None = None,
               index: Tensor | None = None) -> Tensor:
        where = coordinates(vote_sum) if index is None else index
        # a2a-1bit's chunk padding votes +1 everywhere, so never ties: clamping keeps it in range
        return super().result(vote_sum, workers, voted, self.place[where.clamp(max=self.place.numel() - 1)])


WHOLE_OPTIMIZER = ("vote", "transport", "process_group", "tie", "tie_seed", "workers_per_node")
"""Options of the whole optimizer (one collective a group, the same on every rank), refused in a
parameter group, where they would be ignored."""


def _real(value, ok) -> bool:
    """Whether `value` is a real number (not a bool, not a string) that `ok` accepts."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and ok(float(value))


def check_hyper(group: dict, where: str = "") -> None:
    """lr, betas and weight_decay of the defaults or of one parameter group (`where`: " in
    parameter group 2"), each refused naming the value and what is accepted."""
    betas = group["betas"]
    bad = [("learning rate", group["lr"], "a finite number > 0",
            _real(group["lr"], lambda v: 0 < v < float("inf"))),
           ("weight_decay", group["weight_decay"], "a finite number >= 0",
            _real(group["weight_decay"], lambda v: 0 <= v < float("inf"))),
           ("betas", betas, "two numbers (beta1, beta2), each in [0, 1)",
            isinstance(betas, (tuple, list)) and len(betas) == 2 and all(_real(b, lambda v: 0 <= v < 1) for b in betas))]
    for name, value, accepted, ok in bad:
        if not ok:
            raise ValueError(f"invalid {name} {value!r}{where}; accepted: {accepted}")
    whole = [key for key in WHOLE_OPTIMIZER if key in group]
    if whole:
        raise ValueError(f"{', '.join(whole)}{where} is the whole optimizer's option, not a parameter group's "
                         "(every group's votes go through one transport): give it to DistributedLion(...)")


class DistributedLion(Optimizer):
    """Distributed Lion over torch.distributed (module doc): each rank sends the sign of its local
    Lion update through `transport` and applies the vote (`vote="mavo"`) or mean (`"avg"`) of all
    ranks', so replicas stay identical. lr, betas and weight_decay may differ by parameter group;
    vote, transport, tie and the process group are the whole optimizer's. Every rank must hold the
    same parameters in the same groups (checked on the first step)."""

    def __init__(self, params, lr: float = 1e-4, betas: tuple[float, float] = (0.9, 0.99),
                 weight_decay: float = 0.0, vote: str = "mavo", transport: str = "int8-allreduce",
                 process_group: dist.ProcessGroup | None = None, tie: str = "zero", tie_seed: int = 0,
                 workers_per_node: int | None = None) -> None:
        check_hyper(dict(lr=lr, betas=betas, weight_decay=weight_decay))
        if process_group is not None and not isinstance(process_group, dist.ProcessGroup):
            raise ValueError(f"invalid process_group {process_group!r}; accepted: a torch.distributed.ProcessGroup "
                             "(dist.new_group(...)), or None for the default group")
        self.rule = VOTE_RULES.get(vote)()
        self.tie, self.tie_seed = check_tie(tie), tie_seed
        self.transport = TRANSPORTS.get(transport)()
        if "votes" not in self.transport.carries:
            voting = [n for n, t in TRANSPORTS.items() if "votes" in t.carries]
            raise LionsimError(f"transport {transport!r} cannot carry votes; choose from: {', '.join(voting)}")
        self.transport.check(PayloadSpec(kind="votes", numel=1, rule=self.rule), 1)  # hier-1bit: a majority vote
        if workers_per_node is None:
            workers_per_node = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
        if isinstance(workers_per_node, bool) or not isinstance(workers_per_node, int) or workers_per_node < 1:
            raise ValueError(f"invalid workers_per_node {workers_per_node!r}; accepted: an integer >= 1")
        self.workers_per_node = workers_per_node
        self.process_group = process_group
        self._comm: ProcessGroupComm | None = None
        super().__init__(params, dict(lr=lr, betas=tuple(betas), weight_decay=weight_decay))

    def add_param_group(self, param_group: dict) -> None:
        """The group's lr, betas and weight_decay checked as the defaults are, before torch's adds
        it: a refused group is not kept."""
        index = len(self.param_groups)
        own = any(key in param_group for key in ("lr", "betas", "weight_decay", *WHOLE_OPTIMIZER))
        check_hyper({**self.defaults, **param_group}, f" in parameter group {index}" if own else "")
        super().add_param_group(param_group)

    def world_size(self) -> int:
        if self.process_group is None and not (dist.is_available() and dist.is_initialized()):
            return 1
        return dist.get_world_size(self.process_group)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        workers = self.world_size()
        if workers == 1:  # nobody to vote with: exactly Lion
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        lion_update_(p, p.grad, self._exp_avg(p), group["lr"], group["weight_decay"],
                                     *group["betas"])
            return loss
        if self._comm is None:  # one communicator, so node subgroups are created once
            # The optimizer measures nothing: no aligning barrier (and its timing log is cleared each step).
            self._comm = ProcessGroupComm(self.process_group, align=False, workers_per_node=self.workers_per_node)
            self._check_same_parameters(self._comm)
        comm = self._comm
        used = self._used_on_any_rank(comm)
        places = self._places()
        comm.take_log()  # nobody reads the timings: keep the log from growing
        for group in self.param_groups:
            group["votes_cast"] = group.get("votes_cast", 0) + 1  # the tie rules' step, saved with the state
            params = [p for p in group["params"] if used[p]]
            if params:  # the same list on every rank, so every rank calls the same collectives
                self._vote_step(group, params, comm, workers, places)
        return loss

    def _check_same_parameters(self, comm: ProcessGroupComm) -> None:
        """Every rank holds the same groups of parameters of the same shapes, or every rank raises
        (one MAX all-reduce of a digest and its negation, on the first step): otherwise the ranks' payloads
        differ in size and gloo aborts the process ("Received data size doesn't match expected size")."""
        shapes = [[tuple(p.shape) for p in group["params"]] for group in self.param_groups]
        digest = int.from_bytes(hashlib.sha256(repr(shapes).encode()).digest()[:7], "big")
        most, least_negated = comm.max_over_ranks(torch.tensor([digest, -digest], dtype=torch.int64)).tolist()
        if most != -least_negated:
            sizes = ", ".join(f"group {i}: {len(s)} tensors, {sum(math.prod(t) for t in s):,} parameters"
                              for i, s in enumerate(shapes))
            raise LionsimError(f"the ranks hold different parameters ({sizes} on rank {comm.rank}): every rank must "
                               "build the same model and the same parameter groups, in the same order")

    def _places(self) -> dict[Tensor, int]:
        """Each parameter's offset in the flat concatenation of every group's parameters."""
        params = [p for group in self.param_groups for p in group["params"]]
        return dict(zip(params, accumulate((p.numel() for p in params), initial=0)))

    def _exp_avg(self, p: Tensor) -> Tensor:
        return self.state[p].setdefault("exp_avg", torch.zeros_like(p))

    def _used_on_any_rank(self, comm: ProcessGroupComm) -> dict[Tensor, bool]:
        """Whether each parameter has a gradient on at least one rank: one MAX all-reduce."""
        params = [p for group in self.param_groups for p in group["params"]]
        has_grad = torch.tensor([p.grad is not None for p in params], dtype=torch.uint8)
        anywhere = comm.max_over_ranks(has_grad).tolist()
        return {p: bool(flag) for p, flag in zip(params, anywhere)}

    def _vote_step(self, group: dict, params: list[Tensor], comm: ProcessGroupComm, workers: int,
                   places: dict[Tensor, int]) -> None:
        """Algorithm 1 for one parameter group: local votes, one collective, the same update everywhere."""
        lr, wd, (beta1, beta2) = group["lr"], group["weight_decay"], group["betas"]
        votes = []
        for p in params:
            grad = p.grad if p.grad is not None else torch.zeros_like(p)  # used elsewhere, not here
            exp_avg = self._exp_avg(p)
            votes.append(sign_votes(lion_interpolation(exp_avg, grad, beta1), workers).reshape(-1))
            decay_momentum_(exp_avg, grad, beta2)
        flat = torch.cat(votes).unsqueeze(0)  # [1, n]: one collective for the whole group
        rule = self.rule
        if isinstance(rule, MajorityVote):
            tie = TieBreak(self.tie, seed=self.tie_seed, step=group["votes_cast"])
            if tie.rule == "random":  # the only rule whose result depends on the coordinate
                place = torch.cat([torch.arange(places[p], places[p] + p.numel(), device=p.device) for p in params])
                rule = PlacedVote(tie, place)
            else:
                rule = MajorityVote(tie)
        spec = PayloadSpec(kind="votes", numel=flat.shape[1], rule=rule)
        update = self.transport.aggregate(Payload(spec, flat), comm)[0]
        offset = 0
        for p in params:
            n = p.numel()
            apply_update_(p, update[offset : offset + n].view_as(p).to(p.dtype), lr, wd)
            offset += n
