"""`lionsim regress` catches algorithms broken on purpose (monkeypatched here, never in the product).

One baseline of the real suite case mlp-n4-iid (7 runs, 100 steps) is measured once, with the
committed tolerance rule; each test then breaks one piece and checks that `lionsim regress`
exits 1 and that the failing JUnit testcases are exactly the runs the break touches.

The baseline is recorded on this machine, so the check runs in strict mode (fingerprint.py):
subtle breaks that stay inside the seed-spread tolerances (weight decay x 1.1, beta2 0.98
for 0.99, 1% of one chunk lost) are caught too. On another platform float
mode catches them: tests/regress/test_float.py.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

import lionsim.strategies.dlion as dlion
import lionsim.transports.a2a_1bit as a2a_1bit
from lionsim.aggregators import MajorityVote
from lionsim.cli.app import main
from lionsim.optim import functional
from lionsim.regress import update_suite
from lionsim.regress.tolerance import DEFAULT_SEEDS

CASE = "mlp-n4-iid"
MAVO = "dlion-mavo@int8-allreduce"
MAVO_A2A = "dlion-mavo@a2a-1bit"
AVG = "dlion-avg@int8-allreduce"


@pytest.fixture(scope="session")
def baseline_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("baselines")
    result = update_suite(directory, [CASE], seeds=DEFAULT_SEEDS)
    assert result.ok, result.problems
    return directory


def regress(baseline_dir, tmp_path, capsys, *extra: str) -> tuple[int, str, set[str]]:
    """Run `lionsim regress --case CASE`; return (exit code, stdout, failing runs from the JUnit file)."""
    junit = tmp_path / "junit.xml"
    with pytest.raises(SystemExit) as exit_info:
        main(["regress", "--case", CASE, "--baseline-dir", str(baseline_dir), "--junit", str(junit), *extra])
    out = capsys.readouterr().out
    suite = ET.parse(junit).getroot().find("testsuite")
    failing = {tc.get("name") for tc in suite.iter("testcase") if tc.find("failure") is not None}
    assert all(tc.get("classname") == f"regress.{CASE}" for tc in suite.iter("testcase"))
    assert int(suite.get("failures")) == len(failing)
    return exit_info.value.code, out, failing


@pytest.mark.slow
def test_unchanged_tree_matches_its_baseline_exactly(baseline_dir, tmp_path, capsys):
    code, out, failing = regress(baseline_dir, tmp_path, capsys)
    assert (code, failing) == (0, set()), out
    assert "PASS" in out


def flip_vote(monkeypatch):
    value = MajorityVote.value
    monkeypatch.setattr(MajorityVote, "value", lambda self, vote_sum, workers: -value(self, vote_sum, workers))


def momentum_unused(monkeypatch):
    monkeypatch.setattr(dlion, "decay_momentum_", lambda exp_avg, grad, beta2: None)


def weight_decay_doubled(monkeypatch):
    monkeypatch.setattr(dlion, "apply_update_",
                        lambda p, update, lr, wd: functional.apply_update_(p, update, lr, 2 * wd))


def a2a_drops_last_chunk(monkeypatch):
    """The all-gather of voted chunks loses the last worker's chunk: its buffer stays zero."""
    unpack = a2a_1bit.unpack_codes

    def lossy(packed, numel, bits):
        codes = unpack(packed, numel, bits).clone()  # [w, W, chunk]
        codes[:, -1] = 0
        return codes

    monkeypatch.setattr(a2a_1bit, "unpack_codes", lossy)


@pytest.mark.parametrize("brk, must_fail, may_fail", [
    (flip_vote, {MAVO, MAVO_A2A}, set()),  # every transport applies the rule's result (tie rules included)
    (momentum_unused, {MAVO, MAVO_A2A, AVG}, set()),
    (weight_decay_doubled, {MAVO, MAVO_A2A}, {AVG}),
    (a2a_drops_last_chunk, {MAVO_A2A}, set()),
], ids=["vote-sign-flipped", "momentum-unused", "weight-decay-doubled", "a2a-drops-a-chunk"])
@pytest.mark.slow
def test_a_broken_algorithm_fails_the_right_case_and_runs(baseline_dir, tmp_path, capsys, monkeypatch,
                                                          brk, must_fail, may_fail):
    brk(monkeypatch)
    code, out, failing = regress(baseline_dir, tmp_path, capsys)
    assert code == 1, out
    assert must_fail <= failing <= must_fail | may_fail, out
    # the summary names the case, then its worst runs with metric and by how much (all of them: the JUnit file)
    assert f"  {CASE}: " in out and any(f"    {run} / " in out for run in must_fail), out
    assert "worse by" in out or "eval_loss" in out


# ---- subtle breaks: strict mode (same platform as the baseline) ---------------------------


def weight_decay_times_1_1(monkeypatch):
    monkeypatch.setattr(dlion, "apply_update_",
                        lambda p, update, lr, wd: functional.apply_update_(p, update, lr, 1.1 * wd))


def beta2_0_98(monkeypatch):
    monkeypatch.setattr(dlion, "decay_momentum_",
                        lambda exp_avg, grad, beta2: functional.decay_momentum_(exp_avg, grad, beta2 - 0.01))


def a2a_loses_one_percent_of_a_chunk(monkeypatch):
    """The all-gather of voted chunks loses the first 1% of the last worker's chunk."""
    unpack = a2a_1bit.unpack_codes

    def lossy(packed, numel, bits):
        codes = unpack(packed, numel, bits).clone()  # [w, W, chunk]
        codes[:, -1, : max(1, numel // 100)] = 0
        return codes

    monkeypatch.setattr(a2a_1bit, "unpack_codes", lossy)


@pytest.mark.slow
def test_the_baseline_records_this_platform_and_the_check_says_strict(baseline_dir, tmp_path, capsys):
    code, out, failing = regress(baseline_dir, tmp_path, capsys)
    assert (code, failing) == (0, set()), out
    assert "mode: strict" in out and "strict mode" in out
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["mode"] == "strict"


@pytest.mark.parametrize("brk, touched", [
    (weight_decay_times_1_1, {MAVO, MAVO_A2A, AVG}),
    (beta2_0_98, {MAVO, MAVO_A2A, AVG}),
    (a2a_loses_one_percent_of_a_chunk, {MAVO_A2A}),
], ids=["weight-decay-x1.1", "beta2-0.98", "a2a-loses-1pct-of-a-chunk"])
@pytest.mark.slow
def test_strict_mode_catches_subtle_breaks_that_the_spread_lets_through(baseline_dir, tmp_path, capsys,
                                                                        monkeypatch, brk, touched):
    brk(monkeypatch)
    code, out, failing = regress(baseline_dir, tmp_path, capsys)
    assert code == 1 and "mode: strict" in out, out
    assert failing and failing <= touched, out  # only runs the break touches, and at least one
    assert "CHANGED" in out
    code, out, failing = regress(baseline_dir, tmp_path, capsys, "--mode", "spread")
    assert "mode: spread" in out
    assert code == 0, out  # the seed-spread tolerances alone miss these: why strict mode exists
