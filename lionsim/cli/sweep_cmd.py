"""`lionsim sweep`: a grid of bench runs (workload x workers x network x seed x lr x strategy), resumable,
on this machine or a Ray cluster, whole or as scheduler shards; `lionsim sweep merge ROOT`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from lionsim.cli import options as o
from lionsim.cli.app import app, console, err_console, fail
from lionsim.cli.output import Format, Out, emit
from lionsim.cli.bench_cmd import parse_betas, parse_hyper
from lionsim.cli.strategy_flags import strategy_options
from lionsim.numbers import plural

sweep_app = typer.Typer(rich_markup_mode=None, add_completion=False)
app.add_typer(sweep_app, name="sweep")


def comma_items(value) -> list:
    """A grid axis as given: `4,8,16` on the command line, an array or one value in a TOML
    --config; lionsim.sweep.grid splits and checks the items."""
    return list(value) if isinstance(value, (list, tuple)) else [value]


def axis(flag: str, what: str, *aliases: str):
    """A grid axis option (`aliases`: bench's short names, so -w and -n work in both commands)."""
    return typer.Option(flag, *aliases, parser=comma_items, metavar="LIST",
                        help=f"{what}; a comma list sweeps it (a TOML array in --config).")


@sweep_app.callback(invoke_without_command=True)
@strategy_options
def sweep(
    ctx: typer.Context,
    workload: Annotated[str, axis("--workload", "Workload(s) (`lionsim workloads`)", "-w")] = "vit",
    workers: Annotated[str, axis("--workers", "Data-parallel workers N", "-n")] = "8",
    network: Annotated[str, axis("--network", "Network preset(s) or profile file(s)")] = "1gbe",
    traits: o.Traits = None,
    seed: Annotated[str, axis("--seed", "Seed(s) for init, data, splits and quantizers")] = "0",
    strategy: o.Strategy = None,
    transport: o.Transport = None,
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", parser=o.whole_number, help="Training units run at once, each in its own "
                                       "process with --threads torch threads (default 1; with Ray, all the cluster takes)."),
    backend: str = typer.Option("sim", "--backend", help="sim only: a sweep prices every network on the "
                                                         "simulator (use `lionsim bench` for gloo/nccl)."),
    model_size: o.ModelSize = "small",
    steps: o.Steps = 100,
    batch_size: o.BatchSize = 32,
    lr: Annotated[Optional[str], axis("--lr", "Learning rate(s) for every run (default: each strategy's own; "
                                       "`default` in a list too); the table picks each run's best lr by final loss")] = None,
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
    target_loss: Optional[float] = typer.Option(None, "--target-loss", help="Training loss for time to target "
                                                "(default: per group, as bench sets it)."),
    compute: Optional[str] = typer.Option(None, "--compute", help="A device (h100, ...) or measured; default h100."),
    warmup_steps: o.WarmupSteps = None,
    compute_spread: o.ComputeSpread = None,
    overlap: o.Overlap = "auto",
    bucket_mb: Optional[float] = typer.Option(
        None, "--bucket-mb", help="Overlap bucket, MB (1e6 B) of fp32 gradients (default 25); --overlap auto or "
                                  "buckets, for the cells that exchange per bucket (refused where none does)."),
    threads: int = typer.Option(1, "--threads", parser=o.whole_number, help="torch CPU threads per training process."),
    out: Out = Path("reports/sweep"),
    format: Format = "table",
    config: o.Config = None,
    executor: str = typer.Option("local", "--executor", help="local (this machine) or ray (a Ray cluster; "
                                 "pip install -e \".[ray]\")."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", metavar="HOST:PORT", help="--executor ray: "
                                              "the cluster's head (default: RAY_ADDRESS, else a Ray started here)."),
    shard: Optional[str] = typer.Option(None, "--shard", metavar="I/N", help="Run only shard I of N (a scheduler "
                                        "array task), into OUT/parts/; `lionsim sweep merge OUT` combines them."),
    strategy_options: dict | None = None,
    plugins: list[str] | None = None,
) -> None:
    """A grid of bench runs on the simulator under one --out; rerunning the same command resumes it.

    A cell is one strategy@transport on one workload, N, network, seed and lr: ROOT/cells/ID is its
    bench run directory; ROOT/sweep_steps.csv and ROOT/sweep_summary.csv hold every finished cell.
    Cells that differ only in the network share one training. A resumed sweep may add grid values;
    any other option must match ROOT/sweep.json. Cells that raise or diverge: exit 1, the others
    written (a rerun retries the failed ones).
    """
    if ctx.invoked_subcommand is not None:  # `lionsim sweep merge ROOT`
        return
    # the plain checks first (lionsim.config.sweep_plain): a bad value is refused before torch loads
    from lionsim.config.bench import DEFAULT_STRATEGIES, BenchConfig
    from lionsim.config.sweep_plain import check_cells, check_options
    from lionsim.name_table import check_runs
    from lionsim.reports.outdir import check_out_dir
    from lionsim.sweep.grid import check_axes
    from lionsim.sweep.shards import Shard

    executor = check_options(jobs, executor, ray_address, backend)
    axes = check_axes(workload=workload, workers=workers, network=network, seed=seed, lr=lr)
    bench = BenchConfig(
        model_size=model_size, batch_size=batch_size, steps=steps, backend=backend, traits=traits, weight_decay=weight_decay,
        betas=parse_betas(betas), hyper=parse_hyper(hyper, list(strategy or DEFAULT_STRATEGIES)), momentum_sync=momentum_sync, sync_tensors=sync_tensors,
        tie=tie, data=data, data_split=data_split, eval_every=eval_every,
        eval_samples=eval_samples, baseline=baseline, target_loss=target_loss, compute=compute, warmup_steps=warmup_steps,
        bucket_mb=bucket_mb, overlap=overlap, threads=threads, compute_spread=list(compute_spread or []),
        options=dict(strategy_options or {}), plugins=list(plugins or []))
    part = None if shard is None else Shard.parse(shard)
    check_cells(axes, bench)
    check_out_dir(out)
    strategies, source = list(strategy or DEFAULT_STRATEGIES), None if strategy else "sweep's default strategies"
    check_runs(strategies, transport, source)  # a bad strategy or transport name too (lionsim.name_table)
    if executor == "local" and (jobs or 1) > 1:
        from lionsim.sweep.execute.local import start_workers

        start_workers()  # the workers' imports run beside this process's own, on another core

    from lionsim.cli.sweep_view import SweepDisplay, sweep_table
    from lionsim.config.sweep import SweepConfig, plan_sweep
    from lionsim.reports.cell_records import read_cells
    from lionsim.reports.cells_rounds import cells_rounds
    from lionsim.reports.resuming import SWEEP_RESUMES
    from lionsim.sweep import Grid, SweepInterrupted, run_sweep

    grid = Grid.parse(workload=workload, workers=workers, network=network, seed=seed,
                      strategies=strategies, transport=transport, source=source, lr=lr)
    cfg = SweepConfig(grid=grid, bench=bench, jobs=jobs, out=out, executor=executor, ray_address=ray_address,
                      shard=part)
    sweep_plan = plan_sweep(cfg)  # every check, once, every unit planned; below here only the plan
    cfg.check_memory()
    if executor == "local":  # Ray's units run where its cluster puts them: their cores are not this machine's
        from lionsim.training.threads import oversubscribed

        at_once = min(jobs or 1, max(1, len(cfg.units)))  # no more units train at once than there are
        note = oversubscribed(bench.threads, bench.measures, jobs=at_once)  # sim only: measures = --compute measured
        if note is not None:
            err_console.print(note, markup=False, highlight=False)
    root = sweep_plan.root
    from lionsim.reports.out_lock import holding

    # one writer per root (a shard's part is its own): a second sweep into it would clear this one's staging
    with holding(root):
        display = SweepDisplay(console)
        try:
            with display:
                outcome = run_sweep(sweep_plan, display)
        except SweepInterrupted as e:
            fail(f"interrupted: {e.finished} of {e.total} cells finished{under_way(e.kept, sweep_plan.steps)}, "
                 f"kept in {root}; {SWEEP_RESUMES}")
        except KeyboardInterrupt:  # before training began (setting up the root): nothing new was finished
            fail(f"interrupted before any new cell finished; the finished cells in {root} are kept: rerun to resume")
        units = len({c.unit.key for c in sweep_plan.cells})
        done = (f"none of the grid's {plural(units, 'training unit')} is dealt to this shard"
                if outcome.total == 0 else "every cell was already finished" if outcome.trained == 0
                else plural(outcome.trained, "training")
                + (f" this run; {outcome.already} cell{' was' if outcome.already == 1 else 's were'} already finished"
                   if outcome.already else "")
                # a failed unit's cells hold nothing: said here, as the error line below says why
                + (f"; {plural(len(outcome.failed), 'cell')} failed, not written" if outcome.failed else ""))
        say = console if format == "table" else err_console
        records = read_cells(root)  # every cell's run.json, read once: its runs' H for the table and the plots
        rounds = cells_rounds(root, records)
        if sweep_plan.shard is not None:  # a part: the merge draws the plots, once, over every cell
            if outcome.summary is not None:
                emit(outcome.summary, format, lambda: sweep_table(outcome.summary, root, rounds, records), whole=True)
            say.print(f"shard {sweep_plan.shard}: {outcome.total} cells ({done}) in {root}/; `lionsim sweep merge {out}` "
                      "combines the parts")
        else:
            plots = draw_plots(out, outcome.summary, rounds)  # out is root: unsharded
            if outcome.summary is not None:  # after the plots: a reader that stops early (| head) loses no file
                emit(outcome.summary, format, lambda: sweep_table(outcome.summary, root, rounds, records), whole=True)
            say.print(f"{outcome.total} cells ({done}) in {out}/: sweep.json, sweep_summary.csv, sweep_steps.csv, "
                      "cells/" + (f", {plural(len(plots), 'plot')} (PNG and SVG; `lionsim report {out}` for a Markdown report)" if plots else ""))
            if plots:
                from lionsim.reports.plots.sweep_axes import skipped_plots

                from lionsim.cli.output import print_not_drawn

                for name, why in skipped_plots(outcome.summary):
                    print_not_drawn(say, name, why)
        if outcome.failed:
            first = next(iter(outcome.failed.values()))
            fail(f"failed: {plural(len(outcome.failed), 'cell')} ({_some(list(outcome.failed))}): {first}; every error is in "
                 f"{root}/failed.json; the other cells are written, and a rerun retries these", code=1)
        diverged = [] if outcome.summary is None else list(outcome.summary.loc[outcome.summary["diverged_at_step"].notna(), "cell"])
        if diverged:
            fail(f"diverged: {plural(len(diverged), 'cell')} ({_some(diverged)}; "
                 "marked diverged_at_step; the other cells' results are written)", code=1)


def under_way(kept: dict[str, int], steps: int) -> str:
    """What an interrupted sweep kept of its units under way: their last finished steps, which the
    rerun continues from (lionsim.sweep.unit_state); "" where none kept any."""
    if not kept:
        return ""
    if len(kept) == 1:
        (key, step), = kept.items()
        return f" and {key} stopped after step {step:,} of {steps:,} (its state kept: the rerun continues it)"
    at = ", ".join(f"{step:,}" for step in kept.values())
    return f" and {len(kept)} units stopped after steps {at} of {steps:,} (their state kept: the rerun continues them)"


def _some(cells: list[str]) -> str:
    return ", ".join(cells[:3]) + (", ..." if len(cells) > 3 else "")


def draw_plots(out: Path, summary, rounds: dict[str, int]) -> list[str]:
    """Every sweep plot of `out` from its CSVs; the PNGs' names (each also drawn as SVG). `rounds`:
    its runs' H as the command read them (cells_rounds), which its table reads too."""
    if summary is None or not len(summary):
        return []
    from lionsim.reports.files import written_together
    from lionsim.reports.plots import plot_dir

    try:
        with written_together():  # the plots appear together or not at all
            return [p.name for p in plot_dir(out, rounds=rounds)[1] if p.suffix == ".png"]
    except KeyboardInterrupt:  # the cells and CSVs are complete already
        fail(f"interrupted while drawing the plots: all {len(summary)} cells are kept in {out}; "
             f"`lionsim plot {out}` draws them")
    return []


@sweep_app.command("merge")
def merge(
    out: Path = typer.Argument(..., metavar="ROOT", help="The --out that `lionsim sweep --shard I/N` runs shared."),
    format: Format = "table",
    plugin: o.Plugin = None,
) -> None:
    """Combine the shard parts under ROOT/parts into ROOT: cells, sweep.json, both CSVs and the plots.

    A cell finished twice with the same result is kept once; with different results the merge
    stops naming it, writing nothing. Missing cells are listed (exit 1); rerun their shards, or
    a plain `lionsim sweep ... --out ROOT` to train them, and merge again.
    """
    from lionsim.cli.sweep_view import report_removed_line, sweep_table
    from lionsim.config.sweep import merged_plan
    from lionsim.reports.cell_records import read_cells
    from lionsim.reports.cells_rounds import cells_rounds
    from lionsim.sweep.merge import merge_shards

    from lionsim.reports.out_lock import holding

    with holding(out, option="ROOT"):  # a sweep training into ROOT writes its cells and CSVs too
        outcome = merge_shards(merged_plan(out))
        if outcome.report_removed is not None:
            print(report_removed_line(outcome.report_removed), file=sys.stderr, flush=True)
        records = read_cells(out)  # the merged cells' run.json, read once: their H for the plots and the table
        rounds = cells_rounds(out, records)
        # the plots come with the whole grid (a partial one may lack a group's baseline, and its
        # speedup plots would show holes); `lionsim plot ROOT` draws them anyway
        plots = [] if outcome.missing else draw_plots(out, outcome.summary, rounds)
    if outcome.summary is not None:  # after the plots: a reader that stops early (| head) loses no file
        emit(outcome.summary, format, lambda: sweep_table(outcome.summary, out, rounds, records), whole=True)
    (console if format == "table" else err_console).print(_merged(out, outcome) + (f", {len(plots)} plots" if plots else ""))
    _fail_if_missing(out, outcome)


def merged_or_fail(out: Path) -> None:
    """`lionsim report ROOT` on a sharded sweep: merge its parts first, one line on stderr. The caller
    holds ROOT's lock (a sweep training into ROOT writes its cells and CSVs too)."""
    from lionsim.config.sweep import merged_plan
    from lionsim.sweep.merge import merge_shards

    outcome = merge_shards(merged_plan(out))
    err_console.print(_merged(out, outcome), markup=False, highlight=False)
    _fail_if_missing(out, outcome)


def _merged(out: Path, outcome) -> str:
    return (f"merged {plural(len(outcome.parts), 'part')} ({', '.join(outcome.parts)}): "
            f"{outcome.total - len(outcome.missing)} of {outcome.total} cells ({outcome.adopted} new) in {out}/")


def _fail_if_missing(out: Path, outcome) -> None:
    if outcome.missing:
        why = f"; {len(outcome.failed)} failed, errors in the parts' failed.json" if outcome.failed else ""
        fail(f"missing: {len(outcome.missing)} cells ({_some(outcome.missing)}){why}; rerun their shards (or "
             f"`lionsim sweep` with the same options and --out {out}), then merge again", code=1)
