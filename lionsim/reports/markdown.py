"""`lionsim report DIR`: one Markdown file (DIR/report.md) for a finished run or sweep (or an
estimate sweep: lionsim.reports.estimate_report).

Everything in it is read from DIR's CSVs and JSON (the plots are redrawn from them first), so a
report can be made long after the run, on another machine: the configuration, how each time
was obtained, the summary, which strategy reaches the target loss first on each network, the
accuracy by worker count (beside the Distributed Lion paper's table where the sweep has its
methods), the plots, the environment, and the commands that reproduce it all.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from lionsim.errors import LionsimError, json_type
from lionsim.divergence import RULE as DIVERGED_RULE
from lionsim.numbers import plural, sig
from lionsim.plugin_load import is_spec
from lionsim.reports.best_lr import at_best_lr, best_lr_markdown, has_lr_axis
from lionsim.reports.cells_rounds import cells_rounds
from lionsim.reports.columns import ACCURACY, eval_metric, label_name, lr_text, recorded_rounds, run_label, run_name
from lionsim.reports.config_table import option_rows
from lionsim.reports.cell_records import CELLS, read_cells
from lionsim.reports.hyper_rows import cells_hyper_rows, hyper_rows
from lionsim.reports.obtained import library_note, wait_note
from lionsim.reports.estimate_report import estimate_report, one_estimate_report
from lionsim.reports.md import command_line, md_table, reproduce, sweep_commands
from lionsim.reports.resuming import FAILED_FILE, bench_note, resumable, sweep_note
from lionsim.reports.outdir import REPORT_ACCEPTS, REPORT_FILE, check_dir, check_reportable
from lionsim.reports.proxy_note import proxy_note
from lionsim.reports.files import META_FILE, load_run, read_csv, read_json, write_atomic
from lionsim.reports.summary import FINAL_FRACTION, TARGET_POINT, target_words
from lionsim.reports.tables import (BENCH_ONE_RUN, ONE_RUN, WARMUP_MARK, diverged_at, diverged_note, speedup_cell,
                                    to_target_cell, warmup_note, warmup_only)
from lionsim.reports.target_speedup import ABOVE_NOTE, shows_above
from lionsim.reports.paper import (PAPER_ACCURACY, PAPER_ORDER, PAPER_SOURCE, PAPER_WHERE, comparability, ordering_breaks,
                                   ordering_holds, paper_setup)
from lionsim.reports.titles import named_network, profile_text
from lionsim.reports.warmup_only import warmup_steps

SWEEP_SUMMARY = "sweep_summary.csv"
SWEEP_STEPS = "sweep_steps.csv"
SWEEP_META = "sweep.json"
GROUP = ["workload", "workers", "network"]
"""A sweep's cells compared with each other: same workload, workers and network (seeds pooled)."""


def ms(seconds: float) -> str:
    return "n/a" if not math.isfinite(seconds) else f"{sig(seconds * 1e3)} ms"


def spread(values: pd.Series, scale: float = 1.0, digits: int = 1) -> str:
    """'mean ± sd (n)' over seeds; one value alone is printed as is."""
    v = values.dropna() * scale
    if v.empty:
        return "n/a"
    if len(v) == 1:
        return f"{v.iloc[0]:.{digits}f}"
    return f"{v.mean():.{digits}f} ± {v.std(ddof=1):.{digits}f}"


def _metric(frame: pd.DataFrame) -> tuple[str, float, int]:
    """(column header, scale, decimals) of eval_acc in `frame`: accuracy in %, a workload's own
    metric by its name and direction ("eval metric" where workloads of several metrics mix)."""
    names = set(frame["eval_metric"].dropna()) if "eval_metric" in frame.columns else set()
    if names <= {ACCURACY}:
        return "eval acc %", 100.0, 1
    if len(names) > 1:
        return "eval metric", 1.0, 4
    name, higher = eval_metric(frame)
    return f"eval {name} ({'higher' if higher else 'lower'} is better)", 1.0, 4


CPU_KEYS = ("cpu_model", "cpu_capability")
"""What run.json's host records of the CPU the losses were computed on (lionsim.host_cpu)."""


def _environment(meta: dict) -> str:
    versions, host = meta.get("versions") or {}, meta.get("host") or {}
    rows = [[k, str(v)] for k, v in {**versions, **host}.items() if v is not None]
    if "host" in meta:  # a run's record; one from before they were recorded says so (losses depend on them)
        rows += [[k, "not recorded"] for k in CPU_KEYS if host.get(k) is None]
    if meta.get("started"):
        rows.append(["started", str(meta["started"])])
    if meta.get("duration_s") is not None:
        rows.append(["duration", f"{meta['duration_s']:.0f} s"])
    return md_table(["", "value"], rows) if rows else "Not recorded."


def _timing(meta: dict) -> str:
    timing = meta.get("timing") or {}
    lines = [f"- `{k}`: {v}" for k, v in timing.items() if isinstance(v, str)]
    if not lines:
        return "Not recorded."
    return "\n".join(lines + _run_notes(meta))


def _run_notes(record: dict) -> list[str]:
    """The bullets a run's timing notes leave unsaid: the library that priced its comm, and the
    slowest-worker wait its step includes (lionsim.reports.obtained)."""
    library = library_note(record)
    wait = wait_note(record.get("config"), bool(recorded_rounds(record.get("runs"))))
    return [*([f"- library: {library}"] if library else []), *([f"- `wait_s`: {wait}"] if wait else [])]


LOSS = ".4f"
"""Every loss in a report (final, target): one format, so a column's digits line up."""


CELL_PLACE = "\0"
"""Stands in a cell's time note for where it was priced ("on 1gbe for 2 workers"), so notes that differ
only there are one claim."""


def _cells_records(directory: Path, cells) -> dict[str, dict | None]:
    """Every cell's run.json under a sweep's `directory`, read once for the whole report: `cells` (the
    summary's) first, in their order, then any other cell folder's (an unfinished cell still says how
    its times were obtained)."""
    first = list(dict.fromkeys(map(str, cells)))
    others = sorted(p.parent.name for p in (directory / CELLS).glob(f"*/{META_FILE}") if p.parent.name not in first)
    return read_cells(directory, [*first, *others])


def _cells_timing(records: dict[str, dict | None], grid: dict) -> str:
    """A sweep's time notes: each cell's run.json (`records`: the summary's cells first, in its order,
    then any other cell's) says how its times were obtained. Cells' notes that differ only in the
    network and worker count they were priced on are one claim, listed once with those values in the
    sweep's order (`grid`'s)."""
    claims: dict[str, dict[str, tuple[list, list]]] = {}  # key -> general note -> (networks, worker counts)
    extra: dict[str, list] = {}  # a library or wait bullet (_run_notes) -> the networks it holds on
    for record in records.values():
        if record is None:  # a cell's missing or unreadable record: the others still say it
            continue
        network = (record.get("network") or {}).get("name")
        workers = (record.get("config") or {}).get("workers")
        where = f"on {network} for {workers} workers"
        for line in _run_notes(record):
            held = extra.setdefault(line, [])
            held += [network] if network not in held else []
        for key, note in (record.get("timing") or {}).items():
            if not isinstance(note, str):
                continue
            general = note.replace(where, CELL_PLACE) if network and workers is not None else note
            networks, counts = claims.setdefault(key, {}).setdefault(general, ([], []))
            if CELL_PLACE in general:
                networks += [network] if network not in networks else []
                counts += [workers] if workers not in counts else []

    def ordered(values: list, axis: str) -> list[str]:
        order = [str(v) for v in grid.get(axis) or []]
        return [str(v) for v in sorted(values, key=lambda v: order.index(str(v)) if str(v) in order else len(order))]

    lines = []
    for key, notes in claims.items():
        for general, (networks, counts) in notes.items():
            networks, counts = ordered(networks, "network"), ordered(counts, "workers")
            on = networks[0] if len(networks) == 1 else f"each cell's network ({', '.join(networks)})"
            whose = "its" if len(networks) > 1 else "each cell's"
            count = f"{counts[0]} workers" if len(counts) == 1 else f"{whose} worker count ({', '.join(counts)})"
            lines.append(f"- `{key}`: {general.replace(CELL_PLACE, f'on {on} for {count}')}")
    libraries = [line for line in extra if line.startswith("- library:")]
    for line, networks in extra.items():  # where the cells' libraries differ, each says its networks
        lines.append(line + (f" (on {', '.join(ordered(networks, 'network'))})" if len(libraries) > 1
                             and line in libraries else ""))
    return "\n".join(lines) if lines else "Not recorded."


def _summary_rows(summary: pd.DataFrame, clock: str, rounds: dict[str, int] | None = None,
                  warm: dict[str, int] | None = None) -> str:
    """report.md's summary table of a bench run; `warm`: its runs that never left their warm-up
    (warmup_steps: marked, "-" for their speedup and to target)."""
    warm = warm or {}
    metric, scale, digits = _metric(summary)
    exposed = "comm_exposed_s" in summary.columns and summary["comm_exposed_s"].notna().any()
    compared = len(summary) > 1  # one run alone is its own baseline: no speedup columns, as bench's table
    headers = ["run", f"final loss (mean of last {FINAL_FRACTION:.0%} of steps)", metric, "step", "comm (total)",
               *(["comm (exposed)"] if exposed else []), "bits up/down", *(["speedup", "to target"] if compared else [])]
    rows = []
    for r in summary.itertuples(index=False):
        label = run_name(r.strategy, r.transport, rounds)
        if compared and run_label(r.strategy, r.transport) == getattr(r, "baseline", None):
            label += " (baseline)"
        diverged = diverged_at(r)
        loss = _loss(r.final_loss) if diverged is None else f"diverged at step {diverged}"
        label += f" ({WARMUP_MARK})" if compared and diverged is None and warmup_only(r, warm) else ""
        rows.append([label, loss, spread(pd.Series([r.final_eval_acc]), scale, digits), ms(r.step_s),
                     ms(r.comm_s), *([ms(r.comm_exposed_s)] if exposed else []),
                     f"{r.bits_per_param_up:.3g}/{r.bits_per_param_down:.3g}",
                     *([speedup_cell(r, warm), to_target_cell(r, warm)] if compared else [])])
    baseline = summary["baseline"].iloc[0] if "baseline" in summary else "the first run"
    notes = [f"step, comm: {clock} ms per step, mean over the run's steps (How each time was obtained says how, part "
             "by part).",
             "comm (total): every collective of the step, whether backward hides it or not"
             + ("; comm (exposed): the part the step waits for (what step adds)." if exposed else ".")]
    if compared:
        notes += [f"speedup: {baseline}'s step / this run's. to target: {baseline}'s time to reach the target loss / "
                  "this run's (not reached: the run never got there; n/a: no target was set"
                  + ("; " + ABOVE_NOTE if shows_above(summary) else "")
                  + ").",
                  _target_text(summary)]
    else:
        notes.append(BENCH_ONE_RUN[0].upper() + BENCH_ONE_RUN[1:] + ".")
    if any(diverged_at(r) is not None for r in summary.itertuples(index=False)):
        notes.append(diverged_note(compared).replace("diverged at N", "diverged at step N", 1))
    if compared and any(warmup_only(r, warm) for r in summary.itertuples(index=False)):
        notes.append(warmup_note("speedup and to target"))
    return md_table(headers, rows) + "\n\n" + "\n".join(f"- {n}" for n in notes)


def _loss(value: float) -> str:
    return format(value, LOSS) if math.isfinite(value) else "n/a"


def _target_text(frame: pd.DataFrame) -> str:
    """Where the target loss came from (summary.csv's target_rule: lionsim.reports.summary)."""
    targets = frame["target_loss"].dropna() if "target_loss" in frame.columns else pd.Series(dtype=float)
    if targets.empty:
        return "Target loss: none (the baseline diverged)."
    rules = list(dict.fromkeys(frame["target_rule"].dropna())) if "target_rule" in frame.columns else []
    if rules == ["--target-loss"]:
        origin = "set by --target-loss"
    else:
        where = f" ({'; '.join(rules)})" if rules and len(rules) <= 3 else ""
        origin = (f"the baseline's smoothed training loss at {TARGET_POINT:.0%} of its steps{where}, lionsim's "
                  "default when --target-loss is not given")
    baseline = str(frame["baseline"].dropna().iloc[0]) if "baseline" in frame.columns else "the baseline"
    value = _loss(float(targets.iloc[0])) if targets.nunique() == 1 else target_words(targets, baseline)
    return f"Target loss {value}: {origin}."


def _targets(group: pd.DataFrame) -> str:
    """A group's target loss: its cells' one figure, or their range where each cell (seed) has its own."""
    targets = group["target_loss"].dropna()
    if targets.nunique() <= 1:
        return _loss(float(targets.iloc[0])) if len(targets) else "n/a"
    return f"{_loss(targets.min())} to {_loss(targets.max())}"


def _clock(backend: str | None, compute: str | None = None) -> str:
    """How a report's times were obtained, in a few words: on the simulator modelled (compute
    measured on this machine with --compute measured, the network modelled), on gloo/nccl measured
    on that backend."""
    if backend not in (None, "sim"):
        return f"measured (on {backend})"
    return "part measured (compute), part modelled (network)" if compute == "measured" else "modelled"


def _first_to_target(frame: pd.DataFrame, clock: str, meta: dict | None = None, measured: bool = False,
                     rounds: dict[str, int] | None = None, directory: Path | None = None,
                     cells: dict[str, dict | None] | None = None) -> str:
    """Per (workload, workers, network): every run's time to the target loss (mean over seeds),
    the first one named. A run that missed the target in any seed is 'not reached'; a measured
    run's network named as its other tables name it (titles.named_network, from its run.json); a
    local-step run with its H (`rounds`: run_label -> H)."""
    frame = frame.assign(run=[run_name(s, t, rounds) for s, t in zip(frame["strategy"], frame["transport"])])
    runs = list(dict.fromkeys(frame["run"]))
    # trained as another method: not ranked as its own (a sweep's `cells`: its cells' run.json)
    warm = warmup_steps([meta, *(cells or {}).values()])
    idle = {name: warm[f"{s}@{t}"] for name, s, t in zip(frame["run"], frame["strategy"], frame["transport"])
            if f"{s}@{t}" in warm}
    rows = []
    for key, group in frame.groupby(GROUP, sort=False):
        times = {}
        for run in runs:
            t = group.loc[group["run"] == run, "time_to_target_s"]
            times[run] = float(t.mean()) if len(t) and t.notna().all() else math.nan
        reached = {r: t for r, t in times.items() if math.isfinite(t) and r not in idle}
        first = min(reached, key=reached.get) if reached else "none"
        rows.append([str(key[1]), named_network(str(key[2]), meta, measured), _targets(group), f"**{first}**",
                     *["warm-up only" if r in idle else ms(times[r]) if math.isfinite(times[r]) else "not reached"
                       for r in runs]])
    seeds = frame["seed"].nunique() if "seed" in frame.columns else 1
    note = f" (mean over {seeds} seeds)" if seeds > 1 else ""
    return md_table(["workers", "network", "target loss", "first to target", *runs], rows) + (
        f"\n\nTime to target: {clock} wall clock until the smoothed training loss (trailing mean over "
        f"{FINAL_FRACTION:.0%} of the steps) first reaches the target{note}. " + _target_text(frame)
        + "".join(f" {run}: warm-up only, not ranked: its steps end before its first step past the warm-up, "
                  f"{step} (it trained as another method)." for run, step in idle.items())
        + (f" {said}" if not measured and (said := proxy_note(frame, str(directory or "DIR"), code=True)) else ""))


def _model_check(summary: pd.DataFrame, meta: dict, rounds: dict[str, int]) -> str:
    """A real backend's measured comm beside the model's price of the same calls, as bench prints it
    under its table (tables.model_check_table), and why the model is left out where it describes no
    link measured; "" on sim and on one rank (nothing was measured on a link)."""
    from lionsim.reports.tables import comm_measured, model_check_rows
    from lionsim.reports.titles import unchecked_model

    if not comm_measured(summary):
        return ""
    unchecked = unchecked_model(meta)
    names, rows = model_check_rows(summary, unchecked, rounds)
    said = ("ms of comm per step, means over the steps past the warm-up: booked = the summary's comm, each step's "
            "measured comm replaced by the median of its kind of step; measured = each step's own calls, summed; ")
    said += ("model = the price of those same calls by " + str(meta.get("comm_model") or "the network model")
             + "; error = model / measured - 1; " if unchecked is None else "")
    said += "wait = the ranks' spread at the calls' barriers."
    return md_table(list(names), rows) + "\n\n" + said + (f" {unchecked}" if unchecked else "")


def _accuracy_by_workers(frame: pd.DataFrame, config: dict, rounds: dict[str, int] | None = None) -> str | None:
    """Final eval accuracy (%) by worker count per run (mean ± sd over seeds). Where a vit sweep holds
    the paper's methods: first what the run's configuration (`config`: run.json's or sweep.json's
    bench options) shares with the paper's, the paper's figures beside the run's only where it
    trains the paper's setup (paper_setup; else a line saying where they are), then the paper's
    ordering checked on the run's own accuracies. A local-step run named with its H (`rounds`).
    None when nothing was evaluated."""
    if frame["final_eval_acc"].isna().all() or frame["workers"].nunique() < 1:
        return None
    frame = frame.assign(run=[run_name(s, t, rounds) for s, t in zip(frame["strategy"], frame["transport"])])
    # Accuracy does not depend on the network (the training is the same); take one network.
    frame = frame[frame["network"] == frame["network"].iloc[0]]
    workers = sorted(frame["workers"].unique())
    runs = list(dict.fromkeys(frame["run"]))
    strategy_of = dict(zip(frame["run"], frame["strategy"]))  # a run's name may carry its H
    seeds = frame["seed"].nunique()
    # The paper's table is a ViT on CIFAR-10: only a vit sweep of its methods is checked against it,
    # and its figures stand beside the run's only where the run trains the paper's own setup.
    of_paper = set(frame["workload"]) == {"vit"} and any(strategy_of[r] in PAPER_ACCURACY for r in runs)
    metric, scale, digits = _metric(frame)
    of_paper = of_paper and scale == 100.0  # the paper's figures are accuracies
    setup = [config.get(k) for k in ("model_size", "data", "steps", "batch_size")]
    beside_paper = of_paper and paper_setup(setup[0], setup[1], setup[3])
    rows = []
    for run in runs:
        strategy = strategy_of[run]
        cells = [spread(frame.loc[(frame["run"] == run) & (frame["workers"] == w), "final_eval_acc"], scale, digits)
                 for w in workers]
        paper = PAPER_ACCURACY.get(strategy, {}) if beside_paper else {}
        rows.append([run, *cells, *[f"{paper[w]:.1f}" if w in paper else "" for w in workers]])
    headers = ["run", *[f"{w} workers" for w in workers]]
    if beside_paper:
        headers += [f"paper, {w}" for w in workers]
    else:
        rows = [row[: 1 + len(workers)] for row in rows]
    text = md_table(headers, rows)
    if of_paper:
        said = comparability(*setup)
        if not beside_paper:  # one line: why the paper's figures are left out, and where they are
            said += f" The paper's figures are left out here; they are in {PAPER_WHERE}."
        text = said + "\n\n" + text
    what = "accuracy %" if scale == 100.0 else metric.removeprefix("eval ")
    text += f"\n\nFinal eval {what} on the workload's held-out set, mean ± sd over {seeds} seed(s)."
    if not of_paper:
        return text
    text += f" Paper: {PAPER_SOURCE}."
    verdicts = []
    for w in workers:
        acc = {}
        for run in runs:
            strategy = strategy_of[run]
            if strategy in PAPER_ACCURACY:
                acc[strategy] = 100.0 * float(frame.loc[(frame["run"] == run) & (frame["workers"] == w),
                                                        "final_eval_acc"].mean())
        holds = ordering_holds(acc)
        if holds is not None:
            verdicts.append(f"- {w} workers: the paper's ordering ({PAPER_ORDER}) "
                            + ("holds." if holds else "does not hold: " + "; ".join(ordering_breaks(acc)) + "."))
    if verdicts:
        text += "\n\n" + "\n".join(verdicts)
    return text


def _plots(directory: Path, rounds: dict[str, int] | None = None) -> str:
    """The directory's plots, redrawn, as Markdown images; `rounds`: a sweep's, read once (plot_dir)."""
    from lionsim.reports.plots import plot_dir

    _kind, paths = plot_dir(directory, rounds=rounds)
    pngs = list(dict.fromkeys(Path(p).name for p in paths if str(p).endswith(".png")))
    return "\n\n".join(f"![{name.removesuffix('.png').replace('_', ' ')}]({name})" for name in pngs) or "None."


def _run_report(directory: Path) -> str:
    steps, summary, meta = load_run(directory)
    meta = meta or {}
    if summary is None:  # made again under the run's own rule (run.json)
        from lionsim.reports.summary import run_summary

        summary = run_summary(steps, meta)
    cfg = meta.get("config") or {}
    first = summary.iloc[0]
    backend = cfg.get("backend") or (first["backend"] if "backend" in summary.columns else None)
    clock = _clock(backend, cfg.get("compute"))
    measured = backend not in (None, "sim")
    cfg = {**cfg, "network": named_network(str(cfg["network"]), meta, measured)} if cfg.get("network") else cfg
    if cfg.get("network") and not measured:  # a profile file: what it held, as the report alone can say
        cfg["network"] = profile_text(cfg["network"], meta.get("network"))
    # a workload file builds its own model: bench refuses --model-size for it, so no row says one
    sized = not is_spec(cfg.get("workload"))
    rounds = recorded_rounds(meta.get("runs"))
    config = md_table(["option", "value"], option_rows(cfg, () if sized else ("model_size",))
                      + [["runs", ", ".join(run_name(s, t, rounds) for s, t in zip(summary["strategy"], summary["transport"]))]]
                      + hyper_rows([cfg.get("hyper")], rounds))
    command = command_line(meta.get("argv"), resume=resumable(meta), cwd=meta.get("cwd"))
    parts = [
        f"# lionsim report: {first['workload']}, {plural(first['workers'], 'worker')}, "
        f"{named_network(str(first['network']), meta, measured)}",
        f"Status: {meta.get('status', 'unknown')}. {plural(len(summary), 'run')}, "
        f"{plural(int(summary['steps'].max()), 'step')}{' each' if len(summary) > 1 else ''}.",
        "## Configuration\n\n" + config,
        "## How each time was obtained\n\n" + _timing(meta),
        "## Summary\n\n" + _summary_rows(summary, clock, rounds, warmup_steps([meta])),
        "## Which strategy reaches the target loss first\n\n" + _first_to_target(summary, clock, meta, measured, rounds, directory),
    ]
    if checked := _model_check(summary, meta, rounds):
        parts.append("## Comm measured against the model\n\n" + checked)
    accuracy = _accuracy_by_workers(summary, cfg, rounds) if summary["workers"].nunique() > 1 else None
    if accuracy:
        parts.append("## Accuracy by worker count\n\n" + accuracy)
    parts += ["## Plots\n\n" + _plots(directory), "## Environment\n\n" + _environment(meta),
              "## Reproduce\n\n" + reproduce(command, directory, bench_note(meta))]
    return "\n\n".join(parts) + "\n"


def _sweep_report(directory: Path) -> str:
    summary = read_csv(directory / SWEEP_SUMMARY, ["cell", "workload", "seed", "workers", "network", "strategy",
                                                  "transport", "final_loss", "final_eval_acc", "step_s", "speedup",
                                                  "time_to_target_s", "target_loss"])
    if summary.empty:
        raise LionsimError(f"{directory / SWEEP_SUMMARY} has no finished cells yet")
    meta_path = directory / SWEEP_META
    meta = read_json(meta_path) if meta_path.is_file() else {}
    if not isinstance(meta, dict):  # a JSON list would fail below on .get
        raise LionsimError(f"{meta_path} holds {json_type(meta)}; expected an object")
    grid = meta.get("grid") or {}
    bench = meta.get("bench") or {}
    records = _cells_records(directory, summary["cell"])
    rounds = cells_rounds(directory, records)
    config_rows = [[k, ", ".join("default" if x is None else str(x) for x in v) if isinstance(v, list) else str(v)]
                   for k, v in {**grid, **({"runs": [label_name(r, rounds) for r in grid["runs"]]}
                                            if isinstance(grid.get("runs"), list) else {})}.items()]
    sized = not all(is_spec(w) for w in grid.get("workload") or [None])  # as a bench run's report
    config_rows += option_rows(bench, (*grid, *(() if sized else ("model_size",))))
    in_summary = {cell: records[cell] for cell in map(str, dict.fromkeys(summary["cell"]))}
    config_rows += cells_hyper_rows(in_summary, rounds)  # each run's, as its cells trained it
    summary = summary.assign(run=[run_label(s, t) for s, t in zip(summary["strategy"], summary["transport"])])
    backends = list(dict.fromkeys(summary["backend"].dropna())) if "backend" in summary.columns else []
    clock = _clock(backends[0] if len(backends) == 1 else bench.get("backend"), bench.get("compute"))
    agg = []
    metric, scale, digits = _metric(summary)
    lrs = "lr" in summary.columns
    compared = summary["run"].nunique() > 1  # one run alone: each cell its own baseline, no speedup
    warm = warmup_steps(records.values())  # runs that trained as another method: no speedup
    for key, group in summary.groupby([*GROUP, "run", *(["lr"] if lrs else [])], sort=False):
        own = _metric(group)  # where workloads of several metrics mix, each group its own
        idle = compared and warmup_only(group.iloc[0], warm)
        agg.append([label_name(key[3], rounds) + (f" ({WARMUP_MARK})" if idle else ""), str(key[1]), key[2], *([lr_text(key[4])] if lrs else []), str(group["seed"].nunique()),
                    _seeds_loss(group),
                    spread(group["final_eval_acc"], own[1], own[2]), ms(float(group["step_s"].mean())),
                    *([_speedup(group, warm)] if compared else [])])
    diverged = "diverged_at_step" in summary.columns and summary["diverged_at_step"].notna().any()
    cells, finished = meta.get("cells"), len(summary)  # the grid's cells (sweep.json), those with a row
    parts = [
        f"# lionsim report: sweep of {plural(cells if cells else finished, 'cell')}"
        + (f" ({finished} finished)" if cells and cells != finished else ""),
        "## Configuration\n\n" + (md_table(["option", "value"], config_rows) if config_rows else "Not recorded."),
        "## How each time was obtained\n\n" + _cells_timing(records, grid),
        "## Summary (mean ± sd over seeds)\n\n"
        + md_table(["run", "workers", "network", *(["lr"] if lrs else []), "seeds", "final loss", metric, "step",
                    *(["speedup"] if compared else [])], agg)
        + f"\n\nfinal loss: the mean of the last {FINAL_FRACTION:.0%} of a cell's steps. step: {clock} ms per step, "
        "mean over the cells' steps. "
        + ("Each cell's speedup is against the baseline run of its own workload, workers, network"
           + (", seed and lr." if lrs else " and seed.") if compared else ONE_RUN[0].upper() + ONE_RUN[1:] + ".")
        + (f" diverged in K of M seeds: K cells diverged ({DIVERGED_RULE}; marked diverged_at_step in "
           "sweep_summary.csv); the final loss and the speedup are the other seeds' (\"-\" where every seed "
           "diverged: a run that diverged is no faster), and a diverged cell's step is over the steps before."
           if diverged else "")
        + (" W" + warmup_note("speedup", "sweep_summary.csv")[1:]  # a sentence of the paragraph: capitalised
           if compared and any(warmup_only(r, warm) for r in summary.itertuples(index=False)) else ""),
    ]
    compared, at_best = summary, ""
    if has_lr_axis(summary):  # the runs compared each at its best lr (lionsim.reports.best_lr)
        parts.append("## Best learning rate per run\n\n" + best_lr_markdown(summary, rounds))
        compared = at_best_lr(summary, read_csv(directory / SWEEP_STEPS, ["cell"]))[0]
        at_best = "Each run at its best lr (above).\n\n"
    parts.append("## Which strategy reaches the target loss first\n\n" + at_best
                 + _first_to_target(compared, clock, rounds=rounds, directory=directory, cells=records))
    accuracy = _accuracy_by_workers(compared, bench, rounds)
    if accuracy:
        parts.append("## Accuracy by worker count\n\n" + accuracy)
    parts += ["## Plots\n\n" + _plots(directory, rounds), "## Environment\n\n" + _environment(meta),
              "## Reproduce\n\n" + reproduce(sweep_commands(meta), directory,
                                               sweep_note(meta, len(summary), (directory / FAILED_FILE).is_file()))]
    return "\n\n".join(parts) + "\n"


def _speedup(group: pd.DataFrame, warm: dict[str, int]) -> str:
    """One run's speedup over seeds, its diverged cells left out ("-" where all diverged), as bench
    shows a diverged run's; "-" for a run that never left its warm-up (`warm`: warmup_note)."""
    if warmup_only(group.iloc[0], warm):
        return "-"
    if "diverged_at_step" in group.columns:
        group = group[group["diverged_at_step"].isna()]
    return spread(group["speedup"], digits=2) if len(group) else "-"


def _seeds_loss(group: pd.DataFrame) -> str:
    """The final loss of one run's cells over seeds, saying how many diverged (spread alone
    would average the others' and say nothing)."""
    loss = spread(group["final_loss"], digits=4)
    diverged = int(group["diverged_at_step"].notna().sum()) if "diverged_at_step" in group.columns else 0
    if not diverged:
        return loss
    which = f"diverged in {diverged} of {plural(len(group), 'seed')}"
    return which if diverged == len(group) else f"{loss} ({which})"


def write_report(directory: Path) -> Path:
    """Write DIR/report.md (and redraw DIR's plots) for a finished run or sweep; return its path."""
    directory = Path(directory)
    check_dir(directory, REPORT_ACCEPTS)
    if (directory / SWEEP_SUMMARY).is_file():
        text = _sweep_report(directory)
    elif (directory / "steps.csv").is_file():
        text = _run_report(directory)
    elif (directory / "sweep.csv").is_file():  # an estimate sweep (lionsim.reports.estimate_report)
        text = estimate_report(directory)
    elif (directory / "estimate.csv").is_file():  # one estimate (with --from-run: its time to target)
        text = one_estimate_report(directory)
    else:
        check_reportable(directory)  # holds none of them: its one line
    return write_atomic(directory / REPORT_FILE, lambda f: f.write(text))
