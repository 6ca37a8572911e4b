"""How `lionsim sweep` looks: its progress (a rich display on a terminal, a line per finished
cell elsewhere) and the summary table printed at the end."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import pandas as pd
from rich import box
from rich.console import Console, Group
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from lionsim.divergence import RULE as DIVERGED_RULE
from lionsim.numbers import sig
from lionsim.reports.cells_rounds import cells_rounds
from lionsim.reports.columns import ACCURACY, lr_text, metric_value, strategy_text
from lionsim.reports.resuming import report_removed
from lionsim.reports.widths import RunName, fill, fit, fold_run, run_width
from lionsim.sweep import Cell, SweepEvents


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


class SweepDisplay(SweepEvents):
    """Cells done of the total, each running unit's steps, and an ETA from the units finished so far."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar: Progress | None = None
        self.units: dict[str, int] = {}  # running unit -> its bar's task
        self.ended: set[str] = set()
        self.todo = self.trained = 0
        self.steps = 1
        self.start = time.monotonic()

    def __enter__(self) -> SweepDisplay:
        if self.console.is_terminal:
            self.bar = Progress(TextColumn("{task.description:<40.40}"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[note]}"), TimeElapsedColumn(),
                                console=self.console, transient=True)
            self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def eta(self) -> str:
        """The time left, from the trainings finished in this run; "" until one has (a resumed or
        parallel sweep's first cell can finish before any of its trainings: nothing to estimate from)."""
        if not self.trained:
            return ""
        left = (time.monotonic() - self.start) / self.trained * (self.todo - self.trained)
        return f"ETA {_duration(left)}"

    def started(self, total: int, finished: int, units: int, steps: int) -> None:
        self.todo, self.steps, self.start = units, steps, time.monotonic()
        if self.bar is not None:
            self.cells = self.bar.add_task("cells", total=total, completed=finished, note=self.eta())
        elif finished:
            print(f"lionsim: resuming: {finished} of {total} cells already finished", file=sys.stderr, flush=True)

    def unit_started(self, key: str) -> None:
        if self.bar is not None and key not in self.ended and key not in self.units:
            self.units[key] = self.bar.add_task(f"  {key}", total=self.steps, note="")

    def step(self, key: str, step: int, loss: float) -> None:
        if self.bar is not None and key in self.units:
            self.bar.update(self.units[key], completed=step, note=f"loss {loss:.4f}")

    def unit_finished(self, key: str) -> None:
        self.trained += 1
        self.ended.add(key)
        if self.bar is not None:
            if key in self.units:
                self.bar.remove_task(self.units.pop(key))
            self.bar.update(self.cells, note=self.eta())

    def unit_failed(self, key: str, error: str) -> None:
        """One line now; the sweep goes on, and the CLI's last line lists every failed cell."""
        line = f"lionsim: {key} failed: {error} (recorded in failed.json; the other units go on)"
        if self.bar is not None:
            self.bar.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=sys.stderr, flush=True)

    def report_removed(self, path: Path) -> None:
        line = report_removed_line(path)
        if self.bar is not None:
            self.bar.console.print(line, markup=False, highlight=False, soft_wrap=True)
        else:
            print(line, file=sys.stderr, flush=True)

    def cell_finished(self, cell: Cell, summary: pd.DataFrame, finished: int, total: int) -> None:
        if self.bar is not None:
            self.bar.update(self.cells, completed=finished)
            return
        loss = float(summary["final_loss"].iloc[0])
        timing = ", ".join(part for part in (_duration(time.monotonic() - self.start), self.eta()) if part)
        print(f"lionsim: cell {finished}/{total} {cell.id} loss {loss:.4f} ({timing})",
              file=sys.stderr, flush=True)  # stdout: results


def report_removed_line(path: Path) -> str:
    return report_removed(path)


def _number(value: float, form: str) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, form)


def _metric_column(summary: pd.DataFrame) -> str:
    """The eval metric's column header: acc (accuracy), a workload's own metric by name, or eval
    where workloads of several metrics mix (each row then shows its own)."""
    names = set(summary["eval_metric"].dropna()) if "eval_metric" in summary.columns else set()
    if names <= {ACCURACY}:
        return "acc"
    return next(iter(names)) if len(names) == 1 else "eval"


def _metric_of(row) -> str:
    name = row.get("eval_metric", ACCURACY)
    return name if isinstance(name, str) else ACCURACY


def _ms(seconds: float) -> str:
    """Milliseconds, 3 significant digits, grouped from 1,000 up (999.97 too: never 1e+03)."""
    ms = seconds * 1e3
    return "-" if ms is None or ms != ms else sig(ms)


RUN_WIDTH = 17
"""Least characters of the run column: a label is two whole lines (fold_run), the column as
wide as the longest (run_width) while the table fits 80 columns, else broken after a '-' (fit)."""


def _parts(run, rounds: dict[str, int]) -> tuple[str, str]:
    """A run label's two lines as the tables fold it: the strategy, with H where it has local steps
    (columns.strategy_text, as every run name says it), and the transport ("" for a bare name)."""
    strategy, _, transport = str(run).partition("@")
    return strategy_text(strategy, rounds.get(str(run), 1)), transport


def _run_cell(run, rounds: dict[str, int]):
    """A run's cell: its two lines (_parts) folded to the run column (fold_run)."""
    strategy, transport = _parts(run, rounds)
    return fold_run(strategy, transport) if transport else run


def cell_records(summary: pd.DataFrame, root: Path | None) -> dict[str, dict | None]:
    """Each cell's run.json under `root`, read once for every caption that needs it (None for a missing
    or unreadable record); {} where there is no root or no cell column."""
    from lionsim.reports.cell_records import read_cells

    return read_cells(root, summary["cell"]) if "cell" in summary.columns else {}


def cells_times(summary: pd.DataFrame, root: Path | None, records: dict[str, dict | None] | None = None) -> str:
    """How the cells' step times were obtained (lionsim.reports.obtained), from each cell's run.json
    under `root` (`records`: cell_records', where the caller read them already): one phrase where every
    cell's is alike (comm on "each row's network" where the networks differ), else the older pointer
    to the cells' records."""
    from lionsim.reports.obtained import UNKNOWN, comm_pricing, priced_library, run_times
    from lionsim.reports.titles import measured_on

    records = cell_records(summary, root) if records is None else records
    if not records or None in records.values():  # a missing or unreadable record: the caption cannot vouch for it
        return f"each cell's {UNKNOWN}"
    network = "each row's network" if summary["network"].nunique() > 1 else None
    pricings = {comm_pricing(priced_library(meta)) for meta in records.values()}
    pricing = "each network's library" if len(pricings) > 1 else None  # nccl on dgx-h100, alpha-beta on 1gbe
    said = {run_times(meta, network=network, pricing=pricing, link=measured_on(meta)) for meta in records.values()}
    return said.pop() if len(said) == 1 and UNKNOWN not in said else f"each cell's {UNKNOWN}"


def cells_option_notes(records: dict[str, dict | None]) -> list[str]:
    """What each cell's bench noted of its options (run.json's option_notes: one capped, one that never
    acted as the steps ended inside the warm-up), each line once over the cells' `records`
    (cell_records); [] where no record has any (an older one, or an unreadable one)."""
    said: dict[str, None] = {}
    for meta in records.values():
        notes = (meta or {}).get("option_notes")
        said.update(dict.fromkeys(n for n in notes or () if isinstance(n, str) and n))
    return list(said)


def _diverged(summary: pd.DataFrame) -> pd.Series:
    """Whether each row's cell diverged (diverged_at_step set; an older summary has no column)."""
    if "diverged_at_step" not in summary.columns:
        return pd.Series(False, index=summary.index)
    return summary["diverged_at_step"].notna()


def sweep_title(summary: pd.DataFrame, asked: int | None = None) -> str:
    """What was swept and how many cells, as bench's title says its run: "lionsim sweep: mlp, 2/4
    workers, 1gbe/10gbe, 3 runs, 2 seeds, 20 steps: 24 cells". The steps are those the cells that
    did not diverge ran (a diverged cell's row counts the steps it lasted, which made "100/58
    steps"); where every cell diverged, `asked` (sweep.json's steps; None: none said). A diverged
    cell's row says where it diverged (sweep_table)."""
    from lionsim.reports.columns import workload_text
    from lionsim.numbers import plural
    from lionsim.reports.tables import distinct_values

    workers = distinct_values(summary, "workers")
    ran = summary[~_diverged(summary)]
    steps = ""
    if "steps" in summary.columns:  # an older summary's has none
        steps = distinct_values(ran, "steps", lambda n: str(int(n))) if len(ran) else str(asked or "")
    cells = summary["cell"].nunique() if "cell" in summary.columns else len(summary)
    workloads = distinct_values(summary, "workload", workload_text)
    return (f"lionsim sweep: {workloads}, {plural(workers, 'worker')}, "
            f"{distinct_values(summary, 'network')}, {plural(summary['run'].nunique(), 'run')}, "
            f"{plural(summary['seed'].nunique(), 'seed')}"
            + (f", {plural(summary['lr'].nunique(), 'lr')}" if "lr" in summary.columns else "")
            + (f", {plural(steps, 'step')}" if steps else "") + f": {plural(cells, 'cell')}")


def _asked(root: Path | None) -> dict:
    """The sweep.json under `root` ({} where there is none, or it is unreadable): what the sweep
    asked of its cells, beside what finished."""
    from lionsim.errors import LionsimError
    from lionsim.reports.files import read_json

    if root is None:
        return {}
    try:
        record = read_json(Path(root) / "sweep.json")
    except (LionsimError, OSError):
        return {}
    return record if isinstance(record, dict) else {}


def _asked_steps(record: dict) -> int | None:
    """The steps a sweep asked of every cell (sweep.json's bench options), or None."""
    bench = record.get("bench")
    steps = bench.get("steps") if isinstance(bench, dict) else None
    return steps if isinstance(steps, int) and not isinstance(steps, bool) else None


def _asked_runs(record: dict) -> list[str]:
    """The runs a sweep's grid asked for (sweep.json's grid.runs), [] where not recorded."""
    grid = record.get("grid")
    runs = grid.get("runs") if isinstance(grid, dict) else None
    return [r for r in runs if isinstance(r, str)] if isinstance(runs, list) else []


def _lr(value) -> str:
    """An lr cell: lr_text, as the cell ids and the report write it; "-" where a row has none."""
    return "-" if value is None or value != value else lr_text(value)


def sweep_table(summary: pd.DataFrame, root: Path | None = None, rounds: dict[str, int] | None = None,
                records: dict[str, dict | None] | None = None) -> Table:
    """A row per cell, grouped as the grid orders them; fits 80 columns. `root`: the sweep's
    directory, whose cells' run.json say how the step times were obtained (cells_times) and each
    local-step run's H (cells_rounds). A sweep over several lrs has an lr column, and a table of
    each run's best lr below (best_lr_table). `rounds`: the H the command read already (its plots
    read the same cells), and `records` the cells' run.json it read them from
    (lionsim.reports.cell_records); None: read here."""
    from lionsim.reports.tables import (ONE_RUN, WARMUP_MARK, diverged_at, diverged_note, speedup_cell,
                                        warmup_note, warmup_only)
    from lionsim.reports.warmup_only import warmup_steps

    if records is None:
        records = cell_records(summary, root)
    else:  # the summary's cells, in its order (a shard's table holds its own cells)
        records = {str(c): records.get(str(c)) for c in dict.fromkeys(summary["cell"])} if "cell" in summary else {}
    rounds = cells_rounds(root, records) if rounds is None else rounds
    many_workloads = summary["workload"].nunique() > 1
    lrs = "lr" in summary.columns
    metric = _metric_column(summary)
    compared = summary["run"].nunique() > 1  # one run alone: every row is its own baseline
    marks = {i: f"diverged at {at}" for i, row in summary.iterrows() if (at := diverged_at(row)) is not None}
    warm = warmup_steps(records.values()) if compared else {}  # runs that trained as another method
    idle = {i: WARMUP_MARK for i, row in summary.iterrows() if i not in marks and warmup_only(row, warm)}
    marks |= idle  # marked under the name as a diverged run is
    asked = _asked(root)
    # one run finished where the grid asked for more: the others' cells failed (the error line says why)
    alone = (f"no speedup column: only {summary['run'].iloc[0]} finished, the other runs' cells failed"
             if not compared and len(_asked_runs(asked)) > 1 else ONE_RUN)
    caption = (f"{cells_times(summary, root, records)}. loss: final (trailing mean); {metric}: last eval; step ms: mean per step; "
               + ("speedup: step time against the group's baseline (same workload, N, network, seed"
                  + (", lr)" if lrs else ")") if compared else alone)
               + (f". {diverged_note(compared)}" if len(marks) > len(idle) else "")
               + (f". {warmup_note('speedup', 'sweep_summary.csv')}" if idle else "")
               + "".join(f"\n{note}" for note in cells_option_notes(records)))  # bench's, once a run
    table = Table(title=sweep_title(summary, _asked_steps(asked)), caption=caption,
                  box=box.SIMPLE_HEAD, padding=(0, 1), collapse_padding=True, pad_edge=False, caption_justify="left")
    if many_workloads:
        table.add_column("workload")
    width = max([run_width([_parts(r, rounds) for r in summary["run"]], RUN_WIDTH), *map(len, marks.values())])
    table.add_column("run", no_wrap=True, min_width=width, max_width=width)
    for name in ("N", "network", "seed", *(["lr"] if lrs else []), "loss", metric, "step ms",
                 *(["speedup"] if compared else [])):
        table.add_column(name, justify="left" if name == "network" else "right")
    for i, row in summary.iterrows():
        cells = [row["workload"]] if many_workloads else []
        run = _run_cell(row["run"], rounds)
        if i in marks:  # as bench's table marks it, under the name
            run = RunName(f"{run}\n{marks[i]}")
        table.add_row(*cells, run, str(row["workers"]), str(row["network"]), str(row["seed"]),
                      *([_lr(row["lr"])] if lrs else []),
                      _number(row["final_loss"], ".3f"), metric_value(row["final_eval_acc"], _metric_of(row)),
                      _ms(row["step_s"]), *([speedup_cell(row, warm)] if compared else []))
    more = [t for t in (seed_table(summary, rounds), best_lr_table(summary, rounds)) if t is not None]
    return Group(fit(table), *(part for t in more for part in ("", t))) if more else fit(table)


def best_lr_table(summary: pd.DataFrame, rounds: dict[str, int] | None = None) -> Table | None:
    """Where the sweep has several lrs: each run's best lr per workload and N (lionsim.reports.best_lr:
    the lowest final loss, said in the caption) and its final loss at every lr tried. None otherwise.
    `rounds`: run_label -> H (cells_rounds)."""
    from lionsim.reports.best_lr import RULE, at_edge_notes, best_lrs, has_lr_axis, tried_text

    if not has_lr_axis(summary):
        return None
    best = best_lrs(summary)
    many_workloads = best["workload"].nunique() > 1
    table = Table(title="best lr per run", box=box.SIMPLE_HEAD, padding=(0, 1), collapse_padding=True,
                  pad_edge=False, caption_justify="left",
                  caption=f"{RULE}. loss at each lr: lr=final loss (diverged: in a cell {DIVERGED_RULE})."
                  + "".join(f"\n{note}." for note in at_edge_notes(best, rounds)))
    if many_workloads:
        table.add_column("workload")
    rounds = rounds or {}
    width = run_width([_parts(r, rounds) for r in best["run"]], RUN_WIDTH)
    table.add_column("run", no_wrap=True, min_width=width, max_width=width)
    for name in ("N", "best lr", "loss", "loss at each lr"):
        table.add_column(name, justify="left" if name == "loss at each lr" else "right")
    for row in best.itertuples(index=False):
        tried = tried_text(row.tried, 3, "  ")
        table.add_row(*([row.workload] if many_workloads else []), _run_cell(row.run, rounds),
                      str(row.workers), _lr(row.lr) + (" (all diverged)" if row.diverged else ""),
                      _number(row.final_loss, ".3f"), tried)
    words = "loss at each lr"  # the column that wraps (between its lrs) where the table is too wide
    return fill(fit(table, column=words), column=words)  # its caption wraps at the width of the table above


def seed_table(summary: pd.DataFrame, rounds: dict[str, int] | None = None) -> Table | None:
    """Where the sweep has several seeds: per workload, run, N and network, the final loss and
    eval metric as mean ± sample standard deviation over the finished seeds. None with one seed.
    `rounds`: run_label -> H (cells_rounds)."""
    if summary["seed"].nunique() < 2:
        return None
    many_workloads = summary["workload"].nunique() > 1
    metric = _metric_column(summary)
    table = Table(title="across seeds: mean ± sd", box=box.SIMPLE_HEAD, padding=(0, 1), collapse_padding=True,
                  pad_edge=False, caption_justify="left",
                  caption="sd: sample standard deviation over the seeds (pp: percentage points). One seed's accuracy does not rank "
                          "strategies: where two runs' means differ by less than their sd, the seeds do not tell "
                          "them apart.")
    if many_workloads:
        table.add_column("workload")
    lrs = "lr" in summary.columns
    groups = list(summary.groupby(["workload", "run", "workers", "network", *(["lr"] if lrs else [])], sort=False))
    rounds = rounds or {}
    width = run_width([_parts(key[1], rounds) for key, _ in groups], RUN_WIDTH)
    table.add_column("run", no_wrap=True, min_width=width, max_width=width)
    for name in ("N", "network", *(["lr"] if lrs else []), "seeds", "loss", metric):
        table.add_column(name, justify="left" if name == "network" else "right")
    any_diverged = False
    for (workload, run, workers, network, *lr), rows in groups:
        name = _metric_of(rows.iloc[0])
        diverged = int(rows["diverged_at_step"].notna().sum()) if "diverged_at_step" in rows.columns else 0
        any_diverged = any_diverged or diverged > 0
        seeds = str(rows["seed"].nunique()) + (f" ({diverged} diverged)" if diverged else "")
        table.add_row(*([workload] if many_workloads else []), _run_cell(run, rounds),
                      str(workers), str(network), *([_lr(lr[0])] if lrs else []), seeds,
                      _spread(rows["final_loss"], lambda v: f"{v:.3f}"),
                      _spread(rows["final_eval_acc"], lambda v: metric_value(v, name)))
    if any_diverged:
        table.caption += (f" K diverged: K of the seeds diverged ({DIVERGED_RULE}; diverged_at_step); the loss and "
                          f"{metric} are the other seeds'.")
    return fit(table)


def _spread(values: pd.Series, show) -> str:
    """"58.7% ± 1.9 pp": the mean and sample sd of `values`, each shown by `show` (an sd of percentages in
    percentage points: "± 1.9%" read as a share of the mean); one value alone as is."""
    values = values.dropna()
    if values.empty:
        return "-"
    if len(values) == 1:
        return show(float(values.iloc[0]))
    sd = show(float(values.std(ddof=1)))
    return f"{show(float(values.mean()))} ± {sd.removesuffix('%') + ' pp' if sd.endswith('%') else sd}"
