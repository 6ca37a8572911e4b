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

from dataclasses import dataclass
from fnmatch import fnmatchcase

from torch import Tensor

from lionsim.backends import Comm
from lionsim.errors import LionsimError
from lionsim.network.calls import CollectiveCall
from lionsim.timing import Clock

ACCEPTED = "never, every:K or schedule:K with K a positive integer"

CALL_LABEL = "momentum sync"
"""The label of a sync's float32 all-reduce of the synced momenta (4 bytes a parameter)."""


@dataclass(frozen=True, slots=True)
class MomentumSync:
    mode: str
    """never | every | schedule"""
    k: int = 0

    @classmethod
    def parse(cls, text: str) -> "MomentumSync":
        if text == "never":
            return cls("never")
        mode, _, value = text.partition(":")
        if mode in ("every", "schedule") and value.isdigit() and int(value) > 0:
            return cls(mode, int(value))
        raise LionsimError(f"bad --momentum-sync {text!r}; accepted: {ACCEPTED}")

    def sync_steps(self, upto: int) -> set[int]:
        """The 1-based steps <= upto after which momenta are averaged."""
        return {step for step in range(1, upto + 1) if self.is_sync(step)}

    def is_sync(self, step: int) -> bool:
        """Whether momenta are averaged after 1-based `step`."""
        if self.mode == "never":
            return False
        if self.mode == "every":
            return step % self.k == 0
        at, j = 0, 0
        while at < step:
            at += max(1, round(2 ** (j / self.k)))
            j += 1
        return at == step

    def __str__(self) -> str:
        return self.mode if self.mode == "never" else f"{self.mode}:{self.k}"


SELECT_ACCEPTED = ("all, min-numel:N (tensors of at least N parameters) or a comma list of "
                   "name patterns (fnmatch globs, e.g. 'blocks.*.attn.*,head.weight')")


@dataclass(frozen=True, slots=True)
class TensorSelection:
    """Which tensors a momentum sync averages (--sync-tensors); the rest keep their own.

    all            every tensor (Lion Cub's plain momentum sync)
    min-numel:N    tensors with at least N parameters (the large layers, where momenta drift most
                   in bytes; small ones, biases and norms, stay local)
    GLOB[,GLOB]    tensors whose name matches one of the fnmatch patterns
    """

    rule: str
    """all | min-numel | names"""
    min_numel: int = 0
    patterns: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "TensorSelection":
        if text == "all":
            return cls("all")
        if text.startswith("min-numel:"):
            value = text.partition(":")[2]
            if value.isdigit() and int(value) > 0:
                return cls("min-numel", min_numel=int(value))
            raise LionsimError(f"bad --sync-tensors {text!r}; accepted: {SELECT_ACCEPTED}")
        patterns = tuple(p.strip() for p in text.split(","))
        if not text.strip() or not all(patterns):
            raise LionsimError(f"bad --sync-tensors {text!r}; accepted: {SELECT_ACCEPTED}")
        return cls("names", patterns=patterns)

    def picks(self, names: list[str], numels: list[int]) -> list[bool]:
        """Per tensor: whether its momentum is synced; fails if nothing would be."""
        if self.rule == "all":
            return [True] * len(names)
        if self.rule == "min-numel":
            picked = [n >= self.min_numel for n in numels]
        else:
            picked = [any(fnmatchcase(name, p) for p in self.patterns) for name in names]
        if not any(picked):
            shown = ", ".join(f"{n} ({k})" for n, k in list(zip(names, numels))[:8])
            raise LionsimError(f"--sync-tensors {self}: picks no tensor of this model; its tensors (parameters): "
                               f"{shown}{', ...' if len(names) > 8 else ''}")
        return picked

    def __str__(self) -> str:
        if self.rule == "min-numel":
            return f"min-numel:{self.min_numel}"
        return "all" if self.rule == "all" else ",".join(self.patterns)


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
