"""Errors in the user's own code during a run (lionsim.usercode): a plug-in's payload or
aggregate that no transport or strategy can read is one line naming the plug-in; an error raised
by a plug-in or a workload mid-run is one line naming the run and the step, exit code 3, with
the finished runs kept (run.json marked failed) and `--resume` training the rest; lionsim's own
errors keep their traceback. Every built-in strategy and transport passes the plug-in checks."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import torch

from lionsim.cli.app import main
from lionsim.aggregators import MajorityVote
from lionsim.transports import Payload, PayloadSpec
from lionsim.transports.checks import check_aggregate, check_payload
from lionsim.usercode import UserCodeError, blame

PLUGINS = Path(__file__).resolve().parents[1] / "helpers" / "failing_plugins.py"
BENCH = ["bench", "-w", "mlp", "--model-size", "tiny", "-n", "2", "-b", "8", "--compute", "h100"]
WORKLOAD = '''
import torch
from torch import nn
from torch.utils.data import TensorDataset


def make():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(400, 4, generator=g)
    y = torch.randint(0, 3, (400,), generator=g)
    y[300] = 5  # one label out of range for a 3-class model: met at step 10 of the first run
    return nn.Linear(4, 3), TensorDataset(x, y), nn.CrossEntropyLoss()
'''


def run(argv: list[str], capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err
    return done.value.code, "\n".join(line for line in err.splitlines() if not line.startswith("lionsim: "))


# --- the checks of what plug-ins return -------------------------------------------------------

CPU = torch.device("cpu")


def payload_error(payload, carries=("dense",), workers=2) -> str:
    with pytest.raises(UserCodeError) as e:
        check_payload(payload, "mine", carries, workers, CPU)
    return str(e.value)


def test_payload_checks_name_the_strategy_and_what_was_expected():
    dense = PayloadSpec(kind="dense", numel=6)
    assert payload_error(torch.zeros(2, 6)) == ("the strategy mine's encode returned a Tensor; accepted: a "
                                                "lionsim.transports.Payload (Payload(spec, values, ...)), or None "
                                                "on a step that sends nothing")
    assert "values [2, 4] and indices [2, 3] differ in shape" in payload_error(
        Payload(PayloadSpec(kind="sparse", numel=6, k=4), torch.zeros(2, 4), indices=torch.zeros(2, 3, dtype=torch.long)),
        carries=("sparse",))
    assert "positions from 0 to 6; accepted: 0 to 5" in payload_error(
        Payload(PayloadSpec(kind="sparse", numel=6, k=2), torch.zeros(2, 2), indices=torch.tensor([[0, 6], [1, 2]])),
        carries=("sparse",))
    assert "sparse payload's indices of dtype torch.float32" in payload_error(
        Payload(PayloadSpec(kind="sparse", numel=6, k=2), torch.zeros(2, 2), indices=torch.zeros(2, 2)),
        carries=("sparse",))
    assert "dense payload's values of 3 rows; accepted: 2 (one per worker" in payload_error(Payload(dense, torch.zeros(3, 6)))
    assert "values of 5 values per row; accepted: 6 (its spec's numel)" in payload_error(Payload(dense, torch.zeros(2, 5)))
    assert "values of shape [12]; accepted: 2 dimensions" in payload_error(Payload(dense, torch.zeros(12)))
    assert "values of dtype torch.int64; accepted: a floating dtype" in payload_error(
        Payload(dense, torch.zeros(2, 6, dtype=torch.long)))
    assert "votes payload's values of dtype torch.float32; accepted: an integer dtype" in payload_error(
        Payload(PayloadSpec(kind="votes", numel=6), torch.zeros(2, 6)), carries=("votes",))
    assert "votes payload of dtype torch.int32; accepted: torch.int8" in payload_error(
        Payload(PayloadSpec(kind="votes", numel=6), torch.zeros(2, 6, dtype=torch.int32)), carries=("votes",))
    # a vote is a sign: int8's all-reduce summed a 3 where the 1-bit wires sent its sign (a user's votes * 3)
    threes = torch.tensor([[1, -1, 0, 3, 1, 1], [0, 1, -1, 1, -3, 1]], dtype=torch.int8)
    assert "votes payload holding 3 (2 of 12 values outside -1..1); accepted: +1, 0, -1" in payload_error(
        Payload(PayloadSpec(kind="votes", numel=6, rule=MajorityVote()), threes), carries=("votes",))
    assert "a levels payload, which its transport does not carry; accepted: votes, dense" in payload_error(
        Payload(PayloadSpec(kind="levels", numel=6), torch.zeros(2, 6, dtype=torch.int8)), carries=("votes",))
    assert "kind 'odd'" in payload_error(Payload(PayloadSpec(kind="odd", numel=6), torch.zeros(2, 6)))
    assert "segment_ids reach 3 with 2 scales per row" in payload_error(
        Payload(PayloadSpec(kind="scaled-signs", numel=4, segments=2), torch.zeros(2, 4, dtype=torch.int8),
                scales=torch.ones(2, 2), segment_ids=torch.tensor([0, 1, 2, 3])), carries=("scaled-signs",))
    check_payload(None, "mine", ("dense",), 2, CPU)  # a local step sends nothing
    check_payload(Payload(dense, torch.zeros(2, 6)), "mine", ("dense",), 2, CPU)


def test_a_scales_tensor_of_the_wrong_shape_is_named_with_the_shape_expected():
    """One scale per tensor (the spec's segments): scales [w, 1] is named as such, not by the
    segment ids it leaves out of range."""
    spec = PayloadSpec(kind="scaled-signs", numel=6, segments=3)
    signs, ids = torch.ones(4, 6, dtype=torch.int8), torch.tensor([0, 0, 1, 1, 2, 2])
    assert payload_error(Payload(spec, signs, scales=torch.ones(4, 1), segment_ids=ids), ("scaled-signs",), 4) == (
        "the strategy mine's encode returned a scaled-signs payload's scales of shape [4, 1]; accepted: [4, 3]: one "
        "per worker of this process and tensor (its spec's segments, layout.segments)")
    check_payload(Payload(spec, signs, scales=torch.ones(4, 3), segment_ids=ids), "mine", ("scaled-signs",), 4, CPU)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_payloads_float_parts_must_be_finite(dtype):
    """NaN or inf in values or scales (the run's gradients are finite by then: the loop reports a
    non-finite one as a divergence first) is the plug-in's: what, how many and the first place."""
    values = torch.randn(2, 6).to(dtype)
    values[1, 4], values[0, 5] = float("nan"), float("-inf")
    assert payload_error(Payload(PayloadSpec(kind="dense", numel=6), values)) == (
        "the strategy mine's encode returned a dense payload's values holding nan and inf (2 of 12 values, the first "
        "at [0, 5]); accepted: finite values (the step's gradients were finite)")
    scales = torch.ones(2, 3)
    scales[1, 2] = float("inf")
    spec = PayloadSpec(kind="scaled-signs", numel=6, segments=3)
    assert payload_error(Payload(spec, torch.ones(2, 6, dtype=torch.int8), scales=scales,
                                 segment_ids=torch.tensor([0, 0, 1, 1, 2, 2])), ("scaled-signs",)) == (
        "the strategy mine's encode returned a scaled-signs payload's scales holding inf (1 of 6 values, the first at "
        "[1, 2]); accepted: finite values (the step's gradients were finite)")
    pairs = Payload(PayloadSpec(kind="sparse", numel=6, k=2), torch.tensor([[1.0, float("nan")], [0.0, 2.0]]),
                    indices=torch.tensor([[0, 1], [2, 3]]))
    assert "sparse payload's values holding nan (1 of 4 values, the first at [0, 1])" in payload_error(
        pairs, ("sparse",))
    check_payload(Payload(PayloadSpec(kind="dense", numel=6), torch.full((2, 6), 3e38)), "mine", ("dense",), 2, CPU)


def test_aggregate_checks_name_the_transport():
    spec = PayloadSpec(kind="dense", numel=6)
    with pytest.raises(UserCodeError, match=r"^the transport t's aggregate returned a tensor of shape \[1, 6\]; "
                                            r"accepted: \[2, 6\]"):
        check_aggregate(torch.zeros(1, 6), "t", spec, 2)
    with pytest.raises(UserCodeError, match="returned a list; accepted: a torch.Tensor"):
        check_aggregate([], "t", spec, 2)
    with pytest.raises(UserCodeError, match="dtype torch.int8; accepted: a floating dtype"):
        check_aggregate(torch.zeros(2, 6, dtype=torch.int8), "t", spec, 2)
    check_aggregate(torch.zeros(2, 6), "t", spec, 2)


SHORT = {"freeze_steps": 2, "local_steps": 2, "powersgd_warmup_steps": 2}
"""Every phase of every built-in within a few steps (warm-ups, local steps, syncs)."""


def _strategies() -> list[str]:
    from lionsim.strategies import STRATEGIES

    return [name for name, cls in STRATEGIES.items() if not cls.__module__.startswith("lionsim_plugin")]


@pytest.mark.parametrize("strategy", _strategies())
def test_every_built_in_passes_the_plugin_checks(strategy, monkeypatch):
    """The checks refuse nothing lionsim's own strategies and transports send or return: every
    built-in, on every transport it can use, checked as a plug-in would be on every step."""
    from lionsim.bench import BenchConfig, run_bench
    from lionsim.strategies import STRATEGIES
    from lionsim.strategies.core.base import valid_transports
    from lionsim.strategies.core.given import options_for
    from lionsim.training import loop

    seen = []
    real = loop.StepChecks

    def every(**kwargs):
        seen.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(loop, "is_users", lambda cls: True)
    monkeypatch.setattr(loop, "StepChecks", every)
    runs = [f"{strategy}@{t}" for t in valid_transports(STRATEGIES.get(strategy))]
    cfg = BenchConfig(workload="mlp", model_size="tiny", workers=4, batch_size=4, steps=5, eval_every=5,
                      strategies=runs, options=options_for(SHORT, strategy), compute="h100")
    result = run_bench(cfg)
    assert len(seen) == len(runs) and len(result.steps) == 5 * len(runs)


# --- errors in user code mid-run: one line, exit 3, the finished runs kept ------------------------

def test_a_plugin_whose_encode_returns_a_tensor_is_one_line(tmp_path, capsys, forget_plugins):
    code, err = run([*BENCH, "--steps", "3", "-s", "tensor-sgd", "--plugin", str(PLUGINS), "--out", str(tmp_path / "o")],
                    capsys)
    assert code == 3
    assert err == ("error: tensor-sgd@fp32-allreduce at step 1: the strategy tensor-sgd's encode returned a Tensor; "
                   "accepted: a lionsim.transports.Payload (Payload(spec, values, ...)), or None on a step that sends "
                   "nothing; no results were written")
    assert not (tmp_path / "o").exists()


def test_a_plugin_whose_values_and_indices_differ_is_one_line(tmp_path, capsys, forget_plugins):
    code, err = run([*BENCH, "--steps", "3", "-s", "adamw", "-s", "uneven-sparse", "--plugin", str(PLUGINS),
                     "--out", str(tmp_path / "o")], capsys)
    assert code == 3 and len(err.splitlines()) == 1
    assert err.startswith("error: uneven-sparse@sparse-allgather at step 1: the strategy uneven-sparse's encode "
                          "returned a sparse payload whose values [2, 4] and indices [2, 3] differ in shape")
    assert "3 finished steps kept in" in err  # adamw's


def test_a_plugin_sending_an_inf_is_one_line_at_its_step_and_a_divergence_stays_one(tmp_path, capsys,
                                                                                    forget_plugins, monkeypatch):
    """The inf inf-sgd sends at step 2 is its own error (exit 3), at that step, not a divergence
    at the next; a plug-in whose training diverges (lr 1e12) is still reported diverged (exit 1)."""
    code, err = run([*BENCH, "--steps", "3", "-s", "inf-sgd", "--plugin", str(PLUGINS), "--out", str(tmp_path / "o")],
                    capsys)
    assert code == 3 and len(err.splitlines()) == 1
    assert err.startswith("error: inf-sgd@fp32-allreduce at step 2: the strategy inf-sgd's encode returned a dense "
                          "payload's values holding inf (1 of ")
    assert "values, the first at [1, 5]); accepted: finite values (the step's gradients were finite); 1 finished" in err
    monkeypatch.setenv("FAILING_STEP", "0")
    code, err = run([*BENCH, "--steps", "5", "-s", "flaky-sgd", "--lr", "1e12", "--plugin", str(PLUGINS),
                     "--out", str(tmp_path / "d")], capsys)
    assert code == 1 and err.startswith("error: diverged: flaky-sgd@fp32-allreduce at step "), err


def test_a_plugin_transport_whose_aggregate_has_the_wrong_shape_is_one_line(tmp_path, capsys, forget_plugins):
    code, err = run([*BENCH, "--steps", "3", "-s", "adamw@first-row-allreduce", "--plugin", str(PLUGINS),
                     "--out", str(tmp_path / "o")], capsys)
    assert code == 3
    assert err.startswith("error: adamw@first-row-allreduce at step 1: the transport first-row-allreduce's aggregate "
                          "returned a tensor of shape [1, ")


def test_a_plugin_raising_mid_run_keeps_the_finished_runs_and_resume_trains_the_rest(tmp_path, capsys, monkeypatch,
                                                                                   forget_plugins):
    monkeypatch.chdir(tmp_path)  # the line names the plug-in's file as given: here, its absolute path
    out = tmp_path / "o"
    argv = [*BENCH, "--steps", "5", "-s", "adamw", "-s", "flaky-sgd", "--plugin", str(PLUGINS), "--out", str(out)]
    code, err = run(argv, capsys)
    assert code == 3
    line = 1 + PLUGINS.read_text().splitlines().index('            raise ValueError(f"boom at step {self.steps}")')
    assert err == (f"error: flaky-sgd@fp32-allreduce at step 3: the strategy flaky-sgd raised ValueError: boom at step 3 "
                   f"({PLUGINS}, line {line}); 7 finished steps kept in {out}; once it is fixed, the same command with "
                   "--resume trains the runs that did not finish")
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "failed" and meta["error"].startswith("flaky-sgd@fp32-allreduce at step 3: ")
    steps = pd.read_csv(out / "steps.csv")
    assert steps.groupby("strategy").size().to_dict() == {"adamw": 5, "flaky-sgd": 2}
    # fixed, the same command with --resume keeps adamw's rows and trains flaky-sgd again from step 1
    monkeypatch.setenv("FAILING_STEP", "0")
    code, err = run([*argv, "--resume"], capsys)
    assert code == 0, err
    resumed = pd.read_csv(out / "steps.csv")
    assert resumed.groupby("strategy").size().to_dict() == {"adamw": 5, "flaky-sgd": 5}
    pd.testing.assert_frame_equal(resumed[resumed.strategy == "adamw"].reset_index(drop=True),
                                  steps[steps.strategy == "adamw"].reset_index(drop=True))


def test_a_workload_label_out_of_range_mid_run_is_one_line_exit_3(tmp_path, capsys):
    (tmp_path / "labels.py").write_text(WORKLOAD)
    out = tmp_path / "o"
    code, err = run(["bench", "-w", f"{tmp_path / 'labels.py'}:make", "-n", "2", "-b", "8", "--steps", "30",
                     "-s", "adamw", "-s", "lion", "--compute", "h100", "--out", str(out)], capsys)
    assert code == 3
    assert err == (f"error: adamw@fp32-allreduce at step 10: the workload raised IndexError: Target 5 is out of "
                   f"bounds.; 9 finished steps kept in {out}; once it is fixed, the same command with --resume "
                   "trains the runs that did not finish")
    assert len(pd.read_csv(out / "steps.csv")) == 9


# --- user code or lionsim's own: the rule of lionsim.usercode.blame ---------------------------------

def raised(function) -> BaseException:
    try:
        function()
    except Exception as e:  # noqa: BLE001
        return e
    raise AssertionError("it did not raise")


def test_blame_tells_user_code_from_lionsims_own():
    from lionsim.transports import combine_alone
    from lionsim.transports.payloads import container_dtype
    from lionsim.usercode import user_code

    def users_own():
        raise KeyError("mine")

    def users_torch_call():
        torch.zeros(2)[torch.tensor([5])]

    line = blame(raised(users_own), {})
    assert line.startswith("your code raised KeyError: 'mine' (") and line.endswith(f", line {users_own.__code__.co_firstlineno + 1})")
    assert blame(raised(users_own), {str(Path(__file__).resolve()): "the strategy x"}).startswith("the strategy x raised")
    assert blame(raised(users_torch_call)).startswith("your code raised IndexError")  # torch, called by the user
    # lionsim's own: raised in its code, or by torch called from its code
    assert blame(raised(lambda: container_dtype(2**70))) is None
    bad = Payload(PayloadSpec(kind="sparse", numel=4, k=1), torch.ones(1, 1), indices=torch.tensor([[9]]))
    assert blame(raised(lambda: combine_alone(bad))) is None

    def marked():
        with user_code("the workload"):
            combine_alone(bad)  # torch raising under lionsim's frames, but inside the user's block

    assert blame(raised(marked)).startswith("the workload raised RuntimeError")
    assert blame(UserCodeError("the strategy x's encode returned a list")) == "the strategy x's encode returned a list"


def test_a_torch_error_in_user_code_under_lionsims_kernel_counter_is_the_users():
    """A bench counts kernels through a dispatch mode (lionsim.training.counting): its
    __torch_dispatch__ frame sits between the user's call and torch's raise, and only forwards the
    call, so the user's frame still decides (a plug-in's apply with a wrong shape, as a new user
    wrote it)."""
    from lionsim.training.counting import KernelCounter

    def users_apply():
        with KernelCounter(lambda: "update"):
            torch.zeros(4).sub_(torch.zeros(2, 4))  # the output cannot take the broadcast shape

    line = blame(raised(users_apply))
    assert line is not None and line.startswith("your code raised RuntimeError"), line


def test_a_lionsim_bug_mid_run_keeps_its_traceback(tmp_path, monkeypatch):
    from lionsim.strategies import baselines
    from lionsim.transports.payloads import container_dtype

    # raised in lionsim's code (the call's frame is this file's: a user's frame outside it decides nothing)
    monkeypatch.setattr(baselines.AdamW, "apply", lambda self, params, aggregate: container_dtype(2**70))
    with pytest.raises(ValueError, match="no integer container"):
        main([*BENCH, "--steps", "2", "-s", "adamw", "--out", str(tmp_path / "o")])


@pytest.mark.slow
def test_on_gloo_a_ranks_error_reaches_the_parent_as_the_same_line(tmp_path, capsys, monkeypatch, forget_plugins):
    """Two gloo ranks whose plug-in raises at step 3: the parent says what the simulator says,
    exit 3, and publishes the same finished steps, marked failed."""
    monkeypatch.chdir(tmp_path)
    lines, kept = {}, {}
    for backend in ("sim", "gloo"):
        out = tmp_path / backend
        code, err = run([*BENCH, "--steps", "5", "-s", "adamw", "-s", "flaky-sgd", "--plugin", str(PLUGINS),
                         "--backend", backend, "--out", str(out)], capsys)
        assert code == 3, err
        lines[backend] = err.replace(str(out), "OUT")
        meta = json.loads((out / "run.json").read_text())
        assert meta["status"] == "failed" and meta["error"] in err
        kept[backend] = pd.read_csv(out / "steps.csv").groupby("strategy").size().to_dict()
    assert lines["gloo"] == lines["sim"] and kept["gloo"] == kept["sim"] == {"adamw": 5, "flaky-sgd": 2}


def test_in_a_sweep_the_units_cells_fail_with_the_line_and_the_others_are_kept(tmp_path, capsys, forget_plugins):
    out = tmp_path / "sweep"
    code, err = run(["sweep", "--workload", "mlp", "--model-size", "tiny", "--workers", "2", "--steps", "4",
                     "-s", "adamw", "-s", "flaky-sgd", "--plugin", str(PLUGINS), "--out", str(out)], capsys)
    assert code == 1
    assert err.startswith("error: failed: 1 cell (mlp-w2-1gbe-s0-flaky-sgd@fp32-allreduce): flaky-sgd@fp32-allreduce "
                          "at step 3: the strategy flaky-sgd raised ValueError: boom at step 3 (")
    assert set(pd.read_csv(out / "sweep_summary.csv")["strategy"]) == {"adamw"}


def test_a_sweeps_closing_line_counts_the_cells_that_failed(tmp_path, capsys, forget_plugins):
    """It said "2 cells (2 trainings) in ROOT" where one of them failed and was not written, and that
    its table had one run, to sweep more."""
    from tests.helpers.cli import run_cli

    code, out, _ = run_cli(["sweep", "--workload", "mlp", "--model-size", "tiny", "--workers", "2", "--steps", "2",
                            "-s", "adamw", "-s", "tensor-sgd", "--plugin", PLUGINS, "--out", tmp_path / "s"], capsys)
    assert code == 1
    said = " ".join(out.split())
    assert "2 cells (2 trainings; 1 cell failed, not written) in" in said
    # its caption said "one run, ... sweep more runs to compare them": the grid had two
    assert "no speedup column: only adamw@fp32-allreduce finished, the other runs' cells failed" in said
