"""`lionsim estimate --from-run DIR`: the convergence a bench run or a sweep measured, read from its files.

DIR is one of

    a finished bench run    run.json with status "complete", and summary.csv (or steps.csv, summarised
                            again under the run's own rule: lionsim.reports.summary.run_summary)
    a finished sweep root   sweep.json and sweep_summary.csv holding every cell of its grid

and anything else is one LionsimError line. What is read of it, per trained run (strategy@transport)
and cell (a bench run is one cell; a sweep's cell is one workload, worker count, network and seed):
its steps to the cell's target loss, and the cell's baseline's (a sweep over several lrs: each run at
its best lr, lionsim.reports.best_lr). A sweep's networks share one training
(lionsim.sweep books each unit's training on every network), so its steps to target are read from its
first network's cells; its seeds are cells of their own. A cell whose baseline did not reach its
target has nothing to scale from and is left out (and counted); when no cell is left, or a sweep holds
more than one workload, or a sweep is not finished, the read fails in one line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from lionsim.errors import LionsimError, json_type
from lionsim.reports.best_lr import NOTE, at_best_lr, at_edge_notes, best_lrs, has_lr_axis
from lionsim.reports.columns import run_label
from lionsim.estimate.plain import FROM_RUN_ACCEPTED, check_from_run
from lionsim.reports.files import META_FILE, STEPS_FILE, SUMMARY_FILE, read_csv, read_json
from lionsim.reports.warmup_only import warmup_steps
from lionsim.reports.cell_records import CELLS, read_cells

SWEEP_FILE = "sweep.json"
SWEEP_SUMMARY = "sweep_summary.csv"
NEEDS = ["strategy", "transport", "workers", "workload", "steps_to_target", "target_loss"]
"""summary.csv columns --from-run reads, and `baseline` (sweep_summary.csv also: cell, seed, network)."""
ACCEPTED = FROM_RUN_ACCEPTED
"""(Said before torch loads, by lionsim.estimate.plain: the file names above, spelt out there.)"""


@dataclass(frozen=True, slots=True)
class Reach:
    """One trained run's steps to target in one cell."""

    label: str
    """strategy@transport as it was trained."""
    strategy: str
    workers: int
    seed: int
    steps: float
    """Steps to the cell's target; NaN: it did not reach it."""
    baseline_steps: float
    """The cell's baseline's steps to the same target (finite: cells without one are left out)."""
    diverged_at: float = math.nan
    """The step it diverged at (lionsim.divergence; NaN: it did not)."""


@dataclass(frozen=True, slots=True)
class Measured:
    """What a finished run or sweep measured of convergence, and where it came from."""

    path: str
    """DIR as given."""
    kind: str
    """"bench run" or "sweep"."""
    workload: str
    baseline: str
    """The run's (every cell's) baseline: strategy@transport."""
    target: str
    """The target loss in words: the run's figure and rule, or a sweep's range over its cells."""
    target_loss: float
    """The target loss where every cell has the same one; NaN where they differ."""
    labels: tuple[str, ...]
    """The trained runs, in the run's order."""
    reaches: tuple[Reach, ...]
    cells: int
    """Cells read (one per worker count and seed); `left_out` more had a baseline that did not reach."""
    left_out: int = 0
    options: dict[str, dict] = field(default_factory=dict)
    """Each trained run's resolved strategy options (run.json), where recorded."""
    params: float = math.nan
    """Parameters of the model it trained (summary.csv's params; NaN where not recorded)."""
    common_loss: float = math.nan
    """The highest smoothed final loss of its runs (in every cell): the loss every run got to, set by the
    worst run, so recorded, never recommended as a target (NaN: not recorded, or none finite)."""
    argv: tuple[str, ...] = ()
    """The command that trained it (run.json's or sweep.json's argv; empty where not recorded)."""
    strategies: tuple[str, ...] = ()
    """The -s list it trained, bench's defaults filled in where none was given: run.json's
    config.strategy, a sweep's grid runs (empty where not recorded)."""
    cwd: str | None = None
    """The folder its command ran in, where recorded (argv's relative paths are there)."""
    warmup_until: dict[str, int] = field(default_factory=dict)
    """Runs whose every trained step fell inside their warm-up (run.json's runs[].warmup_until, in
    any cell): label -> the first step past it. Their steps to target are not their method's."""
    momentum_sync: str = "never"
    """The --momentum-sync it trained with (run.json's config, sweep.json's bench): the Lion family's
    steps to target are that sync's, so the estimate prices it where the user gives none."""
    lr_edges: tuple[str, ...] = ()
    """A sweep over lrs: its warnings that a run's best lr is the smallest or largest it tried
    (lionsim.reports.best_lr.at_edge_notes), which the estimate repeats: its figures may move."""

    @property
    def workers(self) -> tuple[int, ...]:
        """The measured worker counts, ascending."""
        return tuple(sorted({r.workers for r in self.reaches}))


def check_trained(measured: Measured, runs: list[tuple[str, str]]) -> None:
    """The runs (strategy, transport) an estimate was given: at least one of their strategies was
    trained in `measured`, or one line refusing the -s list (the bad value: the run directory is sound)
    and naming the strategies the run did train. A mix keeps
    its untrained rows, marked "not trained" beside the trained ones' figures (to_target.Convergence.match:
    a strategy matches by name where both transports carry the same values); all untrained would print a table of dashes."""
    trained = {label.split("@", 1)[0] for label in measured.labels}
    if any(strategy in trained for strategy, _ in runs):
        return
    given = list(dict.fromkeys(strategy for strategy, _ in runs))  # the bad value: the -s list, as -s takes it
    raise LionsimError(f"bad -s {','.join(given)}: --from-run {measured.path} did not train "
                       f"{'them' if len(given) > 1 else 'it'}; accepted: the strategies it trained "
                       f"({', '.join(measured.labels)}), or no -s to price them all")


def as_trained(measured: Measured, specs: list[str]) -> list[str]:
    """The -s list (split_specs' canonical names) with each bare NAME that DIR trained replaced by the
    runs it trained NAME as (every one, where it trained several): what a user pricing "the dlion-mavo
    the run trained" means, rather than the strategy's default transport, which the run may never have
    trained. NAME@TRANSPORT stays as given: another wire on the same optimizer is priced on the trained
    run's steps to target where both carry the same values, and its note names that run; one that
    rounds them gets no figure (docs/time-to-target.md). A bare name DIR did
    not train stays bare (check_trained refuses a list of only those); a trained run the list already
    names is not added twice."""
    out: list[str] = []
    for spec in specs:
        trained = [] if "@" in spec else [label for label in measured.labels if label.split("@", 1)[0] == spec]
        if not trained:
            out.append(spec)  # as given: parse_runs refuses one given twice
        out += [label for label in trained if label not in out and label not in specs]
    return out


def _fail(path: Path, why: str) -> LionsimError:
    return LionsimError(f"bad --from-run {path}: {why}; accepted: {ACCEPTED}")


def load(path: str | Path, target_loss: float | None = None) -> Measured:
    """Read DIR (module doc); every problem is one LionsimError line. `target_loss`: measure each
    run's steps to target again at that loss, from DIR's loss curves (lionsim.estimate.retarget)."""
    if target_loss is not None:
        from lionsim.estimate.retarget import check_target

        target_loss = check_target(target_loss)
    where = Path(path)
    check_from_run(where)
    if (where / SWEEP_FILE).is_file():
        return _sweep(where, str(path), target_loss)
    if (where / META_FILE).is_file():
        return _bench(where, str(path), target_loss)
    raise _fail(where, f"it holds neither {META_FILE} nor {SWEEP_FILE}")


def _read(path: Path, needs: list[str]) -> pd.DataFrame:
    """A summary CSV with the columns `needs` (numbers where they are numbers) and `baseline` (a name)."""
    frame = read_csv(path, needs)
    if "baseline" not in frame.columns:
        raise LionsimError(f"{path} is missing column(s): baseline; is it a lionsim {path.name}?")
    return frame


def _json(path: Path) -> dict:
    meta = read_json(path)
    if not isinstance(meta, dict):
        raise LionsimError(f"bad --from-run: {path} holds {json_type(meta)}; expected an object")
    return meta


def _bench(where: Path, given: str, target_loss: float | None = None) -> Measured:
    meta = _json(where / META_FILE)
    if meta.get("command", "bench") != "bench":
        raise _fail(where, f"its {META_FILE} is a `lionsim {meta.get('command')}` record")
    status = meta.get("status")
    if status != "complete":
        raise _fail(where, f"the run is {status or 'of unknown status'}, not finished")
    if (where / SUMMARY_FILE).is_file() and target_loss is None:
        summary = _read(where / SUMMARY_FILE, NEEDS)
    elif (where / STEPS_FILE).is_file():  # the run's own rule, as `lionsim report` would summarise it
        from lionsim.estimate.retarget import bench_meta
        from lionsim.reports.files import load_run
        from lionsim.reports.summary import run_summary

        steps, _, _ = load_run(where)
        summary = run_summary(steps, meta if target_loss is None else bench_meta(meta, target_loss))
    elif target_loss is not None:
        raise _fail(where, f"--target-loss re-reads the loss curves, and it holds no {STEPS_FILE}")
    else:
        raise _fail(where, f"it holds neither {SUMMARY_FILE} nor {STEPS_FILE}")
    if summary.empty:
        raise _fail(where, f"its {SUMMARY_FILE} has no rows")
    labels = [run_label(s, t) for s, t in zip(summary["strategy"], summary["transport"])]
    baseline = str(summary["baseline"].iloc[0])
    if baseline not in labels:
        raise _fail(where, f"its baseline {baseline} is not one of its runs ({', '.join(labels)})")
    base = summary.iloc[labels.index(baseline)]
    target = float(base["target_loss"])
    rule = str(base["target_rule"]) if "target_rule" in summary.columns else "the run's target"
    if math.isfinite(diverged := _diverged(base)):
        raise _diverged_baseline(given, baseline, f"at step {diverged:.0f}", summary, labels)
    if target_loss is not None:  # a target the baseline is at from its first step compares nothing
        from lionsim.estimate.retarget import check_not_at_once, first_loss, lowest_reached

        check_not_at_once(target_loss, baseline, [first_loss(steps, baseline)], [lowest_reached(steps, baseline)])
    if not math.isfinite(float(base["steps_to_target"])) and target_loss is not None:  # the value at fault
        from lionsim.estimate.retarget import lowest_reached, unreached

        raise unreached(target_loss, baseline, [lowest_reached(steps, baseline)])
    if not math.isfinite(float(base["steps_to_target"])):
        raise LionsimError(f"bad --from-run {given}: the run's baseline {baseline} did not reach its target loss "
                           f"{target:.4g} ({rule}): no steps to scale the others by; give a target its baseline "
                           "reaches (--target-loss here reads its loss curves again)")
    workers = int(base["workers"])
    reaches = tuple(Reach(label=label, strategy=str(row.strategy), workers=workers, seed=int(getattr(row, "seed", 0)),
                          steps=float(row.steps_to_target), baseline_steps=float(base["steps_to_target"]),
                          diverged_at=_diverged(row))
                    for label, row in zip(labels, summary.itertuples(index=False)))
    options = {entry["run"]: entry.get("options") or {} for entry in meta.get("runs") or []
               if isinstance(entry, dict) and "run" in entry}
    warm = warmup_steps([meta])
    return Measured(path=given, kind="bench run", workload=str(base["workload"]), baseline=baseline,
                    target=f"{target:.4g} ({rule})", target_loss=target, labels=tuple(labels), reaches=reaches,
                    cells=1, options=options, argv=_argv(meta), strategies=_inner(meta, "config", "strategy"),
                    cwd=_text(meta.get("cwd")), momentum_sync=_sync(meta, "config"), warmup_until=warm,
                    **_size_and_common_loss(summary))


def _sweep(where: Path, given: str, target_loss: float | None = None) -> Measured:
    record = _json(where / SWEEP_FILE)
    if record.get("kind", "sweep") != "sweep":
        raise _fail(where, f"its {SWEEP_FILE} is a {record.get('kind')} record")
    if not (where / SWEEP_SUMMARY).is_file():
        if (where / "parts").is_dir():  # a sharded sweep (lionsim.sweep.shards)
            raise _fail(where, f"a sharded sweep root not merged yet: `lionsim sweep merge {where}` first")
        raise _fail(where, f"a sweep root with no {SWEEP_SUMMARY}: no cell has finished")
    summary = _read(where / SWEEP_SUMMARY, ["cell", "seed", "network", *NEEDS])
    expected = record.get("cells")
    if (isinstance(expected, int) and len(summary) < expected) or (where / "failed.json").is_file():
        raise _fail(where, f"the sweep is not finished ({len(summary)} of {expected} cells; rerun its "
                           "`lionsim sweep` command to finish it)")
    workloads = list(dict.fromkeys(map(str, summary["workload"])))
    if len(workloads) > 1:
        raise LionsimError(f"bad --from-run {given}: the sweep trained {len(workloads)} workloads "
                           f"({', '.join(workloads)}); one workload's convergence prices a run: sweep one workload")
    at_best = has_lr_axis(summary)
    # a best lr at the grid's edge may move with a wider grid, and every figure with it: said again
    edges = tuple(at_edge_notes(best_lrs(summary))) if at_best else ()
    if at_best:  # several lrs: each run's convergence at its best lr (lionsim.reports.best_lr)
        summary = at_best_lr(summary, read_csv(where / "sweep_steps.csv", ["cell"]))[0]
    first_network = summary["network"].iloc[0]
    summary = summary[summary["network"] == first_network]  # every network books the same training
    labels = list(dict.fromkeys(run_label(s, t) for s, t in zip(summary["strategy"], summary["transport"])))
    baselines = list(dict.fromkeys(map(str, summary["baseline"])))
    if len(baselines) != 1 or baselines[0] not in labels:
        raise _fail(where, f"its cells name baselines {', '.join(baselines)}, not one of its runs")
    baseline = baselines[0]
    summary = summary.assign(label=[run_label(s, t) for s, t in zip(summary["strategy"], summary["transport"])])
    if target_loss is not None:
        from lionsim.estimate.retarget import (check_not_at_once, first_loss, lowest_reached, sweep_readings,
                                               sweep_summary)

        summary = sweep_summary(where, summary, target_loss, given)
        groups = summary[["workers", "seed"]].drop_duplicates().shape[0]
        check_not_at_once(target_loss, baseline, *sweep_readings(where, summary, baseline, first_loss, lowest_reached),
                          groups)
    reaches, cells, left_out = [], 0, 0
    for (workers, seed), group in summary.groupby(["workers", "seed"], sort=True):
        base = group[group["label"] == baseline]
        base_steps = float(base["steps_to_target"].iloc[0]) if len(base) else math.nan
        if not math.isfinite(base_steps):
            left_out += 1
            continue
        cells += 1
        reaches += [Reach(label=row.label, strategy=str(row.strategy), workers=int(workers), seed=int(seed),
                          steps=float(row.steps_to_target), baseline_steps=base_steps, diverged_at=_diverged(row))
                    for row in group.itertuples(index=False)]
    targets = summary.loc[summary["label"] == baseline, "target_loss"].astype(float)
    base_rows = summary[summary["label"] == baseline]
    if not reaches and len(base_rows) and base_rows.apply(_diverged, axis=1).map(math.isfinite).all():
        raise _diverged_baseline(given, baseline, "in the sweep's one cell" if left_out == 1 else
                                 f"in all of the sweep's {left_out:,} cells", summary,
                                 list(summary["label"]))
    if not reaches and target_loss is not None:  # the value at fault is the target, not DIR
        from lionsim.estimate.retarget import lowest_reached, sweep_readings, unreached

        raise unreached(target_loss, baseline, sweep_readings(where, summary, baseline, lowest_reached)[0], left_out)
    if not reaches:
        missed = ("did not reach its target in the sweep's one cell" if left_out == 1 else
                  f"reached its target in none of the sweep's {left_out:,} cells")
        raise LionsimError(f"bad --from-run {given}: the baseline {baseline} {missed}: no steps to scale the others by")
    fixed = bool(targets.nunique() == 1)
    target = (f"{targets.iloc[0]:.4g} in every cell" + (" (--target-loss)" if target_loss is not None else "")
              if fixed else
              f"each cell's own ({baseline}'s loss late in its run: {targets.min():.4g} to {targets.max():.4g})")
    target += f"; {NOTE}" if at_best else ""
    records = _cell_records(where, summary)
    return Measured(path=given, kind="sweep", workload=workloads[0], baseline=baseline, target=target,
                    target_loss=float(targets.iloc[0]) if fixed else math.nan, labels=tuple(labels),
                    reaches=tuple(reaches), cells=cells, left_out=left_out,
                    options=_cell_options(where, summary, records),
                    argv=_argv(record), strategies=_inner(record, "grid", "runs"),
                    cwd=_text(record.get("cwd")), lr_edges=edges, momentum_sync=_sync(record, "bench"),
                    warmup_until=warmup_steps(records.values()),
                    **_size_and_common_loss(summary))


def _argv(record: dict) -> tuple[str, ...]:
    """A record's argv, () where it holds none (or not a list of strings)."""
    return _texts(record.get("argv"))


def _texts(value) -> tuple[str, ...]:
    """A recorded list of strings as a tuple, () where it is not one."""
    return tuple(value) if isinstance(value, list) and all(isinstance(a, str) for a in value) else ()


def _inner(record: dict, table: str, key: str) -> tuple[str, ...]:
    """record[table][key], a list of strings, as a tuple; () where it is not recorded so."""
    inner = record.get(table)
    return _texts(inner.get(key) if isinstance(inner, dict) else None)


def _sync(record: dict, table: str) -> str:
    """record[table]["momentum_sync"], "never" where it is not recorded (a run before the option)."""
    inner = record.get(table)
    return _text(inner.get("momentum_sync") if isinstance(inner, dict) else None) or "never"


def _text(value) -> str | None:
    """A recorded string, None where it is not one (or empty)."""
    return value if isinstance(value, str) and value else None


def _size_and_common_loss(summary: pd.DataFrame) -> dict:
    """Measured's params and common_loss from a summary's rows (NaN where a column is missing)."""
    def column(name: str) -> pd.Series:
        return pd.to_numeric(summary[name], errors="coerce") if name in summary.columns else pd.Series(dtype=float)

    params, final = column("params").dropna(), column("final_loss")
    # a diverged run's last finite losses are no target any rerun would reach: left out
    final = final[final.map(math.isfinite) & ~column("diverged_at_step").reindex(final.index).map(math.isfinite)]
    return {"params": float(params.max()) if len(params) else math.nan,
            "common_loss": float(final.max()) if len(final) else math.nan}


def _diverged_baseline(given: str, baseline: str, where: str, summary: pd.DataFrame,
                       labels: list[str]) -> LionsimError:
    """The one line for a run whose baseline diverged: it set no target loss (its own loss at 90% of
    its steps is not a number), so no --target-loss can help; a smaller learning rate or another
    baseline can (one that converged, where the run has one)."""
    diverged = summary.apply(_diverged, axis=1).map(math.isfinite).tolist()
    gone = {label for label, went in zip(labels, diverged) if went}  # in any cell
    converged = [label for label in dict.fromkeys(labels) if label not in gone]
    other = (f", or with --baseline one of its runs that converged ({', '.join(converged)})" if converged
             else " (every run in it diverged)")
    return LionsimError(f"bad --from-run {given}: its baseline {baseline} diverged {where}, so the run has no "
                        f"target loss to count steps to; accepted: a run whose baseline converged: rerun it with a "
                        f"smaller --lr{other}")


def _diverged(row) -> float:
    value = getattr(row, "diverged_at_step", math.nan)
    return float(value) if value == value and value is not None else math.nan


def _cell_records(where: Path, summary: pd.DataFrame) -> dict[str, dict]:
    """The run.json of each cell the summary holds, where the cell is kept: cell -> record, each
    read once (the runs' options and their warm-up steps both come from them); a kept record that is
    unreadable is its one line, as the sweep's own files are."""
    records = read_cells(where, summary["cell"])
    for cell, record in records.items():
        if record is None and (path := where / CELLS / cell / META_FILE).is_file():
            _json(path)  # raises: its one line, naming the file
    return {cell: record for cell, record in records.items() if record is not None}


def _cell_options(where: Path, summary: pd.DataFrame, records: dict[str, dict]) -> dict[str, dict]:
    """Each run's resolved options from its cells' run.json (`records`, _cell_records). A sweep trains
    each run with one set of options (no option is an axis: lionsim.estimate.trained_options), so
    cells that disagree were not trained by one sweep: one line, as no one record prices the run."""
    options: dict[str, dict] = {}
    seen: dict[str, str] = {}  # label -> the cell its options were read from
    for label, cell in zip(summary["label"], summary["cell"]):
        if str(cell) not in records:
            continue
        for entry in (records[str(cell)].get("runs") or []):
            if not (isinstance(entry, dict) and entry.get("run") == label):
                continue
            got = entry.get("options") or {}
            if label in options and got != options[label]:
                differ = sorted(k for k in {*got, *options[label]} if got.get(k) != options[label].get(k))
                raise _fail(where, f"its cells trained {label} with different options ({', '.join(differ)}: "
                                   f"cells {seen[label]} and {cell}), so no one record says how it was trained")
            options.setdefault(label, got)
            seen.setdefault(label, str(cell))
    return options
