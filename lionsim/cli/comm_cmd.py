"""`lionsim comm`: collective cost table, nccl-tests style; modelled, or measured on gloo/nccl
beside the model, and `--fit PROFILE.toml` to fit a network profile to what was measured."""

from __future__ import annotations

import socket
from pathlib import Path

import typer
from rich import box
from rich.table import Table

from lionsim.cli import options as o
from lionsim.cli.app import ConfigOption, app, console, err_console, fail
from lionsim.errors import LionsimError
from lionsim.network import AUTO, COLLECTIVE_ALGORITHMS, TABLE_OPS, comm_rows, load_network, normalize_op, parse_sizes, rows_frame
from lionsim.network.link import GB, US
from lionsim.cli.output import Format, emit, parse_out

BACKENDS = ("sim", "gloo", "nccl")


def _workers(values: list[str]) -> list[int]:
    """Repeatable and/or comma-separated worker counts."""
    out = []
    for item in (part.strip() for value in values for part in value.split(",")):
        try:
            out.append(int(item))
        except ValueError:
            raise LionsimError(f"bad --workers value {item!r}; use integers >= 2, e.g. --workers 2,4,8") from None
    return out


def _human_bytes(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def _measured_ranks(backend: str, ranks: int | None) -> int:
    """--ranks resolved as bench resolves it, after checking this machine has the backend."""
    from lionsim.launch.rank import check_backend, default_ranks

    check_backend(backend, 1)  # nccl without CUDA: one line before any other
    n = default_ranks(backend) if ranks is None else ranks
    if backend == "nccl" and ranks is None and n < 2:
        raise LionsimError(f"comm --backend nccl measures between GPUs, one rank each: it needs >= 2 GPUs, {n} visible")
    check_backend(backend, n)
    return n


def _check_fit_path(path: Path) -> None:
    from lionsim.reports.files import check_out_dir, make_dir, write_atomic

    if path.suffix.lower() != ".toml":
        raise LionsimError(f"bad --fit {path}: the profile is written as TOML; accepted: a path ending in .toml")
    check_out_dir(path.parent, "--fit")


@app.command()
def comm(
    sizes: str | None = typer.Option(
        None, "--sizes", help="START:END[:xF] (x2 steps by default) and/or a comma list; B, KB/MB/GB = 1e3/1e6/1e9, "
        "KiB/MiB/GiB = 2^10/2^20/2^30. Default 1KB:1GB modelled, 64KB:64MB measured."
    ),
    collective: list[str] = typer.Option(["all_reduce"], "--collective", help=f"Repeatable: {', '.join(TABLE_OPS)}."),
    workers: list[str] | None = typer.Option(
        None, "--workers", help="Worker counts (>= 2) to model: repeat or comma list. Default 8 (sim) or only --ranks."
    ),
    network: str = typer.Option("10gbe", "--network", help="A preset (see `lionsim networks`) or a .toml/.json profile."),
    algorithm: str = typer.Option(
        AUTO, "--algorithm", help=f"auto (the cheapest for each size) or one of: {', '.join(COLLECTIVE_ALGORITHMS.names())}."
    ),
    backend: str = typer.Option("sim", "--backend", help="sim (model only), or measure on gloo (CPU) or nccl (CUDA)."),
    ranks: int | None = typer.Option(
        None, "--ranks", help="Processes to measure with: default 2 on gloo, one per visible GPU on nccl (which "
        "needs >= 2 GPUs), as bench."),
    warmup: int = typer.Option(5, "--warmup", help="Iterations dropped before timing (nccl-tests -w)."),
    iters: int = typer.Option(20, "--iters", help="Timed iterations per size, each after a barrier (nccl-tests -n)."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds a rank may wait in one collective."),
    fit: Path | None = typer.Option(None, "--fit", help="Fit link parameters to the measured rows; write this profile."),
    out: Path | None = typer.Option(None, "--out", parser=parse_out, metavar="DIR",
                                    help="Write DIR/comm.csv and its plots (comm_<collective>.png, .svg)."),
    overwrite: o.Overwrite = False,
    overwrite_sweep: o.OverwriteSweep = False,
    format: Format = "table",
    config: Path | None = ConfigOption,
) -> None:
    """Collective cost table, nccl-tests style: time, algbw = S/t and busbw per size (modelled or measured)."""
    if backend not in BACKENDS:
        raise LionsimError(f"unknown --backend {backend!r}; accepted: {', '.join(BACKENDS)}")
    net = load_network(network)
    ops = [normalize_op(c) for c in collective]
    if backend != "sim":  # before anything is measured or printed: can this machine run it?
        ranks = _measured_ranks(backend, ranks)
    counts = _workers(workers) if workers else ([8] if backend == "sim" else [])
    if backend != "sim":  # the measured N gets its model rows beside the measured ones already
        counts = [n for n in counts if n != ranks]
    if backend == "sim" and fit is not None:
        raise LionsimError("--fit fits measured collectives: use --backend gloo or nccl")
    size_list = parse_sizes(sizes if sizes is not None else ("1KB:1GB" if backend == "sim" else "64KB:64MB"))
    rows = comm_rows(ops, size_list, counts, net, algorithm) if counts else None
    if out is not None:  # the files helpers import pandas: only when files are written
        from lionsim.reports.files import check_out_dir
        from lionsim.reports.outdir import claim_out

        check_out_dir(out)
        claim_out(out, overwrite=overwrite, overwrite_sweep=overwrite_sweep)
    if fit is not None:
        _check_fit_path(fit)
    if backend == "sim":  # a table of the model alone imports no pandas
        frame = rows_frame(rows) if out is not None else None
    else:
        frame = _measure(ops, size_list, net, algorithm, backend, ranks, warmup, iters, timeout,
                         rows_frame(rows) if rows else None, fit)
    written = _write(out, frame) if out is not None else []  # before the table: | head loses no file
    if backend == "sim":
        emit(lambda: rows_frame(rows), format, lambda: _print_model(rows, net.name))
    elif format != "table":
        emit(frame, format)
    if written:
        path, *plots = written
        (console if format == "table" else err_console).print(f"wrote {path} and {', '.join(p.name for p in plots)}", markup=False, highlight=False)


def _write(out: Path, frame) -> list[Path]:
    """comm.csv first, then its plots: staged beside --out and published together, or not at all."""
    from lionsim.reports.files import write_atomic
    from lionsim.reports.plots import plot_comm  # matplotlib: only when plots are asked for
    from lionsim.reports.publish import RunDir

    target = RunDir(out)
    target.write(lambda stage: [write_atomic(stage / "comm.csv", lambda f: frame.to_csv(f, index=False)),
                                *plot_comm(stage, frame)])
    return sorted(target.publish(), key=lambda p: p.name != "comm.csv")


def _print_model(rows: list[dict], name: str) -> Table:
    # fits 80 columns (a pipe or a CI log): short headers, units in the caption, no cell folded
    table = Table(title=f"modelled collectives on {name}", box=box.SIMPLE_HEAD, pad_edge=False,
                  caption="N: workers; time: us; algbw, busbw: GB/s (GB = 1e9 bytes, nccl-tests factors)",
                  caption_justify="left")
    for column in ("collective", "algorithm", "N", "size", "time", "algbw", "busbw"):
        table.add_column(column, justify="left" if column in ("collective", "algorithm") else "right", no_wrap=True)
    for row in rows:
        table.add_row(row["collective"], row["algorithm"], str(row["workers"]), _human_bytes(row["bytes"]),
                      _us(row["time_s"]), f"{row['algbw_GBps']:.3f}", f"{row['busbw_GBps']:.3f}")
    return table


def _us(seconds: float) -> str:
    """Microseconds: one decimal below 1,000, whole and grouped above (never cut short)."""
    us = seconds * 1e6
    return f"{us:.1f}" if us < 1000 else f"{us:,.0f}"


def _measure(ops, size_list, net, algorithm, backend, ranks, warmup, iters, timeout, extra, fit) -> pd.DataFrame:
    import pandas as pd

    from lionsim.measure import MeasureConfig, measure, measured_rows, with_model
    from lionsim.measure.launch import MeasureFailure
    from lionsim.measure.table import compared

    cfg = MeasureConfig(backend=backend, ranks=ranks, collectives=tuple(ops), sizes=tuple(size_list),
                        warmup=warmup, iters=iters, timeout_s=timeout).validate()
    console.print(f"measuring {', '.join(ops)} on {ranks} {backend} ranks: {len(size_list)} sizes, "
                  f"{warmup} warm-up + {iters} timed iterations each", markup=False, highlight=False)
    try:
        points = measure(cfg)
    except MeasureFailure as e:
        fail(str(e), code=1)
    frame = with_model(measured_rows(points, ranks, backend), net, algorithm)
    if extra is not None:
        frame = pd.concat([extra, frame], ignore_index=True)[list(frame.columns)]
    _print_measured(compared(frame), backend, ranks, net.name)
    if fit is not None:
        _fit(frame[frame.source == "measured"], fit, backend, ranks, cfg)
    return frame


def _print_measured(rows: pd.DataFrame, backend: str, ranks: int, name: str) -> None:
    table = Table(title=f"measured on {ranks} {backend} ranks vs the model on {name}", box=box.SIMPLE_HEAD,
                  padding=(0, 0), pad_edge=False,
                  caption="time: median over iterations of the slowest rank, us; p10-p90 its spread; algbw, busbw "
                          "GB/s (1e9 B/s, nccl-tests factors); model: the network model, us; err: model / time - 1")
    for column in ("collective", "size", "count", "time", "p10-p90", "algbw", "busbw", "model", "err"):
        table.add_column(column, justify="left" if column == "collective" else "right", no_wrap=True)
    for r in rows.itertuples(index=False):
        table.add_row(r.collective, _human_bytes(r.bytes), str(int(r.count)), f"{r.time_s * 1e6:.0f}",
                      f"{r.time_p10_s * 1e6:.0f}-{r.time_p90_s * 1e6:.0f}", f"{r.algbw_GBps:.3f}",
                      f"{r.busbw_GBps:.3f}", f"{r.model_time_s * 1e6:.0f}", f"{r.error:+.0%}")
    console.print(table)
    errors = rows.error.abs().groupby(rows.collective, sort=False)
    console.print(f"model {name} vs measured, median / worst |error|: " + "; ".join(
        f"{op} {e.median():.1%} / {e.max():.1%}" for op, e in errors), markup=False, highlight=False)


def _fit(measured: pd.DataFrame, path: Path, backend: str, ranks: int, cfg) -> None:
    from lionsim.network.fit import BETA_FLOOR, error_summary, fit_network
    from lionsim.network.toml_out import profile_toml
    from lionsim.reports.files import check_out_dir, make_dir, write_atomic

    name = path.stem
    desc = f"fitted by lionsim comm --backend {backend} --ranks {ranks} on {socket.gethostname()}"
    net, errors = fit_network(measured, name=name, description=desc)
    summary = error_summary(errors).set_index("collective")
    table = Table(title=f"fitted profile {path} (least squares in relative error)", box=box.SIMPLE_HEAD,
                  padding=(0, 0), pad_edge=False,
                  caption="one row per size regime; |err| = |fitted / measured - 1| over the sweep's sizes")
    for column in ("collective", "algorithm", "up to", "alpha us", "GB/s", "sizes", "median|err|", "worst|err|"):
        table.add_column(column, justify="left" if column in ("collective", "algorithm") else "right", no_wrap=True)
    for entry in net.collectives:
        s = summary.loc[entry.op]
        for i, r in enumerate(entry.regimes):
            first = i == 0
            table.add_row(entry.op if first else "", entry.algorithm if first else "",
                          _human_bytes(r.max_bytes) if r.max_bytes != float("inf") else "rest",
                          f"{r.link.alpha_s / US:.1f}",
                          "flat" if r.link.beta <= 1.001 * BETA_FLOOR else f"{r.link.bandwidth_Bps / GB:.3f}",
                          str(int(s.points)) if first else "", f"{s.median_abs_error:.1%}" if first else "",
                          f"{s.worst_abs_error:.1%}" if first else "")
    console.print(table)
    comment = (f"{desc}\nsizes {', '.join(str(s) for s in cfg.sizes)} B; {cfg.warmup} warm-up + {cfg.iters} "
               f"iterations\nmedian / worst |error| on the sweep: " +
               "; ".join(f"{op} {s.median_abs_error:.1%} / {s.worst_abs_error:.1%}" for op, s in summary.iterrows()))
    written = write_atomic(make_dir(path.parent) / path.name, lambda f: f.write(profile_toml(net, comment)))
    console.print(f"wrote {written}", markup=False, highlight=False)
