"""Compute side of a step-time estimate: device presets, model shapes, FLOP and memory-pass time.

The names load with their module on first use (lionsim._lazy): the device presets need no
torch, so a command checks `--compute` or `--device` before anything imports it."""

from lionsim._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    ".devices": "DEVICES Device MEASURED device_library",
    ".flops": "backward_flops compute_time forward_flops memory_pass_time training_flops",
    ".models": "MODELS DecoderShape ModelShape ViTShape block_params",
})
