"""to_target.png's caption says what its bars rest on: the target loss the run set, where the
baseline's steps at scale come from (--tokens or --steps, not the target; else the run's own), and
the small proxy model the convergence came from, where it was trained; every line inside the figure,
clear of the axes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import lionsim.reports.plots.to_target as to_target_plots
from lionsim.cli.app import main
from tests.helpers.figures import cut_texts

FP32, DLION = "adamw@fp32-allreduce", "dlion-mavo@a2a-1bit"
TARGET, PARAMS = 0.4375, 12_345
"""The proxy run's target loss in every cell and its model's size, as its summary records them."""


def sweep_dir(tmp_path: Path) -> Path:
    out = tmp_path / "proxy sweep"
    out.mkdir()
    rows = [{"cell": f"c{n}-{label}", "strategy": label.split("@")[0], "transport": label.split("@")[1],
             "workers": n, "network": "1gbe", "workload": "mlp", "seed": 0, "steps_to_target": steps,
             "target_loss": TARGET, "target_rule": "adamw@fp32-allreduce's loss at step 90 of 100",
             "baseline": FP32, "params": PARAMS}
            for n in (4, 8) for label, steps in ((FP32, 80 + n), (DLION, 60 + n))]
    pd.DataFrame(rows).to_csv(out / "sweep_summary.csv", index=False)
    (out / "sweep.json").write_text(json.dumps({"kind": "sweep", "cells": len(rows)}))
    return out


def figures(tmp_path, monkeypatch, *extra: str) -> dict:
    drawn = {}
    monkeypatch.setattr(to_target_plots, "save", lambda fig, path: drawn.update({Path(path).stem: fig}) or [])
    with pytest.raises(SystemExit) as done:
        main(["estimate", "--params", "1e9", "--tokens-per-worker", "8192", "--workers", "32", "--network",
              "h100x8-100gbe", "--from-run", str(sweep_dir(tmp_path)), *extra, "--out", str(tmp_path / "est")])
    assert done.value.code == 0
    return drawn


def caption(fig) -> str:
    return " ".join(fig._supxlabel.get_text().split())  # wrapped: read without the breaks


def clear_of_the_axes(fig) -> bool:
    renderer = fig.canvas.get_renderer()
    under = fig._supxlabel.get_window_extent(renderer)
    return all(under.y1 <= ax.get_tightbbox(renderer).y0 + 0.5 for ax in fig.axes)


@pytest.mark.parametrize("extra, steps", [
    (["--tokens", "2e10"], "adamw@fp32-allreduce's (the baseline) from --tokens 20,000,000,000, not from the target"),
    (["--steps", "5000"], "adamw@fp32-allreduce's (the baseline) from --steps 5000, not from the target"),
    ([], "adamw@fp32-allreduce's (the baseline) steps to the target in the proxy run, fitted against log N"),
])
def test_one_estimates_caption_says_the_target_the_steps_and_the_proxy(tmp_path, monkeypatch, extra, steps):
    fig = figures(tmp_path, monkeypatch, *extra)["to_target"]
    said = caption(fig)
    assert f"Target loss {TARGET:g} in every cell" in said
    assert f"Steps: {steps}" in said and "x each run's steps-to-target ratio to it" in said
    fewer = f"{1e9 / PARAMS:,.0f}x fewer than the priced model"  # 1e9 priced (--params)
    assert f"proxy: mlp ({PARAMS:,} params, {fewer}) trained in {tmp_path / 'proxy sweep'} at 4-8 workers" in said
    assert cut_texts(fig) == [] and clear_of_the_axes(fig)


def test_a_sweeps_caption_says_them_too(tmp_path, monkeypatch):
    fig = figures(tmp_path, monkeypatch, "--tokens", "2e10", "--sweep", "workers=16,64")["to_target"]
    said = caption(fig)
    assert f"Target loss {TARGET:g} in every cell" in said and "from --tokens 20,000,000,000" in said
    assert f"mlp ({PARAMS:,} params, {1e9 / PARAMS:,.0f}x fewer than the priced model) trained in " \
           f"{tmp_path / 'proxy sweep'}" in said
    assert cut_texts(fig) == [] and clear_of_the_axes(fig)


def test_the_caption_says_which_counts_extend_the_fits_and_which_hold_them(tmp_path, monkeypatch):
    # measured at 4 and 8 workers: a trend through 2 counts goes one doubling on (16), no further
    fig = figures(tmp_path, monkeypatch, "--sweep", "workers=16,32,64")["to_target"]
    said = caption(fig)
    assert ("Extrapolated beyond the measured 4-8 workers: the figure at 16 workers extends the fits against log "
            "N; at 32, 64 workers the fits through 2 counts are held at the nearest measured count's figures") in said
    (tmp_path / "one").mkdir()
    one = caption(figures(tmp_path / "one", monkeypatch)["to_target"])  # 32 workers: past the doubling
    assert "Extrapolated beyond the measured 4-8 workers: at 32 workers the fits through 2 counts are held" in one
    assert "extends" not in one and "extend the fits" not in one
