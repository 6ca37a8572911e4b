"""Time to target at scale (`lionsim estimate --from-run`) in words: the figures' text, shared by
the command's table (lionsim.cli.to_target_view), the plots and `lionsim report`'s section.

Everything here reads estimate.csv's (or sweep.csv's) --from-run columns alone
(lionsim.estimate.to_target.TO_TARGET_COLUMNS).
"""

from __future__ import annotations

import math

import pandas as pd

from lionsim.numbers import binary_bytes_text, plural, run_duration, speedup_text
from lionsim.reports.columns import rounds_of, run_name, sweep_heading, workload_text
from lionsim.reports.sweep_rows import Shown, every_point
from lionsim.reports.md import md_table
from lionsim.reports.points import range_words

def band_text(lo: float, mid: float, hi: float) -> str:
    """The band, each end a run's length (run_duration), "4:22:10-7:10:12", a unit both ends share
    said once ("1.98-2.00 d", not "1.98 d-2.00 d"); "-" where there is none (or it is the figure itself)."""
    if not (math.isfinite(hi) and math.isfinite(mid)) or lo == mid == hi:
        return "-"
    low, high = "?" if not math.isfinite(lo) else run_duration(lo), run_duration(hi)
    (low_figure, _, low_unit), (_, _, high_unit) = low.rpartition(" "), high.rpartition(" ")
    if low_figure and low_unit == high_unit:  # days or years at both ends; h:mm:ss has no unit to share
        return f"{low_figure}-{high}"
    return f"{low}-{high}"


def speedup_band_text(row) -> str:
    """The speedup's band (to_target_speedup_lo / _hi: lionsim.estimate.to_target.speedup_band),
    "1.18-1.35x"; "-" where there is none (either run has no band, or a CSV from before the columns)."""
    lo, hi = (float(getattr(row, f"to_target_speedup_{end}", math.nan)) for end in ("lo", "hi"))
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo == hi:
        return "-"
    return f"{speedup_text(lo)[:-1]}-{speedup_text(hi)}"


SPEEDUP_BAND = ("speedup band: the baseline's time over this run's at both bands' low ends and at both "
                "high ends, each pair at the same baseline's steps, so their spread counts once")
"""The speedup band's rule in words, in the CLI caption and report.md (lionsim.estimate.to_target)."""


def held_past_doubling(counts, workers: float) -> bool:
    """Whether a fit through exactly 2 measured worker `counts` (ascending) is held at `workers`: it
    is taken one doubling past them, no further (lionsim.estimate.to_target.one_doubling_on), which
    to_target.png's caption says of the counts beyond."""
    return len(counts) == 2 and not counts[0] / 2 <= workers <= 2 * counts[-1]


def cell(value) -> str:
    """A text cell of a pivot, "-" where the pivot has none (NaN)."""
    return value if isinstance(value, str) else "-"


def with_band(figure: str, band: str) -> str:
    """A figure and its band in brackets, "2:23:12 (2:16:37-2:29:47)"; the figure alone where the band is "-"."""
    return figure if band == "-" else f"{figure} ({band})"


def no_band_words(frame: pd.DataFrame) -> str:
    """Why no run has a band, from the rows' notes ("no band: one bench run, ..." or "fitted on 2
    counts: no band"), each reason once, without a full stop; "" where a run has one or none says why."""
    if frame["time_to_target_hi_s"].map(lambda v: math.isfinite(float(v))).any():
        return ""
    whys = []
    for row in frame.itertuples(index=False):
        for part in text(row.to_target_note).split("; "):
            why = (part.removeprefix("no band: ") if part.startswith("no band: ")  # TWO_COUNTS' reworded
                   else "fitted through 2 worker counts, no spread to measure" if part.endswith("no band") else "")
            if why and why not in whys:
                whys.append(why)
    return "; ".join(whys)


def no_plot_reason(frame: pd.DataFrame) -> str | None:
    """Why to_target.png is not drawn (None: it is): no run has a time to target anywhere, so
    there is nothing to plot; the report says this instead of showing an empty plot."""
    if frame["time_to_target_s"].map(lambda v: math.isfinite(float(v))).any():
        return None
    rows = frame.drop_duplicates(["strategy", "transport"]).itertuples(index=False)
    why = "; ".join(f"{r.strategy}@{r.transport} {'; '.join(notes(r)) or r.to_target_how}" for r in rows)
    return f"no run has a time to target, so there is nothing to plot ({why})"


def _trained_at(first) -> str:
    """The small run's workload and worker counts: "mlp trained at 2, 4 and 8 workers"."""
    counts = str(first["to_target_workers"]).split()
    at = counts[0] if len(counts) == 1 else ", ".join(counts[:-1]) + " and " + counts[-1]
    return f"{workload_text(first['to_target_workload'])} trained at {plural(at, 'worker')}"


def baselines_text(first) -> str:
    """Whose steps the runs are counted against there (the run's baseline, whose loss sets the target
    unless --target-loss did) and what the speedups are against (the estimate's --baseline): "baseline
    X" where both are one run, else both named."""
    trained, priced = first["to_target_baseline"], first["baseline"]
    if trained == priced:
        return f"baseline {trained}"
    return f"steps relative to its baseline {trained}; speedup against {priced}"


def source_text(first) -> str:
    """Where the convergence came from, in one line: what, trained at which N, its target, the baselines."""
    return (f"{first['to_target_kind']} {first['to_target_from']}: {_trained_at(first)}, "
            f"target loss {first['to_target_rule']}, {baselines_text(first)}")


def text(value) -> str:
    """A text cell as text: "" for an empty one (read back from a CSV as NaN)."""
    return value if isinstance(value, str) else ""


def notes(row) -> list[str]:
    """What a reader must know beside a row's figure: the trained run its steps to target came from
    where the run never trained this transport (matched by strategy alone: the same optimizer on
    another wire, docs/time-to-target.md) and the to_target_note's parts."""
    parts = [f"steps to target from the {row.to_target_match} run (never trained over {row.transport})"] \
        if row.to_target_how == "by strategy" else []
    return parts + [part for part in text(row.to_target_note).split("; ") if part]


def status(row) -> str:
    """The steps column: the count, or why there is none."""
    if math.isfinite(row.steps_to_target):
        return f"{row.steps_to_target:,.0f}"
    if row.to_target_how == "not trained":
        return "not trained"
    return "not reached" if text(row.to_target_note).startswith("did not reach") else "-"


UNFIT = "!"
"""The mark beside a run that does not fit on its worker (unfit), in the time-to-target table."""


def unfit(frame: pd.DataFrame) -> list[str]:
    """The runs (strategy@transport) that do not fit on their worker unsharded: estimate.csv's
    `memory_fits`, the step table's "Does not fit" note's source (lionsim.estimate.memory); [] where
    all fit or the CSV predates the column."""
    if "memory_fits" not in frame.columns:
        return []
    over = frame[frame["memory_fits"].astype(str) == "False"]  # a bool, or its text read back from a CSV
    return list(dict.fromkeys(f"{s}@{t}" for s, t in zip(over["strategy"], over["transport"])))


def unfit_words(frame: pd.DataFrame) -> str:
    """One sentence, no full stop, where a run in `frame` does not fit (unfit): which, on what, and that its
    time to target is not a run it can make as priced; "" where all fit."""
    labels = unfit(frame)
    if not labels:
        return ""
    first = frame[frame["memory_fits"].astype(str) == "False"].iloc[0]
    g = int(first.get("replica_gpus", 1) or 1)
    device = f"one {first['device']}" if g == 1 else f"a worker of {g} x {first['device']}"
    one = len(labels) == 1
    return (f"{', '.join(labels)} {'does' if one else 'do'} not fit on {device} "
            f"({binary_bytes_text(float(first['device_memory_bytes']))}) unsharded (the step table's note): "
            f"{'its' if one else 'their'} time to target is not a run {'it' if one else 'they'} can make as "
            "priced (sharding's traffic, ZeRO/FSDP, is not modelled)")


ASSUMPTION = ("These are the times to target at scale if convergence at scale behaves as it did there: each run's "
              "steps to target relative to the baseline as measured (fitted against log N where a sweep measured "
              "several worker counts), the baseline's own steps to target at scale from {basis}. lionsim trained "
              "nothing at this scale: the step is modelled, the convergence is the small run's.")


def lr_edge_lines(frame: pd.DataFrame) -> list[str]:
    """The lr sweep's warnings that a best lr lies at its grid's edge (lionsim.reports.best_lr), for the
    runs the figures came from and the baseline, whose lr moves every ratio: repeated, as a wider grid
    may move the figure. [] where there are none (or the column predates them)."""
    edges = frame["to_target_lr_edges"].iloc[0] if "to_target_lr_edges" in frame.columns else ""
    if not isinstance(edges, str) or not edges:
        return []
    used = {frame["to_target_baseline"].iloc[0], *(m for m in frame["to_target_match"] if isinstance(m, str) and m)}
    return [f"{edge} (the lr sweep's warning: a figure from it may move)." for edge in edges.split("; ")
            if any(edge.startswith(f"{label}, N=") for label in used)]


def has_to_target(frame: pd.DataFrame) -> bool:
    """Whether an estimate's rows carry --from-run's columns."""
    return "time_to_target_s" in frame.columns and "to_target_from" in frame.columns


def _source_words(first) -> str:
    return (f"Convergence from the {first['to_target_kind']} `{first['to_target_from']}`: {_trained_at(first)}, "
            f"target loss {first['to_target_rule']}, {baselines_text(first)}.")


def _verdict(frame: pd.DataFrame) -> str:
    """Which run reaches the target first, by how much, and which have no figure, in sentences."""
    rows = list(frame.itertuples(index=False))
    timed = [r for r in rows if math.isfinite(r.time_to_target_s)]
    lines = []
    if timed:
        best = min(timed, key=lambda r: r.time_to_target_s)
        steps = plural(f"{best.steps_to_target:,.0f}", "step")
        lines.append(f"First to target: **{best.strategy}@{best.transport}**, in {run_duration(best.time_to_target_s)} "
                     f"({steps}" + (f", {speedup_text(best.to_target_speedup)} the baseline "
                                    f"{best.baseline}'s time" if math.isfinite(best.to_target_speedup) else "") + ").")
        if over := unfit_words(frame):  # beside the headline: a run it ranks may not run as priced
            lines[-1] += f" {over}."
    for r in rows:
        if r in timed:
            continue
        lines.append(f"{r.strategy}@{r.transport} has no time to target: {'; '.join(notes(r)) or r.to_target_how}.")
    return "\n\n".join(lines)


def to_target_section(frame: pd.DataFrame) -> str:
    """One estimate's time to target at scale (estimate.csv): where it came from, the assumption,
    each run's figure and notes, and which reaches the target first."""
    first = frame.iloc[0]
    rows = []
    for r in frame.itertuples(index=False):
        label = f"{r.strategy}@{r.transport}"
        rows.append([label + (" (baseline)" if label == r.baseline else ""), text(r.to_target_match) or "-",
                     status(r), run_duration(r.time_to_target_s),
                     band_text(r.time_to_target_lo_s, r.time_to_target_s, r.time_to_target_hi_s),
                     speedup_text(r.to_target_speedup), speedup_band_text(r),
                     text(r.to_target_phases) or "-", "; ".join(notes(r)) or "-"])
    table = md_table(["run", "convergence of", "steps", "time", "band", "speedup", "speedup band", "phases", "note"],
                     rows)
    return "\n\n".join([
        f"{_source_words(first)} Priced at {first['workers']:,} workers on {first['network']}.",
        ASSUMPTION.format(basis=first["to_target_basis"]),
        table,
        "steps: the baseline's steps at scale x each run's steps to target relative to the baseline there; time: "
        "a run of that many steps priced with every phase it has (phases); band: the fits' residual spread "
        "(none where one run, or one point per fitted coefficient, leaves no spread to measure); speedup: the "
        f"baseline's time to target / this run's; {SPEEDUP_BAND}.",
        _verdict(frame), *lr_edge_lines(frame)])


def to_target_sweep_section(frame: pd.DataFrame, crossings: pd.DataFrame | None, variable: str,
                            shown: Shown | None = None) -> str:
    """An estimate sweep's time to target: where it came from, the time and speedup at each swept
    value (the rows `shown`: a dense sweep's subset, as the report's other tables; else every
    point), and where each run starts or stops winning on time to target."""
    first = frame.iloc[0]
    labels = list(dict.fromkeys(f"{s}@{t}" for s, t in zip(frame["strategy"], frame["transport"])))
    runs = frame.assign(run=[f"{s}@{t}" for s, t in zip(frame["strategy"], frame["transport"])])
    shown = shown or every_point(frame["sweep_value"].unique())
    rounds = rounds_of(frame)

    def pivot(column: str, fmt) -> str:
        """`column` by swept value and run, each cell `fmt(value)`."""
        table = runs.pivot_table(index="sweep_value", columns="run", values=column, aggfunc="first", dropna=False)
        body = [[name, *(fmt(table.loc[v, label]) if label in table.columns else "-" for label in labels)]
                for v, name in shown.labelled(variable)]
        note = shown.note(first=False)  # a dense sweep's rows: the same as the step time's
        named = [run_name(*label.split("@", 1), rounds) for label in labels]  # as the step tables name them
        return md_table([sweep_heading(variable), *named], body) + (f"\n\n{note}" if note else "")

    parts = [_source_words(first), ASSUMPTION.format(basis=first["to_target_basis"])]
    if variable == "workers":
        counts = [int(c) for c in str(first["to_target_workers"]).split()]
        beyond = sorted(v for v in frame["sweep_value"].unique() if not min(counts) <= v <= max(counts))
        if beyond:
            parts.append(f"Measured at {min(counts):,} to {max(counts):,} workers: the figures at "
                         f"{', '.join(f'{int(v):,}' for v in beyond)} workers extrapolate the fits.")
    # each cell its figure and, where it has one, its band in brackets (as the CLI's table and the plot)
    runs["time_cell"] = [with_band(run_duration(r.time_to_target_s),
                                   band_text(r.time_to_target_lo_s, r.time_to_target_s, r.time_to_target_hi_s))
                         for r in frame.itertuples(index=False)]
    runs["speedup_cell"] = [with_band(speedup_text(r.to_target_speedup), speedup_band_text(r))
                            for r in frame.itertuples(index=False)]
    bands = "In brackets: the band, the fits' residual spread." if (runs["time_cell"].str.contains(r"\(")).any() \
        else f"No band: {why}." if (why := no_band_words(frame)) else ""
    parts += [f"Time to target by {variable}:", pivot("time_cell", cell) + (f"\n\n{bands}" if bands else ""),
              f"Time-to-target speedup against {run_name(*first['baseline'].split('@', 1), rounds)}:",
              pivot("speedup_cell", cell) + (f"\n\nIn brackets: the {SPEEDUP_BAND}."
                                            if runs["speedup_cell"].str.contains(r"\(").any() else "")]
    if crossings is not None:
        parts.append("Where each run starts (or stops) reaching the target sooner than the baseline:\n\n"
                     + crossover_words(crossings, variable, sorted(frame["sweep_value"].unique()), rounds))
    missing = [r for r in frame.drop_duplicates(["strategy", "transport"]).itertuples(index=False)
               if not math.isfinite(r.time_to_target_s)]
    parts += [f"{run_name(r.strategy, r.transport, rounds)} has no time to target: "
              f"{'; '.join(notes(r)) or r.to_target_how}." for r in missing]
    if over := unfit_words(frame):
        parts.append(f"{over}.")
    return "\n\n".join([*parts, *lr_edge_lines(frame)])


def ends(row) -> str:
    """A crossover.csv row's speedups at the sweep's two ends ("1.29x to 1.32x")."""
    return f"{speedup_text(row.speedup_first)} to {speedup_text(row.speedup_last)}"


def crossover_words(crossings: pd.DataFrame, variable: str, values=None, rounds: dict[str, int] | None = None) -> str:
    """The time to target's crossovers as a list, one line per crossing; a run that never crosses
    with its speedup's range over the sweep and where (points.range_words, given the sweep's
    `values`), else its ends; each run named as the tables name it (`rounds`: columns.rounds_of)."""
    if crossings.empty:
        return "Only the baseline ran: no crossovers."
    unit = "workers" if variable == "workers" else "GB/s"
    lines = []
    for row in crossings.itertuples(index=False):
        label = run_name(row.strategy, row.transport, rounds)
        where = getattr(row, "wins_where", "")  # "partly"'s spans, the points with a figure, or every turn
        if not pd.isna(row.crossover) and isinstance(where, str) and where:  # its rows share one verdict: once
            if f"- {label}: {where}" not in lines:
                lines.append(f"- {label}: {where}")
        elif row.wins == "no figure":
            lines.append(f"- {label}: no time to target at any point")
        elif pd.isna(row.crossover) and isinstance(where, str) and where:
            lines.append(f"- {label}: {where}")
        elif pd.isna(row.crossover):
            lines.append(f"- {label}: " + {"everywhere": "sooner everywhere", "nowhere": "later everywhere",
                                            "level": "level with the baseline everywhere",
                                            "partly": "sooner at some points, level at the rest"}.get(row.wins, row.wins)
                         + f" ({(values is not None and range_words(row, values, variable)) or ends(row)})")
        else:
            side = "from" if row.wins == "above" else "up to"
            loses = getattr(row, "loses_at", float("nan"))
            beside = "" if loses != loses else f" ({int(loses):,} not: the crossing lies between)"
            lines.append(f"- {label}: sooner {side} {row.crossover:,.4g} {unit}{beside}")
    return "\n".join(lines)
