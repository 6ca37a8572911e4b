"""`python -m lionsim.perf kernels`: the codec kernel table (lionsim.compute.kernel_table).

For each kernel, the code lionsim runs for it on `numel` elements:

- measured, this CPU: the CPU path (numpy packers, torch ops at torch's thread count), median
  of `repeats` calls after one dropped; GBps = the ideal bytes (bytes_per_param x numel) over
  that time. The machine is whatever load it carries: say so with the figures.
- derived, each GPU preset (no GPU measured): the GPU path (lionsim.packing.reference_paths, the
  plain torch ops a CUDA tensor takes) run on small CPU tensors under a dispatch mode that adds
  up the bytes every op reads and writes and counts the ops. Each op is taken to run at the
  datasheet's memory bandwidth x memory_efficiency, so GBps = that x ideal bytes / eager bytes:
  what an unfused eager kernel chain reaches, below the ideal fused pass by exactly the
  temporaries it writes and reads back (scatter-add: a 32-byte sector per scattered target).

`--kernel-table FILE` writes the rows (the shipped table is lionsim/data/kernels.csv).
"""

from __future__ import annotations

import datetime
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lionsim.compute.kernel_table import COLUMNS, KernelRow
from lionsim.perf.rows import Figure, median_seconds

SCATTER_SHARE = 0.01
"""scatter-add: pairs per dense element (dgc's default top-k ratio)."""
SECTOR = 32
"""Bytes of a GPU's smallest memory transaction (NVIDIA CUDA C++ Best Practices Guide, "Coalesced
Access to Global Memory"): a scattered 4-byte add reads and writes a whole sector."""


@dataclass(frozen=True, slots=True)
class Case:
    kernel: str
    bytes_per_param: float
    """Ideal bytes per element (per pair for scatter-add), as passes.py counts them."""
    make: Callable[[int], tuple[Callable[[], object], int]]
    """numel -> (the call, elements its bytes_per_param counts)."""
    gpu_bytes: float | None = None
    """Bytes per element a GPU moves, where counting the ops' tensors would mislead (None: count them)."""


def _lion(n: int):
    import torch

    from lionsim.optim.functional import lion_update_

    g = torch.Generator().manual_seed(0)
    p, grad, m = (torch.randn(n, generator=g) for _ in range(3))
    return (lambda: lion_update_(p, grad, m, 1e-4, 0.1, 0.9, 0.99)), n


def _cast(n: int):
    import torch

    x = torch.randn(n, generator=torch.Generator().manual_seed(0))
    return (lambda: x.to(torch.bfloat16)), n


def _votes(n: int):
    import torch

    return torch.randint(-1, 2, (n,), generator=torch.Generator().manual_seed(0), dtype=torch.int8)


def _pack_signs(n: int):
    from lionsim.packing import pack_signs

    v = _votes(n)
    return (lambda: pack_signs(v)), n


def _unpack_signs(n: int):
    import torch

    from lionsim.packing import pack_signs, unpack_signs

    packed = pack_signs(_votes(n))
    return (lambda: unpack_signs(packed, n, torch.int8)), n


def _pack_codes(n: int):
    import torch

    from lionsim.packing import pack_codes

    codes = torch.randint(0, 4, (n,), generator=torch.Generator().manual_seed(1), dtype=torch.int8)
    return (lambda: pack_codes(codes, 2)), n


def _unpack_codes(n: int):
    import torch

    from lionsim.packing import pack_codes, unpack_codes

    packed = pack_codes(torch.randint(0, 4, (n,), generator=torch.Generator().manual_seed(1)), 2)
    return (lambda: unpack_codes(packed, n, 2)), n


def _scatter(n: int):
    import torch

    k = max(1, int(n * SCATTER_SHARE))
    g = torch.Generator().manual_seed(2)
    dense = torch.zeros(n)
    index = torch.randint(0, n, (k,), generator=g)
    values = torch.randn(k, generator=g)
    return (lambda: dense.index_add_(0, index, values)), k


CASES = (
    Case("float-pass", 20.0, _lion),  # read p, g, m; write p, m (float32)
    Case("cast", 6.0, _cast),  # read float32, write bfloat16
    Case("pack-signs", 1 + 1 / 8, _pack_signs),  # read int8 votes, write bits
    Case("unpack-signs", 1 / 8 + 1, _unpack_signs),
    Case("pack-codes", 1 + 2 / 8, _pack_codes),  # int8 levels -> 2-bit fields
    Case("unpack-codes", 2 / 8 + 1, _unpack_codes),
    # per pair: read index and value, read-modify-write the target; on a GPU the target is a
    # random sector (an in-place op's tensors would count the whole dense buffer)
    Case("scatter-add", 16.0, _scatter, gpu_bytes=8 + 4 + 2 * SECTOR),
)


def cpu_name() -> str:
    """This CPU's model and core count, for the table's machine column."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        model = ""
    return f"{model or platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def _today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def eager_cost(case: Case, numel: int = 1 << 16) -> tuple[float, int]:
    """(bytes per element, ops) of the GPU path of `case`: every non-view aten op's inputs read
    and outputs written, on CPU tensors under lionsim.packing.reference_paths."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    from lionsim.packing import reference_paths

    class Bytes(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.nbytes, self.ops = 0, 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if not func.is_view:
                tensors = [t for t in tree_flatten((args, kwargs, out))[0] if isinstance(t, torch.Tensor)]
                self.nbytes += sum(t.numel() * t.element_size() for t in tensors)
                self.ops += 1
            return out

    with reference_paths():
        run, elements = case.make(numel)
        with Bytes() as counted:
            run()
    return (counted.nbytes / elements if case.gpu_bytes is None else case.gpu_bytes), counted.ops


def measure_cpu(numel: int, repeats: int) -> tuple[list[KernelRow], list[Figure]]:
    """The CPU rows, timed here, and their figures."""
    rows, figures, machine, today = [], [], cpu_name(), _today()
    how = f"median of {repeats} after 1 dropped; {numel:.0e} elements; machine as loaded at the time"
    for case in CASES:
        run, elements = case.make(numel)
        seconds, _ = median_seconds(run, repeats)
        gbps = case.bytes_per_param * elements / seconds / 1e9
        _, ops = eager_cost(case)
        rows.append(KernelRow(device="cpu", kernel=case.kernel, bytes_per_param=case.bytes_per_param, GBps=gbps,
                              launches=ops, method="measured",
                              source=f"python -m lionsim.perf kernels ({how})", date=today, machine=machine))
        figures += [Figure("kernels", f"cpu {case.kernel}", "seconds", seconds, how),
                    Figure("kernels", f"cpu {case.kernel}", "GBps", gbps, how)]
    return rows, figures


def derive_gpus() -> tuple[list[KernelRow], list[Figure]]:
    """A row per kernel per GPU preset, from the datasheet bandwidth and the eager bytes (module doc)."""
    from lionsim.compute import DEVICES

    rows, figures, today = [], [], _today()
    costs = {case.kernel: (case, *eager_cost(case)) for case in CASES}
    for name in DEVICES.names():
        device = DEVICES.get(name)
        if device.name != name:  # an alias (a100 is a100-40gb)
            continue
        sheet = device.description or device.source  # the datasheet the bandwidth comes from
        reach = device.memory_bandwidth_Bps * device.memory_efficiency
        for case, eager, ops in costs.values():
            gbps = reach * case.bytes_per_param / max(eager, case.bytes_per_param) / 1e9
            source = (f"derived: {sheet} {device.memory_bandwidth_Bps / 1e12:g} TB/s x "
                      f"memory_efficiency {device.memory_efficiency:g}, the GPU path's {ops} eager ops moving "
                      f"{eager:.3g} B per element (ideal {case.bytes_per_param:.3g}); not measured: no GPU lent")
            rows.append(KernelRow(device=name, kernel=case.kernel, bytes_per_param=case.bytes_per_param, GBps=gbps,
                                  launches=ops, method="derived", source=source, date=today,
                                  machine=sheet))
            figures.append(Figure("kernels", f"{name} {case.kernel}", "GBps", gbps, source))
    return rows, figures


def bench_kernels(numel: int = 10**7, repeats: int = 5) -> tuple[list[KernelRow], list[Figure]]:
    cpu_rows, cpu_figures = measure_cpu(numel, repeats)
    gpu_rows, gpu_figures = derive_gpus()
    return cpu_rows + gpu_rows, cpu_figures + gpu_figures


def print_kernels(rows: list[KernelRow]) -> None:
    print("codec kernels: ideal bytes per second each reaches (GB/s), and ops per call")
    for r in rows:
        print(f"  {r.device:<10} {r.kernel:<13} {r.GBps:9.3g} GB/s  {r.launches:3d} ops  {r.method}")


def write_table(path: Path, rows: list[KernelRow]) -> None:
    """Rows to `path` as a kernel table file (lionsim.compute.kernel_table reads it), replaced atomically."""
    import csv
    import io

    from lionsim.reports.files import write_atomic

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in rows:
        writer.writerow([r.device, r.kernel, f"{r.bytes_per_param:g}", f"{r.GBps:.4g}", r.launches, r.method,
                         r.source, r.date, r.machine])
    write_atomic(path, lambda fh: fh.write(buf.getvalue()))

