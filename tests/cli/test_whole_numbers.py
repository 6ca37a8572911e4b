"""Whole-number options (--workers, --steps, --tokens-per-worker, a strategy's integer flag ...) take
scientific notation as --params always did (1e3, 2.5e3), read exactly as decimals, and refuse a value
that is not whole or not finite in one line; --tokens' refusals state one range and where its top
comes from."""

from __future__ import annotations

from decimal import Decimal

import pytest

from lionsim.cli.options import whole_number
from lionsim.estimate.plain import MAX_STEPS
from tests.helpers.cli import one_line_exit_2, run_cli

E = ["estimate", "-m", "gpt2-124m", "-s", "adamw"]


@pytest.mark.parametrize("text", ["1e3", "2.5e3", "1000", "1E3", "10e2", "1000.0", "1e30", " 8 "])
def test_a_whole_number_is_read_exactly_in_any_notation(text):
    assert whole_number(text) == int(Decimal(text.strip()))  # the decimal reading, not float's


@pytest.mark.parametrize("option", ["--workers", "--tokens-per-worker", "--steps", "--seed", "--local-steps"])
@pytest.mark.parametrize("text", ["1.5", "2.55e1", "inf", "nan", "1e-3", "ten", "1e999999999"])
def test_a_value_not_whole_is_one_line(option, text, capsys):
    one_line_exit_2([*E, option, text], capsys, f"error: {option} takes a whole number (1000, 1e3 or 2.5e3)")


def test_estimate_takes_workers_and_tokens_per_worker_in_scientific_notation(capsys):
    """`--tokens-per-worker 1e3` and `--workers 1e2` were refused ("takes a whole number; got '1e3'")."""
    code, out, err = run_cli([*E, "--workers", "1.6e1", "--tokens-per-worker", "1e3", "--format", "csv"], capsys)
    assert code == 0, err
    header, row = out.splitlines()[:2]
    got = dict(zip(header.split(","), row.split(",")))
    assert (got["workers"], got["tokens_per_worker"]) == ("16", "1000")


@pytest.mark.parametrize("tokens, shown", [("0", "0"), ("3e11", "3e11"), ("1e30", "1e30")])
def test_tokens_refusals_state_one_range_and_where_its_top_comes_from(tokens, shown, capsys):
    """--tokens 0 said ">= 1", --tokens 3e11 "from 1 to 8.19e+10" and --tokens 1e30 echoed
    1000000000000000019884624838656: one range, the value as typed, the top as steps x tokens a step."""
    top = MAX_STEPS * 1024 * 8  # gpt2-124m's 1,024-token sample on each of 8 workers
    one_line_exit_2([*E, "--tokens", tokens], capsys,
                    f"error: bad --tokens {shown}; accepted: a whole number from 1 to {top:,} (lionsim's most steps "
                    f"in a run, {MAX_STEPS:,}, of 8,192 tokens: 1,024 a worker x 8 workers)")
