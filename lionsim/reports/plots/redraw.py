"""`lionsim plot DIR`: which kind of directory DIR is, and every plot of it redrawn from its CSVs.

    run             steps.csv (summary.csv, else recomputed)        lionsim bench --out
    sweep           sweep_summary.csv + sweep_steps.csv              lionsim sweep --out
    estimate-sweep  sweep.csv + crossover.csv                        lionsim estimate --sweep --out
                    (and to_target_crossover.csv: with --from-run)
    comm            comm.csv                                         lionsim comm --out
    estimate        estimate.csv written with --from-run             lionsim estimate --from-run --out

A missing, malformed or foreign CSV fails with one LionsimError line.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from lionsim.errors import LionsimError
from lionsim.reports.columns import TEXT_COLUMNS, check_columns
from lionsim.reports.files import load_run, read_csv
from lionsim.reports.outdir import plot_kind
from lionsim.reports.columns import ESTIMATE_SWEEP_VARIABLES as VARIABLES
from lionsim.reports.plots.comm import COMM_NEEDS, plot_comm
from lionsim.reports.plots.estimate import hierarchical, plot_estimate_sweep, plot_hierarchy
from lionsim.reports.plots.run import plot_run
from lionsim.reports.plots.sweep import STEPS_NEEDS, SUMMARY_NEEDS, plot_sweep
from lionsim.reports.plots.to_target import NEEDS as TO_TARGET_NEEDS
from lionsim.reports.plots.to_target import TEXT as TO_TARGET_TEXT
from lionsim.reports.plots.to_target import TO_TARGET_CROSSOVER, plot_to_target, plot_to_target_sweep
from lionsim.reports.to_target import has_to_target
from lionsim.reports.summary import run_summary

TEXT = {*TEXT_COLUMNS, "cell", "run", "baseline", "collective", "algorithm", "source", "model", "device",
        "overlap", "variable", "wins", *TO_TARGET_TEXT}
ESTIMATE_SWEEP_NEEDS = ["sweep_value", "strategy", "transport", "workers", "network", "params", "model", "device",
                        "overlap", "step_s", "speedup", "baseline"]
CROSSOVER_NEEDS = ["strategy", "transport", "variable", "crossover", "wins"]


def detect_kind(path: Path) -> str:
    """The kind of directory `path` is (KINDS), by the files present; fails in one line if none
    (outdir.plot_kind: `lionsim plot` asks it before pandas loads)."""
    return plot_kind(path)


def read_table(path: Path, required: list[str], allow_empty: bool = False) -> pd.DataFrame:
    """read_csv (exact floats, names as text, one-line errors), then: every required column
    present, numeric ones numeric, and at least one row."""
    df = read_csv(path, [])
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise LionsimError(f"{path} is missing column(s): {', '.join(missing)}; is it a lionsim {path.name}?")
    for col in required:  # a text column read as numbers (all empty, or a name like "10") is still text
        if col in TEXT and not pd.api.types.is_string_dtype(df[col]) and df[col].notna().any():
            df[col] = df[col].astype(str)
    if df.empty:
        if not allow_empty:
            raise LionsimError(f"{path} has no rows")
        return df.astype({c: float for c in required if c not in TEXT})  # a header alone reads as text
    check_columns(df, [c for c in required if c not in TEXT], str(path))
    return df


def _check_sweep_cells(path: Path, summary: pd.DataFrame, steps: pd.DataFrame) -> None:
    """sweep_steps.csv must hold exactly the cells of sweep_summary.csv, each with its `steps`
    rows (where the summary has that column): a file cut at a line boundary still parses, and
    would otherwise plot partial curves without a word."""
    steps_file, summary_file = path / "sweep_steps.csv", path / "sweep_summary.csv"

    def some(cells) -> str:
        cells = sorted(map(str, cells))
        return ", ".join(cells[:3]) + (f" and {len(cells) - 3} more" if len(cells) > 3 else "")

    want, have = set(summary["cell"]), set(steps["cell"])
    if want != have:
        problems = []
        if want - have:
            problems.append(f"lacks {len(want - have)} cell(s) of {summary_file.name} ({some(want - have)})")
        if have - want:
            problems.append(f"has {len(have - want)} cell(s) not in {summary_file.name} ({some(have - want)})")
        raise LionsimError(f"{steps_file} {' and '.join(problems)}; is the file cut short?")
    if "steps" not in summary.columns:
        return
    known = summary[pd.to_numeric(summary["steps"], errors="coerce").notna()]
    expected = known.groupby("cell")["steps"].sum().astype(float)  # one summary row per cell
    counts = steps.groupby("cell").size().reindex(expected.index)
    short = expected.index[counts.to_numpy() != expected.to_numpy()].tolist()
    if short:
        cell = short[0]
        raise LionsimError(f"{steps_file} has {int(counts[cell])} step row(s) for cell {cell}, {summary_file.name} "
                           f"says {int(expected[cell])}" + (f" ({len(short) - 1} more cell(s) differ)"
                                                             if len(short) > 1 else "") + "; is the file cut short?")


def _given_workers(path: Path) -> int | None:
    """The --workers an estimate sweep was given (estimate.json), which its plots name where the
    sweep's counts stood in for it; None where the file is absent or unreadable (an older copy)."""
    import json

    try:
        workers = json.loads((path / "estimate.json").read_text())["options"]["workers"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return int(workers) if isinstance(workers, int) else None


def _estimate_sweep(path: Path) -> list[Path]:
    frame = read_table(path / "sweep.csv", ESTIMATE_SWEEP_NEEDS)
    # a sweep of the baseline alone has no crossover rows: crossover.csv holds its header only
    crossings = read_table(path / "crossover.csv", CROSSOVER_NEEDS, allow_empty=True)
    variables = list(dict.fromkeys(crossings["variable"])) if len(crossings) else []
    if not variables:  # only the baseline ran: the swept values are the worker counts, or a bandwidth
        variables = ["workers" if (frame["sweep_value"] == frame["workers"]).all() else "bandwidth"]
    if len(variables) != 1 or variables[0] not in VARIABLES:
        raise LionsimError(f"{path / 'crossover.csv'} has variable {', '.join(map(str, variables))}; "
                           f"accepted: one of {', '.join(VARIABLES)}")
    given = _given_workers(path)
    paths = plot_estimate_sweep(frame, crossings, variables[0], path / "sweep.png", given)
    if variables[0] == "workers" and hierarchical(frame):
        paths += plot_hierarchy(frame, path / "hierarchy.png", given)
    if has_to_target(frame) and (path / TO_TARGET_CROSSOVER).is_file():  # --from-run
        frame = read_table(path / "sweep.csv", ["sweep_value", *TO_TARGET_NEEDS])
        to_target = read_table(path / TO_TARGET_CROSSOVER, CROSSOVER_NEEDS, allow_empty=True)
        paths += plot_to_target_sweep(frame, to_target, variables[0], path / "to_target.png", given)
    return paths


def _estimate(path: Path) -> list[Path]:
    """An estimate's own plot: the time to target of each run (written with --from-run); none where
    no run has one (to_target.no_plot_reason says why)."""
    frame = read_table(path / "estimate.csv", ["strategy", "transport"])
    if not has_to_target(frame):
        raise LionsimError(f"{path / 'estimate.csv'} has no plot: an estimate draws one with --from-run (time to "
                           "target) or --sweep (sweep.csv)")
    return plot_to_target(read_table(path / "estimate.csv", TO_TARGET_NEEDS), path / "to_target.png")


def plot_dir(path: Path, baseline: str | None = None, rounds: dict[str, int] | None = None) -> tuple[str, list[Path]]:
    """Redraw every plot of the directory from its CSVs alone; return (kind, written paths).
    `baseline` (runs only) recomputes the summary against that run; `rounds` (sweeps only): its
    runs' H as the caller read them from the cells (plot_sweep)."""
    path = Path(path)
    kind = detect_kind(path)
    if baseline is not None and kind != "run":
        article = "an" if kind[:1] in "aeiou" else "a"
        raise LionsimError(f"--baseline applies to a run directory; {path} is {article} {kind} directory")
    if kind == "run":
        steps, summary, meta = load_run(path)
        if summary is None or baseline is not None:  # under the run's own rule, `baseline` but its own
            summary = run_summary(steps, meta, baseline)
        return kind, plot_run(path, steps, summary, meta)
    if kind == "sweep":
        summary = read_table(path / "sweep_summary.csv", SUMMARY_NEEDS)
        steps = read_table(path / "sweep_steps.csv", STEPS_NEEDS)
        _check_sweep_cells(path, summary, steps)
        return kind, plot_sweep(path, steps, summary, rounds)
    if kind == "estimate-sweep":
        return kind, _estimate_sweep(path)
    if kind == "estimate":
        return kind, _estimate(path)
    return kind, plot_comm(path, read_table(path / "comm.csv", COMM_NEEDS))
