"""Tie rules of the majority vote: what sign(S) gives where the votes cast split evenly.

    zero       sign(0) = 0: the coordinate is not updated (Liu et al. 2024; the default)
    alternate  +1 on odd steps, -1 on even ones (the Lion Cub authors' code flips a flag)
    random     a coin per tied coordinate, a pure function of (seed, step, coordinate index)

The coin needs no generator state and no communication: every rank, and every chunk owner of
a2a-1bit, computes the same coin for the same coordinate. A coordinate where nobody voted
(every worker abstained) is not a tie: it gets 0 under every rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from lionsim.errors import LionsimError
from lionsim.tie_rules import TIE_RULES

_M32 = 0xFFFFFFFF
_M64 = (1 << 64) - 1


def check_tie(rule: str) -> str:
    if rule not in TIE_RULES:
        raise LionsimError(f"bad --tie {rule!r}; accepted: {', '.join(TIE_RULES)}")
    return rule


def step_key(seed: int, step: int) -> int:
    """64 well-mixed bits from (seed, step): splitmix64 of both, chained."""
    x = 0
    for v in (seed, step):
        x = (x + (v & _M64) + 0x9E3779B97F4A7C15) & _M64
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
        x ^= x >> 31
    return x


def mix32(x: Tensor) -> Tensor:
    """A 32-bit integer hash on int64 tensors (values < 2**32, so no product overflows)."""
    x = ((x >> 16) ^ x) * 0x45D9F3B & _M32
    x = ((x >> 16) ^ x) * 0x45D9F3B & _M32
    return (x >> 16) ^ x


def coin(seed: int, step: int, index: Tensor) -> Tensor:
    """+1/-1 (int64) per global coordinate index, the same wherever it is computed."""
    key = step_key(seed, step)
    index = index.to(torch.int64)
    x = mix32((index & _M32) ^ (key & _M32))
    x = mix32(x ^ (index >> 32) ^ (key >> 32))
    return (x & 1) * 2 - 1


@dataclass(frozen=True, slots=True)
class TieBreak:
    """The tie rule of one step's vote."""

    rule: str = "zero"
    """zero | alternate | random."""
    seed: int = 0
    """random: the run's seed."""
    step: int = 1
    """Votes cast so far, this one included (1 on the first step)."""
    offset: int = 0
    """Added to every coordinate index: a transport that hands one share of the vector to another
    transport (hier:TRANSPORT) shifts the rule by the share's start, so a coordinate keeps its coin."""

    def __post_init__(self) -> None:
        check_tie(self.rule)

    @property
    def breaks(self) -> bool:
        """Whether a tie gives a direction (so the downlink needs no third level)."""
        return self.rule != "zero"

    def direction(self, index: Tensor) -> Tensor:
        """+1/-1 (int64) for ties at these global coordinate indices (+ offset)."""
        if self.offset:
            index = index + self.offset
        if self.rule == "alternate":
            return torch.full_like(index, 1 if self.step % 2 else -1, dtype=torch.int64)
        if self.rule == "random":
            return coin(self.seed, self.step, index)
        raise ValueError("sign(0) = 0 breaks no tie")
