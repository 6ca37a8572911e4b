"""Which device preset a GPU is, from the name and memory the driver reports.

`torch.cuda.get_device_name()` says "NVIDIA H200", "NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX
4090"; a preset matches when its family (the name up to its first '-': a100, h200, rtx4090)
appears in the reported name with spaces and dashes dropped. Where several presets share a
family (a100-40gb, a100-80gb) the one whose memory is nearest the reported memory wins: the
driver reports a little less than the datasheet (an "80 GB" A100 shows 79.2 GiB).
"""

from __future__ import annotations


def preset_for(gpu_name: str, memory_bytes: float) -> str | None:
    """The canonical preset name of the GPU reported, or None when no preset is that GPU."""
    from lionsim.compute import DEVICES

    squeezed = gpu_name.lower().replace(" ", "").replace("-", "")
    candidates = []
    for name in DEVICES.names():
        device = DEVICES.get(name)
        if device.name == name and name.split("-")[0] in squeezed:  # canonical names only
            candidates.append(device)
    if not candidates:
        return None
    return min(candidates, key=lambda d: abs(d.memory_bytes - memory_bytes)).name
