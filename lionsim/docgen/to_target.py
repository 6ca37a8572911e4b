"""Docs blocks of the worked example "From here to the cluster" (docs/time-to-target.md): a sweep
of the CNN example over workers on this machine, then `lionsim estimate --from-run` for a
real-size model on a GPU cluster preset.

The sweep is real training (minutes on a CPU), cached in reports/readme/from-run-sweep/ (its
sweep.json and sweep_summary.csv, all --from-run reads, with the CPU, torch, date and wall time
it ran with: `--refresh from-run-sweep`); the estimate blocks run `lionsim estimate ... --from-run`
on that cache each time they render (pure modelling, seconds). `config_differences` says whether
the cache still records what the page's sweep command plans now.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from lionsim.docgen.blocks import BLOCKS, Block, cache_dir, checkout
from lionsim.docgen.cached import PROVENANCE, machine_facts
from lionsim.docgen.run import printed
from lionsim.errors import LionsimError

CACHE = "from-run-sweep"
WORKLOAD = "examples/plugins/cnn_workload.py:make"
SWEEP = ["--workload", WORKLOAD, "--workers", "4,8,16,32", "--seed", "0,1", "-s", "adamw", "-s", "dlion-mavo",
         "-s", "diloco", "-s", "lion", "-s", "signsgd", "--steps", "100"]
"""The page's `lionsim sweep` arguments (with --out DIR)."""
KEPT = ("sweep.json", "sweep_summary.csv")
"""What the cache keeps of the sweep root: what --from-run reads."""
FROM_RUN = "reports/cnn-workers"
"""Where the page's sweep writes (--out) and its estimate reads (--from-run); the blocks render
with the cache copied there, in a scratch directory."""
ESTIMATE = ["--model", "gpt2-1.3b", "--workers", "256", "--network", "h100x8-100gbe", "--device", "h100",
            "-s", "adamw", "-s", "dlion-mavo@a2a-1bit", "-s", "diloco", "-s", "lion", "-s", "signsgd",
            "-s", "onebit-adam", "--tokens", "2.6e10", "--from-run", FROM_RUN]
"""The page's `lionsim estimate` arguments: 26e9 tokens, 20 per parameter of the 1.3B model
(Hoffmann et al. 2022, "Training compute-optimal large language models": the compute-optimal
tokens per parameter)."""
WORKERS_SWEEP = [*ESTIMATE, "--sweep", "workers=16,32,64,128,256,512,1024"]


def refresh() -> Path:
    """Run the page's sweep for real (minutes on a CPU) and cache what --from-run reads of it."""
    root = checkout()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "sweep"
        started = time.time()
        done = subprocess.run([sys.executable, "-m", "lionsim", "sweep", *SWEEP, "--out", str(out)], cwd=root,
                              capture_output=True, text=True)
        wall = round(time.time() - started)
        if done.returncode not in (0, 1):  # 1: a cell diverged, its rows are written and say so
            raise LionsimError(f"lionsim sweep {' '.join(SWEEP)} failed: {done.stderr.strip()[-500:]}")
        where = cache_dir(CACHE)
        where.mkdir(parents=True, exist_ok=True)
        for name in KEPT:
            shutil.copyfile(out / name, where / name)
    figure()  # the page's plot, from the new sweep
    facts = {**machine_facts(wall), "cpus": os.cpu_count()}
    (where / PROVENANCE).write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")
    return where


def _cached() -> tuple[pd.DataFrame, dict, dict]:
    where = cache_dir(CACHE)
    if not (where / PROVENANCE).is_file():
        raise LionsimError(f"no cached sweep in {where}: `python -m lionsim.docgen --refresh {CACHE}` makes it")
    summary = pd.read_csv(where / "sweep_summary.csv")
    read = lambda name: json.loads((where / name).read_text(encoding="utf-8"))  # noqa: E731
    return summary, read("sweep.json"), read(PROVENANCE)


def config_differences() -> list[str]:
    """What the cached sweep.json records that the page's sweep command would not plan now
    (empty: the cache describes it): the grid (the workload by its file, wherever the checkout
    was) and every bench option."""
    from lionsim.config.bench import BenchConfig
    from lionsim.config.sweep import SweepConfig, plan_sweep
    from lionsim.frozen import thawed
    from lionsim.sweep import Grid

    _, record, _ = _cached()
    args = dict(zip(SWEEP[::2], SWEEP[1::2]))
    runs = [value for flag, value in zip(SWEEP[::2], SWEEP[1::2]) if flag == "-s"]
    grid = Grid.parse(workload=[str(checkout() / WORKLOAD)], workers=[args["--workers"]], network=["1gbe"],
                      seed=[args["--seed"]], strategies=runs, transport=None)
    planned = plan_sweep(SweepConfig(grid=grid, bench=BenchConfig(steps=int(args["--steps"]))), train=False)
    from lionsim.training.resume import drop_inert_defaults

    now = {"grid": planned.grid.to_dict(), "bench": thawed(planned.bench)}
    then = {"grid": record["grid"], "bench": drop_inert_defaults(dict(record["bench"]))}  # as a resume reads it
    for d in (now, then):
        d["grid"]["workload"] = [Path(w.rpartition(":")[0]).name + ":" + w.rpartition(":")[2]
                                 for w in d["grid"]["workload"]]
    return [f"{part}.{key}: {then[part].get(key)!r} cached, {now[part].get(key)!r} now"
            for part in ("grid", "bench") for key in sorted(set(now[part]) | set(then[part]))
            if now[part].get(key) != then[part].get(key)]


def provenance(facts: dict, summary: pd.DataFrame) -> str:
    return (f"Trained for real by `python -m lionsim.docgen --refresh {CACHE}` on {facts['cpu']} "
            f"({facts['cpu_capability']}, {facts['cpus']} cores shared with other work), torch {facts['torch']}, "
            f"{facts['date']}: {len(summary)} cells ({summary['workers'].nunique()} worker counts x "
            f"{summary['seed'].nunique()} seeds x {summary['run'].nunique()} strategies) in "
            f"{facts['wall_s'] // 60}m{facts['wall_s'] % 60:02d}s of wall clock (one measurement, on a busy "
            "machine). Another CPU rounds differently: a step count can move by a step or two, and a cell close to "
            "its target can fall on the other side of it.")


def measured() -> str:
    """The sweep's steps to target: one row per run, one column per worker count, each seed's figure."""
    from lionsim.docgen.bench import wrap

    summary, _, facts = _cached()
    counts = sorted(summary["workers"].unique())
    lines = ["| run | " + " | ".join(f"N = {n}" for n in counts) + " |", "|---|" + "---|" * len(counts)]
    for run, rows in summary.groupby("run", sort=False):
        cells = []
        for n in counts:
            steps = rows.loc[rows["workers"] == n, "steps_to_target"]
            cells.append(", ".join("-" if pd.isna(s) else f"{int(s)}" for s in steps))
        lines.append(f"| {run} | " + " | ".join(cells) + " |")
    base = summary["baseline"].iloc[0]
    caption = (f"Steps to each cell's target (seeds 0, 1; - not reached): the target is {base}'s smoothed loss at "
               f"step 90 of 100 in that cell. {provenance(facts, summary)}")
    return wrap(caption) + "\n\n" + "\n".join(lines) + "\n\n"


def _run(args: list[str], figure: Path | None = None, out: bool = True) -> tuple[list[str], pd.DataFrame | None]:
    """(the lines `lionsim estimate ARGS` prints, 80 columns off a terminal, and its estimate.csv), run
    as the page runs it: in a scratch directory where FROM_RUN holds the cached sweep; `figure`: its
    to_target.png copied there; `out` False: the lines alone (no --out, so no plots drawn: seconds)."""
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / FROM_RUN
        where.mkdir(parents=True)
        for name in KEPT:
            shutil.copyfile(cache_dir(CACHE) / name, where / name)
        if not out and figure is None:
            return printed(["estimate", *args], cwd=Path(tmp)), None
        out = Path(tmp) / "estimate"
        lines = printed(["estimate", *args, "--out", str(out)], cwd=Path(tmp))
        if figure is not None:
            shutil.copyfile(out / "to_target.png", figure)
        frame = pd.read_csv(out / "estimate.csv", keep_default_na=False, na_values=[""])
    return lines, frame


FIGURE = "docs/time-to-target.png"
"""The page's plot: WORKERS_SWEEP's to_target.png (`figure()` draws it again)."""


def figure() -> Path:
    """Draw the page's plot again (the estimate's, so the same on any machine) into FIGURE."""
    target = checkout() / FIGURE
    _run(WORKERS_SWEEP, target)
    return target


def _section(lines: list[str], title: str) -> list[str]:
    """The table whose title starts with `title`: from it to the end of its notes (a blank line or the end)."""
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(title))
    rule = next(i for i in range(start, len(lines)) if set(lines[i].strip()) == {"─"})
    rows = next(i for i in range(rule, len(lines)) if not lines[i].strip())
    end = next((i for i in range(rows + 1, len(lines)) if not lines[i].strip() or lines[i].startswith("wrote ")),
               len(lines))  # the notes end at a blank line, or at what --out wrote
    return [line for line in lines[start:end] if line.strip()]


def what_it_shows(frame: pd.DataFrame) -> str:
    """The first run to target in words, its speedup split into its two factors (steps and step time)."""
    from lionsim.docgen.bench import wrap

    rows = frame.set_index(frame["strategy"] + "@" + frame["transport"])
    timed = rows[rows["time_to_target_s"].notna()]
    best, base = timed.loc[timed["time_to_target_s"].idxmin()], rows.loc[rows["baseline"].iloc[0]]
    steps = best["steps_to_target"] / base["steps_to_target"]
    step = best["time_to_target_s"] / best["steps_to_target"] / (base["time_to_target_s"] / base["steps_to_target"])
    return wrap(f"Modelled from the cached sweep, so the same on any machine: {best.name} reaches the target first, "
                f"{best['to_target_speedup']:.2f}x sooner than {base.name}: {steps:.2f}x its steps (the sweep's "
                f"ratio, fitted) at {step:.2f}x its mean step time (the estimate's, every phase priced).")


def to_target() -> str:
    lines, frame = _run(ESTIMATE)
    table = "\n".join(_section(lines, "time to target at scale"))
    return f"```text\n{table}\n```\n\n{what_it_shows(frame)}\n"


def workers_crossovers() -> str:
    return "```text\n" + "\n".join(_section(_run(WORKERS_SWEEP, out=False)[0], "crossovers of time to target")) + "\n```\n"


BLOCKS.add("from-run-measured", Block("from-run-measured", measured, cache=CACHE))
BLOCKS.add("from-run-estimate", Block("from-run-estimate", lambda: "\n" + to_target() + "\n", cache=CACHE))
BLOCKS.add("from-run-workers", Block("from-run-workers", lambda: "\n" + workers_crossovers() + "\n", cache=CACHE))
