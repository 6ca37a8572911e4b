"""A report's Configuration table lists every option set away from its default (one rule, held
against BenchConfig's own defaults), names local-step runs with H, and its how-obtained bullets
name the library that priced comm and the slowest-worker wait a step includes."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from lionsim.config.bench import BenchConfig
from lionsim.reports import SummaryRule, summarize, write_run
from lionsim.reports.config_table import ALWAYS, NOT_OPTIONS, at_default, option_rows
from lionsim.reports.markdown import write_report


def _defaults() -> dict:
    return {f.name: f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            for f in dataclasses.fields(BenchConfig)}


def test_every_bench_default_outside_always_is_at_default_and_a_change_is_not():
    for name, value in _defaults().items():
        if name in ALWAYS or name in NOT_OPTIONS:
            continue
        assert at_default(name, value), name
    assert not at_default("eval_every", 10) and not at_default("threads", 2) and not at_default("overlap", "buckets")
    assert not at_default("compute_spread", ["slow:1:3"]) and not at_default("traits", "nccl")


def test_rows_are_always_then_exactly_the_changed_options():
    record = {**_defaults(), "compute_spread": ["slow:1:3"], "local_steps": 5, "traits": "nccl", "threads": 1,
              "outer_lr": None, "hyper": {"a@b": {"lr": 1.0}}, "out": "x"}
    rows = dict(option_rows(record))
    changed = {k for k in rows if k not in ALWAYS}
    assert changed == {"compute_spread", "local_steps", "traits"}
    assert rows["compute_spread"] == "slow:1:3"


def _steps(n: int = 10) -> pd.DataFrame:
    rows = []
    for strategy, step_s in (("adamw", 0.002), ("diloco", 0.001)):
        for k in range(1, n + 1):
            rows.append({"strategy": strategy, "transport": "fp32-allreduce", "workers": 4, "network": "1gbe",
                         "backend": "sim", "workload": "mlp", "seed": 0, "step": k, "loss": 10.0 - k,
                         "compute_s": step_s / 2, "encode_s": 0.0, "comm_s": step_s / 2, "decode_s": 0.0,
                         "update_s": 0.0, "step_s": step_s, "sim_time_s": step_s * k, "wire_bytes": 100,
                         "bits_per_param_up": 32.0, "bits_per_param_down": 32.0, "params": 25,
                         "eval_loss": math.nan, "eval_acc": math.nan})
    return pd.DataFrame(rows)


def _report(tmp_path, config: dict, traits=None) -> str:
    steps = _steps()
    meta = {"status": "complete", "config": {"workload": "mlp", "workers": 4, "steps": 10, **config},
            "network": {"name": "1gbe", "traits": traits},
            "runs": [{"run": "adamw@fp32-allreduce", "strategy": "adamw", "transport": "fp32-allreduce", "options": {}},
                     {"run": "diloco@fp32-allreduce", "strategy": "diloco", "transport": "fp32-allreduce",
                      "options": {"local_steps": 5, "outer_lr": 1.0}}],
            "timing": {"compute_s": "modelled: x", "encode_s": "modelled: x", "comm_s": "modelled: on 1gbe"}}
    write_run(tmp_path, steps, summarize(steps, SummaryRule(target_loss=5.0)), meta)
    return write_report(tmp_path).read_text()


def test_bench_report_names_spread_h_library_and_wait(tmp_path):
    text = _report(tmp_path, {"compute_spread": ["slow:1:3"], "local_steps": 5, "eval_every": 25},
                   {"name": "nccl", "description": "NCCL's tuning model"})
    config = text.split("## Configuration\n\n")[1].split("\n\n")[0]
    assert "| compute_spread | slow:1:3 |" in config and "| local_steps | 5 |" in config
    assert "eval_every" not in config  # at its default
    assert "| runs | adamw@fp32-allreduce, diloco H=5@fp32-allreduce |" in config
    timing = text.split("## How each time was obtained\n\n")[1].split("\n\n")[0]
    assert "- library: comm priced with nccl traits (NCCL's tuning model)" in timing
    assert "--compute-spread slow:1:3" in timing and "once a round" in timing
    assert "| diloco H=5@fp32-allreduce |" in text


def test_no_spread_no_wait_bullet_and_the_ideal_library_is_alpha_beta(tmp_path):
    timing = _report(tmp_path, {}).split("## How each time was obtained\n\n")[1].split("\n\n")[0]
    assert "wait_s" not in timing
    assert "- library: comm priced by alpha-beta" in timing
