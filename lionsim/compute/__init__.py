"""Compute side of a step-time estimate: device presets, model shapes, FLOP and memory-pass time.

Names load lazily, so the device presets (lionsim.compute.devices, no torch) can name the
devices in a command's help without the counted model presets importing torch."""

from lionsim._lazy import lazy_attributes

_NAMES = {
    "DEVICES": ".devices",
    "Device": ".devices",
    "backward_flops": ".flops",
    "compute_time": ".flops",
    "forward_flops": ".flops",
    "memory_pass_time": ".flops",
    "training_flops": ".flops",
    "MODELS": ".models",
    "DecoderShape": ".models",
    "ModelShape": ".models",
    "ViTShape": ".models",
    "block_params": ".models",
}
__getattr__, __dir__ = lazy_attributes(__name__, _NAMES)

__all__ = sorted(_NAMES)
