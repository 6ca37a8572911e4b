"""`lionsim estimate`: the per-step breakdown of each strategy for a model size, no training.

Per worker and step (timeline.py for how they combine):

    forward_s, backward_s  compute.flops: 2 P T and 4 P T FLOPs at the device's peak x mfu
                           (P parameters, T tokens per worker; work.device_work), at least
                           KERNELS_PER_TENSOR kernels per parameter tensor x the device's
                           per-kernel floor (a small model is launch-bound, as bench counts)
    encode/decode/update   the kernels each strategy's and transport's implementation runs
                           (their modules declare them; kernel_passes.py), each at its kind's
                           speed in the codec kernel table for the device (--kernels table,
                           the default), at least the launches of its kernels x the device's
                           per-kernel floor; the optimizer steps in the form --optimizer says
                           (fused, the default: what large-model trainers run; foreach; eager);
                           with --kernels ideal one fused pass each (passes.py bytes) at the
                           device's memory bandwidth, at least one kernel's floor where a part
                           moves any bytes. `kernels` and `optimizer` say which priced the row;
                           the update also runs the strategy's own matrix FLOPs
                           (Strategy.update_flops: Muon's Newton-Schulz, Dion's power
                           iteration) at peak x mfu
    comm_s, comm_exposed_s the transport's collectives priced on the network, per bucket during
                           backward or once after it (overlap.py: the strategy's reference
                           schedule where its transport can run it, or --overlap's)
    overlap                which ran: buckets | tensors (per parameter tensor, each codec kernel
                           once per tensor: --overlap tensors) | after
    wire_bytes             whole bytes one worker sends by the algorithms comm_s priced (the
                           cheapest for each call, or --algorithm): every bucket and extra call
    inter_bytes            bytes one node sends to other nodes per step, through its inter link (a
                           node's workers' inter-node phases together; on a flat network a node
                           is a worker and it is wire_bytes): the inter link's bandwidth term is
                           inter_bytes / its bandwidth (lionsim.network.cost CallCost.inter_bytes)
    library, fabric        the collective library that priced comm_s (lionsim.network.libraries:
                           a preset's own, a profile's [traits], else nccl: the device is a GPU)
                           and, for nccl, the transport across nodes it was priced on
                           (lionsim.network.fabrics); fabric is empty for other libraries
    speedup                the baseline row's step_s / this row's step_s

With --compute-spread (uneven workers, lionsim.steptime.stragglers) step_s is the expected step
over the slowest worker's factor, compute_s the median worker's, wait_s the difference made by
waiting, step_p50_s / step_p99_s its percentiles, spread_method how the distribution was
computed ("exact" for one spec, "monte carlo (...)" for several).

A local-step strategy (localsgd, diloco*) exchanges once every H steps: its row is the mean
step of a round, comm amortised over H (estimate_rows; wire_bytes is then a mean, fractional).

With --steps N (or --tokens T) each row also prices the whole run, every phase it has
(lionsim.estimate.run): run_steps N, run_s the run's seconds, mean_step_s = run_s / N,
run_speedup the baseline's run_s / this run_s, run_phases the phases and their step counts.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from lionsim.compute import training_flops
from lionsim.estimate.config import EstimateConfig, Resolved, resolve
from lionsim.steptime.kernel_passes import kernel_cost, stand_ins
from lionsim.steptime.passes import pass_bytes
from lionsim.estimate.probe import probe
from lionsim.estimate.run import describe, step_kinds
from lionsim.steptime.stragglers import expected_times, max_distribution
from lionsim.steptime.timeline import StepWork, price_step, tensor_specs
from lionsim.steptime.work import Kernels, device_work
from lionsim.network import Network
from lionsim.reports.summary import pick_baseline
from lionsim.transports.base import bits_on

ESTIMATE_COLUMNS: list[str] = [
    "strategy",
    "transport",
    "workers",
    "network",
    "params",
    "compute_s",
    "encode_s",
    "comm_s",
    "comm_exposed_s",
    "decode_s",
    "update_s",
    "step_s",
    "wire_bytes",
    "speedup",
]
"""SPEC's estimate.csv columns, in order; more follow them (EXTRA_COLUMNS)."""
EXTRA_COLUMNS: list[str] = [
    "model",
    "tokens_per_worker",
    "samples_per_worker",
    "device",
    "mfu",
    "gpus_per_node",
    "forward_s",
    "backward_s",
    "buckets",
    "overlap",
    "bits_per_param_up",
    "bits_per_param_down",
    "baseline",
    "inter_bytes",
    "compute_median_s",
    "compute_max_s",
    "wait_s",
    "step_p50_s",
    "step_p99_s",
    "compute_spread",
    "spread_method",
    "local_steps",
    "run_steps",
    "run_s",
    "mean_step_s",
    "run_speedup",
    "run_phases",
    "kernels",
    "optimizer",
    "unit",
    "library",
    "fabric",
]


KERNELS_PER_TENSOR = 3
"""Least kernels forward + backward launch per parameter tensor: its forward op, and the
gradients of its input and of itself in backward. No model needs fewer; a transformer
launches several times more (norms, activations, attention), so this is a floor, not a count."""


def step_inputs(r: Resolved, run, p, flops: float, workers: int, network: Network,
                local: bool = False) -> tuple[StepWork, dict]:
    """One step of `run`: its compute-stream work and the keywords of timeline.price_step."""
    passes = pass_bytes(run.strategy_class, run.transport, p.spec, workers, network.workers_per_node, local=local)
    per_tensor = not local and workers > 1 and r.overlap.per_tensor(p.transport, type(p.strategy))
    tensors = tensor_specs(p.spec, tensor_shapes(r), p.strategy) if per_tensor else None
    if r.kernels.table is None:
        cost = None
        each = r.tensors if per_tensor else 1  # --overlap tensors: each pass once per tensor
        kernels = Kernels(compute=KERNELS_PER_TENSOR * r.tensors, encode=each * int(passes.encode > 0),
                          decode=each * int(passes.decode > 0), update=int(passes.update > 0))
    else:
        own = p.strategy.kernel_bytes() if p.strategy is not None else run.strategy_class.bytes
        cost = kernel_cost(own, run.transport, p.spec, workers, r.kernels.table, r.kernels.device,
                           optimizer=r.optimizer, tensors=r.tensors, params=r.params,
                           workers_per_node=network.workers_per_node, local=local,
                           local_step_bytes=run.strategy_class.local_step_bytes, tensor_specs=tensors)
        kernels = Kernels(compute=KERNELS_PER_TENSOR * r.tensors, encode=cost.launches("encode"),
                          decode=cost.launches("decode"), update=cost.launches("update"))
    work = device_work(flops, r.params, passes, r.device, r.mfu, kernels, cost=cost, update_flops=p.update_flops)
    return work, dict(transport=p.transport, spec=None if local else p.spec, workers=workers, network=network,
                      overlap=r.overlap, extra_calls=() if local else p.extra_calls, algorithm=r.algorithm,
                      strategy=type(p.strategy), tensors=tensors)


def tensor_shapes(r: Resolved) -> list[tuple[int, ...]]:
    """The model's parameter tensors: a preset's or a counted model's shapes, else (--params,
    --tensors) that many equal vectors, the remainder spread one parameter each over the first."""
    if r.shapes is not None:
        return [tuple(shape) for shape in r.shapes]
    size, extra = divmod(r.params, r.tensors)
    return [(size + (i < extra),) for i in range(r.tensors)]


def kernels_text(r: Resolved, transport: str) -> str:
    """estimate.csv's `kernels`: what priced the row's passes, and any kernel of the transport the
    table lacks (priced as float-pass: lionsim.steptime.kernel_passes)."""
    if r.kernels.table is None:
        return r.kernels.describe()
    missing = stand_ins(transport, r.kernels.table, r.kernels.device)
    return r.kernels.describe() + (f"; {', '.join(missing)} priced as float-pass" if missing else "")


def _priced(r: Resolved, run, p, flops: float, workers: int, network: Network, slowest, local: bool = False) -> dict:
    """One step of `run`: its time columns, bytes sent and bits per parameter; `local`: a step of a
    local-step strategy that sends nothing; `slowest`: the spread's slowest-worker distribution."""
    work, pricing = step_inputs(r, run, p, flops, workers, network, local)
    priced = price_step(**pricing)
    if slowest is None:
        times = priced.times(work)
        p50 = p99 = times.step_s
    else:
        times, p50, p99 = expected_times(priced, work, slowest)
    up, down = (bits_on(p.transport, p.spec, workers, network.workers_per_node) if workers > 1 and not local
                else (0.0, 0.0))
    columns = times.columns()
    return {**columns, "wire_bytes": times.sent_bytes, "forward_s": times.forward_s, "backward_s": times.backward_s,
            "buckets": times.buckets, "bits_per_param_up": up, "bits_per_param_down": down,
            "inter_bytes": times.inter_bytes, "compute_median_s": columns["compute_median_s"],
            "compute_max_s": columns["compute_max_s"], "wait_s": times.wait_s, "step_p50_s": p50, "step_p99_s": p99}


def _whole_run(r: Resolved, run, p, flops: float, workers: int, network: Network, slowest) -> dict:
    """A run of r.steps_for(workers) steps: each kind of step priced once, times its count (run.py)."""
    steps = r.steps_for(workers)
    kinds = step_kinds(p.strategy, p.spec, steps, workers)
    total = 0.0
    for kind, count in kinds.items():
        probed = dataclasses.replace(p, spec=kind.spec or p.spec, extra_calls=kind.extra_calls)
        total += count * _priced(r, run, probed, flops, workers, network, slowest, local=kind.spec is None)["step_s"]
    return {"run_steps": steps, "run_s": total, "mean_step_s": total / steps, "run_phases": describe(kinds)}


AMORTISED = ("compute_s", "encode_s", "comm_s", "comm_exposed_s", "decode_s", "update_s", "step_s", "wire_bytes",
             "forward_s", "backward_s", "bits_per_param_up", "bits_per_param_down", "inter_bytes",
             "compute_median_s", "compute_max_s", "wait_s", "step_p50_s", "step_p99_s")
"""Columns a local-step strategy's row gives as the mean over one round of H steps."""


def estimate_rows(r: Resolved, workers: int, network: Network) -> list[dict]:
    """One row per run of `r` on `workers` workers of `network`, speedups filled in.

    A local-step strategy (localsgd, diloco*: one exchange every H steps) gets the mean step of a
    round: (the sync step + (H - 1) local steps) / H for every time column, wire_bytes and the
    bits (so its comm is the sync's comm amortised over H steps); `local_steps` says H."""
    flops = (training_flops(r.params, r.tokens_per_worker) if r.flops_per_unit is None
             else r.flops_per_unit * r.tokens_per_worker)  # a counted model's own FLOPs (lionsim.compute.counted)
    slowest = max_distribution(r.spread, workers) if r.spread is not None else None
    rows = []
    for run in r.runs:
        p = probe(run, params=r.params, tensors=r.tensors, workers=workers, tie=r.tie,
                  shapes=r.shapes, options=r.options)
        step = _priced(r, run, p, flops, workers, network, slowest)
        if p.sync_every > 1:
            local = _priced(r, run, p, flops, workers, network, slowest, local=True)
            h = p.sync_every
            step |= {c: (step[c] + (h - 1) * local[c]) / h for c in AMORTISED}
        whole = _whole_run(r, run, p, flops, workers, network, slowest) if r.steps_for(workers) else {}
        rows.append({
            **whole,
            "strategy": run.strategy, "transport": run.transport, "workers": workers, "network": network.name,
            "params": r.params, **step,
            "model": r.model, **per_worker(r), "device": r.device.name, "mfu": r.mfu,
            "gpus_per_node": network.workers_per_node,
            "overlap": r.overlap.label(p.transport, type(p.strategy)),
            "compute_spread": "" if r.spread is None else r.spread.describe(),
            "spread_method": "" if slowest is None else slowest.method,
            "local_steps": p.sync_every,
            "kernels": kernels_text(r, run.transport),
            "optimizer": r.optimizer,
            "library": network.traits.name,
            "fabric": network.nccl_fabric().name if network.traits.model == "nccl" else "",
            "unit": unit_of(r),
        })
    labels = [f"{row['strategy']}@{row['transport']}" for row in rows]
    base = pick_baseline(labels, [row["strategy"] for row in rows], r.baseline)
    for row in rows:
        row["speedup"] = rows[base]["step_s"] / row["step_s"]
        row["baseline"] = labels[base]
        if r.steps_for(workers):
            row["run_speedup"] = rows[base]["run_s"] / row["run_s"]
    return rows


def unit_of(r: Resolved) -> str:
    """What --tokens-per-worker counts: tokens (priced 6 P T), or samples of a model whose FLOPs
    are counted per sample (resnet*, --model FILE.py:FUNC with an example input)."""
    return "tokens" if r.flops_per_unit is None else "samples"


def per_worker(r: Resolved) -> dict:
    """One column per unit: tokens_per_worker holds tokens only, samples_per_worker samples only
    (a counted image model's samples used to sit in tokens_per_worker); the other is empty."""
    unit = unit_of(r)
    return {f"{name}_per_worker": r.tokens_per_worker if name == unit else None for name in ("tokens", "samples")}


def frame(rows: list[dict]) -> pd.DataFrame:
    """Rows in the estimate.csv column order."""
    return pd.DataFrame.from_records(rows, columns=ESTIMATE_COLUMNS + EXTRA_COLUMNS)


def estimate(cfg: EstimateConfig) -> pd.DataFrame:
    """The per-step breakdown of every strategy in cfg (one row each, ESTIMATE_COLUMNS first)."""
    r = resolve(cfg)
    return frame(estimate_rows(r, r.workers, r.network))
