"""Selective momentum synchronization (Lion Cub): every so often all workers average their
momentum buffers in full precision, so per-worker momenta do not drift apart.

    never        no sync (Distributed Lion as published)
    every:K      steps K, 2K, 3K, ...
    schedule:K   gaps that grow as 2^(j/K): the j-th gap (j = 0, 1, ...) is round(2^(j/K))
                 steps, so syncs are dense early in training and sparse later.

Which tensors are synced is a second knob (TensorSelection, --sync-tensors): all of them, or
those a size rule or name patterns pick; only their bytes are all-reduced.
"""

from __future__ import annotations

from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.timing import Clock

CALL_LABEL = "momentum sync"
"""The label of a sync's float32 all-reduce of the synced momenta (4 bytes a parameter)."""


class MomentumSyncing:
    """Mixin for strategies with per-worker momentum `self.exp_avg` [w, P]: averages it in
    float32 on the steps the --momentum-sync rule picks."""

    has_momentum_sync = True
    exp_avg: Tensor

    sync_index: Tensor | None
    sync_numel: int

    def extra_calls(self, step: int) -> list[CollectiveCall]:
        if self.workers > 1 and self.sync_rule.is_sync(step):
            return [CollectiveCall("all_reduce", 4 * self.sync_numel, CALL_LABEL)]
        return []

    def send_horizon(self) -> int:
        """The first sync (every:K's step K; schedule:K's step 1), or the strategy's own horizon
        where later: every sync is the same call."""
        first = self.sync_rule.k if self.sync_rule.mode == "every" else 1
        return max(first, super().send_horizon())  # type: ignore[misc]  (a mixin beside Strategy)

    def sync(self, comm: Comm, step: int, clock: Clock) -> None:
        if not (self.workers > 1 and self.sync_rule.is_sync(step)):
            return
        share = 1 / self.local  # the copies touch all w rows: book one worker's share
        with clock.section("update", scale=share):
            picked = self.exp_avg if self.sync_index is None else self.exp_avg[:, self.sync_index]
        with clock.section("collective"):
            total = comm.all_reduce(picked)
        with clock.section("update", scale=share):
            if self.sync_index is None:
                self.exp_avg.copy_(total / self.workers)
            else:
                self.exp_avg[:, self.sync_index] = total / self.workers
