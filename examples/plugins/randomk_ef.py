"""Random-k sparsification with error feedback (Stich, Cordonnier & Jaggi, "Sparsified SGD with
Memory", NeurIPS 2018): a lionsim strategy written as a plug-in, in one file.

    per worker i:  v_i = m_i + lr g_i               (the step it owes, with what it kept back)
                   s_i = v_i on k random positions   (k = ceil(ratio P), at least 1), 0 elsewhere
                   m_i = v_i - s_i                   (what was not sent is remembered)
    exchange:      every s_i all-gathered as (index, value) pairs (sparse-allgather), summed, / N
    update:        x <- x (1 - lr wd) - mean_i s_i

Worker i's positions at step t are the first k of torch.randperm(P) drawn from a generator
seeded by (seed, t, i): the same on every backend, so sim and gloo train the same run.

Load it with `--plugin examples/plugins/randomk_ef.py`; then `-s randomk-ef` works in bench,
estimate, sweep and report, and `--randomk-ef-ratio` (or `--opt randomk-ef.ratio=...`) sets k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies import STRATEGIES, Strategy
from lionsim.strategies.core.base import Hyper
from lionsim.strategies.core.form import between, option
from lionsim.transports import PER_BUCKET, Payload, PayloadSpec


def draw_key(seed: int, step: int, worker: int) -> int:
    """The generator seed of one worker's positions at one step."""
    return ((seed * 1_000_003 + step) * 1_000_003 + worker) % 2**63


def random_positions(numel: int, k: int, seed: int, step: int, worker: int) -> Tensor:
    """int64 [k]: the positions global worker `worker` sends at 1-based `step`."""
    generator = torch.Generator().manual_seed(draw_key(seed, step, worker))
    return torch.randperm(numel, generator=generator)[:k]


@STRATEGIES.register("randomk-ef")
class RandomKEF(Strategy):
    name = "randomk-ef"
    summary = "random-k sparsification with error feedback (Stich et al. 2018): k random pairs per worker, all-gathered"
    payload_kind = "sparse"
    default_transport = "sparse-allgather"
    schedule = PER_BUCKET  # as GRACE runs random-k (sands-lab/grace randomk.py): per tensor, from Horovod's backward hooks
    defaults = Hyper(lr=0.1, weight_decay=0.0, betas=(0.0, 0.0))  # plain SGD: betas unused
    bytes = StrategyBytes(3 * F32, 2 * F32, "rule reads g, m, writes m = m + lr g (the k sent positions are read "
                                            "and zeroed: k of P); update reads p, writes p")

    @dataclass(frozen=True, kw_only=True)
    class Options:
        ratio: float = option(0.05, check=between(0, 1, low_open=True))
        """Fraction of the parameters each worker sends per step (at least one)."""

    tuning: dict[str, dict] = {}  # no workload measured yet: the defaults above everywhere

    def __init__(self, cfg, layout, comm) -> None:
        super().__init__(cfg, layout, comm)
        self.k = max(1, math.ceil(self.opts.ratio * layout.numel))
        self.memory = self.zeros()  # m [w, P]: what each worker has not sent yet
        self.steps = 0
        self.first = comm.first_worker  # global index of this process's first worker

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="sparse", numel=self.layout.numel, k=self.k)

    def spec_scaled(self, params: int, tensors: int) -> PayloadSpec:
        return PayloadSpec(kind="sparse", numel=params, k=max(1, math.ceil(self.opts.ratio * params)))

    def encode(self, grads: Tensor, params: Tensor, comm, clock) -> Payload:
        self.steps += 1
        self.memory.add_(grads, alpha=self.hyper.lr)  # v_i, in the memory buffer [w, P]
        indices = torch.stack([random_positions(self.layout.numel, self.k, self.cfg.seed, self.steps, self.first + row)
                               for row in range(self.local)]).to(grads.device)  # [w, k]
        values = self.memory.gather(1, indices)  # s_i's nonzeros
        self.memory.scatter_(1, indices, 0.0)  # m_i = v_i - s_i
        return Payload(self.payload_spec(), values, indices=indices)

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        params.mul_(1 - self.hyper.lr * self.hyper.weight_decay)
        params.sub_(aggregate[0])  # the mean of the s_i (lr is already in them)
