"""The rich table of a run's summary, as printed by `lionsim bench` and `lionsim plot`.

Kept to 80 characters wide: the full numbers (best loss, every eval metric, exact
bytes) are in summary.csv; the table shows what ranks the runs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from rich import box
from rich.table import Table

from lionsim.divergence import RULE as DIVERGED_RULE
from lionsim.numbers import plural, sig, speedup_text, step_bytes
from lionsim.reports.columns import (ACCURACY, eval_metric, label_name, metric_value, off_sim, recorded_rounds, run_label,
                                     strategy_text, workload_text)
from lionsim.reports.obtained import UNKNOWN, run_times
from lionsim.reports.proxy_note import proxy_note
from lionsim.reports.run_steps import steps_text
from lionsim.reports.summary import FINAL_FRACTION
from lionsim.reports.target_speedup import ABOVE_NOTE, shows_above, to_target_text
from lionsim.reports.warmup_only import warmup_steps
from lionsim.reports.widths import RunName, fit, fold_run, run_width
from lionsim.whole_nodes import one_node_line


def _isnan(value: float) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _num(value: float, fmt: str = ".3g") -> str:
    """Format a number, '-' for NaN (never evaluated, never reached)."""
    if _isnan(value):
        return "-"
    if fmt == ".3g":
        return sig(value)  # 1,234 and 1,000 (999.97) rather than 1.23e+03, 1e+03
    return format(value, fmt)


def _bits(value: float) -> str:
    """Bits per parameter as a plain number, 3 significant digits and never an exponent (58, 391,
    3.91, 0.0312; 1,234 above a thousand), '-' for NaN."""
    if _isnan(value):
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return np.format_float_positional(value, precision=3, fractional=False, trim="-")


def _ms(seconds: float) -> str:
    """Milliseconds in at most 4 characters below 1000 (2 decimals under 1 ms, 3 digits above)."""
    if _isnan(seconds):
        return "-"
    ms = seconds * 1e3
    if ms >= 100:
        return f"{ms:,.0f}"
    return sig(ms) if ms >= 1 else f"{ms:.2f}"


def distinct_values(summary: pd.DataFrame, col: str, show=str) -> str:
    """The distinct values of a column as `show` writes them, in order: "8", or "100/200" if runs differ."""
    return "/".join(dict.fromkeys(show(v) for v in summary[col]))


def _context(summary: pd.DataFrame, meta: dict | None = None) -> str:
    """workload, N workers, the network: on gloo/nccl the link the collectives crossed, the
    preset only priced them (as the plots' subtitles say)."""
    workload = ""
    if "workload" in summary.columns:
        workload = distinct_values(summary, "workload", workload_text) + ", "
    from lionsim.reports.titles import named_network  # the plots' own words for it

    measured = off_sim(summary)
    network = named_network(distinct_values(summary, "network"), meta, measured)
    workers = distinct_values(summary, "workers")
    return f"{workload}{plural(workers, 'worker')}, {network}"


def _steps(summary: pd.DataFrame, meta: dict | None) -> str:
    """The steps the bench asked for, and those run where it stopped before them (run_steps)."""
    return steps_text(summary["steps"], meta)


def _times(meta: dict | None) -> str:
    """How the step times were obtained, from run.json (lionsim.reports.obtained): a gloo/nccl run's
    comm measured on its link, a simulator's modelled on its network."""
    from lionsim.reports.titles import measured_on

    return run_times(meta, link=measured_on(meta))


DIVERGED_NOTE = (f"diverged at N: at step N {DIVERGED_RULE}, and the run stopped (no final loss); its times "
                 "and bytes are over the steps before.")
"""What a summary's "diverged at N" mark means (the table's caption, report.md's notes)."""

DIVERGED_SPEEDUP = ("A diverged run's speedup shows \"-\": a run that failed is no win (summary.csv keeps its "
                    "step-time ratio over the steps before).")
"""Why a diverged run's speedup cell is empty (speedup_cell), said where the table has the column."""


def diverged_note(compared: bool) -> str:
    """DIVERGED_NOTE, and DIVERGED_SPEEDUP where the table shows speedups (`compared`)."""
    return f"{DIVERGED_NOTE} {DIVERGED_SPEEDUP}" if compared else DIVERGED_NOTE


ONE_RUN = ("no speedup column: one run, so each cell's baseline is itself (1.00x says nothing); "
           "sweep more runs to compare them")
"""Where a sweep has a single run (an lr search of one strategy), why its table and report show
no speedup."""


def diverged_at(row) -> int | None:
    """The step a summary row's run diverged at (its diverged_at_step), or None."""
    at = getattr(row, "diverged_at_step", math.nan)
    return None if _isnan(at) else int(at)


WARMUP_MARK = "warm-up only"
"""The mark under a run whose every step fell inside its strategy's warm-up (run.json's
runs[].warmup_until: lionsim.reports.warmup_only)."""


def warmup_note(shows: str = "speedup and to tgt", kept: str = "summary.csv") -> str:
    """What the WARMUP_MARK means, said where a table shows one (`shows`: its columns left "-";
    `kept`: the CSV that keeps their figures)."""
    return ("warm-up only: every step fell inside the run's warm-up (a DiLoCo before its first sync, a PowerSGD "
            f"in its fp32 start), so it trained as another method: \"-\" for its {shows} ({kept} keeps "
            "the figures).")


def warmup_only(row, warm) -> bool:
    """Whether a summary row's run never left its warm-up (`warm`: labels, warmup_steps' keys); a row
    of a sweep's table names its run in one column (`run`)."""
    if not warm:
        return False
    strategy = getattr(row, "strategy", None)
    return (run_label(strategy, row.transport) if strategy is not None else getattr(row, "run", None)) in warm


def speedup_cell(row, warm=()) -> str:
    """A summary row's speedup as the tables show it: "-" where the run diverged, for its step time
    over the steps before it failed would read as a win (DIVERGED_NOTE), and where it never left its
    warm-up (`warm`: warmup_note), for its steps were another method's."""
    return "-" if diverged_at(row) is not None or warmup_only(row, warm) else speedup_text(row.speedup)


def to_target_cell(row, warm=()) -> str:
    """A summary row's to-target cell (to_target_text), "-" where it never left its warm-up."""
    return "-" if warmup_only(row, warm) else to_target_text(row)


BENCH_ONE_RUN = "no speedup columns: one run, nothing to compare it with (give more -s to compare)"
"""Why a bench of a single run shows no speedup or to-target column (its baseline is itself: 1.00x
says nothing), as a sweep of one run shows none (ONE_RUN)."""


def _target_note(summary: pd.DataFrame) -> str:
    if "target_loss" not in summary.columns or summary["target_loss"].isna().all():
        rule = summary["target_rule"].iloc[0] if "target_rule" in summary.columns else "no target"
        return f"to tgt: n/a ({rule})"
    rule = f"{summary['target_rule'].iloc[0]}, " if "target_rule" in summary.columns else ""  # older summaries: none
    return (f"to tgt: baseline's time / this run's to reach loss {summary['target_loss'].iloc[0]:.4g} ({rule}"
            f"trailing mean); not reached: the run never got there{_above_note(summary)}{_at_once_note(summary)}")


def _at_once_note(summary: pd.DataFrame) -> str:
    """Where every run reached the target at its first step (a --target-loss above where they start):
    to tgt then repeats the step speedup and says nothing of convergence."""
    steps = summary["steps_to_target"] if "steps_to_target" in summary.columns else None
    if steps is None or len(summary) < 2 or not (steps == 1).all():
        return ""
    return ("; every run reached it at its first step, so to tgt is the step speedup again: the target is "
            "above where the runs start (give a lower --target-loss)")


def _above_note(summary: pd.DataFrame) -> str:
    """What a ">" in the to tgt column means, where one shows (the baseline never got there)."""
    return f"; {ABOVE_NOTE}" if shows_above(summary) else ""


_WAIT_NOTE = "; step includes the wait for the slowest worker (--compute-spread; wait_s in summary.csv)"
"""Why the parts of a spread run's step add up to less than it (the wait has no column: one would
widen the table past 80 columns)."""


def _waited(summary: pd.DataFrame) -> bool:
    """Whether any run's step includes a wait for the slowest worker (a compute spread's: wait_s is
    0 without one, on sim and on gloo/nccl alike)."""
    return "wait_s" in summary.columns and bool((summary["wait_s"].fillna(0) > 0).any())


def _comm_paid(row) -> float:
    """The comm a summary row's step adds up (docs/time-model.md): comm_exposed_s where the summary
    has it (with --overlap the part not hidden under backward), else comm_s (older summaries)."""
    exposed = getattr(row, "comm_exposed_s", math.nan)
    return row.comm_s if _isnan(exposed) else exposed


def _beside_baseline(summary: pd.DataFrame) -> tuple[list[str], str, object] | None:
    """(each row's run label, the baseline's, the baseline's row) of a bench's summary; None where the
    summary names no baseline among its runs (the notes comparing runs with it say nothing then)."""
    baseline = summary["baseline"].iloc[0] if "baseline" in summary.columns else None
    labels = [run_label(s, t) for s, t in zip(summary["strategy"], summary["transport"])]
    if baseline not in labels:
        return None
    return labels, baseline, summary.iloc[labels.index(baseline)]


def unsettled_note(summary: pd.DataFrame, rounds: dict[str, int] | None = None) -> str:
    """The runs of a measured bench whose step differs from the baseline's by less than the two runs'
    comm can move: each books its comm as its steps' median, and where some steps take a slow path
    (a host's wait for a core) the median sits on one mode or the other, so the gap between it and
    the mean (comm_measured_s) is how far a rerun's booked step can move. Such a speedup is not a
    ranking: another run of the same bench may order them otherwise (two identical gloo benches
    read dlion-mavo@a2a-1bit 1.03x and 0.94x). A median can move by a whole mode gap, twice its gap
    to the mean where half the steps are slow. "" on sim, or where every speedup clears it."""
    if "comm_measured_s" not in summary.columns or (beside := _beside_baseline(summary)) is None:
        return ""
    labels, baseline, base = beside

    def moves(row) -> float:
        """How far a rerun can move the run's booked comm: a median on the fast mode jumps to the slow
        one, a mode gap away, which is twice its gap to the mean where half the steps are slow."""
        return 2.0 * abs(float(row.comm_measured_s) - float(row.comm_s))

    if not math.isfinite(moves(base)):
        return ""
    near = []
    for label, row in zip(labels, summary.itertuples(index=False)):
        gap = moves(row) + moves(base)
        if label != baseline and math.isfinite(gap) and abs(row.step_s - base.step_s) < gap:
            near.append((label, gap))
    if not near:
        return ""
    names = ", ".join(f"{label_name(label, rounds)} (within {_ms(gap)} ms)" for label, gap in near)
    return (f"Not a ranking: {names} step within what their comm and the baseline's can move between runs (twice "
            "the gap between each one's booked median and its measured mean, comm_measured_s: some steps' calls take "
            "a slow path, and a median can sit on either mode), so a rerun may order them otherwise; compare the "
            "means.")


def slower_notes(summary: pd.DataFrame, rounds: dict[str, int] | None = None) -> list[str]:
    """Why a run that sends fewer bytes than the baseline steps slower, worked out from the two
    runs' own columns: its encode + decode add more time than its comm saves (a codec's per-kernel
    floors outweigh the bytes it saves on a small model), or its comm saves nothing at all (a
    latency-bound exchange) while its codec still costs. The comm saved is the comm the step adds
    up (_comm_paid: comm_exposed_s, not comm_s, which with overlap includes what backward hides).
    Nothing where the codec is not the cause. `rounds`: run_label -> H, a local-step run named with it."""
    if (beside := _beside_baseline(summary)) is None:
        return []
    labels, baseline, base = beside
    notes = []
    for label, row in zip(labels, summary.itertuples(index=False)):
        if label == baseline or not (row.speedup < 1 and 0 < row.wire_bytes < base.wire_bytes):
            continue
        codec = (row.encode_s + row.decode_s) - (base.encode_s + base.decode_s)
        saved = _comm_paid(base) - _comm_paid(row)
        if not codec > max(saved, 0.0):
            continue
        hidden = any(_comm_paid(r) != r.comm_s for r in (base, row))  # the comm column is not what was saved
        if saved > 0:
            why = f"more than the {_ms(saved)} ms its comm saves{' where not hidden under backward' if hidden else ''}"
        elif -saved > 0.05 * _comm_paid(base):  # latency-bound and more calls: the smaller exchange takes longer
            measured = math.isfinite(float(getattr(row, "comm_measured_s", math.nan)))
            why = f"and its comm is {_ms(-saved)} ms slower (fewer bytes, but " + (
                "more calls, small ones on a busy host taking its slow path)" if measured else "latency-bound)")
        else:
            why = "and its comm is no faster"
        notes.append(f"{label_name(label, rounds)} sends {base.wire_bytes / row.wire_bytes:.3g}x fewer bytes yet steps slower: its "
                     f"enc adds {_ms(codec)} ms a step, {why}.")
    return notes


def one_node_note(summary: pd.DataFrame, meta: dict | None) -> str:
    """Where every worker sits on one node of the network the run priced (run.json's network), the
    line saying its inter-node link carried nothing: a profile of 8 GPUs a node and 8 workers prices
    NVLink alone, whatever its Ethernet. "" otherwise (and on gloo/nccl, where the link is real)."""
    network = (meta or {}).get("network") or {}
    per_node = network.get("workers_per_node", 1)
    if off_sim(summary):
        return ""
    workers = set(summary["workers"]) if "workers" in summary.columns else set()
    if len(workers) != 1:
        return ""
    return one_node_line(int(workers.pop()), per_node, network.get("name", "the network"))


def _baseline_note(summary: pd.DataFrame, meta: dict | None, rounds: dict[str, int] | None = None) -> str:
    """Which run is starred and why: one taken as the first run (the first -s, or the default set's
    first; no --baseline given) is named so, with how to pick another, for a plug-in listed first is
    otherwise every run's baseline unseen. "the first run", not "the first -s": a bench with no -s
    has none."""
    baseline = summary["baseline"].iloc[0] if "baseline" in summary.columns else None
    given = ((meta or {}).get("config") or {}).get("baseline")
    if baseline is None or len(summary) < 2 or given:
        return "* baseline"
    return f"* baseline: {label_name(baseline, rounds)}, the first run (--baseline RUN picks another)"


RUN_WIDTH = 15
"""Least characters of the run column (it widens to hold the longest name whole, run_width, while
the table fits 80 columns: lionsim.reports.widths.fit)."""


def summary_table(summary: pd.DataFrame, meta: dict | None = None) -> Table:
    """One row per run: final loss, last eval metric, mean ms per step by component (encode and
    decode together as enc), bytes sent per worker per step, bits per parameter up/down,
    step speedup and time-to-target speedup. The baseline is starred.

    Fits 80 columns (CI logs, pipes): the run is two lines (strategy, then @transport, broken
    after a '-' where a long name would widen the table: widths.fit) and the headers are short; the caption says what each means. `meta` (run.json) names the steps asked
    for and, on gloo/nccl, the link measured on, and each local-step run's H (`diloco H=5`)."""
    baseline = summary["baseline"].iloc[0] if "baseline" in summary.columns else None
    rounds = recorded_rounds((meta or {}).get("runs"))
    warm = warmup_steps([meta])  # runs that trained as another method: marked, no speedup
    idle = any(warmup_only(r, warm) for r in summary.itertuples(index=False))
    # Show the workload's metric (accuracy, or its own by name) where it measures one, else eval loss.
    use_acc = summary["final_eval_acc"].notna().any()
    metric, higher = eval_metric(summary)
    own = use_acc and metric != ACCURACY
    compared = len(summary) > 1  # one run alone is its own baseline: no star, no speedup columns
    table = Table(
        title=f"lionsim: {_context(summary, meta)}, {_steps(summary, meta)}",
        caption=(
            (f"{times}. " if (times := _times(meta)) != UNKNOWN else "")
            + (f"{_baseline_note(summary, meta, rounds)}. " if compared else "")
            + f"loss: mean of the last {FINAL_FRACTION:.0%} of steps. ms per step: "
            "comp(ute), enc (encode + decode), comm, upd(ate), step" + (f" ({UNKNOWN})" if times == UNKNOWN else "")
            + (_WAIT_NOTE if _waited(summary) else "")
            + ". sent: bytes per "
            "worker per step (per rank on gloo/nccl). bits: per parameter up/down. "
            + (f"speedup: baseline step / step. {_target_note(summary)}." if compared else f"{BENCH_ONE_RUN}.")
            + (f" {said}" if compared and "target_loss" in summary.columns and summary["target_loss"].notna().any()
               and (said := proxy_note(summary, str(((meta or {}).get("config") or {}).get("out") or "DIR"))) else "")
            + (f" {metric}: the workload's metric at the last evaluation, {'higher' if higher else 'lower'} is "
               "better." if own else "")
            + (f" {diverged_note(compared)}" if any(diverged_at(r) is not None for r in summary.itertuples()) else "")
            + (f" {warmup_note()}" if idle and compared else "")
            + "".join(f" {note}" for note in slower_notes(summary, rounds))
            + (f" {note}" if compared and (note := unsettled_note(summary, rounds)) else "")
            + (f" {note}" if (note := one_node_note(summary, meta)) else "")
        ),
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 0),  # the box draws one space between columns
        pad_edge=False,
        show_edge=False,  # its two edge columns go to the run names
    )
    def strategy(row, star: bool) -> str:  # with H where the run has local steps, as every run name says it
        return strategy_text(row.strategy, rounds.get(run_label(row.strategy, row.transport), 1), star)

    width = run_width([(strategy(r, True), r.transport) for r in summary.itertuples(index=False)], RUN_WIDTH)
    marks = [f"diverged at {diverged_at(r)}" for r in summary.itertuples() if diverged_at(r) is not None]
    marks += [WARMUP_MARK] if idle and compared else []
    width = max([width, *map(len, marks)])
    table.add_column("run", no_wrap=True, min_width=width, max_width=width)
    evaluated_header = (metric.replace(" ", "\n") if own else "acc") if use_acc else "eval"
    for name in ("loss", evaluated_header, "comp", "enc", "comm", "upd", "step", "sent", "bits",
                 *(("speed\nup", "to\ntgt") if compared else ())):
        table.add_column(name, justify="right", overflow="fold")
    for row in summary.itertuples(index=False):
        label = run_label(row.strategy, row.transport)

        if use_acc:
            evaluated = metric_value(row.final_eval_acc, metric)
        else:
            evaluated = _num(row.final_eval_loss, ".4f")
        run = str(fold_run(strategy(row, compared and label == baseline), row.transport))
        if diverged_at(row) is not None:
            run += f"\ndiverged at {diverged_at(row)}"
        elif compared and warmup_only(row, warm):
            run += f"\n{WARMUP_MARK}"
        table.add_row(
            RunName(run),
            _num(row.final_loss, ".3f"),
            evaluated,
            _ms(row.compute_s),
            _ms(row.encode_s + row.decode_s),
            _ms(row.comm_s),
            _ms(row.update_s),
            _ms(row.step_s),
            step_bytes(row.wire_bytes),
            f"{_bits(row.bits_per_param_up)}/{_bits(row.bits_per_param_down)}",
            *((speedup_cell(row, warm), to_target_cell(row, warm)) if compared else ()),
        )
    return fit(table)


def model_check(summary: pd.DataFrame, meta: dict | None) -> tuple[Table | None, str | None]:
    """A run's model-check table (model_check_table) and, where it leaves the model out, the line
    saying why and how to get one (None where nothing was left out), from run.json `meta`."""
    from lionsim.reports.titles import unchecked_model

    table = model_check_table(summary, (meta or {}).get("comm_model"), unchecked := unchecked_model(meta),
                              recorded_rounds((meta or {}).get("runs")))
    return table, unchecked if table is not None else None


def comm_measured(summary: pd.DataFrame) -> bool:
    """Whether a run's comm was measured on a link (a real backend of more than one rank): what
    model_check_table sets beside the model."""
    if "backend" not in summary.columns or (summary["backend"] == "sim").all():
        return False
    return not ("comm_measured_s" in summary.columns and summary["comm_measured_s"].isna().all())


def model_check_table(summary: pd.DataFrame, priced_by: str | None = None, unchecked: str | None = None,
                      rounds: dict[str, int] | None = None) -> Table | None:
    """On a real backend: per run, the measured comm beside the network model's price of the
    same collectives, and the model's error. None on sim (there the model is the time) and on
    one rank (every worker in one process: nothing crossed a process boundary, comm is priced).
    `unchecked`: why the model describes no link measured (titles.unchecked_model, which the
    caller prints): the model and error columns are left out. `rounds`: run_label -> H (a run's name)."""
    if not comm_measured(summary):
        return None
    by = priced_by or distinct_values(summary, "network")
    model = ("model = the price of those same calls by the network model the title names, its slow mode's "
             "expected extra included; error = model / measured - 1; " if unchecked is None else "")
    table = Table(
        title=f"comm measured on {distinct_values(summary, 'backend')}" + ("" if unchecked else f" vs the model ({by})"),
        caption="ms of comm per step, means over the steps past the warm-up: booked = the comm column above, each "
                "step's measured comm replaced by the median of its kind of step (a few slow calls move it little); "
                "measured = each step's own calls, each call's slowest rank between barriers, summed (slow calls "
                f"and all); {model}wait = the ranks' spread at the calls' barriers (imbalance, not comm).",
        caption_justify="left", box=box.SIMPLE_HEAD, padding=(0, 0), pad_edge=False,
    )
    names, rows = model_check_rows(summary, unchecked, rounds)
    for name in names:
        table.add_column(name, justify="left" if name == "run" else "right")
    for row in rows:
        table.add_row(*row)
    return table


def model_check_rows(summary: pd.DataFrame, unchecked: str | None = None,
                     rounds: dict[str, int] | None = None) -> tuple[tuple[str, ...], list[list[str]]]:
    """model_check_table's columns and cells (the terminal's table and report.md's alike)."""
    names = ("run", "booked", "measured", "wait") if unchecked else ("run", "booked", "measured", "model", "error", "wait")
    rows = []
    for row in summary.itertuples(index=False):
        wait = getattr(row, "barrier_wait_s", math.nan)
        measured = getattr(row, "comm_measured_s", math.nan)  # a run of an earlier release has only comm_s
        measured = row.comm_s if _isnan(measured) else measured
        cells = {"run": label_name(run_label(row.strategy, row.transport), rounds), "booked": _ms(row.comm_s), "measured": _ms(measured),
                 "model": _ms(row.comm_model_s),
                 "error": "-" if _isnan(row.comm_model_error) else f"{row.comm_model_error:+.0%}",
                 "wait": "-" if _isnan(wait) else _ms(wait)}
        rows.append([cells[name] for name in names])
    return names, rows


def crossing_words(row, unit: bool = True) -> str:
    """A worker crossover (a crossover.csv row) as the tables and reports say it: "8-16 workers", the
    two counts either side of the crossing; the winning count alone from an older crossover.csv.
    `unit` False: the counts alone ("8-16"), under a heading that names the unit (the terminal's
    table, whose run column keeps its width)."""
    at, loses = int(row.crossover), getattr(row, "loses_at", float("nan"))
    words = f"{at:,}" if loses != loses else "{:,}-{:,}".format(*sorted((at, int(loses))))
    return plural(words, "worker") if unit else words


def said_where(row) -> str:
    """A crossover.csv row's wins_where where it has one: the whole verdict of a run that turns more
    than once or wins "partly" (lionsim.estimate.sweep.crossovers), which every output says in place
    of one crossing's side; "" otherwise (an older CSV without the column too)."""
    where = getattr(row, "wins_where", "")
    return where if isinstance(where, str) else ""


def verdicts(crossings) -> list[list]:
    """crossover.csv's rows (itertuples) grouped as the tables show them: a run's rows that share one
    wins_where (its edges where it wins "partly", or each turn of a run that turns more than once) are
    one table row, its crossovers listed and its verdict said once; every other row is its own."""
    groups: list[list] = []
    for row in crossings.itertuples(index=False):
        last = groups[-1][-1] if groups else None
        if (last is not None and said_where(row) and said_where(last) == said_where(row)
                and (last.strategy, last.transport) == (row.strategy, row.transport)):
            groups[-1].append(row)
        else:
            groups.append([row])
    return groups


def winning_count(row) -> str:
    """A worker crossover's winning side (a crossover.csv row): "from 16", or "up to 120" where the
    run stops winning past it."""
    return f"{'from' if row.wins == 'above' else 'up to'} {int(row.crossover):,}"
