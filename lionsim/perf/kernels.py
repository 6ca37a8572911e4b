"""`python -m lionsim.perf kernels`: the codec kernel table (lionsim.compute.kernel_table).

Each row is the rate at which one kind of kernel moves the bytes its declared ops count
(lionsim.compute.kernel_ops). Three sources, each named in its row:

- measured, this CPU (or with --kernel-device cuda the visible GPU, its rows named by its preset):
  each kernel's case (below: the ops a GPU runs, lionsim.packing's reference paths for the codecs)
  timed on `numel` elements, median of `repeats` calls after one dropped (on a GPU each call to its
  synchronize); GBps = the case's counted bytes per element (lionsim.perf.bytecount) x numel / time.
  A GPU's measured rows stay in the table when it is made again. The machine is whatever load it
  carries: say so with the figures.
- published, a GPU preset: a measurement in a public source (PUBLISHED below, quoted there: who,
  where, which GPU, what size), converted to bytes per second of the same counting.
- published, a framework's rows of a GPU (FRAMEWORK_ROWS): the GPU's rows with the kernels a
  framework is timed running differently replaced (v100-tf1.15: TensorFlow 1.15's top_k and
  its host QR, from GRACE's release).
- derived, every other GPU row (the GPUs not measured), by lionsim.compute.derived_kernels' rule:
  the datasheet's stream x memory_efficiency (0.8: the published copy rates below reach 0.73-0.90 of
  their datasheets), the published fused AdamW's share for a fused optimizer, and the reference
  GPU's measured shares for the kernels that are the same torch ops on every GPU.

`--kernel-table FILE` writes the rows (the shipped table is lionsim/data/kernels.csv).
"""

from __future__ import annotations

import datetime
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lionsim.compute.derived_kernels import PUBLISHED_FUSED, derived_row, reference_shares
from lionsim.compute.kernel_ops import SECTOR
from lionsim.compute.kernel_table import COLUMNS, KERNELS, KernelRow
from lionsim.errors import LionsimError
from lionsim.perf.rows import Figure, median_seconds

TOPK_SHARE = 0.01
"""topk and scatter-add cases: pairs per element (DGC's default top-k ratio)."""

COPY_SOURCE = ("published: chsasank/device-benchmarks README (commit 02b8262, undated, read 2026-11-28), "
               "'Memory Bandwidth (GB/s)' of an {gpu}: torch a.copy_(b) of float32 tensors of up to 2^26.5 elements "
               "(0.38 GB), 2 x bytes / time, mean of 10 calls")
PUBLISHED_COPY = {"v100": ("Nvidia V100 32GB", 766.0), "a100-80gb": ("Nvidia A100 80GB", 1490.0),
                  "rtx4090": ("Nvidia 4090", 912.0)}
"""device -> (the GPU as the source names it, GB/s): an eager elementwise op's stream, measured."""


def _grace_row(runs: tuple[tuple[str, float], ...], *, method: str, gbps: float, bytes_per_param: float,
               cost: str) -> dict:
    """A v100-tf1.15 row from GRACE's release: `runs` (mode throughput, then upper-bound; 512 images a
    step, 64 a worker x 8) give the compressor's seconds a step, which `cost` (the words after them)
    attributes to the kernel; `gbps` is the rate lionsim.published.grace_fit solves from them."""
    (throughput, fast), (upper, ceiling) = runs
    cost_ms = (512 / fast - 512 / ceiling) * 1e3
    return dict(
        GBps=gbps, bytes_per_param=bytes_per_param, date="2026-11-29",
        source=(f"published: GRACE's release (Xu et al., ICDCS 2021; sands-lab/grace-data, read 2026-11-28): {method}, "
                f"ResNet-50 on 8 V100 workers, TensorFlow 1.15: throughput run {throughput} at {fast:,.1f} img/s, "
                f"upper-bound run {upper} at {ceiling:,.1f}, 512 images a step: the compressor's {cost_ms:.1f} ms a "
                f"step{cost} (solved: lionsim.published.grace_fit)"),
        machine="NVIDIA V100 (GRACE's cluster), TensorFlow 1.15")


TF_TOPK_RUNS = (("iyhzknco0", 1457.3552), ("rkrw9e5x0", 2427.4440))
"""GRACE's release (sands-lab/grace-data GRACE_data_release.pickle, imagenet-classification), topk at
ratio 0.01 with memory, ResNet-50 on 8 V100 workers, TensorFlow 1.15 + Horovod over MPI at 10 Gb/s:
(run id, img/s) of mode throughput, then of mode upper-bound (the same exchanges without the
compressor's work; lionsim.published.grace holds every method's)."""
TF_TOPK_PARAMS = 25_557_032
"""ResNet-50's parameters, every one a float32 gradient top-k'd a step (the resnet50-tf preset)."""
TF_TOPK_GBPS = 0.7210
"""The topk rate at which lionsim's priced step of GRACE's top-k case rises by the release's cost over
its step without the compressor's work (lionsim.published.grace.solved; a test solves it again):
4 bytes a gradient over the cost alone, 0.73 GB/s, would assume the sort adds to the step in full."""
PUBLISHED_TF_TOPK = _grace_row(
    TF_TOPK_RUNS, method="topk at ratio 0.01 with memory", gbps=TF_TOPK_GBPS, bytes_per_param=4.0,
    cost=(f" for {TF_TOPK_PARAMS:,} float32 gradients, all of it taken as the sort (TF 1.15's GPU TopK sorts each "
          "flattened tensor on one SM, whatever k; the release's elementwise compressors cost at most 16 ms), the "
          "rate at which lionsim's step of the case rises by that over its step without the sort"))
"""TensorFlow 1.15's top_k on a V100, timed by GRACE: its one-SM sort (lionsim.published.compressed's GRACE
cases say why), the topk row of the v100-tf1.15 rows."""
TF_QR_RUNS = (("xa1kk3ne0", 1794.0928), ("ju07wpj10", 2446.7928))
"""GRACE's release, as TF_TOPK_RUNS: powersgd at rank 1 with memory, (run id, img/s) of mode
throughput, then of mode upper-bound."""
TF_QR_FACTORS = (2_103, 3_774_760)
"""Floats of P and Q a step that lionsim's PowerSGD orthogonalizes on the resnet50-tf preset at rank 1
(torch's rule: 18 of its 54 weight tensors; GRACE orthogonalizes all 54, a 1x1 kernel's Q being the
whole tensor), so the row is the release's cost over lionsim's count, not a host rate."""
TF_QR_BYTES = 3 * 4 * TF_QR_FACTORS[1] + (3 * 4 + 8) * TF_QR_FACTORS[0]
"""The bytes those orthogonalizations declare a step (lionsim.transports.lowrank_allreduce.lowrank_ops)."""
TF_QR_GBPS = 0.4342
"""The orthogonalize rate at which lionsim's priced step of GRACE's PowerSGD case rises by the release's
cost over its step without the compressor's work (lionsim.published.grace.solved; a test solves it
again): the bytes over the cost alone, 0.60 GB/s, would assume the QRs add to the step in full, where
lionsim runs them beside other tensors' exchanges (their increase at that rate: two thirds of the cost)."""
PUBLISHED_TF_QR = _grace_row(
    TF_QR_RUNS, method="powersgd at rank 1 with memory", gbps=TF_QR_GBPS, bytes_per_param=12.0,
    cost=(", all of it taken as the two orthogonalizations a tensor (TF 1.15 runs tf.linalg.qr on the host: each "
          "operand copied there and back), the rate at which lionsim's step of the case rises by that over its step "
          f"without them for the {TF_QR_BYTES / 1e6:.1f} MB lionsim's PowerSGD declares for them on resnet50-tf"))
"""TensorFlow 1.15's orthogonalization as GRACE runs it, timed by GRACE: the orthogonalize row of the
v100-tf1.15 rows (lionsim.published.compressed's GRACE PowerSGD cases say why)."""
FRAMEWORK_ROWS = {"v100-tf1.15": ("v100", {"topk": PUBLISHED_TF_TOPK, "orthogonalize": PUBLISHED_TF_QR})}
"""Rows of a device as a framework runs it: name -> (the device whose rows it copies, the kernels it
replaces with a published row). `estimate --kernels table:v100-tf1.15` prices with them."""


@dataclass(frozen=True, slots=True)
class Case:
    kernel: str
    make: Callable[[int, str], tuple[Callable[[], object], int]]
    """(numel, torch device) -> (the call, the elements its bytes are per)."""
    nbytes: Callable[[], float]
    """Bytes per element its ops move, as the declarations count them."""
    reference: bool = True
    """Run under lionsim.packing.reference_paths (the GPU path)."""


def _lion(n: int, device: str):
    import torch

    from lionsim.optim.functional import lion_update_

    g = torch.Generator().manual_seed(0)
    p, grad, m = (torch.randn(n, generator=g).to(device) for _ in range(3))
    return (lambda: lion_update_(p, grad, m, 1e-4, 0.1, 0.9, 0.99)), n


def _cast(n: int, device: str):
    import torch

    x = torch.randn(n, generator=torch.Generator().manual_seed(0)).to(device)
    return (lambda: x.to(torch.bfloat16)), n


def _votes(n: int, device: str):
    import torch

    return torch.randint(-1, 2, (n,), generator=torch.Generator().manual_seed(0), dtype=torch.int8).to(device)


def _pack_signs(n: int, device: str):
    from lionsim.packing import pack_signs

    v = _votes(n, device)
    return (lambda: pack_signs(v)), n


def _unpack_signs(n: int, device: str):
    import torch

    from lionsim.packing import pack_signs, reference_paths, unpack_signs

    with reference_paths():
        packed = pack_signs(_votes(n, device))
    return (lambda: unpack_signs(packed, n, torch.int8)), n


def _codes(n: int, device: str):
    import torch

    return torch.randint(0, 4, (n,), generator=torch.Generator().manual_seed(1), dtype=torch.int8).to(device)


def _pack_codes(n: int, device: str):
    from lionsim.packing import pack_codes

    codes = _codes(n, device)
    return (lambda: pack_codes(codes, 2)), n


def _unpack_codes(n: int, device: str):
    from lionsim.packing import pack_codes, reference_paths, unpack_codes

    with reference_paths():
        packed = pack_codes(_codes(n, device), 2)
    return (lambda: unpack_codes(packed, n, 2)), n


def _scatter(n: int, device: str):
    import torch

    k = max(1, int(n * TOPK_SHARE))
    g = torch.Generator().manual_seed(2)
    dense = torch.zeros(n, device=device)
    index = torch.randint(0, n, (k,), generator=g).to(device)
    values = torch.randn(k, generator=g).to(device)
    return (lambda: dense.index_add_(0, index, values)), k


def _adamw_fused(n: int, device: str):
    import torch

    param = torch.zeros(n, requires_grad=True, device=device)
    opt = torch.optim.AdamW([param], lr=1e-3, fused=True)
    param.grad = torch.randn(n, generator=torch.Generator().manual_seed(3)).to(device)
    opt.step()  # the state exists from here on
    return opt.step, n


def _topk(n: int, device: str):
    import torch

    x = torch.randn(n, generator=torch.Generator().manual_seed(4)).abs().to(device)
    k = max(1, int(n * TOPK_SHARE))
    return (lambda: torch.topk(x, k, sorted=False)), n


def _orthogonalize(n: int, device: str):
    import torch

    from lionsim.transports.lowrank_allreduce import orthogonalize_

    q = torch.randn(n, 1, generator=torch.Generator().manual_seed(5)).to(device)
    return (lambda: orthogonalize_(q)), n


def _packing(name: str, *args) -> Callable[[], float]:
    def nbytes() -> float:
        import lionsim.packing as packing

        return getattr(packing, name)(*args)[0]

    return nbytes


def _adamw_bytes() -> float:
    from lionsim.optim.steps import ADAMW

    return ADAMW.fused


def _lion_bytes() -> float:
    from lionsim.optim.steps import LION

    return LION.chain


CASES = (
    Case("float-pass", _lion, _lion_bytes),  # Lion's eager chain: 68 bytes in 7 ops
    Case("cast", _cast, lambda: 6.0),  # read float32, write bfloat16
    Case("pack-signs", _pack_signs, _packing("pack_signs_passes", 1.0)),
    Case("unpack-signs", _unpack_signs, _packing("unpack_signs_passes", 1.0)),
    Case("pack-codes", _pack_codes, _packing("pack_codes_passes", 2)),
    Case("unpack-codes", _unpack_codes, _packing("unpack_codes_passes", 2)),
    # per pair: index and value read, the target's sector read and written (the transports' count)
    Case("scatter-add", _scatter, lambda: 8 + 4 + 2 * SECTOR),
    Case("fused-optimizer", _adamw_fused, _adamw_bytes, reference=False),  # torch.optim.AdamW(fused=True)
    Case("topk", _topk, lambda: 4.0, reference=False),  # per element of its float32 input
    Case("orthogonalize", _orthogonalize, lambda: 12.0, reference=False),  # a rank-1 factor: norm, + eps, /=
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


def measure(numel: int, repeats: int, device: str = "cpu") -> tuple[list[KernelRow], list[Figure]]:
    """Each case timed on `device` ("cpu", or "cuda": the visible GPU, named by its preset), its rows
    and figures. A GPU call is timed to its torch.cuda.synchronize(), so each time is the kernels'."""
    from contextlib import nullcontext

    from lionsim.packing import reference_paths

    name, machine, sync = timed_on(device)
    rows, figures, today = [], [], _today()
    how = f"median of {repeats} after 1 dropped; {numel:.0e} elements; " + (
        "each call to its torch.cuda.synchronize()" if sync else "machine as loaded at the time")
    for case in CASES:
        with reference_paths() if case.reference else nullcontext():
            call, elements = case.make(numel, device)
            seconds, _ = median_seconds(_synced(call, sync), repeats)
        nbytes = case.nbytes()
        gbps = nbytes * elements / seconds / 1e9
        rows.append(KernelRow(device=name, kernel=case.kernel, bytes_per_param=nbytes, GBps=gbps, method="measured",
                              source=f"measured: python -m lionsim.perf kernels ({how})", date=today, machine=machine))
        figures += [Figure("kernels", f"{name} {case.kernel}", "seconds", seconds, how),
                    Figure("kernels", f"{name} {case.kernel}", "GBps", gbps, how)]
    return rows, figures


def _synced(call: Callable[[], object], sync: Callable[[], None] | None) -> Callable[[], object]:
    if sync is None:
        return call

    def timed():
        call()
        sync()

    return timed


def timed_on(device: str) -> tuple[str, str, Callable[[], None] | None]:
    """Where a benchmark times its cases: ("cpu", this CPU's name, None), or on "cuda" the visible GPU's
    preset, machine line and the call that waits for its kernels (gpu_device)."""
    return gpu_device() if device == "cuda" else ("cpu", cpu_name(), None)


def gpu_device() -> tuple[str, str, Callable[[], None]]:
    """The visible GPU's preset name, its machine line, and the call that waits for its kernels."""
    import torch

    from lionsim.compute import DEVICES
    from lionsim.compute.which_gpu import preset_for

    if not torch.cuda.is_available():
        raise LionsimError("bad --kernel-device cuda: torch sees no CUDA GPU here; accepted: cpu, or cuda on a "
                           "machine with one")
    reported, memory = torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0).total_memory
    name = preset_for(reported, memory)
    if name is None:
        raise LionsimError(f"bad --kernel-device cuda: no device preset is the {reported} ({memory / 2**30:.1f} GiB); "
                           f"accepted: a GPU of {', '.join(DEVICES.names())}")
    torch.cuda.synchronize()
    machine = f"{reported} ({memory / 2**30:.1f} GiB), torch {torch.__version__}, CUDA {torch.version.cuda}"
    return name, machine, torch.cuda.synchronize


def gpu_rows(measured: dict[tuple[str, str], KernelRow] | None = None) -> tuple[list[KernelRow], list[Figure]]:
    """A row per kernel per GPU preset: `measured` where a GPU was timed, else published where a source
    measured it, else derived (module doc)."""
    from lionsim.compute import DEVICES

    measured = measured or {}
    rows, figures, today = [], [], _today()
    shares = reference_shares(measured.values())
    for name in DEVICES.names():
        device = DEVICES.get(name)
        if device.name != name:  # an alias (a100 is a100-40gb)
            continue
        sheet = device.description or device.source  # the datasheet the bandwidth comes from
        bandwidth, efficiency = device.memory_bandwidth_Bps, device.memory_efficiency
        copy = PUBLISHED_COPY.get(name)
        for kernel in KERNELS:
            if (name, kernel) in measured:
                row = measured[name, kernel]
            elif kernel == "fused-optimizer" and name == PUBLISHED_FUSED["device"]:
                row = KernelRow(kernel=kernel, method="published", **PUBLISHED_FUSED)
            elif kernel in ("float-pass", "cast") and copy:
                row = KernelRow(device=name, kernel=kernel, bytes_per_param=8.0, GBps=copy[1], method="published",
                                source=COPY_SOURCE.format(gpu=copy[0]), date="2026-11-28", machine=copy[0])
            else:
                row = derived_row(name, kernel, sheet, bandwidth, efficiency, copy, today, shares.get(kernel))
            rows.append(row)
            figures.append(Figure("kernels", f"{name} {kernel}", "GBps", row.GBps, row.source))
    for name, (base, published) in FRAMEWORK_ROWS.items():
        for row in [r for r in rows if r.device == base]:
            if row.kernel in published:
                row = KernelRow(device=name, kernel=row.kernel, method="published", **published[row.kernel])
            else:
                row = KernelRow(device=name, kernel=row.kernel, bytes_per_param=row.bytes_per_param, GBps=row.GBps,
                                method=row.method, source=row.source, date=row.date, machine=row.machine)
            rows.append(row)
            figures.append(Figure("kernels", f"{name} {row.kernel}", "GBps", row.GBps, row.source))
    return rows, figures


def bench_kernels(numel: int = 10**7, repeats: int = 5, device: str = "cpu") -> tuple[list[KernelRow], list[Figure]]:
    """The whole table: this run's measured rows, the shipped table's other measured rows (a GPU timed
    once stays measured until timed again; the cpu rows when a GPU was timed), the rest published or
    derived."""
    from lionsim.compute.kernel_table import default_table

    new_rows, figures = measure(numel, repeats, device)
    kept = {(r.device, r.kernel): r for r in default_table().rows if r.method == "measured"}
    kept |= {(r.device, r.kernel): r for r in new_rows}
    cpu = [row for (name, _), row in kept.items() if name == "cpu"]
    rows, gpu_figures = gpu_rows({key: row for key, row in kept.items() if key[0] != "cpu"})
    return cpu + rows, figures + gpu_figures


def print_kernels(rows: list[KernelRow]) -> None:
    print("kernels: declared bytes per second each moves (GB/s)")
    for r in rows:
        print(f"  {r.device:<10} {r.kernel:<16} {r.GBps:9.4g} GB/s  {r.method}")


def write_table(path: Path, rows: list[KernelRow]) -> None:
    """Rows to `path` as a kernel table file (lionsim.compute.kernel_table reads it), replaced atomically."""
    import csv
    import io

    from lionsim.reports.files import write_atomic

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in rows:
        writer.writerow([r.device, r.kernel, f"{r.bytes_per_param:.6g}", f"{r.GBps:.4g}", r.method,
                         r.source, r.date, r.machine])
    write_atomic(path, lambda fh: fh.write(buf.getvalue()))
