"""A bench whose steps all fall in its strategy's warm-up notes the options given that act only
past it (lionsim.strategies.core.unacted): the first step past the warm-up is each strategy's
closed form (PowerSGD's K + 1, DGC's K + 1, 1-bit Adam's F + 1, DiLoCo's first sync at H)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lionsim.cli.app import main
from lionsim.backends import SimComm
from lionsim.strategies import STRATEGIES, StrategyConfig
from lionsim.strategies.core.unacted import first_past_warmup, unacted_note
from tests.helpers.steps import layout_of


def built(strategy: str, transport: str, **options):
    """The strategy on a model of three 32 x 32 matrices and a vector (the transport is the CASES' label)."""
    layout = layout_of([("a", (32, 32)), ("b", (32, 32)), ("c", (32, 32)), ("v", (32,))])
    return STRATEGIES.get(strategy)(StrategyConfig(options=options), layout, SimComm(2))


CASES = [  # strategy, transport, options, the first step past the warm-up (closed form), the option named
    ("powersgd", "lowrank-allreduce", {"powersgd_rank": 1, "powersgd_warmup_steps": 7}, 7 + 1, "--powersgd-rank 1"),
    ("dgc", "sparse-allgather", {"topk_ratio": 0.001, "dgc_warmup_steps": 6}, 6 + 1, "--topk-ratio 0.001"),
    ("onebit-adam", "compressed-allreduce", {"freeze_steps": 9}, 9 + 1, None),
    ("diloco", "fp32-allreduce", {"outer_lr": 0.5, "local_steps": 5}, 5, "--outer-lr 0.5"),
    ("sparseloco", "sparseloco-allgather", {"sparseloco_topk": 8, "local_steps": 3}, 3, "--sparseloco-topk 8"),
]


@pytest.mark.parametrize("strategy, transport, options, first, named", CASES)
def test_the_note_names_the_option_the_steps_and_the_first_step_past_the_warm_up(strategy, transport, options, first,
                                                                                  named):
    s = built(strategy, transport, **options)
    assert first_past_warmup(s, first - 1) == first and first_past_warmup(s, first) is None
    note = unacted_note(s, first - 1)
    assert f"the run's {first - 1} steps end before its first, step {first}" in note
    assert note.startswith(f"{strategy}: {named} never acted: " if named else f"{strategy}: no ")
    assert unacted_note(s, first) == ""  # one step past the warm-up: the option acted


def test_dgc_at_a_ratio_above_its_warm_up_stages_sends_it_from_step_one():
    # 0.5 is above every stage's density (1/4 first): warmup_density gives the ratio itself on every step
    assert unacted_note(built("dgc", "sparse-allgather", topk_ratio=0.5, dgc_warmup_steps=8), 2) == ""


def test_a_default_short_run_is_noted_too():
    """`-s powersgd --steps 4` trained 4 plain fp32 steps: said with no option given (a new user's
    smoke run was labelled PowerSGD at 32/32 bits with no word), naming no option."""
    note = unacted_note(built("powersgd", "lowrank-allreduce"), 4)
    assert note == ("powersgd: no compressed step ran: the run's 4 steps end before its first, step 11 "
                    "(--powersgd-warmup-steps 10); raise --steps or lower --powersgd-warmup-steps.")
    assert unacted_note(built("powersgd", "lowrank-allreduce"), 11) == ""  # step 11 ran: the method's


def test_a_plugin_without_a_trusted_schedule_says_nothing():
    from lionsim.strategies.powersgd import PowerSGD

    class Mine(PowerSGD):  # overrides run_spec under PowerSGD's declaration: its schedule is not trusted
        def run_spec(self, step, steady):
            return steady

    s = built("powersgd", "lowrank-allreduce", powersgd_rank=1)
    s.__class__ = Mine
    assert unacted_note(s, 4) == ""


def test_bench_prints_the_note_under_its_table_and_keeps_it_in_run_json(tmp_path, capsys):
    out = tmp_path / "p1"
    with pytest.raises(SystemExit) as done:
        main(["bench", "-n", "2", "--steps", "4", "--model-size", "tiny", "-b", "4", "-s", "powersgd",
              "--powersgd-rank", "1", "-o", str(out)])
    assert done.value.code == 0
    steps = pd.read_csv(out / "steps.csv")
    assert (steps["bits_per_param_up"] == 32).all()  # every step an fp32 all-reduce: the rank never acted
    line = ("powersgd: --powersgd-rank 1 never acted: no compressed step ran: the run's 4 steps end before its "
            "first, step 11 (--powersgd-warmup-steps 10); raise --steps or lower --powersgd-warmup-steps.")
    assert line in json.loads((out / "run.json").read_text())["notes"]
    assert line in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(("given", "longer"), [(["--steps", "5"], "--steps"), (["--tokens", "40K"], "--tokens")])
def test_estimate_names_the_option_that_lengthens_the_run_as_given(given, longer, capsys):
    """A whole run given in tokens is lengthened by --tokens, not by adding --steps (40K tokens of
    1,024 a worker over 8 workers are 5 steps, as --steps 5)."""
    with pytest.raises(SystemExit) as done:
        main(["estimate", "-m", "gpt2-124m", "-n", "8", "-s", "powersgd", *given])
    assert done.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("powersgd: no compressed step ran: the run's 5 steps end before its first, step 11 "
            f"(--powersgd-warmup-steps 10); raise {longer} or lower --powersgd-warmup-steps.") in out
