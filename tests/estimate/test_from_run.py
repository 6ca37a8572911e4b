"""`estimate --from-run DIR`: time to target at scale, each figure against hand arithmetic from the run's
own summary.csv (or a sweep's) and the estimate's priced step, and bad input in one line.

The runs are small summary files written here (their steps to target chosen, so reaching and not
reaching are certain), and one real bench of a few mlp steps trained in-process."""

from __future__ import annotations

import json
import shlex
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from lionsim.cli import app
from lionsim.cli.app import main
from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate

BASE = dict(params=200_000_000, tokens_per_worker=1024, workers=8, network="10gbe", overlap="none", kernels="ideal")
RUNS = ["adamw@fp32-allreduce", "dlion-mavo@int8-allreduce", "diloco@fp32-allreduce", "signsgd@int8-allreduce"]
REACHED = {"adamw@fp32-allreduce": 80, "dlion-mavo@int8-allreduce": 60, "diloco@fp32-allreduce": 122,
           "signsgd@int8-allreduce": math.nan}
"""The run's steps to target: the baseline, one faster, a local-step one past whole rounds, one that never got there."""
ONE_RUN = "no band: one bench run, no spread to measure (a sweep over seeds gives one)"
"""A bench run's note: one run leaves no spread to measure, and says so."""
H = 4
"""diloco's local steps in the estimates below: 122 steps are 30 syncs and 92 local steps."""


def summary_rows(reached: dict, workers: int = 8, seed: int = 0, workload: str = "mlp", target: float = 0.5) -> list:
    return [{"run": label, "strategy": label.split("@")[0], "transport": label.split("@")[1], "workers": workers,
             "network": "1gbe", "workload": workload, "seed": seed, "steps_to_target": steps, "target_loss": target,
             "target_rule": "adamw@fp32-allreduce's loss at step 90 of 100", "baseline": RUNS[0]}
            for label, steps in reached.items()]


def bench_dir(tmp_path: Path, reached: dict = REACHED, status: str = "complete", options: dict | None = None) -> Path:
    out = tmp_path / "run"
    out.mkdir()
    pd.DataFrame(summary_rows(reached)).to_csv(out / "summary.csv", index=False)
    runs = [{"run": label, "options": (options or {}).get(label, {})} for label in reached]
    (out / "run.json").write_text(json.dumps({"command": "bench", "status": status, "runs": runs}))
    return out


def sweep_dir(tmp_path: Path, cells: dict, workloads: tuple[str, ...] = ("mlp",),
              cell_count: int | None = None) -> Path:
    """A sweep root from {(workers, seed): {label: steps to target}}, on two networks (the same training)."""
    out = tmp_path / "sweep"
    out.mkdir()
    rows = []
    for network in ("1gbe", "10gbe"):
        for i, ((workers, seed), reached) in enumerate(cells.items()):
            for row in summary_rows(reached, workers, seed, workloads[i % len(workloads)]):
                rows.append({"cell": f"c{workers}-{seed}-{network}-{row['run']}", **row, "network": network})
    pd.DataFrame(rows).to_csv(out / "sweep_summary.csv", index=False)
    (out / "sweep.json").write_text(json.dumps({"kind": "sweep", "cells": cell_count or len(rows)}))
    return out


def rows(from_run: Path | None, strategies=RUNS, **kw) -> dict:
    local = {"local_steps": H} if any(s.startswith("diloco") for s in strategies) else {}
    options = kw.pop("options", local)
    cfg = EstimateConfig(**(BASE | kw), strategies=list(strategies), options=options,
                         from_run=None if from_run is None else str(from_run))
    return {f"{r.strategy}@{r.transport}": r for r in estimate(cfg).itertuples(index=False)}


def local_step_s(**kw) -> float:
    """One local step of diloco: a one-step run is a local step (the sync is step H)."""
    return rows(None, ["diloco@fp32-allreduce"], steps=1, **kw)["diloco@fp32-allreduce"].run_s


# --- a bench run ---

def test_time_to_target_is_the_runs_steps_priced_with_every_phase(tmp_path):
    got = rows(bench_dir(tmp_path))
    adamw, dlion, diloco, signsgd = (got[label] for label in RUNS)
    # steady strategies: steps to target x the priced step, exactly the run's own counts (no --steps)
    assert adamw.steps_to_target == 80 and adamw.time_to_target_s == pytest.approx(80 * adamw.step_s, rel=1e-12)
    assert dlion.steps_to_target == 60 and dlion.time_to_target_s == pytest.approx(60 * dlion.step_s, rel=1e-12)
    # diloco, H = 4: its row is a round's mean (S + 3 L) / 4, so 122 steps = 30 syncs + 92 local steps
    local = local_step_s()
    sync = H * diloco.step_s - (H - 1) * local
    assert diloco.steps_to_target == 122 and diloco.to_target_phases == "local 92; sync 30"
    assert diloco.time_to_target_s == pytest.approx(30 * sync + 92 * local, rel=1e-12)
    # not reached: said, and no time, no speedup
    assert math.isnan(signsgd.steps_to_target) and math.isnan(signsgd.time_to_target_s)
    assert math.isnan(signsgd.to_target_speedup) and signsgd.to_target_note == "did not reach the target"
    for row in (adamw, dlion, diloco):
        assert row.to_target_speedup == pytest.approx(adamw.time_to_target_s / row.time_to_target_s, rel=1e-12)
        assert row.to_target_how == "exact" and row.to_target_from == str(tmp_path / "run")
        assert math.isnan(row.time_to_target_lo_s)  # one run: no spread measured
    assert adamw.to_target_workers == "8" and adamw.to_target_loss == 0.5 and adamw.to_target_baseline == RUNS[0]


def test_steps_scale_the_baselines_steps_at_scale_by_each_runs_ratio(tmp_path):
    n = 1000
    got = rows(bench_dir(tmp_path), steps=n)
    adamw, dlion, diloco = (got[label] for label in RUNS[:3])
    assert adamw.steps_to_target == n
    assert dlion.steps_to_target == math.ceil(n * 60 / 80)  # 750
    assert diloco.steps_to_target == math.ceil(n * 122 / 80)  # 1525: 381 syncs, 1144 local steps
    local = local_step_s()
    assert diloco.time_to_target_s == pytest.approx(381 * (H * diloco.step_s - (H - 1) * local) + 1144 * local,
                                                    rel=1e-12)
    # the same as the whole-run pricing of that many steps (lionsim.estimate.run), which --steps gives
    whole = rows(None, RUNS[:3], steps=1525)["diloco@fp32-allreduce"]
    assert diloco.time_to_target_s == pytest.approx(whole.run_s, rel=1e-12)
    assert adamw.to_target_basis == f"--steps {n}"


def test_tokens_give_the_baselines_steps_at_scale(tmp_path):
    tokens = 1024 * 8 * 400  # 400 steps of 8 workers x 1024 tokens
    got = rows(bench_dir(tmp_path), tokens=tokens)
    assert got["adamw@fp32-allreduce"].steps_to_target == 400
    assert got["dlion-mavo@int8-allreduce"].steps_to_target == 300


def test_a_strategy_is_matched_by_strategy_where_its_transport_was_not_trained_and_said(tmp_path):
    got = rows(bench_dir(tmp_path), ["adamw@fp32-allreduce", "dlion-mavo@a2a-1bit", "lion"])
    adamw, dlion, lion = got["adamw@fp32-allreduce"], got["dlion-mavo@a2a-1bit"], got["lion@fp32-allreduce"]
    assert (adamw.to_target_how, adamw.to_target_match, adamw.steps_to_target) == ("exact", RUNS[0], 80)
    assert (dlion.to_target_how, dlion.to_target_match, dlion.steps_to_target) == ("by strategy", RUNS[1], 60)
    assert lion.to_target_how == "not trained" and math.isnan(lion.time_to_target_s)
    assert lion.to_target_note == "not trained in the run"
    # the estimate's baseline (its first row) is what to_target_speedup is against
    assert dlion.to_target_speedup == pytest.approx(adamw.time_to_target_s / dlion.time_to_target_s, rel=1e-12)


@pytest.mark.parametrize("priced, trained, changes", [
    ("adamw@bf16-allreduce", RUNS[0], ", which rounds the values it carries"),
    ("adamw@fp8-allreduce", RUNS[0], ", which rounds the values it carries"),
    ("lion@fp32-allreduce", "lion@bf16-allreduce", " (bf16-allreduce rounds the values it carries)"),
])
def test_a_transport_that_rounds_takes_no_other_transports_convergence(tmp_path, priced, trained, changes):
    """docs/time-to-target.md: another wire borrows the trained run's steps only where both carry the
    same values; a bf16 or fp8 all-reduce rounds them (docs/low-precision.md), so no figure, and why."""
    from lionsim.reports.to_target import notes, status

    run = bench_dir(tmp_path, {RUNS[0]: 80, RUNS[1]: 60, trained: 70})
    got = rows(run, [RUNS[0], priced, "dlion-mavo@a2a-1bit"])
    row = got[priced]
    assert math.isnan(row.steps_to_target) and math.isnan(row.time_to_target_s)
    assert (row.to_target_how, row.to_target_match, status(row)) == ("not trained", "", "not trained")
    transport = priced.split("@")[1]
    assert notes(row) == [f"never trained over {transport}{changes}: the {trained} run's steps to target do not "
                          f"stand for it (train {priced} for a figure)"]
    # a wire that carries the votes as they are still borrows: a2a-1bit from int8-allreduce
    dlion = got["dlion-mavo@a2a-1bit"]
    assert (dlion.to_target_how, dlion.to_target_match, dlion.steps_to_target) == ("by strategy", RUNS[1], 60)


def test_an_exact_transport_node_by_node_lends_and_borrows_the_flat_runs_convergence(tmp_path):
    """docs/strategies.md: hier: over an exact transport gives the flat mean up to the order of fp32
    sums, so a run over one stands for the other; a vote of node votes still does not."""
    import torch

    from lionsim.backends import SimComm
    from lionsim.reports.to_target import notes
    from lionsim.transports import TRANSPORTS, Payload, PayloadSpec

    # the reference: 2 nodes of 4 give the float64 mean of all 8 workers, within fp32 summation error
    x = torch.randn(8, 1000, generator=torch.Generator().manual_seed(0))
    got = TRANSPORTS.get("hier:fp32-allreduce")().aggregate(Payload(PayloadSpec(kind="dense", numel=1000),
                                                                    x.clone()), SimComm(8, 4))
    flat = x.double().mean(0)
    bound = 8 * torch.finfo(torch.float32).eps * x.double().abs().sum(0)
    assert bool(((got.double() - flat).abs() <= bound).all())
    run = bench_dir(tmp_path, {RUNS[0]: 80, RUNS[1]: 60, "lion@hier:fp32-allreduce": 70})
    got = rows(run, [RUNS[0], "adamw@hier:fp32-allreduce", "lion@fp32-allreduce", "dlion-mavo@hier:a2a-1bit"])
    for priced, trained, steps in [("adamw@hier:fp32-allreduce", RUNS[0], 80),
                                   ("lion@fp32-allreduce", "lion@hier:fp32-allreduce", 70)]:
        row = got[priced]
        assert (row.to_target_how, row.to_target_match, row.steps_to_target) == ("by strategy", trained, steps)
    votes = got["dlion-mavo@hier:a2a-1bit"]
    assert votes.to_target_how == "not trained" and math.isnan(votes.steps_to_target)
    assert notes(votes) == ["never trained over hier:a2a-1bit, which does not give the flat aggregate: the "
                            "dlion-mavo@int8-allreduce run's steps to target do not stand for it (train "
                            "dlion-mavo@hier:a2a-1bit for a figure)"]


def test_a_diverged_baseline_is_one_line_on_what_helps(tmp_path, capsys):
    """Its target is NaN (it set none): no --target-loss helps; a smaller --lr or a converged baseline does."""
    run = bench_dir(tmp_path)
    summary = pd.read_csv(run / "summary.csv")
    summary.loc[0, ["steps_to_target", "target_loss"]] = math.nan
    summary["target_rule"] = f"none: the baseline {RUNS[0]} diverged"
    summary["diverged_at_step"] = [7, math.nan, math.nan, 3]
    summary.to_csv(run / "summary.csv", index=False)
    want = (f"bad --from-run {run}: its baseline {RUNS[0]} diverged at step 7, so the run has no target loss to "
            f"count steps to; accepted: a run whose baseline converged: rerun it with a smaller --lr, or with "
            f"--baseline one of its runs that converged ({RUNS[1]}, {RUNS[2]})")
    with pytest.raises(LionsimError) as refused:
        rows(run)
    assert str(refused.value) == want and "nan" not in want
    assert _main(["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--from-run", str(run)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {want}"]


def test_a_bare_strategy_prices_the_transports_the_run_trained_it_as(tmp_path):
    # the run trained dlion-mavo over a2a-1bit and hier-int8 only: a bare -s dlion-mavo prices those
    # two (each exactly), never its default int8-allreduce, which the run did not train
    trained = {RUNS[0]: 80, "dlion-mavo@a2a-1bit": 60, "dlion-mavo@allgather-1bit": 64}
    got = rows(bench_dir(tmp_path, trained), ["adamw", "dlion-mavo"])
    assert list(got) == list(trained)
    assert [(r.to_target_how, r.steps_to_target) for r in got.values()] == [("exact", 80), ("exact", 60),
                                                                             ("exact", 64)]
    # named with it as well, the trained run is priced once; a bare name the run did not train stays as it is
    got = rows(tmp_path / "run", ["adamw", "dlion-mavo@a2a-1bit", "dlion-mavo", "lion"])
    assert list(got) == [*trained, "lion@fp32-allreduce"]


def test_another_wire_on_a_trained_strategy_says_whose_steps_it_took(tmp_path):
    from lionsim.reports.to_target import notes

    got = rows(bench_dir(tmp_path), ["adamw", "dlion-mavo@a2a-1bit"])["dlion-mavo@a2a-1bit"]
    assert notes(got) == ["steps to target from the dlion-mavo@int8-allreduce run (never trained over a2a-1bit)",
                          ONE_RUN]


def test_a_diverged_run_says_so(tmp_path):
    run = bench_dir(tmp_path)
    summary = pd.read_csv(run / "summary.csv")
    summary["diverged_at_step"] = [math.nan, math.nan, math.nan, 20]
    summary.to_csv(run / "summary.csv", index=False)
    got = rows(run)["signsgd@int8-allreduce"]
    assert got.to_target_note == "did not reach the target (diverged at step 20)" and math.isnan(got.time_to_target_s)


def test_options_trained_otherwise_price_the_step_but_give_no_time_to_target(tmp_path):
    # trained at H = 2, priced at H = 4: the step is H = 4's, the convergence measured says nothing of it
    run = bench_dir(tmp_path, options={"diloco@fp32-allreduce": {"local_steps": 2, "outer_lr": 0.7}})
    got = rows(run)
    diloco = got["diloco@fp32-allreduce"]
    assert diloco.to_target_note == ("the run trained it at --local-steps 2, this estimate prices 4: time to target "
                                     "needs the trained value (drop --local-steps, or train at 4)")
    assert math.isnan(diloco.steps_to_target) and math.isnan(diloco.time_to_target_s)
    assert math.isnan(diloco.to_target_speedup) and diloco.local_steps == H
    assert diloco.step_s == pytest.approx(rows(None, ["diloco@fp32-allreduce"])["diloco@fp32-allreduce"].step_s)
    # outer_lr is TRAINING: estimate refuses it, so its priced value is only the default, never compared
    same = tmp_path / "same"
    same.mkdir()
    trained = bench_dir(same, options={"diloco@fp32-allreduce": {"local_steps": H, "outer_lr": 0.7}})
    again = rows(trained)["diloco@fp32-allreduce"]
    assert again.steps_to_target == 122 and again.to_target_note == ONE_RUN


def test_several_options_trained_otherwise_are_each_named(tmp_path):
    streaming = "streaming-diloco@fp4-allreduce"
    run = bench_dir(tmp_path, {RUNS[0]: 80, streaming: 70},
                    options={streaming: {"local_steps": 8, "fragments": 4, "alpha": 0.5, "outer_lr": 0.1}})
    got = rows(run, [RUNS[0], streaming], tensors=8)[streaming]  # none given: each as trained
    assert got.to_target_note == ONE_RUN and got.steps_to_target == 70
    one = rows(run, [RUNS[0], streaming], tensors=8, options={"local_steps": 4})[streaming]
    assert one.to_target_note == ("the run trained it at --local-steps 8, this estimate prices 4: time to target "
                                  "needs the trained value (drop --local-steps, or train at 4)")
    assert math.isnan(one.time_to_target_s)
    # both given otherwise: each named, forwards
    both = rows(run, [RUNS[0], streaming], tensors=8, options={"local_steps": 4, "streaming_fragments": 2})[streaming]
    assert both.to_target_note == ("the run trained it at --local-steps 8 and --streaming-fragments 4, this estimate "
                                   "prices 4 and 2: time to target needs the trained values (drop --local-steps and "
                                   "--streaming-fragments, or train at 4 and 2)")


def estimate_of(run: Path, **kw) -> dict:
    """The estimate's rows by label, no -s and no options unless given."""
    cfg = EstimateConfig(**(BASE | kw), from_run=str(run))
    return {f"{r.strategy}@{r.transport}": r for r in estimate(cfg).itertuples(index=False)}


def test_without_options_each_run_is_priced_with_the_options_it_trained_with(tmp_path):
    # trained at H = 10: without -s or --local-steps its row is H = 10's, figure and step, exactly what
    # --local-steps 10 by hand gives; with -s diloco too (a bare name is the run as trained)
    run = bench_dir(tmp_path, options={"diloco@fp32-allreduce": {"local_steps": 10, "outer_lr": 0.7}})
    by_hand = estimate_of(run, options={"local_steps": 10})["diloco@fp32-allreduce"]
    assert by_hand.local_steps == 10 and by_hand.steps_to_target == 122 and by_hand.to_target_note == ONE_RUN
    for got in (estimate_of(run)["diloco@fp32-allreduce"],
                estimate_of(run, strategies=["adamw", "diloco"])["diloco@fp32-allreduce"]):
        assert got.local_steps == 10 and got.to_target_note == ONE_RUN
        assert (got.steps_to_target, got.time_to_target_s, got.step_s) == (
            by_hand.steps_to_target, by_hand.time_to_target_s, by_hand.step_s)
    # a value given by --opt is the user's too: refused forwards, the fix named
    other = estimate_of(run, options={"diloco.local_steps": 2})["diloco@fp32-allreduce"]
    assert other.local_steps == 2 and math.isnan(other.steps_to_target)
    assert other.to_target_note.startswith("the run trained it at --local-steps 10, this estimate prices 2")


def test_a_sweep_whose_cells_trained_a_run_with_different_options_is_one_line(tmp_path):
    # no sweep trains that (no option is an axis): cells from two sweeps put together by hand
    root = sweep_dir(tmp_path, {(2, 0): REACHED, (4, 0): REACHED})
    summary = pd.read_csv(root / "sweep_summary.csv")
    for cell, label, workers in zip(summary["cell"], summary["run"], summary["workers"]):
        (root / "cells" / cell).mkdir(parents=True)
        options = {"local_steps": workers} if label.startswith("diloco") else {}
        (root / "cells" / cell / "run.json").write_text(json.dumps({"runs": [{"run": label, "options": options}]}))
    with pytest.raises(LionsimError) as e:
        estimate_of(root)
    assert str(e.value).startswith(f"bad --from-run {root}: its cells trained diloco@fp32-allreduce with different "
                                   "options (local_steps: cells c2-0-1gbe-diloco@fp32-allreduce and "
                                   "c4-0-1gbe-diloco@fp32-allreduce), so no one record says how it was trained")


def test_a_run_at_another_worker_count_is_marked(tmp_path):
    run = bench_dir(tmp_path)
    got = rows(run, workers=64)["dlion-mavo@int8-allreduce"]
    assert got.to_target_beyond and got.to_target_note == f"measured at 8 workers only; {ONE_RUN}"
    assert got.steps_to_target == 60  # the ratio as measured, at whatever N
    same = rows(run, workers=8)["dlion-mavo@int8-allreduce"]
    assert not same.to_target_beyond and same.to_target_note == ONE_RUN


def test_a_real_bench_runs_summary_is_read_as_written(tmp_path):
    from lionsim.bench import BenchConfig, run_bench
    from lionsim.reports import write_run

    result = run_bench(BenchConfig(workload="mlp", model_size="tiny", workers=2, steps=6, batch_size=8,
                                   eval_every=6, strategies=["adamw", "dlion-mavo"]))
    out = tmp_path / "bench"
    write_run(out, result.steps, result.summary, result.meta)
    summary = pd.read_csv(out / "summary.csv")
    got = rows(out, ["adamw", "dlion-mavo"], workers=2)
    base = summary["steps_to_target"].iloc[0]
    for label, steps in zip(summary["run"], summary["steps_to_target"]):
        expect = steps if math.isfinite(steps) else math.nan
        assert got[label].steps_to_target == pytest.approx(expect, nan_ok=True)
        assert got[label].to_target_ratio == pytest.approx(steps / base, nan_ok=True)
    (out / "summary.csv").unlink()  # made again from steps.csv under the run's own rule
    again = rows(out, ["adamw", "dlion-mavo"], workers=2)
    assert [again[k].steps_to_target for k in got] == pytest.approx([got[k].steps_to_target for k in got], nan_ok=True)


# --- a sweep over workers ---

def _least_squares(x, y):
    """The line through (x, y) by the normal equations, and the residual standard deviation (n - 2)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    slope = ((x - x.mean()) * (y - y.mean())).sum() / ((x - x.mean()) ** 2).sum()
    intercept = y.mean() - slope * x.mean()
    residual = y - intercept - slope * x
    return intercept, slope, math.sqrt((residual ** 2).sum() / (len(x) - 2))


CELLS = {(4, 0): {RUNS[0]: 90, RUNS[1]: 72}, (8, 0): {RUNS[0]: 90, RUNS[1]: 83},
         (16, 0): {RUNS[0]: 90, RUNS[1]: 90}, (32, 0): {RUNS[0]: 88, RUNS[1]: 92}}


FIT_N = 256
"""The worker count CELLS' sweep is priced at, past the counts it measured."""


def fitted_by_hand(tmp_path):
    """CELLS' sweep priced at FIT_N workers, and its fits by hand: (the sweep's root, adamw's row,
    dlion's row, a, b, rho, sigma_rho, S, sigma_S), rho = a + b log N the ratio and S the baseline's
    steps, each fitted against log N and taken at FIT_N."""
    root = sweep_dir(tmp_path, CELLS)
    ns = [w for w, _ in CELLS]
    a, b, sigma = _least_squares(np.log(ns), [c[RUNS[1]] / c[RUNS[0]] for c in CELLS.values()])
    ab, bb, sb = _least_squares(np.log(ns), [c[RUNS[0]] for c in CELLS.values()])
    got = rows(root, RUNS[:2], workers=FIT_N, network="h100x8-100gbe")
    return (root, got[RUNS[0]], got[RUNS[1]], a, b, a + b * math.log(FIT_N), sigma, ab + bb * math.log(FIT_N),
            sb)


def test_a_sweep_fits_the_ratio_against_log_n_and_its_spread_is_the_band(tmp_path):
    root, adamw, dlion, a, b, rho, sigma, s, sb = fitted_by_hand(tmp_path)
    assert dlion.to_target_ratio == pytest.approx(rho, rel=1e-12)
    assert dlion.to_target_per_doubling == pytest.approx(b * math.log(2), rel=1e-12)
    assert dlion.steps_to_target == math.ceil(s * rho)
    assert dlion.steps_to_target_lo == math.ceil((s - sb) * (rho - sigma))
    assert dlion.steps_to_target_hi == math.ceil((s + sb) * (rho + sigma))
    assert adamw.steps_to_target == math.ceil(s)  # the baseline's own steps, fitted
    # each band end is the run of that many steps, priced
    assert dlion.time_to_target_hi_s == pytest.approx(dlion.steps_to_target_hi * dlion.step_s, rel=1e-12)
    assert dlion.to_target_beyond and "extrapolated beyond the measured 4-32 workers" in dlion.to_target_note
    assert dlion.to_target_workers == "4 8 16 32"
    inside = rows(root, RUNS[:2], workers=8, steps=1000)[RUNS[1]]
    assert not inside.to_target_beyond and inside.steps_to_target == math.ceil(1000 * (a + b * math.log(8)))
    # --steps gives the baseline's steps exactly: its own band has no width, the others' the ratio's spread
    given = rows(root, RUNS[:2], workers=FIT_N, network="h100x8-100gbe", steps=1000)
    assert given[RUNS[0]].steps_to_target_lo == given[RUNS[0]].steps_to_target_hi == 1000
    assert given[RUNS[1]].steps_to_target_hi == math.ceil(1000 * (rho + sigma))


def test_seeds_at_one_worker_count_give_their_mean_and_standard_deviation(tmp_path):
    cells = {(8, 0): {RUNS[0]: 80, RUNS[1]: 60}, (8, 1): {RUNS[0]: 80, RUNS[1]: 70}, (8, 2): {RUNS[0]: 80, RUNS[1]: 80}}
    got = rows(sweep_dir(tmp_path, cells), RUNS[:2], steps=100)[RUNS[1]]
    ratios = [0.75, 0.875, 1.0]
    assert got.steps_to_target == math.ceil(100 * np.mean(ratios))
    assert got.steps_to_target_lo == math.ceil(100 * (np.mean(ratios) - np.std(ratios, ddof=1)))
    assert not got.to_target_beyond


def test_a_sweep_cell_not_reached_is_left_out_of_the_fit_and_said(tmp_path):
    cells = {(4, 0): {RUNS[0]: 90, RUNS[3]: 100}, (8, 0): {RUNS[0]: 90, RUNS[3]: 110},
             (16, 0): {RUNS[0]: 90, RUNS[3]: math.nan}}
    got = rows(sweep_dir(tmp_path, cells), [RUNS[0], RUNS[3]], workers=8)[RUNS[3]]
    assert got.steps_to_target == 110  # the line through the two reached cells, at one of them
    assert "reached the target in 2 of 3 cells (fitted over those)" in got.to_target_note
    other = tmp_path / "other"
    other.mkdir()
    missed = rows(sweep_dir(other, {k: {RUNS[0]: 90, RUNS[3]: math.nan} for k in cells}), [RUNS[0], RUNS[3]])[RUNS[3]]
    assert math.isnan(missed.time_to_target_s)
    assert missed.to_target_note == "did not reach the target in any of its 3 cells"
    alone = tmp_path / "alone"  # one cell: "in its one cell", not "in any of its 1 cells"
    alone.mkdir()
    one = rows(sweep_dir(alone, {(8, 0): {RUNS[0]: 90, RUNS[3]: math.nan}}), [RUNS[0], RUNS[3]])[RUNS[3]]
    assert one.to_target_note == "did not reach the target in its one cell"


MISSES = {(2, 0): {RUNS[0]: 90, RUNS[1]: 60, RUNS[3]: 45}, (4, 0): {RUNS[0]: 100, RUNS[1]: 70, RUNS[3]: math.nan},
          (8, 0): {RUNS[0]: 110, RUNS[1]: 80, RUNS[3]: math.nan}}
"""signsgd reaches the target at 2 workers (half adamw's steps: the fastest there) and misses at 4 and 8."""


def test_no_time_to_target_past_a_measured_miss(tmp_path):
    root = sweep_dir(tmp_path, MISSES)
    at = lambda n: rows(root, [RUNS[0], RUNS[1], RUNS[3]], workers=n, steps=1000)  # noqa: E731
    # at 2 workers, where it reached: its ratio as measured, 45 / 90
    assert at(2)[RUNS[3]].steps_to_target == 500
    # past the largest count it reached: priced between it and the miss (3: it said "past" a miss at 4
    # before), at the miss, past it
    for n, side in ((3, "toward"), (4, "at"), (32, "past")):
        signsgd = at(n)[RUNS[3]]
        assert math.isnan(signsgd.steps_to_target) and math.isnan(signsgd.time_to_target_s)
        assert math.isnan(signsgd.to_target_speedup) and signsgd.to_target_beyond
        assert signsgd.to_target_note == ("missed the target at 4 and 8 workers (reached it in every cell up to 2): "
                                          f"no figure beyond 2 workers, {side} a measured miss at 4")
    # a run that reached at every count is extrapolated as before: the line through its ratios
    a, b, _ = _least_squares(np.log([2, 4, 8]), [60 / 90, 70 / 100, 80 / 110])
    assert at(32)[RUNS[1]].steps_to_target == math.ceil(1000 * (a + b * math.log(32)))


def test_a_miss_in_one_seed_is_a_measured_miss(tmp_path):
    """The documented sweep's diloco missed at 16 workers (both seeds) and at 32 in one: it reached in
    every cell up to 8 only. signsgd missed in one seed at every count: no count to extrapolate from."""
    cells = {(4, 0): {RUNS[0]: 90, RUNS[2]: 87, RUNS[3]: 89}, (4, 1): {RUNS[0]: 86, RUNS[2]: 82, RUNS[3]: math.nan},
             (8, 0): {RUNS[0]: 90, RUNS[2]: 91, RUNS[3]: 83}, (8, 1): {RUNS[0]: 90, RUNS[2]: 90, RUNS[3]: math.nan},
             (16, 0): {RUNS[0]: 90, RUNS[2]: math.nan, RUNS[3]: 90},
             (16, 1): {RUNS[0]: 89, RUNS[2]: math.nan, RUNS[3]: math.nan},
             (32, 0): {RUNS[0]: 90, RUNS[2]: 100, RUNS[3]: 87}, (32, 1): {RUNS[0]: 90, RUNS[2]: math.nan,
                                                                        RUNS[3]: math.nan}}
    root = sweep_dir(tmp_path, cells)
    got = rows(root, [RUNS[0], RUNS[2], RUNS[3]], workers=256, steps=1000)
    assert math.isnan(got[RUNS[2]].time_to_target_s) and math.isnan(got[RUNS[3]].time_to_target_s)
    assert got[RUNS[2]].to_target_note == ("missed the target at 16 and 32 workers (reached it in every cell up to "
                                           "8): no figure beyond 8 workers, past a measured miss at 16")
    between = rows(root, [RUNS[0], RUNS[2]], workers=12, steps=1000)[RUNS[2]]  # priced short of the miss at 16
    assert between.to_target_note == ("missed the target at 16 and 32 workers (reached it in every cell up to 8): "
                                      "no figure beyond 8 workers, toward a measured miss at 16")
    assert got[RUNS[3]].to_target_note == ("missed the target at 4, 8, 16 and 32 workers (reached it in every cell at "
                                           "none of the counts measured): no count to extrapolate from")
    inside = rows(root, [RUNS[0], RUNS[2]], workers=8, steps=1000)[RUNS[2]]
    assert math.isfinite(inside.time_to_target_s)  # where it reached in every cell: its fit, as before


def test_a_run_missing_at_its_largest_count_is_no_first_to_target_and_its_cells_read_dashes(tmp_path):
    root = sweep_dir(tmp_path, {k: c for k, c in MISSES.items() if k[0] < 8})
    out = tmp_path / "est"
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--workers", "32", "--network", "10gbe",
            "-s", "adamw", "-s", "dlion-mavo", "-s", "signsgd", "--from-run", str(root), "--steps", "1000",
            "--out", str(out)]
    done = CliRunner().invoke(app, args, env={"COLUMNS": "120"})
    assert done.exit_code == 0, done.output
    lines = done.output[done.output.index("time to target at scale"):].splitlines()
    # at 120 columns a run's name is one line (signsgd@int8-allreduce), at 80 two
    signsgd = next(line for line in lines if line.split()[:1] and line.split()[0].split("@")[0] == "signsgd")
    assert signsgd.split()[1:] == ["-", "-", "-"], signsgd  # steps, time, speedup: no figure, not "not reached"
    said = " ".join(done.output.split())
    assert ("signsgd@int8-allreduce: missed the target at 4 workers (reached it in every cell up to 2): no "
            "figure beyond 2 workers, past a measured miss at 4.") in said
    assert "hint: 1 of 3 runs priced did not reach the target loss in" in said  # what would give it a figure
    # the two the fit is a line through two counts for: no band, and said
    assert "fitted on 2 counts: no band" in said
    frame = pd.read_csv(out / "estimate.csv").set_index("strategy")
    assert math.isnan(frame.loc["dlion-mavo", "time_to_target_lo_s"])
    assert math.isfinite(frame.loc["dlion-mavo", "time_to_target_s"])
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    report = (out / "report.md").read_text()
    # signsgd was the fastest where it reached (0.5x adamw's steps): before, it was crowned at 32 workers
    assert "First to target: **dlion-mavo@int8-allreduce**" in report
    assert ("signsgd@int8-allreduce has no time to target: missed the target at 4 workers (reached it in every "
            "cell up to 2): no figure beyond 2 workers, past a measured miss at 4.") in report


def test_the_crossovers_over_workers_stop_at_a_measured_miss(tmp_path):
    from lionsim.estimate.sweep import run_sweep
    from lionsim.reports.to_target import crossover_words

    root = sweep_dir(tmp_path, MISSES)
    cfg = EstimateConfig(**BASE, strategies=[RUNS[0], RUNS[3]], from_run=str(root), steps=1000)
    swept = run_sweep(cfg, "workers=2,16,64")
    signsgd = swept.to_target.set_index("strategy").loc["signsgd"]
    # sooner at 2 (0.5x the steps), no figure at 16 and 64: not "sooner everywhere"
    assert signsgd.wins == "everywhere" and math.isnan(signsgd.crossover)
    assert signsgd.wins_where == "sooner at 2 workers; no time to target at 16 and 64 workers"
    assert signsgd.speedup_first > 1 and math.isnan(signsgd.speedup_last)
    assert crossover_words(swept.to_target, "workers") == ("- signsgd@int8-allreduce: sooner at 2 workers; no time "
                                                          "to target at 16 and 64 workers")


def test_a_sweep_over_workers_prices_each_count_from_the_fit(tmp_path):
    from lionsim.estimate.sweep import run_sweep

    root = sweep_dir(tmp_path, CELLS)
    cfg = EstimateConfig(**BASE, strategies=RUNS[:2], from_run=str(root), steps=1000)
    swept = run_sweep(cfg, "workers=8,64")
    for n in (8, 64):
        at = swept.rows[swept.rows["sweep_value"] == n]
        at = at.set_index(at["strategy"] + "@" + at["transport"])
        direct = rows(root, RUNS[:2], workers=n, steps=1000)
        for label in RUNS[:2]:
            assert at.loc[label, "time_to_target_s"] == pytest.approx(direct[label].time_to_target_s, rel=1e-12)
    assert list(swept.to_target["variable"]) == ["workers"]


# --- the bounds on extrapolation: no crossing of the baseline, a 2-count trend one doubling on ---

def _at_every_count(root: Path, base_steps: int | None) -> dict[int, tuple]:
    """(the baseline's AtScale, dlion-mavo's) at every worker count 2..1024: brute force, library-side."""
    from lionsim.estimate.from_run import load
    from lionsim.estimate.to_target import Convergence

    convergence = Convergence(load(root))
    return {n: tuple(convergence.at_scale(*label.split("@"), n, base_steps) for label in RUNS[:2])
            for n in range(2, 1025)}


@pytest.mark.parametrize("dlion, side", [((160, 140, 120), "slower"), ((60, 80, 95), "faster")])
def test_a_run_measured_on_one_side_of_the_baseline_is_never_priced_on_the_other(tmp_path, dlion, side):
    """Steps relative to adamw of 1.6, 1.4, 1.2 (or 0.6, 0.8, 0.95) at 2, 4 and 8 workers: the line
    through them crosses 1.0 by 16 and runs far past it; the run is held at the baseline's steps."""
    cells = {(n, 0): {RUNS[0]: 100, RUNS[1]: steps} for n, steps in zip((2, 4, 8), dlion)}
    root = sweep_dir(tmp_path, cells)
    slower = side == "slower"
    for base_steps in (1000, None):  # --steps, and the run's own baseline fit (100 at every N)
        for n, (adamw, got) in _at_every_count(root, base_steps).items():
            assert (got.ratio >= 1.0) if slower else (got.ratio <= 1.0), (n, got)
            assert (got.steps >= adamw.steps) if slower else (got.steps <= adamw.steps), (n, got, adamw)
    held = rows(root, RUNS[:2], workers=1024, steps=1000)[RUNS[1]]
    a, b, _ = _least_squares(np.log([2, 4, 8]), [s / 100 for s in dlion])
    assert (a + b * math.log(1024) < 1.0) if slower else (a + b * math.log(1024) > 1.0)  # the line crossed
    assert held.steps_to_target == 1000 and held.to_target_ratio == 1.0
    assert held.to_target_per_doubling == pytest.approx(b * math.log(2), rel=1e-12)  # the trend, as fitted
    assert (f"held at the baseline's steps: measured {side} to the target at every count, 2-8 workers"
            in held.to_target_note)
    inside = rows(root, RUNS[:2], workers=8, steps=1000)[RUNS[1]]  # where the line stays on its side: as fitted
    assert inside.steps_to_target == math.ceil(1000 * (a + b * math.log(8)) - 1e-9)
    assert "held" not in inside.to_target_note


def test_a_trend_on_two_counts_is_held_at_the_nearest_count_past_one_doubling(tmp_path):
    """0.9 of adamw's steps at 4 workers, 0.8 at 8: the line goes on to 0.3 by 256. Within one doubling
    of the counts (2 to 16) it is the line; past it, the ratio measured at the nearest count."""
    root = sweep_dir(tmp_path, {(4, 0): {RUNS[0]: 100, RUNS[1]: 90}, (8, 0): {RUNS[0]: 100, RUNS[1]: 80}})
    line = lambda n: 0.9 - 0.1 * math.log2(n / 4)  # noqa: E731  (the line through both, by hand)
    for n in (2, 3, 4, 8, 16):
        got = rows(root, RUNS[:2], workers=n, steps=1000)[RUNS[1]]
        assert got.to_target_ratio == pytest.approx(line(n), rel=1e-12) and "ratio held" not in got.to_target_note
    for n, measured, note in ((1, 0.9, "below 2"), (17, 0.8, "beyond 16"), (256, 0.8, "beyond 16")):
        got = rows(root, RUNS[:2], workers=n, steps=1000)[RUNS[1]]
        assert got.to_target_ratio == pytest.approx(measured, rel=1e-12), n
        assert got.steps_to_target == math.ceil(1000 * measured - 1e-9) and got.to_target_beyond
        assert f"fitted on 2 counts: ratio held {note} workers" in got.to_target_note
    # a user's sweep: D-Lion measured 1.66x and 1.45x adamw's steps at 2 and 4 workers was priced at 0.41x
    # at 128 (8,286 of 20,000 steps) by the line; it is held at 4 workers' 1.45
    (tmp_path / "user").mkdir()
    user = sweep_dir(tmp_path / "user", {(2, 0): {RUNS[0]: 35, RUNS[1]: 58}, (4, 0): {RUNS[0]: 40, RUNS[1]: 58}})
    got = rows(user, RUNS[:2], workers=128, steps=20_000)[RUNS[1]]
    assert got.steps_to_target == 29_000 and got.to_target_ratio == pytest.approx(58 / 40, rel=1e-12)



def test_the_baselines_own_steps_on_two_counts_are_held_past_one_doubling(tmp_path):
    """A user's sweep: adamw reached the target in 49 steps at 2 workers and 38 at 4; the line through
    them, carried two doublings, priced 16 steps at 16 workers. Without --steps / --tokens, S(N) is the
    line within one doubling (1 to 8 workers) and the nearest count's 38 past it, as rho is."""
    root = sweep_dir(tmp_path, {(2, 0): {RUNS[0]: 49, RUNS[1]: 40}, (4, 0): {RUNS[0]: 38, RUNS[1]: 30}})
    line = lambda n: 49 - 11 * math.log2(n / 2)  # noqa: E731  (through both counts, by hand)
    for n, (adamw, dlion) in _at_every_count(root, None).items():
        s = line(n) if n <= 8 else 38.0
        rho = 40 / 49 + (30 / 38 - 40 / 49) * math.log2(n / 2) if n <= 8 else 30 / 38
        assert adamw.steps == math.ceil(s - 1e-9), n
        assert dlion.steps == math.ceil(s * rho - 1e-9), n
        held = "fitted on 2 counts: ratio and baseline's steps held beyond 8 workers"
        assert (held in adamw.note) == (held in dlion.note) == (n > 8), (n, adamw.note)
    assert rows(root, RUNS[:2], workers=16)[RUNS[0]].steps_to_target == 38  # not the line's 16
    given = rows(root, RUNS[:2], workers=16, steps=1000)[RUNS[0]]  # --steps sets S: nothing to hold
    assert given.steps_to_target == 1000 and "baseline's steps held" not in given.to_target_note
    # a run measured at one count (it missed at 2: no trend of its own): only S was held
    (tmp_path / "one").mkdir()
    one = sweep_dir(tmp_path / "one", {(2, 0): {RUNS[0]: 49, RUNS[1]: math.nan}, (4, 0): {RUNS[0]: 38, RUNS[1]: 30}})
    got = rows(one, RUNS[:2], workers=16)[RUNS[1]]
    assert got.steps_to_target == 30
    assert "fitted on 2 counts: baseline's steps held beyond 8 workers" in got.to_target_note


# --- the command ---

def test_the_command_prints_writes_plots_and_reports_time_to_target(tmp_path):
    root = sweep_dir(tmp_path, CELLS)
    out = tmp_path / "est"
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--workers", "64", "--network",
            "h100x8-100gbe", "-s", "adamw", "-s", "dlion-mavo@a2a-1bit", "-s", "lion", "--from-run", str(root),
            "--steps", "1000", "--sweep", "bandwidth=1,10,100", "--out", str(out)]
    done = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    assert "time to target at scale: 64 workers" in done.output
    assert "crossovers of time to target against adamw@fp32-allreduce" in done.output
    assert "lion@fp32-allreduce: not trained in the sweep." in done.output
    assert ("dlion-mavo@a2a-1bit: steps to target from the dlion-mavo@int8-allreduce run (never trained over "
            "a2a-1bit)") in " ".join(done.output.split())
    for name in ("estimate.csv", "sweep.csv", "to_target_crossover.csv", "to_target.png"):
        assert (out / name).is_file(), name
    assert "time_to_target_hi_s" in pd.read_csv(out / "sweep.csv").columns
    done = CliRunner().invoke(app, ["report", str(out)])
    assert done.exit_code == 0, done.output
    report = (out / "report.md").read_text()
    assert "## Time to target at scale" in report and "if convergence at scale behaves as it did there" in report
    assert "![to_target](to_target.png)" in report and "## Time-to-target crossovers" in report
    assert "Where each run starts (or stops) reaching" not in report  # said once: the crossovers' table


def test_report_of_one_estimate_says_it_in_words(tmp_path):
    out = tmp_path / "est"
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--network", "10gbe", "-s", "adamw",
            "-s", "dlion-mavo", "-s", "signsgd", "--from-run", str(bench_dir(tmp_path)), "--out", str(out)]
    assert CliRunner().invoke(app, args).exit_code == 0
    done = CliRunner().invoke(app, ["report", str(out)])
    assert done.exit_code == 0, done.output
    report = (out / "report.md").read_text()
    assert "First to target: **dlion-mavo@int8-allreduce**" in report
    assert "signsgd@int8-allreduce has no time to target: did not reach the target." in report
    assert (out / "to_target.png").is_file()


@pytest.mark.parametrize("make, says", [
    (lambda t: t / "absent", "bad --from-run {d}: no such directory; accepted: a finished `lionsim bench`"),
    (lambda t: (t / "empty").mkdir() or t / "empty", "it holds neither run.json nor sweep.json"),
    (lambda t: bench_dir(t, status="interrupted"), "the run is interrupted, not finished"),
    (lambda t: bench_dir(t, {**REACHED, RUNS[0]: math.nan}),
     "the run's baseline adamw@fp32-allreduce did not reach its target loss 0.5"),
    (lambda t: sweep_dir(t, {(4, 0): {RUNS[0]: 90}, (8, 0): {RUNS[0]: 90}}, workloads=("mlp", "vit")),
     "the sweep trained 2 workloads (mlp, vit); one workload's convergence prices a run"),
    (lambda t: sweep_dir(t, {(4, 0): {RUNS[0]: 90}}, cell_count=5), "the sweep is not finished (2 of 5 cells"),
    (lambda t: sweep_dir(t, {(4, 0): {RUNS[0]: math.nan}}), "did not reach its target in the sweep's one cell"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, make, says):
    where = make(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as done:
        main(["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--from-run", str(where),
              "--out", str(out)])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert done.value.code == 2 and len(lines) == 1 and says.format(d=where) in lines[0], captured.err
    assert not out.exists() and captured.out == ""


def test_the_library_raises_the_same_line(tmp_path):
    with pytest.raises(LionsimError, match="not finished"):
        rows(bench_dir(tmp_path, status="failed"))


@pytest.mark.parametrize("run, options", [("onebit-adam", {}), ("diloco", {"local_steps": 3}),
                                          ("dlion-mavo", {"momentum_sync": "every:7"}), ("dgc", {})])
def test_a_kind_count_extended_equals_one_counted_afresh(run, options):
    """The band's run counts extend the shorter run's count (lionsim.estimate.run.KindCount): the plain
    count of each length, walked from step 1, is the reference."""
    from lionsim.estimate.probe import probe
    from lionsim.estimate.run import KindCount, step_kinds
    from lionsim.runs import parse_runs

    (spec,) = parse_runs([run], None)
    p = probe(spec, params=1000, tensors=4, workers=8, options=options)
    counter = KindCount(p.strategy, p.spec, 8)
    for steps in (5, 23, 23, 101, 40):  # growing, the same again, then shorter (counted again from step 1)
        assert counter.upto(steps) == step_kinds(p.strategy, p.spec, steps, 8), steps


def test_plot_of_an_estimate_without_from_run_is_one_line(tmp_path):
    from lionsim.reports.plots import plot_dir

    out = tmp_path / "e"
    assert CliRunner().invoke(app, ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--out",
                                    str(out)]).exit_code == 0
    with pytest.raises(LionsimError, match="has no plot: an estimate draws one with --from-run"):
        plot_dir(out)


def _main(args) -> int:
    with pytest.raises(SystemExit) as done:
        main(args)
    return done.value.code


def test_a_report_with_no_time_to_target_draws_no_plot_says_why_and_gives_the_command(tmp_path):
    """No run reached the target (signsgd) or was trained (lion): nothing to plot, and the report
    says so; its Reproduce section is the estimate's own command line, as typed, with --overwrite
    (its --out holds the estimate)."""
    out = tmp_path / "est"
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--network", "10gbe", "-s", "signsgd",
            "-s", "lion", "--from-run", str(bench_dir(tmp_path)), "--out", str(out)]
    assert _main(args) == 0
    assert json.loads((out / "estimate.json").read_text())["argv"] == ["lionsim", *args]
    assert _main(["report", str(out)]) == 0
    report = (out / "report.md").read_text()
    assert not (out / "to_target.png").exists() and "![" not in report
    assert ("None: no run has a time to target, so there is nothing to plot (signsgd@int8-allreduce did not "
            "reach the target; lion@fp32-allreduce not trained in the run)") in report
    assert "    " + shlex.join(["lionsim", *args, "--overwrite"]) + "\n" in report.split("## Reproduce")[1]


def test_an_estimate_sweep_with_no_time_to_target_anywhere_draws_no_plot(tmp_path):
    out = tmp_path / "est"
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--workers", "64", "--network",
            "h100x8-100gbe", "-s", "signsgd", "-s", "lion", "--from-run", str(bench_dir(tmp_path)),
            "--sweep", "bandwidth=1,10", "--out", str(out)]
    assert _main(args) == 0
    assert (out / "sweep.png").is_file() and not (out / "to_target.png").exists()
    assert _main(["report", str(out)]) == 0
    report = (out / "report.md").read_text()
    assert "to_target.png is not drawn: no run has a time to target" in report
    assert "    " + shlex.join(["lionsim", *args, "--overwrite"]) + "\n" in report.split("## Reproduce")[1]


def paragraph(lines: list[str], first: str) -> list[str]:
    """The printed lines of the paragraph starting with `first`, up to a blank line or a line that
    starts another note (`every run priced:`, a run's own, a table's title)."""
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    out = [lines[start]]
    for line in lines[start + 1:]:
        if not line.strip() or line.lstrip().startswith(("every run", "dlion-mavo@", "lion@", "crossovers")):
            break
        out.append(line)
    return out


def assert_wrapped_at(lines: list[str], width: int) -> None:
    """Each line fits `width`, starts at the left, and the next line's first word would not have
    fitted: wrapped at `width`, left-justified."""
    assert all(len(line) <= width and not line.startswith(" ") for line in lines), lines
    for line, after in zip(lines, lines[1:]):
        assert len(line) + 1 + len(after.split()[0]) > width, (line, after)


@pytest.mark.parametrize("columns", [80, 120])
def test_the_time_to_target_and_crossover_notes_take_the_tables_80_columns_left_justified(tmp_path, columns):
    """A table of few columns wraps its notes at the 80 columns the estimate's tables take (not at
    its own 46-70), and the crossover table's note starts at the left as the others do."""
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--workers", "64", "--network",
            "h100x8-100gbe", "-s", "adamw", "-s", "dlion-mavo@a2a-1bit", "--from-run", str(sweep_dir(tmp_path, CELLS)),
            "--steps", "1000", "--sweep", "workers=8,64"]
    done = CliRunner().invoke(app, args, env={"COLUMNS": str(columns)})
    assert done.exit_code == 0, done.output
    lines = [line.rstrip() for line in done.output.splitlines()]
    assert_wrapped_at(paragraph(lines, "If convergence at scale"), 80)
    assert_wrapped_at(paragraph(lines, "crossover: the worker counts"), 80)


def test_a_band_reads_as_a_runs_length():
    """A band's ends are run lengths as the whole-run table prints them (lionsim.numbers.run_duration)."""
    from lionsim.reports.to_target import band_text

    hour, day = 3600.0, 86400.0
    assert band_text(8.03 * hour, 8.59 * hour, 9.16 * hour) == "8:01:48-9:09:36"  # 28,908 s and 32,976 s
    assert band_text(math.nan, 2.97 * day, 3.5 * day) == "?-3.50 d"
    assert band_text(hour, hour, hour) == "-"


def test_a_bands_ends_in_one_unit_say_it_once():
    """A band read "1.98 d-2 d": both ends in days say "d" once; h:mm:ss has no unit to share, and ends in
    two units keep both (each end still reads as run_duration prints it)."""
    from lionsim.numbers import run_duration
    from lionsim.reports.to_target import band_text

    hour, day, year = 3600.0, 86400.0, 365.25 * 86400.0
    assert band_text(1.98 * day, 1.99 * day, 2 * day) == "1.98-2.00 d"
    assert band_text(2 * hour, 3 * hour, 4 * hour) == "2:00:00-4:00:00"  # h:mm:ss: no unit to share
    assert band_text(1.2 * year, 1.5 * year, 2 * year) == "1.20-2.00 y"
    assert band_text(0.9 * day, day, 1.1 * day) == f"{run_duration(0.9 * day)}-1.10 d" == "21:36:00-1.10 d"
    assert band_text(300 * day, 360 * day, 400 * day) == "300 d-1.10 y"


def test_the_title_names_both_baselines_and_both_tables_print_one_runs_time_alike(tmp_path):
    """With --baseline dlion-mavo the title ended "baseline adamw@fp32-allreduce" (the run's, whose
    steps the others are counted against) over rows marking dlion-mavo* 1.00x; and a run of the same
    steps read "4.19 d" in the whole-run table and "101 h" in this one."""
    from lionsim.cli.estimate_view import run_table
    from lionsim.cli.to_target_view import to_target_table
    from lionsim.numbers import run_duration
    from tests.helpers.cli import table_text

    cfg = EstimateConfig(**BASE, strategies=["adamw", "dlion-mavo"], baseline="dlion-mavo", steps=300_000,
                         from_run=str(bench_dir(tmp_path)))
    frame = estimate(cfg)
    title = " ".join(to_target_table(frame).title.split())
    assert title.endswith("target loss 0.5 (adamw@fp32-allreduce's loss at step 90 of 100), steps relative to its "
                          "baseline adamw@fp32-allreduce; speedup against dlion-mavo@int8-allreduce")
    adamw, dlion = (frame.set_index("strategy").loc[name] for name in ("adamw", "dlion-mavo"))
    assert adamw.steps_to_target == adamw.run_steps == 300_000  # one run, in both tables
    assert adamw.time_to_target_s == pytest.approx(adamw.run_s, rel=1e-12)
    whole, target = (table_text(t, 200).splitlines() for t in (run_table(frame), to_target_table(frame)))
    line = lambda lines, run: next(text for text in lines if text.split()[:1] == [run])  # noqa: E731
    assert adamw.run_s > 86400  # past a day: "4.19 d" in both, not "101 h" in one
    assert f" {run_duration(adamw.run_s)} " in line(whole, "adamw") and f" {run_duration(adamw.run_s)} " in line(
        target, "adamw")
    assert f" {run_duration(dlion.time_to_target_s)} " in line(target, "dlion-mavo*")  # 225,000 steps: h:mm:ss
    assert run_duration(dlion.time_to_target_s).count(":") == 2


def test_the_time_to_target_title_is_folded_not_cut(tmp_path, monkeypatch):
    from lionsim.reports.plots import to_target as plots
    from lionsim.reports.plots.redraw import read_table

    out = tmp_path / "est"
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--network", "10gbe", "-s", "adamw",
            "-s", "dlion-mavo", "--from-run", str(bench_dir(tmp_path)), "--out", str(out)]
    assert CliRunner().invoke(app, args).exit_code == 0
    frame = read_table(out / "estimate.csv", plots.NEEDS).assign(network="a-cluster-profile-with-a-long-name-" * 3)
    figures = []
    monkeypatch.setattr(plots, "save", lambda fig, path: figures.append(fig) or [])
    plots.plot_to_target(frame, tmp_path / "to_target.png")
    (fig,) = figures
    fig.draw_without_rendering()
    titles = [t for t in [fig._suptitle, *(ax.title for ax in fig.axes)] if t is not None and t.get_text()]
    assert titles and all(0 <= t.get_window_extent().x0 and t.get_window_extent().x1 <= fig.bbox.width
                          for t in titles)


def test_without_strategies_it_prices_the_runs_dir_trained_its_baseline_first(tmp_path, capsys):
    """Estimate's own defaults (adamw@bf16, lioncub-l1, ...) were priced instead: no figure for any
    of them beside the baseline's, and the run's strategies dropped."""
    reached = {"dlion-mavo@int8-allreduce": 60, RUNS[0]: 80, "signsgd@int8-allreduce": math.nan}
    where = bench_dir(tmp_path, reached)
    got = {f"{r.strategy}@{r.transport}": r
           for r in estimate(EstimateConfig(**BASE, from_run=str(where))).itertuples(index=False)}
    assert list(got) == [RUNS[0], "dlion-mavo@int8-allreduce", "signsgd@int8-allreduce"]  # the baseline first
    adamw, dlion = got[RUNS[0]], got["dlion-mavo@int8-allreduce"]
    assert (adamw.steps_to_target, dlion.steps_to_target) == (80, 60)
    assert dlion.to_target_speedup == pytest.approx(80 * adamw.step_s / (60 * dlion.step_s), rel=1e-12)
    assert math.isnan(got["signsgd@int8-allreduce"].to_target_speedup)  # did not reach: said, not dropped
    with pytest.raises(SystemExit) as done:
        main(["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--from-run", str(where)])
    err = capsys.readouterr().err
    assert done.value.code == 0
    assert (f"no -s given: pricing the 3 runs {where} trained, its baseline adamw@fp32-allreduce first: "
            "adamw@fp32-allreduce, dlion-mavo@int8-allreduce, signsgd@int8-allreduce") in " ".join(err.split())


@pytest.fixture(scope="module")
def million_steps(tmp_path_factory) -> pd.DataFrame:
    """The estimate of a run of a million steps to target from the CELLS sweep (its numbers long),
    priced once for every terminal width below: the walk over its steps takes about a second."""
    cfg = EstimateConfig(**(BASE | {"workers": 64, "network": "h100x8-100gbe"}),
                         strategies=["adamw", "dlion-mavo@a2a-1bit"], steps=1_000_000,
                         from_run=str(sweep_dir(tmp_path_factory.mktemp("million"), CELLS)))
    return estimate(cfg)


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_on_a_terminal_of_any_width_every_number_of_the_time_to_target_table_is_whole(million_steps, monkeypatch,
                                                                                       columns):
    """fill pinned the run column at the width that made the table 80 columns, so on a terminal of 60
    rich could not narrow it and cut the numbers instead ("1,00…", "9…", "1.56 d-1…"): the table is
    widened to 80 only where the terminal is that wide, and narrowed to a narrower one by its run
    column. Each figure is read back from the frame the table prints."""
    from lionsim.cli.to_target_view import to_target_table
    from lionsim.numbers import run_duration
    from lionsim.reports.to_target import band_text, speedup_band_text
    from tests.helpers.cli import table_text

    frame = million_steps
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # stdout as rich sees a terminal, COLUMNS wide
    monkeypatch.setenv("COLUMNS", str(columns))
    shown = table_text(to_target_table(frame), width=columns)
    assert "…" not in shown and max(map(len, shown.splitlines())) <= columns
    lines = [" ".join(text.split()) for text in shown.splitlines()]
    for row in frame.itertuples(index=False):
        star = "*" if f"{row.strategy}@{row.transport}" == row.baseline else ""
        figures = [f"{row.steps_to_target:,.0f}", run_duration(row.time_to_target_s),
                   band_text(row.time_to_target_lo_s, row.time_to_target_s, row.time_to_target_hi_s),
                   f"{row.to_target_speedup:.2f}x", *([speedup_band_text(row)] if columns >= 80 else [])]
        assert f"{row.strategy}{star} {' '.join(figures)}" in lines, (figures, shown)


def test_the_captions_steps_sentence_names_the_baseline_each_run_is_counted_against(tmp_path):
    """It read "x each run's steps to target relative to its there": whose steps, it did not say."""
    from lionsim.cli.to_target_view import to_target_table

    frame = estimate(EstimateConfig(**BASE, strategies=["adamw", "dlion-mavo"], from_run=str(bench_dir(tmp_path))))
    caption = " ".join(to_target_table(frame).caption.split())
    steps = caption[caption.index(" steps: "):caption.index(" time: ")]
    assert f"x each run's steps to target relative to {frame['to_target_baseline'].iloc[0]}'s there." in steps
    assert frame["to_target_baseline"].iloc[0] == "adamw@fp32-allreduce"


@pytest.mark.parametrize("given, said", [(["lion"], "bad -s lion: --from-run {} did not train it"),
                                        (["lion", "sgdm"], "bad -s lion,sgdm: --from-run {} did not train them")])
def test_strategies_the_run_never_trained_are_refused_in_one_line_naming_what_it_did(tmp_path, capsys, given,
                                                                                      said):
    where = bench_dir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--from-run", str(where),
              *[a for s in given for a in ("-s", s)]])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert done.value.code == 2 and len(lines) == 1 and captured.out == "", captured.err
    assert lines[0] == (f"error: {said.format(where)}; accepted: the strategies it trained ({', '.join(RUNS)}), "
                        "or no -s to price them all")


def test_a_mix_of_trained_and_untrained_strategies_keeps_the_untrained_row_marked(tmp_path):
    got = rows(bench_dir(tmp_path), ["adamw", "lion"])
    assert got["lion@fp32-allreduce"].to_target_how == "not trained"
    assert got["adamw@fp32-allreduce"].steps_to_target == 80


def test_the_default_tokens_a_worker_is_said_where_it_sets_the_run(tmp_path, capsys):
    """--tokens' steps and a run's time to target rest on the tokens a worker; where the user gave none,
    estimate's default (one sample of the model) is said once, under the first table whose figures rest
    on it, and not where --tokens-per-worker was given."""
    from lionsim.compute import MODELS
    from tests.helpers.cli import run_cli

    run = bench_dir(tmp_path)
    sample = MODELS.get("gpt2-124m").tokens_per_sample
    line = (f"tokens/worker: {sample:,} (estimate's default, not the run's: --tokens-per-worker sets your "
            "batch).")
    plain = ["estimate", "-m", "gpt2-124m", "--network", "10gbe", "-s", "adamw", "-s", "dlion-mavo"]
    for extra in (["--from-run", run], ["--from-run", run, "--tokens", "1e9"], ["--tokens", "1e9"]):
        code, out, err = run_cli([*plain, *extra], capsys)
        assert code == 0, err
        assert " ".join(out.split()).count(line) == 1, extra
        code, out, err = run_cli([*plain, *extra, "--tokens-per-worker", "4096"], capsys)
        assert code == 0 and "estimate's default, not the run's" not in out + err
    code, out, err = run_cli([*plain, "--from-run", run, "--format", "csv"], capsys)
    assert code == 0 and f"note: {line}" in err
    code, out, err = run_cli(plain, capsys)  # a steady step alone: no run for it to set
    assert code == 0 and "estimate's default, not the run's" not in out + err


@pytest.mark.parametrize("sweep", [[], ["--sweep", "workers=8,16"]])
def test_the_report_says_the_default_tokens_a_worker_as_the_estimate_did(tmp_path, capsys, sweep):
    """report.md of an estimate (one, or a sweep) that took the default tokens a worker says the
    terminal's line; given --tokens-per-worker, or a directory from before estimate.json recorded it: no
    line."""
    from lionsim.compute import MODELS
    from tests.helpers.cli import run_cli

    sample = MODELS.get("gpt2-124m").tokens_per_sample
    line = f"tokens/worker: {sample:,} (estimate's default, not the run's: --tokens-per-worker sets your batch)."
    plain = ["estimate", "-m", "gpt2-124m", "--network", "10gbe", "-s", "adamw", "-s", "dlion-mavo",
             "--from-run", str(bench_dir(tmp_path)), *sweep]
    for name, extra, says in (("default", [], True), ("given", ["--tokens-per-worker", str(sample)], False)):
        out = tmp_path / name
        code, _out, err = run_cli([*plain, *extra, "--out", str(out)], capsys)
        assert code == 0, err
        assert run_cli(["report", str(out)], capsys)[0] == 0
        assert (line in " ".join((out / "report.md").read_text().split())) == says, name
    record = json.loads((tmp_path / "default" / "estimate.json").read_text())
    del record["tokens_per_worker_defaulted"]  # an estimate written before the field
    (tmp_path / "default" / "estimate.json").write_text(json.dumps(record))
    assert run_cli(["report", str(tmp_path / "default")], capsys)[0] == 0
    assert "estimate's default, not the run's" not in (tmp_path / "default" / "report.md").read_text()
