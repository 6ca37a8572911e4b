"""The rule the codec kernel table's unmeasured GPUs are priced by (lionsim.compute.kernel_table's
"derived" rows): `python -m lionsim.perf kernels` writes the shipped GPUs' rows with it, and estimate
derives a device file's rows with it (lionsim.compute.device_file: a GPU the table has no rows for).

An eager elementwise kernel streams at the datasheet bandwidth x the device's memory_efficiency; a
fused optimizer at the datasheet bandwidth x FUSED_REACH, the share the published H100 figure reached;
a top-k at the stream over TOPK_INPUT_READS passes over its input; where REFERENCE_GPU's rows are
measured, the kernels that are the same torch ops on every GPU (SHARED_KERNELS) at the stream x the
share of its stream that GPU measured.
"""

from __future__ import annotations

from lionsim.compute.kernel_ops import SECTOR
from lionsim.compute.kernel_table import KERNELS, KernelRow, KernelTable

TOPK_INPUT_READS = 5
"""Passes torch.topk's radix selection makes over a float32 input: 4 of 8-bit digits (RADIX_BITS 8:
"2^RADIX_BITS=256", PyTorch PR #71081, aten/src/ATen/native/cuda/TensorTopK.cu, the multi-block
selection for large slices; intel/torch-xpu-ops PR #3325 describes CUDA's as "for 32-bit types, 4
passes") and one gathering the k largest."""

PUBLISHED_FUSED = dict(
    device="h100", GBps=14 * 6.74e9 / 49.935e-3 / 1e9, bytes_per_param=14.0, date="2024-01-19",
    source="published: PyTorch PR #117872 (crcrpar, 'fused adam(w): Reduce register usage', 2024-01-19): "
           "AdamW(fused=True) stepping llama-2 7B (6.74e9 parameters) in bfloat16 on an H100 took 49.935 ms of "
           "CUDA time (torch profiler); 14 bytes a parameter (p, g, m, v read, p, m, v written, 2 bytes each)",
    machine="NVIDIA H100 (sm90; the thread names no variant: SXM assumed, 3.35 TB/s)")
"""One fused optimizer step, timed: the fused-optimizer row of h100, and FUSED_REACH for the others."""
REFERENCE_GPU = "h200"
"""The GPU whose measured rows set the SHARED_KERNELS' derived rows: the kernel's measured rate over
that GPU's stream (datasheet bandwidth x memory_efficiency) is its share, and an unmeasured GPU's row
is its own stream x that share. The one GPU lent to the project (an H200, 2026-11-30) ran torch.topk
at 0.053 of its stream, index_add_ at 0.26 and lionsim's sign unpacking at 0.32, where the earlier
rules priced 0.2 (a top-k over TOPK_INPUT_READS reads), 1 and 1: kernels whose access pattern, not
the datasheet, sets their speed. One GPU's shares stand in for another architecture's: a measured
guess beats an unmeasured one, and a GPU measured later gets its own rows. Without the reference's
rows in the table the earlier rules stand."""
SHARED_KERNELS = ("pack-signs", "unpack-signs", "pack-codes", "unpack-codes", "scatter-add", "topk", "orthogonalize")
"""Kernels that are the same torch ops on every GPU (lionsim's packing chains and Gram-Schmidt,
torch.topk, index_add_), so the reference GPU's share is the kernel's own. Other libraries' codecs
declare their own kinds (DeepSpeed's cupy packing streams: lionsim.transports.compressed_allreduce).
The elementwise rows (float-pass, cast) keep each device's stream, which the H200's cast met (1.00),
and the fused optimizer the published H100's share."""
FUSED_REACH = PUBLISHED_FUSED["GBps"] * 1e9 / 3.35e12
"""The datasheet bandwidth share one fused multi-tensor AdamW kernel reached (about 0.56)."""


def derived_row(name: str, kernel: str, sheet: str, bandwidth: float, efficiency: float,
                copy: tuple[str, float] | None, today: str, share: float | None) -> KernelRow:
    """Device `name`'s row for `kernel` by the module's rule: `sheet` the datasheet its `bandwidth`
    (bytes/s) comes from, `copy` its published copy rate (GPU, GB/s) where one exists, `share` the
    reference GPU's measured share for the kernel where it has one."""
    stream, basis = bandwidth * efficiency, f"{sheet}: {bandwidth / 1e12:g} TB/s x memory_efficiency {efficiency:g}"
    if copy:  # the device's own published copy rate
        stream, basis = copy[1] * 1e9, f"the published copy rate of the {copy[0]} ({copy[1]:g} GB/s, float-pass row)"
    if kernel == "fused-optimizer":
        gbps, how = bandwidth * FUSED_REACH, (f"{sheet}: {bandwidth / 1e12:g} TB/s x {FUSED_REACH:.3f}, the share the "
                                              "published H100 fused AdamW reached")
        nbytes = 28.0
    elif share is not None:
        gbps, how = stream * share, (f"{basis}, x {share:.3f}: the share of its stream the {REFERENCE_GPU} "
                                     f"measured for {kernel} (its measured row)")
        nbytes = {"scatter-add": 8 + 4 + 2 * SECTOR, "orthogonalize": 12.0, "topk": 4.0}.get(kernel, 8.0)
    elif kernel == "topk":
        gbps, how = stream / TOPK_INPUT_READS, f"{basis}, over {TOPK_INPUT_READS} reads of the input (radix selection)"
        nbytes = 4.0
    else:
        gbps, how = stream, f"{basis}: an eager op streams its bytes"
        nbytes = {"scatter-add": 8 + 4 + 2 * SECTOR, "orthogonalize": 12.0}.get(kernel, 8.0)
    return KernelRow(device=name, kernel=kernel, bytes_per_param=nbytes, GBps=gbps / 1e9,
                     method="derived", source=f"derived: {how}; this GPU not measured", date=today, machine=sheet)


def reference_shares(rows) -> dict[str, float]:
    """kernel -> the share of REFERENCE_GPU's stream its measured row among `rows` reached (SHARED_KERNELS)."""
    from lionsim.compute.devices import DEVICES

    reference = DEVICES.get(REFERENCE_GPU)
    stream = reference.memory_bandwidth_Bps * reference.memory_efficiency
    return {r.kernel: r.GBps * 1e9 / stream for r in rows
            if r.device == REFERENCE_GPU and r.method == "measured" and r.kernel in SHARED_KERNELS}


def with_device(table: KernelTable, device) -> KernelTable:
    """`table`, plus derived rows for `device` (a lionsim.compute.Device) where it has none: a device
    file's GPU, priced by the rule of the table's unmeasured GPUs, dated with the table's newest row."""
    if device.name in table.devices():
        return table
    shares, today = reference_shares(table.rows), max(r.date for r in table.rows)
    sheet = device.description or device.source
    rows = tuple(derived_row(device.name, kernel, sheet, device.memory_bandwidth_Bps, device.memory_efficiency,
                             None, today, shares.get(kernel)) for kernel in KERNELS)
    return KernelTable(table.rows + rows, table.path)
