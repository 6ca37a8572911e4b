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
    algorithm, folded_ranks  what priced the exchange's largest call (a full bucket; the strategy's
                           own calls where the transport sends nothing): the cheapest algorithm
                           (or --algorithm), "hier:a+b+c" phase by phase on a two-level network,
                           NCCL's "ring/simple" (algorithm/protocol) where its model priced it;
                           where the step's ops (the strategy's own calls' too) were priced by
                           different algorithms, each op's largest call's, the largest first:
                           "all_gather ring/simple + all_to_all hier:pairwise+pairwise";
                           folded_ranks, the ranks a Rabenseifner or recursive doubling folds in
                           first where p is not a power of two (collectives.base.fold), 0 otherwise
                           (the most of any named call)
    speedup                the baseline row's step_s / this row's step_s
    compute_floor_s        forward + backward's launch floor (compute_kernels x the device's
                           per-kernel time), the even compute_s where it binds (launch-bound)
    replica_gpus           devices one worker is made of (--replica-gpus G, default 1): a replica
                           sharded over G devices (FSDP, ZeRO-3; a DiLoCo worker is a datacenter)
                           computes flops / G per device and runs its codec and optimizer passes on
                           its ceil(P / G) parameters, each device launching the kernels; what the
                           replica exchanges inside itself is not priced, only its exchange with
                           the other workers over the network (the local-step papers' simulations
                           price the same)

With --compute-spread (uneven workers, lionsim.steptime.stragglers) step_s is the expected step
over the slowest worker's factor, compute_s the median worker's, wait_s the difference made by
waiting, step_p50_s / step_p99_s its percentiles, spread_method how the distribution was
computed ("exact" for one spec, "monte carlo (...)" for several). A local-step strategy's
workers wait once a round, at its sync (lionsim.steptime.rounds): its local steps carry no wait,
its sync step the round's, so its row's wait_s is the round's over H, compute_max_s the round's
slowest worker's compute over H (E[max_i S_i] / H x the compute: whom the sync waits for, so
wait_s = compute_max_s - compute_s where the exchange runs after backward), step_p50_s /
step_p99_s the round's percentiles over H, and spread_method says how the round's slowest was
computed.

A local-step strategy (localsgd, diloco*) exchanges once every H steps: its row is the mean
step of a round, comm amortised over H (estimate_rows; wire_bytes is then a mean, fractional).
So is a momentum sync every K steps (--momentum-sync every:K, the Lion family): the row is
(the sync step + (K - 1) steps without it) / K, one sync's time and bytes over K a step.
schedule:K's gaps grow over the run, so it has no such mean: only a whole run prices it.

With --steps N (or --tokens T) each row also prices the whole run, every phase it has
(lionsim.estimate.run): run_steps N, run_s the run's seconds, mean_step_s = run_s / N,
run_speedup the baseline's run_s / this run_s, run_phases the phases and their step counts.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from lionsim.errors import LionsimError
from lionsim.estimate.config import Resolved
from lionsim.estimate.memory import MEMORY_COLUMNS, memory_columns
from lionsim.steptime.asked import check_once
from lionsim.steptime.kernel_passes import kernel_cost, stand_ins
from lionsim.steptime.passes import pass_bytes
from lionsim.estimate.probe import Probe, probe_resolved
from lionsim.estimate.run import KindCount, describe, step_kinds
from lionsim.strategies.core.base import WARMUP
from lionsim.estimate.to_target import TO_TARGET_COLUMNS, speedup_band
from lionsim.steptime.rounds import local_times, sync_distribution
from lionsim.steptime.stragglers import expected_times, max_distribution
from lionsim.strategies.core.unacted import short_warmup_note, unacted_note
from lionsim.strategies.local_steps import LocalSteps
from lionsim.steptime.timeline import StepWork, price_step, tensor_specs
from lionsim.steptime.work import Kernels, device_work
from lionsim.transports.base import footnote_on
from lionsim.network import Network
from lionsim.reports.columns import ROUND_STEPS
from lionsim.reports.rates import EFFICIENCY
from lionsim.reports.summary import pick_baseline
from lionsim.transports.base import step_bits

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
    ROUND_STEPS,
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
    "fabric_cap_GBps",
    EFFICIENCY,
    "algorithm",
    "folded_ranks",
    "replica_gpus",
    *MEMORY_COLUMNS,
    "compute_floor_s",
]

TIMES = tuple(c for c in ESTIMATE_COLUMNS + EXTRA_COLUMNS if c.endswith("_s"))
"""A row's times, each finite or the row refused (check_finite); the time to target's may be NaN
(never reached), so it is not among them."""


def check_finite(row: dict) -> None:
    """One line where a row's time overflowed to inf or nan, never a table printing it as a result.
    Every option's range keeps the times finite (ranges.BANDWIDTH_GBPS, spread.MAX_SIGMA); this is
    the guard behind them."""
    bad = next((c for c in TIMES if c in row and not math.isfinite(row[c])), None)
    if bad is not None:
        raise LionsimError(f"cannot price {row['strategy']}@{row['transport']} on {row['workers']} workers of "
                           f"{row['network']}: its {bad} overflowed to {row[bad]}; accepted: inputs whose times "
                           "stay finite (narrow --compute-spread, the bandwidth, the model or the run)")


KERNELS_PER_TENSOR = 3
"""Least kernels forward + backward launch per parameter tensor: its forward op, and the
gradients of its input and of itself in backward. No model needs fewer; a transformer
launches several times more (norms, activations, attention), so this is a floor, not a count."""


def compute_kernels(r: Resolved) -> int:
    """Kernels one worker's forward + backward launches at least: KERNELS_PER_TENSOR a parameter
    tensor (the compute's launch floor, which step_inputs prices and launch_note names)."""
    return KERNELS_PER_TENSOR * r.tensors


def compute_floor_s(r: Resolved) -> float:
    """The launch floor of one worker's forward + backward: compute_kernels x the device's
    per-kernel time (estimate.csv's compute_floor_s). Compute is launch-bound where it is above the
    FLOPs' time: device_work prices the larger, launch_note names the bound."""
    return compute_kernels(r) * r.device.kernel_s


def step_inputs(r: Resolved, run, p, flops: float, workers: int, network: Network,
                local: bool = False, asked: set | None = None) -> tuple[StepWork, dict]:
    """One step of `run`: its compute-stream work and the keywords of timeline.price_step. A worker
    of G devices (--replica-gpus) computes on one device's share: flops / G, and its passes over the
    ceil(P / G) parameters each device holds. `asked`: the transport questions this command has
    checked already (lionsim.steptime.asked; None: check every time)."""
    g = r.replica_gpus
    shard = -(-r.params // g)
    if not local:  # a plug-in's wrong answer is one line naming it, not a traceback from inside the pricing
        check_once(asked, p.transport, p.spec, workers, network.workers_per_node)
    passes = pass_bytes(run.strategy_class, run.transport, p.spec, workers, network.workers_per_node, local=local)
    per_tensor = not local and workers > 1 and r.overlap.per_tensor(p.transport, type(p.strategy))
    tensors = tensor_specs(p.spec, tensor_shapes(r), p.strategy) if per_tensor else None
    if r.kernels.table is None:
        cost = None
        each = r.tensors if per_tensor else 1  # --overlap tensors: each pass once per tensor
        kernels = Kernels(compute=compute_kernels(r), encode=each * int(passes.encode > 0),
                          decode=each * int(passes.decode > 0), update=int(passes.update > 0))
    else:
        own = p.strategy.kernel_bytes() if p.strategy is not None else run.strategy_class.bytes
        cost = kernel_cost(own, run.transport, p.spec, workers, r.kernels.table, r.kernels.device,
                           optimizer=r.optimizer, tensors=r.tensors, params=shard,
                           workers_per_node=network.workers_per_node, local=local,
                           local_step_bytes=run.strategy_class.local_step_bytes, tensor_specs=tensors)
        kernels = Kernels(compute=compute_kernels(r), encode=cost.launches("encode"),
                          decode=cost.launches("decode"), update=cost.launches("update"))
    work = device_work(flops / g, shard, passes, r.device, r.mfu, kernels, cost=cost, update_flops=p.update_flops / g,
                       update_launches=-(-p.update_launches // g))
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


def _priced(r: Resolved, run, p, flops: float, workers: int, network: Network, slowest, local: bool = False,
            asked: set | None = None) -> dict:
    """One step of `run`: its time columns, bytes sent and bits per parameter; `local`: a step of a
    local-step strategy that sends nothing; `slowest`: the spread's slowest-worker distribution (a
    local-step strategy's: its round's, rounds.py); `asked`: as step_inputs takes it."""
    work, pricing = step_inputs(r, run, p, flops, workers, network, local, asked)
    priced = price_step(**pricing)
    if slowest is None:
        times = priced.times(work)
        p50 = p99 = times.step_s
    elif local:  # nothing exchanged: no one waits; the drift and the slowest's lead are booked at the sync (rounds.py)
        times = local_times(priced, work, slowest.median)
        p50 = p99 = times.step_s
    else:
        times, p50, p99 = expected_times(priced, work, slowest)
    up, down = (step_bits(p.transport, p.spec, p.extra_calls, r.params, workers, network.workers_per_node)
                if not local else (0.0, 0.0))
    columns = times.columns()
    return {**columns, "wire_bytes": times.sent_bytes, "forward_s": times.forward_s, "backward_s": times.backward_s,
            "buckets": times.buckets, "algorithm": times.algorithm, "folded_ranks": times.folded,
            "bits_per_param_up": up, "bits_per_param_down": down,
            "inter_bytes": times.inter_bytes, "compute_median_s": columns["compute_median_s"],
            "compute_max_s": columns["compute_max_s"], "wait_s": times.wait_s, "step_p50_s": p50, "step_p99_s": p99}


def _whole_run(r: Resolved, run, p, flops: float, workers: int, network: Network, slowest, steps: int,
               memo: dict | None = None) -> dict:
    """A run of `steps` steps: each kind of step priced once, times its count (run.py). `memo`
    keeps each run's kinds for a step count and N across calls (a sweep's points, the time to
    target's band): counting them walks every step, pricing them does not; and the transport
    questions checked (asked_in)."""
    key = (run.label, steps, workers)
    kinds = memo.get(key) if memo is not None else None
    if kinds is None and memo is None:
        kinds = step_kinds(p.strategy, p.spec, steps, workers)
    elif kinds is None:  # one count per run and N, extended to each longer run asked for
        counter = memo.setdefault((run.label, workers), KindCount(p.strategy, p.spec, workers))
        kinds = memo[key] = counter.upto(steps)
    total = 0.0
    for kind, count in kinds.items():
        probed = dataclasses.replace(p, spec=kind.spec or p.spec, extra_calls=kind.extra_calls)
        total += count * _priced(r, run, probed, flops, workers, network, slowest, local=kind.spec is None,
                                 asked=asked_in(memo))["step_s"]
    return {"run_steps": steps, "run_s": total, "mean_step_s": total / steps, "run_phases": describe(kinds)}


ASKED = "asked"
"""estimate_rows' memo key of the transport questions checked in this command (lionsim.steptime.asked):
a sweep's points ask the same ones."""


def asked_in(memo: dict | None) -> set | None:
    """The questions `memo` keeps (made on first use); None without a memo: check every time."""
    return None if memo is None else memo.setdefault(ASKED, set())


AMORTISED = ("compute_s", "encode_s", "comm_s", "comm_exposed_s", "decode_s", "update_s", "step_s", "wire_bytes",
             "forward_s", "backward_s", "bits_per_param_up", "bits_per_param_down", "inter_bytes",
             "compute_median_s", "compute_max_s", "wait_s", "step_p50_s", "step_p99_s")
"""Columns a local-step strategy's row gives as the mean over one round of H steps (and a row
with a momentum sync every K steps, over K)."""


def _probed(r: Resolved, run, workers: int, memo: dict) -> Probe:
    """probe_resolved, kept in `memo`: a probe reads the model, the run's options and N, not the
    network, so a bandwidth sweep probes each run once, not at every point."""
    shapes = None if r.shapes is None else tuple(map(tuple, r.shapes))
    key = ("probe", run, workers, r.params, r.tensors, r.tie, shapes, repr(sorted(r.options.items())))
    if key not in memo:
        memo[key] = probe_resolved(r, run, workers)
    return memo[key]


def estimate_rows(r: Resolved, workers: int, network: Network, memo: dict | None = None) -> list[dict]:
    """One row per run of `r` on `workers` workers of `network`, speedups filled in.

    A local-step strategy (localsgd, diloco*: one exchange every H steps) gets the mean step of a
    round: (the sync step + (H - 1) local steps) / H for every time column, wire_bytes and the
    bits (so its comm is the sync's comm amortised over H steps); `local_steps` says H. A
    momentum sync every K steps likewise: (the step with it + (K - 1) without) / K. In
    general a sending step's share is the strategy's exact send rate (Strategy.send_rate:
    Streaming DiLoCo's P sends in H steps, where P need not divide H). With r.convergence
    (--from-run) each row also prices its run to target (to_target_columns). `memo`: the whole
    runs' step kinds and the transport questions checked (ASKED), kept across calls (_whole_run)."""
    memo = {} if memo is None else memo
    asked = asked_in(memo)
    flops = r.step_flops()  # a counted model's own FLOPs, else 6 P per token
    step_slowest = max_distribution(r.spread, workers) if r.spread is not None else None
    rows = []
    for run in r.runs:
        p = _probed(r, run, workers, memo)
        # a local-step strategy's workers wait once a round, at its sync (rounds.py)
        slowest = step_slowest if step_slowest is None or p.send_rate == 1 else \
            sync_distribution(r.spread, workers, p.send_rate)
        step = _priced(r, run, p, flops, workers, network, slowest, asked=asked)
        if p.sync_rate:  # --momentum-sync every:K: one step in K also syncs the momenta
            synced = _priced(r, run, dataclasses.replace(p, extra_calls=p.extra_calls + p.sync_calls), flops,
                             workers, network, slowest, asked=asked)
            rate = float(p.sync_rate)
            step |= {c: rate * synced[c] + (1 - rate) * step[c] for c in AMORTISED}
        if p.send_rate < 1:
            local = _priced(r, run, p, flops, workers, network, slowest, local=True, asked=asked)
            rate = float(p.send_rate)
            step |= {c: rate * step[c] + (1 - rate) * local[c] for c in AMORTISED}
        steps = r.steps_for(workers)
        whole = _whole_run(r, run, p, flops, workers, network, slowest, steps, memo) if steps else {}
        reach = ({} if r.convergence is None else
                 to_target_columns(r, run, p, workers, lambda n: _whole_run(r, run, p, flops, workers, network,
                                                                            slowest, int(n), memo)))
        rows.append({
            **whole, **reach,
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
            "fabric_cap_GBps": network.nccl_fabric().cap_GBps if network.traits.model == "nccl" else math.nan,
            EFFICIENCY: r.network.inter.efficiency,  # the given network's: a swept link's is folded in
            "replica_gpus": r.replica_gpus,
            "compute_floor_s": compute_floor_s(r),  # the same every step: no mean over a round
            **memory_columns(r.params, p.strategy.state_rows(), r.device.memory_bytes, r.replica_gpus),
            "unit": unit_of(r),
            NOTE: footnote_on(p.transport, p.spec, workers, network.workers_per_node, bits=False),  # no bits column
            ROUND_STEPS: rounds(p.strategy),
            SHORT_BENCH: p.strategy.short_bench_default() if p.strategy is not None else "",
            BUILT: built_line(p.strategy, r.shapes),
            UNACTED: ((unacted_note(p.strategy, steps, "--steps" if r.run_tokens is None else "--tokens")
                       or short_warmup_note(p.strategy, steps)) if steps and p.strategy is not None else ""),
        })
    for row in rows:
        check_finite(row)
    labels = [f"{row['strategy']}@{row['transport']}" for row in rows]
    base = pick_baseline(labels, [row["strategy"] for row in rows], r.baseline)
    for row in rows:
        row["speedup"] = rows[base]["step_s"] / row["step_s"]
        row["baseline"] = labels[base]
        if r.steps_for(workers):
            row["run_speedup"] = rows[base]["run_s"] / row["run_s"]
        if r.convergence is not None:  # NaN where either has no time to target
            row["to_target_speedup"] = rows[base]["time_to_target_s"] / row["time_to_target_s"]
            row["to_target_speedup_lo"], row["to_target_speedup_hi"] = speedup_band(
                rows[base]["time_to_target_lo_s"], rows[base]["time_to_target_hi_s"],
                row["time_to_target_lo_s"], row["time_to_target_hi_s"], row["to_target_speedup"])
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


def to_target_columns(r: Resolved, run, p, workers: int, run_of) -> dict:
    """The --from-run columns of one row (lionsim.estimate.to_target): its steps to target at
    `workers` and the run of that many steps priced by `run_of(steps)` (a whole run's columns),
    its band likewise, and where the convergence came from."""
    conv = r.convergence
    at = conv.at_scale(run.strategy, run.transport, workers, r.steps_for(workers), p.strategy)
    counts = sorted({n for n in (at.steps, at.lo, at.hi) if math.isfinite(n)})
    priced = {n: run_of(n) for n in counts}  # each count once, ascending: each run extends the shorter one's

    def seconds(n: float) -> float:
        return priced[n]["run_s"] if math.isfinite(n) else math.nan

    phases = priced[at.steps]["run_phases"] if math.isfinite(at.steps) else ""
    return {"steps_to_target": at.steps, "time_to_target_s": seconds(at.steps),
            "time_to_target_lo_s": seconds(at.lo), "time_to_target_hi_s": seconds(at.hi),
            "steps_to_target_lo": at.lo, "steps_to_target_hi": at.hi,
            "to_target_phases": phases,
            "to_target_ratio": at.ratio, "to_target_per_doubling": at.per_doubling,
            "to_target_match": at.match, "to_target_how": at.how,
            "to_target_note": "; ".join(filter(None, [at.note, warmup_only_note(
                phases, at.steps, [c.steps for c in conv.by_label.get(at.match, [])], p.strategy)])),
            "to_target_beyond": at.beyond, "to_target_basis": basis(r),
            **conv.source_columns()}


def warmup_only_note(phases: str, steps: float, trained: list[float], strategy) -> str:
    """Where the time to target is a warm-up's (Strategy.phase WARMUP), not the method's, which: the
    trained run reached the target inside its warm-up in every cell (`trained`: its steps to target
    there), so its ratio is the warm-up's convergence; or every step priced here (`phases`, "warm-up
    15") is a warm-up step. "" otherwise. A 1-bit Adam that reaches the target in its fp32 start
    would read as a win of its compression."""
    reached = [s for s in trained if math.isfinite(s)]
    if reached and strategy.phase(int(max(reached))).startswith(WARMUP):
        return (f"it reached the target inside its warm-up in the trained run (by step {max(reached):,.0f}), "
                "so its ratio is the warm-up's convergence, not the method's; train it to a lower loss "
                "(--target-loss) or with a shorter warm-up to measure the method")
    if not phases or any(not part.startswith(WARMUP + " ") for part in phases.split("; ")):
        return ""
    return (f"all {steps:,.0f} of its steps to target are its warm-up's, so this is the warm-up's time, not "
            "the method's; --tokens or --steps prices a run past it")


def basis(r: Resolved) -> str:
    """Where the baseline's steps to target at scale come from."""
    if r.run_tokens is not None:
        return f"--tokens {r.run_tokens:,}"
    if r.run_steps is not None:
        return f"--steps {r.run_steps}"
    one_count = len(r.convergence.measured.workers) == 1  # a sweep at one worker count: nothing to fit
    return "the run's own" if r.convergence.measured.kind == "bench run" or one_count else "the run's own, fitted"


def columns(rows: list[dict]) -> list[str]:
    """estimate.csv's columns for these rows: ESTIMATE_COLUMNS, EXTRA_COLUMNS, and with --from-run
    TO_TARGET_COLUMNS."""
    return ESTIMATE_COLUMNS + EXTRA_COLUMNS + (TO_TARGET_COLUMNS if rows and "time_to_target_s" in rows[0] else [])


NOTE = "note"
"""A row's footer line, not a column (Transport.footnote): the frame's attrs["notes"]."""
BUILT = "built_note"
"""A row's line where its strategy was built otherwise than its options read (Strategy.built_note),
not a column: the frame's attrs["notes"], with NOTE's."""
UNACTED = "unacted_note"
"""A row's line where its whole run (--steps / --tokens) ends inside its strategy's warm-up, so an option
given never acted (lionsim.strategies.core.unacted, bench's own note), not a column: the frame's
attrs["unacted_notes"], said under the whole run's table."""
SHORT_BENCH = "short_bench"
"""A row's authors' H where it took lionsim's short-bench default (Strategy.short_bench_default), not a
column: the frame's attrs["short_bench"], by strategy."""


def built_line(strategy, shapes=None) -> str:
    """Strategy.built_note, and what in estimate changes it: each strategy is built on a model of
    as many tensors as --tensors says (lionsim.estimate.probe; --params: 1). Bench, which prints
    the note too, trains its workload's own tensors: the flag is estimate's alone. Then
    Strategy.capped_note, read at the priced model's `shapes` (None: --params, the built ones)."""
    note = strategy.built_note() if strategy is not None else ""
    capped = strategy.capped_note(shapes) if strategy is not None else ""  # the model's shapes: no --tensors hint
    return " ".join(line for line in (f"{note} (--tensors T gives estimate's model T)" if note else "", capped) if line)


def rounds(strategy) -> int:
    """H of a local-step strategy (module doc), 1 for the others."""
    return strategy.local_steps if isinstance(strategy, LocalSteps) else 1


def merged_notes(notes) -> list[str]:
    """Each distinct footer line once; lines that differ only in the transport they start with
    ("hier-1bit: X", "hier-exact: X") are one, naming each ("hier-1bit, hier-exact: X")."""
    heads: dict[str, list[str]] = {}  # a line's text after "NAME: " -> the names that say it
    for note in notes:
        head, sep, body = note.partition(": ")
        named = bool(sep) and " " not in head  # a transport's name leads it
        names = heads.setdefault(body if named else note, [])
        names += [head] if named and head not in names else []
    return [f"{', '.join(names)}: {key}" if names else key for key, names in heads.items()]


def frame(rows: list[dict]) -> pd.DataFrame:
    """Rows in the estimate.csv column order; attrs["notes"]: the rows' footer lines, each once
    (a container wider than its transport's name says), and "built_notes" (Strategy.built_note);
    attrs["unacted_notes"]: each whole run that ended inside its warm-up (UNACTED);
    attrs["short_bench"]: the authors' H of each run that took the short-bench default."""
    out = pd.DataFrame.from_records(rows, columns=columns(rows))
    out.attrs["built_notes"] = list(dict.fromkeys(row[BUILT] for row in rows if row.get(BUILT)))
    out.attrs["notes"] = merged_notes([row[NOTE] for row in rows if row.get(NOTE)]) + out.attrs["built_notes"]
    out.attrs["unacted_notes"] = list(dict.fromkeys(row[UNACTED] for row in rows if row.get(UNACTED)))
    out.attrs["short_bench"] = {row["strategy"]: row[SHORT_BENCH] for row in rows if row.get(SHORT_BENCH)}
    return out
