"""Compute side of a step-time estimate: device presets, model shapes, FLOP and memory-pass time.

The names load with their module on first use (lionsim._lazy): the device presets need no
torch, so a command checks `--compute` or `--device` before anything imports it."""

from lionsim._lazy import lazy_attributes

_NAMES = {
    "DEVICES": ".devices",
    "Device": ".devices",
    "MEASURED": ".devices",
    "device_library": ".devices",
    "MODELS": ".models",
    "DecoderShape": ".models",
    "ModelShape": ".models",
    "ViTShape": ".models",
    "block_params": ".models",
    "backward_flops": ".flops",
    "compute_time": ".flops",
    "forward_flops": ".flops",
    "memory_pass_time": ".flops",
    "training_flops": ".flops",
}
__getattr__, __dir__ = lazy_attributes(__name__, _NAMES)
__all__ = sorted(_NAMES)
