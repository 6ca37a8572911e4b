"""The sweep's tidy CSVs, rebuilt from the finished cells after each one finishes.

- sweep_steps.csv: every finished cell's steps.csv rows, `cell` first, then steps.csv's columns.
- sweep_summary.csv: a row per finished cell: cell, workload, seed, (with an lr axis: lr, the
  lr the cell's run trained with) workers, network, bandwidth_GBps, alpha_us, then
  lionsim.reports.summarize()'s columns computed over the cell's group (the finished cells of
  one workload, workers, network, seed and lr), against the group's baseline as a bench of
  those runs would report them (`lionsim bench --lr X`).

  Then the spread over seeds (seed_spread): seed_count, final_loss_seed_sd and
  final_eval_acc_seed_sd, the sample standard deviation over the finished seeds of the cell's
  workload, workers, network, run (and lr) (empty with one seed): one seed's accuracy does not
  rank strategies (docs/time-model.md, "What is deterministic").

Both are derived from the cell directories alone and written atomically, so they always hold
exactly the finished cells, in grid order, whatever order the cells finished in.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from lionsim.errors import LionsimError
from lionsim.network import GB, load_network
from lionsim.network.link import US
from lionsim.reports.files import write_atomic, written_together
from lionsim.reports.formats import csv_frame, write_csv
from lionsim.reports.seeds import seed_spread
from lionsim.reports.summary import NO_BASELINE, SummaryRule, pick_baseline, summarize
from lionsim.runs import RunSpec
from lionsim.sweep.cells import Cell
from lionsim.sweep.store import CellStore

STEPS_CSV = "sweep_steps.csv"
SUMMARY_CSV = "sweep_summary.csv"
CELL_COLUMNS = ["cell", "workload", "seed", "workers", "network", "bandwidth_GBps", "alpha_us"]


class SweepTables:
    """The finished cells' steps (read back from their steps.csv) and the two CSVs built from them.

    Each cell's rows are formatted once and each group summarized again only when one of its
    cells finishes, so rewriting both files after every cell stays cheap as the sweep grows."""

    def __init__(self, store: CellStore, cells: list[Cell], rule: SummaryRule,
                 runs: list[RunSpec] | tuple[RunSpec, ...] | None = None,
                 lrs: tuple[float | None, ...] = (None,)) -> None:
        """`rule` is the sweep's (lionsim.sweep.plan); `runs` (default: the cells') are the grid's,
        which pick the baseline: a shard's part, holding some of the cells, names the same
        baseline as the whole sweep. `lrs`: the grid's; with several, sweep_summary.csv has an lr
        column (a sweep of one lr keeps the columns it always had)."""
        self.store, self.cells = store, cells
        self.lr_axis = len(lrs) > 1
        self.trained_lr: dict[str, float] = {}  # cell -> the lr its run trained with (its run.json's)
        runs = runs or list(dict.fromkeys(c.run for c in cells))
        baseline = runs[pick_baseline([r.label for r in runs], [r.strategy for r in runs], rule.baseline)].label
        self.rule = dataclasses.replace(rule, baseline=baseline)
        self.baseline = baseline
        self.links = {net: load_network(net).inter for net in dict.fromkeys(c.network for c in cells)}
        self.order = {c.id: i for i, c in enumerate(cells)}
        self.steps: dict[str, pd.DataFrame] = {}
        self.header: str | None = None
        self.rows_text: dict[str, str] = {}  # cell -> its sweep_steps.csv lines
        self.summaries: dict[tuple, list[dict]] = {}  # group -> its cells' sweep_summary.csv rows

    def add(self, cell: Cell) -> None:
        steps = self.store.steps(cell.id)
        if self.lr_axis:
            self.trained_lr[cell.id] = self.store.trained_lr(cell.id)
        self.steps[cell.id] = steps
        text = csv_frame(steps.assign(cell=cell.id)[["cell", *steps.columns]]).to_csv(index=False)
        header, _, rows = text.partition("\n")
        if self.header not in (None, header):  # every steps.csv has the same columns; guard the concatenation
            raise LionsimError(f"{self.store.cells / cell.id} has other steps.csv columns than the sweep's other cells")
        self.header, self.rows_text[cell.id] = header, rows
        self.summaries[cell.group] = self._group_rows([c for c in self.cells if c.group == cell.group
                                                       and c.id in self.steps])

    def _group_rows(self, members: list[Cell]) -> list[dict]:
        steps = pd.concat([self.steps[c.id] for c in members], ignore_index=True)
        has_base = any(c.run.label == self.baseline for c in members)
        summary = summarize(steps, self.rule if has_base else dataclasses.replace(self.rule, baseline=None))
        if not has_base:
            summary[list(NO_BASELINE)] = math.nan
        by_run = {row["run"]: row for _, row in summary.iterrows()}
        rows = []
        for cell in members:
            row, link = by_run[cell.run.label], self.links[cell.network]
            lr = {"lr": self.trained_lr[cell.id]} if self.lr_axis else {}
            rows.append({"cell": cell.id, "workload": row["workload"], "seed": row["seed"], **lr,
                         "workers": row["workers"], "network": row["network"],
                         "bandwidth_GBps": link.bandwidth_Bps * link.efficiency / GB, "alpha_us": link.alpha_s / US,
                         **{k: v for k, v in row.items() if k not in CELL_COLUMNS}})
        return rows

    def steps_text(self) -> str:
        return self.header + "\n" + "".join(self.rows_text[c] for c in sorted(self.rows_text, key=self.order.get))

    def summary_frame(self) -> pd.DataFrame:
        rows = [row for group in self.summaries.values() for row in group]
        frame = pd.DataFrame.from_records(rows).sort_values("cell", key=lambda ids: ids.map(self.order), kind="stable")
        return seed_spread(frame)

    def write(self) -> pd.DataFrame | None:
        """Rewrite both CSVs (removed while no cell has finished); return the summary frame."""
        root = self.store.root
        if not self.steps:
            for name in (STEPS_CSV, SUMMARY_CSV):
                (root / name).unlink(missing_ok=True)
            return None
        summary = self.summary_frame()
        with written_together():  # both or neither: the two CSVs always list the same cells
            write_atomic(root / STEPS_CSV, lambda f: f.write(self.steps_text()))
            write_atomic(root / SUMMARY_CSV, lambda f: write_csv(f, summary))
        return summary
