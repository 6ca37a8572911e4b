"""Lion Cub's L1-scaled multi-level votes (Ishikawa et al. 2024, REFERENCE.md 3).

Each worker forms Lion's c = b1 * m + (1 - b1) * g, scales it per tensor by its L1 mean and
rounds to s + 1 levels each side: q = clip(round(c / mean|c| * s / 2), -s, s), with
s = floor(127 / N) so that the sum of N workers' levels fits an int8 all-reduce and cannot
overflow (past 127 workers s = 1 and the container widens). The replica moves by
sign(sum q) (tie -> 0), with local weight decay, as Distributed Lion.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.optim.functional import apply_update_, decay_momentum_, lion_interpolation
from lionsim.strategies.base import STRATEGIES, Hyper, MomentumSyncing, Strategy
from lionsim.timing import Clock
from lionsim.transports import Payload, PayloadSpec


def l1_levels(c: Tensor, per_tensor_l1_mean: Tensor, max_level: int) -> Tensor:
    """q = clip(round(c / mean|c| * s/2), -s, s) as int8 (a tensor with mean|c| = 0 sends 0)."""
    scale = per_tensor_l1_mean.clamp_min(torch.finfo(c.dtype).tiny)
    q = torch.round(c / scale * (max_level / 2)).clamp_(-max_level, max_level)
    return q.to(torch.int8 if max_level <= 127 else torch.int32)  # never int16: no backend sums it


@STRATEGIES.register("lioncub-l1")
class LionCubL1(MomentumSyncing, Strategy):
    name = "lioncub-l1"
    summary = "Lion Cub: L1-scaled multi-level votes (s = floor(127/N)) in an int8 all-reduce"
    payload_kind = "levels"
    default_transport = "int8-allreduce"
    defaults = Hyper(lr=3e-3, weight_decay=0.01, betas=(0.9, 0.99))

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.exp_avg = self.zeros()
        self.max_level = max(1, 127 // self.workers)

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="levels", numel=self.layout.numel, max_level=self.max_level)

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload:
        beta1, beta2 = self.hyper.betas
        c = lion_interpolation(self.exp_avg, grads, beta1)
        l1 = self.layout.expand(self.layout.segment_mean(c.abs()))
        levels = l1_levels(c, l1, self.max_level)
        decay_momentum_(self.exp_avg, grads, beta2)
        return Payload(self.payload_spec(), levels)

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        apply_update_(params, torch.sign(aggregate[0]), self.hyper.lr, self.hyper.weight_decay)
