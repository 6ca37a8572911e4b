"""Which transports overlap communication with the backward pass, and how buckets are formed.

PyTorch DDP (Li et al. 2020, "PyTorch Distributed", VLDB) groups gradients into buckets of
about `bucket_cap_mb` and launches each bucket's all-reduce as soon as backward has produced
it, so communication runs while backward goes on; a communication hook may replace the
all-reduce by anything that turns one bucket into its result.

What lionsim overlaps (mode "auto"): a transport whose exchange for a bucket needs only
that bucket, and nothing computed from other buckets' results, can run in such a hook:

- fp32-allreduce, bf16-allreduce: DDP itself (bf16 as its bf16_compress_hook); fp8-allreduce,
  fp8-e5m2-allreduce: a DDP comm hook per bucket (as torchft's quantized all-reduce).
- int8-allreduce, pbit-allreduce: Lion's vote sign(b1 m + (1 - b1) g) is elementwise, so a
  bucket's votes need only that bucket's gradient and momentum; one all-reduce per bucket.
  The same holds for Lion Cub's L1 levels (a bucket holds whole tensors, and the scale is
  per tensor).
- allgather-1bit, sparse-allgather: one all-gather (pair) per bucket, as DDP's quantization
  hooks do.
- packed-allreduce (Lion Cub's ternary levels), allgather-levels (QSGD, per-tensor norms): as
  int8-allreduce and allgather-1bit, a bucket needs only its own tensors.
- lowrank-allreduce: PowerSGD is a DDP comm hook (torch's powerSGD_hook), per bucket: its
  three all-reduces (the rest, P, Q) run in series for each bucket.

What it does not (mode "auto"), and why:

- a2a-1bit: the two-phase all-reduce puts a vote between two dependent collectives. Lion Cub
  and DeepSpeed's 1-bit Adam, whose compressed all-reduce it is, run it once over the whole
  flattened buffer in the optimizer step, after backward.
- compressed-allreduce: 1-bit Adam's, with one scale over the whole flat buffer, once per
  step in the optimizer (its fp32 warm-up steps are priced the same way: conservative).
- param-server: the server must hold every worker's push before it votes and replies
  (Distributed Lion, Algorithm 1: one vote per step).
- hier-exact, hier-1bit: like a2a-1bit, a vote (each block's owner combining the nodes'
  summaries) sits between dependent collectives, so they run once after backward.

Mode "buckets" runs every transport per bucket (what a hook implementation of a2a-1bit or a
parameter server could reach: each bucket's phases in series); mode "none" runs every
exchange once after backward, as the Distributed Lion timing table adds its parts up.
A strategy's own extra collectives (TernGrad's scale maximum before encoding, momentum
sync after the update) never overlap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from lionsim.errors import LionsimError

MODES = ("auto", "buckets", "none")

BUCKETED = frozenset({"fp32-allreduce", "bf16-allreduce", "fp8-allreduce", "fp8-e5m2-allreduce", "int8-allreduce", "pbit-allreduce", "allgather-1bit",
                      "sparse-allgather", "packed-allreduce", "allgather-levels", "lowrank-allreduce"})
"""Transports mode "auto" runs per bucket during backward (module doc)."""
AFTER_BACKWARD = frozenset({"a2a-1bit", "param-server", "compressed-allreduce", "hier-exact", "hier-1bit",
                            "sparseloco-allgather", "fp4-allreduce"})
"""Transports mode "auto" runs once after backward (module doc)."""

GRAD_BYTES = 4
"""Bytes per parameter of the float32 gradients a bucket is measured in (as DDP's bucket_cap_mb)."""
MB = 1e6
"""Bytes in a MB (SI, as everywhere in lionsim; DDP's 25 "MB" default is 25 MiB = 26.2 MB)."""


@dataclass(kw_only=True, slots=True)
class OverlapConfig:
    """How a step's communication may overlap its backward pass."""

    mode: str = "auto"
    """auto (per transport, module doc) | buckets (every transport per bucket) | none."""
    bucket_mb: float = 25.0
    """Bucket size, MB (1e6 bytes) of float32 gradients, as DDP's bucket_cap_mb."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise LionsimError(f"bad overlap mode {self.mode!r}; accepted: {', '.join(MODES)}")
        ok = isinstance(self.bucket_mb, (int, float)) and math.isfinite(self.bucket_mb) and self.bucket_mb > 0
        if not ok:
            raise LionsimError(f"bad --bucket-mb {self.bucket_mb!r}; accepted: a finite number > 0 (MB of fp32 gradients)")

    @property
    def bucket_params(self) -> int:
        """Parameters per full bucket (at least one)."""
        return max(1, int(self.bucket_mb * MB // GRAD_BYTES))

    def bucketed(self, transport: str) -> bool:
        """Whether `transport`'s exchange runs per bucket during backward."""
        if self.mode == "none":
            return False
        if self.mode == "buckets":
            return True
        if transport.lower().startswith("hier:"):  # hier:T runs per bucket where T does (transports.hierarchy)
            transport = transport[len("hier:"):]
        if transport in BUCKETED:
            return True
        if transport in AFTER_BACKWARD:
            return False
        raise LionsimError(f"no overlap rule for transport {transport!r}; known: {', '.join(sorted(BUCKETED | AFTER_BACKWARD))}")


@dataclass(frozen=True, slots=True)
class Buckets:
    """How P parameters split into buckets, in the order backward produces them: a partial
    bucket first when P is not a multiple of the bucket (DDP's first bucket is small too),
    then `count` full buckets, so the last bucket is a full one."""

    first: int
    """Parameters of the partial first bucket; 0 when there is none."""
    size: int
    """Parameters of a full bucket."""
    count: int
    """Full buckets."""

    @classmethod
    def of(cls, numel: int, bucket_params: int) -> Buckets:
        count, first = divmod(numel, bucket_params)
        return cls(first=first, size=bucket_params, count=count)

    @property
    def total(self) -> int:
        """Buckets in all."""
        return self.count + (1 if self.first else 0)

    def sizes(self) -> list[int]:
        """Every bucket's parameters, in order (for tests and small models)."""
        return ([self.first] if self.first else []) + [self.size] * self.count


def serial_end(ready_s: Sequence[float], cost_s: Sequence[float]) -> float:
    """When the last exchange ends: exchanges in order on one stream, each starting when it is
    ready and the stream is free (the plain loop the closed form in step_times is tested against)."""
    end = float("-inf")
    for ready, cost in zip(ready_s, cost_s):
        end = max(end, ready) + cost
    return end


def bucketed_exposed(buckets: Buckets, first_cost: float, cost: float, window_s: float, numel: int) -> float:
    """max_j (r_j + c_j + ... + c_k) - (F + window) for the bucket layout of Buckets.

    r_j + suffix_j is linear in j over the equal full buckets, so its maximum is at the first
    or the last full bucket, or at the partial first bucket: three candidates, not k.
    """
    k = buckets.count
    candidates = []
    if buckets.first:  # ready after `first` parameters; everything after it still to send
        candidates.append(first_cost + k * cost - window_s * (1 - buckets.first / numel))
    if k:
        candidates.append(k * cost - window_s * (1 - (buckets.first + buckets.size) / numel))  # first full bucket
        candidates.append(cost)  # the last bucket, ready when backward ends
    out = candidates[0]
    for c in candidates[1:]:  # elementwise: the window may be an array of them (stragglers.py)
        out = np.maximum(out, c)
    return out
