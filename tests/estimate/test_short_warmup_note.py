"""estimate's whole run of 1-bit Adam at lionsim's 15-step warm-up (its 100-step bench's) says that
the authors warm up for 15-25% of a run: a 10,000-step run priced at 3.27x with 15 steps of fp32
warm-up, 1.78x with 2,000, and nothing said (lionsim.strategies.core.unacted.short_warmup_note)."""

from __future__ import annotations

import pytest

from lionsim.estimate import EstimateConfig, estimate
from tests.helpers.cli import run_cli

BASE = dict(model="gpt2-345m", workers=16, network="10gbe", strategies=["adamw@bf16-allreduce", "onebit-adam"])


def _notes(**kw) -> list[str]:
    return [n for n in estimate(EstimateConfig(**BASE, **kw)).attrs.get("unacted_notes", []) if "freeze" in n]


def test_a_long_run_at_the_bench_default_is_told_the_authors_share():
    (note,) = _notes(steps=10_000)
    assert note == ("onebit-adam: --freeze-steps 15 is lionsim's default for its 100-step bench, under the 15%-25% "
                    "of a run its authors warm up for (Tang et al. 2021, DeepSpeed's 1-bit Adam): set --freeze-steps "
                    "to that share of the run's steps.")
    assert _notes(steps=200) == [note]  # the same words at any length below the share: said once in a sweep


@pytest.mark.parametrize("kw", [dict(steps=100), dict(steps=10_000, options={"freeze_steps": 2000}),
                                dict(steps=10_000, options={"freeze_steps": 15})])
def test_no_note_where_the_default_suits_the_run_or_a_warm_up_was_given(kw):
    """15 of 100 steps is the authors' 15%; a --freeze-steps given (even 15) is the user's choice."""
    assert _notes(**kw) == []


def test_the_note_prints_under_the_whole_runs_table(capsys):
    code, out, err = run_cli(["estimate", "-m", "gpt2-345m", "-n", "16", "--network", "10gbe", "-s",
                              "adamw@bf16-allreduce", "-s", "onebit-adam", "--steps", "10000"], capsys)
    assert code == 0, err
    assert "set --freeze-steps to that share of the run's steps." in " ".join(out.split())
