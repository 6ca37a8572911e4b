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

import math

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

    def momentum_syncs(self) -> bool:
        """Whether any step syncs: on more than one worker, under every:K or schedule:K."""
        return self.workers > 1 and self.sync_rule.mode != "never"

    def next_change(self, step: int) -> int:
        """A sync step alone, then the steps up to the next sync, within the strategy's own changes."""
        own = super().next_change(step)  # type: ignore[misc]  (a mixin beside Strategy)
        if not self.momentum_syncs():
            return own
        return min(own, step + 1 if self.sync_rule.is_sync(step) else self.sync_rule.next_sync(step))

    def repeats(self) -> tuple[int, int] | None:
        """every:K: the strategy's own period made a multiple of K (every sync is the same call);
        schedule:K: none, its gaps grow."""
        own = super().repeats()  # type: ignore[misc]  (a mixin beside Strategy)
        if not self.momentum_syncs():
            return own
        if own is None or self.sync_rule.mode != "every":
            return None
        warmup, period = own
        return (warmup, math.lcm(period, self.sync_rule.k))

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
