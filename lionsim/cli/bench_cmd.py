"""`lionsim bench`: train a workload with N workers under several strategies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from lionsim.cli import options as o
from lionsim.cli.app import app, console, err_console, fail, option_given, option_typed
from lionsim.cli.output import Format, Out, emit
from lionsim.cli.progress import step_progress
from lionsim.cli.strategy_flags import strategy_options
from lionsim.compute.devices import DEVICES
from lionsim.errors import LionsimError

if TYPE_CHECKING:  # annotations only: the quick commands import no torch
    from lionsim.plan import BenchPlan
    from lionsim.training.results import BenchResult


def parse_betas(text: str | None) -> tuple[float, float] | None:
    from lionsim.config.bench import BETA

    if text is None:
        return None
    try:
        b1, b2 = (float(x) for x in text.split(","))
    except ValueError:
        raise LionsimError(f"bad --betas {text!r}; accepted: two numbers like 0.9,0.99, each {BETA}") from None
    if not (0 <= b1 < 1 and 0 <= b2 < 1):
        raise LionsimError(f"bad --betas {text!r}; accepted: two numbers, each {BETA}")
    return b1, b2


def parse_hyper(text: str | None, runs: list[str] | None = None) -> dict:
    """--hyper: a JSON object {run: {lr, weight_decay, betas}} (config files give it as a table);
    `runs` the command's -s values, which a bad key's message lists (a run's label, or its
    strategy's name alone, keys its table)."""
    if text is None:
        return {}
    runs = None if runs is None else [part.strip() for run in runs for part in run.split(",") if part.strip()]
    example = json.dumps({(runs or ["dlion-mavo"])[0]: {"lr": 0.001}})
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise LionsimError(f"bad --hyper: {e}; accepted: a JSON object like {example}") from None
    if not isinstance(value, dict):
        raise LionsimError(f"bad --hyper {text!r}: not a JSON object; accepted: one like {example}")
    names = {part for run in runs or () for part in (run, run.partition("@")[0])}
    for key, table in value.items():
        if isinstance(table, dict):
            continue
        if runs is not None and key not in names:
            raise LionsimError(f"bad --hyper: key {key!r} is not a run of this command; accepted: the run names "
                               f"({', '.join(runs)}), each with an object of its hyperparameters, e.g. {example}")
        raise LionsimError(f"bad --hyper: run {key!r} maps to {json.dumps(table)}, not an object; accepted: an "
                           f"object of its hyperparameters, e.g. {json.dumps({key: {'lr': 0.001}})}")
    return value




def memory_guard(bench: BenchPlan, local_workers: int | None = None) -> None:
    """Stop (one line) before anything is allocated if the run would not fit in this machine's memory."""
    from lionsim.training.memory import check_memory

    check_memory(bench.workload, local_workers=local_workers, extra_rows=bench.extra_rows)  # per-worker replicas


@app.command()
@strategy_options
def bench(
    ctx: typer.Context,
    workers: o.Workers = 8,
    strategy: o.Strategy = None,
    transport: o.Transport = None,
    network: o.Network = "1gbe",
    traits: o.Traits = None,
    backend: o.Backend = "sim",
    ranks: Optional[int] = typer.Option(None, "--ranks", parser=o.whole_number, help="gloo/nccl: processes to start (W/R workers each); "
                                        "default 2 for gloo, one per visible GPU for nccl; under torchrun, its WORLD_SIZE."),
    workload: o.Workload = "vit",
    model_size: o.ModelSize = "small",
    steps: o.Steps = 100,
    seed: o.Seed = 0,
    batch_size: o.BatchSize = 32,
    lr: o.Lr = None,
    weight_decay: o.WeightDecay = None,
    betas: o.Betas = None,
    hyper: o.Hyper = None,
    momentum_sync: o.MomentumSync = "never",
    sync_tensors: o.SyncTensors = "all",
    tie: o.Tie = "zero",
    data: o.Data = None,
    data_split: o.DataSplit = "iid",
    eval_every: o.EvalEvery = 25,
    eval_samples: o.EvalSamples = None,
    baseline: o.Baseline = None,
    target_loss: Optional[float] = typer.Option(
        None, "--target-loss", help="Training loss (> 0) for time to target (default: the baseline run's smoothed loss "
                                    "at 90% of its steps; a run that never gets there shows not reached, one that gets "
                                    "there where the baseline never did >X, a lower bound on its speedup)."),
    compute: Optional[str] = typer.Option(
        None, "--compute",
        help=f"A device ({', '.join(DEVICES.names())}: `lionsim devices`; or a device file FILE.toml: "
             "docs/clusters.md): compute from the FLOPs and kernels "
             "counted in step 1, encode/decode/update as memory passes, for a GPU-like breakdown; or measured (this "
             "machine). "
             "Default: h100 on sim (whatever device a --network profile states: that is estimate's default), "
             "measured on gloo/nccl."),
    warmup_steps: o.WarmupSteps = None,
    compute_spread: o.ComputeSpread = None,
    overlap: o.Overlap = "auto",
    bucket_mb: Optional[float] = typer.Option(
        None, "--bucket-mb", help="Overlap bucket, MB (1e6 B) of fp32 gradients, as DDP's bucket_cap_mb (default 25). "
                                  "sim, --overlap auto or buckets, and a run that exchanges per bucket only: refused "
                                  "where no exchange runs per bucket."),
    threads: int = typer.Option(1, "--threads", parser=o.whole_number, help="torch CPU threads while training (1: steadiest timings for small models)."),
    timeout: Optional[float] = typer.Option(
        None, "--timeout", help="gloo/nccl only: seconds a collective or the rendezvous may wait (default 60)."),
    iface: o.Iface = None,
    calibrate: bool = typer.Option(False, "--calibrate", help="gloo/nccl: before training, measure the collectives "
                                   "the strategies will issue on this group, fit the backend's traits and price "
                                   "comm_model_s with them (calibration.toml in --out)."),
    trace: bool = typer.Option(False, "--trace", help="Write trace.json: each step of every worker (sim: modelled) "
                               "or rank (gloo/nccl: measured) in the Chrome trace-event format; open it in Perfetto."),
    out: Out = Path("reports/bench"),
    overwrite: o.Overwrite = False,
    overwrite_sweep: o.OverwriteSweep = False,
    resume: bool = typer.Option(False, "--resume", help="Continue the interrupted run in --out from its last finished "
                                "step (the same options are checked; a different configuration is refused)."),
    format: Format = "table",
    config: o.Config = None,
    strategy_options: dict | None = None,
    plugins: list[str] | None = None,
) -> None:
    """Train a workload with N workers under one or more strategies; CSVs, plots, table."""
    resume, overwrite, overwrite_sweep, flag = _resume_or_overwrite(ctx, resume, overwrite, overwrite_sweep)
    from lionsim.config.bench import DEFAULT_STRATEGIES, BenchConfig
    from lionsim.config.planning import plan
    from lionsim.cli.interruption import watch
    from lionsim.reports.outdir import check_out_dir

    strategy_list = list(strategy or DEFAULT_STRATEGIES)
    cfg = BenchConfig(
        workload=workload, model_size=model_size, workers=workers, batch_size=batch_size,
        steps=steps, seed=seed, strategies=strategy_list,
        transport=transport, network=network, traits=traits, backend=backend, ranks=ranks, lr=lr, weight_decay=weight_decay,
        betas=parse_betas(betas), hyper=parse_hyper(hyper, strategy_list), momentum_sync=momentum_sync,
        sync_tensors=sync_tensors, tie=tie, options=dict(strategy_options or {}), plugins=list(plugins or []),
        data=data, data_split=data_split, eval_every=eval_every, eval_samples=eval_samples, baseline=baseline,
        target_loss=target_loss, compute=compute, warmup_steps=warmup_steps, compute_spread=list(compute_spread or []),
        bucket_mb=bucket_mb, overlap=overlap, threads=threads, timeout=timeout, iface=iface, calibrate=calibrate,
        trace=trace,
    )
    check_out_dir(out)  # with the checks that need no torch (BenchConfig.check_plain, first in plan)
    watch(out, resume)  # an interruption from here on says what --out holds
    _check_model_size(workload, model_size)
    bench_plan = plan(cfg)  # every check, once, before anything is written; below here only the plan
    from lionsim.group.env import check_iface, launcher_env

    launched = launcher_env()
    check_iface(iface, launched)  # as comm: lionsim's own ranks cross no interface between hosts
    if not option_given(ctx, "network"):  # a measured run's model then describes no link it crossed (reports say so)
        bench_plan = bench_plan.with_default_network()
    if not option_given(ctx, "compute") and (note := profile_device_note(bench_plan)):
        err_console.print(note, markup=False, highlight=False)  # before training: the caption names the device
    from lionsim.reports.out_lock import holding

    # one writer per --out, from its checks to its publishing: the process that publishes (torchrun's rank 0)
    with holding(out, take=launched is None or launched.rank == 0):
        _bench_into(out, bench_plan, launched, cfg.measures, format, resume=resume, overwrite=overwrite,
                    overwrite_sweep=overwrite_sweep, flag=flag)


def profile_device_note(bench_plan: BenchPlan) -> str | None:
    """The line for a bench on sim whose network's profile states a device other than the one its
    compute is modelled on (bench's default, --compute not given): estimate takes the profile's,
    bench keeps its own so that a sweep over networks compares the networks alone (docs/clusters.md,
    Devices), which a user describing a cluster once does not expect. None where they agree."""
    stated, modelled = bench_plan.network.network.device, bench_plan.compute.device
    if bench_plan.backend.name != "sim" or not stated or modelled is None or stated == modelled.name:
        return None
    return (f"lionsim: compute is modelled on {modelled.name}, bench's default: the network's profile states "
            f"{stated}, which estimate takes and bench does not; --compute {stated} models it here")


def _bench_into(out: Path, bench_plan: BenchPlan, launched, measures: bool, fmt: str, *, resume: bool,
                overwrite: bool, overwrite_sweep: bool, flag: str | None) -> None:
    """Claim --out, then train and publish there (this process holds its lock: out_lock)."""
    from lionsim.reports.outdir import claim_out, unfinished_home
    from lionsim.cli.output import put_back_said
    from lionsim.reports.publish import put_back_awaited
    from lionsim.reports.resuming import Unfinished
    from lionsim.training.threads import oversubscribed

    if launched is None or launched.rank == 0:  # the lock's holder: what a stopped publish set aside comes back
        put_back_said(out)
    else:  # the others read --out once rank 0 has, so every rank decides from the same folder
        # None: no wait; gloo and nccl, the backends torchrun launches ranks of, always carry a timeout
        put_back_awaited(out, bench_plan.backend.timeout or 0, who=f"rank {launched.rank}")
    claim_out(out, overwrite=overwrite, overwrite_sweep=overwrite_sweep, resume=resume)
    keeping = Unfinished(out, unfinished_home(out, resume), resume, flag)  # decided before anything trains
    note = oversubscribed(bench_plan.training.threads, measures)
    if note is not None and (launched is None or launched.rank == 0):  # one note, not one per rank
        err_console.print(note, markup=False, highlight=False)
    # under a launcher this process holds W / WORLD_SIZE workers (other ranks may be other machines)
    memory_guard(bench_plan, None if launched is None else max(1, bench_plan.workload.workers // launched.world_size))
    if launched is not None or bench_plan.backend.name != "sim":
        _run_distributed(bench_plan, out, launched, fmt, keeping)
        return
    from lionsim.cli.bench_run import run_here

    result, files = run_here(bench_plan, out, resume, keeping)
    _report(result, out, files, fmt)


def _resume_or_overwrite(ctx: typer.Context, resume: bool, overwrite: bool,
                         overwrite_sweep: bool) -> tuple[bool, bool, bool, str | None]:
    """(resume, overwrite, overwrite_sweep, the flag a stopped rerun's line names). Both asked for is
    refused before anything runs (which did the user mean?), unless only one was typed: a flag typed
    on the command line wins over a --config file's value, so `--resume` continues a run that the
    file's `overwrite = true` started. The flag named is the one typed: `--resume in place of
    --overwrite` where --overwrite came from the file would be that refusal; the same command with
    --resume is what works there."""
    typed = {name for name in ("resume", "overwrite", "overwrite_sweep") if option_typed(ctx, name)}
    replaces = overwrite or overwrite_sweep
    if resume and replaces:
        if "resume" in typed and not typed & {"overwrite", "overwrite_sweep"}:
            overwrite = overwrite_sweep = False
        elif "resume" not in typed and typed & {"overwrite", "overwrite_sweep"}:
            resume = False
        else:
            given = "--overwrite-sweep" if overwrite_sweep else "--overwrite"
            raise LionsimError(f"--resume continues the run in --out and {given} replaces it: pass one of them")
    flag = ("--overwrite-sweep" if overwrite_sweep and "overwrite_sweep" in typed else
            "--overwrite" if overwrite and "overwrite" in typed else None)
    return resume, overwrite, overwrite_sweep, flag


def _run_distributed(bench: BenchPlan, out: Path, launched, fmt: str, keeping) -> None:
    """gloo/nccl: as one rank of torchrun's job, or as the parent of R ranks lionsim starts; what
    does not complete is kept where `keeping` (lionsim.reports.resuming.Unfinished) says."""
    from lionsim.cli.bench_run import ReportNote, rank_interrupted
    from lionsim.cli.interruption import published
    from lionsim.launch import RankFailure, check_backend, check_layout, default_ranks, run_rank, spawn_ranks
    from lionsim.reports import load_run
    from lionsim.reports.summary import run_summary
    from lionsim.training.results import BenchResult
    from lionsim.training.stop import settle
    from lionsim.usercode import EXIT_CODE, UserCodeError

    backend, labels, resume = bench.backend, bench.labels, keeping.resumed
    report = ReportNote(out, resume and (launched is None or launched.rank == 0))  # rank 0 publishes, and says so
    if launched is not None:
        if backend.name == "sim":
            raise LionsimError(f"lionsim runs under a launcher (WORLD_SIZE={launched.world_size}) with --backend sim, "
                               "which is one process: pass --backend gloo or nccl, or run without the launcher")
        if backend.ranks not in (None, launched.world_size):
            raise LionsimError(f"--ranks {backend.ranks} but the launcher started {launched.world_size} processes (WORLD_SIZE)")
        try:
            with step_progress(console, labels, bench.steps) as progress:
                result = run_rank(bench, out, launched, progress=progress if launched.rank == 0 else None,
                                  keeping=keeping)
        except RankFailure as e:
            report.say()
            fail(f"rank {launched.rank}: {e}", code=1)
        except UserCodeError as e:  # rank 0 published what finished, marked failed with the line
            report.say()
            fail(f"rank {launched.rank}: {e}", code=EXIT_CODE)
        except KeyboardInterrupt as e:  # rank 0 published what finished (and every rank its state)
            report.say()
            fail(rank_interrupted(launched.rank, getattr(e, "checkpoint", None), keeping))
        settle()  # every run finished and rank 0 published them: a signal from here on changes nothing
        published(out)
        report.say()
        if result is not None:  # rank 0 reports; the others stay silent
            _report(result, out, fmt=fmt)
        return
    from lionsim.reports.publish import RunDir
    from lionsim.training.resume import load_resume

    ranks = backend.ranks or default_ranks(backend.name)
    check_backend(backend.name, ranks)
    check_layout(bench, ranks)
    if resume:
        load_resume(out, bench)  # every check a rank would make, before any rank starts
    probe = RunDir(out)
    probe.prepare()  # writable, before any rank starts (rank 0 stages there itself)
    probe.abandon()
    with step_progress(console, labels, bench.steps) as progress:
        outcome = spawn_ranks(bench, out, ranks, progress, keeping=keeping)
    report.say()
    if not outcome.ok:
        fail(outcome.message, code=outcome.code)
    published(out)  # rank 0 published every run
    steps, summary, meta = load_run(out)
    _report(BenchResult(steps, summary if summary is not None else run_summary(steps, meta), meta or {}), out, fmt=fmt)


def _report(result: BenchResult, out: Path, files: list[Path] | None = None, fmt: str = "table") -> None:
    """The summary table (or, --format csv|json, summary.csv's rows on stdout and the rest on stderr)."""
    from lionsim.reports import model_check, summary_table

    emit(result.summary, fmt, lambda: summary_table(result.summary, result.meta), whole=True)
    say = console if fmt == "table" else err_console  # csv/json: stdout holds the data alone
    for note in result.meta.get("notes", ()):  # the table's footer, continued: a widened container
        say.print(note, markup=False, highlight=False)
    if fmt == "table":
        check, unchecked = model_check(result.summary, result.meta)
        if check is not None:
            console.print(check)
        if unchecked:
            console.print(unchecked, markup=False, highlight=False)
    shared = result.meta.get("hosts", {}).get("shared_cores")
    if shared:
        err_console.print(f"warning: {shared}", markup=False, highlight=False)
    evaluation = result.meta.get("evaluation")
    if evaluation and result.meta.get("config", {}).get("data"):  # a real test set: say how much of it scored
        say.print(f"evaluated on {evaluation['samples']} held-out samples (--eval-samples {evaluation['requested']})",
                      markup=False, highlight=False)
    if files:
        say.print(f"wrote {len(files)} files to {out}/: " + ", ".join(p.name for p in files))
    diverged = result.diverged
    if diverged:
        fail(f"diverged: {', '.join(diverged)} (marked diverged_at_step; the other runs' results are written)", code=1)


def _check_model_size(workload: str, model_size: str) -> None:
    """--model-size picks a built-in workload's preset; a workload file builds its own model, so a
    size other than the default would be recorded and do nothing: refused. (A sweep may mix both
    kinds of workload and applies the size to its built-in ones.)"""
    from lionsim.plugin_load import is_spec

    if is_spec(workload) and model_size != "small":
        raise LionsimError(f"--model-size {model_size} does not apply to the workload {workload}: a workload file "
                           "builds its own model (--model-size is for the built-in workloads: lionsim workloads)")
