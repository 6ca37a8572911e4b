"""A bench's or sweep's time to target ranked on a modelled network is its own (proxy) model's steps
on that network: report.md and bench's table say so in one sentence, with the command that prices
a real model there (`lionsim estimate --from-run DIR -m MODEL`); a measured run says nothing."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from lionsim.reports.markdown import _first_to_target


def summary(backend: str = "sim") -> pd.DataFrame:
    rows = [{"workload": "gpt", "params": 108707, "workers": 8, "network": "h100x8-100gbe", "seed": 0,
             "strategy": strategy, "transport": "fp32-allreduce", "time_to_target_s": t, "target_loss": 1.9,
             "target_rule": "--target-loss", "baseline": "adamw@fp32-allreduce", "backend": backend}
            for strategy, t in (("adamw", 0.107), ("lion", 0.2))]
    return pd.DataFrame(rows)


SAID = ("These times are the steps of this run's own model (gpt, 108,707 params) priced on h100x8-100gbe, not a "
        "real model's on that network: for one, run ")


def test_a_modelled_ranking_says_whose_steps_and_the_command_for_a_real_model():
    text = _first_to_target(summary(), "modelled", directory=Path("/runs/gpt-workers"))
    assert "| **adamw@fp32-allreduce** |" in text  # the ranking it qualifies
    assert SAID + "`lionsim estimate --from-run /runs/gpt-workers -m MODEL`." in text


def test_a_measured_ranking_says_nothing_of_a_model():
    text = _first_to_target(summary("gloo"), "measured (on gloo)", measured=True, directory=Path("/runs/x"))
    assert "These times are" not in text and "--from-run" not in text


def test_benchs_table_caption_says_it_beside_to_tgt():
    from rich.console import Console

    from lionsim.reports.tables import summary_table

    frame = summary().assign(final_loss=1.9, final_eval_acc=float("nan"), final_eval_loss=2.0, compute_s=0.001,
                             encode_s=0.0, decode_s=0.0, comm_s=0.0, update_s=0.0, step_s=0.001, wire_bytes=100,
                             bits_per_param_up=32.0, bits_per_param_down=32.0, speedup=1.0,
                             time_to_target_speedup=1.0, steps=100)
    console = Console(width=400, record=True, file=io.StringIO())
    console.print(summary_table(frame, {"config": {"out": "/runs/h10"}}))
    caption = " ".join(console.export_text().split())
    assert SAID + "lionsim estimate --from-run /runs/h10 -m MODEL." in caption
    console = Console(width=400, record=True, file=io.StringIO())
    console.print(summary_table(frame.assign(backend="gloo"), {"config": {"out": "/runs/h10"}}))
    assert "These times are" not in console.export_text()
