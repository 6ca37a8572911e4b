"""Analytic compute and memory time (Kaplan et al. 2020, "Scaling Laws for Neural Language
Models", section 2.1; the same accounting as nanoGPT's estimate_mfu without its attention term).

    forward_flops  = 2 N T        (N parameters, T tokens: one multiply-add per parameter per token)
    backward_flops = 2 forward    (gradients for activations and for weights)
    compute_time   = flops / (peak_flops * mfu)
    memory_pass_time = bytes / (memory_bandwidth * memory_efficiency)

The attention score term (2 n_layer n_ctx d_model per token forward) is left out, as in
the 6 N T rule; it is under 10% for the presets' context lengths.
"""

from __future__ import annotations

from lionsim.compute.devices import Device
from lionsim.network.checks import check_number


def forward_flops(params: float, tokens: float) -> float:
    """FLOPs of one forward pass over `tokens` tokens (or patches) of a `params`-parameter model."""
    return 2.0 * params * tokens


def backward_flops(params: float, tokens: float) -> float:
    """FLOPs of the matching backward pass: twice the forward."""
    return 2.0 * forward_flops(params, tokens)


def training_flops(params: float, tokens: float) -> float:
    """Forward plus backward: 6 N T."""
    return forward_flops(params, tokens) + backward_flops(params, tokens)


def compute_time(flops: float, device: Device, mfu: float | None = None) -> float:
    """Seconds to run `flops` at `mfu` (the device's default when None) of peak."""
    utilisation = device.mfu if mfu is None else mfu
    check_number("mfu", utilisation, low=0.0, low_open=True, high=1.0)
    return flops / (device.peak_flops * utilisation)


def memory_pass_time(nbytes: float, device: Device) -> float:
    """Seconds for an elementwise pass that reads and writes `nbytes` bytes in total."""
    return nbytes / (device.memory_bandwidth_Bps * device.memory_efficiency)
