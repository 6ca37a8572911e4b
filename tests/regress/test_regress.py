"""lionsim.regress: metrics, tolerances, verdicts, baseline files, suite drift, reports, CLI errors.

Training happens only on a test-only tiny case (2 workers, 30 steps: ~0.2 s a run) passed to
the library through its `suite` argument; the CLI tests fail before any training.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import math
import os
import time
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
import torch

import lionsim.strategies.dlion as dlion
from lionsim.aggregators import MajorityVote
from lionsim.errors import LionsimError
from lionsim.regress import SUITE, CheckResult, check_suite, load_baseline, select_cases, update_suite
from lionsim.regress.baseline import BASELINE_FILE, MetricBaseline, default_baseline_dir
from lionsim.regress.cases import MLP_HYPER, Case
from lionsim.regress.compare import compare_metric
from lionsim.regress.fingerprint import SPREAD, STRICT, choose_mode, fingerprint
from lionsim.regress.metrics import run_metrics
from lionsim.regress.report import junit_xml, markdown
from lionsim.regress.rows import FAILED, IMPROVED, MISSING, OUTDATED, PASS, REGRESSED, UNGUARDED, Row
from lionsim.regress.tolerance import ACCURACY_FLOOR, LOSS_FLOOR, tolerance
from tests.helpers import REPO
from tests.helpers.cli import one_line_exit_2, run_cli

TINY = Case(name="tiny", workload="mlp", workers=2, steps=30, batch_size=16,
            strategies=("lion", "dlion-mavo"), hyper=MLP_HYPER)
TINY2 = dataclasses.replace(TINY, name="tiny2", workers=3)
LION, MAVO = "lion@fp32-allreduce", "dlion-mavo@int8-allreduce"


@pytest.fixture(scope="session")
def tiny_baseline(tmp_path_factory):
    """A baseline of TINY (fixed seed + 1 calibration seed); tests copy the file before editing it."""
    directory = tmp_path_factory.mktemp("tiny")
    result = update_suite(directory, seeds=1, suite=[TINY])
    assert result.ok and result.path == directory / BASELINE_FILE
    assert [c.kind for c in result.changes] == ["new case"]
    return json.loads(result.path.read_text())


def write(directory, data) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / BASELINE_FILE).write_text(json.dumps(data))


# ---- pure pieces -----------------------------------------------------------------------


def test_select_cases_takes_names_and_globs_and_rejects_unknown_ones():
    assert [c.name for c in select_cases(["mlp-n4-*", "gpt-n4-iid"])] == ["mlp-n4-iid", "mlp-n4-dir0.5", "gpt-n4-iid"]
    assert select_cases(None) == list(SUITE)
    with pytest.raises(LionsimError, match=r"unknown case 'mlp-n3'; choose from: mlp-n4-iid, "):
        select_cases(["mlp-n3"])


def test_the_suite_is_valid_and_has_the_main_strategies_and_an_a2a_run():
    runs = {s for c in SUITE for s in c.strategies}
    assert {"adamw", "lion", "dlion-mavo", "dlion-avg", "lioncub-l1", "dlion-mavo@a2a-1bit"} <= runs
    assert {c.workers for c in SUITE} >= {4, 8} and {c.data_split for c in SUITE} >= {"iid", "dirichlet:0.5"}
    for case in SUITE:
        for strategy in case.strategies:
            case.bench_config(strategy, case.seed).validate()


def test_tolerance_is_k_standard_deviations_with_a_floor():
    assert tolerance("final_loss", 0.1) == pytest.approx(0.3)
    assert tolerance("final_loss", 0.0) == LOSS_FLOOR
    assert tolerance("eval_acc", 1e-5) == ACCURACY_FLOOR


def test_run_metrics_read_the_curve_the_checkpoints_and_the_last_eval():
    steps = pd.DataFrame({"step": range(20, 0, -1), "loss": [21.0 - k for k in range(20, 0, -1)],
                          "eval_loss": [1.5] + [math.nan] * 19, "eval_acc": [math.nan] * 20})
    m = run_metrics(steps)  # loss 20, 19, ..., 1 over steps 1..20; trailing window ceil(10%) = 2
    assert m == {"final_loss": 1.5, "best_loss": 1.0, "eval_loss": 1.5,
                 "loss@5": 16.5, "loss@10": 11.5, "loss@15": 6.5}  # no eval_acc: none reported


@pytest.mark.parametrize("metric, now, verdict", [
    ("final_loss", 1.09, PASS), ("final_loss", 1.11, REGRESSED), ("final_loss", 0.89, IMPROVED),
    ("eval_acc", 0.89, REGRESSED), ("eval_acc", 1.11, IMPROVED), ("final_loss", math.nan, REGRESSED),
])
def test_a_metric_regresses_past_its_tolerance_on_its_worse_side(metric, now, verdict):
    row = compare_metric("c", "r", metric, MetricBaseline(value=1.0, sd=0.03, tol=0.1), now)
    assert row.verdict == verdict
    if verdict == REGRESSED and not math.isnan(now):
        assert "worse by 0.11" in row.note and "tolerance 0.1" in row.note


@pytest.mark.parametrize("metric, value, tol, worst, verdict", [
    ("eval_acc", 0.53, 0.59, 0.0, UNGUARDED),  # vit's lion in float mode: any accuracy passes
    ("eval_acc", 0.53, 0.53, 0.0, UNGUARDED),  # reaches 0 exactly
    ("eval_acc", 0.42, 0.16, 0.0, PASS),  # an accuracy below 0.26 would fail: it guards
    ("eval_loss", 1.28, 1.03, 2.30, UNGUARDED),  # 1.28 + 1.03 reaches the untrained loss
    ("eval_loss", 1.28, 1.01, 2.30, PASS),
    ("gap_to_lion", 0.10, 5.0, None, PASS),  # no bound known: never unguarded
])
def test_a_pass_whose_tolerance_reaches_the_worst_reading_is_unguarded(metric, value, tol, worst, verdict):
    from lionsim.regress.fingerprint import FLOAT

    base = MetricBaseline(value=value, sd=0.01, tol=0.05, noise_rms=tol / 5, noise_tol=tol)
    row = compare_metric("c", "r", metric, base, value, FLOAT, worst=worst)
    assert row.verdict == verdict and not row.failed
    assert ("any reading passes" in row.note) == (verdict == UNGUARDED)


def test_an_unguarded_check_is_counted_and_listed_in_the_report():
    rows = [Row("c1", "a@x", "final_loss", PASS, 1.0, 1.0, 0.1),
            Row("c1", "a@x", "eval_acc", UNGUARDED, 0.53, 0.60, 0.59, note="any reading passes")]
    result = CheckResult(cases=["c1"], rows=rows)
    assert result.ok and result.checks_line == "2 checks, 1 unguarded"
    md = markdown(result, 1.0)
    assert "2 checks, 1 unguarded, 0 failed" in md and "## Unguarded" in md and "| c1 | a@x | eval_acc |" in md


def test_worst_readings_bound_accuracy_and_losses_only():
    from lionsim.regress.metrics import worst_reading

    assert [worst_reading(m, 2.3) for m in ("eval_acc", "final_loss", "best_loss", "eval_loss", "loss@25",
                                            "gap_to_lion", "eval_acc_lower_is_better")] == [0.0, 2.3, 2.3, 2.3,
                                                                                           2.3, None, None]


# ---- suites through the library ------------------------------------------------------------


def test_an_unchanged_tree_reproduces_its_baseline_exactly(tiny_baseline, tmp_path):
    write(tmp_path, tiny_baseline)
    threads = torch.get_num_threads()
    result = check_suite(tmp_path, suite=[TINY])
    assert torch.get_num_threads() == threads  # the one-thread pin is undone
    assert result.ok and not result.warnings, result.failures
    metric_rows = [r for r in result.rows if not r.is_cross_check]
    assert metric_rows and all(r.now == r.baseline for r in metric_rows)
    assert {r.metric for r in result.rows if r.run == MAVO} >= {"gap_to_lion", "check:mavo-vs-lion", "eval_acc"}


def test_junit_times_each_run_and_the_times_fit_in_the_check(tiny_baseline, tmp_path):
    """Every testcase said time="0": a figure no one measured."""
    write(tmp_path, tiny_baseline)
    start = time.perf_counter()
    result = check_suite(tmp_path, suite=[TINY])
    wall = time.perf_counter() - start
    cases = ET.fromstring(junit_xml(result, wall)).find("testsuite").findall("testcase")
    times = [float(c.get("time")) for c in cases]
    assert len(cases) == len(TINY.strategies) and all(t > 0 for t in times) and sum(times) <= wall, times
    assert times == [round(result.run_seconds[("tiny", c.get("name"))], 2) for c in cases]


def test_a_baseline_from_another_suite_version_is_reported_not_crashed(tiny_baseline, tmp_path):
    data = json.loads(json.dumps(tiny_baseline))
    data["suite_version"] = 0
    data["cases"]["tiny"]["runs"]["signum-mv@int8-allreduce"] = data["cases"]["tiny"]["runs"][LION]
    write(tmp_path, data)
    changed = dataclasses.replace(TINY, steps=31)
    result = check_suite(tmp_path, suite=[changed, TINY2])
    verdicts = {(r.case, r.run): (r.verdict, r.note) for r in result.rows if not r.is_cross_check}
    assert verdicts[("tiny", LION)][0] == OUTDATED and "steps 30 -> 31" in verdicts[("tiny", LION)][1]
    assert verdicts[("tiny2", MAVO)][0] == MISSING
    assert "lionsim regress --update --case tiny2" in verdicts[("tiny2", MAVO)][1]
    assert not result.ok
    assert any("suite version 0" in w for w in result.warnings)
    # a case the suite no longer has is a warning, and so is a run it no longer has
    result = check_suite(tmp_path, suite=[TINY2, TINY])
    assert any("tiny / signum-mv@int8-allreduce is no longer in the suite" in w for w in result.warnings)
    result = check_suite(tmp_path, suite=[TINY2])
    assert any("baseline case tiny is no longer in the suite" in w for w in result.warnings)


def test_every_update_advice_names_the_baselines_the_check_read(tiny_baseline, tmp_path):
    """Advice to `--update` that left out --baseline-dir would rewrite the checkout's committed
    baselines, not the ones the check read."""
    data = json.loads(json.dumps(tiny_baseline))
    data["cases"]["tiny"]["runs"][LION]["metrics"]["final_loss"]["value"] = 9.0  # improved past its tolerance
    del data["cases"]["tiny"]["runs"][MAVO]["metrics"]["eval_acc"]  # a metric the baseline lacks
    data["cases"]["gone"] = data["cases"]["tiny"]
    write(tmp_path / "my baselines", data)
    directory = tmp_path / "my baselines"
    result = check_suite(directory, suite=[TINY, TINY2], mode=SPREAD)
    advice = [r.note for r in result.rows if "--update" in r.note] + [w for w in result.warnings if "--update" in w]
    expected = {f"lionsim regress --update --case tiny --baseline-dir '{directory}'",
                f"lionsim regress --update --case tiny2 --baseline-dir '{directory}'",
                f"lionsim regress --update --baseline-dir '{directory}'"}
    assert len(advice) >= 4 and all(any(e in a for e in expected) for a in advice), advice
    from lionsim.regress.baseline import update_command  # the default's are left unnamed

    assert update_command(default_baseline_dir(), ["tiny"]) == "lionsim regress --update --case tiny"


def test_a_diverged_run_fails_the_check_instead_of_erroring(tiny_baseline, tmp_path, monkeypatch):
    write(tmp_path, tiny_baseline)
    monkeypatch.setattr(dlion, "apply_update_", lambda p, update, lr, wd: p.mul_(math.inf))
    result = check_suite(tmp_path, suite=[TINY])
    assert [(r.run, r.metric, r.verdict) for r in result.failures] == [(MAVO, "run", FAILED)]
    assert "diverged" in result.failures[0].note


def test_update_shows_what_changed_and_keeps_cases_it_did_not_touch(tiny_baseline, tmp_path):
    data = json.loads(json.dumps(tiny_baseline))
    data["cases"]["tiny"]["runs"][LION]["metrics"]["final_loss"]["value"] = 9.0
    data["cases"]["old"] = data["cases"]["tiny"]
    write(tmp_path, data)
    result = update_suite(tmp_path, ["tiny"], seeds=1, suite=[TINY, TINY2])
    assert [(c.case, c.run, c.metric, c.kind, c.old) for c in result.changes] == [("tiny", LION, "final_loss", "changed", 9.0)]
    assert result.changes[0].new == tiny_baseline["cases"]["tiny"]["runs"][LION]["metrics"]["final_loss"]["value"]
    assert list(load_baseline(tmp_path).cases) == ["tiny", "old"]  # a partial update keeps the rest


def test_update_refuses_to_record_a_broken_algorithm(tmp_path, monkeypatch):
    value = MajorityVote.value
    monkeypatch.setattr(MajorityVote, "value", lambda self, s, n: -value(self, s, n))
    result = update_suite(tmp_path, seeds=1, suite=[TINY])
    assert not result.ok and result.path is None and not (tmp_path / BASELINE_FILE).exists()
    assert any("check:mavo-vs-lion fails" in p for p in result.problems)


# ---- reports -------------------------------------------------------------------------------


def test_junit_is_valid_xml_with_one_testcase_per_run_and_the_failures_counted():
    rows = [Row("c1", "a@x", "final_loss", PASS, 1.0, 1.0, 0.1),
            Row("c1", "b@y", "final_loss", REGRESSED, 1.0, 1.5, 0.1, note="final_loss worse by 0.5 (tolerance 0.1)"),
            Row("c1", "b@y", "check:mavo-vs-lion", FAILED, 1.0, 2.0, 0.2, note="eval_loss 2 > 1.2 | x"),
            Row("c2", "b@y", "eval_acc", IMPROVED, 0.5, 0.7, 0.1)]
    result = CheckResult(cases=["c1", "c2"], rows=rows, warnings=["w <&>"])
    root = ET.fromstring(junit_xml(result, 3.0))
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert (suite.get("tests"), suite.get("failures")) == ("3", "1") and len(cases) == 3
    failure = cases[1].find("failure")
    assert (cases[1].get("classname"), cases[1].get("name")) == ("regress.c1", "b@y")
    assert "worse by 0.5" in failure.get("message") and "now 2.000, tolerance 0.2000" in failure.text
    md = markdown(result, 3.0)
    assert md.startswith("# lionsim regress: FAIL") and "| c1 | b@y | check:mavo-vs-lion |" in md
    assert "2 > 1.2 \\| x" in md


# ---- the command line: bad input is exit 2 before any training ------------------------------


@pytest.mark.parametrize("content, message", [
    ("{not json", "not JSON"),
    (json.dumps({"format": "other"}), "format is 'other'"),
    (json.dumps({"format": "lionsim-regress-baseline/1", "suite_version": 1, "tolerance": {}, "versions": {},
                 "cases": {"mlp-n4-iid": {"setting": {}, "seeds": [0], "untrained_eval_loss": 2.3, "runs": {
                     "lion@fp32-allreduce": {"lr": 0.01, "weight_decay": 2, "metrics": {
                         "final_loss": {"value": 1, "sd": 0, "tol": "wide"}}}}}}}),
     "cases.mlp-n4-iid.runs.lion@fp32-allreduce.metrics.final_loss.tol is 'wide', not a number"),
])
def test_a_malformed_baseline_is_one_line_and_exit_2(tmp_path, capsys, content, message):
    (tmp_path / BASELINE_FILE).write_text(content)
    code, out, err = run_cli(["regress", "--case", "mlp-n4-iid", "--baseline-dir", str(tmp_path)], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("args, message", [
    (["--baseline-dir", "{tmp}/none"], "regress.json not found; point at it with --baseline-dir DIR or create it with "
                                       "`lionsim regress --update --baseline-dir {tmp}/none`"),
    (["--case", "nope"], "unknown case 'nope'; choose from: mlp-n4-iid"),
    (["--update", "--junit", "{tmp}/j.xml"], "--junit does not apply to --update; accepted with it: --case, --seeds"),
    (["--mode", "exact"], "bad --mode 'exact'; accepted: auto, strict, float, spread"),
    (["--update", "--seeds", "0", "--baseline-dir", "{tmp}"], "bad --seeds 0"),
    (["--junit", "{tmp}"], "it is a directory"),
    (["--report", "/dev/null/r.md"], "/dev/null is not a directory"),
])
def test_bad_usage_is_exit_2_with_one_line(tmp_path, capsys, args, message):
    code, out, err = run_cli(["regress", *(a.format(tmp=tmp_path) for a in args)], capsys)
    assert code == 2 and message.format(tmp=tmp_path) in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_list_shows_every_case(capsys):
    code, out, _ = run_cli(["regress", "--list"], capsys)
    assert code == 0 and all(c.name in out for c in SUITE)


def test_list_shows_the_cases_case_selects(capsys):
    code, out, _ = run_cli(["regress", "--list", "--case", "mlp-n4-*"], capsys)
    shown = {c.name for c in SUITE if c.name in out}
    assert code == 0 and shown == {c.name for c in SUITE if fnmatch.fnmatchcase(c.name, "mlp-n4-*")} and len(shown) >= 2


LIST_ALL_WRONG = ["--list", "--mode", "bogus", "--seeds", "-3", "--case", "nope", "--junit", "/nonexistent/dir/x.xml"]


@pytest.mark.parametrize("args, message", [
    # a bad value is refused first, whatever else is given (--list included)
    (LIST_ALL_WRONG, "bad --mode 'bogus'; accepted: auto, strict, float, spread"),
    (["--list", *LIST_ALL_WRONG[3:]], "bad --seeds -3; accepted: a whole number at least 1"),
    (["--list", *LIST_ALL_WRONG[5:]], "unknown case 'nope'; choose from: mlp-n4-iid"),
    (["--seeds", "-3"], "bad --seeds -3"),
    (["--update", "--seeds", "-3", "--case", "nope"], "bad --seeds -3"),
    # then an option the action cannot use
    (["--list", "--junit", "/nonexistent/dir/x.xml"], "--junit does not apply to --list; accepted with it: --case"),
    (["--list", "--mode", "auto", "--all", "--baselines", "{tmp}"],
     "--baseline-dir, --mode, --all do not apply to --list; accepted with it: --case"),
    (["--list", "--seeds", "2"], "--seeds does not apply to --list"),
    (["--list", "--update"], "--list and --update are two actions"),
    (["--seeds", "3", "--baseline-dir", "{tmp}"], "--seeds does not apply to a check (no --list or --update); "
                                                   "accepted with it: --case, --baseline-dir, --junit, --report, --mode, --all"),
    (["--update", "--all", "--baseline-dir", "{tmp}"], "--all does not apply to --update; accepted with it: --case, "
                                                        "--seeds, --baseline-dir"),
    (["--update", "--mode", "auto", "--baseline-dir", "{tmp}"], "--mode does not apply to --update"),
    (["--update", "--report", "{tmp}/r.md", "--baseline-dir", "{tmp}"], "--report does not apply to --update"),
])
def test_every_option_acts_or_is_refused_in_one_line(tmp_path, capsys, args, message):
    one_line_exit_2(["regress", *(a.format(tmp=tmp_path) for a in args)], capsys, message)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_regress_finds_the_checkout_baselines_from_another_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert default_baseline_dir() == REPO / "reports" / "baselines"
    assert load_baseline(default_baseline_dir()).cases  # was "reports/baselines/regress.json not found"
    err = one_line_exit_2(["regress", "--baselines", str(tmp_path / "none")], capsys, "point at it with --baseline-dir")
    assert str(tmp_path / "none") in err
    code, out, _ = run_cli(["regress", "--help"], capsys)
    assert code == 0 and "not the current directory" in " ".join(out.split())


def test_mode_is_strict_only_on_the_recording_platform():
    here = fingerprint()
    assert choose_mode("auto", here)[0] == STRICT
    mode, why = choose_mode("auto", {**here, "cpu": "another cpu"})
    assert mode == SPREAD and "cpu another cpu ->" in why
    assert choose_mode("auto", None)[0] == SPREAD
    assert choose_mode("strict", None)[0] == STRICT and choose_mode("spread", here)[0] == SPREAD


def test_the_committed_baseline_records_its_platform():
    baseline = load_baseline(REPO / "reports" / "baselines")
    assert baseline.fingerprint and set(baseline.fingerprint) == set(fingerprint())


def test_list_fits_80_columns_in_a_pipe_with_every_name_and_number_whole(monkeypatch):
    """As bench's tables: 80 columns off a terminal, every case, number and strategy whole (the
    strategies wrap between names)."""
    from tests.helpers.cli import invoke_at

    out = invoke_at(80, ["regress", "--list"], monkeypatch).output
    assert max(map(len, out.splitlines())) <= 80, out
    tokens = {t.rstrip(",") for t in out.split()}
    settings = {str(v) for c in SUITE for v in (c.name, c.workload, c.size, c.data_split, c.workers, c.steps,
                                                   c.batch_size, c.seed)}
    strategies = {s for c in SUITE for s in c.strategies}
    assert settings | strategies <= tokens
    text = ("regression cases case / strategies workload N split steps batch seed lr, wd pinned defaults "
            "N: workers; lr, wd: pinned per strategy by the case, or each strategy's defaults").split()
    rule = {"─" * len(line.strip()) for line in out.splitlines()}
    assert tokens - settings - strategies - {t.rstrip(",") for t in text} - rule == set(), out  # nothing cut


def test_plugin_is_no_option_of_regress_in_any_action(tmp_path, capsys, forget_plugins):
    """The suite's cases run built-in strategies and transports: a plug-in's can never be checked, so
    --plugin is no option of regress: not in its --help, and every action refuses it alike."""
    from lionsim.plugins import LOADED

    plugin = REPO / "examples" / "plugins" / "randomk_ef.py"
    code, out, _ = run_cli(["regress", "--help"], capsys)
    assert code == 0 and "--update" in out and "--plugin" not in out
    for action in (["--list"], ["--update", "--baseline-dir", str(tmp_path)], []):
        one_line_exit_2(["regress", *action, "--plugin", str(plugin)], capsys,
                        "error: no such option --plugin for `lionsim regress`")
    assert list(tmp_path.iterdir()) == [] and str(plugin.resolve()) not in LOADED


def test_junit_and_report_make_missing_folders_and_remove_them_if_nothing_is_written(tmp_path, capsys,
                                                                                      monkeypatch):
    """As --out: missing folders are made; a check whose files are not all written leaves none."""
    import lionsim.regress as regress
    import lionsim.regress.report as report

    result = CheckResult(cases=["mlp-n4-iid"], rows=[Row("mlp-n4-iid", LION, "final_loss", PASS, 1.0, 1.0, 0.1)])
    monkeypatch.setattr(regress, "check_suite", lambda *args, **kwargs: result)
    argv = ["regress", "--case", "mlp-n4-iid", "--junit", tmp_path / "a" / "b" / "j.xml", "--report",
            tmp_path / "c" / "r.md"]

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "markdown", interrupted)  # Ctrl-C after the JUnit file is staged
    one_line_exit_2(argv, capsys, "interrupted")
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    monkeypatch.setattr(regress, "check_suite", lambda *args, **kwargs: result)
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert (tmp_path / "a" / "b" / "j.xml").is_file() and (tmp_path / "c" / "r.md").is_file()
    assert f"wrote{tmp_path / 'a' / 'b' / 'j.xml'}" in "".join(out.split())  # a long path wraps on the console


@pytest.fixture
def no_training(monkeypatch):
    """The CLI's check with every run refused: a test passes only if nothing trains."""
    import lionsim.regress.check as check

    def train(*args, **kwargs):
        raise AssertionError("a run trained")

    monkeypatch.setattr(check, "run_case", train)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc, where no folder can be made")
@pytest.mark.parametrize("option", ["--report", "--junit"])
def test_an_output_whose_folder_cannot_be_made_is_refused_before_any_run(option, capsys, no_training):
    """/proc passes the permission bits for root, but no folder can be made in it: tried before the
    runs, not found after every case trained."""
    one_line_exit_2(["regress", "--case", "mlp-n4-iid", option, "/proc/x/r.out"], capsys,
                    f"bad {option} /proc/x/r.out: ")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc, where no folder can be made")
def test_an_update_whose_baselines_cannot_be_written_is_refused_before_any_run(tmp_path, capsys, monkeypatch):
    """--update rewrites DIR/regress.json after every case trained: a folder it cannot write is
    refused first, naming the option as given, and nothing is left behind."""
    import lionsim.regress.update as update

    monkeypatch.setattr(update, "run_case", lambda *a, **k: pytest.fail("a run trained"))
    one_line_exit_2(["regress", "--update", "--case", "mlp-n4-iid", "--baseline-dir", "/proc/x"], capsys,
                    "bad --baseline-dir /proc/x: cannot write in it")
    (tmp_path / "file").write_text("")
    one_line_exit_2(["regress", "--update", "--case", "mlp-n4-iid", "--baseline-dir", tmp_path / "file" / "b"],
                    capsys, f"bad --baseline-dir {tmp_path / 'file' / 'b'}: {tmp_path / 'file'} is not a directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_report_and_junit_at_one_path_are_refused_naming_both(tmp_path, capsys, no_training):
    err = one_line_exit_2(["regress", "--case", "mlp-n4-iid", "--report", tmp_path / "x.md",
                           "--junit", tmp_path / "sub" / ".." / "x.md"], capsys, "the same file")
    assert "--report" in err and "--junit" in err
    assert list(tmp_path.iterdir()) == []  # the probe's folder sub/ is gone again


def test_a_report_that_cannot_be_written_after_the_check_keeps_the_verdict(tmp_path, capsys, monkeypatch):
    """The files are written after the verdict is printed: a write that fails after all (here the
    report's folder turned into a file while the runs trained) names the option and loses no verdict."""
    import lionsim.regress as regress

    result = CheckResult(cases=["mlp-n4-iid"], rows=[Row("mlp-n4-iid", LION, "final_loss", PASS, 1.0, 1.0, 0.1)])

    def check(*args, **kwargs):
        (tmp_path / "d").write_text("in the way")
        return result

    monkeypatch.setattr(regress, "check_suite", check)
    code, out, err = run_cli(["regress", "--case", "mlp-n4-iid", "--report", tmp_path / "d" / "r.md",
                              "--junit", tmp_path / "j.xml"], capsys)
    assert code == 2 and "PASS: 1 case, 1 check" in out and LION in out, (out, err)
    assert err.startswith("error: --report: ") and len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]  # neither file: they are written together


def test_a_case_missing_from_the_baseline_is_said_before_any_run_and_not_trained(tmp_path, capsys, no_training):
    data = json.loads((REPO / "reports" / "baselines" / BASELINE_FILE).read_text())
    del data["cases"]["mlp-n4-iid"]
    write(tmp_path, data)
    code, out, err = run_cli(["regress", "--case", "mlp-n4-iid", "--baseline-dir", tmp_path], capsys)
    case = next(c for c in SUITE if c.name == "mlp-n4-iid")
    assert code == 1, (out, err)
    assert out.startswith("note: mlp-n4-iid is not in the baseline: reported missing without training")
    assert f"FAIL: {len(case.strategies)} of {len(case.strategies)} checks failed" in out
    # the fix once for the case, not once a run: "mlp-n4-iid: 5 runs missing: case ... is not in the baseline; run ..."
    assert out.count("is not in the baseline; run") == 1 and f"mlp-n4-iid: {len(case.strategies)} runs missing: " in out


def test_config_keys_are_the_flags_names(tmp_path, capsys):
    """As every command's: `list` is --list and `all` is --all (shown by --list refusing it)."""
    (tmp_path / "list.toml").write_text("list = true\n")
    code, out, err = run_cli(["regress", "--config", tmp_path / "list.toml"], capsys)
    assert code == 0 and all(c.name in out for c in SUITE), (out, err)
    (tmp_path / "all.toml").write_text("all = true\n")
    one_line_exit_2(["regress", "--list", "--config", tmp_path / "all.toml"], capsys,
                    "--all does not apply to --list")
