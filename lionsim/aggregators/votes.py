"""Vote rules: from the sum S of N workers' +/-1 votes to the applied update.

Every vote transport computes S (or the rule's code for it) exactly, so the rule, not the
transport, decides the result; only bytes and time differ between transports.

Tie rule (MaVo): an even split gives S = 0 and sign(0) = 0, so that coordinate is not
updated this step (REFERENCE.md 2). With binary votes a tie needs an even N.
Downlink codes: a transport that sends the aggregate back (a2a second phase, parameter-server
pull) sends `encode(S)` in ceil(log2(levels(N))) bits and the receiver applies `decode`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import torch
from torch import Tensor

from lionsim.registry import Registry


class VoteRule(ABC):
    name: str

    @abstractmethod
    def value(self, vote_sum: Tensor, workers: int) -> Tensor:
        """The update direction from the vote sum S in [-N, N] (same parity as N)."""

    @abstractmethod
    def levels(self, workers: int) -> int:
        """How many distinct results the rule can give for N workers."""

    @abstractmethod
    def encode(self, vote_sum: Tensor, workers: int) -> Tensor:
        """S -> integer code in [0, levels) for the downlink."""

    @abstractmethod
    def decode(self, codes: Tensor, workers: int) -> Tensor:
        """Code -> update direction; decode(encode(S)) == value(S)."""

    def bits_down(self, workers: int) -> int:
        return max(1, math.ceil(math.log2(self.levels(workers))))


VOTE_RULES: Registry[type[VoteRule]] = Registry("vote rule")


@VOTE_RULES.register("mavo")
class MajorityVote(VoteRule):
    """Delta = sign(S): majority vote, a tie gives 0. 1 bit down for odd N, 2 for even N."""

    name = "mavo"

    def value(self, vote_sum: Tensor, workers: int) -> Tensor:
        return torch.sign(vote_sum).to(torch.float32)

    def levels(self, workers: int) -> int:
        return 2 if workers % 2 else 3  # odd N cannot tie

    def encode(self, vote_sum: Tensor, workers: int) -> Tensor:
        sign = torch.sign(vote_sum).to(torch.int64)
        return (sign > 0).to(torch.int64) if workers % 2 else sign + 1

    def decode(self, codes: Tensor, workers: int) -> Tensor:
        return (2 * codes - 1 if workers % 2 else codes - 1).to(torch.float32)


@VOTE_RULES.register("avg")
class MeanVote(VoteRule):
    """Delta = S / N: the mean of the votes. The code is the count of +1 votes, (S + N) / 2."""

    name = "avg"

    def value(self, vote_sum: Tensor, workers: int) -> Tensor:
        return vote_sum.to(torch.float32) / workers

    def levels(self, workers: int) -> int:
        return workers + 1

    def encode(self, vote_sum: Tensor, workers: int) -> Tensor:
        return (vote_sum.to(torch.int64) + workers) // 2

    def decode(self, codes: Tensor, workers: int) -> Tensor:
        return (2 * codes - workers).to(torch.float32) / workers
