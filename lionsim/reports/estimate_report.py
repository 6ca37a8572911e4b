"""`lionsim report DIR` for an estimate (`lionsim estimate ... --out DIR`).

An estimate sweep (`--sweep`), from sweep.csv and crossover.csv alone: what was modelled (model,
device, network, overlap, uneven workers and how their distribution was computed), the step time
and the speedup of every run at every swept value (a dense sweep's readable subset: sweep_rows),
the bytes across nodes where a network has nodes to cross, the crossovers, and the plots (sweep.png; hierarchy.png for hierarchical
transports in a workers sweep), redrawn first. With --from-run, the time to target at scale
besides: where the convergence came from and the assumption, the time and its speedup at every
swept value, the crossovers on time to target (to_target_crossover.csv) and to_target.png.

One estimate (estimate.csv alone): what was modelled, each run's step, and with --from-run its
time to target at scale in words, with to_target.png.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from lionsim.numbers import bytes_text, run_duration, sig, speedup_text
from lionsim.reports.capped import capped_note, capped_values, mark_line
from lionsim.reports.columns import (library_text, model_name, per_worker_text, rounds_of, run_name, shows_across,
                                     sweep_heading)
from lionsim.reports.files import read_json
from lionsim.reports.md import command_line, md_table, reproduce
from lionsim.reports.plots import plot_dir
from lionsim.reports.plots.redraw import CROSSOVER_NEEDS, ESTIMATE_SWEEP_NEEDS, read_table
from lionsim.reports.points import range_words
from lionsim.reports.sweep_rows import Shown, every_point, shown_rows
from lionsim.reports.tables import crossing_words, said_where, verdicts, winning_count
from lionsim.reports.titles import profile_text
from lionsim.reports.plots.to_target import NEEDS as TO_TARGET_NEEDS
from lionsim.reports.plots.to_target import TO_TARGET_CROSSOVER
from lionsim.reports.to_target import has_to_target, no_plot_reason, to_target_section, to_target_sweep_section

RECORD_FILE = "estimate.json"
"""The estimate's command and options (lionsim.cli.estimate_cmd writes it beside estimate.csv)."""


def _ms(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "n/a"
    return f"{sig(seconds * 1e3)} ms"  # whole and grouped from 1,000 ms (999.97 too: never 1e+03)


def _bytes(n: float) -> str:
    return bytes_text(n) if math.isfinite(n) else "n/a"


def _pivot(frame: pd.DataFrame, column: str, fmt, variable: str, shown: Shown | None = None) -> str:
    """A table of `column` by swept value (rows) and run: the rows `shown` (sweep_rows: a dense
    sweep's subset, points past the library's cap marked), else every point."""
    labels = list(dict.fromkeys(f"{s}@{t}" for s, t in zip(frame["strategy"], frame["transport"])))
    rounds = rounds_of(frame)
    frame = frame.assign(run=[f"{s}@{t}" for s, t in zip(frame["strategy"], frame["transport"])])
    table = frame.pivot_table(index="sweep_value", columns="run", values=column, aggfunc="first")
    shown = shown or every_point(table.index)
    rows = [[label, *(fmt(table.loc[value, run]) for run in labels)] for value, label in shown.labelled(variable)]
    return md_table([sweep_heading(variable), *(run_name(*label.split("@", 1), rounds) for label in labels)], rows)


def _value(value) -> str:
    """A configuration value as the tables print it: a whole count grouped (`354,823,168`)."""
    if pd.api.types.is_integer(value):  # an int or a numpy integer, not a bool
        return f"{int(value):,}"
    return str(value)


def _record(directory: Path) -> dict:
    """estimate.json (lionsim.cli.estimate_cmd._record), {} where it is missing or not an object."""
    where = directory / RECORD_FILE
    record = read_json(where) if where.is_file() else None
    return record if isinstance(record, dict) else {}


def _strategy_options(directory: Path) -> list[list[str]]:
    """The configuration rows of the strategy options the estimate was given (`--local-steps`: 500),
    by their flags, from estimate.json."""
    from lionsim.strategies.core.given import flags

    given = (_record(directory).get("options") or {}).get("options") or {}
    known = flags()
    return [[known[key][0].flag if key in known else key, _value(value)] for key, value in given.items()]


def _baseline_note(directory: Path) -> str:
    """estimate.json's note on whose the baseline is (--from-run took DIR's for want of -s), as a
    paragraph under the speedups it governs; "" where none."""
    note = _record(directory).get("baseline_note")
    return f"\n\n{note}" if isinstance(note, str) and note else ""


def _tokens_line(directory: Path) -> str:
    """estimate.json's line that the run's length or time to target rests on estimate's default tokens
    a worker, as a paragraph under the configuration; "" where none (given, or a directory before it)."""
    line = _record(directory).get("tokens_per_worker_defaulted")
    return f"\n\n{line}" if isinstance(line, str) and line else ""


def _notes(directory: Path) -> str:
    """The Notes section: what the estimate's caption said about its runs (estimate.json's notes:
    a run that does not fit, H below the authors', a rank that compresses nothing), "" where none;
    the baseline's note is beside the speedups instead (_baseline_note)."""
    moved = _record(directory).get("baseline_note")
    notes = [n for n in _record(directory).get("notes") or () if isinstance(n, str) and n and n != moved]
    # an indented note is one run's line under the note before it (a sweep's algorithm notes): nested
    items = [f"  - {n.strip()}" if n.startswith("  ") else f"- {n}" for n in notes]
    return "## Notes\n\n" + "\n".join(items) if notes else ""


def _network(first: pd.Series, directory: Path | None) -> str:
    """The network row: a profile file named with its path and inter link where estimate.json
    recorded them (lionsim.reports.titles.profile_text), else its name as estimate.csv holds it."""
    record = _record(directory) if directory is not None else {}
    given = (record.get("options") or {}).get("network")
    return profile_text(given, record.get("network")) if isinstance(given, str) else _value(first["network"])


def _config(frame: pd.DataFrame, directory: Path | None = None) -> str:
    first = frame.iloc[0]
    rows = [[key, model_name(first) if key == "model" else _value(first[key])] for key in ("model", "params")
            if key in frame.columns]
    if "tokens_per_worker" in frame.columns:
        rows.append(["per worker and step", per_worker_text(first)])
    rows += [[key, _network(first, directory) if key == "network" else _value(first[key])]
             for key in ("device", "mfu", "network", "gpus_per_node") if key in frame.columns]
    if library := library_text(first):  # which library priced comm, as estimate's title says
        rows.append(["library", library])
    if "overlap" in frame.columns:  # per transport: name each mode's runs
        modes = frame.drop_duplicates(["strategy", "transport"]).groupby("overlap", sort=False)
        rows.append(["overlap", "; ".join(f"{mode}: " + ", ".join(f"{s}@{t}" for s, t in zip(g["strategy"], g["transport"]))
                                          for mode, g in modes)])
    if "workers" in frame.columns and frame["workers"].nunique() == 1:
        rows.append(["workers", _value(first["workers"])])
    spread = first.get("compute_spread")
    if isinstance(spread, str) and spread:
        rows.append(["compute spread", f"{spread} ({first['spread_method']})"])
    rows.append(["baseline", str(first["baseline"])])
    if directory is not None:
        rows += _strategy_options(directory)
    return md_table(["option", "value"], rows)


STEP_TIME_DIFFERS = ("Where each run's step is faster than the baseline's. The time-to-target crossovers below "
                     "can differ: time to target also counts each run's steps to the target.")
TIME_TO_TARGET_DIFFERS = ("Where each run reaches the target sooner than the baseline. These can differ from the "
                          "step-time crossovers above: time to target also counts each run's steps to the target.")
"""Why the report's two crossover tables (with --from-run) can disagree, said above each."""


def _crossovers(crossings: pd.DataFrame, variable: str, rounds: dict[str, int] | None = None,
                values=None) -> str:
    """The crossovers as a table; with the sweep's `values` and a crossover.csv that has them, each
    run's speedup range over the sweep and where (points.range_words): a peak between the ends."""
    if crossings.empty:
        return "Only the baseline ran: no crossovers."
    ranged = values is not None and "speedup_best" in crossings.columns
    rows = []
    for group in verdicts(crossings):
        row = group[0]
        if pd.isna(row.crossover):
            where = getattr(row, "wins_where", "")  # "partly": the ranges it wins (a CSV before it: absent)
            where, wins = "-", where if isinstance(where, str) and where else str(row.wins)
        elif said_where(row):  # the edges of the ties, or every turn (estimate.sweep.crossovers): the verdict once
            where = ", ".join(crossing_words(r, unit=False) if variable == "workers" else f"{r.crossover:.4g}"
                              for r in group) + (" workers" if variable == "workers" else "")
            wins = said_where(row)
        elif variable == "workers":  # as the terminal's table: the counts either side, the first that wins
            where, wins = crossing_words(row), winning_count(row)
        else:
            where, wins = f"{row.crossover:.4g}", str(row.wins)  # the heading names the unit
        rows.append([run_name(row.strategy, row.transport, rounds), where, wins,
                     *([range_words(row, values, variable) or "-"] if ranged else [])])
    return md_table(["run", f"crossover: {sweep_heading(variable)}", "wins",
                     *(["speedup: lowest to highest"] if ranged else [])], rows)


def estimate_report(directory: Path) -> str:
    frame = read_table(directory / "sweep.csv", ESTIMATE_SWEEP_NEEDS)
    crossings = read_table(directory / "crossover.csv", CROSSOVER_NEEDS, allow_empty=True)
    variable = crossings["variable"].iloc[0] if len(crossings) else (
        "workers" if (frame["sweep_value"] == frame["workers"]).all() else "bandwidth")
    first = frame.iloc[0]
    cap, above = capped_values(crossings, sorted(frame["sweep_value"].unique()))  # they repeat the cap's figures
    where = directory / TO_TARGET_CROSSOVER
    to_target = read_table(where, CROSSOVER_NEEDS, allow_empty=True) if where.is_file() else None
    cells = {"step_s": _ms, "speedup": speedup_text, "inter_bytes": _bytes, "step_p99_s": _ms,
             "time_to_target_s": run_duration, "to_target_speedup": speedup_text}  # what the tables print
    shown = shown_rows(frame, cells, cap, (crossings, to_target))  # a dense sweep's readable subset, in each table

    def under(first: bool = False) -> str:
        return f"\n\n{note}" if (note := shown.note(first)) else ""

    parts = [
        f"# lionsim report: estimate of {model_name(first)} against {variable}, {first['network']}",
        "No training: every figure is the step-time model's (`lionsim estimate`).",
        "## Configuration\n\n" + _config(frame, directory) + _tokens_line(directory),
        f"## Step time by {variable}\n\n" + _pivot(frame, "step_s", _ms, variable, shown) + under(True)
        + (f"\n\n{mark_line(cap)}" if above else ""),
        f"## Speedup against {run_name(*first['baseline'].split('@', 1), rounds_of(frame))}\n\n" + _pivot(frame, "speedup", speedup_text, variable, shown)
        + under() + _baseline_note(directory),
    ]
    if shows_across(frame):  # its rows marked as the others': "the same rows", priced at the cap
        parts.append("## Bytes one node sends across nodes per step\n\n"
                     + _pivot(frame, "inter_bytes", _bytes, variable, shown) + under())
    if "step_p99_s" in frame.columns and (frame["step_p99_s"] > frame["step_p50_s"]).any():
        parts.append("## Step time p99 (uneven workers)\n\n" + _pivot(frame, "step_p99_s", _ms, variable, shown)
                     + under())
    if has_to_target(frame):
        timed = read_table(directory / "sweep.csv", ["sweep_value", *TO_TARGET_NEEDS])
        why = no_plot_reason(timed)
        # its crossings: the "Time-to-target crossovers" table below, not a list here too
        parts.append("## Time to target at scale\n\n" + to_target_sweep_section(timed, None, variable, shown)
                     + (f"\n\nto_target.png is not drawn: {why}." if why else ""))
    _kind, paths = plot_dir(directory)
    pngs = list(dict.fromkeys(Path(p).name for p in paths if str(p).endswith(".png")))
    capped = capped_note(crossings, sorted(frame["sweep_value"].unique()))  # points past the library's cap
    values = sorted(frame["sweep_value"].unique())
    timed_too = to_target is not None and has_to_target(frame)  # --from-run: the time to target's crossovers too
    parts += [("## Step-time crossovers\n\n" + (f"{STEP_TIME_DIFFERS}\n\n" if timed_too else "")
               + _crossovers(crossings, variable, rounds_of(frame), values) + (f"\n\n{capped}" if capped else "")),
              ("## Time-to-target crossovers\n\n" + f"{TIME_TO_TARGET_DIFFERS}\n\n"
               + _crossovers(to_target, variable, rounds_of(frame), values)) if timed_too else "",
              "## Plots\n\n" + "\n\n".join(f"![{name.removesuffix('.png')}]({name})" for name in pngs),
              _notes(directory), _reproduce(directory)]
    return "\n\n".join(part for part in parts if part) + "\n"


def _reproduce(directory: Path) -> str:
    """The Reproduce section: the estimate's own command where estimate.json recorded it."""
    record = _record(directory)
    argv = record.get("argv")
    return "## Reproduce\n\n" + reproduce(command_line(argv if isinstance(argv, list) else None,
                                                     cwd=record.get("cwd")), directory)


ONE_NEEDS = ["strategy", "transport", "workers", "network", "params", "model", "device", "mfu", "step_s", "comm_s",
             "compute_s", "speedup", "baseline", "wire_bytes"]
"""estimate.csv columns the report of one estimate reads."""


def one_estimate_report(directory: Path) -> str:
    """`lionsim report DIR` of one estimate (estimate.csv, no sweep): what was modelled, each run's
    step, and with --from-run the time to target at scale in words and its plot."""
    frame = read_table(directory / "estimate.csv", ONE_NEEDS)
    first = frame.iloc[0]
    steps = md_table(["run", "compute", "comm", "step", "sent", "speedup"], [
        [run_name(r.strategy, r.transport, rounds_of(frame)), _ms(r.compute_s), _ms(r.comm_s), _ms(r.step_s), bytes_text(r.wire_bytes),
         speedup_text(r.speedup)] for r in frame.itertuples(index=False)])
    parts = [f"# lionsim report: estimate of {model_name(first)}, {first['workers']:,} workers, {first['network']}",
             "No training at this scale: every time is the step-time model's (`lionsim estimate`).",
             "## Configuration\n\n" + _config(frame, directory) + _tokens_line(directory),
             "## Step\n\n" + steps + "\n\nPer worker and step; sent: bytes one worker sends per step; speedup: "
             f"{first['baseline']}'s step / this run's." + _baseline_note(directory)]
    if has_to_target(frame):
        timed = read_table(directory / "estimate.csv", TO_TARGET_NEEDS)
        parts.append("## Time to target at scale\n\n" + to_target_section(timed))
        _kind, paths = plot_dir(directory)
        pngs = list(dict.fromkeys(Path(p).name for p in paths if str(p).endswith(".png")))
        why = no_plot_reason(timed)
        parts.append("## Plots\n\n" + ("\n\n".join(f"![{n.removesuffix('.png')}]({n})" for n in pngs) if pngs
                                        else f"None: {why}." if why else "None."))
    parts += [_notes(directory), _reproduce(directory)]
    return "\n\n".join(part for part in parts if part) + "\n"
