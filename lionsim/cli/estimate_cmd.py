"""`lionsim estimate`: per-step time breakdown for a model size on N workers, no training."""

from __future__ import annotations

import math
import os
import sys
import textwrap
from pathlib import Path
from typing import Annotated, Optional

import typer

from lionsim.cli import options as o
from lionsim.errors import LionsimError
from lionsim.cli.app import app, console, err_console, out_console
from lionsim.cli.strategy_flags import strategy_options
from lionsim.compute.devices import device_choices  # no torch: the presets' names, for --help
from lionsim.compute.device_file import is_device_file
from lionsim.compute.models import MODELS, model_choices  # no torch: the presets' names, for --help
from lionsim.estimate.defaults import ACCEPTED, DEFAULT_STRATEGIES, hidden_in_help
from lionsim.estimate.plain import count_range  # no torch: the counts' ranges, for their refusals
from lionsim.network.cost import AUTO
from lionsim.whole import read_count
from lionsim.cli.output import Format, emit, natural_width, parse_out

Model = Annotated[Optional[str], typer.Option(
    "--model", "-m", help=f"Model preset: {model_choices()} (resnet50-tf: ResNet-50 with TensorFlow's "
                          "weight layout, the factors PowerSGD sends from TF code); or your own: FILE.py:FUNC or "
                          "module:FUNC returning an nn.Module or (module, example_input), built on the meta device, "
                          "its FLOPs counted.")]
Params = Annotated[Optional[int], typer.Option(
    "--params", parser=o.whole_in(count_range("params"), read_count),
    help="Parameters instead of a preset, e.g. 3e9, 350M or 1.5B (K, M, B, T: 1e3 to 1e12, any case; "
         "needs --tokens-per-worker).")]
Tensors = Annotated[Optional[int], typer.Option(
    "--tensors", parser=o.whole_in(count_range("tensors")),
    help="Parameter tensors: per-tensor scales, and the compute's launch floor (3 kernels a tensor); default: "
         "the model's, 1 with --params.")]
TokensPerWorker = Annotated[Optional[int], typer.Option(
    "--tokens-per-worker", parser=o.whole_in(count_range("tokens-per-worker"), read_count),
    help="Tokens (or patches) per worker per step (e.g. 8192; K and M as --params: 8K is 8,000); default: one sample of the model. For "
         "resnet* and a --model FILE.py:FUNC with an example input: samples (images), "
         "default the example's batch.")]
GpusPerNode = Annotated[Optional[int], typer.Option(
    "--gpus-per-node", parser=o.whole_in(count_range("gpus-per-node")),
    help="Workers per node, overriding the network's (intra link: the network's, else the device's NVLink).")]
ReplicaGpus = Annotated[int, typer.Option(
    "--replica-gpus", parser=o.whole_in(count_range("replica-gpus")),
    help="Devices each worker is made of (default 1): a replica sharded over G devices (FSDP, "
         "ZeRO-3; a DiLoCo worker is a datacenter). --tokens-per-worker are the replica's; its "
         "FLOPs, codec and optimizer passes split over the G devices; traffic inside the replica "
         "is not priced.")]
RunSteps = Annotated[Optional[int], typer.Option(
    "--steps", parser=o.whole_number, help="Also price a whole run of N steps with every phase it has (warm-ups, momentum syncs, local "
                    "steps): run_s and mean_step_s beside the steady step. With --from-run: also the baseline's "
                    "steps to target at scale.")]
RunTokens = Annotated[Optional[int], typer.Option(
    "--tokens", parser=o.whole_in("a whole number of at least 1", read_count),
    help="Also price a whole run over T tokens in all (e.g. 2.6e10, 26B; K, M, B, T as --params): "
         "ceil(T / (tokens per worker x workers)) steps (instead of --steps).")]
MomentumSync = Annotated[Optional[str], typer.Option(
    "--momentum-sync", help="Lion family: never | every:K | schedule:K, an fp32 all-reduce of the momenta on "
                            "those steps: every:K in the step as one sync over K steps (as a local-step "
                            "exchange over H); schedule:K, whose gaps grow, only in a whole run (--steps).")]
Device = Annotated[Optional[str], typer.Option("--device", show_default=False, help=(
    f"Accelerator: {device_choices()} "
    "(each datasheet's figures and source: lionsim devices), or a device file FILE.toml of your GPU's "
    "datasheet figures (docs/clusters.md, A device of your own). Default: the network's (a profile's `device` "
    "key; the dgx-*, a100x8-* and h100x8-* presets state theirs), else h100. bench's --compute does not "
    "follow a profile's device."))]
Mfu = Annotated[Optional[float], typer.Option(
    "--mfu", help="Model FLOPs utilisation, 0.001 to 1; default: the device's (0.4).")]
BucketMb = Annotated[Optional[float], typer.Option(
    "--bucket-mb", help="Overlap bucket, MB (1e6 B) of fp32 gradients, as DDP's bucket_cap_mb (default 25, DDP's); "
                        "for runs exchanged per bucket (--overlap buckets, or auto where a run's reference does); "
                        "refused where no run is (it would change nothing).")]
Overlap = Annotated[str, typer.Option(
    "--overlap", help=o.OVERLAP_HELP)]
Algorithm = Annotated[str, typer.Option(
    "--algorithm", help="Collective algorithm: auto (cheapest; NCCL's choice under NCCL) or a name from "
                        "`lionsim comm --help`, for the ops it implements (others: cheapest). Under NCCL: ring, tree, "
                        "pairwise or param_server; under gloo: ring, pairwise or param_server; the textbook ones "
                        "(rabenseifner ...) need --traits ideal or mpi.")]
KernelsOpt = Annotated[str, typer.Option(
    "--kernels", help="How encode/decode/update are priced: table (the codec kernel table's rows for --device), "
                      "table:DEVICE (another device's rows, e.g. table:cpu: codecs staged through the host; "
                      "table:v100-tf1.15: TensorFlow 1.15's top-k on a V100), "
                      "or ideal (one fused memory pass each).")]
OptimizerOpt = Annotated[str, typer.Option(
    "--optimizer", help="How the optimizer steps run (with --kernels table): fused (one kernel: FusedAdam, "
                        "torch fused=True; what large-model trainers run), foreach (torch's multi-tensor ops) or "
                        "eager (torch's for-loop, every op per tensor).")]
SweepOpt = Annotated[Optional[str], typer.Option(
    "--sweep", help=f"{ACCEPTED}: crossover table and, with --out, sweep.csv, crossover.csv, sweep.png and sweep.svg. "
                    "bandwidth: GB/s a node the inter link moves, after the network's efficiency (the link's own "
                    "rate is that / efficiency).")]
NeedOpt = Annotated[Optional[str], typer.Option(
    "--need", metavar="utilisation=U",
    help="For each strategy, the inter-node bandwidth (GB/s per node, solved) at which compute (the worker's own "
         "work: all but waiting for the network) is U of the step, U in (0, 1), e.g. utilisation=0.95 (or "
         "utilization=): a table, and bandwidth_needed_GBps in estimate.csv.")]
FromRun = Annotated[Optional[Path], typer.Option(
    "--from-run", metavar="DIR",
    help="A finished `lionsim bench` --out or `lionsim sweep` root: each strategy's run to target at scale, from "
         "its steps to target there relative to its baseline (fitted against log N over a sweep's worker counts), "
         "priced with every phase; --steps/--tokens then give the baseline's steps to target at scale (default: "
         "the run's own); without -s it prices the runs DIR trained, its baseline first. Columns steps_to_target, "
         "time_to_target_s, to_target_speedup.")]
EstimateOut = Annotated[Optional[Path], typer.Option(
    "--out", "-o", parser=parse_out, metavar="DIR", help="Write DIR/estimate.csv, estimate.json (the command, for `lionsim report`), the sweep files and with --from-run to_target.png.")]
EstimateStrategy = Annotated[Optional[list[str]], typer.Option(
    "--strategy", "-s",
    help="NAME or NAME@TRANSPORT; repeatable, or comma-separated (see `lionsim strategies`). Default: "
         + ", ".join(DEFAULT_STRATEGIES) + " (adamw and lion both over bf16 all-reduce: like with like); "
         "with --from-run DIR: the runs DIR trained, its baseline first.")]


@app.command("estimate")
@strategy_options(hide=hidden_in_help)
def estimate_cmd(
    strategy: EstimateStrategy = None,
    transport: o.Transport = None,
    model: Model = None,
    params: Params = None,
    tensors: Tensors = None,
    tokens_per_worker: TokensPerWorker = None,
    workers: o.Workers = 8,
    gpus_per_node: GpusPerNode = None,
    replica_gpus: ReplicaGpus = 1,
    network: o.Network = "10gbe",
    traits: o.Traits = None,
    device: Device = None,
    mfu: Mfu = None,
    bucket_mb: BucketMb = None,
    overlap: Overlap = "auto",
    algorithm: Algorithm = AUTO,
    tie: o.EstimateTie = "zero",
    momentum_sync: MomentumSync = None,
    steps: RunSteps = None,
    tokens: RunTokens = None,
    baseline: o.Baseline = None,
    compute_spread: o.ComputeSpread = None,
    seed: Annotated[Optional[int], typer.Option("--seed", parser=o.whole_number, help=(
        "Seed of the Monte Carlo of two or more --compute-spread specs (default 0; one spec's distribution is "
        "exact)."))] = None,
    kernels: KernelsOpt = "table",
    optimizer: OptimizerOpt = "fused",
    sweep: SweepOpt = None,
    need: NeedOpt = None,
    from_run: FromRun = None,
    target_loss: Annotated[Optional[float], typer.Option(
        "--target-loss", help="With --from-run: the loss (> 0) its runs' steps to target are measured to again, "
        "from the loss curves DIR holds (no training); default: the target DIR was summarised with.")] = None,
    out: EstimateOut = None,
    trace: Annotated[bool, typer.Option("--trace", help="With --out: write DIR/trace.json, each strategy's modelled "
                                        "step in the Chrome trace-event format (open it in Perfetto).")] = False,
    overwrite: o.Overwrite = False,
    overwrite_sweep: o.OverwriteSweep = False,
    format: Format = "table",
    config: o.Config = None,
    strategy_options: dict | None = None,
    plugins: list[str] | None = None,
) -> None:
    """No training: per-step time breakdown (compute, encode, comm, exposed comm, decode, update) per strategy.

    Strategy options that change only training (learning rates, momenta: `lionsim bench --help`) are not
    listed here, and refused: estimate prices a step's time and bytes."""
    from types import SimpleNamespace

    from lionsim.cli.interruption import published, watch
    from lionsim.estimate.plain import check_from_run, check_one_model, check_plain, load_plain_network, parse_need

    fields = dict(
        model=model, params=params, tensors=tensors, tokens_per_worker=tokens_per_worker, workers=workers,
        gpus_per_node=gpus_per_node, replica_gpus=replica_gpus, network=network, traits=traits, device=device, mfu=mfu, overlap=overlap,
        bucket_mb=bucket_mb, algorithm=algorithm, baseline=baseline, tie=tie,
        compute_spread=list(compute_spread or []), seed=seed, options=dict(strategy_options or {}),
        momentum_sync=momentum_sync, steps=steps, tokens=tokens, kernels=kernels, optimizer=optimizer,
        from_run=None if from_run is None else str(from_run),
        target_loss=target_loss,
        **({"strategies": list(strategy)} if strategy else {}), transport=transport,
    )
    plain = SimpleNamespace(**fields)
    check_plain(plain, sweep)  # a bad number, form, network or --need is refused before torch loads
    network_given = load_plain_network(plain)  # (resolve loads it again, to price on)
    check_one_model(plain)  # then --from-run's folder: both as resolve refuses them, before torch loads
    if from_run is not None:
        check_from_run(from_run)
    wanted = parse_need(need) if need is not None else None
    if trace and out is None:
        raise LionsimError("--trace writes DIR/trace.json: give --out DIR with it")
    for given, flag in ((overwrite, "--overwrite"), (overwrite_sweep, "--overwrite-sweep")):
        if given and out is None:
            raise LionsimError(f"{flag} lets --out DIR replace another run's files: give --out DIR with it")
    watch(out)  # an interruption before the files are published says what --out holds
    if wanted is not None and sweep is not None:
        raise LionsimError("--need solves for the inter-node bandwidth itself: give --need or --sweep, not both")
    # a bad strategy or transport name (lionsim.name_table), told before resolve's checks of the model and
    # its token count, which need torch; DIR's runs (--from-run) name their own
    if from_run is None:
        from lionsim.estimate.defaults import DEFAULT_STRATEGIES
        from lionsim.name_table import check_runs

        source = None if strategy else "estimate's default strategies"
        check_runs(list(strategy or DEFAULT_STRATEGIES), transport, source)

    from lionsim.estimate import EstimateConfig, estimate, resolve
    from lionsim.estimate.config import check_one_worker_buckets
    from lionsim.estimate.need import with_need
    from lionsim.estimate.sweep import run_sweep
    from lionsim.cli.to_target_view import to_target_table
    # the views and their notes load here, not at start-up: only estimate prints them
    from lionsim.cli.estimate_notes import (footnotes, library_hint, memory_note, point_lines, short_bench_note,
                                            unmeasured_note)
    from lionsim.cli.estimate_view import breakdown_table, crossover_table, need_table, run_table, spread_table

    cfg = EstimateConfig(**fields)
    plan = resolve(cfg)  # once: the table, --need, --sweep, --trace and --from-run's line all read it
    frame = estimate(cfg, plan)
    if wanted is not None:
        frame = with_need(frame, plan, wanted)
    swept = run_sweep(cfg, sweep, plan) if sweep is not None else None  # every input checked before anything is written
    check_one_worker_buckets(cfg.bucket_mb, cfg.workers, swept is not None and swept.sweep.variable == "workers")
    if swept is not None and swept.sweep.note:
        err_console.print(swept.sweep.note, markup=False, highlight=False)
    traced = None
    if trace:
        from lionsim.estimate.trace import estimate_trace

        traced = estimate_trace(cfg, plan)
    taken = {**fields, "device": frame["device"].iloc[0]}  # --device, else the network's, else h100
    if device is not None and is_device_file(device):
        taken["device"] = str(Path(device).resolve())  # the file, as a plug-in's path is recorded
    if fields.get("model") in MODELS:  # a preset in its listed name, an alias (gpt2-medium) as its preset's
        taken["model"] = frame["model"].iloc[0]
    swept_notes = [*swept.algorithm_notes, *point_lines(frame, swept)] if swept is not None else []
    record = _record(taken, sweep, need, trace, footnotes(frame, swept_notes), frame.attrs.get("baseline_line", ""),
                     network_given.to_dict(), frame.attrs.get("tokens_line", ""))
    written = _write(out, frame, swept, overwrite, overwrite_sweep, traced, record) if out is not None else []
    published(out)  # an interruption from here on (the tables print) says the files are there
    # the files exist before anything is printed: a reader that stops early (| head) loses no file
    if plan.convergence is not None and cfg.strategies is None:
        from lionsim.estimate.config import from_run_line

        err_console.print(from_run_line(plan.convergence.measured), markup=False, highlight=False)
    tables = [breakdown_table(frame), *([spread_table(frame)] if cfg.compute_spread else []),
              *([run_table(frame)] if cfg.steps is not None or cfg.tokens is not None else []),
              *([need_table(frame)] if wanted is not None else []),
              *([to_target_table(frame)] if from_run is not None else []),
              *([crossover_table(swept.crossings, swept.sweep, swept.rows, workers=workers)]
                if swept is not None else []),
              *([crossover_table(swept.to_target, swept.sweep, swept.rows, "time to target", workers)]
                if swept is not None and swept.to_target is not None else [])]
    if format != "table":  # csv/json: the sweep's rows with --sweep, else the breakdown, alone on stdout
        emit(swept.rows if swept is not None else frame, format)
        # a script reading the CSV is told what the caption says of how rows were priced (its local_steps
        # and library columns hold the values; these say what they imply)
        for note in (short_bench_note(frame), *frame.attrs.get("built_notes", ()), library_hint(frame),
                     memory_note(frame), unmeasured_note(frame), frame.attrs.get("slower_line", ""),
                     frame.attrs.get("tokens_line", ""), *frame.attrs.get("unacted_notes", ())):
            if note:
                err_console.print(f"note: {note}", markup=False, highlight=False)
    else:
        for table in tables:  # 80 columns off a terminal (wider only where the numbers alone are)
            out_console(natural_width(table)).print(table)
    for line in swept_notes:  # where the priced algorithm changed; what an estimate at a swept point notes
        to = console if format == "table" else err_console
        text = ("" if format == "table" else "note: ") + line
        indent = " " * (len(text) - len(text.lstrip()) + 2)  # a run's line: its wrapped part under its text
        to.print(textwrap.fill(text, max(to.width, 40), subsequent_indent=indent, break_long_words=False,
                               break_on_hyphens=False), markup=False, highlight=False, soft_wrap=True)
    if written:
        (console if format == "table" else err_console).print(
            f"wrote {', '.join(p.name for p in written)} to {out}/", markup=False, highlight=False)
    if from_run is not None and steps is None and tokens is None:  # the run's own steps: say how to set them
        from lionsim.estimate.to_target import CLAMP_HINT

        hint = CLAMP_HINT if _baseline_clamped(swept.rows if swept is not None else frame) else _own_steps_hint(frame)
        if hint:
            err_console.print(hint, markup=False, highlight=False)
    if from_run is not None:
        from lionsim.estimate.to_target import unreached_hint

        if hint := unreached_hint(swept.rows if swept is not None else frame):
            err_console.print(hint, markup=False, highlight=False)


def _own_steps_hint(frame) -> str:
    """OWN_STEPS_HINT with the baseline's steps at scale, "" where the run's model is known to be near the
    priced size (within FAR_SMALLER: its own steps may stand) or the baseline has no figure."""
    from lionsim.estimate.to_target import FAR_SMALLER, OWN_STEPS_HINT
    from lionsim.numbers import plural

    if "to_target_params" not in frame.columns:
        return ""
    first = frame.iloc[0]
    base = frame[frame["strategy"] + "@" + frame["transport"] == first["baseline"]]
    proxy = first["to_target_params"]
    steps = base["steps_to_target"].iloc[0] if len(base) else math.nan
    if (isinstance(proxy, (int, float)) and proxy > 0 and float(first["params"]) < FAR_SMALLER * proxy) or not (
            steps == steps):
        return ""
    return OWN_STEPS_HINT.format(steps=plural(f"{steps:,.0f}", "step"))


def _baseline_clamped(frame) -> bool:
    """Whether a row's baseline steps at scale came from its run's fit held at the nearest measured N
    (lionsim.estimate.to_target: --steps / --tokens would set them)."""
    from lionsim.estimate.to_target import CLAMPED

    if "to_target_note" not in frame.columns:
        return False
    return any(isinstance(n, str) and f"{CLAMPED} (the baseline's steps" in n for n in frame["to_target_note"])


RECORD_FILE = "estimate.json"
"""What made an estimate's --out: the command line (`lionsim report` prints it to reproduce the
files), the options it resolved to, lionsim's version."""


def _record(fields: dict, sweep: str | None, need: str | None, trace: bool, notes: list[str] = (),
            baseline_note: str = "", network: dict | None = None, tokens_line: str = "") -> dict:
    """estimate.json's content: the command as typed and the folder it ran in, every option as the
    estimate took it (each path absolute, as run.json records them: lionsim.option_paths), the
    network in its profile form (`network`: what a profile file held, for the report), the notes
    its table's caption printed (footnotes), which of them says whose the baseline is
    (`baseline_note`, where --from-run took DIR's: the report puts it beside the speedups), and
    `tokens_per_worker_defaulted`: the line saying a run's length or time to target rests on
    estimate's default tokens a worker (absent where --tokens-per-worker was given or no run rests on it)."""
    import lionsim
    from lionsim.cli.app import invoked
    from lionsim.option_paths import absolute, placed

    options = placed({**fields, "sweep": sweep, "need": need, "trace": trace}, absolute, "estimate")[0]
    return {"command": "estimate", "argv": invoked(), "cwd": os.getcwd(), "options": options, "notes": list(notes),
            **({"baseline_note": baseline_note} if baseline_note else {}),
            **({"tokens_per_worker_defaulted": tokens_line} if tokens_line else {}),
            **({"network": network} if network else {}),
            "versions": {"lionsim": lionsim.__version__, "python": sys.version.split()[0]}}


def _write(out: Path, frame, swept, overwrite: bool, overwrite_sweep: bool, trace: str | None = None,
           record: dict | None = None) -> list[Path]:
    """estimate.csv, estimate.json (the command: `record`), trace.json and the sweep's files, staged beside
    --out and published together (an --out holding another run is refused unless --overwrite:
    lionsim.reports.outdir)."""
    from lionsim.cli.output import put_back_said
    from lionsim.reports.outdir import check_out_dir
    from lionsim.reports.out_lock import holding
    from lionsim.reports.outdir import claim_out
    from lionsim.reports.publish import RunDir

    check_out_dir(out)
    with holding(out):  # one writer per --out: a bench's or another estimate's staging is not cleared under it
        put_back_said(out)  # what a stopped publish set aside
        claim_out(out, overwrite=overwrite, overwrite_sweep=overwrite_sweep)
        return _publish(RunDir(out), out, frame, swept, trace, record)


def _publish(target, out: Path, frame, swept, trace: str | None, record: dict | None) -> list[Path]:
    """_write's files staged in `target` (a RunDir of --out) and published together."""
    import json

    from lionsim.reports.files import write_atomic
    from lionsim.reports.formats import write_csv
    from lionsim.reports.to_target import has_to_target

    target.prepare()

    def write(stage: Path) -> list[Path]:
        paths = [write_atomic(stage / "estimate.csv", lambda f: write_csv(f, frame))]
        if record is not None:
            paths.append(write_atomic(stage / RECORD_FILE,
                                      lambda f: f.write(json.dumps(record, indent=2, default=str) + "\n")))
        if trace is not None:
            paths.append(write_atomic(stage / "trace.json", lambda f: f.write(trace)))
        if swept is None and has_to_target(frame):  # --from-run: the plot `lionsim plot DIR` draws of it
            from lionsim.reports.plots.to_target import plot_to_target

            paths += plot_to_target(frame, stage / "to_target.png")
        if swept is not None:
            spec, rows, crossings = swept
            # matplotlib: only when plots are asked for
            from lionsim.reports.plots.estimate import hierarchical, plot_estimate_sweep, plot_hierarchy

            paths.append(write_atomic(stage / "sweep.csv", lambda f: write_csv(f, rows)))
            paths.append(write_atomic(stage / "crossover.csv", lambda f: write_csv(f, crossings)))
            given = (record or {}).get("options", {}).get("workers")  # --workers: said where the sweep replaced it
            paths += plot_estimate_sweep(rows, crossings, spec.variable, stage / "sweep.png", given)
            if spec.variable == "workers" and hierarchical(rows):
                paths += plot_hierarchy(rows, stage / "hierarchy.png", given)
            if swept.to_target is not None:  # --from-run: the time to target against the swept variable
                from lionsim.reports.plots.to_target import TO_TARGET_CROSSOVER, plot_to_target_sweep

                paths.append(write_atomic(stage / TO_TARGET_CROSSOVER,
                                          lambda f: write_csv(f, swept.to_target)))
                paths += plot_to_target_sweep(rows, swept.to_target, spec.variable, stage / "to_target.png", given)
        return paths

    try:
        staged = target.write(write)
        target.publish()
        return [out / p.name for p in staged]  # in the order written: estimate.csv first
    except KeyboardInterrupt:
        target.abandon()
        raise
