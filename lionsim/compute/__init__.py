"""Compute side of a step-time estimate: device presets, model shapes, FLOP and memory-pass time."""

from lionsim.compute.devices import DEVICES, Device
from lionsim.compute.flops import backward_flops, compute_time, forward_flops, memory_pass_time, training_flops
from lionsim.compute.models import MODELS, DecoderShape, ModelShape, ViTShape, block_params

__all__ = [
    "DEVICES",
    "MODELS",
    "DecoderShape",
    "Device",
    "ModelShape",
    "ViTShape",
    "backward_flops",
    "block_params",
    "compute_time",
    "forward_flops",
    "memory_pass_time",
    "training_flops",
]
