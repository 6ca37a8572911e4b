"""Docs blocks of docs/time-model.md's modelled figures beyond the estimate tables: how stragglers
dilute the 1-bit gain as workers grow (a `--sweep workers` under each `--compute-spread`), what
`--replica-gpus` does to the optimizer's share of a step, and D-Lion's ratios to AdamW on the
Distributed Lion paper's case under each `--overlap`. Pure modelling (the Monte Carlo spread is
seeded), the same on any machine; run in this process each time they render."""

from __future__ import annotations

import math

import pandas as pd

from lionsim.docgen.bench import wrap
from lionsim.docgen.blocks import BLOCKS, Block
from lionsim.docgen.figures import command, frame, md, ms
from lionsim.docgen.run import estimate_frame
from lionsim.network import NETWORKS, CallCost, CollectiveCall, price
from lionsim.numbers import bytes_text, sig

GAIN = ["--model", "gpt2-345m", "--tokens-per-worker", "8192", "--network", "100gbe", "--sweep",
        "workers=8,32,128,512,1024", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo@a2a-1bit"]
SPREADS = ((), ("lognormal:0.1",), ("lognormal:0.3",), ("episodes:0.001:3:100",),
           ("lognormal:0.1", "episodes:0.001:3:100"))
"""Each row's --compute-spread specs (several: a Monte Carlo of their product)."""


def gains(spreads: tuple[str, ...]) -> tuple[str, dict[int, float]]:
    """(how the spread was computed, {workers: dlion-mavo@a2a-1bit's speedup}) under `spreads`."""
    args = [*GAIN, *(a for spec in spreads for a in ("--compute-spread", spec))]
    f = estimate_frame(args, csv="sweep.csv")[1]
    f = f[f["baseline"] != f["strategy"] + "@" + f["transport"]]  # the 1-bit run, not its baseline
    method = "" if not spreads else str(f["spread_method"].iloc[0])
    return method.split(" (")[0].replace("monte carlo", "Monte Carlo"), dict(zip(f["workers"], f["speedup"]))


def straggler_gain() -> str:
    """The table of the 1-bit gain per worker count under each spread, then what 30% jitter does to
    the largest count."""
    rows, by = [], {}
    for spreads in SPREADS:
        method, gain = gains(spreads)
        by[spreads] = gain
        label = " and ".join(f"`{s}`" for s in spreads) or "none"
        rows.append([label, method, *(f"{v:.2f}x" for v in gain.values())])
    counts = list(by[()])
    most, even, jitter = counts[-1], by[()][counts[-1]], by[("lognormal:0.3",)][counts[-1]]
    shown = [*GAIN, "--compute-spread", "lognormal:0.3", "--out", "reports/stragglers-estimate"]
    return ("\n" + command(shown) + "\n" + md(["`--compute-spread`", "method", *map(str, counts)], rows) + "\n"
            + wrap("When stragglers dominate, the 1-bit gain shrinks with N: the expected slowest of N grows "
                   "(about sqrt(2 ln N) sigmas for jitter; for episodes, the chance that some worker is in one), "
                   "and the wait is the same for both strategies, so it dilutes what communication saves: "
                   f"{even:.1f}x at {most} even workers falls to {jitter:.1f}x with 30% jitter (modelled, the same "
                   "on any machine; the Monte Carlo is seeded).") + "\n\n")


def replica_update() -> str:
    """A 1B model's AdamW update on one H100 against a replica of 52 (the Streaming DiLoCo case)."""
    from lionsim.published.local import DATA_PARALLEL, REPLICA_GPUS, STREAMING_MODELS

    model = STREAMING_MODELS[0]
    args = [*model.args()[1:], *DATA_PARALLEL.for_model(model)]  # the case's own command
    at = args.index("--replica-gpus") + 1
    one = frame([*args[:at], "1", *args[at + 1:]]).iloc[0]
    many = frame(args).iloc[0]
    return ("\n" + command(args) + "\n" + wrap(
        f"In its `update_s` (estimate.csv, `--out DIR`), on one H100 (`--replica-gpus 1`) a "
        f"{model.name} model's AdamW update takes {ms(one.update_s)} ms, {one.update_s / model.step_s:.0%} of a "
        f"{model.step_s:g} s step's compute; on a replica of {REPLICA_GPUS} it takes {ms(many.update_s)} ms, which "
        "is what the papers' compute model (no optimizer time) assumes (modelled, the same on any machine).")
        + "\n\n")


LOCAL = ["--model", "gpt2-1.3b", "--tokens-per-worker", "8192", "--workers", "64", "--network", "dgx-h100",
         "-s", "adamw@bf16-allreduce", "-s", "diloco", "--local-steps", "100", "--steps", "1000"]


def spread_local() -> str:
    """adamw (a wait every step) against diloco at H = 100 (one a round) under jitter and a slow worker."""
    rows, at = [], {}
    for spec in ("lognormal:0.3", "slow:1:1.5"):
        f = frame([*LOCAL, "--compute-spread", spec])
        at[spec] = f
        for run, r in f.iterrows():
            rows.append([f"`{spec}`", run, str(r.local_steps), ms(r.compute_s), ms(r.compute_max_s), ms(r.wait_s),
                         ms(r.step_s), ms(r.step_p99_s), r.spread_method])
    jitter = at["lognormal:0.3"]
    adamw, diloco = jitter.iloc[0], jitter.iloc[1]
    excess = diloco.compute_s * (math.exp(0.3 ** 2 / 2) - 1)  # every worker's mean step over the median's
    return ("\n" + command([*LOCAL, "--compute-spread", "lognormal:0.3"]) + "\n"
            + md(["`--compute-spread`", "run", "H", "compute", "slowest", "wait", "step", "p99", "method"], rows) + "\n"
            + wrap(f"(ms per step.) Under 30% jitter adamw waits {ms(adamw.wait_s)} ms every step for the slowest "
                   f"of 64; diloco's workers drift for 100 steps and wait once, {ms(100 * diloco.wait_s)} ms a round, "
                   f"{ms(diloco.wait_s)} ms a step: {ms(excess)} ms the jitter's own mean, E[f] - 1 = "
                   f"{math.exp(0.3 ** 2 / 2) - 1:.1%} of the median step's compute, which every worker computes, "
                   f"and {ms(diloco.wait_s - excess)} ms the slowest worker's sum of 100 draws over the mean. A slow "
                   "worker's lead persists: both wait its 50% every step (modelled, the same on any machine; the "
                   "Monte Carlo is seeded).") + "\n\n")


BLOCKS.add("straggler-gain", Block("straggler-gain", straggler_gain))
BLOCKS.add("spread-local", Block("spread-local", spread_local))
BLOCKS.add("replica-update", Block("replica-update", replica_update))


DLION_PAPER = ["--params", "3e9", "--tokens-per-worker", "1024", "--workers", "64", "--network", "a100x8-4hdr",
               "--device", "a100", "--overlap", "none", "-s", "adamw@bf16-allreduce", "-s",
               "dlion-mavo@int8-allreduce", "--kernels", "ideal"]
"""The Distributed Lion paper's case (its block estimate-dlion-paper shows the table)."""


def _with(args: list[str], flag: str, value: str) -> list[str]:
    at = args.index(flag) + 1
    return [*args[:at], value, *args[at + 1:]]


def _priced(row, nbytes: float) -> CallCost:
    """One all-reduce of `nbytes` among the workers of estimate.csv's `row`, as estimate prices
    it."""
    return price(CollectiveCall(op="all_reduce", nbytes=int(nbytes)), int(row.workers), NETWORKS.get(row.network))


def _rate(call: CallCost) -> str:
    """GB/s the call's bandwidth term moves its bytes at (its latency aside)."""
    return sig(call.phases[0].nbytes / call.phases[0].terms.bandwidth_s / 1e9)


def _share(network: str, protocol: str) -> float:
    """The part of the inter link's rate the network's NCCL fabric moves `protocol` at."""
    from lionsim.network.nccl import PROTOCOLS

    return NETWORKS.get(network).nccl_fabric().protocol_share[PROTOCOLS.index(protocol)]


def why_buckets(one, per) -> str:
    """Why AdamW's step per bucket (`per`: its estimate.csv row under --overlap buckets) is longer
    than after backward (`one`): the calls NCCL's model runs for one bucket and for the whole."""
    whole = _priced(one, one.params * one.bits_per_param_up / 8)
    bucket = _priced(per, whole.phases[0].nbytes / per.buckets)
    latency_ms = sig(bucket.phases[0].terms.latency_s * 1e3)
    return (f"per bucket AdamW's step grows from {ms(one.step_s)} to {ms(per.step_s)} ms: each of its "
            f"{int(per.buckets)} bucket calls pays a call's latency at a smaller call's rate. NCCL's model runs a "
            f"{bytes_text(bucket.phases[0].nbytes)} all-reduce across {one.workers // one.gpus_per_node} nodes as a "
            f"{bucket.algorithm} in {bucket.protocol.upper()} ({latency_ms} ms of latency, {_rate(bucket)} GB/s: the "
            f"{per.fabric} fabric, fitted to nccl-tests, moves {bucket.protocol.upper()} at "
            f"{_share(per.network, bucket.protocol):.0%} of the link), and the whole "
            f"{bytes_text(whole.phases[0].nbytes)} after backward as a {whole.algorithm} in "
            f"{whole.protocol.capitalize()} ({_rate(whole)} GB/s, "
            "[fabrics](clusters.md#across-nodes-the-fabric-nccl-runs-over)), so the buckets take "
            f"{ms(per.comm_s)} ms against {ms(one.comm_s)}, {ms(per.comm_exposed_s)} ms of it beyond what backward "
            "hides")


def dlion_paper_ratios() -> str:
    """D-Lion's ratios to AdamW on the paper's case, after backward, under --overlap auto and
    buckets, and on a full DGX A100; why per bucket exposes more of AdamW's exchange here."""
    base, dlion = "adamw@bf16-allreduce", "dlion-mavo@int8-allreduce"
    none, auto, buckets = (frame(_with(DLION_PAPER, "--overlap", mode)) for mode in ("none", "auto", "buckets"))
    dgx = frame(_with(DLION_PAPER, "--network", "dgx-a100"))
    step = {name: f.loc[dlion].step_s / f.loc[base].step_s for name, f in
            (("none", none), ("auto", auto), ("buckets", buckets), ("dgx", dgx))}
    one = none.loc[base]
    return wrap(
        f"D-Lion / AdamW: communication {none.loc[dlion].comm_s / one.comm_s:.2f} (paper 0.46: with equal latency "
        "terms and half the bytes an alpha-beta model cannot go below the byte ratio), step "
        f"{step['none']:.3f} (paper 0.711, or 0.756 with equal backward times). Compute is 6NT at 40% MFU "
        f"({ms(one.compute_s)} ms against the paper's 159; its 18 ms forward would exceed the A100's peak). "
        "lionsim also books the optimizer's memory passes, which the paper's rows leave out. With overlap as each "
        "method's code runs it (`--overlap auto`: AdamW's all-reduce per DDP bucket, D-Lion's votes after "
        f"backward in the optimizer step) the ratio is {step['auto']:.2f}; with both per bucket (`--overlap "
        f"buckets`) {step['buckets']:.2f}. Both are lower than after backward because "
        f"{why_buckets(one, buckets.loc[base])}. On a full DGX A100 (`dgx-a100`, 8 HDR NICs per node, no "
        f"overlap) the step ratio is {step['dgx']:.2f} (modelled, the same on any machine).") + "\n"


BLOCKS.add("dlion-paper-ratios", Block("dlion-paper-ratios", dlion_paper_ratios))


UNREACHABLE = ["--model", "gpt2-1.3b", "--tokens-per-worker", "1024", "--workers", "64", "--network", "dgx-h100",
               "-s", "adamw@bf16-allreduce", "--need", "utilisation=0.999"]
"""A --need target AdamW cannot reach on DGX H100 at any bandwidth (its per-call latencies)."""


def need_unreachable() -> str:
    """What an unreachable --need target prints and writes, from a command that has one."""
    row = frame(UNREACHABLE).iloc[0]
    written = "empty" if pd.isna(row.bandwidth_needed_GBps) else f"{row.bandwidth_needed_GBps:g}"
    return ("\n" + command(UNREACHABLE) + "\n" + wrap(
        f"prints `-` under GB/s and Gbit/s in AdamW's line, whose note reads \"{row.need_note}\"; "
        f"`estimate.csv` leaves its `bandwidth_needed_GBps` {written} (null with `--format json`) and keeps the "
        "note in `need_note`. Where a fabric caps what a node moves, the note names the cap and its remedies "
        "instead (below).") + "\n\n")


BLOCKS.add("need-unreachable", Block("need-unreachable", need_unreachable))


SPREAD_BENCH = ["--workload", "mlp", "--workers", "16", "--network", "1gbe", "-s", "adamw", "-s", "dlion-mavo",
                "--compute-spread", "lognormal:0.3", "--compute-spread", "episodes:0.01:3:20"]
"""The bench of docs/time-model.md's uneven workers (mlp: trains in about a second)."""


def _without_spread(args: list[str]) -> list[str]:
    kept, skip = [], False
    for a in args:
        if skip or a == "--compute-spread":
            skip = not skip
            continue
        kept.append(a)
    return kept


def spread_bench() -> str:
    """The uneven bench's step times (ms), beside each run's speedup with even workers (the same
    bench without --compute-spread); whether the spread left the losses as they were."""
    from lionsim.docgen.run import bench_summary

    uneven, even = bench_summary(SPREAD_BENCH), bench_summary(_without_spread(SPREAD_BENCH))
    rows = [[run, ms(r.compute_median_s), ms(r.compute_max_s), ms(r.wait_s), ms(r.step_s), ms(r.step_p50_s),
             ms(r.step_p99_s), f"{r.speedup:.2f}x ({even.loc[run, 'speedup']:.2f}x)"] for run, r in uneven.iterrows()]
    same = (uneven["final_loss"] == even["final_loss"]).all()
    losses = ("losses identical to the even run's: the spread moves time, not training" if same
              else "losses differ from the even run's")
    cut = SPREAD_BENCH.index("--compute-spread")  # the spread's options on a line of their own
    shown = " \\\n    ".join([" ".join(SPREAD_BENCH[:cut]), " ".join([*SPREAD_BENCH[cut:], "--out reports/stragglers"])])
    return ("\n```bash\nlionsim bench " + shown + "\n```\n\n"
            + md(["run (ms per step)", "compute", "slowest", "wait", "step", "p50", "p99", "speedup (even workers)"],
                 rows)
            + "\n" + wrap(f"(Modelled by lionsim as of the page's commit, the same on any machine; {losses}; "
                          "generated by `python -m lionsim.docgen`.)") + "\n\n")


BLOCKS.add("spread-bench", Block("spread-bench", spread_bench))
