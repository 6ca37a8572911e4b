"""The tables `lionsim estimate` prints: the step breakdown, a whole run, uneven workers, --need's
bandwidths and a sweep's crossovers (their notes: lionsim.cli.estimate_notes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from lionsim.cli.estimate_notes import (BUCKETS_NOTE, caption_notes, local_step_note, need_overlap_note, need_says_cap,
                                        overlap_text)
from lionsim.numbers import ms_text, plural, run_duration, speedup_text, step_bytes
from lionsim.reports.columns import ROUND_STEPS, rounds_of, strategy_text, topology
from lionsim.whole_nodes import one_node_line

if TYPE_CHECKING:  # annotations only: pandas loads with the frame it is handed
    import pandas as pd

    from lionsim.estimate.plain import Sweep
    from lionsim.reports.widths import RunName


RUN_WIDTH = 17
"""Least characters of the run column: a label is two whole lines, strategy and @transport
(reports.widths.fold_run), and the column widens to the longest (run_width) while the table fits
80 columns; past that the names break after a '-' (reports.widths.fit)."""


def _ms(seconds: float) -> str:
    """Milliseconds, one unit per column: 3 significant digits, thousands grouped from 1,000 up
    (999.97 too: "1,000", never "1e+03"), "<0.0001" below a tenth of a microsecond, and a power of
    ten only from 1,000,000 (lionsim.numbers.ms_text)."""
    ms = seconds * 1e3
    if 0 < ms < 1e-4:
        return "<0.0001"
    return ms_text(ms)


def _library(row) -> str:
    """Which library priced comm: "nccl over sockets", "ideal", "gloo" (estimate.csv: library, fabric)."""
    from lionsim.reports.columns import library_text

    return library_text(row)


def _devices(row, whose: str = "") -> str:
    """The device a worker runs on, or "G x DEVICE a worker" for a replica of G (--replica-gpus), and
    `whose` it is where the network named it ("a100-40gb (the profile's)")."""
    g = int(row.get("replica_gpus", 1) or 1)
    device = row["device"] + (f" ({whose})" if whose else "")
    return device if g == 1 else f"{g} x {device} a worker"


def _h(row) -> int:
    """A row's H (estimate.csv's round_steps), 1 where the frame has none."""
    return getattr(row, ROUND_STEPS, 1)


def run_label(row, h: int | None = None, star: bool = False) -> RunName:
    """A table's run cell: strategy (* for the baseline where `star`) and its H where it has local
    steps (`diloco H=2`: strategy_text, H the row's own unless given), then @transport. Every table
    estimate prints names its runs so, the step table's way."""
    from lionsim.reports.tables import fold_run

    h = _h(row) if h is None else h
    return fold_run(strategy_text(row.strategy, h, star and f"{row.strategy}@{row.transport}" == row.baseline),
                    row.transport)


def _width(frame: pd.DataFrame, star: bool = False) -> int:
    """The run column's width for frame's rows as run_label names them (each as if the baseline
    where `star`)."""
    from lionsim.reports.tables import run_width

    return run_width([(strategy_text(r.strategy, _h(r), star), r.transport) for r in frame.itertuples(index=False)],
                     RUN_WIDTH)


def breakdown_table(frame: pd.DataFrame) -> Table:
    """One row per run: the step breakdown in ms, bytes sent per worker, speedup. Narrow: encode,
    decode and update are folded into `local` and the overlap mode goes to the caption (estimate.csv
    has every column), so it fits 80 columns where its numbers allow (wider where they alone need it:
    lionsim.reports.widths)."""
    from lionsim.reports.columns import model_text, per_worker_text, shows_across
    from lionsim.reports.obtained import estimate_times
    from lionsim.reports.tables import fit

    first = frame.iloc[0]
    modes = {mode: [f"{r.strategy}@{r.transport}" for r in frame.itertuples(index=False) if r.overlap == mode]
             for mode in dict.fromkeys(frame["overlap"])}
    overlap = overlap_text(modes)
    workers, per_node = int(first["workers"]), int(first.get("gpus_per_node", 1) or 1)
    one_node = one_node_line(workers, per_node, first["network"])  # nothing crosses nodes: no `across` to define
    across = shows_across(frame) and not one_node  # what one node sends to the others, where a node has several GPUs
    notes = caption_notes(frame)

    def placed(*places: str) -> list[str]:
        return [escape(note.text) for note in notes if note.place in places]  # a profile's [nccl] is text

    # the note that decides the answer first (a run that does not fit its device), then what the columns
    # mean (`across` before the notes that quote it), then the notes on this table, a line each at the end
    table = Table(
        title=(f"lionsim estimate: {model_text(first)}, {per_worker_text(first)}, "
               f"{plural(format(first['workers'], ','), 'worker')} on {first['network']} "
               f"({topology(first)}, library: "
               f"{_library(first)}), {_devices(first, frame.attrs.get('device_from', ''))} at mfu {first['mfu']:g}"),
        caption=("".join(f"{note}\n" for note in placed("first"))
                 + f"ms per step, one worker; {estimate_times(first)}. local: encode + decode + update (estimate.csv: "
                 "each). comm: every exchange; exposed: what backward does not hide. sent: bytes per "
                 "worker per step, as the priced algorithms move them (estimate.csv: algorithm). "
                 + ("across: bytes per node per step to other nodes. " if across else "")
                 + f"speedup: baseline step / step; * baseline. overlap: {overlap}. "
                 + ("".join(f"{note} " for note in placed("overlap"))  # a row slower per bucket: in its place
                    or (BUCKETS_NOTE if set(modes) & {"buckets", "tensors"} else ""))
                 + f"{local_step_note(frame)}"
                 f"kernels: {' | '.join(dict.fromkeys(frame['kernels']))}, {first['optimizer']} optimizer."
                 + (f" {one_node}" if one_node else "")
                 + "".join(f" {note}" for note in placed("sentence"))
                 + "".join(f"\n{line}" for line in placed("line", *(() if need_says_cap(frame) else ("cap",))))),
        # a line each; the fabric's cap not where --need's table says it once
        caption_justify="left", box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False,
    )
    width = _width(frame, star=True)  # as if each were the baseline
    table.add_column("run", no_wrap=True, min_width=width, max_width=width)
    # bytes compact, as in every step table (bytes_text); with `across` the speedup header folds where
    # the table, its blank edges dropped, would pass the width it may take (80 in a pipe, COLUMNS' own)
    names = ("compute", "local", "comm", "exposed", "step", "sent", *(("across",) if across else ()), "speedup")
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)
    size = step_bytes
    for row in frame.itertuples(index=False):
        table.add_row(
            run_label(row, star=True),
            *(_ms(x) for x in (row.compute_s, row.encode_s + row.decode_s + row.update_s, row.comm_s,
                               row.comm_exposed_s, row.step_s)),
            size(row.wire_bytes), *([size(row.inter_bytes)] if across else []), speedup_text(row.speedup),
        )
    from lionsim.reports.widths import whole_header

    if across:  # whole where dropping the blank edges fits the table, as a name is
        whole_header(table, table.columns[-1], "speed\nup")
    return fit(table)


def run_table(frame: pd.DataFrame) -> Table:
    """A whole run (--steps / --tokens): its seconds, mean step beside the steady one, its phases."""
    from lionsim.reports.tables import fit
    from lionsim.reports.widths import Phrases

    first = frame.iloc[0]
    table = Table(title=f"a whole run of {plural(f'{first.run_steps:,}', 'step')}", caption=(
        "time: the run's length (h:mm:ss; past a day in days, d, past a year in years, y); mean step and steady "
        "step in ms; speedup: the baseline's run / this run; "
        "phases: the steps of each kind the run has."
        + (f"\n{frame.attrs['tokens_line']}" if frame.attrs.get("tokens_line") else "")
        + "".join(f"\n{line}" for line in frame.attrs.get("unacted_notes", ()))),  # bench's note: never acted
        caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    width = _width(frame)
    table.add_column("run", no_wrap=True, min_width=width, max_width=width)
    for name in ("time", "mean step", "steady", "speedup"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("phases", overflow="fold")
    for row in frame.itertuples(index=False):
        table.add_row(run_label(row), run_duration(row.run_s), _ms(row.mean_step_s), _ms(row.step_s),
                      speedup_text(row.run_speedup), Phrases(row.run_phases))
    return fit(table)


def spread_table(frame: pd.DataFrame) -> Table:
    """Uneven workers: the median and slowest worker's compute, the wait, the step's percentiles."""
    from lionsim.reports.tables import fit

    first = frame.iloc[0]
    # a local-step run's round may be a Monte Carlo where the per-step maximum is exact: each says its own
    by_method: dict[str, list[str]] = {}  # every run named under its method: "adamw, lion: exact; diloco: ..."
    for r in frame.itertuples(index=False):
        by_method.setdefault(r.spread_method, []).append(r.strategy)
    how = first["spread_method"] if len(by_method) == 1 else "; ".join(
        f"{', '.join(dict.fromkeys(names))}: {method}" for method, names in by_method.items())
    local = (frame["local_steps"] > 1).any()
    table = Table(title=f"uneven workers: {first['compute_spread']}, {first['workers']} workers ({how})",
                  caption="ms per step. compute: the median worker's; slowest: the slowest worker's (expected); "
                          "wait: what waiting for it adds to the median worker's step; step: expected, with its p50 "
                          "and p99." + (" A local-step run (local_steps H > 1) waits once a round, at its sync: "
                                        "its slowest, wait, p50 and p99 are the round's over H (slowest: the "
                                        "round's slowest worker, whom the sync waits for)." if local else ""),
                  caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    width = _width(frame)
    table.add_column("run", no_wrap=True, min_width=width, max_width=width)
    for name in ("compute", "slowest", "wait", "step", "p50", "p99", "speedup"):
        table.add_column(name, justify="right", no_wrap=True)
    for row in frame.itertuples(index=False):
        table.add_row(run_label(row),
                      *(_ms(x) for x in (row.compute_median_s, row.compute_max_s, row.wait_s, row.step_s,
                                         row.step_p50_s, row.step_p99_s)), speedup_text(row.speedup))
    return fit(table)


def need_table(frame: pd.DataFrame) -> Table:
    """--need: the inter-node bandwidth each run needs for compute to be U of its step. A reason
    several rows share (a fabric's cap and its remedies, a cap the library priced has not) is printed
    once, under the table, each row marked [1] (need.footnoted; estimate.csv's need_note keeps each
    row's whole text)."""
    from lionsim.estimate.need import REL_TOL, busy_share, footnoted, percent, target_text
    from lionsim.reports.rates import efficiency_of, moved_words
    from lionsim.reports.tables import fit

    first = frame.iloc[0]
    u = first["need_utilisation"]
    notes, reasons = footnoted(frame.to_dict("records"))
    footnotes = "".join(escape(f" [{number}] {reason[0].upper()}{reason[1:].removesuffix('.')}.")
                        for number, reason in enumerate(reasons, 1))
    efficiency = efficiency_of(frame)
    unreachable = frame["bandwidth_needed_GBps"].isna().any()  # its definition only where a row says it
    moved = moved_words(first["network"], efficiency, "needed", "link")
    table = Table(title=f"inter-node bandwidth for compute at {target_text(u)} of the step", caption=(
        f"{moved}; solved to {REL_TOL:.0e} relative; "
        "compute: the worker's own work (forward, backward, codec, optimizer), the rest of the step waiting for "
        "the network; now: compute's share of the step on the network as given."
        + (" Unreachable: per-call latencies, intra-node exchanges or the fabric's cap keep the wait above 1 - U "
           "at any bandwidth." if unreachable else "") + footnotes
        + (f"\n{escape(why)}" if (why := need_overlap_note(frame)) else "")),
        caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    width = _width(frame)
    table.add_column("run", no_wrap=True, min_width=width, max_width=width)
    link = efficiency < 1.0  # the link's own rate beside what it moves (lionsim.reports.rates)
    # "link Gbit/s" on one line: folded, its second line read as a second bare "Gbit/s" beside the needed one
    for name in ("GB/s", "Gbit/s", *(["link Gbit/s"] if link else []), "now"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("note", overflow="fold", max_width=80 - width - 29 - 13 * link)  # the table fits 80 columns
    for row, note in zip(frame.itertuples(index=False), notes):
        needed = row.bandwidth_needed_GBps
        rates = (needed, needed * 8, *([needed * 8 / efficiency] if link else []))
        shown = [f"{x:.4g}" if x == x else "-" for x in rates]
        table.add_row(run_label(row), *shown, percent(busy_share(row._asdict()), u), note)
    return fit(table)


NO_CROSSING_WORDS = {"level": "ties everywhere", "no figure": "no time to target"}
"""The wins column of a run that never crosses 1 (lionsim.estimate.sweep.crossovers decides which,
a tie being a tie at every point); "everywhere" and "nowhere" read as they are, "partly" as its
wins_where says (the ranges where it wins)."""


def extreme_text(speedup: float, at: float, names: dict) -> str:
    """A crossover table's lowest or highest cell: the speedup, then the swept point it is at
    ("4.00x" / "at 32"); "-" where no point has a figure."""
    if not speedup == speedup:
        return "-"
    return f"{speedup_text(speedup)}\nat {names.get(at, f'{at:g}')}"


def crossover_table(crossings: pd.DataFrame, sweep: Sweep, frame: pd.DataFrame, what: str = "",
                    workers: int | None = None) -> Table | Text:
    """Where each strategy starts (or stops) beating the baseline over the sweep: per step, or in
    `what` ("time to target": --from-run's crossovers); one line where only the baseline was priced.
    `workers`: --workers, which priced the table above; a sweep over workers that leaves it out says
    its counts stand in for it there (the table above is the one --workers names: not refused, as a
    --sweep workers= beside a --workers table is how one sees both)."""
    import pandas as pd
    from lionsim.reports.capped import capped_note
    from lionsim.reports.points import labels as point_labels
    from lionsim.reports.rates import efficiency_of, moved_words
    from lionsim.reports.tables import crossing_words, said_where, speedup_text, verdicts, winning_count
    from lionsim.reports.widths import fill, fit

    baseline = frame["baseline"].iloc[0]
    if crossings.empty:  # no run but the baseline: a header with no rows said nothing
        return Text(f"nothing to cross{' in ' + what if what else ''}: only the baseline, {baseline}, was priced")
    lo, hi = sweep.values[0], sweep.values[-1]
    of = f"of {what} " if what else ""
    span = (f"{lo:g} to {hi:g} workers" if sweep.variable == "workers"  # not "workers 16 to 1024 workers"
            else f"{sweep.variable} {lo:g} to {hi:g} {sweep.unit}")
    if lo == hi:  # one value priced (--sweep bandwidth=0.125): no span to cross over
        span = f"{lo:g} workers" if sweep.variable == "workers" else f"{sweep.variable} {lo:g} {sweep.unit}"
    points = f"{len(sweep.values)} points"
    if sweep.variable == "workers" and workers is not None and workers not in sweep.values:
        points += f", the sweep's counts in place of --workers {workers:,}, which priced the table above"
    title = (f"crossovers {of}against {baseline} over {span} ({points})" if lo != hi else
             f"{what or 'speedup'} against {baseline} at {span} (one point: nothing to cross)")
    table = Table(title=title, caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    crossing = "crossover\n(workers)" if sweep.variable == "workers" else "crossover"
    rounds = rounds_of(frame)  # crossover.csv has no H: the priced rows' (run_label names each with its own)
    names = dict(zip(sweep.values, point_labels(sweep.values, sweep.variable)))  # each point as the notes say it
    named = crossings.assign(**{ROUND_STEPS: [rounds.get(f"{s}@{t}", 1) for s, t in
                                              zip(crossings["strategy"], crossings["transport"])]})
    width = _width(named)
    # the speedup's range and where it is, not its ends: a peak between them (4.00x at 32 where the ends
    # are 1.08x and 1.11x) is the figure a reader needs; one point: its speedup
    speedups = ["lowest\nspeedup", "highest\nspeedup"] if lo != hi else [f"speedup\nat {lo:g}"]
    for name in ("run", crossing, "wins", *speedups):
        # wins is words ("wins above 9.749 GB/s, ties below"): where the table is over 80 it breaks
        # between them first (fit's column), before a run name breaks after its '-'
        table.add_column(name, justify="left" if name in ("run", "wins") else "right", no_wrap=name != "wins",
                         min_width=width if name == "run" else None, max_width=width if name == "run" else None)
    # a run whose state alone outgrows its worker wins on paper only: said beside its verdict
    unfit = ({f"{s}@{t}" for s, t, fits in zip(frame["strategy"], frame["transport"], frame["memory_fits"]) if not fits}
             if "memory_fits" in frame.columns else set())
    for group in verdicts(named):
        row = group[0]
        if pd.isna(row.crossover):
            where, wins = "-", row.wins_where or NO_CROSSING_WORDS.get(row.wins, row.wins)
        elif said_where(row):  # the edges of the ties, or every turn: its crossovers, the whole verdict once
            where = ", ".join(crossing_words(r, unit=False) if sweep.variable == "workers"
                              else f"{r.crossover:.4g} {sweep.unit}" for r in group)
            wins = row.wins_where
        elif sweep.variable == "workers":  # a whole count on the winning side (estimate.sweep), its losing neighbour
            where = crossing_words(row, unit=False)
            wins = winning_count(row)
        else:
            where, wins = f"{row.crossover:.4g} {sweep.unit}", f"{row.wins} {row.crossover:.4g} {sweep.unit}"
        wins += "; does not fit (see the note above)" if f"{row.strategy}@{row.transport}" in unfit else ""
        table.add_row(run_label(row), where, wins,
                      *([extreme_text(row.speedup_worst, row.worst_at, names),
                         extreme_text(row.speedup_best, row.best_at, names)] if lo != hi
                        else [speedup_text(row.speedup_first)]))
    captions = []
    if sweep.variable == "workers" and crossings["crossover"].notna().any():
        captions.append("crossover: the worker counts either side of where the speedup crosses 1.00x (every count "
                        "between the swept ones priced; whole nodes beyond one node); wins: from the first count "
                        "that wins, or up to the last."
                        + (" A count alone: the winning count next to ties (within 0.5% of 1.00x)."
                           if (crossings["crossover"].notna() & crossings["loses_at"].isna()).any() else ""))
    if sweep.variable == "bandwidth":  # which rate the swept one is (lionsim.reports.rates)
        network = str(frame["network"].iloc[0]) if "network" in frame.columns else ""
        captions.append(moved_words(network, efficiency_of(frame), "bandwidth") + ".")
    if lo != hi:
        captions.append(f"lowest, highest: the {what + ' speedup' if what else 'speedup'}'s range over the swept "
                        f"points, each with the point it is at (the first of equals; sweep.csv: every point).")
    table.caption = " ".join(captions) or None
    if capped := capped_note(crossings, sweep.values):  # points past the library's cap repeat its figures
        table.caption = f"{table.caption}\n{capped}" if table.caption else capped
        table.caption_justify = "left"
    return fill(fit(fit(table, column="wins")))
