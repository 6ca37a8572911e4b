"""Each run's best learning rate in a sweep with an lr axis, and the sweep seen at those lrs.

A sweep with several lrs (`lionsim sweep --lr 0.0003,0.001`) has an `lr` column in
sweep_summary.csv: the lr each cell's run trained with, and each cell is summarised with the
other runs at its lr (a `lionsim bench --lr X`). Runs want different lrs (Lion's is typically
3-10x smaller than AdamW's: Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms",
arXiv 2302.06675), so comparing them at one lr ranks the lr, not the method. Here:

- best_lrs: per workload, worker count and run, the lr of the lowest final loss (the trailing
  mean of a cell's last 10% of steps), averaged over its seeds and networks (a network changes
  the modelled time, not the training); an lr at which a cell diverged is never chosen (unless
  every lr diverged: then the one that lasted longest); ties go to the smaller lr. Final loss,
  not time to target: each lr's cells have their own default target (the baseline's loss at
  that lr), which does not compare across lrs, while every lr runs the same steps.
- at_best_lr: the cells of each run at its best lr, summarised again together per workload,
  workers, network and seed as one bench of those runs would (speedups and the default target
  against the baseline at its own best lr). The plots, the report's time to target and
  `estimate --from-run` read a sweep with an lr axis through it.

The comparison is optimistic: each lr is picked on the same seeds and cells it is then compared
on (selection bias); more seeds, or picking on one seed and comparing on others, reduces it.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from lionsim.reports.columns import label_name, lr_text, run_label
from lionsim.reports.seeds import seed_spread
from lionsim.reports.summary import FINAL_FRACTION, NO_BASELINE, SummaryRule, summarize

BY = ["workload", "workers", "run"]
"""One best lr for each of these."""
GROUP = ["workload", "workers", "network", "seed"]
"""Cells summarised together (one bench of every run)."""
RULE = (f"best lr: the lr of a run's lowest final loss (the mean of its last {FINAL_FRACTION:.0%} of steps), "
        "averaged over seeds and networks, per workload and worker count; an lr at which a cell diverged is "
        "never chosen")
"""How best_lrs chooses, as the tables and the report say it."""
NOTE = "each run at its best lr (lowest final loss)"
"""What a plot drawn at_best_lr says in its subtitle."""
CHOSEN = "at_best_lr"
"""The column at_best_lr marks its frames with (1 on every row)."""


def has_lr_axis(summary: pd.DataFrame) -> bool:
    """Whether `summary` (sweep_summary.csv's rows) is a sweep over several lrs."""
    return "lr" in summary.columns and summary["lr"].nunique() > 1


def _runs(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(run=[run_label(s, t) for s, t in zip(frame["strategy"], frame["transport"])])


def best_lrs(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per workload, workers and run: its best `lr` (module doc), `final_loss` there (mean
    over its cells), `seeds`, `diverged` (1: every lr diverged, the longest-lasting chosen) and
    `tried`: lr -> mean final loss (inf where a cell diverged)."""
    rows = []
    for (workload, workers, run), cells in _runs(summary).groupby(BY, sort=False):
        tried, lasted = {}, {}
        for lr, at in cells.groupby("lr", sort=True):
            died = at["diverged_at_step"].dropna() if "diverged_at_step" in at.columns else pd.Series(dtype=float)
            loss = float(at["final_loss"].mean())
            tried[float(lr)] = loss if died.empty and math.isfinite(loss) else math.inf
            lasted[float(lr)] = float(died.mean()) if len(died) else math.inf
        finite = {lr: loss for lr, loss in tried.items() if math.isfinite(loss)}
        best = min(finite, key=finite.get) if finite else max(lasted, key=lasted.get)
        rows.append({"workload": workload, "workers": workers, "run": run, "lr": best,
                     "final_loss": tried[best] if finite else math.nan, "seeds": int(cells["seed"].nunique()),
                     "diverged": int(not finite), "tried": tried})
    return pd.DataFrame.from_records(rows, columns=[*BY, "lr", "final_loss", "seeds", "diverged", "tried"])


def _rule(summary: pd.DataFrame) -> SummaryRule:
    """The sweep's summary rule, read back from its rows: its baseline, and --target-loss where given."""
    rules = set(summary["target_rule"].dropna()) if "target_rule" in summary.columns else set()
    given = rules == {"--target-loss"}
    return SummaryRule(baseline=str(summary["baseline"].dropna().iloc[0]) if summary["baseline"].notna().any() else None,
                       target_loss=float(summary["target_loss"].dropna().iloc[0]) if given else None)


def at_best_lr(summary: pd.DataFrame, steps: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary, steps) of the cells of each run at its best lr (best_lrs), every group (GROUP)
    summarised again from `steps` (sweep_steps.csv's rows) as one bench of those cells; both
    marked with a CHOSEN column. A sweep without an lr axis comes back as it is."""
    if not has_lr_axis(summary):
        return summary, steps
    summary = _runs(summary)
    best = {tuple(row[:3]): row[3] for row in best_lrs(summary)[[*BY, "lr"]].itertuples(index=False)}
    chosen = summary[[best.get((w, n, r)) == lr for w, n, r, lr in
                      zip(summary["workload"], summary["workers"], summary["run"], summary["lr"])]]
    rule = _rule(summary)
    by_cell = dict(tuple(steps.groupby("cell", sort=False)))
    rows = []
    for _, group in chosen.groupby(GROUP, sort=False):
        frame = pd.concat([by_cell[c].drop(columns="cell") for c in group["cell"]], ignore_index=True)
        has_base = rule.baseline in set(group["run"])
        again = summarize(frame, rule if has_base else dataclasses.replace(rule, baseline=None))
        if not has_base:
            again[list(NO_BASELINE)] = math.nan
        by_run = {row["run"]: row for _, row in again.iterrows()}
        for _, row in group.iterrows():
            rows.append({**row.to_dict(), **by_run[row["run"]].to_dict()})
    order = {cell: i for i, cell in enumerate(summary["cell"])}
    frame = pd.DataFrame.from_records(rows).sort_values("cell", key=lambda c: c.map(order), kind="stable")
    frame = seed_spread(frame.reset_index(drop=True)).assign(**{CHOSEN: 1})
    kept = steps[steps["cell"].isin(set(frame["cell"]))].assign(**{CHOSEN: 1})
    return frame, kept


LEGEND_COUNTS = 3
"""A legend lists a run's lr per worker count up to this many counts; past them it points to the report."""


def chosen_lr_words(chosen: pd.DataFrame) -> dict[str, str]:
    """run -> the lr a plot draws it at, for its legend, from at_best_lr's rows of one workload:
    `lr 0.01` where every worker count chose it, `lr 0.001 at N=2, 0.01 at N=4` where they differ,
    and past LEGEND_COUNTS counts `lr per worker count in the report` (its best-lr table lists
    them). {} for a sweep without an lr axis (no CHOSEN column)."""
    if CHOSEN not in chosen.columns:
        return {}
    words = {}
    for run, rows in _runs(chosen).groupby("run", sort=False):
        by = rows.groupby("workers", sort=True)["lr"].first()
        if by.nunique() == 1:
            words[run] = f"lr {lr_text(by.iloc[0])}"
        elif len(by) <= LEGEND_COUNTS:
            words[run] = "lr " + ", ".join(f"{lr_text(lr)} at N={n}" for n, lr in by.items())
        else:
            words[run] = "lr per worker count in the report"
    return words


def at_edge_notes(best: pd.DataFrame, rounds: dict[str, int] | None = None) -> list[str]:
    """One line for each of best_lrs' rows whose best lr is the smallest or largest it tried (the
    loss may fall further past it: the ranking can change), as the terminal's caption and the
    report both say it: `lion@fp32-allreduce, N=2: best lr is the largest tried (0.5): extend the
    grid`. Not where every lr diverged (no best), nor past an lr that diverged (the grid's edge
    there is the divergence). `rounds`: run_label -> H, a local-step run named with it."""
    many = best["workload"].nunique() > 1
    notes = []
    for row in best.itertuples(index=False):
        lrs = sorted(row.tried)
        if row.diverged or len(lrs) < 2 or row.lr not in (lrs[0], lrs[-1]):
            continue
        side = "smallest" if row.lr == lrs[0] else "largest"
        where = f"{row.workload}, " if many else ""
        notes.append(f"{where}{label_name(row.run, rounds)}, N={row.workers}: best lr is the {side} tried ({lr_text(row.lr)}): "
                     "extend the grid")
    return notes


def tried_text(tried: dict[float, float], digits: int, sep: str) -> str:
    """A run's final loss at each lr it tried (best_lrs' `tried`), as the terminal's table and the
    report both write it: `0.001=2.164`, `diverged` where a cell did; `digits` those of the
    table's own loss column (3 in the terminal, 4 in the report)."""
    return sep.join(f"{lr_text(lr)}={'diverged' if loss == math.inf else format(loss, f'.{digits}f')}"
                    for lr, loss in tried.items())


def best_lr_markdown(summary: pd.DataFrame, rounds: dict[str, int] | None = None) -> str:
    """The report's section: each run's best lr per workload and N, its final loss at every lr; a
    local-step run named with its H (`rounds`: run_label -> H)."""
    from lionsim.reports.md import md_table

    best = best_lrs(summary)
    many = best["workload"].nunique() > 1
    rows = []
    for row in best.itertuples(index=False):
        tried = tried_text(row.tried, 4, ", ")
        chosen = lr_text(row.lr) + (" (every lr diverged; the longest-lasting)" if row.diverged else "")
        loss = "n/a" if not math.isfinite(row.final_loss) else format(row.final_loss, ".4f")
        rows.append([*([row.workload] if many else []), label_name(row.run, rounds), str(row.workers), f"**{chosen}**", loss, tried])
    table = md_table([*(["workload"] if many else []), "run", "workers", "best lr", "final loss", "final loss at each lr (lr=loss)"],
                     rows)
    edges = "".join(f"\n\n- {note}" if i == 0 else f"\n- {note}" for i, note in enumerate(at_edge_notes(best, rounds)))
    return (f"{table}{edges}\n\n{RULE[0].upper()}{RULE[1:]}; ties go to the smaller lr. Where the sweep compares runs "
            "below (time to target, accuracy by worker count) and in its plots, each run is at its best lr, its "
            "speedups against the baseline at the baseline's own best lr. That is optimistic: each lr is picked on "
            "the same seeds and cells it is then compared on (selection bias); more seeds, or picking on one seed "
            "and comparing on others, reduces it.")
