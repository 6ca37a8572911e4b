"""The caption's line where a step's compute is its kernels' launches, not its FLOPs.

estimate prices forward + backward at the device's peak x mfu, but never below the launches an eager
step makes (KERNELS_PER_TENSOR a parameter tensor x the device's per-kernel floor: table.step_inputs).
A small batch on a big GPU is launch-bound: gpt2-345m at 1,024 tokens on an H100 takes 11.6 ms of
launches for 5.5 ms of FLOPs. The caption names the bound where it binds, and the batch from which
the FLOPs take over, since every speedup and --need answer rests on that compute.
"""

from __future__ import annotations

import math

from lionsim.compute import compute_time
from lionsim.compute.launches import launch_words
from lionsim.numbers import sig


def _time(seconds: float) -> str:
    """ms from a millisecond up, else us; a time under a nanosecond (a tiny model's FLOPs) as such."""
    if seconds >= 1e-3:
        return f"{sig(seconds * 1e3)} ms"
    return f"{sig(seconds * 1e6)} us" if seconds >= 1e-9 else "under 0.001 us"


def launch_bound_note(r) -> str:
    """One sentence where the launches of `r`'s kernels outlast its FLOPs (a Resolved estimate);
    "" where the FLOPs decide compute."""
    from lionsim.estimate.table import KERNELS_PER_TENSOR, compute_floor_s, compute_kernels

    flops_s = compute_time(r.step_flops() / r.replica_gpus, r.device, r.mfu)
    kernels = compute_kernels(r)
    floor_s = compute_floor_s(r)
    if floor_s <= flops_s:
        return ""
    from_tokens = math.ceil(r.tokens_per_worker * floor_s / flops_s)  # FLOPs grow with the batch, launches do not
    unit = "samples" if r.flops_per_unit is not None else "tokens"
    counted = f" ({KERNELS_PER_TENSOR} a parameter tensor x {r.tensors:,})"
    return (f"compute is {launch_words(kernels, r.device, counted)} take {_time(floor_s)} where its FLOPs take "
            f"{_time(flops_s)} at mfu {r.mfu:g}; from about {from_tokens:,} {unit} a worker (--tokens-per-worker) the FLOPs "
            "decide it.")
