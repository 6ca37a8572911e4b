"""Tie rules of the majority vote: zero | alternate | random, identical in
every transport and on every worker, with the downlink bits they need."""

import json

import pytest
import torch

from lionsim.aggregators import MajorityVote, TieBreak
from lionsim.aggregators.ties import coin
from lionsim.bench import BenchConfig
from lionsim.errors import LionsimError
from lionsim.network import wire_bytes
from lionsim.optim import DistributedLion
from lionsim.regress.cases import SUITE, Case
from lionsim.strategies import STRATEGIES, valid_transports
from lionsim.transports import TRANSPORTS, PayloadSpec
from lionsim.transports.abstain import FLAG_CALL
from tests.aggregators.test_abstaining_votes import simulate
from tests.helpers.cli import run_cli
from tests.reference.impl import dlion_step, tie_coin


def test_coin_equals_the_plain_reference_and_is_fair():
    index = torch.arange(0, 5000)
    index = torch.cat([index, torch.tensor([2**32 + 7, 2**40 + 3])])
    for seed, step in ((0, 1), (7, 2), (123456789, 99)):
        got = coin(seed, step, index).tolist()
        assert got == [tie_coin(seed, step, int(i)) for i in index], (seed, step)
    heads = (coin(0, 1, torch.arange(100000)) > 0).float().mean().item()
    assert 0.49 < heads < 0.51
    assert not torch.equal(coin(0, 1, index), coin(0, 2, index))  # a fresh coin every step
    assert not torch.equal(coin(0, 1, index), coin(1, 1, index))


def test_alternate_flips_ties_step_by_step_and_leaves_abstentions_alone():
    s = torch.tensor([0, 0, 2, -2])
    voted = torch.tensor([True, False, True, True])
    for step, tie_dir in ((1, 1.0), (2, -1.0), (3, 1.0)):
        rule = MajorityVote(TieBreak("alternate", step=step))
        assert rule.result(s, 4, voted=voted).tolist() == [tie_dir, 0.0, 1.0, -1.0]
    assert MajorityVote().result(s, 4, voted=voted).tolist() == [0.0, 0.0, 1.0, -1.0]


@pytest.mark.parametrize("workers", [2, 3, 4, 8, 9])
def test_downlink_bits_follow_the_tie_rule(workers):
    for tie in ("zero", "alternate", "random"):
        rule = MajorityVote(TieBreak(tie))
        expected = 2 if tie == "zero" and workers % 2 == 0 else 1
        assert rule.bits_down(workers) == expected, (tie, workers)
        assert rule.bits_down(workers, abstain=True) == 2  # "nobody voted" is a third result


@pytest.mark.parametrize("workers", [4, 8])
def test_a2a_is_one_thirty_second_of_fp32_at_even_n_under_a_moving_tie_rule(workers):
    n = 8 * workers * 1000
    fp32 = sum(wire_bytes(c, workers) for c in TRANSPORTS.get("fp32-allreduce")().plan(PayloadSpec(kind="dense", numel=n), workers))
    for tie, ratio in (("alternate", 1 / 32), ("random", 1 / 32), ("zero", 1.5 / 32)):
        spec = PayloadSpec(kind="votes", numel=n, rule=MajorityVote(TieBreak(tie)))
        a2a = sum(wire_bytes(c, workers) for c in TRANSPORTS.get("a2a-1bit")().plan(spec, workers))
        assert (a2a - wire_bytes(FLAG_CALL, workers)) / fp32 == pytest.approx(ratio), tie
        ps = TRANSPORTS.get("param-server")()
        assert ps.bits_per_param(spec, workers)[1] == (2.0 if tie == "zero" else 1.0)


@pytest.mark.parametrize("tie", ["alternate", "random"])
@pytest.mark.parametrize("workers", [2, 4, 5])
def test_dlion_mavo_with_a_tie_rule_equals_plain_algorithm_1_under_every_transport(tie, workers):
    g = torch.Generator().manual_seed(workers)
    grads = [torch.randint(-1, 2, (workers, 37), generator=g).float() for _ in range(5)]  # ties and zeros
    grads[0][:, :3] = 0.0  # untouched at step 1: c = 0 everywhere
    x0 = torch.randn(37, generator=g)
    rx, rm = x0.tolist(), [[0.0] * 37 for _ in range(workers)]
    for step, gr in enumerate(grads, 1):
        rx, rm = dlion_step(rx, gr.tolist(), rm, 0.01, 0.1, 0.9, 0.99, "mavo", tie=tie, step=step, seed=11)
    for transport in valid_transports(STRATEGIES.get("dlion-mavo")):
        x = x0.clone()
        simulate("dlion-mavo", transport, grads, x, lr=0.01, weight_decay=0.1, tie=tie, seed=11)
        assert x.tolist() == pytest.approx(rx, abs=1e-6), transport


def test_tie_rule_changes_the_result_where_votes_tie():
    grads = [torch.tensor([[1.0], [-1.0]])]
    moved = {}
    for tie in ("zero", "alternate"):
        x = torch.zeros(1)
        simulate("dlion-mavo", "a2a-1bit", grads, x, lr=0.1, weight_decay=0.0, tie=tie)
        moved[tie] = x.item()
    assert moved == pytest.approx({"zero": 0.0, "alternate": -0.1})


def test_bad_tie_is_one_line_exit_2_and_the_rule_lands_in_run_json(tmp_path, capsys):
    code, _, err = run_cli(["bench", "--tie", "coin", "--steps", "1", "--out", str(tmp_path / "bad")], capsys)
    assert code == 2 and err.strip().count("\n") == 0
    assert "bad --tie 'coin'; accepted: zero, alternate, random" in err
    assert not (tmp_path / "bad").exists()
    code, _, err = run_cli(["estimate", "--model", "gpt2-124m", "--tie", "heads"], capsys)
    assert code == 2 and "accepted: zero, alternate, random" in err
    with pytest.raises(LionsimError, match="accepted: zero, alternate, random"):
        BenchConfig(tie="even").validate()
    with pytest.raises(LionsimError, match="accepted: zero, alternate, random"):
        DistributedLion([torch.nn.Parameter(torch.zeros(2))], tie="up")
    cfg = BenchConfig(tie="random", workload="mlp", workers=2)
    assert cfg.to_dict()["tie"] == "random"
    assert cfg.strategy_config(cfg.validate()[0]).tie == "random"


def test_estimate_prices_the_tie_rule(tmp_path, capsys):
    import pandas as pd

    rows = {}
    for tie in ("zero", "alternate"):
        out = tmp_path / tie
        code, _, err = run_cli(["estimate", "--model", "gpt2-124m", "--workers", "4", "-s", "dlion-mavo@a2a-1bit",
                                "--tie", tie, "--out", str(out)], capsys)
        assert code in (0, None), err

        rows[tie] = pd.read_csv(out / "estimate.csv").iloc[0]
    assert rows["zero"]["bits_per_param_down"] == 2 and rows["alternate"]["bits_per_param_down"] == 1
    assert rows["alternate"]["wire_bytes"] < rows["zero"]["wire_bytes"]


def test_regress_cases_may_set_a_tie_rule_and_keep_their_setting_otherwise():
    base = SUITE[0]
    assert "tie" not in base.setting() and base.bench_config("dlion-mavo", 0).tie == "zero"
    case = Case(name="t", workload="mlp", workers=4, steps=5, batch_size=4, strategies=("dlion-mavo",),
                hyper={"dlion-mavo": (0.01, 0.0)}, tie="alternate")
    assert case.setting()["tie"] == "alternate"
    assert case.bench_config("dlion-mavo", 0).tie == "alternate"
    json.dumps(case.setting())
