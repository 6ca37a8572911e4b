"""GRACE's two modes as lionsim prices them, and the kernel rows the release's costs give.

GRACE's release runs each method twice (lionsim.published.grace): mode throughput, the method as
shipped, and mode upper-bound, read here as the same exchanges and decompression with the
compressor's work skipped. What the release measures is the step's increase between the two, not the compressor's
time: where the compressor runs beside exchanges, part of it hides. So lionsim prices both modes
in one schedule, the case's own (`--overlap tensors`, each tensor's exchange beside the codec work
of the others): mode throughput is the step as estimate prices it, mode upper-bound the same step
with encode_s = 0 (decode and update kept).

A row the release's cost gives (the v100-tf1.15 rows topk and orthogonalize: TensorFlow 1.15's one-SM
sort and host QR, which no kernel benchmark times) is then the rate at which lionsim's priced increase
equals the release's, solved here by bisection. Dividing the cost by the bytes instead would
assume the compressor adds to the step in full, which lionsim's own schedule does not do: it runs
PowerSGD's host QRs beside other tensors' exchanges, so a row so taken priced two thirds of the
release's cost. lionsim.perf.kernels types the solved rates (lionsim.published.grace.solved solves
them from the release's runs) and a test solves them again; `python -m lionsim.published.grace --case
powersgd-rank-1` (or topk-0.01) prints a row's solve beside the shipped rate.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from lionsim.estimate.config import EstimateConfig, KernelChoice, resolve

FRAMEWORK = "v100-tf1.15"
"""The kernel rows GRACE's release prices (lionsim.perf.kernels.FRAMEWORK_ROWS)."""
OPTIONS = {"dgc": {"topk_ratio": 0.01}, "powersgd": {"powersgd_rank": 1}, "qsgd": {"qsgd_levels": 127}}
"""Strategy options of the GRACE runs, by strategy: top-k at 1%, PowerSGD at rank 1 (GRACE's default), and
qsgd's 127 levels (GRACE's quantum_num default, grace_dl/tensorflow/helper.py)."""


def config(run: str, *, workers: int = 8, network: str = "10gbe") -> EstimateConfig:
    """The GRACE cases' estimate of one `run` (lionsim.published.grace.COMMAND with OPTIONS, as a config)."""
    return EstimateConfig(model="resnet50-tf", tokens_per_worker=64, device="v100", kernels=f"table:{FRAMEWORK}",
                          mfu=0.08, traits="mpi", overlap="tensors", workers=workers, network=network,
                          strategies=[run], options=dict(OPTIONS.get(run.partition("@")[0], {})))


@dataclass(frozen=True, slots=True)
class Modes:
    """lionsim's step of one run in GRACE's two modes, s."""

    throughput_s: float
    """The method as shipped: the step estimate prices."""
    upper_bound_s: float
    """The same step without the compressor's work (encode_s = 0)."""
    encode_s: float
    """The compressor's work priced (what mode upper-bound leaves out)."""

    @property
    def increase_s(self) -> float:
        """What the compressor adds to the step: the release's cost a step, as lionsim prices it."""
        return self.throughput_s - self.upper_bound_s


def modes(cfg: EstimateConfig, rates: dict[str, float] | None = None) -> Modes:
    """`cfg`'s one run in both modes; `rates`: kernel -> GBps replacing the FRAMEWORK rows'."""
    from lionsim.estimate.probe import probe_resolved
    from lionsim.estimate.table import step_inputs
    from lionsim.steptime.timeline import price_step

    r = resolve(cfg)
    if rates:
        table = r.kernels.table
        rows = tuple(dataclasses.replace(row, GBps=rates[row.kernel])
                     if row.device == r.kernels.device and row.kernel in rates else row for row in table.rows)
        r = dataclasses.replace(r, kernels=KernelChoice(dataclasses.replace(table, rows=rows), r.kernels.device))
    run = r.runs[0]
    flops = r.step_flops()  # a counted model's own FLOPs, else 6 P per token
    p = probe_resolved(r, run)
    work, pricing = step_inputs(r, run, p, flops, r.workers, r.network)
    priced = price_step(**pricing)
    return Modes(priced.times(work).step_s, priced.times(dataclasses.replace(work, encode_s=0.0)).step_s,
                 work.encode_s)


def solved_rate(kernel: str, cfg: EstimateConfig, cost_s: float, *, lo: float = 1e-3, hi: float = 1e4) -> float:
    """The GBps of `kernel`'s FRAMEWORK row at which `cfg`'s priced increase equals `cost_s`, to a
    relative 1e-6 (bisection on log rate: the increase falls as the rate rises)."""
    def increase(rate: float) -> float:
        return modes(cfg, {kernel: rate}).increase_s

    if not increase(hi) <= cost_s <= increase(lo):
        raise ValueError(f"no {kernel} rate in [{lo}, {hi}] GB/s gives a {cost_s:.4f} s increase")
    while hi / lo > 1 + 1e-6:
        mid = (lo * hi) ** 0.5
        lo, hi = (mid, hi) if increase(mid) > cost_s else (lo, mid)
    return (lo * hi) ** 0.5
