"""`lionsim sweep`: a grid of bench runs (workload x workers x network x seed x strategy), resumable."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from lionsim.cli import options as o
from lionsim.cli.app import app, console, err_console, fail
from lionsim.cli.output import Format, Out, emit
from lionsim.cli.bench_cmd import parse_betas, parse_hyper


def comma_items(value) -> list:
    """A grid axis as given: `4,8,16` on the command line, an array or one value in a TOML
    --config; lionsim.sweep.grid splits and checks the items."""
    return list(value) if isinstance(value, (list, tuple)) else [value]


def axis(flag: str, what: str, *aliases: str):
    """A grid axis option (`aliases`: bench's short names, so -w and -n work in both commands)."""
    return typer.Option(flag, *aliases, parser=comma_items, metavar="LIST",
                        help=f"{what}; a comma list sweeps it (a TOML array in --config).")


@app.command()
def sweep(
    workload: Annotated[str, axis("--workload", "Workload(s) (`lionsim workloads`)", "-w")] = "vit",
    workers: Annotated[str, axis("--workers", "Data-parallel workers N", "-n")] = "8",
    network: Annotated[str, axis("--network", "Network preset(s) or profile file(s)")] = "1gbe",
    seed: Annotated[str, axis("--seed", "Seed(s) for init, data, splits and quantizers")] = "0",
    strategy: o.Strategy = None,
    transport: o.Transport = None,
    jobs: int = typer.Option(1, "--jobs", "-j", help="Training units run at once, each in its own process with "
                                                     "--threads torch threads."),
    backend: str = typer.Option("sim", "--backend", help="sim only: a sweep prices every network on the "
                                                         "simulator (use `lionsim bench` for gloo/nccl)."),
    model_size: o.ModelSize = "small",
    steps: o.Steps = 100,
    batch_size: o.BatchSize = 32,
    lr: o.Lr = None,
    weight_decay: o.WeightDecay = None,
    betas: o.Betas = None,
    hyper: o.Hyper = None,
    momentum_sync: o.MomentumSync = "never",
    sync_tensors: o.SyncTensors = "all",
    freeze_steps: o.FreezeSteps = 15,
    qsgd_levels: o.QsgdLevels = 7,
    topk_ratio: o.TopkRatio = 0.01,
    tie: o.Tie = "zero",
    dgc_warmup_steps: o.DgcWarmupSteps = 0,
    data: o.Data = None,
    data_split: o.DataSplit = "iid",
    eval_every: o.EvalEvery = 25,
    eval_samples: o.EvalSamples = None,
    baseline: o.Baseline = None,
    target_loss: Optional[float] = typer.Option(None, "--target-loss", help="Training loss for time to target "
                                                "(default: per group, as bench sets it)."),
    compute: Optional[str] = typer.Option(None, "--compute", help="A device (h100, ...) or measured; default h100."),
    warmup_steps: o.WarmupSteps = None,
    bucket_mb: float = typer.Option(25.0, "--bucket-mb", help="Overlap bucket, MB (1e6 B) of fp32 gradients."),
    threads: int = typer.Option(1, "--threads", help="torch CPU threads per training process."),
    out: Out = Path("reports/sweep"),
    format: Format = "table",
    config: o.Config = None,
) -> None:
    """A grid of bench runs on the simulator under one --out; rerunning the same command resumes it.

    A cell is one strategy@transport on one workload, N, network and seed: ROOT/cells/ID is its
    bench run directory; ROOT/sweep_steps.csv and ROOT/sweep_summary.csv hold every finished cell.
    Cells that differ only in the network share one training. A resumed sweep may add grid values;
    any other option must match ROOT/sweep.json.
    """
    from lionsim.bench import DEFAULT_STRATEGIES, BenchConfig
    from lionsim.cli.sweep_view import SweepDisplay, sweep_table
    from lionsim.reports.files import check_out_dir

    from lionsim.sweep import Grid, SweepConfig, SweepInterrupted, run_sweep

    grid = Grid.parse(workload=workload, workers=workers, network=network, seed=seed,
                      strategies=list(strategy or DEFAULT_STRATEGIES), transport=transport)
    bench = BenchConfig(
        model_size=model_size, batch_size=batch_size, steps=steps, backend=backend, lr=lr, weight_decay=weight_decay,
        betas=parse_betas(betas), hyper=parse_hyper(hyper), momentum_sync=momentum_sync, sync_tensors=sync_tensors,
        freeze_steps=freeze_steps, qsgd_levels=qsgd_levels, topk_ratio=topk_ratio, tie=tie,
        dgc_warmup_steps=dgc_warmup_steps, data=data, data_split=data_split, eval_every=eval_every,
        eval_samples=eval_samples, baseline=baseline, target_loss=target_loss, compute=compute, warmup_steps=warmup_steps,
        bucket_mb=bucket_mb, threads=threads)
    cfg = SweepConfig(grid=grid, bench=bench, jobs=jobs, out=out)
    cfg.validate()
    check_out_dir(out)
    cfg.check_memory()
    display = SweepDisplay(console)
    try:
        with display:
            outcome = run_sweep(cfg, display)
    except SweepInterrupted as e:
        fail(f"interrupted: {e.finished} of {e.total} cells finished, kept in {out}; rerun the same command to resume")
    except KeyboardInterrupt:  # before training began (setting up the root): nothing new was finished
        fail(f"interrupted before any new cell finished; the finished cells in {out} are kept: rerun to resume")
    done = ("every cell was already finished" if outcome.trained == 0
            else f"{outcome.trained} training{'' if outcome.trained == 1 else 's'}"
            + (f" this run; {outcome.already} cell{' was' if outcome.already == 1 else 's were'} already finished"
               if outcome.already else ""))
    plots = []
    if outcome.summary is not None and len(outcome.summary):
        from lionsim.reports.files import written_together
        from lionsim.reports.plots import plot_dir

        try:
            with written_together():  # the plots appear together or not at all
                plots = [p.name for p in plot_dir(out)[1] if p.suffix == ".png"]  # each also as .svg
        except KeyboardInterrupt:  # the cells and CSVs are complete already
            fail(f"interrupted while drawing the plots: all {outcome.total} cells are kept in {out}; "
                 f"`lionsim plot {out}` draws them")
    if outcome.summary is not None:  # after the plots: a reader that stops early (| head) loses no file
        emit(outcome.summary, format, lambda: sweep_table(outcome.summary), whole=True)
    say = console if format == "table" else err_console
    say.print(f"{outcome.total} cells ({done}) in {out}/: sweep_summary.csv, sweep_steps.csv, cells/"
              + (f", {len(plots)} plots (PNG and SVG; `lionsim report {out}` for a Markdown report)" if plots else ""))
    if plots:
        from lionsim.reports.plots.sweep_axes import skipped_plots

        for name, why in skipped_plots(outcome.summary):
            say.print(f"not drawn: {name} ({why})", markup=False, highlight=False)
    diverged = [] if outcome.summary is None else list(outcome.summary.loc[outcome.summary["diverged_at_step"].notna(), "cell"])
    if diverged:
        fail(f"diverged: {len(diverged)} cells ({', '.join(diverged[:3])}{', ...' if len(diverged) > 3 else ''}; "
             "marked diverged_at_step; the other cells' results are written)", code=1)
