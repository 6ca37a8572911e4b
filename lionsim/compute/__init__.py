"""Compute side of a step-time estimate: device presets, model shapes, FLOP and memory-pass time.

Names load lazily, so the device presets (lionsim.compute.devices, no torch) can name the
devices in a command's help without the counted model presets importing torch."""

from lionsim._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    ".devices": "DEVICES Device",
    ".flops": "backward_flops compute_time forward_flops memory_pass_time training_flops",
    ".models": "MODELS DecoderShape ModelShape ViTShape block_params",
})
