"""Every numeric option of every command is refused out of range in one line, "bad --OPTION VALUE;
accepted: RANGE", exit 2, the value echoed as typed, the range in lionsim.ranges' words; and an
option that several commands take (--workers, --steps, --seed, --lr, --topk-ratio ...) is refused in
the same words by each. The options come from the commands' typer apps, not from a list here."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from lionsim.cli.app import click_app
from lionsim.cli.click_compat import click  # typer's own (it vendors click from 0.20)
from lionsim.ranges import SEED, STEPS, WORKERS, Range, span
from tests.helpers.cli import run_cli

LINE = re.compile(r"error: bad (--[a-z0-9-]+) (\S+)(?:: [^;]+)?; accepted: (.+)")
"""A refusal: the option, the value as typed, what is accepted (a reason of its own may stand between)."""
BELOW = "-1"
"""Out of range for every numeric option lionsim has: each takes nothing below 0."""
CONTEXT = {"estimate": ["-m", "gpt2-124m"], "comm": ["--backend", "gloo"]}
"""What a command needs beside the option for the range check to be what refuses it (comm's
--ranks, --iters ... act only on a measuring backend)."""
TEXT_OPTIONS = [("sweep", "--workers"), ("sweep", "--seed"), ("comm", "--workers"), ("bench", "--eval-samples"),
                ("sweep", "--eval-samples")]
"""Numeric options typed as text: a sweep's axes and comm's worker counts (comma lists of whole
numbers, each value refused as one would be), --eval-samples (a number, or all)."""
OVER = {"--workers": "1e30", "--steps": "1e30", "--seed": "1e30", "--threads": "1e30", "--timeout": "1e30",
        "--local-steps": "1e30", "--sparseloco-bits": "9", "--mfu": "2", "--topk-ratio": "2",
        "--dion-rank-fraction": "2", "--outer-momentum": "1", "--streaming-alpha": "1.5",
        "--params": "1e30", "--replica-gpus": "1e30", "--tokens-per-worker": "1e30"}
"""Values past the top of each option that has one: refused in the same words as one below it."""
DIFFERS = {("comm", "--ranks"): "bench's processes hold --workers between them (1 to W); comm's measure a collective",
           ("comm", "--workers"): "a collective of one worker moves nothing: comm's table starts at 2"}
"""A command whose option has a range of its own (and so words of its own), and why."""


def _numeric_options() -> list[tuple[str, str]]:
    """(command, flag) of every option of every command whose value is a number, read from the app."""
    group = click_app()
    found = []
    for name in group.list_commands(click.Context(group)):
        for param in group.get_command(click.Context(group), name).params:
            if param.param_type_name == "option" and not param.is_flag \
                    and param.type_descriptor.annotation in (int, float):
                found.append((name, param.opts[0]))
    return found + TEXT_OPTIONS


def _owners() -> dict[str, str]:
    """A strategy's flag -> a strategy that reads it (a flag acts only with its strategy among the runs)."""
    from lionsim.strategies.core.given import flags

    return {specs[0].flag: specs[0].strategy for specs in flags().values()}


OPTIONS = _numeric_options()


def _refuse(command: str, flag: str, value: str, tmp_path, capsys) -> str:
    """`lionsim COMMAND FLAG VALUE` (with what the command needs): one line, exit 2, the flag and
    the value as typed, nothing written; what it accepts."""
    owner = _owners().get(flag)
    out = tmp_path / "out"
    argv = [command, flag, value, *CONTEXT.get(command, []), *(["-s", owner] if owner else []),
            *(["--out", out] if command in ("bench", "sweep", "estimate") else [])]
    code, stdout, err = run_cli(argv, capsys)
    assert code == 2, (argv, stdout, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    found = LINE.fullmatch(err.strip())
    assert found, err
    assert found.group(1, 2) == (flag, value), err  # the option, and the value as the user typed it
    assert not out.exists()
    return found.group(3)


def test_the_app_has_the_numeric_options_of_every_command():
    """The discovery reads the app: every command with numbers is in it, a strategy's flag too."""
    commands = {command for command, _ in OPTIONS}
    assert {"bench", "sweep", "estimate", "comm", "regress", "strategies"} <= commands
    assert {("bench", "--topk-ratio"), ("estimate", "--local-steps"), ("comm", "--iters")} <= set(OPTIONS)


@pytest.mark.parametrize("flag", sorted({flag for _, flag in OPTIONS}))
def test_an_option_is_refused_in_one_range_by_every_command(flag, tmp_path, capsys):
    said = defaultdict(set)  # the commands that share the option's words (or one with its own) -> their words
    for command in [c for c, f in OPTIONS if f == flag]:
        for value in (BELOW, *([OVER[flag]] if flag in OVER else [])):
            whose = command if (command, flag) in DIFFERS else "shared"
            said[whose].add(_refuse(command, flag, value, tmp_path, capsys))
    assert all(len(words) == 1 for words in said.values()), dict(said)  # below or above, one command or another
    for accepted in set().union(*said.values()):  # lionsim.ranges' words, not "an integer >= 1" or "in (0, 1]"
        assert re.match(r"a (whole |finite )?number (from|at least|above|at most|below) ", accepted), accepted
        assert not re.search(r">=|<=|[(\[]\d|\d[)\]]|\binteger\b", accepted.partition(" (")[0]), accepted


@pytest.mark.parametrize("flag, words", [("--workers", WORKERS), ("--steps", STEPS), ("--seed", SEED)])
def test_the_shared_options_say_lionsim_ranges_words(flag, words, tmp_path, capsys):
    assert _refuse("bench", flag, BELOW, tmp_path, capsys) == words


@pytest.mark.parametrize("args, words", [
    ((1, 10**8), "a number from 1 to 100,000,000"),
    ((2**63 - 1, 2.0**64), "a number from 9,223,372,036,854,775,807 to 18,446,744,073,709,551,616"),
    ((0,), "a finite number at least 0"),
    ((1e-3, 1.0), "a number from 0.001 to 1"),
])
def test_span_writes_closed_ranges_and_groups_thousands(args, words):
    assert span(*args) == words


def test_span_writes_open_ends_whole_numbers_and_the_reason():
    assert span(0, above=True) == "a finite number above 0"
    assert span(0, 1, above=True) == "a number above 0 and at most 1"
    assert span(0, 1, below=True) == "a number at least 0 and below 1"
    assert span(1, 8, whole=True) == "a whole number from 1 to 8"
    assert span(1, whole=True, why="one at least") == "a whole number at least 1 (one at least)"
    assert span(1, "--workers (8)", whole=True) == "a whole number from 1 to --workers (8)"
    # other options can close a range to one value: "from 0 to 0" read as a typo
    assert span(0, 0, whole=True, why="below H / P = 1") == "only 0 (below H / P = 1)"


@pytest.mark.parametrize("kind", [dict(), dict(above=True), dict(below=True), dict(above=True, below=True),
                                  dict(whole=True), dict(high=None), dict(high=None, above=True)])
def test_a_range_holds_what_its_words_say(kind):
    """Range's check against the plain comparisons its words name, on each side of each bound."""
    args = {"low": 0, "high": 1, **kind}
    got = Range(**args)
    low, high = args["low"], args["high"]
    for v in (-1, -0.5, 0, 0.0, 0.5, 1, 1.0, 1.5, 2, 1e300, float("inf"), float("nan"), True, "0.5", None):
        plain = (type(v) in (int, float) and v == v and abs(v) != float("inf")
                 and (v > low if args.get("above") else v >= low)
                 and (high is None or (v < high if args.get("below") else v <= high))
                 and (not args.get("whole") or float(v) == int(v)))
        assert got(v) == plain, (args, v)
    assert got.words == span(low, high, whole=args.get("whole", False), above=args.get("above", False),
                             below=args.get("below", False))


def _strategy_refusals():
    """(flag, line) of each numeric strategy option given below its range, by its flag and by --opt,
    and of each option with no top given past float32 (which training cannot hold)."""
    from lionsim.errors import LionsimError
    from lionsim.strategies.core.given import flags

    for specs in flags().values():
        spec = specs[0]
        if spec.type not in (int, float) or spec.rule.choices:
            continue
        values = [(-1, "-1")] + ([(1e300, "1e300")] if spec.type is float and spec.rule.check(1.0) and
                                 spec.rule.check(1e300) else [])
        for value, text in values:
            for opt, given, flag, shown in ((False, value, spec.flag, text),
                                           (True, text, "--opt", f"{spec.qualified}={text}")):
                with pytest.raises(LionsimError) as refused:
                    spec.value(given, opt=opt)
                yield spec, flag, shown, str(refused.value)


def test_a_strategy_option_is_refused_in_lionsim_ranges_form():
    """A strategy's option (its flag, or --opt NAME.FIELD=VALUE) is refused in the CLI options'
    form, "bad --OPTION VALUE[: why]; accepted: RANGE" with RANGE its Range's words; past
    float32 the reason stands where refusal puts one (it stood in brackets after the value)."""
    seen = set()
    for spec, flag, shown, line in _strategy_refusals():
        found = LINE.fullmatch("error: " + line)
        assert found and found.group(1, 2) == (flag, shown), line
        assert found.group(3) == spec.rule.check.words, line
        seen.add(shown.rpartition("=")[2].partition(" ")[0])
    assert seen == {"-1", "1e300"}
