"""`lionsim estimate --steps N` / `--tokens T` of a run that ends inside its strategy's warm-up says,
as bench does (lionsim.strategies.core.unacted), that the option it was given never acted: PowerSGD's
first compressed step is step warm-up + 1 (11 at its default --powersgd-warmup-steps 10), so 4 or 10
steps price plain all-reduces alone, 11 do not."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers.cli import run_cli

WARMUP = 10
"""PowerSGD's default warm-up steps: step WARMUP + 1 is its first compressed one."""
PLAIN = ["estimate", "-m", "gpt2-124m", "--network", "10gbe", "-s", "adamw", "-s", "powersgd",
         "--powersgd-rank", "1"]
NEVER = "powersgd: --powersgd-rank 1 never acted: no compressed step ran: the run's {n} steps end before its first"


def said(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("steps", [4, WARMUP, WARMUP + 1, 50])
def test_a_whole_run_inside_the_warm_up_says_the_option_never_acted(capsys, tmp_path, steps):
    out = tmp_path / "est"
    code, text, err = run_cli([*PLAIN, "--steps", str(steps), "--out", str(out)], capsys)
    assert code == 0, err
    inside = steps <= WARMUP
    assert (NEVER.format(n=steps) in said(text)) == inside
    assert said(text).count("never acted") == (1 if inside else 0)  # once, under the whole run's table
    notes = json.loads((out / "estimate.json").read_text())["notes"]  # the report's Notes carry it
    assert any(NEVER.format(n=steps) in note for note in notes) == inside


def test_without_the_option_a_short_run_says_nothing(capsys):
    code, text, err = run_cli(["estimate", "-m", "gpt2-124m", "--network", "10gbe", "-s", "powersgd", "--steps",
                               "4"], capsys)
    assert code == 0 and "never acted" not in text + err


def test_csv_output_says_it_on_stderr(capsys):
    code, _text, err = run_cli([*PLAIN, "--steps", "4", "--format", "csv"], capsys)
    assert code == 0 and f"note: {NEVER.format(n=4)}" in said(err)


def test_tokens_say_it_at_each_worker_count_whose_steps_end_in_the_warm_up(capsys):
    """--tokens T at N workers of 1,024 tokens is ceil(T / (1,024 N)) steps: at 8 workers 20, past the
    warm-up; at 32, 5 and at 64, 3, inside it."""
    tokens = 1024 * 8 * 20
    code, text, err = run_cli([*PLAIN, "--tokens-per-worker", "1024", "--tokens", str(tokens), "--workers", "8",
                               "--sweep", "workers=8,32,64"], capsys)
    assert code == 0, err
    for workers in (8, 32, 64):
        n = math.ceil(tokens / (1024 * workers))
        assert (f"at {workers} workers: {NEVER.format(n=n)}" in said(text)) == (n <= WARMUP), workers
