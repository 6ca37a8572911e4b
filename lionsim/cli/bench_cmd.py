"""`lionsim bench`: train a workload with N workers under several strategies."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from lionsim.bench import DEFAULT_STRATEGIES, BenchConfig, run_bench
from lionsim.cli import options as o
from lionsim.cli.app import app, console
from lionsim.errors import LionsimError
from lionsim.reports import plot_run, summary_table, write_run
from lionsim.reports.files import check_out_dir


def parse_betas(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        b1, b2 = (float(x) for x in text.split(","))
    except ValueError:
        raise LionsimError(f"bad --betas {text!r}; accepted: two numbers like 0.9,0.99") from None
    if not (0 <= b1 < 1 and 0 <= b2 < 1):
        raise LionsimError(f"bad --betas {text!r}; accepted: each in [0, 1)")
    return b1, b2


@app.command()
def bench(
    workers: o.Workers = 8,
    strategy: o.Strategy = None,
    transport: o.Transport = None,
    network: o.Network = "10gbe",
    backend: o.Backend = "sim",
    workload: o.Workload = "vit",
    model_size: o.ModelSize = "small",
    steps: o.Steps = 100,
    seed: o.Seed = 0,
    batch_size: o.BatchSize = 32,
    lr: o.Lr = None,
    weight_decay: o.WeightDecay = None,
    betas: o.Betas = None,
    momentum_sync: o.MomentumSync = "never",
    topk_ratio: o.TopkRatio = 0.01,
    data: o.Data = None,
    data_split: o.DataSplit = "iid",
    eval_every: int = typer.Option(25, "--eval-every", help="Evaluate every this many steps."),
    baseline: o.Baseline = None,
    compute: str = typer.Option(
        "measured", "--compute",
        help="measured (this machine), or a device (a100, a100-80gb, h100, h200): FLOPs counted in step 1 at its "
             "mfu, encode/decode/update as memory passes, for a GPU-like breakdown."),
    bucket_mb: float = typer.Option(
        25.0, "--bucket-mb", help="Overlap bucket, MB (1e6 B) of fp32 gradients, as DDP's bucket_cap_mb."),
    threads: int = typer.Option(1, "--threads", help="torch CPU threads while training (1: steadiest timings for small models)."),
    out: o.Out = Path("reports/bench"),
    config: o.Config = None,
) -> None:
    """Train a workload with N workers under one or more strategies; CSVs, plots, table."""
    cfg = BenchConfig(
        workload=workload, model_size=model_size, workers=workers, batch_size=batch_size,
        steps=steps, seed=seed, strategies=list(strategy or DEFAULT_STRATEGIES),
        transport=transport, network=network, backend=backend, lr=lr, weight_decay=weight_decay,
        betas=parse_betas(betas), momentum_sync=momentum_sync, topk_ratio=topk_ratio, data=data,
        data_split=data_split, eval_every=eval_every, baseline=baseline, compute=compute, bucket_mb=bucket_mb, threads=threads,
    )
    runs = cfg.validate()
    check_out_dir(out)
    with Progress(TextColumn("{task.description:<34}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("loss {task.fields[loss]:.4f}"), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        tasks = {run: bar.add_task(run.label, total=cfg.steps, loss=float("nan")) for run in runs}
        result = run_bench(cfg, lambda run, step, loss: bar.update(tasks[run], completed=step, loss=loss))
    result.meta["config"]["out"] = str(out)
    files = write_run(out, result.steps, result.summary, result.meta)
    files += plot_run(out, result.steps, result.summary)
    console.print(summary_table(result.summary))
    console.print(f"wrote {len(files)} files to {out}/: " + ", ".join(p.name for p in files))
