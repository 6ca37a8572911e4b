"""Vote rules: from the sum S of N workers' votes to the applied update.

A vote is +1, -1, or 0 (abstain: the worker's c was exactly zero, so it has no direction to
offer). Every vote transport computes S (or the rule's code for it) exactly, and, where the
rule asks for it on a step with abstentions, whether anyone voted at all; so the rule, not the
transport, decides the result; only bytes and time differ between transports.

Tie rule (MaVo): S = 0 among the votes cast gives sign(0) = 0 by default (Liu et al. 2024, Algorithm 1), or a
direction under `--tie alternate|random` (lionsim.aggregators.ties). A coordinate where every
worker abstained gets 0 under every rule, so it moves by weight decay only, as in Lion.

Downlink codes: a transport that sends the aggregate back (a2a second phase, parameter-server
pull) sends `encode(S)` in ceil(log2(levels)) bits and the receiver applies `decode`. The levels
depend on whether the step carried abstentions (`abstain`): then S takes every integer in
[-N, N] and "nobody voted" is a result of its own.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import torch
from torch import Tensor

from lionsim.aggregators.ties import TieBreak
from lionsim.registry import Registry


def coordinates(like: Tensor) -> Tensor:
    """Global indices of the last dimension when it starts at coordinate 0."""
    return torch.arange(like.shape[-1], device=like.device)


class VoteRule(ABC):
    name: str
    needs_voted: bool = False
    """Whether `result` must know where nobody voted (a tie rule that moves ties)."""

    @abstractmethod
    def value(self, vote_sum: Tensor, workers: int) -> Tensor:
        """The update direction from the vote sum S in [-N, N], ties by sign(0) = 0."""

    def result(self, vote_sum: Tensor, workers: int, voted: Tensor | None = None,
               index: Tensor | None = None) -> Tensor:
        """The update direction. voted: bool, True where at least one worker voted (None:
        everyone voted everywhere); index: global coordinate of each entry (None: 0..n-1)."""
        return self.value(vote_sum, workers)

    @abstractmethod
    def levels(self, workers: int, abstain: bool = False) -> int:
        """How many distinct results the rule can give for N workers."""

    @abstractmethod
    def encode(self, vote_sum: Tensor, workers: int, voted: Tensor | None = None,
               index: Tensor | None = None, abstain: bool = False) -> Tensor:
        """S -> integer code in [0, levels) for the downlink."""

    @abstractmethod
    def decode(self, codes: Tensor, workers: int, abstain: bool = False) -> Tensor:
        """Code -> update direction; decode(encode(S)) == result(S)."""

    def bits_down(self, workers: int, abstain: bool = False) -> int:
        return max(1, math.ceil(math.log2(self.levels(workers, abstain))))

    # What value, encode and decode move per element as their GPU path runs (bytes, ops), every
    # input read and every output written (lionsim.perf.bytecount counts the same ops); the
    # transports declare their kernels with them. Tie rules that move ties add a where (left out).

    def value_passes(self, sum_bytes: float) -> tuple[float, int]:
        """value() of a `sum_bytes`-wide vote sum (a rule that says nothing: one op, float32 out)."""
        return sum_bytes + 4, 1

    def encode_passes(self, workers: int, sum_bytes: float = 4.0) -> tuple[float, int]:
        """encode() of a `sum_bytes`-wide vote sum into int64 codes."""
        return sum_bytes + 8, 1

    def decode_passes(self, workers: int) -> tuple[float, int]:
        """decode() of int64 codes into float32 results."""
        return 8 + 4, 1


VOTE_RULES: Registry[type[VoteRule]] = Registry("vote rule")


@VOTE_RULES.register("mavo")
class MajorityVote(VoteRule):
    """Delta = sign(S): majority vote of the votes cast; a tie follows the tie rule. Down: 1 bit
    for odd N, or any N under a tie rule that moves ties; else (and on abstention steps) 2."""

    name = "mavo"

    def __init__(self, tie: TieBreak | None = None) -> None:
        self.tie = tie or TieBreak()
        self.needs_voted = self.tie.breaks

    def __eq__(self, other: object) -> bool:  # payload specs compare rules by value
        return type(other) is type(self) and other.tie == self.tie

    def __hash__(self) -> int:
        return hash((type(self), self.tie))

    def value(self, vote_sum: Tensor, workers: int) -> Tensor:
        return torch.sign(vote_sum).to(torch.float32)

    def result(self, vote_sum: Tensor, workers: int, voted: Tensor | None = None,
               index: Tensor | None = None) -> Tensor:
        out = self.value(vote_sum, workers)
        if not self.tie.breaks:
            return out
        tied = vote_sum == 0 if voted is None else (vote_sum == 0) & voted
        where = coordinates(vote_sum).expand_as(vote_sum) if index is None else index.expand_as(vote_sum)
        return torch.where(tied, self.tie.direction(where).to(out.dtype), out)

    def levels(self, workers: int, abstain: bool = False) -> int:
        if abstain:
            return 3  # +1, -1, and 0 where nobody voted (or a zero-rule tie)
        return 2 if workers % 2 or self.tie.breaks else 3  # odd N cannot tie

    def encode(self, vote_sum: Tensor, workers: int, voted: Tensor | None = None,
               index: Tensor | None = None, abstain: bool = False) -> Tensor:
        r = self.result(vote_sum, workers, voted, index).to(torch.int64)
        return (r > 0).to(torch.int64) if self.levels(workers, abstain) == 2 else r + 1

    def decode(self, codes: Tensor, workers: int, abstain: bool = False) -> Tensor:
        two = self.levels(workers, abstain) == 2
        return (2 * codes - 1 if two else codes - 1).to(torch.float32)

    def value_passes(self, sum_bytes: float) -> tuple[float, int]:
        return 2 * sum_bytes + sum_bytes + 4, 2  # sign (read, write s), to float32 (read s, write 4)

    def encode_passes(self, workers: int, sum_bytes: float = 4.0) -> tuple[float, int]:
        value, ops = self.value_passes(sum_bytes)
        if self.levels(workers) == 2:  # to int64 (read 4, write 8), > 0 (8, 1), to int64 (1, 8)
            return value + 12 + 9 + 9, ops + 3
        return value + 12 + 16, ops + 2  # to int64, + 1 (read 8, write 8)

    def decode_passes(self, workers: int) -> tuple[float, int]:
        if self.levels(workers) == 2:  # 2 * c, - 1 (each read 8, write 8), to float32 (8, 4)
            return 16 + 16 + 12, 3
        return 16 + 12, 2  # c - 1, to float32


@VOTE_RULES.register("avg")
class MeanVote(VoteRule):
    """Delta = S / N: the mean of the votes, an abstention counting 0. The code is S + N
    (2N + 1 levels) on abstention steps, else the count of +1 votes, (S + N) / 2."""

    name = "avg"

    def value(self, vote_sum: Tensor, workers: int) -> Tensor:
        return vote_sum.to(torch.float32) / workers

    def levels(self, workers: int, abstain: bool = False) -> int:
        return 2 * workers + 1 if abstain else workers + 1

    def encode(self, vote_sum: Tensor, workers: int, voted: Tensor | None = None,
               index: Tensor | None = None, abstain: bool = False) -> Tensor:
        shifted = vote_sum.to(torch.int64) + workers
        return shifted if abstain else shifted // 2

    def decode(self, codes: Tensor, workers: int, abstain: bool = False) -> Tensor:
        s = codes - workers if abstain else 2 * codes - workers
        return s.to(torch.float32) / workers

    def value_passes(self, sum_bytes: float) -> tuple[float, int]:
        return sum_bytes + 4 + 8, 2  # to float32 (read s, write 4), / N (read 4, write 4)

    def encode_passes(self, workers: int, sum_bytes: float = 4.0) -> tuple[float, int]:
        return sum_bytes + 8 + 16 + 16, 3  # to int64, + N, // 2 (each int64 op reads 8, writes 8)

    def decode_passes(self, workers: int) -> tuple[float, int]:
        return 16 + 16 + 12 + 8, 4  # 2 * c, - N, to float32 (read 8, write 4), / N (4, 4)
