"""`lionsim --version` and the registry listings."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

import typer

import lionsim
from lionsim.cli import options as o
from lionsim.cli.app import app, console
from lionsim.cli.output import Format, emit
from lionsim.config.defaults import DEFAULT_WORKLOAD
from lionsim.numbers import plural
from lionsim.ranges import WORKERS, refusal
from lionsim.whole import MAX_WORKERS

if TYPE_CHECKING:  # annotations only: pandas loads when a frame is built
    import pandas as pd


def list_table(title: str, caption: str | None = None):
    """The listings' one table style (strategies, workloads, devices, networks and their traits):
    a rule under the header, no box and no outer edge, a space between columns."""
    from rich import box
    from rich.table import Table

    return Table(title=title, caption=caption, caption_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0),
                 pad_edge=False, show_edge=False)


def _version(value: bool) -> None:
    if value:
        console.print(f"lionsim {lionsim.__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Benchmark and simulator for sign-compressed distributed Lion over modelled networks."""


def _model_layout(workload: str | None):
    """The parameter layout of `workload`'s small model (the default bench's, vit, when None)."""
    from lionsim.strategies import ParamLayout
    from lionsim.workloads import WorkloadConfig, workload_class

    name = workload or "vit"
    model = workload_class(name).probe(WorkloadConfig(name=name, workers=1, batch_size=1, size="small"))[0]
    return ParamLayout.of([(n, p.detach()) for n, p in model.named_parameters() if p.requires_grad])


def steady_bits(strategy, transport, workers: int) -> tuple[float, float, tuple[str, ...]]:
    """(up, down, own): the mean bits per parameter a step of `strategy` (built for `workers`
    workers) sends and receives over `transport`, as bench books them (step_bits), over one whole
    period of its sends past any warm-up (a local-step method's sync every H steps, Streaming
    DiLoCo's P fragments in H steps); `own`: the labels of the collectives it issues itself."""
    import math
    from fractions import Fraction

    from lionsim.errors import LionsimError
    from lionsim.transports import spec_problem
    from lionsim.transports.base import step_bits

    period = math.lcm(Fraction(strategy.send_rate).denominator, strategy.sync_every)
    start = period * 10**6  # past every warm-up (DGC's, PowerSGD's, 1-bit Adam's are steps, not fractions)
    steady = strategy.payload_spec()
    if problem := spec_problem(steady):  # an installed plug-in's (a --plugin file's is refused as it loads)
        raise LionsimError(f"strategy {strategy.name!r}: what it sends is {problem}")
    up = down = 0.0
    own: set[str] = set()
    for step in range(start + 1, start + period + 1):
        calls = strategy.extra_calls(step)
        own.update(c.label for c in calls)
        u, d = step_bits(transport, strategy.run_spec(step, steady), calls, strategy.layout.numel, workers)
        up, down = up + u / period, down + d / period
    return up, down, tuple(sorted(own))


def strategies_frame(workers: int, workload: str | None) -> pd.DataFrame:
    """One row per strategy and transport it can use (its default first): what it sends, the
    bits per parameter a step sends and receives on `workers` workers, as bench books them for the
    workload's small model (vit's by default: PowerSGD's, DeMo's and MuLoCo's depend on its shapes;
    a local-step method's averaged over its H steps; its own collectives included, `own` naming
    them; `bits_note` why a transport's fields take the bits they do at N: Transport.bits_note), when
    `--overlap auto` runs its exchange (`overlap`: buckets or after backward), its
    default lr and weight decay."""
    import pandas as pd

    from lionsim.estimate.probe import _OneOfMany
    from lionsim.steptime.overlap import OverlapConfig
    from lionsim.strategies import STRATEGIES, StrategyConfig, valid_transports
    from lionsim.transports import TRANSPORTS

    rows, auto = [], OverlapConfig()  # `overlap`: what --overlap auto runs (buckets | after)
    cfg = StrategyConfig(workload=workload)
    layout = _model_layout(workload)
    for name, cls in STRATEGIES.items():
        transports = valid_transports(cls)
        transports.sort(key=lambda t: t != cls.default_transport)
        strategy = cls(cfg, layout, _OneOfMany(workers))  # N workers, one held: no [N, P] state
        defaults = cls.defaults_for(workload)
        for t in transports:
            transport = TRANSPORTS.get(t)()
            up, down, own = steady_bits(strategy, transport, workers)
            rows.append({"strategy": name, "transport": t, "default_transport": t == cls.default_transport,
                         "sends": cls.payload_kind, "workers": workers, "bits_per_param_up": up,
                         "bits_per_param_down": down, "own": ", ".join(own),
                         "bits_note": transport.bits_note(strategy.payload_spec(), workers),
                         "overlap": auto.schedule(TRANSPORTS.get(t), cls),
                         "lr": defaults.lr, "weight_decay": defaults.weight_decay, "summary": cls.summary})
    return pd.DataFrame.from_records(rows)


def _strategies_table(frame: pd.DataFrame, workers: int, where: str):
    from lionsim.cli.app import console

    # "what it does" needs room; under 120 columns (CI logs, pipes: 80) it is dropped, not
    # folded into a tall column of three-word lines
    wide = console.width >= 120
    table = list_table(f"strategies (bits per parameter a step sends/receives on {plural(workers, 'worker')}, "
                       f"default transport first{where})")
    columns = ("strategy", *(("what it does",) if wide else ()), "sends", "transports", "bits up/down", "lr", "wd")
    rows_cells = []
    for name, rows in frame.groupby("strategy", sort=False):
        first = rows.iloc[0]
        rows_cells.append([name, *((first["summary"],) if wide else ()), first["sends"], "\n".join(rows["transport"]),
                           "\n".join(f"{u:.3g}/{d:.3g}" for u, d in zip(rows["bits_per_param_up"],
                                                                      rows["bits_per_param_down"])),
                           f"{first['lr']:g}", f"{first['weight_decay']:g}"])
    for i, col in enumerate(columns):
        if col == "what it does":
            table.add_column(col, overflow="fold", ratio=1)
        else:  # exactly as wide as its longest line: nothing is cut
            width = max(len(col), *(len(line) for cells in rows_cells for line in str(cells[i]).split("\n")))
            table.add_column(col, no_wrap=True, width=width, justify="right" if col in ("lr", "wd") else "left")
    for cells in rows_cells:
        table.add_row(*cells)
    return table


def bits_footnote(frame: pd.DataFrame, workers: int) -> str:
    """What the bits depend on: the worker count the listing assumes, and where a transport's bits
    are not its values' width (fields widened to hold N workers' sum, scales per block and padding),
    why they are what they are (its strategies named), so a packed transport's 10.7 bits beside an
    int8 one's 8, or fp8's 8.21, read right."""
    noted = frame[frame["bits_note"] != ""]
    groups = []  # (transports, strategies, note): transports alike (fp8's two formats) share a line
    for note, rows in noted.groupby("bits_note", sort=False):
        transports, names = list(dict.fromkeys(rows["transport"])), list(dict.fromkeys(rows["strategy"]))
        same = next((g for g in groups if g[1] == names and g[2] == note), None)
        if same is None:
            groups.append((transports, names, note))
    shown, likewise, parts = set(), {}, []
    for transports, names, note in sorted(groups, key=lambda g: -len(g[1])):
        key = tuple(transports)
        if key in shown:  # the same rule over another strategy's payload: named, not worked again
            likewise.setdefault(key, []).extend(names)
            continue
        shown.add(key)
        parts.append((key, f"{', '.join(transports)} ({', '.join(names)}): {note}"))
    why = "; ".join(text + (f"; {', '.join(likewise[key])} likewise over their own payloads" if key in likewise else "")
                    for key, text in parts)
    return (f"Bits depend on the worker count: these are for {plural(workers, 'worker')} (-n N for another)"
            + (f". On a step that sends, {why}" if why else "") + ".")


DEFAULT_WORKERS = 8
"""`lionsim strategies`' worker count for the bits per parameter unless -n says."""


@app.command()
def strategies(
    workers: Optional[int] = typer.Option(
        None, "--workers", "-n", parser=o.whole_number, help=f"Worker count the bits per parameter are given for (default {DEFAULT_WORKERS}); "
                                      "not with --matrix, which has no per-worker column."),
    workload: Optional[str] = typer.Option(
        None, "--workload", "-w", help="Show the default lr and weight decay a run on this workload gets "
                                       f"(default {DEFAULT_WORKLOAD}, bench's default workload)."),
    matrix: bool = typer.Option(
        False, "--matrix", help="What works with what: per strategy its transports, backends, momentum sync, "
                                "local steps, options, DistributedLion and estimate support (from the registries)."),
    format: Format = "table",
    plugin: o.Plugin = None,
) -> None:
    """List the strategies: what each sends, over which transports, at how many bits, with their defaults."""
    from lionsim.errors import LionsimError
    from lionsim.transports import TRANSPORTS

    if workers is not None and not 1 <= workers <= MAX_WORKERS:
        raise LionsimError(refusal("--workers", workers, WORKERS))
    if workload is not None:
        from lionsim.workloads import canonical_workload

        workload = canonical_workload(workload)  # an unknown name fails with the list
    if matrix and workers is not None:  # nothing in the matrix depends on N (lionsim.cli.matrix.MATRIX_COLUMNS)
        raise LionsimError(f"--workers {workers} does not apply to --matrix: no column of it depends on the worker "
                           "count; accepted with --matrix: --workload, --format")
    if matrix:
        from lionsim.cli.matrix import matrix_frame, matrix_table

        emit(lambda: matrix_frame(workload), format, lambda: matrix_table(workload))
        return
    workers = DEFAULT_WORKERS if workers is None else workers
    # the lr and wd a bench run gets: bench's default workload unless -w names another (a strategy's
    # generic defaults, which no bench uses where a workload has its own, would mislead)
    workload = workload or DEFAULT_WORKLOAD
    where = f"; lr and wd as a bench on {workload} gets them"
    frame = strategies_frame(workers, workload)
    emit(frame, format, lambda: _strategies_table(frame, workers, where))
    if format == "table":
        if console.width < 120:
            console.print("what each strategy does: a terminal of 120+ columns, or --format csv|json",
                          markup=False, highlight=False)
        from lionsim.transports.hierarchy import LISTING

        own = frame[frame["own"] != ""].drop_duplicates("strategy")
        console.print(f"Bits as bench books them for {workload}'s small model (a local-step method's "
                      "averaged over its H steps), with the collectives a strategy issues itself whatever its "
                      "transport: " + "; ".join(f"{r.strategy}: {r.own}" for r in own.itertuples()),
                      markup=False, highlight=False)

        console.print(bits_footnote(frame, workers), markup=False, highlight=False)
        console.print("Transports: " + "; ".join(f"{n}: {t.summary}" for n, t in TRANSPORTS.items()))
        console.print(LISTING, markup=False, highlight=False)


@app.command()
def workloads(format: Format = "table") -> None:
    """List the workloads with a line each: the built-ins, then installed plugins (entry points of the
    group lionsim.workloads); your own file works too: --workload FILE.py:FUNC."""
    import pandas as pd
    from rich.table import Table

    from lionsim.workloads import WORKLOADS
    from lionsim.workloads.plugin import plugin_names

    rows = [{"workload": name, "summary": cls.summary} for name, cls in WORKLOADS.items()]
    rows += [{"workload": name, "summary": summary} for name, summary in plugin_names().items() if name not in WORKLOADS]
    frame = pd.DataFrame(rows)

    def table() -> Table:
        t = list_table("workloads")
        t.add_column("workload", no_wrap=True)
        t.add_column("what it is", overflow="fold")
        for row in frame.itertuples(index=False):
            t.add_row(row.workload, row.summary)
        return t

    emit(frame, format, table)


SHORT_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float8_e4m3fn": "fp8", "float32": "fp32", "tf32": "tf32"}
"""A dtype's short name: the table's `fp16=65`, the CSV's `fp16_TFLOPs` column."""


def short_dtype(name: str) -> str:
    return SHORT_DTYPES.get(name, name)


def dtype_text(dtype_tflops) -> str:
    """A device's (dtype, TFLOP/s) pairs as "bf16=989, fp16=989": a row fits a line or two, and a
    dtype never wraps apart from its figure (a table wraps at spaces: "fp32" / "15.7")."""
    return ", ".join(f"{short_dtype(name)}={tflops:g}" for name, tflops in dtype_tflops)


def short_source(text: str) -> str:
    """A device's source named, without its figures: up to its first colon, or parenthesis."""
    return re.split(r"[:(;]", text, maxsplit=1)[0].strip()


@app.command()
def devices(format: Format = "table") -> None:
    """List the accelerator presets: peak dense tensor TFLOP/s per dtype, memory, links, datasheet."""
    import pandas as pd
    from rich.table import Table

    from lionsim.compute import DEVICES

    aliases: dict[str, list[str]] = {}  # a device's other names (a100 -> a100-40gb), each --device accepts
    for name, d in DEVICES.items():
        if name != d.name:
            aliases.setdefault(d.name, []).append(name)
    devices = [d for name, d in DEVICES.items() if name == d.name]  # an alias: on the row of the device it names
    # CSV and JSON are for machines: a numeric column a dtype (`fp16_TFLOPs`, empty where the
    # datasheet states none), in SHORT_DTYPES' order (any other after); the table joins them
    stated_any = {name for d in devices for name, _ in d.dtype_tflops}
    dtypes = [n for n in SHORT_DTYPES if n in stated_any] + sorted(stated_any - set(SHORT_DTYPES))
    rows = []
    for d in devices:
        stated = dict(d.dtype_tflops)
        rows.append({"device": d.name, "aliases": " ".join(aliases.get(d.name, [])), "peak_TFLOPs": d.peak_flops / 1e12,
                     **{f"{short_dtype(name)}_TFLOPs": stated.get(name) for name in dtypes},
                     "memory_TBps": d.memory_bandwidth_Bps / 1e12, "memory_GiB": d.memory_bytes / 2**30,
                     "kernel_us": d.kernel_s * 1e6,
                     "intra_GBps": None if d.intra_link is None else d.intra_link.bandwidth_Bps / 1e9,
                     "source": d.source})
    frame = pd.DataFrame(rows)
    per_dtype = {d.name: dtype_text(d.dtype_tflops) for d in devices}

    def table() -> Table:
        # a row a device: the datasheet's name only (its figures and caveats run to a paragraph each,
        # which made the listing 119 lines): --format csv|json gives every source whole
        t = list_table("devices (peak dense tensor TFLOP/s; estimate uses the training dtype's, peak)",
                       "also: another name --device and --compute accept for it. source: the document each "
                       "figure is from, in full with --format csv or json")
        for column in ("device", "peak", "per dtype", "TB/s", "GiB", "intra GB/s", "source"):
            numbers = column in ("peak", "TB/s", "GiB", "intra GB/s")
            t.add_column(column, overflow="fold", no_wrap=numbers, justify="right" if numbers else "left")
        for r in frame.itertuples(index=False):
            intra = "-" if r.intra_GBps is None or r.intra_GBps != r.intra_GBps else f"{r.intra_GBps:.0f}"
            t.add_row(r.device + (f"\nalso {r.aliases}" if r.aliases else ""), f"{r.peak_TFLOPs:g}", per_dtype[r.device], f"{r.memory_TBps:g}",
                      f"{r.memory_GiB:g}", intra, short_source(r.source))
        return t

    emit(frame, format, table)
