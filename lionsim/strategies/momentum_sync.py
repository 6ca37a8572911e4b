"""Selective momentum synchronization (Lion Cub): every so often all workers average their
momentum buffers in full precision, so per-worker momenta do not drift apart.

    never        no sync (Distributed Lion as published)
    every:K      steps K, 2K, 3K, ...
    schedule:K   gaps that grow as 2^(j/K): the j-th gap (j = 0, 1, ...) is round(2^(j/K))
                 steps, so syncs are dense early in training and sparse later.
"""

from __future__ import annotations

from dataclasses import dataclass

from lionsim.errors import LionsimError

ACCEPTED = "never, every:K or schedule:K with K a positive integer"


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
