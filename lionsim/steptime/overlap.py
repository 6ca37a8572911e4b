"""When a step's exchange runs: per bucket during backward, or once after it; and how buckets form.

PyTorch DDP (Li et al. 2020, "PyTorch Distributed", VLDB) groups gradients into buckets of
about `bucket_cap_mb` and launches each bucket's all-reduce as soon as backward has produced
it, so communication runs while backward goes on; a communication hook (PowerSGD's, the
quantization hooks) may replace the all-reduce by anything that turns one bucket into its
result, and Horovod's per-tensor hooks (GRACE's compressors, DGC's code) do the same per fused
group of tensors. Other implementations exchange once, after backward, in the optimizer's step:
DeepSpeed's 1-bit Adam over the flat buffer, the Lion Cub and D-Lion code over every tensor's
votes concatenated, DeMo, Dion, signSGD's authors' code. A framework without overlap runs
everything after backward.

So a run's schedule has two sides, each declared where it belongs:

- what the transport can do (Transport.overlap): every transport can run after backward; it
  can run per bucket only where a bucket's exchange needs nothing but that bucket and gives the
  same aggregate as the whole (not 1-bit Adam's compressed all-reduce, one scale over the flat
  buffer); a transport that declares nothing runs after backward;
- what the strategy's reference implementation runs (Strategy.schedule, with the source in a
  comment beside it); a strategy whose payload exists only after its own update (Strategy
  .after_step: DiLoCo's pseudo-gradient) runs after backward, unless its update is elementwise
  per bucket (Strategy.step_in_backward: the inner step of local SGD and DiLoCo), which an
  implementation can run in backward, bucket by bucket, and then exchange each bucket's result
  at once: only `--overlap buckets` asks for that (no reference implementation runs it; the
  local-step papers' simulations do: Douillard et al. 2025, "the reduction of gradients or
  outer gradients is overlapped over the backward pass computation").

The run's `--overlap` picks (OverlapConfig.schedule):

    auto      the strategy's reference schedule where its transport can run it, else after
              backward (the default: each method priced as its authors' code runs it)
    buckets   per bucket wherever the transport can (what a hook implementation could reach;
              for local SGD and DiLoCo, the inner step run in backward per bucket)
    tensors   per parameter tensor wherever the transport can: each tensor compressed and
              exchanged on its own as backward produces it, every codec kernel launched once per
              tensor (GRACE's compressors in Horovod's per-tensor hooks: grace_dl's Communicator
              .step runs compensate, compress, the exchange and decompress for one tensor)
    none      everything after backward, as a framework without overlap (`after` names it too:
              the schedule estimate's `overlap` column and the footers call "after")

Buckets and tensors are the exchange's granularity. A bucket's exchange pays a call's latency
once for bucket_mb of gradients; per tensor every tensor pays it, and the codec's kernels run
tensor by tensor, each at least the device's launch floor (lionsim.steptime.kernel_passes): what
a per-tensor compressor pays on a model of many small tensors where a bucketed one does not.

A strategy's own extra collectives (TernGrad's scale maximum before encoding, momentum sync
after the update) never overlap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from lionsim.errors import LionsimError
from lionsim.ranges import BUCKET_MB, bucket_mb_ok, refusal
from lionsim.registry import did_you_mean
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET
from lionsim.whole import Text

MODES = ("auto", "buckets", "tensors", "none")
"""--overlap: the strategy's reference schedule where its transport can run it | per bucket
wherever the transport can | per parameter tensor wherever the transport can | everything after
backward (module doc)."""
ALIASES = {AFTER_BACKWARD: "none"}
"""--overlap after: what `none` runs, under the name estimate's `overlap` column and the tables'
footers give that schedule (after backward)."""
TENSORS = "tensors"
"""The schedule label of an exchange run per parameter tensor (estimate's `overlap` column)."""

GRAD_BYTES = 4
"""Bytes per parameter of the float32 gradients a bucket is measured in (as DDP's bucket_cap_mb)."""
MB = 1e6
"""Bytes in a MB (SI, as everywhere in lionsim; DDP's 25 "MB" default is 25 MiB = 26.2 MB)."""
DEFAULT_BUCKET_MB = 25.0
"""--bucket-mb unless given: DDP's bucket_cap_mb default (torch.nn.parallel.DistributedDataParallel),
read as 25 SI MB."""


@dataclass(frozen=True, kw_only=True, slots=True)
class OverlapConfig:
    """How a step's communication may overlap its backward pass."""

    mode: str = "auto"
    """auto | buckets | tensors | none (MODES, module doc)."""
    bucket_mb: float | None = None
    """Bucket size, MB (1e6 bytes) of float32 gradients, as DDP's bucket_cap_mb; None: not given,
    DEFAULT_BUCKET_MB (a run records None, so a replay of a run no bucket acted on gives none)."""

    def __post_init__(self) -> None:
        mode = self.mode.strip().lower() if isinstance(self.mode, str) else self.mode
        object.__setattr__(self, "mode", ALIASES.get(mode, mode))
        if self.mode not in MODES:
            raise LionsimError(refusal("--overlap", Text(str(self.mode)), f"{', '.join(MODES)} (or after, as none)")
                               + did_you_mean(str(self.mode), [*MODES, *ALIASES]))
        if self.bucket_mb is not None and not bucket_mb_ok(self.bucket_mb):
            raise LionsimError(refusal("--bucket-mb", self.bucket_mb, BUCKET_MB))

    @property
    def bucket_params(self) -> int:
        """Parameters per full bucket (at least one)."""
        return max(1, int(self.megabytes * MB // GRAD_BYTES))

    @property
    def megabytes(self) -> float:
        """The bucket size in force: bucket_mb, or DEFAULT_BUCKET_MB where none was given."""
        return DEFAULT_BUCKET_MB if self.bucket_mb is None else self.bucket_mb

    def buckets(self, transport, strategy=None) -> bool:
        """Whether a step of `strategy` over `transport` exchanges per bucket, so that bucket_mb
        sizes its exchanges (not after backward, not tensor by tensor)."""
        return self.schedule(transport, strategy) == PER_BUCKET and not self.per_tensor(transport, strategy)

    def schedule(self, transport, strategy=None) -> str:
        """PER_BUCKET or AFTER_BACKWARD: what a step of `strategy` (its class, or an instance) over
        `transport` runs under this mode (module doc). `strategy` None: a bare gradient exchange,
        which DDP runs per bucket."""
        if self.mode == "none" or PER_BUCKET not in transport.overlap:
            return AFTER_BACKWARD
        if getattr(strategy, "after_step", False):
            in_backward = self.mode == "buckets" and getattr(strategy, "step_in_backward", False)
            return PER_BUCKET if in_backward else AFTER_BACKWARD
        if self.mode in ("buckets", TENSORS) or strategy is None:
            return PER_BUCKET
        return strategy.schedule

    def per_tensor(self, transport, strategy=None) -> bool:
        """Whether a step of `strategy` over `transport` exchanges tensor by tensor (--overlap tensors
        where the transport can run per bucket)."""
        return self.mode == TENSORS and self.schedule(transport, strategy) == PER_BUCKET

    def label(self, transport, strategy=None) -> str:
        """What runs, as estimate's `overlap` column says it: buckets | tensors | after."""
        return TENSORS if self.per_tensor(transport, strategy) else self.schedule(transport, strategy)


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


def units_exposed(shares: Sequence[float], costs: Sequence[float], window_s):
    """max_j (c_j + ... + c_k) - window (1 - s_j): the step's wait for exchanges of any sizes (one
    per tensor), exchange j ready when backward and encode have passed the share s_j of the
    parameters (the closed form of serial_end, measured from the window's end). Elementwise:
    the window may be an array (stragglers.py)."""
    import numpy as np  # here: the configuration's checks read this module before numpy is needed

    out, suffix = None, 0.0
    for share, cost in zip(reversed(shares), reversed(costs)):
        suffix += cost
        here = suffix - window_s * (1.0 - share)
        out = here if out is None else np.maximum(out, here)
    return 0.0 if out is None else out


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
    import numpy as np  # as units_exposed

    out = candidates[0]
    for c in candidates[1:]:  # elementwise: the window may be an array of them (stragglers.py)
        out = np.maximum(out, c)
    return out
