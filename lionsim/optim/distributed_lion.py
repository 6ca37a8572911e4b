"""DistributedLion: a torch.optim.Optimizer for real data-parallel training with
torch.distributed (Liu et al. 2024, Algorithm 1).

Each rank keeps its own momentum and sends only the sign of its local Lion update through a
lionsim transport; every rank applies the same vote (or mean), so replicas stay identical
without ever all-reducing gradients. With no process group (or world size 1) it is exactly
Lion. The same transports run in the simulator, which is the reference for this class.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch.optim import Optimizer

from lionsim.aggregators import VOTE_RULES
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


class DistributedLion(Optimizer):
    def __init__(self, params, lr: float = 1e-4, betas: tuple[float, float] = (0.9, 0.99),
                 weight_decay: float = 0.0, vote: str = "mavo", transport: str = "int8-allreduce",
                 process_group: dist.ProcessGroup | None = None) -> None:
        if not lr > 0 or lr == float("inf"):  # also catches NaN
            raise ValueError(f"invalid learning rate {lr}; accepted: a finite number > 0")
        if not weight_decay >= 0 or weight_decay == float("inf"):
            raise ValueError(f"invalid weight_decay {weight_decay}; accepted: a finite number >= 0")
        if not all(0.0 <= b < 1.0 for b in betas):
            raise ValueError(f"invalid betas {betas}")
        self.rule = VOTE_RULES.get(vote)()
        self.transport = TRANSPORTS.get(transport)()
        if "votes" not in self.transport.carries:
            voting = [n for n, t in TRANSPORTS.items() if "votes" in t.carries]
            raise LionsimError(f"transport {transport!r} cannot carry votes; choose from: {', '.join(voting)}")
        self.process_group = process_group
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

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
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            lr, wd, (beta1, beta2) = group["lr"], group["weight_decay"], group["betas"]
            for p in params:
                self.state[p].setdefault("exp_avg", torch.zeros_like(p))
            if workers == 1:  # nobody to vote with: exactly Lion
                for p in params:
                    lion_update_(p, p.grad, self.state[p]["exp_avg"], lr, wd, beta1, beta2)
                continue
            votes = []
            for p in params:
                exp_avg = self.state[p]["exp_avg"]
                votes.append(sign_votes(lion_interpolation(exp_avg, p.grad, beta1), workers).reshape(-1))
                decay_momentum_(exp_avg, p.grad, beta2)
            flat = torch.cat(votes).unsqueeze(0)  # [1, n]: one collective for the whole group
            spec = PayloadSpec(kind="votes", numel=flat.shape[1], rule=self.rule)
            update = self.transport.aggregate(Payload(spec, flat), ProcessGroupComm(self.process_group))[0]
            offset = 0
            for p in params:
                n = p.numel()
                apply_update_(p, update[offset : offset + n].view_as(p).to(p.dtype), lr, wd)
                offset += n
        return loss
