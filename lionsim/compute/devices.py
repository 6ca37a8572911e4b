"""Accelerator presets: the figures a per-step compute/memory time estimate needs.

Peak dense tensor throughput per dtype (TFLOP/s, without 2:4 sparsity: datasheets print the
sparse figure beside the dense one, twice as large), peak memory bandwidth and capacity, each
from the vendor's datasheet named in the device's `source`:

| preset    | bf16 (fp16) | fp8    | tf32  | memory TB/s | GB  | intra link (per direction)        |
|-----------|-------------|--------|-------|-------------|-----|-----------------------------------|
| t4        | 65 (fp16)   | -      | -     | 0.32        | 16  | none (PCIe)                       |
| v100      | 125 (fp16)  | -      | -     | 0.9         | 32  | NVLink2 150 GB/s (6 links x 25)   |
| a10g      | 70          | -      | 35    | 0.6         | 24  | none (PCIe)                       |
| l4        | 121         | 242.5  | 60    | 0.3         | 24  | none (PCIe)                       |
| l40s      | 362         | 733    | 183   | 0.864       | 48  | none (PCIe)                       |
| rtx3090   | 71          | -      | 35.6  | 0.936       | 24  | none (PCIe)                       |
| rtx4090   | 165         | 330    | 82.6  | 1.008       | 24  | none (PCIe)                       |
| a100-40gb | 312         | -      | 156   | 1.555       | 40  | NVLink3 (nvlink3 preset)          |
| a100-80gb | 312         | -      | 156   | 2.039       | 80  | NVLink3                           |
| h100      | 989         | 1979   | 495   | 3.35        | 80  | NVLink4 (nvlink4 preset)          |
| h200      | 989         | 1979   | 495   | 4.8         | 141 | NVLink4                           |
| b200      | 2250        | 4500   | 1100  | 8.0         | 180 | NVLink5 900 GB/s                  |
| mi300x    | 1307        | 2615   | 654   | 5.3         | 192 | Infinity Fabric 448 GB/s (7 x 64) |

`peak_flops` (what `compute_time` divides by) is the training dtype's: bf16, or fp16 on the
V100 and the T4, which have no bf16 tensor cores. `a100` is the 40 GB part (Distributed Lion's timing
table used A100 40GB). `intra_link` is what `lionsim estimate --gpus-per-node` puts inside a
node when the network has no intra link: the GPU's NVLink (or AMD's Infinity Fabric) at the
share of its line rate nvlink4's preset achieves (380 of 450 GB/s, 0.84); PCIe-only cards have
none. Defaults for every preset: mfu 0.4 (model FLOPs utilisation of well-tuned large-model
training: PaLM reports 46%, Chowdhery et al. 2022, Table 3), memory_efficiency 0.8 (the
share of peak memory bandwidth an elementwise pass reaches: a round figure, unverified; set
your own) and kernel_s 10 us (below). No CPU preset: CPU figures vary too much for one number
to be honest.
"""

from __future__ import annotations

from dataclasses import dataclass

from lionsim.errors import LionsimError
from lionsim.network.checks import check_number
from lionsim.network.link import Link
from lionsim.network.presets import NVLINK3, NVLINK4
from lionsim.registry import Registry, did_you_mean

TERA = 1e12
GIB = 2**30
"""A GiB. GPU memory sizes are binary: HBM stacks and GDDR chips come in powers of two, so a
datasheet's "80 GB" H100 has 80 GiB (nvidia-smi: 81,559 MiB), a "16 GB" T4 16 GiB; an H200's
"141 GB" is 141 GiB usable of 144 GiB, a B200's "180 GB" (HGX datasheet) 180 GiB usable of 192. The
share a program can use is a little less (ECC, the CUDA context and the allocator's reserve): not
modelled, so a need within a few per cent of the memory may still not fit."""
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
    """Memory capacity, bytes: the datasheet's "N GB" read as N GiB (N * GIB, binary as GPU memory
    is; GIB says why)."""
    mfu: float = 0.4
    """Model FLOPs utilisation reached in training, in (0, 1]."""
    memory_efficiency: float = 0.8
    """Share of memory_bandwidth_Bps an elementwise pass (encode, decode, update) reaches, in (0, 1]."""
    kernel_s: float = KERNEL_S
    """Least time one kernel of an eager PyTorch step costs (CPU dispatch + launch), seconds:
    a pass of k kernels takes at least k * kernel_s however little it computes."""
    dtype_tflops: tuple[tuple[str, float], ...] = ()
    """Peak dense tensor throughput per dtype (torch names and "tf32"), TFLOP/s, from `source`."""
    source: str = ""
    """The datasheet the figures come from."""
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
        for dtype, tflops in self.dtype_tflops:
            check_number(f"dtype_tflops.{dtype}", tflops, low=0.0, low_open=True)

    def flops_for(self, dtype: str) -> float:
        """Peak dense FLOP/s in `dtype`; one the device's tensor cores lack fails with those it has."""
        for name, tflops in self.dtype_tflops:
            if name == dtype:
                return tflops * TERA
        raise LionsimError(f"device {self.name!r} has no {dtype} tensor figure; accepted: "
                           f"{', '.join(name for name, _ in self.dtype_tflops)}")


MEASURED = "measured"
"""--compute: time compute, encode, decode and update on this machine (no device preset)."""


def device_library(compute: str | None) -> str | None:
    """The library a profile without [traits] is priced with on sim: NCCL when --compute models a
    device (every preset is a GPU; lionsim.estimate.plain.DEVICE_LIBRARY), else the ideal library
    (measured compute: this machine's CPU). A preset keeps the library it names (1gbe: ideal)."""
    return None if compute in (None, MEASURED) else "nccl"

DEVICES: Registry[Device] = Registry("device")

ACHIEVED = 380.0 / 450.0
"""The share of a GPU fabric's line rate collectives reach: nvlink4's preset (380 of 450 GB/s)."""
NVLINK2 = Link.from_units(alpha_us=1.0, bandwidth_GBps=150.0 * ACHIEVED)
"""V100 SXM2: 6 NVLink2 links x 25 GB/s per direction (300 GB/s both ways)."""
NVLINK5 = Link.from_units(alpha_us=1.0, bandwidth_GBps=900.0 * ACHIEVED)
"""B200: NVLink5, 1.8 TB/s both ways per GPU."""
INFINITY_FABRIC = Link.from_units(alpha_us=1.0, bandwidth_GBps=448.0 * ACHIEVED)
"""MI300X: 7 Infinity Fabric links x 64 GB/s per direction (896 GB/s aggregate)."""

T4 = Device(
    name="t4", peak_flops=65 * TERA, memory_bandwidth_Bps=0.32e12, memory_bytes=16 * GIB,
    dtype_tflops=(("float16", 65.0), ("float32", 8.1)),
    source="NVIDIA T4 datasheet: 65 TFLOPS mixed-precision (fp16) tensor, 8.1 fp32, 320 GB/s GDDR6, 16 GB, "
           "PCIe Gen3 x16 (AWS g4dn's GPU)",
)
V100 = Device(
    name="v100", peak_flops=125 * TERA, memory_bandwidth_Bps=0.9e12, memory_bytes=32 * GIB,
    dtype_tflops=(("float16", 125.0), ("float32", 15.7)), intra_link=NVLINK2,
    source="NVIDIA Tesla V100 datasheet (SXM2 32GB): 125 TFLOPS tensor (fp16), 15.7 fp32, 900 GB/s HBM2",
)
A10G = Device(
    name="a10g", peak_flops=70 * TERA, memory_bandwidth_Bps=0.6e12, memory_bytes=24 * GIB,
    dtype_tflops=(("bfloat16", 70.0), ("float16", 70.0), ("tf32", 35.0), ("float32", 31.2)),
    source="NVIDIA publishes no A10G datasheet (AWS EC2 G5's part): 600 GB/s GDDR6 and 24 GB as AWS lists them; "
           "70 TFLOPS dense bf16 as third-party spec tables quote it, unverified (the A10 datasheet's is 125)",
)
L4 = Device(
    name="l4", peak_flops=121 * TERA, memory_bandwidth_Bps=0.3e12, memory_bytes=24 * GIB,
    dtype_tflops=(("bfloat16", 121.0), ("float16", 121.0), ("float8_e4m3fn", 242.5), ("tf32", 60.0), ("float32", 30.3)),
    source="NVIDIA L4 datasheet: bf16 242 and fp8 485 TFLOPS with sparsity (half dense), 300 GB/s, 24 GB",
)
L40S = Device(
    name="l40s", peak_flops=362 * TERA, memory_bandwidth_Bps=0.864e12, memory_bytes=48 * GIB,
    dtype_tflops=(("bfloat16", 362.0), ("float16", 362.0), ("float8_e4m3fn", 733.0), ("tf32", 183.0),
                  ("float32", 91.6)),
    source="NVIDIA L40S datasheet: bf16 362.05 | 733 (sparse), fp8 733 | 1466, 864 GB/s GDDR6, 48 GB",
)
RTX3090 = Device(
    name="rtx3090", peak_flops=71.0 * TERA, memory_bandwidth_Bps=0.936e12, memory_bytes=24 * GIB,
    dtype_tflops=(("bfloat16", 71.0), ("float16", 71.0), ("tf32", 35.6), ("float32", 35.6)),
    source="NVIDIA Ampere GA102 GPU architecture whitepaper, Appendix A, GeForce RTX 3090: bf16/fp16 tensor with "
           "fp32 accumulate 71 (142 sparse; fp16 accumulate 142), tf32 35.6, fp32 35.6, 936 GB/s GDDR6X, 24 GB",
)
RTX4090 = Device(
    name="rtx4090", peak_flops=165.2 * TERA, memory_bandwidth_Bps=1.008e12, memory_bytes=24 * GIB,
    dtype_tflops=(("bfloat16", 165.2), ("float16", 165.2), ("float8_e4m3fn", 330.3), ("tf32", 82.6),
                  ("float32", 82.6)),
    source="NVIDIA Ada Lovelace architecture whitepaper, GeForce RTX 4090: bf16/fp16 tensor with fp32 "
           "accumulate 165.2 (330.4 sparse), fp8 330.3, 1008 GB/s, 24 GB",
)
B200 = Device(
    name="b200", peak_flops=2250 * TERA, memory_bandwidth_Bps=8.0e12, memory_bytes=180 * GIB,
    dtype_tflops=(("bfloat16", 2250.0), ("float16", 2250.0), ("float8_e4m3fn", 4500.0), ("tf32", 1100.0)),
    intra_link=NVLINK5,
    source="NVIDIA HGX B200 datasheet, per GPU (the 8-GPU figures / 8): bf16 36 PF and fp8 72 PF with "
           "sparsity per board (2.25 / 4.5 PF dense per GPU), 8 TB/s HBM3e, 180 GB",
)
MI300X = Device(
    name="mi300x", peak_flops=1307.4 * TERA, memory_bandwidth_Bps=5.3e12, memory_bytes=192 * GIB,
    dtype_tflops=(("bfloat16", 1307.4), ("float16", 1307.4), ("float8_e4m3fn", 2614.9), ("tf32", 653.7),
                  ("float32", 163.4)),
    intra_link=INFINITY_FABRIC,
    source="AMD Instinct MI300X datasheet: bf16/fp16 1307.4 TFLOPS dense (2614.9 sparse), fp8 2614.9, "
           "5.3 TB/s HBM3, 192 GB",
)
A100_40GB = Device(
    name="a100-40gb", peak_flops=312 * TERA, memory_bandwidth_Bps=1.555e12, memory_bytes=40 * GIB,
    dtype_tflops=(("bfloat16", 312.0), ("float16", 312.0), ("tf32", 156.0), ("float32", 19.5)),
    intra_link=NVLINK3, description="NVIDIA A100 SXM4 40GB datasheet",
    source="NVIDIA A100 datasheet (SXM4 40GB): bf16 312 TFLOPS dense (624 sparse), 1555 GB/s",
)
A100_80GB = Device(
    name="a100-80gb", peak_flops=312 * TERA, memory_bandwidth_Bps=2.039e12, memory_bytes=80 * GIB,
    dtype_tflops=(("bfloat16", 312.0), ("float16", 312.0), ("tf32", 156.0), ("float32", 19.5)),
    intra_link=NVLINK3, description="NVIDIA A100 SXM4 80GB datasheet",
    source="NVIDIA A100 datasheet (SXM4 80GB): bf16 312 TFLOPS dense (624 sparse), 2039 GB/s",
)
H100 = Device(
    name="h100", peak_flops=989 * TERA, memory_bandwidth_Bps=3.35e12, memory_bytes=80 * GIB,
    dtype_tflops=(("bfloat16", 989.0), ("float16", 989.0), ("float8_e4m3fn", 1979.0), ("tf32", 495.0),
                  ("float32", 67.0)),
    intra_link=NVLINK4, description="NVIDIA H100 SXM5 datasheet",
    source="NVIDIA H100 datasheet (SXM5): bf16 1979 and fp8 3958 TFLOPS with sparsity (half dense), 3.35 TB/s",
)
H200 = Device(
    name="h200", peak_flops=989 * TERA, memory_bandwidth_Bps=4.8e12, memory_bytes=141 * GIB,
    dtype_tflops=(("bfloat16", 989.0), ("float16", 989.0), ("float8_e4m3fn", 1979.0), ("tf32", 495.0),
                  ("float32", 67.0)),
    intra_link=NVLINK4, description="NVIDIA H200 SXM datasheet",
    source="NVIDIA H200 datasheet (SXM): bf16 1979 and fp8 3958 TFLOPS with sparsity (half dense), 4.8 TB/s, 141 GB",
)

for _device in (T4, V100, A10G, L4, L40S, RTX3090, RTX4090, A100_40GB, A100_80GB, H100, H200, B200, MI300X):
    DEVICES.add(_device.name, _device)
DEVICES.add("a100", A100_40GB)


def device_choices() -> str:
    """Every device name, sorted, an alias beside the name it stands for ("a100 (a100-40gb)"): the
    list an unknown --device or --compute is answered with."""
    shown = []
    for name, device in sorted(DEVICES.items()):
        shown.append(name if device.name == name else f"{name} ({device.name})")
    return ", ".join(shown)


def unknown_device(name: str, listed: str = "choose from") -> str:
    """The line an unknown device name is refused with, wherever it was read (--device, --compute, a
    network profile's `device` key: the caller puts where in front, and `listed` "accepted" where
    its other refusals say so)."""
    files = ", or a device file FILE.toml of its datasheet (docs/clusters.md)"
    return f"unknown device {name!r}; {listed}: {device_choices()}{files}{did_you_mean(name, DEVICES.names())}"
