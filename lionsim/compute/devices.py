"""Accelerator presets: the figures a per-step compute/memory time estimate needs.

| preset    | dense bf16 TFLOP/s | HBM TB/s | memory GB | source |
|-----------|--------------------|----------|-----------|--------|
| a100-40gb | 312                | 1.555    | 40        | NVIDIA A100 datasheet (SXM4 40GB) |
| a100-80gb | 312                | 2.039    | 80        | NVIDIA A100 datasheet (SXM4 80GB) |
| h100      | 989                | 3.35     | 80        | NVIDIA H100 datasheet (SXM5; 1979 is with 2:4 sparsity) |
| h200      | 989                | 4.8      | 141       | NVIDIA H200 datasheet (SXM) |

`a100` is the 40 GB part (Distributed Lion's timing table used A100 40GB). `intra_link` is
the GPU's NVLink (network presets nvlink3 for A100, nvlink4 for H100/H200): what
`lionsim estimate --gpus-per-node` puts inside a node when the network has no intra link.
Defaults for every preset: mfu 0.4 (model FLOPs utilisation of well-tuned large-model
training: PaLM reports 46%, Chowdhery et al. 2022, Table 3) and memory_efficiency 0.8 (the
share of peak HBM bandwidth an elementwise pass reaches: a round figure, unverified; set
your own). No CPU preset: CPU figures vary too much for one number to be honest.
"""

from __future__ import annotations

from dataclasses import dataclass

from lionsim.network.checks import check_number
from lionsim.network.link import Link
from lionsim.network.presets import NVLINK3, NVLINK4
from lionsim.registry import Registry

TERA = 1e12
KERNEL_S = 10e-6
"""Per-kernel floor of eager PyTorch on a GPU: a CUDA launch is a few us and the eager
dispatch of one op about 10 us on the host (assumed from those figures: no benchmark of
lionsim.perf measures a GPU's launches)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Device:
    """One accelerator."""

    name: str
    """Preset name."""
    peak_flops: float
    """Peak dense bf16 tensor throughput, FLOP per second."""
    memory_bandwidth_Bps: float
    """Peak memory (HBM) bandwidth, bytes per second."""
    memory_bytes: float
    """Memory capacity, bytes (1e9 per GB)."""
    mfu: float = 0.4
    """Model FLOPs utilisation reached in training, in (0, 1]."""
    memory_efficiency: float = 0.8
    """Share of memory_bandwidth_Bps an elementwise pass (encode, decode, update) reaches, in (0, 1]."""
    kernel_s: float = KERNEL_S
    """Least time one kernel of an eager PyTorch step costs (CPU dispatch + launch), seconds:
    a pass of k kernels takes at least k * kernel_s however little it computes."""
    intra_link: Link | None = None
    """The GPU's link to the other GPUs of its node (NVLink), per GPU; None if it has none."""
    description: str = ""
    """Where the figures come from."""

    def __post_init__(self) -> None:
        check_number("peak_flops", self.peak_flops, low=0.0, low_open=True)
        check_number("memory_bandwidth_Bps", self.memory_bandwidth_Bps, low=0.0, low_open=True)
        check_number("memory_bytes", self.memory_bytes, low=0.0, low_open=True)
        check_number("mfu", self.mfu, low=0.0, low_open=True, high=1.0)
        check_number("memory_efficiency", self.memory_efficiency, low=0.0, low_open=True, high=1.0)
        check_number("kernel_s", self.kernel_s, low=0.0, low_open=False)


DEVICES: Registry[Device] = Registry("device")

A100_40GB = Device(
    name="a100-40gb", peak_flops=312 * TERA, memory_bandwidth_Bps=1.555e12, memory_bytes=40e9,
    intra_link=NVLINK3, description="NVIDIA A100 SXM4 40GB datasheet",
)
A100_80GB = Device(
    name="a100-80gb", peak_flops=312 * TERA, memory_bandwidth_Bps=2.039e12, memory_bytes=80e9,
    intra_link=NVLINK3, description="NVIDIA A100 SXM4 80GB datasheet",
)
H100 = Device(
    name="h100", peak_flops=989 * TERA, memory_bandwidth_Bps=3.35e12, memory_bytes=80e9,
    intra_link=NVLINK4, description="NVIDIA H100 SXM5 datasheet",
)
H200 = Device(
    name="h200", peak_flops=989 * TERA, memory_bandwidth_Bps=4.8e12, memory_bytes=141e9,
    intra_link=NVLINK4, description="NVIDIA H200 SXM datasheet",
)

for _device in (A100_40GB, A100_80GB, H100, H200):
    DEVICES.add(_device.name, _device)
DEVICES.add("a100", A100_40GB)
